/*
 * tiler.c — the step driver: runs the stage plan of each global step over
 * shrinking regions of a tile buffer, timing stages and summing ledger flows.
 */
#include "tiler.h"

#include <string.h>

/* The buffer-local region a stage may update after `used` cells of radius
 * were consumed: the buffer shrunk by `used` on every edge that is not a
 * border of the domain. */
static talus_rect stage_region(const talus_tile *t, const talus_kctx *c, int used) {
  int left = t->buf.x0 > 0 ? used : 0;
  int bottom = t->buf.y0 > 0 ? used : 0;
  int right = t->buf.x0 + t->buf.w < c->nx ? used : 0;
  int top = t->buf.y0 + t->buf.h < c->ny ? used : 0;
  talus_rect r = {left, bottom, t->buf.w - left - right, t->buf.h - bottom - top};
  if (r.w < 0) r.w = 0;
  if (r.h < 0) r.h = 0;
  return r;
}

/* Runs the stages of one global step on the context's backend. The CPU
 * books flows and times as it goes; the GPU queues the step and reports
 * both when it is waited for: now, or (wait 0) at talus_tiler_collect. */
static talus_status advance_one(talus_tile *t, talus_kctx *c, talus_rect book, int *used,
                                talus_run_stats *stats, int wait) {
  talus_stage_id plan[4 * TALUS_STAGE_COUNT + 2 * 64];
  int n = talus_step_plan(&c->P, c->step, plan, (int)(sizeof plan / sizeof plan[0]));
  if (n < 0) return talus_fail(TALUS_ERR_INTERNAL, "tiler", "step plan too long");
  int gpu = c->backend == TALUS_BACKEND_CUDA;
  for (int i = 0; i < n; i++) {
    *used += talus_stage_def_of(plan[i])->radius;
    talus_rect region = stage_region(t, c, *used);
    double t0 = talus_now();
    talus_status st = gpu ? talus_cuda_stage(c, plan[i], region, book)
                          : talus_cpu_stage_booked(t, c, plan[i], region, book, stats->flows);
    if (st) return st;
    if (!gpu) stats->stage_seconds[plan[i]] += talus_now() - t0;
  }
  if (gpu) {
    talus_status st =
        wait ? talus_cuda_finish_step(stats->flows, stats->stage_seconds) : talus_cuda_end_step();
    if (st) return st;
  }
  c->step++;
  return TALUS_OK;
}

/* The steps of talus_tiler_advance (wait 1) and talus_tiler_queue (wait
 * 0); on the GPU the tile is on the device. */
static talus_status advance_steps(talus_tile *t, talus_kctx *c, talus_rect core, int64_t steps,
                                  talus_run_stats *stats, talus_step_progress_fn progress,
                                  void *user, int wait) {
  int used = 0;
  talus_rect book = {core.x0 - t->buf.x0, core.y0 - t->buf.y0, core.w, core.h};
  for (int64_t s = 0; s < steps; s++) {
    talus_status st = advance_one(t, c, book, &used, stats, wait);
    if (st) return st;
    stats->cell_steps += (int64_t)core.w * core.h;
    if (progress && !progress(s + 1, steps, user))
      return talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled after step %lld",
                        (long long)c->step);
  }
  return TALUS_OK;
}

talus_status talus_tiler_advance(talus_tile *t, talus_kctx *c, talus_rect core, int64_t steps,
                                 talus_run_stats *stats, talus_step_progress_fn progress,
                                 void *user) {
  if (c->backend != TALUS_BACKEND_CUDA)
    return advance_steps(t, c, core, steps, stats, progress, user, 1);
  talus_status st = talus_cuda_upload(t);
  if (st) return st;
  st = advance_steps(t, c, core, steps, stats, progress, user, 1);
  /* Also after a cancel: the host tile then holds the last completed step. */
  talus_status down = talus_cuda_download(t);
  return st ? st : down;
}

talus_status talus_tiler_queue(talus_tile *t, talus_kctx *c, talus_rect core, int64_t steps,
                               talus_run_stats *stats) {
  if (c->backend != TALUS_BACKEND_CUDA)
    return talus_fail(TALUS_ERR_INTERNAL, "tiler", "queued advance off the GPU");
  talus_status st = talus_cuda_upload_async(t);
  return st ? st : advance_steps(t, c, core, steps, stats, NULL, NULL, 0);
}

talus_status talus_tiler_collect(talus_run_stats *stats) {
  return talus_cuda_wait(stats->flows, stats->stage_seconds);
}
