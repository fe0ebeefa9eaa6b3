/*
 * tiled.c — the generation scheduler over a store (design in tiled.h).
 */
#include "tiled.h"

#include "halo/halo.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define TILED_PART_LEDGER 9 /* a tile's cumulative ledger flows */

/* A tile queued on a CUDA slot (the GPU pipelines below). */
typedef struct tiled_flight {
  int p; /* the tile in flight on this slot, -1 when none */
  talus_tile *t;
  talus_run_stats stats;
} tiled_flight;

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
  /* While tiles are resident on the GPU (talus_tiled_device_begin .. _end), else NULL: */
  uint8_t *dev;       /* [ntiles] 1 for a tile in a device mirror of its own (this
                       * process's tiles); the others' strips come through the store */
  size_t *dev_cells;  /* [ntiles] ring cells filled in the generation under way */
  tiled_flight fl[2]; /* the tiles in flight on the two CUDA slots */
  int fl_slot;        /* the slot the next tile goes to */
  int64_t dev_start;  /* the step the tiles were uploaded at */
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
 * k steps: k·R, or H for resident tiles (on the CPU, or on the GPU
 * between talus_tiled_device_begin and _end), whose buffers stay grown by H
 * (the last, shorter generation then computes a wider ring than it needs,
 * on step-s data, which changes nothing in the core). */
