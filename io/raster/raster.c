/*
 * raster.c — the GDAL plumbing shared by the raster module (driver
 * registration, the quiet error handler, the one GDAL→talus error
 * conversion, opening with clear failures), georeferencing and metric cell
 * sizes.
 */
#include "io/raster/raster_private.h"

#include <cpl_conv.h>
#include <cpl_string.h>
#include <cpl_vsi.h>
#include <errno.h>
#include <math.h>
#include <ogr_srs_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static pthread_once_t gdal_once = PTHREAD_ONCE_INIT;

/* Registers all GDAL drivers exactly once per process. */
static void gdal_register(void) {
  GDALAllRegister();
}

void talus_gdal_enter(void) {
  pthread_once(&gdal_once, gdal_register);
  /* The handler stack is per thread, so concurrent talus calls on other
   * threads keep their own handlers. */
  CPLPushErrorHandler(CPLQuietErrorHandler);
  CPLErrorReset();
}

void talus_gdal_leave(void) {
  CPLPopErrorHandler();
}

void talus_raster_config_set(const char *key, const char *value) {
  CPLSetConfigOption(key, value);
}

int talus_raster_metadata_item(const char *path, const char *key, char *out, size_t len,
                               int *nbands) {
  talus_gdal_enter();
  GDALDatasetH ds = path ? GDALOpen(path, GA_ReadOnly) : NULL;
  const char *v = ds ? GDALGetMetadataItem(ds, key, NULL) : NULL;
  int found = v && len > 0;
  if (found) snprintf(out, len, "%s", v);
  if (nbands) *nbands = ds ? GDALGetRasterCount(ds) : 0;
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  return found;
}

talus_status talus_gdal_fail(talus_status status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  CPLErr type = CPLGetLastErrorType();
  const char *gdal = CPLGetLastErrorMsg();
  if (type != CE_None && gdal && gdal[0])
    return talus_fail(status, "io", "%s (GDAL: %s)", msg, gdal);
  return talus_fail(status, "io", "%s", msg);
}

