/*
 * test_kernel_horizontal.c — the horizontal erosion kernel against hand
 * computations of reference step 4: damage next to a water column equals
 * eq. 22 with the reference's remaps, velocity-facing attenuation, the
 * floating-column branch (sin β = 1), no damage without overlap or on gentle
 * slopes, the strict maximum with its σ, and neighbours that do not erode
 * (out of the domain, NoData, disabled).
 */
#include "check.h"
#include "kernels/cpu/cpu.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A w×h tile at the origin; every cell one column of bedrock 0. */
static talus_tile *make_tile(int w, int h) {
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, w, h}, 8, 0) != TALUS_OK) return NULL;
  return t;
}

/* Default parameters, l_c = 1 m, over an nx×ny domain. */
static talus_kctx make_ctx(int nx, int ny) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.cell_size = 1.0f;
  talus_kparams_derive(&c.P);
  c.nx = nx;
  c.ny = ny;
  return c;
}

static size_t col(const talus_tile *t, int x, int y, int k) {
  return talus_col(t, talus_idx(t, x, y), k);
}

/* Sets column k of cell (x, y): bedrock top, sand, water, ceiling. */
static void set_col(talus_tile *t, int x, int y, int k, float B, float s, float w, float C) {
  size_t j = col(t, x, y, k);
  t->B[j] = B;
  t->s[j] = s;
  t->w[j] = w;
  t->C[j] = C;
}

static void set_vel(talus_tile *t, int x, int y, int k, float vx, float vy) {
  t->vx[col(t, x, y, k)] = vx;
  t->vy[col(t, x, y, k)] = vy;
}

/* A 3×3 world: a bedrock wall of height 10 everywhere but the right
 * neighbour (2,1) of the centre, a pool floor at 0 holding `water`. */
static talus_tile *wall_and_pool(float water) {
  talus_tile *t = make_tile(3, 3);
  if (!t) return NULL;
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      set_col(t, x, y, 0, 10.0f, 0.0f, 0.0f, TALUS_TOP);
  set_col(t, 2, 1, 0, 0.0f, 0.0f, water, TALUS_TOP);
  return t;
}

static double smoothstep(double e0, double e1, double v) {
  double u = (v - e0) / (e1 - e0);
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return u * u * (3 - 2 * u);
}

/* Eq. 22 with the reference's remaps, in double, for a neighbour lying in
 * direction (ox, oy) with velocity (vx, vy). */
static double expected_damage(const talus_kparams *P, double sinb, double vx, double vy, int ox,
                              int oy, double overlap) {
  double sins = smoothstep(P->horiz_min_slope, 1.0, sinb) * sinb;
  double speed = P->min_scale + (P->max_scale - P->min_scale) * sqrt(vx * vx + vy * vy);
  double att = 0.5 - 0.5 * (ox * vx + oy * vy) / (speed + TALUS_EPS);
  return P->horiz_strength * sins * speed * att * overlap * P->dt / P->cell_size;
}

static double run_horizontal(talus_tile *t, const talus_kctx *c) {
  double flows[TALUS_FLOW_COUNT] = {0};
  talus_status st =
      talus_cpu_stage(t, c, TALUS_STAGE_HORIZONTAL, (talus_rect){0, 0, t->buf.w, t->buf.h}, flows);
  CHECK(st == TALUS_OK, "horizontal stage failed");
  double sum = 0;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    sum += fabs(flows[f]);
  return sum;
}

