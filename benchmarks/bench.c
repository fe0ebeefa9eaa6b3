/*
 * bench.c — talus_bench: fixed workloads for a fixed number of steps, timed
 * per stage, with this machine's STREAM-like bandwidth measured in the same
 * run; prints JSON (benchmarks/README.md describes the fields).
 *
 * Each workload gets one domain per thread count, built from the same scene
 * and preset; they are advanced in lock-step (repeat r runs steps
 * [W + r·S, W + (r+1)·S) on 1 thread, then on 2, ...), so every timing of a
 * repeat covers the same state (results never depend on the thread count)
 * and thread counts are measured back to back, under the same load.
 */
#include "app/app.h"
#include "bench.h"
#include "app/scenes.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TALUS_BENCH_CONFIGS
#define TALUS_BENCH_CONFIGS "configs"
#endif

static void bench_usage(void) {
  printf("usage: talus_bench [options] > result.json\n"
         "Runs fixed erosion workloads and prints JSON timings with a bandwidth roofline.\n"
         "  --workloads LIST   comma-separated, default all:");
  for (int i = 0; i < bench_workload_count; i++)
    printf(" %s", bench_workloads[i].name);
  printf("\n  --size N           N x N cells (default 2048)\n"
         "  --steps S          timed steps per repeat (default 50)\n"
         "  --warmup W         untimed steps first (default 10)\n"
         "  --repeat R         repeats (default 3)\n"
         "  --threads LIST     thread counts, run back to back (default 1,2)\n"
         "  --stream-mib M     MiB per STREAM array (default 256)\n"
         "  --seed S           scene seed (default 7)\n"
         "  --configs DIR      preset directory (default the source tree's configs/)\n"
         "  --set KEY=VALUE    parameter override for every workload; repeatable\n"
         "  --device D         cpu (default) or cuda\n"
         "  --tile N           advance tiled with N x N cores (default: in one piece)\n"
         "  --steps-per-exchange K  steps per generation of a tiled run (default 1)\n"
         "  --store S          memory (default) or a directory: the tiled run's store\n"
         "  --store-level N    zstd level of a --store DIR, -7..19 (default 1)\n"
         "  --resident R       auto (default), on or off: may a tiled GPU run keep its\n"
         "                     tiles resident on the device (off: host-staged)\n"
         "  -o FILE            write the JSON to FILE instead of stdout\n");
}

static talus_status parse_workloads(const char *list, bench_opts *o) {
  memset(o->use, 0, sizeof o->use);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
    int found = 0;
    for (int i = 0; i < bench_workload_count; i++)
      if (!strcmp(s, bench_workloads[i].name) || !strcmp(s, "all")) o->use[i] = found = 1;
    if (!found) return talus_fail(TALUS_ERR_ARGUMENT, "bench", "unknown workload '%s'", s);
  }
  return TALUS_OK;
}

static talus_status parse_threads(const char *list, bench_opts *o) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  o->nthreads = 0;
  for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
    int64_t n;
    if (o->nthreads >= BENCH_MAX_THREADS || app_int("--threads", s, 1, 1024, &n))
      return talus_fail(TALUS_ERR_ARGUMENT, "bench", "bad --threads list '%s'", list);
    o->threads[o->nthreads++] = (int)n;
  }
  return TALUS_OK;
}

