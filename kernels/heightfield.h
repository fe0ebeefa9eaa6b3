/*
 * heightfield.h — the heightfield model: Mei, Decaudin & Hu's virtual-pipe
 * hydraulic erosion with the extensions of Jákó & Tóth (2011, §2), on one
 * layer per cell: terrain b = B (layer 0 bedrock), water d = w, suspended
 * sediment s = r, outflow flux f[R,U,L,D], velocity (vx, vy) and hardness H.
 *
 * Stages (radius), in the paper's order (kernels/stages.c):
 *   hf_rain   (0) d1 = d + Δt·K_r·r(x,y)                            eq. 1
 *   hf_open   (R) water in the open or between walls (only with
 *                 heightfield.sheet_capacity < 1; R its sheet_reach)
 *   hf_flux   (1) f = max(0, f + Δt·A·g·Δh/l), times K              eqs. 2–4
 *   hf_water  (1) d2 = d1 + ΔV/l_c², velocity, capacity C          eqs. 5–8
 *   hf_erode  (0) dissolve/deposit, water correction, softening,
 *                 evaporation                                 eqs. 9–11, 13
 *   hf_advect (1) sediment moved with the water, in flux form      eq. 12
 *   hf_settle (0) the sample becomes the state
 * (thermal_out / thermal_in of kernels/thermal.h go between, when on.)
 *
 * Readings and deviations (see also thermal.h):
 * - Eq. 3 reads K = max(1, …); the limiter is K = min(1, d1·l_c²/(Σf·Δt)).
 * - Velocity (Mei et al.): u = ΔW_x/(l_c·d̄), d̄ = (d1 + d2)/2, 0 where d̄ = 0.
 *   Because Σf_out·Δt ≤ d1·l_c² (K), |ΔW_x| ≤ ½(Σf_in + Σf_out) ≤
 *   d̄·l_c²/Δt, so |u|·Δt ≤ l_c: sediment carried at u moves at most one
 *   cell a step, and the advection's radius is 1.
 * - Eq. 8: −N·V is taken as the sine of the terrain's slope along the flow,
 *   |∇b·v̂|/√(1 + |∇b|²) (N the unit normal, V the flow direction): flow
 *   straight downhill gets Mei's sin α, flow along a contour none. Its
 *   magnitude is used (the sign depends on which way N points), with a
 *   floor hf_min_tilt so flat channels still carry sediment.
 *   l_max(d1) = clamp(1 − d1/hf_max_depth, 0, 1): erosion fades with depth.
 * - Hardness H ∈ [0,1] slows dissolution by 1 − H (the paper multiplies by
 *   R, which it calls hardness; here harder rock erodes less). Softening
 *   (eq. 11) lowers H towards R_min where sediment is deposited, never
 *   raises it.
 * - Eqs. 9c/10c add the dissolved height to the water and take the
 *   deposited height from it, so b + d is unchanged by erosion. Water is
 *   created and destroyed by that: ledger flows HF_SWELL and HF_SHRINK. The
 *   water taken never exceeds the water there. On DEMs this made water at
 *   18-64x the rain, so heightfield.water_swell turns it off (the DEM
 *   preset does): the water then is only what falls and flows.
 * - The dissolved and deposited amounts are the exact float change of b
 *   (ledger HF_DISSOLVE, HF_DEPOSIT), so sediment receives what the terrain
 *   lost; amounts below half an ulp of b do not happen.
 * - Eq. 12 is a semi-Lagrangian backtrace s(x) = s1(x − v·Δt) in the
 *   paper, which does not conserve mass (it deleted 89 % of the dissolved
 *   material on a walled map). Here the sediment moves in flux form, as in
 *   the layered model: each cell sends the upwind shares of its sediment
 *   that its velocity carries over each face, and what one cell sends its
 *   neighbour collects. HF_ADVECTION books only the per-cell rounding.
 * - Borders: reflecting walls carry no flux; an outflow border is a
 *   virtual neighbour at the cell's terrain height with no water
 *   (WATER_OUTFLOW); sediment is not sent into a wall and leaves across an
 *   outflow border (SEDIMENT_OUTFLOW). NoData cells follow the policy. The
 *   stream-power descent across an outflow face is the slope arriving
 *   from the opposite side (hf_outflow_descent): the terrain runs on.
 * - Base level (heightfield.base_level): a bed never dissolves below the
 *   lowest bed of its neighbours, so an outlet (whose virtual neighbour is
 *   its own height) is fixed and a river cuts down towards it; no pit or
 *   edge trench deepens (hf_water_tail lowers the capacity to what takes
 *   exactly the drop). heightfield.grade keeps a least slope above that
 *   bound, heightfield.grade_share a share of the input's own drop (a
 *   static input plane, t->grade_in: kernels/grade.c).
 * - No dams (heightfield.no_dam): a deposit never lifts a cell's bed above
 *   the lowest water surface (terrain + water) of its 4 neighbours, read
 *   by hf_flux at the step's start (an outflow border's virtual neighbour:
 *   the cell's terrain). A river lays its excess load where there is room
 *   below the water it flows into and carries the rest on; it does not
 *   build a dam across its own course. Bounded only by its depth, a
 *   one-cell river handed more load than it carries rose into a dam,
 *   turned aside, and its dry bed filled (Zion's 82.6 m cells). A lake
 *   still fills up to its surface (its neighbours' surfaces are the lake's).
 *   The bound holds only where the water is confined (at most 2
 *   neighbours hold half the cell's depth: a one-cell river between dry
 *   banks, hf_flux_marks): sheet flow on a fan or a valley floor wets its
 *   neighbours alike and settles its load as it spreads, bounded by its
 *   depth; bounded by the lowest neighbour's surface it could lay nothing
 *   on a slope steeper than its depth over a cell (Big Tujunga's range
 *   front: floors' share of the raised volume 12.7 -> 18.8 %).
 * - 8 pipes (heightfield.neighbours = 8; the paper's future work): each
 *   cell also has an outflow pipe to each diagonal neighbour, √2·l_c long
 *   (gain A·g/(√2·l)), its flux in the persistent planes t->fd (RU, LU,
 *   LD, RD), which the halo blocks (flag FDIAG), the store, the state file
 *   (hf.flux_*) and the GPU's resident tiles carry like f. K limits all 8
 *   outflows; the through-flux takes a diagonal pipe's flow on both axes
 *   (it carries the water l_c in x and l_c in y); the stream-power
 *   descent is D8 (the drop to a diagonal over √2·l_c); no_dam reads the
 *   8 neighbours' surfaces; diagonal borders and NoData cells follow the
 *   axis rules. The sediment moves along the same 8 pipes in flux form:
 *   a cell sends through each pipe the share f·Δt/(d1·l_c²) of its
 *   sediment that the pipe takes of its water (hf_sed_out8), so what
 *   leaves is bounded by what is there (K) and goes where the water goes.
 *   A diagonal canyon narrower than a cell (a chain of pits joined at
 *   their corners) drains instead of holding a lake in each pit. The
 *   stencil's fastest mode is then the stripe (eigenvalue 4 + 4√2, not
 *   8), so the largest stable dt is 0.91 of the 4 pipes'.
 */
#ifndef TALUS_KERNELS_HEIGHTFIELD_H
#define TALUS_KERNELS_HEIGHTFIELD_H
#include "rain.h"
#include "select.h"
#include "state.h"
#include <math.h>

/* Hardness H of the cell at idx. */
TALUS_HD static inline float hf_hardness(const talus_tile *t, const talus_kparams *P, size_t idx) {
  return t->hard ? t->hard[idx] : P->hardness;
}

/* The share k = Δt·(1 − H)·K_s of the excess capacity C − s that a cell
 * of hardness H dissolves a step (eq. 9a; hf_erode_cell), which
 * heightfield.base_level's bound in hf_water_tail must match bit for bit. */
TALUS_HD static inline float hf_dissolve_rate(const talus_kparams *P, float H) {
  float soft = H < 1.0f ? 1.0f - H : 0.0f;
  return P->dt * soft * P->hf_dissolve;
}

