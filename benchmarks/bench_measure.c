/*
 * bench_measure.c — what talus_bench measures and how a measurement is
 * described: the workload table, the process CPU time, a timed sample's
 * sizes, stage calls and modelled bytes (with its line on stderr), and the
 * triad bandwidth a sample is set against. The driver (bench.c), the tiled
 * runs (bench_tiled.c) and the JSON (bench_json.c) all use it, and it uses
 * none of them, so calls among the benchmark files go one way.
 */
#include "bench.h"

#include "kernels/particles.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const hf_only[] = {"thermal.enable=false", NULL};

/* rivers-rain's layered stages without its droplets: the step the
 * layered figures have measured since issue 7 (the preset's droplets, in
 * metres, take 1024 moves each at 2048²'s 0.125 m cells: the particles
 * workloads measure droplets) */
static const char *const lay_pipes[] = {"particles.enable=false", NULL};

/* erodr's parameters (../shared/reference/particle-erosion-reference.md
 * §1), over particles.ini's scale keys, on erodr's unit cells: the
 * droplet keys are in metres (path 32 m = 32 moves, brush 2 m = 2 cells
 * only at 1 m cells; on the scene's own cells, 256/n m, a droplet would
 * run 8·n/256 moves) */
static const char *const pt_erodr[] = {"input.cell_size=1",
                                       "particles.path_length=32",
                                       "particles.brush_radius=2",
                                       "particles.inertia=0.3",
                                       "particles.capacity=8",
                                       "particles.min_slope=0.0001",
                                       "particles.erosion=0.7",
                                       "particles.deposition=0.3",
                                       "particles.evaporation=0.02",
                                       "particles.gravity=1",
                                       "particles.initial_speed=0.9",
                                       "particles.initial_water=1",
                                       "particles.water_gain=0",
                                       "particles.deposit_at_death=true",
                                       NULL};

/* Heightfield workloads on the fBm `noise` scene (1 m cells, the terrain
 * heightfield-default.ini is made for); layered ones on the paper's scenes
 * with their presets (256 m wide, cell size 256/n). */
const bench_workload bench_workloads[] = {
    {"heightfield", "noise", "heightfield-default", hf_only},
    {"heightfield_thermal", "noise", "heightfield-default", NULL},
    {"rivers_rain", "rivers-rain", "rivers-rain", lay_pipes},
    {"chasm_source", "chasm-source", "chasm-source", NULL},
    /* droplets alone (particles.ini) with erodr's parameters on a terrain
     * of erodr's scale (0-36 m over 2048 cells) */
    {"particles", "rivers-rain", "particles", pt_erodr},
    /* the same droplets on layered stacks with overhangs (the cave scene's
     * tunnel under its roof), the game preset's layered stages around them */
    {"particles_layered", "cave", "particles-game", pt_erodr},
};
const int bench_workload_count = (int)(sizeof bench_workloads / sizeof bench_workloads[0]);

/* Mean column count over live cells. */
static double bench_mean_columns(const talus_tile *t) {
  double sum = 0.0, n = 0.0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t i = talus_idx(t, x, y);
      if (t->mask && t->mask[i]) continue;
      sum += t->count[i], n += 1.0;
    }
  return n > 0.0 ? sum / n : 0.0;
}

/* Invocations per step of each stage over steps [first, first + steps). */
static void bench_stage_calls(const talus_kparams *P, int64_t first, int64_t steps,
                              double calls[TALUS_STAGE_COUNT]) {
  talus_stage_id plan[4 * TALUS_STAGE_COUNT + 2 * 64];
  memset(calls, 0, sizeof(double) * TALUS_STAGE_COUNT);
  for (int64_t s = first; s < first + steps; s++) {
    int n = talus_step_plan(P, s, plan, (int)(sizeof plan / sizeof plan[0]));
    for (int i = 0; i < n; i++)
      calls[plan[i]] += 1.0 / (double)steps;
  }
}

