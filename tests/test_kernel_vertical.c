/*
 * test_kernel_vertical.c — the vertical erosion kernel against hand
 * computations of reference step 6: dissolution up to capacity (and never
 * more than the sand), deposition (never overfilling), floor bedrock erosion
 * fading out under sand, ceiling erosion only with water and only under a
 * column, damage recovery booking exactly what it removes, the switches, and
 * the ledger closing the cell's material balance.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <string.h>

static talus_kctx make_ctx(void) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  talus_kparams_derive(&c.P);
  c.nx = c.ny = 1;
  return c;
}

/* A one-cell tile whose column k has the given heights, sediment, tilt and
 * velocity (vx, 0). */
static talus_tile *make_tile(void) {
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, 1, 1}, 8, 0) != TALUS_OK) return NULL;
  return t;
}

static void set_col(talus_tile *t, int k, float B, float s, float w, float C, float r, float sina,
                    float vx) {
  size_t j = talus_col(t, 0, k);
  t->B[j] = B;
  t->s[j] = s;
  t->w[j] = w;
  t->C[j] = C;
  t->r[j] = r;
  t->sina[j] = sina;
  t->vx[j] = vx;
}

static void run_vertical(talus_tile *t, const talus_kctx *c, double *flows) {
  memset(flows, 0, sizeof(double) * TALUS_FLOW_COUNT);
  CHECK(talus_cpu_stage(t, c, TALUS_STAGE_VERTICAL, (talus_rect){0, 0, 1, 1}, flows) == TALUS_OK,
        "vertical stage failed");
}

static double smoothstep(double e0, double e1, double v) {
  double u = (v - e0) / (e1 - e0);
  u = u < 0 ? 0 : (u > 1 ? 1 : u);
  return u * u * (3 - 2 * u);
}

/* The reference's factors in double: slope′·speed′·ws (and speed′, wet). */
static double factor(const talus_kparams *P, double sina, double v, double w, double *speed,
                     double *wet) {
  double m = P->min_scale, span = P->max_scale - P->min_scale;
  double slope = m + span * sina * (1 - smoothstep(P->slope_fade_start, 1, sina));
  *speed = m + span * fabs(v);
  *wet = fmin(1000 * w, 1);
  double ws = fmin(fmax(1 - tanh(2 * w / P->water_max_height), 0), 1) * *wet;
  return slope * *speed * ws;
}

/* Sand above the threshold, no sediment: dissolves min(K_s·cap·dt, s). */
static void test_dissolve(void) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  double flows[TALUS_FLOW_COUNT], speed, wet;
  talus_tile *t = make_tile();
  set_col(t, 0, 0.0f, 1.0f, 0.5f, TALUS_TOP, 0.0f, 0.5f, 1.0f);
  run_vertical(t, &c, flows);
  double cap = c.P.capacity * factor(&c.P, 0.5, 1.0, 0.5, &speed, &wet);
  double want = c.P.sand_dissolve * cap * c.P.dt;
  CHECK(want > 1e-4, "the case dissolves something (%g)", want);
  CHECK_CLOSE(flows[TALUS_FLOW_DISSOLVE], want, 1e-6 * want, "dissolved = K_s (cap - r) dt");
  CHECK_CLOSE(t->r[0], want, 1e-6 * want, "sediment gained");
  CHECK_CLOSE(t->s[0], 1.0 - want, 1e-6, "sand lost");
  CHECK(t->B[0] == 0.0f && flows[TALUS_FLOW_BEDROCK_EROSION] == 0.0, "sand shields bedrock");

  /* A huge capacity is bounded by the sand present. */
  c.P.capacity = 1e4f;
  set_col(t, 0, 0.0f, 0.02f, 0.5f, TALUS_TOP, 0.0f, 0.5f, 1.0f);
  run_vertical(t, &c, flows);
  CHECK(t->s[0] == 0.0f && t->r[0] == 0.02f, "all sand dissolved, no more (s %g r %g)", t->s[0],
        t->r[0]);
  CHECK_CLOSE(flows[TALUS_FLOW_DISSOLVE], 0.02, 1e-9, "dissolved = s");
  talus_tile_free(t);
}

