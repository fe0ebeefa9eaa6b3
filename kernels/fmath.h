/*
 * fmath.h — the transcendental functions of the kernels, written out in
 * plain IEEE arithmetic instead of called from libm.
 *
 * Why: a libm call stops the compiler from turning a kernel's cell loop
 * into a vector loop (GCC has no bit-exact vector tanhf), costs a call per
 * cell, and gives different bits on the GPU (CUDA's tanhf is not glibc's).
 * These functions use only +, -, *, / and bit moves, in double, with no
 * FMA contraction (the build turns it off on both compilers), so every
 * instruction set, every vector width and the GPU compute the same bits.
 *
 * Accuracy: the double intermediate carries ~1e-16 relative error, so the
 * float result is tanh rounded to nearest except within ~1e-16 of a
 * rounding tie (test_fmath checks every 13th float of [0, 10] against
 * libm's double tanh rounded to float, and counts the ties it misses).
 */
#ifndef TALUS_KERNELS_FMATH_H
#define TALUS_KERNELS_FMATH_H

#include "common/common.h"
#include <stdint.h>
#include <string.h>

/* e^r - 1 for |r| <= ln2/2: Taylor to r^12 (the next term is < 2e-16). */
TALUS_HD static inline double talus_expm1_reduced(double r) {
  double p = 0x1.1eed8eff8d898p-29; /* 1/12! */
  p = 0x1.ae64567f544e4p-26 + r * p;
  p = 0x1.27e4fb7789f5cp-22 + r * p;
  p = 0x1.71de3a556c734p-19 + r * p;
  p = 0x1.a01a01a01a01ap-16 + r * p;
  p = 0x1.a01a01a01a01ap-13 + r * p;
  p = 0x1.6c16c16c16c17p-10 + r * p;
  p = 0x1.1111111111111p-7 + r * p;
  p = 0x1.5555555555555p-5 + r * p;
  p = 0x1.5555555555555p-3 + r * p;
  p = 0.5 + r * p;
  p = 1.0 + r * p;
  return r * p;
}

/* tanh(x) as a float (see the notes at the top). tanh(a) = m / (m + 2)
 * with m = e^(2a) - 1 = 2^n·(1 + p) - 1, where 2a = n·ln2 + r and p =
 * e^r - 1; for n = 0, m is p itself, so small arguments lose nothing to
 * cancellation. Beyond |x| = 9.5 the float result is ±1. */
TALUS_HD static inline float talus_tanhf(float x) {
  const double ln2_hi = 0x1.62e42fee00000p-1; /* n·ln2_hi is exact for n < 2^11 */
  const double ln2_lo = 0x1.a39ef35793c76p-33, inv_ln2 = 0x1.71547652b82fep+0;
  const double round = 0x1.8p52; /* v + round - round is v rounded to an integer */
  double a = 2.0 * (double)x;
  a = a < 0.0 ? -a : a;
  a = a < 19.0 ? a : 19.0;
  double shifted = a * inv_ln2 + round, n = shifted - round;
  double r = (a - n * ln2_hi) - n * ln2_lo;
  uint64_t bits;
  memcpy(&bits, &shifted, sizeof bits); /* its low bits hold n, 0 <= n <= 28 */
  bits = (bits << 52) + ((uint64_t)1023 << 52);
  double scale;
  memcpy(&scale, &bits, sizeof scale); /* 2^n */
  double m = scale * talus_expm1_reduced(r) + (scale - 1.0);
  float t = (float)(m / (m + 2.0));
  uint32_t tb, xb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&xb, &x, sizeof xb);
  tb |= xb & 0x80000000u; /* odd: the sign of x, -0 included */
  memcpy(&t, &tb, sizeof t);
  return x != x ? x : t;
}

#endif /* TALUS_KERNELS_FMATH_H */
