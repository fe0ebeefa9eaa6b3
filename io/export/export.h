/*
 * export.h — what leaves the program besides the eroded GeoTIFFs: for now
 * the before/after hillshade PNG previews, built from windows by an exact
 * accumulator so a tiled run's preview equals a run in one piece.
 *
 * The preview is RGB. The before panel is a plain grey hillshade; the after
 * panel is the same hillshade tinted, per preview pixel:
 * - overhangs: cells holding more than one column (overhangs, caves,
 *   arches, bridges) mix towards orange, by TALUS_PREVIEW_OVERHANG_ALPHA
 *   times their share of the pixel's cells;
 * - water over that, as seen from above: the top columns' mean depth d
 *   mixes towards blue by TALUS_PREVIEW_WATER_ALPHA·(1 − e^(−d/0.3 m)) —
 *   a 1 cm rain film stays at 3 % (invisible), 10 cm shows faintly, a metre
 *   is nearly opaque — from light blue when shallow to deep blue at
 *   several metres (e^(−d/1.5 m)).
 * Tints are shaded by the hillshade so the relief stays readable.
 */
#ifndef TALUS_IO_EXPORT_H
#define TALUS_IO_EXPORT_H

#include "io/raster/raster.h"

#define TALUS_PREVIEW_DEFAULT_WIDTH 2048
#define TALUS_PREVIEW_GAP           4 /* black pixels between the two panels */

#define TALUS_PREVIEW_OVERHANG_ALPHA 0.8  /* tint of a pixel all multi-column */
#define TALUS_PREVIEW_WATER_ALPHA    0.85 /* tint of deep water */
#define TALUS_PREVIEW_WATER_M        0.3  /* depth [m] at 63 % of the water tint */
#define TALUS_PREVIEW_DEEP_M         1.5  /* depth [m] 63 % of the way to deep blue */

/*
 * Writes an 8-bit RGB PNG: the hillshade of `before` on the left, of
 * `after` on the right (untinted: talus_preview_acc_add_overlay adds tints) (same sun: azimuth
 * 315°, altitude 45°; z-factor 1; NoData black; shades 1..255). Heights are first box-averaged down
 * by an integer factor f so the width stays ≤ max_width (≤ 0 means TALUS_PREVIEW_DEFAULT_WIDTH),
 * and slopes taken on cells of f·cell_size metres: this is talus_preview_acc fed with the whole
 * arrays, so a windowed preview gives the same image. nodata may be NULL. Same partial
 * + rename rule as talus_geotiff_write.
 */
talus_status talus_preview_png(const char *path, int nx, int ny, double cell_size,
                               const float *before, const float *after, const uint8_t *nodata,
                               int max_width);

/* Writes a pixel-interleaved 8-bit RGB image (w × h) as a PNG through
 * GDAL's MEM and PNG drivers, under a partial name renamed into place
 * (the rule of talus_geotiff_write); the previews' and sections' writer. */
talus_status talus_rgb_png_write(const char *path, uint8_t *img, int w, int h);

typedef struct talus_preview_acc talus_preview_acc;

/*
 * Accumulates the before/after preview of an nx × ny map from windows.
 * Heights are box-averaged into f × f boxes, f the smallest integer that
 * fits both panels and the gap in max_width (≤ 0: the default), and the
 * hillshade is computed on the averaged maps with cells of f·cell_size
 * (talus_preview_png works the same way; it is this accumulator fed with
 * the whole arrays). Sums are exact (fixed point, 2^-16 m, heights clamped
 * to ±2^20 m), so the image does not depend on the order of windows.
 * A box with no valid cell is
 * NoData (black). f above 8192 is a TALUS_ERR_RANGE.
 * Memory: about 36 bytes per preview pixel (with the overlays' sums).
 */
talus_status talus_preview_acc_open(int nx, int ny, double cell_size, int max_width,
                                    talus_preview_acc **out);
/* Adds window (x0, y0, w, h) of panel `which` (0 before, 1 after): heights
 * (w*h) and NoData mask (w*h, 1 = NoData, may be NULL). Non-finite heights
 * count as NoData. Each cell should be added once per panel. */
talus_status talus_preview_acc_add(talus_preview_acc *acc, int which, int x0, int y0, int w, int h,
                                   const float *heights, const uint8_t *nodata);
/* Adds the after panel's tints for window (x0, y0, w, h), each w*h: water
 * depth on the top column (may be NULL: none) and column counts (may be
 * NULL: one each; a count above 1 marks an overhang); NoData cells (nodata
 * 1, may be NULL) are skipped. Each cell should be added once; sums are
 * exact, like the heights'. Shares are taken over the cells whose after
 * heights were valid. */
talus_status talus_preview_acc_add_overlay(talus_preview_acc *acc, int x0, int y0, int w, int h,
                                           const float *water, const uint8_t *columns,
                                           const uint8_t *nodata);
/* Renders both panels and writes the PNG (partial + rename). acc is kept. */
talus_status talus_preview_acc_write(const talus_preview_acc *acc, const char *path);
/* Frees acc. NULL is a no-op. */
void talus_preview_acc_free(talus_preview_acc *acc);
#endif /* TALUS_IO_EXPORT_H */
