/*
 * test_kernel_rain.c — the rain stage: uniform rain adds exactly rain·dt,
 * noisy rain has mean rain·dt and is a pure function of global cell and
 * step (tile invariant), rain lands on the top column only, masked cells get
 * nothing, sources act only inside their radius, the ledger books every
 * added metre, and water.rain_steps stops the rain (not the sources) from
 * that global step on, in both models. water.rain_noise_scale blends the
 * draw over a lattice in metres: correlated over its span, the same bytes
 * as each cell's own draw when the span is a cell, and, its lattice
 * shifted every step, the same spread in every cell over many steps.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <string.h>

static talus_tile *make_tile(int x0, int y0, int w, int h, int nz) {
  talus_tile *t = NULL;
  talus_rect r = {x0, y0, w, h};
  return talus_tile_create(&t, r, nz, 0) == TALUS_OK ? t : NULL;
}

static talus_kctx make_ctx(int nx, int ny) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.rain = 0.07f;
  c.P.dt = 0.15f;
  c.P.cell_size = 2.0f;
  talus_kparams_derive(&c.P);
  c.nx = nx;
  c.ny = ny;
  return c;
}

static void run_rain(talus_tile *t, talus_kctx *c, double *flows) {
  talus_rect all = {0, 0, t->buf.w, t->buf.h};
  CHECK(talus_cpu_stage(t, c, TALUS_STAGE_RAIN, all, flows) == TALUS_OK, "rain stage runs");
}

static double water_sum(const talus_tile *t) {
  double sum = 0.0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++)
        sum += t->w[talus_col(t, idx, k)];
    }
  return sum;
}

/* rain_noise = 0: every cell gets exactly rain·dt, booked as RAIN. */
static void test_uniform(void) {
  talus_tile *t = make_tile(0, 0, 16, 16, 1);
  talus_kctx c = make_ctx(16, 16);
  c.P.rain_noise = 0.0f;
  double flows[TALUS_FLOW_COUNT] = {0};
  run_rain(t, &c, flows);
  float expect = 0.07f * 0.15f;
  int exact = 1;
  for (int y = 0; y < 16; y++)
    for (int x = 0; x < 16; x++)
      exact &= t->w[talus_idx(t, x, y)] == expect;
  CHECK(exact, "uniform rain adds exactly rain*dt everywhere");
  CHECK_CLOSE(flows[TALUS_FLOW_RAIN], 256.0 * expect, 1e-9, "RAIN booked");
  CHECK_CLOSE(flows[TALUS_FLOW_RAIN], water_sum(t), 1e-9, "RAIN equals the water added");
  talus_tile_free(t);
}

/* rain_noise = 1: values in [0, 2·rain·dt), mean rain·dt, different from
 * step to step, identical in a tile offset in the global grid. */
static void test_noise(void) {
  talus_tile *t = make_tile(0, 0, 64, 64, 1);
  talus_kctx c = make_ctx(64, 64);
  c.P.rain_noise = 1.0f;
  c.step = 17;
  double flows[TALUS_FLOW_COUNT] = {0};
  run_rain(t, &c, flows);
  double rdt = 0.07 * 0.15, lo = 1e9, hi = -1e9;
  for (int y = 0; y < 64; y++)
    for (int x = 0; x < 64; x++) {
      double w = t->w[talus_idx(t, x, y)];
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
    }
  CHECK(lo >= 0.0 && hi < 2.0 * rdt * (1.0 + 1e-6), "noisy rain in [0, 2 rain dt): %g %g", lo, hi);
  CHECK(hi - lo > rdt, "noise spreads the values: %g..%g", lo, hi);
  /* σ of the mean over 4096 cells is 0.577·rdt/64 ≈ 0.009·rdt; allow 5%. */
  CHECK_CLOSE(water_sum(t) / 4096.0, rdt, 0.05 * rdt, "mean rain rain*dt");
  CHECK_CLOSE(flows[TALUS_FLOW_RAIN], water_sum(t), 1e-9, "RAIN equals the water added");

  talus_tile *sub = make_tile(40, 8, 16, 16, 1);
  double f2[TALUS_FLOW_COUNT] = {0};
  run_rain(sub, &c, f2);
  int same = 1;
  for (int y = 0; y < 16; y++)
    for (int x = 0; x < 16; x++)
      same &= sub->w[talus_idx(sub, x, y)] == t->w[talus_idx(t, 40 + x, 8 + y)];
  CHECK(same, "rain depends on global cell and step only (tile invariant)");

  talus_kctx c2 = c;
  c2.step = 18;
  talus_tile *next = make_tile(0, 0, 64, 64, 1);
  run_rain(next, &c2, f2);
  int differ = 0;
  for (int x = 0; x < 64; x++)
    differ += next->w[talus_idx(next, x, 0)] != t->w[talus_idx(t, x, 0)];
  CHECK(differ > 32, "another step draws other numbers (%d of 64 differ)", differ);
  talus_tile_free(t);
  talus_tile_free(sub);
  talus_tile_free(next);
}

