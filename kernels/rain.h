/*
 * rain.h — the rain stage (radius 0): rain and circular water sources add
 * water to the top column of each cell; sources also accelerate the top
 * column's outflow fluxes.
 *
 * Randomness comes only from talus_hash_unit of the global cell and step
 * (stream 0 for rain, stream 1+i for source i), so every tile and rank
 * draws the same numbers. rain_noise blends uniform rain (0) with the
 * reference's 2·u·rain·dt (1); both have mean rain·dt. The draw u is the
 * cell's own (the reference) or, with water.rain_noise_scale, a blend over
 * a lattice of that many metres (rain_noise_draw): per-cell noise is white
 * at the cell's scale, so on a finer grid it makes steeper puddles that
 * the slope-times-speed law cuts into one-cell pits.
 *
 * The top column's ceiling is TALUS_TOP, so added water always fits: no
 * clamp is needed and every added metre is booked (RAIN, SOURCE).
 */
#ifndef TALUS_KERNELS_RAIN_H
#define TALUS_KERNELS_RAIN_H
#include "state.h"

/* 1 when rain falls in global step `step` (water.rain_steps: a dry-out
 * follows the first rain_steps steps). Both models ask this. */
TALUS_HD static inline int rain_falls(const talus_kparams *P, int64_t step) {
  return P->rain_steps == 0 || step < (int64_t)P->rain_steps;
}

#define RAIN_SHIFT_STREAM 0x7A1Bu /* hash stream of the noise lattice's shift */

/* Floor of a / b for b > 0 (a halo's global cells may be negative). */
TALUS_HD static inline int rain_floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* How a cell's rain draws its noise: none (rain_noise 0), each cell its
 * own hash, or a blend over the lattice of water.rain_noise_scale. A mode,
 * not a test inside the draw, so that the CPU's rain loop is compiled for
 * each (cpu_vary_rain): a branch on the span left it scalar. */
enum { RAIN_NOISE_NONE = 0, RAIN_NOISE_CELL = 1, RAIN_NOISE_LATTICE = 2 };

TALUS_HD static inline int rain_noise_mode(const talus_kparams *P) {
  if (!(P->rain_noise > 0.0f)) return RAIN_NOISE_NONE;
  return P->rain_noise_span > 1 ? RAIN_NOISE_LATTICE : RAIN_NOISE_CELL;
}

/* The rain noise's draw in [0, 1) for global cell (gx, gy) in `step`.
 * RAIN_NOISE_CELL: the cell's own hash, the reference's white noise.
 * RAIN_NOISE_LATTICE (a span k > 1): the bilinear blend of the hash at the
 * four corners of the square of a lattice k cells a side that holds the
 * cell's centre. The lattice is shifted by a hashed 0..k-1 cells each
 * step: a fixed one would put the blend's smaller spread (at a square's
 * centre, a quarter of a node's variance) in the same cells every step and
 * print its grid into the long-run erosion. The mean stays 1/2; the spread
 * is smaller than a cell's own draw (a standard deviation 2/3 of it on
 * average). */
TALUS_HD static inline TALUS_FORCE_INLINE float rain_noise_draw(const talus_kparams *P, int gx,
                                                                int gy, int64_t step, int mode) {
  if (mode != RAIN_NOISE_LATTICE) return talus_hash_unit(P->seed, gx, gy, (uint64_t)step, 0u);
  int k = P->rain_noise_span;
  uint32_t shift = talus_hash(P->seed, 0, 0, (uint64_t)step, RAIN_SHIFT_STREAM);
  /* Cell centres in half cells, so the blend is symmetric about the square's middle. */
  int sx = 2 * (gx + (int)(shift % (uint32_t)k)) + 1,
      sy = 2 * (gy + (int)((shift >> 16) % (uint32_t)k)) + 1;
  int ix = rain_floor_div(sx, 2 * k), iy = rain_floor_div(sy, 2 * k);
  float ax = (float)(sx - 2 * k * ix) / (float)(2 * k);
  float ay = (float)(sy - 2 * k * iy) / (float)(2 * k);
  float u00 = talus_hash_unit(P->seed, ix, iy, (uint64_t)step, 0u);
  float u10 = talus_hash_unit(P->seed, ix + 1, iy, (uint64_t)step, 0u);
  float u01 = talus_hash_unit(P->seed, ix, iy + 1, (uint64_t)step, 0u);
  float u11 = talus_hash_unit(P->seed, ix + 1, iy + 1, (uint64_t)step, 0u);
  float lo = u00 + ax * (u10 - u00), hi = u01 + ax * (u11 - u01);
  return lo + ay * (hi - lo);
}

