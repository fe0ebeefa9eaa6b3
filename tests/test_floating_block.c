/*
 * test_floating_block.c — the support check through full steps
 * (talus_tiler_advance): a floating block with no bedrock overlap to
 * anything anchored survives until its support cycle ends and collapses at
 * exactly the cycle's last step, its bedrock becoming sand (booked
 * COLLAPSE); a ledge attached to a pillar stays up while short, and a long
 * one keeps exactly the part eq. 26-29 can hold. Rain, evaporation and
 * erosion are off so that only the support check changes the terrain.
 */
#include "check.h"
#include "tiler/tiler.h"

#include <stdlib.h>
#include <string.h>

typedef struct env {
  talus_tile *t;
  talus_kctx c;
  talus_run_stats stats;
} env;

/* A whole-domain tile of w × h cells of flat bedrock 0, support only. */
static void env_open(env *e, int w, int h, float lc) {
  memset(e, 0, sizeof *e);
  if (talus_tile_create(&e->t, (talus_rect){0, 0, w, h}, 4, 0) != TALUS_OK) {
    fprintf(stderr, "tile create failed\n");
    exit(2);
  }
  talus_kparams *P = &e->c.P;
  talus_kparams_defaults(P);
  P->nz = 4;
  P->cell_size = lc;
  P->rain = 0.0f;
  P->evaporation = 0.0f;
  P->enable_horizontal = 0;
  P->enable_vertical = 0;
  P->enable_slippage = 0;
  P->petrification = 0.0f;
  talus_kparams_derive(P);
  e->c.nx = w;
  e->c.ny = h;
}

static void env_close(env *e) {
  talus_tile_free(e->t);
}

static void advance(env *e, int64_t steps) {
  talus_rect core = {0, 0, e->t->buf.w, e->t->buf.h};
  CHECK(talus_tiler_advance(e->t, &e->c, core, steps, &e->stats, NULL, NULL) == TALUS_OK,
        "advance %lld", (long long)steps);
}

/* Two columns at (x, y): ground 0 with ceiling `floor`, bedrock to `top`. */
static void set_two(talus_tile *t, int x, int y, float floor, float top) {
  size_t idx = talus_idx(t, x, y), c1 = talus_col(t, idx, 1);
  t->count[idx] = 2;
  t->B[idx] = 0.0f;
  t->C[idx] = floor;
  t->B[c1] = top;
  t->C[c1] = TALUS_TOP;
}

static int count_at(const talus_tile *t, int x, int y) {
  return t->count[talus_idx(t, x, y)];
}

/* Cells of the 3×3 block at (4..6, 4..6) that still have `n` columns. */
static int block_cells_with(const talus_tile *t, int n) {
  int k = 0;
  for (int y = 4; y < 7; y++)
    for (int x = 4; x < 7; x++)
      k += count_at(t, x, y) == n;
  return k;
}

/* A 3 m block floating 5 m above the ground, beside a tall pillar it does
 * not touch, starting at global step `start`. */
static void floating_block(float lc, int64_t start) {
  env e;
  env_open(&e, 16, 12, lc);
  e.c.step = start;
  for (int y = 4; y < 7; y++)
    for (int x = 4; x < 7; x++)
      set_two(e.t, x, y, 5.0f, 8.0f);
  e.t->B[talus_idx(e.t, 8, 5)] = 30.0f; /* two cells away: no contact */
  int cycle = e.c.P.support_cycle;
  int64_t last = (start / cycle + 1) * cycle - 1; /* the current cycle's last step */
  CHECK(cycle > 1, "cycle %d", cycle);
  advance(&e, last - start);
  CHECK(e.c.step == last, "at the cycle's last step");
  CHECK(block_cells_with(e.t, 2) == 9, "block survives until the cycle's last step");
  CHECK(e.stats.flows[TALUS_FLOW_COLLAPSE] == 0.0, "nothing collapsed yet");
  advance(&e, 1);
  CHECK(block_cells_with(e.t, 1) == 9, "block collapsed at the cycle's last step (lc %g)",
        (double)lc);
  for (int y = 4; y < 7; y++)
    for (int x = 4; x < 7; x++) {
      size_t idx = talus_idx(e.t, x, y);
      CHECK(e.t->B[idx] == 0.0f && e.t->C[idx] == TALUS_TOP, "ground kept, top ceiling");
      CHECK_CLOSE(e.t->s[idx], 3.0, 1e-6, "block bedrock became sand below");
    }
  CHECK_CLOSE(e.stats.flows[TALUS_FLOW_COLLAPSE], 9 * 3.0, 1e-5, "COLLAPSE = block bedrock");
  CHECK(e.t->B[talus_idx(e.t, 8, 5)] == 30.0f, "pillar untouched");
  env_close(&e);
}

