/*
 * resample.c — reads band 1 of any raster resampled (bilinear) onto
 * an nx × ny grid: the per-cell input maps of `talus erode` (--hardness,
 * --rain-map). When both the grid and the map are georeferenced (a
 * north-up geotransform and a CRS each), the map is warped through GDAL
 * onto the grid's cells by georeference (reprojected if the CRSs differ),
 * and a grid cell the map does not cover is an error. Otherwise the map is
 * stretched over the grid, i.e. taken to cover the terrain's extent; those
 * reads are windowed: each window of output rows asks GDAL for the
 * matching (fractional) window of the source.
 */
#include "io/raster/raster_private.h"

#include <gdal_utils.h>

#include <math.h>
#include <stdlib.h>
#include <strings.h>

static const struct {
  const char *name;
  GDALRIOResampleAlg alg;
} resamplings[] = {{"bilinear", GRIORA_Bilinear},       {"cubic", GRIORA_Cubic},
                   {"cubicspline", GRIORA_CubicSpline}, {"lanczos", GRIORA_Lanczos},
                   {"average", GRIORA_Average},         {"nearest", GRIORA_NearestNeighbour}};

int talus_resampling_of(const char *name, GDALRIOResampleAlg *alg) {
  for (size_t i = 0; i < sizeof resamplings / sizeof resamplings[0]; i++)
    if (!name || !strcasecmp(name, resamplings[i].name)) return *alg = resamplings[i].alg, 1;
  return 0;
}

talus_status talus_band_rows_resampled(const char *path, GDALRasterBandH band, int sx, int sy,
                                       int W, int H, GDALRIOResampleAlg alg, int y0, int h,
                                       float *dst) {
  CPLErr e;
  if (W == sx && H == sy) {
    e = GDALRasterIO(band, GF_Read, 0, y0, sx, h, dst, sx, h, GDT_Float32, 0, 0);
  } else {
    double scale = (double)sy / H, top = y0 * scale, size = h * scale;
    int iy0 = (int)floor(top), iy1 = (int)ceil(top + size);
    iy1 = iy1 > sy ? sy : (iy1 <= iy0 ? iy0 + 1 : iy1);
    GDALRasterIOExtraArg extra;
    INIT_RASTERIO_EXTRA_ARG(extra);
    extra.eResampleAlg = alg;
    extra.bFloatingPointWindowValidity = TRUE;
    extra.dfXOff = 0.0, extra.dfYOff = top, extra.dfXSize = sx, extra.dfYSize = size;
    e = GDALRasterIOEx(band, GF_Read, 0, iy0, sx, iy1 - iy0, dst, W, h, GDT_Float32, 0, 0, &extra);
  }
  if (e != CE_None)
    return talus_gdal_fail(TALUS_ERR_IO, "cannot read rows %d..%d of '%s' resampled to %d x %d", y0,
                           y0 + h, path, W, H);
  return TALUS_OK;
}

/* A window of the grid: x0, y0, w, h [cells]. */
typedef struct resample_win {
  int x0, y0, w, h;
} resample_win;

/* Refuses NoData and non-finite values in window win of the grid (v holds
 * its win.w × win.h values): an input map must cover the grid. */
static talus_status resample_check(const char *path, GDALRasterBandH band, resample_win win,
                                   const float *v) {
  int has = 0;
  double nd = GDALGetRasterNoDataValue(band, &has);
  for (size_t i = 0; i < (size_t)win.w * (size_t)win.h; i++)
    if (!isfinite(v[i]) || (has && (double)v[i] == nd))
      return talus_fail(TALUS_ERR_DATA, "io", "'%s' has no value at grid cell (%zu, %zu)", path,
                        (size_t)win.x0 + i % (size_t)win.w, (size_t)win.y0 + i / (size_t)win.w);
  return TALUS_OK;
}

/* 1 when ds has a north-up geotransform and a CRS of its own. */
static int resample_georeferenced(GDALDatasetH ds) {
  double gt[6];
  const char *wkt = GDALGetProjectionRef(ds);
  return GDALGetGeoTransform(ds, gt) == CE_None && gt[2] == 0.0 && gt[4] == 0.0 && wkt && *wkt;
}

/* Warps band 1 of ds onto window win of the grid's cells (bilinear, NaN
 * where the map has no data) into v; the warped dataset lives only in
 * memory. The transformation is exact (-et 0): GDAL's default linear
 * approximation depends on the extent warped, and a tiled run warps each
 * tile's window on its own, which must give the whole grid's values. */
