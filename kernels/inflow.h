/*
 * inflow.h — the inflow stage (radius 1): how much of what its neighbours
 * send a column under a ceiling can take, so that transport never has to
 * delete water or sand that does not fit.
 *
 * Why. The pipes stage limits each pipe on its own: K_e caps a flux by the
 * receiver's free space C' - W', the slippage by its room. Several
 * neighbours may each send the whole free space of the same column in one
 * step, and transport's clamps (w <= C-B-s, s <= C-B-w) then removed the
 * excess. The ledger booked it (WATER_OVERFILL, SAND_OVERFILL), but a loss
 * booked is still a loss: chasm-rain at 128² deleted 547 m³ of water and
 * 11 m³ of sand that way in 3000 steps.
 *
 * What. For every column k of a cell below its top column (the top column's
 * ceiling is TALUS_TOP: it never overfills), from the limited fluxes and
 * slippage the pipes stage aimed at k:
 *   in_w = dt/l_c²·Σ f_in          (water through the 4 axis pipes)
 *   in_s = Σ a_in                  (sand through the axis and diagonal pipes)
 *   room = C - B - s - w
 *   q_w  = min(1, max(room, 0) / in_w)
 *   q_s  = min(1, max(room - q_w·in_w, 0) / in_s)
 * and transport multiplies every inflow into k (water, its sediment, sand)
 * by k's shares, on both sides of the pipe: the sender pays what the
 * receiver takes. Then w + q_w·in_w <= C-B-s and s + q_s·in_s <= C-B-w' for
 * any own outflow, so the clamps remove nothing. The column's own outflow
 * is not counted as room: it is itself scaled by its receivers' shares, so
 * counting it could promise room that does not appear. Where nothing would
 * overfill the shares are exactly 1 and every byte is as before.
 *
 * Shares are stored as floats rounded towards zero, so a share never
 * promises more than the room. Only columns below the top are written;
 * transport reads a column's share only when it is not its cell's top.
 */
#ifndef TALUS_KERNELS_INFLOW_H
#define TALUS_KERNELS_INFLOW_H
#include "select.h"
#include "state.h"

/* Index of column ci's water (0) or sand (1) share in t->qin. */
TALUS_HD static inline size_t inflow_at(const talus_tile *t, size_t ci, int which) {
  return (size_t)which * (size_t)t->nz * t->plane + ci;
}

/* The share of column k of cell idx for `which` (0 water, 1 sand): 1 for
 * the top column, else what the inflow stage stored. */
TALUS_HD static inline double inflow_share(const talus_tile *t, size_t idx, int k, int which) {
  if (k >= t->count[idx] - 1) return 1.0;
  return (double)t->qin[inflow_at(t, talus_col(t, idx, k), which)];
}

/* min(1, room / in) as a float no larger than the exact quotient. */
TALUS_HD static inline float inflow_ratio(double room, double in) {
  if (!(in > room)) return 1.0f;
  double q = room > 0.0 ? room / in : 0.0;
  float qf = (float)q;
  return (double)qf > q ? talus_nextf(qf, 0) : qf;
}

/* Adds what column kn of neighbour cell nidx sends column k through its
 * axis pipe `opp` (the one facing k's cell) to the running sums: water
 * flux fi [m³/s], sand ai [m] and sediment flux ri = K_r·f [m³/s]; nothing
 * when that pipe leads to another column. `one` (transport's fast path:
 * both cells hold one column) says that it leads to k = 0: the pipes stage
 * points every pipe into a cell of one column at its column 0
 * (pipes_pick), and no column is added between pipes and transport. */
TALUS_HD static inline TALUS_FORCE_INLINE void inflow_axis_col(const talus_tile *t, size_t nidx,
                                                               int kn, int opp, int k, double *fi,
                                                               double *ai, double *ri, int one) {
  size_t nd = talus_dcol(t, nidx, kn, opp);
  if (!one && t->pipe[nd] != k) return;
  *fi += t->f[nd];
  *ai += t->slip[nd];
  *ri += (double)t->kr[talus_col(t, nidx, kn)] * (double)t->f[nd];
}

