/*
 * vertical.h — vertical erosion (reference step 6, paper §3.3–3.4): water
 * erodes the bedrock under it (floor) and over it (ceiling) into sand,
 * dissolves sand into suspended sediment up to a transport capacity or
 * deposits the excess, and horizontal-erosion damage recovers (heals).
 *
 * Stage radius 0: reads and writes only its own cell (a ceiling eroded by
 * column k is the floor of column k+1 of the same cell). Columns are visited
 * bottom-up, so column k+1 sees the floor that column k's ceiling erosion
 * left. Ledger: CEILING_EROSION and BEDROCK_EROSION (bedrock -> sand),
 * DISSOLVE and DEPOSIT; recovery moves no matter.
 *
 * Switches: erosion, dissolution and deposition follow enable_vertical.
 * Damage recovery follows enable_horizontal instead: damage only arises from
 * horizontal erosion, so recovery belongs to that process, and a run with
 * vertical erosion off must still let damage (and with it splits) recover.
 *
 * Base level (erosion.base_level). A cell beside an outflow face (the
 * domain's open border or a NoData sink) erodes no bedrock (vt_outlet):
 * its water leaves across a face with no drop (pipes.h), so nothing holds
 * its bed up, and an outlet that sank steepened the reach above it, which
 * sank in turn: a trench ran up the river from the edge (dem-default on
 * the whole Big Tujunga map: 27.7 m; with a capacity that carries the
 * load out, 88 m). With the rule the outlets are fixed and rivers cut
 * down towards them, as heightfield.base_level does for the heightfield
 * model. Sand still leaves and settles there. With the rule the CPU's
 * fast body runs only cells whose 8 neighbours are live
 * (cpu_vertical_run_end), so a cell it runs (`one`) is never an outlet.
 *
 * Capacity fade (erosion.capacity_fade). The water's depth fade
 * (1 - tanh(2w/w_max)) damps the floor's incision, which grows with depth
 * (a pool that deepened would dig faster); with the key off it no longer
 * damps the capacity, so a deep river carries the load its discharge
 * gives instead of burying its own floor (dem-default: Mandakini's trunk
 * cells raised > 5 m 30 % -> 1.8 %), and a still pool, whose surface has
 * no tilt, carries nothing either way.
 *
 * Deviation from the reference (its defect 8): ceiling erosion is gated by
 * the same 1 mm water ramp as floor erosion, and only a column with a column
 * above has a ceiling to erode, so a dry gap no longer eats its roof.
 *
 * The depth fade's tanh is talus_tanhf (fmath.h), not libm's: a libm call
 * would keep the CPU's cells out of vector loops, and CUDA's tanhf rounds
 * differently from glibc's.
 *
 * Fast path: vt_cell with `one` nonzero (TALUS_ONE, state.h) promises a
 * live cell of one column, with erosion.base_level one whose 8 neighbours
 * are live too (the CPU backend checks it), and whether erosion
 * runs (TALUS_ONE_ERODE); the constant count removes the ceiling and the
 * column loop, the operations are the general path's. k_vertical passes 0.
 */
#ifndef TALUS_KERNELS_VERTICAL_H
#define TALUS_KERNELS_VERTICAL_H

#include "fmath.h"
#include "select.h"
#include "state.h"
#include <math.h>

/* Hermite smoothstep from e0 to e1 (0 below e0, 1 above e1). */
TALUS_HD static inline float vt_smoothstep(float e0, float e1, float v) {
  float u = (v - e0) / (e1 - e0);
  u = u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u);
  return u * u * (3.0f - 2.0f * u);
}

/* The erosion factors of one column: remapped slope and speed, the 1 mm
 * water-presence ramp and the depth-faded water factor ws (the paper's
 * law); the excess stream power and the wet depth (erosion.law =
 * stream_power, which replaces slope·speed·ws by power·depth in the
 * floor's incision and in the capacity), and which law is in force. */
typedef struct vt_factors {
  float slope, speed, wet, ws, power, depth, load;
  int stream;
} vt_factors;

