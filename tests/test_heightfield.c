/*
 * test_heightfield — the heightfield model (kernels/heightfield.h): water is
 * conserved with reflecting borders; a lake at rest stays at rest; rain on
 * a tilted plane cuts channels (roughness across the slope grows); harder
 * material erodes less under the same rain; the ledger closes with thermal
 * erosion on; 1 and 2 threads give identical bytes; a tiled run gives
 * the bytes of a monolithic one (the declared radii are exact); a
 * river cell turning a corner sends no sediment into the dry bank; a
 * deposit fills at most the water column; an outflow border keeps the
 * arriving slope; and the stream-power law gives a river narrower than
 * its cell the sediment flux capacity of the same river on finer cells.
 */
#include "check.h"
#include "scene_fixture.h"
#include "tiled_fixture.h"

#include "kernels/heightfield.h"

#include <math.h>
#include <omp.h>

/* A heightfield domain of nx × ny cells of `cell` metres over heights h,
 * with `preset` (NULL: the defaults) and sets over it. */
static talus_domain *make_preset_domain(const char *preset, int nx, int ny, double cell,
                                        const float *h, const char *const *sets) {
  talus_params *p = fixture_params(preset, sets);
  talus_domain *d = NULL;
  if (p && talus_params_set(p, "simulation.model", "heightfield"))
    fprintf(stderr, "model: %s\n", talus_last_error());
  if (p && talus_domain_create(&d, nx, ny, cell, h, NULL, p))
    fprintf(stderr, "domain: %s\n", talus_last_error());
  talus_params_free(p);
  return d;
}

/* make_preset_domain with the defaults. */
static talus_domain *make_domain(int nx, int ny, double cell, const float *h,
                                 const char *const *sets) {
  return make_preset_domain(NULL, nx, ny, cell, h, sets);
}

/* Small hash noise in [-amp, amp] for cell (x, y). */
static float jitter(int x, int y, float amp) {
  return amp * (2.0f * talus_hash_unit(7u, x, y, 0, 9u) - 1.0f);
}

/* A plane falling along +x by `slope` per metre, with jitter. */
static float *plane_heights(int nx, int ny, double cell, double slope, float amp) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] = (float)(slope * (nx - x) * cell) + jitter(x, y, amp);
  return h;
}

/* Rolling hills: smooth bumps of about `amp` metres. */
static float *hill_heights(int nx, int ny, float amp) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] =
          amp * (float)(sin(0.21 * x) * cos(0.17 * y) + 0.5 * sin(0.05 * (x + 2 * y))) +
          jitter(x, y, 0.05f * amp);
  return h;
}

static double field_sum(const talus_domain *d, talus_field f) {
  int n = talus_domain_nx(d) * talus_domain_ny(d);
  float *v = malloc((size_t)n * sizeof *v);
  talus_domain_read(d, f, 0, v);
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += v[i];
  free(v);
  return s;
}

/* Reflecting borders, no rain, no evaporation, no erosion: the water
 * volume stays to float rounding while it sloshes over rolling hills. */
static void test_water_conserved(int eight) {
  const int n = 64;
  const char *const sets[] = {eight ? "heightfield.neighbours=8" : "heightfield.neighbours=4",
                              "water.rain=0",
                              "heightfield.evaporation=0",
                              "heightfield.capacity=0",
                              "thermal.enable=false",
                              "water.outflow_border=false",
                              "simulation.dt=0.05",
                              NULL};
  float *h = hill_heights(n, n, 3.0f);
  talus_domain *d = make_domain(n, n, 1.0, h, sets);
  CHECK(d != NULL, "domain");
  if (!d) return free(h);
  float *w = malloc((size_t)n * n * sizeof *w);
  for (int i = 0; i < n * n; i++)
    w[i] = 0.5f + 0.25f * (float)(i % 7);
  talus_domain_set_field(d, TALUS_FIELD_LAYER_WATER, 0, w);
  double w0 = field_sum(d, TALUS_FIELD_WATER);
  talus_domain_run(d, 1000, NULL, NULL);
  double w1 = field_sum(d, TALUS_FIELD_WATER);
  printf("water (%d pipes): %.9g -> %.9g (relative %.3g)\n", eight ? 8 : 4, w0, w1, (w1 - w0) / w0);
  CHECK(fabs(w1 - w0) <= 1e-6 * w0, "water changed from %.9g to %.9g", w0, w1);
  float *v = malloc((size_t)n * n * sizeof *v);
  double moved = 0.0;
  for (int i = 0; i < n * n; i++)
    moved += fabsf(d->tile->vx[talus_idx(d->tile, i % n, i / n)]);
  CHECK(moved > 0.0, "the water moved");
  free(v);
  free(w);
  free(h);
  talus_domain_free(d);
}

/* Water held in a one-cell canyon carved 2 m deep along the diagonal of a
 * plane that falls 0.05 m a cell along x and along y towards the corner
 * (0, 0), where the borders let water out; 1 m of water in each canyon
 * cell, no rain, no evaporation, no erosion, `eight` the 8 pipes.
 * Returns the share of it still in the canyon after 2000 steps (100 s). */
static double canyon_water_left(int eight) {
  const int n = 48;
  const char *const sets[] = {eight ? "heightfield.neighbours=8" : "heightfield.neighbours=4",
                              "water.rain=0",
                              "heightfield.evaporation=0",
                              "heightfield.capacity=0",
                              "thermal.enable=false",
                              "water.outflow_border=true",
                              "simulation.dt=0.05",
                              NULL};
  float *h = malloc((size_t)n * n * sizeof *h), *w = calloc((size_t)n * n, sizeof *w);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      h[(size_t)y * n + x] = 5.0f + 0.05f * (float)(x + y) - (x == y ? 2.0f : 0.0f);
  for (int i = 0; i < n; i++)
    w[(size_t)i * n + i] = 1.0f;
  talus_domain *d = make_domain(n, n, 1.0, h, sets);
  double left = -1.0;
  if (d && !talus_domain_set_field(d, TALUS_FIELD_LAYER_WATER, 0, w)) {
    talus_domain_run(d, 2000, NULL, NULL);
    talus_domain_read(d, TALUS_FIELD_WATER, 0, w);
    left = 0.0;
    for (int i = 0; i < n; i++)
      left += w[(size_t)i * n + i];
    left /= (double)n;
  }
  talus_domain_free(d);
  free(h);
  free(w);
  return left;
}

