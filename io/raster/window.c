/*
 * window.c — windowed reading for maps larger than memory: the DEM
 * reader (validated by one streaming pass at open, then served window by
 * window; held whole only for FILL or for talus_dem_read) and the
 * multi-band reader. talus_dem_read and talus_bands_read are wrappers over
 * these readers, so whole and windowed reads give the same values.
 */
#include "io/raster/raster_private.h"
#include "kernels/state.h"

#include <cpl_conv.h>
#include <cpl_string.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Cells per block of the validation pass: bounds its buffers (~20 MB)
 * whatever the raster's width. */
#define PASS_CELLS ((size_t)1 << 22)

/* ---------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------- */

static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

/* Lowers GDAL's block cache to TALUS_GDAL_CACHE_BYTES unless the user
 * chose a size (GDAL_CACHEMAX in the environment or as config option). */
static void cache_cap_once(void) {
  if (CPLGetConfigOption("GDAL_CACHEMAX", NULL)) return;
  if (GDALGetCacheMax64() > TALUS_GDAL_CACHE_BYTES) GDALSetCacheMax64(TALUS_GDAL_CACHE_BYTES);
}

void talus_gdal_cache_cap(void) {
  pthread_once(&cache_once, cache_cap_once);
}

talus_status talus_window_check(const char *what, int nx, int ny, int x0, int y0, int w, int h) {
  if (x0 < 0 || y0 < 0 || w < 1 || h < 1 || w > nx - x0 || h > ny - y0)
    return talus_fail(TALUS_ERR_ARGUMENT, "io",
                      "%s: window at (%d, %d) of %d x %d is outside the %d x %d raster", what, x0,
                      y0, w, h, nx, ny);
  return TALUS_OK;
}

talus_status talus_band_window(const char *path, GDALRasterBandH band, GDALDataType type, int x0,
                               int y0, int w, int h, void *dst, size_t pitch) {
  size_t size = (size_t)GDALGetDataTypeSizeBytes(type);
  for (int r = 0; r < h; r += TALUS_RASTER_WINDOW_ROWS) {
    int n = h - r < TALUS_RASTER_WINDOW_ROWS ? h - r : TALUS_RASTER_WINDOW_ROWS;
    char *p = (char *)dst + (size_t)r * pitch * size;
    if (GDALRasterIOEx(band, GF_Read, x0, y0 + r, w, n, p, w, n, type, (GSpacing)size,
                       (GSpacing)(pitch * size), NULL) != CE_None)
      return talus_gdal_fail(TALUS_ERR_IO, "cannot read rows %d..%d of '%s'", y0 + r,
                             y0 + r + n - 1, path);
  }
  return TALUS_OK;
}

talus_status talus_band_check_real(const char *path, GDALRasterBandH band, int b) {
  GDALDataType t = GDALGetRasterDataType(band);
  if (GDALDataTypeIsComplex(t))
    return talus_fail(TALUS_ERR_FORMAT, "io", "band %d of '%s' is complex (%s), not heights", b,
                      path, GDALGetDataTypeName(t));
  return TALUS_OK;
}

talus_status talus_dem_options_check(const talus_dem_options *opt, talus_dem_options *o) {
  memset(o, 0, sizeof *o);
  if (opt) *o = *opt;
  if (o->z_scale == 0.0) o->z_scale = 1.0;
  if (o->max_fill_cells <= 0) o->max_fill_cells = TALUS_DEM_READER_FILL_CELLS;
  if (!isfinite(o->z_scale))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "z scale must be finite (got %g)", o->z_scale);
  if (!(o->cell_size >= 0.0) || !isfinite(o->cell_size))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "cell size must be > 0 (got %g)", o->cell_size);
  if (o->nodata_policy < TALUS_NODATA_OUTFLOW || o->nodata_policy > TALUS_NODATA_FILL)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "unknown NoData policy %d", o->nodata_policy);
  return TALUS_OK;
}

/* ---------------------------------------------------------------------
 * DEM reader
 * ------------------------------------------------------------------- */

/* What the validation pass learns: NoData cells, NaN/Inf heights that are
 * not NoData (and the row-major index of the first), and the least valid
 * height after z scaling, which masked cells take. */
typedef struct dem_counts {
  int64_t nodata, bad, first_bad;
  float lo;
} dem_counts;

