/*
 * bench_json.c — talus_bench's JSON: the machine, the STREAM probes, every
 * timed run with its stages, per-workload medians, and the ratios the
 * performance targets are stated in (thread scaling, cost per cell-step
 * against the heightfield model), each taken within this one run; built
 * as one io/json.h document.
 */
#include "bench.h"
#include "io/json.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The CPU's model name from /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t size) {
  snprintf(out, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) || !colon) continue;
    snprintf(out, size, "%s", colon + 2);
    out[strcspn(out, "\n")] = 0;
    break;
  }
  if (f) fclose(f);
}

/* Sets o[key] to a new array of the n doubles v, each printed with fmt. */
static talus_status set_reals(talus_json *o, const char *key, const double *v, int n,
                              const char *fmt) {
  talus_json *a = talus_json_array();
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < n; i++)
    st = talus_json_push(a, talus_json_real(v[i], fmt));
  if (st) talus_json_free(a);
  return st ? st : talus_json_set(o, key, a);
}

/* The host, its CPU and kernel: a new object (the caller's) or NULL. */
static talus_json *json_host(void) {
  struct utsname u;
  char cpu[256], kernel[2 * sizeof u.release + 2];
  cpu_model(cpu, sizeof cpu);
  if (uname(&u)) memset(&u, 0, sizeof u);
  snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "host", talus_json_string(u.nodename));
  if (!st) st = talus_json_set(o, "cpu", talus_json_string(cpu));
  if (!st) st = talus_json_set(o, "logical_cpus", talus_json_int(sysconf(_SC_NPROCESSORS_ONLN)));
  if (!st) st = talus_json_set(o, "kernel", talus_json_string(kernel));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* The run's options: a new object (the caller's) or NULL. */
static talus_json *json_config(const bench_run *b) {
  const bench_opts *o = &b->o;
  const char *store =
      o->tile ? (o->store && strcmp(o->store, "memory") ? "disk" : "memory") : "none";
  talus_json *c = talus_json_object(), *threads = talus_json_array(), *sets = talus_json_array();
  talus_status st = talus_json_set(c, "size", talus_json_int(o->size));
  if (!st) st = talus_json_set(c, "steps", talus_json_int(o->steps));
  if (!st) st = talus_json_set(c, "warmup", talus_json_int(o->warmup));
  if (!st) st = talus_json_set(c, "repeat", talus_json_int(o->repeat));
  if (!st) st = talus_json_set(c, "seed", talus_json_int(o->seed));
  for (int i = 0; !st && i < o->nthreads; i++)
    st = talus_json_push(threads, talus_json_int(o->threads[i]));
  if (!st) st = talus_json_set(c, "threads", threads), threads = NULL;
  if (!st) st = talus_json_set(c, "device", talus_json_string(b->device_name));
  if (!st) st = talus_json_set(c, "tile", talus_json_int(o->tile));
  if (!st) st = talus_json_set(c, "steps_per_exchange", talus_json_int(o->tile ? o->K : 0));
  if (!st) st = talus_json_set(c, "store", talus_json_string(store));
  if (!st) st = talus_json_set(c, "store_level", talus_json_int(o->store_level));
  static const char *const modes[] = {"auto", "on", "off"}; /* TALUS_TILED_GPU_RESIDENT_* */
  if (!st) st = talus_json_set(c, "gpu_resident", talus_json_string(modes[o->gpu_resident]));
  for (int i = 0; !st && i < o->nsets; i++)
    st = talus_json_push(sets, talus_json_string(o->sets[i]));
  if (!st) st = talus_json_set(c, "sets", sets), sets = NULL;
  talus_json_free(threads);
  talus_json_free(sets);
  if (st) talus_json_free(c);
  return st ? NULL : c;
}

/* One STREAM probe: a new object (the caller's) or NULL. */
static talus_json *json_stream(const bench_stream *s, int end) {
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "when", talus_json_string(end ? "end" : "start"));
  if (!st) st = talus_json_set(o, "threads", talus_json_int(s->threads));
  if (!st) st = talus_json_set(o, "array_mib", talus_json_real(s->array_mib, "%.0f"));
  if (!st) st = talus_json_set(o, "copy_gbs", talus_json_real(s->copy_gbs, "%.3f"));
  if (!st) st = talus_json_set(o, "triad_gbs", talus_json_real(s->triad_gbs, "%.3f"));
  if (!st) st = talus_json_set(o, "read_gbs", talus_json_real(s->read_gbs, "%.3f"));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* The machine, the load, the options and the STREAM probes, into doc. */
