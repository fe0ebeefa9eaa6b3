/*
 * cpu.c — the CPU backend. One loop for every stage: rows split
 * statically across OpenMP threads, cells in x order, ledger flows summed
 * per row in double and then over rows in y order (thread-count invariant).
 * The kernel bodies are the shared k_* functions of kernels/; each stage's
 * row of ../stages.def names its body and the loop macro below (the loop
 * shape) that runs it, and CPU_STAGE_BOOKED expands those rows.
 *
 * Fast paths (CPU only; the GPU and the cells they do not cover run the
 * k_* bodies unchanged):
 * - heightfield flux and water: each row's live run is one `omp simd`
 *   loop (CPU_STAGE_LOOP_LIVE); rain, erode, advect and settle: the live
 *   run is one vector loop of the branch-free bodies hf_rain_cell,
 *   hf_erode_cell, hf_advect_live, hf_settle_cell (the ONE_SIMD loops
 *   below with cpu_hf_run_end; rain only without noise or sources), the
 *   advect one from rows of each cell's shares computed once
 *   (CPU_STAGE_LOOP_HF_ADVECT);
 * - heightfield thermal_out and thermal_in: the live run through the
 *   branch-free bodies thermal_out_live (a vector loop; thermal.crests_only
 *   as the loop's constant) and thermal_in_live (scalar: it reads 16
 *   planes a cell, and vectorised it ran no faster; benchmarks/RESULTS.md,
 *   "One-cell crests" and "`thermal.every`");
 * - acc_begin and acc_end (simulation.masks, thermal.bank_angle): live
 *   cells of one column, either model, through acc_begin_live and
 *   acc_end_live (vector loops);
 * - layered rain without sources: live cells of one column are a vector
 *   loop (cpu_rain_one; CPU_STAGE_LOOP_ONE_SIMD_BOOKED), its noise's hash
 *   vectorised with it (the copy for rain_noise > 0);
 * - layered pipes, transport, horizontal, vertical: the bodies are called
 *   with `one` = TALUS_ONE on cells whose own and 8 neighbours' columns are single
 *   and live (vertical, radius 0: whose own column is), which drops the
 *   neighbour classification and the column loops, and runs of such cells
 *   are vector loops: CPU_STAGE_LOOP_ONE_SIMD for pipes and horizontal (no
 *   ledger flows), CPU_STAGE_LOOP_ONE_SIMD_BOOKED for transport and
 *   vertical (flows added in x order after the vector loop); pipes and
 *   transport are compiled with diagonal slippage on and off as constants,
 *   vertical with erosion on and off (their `vary`: TALUS_ONE_DIAG,
 *   TALUS_ONE_ERODE), so no branch on a parameter stays in the loop; the
 *   pipes body's other parameters (erosion.law, erosion.tilt, slippage
 *   without diagonals) are bit selects there (talus_pickf, kernels/pipes.h):
 *   GCC 12 vectorises no select on a loop invariant;
 * - split skips single-column cells below the split size
 *   (CPU_STAGE_LOOP_SKIP, cpu_split_next); support propagation and
 *   collapse skip rows without stacked columns (CPU_STAGE_LOOP_STACKED):
 *   their bodies do nothing there.
 * Every fast path computes the same floating-point operations in the same
 * order as the general path, so results are bit-identical (cli_fastpath
 * compares whole runs against TALUS_CPU_GENERAL=1, which turns the layered
 * fast paths and those of heightfield rain, erode, advect and settle off).
 * Ledger flows of a vector loop go through per-lane buffers and are added
 * to the row's sums in x order, in registers (cpu_lanes_book,
 * cpu_lane_book_nonzero): the additions are those of the scalar loop.
 *
 * Instruction sets: on x86-64 with GCC >= 12 this file is also compiled
 * for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512) as isa/cpu_v3.c and
 * isa/cpu_v4.c (TALUS_CPU_ISA names the variant; CMake adds the -march).
 * talus_cpu_stage_booked runs the widest variant this CPU supports, capped
 * by the environment's TALUS_CPU_ISA=base|v3|v4. Wider vectors change no
 * result bit: FMA contraction is off in every variant, each lane rounds as
 * the scalar code does, and libm is called the same way (cli_fastpath
 * compares whole runs of every variant).
 */
#include "cpu.h"

#include "kernels/bodies.h"

#include <stdlib.h>
#include <omp.h>
#include <string.h>

#if defined(__SSE__)
#include <xmmintrin.h>
/* Flush-to-zero and denormals-are-zero on every thread for the duration of
 * a stage (MXCSR is per thread), restored afterwards so the caller's
 * floating-point environment is untouched. Thin water films and fluxes
 * decaying towards zero make denormals common, and each denormal operand
 * or result costs a microcode assist worth tens of instructions. Every
 * thread flushes alike, so results still do not depend on the thread count. */
#define CPU_FTZ_ENTER                                                                              \
  unsigned cpu_csr = _mm_getcsr();                                                                 \
  _mm_setcsr(cpu_csr | 0x8040u);
#define CPU_FTZ_LEAVE _mm_setcsr(cpu_csr);
#else
#define CPU_FTZ_ENTER
#define CPU_FTZ_LEAVE
#endif

/* [*b0, *b1): the cells of row y (a row of a region ending at x1) whose
 * flows are booked, the span of `book` in that row; empty (at x1) when
 * the row lies outside it. */
static inline void cpu_row_book(talus_rect book, int y, int x1, int *b0, int *b1) {
  int in_row = y >= book.y0 && y < book.y0 + book.h;
  *b0 = in_row ? book.x0 : x1;
  *b1 = in_row ? book.x0 + book.w : x1;
}

/* The loop is instantiated once per body so the compiler can inline it.
 * Cells outside `book` add their flows to a scratch accumulator that is
 * dropped, so only the booked cells reach the ledger. The row's
 * accumulator is a local array (copied out after the row) so the compiler
 * keeps the sums in registers instead of storing and reloading them for
 * every cell; the additions and their order are unchanged. */
#define CPU_STAGE_LOOP(body)                                                                       \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x = region.x0, x1 = region.x0 + region.w;                             \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      for (; x < x1 && x < b0; x++)                                                                \
        body(t, c, x, y, junk);                                                                    \
      for (; x < x1 && x < b1; x++)                                                                \
        body(t, c, x, y, acc);                                                                     \
      for (; x < x1; x++)                                                                          \
        body(t, c, x, y, junk);                                                                    \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* The longest run of the n cells from *a whose 3 x 3 neighbourhoods hold
 * no masked cell, as [*a, *b) (the first of equals; *a == *b when there
 * is none). m is the mask row at cell *a - 1, p its pitch; each column's
 * OR over the three rows is read once. */
static void cpu_live_span(const uint8_t *m, ptrdiff_t p, int n, int *a, int *b) {
  int best = 0, from = 0, start = 0;
  unsigned c0 = m[-p] | m[0] | m[p], c1 = m[1 - p] | m[1] | m[1 + p];
  for (int i = 0; i < n; i++) {
    unsigned c2 = m[i + 2 - p] | m[i + 2] | m[i + 2 + p];
    if (c0 | c1 | c2) { /* cell i is dead: the run before it ends */
      if (i - start > best) best = i - start, from = start;
      start = i + 1;
    }
    c0 = c1, c1 = c2;
  }
  if (n - start > best) best = n - start, from = start;
  *b = *a + from + best;
  *a += from;
}

/* The cells [*xa, *xb) of row y within [x0, x1) whose 8 neighbours are all
 * live cells (inside the domain, no NoData cell within one cell) and lie
 * in the tile's buffer: there a stage's interior fast path needs no
 * classification. Where the row or a row next to it holds NoData cells,
 * the longest such span between them (the first of equals); empty when
 * there is none. Before, any NoData cell in the three rows emptied the
 * run: on a DEM clipped to a country or a coast nearly every row ran the
 * general bodies (Austria's 30" map, 58 % NoData: 16.6 Mcell-steps/s
 * against Big Tujunga's 61.7). (A radius-0 stage's region reaches the
 * buffer's edge, whose neighbours, and mask, lie outside it.) */
