/*
 * test_particles — particle (droplet) erosion (kernels/particles.h).
 *
 * Design notes: every check is a physical or structural truth of the
 * batch design, measured on terrains built here (fBm, planes, a V valley,
 * a bowl):
 * - conservation: the batch's integer identity eroded = deposited +
 *   outflow + lost holds exactly (the flows are sums of multiples of
 *   2^-32 m far below 2^21 m, so their doubles are exact), and the float
 *   ledger closes;
 * - invariance: tiles × K × threads, a disk store and a run resumed from
 *   its store give the monolithic bytes; a tile with half the stage's
 *   radius as halo does not (the negative control);
 * - seeds: the same seed gives the same bytes, the next seed others;
 * - hardness: harder rock erodes less;
 * - known answers: a droplet on a plane runs straight down it for L moves
 *   and deposits its load there; one leaving the map takes its load out;
 *   a V valley gathers material towards its thalweg; a closed basin loses
 *   nothing and fills at the bottom;
 * - statistics: against a serial single-droplet implementation written
 *   below (one droplet at a time, the map changed at once, float), the
 *   batch at the default density agrees within the reference's bounds and
 *   at density 2^-4 it does not (the check that the test can fail).
 */
#include "check.h"
#include "scene_fixture.h"
#include "tiled_fixture.h"

#include "kernels/cpu/cpu.h"
#include "kernels/particles.h"

#include <math.h>
#include <omp.h>
#include <unistd.h>

/* A domain of parameters `base` then `sets` over bedrock heights h, with
 * NoData where mask is 1 (mask NULL: none). */
static talus_domain *domain_with(const char *const *base, int nx, int ny, const float *h,
                                 const uint8_t *mask, const char *const *sets) {
  talus_params *p = fixture_params(NULL, base);
  for (; p && sets && *sets; sets++) {
    char key[256];
    const char *eq = strchr(*sets, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - *sets), *sets);
    if (talus_params_set(p, key, eq + 1)) fprintf(stderr, "set: %s\n", talus_last_error());
  }
  talus_domain *d = NULL;
  if (p && talus_domain_create(&d, nx, ny, 1.0, h, mask, p))
    fprintf(stderr, "domain: %s\n", talus_last_error());
  talus_params_free(p);
  return d;
}

/* A heightfield domain with droplets on and the water stages off, over
 * heights h, with `sets` applied after. */
static talus_domain *make_domain(int nx, int ny, const float *h, const char *const *sets) {
  static const char *const base[] = {"simulation.model=heightfield", "heightfield.hydraulic=false",
                                     "particles.enable=true", "thermal.hardness=0", NULL};
  return domain_with(base, nx, ny, h, NULL, sets);
}

/* A layered domain with droplets on, no rain and no support check, over
 * bedrock heights h (one column per cell), with `sets` applied after. */
static talus_domain *make_layered(int nx, int ny, const float *h, const char *const *sets) {
  static const char *const base[] = {"simulation.model=layered", "particles.enable=true",
                                     "water.rain=0", "support.enable=false", NULL};
  return domain_with(base, nx, ny, h, NULL, sets);
}

/* Value noise of one octave at (x, y) with wavelength `len` cells. */
static double value_noise(int x, int y, int len, uint32_t seed) {
  int x0 = x / len, y0 = y / len;
  double fx = (double)(x % len) / len, fy = (double)(y % len) / len;
  double sx = fx * fx * (3 - 2 * fx), sy = fy * fy * (3 - 2 * fy);
  double v[4];
  for (int k = 0; k < 4; k++)
    v[k] = talus_hash_unit(seed, x0 + (k & 1), y0 + (k >> 1), 0, 77u);
  return (v[0] * (1 - sx) + v[1] * sx) * (1 - sy) + (v[2] * (1 - sx) + v[3] * sx) * sy;
}

/* fBm heights in about [0, 1] (6 octaves from 64 cells down), the
 * peers' scale: a map of n² cells of 1 m. */
static float *fbm_heights(int nx, int ny, uint32_t seed) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      double s = 0.0, a = 0.5;
      for (int len = 64; len >= 2; len /= 2, a *= 0.5)
        s += a * value_noise(x, y, len, seed + (uint32_t)len);
      h[(size_t)y * nx + x] = (float)s;
    }
  return h;
}

/* Copies the domain's heights into h[nx·ny]. */
static void read_heights(const talus_domain *d, float *h) {
  const talus_tile *t = d->tile;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      h[(size_t)y * t->buf.w + x] = t->B[talus_idx(t, x, y)];
}

static double sum_heights(const talus_domain *d) {
  double s = 0.0;
  for (int y = 0; y < d->tile->buf.h; y++)
    for (int x = 0; x < d->tile->buf.w; x++)
      s += d->tile->B[talus_idx(d->tile, x, y)];
  return s;
}

/* ------------------------------------------------------------------ */
/* Conservation                                                        */

/* The identity eroded = deposited + outflow + lost + handed to the river,
 * exactly, and the float ledger: the heights' change is deposited −
 * eroded + rounding. */
static void check_identity(talus_domain *d, const char *label, double before) {
  double ero = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  double dep = talus_domain_flow(d, TALUS_FLOW_PT_DEPOSIT);
  double out = talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW);
  double lost = talus_domain_flow(d, TALUS_FLOW_PT_LOST);
  double river = talus_domain_flow(d, TALUS_FLOW_PT_RIVER);
  double rnd = talus_domain_flow(d, TALUS_FLOW_PT_ROUNDING);
  double change = sum_heights(d) - before;
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  printf("%s: eroded %.10g = deposited %.10g + outflow %.6g + lost %.6g + river %.6g (diff "
         "%.3g); height change %.6g vs booked %.6g (residual %.3g m3, ledger %.3g)\n",
         label, ero, dep, out, lost, river, ero - (dep + out + lost + river), change,
         dep - ero + rnd, change - (dep - ero + rnd), L.total_residual);
  CHECK(ero > 0.0, "%s: droplets eroded", label);
  CHECK(ero == dep + out + lost + river, "%s: integer identity off by %.3g", label,
        ero - dep - out - lost - river);
  CHECK(fabs(change - (dep - ero + rnd)) <= 1e-9 * fabs(before) + 1e-6, "%s: residual %.3g", label,
        change - (dep - ero + rnd));
  CHECK(fabs(L.total_residual) <= 1e-9 * fabs(before) + 1e-6, "%s: ledger residual %.3g", label,
        L.total_residual);
}

static void test_conservation(void) {
  const int n = 96;
  float *h = fbm_heights(n, n, 3);
  static const char *const walled[] = {"particles.density_log2=6", NULL};
  static const char *const open[] = {"particles.density_log2=6", "water.outflow_border=true",
                                     "particles.deposit_at_death=false", NULL};
  const char *const *cases[2] = {walled, open};
  const char *labels[2] = {"walled", "outflow, no deposit at death"};
  for (int i = 0; i < 2; i++) {
    talus_domain *d = make_domain(n, n, h, cases[i]);
    CHECK(d != NULL, "domain");
    if (!d) continue;
    double before = sum_heights(d);
    talus_domain_run(d, 40, NULL, NULL);
    check_identity(d, labels[i], before);
    double out = talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW);
    double lost = talus_domain_flow(d, TALUS_FLOW_PT_LOST);
    if (i == 0) CHECK(out == 0.0 && lost == 0.0, "walls: nothing leaves (%g, %g)", out, lost);
    if (i == 1) CHECK(out > 0.0 && lost > 0.0, "open: outflow %g and loss %g", out, lost);
    talus_domain_free(d);
  }
  free(h);
}

/* Droplets mixed with the heightfield's water and thermal erosion in one
 * run: the droplets' identity stays exact and the whole ledger closes to
 * float rounding (the bounds of test_heightfield's ledger test). */
static void test_combined(void) {
  const int n = 64;
  float *h = fbm_heights(n, n, 8);
  for (size_t i = 0; i < (size_t)n * n; i++)
    h[i] *= 10.0f;
  static const char *const sets[] = {"heightfield.hydraulic=true", "water.rain=0.02",
                                     "simulation.dt=0.05",         "thermal.enable=true",
                                     "thermal.talus_angle=5",      "water.outflow_border=true",
                                     "particles.density_log2=6",   NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "combined domain");
  if (!d) return free(h);
  double before = sum_heights(d);
  talus_domain_run(d, 300, NULL, NULL);
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double ero = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  double dis = talus_domain_flow(d, TALUS_FLOW_HF_DISSOLVE);
  double moved = ero + dis + talus_domain_flow(d, TALUS_FLOW_THERMAL);
  double exact = ero - talus_domain_flow(d, TALUS_FLOW_PT_DEPOSIT) -
                 talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW) -
                 talus_domain_flow(d, TALUS_FLOW_PT_LOST);
  printf("combined: droplets eroded %.5g, water dissolved %.5g m3; identity off by %.3g; ledger "
         "residual %.3g m3 of %.6g\n",
         ero, dis, exact, L.total_residual, before);
  CHECK(ero > 0.0 && dis > 0.0, "both droplets and water eroded");
  CHECK(exact == 0.0, "droplets' identity off by %.3g", exact);
  CHECK(fabs(L.total_residual) <= 1e-6 * before + 1e-5 * moved, "residual %.3g", L.total_residual);
  talus_domain_free(d);
  free(h);
}

/* Droplets wait for erosion.spinup like the other erosion stages: over
 * the spin-up's 10 steps nothing is eroded and the heights stay; the
 * eleventh step runs the first batch. */
static void test_spinup(void) {
  const int n = 48;
  float *h = fbm_heights(n, n, 5);
  static const char *const waits[] = {"particles.density_log2=5", "erosion.spinup=10", NULL};
  talus_domain *d = make_domain(n, n, h, waits);
  CHECK(d != NULL, "spin-up domain");
  if (!d) return free(h);
  double before = sum_heights(d);
  talus_domain_run(d, 10, NULL, NULL);
  double ero = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  CHECK(ero == 0.0 && sum_heights(d) == before, "spin-up: droplets eroded %g m3", ero);
  talus_domain_run(d, 1, NULL, NULL);
  ero = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  printf("spin-up: nothing eroded in 10 steps, then %.6g m3 in the first batch\n", ero);
  CHECK(ero > 0.0, "after the spin-up the droplets erode");
  talus_domain_free(d);
  free(h);
}

/* ------------------------------------------------------------------ */
/* Invariance                                                          */

static const char *const tiled_sets[] = {"particles.density_log2=5",  "particles.path_length=12",
                                         "water.outflow_border=true", "thermal.enable=true",
                                         "thermal.rate=0.5",          NULL};

/* Pools on t (heights in metres, the water stages off so they stay):
 * water up to `level` times the highest node over every lower node, and,
 * with `fluxes`, hash outflows of 0..1 m³/s per face on every cell (a
 * node's sum reaches particles.river_discharge = 3 on some). */
static void set_pools(talus_tile *t, float level, int fluxes) {
  float top = -INFINITY;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      top = fmaxf(top, t->B[talus_idx(t, x, y)]);
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t i = talus_idx(t, x, y);
      t->w[i] = fmaxf(0.0f, level * top - t->B[i]);
      for (int k = 0; fluxes && k < 4; k++)
        t->f[(size_t)k * t->plane + i] = talus_hash_unit(13u, x, y, 0, (uint32_t)k);
    }
}