/* Damage of the wall next to water flowing at it, away from it, along it. */
static void test_formula_and_attenuation(void) {
  const float vel[3][2] = {{-0.5f, 0.0f}, {0.5f, 0.0f}, {0.0f, 0.5f}};
  const char *what[3] = {"towards", "away", "along"};
  double sinb = 10.0 / sqrt(101.0); /* rise 10 m over l_c = 1 m */
  double got[3];
  for (int v = 0; v < 3; v++) {
    talus_tile *t = wall_and_pool(5.0f);
    talus_kctx c = make_ctx(3, 3);
    set_vel(t, 2, 1, 0, vel[v][0], vel[v][1]);
    CHECK(run_horizontal(t, &c) == 0.0, "damage books no ledger flow");
    size_t j = col(t, 1, 1, 0);
    got[v] = t->D[j];
    double want = expected_damage(&c.P, sinb, vel[v][0], vel[v][1], 1, 0, 5.0);
    CHECK(fabs(got[v] - want) <= 1e-6 * want, "%s: D %.9g vs %.9g", what[v], got[v], want);
    CHECK(t->sig_lo[j] == 0.0f && t->sig_hi[j] == 5.0f, "%s: sigma (%g, %g) vs (0, 5)", what[v],
          t->sig_lo[j], t->sig_hi[j]);
    CHECK(t->D[col(t, 2, 1, 0)] == 0.0f, "the pool's own bedrock is below its water: no damage");
    talus_tile_free(t);
  }
  CHECK(got[0] > 10.0 * got[1], "water flowing at the wall erodes far more than flowing away");
  CHECK(got[0] > got[2] && got[2] > got[1], "flow along the wall lies in between");
}

/* A column floating above the neighbour's sand (F > S') erodes at sin β = 1,
 * and its overlap starts at its own floor. */
static void test_floating_column(void) {
  talus_tile *t = wall_and_pool(5.0f);
  talus_kctx c = make_ctx(3, 3);
  size_t i = talus_idx(t, 1, 1);
  t->count[i] = 2;
  set_col(t, 1, 1, 0, 1.0f, 0.0f, 0.0f, 2.0f);
  set_col(t, 1, 1, 1, 10.0f, 0.0f, 0.0f, TALUS_TOP);
  run_horizontal(t, &c);
  double want = expected_damage(&c.P, 1.0, 0.0, 0.0, 1, 0, 3.0);
  size_t up = talus_col(t, i, 1), lo = talus_col(t, i, 0);
  CHECK_CLOSE(t->D[up], want, 1e-6 * want, "floating column damage, sigma (2, 5)");
  CHECK(t->sig_lo[up] == 2.0f && t->sig_hi[up] == 5.0f, "sigma (%g, %g) vs (2, 5)", t->sig_lo[up],
        t->sig_hi[up]);
  /* Lower column: bedrock 0..1 only 1 m above the pool floor, rise 1 over
   * l_c 1: sin β = 0.707 < 0.9, no damage, default σ = (floor, B). */
  CHECK(t->D[lo] == 0.0f, "gentle rise: no damage (%g)", t->D[lo]);
  CHECK(t->sig_lo[lo] == TALUS_BOTTOM && t->sig_hi[lo] == 1.0f, "default sigma of lower column");
  talus_tile_free(t);
}

/* Water entirely below a column's floor does not reach it; dry neighbours
 * and water below the bedrock's foot do nothing. */
static void test_no_overlap(void) {
  talus_tile *t = wall_and_pool(5.0f);
  talus_kctx c = make_ctx(3, 3);
  size_t i = talus_idx(t, 1, 1);
  t->count[i] = 2;
  set_col(t, 1, 1, 0, 3.0f, 0.0f, 0.0f, 6.0f);
  set_col(t, 1, 1, 1, 10.0f, 0.0f, 0.0f, TALUS_TOP);
  run_horizontal(t, &c);
  size_t up = talus_col(t, i, 1);
  CHECK(t->D[up] == 0.0f, "water surface 5 below floor 6: no damage (%g)", t->D[up]);
  CHECK(t->sig_lo[up] == 6.0f && t->sig_hi[up] == 10.0f, "default sigma = (floor, B)");
  talus_tile_free(t);

  t = wall_and_pool(0.0f);
  run_horizontal(t, &c);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++)
      CHECK(t->D[col(t, x, y, 0)] == 0.0f, "no water: no damage at (%d,%d)", x, y);
  talus_tile_free(t);
}

/* Two pools: only the strict maximum counts, with its own σ. */
static void test_strict_maximum(void) {
  talus_tile *t = wall_and_pool(5.0f);
  talus_kctx c = make_ctx(3, 3);
  set_col(t, 0, 1, 0, 0.0f, 0.0f, 3.0f, TALUS_TOP);
  run_horizontal(t, &c);
  double sinb = 10.0 / sqrt(101.0);
  double want = expected_damage(&c.P, sinb, 0, 0, 1, 0, 5.0);
  size_t j = col(t, 1, 1, 0);
  CHECK_CLOSE(t->D[j], want, 1e-6 * want, "D is the larger damage, not the sum");
  CHECK(t->sig_lo[j] == 0.0f && t->sig_hi[j] == 5.0f, "sigma of the deeper pool");
  talus_tile_free(t);
}

