/*
 * thermal.h — thermal erosion with 8 virtual pipes (Jákó & Tóth 2011, §2,
 * eqs. 14–15), in two stages of radius 1 each, for both models:
 *
 *   thermal_out  every cell computes what it sends through each of its 8
 *                pipes (talus_dir8 order; diagonals are √2·l_c long) and
 *                stores it in plane d of t->thermal (thermal_pipe: 8 planes
 *                of the tile's plane size, so a row of cells reads and
 *                writes each pipe as one contiguous run, which the CPU's
 *                vector loops need and the GPU's warps coalesce);
 *   thermal_in   every cell pays its own outflows and collects what its
 *                neighbours sent it (their pipe in the opposite direction).
 *
 * A cell never writes another cell, so the stages are parallel and
 * deterministic, and what one cell pays is exactly what its receivers
 * collect (each pipe value is one float read by both sides; sums are
 * formed in double and rounded once per cell).
 *
 * The amount (per cell and step), with S the surface, S_i a neighbour's,
 * d_i the pipe length and T = tan(talus angle):
 *   e_i  = S − S_i − T·d_i           excess of pipe i over the talus slope
 *   A    = { i : e_i > 0 }           the pipes that carry material
 *   ΔS   = c · max_i e_i / 2         eq. 14 with H = the largest excess
 *   ΔS_i = ΔS · e_i / Σ_A e_k        eq. 15, shares by excess
 *   c    = min(K_t · Δt · (1 − H_c), 2/9), H_c the cell's hardness in [0,1]
 * Deviations from the paper, and why:
 * - H is the largest *excess over the talus slope*, not the largest height
 *   difference: material at the talus angle stays put, so the talus angle
 *   is the slope thermal erosion relaxes to. With the raw difference half
 *   of it would move even from a slope just above talus, leaving ~T/2.
 * - Shares are proportional to the excess e_i (the text writes b^i/Σb^k;
 *   the height difference is meant). With excess shares no pipe moves more
 *   than c·e_i/2, so no single pipe pushes its pair past the talus slope.
 * - The paper's R multiplies the rate yet is called hardness; here the
 *   stored hardness H slows erosion: the factor is 1 − H (H = 1 is
 *   unerodible), so harder rock erodes less.
 * - c ≤ 2/9 ("limited so nothing oscillates"): a cell receives from at most
 *   8 senders, each sending at most c/2 of its largest excess, and sends c/2
 *   of its own; for the steepest pair (k, j) the height difference drops by
 *   at most (c/2)(1 + 8)·e_kj ≤ e_kj, so a pit filled from all sides can
 *   rise to, but never past, its rim's talus slope (no pit-to-peak flip).
 * Borders and NoData cells are walls for thermal erosion: no pipe leads
 * off the domain or into a NoData cell, so no ledger flow is needed for
 * borders and the heightfield's terrain is conserved to float rounding,
 * which is booked (THERMAL_ROUNDING): creep changes every cell by amounts
 * near B's last bit, and unbooked that rounding drifts (2.6e-6 of the
 * material in 2000 steps at 256²).
 *
 * Heightfield model: the surface is the terrain B; B pays and collects.
 * thermal.creep adds linear creep (hillslope diffusion, Culling's law)
 * through the same pipes: each sends D·Δt/l_c²·w_i·(1 − H)·max(S − S_i, 0),
 * w = 2/3 straight and 1/6 diagonal (the isotropic 9-point Laplacian).
 * The talus rule only moves slopes steeper than α, so without it water
 * erosion leaves one-cell crests and flow-parallel streaks standing at
 * any gentler slope; creep rounds them, fastest at the grid's scale
 * (a wave of λ cells decays at D·(2π/λl_c)²). The layered model's loose
 * material creeps by sand.creep (pipes.h).
 *
 * thermal.crests_only keeps only the pipes whose opposite pipe carries an
 * excess too (thermal_crests_only): a one-cell fin, spur or pillar sheds
 * to the talus angle, a cliff or slope with higher ground behind it does
 * not move, so a steep angle can clear what a river cut around on a DEM
 * without shedding the DEM's real cliffs.
 *
 * thermal.bank_angle sheds, at that angle, the part of a step that the run
 * itself cut (thermal_bank_excess): the receiver's lowering since the run
 * began beyond the sender's, read from the run's accumulators (net change
 * N = deposition − wear, kernels/accum.h; the angle turns them on). A
 * river that cuts a slot leaves walls steeper than any hillslope stands
 * (the bare command on the whole Big Tujunga map: a trunk gorge 3–5 cells
 * wide, 70–110 m deep, walls of 90 m over one 30 m cell); their excess
 * over the bank angle falls in, as the walls of a real incising gorge do,
 * and the gorge widens into a V that the river must clear. A DEM's own
 * cliffs (N − N_i = 0 where nothing cut) keep their steepness; a river
 * undercutting one sheds what it cut.
 *
 * Layered model: the surface is the top S = B + s of each cell's topmost
 * column, and only topmost columns send or receive. Their ceiling is
 * TALUS_TOP and the space above a top surface is open sky, so material
 * moving from one top surface down to a lower one never passes a ceiling;
 * a cave under an overhang (a lower column) is never entered, and material
 * never leaves through one. A sender pays first with its loose sand (moved
 * at the full rate, K_t·Δt), then the rest of the eq. 14 amount comes from
 * its bedrock, slowed by (1 − H): that bedrock weathers into sand on its
 * way out (ledger flow THERMAL, bedrock -> sand) and never cuts below the
 * column's floor. Receivers get sand.
 */
