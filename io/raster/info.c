/*
 * info.c — `talus info`: a raster's size, georeferencing, metric cell size,
 * band statistics (scanned window by window) and talus state metadata.
 */
#include "io/raster/raster_private.h"

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

/* Prints everything about an open dataset. */
static talus_status info_print(const char *path, GDALDatasetH ds, FILE *to) {
  int nx = GDALGetRasterXSize(ds), ny = GDALGetRasterYSize(ds);
  GDALRasterBandH band = GDALGetRasterBand(ds, 1);
  talus_georef g;
  talus_cellsize c;
  band_stats s;
  talus_status st = talus_georef_from(ds, band, &g);
  if (st == TALUS_OK) st = talus_cellsize_of(&g, nx, ny, &c);
  if (st == TALUS_OK) st = scan_band(path, band, nx, ny, &s);
  if (st == TALUS_OK) {
    GDALDriverH drv = GDALGetDatasetDriver(ds);
    fprintf(to, "file:         %s\n", path);
    fprintf(to, "driver:       %s (%s)\n", GDALGetDriverShortName(drv), GDALGetDriverLongName(drv));
    fprintf(to, "size:         %d x %d (%lld cells), %d band%s\n", nx, ny,
            (long long)nx * (long long)ny, GDALGetRasterCount(ds),
            GDALGetRasterCount(ds) == 1 ? "" : "s");
    fprintf(to, "type:         %s\n", GDALGetDataTypeName(GDALGetRasterDataType(band)));
    info_georef(to, &g, &c);
    info_stats(to, &g, &s, (int64_t)nx * ny);
    info_bands_meta(to, ds);
  }
  talus_georef_free(&g);
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
