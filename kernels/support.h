/*
 * support.h — the support check of the layered-stack model (paper §3.5,
 * reference notes §2 step 7): stability initialisation (radius 0), red–black
 * stability propagation (radius 1 per half-sweep) and column collapse and
 * merge (radius 0). Which of them runs at a global step is decided by
 * talus_step_plan (kernels/stages.c), never here.
 *
 * Design notes
 * ------------
 * Geometry. Column k of a cell holds bedrock [F, B] with F = C[k-1] (the
 * floor; TALUS_BOTTOM for k = 0), sand s on top, water w above the sand and
 * air up to its ceiling C. Bedrock thickness t = B - F.
 *
 * Propagation (eq. 26-29). For every column k >= 1 with t > 0:
 *   m = use_weight ? max(t·ρ_b + s·ρ_s + w·ρ_w, 0)·l_c² : 0
 *   p̄ = max over the columns k' of the 4 neighbour cells whose bedrock
 *        overlaps, o = min(B', B) - max(F', F) > 0, of min(l_c·κ_p·o·(o/t), p')
 *   p = max(p̄ - m, p_old)
 * o <= t always (min(B',B) <= B, max(F',F) >= F), so o/t <= 1 and the
 * candidate never exceeds l_c·κ_p·t: no overflow, and t <= 0 (a column with
 * no bedrock) admits no overlap at all — such a column is skipped before
 * any division. Layer 0 of a neighbour always counts as anchored (p' = +max)
 * whatever its stored p, so a stale p in layer 0 can never weaken support.
 * The neighbour's columns are sorted bottom-up, so the scan stops at the
 * first floor at or above B. Suspended sediment r has no weight, as in the
 * reference.
 *
 * Borders. A neighbour outside the *domain* (decided from global
 * coordinates; a tile edge inside the domain is never a border) is, with
 * enable_border_support, infinitely large bedrock of infinite stability:
 * the overlap is the whole column, o = t, so the candidate is
 * l_c·t²/t·κ'_p = l_c·t·κ'_p with κ'_p = border_support, not capped by any
 * p'. (The reference computes this and then overwrites it; here it counts.)
 * Without border support the outside offers nothing. A NoData neighbour
 * offers no support under every NoData policy: it is missing terrain, not
 * rock, and the OUTFLOW/WALL policies describe water, not bedrock.
 *
 * Parity. The red half-sweep updates cells with (gx + gy) odd, the black one
 * cells with (gx + gy) even, from global coordinates. A half-sweep reads only
 * neighbours of the other colour, which it does not write, so no cell reads
 * a value written in the same stage: results are order-, thread- and
 * tile-invariant.
 *
 * Collapse (local, top-down, k = count-1 … 1, with j = k-1 the column below):
 *  1. k collapses when p_k <= 0 or t_k <= b_min. Its bedrock becomes sand
 *     (booked COLLAPSE, the full t_k: no damage is subtracted, fixing the
 *     reference's defect 7), and its sand, water and sediment join column j,
 *     which takes over C_k. j keeps its own B, D, p and fluxes.
 *  2. otherwise, when j is "too close" (C_j - B_j < 0.05·split_size), j and
 *     k merge: the thin gap closes. j's sand in the gap becomes bedrock
 *     (booked MERGE), so the merged bedrock is (B_j - F_j) + s_j + t_k and
 *     B = B_j + s_j + (B_k - C_j): the upper surface drops by the gap's air
 *     and water, which is the paper's "height of the upper column is
 *     adjusted". Water and sediment of both stay in the merged column (on
 *     top of k's sand), which takes over C_k, k's fluxes (its surface is k's
 *     surface), max(D_j, D_k) (the more damaged face keeps its progress
 *     towards a split) and max(p_j, p_k) (the body is anchored if either part
 *     was).
 *  Either way column k is removed and the columns above are compacted
 *  downward, moving every persistent field (B, s, w, C, r, D, p, f[4]); the
 *  vacated top slot is cleared to zeros so stale slots are deterministic.
 *  Top-down order lets a chain cascade in one pass: column j, grown by what
 *  fell on it, is tested next against its own column below. k >= 1, so the
 *  count never drops below 1, and the top column's ceiling stays TALUS_TOP
 *  because the survivor always takes over the removed column's ceiling.
 *
 * No overflow. With the invariants s + w <= C - B and B >= F (kept by the
 * hydraulic kernels), a collapse leaves column j with space
 *   C_k - B_j = (C_j - B_j) + t_k + (C_k - B_k) >= (s_j + w_j) + t_k + (s_k + w_k),
 * exactly its new sand plus water; a merge leaves
 *   C_k - B = (C_k - B_k) + (C_j - B_j - s_j) >= (s_k + w_k) + w_j.
 * So no clamp is needed and nothing is lost: every metre of every material
 * is either kept or booked (COLLAPSE bedrock→sand, MERGE sand→bedrock).
 */
