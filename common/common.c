/*
 * common.c — error buffer, logging, clocks, aligned allocation.
 * The error buffer is thread-local so that OpenMP workers and API callers on
 * different threads never see each other's messages.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
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

/* Every block starts 64 bytes after a header that says how to give it
 * back: from the heap (len 0) or a mapping of len bytes at base. */
typedef struct alloc_head {
  uint64_t magic;
  void *base;
  size_t len;
  char pad[64 - 8 - sizeof(void *) - sizeof(size_t)];
} alloc_head;
#define ALLOC_MAGIC   0x74616c7573616c6cull
#define ALLOC_MAP_MIN ((size_t)1 << 20) /* blocks from here on are mapped */
#define ALLOC_HUGE    ((size_t)1 << 21) /* and aligned to a huge page */

/* 1 when TALUS_HUGEPAGES=1 asks for transparent huge pages on mapped
 * blocks. Off by default: on the 2-core VM of benchmarks/RESULTS.md
 * (THP "madvise", defrag "madvise") a 2048² heightfield run's huge-page
 * faults cost 0.3-0.4 s more system time than 4 KiB ones, which 16 steps'
 * fewer TLB misses (1 % of user time) did not win back. */
static int alloc_want_huge(void) {
  const char *v = getenv("TALUS_HUGEPAGES");
  return v && v[0] == '1';
}

/* A mapped block of `rounded` bytes, 2 MiB aligned (huge pages asked for
 * where the platform has them and TALUS_HUGEPAGES=1). The kernel hands out
 * zeroed pages on first touch, so no memset: the pages are faulted in by
 * whoever writes them first (the threads of the loops that use them), not
 * all here, and pages never written cost nothing. */
static void *alloc_map(size_t rounded) {
  size_t body = (rounded + ALLOC_HUGE - 1) & ~(ALLOC_HUGE - 1);
  size_t len = body + ALLOC_HUGE; /* room for the header below a 2 MiB boundary */
  if (body < rounded || len < body) return NULL;
  void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  uintptr_t at =
      ((uintptr_t)base + sizeof(alloc_head) + ALLOC_HUGE - 1) & ~(uintptr_t)(ALLOC_HUGE - 1);
#ifdef MADV_HUGEPAGE
  /* Only the whole huge pages of the block: a partly used one would hold
   * up to 2 MiB more than the block touches (and than tiler/plan.c counts). */
  size_t whole = rounded & ~(ALLOC_HUGE - 1);
  if (whole && alloc_want_huge())
    madvise((void *)at, whole, MADV_HUGEPAGE); /* advice: its failure changes nothing */
#endif
  alloc_head *h = (alloc_head *)at - 1;
  h->magic = ALLOC_MAGIC;
  h->base = base;
  h->len = len;
  return (void *)at;
}

/* A heap block of `rounded` bytes after its header, zeroed. */
static void *alloc_heap(size_t rounded) {
  if (rounded + sizeof(alloc_head) < rounded) return NULL;
  alloc_head *h = aligned_alloc(64, rounded + sizeof(alloc_head));
  if (!h) return NULL;
  h->magic = ALLOC_MAGIC;
  h->base = h;
  h->len = 0;
  memset(h + 1, 0, rounded);
  return h + 1;
}

talus_status talus_alloc(void **out, size_t bytes, const char *what) {
  *out = NULL;
  size_t rounded = (bytes + 63u) & ~(size_t)63u;
  if (rounded < bytes) return talus_fail(TALUS_ERR_NOMEM, "alloc", "%s: size overflow", what);
  if (!rounded) rounded = 64;
  void *p = rounded >= ALLOC_MAP_MIN ? alloc_map(rounded) : alloc_heap(rounded);
  if (!p) return talus_fail(TALUS_ERR_NOMEM, "alloc", "%s: cannot allocate %zu bytes", what, bytes);
  *out = p;
  return TALUS_OK;
}

void talus_free(void *p) {
  if (!p) return;
  alloc_head *h = (alloc_head *)p - 1;
  if (h->magic != ALLOC_MAGIC) abort(); /* not a talus_alloc block: a bug to stop at */
  h->magic = 0;
  if (h->len)
    munmap(h->base, h->len);
  else
    free(h->base);
}