/* inflow_axis_col over the nn columns of neighbour cell nidx, column by
 * column. The one loop behind transport's inflows and this stage's; a
 * caller that knows nn = 1 calls inflow_axis_col itself, which leaves no
 * loop of one pass in a CPU vector loop (GCC does not remove it before
 * vectorising, and a loop with an inner loop is not vectorised). */
TALUS_HD static inline TALUS_FORCE_INLINE void inflow_axis_from(const talus_tile *t, size_t nidx,
                                                                int nn, int opp, int k, double *fi,
                                                                double *ai, double *ri) {
  for (int kn = 0; kn < nn; kn++)
    inflow_axis_col(t, nidx, kn, opp, k, fi, ai, ri, 0);
}

/* Adds the sand [m] column kn of diagonal neighbour nidx sends column k
 * through its diagonal pipe `opp` (0..3) to *ai; `one` as in
 * inflow_axis_col. */
TALUS_HD static inline TALUS_FORCE_INLINE void
inflow_diagonal_col(const talus_tile *t, size_t nidx, int kn, int opp, int k, double *ai, int one) {
  size_t nd = talus_dcol(t, nidx, kn, opp);
  if (one || t->dpipe[nd] == k) *ai += t->dslip[nd];
}

/* inflow_diagonal_col over the nn columns of diagonal neighbour nidx. */
TALUS_HD static inline TALUS_FORCE_INLINE void
inflow_diagonal_from(const talus_tile *t, size_t nidx, int nn, int opp, int k, double *ai) {
  for (int kn = 0; kn < nn; kn++)
    inflow_diagonal_col(t, nidx, kn, opp, k, ai, 0);
}

/* Water [m³/s] and sand [m] aimed at column k of cell (x, y) through the
 * 4 axis pipes, and sand through the 4 diagonal ones when they are open. */
TALUS_HD static inline void inflow_gather(const talus_tile *t, const talus_kctx *c, int x, int y,
                                          int k, double *fin, double *ain) {
  double rin = 0.0; /* the sediment's flux, which transport alone needs */
  *fin = *ain = 0.0;
  for (int d = 0; d < 4; d++) {
    if (talus_nb_kind(t, c, x, y, d, 0) != TALUS_NB_INSIDE) continue;
    size_t nidx = talus_idx(t, x + talus_dir_dx(d), y + talus_dir_dy(d));
    inflow_axis_from(t, nidx, t->count[nidx], (d + 2) & 3, k, fin, ain, &rin);
  }
  if (!(c->P.enable_slippage && c->P.slip_diagonal)) return;
  for (int j = 0; j < 4; j++) {
    int d = 4 + j;
    if (talus_nb8_kind(t, c, x, y, d, 0) != TALUS_NB_INSIDE) continue;
    size_t nidx = talus_idx(t, x + talus_dir8_dx(d), y + talus_dir8_dy(d));
    inflow_diagonal_from(t, nidx, t->count[nidx], talus_dir8_opp(d) - 4, k, ain);
  }
}

/* The inflow stage for cell (x, y): the shares of every column below the
 * top. Skips masked cells and cells of one column. */
TALUS_HD static inline void k_inflow(const talus_tile *t, const talus_kctx *c, int x, int y,
                                     double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx) || t->count[idx] < 2) return;
  double kdt = (double)c->P.dt / ((double)c->P.cell_size * (double)c->P.cell_size);
  for (int k = 0; k < t->count[idx] - 1; k++) {
    size_t ci = talus_col(t, idx, k);
    double fin, ain;
    inflow_gather(t, c, x, y, k, &fin, &ain);
    double room = (double)t->C[ci] - (double)t->B[ci] - (double)t->s[ci] - (double)t->w[ci];
    float qw = inflow_ratio(room, kdt * fin);
    double left = room - (double)qw * (kdt * fin);
    t->qin[inflow_at(t, ci, 0)] = qw;
    t->qin[inflow_at(t, ci, 1)] = inflow_ratio(left, ain);
  }
}

#endif /* TALUS_KERNELS_INFLOW_H */