static void cpu_live_run(const talus_tile *t, const talus_kctx *c, int y, int x0, int x1, int *xa,
                         int *xb) {
  int gy = t->buf.y0 + y, lo = 1 - t->buf.x0, hi = c->nx - 1 - t->buf.x0;
  lo = lo > 1 ? lo : 1;
  hi = hi < t->buf.w - 1 ? hi : t->buf.w - 1;
  int a = x0 > lo ? x0 : lo, b = x1 < hi ? x1 : hi;
  *xa = *xb = x1;
  if (gy < 1 || gy >= c->ny - 1 || y < 1 || y >= t->buf.h - 1 || a >= b) return;
  if (t->mask) { /* the three rows in one vector loop */
    const uint8_t *m = t->mask + talus_idx(t, a - 1, y);
    ptrdiff_t p = t->pitch;
    unsigned any = 0;
    _Pragma("omp simd reduction(|:any)") for (int i = 0; i < b - a + 2; i++) any |=
        (unsigned)(m[i - p] | m[i] | m[i + p]);
    if (any) {
      cpu_live_span(m, p, b - a, &a, &b);
      if (a >= b) return;
    }
  }
  *xa = a, *xb = b;
}

/* hf_flux and hf_water on a cell of a live run (cpu_live_run: all 8
 * neighbours live); each returns the height its stage books. `base` is
 * hf_base_mode as a constant of the vector loop (CPU_STAGE_LOOP_LIVE;
 * hf_flux has no use for it). */
static inline TALUS_FORCE_INLINE double cpu_hf_flux_live(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, int base) {
  (void)base;
  size_t idx = talus_idx(t, x, y);
  t->nb8[idx] = 0xFFu;
  hf_flux_live(t, &c->P, idx);
  return 0.0;
}
static inline TALUS_FORCE_INLINE double cpu_hf_water_live(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, int base) {
  return hf_water_live(t, &c->P, talus_idx(t, x, y), base);
}
/* The same with the 8 pipes (heightfield.neighbours = 8). */
static inline TALUS_FORCE_INLINE double cpu_hf_flux_live8(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, int base) {
  (void)base;
  size_t idx = talus_idx(t, x, y);
  t->nb8[idx] = 0xFFu;
  hf_flux_live8(t, &c->P, idx);
  return 0.0;
}
static inline TALUS_FORCE_INLINE double cpu_hf_water_live8(const talus_tile *t, const talus_kctx *c,
                                                           int x, int y, int base) {
  return hf_water_live8(t, &c->P, talus_idx(t, x, y), base);
}

/* Adds the non-zero lanes [k0, k1) of lane to *acc in order. A row whose
 * lanes are all zero (hf_flux's always, hf_water's but where the clamp
 * adds water) is found by one vector OR instead of a test per cell. */
static inline void cpu_lane_book_nonzero(double *acc, const double *lane, int k0, int k1) {
  int any = 0;
  _Pragma("omp simd reduction(|:any)") for (int k = k0; k < k1; k++) any |= lane[k] != 0.0;
  if (!any) return;
  double a = *acc;
  for (int k = k0; k < k1; k++)
    if (lane[k] != 0.0) a += lane[k];
  *acc = a;
}

/* CPU_STAGE_LOOP for a stage with a branch-free interior body `live` that
 * returns the one flow it books (`flow`, 0 when none): each row's live run
 * is one `omp simd` loop (cells are independent: a stage writes only its
 * own cell) writing the flows to `lane`, which are then added in x order
 * between the cells before and after the run, exactly as the scalar loop
 * adds them (zeros, which the body would not add, are skipped). Vector
 * lanes compute what the scalar body computes (no contraction, no
 * reassociation), so results do not change. */
/* The vector loop of a live run over `fn`, hf_base_mode as the constant
 * `base` (a select on the flag inside the loop cost hf_water 25-35 % with
 * the rule off; a branch kept it from vectorising). */
#define CPU_LIVE_LANES(fn, base)                                                                   \
  _Pragma("omp simd") for (int xv = xa; xv < xb; xv++) lane[xv - xa] = fn(t, c, xv, y, base)

#define CPU_STAGE_LOOP_LIVE(body, live, live8, flow)                                               \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    double *lane = malloc(sizeof(double) * (size_t)region.w);                                      \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x = region.x0, x1 = region.x0 + region.w, xa = x1, xb = x1;           \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      if (lane) cpu_live_run(t, c, y, x, x1, &xa, &xb);                                            \
      for (; x < xa; x++)                                                                          \
        body(t, c, x, y, (x >= b0 && x < b1) ? acc : junk);                                        \
      int base = hf_base_mode(t, &c->P);                                                           \
      if (c->P.hf_diagonal) { /* heightfield.neighbours = 8 */                                     \
        if (base == 2)                                                                             \
          CPU_LIVE_LANES(live8, 2);                                                                \
        else if (base)                                                                             \
          CPU_LIVE_LANES(live8, 1);                                                                \
        else                                                                                       \
          CPU_LIVE_LANES(live8, 0);                                                                \
      } else if (base == 2) {                                                                      \
        CPU_LIVE_LANES(live, 2);                                                                   \
      } else if (base) {                                                                           \
        CPU_LIVE_LANES(live, 1);                                                                   \
      } else {                                                                                     \
        CPU_LIVE_LANES(live, 0);                                                                   \
      }                                                                                            \
      cpu_lane_book_nonzero(&acc[flow], lane, (b0 > xa ? b0 : xa) - xa, (b1 < xb ? b1 : xb) - xa); \
      x = xb;                                                                                      \
      for (; x < x1; x++)                                                                          \
        body(t, c, x, y, (x >= b0 && x < b1) ? acc : junk);                                        \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    free(lane);                                                                                    \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* CPU_STAGE_LOOP for a stage whose body leaves many cells as they are
 * (split: live cells of one column below the split size): with the fast
 * paths on, `next` (a vector scan, cpu_split_next) gives the first cell
 * from x on that the body must run on, and the cells it passes over book
 * nothing; the body runs on the others in x order, so the row's sums are
 * the scalar loop's. */
#define CPU_STAGE_LOOP_SKIP(body, next)                                                            \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x1 = region.x0 + region.w;                                            \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      for (int x = region.x0; x < x1; x++) {                                                       \
        if (fast && (x = next(t, c, y, x, x1)) >= x1) break;                                       \
        body(t, c, x, y, (x >= b0 && x < b1) ? acc : junk);                                        \
      }                                                                                            \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* The layered stage bodies with `one` = TALUS_ONE (see the notes at the
 * top); v, a constant of the loop's copy (its `vary`: 0 to 3), adds
 * TALUS_ONE_DIAG to pipes' and transport's `one` (bit 0), TALUS_ONE_RANGE2
 * to pipes' and TALUS_ONE_CELL2 to transport's and horizontal's (bit 1),
 * TALUS_ONE_ERODE to vertical's, and says whether horizontal erosion runs
 * at all (bit 0). */