/* After 2 steps of d, `steps` more on 1 thread (d keeps the result) against
 * the same from the state after the 2 steps tiled on 2 threads: cores
 * {37, 64} × K {1, 2} in memory, a disk store, and a run in two parts over
 * it (resumed from the store) must give the monolithic bytes. */
static void check_invariance(talus_domain *d, int steps, const char *label) {
  talus_domain_run(d, 2, NULL, NULL);
  talus_tile *init = fixture_clone(d->tile);
  talus_kctx ctx = d->ctx;
  omp_set_num_threads(1);
  talus_domain_run(d, steps, NULL, NULL);
  omp_set_num_threads(2);
  CHECK(init != NULL, "%s: clone", label);
  static const int cases[][2] = {{37, 1}, {64, 2}, {37, 2}};
  for (int i = 0; init && i < 3; i++) {
    long diff = fixture_tiled_diff(init, d->tile, &ctx, cases[i][0], cases[i][1], ctx.step + steps,
                                   TALUS_STORE_MEMORY, NULL, NULL);
    CHECK(diff == 0, "%s: core %d, K %d: %ld values differ", label, cases[i][0], cases[i][1], diff);
  }
  char dir[] = "/tmp/talus_particles_XXXXXX";
  if (init && mkdtemp(dir)) {
    long diff = fixture_tiled_diff(init, d->tile, &ctx, 64, 1, ctx.step + steps, TALUS_STORE_DISK,
                                   dir, NULL);
    CHECK(diff == 0, "%s, disk store: %ld values differ", label, diff);
    fixture_run_parts = 2;
    diff = fixture_tiled_diff(init, d->tile, &ctx, 37, 1, ctx.step + steps, TALUS_STORE_DISK, dir,
                              NULL);
    fixture_run_parts = 1;
    CHECK(diff == 0, "%s, disk store, run in two parts: %ld values differ", label, diff);
    rmdir(dir);
  }
  talus_tile_free(init);
}

/* Tiles {37, 64} × K {1, 2} in memory, a disk store, a run in two parts
 * over it (resumed from the store), and 1 vs 2 threads: the monolithic
 * bytes. Particles with thermal erosion and hardness varying in space. */
static void test_tiled(void) {
  const int nx = 140, ny = 100, steps = 6;
  float *h = fbm_heights(nx, ny, 5);
  for (size_t i = 0; i < (size_t)nx * ny; i++)
    h[i] *= 20.0f; /* metres: thermal slides too */
  talus_domain *d = make_domain(nx, ny, h, tiled_sets);
  CHECK(d != NULL, "tiled domain");
  if (!d) return free(h);
  talus_tile *t = d->tile;
  talus_tile_ensure(t, (void **)&t->hard, sizeof(float), "hardness");
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      t->hard[talus_idx(t, x, y)] = 0.5f * talus_hash_unit(9u, x, y, 0, 3u);
  check_invariance(d, steps, "heightfield");
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_EROSION) > 0.0, "droplets eroded");
  talus_domain_free(d);
  /* The river path: pools (set_pools) and hash fluxes, both criteria on. */
  static const char *const river[] = {"particles.density_log2=5",    "particles.path_length=12",
                                      "water.outflow_border=true",   "particles.river_depth=0.5",
                                      "particles.river_discharge=3", NULL};
  d = make_domain(nx, ny, h, river);
  CHECK(d != NULL, "tiled river domain");
  if (!d) return free(h);
  set_pools(d->tile, 0.45f, 1);
  check_invariance(d, steps, "heightfield, rivers");
  double handed = talus_domain_flow(d, TALUS_FLOW_PT_RIVER);
  printf("tiled, rivers: %.6g m3 handed to the suspended sediment\n", handed);
  CHECK(handed > 0.0, "droplets reached the rivers");
  talus_domain_free(d);
  free(h);
}

/* The particle stages of one step on buffer t (core: buffer-local),
 * as the tiler runs them: clear over the buffer, trace and apply over
 * the core. */
static void run_batch(talus_tile *t, const talus_kctx *c, talus_rect core) {
  double flows[TALUS_FLOW_COUNT] = {0};
  talus_rect all = {0, 0, t->buf.w, t->buf.h};
  talus_cpu_stage(t, c, TALUS_STAGE_PT_CLEAR, all, flows);
  talus_cpu_stage(t, c, TALUS_STAGE_PT_TRACE, core, flows);
  talus_cpu_stage(t, c, TALUS_STAGE_PT_APPLY, core, flows);
}

/* One batch of d (its particle stages alone) on a 32² core inside a buffer
 * of halo H against the whole map: H = R (the stage's radius) gives the
 * same bytes, H = R/2 must not. */
static void halo_control(talus_domain *d, const char *label) {
  talus_kctx ctx = d->ctx;
  talus_tile *init = fixture_clone(d->tile);
  talus_rect whole = {0, 0, d->tile->buf.w, d->tile->buf.h};
  run_batch(d->tile, &ctx, whole);
  int R = talus_stage_radius(&ctx.P, TALUS_STAGE_PT_TRACE);
  talus_rect core = {64, 64, 32, 32};
  for (int half = 0; half < 2 && init; half++) {
    int H = half ? R / 2 : R;
    talus_rect buf = {core.x0 - H, core.y0 - H, core.w + 2 * H, core.h + 2 * H};
    talus_tile *t = NULL;
    talus_tile_create(&t, buf, init->nz, init->hard != NULL);
    CHECK(t && !fixture_fill_from_tile(init, t, buf), "control tile: %s", talus_last_error());
    run_batch(t, &ctx, (talus_rect){H, H, core.w, core.h});
    long diff = fixture_diff_cells(t, d->tile, core);
    printf("%s: halo %d (radius %d): %ld values of the %d core cells differ\n", label, H, R, diff,
           core.w * core.h);
    if (!half) CHECK(diff == 0, "%s: halo = radius: %ld values differ", label, diff);
    if (half) CHECK(diff > 0, "%s: halo = radius / 2 must differ (the test can fail)", label);
    talus_tile_free(t);
  }
  CHECK(init != NULL, "%s: clone", label);
  talus_tile_free(init);
}

static void test_halo_control(void) {
  const int n = 160;
  float *h = fbm_heights(n, n, 11);
  static const char *const sets[] = {"particles.density_log2=4", NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "control domain");
  if (d) halo_control(d, "heightfield");
  talus_domain_free(d);
  free(h);
}

/* Same seed, same bytes; the next seed, others. */
static void test_seeds(void) {
  const int n = 64;
  float *h = fbm_heights(n, n, 2);
  const char *s1[] = {"particles.density_log2=5", "simulation.seed=5", NULL};
  const char *s2[] = {"particles.density_log2=5", "simulation.seed=6", NULL};
  talus_domain *a = make_domain(n, n, h, s1), *b = make_domain(n, n, h, s1);
  talus_domain *c = make_domain(n, n, h, s2);
  CHECK(a && b && c, "seed domains");
  if (a && b && c) {
    talus_domain_run(a, 10, NULL, NULL);
    talus_domain_run(b, 10, NULL, NULL);
    talus_domain_run(c, 10, NULL, NULL);
    CHECK(fixture_same_state(a, b), "same seed, different bytes");
    CHECK(!fixture_same_state(a, c), "seed + 1 gave the same bytes");
  }
  talus_domain_free(a);
  talus_domain_free(b);
  talus_domain_free(c);
  free(h);
}

/* ------------------------------------------------------------------ */
/* Known answers                                                       */

/* A cell (x, y) in [x0, x1) × [y0, y1) where a droplet spawns at `step`
 * under c's seed and density; 0 if none. */
static int find_spawn(const talus_kctx *c, int x0, int x1, int y0, int y1, int *sx, int *sy) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      if (!(talus_hash(c->P.seed, x, y, (uint64_t)c->step, PT_STREAM) >>
            (32 - c->P.pt_density_log2))) {
        *sx = x, *sy = y;
        return 1;
      }
  return 0;
}

/* The bounding box of the cells of plane p of t whose total has the sign
 * of `sign` (on heightfields plane 0 holds net erosion: erosion where it
 * is positive, deposits where it is negative; PT_TOTAL_RIVER the river's load),
 * and their total [units] times that sign. */
static int64_t plane_box(const talus_tile *t, int p, int sign, int box[4]) {
  int64_t sum = 0;
  box[0] = box[1] = INT32_MAX, box[2] = box[3] = -1;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      int64_t v = sign * t->pt_acc[pt_plane(t, p, 0) + talus_idx(t, x, y)];
      if (v <= 0) continue;
      sum += v;
      box[0] = x < box[0] ? x : box[0], box[1] = y < box[1] ? y : box[1];
      box[2] = x > box[2] ? x : box[2], box[3] = y > box[3] ? y : box[3];
    }
  return sum;
}

/* Heights of a ground plane falling 0.05 m per cell along +x. */
static float *ramp_heights(int nx, int ny) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] = 0.05f * (float)(nx - x);
  return h;
}

/* One droplet on a plane falling along +x: it runs down the plane (its
 * own brush, centred off the row's axis, may turn it by at most a cell
 * over its life), ends L cells down and deposits its load there; near the
 * outflow edge it leaves with its load. */
static void test_plane(void) {
  const int nx = 96, ny = 64;
  float *h = ramp_heights(nx, ny);
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=4", NULL};
  talus_domain *d = make_domain(nx, ny, h, sets);
  CHECK(d != NULL, "plane domain");
  if (!d) return free(h);
  talus_tile *t = d->tile;
  const talus_kctx *c = &d->ctx;
  talus_stage_scratch(t, &c->P, TALUS_STAGE_PT_TRACE);
  int L = c->P.pt_max_moves, r = c->P.pt_brush_radius, sx, sy;
  for (int edge = 0; edge < 2; edge++) {
    int x0 = edge ? nx - 12 : 4;
    if (!find_spawn(c, x0, x0 + 6, 4, ny - 4, &sx, &sy)) {
      CHECK(0, "no spawn cell found");
      continue;
    }
    double flows[TALUS_FLOW_COUNT] = {0};
    memset(t->pt_acc, 0, pt_planes(&c->P) * (size_t)t->nz * t->plane * sizeof(int64_t));
    k_pt_trace(t, c, sx, sy, flows);
    int be[4], bd[4];
    int64_t net = plane_box(t, 0, 1, be) - plane_box(t, 0, -1, bd);
    double ero = flows[TALUS_FLOW_PT_EROSION] * PT_UNIT,
           dep = flows[TALUS_FLOW_PT_DEPOSIT] * PT_UNIT;
    double out = flows[TALUS_FLOW_PT_OUTFLOW] * PT_UNIT;
    printf("plane%s: spawn (%d, %d): eroded x %d..%d y %d..%d, deposited x %d..%d y %d..%d; "
           "eroded %.0f = deposited %.0f + out %.0f units\n",
           edge ? " edge" : "", sx, sy, be[0], be[2], be[1], be[3], bd[0], bd[2], bd[1], bd[3], ero,
           dep, out);
    CHECK(ero > 0, "the droplet eroded");
    CHECK(be[1] >= sy - r - 1 && be[3] <= sy + r + 2, "erosion off its row: y %d..%d", be[1],
          be[3]);
    CHECK(be[0] >= sx - r && be[2] <= sx + L + r, "erosion x %d..%d", be[0], be[2]);
    CHECK(ero == dep + out, "the load is all accounted for");
    CHECK((double)net == ero - dep, "the net plane holds what it booked (%lld, %.0f)",
          (long long)net, ero - dep);
    if (!edge) {
      CHECK(bd[3] <= sy + 2 && bd[1] >= sy - 1, "deposits on its row: y %d..%d", bd[1], bd[3]);
      CHECK(bd[2] == sx + L + 1 && out == 0.0, "the load ends L cells down (x %d, spawn %d)", bd[2],
            sx);
    } else {
      CHECK(out > 0.0 && dep == 0, "off the edge the load leaves (out %.0f, dep %.0f)", out, dep);
    }
  }
  talus_domain_free(d);
  free(h);
}