/* Out-of-domain neighbours (cells of the buffer beyond nx), NoData
 * neighbours and a disabled process erode nothing. */
static void test_non_eroding_neighbours(void) {
  talus_tile *t = wall_and_pool(5.0f);
  talus_kctx c = make_ctx(2, 3); /* column x = 2 lies outside the domain */
  run_horizontal(t, &c);
  CHECK(t->D[col(t, 1, 1, 0)] == 0.0f, "out-of-domain water: no damage");
  talus_tile_free(t);

  t = wall_and_pool(5.0f);
  c = make_ctx(3, 3);
  t->mask[talus_idx(t, 2, 1)] = 1;
  run_horizontal(t, &c);
  CHECK(t->D[col(t, 1, 1, 0)] == 0.0f, "NoData neighbour: no damage");
  talus_tile_free(t);

  t = wall_and_pool(5.0f);
  c.P.enable_horizontal = 0;
  t->D[col(t, 1, 1, 0)] = 0.25f;
  run_horizontal(t, &c);
  CHECK(t->D[col(t, 1, 1, 0)] == 0.25f, "disabled: damage unchanged");
  talus_tile_free(t);
}

/* A masked cell is never updated, even next to water. */
static void test_masked_cell(void) {
  talus_tile *t = wall_and_pool(5.0f);
  talus_kctx c = make_ctx(3, 3);
  t->mask[talus_idx(t, 1, 1)] = 1;
  t->sig_hi[col(t, 1, 1, 0)] = 123.0f;
  run_horizontal(t, &c);
  CHECK(t->D[col(t, 1, 1, 0)] == 0.0f, "masked: no damage");
  CHECK(t->sig_hi[col(t, 1, 1, 0)] == 123.0f, "masked: sigma untouched");
  talus_tile_free(t);
}

/* Damage of the wall over a 0.75 m notch (a still pool 0.75 m deep whose
 * floor lies 0.75 m under the wall's top) at cell size `cell`, with
 * horizontal.reference_cell `ref`. */
static double notch_damage(float cell, float ref) {
  talus_tile *t = wall_and_pool(0.75f);
  talus_kctx c = make_ctx(3, 3);
  c.P.cell_size = cell;
  c.P.horiz_reference_cell = ref;
  talus_kparams_derive(&c.P);
  set_col(t, 2, 1, 0, 9.25f, 0.0f, 0.75f, TALUS_TOP);
  run_horizontal(t, &c);
  double d = t->D[col(t, 1, 1, 0)];
  talus_tile_free(t);
  return d;
}

/* horizontal.reference_cell L: a wall's sin β is its rise over L, not over
 * the cell, and healing scales by L / l_c, so a notch deepens alike on any
 * grid. Damage per step still falls as 1/l_c (a split moves the face one
 * cell): damage × l_c, the face's retreat, is the same on every grid. */
static void test_reference_cell(void) {
  CHECK(notch_damage(2.0f, 0.0f) == 0.0, "2 m cells, no reference: a 0.75 m rise reads sin 0.35 "
                                         "< min_slope, no damage");
  double at_ref = notch_damage(0.25f, 0.0f), pinned = notch_damage(2.0f, 0.25f);
  CHECK(at_ref > 0.0, "0.25 m cells: the notch's wall erodes (%g)", at_ref);
  CHECK_CLOSE(pinned * 2.0, at_ref * 0.25, 1e-6 * at_ref,
              "2 m cells pinned to 0.25 m: the same "
              "retreat (D x l_c)");
  CHECK(notch_damage(0.25f, 0.25f) == at_ref, "L = l_c is the reference's own behaviour");
  talus_kctx c = make_ctx(3, 3);
  c.P.cell_size = 2.0f;
  c.P.horiz_reference_cell = 0.25f;
  talus_kparams_derive(&c.P);
  CHECK_CLOSE(c.P.hz_recovery, c.P.damage_recovery * 0.125, 1e-9, "healing scaled by L / l_c");
  c.P.horiz_reference_cell = 0.0f;
  talus_kparams_derive(&c.P);
  CHECK(c.P.hz_recovery == c.P.damage_recovery && c.P.hz_run == 2.0f, "L = 0: the reference's");
  /* horizontal.reference_slope = false: the slope over the cell's own run,
   * L scaling the healing only. */
  c.P.horiz_reference_cell = 0.25f;
  c.P.horiz_reference_slope = 0;
  talus_kparams_derive(&c.P);
  CHECK(c.P.hz_run == 2.0f && c.P.hz_recovery == c.P.damage_recovery * 0.125f,
        "reference_slope false: run l_c (%g), healing still scaled (%g)", (double)c.P.hz_run,
        (double)c.P.hz_recovery);
}

