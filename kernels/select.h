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
 * glibc's bits for every input arithmetic can produce: MINSS/MAXSS (the
 * instruction glibc executes for ordered operands, signed zeros alike) and
 * x when y is a quiet NaN (glibc returns x, or x + y = x when both are
 * quiet NaNs). nvcc and non-SSE targets call fminf / fmaxf.
 */
#ifndef TALUS_KERNELS_SELECT_H
#define TALUS_KERNELS_SELECT_H

#include "common.h"
#include <math.h>

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
  __m128 vx = _mm_set_ss(x), vy = _mm_set_ss(y), ynan = _mm_cmpunord_ss(vy, vy);
  __m128 m = _mm_min_ss(vx, vy);
  return _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(ynan, vx), _mm_andnot_ps(ynan, m)));
#else
  return fminf(x, y);
#endif
}

/* fmaxf(x, y) with libm's bits (see the note at the top). */
TALUS_HD static inline float talus_fmaxf(float x, float y) {
#ifdef TALUS_SELECT_SSE
  __m128 vx = _mm_set_ss(x), vy = _mm_set_ss(y), ynan = _mm_cmpunord_ss(vy, vy);
  __m128 m = _mm_max_ss(vx, vy);
  return _mm_cvtss_f32(_mm_or_ps(_mm_and_ps(ynan, vx), _mm_andnot_ps(ynan, m)));
#else
  return fmaxf(x, y);
#endif
}

#endif /* TALUS_KERNELS_SELECT_H */
