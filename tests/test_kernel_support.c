/*
 * test_kernel_support.c — unit tests of the support check kernels
 * (kernels/support.h) run stage by stage through the CPU backend: stability
 * init, the propagation formula (eq. 26-29), red/black parity from global
 * coordinates, weight, border support and NoData, collapse, merge and
 * compaction with full material accounting.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"
#include "kernels/support.h"

#include <stdlib.h>
#include <string.h>

/* One column as the tests describe it; C of the last column is forced to TOP. */
typedef struct col {
  float B, s, w, C, r, D, p;
  float f[4];
} col;

typedef struct env {
  talus_tile *t;
  talus_kctx c;
} env;

/* A tile covering buf in a domain of nx × ny cells, flat bedrock 0. */
static void env_open(env *e, talus_rect buf, int nx, int ny, int nz, float lc) {
  memset(e, 0, sizeof *e);
  if (talus_tile_create(&e->t, buf, nz, 0) != TALUS_OK) {
    fprintf(stderr, "tile create failed\n");
    exit(2);
  }
  talus_kparams_defaults(&e->c.P);
  e->c.P.nz = nz;
  e->c.P.cell_size = lc;
  talus_kparams_derive(&e->c.P);
  e->c.nx = nx;
  e->c.ny = ny;
}

static void env_close(env *e) {
  talus_tile_free(e->t);
}

/* Writes the n columns of buffer-local cell (x, y). */
static void set_cell(talus_tile *t, int x, int y, int n, const col *cols) {
  size_t idx = talus_idx(t, x, y);
  t->count[idx] = (uint8_t)n;
  for (int k = 0; k < n; k++) {
    size_t ci = talus_col(t, idx, k);
    t->B[ci] = cols[k].B;
    t->s[ci] = cols[k].s;
    t->w[ci] = cols[k].w;
    t->C[ci] = k == n - 1 ? TALUS_TOP : cols[k].C;
    t->r[ci] = cols[k].r;
    t->D[ci] = cols[k].D;
    t->p[ci] = cols[k].p;
    for (int d = 0; d < 4; d++)
      t->f[talus_dcol(t, idx, k, d)] = cols[k].f[d];
  }
}

static float P_(const talus_tile *t, int x, int y, int k) {
  return t->p[talus_col(t, talus_idx(t, x, y), k)];
}

/* Runs one stage over the whole buffer (a whole-domain tile). */
static void run_all(env *e, talus_stage_id id, double *flows) {
  talus_rect all = {0, 0, e->t->buf.w, e->t->buf.h};
  CHECK(talus_cpu_stage(e->t, &e->c, id, all, flows) == TALUS_OK, "stage %d", (int)id);
}

/* A two-column ledge cell: ground 0 below a gap up to `floor`, bedrock to top. */
static void set_ledge(talus_tile *t, int x, int y, float floor, float top, float s, float w) {
  col cols[2] = {{.B = 0, .C = floor, .p = 0}, {.B = top, .s = s, .w = w}};
  set_cell(t, x, y, 2, cols);
}

static void set_pillar(talus_tile *t, int x, int y, float top) {
  col c0 = {.B = top};
  set_cell(t, x, y, 1, &c0);
}

/* Init: layer 0 anchored, upper columns reset, stale slots untouched. */
static void test_init(void) {
  env e;
  env_open(&e, (talus_rect){0, 0, 4, 4}, 4, 4, 4, 1.0f);
  col cols[3] = {{.B = 0, .C = 5, .p = 5}, {.B = 7, .C = 9, .p = 6}, {.B = 11, .p = 7}};
  set_cell(e.t, 1, 2, 3, cols);
  size_t idx = talus_idx(e.t, 1, 2);
  e.t->p[talus_col(e.t, idx, 3)] = 9.0f; /* stale slot */
  double fl[TALUS_FLOW_COUNT] = {0};
  run_all(&e, TALUS_STAGE_SUPPORT_INIT, fl);
  CHECK(P_(e.t, 1, 2, 0) == TALUS_TOP, "layer 0 anchored: %g", P_(e.t, 1, 2, 0));
  CHECK(P_(e.t, 1, 2, 1) == 0.0f && P_(e.t, 1, 2, 2) == 0.0f, "upper columns reset");
  CHECK(P_(e.t, 1, 2, 3) == 9.0f, "stale slot untouched");
  CHECK(P_(e.t, 3, 3, 0) == TALUS_TOP, "single column cell anchored");
  env_close(&e);
}