static inline TALUS_FORCE_INLINE void cpu_pipes_one(const talus_tile *t, const talus_kctx *c, int x,
                                                    int y, double *flows, int v) {
  (void)flows;
  pipes_cell(t, c, x, y,
             TALUS_ONE | ((v & 1) ? TALUS_ONE_DIAG : 0) | ((v & 2) ? TALUS_ONE_RANGE2 : 0));
}
static inline TALUS_FORCE_INLINE void cpu_transport_one(const talus_tile *t, const talus_kctx *c,
                                                        int x, int y, double *flows, int v) {
  transport_cell(t, c, x, y, flows,
                 TALUS_ONE | ((v & 1) ? TALUS_ONE_DIAG : 0) | ((v & 2) ? TALUS_ONE_CELL2 : 0));
}
static inline TALUS_FORCE_INLINE void cpu_horizontal_one(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows, int v) {
  (void)flows;
  if (v & 1) hz_cell(t, c, x, y, TALUS_ONE | ((v & 2) ? TALUS_ONE_CELL2 : 0));
}
static inline TALUS_FORCE_INLINE void cpu_vertical_one(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows, int v) {
  vt_cell(t, c, x, y, flows, TALUS_ONE | (v ? TALUS_ONE_ERODE : 0));
}

/* Layered rain on a live cell of one column while rain falls and no
 * source adds to it (cpu_rain_run_end): k_rain's addition and booking; v
 * (the loop copy's constant, cpu_vary_rain) is the noise's mode: none
 * needs no hash, each cell's own one, the lattice's blend four. */
static inline TALUS_FORCE_INLINE void cpu_rain_one(const talus_tile *t, const talus_kctx *c, int x,
                                                   int y, double *flows, int v) {
  size_t i = talus_idx(t, x, y);
  float a = rain_amount(&c->P, t->buf.x0 + x, t->buf.y0 + y, c->step, v);
  t->w[i] = rain_add(t->w[i], a, &flows[TALUS_FLOW_RAIN]);
}

/* `vary` of the rain loop: the noise's mode (rain.h, rain_noise_mode; 0
 * when every cell gets rain·dt), so each mode is its own vector loop. */
static inline int cpu_vary_rain(const talus_kctx *c) {
  return rain_noise_mode(&c->P);
}

/* `vary` of the pipes and transport loops: 1 when sand slips diagonally
 * (the fast loop is compiled for each value). */
static inline int cpu_vary_diag(const talus_kctx *c) {
  return talus_slips_diagonally(&c->P);
}

/* `vary` of the pipes loop: cpu_vary_diag, plus 2 when the slippage range
 * is a power of two (pipes_talus multiplies by its reciprocal: all the
 * presets' range is 1 m). */
static inline int cpu_vary_pipes(const talus_kctx *c) {
  return cpu_vary_diag(c) | (talus_pow2f(c->P.slippage_range) ? 2 : 0);
}

/* `vary` of the transport loop: cpu_vary_diag, plus 2 when the pipe's
 * section l_c·L is a power of two, both factors being (the velocity's
 * division by 2·l_c·L a multiplication: the scenes' cells at 2^k cells
 * across). */
static inline int cpu_vary_transport(const talus_kctx *c) {
  int pow2 = talus_pow2f(c->P.cell_size) && talus_pow2f(c->P.pipe_gain_length);
  return cpu_vary_diag(c) | (pow2 ? 2 : 0);
}

/* `vary` of the horizontal loop: 1 when horizontal erosion is on (the
 * copies without it do nothing, as k_horizontal), plus 2 when the cell
 * size is a power of two (the damage's division by l_c a multiplication). */
static inline int cpu_vary_horizontal(const talus_kctx *c) {
  return (c->P.enable_horizontal != 0) | (talus_pow2f(c->P.cell_size) ? 2 : 0);
}

/* `vary` of the vertical loop: 1 when vertical erosion runs this step. */
static inline int cpu_vary_erode(const talus_kctx *c) {
  return vt_eroding(&c->P, c->step, 0);
}

/* 1 when a cell of row y in [x0, x1) holds more than one column. */
static inline int cpu_row_stacked(const talus_tile *t, int y, int x0, int x1) {
  const uint8_t *n = t->count + talus_idx(t, x0, y);
  unsigned any = 0;
  for (int i = 0; i < x1 - x0; i++)
    any |= n[i] > 1;
  return any != 0;
}

/* CPU_STAGE_LOOP for a stage that does nothing on a cell of one column
 * (support propagation, collapse and inflow loop over columns k >= 1, or
 * below the top): rows whose
 * cells all hold one column are skipped; the others run `body` on every
 * cell as CPU_STAGE_LOOP does. */
#define CPU_STAGE_LOOP_STACKED(body)                                                               \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x1 = region.x0 + region.w;                                            \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      if (!fast || cpu_row_stacked(t, y, region.x0, x1))                                           \
        for (int x = region.x0; x < x1; x++)                                                       \
          body(t, c, x, y, (x >= b0 && x < b1) ? acc : junk);                                      \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* The droplet stage's band count for h spawn rows, bands of at least
 * `least` rows and `threads` threads: as many bands as fit, down to a
 * multiple of 2·threads when at least that many fit. */
static inline int cpu_pt_bands(int h, int least, int threads) {
  int nb = h / least, m = 2 * (threads > 1 ? threads : 1);
  if (nb >= m) nb -= nb % m;
  return nb > 0 ? nb : (h > 0);
}

#define CPU_PT_CHUNK 256 /* cells whose spawn hashes one vector loop tests */
/* Runs stmt for each cell x (buffer-local) of spawn row y of region sp
 * whose spawn hash hits (pt_hashed), in x order. */
#define CPU_PT_ROW_HITS(sp, y, x, ...)                                                             \
  for (int xb = (sp).x0; xb < (sp).x0 + (sp).w; xb += CPU_PT_CHUNK) {                              \
    int hn_ = (sp).x0 + (sp).w - xb < CPU_PT_CHUNK ? (sp).x0 + (sp).w - xb : CPU_PT_CHUNK;         \
    uint8_t hit[CPU_PT_CHUNK];                                                                     \
    _Pragma("omp simd") for (int i = 0; i < hn_; i++) hit[i] =                                     \
        (uint8_t)pt_hashed(&c->P, t->buf.x0 + xb + i, t->buf.y0 + (y), c->step);                   \
    for (int i = hn_; i < CPU_PT_CHUNK && (i & 7); i++)                                            \
      hit[i] = 0;                                                                                  \
    for (int i8 = 0; i8 < hn_; i8 += 8) { /* 8 cells a word, hits in x order */                    \
      uint64_t word;                                                                               \
      memcpy(&word, hit + i8, sizeof word);                                                        \
      for (; word; word &= word - 1) {                                                             \
        int x = xb + i8 + __builtin_ctzll(word) / 8;                                               \
        __VA_ARGS__;                                                                               \
      }                                                                                            \
    }                                                                                              \
  }

/* The droplets of band rows [ya, yb) in lanes (pt_gang_fits): their jobs
 * in spawn order (pt_spawn), pt_gang_run, then each row's outflow, loss,
 * erosion and deposit added in spawn order as the body would book them
 * (rows as in CPU_STAGE_LOOP_PARTICLES). *jobs (capacity *cap) grows as needed;
 * returns 0, having run nothing, where it cannot grow (the caller runs
 * the band one droplet at a time). */
