/*
 * tiled.h — the generation scheduler: a domain as a grid of tiles kept in
 * a store (memory or zstd files on disk), advanced K steps per generation
 * (the core size, K and the store kind are plan.h's choice).
 *
 * Generation at step s (k = min(K, steps left)):
 *   for each tile p whose committed step is s:
 *     buffer = core(p) grown by the ring k·R (R = talus_step_radius),
 *              clipped to the domain; paste core(p) at step s and, from
 *              every tile q whose core meets the buffer, q's edge strip
 *              facing p at step s;
 *     advance k steps, booking only core cells in the ledger;
 *     put core(p), its 8 strips (width H = K·R) and its cumulative ledger
 *     at step s+k; then commit s+k for p.
 *   when every tile is at s+k, drop everything older than s+k.
 * After k steps the core is exact because every stage shrinks the updated
 * region by its radius on interior edges (tiler.c), and halo cells come
 * from the neighbours' cores at the same step. Hence tiled == monolithic,
 * bit for bit, for any core size and K.
 *
 * Resident tiles (CPU over a memory store): each tile keeps its own buffer,
 * its core grown by H, holding persistent fields only. Its core never
 * leaves it: a generation pastes just the neighbours' strips into the ring
 * (always H wide, so the buffer never moves), advances the buffer in
 * place with the one advance buffer's scratch lent to it
 * (talus_tile_swap_scratch), and publishes only the strips. So no core is
 * cut or pasted per generation; a core leaves only when read back
 * (talus_tiled_core_block). The bytes are those of the store path: the
 * core cells hold what a paste of their block would give them, since
 * every slot at or above a cell's count holds its reset value in both (the
 * kernels keep slots they vacate reset, as a monolithic run relies on).
 * The disk store keeps the path above: it exists to hold what memory
 * cannot.
 *
 * Tiles resident on the GPU (talus_tiled_run on the GPU over a memory
 * store, when every tile fits in the device's memory with a margin —
 * talus_cuda_resident_fits, from cudaMemGetInfo — or when forced with
 * talus_tiled_set_gpu_resident): the same idea on the device. At the
 * run's start each tile is assembled from the store (core and a ring of
 * H) and uploaded once into a device mirror of its own. A generation then
 * (1) copies on the device, into every tile's ring, the strips of its
 * neighbours' cores that the path above would paste (tiled_reads_ring,
 * talus_cuda_resident_copy), all before any tile advances, so each strip
 * is read at step s; (2) advances the tiles in place on two alternating
 * CUDA slots, each over a view of its mirror that is exactly the buffer
 * the path above assembles (core grown by k·R), so every stage covers
 * the same region and the ledger's sums run in the same order; (3) books
 * each tile's flows as it lands. Nothing crosses to the host between
 * generations. The store is brought up to date when the run ends (or is
 * cancelled, at the end of the generation under way): every tile packs
 * its core and strips on the device and publishes them with its ledger
 * (tiled_publish_device), leaving the store exactly as the path above
 * would; so every reader of the grid (talus_tiled_read_core,
 * talus_tiled_core_block, output streaming, resume, the per-tile calls)
 * sees the store, and the mirrors are freed. An error rolls the grid
 * back to the store. A run that does not fit, a disk store, a resumed
 * half-generation and the per-tile calls (mpi/) take the path below.
 *
 * The GPU path without resident tiles (the fallback): every generation
 * each tile is assembled on the host, uploaded, advanced, and its core
 * and strips packed on the device and brought back to the store.
 *
 * Crash safety: the step is part of every blob's name, so a tile's step-s
 * core and strips survive until the whole generation is committed; a run
 * killed anywhere resumes from the manifest and recomputes only tiles not
 * yet committed, giving the bytes of an uninterrupted run. (A memory store
 * does not outlive its process, so resident tiles lose nothing by it.)
 *
 * Concurrency: tiles of a generation are advanced one after another; each
 * advance is parallel inside (OpenMP over rows), and so are the cut and
 * paste of large blocks (halo.c). Over a disk store the store's own
 * threads work beside them (io/store/store.h, "Write-behind and
 * read-ahead"; turned on by talus_tiled_create, unless the caller made the
 * store synchronous first): the blobs a tile publishes are compressed and
 * written by the store's writer thread while the next tile computes, and
 * while tile p computes a reader thread decompresses what p + 1 will
 * paste (tiled_prefetch: its core and the strips of tiled_reads_ring; after
 * the last tile, tile 0 of the next generation). On the GPU the same
 * read-ahead runs while tile p computes on the device and p - 1 lands.
 * The grid's own state (buffers, flows, step) is touched by the calling
 * thread only; the store's threads see nothing but blobs handed over to
 * the store (put_owned) and keys. talus_tiled_run returns once the queued
 * writes are on disk (talus_store_flush), so what it reports, and a
 * resume after it, see the store as a synchronous one would leave it; a
 * kill before that leaves what a synchronous run leaves at an earlier
 * point, which a resume completes to the same bytes.
 *
 * Cost outside the stages (a tiled run should cost little more than one
 * piece; benchmarks/RESULTS.md has the ratios):
 * - No whole-buffer reset per tile: the core and the neighbours' strips
 *   cover the grown buffer exactly once, so they are pasted with
 *   halo_block_paste_fill (every slot written, the unused ones with their
 *   reset value) after talus_tile_retarget (row padding only); the count
 *   of cells pasted is checked against the buffer's area.
 * - No copies through the store: blocks are cut straight into buffers
 *   from the store's pool and handed over (talus_store_put_owned); the
 *   memory store indexes them as they are, and gets read them in place
 *   (talus_store_get_ref). The store recycles dropped buffers
 *   (talus_store_set_recycle), so a generation reuses the previous one's
 *   pages instead of faulting in fresh ones.
 * - Resident tiles (above) move only strips: about 4H/core of a core's
 *   bytes per generation instead of twice the core; on the GPU they move
 *   on the device and never reach the host until the run ends.
 */