/* Sediment above capacity: deposits min(K_d (r − cap) dt, space, r − cap). */
static void test_deposit(void) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  double flows[TALUS_FLOW_COUNT], speed, wet;
  talus_tile *t = make_tile();
  set_col(t, 0, 0.0f, 1.0f, 0.5f, TALUS_TOP, 1.0f, 0.5f, 1.0f);
  run_vertical(t, &c, flows);
  double cap = c.P.capacity * factor(&c.P, 0.5, 1.0, 0.5, &speed, &wet);
  double want = c.P.deposition * (1.0 - cap) * c.P.dt;
  CHECK_CLOSE(flows[TALUS_FLOW_DEPOSIT], want, 1e-6 * want, "deposited = K_d (r - cap) dt");
  CHECK(flows[TALUS_FLOW_DISSOLVE] == 0.0, "no dissolution above capacity");
  CHECK_CLOSE(t->s[0], 1.0 + want, 1e-6, "sand gained");
  CHECK_CLOSE(t->r[0], 1.0 - want, 1e-6, "sediment lost");

  /* Under a ceiling with 1 mm of space left, the deposit fills it exactly. */
  t->count[0] = 2;
  set_col(t, 0, 0.0f, 1.0f, 0.5f, 1.501f, 1.0f, 0.5f, 0.0f);
  set_col(t, 1, 5.0f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.0f, 0.0f);
  c.P.enable_vertical = 1;
  c.P.bedrock_dissolve = 0.0f; /* isolate the deposit from ceiling erosion */
  run_vertical(t, &c, flows);
  double space = (double)1.501f - 1.5;
  CHECK_CLOSE(flows[TALUS_FLOW_DEPOSIT], space, 1e-6, "deposit bounded by free space");
  CHECK(t->B[0] + t->s[0] + t->w[0] <= t->C[0] + 1e-6f, "column not overfilled");
  talus_tile_free(t);
}

/* Floor bedrock erosion: full on bare rock, half at half the sand
 * threshold, none above it; bounded by the bedrock thickness. */
static void test_bedrock_erosion(void) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  double flows[TALUS_FLOW_COUNT], speed, wet;
  const float sand[3] = {0.0f, 0.005f, 0.02f};
  const double share[3] = {1.0, 0.5, 0.0};
  double full = c.P.bedrock_dissolve * factor(&c.P, 0.3, 2.0, 1.0, &speed, &wet) * c.P.dt;
  for (int i = 0; i < 3; i++) {
    talus_tile *t = make_tile();
    set_col(t, 0, 10.0f, sand[i], 1.0f, TALUS_TOP, 1.0f, 0.3f, 2.0f);
    run_vertical(t, &c, flows);
    double want = share[i] * full;
    /* booked: what the float bed moved, within half its step at 10 m */
    double half = 0.5 * ((double)nextafterf(10.0f, 20.0f) - 10.0);
    CHECK(fabs(flows[TALUS_FLOW_BEDROCK_EROSION] - want) <= 1e-6 * full + half,
          "sand %g: eroded %.9g vs %.9g", (double)sand[i], flows[TALUS_FLOW_BEDROCK_EROSION], want);
    CHECK_CLOSE(10.0 - t->B[0], want, 2e-6, "bedrock lowered by the booked amount");
    talus_tile_free(t);
  }
  /* A dry column does not erode. */
  talus_tile *t = make_tile();
  set_col(t, 0, 10.0f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.3f, 2.0f);
  run_vertical(t, &c, flows);
  CHECK(t->B[0] == 10.0f && flows[TALUS_FLOW_BEDROCK_EROSION] == 0.0, "dry: no erosion");
  /* A bedrock sliver of 1e-5 m over the floor erodes to exactly the floor. */
  t->count[0] = 2;
  set_col(t, 0, 0.0f, 0.0f, 0.0f, 2.0f, 0.0f, 0.0f, 0.0f);
  set_col(t, 1, 2.00001f, 0.0f, 1.0f, TALUS_TOP, 1.0f, 0.3f, 2.0f);
  run_vertical(t, &c, flows);
  CHECK(t->B[talus_col(t, 0, 1)] == 2.0f, "sliver eroded to the floor, not below (%.9g)",
        t->B[talus_col(t, 0, 1)]);
  talus_tile_free(t);
}