/* Offset of neighbour d of a cell in the buffer. */
TALUS_HD static inline ptrdiff_t hf_step(const talus_tile *t, int d) {
  return (ptrdiff_t)talus_dir_dx(d) + (ptrdiff_t)talus_dir_dy(d) * t->pitch;
}

/* True when global cell (gx, gy) lies at least r cells inside the domain:
 * then only NoData cells can make a neighbour within r anything but INSIDE. */
TALUS_HD static inline int hf_interior(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       int r) {
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  return gx >= r && gy >= r && gx < c->nx - r && gy < c->ny - r;
}

/* Offset of 8-direction neighbour d of a cell in the buffer (talus_dir8
 * order: the first 4 are hf_step's). */
TALUS_HD static inline ptrdiff_t hf_step8(const talus_tile *t, int d) {
  return (ptrdiff_t)talus_dir8_dx(d) + (ptrdiff_t)talus_dir8_dy(d) * t->pitch;
}

/* Classifies the neighbours 0..nd-1 (talus_dir8 order; nd 4 or 8) of cell
 * (x, y) as the water stages see them (talus_nb8_kind for water) into n,
 * in and open; a cell away from the domain border reads only the NoData
 * mask. Where there is no live cell the index is the cell's own, so
 * every read stays in the buffer and the formulas below need no
 * branches: a head difference to oneself is 0, a flux read from oneself
 * is scaled by in = 0. */
TALUS_HD static inline void hf_classify(const talus_tile *t, const talus_kctx *c, int x, int y,
                                        int nd, size_t *n, float *in, float *open) {
  size_t idx = talus_idx(t, x, y);
  int interior = hf_interior(t, c, x, y, 1);
  talus_nb nodata =
      c->P.nodata_policy == TALUS_NODATA_OUTFLOW ? TALUS_NB_OUTFLOW : TALUS_NB_REFLECT;
  for (int d = 0; d < nd; d++) {
    size_t m = (size_t)((ptrdiff_t)idx + hf_step8(t, d));
    talus_nb k = interior ? ((t->mask && t->mask[m]) ? nodata : TALUS_NB_INSIDE)
                          : talus_nb8_kind(t, c, x, y, d, 0);
    n[d] = k == TALUS_NB_INSIDE ? m : idx;
    in[d] = k == TALUS_NB_INSIDE ? 1.0f : 0.0f;
    open[d] = k == TALUS_NB_REFLECT ? 0.0f : 1.0f;
  }
}

/* The 4 neighbours of a cell (hf_classify). */
typedef struct hf_nb4 {
  size_t n[4];   /* neighbour index, or the cell's own where it is no live cell */
  float in[4];   /* 1 where the neighbour is a live cell */
  float open[4]; /* 1 where a pipe exists: live cell or outflow */
} hf_nb4;

TALUS_HD static inline hf_nb4 hf_neighbours(const talus_tile *t, const talus_kctx *c, int x,
                                            int y) {
  hf_nb4 q;
  hf_classify(t, c, x, y, 4, q.n, q.in, q.open);
  return q;
}

/* heightfield.neighbours = 8: the flux plane of 8-direction d (talus_dir8
 * order) of a tile, the 4 axes in f, the diagonals in fd. */
TALUS_HD static inline float *hf_fplane(const talus_tile *t, int d) {
  return d < 4 ? t->f + (size_t)d * t->plane : t->fd + (size_t)(d - 4) * t->plane;
}

/* The 8 neighbours of a cell (hf_nb4's fields, talus_dir8 order). */
typedef struct hf_nb8 {
  size_t n[8];
  float in[8], open[8];
} hf_nb8;

TALUS_HD static inline hf_nb8 hf_neighbours8(const talus_tile *t, const talus_kctx *c, int x,
                                             int y) {
  hf_nb8 q;
  hf_classify(t, c, x, y, 8, q.n, q.in, q.open);
  return q;
}

/* Rain on one cell this step [m] (eq. 1): Δt·K_r·r, r from the rain map or
 * water.rain, modulated by the hash noise blend of water.rain_noise drawn
 * in `noise` mode (rain.h, rain_noise_mode; a constant RAIN_NOISE_NONE
 * drops the hash from the code). The
 * amount is computed whatever the rate and kept where rain falls, so a
 * vector loop runs it without branches. */
TALUS_HD static inline TALUS_FORCE_INLINE float hf_rain_amount(const talus_tile *t,
                                                               const talus_kparams *P, size_t idx,
                                                               int gx, int gy, int64_t step,
                                                               int noise) {
  float rate = t->rain ? t->rain[idx] : P->rain;
  float factor = 1.0f;
  if (noise != RAIN_NOISE_NONE) {
    float u = rain_noise_draw(P, gx, gy, step, noise);
    factor = 1.0f - P->rain_noise + P->rain_noise * 2.0f * u;
    factor = factor < 0.0f ? 0.0f : factor;
  }
  float amount = P->dt * P->hf_rain_scale * rate * factor;
  return rate > 0.0f && rain_falls(P, step) ? amount : 0.0f;
}

/* Rain on the live cell at idx, global (gx, gy) (noise: hf_rain_amount):
 * the water rises by the rain, booked as RAIN (the exact float increase).
 * No branches: the CPU backend runs rows of such cells without noise as
 * one vector loop. Returns the new water height. */
TALUS_HD static inline TALUS_FORCE_INLINE float hf_rain_cell(const talus_tile *t,
                                                             const talus_kparams *P, size_t idx,
                                                             int gx, int gy, int64_t step,
                                                             int noise, double *flows) {
  float wn =
      rain_add(t->w[idx], hf_rain_amount(t, P, idx, gx, gy, step, noise), &flows[TALUS_FLOW_RAIN]);
  t->w[idx] = wn;
  return wn;
}

/* Stage hf_rain: rain and the water sources (as in the layered model). */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_rain(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  const talus_kparams *P = &c->P;
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  float wn = hf_rain_cell(t, P, idx, gx, gy, c->step, rain_noise_mode(P), flows);
  for (int i = 0; i < P->num_sources && i < TALUS_MAX_SOURCES; i++) {
    const talus_source *src = &P->sources[i];
    if (!rain_in_source(src, P->cell_size, gx, gy)) continue;
    float u = talus_hash_unit(P->seed, gx, gy, (uint64_t)c->step, 1u + (uint32_t)i);
    wn = rain_add(wn, 2.0f * u * src->strength * P->dt, &flows[TALUS_FLOW_SOURCE]);
    for (int d = 0; d < 4; d++)
      t->f[(size_t)d * t->plane + idx] += src->flux[d] * P->dt;
  }
  t->w[idx] = wn;
}

/* New flux [m³/s] through one pipe before K: the old flux accelerated by
 * the head difference to the neighbour at n. in = 0 marks an outflow
 * border, whose virtual neighbour (n is the cell itself) has the cell's
 * terrain and no water, so the head difference is the depth d. */
TALUS_HD static inline float hf_pipe(const talus_tile *t, float f_old, float h, float d, float gain,
                                     size_t n, float in) {
  return talus_pos(f_old + gain * (h - (t->B[n] + t->w[n]) + (1.0f - in) * d));
}

/* K = min(1, vol/sent) applied to the new fluxes f of the cell at idx and
 * stored; with no water every f is 0 and K does not matter. */
TALUS_HD static inline TALUS_FORCE_INLINE void
hf_flux_store(const talus_tile *t, const talus_kparams *P, size_t idx, float d, const float f[4]) {
  float vol = d * P->cell_size * P->cell_size, sent = ((f[0] + f[1]) + (f[2] + f[3])) * P->dt;
  float K = vol > 0.0f ? vol / (sent > vol ? sent : vol) : 0.0f;
  for (int k = 0; k < 4; k++)
    t->f[(size_t)k * t->plane + idx] = f[k] * K;
}

/* No neighbour's water surface bounds the deposit (heightfield.no_dam): a
 * cell whose every neighbour is a wall, or whose water is not confined. */
#define HF_NO_SURFACE 3.0e38f

/* Whether spreading water loses capacity (heightfield.sheet_capacity < 1):
 * the one test behind hf_open's place in the plan and hf_flux_marks'
 * reading of its mark and its ridge bound. */
