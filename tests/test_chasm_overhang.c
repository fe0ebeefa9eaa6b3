/*
 * test_chasm_overhang.c — the whole layered step, end to end: a water
 * source in a chasm (the paper's ChasmSource scene at 64² cells of 4 m)
 * makes water run along the chasm walls; horizontal erosion damages the
 * walls at the water line until a wall column splits, leaving an overhang:
 * a cell with two columns whose upper column holds bedrock, floating above
 * a notch cut at the water level.
 *
 * The full default model runs, support check included: the overhang must
 * also survive the collapse stage (it hangs from the rest of the wall), so
 * it is counted only right after a support cycle ended, and once more a
 * chunk of steps later.
 */
#include "check.h"
#include "tiler/tiler.h"

#include <string.h>

#define N         64
#define LC        4.0f
#define MAX_STEPS 4000

/* ChasmSource: plain at 0 for x <= 64 m, plateau at 50 beyond, chasm
 * x in (64, 240), y in (120, 136) m with its floor at 25. */
static float chasm_bedrock(int x, int y) {
  float xm = ((float)x + 0.5f) * LC, ym = ((float)y + 0.5f) * LC;
  if (xm <= 64.0f) return 0.0f;
  if (xm < 240.0f && ym > 120.0f && ym < 136.0f) return 25.0f;
  return 50.0f;
}

static talus_kctx chasm_ctx(void) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  c.P.cell_size = LC;
  c.P.rain = 0.0f;
  c.P.num_sources = 1;
  c.P.sources[0] = (talus_source){1.0f, 8.0f, 200.0f, 128.0f, {0, 0, 0, 0}};
  talus_kparams_derive(&c.P);
  c.nx = c.ny = N;
  return c;
}

/* True when cell (x, y) is an overhang: it has >= 2 columns and an upper
 * column holds bedrock (more than 1 cm). */
static int is_overhang(const talus_tile *t, int x, int y) {
  size_t i = talus_idx(t, x, y);
  for (int k = 1; k < t->count[i]; k++)
    if (t->B[talus_col(t, i, k)] - talus_floor(t, i, k) > 0.01f) return 1;
  return 0;
}

/* Number of overhang cells; writes the last one found to (*ox, *oy). */
static int count_overhangs(const talus_tile *t, int *ox, int *oy) {
  int found = 0;
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++)
      if (is_overhang(t, x, y)) *ox = x, *oy = y, found++;
  return found;
}

/* Columns of every cell are sorted: each bedrock top at or above its floor. */
static int columns_sorted(const talus_tile *t) {
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      size_t i = talus_idx(t, x, y);
      for (int k = 1; k < t->count[i]; k++)
        if (t->B[talus_col(t, i, k)] < talus_floor(t, i, k)) return 0;
    }
  return 1;
}

int main(void) {
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, N, N}, 8, 0) != TALUS_OK)
    return check_skip("test_chasm_overhang", "cannot allocate the tile");
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++)
      t->B[talus_idx(t, x, y)] = chasm_bedrock(x, y);
  talus_kctx c = chasm_ctx();
  talus_run_stats stats;
  memset(&stats, 0, sizeof stats);
  /* Chunks of whole support cycles, so every count follows a collapse. */
  int chunk =
      c.P.support_cycle >= 100 ? c.P.support_cycle : (100 / c.P.support_cycle) * c.P.support_cycle;
  int ox = -1, oy = -1, found = 0;
  for (int done = 0; done < MAX_STEPS && !found; done += chunk) {
    talus_status st = talus_tiler_advance(t, &c, (talus_rect){0, 0, N, N}, chunk, &stats, 0, 0);
    CHECK(st == TALUS_OK, "advance failed: %s", talus_last_error());
    if (st) break;
    found = count_overhangs(t, &ox, &oy);
  }
  printf("after %lld steps: %d overhang cells; ledger (m summed over cells): source %.1f, "
         "split %.3f\n",
         (long long)c.step, found, stats.flows[TALUS_FLOW_SOURCE], stats.flows[TALUS_FLOW_SPLIT]);
  CHECK(found > 0, "no overhang after %lld steps", (long long)c.step);
  CHECK(columns_sorted(t), "columns stay sorted");
  if (found) {
    size_t i = talus_idx(t, ox, oy);
    float floor_up = talus_floor(t, i, 1);
    /* The cut lies at the water line: above the chasm floor, below the rim. */
    CHECK(floor_up > 25.0f && floor_up < 50.0f, "overhang floor %g in (25, 50)", floor_up);
    CHECK(chasm_bedrock(ox, oy) == 50.0f, "the overhang is a wall cell (%d, %d)", ox, oy);
    talus_tiler_advance(t, &c, (talus_rect){0, 0, N, N}, chunk, &stats, 0, 0);
    CHECK(is_overhang(t, ox, oy), "the overhang at (%d, %d) survives %d more steps", ox, oy, chunk);
  }
  talus_tile_free(t);
  return check_report("test_chasm_overhang");
}