/* Ceiling erosion needs water (the reference's defect 8) and a column above;
 * it is bounded by that column's bedrock. */
static void test_ceiling_erosion(void) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  double flows[TALUS_FLOW_COUNT], speed, wet;
  talus_tile *t = make_tile();
  t->count[0] = 2;
  set_col(t, 0, 0.0f, 0.0f, 0.0f, 1.5f, 0.0f, 0.0f, 1.0f);
  set_col(t, 1, 5.0f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.0f, 0.0f);
  run_vertical(t, &c, flows);
  CHECK(t->C[0] == 1.5f && flows[TALUS_FLOW_CEILING_EROSION] == 0.0,
        "dry gap 1.5 m under 2 m scale: ceiling untouched");

  set_col(t, 0, 0.0f, 0.0f, 1.25f, 1.5f, 0.0f, 0.0f, 1.0f);
  run_vertical(t, &c, flows);
  factor(&c.P, 0, 1.0, 1.25, &speed, &wet);
  double top = 1.0 - 0.25 / c.P.top_erosion_scale;
  double want = c.P.bedrock_dissolve * speed * top * c.P.min_scale * c.P.dt;
  double half = 0.5 * ((double)nextafterf(1.5f, 2.0f) - 1.5); /* the float ceiling's step */
  CHECK_CLOSE(flows[TALUS_FLOW_CEILING_EROSION], want, 1e-6 * want + half, "ceiling erosion rate");
  CHECK_CLOSE(t->C[0], 1.5 + want, 1e-6, "ceiling raised");
  CHECK(t->B[talus_col(t, 0, 1)] == 5.0f, "the column above keeps its bedrock top");

  /* Only 1e-5 m of bedrock above: the ceiling stops at its top. */
  set_col(t, 0, 0.0f, 0.0f, 1.25f, 1.5f, 0.0f, 0.0f, 1.0f);
  set_col(t, 1, 1.50001f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.0f, 0.0f);
  run_vertical(t, &c, flows);
  CHECK(t->C[0] == t->B[talus_col(t, 0, 1)], "ceiling bounded by bedrock above");

  /* The top column has no ceiling to erode. */
  t->count[0] = 1;
  set_col(t, 0, 0.0f, 0.0f, 1.25f, TALUS_TOP, 0.0f, 0.0f, 1.0f);
  run_vertical(t, &c, flows);
  CHECK(t->C[0] == TALUS_TOP && flows[TALUS_FLOW_CEILING_EROSION] == 0.0, "top: no ceiling");
  talus_tile_free(t);
}

/* Recovery heals min(κ_r dt, D) of damage, leaves every height where it
 * was (no rock is shaved off the top or lost), and follows
 * enable_horizontal. */
static void test_recovery(void) {
  talus_kctx c = make_ctx();
  c.P.enable_vertical = 0;
  double flows[TALUS_FLOW_COUNT];
  double step = (double)c.P.damage_recovery * c.P.dt;
  talus_tile *t = make_tile();
  t->count[0] = 2;
  set_col(t, 0, 2.0f, 0.5f, 1.0f, 3.0f, 0.0f, 0.0f, 0.0f);
  set_col(t, 1, 3.0001f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.0f, 0.0f);
  t->D[0] = 0.5f;
  t->D[talus_col(t, 0, 1)] = 0.5f;
  run_vertical(t, &c, flows);
  CHECK_CLOSE(t->D[0], 0.5 - step, 1e-7, "damage reduced by k_r dt");
  CHECK_CLOSE(t->D[talus_col(t, 0, 1)], 0.5 - step, 1e-7, "a thin column heals alike");
  CHECK(t->B[0] == 2.0f && t->B[talus_col(t, 0, 1)] == 3.0001f, "bedrock untouched");
  CHECK(t->s[0] == 0.5f && t->w[0] == 1.0f, "sand and water untouched");
  double booked = 0.0;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    booked += fabs(flows[f]);
  CHECK(booked == 0.0, "no matter moves, nothing booked (%g)", booked);

  t->D[0] = 0.0003f;
  run_vertical(t, &c, flows);
  CHECK(t->D[0] == 0.0f, "small damage fully recovered, not below 0");
  CHECK(t->B[0] == 2.0f, "still no bedrock removed");

  c.P.enable_horizontal = 0;
  t->D[0] = 0.5f;
  run_vertical(t, &c, flows);
  CHECK(t->D[0] == 0.5f, "no recovery without horizontal");
  talus_tile_free(t);
}

