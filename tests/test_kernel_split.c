/*
 * test_kernel_split.c — the split kernel: the geometry of a cut (lower part
 * bedrock to b* = max(σy − split, σx) plus sand to σy, upper part the old
 * column above σy), exact conservation of bedrock + sand, water, sediment,
 * the SPLIT ledger flow, every field moving with its column, several splits
 * of one cell in one step, and the column limit.
 */
#include "check.h"
#include "kernels/cpu/cpu.h"

#include <math.h>
#include <string.h>

#define BASE (-100.0) /* where bedrock of column 0 is measured from */

static talus_tile *make_tile(void) {
  talus_tile *t = NULL;
  if (talus_tile_create(&t, (talus_rect){0, 0, 1, 1}, 8, 0) != TALUS_OK) return NULL;
  return t;
}

static talus_kctx make_ctx(void) {
  talus_kctx c;
  memset(&c, 0, sizeof c);
  talus_kparams_defaults(&c.P);
  talus_kparams_derive(&c.P);
  c.nx = c.ny = 1;
  return c;
}

/* Column k of the single cell: heights, damage and stored σ. */
static void set_col(talus_tile *t, int k, float B, float s, float w, float C, float D, float lo,
                    float hi) {
  size_t j = talus_col(t, 0, k);
  t->B[j] = B;
  t->s[j] = s;
  t->w[j] = w;
  t->C[j] = C;
  t->D[j] = D;
  t->sig_lo[j] = lo;
  t->sig_hi[j] = hi;
}

/* Distinct tags in every other field of column k, so a move can be traced. */
static void tag_col(talus_tile *t, int k, float tag) {
  size_t j = talus_col(t, 0, k);
  t->r[j] = tag + 0.1f;
  t->p[j] = tag + 0.2f;
  t->kr[j] = tag + 0.3f;
  t->sina[j] = tag + 0.4f;
  t->vx[j] = tag + 0.5f;
  t->vy[j] = tag + 0.6f;
  for (int d = 0; d < 4; d++) {
    t->f[talus_dcol(t, 0, k, d)] = tag + 1.0f + (float)d;
    t->slip[talus_dcol(t, 0, k, d)] = tag + 2.0f + (float)d;
    t->pipe[talus_dcol(t, 0, k, d)] = (int8_t)(tag + d);
  }
}

/* True when column k carries the tags of tag_col(·, ·, tag). */
static int has_tag(const talus_tile *t, int k, float tag) {
  size_t j = talus_col(t, 0, k);
  int ok = t->r[j] == tag + 0.1f && t->p[j] == tag + 0.2f && t->kr[j] == tag + 0.3f &&
           t->sina[j] == tag + 0.4f && t->vx[j] == tag + 0.5f && t->vy[j] == tag + 0.6f;
  for (int d = 0; d < 4; d++)
    ok = ok && t->f[talus_dcol(t, 0, k, d)] == tag + 1.0f + (float)d &&
         t->slip[talus_dcol(t, 0, k, d)] == tag + 2.0f + (float)d &&
         t->pipe[talus_dcol(t, 0, k, d)] == (int8_t)(tag + d);
  return ok;
}

/* Totals of the cell's materials (bedrock from BASE up). */
typedef struct totals {
  double bedrock, sand, water, sediment;
} totals;

static totals totals_of(const talus_tile *t) {
  totals m = {0, 0, 0, 0};
  for (int k = 0; k < t->count[0]; k++) {
    size_t j = talus_col(t, 0, k);
    double F = k == 0 ? BASE : (double)t->C[talus_col(t, 0, k - 1)];
    m.bedrock += (double)t->B[j] - F;
    m.sand += t->s[j];
    m.water += t->w[j];
    m.sediment += t->r[j];
  }
  return m;
}

static double run_split(talus_tile *t, const talus_kctx *c) {
  double flows[TALUS_FLOW_COUNT] = {0};
  CHECK(talus_cpu_stage(t, c, TALUS_STAGE_SPLIT, (talus_rect){0, 0, 1, 1}, flows) == TALUS_OK,
        "split stage failed");
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    if (f != TALUS_FLOW_SPLIT) CHECK(flows[f] == 0.0, "split books only SPLIT (flow %d)", f);
  return flows[TALUS_FLOW_SPLIT];
}

