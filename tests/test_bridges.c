/*
 * test_bridges — the paper's fig. 4: in the Bridges scene the arch-shaped
 * bridge (thin at its pillars, y∈(150,160)) loses bedrock to collapse before
 * the bridge that is thick at its pillars (y∈(50,60)), with the same order
 * at 256² and 512² (behaviour consistent with resolution). With the
 * reference's support defaults, where every span's middle is out of reach,
 * the ranking shows in what survives: thick ≥ uniform ≥ arch.
 */
#include "check.h"
#include "scene_fixture.h"

enum { THICK = 0, UNIFORM = 1, ARCH = 2 };
static const double band_lo[3] = {50.0, 100.0, 150.0};

/* Two-column cells whose centre lies in bridge b's band. */
static long bridge_cells(const float *cols, int n, int b) {
  double l = 256.0 / n;
  long c = 0;
  for (int y = 0; y < n; y++) {
    double yc = 256.0 - (y + 0.5) * l; /* rows run north to south */
    if (yc <= band_lo[b] || yc >= band_lo[b] + 10.0) continue;
    for (int x = 0; x < n; x++)
      c += cols[(size_t)y * n + x] >= 2.0f;
  }
  return c;
}

/* Runs `steps` steps one at a time; first_loss[b] = first step after which
 * bridge b has fewer two-column cells (-1 = never); left[b] = cells left. */
static void run_bridges(int n, const char *const *sets, int steps, long first_loss[3],
                        long left[3]) {
  for (int b = 0; b < 3; b++)
    first_loss[b] = -1, left[b] = 0;
  talus_domain *d = fixture_domain("bridges", n, "bridges", sets);
  CHECK(d != NULL, "bridges %d built", n);
  if (!d) return;
  float *cols = malloc((size_t)n * n * sizeof *cols);
  long start[3];
  talus_domain_read(d, TALUS_FIELD_COLUMNS, 0, cols);
  for (int b = 0; b < 3; b++)
    start[b] = bridge_cells(cols, n, b), first_loss[b] = -1;
  CHECK(start[ARCH] > 0 && start[THICK] > 0, "bridges present at %d", n);
  for (int s = 1; s <= steps; s++) {
    if (talus_domain_run(d, 1, NULL, NULL)) break;
    talus_domain_read(d, TALUS_FIELD_COLUMNS, 0, cols);
    for (int b = 0; b < 3; b++) {
      left[b] = bridge_cells(cols, n, b);
      if (first_loss[b] < 0 && left[b] < start[b]) first_loss[b] = s;
    }
  }
  printf("n=%d: first collapse step thick %ld, uniform %ld, arch %ld; cells left %ld %ld %ld "
         "of %ld %ld %ld; collapse flow %.1f m3\n",
         n, first_loss[THICK], first_loss[UNIFORM], first_loss[ARCH], left[THICK], left[UNIFORM],
         left[ARCH], start[THICK], start[UNIFORM], start[ARCH],
         talus_domain_flow(d, TALUS_FLOW_COLLAPSE));
  free(cols);
  talus_domain_free(d);
}

int main(void) {
  static const char *const reference[] = {"support.bedrock_support=60000",
                                          "support.max_propagation_distance=100", NULL};
  for (int n = 256; n <= 512; n *= 2) {
    long first[3], left[3];
    /* Preset: three support cycles. */
    int cycle = n == 256 ? 12 : 24;
    run_bridges(n, NULL, 3 * cycle, first, left);
    CHECK(first[ARCH] > 0, "n=%d: the arch bridge collapsed", n);
    CHECK(first[THICK] < 0 || first[THICK] > first[ARCH],
          "n=%d: arch (%ld) collapses before thick-at-pillars (%ld)", n, first[ARCH], first[THICK]);
    /* Reference support: the survivors rank thick ≥ uniform ≥ arch. */
    run_bridges(n, reference, n == 256 ? 25 : 45, first, left);
    CHECK(left[THICK] >= left[UNIFORM] && left[UNIFORM] >= left[ARCH] && left[THICK] > left[ARCH],
          "n=%d: survivors thick %ld, uniform %ld, arch %ld", n, left[THICK], left[UNIFORM],
          left[ARCH]);
  }
  return check_report("test_bridges");
}