/* Propagation from a pillar neighbour gives l_c·κ_p·o²/t − m (eq. 26-29). */
static void test_formula(void) {
  const float lc = 2.0f;
  double area = (double)lc * lc, t = 3.0;
  double m = (3.0 * 2600 + 0.5 * 1600 + 0.25 * 1000) * area;
  float tops[2] = {20.0f, 16.5f}; /* full overlap 3 m, partial 1.5 m */
  for (int i = 0; i < 2; i++) {
    env e;
    env_open(&e, (talus_rect){0, 0, 5, 5}, 5, 5, 4, lc);
    e.c.P.enable_border_support = 0;
    set_ledge(e.t, 2, 2, 15.0f, 18.0f, 0.5f, 0.25f); /* (2+2) even: black */
    set_pillar(e.t, 1, 2, tops[i]);                  /* its stored p is 0: still anchored */
    double fl[TALUS_FLOW_COUNT] = {0};
    run_all(&e, TALUS_STAGE_SUPPORT_RED, fl);
    CHECK(P_(e.t, 2, 2, 1) == 0.0f, "red leaves an even cell alone");
    run_all(&e, TALUS_STAGE_SUPPORT_BLACK, fl);
    double o = fmin(tops[i], 18.0) - 15.0;
    double want = lc * 60000.0 * o * o / t - m;
    CHECK_CLOSE(P_(e.t, 2, 2, 1), want, 1e-5 * fabs(want), "p = l_c κ_p o²/t − m");
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      CHECK(fl[f] == 0.0, "no ledger flow %d", f);
    env_close(&e);
  }
}

/* A neighbour's upper column supports at most its own stability. */
static void test_cap_by_neighbour(void) {
  float caps[2] = {1000.0f, 100000.0f};
  for (int i = 0; i < 2; i++) {
    env e;
    env_open(&e, (talus_rect){0, 0, 5, 5}, 5, 5, 4, 1.0f);
    set_ledge(e.t, 2, 2, 15.0f, 18.0f, 0.0f, 0.0f);
    col nb[2] = {{.B = 0, .C = 14}, {.B = 19, .p = caps[i]}};
    set_cell(e.t, 3, 2, 2, nb); /* (3+2) odd: red, not updated by black */
    double fl[TALUS_FLOW_COUNT] = {0};
    run_all(&e, TALUS_STAGE_SUPPORT_BLACK, fl);
    double want = fmax((double)caps[i] - 3.0 * 2600, 0.0);
    CHECK_CLOSE(P_(e.t, 2, 2, 1), want, 1e-3, "support capped by p' of the neighbour");
    CHECK(P_(e.t, 3, 2, 1) == caps[i], "black leaves the odd neighbour alone");
    env_close(&e);
  }
}

/* Red updates exactly the cells with global (gx+gy) odd, black the rest,
 * in a tile whose origin makes local and global parity disagree. */
static void test_parity(void) {
  env e;
  env_open(&e, (talus_rect){3, 0, 8, 6}, 20, 6, 4, 1.0f);
  e.c.P.enable_border_support = 0;
  for (int x = 2; x <= 5; x++) {
    set_ledge(e.t, x, 2, 15.0f, 18.0f, 0.0f, 0.0f);
    set_pillar(e.t, x, 3, 20.0f);
  }
  talus_rect inner = {1, 0, 6, 6}; /* interior tile edges x consume the radius */
  double fl[TALUS_FLOW_COUNT] = {0};
  CHECK(talus_cpu_stage(e.t, &e.c, TALUS_STAGE_SUPPORT_RED, inner, fl) == TALUS_OK, "red");
  for (int x = 2; x <= 5; x++) {
    int odd = (3 + x + 2) & 1;
    float p = P_(e.t, x, 2, 1);
    CHECK(odd ? p > 0.0f : p == 0.0f, "red: local x %d (global parity %d) p %g", x, odd, p);
  }
  CHECK(talus_cpu_stage(e.t, &e.c, TALUS_STAGE_SUPPORT_BLACK, inner, fl) == TALUS_OK, "black");
  for (int x = 2; x <= 5; x++)
    CHECK(P_(e.t, x, 2, 1) > 0.0f, "black completes x %d", x);
  env_close(&e);
}

