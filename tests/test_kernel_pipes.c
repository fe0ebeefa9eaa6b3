/*
 * test_kernel_pipes.c — hand-computed cases of the pipes stage: flux from a
 * head difference, K_w / K_e / K_r / K_a limiters, pipe choice among the
 * columns of a neighbour cell, outflow and reflecting borders, slippage and
 * tilt (of the ground, or of the water surface under stream power).
 */
#include "check.h"
#include "kernels/cpu/cpu.h"
#include "kernels/pipes.h"

#include <math.h>
#include <string.h>

#define TAN30 0.57735026918962576 /* tan 30°, the default dry angle of repose */

static talus_tile *make_tile(int w, int h, int nz) {
  talus_tile *t = NULL;
  talus_rect r = {0, 0, w, h};
  return talus_tile_create(&t, r, nz, 0) == TALUS_OK ? t : NULL;
}

/* A context with no rain, evaporation or petrification, dt 0.15, l_c 1. */
static talus_kctx make_ctx(int nx, int ny) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.rain = 0.0f;
  c.P.evaporation = 0.0f;
  c.P.petrification = 0.0f;
  c.P.cell_size = 1.0f;
  c.P.dt = 0.15f;
  talus_kparams_derive(&c.P);
  c.nx = nx;
  c.ny = ny;
  return c;
}

static void set_col(talus_tile *t, int x, int y, int k, float B, float s, float w, float C) {
  size_t ci = talus_col(t, talus_idx(t, x, y), k);
  t->B[ci] = B;
  t->s[ci] = s;
  t->w[ci] = w;
  t->C[ci] = C;
}

static float F(const talus_tile *t, int x, int y, int k, int d) {
  return t->f[talus_dcol(t, talus_idx(t, x, y), k, d)];
}
static int PIPE(const talus_tile *t, int x, int y, int k, int d) {
  return t->pipe[talus_dcol(t, talus_idx(t, x, y), k, d)];
}
static float SLIP(const talus_tile *t, int x, int y, int k, int d) {
  return t->slip[talus_dcol(t, talus_idx(t, x, y), k, d)];
}

static float DSLIP(const talus_tile *t, int x, int y, int k, int j) {
  return t->dslip[talus_dcol(t, talus_idx(t, x, y), k, j)];
}

static void run_pipes(talus_tile *t, talus_kctx *c) {
  double flows[TALUS_FLOW_COUNT] = {0};
  talus_rect all = {0, 0, t->buf.w, t->buf.h};
  talus_cpu_stage(t, c, TALUS_STAGE_PIPES, all, flows);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    CHECK(flows[i] == 0.0, "pipes books flow %d", i);
}

/* Two cells, 1 m of water on the left: f_R = dt·g·l_c·Δh; no flux uphill;
 * stale flux against the reflecting walls is reset to 0. */
static void test_head_flux(void) {
  talus_tile *t = make_tile(2, 1, 1);
  talus_kctx c = make_ctx(2, 1);
  set_col(t, 0, 0, 0, 0.0f, 0.0f, 1.0f, TALUS_TOP);
  t->f[talus_dcol(t, talus_idx(t, 0, 0), 0, TALUS_DIR_L)] = 5.0f; /* stale */
  t->f[talus_dcol(t, talus_idx(t, 0, 0), 0, TALUS_DIR_D)] = 3.0f;
  run_pipes(t, &c);
  CHECK_CLOSE(F(t, 0, 0, 0, TALUS_DIR_R), 0.15 * 9.81 * 1.0 * 1.0, 1e-6, "f_R = dt g l_c dh");
  CHECK(F(t, 0, 0, 0, TALUS_DIR_L) == 0.0f, "reflecting wall zeroes stale flux");
  CHECK(F(t, 0, 0, 0, TALUS_DIR_D) == 0.0f, "reflecting wall zeroes stale flux (D)");
  CHECK(F(t, 0, 0, 0, TALUS_DIR_U) == 0.0f, "no flux into the wall above");
  CHECK(F(t, 1, 0, 0, TALUS_DIR_L) == 0.0f, "no flux uphill");
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_R) == 0, "pipe to the neighbour's only column");
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_L) == -1, "no pipe at a reflecting wall");
  CHECK(t->kr[talus_idx(t, 0, 0)] == 0.0f, "no sediment, K_r = 0");
  /* Damping: a second stage adds the same acceleration to the damped flux. */
  float f1 = F(t, 0, 0, 0, TALUS_DIR_R);
  run_pipes(t, &c);
  CHECK_CLOSE(F(t, 0, 0, 0, TALUS_DIR_R), (1.0 - 0.01 * 0.15) * f1 + 0.15 * 9.81, 1e-5,
              "damped flux plus acceleration");
  talus_tile_free(t);
}

