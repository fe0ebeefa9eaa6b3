/*
 * test_water_physics.c — multi-step behaviour of the hydraulic kernels
 * (rain, pipes, transport): a lake at rest stays at rest, water volume is
 * conserved between reflecting walls, outflow borders drain a tilted plane
 * and book exactly the loss, a sand pile relaxes to the dry angle of repose,
 * and with every process on the mass ledger closes for each material.
 */
#include "check.h"
#include "tiler/tiler.h"

#include <stdlib.h>
#include <string.h>

#define TAN30 0.57735026918962576 /* tan 30°, the default dry angle of repose */

#define N 32

static talus_tile *make_tile(int nz) {
  talus_tile *t = NULL;
  talus_rect r = {0, 0, N, N};
  return talus_tile_create(&t, r, nz, 0) == TALUS_OK ? t : NULL;
}

/* Hydraulics only: no rain, evaporation, petrification or erosion. */
static talus_kctx make_ctx(void) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.rain = 0.0f;
  c.P.evaporation = 0.0f;
  c.P.petrification = 0.0f;
  c.P.enable_vertical = 0;
  c.P.enable_horizontal = 0;
  c.P.enable_support = 0;
  c.P.enable_slippage = 0;
  c.P.cell_size = 1.0f;
  c.P.dt = 0.15f;
  talus_kparams_derive(&c.P);
  c.nx = N;
  c.ny = N;
  return c;
}

/* Runs the three hydraulic stages for `steps` steps over the whole tile. */
static void hydro_run(talus_tile *t, talus_kctx *c, int steps, double *flows) {
  talus_rect all = {0, 0, N, N};
  static const talus_stage_id ids[3] = {TALUS_STAGE_RAIN, TALUS_STAGE_PIPES, TALUS_STAGE_TRANSPORT};
  for (int s = 0; s < steps; s++, c->step++)
    for (int i = 0; i < 3; i++)
      talus_cpu_stage(t, c, ids[i], all, flows);
}

/* Sum of a per-column field over every live column. */
static double total(const talus_tile *t, const float *field) {
  double sum = 0.0;
  for (size_t idx = 0; idx < t->plane; idx++)
    if (!t->mask[idx] && (int)(idx % (size_t)t->pitch) < t->buf.w)
      for (int k = 0; k < t->count[idx]; k++)
        sum += field[talus_col(t, idx, k)];
  return sum;
}

static float min_field(const talus_tile *t, const float *field) {
  float m = INFINITY;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++)
        m = fminf(m, field[talus_col(t, idx, k)]);
    }
  return m;
}

/* A bumpy, sandy bed under a flat water surface at 3.1 m, with a flooded cave
 * column (ceiling below the surface) in a few cells: after 500 steps of the
 * full step driver nothing has moved. */
static void test_lake_at_rest(void) {
  talus_tile *t = make_tile(2);
  talus_kctx c = make_ctx();
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      float B = 1.2f + 0.7f * sinf(0.4f * x) * cosf(0.3f * y);
      float s = 0.13f + 0.1f * cosf(0.9f * y);
      t->B[idx] = B;
      t->s[idx] = s; /* B + s + w rounds: the surface is flat only to an ulp */
      t->w[idx] = 3.1f - B - s;
      if (x >= 10 && x < 14 && y == 16) {
        t->count[idx] = 2;
        t->C[idx] = 2.5f;
        t->w[idx] = 2.5f - B - s;
        t->B[talus_col(t, idx, 1)] = 2.8f;
        t->w[talus_col(t, idx, 1)] = 3.1f - 2.8f;
        t->C[talus_col(t, idx, 1)] = TALUS_TOP;
      }
    }
  size_t bytes = (size_t)2 * t->plane * sizeof(float);
  float *w0 = malloc(bytes);
  memcpy(w0, t->w, bytes);
  talus_run_stats stats;
  memset(&stats, 0, sizeof stats);
  talus_rect core = {0, 0, N, N};
  CHECK(talus_tiler_advance(t, &c, core, 500, &stats, NULL, NULL) == TALUS_OK, "advance");
  double dw = 0.0, v = 0.0;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++) {
        size_t ci = talus_col(t, idx, k);
        dw = fmax(dw, fabs((double)t->w[ci] - w0[ci]));
        v = fmax(v, fmax(fabs(t->vx[ci]), fabs(t->vy[ci])));
      }
    }
  /* Rounding of B + s + w drives a bounded ripple of a few µm; a real
   * spurious current would be orders of magnitude larger. */
  CHECK(dw < 2e-5, "lake at rest: max |dw| = %g", dw);
  CHECK(v < 2e-5, "lake at rest: max |v| = %g", v);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    CHECK(fabs(stats.flows[i]) < 1e-6, "lake at rest: flow %d = %g", i, stats.flows[i]);
  free(w0);
  talus_tile_free(t);
}