static int tiled_ring(const talus_tiled *g, int k) {
  return g->res || g->dev ? g->H : k * g->R;
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
  free(g->flows);
  free(g->dev); /* only after a talus_tiled_device_begin without its end */
  free(g->dev_cells);
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

/* Packs global rectangles r[0..n) (n <= TALUS_HALO_PARTS) of the tile on
 * the GPU's current slot into halo blocks on the device: only they come
 * back to the host. blobs[i] (bytes[i] bytes, halo_block_write's) come
 * from the store's pool and are the caller's, to put or release; all
 * NULL on failure. */
static talus_status tiled_pack_device(talus_tiled *g, const talus_rect *r, int n, int flags,
                                      unsigned char **blobs, size_t *bytes) {
  int layers[TALUS_HALO_PARTS];
  const void *body[TALUS_HALO_PARTS];
  memset(blobs, 0, (size_t)n * sizeof *blobs);
  talus_status st = talus_cuda_block_layers(r, n, layers);
  if (!st) st = talus_cuda_pack_blocks(r, layers, n, body);
  for (int i = 0; i < n && !st; i++) {
    bytes[i] = halo_block_bytes(r[i].w, r[i].h, layers[i], flags);
    blobs[i] = talus_store_blob_alloc(g->store, bytes[i]);
    if (!blobs[i])
      st = talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for a %zu-byte block", bytes[i]);
    if (st) break;
    halo_block_header(blobs[i], r[i], layers[i], flags);
    tiled_copy(blobs[i] + HALO_HEADER_BYTES, body[i], bytes[i] - HALO_HEADER_BYTES);
  }
  for (int i = 0; i < n && st; i++) {
    talus_store_blob_release(g->store, blobs[i]);
    blobs[i] = NULL;
  }
  return st;
}

/* tiled_publish for a tile on the GPU's current slot: its blocks are
 * packed on the device (tiled_pack_device) and put into the store. */
static talus_status tiled_publish_device(talus_tiled *g, int p, int64_t step, int flags) {
  talus_rect r[TALUS_HALO_PARTS];
  unsigned char *blobs[TALUS_HALO_PARTS];
  size_t bytes[TALUS_HALO_PARTS];
  int n = tiled_publish_rects(g, p, r);
  talus_status st = tiled_pack_device(g, r, n, flags, blobs, bytes);
  for (int i = 0; i < n && !st; i++) {
    st = talus_store_put_owned(g->store, (talus_store_key){p, step, i}, blobs[i], bytes[i], 1);
    blobs[i] = NULL; /* the store's now, whatever the outcome */
  }
  for (int i = 0; i < n && st; i++)
    talus_store_blob_release(g->store, blobs[i]); /* those not handed over after a failure */
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
  int slot = 0;
  talus_status st = TALUS_OK;
  for (int p = 0; p < g->ntiles && !st; p++) {
    int due = 0;
    st = tiled_due(g, p, s, k, &due);
    if (st || !due) continue;
    st = tiled_launch(g, &fl[slot], slot, p, s, k);
    slot ^= 1;
    if (!st) st = tiled_land(g, &fl[slot], slot, s, k, stats, TILED_PUBLISH);
    if (!st) st = tiled_report(g, start, end, k, p, progress, user);
  }
  /* The last tile lands; after an error every slot is drained unpublished. */
  talus_status last =
      tiled_land(g, &fl[slot ^ 1], slot ^ 1, s, k, stats, st ? TILED_DRAIN : TILED_PUBLISH);
  if (!st) st = last;
  tiled_land(g, &fl[slot], slot, s, k, stats, TILED_DRAIN);
  return st ? st : talus_tiled_end_generation(g, k);
}

/* ---------------------------------------------------------------------
 * Tiles resident on the GPU (tiled.h): the tiles of this process (all of
 * them, or a rank's own under mpi/) each in a device mirror of its own
 * from talus_tiled_device_begin to talus_tiled_device_end, only strips
 * moving between them on the device. The store is touched at the two
 * ends only, besides the strips of tiles resident elsewhere: a tile is
 * uploaded from its core in the store; at the end every tile publishes
 * from its mirror what the store path's last generation would
 * (tiled_publish_device) and commits. Under mpi/ the strips a rank sends
 * are packed from its mirrors (talus_tiled_strip_block), and those it
 * receives, which the driver puts into the store under their owners'
 * keys as before, are pasted into the reader's ring on the device just
 * before it advances (tiled_device_fill).
 * ------------------------------------------------------------------- */

/* Whether the tiles of `own` (NULL: all) may stay on the GPU on the way
 * to `end` (*use): a GPU run over a memory store whose tiles are all
 * committed at the current step, unless the caller says no, and (unless
 * forced) only when they fit in the device's memory, shared by `share`
 * processes that hold as many. g->buf must exist (its shape is the
 * tiles'). A process without tiles has no objection. */
static talus_status tiled_resident_choice(talus_tiled *g, int64_t end, const uint8_t *own,
                                          int share, int *use) {
  int n = 0;
  *use = 0;
  if (g->ctx.backend != TALUS_BACKEND_CUDA || g->gpu_resident == TALUS_TILED_GPU_RESIDENT_OFF ||
      g->step >= end || talus_store_get_kind(g->store) != TALUS_STORE_MEMORY)
    return TALUS_OK;
  for (int p = 0; p < g->ntiles; p++) {
    if (own && !own[p]) continue;
    if (talus_store_committed(g->store, p) != g->step) return TALUS_OK; /* a resumed generation */
    n++;
  }
  if (!n || g->gpu_resident == TALUS_TILED_GPU_RESIDENT_ON) return (*use = 1), TALUS_OK;
  return talus_cuda_resident_fits(g->buf, n * (share > 1 ? share : 1), use);
}

/* Frees the mirrors and the tables of resident tiles. */
static void tiled_device_forget(talus_tiled *g) {
  talus_cuda_resident_free();
  free(g->dev);
  free(g->dev_cells);
  g->dev = NULL;
  g->dev_cells = NULL;
}

/* Uploads every resident tile at the current step into its device mirror
 * (talus_cuda_resident_create's table): its core grown by H, the core
 * from the store and the ring as a reset leaves it, since every
 * generation fills the whole ring before the tile advances (checked by
 * tiled_device_fill). */
static talus_status tiled_device_load(talus_tiled *g) {
  talus_status st = talus_cuda_resident_create(g->ntiles);
  if (!st) st = talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st; p++) {
    size_t cells = 0;
    if (!g->dev[p]) continue;
    st = talus_tile_reset(g->buf, tiled_grow(g, talus_tiled_core(g, p), g->H));
    if (!st) st = tiled_paste(g, (talus_store_key){p, g->step, TALUS_PART_CORE}, g->buf, &cells);
    if (!st) st = talus_cuda_resident_upload(p, g->buf);
    if (st) st = talus_fail_context(st, "tile %d to the GPU", p);
  }
  return st;
}

/* What the strip pastes into tile p's ring share (a tiled_reads_ring
 * visit): the strips of resident tiles (local = 1) or of the others. */
