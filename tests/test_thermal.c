/*
 * test_thermal — the 8-pipe thermal erosion of kernels/thermal.h in both
 * models: a steep cone relaxes to the talus angle (no slope steeper than
 * talus + tolerance) while its volume is conserved and its potential energy
 * never rises (nothing oscillates); a pit filled from all 8 sides never
 * turns into a peak; hardness 1 stops it; in the layered model bedrock
 * weathers into sand (booked), the ledger closes, and nothing moves into
 * or out of the space under an overhang; the ledger closes with thermal on
 * top of the full layered model; 1 and 2 threads give equal bytes;
 * thermal.crests_only brings down a one-cell spur and pillar to the talus
 * angle and leaves a cliff with higher ground behind it to the bit;
 * thermal.every skips steps and covers their time; thermal.bank_angle
 * relaxes the walls of a trench the run cut to the bank angle and leaves
 * the same trench to the bit where the input had it.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"
#include "scene_fixture.h"

#include <math.h>
#include <omp.h>

#define TAN30 0.57735026918962576

/* A domain of n² cells of `cell` metres over heights h (copied). */
static talus_domain *make_domain(int n, double cell, const float *h, const char *const *sets) {
  talus_params *p = fixture_params(NULL, sets);
  talus_domain *d = NULL;
  if (p && talus_domain_create(&d, n, n, cell, h, NULL, p))
    fprintf(stderr, "domain: %s\n", talus_last_error());
  talus_params_free(p);
  return d;
}

/* Heights of a cone of `slope` (rise per metre) and height top, centred. */
static float *cone_heights(int n, double cell, double top, double slope) {
  float *h = malloc((size_t)n * n * sizeof *h);
  double c = 0.5 * (n - 1);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      double r = hypot(x - c, y - c) * cell, v = top - slope * r;
      h[(size_t)y * n + x] = (float)(v > 0.0 ? v : 0.0);
    }
  return h;
}

/* The surface (top S) of the domain, n² floats. */
static float *surface(const talus_domain *d) {
  int n = talus_domain_nx(d);
  float *s = malloc((size_t)n * n * sizeof *s);
  talus_domain_read(d, TALUS_FIELD_SURFACE, 0, s);
  return s;
}

/* Steepest descent between 8-neighbours of a surface [rise per metre]. */
static double max_slope(const float *s, int n, double cell) {
  double worst = 0.0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          int u = x + dx, v = y + dy;
          if ((!dx && !dy) || u < 0 || v < 0 || u >= n || v >= n) continue;
          double g = (s[(size_t)y * n + x] - s[(size_t)v * n + u]) / (cell * hypot(dx, dy));
          worst = g > worst ? g : worst;
        }
  return worst;
}

static double sum_of(const float *s, int n, int squares) {
  double a = 0.0;
  for (size_t i = 0; i < (size_t)n * n; i++)
    a += squares ? (double)s[i] * s[i] : s[i];
  return a;
}

static const char *const hf_thermal[] = {"simulation.model=heightfield",
                                         "heightfield.hydraulic=false",
                                         "thermal.enable=true",
                                         "thermal.talus_angle=30",
                                         "thermal.rate=100",
                                         "thermal.hardness=0",
                                         "simulation.dt=0.1",
                                         NULL};

/* Heightfield: a 56° cone relaxes to 30°, its volume stays (to rounding,
 * bounded by half an ulp of the tallest cell per cell and step) and its
 * potential energy falls every step. */
