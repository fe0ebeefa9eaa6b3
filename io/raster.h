/*
 * raster.h — GDAL raster input and output: read a DEM (any GDAL raster,
 * band 1) with its georeferencing and NoData mask, write float GeoTIFFs,
 * write hillshade PNG previews, read multi-band talus states back, and
 * describe a raster for `talus info`.
 *
 * Design notes
 * ------------
 * - Only the GDAL C API is used. GDAL errors become talus_fail(..., "io", ...)
 *   in one place (talus_gdal_fail in raster.c). During every call of this
 *   module a quiet CPL error handler is pushed so GDAL prints nothing itself;
 *   it is popped before the call returns.
 * - Reads are windowed (TALUS_RASTER_WINDOW_ROWS rows per RasterIO call):
 *   GDAL never converts the whole raster in one request.
 * - Writes go to "<path>.partial" in the same directory and are renamed on
 *   success; on any failure the partial file is removed, so either the whole
 *   output exists or nothing does.
 * - Cell size: talus uses one square cell size. For a projected CRS it is
 *   the pixel size in metres; when pixels are not square (and always for a
 *   geographic CRS, where a degree of longitude shrinks with cos(latitude))
 *   it is the geometric mean sqrt(dx*dy) of the two metric pixel sizes. The
 *   geometric mean keeps the cell *area* exact, so rain, volumes and the mass
 *   ledger are right; slopes along x and y are each off by the same factor
 *   sqrt(dx/dy) (instead of one axis exact and the other off by dx/dy). A
 *   warning gives dx, dy and the gdalwarp command that reprojects the input
 *   to its local UTM zone, which removes the distortion.
 */
#ifndef TALUS_IO_RASTER_H
#define TALUS_IO_RASTER_H

#include "common.h"
#include <stdint.h>
#include <stdio.h>

#define TALUS_RASTER_WINDOW_ROWS       256
#define TALUS_RASTER_DEFAULT_MAX_CELLS ((int64_t)1 << 30)
#define TALUS_EARTH_RADIUS_M           6371008.8 /* mean Earth radius (IUGG) */

/*
 * Georeferencing carried from input to outputs. gt is the GDAL geotransform;
 * all-zero pixel sizes (gt[1] == 0 or gt[5] == 0, e.g. a zeroed struct) mean
 * "no geotransform" and nothing is written. wkt is malloc'd and owned by the
 * struct (NULL = no CRS).
 */
typedef struct talus_georef {
  double gt[6];
  char *wkt;
  int has_nodata;
  double nodata; /* may be NaN */
} talus_georef;

/* Frees g->wkt and zeroes *g. NULL is a no-op. */
void talus_georef_free(talus_georef *g);
/* Deep copy of src into dst (dst is overwritten, not freed first). */
talus_status talus_georef_copy(talus_georef *dst, const talus_georef *src);

typedef struct talus_dem_options {
  int nodata_policy; /* talus_nodata_policy (kernels/state.h) */
  double cell_size;  /* > 0 overrides the raster's cell size [m], no warning */
  double z_scale;    /* heights are multiplied by this; 0 means 1 */
  int64_t max_cells; /* refuse larger rasters; 0 = TALUS_RASTER_DEFAULT_MAX_CELLS */
} talus_dem_options;

/*
 * A DEM in memory. height and nodata are allocated with talus_alloc (64-byte
 * aligned) and owned by the struct. Row 0 is the first raster row (north
 * for a north-up raster).
 * - OUTFLOW / WALL: nodata marks the NoData cells (1 = NoData) and their
 *   heights are set to the minimum valid height, so nothing odd is exported.
 * - FILL: holes are filled (filled_cells says how many), nodata is NULL and
 *   nodata_cells is 0.
 * nodata is NULL whenever nodata_cells is 0. geo.nodata is the source's
 * NoData value, to be reused for outputs.
 */
typedef struct talus_dem {
  int nx, ny;
  double cell_size; /* metres */
  float *height;
  uint8_t *nodata;
  int64_t nodata_cells;
  int64_t filled_cells;
  talus_georef geo;
} talus_dem;

/*
 * Reads band 1 of any GDAL raster (any real numeric type, converted to
 * Float32) into *out (zeroed first; freed again on failure). opt may be NULL
 * (OUTFLOW, raster cell size, z_scale 1, default max_cells). NoData cells
 * are those equal to the band's NoData value (a NaN NoData value matches
 * NaN, an infinite one matches that infinity) or masked by an explicit
 * mask band. Errors: TALUS_ERR_IO (missing/unreadable file), TALUS_ERR_FORMAT
 * (not a raster, complex band), TALUS_ERR_DATA (0 size, more than max_cells,
 * all NoData, NaN/Inf heights not declared NoData), TALUS_ERR_ARGUMENT.
 */
talus_status talus_dem_read(const char *path, const talus_dem_options *opt, talus_dem *out);
/* Frees everything a talus_dem owns and zeroes it. NULL is a no-op. */
void talus_dem_free(talus_dem *d);

