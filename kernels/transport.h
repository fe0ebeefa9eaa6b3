/*
 * transport.h — the transport stage (radius 1): moves water, suspended
 * sediment and sand along the pipes chosen by the pipes stage, then applies
 * evaporation and petrification, and records the velocity.
 *
 * Inflow into column k comes from every neighbour column whose pipe in the
 * opposite direction points at k. A column subtracts exactly the limited
 * flux / slippage values its receivers add, so the domain total changes
 * only where it is booked: border outflow, clamps, evaporation and
 * petrification. Sums are formed in double and rounded to float once per
 * field, so the unbooked residue is one float rounding per column and step.
 *
 * The reference implementation's transport step (the layered-stack paper's
 * public code), whose clamps lose matter there (its defect 10); here each
 * clamp books what it removes as the ledger flow named on its right:
 *   w = clamp(w - dt/l_c²·Σnet, 0, max(C-B-s, 0))        WATER_OVERFILL
 *   w = max(w - evap·clamp((C-B-s-w)/scale, 0.01, 1)·dt, 0) EVAPORATION
 *   v = (net_R - net_L, net_U - net_D) / (2 l_c·L)     (L = l_c or water.reference_cell)
 *   s = clamp(s - Σa_net, 0, C-B-w)                        SAND_OVERFILL / SAND_CLAMP
 *   p = min(κ_petr·dt·s, s); B += p; s -= p                PETRIFY
 *   r = max(r - dt/l_c²·Σ(K_r·f)_net, 0)                   SEDIMENT_CLAMP
 *
 * Every inflow into a column below its cell's top is first multiplied by
 * that column's share (inflow.h), on the sender's side too, so the clamps
 * of w and s below only ever catch float rounding: nothing that fits is
 * deleted.
 *
 * Sand also moves through the diagonal pipes when pipes.h opened them
 * (sand.neighbours = 8), by the same rule: a column pays its own dslip and
 * collects what each diagonal neighbour column aimed at it.
 *
 * Fast path: `one` nonzero promises a live cell whose 8 neighbours are live
 * and every one of them holds one column (as in pipes.h, with
 * TALUS_ONE_DIAG); no neighbour is classified, no border booked (there is
 * none), no loop over one neighbour column left (inflow_axis_col), no
 * test of where a neighbour's pipe leads (to column 0), and with
 * TALUS_ONE_CELL2 the velocity's division by 2·l_c·L a multiplication by
 * its (exact) reciprocal; the same operations in the same order
 * otherwise. k_transport passes 0.
 */
#ifndef TALUS_KERNELS_TRANSPORT_H
#define TALUS_KERNELS_TRANSPORT_H
#include "inflow.h"
#include "select.h"
#include "state.h"
#include <math.h>

/* Net exchange of one column through its 4 axis pipes: per direction the
 * net water flux nf = out - in [m³/s], and the sums over the directions
 * (in direction order) of the net water flux, sand slippage [m] and
 * sediment flux K_r·f [m³/s]. */
typedef struct transport_net {
  double nf[4], fnet, anet, rnet;
} transport_net;

/* Column k's net exchange: its own outflows less the inflows of every
 * neighbour column whose pipe points back at k. Neighbours outside the
 * domain or NoData send nothing; what column k sends across an outflow
 * border or into a NoData sink is booked here (water and sediment by the
 * water border mode, sand by the slippage mode). One direction at a time,
 * so only the running sums stay live between directions. */
TALUS_HD static inline TALUS_FORCE_INLINE transport_net transport_gather(const talus_tile *t,
                                                                         const talus_kctx *c, int x,
                                                                         int y, int k,
                                                                         double *flows, int one) {
  transport_net n;
  n.fnet = n.anet = n.rnet = 0.0;
  size_t idx = talus_idx(t, x, y);
  float kr = t->kr[talus_col(t, idx, k)];
  double kdt = (double)c->P.dt / ((double)c->P.cell_size * (double)c->P.cell_size);
  /* the shares of what this column receives (inflow.h); 1 on the fast path */
  double qw = one ? 1.0 : inflow_share(t, idx, k, 0), qs = one ? 1.0 : inflow_share(t, idx, k, 1);
  TALUS_UNROLL4 for (int d = 0; d < 4; d++) {
    size_t dc = talus_dcol(t, idx, k, d);
    double fo = t->f[dc], ao = t->slip[dc], ro = (double)kr * (double)t->f[dc];
    double fi = 0.0, ai = 0.0, ri = 0.0;
    talus_nb nb = one ? TALUS_NB_INSIDE : talus_nb_kind(t, c, x, y, d, 0);
    if (nb == TALUS_NB_INSIDE) {
      size_t nidx = talus_idx(t, x + talus_dir_dx(d), y + talus_dir_dy(d));
      int opp = (d + 2) & 3;
      if (!one && t->pipe[dc] >= 0) { /* the receiver takes its share, and only that leaves */
        double rw = inflow_share(t, nidx, t->pipe[dc], 0);
        fo *= rw;
        ro *= rw;
        ao *= inflow_share(t, nidx, t->pipe[dc], 1);
      }
      if (one) /* no loop of one pass (inflow_axis_from) */
        inflow_axis_col(t, nidx, 0, opp, k, &fi, &ai, &ri, one);
      else
        inflow_axis_from(t, nidx, t->count[nidx], opp, k, &fi, &ai, &ri);
      fi *= qw;
      ai *= qs;
      ri *= qw;
    }
    if (!one) {
      if (nb == TALUS_NB_OUTFLOW) {
        flows[TALUS_FLOW_WATER_OUTFLOW] += kdt * fo;
        flows[TALUS_FLOW_SEDIMENT_OUTFLOW] += kdt * ro;
      }
      if (talus_nb_kind(t, c, x, y, d, 1) == TALUS_NB_OUTFLOW) flows[TALUS_FLOW_SAND_OUTFLOW] += ao;
    }
    n.nf[d] = fo - fi;
    n.fnet += n.nf[d];
    n.anet += ao - ai;
    n.rnet += ro - ri;
  }
  return n;
}