/* The cell of t holding all of plane p's nonzero totals (-1 when they
 * lie in more than one, or none). */
static long plane_single(const talus_tile *t, int p) {
  long at = -1;
  for (size_t i = 0; i < t->plane; i++)
    if (t->pt_acc[pt_plane(t, p, 0) + i]) {
      if (at >= 0) return -1;
      at = (long)i;
    }
  return at;
}

/* One droplet on the plane of test_plane running into a river: columns
 * x >= xr hold 1 m of water (criterion "depth", particles.river_depth
 * 0.5) or 0.01 m flowing out at 2 m³/s per cell of 1 m (criterion
 * "discharge", particles.river_discharge 1.5 m²/s). It erodes on its way
 * down, ends where it reaches the river, and hands its whole load, in
 * exact units, to one wet cell's suspended sediment: nothing is
 * deposited on the bed, nothing lost or sent out, no erosion past the
 * river's edge; pt_apply adds it to the suspended sediment, booked
 * exactly (PT_RIVER) with its float rounding. The control: the same
 * droplet with both criteria off runs on through the water and lays its
 * load on the bed past the river's edge. */
static void test_river(void) {
  const int nx = 96, ny = 64;
  float *h = ramp_heights(nx, ny);
  static const char *const cases[3][3] = {
      {"particles.river_depth=0.5", "particles.density_log2=4", NULL},
      {"particles.river_discharge=1.5", "particles.density_log2=4", NULL},
      {"particles.density_log2=4", NULL, NULL}};
  const char *labels[3] = {"depth", "discharge", "control (off)"};
  for (int i = 0; i < 3; i++) {
    talus_domain *d = make_domain(nx, ny, h, cases[i]);
    CHECK(d != NULL, "river domain");
    if (!d) continue;
    talus_tile *t = d->tile;
    const talus_kctx *c = &d->ctx;
    talus_stage_scratch(t, &c->P, TALUS_STAGE_PT_TRACE);
    int r = c->P.pt_brush_radius, sx, sy;
    if (!find_spawn(c, 4, 10, 4, ny - 4, &sx, &sy)) {
      CHECK(0, "no spawn cell found");
      talus_domain_free(d);
      continue;
    }
    int xr = sx + 10; /* the river's edge: 10 moves down */
    for (int y = 0; y < ny; y++)
      for (int x = xr; x < nx; x++) {
        t->w[talus_idx(t, x, y)] = i == 1 ? 0.01f : 1.0f;
        t->f[talus_idx(t, x, y)] = i == 1 ? 2.0f : 0.0f; /* outflow to the right */
      }
    double flows[TALUS_FLOW_COUNT] = {0};
    memset(t->pt_acc, 0, pt_planes(&c->P) * (size_t)t->nz * t->plane * sizeof(int64_t));
    k_pt_trace(t, c, sx, sy, flows);
    int be[4], bd[4], br[4];
    /* the control holds no river plane (pt_planes) */
    int river = pt_river_on(&c->P);
    CHECK(pt_planes(&c->P) == (river ? 2 : 1), "%s: %d planes of totals", labels[i],
          pt_planes(&c->P));
    int64_t net = plane_box(t, PT_TOTAL_EROSION, 1, be) - plane_box(t, PT_TOTAL_EROSION, -1, bd);
    int64_t riv = river ? plane_box(t, PT_TOTAL_RIVER, 1, br) : 0;
    int64_t ero = (int64_t)(flows[TALUS_FLOW_PT_EROSION] * PT_UNIT),
            dep = (int64_t)(flows[TALUS_FLOW_PT_DEPOSIT] * PT_UNIT);
    long at = river ? plane_single(t, PT_TOTAL_RIVER) : -1;
    double out = flows[TALUS_FLOW_PT_OUTFLOW], lost = flows[TALUS_FLOW_PT_LOST];
    printf("river, %s: spawn (%d, %d), edge x %d: eroded %lld units over x %d..%d, deposited "
           "%lld, handed %lld at x %d..%d y %d..%d, out %g, lost %g\n",
           labels[i], sx, sy, xr, (long long)ero, be[0], be[2], (long long)dep, (long long)riv,
           br[0], br[2], br[1], br[3], out, lost);
    CHECK(ero > 0, "%s: the droplet eroded", labels[i]);
    CHECK(net == ero - dep, "%s: the net plane holds what it booked (%lld, %lld)", labels[i],
          (long long)net, (long long)(ero - dep));
    CHECK(out == 0.0 && lost == 0.0, "%s: nothing leaves or is lost", labels[i]);
    if (i == 2) {
      CHECK(riv == 0 && dep == ero, "control: no river, the bed gets the load (%lld of %lld)",
            (long long)dep, (long long)ero);
      CHECK(bd[2] > xr, "control: the load lies past the river's edge (x %d, edge %d)", bd[2], xr);
      talus_domain_free(d);
      continue;
    }
    CHECK(dep == 0 && riv == ero,
          "%s: the whole load to the river, exactly (%lld of %lld, bed %lld)", labels[i],
          (long long)riv, (long long)ero, (long long)dep);
    CHECK(at >= 0 && t->w[at] > 0.0f && (int)(at % t->pitch) >= xr,
          "%s: the load in one wet river cell", labels[i]);
    CHECK(be[2] <= xr + r, "%s: no erosion past the river's edge + brush (x %d, edge %d)",
          labels[i], be[2], xr);
    /* pt_apply: the suspended sediment gets it, booked exactly */
    double af[TALUS_FLOW_COUNT] = {0}, before = 0.0, after = 0.0;
    for (size_t k = 0; k < t->plane; k++)
      before += t->r[k];
    talus_rect all = {0, 0, t->buf.w, t->buf.h};
    talus_cpu_stage(t, c, TALUS_STAGE_PT_APPLY, all, af);
    for (size_t k = 0; k < t->plane; k++)
      after += t->r[k];
    double exact = (double)riv / PT_UNIT;
    printf("river, %s: suspended sediment %+.10g m (handed %.10g m, rounding %.3g)\n", labels[i],
           after - before, exact, af[TALUS_FLOW_PT_RIVER_ROUND]);
    CHECK(af[TALUS_FLOW_PT_RIVER] == exact, "%s: PT_RIVER %.10g, handed %.10g", labels[i],
          af[TALUS_FLOW_PT_RIVER], exact);
    CHECK(fabs(after - before - exact - af[TALUS_FLOW_PT_RIVER_ROUND]) <= 1e-12,
          "%s: the suspended sediment gained the handed load and its booked rounding", labels[i]);
    CHECK(flows[TALUS_FLOW_PT_DEPOSIT] == 0.0 && flows[TALUS_FLOW_PT_EROSION] == exact,
          "%s: the bed lost what the river got", labels[i]);
    CHECK(af[TALUS_FLOW_PT_DEPOSIT] == 0.0 && af[TALUS_FLOW_PT_EROSION] == 0.0,
          "%s: pt_apply books no erosion (the droplet did)", labels[i]);
    talus_domain_free(d);
  }
  free(h);
}

/* pt_in_river reads the deepest of the droplet's 4 nodes, not their
 * bilinear depth: a one-cell river running diagonally between cells
 * (Zion's canyons on 82.6 m cells) wets two opposite nodes of a droplet
 * crossing it, whose bilinear depth is then half the river's, so it
 * crossed without handing over and laid its load in the canyon. Nodes 0
 * and 3 under 0.6 m of water, 1 and 2 dry, the droplet at their middle:
 * the bilinear depth is 0.3, the river_depth 0.5; the deepest node ends
 * it (the old bilinear read fails this). Control: one node at 0.4 m. */
static void test_river_diagonal(void) {
  const int n = 16;
  float *h = ramp_heights(n, n);
  static const char *const sets[] = {"particles.river_depth=0.5", NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "diagonal river domain");
  if (!d) return free(h);
  talus_tile *t = d->tile;
  pt_drop drop;
  memset(&drop, 0, sizeof drop);
  drop.ix = t->buf.x0 + 6, drop.iy = t->buf.y0 + 6, drop.fx = drop.fy = 0.5f;
  size_t i = talus_idx(t, 6, 6), p = (size_t)t->pitch;
  t->w[i] = t->w[i + p + 1] = 0.6f;
  int wet = pt_in_river(&drop, t, &d->ctx.P);
  printf("diagonal river: bilinear depth %.3g, ends in the river: %d\n", pt_field(t, t->w, &drop),
         wet);
  CHECK(wet == 1, "a droplet between the two wet nodes of a diagonal river ends there");
  t->w[i] = t->w[i + p + 1] = 0.0f;
  t->w[i + 1] = 0.4f;
  CHECK(pt_in_river(&drop, t, &d->ctx.P) == 0, "0.4 m of water is no river at 0.5 m");
  talus_domain_free(d);
  free(h);
}

/* Droplets over pools (set_pools) for 40 batches: the identity eroded =
 * deposited + outflow + lost + river holds exactly, nothing is lost, the
 * ledger closes, and the suspended sediment holds what was handed (the
 * water stages are off: nothing moves it). */
static void test_river_ledger(void) {
  const int n = 96;
  float *h = fbm_heights(n, n, 3);
  for (size_t i = 0; i < (size_t)n * n; i++)
    h[i] *= 20.0f;
  static const char *const sets[] = {"particles.density_log2=6", "particles.river_depth=0.5", NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "river ledger domain");
  if (!d) return free(h);
  set_pools(d->tile, 0.45f, 0);
  double before = sum_heights(d);
  talus_domain_run(d, 40, NULL, NULL);
  check_identity(d, "rivers", before);
  double river = talus_domain_flow(d, TALUS_FLOW_PT_RIVER);
  double rnd = talus_domain_flow(d, TALUS_FLOW_PT_RIVER_ROUND), held = 0.0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      held += d->tile->r[talus_idx(d->tile, x, y)];
  printf("rivers: %.10g m3 handed, suspended sediment %.10g m3 (rounding %.3g)\n", river, held,
         rnd);
  CHECK(river > 0.0, "droplets reached the pools");
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_LOST) == 0.0, "nothing lost");
  CHECK(fabs(held - river - rnd) <= 1e-9 * river, "the pools hold what was handed (%.10g, %.10g)",
        held, river + rnd);
  talus_domain_free(d);
  free(h);
}

/* Mean distance to row yc (xc < 0) or to cell (xc, yc) of the amounts of
 * plane p of tile t that have the sign of `sign` (plane_box). */