static inline int cpu_pt_band_lanes(const talus_tile *t, const talus_kctx *c, talus_rect region,
                                    talus_rect book, talus_rect sp, int ya, int yb, double *rows,
                                    pt_job **jobs, int *cap, pt_gang *g, int64_t *win,
                                    ptrdiff_t wstride) {
  int n = 0, room = 1;
  for (int y = ya; y < yb && room; y++)
    CPU_PT_ROW_HITS(sp, y, x, {
      uint32_t o;
      if (room && pt_spawn(t, c, x, y, &o)) {
        if (n == *cap) {
          pt_job *grown = realloc(*jobs, (size_t)(*cap ? 2 * *cap : 256) * sizeof **jobs);
          if (grown) *jobs = grown, *cap = *cap ? 2 * *cap : 256;
          room = grown != NULL;
        }
        if (room) (*jobs)[n++] = (pt_job){t->buf.x0 + x, t->buf.y0 + y, o, 0.0, 0.0, 0.0, 0.0};
      }
    });
  if (!room) return 0;
  pt_gang_run(t, c, *jobs, n, g, win, wstride);
  int k = 0;
  for (int y = ya; y < yb; y++) {
    double acc[TALUS_FLOW_COUNT] = {0};
    int b0, b1, j = y - region.y0;
    cpu_row_book(book, y, sp.x0 + sp.w, &b0, &b1);
    for (; k < n && (*jobs)[k].gy == t->buf.y0 + y; k++) {
      int x = (*jobs)[k].gx - t->buf.x0;
      if (x >= b0 && x < b1) {
        acc[TALUS_FLOW_PT_OUTFLOW] += (*jobs)[k].out;
        acc[TALUS_FLOW_PT_LOST] += (*jobs)[k].lost;
        acc[TALUS_FLOW_PT_EROSION] += (*jobs)[k].ero;
        acc[TALUS_FLOW_PT_DEPOSIT] += (*jobs)[k].dep;
      }
    }
    if (j >= 0 && j < region.h) memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);
  }
  return 1;
}

/* CPU_STAGE_LOOP for the droplet stage (kernels/particles.h, whose body
 * scatters into its radius R): the spawn rows (pt_spawn_region) in bands
 * of 2R + 1 rows, the even bands in parallel, then the odd ones, so the
 * bands that run at once write disjoint rows and the int64 totals need no
 * atomics. A band's rows run in y order, cells in x order; the flows of
 * the region's rows (a droplet books at its spawn cell) go to their rows
 * as in CPU_STAGE_LOOP, so neither depends on the thread count. The spawn
 * hashes of a row are tested CPU_PT_CHUNK cells at a time by a vector
 * loop (pt_hashed), and the body runs only on the cells it spawns at
 * (the body tests the rest of pt_spawn; the other cells book nothing).
 * Bands are at least 2R + 1 rows; their count is a multiple of twice the
 * threads where there are enough rows (cpu_pt_bands), so each colour
 * splits evenly over the threads. Neither the bands nor the threads
 * change a result: rows book in x order, totals are integer sums.
 * Each thread gives its droplets one zeroed window of own changes
 * (pt_win_side, a plane per layer, PT_ROW8 slack; the table if it cannot
 * have one). Where the lanes fit (pt_gang_fits) a band's droplets run
 * PT_LANES at a time instead (cpu_pt_band_lanes), a window each. */
#define CPU_STAGE_LOOP_PARTICLES(body)                                                             \
  {                                                                                                \
    talus_rect sp = pt_spawn_region(t, &c->P, region);                                             \
    int nb = cpu_pt_bands(sp.h, 2 * pt_radius(&c->P) + 1, omp_get_max_threads());                  \
    int band = nb > 0 ? (sp.h + nb - 1) / nb : 1, lanes = pt_gang_fits(t, c);                      \
    size_t wside = (size_t)pt_win_side(&c->P, NULL);                                               \
    size_t wlen = wside * wside * (size_t)(c->P.model == TALUS_MODEL_LAYERED ? t->nz : 1);         \
    _Pragma("omp parallel") {                                                                      \
      int64_t *win = calloc((wlen + PT_ROW8) * (lanes ? PT_LANES : 1), sizeof *win);               \
      pt_gang *gang = lanes && win ? malloc(sizeof *gang) : NULL;                                  \
      pt_job *jobs = NULL;                                                                         \
      int cap = 0;                                                                                 \
      for (int colour = 0; colour < 2; colour++) {                                                 \
        _Pragma("omp for schedule(static)") for (int b = colour; b < nb; b += 2) {                 \
          CPU_FTZ_ENTER                                                                            \
          int y1 = sp.y0 + (b + 1) * band < sp.y0 + sp.h ? sp.y0 + (b + 1) * band : sp.y0 + sp.h;  \
          int lane =                                                                               \
              gang && cpu_pt_band_lanes(t, c, region, book, sp, sp.y0 + b * band, y1, rows, &jobs, \
                                        &cap, gang, win, (ptrdiff_t)(wlen + PT_ROW8));             \
          for (int y = sp.y0 + b * band; y < y1 && !lane; y++) { /* else one at a time */          \
            double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                            \
            int b0, b1, j = y - region.y0;                                                         \
            cpu_row_book(book, y, sp.x0 + sp.w, &b0, &b1);                                         \
            CPU_PT_ROW_HITS(sp, y, x, body(t, c, x, y, (x >= b0 && x < b1) ? acc : junk, win));    \
            if (j >= 0 && j < region.h)                                                            \
              memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                        \
          }                                                                                        \
          CPU_FTZ_LEAVE                                                                            \
        }                                                                                          \
      }                                                                                            \
      free(jobs);                                                                                  \
      free(gang);                                                                                  \
      free(win);                                                                                   \
    }                                                                                              \
  }

/* CPU_STAGE_LOOP for pt_clear: on heightfields each row's totals of the
 * kinds a batch writes (pt_kinds; column 0: the only one) are zeroed by
 * one memset a plane (the body's stores, without its per-cell plane
 * arithmetic); layered stacks, whose cells have their own column counts,
 * run the body. pt_clear books no flow, so the rows of the ledger stay 0. */
#define CPU_STAGE_LOOP_PT_CLEAR(body)                                                              \
  if (c->P.model == TALUS_MODEL_LAYERED) {                                                         \
    CPU_STAGE_LOOP(body);                                                                          \
  } else {                                                                                         \
    int kinds = pt_kinds(&c->P);                                                                   \
    _Pragma("omp parallel for schedule(static)") for (int j = 0; j < region.h; j++) {              \
      size_t i0 = talus_idx(t, region.x0, region.y0 + j);                                          \
      for (int kind = 0; kind < TALUS_PT_PLANES; kind++)                                           \
        if (kinds >> kind & 1)                                                                     \
          memset(t->pt_acc + pt_plane(t, kind, 0) + i0, 0, (size_t)region.w * sizeof *t->pt_acc);  \
    }                                                                                              \
  }

/* pt_apply on heightfield cell (x, y) with the river plane read
 * (cpu_pt_apply_river) or not (cpu_pt_apply_dry): k_pt_apply_hf with
 * pt_river_on decided once for the stage. */
static inline TALUS_FORCE_INLINE void cpu_pt_apply_river(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows) {
  (void)c;
  pt_apply_hf_at(t, talus_idx(t, x, y), 1, flows);
}
static inline TALUS_FORCE_INLINE void cpu_pt_apply_dry(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows) {
  (void)c;
  pt_apply_hf_at(t, talus_idx(t, x, y), 0, flows);
}

/* CPU_STAGE_LOOP for pt_apply: heightfield rows run cpu_pt_apply_river
 * or cpu_pt_apply_dry (the body without its per-cell model and river
 * tests); layered stacks run the body. A vector pass over the row (the
 * heights and ledger terms in lanes, the booked terms added in x order
 * after it) was tried: no faster at 2048² (5.8-6.6 against 5.9 ms a
 * step: the sweep is bound by its bytes), and twice the instructions on
 * x86-64-v3, which has no int64 -> double conversion. */
#define CPU_STAGE_LOOP_PT_APPLY(body)                                                              \
  if (c->P.model == TALUS_MODEL_LAYERED) {                                                         \
    CPU_STAGE_LOOP(body);                                                                          \
  } else if (pt_river_on(&c->P)) {                                                                 \
    CPU_STAGE_LOOP(cpu_pt_apply_river);                                                            \
  } else {                                                                                         \
    CPU_STAGE_LOOP(cpu_pt_apply_dry);                                                              \
  }