static void test_cone_heightfield(void) {
  const int n = 48, steps = 4000;
  float *h = cone_heights(n, 1.0, 40.0, 1.5);
  talus_domain *d = make_domain(n, 1.0, h, hf_thermal);
  CHECK(d != NULL, "cone domain");
  if (!d) return free(h);
  CHECK(max_slope(h, n, 1.0) > 1.4, "the cone starts steep");
  double vol0 = sum_of(h, n, 0), e_prev = sum_of(h, n, 1);
  int rises = 0;
  for (int s = 0; s < steps; s++) {
    talus_domain_run(d, 1, NULL, NULL);
    if (s % 10) continue;
    float *b = surface(d);
    double e = sum_of(b, n, 1);
    rises += e > e_prev * (1.0 + 1e-12);
    e_prev = e;
    free(b);
  }
  float *b = surface(d);
  double slope = max_slope(b, n, 1.0), vol = sum_of(b, n, 0);
  double bound = (double)n * n * steps * 0.5 * (nextafterf(40.0f, INFINITY) - 40.0f);
  printf("heightfield cone: max slope %.4f (tan 30 = %.4f), volume change %.3g (bound %.3g)\n",
         slope, TAN30, vol - vol0, bound);
  CHECK(slope <= TAN30 + 0.02, "max slope %.4f above talus %.4f + 0.02", slope, TAN30);
  CHECK(slope >= TAN30 - 0.1, "relaxed to %.4f, far below talus: material overshot", slope);
  CHECK(fabs(vol - vol0) <= bound, "volume changed by %.3g (rounding bound %.3g)", vol - vol0,
        bound);
  CHECK(rises == 0, "potential energy rose %d times", rises);
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  CHECK(fabs(L.total_residual) <= bound, "ledger residual %.3g", L.total_residual);
  free(b);
  free(h);
  talus_domain_free(d);
}

/* A pit 10 m deep in a plane, filled from its 8 neighbours at the capped
 * rate: it rises but never above its rim (no pit-to-peak oscillation). */
static void test_pit(void) {
  const int n = 16;
  float *h = calloc((size_t)n * n, sizeof *h);
  size_t pit = (size_t)(n / 2) * n + n / 2;
  h[pit] = -10.0f;
  talus_domain *d = make_domain(n, 1.0, h, hf_thermal);
  CHECK(d != NULL, "pit domain");
  if (!d) return free(h);
  int flips = 0;
  float first = 0.0f;
  for (int s = 0; s < 100; s++) {
    talus_domain_run(d, 1, NULL, NULL);
    float *b = surface(d);
    float rim = INFINITY;
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++)
        if (dx || dy) rim = fminf(rim, b[pit + (ptrdiff_t)dy * n + dx]);
    flips += b[pit] > rim;
    if (!s) first = b[pit];
    free(b);
  }
  CHECK(flips == 0, "the pit rose above its rim in %d steps", flips);
  CHECK(first > -5.0f, "the pit filled (%.3f after one step)", (double)first);
  free(h);
  talus_domain_free(d);
}

/* Hardness 1 is unerodible: nothing moves. */
static void test_hardness_stops(void) {
  const int n = 24;
  float *h = cone_heights(n, 1.0, 20.0, 1.5);
  static const char *const sets[] = {"simulation.model=heightfield", "heightfield.hydraulic=false",
                                     "thermal.enable=true",          "thermal.rate=100",
                                     "thermal.hardness=1",           NULL};
  talus_domain *d = make_domain(n, 1.0, h, sets);
  CHECK(d && talus_domain_run(d, 50, NULL, NULL) == TALUS_OK, "hard cone ran");
  float *b = d ? surface(d) : NULL;
  CHECK(b && !memcmp(b, h, (size_t)n * n * sizeof *h), "hardness 1 moved material");
  free(b);
  free(h);
  talus_domain_free(d);
}

/* A plateau 100 m high (rows < 12) whose cliff drops to 0 in one 30 m
 * cell, a one-cell spur running south from it (column 16, rows 12-20) and
 * a free pillar 100 m high (8, 24): heights of a 32² map. */
static float *crest_heights(int n) {
  float *h = calloc((size_t)n * n, sizeof *h);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      if (y < 12 || (x == 16 && y <= 20) || (x == 8 && y == 24)) h[(size_t)y * n + x] = 100.0f;
  return h;
}

/* How far cell (x, y) of s stands above both its x neighbours [m]. */
static double crest_rise(const float *s, int n, int x, int y) {
  size_t i = (size_t)y * n + x;
  return fmin(s[i] - s[i - 1], s[i] - s[i + 1]);
}