struct talus_dem_reader {
  char *path;
  GDALDatasetH ds;            /* NULL once the map is held in memory */
  GDALRasterBandH band, mask; /* mask NULL: every cell is valid */
  talus_dem_options o;
  int nx, ny;
  double cell_size;
  talus_georef geo;
  dem_counts c;
  talus_dem mem; /* in-memory mode: the finished map (mem.height != NULL) */
};

/* A raw height after z scaling (1 leaves it untouched, bit for bit). */
static float dem_scaled(const talus_dem_options *o, float v) {
  return o->z_scale == 1.0 ? v : (float)((double)v * o->z_scale);
}

/* Books n raw cells whose first has row-major index off. valid is GDAL's
 * mask (0 = invalid), NULL when every cell is valid. */
static void dem_count(const talus_dem_reader *r, const float *v, const uint8_t *valid, size_t n,
                      int64_t off, dem_counts *c) {
  for (size_t i = 0; i < n; i++) {
    if (valid && !valid[i]) {
      c->nodata++;
    } else if (!isfinite(v[i])) {
      if (c->bad++ == 0) c->first_bad = off + (int64_t)i;
    } else {
      float s = dem_scaled(&r->o, v[i]);
      if (s < c->lo) c->lo = s;
    }
  }
}

/* Refuses NaN/Inf heights that are not NoData and maps with no valid cell. */
static talus_status dem_check(const talus_dem_reader *r) {
  const dem_counts *c = &r->c;
  if (c->bad)
    return talus_fail(
        TALUS_ERR_DATA, "io",
        "'%s': %lld height%s NaN or infinite but not NoData (first at column %lld, "
        "row %lld); declare them NoData, e.g. gdal_translate -a_nodata nan in out.tif",
        r->path, (long long)c->bad, c->bad == 1 ? " is" : "s are",
        (long long)(c->first_bad % r->nx), (long long)(c->first_bad / r->nx));
  if (c->nodata == (int64_t)r->nx * r->ny)
    return talus_fail(TALUS_ERR_DATA, "io", "'%s': all %lld cells are NoData", r->path,
                      (long long)c->nodata);
  return TALUS_OK;
}

/* Reads raw heights (and GDAL's mask into valid, when the band has one and
 * valid is not NULL) of a window, a block of rows at a time so each mask
 * block is computed while its band block is still cached. */
static talus_status dem_raw(const talus_dem_reader *r, int x0, int y0, int w, int h, float *v,
                            uint8_t *valid) {
  talus_status st = TALUS_OK;
  for (int k = 0; st == TALUS_OK && k < h; k += TALUS_RASTER_WINDOW_ROWS) {
    int n = h - k < TALUS_RASTER_WINDOW_ROWS ? h - k : TALUS_RASTER_WINDOW_ROWS;
    size_t off = (size_t)k * (size_t)w;
    st = talus_band_window(r->path, r->band, GDT_Float32, x0, y0 + k, w, n, v + off, (size_t)w);
    if (st == TALUS_OK && r->mask && valid)
      st = talus_band_window(r->path, r->mask, GDT_Byte, x0, y0 + k, w, n, valid + off, (size_t)w);
  }
  return st;
}

/* Turns n raw cells into served ones: GDAL's mask (0 = invalid) becomes
 * talus's (1 = NoData), valid heights are z-scaled and masked ones take
 * the least valid height, so no sentinel or NaN reaches kernels. */
static void dem_finish(const talus_dem_reader *r, float *h, uint8_t *nd, size_t n) {
  for (size_t i = 0; i < n; i++) {
    nd[i] = r->mask ? nd[i] == 0 : 0;
    h[i] = nd[i] ? r->c.lo : dem_scaled(&r->o, h[i]);
  }
}

/* The validation pass: reads the whole band once, a bounded block of rows
 * at a time, keeping only the counts. */