/* Consumes one option; returns 1 if taken, 0 if unknown, -1 on error. */
static int bench_option(app_args *a, bench_opts *o) {
  const char *v = NULL;
  int r;
  struct {
    const char *name;
    int64_t *dst, lo, hi;
  } ints[] = {{"--size", &o->size, 8, 65536},
              {"--steps", &o->steps, 1, 1 << 30},
              {"--warmup", &o->warmup, 0, 1 << 30},
              {"--repeat", &o->repeat, 1, 1000},
              {"--seed", &o->seed, 0, 4294967295ll}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if ((r = app_take(a, ints[i].name, NULL, &v)))
      return r < 0 || app_int(ints[i].name, v, ints[i].lo, ints[i].hi, ints[i].dst) ? -1 : 1;
  if ((r = app_take(a, "--workloads", NULL, &v))) return r < 0 || parse_workloads(v, o) ? -1 : 1;
  if ((r = app_take(a, "--threads", NULL, &v))) return r < 0 || parse_threads(v, o) ? -1 : 1;
  if ((r = app_take(a, "--stream-mib", NULL, &v)))
    return r < 0 || app_real("--stream-mib", v, 1, 65536, &o->stream_mib) ? -1 : 1;
  if ((r = app_take(a, "--configs", NULL, &v))) return r < 0 ? -1 : (o->configs = v, 1);
  if ((r = app_take(a, "--set", NULL, &v))) {
    if (r < 0 || o->nsets >= BENCH_MAX_SETS || !strchr(v, '='))
      return talus_fail(TALUS_ERR_ARGUMENT, "bench", "bad or too many --set '%s'", v ? v : ""), -1;
    return o->sets[o->nsets++] = v, 1;
  }
  if ((r = app_take(a, "--device", NULL, &v))) {
    if (r < 0 || (strcmp(v, "cpu") && strcmp(v, "cuda")))
      return talus_fail(TALUS_ERR_ARGUMENT, "bench", "--device must be cpu or cuda"), -1;
    return o->device = strcmp(v, "cpu") ? TALUS_DEVICE_CUDA : TALUS_DEVICE_CPU, 1;
  }
  if ((r = app_take(a, "--tile", NULL, &v)))
    return r < 0 || app_int("--tile", v, 8, 65536, &o->tile) ? -1 : 1;
  if ((r = app_take(a, "--steps-per-exchange", NULL, &v)))
    return r < 0 || app_int("--steps-per-exchange", v, 1, 64, &o->K) ? -1 : 1;
  if ((r = app_take(a, "--store", NULL, &v))) return r < 0 ? -1 : (o->store = v, 1);
  if ((r = app_take(a, "--store-level", NULL, &v)))
    return r < 0 || app_int("--store-level", v, TALUS_STORE_LEVEL_MIN, TALUS_STORE_LEVEL_MAX,
                            &o->store_level)
               ? -1
               : 1;
  if ((r = app_take(a, "--resident", NULL, &v))) {
    static const char *const modes[] = {"auto", "on", "off"}; /* TALUS_TILED_GPU_RESIDENT_* */
    for (int i = 0; r > 0 && i < 3; i++)
      if (!strcmp(v, modes[i])) return o->gpu_resident = i, 1;
    return talus_fail(TALUS_ERR_ARGUMENT, "bench", "--resident must be auto, on or off"), -1;
  }
  if ((r = app_take(a, "--output", "-o", &v))) return r < 0 ? -1 : (o->output = v, 1);
  return 0;
}

static talus_status bench_parse(int argc, char **argv, bench_opts *o, int *help) {
  app_args a = {argc, argv, 0};
  o->size = 2048, o->steps = 50, o->warmup = 10, o->repeat = 3, o->seed = 7;
  o->stream_mib = 256.0;
  o->configs = TALUS_BENCH_CONFIGS;
  o->device = TALUS_DEVICE_CPU, o->K = 1;
  o->store_level = TALUS_STORE_LEVEL_DEFAULT;
  o->threads[0] = 1, o->threads[1] = 2, o->nthreads = 2;
  for (int i = 0; i < bench_workload_count; i++)
    o->use[i] = 1;
  while (a.i < argc) {
    if (!strcmp(argv[a.i], "--help") || !strcmp(argv[a.i], "-h")) return (*help = 1), TALUS_OK;
    int r = bench_option(&a, o);
    if (r < 0) return TALUS_ERR_ARGUMENT;
    if (!r)
      return talus_fail(TALUS_ERR_ARGUMENT, "bench", "unknown argument '%s' (see --help)",
                        argv[a.i]);
  }
  return TALUS_OK;
}

/* Applies "section.key=value" overrides to p. */
static talus_status bench_sets(talus_params *p, const char *const *sets) {
  talus_status st = TALUS_OK;
  for (; !st && sets && *sets; sets++)
    st = app_param_override(p, *sets);
  return st;
}

/* Builds workload w at n² cells: its preset, its scene at the preset's
 * layer count, on --device (whose name goes to device_name). */
static talus_status bench_domain(const bench_opts *o, const bench_workload *w, talus_domain **d,
                                 char *device_name, size_t len) {
  talus_params *p = NULL;
  talus_tile *t = NULL;
  talus_kparams k;
  double cell = 0.0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.ini", o->configs, w->preset);
  talus_status st = talus_params_create(&p);
  if (!st) st = talus_params_load(p, path);
  if (!st) st = bench_sets(p, w->sets);
  if (!st) st = bench_sets(p, o->sets);
  if (!st) st = talus_params_to_kparams(p, 0.0, &k);
  if (!st) st = talus_scene_build(w->scene, (int)o->size, k.nz, (uint32_t)o->seed, &t, &cell);
  double over = 0.0; /* input.cell_size overrides the scene's cells, as it does a raster's */
  if (!st && talus_params_get(p, "input.cell_size", &over) == TALUS_OK && over > 0.0) cell = over;
  if (!st) st = talus_domain_wrap(t, cell, p, d);
  if (!st) st = talus_domain_set_device(*d, o->device, device_name, len);
  talus_params_free(p);
  return st;
}

/* Times one repeat of domain d at `threads` threads into a new sample. */
static talus_status bench_time(bench_run *b, talus_domain *d, int w, int threads, int repeat) {
  if (b->nsamples >= BENCH_MAX_SAMPLES)
    return talus_fail(TALUS_ERR_ARGUMENT, "bench", "too many samples");
  bench_sample *s = &b->samples[b->nsamples];
  memset(s, 0, sizeof *s);
  double stage_s[TALUS_STAGE_COUNT];
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    stage_s[i] = -talus_domain_stage_seconds(d, i);
  omp_set_num_threads(threads);
  s->first_step = talus_domain_step(d);
  s->steps = b->o.steps;
  double t0 = talus_now(), c0 = bench_cpu_seconds();
  talus_status st = talus_domain_run(d, b->o.steps, NULL, NULL);
  s->seconds = talus_now() - t0;
  s->cpu_seconds = bench_cpu_seconds() - c0;
  if (st) return st;
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    stage_s[i] += talus_domain_stage_seconds(d, i);
  bench_droplets(d, s->first_step, s->steps, &s->droplets, &s->moves);
  bench_sample_describe(s, d, w, threads, repeat, stage_s);
  b->nsamples++;
  return TALUS_OK;
}

/* Runs workload w: one domain per thread count, warmed up, then the
 * repeats with the thread counts back to back. */
static talus_status bench_workload_run(bench_run *b, int w) {
  talus_domain *d[BENCH_MAX_THREADS] = {0};
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < b->o.nthreads; i++) {
    st = bench_domain(&b->o, &bench_workloads[w], &d[i], b->device_name, sizeof b->device_name);
    omp_set_num_threads(b->o.threads[i]);
    if (!st) st = talus_domain_run(d[i], b->o.warmup, NULL, NULL);
  }
  for (int i = 0; !st && b->o.tile && i < b->o.nthreads; i++)
    st = bench_tiled_time(b, d[i], w, b->o.threads[i]);
  for (int r = 0; !st && !b->o.tile && r < b->o.repeat; r++)
    for (int i = 0; !st && i < b->o.nthreads; i++)
      st = bench_time(b, d[i], w, b->o.threads[i], r);
  for (int i = 0; i < b->o.nthreads; i++)
    talus_domain_free(d[i]);
  if (st) talus_fail_context(st, "workload %s", bench_workloads[w].name);
  return st;
}