static double plane_mean_offset(const talus_tile *t, int p, int sign, int xc, int yc) {
  double s = 0.0, m = 0.0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      double v = (double)(sign * t->pt_acc[pt_plane(t, p, 0) + talus_idx(t, x, y)]);
      if (v <= 0.0) continue;
      double dx = xc < 0 ? 0.0 : (double)(x - xc), dy = (double)(y - yc);
      s += v * sqrt(dx * dx + dy * dy), m += v;
    }
  return m > 0.0 ? s / m : 0.0;
}

/* Mean height change of row y over columns [x0, x1) between h0 and h. */
static double row_change(const float *h0, const float *h, int nx, int y, int x0, int x1) {
  double m = 0.0;
  for (int x = x0; x < x1; x++)
    m += h[(size_t)y * nx + x] - h0[(size_t)y * nx + x];
  return m / (x1 - x0);
}

/* A V valley of nx x ny cells: flanks rising 0.3 from its thalweg at row
 * yc, which falls 0.02 a cell towards the east edge (x = nx - 1). */
static float *v_valley(int nx, int ny, int yc) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; h && y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] = 0.3f * (float)abs(y - yc) + 0.02f * (float)(nx - x);
  return h;
}

/* A V valley along x (flanks 0.3 m per cell, thalweg falling 0.02 m per
 * cell), open borders: droplets erode the flanks and end their lives on
 * the thalweg, so a batch's deposits lie nearer to it than its erosion;
 * after many batches the thalweg band has filled, the upper flanks are
 * lowered, and the cross profile of the change, in bands of 5 rows, is
 * mirror-symmetric within a quarter of its range (the spawns are not
 * mirrored, so not exactly; 20 rows each side, as the map's last row
 * spawns no droplet). */
static void test_valley(void) {
  const int nx = 120, ny = 61, yc = 30, x0 = 10, x1 = 80;
  float *h = v_valley(nx, ny, yc);
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=4", NULL};
  talus_domain *d = make_domain(nx, ny, h, sets);
  CHECK(d != NULL, "valley domain");
  if (!d) return free(h);
  talus_domain_run(d, 1, NULL, NULL);
  double me = plane_mean_offset(d->tile, 0, 1, -1, yc),
         md = plane_mean_offset(d->tile, 0, -1, -1, yc);
  talus_domain_run(d, 60, NULL, NULL);
  float *a = malloc((size_t)nx * ny * sizeof *a);
  read_heights(d, a);
  double floor_ = row_change(h, a, nx, yc, x0, x1), upper = 0.0, span = 0.0, asym = 0.0;
  double band[2] = {0.0, 0.0};
  for (int k = 1; k <= yc; k++) {
    double lo = row_change(h, a, nx, yc - k, x0, x1), hi = row_change(h, a, nx, yc + k, x0, x1);
    if (k >= 20) upper += (lo + hi) / (2.0 * (yc - 19));
    span = fmax(span, fmax(fabs(lo), fabs(hi)));
    band[0] += lo / 5.0, band[1] += hi / 5.0;
    if (k % 5 == 0 && k <= 20) /* bands of 5 rows; the map's edge rows are no mirror */
      asym = fmax(asym, fabs(band[0] - band[1])), band[0] = band[1] = 0.0;
  }
  printf("valley: erosion at mean |y - yc| %.2f, deposits %.2f; change: thalweg %+.3g m, upper "
         "flanks %+.3g m, largest mirror difference of 5-row bands %.3g of %.3g m\n",
         me, md, floor_, upper, asym, span);
  CHECK(md < 0.5 * me, "deposits nearer the thalweg (%.2f) than erosion (%.2f)", md, me);
  CHECK(floor_ > 0.0 && upper < 0.0, "the floor fills (%.3g), the upper flanks lower (%.3g)",
        floor_, upper);
  CHECK(asym <= 0.25 * span, "mirror difference %.3g of %.3g", asym, span);
  free(a);
  talus_domain_free(d);
  free(h);
}

/* The base level (pt_edge): the valley of test_valley, its thalweg
 * leaving through the open east edge, 200 batches at 4x the default
 * capacity. Edge nodes no higher than the node inside them take no brush
 * share, so the outlet holds and nothing inside sinks below it: the
 * outlet ends 3.75 m higher (the floor fills), its lowest node as high.
 * Without the rule the outlet was cut to -10.6 m and the droplets,
 * falling into what they dug, ran away to -30 km; with every edge node
 * held, the rim stood while the map inside sank and it blew up too. An
 * edge node above its neighbour (the west end, where the valley rises to
 * the border) still erodes. */
static void test_base_level(void) {
  const int nx = 120, ny = 61, yc = 30;
  float *h = v_valley(nx, ny, yc);
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=4",
                                     "particles.capacity=4", NULL};
  talus_domain *d = make_domain(nx, ny, h, sets);
  CHECK(d != NULL, "base-level domain");
  if (!d) return free(h);
  talus_domain_run(d, 200, NULL, NULL);
  float *a = malloc((size_t)nx * ny * sizeof *a);
  read_heights(d, a);
  size_t out = (size_t)yc * nx + nx - 1;
  float lowest = a[0];
  double west = 0.0;
  for (size_t i = 0; i < (size_t)nx * ny; i++)
    lowest = a[i] < lowest ? a[i] : lowest;
  for (int y = 0; y < ny; y++)
    west += (a[(size_t)y * nx] - h[(size_t)y * nx]) / ny;
  printf("base level: outlet %.4f m (was %.4f), lowest node %.4f m, thalweg 10 cells in %+.3f m, "
         "west edge %+.4f m\n",
         a[out], h[out], lowest, a[out - 10] - h[out - 10], west);
  CHECK(a[out] >= h[out] - 0.05f, "the outlet was cut: %.4f m, was %.4f", a[out], h[out]);
  CHECK(lowest >= h[out] - 0.05f, "a node sank to %.4f m, below the outlet's %.4f", lowest, h[out]);
  CHECK(west < 0.0, "the west edge, above the nodes inside it, erodes (%+.4f m)", west);
  free(a);
  talus_domain_free(d);
  free(h);
}

/* A closed bowl with open borders: no droplet leaves, the load ends
 * nearer the bottom than it was taken, and the bottom rises. */
static void test_basin(void) {
  const int n = 81, cx = 40;
  float *h = malloc((size_t)n * n * sizeof *h);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      h[(size_t)y * n + x] = 0.004f * (float)((x - cx) * (x - cx) + (y - cx) * (y - cx));
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=5", NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "basin domain");
  if (!d) return free(h);
  double before = sum_heights(d);
  double re = 0.0, rd = 0.0;
  for (int s = 0; s < 40; s++) {
    talus_domain_run(d, 1, NULL, NULL);
    re += plane_mean_offset(d->tile, 0, 1, cx, cx), rd += plane_mean_offset(d->tile, 0, -1, cx, cx);
  }
  check_identity(d, "basin", before);
  double out = talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW);
  float bottom = d->tile->B[talus_idx(d->tile, cx, cx)];
  printf("basin: outflow %g, bottom %.4g m (was 0); mean distance of erosion %.2f, "
         "deposits %.2f\n",
         out, bottom, re / 40, rd / 40);
  CHECK(out == 0.0, "nothing leaves a closed basin (%g)", out);
  CHECK(bottom > 0.0f, "the bottom fills (%g)", bottom);
  CHECK(rd < re, "deposits nearer the bottom (%.2f) than erosion (%.2f)", rd / 40, re / 40);
  talus_domain_free(d);
  free(h);
}

/* Hardness: on fBm whose west half has H = 0 and east half H = 0.8,
 * droplets erode the east at most half as much as the west (1 − H = 0.2
 * of the rate where the load is short). */
static void test_hardness(void) {
  const int n = 96;
  float *h = fbm_heights(n, n, 4);
  static const char *const sets[] = {"particles.density_log2=5", NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL && d->tile->hard != NULL, "hardness domain");
  if (!d || !d->tile->hard) return free(h), talus_domain_free(d);
  talus_tile *t = d->tile;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      t->hard[talus_idx(t, x, y)] = x < n / 2 ? 0.0f : 0.8f;
  double ero[2] = {0, 0};
  for (int s = 0; s < 30; s++) {
    talus_domain_run(d, 1, NULL, NULL);
    for (int y = 0; y < n; y++)
      for (int x = 4; x < n - 4; x++)
        if (x < n / 2 - 4 || x >= n / 2 + 4)
          ero[x >= n / 2] += fmax((double)t->pt_acc[talus_idx(t, x, y)], 0.0) / PT_UNIT;
  }
  printf("hardness: eroded %.4g m3 where H = 0, %.4g where H = 0.8\n", ero[0], ero[1]);
  CHECK(ero[1] > 0.0 && ero[1] < 0.5 * ero[0], "hard %.4g vs soft %.4g", ero[1], ero[0]);
  talus_domain_free(d);
  free(h);
}

/* ------------------------------------------------------------------ */
/* Layered stacks                                                      */

/* Gives global cell (x, y) of t the n columns of bedrock tops B[k] and
 * ceilings C[k] (the top one's is TALUS_TOP), without sand, water,
 * sediment, damage or flux. */
static void set_columns(talus_tile *t, int x, int y, int n, const float *B, const float *C) {
  size_t idx = talus_idx(t, x - t->buf.x0, y - t->buf.y0);
  t->count[idx] = (uint8_t)n;
  for (int k = 0; k < n; k++) {
    size_t ci = talus_col(t, idx, k);
    t->B[ci] = B[k], t->C[ci] = k == n - 1 ? TALUS_TOP : C[k];
    t->s[ci] = t->w[ci] = t->r[ci] = t->D[ci] = t->p[ci] = 0.0f;
    for (int d = 0; d < 4; d++)
      t->f[talus_dcol(t, idx, k, d)] = 0.0f;
  }
}

/* A roof slab over [x0, x1) × [y0, y1) of a one-column map: the ground g
 * under it with its ceiling at g + 5 m, the roof's top at g + 5 + thick
 * (so it falls as the ground does). */
static void add_roof(talus_tile *t, int x0, int x1, int y0, int y1, float thick) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) {
      float g = t->B[talus_idx(t, x - t->buf.x0, y - t->buf.y0)];
      float B[2] = {g, g + 5.0f + thick}, C[1] = {g + 5.0f};
      set_columns(t, x, y, 2, B, C);
    }
}

/* A hill 12 m above the ground of a one-column map over columns [x0, x1)
 * of every row, pierced along x by a tunnel over rows [y0, y1): its floor
 * the ground g, its ceiling g + 4 m, its roof's top the hill's. */
static void add_tunnel_hill(talus_tile *t, int x0, int x1, int y0, int y1) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = x0; x < x1; x++) {
      float g = t->B[talus_idx(t, x - t->buf.x0, y - t->buf.y0)];
      float B[2] = {g, g + 12.0f}, C[1] = {g + 4.0f};
      if (y >= y0 && y < y1)
        set_columns(t, x, y, 2, B, C);
      else
        set_columns(t, x, y, 1, B + 1, NULL);
    }
}

/* Runs on its own the droplet of the first spawn cell in [x0, x1) ×
 * [y0, y1) on the first step from c->step (advanced to it) that has one,
 * into t->pt_acc cleared before. Returns 0 if none up to 256 steps on;
 * its outflow [units] to *out. */