/* A three-column cell with water everywhere: the ledger closes the balance
 * of bedrock, sand and sediment, and water is untouched. */
static void test_balance(void) {
  talus_kctx c = make_ctx();
  c.P.bedrock_dissolve = 0.5f; /* strong, so every flow is sizeable */
  double flows[TALUS_FLOW_COUNT];
  talus_tile *t = make_tile();
  t->count[0] = 3;
  set_col(t, 0, 0.0f, 0.0f, 0.9f, 1.0f, 0.05f, 0.2f, 1.5f);
  set_col(t, 1, 4.0f, 0.005f, 2.0f, 7.0f, 0.0f, 0.7f, 0.5f);
  set_col(t, 2, 9.0f, 0.0f, 0.5f, TALUS_TOP, 0.5f, 0.1f, 0.1f);
  for (int k = 0; k < 3; k++)
    t->D[talus_col(t, 0, k)] = 0.3f;
  double b0 = 0, s0 = 0, r0 = 0, w0 = 0, b1 = 0, s1 = 0, r1 = 0, w1 = 0;
  for (int k = 0; k < 3; k++) {
    size_t j = talus_col(t, 0, k);
    b0 += t->B[j] - (k ? (double)t->C[j - t->plane] : -100.0);
    s0 += t->s[j], r0 += t->r[j], w0 += t->w[j];
  }
  run_vertical(t, &c, flows);
  for (int k = 0; k < 3; k++) {
    size_t j = talus_col(t, 0, k);
    b1 += t->B[j] - (k ? (double)t->C[j - t->plane] : -100.0);
    s1 += t->s[j], r1 += t->r[j], w1 += t->w[j];
  }
  double rock = flows[TALUS_FLOW_CEILING_EROSION] + flows[TALUS_FLOW_BEDROCK_EROSION];
  double ex = flows[TALUS_FLOW_DISSOLVE] - flows[TALUS_FLOW_DEPOSIT];
  CHECK(flows[TALUS_FLOW_CEILING_EROSION] > 0 && flows[TALUS_FLOW_BEDROCK_EROSION] > 0,
        "every flow is exercised");
  CHECK_CLOSE(b0 - b1, rock, 1e-5, "bedrock balance");
  CHECK_CLOSE(s1 - s0, rock - ex, 1e-5, "sand balance");
  CHECK_CLOSE(r1 - r0, ex, 1e-6, "sediment balance");
  CHECK(w1 == w0, "water untouched");
  for (int k = 1; k < 3; k++)
    CHECK(t->B[talus_col(t, 0, k)] >= t->C[talus_col(t, 0, k - 1)], "column %d above its floor", k);
  talus_tile_free(t);
}

/* erosion.base_level on a 3 x 3 domain of wet, eroding cells: with the
 * border open (outflow) its 8 border cells erode no bedrock and the centre
 * erodes as before; with the rule off, or the border a wall, every cell
 * erodes alike; beside a NoData sink (nodata_policy outflow) only the
 * sink's 4 axis neighbours are held. The centre runs the CPU's fast body,
 * the border cells the general one. `sink` >= 0: that cell is NoData. */