static talus_status json_machine(talus_json *doc, const bench_run *b) {
  talus_json *load = talus_json_object(), *streams = talus_json_array();
  talus_status st = talus_json_set(doc, "machine", json_host());
  if (!st) st = set_reals(load, "start", b->load[0], 3, "%.2f");
  if (!st) st = set_reals(load, "end", b->load[1], 3, "%.2f");
  if (!st) st = talus_json_set(doc, "load_average", load), load = NULL;
  if (!st) st = talus_json_set(doc, "config", json_config(b));
  for (int when = 0; when < 2; when++)
    for (int i = 0; !st && i < b->o.nthreads; i++)
      st = talus_json_push(streams, json_stream(&b->stream[when][i], when));
  if (!st) st = talus_json_set(doc, "stream", streams), streams = NULL;
  talus_json_free(load);
  talus_json_free(streams);
  return st;
}

static double sample_mcells(const bench_sample *s) {
  return (double)s->cells * (double)s->steps / s->seconds / 1e6;
}

/* Bytes per cell-step of the whole step (sum over the stages that ran). */
static double sample_bytes(const bench_sample *s) {
  double sum = 0.0;
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    sum += s->stage_calls[i] * s->stage_bytes[i];
  return sum;
}

static double sample_gbs(const bench_sample *s) {
  return sample_bytes(s) * (double)s->cells * (double)s->steps / s->seconds / 1e9;
}

/* Ends object o with "gbs" and its share of the triad bandwidth
 * ("roofline_fraction"), after status st; frees o and returns NULL when
 * any insertion failed, else returns o. */
static talus_json *json_bandwidth_end(talus_json *o, talus_status st, double gbs, double triad) {
  if (!st) st = talus_json_set(o, "gbs", talus_json_real(gbs, "%.3f"));
  if (!st)
    st = talus_json_set(o, "roofline_fraction",
                        talus_json_real(triad > 0.0 ? gbs / triad : 0.0, "%.4f"));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* One stage of a sample: a new object (the caller's) or NULL. */
static talus_json *json_stage(const bench_sample *s, int i, double triad) {
  double bytes = s->stage_calls[i] * s->stage_bytes[i];
  double gbs =
      s->stage_s[i] > 0.0 ? bytes * (double)s->cells * (double)s->steps / s->stage_s[i] / 1e9 : 0.0;
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "name", talus_json_string(talus_stage_name(i)));
  if (!st) st = talus_json_set(o, "calls_per_step", talus_json_real(s->stage_calls[i], "%.4g"));
  if (!st)
    st = talus_json_set(o, "ms_per_step",
                        talus_json_real(1e3 * s->stage_s[i] / (double)s->steps, "%.4f"));
  if (!st) st = talus_json_set(o, "share", talus_json_real(s->stage_s[i] / s->seconds, "%.4f"));
  if (!st) st = talus_json_set(o, "bytes_per_cell_step", talus_json_real(bytes, "%.4g"));
  return json_bandwidth_end(o, st, gbs, triad);
}

/* The stages that ran in sample s and the time outside them, into o. */
static talus_status json_stages(talus_json *o, const bench_sample *s, double triad) {
  double staged = 0.0;
  talus_json *a = talus_json_array();
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < TALUS_STAGE_COUNT; i++) {
    if (s->stage_calls[i] <= 0.0) continue;
    staged += s->stage_s[i];
    st = talus_json_push(a, json_stage(s, i, triad));
  }
  if (!st) st = talus_json_set(o, "stages", a), a = NULL;
  talus_json_free(a);
  if (!st)
    st = talus_json_set(o, "driver_ms_per_step",
                        talus_json_real(1e3 * (s->seconds - staged) / (double)s->steps, "%.4f"));
  return st;
}

/* One timed run: a new object (the caller's) or NULL. */
/* Sets o's droplet figures of sample s: droplets, moves, and both per
 * second of the droplet stages. */
static talus_status json_droplets(talus_json *o, const bench_sample *s) {
  double pt = bench_pt_seconds(s);
  talus_status st = talus_json_set(o, "droplets", talus_json_real(s->droplets, "%.0f"));
  if (!st) st = talus_json_set(o, "moves", talus_json_real(s->moves, "%.0f"));
  if (!st) st = talus_json_set(o, "droplet_seconds", talus_json_real(pt, "%.6f"));
  if (!st && pt > 0.0)
    st = talus_json_set(o, "droplets_per_s", talus_json_real(s->droplets / pt, "%.1f"));
  if (!st && pt > 0.0)
    st = talus_json_set(o, "moves_per_s", talus_json_real(s->moves / pt, "%.1f"));
  return st;
}

