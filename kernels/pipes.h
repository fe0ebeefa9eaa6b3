/*
 * pipes.h — the pipes stage (radius 1): for every column of a cell and each
 * direction, choose the neighbour column the virtual pipe connects to, then
 * compute the column's outflow flux, sand slippage, tilt and the limiters
 * that keep the next transport stage from removing more than a column holds.
 *
 * Writes only the cell's own scratch (pipe, slip, dpipe, dslip, kr, sina)
 * and flux slots; reads the neighbours' heights (B, s, w, C, count), which
 * this stage never changes. Water flows through the 4 axis pipes; sand
 * slips through them and, with sand.neighbours = 8, through 4 diagonal
 * pipes √2·l_c long (dpipe, dslip), whose talus rise is √2 times the
 * axis one: a pile then settles to the same slope in every direction
 * (round), where the 4 axis pipes alone let each row and column settle on
 * its own (stripes down every slope, diamond-shaped piles). Follows the reference notes section 2
 * step 2 and section 6: flux   f = max((1 - δ·dt)·f + dt·g·L·Δh, 0), Δh = min(W, C') - max(W', S)
 *   (L = l_c, the paper's, or water.reference_cell: pipes_flux)
 *   K_e    f *= min(max(C' - W', 0) / (f·dt/l_c² + ε), 1)   (finite C' only)
 *   slip   a = max(min(max((S - S' - T·d)/8, 0)·l_c/d + creep, (C' - B' - s' - w')·room), 0)
 *   K_w, K_r, K_a limiters in that order.
 * Borders: water outflow uses a virtual neighbour B' = own B, s' = w' = 0,
 * C' = ∞ (pipe -2; the stream-power tilt reads the column's own water
 * surface there, pipes_direction); a reflecting border or NoData wall has no pipe (-1) and
 * its flux is set to 0 — the reference keeps the stale flux there, which
 * drains water through a wall. Slippage borders follow outflow_slippage.
 *
 * Fast path. Every helper takes `one`: nonzero (TALUS_ONE, state.h)
 * promises that the cell and its 8 neighbours are live (inside the domain,
 * not NoData) and hold one column each, which the CPU backend checks per
 * cell (kernels/cpu/cpu.c); TALUS_ONE_DIAG in it says whether sand slips
 * diagonally. Then no neighbour is classified and no column picked, and
 * with the helpers force-inlined the constant removes those branches; the
 * floating-point operations and their order are exactly the general
 * path's. The parameters `one` does not carry (erosion.law, erosion.tilt,
 * sand.slippage without diagonals, the slippage range's sign, the NaN test
 * of the room's cap) are bit selects on both paths (talus_pickf; on the
 * fast path talus_fminf_inv):
 * both sides computed, the chosen one's bits kept; as ternaries on a loop
 * invariant they kept GCC 12 from vectorising the CPU's loop ("relevant
 * stmt not supported"). k_pipes (the CPU's other cells and the GPU)
 * passes 0.
 */
#ifndef TALUS_KERNELS_PIPES_H
#define TALUS_KERNELS_PIPES_H
#include "select.h"
#include "state.h"
#include <math.h>

/* l_c / (√2·l_c): the slippage rate share of a diagonal pipe (pipes_slip). */
#define PIPES_DIAGONAL_SHARE 0.70710678f

/* Heights of one column as the pipe formulas see them. */
typedef struct pipes_col {
  float B, s, w, C;
} pipes_col;

TALUS_HD static inline pipes_col pipes_load(const talus_tile *t, size_t ci) {
  pipes_col q = {t->B[ci], t->s[ci], t->w[ci], t->C[ci]};
  return q;
}

/* pipes_load of neighbour column ci; on the fast path (`one`) it is its
 * cell's top column, whose ceiling is TALUS_TOP (state.h): not loaded. */
TALUS_HD static inline TALUS_FORCE_INLINE pipes_col pipes_load_nb(const talus_tile *t, size_t ci,
                                                                  int one) {
  pipes_col q = {t->B[ci], t->s[ci], t->w[ci], one ? TALUS_TOP : t->C[ci]};
  return q;
}

/* The lowest column of neighbour cell nidx that our column (bedrock top B)
 * may flow into: its ceiling is above B and it is not full of water. The
 * top column (ceiling TALUS_TOP) always qualifies, so this never fails for
 * a live cell. */