/* thermal.crests_only at 60 degrees on 30 m cells: the spur and the pillar
 * shed to the talus rise (tan 60 x 30 m = 52 m over the ground on both
 * sides) while the plateau's cliff, 100 m over one cell with higher ground
 * behind it, stands to the bit; the volume is kept. The control without
 * the rule sheds the cliff too. */
static void test_crests_only(void) {
  const int n = 32;
  float *h = crest_heights(n);
  double rise = tan(60.0 * M_PI / 180.0) * 30.0;
  /* only: 2 with thermal.every = 10 (a step covering ten steps' time) */
  for (int only = 2; only >= 0; only--) {
    const char *sets[] = {"simulation.model=heightfield",
                          "heightfield.hydraulic=false",
                          "thermal.enable=true",
                          "thermal.talus_angle=60",
                          "thermal.rate=2",
                          "thermal.hardness=0",
                          "simulation.dt=0.1",
                          only ? "thermal.crests_only=true" : "thermal.crests_only=false",
                          only == 2 ? "thermal.every=10" : "thermal.every=1",
                          NULL};
    talus_domain *d = make_domain(n, 30.0, h, sets);
    CHECK(d && talus_domain_run(d, 3000, NULL, NULL) == TALUS_OK, "crest domain ran");
    if (!d) break;
    float *b = surface(d);
    double spur = 0.0, cliff_moved = 0.0, pillar = crest_rise(b, n, 8, 24);
    for (int y = 13; y <= 19; y++)
      spur = fmax(spur, crest_rise(b, n, 16, y));
    for (int y = 9; y <= 13; y++)
      for (int x = 2; x <= 6; x++)
        cliff_moved = fmax(cliff_moved, fabs(b[(size_t)y * n + x] - h[(size_t)y * n + x]));
    double dv = sum_of(b, n, 0) - sum_of(h, n, 0);
    printf("crests_only=%d, every %d: spur %.2f m, pillar %.2f m over their ground (talus rise "
           "%.2f m), cliff moved %.3g m, volume %+.3g m\n",
           only > 0, only == 2 ? 10 : 1, spur, pillar, rise, cliff_moved, dv);
    if (only) {
      CHECK(spur <= rise + 1.0 && spur >= rise - 5.0, "spur stands %.2f m (talus %.2f)", spur,
            rise);
      CHECK(pillar <= rise + 1.0 && pillar >= rise - 5.0, "pillar stands %.2f m (talus %.2f)",
            pillar, rise);
      CHECK(cliff_moved == 0.0, "the cliff moved %.3g m with crests_only", cliff_moved);
    } else {
      CHECK(cliff_moved > 10.0, "control: the full rule sheds the cliff (%.3g m)", cliff_moved);
    }
    CHECK(fabs(dv) < 0.01, "volume changed by %.3g m", dv);
    free(b);
    talus_domain_free(d);
  }
  free(h);
}

/* thermal.every = 10: the talus rule runs on step 0 and then not until
 * step 10 (steps 1-9 leave the surface to the bit), and a step covers ten
 * steps' time: its first step moves 10x what one step of the rule at
 * every = 1 moves (the fraction below the 2/9 cap). */
static void test_every(void) {
  const int n = 24;
  float *h = cone_heights(n, 1.0, 20.0, 1.5);
  double moved[2] = {0.0, 0.0};
  for (int k = 0; k < 2; k++) {
    const char *sets[] = {"simulation.model=heightfield",
                          "heightfield.hydraulic=false",
                          "thermal.enable=true",
                          "thermal.rate=0.1",
                          "thermal.hardness=0",
                          "simulation.dt=0.1",
                          k ? "thermal.every=10" : "thermal.every=1",
                          NULL};
    talus_domain *d = make_domain(n, 1.0, h, sets);
    CHECK(d && talus_domain_run(d, 1, NULL, NULL) == TALUS_OK, "every domain ran");
    if (!d) break;
    float *a = surface(d);
    for (int i = 0; i < n * n; i++)
      moved[k] += fabs(a[i] - h[i]);
    talus_domain_run(d, 9, NULL, NULL);
    float *b = surface(d);
    int same = !memcmp(a, b, (size_t)n * n * sizeof *a);
    if (k) CHECK(same, "thermal.every=10: steps 1-9 moved material");
    if (!k) CHECK(!same, "thermal.every=1: steps 1-9 moved nothing");
    free(a), free(b);
    talus_domain_free(d);
  }
  printf("thermal.every: step 0 moved %.6g m (every 1), %.6g m (every 10): ratio %.4f\n", moved[0],
         moved[1], moved[1] / moved[0]);
  CHECK(fabs(moved[1] / moved[0] - 10.0) < 1e-3, "every 10 moved %.4fx one step's material",
        moved[1] / moved[0]);
  free(h);
}