/* A canyon narrower than a cell that runs diagonally (Zion's trunks at
 * 82.6 m) is a chain of pits joined only at their corners: the 4 pipes
 * hold a lake in each (the water stays, below the spill of its axis
 * neighbours), the 8 pipes drain it along the diagonal. */
static void test_diagonal_canyon(void) {
  double four = canyon_water_left(0), eight = canyon_water_left(1);
  printf("diagonal canyon: water left after 100 s, 4 pipes %.3f, 8 pipes %.3f\n", four, eight);
  CHECK(four > 0.9, "4 pipes: the canyon's pits hold their water (%.3f)", four);
  CHECK(eight >= 0.0 && eight < 0.1, "8 pipes: the canyon drains (%.3f left)", eight);
}

/* A bowl filled to a flat level: after 1000 steps the water is still flat
 * and still, and the terrain is untouched. */
static void test_lake_at_rest(void) {
  const int n = 48;
  static const char *const sets[] = {"water.rain=0", "heightfield.evaporation=0",
                                     "thermal.enable=false", "simulation.dt=0.05", NULL};
  float *h = malloc((size_t)n * n * sizeof *h), *w = malloc((size_t)n * n * sizeof *w);
  const float level = 10.37f; /* B + (level - B) is not always level in float: rounding noise */
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      double r = hypot(x - 23.7, y - 24.3);
      size_t i = (size_t)y * n + x;
      h[i] = (float)(0.012 * r * r + 0.731) + jitter(x, y, 0.3f);
      w[i] = h[i] < level ? level - h[i] : 0.0f;
    }
  talus_domain *d = make_domain(n, n, 1.0, h, sets);
  CHECK(d != NULL, "lake domain");
  if (!d) return free(h), free(w);
  talus_domain_set_field(d, TALUS_FIELD_LAYER_WATER, 0, w);
  talus_domain_run(d, 1000, NULL, NULL);
  const talus_tile *t = d->tile;
  double vmax = 0.0, lmin = INFINITY, lmax = -INFINITY, bmax = 0.0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t i = talus_idx(t, x, y);
      vmax = fmax(vmax, hypot(t->vx[i], t->vy[i]));
      bmax = fmax(bmax, fabs(t->B[i] - h[(size_t)y * n + x]));
      if (w[(size_t)y * n + x] > 0.5f) {
        lmin = fmin(lmin, t->B[i] + t->w[i]);
        lmax = fmax(lmax, t->B[i] + t->w[i]);
      }
    }
  printf("lake: max speed %.3g m/s, level spread %.3g m, terrain change %.3g m\n", vmax,
         lmax - lmin, bmax);
  CHECK(vmax < 1e-3, "the lake moves at %.3g m/s", vmax);
  CHECK(lmax - lmin < 1e-4, "the lake's level spread %.3g m", lmax - lmin);
  CHECK(bmax < 1e-4, "the terrain under the lake changed by %.3g m", bmax);
  free(h);
  free(w);
  talus_domain_free(d);
}

/* Roughness across the slope: mean over columns x (along the fall line)
 * of the standard deviation of the terrain along y. */
static double cross_roughness(const talus_domain *d, int x0, int x1) {
  const talus_tile *t = d->tile;
  double acc = 0.0;
  for (int x = x0; x < x1; x++) {
    double s = 0.0, s2 = 0.0;
    for (int y = 0; y < t->buf.h; y++) {
      double v = t->B[talus_idx(t, x, y)];
      s += v, s2 += v * v;
    }
    double m = s / t->buf.h;
    acc += sqrt(fmax(s2 / t->buf.h - m * m, 0.0));
  }
  return acc / (x1 - x0);
}

static const char *const plane_rain[] = {
    "water.rain=0.02",          "water.rain_noise=1",      "water.outflow_border=true",
    "simulation.dt=0.05",       "thermal.enable=false",    "heightfield.capacity=0.2",
    "heightfield.dissolve=0.5", "heightfield.softening=0", NULL};

/* Rain on a tilted plane with centimetre jitter cuts channels down the
 * slope: the roughness across the slope grows several times. */
static void test_channels(void) {
  const int nx = 96, ny = 64;
  float *h = plane_heights(nx, ny, 1.0, 0.1, 0.01f);
  talus_domain *d = make_domain(nx, ny, 1.0, h, plane_rain);
  CHECK(d != NULL, "plane domain");
  if (!d) return free(h);
  double r0 = cross_roughness(d, 8, nx - 8);
  talus_domain_run(d, 1500, NULL, NULL);
  double r1 = cross_roughness(d, 8, nx - 8);
  printf("channels: roughness across the slope %.4g -> %.4g m, dissolved %.4g m3\n", r0, r1,
         talus_domain_flow(d, TALUS_FLOW_HF_DISSOLVE));
  CHECK(r1 > 5.0 * r0, "roughness grew only from %.4g to %.4g", r0, r1);
  free(h);
  talus_domain_free(d);
}

/* Two halves of a tilted plane (split along the fall line, so both see the
 * same slope and rain), hardness 0.2 and 0.8: the harder half loses less. */
static void test_hardness(void) {
  const int nx = 96, ny = 64;
  float *h = plane_heights(nx, ny, 1.0, 0.1, 0.01f), *H = malloc((size_t)nx * ny * sizeof *H);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      H[(size_t)y * nx + x] = y < ny / 2 ? 0.2f : 0.8f;
  talus_domain *d = make_domain(nx, ny, 1.0, h, plane_rain);
  CHECK(d && talus_domain_set_field(d, TALUS_FIELD_HARDNESS, 0, H) == TALUS_OK, "hardness set");
  if (!d) return free(h), free(H);
  talus_domain_run(d, 800, NULL, NULL);
  double lost[2] = {0.0, 0.0};
  const talus_tile *t = d->tile;
  for (int y = 2; y < ny - 2; y++) /* away from the reflecting-free rims */
    for (int x = 8; x < nx - 8; x++) {
      float b = t->B[talus_idx(t, x, y)], b0 = h[(size_t)y * nx + x];
      if (y != ny / 2 - 1 && y != ny / 2) lost[y >= ny / 2] += fmax(b0 - b, 0.0);
    }
  printf("hardness: soft half lost %.4g m3, hard half %.4g m3\n", lost[0], lost[1]);
  CHECK(lost[1] > 0.0 && lost[0] > 2.0 * lost[1], "soft %.4g vs hard %.4g", lost[0], lost[1]);
  free(h);
  free(H);
  talus_domain_free(d);
}