static int lone_droplet(talus_tile *t, talus_kctx *c, int x0, int x1, int y0, int y1, double *out) {
  int sx, sy;
  talus_stage_scratch(t, &c->P, TALUS_STAGE_PT_TRACE);
  for (int i = 0; i < 256; i++, c->step++) {
    if (!find_spawn(c, x0, x1, y0, y1, &sx, &sy)) continue;
    double flows[TALUS_FLOW_COUNT] = {0};
    memset(t->pt_acc, 0, pt_planes(&c->P) * (size_t)t->nz * t->plane * sizeof(int64_t));
    k_pt_trace(t, c, sx - t->buf.x0, sy - t->buf.y0, flows);
    *out = flows[TALUS_FLOW_PT_OUTFLOW] * PT_UNIT;
    printf("  droplet from (%d, %d) at step %lld\n", sx, sy, (long long)c->step);
    return 1;
  }
  return 0;
}

/* Total [units] of t's totals of kind `kind` (0 erosion, 1 deposit, 2
 * both) on column k of the cells of [x0, x1) × [y0, y1) that have it. */
static int64_t col_total(const talus_tile *t, int kind, int k, int x0, int x1, int y0, int y1) {
  int64_t sum = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) {
      size_t idx = talus_idx(t, x - t->buf.x0, y - t->buf.y0);
      if (k >= t->count[idx]) continue;
      if (kind != 1) sum += t->pt_acc[pt_plane(t, PT_TOTAL_EROSION, k) + idx];
      if (kind != 0) sum += t->pt_acc[pt_plane(t, PT_TOTAL_DEPOSIT, k) + idx];
    }
  return sum;
}

/* A droplet born on a roof (a slab 5 m over a ground plane, both falling
 * along +x) runs to the roof's edge and falls off it: it erodes the
 * roof's top, changes nothing of the floor under the roof beyond its
 * brush's reach from the edge, and lands on the ground past the edge.
 * The same droplet without the roof does change that floor (the check
 * can fail). */
static void test_roof(void) {
  const int nx = 96, ny = 64, rx0 = 16, rx1 = 50, ry0 = 16, ry1 = 48;
  float *h = ramp_heights(nx, ny);
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=4", NULL};
  for (int roofed = 1; roofed >= 0; roofed--) {
    talus_domain *d = make_layered(nx, ny, h, sets);
    CHECK(d != NULL, "roof domain");
    if (!d) continue;
    talus_tile *t = d->tile;
    if (roofed) add_roof(t, rx0, rx1, ry0, ry1, 4.0f);
    talus_kctx c = d->ctx;
    double out = 0.0;
    if (!lone_droplet(t, &c, rx0 + 6, rx0 + 12, ry0 + 12, ry1 - 12, &out)) {
      CHECK(0, "no spawn on the roof");
      talus_domain_free(d);
      continue;
    }
    int xin = rx1 - c.P.pt_brush_radius - 2; /* beyond the brush's reach from the edge */
    int64_t top = col_total(t, 0, 1, rx0, rx1, ry0, ry1);
    int64_t under = col_total(t, 2, 0, rx0, xin, ry0, ry1);
    int64_t past = col_total(t, 2, 0, rx1, nx, 0, ny);
    int64_t ero = col_total(t, 0, 0, 0, nx, 0, ny) + col_total(t, 0, 1, 0, nx, 0, ny);
    int64_t dep = col_total(t, 1, 0, 0, nx, 0, ny) + col_total(t, 1, 1, 0, nx, 0, ny);
    printf("roof%s: roof top eroded %.4g m3, floor under the roof (x < %d) changed %.4g m3, ground "
           "past the edge %.4g m3; eroded %lld = deposited %lld + out %.0f units\n",
           roofed ? "" : " (none)", top / PT_UNIT, xin, under / PT_UNIT, past / PT_UNIT,
           (long long)ero, (long long)dep, out);
    if (roofed) {
      CHECK(top > 0, "the droplet eroded the roof's top");
      CHECK(under == 0, "the floor under the roof changed (%lld units)", (long long)under);
      CHECK(past > 0, "the droplet did not land past the roof's edge");
      CHECK((double)ero == (double)dep + out, "the load is all accounted for");
    } else {
      CHECK(under != 0, "without the roof the droplet must change that floor (the check can fail)");
    }
    talus_domain_free(d);
  }
  free(h);
}

/* A droplet on a ground plane running into a tunnel through a 12 m hill
 * (ceiling 4 m over the tunnel's floor) stays under the ceiling: it
 * erodes the tunnel's floor and ends its life on it; nothing of the
 * roof's top or of the hill beside the tunnel changes. */
static void test_cave(void) {
  const int nx = 96, ny = 64, hx0 = 30, hx1 = 60, ty0 = 26, ty1 = 38;
  float *h = ramp_heights(nx, ny);
  static const char *const sets[] = {"water.outflow_border=true", "particles.density_log2=4", NULL};
  talus_domain *d = make_layered(nx, ny, h, sets);
  CHECK(d != NULL, "cave domain");
  if (!d) return free(h);
  talus_tile *t = d->tile;
  add_tunnel_hill(t, hx0, hx1, ty0, ty1);
  talus_kctx c = d->ctx;
  double out = 0.0;
  if (lone_droplet(t, &c, 26, 30, 30, 34, &out)) {
    int64_t floor_ero = col_total(t, 0, 0, hx0, hx1, ty0, ty1);
    int64_t floor_dep = col_total(t, 1, 0, hx0, hx1, ty0, ty1);
    int64_t roof = col_total(t, 2, 1, 0, nx, 0, ny);
    int64_t hill = col_total(t, 2, 0, hx0, hx1, 0, ty0) + col_total(t, 2, 0, hx0, hx1, ty1, ny);
    int64_t ero = col_total(t, 0, 0, 0, nx, 0, ny) + col_total(t, 0, 1, 0, nx, 0, ny);
    int64_t dep = col_total(t, 1, 0, 0, nx, 0, ny) + col_total(t, 1, 1, 0, nx, 0, ny);
    printf("cave: tunnel floor eroded %.4g m3, deposited %.4g m3; roof's top changed %.4g m3, "
           "hill beside the tunnel %.4g m3; eroded %lld = deposited %lld + out %.0f units\n",
           floor_ero / PT_UNIT, floor_dep / PT_UNIT, roof / PT_UNIT, hill / PT_UNIT, (long long)ero,
           (long long)dep, out);
    CHECK(floor_ero > 0, "the droplet eroded the tunnel's floor");
    CHECK(floor_dep > 0 && out == 0.0, "the droplet ended its life in the tunnel");
    CHECK(roof == 0, "the roof's top changed (%lld units)", (long long)roof);
    CHECK(hill == 0, "the hill beside the tunnel changed (%lld units)", (long long)hill);
    CHECK((double)ero == (double)dep + out, "the load is all accounted for");
  } else {
    CHECK(0, "no spawn before the tunnel");
  }
  talus_domain_free(d);
  free(h);
}

/* fBm ground (×10 m) falling 0.05 m per cell along +x, with a thin roof
 * (1.5 m of bedrock, support.min_bedrock 1 m) and a tunnel hill: a
 * layered scene with overhangs. */
static talus_domain *overhang_domain(int nx, int ny, const char *const *sets) {
  float *h = fbm_heights(nx, ny, 13);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[(size_t)y * nx + x] = 10.0f * h[(size_t)y * nx + x] + 0.05f * (float)(nx - x);
  talus_domain *d = make_layered(nx, ny, h, sets);
  free(h);
  if (!d) return NULL;
  add_roof(d->tile, nx / 8, nx / 3, ny / 4, ny / 2, 1.5f);
  add_tunnel_hill(d->tile, nx / 2, nx / 2 + nx / 5, ny / 2, ny / 2 + ny / 6);
  return d;
}

/* The negative control on the overhang scene (tunnel cells in the core):
 * halo R gives the monolithic bytes of every column, R/2 does not. */
static void test_layered_halo(void) {
  static const char *const sets[] = {"particles.density_log2=4", NULL};
  talus_domain *d = overhang_domain(160, 160, sets);
  CHECK(d != NULL, "layered control domain");
  if (d) halo_control(d, "layered");
  talus_domain_free(d);
}

/* The identity of a layered run: eroded (bedrock, sand, and what the
 * floor limit refused) = deposited (into sand, and what the ceilings
 * refused) + outflow + lost, exactly. Returns what was eroded [m³]. */
static double layered_identity(const talus_domain *d, const char *label) {
  double bed = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  double sand = talus_domain_flow(d, TALUS_FLOW_PT_SAND_EROSION);
  double clamp = talus_domain_flow(d, TALUS_FLOW_PT_CLAMP);
  double dep = talus_domain_flow(d, TALUS_FLOW_PT_SAND_DEPOSIT);
  double out = talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW);
  double lost = talus_domain_flow(d, TALUS_FLOW_PT_LOST);
  double river = talus_domain_flow(d, TALUS_FLOW_PT_RIVER);
  double off = bed + sand + clamp - dep - out - lost - river;
  printf("%s: eroded bedrock %.6g + sand %.6g + clamp %.3g = deposited %.6g + outflow %.4g + "
         "lost %.3g + river %.4g (off by %.3g)\n",
         label, bed, sand, clamp, dep, out, lost, river, off);
  CHECK(off == 0.0, "%s: integer identity off by %.3g", label, off);
  return bed + sand;
}

/* Droplets on the overhang scene with rain (the layered pipes' water)
 * for 40 steps, particles.river_depth 0.02 m: droplets reaching that
 * water hand their load to its suspended sediment (before the water
 * stop, 0.05 m, would deposit it); the identity, with the river, holds
 * exactly, nothing is lost and the ledger closes. */
static void test_layered_river(void) {
  const int n = 96;
  static const char *const sets[] = {"particles.density_log2=5",
                                     "water.outflow_border=true",
                                     "horizontal.enable=false",
                                     "sand.slippage=false",
                                     "water.rain=0.05",
                                     "particles.river_depth=0.02",
                                     NULL};
  talus_domain *d = overhang_domain(n, n, sets);
  CHECK(d != NULL, "layered river domain");
  if (!d) return;
  talus_domain_run(d, 40, NULL, NULL);
  layered_identity(d, "layered, rivers");
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double river = talus_domain_flow(d, TALUS_FLOW_PT_RIVER);
  double material = L.initial[TALUS_MAT_BEDROCK] + L.initial[TALUS_MAT_SAND];
  printf("layered, rivers: %.6g m3 handed to the suspended sediment; ledger residual %.3g m3\n",
         river, L.total_residual);
  CHECK(river > 0.0, "layered droplets reached the water");
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_LOST) == 0.0, "nothing lost");
  CHECK(fabs(L.total_residual) <= 1e-9 * fabs(material) + 1e-3, "ledger residual %.3g",
        L.total_residual);
  talus_domain_free(d);
}

/* Droplets on the overhang scene for 40 batches: the identity holds
 * exactly, the float ledger closes, sand and bedrock were eroded and sand
 * deposited, no roof's bedrock goes below its floor, and every column
 * keeps its ceiling above its sand. (pt_clamp here is only what the
 * tunnel's ceiling refused to take as deposits: ≤ 0.) */