#ifndef TALUS_KERNELS_THERMAL_H
#define TALUS_KERNELS_THERMAL_H
#include "select.h"
#include "state.h"

/* The largest step fraction c (see above): 2 / (1 + 8 senders). */
#define THERMAL_MAX_FRACTION (2.0f / 9.0f)

/* The surface thermal erosion acts on at buffer index idx. */
TALUS_HD static inline float thermal_surface(const talus_tile *t, const talus_kparams *P,
                                             size_t idx) {
  if (P->model == TALUS_MODEL_HEIGHTFIELD) return t->B[idx];
  size_t ci = talus_col(t, idx, t->count[idx] - 1);
  return t->B[ci] + t->s[ci];
}

/* Hardness H of the cell: the per-cell field when the tile has one. */
TALUS_HD static inline float thermal_hardness(const talus_tile *t, const talus_kparams *P,
                                              size_t idx) {
  return t->hard ? t->hard[idx] : P->hardness;
}

/* The step fraction c for material of hardness h (0 for loose sand). */
TALUS_HD static inline float thermal_fraction(const talus_kparams *P, float h) {
  float c = P->thermal_rate * P->thermal_dt * (1.0f - h); /* thermal.every: its steps' time */
  return c < 0.0f ? 0.0f : (c > THERMAL_MAX_FRACTION ? THERMAL_MAX_FRACTION : c);
}

/* Offset of 8-direction neighbour d in the buffer: talus_dir8_dx/dy + 1 of
 * each direction packed two bits apiece, so the 8-pipe loops, which the
 * compiler does not unroll, need no per-direction branches. */
TALUS_HD static inline ptrdiff_t thermal_step(const talus_tile *t, int d) {
  int dx = (int)((0x8246u >> (2 * d)) & 3u) - 1, dy = (int)((0x0A19u >> (2 * d)) & 3u) - 1;
  return (ptrdiff_t)dx + (ptrdiff_t)dy * t->pitch;
}

/* Pipe d of the cell at idx in t->thermal (plane d). */
TALUS_HD static inline float *thermal_pipe(const talus_tile *t, size_t idx, int d) {
  return t->thermal + (size_t)d * t->plane + idx;
}

/* talus_dir8_opp without branches: a straight pipe's opposite is straight,
 * a diagonal's diagonal, two steps round either way. */
TALUS_HD static inline int thermal_opp(int d) {
  return (d & 4) | ((d + 2) & 3);
}

/* The cell's live flags (talus_nb8_live) for thermal_out: the heightfield's
 * flux stage already stored them this step; otherwise computed and stored
 * here for thermal_in. */
TALUS_HD static inline unsigned thermal_live(const talus_tile *t, const talus_kctx *c, int x,
                                             int y) {
  size_t idx = talus_idx(t, x, y);
  if (c->P.model == TALUS_MODEL_HEIGHTFIELD && c->P.hf_hydraulic) return t->nb8[idx];
  unsigned live = talus_nb8_live(t, c, x, y);
  t->nb8[idx] = (uint16_t)live;
  return live;
}

