/*
 * raster_stream.c — windowed writing for maps larger than memory: the
 * streaming GeoTIFF writer (windows in any order, gathered by GDAL's
 * bounded block cache) and the preview accumulator (box sums of the size
 * of the preview). talus_geotiff_write and talus_preview_png are wrappers
 * over these, so there is one code path for each output.
 */
#define TALUS_RASTER_INTERNAL
#include "io/raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Streaming GeoTIFF writer
 * ------------------------------------------------------------------- */

struct talus_geotiff_stream {
  char *path, *partial; /* partial: "<path>.partial", removed unless committed */
  GDALDatasetH ds;
  int nx, ny, nbands;
  int failed; /* a write failed: the file is incomplete and may not be committed */
};

talus_status talus_geotiff_stream_open(const char *path, int nx, int ny, int nbands,
                                       const char *const *band_names, const char *const *metadata,
                                       const talus_georef *geo, const talus_write_options *opt,
                                       talus_geotiff_stream **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "geotiff stream: NULL output");
  *out = NULL;
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no output path given");
  if (nx <= 0 || ny <= 0 || nbands <= 0)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s': nothing to write (%d x %d, %d bands)", path,
                      nx, ny, nbands);
  talus_geotiff_stream *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    return talus_fail(TALUS_ERR_NOMEM, "io", "geotiff stream: out of memory");
  }
  s->nx = nx, s->ny = ny, s->nbands = nbands;
  talus_gdal_cache_cap();
  talus_gdal_enter();
  talus_status st = talus_partial_begin(path, &s->partial);
  if (st == TALUS_OK)
    st = talus_gtiff_create(path, s->partial, nx, ny, nbands, band_names, metadata, geo, opt,
                            &s->ds);
  talus_gdal_leave();
  if (st != TALUS_OK) {
    talus_geotiff_stream_abort(s);
    return st;
  }
  *out = s;
  return TALUS_OK;
}

void talus_geotiff_stream_block_size(const talus_geotiff_stream *s, int *bx, int *by) {
  *bx = *by = 0;
  if (s && s->ds) GDALGetBlockSize(GDALGetRasterBand(s->ds, 1), bx, by);
}

talus_status talus_geotiff_stream_write_pitched(talus_geotiff_stream *s, int band, int x0, int y0,
                                                int w, int h, const float *data, size_t pitch) {
  if (!s || !data || !s->ds)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "geotiff stream write: NULL argument");
  talus_status st = talus_window_check(s->path, s->nx, s->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  if (band < 0 || band >= s->nbands)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s' has no band %d (it has %d)", s->path,
                      band + 1, s->nbands);
  if (pitch < (size_t)w)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s': row pitch %zu is less than the width %d",
                      s->path, pitch, w);
  talus_gdal_enter();
  if (GDALRasterIOEx(GDALGetRasterBand(s->ds, band + 1), GF_Write, x0, y0, w, h, (void *)data, w, h,
                     GDT_Float32, (GSpacing)sizeof(float), (GSpacing)(pitch * sizeof(float)),
                     NULL) != CE_None) {
    s->failed = 1;
    st = talus_gdal_fail(TALUS_ERR_IO,
                         "cannot write the %d x %d window at (%d, %d) of band %d to '%s'%s", w, h,
                         x0, y0, band + 1, s->path, talus_disk_full_hint(s->path));
  }
  talus_gdal_leave();
  return st;
}

talus_status talus_geotiff_stream_write(talus_geotiff_stream *s, int band, int x0, int y0, int w,
                                        int h, const float *data) {
  return talus_geotiff_stream_write_pitched(s, band, x0, y0, w, h, data, (size_t)(w > 0 ? w : 0));
}

talus_status talus_geotiff_stream_flush(talus_geotiff_stream *s) {
  if (!s || !s->ds)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "geotiff stream flush: NULL stream");
  talus_gdal_enter();
  talus_status st = TALUS_OK;
  CPLErrorReset();
  GDALFlushCache(s->ds);
  if (CPLGetLastErrorType() >= CE_Failure) {
    s->failed = 1;
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot write blocks of '%s'%s", s->path,
                         talus_disk_full_hint(s->path));
  }
  talus_gdal_leave();
  return st;
}