/* Weight: without it p is the full support; a heavy load cancels support. */
static void test_weight(void) {
  struct {
    int use_weight;
    float sand;
    double want;
  } cases[3] = {{0, 0.5f, 180000.0}, {1, 0.5f, 180000.0 - (7800 + 800)}, {1, 300.0f, 0.0}};
  for (int i = 0; i < 3; i++) {
    env e;
    env_open(&e, (talus_rect){0, 0, 5, 5}, 5, 5, 4, 1.0f);
    e.c.P.use_weight = cases[i].use_weight;
    set_ledge(e.t, 2, 2, 15.0f, 18.0f, cases[i].sand, 0.0f);
    set_pillar(e.t, 2, 1, 20.0f);
    double fl[TALUS_FLOW_COUNT] = {0};
    run_all(&e, TALUS_STAGE_SUPPORT_BLACK, fl);
    CHECK_CLOSE(P_(e.t, 2, 2, 1), cases[i].want, 1e-2, "weight case");
    env_close(&e);
  }
}

/* Border support: a column touching the domain border gets l_c·t·κ'_p only
 * when enabled; an interior column and a NoData neighbour give nothing. */
static void test_border(void) {
  for (int enabled = 0; enabled < 2; enabled++) {
    env e;
    env_open(&e, (talus_rect){0, 0, 5, 5}, 5, 5, 4, 2.0f);
    e.c.P.enable_border_support = enabled;
    e.c.P.border_support = 50000.0f; /* differs from κ_p so the right one is checked */
    set_ledge(e.t, 0, 1, 10.0f, 13.0f, 0.0f, 0.0f); /* touches x = 0; odd */
    set_ledge(e.t, 4, 3, 10.0f, 13.0f, 0.0f, 0.0f); /* touches x = nx-1; odd */
    set_ledge(e.t, 2, 3, 10.0f, 13.0f, 0.0f, 0.0f); /* interior; odd */
    double fl[TALUS_FLOW_COUNT] = {0};
    run_all(&e, TALUS_STAGE_SUPPORT_RED, fl);
    double want = enabled ? 2.0 * 3.0 * 50000.0 - 3.0 * 2600 * 4.0 : 0.0;
    CHECK_CLOSE(P_(e.t, 0, 1, 1), want, 1e-2, "left border support");
    CHECK_CLOSE(P_(e.t, 4, 3, 1), want, 1e-2, "right border support");
    CHECK(P_(e.t, 2, 3, 1) == 0.0f, "interior column without neighbours has no support");
    env_close(&e);
  }
  for (int masked = 0; masked < 2; masked++) {
    env e;
    env_open(&e, (talus_rect){0, 0, 5, 5}, 5, 5, 4, 1.0f);
    set_ledge(e.t, 2, 2, 15.0f, 18.0f, 0.0f, 0.0f);
    set_pillar(e.t, 1, 2, 20.0f);
    e.t->mask[talus_idx(e.t, 1, 2)] = (uint8_t)masked;
    double fl[TALUS_FLOW_COUNT] = {0};
    run_all(&e, TALUS_STAGE_SUPPORT_BLACK, fl);
    float p = P_(e.t, 2, 2, 1);
    CHECK(masked ? p == 0.0f : p > 0.0f, "NoData neighbour gives no support (masked %d): %g",
          masked, p);
    env_close(&e);
  }
}

/* Material totals of a cell: bedrock, sand, water, sediment (heights). */
static void totals(const talus_tile *t, int x, int y, double out[4]) {
  size_t idx = talus_idx(t, x, y);
  memset(out, 0, 4 * sizeof *out);
  for (int k = 0; k < t->count[idx]; k++) {
    size_t ci = talus_col(t, idx, k);
    out[0] += (double)t->B[ci] - (k ? (double)t->C[ci - t->plane] : 0.0);
    out[1] += t->s[ci];
    out[2] += t->w[ci];
    out[3] += t->r[ci];
  }
}

