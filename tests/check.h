/*
 * check.h — the tiny assertion kit of the C tests. CHECK records a failure
 * and goes on; CHECK_CLOSE compares with an absolute tolerance; a test ends
 * with `return check_report(name);`, which prints "N passed, N failed" and
 * returns non-zero on any failure. check_skip() prints why and returns 77,
 * the code ctest reports as skipped.
 */
#ifndef TALUS_TEST_CHECK_H
#define TALUS_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (cond) {                                                                                    \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond);                           \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

#define CHECK_CLOSE(a, b, tol, what)                                                               \
  CHECK(fabs((double)(a) - (double)(b)) <= (double)(tol), "%s: %.9g vs %.9g (tol %g)", what,       \
        (double)(a), (double)(b), (double)(tol))

static inline int check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
  return check_failed ? 1 : 0;
}

static inline int check_skip(const char *name, const char *why) {
  printf("%s: skipped: %s\n", name, why);
  return 77;
}

#endif