/* A run with every heightfield rule on (heightfield.sheet_capacity too, below
 * the preset's 1) for the ledger, thread and tile checks. */
static const char *const full_run[] = {"heightfield.neighbours=4",
                                       "water.rain=0.02",
                                       "water.rain_noise=1",
                                       "water.outflow_border=true",
                                       "simulation.dt=0.05",
                                       "thermal.enable=true",
                                       "thermal.talus_angle=25",
                                       "thermal.rate=2",
                                       "thermal.creep=0.05",
                                       "heightfield.capacity=0.2",
                                       "heightfield.dissolve=0.5",
                                       "heightfield.no_dam=true",
                                       "heightfield.base_level=true",
                                       "heightfield.sheet_capacity=0.3",
                                       "source1.strength=0.5",
                                       "source1.radius=4",
                                       "source1.x=20",
                                       "source1.y=30",
                                       NULL};
/* The same with the 8 water pipes (main fills it from full_run). */
static const char *full_run8[sizeof full_run / sizeof *full_run];

/* With thermal on, rain, a source, erosion and outflow borders the ledger
 * closes: every material's residual is float rounding. */
static void test_ledger(const char *const *sets) {
  const int n = 64;
  float *h = hill_heights(n, n, 6.0f);
  talus_domain *d = make_domain(n, n, 1.0, h, sets);
  CHECK(d != NULL, "ledger domain");
  if (!d) return free(h);
  talus_domain_run(d, 1500, NULL, NULL);
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double rain = talus_domain_flow(d, TALUS_FLOW_RAIN) + talus_domain_flow(d, TALUS_FLOW_SOURCE);
  double dis = talus_domain_flow(d, TALUS_FLOW_HF_DISSOLVE);
  printf("ledger (%s): rain %.5g, dissolved %.5g, deposited %.5g, advection net %.3g, outflow %.4g;"
         " residuals %.3g %.3g %.3g %.3g m3\n",
         sets[0], rain, dis, talus_domain_flow(d, TALUS_FLOW_HF_DEPOSIT),
         talus_domain_flow(d, TALUS_FLOW_HF_ADVECTION),
         talus_domain_flow(d, TALUS_FLOW_WATER_OUTFLOW), L.residual[0], L.residual[1],
         L.residual[2], L.residual[3]);
  CHECK(rain > 0.0 && dis > 0.0, "rain fell and dissolved terrain");
  CHECK(fabs(L.residual[TALUS_MAT_WATER]) <= 1e-5 * rain, "water residual %.3g",
        L.residual[TALUS_MAT_WATER]);
  CHECK(fabs(L.residual[TALUS_MAT_SEDIMENT]) <= 1e-5 * dis, "sediment residual %.3g",
        L.residual[TALUS_MAT_SEDIMENT]);
  CHECK(fabs(L.residual[TALUS_MAT_BEDROCK]) <= 1e-6 * L.initial[TALUS_MAT_BEDROCK] + 1e-5 * dis,
        "terrain residual %.3g", L.residual[TALUS_MAT_BEDROCK]);
  CHECK(L.current[TALUS_MAT_SAND] == 0.0, "the heightfield holds no sand");
  free(h);
  talus_domain_free(d);
}

/* Rain and erosion on a walled map: nothing leaves. The last key is the
 * paper's default, which test_water_swell_off switches. */
enum { WALLED_SWELL = 7 };
static const char *const walled_run[] = {"heightfield.neighbours=4",
                                         "water.rain=0.02",
                                         "water.rain_noise=1",
                                         "water.outflow_border=false",
                                         "simulation.dt=0.05",
                                         "heightfield.capacity=0.2",
                                         "heightfield.dissolve=0.5",
                                         "heightfield.water_swell=true",
                                         "heightfield.sheet_capacity=0.3",
                                         NULL};
/* The same with the 8 water pipes (main fills it from walled_run). */
static const char *walled_run8[sizeof walled_run / sizeof *walled_run];

/* Sediment is moved, never deleted: on a walled map (nothing leaves) the
 * sediment held at the end is what was dissolved less what was deposited,
 * to float rounding, and the transport's own net (HF_ADVECTION, rounding
 * only) is a tiny share of what it carried. The semi-Lagrangian backtrace
 * this replaced deleted 89 % of the dissolved material on such a map. */
static void test_sediment_conserved(const char *const *sets) {
  const int n = 64;
  float *h = hill_heights(n, n, 6.0f);
  talus_domain *d = make_domain(n, n, 1.0, h, sets);
  CHECK(d != NULL, "walled domain");
  if (!d) return free(h);
  talus_domain_run(d, 1500, NULL, NULL);
  double dis = talus_domain_flow(d, TALUS_FLOW_HF_DISSOLVE);
  double dep = talus_domain_flow(d, TALUS_FLOW_HF_DEPOSIT);
  double net = talus_domain_flow(d, TALUS_FLOW_HF_ADVECTION);
  double gone = talus_domain_flow(d, TALUS_FLOW_SEDIMENT_OUTFLOW);
  double held = field_sum(d, TALUS_FIELD_SEDIMENT); /* 1 m cells: heights are m3 */
  printf("walled (%s): dissolved %.5g, deposited %.5g, held %.5g, transport net %.3g, out %.3g "
         "m3\n",
         sets[0], dis, dep, held, net, gone);
  CHECK(dis > 1.0, "rain dissolved terrain (%.4g m3)", dis);
  CHECK(gone == 0.0, "nothing leaves through walls (%.3g)", gone);
  CHECK(fabs(held - (dis - dep)) <= 1e-4 * dis, "held %.6g = dissolved - deposited %.6g", held,
        dis - dep);
  CHECK(fabs(net) <= 1e-5 * dis, "transport net %.3g is rounding", net);
  free(h);
  talus_domain_free(d);
}

/* heightfield.water_swell=false: dissolving makes no water and depositing
 * takes none (no swell or shrink flow), the water ledger still closes;
 * with the swell on, erosion makes net water (swell > shrink: the
 * dissolved material settles again, with some held in suspension). The
 * water held at the end is no measure of it: evaporation follows the
 * depth, and where deposits settle decides how much water shrink takes
 * (when sediment was also sent into dry banks, where deposits take no
 * water, the swell's run held more; since it follows the water, less). */
