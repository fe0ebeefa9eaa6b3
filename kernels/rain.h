/*
 * rain.h — the rain stage (radius 0): rain and circular water sources add
 * water to the top column of each cell; sources also accelerate the top
 * column's outflow fluxes.
 *
 * Randomness comes only from talus_hash_unit of the global cell and step
 * (stream 0 for rain, stream 1+i for source i), so every tile and rank
 * draws the same numbers. rain_noise blends uniform rain (0) with the
 * reference's 2·u·rain·dt (1); both have mean rain·dt.
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

/* Rain added to one cell this step [m]: rain·dt scaled by the noise blend
 * when `noisy` (rain_noise > 0; a constant 0 drops the hash from a vector
 * loop, and without noise the blend is exactly 1 anyway). A negative
 * blend (rain_noise > 1 with a small draw) adds nothing rather than
 * removing water. */
TALUS_HD static inline TALUS_FORCE_INLINE float rain_amount(const talus_kparams *P, int gx, int gy,
                                                            int64_t step, int noisy) {
  float factor = 1.0f;
  if (noisy) {
    float u = talus_hash_unit(P->seed, gx, gy, (uint64_t)step, 0u);
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
    w = rain_add(w, rain_amount(P, gx, gy, c->step, P->rain_noise > 0.0f), &flows[TALUS_FLOW_RAIN]);
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