/* Net sand slippage [m] of column k through the 4 diagonal pipes (its
 * outflows less the inflows of every diagonal neighbour column whose
 * diagonal pipe points back at k); books what slips off the domain or into
 * a NoData sink. Only called with diagonal slippage on. */
TALUS_HD static inline TALUS_FORCE_INLINE double transport_diagonals(const talus_tile *t,
                                                                     const talus_kctx *c, int x,
                                                                     int y, int k, double *flows,
                                                                     int one) {
  size_t idx = talus_idx(t, x, y);
  double net = 0.0, qs = one ? 1.0 : inflow_share(t, idx, k, 1);
  TALUS_UNROLL4 for (int j = 0; j < 4; j++) {
    int d = 4 + j, opp = talus_dir8_opp(d) - 4;
    size_t dc = talus_dcol(t, idx, k, j);
    double out = t->dslip[dc], in = 0.0;
    talus_nb nb = one ? TALUS_NB_INSIDE : talus_nb8_kind(t, c, x, y, d, 0);
    if (nb == TALUS_NB_INSIDE) {
      size_t nidx = talus_idx(t, x + talus_dir8_dx(d), y + talus_dir8_dy(d));
      if (!one && t->dpipe[dc] >= 0) out *= inflow_share(t, nidx, t->dpipe[dc], 1);
      if (one)
        inflow_diagonal_col(t, nidx, 0, opp, k, &in, one);
      else
        inflow_diagonal_from(t, nidx, t->count[nidx], opp, k, &in);
      in *= qs;
    } else if (talus_nb8_kind(t, c, x, y, d, 1) == TALUS_NB_OUTFLOW) {
      flows[TALUS_FLOW_SAND_OUTFLOW] += out;
    }
    net += out - in;
  }
  return net;
}

/* Clamps v into [lo, hi], booking what the clamp removed into flows[over]
 * and what it added, times under_sign, into flows[under] (the water clamp
 * books added water as a negative overfill; sand and sediment have their
 * own outside -> material flows). */
TALUS_HD static inline double transport_clamp(double v, double lo, double hi, double *flows,
                                              int over, int under, double under_sign) {
  if (v > hi) {
    flows[over] += v - hi;
    return hi;
  }
  if (v < lo) {
    flows[under] += under_sign * (lo - v);
    return lo;
  }
  return v;
}

/* New water depth of column ci after transport and evaporation. */
TALUS_HD static inline float transport_water(const talus_tile *t, const talus_kparams *P, size_t ci,
                                             double net, double *flows) {
  double B = t->B[ci], s = t->s[ci], C = t->C[ci];
  double kdt = (double)P->dt / ((double)P->cell_size * (double)P->cell_size);
  double wv = (double)t->w[ci] - kdt * net;
  double cap = C - B - s > 0.0 ? C - B - s : 0.0;
  float w = (float)transport_clamp(wv, 0.0, cap, flows, TALUS_FLOW_WATER_OVERFILL,
                                   TALUS_FLOW_WATER_OVERFILL, -1.0);
  if (P->evaporation > 0.0f && w > 0.0f) {
    float space = (float)(C - B - s - (double)w);
    float scale = P->evap_space_scale > 0.0f ? space / P->evap_space_scale : 1.0f;
    scale = talus_fminf(talus_fmaxf(scale, 0.01f), 1.0f);
    float we = talus_fmaxf(w - P->evaporation * scale * P->dt, 0.0f);
    flows[TALUS_FLOW_EVAPORATION] += (double)w - (double)we;
    w = we;
  }
  return w;
}

/* Hash stream of petrification rounding for column k (rain uses 0..4). */
#define TRANSPORT_PETRIFY_STREAM 32u

/* B + pe rounded to a float stochastically (expected value B + pe, never
 * more than cap above B): a petrified amount below half an ulp of B would
 * otherwise vanish or stall. The draw u comes from the counter hash. */