static talus_json *json_sample(const bench_run *b, const bench_sample *s) {
  double triad = bench_triad(b, s->threads), gbs = sample_gbs(s);
  const char *model = s->model == TALUS_MODEL_HEIGHTFIELD ? "heightfield" : "layered";
  talus_json *o = talus_json_object();
  talus_status st =
      talus_json_set(o, "workload", talus_json_string(bench_workloads[s->workload].name));
  if (!st) st = talus_json_set(o, "model", talus_json_string(model));
  if (!st) st = talus_json_set(o, "threads", talus_json_int(s->threads));
  if (!st) st = talus_json_set(o, "repeat", talus_json_int(s->repeat));
  if (!st) st = talus_json_set(o, "size", talus_json_int(b->o.size));
  if (!st) st = talus_json_set(o, "cells", talus_json_int(s->cells));
  if (!st) st = talus_json_set(o, "layers", talus_json_int(s->layers));
  if (!st) st = talus_json_set(o, "mean_columns", talus_json_real(s->mean_columns, "%.4f"));
  if (!st) st = talus_json_set(o, "first_step", talus_json_int(s->first_step));
  if (!st && b->o.tile) st = talus_json_set(o, "resident", talus_json_int(s->resident));
  if (!st) st = talus_json_set(o, "steps", talus_json_int(s->steps));
  if (!st) st = talus_json_set(o, "seconds", talus_json_real(s->seconds, "%.6f"));
  if (!st)
    st = talus_json_set(o, "cpu_utilization",
                        talus_json_real(s->cpu_seconds / (s->seconds * s->threads), "%.3f"));
  if (!st)
    st = talus_json_set(o, "ms_per_step",
                        talus_json_real(1e3 * s->seconds / (double)s->steps, "%.4f"));
  if (!st) st = talus_json_set(o, "mcell_steps_per_s", talus_json_real(sample_mcells(s), "%.3f"));
  if (!st) st = talus_json_set(o, "bytes_per_cell_step", talus_json_real(sample_bytes(s), "%.4g"));
  if (!st) st = talus_json_set(o, "gbs", talus_json_real(gbs, "%.3f"));
  if (!st) st = talus_json_set(o, "stream_triad_gbs", talus_json_real(triad, "%.3f"));
  if (!st)
    st = talus_json_set(o, "roofline_fraction",
                        talus_json_real(triad > 0.0 ? gbs / triad : 0.0, "%.4f"));
  if (!st) st = json_stages(o, s, triad);
  if (!st && s->droplets > 0.0) st = json_droplets(o, s);
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of the seconds of workload w at `threads` (0 if never run). */
static double median_seconds(const bench_run *b, int w, int threads) {
  double v[1024];
  int n = 0;
  for (int i = 0; i < b->nsamples && n < 1024; i++)
    if (b->samples[i].workload == w && b->samples[i].threads == threads)
      v[n++] = b->samples[i].seconds;
  if (!n) return 0.0;
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The first sample of workload w at `threads` (for sizes and bytes). */
static const bench_sample *any_sample(const bench_run *b, int w, int threads) {
  for (int i = 0; i < b->nsamples; i++)
    if (b->samples[i].workload == w && b->samples[i].threads == threads) return &b->samples[i];
  return NULL;
}

/* One workload at one thread count, from its median: new object or NULL. */
static talus_json *json_summary_entry(const bench_run *b, const bench_sample *s, double sec) {
  double work = (double)s->cells * (double)s->steps, triad = bench_triad(b, s->threads);
  double gbs = sample_bytes(s) * work / sec / 1e9;
  talus_json *o = talus_json_object();
  talus_status st =
      talus_json_set(o, "workload", talus_json_string(bench_workloads[s->workload].name));
  if (!st) st = talus_json_set(o, "threads", talus_json_int(s->threads));
  if (!st)
    st = talus_json_set(o, "ms_per_step", talus_json_real(1e3 * sec / (double)s->steps, "%.4f"));
  if (!st) st = talus_json_set(o, "mcell_steps_per_s", talus_json_real(work / sec / 1e6, "%.3f"));
  if (!st) st = talus_json_set(o, "ns_per_cell_step", talus_json_real(1e9 * sec / work, "%.4f"));
  return json_bandwidth_end(o, st, gbs, triad);
}

/* Per workload and thread count, the medians: a new array or NULL. */
static talus_json *json_summary(const bench_run *b) {
  talus_json *a = talus_json_array();
  talus_status st = TALUS_OK;
  for (int w = 0; w < bench_workload_count; w++)
    for (int i = 0; !st && i < b->o.nthreads; i++) {
      const bench_sample *s = any_sample(b, w, b->o.threads[i]);
      double sec = median_seconds(b, w, b->o.threads[i]);
      if (s && sec > 0.0) st = talus_json_push(a, json_summary_entry(b, s, sec));
    }
  if (st) talus_json_free(a);
  return st ? NULL : a;
}

/* Workload w's scaling from thread count t0 to t1: the median ratio and
 * each repeat's, as a new object (the caller's) or NULL. */
static talus_json *json_scaling_one(const bench_run *b, int w, int t0, int t1, double median) {
  talus_json *o = talus_json_object(), *per = talus_json_array();
  talus_status st = talus_json_set(o, "median", talus_json_real(median, "%.4f"));
  for (int r = 0; !st && r < b->o.repeat; r++) {
    double a = 0.0, c = 0.0;
    for (int i = 0; i < b->nsamples; i++) {
      const bench_sample *s = &b->samples[i];
      if (s->workload != w || s->repeat != r) continue;
      if (s->threads == t0) a = s->seconds;
      if (s->threads == t1) c = s->seconds;
    }
    if (a > 0.0 && c > 0.0) st = talus_json_push(per, talus_json_real(a / c, "%.4f"));
  }
  if (!st) st = talus_json_set(o, "per_repeat", per), per = NULL;
  talus_json_free(per);
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* Per repeat, seconds at the first thread count over seconds at the last,
 * into ratios as "scaling_T0_to_T1". */
static talus_status json_scaling(talus_json *ratios, const bench_run *b) {
  int t0 = b->o.threads[0], t1 = b->o.threads[b->o.nthreads - 1];
  char key[64];
  snprintf(key, sizeof key, "scaling_%d_to_%d", t0, t1);
  talus_json *o = talus_json_object();
  talus_status st = TALUS_OK;
  for (int w = 0; !st && b->o.nthreads > 1 && w < bench_workload_count; w++) {
    double m0 = median_seconds(b, w, t0), m1 = median_seconds(b, w, t1);
    if (m0 > 0.0 && m1 > 0.0)
      st = talus_json_set(o, bench_workloads[w].name, json_scaling_one(b, w, t0, t1, m0 / m1));
  }
  if (st) talus_json_free(o);
  return st ? st : talus_json_set(ratios, key, o);
}

/* Cost per cell-step of every workload over the heightfield model's (the
 * first workload) at thread count th, medians of this run: a new object
 * (the caller's) or NULL. */
static talus_json *json_cost_at(const bench_run *b, int th) {
  const bench_sample *h = any_sample(b, 0, th);
  double hs = median_seconds(b, 0, th);
  talus_json *o = talus_json_object();
  talus_status st = TALUS_OK;
  for (int w = 1; !st && h && hs > 0.0 && w < bench_workload_count; w++) {
    const bench_sample *s = any_sample(b, w, th);
    double ws = median_seconds(b, w, th);
    if (!s || !(ws > 0.0)) continue;
    double ratio = (ws / ((double)s->cells * s->steps)) / (hs / ((double)h->cells * h->steps));
    st = talus_json_set(o, bench_workloads[w].name, talus_json_real(ratio, "%.4f"));
  }
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* The costs at each thread count, into ratios. */
static talus_status json_cost(talus_json *ratios, const bench_run *b) {
  talus_json *o = talus_json_object();
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < b->o.nthreads; i++) {
    char key[32];
    snprintf(key, sizeof key, "threads_%d", b->o.threads[i]);
    st = talus_json_set(o, key, json_cost_at(b, b->o.threads[i]));
  }
  if (st) talus_json_free(o);
  return st ? st : talus_json_set(ratios, "cost_per_cell_step_vs_heightfield", o);
}

talus_json *bench_json(const bench_run *b) {
  talus_json *doc = talus_json_object(), *runs = talus_json_array(), *ratios = talus_json_object();
  talus_status st = talus_json_set(doc, "benchmark", talus_json_string("talus_bench"));
  if (!st) st = talus_json_set(doc, "talus", talus_json_string(talus_version()));
  if (!st) st = talus_json_set(doc, "date_utc", talus_json_string(b->date));
  if (!st) st = json_machine(doc, b);
  for (int i = 0; !st && i < b->nsamples; i++)
    st = talus_json_push(runs, json_sample(b, &b->samples[i]));
  if (!st) st = talus_json_set(doc, "runs", runs), runs = NULL;
  if (!st) st = talus_json_set(doc, "summary", json_summary(b));
  if (!st) st = json_scaling(ratios, b);
  if (!st) st = json_cost(ratios, b);
  if (!st) st = talus_json_set(doc, "ratios", ratios), ratios = NULL;
  talus_json_free(runs);
  talus_json_free(ratios);
  if (st) talus_json_free(doc);
  return st ? NULL : doc;
}
