/*
 * main.c — the `talus` command: a thin shim that picks the application call
 * for a subcommand and turns its status into an exit code.
 */
#include "talus.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to, "usage: talus <command> [options]\n"
              "commands:\n"
              "  erode     erode a DEM or a talus state (talus erode --help)\n"
              "  generate  make the initial terrain of a scene (talus generate --help)\n"
              "  params    list every configuration key (talus params --help)\n"
              "  info      describe a raster or talus state (talus info --help)\n"
              "  export    engine heightmaps from a run's output or state (talus export --help)\n"
              "options: --version, --help\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("talus %s\n", talus_version());
    return 0;
  }
  talus_status (*app)(int, char **) = NULL;
  if (!strcmp(cmd, "erode"))
    app = talus_erode_app;
  else if (!strcmp(cmd, "generate"))
    app = talus_generate_app;
  else if (!strcmp(cmd, "params"))
    app = talus_params_app;
  else if (!strcmp(cmd, "info"))
    app = talus_info_app;
  else if (!strcmp(cmd, "export"))
    app = talus_export_app;
  if (!app) {
    fprintf(stderr, "talus: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
  }
  talus_status st = app(argc - 2, argv + 2);
  if (st != TALUS_OK && st != TALUS_ERR_CANCELLED) {
    const char *msg = talus_last_error();
    fprintf(stderr, "talus %s: error: %s\n", cmd, msg[0] ? msg : talus_status_name(st));
  } else if (st == TALUS_ERR_CANCELLED) {
    fprintf(stderr, "talus %s: cancelled\n", cmd);
  }
  return st == TALUS_OK ? 0 : 1;
}
