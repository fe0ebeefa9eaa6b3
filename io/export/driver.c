/*
 * driver.c — raster outputs in any GDAL driver (driver.h): the driver
 * checks, the temporary rows GeoTIFF and the copy into the driver's file.
 */
#include "io/export/driver.h"
#include "io/raster/raster_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct talus_export_rows {
  const char *path;
  char *tmp, *sized; /* the rows file; the resampled one (talus_export_rows_resize) */
  GDALDatasetH ds;
  int nx, ny, nbands;
  int W, H; /* the output's size; 0: the rows' */
  GDALRIOResampleAlg alg;
};

/* 1 when the space-separated list `list` holds word w. */
static int driver_lists(const char *list, const char *w) {
  size_t n = strlen(w);
  for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

talus_status talus_export_driver_check(const char *driver, const char *type) {
  talus_gdal_enter();
  GDALDriverH d = driver ? GDALGetDriverByName(driver) : NULL;
  const char *types = d ? GDALGetMetadataItem(d, GDAL_DMD_CREATIONDATATYPES, NULL) : NULL;
  talus_status st = TALUS_OK;
  if (!d)
    st = talus_fail(TALUS_ERR_ARGUMENT, "export",
                    "unknown GDAL driver '%s' (`gdalinfo --formats` lists them)",
                    driver ? driver : "");
  else if (!GDALGetMetadataItem(d, GDAL_DCAP_RASTER, NULL))
    st = talus_fail(TALUS_ERR_ARGUMENT, "export", "GDAL driver '%s' writes no rasters", driver);
  else if (!GDALGetMetadataItem(d, GDAL_DCAP_CREATE, NULL) &&
           !GDALGetMetadataItem(d, GDAL_DCAP_CREATECOPY, NULL))
    st = talus_fail(TALUS_ERR_ARGUMENT, "export",
                    "GDAL driver '%s' cannot create files (it only reads)", driver);
  else if (types && *types && !driver_lists(types, type))
    st = talus_fail(TALUS_ERR_ARGUMENT, "export",
                    "GDAL driver '%s' cannot write %s bands (it writes: %s)", driver, type, types);
  talus_gdal_leave();
  return st;
}

/* Frees r's rows file and memory. */
static void rows_free(talus_export_rows *r) {
  if (r->ds) GDALClose(r->ds);
  if (r->tmp) unlink(r->tmp);
  if (r->sized) unlink(r->sized);
  free(r->tmp);
  free(r->sized);
  free(r);
}

talus_status talus_export_rows_resize(talus_export_rows *r, int W, int H, const char *resampling) {
  if (!talus_resampling_of(resampling, &r->alg))
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "unknown resampling '%s' (%s)", resampling,
                      TALUS_RESAMPLING_NAMES);
  size_t len = strlen(r->path) + sizeof ".size.tif";
  if (!(r->sized = malloc(len))) return talus_fail(TALUS_ERR_NOMEM, "export", "out of memory");
  snprintf(r->sized, len, "%s.size.tif", r->path);
  r->W = W, r->H = H;
  return TALUS_OK;
}

/* The rows' description, units, colours, NoData, metadata and georef,
 * scaled to W × H samples, onto dataset d. */
static void rows_describe(const talus_export_rows *r, GDALDatasetH d) {
  double gt[6];
  if (GDALGetGeoTransform(r->ds, gt) == CE_None) {
    double fx = (double)r->nx / r->W, fy = (double)r->ny / r->H;
    gt[1] *= fx, gt[4] *= fx, gt[2] *= fy, gt[5] *= fy;
    GDALSetGeoTransform(d, gt);
  }
  const char *wkt = GDALGetProjectionRef(r->ds);
  if (wkt && *wkt) GDALSetProjection(d, wkt);
  GDALSetMetadata(d, GDALGetMetadata(r->ds, NULL), NULL);
  for (int b = 1; b <= r->nbands; b++) {
    GDALRasterBandH s = GDALGetRasterBand(r->ds, b), t = GDALGetRasterBand(d, b);
    int has = 0;
    double nd = GDALGetRasterNoDataValue(s, &has);
    GDALSetDescription(t, GDALGetDescription(s));
    GDALSetRasterUnitType(t, GDALGetRasterUnitType(s));
    GDALSetRasterColorInterpretation(t, GDALGetRasterColorInterpretation(s));
    if (has) GDALSetRasterNoDataValue(t, nd);
  }
}

/* Resamples the rows into the W × H file (r->sized), window by window,
 * rounding codes (integer bands) to the nearest. */
