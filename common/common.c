/*
 * common.c — error buffer, logging, clocks, aligned allocation.
 * The error buffer is thread-local so that OpenMP workers and API callers on
 * different threads never see each other's messages.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static _Thread_local char error_buffer[2048];
static int log_level = 1;
static int log_rank = 0;

static const char *const status_names[] = {"TALUS_OK",
                                           "TALUS_ERR_ARGUMENT",
                                           "TALUS_ERR_NOMEM",
                                           "TALUS_ERR_IO",
                                           "TALUS_ERR_FORMAT",
                                           "TALUS_ERR_PARAM",
                                           "TALUS_ERR_RANGE",
                                           "TALUS_ERR_DATA",
                                           "TALUS_ERR_CANCELLED",
                                           "TALUS_ERR_UNSUPPORTED",
                                           "TALUS_ERR_INTERNAL",
                                           "TALUS_ERR_DEVICE"};

const char *talus_status_name(talus_status status) {
  if ((unsigned)status < sizeof status_names / sizeof status_names[0]) return status_names[status];
  return "TALUS_ERR_UNKNOWN";
}

const char *talus_last_error(void) {
  return error_buffer;
}

void talus_error_clear(void) {
  error_buffer[0] = '\0';
}

talus_status talus_fail(talus_status status, const char *module, const char *fmt, ...) {
  int n = snprintf(error_buffer, sizeof error_buffer, "%s: ", module ? module : "talus");
  if (n < 0 || (size_t)n >= sizeof error_buffer) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_buffer + n, sizeof error_buffer - (size_t)n, fmt, ap);
  va_end(ap);
  return status;
}

talus_status talus_fail_context(talus_status status, const char *fmt, ...) {
  char old[sizeof error_buffer];
  memcpy(old, error_buffer, sizeof old);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(error_buffer, sizeof error_buffer, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof error_buffer) return status;
  snprintf(error_buffer + n, sizeof error_buffer - (size_t)n, ": %s", old);
  return status;
}

void talus_log_set_level(int level) {
  log_level = level;
}
int talus_log_level(void) {
  return log_level;
}
void talus_log_set_rank(int rank) {
  log_rank = rank;
}

int talus_log_shown(int level) {
  return level <= log_level && log_rank == 0;
}

static void log_emit(int level, const char *tag, const char *fmt, va_list ap) {
  if (!talus_log_shown(level)) return;
  fprintf(stderr, "talus: %s", tag);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void talus_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_emit(1, "warning: ", fmt, ap);
  va_end(ap);
}

void talus_info(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_emit(1, "", fmt, ap);
  va_end(ap);
}

void talus_debug(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  log_emit(2, "debug: ", fmt, ap);
  va_end(ap);
}

double talus_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t talus_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (size_t)ru.ru_maxrss * 1024u;
}

talus_status talus_alloc(void **out, size_t bytes, const char *what) {
  *out = NULL;
  size_t rounded = (bytes + 63u) & ~(size_t)63u;
  if (rounded < bytes) return talus_fail(TALUS_ERR_NOMEM, "alloc", "%s: size overflow", what);
  void *p = aligned_alloc(64, rounded ? rounded : 64);
  if (!p) return talus_fail(TALUS_ERR_NOMEM, "alloc", "%s: cannot allocate %zu bytes", what, bytes);
  memset(p, 0, rounded ? rounded : 64);
  *out = p;
  return TALUS_OK;
}

void talus_free(void *p) {
  free(p);
}