static void test_layered_conservation(void) {
  const int n = 96;
  static const char *const sets[] = {"particles.density_log2=5", "water.outflow_border=true",
                                     "horizontal.enable=false", "sand.slippage=false", NULL};
  talus_domain *d = overhang_domain(n, n, sets);
  CHECK(d != NULL, "layered domain");
  if (!d) return;
  talus_domain_run(d, 40, NULL, NULL);
  double ero = layered_identity(d, "layered");
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  const talus_tile *t = d->tile;
  double material = L.initial[TALUS_MAT_BEDROCK] + L.initial[TALUS_MAT_SAND], thin = INFINITY;
  int above = 1;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++) {
        size_t ci = talus_col(t, idx, k);
        if (k > 0) thin = fmin(thin, (double)t->B[ci] - t->C[ci - t->plane]);
        if (k < t->count[idx] - 1) above &= t->B[ci] + t->s[ci] <= t->C[ci];
      }
    }
  double clamp = talus_domain_flow(d, TALUS_FLOW_PT_CLAMP);
  printf("layered: eroded %.5g m3, sand deposited %.5g m3, ledger residual %.3g m3 of %.6g; "
         "thinnest roof %.6g m (limit %g), clamp %.4g m3\n",
         ero, talus_domain_flow(d, TALUS_FLOW_PT_SAND_DEPOSIT), L.total_residual, fabs(material),
         thin, (double)d->ctx.P.min_bedrock, clamp);
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_EROSION) > 0.0, "bedrock eroded");
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_SAND_EROSION) > 0.0, "sand eroded");
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_SAND_DEPOSIT) > 0.0, "sand deposited");
  /* the droplets book their rounding; the other layered stages' float
   * rounding (petrification) is left, as in every layered run */
  CHECK(fabs(L.total_residual) <= 1e-8 * (fabs(material) + ero), "ledger residual %.3g",
        L.total_residual);
  CHECK(thin >= 0.0, "a roof %.6g m thin", thin);
  CHECK(clamp <= 0.0, "the ceilings refused deposits, nothing else (clamp %.3g)", clamp);
  CHECK(above, "sand above a ceiling");
  talus_domain_free(d);
}

/* Thin bedrock over the floor: every cell a cave (5 m high) under a roof
 * of support.min_bedrock + 0.2 m of bedrock whose top is fBm ground (×10 m)
 * falling 0.05 m per cell along +x, no sand: the droplets run on the roofs
 * and reach the floor limit within a few batches. Each droplet takes no
 * more than a column has above the limit (pt_take), so nothing is created:
 * eroded = deposited + outflow exactly with pt_clamp exactly 0, the float
 * ledger closes, the height sum changes by the booked outflow, and most of
 * the erodible rock is gone — the limit was hit hard. */
static void test_floor_limit(void) {
  const int n = 96;
  const float thick = 1.0f + 0.2f; /* support.min_bedrock 1 (make_layered) + 0.2 m */
  static const char *const sets[] = {"particles.density_log2=5", "water.outflow_border=true",
                                     "horizontal.enable=false",  "sand.slippage=false",
                                     "support.min_bedrock=1",    NULL};
  float *h = fbm_heights(n, n, 29);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      h[(size_t)y * n + x] = 10.0f * h[(size_t)y * n + x] + 0.05f * (float)(n - x);
  talus_domain *d = make_layered(n, n, h, sets);
  CHECK(d != NULL, "floor-limit domain");
  if (!d) {
    free(h);
    return;
  }
  talus_tile *t = d->tile;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      float g = h[(size_t)y * n + x] - 5.0f - thick, B[2] = {g, g + 5.0f + thick},
            C[1] = {g + 5.0f};
      set_columns(t, x, y, 2, B, C);
    }
  free(h);
  talus_ledger_summary L0, L;
  talus_domain_ledger(d, &L0);
  double before = 0.0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++) {
        size_t ci = talus_col(t, idx, k);
        before += (double)t->s[ci] + (k ? (double)t->B[ci] - t->C[ci - t->plane] : t->B[ci]);
      }
    }
  talus_domain_run(d, 40, NULL, NULL);
  double ero = layered_identity(d, "floor limit");
  talus_domain_ledger(d, &L);
  double after = 0.0, thin = INFINITY, left = 0.0;
  long at_limit = 0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t idx = talus_idx(t, x, y);
      for (int k = 0; k < t->count[idx]; k++) {
        size_t ci = talus_col(t, idx, k);
        double rock = k ? (double)t->B[ci] - t->C[ci - t->plane] : t->B[ci];
        after += (double)t->s[ci] + rock;
        if (k) {
          thin = fmin(thin, rock);
          left += fmax(0.0, rock - 1.0);
          at_limit += rock <= 1.0 + 1e-3;
        }
      }
    }
  uint64_t fnv =
      1469598103934665603ull; /* of the columns' bytes: -DPT_OWN_TABLE=0 prints the same */
  for (size_t i = 0; i < (size_t)t->nz * t->plane; i++) {
    uint32_t b[2];
    memcpy(&b[0], &t->B[i], 4), memcpy(&b[1], &t->s[i], 4);
    fnv = (fnv ^ b[0]) * 1099511628211ull, fnv = (fnv ^ b[1]) * 1099511628211ull;
  }
  printf("floor limit: columns' hash %016llx\n", (unsigned long long)fnv);
  double clamp = talus_domain_flow(d, TALUS_FLOW_PT_CLAMP);
  double out = talus_domain_flow(d, TALUS_FLOW_PT_OUTFLOW);
  double change = after - before, booked = -out - talus_domain_flow(d, TALUS_FLOW_PT_LOST) +
                                           talus_domain_flow(d, TALUS_FLOW_PT_ROUNDING) +
                                           talus_domain_flow(d, TALUS_FLOW_PT_SAND_ROUNDING);
  printf("floor limit: eroded %.6g m3 (bedrock %.6g), clamp %.3g m3; %ld of %d roofs at the limit, "
         "erodible rock left %.4g of %.4g m3, thinnest roof %.4g m; material change %.6g vs "
         "booked %.6g m3; ledger residual %.3g\n",
         ero, talus_domain_flow(d, TALUS_FLOW_PT_EROSION), clamp, at_limit, n * n, left,
         0.2 * n * n, thin, change, booked, L.total_residual);
  CHECK(clamp == 0.0, "pt_clamp %.3g m3 on the floor-limit scene", clamp);
  CHECK(at_limit >= n * n / 8, "the floor limit was hit: %ld roofs at it", at_limit);
  CHECK(talus_domain_flow(d, TALUS_FLOW_PT_EROSION) > 0.1 * n * n,
        "bedrock eroded %.4g m3 (0.2 m over %d cells)", talus_domain_flow(d, TALUS_FLOW_PT_EROSION),
        n * n);
  CHECK(thin >= 0.0, "a roof %.6g m thin", thin);
  CHECK(fabs(change - booked) <= 1e-9 * (before + ero) + 1e-6, "material changed %.9g, booked %.9g",
        change, booked);
  CHECK(fabs(L.total_residual) <= 1e-8 * (fabs(L0.initial[TALUS_MAT_BEDROCK]) + ero),
        "ledger residual %.3g", L.total_residual);
  talus_domain_free(d);
}

/* The context of domain d at its first step that runs a batch, its
 * tile's droplet totals allocated. */
static talus_kctx first_batch(talus_domain *d) {
  talus_kctx c = d->ctx;
  c.step = 0;
  while (!pt_runs(&c.P, c.step))
    c.step++;
  talus_stage_scratch(d->tile, &c.P, TALUS_STAGE_PT_TRACE);
  return c;
}

/* The CPU stage's droplets (each thread's window of own changes;
 * pt_erode_row8 for heightfield brushes of side <= 8; on heightfields
 * without a river by discharge and with those brushes PT_LANES droplets at a time,
 * pt_gang_run) against the table
 * every droplet keeps on the GPU (k_pt_trace, cell by cell, rows booked
 * as the stage books them): the same totals bit for bit, the same
 * outflow and loss (brush 3 without the death deposit: losses; brush 6:
 * the window's general brush). */
static void window_vs_table(talus_domain *d, const char *label) {
  talus_tile *t = d->tile;
  talus_kctx c = first_batch(d);
  size_t n = pt_planes(&c.P) * (size_t)t->nz * t->plane;
  int64_t *table = malloc(n * sizeof *table);
  double ft[TALUS_FLOW_COUNT] = {0}, fw[TALUS_FLOW_COUNT] = {0};
  memset(t->pt_acc, 0, n * sizeof(int64_t));
  for (int y = 0; y < t->buf.h; y++) {
    double row[TALUS_FLOW_COUNT] = {0};
    for (int x = 0; x < t->buf.w; x++)
      k_pt_trace(t, &c, x, y, row);
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      ft[f] += row[f];
  }
  if (table) memcpy(table, t->pt_acc, n * sizeof *table);
  memset(t->pt_acc, 0, n * sizeof(int64_t));
  talus_cpu_stage(t, &c, TALUS_STAGE_PT_TRACE, (talus_rect){0, 0, t->buf.w, t->buf.h}, fw);
  size_t diff = 0, nonzero = 0;
  for (size_t i = 0; table && i < n; i++)
    diff += table[i] != t->pt_acc[i], nonzero += table[i] != 0;
  int same = memcmp(ft, fw, sizeof ft) == 0;
  printf("%s: %s vs table: %zu of %zu totals differ (%zu nonzero), flows %s (outflow %.6g, "
         "lost %.6g m3)\n",
         label, pt_gang_fits(t, &c) ? "lanes" : "window", diff, n, nonzero,
         same ? "equal" : "differ", fw[TALUS_FLOW_PT_OUTFLOW], fw[TALUS_FLOW_PT_LOST]);
  CHECK(table && diff == 0 && nonzero > 0, "%s: window vs table: %zu totals differ", label, diff);
  CHECK(same, "%s: window vs table: the flows differ", label);
  free(table);
}