TALUS_HD static inline TALUS_FORCE_INLINE int pipes_pick(const talus_tile *t, size_t nidx, float B,
                                                         int one) {
  if (one) return 0;
  int n = t->count[nidx];
  for (int k = 0; k < n - 1; k++) {
    size_t ci = talus_col(t, nidx, k);
    float Cn = t->C[ci], Wn = t->B[ci] + t->s[ci] + t->w[ci];
    if (B < Cn && Wn + TALUS_EPS < Cn) return k;
  }
  return n - 1;
}

/* Tangent of the angle of repose between two columns: tan is interpolated
 * (not the angle) from dry to wet by the mean water depth over `range`.
 * With TALUS_ONE_RANGE2 in `one` the range is a power of two, and the
 * division is the multiplication by its reciprocal (exact: the same bits),
 * once per stage instead of once per pipe. */
TALUS_HD static inline TALUS_FORCE_INLINE float pipes_talus(const talus_kparams *P, float w,
                                                            float wn, int one) {
  float depth = 0.5f * (w + wn);
  float m = (one & TALUS_ONE_RANGE2)
                ? talus_fminf(depth * (1.0f / P->slippage_range), 1.0f)
                : talus_pickf(P->slippage_range > 0.0f,
                              talus_fminf(depth / P->slippage_range, 1.0f), 1.0f);
  return P->tan_dry + (P->tan_wet - P->tan_dry) * m;
}

/* New outflow flux [m³/s] from column q to neighbour column n before K_w:
 * damped old flux accelerated by the head difference, capped by the
 * neighbour's free space (K_e) when its ceiling is finite. On the fast path
 * (`one`) every neighbour column is its cell's top, whose ceiling is
 * TALUS_TOP, so the cap is never taken and not computed: a vector loop
 * would compute it, division included, and throw it away.
 * The gain g·L: with the paper's L = l_c (a pipe l_c² in section, l_c
 * long) the flux per metre of width gains g·Δh a second, and a slope's
 * Δh is S·l_c, so a grid twice as fine drives the same slope's water half
 * as hard; with the grid's speed limit (a column sends at most what it
 * holds in a step: l_c/dt) its sheet flow runs slower and deeper (a 128 m
 * plane at a 0.1 slope under chasm-rain's rain: 0.10 / 0.16 / 0.33 m at
 * 2 / 1 / 0.5 m cells). water.reference_cell holds L, and simulation.dt
 * scaled with l_c holds the speed limit: 0.16 / 0.16 / 0.18 m
 * (benchmarks/RESULTS.md, "Water alike on any grid"). */
TALUS_HD static inline TALUS_FORCE_INLINE float pipes_flux(const talus_kparams *P, float f_old,
                                                           pipes_col q, pipes_col n, int one) {
  float lc = P->cell_size, dt = P->dt;
  float W = q.B + q.s + q.w, Wn = n.B + n.s + n.w;
  float dh = talus_fminf(W, n.C) - talus_fmaxf(Wn, q.B + q.s);
  float f = talus_fmaxf(
      (1.0f - P->pipe_damping * dt) * f_old + dt * P->gravity * P->pipe_gain_length * dh, 0.0f);
  if (!one && n.C < TALUS_TOP) {
    float ke = talus_fmaxf(n.C - Wn, 0.0f) / (f * dt / (lc * lc) + TALUS_EPS);
    f *= talus_fminf(ke, 1.0f);
  }
  return f;
}

/* Sand slippage [m] from column q to neighbour column n before K_a, over a
 * pipe `reach` long (l_c, or √2·l_c to a diagonal): the excess over the
 * talus slope, shared over 8 and scaled by `share` (l_c / reach: the rate
 * follows the excess slope, so a diagonal moves 1/√2 of what an axis pipe
 * of the same excess height moves, which keeps a pile's flanks round),
 * plus linear creep (`creep` of the height difference), capped by the
 * receiver's share of its free space. On the fast path (`one`) n is its
 * cell's top column, C = TALUS_TOP = FLT_MAX, and FLT_MAX - B - s - w is
 * FLT_MAX for any height below 2^103 m (half an ulp of FLT_MAX), so the
 * cap is the constant FLT_MAX·slip_room: the same bits. */
