/*
 * heightmap.c — engine heightmaps (heightmap.h): band 1 of a raster read
 * window by window, resampled by GDAL, quantised to 16 bits over the full
 * stated range or kept as float, and streamed into PNG16, RAW r16/r32 or
 * GeoTIFF under a partial name. One source (hm_src) serves both passes; one
 * sink (hm_sink) per format takes rows.
 */
#include "io/export/heightmap.h"
#include "io/export/driver.h"
#include "io/raster/raster_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define HM_MAX_SIDE (1 << 20) /* samples per side an output may have */

static const char *const format_names[TALUS_HM_FORMATS] = {"PNG16", "R16", "R32", "GTiff", "GDAL"};

const char *talus_hm_format_name(talus_hm_format f) {
  return f >= 0 && f < TALUS_HM_FORMATS ? format_names[f] : "?";
}

int talus_hm_format_parse(const char *name, talus_hm_format *f) {
  static const struct {
    const char *name;
    talus_hm_format f;
  } names[] = {{"PNG16", TALUS_HM_PNG16}, {"PNG", TALUS_HM_PNG16},    {"R16", TALUS_HM_R16},
               {"RAW", TALUS_HM_R16},     {"R32", TALUS_HM_R32},      {"GTiff", TALUS_HM_GTIFF},
               {"TIF", TALUS_HM_GTIFF},   {"GeoTIFF", TALUS_HM_GTIFF}};
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(name, names[i].name)) return *f = names[i].f, 1;
  return 0;
}

int talus_hm_format_from_path(const char *path, talus_hm_format *f) {
  const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot) return 0;
  static const struct {
    const char *ext;
    talus_hm_format f;
  } exts[] = {{".png", TALUS_HM_PNG16}, {".r16", TALUS_HM_R16},   {".raw", TALUS_HM_R16},
              {".r32", TALUS_HM_R32},   {".tif", TALUS_HM_GTIFF}, {".tiff", TALUS_HM_GTIFF}};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (!strcasecmp(dot, exts[i].ext)) return *f = exts[i].f, 1;
  return 0;
}

const char *talus_hm_resampling_names(void) {
  return TALUS_RESAMPLING_NAMES;
}

/* ---------------------------------------------------------------------
 * The source: band 1 read in windows of output rows
 * ------------------------------------------------------------------- */

typedef struct hm_src {
  const char *path;
  GDALDatasetH ds;
  GDALRasterBandH band;
  int nx, ny, W, H;   /* input and output sizes */
  int wx, wy, ww, wh; /* the window of the output grid written */
  int has_nd;
  double nd;
  GDALRIOResampleAlg alg;
  talus_georef geo;
} hm_src;

/* Opens band 1 of path and checks the options against it. */
static talus_status src_open(hm_src *s, const char *path, const talus_heightmap_options *o) {
  s->path = path;
  if (!talus_resampling_of(o->resampling, &s->alg))
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "unknown resampling '%s' (one of: %s)",
                      o->resampling, talus_hm_resampling_names());
  talus_gdal_cache_cap(); /* GDAL's block cache within talus's bound (raster.h) */
  talus_status st = talus_raster_open(path, &s->ds);
  if (st) return st;
  s->band = GDALGetRasterBand(s->ds, 1);
  s->nx = GDALGetRasterXSize(s->ds), s->ny = GDALGetRasterYSize(s->ds);
  s->W = o->width > 0 ? o->width : s->nx;
  s->H = o->height > 0 ? o->height : s->ny;
  if (s->W > HM_MAX_SIDE || s->H > HM_MAX_SIDE || s->W < 2 || s->H < 2)
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "heightmap size %d x %d outside 2..%d", s->W,
                      s->H, HM_MAX_SIDE);
  s->wx = o->win_x0, s->wy = o->win_y0;
  s->ww = o->win_w > 0 ? o->win_w : s->W, s->wh = o->win_w > 0 ? o->win_h : s->H;
  if (s->wx < 0 || s->wy < 0 || s->ww < 1 || s->wh < 1 || s->wx + s->ww > s->W ||
      s->wy + s->wh > s->H)
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "window (%d, %d, %d, %d) outside %d x %d",
                      s->wx, s->wy, s->ww, s->wh, s->W, s->H);
  st = talus_band_check_real(path, s->band, 1);
  if (!st) st = talus_georef_from(s->ds, s->band, &s->geo);
  s->has_nd = s->geo.has_nodata, s->nd = s->geo.nodata;
  return st;
}