/* A thin film on a high cell with a large old flux: K_w scales the flux so
 * that exactly the water held leaves; K_r likewise for sediment. */
static void test_limiters(void) {
  talus_tile *t = make_tile(2, 1, 1);
  talus_kctx c = make_ctx(2, 1);
  set_col(t, 0, 0, 0, 10.0f, 0.0f, 0.01f, TALUS_TOP);
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 0.0f, TALUS_TOP);
  size_t i0 = talus_idx(t, 0, 0);
  t->f[talus_dcol(t, i0, 0, TALUS_DIR_R)] = 10.0f;
  t->r[i0] = 0.001f;
  run_pipes(t, &c);
  double out = F(t, 0, 0, 0, TALUS_DIR_R) * 0.15;
  CHECK_CLOSE(out, 0.01, 1e-6, "K_w: outflow volume equals the water held");
  CHECK_CLOSE(t->kr[i0] * out, 0.001, 1e-6, "K_r: sediment outflow equals the sediment held");
  talus_tile_free(t);
}

/* K_e: inflow into a neighbour column under a ceiling is capped by its free
 * space C' - W' per step. */
static void test_space_limit(void) {
  talus_tile *t = make_tile(2, 1, 2);
  talus_kctx c = make_ctx(2, 1);
  set_col(t, 0, 0, 0, 0.2f, 0.0f, 3.0f, TALUS_TOP);
  t->count[talus_idx(t, 1, 0)] = 2;
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 0.9f, 1.0f);
  set_col(t, 1, 0, 1, 5.0f, 0.0f, 0.0f, TALUS_TOP);
  t->f[talus_dcol(t, talus_idx(t, 0, 0), 0, TALUS_DIR_R)] = 5.0f;
  run_pipes(t, &c);
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_R) == 0, "pipe into the lower (cave) column");
  CHECK_CLOSE(F(t, 0, 0, 0, TALUS_DIR_R) * 0.15, 0.1, 1e-5, "K_e: inflow capped by free space");
  /* Without the old flux the acceleration alone fits: Δh = min(W, C') - max(W', S). */
  t->f[talus_dcol(t, talus_idx(t, 0, 0), 0, TALUS_DIR_R)] = 0.0f;
  run_pipes(t, &c);
  CHECK_CLOSE(F(t, 0, 0, 0, TALUS_DIR_R), 0.15 * 9.81 * (1.0 - 0.9), 1e-5,
              "head limited by the neighbour's ceiling");
  talus_tile_free(t);
}

/* Pipe choice: the lowest neighbour column whose ceiling is above our
 * bedrock and which is not full; otherwise the top column. */
