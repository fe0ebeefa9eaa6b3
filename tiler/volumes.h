/*
 * volumes.h — the material volumes of a tiled run's mass ledger, summed
 * tile by tile: a run books the initial volumes as it loads its tiles and
 * the final ones as it reads its cores back, in the cells' row-major order
 * within each rectangle, so the sums do not depend on who adds them (one
 * process, or rank 0 for many).
 *
 * Sums of heights are kept datum-free: bedrock of layer 0 is bedrock0 -
 * datum * live, since the datum (the lowest initial bedrock top) is known
 * only once every tile was seen.
 */
#ifndef TALUS_TILER_VOLUMES_H
#define TALUS_TILER_VOLUMES_H

#include "kernels/state.h"

/* Material held by live cells, as sums of heights. */
typedef struct talus_volumes {
  double m[TALUS_MAT_COUNT]; /* water, sediment, sand, bedrock above layer 0 [m] */
  double bedrock0;           /* sum of layer-0 bedrock tops [m] */
  int64_t live;              /* cells not NoData */
  double lowest;             /* least layer-0 bedrock top (INFINITY before any cell) */
} talus_volumes;

/* Empties v: no cells, nothing held, lowest = INFINITY. */
void talus_volumes_reset(talus_volumes *v);
/* Adds the live cells of global rectangle r (inside t->buf) to v. */
void talus_volumes_add(const talus_tile *t, talus_rect r, talus_volumes *v);
/* Volumes [m³] of v for the datum [m] and the cell area [m²]. */
void talus_volumes_of(const talus_volumes *v, double datum, double area,
                      double out[TALUS_MAT_COUNT]);

#endif /* TALUS_TILER_VOLUMES_H */
