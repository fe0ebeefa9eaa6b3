/*
 * test_fmath.c — the kernels' own libm: talus_tanhf (kernels/fmath.h) is
 * tanh rounded to float, and talus_nextf (kernels/select.h) gives
 * nextafterf's bits for every input class, with and without the flush of
 * denormals the CPU stages run under.
 */
#include "check.h"
#include "kernels/fmath.h"
#include "kernels/select.h"

#include <float.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint32_t to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Every 13th float of [0, 10] (a prime stride: all exponents and low
 * bits), its negative, and the special values: tanh rounded to nearest; a miss is allowed only at a
 * rounding tie that the double intermediate cannot resolve, and then by one ulp. */
static void tanh_rounded(void) {
  long exact = 0, near_tie = 0, worse = 0;
  for (uint32_t u = 0; u <= to_bits(10.0f); u += 13) {
    float x = from_bits(u);
    double ref = tanh((double)x);
    float want = (float)ref, got = talus_tanhf(x);
    if (to_bits(got) == to_bits(want)) {
      exact++;
    } else {
      float lo = want < got ? want : got, hi = want < got ? got : want;
      double mid = ((double)lo + (double)hi) / 2.0;
      int tie = nextafterf(lo, INFINITY) == hi && fabs(ref - mid) <= 1e-15 * fabs(ref);
      near_tie += tie;
      worse += !tie;
      if (!tie && worse <= 5)
        fprintf(stderr, "tanh(%a): got %a want %a (ref %a)\n", x, got, want, ref);
    }
    float nx = -x;
    if (to_bits(talus_tanhf(nx)) != (to_bits(got) | 0x80000000u)) worse++;
  }
  CHECK(worse == 0, "%ld floats of [-10, 10] not tanh rounded to nearest", worse);
  CHECK(near_tie <= exact / 1000000 + 4, "%ld misses at ties (of %ld exact)", near_tie, exact);
  CHECK(exact > 80000000L, "%ld floats checked", exact);
  printf("tanh: %ld of %ld floats rounded to nearest, %ld misses at ties\n", exact,
         exact + near_tie + worse, near_tie);
  CHECK(talus_tanhf(INFINITY) == 1.0f && talus_tanhf(-INFINITY) == -1.0f, "tanh(±inf) = ±1");
  CHECK(talus_tanhf(20.0f) == 1.0f && talus_tanhf(FLT_MAX) == 1.0f, "tanh(large) = 1");
  CHECK(isnan(talus_tanhf(NAN)), "tanh(NaN) is NaN");
  CHECK(to_bits(talus_tanhf(-0.0f)) == 0x80000000u, "tanh(-0) = -0");
}

/* talus_nextf against nextafterf for one x, both directions. */
static int next_same(float x) {
  int ok = 1;
  for (int up = 0; up <= 1; up++) {
    float want = nextafterf(x, up ? INFINITY : -INFINITY), got = talus_nextf(x, up);
    int same = to_bits(got) == to_bits(want) || (isnan(got) && isnan(want));
    if (!same) fprintf(stderr, "nextf(%a, %d): got %a want %a\n", x, up, got, want);
    ok &= same;
  }
  return ok;
}

/* The special classes, then a walk over bit patterns of every exponent. */
static int next_all_same(void) {
  static const uint32_t special[] = {0x0u,        0x80000000u, 0x1u,        0x80000001u,
                                     0x7FFFFFu,   0x807FFFFFu, 0x800000u,   0x80800000u,
                                     0x3F800000u, 0xBF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                     0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u};
  int ok = 1;
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    ok &= next_same(from_bits(special[i]));
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 65521u) /* a prime stride: every exponent */
    ok &= next_same(from_bits((uint32_t)u));
  return ok;
}

static void nextf_matches_libm(void) {
  CHECK(next_all_same(), "talus_nextf = nextafterf");
#if defined(__SSE__)
  unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u); /* as the CPU stages run */
  int ok = next_all_same();
  _mm_setcsr(csr);
  CHECK(ok, "talus_nextf = nextafterf with denormals flushed");
#endif
}

int main(void) {
  tanh_rounded();
  nextf_matches_libm();
  return check_report("test_fmath");
}
