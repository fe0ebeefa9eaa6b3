/*
 * tiled.c — the generation scheduler over a store (design in tiled.h).
 */
#include "tiled.h"

#include "halo/halo.h"

#include <assert.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define TILED_PART_LEDGER 9 /* a tile's cumulative ledger flows */

struct talus_tiled {
  talus_kctx ctx;       /* parameters and domain; ctx.step is set per advance */
  int core, K, R, H;    /* core size, steps per generation, step radius, halo */
  int ntx, nty, ntiles; /* tile grid */
  int64_t step;         /* every tile is committed at this step */
  talus_store *store;   /* borrowed */
  talus_tile *buf;      /* one buffer, large enough for any core + halo; with res, its
                         * scratch only, lent to the tile that advances */
  talus_tile *spare;    /* GPU only: the pipeline's second buffer; both pinned */
  talus_tile **res;     /* [ntiles] resident tiles (CPU over a memory store, else NULL):
                         * persistent fields of core + halo H, allocated at load */
  double *flows;        /* [ntiles][TALUS_FLOW_COUNT] cumulative flows (heights) */
  int gpu_resident;     /* TALUS_TILED_GPU_RESIDENT_*: may a GPU run keep its tiles there */
  int resident_used;    /* 1 when the last talus_tiled_run kept its tiles on the GPU */

