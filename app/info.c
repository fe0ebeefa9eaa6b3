/*
 * info.c — `talus info FILE`: what a raster or talus state holds.
 */
#include "app.h"
#include "io/raster/raster.h"

#include <string.h>

talus_status talus_info_app(int argc, char **argv) {
  talus_error_clear();
  if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
    printf("usage: talus info FILE\n"
           "Describes a raster or talus state: size, type, CRS, geotransform, cell size in\n"
           "metres, NoData, value range, bands and talus metadata.\n");
    return argc < 1 ? talus_fail(TALUS_ERR_ARGUMENT, "args", "no file given") : TALUS_OK;
  }
  if (argc > 1) return talus_fail(TALUS_ERR_ARGUMENT, "args", "one file at a time");
  return talus_raster_info(argv[0], stdout);
}