/* Sloped, bumpy terrain between reflecting walls: 1000 steps keep the
 * water (and sand, with slippage on) volume, never go negative, and book
 * nothing. */
static void test_conservation(void) {
  talus_tile *t = make_tile(1);
  talus_kctx c = make_ctx();
  c.P.enable_slippage = 1;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      t->B[idx] = 0.2f * x + 0.5f * sinf(0.5f * y) + (x == 20 && y == 20 ? 3.0f : 0.0f);
      t->s[idx] = 0.3f;
      t->w[idx] = 0.5f;
    }
  double W0 = total(t, t->w), S0 = total(t, t->s);
  double flows[TALUS_FLOW_COUNT] = {0};
  float wmin = INFINITY;
  for (int i = 0; i < 10; i++) {
    hydro_run(t, &c, 100, flows);
    wmin = fminf(wmin, min_field(t, t->w));
  }
  double W1 = total(t, t->w), S1 = total(t, t->s);
  CHECK(fabs(W1 - W0) / W0 < 1e-5, "water conserved: %.9g -> %.9g", W0, W1);
  CHECK(fabs(S1 - S0) / S0 < 1e-5, "sand conserved: %.9g -> %.9g", S0, S1);
  CHECK(wmin >= 0.0f, "water never negative: %g", wmin);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    CHECK(fabs(flows[i]) < 1e-6 * W0, "reflecting walls: flow %d = %g", i, flows[i]);
  /* The water really moved: it pooled downhill (low x). */
  double low = 0.0, high = 0.0;
  for (int y = 0; y < N; y++) {
    low += t->w[talus_idx(t, 1, y)];
    high += t->w[talus_idx(t, N - 2, y)];
  }
  CHECK(low > 4.0 * high, "water gathered downhill: %g vs %g", low, high);
  talus_tile_free(t);
}

/* A tilted plane with outflow borders: water volume falls monotonically to
 * nearly nothing and WATER_OUTFLOW equals the loss. */
static void test_drain(void) {
  talus_tile *t = make_tile(1);
  talus_kctx c = make_ctx();
  c.P.outflow_water = 1;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      t->B[idx] = 0.1f * x;
      t->w[idx] = 0.2f;
      t->r[idx] = 0.01f;
    }
  double V0 = total(t, t->w), R0 = total(t, t->r), prev = V0;
  double flows[TALUS_FLOW_COUNT] = {0};
  int monotone = 1;
  for (int i = 0; i < 100; i++) {
    hydro_run(t, &c, 10, flows);
    double V = total(t, t->w);
    monotone &= V <= prev;
    prev = V;
  }
  CHECK(monotone, "volume decreases monotonically");
  CHECK(prev < 0.01 * V0, "drained: %g of %g left", prev, V0);
  CHECK_CLOSE(flows[TALUS_FLOW_WATER_OUTFLOW], V0 - prev, 1e-6 * V0, "outflow booked");
  CHECK_CLOSE(flows[TALUS_FLOW_SEDIMENT_OUTFLOW] - flows[TALUS_FLOW_SEDIMENT_CLAMP],
              R0 - total(t, t->r), 1e-6 * R0, "sediment outflow booked");
  CHECK(fabs(flows[TALUS_FLOW_WATER_OVERFILL]) < 1e-6 * V0, "no overfill: %g",
        flows[TALUS_FLOW_WATER_OVERFILL]);
  talus_tile_free(t);
}

/* Largest |S - S'| between 4-neighbours. */
static double max_slope(const talus_tile *t) {
  double m = 0.0;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t i = talus_idx(t, x, y);
      if (x + 1 < N) m = fmax(m, fabs((t->B[i] + t->s[i]) - (t->B[i + 1] + t->s[i + 1])));
      if (y + 1 < N) {
        size_t j = talus_idx(t, x, y + 1);
        m = fmax(m, fabs((t->B[i] + t->s[i]) - (t->B[j] + t->s[j])));
      }
    }
  return m;
}

