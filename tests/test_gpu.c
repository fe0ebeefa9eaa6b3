/*
 * test_gpu — the CUDA backend against the CPU backend and against itself.
 *
 *  1. Every preset on its scene, N steps on the CPU and on the GPU: the
 *     kernel bodies are the same and both builds round alike (no FMA
 *     contraction, IEEE division and square root, no libm transcendental:
 *     tanh is talus_tanhf), so the two differ where the CPU flushes
 *     denormals to zero and the GPU keeps them, and the dynamics spread
 *     those last bits (on an H100, 2026-11-25, every case below came out
 *     bitwise equal all the same). Stated tolerances: every material's
 *     volume within GPU_VOLUME_TOL (relative to the total material) and the
 *     mean |Δ surface| within GPU_SURFACE_TOL of the relief.
 *  2. GPU tiled == GPU monolithic, bit for bit (layered with everything on;
 *     heightfield with thermal), as on the CPU, by both paths of a tiled
 *     GPU run: tiles resident on the device (strips copied there) and the
 *     host-staged pipeline (two slots, asynchronous transfers); both book
 *     the ledger of the run that advances one tile at a time, bit for bit.
 *  3. The mass ledger closes on the GPU as on the CPU (test_rivers_ledger's
 *     bounds).
 *
 * Without a CUDA build or a usable GPU the test reports itself skipped.
 */
#include "check.h"
#include "kernels/cuda/cuda.h"
#include "mpi/ranks.h"
#include "scene_fixture.h"
#include "tiled_fixture.h"

#define GPU_VOLUME_TOL  1e-6 /* |ΔV_material| / V_total */
#define GPU_SURFACE_TOL 1e-5 /* mean |Δ surface| / relief */

typedef struct preset_case {
  const char *scene, *preset;
  int n, steps;
  const char *const *sets; /* --set overrides, NULL-terminated, or NULL */
} preset_case;

/* The DEM presets erode only after their 1500-step spin-up: start early. */
static const char *const carve_early[] = {"erosion.spinup=100", NULL};
static const char *const four_neighbours[] = {"sand.neighbours=4", NULL};
static const char *const masks_on[] = {"simulation.masks=true", NULL};
/* rivers-rain's rain stops at step 150 and the water dries out (evaporation). */
static const char *const dry_out[] = {"water.rain_steps=150", "simulation.masks=true", NULL};

static const preset_case cases[] = {
    {"bridges", "bridges", 128, 300, NULL},
    {"chasm-rain", "chasm-rain", 128, 300, NULL},
    {"chasm-source", "chasm-source", 128, 300, NULL},
    {"arches", "arches", 128, 300, NULL},
    {"cave", "cave", 128, 300, NULL},
    {"rivers-rain", "rivers-rain", 128, 300, NULL},
    {"rivers-source", "rivers-source", 128, 300, NULL},
    {"noise", "dem-default", 128, 300, carve_early},
    {"noise", "game-terrain", 128, 300, NULL},
    {"rivers-rain", "heightfield-default", 256, 500, NULL},
    {"rivers-rain", "dem-heightfield", 256, 500, carve_early},
    {"chasm-source", "chasm-source", 128, 300, four_neighbours},
    {"noise", "thermal-only", 128, 300, NULL},
    {"rivers-rain", "rivers-rain", 128, 400, dry_out},
    {"chasm-rain", "chasm-rain", 128, 300, masks_on},
    {"rivers-rain", "particles", 128, 300, NULL},
    {"cave", "particles-game", 128, 300, NULL},
};

static talus_domain *preset_domain(const preset_case *pc, talus_device device) {
  talus_domain *d = fixture_domain(pc->scene, pc->n, pc->preset, pc->sets);
  if (d && talus_domain_set_device(d, device, NULL, 0)) {
    fprintf(stderr, "set device: %s\n", talus_last_error());
    talus_domain_free(d);
    d = NULL;
  }
  return d;
}