static void test_water_swell_off(void) {
  const int n = 64;
  /* the whole of walled_run, its NULL included: sized WALLED_SWELL + 2
   * it lost its terminator when a key was added after the swell's, and
   * fixture_params read past the array (a crash 1 run in ~6) */
  const char *sets[sizeof walled_run / sizeof *walled_run];
  memcpy(sets, walled_run, sizeof sets);
  float *h = hill_heights(n, n, 6.0f);
  double water[2] = {0, 0}, made = 0.0;
  for (int off = 0; off < 2; off++) {
    sets[WALLED_SWELL] = off ? "heightfield.water_swell=false" : "heightfield.water_swell=true";
    talus_domain *d = make_domain(n, n, 1.0, h, sets);
    CHECK(d != NULL, "swell domain");
    if (!d) continue;
    talus_domain_run(d, 800, NULL, NULL);
    talus_ledger_summary L;
    talus_domain_ledger(d, &L);
    double swell = talus_domain_flow(d, TALUS_FLOW_HF_SWELL);
    double shrink = talus_domain_flow(d, TALUS_FLOW_HF_SHRINK);
    double rain = talus_domain_flow(d, TALUS_FLOW_RAIN);
    water[off] = L.current[TALUS_MAT_WATER];
    printf("water_swell=%s: swell %.4g, shrink %.4g, rain %.4g, water held %.4g m3\n",
           off ? "false" : "true", swell, shrink, rain, water[off]);
    CHECK(talus_domain_flow(d, TALUS_FLOW_HF_DISSOLVE) > 0.0, "terrain dissolved");
    if (off) CHECK(swell == 0.0 && shrink == 0.0, "no water made or taken by erosion");
    if (!off) CHECK(swell > 0.0, "the swell makes water");
    if (!off) made = swell - shrink;
    CHECK(fabs(L.residual[TALUS_MAT_WATER]) <= 1e-5 * rain, "water residual %.3g",
          L.residual[TALUS_MAT_WATER]);
    talus_domain_free(d);
  }
  printf("water_swell: erosion made %.4g m3 of water net; held %.4g (on) vs %.4g m3 (off)\n", made,
         water[0], water[1]);
  CHECK(made > 0.0, "with the swell, erosion makes net water (%.4g m3)", made);
  free(h);
}

/* 1 vs 2 threads: identical bytes of every field, hardness included. */
static void test_threads(const char *const *sets) {
  const int n = 80;
  float *h = hill_heights(n, n, 6.0f);
  talus_domain *r[2];
  for (int i = 0; i < 2; i++) {
    omp_set_num_threads(i + 1);
    r[i] = make_domain(n, n, 1.0, h, sets);
    if (r[i]) talus_domain_run(r[i], 300, NULL, NULL);
  }
  int same = r[0] && r[1] && fixture_same_state(r[0], r[1]);
  same = same && !memcmp(r[0]->tile->hard, r[1]->tile->hard, r[0]->tile->plane * sizeof(float));
  CHECK(same, "1 and 2 threads differ (%s)", sets[0]);
  CHECK(r[0] && talus_domain_flow(r[0], TALUS_FLOW_HF_DISSOLVE) > 0.0, "the runs eroded");
  talus_domain_free(r[0]);
  talus_domain_free(r[1]);
  free(h);
  omp_set_num_threads(2);
}

/* Tiled (cores of 37 and 64, K = 1 and 3 steps per generation) equals
 * monolithic, bit for bit, with thermal, rain noise, a source and outflow
 * borders: the declared radii (advection's included) cover every read. */
static void test_tiled(const char *const *sets) {
  const int nx = 150, ny = 110, steps = 12;
  float *h = hill_heights(nx, ny, 6.0f);
  talus_domain *d = make_domain(nx, ny, 1.0, h, sets);
  CHECK(d != NULL, "tiled domain");
  if (!d) return free(h);
  talus_domain_run(d, 40, NULL, NULL); /* wet and eroding before the comparison */
  talus_tile *init = fixture_clone(d->tile);
  talus_kctx ctx = d->ctx;
  talus_domain_run(d, steps, NULL, NULL);
  static const int cases[][2] = {{37, 1}, {64, 3}};
  for (int i = 0; init && i < 2; i++) {
    long diff = fixture_tiled_diff(init, d->tile, &ctx, cases[i][0], cases[i][1], ctx.step + steps,
                                   TALUS_STORE_MEMORY, NULL, NULL);
    CHECK(diff == 0, "%s, core %d, K %d: %ld values differ from the monolithic run", sets[0],
          cases[i][0], cases[i][1], diff);
  }
  CHECK(init != NULL, "clone");
  talus_tile_free(init);
  free(h);
  talus_domain_free(d);
}

/* A river cell turning a corner: water in from the left and out through
 * the top only, so its through-flow velocity has both components > 0 (the
 * mean of in and out flux per axis). Its sediment goes up, with the
 * velocity's share; none goes right, through a face no water leaves by
 * (there the dry bank would keep it: it used to get the x component's
 * share, as much as the river downstream). */
static void test_corner_advection(void) {
  const float kdl = 0.5f / 30.0f, r = 2.0f, vx = 3.0f, vy = 3.0f; /* dt 0.5 s, 30 m cells */
  float right = hf_sed_out(r, vx, vy, 0.0f, TALUS_DIR_R, kdl);    /* no outflow to the right */
  float up = hf_sed_out(r, vx, vy, 40.0f, TALUS_DIR_U, kdl);      /* 40 m³/s out the top */
  float left = hf_sed_out(r, vx, vy, 0.0f, TALUS_DIR_L, kdl);     /* upwind: nothing */
  float right_open = hf_sed_out(r, vx, vy, 40.0f, TALUS_DIR_R, kdl);
  printf("corner: sediment sent right %g, up %g (share %.4g), left %g; right with outflow %g\n",
         right, up, up / r, left, right_open);
  CHECK(right == 0.0f && left == 0.0f, "nothing through faces no water leaves by");
  CHECK(fabsf(up - r * vy * kdl) <= 1e-6f * r, "up: the velocity's share %g, got %g", r * vy * kdl,
        up);
  CHECK(right_open == up, "with water leaving to the right it takes its share (%g)", right_open);
}

/* A deposit fills at most the water column it settles from: a bank cell
 * under 5.5 m of water holding 446 m of suspended load (what Big
 * Tujunga's bare run had when one such cell rose 52 m in 50 steps into a
 * one-cell tower) rises by 5.5 m, the load losing exactly that; with the
 * swell on the water it displaces is taken, never below 0. Where the rate
 * asks less than the depth the rate decides. */