TALUS_HD static inline int hf_sheet_on(const talus_kparams *P) {
  return P->hf_sheet < 1.0f;
}

/* How far [cells] hf_open looks along a diagonal for a reach of r along
 * an axis: about r/√2, so both look about as far. */
TALUS_HD static inline int hf_open_diag(int r) {
  return (r * 7 + 5) / 10;
}

/* How far [m] a valley wall rises over the water surface at `room` cells
 * along an axis (or a diagonal, √2 as far): heightfield.sheet_wall of
 * the way. One expression for both of hf_open's bodies (same bits). */
TALUS_HD static inline float hf_open_rise(const talus_kparams *P, int room, int diag) {
  return P->hf_sheet_wall * P->cell_size * (float)room * (diag ? 1.41421356f : 1.0f);
}

/* Walls on both sides: the surfaces sa and sb at the two ends both stand
 * above top (the water surface plus hf_open_rise). Both of hf_open's
 * bodies test each direction with it. */
TALUS_HD static inline int hf_open_pair(float sa, float sb, float top) {
  return (sa > top) & (sb > top);
}

/* Whether the water surface h of global cell (gx, gy) has a wall on both
 * sides along the direction (dx, dy): the surfaces (terrain + water) r
 * cells away each way both stand above h by hf_open_rise. r shrinks to
 * what lies inside the domain (the same cells in every tile); a NoData
 * end is no wall. */
TALUS_HD static inline int hf_open_walled(const talus_tile *t, const talus_kctx *c, size_t idx,
                                          int gx, int gy, int dx, int dy, int r, float h) {
  int room = r;
  if (dx) room = gx < room ? gx : room, room = c->nx - 1 - gx < room ? c->nx - 1 - gx : room;
  if (dy) room = gy < room ? gy : room, room = c->ny - 1 - gy < room ? c->ny - 1 - gy : room;
  if (room <= 0) return 0;
  ptrdiff_t off = ((ptrdiff_t)dx + (ptrdiff_t)dy * t->pitch) * room;
  size_t a = (size_t)((ptrdiff_t)idx + off), b = (size_t)((ptrdiff_t)idx - off);
  if (talus_cell_masked(t, a) || talus_cell_masked(t, b)) return 0;
  float top = h + hf_open_rise(&c->P, room, dx && dy);
  return hf_open_pair(t->B[a] + t->w[a], t->B[b] + t->w[b], top);
}

/* Stage hf_open (radius heightfield.sheet_reach R; planned only where
 * heightfield.sheet_capacity < 1): 1 in hf_cap where the cell's water
 * stands in the open, 0 where it runs between walls: the water surfaces
 * R cells away on both sides along an axis (or about R/√2 along a
 * diagonal) stand above its own by heightfield.sheet_wall of the way.
 * hf_flux_marks lets only open water spread. Its 4 neighbours alone
 * cannot tell a fan from a trunk river two cells wide in a gorge (both
 * wet more than 2 of them): with the share of 0.15 Mandakini's trunk
 * cells raised > 5 m went 6.7 -> 20.8 %. A fan falls away across its
 * flow, a valley floor wider than 2R cells is flat across it: both open;
 * a gorge's walls rise within a few cells. */
TALUS_HD static inline void k_hf_open(const talus_tile *t, const talus_kctx *c, int x, int y,
                                      double *flows) {
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  int r = c->P.hf_sheet_reach, rd = hf_open_diag(r);
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  float h = t->B[idx] + t->w[idx];
  int walled = hf_open_walled(t, c, idx, gx, gy, 1, 0, r, h) ||
               hf_open_walled(t, c, idx, gx, gy, 0, 1, r, h) ||
               hf_open_walled(t, c, idx, gx, gy, 1, 1, rd, h) ||
               hf_open_walled(t, c, idx, gx, gy, 1, -1, rd, h);
  t->hf_cap[idx] = walled ? 0.0f : 1.0f;
}

/* k_hf_open of a live cell at least R cells inside the domain whose 8
 * ends are live cells (the CPU's run, cpu_hf_open_run_end): no clamps,
 * no branches, so it runs as one vector loop. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_open_live(const talus_tile *t,
                                                            const talus_kparams *P, size_t idx) {
  int r = P->hf_sheet_reach, rd = hf_open_diag(r);
  ptrdiff_t p = t->pitch, ox = r, oy = r * p, o1 = rd + rd * p, o2 = rd - rd * p;
  const float *B = t->B + idx, *w = t->w + idx;
  float h = B[0] + w[0], top = h + hf_open_rise(P, r, 0), topd = h + hf_open_rise(P, rd, 1);
  int walled = hf_open_pair(B[ox] + w[ox], B[-ox] + w[-ox], top) |
               hf_open_pair(B[oy] + w[oy], B[-oy] + w[-oy], top) |
               hf_open_pair(B[o1] + w[o1], B[-o1] + w[-o1], topd) |
               hf_open_pair(B[o2] + w[o2], B[-o2] + w[-o2], topd);
  t->hf_cap[idx] = walled ? 0.0f : 1.0f;
}

/* hf_flux's marks for the later stages of its step, from the lowest water
 * surface lo of the cell's neighbours, how many of them hold half its
 * depth (wet), its own surface h, and the beds hb of its 4 axis
 * neighbours (talus_dir order; a wall's HF_NO_SURFACE, an outflow face's
 * the cell's own), whose higher one of each axis' pair (ax: right and
 * left, ay: up and down) bounds a spreading deposit:
 * - hf_cap[idx] (read by hf_water before it writes the capacity there):
 *   1 where the water spreads, else 0. It spreads where it is not
 *   confined (more than 2 wet neighbours) and its surface falls to lo by
 *   more than heightfield.sheet_slope a metre: sheet flow on a fan or a
 *   valley floor; not a lake, a plain's slow river, a dry cell, or a
 *   one-cell river. Where sheet_capacity < 1 also only where hf_open
 *   left 1 there (no valley walls on both sides within
 *   heightfield.sheet_reach): not a trunk river a few cells wide in a
 *   gorge.
 * - hf_sed[idx], the deposit's bound (heightfield.no_dam, read by
 *   hf_erode): where the water is confined, lo: the one-cell river of a
 *   canyon, whose own deposit would dam its course. Where it spreads and
 *   heightfield.sheet_capacity lowers its capacity, the lower of ax and
 *   ay plus sheet_slope of a cell: a deposit never lifts a cell's bed
 *   above both beds of an axis by more (with the lowered capacity, sheet
 *   flow down Big Tujunga's wash laid its load in every other row,
 *   one-cell ridges 10-17 m tall; bounded by the neighbours' water
 *   surfaces instead, a cell in a wash 7-12 m deep rose 10 m over both
 *   neighbours' beds), while a sheet may aggrade evenly, each cell a
 *   little ahead of its neighbours across the flow. Elsewhere none
 *   (HF_NO_SURFACE): sheet flow settles its load as it spreads, bounded
 *   by its depth (a deposit above the sheet leaves the cell dry, which
 *   ends it). */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_flux_marks(const talus_tile *t,
                                                             const talus_kparams *P, size_t idx,
                                                             float lo, float wet, float h,
                                                             const float hb[4]) {
  float ax = hb[0] > hb[2] ? hb[0] : hb[2], ay = hb[1] > hb[3] ? hb[1] : hb[3];
  float step = P->hf_sheet_slope * P->cell_size;
  float fall = h - lo, ridge = (ax < ay ? ax : ay) + step;
  /* hf_open's mark, where it ran (hf_sheet_on); read whatever it is, so
   * the vector loop loads it unconditionally */
  float mark = t->hf_cap[idx];
  int sheet = hf_sheet_on(P), in_open = sheet ? mark > 0.5f : 1;
  int spreads = wet > 2.0f && fall > step && in_open;
  float sheet_bound = spreads && sheet ? ridge : HF_NO_SURFACE;
  t->hf_sed[idx] = wet <= 2.0f ? lo : sheet_bound;
  t->hf_cap[idx] = spreads ? 1.0f : 0.0f;
}