/* The fast cells of a stage as runs: each returns the end of the run of
 * fast cells from x in row y (x itself when x is not one). [xa, xb) is
 * the row's live run (cpu_live_run), x1 the region's end. */

/* The scans below test CPU_SCAN cells at a time in one vector loop into
 * a byte per cell (1: the run ends there) and then find the first 1 eight
 * bytes a word: a test per cell in a scalar loop cost the layered step
 * ~120 of its ~610 instructions per cell-step (cachegrind, rivers-rain
 * 256², benchmarks/RESULTS.md, branch layfast3). */
#define CPU_SCAN 64

/* The index of the first nonzero byte of stop[0..n]; stop[n..n+8) are
 * set here, so the answer is n when none of stop[0..n) is. */
static inline TALUS_FORCE_INLINE int cpu_scan_first(uint8_t *stop, int n) {
  memset(stop + n, 1, 8);
  for (int i8 = 0;; i8 += 8) {
    uint64_t word;
    memcpy(&word, stop + i8, sizeof word);
    if (word) return i8 + __builtin_ctzll(word) / 8; /* x86 and ARM: little-endian */
  }
}

/* Returns, from the function it ends, the first cell u in [x, end) where
 * `stops` (an expression of u) holds, else end: CPU_SCAN cells at a time
 * tested in one vector loop, then cpu_scan_first. */
#define CPU_SCAN_RETURN(x, end, stops)                                                             \
  do {                                                                                             \
    while (x < end) {                                                                              \
      int n_ = end - x < CPU_SCAN ? end - x : CPU_SCAN;                                            \
      uint8_t stop_[CPU_SCAN + 8];                                                                 \
      _Pragma("omp simd") for (int i_ = 0; i_ < n_; i_++) {                                        \
        int u = x + i_;                                                                            \
        stop_[i_] = (uint8_t)((stops) != 0);                                                       \
      }                                                                                            \
      int k_ = cpu_scan_first(stop_, n_);                                                          \
      if (k_ < n_) return x + k_;                                                                  \
      x += n_;                                                                                     \
    }                                                                                              \
    return x;                                                                                      \
  } while (0)

/* Radius-1 stages: cells of the live run whose 8 neighbours and own cell
 * hold single columns. */
static inline int cpu_one_nb_run_end(const talus_tile *t, const talus_kctx *c, int y, int x, int xa,
                                     int xb, int x1) {
  (void)c, (void)x1;
  if (x < xa) return x;
  const uint8_t *r = t->count + talus_idx(t, 0, y);
  ptrdiff_t p = t->pitch;
  CPU_SCAN_RETURN(x, xb,
                  ((r[u - p - 1] ^ 1) | (r[u - p] ^ 1) | (r[u - p + 1] ^ 1)) |
                      ((r[u - 1] ^ 1) | (r[u] ^ 1) | (r[u + 1] ^ 1)) |
                      ((r[u + p - 1] ^ 1) | (r[u + p] ^ 1) | (r[u + p + 1] ^ 1)));
}

/* Radius-0 stages: live cells (no NoData cell) of one column. */
static inline int cpu_one_cell_run_end(const talus_tile *t, const talus_kctx *c, int y, int x,
                                       int xa, int xb, int x1) {
  (void)c, (void)xa, (void)xb;
  const uint8_t *r = t->count + talus_idx(t, 0, y);
  const uint8_t *mask = t->mask ? t->mask + talus_idx(t, 0, y) : NULL;
  if (mask) CPU_SCAN_RETURN(x, x1, (mask[u] != 0) | (r[u] != 1));
  CPU_SCAN_RETURN(x, x1, r[u] != 1);
}

/* Vertical: cpu_one_cell_run_end's cells, and with erosion.base_level
 * only those of the live run [xa, xb) (8 live neighbours): a cell beside
 * an outflow face takes the general body, which holds its bedrock
 * (vt_outlet); the fast body promises none is an outlet. */
static inline int cpu_vertical_run_end(const talus_tile *t, const talus_kctx *c, int y, int x,
                                       int xa, int xb, int x1) {
  if (!c->P.base_level) return cpu_one_cell_run_end(t, c, y, x, xa, xb, x1);
  if (x < xa || x >= xb) return x;
  return cpu_one_cell_run_end(t, c, y, x, xa, xb, xb);
}

/* Split: the first cell from x on (x1 when none) that k_split may change:
 * a live cell that is stacked or whose damage reaches the split size;
 * none while horizontal erosion is off. NoData cells are passed over too
 * (k_split returns on them): on Austria's DEM, 58 % NoData, the body's
 * call on each of them had made split cost 5.3 of the run's 82 s. */
static inline int cpu_split_next(const talus_tile *t, const talus_kctx *c, int y, int x, int x1) {
  if (!c->P.enable_horizontal) return x1;
  size_t i0 = talus_idx(t, 0, y);
  const uint8_t *r = t->count + i0, *mask = t->mask ? t->mask + i0 : NULL;
  const float *D = t->D + i0;
  float ss = c->P.split_size;
  if (mask) CPU_SCAN_RETURN(x, x1, (mask[u] == 0) & ((r[u] != 1) | (D[u] >= ss)));
  CPU_SCAN_RETURN(x, x1, (r[u] != 1) | (D[u] >= ss));
}

/* Layered rain: live cells of one column when rain falls this step (k_rain's
 * test) and no water source adds to it (else k_rain everywhere: during a
 * dry-out it adds nothing). */
static inline int cpu_rain_run_end(const talus_tile *t, const talus_kctx *c, int y, int x, int xa,
                                   int xb, int x1) {
  int fast = c->P.num_sources == 0 && c->P.rain > 0.0f && rain_falls(&c->P, c->step);
  return fast ? cpu_one_cell_run_end(t, c, y, x, xa, xb, x1) : x;
}

/* Heightfield stages: the whole live run (every cell of it has 4 live
 * neighbours and is no NoData cell). */
static inline int cpu_hf_run_end(const talus_tile *t, const talus_kctx *c, int y, int x, int xa,
                                 int xb, int x1) {
  (void)t, (void)c, (void)y, (void)x1;
  return x >= xa && x < xb ? xb : x;
}

/* hf_rain: the live run when the rain has no noise and no water source
 * adds to it (else k_hf_rain everywhere, as before the fast path). */
static inline int cpu_hf_rain_run_end(const talus_tile *t, const talus_kctx *c, int y, int x,
                                      int xa, int xb, int x1) {
  int plain = c->P.num_sources == 0 && rain_noise_mode(&c->P) == RAIN_NOISE_NONE;
  return plain ? cpu_hf_run_end(t, c, y, x, xa, xb, x1) : x;
}

/* CPU_STAGE_LOOP for a stage that books no flow (pipes, horizontal,
 * hf_settle): each run of fast cells (run_end, from cell x) is one `omp
 * simd` loop of the `one` body, the general `body` runs elsewhere. Cells
 * are independent within a stage (each writes only its own cell, reads
 * only fields the stage does not write), and vector lanes compute what the
 * scalar body computes (no contraction, no reassociation), so results do
 * not change. The fast body sees private copies of the tile descriptor and
 * the context (kernels never change either): the field stores of a cell
 * (int8_t pipes may alias anything, floats may alias the float
 * parameters) then no longer force the compiler to reload every pointer,
 * pitch and parameter after each store. `vary`, an expression of the
 * context evaluated once per call (0 to 3 here: cpu_vary_pipes; 1 or 0:
 * cpu_vary_horizontal, or the constant 0, whose other copies the compiler
 * drops as unreachable), picks one of the copies of the vector loop, each
 * passing its value to `one` as a constant: a branch on a parameter left
 * in the body (diagonal slippage on or off, erosion after the spin-up,
 * horizontal erosion on or off, noisy rain or not) kept GCC from
 * vectorising the pipes, transport, vertical and horizontal loops (cachegrind, x86-64-v3,
 * rivers-rain 256²: 613 and 441 instructions per cell-step with the branch, 167 and 230 without;
 * vertical 216 and 59; benchmarks/RESULTS.md). */
