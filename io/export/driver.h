/*
 * driver.h — raster outputs in any GDAL driver (-of): rows are streamed
 * into a temporary GeoTIFF beside the output, which the driver then copies
 * into the output under a partial name (GDAL's PNG, JPEG and COG drivers
 * have no row-wise writer; this way memory stays a window whatever the
 * size), and the partial file is renamed into place (io/raster's rule).
 * Owns the driver checks: an unknown driver, one that cannot write files,
 * and one that refuses the bands' data type are clear errors before
 * anything is read.
 */
#ifndef TALUS_IO_EXPORT_DRIVER_H
#define TALUS_IO_EXPORT_DRIVER_H

#include "io/raster/raster.h"

typedef enum talus_export_type {
  TALUS_EXPORT_BYTE = 0,
  TALUS_EXPORT_UINT16 = 1,
  TALUS_EXPORT_FLOAT = 2
} talus_export_type;

/* TALUS_OK when GDAL driver `driver` (short name, as gdal_translate -of
 * takes it) exists, writes rasters (Create or CreateCopy) and accepts
 * bands of `type` ("Byte", "UInt16", "Float32") where it lists the types
 * it creates; else TALUS_ERR_ARGUMENT naming the driver and the reason. */
talus_status talus_export_driver_check(const char *driver, const char *type);

typedef struct talus_export_rows talus_export_rows;

/* Opens the temporary rows file of an nx × ny output of nbands bands of
 * `type` for `path` (whose directory must be writable), with geo's
 * georeferencing (may be NULL). Three or four bands of codes are tagged
 * RGB(A). */
talus_status talus_export_rows_open(const char *path, int nx, int ny, int nbands,
                                    talus_export_type type, const talus_georef *geo,
                                    talus_export_rows **out);
/* Makes the output W × H samples of the rows' extent instead of the rows'
 * own size: at close the rows are resampled by GDAL (kernel `resampling`,
 * NULL bilinear; TALUS_ERR_ARGUMENT naming the kernels when unknown) into
 * a second temporary file, window by window, which the driver copies. */
talus_status talus_export_rows_resize(talus_export_rows *r, int W, int H, const char *resampling);
/* Describes band b (0-based): its description and unit (unit may be NULL). */
talus_status talus_export_rows_band(talus_export_rows *r, int b, const char *desc,
                                    const char *unit);
/* Sets a dataset metadata item. */
talus_status talus_export_rows_meta(talus_export_rows *r, const char *key, const char *value);
/* Writes rows [y0, y0 + h) of band b from v (nx × h floats, converted to
 * the band's type by GDAL: codes must already be whole numbers in range). */
talus_status talus_export_rows_write(talus_export_rows *r, int b, int y0, int h, const float *v);
/* When st is TALUS_OK, copies the rows into `driver`'s file at the path
 * given to open, with creation options co (may be NULL), and renames it
 * into place; on any failure nothing is left. Removes the rows file and
 * frees r (NULL is a no-op). Returns st, else the copy's status. */
talus_status talus_export_rows_close(talus_export_rows *r, talus_status st, const char *driver,
                                     const char *const *co);

/* An engine grid of cols × rows tiles sharing their edge rows and
 * columns; path_of writes tile (i, j)'s file name into buf. */
typedef struct talus_export_grid {
  int cols, rows;
  void (*path_of)(void *user, int i, int j, char *buf, size_t size);
  void *user;
} talus_export_grid;
/* The tile size t × u of grid g over W × H samples sharing their edges:
 * t = (W − 1) / cols + 1, u likewise; TALUS_ERR_ARGUMENT, suggesting a
 * size, when W or H is not cols·(t − 1) + 1 (rows·(u − 1) + 1) or a tile
 * would be thinner than 2 samples. */
talus_status talus_export_grid_split(const talus_export_grid *g, int W, int H, int *t, int *u);
/* talus_export_rows_close for a grid: when st is TALUS_OK, the output
 * (resized, if asked) is cut into g's tiles of (W − 1) / cols + 1 ×
 * (H − 1) / rows + 1 samples, tile (i, j) starting at sample
 * (i·(t − 1), j·(u − 1)), each copied into its file; all tiles or none
 * (TALUS_ERR_ARGUMENT when the size does not split so). */
talus_status talus_export_rows_close_grid(talus_export_rows *r, talus_status st, const char *driver,
                                          const char *const *co, const talus_export_grid *g);

/* Copies the raster file src into `driver`'s file at path (GDAL
 * CreateCopy with creation options co, may be NULL, and progress, may be
 * NULL) under a partial name renamed into place; on failure or when
 * progress returns 0 (TALUS_ERR_CANCELLED) nothing is left at path. src is
 * left as it was. */
talus_status talus_export_copy_file(const char *src, const char *path, const char *driver,
                                    const char *const *co, talus_progress_fn progress, void *user);

#endif /* TALUS_IO_EXPORT_DRIVER_H */