/* Rain lands on the top column of a two-column cell; a masked cell (NoData)
 * receives nothing. */
static void test_top_and_mask(void) {
  talus_tile *t = make_tile(0, 0, 2, 1, 2);
  talus_kctx c = make_ctx(2, 1);
  c.P.rain_noise = 0.0f;
  size_t i0 = talus_idx(t, 0, 0), i1 = talus_idx(t, 1, 0);
  t->count[i0] = 2;
  t->C[talus_col(t, i0, 0)] = 5.0f;
  t->B[talus_col(t, i0, 1)] = 8.0f;
  t->C[talus_col(t, i0, 1)] = TALUS_TOP;
  t->mask[i1] = 1;
  t->count[i1] = 0;
  double flows[TALUS_FLOW_COUNT] = {0};
  run_rain(t, &c, flows);
  CHECK(t->w[talus_col(t, i0, 0)] == 0.0f, "cave column stays dry");
  CHECK(t->w[talus_col(t, i0, 1)] == 0.07f * 0.15f, "top column gets the rain");
  CHECK(t->w[talus_col(t, i1, 0)] == 0.0f, "masked cell gets nothing");
  CHECK_CLOSE(flows[TALUS_FLOW_RAIN], 0.07 * 0.15, 1e-9, "one cell booked");
  talus_tile_free(t);
}

/* A source adds water (mean strength·dt) and flux acceleration only to cells
 * whose centre lies inside its radius; no rain elsewhere. */
static void test_source(void) {
  talus_tile *t = make_tile(0, 0, 32, 32, 1);
  talus_kctx c = make_ctx(32, 32); /* l_c = 2 m: 64 m square */
  c.P.rain = 0.0f;
  c.P.num_sources = 1;
  talus_source *s = &c.P.sources[0];
  s->strength = 0.5f;
  s->radius = 5.0f;
  s->x = 20.0f;
  s->y = 30.0f;
  s->flux[TALUS_DIR_R] = 2.0f;
  double flows[TALUS_FLOW_COUNT] = {0};
  run_rain(t, &c, flows);
  int inside = 0, wet_ok = 1, dry_ok = 1, flux_ok = 1;
  for (int y = 0; y < 32; y++)
    for (int x = 0; x < 32; x++) {
      size_t idx = talus_idx(t, x, y);
      double dx = (x + 0.5) * 2.0 - 20.0, dy = (y + 0.5) * 2.0 - 30.0;
      int in = dx * dx + dy * dy <= 25.0;
      float fr = t->f[talus_dcol(t, idx, 0, TALUS_DIR_R)];
      float fu = t->f[talus_dcol(t, idx, 0, TALUS_DIR_U)];
      inside += in;
      if (in) {
        wet_ok &= t->w[idx] >= 0.0f && t->w[idx] < 2.0f * 0.5f * 0.15f;
        flux_ok &= fr == 2.0f * 0.15f && fu == 0.0f;
      } else {
        dry_ok &= t->w[idx] == 0.0f && fr == 0.0f;
      }
    }
  CHECK(inside == 16, "cells inside a 5 m circle at l_c = 2: %d", inside);
  CHECK(wet_ok, "source water in [0, 2 strength dt)");
  CHECK(flux_ok, "source flux acceleration added inside");
  CHECK(dry_ok, "nothing outside the radius");
  CHECK(flows[TALUS_FLOW_RAIN] == 0.0, "no rain booked");
  CHECK_CLOSE(flows[TALUS_FLOW_SOURCE], water_sum(t), 1e-9, "SOURCE equals the water added");
  CHECK(flows[TALUS_FLOW_SOURCE] > 0.2 * inside * 0.5 * 0.15, "source adds water");
  talus_tile_free(t);
}