#define CPU_STAGE_LOOP_ONE_SIMD(body, one, run_end, vary)                                          \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    const talus_tile tl = *t;                                                                      \
    const talus_kctx cl = *c;                                                                      \
    const int v = (vary);                                                                          \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double junk[TALUS_FLOW_COUNT];                                                               \
      int y = region.y0 + j, x = region.x0, x1 = region.x0 + region.w, xa = x1, xb = x1;           \
      if (fast) cpu_live_run(t, c, y, x, x1, &xa, &xb);                                            \
      while (x < x1) {                                                                             \
        int e = fast ? run_end(t, c, y, x, xa, xb, x1) : x;                                        \
        switch (v) {                                                                               \
        case 0:                                                                                    \
          _Pragma("omp simd") for (int xv = x; xv < e; xv++) one(&tl, &cl, xv, y, junk, 0);        \
          break;                                                                                   \
        case 1:                                                                                    \
          _Pragma("omp simd") for (int xv = x; xv < e; xv++) one(&tl, &cl, xv, y, junk, 1);        \
          break;                                                                                   \
        case 2:                                                                                    \
          _Pragma("omp simd") for (int xv = x; xv < e; xv++) one(&tl, &cl, xv, y, junk, 2);        \
          break;                                                                                   \
        default:                                                                                   \
          _Pragma("omp simd") for (int xv = x; xv < e; xv++) one(&tl, &cl, xv, y, junk, 3);        \
        }                                                                                          \
        if (e < x1) body(t, c, e, y, junk);                                                        \
        x = e + 1;                                                                                 \
      }                                                                                            \
    }                                                                                              \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* Adds the flows ids[0..nid) (nid <= CPU_MAX_IDS) of lanes [k0, k1) to
 * acc, lane by lane in order: flow i of lane k is lane[i·w + k]. Each sum
 * stays in a register over the lanes instead of going through acc in
 * memory (a store-to-load chain per addition); the additions and their
 * order are those of adding lane after lane to acc. */
#define CPU_MAX_IDS 8
static inline TALUS_FORCE_INLINE void cpu_lanes_book(double *acc, const int *ids, int nid,
                                                     const double *lane, size_t w, int k0, int k1) {
  double sum[CPU_MAX_IDS];
  _Pragma("GCC unroll 8") for (int i = 0; i < nid; i++) sum[i] = acc[ids[i]];
  for (int k = k0; k < k1; k++)
    _Pragma("GCC unroll 8") for (int i = 0; i < nid; i++) sum[i] += lane[(size_t)i * w + (size_t)k];
  _Pragma("GCC unroll 8") for (int i = 0; i < nid; i++) acc[ids[i]] = sum[i];
}

/* CPU_STAGE_LOOP_ONE_SIMD (with its `vary`, 0 to 3: cpu_vary_transport) for a stage whose fast body
 * books flows (transport, vertical, hf_rain, hf_erode, hf_advect): each run of fast cells (run_end,
 * from cell x) is one vector loop. Each lane books into its own zeroed accumulator, whose flows
 * named in `ids` go to `lane`; then the lanes are added to the row's
 * accumulator cell by cell in x order, between the cells before and after
 * the run, as the scalar loop adds them. Bit-identical because the fast
 * body adds to each flow at most once per cell (one column), 0 + v is v,
 * and adding a zero for a flow the body did not book changes no sum (an
 * accumulator that starts at +0 is never -0). Cells are independent within
 * these stages (each writes only its own cell), which `GCC ivdep` tells
 * the compiler: `omp simd` would give the lane accumulator an array per
 * lane that GCC then does not vectorise, while under ivdep it becomes
 * registers. */
/* One run [x, e) of CPU_STAGE_LOOP_ONE_SIMD_BOOKED's fast cells with `one`
 * given the constant k (its `vary` copy): each lane's flows named in ids
 * go to `lane`. Written once so the two copies cannot drift apart. */
#define CPU_BOOKED_RUN(one, ids, k)                                                                \
  _Pragma("GCC ivdep") for (int xv = x; xv < e; xv++) {                                            \
    double fl[TALUS_FLOW_COUNT] = {0};                                                             \
    one(&tl, &cl, xv, y, fl, k);                                                                   \
    for (int i = 0; i < nid; i++)                                                                  \
      lane[(size_t)i * w + (size_t)(xv - x)] = fl[ids[i]];                                         \
  }

#define CPU_STAGE_LOOP_ONE_SIMD_BOOKED(body, one, run_end, ids, vary)                              \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    const talus_tile tl = *t;                                                                      \
    const talus_kctx cl = *c;                                                                      \
    const int v = (vary);                                                                          \
    enum { nid = sizeof ids / sizeof *ids };                                                       \
    _Static_assert(nid <= CPU_MAX_IDS, "at most CPU_MAX_IDS flows per fast body");                 \
    size_t w = (size_t)region.w;                                                                   \
    double *lane = malloc(sizeof(double) * nid * w);                                               \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x = region.x0, x1 = region.x0 + region.w, xa = x1, xb = x1;           \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      if (fast) cpu_live_run(t, c, y, x, x1, &xa, &xb);                                            \
      while (x < x1) {                                                                             \
        int e = fast && lane ? run_end(t, c, y, x, xa, xb, x1) : x;                                \
        switch (v) {                                                                               \
        case 0:                                                                                    \
          CPU_BOOKED_RUN(one, ids, 0);                                                             \
          break;                                                                                   \
        case 1:                                                                                    \
          CPU_BOOKED_RUN(one, ids, 1);                                                             \
          break;                                                                                   \
        case 2:                                                                                    \
          CPU_BOOKED_RUN(one, ids, 2);                                                             \
          break;                                                                                   \
        default:                                                                                   \
          CPU_BOOKED_RUN(one, ids, 3);                                                             \
        }                                                                                          \
        cpu_lanes_book(acc, ids, nid, lane, w, (b0 > x ? b0 : x) - x, (b1 < e ? b1 : e) - x);      \
        if (e < x1) body(t, c, e, y, (e >= b0 && e < b1) ? acc : junk);                            \
        x = e + 1;                                                                                 \
      }                                                                                            \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    free(lane);                                                                                    \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* The flow the fast rain body books. */
static const int cpu_rain_ids[] = {TALUS_FLOW_RAIN};

/* The flows the fast vertical body books. */
static const int cpu_vertical_ids[] = {TALUS_FLOW_CEILING_EROSION, TALUS_FLOW_BEDROCK_EROSION,
                                       TALUS_FLOW_DISSOLVE, TALUS_FLOW_DEPOSIT};

/* The heightfield stages on a cell of a live run (cpu_hf_run_end), as the
 * fast bodies of the loops above. */
static inline TALUS_FORCE_INLINE void cpu_hf_rain_live(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows, int v) {
  (void)v;
  hf_rain_cell(t, &c->P, talus_idx(t, x, y), t->buf.x0 + x, t->buf.y0 + y, c->step, RAIN_NOISE_NONE,
               flows);
}
static inline TALUS_FORCE_INLINE void cpu_hf_erode_live(const talus_tile *t, const talus_kctx *c,
                                                        int x, int y, double *flows, int v) {
  (void)v;
  hf_erode_cell(t, &c->P, talus_idx(t, x, y), talus_eroding(&c->P, c->step), flows);
}
static inline TALUS_FORCE_INLINE void cpu_hf_settle_live(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows, int v) {
  (void)v;
  (void)c, (void)flows;
  hf_settle_cell(t, talus_idx(t, x, y));
}

