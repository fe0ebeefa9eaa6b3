/*
 * state.h — the layered state as one multi-band GeoTIFF, so a run can be
 * continued exactly (`talus erode state.tif …`) and GIS tools still see the
 * terrain in band 1.
 *
 * Format (metadata TALUS_STATE=1, TALUS_STATE_VERSION=1):
 *   band 1 "surface"  top S = B + s of the topmost column (NoData on masked cells)
 *   band 2 "columns"  column count
 *   then per layer k < L (L = highest count in the map), 11 bands named
 *   "layer<k>.<field>" for field in bedrock, sand, water, ceiling, sediment,
 *   damage, stability, flux_r, flux_u, flux_l, flux_d; absent slots are NaN.
 *   Metadata: TALUS_LAYERS (allocated Nz), TALUS_STEP (global step),
 *   TALUS_CELL_SIZE [m], TALUS_MODEL.
 * Every persistent field is stored losslessly, so continuing from a state
 * gives the bytes of an uninterrupted run.
 */
#ifndef TALUS_APP_STATE_H
#define TALUS_APP_STATE_H

#include "domain.h"
#include "io/raster/raster.h"

/* 1 if `path` is a raster carrying TALUS_STATE metadata, else 0. */
int app_state_probe(const char *path);
/* Writes the domain's full layered state to `path`. */
talus_status app_state_write(const char *path, const talus_domain *d, const talus_georef *geo,
                             const talus_write_options *wo);
/* Creates a domain from a state file read with talus_bands_read. params
 * supplies the physics; the state supplies geometry, layers, step. */
talus_status app_state_load(const talus_bands *b, const talus_params *params, talus_domain **out);

#endif /* TALUS_APP_STATE_H */