static void test_deposit_bound(void) {
  for (int swell = 0; swell < 2; swell++)
    for (int deep = 0; deep < 2; deep++) {
      float B = 700.0f, r = deep ? 1.0f : 446.0f, w = deep ? 20.0f : 5.5f, cap = 0.0f;
      talus_tile t;
      talus_kparams P;
      memset(&t, 0, sizeof t), memset(&P, 0, sizeof P);
      t.B = &B, t.r = &r, t.w = &w, t.hf_cap = &cap;
      P.dt = 0.5f, P.hf_deposit = 0.05f, P.hf_dissolve = 0.0001f, P.hf_water_swell = swell;
      double flows[TALUS_FLOW_COUNT] = {0}, before = (double)B + (double)r, d0 = w, r0 = r;
      hf_erode_cell(&t, &P, 0, 1, flows);
      double rise = (double)B - 700.0, want = deep ? 0.5 * 0.05 * r0 : d0;
      printf("deposit (swell %d, %s): bed +%.4g m, load %.4g -> %.4g m, water %.4g -> %.4g m\n",
             swell, deep ? "rate-bound" : "depth-bound", rise, r0, (double)r, d0, (double)w);
      CHECK(fabs(rise - want) <= 1e-4, "bed rose %.6g m, want %.6g (a float step of 700 m: 6e-5)",
            rise, want);
      CHECK((double)B + (double)r == before || fabs((double)B + (double)r - before) <= 1e-4,
            "material kept: %.9g vs %.9g", (double)B + (double)r, before);
      CHECK(w >= 0.0f && (swell || w == (float)d0), "water %.6g m", (double)w);
      CHECK(flows[TALUS_FLOW_HF_DEPOSIT] == rise, "booked %.9g vs %.9g",
            flows[TALUS_FLOW_HF_DEPOSIT], rise);
    }
}

/* At an outflow border the terrain runs on: the descent across the open
 * face is the slope arriving from the opposite neighbour (a valley leaving
 * the map keeps its fall), not the flat that let a dam grow across every
 * outlet; a reflecting wall adds none. */
static void test_outflow_descent(void) {
  float B[2] = {710.0f, 700.0f}; /* upstream neighbour, the border cell */
  talus_tile t;
  memset(&t, 0, sizeof t);
  t.B = B;
  hf_nb4 q;
  for (int k = 0; k < 4; k++)
    q.n[k] = 1, q.in[k] = 0.0f, q.open[k] = 0.0f;
  q.n[TALUS_DIR_L] = 0, q.in[TALUS_DIR_L] = 1.0f, q.open[TALUS_DIR_L] = 1.0f;
  float walled = hf_outflow_descent(&t, &q, 1, 30.0f, 0.0f);
  q.open[TALUS_DIR_R] = 1.0f; /* the right face opens onto the outside */
  float open = hf_outflow_descent(&t, &q, 1, 30.0f, 0.0f);
  printf("outflow descent: walled %g, open %g (the arriving slope %g)\n", walled, open,
         10.0 / 30.0);
  CHECK(walled == 0.0f, "a wall adds no descent (%g)", walled);
  CHECK(fabsf(open - 10.0f / 30.0f) <= 1e-6f, "open face: descent %g", open);
}

/* The sediment flux capacity C·v·l_c [m³/s] of the stream-power law for
 * a river of discharge Q [m³/s] at speed v down a slope (tangent `drop`)
 * running in one cell of `cell` metres, with heightfield.river_width
 * `width` (derived by talus_kparams_derive). */
static double river_flux_capacity(double cell, float width, float Q, float v, float drop) {
  talus_kparams P;
  talus_kparams_defaults(&P);
  P.cell_size = (float)cell, P.hf_capacity = 40.0f, P.hf_river_width = width;
  talus_kparams_derive(&P);
  float depth = Q / (v * (float)cell); /* the cell's water column */
  return (double)hf_stream_capacity(&P, drop, Q, 0.0f, depth) * v * cell;
}

/* A river narrower than its cell keeps its capacity on a coarse grid: with
 * heightfield.river_width 30 m the same 300 m³/s river at 3 m/s down a 2 %
 * slope can carry the same sediment flux on 82.6 m cells (Zion's SRTM) as
 * on 30 m cells (Big Tujunga's). Read over the cell (width 0, as before)
 * the unit discharge Q/l_c shrank with the cell and the flux capacity by
 * √(30/82.6) = 0.60: on Zion the droplets' load handed to such a river
 * exceeded it at the hand-off, the pipes laid it on the one-cell river,
 * which turned aside, and the droplets then built dams up to 70 m on the
 * dry bed (benchmarks/RESULTS.md). Cells finer than the width read q over
 * their own width, as before. */
static void test_river_width(void) {
  const float Q = 300.0f, v = 3.0f, drop = 0.02f;
  double fine = river_flux_capacity(30.0, 30.0f, Q, v, drop);
  double coarse = river_flux_capacity(82.63, 30.0f, Q, v, drop);
  double old30 = river_flux_capacity(30.0, 0.0f, Q, v, drop);
  double old83 = river_flux_capacity(82.63, 0.0f, Q, v, drop);
  double ten = river_flux_capacity(10.0, 30.0f, Q, v, drop);
  double ten_old = river_flux_capacity(10.0, 0.0f, Q, v, drop);
  printf("river width: flux capacity %.4g m3/s at 30 m, %.4g at 82.6 m (width 0: %.4g, %.4g; "
         "ratio %.3f); 10 m cells %.4g (width 0: %.4g)\n",
         fine, coarse, old30, old83, old83 / old30, ten, ten_old);
  CHECK(fine > 0.0, "a capacity (%g)", fine);
  CHECK(fabs(coarse / fine - 1.0) <= 1e-4, "82.6 m cells carry %.6g of the 30 m river's flux",
        coarse / fine);
  CHECK(fine == old30, "at the width's own cell size nothing changes (%.9g vs %.9g)", fine, old30);
  CHECK(fabs(old83 / old30 - sqrt(30.0 / 82.63)) <= 1e-4,
        "over the cell the capacity falls as 1/sqrt(l_c) (%.4g)", old83 / old30);
  CHECK(ten == ten_old, "a cell finer than the width reads q over itself (%.9g vs %.9g)", ten,
        ten_old);
}

/* The bed of the centre cell of a 3 x 3 tile of beds B and water W (row
 * by row) holding 446 m of suspended load against no capacity, after one
 * hf_flux and one hf_erode (heightfield.no_dam `no_dam`); the bound
 * hf_flux records goes to *lo. */