static talus_status dem_pass(talus_dem_reader *r) {
  size_t rows = PASS_CELLS / (size_t)r->nx;
  rows = rows < 1 ? 1 : (rows > TALUS_RASTER_WINDOW_ROWS ? TALUS_RASTER_WINDOW_ROWS : rows);
  size_t n = rows * (size_t)r->nx;
  float *v = NULL;
  uint8_t *m = NULL;
  talus_status st = talus_alloc((void **)&v, n * sizeof *v, "DEM validation rows");
  if (st == TALUS_OK && r->mask) st = talus_alloc((void **)&m, n, "DEM validation mask");
  for (int y0 = 0; st == TALUS_OK && y0 < r->ny; y0 += (int)rows) {
    int h = r->ny - y0 < (int)rows ? r->ny - y0 : (int)rows;
    st = dem_raw(r, 0, y0, r->nx, h, v, m);
    if (st == TALUS_OK) dem_count(r, v, m, (size_t)r->nx * h, (int64_t)y0 * r->nx, &r->c);
  }
  talus_free(v);
  talus_free(m);
  return st;
}

/* Mean of the known (state 0) 4-neighbours of cell i. */
static float known_mean(const talus_dem *d, const uint8_t *state, size_t i) {
  int x = (int)(i % (size_t)d->nx), y = (int)(i / (size_t)d->nx);
  double sum = 0.0;
  int cnt = 0;
  for (int dir = 0; dir < 4; dir++) {
    int xx = x + talus_dir_dx(dir), yy = y + talus_dir_dy(dir);
    if (xx < 0 || yy < 0 || xx >= d->nx || yy >= d->ny) continue;
    size_t j = (size_t)yy * (size_t)d->nx + (size_t)xx;
    if (state[j] == 0) sum += d->height[j], cnt++;
  }
  return (float)(sum / cnt);
}

/* Appends the unfilled (state 1) 4-neighbours of cell i to list, marking
 * them queued (state 2). */
static void queue_holes(const talus_dem *d, uint8_t *state, size_t i, int64_t *list, int64_t *len) {
  int x = (int)(i % (size_t)d->nx), y = (int)(i / (size_t)d->nx);
  for (int dir = 0; dir < 4; dir++) {
    int xx = x + talus_dir_dx(dir), yy = y + talus_dir_dy(dir);
    if (xx < 0 || yy < 0 || xx >= d->nx || yy >= d->ny) continue;
    size_t j = (size_t)yy * (size_t)d->nx + (size_t)xx;
    if (state[j] == 1) state[j] = 2, list[(*len)++] = (int64_t)j;
  }
}

/*
 * FILL: fills holes ring by ring from the valid boundary inward. Each ring
 * is the set of holes 4-adjacent to known cells; every cell of a ring gets
 * the mean of its known 4-neighbours, computed before any cell of the ring
 * is marked known, so the result does not depend on visiting order. O(n).
 * Then the mask is dropped.
 */
static talus_status dem_fill(talus_dem *d) {
  size_t n = (size_t)d->nx * (size_t)d->ny;
  int64_t *cur = NULL, *next = NULL, ncur = 0;
  size_t bytes = (size_t)d->nodata_cells * sizeof(int64_t);
  talus_status st = talus_alloc((void **)&cur, bytes, "NoData fill");
  if (st == TALUS_OK) st = talus_alloc((void **)&next, bytes, "NoData fill");
  uint8_t *state = d->nodata; /* 0 known, 1 hole, 2 queued in the next ring */
  for (size_t i = 0; st == TALUS_OK && i < n; i++)
    if (state[i] == 0) queue_holes(d, state, i, cur, &ncur);
  while (st == TALUS_OK && ncur > 0) {
    int64_t nnext = 0;
    for (int64_t k = 0; k < ncur; k++)
      d->height[cur[k]] = known_mean(d, state, (size_t)cur[k]);
    for (int64_t k = 0; k < ncur; k++)
      state[cur[k]] = 0;
    for (int64_t k = 0; k < ncur; k++)
      queue_holes(d, state, (size_t)cur[k], next, &nnext);
    int64_t *t = cur;
    cur = next, next = t, ncur = nnext;
  }
  talus_free(cur);
  talus_free(next);
  if (st != TALUS_OK) return st;
  d->filled_cells = d->nodata_cells;
  d->nodata_cells = 0;
  return TALUS_OK;
}

/* In-memory mode: reads the whole map once, validates it, finishes it and
 * applies FILL. mem.nodata is NULL when no cell is masked. */