static void test_window(void) {
  const int n = 128;
  float *h = fbm_heights(n, n, 41);
  for (int i = 0; i < n * n; i++)
    h[i] *= 20.0f;
  static const char *const r2[] = {"particles.density_log2=4", "water.outflow_border=true", NULL};
  static const char *const r3[] = {"particles.density_log2=4", "particles.brush_radius=3",
                                   "particles.path_length=40", "particles.deposit_at_death=false",
                                   NULL};
  static const char *const r6[] = {"particles.density_log2=5", "particles.brush_radius=6",
                                   "particles.path_length=100", NULL};
  /* then the lanes (pt_gang_run) with a hardness map that varies from node
   * to node (their bilinear hardness), with fewer droplets a band than
   * lanes (idle lanes), and with many a band (the jobs' list grows: bands
   * of >= 2R + 1 = 53 rows of 128 cells, 1 in 4 spawns) */
  static const char *const few[] = {"particles.density_log2=10", "particles.path_length=20", NULL};
  static const char *const dense[] = {"particles.density_log2=2", "particles.path_length=20",
                                      "water.outflow_border=true", NULL};
  /* and a river by depth (pt_gang_river, the DEM preset's): pools over
   * the lower nodes (set_pools), droplets ending in them hand their load
   * to the river plane, compared too */
  static const char *const river[] = {"particles.density_log2=4", "particles.path_length=40",
                                      "particles.river_depth=0.5", NULL};
  static const struct {
    const char *const *sets;
    const char *name;
    int lanes; /* 1: a hardness map, and the lanes must run the case; 2: and pools */
  } cases[] = {{r2, "window r 2", 0},          {r3, "window r 3", 0},
               {r6, "window r 6", 0},          {r2, "lanes hardness map", 1},
               {few, "lanes few droplets", 1}, {dense, "lanes dense", 1},
               {river, "lanes river", 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    talus_domain *d = make_domain(n, n, h, cases[i].sets);
    int ok = d != NULL && (!cases[i].lanes || d->tile->hard != NULL);
    CHECK(ok, "%s domain", cases[i].name);
    if (!ok) {
      talus_domain_free(d);
      continue;
    }
    talus_tile *t = d->tile;
    for (int y = 0; cases[i].lanes && y < t->buf.h; y++)
      for (int x = 0; x < t->buf.w; x++)
        t->hard[talus_idx(t, x, y)] = 0.6f * talus_hash_unit(7u, x, y, 0, 5u);
    if (cases[i].lanes == 2) set_pools(t, 0.4f, 0);
    if (cases[i].lanes) {
      talus_kctx c = first_batch(d);
      CHECK(pt_gang_fits(t, &c), "%s: the lanes run this case", cases[i].name);
    }
    window_vs_table(d, cases[i].name);
    if (cases[i].lanes == 2) { /* the river plane holds what was handed over */
      int64_t handed = 0;
      for (size_t k = 0; k < t->plane; k++)
        handed += t->pt_acc[pt_plane(t, PT_TOTAL_RIVER, 0) + k];
      printf("%s: %.6g m3 handed to the river\n", cases[i].name, (double)handed / PT_UNIT);
      CHECK(handed > 0, "%s: droplets reached the pools", cases[i].name);
    }
    talus_domain_free(d);
  }
  /* NoData discs: brushes beside them weigh their nodes 0 (the 8-lane
   * rows' mask words), droplets reaching them stop at a border */
  static const char *const base[] = {"simulation.model=heightfield", "heightfield.hydraulic=false",
                                     "particles.enable=true", "thermal.hardness=0", NULL};
  uint8_t *mask = calloc((size_t)n * n, 1);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      for (int k = 0; k < 5; k++) {
        int cx = 20 + 23 * k, cy = 100 - 17 * k, dx = x - cx, dy = y - cy;
        if (dx * dx + dy * dy <= 16 + 4 * k) mask[(size_t)y * n + x] = 1;
      }
  talus_domain *d = domain_with(base, n, n, h, mask, r2);
  CHECK(d != NULL, "masked window domain");
  if (d) window_vs_table(d, "window NoData"), talus_domain_free(d);
  free(mask);
  d = overhang_domain(n, n, r2);
  CHECK(d != NULL, "layered window domain");
  if (d) window_vs_table(d, "window layered"), talus_domain_free(d);
  free(h);
}

/* The CPU's row loops of pt_clear and pt_apply on heightfields (memsets
 * a plane; pt_apply_hf_at without the per-cell model and river tests),
 * with the river on or off (pt_kinds, pt_planes: the tile then holds no
 * river plane), against the
 * per-cell bodies k_pt_clear and k_pt_apply, over a region that is not
 * the buffer and a book that is not the region: the same totals zeroed
 * and no other, the same heights and suspended sediment bit for bit, the
 * same flows (rows in x order, summed in y order, as the stage books
 * them); and the booked cells' height change is minus their net erosion
 * + the booked rounding (the ledger closes on them), river load included. */
static void test_apply_rows(int river) {
  const int n = 96;
  float *h = fbm_heights(n, n, 43);
  for (int i = 0; i < n * n; i++)
    h[i] *= 20.0f;
  /* the river on (no droplet reaches water 1 km deep: its plane is
   * written below) or off (the tile holds no river plane: pt_planes) */
  const char *sets[] = {"particles.density_log2=4", "water.outflow_border=true",
                        river ? "particles.river_depth=1000" : NULL, NULL};
  talus_domain *d = make_domain(n, n, h, sets);
  CHECK(d != NULL, "apply rows domain");
  if (!d) return free(h);
  talus_tile *t = d->tile;
  talus_kctx c = first_batch(d);
  size_t np = pt_planes(&c.P) * (size_t)t->nz * t->plane, plane = t->plane;
  talus_rect all = {0, 0, t->buf.w, t->buf.h};
  talus_rect region = {5, 7, t->buf.w - 11, t->buf.h - 13}, book = {9, 10, 30, 40};
  double junk[TALUS_FLOW_COUNT];
  /* pt_clear: a plane of nonzero totals, zeroed by the bodies and by the stage */
  int64_t *ref = malloc(np * sizeof *ref);
  float *B0 = malloc(plane * sizeof *B0), *r0 = malloc(plane * sizeof *r0);
  float *Bref = malloc(plane * sizeof *Bref), *rref = malloc(plane * sizeof *rref);
  for (size_t i = 0; i < np; i++)
    t->pt_acc[i] = (int64_t)i + 1;
  for (int y = region.y0; y < region.y0 + region.h; y++)
    for (int x = region.x0; x < region.x0 + region.w; x++)
      k_pt_clear(t, &c, x, y, junk);
  memcpy(ref, t->pt_acc, np * sizeof *ref);
  for (size_t i = 0; i < np; i++)
    t->pt_acc[i] = (int64_t)i + 1;
  talus_cpu_stage(t, &c, TALUS_STAGE_PT_CLEAR, region, junk);
  size_t cleared = 0, diff = 0;
  for (size_t i = 0; i < np; i++)
    cleared += t->pt_acc[i] == 0, diff += t->pt_acc[i] != ref[i];
  int kinds = pt_kinds(&c.P);
  printf("pt_clear rows, river %s: %zu totals zeroed (region %d x %d, %d kinds), %zu differ from "
         "the body\n",
         river ? "on" : "off", cleared, region.w, region.h, kinds, diff);
  /* heightfields: net erosion, and the river's plane with the river on */
  CHECK(kinds == (river ? 3 : 1), "pt_clear rows: kinds %#x with the river %d", kinds, river);
  /* and the tile holds those planes alone: 8 bytes a cell, 16 with the river */
  CHECK(pt_planes(&c.P) == (river ? 2 : 1), "pt_clear rows: %d planes with the river %d",
        pt_planes(&c.P), river);
  CHECK(diff == 0 && cleared == (size_t)__builtin_popcount((unsigned)kinds) * region.w * region.h,
        "pt_clear rows: %zu zeroed, %zu differ", cleared, diff);
  /* pt_apply: a batch's totals, river totals on every 5th cell */
  memset(t->pt_acc, 0, np * sizeof(int64_t));
  talus_cpu_stage(t, &c, TALUS_STAGE_PT_TRACE, all, junk);
  for (size_t i = 0; i < plane; i++)
    if (river && i % 5 == 0)
      t->pt_acc[pt_plane(t, PT_TOTAL_RIVER, 0) + i] = (int64_t)(i % 97 + 1) << 22;
  memcpy(B0, t->B, plane * sizeof *B0), memcpy(r0, t->r, plane * sizeof *r0);
  double fref[TALUS_FLOW_COUNT] = {0}, fcpu[TALUS_FLOW_COUNT] = {0}, net = 0.0, ero = 0.0;
  for (int y = book.y0; y < book.y0 + book.h; y++) /* the booked cells' net erosion */
    for (int x = book.x0; x < book.x0 + book.w; x++) {
      int64_t v = t->pt_acc[pt_plane(t, PT_TOTAL_EROSION, 0) + talus_idx(t, x, y)];
      net += (double)v / PT_UNIT, ero += v > 0 ? (double)v / PT_UNIT : 0.0;
    }
  for (int y = region.y0; y < region.y0 + region.h; y++) {
    double row[TALUS_FLOW_COUNT] = {0};
    for (int x = region.x0; x < region.x0 + region.w; x++) {
      int in = x >= book.x0 && x < book.x0 + book.w && y >= book.y0 && y < book.y0 + book.h;
      k_pt_apply(t, &c, x, y, in ? row : junk);
    }
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      fref[f] += row[f];
  }
  memcpy(Bref, t->B, plane * sizeof *Bref), memcpy(rref, t->r, plane * sizeof *rref);
  memcpy(t->B, B0, plane * sizeof *B0), memcpy(t->r, r0, plane * sizeof *r0);
  talus_cpu_stage_booked(t, &c, TALUS_STAGE_PT_APPLY, region, book, fcpu);
  int sameB = memcmp(t->B, Bref, plane * sizeof *Bref) == 0;
  int samer = memcmp(t->r, rref, plane * sizeof *rref) == 0;
  int samef = memcmp(fref, fcpu, sizeof fref) == 0;
  double dB = 0.0, dr = 0.0;
  size_t changed = 0;
  for (int y = book.y0; y < book.y0 + book.h; y++)
    for (int x = book.x0; x < book.x0 + book.w; x++) {
      size_t i = talus_idx(t, x, y);
      dB += (double)t->B[i] - (double)B0[i], dr += (double)t->r[i] - (double)r0[i];
      changed += t->B[i] != B0[i];
    }
  double want = -net + fcpu[TALUS_FLOW_PT_ROUNDING];
  double handed = fcpu[TALUS_FLOW_PT_RIVER] + fcpu[TALUS_FLOW_PT_RIVER_ROUND];
  printf("pt_apply rows, river %s: heights %s, sediment %s, flows %s; booked %zu cells changed, "
         "dB %.9g m (flows %.9g), river %.9g m (flows %.9g)\n",
         river ? "on" : "off", sameB ? "equal" : "differ", samer ? "equal" : "differ",
         samef ? "equal" : "differ", changed, dB, want, dr, handed);
  CHECK(sameB && samer && samef, "pt_apply rows: the CPU loop differs from the body");
  CHECK(changed > (size_t)book.w * book.h / 2, "pt_apply rows: %zu booked cells changed", changed);
  CHECK(fabs(dB - want) <= 1e-9 * (ero + 1e-12),
        "pt_apply rows: height change %.9g against the totals' %.9g", dB, want);
  CHECK(fcpu[TALUS_FLOW_PT_EROSION] == 0.0 && fcpu[TALUS_FLOW_PT_DEPOSIT] == 0.0,
        "pt_apply rows: the droplets book their erosion, not pt_apply");
  if (river)
    CHECK(handed > 0.0 && fabs(dr - handed) <= 1e-9 * handed,
          "pt_apply rows: river %.9g against %.9g", dr, handed);
  else /* the river plane's totals are not read */
    CHECK(handed == 0.0 && dr == 0.0, "pt_apply rows: river %.9g (%.9g) without the river", handed,
          dr);
  /* nothing outside the region moved */
  size_t outside = 0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      int in =
          x >= region.x0 && x < region.x0 + region.w && y >= region.y0 && y < region.y0 + region.h;
      size_t i = talus_idx(t, x, y);
      outside += !in && (t->B[i] != B0[i] || t->r[i] != r0[i]);
    }
  CHECK(outside == 0, "pt_apply rows: %zu cells outside the region changed", outside);
  free(ref), free(B0), free(r0), free(Bref), free(rref), free(h);
  talus_domain_free(d);
}

/* Droplets with the layered pipes (rain, transport, vertical and
 * horizontal erosion) on the overhang scene: tiles {37, 64} × K {1, 2},
 * 1 and 2 threads, a disk store and a run resumed from it give the
 * monolithic bytes, and the identity holds exactly. */