static double no_dam_cell_bed(const float B[9], const float W[9], int no_dam, float *lo) {
  talus_tile *t = NULL;
  talus_rect buf = {0, 0, 3, 3};
  if (talus_tile_create(&t, buf, 1, 0) || talus_stage_scratch(t, NULL, TALUS_STAGE_HF_FLUX) ||
      talus_stage_scratch(t, NULL, TALUS_STAGE_HF_ERODE)) {
    talus_tile_free(t);
    return -1.0;
  }
  for (int i = 0; i < 9; i++) {
    size_t idx = talus_idx(t, i % 3, i / 3);
    t->B[idx] = B[i], t->w[idx] = W[i], t->r[idx] = i == 4 ? 446.0f : 0.0f, t->hf_cap[idx] = 0;
  }
  talus_kparams P;
  talus_kparams_defaults(&P);
  P.model = TALUS_MODEL_HEIGHTFIELD, P.cell_size = 82.63f, P.dt = 0.5f, P.hf_deposit = 0.05f;
  P.hf_dissolve = 0.0001f, P.hf_water_swell = 0, P.hf_no_dam = no_dam;
  talus_kparams_derive(&P);
  size_t c = talus_idx(t, 1, 1);
  double flows[TALUS_FLOW_COUNT] = {0};
  hf_flux_live(t, &P, c);
  *lo = no_dam ? t->hf_sed[c] : 0.0f;
  hf_erode_cell(t, &P, c, 1, flows);
  double bed = t->B[c];
  talus_tile_free(t);
  return bed;
}

/* The one-cell river cell: bed 700 m under 5.5 m of water (as
 * test_deposit_bound's bank cell); the river runs in from the right (bed
 * 701 m, 2 m deep) and out to the left (bed 699 m, 2 m deep: its surface
 * 701 m), its dry banks (up, down) at 740 m. */
static double river_cell_bed(int no_dam, float *lo) {
  static const float B[9] = {740, 740, 740, 699, 700, 701, 740, 740, 740};
  static const float W[9] = {0, 0, 0, 2, 5.5f, 2, 0, 0, 0};
  return no_dam_cell_bed(B, W, no_dam, lo);
}

/* A cell of sheet flow down a 1.2 % slope (a fan): every cell 0.3 m
 * deep, the bed falling 1 m a cell to the left, level across. */
static double sheet_cell_bed(int no_dam, float *lo) {
  static const float B[9] = {699, 700, 701, 699, 700, 701, 699, 700, 701};
  static const float W[9] = {0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f};
  return no_dam_cell_bed(B, W, no_dam, lo);
}

/* A river never builds its bed above the water surface around it
 * (heightfield.no_dam): the overloaded one-cell river of river_cell_bed
 * lays at most what lifts its bed to its neighbours' lowest water surface
 * (701 m, the river downstream) and carries the rest on. Bounded only by
 * its depth (the rule off) it rose 5.5 m in one step, 4.5 m above the
 * water it flows into: a dam across its own course, which on Zion's
 * one-cell (82.6 m) trunk rivers turned the river aside within ~80 steps
 * and let the droplets bury the dry bed (benchmarks/RESULTS.md). */
static void test_no_dam(void) {
  float lo_on = 0.0f, lo_off = 0.0f;
  double on = river_cell_bed(1, &lo_on), off = river_cell_bed(0, &lo_off);
  printf("no dam: the overloaded river cell's bed 700 -> %.4f m (neighbours' lowest water surface "
         "%.4f m); without the rule -> %.4f m\n",
         on, (double)lo_on, off);
  CHECK(lo_on == 701.0f, "hf_flux records the neighbours' lowest water surface (%.6g)",
        (double)lo_on);
  CHECK(on <= 701.0 + 1e-4 && on >= 701.0 - 1e-4, "the bed rose to %.6g m, want 701", on);
  CHECK(off >= 705.5 - 1e-4, "without the rule the depth bounds it (%.6g m)", off);
  /* Sheet flow is not confined: all 4 neighbours hold half its depth of
   * water, so it settles its load as it spreads (fans, valley floors),
   * bounded by its depth. Bounded by the neighbours' lowest surface
   * (699.3 m, below its bed) it could lay nothing on any slope steeper
   * than its depth over a cell. */
  float lo_sheet = 0.0f;
  double sheet = sheet_cell_bed(1, &lo_sheet);
  printf("no dam: a sheet-flow cell's bed 700 -> %.4f m (bound %.4g m)\n", sheet, (double)lo_sheet);
  CHECK(sheet >= 700.3 - 1e-4, "sheet flow deposits up to its depth (bed %.6g m)", sheet);
  CHECK(lo_sheet > 1e30f, "no bound on unconfined water (%.6g)", (double)lo_sheet);
}

/* A valley of 30 m cells falling 5 % to the east edge, its sides rising
 * 10 % to its axis (row ny / 2), whose outlet, the axis's last cell, is
 * the map's lowest. */
static float *valley_heights(int nx, int ny) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] = (float)(300.0 + 1.5 * (nx - 1 - x) + 3.0 * abs(y - ny / 2));
  return h;
}

/* `steps` steps of the pipes of dem-heightfield (no droplets, no spin-up,
 * heavy rain, the outflow border all round) on the nx × ny heights h of
 * 30 m cells, with `base` and `grade` set (grade may be NULL); the
 * surface to after. Returns 1 when the run ran. */
static int valley_run(const float *h, int nx, int ny, const char *base, const char *grade,
                      int steps, float *after) {
  /* grade may be NULL (the preset's), or two keys split by ';' (at most 2) */
  char keys[2][64] = {"", ""};
  if (grade) {
    const char *semi = strchr(grade, ';');
    snprintf(keys[0], sizeof keys[0], "%.*s", semi ? (int)(semi - grade) : 63, grade);
    if (semi) snprintf(keys[1], sizeof keys[1], "%s", semi + 1);
  }
  const char *sets[] = {"particles.enable=false",
                        "erosion.spinup=0",
                        "water.rain=0.01",
                        base,
                        keys[0][0] ? keys[0] : NULL,
                        keys[1][0] ? keys[1] : NULL,
                        NULL};
  talus_domain *d = make_preset_domain("dem-heightfield", nx, ny, 30.0, h, sets);
  int ran = d && !talus_domain_run(d, steps, NULL, NULL);
  if (ran) talus_domain_read(d, TALUS_FIELD_SURFACE, 0, after);
  talus_domain_free(d);
  return ran;
}