/* Closes the dataset (flushing the cache); whether GDAL reported a failure. */
static int stream_close(talus_geotiff_stream *s) {
  if (!s->ds) return 0;
  CPLErrorReset();
  GDALClose(s->ds); /* in GDAL 3.6 it reports failure only via CPLError */
  s->ds = NULL;
  return CPLGetLastErrorType() >= CE_Failure;
}

/* Frees the stream's memory (the file is already closed). */
static void stream_free(talus_geotiff_stream *s) {
  free(s->partial);
  free(s->path);
  free(s);
}

talus_status talus_geotiff_stream_commit(talus_geotiff_stream *s) {
  if (!s) return talus_fail(TALUS_ERR_ARGUMENT, "io", "geotiff stream commit: NULL stream");
  talus_gdal_enter();
  talus_status st = TALUS_OK;
  if (stream_close(s))
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot finish writing '%s'%s", s->path,
                         talus_disk_full_hint(s->path));
  else if (s->failed)
    st = talus_fail(TALUS_ERR_IO, "io", "'%s' is incomplete: a window could not be written",
                    s->path);
  talus_status end = talus_partial_end(s->path, s->partial, st == TALUS_OK);
  s->partial = NULL; /* freed by talus_partial_end */
  talus_gdal_leave();
  stream_free(s);
  return st != TALUS_OK ? st : end;
}

void talus_geotiff_stream_abort(talus_geotiff_stream *s) {
  if (!s) return;
  talus_gdal_enter();
  stream_close(s);
  talus_partial_end(s->path, s->partial, 0);
  s->partial = NULL;
  talus_gdal_leave();
  stream_free(s);
}

/* ---------------------------------------------------------------------
 * Preview accumulator
 * ------------------------------------------------------------------- */

#define ACC_ONE        65536.0   /* fixed point: 2^-16 m per unit */
#define ACC_MAX_HEIGHT 1048576.0 /* 2^20 m: |value| <= 2^36 units */
#define ACC_MAX_FACTOR 8192      /* boxes of <= 2^26 cells: sums stay below 2^62 */

struct talus_preview_acc {
  int nx, ny, f, ow, oh; /* map, box size, panel size */
  double cell;           /* cell size of the map [m] */
  int64_t *sum[2];       /* [ow*oh] per panel, fixed point */
  uint32_t *cnt[2];      /* [ow*oh] valid cells summed */
};

/* Smallest box size f with 2·ceil(nx/f) + gap <= max_width. */
static int64_t acc_factor(int nx, int max_width) {
  int64_t m = (max_width - TALUS_PREVIEW_GAP) / 2; /* widest panel */
  return ((int64_t)nx + m - 1) / m;
}

talus_status talus_preview_acc_open(int nx, int ny, double cell_size, int max_width,
                                    talus_preview_acc **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview: NULL output");
  *out = NULL;
  if (max_width <= 0) max_width = TALUS_PREVIEW_DEFAULT_WIDTH;
  if (nx <= 0 || ny <= 0 || !(cell_size > 0.0) || !isfinite(cell_size) ||
      max_width < 2 + TALUS_PREVIEW_GAP)
    return talus_fail(TALUS_ERR_ARGUMENT, "io",
                      "preview: bad arguments (%d x %d cells, cell size %g, max width %d)", nx, ny,
                      cell_size, max_width);
  int64_t f = acc_factor(nx, max_width);
  if (f > ACC_MAX_FACTOR)
    return talus_fail(TALUS_ERR_RANGE, "io",
                      "preview: %d cells do not fit %d pixels (more than %d cells a pixel)", nx,
                      max_width, ACC_MAX_FACTOR);
  talus_preview_acc *a = calloc(1, sizeof *a);
  if (!a) return talus_fail(TALUS_ERR_NOMEM, "io", "preview: out of memory");
  *a = (talus_preview_acc){
      nx,        ny,           (int)f,      (int)((nx + f - 1) / f), (int)((ny + f - 1) / f),
      cell_size, {NULL, NULL}, {NULL, NULL}};
  size_t n = (size_t)a->ow * (size_t)a->oh;
  for (int p = 0; p < 2; p++) {
    a->sum[p] = calloc(n, sizeof *a->sum[p]);
    a->cnt[p] = calloc(n, sizeof *a->cnt[p]);
    if (!a->sum[p] || !a->cnt[p]) {
      talus_status st = talus_fail(TALUS_ERR_NOMEM, "io",
                                   "preview: cannot allocate %d x %d "
                                   "pixels",
                                   a->ow, a->oh);
      talus_preview_acc_free(a);
      return st;
    }
  }
  *out = a;
  return TALUS_OK;
}