static double surface_relief(const float *s, size_t n) {
  float lo = s[0], hi = s[0];
  for (size_t i = 1; i < n; i++) {
    lo = s[i] < lo ? s[i] : lo;
    hi = s[i] > hi ? s[i] : hi;
  }
  return hi - lo > 1e-6f ? hi - lo : 1.0;
}

/* The run accumulators (simulation.masks) of both backends agree within
 * GPU_SURFACE_TOL of their total; prints how many values differ at all. */
static void check_accumulators(const preset_case *pc, const talus_tile *a, const talus_tile *b) {
  if (!a->acc) return;
  CHECK(b->acc != NULL, "%s: the GPU run kept the accumulators", pc->preset);
  if (!b->acc) return;
  double sum = 0.0, diff = 0.0;
  size_t differ = 0, n = (size_t)TALUS_ACC_PLANES * a->plane;
  for (size_t i = 0; i < n; i++) {
    sum += fabs((double)a->acc[i]);
    diff += fabs((double)a->acc[i] - (double)b->acc[i]);
    differ += memcmp(&a->acc[i], &b->acc[i], sizeof a->acc[i]) != 0;
  }
  printf("%-14s %-20s accumulators: %zu of %zu values differ, sum |d| %.3g of %.3g\n", pc->scene,
         pc->preset, differ, n, diff, sum);
  CHECK(sum > 0.0 && diff <= GPU_SURFACE_TOL * sum, "%s: accumulators differ by %.3g of %.3g",
        pc->preset, diff, sum);
}

/* Runs one preset on both backends and checks they agree within the
 * stated tolerances; prints the measured differences. */
static void check_preset(const preset_case *pc) {
  talus_domain *cpu = preset_domain(pc, TALUS_DEVICE_CPU);
  talus_domain *gpu = preset_domain(pc, TALUS_DEVICE_CUDA);
  CHECK(cpu && gpu, "%s/%s: domains built", pc->scene, pc->preset);
  if (!cpu || !gpu) goto done;
  double t0 = talus_now();
  CHECK(talus_domain_run(cpu, pc->steps, NULL, NULL) == TALUS_OK, "cpu run: %s",
        talus_last_error());
  double t1 = talus_now();
  CHECK(talus_domain_run(gpu, pc->steps, NULL, NULL) == TALUS_OK, "gpu run: %s",
        talus_last_error());
  double t2 = talus_now();
  size_t n = (size_t)pc->n * pc->n;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  talus_domain_read(cpu, TALUS_FIELD_SURFACE, 0, a);
  talus_domain_read(gpu, TALUS_FIELD_SURFACE, 0, b);
  double sum = 0.0, worst = 0.0;
  size_t same = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)b[i]);
    sum += e;
    worst = e > worst ? e : worst;
    same += !memcmp(&a[i], &b[i], sizeof a[i]);
  }
  double relief = surface_relief(a, n);
  double va[TALUS_MAT_COUNT], vb[TALUS_MAT_COUNT], total = 0.0, dv = 0.0;
  talus_domain_volumes(cpu, va);
  talus_domain_volumes(gpu, vb);
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    total += fabs(va[m]);
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    dv = fabs(va[m] - vb[m]) > dv ? fabs(va[m] - vb[m]) : dv;
  printf("%-14s %-20s%s %4d² %4d steps: surface bitwise-equal %5.1f%%, mean |d| %.3g m, max |d| "
         "%.3g m (relief %.3g m), max dV/V %.3g; cpu %.2f s, gpu %.2f s\n",
         pc->scene, pc->preset, pc->sets ? " (+set)" : "", pc->n, pc->steps, 100.0 * same / n,
         sum / n, worst, relief, dv / total, t1 - t0, t2 - t1);
  CHECK(sum / n <= GPU_SURFACE_TOL * relief, "%s: mean |d surface| %.3g vs relief %.3g", pc->preset,
        sum / n, relief);
  CHECK(dv <= GPU_VOLUME_TOL * total, "%s: volume difference %.3g of %.3g", pc->preset, dv, total);
  check_accumulators(pc, cpu->tile, gpu->tile);
  free(a);
  free(b);
done:
  talus_domain_free(cpu);
  talus_domain_free(gpu);
}

