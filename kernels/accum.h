/*
 * accum.h — the run's accumulators (simulation.masks): per cell, summed
 * every step, the water that flowed out of the cell, the solid it lost and
 * the solid it gained. They are persistent fields (t->acc, saved with the
 * state and carried by halo blocks), so tiled, MPI, disk-store and resumed
 * runs give the same bytes for them as one monolithic run.
 *
 * Definitions (both models; metres and cubic metres, per cell)
 * -----------
 * - solid S of a cell: bedrock plus sand of all its columns, as a height:
 *   Σ_k (B_k + s_k) − Σ_{k≥1} C_{k−1} (column k's bedrock starts at the
 *   ceiling of column k−1; column 0's at 0, a datum that cancels in every
 *   difference). Summed in double from the float fields, so a step's change
 *   of a 1000 m high cell keeps its sub-millimetre part.
 * - wear += max(0, S_start − S_end) and deposition += max(0, S_end − S_start)
 *   per step: the net loss or gain of the cell's solid over the step, from
 *   every process (water erosion, deposition, sand slippage, thermal,
 *   collapse). Σ (deposition − wear) · l_c² over the map is therefore the
 *   change of the solid volume, which the mass ledger states.
 * - flow += dt · Σ_k Σ_d f_k,d: the water [m³] that left the cell through its
 *   pipes, the time-integrated discharge.
 * Each cell's accumulators are written by its own cell's bodies only, in
 * step order, so the sums are deterministic whatever the tiling or thread
 * count. The start-of-step solid lives in scratch (t->acc_s0): at a step's
 * start it is a function of the state, so it is never saved.
 */
#ifndef TALUS_KERNELS_ACCUM_H
#define TALUS_KERNELS_ACCUM_H

#include "state.h"

/* The solid S [m] of the cell at idx (see above), in double. */
TALUS_HD static inline double acc_solid(const talus_tile *t, size_t idx) {
  int n = t->count[idx];
  double S = 0.0;
  for (int k = 0; k < n; k++) {
    size_t j = talus_col(t, idx, k);
    S += (double)t->B[j] + (double)t->s[j];
    if (k > 0) S -= (double)t->C[talus_col(t, idx, k - 1)];
  }
  return S;
}

/* Stage acc_begin: records the cell's solid at the step's start. */
TALUS_HD static inline void k_acc_begin(const talus_tile *t, const talus_kctx *c, int x, int y,
                                        double *flows) {
  (void)c, (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (!talus_cell_masked(t, idx)) t->acc_s0[idx] = acc_solid(t, idx);
}

/* Adds a step's outflow `out` [m³/s] and solid change dS [m] to the
 * cell's accumulators, without branches (both acc_end bodies end here):
 * an accumulator only ever adds non-negative values, so adding the 0.0f
 * of a step that did not wear or deposit leaves it as it was. */
TALUS_HD static inline TALUS_FORCE_INLINE void
acc_add_step(const talus_tile *t, const talus_kparams *P, size_t idx, float out, double dS) {
  float *a = t->acc + idx;
  a[TALUS_ACC_FLOW * t->plane] += out * P->dt;
  a[TALUS_ACC_WEAR * t->plane] += dS < 0.0 ? (float)-dS : 0.0f;
  a[TALUS_ACC_DEPOSITION * t->plane] += dS > 0.0 ? (float)dS : 0.0f;
}

/* Stage acc_end: adds the step's outflow, wear and deposition to the
 * cell's accumulators. */
TALUS_HD static inline void k_acc_end(const talus_tile *t, const talus_kctx *c, int x, int y,
                                      double *flows) {
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  float out = 0.0f;
  for (int k = 0; k < t->count[idx]; k++)
    for (int d = 0; d < 4; d++)
      out += t->f[talus_dcol(t, idx, k, d)];
  for (int j = 0; t->fd && j < 4; j++) /* heightfield.neighbours = 8 */
    out += t->fd[(size_t)j * t->plane + idx];
  acc_add_step(t, &c->P, idx, out, acc_solid(t, idx) - t->acc_s0[idx]);
}

/* k_acc_begin and k_acc_end on a live cell of one column (either model;
 * the CPU's vector loops, cpu.c): acc_solid is B + s, and the same
 * additions in the same order without the column loop, so the same bits.
 * `diag` says whether the tile has the diagonal fluxes
 * (heightfield.neighbours = 8). */
TALUS_HD static inline TALUS_FORCE_INLINE void acc_begin_live(const talus_tile *t, size_t idx) {
  t->acc_s0[idx] = 0.0 + ((double)t->B[idx] + (double)t->s[idx]);
}
TALUS_HD static inline TALUS_FORCE_INLINE void
acc_end_live(const talus_tile *t, const talus_kparams *P, size_t idx, int diag) {
  float out = 0.0f;
  for (int d = 0; d < 4; d++)
    out += t->f[(size_t)d * t->plane + idx];
  for (int j = 0; diag && j < 4; j++)
    out += t->fd[(size_t)j * t->plane + idx];
  acc_add_step(t, P, idx, out, (0.0 + ((double)t->B[idx] + (double)t->s[idx])) - t->acc_s0[idx]);
}

#endif /* TALUS_KERNELS_ACCUM_H */