/* water.rain_steps = 3: rain in global steps 0..2, none from step 3 on,
 * while a source keeps running; the heightfield model's rain stops alike. */
static void test_dry_out(void) {
  talus_tile *t = make_tile(0, 0, 8, 8, 1);
  talus_kctx c = make_ctx(8, 8);
  c.P.rain_steps = 3;
  c.P.num_sources = 1;
  c.P.sources[0] = (talus_source){.strength = 0.5f, .radius = 3.0f, .x = 8.0f, .y = 8.0f};
  double wet[5];
  for (int step = 0; step < 5; step++) {
    double flows[TALUS_FLOW_COUNT] = {0};
    c.step = step;
    run_rain(t, &c, flows);
    wet[step] = flows[TALUS_FLOW_RAIN];
    CHECK(flows[TALUS_FLOW_SOURCE] > 0.0, "step %d: the source runs", step);
  }
  CHECK(wet[0] > 0.0 && wet[2] > 0.0, "rain in steps 0 and 2 (%g, %g)", wet[0], wet[2]);
  CHECK(wet[3] == 0.0 && wet[4] == 0.0, "no rain from step 3 on (%g, %g)", wet[3], wet[4]);
  c.P.num_sources = 0;
  c.P.model = TALUS_MODEL_HEIGHTFIELD;
  talus_kparams_derive(&c.P);
  talus_tile *h = make_tile(0, 0, 8, 8, 1);
  CHECK(h != NULL, "heightfield tile");
  double hf[2] = {0.0, 0.0};
  for (int step = 2; h && step < 4; step++) {
    double flows[TALUS_FLOW_COUNT] = {0};
    c.step = step;
    CHECK(talus_cpu_stage(h, &c, TALUS_STAGE_HF_RAIN, (talus_rect){0, 0, 8, 8}, flows) == TALUS_OK,
          "hf_rain runs");
    hf[step - 2] = flows[TALUS_FLOW_RAIN];
  }
  CHECK(h && hf[0] > 0.0 && hf[1] == 0.0, "heightfield: rain in step 2, none in step 3");
  talus_tile_free(h);
  talus_tile_free(t);
}

/* One step of rain on a dry tile: zeroes the water, runs the rain stage. */
static void rain_step(talus_tile *t, talus_kctx *c, int64_t step, double *flows) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      t->w[talus_idx(t, x, y)] = 0.0f;
  c->step = step;
  run_rain(t, c, flows);
}

/* Correlation of the water of cells `lag` apart along x over one tile. */
static double lag_correlation(const talus_tile *t, int lag) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  int n = 0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x + lag < t->buf.w; x++) {
      double a = t->w[talus_idx(t, x, y)], b = t->w[talus_idx(t, x + lag, y)];
      sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b, n++;
    }
  double ca = saa / n - (sa / n) * (sa / n), cb = sbb / n - (sb / n) * (sb / n);
  return (sab / n - (sa / n) * (sb / n)) / sqrt(ca * cb);
}

/* water.rain_noise_scale 2 m on 0.5 m cells (a span of 4 cells): the draws
 * of neighbours correlate and those two spans apart do not; over 400 steps
 * every cell of the span's 4 x 4 phases has the same spread (a fixed
 * lattice: twice as large at a node's cell as at a square's centre); the
 * mean is rain·dt and booked; a tile elsewhere in the global grid (at
 * negative cells too) draws the same; the heightfield model draws the same.
 * A scale within a cell keeps each cell's own draw to the bit. */