/* hf_flux of a cell whose 4 neighbours are live cells (hf_pipe with in = 1,
 * spelled out; its marks, hf_flux_marks, to hf_sed and hf_cap): no classification and no branches,
 * so the CPU backend runs it over whole rows of interior cells as one vector loop. The selects are
 * plain ternaries, which a vector loop turns into blends; the live flags
 * are the caller's to store. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_flux_live(const talus_tile *t,
                                                            const talus_kparams *P, size_t idx) {
  /* Pointers at the cell and offsets from it: GCC then sees the
   * neighbours' loads as contiguous in x (indices as size_t sums it
   * gathered lane by lane). */
  const float *B = t->B + idx, *w = t->w + idx, *F = t->f + idx;
  float d = w[0], h = B[0] + d, gain = P->dt * P->hf_flux_gain, f[4], lo = HF_NO_SURFACE;
  float wet = 0.0f, half = 0.5f * d, hb[4];
  for (int k = 0; k < 4; k++) {
    ptrdiff_t n = hf_step(t, k);
    float hn = B[n] + w[n], fk = F[(ptrdiff_t)k * (ptrdiff_t)t->plane] + gain * (h - hn);
    f[k] = fk > 0.0f ? fk : 0.0f;
    lo = hn < lo ? hn : lo;
    wet += w[n] >= half ? 1.0f : 0.0f;
    hb[k] = B[n];
  }
  hf_flux_store(t, P, idx, d, f);
  /* stored whatever heightfield.no_dam says (hf_advect overwrites it
   * before hf_settle reads it): a store under the flag kept GCC from
   * vectorising this loop (hf_flux 7 -> 32 ms a step at 2048²) */
  hf_flux_marks(t, P, idx, lo, wet, h, hb);
}

/* hf_flux_store over the 8 pipes (heightfield.neighbours = 8): K over all
 * 8 outflows. */
TALUS_HD static inline TALUS_FORCE_INLINE void
hf_flux_store8(const talus_tile *t, const talus_kparams *P, size_t idx, float d, const float f[8]) {
  float vol = d * P->cell_size * P->cell_size;
  float sent = (((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]))) * P->dt;
  float K = vol > 0.0f ? vol / (sent > vol ? sent : vol) : 0.0f;
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++) {
    t->f[(size_t)k * t->plane + idx] = f[k] * K;
    t->fd[(size_t)k * t->plane + idx] = f[4 + k] * K;
  }
}

/* hf_flux_live with the 8 pipes (heightfield.neighbours = 8): the diagonal
 * pipes are √2·l long (gain hf_flux_gain_diag); the no_dam bound over
 * the 8 neighbours to hf_sed. Branch-free, as hf_flux_live. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_flux_live8(const talus_tile *t,
                                                             const talus_kparams *P, size_t idx) {
  const float *B = t->B + idx, *w = t->w + idx, *F = t->f + idx, *FD = t->fd + idx;
  float d = w[0], h = B[0] + d, f[8], lo = HF_NO_SURFACE, wet = 0.0f, half = 0.5f * d, hb[4];
  float gain = P->dt * P->hf_flux_gain, gaind = P->dt * P->hf_flux_gain_diag;
  ptrdiff_t plane = (ptrdiff_t)t->plane;
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++) {
    ptrdiff_t n = hf_step8(t, k), m = hf_step8(t, 4 + k);
    float hn = B[n] + w[n], hm = B[m] + w[m];
    float fk = F[k * plane] + gain * (h - hn), fm = FD[k * plane] + gaind * (h - hm);
    f[k] = fk > 0.0f ? fk : 0.0f;
    f[4 + k] = fm > 0.0f ? fm : 0.0f;
    lo = hn < lo ? hn : lo;
    lo = hm < lo ? hm : lo;
    wet += (w[n] >= half ? 1.0f : 0.0f) + (w[m] >= half ? 1.0f : 0.0f);
    hb[k] = B[n];
  }
  hf_flux_store8(t, P, idx, d, f);
  hf_flux_marks(t, P, idx, lo, wet, h, hb);
}

/* hf_flux of a cell that is not fully live, with nd = 4 or 8 pipes: the
 * pipes classified (hf_classify); an outflow border or NoData sink, axis or
 * diagonal, is a virtual neighbour (the cell's terrain, no water). */
TALUS_HD static inline void hf_flux_border(const talus_tile *t, const talus_kctx *c, int x, int y,
                                           int nd) {
  const talus_kparams *P = &c->P;
  size_t idx = talus_idx(t, x, y), n[8];
  float d = t->w[idx], h = t->B[idx] + d, f[8], in[8], open[8], lo = HF_NO_SURFACE, wet = 0.0f;
  float hb[4];
  hf_classify(t, c, x, y, nd, n, in, open);
  for (int k = 0; k < nd; k++) {
    float gain = P->dt * (k < 4 ? P->hf_flux_gain : P->hf_flux_gain_diag);
    f[k] = hf_pipe(t, hf_fplane(t, k)[idx], h, d, gain, n[k], in[k]) * open[k];
    float hn = in[k] > 0.0f ? t->B[n[k]] + t->w[n[k]] : t->B[idx];
    lo = open[k] > 0.0f && hn < lo ? hn : lo;
    wet += in[k] > 0.0f && t->w[n[k]] >= 0.5f * d ? 1.0f : 0.0f;
    /* a wall: no bound; an outflow face's virtual neighbour: the cell's own bed */
    if (k < 4) hb[k] = open[k] > 0.0f ? (in[k] > 0.0f ? t->B[n[k]] : t->B[idx]) : HF_NO_SURFACE;
  }
  if (nd == 8)
    hf_flux_store8(t, P, idx, d, f);
  else
    hf_flux_store(t, P, idx, d, f);
  hf_flux_marks(t, P, idx, lo, wet, h, hb);
}

/* Stage hf_flux (eqs. 2–4): outflow fluxes [m³/s] from the head difference,
 * scaled by K so one step never sends more than the cell's water. As the
 * step's first stage with neighbours it records the cell's live flags
 * (t->nb8) for the later ones, and its marks over its open neighbours
 * (hf_flux_marks: the deposit's bound in hf_sed, which hf_advect
 * overwrites after hf_erode has read it; whether the water spreads in
 * hf_cap, which hf_water overwrites); all four neighbours live is
 * the fast path. */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_flux(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows) {
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  const talus_kparams *P = &c->P;
  unsigned live = talus_nb8_live(t, c, x, y);
  t->nb8[idx] = (uint16_t)live;
  if (P->hf_diagonal && live == 0xFFu)
    hf_flux_live8(t, P, idx);
  else if (!P->hf_diagonal && (live & 15u) == 15u)
    hf_flux_live(t, P, idx);
  else
    hf_flux_border(t, c, x, y, P->hf_diagonal ? 8 : 4);
}

/* Transport capacity (eq. 8) of a cell with velocity (u, v), water d1 and
 * terrain gradient (gx, gy): K_c·|v|·max(sin of the slope along the flow,
 * min_tilt)·l_max(d1). */
TALUS_HD static inline float hf_capacity(const talus_kparams *P, float gx, float gy, float u,
                                         float v, float d1) {
  float along = fabsf(gx * u + gy * v) / sqrtf(1.0f + gx * gx + gy * gy);
  float floor_ = P->hf_min_tilt * sqrtf(u * u + v * v);
  float lmax = 1.0f - d1 * P->hf_inv_depth;
  return P->hf_capacity * (along > floor_ ? along : floor_) * (lmax > 0.0f ? lmax : 0.0f);
}