/* Computes the erosion factors of column j with water depth w. */
TALUS_HD static inline vt_factors vt_factors_of(const talus_tile *t, const talus_kparams *P,
                                                size_t j, float w) {
  float m = P->min_scale, span = P->max_scale - P->min_scale;
  float sa = t->sina[j], vx = t->vx[j], vy = t->vy[j];
  vt_factors f;
  f.slope = m + span * sa * (1.0f - vt_smoothstep(P->slope_fade_start, 1.0f, sa));
  f.speed = m + span * sqrtf(vx * vx + vy * vy);
  f.wet = talus_fminf(1000.0f * w, 1.0f);
  float depth = 1.0f - talus_tanhf(2.0f * w / P->water_max_height);
  f.ws = talus_fminf(talus_fmaxf(depth, 0.0f), 1.0f) * f.wet;
  /* q = |v|·w, S the tilt of the column's water surface (pipes.h: a still
   * pool has none). The depth keeps ws's fade: before S was the water's,
   * the ground's tilt under a lake read as descent, and without the fade
   * deep pools dug pits 65 m deep into a DEM (p99.9 of |dz|, Big Tujunga
   * 256²). */
  f.stream = P->erosion_law == TALUS_LAW_STREAM_POWER;
  f.power = talus_stream_power(P, sqrtf(vx * vx + vy * vy) * w, sa, 0.0f);
  f.depth = w * f.ws;
  /* The capacity's water factor: faded as the incision's, or with
   * erosion.capacity_fade off only the 1 mm ramp. The fade keeps deep
   * water from digging its own pit (incision ~ depth, a positive
   * feedback), but on the capacity it made the deepest rivers carry the
   * least and bury their own floors; a still pool still holds no load, as
   * its surface has no tilt. */
  f.load = P->capacity_fade ? f.ws : f.wet;
  return f;
}

/* Bedrock eroded from the ceiling of column k (below column k+1's bedrock),
 * at the minimum slope and only when water nearly fills the gap. */
TALUS_HD static inline TALUS_FORCE_INLINE float
vt_ceiling(const talus_tile *t, const talus_kparams *P, size_t i, int k, int n, vt_factors f) {
  if (k + 1 >= n) return 0.0f;
  size_t j = talus_col(t, i, k);
  float C = t->C[j];
  float gap = C - t->B[j] - t->s[j] - t->w[j];
  float top = talus_fmaxf(1.0f - talus_fmaxf(gap / P->top_erosion_scale, 0.0f), 0.0f);
  float rate = P->bedrock_dissolve * f.speed * top * P->min_scale * P->dt * f.wet;
  return talus_fminf(rate, talus_fmaxf(t->B[talus_col(t, i, k + 1)] - C, 0.0f));
}

/* Bedrock eroded from the floor of column k; fades out as sand covers it;
 * none on a fixed outlet (`fixed`, vt_outlet). */
TALUS_HD static inline float vt_floor(const talus_tile *t, const talus_kparams *P, size_t i, int k,
                                      vt_factors f, int fixed) {
  if (fixed) return 0.0f;
  size_t j = talus_col(t, i, k);
  float bare = talus_fmaxf(1.0f - t->s[j] / P->sand_threshold, 0.0f);
  float paper = bare * P->bedrock_dissolve * f.slope * f.speed * f.ws * P->dt;
  float stream = bare * P->bedrock_dissolve * f.power * f.depth * P->dt;
  float rate = f.stream ? stream : paper;
  return talus_fminf(rate, talus_fmaxf(t->B[j] - talus_floor(t, i, k), 0.0f));
}

/* Moves sand to sediment below capacity, sediment to sand above it (the
 * deposit never overfills the column). */
TALUS_HD static inline void vt_exchange(const talus_tile *t, const talus_kparams *P, size_t j,
                                        vt_factors f, double *flows) {
  float s = t->s[j], r = t->r[j];
  float cap = f.stream ? P->capacity * f.power * (t->w[j] * f.load)
                       : P->capacity * f.slope * f.speed * f.load;
  if (cap > r) {
    float d = talus_fminf(P->sand_dissolve * (cap - r) * P->dt, s);
    t->s[j] = s - d;
    t->r[j] = r + d;
    flows[TALUS_FLOW_DISSOLVE] += (double)d;
  } else {
    float space = talus_fmaxf(t->C[j] - t->B[j] - s - t->w[j], 0.0f);
    float d = talus_fminf(talus_fminf(P->deposition * (r - cap) * P->dt, space), r - cap);
    t->s[j] = s + d;
    t->r[j] = r - d;
    flows[TALUS_FLOW_DEPOSIT] += (double)d;
  }
}

/* Vertical erosion of column k of cell i (n columns): ceiling and floor
 * bedrock become sand (the floor's not where `fixed`), then sand and
 * sediment exchange. */
