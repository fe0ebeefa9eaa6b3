/*
 * stream.c — windowed writing for maps larger than memory: the
 * streaming GeoTIFF writer (windows in any order, gathered by GDAL's
 * bounded block cache); talus_geotiff_write (whole arrays) is a
 * wrapper over it, so there is one code path for each output.
 */
#include "io/raster/raster_private.h"

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
 * Whole arrays: talus_geotiff_write is the stream fed window by window
 * ------------------------------------------------------------------- */

/* Writes the bands window by window, all bands of a window before the next.
 * Windows are whole multiples of the block height, so every block is
 * complete when GDAL's cache flushes it and none is compressed twice. */
static talus_status write_bands(talus_geotiff_stream *s, int nx, int ny, int nbands,
                                const float *const *bands) {
  int bx = 0, by = 0;
  talus_geotiff_stream_block_size(s, &bx, &by);
  int rows = by > 0 ? by * ((TALUS_RASTER_WINDOW_ROWS + by - 1) / by) : TALUS_RASTER_WINDOW_ROWS;
  talus_status st = TALUS_OK;
  for (int y0 = 0; st == TALUS_OK && y0 < ny; y0 += rows) {
    int h = ny - y0 < rows ? ny - y0 : rows;
    for (int b = 0; st == TALUS_OK && b < nbands; b++)
      st = talus_geotiff_stream_write(s, b, 0, y0, nx, h, bands[b] + (size_t)y0 * (size_t)nx);
  }
  return st;
}

/* Validates the arguments of talus_geotiff_write. */
static talus_status check_write_args(const char *path, int nx, int ny, int nbands,
                                     const float *const *bands) {
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no output path given");
  if (nx <= 0 || ny <= 0 || nbands <= 0 || !bands)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s': nothing to write (%d x %d, %d bands)", path,
                      nx, ny, nbands);
  for (int b = 0; b < nbands; b++)
    if (!bands[b])
      return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s': band %d is NULL", path, b + 1);
  return TALUS_OK;
}

talus_status talus_geotiff_write(const char *path, int nx, int ny, int nbands,
                                 const float *const *bands, const char *const *band_names,
                                 const char *const *metadata, const talus_georef *geo,
                                 const talus_write_options *opt) {
  talus_status st = check_write_args(path, nx, ny, nbands, bands);
  talus_geotiff_stream *s = NULL;
  if (st == TALUS_OK)
    st = talus_geotiff_stream_open(path, nx, ny, nbands, band_names, metadata, geo, opt, &s);
  if (st == TALUS_OK) st = write_bands(s, nx, ny, nbands, bands);
  if (st != TALUS_OK) {
    talus_geotiff_stream_abort(s);
    return st;
  }
  return talus_geotiff_stream_commit(s);
}