/* thermal.bank_angle, driven stage by stage on one tile so that the
 * accumulators can say what the run cut: a 100 m plateau of 30 m cells
 * with two trenches 3 cells wide down to 0 m, trench A (columns 6-8)
 * booked as cut by the run (wear 100 m) and trench B (columns 26-28) as
 * the input's own. At 40 degrees A's walls fall in until no step into it
 * is steeper than the bank rise (25.2 m over 30 m) and it widens into a V;
 * B's walls stand to the bit, and so does A without the rule. The talus
 * rule itself is held off (89 degrees), so only the bank rule moves
 * anything; the volume is kept. */
enum { BANK_NX = 36, BANK_NY = 12, BANK_STEPS = 400 };

static int bank_trench(int x) {
  return (x >= 6 && x <= 8) ? 1 : (x >= 26 && x <= 28) ? 2 : 0;
}

static talus_tile *bank_tile(void) {
  talus_tile *t = NULL;
  talus_rect r = {0, 0, BANK_NX, BANK_NY};
  if (talus_tile_create(&t, r, 1, TALUS_TILE_ACC) != TALUS_OK) return NULL;
  for (int y = 0; y < BANK_NY; y++)
    for (int x = 0; x < BANK_NX; x++) {
      size_t i = talus_idx(t, x, y);
      t->B[i] = bank_trench(x) ? 0.0f : 100.0f;
      if (bank_trench(x) == 1) t->acc[TALUS_ACC_WEAR * t->plane + i] = 100.0f;
    }
  return t;
}

static void bank_run(talus_tile *t, const talus_kctx *c) {
  static const talus_stage_id plan[] = {TALUS_STAGE_ACC_BEGIN, TALUS_STAGE_THERMAL_OUT,
                                        TALUS_STAGE_THERMAL_IN, TALUS_STAGE_ACC_END};
  double flows[TALUS_FLOW_COUNT];
  for (int s = 0; s < BANK_STEPS; s++)
    for (size_t k = 0; k < sizeof plan / sizeof plan[0]; k++) {
      memset(flows, 0, sizeof flows);
      if (talus_cpu_stage(t, c, plan[k], t->buf, flows) != TALUS_OK) {
        CHECK(0, "bank stage %d: %s", (int)plan[k], talus_last_error());
        return;
      }
    }
}

/* The steepest drop [m] from a cell of columns x0..x1 to its x neighbour. */
static double bank_steepest(const talus_tile *t, int x0, int x1) {
  double worst = 0.0;
  for (int y = 0; y < BANK_NY; y++)
    for (int x = x0; x < x1; x++)
      worst = fmax(worst, fabs(t->B[talus_idx(t, x + 1, y)] - t->B[talus_idx(t, x, y)]));
  return worst;
}