/* Every material is kept or booked, and every column is sorted and fits. */
static void check_conserved(const talus_tile *t, int x, int y, const double before[4],
                            const double *fl, const char *what) {
  double after[4];
  totals(t, x, y, after);
  double col_ = fl[TALUS_FLOW_COLLAPSE], mer = fl[TALUS_FLOW_MERGE];
  CHECK_CLOSE(after[0], before[0] - col_ + mer, 1e-4, what);
  CHECK_CLOSE(after[1], before[1] + col_ - mer, 1e-4, what);
  CHECK_CLOSE(after[2], before[2], 1e-6, what);
  CHECK_CLOSE(after[3], before[3], 1e-7, what);
  size_t idx = talus_idx(t, x, y);
  int n = t->count[idx];
  CHECK(n >= 1 && t->C[talus_col(t, idx, n - 1)] == TALUS_TOP, "%s: top ceiling", what);
  for (int k = 0; k < n; k++) {
    size_t ci = talus_col(t, idx, k);
    CHECK(t->B[ci] >= talus_floor(t, idx, k), "%s: B above floor", what);
    CHECK(t->s[ci] + t->w[ci] <= t->C[ci] - t->B[ci] + 1e-4f, "%s: no overflow", what);
  }
}

/* A column with p <= 0 falls into the column below: bedrock as sand. */
static void test_collapse(void) {
  env e;
  env_open(&e, (talus_rect){0, 0, 3, 3}, 3, 3, 4, 1.0f);
  col cols[3] = {
      {.B = 0,
       .s = 0.2f,
       .w = 0.1f,
       .C = 10,
       .r = 0.01f,
       .D = 0.3f,
       .p = TALUS_TOP,
       .f = {1, 2, 3, 4}},
      {.B = 12, .s = 0.5f, .w = 0.3f, .C = 20, .r = 0.02f, .D = 0.1f, .p = 0, .f = {9, 9, 9, 9}},
      {.B = 25, .s = 1, .w = 2, .r = 0.05f, .D = 0.2f, .p = 500, .f = {5, 6, 7, 8}}};
  set_cell(e.t, 1, 1, 3, cols);
  double before[4], fl[TALUS_FLOW_COUNT] = {0};
  totals(e.t, 1, 1, before);
  run_all(&e, TALUS_STAGE_COLLAPSE, fl);
  size_t idx = talus_idx(e.t, 1, 1), c0 = talus_col(e.t, idx, 0), c1 = talus_col(e.t, idx, 1);
  talus_tile *t = e.t;
  CHECK(t->count[idx] == 2, "one column removed: %d", t->count[idx]);
  CHECK_CLOSE(t->s[c0], 0.2 + 0.5 + 2.0, 1e-6, "sand + collapsed bedrock below");
  CHECK_CLOSE(t->w[c0], 0.4, 1e-6, "water below");
  CHECK_CLOSE(t->r[c0], 0.03, 1e-7, "sediment below");
  CHECK(t->C[c0] == 20.0f && t->B[c0] == 0.0f, "below takes the ceiling, keeps its bedrock");
  CHECK(t->D[c0] == 0.3f && t->p[c0] == TALUS_TOP && t->f[talus_dcol(t, idx, 0, 2)] == 3.0f,
        "below keeps D, p, fluxes");
  CHECK(t->B[c1] == 25.0f && t->s[c1] == 1.0f && t->w[c1] == 2.0f && t->C[c1] == TALUS_TOP &&
            t->r[c1] == 0.05f && t->D[c1] == 0.2f && t->p[c1] == 500.0f,
        "survivor compacted down");
  for (int d = 0; d < 4; d++)
    CHECK(t->f[talus_dcol(t, idx, 1, d)] == (float)(5 + d), "survivor flux %d", d);
  CHECK_CLOSE(fl[TALUS_FLOW_COLLAPSE], 2.0, 1e-6, "COLLAPSE books the full bedrock");
  check_conserved(t, 1, 1, before, fl, "collapse");
  CHECK(t->count[talus_idx(t, 0, 0)] == 1 && t->B[0] == 0.0f, "plain cells untouched");
  env_close(&e);
}