/* A warmed-up state of `preset` on `scene` (CPU), for the tiling checks. */
static talus_domain *warm_domain(const char *scene, const char *preset, const char *const *sets,
                                 int n, int steps) {
  talus_domain *d = fixture_domain(scene, n, preset, sets);
  if (d && talus_domain_run(d, steps, NULL, NULL)) {
    talus_domain_free(d);
    return NULL;
  }
  return d;
}

/* GPU tiled runs give the GPU monolithic run's bytes. */
static void check_tiled(const char *scene, const char *preset, const char *const *sets, int n) {
  talus_domain *d = warm_domain(scene, preset, sets, n, 60);
  CHECK(d != NULL, "%s: warm state", preset);
  if (!d) return;
  talus_kctx ctx = d->ctx;
  ctx.backend = TALUS_BACKEND_CUDA;
  talus_tile *mono = fixture_clone(d->tile);
  talus_run_stats stats;
  memset(&stats, 0, sizeof stats);
  talus_kctx run = ctx;
  int steps = 12;
  CHECK(talus_tiler_advance(mono, &run, mono->buf, steps, &stats, NULL, NULL) == TALUS_OK,
        "gpu monolithic: %s", talus_last_error());
  /* K 10 outlasts a slot's batch of 8 queued steps (cuda.cu); 12 steps
   * end with a shorter generation at K 5 and 10. */
  static const int layouts[][2] = {{37, 1}, {64, 2}, {100, 3}, {64, 5}, {64, 10}};
  for (int i = 0; i < 5; i++) {
    int core = layouts[i][0], K = layouts[i][1];
    double res[TALUS_FLOW_COUNT], piped[TALUS_FLOW_COUNT], serial[TALUS_FLOW_COUNT];
    fixture_gpu_resident = TALUS_TILED_GPU_RESIDENT_ON;
    long dres = fixture_tiled_diff(d->tile, mono, &ctx, core, K, ctx.step + steps,
                                   TALUS_STORE_MEMORY, NULL, res);
    int used = fixture_gpu_resident_used;
    fixture_gpu_resident = TALUS_TILED_GPU_RESIDENT_OFF;
    long diff = fixture_tiled_diff(d->tile, mono, &ctx, core, K, ctx.step + steps,
                                   TALUS_STORE_MEMORY, NULL, piped);
    fixture_gpu_resident = TALUS_TILED_GPU_RESIDENT_AUTO;
    fixture_tile_by_tile = 1;
    long diff1 = fixture_tiled_diff(d->tile, mono, &ctx, core, K, ctx.step + steps,
                                    TALUS_STORE_MEMORY, NULL, serial);
    fixture_tile_by_tile = 0;
    printf("%s: gpu tiled core %d K %d vs gpu monolithic: %ld differing values (resident), %ld "
           "(host-staged pipeline), %ld (tile by tile)\n",
           preset, core, K, dres, diff, diff1);
    CHECK(used, "%s core %d K %d: the tiles stayed resident on the GPU", preset, core, K);
    CHECK(dres == 0 && diff == 0 && diff1 == 0, "%s core %d K %d: %ld, %ld, %ld values differ",
          preset, core, K, dres, diff, diff1);
    CHECK(diff1 == 0 && memcmp(piped, serial, sizeof piped) == 0,
          "%s core %d K %d: the pipelined ledger differs from the tile-by-tile one", preset, core,
          K);
    CHECK(diff1 == 0 && memcmp(res, serial, sizeof res) == 0,
          "%s core %d K %d: the resident ledger differs from the tile-by-tile one", preset, core,
          K);
  }
  /* The default (AUTO) keeps these small grids on the device; a run in
   * two calls goes through the store between them. */
  double res[TALUS_FLOW_COUNT];
  fixture_run_parts = 2;
  long dsplit = fixture_tiled_diff(d->tile, mono, &ctx, 64, 5, ctx.step + steps, TALUS_STORE_MEMORY,
                                   NULL, res);
  fixture_run_parts = 1;
  printf("%s: gpu tiled core 64 K 5, two runs of 6 steps, residency auto (%s): %ld differing "
         "values\n",
         preset, fixture_gpu_resident_used ? "resident" : "host-staged", dsplit);
  CHECK(fixture_gpu_resident_used && dsplit == 0, "%s: split resident run: %ld values differ",
        preset, dsplit);
  talus_tile_free(mono);
  talus_domain_free(d);
}