TALUS_HD static inline float transport_round_up(double B, double pe, double cap, float u) {
  /* Which way each cell goes is as good as random, so both ways are
   * computed and picked without branches (a mispredicted branch costs
   * more than the other side). */
  double target = B + pe;
  float near = (float)target;
  float lo = talus_pickf((double)near > target, talus_nextf(near, 0), near);
  float hi = talus_nextf(lo, 1);
  double frac = (target - (double)lo) / ((double)hi - (double)lo);
  int up = !((double)hi - B > cap) & !((double)lo == target) & ((double)u < frac);
  return talus_pickf(up, hi, lo);
}

/* New sand thickness after slippage (clamped to the space left by water
 * depth w) and petrification, which raises the stored bedrock top. Sand
 * loses exactly the float change of B, which is what PETRIFY books. */
TALUS_HD static inline void transport_sand(const talus_tile *t, const talus_kctx *c, int x, int y,
                                           int k, double net, float w, double *flows) {
  const talus_kparams *P = &c->P;
  size_t ci = talus_col(t, talus_idx(t, x, y), k);
  double B = t->B[ci], C = t->C[ci];
  double room = C - B - (double)w > 0.0 ? C - B - (double)w : 0.0;
  double s = transport_clamp((double)t->s[ci] - net, 0.0, room, flows, TALUS_FLOW_SAND_OVERFILL,
                             TALUS_FLOW_SAND_CLAMP, 1.0);
  if (P->petrification > 0.0f && s > 0.0) {
    double pe = (double)P->petrification * (double)P->dt * s;
    float u = talus_hash_unit(P->seed, t->buf.x0 + x, t->buf.y0 + y, (uint64_t)c->step,
                              TRANSPORT_PETRIFY_STREAM + (uint32_t)k);
    float Bn = transport_round_up(B, pe < s ? pe : s, s, u);
    double moved = (double)Bn - B;
    t->B[ci] = Bn;
    s -= moved;
    flows[TALUS_FLOW_PETRIFY] += moved;
  }
  t->s[ci] = (float)s;
}

/* Transport of one column: water, evaporation, velocity, sand,
 * petrification and sediment, with border outflow and clamps booked. */
TALUS_HD static inline TALUS_FORCE_INLINE void transport_column(const talus_tile *t,
                                                                const talus_kctx *c, int x, int y,
                                                                int k, double *flows, int one) {
  const talus_kparams *P = &c->P;
  size_t ci = talus_col(t, talus_idx(t, x, y), k);
  transport_net n = transport_gather(t, c, x, y, k, flows, one);
  double anet = n.anet;
  if (talus_one_diag(P, one)) anet += transport_diagonals(t, c, x, y, k, flows, one);
  float w = transport_water(t, P, ci, n.fnet, flows);
  t->w[ci] = w;
  double l2 = (double)P->cell_size * (double)P->cell_size;
  /* the velocity: flux over the pipe's section, l_c·L (pipes_flux's L:
   * l_c², the paper's, or l_c times water.reference_cell, so the speed the
   * erosion laws read is the same on any grid); a power-of-two section
   * (TALUS_ONE_CELL2): 2·l_c·L is one too, and the multiplication by its
   * reciprocal gives the quotient's bits */
  double section = (double)P->cell_size * (double)P->pipe_gain_length;
  if (one & TALUS_ONE_CELL2) {
    double inv = 1.0 / (2.0 * section);
    t->vx[ci] = (float)((n.nf[TALUS_DIR_R] - n.nf[TALUS_DIR_L]) * inv);
    t->vy[ci] = (float)((n.nf[TALUS_DIR_U] - n.nf[TALUS_DIR_D]) * inv);
  } else {
    t->vx[ci] = (float)((n.nf[TALUS_DIR_R] - n.nf[TALUS_DIR_L]) / (2.0 * section));
    t->vy[ci] = (float)((n.nf[TALUS_DIR_U] - n.nf[TALUS_DIR_D]) / (2.0 * section));
  }
  transport_sand(t, c, x, y, k, anet, w, flows);
  double rv = (double)t->r[ci] - (double)P->dt / l2 * n.rnet;
  t->r[ci] = (float)transport_clamp(rv, 0.0, INFINITY, flows, TALUS_FLOW_SEDIMENT_CLAMP,
                                    TALUS_FLOW_SEDIMENT_CLAMP, 1.0);
}

/* Every column of live cell (x, y); `one` as in the notes at the top. */
TALUS_HD static inline TALUS_FORCE_INLINE void
transport_cell(const talus_tile *t, const talus_kctx *c, int x, int y, double *flows, int one) {
  int n = one ? 1 : t->count[talus_idx(t, x, y)];
  for (int k = 0; k < n; k++)
    transport_column(t, c, x, y, k, flows, one);
}

/* The transport stage for cell (x, y): every column. Skips masked cells. */
TALUS_HD static inline void k_transport(const talus_tile *t, const talus_kctx *c, int x, int y,
                                        double *flows) {
  if (talus_cell_masked(t, talus_idx(t, x, y))) return;
  transport_cell(t, c, x, y, flows, 0);
}

#endif /* TALUS_KERNELS_TRANSPORT_H */