static talus_status bench_streams(bench_run *b, int when) {
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < b->o.nthreads; i++)
    st = bench_stream_measure(b->o.threads[i], b->o.stream_mib, 5, &b->stream[when][i]);
  return st;
}

int main(int argc, char **argv) {
  bench_run *b = calloc(1, sizeof *b);
  int help = 0;
  talus_status st = b ? bench_parse(argc - 1, argv + 1, &b->o, &help) : TALUS_ERR_NOMEM;
  if (!st && help) bench_usage();
  if (!st && !help) {
    time_t now = time(NULL);
    strftime(b->date, sizeof b->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    getloadavg(b->load[0], 3);
    b->samples = calloc(BENCH_MAX_SAMPLES, sizeof *b->samples);
    st = b->samples ? bench_streams(b, 0) : TALUS_ERR_NOMEM;
    for (int w = 0; !st && w < bench_workload_count; w++)
      if (b->o.use[w]) st = bench_workload_run(b, w);
    if (!st) st = bench_streams(b, 1);
    getloadavg(b->load[1], 3);
  }
  if (!st && !help) {
    talus_json *doc = bench_json(b);
    st = doc ? TALUS_OK : TALUS_ERR_NOMEM;
    if (!st && b->o.output) {
      st = talus_json_write_path(doc, b->o.output);
    } else if (!st) {
      st = talus_json_write(doc, stdout, 0);
      if (!st && (putchar('\n') == EOF || fflush(stdout)))
        st = talus_fail(TALUS_ERR_IO, "bench", "cannot write the JSON to stdout");
    }
    talus_json_free(doc);
  }
  if (st) fprintf(stderr, "talus_bench: error: %s\n", talus_last_error());
  if (b) free(b->samples);
  free(b);
  return st ? 1 : 0;
}