static void test_noise_scale(void) {
  enum { N = 64, K = 4, STEPS = 400 };
  talus_tile *t = make_tile(-8, -8, N, N, 1), *sub = make_tile(-3, 21, 16, 16, 1);
  talus_kctx c = make_ctx(N, N);
  c.P.cell_size = 0.5f;
  c.P.rain_noise_scale = 2.0f;
  talus_kparams_derive(&c.P);
  CHECK(c.P.rain_noise_span == K, "2 m over 0.5 m cells: a span of %d cells", c.P.rain_noise_span);
  double rdt = 0.07 * 0.15, sum = 0, booked = 0, near = 0, far = 0;
  double s1[K][K] = {{0}}, s2[K][K] = {{0}};
  int same = 1;
  for (int step = 0; step < STEPS; step++) {
    double flows[TALUS_FLOW_COUNT] = {0}, f2[TALUS_FLOW_COUNT] = {0};
    rain_step(t, &c, step, flows);
    booked += flows[TALUS_FLOW_RAIN];
    sum += water_sum(t);
    near += lag_correlation(t, 1) / STEPS;
    far += lag_correlation(t, 2 * K) / STEPS;
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++) {
        double w = t->w[talus_idx(t, x, y)] / rdt;
        s1[(x + 8) % K][(y + 8) % K] += w;
        s2[(x + 8) % K][(y + 8) % K] += w * w;
      }
    if (step % 50 == 0) {
      rain_step(sub, &c, step, f2);
      for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++)
          same &= sub->w[talus_idx(sub, x, y)] == t->w[talus_idx(t, 5 + x, 29 + y)];
    }
  }
  CHECK(same, "a tile at (-3, 21) draws the same rain as the whole grid");
  CHECK_CLOSE(booked, sum, 1e-9 * sum, "RAIN equals the water added");
  CHECK_CLOSE(sum / ((double)N * N * STEPS), rdt, 0.01 * rdt, "mean rain rain*dt");
  CHECK(near > 0.7 && fabs(far) < 0.05, "correlation %.3f at one cell, %.3f at two spans", near,
        far);
  double lo = 1e9, hi = 0;
  int per = N * N / (K * K) * STEPS;
  for (int i = 0; i < K; i++)
    for (int j = 0; j < K; j++) {
      double m = s1[i][j] / per, v = s2[i][j] / per - m * m;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  CHECK(hi / lo < 1.1, "the spread is the same in every phase of the span: %.4f..%.4f", lo, hi);
  CHECK(hi < 1.0 / 3.0, "blended draws spread less than a cell's own (var %.4f < 1/3)", hi);

  talus_kctx h = c;
  h.P.model = TALUS_MODEL_HEIGHTFIELD;
  talus_kparams_derive(&h.P);
  talus_tile *ht = make_tile(-8, -8, N, N, 1);
  double f3[TALUS_FLOW_COUNT] = {0}, f4[TALUS_FLOW_COUNT] = {0};
  rain_step(t, &c, 7, f3);
  h.step = 7;
  CHECK(talus_cpu_stage(ht, &h, TALUS_STAGE_HF_RAIN, (talus_rect){0, 0, N, N}, f4) == TALUS_OK,
        "hf_rain runs");
  CHECK(memcmp(ht->w, t->w, sizeof(float) * talus_idx(t, N - 1, N - 1)) == 0,
        "the heightfield model draws the same rain");

  talus_kctx own = make_ctx(N, N), fine = own;
  fine.P.rain_noise_scale = 1.2f; /* 0.6 cells of 2 m: rounds to a span of 1 */
  talus_kparams_derive(&fine.P);
  talus_tile *a = make_tile(0, 0, N, N, 1), *b = make_tile(0, 0, N, N, 1);
  rain_step(a, &own, 9, f3);
  rain_step(b, &fine, 9, f4);
  CHECK(fine.P.rain_noise_span == 1 &&
            memcmp(a->w, b->w, sizeof(float) * talus_idx(a, N - 1, N - 1)) == 0,
        "a scale within a cell: each cell's own draw, the same bytes");
  talus_tile_free(a);
  talus_tile_free(b);
  talus_tile_free(ht);
  talus_tile_free(t);
  talus_tile_free(sub);
}

int main(void) {
  test_noise_scale();
  test_uniform();
  test_dry_out();
  test_noise();
  test_top_and_mask();
  test_source();
  return check_report("test_kernel_rain");
}