/* Stability a ledge cell at distance d from the pillar reaches (eq. 26-29,
 * lc = 1, 3 m overlap and thickness): l_c·κ_p·3 − (d)·m. */
static double ledge_p(int d) {
  return 60000.0 * 3.0 - 7800.0 * d;
}

/* A ledge of `len` cells attached at x = 3 to a 20 m pillar at x = 2. */
static void ledge(int len) {
  env e;
  env_open(&e, len + 8, 9, 1.0f);
  e.t->B[talus_idx(e.t, 2, 4)] = 20.0f;
  for (int d = 1; d <= len; d++)
    set_two(e.t, 2 + d, 4, 15.0f, 18.0f);
  int cycle = e.c.P.support_cycle, held = 0;
  advance(&e, cycle - 1);
  for (int d = 1; d <= len; d++) {
    float p = e.t->p[talus_col(e.t, talus_idx(e.t, 2 + d, 4), 1)];
    double want = ledge_p(d) > 0 ? ledge_p(d) : 0.0;
    CHECK_CLOSE(p, want, 1e-2, "ledge stability at distance d");
    held += ledge_p(d) > 0;
  }
  advance(&e, 1);
  for (int d = 1; d <= len; d++) {
    int want = d <= held ? 2 : 1;
    CHECK(count_at(e.t, 2 + d, 4) == want, "ledge cell %d: count %d, want %d", d,
          count_at(e.t, 2 + d, 4), want);
  }
  CHECK_CLOSE(e.stats.flows[TALUS_FLOW_COLLAPSE], 3.0 * (len - held), 1e-5, "COLLAPSE of the tip");
  if (len <= held) CHECK(e.stats.flows[TALUS_FLOW_COLLAPSE] == 0.0, "short ledge stays up");
  env_close(&e);
}

/* Copies every persistent field of the cells of dst's rectangle from src
 * (same nz; dst's rectangle lies inside src's). */
static void copy_window(const talus_tile *src, talus_tile *dst) {
  for (int y = 0; y < dst->buf.h; y++)
    for (int x = 0; x < dst->buf.w; x++) {
      size_t a = talus_idx(src, dst->buf.x0 - src->buf.x0 + x, dst->buf.y0 - src->buf.y0 + y);
      size_t b = talus_idx(dst, x, y);
      dst->count[b] = src->count[a];
      dst->mask[b] = src->mask[a];
      for (int k = 0; k < src->nz; k++) {
        size_t ca = talus_col(src, a, k), cb = talus_col(dst, b, k);
        dst->B[cb] = src->B[ca];
        dst->s[cb] = src->s[ca];
        dst->w[cb] = src->w[ca];
        dst->C[cb] = src->C[ca];
        dst->r[cb] = src->r[ca];
        dst->D[cb] = src->D[ca];
        dst->p[cb] = src->p[ca];
        for (int d = 0; d < 4; d++)
          dst->f[talus_dcol(dst, b, k, d)] = src->f[talus_dcol(src, a, k, d)];
      }
    }
}