#ifndef TALUS_TILER_TILED_H
#define TALUS_TILER_TILED_H

#include "io/store/store.h"
#include "tiler.h"

/* Fills the persistent fields of global rectangle r of tile t (r lies
 * inside t->buf, which was reset to empty columns) with the initial state. */
typedef struct talus_tile_source {
  talus_status (*fill)(void *user, talus_tile *t, talus_rect r);
  void *user;
} talus_tile_source;

typedef struct talus_tiled talus_tiled;

/* Plans a tile grid of `core`-sized cores (partial tiles at the far edges)
 * over the domain of ctx, K steps per generation, over `store` (borrowed).
 * ctx->step is the step the run starts from. */
talus_status talus_tiled_create(talus_tiled **out, const talus_kctx *ctx, int core, int K,
                                talus_store *store);
void talus_tiled_free(talus_tiled *g);

/* Per-cell inputs a stage reads that never change during a run and do not
 * travel in blocks (the rain map, t->rain; heightfield.grade_share's input
 * drop, t->grade_in): after tiled_assemble has filled a buffer r (core
 * and ring), inputs->fill(user, t, r) fills them over the whole of r from
 * the run's own source, so every cell, halo included, holds what the
 * one-piece run holds there. A resident buffer
 * (CPU over a memory store; it never moves) is filled once, at its first
 * assembly; the advance buffers of the store path and the GPU at every
 * assembly. The fill allocates the planes it fills (talus_tile_ensure).
 * NULL or a NULL fill: none. Set before talus_tiled_run. */
void talus_tiled_set_inputs(talus_tiled *g, const talus_tile_source *inputs);
/* Builds every tile from src at the start step and commits it. */
talus_status talus_tiled_load(talus_tiled *g, const talus_tile_source *src);
/* Picks up a store left by a killed run: every tile must be committed at
 * the generation's start or end. Sets the current step. */
talus_status talus_tiled_resume(talus_tiled *g);

/* Advances the whole domain to step `end`; progress (may be NULL) gets
 * steps done within this call. Stats gain stage times and cell-steps of
 * the work done now. */
talus_status talus_tiled_run(talus_tiled *g, int64_t end, talus_run_stats *stats,
                             talus_step_progress_fn progress, void *user);

/* Pastes the committed core of tile `tile` into dst (reset to the core). */
talus_status talus_tiled_read_core(talus_tiled *g, int tile, talus_tile *dst);
/* The committed core of tile `tile` as a halo block: read in place from
 * the store, or cut from the tile's resident buffer. Pass *hold to
 * talus_store_blob_release(talus_tiled_store(g), *hold) when done. */