/* Transport capacity [m] of the stream-power law (erosion.law =
 * stream_power) of a cell with water depth d, through-flux (dwx, dwy)
 * [m³/s] and steepest descent `drop` (tangent, to the lowest of its 4
 * neighbours): C = K_c·d·(√q·S − θ_c)⁺, q = |ΔW|/l_c the unit discharge
 * [m²/s] over the width w = min(l_c, heightfield.river_width)
 * (hf_flow_width), S the sine of the descent (at least min_tilt). Carried at the
 * water's speed v = q/d this is a sediment flux C·v = K_c·q^1.5·S (less
 * the threshold): the concentration it allows grows with the water
 * gathered upstream, not with the speed of thin sheet flow, so channels
 * cut, confluences stay below capacity, hillslopes below θ_c stay, and
 * where the slope eases (valley floors, fans) the load settles. The
 * descent, unlike a central difference, sees the cell's own height: a pit
 * stops cutting and a bump is cut first, so no odd-even pits grow. No
 * depth fade (deep water is where the discharge is). The width: a river
 * narrower than its cell carries its discharge Q on its own width, not
 * the cell's; read over l_c, q = Q/l_c shrank with the cell and so did
 * the sediment flux capacity, C·v·l_c = K_c·Q^1.5·S/√l_c (0.60x at
 * 82.6 m against 30 m for the same river). Over a fixed width it is
 * K_c·Q^1.5·S/√w on any cell wider than w. sqrtf only, so the
 * CPU's vector loop computes it lane by lane as the scalar body does. */
TALUS_HD static inline float hf_stream_capacity(const talus_kparams *P, float drop, float dwx,
                                                float dwy, float depth) {
  float sine = drop / sqrtf(1.0f + drop * drop);
  float q = sqrtf(dwx * dwx + dwy * dwy) / P->hf_flow_width;
  return P->hf_capacity * depth * talus_stream_power(P, q, sine, P->hf_min_tilt);
}

/* Drop [m] from the cell whose terrain is at B to the lowest of its 4
 * neighbours at B + off[k] (0 where there is none: no drop), 0 where
 * every neighbour is higher. */
TALUS_HD static inline float hf_drop(const float *B, const ptrdiff_t off[4]) {
  float b = B[0], lo = b;
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++)
    lo = B[off[k]] < lo ? B[off[k]] : lo;
  return b - lo;
}

/* How heightfield.base_level bounds dissolving on tile t, a constant of
 * the CPU's vector loops: 0 not at all, 1 at the lowest neighbour's bed
 * plus grade·l_c, 2 that plus grade_share of the input's drop
 * (t->grade_in, filled where the share is on: talus_hf_grade_in). */
TALUS_HD static inline int hf_base_mode(const talus_tile *t, const talus_kparams *P) {
  return !P->hf_base_level ? 0 : (t->grade_in && P->hf_grade_share > 0.0f ? 2 : 1);
}

/* The steepest descent `lo` of a cell at an outflow border or NoData
 * sink, where the terrain runs on beyond the map: across an open face
 * with no live cell the slope continues as it arrives from the opposite
 * neighbour (a free outfall, not a flat). Read as no drop, every valley
 * that leaves the map had a flat last cell, where the stream-power
 * capacity fell to its floor and the load the droplets handed to the
 * river settled into a dam across the outlet (Big Tujunga 360², 4000
 * steps: the border row of a valley raised up to 20 m, a one-cell ridge
 * 10 m tall up its axis). */
TALUS_HD static inline float hf_outflow_descent(const talus_tile *t, const hf_nb4 *q, size_t idx,
                                                float cell_size, float lo) {
  for (int k = 0; k < 4; k++) {
    int o = (k + 2) & 3;
    float rise = (t->B[q->n[o]] - t->B[idx]) / cell_size;
    if (q->open[k] > q->in[k] && q->in[o] > 0.0f && rise > lo) lo = rise;
  }
  return lo;
}

/* Inflows fi[R,U,L,D] of a cell [m³/s] and its terrain gradient g[0..1]:
 * central differences, one-sided where a neighbour is no live cell; g[2]
 * the steepest descent [tangent] (hf_drop over l_c, across an open face
 * with no live cell hf_outflow_descent's), g[3] the drop [m] (hf_drop: an
 * open face with no live cell drops nothing, so an outlet has none). The
 * slow path of hf_water; books outflow across outflow borders. */
TALUS_HD static inline void hf_border_inflow(const talus_tile *t, const talus_kctx *c, int x, int y,
                                             float fi[4], float g[4], double *flows) {
  size_t idx = talus_idx(t, x, y);
  hf_nb4 q = hf_neighbours(t, c, x, y);
  double kdt = (double)c->P.dt / ((double)c->P.cell_size * (double)c->P.cell_size);
  for (int k = 0; k < 4; k++) {
    fi[k] = t->f[(size_t)((k + 2) & 3) * t->plane + q.n[k]] * q.in[k];
    if (q.open[k] > q.in[k])
      flows[TALUS_FLOW_WATER_OUTFLOW] += kdt * (double)t->f[(size_t)k * t->plane + idx];
  }
  float sx = (q.in[TALUS_DIR_R] + q.in[TALUS_DIR_L]) * c->P.cell_size;
  float sy = (q.in[TALUS_DIR_U] + q.in[TALUS_DIR_D]) * c->P.cell_size;
  float hx = t->B[q.n[TALUS_DIR_R]] - t->B[q.n[TALUS_DIR_L]];
  float hy = t->B[q.n[TALUS_DIR_U]] - t->B[q.n[TALUS_DIR_D]];
  g[0] = sx > 0.0f ? hx * (1.0f / sx) : 0.0f;
  g[1] = sy > 0.0f ? hy * (1.0f / sy) : 0.0f;
  ptrdiff_t off[4];
  for (int k = 0; k < 4; k++)
    off[k] = (ptrdiff_t)q.n[k] - (ptrdiff_t)idx;
  g[3] = hf_drop(t->B + idx, off);
  g[2] = hf_outflow_descent(t, &q, idx, c->P.cell_size, g[3] / c->P.cell_size);
}

/* hf_water from the cell's outflows fo, inflows fi and terrain gradient g
 * (g[2] the steepest descent): new water, velocity and capacity. Returns the water the rounding
 * clamp d2 >= 0 added as a negative height (WATER_OVERFILL), else 0. */
TALUS_HD static inline TALUS_FORCE_INLINE double hf_water_tail(const talus_tile *t,
                                                               const talus_kparams *P, size_t idx,
                                                               double net, float dwx, float dwy,
                                                               const float g[4], int base);
TALUS_HD static inline TALUS_FORCE_INLINE double
hf_water_finish(const talus_tile *t, const talus_kparams *P, size_t idx, const float fo[4],
                const float fi[4], const float g[4], int base) {
  /* Sums as fixed trees: short dependency chains, the same rounding everywhere. */
  double net = (((double)fi[0] + (double)fi[1]) + ((double)fi[2] + (double)fi[3])) -
               (((double)fo[0] + (double)fo[1]) + ((double)fo[2] + (double)fo[3]));
  float dwx = 0.5f * (fi[TALUS_DIR_L] - fo[TALUS_DIR_L] + fo[TALUS_DIR_R] - fi[TALUS_DIR_R]);
  float dwy = 0.5f * (fi[TALUS_DIR_D] - fo[TALUS_DIR_D] + fo[TALUS_DIR_U] - fi[TALUS_DIR_U]);
  return hf_water_tail(t, P, idx, net, dwx, dwy, g, base);
}

/* hf_water_finish with the 8 pipes (talus_dir8 order): the through-flux
 * takes each diagonal pipe's flow on both axes it moves along (a diagonal
 * pipe carries its water l_c in x and l_c in y), and the cell's sediment
 * share scale kr = Δt/(d1·l_c²) (the part of its water one m³/s of
 * outflow takes this step) goes to hf_advect. */