TALUS_HD static inline TALUS_FORCE_INLINE float pipes_slip(const talus_kparams *P, pipes_col q,
                                                           pipes_col n, float reach, float share,
                                                           float creep, int one) {
  float T = pipes_talus(P, q.w, n.w, one), drop = q.B + q.s - (n.B + n.s);
  /* creep 0 adds +0: the same bits as without the term */
  float excess =
      talus_fmaxf((drop - T * reach) / 8.0f, 0.0f) * share + creep * talus_fmaxf(drop, 0.0f);
  float room = one ? TALUS_TOP * P->slip_room : (n.C - n.B - n.s - n.w) * P->slip_room;
  return talus_fmaxf(one ? talus_fminf_inv(excess, room) : talus_fminf(excess, room), 0.0f);
}

/* Slippage [m] of column q (no water below it) off the domain border or
 * into a NoData sink over a pipe `reach` long, scaled by `share` as in
 * pipes_slip: its sand above the talus slope, as if the neighbour were
 * bedrock at q's own bedrock top. */
TALUS_HD static inline float pipes_slip_off(const talus_kparams *P, pipes_col q, float reach,
                                            float share) {
  float T = pipes_talus(P, q.w, 0.0f, 0);
  return talus_fmaxf((q.s - T * reach) / 8.0f, 0.0f) * share;
}

/* sin α of the surface from central differences of the four neighbour
 * surface heights h[R,U,L,D]: n = normalize(2l_c, h_R-h_L, 0) ×
 * normalize(0, h_U-h_D, 2l_c) (y up, as in the reference), sin α = √(1-n_y²). */
TALUS_HD static inline float pipes_tilt(const float h[4], float lc) {
  float ax = 2.0f * lc, ay = h[TALUS_DIR_R] - h[TALUS_DIR_L];
  float bz = 2.0f * lc, by = h[TALUS_DIR_U] - h[TALUS_DIR_D];
  float ny = (ax / sqrtf(ax * ax + ay * ay)) * (bz / sqrtf(bz * bz + by * by));
  return sqrtf(talus_fmaxf(1.0f - ny * ny, 0.0f));
}

/* The tilt the erosion law reads with erosion.tilt = downhill: the
 * steepest (pipes_tilt of the neighbour heights h[R,U,L,D]) where the
 * column's outflow f[R,U,L,D] runs down the surface's central gradient,
 * 0 where it climbs or there is none. Read everywhere (the paper), the
 * tilt erodes a scour hole's far rim as if the water ran down it, so the
 * hole deepens and grows: at 0.5 m cells chasm-rain's plateau was pitted
 * with them (benchmarks/RESULTS.md, "Erosion read downhill"). Only the
 * sign is taken from the flow: the descent along it alone (no tilt
 * across the flow) left the 128² chasm's channels too weak to raise the
 * ridge between them (1.6 m at 12 000 steps), and the steepest weighted
 * by how far the flow turns uphill (1 - max(cos, 0)) left the holes
 * (46 of 53 m3 on the test's plateau corner). Not the preset's: it cuts
 * less at the chasm walls' feet too (256²: 9 floor cells undercut at
 * 12 000 steps, not 160). Returns whether the outflow runs down the
 * gradient; pipes_column picks pipes_tilt's value or 0 by it. */
TALUS_HD static inline int pipes_downhill(const float h[4], const float f[4]) {
  float gx = h[TALUS_DIR_R] - h[TALUS_DIR_L], gy = h[TALUS_DIR_U] - h[TALUS_DIR_D];
  float ox = f[TALUS_DIR_R] - f[TALUS_DIR_L], oy = f[TALUS_DIR_U] - f[TALUS_DIR_D];
  return gx * ox + gy * oy < 0.0f;
}

/* Whether a column whose surface the tilt reads at `own` (ground, or
 * water with erosion.law = stream_power: pipes_direction's h_out) lies
 * below all four heights h[R,U,L,D] it sees: a pit. erosion.tilt =
 * no_pits reads no tilt there. The paper's law reads a pit floor's
 * steepest tilt, which is its own rim's, so a pit's still water scours it
 * deeper the deeper it gets; read as none, the pit takes the load the
 * water brings in and fills. Unlike downhill, the foot of a wall the
 * water runs along is no pit and keeps reading the wall (chasm-rain's
 * undercut floor; benchmarks/RESULTS.md, "Pits read no tilt"). */