/* Conservation across a split: bedrock lost = sand gained = SPLIT flow;
 * water and sediment unchanged. */
static void check_conserved(totals a, totals b, double split, double want_split) {
  CHECK_CLOSE(split, want_split, 1e-6, "SPLIT flow");
  CHECK_CLOSE(a.bedrock - b.bedrock, split, 1e-5, "bedrock lost = SPLIT flow");
  CHECK_CLOSE(b.sand - a.sand, split, 1e-6, "sand gained = SPLIT flow");
  CHECK_CLOSE(b.water, a.water, 0, "water conserved");
  CHECK_CLOSE(b.sediment, a.sediment, 0, "sediment conserved");
}

/* A single cut: the lower and upper parts of the reference, and what each
 * keeps or clears. σ = (3, 7): b* = 7 − 0.75 = 6.25. */
static void test_geometry(void) {
  talus_tile *t = make_tile();
  talus_kctx c = make_ctx();
  set_col(t, 0, 10.0f, 0.5f, 2.0f, TALUS_TOP, 0.8f, 3.0f, 7.0f);
  tag_col(t, 0, 10.0f);
  totals a = totals_of(t);
  double split = run_split(t, &c);
  CHECK(t->count[0] == 2, "one split: 2 columns (%d)", t->count[0]);
  size_t lo = talus_col(t, 0, 0), up = talus_col(t, 0, 1);
  CHECK(t->B[lo] == 6.25f && t->s[lo] == 0.75f && t->w[lo] == 0.0f && t->C[lo] == 7.0f,
        "lower: B %g s %g w %g C %g vs 6.25 0.75 0 7", t->B[lo], t->s[lo], t->w[lo], t->C[lo]);
  CHECK(t->r[lo] == 0.0f && t->vx[lo] == 0.0f && t->vy[lo] == 0.0f, "lower: no sediment, still");
  CHECK_CLOSE(t->D[lo], 0.05, 1e-6, "lower keeps D - split");
  CHECK(t->p[lo] == 10.2f && t->sina[lo] == 10.4f, "lower inherits stability and tilt");
  for (int d = 0; d < 4; d++)
    CHECK(t->f[talus_dcol(t, 0, 0, d)] == 0.0f, "lower: flux 0");
  CHECK(t->B[up] == 10.0f && t->s[up] == 0.5f && t->w[up] == 2.0f && t->C[up] == TALUS_TOP,
        "upper keeps B, s, w, C");
  CHECK(t->D[up] == 0.0f, "upper damage reset");
  CHECK(has_tag(t, 1, 10.0f), "upper carries every other field of the old column");
  check_conserved(a, totals_of(t), split, 0.75);
  talus_tile_free(t);
}

/* A thin overlap: b* is bounded below by σx. */
static void test_thin_overlap(void) {
  talus_tile *t = make_tile();
  talus_kctx c = make_ctx();
  set_col(t, 0, 10.0f, 0.0f, 1.0f, TALUS_TOP, 0.75f, 6.75f, 7.0f);
  totals a = totals_of(t);
  double split = run_split(t, &c);
  size_t lo = talus_col(t, 0, 0);
  CHECK(t->count[0] == 2 && t->B[lo] == 6.75f && t->s[lo] == 0.25f, "b* = sigma_x = 6.75");
  check_conserved(a, totals_of(t), split, 0.25);
  talus_tile_free(t);
}

/* Below the threshold, or with the cell full (tile layers or P.nz), nothing
 * changes. */
static void test_no_split(void) {
  talus_tile *t = make_tile();
  talus_kctx c = make_ctx();
  set_col(t, 0, 10.0f, 0.0f, 1.0f, TALUS_TOP, 0.74f, 3.0f, 7.0f);
  CHECK(run_split(t, &c) == 0.0 && t->count[0] == 1 && t->B[0] == 10.0f, "D < split: no cut");

  t->count[0] = 8;
  for (int k = 0; k < 8; k++)
    set_col(t, k, 10.0f * k + 5.0f, 0.0f, 0.0f, k == 7 ? TALUS_TOP : 10.0f * k + 8.0f, 1.0f,
            10.0f * k + 5.5f, 10.0f * k + 6.0f);
  CHECK(run_split(t, &c) == 0.0 && t->count[0] == 8, "count == nz: no cut");
  CHECK(t->B[talus_col(t, 0, 7)] == 75.0f && t->D[talus_col(t, 0, 7)] == 1.0f, "top untouched");

  t->count[0] = 2;
  set_col(t, 1, 15.0f, 0.0f, 0.0f, TALUS_TOP, 1.0f, 12.0f, 14.0f);
  c.P.nz = 2;
  CHECK(run_split(t, &c) == 0.0 && t->count[0] == 2, "count == P.nz: no cut");
  talus_tile_free(t);
}