  talus_tile_source inputs; /* talus_tiled_set_inputs: static input planes, or fill NULL */
  uint8_t *inputs_done;     /* [ntiles] with res: the resident buffer's inputs are filled */
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

/* A buffer for any core grown by `grow`, with the field groups `groups`
 * (talus_tile_create_groups). Every buffer grown by H has the same plane,
 * so they can lend each other their scratch. */
static talus_status tiled_alloc_buffer(const talus_tiled *g, int grow, int groups,
                                       talus_tile **out) {
  int w = g->core + 2 * grow, h = g->core + 2 * grow;
  if (w > g->ctx.nx) w = g->ctx.nx;
  if (h > g->ctx.ny) h = g->ctx.ny;
  /* Hardness is persistent wherever a stage reads it (thermal.h). */
  return talus_tile_create_groups(out, (talus_rect){0, 0, w, h}, g->ctx.P.nz,
                                  talus_tile_optional(&g->ctx.P), groups);
}

/* Width of the ring of neighbour strips around a core for a generation of
 * k steps: k·R, or H for resident tiles, whose buffers stay grown by H
 * (the last, shorter generation then computes a wider ring than it needs,
 * on step-s data, which changes nothing in the core). */
static int tiled_ring(const talus_tiled *g, int k) {
  return g->res ? g->H : k * g->R;
}

/* Reader threads of a disk store's read-ahead (tiled.h): one per four
 * CPU threads, 1 to 4 (a tile reads a core and up to 8 strips; the core
 * dominates, so more readers help only when several tiles are read). */
static int tiled_io_readers(void) {
  int n = omp_get_max_threads() / 4;
  return n < 1 ? 1 : n > 4 ? 4 : n;
}

/* The advance buffers, (re)allocated after a trim: g->buf and, for the
 * GPU pipeline (spare set; talus_tiled_run on the GPU), a second one; on
 * the GPU both are pinned for asynchronous transfers. */
static talus_status tiled_buffers(talus_tiled *g, int spare) {
  int gpu = g->ctx.backend == TALUS_BACKEND_CUDA;
  int groups = g->res ? TALUS_TILE_SCRATCH : TALUS_TILE_PERSISTENT | TALUS_TILE_SCRATCH;
  talus_tile **need[2] = {&g->buf, &g->spare};
  for (int i = 0; i < 1 + (gpu && spare); i++) {
    if (*need[i]) continue;
    talus_status st = tiled_alloc_buffer(g, g->H, groups, need[i]);
    if (!st && gpu) st = talus_cuda_pin(*need[i]);
    if (st) return st;
  }
  return TALUS_OK;
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
  int resident =
      ctx->backend != TALUS_BACKEND_CUDA && talus_store_get_kind(store) == TALUS_STORE_MEMORY;
  if (resident) g->res = calloc((size_t)g->ntiles, sizeof *g->res);
  talus_status st = g->flows && (g->res || !resident)
                        ? tiled_buffers(g, 0)
                        : talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for the tile tables");
  if (!st) st = talus_store_set_io_threads(store, tiled_io_readers());
  if (st) {
    talus_tiled_free(g);
    return st;
  }
  *out = g;
  return TALUS_OK;
}

void talus_tiled_free(talus_tiled *g) {
  if (!g) return;
  talus_tiled_trim(g);
  for (int p = 0; g->res && p < g->ntiles; p++)
    talus_tile_free(g->res[p]);
  free(g->res);
  free(g->inputs_done);
  free(g->flows);
  free(g);
}

void talus_tiled_trim(talus_tiled *g) {
  talus_tile **have[2] = {&g->buf, &g->spare};
  for (int i = 0; i < 2; i++) {
    if (g->ctx.backend == TALUS_BACKEND_CUDA) talus_cuda_unpin(*have[i]);
    talus_tile_free(*have[i]);
    *have[i] = NULL;
  }
}

talus_status talus_tiled_core_buffer(const talus_tiled *g, talus_tile **out) {
  return tiled_alloc_buffer(g, 0, TALUS_TILE_PERSISTENT | TALUS_TILE_SCRATCH, out);
}

/* Tile p's resident buffer (g->res set), allocated when p has none yet,
 * reset to empty columns over p's core grown by H: for loading. */
static talus_status tiled_resident(talus_tiled *g, int p, talus_tile **out) {
  talus_status st =
      g->res[p] ? TALUS_OK : tiled_alloc_buffer(g, g->H, TALUS_TILE_PERSISTENT, &g->res[p]);
  if (!st) st = talus_tile_reset(g->res[p], tiled_grow(g, talus_tiled_core(g, p), g->H));
  *out = g->res[p];
  return st;
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

/* The blocks tile p publishes: its core (part 0), then, when there are
 * neighbours to read them, its 8 strips (parts 1..8). Returns how many. */
static int tiled_publish_rects(const talus_tiled *g, int p, talus_rect r[TALUS_HALO_PARTS]) {
  r[0] = talus_tiled_core(g, p);
  if (g->ntiles == 1) return 1;
  for (int part = 1; part < TALUS_HALO_PARTS; part++)
    r[part] = halo_strip_rect(r[0], g->H, part);
  return TALUS_HALO_PARTS;
}

/* Puts tile p's ledger at `step` and commits the tile there. */
static talus_status tiled_commit(talus_tiled *g, int p, int64_t step) {
  talus_status st = talus_store_put(g->store, (talus_store_key){p, step, TILED_PART_LEDGER},
                                    g->flows + (size_t)p * TALUS_FLOW_COUNT,
                                    TALUS_FLOW_COUNT * sizeof(double), 0);
  return st ? st : talus_store_commit(g->store, p, step);
}

/* Publishes tile p's core (unless it stays resident), strips and ledger
 * from t at `step`, then commits. */
static talus_status tiled_publish(talus_tiled *g, int p, int64_t step, const talus_tile *t) {
  talus_rect r[TALUS_HALO_PARTS];
  int n = tiled_publish_rects(g, p, r);
  talus_status st = TALUS_OK;
  for (int part = g->res ? 1 : 0; part < n && !st; part++)
    st = tiled_put_block(g, p, step, part, t, r[part]);
  return st ? st : tiled_commit(g, p, step);
}

/* Copies n bytes, in parallel when they are many (a tile's core). */
static void tiled_copy(unsigned char *dst, const unsigned char *src, size_t n) {
  enum { CHUNK = 1 << 20 };
  long chunks = (long)((n + CHUNK - 1) / CHUNK);
#pragma omp parallel for schedule(static) if (chunks > 4)
  for (long c = 0; c < chunks; c++) {
    size_t at = (size_t)c * CHUNK;
    memcpy(dst + at, src + at, n - at < CHUNK ? n - at : CHUNK);
  }
}

/* tiled_publish for a tile on the GPU's current slot: its blocks are
 * packed on the device and only they come back to the host. */
static talus_status tiled_publish_device(talus_tiled *g, int p, int64_t step, int flags) {
  talus_rect r[TALUS_HALO_PARTS];
  int n = tiled_publish_rects(g, p, r), layers[TALUS_HALO_PARTS];
  const void *body[TALUS_HALO_PARTS];
  talus_status st = talus_cuda_block_layers(r, n, layers);
  if (!st) st = talus_cuda_pack_blocks(r, layers, n, body);
  for (int i = 0; i < n && !st; i++) {
    size_t bytes = halo_block_bytes(r[i].w, r[i].h, layers[i], flags);
    unsigned char *blob = talus_store_blob_alloc(g->store, bytes);
    if (!blob) return talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for a %zu-byte block", bytes);
    halo_block_header(blob, r[i], layers[i], flags);
    tiled_copy(blob + HALO_HEADER_BYTES, body[i], bytes - HALO_HEADER_BYTES);
    st = talus_store_put_owned(g->store, (talus_store_key){p, step, i}, blob, bytes, 1);
  }
  return st ? st : tiled_commit(g, p, step);
}

/* Pastes the blob of key into t with halo_block_paste_fill, read in place
 * where the store allows, adding the cells written to *cells. */
static talus_status tiled_paste(talus_tiled *g, talus_store_key key, talus_tile *t, size_t *cells) {
  const void *blob = NULL;
  void *hold = NULL;
  size_t n = 0, done = 0;
  talus_status st = talus_store_get_ref(g->store, key, &blob, &n, &hold);
  if (!st) st = halo_block_paste_fill(t, blob, n, &done);
  talus_store_blob_release(g->store, hold);
  *cells += done;
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

/* Calls fn(user, q, part) for every strip (tile q, part) that covers part
 * of tile p's core grown by `ring` (talus_tiled_reads for a ring width). */
static void tiled_reads_ring(const talus_tiled *g, int p, int ring, void (*fn)(void *, int, int),
                             void *user) {
  talus_rect r = tiled_grow(g, talus_tiled_core(g, p), ring);
  int pi = p % g->ntx, pj = p / g->ntx;
  for (int j = r.y0 / g->core; j <= (r.y0 + r.h - 1) / g->core; j++)
    for (int i = r.x0 / g->core; i <= (r.x0 + r.w - 1) / g->core; i++)
      if (i != pi || j != pj)
        fn(user, j * g->ntx + i, halo_strip_facing(sign(pi - i), sign(pj - j)));
}

/* What a read-ahead of tile p's blobs shares (a tiled_reads_ring visit). */
typedef struct prefetch_visit {
  talus_store *store;
  int64_t s;
} prefetch_visit;

static void prefetch_strip(void *user, int tile, int part) {
  prefetch_visit *v = user;
  talus_store_prefetch(v->store, (talus_store_key){tile, v->s, part});
}

/* Asks the store to read ahead what tiled_assemble will read for tile p
 * at step s in a generation of k steps: its core and the strips around
 * it (a disk store with reader threads; otherwise nothing happens). A
 * tile already committed past s (a resumed generation) reads nothing. */
static void tiled_prefetch(talus_tiled *g, int p, int64_t s, int k) {
  if (p < 0 || p >= g->ntiles || g->res || talus_store_committed(g->store, p) != s) return;
  prefetch_visit v = {g->store, s};
  talus_store_prefetch(g->store, (talus_store_key){p, s, TALUS_PART_CORE});
  tiled_reads_ring(g, p, tiled_ring(g, k), prefetch_strip, &v);
}

/* Reads ahead the tile that follows p: p + 1 in this generation (from
 * step s, k steps), or after the last tile the first of the next
 * generation, which reads the blobs this one published at s + k. */
static void tiled_prefetch_next(talus_tiled *g, int p, int64_t s, int k, int64_t end) {
  if (p + 1 < g->ntiles) return tiled_prefetch(g, p + 1, s, k);
  int64_t next = s + k;
  if (next < end) tiled_prefetch(g, 0, next, end - next < g->K ? (int)(end - next) : g->K);
}

/* What tiled_assemble's strip pastes share (a talus_tiled_reads visit). */
typedef struct assemble_visit {
  talus_tiled *g;
  talus_tile *t;
  int64_t s;
  size_t cells;
  talus_status st;
} assemble_visit;

static void assemble_strip(void *user, int tile, int part) {
  assemble_visit *v = user;
  if (!v->st) v->st = tiled_paste(v->g, (talus_store_key){tile, v->s, part}, v->t, &v->cells);
}

/* The static input planes of tile p's buffer t over r (talus_tiled_set_inputs):
 * once for a resident buffer, else at every assembly. */
static talus_status tiled_inputs(talus_tiled *g, int p, talus_rect r, talus_tile *t) {
  if (!g->inputs.fill) return TALUS_OK;
  if (g->res && !g->inputs_done && !(g->inputs_done = calloc((size_t)g->ntiles, 1)))
    return talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for the tile table");
  if (g->res && g->inputs_done[p]) return TALUS_OK;
  talus_status st = g->inputs.fill(g->inputs.user, t, r);
  if (!st && g->res) g->inputs_done[p] = 1;
  return st;
}

void talus_tiled_set_inputs(talus_tiled *g, const talus_tile_source *inputs) {
  g->inputs = inputs ? *inputs : (talus_tile_source){NULL, NULL};
  if (g->inputs_done) memset(g->inputs_done, 0, (size_t)g->ntiles);
}

/* Fills t with tile p at step s and around it a ring of `ring` cells
 * (tiled_ring for a generation): its core (pasted into the advance
 * buffer, or already in place in p's resident buffer) and every
 * neighbour strip. The core and strips cover the buffer exactly once
 * (strips are H >= ring wide), so the pastes fill every slot and the
 * buffer needs no reset; the cell count checks that coverage. */
static talus_status tiled_assemble(talus_tiled *g, int p, int64_t s, int ring, talus_tile *t) {
  talus_rect c = talus_tiled_core(g, p), r = tiled_grow(g, c, ring);
  assemble_visit v = {g, t, s, 0, TALUS_OK};
  if (g->res) {
    assert(t == g->res[p] && !memcmp(&t->buf, &r, sizeof r));
    v.cells = (size_t)c.w * c.h;
  } else {
    v.st = talus_tile_retarget(t, r);
    if (!v.st) v.st = tiled_paste(g, (talus_store_key){p, s, TALUS_PART_CORE}, t, &v.cells);
  }
  if (!v.st) tiled_reads_ring(g, p, ring, assemble_strip, &v);
  if (!v.st && v.cells != (size_t)r.w * r.h)
    v.st = talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d: blocks cover %zu of %d x %d cells", p,
                      v.cells, r.w, r.h);
  if (!v.st) v.st = tiled_inputs(g, p, r, t);
  return v.st;
}

/* Adds the flows of tile p's advance (local) to its cumulative ledger and
 * the stage times and cell-steps to the run's stats. */
static void tiled_book(talus_tiled *g, int p, const talus_run_stats *local,
                       talus_run_stats *stats) {
  double *fl = g->flows + (size_t)p * TALUS_FLOW_COUNT;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    fl[f] += local->flows[f];
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    stats->stage_seconds[i] += local->stage_seconds[i];
  stats->cell_steps += local->cell_steps;
}

/* Advances tile p from step s by k steps and publishes it at s+k: in the
 * advance buffer, or in p's resident buffer with the advance buffer's
 * scratch lent to it meanwhile. */
static talus_status tiled_advance_tile(talus_tiled *g, int p, int64_t s, int k,
                                       talus_run_stats *stats) {
  talus_tile *t = g->res ? g->res[p] : g->buf;
  if (!t) return talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d was never loaded", p);
  talus_status st = tiled_assemble(g, p, s, tiled_ring(g, k), t);
  if (!st && g->res) st = talus_tile_swap_scratch(t, g->buf);
  if (st) return st;
  talus_run_stats local;
  memset(&local, 0, sizeof local);
  g->ctx.step = s;
  st = talus_tiler_advance(t, &g->ctx, talus_tiled_core(g, p), k, &local, NULL, NULL);
  if (g->res) talus_tile_swap_scratch(t, g->buf); /* the scratch goes back, also on error */
  if (st) return st;
  tiled_book(g, p, &local, stats);
  return tiled_publish(g, p, s + k, t);
}

/* Whether tile p still has to advance from step s by k: 0 when it is
 * already committed at s + k (as after a resume). */
static talus_status tiled_due(const talus_tiled *g, int p, int64_t s, int k, int *due) {
  int64_t at = talus_store_committed(g->store, p);
  *due = at != s + k;
  if (*due && at != s)
    return talus_fail(TALUS_ERR_FORMAT, "tiler", "tile %d is at step %lld, expected %lld", p,
                      (long long)at, (long long)s);
  return TALUS_OK;
}

int talus_tiled_generation_steps(const talus_tiled *g, int64_t end) {
  return end - g->step < g->K ? (int)(end - g->step) : g->K;
}

/* Reports tiles 0..p of the current generation (k steps) done to progress
 * (may be NULL); TALUS_ERR_CANCELLED when it asks to stop. */
static talus_status tiled_report(const talus_tiled *g, int64_t start, int64_t end, int k, int p,
                                 talus_step_progress_fn progress, void *user) {
  int64_t done = (g->step - start) * g->ntiles + (int64_t)k * (p + 1);
  if (!progress || progress(done, (end - start) * g->ntiles, user)) return TALUS_OK;
  return talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled at step %lld (resumable)",
                    (long long)g->step);
}

/* ---------------------------------------------------------------------
 * The GPU pipeline of a generation: tile p is assembled into the buffer
 * of slot p' = (its rank among the due tiles) mod 2 and queued on that
 * CUDA slot; then the tile queued before it, on the other slot, is
 * landed: waited for, booked and published, its core and strips packed
 * into blocks on the device (only they travel back). So the GPU computes
 * one tile while the host publishes the previous one and assembles the
 * next, whose upload overlaps the computation. Tiles still publish in
 * index order, each from its own step-s inputs: the bytes of the
 * one-buffer loop.
 * ------------------------------------------------------------------- */

typedef struct tiled_flight {
  int p; /* the tile in flight on this slot, -1 when none */
  talus_tile *t;
  talus_run_stats stats;
} tiled_flight;

/* What tiled_land does with the tile once the slot is done. */
enum { TILED_DRAIN, TILED_BOOK, TILED_PUBLISH };

/* Waits for the slot's tile and books it (TILED_BOOK), then publishes it
 * too (TILED_PUBLISH), or drops its results (TILED_DRAIN, after an error). */
static talus_status tiled_land(talus_tiled *g, tiled_flight *fl, int slot, int64_t s, int k,
                               talus_run_stats *stats, int what) {
  int p = fl->p;
  fl->p = -1;
  if (p < 0) return TALUS_OK;
  talus_status st = talus_cuda_use_slot(slot);
  if (!st) st = talus_tiler_collect(&fl->stats);
  if (!st && what != TILED_DRAIN) tiled_book(g, p, &fl->stats, stats);
  if (!st && what == TILED_PUBLISH) st = tiled_publish_device(g, p, s + k, HALO_TILE_FLAGS(fl->t));
  if (st)
    return talus_fail_context(st, "tile %d, steps %lld..%lld", p, (long long)s, (long long)(s + k));
  return TALUS_OK;
}

/* Assembles tile p into fl's buffer and queues it on the slot. */
static talus_status tiled_launch(talus_tiled *g, tiled_flight *fl, int slot, int p, int64_t s,
                                 int k) {
  talus_status st = tiled_assemble(g, p, s, tiled_ring(g, k), fl->t);
  if (!st) st = talus_cuda_use_slot(slot);
  if (st) return talus_fail_context(st, "tile %d", p);
  memset(&fl->stats, 0, sizeof fl->stats);
  fl->p = p; /* in flight from here on, even if queueing fails */
  g->ctx.step = s;
  return talus_tiler_queue(fl->t, &g->ctx, talus_tiled_core(g, p), k, &fl->stats);
}

static talus_status tiled_generation_gpu(talus_tiled *g, int64_t start, int64_t end,
                                         talus_run_stats *stats, talus_step_progress_fn progress,
                                         void *user) {
  int64_t s = g->step;
  int k = talus_tiled_generation_steps(g, end);
  tiled_flight fl[2] = {{.p = -1, .t = g->buf}, {.p = -1, .t = g->spare}};
  tiled_prefetch(g, 0, s, k); /* unless the last generation did */
  int slot = 0;
  talus_status st = TALUS_OK;
  for (int p = 0; p < g->ntiles && !st; p++) {
    int due = 0;
    st = tiled_due(g, p, s, k, &due);
    if (st || !due) continue;
    st = tiled_launch(g, &fl[slot], slot, p, s, k);
    tiled_prefetch(g, p + 1, s, k); /* read while p computes, p - 1 lands */
    slot ^= 1;
    if (!st) st = tiled_land(g, &fl[slot], slot, s, k, stats, TILED_PUBLISH);
    if (!st) st = tiled_report(g, start, end, k, p, progress, user);
  }
  /* The last tile lands; after an error every slot is drained unpublished. */
  talus_status last =
      tiled_land(g, &fl[slot ^ 1], slot ^ 1, s, k, stats, st ? TILED_DRAIN : TILED_PUBLISH);
  if (!st) st = last;
  tiled_land(g, &fl[slot], slot, s, k, stats, TILED_DRAIN);
  if (!st) tiled_prefetch_next(g, g->ntiles - 1, s, k, end);
  return st ? st : talus_tiled_end_generation(g, k);
}

/* ---------------------------------------------------------------------
 * Tiles resident on the GPU (tiled.h): every tile in a device mirror of
 * its own for the whole talus_tiled_run, only strips moving between them
 * on the device. The store is touched at the run's two ends only: the
 * tiles are assembled from it (core and a ring of H, as for an advance)
 * and uploaded; at the end every tile publishes from its mirror what the
 * store path's last generation would (tiled_publish_device) and commits.
 * ------------------------------------------------------------------- */

/* Whether talus_tiled_run to `end` keeps the tiles on the GPU (*use): a
 * GPU run over a memory store whose tiles are all committed at the
 * current step, unless the caller says no, and (unless forced) only when
 * they fit in the device's memory. g->buf must exist (its shape is the
 * tiles'). */
static talus_status tiled_resident_choice(talus_tiled *g, int64_t end, int *use) {
  *use = 0;
  if (g->ctx.backend != TALUS_BACKEND_CUDA || g->gpu_resident == TALUS_TILED_GPU_RESIDENT_OFF ||
      g->step >= end || talus_store_get_kind(g->store) != TALUS_STORE_MEMORY)
    return TALUS_OK;
  for (int p = 0; p < g->ntiles; p++)
    if (talus_store_committed(g->store, p) != g->step) return TALUS_OK; /* a resumed generation */
  if (g->gpu_resident == TALUS_TILED_GPU_RESIDENT_ON) return (*use = 1), TALUS_OK;
  return talus_cuda_resident_fits(g->buf, g->ntiles, use);
}

/* Uploads every tile at the current step, with its ring of H, into its
 * device mirror (talus_cuda_resident_create's table). */
static talus_status tiled_device_load(talus_tiled *g) {
  talus_status st = talus_cuda_resident_create(g->ntiles);
  if (!st) st = talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st; p++) {
    st = tiled_assemble(g, p, g->step, g->H, g->buf);
    if (!st) st = talus_cuda_resident_upload(p, g->buf);
    if (st) st = talus_fail_context(st, "tile %d to the GPU", p);
  }
  return st;
}

