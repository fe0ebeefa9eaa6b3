/*
 * tiled.c — the generation scheduler over a store (design in tiled.h).
 */
#include "tiled.h"

#include "halo/halo.h"

#include <stdlib.h>
#include <string.h>

#define TILED_PART_LEDGER 9 /* a tile's cumulative ledger flows */

struct talus_tiled {
  talus_kctx ctx;       /* parameters and domain; ctx.step is set per advance */
  int core, K, R, H;    /* core size, steps per generation, step radius, halo */
  int ntx, nty, ntiles; /* tile grid */
  int64_t step;         /* every tile is committed at this step */
  talus_store *store;   /* borrowed */
  talus_tile *buf;      /* one buffer, large enough for any core + halo */
  double *flows;        /* [ntiles][TALUS_FLOW_COUNT] cumulative flows (heights) */
};

int talus_tiled_count(const talus_tiled *g) {
  return g->ntiles;
}
int talus_tiled_halo(const talus_tiled *g) {
  return g->H;
}
int64_t talus_tiled_step(const talus_tiled *g) {
  return g->step;
}

talus_rect talus_tiled_core(const talus_tiled *g, int tile) {
  int i = tile % g->ntx, j = tile / g->ntx;
  int x0 = i * g->core, y0 = j * g->core;
  int w = g->ctx.nx - x0 < g->core ? g->ctx.nx - x0 : g->core;
  int h = g->ctx.ny - y0 < g->core ? g->ctx.ny - y0 : g->core;
  return (talus_rect){x0, y0, w, h};
}

/* The core grown by `grow` cells on every side, clipped to the domain. */
static talus_rect tiled_grow(const talus_tiled *g, talus_rect c, int grow) {
  talus_rect r = {c.x0 - grow, c.y0 - grow, c.w + 2 * grow, c.h + 2 * grow};
  return talus_rect_intersect(r, (talus_rect){0, 0, g->ctx.nx, g->ctx.ny});
}

static talus_status tiled_alloc_buffer(const talus_tiled *g, int grow, talus_tile **out) {
  int w = g->core + 2 * grow, h = g->core + 2 * grow;
  if (w > g->ctx.nx) w = g->ctx.nx;
  if (h > g->ctx.ny) h = g->ctx.ny;
  /* Hardness is persistent wherever a stage reads it (thermal.h). */
  return talus_tile_create(out, (talus_rect){0, 0, w, h}, g->ctx.P.nz,
                           g->ctx.P.model == TALUS_MODEL_HEIGHTFIELD || g->ctx.P.enable_thermal);
}

talus_status talus_tiled_create(talus_tiled **out, const talus_kctx *ctx, int core, int K,
                                talus_store *store) {
  *out = NULL;
  if (core < 1 || K < 1)
    return talus_fail(TALUS_ERR_ARGUMENT, "tiler",
                      "tile size %d and steps per exchange %d must "
                      "be positive",
                      core, K);
  talus_tiled *g = calloc(1, sizeof *g);
  if (!g) return talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for the tile grid");
  g->ctx = *ctx;
  g->core = core;
  g->K = K;
  g->R = talus_step_radius(&ctx->P);
  g->H = K * g->R;
  g->ntx = (ctx->nx + core - 1) / core;
  g->nty = (ctx->ny + core - 1) / core;
  g->ntiles = g->ntx * g->nty;
  g->step = ctx->step;
  g->store = store;
  talus_store_set_recycle(store, 1); /* every generation replaces every blob */
  g->flows = calloc((size_t)g->ntiles * TALUS_FLOW_COUNT, sizeof *g->flows);
  talus_status st = g->flows ? tiled_alloc_buffer(g, g->H, &g->buf)
                             : talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for tile ledgers");
  if (st) {
    talus_tiled_free(g);
    return st;
  }
  *out = g;
  return TALUS_OK;
}

void talus_tiled_free(talus_tiled *g) {
  if (!g) return;
  talus_tile_free(g->buf);
  free(g->flows);
  free(g);
}