/* How much the outlet of valley_heights drops in `steps` steps of
 * valley_run with heightfield.base_level `on`; *most the most any cell of
 * the valley's axis dropped. */
static double valley_outlet_drop(int on, int steps, double *most) {
  const int nx = 40, ny = 15;
  float *h = valley_heights(nx, ny), *after = malloc(sizeof(float) * nx * ny);
  double drop = NAN;
  *most = 0.0;
  if (valley_run(h, nx, ny, on ? "heightfield.base_level=true" : "heightfield.base_level=false",
                 NULL, steps, after)) {
    size_t axis = (size_t)(ny / 2) * nx;
    drop = (double)h[axis + nx - 1] - (double)after[axis + nx - 1];
    for (int x = 0; x < nx; x++) {
      double low = (double)h[axis + x] - (double)after[axis + x];
      *most = low > *most ? low : *most;
    }
  }
  free(h), free(after);
  return drop;
}

/* An outlet at the map's edge is a fixed base level
 * (heightfield.base_level): the valley's outlet does not drop at all. The
 * rule off (the control), the outlet's descent is the slope arriving from
 * upstream, each cut steepens it, and it runs away (on the whole Big
 * Tujunga map a trench 5.5 km deep, the bare command's). */
static void test_base_level(void) {
  double most_on = 0.0, most_off = 0.0;
  double on = valley_outlet_drop(1, 2000, &most_on), off = valley_outlet_drop(0, 2000, &most_off);
  printf("base level: the valley's outlet dropped %.4g m (its axis at most %.4g m); without the "
         "rule %.4g m (%.4g m)\n",
         on, most_on, off, most_off);
  CHECK(on <= 0.0, "with a fixed base level the outlet dropped %.6g m", on);
  CHECK(off > 1.0, "without it the outlet dropped only %.6g m (the control)", off);
}

/* A valley of 30 m cells whose axis (row ny / 2) falls 1 % to a knick
 * 20 m tall three cells above its outlet at the east edge, its sides
 * rising 10 %: Zion's west-edge valley in small. */
static float *knick_heights(int nx, int ny) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] =
          (float)(300.0 + 0.3 * (nx - 1 - x) + (x < nx - 3 ? 20.0 : 0.0) + 3.0 * abs(y - ny / 2));
  return h;
}

/* What valley_run on knick_heights leaves on the valley's axis after
 * `steps` steps with base_level and `keys` (valley_run's grade: one key,
 * or two split by ';'), in metres: the least fall from an axis cell that
 * was cut (by more than 1 cm) to the next one downstream, the most any
 * axis cell was cut, the knick's fall (axis cell nx - 4 to nx - 3) and
 * how much its top was cut; NaN where the run failed. */
typedef struct knick_figures {
  double flattest, cut, fall, top_cut;
} knick_figures;
static knick_figures knick_run(const char *keys, int steps) {
  const int nx = 40, ny = 15;
  float *h = knick_heights(nx, ny), *after = malloc(sizeof(float) * nx * ny);
  knick_figures k = {NAN, NAN, NAN, NAN};
  if (valley_run(h, nx, ny, "heightfield.base_level=true", keys, steps, after)) {
    const float *in = h + (size_t)(ny / 2) * nx, *out = after + (size_t)(ny / 2) * nx;
    k.flattest = INFINITY, k.cut = 0.0;
    for (int x = 0; x + 1 < nx; x++) {
      double lowered = (double)in[x] - out[x];
      k.cut = fmax(k.cut, lowered);
      if (lowered > 0.01) k.flattest = fmin(k.flattest, (double)out[x] - out[x + 1]);
    }
    k.fall = (double)out[nx - 4] - out[nx - 3];
    k.top_cut = (double)in[nx - 4] - out[nx - 4];
  }
  free(h), free(after);
  return k;
}

/* heightfield.grade: a river cut down towards its outlet keeps that
 * descent. With base_level alone (min_tilt keeps a flat bed's capacity
 * above its load) the cells above the outlet are planed flat at its
 * height, and in Zion's west-edge valley that flat ran 2.5 km upstream,
 * 26-50 m deep. With grade 0.02 at 30 m cells, every axis cell the
 * knick's retreat cut keeps a descent of 0.6 m to the next (less a
 * margin: the cells of a step are bounded by their neighbours' beds at
 * its start), and the reach above the knick, falling 1 %, is not cut. */
static void test_grade(knick_figures off) {
  knick_figures on = knick_run("heightfield.grade=0.02;heightfield.grade_share=0", 3000);
  printf("grade 0.02: the knick cut %.4g m, the flattest cut cell falls %.4g m to the next; "
         "grade 0: cut %.4g m, flattest %.4g m\n",
         on.cut, on.flattest, off.cut, off.flattest);
  CHECK(on.cut > 10.0, "the knick was cut (%.6g m)", on.cut);
  CHECK(on.flattest >= 0.55, "with grade 0.02 a cut cell falls only %.6g m to the next (want 0.6)",
        on.flattest);
  CHECK(off.flattest <= 0.05, "without it the flattest cut cell falls %.6g m (the control: flat)",
        off.flattest);
}

/* heightfield.grade_share (0.5 here, dem-heightfield 0.35; grade_noise 2 m): a bed
 * keeps that share of the input's drop beyond the noise, so the 20.3 m
 * knick of knick_heights, whose retreat planed the valley flat at the
 * outlet's height, still falls 0.5 x (20.3 - 2) = 9.15 m (less a margin:
 * the bound is read against the neighbours' beds of the step that cut
 * last) and its top (320.9 m) stays 9.15 m above the outlet's 300 m,
 * to which the cells below the knick may be planed (their 0.3 m drops
 * are within the noise): cut by at most 11.75 m; the control without
 * the share cuts the knick away. Measured: 9.15 m, top cut 11.75 m;
 * share 0: 0.91 m after a cut of 20 m. The 1 % reach above the knick is
 * not held either: it is planed to the knick's top. */
static void test_grade_share(knick_figures off) {
  knick_figures on = knick_run("heightfield.grade=0;heightfield.grade_share=0.5", 3000);
  printf("grade_share 0.5: the knick falls %.4g m after the run, its top cut %.4g m; "
         "share 0: falls %.4g m, cut %.4g m\n",
         on.fall, on.top_cut, off.fall, off.top_cut);
  CHECK(on.fall >= 9.1, "with grade_share 0.5 the knick falls only %.6g m (want 9.15)", on.fall);
  CHECK(on.top_cut > 5.0 && on.top_cut <= 11.8,
        "with grade_share 0.5 the knick's top was cut %.6g m (5 .. 11.75)", on.top_cut);
  CHECK(off.fall <= 2.0 && off.top_cut > 19.0,
        "without it the knick falls %.6g m after a cut of %.6g m (the control: cut away)", off.fall,
        off.top_cut);
}