/* What an exchange's strip copies into tile p share (a tiled_reads_ring visit). */
typedef struct exchange_visit {
  talus_tiled *g;
  int p;
  talus_rect buf; /* p's core grown by H: its mirror's buffer */
  size_t cells;
  talus_status st;
} exchange_visit;

static void exchange_strip(void *user, int q, int part) {
  exchange_visit *v = user;
  talus_rect strip = halo_strip_rect(talus_tiled_core(v->g, q), v->g->H, part);
  talus_rect r = talus_rect_intersect(strip, v->buf);
  if (!v->st) v->st = talus_cuda_resident_copy(v->p, q, r);
  v->cells += (size_t)r.w * r.h;
}

/* Fills every tile's ring (H wide) from its neighbours' mirrors: the
 * strips the store path would paste around it, copied on the device, all
 * before any tile advances, so each is read at the current step. Queued
 * on slot 0, which every slot waits for. The cells copied are checked
 * against the ring's area, as tiled_assemble checks its pastes. */
static talus_status tiled_device_exchange(talus_tiled *g) {
  talus_status st = talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st; p++) {
    talus_rect c = talus_tiled_core(g, p);
    exchange_visit v = {g, p, tiled_grow(g, c, g->H), 0, TALUS_OK};
    tiled_reads_ring(g, p, g->H, exchange_strip, &v);
    st = v.st;
    if (!st && v.cells + (size_t)c.w * c.h != (size_t)v.buf.w * v.buf.h)
      st = talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d: strips cover %zu of %d x %d cells", p,
                      v.cells + (size_t)c.w * c.h, v.buf.w, v.buf.h);
  }
  return st ? st : talus_cuda_fence();
}

