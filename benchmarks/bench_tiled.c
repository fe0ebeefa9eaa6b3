/*
 * bench_tiled.c — talus_bench's tiled runs: a warmed-up domain is loaded
 * into a tile grid over a memory or disk store (tiler/tiled.h, the engine
 * of `talus erode --tile`), and each repeat times one talus_tiled_run of
 * --steps steps: halo exchange, store traffic (zstd on disk) and, on the
 * GPU, the upload and download of every tile each generation included
 * (with tiles resident on the device: one upload at the run's start and
 * the store's blocks at its end, --resident).
 * Comparing with a run in one piece of the same workload gives the cost of
 * tiling and of going out of core.
 */
#include "bench.h"
#include "halo/halo.h"
#include "tiler/tiled.h"

#include <omp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* talus_tile_source fill: rectangle r of the domain's tile. */
static talus_status bench_fill(void *user, talus_tile *t, talus_rect r) {
  return halo_block_copy(user, r, t);
}

/* Opens the store --store names: memory, or a disk store in a fresh
 * subdirectory of that directory (removed again by the caller). */
static talus_status bench_store_open(const bench_opts *o, int w, int threads, int ntiles,
                                     talus_store **out) {
  int disk = o->store && strcmp(o->store, "memory");
  char dir[4200];
  if (disk) {
    snprintf(dir, sizeof dir, "%s/%s-%dt", o->store, bench_workloads[w].name, threads);
    mkdir(o->store, 0777);
    if (mkdir(dir, 0777) && access(dir, W_OK))
      return talus_fail(TALUS_ERR_IO, "bench", "cannot create store directory '%s'", dir);
  }
  talus_status st = talus_store_open(out, disk ? TALUS_STORE_DISK : TALUS_STORE_MEMORY,
                                     disk ? dir : NULL, "talus_bench", ntiles, 0);
  if (!st) talus_store_set_level(*out, (int)o->store_level);
  return st;
}

/* Times one repeat of tiled grid g from step `from` into a new sample. */
static talus_status bench_tiled_repeat(bench_run *b, talus_tiled *g, const talus_domain *d, int w,
                                       int threads, int repeat) {
  if (b->nsamples >= BENCH_MAX_SAMPLES)
    return talus_fail(TALUS_ERR_ARGUMENT, "bench", "too many samples");
  bench_sample *s = &b->samples[b->nsamples];
  memset(s, 0, sizeof *s);
  talus_run_stats stats;
  memset(&stats, 0, sizeof stats);
  s->first_step = talus_tiled_step(g);
  s->steps = b->o.steps;
  double t0 = talus_now(), c0 = bench_cpu_seconds();
  talus_status st = talus_tiled_run(g, s->first_step + s->steps, &stats, NULL, NULL);
  s->seconds = talus_now() - t0;
  s->resident = talus_tiled_gpu_resident_used(g);
  s->cpu_seconds = bench_cpu_seconds() - c0;
  if (st) return st;
  bench_sample_describe(s, d, w, threads, repeat, stats.stage_seconds);
  b->nsamples++;
  return TALUS_OK;
}

talus_status bench_tiled_time(bench_run *b, talus_domain *d, int w, int threads) {
  const bench_opts *o = &b->o;
  int core = (int)o->tile;
  int ntiles = ((d->ctx.nx + core - 1) / core) * ((d->ctx.ny + core - 1) / core);
  talus_store *store = NULL;
  talus_tiled *g = NULL;
  talus_tile_source src = {bench_fill, d->tile};
  omp_set_num_threads(threads);
  talus_status st = bench_store_open(o, w, threads, ntiles, &store);
  if (!st) st = talus_tiled_create(&g, &d->ctx, core, (int)o->K, store);
  if (!st) talus_tiled_set_gpu_resident(g, o->gpu_resident);
  if (!st) st = talus_tiled_load(g, &src);
  for (int r = 0; !st && r < o->repeat; r++)
    st = bench_tiled_repeat(b, g, d, w, threads, r);
  talus_tiled_free(g);
  if (store) {
    talus_status gone = talus_store_destroy(store);
    if (!st) st = gone;
  }
  return st;
}