/* CPU time of the whole process [s]: over wall time × threads it shows
 * how much of the machine the run actually got (others share it). */
double bench_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Writes only *s (from d, read only); s->first_step, steps, seconds and
 * cpu_seconds must already be set, as its stderr line uses them. */
void bench_sample_describe(bench_sample *s, const talus_domain *d, int w, int threads, int repeat,
                           const double stage_s[TALUS_STAGE_COUNT]) {
  s->workload = w, s->threads = threads, s->repeat = repeat;
  s->cells = (int64_t)talus_domain_nx(d) * talus_domain_ny(d);
  s->layers = talus_domain_layers(d), s->model = d->ctx.P.model;
  s->mean_columns = bench_mean_columns(d->tile);
  bench_stage_calls(&d->ctx.P, s->first_step, s->steps, s->stage_calls);
  for (int i = 0; i < TALUS_STAGE_COUNT; i++) {
    s->stage_s[i] = stage_s[i];
    s->stage_bytes[i] = bench_stage_bytes(d->tile, &d->ctx.P, (talus_stage_id)i, s->mean_columns);
  }
  fprintf(stderr,
          "talus_bench: %-20s %d thr, repeat %d: %8.2f ms/step, %7.2f Mcell-steps/s, cpu %.2f\n",
          bench_workloads[w].name, threads, repeat, 1e3 * s->seconds / (double)s->steps,
          (double)s->cells * (double)s->steps / s->seconds / 1e6,
          s->cpu_seconds / (s->seconds * threads));
  double pt = bench_pt_seconds(s);
  if (s->droplets > 0.0 && pt > 0.0)
    fprintf(stderr,
            "talus_bench: %-20s %d thr, repeat %d: %.0f droplets, %.3f M droplets/s, %.2f M "
            "moves/s (droplet stages %.3f s of %.3f s)\n",
            bench_workloads[w].name, threads, repeat, s->droplets, s->droplets / pt / 1e6,
            s->moves / pt / 1e6, pt, s->seconds);
}

double bench_pt_seconds(const bench_sample *s) {
  return s->stage_s[TALUS_STAGE_PT_CLEAR] + s->stage_s[TALUS_STAGE_PT_TRACE] +
         s->stage_s[TALUS_STAGE_PT_APPLY];
}

/* Reads b's STREAM probes only; 0 when none ran at `threads`. */
double bench_triad(const bench_run *b, int threads) {
  double best = 0.0;
  for (int when = 0; when < 2; when++)
    for (int i = 0; i < b->o.nthreads; i++)
      if (b->stream[when][i].threads == threads && b->stream[when][i].triad_gbs > best)
        best = b->stream[when][i].triad_gbs;
  return best;
}

void bench_droplets(talus_domain *d, int64_t first, int64_t steps, double *droplets,
                    double *moves) {
  talus_kctx c = d->ctx;
  const talus_tile *t = d->tile;
  double n = 0.0, m = 0.0, at_end = 0.0, flows[TALUS_FLOW_COUNT] = {0};
  *droplets = *moves = 0.0;
  if (!c.P.pt_enable || !t->pt_acc) return;
  for (c.step = first; c.step < first + steps; c.step++)
    for (int y = 0; pt_runs(&c.P, c.step) && y < t->buf.h; y++)
      for (int x = 0; x < t->buf.w; x++) {
        uint32_t o;
        n += pt_spawn(t, &c, x, y, &o);
      }
  c.step = d->ctx.step;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      uint32_t o;
      if (!pt_spawn(t, &c, x, y, &o)) continue;
      int layered = c.P.model == TALUS_MODEL_LAYERED;
      m += pt_run(t, &c, t->buf.x0 + x, t->buf.y0 + y, o, flows, layered, NULL), at_end += 1.0;
    }
  *droplets = n;
  *moves = at_end > 0.0 ? n * m / at_end : 0.0;
}