static talus_status rows_resample(talus_export_rows *r) {
  GDALDataType type = GDALGetRasterDataType(GDALGetRasterBand(r->ds, 1));
  const char *co[] = {"TILED=YES", "COMPRESS=ZSTD", "BIGTIFF=IF_SAFER", NULL};
  GDALDatasetH d =
      GDALCreate(GDALGetDriverByName("GTiff"), r->sized, r->W, r->H, r->nbands, type, (char **)co);
  float *v = d ? malloc((size_t)r->W * TALUS_RASTER_WINDOW_ROWS * sizeof *v) : NULL;
  talus_status st = v ? TALUS_OK : talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'", r->path);
  if (d) rows_describe(r, d);
  GDALFlushCache(r->ds);
  for (int b = 1; b <= r->nbands && !st; b++)
    for (int y0 = 0; y0 < r->H && !st; y0 += TALUS_RASTER_WINDOW_ROWS) {
      int h = r->H - y0 < TALUS_RASTER_WINDOW_ROWS ? r->H - y0 : TALUS_RASTER_WINDOW_ROWS;
      st = talus_band_rows_resampled(r->tmp, GDALGetRasterBand(r->ds, b), r->nx, r->ny, r->W, r->H,
                                     r->alg, y0, h, v);
      for (size_t i = 0; !st && type != GDT_Float32 && i < (size_t)r->W * h; i++)
        v[i] = floorf(v[i] + 0.5f);
      if (!st && GDALRasterIO(GDALGetRasterBand(d, b), GF_Write, 0, y0, r->W, h, v, r->W, h,
                              GDT_Float32, 0, 0) != CE_None)
        st = talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'%s", r->path,
                             talus_disk_full_hint(r->path));
    }
  free(v);
  if (!st) {
    GDALClose(r->ds);
    r->ds = d;
    d = NULL;
  }
  if (d) GDALClose(d);
  return st;
}

talus_status talus_export_rows_open(const char *path, int nx, int ny, int nbands,
                                    talus_export_type type, const talus_georef *geo,
                                    talus_export_rows **out) {
  *out = NULL;
  talus_export_rows *r = calloc(1, sizeof *r);
  size_t len = strlen(path) + sizeof ".rows.tif";
  if (!r || !(r->tmp = malloc(len))) {
    free(r);
    return talus_fail(TALUS_ERR_NOMEM, "export", "out of memory");
  }
  r->path = path, r->nx = nx, r->ny = ny, r->nbands = nbands;
  snprintf(r->tmp, len, "%s.rows.tif", path);
  static const GDALDataType gt[] = {GDT_Byte, GDT_UInt16, GDT_Float32};
  const char *co[] = {"TILED=YES", "COMPRESS=ZSTD", "BIGTIFF=IF_SAFER", NULL};
  GDALDriverH gtiff = GDALGetDriverByName("GTiff");
  r->ds = gtiff ? GDALCreate(gtiff, r->tmp, nx, ny, nbands, gt[type], (char **)co) : NULL;
  if (!r->ds) {
    talus_status st = talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'", path);
    rows_free(r);
    return st;
  }
  if (geo) GDALSetGeoTransform(r->ds, (double *)geo->gt);
  if (geo && geo->wkt) GDALSetProjection(r->ds, geo->wkt);
  static const GDALColorInterp rgba[] = {GCI_RedBand, GCI_GreenBand, GCI_BlueBand, GCI_AlphaBand};
  for (int b = 0; type != TALUS_EXPORT_FLOAT && nbands >= 3 && b < nbands; b++)
    GDALSetRasterColorInterpretation(GDALGetRasterBand(r->ds, b + 1), rgba[b]);
  if (type == TALUS_EXPORT_FLOAT)
    for (int b = 0; b < nbands; b++)
      GDALSetRasterNoDataValue(GDALGetRasterBand(r->ds, b + 1), NAN);
  *out = r;
  return TALUS_OK;
}

talus_status talus_export_rows_band(talus_export_rows *r, int b, const char *desc,
                                    const char *unit) {
  GDALRasterBandH band = GDALGetRasterBand(r->ds, b + 1);
  GDALSetDescription(band, desc);
  if (unit) GDALSetRasterUnitType(band, unit);
  return TALUS_OK;
}

talus_status talus_export_rows_meta(talus_export_rows *r, const char *key, const char *value) {
  return GDALSetMetadataItem(r->ds, key, value, NULL) == CE_None
             ? TALUS_OK
             : talus_gdal_fail(TALUS_ERR_IO, "cannot describe '%s'", r->path);
}

talus_status talus_export_rows_write(talus_export_rows *r, int b, int y0, int h, const float *v) {
  if (GDALRasterIO(GDALGetRasterBand(r->ds, b + 1), GF_Write, 0, y0, r->nx, h, (void *)v, r->nx, h,
                   GDT_Float32, 0, 0) != CE_None)
    return talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'%s", r->path,
                           talus_disk_full_hint(r->path));
  return TALUS_OK;
}

/* The caller's progress callback, and whether it asked to stop. */
typedef struct copy_progress {
  talus_progress_fn fn;
  void *user;
  int stopped;
} copy_progress;

