/*
 * info.c — `talus info FILE [--json]`: what a raster or talus state holds.
 */
#include "app.h"
#include "io/raster/raster.h"

#include <string.h>

static void info_usage(void) {
  printf("usage: talus info FILE [--json]\n"
         "Describes a raster or talus state: size, type, CRS, geotransform, cell size in\n"
         "metres, NoData, value range, bands and talus metadata.\n"
         "  --json        the same as one JSON object on stdout\n"
         "  -q, -h, --help, --version\n");
}

talus_status talus_info_app(int argc, char **argv) {
  talus_error_clear();
  app_args a = {argc, argv, 0};
  app_common c = {0};
  const char *path = NULL;
  int json = 0;
  while (a.i < argc) {
    if (app_common_flag(&a, &c)) {
      if (c.help) info_usage();
      if (app_common_done(&c)) return TALUS_OK;
    } else if (app_flag(&a, "--json", NULL)) {
      json = 1;
    } else if (argv[a.i][0] == '-' && argv[a.i][1]) {
      return talus_fail(TALUS_ERR_ARGUMENT, "args", "unknown option '%s' (see talus info --help)",
                        argv[a.i]);
    } else if (path) {
      return talus_fail(TALUS_ERR_ARGUMENT, "args", "one file at a time");
    } else {
      path = argv[a.i++];
    }
  }
  if (!path) return info_usage(), talus_fail(TALUS_ERR_ARGUMENT, "args", "no file given");
  return json ? talus_raster_info_json(path, stdout) : talus_raster_info(path, stdout);
}
