/*
 * test_kernel_transport.c — hand-computed cases of the transport stage:
 * water, sediment and sand move along the pipes, inflow from several
 * columns of one neighbour adds up, every clamp is booked, evaporation,
 * velocity, petrification, and matter leaving through outflow borders and
 * NoData sinks is booked as outflow.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <string.h>

#define TAN30 0.57735026918962576 /* tan 30°, the default dry angle of repose */

static talus_tile *make_tile(int w, int h, int nz) {
  talus_tile *t = NULL;
  talus_rect r = {0, 0, w, h};
  return talus_tile_create(&t, r, nz, 0) == TALUS_OK ? t : NULL;
}

/* No rain, evaporation, petrification or slippage, dt 0.15, l_c 1. */
static talus_kctx make_ctx(int nx, int ny) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.rain = 0.0f;
  c.P.evaporation = 0.0f;
  c.P.petrification = 0.0f;
  c.P.enable_slippage = 0;
  c.P.cell_size = 1.0f;
  c.P.dt = 0.15f;
  talus_kparams_derive(&c.P);
  c.nx = nx;
  c.ny = ny;
  return c;
}

static size_t col(const talus_tile *t, int x, int y, int k) {
  return talus_col(t, talus_idx(t, x, y), k);
}
static size_t dcol(const talus_tile *t, int x, int y, int k, int d) {
  return talus_dcol(t, talus_idx(t, x, y), k, d);
}

static void set_col(talus_tile *t, int x, int y, int k, float B, float s, float w, float C) {
  size_t ci = col(t, x, y, k);
  t->B[ci] = B;
  t->s[ci] = s;
  t->w[ci] = w;
  t->C[ci] = C;
}

static void run(talus_tile *t, talus_kctx *c, talus_stage_id id, double *flows) {
  talus_rect all = {0, 0, t->buf.w, t->buf.h};
  CHECK(talus_cpu_stage(t, c, id, all, flows) == TALUS_OK, "stage %d runs", (int)id);
}

/* Sum of a per-column field over all live columns. */
static double total(const talus_tile *t, const float *field) {
  double sum = 0.0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (t->mask[idx]) continue;
      for (int k = 0; k < t->count[idx]; k++)
        sum += field[talus_col(t, idx, k)];
    }
  return sum;
}

/* Water and sediment follow a hand-set flux; velocity from net fluxes;
 * negative sediment is clamped and booked. */
static void test_move(void) {
  talus_tile *t = make_tile(2, 1, 1);
  talus_kctx c = make_ctx(2, 1);
  double flows[TALUS_FLOW_COUNT] = {0};
  set_col(t, 0, 0, 0, 0.0f, 0.0f, 1.0f, TALUS_TOP);
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 1.0f, TALUS_TOP);
  run(t, &c, TALUS_STAGE_PIPES, flows); /* level: pipes set, no flux */
  t->f[dcol(t, 0, 0, 0, TALUS_DIR_R)] = 2.0f;
  t->kr[col(t, 0, 0, 0)] = 0.25f;
  t->r[col(t, 0, 0, 0)] = 0.1f;
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK_CLOSE(t->w[col(t, 0, 0, 0)], 0.7, 1e-6, "source loses f dt / l_c^2");
  CHECK_CLOSE(t->w[col(t, 1, 0, 0)], 1.3, 1e-6, "receiver gains f dt / l_c^2");
  CHECK_CLOSE(t->r[col(t, 0, 0, 0)], 0.025, 1e-7, "sediment leaves with K_r f");
  CHECK_CLOSE(t->r[col(t, 1, 0, 0)], 0.075, 1e-7, "sediment arrives");
  CHECK_CLOSE(t->vx[col(t, 0, 0, 0)], 1.0, 1e-6, "v_x = (net_R - net_L) / 2 l_c^2");
  CHECK_CLOSE(t->vx[col(t, 1, 0, 0)], 1.0, 1e-6, "v_x of the receiver");
  CHECK(t->vy[col(t, 0, 0, 0)] == 0.0f, "v_y = 0");
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    CHECK(flows[i] == 0.0, "nothing booked: flow %d", i);
  /* Over-drawn sediment: K_r = 1 moves 0.3 of 0.025 held. */
  run(t, &c, TALUS_STAGE_PIPES, flows);
  for (int d = 0; d < 4; d++)
    t->f[dcol(t, 1, 0, 0, d)] = 0.0f;
  t->f[dcol(t, 0, 0, 0, TALUS_DIR_R)] = 1.0f;
  t->kr[col(t, 0, 0, 0)] = 1.0f;
  double r0 = total(t, t->r);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK(t->r[col(t, 0, 0, 0)] == 0.0f, "sediment clamped at 0");
  CHECK_CLOSE(flows[TALUS_FLOW_SEDIMENT_CLAMP], 0.15 - 0.025, 1e-7, "clamp booked");
  CHECK_CLOSE(total(t, t->r) - r0, flows[TALUS_FLOW_SEDIMENT_CLAMP], 1e-7, "sediment ledger");
  talus_tile_free(t);
}