/* hf_open's mark (heightfield.sheet_reach 4, sheet_wall 0.1) at cell
 * (x, y) of an n x n map of beds bed(x, y) [m] with water `depth` where
 * the bed is below `wet_below`, 30 m cells; also checks that the CPU's
 * branch-free body gives the general body's mark on every cell it may
 * take (at least 4 cells inside, no NoData: cpu_hf_open_run_end). */
#define OPEN_N 25
static float open_mark(float (*bed)(int, int), float wet_below, float depth, int x, int y,
                       int *same) {
  talus_tile *t = NULL;
  talus_rect buf = {0, 0, OPEN_N, OPEN_N};
  if (talus_tile_create(&t, buf, 1, 0) || talus_stage_scratch(t, NULL, TALUS_STAGE_HF_OPEN)) {
    talus_tile_free(t);
    return -1.0f;
  }
  talus_kctx c = {0};
  talus_kparams_defaults(&c.P);
  c.P.model = TALUS_MODEL_HEIGHTFIELD, c.P.cell_size = 30.0f, c.P.hf_sheet = 0.15f;
  talus_kparams_derive(&c.P);
  c.nx = c.ny = OPEN_N;
  for (int j = 0; j < OPEN_N; j++)
    for (int i = 0; i < OPEN_N; i++) {
      size_t idx = talus_idx(t, i, j);
      t->B[idx] = bed(i, j), t->w[idx] = t->B[idx] < wet_below ? depth : 0.0f;
    }
  double flows[TALUS_FLOW_COUNT] = {0};
  int r = c.P.hf_sheet_reach;
  for (int j = r; j < OPEN_N - r; j++)
    for (int i = r; i < OPEN_N - r; i++) {
      size_t idx = talus_idx(t, i, j);
      k_hf_open(t, &c, i, j, flows);
      float general = t->hf_cap[idx];
      hf_open_live(t, &c.P, idx);
      *same = *same && general == t->hf_cap[idx];
    }
  k_hf_open(t, &c, x, y, flows);
  float mark = t->hf_cap[talus_idx(t, x, y)];
  talus_tile_free(t);
  return mark;
}

/* A gorge: a floor two cells wide (columns 12-13) at 500 m, walls rising
 * 0.5 m/m (15 m a cell) on both sides. */
static float gorge_bed(int x, int y) {
  (void)y;
  int off = x < 12 ? 12 - x : x > 13 ? x - 13 : 0;
  return 500.0f + 15.0f * (float)off;
}
/* A fan: a cone falling 2 % (0.6 m a cell) from its apex 20 cells north
 * of the map's top row. */
static float fan_bed(int x, int y) {
  float dx = (float)(x - 12), dy = (float)(y + 20);
  return 500.0f - 0.6f * sqrtf(dx * dx + dy * dy);
}
/* A valley floor 11 cells wide (columns 7-17), level across, falling 1 %
 * down the valley, between the gorge's walls. */
static float wide_floor_bed(int x, int y) {
  int off = x < 7 ? 7 - x : x > 17 ? x - 17 : 0;
  return 500.0f - 0.3f * (float)y + 15.0f * (float)off;
}

/* heightfield.sheet_capacity's open water (k_hf_open): a river two
 * cells wide in a gorge runs between walls (0), which the 4-neighbour
 * test alone read as spreading (both its neighbours across are wet:
 * Mandakini's trunk cells raised > 5 m 6.7 -> 20.8 %); a fan and a
 * valley floor wider than twice the reach are open (1), also beside one
 * of its walls (a wall on one side only does not confine); on the map's
 * edge the walls across the gorge still stand (the reach along the
 * edge's axis shrinks to 0, the others do not). */
static void test_open_water(void) {
  int same = 1;
  float gorge = open_mark(gorge_bed, 501.0f, 1.0f, 12, 12, &same);
  float fan = open_mark(fan_bed, 1e9f, 0.3f, 12, 12, &same);
  float wide = open_mark(wide_floor_bed, 496.0f, 0.5f, 12, 12, &same);
  float bank = open_mark(wide_floor_bed, 496.0f, 0.5f, 8, 12, &same);
  float edge = open_mark(gorge_bed, 501.0f, 1.0f, 12, 0, &same);
  printf("open water: gorge %g, fan %g, wide floor %g (beside its wall %g), gorge at the map's "
         "edge %g\n",
         (double)gorge, (double)fan, (double)wide, (double)bank, (double)edge);
  CHECK(gorge == 0.0f, "the river in the gorge runs between walls (%g)", (double)gorge);
  CHECK(fan == 1.0f, "the fan is open (%g)", (double)fan);
  CHECK(wide == 1.0f, "the middle of a floor 11 cells wide is open (%g)", (double)wide);
  CHECK(bank == 1.0f, "one wall does not confine: the floor's cell beside it is open (%g)",
        (double)bank);
  CHECK(edge == 0.0f, "on the top row the gorge's walls still stand across it (%g)", (double)edge);
  CHECK(same, "the branch-free body gives the general body's marks");
}

int main(void) {
  memcpy(full_run8, full_run, sizeof full_run);
  memcpy(walled_run8, walled_run, sizeof walled_run);
  full_run8[0] = walled_run8[0] = "heightfield.neighbours=8";
  test_no_dam();
  test_open_water();
  test_base_level();
  /* The two grade rules' control: the knick run with neither (one run for both). */
  knick_figures neither = knick_run("heightfield.grade=0;heightfield.grade_share=0", 3000);
  test_grade(neither);
  test_grade_share(neither);
  test_river_width();
  test_corner_advection();
  test_deposit_bound();
  test_outflow_descent();
  test_water_conserved(0);
  test_water_conserved(1);
  test_diagonal_canyon();
  test_lake_at_rest();
  test_channels();
  test_hardness();
  test_ledger(full_run);
  test_ledger(full_run8);
  test_sediment_conserved(walled_run);
  test_sediment_conserved(walled_run8);
  test_water_swell_off();
  test_threads(full_run);
  test_threads(full_run8);
  test_tiled(full_run);
  test_tiled(full_run8);
  return check_report("test_heightfield");
}
