/*
 * driver.c — raster outputs in any GDAL driver (driver.h): the driver
 * checks, the temporary rows GeoTIFF and the copy into the driver's file.
 */
#include "io/export/driver.h"
#include "io/raster/raster_private.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct talus_export_rows {
  const char *path;
  char *tmp;
  GDALDatasetH ds;
  int nx, ny, nbands;
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
  free(r->tmp);
  free(r);
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

/* Copies the rows file into driver's file under a partial name. */
static talus_status rows_copy(talus_export_rows *r, const char *driver, const char *const *co) {
  char *partial = NULL;
  talus_status st = talus_partial_begin(r->path, &partial);
  if (st) return st;
  GDALFlushCache(r->ds);
  CPLErrorReset();
  GDALDatasetH out =
      GDALCreateCopy(GDALGetDriverByName(driver), partial, r->ds, FALSE, (char **)co, NULL, NULL);
  int failed = !out;
  if (out) GDALClose(out);
  if (failed || CPLGetLastErrorType() >= CE_Failure)
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s' as %s%s", r->path, driver,
                         talus_disk_full_hint(r->path));
  talus_status end = talus_partial_end(r->path, partial, !st);
  return st ? st : end;
}

talus_status talus_export_rows_close(talus_export_rows *r, talus_status st, const char *driver,
                                     const char *const *co) {
  if (!r) return st;
  talus_gdal_enter();
  if (!st) st = rows_copy(r, driver, co);
  rows_free(r);
  talus_gdal_leave();
  return st;
}