TALUS_HD static inline TALUS_FORCE_INLINE double
hf_water_finish8(const talus_tile *t, const talus_kparams *P, size_t idx, const float fo[8],
                 const float fi[8], const float g[4], int base) {
  double net = ((((double)fi[0] + (double)fi[1]) + ((double)fi[2] + (double)fi[3])) +
                (((double)fi[4] + (double)fi[5]) + ((double)fi[6] + (double)fi[7]))) -
               ((((double)fo[0] + (double)fo[1]) + ((double)fo[2] + (double)fo[3])) +
                (((double)fo[4] + (double)fo[5]) + ((double)fo[6] + (double)fo[7])));
  float e[8];
  for (int k = 0; k < 8; k++)
    e[k] = fo[k] - fi[k]; /* net outflow through pipe k */
  /* R, RU, RD move +x; L, LU, LD -x; U, RU, LU +y; D, LD, RD -y */
  float dwx = 0.5f * (((e[0] + e[4]) + e[7]) - ((e[2] + e[5]) + e[6]));
  float dwy = 0.5f * (((e[1] + e[4]) + e[5]) - ((e[3] + e[6]) + e[7]));
  float l = P->cell_size, d1 = t->w[idx];
  float inv = P->dt / ((d1 > 0.0f ? d1 : 1.0f) * l * l);
  t->kr[idx] = d1 > 0.0f ? inv : 0.0f;
  return hf_water_tail(t, P, idx, net, dwx, dwy, g, base);
}

/* The rest of hf_water from the net inflow [m³/s] and the through-flux
 * (dwx, dwy): new water, velocity and capacity; `base` is
 * heightfield.base_level (a constant of the CPU's vector loops,
 * CPU_LIVE_LANES, so a run without the rule does none of its work). */
TALUS_HD static inline TALUS_FORCE_INLINE double hf_water_tail(const talus_tile *t,
                                                               const talus_kparams *P, size_t idx,
                                                               double net, float dwx, float dwy,
                                                               const float g[4], int base) {
  float l = P->cell_size;
  double kdt = (double)P->dt / ((double)l * (double)l);
  float d1 = t->w[idx];
  double d2 = (double)d1 + kdt * net, clamp = d2 < 0.0 ? d2 : 0.0;
  float w2 = (float)(d2 < 0.0 ? 0.0 : d2), dm = 0.5f * (d1 + w2);
  /* The division runs whatever dm is (a vector loop cannot skip it for
   * some lanes), its result is kept only where dm > 0. */
  float inv = 1.0f / (l * (dm > 0.0f ? dm : 1.0f));
  inv = dm > 0.0f ? inv : 0.0f;
  float u = dwx * inv, v = dwy * inv;
  t->w[idx] = w2;
  t->vx[idx] = u;
  t->vy[idx] = v;
  float cap = hf_capacity(P, g[0], g[1], u, v, d1);
  float stream = hf_stream_capacity(P, g[2], dwx, dwy, dm);
  cap = P->erosion_law == TALUS_LAW_STREAM_POWER ? stream : cap;
  /* heightfield.sheet_capacity: where the water spreads (hf_flux_marks
   * left 1 in hf_cap: unconfined, its surface falling, in the open) it
   * keeps that share of its capacity. A river's wash load
   * (dem-heightfield's capacity 200, set for the trunk canyons) stayed
   * far below capacity wherever it went, so nothing settled where it
   * left its channel and its own incision lowered the valley floors (Big
   * Tujunga's range front: floors -1.03 m net, 19 % of the raised
   * volume; with the preset's 0.1 +0.14 m, 33 %). Spreading water is
   * shallower and slower than the one-cell river the grid reads, so its
   * load settles on fans and valley floors, while a confined river, a
   * river between a gorge's walls (hf_open) and a lake keep their
   * capacity. */
  cap = t->hf_cap[idx] > 0.5f ? cap * P->hf_sheet : cap;
  /* heightfield.base_level: a bed never dissolves below the lowest bed
   * of its neighbours (g[3], the drop; an outlet's virtual neighbour is
   * its own height, so it has none: a fixed base level). Without it the
   * outlet took its slope from upstream (hf_outflow_descent), each cut
   * steepened it, and a trench ran up the river: 5.5 km deep at the west
   * edge of the whole Big Tujunga map (the bare command), 414 m at Fort
   * Worth's east edge, 303 m at Zion's. hf_erode dissolves k·(C − s) a
   * step (k = hf_dissolve_rate); a capacity C
   * above s + drop / k would take more than the drop, so it is lowered to
   * that, which takes exactly the drop and keeps the rate of any smaller
   * excess. A capacity below the load s (a deposit) is never above it.
   * Where k is 0 nothing dissolves. A river thus cuts only down towards
   * its outlet: on an integer DEM's flat (cells on end of equal height)
   * the last cell above a step cuts first, then the one above it.
   * heightfield.grade raises the bound by grade·l_c: with it alone, a
   * river cut to its outlet's height all the way up (min_tilt keeps the
   * capacity of a flat bed above its load), a dead-flat trench: Zion's
   * west-edge valley planed 2.5 km upstream to the outlet's 1024 m, 26-50
   * m deep. With grade 0 the bound is the drop itself (g[3] >= 0). But a
   * plain's rivers run flatter than any grade, so heightfield.grade_share
   * (base 2, hf_base_mode) raises it instead by a share of the input's
   * own drop beyond the DEM's noise (t->grade_in, kernels/grade.c): a
   * knick keeps that share of its fall, a plain's river is as free as
   * before. */
  float k = hf_dissolve_rate(P, hf_hardness(t, P, idx));
  float keep = base == 2 ? P->hf_grade_share * t->grade_in[idx] : 0.0f;
  float drop = g[3] - P->hf_grade * l - keep;
  drop = drop > 0.0f ? drop : 0.0f;
  float reach = drop / (k > 0.0f ? k : 1.0f);
  float most = t->r[idx] + (k > 0.0f ? reach : cap);
  most = base ? most : cap;
  t->hf_cap[idx] = cap < most ? cap : most;
  return clamp;
}

/* hf_water of a cell whose 4 neighbours are live cells: central
 * differences, no classification and no branches, so the CPU backend runs
 * whole rows of interior cells as one vector loop. Returns the clamp of
 * hf_water_finish for the caller to book. */
TALUS_HD static inline TALUS_FORCE_INLINE double
hf_water_live(const talus_tile *t, const talus_kparams *P, size_t idx, int base) {
  float fo[4], fi[4], g[4];
  ptrdiff_t n[4], p = t->pitch, plane = (ptrdiff_t)t->plane;
  const float *B = t->B + idx, *F = t->f + idx; /* as in hf_flux_live */
  for (int k = 0; k < 4; k++) {
    n[k] = hf_step(t, k);
    fo[k] = F[k * plane];
    fi[k] = F[((k + 2) & 3) * plane + n[k]];
  }
  float inv2l = 1.0f / (2.0f * P->cell_size); /* the slow path's 1/sx, bitwise */
  g[0] = (B[1] - B[-1]) * inv2l;
  g[1] = (B[p] - B[-p]) * inv2l;
  g[3] = hf_drop(B, n);
  g[2] = g[3] / P->cell_size;
  return hf_water_finish(t, P, idx, fo, fi, g, base);
}

/* The steepest descent and the drop with the 8 pipes, from the axes'
 * (g[2], g[3]) and the diagonals' drop `diag` (hf_drop over the diagonal
 * neighbours): the larger descent, the drop to diagonals over √2·l_c
 * (D8), and the larger drop. */
TALUS_HD static inline void hf_descent_diag(float g[4], float diag, float cell_size) {
  float slope = diag / (cell_size * 1.41421356f);
  g[2] = slope > g[2] ? slope : g[2];
  g[3] = diag > g[3] ? diag : g[3];
}

/* hf_water_live with the 8 pipes (every neighbour live). */
TALUS_HD static inline TALUS_FORCE_INLINE double
hf_water_live8(const talus_tile *t, const talus_kparams *P, size_t idx, int base) {
  float fo[8], fi[8], g[4];
  ptrdiff_t n[4], m[4], p = t->pitch, plane = (ptrdiff_t)t->plane;
  const float *B = t->B + idx, *F = t->f + idx, *FD = t->fd + idx;
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++) {
    n[k] = hf_step8(t, k);
    m[k] = hf_step8(t, 4 + k);
    fo[k] = F[k * plane];
    fi[k] = F[((k + 2) & 3) * plane + n[k]];
    fo[4 + k] = FD[k * plane];
    fi[4 + k] = FD[((k + 2) & 3) * plane + m[k]]; /* the opposite diagonal: 4 + (k + 2) % 4 */
  }
  float inv2l = 1.0f / (2.0f * P->cell_size);
  g[0] = (B[1] - B[-1]) * inv2l;
  g[1] = (B[p] - B[-p]) * inv2l;
  g[3] = hf_drop(B, n);
  g[2] = g[3] / P->cell_size;
  hf_descent_diag(g, hf_drop(B, m), P->cell_size);
  return hf_water_finish8(t, P, idx, fo, fi, g, base);
}

