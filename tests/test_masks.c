/*
 * test_masks — the run accumulators of simulation.masks (kernels/accum.h)
 * hold what they claim, on rivers-rain (layered) and on noise under the
 * heightfield model:
 * - the map's Σ (deposition − wear) · l_c² is the change of the solid
 *   volume the mass ledger states (sand + bedrock, current − initial);
 * - per cell that keeps one column, deposition − wear is the change of its
 *   surface;
 * - flow follows the drainage: the cells a D8 flow accumulation on the
 *   final surface ranks in its top 5 % carry far more water than the
 *   median cell; wear marks the cells the run lowered, deposition those
 *   it raised (lake floors, fans);
 * - summing changes nothing else: the state equals a run without it;
 * - the normalisation of io/export/masks.h maps its stated points, and
 *   the flow mask reads alike at two resolutions of one scene.
 */
#include "check.h"
#include "io/export/masks.h"
#include "scene_fixture.h"

#include <math.h>

#define N 96 /* rivers-rain at 96² (2.67 m cells) */

/* The solid S of the cell at idx (kernels/accum.h's definition). */
static double solid(const talus_tile *t, size_t idx) {
  double S = 0.0;
  for (int k = 0; k < t->count[idx]; k++) {
    size_t j = talus_col(t, idx, k);
    S += (double)t->B[j] + (double)t->s[j];
    if (k > 0) S -= (double)t->C[talus_col(t, idx, k - 1)];
  }
  return S;
}

/* The top surface of the cell at idx. */
static double surface(const talus_tile *t, size_t idx) {
  size_t j = talus_col(t, idx, t->count[idx] - 1);
  return (double)t->B[j] + (double)t->s[j];
}

/* Accumulator a of the cell at idx. */
static double acc(const talus_tile *t, size_t idx, int a) {
  return t->acc[(size_t)a * t->plane + idx];
}

/* D8 flow accumulation (cells drained, itself included) of surface z
 * (n × n, row-major): cells in descending height pass their count to
 * their steepest lower neighbour. */
static void d8(const double *z, int n, double *out) {
  int *order = malloc(sizeof(int) * (size_t)n * n);
  for (int i = 0; i < n * n; i++)
    order[i] = i, out[i] = 1.0;
  /* insertion sort is too slow at n²; a simple shell sort by height, descending */
  for (int gap = n * n / 2; gap > 0; gap /= 2)
    for (int i = gap; i < n * n; i++)
      for (int j = i; j >= gap && z[order[j - gap]] < z[order[j]]; j -= gap) {
        int t = order[j];
        order[j] = order[j - gap], order[j - gap] = t;
      }
  for (int o = 0; o < n * n; o++) {
    int i = order[o], x = i % n, y = i / n, best = -1;
    double drop = 0.0;
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        int u = x + dx, v = y + dy;
        if ((!dx && !dy) || u < 0 || v < 0 || u >= n || v >= n) continue;
        double s = (z[i] - z[v * n + u]) / ((dx && dy) ? M_SQRT2 : 1.0);
        if (s > drop) drop = s, best = v * n + u;
      }
    if (best >= 0) out[best] += out[i];
  }
  free(order);
}

/* Median of n values (sorted in place). */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The solid-volume identity and the per-cell identity of domain d, whose
 * initial solids and surfaces are S0 and z0 and initial counts c0. */
static void check_balance(const char *what, const talus_domain *d, const double *S0,
                          const uint8_t *c0) {
  const talus_tile *t = d->tile;
  double area = (double)d->ctx.P.cell_size * d->ctx.P.cell_size, net = 0.0, gross = 0.0;
  double worst = 0.0, worst_scale = 0.0;
  int single = 0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t i = talus_idx(t, x, y);
      double dep = acc(t, i, TALUS_ACC_DEPOSITION), wear = acc(t, i, TALUS_ACC_WEAR);
      net += (dep - wear) * area, gross += (dep + wear) * area;
      if (c0[i] != 1 || t->count[i] != 1) continue;
      single++;
      double err = fabs((dep - wear) - (solid(t, i) - S0[i]));
      if (err > worst) worst = err, worst_scale = dep + wear;
    }
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double ledger = L.current[TALUS_MAT_SAND] + L.current[TALUS_MAT_BEDROCK] -
                  L.initial[TALUS_MAT_SAND] - L.initial[TALUS_MAT_BEDROCK];
  printf("%s: sum(dep - wear) = %.6g m3, ledger solid change %.6g m3, gross %.6g m3; "
         "worst cell |dep - wear - dS| %.3g m (of %.3g m) over %d single-column cells\n",
         what, net, ledger, gross, worst, worst_scale, single);
  CHECK(gross > 0.0, "%s: the run wore and deposited (%g m3)", what, gross);
  CHECK(fabs(net - ledger) <= 1e-3 * gross + 1e-6,
        "%s: sum(deposition - wear) %.6g m3 is the ledger's solid change %.6g m3", what, net,
        ledger);
  CHECK(single > 0 && worst <= 1e-5 + 1e-3 * worst_scale,
        "%s: per single-column cell deposition - wear is its solid change (worst %.3g m)", what,
        worst);
}