/* Thermal erosion on the heightfield (kernels/thermal.h) on a cell of a
 * live run: thermal_out with thermal.crests_only as the loop's constant
 * v, and thermal_in. The layered model's cells take the general body. */
static inline TALUS_FORCE_INLINE void cpu_thermal_out_live(const talus_tile *t, const talus_kctx *c,
                                                           int x, int y, double *flows, int v) {
  (void)flows;
  thermal_out_live(t, &c->P, talus_idx(t, x, y), v);
}
static inline TALUS_FORCE_INLINE void cpu_thermal_in_live(const talus_tile *t, const talus_kctx *c,
                                                          int x, int y, double *flows, int v) {
  (void)c, (void)v;
  thermal_in_live(t, talus_idx(t, x, y), flows);
}
/* The live run on the heightfield; no fast run in the layered model. */
static inline int cpu_hf_only_run_end(const talus_tile *t, const talus_kctx *c, int y, int x,
                                      int xa, int xb, int x1) {
  int hf = c->P.model == TALUS_MODEL_HEIGHTFIELD;
  return hf ? cpu_hf_run_end(t, c, y, x, xa, xb, x1) : x;
}
static const int cpu_thermal_in_ids[] = {TALUS_FLOW_THERMAL_ROUNDING};

/* acc_begin and acc_end on live cells of one column (acc_begin_live,
 * acc_end_live); `v` says whether the tile has diagonal fluxes. */
static inline TALUS_FORCE_INLINE void cpu_acc_begin_live(const talus_tile *t, const talus_kctx *c,
                                                         int x, int y, double *flows, int v) {
  (void)c, (void)flows, (void)v;
  acc_begin_live(t, talus_idx(t, x, y));
}
static inline TALUS_FORCE_INLINE void cpu_acc_end_live(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows, int v) {
  (void)flows;
  acc_end_live(t, &c->P, talus_idx(t, x, y), v);
}

/* hf_open: cells at least heightfield.sheet_reach inside the domain
 * whose own cell and 8 ends (hf_open_live) hold no NoData cell. */
static inline int cpu_hf_open_run_end(const talus_tile *t, const talus_kctx *c, int y, int x,
                                      int xa, int xb, int x1) {
  (void)xa, (void)xb;
  int r = c->P.hf_sheet_reach, rd = hf_open_diag(r), gy = t->buf.y0 + y;
  if (gy < r || gy > c->ny - 1 - r) return x;
  int lo = r - t->buf.x0, hi = c->nx - r - t->buf.x0, end = x1 < hi ? x1 : hi;
  if (x < lo) return x;
  if (!t->mask) return x > end ? x : end;
  const uint8_t *m = t->mask + talus_idx(t, 0, y);
  ptrdiff_t p = t->pitch, ox = r, oy = r * p, o1 = rd + rd * p, o2 = rd - rd * p;
  CPU_SCAN_RETURN(x, end,
                  (m[u] | m[u + ox] | m[u - ox]) | (m[u + oy] | m[u - oy]) |
                      (m[u + o1] | m[u - o1]) | (m[u + o2] | m[u - o2]));
}
static inline TALUS_FORCE_INLINE void cpu_hf_open_live(const talus_tile *t, const talus_kctx *c,
                                                       int x, int y, double *flows, int v) {
  (void)flows, (void)v;
  hf_open_live(t, &c->P, talus_idx(t, x, y));
}

/* The flows the fast heightfield bodies book. */
static const int cpu_hf_rain_ids[] = {TALUS_FLOW_RAIN};
static const int cpu_hf_erode_ids[] = {TALUS_FLOW_HF_DISSOLVE, TALUS_FLOW_HF_SWELL,
                                       TALUS_FLOW_HF_DEPOSIT, TALUS_FLOW_HF_SHRINK,
                                       TALUS_FLOW_EVAPORATION};
static const int cpu_hf_advect_ids[] = {TALUS_FLOW_SEDIMENT_CLAMP, TALUS_FLOW_HF_ADVECTION};

/* hf_advect's shares, each cell's once: the 4 shares hf_sed_out of every
 * cell of row y in [x0, x1) into sh[d·bw + x]. hf_advect_live evaluates
 * them for the cell and again for each of its 4 neighbours (5 times in
 * all, a division each time); a row of them is kept while the rows next
 * to it need it (CPU_STAGE_LOOP_HF_ADVECT). The same floats: the share is
 * a function of the sender's fields alone. */
static inline void cpu_hf_shares_row(const talus_tile *t, float kdl, int y, int x0, int x1,
                                     float *sh, size_t bw) {
  size_t i0 = talus_idx(t, 0, y), plane = t->plane;
  const float *R = t->r + i0, *VX = t->vx + i0, *VY = t->vy + i0, *F = t->f + i0;
  _Pragma("omp simd") for (int x = x0; x < x1; x++) {
    TALUS_UNROLL4 for (int d = 0; d < 4; d++) sh[(size_t)d * bw + (size_t)x] =
        hf_sed_out(R[x], VX[x], VY[x], F[(size_t)d * plane + (size_t)x], d, kdl);
  }
}

/* hf_advect_live of cell (x, y) from the shares of rows y - 1, y, y + 1
 * (sm, s0, sp; cpu_hf_shares_row): the same sums in the same order (out
 * over the cell's shares d = 0..3, in over what the neighbour in direction
 * d sends back), so the same bits. */
static inline TALUS_FORCE_INLINE void cpu_hf_advect_shared(const talus_tile *t, int x, int y,
                                                           const float *sm, const float *s0,
                                                           const float *sp, size_t bw,
                                                           double *flows) {
  size_t u = (size_t)x;
  double out = 0.0, in = 0.0;
  out += (double)s0[u], in += (double)s0[2 * bw + u + 1];  /* R: its L share */
  out += (double)s0[bw + u], in += (double)sp[3 * bw + u]; /* U: its D share */
  out += (double)s0[2 * bw + u], in += (double)s0[u - 1];  /* L: its R share */
  out += (double)s0[3 * bw + u], in += (double)sm[bw + u]; /* D: its U share */
  size_t idx = talus_idx(t, x, y);
  hf_advect_finish(t, idx, t->r[idx], out, in, flows);
}

/* CPU_STAGE_LOOP_ONE_SIMD_BOOKED of hf_advect (the live runs, vary 0),
 * whose fast cells read the shares of their own and the two next rows
 * from a per-thread buffer of 3 rows (a row's slot is its index mod 3):
 * a thread's rows are consecutive (schedule(static)), so each row's shares
 * are computed once, and the rows around each thread's first one twice. */