static int copy_progress_cb(double complete, const char *message, void *user) {
  copy_progress *p = user;
  if (!p->stopped && p->fn && !p->fn(complete, message, p->user)) p->stopped = 1;
  return !p->stopped;
}

/* Copies dataset src into driver's file `path` under a partial name,
 * renamed into place when the copy succeeded (else removed). */
static talus_status copy_dataset(GDALDatasetH src, const char *path, const char *driver,
                                 const char *const *co, talus_progress_fn progress, void *user) {
  char *partial = NULL;
  talus_status st = talus_partial_begin(path, &partial);
  if (st) return st;
  GDALFlushCache(src);
  CPLErrorReset();
  char *keep = talus_gdal_siblings_hide();
  copy_progress cp = {progress, user, 0};
  GDALDatasetH out = GDALCreateCopy(GDALGetDriverByName(driver), partial, src, FALSE, (char **)co,
                                    copy_progress_cb, &cp);
  int failed = !out;
  if (out) GDALClose(out);
  talus_gdal_siblings_restore(keep);
  if (cp.stopped) /* a driver may finish regardless: the file is still not wanted */
    st =
        talus_fail(TALUS_ERR_CANCELLED, "export", "writing '%s' as %s was cancelled", path, driver);
  else if (failed || CPLGetLastErrorType() >= CE_Failure)
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s' as %s%s", path, driver,
                         talus_disk_full_hint(path));
  talus_status end = talus_partial_end(path, partial, !st);
  return st ? st : end;
}

/* Copies the rows file into driver's file under a partial name. */
static talus_status rows_copy(talus_export_rows *r, const char *driver, const char *const *co) {
  return copy_dataset(r->ds, r->path, driver, co, NULL, NULL);
}

talus_status talus_export_copy_file(const char *src, const char *path, const char *driver,
                                    const char *const *co, talus_progress_fn progress, void *user) {
  talus_gdal_enter();
  char *keep = talus_gdal_siblings_hide();
  GDALDatasetH ds = GDALOpenEx(src, GDAL_OF_RASTER | GDAL_OF_READONLY, NULL, NULL, NULL);
  talus_status st =
      ds ? copy_dataset(ds, path, driver, co, progress, user)
         : talus_gdal_fail(TALUS_ERR_IO, "cannot read '%s' to write '%s' as %s", src, path, driver);
  if (ds) GDALClose(ds);
  talus_gdal_siblings_restore(keep);
  talus_gdal_leave();
  return st;
}

/* Copies the t × u window at (x0, y0) of the rows into driver's file
 * `path` under a partial name. */
static talus_status rows_copy_window(talus_export_rows *r, int x0, int y0, int t, int u,
                                     const char *path, const char *driver, const char *const *co) {
  GDALDatasetH win = NULL;
  talus_status st = talus_gdal_window(r->ds, x0, y0, t, u, &win);
  if (!st) st = copy_dataset(win, path, driver, co, NULL, NULL);
  if (win) GDALClose(win);
  return st;
}

talus_status talus_export_grid_split(const talus_export_grid *g, int W, int H, int *t, int *u) {
  *t = (W - 1) % g->cols ? 0 : (W - 1) / g->cols + 1;
  *u = (H - 1) % g->rows ? 0 : (H - 1) / g->rows + 1;
  if (*t >= 2 && *u >= 2) return TALUS_OK;
  return talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "--tiles %dx%d: %d x %d samples do not split into tiles sharing their edges; "
                    "use --size C*(t-1)+1, e.g. %d",
                    g->cols, g->rows, W, H, g->cols * 1008 + 1);
}

talus_status talus_export_rows_close_grid(talus_export_rows *r, talus_status st, const char *driver,
                                          const char *const *co, const talus_export_grid *g) {
  if (!r) return st;
  talus_gdal_enter();
  if (!st && r->W) st = rows_resample(r);
  int t = 0, u = 0, done = 0;
  if (!st) st = talus_export_grid_split(g, r->W ? r->W : r->nx, r->W ? r->H : r->ny, &t, &u);
  char path[4096];
  for (int j = 0; !st && j < g->rows; j++)
    for (int i = 0; !st && i < g->cols; i++, done++) {
      g->path_of(g->user, i, j, path, sizeof path);
      st = rows_copy_window(r, i * (t - 1), j * (u - 1), t, u, path, driver, co);
    }
  for (int k = 0; st && k < done; k++) { /* all tiles or none */
    g->path_of(g->user, k % g->cols, k / g->cols, path, sizeof path);
    remove(path);
  }
  rows_free(r);
  talus_gdal_leave();
  return st;
}

talus_status talus_export_rows_close(talus_export_rows *r, talus_status st, const char *driver,
                                     const char *const *co) {
  if (!r) return st;
  talus_gdal_enter();
  if (!st && r->W) st = rows_resample(r);
  if (!st) st = rows_copy(r, driver, co);
  rows_free(r);
  talus_gdal_leave();
  return st;
}
