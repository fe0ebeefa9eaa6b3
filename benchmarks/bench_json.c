/*
 * bench_json.c — talus_bench's JSON: the machine, the STREAM probes, every
 * timed run with its stages, per-workload medians, and the ratios the
 * performance targets are stated in (thread scaling, cost per cell-step
 * against the heightfield model), each taken within this one run.
 */
#include "bench.h"

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

static void json_machine(FILE *f, const bench_run *b) {
  struct utsname u;
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  if (uname(&u)) memset(&u, 0, sizeof u);
  fprintf(f,
          "  \"machine\": {\"host\": \"%s\", \"cpu\": \"%s\", \"logical_cpus\": %ld, "
          "\"kernel\": \"%s %s\"},\n",
          u.nodename, cpu, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release);
  fprintf(f, "  \"load_average\": {\"start\": [%.2f, %.2f, %.2f], \"end\": [%.2f, %.2f, %.2f]},\n",
          b->load[0][0], b->load[0][1], b->load[0][2], b->load[1][0], b->load[1][1], b->load[1][2]);
  const bench_opts *o = &b->o;
  fprintf(f,
          "  \"config\": {\"size\": %lld, \"steps\": %lld, \"warmup\": %lld, \"repeat\": %lld, "
          "\"seed\": %lld, \"threads\": [",
          (long long)o->size, (long long)o->steps, (long long)o->warmup, (long long)o->repeat,
          (long long)o->seed);
  for (int i = 0; i < o->nthreads; i++)
    fprintf(f, "%s%d", i ? ", " : "", o->threads[i]);
  fprintf(f,
          "], \"device\": \"%s\", \"tile\": %lld, \"steps_per_exchange\": %lld, "
          "\"store\": \"%s\", \"sets\": [",
          b->device_name, (long long)o->tile, (long long)(o->tile ? o->K : 0),
          o->tile ? (o->store && strcmp(o->store, "memory") ? "disk" : "memory") : "none");
  for (int i = 0; i < o->nsets; i++)
    fprintf(f, "%s\"%s\"", i ? ", " : "", o->sets[i]);
  fprintf(f, "]},\n  \"stream\": [");
  for (int when = 0, n = 0; when < 2; when++)
    for (int i = 0; i < o->nthreads; i++, n++) {
      const bench_stream *s = &b->stream[when][i];
      fprintf(f,
              "%s\n    {\"when\": \"%s\", \"threads\": %d, \"array_mib\": %.0f, \"copy_gbs\": "
              "%.3f, \"triad_gbs\": %.3f, \"read_gbs\": %.3f}",
              n ? "," : "", when ? "end" : "start", s->threads, s->array_mib, s->copy_gbs,
              s->triad_gbs, s->read_gbs);
    }
  fprintf(f, "\n  ],\n");
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

static void json_stages(FILE *f, const bench_sample *s, double triad) {
  double staged = 0.0;
  int n = 0;
  fprintf(f, "\"stages\": [");
  for (int i = 0; i < TALUS_STAGE_COUNT; i++) {
    if (s->stage_calls[i] <= 0.0) continue;
    double bytes = s->stage_calls[i] * s->stage_bytes[i];
    double gbs = s->stage_s[i] > 0.0
                     ? bytes * (double)s->cells * (double)s->steps / s->stage_s[i] / 1e9
                     : 0.0;
    staged += s->stage_s[i];
    fprintf(f,
            "%s\n        {\"name\": \"%s\", \"calls_per_step\": %.4g, \"ms_per_step\": %.4f, "
            "\"share\": %.4f, \"bytes_per_cell_step\": %.4g, \"gbs\": %.3f, "
            "\"roofline_fraction\": %.4f}",
            n++ ? "," : "", talus_stage_name(i), s->stage_calls[i],
            1e3 * s->stage_s[i] / (double)s->steps, s->stage_s[i] / s->seconds, bytes, gbs,
            triad > 0.0 ? gbs / triad : 0.0);
  }
  fprintf(f, "\n      ], \"driver_ms_per_step\": %.4f",
          1e3 * (s->seconds - staged) / (double)s->steps);
}

static void json_sample(FILE *f, const bench_run *b, const bench_sample *s, int first) {
  double triad = bench_triad(b, s->threads), gbs = sample_gbs(s);
  fprintf(f,
          "%s\n    {\"workload\": \"%s\", \"model\": \"%s\", \"threads\": %d, \"repeat\": %d, "
          "\"size\": %lld, \"cells\": %lld, \"layers\": %d, \"mean_columns\": %.4f, "
          "\"first_step\": %lld, \"steps\": %lld, \"seconds\": %.6f, \"cpu_utilization\": %.3f, "
          "\"ms_per_step\": %.4f, "
          "\"mcell_steps_per_s\": %.3f, \"bytes_per_cell_step\": %.4g, \"gbs\": %.3f, "
          "\"stream_triad_gbs\": %.3f, \"roofline_fraction\": %.4f,\n      ",
          first ? "" : ",", bench_workloads[s->workload].name,
          s->model == TALUS_MODEL_HEIGHTFIELD ? "heightfield" : "layered", s->threads, s->repeat,
          (long long)b->o.size, (long long)s->cells, s->layers, s->mean_columns,
          (long long)s->first_step, (long long)s->steps, s->seconds,
          s->cpu_seconds / (s->seconds * s->threads), 1e3 * s->seconds / (double)s->steps,
          sample_mcells(s), sample_bytes(s), gbs, triad, triad > 0.0 ? gbs / triad : 0.0);
  json_stages(f, s, triad);
  fprintf(f, "}");
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

static void json_summary(FILE *f, const bench_run *b) {
  int n = 0;
  fprintf(f, "  \"summary\": [");
  for (int w = 0; w < bench_workload_count; w++)
    for (int i = 0; i < b->o.nthreads; i++) {
      const bench_sample *s = any_sample(b, w, b->o.threads[i]);
      double sec = median_seconds(b, w, b->o.threads[i]);
      if (!s || !(sec > 0.0)) continue;
      double work = (double)s->cells * (double)s->steps, triad = bench_triad(b, s->threads);
      double gbs = sample_bytes(s) * work / sec / 1e9;
      fprintf(f,
              "%s\n    {\"workload\": \"%s\", \"threads\": %d, \"ms_per_step\": %.4f, "
              "\"mcell_steps_per_s\": %.3f, \"ns_per_cell_step\": %.4f, \"gbs\": %.3f, "
              "\"roofline_fraction\": %.4f}",
              n++ ? "," : "", bench_workloads[w].name, s->threads, 1e3 * sec / (double)s->steps,
              work / sec / 1e6, 1e9 * sec / work, gbs, triad > 0.0 ? gbs / triad : 0.0);
    }
  fprintf(f, "\n  ],\n");
}

/* Per repeat, seconds at the first thread count over seconds at the last. */
static void json_scaling(FILE *f, const bench_run *b) {
  int t0 = b->o.threads[0], t1 = b->o.threads[b->o.nthreads - 1], n = 0;
  fprintf(f, "    \"scaling_%d_to_%d\": {", t0, t1);
  for (int w = 0; b->o.nthreads > 1 && w < bench_workload_count; w++) {
    double m0 = median_seconds(b, w, t0), m1 = median_seconds(b, w, t1);
    if (!(m0 > 0.0 && m1 > 0.0)) continue;
    fprintf(f, "%s\n      \"%s\": {\"median\": %.4f, \"per_repeat\": [", n++ ? "," : "",
            bench_workloads[w].name, m0 / m1);
    for (int r = 0, k = 0; r < b->o.repeat; r++) {
      double a = 0.0, c = 0.0;
      for (int i = 0; i < b->nsamples; i++) {
        const bench_sample *s = &b->samples[i];
        if (s->workload != w || s->repeat != r) continue;
        if (s->threads == t0) a = s->seconds;
        if (s->threads == t1) c = s->seconds;
      }
      if (a > 0.0 && c > 0.0) fprintf(f, "%s%.4f", k++ ? ", " : "", a / c);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "\n    },\n");
}

/* Cost per cell-step of every workload over the heightfield model's (the
 * first workload), at each thread count; medians of this run. */
static void json_cost(FILE *f, const bench_run *b) {
  fprintf(f, "    \"cost_per_cell_step_vs_heightfield\": {");
  for (int i = 0; i < b->o.nthreads; i++) {
    int th = b->o.threads[i], n = 0;
    const bench_sample *h = any_sample(b, 0, th);
    double hs = median_seconds(b, 0, th);
    fprintf(f, "%s\n      \"threads_%d\": {", i ? "," : "", th);
    for (int w = 1; h && hs > 0.0 && w < bench_workload_count; w++) {
      const bench_sample *s = any_sample(b, w, th);
      double ws = median_seconds(b, w, th);
      if (!s || !(ws > 0.0)) continue;
      double ratio = (ws / ((double)s->cells * s->steps)) / (hs / ((double)h->cells * h->steps));
      fprintf(f, "%s\"%s\": %.4f", n++ ? ", " : "", bench_workloads[w].name, ratio);
    }
    fprintf(f, "}");
  }
  fprintf(f, "\n    }\n");
}

void bench_json(FILE *f, const bench_run *b) {
  fprintf(f,
          "{\n  \"benchmark\": \"talus_bench\",\n  \"talus\": \"%s\",\n  \"date_utc\": \"%s\",\n",
          talus_version(), b->date);
  json_machine(f, b);
  fprintf(f, "  \"runs\": [");
  for (int i = 0; i < b->nsamples; i++)
    json_sample(f, b, &b->samples[i], i == 0);
  fprintf(f, "\n  ],\n");
  json_summary(f, b);
  fprintf(f, "  \"ratios\": {\n");
  json_scaling(f, b);
  json_cost(f, b);
  fprintf(f, "  }\n}\n");
}
