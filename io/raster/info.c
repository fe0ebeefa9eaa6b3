/*
 * info.c — `talus info`: a raster's size, georeferencing, metric cell size,
 * band statistics (scanned window by window) and talus state metadata.
 */
#include "io/raster/raster_private.h"
#include "io/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct band_stats {
  int64_t nodata, nonfinite;
  double min, max;
} band_stats;

/* Scans band 1 window by window with its mask band: NoData count, cells
 * that are NaN/Inf without being NoData, and min/max of the valid cells. */
static talus_status scan_band(const char *path, GDALRasterBandH band, int nx, int ny,
                              band_stats *s) {
  s->nodata = s->nonfinite = 0;
  s->min = INFINITY;
  s->max = -INFINITY;
  int rows = TALUS_RASTER_WINDOW_ROWS < ny ? TALUS_RASTER_WINDOW_ROWS : ny;
  size_t n = (size_t)nx * (size_t)rows;
  float *v = malloc(n * sizeof *v);
  uint8_t *m = malloc(n);
  talus_status st = (v && m) ? TALUS_OK : talus_fail(TALUS_ERR_NOMEM, "io", "info: no memory");
  int all_valid = GDALGetMaskFlags(band) == GMF_ALL_VALID;
  GDALRasterBandH mask = GDALGetMaskBand(band);
  for (int y0 = 0; st == TALUS_OK && y0 < ny; y0 += rows) {
    int h = ny - y0 < rows ? ny - y0 : rows;
    if (GDALRasterIO(band, GF_Read, 0, y0, nx, h, v, nx, h, GDT_Float32, 0, 0) != CE_None ||
        (!all_valid &&
         GDALRasterIO(mask, GF_Read, 0, y0, nx, h, m, nx, h, GDT_Byte, 0, 0) != CE_None))
      st = talus_gdal_fail(TALUS_ERR_IO, "cannot read rows %d..%d of '%s'", y0, y0 + h - 1, path);
    for (size_t i = 0; st == TALUS_OK && i < (size_t)nx * (size_t)h; i++) {
      if (!all_valid && m[i] == 0)
        s->nodata++;
      else if (!isfinite(v[i]))
        s->nonfinite++;
      else {
        s->min = v[i] < s->min ? v[i] : s->min;
        s->max = v[i] > s->max ? v[i] : s->max;
      }
    }
  }
  free(v);
  free(m);
  return st;
}

/* Prints the CRS, geotransform and metric cell size lines. */
static void info_georef(FILE *to, const talus_georef *g, const talus_cellsize *c) {
  static const char *const kinds[] = {"", "projected", "geographic"};
  if (c->crs_name[0])
    fprintf(to, "crs:          %s, %s\n", c->crs_name, kinds[c->kind]);
  else
    fprintf(to, "crs:          none\n");
  if (!c->has_gt) {
    fprintf(to, "geotransform: none\ncell size:    1 m (assumed)\n");
    return;
  }
  fprintf(to, "origin:       %.10g, %.10g\n", g->gt[0], g->gt[3]);
  fprintf(to, "pixel size:   %.10g, %.10g\n", g->gt[1], g->gt[5]);
  if (g->gt[2] != 0.0 || g->gt[4] != 0.0)
    fprintf(to, "rotation:     %.10g, %.10g\n", g->gt[2], g->gt[4]);
  if (c->kind == TALUS_CRS_GEOGRAPHIC)
    fprintf(to, "cell size:    %.4f m (dx %.4f m, dy %.4f m at latitude %.4f; UTM EPSG:%d)\n",
            c->cell, c->dx, c->dy, c->lat, c->utm_epsg);
  else if (c->dx != c->dy)
    fprintf(to, "cell size:    %.6g m (dx %.6g m, dy %.6g m)\n", c->cell, c->dx, c->dy);
  else
    fprintf(to, "cell size:    %.6g m%s\n", c->cell,
            c->kind ? "" : " (no CRS: units assumed metres)");
}

/* Prints NoData and value statistics of band 1. */
static void info_stats(FILE *to, const talus_georef *g, const band_stats *s, int64_t cells) {
  if (g->has_nodata)
    fprintf(to, "nodata:       %.10g (%lld cells, %.1f %%)\n", g->nodata, (long long)s->nodata,
            100.0 * (double)s->nodata / (double)cells);
  else if (s->nodata)
    fprintf(to, "nodata:       mask band (%lld cells)\n", (long long)s->nodata);
  else
    fprintf(to, "nodata:       none\n");
  if (s->nonfinite)
    fprintf(to, "non-finite:   %lld cells (NaN/Inf, not NoData)\n", (long long)s->nonfinite);
  if (s->min <= s->max)
    fprintf(to, "min / max:    %.10g / %.10g\n", s->min, s->max);
  else
    fprintf(to, "min / max:    no valid cells\n");
}

