/*
 * tiled_fixture.h — runs a state monolithically and tiled over a store and
 * compares every persistent field of every live column bit for bit.
 */
#ifndef TALUS_TEST_TILED_FIXTURE_H
#define TALUS_TEST_TILED_FIXTURE_H

#include "halo/halo.h"
#include "tiler/tiled.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tile source copying from a whole-domain tile. */
static inline talus_status fixture_fill_from_tile(void *user, talus_tile *t, talus_rect r) {
  return halo_block_copy(user, r, t);
}

/* Copies a whole-domain tile (persistent fields). */
static inline talus_tile *fixture_clone(const talus_tile *src) {
  talus_tile *t = NULL;
  int optional = (src->hard ? TALUS_TILE_HARD : 0) | (src->acc ? TALUS_TILE_ACC : 0) |
                 (src->fd ? TALUS_TILE_FDIAG : 0);
  if (talus_tile_create(&t, src->buf, src->nz, optional)) return NULL;
  if (fixture_fill_from_tile((void *)src, t, src->buf)) {
    talus_tile_free(t);
    return NULL;
  }
  return t;
}

/* Number of live-column field values of `core` in a and b that differ
 * bitwise (counts and masks count as fields too; hardness, the
 * accumulators and the diagonal fluxes where a has them, and a's
 * accumulators or diagonal fluxes missing in b count as differing). */
static inline long fixture_diff_cells(const talus_tile *a, const talus_tile *b, talus_rect core) {
  long diff = 0;
  for (int y = core.y0; y < core.y0 + core.h; y++)
    for (int x = core.x0; x < core.x0 + core.w; x++) {
      size_t i = talus_idx(a, x - a->buf.x0, y - a->buf.y0);
      size_t j = talus_idx(b, x - b->buf.x0, y - b->buf.y0);
      if (a->count[i] != b->count[j] || a->mask[i] != b->mask[j]) {
        diff++;
        continue;
      }
      for (int k = 0; k < a->count[i]; k++) {
        const float *fa[7] = {a->B, a->s, a->w, a->C, a->r, a->D, a->p};
        const float *fb[7] = {b->B, b->s, b->w, b->C, b->r, b->D, b->p};
        for (int f = 0; f < 7; f++)
          diff += memcmp(&fa[f][talus_col(a, i, k)], &fb[f][talus_col(b, j, k)], 4) != 0;
        for (int d = 0; d < 4; d++)
          diff += memcmp(&a->f[talus_dcol(a, i, k, d)], &b->f[talus_dcol(b, j, k, d)], 4) != 0;
      }
      if (a->hard) diff += memcmp(&a->hard[i], &b->hard[j], 4) != 0;
      for (int q = 0; a->acc && q < TALUS_ACC_PLANES; q++)
        diff += !b->acc || memcmp(&a->acc[q * a->plane + i], &b->acc[q * b->plane + j], 4) != 0;
      for (int q = 0; a->fd && q < 4; q++) /* heightfield.neighbours = 8 */
        diff += !b->fd || memcmp(&a->fd[q * a->plane + i], &b->fd[q * b->plane + j], 4) != 0;
    }
  return diff;
}

/* When set, fixture_tiled_diff advances one tile at a time with
 * talus_tiled_advance_one (the per-tile calls mpi/ drives) instead of
 * talus_tiled_run (which pipelines tiles on the GPU). */
static int fixture_tile_by_tile = 0;
/* The GPU residency fixture_tiled_diff asks of its grid
 * (talus_tiled_set_gpu_resident), and whether its run kept the tiles
 * resident on the GPU (talus_tiled_gpu_resident_used). */
static int fixture_gpu_resident = TALUS_TILED_GPU_RESIDENT_AUTO;
static int fixture_gpu_resident_used = 0;
/* talus_tiled_run is called this many times, each going an equal share
 * of the way (the store carries the grid from one call to the next). */
static int fixture_run_parts = 1;

static inline talus_status fixture_tiled_advance(talus_tiled *g, int64_t end,
                                                 talus_run_stats *stats) {
  if (!fixture_tile_by_tile) {
    int64_t from = talus_tiled_step(g);
    talus_status st = TALUS_OK;
    for (int i = 1; i <= fixture_run_parts && !st; i++)
      st = talus_tiled_run(g, from + (end - from) * i / fixture_run_parts, stats, NULL, NULL);
    return st;
  }
  while (talus_tiled_step(g) < end) {
    int k = talus_tiled_generation_steps(g, end);
    for (int p = 0; p < talus_tiled_count(g); p++) {
      talus_status st = talus_tiled_advance_one(g, p, k, stats);
      if (st) return st;
    }
    talus_status st = talus_tiled_end_generation(g, k);
    if (st) return st;
  }
  return TALUS_OK;
}

/* Runs `init` tiled (core, K) over a store of `kind` (dir for disk) from
 * ctx->step to `end` and returns the number of differing values against
 * `mono` (the monolithic result), or -1 on failure. */
static inline long fixture_tiled_diff(const talus_tile *init, const talus_tile *mono,
                                      const talus_kctx *ctx, int core, int K, int64_t end,
                                      talus_store_kind kind, const char *dir,
                                      double flows[TALUS_FLOW_COUNT]) {
  talus_store *store = NULL;
  talus_tiled *g = NULL;
  talus_tile *out = NULL;
  talus_run_stats stats;
  memset(&stats, 0, sizeof stats);
  long diff = -1;
  int ntiles = ((ctx->nx + core - 1) / core) * ((ctx->ny + core - 1) / core);
  talus_tile_source src = {fixture_fill_from_tile, (void *)init};
  talus_status st = talus_store_open(&store, kind, dir, "fixture", ntiles, 0);
  if (!st) st = talus_tiled_create(&g, ctx, core, K, store);
  if (!st) talus_tiled_set_gpu_resident(g, fixture_gpu_resident);
  if (!st) st = talus_tiled_load(g, &src);
  if (!st) st = fixture_tiled_advance(g, end, &stats);
  fixture_gpu_resident_used = g && talus_tiled_gpu_resident_used(g);
  if (!st) st = talus_tiled_core_buffer(g, &out);
  if (!st) {
    diff = 0;
    for (int p = 0; p < talus_tiled_count(g) && !st; p++) {
      st = talus_tiled_read_core(g, p, out);
      if (!st) diff += fixture_diff_cells(out, mono, talus_tiled_core(g, p));
    }
    if (flows) talus_tiled_flows(g, flows);
  }
  if (st) {
    fprintf(stderr, "tiled run (core %d, K %d): %s\n", core, K, talus_last_error());
    diff = -1;
  }
  talus_tile_free(out);
  talus_tiled_free(g);
  if (store) talus_store_destroy(store);
  return diff;
}

#endif