static talus_status dem_load_whole(talus_dem_reader *r) {
  talus_dem *d = &r->mem;
  size_t n = (size_t)r->nx * (size_t)r->ny;
  d->nx = r->nx;
  d->ny = r->ny;
  talus_status st = talus_alloc((void **)&d->height, n * sizeof(float), "DEM heights");
  if (st == TALUS_OK) st = talus_alloc((void **)&d->nodata, n, "DEM NoData mask");
  if (st == TALUS_OK) st = dem_raw(r, 0, 0, r->nx, r->ny, d->height, d->nodata);
  if (st == TALUS_OK) dem_count(r, d->height, r->mask ? d->nodata : NULL, n, 0, &r->c);
  if (st == TALUS_OK) st = dem_check(r);
  if (st != TALUS_OK) return st;
  dem_finish(r, d->height, d->nodata, n);
  d->nodata_cells = r->c.nodata;
  if (d->nodata_cells && r->o.nodata_policy == TALUS_NODATA_FILL) st = dem_fill(d);
  if (d->nodata_cells == 0) {
    talus_free(d->nodata);
    d->nodata = NULL;
  }
  return st;
}

/* Output name suggested for the UTM reprojection, in the current directory
 * (the input's may be read-only): dir/in.hgt -> in_utm.tif. */
static void utm_name(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  int stem = dot && dot > base ? (int)(dot - base) : (int)strlen(base);
  snprintf(out, size, "%.*s_utm.tif", stem, base);
}

/* Warns about anything approximate in the cell size derived for path. */
static void warn_cellsize(const char *path, const talus_cellsize *c) {
  char out[1024];
  if (!c->has_gt) {
    talus_warn("'%s' has no geotransform: assuming 1 m cells (set the cell size to override)",
               path);
  } else if (c->kind == TALUS_CRS_GEOGRAPHIC) {
    utm_name(path, out, sizeof out);
    talus_warn("'%s' has a geographic CRS (%s): at latitude %.4f its cells are %.2f m (x) by "
               "%.2f m (y), not square; talus uses %.2f m (geometric mean, area-preserving). "
               "To work in metres, reproject to the local UTM zone: gdalwarp -t_srs EPSG:%d "
               "-r bilinear -tr %.4g %.4g %s %s",
               path, c->crs_name, c->lat, c->dx, c->dy, c->cell, c->utm_epsg, c->cell, c->cell,
               path, out);
  } else if (c->kind == TALUS_CRS_NONE) {
    talus_warn("'%s' has no CRS: assuming its pixel size %.6g is in metres (set the cell size "
               "to override)",
               path, c->cell);
  } else if (fabs(c->dx - c->dy) > 1e-6 * c->cell) {
    talus_warn("'%s' has non-square pixels (%.6g m x %.6g m): talus uses %.6g m (geometric mean)",
               path, c->dx, c->dy, c->cell);
  }
}

/* The user's cell size, or the metric one of the georef (with warnings). */
static talus_status dem_cellsize(talus_dem_reader *r) {
  if (r->o.cell_size > 0.0) {
    r->cell_size = r->o.cell_size;
    return TALUS_OK;
  }
  talus_cellsize c;
  talus_status st = talus_cellsize_of(&r->geo, r->nx, r->ny, &c);
  if (st != TALUS_OK) return talus_fail_context(st, "'%s'", r->path);
  warn_cellsize(r->path, &c);
  r->cell_size = c.cell;
  return TALUS_OK;
}

/* Opens the dataset, checks size and type, takes georef and mask band. */
static talus_status dem_setup(talus_dem_reader *r) {
  talus_status st = talus_raster_open(r->path, &r->ds);
  if (st != TALUS_OK) return st;
  r->band = GDALGetRasterBand(r->ds, 1);
  r->nx = GDALGetRasterXSize(r->ds);
  r->ny = GDALGetRasterYSize(r->ds);
  st = talus_raster_check_size(r->path, r->nx, r->ny, r->o.max_cells);
  if (st == TALUS_OK) st = talus_band_check_real(r->path, r->band, 1);
  if (st == TALUS_OK) st = talus_georef_from(r->ds, r->band, &r->geo);
  /* GDAL's mask band compares with the NoData value in the band's own
   * type (NaN NoData included) and honours explicit mask and alpha bands. */
  if (st == TALUS_OK && GDALGetMaskFlags(r->band) != GMF_ALL_VALID)
    r->mask = GDALGetMaskBand(r->band);
  return st;
}

/* Streaming mode: the validation pass; FILL is refused when holes exist,
 * since filling them needs the whole map. */