static void test_bank(void) {
  double rise = tan(40.0 * M_PI / 180.0) * 30.0;
  for (int on = 1; on >= 0; on--) {
    talus_kctx c;
    memset(&c, 0, sizeof c);
    talus_kparams_defaults(&c.P);
    c.P.model = TALUS_MODEL_HEIGHTFIELD, c.P.hf_hydraulic = 0, c.P.enable_thermal = 1;
    c.P.thermal_talus_deg = 89.0f, c.P.thermal_rate = 2.0f, c.P.hardness = 0.0f;
    c.P.dt = 0.1f, c.P.cell_size = 30.0f, c.P.thermal_bank_deg = on ? 40.0f : 0.0f;
    CHECK(talus_kparams_derive(&c.P) == TALUS_OK, "bank params");
    CHECK(c.P.accumulate == on, "bank_angle turns the accumulators on (%d)", c.P.accumulate);
    c.nx = BANK_NX, c.ny = BANK_NY;
    talus_tile *t = bank_tile();
    CHECK(t != NULL, "bank tile");
    if (!t) return;
    double before = 0.0, after = 0.0, b_moved = 0.0;
    for (int y = 0; y < BANK_NY; y++)
      for (int x = 0; x < BANK_NX; x++)
        before += t->B[talus_idx(t, x, y)];
    bank_run(t, &c);
    for (int y = 0; y < BANK_NY; y++)
      for (int x = 0; x < BANK_NX; x++) {
        float b = t->B[talus_idx(t, x, y)];
        after += b;
        if (x >= 18) b_moved = fmax(b_moved, fabs(b - (bank_trench(x) ? 0.0f : 100.0f)));
      }
    printf("bank_angle %s: trench A's cross-section", on ? "40" : "off");
    for (int x = 2; x <= 12; x++)
      printf(" %.1f", (double)t->B[talus_idx(t, x, BANK_NY / 2)]);
    printf(" m\n");
    double steep_a = bank_steepest(t, 0, 17), steep_b = bank_steepest(t, 18, BANK_NX - 1);
    double wall = 100.0 - t->B[talus_idx(t, 4, BANK_NY / 2)];
    printf("bank_angle %s: trench A's steepest step %.2f m (bank rise %.2f m), the cell 2 from "
           "its edge lowered %.2f m; trench B's steepest %.2f m, moved %.3g m; volume %+.3g m\n",
           on ? "40" : "off", steep_a, rise, wall, steep_b, b_moved, after - before);
    if (on) {
      CHECK(steep_a <= rise + 0.5, "trench A's walls stand %.2f m over a cell (bank %.2f m)",
            steep_a, rise);
      CHECK(wall > 5.0, "trench A did not widen: 2 cells out lowered %.2f m", wall);
    } else {
      CHECK(steep_a == 100.0, "control: without the rule trench A's walls moved (%.2f m)", steep_a);
    }
    CHECK(b_moved == 0.0, "trench B, the input's own, moved %.3g m", b_moved);
    CHECK(steep_b == 100.0, "trench B's walls %.2f m", steep_b);
    CHECK(fabs(after - before) < 0.05, "volume changed by %.3g m", after - before);
    talus_tile_free(t);
  }
}

static const char *const layered_thermal[] = {"simulation.layers=2",     "water.rain=0",
                                              "water.evaporation=0",     "sand.slippage=false",
                                              "sand.petrification=0",    "erosion.enable=false",
                                              "horizontal.enable=false", "support.enable=false",
                                              "thermal.enable=true",     "thermal.talus_angle=30",
                                              "thermal.rate=100",        "thermal.hardness=0.5",
                                              "simulation.dt=0.1",       NULL};

/* Layered: a bedrock cone weathers into sand; the surface relaxes to the
 * talus angle; the bedrock lost is the booked THERMAL flow; the ledger
 * closes. */
