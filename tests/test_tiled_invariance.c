/*
 * test_tiled_invariance — the promise: a tiled run gives exactly the bytes
 * of a monolithic run, for core sizes {37, 64, 100, 256} on domains not
 * divisible by them (256² and 600×400), K ∈ {1, 2, 3}, with everything on
 * in the layered model (rain, a source, splits, a support cycle ending
 * inside a generation, collapse, the run accumulators of simulation.masks),
 * in memory (resident tiles) and on disk (tiles pasted and cut every
 * generation).
 */
#include "check.h"
#include "scene_fixture.h"
#include "tiled_fixture.h"

#include <unistd.h>

#define W 64 /* the warm-up scene's size: 64² cells of 4 m */

/* A warmed-up chasm-source state (overhangs already cut) tiled periodically
 * over nx × ny, so every tile holds multi-column cells. */
static talus_tile *warm_state(int nx, int ny, talus_kctx *ctx) {
  /* Strong horizontal erosion and small splits, so that columns split and
   * collapse within the few steps each comparison runs; rain whose noise
   * is drawn over a lattice of 3 cells (12 m), which no core size divides;
   * pits read no tilt (a test of all four neighbours' heights). */
  static const char *const sets[] = {"simulation.dt=0.15",
                                     "source1.x=200",
                                     "source1.radius=8",
                                     "horizontal.strength=3",
                                     "horizontal.split_size=0.25",
                                     "horizontal.notch_wall=true",
                                     "simulation.masks=1",
                                     "water.rain=0.07",
                                     "water.rain_noise_scale=12",
                                     "erosion.tilt=no_pits",
                                     NULL};
  talus_domain *d = fixture_domain("chasm-source", W, "chasm-source", sets);
  if (!d || talus_domain_run(d, 100, NULL, NULL)) return NULL;
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, nx, ny}, d->tile->nz, TALUS_TILE_ACC)) return NULL;
  for (int y0 = 0; y0 < ny; y0 += W)
    for (int x0 = 0; x0 < nx; x0 += W) {
      void *blob = NULL;
      size_t n = 0;
      talus_rect r = {0, 0, nx - x0 < W ? nx - x0 : W, ny - y0 < W ? ny - y0 : W};
      halo_block_cut(d->tile, r, &blob, &n);
      /* Shift the block to (x0, y0) by editing its header rectangle. */
      int32_t *hd = blob;
      hd[1] = x0, hd[2] = y0;
      halo_block_paste(t, blob, n);
      free(blob);
    }
  *ctx = d->ctx;
  ctx->nx = nx, ctx->ny = ny;
  ctx->step = d->ctx.step;
  talus_domain_free(d);
  return t;
}

/* Slots at or above a cell's count that do not hold their reset value
 * (zero in every field: talus_tile_reset leaves TALUS_TOP only in layer 0,
 * which no cell vacates). Resident tiles (tiled.h) give the bytes of pasted
 * ones only while there are none. */
static long stale_slots(const talus_tile *t) {
  long n = 0;
  for (size_t i = 0; i < t->plane; i++)
    for (int k = t->count[i]; k < t->nz; k++) {
      const float *f[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
      for (int j = 0; j < 7; j++)
        n += f[j][talus_col(t, i, k)] != 0.0f;
      for (int d = 0; d < 4; d++)
        n += t->f[talus_dcol(t, i, k, d)] != 0.0f;
    }
  return n;
}

static void check_domain(int nx, int ny, const int (*cases)[2], int ncases, int steps) {
  talus_kctx ctx;
  talus_tile *init = warm_state(nx, ny, &ctx);
  CHECK(init != NULL, "warm state %dx%d", nx, ny);
  if (!init) return;
  CHECK(multi_column_cells(init) > 0, "%dx%d: the warm state has overhangs", nx, ny);
  talus_tile *mono = fixture_clone(init);
  talus_kctx mctx = ctx;
  talus_run_stats ms;
  memset(&ms, 0, sizeof ms);
  int64_t end = ctx.step + steps;
  talus_tiler_advance(mono, &mctx, mono->buf, steps, &ms, NULL, NULL);
  CHECK(ms.flows[TALUS_FLOW_COLLAPSE] + ms.flows[TALUS_FLOW_SPLIT] > 0,
        "%dx%d: splits or collapses happened (%g, %g)", nx, ny, ms.flows[TALUS_FLOW_SPLIT],
        ms.flows[TALUS_FLOW_COLLAPSE]);
  /* The accumulators move in the compared steps, so their bytes are
   * compared (fixture_diff_cells) where they change. */
  double moved = 0.0;
  for (size_t i = 0; init->acc && mono->acc && i < init->plane * TALUS_ACC_PLANES; i++)
    moved += fabs((double)mono->acc[i] - (double)init->acc[i]);
  CHECK(init->acc && mono->acc && moved > 0.0,
        "%dx%d: the accumulators grew over the compared steps (sum |change| %g)", nx, ny, moved);
  long stale = stale_slots(mono);
  CHECK(stale == 0, "%dx%d: every slot a column left holds its reset value (%ld do not)", nx, ny,
        stale);
  for (int i = 0; i < ncases; i++) {
    int core = cases[i][0], K = cases[i][1];
    double flows[TALUS_FLOW_COUNT];
    long diff = fixture_tiled_diff(init, mono, &ctx, core, K, end, TALUS_STORE_MEMORY, NULL, flows);
    CHECK(diff == 0, "%dx%d core %d K %d: %ld values differ from the monolithic run", nx, ny, core,
          K, diff);
    static const int added[2] = {TALUS_FLOW_RAIN, TALUS_FLOW_SOURCE};
    for (int j = 0; j < 2; j++) {
      double want = ms.flows[added[j]];
      CHECK(want > 0.0 && fabs(flows[added[j]] - want) <= 1e-9 * (1 + fabs(want)),
            "core %d K %d: tiled ledger books the same %s water (%g)", core, K,
            j ? "source" : "rain", want);
    }
  }
  /* The disk store, whose tiles are pasted and cut every generation where
   * the memory store's stay resident, gives the same bytes. */
  for (int i = 0; i < 2; i++) {
    char dir[] = "/tmp/talus_tiled_XXXXXX"; /* a fresh mkdtemp template per store */
    int made = mkdtemp(dir) != NULL;
    CHECK(made, "a scratch directory for the disk store");
    long diff = made ? fixture_tiled_diff(init, mono, &ctx, cases[i][0], cases[i][1], end,
                                          TALUS_STORE_DISK, dir, NULL)
                     : -1;
    CHECK(diff == 0, "%dx%d disk store, core %d K %d: %ld values differ", nx, ny, cases[i][0],
          cases[i][1], diff);
    rmdir(dir);
  }
  talus_tile_free(init);
  talus_tile_free(mono);
}

int main(void) {
  /* From step 100 at 4 m cells a support cycle lasts 100 m / (2·4 m·5) = 3
   * steps (cycles end at steps 101, 104, …), so cycles end inside
   * generations for K = 2 and 3. */
  static const int square[][2] = {{37, 3}, {64, 1}, {100, 2}, {256, 3}, {37, 1}};
  check_domain(256, 256, square, 5, 12);
  static const int wide[][2] = {{100, 3}, {64, 2}, {256, 1}};
  check_domain(600, 400, wide, 3, 8);
  return check_report("test_tiled_invariance");
}