static void test_layered_tiled(void) {
  const int nx = 140, ny = 100, steps = 6;
  static const char *const sets[] = {"particles.density_log2=5",  "particles.path_length=12",
                                     "water.outflow_border=true", "water.rain=0.5",
                                     "water.evaporation=0.01",    NULL};
  talus_domain *d = overhang_domain(nx, ny, sets);
  CHECK(d != NULL, "layered tiled domain");
  if (!d) return;
  check_invariance(d, steps, "layered");
  printf("layered tiled: %d cells of several columns, water %.4g m3 added\n",
         multi_column_cells(d->tile), talus_domain_flow(d, TALUS_FLOW_RAIN));
  CHECK(multi_column_cells(d->tile) > 0, "the scene keeps overhangs");
  CHECK(talus_domain_flow(d, TALUS_FLOW_RAIN) > 0.0, "rain fell: the pipes ran");
  CHECK(layered_identity(d, "layered tiled") > 0.0, "droplets eroded");
  talus_domain_free(d);
}

/* ------------------------------------------------------------------ */
/* Statistics against serial droplets                                  */

/* The serial reference: one droplet at a time, each changing the map at
 * once, in float; the droplet of the notes atop kernels/particles.h
 * written again here (positions as floats, float shares), walls at the
 * map's edge. */
typedef struct serial_map {
  int n;
  float *h;
  double eroded;
} serial_map;

/* Bilinear height at (px, py), gradient to g when not NULL. */
static float serial_sample(const serial_map *m, float px, float py, float *g) {
  int ix = (int)px, iy = (int)py, n = m->n;
  float fx = px - (float)ix, fy = py - (float)iy;
  const float *r0 = m->h + (size_t)iy * n + ix, *r1 = r0 + n;
  if (g) {
    g[0] = (r0[1] - r0[0]) * (1 - fy) + (r1[1] - r1[0]) * fy;
    g[1] = (r1[0] - r0[0]) * (1 - fx) + (r1[1] - r0[1]) * fx;
  }
  return (r0[0] * (1 - fx) + r0[1] * fx) * (1 - fy) + (r1[0] * (1 - fx) + r1[1] * fx) * fy;
}

static void serial_deposit(serial_map *m, float px, float py, float amt) {
  int ix = (int)px, iy = (int)py, n = m->n;
  float fx = px - (float)ix, fy = py - (float)iy;
  float *r0 = m->h + (size_t)iy * n + ix, *r1 = r0 + n;
  r0[0] += amt * (1 - fx) * (1 - fy), r0[1] += amt * fx * (1 - fy);
  r1[0] += amt * (1 - fx) * fy, r1[1] += amt * fx * fy;
}

/* Cone brush of radius r around (px, py), normalised over the map's nodes. */
static void serial_erode(serial_map *m, float px, float py, float amt, int r) {
  int ix = (int)px, iy = (int)py;
  float w[(2 * PT_BRUSH_MAX + 2) * (2 * PT_BRUSH_MAX + 2)], W = 0.0f;
  int k = 0;
  for (int y = iy - r; y <= iy + r + 1; y++)
    for (int x = ix - r; x <= ix + r + 1; x++, k++) {
      float dx = (float)x - px, dy = (float)y - py, c = (float)r - sqrtf(dx * dx + dy * dy);
      w[k] = x >= 0 && y >= 0 && x < m->n && y < m->n && c > 0.0f ? c : 0.0f;
      W += w[k];
    }
  k = 0;
  for (int y = iy - r; y <= iy + r + 1; y++)
    for (int x = ix - r; x <= ix + r + 1; x++, k++)
      if (w[k] > 0.0f) m->h[(size_t)y * m->n + x] -= amt * w[k] / W;
  m->eroded += amt;
}

/* One droplet from (px, py) to its end. */
static void serial_droplet(serial_map *m, const talus_kparams *P, float px, float py, uint32_t h) {
  float dx = 0, dy = 0, v = P->pt_initial_speed, w = P->pt_initial_water, s = 0, g[2];
  for (int k = 0; k < P->pt_max_moves; k++) {
    float h0 = serial_sample(m, px, py, g);
    dx = P->pt_inertia * dx - (1 - P->pt_inertia) * g[0];
    dy = P->pt_inertia * dy - (1 - P->pt_inertia) * g[1];
    float len = sqrtf(dx * dx + dy * dy), a = (float)((h + k) % 360u) * 0.0174533f;
    dx = len > 1e-12f ? dx / len : cosf(a), dy = len > 1e-12f ? dy / len : sinf(a);
    float nx = px + dx, ny = py + dy;
    if (nx < 0 || ny < 0 || nx >= m->n - 1 || ny >= m->n - 1) break; /* a wall */
    float dh = serial_sample(m, nx, ny, NULL) - h0;
    /* the law of kernels/particles.h in metres: slope −Δh/l_c, shares per move */
    float cap = fmaxf(-dh / P->cell_size, P->pt_min_slope) * v * w * P->pt_capacity;
    if (dh > 0 || s > cap) {
      float amt = dh > 0 ? fminf(dh, s) : P->pt_deposit_move * (s - cap);
      serial_deposit(m, px, py, amt), s -= amt;
    } else {
      float amt = fminf(P->pt_erode_move * (cap - s), -dh);
      serial_erode(m, px, py, amt, P->pt_brush_radius), s += amt;
    }
    v = sqrtf(fmaxf(0.0f, v * v - P->pt_gravity * dh));
    w = w * (1 - P->pt_evap_move) + P->pt_gain_move;
    px = nx, py = ny;
  }
  serial_deposit(m, px, py, s);
}

/* The droplets of `steps` batches, one at a time in (step, y, x) order,
 * from the batch's spawn cells and offsets. */
static void serial_run(serial_map *m, const talus_kparams *P, int steps) {
  for (int t = 0; t < steps; t++)
    for (int y = 0; y < m->n - 1; y++)
      for (int x = 0; x < m->n - 1; x++) {
        if (talus_hash(P->seed, x, y, (uint64_t)t, PT_STREAM) >> (32 - P->pt_density_log2))
          continue;
        uint32_t o = talus_hash(P->seed, x, y, (uint64_t)t, PT_STREAM + 1u);
        float fx = (float)(o & 0xFFFFu) / 65536.0f, fy = (float)(o >> 16) / 65536.0f;
        serial_droplet(m, P, (float)x + fx, (float)y + fy, o);
      }
}

/* What the comparison measures of a map h (n², heights after) against
 * h0 (before): the 4-neighbour Laplacian's σ, pits (interior cells below
 * all 8 neighbours), cells lowered more than `cut`. */
typedef struct map_stats {
  double lap_sigma;
  int pits, channel;
} map_stats;

static map_stats measure(const float *h0, const float *h, int n, double cut) {
  map_stats s = {0, 0, 0};
  double sum = 0, sum2 = 0;
  int cells = 0;
  for (int y = 1; y < n - 1; y++)
    for (int x = 1; x < n - 1; x++) {
      size_t i = (size_t)y * n + x;
      double lap = (double)h[i - 1] + h[i + 1] + h[i - n] + h[i + n] - 4.0 * h[i];
      sum += lap, sum2 += lap * lap, cells++;
      int pit = 1;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          pit &= (dx == 0 && dy == 0) || h[i + (ptrdiff_t)dy * n + dx] > h[i];
      s.pits += pit;
      s.channel += h[i] - h0[i] < cut;
    }
  s.lap_sigma = sqrt(sum2 / cells - (sum / cells) * (sum / cells));
  return s;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Correlation of the changes h − h0 of two maps. */
static double change_correlation(const float *h0, const float *a, const float *b, size_t n) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (size_t i = 0; i < n; i++) {
    double u = a[i] - h0[i], v = b[i] - h0[i];
    sa += u, sb += v, saa += u * u, sbb += v * v, sab += u * v;
  }
  double cov = sab / n - sa / n * sb / n;
  return cov / sqrt((saa / n - sa / n * sa / n) * (sbb / n - sb / n * sb / n));
}

/* 2 droplets per cell on 256² fBm (erodr's parameters) as batches of
 * density 2^-log2 and serially; 1 when every figure is within the
 * reference's bounds (§5: eroded ±2 %, Laplacian σ ±5 %, pits ±12 %,
 * channel cells ±6 %, correlation of the changes ≥ 0.98 — the channel
 * cut is the 5th percentile of the serial change). */
static int statistics_agree(int log2) {
  const int n = 256, steps = 2 << log2;
  char dens[64];
  snprintf(dens, sizeof dens, "particles.density_log2=%d", log2);
  const char *sets[] = {dens, "particles.min_slope=0.0001", NULL};
  float *h0 = fbm_heights(n, n, 21), *hb = malloc((size_t)n * n * 4),
        *hs = malloc((size_t)n * n * 4);
  talus_domain *d = make_domain(n, n, h0, sets);
  if (!d || !hb || !hs) return -1;
  talus_domain_run(d, steps, NULL, NULL);
  read_heights(d, hb);
  double eb = talus_domain_flow(d, TALUS_FLOW_PT_EROSION);
  serial_map m = {n, hs, 0.0};
  memcpy(hs, h0, (size_t)n * n * 4);
  serial_run(&m, &d->ctx.P, steps);
  float *dz = malloc((size_t)n * n * 4);
  for (size_t i = 0; i < (size_t)n * n; i++)
    dz[i] = hs[i] - h0[i];
  qsort(dz, (size_t)n * n, 4, cmp_float);
  double cut = dz[(size_t)n * n / 20];
  map_stats b = measure(h0, hb, n, cut), s = measure(h0, hs, n, cut);
  double corr = change_correlation(h0, hb, hs, (size_t)n * n);
  double de = eb / m.eroded - 1, dl = b.lap_sigma / s.lap_sigma - 1;
  double dp = (double)b.pits / s.pits - 1, dc = (double)b.channel / s.channel - 1;
  printf("statistics at 2^-%d (%d batches): eroded %.5g vs serial %.5g (%+.1f %%), Laplacian "
         "sigma %+.1f %%, pits %d vs %d (%+.1f %%), channel cells %d vs %d (%+.1f %%), "
         "correlation of the changes %.4f\n",
         log2, steps, eb, m.eroded, 100 * de, 100 * dl, b.pits, s.pits, 100 * dp, b.channel,
         s.channel, 100 * dc, corr);
  free(dz), free(hb), free(hs), free(h0);
  talus_domain_free(d);
  return fabs(de) <= 0.02 && fabs(dl) <= 0.05 && fabs(dp) <= 0.12 && fabs(dc) <= 0.06 &&
         corr >= 0.98;
}

/* At the default density the batch is serial droplets, statistically; at
 * 2^-4 it is not, and the same test says so. */
static void test_statistics(void) {
  CHECK(statistics_agree(8) == 1, "2^-8: the batch departs from serial droplets");
  CHECK(statistics_agree(4) == 0, "2^-4: the comparison must fail (the test can fail)");
}

int main(void) {
  omp_set_num_threads(2);
  test_conservation();
  test_combined();
  test_spinup();
  test_tiled();
  test_halo_control();
  test_seeds();
  test_plane();
  test_river();
  test_river_diagonal();
  test_river_ledger();
  test_valley();
  test_base_level();
  test_basin();
  test_hardness();
  test_roof();
  test_cave();
  test_layered_conservation();
  test_layered_river();
  test_floor_limit();
  test_layered_halo();
  test_layered_tiled();
  test_window();
  test_apply_rows(1);
  test_apply_rows(0);
  test_statistics();
  return check_report("test_particles");
}