static void test_pipe_choice(void) {
  talus_tile *t = make_tile(2, 1, 2);
  talus_kctx c = make_ctx(2, 1);
  t->count[talus_idx(t, 1, 0)] = 2;
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 0.0f, 5.0f);
  set_col(t, 1, 0, 1, 8.0f, 0.0f, 0.0f, TALUS_TOP);
  set_col(t, 0, 0, 0, 2.0f, 0.0f, 1.0f, TALUS_TOP);
  run_pipes(t, &c);
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_R) == 0, "B < C' and space: lower column");
  CHECK(PIPE(t, 1, 0, 0, TALUS_DIR_L) == 0, "cave column sees our only column");
  CHECK(PIPE(t, 1, 0, 1, TALUS_DIR_L) == 0, "roof column sees our only column");
  set_col(t, 0, 0, 0, 6.0f, 0.0f, 1.0f, TALUS_TOP);
  run_pipes(t, &c);
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_R) == 1, "bedrock above the cave ceiling: top column");
  CHECK(F(t, 0, 0, 0, TALUS_DIR_R) == 0.0f, "no flux into the higher roof column");
  set_col(t, 0, 0, 0, 2.0f, 0.0f, 1.0f, TALUS_TOP);
  set_col(t, 1, 0, 0, 0.0f, 0.0f, 5.0f, 5.0f);
  run_pipes(t, &c);
  CHECK(PIPE(t, 0, 0, 0, TALUS_DIR_R) == 1, "full cave column is skipped");
  talus_tile_free(t);
}

/* Outflow border: virtual neighbour at our bedrock, pipe -2, flux from the
 * water depth alone; slippage border independent of the water border. */
static void test_outflow_border(void) {
  talus_tile *t = make_tile(1, 1, 1);
  talus_kctx c = make_ctx(1, 1);
  c.P.outflow_water = 1;
  set_col(t, 0, 0, 0, 3.0f, 0.5f, 0.2f, TALUS_TOP);
  run_pipes(t, &c);
  for (int d = 0; d < 4; d++) {
    CHECK(PIPE(t, 0, 0, 0, d) == -2, "outflow pipe in dir %d", d);
    CHECK_CLOSE(F(t, 0, 0, 0, d), 0.15 * 9.81 * 0.2, 1e-6, "outflow flux from w alone");
    CHECK(SLIP(t, 0, 0, 0, d) == 0.0f, "slippage border still reflects");
  }
  c.P.outflow_water = 0;
  c.P.outflow_slippage = 1;
  set_col(t, 0, 0, 0, 3.0f, 2.0f, 0.0f, TALUS_TOP);
  run_pipes(t, &c);
  double a = (2.0 - TAN30) / 8.0;
  for (int d = 0; d < 4; d++) {
    CHECK(PIPE(t, 0, 0, 0, d) == -1, "water reflects in dir %d", d);
    CHECK(F(t, 0, 0, 0, d) == 0.0f, "no water flux");
    CHECK_CLOSE(SLIP(t, 0, 0, 0, d), a, 1e-6, "slippage outflow (S - B - T l_c)/8");
  }
  talus_tile_free(t);
}

/* Slippage: a sand tower on flat bedrock; dry talus, wet talus, the K_a
 * limiter, and the enable switch. */
