/*
 * main.c — the `talus` command: a thin shim that picks the application call
 * for a subcommand and turns its status into an exit code (0 success,
 * 1 failure, 2 unknown command, 128 + the signal when SIGINT (130) or
 * SIGTERM (143) stopped the run, as shells expect).
 */
#include "talus.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The commands: name, application call, one line of usage. */
static const struct {
  const char *name;
  talus_status (*app)(int, char **);
  const char *what;
} commands[] = {
    {"erode", talus_erode_app, "erode a DEM or a talus state"},
    {"generate", talus_generate_app, "make the initial terrain of a scene"},
    {"presets", talus_presets_app, "list the built-in presets (-c NAME)"},
    {"params", talus_params_app, "list every configuration key"},
    {"info", talus_info_app, "describe a raster or talus state"},
    {"export", talus_export_app, "engine heightmaps and meshes from a run's output or state"},
};
enum { command_count = (int)(sizeof commands / sizeof commands[0]) };

static void usage(FILE *to) {
  fprintf(to, "usage: talus <command> [options]\ncommands:\n");
  for (int i = 0; i < command_count; i++)
    fprintf(to, "  %-9s %s (talus help %s)\n", commands[i].name, commands[i].what,
            commands[i].name);
  fprintf(to, "  help CMD  the options of a command (the same as talus CMD --help)\n"
              "  version   the version and the backends built in\n"
              "every command takes -q (quiet), -h/--help and --version\n");
}

/* The command named cmd, or -1. */
static int command_find(const char *cmd) {
  for (int i = 0; i < command_count; i++)
    if (!strcmp(commands[i].name, cmd)) return i;
  return -1;
}

/* Runs command c on its arguments; prints its error; the exit code. */
static int command_run(int c, int argc, char **argv) {
  talus_status st = commands[c].app(argc, argv);
  const char *msg = talus_last_error();
  if (st == TALUS_ERR_CANCELLED) {
    int sig = talus_app_signal();
    fprintf(stderr, "talus %s: %s: %s\n", commands[c].name,
            sig == SIGTERM ? "terminated (SIGTERM)" : "cancelled", msg[0] ? msg : "cancelled");
    return sig ? 128 + sig : 1;
  }
  if (st != TALUS_OK)
    fprintf(stderr, "talus %s: error: %s\n", commands[c].name,
            msg[0] ? msg : talus_status_name(st));
  return st == TALUS_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || (!strcmp(cmd, "help") && argc == 2)) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("talus %s\n", talus_version());
    return 0;
  }
  if (!strcmp(cmd, "help")) {
    int c = command_find(argv[2]);
    if (c < 0) {
      fprintf(stderr, "talus: no command '%s' to help with\n", argv[2]);
      usage(stderr);
      return 2;
    }
    char *help[] = {"--help", NULL};
    return command_run(c, 1, help);
  }
  int c = command_find(cmd);
  if (c < 0) {
    fprintf(stderr, "talus: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
  }
  return command_run(c, argc - 2, argv + 2);
}