/* Both columns of a two-column neighbour pipe into our single column: both
 * inflows count. */
static void test_multi_inflow(void) {
  talus_tile *t = make_tile(2, 1, 2);
  talus_kctx c = make_ctx(2, 1);
  double flows[TALUS_FLOW_COUNT] = {0};
  set_col(t, 0, 0, 0, 0.0f, 0.0f, 0.0f, TALUS_TOP);
  t->count[talus_idx(t, 1, 0)] = 2;
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 1.0f, 5.0f);
  set_col(t, 1, 0, 1, 8.0f, 0.0f, 1.0f, TALUS_TOP);
  run(t, &c, TALUS_STAGE_PIPES, flows);
  CHECK(t->pipe[dcol(t, 1, 0, 0, TALUS_DIR_L)] == 0, "cave column pipes to column 0");
  CHECK(t->pipe[dcol(t, 1, 0, 1, TALUS_DIR_L)] == 0, "roof column pipes to column 0");
  t->f[dcol(t, 1, 0, 0, TALUS_DIR_L)] = 1.0f;
  t->f[dcol(t, 1, 0, 1, TALUS_DIR_L)] = 2.0f;
  t->f[dcol(t, 0, 0, 0, TALUS_DIR_R)] = 0.0f;
  double w0 = total(t, t->w);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK_CLOSE(t->w[col(t, 0, 0, 0)], 0.45, 1e-6, "inflow from both columns");
  CHECK_CLOSE(t->w[col(t, 1, 0, 0)], 0.85, 1e-6, "cave column loses its share");
  CHECK_CLOSE(t->w[col(t, 1, 0, 1)], 0.70, 1e-6, "roof column loses its share");
  CHECK_CLOSE(total(t, t->w), w0, 1e-6, "water conserved");
  talus_tile_free(t);
}

/* A cave column offered more than its free space takes only what fits
 * (the inflow stage's shares, kernels/inflow.h); the sender keeps the
 * rest, nothing is deleted and no overfill is booked. Sand likewise. */
static void test_overfill(void) {
  talus_tile *t = make_tile(2, 1, 2);
  talus_kctx c = make_ctx(2, 1);
  double flows[TALUS_FLOW_COUNT] = {0};
  t->count[talus_idx(t, 0, 0)] = 2;
  set_col(t, 0, 0, 0, 0.0f, 0.0f, 0.9f, 1.0f);
  set_col(t, 0, 0, 1, 5.0f, 0.0f, 0.0f, TALUS_TOP);
  set_col(t, 1, 0, 0, 0.5f, 0.0f, 2.0f, TALUS_TOP);
  run(t, &c, TALUS_STAGE_PIPES, flows);
  CHECK(t->pipe[dcol(t, 1, 0, 0, TALUS_DIR_L)] == 0, "pipe into the cave");
  for (int d = 0; d < 4; d++)
    t->f[dcol(t, 1, 0, 0, d)] = 0.0f;
  t->f[dcol(t, 1, 0, 0, TALUS_DIR_L)] = 4.0f; /* 0.6 m offered, 0.1 m of room */
  double w0 = total(t, t->w);
  run(t, &c, TALUS_STAGE_INFLOW, flows);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK_CLOSE(t->w[col(t, 0, 0, 0)], 1.0, 1e-6, "the cave fills to its ceiling");
  CHECK_CLOSE(t->w[col(t, 1, 0, 0)], 1.9, 1e-6, "the source loses only what the cave took");
  CHECK(fabs(flows[TALUS_FLOW_WATER_OVERFILL]) < 1e-9, "nothing overfills: %g",
        flows[TALUS_FLOW_WATER_OVERFILL]);
  CHECK_CLOSE(total(t, t->w), w0, 1e-6, "water conserved");

  /* Sand: 0.1 m of room (C - B - s - w) in the cave, 0.3 m arrives. */
  c.P.enable_slippage = 1;
  set_col(t, 0, 0, 0, 0.0f, 0.5f, 0.4f, 1.0f);
  set_col(t, 1, 0, 0, 0.5f, 1.0f, 0.0f, TALUS_TOP);
  run(t, &c, TALUS_STAGE_PIPES, flows);
  for (int d = 0; d < 4; d++) {
    t->f[dcol(t, 1, 0, 0, d)] = t->f[dcol(t, 0, 0, 0, d)] = 0.0f;
    t->slip[dcol(t, 1, 0, 0, d)] = t->slip[dcol(t, 0, 0, 0, d)] = 0.0f;
  }
  t->slip[dcol(t, 1, 0, 0, TALUS_DIR_L)] = 0.3f;
  double s0 = total(t, t->s);
  memset(flows, 0, sizeof flows);
  run(t, &c, TALUS_STAGE_INFLOW, flows);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK_CLOSE(t->s[col(t, 0, 0, 0)], 0.6, 1e-6, "sand fills the cave to C - B - w");
  CHECK_CLOSE(t->s[col(t, 1, 0, 0)], 0.9, 1e-6, "the sand source loses only what fitted");
  CHECK(fabs(flows[TALUS_FLOW_SAND_OVERFILL]) < 1e-9, "no sand overfills: %g",
        flows[TALUS_FLOW_SAND_OVERFILL]);
  CHECK_CLOSE(total(t, t->s), s0, 1e-6, "sand conserved");
  talus_tile_free(t);
}

