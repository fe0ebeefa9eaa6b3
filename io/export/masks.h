/*
 * masks.h — texturing masks out of a talus state: what the run did to each
 * cell (flow, wear, deposition: the accumulators of kernels/accum.h, saved
 * with the state under simulation.masks) and what lies on it at the end
 * (water, sediment, sand of the top column), in physical units or
 * normalised to 0–1 as 8- or 16-bit codes, up to four packed as the
 * channels of one splat map (R, G, B, A in the order asked).
 *
 * Normalisation (the same for every tile, window and resolution of a map:
 * fixed physical scales, never the map's own range)
 * -------------
 * - wear, deposition, water, sediment, sand [m]: v = clamp(x / scale, 0, 1);
 *   the scale is the height that reads as 1 (defaults in masks.c:
 *   wear and deposition 1 m, water 1 m, sediment 0.1 m, sand 1 m).
 * - flow: x is the water that left the cell over the run [m³]; per metre
 *   of cell width, q = x / cell [m²], it no longer depends on the
 *   resolution (a channel's discharge spreads over its width). v =
 *   clamp(log10(1 + q / scale) / TALUS_MASK_FLOW_DECADES, 0, 1): 0 where
 *   nothing flowed, 1 at 10^3 · scale, a decade every third of the range.
 * - code = round(v · (2^bits − 1)); NoData cells get 0 (float output: NaN).
 *
 * Resized outputs (width × height samples over the map's extent, e.g. an
 * engine's splat-map size) resample the codes (or the physical values) by
 * GDAL after they are computed cell by cell, codes rounded to the nearest.
 *
 * Output: any GDAL driver that can create or copy (-of; PNG for .png,
 * GTiff for .tif), written as a temporary GeoTIFF of the rows, streamed
 * window by window, then copied by the driver under a partial name and
 * renamed (io/raster's rule). Two normalised masks are written as RGB with
 * an empty blue channel, so a PNG is a colour image, not grey + alpha.
 */
#ifndef TALUS_IO_EXPORT_MASKS_H
#define TALUS_IO_EXPORT_MASKS_H

#include "io/export/driver.h"
#include "io/raster/raster.h"

typedef enum talus_mask {
  TALUS_MASK_FLOW = 0,   /* water that left the cell over the run [m³] */
  TALUS_MASK_WEAR,       /* solid the cell lost, summed per step [m] */
  TALUS_MASK_DEPOSITION, /* solid the cell gained, summed per step [m] */
  TALUS_MASK_WATER,      /* water depth on the top column at the end [m] */
  TALUS_MASK_SEDIMENT,   /* suspended sediment of the top column at the end [m] */
  TALUS_MASK_SAND,       /* sand on the top column at the end [m] */
  TALUS_MASKS
} talus_mask;

#define TALUS_MASK_MAX          4   /* masks one file packs (RGBA) */
#define TALUS_MASK_FLOW_DECADES 3.0 /* decades of unit discharge the flow mask spans */

/* The mask's name as --mask takes it ("flow", "wear", ...). */
const char *talus_mask_name(talus_mask m);
/* The unit of the mask's physical values ("m3" or "m"). */
const char *talus_mask_unit(talus_mask m);
/* The mask named `name` (exact, lower case), or -1. */
int talus_mask_parse(const char *name);
/* The default scale of mask m (see the notes above): [m], flow [m²]. */
double talus_mask_default_scale(talus_mask m);
/* The normalised value v in [0, 1] of physical value x of mask m, with
 * `scale` (> 0) and cells of `cell` metres (flow only). NaN gives 0. */
double talus_mask_normalise(talus_mask m, double x, double scale, double cell);

typedef struct talus_mask_options {
  int n;                               /* masks, 1..TALUS_MASK_MAX */
  talus_mask kind[TALUS_MASK_MAX];     /* in channel order */
  double scale[TALUS_MASKS];           /* by mask; <= 0: the default */
  int bits;                            /* 8 or 16: normalised codes; 0: physical float32 */
  const char *driver;                  /* GDAL driver short name (PNG, GTiff, COG, ...) */
  const char *const *creation_options; /* -co for the driver (NULL-terminated, may be NULL) */
  int width, height;                   /* output samples over the map's extent; 0: its cells */
  const char *resampling;              /* kernel of a resized output (NULL: bilinear) */
  const talus_export_grid *grid;       /* an engine grid of tiles instead of one file (NULL) */
} talus_mask_options;

/*
 * Writes the masks of o from talus state `state` to `output`; *cell (may
 * be NULL) gets the state's cell size [m]. progress (may be NULL) sees
 * 0..1; returning 0 cancels (TALUS_ERR_CANCELLED, nothing written). Errors: not a state
 * TALUS_ERR_FORMAT; flow, wear or deposition from a state without accumulators TALUS_ERR_DATA
 * (naming simulation.masks); an unknown driver, one that cannot write files, or one that refuses
 * the bands' type TALUS_ERR_ARGUMENT; I/O TALUS_ERR_IO.
 */
talus_status talus_mask_export(const char *state, const char *output, const talus_mask_options *o,
                               double *cell, talus_progress_fn progress, void *user);

/* Writes the JSON sidecar of masks written as o says from a map of cells
 * of `cell` metres to `path` (partial + rename): `file` as recorded, the
 * bits, and per channel (R, G, B, A) the mask, its unit, scale, and the
 * formulas from the physical value to v in 0-1 and to the code. */
talus_status talus_mask_sidecar(const char *path, const char *file, const talus_mask_options *o,
                                double cell);

#endif /* TALUS_IO_EXPORT_MASKS_H */