/* Binds tile p's mirror to the slot over the buffer the store path would
 * assemble for k steps (the core grown by k·R), so the stages cover the
 * same regions and book the same sums, and queues the k steps. */
static talus_status tiled_launch_device(talus_tiled *g, tiled_flight *fl, int slot, int p,
                                        int64_t s, int k) {
  talus_rect core = talus_tiled_core(g, p), view = tiled_grow(g, core, k * g->R);
  talus_status st = talus_cuda_use_slot(slot);
  if (!st) st = talus_cuda_resident_bind(p, view);
  if (st) return talus_fail_context(st, "tile %d", p);
  memset(&fl->stats, 0, sizeof fl->stats);
  fl->p = p; /* in flight from here on, even if queueing fails */
  g->ctx.step = s;
  return talus_tiler_queue_bound(view, &g->ctx, core, k, &fl->stats);
}

/* One generation of resident tiles: exchange, then the tiles advance on
 * alternating slots (as tiled_generation_gpu, with no host work between),
 * each booked in index order as it lands. A cancel asked by progress is
 * noted in *cancel and honoured at the generation's end. */
static talus_status tiled_generation_device(talus_tiled *g, int64_t start, int64_t end,
                                            talus_run_stats *stats, talus_step_progress_fn progress,
                                            void *user, int *cancel) {
  int64_t s = g->step;
  int k = talus_tiled_generation_steps(g, end), slot = 0;
  tiled_flight fl[2] = {{.p = -1, .t = g->buf}, {.p = -1, .t = g->buf}};
  talus_status st = tiled_device_exchange(g);
  for (int p = 0; p < g->ntiles && !st; p++) {
    st = tiled_launch_device(g, &fl[slot], slot, p, s, k);
    slot ^= 1;
    if (!st) st = tiled_land(g, &fl[slot], slot, s, k, stats, TILED_BOOK);
    if (!st && tiled_report(g, start, end, k, p, progress, user)) *cancel = 1;
  }
  talus_status last =
      tiled_land(g, &fl[slot ^ 1], slot ^ 1, s, k, stats, st ? TILED_DRAIN : TILED_BOOK);
  if (!st) st = last;
  tiled_land(g, &fl[slot], slot, s, k, stats, TILED_DRAIN);
  if (!st) g->step = s + k;
  return st;
}

