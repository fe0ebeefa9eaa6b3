/*
 * select.h — branch-free selects with exactly the semantics of the
 * ternaries they replace, for kernels whose comparisons go either way at
 * random (the sign of a pipe's head difference, which of two slopes is
 * larger). GCC keeps such ternaries as conditional branches, and each
 * mispredicted one costs more than the rest of the cell's arithmetic; on
 * x86 the SSE max instruction is the ternary itself, so results are the
 * same bits. Other targets (and nvcc) use the ternary.
 *
 * talus_fminf / talus_fmaxf are fminf / fmaxf inlined: glibc's x86-64
 * versions are out-of-line calls (GCC inlines them only under
 * -ffinite-math-only), and each call costs ~10 instructions plus spilling
 * every live SSE register, which dominated the layered kernels. They give
 * glibc's bits for every input arithmetic can produce: for ordered operands
 * glibc executes MINSS/MAXSS, which is exactly x < y ? x : y (x > y ? x : y),
 * signed zeros alike; when y is a quiet NaN it returns x (also when both are
 * quiet NaNs: its x + y is x), and when only x is one, y, as the ternary
 * does. nvcc and non-SSE targets call fminf / fmaxf.
 */
#ifndef TALUS_KERNELS_SELECT_H
#define TALUS_KERNELS_SELECT_H

#include "common/common.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE__) && !defined(__CUDACC__)
#include <xmmintrin.h>
#define TALUS_SELECT_SSE 1
#endif

/* a > b ? a : b, NaN and signed zeros included (MAXSS returns its second
 * operand unless the first is greater). */
TALUS_HD static inline float talus_gtf(float a, float b) {
#ifdef TALUS_SELECT_SSE
  return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(a), _mm_set_ss(b)));
#else
  return a > b ? a : b;
#endif
}

/* v > 0 ? v : 0 (NaN and -0 give +0). */
TALUS_HD static inline float talus_pos(float v) {
  return talus_gtf(v, 0.0f);
}

/* fminf(x, y) with libm's bits (see the note at the top). */
TALUS_HD static inline float talus_fminf(float x, float y) {
#ifdef TALUS_SELECT_SSE
  float m = x < y ? x : y; /* MINSS */
  return y != y ? x : m;
#else
  return fminf(x, y);
#endif
}

/* fmaxf(x, y) with libm's bits (see the note at the top). */
TALUS_HD static inline float talus_fmaxf(float x, float y) {
#ifdef TALUS_SELECT_SSE
  float m = x > y ? x : y; /* MAXSS */
  return y != y ? x : m;
#else
  return fmaxf(x, y);
#endif
}

/* c ? a : b without a branch: for conditions no predictor can learn (a
 * random draw), where a mispredicted branch costs more than both sides;
 * and for a condition the same in every lane of a vector loop (a
 * parameter), which GCC 12 does not vectorise as a select ("relevant stmt
 * not supported") but does as these bit operations. */
TALUS_HD static inline float talus_pickf(int c, float a, float b) {
#ifdef TALUS_SELECT_SSE
  uint32_t ua, ub, m = 0u - (uint32_t)(c != 0);
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, sizeof a);
  return a;
#else
  return c ? a : b;
#endif
}

/* talus_fminf(x, y) for a y the same in every lane of a vector loop (a
 * parameter): its NaN test is a talus_pickf (see there). The same bits as
 * talus_fminf. */
TALUS_HD static inline float talus_fminf_inv(float x, float y) {
#ifdef TALUS_SELECT_SSE
  return talus_pickf(y != y, x, x < y ? x : y);
#else
  return fminf(x, y);
#endif
}

/* nextafterf(x, up ? INFINITY : -INFINITY) with libm's bits, without a
 * branch or a call, so that vector loops can use it: a finite non-zero x
 * (denormals included) steps its bit pattern by one, away from zero when
 * the sign of x is the direction of travel (glibc's integer step); a zero
 * becomes the smallest denormal of the direction's sign; an infinity in
 * the direction of travel stays, the other becomes ±FLT_MAX by the same
 * step; NaN gives x + y as libm does. nvcc calls nextafterf. */
TALUS_HD static inline float talus_nextf(float x, int up) {
#ifdef TALUS_SELECT_SSE
  uint32_t u, down = (uint32_t)!up, r;
  memcpy(&u, &x, sizeof u);
  uint32_t mag = u & 0x7FFFFFFFu, step = (u >> 31) == down ? u + 1u : u - 1u;
  uint32_t zero = (down << 31) | 1u, stays = mag == 0x7F800000u && (u >> 31) == down;
  r = mag == 0u ? zero : stays ? u : step;
  float y;
  memcpy(&y, &r, sizeof y);
  return x != x ? x + (up ? INFINITY : -INFINITY) : y;
#else
  return nextafterf(x, up ? INFINITY : -INFINITY);
#endif
}

#endif /* TALUS_KERNELS_SELECT_H */
