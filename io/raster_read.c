/*
 * raster_read.c — reading rasters: a DEM (band 1, NoData mask, policy,
 * cell size) and every band of a talus state. All reads are windowed.
 */
#define TALUS_RASTER_INTERNAL
#include "io/raster.h"
#include "kernels/state.h"

#include <cpl_string.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reads rows y0..y0+h-1 of band (and of its mask into valid, 0 = invalid,
 * when valid is not NULL) as Float32/Byte. */
static talus_status read_window(const char *path, GDALRasterBandH band, GDALRasterBandH mask,
                                int nx, int y0, int h, float *v, uint8_t *valid) {
  if (GDALRasterIO(band, GF_Read, 0, y0, nx, h, v, nx, h, GDT_Float32, 0, 0) != CE_None ||
      (valid && GDALRasterIO(mask, GF_Read, 0, y0, nx, h, valid, nx, h, GDT_Byte, 0, 0) != CE_None))
    return talus_gdal_fail(TALUS_ERR_IO, "cannot read rows %d..%d of '%s'", y0, y0 + h - 1, path);
  return TALUS_OK;
}

talus_status talus_band_read(const char *path, GDALRasterBandH band, int nx, int ny, float *dst) {
  talus_status st = TALUS_OK;
  for (int y0 = 0; st == TALUS_OK && y0 < ny; y0 += TALUS_RASTER_WINDOW_ROWS) {
    int h = ny - y0 < TALUS_RASTER_WINDOW_ROWS ? ny - y0 : TALUS_RASTER_WINDOW_ROWS;
    st = read_window(path, band, NULL, nx, y0, h, dst + (size_t)y0 * (size_t)nx, NULL);
  }
  return st;
}

/* Refuses complex bands: a height has no imaginary part. */
static talus_status check_real(const char *path, GDALRasterBandH band, int b) {
  GDALDataType t = GDALGetRasterDataType(band);
  if (GDALDataTypeIsComplex(t))
    return talus_fail(TALUS_ERR_FORMAT, "io", "band %d of '%s' is complex (%s), not heights", b,
                      path, GDALGetDataTypeName(t));
  return TALUS_OK;
}

/* Loads heights and the NoData mask (1 = NoData) of band 1, window by
 * window. The mask comes from GDAL's mask band, which compares with the
 * NoData value in the band's own type (NaN NoData included) and honours
 * explicit mask and alpha bands. */
static talus_status dem_load(const char *path, GDALDatasetH ds, const talus_dem_options *o,
                             talus_dem *d) {
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  d->nx = GDALGetRasterXSize(ds);
  d->ny = GDALGetRasterYSize(ds);
  talus_status st = talus_raster_check_size(path, d->nx, d->ny, o->max_cells);
  if (st == TALUS_OK) st = check_real(path, band, 1);
  size_t n = (size_t)d->nx * (size_t)d->ny;
  if (st == TALUS_OK) st = talus_alloc((void **)&d->height, n * sizeof(float), "DEM heights");
  if (st == TALUS_OK) st = talus_alloc((void **)&d->nodata, n, "DEM NoData mask");
  if (st == TALUS_OK) st = talus_georef_from(ds, band, &d->geo);
  if (st != TALUS_OK) return st;
  int masked = GDALGetMaskFlags(band) != GMF_ALL_VALID;
  GDALRasterBandH mask = GDALGetMaskBand(band);
  for (int y0 = 0; st == TALUS_OK && y0 < d->ny; y0 += TALUS_RASTER_WINDOW_ROWS) {
    int h = d->ny - y0 < TALUS_RASTER_WINDOW_ROWS ? d->ny - y0 : TALUS_RASTER_WINDOW_ROWS;
    size_t off = (size_t)y0 * (size_t)d->nx;
    st = read_window(path, band, mask, d->nx, y0, h, d->height + off,
                     masked ? d->nodata + off : NULL);
  }
  /* The mask band says 0 = invalid; talus says 1 = NoData. */
  for (size_t i = 0; masked && i < n; i++)
    d->nodata[i] = d->nodata[i] == 0;
  return st;
}

/* Counts NoData cells and refuses NaN/Inf heights that are not NoData and
 * rasters with no valid cell. */
static talus_status dem_classify(const char *path, talus_dem *d) {
  size_t n = (size_t)d->nx * (size_t)d->ny;
  int64_t bad = 0, first = -1;
  d->nodata_cells = 0;
  for (size_t i = 0; i < n; i++) {
    if (d->nodata[i])
      d->nodata_cells++;
    else if (!isfinite(d->height[i]) && bad++ == 0)
      first = (int64_t)i;
  }
  if (bad)
    return talus_fail(
        TALUS_ERR_DATA, "io",
        "'%s': %lld height%s NaN or infinite but not NoData (first at column %lld, "
        "row %lld); declare them NoData, e.g. gdal_translate -a_nodata nan in out.tif",
        path, (long long)bad, bad == 1 ? " is" : "s are", (long long)(first % d->nx),
        (long long)(first / d->nx));
  if ((size_t)d->nodata_cells == n)
    return talus_fail(TALUS_ERR_DATA, "io", "'%s': all %lld cells are NoData", path,
                      (long long)d->nodata_cells);
  return TALUS_OK;
}