/* Flow follows the D8 drainage of the final surface; wear the lowered cells. */
static void check_drainage(const talus_domain *d, const double *z0) {
  const talus_tile *t = d->tile;
  int n = t->buf.w, nn = n * n;
  double *z = malloc(sizeof(double) * nn), *a = malloc(sizeof(double) * nn);
  double *flow = malloc(sizeof(double) * nn), *sorted = malloc(sizeof(double) * nn);
  for (int c = 0; c < nn; c++) {
    size_t i = talus_idx(t, c % n, c / n);
    z[c] = surface(t, i);
    flow[c] = sorted[c] = acc(t, i, TALUS_ACC_FLOW);
  }
  d8(z, n, a);
  qsort(sorted, (size_t)nn, sizeof *sorted, cmp_double);
  double median = sorted[nn / 2];
  memcpy(sorted, a, sizeof(double) * nn);
  qsort(sorted, (size_t)nn, sizeof *sorted, cmp_double);
  double a95 = sorted[nn * 95 / 100];
  double top = 0.0;
  int ntop = 0, above = 0;
  for (int c = 0; c < nn; c++)
    if (a[c] > a95) ntop++, top += flow[c], above += flow[c] > median;
  top /= ntop > 0 ? ntop : 1;
  printf("flow: median cell %.4g m3; the %d cells of D8 accumulation > %.0f: mean %.4g m3 "
         "(%.1fx), %d above the median\n",
         median, ntop, a95, top, top / median, above);
  CHECK(top >= 5.0 * median, "flow: D8's top 5%% cells carry >= 5x the median (%.1fx)",
        top / median);
  CHECK(above >= 0.9 * ntop, "flow: >= 90%% of D8's top 5%% cells flow above the median (%d/%d)",
        above, ntop);
  /* wear marks the lowered cells, deposition the raised ones (lake
   * floors, fans): split by the change of the surface beyond 0.25 m */
  double wl = 0.0, wr = 0.0, dl = 0.0, dr = 0.0;
  int nl = 0, nr = 0;
  for (int c = 0; c < nn; c++) {
    size_t i = talus_idx(t, c % n, c / n);
    double dz = z[c] - z0[c], w = acc(t, i, TALUS_ACC_WEAR), dp = acc(t, i, TALUS_ACC_DEPOSITION);
    if (dz < -0.25) nl++, wl += w, dl += dp;
    if (dz > 0.25) nr++, wr += w, dr += dp;
  }
  wl /= nl ? nl : 1, dl /= nl ? nl : 1, wr /= nr ? nr : 1, dr /= nr ? nr : 1;
  printf("%d cells lowered > 0.25 m: mean wear %.3g m, deposition %.3g m; %d raised: %.3g m, "
         "%.3g m\n",
         nl, wl, dl, nr, wr, dr);
  CHECK(nl > 0 && nr > 0 && wl >= 2.0 * wr,
        "wear: the lowered cells wore >= 2x the raised ones (%.3g, %.3g m)", wl, wr);
  CHECK(nl > 0 && nr > 0 && dr >= 4.0 * dl,
        "deposition: the raised cells gained >= 4x the lowered ones (%.3g, %.3g m)", dr, dl);
  free(z), free(a), free(flow), free(sorted);
}

/* Runs domain d `steps` steps, checking its accumulators. */
static void check_run(const char *what, talus_domain *d, int steps, int drainage) {
  const talus_tile *t = d->tile;
  CHECK(t->acc != NULL, "%s: simulation.masks gives the tile its accumulators", what);
  if (!t->acc) return;
  double *S0 = malloc(sizeof(double) * t->plane), *z0 = malloc(sizeof(double) * t->plane);
  uint8_t *c0 = malloc(t->plane);
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t i = talus_idx(t, x, y);
      S0[i] = solid(t, i), c0[i] = t->count[i];
      z0[y * t->buf.w + x] = surface(t, i);
    }
  CHECK(talus_domain_run(d, steps, NULL, NULL) == TALUS_OK, "%s: run: %s", what,
        talus_last_error());
  check_balance(what, d, S0, c0);
  if (drainage) check_drainage(d, z0);
  free(S0), free(z0), free(c0);
}