/* A height in fixed point, clamped to ±ACC_MAX_HEIGHT so sums cannot
 * overflow; rounding is to nearest, ties away from zero, whatever the FPU
 * rounding mode. */
static int64_t acc_fixed(float v) {
  double h = (double)v;
  h = h > ACC_MAX_HEIGHT ? ACC_MAX_HEIGHT : (h < -ACC_MAX_HEIGHT ? -ACC_MAX_HEIGHT : h);
  return (int64_t)llround(h * ACC_ONE);
}

talus_status talus_preview_acc_add(talus_preview_acc *acc, int which, int x0, int y0, int w, int h,
                                   const float *heights, const uint8_t *nodata) {
  if (!acc || !heights || (which != 0 && which != 1))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview add: bad arguments (panel %d)", which);
  talus_status st = talus_window_check("preview", acc->nx, acc->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  for (int y = 0; y < h; y++) {
    size_t row = (size_t)((y0 + y) / acc->f) * (size_t)acc->ow;
    int64_t *sum = acc->sum[which] + row;
    uint32_t *cnt = acc->cnt[which] + row;
    for (int x = 0; x < w; x++) {
      size_t i = (size_t)y * (size_t)w + (size_t)x;
      if ((nodata && nodata[i]) || !isfinite(heights[i])) continue;
      int ox = (x0 + x) / acc->f;
      sum[ox] += acc_fixed(heights[i]);
      cnt[ox]++;
    }
  }
  return TALUS_OK;
}

/* Box means of panel p as floats, and its NoData mask (boxes with no
 * valid cell). */
static void acc_means(const talus_preview_acc *acc, int p, float *z, uint8_t *nd) {
  size_t n = (size_t)acc->ow * (size_t)acc->oh;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = acc->cnt[p][i];
    nd[i] = c == 0;
    z[i] = c ? (float)((double)acc->sum[p][i] / (double)c / ACC_ONE) : 0.0f;
  }
}

talus_status talus_preview_acc_write(const talus_preview_acc *acc, const char *path) {
  if (!acc) return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview write: NULL accumulator");
  size_t n = (size_t)acc->ow * (size_t)acc->oh;
  float *z[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
  uint8_t *nd[2] = {malloc(n), malloc(n)};
  talus_status st = TALUS_OK;
  if (!z[0] || !z[1] || !nd[0] || !nd[1])
    st = talus_fail(TALUS_ERR_NOMEM, "io", "preview: cannot allocate %d x %d pixels", acc->ow,
                    acc->oh);
  for (int p = 0; st == TALUS_OK && p < 2; p++)
    acc_means(acc, p, z[p], nd[p]);
  if (st == TALUS_OK)
    st = talus_preview_render(path, acc->ow, acc->oh, acc->cell * acc->f, (const float *const *)z,
                              (const uint8_t *const *)nd);
  for (int p = 0; p < 2; p++)
    free(z[p]), free(nd[p]);
  return st;
}

void talus_preview_acc_free(talus_preview_acc *acc) {
  if (!acc) return;
  for (int p = 0; p < 2; p++)
    free(acc->sum[p]), free(acc->cnt[p]);
  free(acc);
}