static talus_status resample_warp(const char *path, GDALDatasetH ds, const talus_georef *grid,
                                  resample_win win, float *v) {
  char te[4][32], ts[2][16];
  const double *g = grid->gt;
  snprintf(te[0], sizeof te[0], "%.17g", g[0] + win.x0 * g[1]);
  snprintf(te[1], sizeof te[1], "%.17g", g[3] + (win.y0 + win.h) * g[5]);
  snprintf(te[2], sizeof te[2], "%.17g", g[0] + (win.x0 + win.w) * g[1]);
  snprintf(te[3], sizeof te[3], "%.17g", g[3] + win.y0 * g[5]);
  snprintf(ts[0], sizeof ts[0], "%d", win.w), snprintf(ts[1], sizeof ts[1], "%d", win.h);
  /* every band is warped (this GDAL's warp has no -b); band 1 is read */
  char *argv[] = {"-of", "MEM",     "-t_srs",     grid->wkt, "-te", te[0], te[1],
                  te[2], te[3],     "-ts",        ts[0],     ts[1], "-r",  "bilinear",
                  "-ot", "Float32", "-dstnodata", "nan",     "-et", "0",   NULL};
  GDALWarpAppOptions *o = GDALWarpAppOptionsNew(argv, NULL);
  int usage = 0;
  GDALDatasetH w = o ? GDALWarp("", NULL, 1, &ds, o, &usage) : NULL;
  GDALWarpAppOptionsFree(o);
  if (!w) return talus_gdal_fail(TALUS_ERR_IO, "cannot warp '%s' onto the terrain's grid", path);
  CPLErr e = GDALRasterIO(GDALGetRasterBand(w, 1), GF_Read, 0, 0, win.w, win.h, v, win.w, win.h,
                          GDT_Float32, 0, 0);
  GDALClose(w);
  if (e != CE_None) return talus_gdal_fail(TALUS_ERR_IO, "cannot read '%s' warped", path);
  for (size_t i = 0; i < (size_t)win.w * (size_t)win.h; i++)
    if (!isfinite(v[i]))
      return talus_fail(TALUS_ERR_DATA, "io",
                        "'%s' does not cover the terrain: no value at grid cell (%zu, %zu) "
                        "(the map is placed by its georeferencing)",
                        path, (size_t)win.x0 + i % (size_t)win.w,
                        (size_t)win.y0 + i / (size_t)win.w);
  return TALUS_OK;
}

/* Stretches band 1 of ds over the nx × ny grid and keeps window win, a
 * window of whole-width rows at a time, into v. */
static talus_status resample_stretch(const char *path, GDALDatasetH ds, int nx, int ny,
                                     resample_win win, float *v) {
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  int sx = GDALGetRasterXSize(ds), sy = GDALGetRasterYSize(ds);
  int rows = TALUS_RASTER_WINDOW_ROWS;
  float *buf = NULL;
  talus_status st =
      win.w == nx ? TALUS_OK : talus_alloc((void **)&buf, (size_t)rows * (size_t)nx * 4, "rows");
  for (int y0 = win.y0; !st && y0 < win.y0 + win.h; y0 += rows) {
    int h = win.y0 + win.h - y0 < rows ? win.y0 + win.h - y0 : rows;
    float *dst = v + (size_t)(y0 - win.y0) * (size_t)win.w;
    st = talus_band_rows_resampled(path, band, sx, sy, nx, ny, GRIORA_Bilinear, y0, h,
                                   buf ? buf : dst);
    for (int y = 0; !st && buf && y < h; y++)
      memcpy(dst + (size_t)y * win.w, buf + (size_t)y * nx + win.x0, (size_t)win.w * 4);
  }
  talus_free(buf);
  return st;
}

talus_status talus_raster_read_resampled_window(const char *path, int nx, int ny,
                                                const talus_georef *grid, int x0, int y0, int w,
                                                int h, float *out, int *warped) {
  resample_win win = {x0, y0, w, h};
  if (!out || nx <= 0 || ny <= 0 || win.x0 < 0 || win.y0 < 0 || win.w <= 0 || win.h <= 0 ||
      win.x0 + win.w > nx || win.y0 + win.h > ny)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "resampled read: bad window of a %d x %d grid", nx,
                      ny);
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  talus_status st = talus_raster_open(path, &ds);
  int warp = !st && grid && grid->wkt && *grid->wkt && grid->gt[1] > 0.0 && grid->gt[5] < 0.0 &&
             grid->gt[2] == 0.0 && grid->gt[4] == 0.0 && resample_georeferenced(ds);
  if (warped) *warped = warp;
  if (!st)
    st = warp ? resample_warp(path, ds, grid, win, out)
              : resample_stretch(path, ds, nx, ny, win, out);
  if (!st) st = resample_check(path, GDALGetRasterBand(ds, 1), win, out);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  return st;
}

talus_status talus_raster_read_resampled(const char *path, int nx, int ny, const talus_georef *grid,
                                         float **out, int *warped) {
  if (!out || nx <= 0 || ny <= 0)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "resampled read: bad grid %d x %d", nx, ny);
  *out = NULL;
  float *v = NULL;
  talus_status st = talus_alloc((void **)&v, (size_t)nx * (size_t)ny * sizeof(float), "input map");
  if (!st) st = talus_raster_read_resampled_window(path, nx, ny, grid, 0, 0, nx, ny, v, warped);
  if (st) {
    talus_free(v);
    return st;
  }
  *out = v;
  return TALUS_OK;
}

talus_status talus_gdal_window(GDALDatasetH src, int x0, int y0, int w, int h, GDALDatasetH *out) {
  char a[4][24];
  snprintf(a[0], sizeof a[0], "%d", x0), snprintf(a[1], sizeof a[1], "%d", y0);
  snprintf(a[2], sizeof a[2], "%d", w), snprintf(a[3], sizeof a[3], "%d", h);
  char *argv[] = {"-of", "VRT", "-srcwin", a[0], a[1], a[2], a[3], NULL};
  GDALTranslateOptions *o = GDALTranslateOptionsNew(argv, NULL);
  *out = o ? GDALTranslate("", src, o, NULL) : NULL;
  GDALTranslateOptionsFree(o);
  return *out ? TALUS_OK
              : talus_gdal_fail(TALUS_ERR_IO, "cannot cut the window (%d, %d, %d, %d)", x0, y0, w,
                                h);
}