/* Prints band descriptions and TALUS_* metadata items. */
static void info_bands_meta(FILE *to, GDALDatasetH ds) {
  int nb = GDALGetRasterCount(ds);
  for (int b = 1; b <= nb; b++) {
    GDALRasterBandH band = GDALGetRasterBand(ds, b);
    const char *d = GDALGetDescription(band);
    fprintf(to, "band %d:       %s%s%s\n", b, GDALGetDataTypeName(GDALGetRasterDataType(band)),
            d && d[0] ? " " : "", d ? d : "");
  }
  char **md = GDALGetMetadata(ds, NULL);
  for (int i = 0; md && md[i]; i++)
    if (strncmp(md[i], "TALUS_", 6) == 0) fprintf(to, "metadata:     %s\n", md[i]);
}

/* What `talus info` reports about an open dataset, gathered once for
 * both the text and the JSON forms. */
typedef struct info_facts {
  int nx, ny;
  talus_georef g;
  talus_cellsize c;
  band_stats s;
} info_facts;

/* Fills f from ds (f->g is the caller's to free, also on failure). */
static talus_status info_gather(const char *path, GDALDatasetH ds, info_facts *f) {
  f->nx = GDALGetRasterXSize(ds), f->ny = GDALGetRasterYSize(ds);
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  talus_status st = talus_georef_from(ds, band, &f->g);
  if (st == TALUS_OK) st = talus_cellsize_of(&f->g, f->nx, f->ny, &f->c);
  if (st == TALUS_OK) st = scan_band(path, band, f->nx, f->ny, &f->s);
  return st;
}

/* Prints everything about an open dataset. */
static talus_status info_print(const char *path, GDALDatasetH ds, FILE *to) {
  info_facts f = {0};
  talus_status st = info_gather(path, ds, &f);
  if (st == TALUS_OK) {
    GDALRasterBandH band = GDALGetRasterBand(ds, 1);
    GDALDriverH drv = GDALGetDatasetDriver(ds);
    fprintf(to, "file:         %s\n", path);
    fprintf(to, "driver:       %s (%s)\n", GDALGetDriverShortName(drv), GDALGetDriverLongName(drv));
    fprintf(to, "size:         %d x %d (%lld cells), %d band%s\n", f.nx, f.ny,
            (long long)f.nx * (long long)f.ny, GDALGetRasterCount(ds),
            GDALGetRasterCount(ds) == 1 ? "" : "s");
    fprintf(to, "type:         %s\n", GDALGetDataTypeName(GDALGetRasterDataType(band)));
    info_georef(to, &f.g, &f.c);
    info_stats(to, &f.g, &f.s, (int64_t)f.nx * f.ny);
    info_bands_meta(to, ds);
  }
  talus_georef_free(&f.g);
  return st;
}

/* The georeferencing members of the JSON form into o. */
static talus_status info_json_georef(talus_json *o, const info_facts *f) {
  static const char *const kinds[] = {"none", "projected", "geographic"};
  talus_status st = talus_json_set(o, "crs", talus_json_string(f->c.crs_name));
  if (!st) st = talus_json_set(o, "crs_kind", talus_json_string(kinds[f->c.kind]));
  talus_json *gt = f->c.has_gt ? talus_json_array() : NULL;
  for (int i = 0; gt && !st && i < 6; i++)
    st = talus_json_push(gt, talus_json_real(f->g.gt[i], NULL));
  if (!st && gt) st = talus_json_set(o, "geotransform", gt);
  if (!st) st = talus_json_set(o, "cell_size_m", talus_json_real(f->c.cell, NULL));
  if (!st) st = talus_json_set(o, "dx_m", talus_json_real(f->c.dx, NULL));
  if (!st) st = talus_json_set(o, "dy_m", talus_json_real(f->c.dy, NULL));
  if (!st && f->c.kind == TALUS_CRS_GEOGRAPHIC)
    st = talus_json_set(o, "utm_epsg", talus_json_int(f->c.utm_epsg));
  return st;
}

/* Band 1's NoData and statistics members of the JSON form into o. */
static talus_status info_json_stats(talus_json *o, const info_facts *f) {
  talus_json *nodata = f->g.has_nodata ? talus_json_real(f->g.nodata, NULL) : talus_json_bool(0);
  talus_status st = talus_json_set(o, "nodata", nodata);
  if (!st) st = talus_json_set(o, "nodata_cells", talus_json_int(f->s.nodata));
  if (!st) st = talus_json_set(o, "nonfinite_cells", talus_json_int(f->s.nonfinite));
  int valid = f->s.min <= f->s.max; /* NaN is written as null */
  if (!st) st = talus_json_set(o, "min", talus_json_real(valid ? f->s.min : NAN, NULL));
  if (!st) st = talus_json_set(o, "max", talus_json_real(valid ? f->s.max : NAN, NULL));
  return st;
}

