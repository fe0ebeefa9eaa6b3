/*
 * presets.c — `talus presets`: the presets built into the binary (every
 * .ini in configs/), one line each; `-c NAME` loads one by name.
 */
#include "app.h"
#include "io/config/config.h"

static void presets_usage(void) {
  printf("usage: talus presets\n"
         "Lists the presets built into talus, one line each. Use one with -c NAME (talus erode,\n"
         "talus params --ini); a file of that name in the working directory wins; print one\n"
         "with talus params --ini -c NAME.\n"
         "  -q, -h, --help, --version\n");
}

talus_status talus_presets_app(int argc, char **argv) {
  talus_error_clear();
  app_args a = {argc, argv, 0};
  app_common c = {0};
  while (a.i < argc) {
    if (!app_common_flag(&a, &c))
      return talus_fail(TALUS_ERR_ARGUMENT, "args",
                        "unknown argument '%s' (see talus presets --help)", argv[a.i]);
    if (c.help) presets_usage();
    if (app_common_done(&c)) return TALUS_OK;
  }
  char summary[256];
  for (int i = 0; i < talus_preset_count(); i++) {
    talus_preset_summary(i, summary, sizeof summary);
    printf("%-20s %s\n", talus_preset_name(i), summary);
  }
  return TALUS_OK;
}