/* Rain added to one cell this step [m]: rain·dt scaled by the noise blend
 * drawn in `noise` mode (rain_noise_mode; a constant RAIN_NOISE_NONE drops
 * the hash from a vector loop, and without noise the blend is exactly 1
 * anyway). A negative blend (rain_noise > 1 with a small draw) adds
 * nothing rather than removing water. */
TALUS_HD static inline TALUS_FORCE_INLINE float rain_amount(const talus_kparams *P, int gx, int gy,
                                                            int64_t step, int noise) {
  float factor = 1.0f;
  if (noise != RAIN_NOISE_NONE) {
    float u = rain_noise_draw(P, gx, gy, step, noise);
    factor = 1.0f - P->rain_noise + P->rain_noise * 2.0f * u;
  }
  return factor > 0.0f ? P->rain * P->dt * factor : 0.0f;
}

/* Water w raised by a [m]; the exact float increase is booked to *booked
 * (RAIN or SOURCE). Returns the new height. Both models and the CPU's
 * vector loops book rain this way. */
TALUS_HD static inline TALUS_FORCE_INLINE float rain_add(float w, float a, double *booked) {
  float wn = w + a;
  *booked += (double)wn - (double)w;
  return wn;
}

/* True when the centre of global cell (gx, gy) lies within the source's
 * radius (boundary included). */
TALUS_HD static inline int rain_in_source(const talus_source *src, float lc, int gx, int gy) {
  float dx = ((float)gx + 0.5f) * lc - src->x;
  float dy = ((float)gy + 0.5f) * lc - src->y;
  return dx * dx + dy * dy <= src->radius * src->radius;
}

/* Rain and sources on the top column of cell (x, y); books RAIN and
 * SOURCE with the exact float increase of w. Skips masked cells. */
TALUS_HD static inline void k_rain(const talus_tile *t, const talus_kctx *c, int x, int y,
                                   double *flows) {
  size_t idx = talus_idx(t, x, y);
  if (talus_cell_masked(t, idx) || t->count[idx] == 0) return;
  const talus_kparams *P = &c->P;
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y, top = t->count[idx] - 1;
  size_t ci = talus_col(t, idx, top);
  float w = t->w[ci];
  if (P->rain > 0.0f && rain_falls(P, c->step))
    w = rain_add(w, rain_amount(P, gx, gy, c->step, rain_noise_mode(P)), &flows[TALUS_FLOW_RAIN]);
  for (int i = 0; i < P->num_sources && i < TALUS_MAX_SOURCES; i++) {
    const talus_source *src = &P->sources[i];
    if (!rain_in_source(src, P->cell_size, gx, gy)) continue;
    float u = talus_hash_unit(P->seed, gx, gy, (uint64_t)c->step, 1u + (uint32_t)i);
    w = rain_add(w, 2.0f * u * src->strength * P->dt, &flows[TALUS_FLOW_SOURCE]);
    for (int d = 0; d < 4; d++)
      t->f[talus_dcol(t, idx, top, d)] += src->flux[d] * P->dt;
  }
  t->w[ci] = w;
}

#endif /* TALUS_KERNELS_RAIN_H */