static void test_slippage(void) {
  talus_tile *t = make_tile(3, 3, 1);
  talus_kctx c = make_ctx(3, 3);
  set_col(t, 1, 1, 0, 0.0f, 2.0f, 0.0f, TALUS_TOP);
  run_pipes(t, &c);
  double dry = (2.0 - TAN30) / 8.0, dry_diag = (2.0 - TAN30 * sqrt(2.0)) / 8.0 / sqrt(2.0);
  for (int d = 0; d < 4; d++) {
    CHECK_CLOSE(SLIP(t, 1, 1, 0, d), dry, 1e-6, "dry slippage");
    CHECK_CLOSE(DSLIP(t, 1, 1, 0, d), dry_diag, 1e-6,
                "dry diagonal: rise T sqrt(2) l_c, rate 1/sqrt(2)");
    CHECK(t->dpipe[talus_dcol(t, talus_idx(t, 1, 1), 0, d)] == 0, "diagonal pipe %d", d);
  }
  CHECK(SLIP(t, 0, 1, 0, TALUS_DIR_R) == 0.0f, "no slippage uphill");
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 0.0f, x == 1 && y == 1 ? 2.0f : 0.0f, 1.0f, TALUS_TOP);
  run_pipes(t, &c);
  for (int d = 0; d < 4; d++) {
    CHECK_CLOSE(SLIP(t, 1, 1, 0, d), 2.0 / 8.0, 1e-6, "wet: tan = 0");
    CHECK_CLOSE(DSLIP(t, 1, 1, 0, d), 2.0 / 8.0 / sqrt(2.0), 1e-6, "wet diagonal: tan = 0");
  }
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 0.0f, 0.0f, 0.0f, TALUS_TOP);
  set_col(t, 1, 1, 0, 10.0f, 0.1f, 0.0f, TALUS_TOP);
  run_pipes(t, &c);
  double sum = 0.0;
  for (int d = 0; d < 4; d++)
    sum += SLIP(t, 1, 1, 0, d) + DSLIP(t, 1, 1, 0, d);
  CHECK_CLOSE(sum, 0.1, 1e-6, "K_a: slippage limited to the sand held");
  CHECK(DSLIP(t, 1, 1, 0, 0) < SLIP(t, 1, 1, 0, 0), "diagonals get less: longer pipes");
  c.P.slip_diagonal = 0; /* the paper's 4 neighbours */
  talus_kparams_derive(&c.P);
  run_pipes(t, &c);
  sum = 0.0;
  for (int d = 0; d < 4; d++) {
    sum += SLIP(t, 1, 1, 0, d);
    CHECK(DSLIP(t, 1, 1, 0, d) == 0.0f, "4 neighbours: no diagonal slippage");
  }
  CHECK_CLOSE(sum, 0.1, 1e-6, "K_a, 4 neighbours: slippage limited to the sand held");
  c.P.enable_slippage = 0;
  run_pipes(t, &c);
  for (int d = 0; d < 4; d++)
    CHECK(SLIP(t, 1, 1, 0, d) == 0.0f, "slippage disabled");
  talus_tile_free(t);
}

/* Tilt from central differences of the neighbour surfaces: a plane of slope
 * m in x gives sin α = m / √(1 + m²); flat gives 0. */
static void test_tilt(void) {
  talus_tile *t = make_tile(3, 3, 1);
  talus_kctx c = make_ctx(3, 3);
  run_pipes(t, &c);
  CHECK(t->sina[talus_idx(t, 1, 1)] == 0.0f, "flat: sin α = 0");
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 0.5f * (float)x, 0.0f, 0.0f, TALUS_TOP);
  run_pipes(t, &c);
  CHECK_CLOSE(t->sina[talus_idx(t, 1, 1)], 0.5 / sqrt(1.25), 1e-6, "sin α of slope 0.5");
  talus_tile_free(t);
}

/* The same slope of ground under a still pool, its surface level at 2 m:
 * the paper's law reads the ground's tilt, erosion.law = stream_power the
 * water surface's (the energy slope), which is flat: a pool does not scour
 * its own floor. */
static void test_tilt_under_water(void) {
  talus_tile *t = make_tile(3, 3, 1);
  talus_kctx c = make_ctx(3, 3);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 0.5f * (float)x, 0.0f, 2.0f - 0.5f * (float)x, TALUS_TOP);
  run_pipes(t, &c);
  CHECK_CLOSE(t->sina[talus_idx(t, 1, 1)], 0.5 / sqrt(1.25), 1e-6, "paper: the ground's tilt");
  c.P.erosion_law = TALUS_LAW_STREAM_POWER;
  run_pipes(t, &c);
  CHECK(t->sina[talus_idx(t, 1, 1)] == 0.0f, "stream power: a level pool has no tilt (%g)",
        (double)t->sina[talus_idx(t, 1, 1)]);
  talus_tile_free(t);
}

/* erosion.tilt = downhill: the centre cell of a slope of 0.5 rising to +x
 * holds 0.5 m of water. Its outflow runs down the slope (to -x): the
 * steepest tilt, as the paper reads it. With a stale flux up the slope
 * (+x, the momentum of water leaving a hole over its far rim) the outflow
 * climbs: no tilt downhill, the steepest still with the paper's. */