static talus_status dem_stream(talus_dem_reader *r) {
  talus_status st = dem_pass(r);
  if (st == TALUS_OK) st = dem_check(r);
  if (st == TALUS_OK && r->c.nodata && r->o.nodata_policy == TALUS_NODATA_FILL)
    st = talus_fail(TALUS_ERR_UNSUPPORTED, "io",
                    "'%s' has %lld NoData cells and is %d x %d cells, more than the %lld that may "
                    "be held in memory: the fill NoData policy needs the whole map in memory; use "
                    "--nodata outflow|wall, or a smaller map",
                    r->path, (long long)r->c.nodata, r->nx, r->ny, (long long)r->o.max_fill_cells);
  return st;
}

/* Opens a reader: in memory when `whole` or when FILL fits, else streaming. */
static talus_status dem_open(const char *path, const talus_dem_options *opt, int whole,
                             talus_dem_reader **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "dem reader: NULL output");
  *out = NULL;
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no raster path given");
  talus_dem_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    return talus_fail(TALUS_ERR_NOMEM, "io", "dem reader: out of memory");
  }
  r->c.lo = INFINITY;
  r->c.first_bad = -1;
  talus_status st = talus_dem_options_check(opt, &r->o);
  talus_gdal_cache_cap();
  talus_gdal_enter();
  if (st == TALUS_OK) st = dem_setup(r);
  int in_memory = whole || (r->o.nodata_policy == TALUS_NODATA_FILL &&
                            (int64_t)r->nx * r->ny <= r->o.max_fill_cells);
  if (st == TALUS_OK) st = in_memory ? dem_load_whole(r) : dem_stream(r);
  if (st == TALUS_OK) st = dem_cellsize(r);
  if (st == TALUS_OK && in_memory) GDALClose(r->ds), r->ds = NULL;
  talus_gdal_leave();
  if (st != TALUS_OK) {
    talus_dem_reader_close(r);
    return st;
  }
  *out = r;
  return TALUS_OK;
}

talus_status talus_dem_reader_open(const char *path, const talus_dem_options *opt,
                                   talus_dem_reader **out) {
  return dem_open(path, opt, 0, out);
}

talus_status talus_dem_reader_open_whole(const char *path, const talus_dem_options *opt,
                                         talus_dem_reader **out) {
  return dem_open(path, opt, 1, out);
}

int talus_dem_reader_nx(const talus_dem_reader *r) {
  return r ? r->nx : 0;
}

int talus_dem_reader_ny(const talus_dem_reader *r) {
  return r ? r->ny : 0;
}

double talus_dem_reader_cell_size(const talus_dem_reader *r) {
  return r ? r->cell_size : 0.0;
}

const talus_georef *talus_dem_reader_georef(const talus_dem_reader *r) {
  return r ? &r->geo : NULL;
}

int64_t talus_dem_reader_nodata_cells(const talus_dem_reader *r) {
  return !r ? 0 : r->mem.height ? r->mem.nodata_cells : r->c.nodata;
}

int64_t talus_dem_reader_filled_cells(const talus_dem_reader *r) {
  return r ? r->mem.filled_cells : 0;
}

/* Copies a window of the in-memory map. */
static void dem_copy(const talus_dem_reader *r, int x0, int y0, int w, int h, float *height,
                     uint8_t *nodata) {
  for (int y = 0; y < h; y++) {
    size_t src = (size_t)(y0 + y) * (size_t)r->nx + (size_t)x0, dst = (size_t)y * (size_t)w;
    memcpy(height + dst, r->mem.height + src, (size_t)w * sizeof *height);
    if (r->mem.nodata)
      memcpy(nodata + dst, r->mem.nodata + src, (size_t)w);
    else
      memset(nodata + dst, 0, (size_t)w);
  }
}

talus_status talus_dem_reader_read(talus_dem_reader *r, int x0, int y0, int w, int h, float *height,
                                   uint8_t *nodata) {
  if (!r || !height || !nodata)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "dem reader read: NULL argument");
  talus_status st = talus_window_check(r->path, r->nx, r->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  if (r->mem.height) {
    dem_copy(r, x0, y0, w, h, height, nodata);
    return TALUS_OK;
  }
  talus_gdal_enter();
  st = dem_raw(r, x0, y0, w, h, height, nodata);
  talus_gdal_leave();
  if (st == TALUS_OK) dem_finish(r, height, nodata, (size_t)w * (size_t)h);
  return st;
}