/* Sum of 8 values as a fixed tree: the same rounding everywhere, and a
 * dependency chain of 3 additions instead of 8. */
TALUS_HD static inline float thermal_sum8f(const float v[8]) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}
TALUS_HD static inline double thermal_sum8(const double v[8]) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* thermal.crests_only: keeps the excess of a pipe only where the opposite
 * pipe has one too, so material leaves a cell only across a one-cell crest
 * (a fin, a spur or a pillar falling steeper than the talus angle on both
 * sides of an axis or a diagonal), never off a cliff or slope with higher
 * ground behind it. On a DEM a river cutting beside a one-cell spur left it
 * standing as a pillar (the whole Big Tujunga map: 106 m over the gorge's
 * floor on both sides, 30 m wide), which the full rule at 60 degrees
 * brought down but also shed Zion's real cliffs. */
TALUS_HD static inline void thermal_crests_only(float e[8]) {
  float keep[8];
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++)
    keep[d] = e[thermal_opp(d)] > 0.0f ? e[d] : 0.0f;
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++)
    e[d] = keep[d];
}

/* The cell's net change of solid since the run began [m] (thermal.bank_angle;
 * the accumulators are on whenever it is, talus_kparams_derive). */
TALUS_HD static inline float thermal_net(const talus_tile *t, size_t idx) {
  return t->acc[TALUS_ACC_DEPOSITION * t->plane + idx] - t->acc[TALUS_ACC_WEAR * t->plane + idx];
}

/* thermal.bank_angle: the excess of a pipe over the bank slope (`rise` for
 * its length), capped by the part of its drop the run cut, N − N_i (the
 * receiver lowered that much more than the sender since the run began);
 * 0 where the run cut nothing or the drop stays under the bank slope.
 * thermal_excess keeps the larger of it and the talus rule's excess. */
TALUS_HD static inline float thermal_bank_excess(float drop, float rise, float N, float N_i) {
  float cut = N - N_i, ex = drop - rise;
  float e = ex < cut ? ex : cut;
  return e > 0.0f ? e : 0.0f;
}

/* thermal.bank_angle on the 8 pipes of the cell at idx with live flags
 * `live` and drops drop[8] (0 where not live): each e[d] becomes the
 * larger of itself and thermal_bank_excess. A pipe that is not live reads
 * the cell itself as its neighbour (N − N = 0: no excess), so the vector
 * loop's constant 0xFF and the cell-by-cell flags take one body. */
TALUS_HD static inline TALUS_FORCE_INLINE void thermal_banks(const talus_tile *t,
                                                             const talus_kparams *P, size_t idx,
                                                             unsigned live, const float drop[8],
                                                             float e[8]) {
  float bank[2] = {P->thermal_bank_tan * P->cell_size,
                   P->thermal_bank_tan * P->cell_size * 1.41421356f};
  float N = thermal_net(t, idx);
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++) {
    ptrdiff_t off = (live >> d & 1u) ? thermal_step(t, d) : 0;
    float eb = thermal_bank_excess(drop[d], bank[d >> 2], N,
                                   thermal_net(t, (size_t)((ptrdiff_t)idx + off)));
    e[d] = eb > e[d] ? eb : e[d];
  }
}

/* Excess over the talus slope of each of the 8 pipes of cell (x, y) with
 * live flags `live` (0 for walls and pipes that carry nothing), and the
 * drop S − S_i of each (0 where not positive or not live); returns the
 * largest excess, their sum in *esum. */
TALUS_HD static inline float thermal_excess(const talus_tile *t, const talus_kctx *c, int x, int y,
                                            unsigned live, float e[8], float drop[8], float *esum) {
  const talus_kparams *P = &c->P;
  size_t idx = talus_idx(t, x, y);
  float S = thermal_surface(t, P, idx);
  float rise[2] = {P->thermal_tan * P->cell_size, P->thermal_tan * P->cell_size * 1.41421356f};
  float emax = 0.0f;
  for (int d = 0; d < 8; d++) {
    e[d] = drop[d] = 0.0f;
    if (!(live >> d & 1u)) continue;
    float dS = S - thermal_surface(t, P, (size_t)((ptrdiff_t)idx + thermal_step(t, d)));
    drop[d] = talus_pos(dS);
    e[d] = talus_pos(dS - rise[d >> 2]); /* branch-free: the sign of an excess is random */
  }
  if (P->thermal_crests) thermal_crests_only(e);
  if (P->thermal_bank_tan > 0.0f) thermal_banks(t, P, idx, live, drop, e);
  for (int d = 0; d < 8; d++)
    emax = talus_gtf(e[d], emax);
  *esum = thermal_sum8f(e);
  return emax;
}