/* Brings the store up to the current step from the mirrors: each tile
 * publishes its core, strips and ledger and commits, then the blobs of
 * older steps go (what the store path's generations leave). */
static talus_status tiled_device_publish(talus_tiled *g, int64_t start) {
  talus_status st = g->step == start ? TALUS_OK : talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st && g->step != start; p++) {
    st = talus_cuda_resident_bind(p, tiled_grow(g, talus_tiled_core(g, p), g->H));
    if (!st) st = tiled_publish_device(g, p, g->step, HALO_TILE_FLAGS(g->buf));
  }
  for (int p = 0; p < g->ntiles && !st && g->step != start; p++)
    st = talus_store_drop_before(g->store, p, g->step);
  return st;
}

/* After an error: the grid goes back to what the store holds (the run's
 * start, or tiles already published at its end), ledgers included. */
static void tiled_device_rollback(talus_tiled *g) {
  int64_t lo = INT64_MAX;
  for (int p = 0; p < g->ntiles; p++) {
    int64_t at = g->step;
    if (!talus_tiled_resume_tile(g, p, &at) && at < lo) lo = at;
  }
  if (lo != INT64_MAX) g->step = lo;
}

/* talus_tiled_run with the tiles resident on the GPU. */
static talus_status tiled_run_device(talus_tiled *g, int64_t end, talus_run_stats *stats,
                                     talus_step_progress_fn progress, void *user) {
  int64_t start = g->step;
  int cancel = 0;
  talus_status st = tiled_device_load(g);
  while (!st && !cancel && g->step < end)
    st = tiled_generation_device(g, start, end, stats, progress, user, &cancel);
  if (!st) st = tiled_device_publish(g, start);
  if (st) {
    talus_status keep = st; /* the rollback's reads must not hide the error */
    tiled_device_rollback(g);
    st = keep;
  }
  talus_cuda_resident_free();
  if (!st && cancel)
    return talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled at step %lld (resumable)",
                      (long long)g->step);
  return st;
}

