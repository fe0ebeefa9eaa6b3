/*
 * params.c — `talus params`: the declared configuration keys, or the
 * effective configuration after presets and overrides.
 */
#include "app.h"
#include "io/config/config.h"

#include <string.h>

static void params_usage(void) {
  printf("usage: talus params [--section NAME] [--ini [-c FILE]... [--set KEY=VALUE]...]\n"
         "Lists every configuration key with its type, default, range, unit and meaning.\n"
         "  --section NAME   only keys of this section\n"
         "  --ini            print the effective configuration as INI instead\n"
         "  -c FILE          load a preset first (with --ini); repeatable\n"
         "  --set KEY=VALUE  override a key (with --ini); repeatable\n"
         "  -q, -h, --help, --version\n"
         "-c takes a file or a preset's name (see talus presets).\n");
}

talus_status talus_params_app(int argc, char **argv) {
  talus_error_clear();
  app_args a = {argc, argv, 0};
  const char *section = NULL, *v = NULL;
  int ini = 0, r;
  app_common c = {0};
  talus_params *p = NULL;
  talus_status st = talus_params_create(&p);
  while (!st && a.i < argc) {
    if (app_common_flag(&a, &c)) {
      if (c.help) params_usage();
      if (!app_common_done(&c)) continue;
      talus_params_free(p);
      return TALUS_OK;
    }
    if (app_flag(&a, "--ini", NULL))
      ini = 1;
    else if ((r = app_take(&a, "--section", NULL, &v)))
      st = r < 0 ? TALUS_ERR_ARGUMENT : (section = v, 0);
    else if ((r = app_take(&a, "-c", NULL, &v)))
      st = r < 0 ? TALUS_ERR_ARGUMENT : talus_params_load(p, v);
    else if ((r = app_take(&a, "--set", NULL, &v)))
      st = r < 0 ? TALUS_ERR_ARGUMENT : app_param_override(p, v);
    else
      st = talus_fail(TALUS_ERR_ARGUMENT, "args", "unknown argument '%s'", argv[a.i]);
  }
  if (!st && ini) st = talus_params_print_ini(p, talus_version(), stdout);
  if (!st && !ini && talus_params_print_table(stdout, section) == 0)
    st = talus_fail(TALUS_ERR_PARAM, "params", "no section or key named '%s'", section);
  talus_params_free(p);
  return st;
}