static int base_level_held(int base, int open, int sink, int *held) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  c.P.base_level = base;
  c.P.outflow_water = open;
  c.P.nodata_policy = TALUS_NODATA_OUTFLOW;
  c.nx = c.ny = 3;
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, 3, 3}, 8, 0) != TALUS_OK) return 0;
  for (int i = 0; i < 9; i++) {
    size_t j = talus_idx(t, i % 3, i / 3);
    t->B[j] = 10.0f, t->s[j] = 0.0f, t->w[j] = 1.0f, t->r[j] = 0.0f;
    t->sina[j] = 0.3f, t->vx[j] = 2.0f;
    t->mask[j] = (uint8_t)(i == sink);
  }
  double flows[TALUS_FLOW_COUNT] = {0};
  CHECK(talus_cpu_stage(t, &c, TALUS_STAGE_VERTICAL, (talus_rect){0, 0, 3, 3}, flows) == TALUS_OK,
        "vertical stage failed");
  float low = 10.0f; /* what an eroding cell comes to: the lowest */
  for (int i = 0; i < 9; i++)
    low = fminf(low, t->B[talus_idx(t, i % 3, i / 3)]);
  CHECK(low < 10.0f, "no cell erodes");
  int n = 0;
  for (int i = 0; i < 9; i++) {
    float b = t->B[talus_idx(t, i % 3, i / 3)];
    held[i] = b == 10.0f;
    n += held[i];
    CHECK(held[i] || b == low, "cell %d eroded %.9g, another %.9g", i, 10.0 - b, 10.0 - low);
  }
  talus_tile_free(t);
  return n;
}

static void test_base_level(void) {
  int held[9];
  CHECK(base_level_held(1, 1, -1, held) == 8 && !held[4], "open border: the 8 border cells held");
  CHECK(base_level_held(0, 1, -1, held) == 0, "the rule off: none held");
  CHECK(base_level_held(1, 0, -1, held) == 0, "walled border: none held");
  int n = base_level_held(1, 0, 1, held); /* the sink at (1, 0) */
  CHECK(n == 4 && held[0] && held[2] && held[4] && held[1],
        "beside the sink: the sink and its 3 axis neighbours unchanged (%d cells)", n);
}

/* erosion.capacity_fade off: the capacity takes the water's whole depth
 * (stream_power: K·(√q·S)·w; paper: K·slope′·speed′ with only the 1 mm
 * ramp), while the floor's incision keeps its fade; a still pool (no
 * surface tilt) holds no load either way. Deep water (8 m of w_max 10)
 * makes the fade 0.078, so the two differ 12.9-fold. */
static double fade_case(int law, int fade, float sand, float sina, double *eroded) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  c.P.erosion_law = law;
  c.P.capacity_fade = fade;
  c.P.capacity = 1e-3f; /* below the sand present: the dissolved share is K_s·cap·dt */
  double flows[TALUS_FLOW_COUNT];
  talus_tile *t = make_tile();
  set_col(t, 0, 10.0f, sand, 8.0f, TALUS_TOP, 0.0f, sina, 2.0f);
  run_vertical(t, &c, flows);
  *eroded = flows[TALUS_FLOW_BEDROCK_EROSION];
  double dissolved = flows[TALUS_FLOW_DISSOLVE];
  talus_tile_free(t);
  return dissolved;
}

static void test_capacity_fade(void) {
  talus_kctx c = make_ctx();
  double w = 8.0, fade = 1 - tanh(2 * w / c.P.water_max_height), e_on, e_off, speed, wet;
  double power = sqrt(2.0 * w) * 0.3; /* q = |v|·w, S = 0.3, no critical power */
  double want_on = c.P.sand_dissolve * 1e-3 * power * w * fade * c.P.dt;
  double want_off = c.P.sand_dissolve * 1e-3 * power * w * c.P.dt;
  double on = fade_case(TALUS_LAW_STREAM_POWER, 1, 5.0f, 0.3f, &e_on);
  double off = fade_case(TALUS_LAW_STREAM_POWER, 0, 5.0f, 0.3f, &e_off);
  CHECK_CLOSE(on, want_on, 1e-5 * want_on, "stream_power, faded: K_s·K·power·w·fade·dt");
  CHECK_CLOSE(off, want_off, 1e-5 * want_off, "stream_power, unfaded: K_s·K·power·w·dt");
  CHECK(off > 10.0 * on, "deep water carries %.3g x the faded load", off / on);
  double paper_on = fade_case(TALUS_LAW_PAPER, 1, 5.0f, 0.3f, &e_on);
  double paper_off = fade_case(TALUS_LAW_PAPER, 0, 5.0f, 0.3f, &e_off);
  double pf = factor(&c.P, 0.3, 2.0, w, &speed, &wet);
  CHECK_CLOSE(paper_on, c.P.sand_dissolve * 1e-3 * pf * c.P.dt, 1e-5 * paper_on, "paper, faded");
  CHECK_CLOSE(paper_off, paper_on / fade, 1e-4 * paper_off, "paper, unfaded: the fade undone");
  /* Bare rock: the incision fades either way. */
  fade_case(TALUS_LAW_STREAM_POWER, 1, 0.0f, 0.3f, &e_on);
  fade_case(TALUS_LAW_STREAM_POWER, 0, 0.0f, 0.3f, &e_off);
  CHECK(e_on > 0.0 && e_on == e_off, "incision keeps its fade (%.9g vs %.9g)", e_on, e_off);
  /* A still pool: no tilt, no power, nothing carried. */
  CHECK(fade_case(TALUS_LAW_STREAM_POWER, 0, 5.0f, 0.0f, &e_off) == 0.0 && e_off == 0.0,
        "a still pool neither dissolves nor erodes");
}