/* Closes the source's dataset and frees its georef. */
static void src_close(hm_src *s) {
  if (s->ds) GDALClose(s->ds);
  talus_georef_free(&s->geo);
}

/* Reads rows [y0, y0 + h) of the output grid into dst (W × h): the values
 * themselves at native size, else GDAL's resampling of the matching
 * source window. */
static talus_status src_grid_rows(const hm_src *s, int y0, int h, float *dst) {
  return talus_band_rows_resampled(s->path, s->band, s->nx, s->ny, s->W, s->H, s->alg, y0, h, dst);
}

/* Reads rows [y0, y0 + h) of the window into dst (ww × h; dst holds W × h):
 * whole rows of the output grid, then the window's columns. */
static talus_status src_rows(const hm_src *s, int y0, int h, float *dst) {
  talus_status st = src_grid_rows(s, s->wy + y0, h, dst);
  for (int r = 0; !st && s->ww < s->W && r < h; r++)
    memmove(dst + (size_t)r * s->ww, dst + (size_t)r * s->W + s->wx, s->ww * sizeof *dst);
  return st;
}

/* 1 when a read value is a height (finite, not the NoData value). */
static int src_valid(const hm_src *s, float v) {
  return isfinite(v) && !(s->has_nd && (double)v == s->nd);
}

/* Rows per window: TALUS_RASTER_WINDOW_ROWS, or fewer for very wide maps. */
static int src_window_rows(const hm_src *s) {
  int64_t rows = ((int64_t)1 << 24) / s->W;
  return rows < 1 ? 1 : (rows > TALUS_RASTER_WINDOW_ROWS ? TALUS_RASTER_WINDOW_ROWS : (int)rows);
}

/* Reports pass `pass` (0 or 1) at row y of H; TALUS_ERR_CANCELLED when the
 * callback says stop. */
static talus_status hm_progress(talus_progress_fn fn, void *user, int pass, int y, int H) {
  if (!fn || fn(0.5 * pass + 0.5 * y / H, NULL, user)) return TALUS_OK;
  return talus_fail(TALUS_ERR_CANCELLED, "export", "cancelled");
}

/* Pass 1: the valid heights' range and the NoData count, window by window. */
static talus_status src_scan(const hm_src *s, float *buf, talus_heightmap_info *info,
                             talus_progress_fn fn, void *user) {
  double lo = INFINITY, hi = -INFINITY;
  int64_t nodata = 0;
  int rows = src_window_rows(s);
  talus_status st = TALUS_OK;
  for (int y0 = 0; !st && y0 < s->wh; y0 += rows) {
    int h = s->wh - y0 < rows ? s->wh - y0 : rows;
    st = src_rows(s, y0, h, buf);
    for (size_t i = 0; !st && i < (size_t)s->ww * h; i++) {
      if (!src_valid(s, buf[i])) {
        nodata++;
        continue;
      }
      lo = buf[i] < lo ? buf[i] : lo;
      hi = buf[i] > hi ? buf[i] : hi;
    }
    if (!st) st = hm_progress(fn, user, 0, y0 + h, s->wh);
  }
  if (!st && nodata == (int64_t)s->W * s->H) /* a tile of the sea may hold none */
    st = talus_fail(TALUS_ERR_DATA, "export", "'%s' holds no valid height (all NoData)", s->path);
  info->data_min = lo, info->data_max = hi, info->nodata_samples = nodata;
  return st;
}

/* ---------------------------------------------------------------------
 * The sinks: rows of quantised or float heights into the file
 * ------------------------------------------------------------------- */