/* Thin bedrock (t <= b_min) collapses even when supported; chains cascade. */
static void test_thin_and_cascade(void) {
  env e;
  env_open(&e, (talus_rect){0, 0, 3, 3}, 3, 3, 4, 1.0f);
  col thin[2] = {{.B = 0, .C = 10, .p = TALUS_TOP}, {.B = 11, .s = 0.25f, .p = 1e6f}};
  set_cell(e.t, 0, 0, 2, thin); /* t = 1 = b_min */
  col chain[3] = {{.B = 0, .C = 10, .p = TALUS_TOP},
                  {.B = 13, .s = 0.5f, .C = 20, .p = 0},
                  {.B = 24, .w = 1, .p = -5}};
  set_cell(e.t, 2, 2, 3, chain);
  double b0[4], b1[4], fl[TALUS_FLOW_COUNT] = {0};
  totals(e.t, 0, 0, b0);
  totals(e.t, 2, 2, b1);
  run_all(&e, TALUS_STAGE_COLLAPSE, fl);
  talus_tile *t = e.t;
  CHECK(t->count[talus_idx(t, 0, 0)] == 1, "thin column collapsed");
  CHECK_CLOSE(t->s[talus_idx(t, 0, 0)], 1.25, 1e-6, "thin column became sand");
  size_t i2 = talus_idx(t, 2, 2);
  CHECK(t->count[i2] == 1 && t->C[i2] == TALUS_TOP, "cascade reaches layer 0");
  CHECK_CLOSE(t->s[i2], 0.5 + 3.0 + 4.0, 1e-5, "both bedrocks became sand");
  CHECK_CLOSE(fl[TALUS_FLOW_COLLAPSE], 1.0 + 3.0 + 4.0, 1e-5, "COLLAPSE sum");
  double fl0[TALUS_FLOW_COUNT] = {0}, fl1[TALUS_FLOW_COUNT] = {0};
  fl0[TALUS_FLOW_COLLAPSE] = 1.0;
  fl1[TALUS_FLOW_COLLAPSE] = 7.0;
  check_conserved(t, 0, 0, b0, fl0, "thin");
  check_conserved(t, 2, 2, b1, fl1, "cascade");
  env_close(&e);
}

/* A too-close lower column merges with the column above; mass conserved. */
static void test_merge(void) {
  env e;
  env_open(&e, (talus_rect){0, 0, 3, 3}, 3, 3, 4, 1.0f);
  /* gap 0.03 < 0.05·0.75 = 0.0375 */
  col two[2] = {
      {.B = 0, .s = 0.02f, .w = 0.01f, .C = 0.03f, .r = 0.001f, .D = 0.1f, .p = TALUS_TOP},
      {.B = 4, .s = 0.5f, .w = 0.2f, .r = 0.01f, .D = 0.4f, .p = 1000, .f = {1, 2, 3, 4}}};
  set_cell(e.t, 0, 0, 2, two);
  col three[3] = {{.B = 0, .C = 10, .p = TALUS_TOP},
                  {.B = 12, .s = 0.01f, .C = 12.02f, .p = 5},
                  {.B = 15, .s = 0.3f, .p = 7}};
  set_cell(e.t, 2, 1, 3, three);
  double b0[4], b1[4], fl[TALUS_FLOW_COUNT] = {0};
  totals(e.t, 0, 0, b0);
  totals(e.t, 2, 1, b1);
  run_all(&e, TALUS_STAGE_COLLAPSE, fl);
  talus_tile *t = e.t;
  CHECK(t->count[0] == 1, "merged into one column");
  CHECK_CLOSE(t->B[0], 0.02 + 3.97, 1e-5, "gap sand became bedrock, surface dropped");
  CHECK(t->s[0] == 0.5f && t->C[0] == TALUS_TOP, "upper sand and ceiling kept");
  CHECK_CLOSE(t->w[0], 0.21, 1e-6, "water of both");
  CHECK_CLOSE(t->r[0], 0.011, 1e-7, "sediment of both");
  CHECK(t->D[0] == 0.4f && t->p[0] == TALUS_TOP && t->f[talus_dcol(t, 0, 0, 3)] == 4.0f,
        "max damage, anchored, upper fluxes");
  size_t i1 = talus_idx(t, 2, 1), c1 = talus_col(t, i1, 1);
  CHECK(t->count[i1] == 2, "middle pair merged, layer 0 kept: %d", t->count[i1]);
  CHECK_CLOSE(t->B[c1], 14.99, 1e-5, "merged bedrock top");
  CHECK(t->p[c1] == 7.0f && t->C[c1] == TALUS_TOP, "merged p = max, top ceiling");
  CHECK_CLOSE(fl[TALUS_FLOW_MERGE], 0.03, 1e-7, "MERGE books the converted sand");
  CHECK(fl[TALUS_FLOW_COLLAPSE] == 0.0, "no collapse");
  double f0[TALUS_FLOW_COUNT] = {0}, f1[TALUS_FLOW_COUNT] = {0};
  f0[TALUS_FLOW_MERGE] = 0.02;
  f1[TALUS_FLOW_MERGE] = 0.01;
  check_conserved(t, 0, 0, b0, f0, "merge bottom");
  check_conserved(t, 2, 1, b1, f1, "merge middle");
  env_close(&e);
}