typedef struct talus_write_options {
  /* NULL-terminated "KEY=VALUE" GTiff creation options (-co); they override
   * the defaults TILED=YES BLOCKXSIZE=256 BLOCKYSIZE=256 COMPRESS=ZSTD
   * PREDICTOR=3 BIGTIFF=IF_SAFER. An option GTiff does not know is a
   * TALUS_ERR_ARGUMENT. May be NULL. */
  const char *const *creation_options;
} talus_write_options;

/*
 * Writes nbands float bands of nx × ny (row-major, bands[b] borrowed) to a
 * tiled GeoTIFF at path, with geo's CRS, geotransform and NoData (geo may
 * be NULL). band_names (nbands strings, may be NULL, entries may be NULL)
 * become band descriptions; metadata (NULL-terminated "KEY=VALUE", may be
 * NULL) becomes dataset metadata (use TALUS_* keys). opt may be NULL.
 * Writes "<path>.partial" and renames; on failure nothing is left behind.
 * An unwritable destination is a TALUS_ERR_IO naming the path.
 */
talus_status talus_geotiff_write(const char *path, int nx, int ny, int nbands,
                                 const float *const *bands, const char *const *band_names,
                                 const char *const *metadata, const talus_georef *geo,
                                 const talus_write_options *opt);

#define TALUS_PREVIEW_DEFAULT_WIDTH 2048
#define TALUS_PREVIEW_GAP           4 /* black pixels between the two panels */

/*
 * Writes an 8-bit grey PNG: the hillshade of `before` on the left, of
 * `after` on the right (same sun: azimuth 315°, altitude 45°; slopes from
 * cell_size metres, z-factor 1; NoData black; shades 1..255), box-filtered
 * down by an integer factor so the width stays ≤ max_width (≤ 0 means
 * TALUS_PREVIEW_DEFAULT_WIDTH). nodata may be NULL. Same partial + rename
 * rule as talus_geotiff_write.
 */
talus_status talus_preview_png(const char *path, int nx, int ny, double cell_size,
                               const float *before, const float *after, const uint8_t *nodata,
                               int max_width);

/*
 * All bands of a raster as Float32 with their descriptions, its georef and
 * its default-domain metadata (for reading a talus state back). Every
 * pointer is owned by the struct: band[b] (talus_alloc), name[b] (malloc'd,
 * "" when the band has no description), metadata (NULL-terminated
 * "KEY=VALUE" list, may be NULL when there is none).
 */
typedef struct talus_bands {
  int nx, ny, nbands;
  float **band;
  char **name;
  talus_georef geo;
  char **metadata;
} talus_bands;

/* Reads every band of path into *out (zeroed first; freed on failure). */
talus_status talus_bands_read(const char *path, talus_bands *out);
/* Frees everything a talus_bands owns and zeroes it. NULL is a no-op. */
void talus_bands_free(talus_bands *b);
/* Value of metadata key (case-insensitive) or NULL; borrowed from b. */
const char *talus_bands_meta(const talus_bands *b, const char *key);
/* Index of the band whose description is name, or -1. */
int talus_bands_find(const talus_bands *b, const char *name);

/*
 * Prints a description of path to `to`: driver, size, type, CRS name,
 * geotransform, cell size in metres, NoData value and count, min/max of the
 * valid cells of band 1 (a windowed scan), band descriptions and TALUS_*
 * metadata.
 */
talus_status talus_raster_info(const char *path, FILE *to);

/* ---------------------------------------------------------------------
 * Module-internal (io/raster*.c and io/preview.c define
 * TALUS_RASTER_INTERNAL before including this header).
 * ------------------------------------------------------------------- */
#ifdef TALUS_RASTER_INTERNAL
#include <gdal.h>

/* Registers the GDAL drivers (once), pushes the quiet error handler and
 * clears GDAL's last error. Every public call pairs it with leave. */
void talus_gdal_enter(void);
void talus_gdal_leave(void);
/* The one place GDAL errors become talus errors: formats the message,
 * appends GDAL's last error message (if any) and records it for module
 * "io". Returns status. */
talus_status talus_gdal_fail(talus_status status, const char *fmt, ...) TALUS_PRINTF(2, 3);

/* Opens path read-only as a raster with at least one band, mapping failures
 * to IO (missing/unreadable), DATA (dimensions GDAL refuses) or FORMAT. */
talus_status talus_raster_open(const char *path, GDALDatasetH *out);
/* Refuses 0-sized rasters and those over max_cells (0 = default). */
talus_status talus_raster_check_size(const char *path, int nx, int ny, int64_t max_cells);
/* Fills g from the dataset and band (NULL band: no NoData). */
talus_status talus_georef_from(GDALDatasetH ds, GDALRasterBandH band, talus_georef *g);
/* Reads a whole band as Float32 into dst (nx*ny), window by window. */
talus_status talus_band_read(const char *path, GDALRasterBandH band, int nx, int ny, float *dst);

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
#endif

#endif /* TALUS_IO_RASTER_H */