static void test_tilt_downhill(void) {
  talus_tile *t = make_tile(3, 3, 1);
  talus_kctx c = make_ctx(3, 3);
  size_t mid = talus_idx(t, 1, 1);
  double steepest = 0.5 / sqrt(1.25);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 0.5f * (float)x, 0.0f, x == 1 && y == 1 ? 0.5f : 0.0f, TALUS_TOP);
  c.P.erosion_tilt = TALUS_TILT_DOWNHILL;
  run_pipes(t, &c);
  CHECK(F(t, 1, 1, 0, TALUS_DIR_L) > 0.0f && F(t, 1, 1, 0, TALUS_DIR_R) == 0.0f,
        "the water leaves down the slope");
  CHECK_CLOSE(t->sina[mid], steepest, 1e-6, "downhill, flowing down: the steepest tilt");
  t->f[talus_dcol(t, mid, 0, TALUS_DIR_R)] = 5.0f;
  run_pipes(t, &c);
  CHECK(F(t, 1, 1, 0, TALUS_DIR_R) > F(t, 1, 1, 0, TALUS_DIR_L), "the outflow climbs");
  CHECK(t->sina[mid] == 0.0f, "downhill, flowing up: no tilt (%g)", (double)t->sina[mid]);
  t->f[talus_dcol(t, mid, 0, TALUS_DIR_R)] = 5.0f;
  c.P.erosion_tilt = TALUS_TILT_STEEPEST;
  run_pipes(t, &c);
  CHECK_CLOSE(t->sina[mid], steepest, 1e-6, "steepest, flowing up: the steepest tilt");
  for (int d = 0; d < 4; d++)
    t->f[talus_dcol(t, mid, 0, d)] = 0.0f;
  set_col(t, 1, 1, 0, 0.5f, 0.0f, 0.0f, TALUS_TOP);
  c.P.erosion_tilt = TALUS_TILT_DOWNHILL;
  run_pipes(t, &c);
  CHECK(t->sina[mid] == 0.0f, "downhill, no outflow: no tilt (%g)", (double)t->sina[mid]);
  talus_tile_free(t);
}

/* erosion.tilt = no_pits: a cell whose ground lies below its four
 * neighbours' reads no tilt, though the paper's law reads its rim's (a
 * pit scours itself deeper); one level with its lowest neighbour (a
 * channel floor beside a wall) or above it reads the steepest tilt. */
static void test_tilt_pits(void) {
  talus_tile *t = make_tile(3, 3, 1);
  talus_kctx c = make_ctx(3, 3);
  size_t mid = talus_idx(t, 1, 1);
  const float ground[3][3] = {{1.0f, 1.0f, 1.0f}, {0.5f, 0.2f, 2.0f}, {1.0f, 1.0f, 1.0f}};
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, ground[y][x], 0.0f, x == 1 && y == 1 ? 0.3f : 0.0f, TALUS_TOP);
  double steepest = sin(atan(1.5 / 2.0)); /* R - L over 2 l_c, no tilt along y */
  c.P.erosion_tilt = TALUS_TILT_STEEPEST;
  run_pipes(t, &c);
  CHECK_CLOSE(t->sina[mid], steepest, 1e-6, "steepest, a pit: its rim's tilt");
  c.P.erosion_tilt = TALUS_TILT_NO_PITS;
  run_pipes(t, &c);
  CHECK(t->sina[mid] == 0.0f, "no_pits, a pit: no tilt (%g)", (double)t->sina[mid]);
  const float floors[2] = {0.5f, 0.6f}; /* level with the lowest neighbour, above it */
  for (int i = 0; i < 2; i++) {
    set_col(t, 1, 1, 0, floors[i], 0.0f, 0.3f, TALUS_TOP);
    run_pipes(t, &c);
    CHECK_CLOSE(t->sina[mid], steepest, 1e-6,
                floors[i] > 0.5f ? "no_pits, above its lowest neighbour: the tilt"
                                 : "no_pits, level with its lowest neighbour: the tilt");
  }
  talus_tile_free(t);
}

int main(void) {
  test_head_flux();
  test_limiters();
  test_space_limit();
  test_pipe_choice();
  test_outflow_border();
  test_slippage();
  test_tilt();
  test_tilt_under_water();
  test_tilt_downhill();
  test_tilt_pits();
  return check_report("test_kernel_pipes");
}
