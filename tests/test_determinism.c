/*
 * test_determinism — two identical runs give identical bytes, and so do 1
 * and 2 threads: every persistent field and every ledger flow, for a scene
 * with mostly one column (rivers-rain) and one that splits and collapses
 * (chasm-source).
 */
#include "check.h"
#include "scene_fixture.h"

#include <omp.h>

static talus_domain *run_scene(const char *scene, const char *preset, int n, int steps,
                               int threads) {
  omp_set_num_threads(threads);
  talus_domain *d = fixture_domain(scene, n, preset, NULL);
  if (d && talus_domain_run(d, steps, NULL, NULL)) {
    fprintf(stderr, "run: %s\n", talus_last_error());
    talus_domain_free(d);
    return NULL;
  }
  return d;
}

static void check_scene(const char *scene, const char *preset, int n, int steps) {
  talus_domain *a = run_scene(scene, preset, n, steps, 1);
  talus_domain *b = run_scene(scene, preset, n, steps, 1);
  talus_domain *c = run_scene(scene, preset, n, steps, 2);
  CHECK(a && b && c, "%s: runs completed", scene);
  if (a && b && c) {
    CHECK(fixture_same_state(a, b), "%s: two identical runs differ", scene);
    CHECK(fixture_same_state(a, c), "%s: 1 and 2 threads differ", scene);
    /* The runs must have done something, or equality proves nothing. */
    double rain = talus_domain_flow(a, TALUS_FLOW_RAIN) + talus_domain_flow(a, TALUS_FLOW_SOURCE);
    CHECK(rain > 0.0, "%s: no water entered", scene);
  }
  talus_domain_free(a);
  talus_domain_free(b);
  talus_domain_free(c);
}

int main(void) {
  check_scene("rivers-rain", "rivers-rain", 96, 150);
  check_scene("chasm-source", "chasm-source", 64, 150);
  return check_report("test_determinism");
}