void talus_tiled_trim(talus_tiled *g) {
  talus_tile_free(g->buf);
  g->buf = NULL;
}

/* The advance buffer, reallocated after a trim. */
static talus_status tiled_buffer(talus_tiled *g) {
  return g->buf ? TALUS_OK : tiled_alloc_buffer(g, g->H, &g->buf);
}

talus_status talus_tiled_core_buffer(const talus_tiled *g, talus_tile **out) {
  return tiled_alloc_buffer(g, 0, out);
}

/* Cuts global rectangle r of t into a pooled buffer the store takes over. */
static talus_status tiled_put_block(talus_tiled *g, int tile, int64_t step, int part,
                                    const talus_tile *t, talus_rect r) {
  size_t n = halo_block_size(t, r);
  void *blob = n ? talus_store_blob_alloc(g->store, n) : NULL;
  if (!blob)
    return n ? talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for a %zu-byte block", n)
             : talus_fail(TALUS_ERR_INTERNAL, "tiler", "block outside the tile buffer");
  talus_status st = halo_block_write(t, r, blob, n);
  if (st) {
    talus_store_blob_release(g->store, blob);
    return st;
  }
  return talus_store_put_owned(g->store, (talus_store_key){tile, step, part}, blob, n, 1);
}

/* Publishes tile p's core, strips and ledger from t at `step`, then commits. */
static talus_status tiled_publish(talus_tiled *g, int p, int64_t step, const talus_tile *t) {
  talus_rect c = talus_tiled_core(g, p);
  talus_status st = tiled_put_block(g, p, step, TALUS_PART_CORE, t, c);
  for (int part = 1; part <= 8 && !st && g->ntiles > 1; part++)
    st = tiled_put_block(g, p, step, part, t, halo_strip_rect(c, g->H, part));
  if (!st)
    st = talus_store_put(g->store, (talus_store_key){p, step, TILED_PART_LEDGER},
                         g->flows + (size_t)p * TALUS_FLOW_COUNT, TALUS_FLOW_COUNT * sizeof(double),
                         0);
  return st ? st : talus_store_commit(g->store, p, step);
}

/* Pastes the blob of key into t, read in place where the store allows.
 * fill: halo_block_paste_fill, adding the cells written to *cells. */
static talus_status tiled_paste(talus_tiled *g, talus_store_key key, talus_tile *t, int fill,
                                size_t *cells) {
  const void *blob = NULL;
  void *hold = NULL;
  size_t n = 0, done = 0;
  talus_status st = talus_store_get_ref(g->store, key, &blob, &n, &hold);
  if (!st) st = fill ? halo_block_paste_fill(t, blob, n, &done) : halo_block_paste(t, blob, n);
  talus_store_blob_release(g->store, hold);
  if (cells) *cells += done;
  return st;
}

talus_status talus_tiled_load(talus_tiled *g, const talus_tile_source *src) {
  memset(g->flows, 0, (size_t)g->ntiles * TALUS_FLOW_COUNT * sizeof *g->flows);
  talus_status st = TALUS_OK;
  for (int p = 0; p < g->ntiles && !st; p++)
    st = talus_tiled_load_tile(g, p, src);
  return st;
}

static int sign(int v) {
  return (v > 0) - (v < 0);
}

/* Fills g->buf with tile p's core and every neighbour strip at step s for
 * a generation of k steps. The core and strips cover the buffer exactly
 * once (strips are H >= k·R wide), so the pastes fill every slot and the
 * buffer needs no reset; the cell count checks that coverage. */
/* What tiled_assemble's strip pastes share (a talus_tiled_reads visit). */
typedef struct assemble_visit {
  talus_tiled *g;
  int64_t s;
  size_t cells;
  talus_status st;
} assemble_visit;