TALUS_HD static inline int pipes_pit(float own, const float h[4]) {
  return own < talus_fminf(talus_fminf(h[TALUS_DIR_R], h[TALUS_DIR_U]),
                           talus_fminf(h[TALUS_DIR_L], h[TALUS_DIR_D]));
}

/* The height of column q that the erosion law's tilt reads: its ground
 * (the paper's), or its water surface with erosion.law = stream_power
 * (the energy slope along the flow: a still pool has none, so it does not
 * scour itself deeper). */
TALUS_HD static inline TALUS_FORCE_INLINE float pipes_tilt_height(const talus_kparams *P,
                                                                  pipes_col q) {
  return talus_pickf(P->erosion_law == TALUS_LAW_STREAM_POWER, q.B + q.s + q.w, q.B + q.s);
}

/* Whether the law reads no tilt for a column seen at `own`
 * (pipes_tilt_height) with neighbour heights h[R,U,L,D] and outflow
 * f[R,U,L,D]: erosion.tilt = downhill where the outflow does not run
 * downhill, no_pits in a pit. Ints and bit operations, no select on the
 * parameter, so the CPU's loop stays a vector loop (pipes.h's top notes). */
TALUS_HD static inline TALUS_FORCE_INLINE int pipes_tilt_none(const talus_kparams *P, float own,
                                                              const float h[4], const float f[4]) {
  return ((P->erosion_tilt == TALUS_TILT_DOWNHILL) & !pipes_downhill(h, f)) |
         ((P->erosion_tilt == TALUS_TILT_NO_PITS) & pipes_pit(own, h));
}

/* Flux, slippage and tilt height of column q toward direction d; stores the
 * pipe. f_out and a_out receive the unlimited flux and slippage, h_out the
 * surface height seen in that direction. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pipes_direction(const talus_tile *t, const talus_kctx *c, int x, int y, int k, int d, pipes_col q,
                float *f_out, float *a_out, float *h_out, int one) {
  const talus_kparams *P = &c->P;
  size_t idx = talus_idx(t, x, y), dc = talus_dcol(t, idx, k, d);
  talus_nb nb = one ? TALUS_NB_INSIDE : talus_nb_kind(t, c, x, y, d, 0);
  int energy = P->erosion_law == TALUS_LAW_STREAM_POWER; /* pipes_tilt_height */
  *f_out = 0.0f;
  *a_out = 0.0f;
  *h_out = pipes_tilt_height(P, q);
  if (nb == TALUS_NB_INSIDE) {
    size_t nidx = talus_idx(t, x + talus_dir_dx(d), y + talus_dir_dy(d));
    int kn = pipes_pick(t, nidx, q.B, one);
    pipes_col n = pipes_load_nb(t, talus_col(t, nidx, kn), one);
    t->pipe[dc] = (int8_t)kn;
    *f_out = pipes_flux(P, t->f[dc], q, n, one);
    *a_out = talus_pickf((one & TALUS_ONE_DIAG) || P->enable_slippage,
                         pipes_slip(P, q, n, P->cell_size, 1.0f, P->creep_axis, one), 0.0f);
    *h_out = pipes_tilt_height(P, n);
    return;
  }
  if (nb == TALUS_NB_OUTFLOW) {
    pipes_col v = {q.B, 0.0f, 0.0f, TALUS_TOP};
    t->pipe[dc] = -2;
    *f_out = pipes_flux(P, t->f[dc], q, v, 0);
    /* the paper's law reads the virtual neighbour's bare bed; the water
     * surface's tilt (stream_power) keeps the column's own surface set
     * above, no drop across an open face: read as the bare bed, the face
     * dropped by the outlet's depth, which grew as the outlet sank, and
     * the outlet scoured itself a pit (the whole Big Tujunga map, the
     * trunk's outlet: 208 m; 34 m with this, kernels/heightfield.h's
     * base_level has no layered counterpart yet) */
    if (!energy) *h_out = q.B;
  } else {
    t->pipe[dc] = -1;
  }
  if (P->enable_slippage && talus_nb_kind(t, c, x, y, d, 1) == TALUS_NB_OUTFLOW)
    *a_out = pipes_slip_off(P, q, P->cell_size, 1.0f);
}

/* Sand slippage of column q toward diagonal j (talus_dir8 4 + j), √2·l_c
 * away; stores the diagonal's pipe (-1 when none leads there) and returns
 * the unlimited slippage. Only called with slippage on and diagonals on. */