/* A dry sand cone (slope 0.8) on flat bedrock relaxes to the dry angle of
 * repose (tan 30° = 0.577): afterwards no neighbour slope is steeper, the
 * flanks stay at about that angle, and the sand volume is kept. */
static void test_sand_pile(void) {
  talus_tile *t = make_tile(1);
  talus_kctx c = make_ctx();
  c.P.enable_slippage = 1;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      double r = hypot(x - 15.5, y - 15.5);
      t->s[talus_idx(t, x, y)] = (float)fmax(0.0, 8.0 - 0.8 * r);
    }
  double S0 = total(t, t->s), before = max_slope(t);
  double flows[TALUS_FLOW_COUNT] = {0};
  hydro_run(t, &c, 600, flows);
  double after = max_slope(t), tan30 = TAN30;
  CHECK(before > 0.75, "cone starts steep: %g", before);
  CHECK(after <= tan30 + 0.01, "no slope steeper than tan 30: %g", after);
  CHECK(after >= tan30 - 0.05, "flanks stay at the angle of repose: %g", after);
  CHECK(fabs(total(t, t->s) - S0) / S0 < 1e-6, "sand conserved: %.9g -> %.9g", S0, total(t, t->s));
  CHECK(fabs(flows[TALUS_FLOW_SAND_CLAMP]) < 1e-6 * S0, "sand clamp: %g",
        flows[TALUS_FLOW_SAND_CLAMP]);
  talus_tile_free(t);
}

/* Volume of each material: water, sediment, sand, bedrock (Σ B: only
 * petrification changes B here, and ceilings never move). */
static void materials(const talus_tile *t, double m[TALUS_MAT_COUNT]) {
  m[TALUS_MAT_WATER] = total(t, t->w);
  m[TALUS_MAT_SEDIMENT] = total(t, t->r);
  m[TALUS_MAT_SAND] = total(t, t->s);
  m[TALUS_MAT_BEDROCK] = total(t, t->B);
}

/* Everything on — noisy rain, a source, evaporation, petrification,
 * slippage, outflow borders for water and sand, a bridge of two-column
 * cells that floods — and each material's change equals its booked flows. */
static void test_ledger_closes(void) {
  talus_tile *t = make_tile(2);
  talus_kctx c = make_ctx();
  c.P.rain = 0.02f;
  c.P.evaporation = 0.005f;
  c.P.petrification = 1e-3f;
  c.P.enable_slippage = 1;
  c.P.outflow_water = 1;
  c.P.outflow_slippage = 1;
  c.P.num_sources = 1;
  c.P.sources[0] = (talus_source){0.5f, 3.0f, 8.0f, 16.0f, {0.5f, 0.0f, 0.0f, 0.0f}};
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t idx = talus_idx(t, x, y);
      t->B[idx] = 2.0f + 0.05f * (float)abs(x - 16) + 0.3f * sinf(0.7f * y);
      t->s[idx] = 0.5f + 0.4f * cosf(0.9f * x);
      t->r[idx] = 0.01f;
      if (y >= 12 && y < 15) { /* a bridge: a cave below a deck at 6 m */
        t->count[idx] = 2;
        t->C[idx] = 4.0f;
        t->B[talus_col(t, idx, 1)] = 6.0f;
        t->s[talus_col(t, idx, 1)] = 0.2f;
        t->C[talus_col(t, idx, 1)] = TALUS_TOP;
      }
    }
  double m0[TALUS_MAT_COUNT], m1[TALUS_MAT_COUNT], booked[TALUS_MAT_COUNT + 1] = {0};
  double flows[TALUS_FLOW_COUNT] = {0};
  materials(t, m0);
  hydro_run(t, &c, 400, flows);
  materials(t, m1);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++) {
    int from, to;
    talus_flow_info(i, &from, &to);
    booked[from] -= flows[i];
    booked[to] += flows[i];
  }
  /* Float precision relative to what the material held and passed through. */
  double scale[TALUS_MAT_COUNT + 1];
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    scale[m] = fabs(m0[m]) + fabs(m1[m]);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++) {
    int from, to;
    talus_flow_info(i, &from, &to);
    scale[from] += fabs(flows[i]);
    scale[to] += fabs(flows[i]);
  }
  const char *names[TALUS_MAT_COUNT] = {"water", "sediment", "sand", "bedrock"};
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    CHECK(fabs((m1[m] - m0[m]) - booked[m]) <= 1e-7 * scale[m], "%s: change %.9g, booked %.9g",
          names[m], m1[m] - m0[m], booked[m]);
  CHECK(flows[TALUS_FLOW_RAIN] > 0.0 && flows[TALUS_FLOW_SOURCE] > 0.0, "water came in");
  CHECK(flows[TALUS_FLOW_EVAPORATION] > 0.0 && flows[TALUS_FLOW_WATER_OUTFLOW] > 0.0,
        "water went out");
  CHECK(flows[TALUS_FLOW_PETRIFY] > 0.0 && flows[TALUS_FLOW_SAND_OUTFLOW] > 0.0, "sand moved");
  talus_tile_free(t);
}