talus_status talus_dem_reader_take(talus_dem_reader *r, talus_dem *out) {
  memset(out, 0, sizeof *out);
  if (!r || !r->mem.height)
    return talus_fail(TALUS_ERR_INTERNAL, "io", "dem reader: the map is not in memory");
  *out = r->mem;
  memset(&r->mem, 0, sizeof r->mem);
  out->cell_size = r->cell_size;
  out->geo = r->geo;
  memset(&r->geo, 0, sizeof r->geo);
  return TALUS_OK;
}

void talus_dem_reader_close(talus_dem_reader *r) {
  if (!r) return;
  talus_gdal_enter();
  if (r->ds) GDALClose(r->ds);
  talus_gdal_leave();
  talus_dem_free(&r->mem);
  talus_georef_free(&r->geo);
  free(r->path);
  free(r);
}

/* ---------------------------------------------------------------------
 * Multi-band reader
 * ------------------------------------------------------------------- */

struct talus_bands_reader {
  char *path;
  GDALDatasetH ds;
  int nx, ny, nbands;
  char **name;     /* [nbands], malloc'd, "" when a band has no description */
  char **metadata; /* CSL list, may be NULL */
  talus_georef geo;
};

/* Opens the dataset and takes sizes, band names, georef and metadata. */
static talus_status bands_setup(talus_bands_reader *r) {
  talus_status st = talus_raster_open(r->path, &r->ds);
  if (st != TALUS_OK) return st;
  r->nx = GDALGetRasterXSize(r->ds);
  r->ny = GDALGetRasterYSize(r->ds);
  r->nbands = GDALGetRasterCount(r->ds);
  st = talus_raster_check_size(r->path, r->nx, r->ny, INT64_MAX);
  if (st == TALUS_OK && !(r->name = calloc((size_t)r->nbands, sizeof *r->name)))
    st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot allocate %d band names", r->nbands);
  for (int k = 0; st == TALUS_OK && k < r->nbands; k++) {
    GDALRasterBandH band = GDALGetRasterBand(r->ds, k + 1);
    const char *desc = GDALGetDescription(band);
    st = talus_band_check_real(r->path, band, k + 1);
    if (st == TALUS_OK && !(r->name[k] = strdup(desc ? desc : "")))
      st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot copy a band name");
  }
  if (st == TALUS_OK) st = talus_georef_from(r->ds, GDALGetRasterBand(r->ds, 1), &r->geo);
  if (st == TALUS_OK) r->metadata = CSLDuplicate(GDALGetMetadata(r->ds, NULL));
  return st;
}

talus_status talus_bands_reader_open(const char *path, talus_bands_reader **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "bands reader: NULL output");
  *out = NULL;
  if (!path || !path[0]) return talus_fail(TALUS_ERR_ARGUMENT, "io", "no raster path given");
  talus_bands_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    return talus_fail(TALUS_ERR_NOMEM, "io", "bands reader: out of memory");
  }
  talus_gdal_cache_cap();
  talus_gdal_enter();
  talus_status st = bands_setup(r);
  talus_gdal_leave();
  if (st != TALUS_OK) {
    talus_bands_reader_close(r);
    return st;
  }
  *out = r;
  return TALUS_OK;
}

int talus_bands_reader_nx(const talus_bands_reader *r) {
  return r ? r->nx : 0;
}

int talus_bands_reader_ny(const talus_bands_reader *r) {
  return r ? r->ny : 0;
}

int talus_bands_reader_nbands(const talus_bands_reader *r) {
  return r ? r->nbands : 0;
}

const char *talus_bands_reader_name(const talus_bands_reader *r, int band) {
  return r && r->name && band >= 0 && band < r->nbands ? r->name[band] : NULL;
}

int talus_bands_reader_find(const talus_bands_reader *r, const char *name) {
  for (int k = 0; r && r->name && name && k < r->nbands; k++)
    if (r->name[k] && strcmp(r->name[k], name) == 0) return k;
  return -1;
}

const char *talus_bands_reader_meta(const talus_bands_reader *r, const char *key) {
  return (r && key) ? CSLFetchNameValue(r->metadata, key) : NULL;
}

const talus_georef *talus_bands_reader_georef(const talus_bands_reader *r) {
  return r ? &r->geo : NULL;
}

