/*
 * erode_tiled.h — private to the tiled path of `talus erode`: the input
 * read window by window as a tile source (erode_source.c). The material
 * volumes it sums tile by tile for the mass ledger are tiler/volumes.h's.
 */
#ifndef TALUS_APP_ERODE_TILED_H
#define TALUS_APP_ERODE_TILED_H

#include "erode.h"
#include "io/state.h"
#include "tiler/tiled.h"

/* The run's input, open for windowed reads. */
typedef struct erode_source {
  talus_dem_reader *dem;                      /* a DEM, or NULL */
  talus_bands_reader *bands;                  /* a talus state, or NULL */
  int surface, columns;                       /* state bands */
  int band[TALUS_NZ_MAX][TALUS_STATE_FIELDS]; /* state band of field f of layer k, -1 if absent */
  int acc[TALUS_ACC_PLANES];                  /* state band of accumulator a, -1 if absent */
  int fd[4]; /* state band of diagonal flux plane j (heightfield.neighbours = 8), -1 if absent */
  int hard;  /* state band of the hardness plane, -1 if absent (then --hardness or the constant) */
  int grade; /* state band of the input drop (t->grade_in), -1 if absent (then the state's own) */
  int nx, ny;
  double cell;  /* [m] */
  int64_t step; /* global step of the input (states carry one) */
  talus_georef geo;
  talus_params *params; /* the run's parameters (layers of a state applied) */
  talus_kctx ctx;       /* parameters derived for this grid, at `step` */
  const char *hardness; /* --hardness, read window by window (erode_source_hardness), or NULL */
  const char *rain;     /* --rain-map, read window by window (erode_source_rain), or NULL */
  float *v;             /* window scratch */
  uint8_t *nd;
  size_t cells;
  float *rv; /* --rain-map window scratch (erode_source_inputs) */
  size_t rcells;
} erode_source;

/* Opens path (a DEM or a talus state) with the run's parameters. */
talus_status erode_source_open(erode_source **out, const char *path, const talus_params *params);
void erode_source_close(erode_source *s);
/* Takes --hardness `path` for the windows filled from now on, after
 * checking the whole map once (it covers the grid, values in [0, 1]), so
 * a bad map is refused before any tile is built; says when the map is
 * stretched rather than placed by georeference (unless quiet). */
talus_status erode_source_hardness(erode_source *s, const char *path, int quiet);
/* Takes --rain-map `path` for erode_source_inputs, after checking the
 * whole map once as the one-piece run does (the heightfield model; it
 * covers the grid; rates finite and >= 0), so a bad map is refused before
 * any tile is built; says when the map is stretched (unless quiet). */
talus_status erode_source_rain(erode_source *s, const char *path, int quiet);
/* talus_tile_source fill of the tiler's static inputs
 * (talus_tiled_set_inputs) over global rectangle r, a whole buffer with
 * its halo: the --rain-map rates into t->rain, and with
 * heightfield.grade_share the input's drop into t->grade_in (allocated
 * here). */
talus_status erode_source_inputs(void *user, talus_tile *t, talus_rect r);
/* The input's drop of heightfield.grade_share over global rectangle r
 * into t->grade_in (allocated here): a state's own band, else
 * talus_grade_drop of the input's heights (a DEM's, or a state's surface)
 * read over r grown by one cell. Safe beside a fill (own scratch). */
talus_status erode_source_grade(erode_source *s, talus_tile *t, talus_rect r);
/* talus_tile_source fill: the initial state of global rectangle r. */
talus_status erode_source_fill(void *user, talus_tile *t, talus_rect r);

#endif /* TALUS_APP_ERODE_TILED_H */
