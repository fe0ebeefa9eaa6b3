/*
 * export.h — what leaves the program besides the eroded GeoTIFFs: for now
 * the before/after hillshade PNG previews, built from windows by an exact
 * accumulator so a tiled run's preview equals a run in one piece.
 */
#ifndef TALUS_IO_EXPORT_H
#define TALUS_IO_EXPORT_H

#include "io/raster/raster.h"

#define TALUS_PREVIEW_DEFAULT_WIDTH 2048
#define TALUS_PREVIEW_GAP           4 /* black pixels between the two panels */

/*
 * Writes an 8-bit grey PNG: the hillshade of `before` on the left, of
 * `after` on the right (same sun: azimuth 315°, altitude 45°; z-factor 1;
 * NoData black; shades 1..255). Heights are first box-averaged down by an
 * integer factor f so the width stays ≤ max_width (≤ 0 means
 * TALUS_PREVIEW_DEFAULT_WIDTH), and slopes taken on cells of f·cell_size
 * metres: this is talus_preview_acc fed with the whole arrays, so a
 * windowed preview gives the same image. nodata may be NULL. Same partial
 * + rename rule as talus_geotiff_write.
 */
talus_status talus_preview_png(const char *path, int nx, int ny, double cell_size,
                               const float *before, const float *after, const uint8_t *nodata,
                               int max_width);

typedef struct talus_preview_acc talus_preview_acc;

/*
 * Accumulates the before/after preview of an nx × ny map from windows.
 * Heights are box-averaged into f × f boxes, f the smallest integer that
 * fits both panels and the gap in max_width (≤ 0: the default), and the
 * hillshade is computed on the averaged maps with cells of f·cell_size
 * (talus_preview_png works the same way; it is this accumulator fed with
 * the whole arrays). Sums are exact (fixed point, 2^-16 m, heights clamped
 * to ±2^20 m), so the image does not depend on the order of windows.
 * Memory: about 24 bytes per preview pixel. A box with no valid cell is
 * NoData (black). f above 8192 is a TALUS_ERR_RANGE.
 */
talus_status talus_preview_acc_open(int nx, int ny, double cell_size, int max_width,
                                    talus_preview_acc **out);
/* Adds window (x0, y0, w, h) of panel `which` (0 before, 1 after): heights
 * (w*h) and NoData mask (w*h, 1 = NoData, may be NULL). Non-finite heights
 * count as NoData. Each cell should be added once per panel. */
talus_status talus_preview_acc_add(talus_preview_acc *acc, int which, int x0, int y0, int w, int h,
                                   const float *heights, const uint8_t *nodata);
/* Renders both panels and writes the PNG (partial + rename). acc is kept. */
talus_status talus_preview_acc_write(const talus_preview_acc *acc, const char *path);
/* Frees acc. NULL is a no-op. */
void talus_preview_acc_free(talus_preview_acc *acc);
#endif /* TALUS_IO_EXPORT_H */