talus_status talus_bands_reader_read(talus_bands_reader *r, int band, int x0, int y0, int w, int h,
                                     float *out) {
  if (!r || !out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "bands reader read: NULL argument");
  if (band < 0 || band >= r->nbands)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "'%s' has no band %d (it has %d)", r->path,
                      band + 1, r->nbands);
  talus_status st = talus_window_check(r->path, r->nx, r->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  talus_gdal_enter();
  st = talus_band_window(r->path, GDALGetRasterBand(r->ds, band + 1), GDT_Float32, x0, y0, w, h,
                         out, (size_t)w);
  talus_gdal_leave();
  return st;
}

void talus_bands_reader_take(talus_bands_reader *r, talus_bands *out) {
  out->nx = r->nx;
  out->ny = r->ny;
  out->nbands = r->nbands;
  out->name = r->name;
  out->metadata = r->metadata;
  out->geo = r->geo;
  r->name = NULL;
  r->metadata = NULL;
  memset(&r->geo, 0, sizeof r->geo);
}

void talus_bands_reader_close(talus_bands_reader *r) {
  if (!r) return;
  talus_gdal_enter();
  if (r->ds) GDALClose(r->ds);
  talus_gdal_leave();
  for (int k = 0; r->name && k < r->nbands; k++)
    free(r->name[k]);
  free(r->name);
  CSLDestroy(r->metadata);
  talus_georef_free(&r->geo);
  free(r->path);
  free(r);
}

/* ---------------------------------------------------------------------
 * Whole-map reads: a DEM and every band of a talus state, read through
 * the windowed readers above, so there is one code path.
 * ------------------------------------------------------------------- */

talus_status talus_dem_read(const char *path, const talus_dem_options *opt, talus_dem *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "dem read: NULL output");
  memset(out, 0, sizeof *out);
  talus_dem_reader *r = NULL;
  talus_status st = talus_dem_reader_open_whole(path, opt, &r);
  if (st == TALUS_OK) st = talus_dem_reader_take(r, out);
  talus_dem_reader_close(r);
  return st;
}

void talus_dem_free(talus_dem *d) {
  if (!d) return;
  talus_free(d->height);
  talus_free(d->nodata);
  talus_georef_free(&d->geo);
  memset(d, 0, sizeof *d);
}

/* Allocates the per-band arrays of b (sized from r) and reads every band. */
static talus_status bands_load(const char *path, talus_bands_reader *r, talus_bands *b) {
  talus_status st = talus_raster_check_size(path, b->nx, b->ny, 0);
  if (st == TALUS_OK && !(b->band = calloc((size_t)b->nbands, sizeof *b->band)))
    st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot allocate %d bands", b->nbands);
  size_t n = (size_t)b->nx * (size_t)b->ny;
  for (int k = 0; st == TALUS_OK && k < b->nbands; k++) {
    st = talus_alloc((void **)&b->band[k], n * sizeof(float), "raster band");
    if (st == TALUS_OK) st = talus_bands_reader_read(r, k, 0, 0, b->nx, b->ny, b->band[k]);
  }
  return st;
}

talus_status talus_bands_read(const char *path, talus_bands *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "bands read: NULL output");
  memset(out, 0, sizeof *out);
  talus_bands_reader *r = NULL;
  talus_status st = talus_bands_reader_open(path, &r);
  if (st == TALUS_OK) {
    talus_bands_reader_take(r, out);
    st = bands_load(path, r, out);
  }
  talus_bands_reader_close(r);
  if (st != TALUS_OK) talus_bands_free(out);
  return st;
}

void talus_bands_free(talus_bands *b) {
  if (!b) return;
  for (int k = 0; k < b->nbands; k++) {
    if (b->band) talus_free(b->band[k]);
    if (b->name) free(b->name[k]);
  }
  free(b->band);
  free(b->name);
  CSLDestroy(b->metadata);
  talus_georef_free(&b->geo);
  memset(b, 0, sizeof *b);
}

const char *talus_bands_meta(const talus_bands *b, const char *key) {
  return (b && key) ? CSLFetchNameValue(b->metadata, key) : NULL;
}

int talus_bands_find(const talus_bands *b, const char *name) {
  for (int k = 0; b && name && k < b->nbands; k++)
    if (b->name[k] && strcmp(b->name[k], name) == 0) return k;
  return -1;
}
