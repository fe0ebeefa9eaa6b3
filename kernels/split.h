/*
 * split.h — column splitting (reference step 5, paper §3.4): a column whose
 * horizontal-erosion damage reached the split size is cut in two at the
 * top of the overlap σ that damaged it, which is how overhangs are born.
 *
 * Stage radius 0: reads and writes only its own cell. Geometry of a cut of
 * column k (floor F, bedrock top B, overlap σ = (σx, σy), F <= σx <= σy <= B):
 *   lower column k:   bedrock F..b*, sand b*..σy, no water, ceiling σy,
 *                     with b* = max(σy − split_size, σx);
 *   upper column k+1: the old column from floor σy up (bedrock σy..B, its
 *                     sand, water, sediment, flux, ceiling), damage 0.
 * Bedrock before: B − F; after: (b* − F) + (B − σy). The difference σy − b*
 * is exactly the new sand of the lower column, booked as TALUS_FLOW_SPLIT.
 *
 * Fixes the reference's defect 9: every per-column field (persistent and
 * scratch, σ included) moves with its column, and columns are visited
 * top-down so that several splits of one cell in one step keep each σ with
 * its own column and never skip the top column.
 */
#ifndef TALUS_KERNELS_SPLIT_H
#define TALUS_KERNELS_SPLIT_H

#include "select.h"
#include "state.h"
#include <math.h>

/* Copies every per-column field of slot `from` of cell i to slot `to`. */
TALUS_HD static inline void sp_move(const talus_tile *t, size_t i, int from, int to) {
  size_t a = talus_col(t, i, from), b = talus_col(t, i, to);
  t->B[b] = t->B[a];
  t->s[b] = t->s[a];
  t->w[b] = t->w[a];
  t->C[b] = t->C[a];
  t->r[b] = t->r[a];
  t->D[b] = t->D[a];
  t->p[b] = t->p[a];
  t->kr[b] = t->kr[a];
  t->sina[b] = t->sina[a];
  t->vx[b] = t->vx[a];
  t->vy[b] = t->vy[a];
  t->sig_lo[b] = t->sig_lo[a];
  t->sig_hi[b] = t->sig_hi[a];
  for (int d = 0; d < 4; d++) {
    size_t da = talus_dcol(t, i, from, d), db = talus_dcol(t, i, to, d);
    t->f[db] = t->f[da];
    t->pipe[db] = t->pipe[da];
    t->slip[db] = t->slip[da];
    t->dpipe[db] = t->dpipe[da];
    t->dslip[db] = t->dslip[da];
  }
}

/*
 * Turns the duplicated pair (k, k+1) of cell i into the lower and upper
 * parts of a cut at the stored σ of column k; returns the bedrock turned
 * into sand. σ is clamped into [F, B] so a stale σ cannot create matter.
 * The lower part is dry and still, so its flux, velocity, sediment scale,
 * slippage and pipes are cleared; its tilt and stability are inherited.
 */
TALUS_HD static inline float sp_cut(const talus_tile *t, const talus_kparams *P, size_t i, int k) {
  size_t lo = talus_col(t, i, k), up = talus_col(t, i, k + 1);
  float F = talus_floor(t, i, k), B = t->B[lo];
  float sy = talus_fminf(talus_fmaxf(t->sig_hi[lo], F), B);
  float sx = talus_fminf(talus_fmaxf(t->sig_lo[lo], F), sy);
  float bstar = talus_fmaxf(sy - P->split_size, sx);
  float sand = sy - bstar;
  t->D[up] = 0.0f;
  t->sig_lo[up] = sy;
  t->sig_hi[up] = B;
  t->B[lo] = bstar;
  t->s[lo] = sand;
  t->w[lo] = 0.0f;
  t->C[lo] = sy;
  t->r[lo] = 0.0f;
  t->D[lo] = talus_fmaxf(t->D[lo] - P->split_size, 0.0f);
  t->kr[lo] = 0.0f;
  t->vx[lo] = 0.0f;
  t->vy[lo] = 0.0f;
  t->sig_lo[lo] = F;
  t->sig_hi[lo] = bstar;
  for (int d = 0; d < 4; d++) {
    size_t dl = talus_dcol(t, i, k, d);
    t->f[dl] = 0.0f;
    t->slip[dl] = 0.0f;
    t->pipe[dl] = -1;
    t->dslip[dl] = 0.0f;
    t->dpipe[dl] = -1;
  }
  return sand;
}

/*
 * Splits every column of cell (x, y) whose damage reached split_size, as
 * long as the cell has fewer than nz columns (and horizontal erosion, the
 * only source of damage, is enabled). Top-down order: the columns
 * above a cut have already been handled, and shifting them up carries their
 * own σ along, so each cut uses its own column's σ. When nz is reached, the
 * higher columns have had their chance first. One cut per column per step:
 * the lower part's remaining damage waits for the next step's σ.
 */
TALUS_HD static inline void k_split(const talus_tile *t, const talus_kctx *c, int x, int y,
                                    double *flows) {
  size_t i = talus_idx(t, x, y);
  if (!c->P.enable_horizontal || talus_cell_masked(t, i)) return;
  int n = t->count[i];
  int nmax = c->P.nz < t->nz ? c->P.nz : t->nz;
  for (int k = n - 1; k >= 0 && n < nmax; k--) {
    if (!(t->D[talus_col(t, i, k)] >= c->P.split_size)) continue;
    for (int m = n - 1; m >= k; m--)
      sp_move(t, i, m, m + 1);
    n++;
    flows[TALUS_FLOW_SPLIT] += (double)sp_cut(t, &c->P, i, k);
  }
  t->count[i] = (uint8_t)n;
}

#endif /* TALUS_KERNELS_SPLIT_H */