/* Two damaged columns split in the same step: four columns in order, each
 * cut at its own σ, every field moved with its column. */
static void test_two_splits(void) {
  talus_tile *t = make_tile();
  talus_kctx c = make_ctx();
  t->count[0] = 3;
  set_col(t, 0, 5.0f, 0.25f, 0.5f, 8.0f, 1.0f, 1.0f, 4.0f);
  set_col(t, 1, 20.0f, 0.5f, 1.0f, 30.0f, 0.9f, 12.0f, 15.0f);
  set_col(t, 2, 40.0f, 0.125f, 3.0f, TALUS_TOP, 0.0f, 30.0f, 40.0f);
  tag_col(t, 0, 10.0f);
  tag_col(t, 1, 20.0f);
  tag_col(t, 2, 40.0f);
  totals a = totals_of(t);
  double split = run_split(t, &c);
  CHECK(t->count[0] == 5, "two splits: 5 columns (%d)", t->count[0]);
  const float B[5] = {3.25f, 5.0f, 14.25f, 20.0f, 40.0f};
  const float C[5] = {4.0f, 8.0f, 15.0f, 30.0f, TALUS_TOP};
  for (int k = 0; k < 5; k++) {
    size_t j = talus_col(t, 0, k);
    CHECK(t->B[j] == B[k] && t->C[j] == C[k], "column %d: B %g C %g vs %g %g", k, t->B[j], t->C[j],
          B[k], C[k]);
    if (k > 0)
      CHECK(t->B[j] >= t->C[talus_col(t, 0, k - 1)], "column %d above column %d", k, k - 1);
  }
  CHECK(has_tag(t, 1, 10.0f) && has_tag(t, 3, 20.0f) && has_tag(t, 4, 40.0f),
        "upper parts and the shifted top column carry their fields");
  size_t top = talus_col(t, 0, 4);
  CHECK(t->sig_lo[top] == 30.0f && t->sig_hi[top] == 40.0f, "sigma moved with the top column");
  CHECK(t->w[top] == 3.0f && t->s[top] == 0.125f, "top column's water and sand moved");
  check_conserved(a, totals_of(t), split, 1.5);
  talus_tile_free(t);
}

/* One slot left and two damaged columns: the top column is cut (never
 * skipped), the lower one waits. */
static void test_top_first(void) {
  talus_tile *t = make_tile();
  talus_kctx c = make_ctx();
  c.P.nz = 3;
  t->count[0] = 2;
  set_col(t, 0, 5.0f, 0.0f, 0.0f, 8.0f, 1.0f, 1.0f, 4.0f);
  set_col(t, 1, 20.0f, 0.0f, 1.0f, TALUS_TOP, 1.0f, 12.0f, 15.0f);
  totals a = totals_of(t);
  double split = run_split(t, &c);
  CHECK(t->count[0] == 3, "one slot: 3 columns (%d)", t->count[0]);
  CHECK(t->B[0] == 5.0f && t->C[0] == 8.0f && t->D[0] == 1.0f, "lower column untouched");
  size_t j1 = talus_col(t, 0, 1), j2 = talus_col(t, 0, 2);
  CHECK(t->B[j1] == 14.25f && t->C[j1] == 15.0f && t->B[j2] == 20.0f && t->C[j2] == TALUS_TOP,
        "top column cut at its own sigma");
  check_conserved(a, totals_of(t), split, 0.75);
  talus_tile_free(t);
}

int main(void) {
  test_geometry();
  test_thin_overlap();
  test_no_split();
  test_two_splits();
  test_top_first();
  return check_report("test_kernel_split");
}
