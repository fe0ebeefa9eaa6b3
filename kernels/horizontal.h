/*
 * horizontal.h — horizontal erosion (reference step 4, paper §3.4, eqs.
 * 21–25): water standing or flowing in a neighbouring cell wears away the
 * side of a column's bedrock where the two overlap in height. The wear is
 * accumulated as damage D; the split stage cuts the column once D reaches
 * the split size, at the overlap σ stored here.
 *
 * Stage radius 1: reads the heights and velocities of the four neighbour
 * cells; writes only D, sig_lo and sig_hi of its own cell. Damage is not
 * matter, so the stage books no ledger flow.
 *
 * Fast path: `one` (TALUS_ONE) promises a live cell whose 4 neighbours are
 * live and hold one column each (as in pipes.h): no classification, no
 * count; the column's floor is then TALUS_BOTTOM = -FLT_MAX and each
 * neighbour's ceiling TALUS_TOP = FLT_MAX, so for finite heights the
 * overlap's floor max(F, S) is S, the rise's min(B, C') is B, and no
 * neighbour's surface lies at or below F (the scan's stop): those tests
 * and the ceiling's load are left out, with the same results. With
 * TALUS_ONE_CELL2 (a power-of-two cell) the division by l_c is the
 * multiplication by its exact reciprocal. The same operations in the same
 * order otherwise. k_horizontal passes 0.
 */
#ifndef TALUS_KERNELS_HORIZONTAL_H
#define TALUS_KERNELS_HORIZONTAL_H

#include "select.h"
#include "state.h"
#include <math.h>

/* Hermite smoothstep from e0 to e1 (0 below e0, 1 above e1). */
TALUS_HD static inline float hz_smoothstep(float e0, float e1, float v) {
  float u = (v - e0) / (e1 - e0);
  u = u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u);
  return u * u * (3.0f - 2.0f * u);
}

/* The candidate of one neighbour column: damage and the overlap it acts on. */
typedef struct hz_hit {
  float dmg, lo, hi;
} hz_hit;

/*
 * Damage that neighbour column j (lying in direction d) deals in one step to
 * the bedrock [F, B] of the column being eroded; 0 without overlap. As in
 * the reference, v' is divided by speed′ + ε (not by |v'|), so fast water
 * flowing away gives a slightly negative value, which the strict maximum
 * (starting at 0) discards. sin β = sin(atan2(h, run)) is evaluated as
 * 1/sqrt(1 + (run/h)²): the same value without atan2 and sin, whose results
 * differ between math libraries (CPU vs GPU). The run is l_c, or the
 * reference cell (talus_kparams_derive's notes).
 *
 * horizontal.notch_wall: where the neighbour's water lies under a roof C'
 * that this column's bedrock reaches (B >= C'), the rock beside it is the
 * back wall of a notch or cave, a vertical face from S' to C' whatever the
 * cell size, and sin β = 1. The reference's rise over one cell reads it so
 * on its 0.125-0.25 m cells (a split's 0.75 m notch: 0.99 over 0.125 m) but
 * as a slope on coarse ones (0.35 over 2 m, under min_slope), so a notch
 * there never went deeper than the cell it was cut in. Rock that ends
 * below the roof is a step in the gap's floor and keeps the slope. `one`
 * (every neighbour a single open column, C' = TOP) never meets a roof.
 */
TALUS_HD static inline hz_hit hz_candidate(const talus_tile *t, const talus_kparams *P, size_t j,
                                           int d, float F, float B, int one) {
  float S = t->B[j] + t->s[j], W = S + t->w[j];
  hz_hit h = {0.0f, one ? S : talus_fmaxf(F, S), talus_fminf(B, W)};
  if (!(h.hi > h.lo)) return h;
  float sinb = 1.0f;
  if (one || !(F > S)) {
    /* Overlap implies B > S and C' >= W' > S, so the rise is positive. */
    float q = P->hz_run / ((one ? B : talus_fminf(B, t->C[j])) - S);
    sinb = 1.0f / sqrtf(1.0f + q * q);
    if (!one && P->horiz_notch_wall && B >= t->C[j]) sinb = 1.0f;
  }
  float sins = hz_smoothstep(P->horiz_min_slope, 1.0f, sinb) * sinb;
  float vx = t->vx[j], vy = t->vy[j];
  float speed = P->min_scale + (P->max_scale - P->min_scale) * sqrtf(vx * vx + vy * vy);
  /* Water flowing towards the column (against the offset) erodes fully. */
  float along = ((float)talus_dir_dx(d) * vx + (float)talus_dir_dy(d) * vy) / (speed + TALUS_EPS);
  float att = 0.5f - 0.5f * along;
  float wear = P->horiz_strength * sins * speed * att * (h.hi - h.lo) * P->dt;
  h.dmg = (one & TALUS_ONE_CELL2) ? wear * (1.0f / P->cell_size) : wear / P->cell_size;
  return h;
}

/*
 * Erodes column k of cell (x, y): scans each inside neighbour's columns
 * top-down (stopping at the first whose water surface is at or below this
 * column's floor), keeps the strict maximum damage, adds it to D and stores
 * its overlap in sig_lo/sig_hi — (floor, bedrock top) when nothing erodes.
 * Out-of-domain and NoData neighbours do not erode.
 */
TALUS_HD static inline TALUS_FORCE_INLINE void hz_column(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, size_t i, int k, int one) {
  size_t jc = talus_col(t, i, k);
  float F = talus_floor(t, i, k), B = t->B[jc];
  hz_hit best = {0.0f, F, B};
  TALUS_UNROLL4 for (int d = 0; d < 4; d++) {
    if (!one && talus_nb_kind(t, c, x, y, d, 0) != TALUS_NB_INSIDE) continue;
    size_t ni = talus_idx(t, x + talus_dir_dx(d), y + talus_dir_dy(d));
    for (int kk = one ? 0 : (int)t->count[ni] - 1; kk >= 0; kk--) {
      size_t j = talus_col(t, ni, kk);
      if (!one && t->B[j] + t->s[j] + t->w[j] <= F) break;
      hz_hit h = hz_candidate(t, &c->P, j, d, F, B, one);
      if (h.dmg > best.dmg) best = h;
    }
  }
  t->D[jc] += talus_eroding(&c->P, c->step) ? best.dmg : 0.0f;
  t->sig_lo[jc] = best.lo;
  t->sig_hi[jc] = best.hi;
}

/* Every column of live cell (x, y); `one` as in the notes at the top. */
TALUS_HD static inline TALUS_FORCE_INLINE void hz_cell(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, int one) {
  size_t i = talus_idx(t, x, y);
  int n = one ? 1 : t->count[i];
  for (int k = 0; k < n; k++)
    hz_column(t, c, x, y, i, k, one);
}

/* Horizontal erosion of every column of cell (x, y); masked cells and runs
 * with horizontal erosion disabled are left untouched. */
TALUS_HD static inline void k_horizontal(const talus_tile *t, const talus_kctx *c, int x, int y,
                                         double *flows) {
  (void)flows;
  if (!c->P.enable_horizontal) return;
  if (talus_cell_masked(t, talus_idx(t, x, y))) return;
  hz_cell(t, c, x, y, 0);
}

#endif /* TALUS_KERNELS_HORIZONTAL_H */
