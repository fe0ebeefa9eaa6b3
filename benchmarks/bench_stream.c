/*
 * bench_stream.c — a STREAM-like probe of this machine's memory bandwidth,
 * run in the same process (and at the same thread count) as the workloads,
 * so a stage's GB/s over it is a roofline fraction from one run. Arrays are
 * first touched by the threads that use them (static schedule both times).
 */
#include "bench.h"

#include <omp.h>
#include <stdlib.h>

typedef struct stream_arrays {
  double *a, *b, *c;
  long n;
} stream_arrays;

static void stream_init(stream_arrays *s) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < s->n; i++)
    s->a[i] = 1.0, s->b[i] = 2.0, s->c[i] = 0.0;
}

static double stream_copy(stream_arrays *s) {
  double t0 = talus_now();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < s->n; i++)
    s->c[i] = s->a[i];
  return talus_now() - t0;
}

static double stream_triad(stream_arrays *s, double q) {
  double t0 = talus_now();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < s->n; i++)
    s->a[i] = s->b[i] + q * s->c[i];
  return talus_now() - t0;
}

/* A read-only sum: the bandwidth a stage that mostly reads can reach. Four
 * independent sums per thread, so the additions' latency does not bound it
 * (one chain of dependent adds reads only ~8 bytes per add latency). */
static double stream_read(stream_arrays *s, double *sink) {
  double t0 = talus_now(), acc = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : acc)
  for (long i = 0; i < s->n / 4; i++)
    acc += (s->b[4 * i] + s->b[4 * i + 1]) + (s->b[4 * i + 2] + s->b[4 * i + 3]);
  *sink += acc;
  return talus_now() - t0;
}

static double fmin_pos(double a, double b) {
  return a > 0.0 && a < b ? a : b;
}

talus_status bench_stream_measure(int threads, double array_mib, int reps, bench_stream *out) {
  stream_arrays s = {0};
  s.n = (long)(array_mib * 1024.0 * 1024.0 / sizeof(double));
  size_t bytes = (size_t)s.n * sizeof(double);
  s.a = malloc(bytes), s.b = malloc(bytes), s.c = malloc(bytes);
  if (s.n <= 0 || !s.a || !s.b || !s.c) {
    free(s.a), free(s.b), free(s.c);
    return talus_fail(TALUS_ERR_NOMEM, "bench", "no memory for %.0f MiB stream arrays", array_mib);
  }
  omp_set_num_threads(threads);
  stream_init(&s);
  double best_copy = 1e30, best_triad = 1e30, best_read = 1e30, sink = 0.0;
  for (int r = 0; r < reps; r++) {
    best_copy = fmin_pos(stream_copy(&s), best_copy);
    best_triad = fmin_pos(stream_triad(&s, 0.5), best_triad);
    best_read = fmin_pos(stream_read(&s, &sink), best_read);
  }
  out->threads = threads;
  out->array_mib = array_mib;
  out->copy_gbs = 2.0 * (double)bytes / best_copy / 1e9;
  out->triad_gbs = 3.0 * (double)bytes / best_triad / 1e9;
  out->read_gbs = (double)bytes / best_read / 1e9 + 0.0 * sink;
  free(s.a), free(s.b), free(s.c);
  return TALUS_OK;
}