static void test_cone_layered(void) {
  const int n = 40, steps = 1500;
  float *h = cone_heights(n, 1.0, 30.0, 1.5);
  talus_domain *d = make_domain(n, 1.0, h, layered_thermal);
  CHECK(d != NULL, "layered cone domain");
  if (!d) return free(h);
  talus_status st = talus_domain_run(d, steps, NULL, NULL);
  CHECK(st == TALUS_OK, "run: %s", talus_last_error());
  float *b = surface(d), *sand = malloc((size_t)n * n * sizeof *sand);
  talus_domain_read(d, TALUS_FIELD_SAND, 0, sand);
  double slope = max_slope(b, n, 1.0), sand_total = sum_of(sand, n, 0);
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double weathered = talus_domain_flow(d, TALUS_FLOW_THERMAL);
  printf("layered cone: max slope %.4f, weathered %.4g m3, sand %.4g m3, residual %.3g m3\n", slope,
         weathered, sand_total, L.total_residual);
  CHECK(slope <= TAN30 + 0.02, "layered max slope %.4f above talus", slope);
  CHECK(weathered > 1.0, "bedrock weathered into sand (%.3g m3)", weathered);
  CHECK_CLOSE(sand_total, weathered, 1e-4 * weathered, "sand equals the weathered bedrock");
  CHECK_CLOSE(L.initial[TALUS_MAT_BEDROCK] - L.current[TALUS_MAT_BEDROCK], weathered,
              1e-4 * weathered, "bedrock lost equals the THERMAL flow");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    CHECK(fabs(L.residual[m]) <= 1e-5 * weathered, "material %d residual %.3g m3", m,
          L.residual[m]);
  free(sand);
  free(b);
  free(h);
  talus_domain_free(d);
}

/* Layered: a deck (two-column cells: ground at 0 under a ceiling at 5, the
 * deck's bedrock up to 8) next to a 20 m tower. Thermal erosion sheds the
 * tower onto the deck and the deck's edges onto the open ground, but the
 * space under the deck is never touched and the deck never cuts below its
 * floor. */
static void test_overhang_untouched(void) {
  const int n = 24;
  float *h = calloc((size_t)n * n, sizeof *h), *cnt = malloc((size_t)n * n * sizeof *cnt);
  float *ceil = malloc((size_t)n * n * sizeof *ceil), *top = malloc((size_t)n * n * sizeof *top);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t i = (size_t)y * n + x;
      int deck = x >= 6 && x < 14 && y >= 4 && y < 20,
          tower = x >= 14 && x < 18 && y >= 8 && y < 16;
      cnt[i] = deck ? 2.0f : 1.0f;
      ceil[i] = deck ? 5.0f : TALUS_TOP;
      top[i] = deck ? 8.0f : 0.0f;
      h[i] = tower ? 20.0f : 0.0f;
    }
  talus_domain *d = make_domain(n, 1.0, h, layered_thermal);
  CHECK(d != NULL, "deck domain");
  if (d) {
    talus_domain_set_field(d, TALUS_FIELD_COLUMNS, 0, cnt);
    talus_domain_set_field(d, TALUS_FIELD_CEILING, 0, ceil);
    talus_domain_set_field(d, TALUS_FIELD_BEDROCK, 1, top);
  }
  talus_tile *t = d ? d->tile : NULL;
  CHECK(d && talus_domain_run(d, 400, NULL, NULL) == TALUS_OK, "deck run");
  int touched = 0, below = 0, decks_fed = 0;
  for (int y = 0; t && y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t i = talus_idx(t, x, y);
      if (t->count[i] != 2) continue;
      touched += t->B[i] != 0.0f || t->s[i] != 0.0f || t->w[i] != 0.0f || t->C[i] != 5.0f;
      below += t->B[talus_col(t, i, 1)] < 5.0f;
      decks_fed += t->s[talus_col(t, i, 1)] > 0.0f;
    }
  float ground = t ? t->s[talus_idx(t, 3, 12)] + t->s[talus_idx(t, 5, 12)] : 0.0f;
  CHECK(touched == 0, "%d cells under the deck changed", touched);
  CHECK(below == 0, "%d deck cells cut below their floor", below);
  CHECK(decks_fed > 0, "the tower shed sand onto the deck");
  CHECK(ground > 0.0f, "the deck's edge shed sand onto the open ground");
  talus_ledger_summary L;
  if (d) talus_domain_ledger(d, &L);
  double moved = d ? talus_domain_flow(d, TALUS_FLOW_THERMAL) : 0.0;
  printf("deck: weathered %.6g m3, ledger residual %.6g m3\n", moved, d ? L.total_residual : 0.0);
  CHECK(d && fabs(L.total_residual) <= 1e-5 * moved, "deck ledger residual %.3g",
        d ? L.total_residual : 0.0);
  free(h), free(cnt), free(ceil), free(top);
  talus_domain_free(d);
}