/* Material the cell sends this step (eq. 14): the heightfield's terrain at
 * its hardness; in the layered model sand first, then weathering bedrock
 * above the top column's floor. */
TALUS_HD static inline float thermal_amount(const talus_tile *t, const talus_kparams *P, size_t idx,
                                            float emax) {
  float h = thermal_hardness(t, P, idx);
  if (P->model == TALUS_MODEL_HEIGHTFIELD) return thermal_fraction(P, h) * emax * 0.5f;
  int top = t->count[idx] - 1;
  size_t ci = talus_col(t, idx, top);
  float want = thermal_fraction(P, 0.0f) * emax * 0.5f, s = t->s[ci];
  if (want <= s) return want;
  float soft = h < 1.0f ? 1.0f - h : 0.0f;
  float rock = (want - s) * soft;
  float room = t->B[ci] - talus_floor(t, idx, top);
  rock = rock < room ? rock : (room > 0.0f ? room : 0.0f);
  return s + rock;
}

/* Stores the cell's 8 pipe outflows [m]: the `total` it sends (eq. 14)
 * shared by excess e[8] (their sum esum), plus, on the heightfield, linear
 * creep of each pipe's drop at the softness 1 − h (0 when thermal.creep is
 * 0: + 0 keeps the bits). Both thermal_out bodies end here. */
TALUS_HD static inline TALUS_FORCE_INLINE void thermal_store(const talus_tile *t,
                                                             const talus_kparams *P, size_t idx,
                                                             const float e[8], const float drop[8],
                                                             float esum, float total, float h) {
  /* total > 0 means esum > 0: the guard only keeps idle vector lanes finite */
  float scale = total > 0.0f ? total / (esum > 0.0f ? esum : 1.0f) : 0.0f;
  float soft = 1.0f - h, creep[2] = {P->tcreep_axis * soft, P->tcreep_diag * soft};
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++)
    *thermal_pipe(t, idx, d) = e[d] * scale + creep[d >> 2] * drop[d];
}

/* Stage thermal_out for cell (x, y): stores the 8 pipe outflows [m] (and
 * the live flags thermal_in reads): the talus rule's share of eq. 14 by
 * excess, plus, on the heightfield, linear creep of each pipe's drop at
 * the cell's softness (0 when thermal.creep is 0: + 0 keeps the bits). */
TALUS_HD static inline TALUS_FORCE_INLINE void
k_thermal_out(const talus_tile *t, const talus_kctx *c, int x, int y, double *flows) {
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  float e[8], drop[8], esum = 0.0f;
  float emax = thermal_excess(t, c, x, y, thermal_live(t, c, x, y), e, drop, &esum);
  float total = emax > 0.0f ? thermal_amount(t, &c->P, idx, emax) : 0.0f;
  thermal_store(t, &c->P, idx, e, drop, esum, total, thermal_hardness(t, &c->P, idx));
}

/* The rules thermal_out_live applies, as bits of a constant of its loop. */
enum { THERMAL_LIVE_CRESTS = 1, THERMAL_LIVE_BANKS = 2 };

/* k_thermal_out on a heightfield cell whose 8 neighbours are live cells
 * (the CPU's vector loops over runs of them, cpu.c): thermal_excess's and
 * k_thermal_out's arithmetic in their order, without the classification
 * and the branches, so the same bits. `rules` (THERMAL_LIVE_*) says
 * whether thermal.crests_only and thermal.bank_angle are on. */