typedef struct ring_visit {
  talus_tiled *g;
  int p, local;
  talus_rect buf; /* p's core grown by H: its mirror's buffer */
  talus_status st;
} ring_visit;

/* Owns the route of one strip (q, part) into p's ring: copied on the
 * device from q's mirror when q is resident here, else pasted from the
 * block the store holds for it at the current step. */
static void ring_strip(void *user, int q, int part) {
  ring_visit *v = user;
  talus_tiled *g = v->g;
  if (v->st || !g->dev[q] != !v->local) return;
  if (v->local) {
    talus_rect r =
        talus_rect_intersect(halo_strip_rect(talus_tiled_core(g, q), g->H, part), v->buf);
    v->st = talus_cuda_resident_copy(v->p, q, r);
    g->dev_cells[v->p] += (size_t)r.w * r.h;
    return;
  }
  const void *blob = NULL;
  void *hold = NULL;
  size_t n = 0, cells = 0;
  v->st = talus_store_get_ref(g->store, (talus_store_key){q, g->step, part}, &blob, &n, &hold);
  if (!v->st) v->st = talus_cuda_resident_paste(v->p, blob, n, &cells);
  talus_store_blob_release(g->store, hold);
  g->dev_cells[v->p] += cells;
}

/* Visits the strips of p's ring (H wide) from resident tiles (local = 1)
 * or from the others, queuing each on the current slot. */
static talus_status tiled_device_ring(talus_tiled *g, int p, int local) {
  ring_visit v = {g, p, local, tiled_grow(g, talus_tiled_core(g, p), g->H), TALUS_OK};
  tiled_reads_ring(g, p, g->H, ring_strip, &v);
  return v.st;
}

/* Fills every resident tile's ring with the strips of the resident
 * tiles, copied on the device, all before any tile advances, so each is
 * read at the current step. Queued on slot 0, which every slot waits for. */
static talus_status tiled_device_exchange(talus_tiled *g) {
  talus_status st = talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st; p++) {
    if (!g->dev[p]) continue;
    g->dev_cells[p] = 0;
    st = tiled_device_ring(g, p, 1);
  }
  return st ? st : talus_cuda_fence();
}

/* Pastes into tile p's ring, on the current slot, the strips of tiles
 * resident elsewhere (none in one process), then checks that the ring's
 * strips and the core covered its buffer, as tiled_assemble checks its
 * pastes. */
static talus_status tiled_device_fill(talus_tiled *g, int p) {
  talus_rect c = talus_tiled_core(g, p), b = tiled_grow(g, c, g->H);
  talus_status st = tiled_device_ring(g, p, 0);
  size_t cells = g->dev_cells[p] + (size_t)c.w * c.h;
  if (!st && cells != (size_t)b.w * b.h)
    st = talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d: strips cover %zu of %d x %d cells", p,
                    cells, b.w, b.h);
  return st;
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

/* Queues resident tile p's k steps from step s on the next slot, its
 * ring completed first (tiled_device_fill), then lands the tile queued
 * before it on the other slot, booked: the GPU computes one tile while
 * the host queues the next (as tiled_generation_gpu, with no host work
 * between). */
static talus_status tiled_device_advance(talus_tiled *g, int p, int64_t s, int k,
                                         talus_run_stats *stats) {
  int slot = g->fl_slot;
  talus_status st = talus_cuda_use_slot(slot);
  if (!st) st = tiled_device_fill(g, p);
  if (!st) st = tiled_launch_device(g, &g->fl[slot], slot, p, s, k);
  g->fl_slot ^= 1;
  talus_status prev =
      tiled_land(g, &g->fl[slot ^ 1], slot ^ 1, s, k, stats, st ? TILED_DRAIN : TILED_BOOK);
  return st ? st : prev;
}

/* Lands the tiles still in flight, the older first: booked (TILED_BOOK)
 * or, after an error, dropped (TILED_DRAIN). */
static talus_status tiled_device_land_all(talus_tiled *g, int64_t s, int k, talus_run_stats *stats,
                                          int what) {
  int older = g->fl_slot ^ 1;
  talus_status st = tiled_land(g, &g->fl[older], older, s, k, stats, what);
  talus_status last =
      tiled_land(g, &g->fl[older ^ 1], older ^ 1, s, k, stats, st ? TILED_DRAIN : what);
  return st ? st : last;
}

