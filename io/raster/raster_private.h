/*
 * raster_private.h — the GDAL-facing helpers of the raster family
 * (the .c files of io/raster), also used by io/export, which writes through the same
 * partial-file rule. Not for modules outside io/: they see GDAL only
 * through raster.h's talus types.
 */
#ifndef TALUS_IO_RASTER_PRIVATE_H
#define TALUS_IO_RASTER_PRIVATE_H

#include "io/raster/raster.h"

#include <gdal.h>

/* Registers the GDAL drivers (once), pushes the quiet error handler and
 * clears GDAL's last error. Every public call pairs it with leave. */
void talus_gdal_enter(void);
void talus_gdal_leave(void);
/* The one place GDAL errors become talus errors: formats the message,
 * appends GDAL's last error message (if any) and records it for module
 * "io". Returns status. */
talus_status talus_gdal_fail(talus_status status, const char *fmt, ...) TALUS_PRINTF(2, 3);
/* ": the disk holding DIR is full" when the file system that path (a file
 * being written) lies on has less than 1 MiB left for us, else "": write
 * errors from GDAL rarely say why. The text lives until the next call in
 * this thread. */
const char *talus_disk_full_hint(const char *path);

/* Opens path read-only as a raster with at least one band, mapping failures
 * to IO (missing/unreadable), DATA (dimensions GDAL refuses) or FORMAT. */
talus_status talus_raster_open(const char *path, GDALDatasetH *out);
/* Refuses 0-sized rasters and those over max_cells (0 = default). */
talus_status talus_raster_check_size(const char *path, int nx, int ny, int64_t max_cells);
/* Fills g from the dataset and band (NULL band: no NoData). */
talus_status talus_georef_from(GDALDatasetH ds, GDALRasterBandH band, talus_georef *g);
/* TALUS_ERR_ARGUMENT naming `what` unless window (x0, y0, w, h) is non-empty
 * and inside nx × ny. */
talus_status talus_window_check(const char *what, int nx, int ny, int x0, int y0, int w, int h);
/* Reads window (x0, y0, w, h) of band as `type` (Float32 or Byte) into dst
 * (rows `pitch` cells apart), at most TALUS_RASTER_WINDOW_ROWS rows per
 * RasterIO call. */
talus_status talus_band_window(const char *path, GDALRasterBandH band, GDALDataType type, int x0,
                               int y0, int w, int h, void *dst, size_t pitch);
/* Reads rows [y0, y0 + h) of a W × H resampling of band (sx × sy cells,
 * of path) into dst (W × h floats): GDAL's kernel alg over the matching
 * fractional window of source rows (pixel-is-area: the grid covers the
 * band's extent); at the band's own size the values themselves. */
talus_status talus_band_rows_resampled(const char *path, GDALRasterBandH band, int sx, int sy,
                                       int W, int H, GDALRIOResampleAlg alg, int y0, int h,
                                       float *dst);
/* The GDAL kernel of resampling `name` (any case; NULL: bilinear), one of
 * TALUS_RESAMPLING_NAMES; 0 when unknown. */
int talus_resampling_of(const char *name, GDALRIOResampleAlg *alg);
#define TALUS_RESAMPLING_NAMES "bilinear (default), cubic, cubicspline, lanczos, average, nearest"
/* Refuses complex band b (1-based) of path: a height has no imaginary part. */
talus_status talus_band_check_real(const char *path, GDALRasterBandH band, int b);
/* Caps GDAL's block cache (see "Windowed I/O"); idempotent. */
void talus_gdal_cache_cap(void);
/* Makes GDAL see no files beside the ones it opens (this thread), until
 * talus_gdal_siblings_restore(the returned value): its metadata readers
 * take a "summary.txt" there for an ALOS scene's, and a copy then writes
 * that metadata out as "<path>.IMD" (COG, GTiff). */
char *talus_gdal_siblings_hide(void);
/* A virtual dataset (VRT in memory) of the w × h window at (x0, y0) of
 * src, bands, georeferencing and metadata kept; close it with GDALClose
 * before src. */
talus_status talus_gdal_window(GDALDatasetH src, int x0, int y0, int w, int h, GDALDatasetH *out);
void talus_gdal_siblings_restore(char *keep);
/* Validates the caller's DEM options into o, defaults filled in. */
talus_status talus_dem_options_check(const talus_dem_options *opt, talus_dem_options *o);

/* A DEM reader that loads the whole map into memory whatever its size and
 * policy (talus_dem_read). */
talus_status talus_dem_reader_open_whole(const char *path, const talus_dem_options *opt,
                                         talus_dem_reader **out);
/* Moves an in-memory reader's map and georef into *out (as talus_dem_read
 * fills it); r must still be closed. */
talus_status talus_dem_reader_take(talus_dem_reader *r, talus_dem *out);
/* Moves size, names, metadata and georef of r into *out (band stays NULL). */
void talus_bands_reader_take(talus_bands_reader *r, talus_bands *out);

/* Creates the GTiff dataset at partial (path in messages) with talus's
 * creation options over opt's, georef, band names and metadata. */
talus_status talus_gtiff_create(const char *path, const char *partial, int nx, int ny, int nbands,
                                const char *const *names, const char *const *metadata,
                                const talus_georef *geo, const talus_write_options *opt,
                                GDALDatasetH *out);
typedef enum {
  TALUS_CRS_NONE = 0,
  TALUS_CRS_PROJECTED = 1,
  TALUS_CRS_GEOGRAPHIC = 2
} talus_crs_kind;

/* Metric pixel size of a georef over nx × ny pixels. */
typedef struct talus_cellsize {
  talus_crs_kind kind;
  int has_gt;         /* 0: no geotransform, 1 m assumed */
  double dx, dy;      /* pixel size along x and y [m] */
  double cell;        /* the one cell size talus uses: sqrt(dx*dy) [m] */
  double lon, lat;    /* centre (geographic CRS only) [degrees] */
  int utm_epsg;       /* 326NN / 327NN for the centre (geographic only) */
  char crs_name[128]; /* "" when no CRS */
} talus_cellsize;

talus_status talus_cellsize_of(const talus_georef *g, int nx, int ny, talus_cellsize *out);

/* Creates the partial file name "<path>.partial" (malloc'd) after checking
 * that path's directory exists and is writable; TALUS_ERR_IO otherwise. */
talus_status talus_partial_begin(const char *path, char **partial);
/* Success: renames partial over path (with any .aux.xml sidecar). Failure
 * (ok == 0): removes partial. Frees partial. */
talus_status talus_partial_end(const char *path, char *partial, int ok);

#endif /* TALUS_IO_RASTER_PRIVATE_H */