static void assemble_strip(void *user, int tile, int part) {
  assemble_visit *v = user;
  if (!v->st)
    v->st = tiled_paste(v->g, (talus_store_key){tile, v->s, part}, v->g->buf, 1, &v->cells);
}

static talus_status tiled_assemble(talus_tiled *g, int p, int64_t s, int k) {
  talus_rect r = tiled_grow(g, talus_tiled_core(g, p), k * g->R);
  assemble_visit v = {g, s, 0, talus_tile_retarget(g->buf, r)};
  if (!v.st) v.st = tiled_paste(g, (talus_store_key){p, s, TALUS_PART_CORE}, g->buf, 1, &v.cells);
  if (!v.st) talus_tiled_reads(g, p, k, assemble_strip, &v);
  if (!v.st && v.cells != (size_t)r.w * r.h)
    v.st = talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d: blocks cover %zu of %d x %d cells", p,
                      v.cells, r.w, r.h);
  return v.st;
}

/* Advances tile p from step s by k steps and publishes it at s+k. */
static talus_status tiled_advance_tile(talus_tiled *g, int p, int64_t s, int k,
                                       talus_run_stats *stats) {
  talus_status st = tiled_assemble(g, p, s, k);
  if (st) return st;
  talus_run_stats local;
  memset(&local, 0, sizeof local);
  g->ctx.step = s;
  st = talus_tiler_advance(g->buf, &g->ctx, talus_tiled_core(g, p), k, &local, NULL, NULL);
  if (st) return st;
  double *fl = g->flows + (size_t)p * TALUS_FLOW_COUNT;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    fl[f] += local.flows[f];
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    stats->stage_seconds[i] += local.stage_seconds[i];
  stats->cell_steps += local.cell_steps;
  return tiled_publish(g, p, s + k, g->buf);
}

static talus_status tiled_generation(talus_tiled *g, int64_t start, int64_t end,
                                     talus_run_stats *stats, talus_step_progress_fn progress,
                                     void *user) {
  int64_t s = g->step;
  int k = end - s < g->K ? (int)(end - s) : g->K;
  for (int p = 0; p < g->ntiles; p++) {
    talus_status st = talus_tiled_advance_one(g, p, k, stats);
    if (st) return st;
    int64_t done = (s - start) * g->ntiles + (int64_t)k * (p + 1);
    if (progress && !progress(done, (end - start) * g->ntiles, user))
      return talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled at step %lld (resumable)",
                        (long long)s);
  }
  return talus_tiled_end_generation(g, k);
}

talus_status talus_tiled_run(talus_tiled *g, int64_t end, talus_run_stats *stats,
                             talus_step_progress_fn progress, void *user) {
  int64_t start = g->step;
  talus_status bst = g->step < end ? tiled_buffer(g) : TALUS_OK;
  if (bst) return bst;
  while (g->step < end) {
    talus_status st = tiled_generation(g, start, end, stats, progress, user);
    if (st) return st;
  }
  return TALUS_OK;
}

talus_status talus_tiled_resume(talus_tiled *g) {
  int64_t lo = INT64_MAX, hi = -1;
  for (int p = 0; p < g->ntiles; p++) {
    int64_t at;
    talus_status st = talus_tiled_resume_tile(g, p, &at);
    if (st) return st;
    lo = at < lo ? at : lo;
    hi = at > hi ? at : hi;
  }
  if (hi - lo > g->K)
    return talus_fail(TALUS_ERR_FORMAT, "tiler",
                      "tiles span steps %lld..%lld, more than one generation", (long long)lo,
                      (long long)hi);
  g->step = lo;
  return TALUS_OK;
}

talus_status talus_tiled_read_core(talus_tiled *g, int tile, talus_tile *dst) {
  talus_status st = talus_tile_reset(dst, talus_tiled_core(g, tile));
  if (!st)
    st = tiled_paste(g, (talus_store_key){tile, talus_store_committed(g->store, tile), 0}, dst, 0,
                     NULL);
  return st;
}