TALUS_HD static inline TALUS_FORCE_INLINE float pipes_diagonal(const talus_tile *t,
                                                               const talus_kctx *c, int x, int y,
                                                               int k, int j, pipes_col q, int one) {
  const talus_kparams *P = &c->P;
  int d = 4 + j;
  size_t dc = talus_dcol(t, talus_idx(t, x, y), k, j);
  float reach = P->cell_size * 1.41421356f;
  talus_nb nb = one ? TALUS_NB_INSIDE : talus_nb8_kind(t, c, x, y, d, 0);
  if (nb == TALUS_NB_INSIDE) {
    size_t nidx = talus_idx(t, x + talus_dir8_dx(d), y + talus_dir8_dy(d));
    int kn = pipes_pick(t, nidx, q.B, one);
    t->dpipe[dc] = (int8_t)kn;
    return pipes_slip(P, q, pipes_load_nb(t, talus_col(t, nidx, kn), one), reach,
                      PIPES_DIAGONAL_SHARE, P->creep_diag, one);
  }
  t->dpipe[dc] = -1;
  if (talus_nb8_kind(t, c, x, y, d, 1) == TALUS_NB_OUTFLOW)
    return pipes_slip_off(P, q, reach, PIPES_DIAGONAL_SHARE);
  return 0.0f;
}

/* One column: directions, then the limiters K_w (flux), K_r (sediment) and
 * K_a (slippage, over the diagonals too when they are on) in the
 * reference's order; stores f, slip, dslip, kr, sina. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pipes_column(const talus_tile *t, const talus_kctx *c, int x, int y, int k, int one) {
  const talus_kparams *P = &c->P;
  size_t idx = talus_idx(t, x, y), ci = talus_col(t, idx, k);
  pipes_col q = pipes_load(t, ci);
  float f[4], a[8], h[4], sf = 0.0f, sa = 0.0f;
  TALUS_UNROLL4 for (int d = 0; d < 4; d++) {
    pipes_direction(t, c, x, y, k, d, q, &f[d], &a[d], &h[d], one);
    sf += f[d];
    sa += a[d];
  }
  int diag = talus_one_diag(P, one);
  TALUS_UNROLL4 for (int j = 0; j < 4; j++) {
    a[4 + j] = diag ? pipes_diagonal(t, c, x, y, k, j, q, one) : 0.0f;
    sa += a[4 + j];
  }
  float l2 = P->cell_size * P->cell_size;
  float kw = talus_fminf(q.w * l2 / (sf * P->dt + TALUS_EPS), 1.0f);
  float sf2 = 0.0f;
  TALUS_UNROLL4 for (int d = 0; d < 4; d++) {
    f[d] *= kw;
    sf2 += f[d];
  }
  float ka = talus_fminf(q.s / (sa + TALUS_EPS), 1.0f);
  TALUS_UNROLL4 for (int d = 0; d < 4; d++) {
    t->f[talus_dcol(t, idx, k, d)] = f[d];
    t->slip[talus_dcol(t, idx, k, d)] = a[d] * ka;
    t->dslip[talus_dcol(t, idx, k, d)] = a[4 + d] * ka;
  }
  t->kr[ci] = talus_fminf(t->r[ci] * l2 / (sf2 * P->dt + TALUS_EPS), 1.0f);
  t->sina[ci] = talus_pickf(pipes_tilt_none(P, pipes_tilt_height(P, q), h, f), 0.0f,
                            pipes_tilt(h, P->cell_size));
}

/* Every column of live cell (x, y); `one` as in the notes at the top. */
TALUS_HD static inline TALUS_FORCE_INLINE void pipes_cell(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, int one) {
  int n = one ? 1 : t->count[talus_idx(t, x, y)];
  for (int k = 0; k < n; k++)
    pipes_column(t, c, x, y, k, one);
}

/* The pipes stage for cell (x, y): every column. No ledger flows (nothing
 * moves until transport). Skips masked cells. */
TALUS_HD static inline void k_pipes(const talus_tile *t, const talus_kctx *c, int x, int y,
                                    double *flows) {
  (void)flows;
  if (talus_cell_masked(t, talus_idx(t, x, y))) return;
  pipes_cell(t, c, x, y, 0);
}

#endif /* TALUS_KERNELS_PIPES_H */