typedef struct hm_sink {
  talus_hm_format f;
  const char *path;
  char *partial; /* the file being written (raw and PNG) */
  FILE *raw;
  char *tmp;         /* PNG: the 16-bit rows' temporary GeoTIFF */
  GDALDatasetH rows; /* PNG: that GeoTIFF */
  talus_geotiff_stream *gt;
  talus_export_rows *out; /* TALUS_HM_GDAL: the rows the driver copies */
  const talus_heightmap_options *o;
  const hm_src *src;
  double zmin, zmax;
  uint16_t *q; /* a window of 16-bit codes */
  uint8_t *le; /* a window as little-endian bytes */
} hm_sink;

/* The 16-bit code of height v: the full range, clamped, invalid → 0. */
static uint16_t hm_code(const hm_sink *k, float v) {
  if (!src_valid(k->src, v) || !(k->zmax > k->zmin)) return 0;
  double t = ((double)v - k->zmin) / (k->zmax - k->zmin) * 65535.0;
  return (uint16_t)(t <= 0.0 ? 0 : (t >= 65535.0 ? 65535 : lround(t)));
}

/* The georef of the resampled grid: the input's, pixels scaled to cover
 * the same extent with W × H samples. */
static talus_status sink_georef(const hm_src *s, talus_georef *g) {
  talus_status st = talus_georef_copy(g, &s->geo);
  double fx = (double)s->nx / s->W, fy = (double)s->ny / s->H;
  g->gt[1] *= fx, g->gt[4] *= fx, g->gt[2] *= fy, g->gt[5] *= fy;
  g->gt[0] += s->wx * g->gt[1] + s->wy * g->gt[2], g->gt[3] += s->wx * g->gt[4] + s->wy * g->gt[5];
  return st;
}

/* Opens the format's file (or temporary file) under a partial name. */
static talus_status sink_open(hm_sink *k, const talus_heightmap_options *o) {
  const hm_src *s = k->src;
  size_t n = (size_t)s->W * src_window_rows(s);
  talus_status st = talus_alloc((void **)&k->q, n * sizeof *k->q, "heightmap rows");
  if (!st) st = talus_alloc((void **)&k->le, n * 4, "heightmap bytes");
  if (!st && k->f == TALUS_HM_GDAL) {
    talus_georef g = {{0}, NULL, 0, 0.0};
    st = sink_georef(s, &g);
    if (!st)
      st = talus_export_rows_open(k->path, s->ww, s->wh, 1,
                                  o->coded ? TALUS_EXPORT_UINT16 : TALUS_EXPORT_FLOAT, &g, &k->out);
    if (!st)
      st = talus_export_rows_band(k->out, 0, o->coded ? "height code" : "height [m]",
                                  o->coded ? NULL : "m");
    talus_georef_free(&g);
    return st;
  }
  if (!st && k->f == TALUS_HM_GTIFF) {
    talus_georef g = {{0}, NULL, 0, 0.0};
    talus_write_options wo = {.creation_options = o->creation_options};
    const char *name[1] = {"height [m]"};
    st = sink_georef(s, &g);
    if (!st) st = talus_geotiff_stream_open(k->path, s->ww, s->wh, 1, name, NULL, &g, &wo, &k->gt);
    talus_georef_free(&g);
    return st;
  }
  if (!st) st = talus_partial_begin(k->path, &k->partial);
  if (!st && k->f != TALUS_HM_PNG16 && !(k->raw = fopen(k->partial, "wb")))
    st = talus_fail(TALUS_ERR_IO, "export", "cannot write '%s'", k->path);
  if (st || k->f != TALUS_HM_PNG16) return st;
  size_t len = strlen(k->partial) + sizeof ".rows.tif";
  GDALDriverH gtiff = GDALGetDriverByName("GTiff");
  if (!(k->tmp = malloc(len))) return talus_fail(TALUS_ERR_NOMEM, "export", "out of memory");
  snprintf(k->tmp, len, "%s.rows.tif", k->partial);
  k->rows = gtiff ? GDALCreate(gtiff, k->tmp, s->ww, s->wh, 1, GDT_UInt16, NULL) : NULL;
  return k->rows ? TALUS_OK : talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'", k->path);
}