TALUS_HD static inline TALUS_FORCE_INLINE void
thermal_out_live(const talus_tile *t, const talus_kparams *P, size_t idx, int rules) {
  const float *B = t->B + idx;
  float S = B[0], e[8], drop[8], emax = 0.0f;
  float rise[2] = {P->thermal_tan * P->cell_size, P->thermal_tan * P->cell_size * 1.41421356f};
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++) {
    /* talus_pos and talus_gtf as ternaries (the same selects): their SSE
     * scalar intrinsics would keep the row loop scalar */
    float dS = S - B[thermal_step(t, d)], ex = dS - rise[d >> 2];
    drop[d] = dS > 0.0f ? dS : 0.0f;
    e[d] = ex > 0.0f ? ex : 0.0f;
  }
  if (rules & THERMAL_LIVE_CRESTS) thermal_crests_only(e);
  if (rules & THERMAL_LIVE_BANKS) thermal_banks(t, P, idx, 0xFFu, drop, e);
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++)
    emax = e[d] > emax ? e[d] : emax;
  float esum = thermal_sum8f(e), h = thermal_hardness(t, P, idx);
  float amount = thermal_fraction(P, h) * emax * 0.5f, total = emax > 0.0f ? amount : 0.0f;
  thermal_store(t, P, idx, e, drop, esum, total, h);
  t->nb8[idx] = 0xFFu;
}

/* k_thermal_in on a heightfield cell whose 8 neighbours are live cells:
 * thermal_gather's sums and the heightfield's update without branches
 * (a cell that sends and receives nothing keeps its bits and books 0). */
TALUS_HD static inline TALUS_FORCE_INLINE void thermal_in_live(const talus_tile *t, size_t idx,
                                                               double *flows) {
  double o[8], i[8];
  TALUS_UNROLL8
  for (int d = 0; d < 8; d++) {
    size_t n = (size_t)((ptrdiff_t)idx + thermal_step(t, d));
    o[d] = (double)*thermal_pipe(t, idx, d);
    i[d] = (double)*thermal_pipe(t, n, thermal_opp(d));
  }
  double out = thermal_sum8(o), in = thermal_sum8(i);
  double exact = (double)t->B[idx] - out + in;
  float Bn = (float)exact;
  int idle = (out == 0.0) & (in == 0.0); /* no &&: a branch would keep the loop scalar */
  flows[TALUS_FLOW_THERMAL_ROUNDING] += idle ? 0.0 : (double)Bn - exact;
  t->B[idx] = idle ? t->B[idx] : Bn;
}

/* What cell (x, y) sends (out) and receives (in) this step [m]. */
TALUS_HD static inline void thermal_gather(const talus_tile *t, const talus_kctx *c, int x, int y,
                                           double *out, double *in) {
  (void)c;
  size_t idx = talus_idx(t, x, y);
  unsigned live = t->nb8[idx];
  double o[8], i[8];
  for (int d = 0; d < 8; d++) {
    int on = (int)(live >> d & 1u);
    size_t n = on ? (size_t)((ptrdiff_t)idx + thermal_step(t, d)) : idx;
    o[d] = (double)*thermal_pipe(t, idx, d);
    i[d] = on ? (double)*thermal_pipe(t, n, thermal_opp(d)) : 0.0;
  }
  *out = thermal_sum8(o);
  *in = thermal_sum8(i);
}

/* Layered collection on the top column: pay with sand, then bedrock (booked
 * as weathered into sand, never below the floor); receive sand. */
TALUS_HD static inline void thermal_in_layered(const talus_tile *t, size_t idx, double out,
                                               double in, double *flows) {
  int top = t->count[idx] - 1;
  size_t ci = talus_col(t, idx, top);
  double s = t->s[ci], B = t->B[ci], F = talus_floor(t, idx, top);
  double from_sand = out < s ? out : s;
  float Bn = (float)(B - (out - from_sand));
  if ((double)Bn < F) Bn = (float)F;
  flows[TALUS_FLOW_THERMAL] += B - (double)Bn;
  t->B[ci] = Bn;
  t->s[ci] = (float)(s - from_sand + in);
}

/* Stage thermal_in for cell (x, y): pays its outflows, collects inflows. */
TALUS_HD static inline TALUS_FORCE_INLINE void
k_thermal_in(const talus_tile *t, const talus_kctx *c, int x, int y, double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  double out, in;
  thermal_gather(t, c, x, y, &out, &in);
  if (out == 0.0 && in == 0.0) return;
  if (c->P.model == TALUS_MODEL_HEIGHTFIELD) {
    double exact = (double)t->B[idx] - out + in;
    float Bn = (float)exact;
    flows[TALUS_FLOW_THERMAL_ROUNDING] += (double)Bn - exact;
    t->B[idx] = Bn;
  } else
    thermal_in_layered(t, idx, out, in, flows);
}

#endif /* TALUS_KERNELS_THERMAL_H */