const char *talus_disk_full_hint(const char *path) {
  static _Thread_local char hint[TALUS_PATH_BUF];
  char dir[TALUS_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path ? path : ".");
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = 0;
  else
    *slash = 0;
  struct statvfs fs;
  hint[0] = 0;
  if (statvfs(dir, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < 1048576.0)
    snprintf(hint, sizeof hint, ": the disk holding '%s' is full", dir);
  return hint;
}

/* Explains why GDALOpenEx failed on path: missing or unreadable file (IO),
 * dimensions GDAL refuses (DATA), or not a raster at all (FORMAT). */
static talus_status open_failure(const char *path) {
  VSIStatBufL sb;
  if (VSIStatL(path, &sb) != 0)
    return talus_fail(TALUS_ERR_IO, "io", "cannot open '%s': No such file", path);
  if (VSI_ISDIR(sb.st_mode))
    return talus_fail(TALUS_ERR_FORMAT, "io", "cannot open '%s': it is a directory, not a raster",
                      path);
  if (strncmp(path, "/vsi", 4) != 0) {
    FILE *f = fopen(path, "rb");
    if (!f) return talus_fail(TALUS_ERR_IO, "io", "cannot open '%s': %s", path, strerror(errno));
    fclose(f);
  }
  /* GDALCheckDatasetDimensions, shared by the drivers, reports 0-sized or
   * negative rasters this way: the file is a raster with unusable size. */
  if (strstr(CPLGetLastErrorMsg(), "dimensions"))
    return talus_gdal_fail(TALUS_ERR_DATA, "'%s' has an unusable raster size", path);
  return talus_gdal_fail(TALUS_ERR_FORMAT, "'%s' is not a raster GDAL can read", path);
}

talus_status talus_raster_open(const char *path, GDALDatasetH *out) {
  *out = NULL;
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no raster path given");
  GDALDatasetH ds =
      GDALOpenEx(path, GDAL_OF_RASTER | GDAL_OF_READONLY | GDAL_OF_VERBOSE_ERROR, NULL, NULL, NULL);
  if (!ds) return open_failure(path);
  if (GDALGetRasterCount(ds) < 1) {
    GDALClose(ds);
    return talus_fail(TALUS_ERR_FORMAT, "io", "'%s' has no raster bands", path);
  }
  *out = ds;
  return TALUS_OK;
}

talus_status talus_raster_check_size(const char *path, int nx, int ny, int64_t max_cells) {
  if (max_cells <= 0) max_cells = TALUS_RASTER_DEFAULT_MAX_CELLS;
  int64_t cells = (int64_t)nx * (int64_t)ny;
  if (nx <= 0 || ny <= 0)
    return talus_fail(TALUS_ERR_DATA, "io", "'%s' has size %d x %d: nothing to read", path, nx, ny);
  if (cells > max_cells || (uint64_t)cells > SIZE_MAX / sizeof(float))
    return talus_fail(TALUS_ERR_DATA, "io",
                      "'%s' is %d x %d = %lld cells, more than the limit of %lld cells", path, nx,
                      ny, (long long)cells, (long long)max_cells);
  return TALUS_OK;
}

void talus_georef_free(talus_georef *g) {
  if (!g) return;
  free(g->wkt);
  memset(g, 0, sizeof *g);
}

talus_status talus_georef_copy(talus_georef *dst, const talus_georef *src) {
  if (!dst || !src) return talus_fail(TALUS_ERR_ARGUMENT, "io", "georef copy: NULL argument");
  *dst = *src;
  dst->wkt = NULL;
  if (src->wkt && !(dst->wkt = strdup(src->wkt)))
    return talus_fail(TALUS_ERR_NOMEM, "io", "cannot copy a CRS definition");
  return TALUS_OK;
}

talus_status talus_georef_from(GDALDatasetH ds, GDALRasterBandH band, talus_georef *g) {
  memset(g, 0, sizeof *g);
  if (GDALGetGeoTransform(ds, g->gt) != CE_None) memset(g->gt, 0, sizeof g->gt);
  CPLErrorReset(); /* a missing geotransform is not an error */
  const char *wkt = GDALGetProjectionRef(ds);
  if (wkt && wkt[0] && !(g->wkt = strdup(wkt)))
    return talus_fail(TALUS_ERR_NOMEM, "io", "cannot copy a CRS definition");
  if (band) g->nodata = GDALGetRasterNoDataValue(band, &g->has_nodata);
  if (!g->has_nodata) g->nodata = 0.0;
  return TALUS_OK;
}

/* Pixel sizes along x and y in CRS units, allowing rotated geotransforms. */
static void pixel_size(const double *gt, double *px, double *py) {
  *px = hypot(gt[1], gt[4]);
  *py = hypot(gt[2], gt[5]);
}

/* Geographic CRS: metres per pixel at the centre of the raster on a sphere of
 * the mean Earth radius, and the UTM zone of the centre. */
static void cellsize_geographic(OGRSpatialReferenceH srs, const double *gt, int nx, int ny,
                                talus_cellsize *c) {
  double unit = OSRGetAngularUnits(srs, NULL); /* radians per CRS unit */
  double px, py;
  pixel_size(gt, &px, &py);
  double lon = gt[0] + gt[1] * nx * 0.5 + gt[2] * ny * 0.5;
  double lat = gt[3] + gt[4] * nx * 0.5 + gt[5] * ny * 0.5;
  c->lon = lon * unit * 180.0 / M_PI;
  c->lat = lat * unit * 180.0 / M_PI;
  c->dy = py * unit * TALUS_EARTH_RADIUS_M;
  c->dx = px * unit * TALUS_EARTH_RADIUS_M * fabs(cos(lat * unit));
  int zone = (int)floor((c->lon + 180.0) / 6.0) + 1;
  zone = zone < 1 ? 1 : (zone > 60 ? 60 : zone);
  c->utm_epsg = (c->lat >= 0.0 ? 32600 : 32700) + zone;
}

/* Fills kind, name and metric pixel sizes from the CRS (or CRS units when
 * the CRS cannot be parsed or is absent). */
static void cellsize_from_crs(const talus_georef *g, int nx, int ny, talus_cellsize *c) {
  pixel_size(g->gt, &c->dx, &c->dy);
  if (!g->wkt) return;
  OGRSpatialReferenceH srs = OSRNewSpatialReference(NULL);
  char *wkt = g->wkt;
  if (srs && OSRImportFromWkt(srs, &wkt) == OGRERR_NONE) {
    const char *name = OSRGetName(srs), *auth = OSRGetAuthorityName(srs, NULL);
    const char *code = OSRGetAuthorityCode(srs, NULL);
    snprintf(c->crs_name, sizeof c->crs_name, "%s%s%s%s%s%s", name ? name : "unnamed CRS",
             auth && code ? " (" : "", auth && code ? auth : "", auth && code ? ":" : "",
             auth && code ? code : "", auth && code ? ")" : "");
    if (OSRIsGeographic(srs)) {
      c->kind = TALUS_CRS_GEOGRAPHIC;
      cellsize_geographic(srs, g->gt, nx, ny, c);
    } else {
      c->kind = TALUS_CRS_PROJECTED;
      double unit = OSRGetLinearUnits(srs, NULL); /* metres per CRS unit */
      c->dx *= unit;
      c->dy *= unit;
    }
  }
  if (srs) OSRDestroySpatialReference(srs);
  CPLErrorReset();
}

talus_status talus_cellsize_of(const talus_georef *g, int nx, int ny, talus_cellsize *out) {
  memset(out, 0, sizeof *out);
  out->dx = out->dy = out->cell = 1.0;
  if (g->gt[1] == 0.0 || g->gt[5] == 0.0) return TALUS_OK;
  out->has_gt = 1;
  cellsize_from_crs(g, nx, ny, out);
  /* Square pixels keep their exact size; otherwise the area-preserving mean
   * (see the design notes in raster.h). */
  out->cell = out->dx == out->dy ? out->dx : sqrt(out->dx * out->dy);
  if (!(out->cell > 0.0) || !isfinite(out->cell))
    return talus_fail(TALUS_ERR_DATA, "io",
                      "cannot derive a cell size from the georeferencing (%g x %g m per pixel); "
                      "give the cell size explicitly",
                      out->dx, out->dy);
  return TALUS_OK;
}

/* Hides the files beside what GDAL opens on this thread (raster_private.h). */
char *talus_gdal_siblings_hide(void) {
  const char *was = CPLGetThreadLocalConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", NULL);
  char *keep = was ? CPLStrdup(was) : NULL;
  CPLSetThreadLocalConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR");
  return keep;
}

/* Puts back the option talus_gdal_siblings_hide found, and frees it. */
void talus_gdal_siblings_restore(char *keep) {
  CPLSetThreadLocalConfigOption("GDAL_DISABLE_READDIR_ON_OPEN", keep);
  CPLFree(keep);
}