/* Little-endian bytes of n values of `size` bytes at v into k->le. */
static void sink_le(hm_sink *k, const void *v, size_t n, int size) {
  const uint8_t *b = v;
  int big = 0;
  uint16_t probe = 1;
  memcpy(&big, &probe, 1), big = !big;
  for (size_t i = 0; i < n; i++)
    for (int j = 0; j < size; j++)
      k->le[i * size + j] = b[i * size + (big ? size - 1 - j : j)];
}

/* Writes output rows [y0, y0 + h) whose heights are v (W × h). */
static talus_status sink_rows(hm_sink *k, int y0, int h, float *v) {
  const hm_src *s = k->src;
  size_t n = (size_t)s->ww * h;
  if (k->f == TALUS_HM_GDAL) { /* codes as floats in k->le, or metres with NaN NoData */
    float *c = (float *)k->le;
    for (size_t i = 0; i < n; i++)
      if (k->o->coded)
        c[i] = (float)hm_code(k, v[i]);
      else if (!src_valid(s, v[i]))
        v[i] = NAN;
    return talus_export_rows_write(k->out, 0, y0, h, k->o->coded ? c : v);
  }
  for (size_t i = 0; k->f != TALUS_HM_GTIFF && i < n; i++) {
    k->q[i] = hm_code(k, v[i]);
    if (!src_valid(s, v[i])) v[i] = (float)k->zmin;
  }
  if (k->f == TALUS_HM_GTIFF) return talus_geotiff_stream_write(k->gt, 0, 0, y0, s->ww, h, v);
  if (k->f == TALUS_HM_PNG16) {
    if (GDALRasterIO(GDALGetRasterBand(k->rows, 1), GF_Write, 0, y0, s->ww, h, k->q, s->ww, h,
                     GDT_UInt16, 0, 0) != CE_None)
      return talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'%s", k->path,
                             talus_disk_full_hint(k->path));
    return TALUS_OK;
  }
  int size = k->f == TALUS_HM_R16 ? 2 : 4;
  sink_le(k, size == 2 ? (const void *)k->q : (const void *)v, n, size);
  if (fwrite(k->le, (size_t)size, n, k->raw) != n)
    return talus_fail(TALUS_ERR_IO, "export", "cannot write '%s'%s", k->path,
                      talus_disk_full_hint(k->path));
  return TALUS_OK;
}

/* PNG: copies the temporary 16-bit GeoTIFF into the partial PNG. */
static talus_status sink_png(hm_sink *k) {
  GDALDriverH png = GDALGetDriverByName("PNG");
  if (!png) return talus_fail(TALUS_ERR_UNSUPPORTED, "export", "GDAL has no PNG driver");
  CPLErrorReset();
  GDALDatasetH out = GDALCreateCopy(png, k->partial, k->rows, FALSE, NULL, NULL, NULL);
  int failed = !out;
  if (out) GDALClose(out);
  if (failed || CPLGetLastErrorType() >= CE_Failure)
    return talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'%s", k->path,
                           talus_disk_full_hint(k->path));
  return TALUS_OK;
}

/* Finishes the file: renamed into place when ok, else removed. Frees k. */
static talus_status sink_close(hm_sink *k, talus_status st) {
  if (k->f == TALUS_HM_GDAL) {
    st = talus_export_rows_close(k->out, st, k->o->driver, k->o->creation_options);
    talus_free(k->q);
    talus_free(k->le);
    return st;
  }
  if (k->gt && !st)
    st = talus_geotiff_stream_commit(k->gt);
  else if (k->gt)
    talus_geotiff_stream_abort(k->gt);
  if (k->raw && fclose(k->raw) != 0 && !st)
    st = talus_fail(TALUS_ERR_IO, "export", "cannot finish '%s'%s", k->path,
                    talus_disk_full_hint(k->path));
  if (k->rows && !st) {
    GDALFlushCache(k->rows);
    st = sink_png(k);
  }
  if (k->rows) GDALClose(k->rows);
  if (k->tmp) unlink(k->tmp);
  talus_status end = talus_partial_end(k->path, k->partial, !st);
  free(k->tmp);
  talus_free(k->q);
  talus_free(k->le);
  return st ? st : end;
}