void talus_tiled_flows(const talus_tiled *g, double flows[TALUS_FLOW_COUNT]) {
  memset(flows, 0, TALUS_FLOW_COUNT * sizeof(double));
  for (int p = 0; p < g->ntiles; p++)
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      flows[f] += g->flows[(size_t)p * TALUS_FLOW_COUNT + f];
}

/* ---------------------------------------------------------------------
 * For drivers that schedule tiles themselves (tiled.h; used by mpi/).
 * ------------------------------------------------------------------- */

void talus_tiled_grid(const talus_tiled *g, int *ntx, int *nty) {
  *ntx = g->ntx;
  *nty = g->nty;
}
int talus_tiled_steps_per_exchange(const talus_tiled *g) {
  return g->K;
}
talus_store *talus_tiled_store(const talus_tiled *g) {
  return g->store;
}
double *talus_tiled_flow_table(talus_tiled *g) {
  return g->flows;
}
void talus_tiled_set_step(talus_tiled *g, int64_t step) {
  g->step = step;
}

void talus_tiled_reads(const talus_tiled *g, int p, int k, void (*fn)(void *, int, int),
                       void *user) {
  talus_rect r = tiled_grow(g, talus_tiled_core(g, p), k * g->R);
  int pi = p % g->ntx, pj = p / g->ntx;
  for (int j = r.y0 / g->core; j <= (r.y0 + r.h - 1) / g->core; j++)
    for (int i = r.x0 / g->core; i <= (r.x0 + r.w - 1) / g->core; i++)
      if (i != pi || j != pj)
        fn(user, j * g->ntx + i, halo_strip_facing(sign(pi - i), sign(pj - j)));
}

talus_status talus_tiled_load_tile(talus_tiled *g, int p, const talus_tile_source *src) {
  talus_rect c = talus_tiled_core(g, p);
  talus_status st = tiled_buffer(g);
  if (!st) st = talus_tile_reset(g->buf, c);
  if (!st) st = src->fill(src->user, g->buf, c);
  if (!st) st = tiled_publish(g, p, g->step, g->buf);
  return st ? talus_fail_context(st, "building tile %d", p) : TALUS_OK;
}

talus_status talus_tiled_advance_one(talus_tiled *g, int p, int k, talus_run_stats *stats) {
  int64_t s = g->step, at = talus_store_committed(g->store, p);
  if (at == s + k) return TALUS_OK; /* done before a resume */
  if (at != s)
    return talus_fail(TALUS_ERR_FORMAT, "tiler", "tile %d is at step %lld, expected %lld", p,
                      (long long)at, (long long)s);
  talus_status st = tiled_buffer(g);
  if (!st) st = tiled_advance_tile(g, p, s, k, stats);
  if (st)
    return talus_fail_context(st, "tile %d, steps %lld..%lld", p, (long long)s, (long long)(s + k));
  return TALUS_OK;
}

talus_status talus_tiled_end_generation(talus_tiled *g, int k) {
  for (int p = 0; p < g->ntiles; p++) {
    talus_status st = talus_store_drop_before(g->store, p, g->step + k);
    if (st) return st;
  }
  g->step += k;
  return TALUS_OK;
}

talus_status talus_tiled_resume_tile(talus_tiled *g, int p, int64_t *at) {
  *at = talus_store_committed(g->store, p);
  if (*at < 0) return talus_fail(TALUS_ERR_FORMAT, "tiler", "tile %d was never stored", p);
  void *blob = NULL;
  size_t n = 0;
  talus_status st =
      talus_store_get(g->store, (talus_store_key){p, *at, TILED_PART_LEDGER}, &blob, &n);
  if (!st && n != TALUS_FLOW_COUNT * sizeof(double))
    st = talus_fail(TALUS_ERR_FORMAT, "tiler", "tile %d ledger has %zu bytes", p, n);
  if (!st) memcpy(g->flows + (size_t)p * TALUS_FLOW_COUNT, blob, n);
  free(blob);
  return st;
}
