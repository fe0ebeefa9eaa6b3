/*
 * tiler.h — the run's driver. Plans which rectangle each stage must update
 * and advances tiles step by step through the stage plan.
 *
 * The family: tiler.h (a tile's advance), tiled.h (the generation
 * scheduler over a store), plan.h (one piece or tiled, core size, K and
 * store kind, from numbers alone), volumes.h (the ledger's volumes summed
 * tile by tile).
 *
 * Regions (the libvips rule): a result asks for its inputs grown by the
 * reach of what computes it. The reach of an advance is the sum of the
 * radii of all its stages (at most steps · R, R = talus_step_radius; less
 * on the steps without a support cycle's end); a tile buffer whose halo on
 * every interior edge is at least that stays exact in its core. Each stage
 * updates the core grown by the reach of the stages after it, clipped to
 * the buffer: no kernel reads outside the buffer, and no cell is computed
 * that the core's result does not need. A tile covering the whole domain
 * updates every cell.
 */
#ifndef TALUS_TILER_H
#define TALUS_TILER_H

#include "kernels/cpu/cpu.h"
#include "kernels/cuda/cuda.h"
#include "kernels/stages.h"

/* Per-run accounting the driver adds to. */
typedef struct talus_run_stats {
  double flows[TALUS_FLOW_COUNT];          /* ledger flows, heights [m] summed over cells */
  double stage_seconds[TALUS_STAGE_COUNT]; /* wall time per stage */
  int64_t cell_steps;                      /* cells × steps advanced (core cells) */
} talus_run_stats;

/* Progress of a run in steps; return 0 to cancel (checked between steps). */
typedef int (*talus_step_progress_fn)(int64_t done, int64_t total, void *user);

/*
 * Advances tile t by `steps` steps starting at global step c->step (which it
 * advances). The tile must be exact (halo filled) for `steps` steps: its
 * halo on interior edges must be at least the steps' reach (above; at most
 * steps * talus_step_radius()), else TALUS_ERR_INTERNAL.
 * On cancel returns TALUS_ERR_CANCELLED with c->step at the last completed
 * step. `core` is the rectangle whose cells count towards cell_steps.
 * Stages run on c->backend; on the GPU the tile is uploaded first and its
 * persistent fields downloaded at the end (after a cancel too).
 */
talus_status talus_tiler_advance(talus_tile *t, talus_kctx *c, talus_rect core, int64_t steps,
                                 talus_run_stats *stats, talus_step_progress_fn progress,
                                 void *user);

/*
 * talus_tiler_advance split in two for the GPU pipeline of tiled runs
 * (tiled.c): queue uploads t to the current CUDA slot (talus_cuda_use_slot),
 * queues `steps` steps and returns without waiting; collect waits for that
 * slot and adds its flows and stage times to stats (cell_steps are added
 * at queue time). The result stays on the device (read it back with
 * talus_cuda_download or talus_cuda_pack_blocks). Between the two, t must
 * not be touched; after an error of queue, collect must still be called
 * before t is reused. The state is the bytes of talus_tiler_advance.
 */
talus_status talus_tiler_queue(talus_tile *t, talus_kctx *c, talus_rect core, int64_t steps,
                               talus_run_stats *stats);
talus_status talus_tiler_collect(talus_run_stats *stats);
/* talus_tiler_queue for a tile already on the device, bound to the
 * current CUDA slot over global rectangle buf (talus_cuda_resident_bind):
 * nothing is uploaded, and buf stands for the tile's buffer. */
talus_status talus_tiler_queue_bound(talus_rect buf, talus_kctx *c, talus_rect core, int64_t steps,
                                     talus_run_stats *stats);

#endif /* TALUS_TILER_H */