/* The bands (type, description) and TALUS_* metadata members into o. */
static talus_status info_json_bands(talus_json *o, GDALDatasetH ds) {
  talus_json *bands = talus_json_array(), *meta = talus_json_object();
  talus_status st = bands && meta ? TALUS_OK : TALUS_ERR_NOMEM;
  for (int b = 1; !st && b <= GDALGetRasterCount(ds); b++) {
    GDALRasterBandH band = GDALGetRasterBand(ds, b);
    talus_json *e = talus_json_object();
    st = talus_json_set(e, "type",
                        talus_json_string(GDALGetDataTypeName(GDALGetRasterDataType(band))));
    if (!st) st = talus_json_set(e, "description", talus_json_string(GDALGetDescription(band)));
    st = st ? (talus_json_free(e), st) : talus_json_push(bands, e);
  }
  char **md = GDALGetMetadata(ds, NULL);
  for (int i = 0; !st && md && md[i]; i++) {
    const char *eq = strchr(md[i], '=');
    if (strncmp(md[i], "TALUS_", 6) || !eq) continue;
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - md[i]), md[i]);
    st = talus_json_set(meta, key, talus_json_string(eq + 1));
  }
  talus_status sb = talus_json_set(o, "bands", bands);
  talus_status sm = talus_json_set(o, "metadata", meta);
  return st ? st : sb ? sb : sm;
}

/* The JSON form of `talus info` for an open dataset into *out. */
static talus_status info_json(const char *path, GDALDatasetH ds, talus_json **out) {
  info_facts f = {0};
  talus_json *o = talus_json_object();
  talus_status st = o ? info_gather(path, ds, &f) : TALUS_ERR_NOMEM;
  GDALDriverH drv = GDALGetDatasetDriver(ds);
  if (!st) st = talus_json_set(o, "file", talus_json_string(path));
  if (!st) st = talus_json_set(o, "driver", talus_json_string(GDALGetDriverShortName(drv)));
  if (!st) st = talus_json_set(o, "width", talus_json_int(f.nx));
  if (!st) st = talus_json_set(o, "height", talus_json_int(f.ny));
  if (!st) st = info_json_georef(o, &f);
  if (!st) st = info_json_stats(o, &f);
  if (!st) st = info_json_bands(o, ds);
  talus_georef_free(&f.g);
  if (st) talus_json_free(o);
  *out = st ? NULL : o;
  if (st == TALUS_ERR_NOMEM) talus_fail(st, "io", "info: no memory");
  return st;
}

talus_status talus_raster_info_json(const char *path, FILE *to) {
  if (!to) return talus_fail(TALUS_ERR_ARGUMENT, "io", "info: no output stream");
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  talus_json *doc = NULL;
  talus_status st = talus_raster_open(path, &ds);
  if (st == TALUS_OK)
    st = talus_raster_check_size(path, GDALGetRasterXSize(ds), GDALGetRasterYSize(ds), INT64_MAX);
  if (st == TALUS_OK) st = info_json(path, ds, &doc);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  if (st == TALUS_OK) st = talus_json_write(doc, to, 0);
  if (st == TALUS_OK) fputc('\n', to);
  talus_json_free(doc);
  return st;
}

talus_status talus_raster_info(const char *path, FILE *to) {
  if (!to) return talus_fail(TALUS_ERR_ARGUMENT, "io", "info: no output stream");
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  talus_status st = talus_raster_open(path, &ds);
  if (st == TALUS_OK)
    st = talus_raster_check_size(path, GDALGetRasterXSize(ds), GDALGetRasterYSize(ds), INT64_MAX);
  if (st == TALUS_OK) st = info_print(path, ds, to);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  return st;
}

talus_status talus_raster_cell_size(const char *path, double *cell) {
  talus_gdal_enter();
  GDALDatasetH ds = NULL;
  talus_georef g = {0};
  talus_cellsize c;
  talus_status st = talus_raster_open(path, &ds);
  if (st == TALUS_OK) st = talus_georef_from(ds, GDALGetRasterBand(ds, 1), &g);
  if (st == TALUS_OK)
    st = talus_cellsize_of(&g, GDALGetRasterXSize(ds), GDALGetRasterYSize(ds), &c);
  if (st == TALUS_OK) *cell = c.cell;
  talus_georef_free(&g);
  if (ds) GDALClose(ds);
  talus_gdal_leave();
  return st;
}