/* hf_water with the 8 pipes on a cell not fully live: hf_border_inflow's
 * inflows, gradient and descent over the axes, the diagonals' inflows
 * and outflow across open faces with no live cell, and their descent. */
TALUS_HD static inline double hf_water8(const talus_tile *t, const talus_kctx *c, int x, int y,
                                        double *flows) {
  size_t idx = talus_idx(t, x, y);
  float fo[8], fi[8], g[4];
  hf_border_inflow(t, c, x, y, fi, g, flows);
  hf_nb8 q = hf_neighbours8(t, c, x, y);
  double kdt = (double)c->P.dt / ((double)c->P.cell_size * (double)c->P.cell_size);
  ptrdiff_t m[4];
  for (int k = 0; k < 8; k++) {
    fo[k] = hf_fplane(t, k)[idx];
    if (k < 4) continue;
    fi[k] = hf_fplane(t, talus_dir8_opp(k))[q.n[k]] * q.in[k];
    if (q.open[k] > q.in[k]) flows[TALUS_FLOW_WATER_OUTFLOW] += kdt * (double)fo[k];
    m[k - 4] = (ptrdiff_t)q.n[k] - (ptrdiff_t)idx;
  }
  hf_descent_diag(g, hf_drop(t->B + idx, m), c->P.cell_size);
  return hf_water_finish8(t, &c->P, idx, fo, fi, g, hf_base_mode(t, &c->P));
}

/* Stage hf_water (eqs. 5–8): new water height from the net flux, velocity
 * from the through-flux, and the capacity for hf_erode. Books the rounding
 * clamp d2 >= 0 (and border outflow on the slow path). */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_water(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  double clamp;
  int base = hf_base_mode(t, &c->P);
  if (c->P.hf_diagonal) {
    clamp =
        t->nb8[idx] == 0xFFu ? hf_water_live8(t, &c->P, idx, base) : hf_water8(t, c, x, y, flows);
  } else if ((t->nb8[idx] & 15u) == 15u) {
    clamp = hf_water_live(t, &c->P, idx, base);
  } else {
    float fo[4], fi[4], g[4];
    for (int k = 0; k < 4; k++)
      fo[k] = t->f[(size_t)k * t->plane + idx];
    hf_border_inflow(t, c, x, y, fi, g, flows);
    clamp = hf_water_finish(t, &c->P, idx, fo, fi, g, base);
  }
  if (clamp < 0.0) flows[TALUS_FLOW_WATER_OVERFILL] += clamp; /* water added by the clamp */
}

/* hf_erode of the cell at idx (eroding: the step is past erosion.spinup),
 * without branches, so the CPU backend runs rows of live cells as one
 * vector loop: dissolution (eqs. 9a–c; C > s) at rate (1 − H)·K_s, the
 * water rising by the same height, and deposition (eqs. 10a–c; s > C) at
 * rate K_d, the water sinking by the deposited height (never below 0),
 * at most the water depth a step (the load settles out of the water
 * column above the bed: unbounded, a bank cell under 5.5 m of water took
 * 11 m a step from 446 m of suspended load and rose into a one-cell tower),
 * and with heightfield.no_dam, where the water is confined, at most up to
 * the lowest water surface of its neighbours (hf_flux left the bound in
 * hf_sed, hf_flux_marks: no dam across a river),
 * with softening (eq. 11) of the cell's hardness, are both computed and
 * the one that happens is kept; deposition does not happen where the
 * rounding of b would take more than is suspended. Then evaporation
 * d = d3·(1 − K_e·Δt) (eq. 13). Flows of what did not happen are booked
 * as 0, which changes no sum. */
TALUS_HD static inline TALUS_FORCE_INLINE void
hf_erode_cell(const talus_tile *t, const talus_kparams *P, size_t idx, int eroding, double *flows) {
  float C = t->hf_cap[idx], s = t->r[idx], b = t->B[idx], d = t->w[idx];
  float H = hf_hardness(t, P, idx);
  /* dissolution */
  float Xs = hf_dissolve_rate(P, H) * (C - s);
  Xs = Xs < C - s ? Xs : C - s;
  float bs = b - Xs;
  double ms = (double)b - (double)bs;
  float ds = P->hf_water_swell ? (float)((double)d + ms) : d;
  float ss = (float)((double)s + ms);
  /* deposition and softening */
  float excess = s - C, Xd = P->dt * P->hf_deposit * excess;
  Xd = Xd < excess ? Xd : excess;
  Xd = Xd < d ? Xd : d;
  float room = P->hf_no_dam ? t->hf_sed[idx] - b : Xd; /* up to the neighbours' surface */
  room = room > 0.0f ? room : 0.0f;
  Xd = Xd < room ? Xd : room;
  float bd = b + Xd;
  double md = (double)bd - (double)b;
  /* the water a deposit may take: its depth where water swells and
   * shrinks with the load, none otherwise. Written as one min against an
   * invariant bound, not a select on the flag: GCC 12 does not vectorise
   * a double select on a loop-invariant flag beside float compares, and
   * the bound on Xd above left this loop scalar (hf_erode 15 -> 29 ms a
   * step at 2048²). */
  double dmax = P->hf_water_swell ? (double)d : 0.0;
  double taken = md < dmax ? md : dmax;
  float sd = (float)((double)s - md), dd = (float)((double)d - taken);
  float Hn = H - P->dt * P->hf_softening * P->hf_dissolve * excess;
  Hn = Hn > P->hf_min_hardness ? Hn : P->hf_min_hardness;
  /* which happens */
  int dissolves = eroding && C > s;
  int deposits = eroding && !dissolves && s > C && !(md > (double)s);
  flows[TALUS_FLOW_HF_DISSOLVE] += dissolves ? ms : 0.0;
  flows[TALUS_FLOW_HF_SWELL] += dissolves ? (double)ds - (double)d : 0.0;
  flows[TALUS_FLOW_HF_DEPOSIT] += deposits ? md : 0.0;
  flows[TALUS_FLOW_HF_SHRINK] += deposits ? taken : 0.0;
  b = dissolves ? bs : deposits ? bd : b;
  s = dissolves ? ss : deposits ? sd : s;
  d = dissolves ? ds : deposits ? dd : d;
  if (t->hard && deposits && !(H <= P->hf_min_hardness)) t->hard[idx] = Hn;
  float keep = 1.0f - P->hf_evaporation * P->dt;
  float de = d * (keep > 0.0f ? keep : 0.0f);
  flows[TALUS_FLOW_EVAPORATION] += (double)d - (double)de;
  t->B[idx] = b;
  t->r[idx] = s;
  t->w[idx] = de;
}

/* Stage hf_erode: dissolve or deposit against the capacity (from step
 * erosion.spinup on), then evaporation (hf_erode_cell). */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_erode(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  hf_erode_cell(t, &c->P, idx, talus_eroding(&c->P, c->step), flows);
}

/* Sediment [m] a cell holding r with velocity (vx, vy) sends towards
 * direction d this step (donor cell, upwind): the share of its sediment the
 * velocity component along d carries over one cell, (v·e_d)⁺·Δt/l_c, with
 * the shares of the 4 directions scaled down together when they would
 * exceed the whole; nothing where the cell's water does not flow out
 * through that face (fd, its outflow flux towards d, is 0). The velocity
 * is the cell's through-flow: a cell of a river turning a corner (in from
 * the left, out at the top) has both components positive, and without the
 * face's own flow it sent half its load into the dry bank on its right,
 * where no water moves it again and all of it settles (single-cell towers
 * of hundreds of metres along diagonal rivers fed by the droplets'
 * load). kdl = Δt/l_c. Sender and receiver both call this with the same
 * floats, so what one pays is bit for bit what the other gets. */