TALUS_HD static inline TALUS_FORCE_INLINE void vt_erode(const talus_tile *t, const talus_kparams *P,
                                                        size_t i, int k, int n, int fixed,
                                                        double *flows) {
  size_t j = talus_col(t, i, k);
  vt_factors f = vt_factors_of(t, P, j, t->w[j]);
  float C0 = t->C[j], B0 = t->B[j];
  float C1 = C0 + vt_ceiling(t, P, i, k, n, f), B1 = B0 - vt_floor(t, P, i, k, f, fixed);
  /* The rock the floats moved, not the rock asked for: at a bed 50 m up
   * a float's step is 3.8e-6 m (on a 2000 m DEM 1.2e-4), and an erosion
   * below half of it leaves the bed as it was; booked and turned into
   * sand all the same, it made matter (cave: 16 m3 in 1000 steps, 1.2 %
   * of the bedrock eroded; Big Tujunga 128², dem-default: 4150 m3, 2.4 %).
   * Both differences are exact wherever the two values lie within 2x of
   * each other (Sterbenz), i.e. unless a bed within one erosion of 0 m
   * crosses it; there the rounding is of dB's own size, not the bed's. */
  float dC = C1 - C0, dB = B0 - B1;
  t->C[j] = C1;
  t->B[j] = B1;
  t->s[j] += dC + dB;
  flows[TALUS_FLOW_CEILING_EROSION] += (double)dC;
  flows[TALUS_FLOW_BEDROCK_EROSION] += (double)dB;
  vt_exchange(t, P, j, f, flows);
}

/* Damage recovery of column k: heals min(κ_r·dt, D) of damage (κ_r at the
 * run's cell size, talus_kparams_derive). The rock
 * stays: the reference also shaves the same height of bedrock off the
 * column's top and deletes it (its defect 7), which sank a groove into the
 * plateau over the cave's tunnel (0.33 m at 128² after 3000 steps) and
 * lost the rock. Damage is wear not yet expressed as a cut, so healing
 * makes horizontal erosion a threshold process: a face splits only where
 * water wears it faster than κ_r. */
TALUS_HD static inline TALUS_FORCE_INLINE void vt_recover(const talus_tile *t,
                                                          const talus_kparams *P, size_t i, int k) {
  size_t j = talus_col(t, i, k);
  float d = talus_fminf(P->hz_recovery * P->dt, t->D[j]);
  if (d > 0.0f) t->D[j] -= d;
}

/* 1 when vertical erosion runs in step `step` (it is on and the spin-up
 * is over); a constant where `one` carries it (TALUS_ONE_ERODE). */
TALUS_HD static inline int vt_eroding(const talus_kparams *P, int64_t step, int one) {
  return one ? (one & TALUS_ONE_ERODE) != 0 : P->enable_vertical && talus_eroding(P, step);
}

/* 1 when cell (x, y) has an axis neighbour that is an outflow face for
 * water (the domain's open border, a NoData sink): erosion.base_level
 * holds its bedrock. A neighbour outside the buffer is a stale cell's
 * (the tiler's regions keep every core cell's neighbours in the buffer),
 * read as inside rather than past the mask. */
TALUS_HD static inline int vt_outlet(const talus_tile *t, const talus_kctx *c, int x, int y) {
  for (int d = 0; d < 4; d++) {
    int nx = x + talus_dir_dx(d), ny = y + talus_dir_dy(d);
    int gx = t->buf.x0 + nx, gy = t->buf.y0 + ny;
    int domain = gx >= 0 && gy >= 0 && gx < c->nx && gy < c->ny;
    int buffer = nx >= 0 && ny >= 0 && nx < t->buf.w && ny < t->buf.h;
    if (domain && !buffer) continue;
    if (talus_nb_kind(t, c, x, y, d, 0) == TALUS_NB_OUTFLOW) return 1;
  }
  return 0;
}

/* Vertical erosion and damage recovery of every column of live cell
 * (x, y), bottom-up; `one` as in the notes at the top. */
TALUS_HD static inline TALUS_FORCE_INLINE void vt_cell(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows, int one) {
  const talus_kparams *P = &c->P;
  size_t i = talus_idx(t, x, y);
  int n = one ? 1 : t->count[i];
  int eroding = vt_eroding(P, c->step, one);
  int fixed = eroding && !one && P->base_level && vt_outlet(t, c, x, y);
  for (int k = 0; k < n; k++) {
    if (eroding) vt_erode(t, P, i, k, n, fixed, flows);
    if (P->enable_horizontal) vt_recover(t, P, i, k);
  }
}

/* Vertical erosion and damage recovery of every column of cell (x, y),
 * bottom-up; masked cells are left untouched. */
TALUS_HD static inline void k_vertical(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  if (talus_cell_masked(t, talus_idx(t, x, y))) return;
  vt_cell(t, c, x, y, flows, 0);
}

#endif /* TALUS_KERNELS_VERTICAL_H */