/* The p-quantile of the normalised flow mask of a domain. */
static double flow_quantile(const talus_domain *d, double p) {
  const talus_tile *t = d->tile;
  int n = t->buf.w * t->buf.h;
  double *v = malloc(sizeof(double) * n), cell = d->ctx.P.cell_size;
  for (int c = 0; c < n; c++)
    v[c] =
        talus_mask_normalise(TALUS_MASK_FLOW, acc(t, talus_idx(t, c % t->buf.w, c / t->buf.w), 0),
                             talus_mask_default_scale(TALUS_MASK_FLOW), cell);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double q = v[(int)(p * (n - 1))];
  free(v);
  return q;
}

/* The flow mask reads the same at two resolutions of one scene: it is
 * discharge per metre of width, so the median and the 90th percentile of
 * rivers-rain at 48² and 96² (5.3 and 2.7 m cells, 600 steps) agree. */
static void check_resolutions(void) {
  static const char *const masks[] = {"simulation.masks=true", NULL};
  talus_domain *a = fixture_domain("rivers-rain", 48, "rivers-rain", masks);
  talus_domain *b = fixture_domain("rivers-rain", 96, "rivers-rain", masks);
  CHECK(a && b && !talus_domain_run(a, 600, NULL, NULL) && !talus_domain_run(b, 600, NULL, NULL),
        "rivers-rain at 48² and 96²");
  for (int i = 0; a && b && i < 2; i++) {
    double p = i ? 0.9 : 0.5, qa = flow_quantile(a, p), qb = flow_quantile(b, p);
    printf("flow mask at %.0f %%: %.3f at 48², %.3f at 96²\n", 100 * p, qa, qb);
    CHECK(qa > 0.1 && fabs(qa - qb) <= 0.08, "flow mask at %.0f %%: %.3f at 48² vs %.3f at 96²",
          100 * p, qa, qb);
  }
  talus_domain_free(a);
  talus_domain_free(b);
}

/* The normalisation's stated points (masks.h). */
static void check_normalise(void) {
  double cell = 2.0, s = talus_mask_default_scale(TALUS_MASK_FLOW);
  CHECK(talus_mask_normalise(TALUS_MASK_FLOW, 0.0, s, cell) == 0.0, "flow 0 -> 0");
  CHECK(fabs(talus_mask_normalise(TALUS_MASK_FLOW, 999.0 * s * cell, s, cell) - 1.0) < 1e-12,
        "flow at 999 x scale per metre -> 1");
  CHECK(fabs(talus_mask_normalise(TALUS_MASK_FLOW, 9.0 * s * cell, s, cell) - 1.0 / 3.0) < 1e-12,
        "a decade of flow is a third");
  CHECK(talus_mask_normalise(TALUS_MASK_FLOW, 9.0 * s * 2.0, s, 2.0) ==
            talus_mask_normalise(TALUS_MASK_FLOW, 9.0 * s * 4.0, s, 4.0),
        "flow per metre of width: twice the cell carries twice the water for the same value");
  CHECK(talus_mask_normalise(TALUS_MASK_WEAR, 0.5, 1.0, cell) == 0.5 &&
            talus_mask_normalise(TALUS_MASK_WEAR, 3.0, 1.0, cell) == 1.0 &&
            talus_mask_normalise(TALUS_MASK_WEAR, NAN, 1.0, cell) == 0.0,
        "wear: linear to its scale, clamped, NaN 0");
}

int main(void) {
  check_normalise();
  check_resolutions();
  /* the pipes' scene: rivers-rain's droplets rework its plains, so there
   * the raised cells wear nearly as much as the lowered (1.18 against
   * 1.71 m): the split below reads the pipes' wear and deposition */
  static const char *const masks[] = {"simulation.masks=true", "particles.enable=false", NULL};
  static const char *const pipes[] = {"particles.enable=false", NULL};
  talus_domain *d = fixture_domain("rivers-rain", N, "rivers-rain", masks);
  talus_domain *plain = fixture_domain("rivers-rain", N, "rivers-rain", pipes);
  CHECK(d && plain, "domains built");
  if (!d || !plain) return check_report("test_masks");
  CHECK(!plain->tile->acc, "no accumulators without simulation.masks");
  check_run("rivers-rain", d, 1500, 1);
  CHECK(talus_domain_run(plain, 1500, NULL, NULL) == TALUS_OK, "plain run");
  CHECK(fixture_same_state(d, plain), "summing changes no field of the state");
  talus_domain_free(d);
  talus_domain_free(plain);

  static const char *const hf[] = {"simulation.model=heightfield", "simulation.masks=true",
                                   "thermal.enable=true", NULL};
  talus_domain *h = fixture_domain("noise", 64, NULL, hf);
  CHECK(h != NULL, "heightfield domain built");
  if (h) check_run("heightfield", h, 300, 0);
  talus_domain_free(h);
  return check_report("test_masks");
}