TALUS_HD static inline TALUS_FORCE_INLINE float hf_sed_out(float r, float vx, float vy, float fd,
                                                           int d, float kdl) {
  float a = (fabsf(vx) + fabsf(vy)) * kdl, scale = a > 1.0f ? 1.0f / a : 1.0f;
  float along = vx * (float)talus_dir_dx(d) + vy * (float)talus_dir_dy(d);
  return along > 0.0f && fd > 0.0f ? r * (along * kdl * scale) : 0.0f;
}

/* The end of hf_advect: the cell's new sediment sn = (r − out) + in,
 * clamped at 0 (booked as SEDIMENT_CLAMP), rounded once to float (the
 * rounding booked as HF_ADVECTION) into hf_sed. No branches. */
TALUS_HD static inline TALUS_FORCE_INLINE void
hf_advect_finish(const talus_tile *t, size_t idx, float r, double out, double in, double *flows) {
  double sn = ((double)r - out) + in;
  flows[TALUS_FLOW_SEDIMENT_CLAMP] += sn < 0.0 ? -sn : 0.0;
  sn = sn < 0.0 ? 0.0 : sn;
  float s = (float)sn;
  t->hf_sed[idx] = s;
  flows[TALUS_FLOW_HF_ADVECTION] += (double)s - sn;
}

/* hf_advect of a cell whose 4 neighbours are live cells: every share is
 * sent and collected, no classification and no branches, so the CPU
 * backend runs rows of such cells as one vector loop. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_advect_live(const talus_tile *t, float kdl,
                                                              size_t idx, double *flows) {
  const float *R = t->r + idx, *VX = t->vx + idx, *VY = t->vy + idx, *F = t->f + idx;
  float r = R[0], vx = VX[0], vy = VY[0];
  ptrdiff_t plane = (ptrdiff_t)t->plane;
  double out = 0.0, in = 0.0;
  TALUS_UNROLL4
  for (int d = 0; d < 4; d++) {
    ptrdiff_t n = hf_step(t, d), o = (ptrdiff_t)((d + 2) & 3);
    out += (double)hf_sed_out(r, vx, vy, F[d * plane], d, kdl);
    in += (double)hf_sed_out(R[n], VX[n], VY[n], F[o * plane + n], (int)o, kdl);
  }
  hf_advect_finish(t, idx, r, out, in, flows);
}

/* Sediment [m] a cell holding r sends through a pipe with the 8 pipes
 * (heightfield.neighbours = 8): the share of its water that the pipe's
 * outflow f takes this step, f·kr (kr = Δt/(d1·l_c²), hf_water_finish8),
 * of its sediment. The shares of a cell's pipes add to at most its
 * sediment (K bounds the outflows by the water, eq. 4), so no scaling is
 * needed, and the sediment goes exactly where the water goes: the
 * velocity's axis shares of hf_sed_out cannot be split between an axis
 * and the two diagonals beside it. Sender and receiver use the same
 * floats. */
TALUS_HD static inline TALUS_FORCE_INLINE float hf_sed_out8(float r, float f, float kr) {
  return r * (f * kr);
}

/* hf_advect with the 8 pipes, every neighbour live: branch-free. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_advect_live8(const talus_tile *t, size_t idx,
                                                               double *flows) {
  const float *R = t->r + idx, *KR = t->kr + idx, *F = t->f + idx, *FD = t->fd + idx;
  float r = R[0], kr = KR[0];
  ptrdiff_t plane = (ptrdiff_t)t->plane;
  double out = 0.0, in = 0.0;
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++) {
    ptrdiff_t n = hf_step8(t, k), o = (ptrdiff_t)((k + 2) & 3);
    out += (double)hf_sed_out8(r, F[k * plane], kr);
    in += (double)hf_sed_out8(R[n], F[o * plane + n], KR[n]);
  }
  TALUS_UNROLL4
  for (int k = 0; k < 4; k++) {
    ptrdiff_t n = hf_step8(t, 4 + k), o = (ptrdiff_t)((k + 2) & 3);
    out += (double)hf_sed_out8(r, FD[k * plane], kr);
    in += (double)hf_sed_out8(R[n], FD[o * plane + n], KR[n]);
  }
  hf_advect_finish(t, idx, r, out, in, flows);
}

/* hf_advect with the 8 pipes on a cell not fully live: nothing into a
 * wall, what crosses an outflow face or enters a NoData sink leaves
 * (SEDIMENT_OUTFLOW). The same sums in the same order as hf_advect_live8. */
TALUS_HD static inline void hf_advect8(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  size_t idx = talus_idx(t, x, y);
  hf_nb8 q = hf_neighbours8(t, c, x, y);
  float r = t->r[idx], kr = t->kr[idx];
  double out = 0.0, in = 0.0, gone = 0.0;
  for (int k = 0; k < 8; k++) {
    double sent = q.open[k] > 0.0f ? (double)hf_sed_out8(r, hf_fplane(t, k)[idx], kr) : 0.0;
    out += sent;
    gone += q.in[k] > 0.0f ? 0.0 : sent;
    size_t n = q.n[k];
    if (q.in[k] > 0.0f)
      in += (double)hf_sed_out8(t->r[n], hf_fplane(t, talus_dir8_opp(k))[n], t->kr[n]);
  }
  flows[TALUS_FLOW_SEDIMENT_OUTFLOW] += gone;
  hf_advect_finish(t, idx, r, out, in, flows);
}

/* Stage hf_advect (eq. 12, in flux form): the sediment moves with the water
 * from cell to cell, each cell sending its upwind shares (hf_sed_out) and
 * collecting what its neighbours send it, so the transport moves sediment
 * and deletes none. Into a wall nothing is sent; across an outflow border
 * or into a NoData sink it leaves (SEDIMENT_OUTFLOW). Sums are in double
 * and rounded once per cell: that rounding, and a clamp at 0 where float
 * shares add to an ulp more than the cell held, are booked (HF_ADVECTION,
 * SEDIMENT_CLAMP), so the transport's own net is float rounding. */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_advect(const talus_tile *t, const talus_kctx *c,
                                                           int x, int y, double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx)) return;
  if (c->P.hf_diagonal) {
    if (t->nb8[idx] == 0xFFu)
      hf_advect_live8(t, idx, flows);
    else
      hf_advect8(t, c, x, y, flows);
    return;
  }
  float kdl = c->P.dt / c->P.cell_size, r = t->r[idx], vx = t->vx[idx], vy = t->vy[idx];
  if ((t->nb8[idx] & 15u) == 15u) { /* the 4 neighbours are live */
    hf_advect_live(t, kdl, idx, flows);
    return;
  }
  hf_nb4 q = hf_neighbours(t, c, x, y);
  double out = 0.0, in = 0.0, gone = 0.0;
  for (int d = 0; d < 4; d++) {
    float fd = t->f[(size_t)d * t->plane + idx];
    double sent = q.open[d] > 0.0f ? (double)hf_sed_out(r, vx, vy, fd, d, kdl) : 0.0;
    out += sent;
    gone += q.in[d] > 0.0f ? 0.0 : sent;
    size_t n = q.n[d];
    int o = (d + 2) & 3;
    if (q.in[d] > 0.0f)
      in += (double)hf_sed_out(t->r[n], t->vx[n], t->vy[n], t->f[(size_t)o * t->plane + n], o, kdl);
  }
  flows[TALUS_FLOW_SEDIMENT_OUTFLOW] += gone;
  hf_advect_finish(t, idx, r, out, in, flows);
}

/* hf_settle of a live cell: the advected sediment becomes its state. */
TALUS_HD static inline TALUS_FORCE_INLINE void hf_settle_cell(const talus_tile *t, size_t idx) {
  t->r[idx] = t->hf_sed[idx];
}

/* Stage hf_settle: the advected sediment becomes the cell's state. */
TALUS_HD static inline TALUS_FORCE_INLINE void k_hf_settle(const talus_tile *t, const talus_kctx *c,
                                                           int x, int y, double *flows) {
  (void)c;
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  if (!talus_cell_masked(t, idx)) hf_settle_cell(t, idx);
}

#endif /* TALUS_KERNELS_HEIGHTFIELD_H */