/* One generation of resident tiles in one process: exchange, then every
 * tile advances, each booked as it lands. A cancel asked by progress is
 * noted in *cancel and honoured at the generation's end. */
static talus_status tiled_generation_device(talus_tiled *g, int64_t start, int64_t end,
                                            talus_run_stats *stats, talus_step_progress_fn progress,
                                            void *user, int *cancel) {
  int64_t s = g->step;
  int k = talus_tiled_generation_steps(g, end);
  talus_status st = tiled_device_exchange(g);
  for (int p = 0; p < g->ntiles && !st; p++) {
    st = tiled_device_advance(g, p, s, k, stats);
    if (!st && tiled_report(g, start, end, k, p, progress, user)) *cancel = 1;
  }
  talus_status last = tiled_device_land_all(g, s, k, stats, st ? TILED_DRAIN : TILED_BOOK);
  if (!st) st = last;
  if (!st) g->step = s + k;
  return st;
}

/* Brings the store up to the current step from the mirrors: each
 * resident tile publishes its core, strips and ledger and commits, then
 * its blobs of older steps go (what the store path's generations leave). */
static talus_status tiled_device_publish(talus_tiled *g) {
  if (g->step == g->dev_start) return TALUS_OK;
  talus_status st = talus_cuda_use_slot(0);
  for (int p = 0; p < g->ntiles && !st; p++) {
    if (!g->dev[p]) continue;
    st = talus_cuda_resident_bind(p, tiled_grow(g, talus_tiled_core(g, p), g->H));
    if (!st) st = tiled_publish_device(g, p, g->step, HALO_TILE_FLAGS(g->buf));
  }
  for (int p = 0; p < g->ntiles && !st; p++)
    if (g->dev[p]) st = talus_store_drop_before(g->store, p, g->step);
  return st;
}

/* After an error: the grid goes back to what the store holds of the
 * resident tiles (the run's start, or tiles already published at its
 * end), ledgers included. */
static void tiled_device_rollback(talus_tiled *g) {
  int64_t lo = INT64_MAX;
  for (int p = 0; p < g->ntiles; p++) {
    int64_t at = g->step;
    if (g->dev[p] && !talus_tiled_resume_tile(g, p, &at) && at < lo) lo = at;
  }
  if (lo != INT64_MAX) g->step = lo;
}

talus_status talus_tiled_device_choose(talus_tiled *g, int64_t end, const uint8_t *own, int share,
                                       int *use) {
  talus_status st = g->step < end ? tiled_buffers(g, 0) : TALUS_OK;
  *use = g->resident_used = 0;
  return st ? st : tiled_resident_choice(g, end, own, share, use);
}

talus_status talus_tiled_device_begin(talus_tiled *g, const uint8_t *own) {
  g->dev = calloc((size_t)g->ntiles, 1);
  g->dev_cells = calloc((size_t)g->ntiles, sizeof *g->dev_cells);
  talus_status st = g->dev && g->dev_cells && g->buf
                        ? TALUS_OK
                        : talus_fail(TALUS_ERR_NOMEM, "tiler", "no memory for the tile tables");
  for (int p = 0; p < g->ntiles && !st; p++)
    g->dev[p] = !own || own[p];
  g->dev_start = g->step;
  g->fl[0] = g->fl[1] = (tiled_flight){.p = -1, .t = g->buf};
  g->fl_slot = 0;
  if (!st) st = tiled_device_load(g);
  if (st) /* the store is as it was */
    tiled_device_forget(g);
  g->resident_used = !st;
  return st;
}

talus_status talus_tiled_device_end(talus_tiled *g, int publish) {
  if (!g->dev) return TALUS_OK;
  tiled_device_land_all(g, g->step, 0, NULL, TILED_DRAIN); /* only after an error */
  talus_status st = publish ? tiled_device_publish(g) : TALUS_OK;
  if (!publish || st) {
    talus_status keep = st; /* the rollback's reads must not hide the error */
    tiled_device_rollback(g);
    st = keep;
  }
  tiled_device_forget(g);
  return st;
}

