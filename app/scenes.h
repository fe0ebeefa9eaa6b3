/*
 * scenes.h — the initial terrains of the paper's scenes, plus a procedural
 * `noise` terrain, built straight into a layered tile.
 *
 * Design notes
 * ------------
 * - The paper's scenes (bridges, chasm-*, arches, cave, rivers-*) are 256 m
 *   wide whatever the resolution n: cell size l_c = 256/n. Their definitions
 *   are in metres (layered-stack-reference.md, section 5), x east and y
 *   north as the paper draws them. Rows run north to south, as in a
 *   north-up raster: cell (x, row) covers [x·l_c, (x+1)·l_c) ×
 *   [(n−row−1)·l_c, (n−row)·l_c) and takes the definition's value at its
 *   centre, so the row index grows towards −y. talus_scene_geotransform
 *   gives the north-up geotransform whose coordinates are the scene's
 *   metres (rows used to run towards +y, which left the written GeoTIFF
 *   mirrored north–south). The physics does not care (kernels/state.h:
 *   its +y is the growing row index); water sources (sourceN.x/y) are
 *   measured from the corner of cell (0,0), the north-west corner, so a
 *   source at scene point (X, Y) is sourceN.x = X, sourceN.y = 256 − Y.
 * - Band rule: a cell lies in a band (a, b) of x or y when its centre lies
 *   strictly inside, or when the cell holds the band's midpoint. The second
 *   clause keeps narrow features (the cave's 4 m guide tunnel) at least one
 *   cell wide on coarse grids; on grids fine enough to resolve the band it
 *   adds nothing. Overlapping blocks take the highest bedrock.
 * - Bridges: the pillars x∈(10,20)∪(236,246) are solid bedrock only across
 *   each bridge's y band, up to that bridge's top; elsewhere the base −30.
 *   A bridge cell is two columns: bedrock −30 with ceiling C(x), then the
 *   deck from C(x) up to its top. Needs nz ≥ 2, as does the cave (tunnel:
 *   floor ramping 0→25 m over x∈(64,200], ceiling 3 m above it, roof 50 m).
 * - Rivers: bedrock 10(1 + fbm) + 16(256 − X)/256 with X in metres (the
 *   reference's 16(N−x)/N with x in cells), fbm of 8 octaves at 0.05/m,
 *   sand 1 m, no water.
 * - noise: not a paper scene. Cells of 1 m, so the terrain is a window of
 *   one endless landscape: the n = 64 tile is the north-west corner of the
 *   n = 128 one (the north edge lies at y = 0, rows run to y = −n).
 *   Bedrock 150(1 + fbm) ∈ [0, 300] m, fbm of 10 octaves from a 1 km base
 *   wavelength (frequency 0.001/m) down to ~2 m; sand 1 m; no water.
 * - gully-arch: not a paper scene (the droplets' overhang scene, configs/
 *   particles-game.ini). A V valley along x, thalweg 2 + 0.08(256 − X) m,
 *   flanks rising 0.3 m per m, 1.5(1 + fbm) m of roughness (6 octaves at
 *   0.05/m), 1 m of sand; over X ∈ [112, 144) a 6 m arch slab whose
 *   underside lies 10 m above the thalweg at X = 128, on the flanks where
 *   they reach it. Needs nz ≥ 2.
 * - Only B, s, C and count are set; water, sediment, damage, stability and
 *   fluxes stay zero as talus_tile_create leaves them.
 */
#ifndef TALUS_IO_SCENES_H
#define TALUS_IO_SCENES_H

#include "kernels/state.h"

/* Number of scenes; names are bridges, chasm-rain, chasm-source, arches,
 * cave, rivers-rain, rivers-source, noise, gully-arch. The *-rain / *-source pairs share
 * a terrain (they differ only in their parameters). */
int talus_scene_count(void);
/* Name of scene i, or NULL when i is out of range. */
const char *talus_scene_name(int i);
/* Smallest nz the scene needs (2 for bridges, cave and gully-arch, else 1); 0 if the
 * name is unknown. */
int talus_scene_min_layers(const char *name);

/*
 * Builds scene `name` at n × n cells into a new tile covering (0,0,n,n)
 * with nz layers; *cell_size (may be NULL) receives l_c in metres.
 * Errors: TALUS_ERR_ARGUMENT for an unknown name or NULL out; TALUS_ERR_RANGE
 * for n < 1, nz outside 1..TALUS_NZ_MAX or below the scene's need;
 * TALUS_ERR_NOMEM. seed varies the fbm scenes (rivers-*, noise, gully-arch) and the
 * arches walls' faces.
 */
talus_status talus_scene_build(const char *name, int n, int nz, uint32_t seed, talus_tile **out,
                               double *cell_size);

/*
 * Fills global rectangle r of scene `name` (n × n cells) into tile t: r
 * lies inside t->buf and the map, and its cells were reset to one empty
 * column (talus_tile_reset / talus_tile_create); cells outside r are not
 * touched. A window gives exactly the cells of the whole-scene build (which
 * is this call over the whole map), so a tiled load equals a monolithic
 * one. *cell_size (may be NULL) receives l_c. Errors as talus_scene_build,
 * with t->nz for nz; TALUS_ERR_ARGUMENT for a NULL tile or r outside the
 * tile or the map.
 */
talus_status talus_scene_fill(const char *name, int n, uint32_t seed, talus_tile *t, talus_rect r,
                              double *cell_size);

/*
 * The north-up GDAL geotransform of scene `name` at n × n cells:
 * {0, l_c, 0, north, 0, −l_c}, north = 256 m for the paper's scenes and 0
 * for noise, so a cell's georeferenced centre is the scene point it was
 * sampled at. Errors as talus_scene_build; TALUS_ERR_ARGUMENT for a NULL gt.
 */
talus_status talus_scene_geotransform(const char *name, int n, double gt[6]);

/*
 * Fractional Brownian motion of value noise at (x, y): `octaves` octaves,
 * the first at `frequency` (lattice spacing 1/frequency), each next one at
 * twice the frequency and half the amplitude, normalised by the sum of the
 * amplitudes so the result lies in [−1, 1]. Each octave's lattice is
 * turned by its own angle (no two share axes: no grid creases). Lattice values come from
 * talus_hash(seed, i, j, 0, octave), so the field is deterministic and the
 * same wherever it is evaluated from. Non-finite input or octaves < 1 give 0.
 */
float talus_fbm(uint32_t seed, double x, double y, int octaves, double frequency);

/* The shortest wavelength a scene's fBm may have, in cells: finer octaves
 * alias on the grid (at 0.5 m cells rivers-rain's octaves 5-7 were finer
 * than a cell, and left per-row offsets that slippage turned into
 * stripes). */
#define TALUS_FBM_MIN_CELLS 4.0

/* How many of `octaves` octaves, the first of wavelength 1/frequency and
 * each next one half as long, have wavelengths of at least
 * TALUS_FBM_MIN_CELLS cells of cell_size: at least 1, at most octaves
 * (octaves < 1 is returned as it is). */
int talus_fbm_octaves(int octaves, double frequency, double cell_size);

#endif /* TALUS_IO_SCENES_H */
