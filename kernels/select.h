/*
 * select.h — branch-free selects with exactly the semantics of the
 * ternaries they replace, for kernels whose comparisons go either way at
 * random (the sign of a pipe's head difference, which of two slopes is
 * larger). GCC keeps such ternaries as conditional branches, and each
 * mispredicted one costs more than the rest of the cell's arithmetic; on
 * x86 the SSE max instruction is the ternary itself, so results are the
 * same bits. Other targets (and nvcc) use the ternary.
 */
#ifndef TALUS_KERNELS_SELECT_H
#define TALUS_KERNELS_SELECT_H

#include "common.h"

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

#endif /* TALUS_KERNELS_SELECT_H */