/* Blocks packed on the device are halo_block_cut's bytes: the whole tile,
 * an inner rectangle, one cell and a corner, with and without hardness. */
static void check_pack(const char *scene, const char *preset, const char *const *sets) {
  talus_domain *d = warm_domain(scene, preset, sets, 96, 40);
  CHECK(d != NULL, "%s: warm state", preset);
  if (!d) return;
  const talus_tile *t = d->tile;
  talus_rect r[4] = {t->buf, {3, 5, 17, 9}, {40, 41, 1, 1}, {t->buf.w - 7, t->buf.h - 4, 7, 4}};
  int layers[4] = {0};
  const void *body[4] = {0};
  talus_status st = talus_cuda_use_slot(1);
  if (!st) st = talus_cuda_upload(t);
  if (!st) st = talus_cuda_block_layers(r, 4, layers);
  if (!st) st = talus_cuda_pack_blocks(r, layers, 4, body);
  CHECK(st == TALUS_OK, "%s: device pack: %s", preset, talus_last_error());
  for (int i = 0; i < 4 && !st; i++) {
    unsigned char *ref = NULL;
    size_t n = 0, bytes = halo_block_bytes(r[i].w, r[i].h, layers[i], HALO_TILE_FLAGS(t));
    unsigned char head[HALO_HEADER_BYTES];
    halo_block_header(head, r[i], layers[i], HALO_TILE_FLAGS(t));
    CHECK(halo_block_cut(t, r[i], (void **)&ref, &n) == TALUS_OK, "host cut");
    int same = ref && n == bytes && !memcmp(ref, head, HALO_HEADER_BYTES) &&
               !memcmp(ref + HALO_HEADER_BYTES, body[i], n - HALO_HEADER_BYTES);
    printf("%s: block %dx%d+%d+%d, %d layers, %zu bytes: device %s host\n", preset, r[i].w, r[i].h,
           r[i].x0, r[i].y0, layers[i], n, same ? "==" : "!=");
    CHECK(same, "%s block %d differs", preset, i);
    free(ref);
  }
  talus_cuda_use_slot(0);
  talus_domain_free(d);
}

/* The ledger closes on the GPU (bounds of test_rivers_ledger). */
static void check_ledger(void) {
  preset_case pc = {"rivers-rain", "rivers-rain", 256, 2000, NULL};
  talus_domain *d = preset_domain(&pc, TALUS_DEVICE_CUDA);
  CHECK(d != NULL, "rivers-rain domain");
  if (!d) return;
  CHECK(talus_domain_run(d, pc.steps, NULL, NULL) == TALUS_OK, "run: %s", talus_last_error());
  fixture_check_ledger(d, "gpu ledger");
  talus_domain_free(d);
}

int main(void) {
  char name[256];
  if (talus_cuda_init(talus_mpi_local_rank(), name, sizeof name))
    return check_skip("test_gpu", talus_last_error());
  printf("GPU: %s\n", name);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_preset(&cases[i]);
  static const char *const layered[] = {"simulation.dt=0.15",
                                        "source1.x=200",
                                        "source1.radius=8",
                                        "horizontal.strength=3",
                                        "horizontal.split_size=0.25",
                                        "simulation.masks=true",
                                        NULL};
  check_tiled("chasm-source", "chasm-source", layered, 160);
  check_tiled("rivers-rain", "particles", NULL, 160);
  check_tiled("cave", "particles-game", NULL, 128);
  static const char *const hf[] = {"thermal.enable=true", NULL};
  check_tiled("rivers-rain", "heightfield-default", hf, 200);
  check_pack("chasm-source", "chasm-source", layered);
  check_pack("rivers-rain", "heightfield-default", hf);
  check_ledger();
  return check_report("test_gpu");
}
