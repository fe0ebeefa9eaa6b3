/*
 * bench.h — private to talus_bench (benchmarks/): the workloads, the
 * STREAM-like bandwidth probe, the per-stage memory traffic model, and
 * what a measurement is (bench_measure.c). Calls go one way: the driver,
 * bench.c, calls the others; bench_tiled.c and bench_json.c call
 * bench_measure.c, which calls bench_traffic.c; bench_stream.c calls none.
 */
#ifndef TALUS_BENCH_H
#define TALUS_BENCH_H

#include "app/domain.h"
#include "io/json.h"
#include "io/store/store.h"

/* A fixed workload: a scene from app/scenes.c, a preset from configs/, and
 * overrides on top ("section.key=value", NULL-terminated). */
typedef struct bench_workload {
  const char *name;
  const char *scene;
  const char *preset;
  const char *const *sets;
} bench_workload;

/* The workload table (bench_measure.c) and its length. */
extern const bench_workload bench_workloads[];
extern const int bench_workload_count;

/* STREAM-like bandwidth [GB/s, 1e9 bytes] with `threads` OpenMP threads
 * over three arrays of array_mib MiB of doubles; best of `reps` passes.
 * Bytes are counted as STREAM counts them (2 arrays for copy, 3 for triad;
 * write-allocate traffic not counted), the convention of the traffic model
 * below, so their ratio is a fraction of the roofline. */
typedef struct bench_stream {
  int threads;
  double array_mib;
  double copy_gbs, triad_gbs, read_gbs;
} bench_stream;
talus_status bench_stream_measure(int threads, double array_mib, int reps, bench_stream *out);

/*
 * Bytes stage `id` moves per cell-step under a compulsory-traffic model:
 * every array element the stage reads or writes counts once (reads of
 * neighbours' values are assumed to hit cache, as they do for row-ordered
 * loops), per-column arrays once per existing column (mean_columns), and
 * optional planes (hardness, rain map, NoData mask) only when the tile has
 * them. It is a lower bound on DRAM traffic: cache misses beyond it show as
 * a lower roofline fraction, not as more bytes.
 */
double bench_stage_bytes(const talus_tile *t, const talus_kparams *P, talus_stage_id id,
                         double mean_columns);

#define BENCH_MAX_THREADS 8

#define BENCH_MAX_SETS    16
#define BENCH_MAX_SAMPLES 4096

typedef struct bench_opts {
  int use[16]; /* workloads selected */
  int64_t size, steps, warmup, repeat, seed;
  int threads[BENCH_MAX_THREADS], nthreads;
  double stream_mib;
  const char *output, *configs;
  const char *sets[BENCH_MAX_SETS + 1]; /* --set KEY=VALUE, after each workload's own; NULL-ended */
  int nsets;
  talus_device device; /* --device cpu|cuda */
  int64_t tile, K;     /* --tile (0: one piece), --steps-per-exchange */
  const char *store;   /* --store memory|DIR (tiled runs) */
  int64_t store_level; /* --store-level: zstd level of a disk store */
  int gpu_resident;    /* --resident auto|on|off: TALUS_TILED_GPU_RESIDENT_* (tiled.h) */
} bench_opts;

/* One timed run: a workload at a thread count over one repeat's steps. */
typedef struct bench_sample {
  int workload, threads, repeat, layers, model;
  int64_t cells, steps, first_step;
  int resident; /* tiled on the GPU: 1 when the tiles stayed resident on the device */
  double seconds, cpu_seconds, mean_columns;
  double stage_s[TALUS_STAGE_COUNT];
  double stage_calls[TALUS_STAGE_COUNT]; /* invocations per step */
  double stage_bytes[TALUS_STAGE_COUNT]; /* per invocation per cell */
  double droplets;                       /* droplets spawned over the timed steps */
  double moves;                          /* their moves (bench_droplets) */
} bench_sample;

/* The droplets spawned over steps [first, first + steps) of d (from the
 * spawn rule, which reads no height) to *droplets, and an estimate of
 * their moves to *moves: the moves per droplet of the batch d's state
 * would run next, traced into its scratch totals (which the next batch
 * clears), times *droplets. Both 0 without particles. */
void bench_droplets(talus_domain *d, int64_t first, int64_t steps, double *droplets, double *moves);
/* Seconds sample s spent in the droplet stages (pt_clear, pt_trace,
 * pt_apply): what droplets/s and moves/s are measured against. */
double bench_pt_seconds(const bench_sample *s);

typedef struct bench_run {
  bench_opts o;
  bench_stream stream[2][BENCH_MAX_THREADS]; /* at start and at end */
  bench_sample *samples;
  int nsamples;
  double load[2][3]; /* load averages at start and end */
  char device_name[256];
  char date[64];
} bench_run;

/* The better of the start and end triad bandwidth at `threads` [GB/s]
 * (bench_measure.c). */
double bench_triad(const bench_run *b, int threads);

/* Times b->o.repeat repeats of domain d (warmed up) advanced tiled over a
 * store as --tile, --steps-per-exchange and --store say (bench_tiled.c);
 * d keeps its state, the tiles advance from it. Adds one sample per repeat. */
talus_status bench_tiled_time(bench_run *b, talus_domain *d, int w, int threads);
/* Fills a new sample's sizes and per-stage fields from d's parameters
 * and state over steps [first_step, first_step + steps), and prints its
 * line on stderr (bench_measure.c). */
void bench_sample_describe(bench_sample *s, const talus_domain *d, int w, int threads, int repeat,
                           const double stage_s[TALUS_STAGE_COUNT]);

/* CPU time of the whole process [s] (bench_measure.c). */
double bench_cpu_seconds(void);

/* The run as a new JSON document (bench_json.c), the caller's to free with
 * talus_json_free; NULL, with the error recorded, when memory runs out. */
talus_json *bench_json(const bench_run *b);

#endif /* TALUS_BENCH_H */
