/*
 * common.h — status plumbing, the thread-local error buffer, logging and the
 * counter-based hash. Small and physics-free; every module may include it.
 *
 * Errors: a failing function calls talus_fail(status, module, fmt, ...) once,
 * at the place that knows what went wrong, and returns its status; callers
 * pass the status up unchanged (they may prepend context with
 * talus_fail_context). The message reaches the user through
 * talus_last_error().
 */
#ifndef TALUS_COMMON_H
#define TALUS_COMMON_H

#include "talus_status.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Path buffers. A path as the system allows it, and room for what talus
 * appends to one: ".partial", a map's "_sediment.tif", a store's tile or
 * journal name, ".tmp"; no suffix is longer than TALUS_PATH_SUFFIX_MAX. A
 * path longer than its buffer is refused with a message, never cut. */
#define TALUS_PATH_MAX        4096
#define TALUS_PATH_SUFFIX_MAX 104
#define TALUS_PATH_BUF        (TALUS_PATH_MAX + TALUS_PATH_SUFFIX_MAX)

#if defined(__CUDACC__)
#define TALUS_HD __host__ __device__
#else
#define TALUS_HD
#endif

#if defined(__GNUC__)
#define TALUS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TALUS_PRINTF(a, b)
#endif

/* Records "module: message" in this thread's error buffer; returns status. */
talus_status talus_fail(talus_status status, const char *module, const char *fmt, ...)
    TALUS_PRINTF(3, 4);
/* Prefixes the current message with "context: "; returns status. */
talus_status talus_fail_context(talus_status status, const char *fmt, ...) TALUS_PRINTF(2, 3);
/* Clears this thread's error buffer. */
void talus_error_clear(void);

/* Logging to stderr. Levels: 0 quiet (errors only), 1 warnings+info (default),
 * 2 debug. Only rank 0 logs when MPI is active (set via talus_log_set_rank). */
void talus_log_set_level(int level);
int talus_log_level(void);
void talus_log_set_rank(int rank);
/* 1 when messages of `level` reach the terminal: at or below the log level,
 * on rank 0. Progress displays follow the same rule as the log. */
int talus_log_shown(int level);
void talus_warn(const char *fmt, ...) TALUS_PRINTF(1, 2);
void talus_info(const char *fmt, ...) TALUS_PRINTF(1, 2);
void talus_debug(const char *fmt, ...) TALUS_PRINTF(1, 2);

/* Monotonic wall clock [s]. */
double talus_now(void);
/* Peak resident set size of this process [bytes]; 0 if unknown. */
size_t talus_peak_rss(void);

/* Allocation helpers: zeroed, 64-byte aligned; fail with TALUS_ERR_NOMEM and
 * a message naming `what`. Free with talus_free (NULL is a no-op; a pointer
 * talus_alloc did not return aborts). Blocks of 1 MiB and more are fresh
 * anonymous mappings, 2 MiB aligned: zero without a memset, each page
 * faulted in by its first writer, so a buffer first written by an OpenMP
 * loop is placed by its threads and pages never written cost nothing. With
 * TALUS_HUGEPAGES=1 in the environment they get MADV_HUGEPAGE where the
 * platform has it (off by default: see common.c). */
talus_status talus_alloc(void **out, size_t bytes, const char *what);
void talus_free(void *p);

/*
 * talus_hash — counter-based integer hash of (seed, gx, gy, step, stream):
 * the only randomness kernels may use. Pure integer arithmetic, so it is
 * identical on CPU and GPU, in any tile, on any rank, at any step count.
 * Built from the splitmix/murmur finaliser applied to a 64-bit mix.
 */
TALUS_HD static inline uint32_t talus_hash(uint32_t seed, int32_t gx, int32_t gy, uint64_t step,
                                           uint32_t stream) {
  uint64_t h = (uint64_t)seed * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)(uint32_t)gx << 32 | (uint32_t)gy) + 0xBF58476D1CE4E5B9ull + (h << 6) + (h >> 2);
  h ^= step * 0x94D049BB133111EBull + ((uint64_t)stream << 17) + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return (uint32_t)(h >> 32);
}

/* Uniform in [0,1) with 24 bits, from the hash. */
TALUS_HD static inline float talus_hash_unit(uint32_t seed, int32_t gx, int32_t gy, uint64_t step,
                                             uint32_t stream) {
  return (float)(talus_hash(seed, gx, gy, step, stream) >> 8) * (1.0f / 16777216.0f);
}

#endif /* TALUS_COMMON_H */
