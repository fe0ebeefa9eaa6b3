/*
 * tiler.h — the run's driver. Plans which rectangle each stage must update
 * and advances tiles step by step through the stage plan.
 *
 * Region shrinking (the libvips rule, inverted): a tile buffer that carries
 * a halo of width H on an interior edge stays exact in its core for H/R
 * steps. Each stage updates the buffer minus the radius consumed so far on
 * edges that are not domain borders, so no kernel ever reads outside the
 * buffer. A tile covering the whole domain (H = 0) updates every cell.
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
 * halo on interior edges must be at least steps * talus_step_radius().
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

#endif /* TALUS_TILER_H */