/* Evaporation after transport: full rate under open sky, scaled by the
 * free space under a ceiling, with a 1% floor. */
static void test_evaporation(void) {
  talus_tile *t = make_tile(3, 1, 2);
  talus_kctx c = make_ctx(3, 1);
  c.P.evaporation = 0.09f;
  double flows[TALUS_FLOW_COUNT] = {0};
  for (int x = 0; x < 3; x++)
    t->count[talus_idx(t, x, 0)] = 2;
  float ceil[3] = {2.0f, 1.05f, 1.0f};
  for (int x = 0; x < 3; x++) {
    set_col(t, x, 0, 0, 0.0f, 0.0f, 1.0f, ceil[x]);
    set_col(t, x, 0, 1, 10.0f, 0.0f, 1.0f, TALUS_TOP);
  }
  run(t, &c, TALUS_STAGE_PIPES, flows);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  double e = 0.09 * 0.15;
  CHECK_CLOSE(t->w[col(t, 0, 0, 1)], 1.0 - e, 1e-6, "open sky: full rate");
  CHECK_CLOSE(t->w[col(t, 0, 0, 0)], 1.0 - 0.1 * e, 1e-6, "1 m free: scale 0.1");
  CHECK_CLOSE(t->w[col(t, 1, 0, 0)], 1.0 - 0.01 * e, 1e-6, "5 cm free: 1% floor");
  CHECK_CLOSE(flows[TALUS_FLOW_EVAPORATION], 6.0 - total(t, t->w), 1e-6, "evaporation booked");
  talus_tile_free(t);
}

/* Petrification: B rises by what s loses, booked as PETRIFY; on high
 * terrain (B = 1000 m, ulp 6e-5) amounts far below an ulp still petrify
 * at the right mean rate. */
static void test_petrify(void) {
  talus_tile *t = make_tile(16, 16, 1);
  talus_kctx c = make_ctx(16, 16);
  c.P.petrification = 0.1f;
  double flows[TALUS_FLOW_COUNT] = {0};
  set_col(t, 3, 3, 0, 0.0f, 1.0f, 0.0f, TALUS_TOP);
  run(t, &c, TALUS_STAGE_PIPES, flows);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  CHECK_CLOSE(t->B[col(t, 3, 3, 0)], 0.015, 1e-8, "B += kappa dt s");
  CHECK_CLOSE(t->s[col(t, 3, 3, 0)], 0.985, 1e-7, "s -= kappa dt s");
  CHECK_CLOSE(flows[TALUS_FLOW_PETRIFY], t->B[col(t, 3, 3, 0)], 1e-12, "PETRIFY = change of B");

  c.P.petrification = 1e-3f;
  memset(flows, 0, sizeof flows);
  for (int y = 0; y < 16; y++)
    for (int x = 0; x < 16; x++)
      set_col(t, x, y, 0, 1000.0f, 0.01f, 0.0f, TALUS_TOP);
  double B0 = total(t, t->B), s0 = total(t, t->s);
  int steps = 1000;
  for (c.step = 0; c.step < steps; c.step++) {
    run(t, &c, TALUS_STAGE_PIPES, flows);
    run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  }
  double expect = s0 * (1.0 - pow(1.0 - 1e-3 * 0.15, steps));
  CHECK_CLOSE(total(t, t->B) - B0, flows[TALUS_FLOW_PETRIFY], 1e-9, "bedrock gain booked");
  CHECK_CLOSE(s0 - total(t, t->s), flows[TALUS_FLOW_PETRIFY], 1e-6, "sand loss booked");
  CHECK_CLOSE(flows[TALUS_FLOW_PETRIFY], expect, 0.1 * expect, "mean petrification rate");
  talus_tile_free(t);
}