/* Layered model with every process on (rivers-rain: rain, erosion, sand
 * slippage, horizontal erosion, support) and thermal erosion added: the
 * ledger still closes, per material, while thermal erosion weathers
 * bedrock. The cone test above closes it with thermal alone; this one
 * checks that thermal's bookings compose with the hydraulic ones. */
static void test_ledger_layered_full(void) {
  static const char *const sets[] = {"thermal.enable=true", "thermal.rate=1",
                                     "thermal.talus_angle=20", NULL};
  talus_domain *d = fixture_domain("rivers-rain", 96, "rivers-rain", sets);
  CHECK(d != NULL, "rivers-rain + thermal domain");
  if (!d) return;
  CHECK(talus_domain_run(d, 400, NULL, NULL) == TALUS_OK, "run: %s", talus_last_error());
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double material = 0.0, rain = talus_domain_flow(d, TALUS_FLOW_RAIN);
  double weathered = talus_domain_flow(d, TALUS_FLOW_THERMAL);
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    material += L.initial[m];
  printf("layered full + thermal: rain %.5g, weathered %.5g, dissolved %.5g m3; residual %.3g "
         "(water %.3g) of material %.5g m3\n",
         rain, weathered, talus_domain_flow(d, TALUS_FLOW_DISSOLVE), L.total_residual,
         L.residual[TALUS_MAT_WATER], material);
  CHECK(rain > 0.0 && weathered > 0.0, "rain fell and thermal erosion weathered bedrock");
  CHECK(talus_domain_flow(d, TALUS_FLOW_DISSOLVE) > 0.0, "hydraulic erosion ran");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    CHECK(fabs(L.residual[m]) <= 1e-5 * material, "material %d residual %.3g", m, L.residual[m]);
  CHECK(fabs(L.residual[TALUS_MAT_WATER]) <= 1e-3 * rain, "water residual %.3g vs rain %.3g",
        L.residual[TALUS_MAT_WATER], rain);
  talus_domain_free(d);
}

/* 1 and 2 threads give the same bytes, in both models with thermal on. */
static void test_threads(void) {
  static const char *const layered[] = {"thermal.enable=true", "thermal.rate=1", NULL};
  talus_domain *r[2];
  for (int i = 0; i < 2; i++) {
    omp_set_num_threads(i + 1);
    r[i] = fixture_domain("rivers-rain", 64, "rivers-rain", layered);
    if (r[i]) talus_domain_run(r[i], 60, NULL, NULL);
  }
  CHECK(r[0] && r[1] && fixture_same_state(r[0], r[1]),
        "layered + thermal: 1 and 2 threads differ");
  CHECK(r[0] && talus_domain_flow(r[0], TALUS_FLOW_THERMAL) > 0.0, "layered thermal weathered");
  talus_domain_free(r[0]);
  talus_domain_free(r[1]);
  const int n = 64;
  float *h = cone_heights(n, 1.0, 60.0, 2.0);
  for (int i = 0; i < 2; i++) {
    omp_set_num_threads(i + 1);
    r[i] = make_domain(n, 1.0, h, hf_thermal);
    if (r[i]) talus_domain_run(r[i], 60, NULL, NULL);
  }
  CHECK(r[0] && r[1] && fixture_same_state(r[0], r[1]) &&
            !memcmp(r[0]->tile->hard, r[1]->tile->hard, r[0]->tile->plane * sizeof(float)),
        "heightfield thermal: 1 and 2 threads differ");
  talus_domain_free(r[0]);
  talus_domain_free(r[1]);
  free(h);
  omp_set_num_threads(2);
}

int main(void) {
  test_cone_heightfield();
  test_pit();
  test_hardness_stops();
  test_crests_only();
  test_every();
  test_bank();
  test_cone_layered();
  test_overhang_untouched();
  test_ledger_layered_full();
  test_threads();
  return check_report("test_thermal");
}