/* 1 when the live columns of global cell (gx, gy) are bit-identical. */
static int same_cell(const talus_tile *a, const talus_tile *b, int gx, int gy) {
  size_t i = talus_idx(a, gx - a->buf.x0, gy - a->buf.y0);
  size_t j = talus_idx(b, gx - b->buf.x0, gy - b->buf.y0);
  if (a->count[i] != b->count[j]) return 0;
  for (int k = 0; k < a->count[i]; k++) {
    size_t ci = talus_col(a, i, k), cj = talus_col(b, j, k);
    float fa[7] = {a->B[ci], a->s[ci], a->w[ci], a->C[ci], a->r[ci], a->D[ci], a->p[ci]};
    float fb[7] = {b->B[cj], b->s[cj], b->w[cj], b->C[cj], b->r[cj], b->D[cj], b->p[cj]};
    if (memcmp(fa, fb, sizeof fa)) return 0;
  }
  return 1;
}

/* A tile with a halo of steps·R on its interior edge reproduces the whole
 * domain's run in its core, bit for bit, through a full support cycle
 * (init, propagation and collapse). The buffer's origin is odd, so local
 * and global parity differ, and the core holds a partly converged ledge
 * (whose stabilities depend on the sweep order) and a floating block. */
static void tile_invariance(void) {
  enum { W = 64, H = 12, PX = 24, CORE0 = 21 };
  env whole;
  env_open(&whole, W, H, 1.0f);
  whole.c.P.prop_iterations = 1;
  whole.c.P.max_prop_distance = 8.0f; /* cycle 4 */
  talus_kparams_derive(&whole.c.P);
  whole.t->B[talus_idx(whole.t, PX, 5)] = 20.0f;
  for (int x = PX + 1; x <= PX + 26; x++)
    set_two(whole.t, x, 5, 15.0f, 18.0f);
  for (int y = 4; y < 7; y++)
    for (int x = 54; x < 57; x++)
      set_two(whole.t, x, y, 5.0f, 8.0f);
  int steps = whole.c.P.support_cycle, R = talus_step_radius(&whole.c.P), halo = steps * R;
  CHECK(steps == 4 && R == 5, "cycle %d radius %d", steps, R);
  talus_tile *part = NULL;
  talus_rect buf = {CORE0 - halo, 0, W - (CORE0 - halo), H};
  if (talus_tile_create(&part, buf, 4, 0) != TALUS_OK) exit(2);
  copy_window(whole.t, part);
  talus_kctx pc = whole.c;
  talus_run_stats ps;
  memset(&ps, 0, sizeof ps);
  advance(&whole, steps - 1);
  float p1 = whole.t->p[talus_col(whole.t, talus_idx(whole.t, PX + 2, 5), 1)];
  CHECK(p1 > 0.0f, "propagation reached the second ledge cell: %g", (double)p1);
  advance(&whole, 1);
  talus_rect core = {CORE0, 0, W - CORE0, H}; /* global, as buf */
  CHECK(talus_tiler_advance(part, &pc, core, steps, &ps, NULL, NULL) == TALUS_OK, "advance part");
  int same = 0, cells = 0, held = 0, fallen = 0;
  for (int gy = 0; gy < H; gy++)
    for (int gx = CORE0; gx < W; gx++) {
      cells++;
      same += same_cell(whole.t, part, gx, gy);
    }
  for (int x = PX + 1; x <= PX + 26; x++) {
    held += count_at(whole.t, x, 5) == 2;
    fallen += count_at(whole.t, x, 5) == 1;
  }
  CHECK(same == cells, "core identical: %d of %d cells", same, cells);
  CHECK(held > 0 && fallen > 0, "the run both kept (%d) and collapsed (%d) columns", held, fallen);
  CHECK(count_at(whole.t, 55, 5) == 1, "block collapsed");
  talus_tile_free(part);
  env_close(&whole);
}

int main(void) {
  floating_block(1.0f, 0);  /* cycle 10, from the first step */
  floating_block(2.0f, 0);  /* cycle 5 */
  floating_block(1.0f, 13); /* mid-cycle start: phase from the global step */
  ledge(5);                 /* fully held */
  ledge(30);                /* held up to distance 23, the tip falls */
  tile_invariance();
  return check_report("test_floating_block");
}