/* Outflow borders: water, sediment and sand leaving a 1x1 domain are
 * booked as outflow and equal what the cell lost (sand through the 4
 * diagonal pipes too, whose talus rise is √2 longer). */
static void test_outflow(void) {
  talus_tile *t = make_tile(1, 1, 1);
  talus_kctx c = make_ctx(1, 1);
  c.P.outflow_water = 1;
  c.P.outflow_slippage = 1;
  c.P.enable_slippage = 1;
  double flows[TALUS_FLOW_COUNT] = {0};
  set_col(t, 0, 0, 0, 0.0f, 2.0f, 1.0f, TALUS_TOP);
  t->r[0] = 0.01f;
  run(t, &c, TALUS_STAGE_PIPES, flows);
  run(t, &c, TALUS_STAGE_TRANSPORT, flows);
  double f = 0.15 * 9.81 * 1.0, wet = 1.0 / 2.0; /* T = tan_dry (1 - (w + 0)/2 / range) */
  double a = (2.0 - TAN30 * wet) / 8.0 + (2.0 - TAN30 * wet * sqrt(2.0)) / 8.0 / sqrt(2.0);
  CHECK_CLOSE(flows[TALUS_FLOW_WATER_OUTFLOW], 4.0 * f * 0.15, 1e-6, "water outflow booked");
  CHECK_CLOSE(t->w[0], 1.0 - 4.0 * f * 0.15, 1e-6, "water lost");
  CHECK_CLOSE(flows[TALUS_FLOW_SEDIMENT_OUTFLOW], 0.01, 1e-7, "sediment leaves (K_r)");
  CHECK(t->r[0] >= 0.0f && t->r[0] < 1e-7f, "sediment gone: %g", t->r[0]);
  CHECK_CLOSE(flows[TALUS_FLOW_SAND_OUTFLOW], 4.0 * a, 1e-6, "sand outflow booked");
  CHECK_CLOSE(t->s[0], 2.0 - 4.0 * a, 1e-6, "sand lost");
  talus_tile_free(t);
}

/* NoData neighbours: a sink takes water and books it as outflow; a wall
 * stops it. The masked cell itself never changes. */
static void test_nodata(void) {
  for (int policy = TALUS_NODATA_OUTFLOW; policy <= TALUS_NODATA_WALL; policy++) {
    talus_tile *t = make_tile(2, 1, 1);
    talus_kctx c = make_ctx(2, 1);
    c.P.nodata_policy = policy;
    double flows[TALUS_FLOW_COUNT] = {0};
    size_t m = talus_idx(t, 1, 0);
    t->mask[m] = 1;
    t->count[m] = 0;
    t->w[m] = 7.0f;
    set_col(t, 0, 0, 0, 0.0f, 0.0f, 1.0f, TALUS_TOP);
    run(t, &c, TALUS_STAGE_PIPES, flows);
    run(t, &c, TALUS_STAGE_TRANSPORT, flows);
    CHECK(t->w[m] == 7.0f, "masked cell untouched");
    if (policy == TALUS_NODATA_OUTFLOW) {
      CHECK(t->pipe[dcol(t, 0, 0, 0, TALUS_DIR_R)] == -2, "sink pipe");
      CHECK_CLOSE(t->w[0], 1.0 - 0.15 * 9.81 * 0.15, 1e-6, "water drains into the sink");
      CHECK_CLOSE(flows[TALUS_FLOW_WATER_OUTFLOW], 1.0 - t->w[0], 1e-6, "sink booked");
    } else {
      CHECK(t->pipe[dcol(t, 0, 0, 0, TALUS_DIR_R)] == -1, "wall: no pipe");
      CHECK(t->w[0] == 1.0f, "wall holds the water");
      CHECK(flows[TALUS_FLOW_WATER_OUTFLOW] == 0.0, "nothing booked");
    }
    talus_tile_free(t);
  }
}

int main(void) {
  test_move();
  test_multi_inflow();
  test_overfill();
  test_evaporation();
  test_petrify();
  test_outflow();
  test_nodata();
  return check_report("test_kernel_transport");
}