static talus_status tiled_generation(talus_tiled *g, int64_t start, int64_t end,
                                     talus_run_stats *stats, talus_step_progress_fn progress,
                                     void *user) {
  int k = talus_tiled_generation_steps(g, end);
  tiled_prefetch(g, 0, g->step, k); /* unless the last generation did */
  for (int p = 0; p < g->ntiles; p++) {
    tiled_prefetch(g, p + 1, g->step, k); /* read while p computes */
    talus_status st = talus_tiled_advance_one(g, p, k, stats);
    if (!st) st = tiled_report(g, start, end, k, p, progress, user);
    if (st) return st;
  }
  tiled_prefetch_next(g, g->ntiles - 1, g->step, k, end); /* all of it published now */
  return talus_tiled_end_generation(g, k);
}

talus_status talus_tiled_run(talus_tiled *g, int64_t end, talus_run_stats *stats,
                             talus_step_progress_fn progress, void *user) {
  int64_t start = g->step;
  int gpu = g->ctx.backend == TALUS_BACKEND_CUDA, resident = 0;
  talus_status bst = g->step < end ? tiled_buffers(g, 0) : TALUS_OK;
  if (!bst) bst = tiled_resident_choice(g, end, &resident);
  g->resident_used = !bst && resident;
  if (g->resident_used) return tiled_run_device(g, end, stats, progress, user);
  if (!bst && g->step < end) bst = tiled_buffers(g, gpu);
  if (bst) return bst;
  talus_status st = TALUS_OK;
  while (!st && g->step < end)
    st = gpu ? tiled_generation_gpu(g, start, end, stats, progress, user)
             : tiled_generation(g, start, end, stats, progress, user);
  /* a disk store's queued writes: on disk when the run returns */
  talus_status flushed = talus_store_flush(g->store);
  return st ? st : flushed;
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

talus_status talus_tiled_core_block(talus_tiled *g, int tile, const void **blob, size_t *n,
                                    void **hold) {
  *blob = *hold = NULL;
  *n = 0;
  if (!g->res) {
    talus_store_key key = {tile, talus_store_committed(g->store, tile), TALUS_PART_CORE};
    return talus_store_get_ref(g->store, key, blob, n, hold);
  }
  talus_rect c = talus_tiled_core(g, tile);
  if (!g->res[tile])
    return talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d was never loaded", tile);
  size_t bytes = halo_block_size(g->res[tile], c);
  void *cut = talus_store_blob_alloc(g->store, bytes);
  if (!cut) return talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for a %zu-byte block", bytes);
  talus_status st = halo_block_write(g->res[tile], c, cut, bytes);
  if (st) {
    talus_store_blob_release(g->store, cut);
    return st;
  }
  *blob = *hold = cut;
  *n = bytes;
  return TALUS_OK;
}

talus_status talus_tiled_read_core(talus_tiled *g, int tile, talus_tile *dst) {
  const void *blob = NULL;
  void *hold = NULL;
  size_t n = 0;
  talus_status st = talus_tile_reset(dst, talus_tiled_core(g, tile));
  if (!st) st = talus_tiled_core_block(g, tile, &blob, &n, &hold);
  if (!st) st = halo_block_paste(dst, blob, n);
  talus_store_blob_release(g->store, hold);
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
void talus_tiled_set_gpu_resident(talus_tiled *g, int mode) {
  g->gpu_resident = mode;
}
int talus_tiled_gpu_resident_used(const talus_tiled *g) {
  return g->resident_used;
}
void talus_tiled_flows_reduce(talus_tiled *g, void (*reduce)(double *table, int n, void *user),
                              void *user) {
  reduce(g->flows, g->ntiles * TALUS_FLOW_COUNT, user);
}
void talus_tiled_set_step(talus_tiled *g, int64_t step) {
  g->step = step;
}

void talus_tiled_reads(const talus_tiled *g, int p, int k, void (*fn)(void *, int, int),
                       void *user) {
  tiled_reads_ring(g, p, tiled_ring(g, k), fn, user);
}

talus_status talus_tiled_load_tile(talus_tiled *g, int p, const talus_tile_source *src) {
  talus_rect c = talus_tiled_core(g, p);
  talus_tile *t = g->buf;
  talus_status st = tiled_buffers(g, 0);
  if (!st) st = g->res ? tiled_resident(g, p, &t) : talus_tile_reset(g->buf, c);
  if (!st) st = src->fill(src->user, t, c);
  if (!st) st = tiled_publish(g, p, g->step, t);
  return st ? talus_fail_context(st, "building tile %d", p) : TALUS_OK;
}

talus_status talus_tiled_advance_one(talus_tiled *g, int p, int k, talus_run_stats *stats) {
  int64_t s = g->step;
  int due = 0;
  talus_status st = tiled_due(g, p, s, k, &due);
  if (st || !due) return st;
  st = tiled_buffers(g, 0);
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
