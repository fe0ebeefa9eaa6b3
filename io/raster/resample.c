/*
 * resample.c — reads band 1 of any raster resampled (bilinear) onto
 * an nx × ny grid: the per-cell input maps of `talus erode` (--hardness,
 * --rain-map). The map is stretched over the grid, i.e. it is taken to
 * cover the same extent as the terrain; georeferencing is not compared.
 * Reads are windowed: each window of output rows asks GDAL for the
 * matching (fractional) window of the source.
 */
#include "io/raster/raster_private.h"

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

/* Refuses NoData and non-finite values: an input map must cover the grid. */
static talus_status resample_check(const char *path, GDALRasterBandH band, int nx, int ny,
                                   const float *v) {
  int has = 0;
  double nd = GDALGetRasterNoDataValue(band, &has);
  for (size_t i = 0; i < (size_t)nx * (size_t)ny; i++)
    if (!isfinite(v[i]) || (has && (double)v[i] == nd))
      return talus_fail(TALUS_ERR_DATA, "io", "'%s' has no value at grid cell (%zu, %zu)", path,
                        i % (size_t)nx, i / (size_t)nx);
  return TALUS_OK;
}

talus_status talus_raster_read_resampled(const char *path, int nx, int ny, float **out) {
  if (!out || nx <= 0 || ny <= 0)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "resampled read: bad grid %d x %d", nx, ny);
  *out = NULL;
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  float *v = NULL;
  talus_status st = talus_raster_open(path, &ds);
  GDALRasterBandH band = st ? NULL : GDALGetRasterBand(ds, 1);
  int sx = ds ? GDALGetRasterXSize(ds) : 0, sy = ds ? GDALGetRasterYSize(ds) : 0;
  if (!st) st = talus_alloc((void **)&v, (size_t)nx * (size_t)ny * sizeof(float), "input map");
  for (int y0 = 0; !st && y0 < ny; y0 += TALUS_RASTER_WINDOW_ROWS) {
    int h = ny - y0 < TALUS_RASTER_WINDOW_ROWS ? ny - y0 : TALUS_RASTER_WINDOW_ROWS;
    st = talus_band_rows_resampled(path, band, sx, sy, nx, ny, GRIORA_Bilinear, y0, h,
                                   v + (size_t)y0 * (size_t)nx);
  }
  if (!st) st = resample_check(path, band, nx, ny, v);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  if (st) {
    talus_free(v);
    return st;
  }
  *out = v;
  return TALUS_OK;
}