/* Damage of the solid wall (1,1) beside a notch in its neighbour (2,1): the
 * neighbour's lower column is a floor at 0 holding `water` under a roof at
 * `roof` (its upper column, rock to 10), on 2 m cells with the chasm-rain
 * pin (reference_cell 2, min_slope 0.5). notch_wall as given. */
static double notch_wall_damage(float water, float roof, int notch_wall, float *sig_lo,
                                float *sig_hi) {
  talus_tile *t = wall_and_pool(water);
  talus_kctx c = make_ctx(3, 3);
  c.P.cell_size = 2.0f;
  c.P.horiz_reference_cell = 2.0f;
  c.P.horiz_min_slope = 0.5f;
  c.P.horiz_notch_wall = notch_wall;
  talus_kparams_derive(&c.P);
  size_t i = talus_idx(t, 2, 1);
  t->count[i] = 2;
  set_col(t, 2, 1, 0, 0.0f, 0.0f, water, roof);
  set_col(t, 2, 1, 1, 10.0f, 0.0f, 0.0f, TALUS_TOP);
  run_horizontal(t, &c);
  size_t j = col(t, 1, 1, 0);
  double d = t->D[j];
  *sig_lo = t->sig_lo[j];
  *sig_hi = t->sig_hi[j];
  talus_tile_free(t);
  return d;
}

/* horizontal.notch_wall: the rock beside a notch (water under a roof that
 * the rock rises to) is a vertical face whatever the cell size, as the
 * reference reads it on its 0.125-0.25 m cells (a 0.75 m notch over
 * 0.125 m: sin β 0.99); over one 2 m run the reference's rise reads
 * 0.75 / sqrt(0.75^2 + 4) = 0.35, under min_slope, and the notch never
 * deepens. Rock that ends below the roof is a step in the notch's floor:
 * still a slope. */
static void test_notch_wall(void) {
  float lo, hi;
  CHECK(notch_wall_damage(0.75f, 0.75f, 0, &lo, &hi) == 0.0,
        "without notch_wall: the notch's back wall reads sin 0.35 < 0.5, no damage");
  double got = notch_wall_damage(0.75f, 0.75f, 1, &lo, &hi);
  talus_kctx c = make_ctx(3, 3);
  c.P.cell_size = 2.0f;
  talus_kparams_derive(&c.P);
  double want = expected_damage(&c.P, 1.0, 0.0, 0.0, 1, 0, 0.75);
  CHECK_CLOSE(got, want, 1e-6 * want, "notch_wall: the back wall wears at sin beta = 1");
  CHECK(lo == 0.0f && hi == 0.75f, "the notch's sigma (%g, %g) vs (0, 0.75)", lo, hi);
  /* A gap whose roof (12 m) lies above the wall's top (10 m): the wall is a
   * step inside the gap, read over the run as before (10 m over 2 m: 0.98). */
  double step = notch_wall_damage(0.75f, 12.0f, 1, &lo, &hi);
  double slope = notch_wall_damage(0.75f, 12.0f, 0, &lo, &hi);
  CHECK(step == slope, "rock below the roof: the reference's slope (%g vs %g)", step, slope);
}

int main(void) {
  test_formula_and_attenuation();
  test_floating_column();
  test_no_overlap();
  test_strict_maximum();
  test_non_eroding_neighbours();
  test_masked_cell();
  test_reference_cell();
  test_notch_wall();
  return check_report("test_kernel_horizontal");
}
