/*
 * tiler.c — the step driver: runs the stage plan of each global step over
 * shrinking regions of a tile buffer, timing stages and summing ledger flows.
 */
#include "tiler.h"

#include <limits.h>
#include <string.h>

/* A step's plan: its stages in order, and how far they read in all. */
typedef struct step_plan {
  talus_stage_id stage[4 * TALUS_STAGE_COUNT + 2 * 64];
  int n, radius;
} step_plan;

static talus_status plan_step(const talus_kparams *P, int64_t step, step_plan *sp) {
  sp->n = talus_step_plan(P, step, sp->stage, (int)(sizeof sp->stage / sizeof sp->stage[0]));
  if (sp->n < 0) return talus_fail(TALUS_ERR_INTERNAL, "tiler", "step plan too long");
  sp->radius = talus_plan_radius(P, sp->stage, sp->n);
  return TALUS_OK;
}

/* How far the stages of steps [from, to) read in all (the sum of their
 * radii), counted until it reaches `cap`. */
static int64_t steps_reach(const talus_kparams *P, int64_t from, int64_t to, int64_t cap) {
  int64_t reach = 0;
  step_plan sp;
  for (int64_t s = from; s < to && reach < cap; s++)
    reach += plan_step(P, s, &sp) ? cap : sp.radius;
  return reach;
}

/* The widest and the narrowest margin of core inside t's buffer: the
 * narrowest over the buffer's edges that are not domain borders (INT_MAX
 * when all are), as only there is something left out. */
static void core_margins(const talus_tile *t, const talus_kctx *c, talus_rect core, int *widest,
                         int *interior) {
  int m[4] = {core.x0 - t->buf.x0, core.y0 - t->buf.y0, t->buf.x0 + t->buf.w - (core.x0 + core.w),
              t->buf.y0 + t->buf.h - (core.y0 + core.h)};
  int border[4] = {t->buf.x0 == 0, t->buf.y0 == 0, t->buf.x0 + t->buf.w == c->nx,
                   t->buf.y0 + t->buf.h == c->ny};
  *widest = 0;
  *interior = INT_MAX;
  for (int i = 0; i < 4; i++) {
    *widest = m[i] > *widest ? m[i] : *widest;
    if (!border[i] && m[i] < *interior) *interior = m[i];
  }
}

/* The buffer-local region a stage must update for the core to be exact at
 * the end of the advance: the core grown by `need`, how far the stages
 * after it still read, clipped to the buffer. (The libvips rule: a result
 * asks for its inputs grown by the reach of what computes it.) */
static talus_rect stage_region(const talus_tile *t, talus_rect core, int64_t need) {
  int g = need < INT_MAX / 4 ? (int)need : INT_MAX / 4;
  talus_rect grown = {core.x0 - g, core.y0 - g, core.w + 2 * g, core.h + 2 * g};
  talus_rect r = talus_rect_intersect(grown, t->buf);
  r.x0 -= t->buf.x0, r.y0 -= t->buf.y0;
  return r;
}

/* Runs the stages of one global step on the context's backend; `after` is
 * how far the steps after it read (from core, the advance's core). The
 * CPU books flows and times as it goes; the GPU queues the step and
 * reports both when it is waited for: now, or (wait 0) at
 * talus_tiler_collect. */
static talus_status advance_one(talus_tile *t, talus_kctx *c, talus_rect core, int64_t after,
                                talus_run_stats *stats, int wait) {
  step_plan sp;
  talus_status pst = plan_step(&c->P, c->step, &sp);
  if (pst) return pst;
  talus_rect book = {core.x0 - t->buf.x0, core.y0 - t->buf.y0, core.w, core.h};
  int gpu = c->backend == TALUS_BACKEND_CUDA;
  int64_t need = after + sp.radius;
  for (int i = 0; i < sp.n; i++) {
    talus_stage_id id = sp.stage[i];
    need -= talus_stage_radius(&c->P, id);
    talus_rect region = stage_region(t, core, need);
    double t0 = talus_now();
    talus_status st = gpu ? talus_cuda_stage(c, id, region, book)
                          : talus_cpu_stage_booked(t, c, id, region, book, stats->flows);
    if (st) return st;
    if (!gpu) stats->stage_seconds[id] += talus_now() - t0;
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
  int widest, interior;
  core_margins(t, c, core, &widest, &interior);
  int64_t end = c->step + steps;
  int64_t reach = interior == INT_MAX ? 0 : steps_reach(&c->P, c->step, end, interior + 1LL);
  if (reach > interior)
    return talus_fail(TALUS_ERR_INTERNAL, "tiler",
                      "a halo of %d cells is narrower than the %lld cells %lld steps read through",
                      interior, (long long)reach, (long long)steps);
  for (int64_t s = 0; s < steps; s++) {
    /* Only a reach below the widest margin shrinks a region. */
    int64_t after = steps_reach(&c->P, c->step + 1, end, (int64_t)widest);
    talus_status st = advance_one(t, c, core, after, stats, wait);
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

talus_status talus_tiler_queue_bound(talus_rect buf, talus_kctx *c, talus_rect core, int64_t steps,
                                     talus_run_stats *stats) {
  if (c->backend != TALUS_BACKEND_CUDA)
    return talus_fail(TALUS_ERR_INTERNAL, "tiler", "queued advance off the GPU");
  talus_tile shape; /* on the GPU the steps read only the buffer's rectangle */
  memset(&shape, 0, sizeof shape);
  shape.buf = buf;
  return advance_steps(&shape, c, core, steps, stats, NULL, NULL, 0);
}

talus_status talus_tiler_collect(talus_run_stats *stats) {
  return talus_cuda_wait(stats->flows, stats->stage_seconds);
}