#ifndef TALUS_KERNELS_SUPPORT_H
#define TALUS_KERNELS_SUPPORT_H

#include "select.h"
#include "state.h"

#include <math.h>

/* Stability initialisation of cell (x, y): layer 0 is anchored (+max),
 * every upper column starts unsupported (0). Owns only p of this cell. */
TALUS_HD static inline void k_support_init(const talus_tile *t, const talus_kctx *c, int x, int y,
                                           double *flows) {
  (void)c;
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  int n = t->count[idx];
  for (int k = 0; k < n; k++)
    t->p[talus_col(t, idx, k)] = k == 0 ? TALUS_TOP : 0.0f;
}

/* Best support the columns of neighbour cell nidx offer to a column with
 * bedrock [F, B] of thickness tk > 0; lk = l_c·κ_p. 0 when none overlaps. */
TALUS_HD static inline float support_from_cell(const talus_tile *t, size_t nidx, float F, float B,
                                               float tk, float lk) {
  float best = 0.0f;
  int n = t->count[nidx];
  for (int k = 0; k < n; k++) {
    float Fn = talus_floor(t, nidx, k);
    if (Fn >= B) break; /* floors rise with k: no higher column can overlap */
    size_t ci = talus_col(t, nidx, k);
    float o = talus_fminf(t->B[ci], B) - talus_fmaxf(Fn, F);
    if (!(o > 0.0f)) continue;
    float cap = k == 0 ? TALUS_TOP : t->p[ci];
    best = talus_fmaxf(best, talus_fminf(lk * (o * (o / tk)), cap));
  }
  return best;
}

/* Best support from the 4 neighbours of buffer-local (x, y) for a column
 * with bedrock [F, B], tk = B - F > 0: domain borders per
 * enable_border_support, NoData cells nothing, live cells their columns. */
TALUS_HD static inline float support_best(const talus_tile *t, const talus_kctx *c, int x, int y,
                                          float F, float B, float tk) {
  const talus_kparams *P = &c->P;
  float lk = P->cell_size * P->bedrock_support, best = 0.0f;
  for (int d = 0; d < 4; d++) {
    int nx = x + talus_dir_dx(d), ny = y + talus_dir_dy(d);
    int gx = t->buf.x0 + nx, gy = t->buf.y0 + ny;
    if (gx < 0 || gy < 0 || gx >= c->nx || gy >= c->ny) {
      if (P->enable_border_support) best = talus_fmaxf(best, P->cell_size * tk * P->border_support);
      continue;
    }
    size_t nidx = talus_idx(t, nx, ny);
    if (talus_cell_masked(t, nidx)) continue;
    best = talus_fmaxf(best, support_from_cell(t, nidx, F, B, tk, lk));
  }
  return best;
}

/* One propagation update of every upper column of cell (x, y) (eq. 29).
 * Owns only p of this cell's columns k >= 1. */
TALUS_HD static inline void support_update_cell(const talus_tile *t, const talus_kctx *c, int x,
                                                int y) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  const talus_kparams *P = &c->P;
  float area = P->cell_size * P->cell_size;
  int n = t->count[idx];
  for (int k = 1; k < n; k++) {
    size_t ci = talus_col(t, idx, k);
    float F = talus_floor(t, idx, k), B = t->B[ci], tk = B - F;
    if (!(tk > 0.0f)) continue; /* no bedrock: nothing can hold it */
    float m = 0.0f;
    if (P->use_weight)
      m = talus_fmaxf(tk * P->rho_bedrock + t->s[ci] * P->rho_sand + t->w[ci] * P->rho_water,
                      0.0f) *
          area;
    float sup = support_best(t, c, x, y, F, B, tk);
    t->p[ci] = talus_fmaxf(sup - m, t->p[ci]);
  }
}

/* 1 when global (gx + gy) of buffer-local (x, y) is odd. Unsigned
 * arithmetic keeps the parity right for any sign. */
TALUS_HD static inline int support_odd(const talus_tile *t, int x, int y) {
  return (int)(((uint32_t)(t->buf.x0 + x) + (uint32_t)(t->buf.y0 + y)) & 1u);
}

