/*
 * raster.h — GDAL raster input and output: read a DEM (any GDAL raster,
 * band 1) with its georeferencing and NoData mask, write float GeoTIFFs
 * (whole or streamed window by window), read multi-band talus states back,
 * and describe a raster for `talus info`. The previews are io/export's;
 * the GDAL-facing helpers shared by this family and io/export are in
 * raster_private.h.
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

#include "common/common.h"
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

/* Sets a GDAL configuration option (`--config KEY VALUE`) for the rest of
 * the process: the one place app/ reaches GDAL's settings. */
void talus_raster_config_set(const char *key, const char *value);

/* Copies the default-domain metadata item `key` of the raster at path to
 * out[len] and returns 1; returns 0, quietly (no error recorded), when the
 * file does not open as a raster or has no such item. *nbands (may be
 * NULL) gets the raster's band count from the same open (0 when it does
 * not open). */
int talus_raster_metadata_item(const char *path, const char *key, char *out, size_t len,
                               int *nbands);

typedef struct talus_dem_options {
  int nodata_policy; /* talus_nodata_policy (kernels/state.h) */
  double cell_size;  /* > 0 overrides the raster's cell size [m], no warning */
  double z_scale;    /* heights are multiplied by this; 0 means 1 */
  int64_t max_cells; /* refuse larger rasters; 0 = TALUS_RASTER_DEFAULT_MAX_CELLS */
  /* talus_dem_reader only: with the FILL policy, maps of at most this many
   * cells are held whole in memory (~5 bytes a cell + 16 a hole); 0 =
   * TALUS_DEM_READER_FILL_CELLS. talus_dem_read ignores it. */
  int64_t max_fill_cells;
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
  /* 1: the bands are Byte (whole numbers 0..255 such as column counts,
   * handed in as floats and rounded by GDAL; default PREDICTOR 2);
   * 0: Float32. */
  int byte_bands;
  /* The unit type of each band (NULL entries: none). NULL: a band named
   * "what [unit]" gets `unit`, others none. */
  const char *const *units;
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
/* The same facts as one JSON object (`talus info --json`): file, driver,
 * width, height, crs, crs_kind, geotransform (absent without one),
 * cell_size_m, dx_m, dy_m, utm_epsg (geographic only), nodata (the value,
 * or false), nodata_cells, nonfinite_cells, min, max (null without a valid
 * cell), bands [{type, description}] and metadata {TALUS_*: text}. */
talus_status talus_raster_info_json(const char *path, FILE *to);
/* The metric cell size talus_dem_read would use for path (no override),
 * read from its georeferencing alone: no pass over the data. */
talus_status talus_raster_cell_size(const char *path, double *cell);

/*
 * Reads band 1 of any GDAL raster resampled bilinearly onto nx × ny cells
 * into *out (talus_alloc'd, nx*ny floats, owned by the caller;
 * talus_free). For the per-cell input maps of `talus erode` (--hardness,
 * --rain-map). When grid (may be NULL) and the map are both georeferenced
 * (north-up geotransform and CRS), the map is warped onto the grid's cells
 * by georeference (*warped = 1; warped may be NULL); else it is stretched
 * over the grid (same extent assumed, *warped = 0). A NoData or
 * non-finite value anywhere, or a cell the warped map does not cover, is
 * TALUS_ERR_DATA naming the cell; an unreadable file TALUS_ERR_IO; not a
 * raster TALUS_ERR_FORMAT.
 */
talus_status talus_raster_read_resampled(const char *path, int nx, int ny, const talus_georef *grid,
                                         float **out, int *warped);
/* The same values for the window of w × h cells at (x0, y0) of the grid
 * only (out: w × h, row-major): a tiled run reads each tile's window, and
 * gets the values of the whole-grid read cell for cell. */
talus_status talus_raster_read_resampled_window(const char *path, int nx, int ny,
                                                const talus_georef *grid, int x0, int y0, int w,
                                                int h, float *out, int *warped);

/* =====================================================================
 * Windowed I/O (window.c, stream.c): maps larger than
 * memory. Inputs are read window by window and outputs written window by
 * window, in any order; no call holds a whole map (except the bounded FILL
 * fallback of the DEM reader). The whole-map functions above are thin
 * wrappers over these, so both give the same values.
 *
 * - Windows are global rectangles (x0, y0, w, h) with 0 <= x0, x0 + w <= nx
 *   (same for y), w, h >= 1; arrays are row-major w*h. A window outside
 *   the raster is a TALUS_ERR_ARGUMENT.
 * - GDAL block cache: opening a reader or a stream caps GDAL's block cache
 *   at TALUS_GDAL_CACHE_BYTES (256 MiB), unless the user set GDAL_CACHEMAX
 *   (environment or config option), in which case theirs stands. GDAL's
 *   own default is 5 % of the RAM, which alone could exceed --mem-limit.
 *   The cap is process-wide and only ever lowers the cache.
 * - A reader or stream is used by one thread at a time (GDAL datasets are
 *   not thread-safe); distinct readers/streams may be used concurrently.
 * ===================================================================== */

#define TALUS_GDAL_CACHE_BYTES      ((int64_t)256 << 20)
#define TALUS_DEM_READER_FILL_CELLS ((int64_t)1 << 25)

typedef struct talus_dem_reader talus_dem_reader;

/*
 * Opens band 1 of any GDAL raster for windowed reads. opt as for
 * talus_dem_read (NULL = defaults). Size, cell size (with its warnings) and
 * georef are those of talus_dem_read, and so are the errors: one streaming
 * pass over row blocks at open (keeping only counts) finds NaN/Inf heights
 * and all-NoData maps before any simulation, and the least valid height
 * that masked cells take. Memory: one block of rows.
 * NoData policies: OUTFLOW and WALL stream. FILL needs the whole map: a map
 * of at most opt->max_fill_cells cells is read whole, filled and served
 * from memory; a larger one is a TALUS_ERR_UNSUPPORTED when it has NoData
 * cells (and streams as usual when it has none).
 * *out is NULL on failure; close with talus_dem_reader_close.
 */
talus_status talus_dem_reader_open(const char *path, const talus_dem_options *opt,
                                   talus_dem_reader **out);
int talus_dem_reader_nx(const talus_dem_reader *r);
int talus_dem_reader_ny(const talus_dem_reader *r);
/* Cell size in metres (opt->cell_size, or derived from the georef). */
double talus_dem_reader_cell_size(const talus_dem_reader *r);
/* The source's CRS, geotransform and NoData value; borrowed from r. */
const talus_georef *talus_dem_reader_georef(const talus_dem_reader *r);
/* NoData cells served as masked (0 after FILL), and cells FILL filled. */
int64_t talus_dem_reader_nodata_cells(const talus_dem_reader *r);
int64_t talus_dem_reader_filled_cells(const talus_dem_reader *r);
/*
 * Reads window (x0, y0, w, h): heights z-scaled, NoData cells set to the
 * least valid height (as talus_dem_read does), and the NoData mask (1 =
 * NoData; all 0 after FILL). Both arrays (w*h) are required. Equal, value
 * for value, to the same window of talus_dem_read's arrays.
 */
talus_status talus_dem_reader_read(talus_dem_reader *r, int x0, int y0, int w, int h, float *height,
                                   uint8_t *nodata);
/* Closes the file and frees r. NULL is a no-op. */
void talus_dem_reader_close(talus_dem_reader *r);

typedef struct talus_bands_reader talus_bands_reader;

/*
 * Opens every band of a raster (e.g. a talus state) for windowed reads as
 * Float32. Refuses complex bands; no cell-count limit (nothing is read at
 * open). *out is NULL on failure.
 */
talus_status talus_bands_reader_open(const char *path, talus_bands_reader **out);
int talus_bands_reader_nx(const talus_bands_reader *r);
int talus_bands_reader_ny(const talus_bands_reader *r);
int talus_bands_reader_nbands(const talus_bands_reader *r);
/* Description of band i (0-based; "" when none), NULL when out of range.
 * Borrowed from r. */
const char *talus_bands_reader_name(const talus_bands_reader *r, int band);
/* Index of the band whose description is name, or -1. */
int talus_bands_reader_find(const talus_bands_reader *r, const char *name);
/* Value of metadata key (case-insensitive) or NULL; borrowed from r. */
const char *talus_bands_reader_meta(const talus_bands_reader *r, const char *key);
/* CRS, geotransform and NoData of band 1; borrowed from r. */
const talus_georef *talus_bands_reader_georef(const talus_bands_reader *r);
/* Reads window (x0, y0, w, h) of band (0-based) into out (w*h), raw values
 * (NoData values are not touched). */
talus_status talus_bands_reader_read(talus_bands_reader *r, int band, int x0, int y0, int w, int h,
                                     float *out);
/* Closes the file and frees r. NULL is a no-op. */
void talus_bands_reader_close(talus_bands_reader *r);

typedef struct talus_geotiff_stream talus_geotiff_stream;

/*
 * Creates "<path>.partial", a tiled GeoTIFF of nbands Float32 bands of
 * nx × ny, with the creation options, band names, metadata and georef
 * rules of talus_geotiff_write (which is a wrapper over this stream).
 * An unwritable destination fails here, leaving nothing behind.
 * Windows may then be written in any order and any size; GDAL's block
 * cache gathers them. Pixel values never depend on the order. File bytes
 * do: GDAL appends a block to the file when its cache flushes it, so block
 * offsets follow the order of flushes, and a block flushed before it is
 * complete (cache full) is later re-read, merged and appended again. The
 * bytes are therefore a function of the sequence of writes and of what
 * else used GDAL's cache meanwhile, not of the values alone. Windows
 * aligned to the block size (talus_geotiff_stream_block_size), each block
 * completed while cached, keep every block compressed once.
 * Cells never written read back as 0 (or the NoData value when geo has
 * one). *out is NULL on failure.
 */
talus_status talus_geotiff_stream_open(const char *path, int nx, int ny, int nbands,
                                       const char *const *band_names, const char *const *metadata,
                                       const talus_georef *geo, const talus_write_options *opt,
                                       talus_geotiff_stream **out);
/* Block size of the file (from the creation options). */
void talus_geotiff_stream_block_size(const talus_geotiff_stream *s, int *bx, int *by);
/* Writes window (x0, y0, w, h) of band (0-based) from data (w*h, row-major). */
talus_status talus_geotiff_stream_write(talus_geotiff_stream *s, int band, int x0, int y0, int w,
                                        int h, const float *data);
/* Same, with rows `pitch` floats apart in data (pitch >= w), e.g. a plane
 * of a tile buffer. */
talus_status talus_geotiff_stream_write_pitched(talus_geotiff_stream *s, int band, int x0, int y0,
                                                int w, int h, const float *data, size_t pitch);
/* Writes every block GDAL holds for the file now. A writer that writes
 * whole rows of blocks and flushes after each gets file bytes that depend
 * only on the values and the row size, not on the order of its windows nor
 * on what else used GDAL's cache. */
talus_status talus_geotiff_stream_flush(talus_geotiff_stream *s);
/* Flushes and closes the file, checks GDAL's errors and renames the
 * partial file to path. After any failed write the commit fails and
 * removes the partial file. Frees s in every case; NULL is an error. */
talus_status talus_geotiff_stream_commit(talus_geotiff_stream *s);
/* Closes and removes the partial file; frees s. NULL is a no-op. */
void talus_geotiff_stream_abort(talus_geotiff_stream *s);

/* ====================== end of windowed I/O ========================== */

#endif /* TALUS_IO_RASTER_H */