/* What the floats moved is what is booked and becomes sand: a bed 2000 m
 * up (a float's step there is 1.2e-4 m) under water that erodes less than
 * half of it a step stays where it is, so no sand appears and nothing is
 * booked; a faster erosion moves it by whole steps, and the sand gets
 * exactly that. The same for a ceiling 2000 m up. Before, the asked-for
 * amount was booked and added to the sand whatever the bed did: matter
 * made from rounding (Big Tujunga 128², dem-default: 2.4 % of the bedrock
 * eroded). */
static void test_float_steps(void) {
  talus_kctx c = make_ctx();
  c.P.enable_horizontal = 0;
  double flows[TALUS_FLOW_COUNT], speed, wet;
  const float bed = 2000.0f, ulp = nextafterf(bed, 0.0f) - bed;
  double full = c.P.bedrock_dissolve * factor(&c.P, 0.3, 2.0, 1.0, &speed, &wet);
  const float dts[2] = {(float)(0.2 * -ulp / full), (float)(7.3 * -ulp / full)};
  for (int i = 0; i < 2; i++) {
    c.P.dt = dts[i];
    talus_tile *t = make_tile();
    set_col(t, 0, bed, 0.0f, 1.0f, TALUS_TOP, 1.0f, 0.3f, 2.0f);
    run_vertical(t, &c, flows);
    double moved = (double)bed - (double)t->B[0];
    printf("bed at %g m, asked %.3g m: moved %.3g m, booked %.3g m, sand %.3g m\n", (double)bed,
           full * c.P.dt, moved, flows[TALUS_FLOW_BEDROCK_EROSION], (double)t->s[0] + t->r[0]);
    CHECK(flows[TALUS_FLOW_BEDROCK_EROSION] == moved, "%d: booked %.9g, the bed moved %.9g", i,
          flows[TALUS_FLOW_BEDROCK_EROSION], moved);
    CHECK(fabs((double)t->s[0] + (double)t->r[0] - 1.0 - moved) <= 1e-6,
          "%d: sand and sediment gained %.9g, the bed lost %.9g", i,
          (double)t->s[0] + (double)t->r[0] - 1.0, moved);
    CHECK(i == 0 ? moved == 0.0 : moved > 0.0, "%d: the bed moved %.9g", i, moved);
    talus_tile_free(t);
  }
  /* A ceiling at 2000 m over a gap nearly full of water. */
  c.P.dt = dts[0];
  talus_tile *t = make_tile();
  t->count[0] = 2;
  set_col(t, 0, 1990.0f, 0.0f, 9.999f, bed, 0.0f, 0.3f, 2.0f);
  set_col(t, 1, 2010.0f, 0.0f, 0.0f, TALUS_TOP, 0.0f, 0.0f, 0.0f);
  run_vertical(t, &c, flows);
  double raised = (double)t->C[0] - (double)bed;
  CHECK(flows[TALUS_FLOW_CEILING_EROSION] == raised, "ceiling: booked %.9g, it rose %.9g",
        flows[TALUS_FLOW_CEILING_EROSION], raised);
  talus_tile_free(t);
}

int main(void) {
  test_dissolve();
  test_deposit();
  test_bedrock_erosion();
  test_ceiling_erosion();
  test_recovery();
  test_balance();
  test_base_level();
  test_capacity_fade();
  test_float_steps();
  return check_report("test_kernel_vertical");
}