/* Red half-sweep: updates cells with (gx + gy) odd; the others are untouched. */
TALUS_HD static inline void k_support_red(const talus_tile *t, const talus_kctx *c, int x, int y,
                                          double *flows) {
  (void)flows;
  if (support_odd(t, x, y)) support_update_cell(t, c, x, y);
}

/* Black half-sweep: updates cells with (gx + gy) even. */
TALUS_HD static inline void k_support_black(const talus_tile *t, const talus_kctx *c, int x, int y,
                                            double *flows) {
  (void)flows;
  if (!support_odd(t, x, y)) support_update_cell(t, c, x, y);
}

/* Copies every persistent field of column `from` of the cell into slot `to`. */
TALUS_HD static inline void support_col_move(const talus_tile *t, size_t idx, int from, int to) {
  size_t a = talus_col(t, idx, from), b = talus_col(t, idx, to);
  t->B[b] = t->B[a];
  t->s[b] = t->s[a];
  t->w[b] = t->w[a];
  t->C[b] = t->C[a];
  t->r[b] = t->r[a];
  t->D[b] = t->D[a];
  t->p[b] = t->p[a];
  for (int d = 0; d < 4; d++)
    t->f[talus_dcol(t, idx, to, d)] = t->f[talus_dcol(t, idx, from, d)];
}

/* Removes column k of the cell: shifts the columns above down one slot,
 * clears the vacated top slot to zeros and decrements the count. */
TALUS_HD static inline void support_col_remove(const talus_tile *t, size_t idx, int k) {
  int n = t->count[idx];
  for (int i = k + 1; i < n; i++)
    support_col_move(t, idx, i, i - 1);
  size_t top = talus_col(t, idx, n - 1);
  t->B[top] = t->s[top] = t->w[top] = t->C[top] = 0.0f;
  t->r[top] = t->D[top] = t->p[top] = 0.0f;
  for (int d = 0; d < 4; d++)
    t->f[talus_dcol(t, idx, n - 1, d)] = 0.0f;
  t->count[idx] = (uint8_t)(n - 1);
}

/* Collapse of column k into k-1: its bedrock falls as sand (booked
 * COLLAPSE), its sand, water and sediment join the column below, which
 * takes over its ceiling. Column k itself is not removed here. */
TALUS_HD static inline void support_fold_collapse(const talus_tile *t, size_t idx, int k,
                                                  double *flows) {
  size_t up = talus_col(t, idx, k), lo = talus_col(t, idx, k - 1);
  float tk = t->B[up] - t->C[lo];
  t->s[lo] += t->s[up] + tk;
  t->w[lo] += t->w[up];
  t->r[lo] += t->r[up];
  t->C[lo] = t->C[up];
  flows[TALUS_FLOW_COLLAPSE] += (double)tk;
}

/* Merge of a too-close column k-1 with column k: the gap closes, its sand
 * becomes bedrock (booked MERGE), everything else is kept in slot k-1 (see
 * the design notes for each field). Column k itself is not removed here. */
TALUS_HD static inline void support_fold_merge(const talus_tile *t, size_t idx, int k,
                                               double *flows) {
  size_t up = talus_col(t, idx, k), lo = talus_col(t, idx, k - 1);
  float sand = t->s[lo];
  t->B[lo] = t->B[lo] + sand + (t->B[up] - t->C[lo]);
  t->s[lo] = t->s[up];
  t->w[lo] += t->w[up];
  t->r[lo] += t->r[up];
  t->C[lo] = t->C[up];
  t->D[lo] = talus_fmaxf(t->D[lo], t->D[up]);
  t->p[lo] = talus_fmaxf(t->p[lo], t->p[up]);
  for (int d = 0; d < 4; d++)
    t->f[talus_dcol(t, idx, k - 1, d)] = t->f[talus_dcol(t, idx, k, d)];
  flows[TALUS_FLOW_MERGE] += (double)sand;
}

/* Collapse and merge of cell (x, y) at a support cycle's last step,
 * top-down (see the design notes). Owns every column of this cell and
 * books COLLAPSE and MERGE. */
TALUS_HD static inline void k_collapse(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  float close = 0.05f * c->P.split_size;
  for (int k = t->count[idx] - 1; k >= 1; k--) {
    size_t up = talus_col(t, idx, k), lo = talus_col(t, idx, k - 1);
    if (t->p[up] <= 0.0f || t->B[up] - t->C[lo] <= c->P.min_bedrock)
      support_fold_collapse(t, idx, k, flows);
    else if (t->C[lo] - t->B[lo] < close)
      support_fold_merge(t, idx, k, flows);
    else
      continue;
    support_col_remove(t, idx, k);
  }
}

#endif /* TALUS_KERNELS_SUPPORT_H */
