/*
 * test_rivers_ledger — over 2000 steps of rivers-rain at 256² the mass
 * ledger's unexplained residual stays ≤ 1e-5 of the total material volume
 * and ≤ 1e-3 of the water added. Every clamp is a named flow, so a
 * residual means material changed without being booked.
 */
#include "check.h"
#include "scene_fixture.h"

int main(void) {
  talus_domain *d = fixture_domain("rivers-rain", 256, "rivers-rain", NULL);
  CHECK(d != NULL, "domain built");
  if (!d) return check_report("test_rivers_ledger");
  talus_status st = talus_domain_run(d, 2000, NULL, NULL);
  CHECK(st == TALUS_OK, "run: %s", talus_last_error());
  double material = fixture_check_ledger(d, "rivers-rain");
  for (int f = 0; f < talus_flow_count(); f++)
    printf("  %-24s %.6g m3\n", talus_flow_name(f, NULL, NULL), talus_domain_flow(d, f));
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    CHECK(fabs(L.residual[m]) <= 1e-5 * material, "material %d residual %.3g", m, L.residual[m]);
  talus_domain_free(d);
  return check_report("test_rivers_ledger");
}