/* Pass 2: every window read again and written. */
static talus_status hm_write(hm_sink *k, float *buf, talus_progress_fn fn, void *user) {
  const hm_src *s = k->src;
  int rows = src_window_rows(s);
  talus_status st = TALUS_OK;
  for (int y0 = 0; !st && y0 < s->wh; y0 += rows) {
    int h = s->wh - y0 < rows ? s->wh - y0 : rows;
    st = src_rows(s, y0, h, buf);
    if (!st) st = sink_rows(k, y0, h, buf);
    if (!st) st = hm_progress(fn, user, 1, y0 + h, s->wh);
  }
  return st;
}

/* The info of a source whose range pass has run. */
static talus_status hm_info(const hm_src *s, const talus_heightmap_options *o,
                            talus_heightmap_info *info) {
  talus_cellsize c;
  talus_status st = talus_cellsize_of(&s->geo, s->nx, s->ny, &c);
  info->format = o->format;
  info->coded = o->format == TALUS_HM_PNG16 || o->format == TALUS_HM_R16 ||
                (o->format == TALUS_HM_GDAL && o->coded);
  snprintf(info->driver, sizeof info->driver, "%s",
           o->format == TALUS_HM_GDAL && o->driver ? o->driver : talus_hm_format_name(o->format));
  info->src_nx = s->nx, info->src_ny = s->ny, info->src_dx = c.dx, info->src_dy = c.dy;
  info->width = s->ww, info->height = s->wh, info->x0 = s->wx, info->y0 = s->wy;
  info->dx = c.dx * s->nx / s->W, info->dy = c.dy * s->ny / s->H;
  info->zmin = o->z_stated ? o->zmin : info->data_min;
  info->zmax = o->z_stated ? o->zmax : info->data_max;
  return st;
}

/* Checks the options, opens the source and runs pass 1 into *info; *buf
 * gets the window buffer. The caller closes s and frees *buf. */
static talus_status hm_begin(hm_src *s, float **buf, const char *input,
                             const talus_heightmap_options *o, talus_heightmap_info *info,
                             talus_progress_fn progress, void *user) {
  memset(info, 0, sizeof *info);
  if (!o || o->format < 0 || o->format >= TALUS_HM_FORMATS)
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "no heightmap format given");
  if (o->z_stated && !(o->zmax > o->zmin && isfinite(o->zmin) && isfinite(o->zmax)))
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "Z range %g..%g is empty", o->zmin, o->zmax);
  talus_status st = src_open(s, input, o);
  if (!st) st = talus_alloc((void **)buf, (size_t)s->W * src_window_rows(s) * 4, "heightmap");
  if (!st) st = src_scan(s, *buf, info, progress, user);
  if (!st) st = hm_info(s, o, info);
  return st;
}

talus_status talus_heightmap_scan(const char *input, const talus_heightmap_options *o,
                                  talus_heightmap_info *info, talus_progress_fn progress,
                                  void *user) {
  hm_src s = {0};
  float *buf = NULL;
  talus_gdal_enter();
  talus_status st = hm_begin(&s, &buf, input, o, info, progress, user);
  talus_free(buf);
  src_close(&s);
  talus_gdal_leave();
  return st;
}

talus_status talus_heightmap_export(const char *input, const char *output,
                                    const talus_heightmap_options *o, talus_heightmap_info *info,
                                    talus_progress_fn progress, void *user) {
  talus_heightmap_info local;
  info = info ? info : &local;
  hm_src s = {0};
  float *buf = NULL;
  talus_gdal_enter();
  talus_status st = hm_begin(&s, &buf, input, o, info, progress, user);
  if (!st) {
    hm_sink k = {
        .f = o->format, .path = output, .src = &s, .o = o, .zmin = info->zmin, .zmax = info->zmax};
    st = sink_open(&k, o);
    if (!st) st = hm_write(&k, buf, progress, user);
    st = sink_close(&k, st);
  }
  talus_free(buf);
  src_close(&s);
  talus_gdal_leave();
  return st;
}