/* talus_tiled_run with the tiles resident on the GPU (talus_tiled_device_begin done). */
static talus_status tiled_run_device(talus_tiled *g, int64_t end, talus_run_stats *stats,
                                     talus_step_progress_fn progress, void *user) {
  int64_t start = g->step;
  int cancel = 0;
  talus_status st = TALUS_OK;
  while (!st && !cancel && g->step < end)
    st = tiled_generation_device(g, start, end, stats, progress, user, &cancel);
  talus_status last = talus_tiled_device_end(g, !st);
  if (!st) st = last;
  if (!st && cancel)
    return talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled at step %lld (resumable)",
                      (long long)g->step);
  return st;
}

static talus_status tiled_generation(talus_tiled *g, int64_t start, int64_t end,
                                     talus_run_stats *stats, talus_step_progress_fn progress,
                                     void *user) {
  int k = talus_tiled_generation_steps(g, end);
  for (int p = 0; p < g->ntiles; p++) {
    talus_status st = talus_tiled_advance_one(g, p, k, stats);
    if (!st) st = tiled_report(g, start, end, k, p, progress, user);
    if (st) return st;
  }
  return talus_tiled_end_generation(g, k);
}

talus_status talus_tiled_run(talus_tiled *g, int64_t end, talus_run_stats *stats,
                             talus_step_progress_fn progress, void *user) {
  int64_t start = g->step;
  int gpu = g->ctx.backend == TALUS_BACKEND_CUDA, resident = 0;
  talus_status bst = talus_tiled_device_choose(g, end, NULL, 1, &resident);
  if (!bst && resident) {
    bst = talus_tiled_device_begin(g, NULL);
    if (!bst) return tiled_run_device(g, end, stats, progress, user);
  }
  if (!bst && g->step < end) bst = tiled_buffers(g, gpu);
  if (bst) return bst;
  while (g->step < end) {
    talus_status st = gpu ? tiled_generation_gpu(g, start, end, stats, progress, user)
                          : tiled_generation(g, start, end, stats, progress, user);
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
  talus_status st = TALUS_OK;
  if (g->dev) { /* resident on the GPU: committed at the run's start until its end */
    st = g->dev[p] ? tiled_device_advance(g, p, s, k, stats)
                   : talus_fail(TALUS_ERR_INTERNAL, "tiler", "tile %d is not resident here", p);
  } else {
    st = tiled_due(g, p, s, k, &due);
    if (st || !due) return st;
    st = tiled_buffers(g, 0);
    if (!st) st = tiled_advance_tile(g, p, s, k, stats);
  }
  if (st)
    return talus_fail_context(st, "tile %d, steps %lld..%lld", p, (long long)s, (long long)(s + k));
  return TALUS_OK;
}

talus_status talus_tiled_advance_wait(talus_tiled *g, int k, talus_run_stats *stats) {
  return g->dev ? tiled_device_land_all(g, g->step, k, stats, TILED_BOOK) : TALUS_OK;
}

talus_status talus_tiled_device_exchange(talus_tiled *g) {
  return g->dev ? tiled_device_exchange(g) : TALUS_OK;
}

talus_status talus_tiled_strip_block(talus_tiled *g, int q, int part, const void **blob, size_t *n,
                                     void **hold) {
  *blob = *hold = NULL;
  *n = 0;
  if (!g->dev || !g->dev[q])
    return talus_store_get_ref(g->store, (talus_store_key){q, g->step, part}, blob, n, hold);
  talus_rect c = talus_tiled_core(g, q), r = halo_strip_rect(c, g->H, part);
  unsigned char *b = NULL;
  size_t bytes = 0;
  talus_status st = talus_cuda_use_slot(0); /* nothing in flight between generations */
  if (!st) st = talus_cuda_resident_bind(q, tiled_grow(g, c, g->H));
  if (!st) st = tiled_pack_device(g, &r, 1, HALO_TILE_FLAGS(g->buf), &b, &bytes);
  if (st) return talus_fail_context(st, "strip %d of tile %d", part, q);
  *blob = *hold = b;
  *n = bytes;
  return TALUS_OK;
}

talus_status talus_tiled_end_generation(talus_tiled *g, int k) {
  for (int p = 0; p < g->ntiles; p++) {
    if (g->dev && g->dev[p]) continue; /* its blobs stay at the run's start until device_end */
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