/* Fills a state with rain-fed flow, sand, sediment and a bridge; the same
 * values for a global cell whatever buffer holds it. */
static void fill_scene(talus_tile *t) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
      size_t idx = talus_idx(t, x, y);
      t->B[idx] = 1.0f + 0.1f * (float)gx + 0.4f * sinf(0.6f * (float)gy);
      t->s[idx] = 0.6f + 0.5f * cosf(0.8f * (float)gx);
      t->w[idx] = 0.3f;
      t->r[idx] = 0.02f;
      if (gx >= 10 && gx < 20 && gy == 9) {
        t->count[idx] = 2;
        t->C[idx] = t->B[idx] + 0.5f;
        t->B[talus_col(t, idx, 1)] = t->B[idx] + 3.0f;
        t->C[talus_col(t, idx, 1)] = TALUS_TOP;
      }
    }
}

/* A buffer covering part of the domain, advanced K steps through the step
 * driver, matches the whole-domain run bit for bit in its exact core
 * (shrunk by K times the step radius on interior edges): the kernels read
 * no further than their declared radius and use global coordinates only. */
static void test_tile_invariance(void) {
  talus_kctx c = make_ctx();
  c.P.rain = 0.05f;
  c.P.evaporation = 0.01f;
  c.P.petrification = 1e-3f;
  c.P.enable_slippage = 1;
  c.P.outflow_water = 1;
  talus_kctx c2 = c;
  int K = 3, R = talus_step_radius(&c.P);
  talus_tile *whole = make_tile(2), *part = NULL;
  talus_rect pr = {4, 0, 24, N};
  talus_tile_create(&part, pr, 2, 0);
  fill_scene(whole);
  fill_scene(part);
  talus_run_stats st1, st2;
  memset(&st1, 0, sizeof st1);
  memset(&st2, 0, sizeof st2);
  talus_rect core = {0, 0, N, N};
  /* The part's core: its buffer less K·R on both interior edges. */
  talus_rect pcore = {pr.x0 + K * R, 0, pr.w - 2 * K * R, N};
  CHECK(talus_tiler_advance(whole, &c, core, K, &st1, NULL, NULL) == TALUS_OK, "whole advances");
  CHECK(talus_tiler_advance(part, &c2, pcore, K, &st2, NULL, NULL) == TALUS_OK, "part advances");
  /* A core whose halo is narrower than the steps' reach is refused. */
  talus_kctx c3 = c;
  CHECK(talus_tiler_advance(part, &c3, pr, K, &st2, NULL, NULL) == TALUS_ERR_INTERNAL,
        "a halo narrower than K steps' reach is refused");
  int same = 1, cells = 0;
  for (int y = 0; y < N; y++)
    for (int gx = pcore.x0; gx < pcore.x0 + pcore.w; gx++, cells++) {
      size_t a = talus_idx(whole, gx, y), b = talus_idx(part, gx - pr.x0, y);
      for (int k = 0; k < whole->count[a]; k++) {
        size_t ca = talus_col(whole, a, k), cb = talus_col(part, b, k);
        same &= whole->w[ca] == part->w[cb] && whole->s[ca] == part->s[cb] &&
                whole->r[ca] == part->r[cb] && whole->B[ca] == part->B[cb];
        for (int d = 0; d < 4; d++)
          same &= whole->f[talus_dcol(whole, a, k, d)] == part->f[talus_dcol(part, b, k, d)];
      }
    }
  CHECK(R >= 2 && cells > 0, "radius %d, %d core cells compared", R, cells);
  CHECK(same, "partial buffer equals the whole-domain run in its exact core");
  talus_tile_free(whole);
  talus_tile_free(part);
}

int main(void) {
  test_lake_at_rest();
  test_conservation();
  test_drain();
  test_sand_pile();
  test_ledger_closes();
  test_tile_invariance();
  return check_report("test_water_physics");
}
