/*
 * write.c — the GeoTIFF creation primitive and the partial-file + rename
 * rule that every writer of the raster and export families follows: the destination either appears
 * complete or not at all.
 */
#include "io/raster/raster_private.h"

#include <cpl_string.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Checks that the directory of path exists and is writable, and that path
 * is not a directory, so the failure names the real cause. */
static talus_status check_destination(const char *path) {
  const char *slash = strrchr(path, '/');
  char dir[TALUS_PATH_MAX];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  struct stat sb;
  if (stat(dir, &sb) != 0)
    return talus_fail(TALUS_ERR_IO, "io", "cannot write '%s': directory '%s': %s", path, dir,
                      strerror(errno));
  if (!S_ISDIR(sb.st_mode))
    return talus_fail(TALUS_ERR_IO, "io", "cannot write '%s': '%s' is not a directory", path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return talus_fail(TALUS_ERR_IO, "io", "cannot write '%s': directory '%s' is not writable (%s)",
                      path, dir, strerror(errno));
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return talus_fail(TALUS_ERR_IO, "io", "cannot write '%s': it is a directory", path);
  return TALUS_OK;
}

talus_status talus_partial_begin(const char *path, char **partial) {
  *partial = NULL;
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no output path given");
  talus_status st = check_destination(path);
  if (st != TALUS_OK) return st;
  size_t len = strlen(path) + sizeof ".partial";
  if (!(*partial = malloc(len))) return talus_fail(TALUS_ERR_NOMEM, "io", "out of memory");
  snprintf(*partial, len, "%s.partial", path);
  return TALUS_OK;
}

/* Moves or removes the ".aux.xml" sidecar GDAL may have written next to
 * partial; a stale sidecar of an older path is removed so that it cannot
 * override what was just written. */
static void partial_sidecar(const char *path, const char *partial, int ok) {
  char from[TALUS_PATH_BUF], to[TALUS_PATH_BUF];
  snprintf(from, sizeof from, "%s.aux.xml", partial);
  snprintf(to, sizeof to, "%s.aux.xml", path);
  struct stat sb;
  int has = stat(from, &sb) == 0;
  if (ok && has)
    rename(from, to);
  else if (ok)
    unlink(to);
  else if (has)
    unlink(from);
}

talus_status talus_partial_end(const char *path, char *partial, int ok) {
  talus_status st = TALUS_OK;
  if (!partial) return st;
  if (ok && rename(partial, path) != 0) {
    st = talus_fail(TALUS_ERR_IO, "io", "cannot rename '%s' to '%s': %s", partial, path,
                    strerror(errno));
    ok = 0;
  }
  if (!ok) unlink(partial);
  partial_sidecar(path, partial, ok);
  free(partial);
  return st;
}

/* Whether a GTiff COMPRESS value supports the PREDICTOR option. */
static int compress_takes_predictor(const char *c) {
  static const char *const ok[] = {"ZSTD", "DEFLATE", "LZW", "LZMA"};
  for (size_t i = 0; c && i < sizeof ok / sizeof ok[0]; i++)
    if (EQUAL(c, ok[i])) return 1;
  return 0;
}

/* Builds the creation options: talus defaults, then the user's -co on top.
 * The default PREDICTOR is dropped when the chosen compression cannot use
 * it. *out is a CSL list to CSLDestroy. */
static talus_status creation_options(const talus_write_options *opt, int nbands, char ***out) {
  char **co = NULL;
  co = CSLSetNameValue(co, "TILED", "YES");
  co = CSLSetNameValue(co, "BLOCKXSIZE", "256");
  co = CSLSetNameValue(co, "BLOCKYSIZE", "256");
  co = CSLSetNameValue(co, "COMPRESS", "ZSTD");
  co = CSLSetNameValue(co, "BIGTIFF", "IF_SAFER");
  if (nbands > 1) co = CSLSetNameValue(co, "INTERLEAVE", "BAND");
  int user_predictor = 0;
  for (int i = 0; opt && opt->creation_options && opt->creation_options[i]; i++) {
    char *key = NULL;
    const char *value = CPLParseNameValue(opt->creation_options[i], &key);
    if (!key || !value || !key[0]) {
      CPLFree(key);
      CSLDestroy(co);
      return talus_fail(TALUS_ERR_ARGUMENT, "io", "creation option '%s' is not KEY=VALUE",
                        opt->creation_options[i]);
    }
    user_predictor |= EQUAL(key, "PREDICTOR");
    co = CSLSetNameValue(co, key, value);
    CPLFree(key);
  }
  if (!user_predictor && compress_takes_predictor(CSLFetchNameValue(co, "COMPRESS")))
    co = CSLSetNameValue(co, "PREDICTOR", opt && opt->byte_bands ? "2" : "3");
  *out = co;
  return TALUS_OK;
}

/* Sets geotransform, CRS and NoData (on every band) of a new dataset. */
static talus_status set_georef(const char *path, GDALDatasetH ds, int nbands,
                               const talus_georef *geo) {
  if (!geo) return TALUS_OK;
  if (geo->gt[1] != 0.0 && geo->gt[5] != 0.0 &&
      GDALSetGeoTransform(ds, (double *)geo->gt) != CE_None)
    return talus_gdal_fail(TALUS_ERR_IO, "cannot set the geotransform of '%s'", path);
  if (geo->wkt && geo->wkt[0] && GDALSetProjection(ds, geo->wkt) != CE_None)
    return talus_gdal_fail(TALUS_ERR_ARGUMENT, "cannot set the CRS of '%s' (not a valid WKT CRS)",
                           path);
  for (int b = 0; geo->has_nodata && b < nbands; b++)
    if (GDALSetRasterNoDataValue(GDALGetRasterBand(ds, b + 1), geo->nodata) != CE_None)
      return talus_gdal_fail(TALUS_ERR_IO, "cannot set the NoData value of '%s'", path);
  return TALUS_OK;
}

/* Sets band descriptions and dataset metadata ("KEY=VALUE" items). */
/* The unit type a band named "what [unit]" declares (GIS tools read it
 * from the band, not its description): the bracket's text, into buf;
 * NULL when the name ends in none. */
static const char *unit_of_name(const char *name, char *buf, size_t size) {
  size_t n = strlen(name);
  const char *open = strrchr(name, '[');
  if (!open || n < 3 || name[n - 1] != ']' || (size_t)(name + n - 1 - open) >= size) return NULL;
  snprintf(buf, size, "%.*s", (int)(name + n - 2 - open), open + 1);
  return buf[0] ? buf : NULL;
}

static talus_status set_names_meta(const char *path, GDALDatasetH ds, int nbands,
                                   const char *const *names, const char *const *units,
                                   const char *const *metadata) {
  char buf[32];
  for (int b = 0; names && b < nbands; b++) {
    if (!names[b]) continue;
    GDALRasterBandH band = GDALGetRasterBand(ds, b + 1);
    GDALSetDescription(band, names[b]);
    const char *unit = units ? units[b] : unit_of_name(names[b], buf, sizeof buf);
    if (unit && unit[0]) GDALSetRasterUnitType(band, unit);
  }
  for (int i = 0; metadata && metadata[i]; i++) {
    char *key = NULL;
    const char *value = CPLParseNameValue(metadata[i], &key);
    int ok = key && key[0] && value;
    CPLErr e = ok ? GDALSetMetadataItem(ds, key, value, NULL) : CE_None;
    CPLFree(key);
    if (!ok)
      return talus_fail(TALUS_ERR_ARGUMENT, "io", "metadata item '%s' for '%s' is not KEY=VALUE",
                        metadata[i], path);
    if (e != CE_None) return talus_gdal_fail(TALUS_ERR_IO, "cannot set metadata of '%s'", path);
  }
  return TALUS_OK;
}

/* Creates the empty dataset at partial after validating the options. */
static talus_status gtiff_new(const char *path, const char *partial, char **co, int nx, int ny,
                              int nbands, GDALDataType type, GDALDatasetH *out) {
  GDALDriverH drv = GDALGetDriverByName("GTiff");
  if (!drv) return talus_fail(TALUS_ERR_UNSUPPORTED, "io", "GDAL has no GTiff driver");
  if (!GDALValidateCreationOptions(drv, (CSLConstList)co))
    return talus_gdal_fail(TALUS_ERR_ARGUMENT, "invalid GeoTIFF creation options for '%s'", path);
  CPLErrorReset();
  *out = GDALCreate(drv, partial, nx, ny, nbands, type, co);
  if (!*out) return talus_gdal_fail(TALUS_ERR_IO, "cannot create '%s'", path);
  return TALUS_OK;
}

talus_status talus_gtiff_create(const char *path, const char *partial, int nx, int ny, int nbands,
                                const char *const *names, const char *const *metadata,
                                const talus_georef *geo, const talus_write_options *opt,
                                GDALDatasetH *out) {
  *out = NULL;
  char **co = NULL;
  GDALDatasetH ds = NULL;
  talus_status st = creation_options(opt, nbands, &co);
  GDALDataType type = opt && opt->byte_bands ? GDT_Byte : GDT_Float32;
  if (st == TALUS_OK) st = gtiff_new(path, partial, co, nx, ny, nbands, type, &ds);
  if (st == TALUS_OK) st = set_georef(path, ds, nbands, geo);
  if (st == TALUS_OK)
    st = set_names_meta(path, ds, nbands, names, opt ? opt->units : NULL, metadata);
  CSLDestroy(co);
  if (st != TALUS_OK && ds) GDALClose(ds);
  if (st == TALUS_OK) *out = ds;
  return st;
}