#define CPU_STAGE_LOOP_HF_ADVECT(body)                                                             \
  _Pragma("omp parallel") {                                                                        \
    CPU_FTZ_ENTER                                                                                  \
    const talus_tile tl = *t;                                                                      \
    const float kdl = c->P.dt / c->P.cell_size;                                                    \
    const int diag = c->P.hf_diagonal;                                                             \
    enum { nid = sizeof cpu_hf_advect_ids / sizeof *cpu_hf_advect_ids };                           \
    size_t w = (size_t)region.w, bw = (size_t)t->buf.w;                                            \
    double *lane = malloc(sizeof(double) * nid * w);                                               \
    float *shb = malloc(sizeof(float) * 12 * bw);                                                  \
    int shy[3] = {-1, -1, -1};                                                                     \
    int sx0 = region.x0 > 0 ? region.x0 - 1 : 0;                                                   \
    int sx1 = region.x0 + region.w + 1 < t->buf.w ? region.x0 + region.w + 1 : t->buf.w;           \
    _Pragma("omp for schedule(static)") for (int j = 0; j < region.h; j++) {                       \
      double acc[TALUS_FLOW_COUNT] = {0}, junk[TALUS_FLOW_COUNT];                                  \
      int y = region.y0 + j, x = region.x0, x1 = region.x0 + region.w, xa = x1, xb = x1;           \
      int b0, b1;                                                                                  \
      cpu_row_book(book, y, x1, &b0, &b1);                                                         \
      if (fast && lane && shb) cpu_live_run(t, c, y, x, x1, &xa, &xb);                             \
      const float *sm = shb, *s0 = shb, *sp = shb;                                                 \
      if (xa < xb && !diag) { /* 1 <= y < buf.h - 1 (cpu_live_run) */                              \
        for (int r = y - 1; r <= y + 1; r++)                                                       \
          if (shy[r % 3] != r) {                                                                   \
            cpu_hf_shares_row(&tl, kdl, r, sx0, sx1, shb + (size_t)(r % 3) * 4 * bw, bw);          \
            shy[r % 3] = r;                                                                        \
          }                                                                                        \
        sm = shb + (size_t)((y - 1) % 3) * 4 * bw;                                                 \
        s0 = shb + (size_t)(y % 3) * 4 * bw;                                                       \
        sp = shb + (size_t)((y + 1) % 3) * 4 * bw;                                                 \
      }                                                                                            \
      while (x < x1) {                                                                             \
        int e = xa < xb ? cpu_hf_run_end(t, c, y, x, xa, xb, x1) : x;                              \
        if (diag) { /* heightfield.neighbours = 8: each cell reads its neighbours' shares */       \
          _Pragma("GCC ivdep") for (int xv = x; xv < e; xv++) {                                    \
            double fl[TALUS_FLOW_COUNT] = {0};                                                     \
            hf_advect_live8(&tl, talus_idx(&tl, xv, y), fl);                                       \
            for (int i = 0; i < nid; i++)                                                          \
              lane[(size_t)i * w + (size_t)(xv - x)] = fl[cpu_hf_advect_ids[i]];                   \
          }                                                                                        \
        } else {                                                                                   \
          _Pragma("GCC ivdep") for (int xv = x; xv < e; xv++) {                                    \
            double fl[TALUS_FLOW_COUNT] = {0};                                                     \
            cpu_hf_advect_shared(&tl, xv, y, sm, s0, sp, bw, fl);                                  \
            for (int i = 0; i < nid; i++)                                                          \
              lane[(size_t)i * w + (size_t)(xv - x)] = fl[cpu_hf_advect_ids[i]];                   \
          }                                                                                        \
        }                                                                                          \
        cpu_lanes_book(acc, cpu_hf_advect_ids, nid, lane, w, (b0 > x ? b0 : x) - x,                \
                       (b1 < e ? b1 : e) - x);                                                     \
        if (e < x1) body(t, c, e, y, (e >= b0 && e < b1) ? acc : junk);                            \
        x = e + 1;                                                                                 \
      }                                                                                            \
      memcpy(rows + (size_t)j * TALUS_FLOW_COUNT, acc, sizeof acc);                                \
    }                                                                                              \
    free(lane);                                                                                    \
    free(shb);                                                                                     \
    CPU_FTZ_LEAVE                                                                                  \
  }

/* The flows the fast transport body books. */
static const int cpu_transport_ids[] = {TALUS_FLOW_WATER_OVERFILL, TALUS_FLOW_EVAPORATION,
                                        TALUS_FLOW_SAND_OVERFILL,  TALUS_FLOW_SAND_CLAMP,
                                        TALUS_FLOW_PETRIFY,        TALUS_FLOW_SEDIMENT_CLAMP};

#define CPU_CAT2(a, b) a##b
#define CPU_CAT(a, b)  CPU_CAT2(a, b)
#ifdef TALUS_CPU_ISA
#define CPU_STAGE_BOOKED CPU_CAT(cpu_stage_booked_, TALUS_CPU_ISA)
#else
#define CPU_STAGE_BOOKED cpu_stage_booked_base
#endif

/* talus_cpu_stage_booked as compiled for one instruction set; `fast`
 * allows the layered fast paths (see the notes at the top). Owns the
 * dispatch of a stage id to its loop (the CPU_LOOP column of stages.def)
 * and the ledger rows' sum in y order. */
typedef talus_status cpu_stage_fn(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                                  talus_rect region, talus_rect book, double *flows, int fast);
cpu_stage_fn CPU_STAGE_BOOKED;
talus_status CPU_STAGE_BOOKED(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                              talus_rect region, talus_rect book, double *flows, int fast) {
  if (region.w <= 0 || region.h <= 0) return TALUS_OK;
  talus_status st = talus_stage_scratch(t, &c->P, id);
  if (st) return st;
  double *rows = calloc((size_t)region.h * TALUS_FLOW_COUNT, sizeof *rows);
  if (!rows) return talus_fail(TALUS_ERR_NOMEM, "cpu", "no memory for ledger rows");
  switch (id) {
#define TALUS_STAGE(ID, NAME, RADIUS, BODY, CPU_LOOP, CUDA_MINB)                                   \
  case TALUS_STAGE_##ID:                                                                           \
    CPU_LOOP;                                                                                      \
    break;
#include "kernels/stages.def"
#undef TALUS_STAGE
  default:
    free(rows);
    return talus_fail(TALUS_ERR_INTERNAL, "cpu", "unknown stage %d", (int)id);
  }
  for (int j = 0; j < region.h; j++)
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      flows[f] += rows[(size_t)j * TALUS_FLOW_COUNT + f];
  free(rows);
  return TALUS_OK;
}

#ifndef TALUS_CPU_ISA /* the dispatch, once, in the base build of this file */
#include <pthread.h>

#if TALUS_CPU_MULTIARCH
cpu_stage_fn cpu_stage_booked_v3, cpu_stage_booked_v4;
#endif

/* The widest variant this CPU runs, capped by TALUS_CPU_ISA; its name to
 * *name. */
static cpu_stage_fn *cpu_choose(const char **name) {
  const char *cap = getenv("TALUS_CPU_ISA");
  int level = cap && !strcmp(cap, "base") ? 0 : cap && !strcmp(cap, "v3") ? 3 : 4;
#if TALUS_CPU_MULTIARCH
  __builtin_cpu_init();
  if (level >= 4 && __builtin_cpu_supports("x86-64-v4")) {
    *name = "x86-64-v4";
    return cpu_stage_booked_v4;
  }
  if (level >= 3 && __builtin_cpu_supports("x86-64-v3")) {
    *name = "x86-64-v3";
    return cpu_stage_booked_v3;
  }
#endif
  (void)level;
  *name = "baseline";
  return cpu_stage_booked_base;
}

/* The choices, made once per process (the environment and the CPU do not
 * change): the variant, and whether the layered fast paths run (unless
 * TALUS_CPU_GENERAL is set to other than 0, which forces the general path
 * everywhere, for tests). */
static cpu_stage_fn *cpu_stage_chosen;
static const char *cpu_isa_chosen;
static int cpu_fast_chosen;
static pthread_once_t cpu_choice_once = PTHREAD_ONCE_INIT;

static void cpu_make_choice(void) {
  const char *general = getenv("TALUS_CPU_GENERAL");
  cpu_fast_chosen = !(general && *general && strcmp(general, "0") != 0);
  cpu_stage_chosen = cpu_choose(&cpu_isa_chosen);
}

const char *talus_cpu_isa(void) {
  pthread_once(&cpu_choice_once, cpu_make_choice);
  return cpu_isa_chosen;
}

talus_status talus_cpu_stage_booked(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                                    talus_rect region, talus_rect book, double *flows) {
  pthread_once(&cpu_choice_once, cpu_make_choice);
  return cpu_stage_chosen(t, c, id, region, book, flows, cpu_fast_chosen);
}

talus_status talus_cpu_stage(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                             talus_rect region, double *flows) {
  return talus_cpu_stage_booked(t, c, id, region, region, flows);
}

#endif