/* Removing a middle column moves every field of the ones above, in order,
 * and clears the vacated slot. */
static void test_compaction(void) {
  env e;
  env_open(&e, (talus_rect){0, 0, 2, 2}, 2, 2, 4, 1.0f);
  col cols[4];
  for (int k = 0; k < 4; k++) {
    float b = 10.0f * k;
    cols[k] = (col){.B = b + 2,
                    .s = 0.1f * k,
                    .w = 0.2f * k,
                    .C = b + 8,
                    .r = 0.01f * k,
                    .D = 0.05f * k,
                    .p = k == 1 ? 0.0f : 100.0f * k};
    for (int d = 0; d < 4; d++)
      cols[k].f[d] = (float)(10 * k + d);
  }
  set_cell(e.t, 1, 1, 4, cols);
  double fl[TALUS_FLOW_COUNT] = {0};
  run_all(&e, TALUS_STAGE_COLLAPSE, fl);
  talus_tile *t = e.t;
  size_t idx = talus_idx(t, 1, 1);
  CHECK(t->count[idx] == 3, "count 3: %d", t->count[idx]);
  for (int k = 2; k < 4; k++) {
    size_t ci = talus_col(t, idx, k - 1);
    int ok = t->B[ci] == cols[k].B && t->s[ci] == cols[k].s && t->w[ci] == cols[k].w &&
             t->C[ci] == (k == 3 ? TALUS_TOP : cols[k].C) && t->r[ci] == cols[k].r &&
             t->D[ci] == cols[k].D && t->p[ci] == cols[k].p;
    for (int d = 0; d < 4; d++)
      ok = ok && t->f[talus_dcol(t, idx, k - 1, d)] == cols[k].f[d];
    CHECK(ok, "column %d moved to slot %d with every field", k, k - 1);
  }
  size_t top = talus_col(t, idx, 3);
  CHECK(t->B[top] == 0 && t->C[top] == 0 && t->p[top] == 0 && t->f[talus_dcol(t, idx, 3, 0)] == 0,
        "vacated slot cleared");
  CHECK(t->C[talus_col(t, idx, 0)] == 18.0f, "layer 0 took the collapsed ceiling");
  for (int k = 1; k < 3; k++)
    CHECK(t->C[talus_col(t, idx, k)] > t->C[talus_col(t, idx, k - 1)], "ceilings ascend");
  env_close(&e);
}

int main(void) {
  test_init();
  test_formula();
  test_cap_by_neighbour();
  test_parity();
  test_weight();
  test_border();
  test_collapse();
  test_thin_and_cascade();
  test_merge();
  test_compaction();
  return check_report("test_kernel_support");
}