talus_status talus_tiled_core_block(talus_tiled *g, int tile, const void **blob, size_t *n,
                                    void **hold);

/* Whether talus_tiled_run on the GPU may keep the tiles resident on the
 * device (tiled.h): AUTO (the default) when they fit, ON whenever the
 * store allows (for tests and benchmarks; a tile that does not fit then
 * fails the run), OFF never (the host-staged path). Ignored off the GPU. */
enum {
  TALUS_TILED_GPU_RESIDENT_AUTO = 0,
  TALUS_TILED_GPU_RESIDENT_ON,
  TALUS_TILED_GPU_RESIDENT_OFF
};
void talus_tiled_set_gpu_resident(talus_tiled *g, int mode);
/* 1 when the last talus_tiled_run kept its tiles resident on the GPU. */
int talus_tiled_gpu_resident_used(const talus_tiled *g);

/* Grid facts. */
int talus_tiled_count(const talus_tiled *g);
talus_rect talus_tiled_core(const talus_tiled *g, int tile);
int talus_tiled_halo(const talus_tiled *g);     /* H = K·R */
int64_t talus_tiled_step(const talus_tiled *g); /* step all tiles are committed at */
/* Ledger flows (heights, m) summed over all tiles, at their committed step. */
void talus_tiled_flows(const talus_tiled *g, double flows[TALUS_FLOW_COUNT]);
/* Frees the advance buffer (core + halo, the largest allocation) while
 * the grid is only read back; load and run allocate it again. */
void talus_tiled_trim(talus_tiled *g);
/* A tile buffer big enough for any core of the grid (for reading back). */
talus_status talus_tiled_core_buffer(const talus_tiled *g, talus_tile **out);

/* ---------------------------------------------------------------------
 * For drivers that schedule tiles themselves (mpi/: each rank advances
 * the tiles it owns and moves strips between ranks). The rules of the
 * generation above stay those of talus_tiled_run.
 * ------------------------------------------------------------------- */

/* Tile grid size in tiles, and K. talus_tiled_load, _run and _resume are
 * built from the per-tile calls below, so a driver that schedules tiles
 * itself (mpi/) does exactly what one process does. */
void talus_tiled_grid(const talus_tiled *g, int *ntx, int *nty);
int talus_tiled_steps_per_exchange(const talus_tiled *g);
/* Steps k of the generation that starts at the current step on the way
 * to step `end`: K, or fewer for the last one. */
int talus_tiled_generation_steps(const talus_tiled *g, int64_t end);
/* The store the grid was created over. */
talus_store *talus_tiled_store(const talus_tiled *g);
/* Calls fn(user, q, part) for every strip (tile q, part) that tile p reads
 * in a generation of k steps (what talus_tiled_run pastes around p). */
void talus_tiled_reads(const talus_tiled *g, int p, int k, void (*fn)(void *, int, int),
                       void *user);
/* Builds tile p from src at the current step and commits it. */
talus_status talus_tiled_load_tile(talus_tiled *g, int p, const talus_tile_source *src);
/* Advances tile p from the current step by k (a no-op when p is already
 * committed at step + k, as after a resume). */
talus_status talus_tiled_advance_one(talus_tiled *g, int p, int k, talus_run_stats *stats);
/* Ends the generation once every tile is at step + k: drops older blobs of
 * every tile and moves the current step to step + k. */
talus_status talus_tiled_end_generation(talus_tiled *g, int k);
/* Loads tile p's ledger at its committed step, which goes to *at. */
talus_status talus_tiled_resume_tile(talus_tiled *g, int p, int64_t *at);
void talus_tiled_set_step(talus_tiled *g, int64_t step);
/* Lends the per-tile ledger flows, [tiles][TALUS_FLOW_COUNT] (n doubles), to
 * `reduce` for the length of the call (MPI sums them across ranks in
 * place); the table stays the tiler's and no pointer to it outlives the
 * call. */
void talus_tiled_flows_reduce(talus_tiled *g, void (*reduce)(double *table, int n, void *user),
                              void *user);

#endif /* TALUS_TILER_TILED_H */