/* Multiplies valid heights by z_scale (1 leaves them untouched). */
static void dem_scale(talus_dem *d, double z_scale) {
  if (z_scale == 1.0) return;
  size_t n = (size_t)d->nx * (size_t)d->ny;
  for (size_t i = 0; i < n; i++)
    if (!d->nodata[i]) d->height[i] = (float)((double)d->height[i] * z_scale);
}

/* OUTFLOW / WALL: masked heights become the minimum valid height, so no
 * sentinel or NaN reaches kernels or outputs. */
static void dem_flatten_masked(talus_dem *d) {
  size_t n = (size_t)d->nx * (size_t)d->ny;
  float lo = INFINITY;
  for (size_t i = 0; i < n; i++)
    if (!d->nodata[i] && d->height[i] < lo) lo = d->height[i];
  for (size_t i = 0; i < n; i++)
    if (d->nodata[i]) d->height[i] = lo;
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

/* Applies z scale, the NoData policy and the cell size. */
static talus_status dem_finish(const char *path, const talus_dem_options *o, talus_dem *d) {
  dem_scale(d, o->z_scale);
  talus_status st = TALUS_OK;
  if (d->nodata_cells && o->nodata_policy == TALUS_NODATA_FILL)
    st = dem_fill(d);
  else if (d->nodata_cells)
    dem_flatten_masked(d);
  if (st == TALUS_OK && d->nodata_cells == 0) {
    talus_free(d->nodata);
    d->nodata = NULL;
  }
  if (st != TALUS_OK || o->cell_size > 0.0) {
    d->cell_size = o->cell_size;
    return st;
  }
  talus_cellsize c;
  st = talus_cellsize_of(&d->geo, d->nx, d->ny, &c);
  if (st != TALUS_OK) return talus_fail_context(st, "'%s'", path);
  warn_cellsize(path, &c);
  d->cell_size = c.cell;
  return TALUS_OK;
}

/* Fills defaults into a copy of the caller's options and validates them. */
static talus_status dem_options(const talus_dem_options *opt, talus_dem_options *o) {
  memset(o, 0, sizeof *o);
  if (opt) *o = *opt;
  if (o->z_scale == 0.0) o->z_scale = 1.0;
  if (!isfinite(o->z_scale))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "z scale must be finite (got %g)", o->z_scale);
  if (!(o->cell_size >= 0.0) || !isfinite(o->cell_size))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "cell size must be > 0 (got %g)", o->cell_size);
  if (o->nodata_policy < TALUS_NODATA_OUTFLOW || o->nodata_policy > TALUS_NODATA_FILL)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "unknown NoData policy %d", o->nodata_policy);
  return TALUS_OK;
}

talus_status talus_dem_read(const char *path, const talus_dem_options *opt, talus_dem *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "dem read: NULL output");
  memset(out, 0, sizeof *out);
  talus_dem_options o;
  talus_status st = dem_options(opt, &o);
  if (st != TALUS_OK) return st;
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  st = talus_raster_open(path, &ds);
  if (st == TALUS_OK) st = dem_load(path, ds, &o, out);
  if (ds) GDALClose(ds);
  if (st == TALUS_OK) st = dem_classify(path, out);
  if (st == TALUS_OK) st = dem_finish(path, &o, out);
  talus_gdal_leave();
  if (st != TALUS_OK) talus_dem_free(out);
  return st;
}

void talus_dem_free(talus_dem *d) {
  if (!d) return;
  talus_free(d->height);
  talus_free(d->nodata);
  talus_georef_free(&d->geo);
  memset(d, 0, sizeof *d);
}

/* Allocates the per-band arrays and reads every band with its description. */
static talus_status bands_load(const char *path, GDALDatasetH ds, talus_bands *b) {
  b->nx = GDALGetRasterXSize(ds);
  b->ny = GDALGetRasterYSize(ds);
  b->nbands = GDALGetRasterCount(ds);
  talus_status st = talus_raster_check_size(path, b->nx, b->ny, 0);
  b->band = calloc((size_t)b->nbands, sizeof *b->band);
  b->name = calloc((size_t)b->nbands, sizeof *b->name);
  if (st == TALUS_OK && (!b->band || !b->name))
    st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot allocate %d bands", b->nbands);
  size_t n = (size_t)b->nx * (size_t)b->ny;
  for (int k = 0; st == TALUS_OK && k < b->nbands; k++) {
    GDALRasterBandH band = GDALGetRasterBand(ds, k + 1);
    const char *desc = GDALGetDescription(band);
    st = check_real(path, band, k + 1);
    if (st == TALUS_OK && !(b->name[k] = strdup(desc ? desc : "")))
      st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot copy a band name");
    if (st == TALUS_OK) st = talus_alloc((void **)&b->band[k], n * sizeof(float), "raster band");
    if (st == TALUS_OK) st = talus_band_read(path, band, b->nx, b->ny, b->band[k]);
  }
  if (st == TALUS_OK) st = talus_georef_from(ds, GDALGetRasterBand(ds, 1), &b->geo);
  if (st == TALUS_OK) b->metadata = CSLDuplicate(GDALGetMetadata(ds, NULL));
  return st;
}

talus_status talus_bands_read(const char *path, talus_bands *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "bands read: NULL output");
  memset(out, 0, sizeof *out);
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  talus_status st = talus_raster_open(path, &ds);
  if (st == TALUS_OK) st = bands_load(path, ds, out);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
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
