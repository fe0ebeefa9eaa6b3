/*
 * test_api.c — the public domain API of include/talus.h, used as a library
 * user would (nothing but talus.h): create a domain from a heightmap with a
 * NoData hole and refuse bad ones, load a layered initial state, read fields
 * back, run with a GDAL-style progress callback that reports 0..1, and
 * cancel part way: the domain stops at a step boundary and a continued run
 * gives exactly the bytes of an uninterrupted one, with the ledger closed.
 */
#include "check.h"

#include <talus.h>

#include <stdlib.h>
#include <string.h>

#define NX   40
#define NY   32
#define CELL 2.0

/* A bumpy slope falling towards x = 0 with a NoData hole. */
static void terrain(float *h, uint8_t *mask) {
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++) {
      size_t i = (size_t)y * NX + x;
      h[i] = 0.3f * (float)x + 1.5f * sinf(0.4f * (float)y) * cosf(0.3f * (float)x);
      mask[i] = x >= 20 && x < 23 && y >= 10 && y < 13;
    }
}

/* A bridge: cells of row band y in [20, 24) get a deck column above a gap. */
static talus_status add_bridge(talus_domain *d, const float *h) {
  float cols[NX * NY], floor_ceiling[NX * NY], deck[NX * NY];
  for (size_t i = 0; i < NX * NY; i++) {
    int y = (int)(i / NX), x = (int)(i % NX);
    int bridge = y >= 20 && y < 24 && x >= 5 && x < 35;
    cols[i] = bridge ? 2.0f : 1.0f;
    floor_ceiling[i] = h[i] + 3.0f;
    deck[i] = h[i] + 6.0f;
  }
  talus_status st = talus_domain_set_field(d, TALUS_FIELD_COLUMNS, 0, cols);
  if (!st) st = talus_domain_set_field(d, TALUS_FIELD_CEILING, 0, floor_ceiling);
  if (!st) st = talus_domain_set_field(d, TALUS_FIELD_BEDROCK, 1, deck);
  return st;
}

static talus_domain *make_domain(const talus_params *p) {
  static float h[NX * NY];
  static uint8_t mask[NX * NY];
  terrain(h, mask);
  talus_domain *d = NULL;
  talus_status st = talus_domain_create(&d, NX, NY, CELL, h, mask, p);
  CHECK(st == TALUS_OK, "create: %s", talus_last_error());
  if (d) CHECK(add_bridge(d, h) == TALUS_OK, "layered state: %s", talus_last_error());
  return d;
}

/* Creation copies the heights (the surface reads back as given), keeps the
 * layered state, and refuses empty grids, bad cell sizes and NaN heights
 * outside the NoData mask. */
static void test_create_and_read(const talus_params *p) {
  float h[NX * NY], out[NX * NY];
  uint8_t mask[NX * NY];
  terrain(h, mask);
  talus_domain *d = make_domain(p);
  if (!d) return;
  CHECK(talus_domain_nx(d) == NX && talus_domain_ny(d) == NY && talus_domain_step(d) == 0,
        "size %d x %d, step %lld", talus_domain_nx(d), talus_domain_ny(d),
        (long long)talus_domain_step(d));
  talus_domain_read(d, TALUS_FIELD_BEDROCK, 0, out);
  int same = 1;
  for (size_t i = 0; i < NX * NY; i++)
    same &= mask[i] || out[i] == h[i];
  CHECK(same, "layer 0 bedrock reads back the heightmap");
  talus_domain_read(d, TALUS_FIELD_SURFACE, 0, out);
  size_t b = (size_t)21 * NX + 10;
  CHECK(out[b] == h[b] + 6.0f, "surface of a bridge cell is its deck: %g", out[b]);
  talus_domain_read(d, TALUS_FIELD_COLUMNS, 0, out);
  CHECK(out[b] == 2.0f && out[0] == 1.0f, "column counts %g, %g", out[b], out[0]);
  talus_domain_read(d, TALUS_FIELD_CEILING, 1, out);
  CHECK(isnan(out[0]), "an absent column reads as NaN");
  CHECK(talus_domain_read(d, TALUS_FIELD_BEDROCK, 99, out) == TALUS_ERR_ARGUMENT, "bad layer");
  talus_domain_free(d);

  talus_domain *bad = (talus_domain *)&bad;
  CHECK(talus_domain_create(&bad, 0, NY, CELL, h, NULL, p) == TALUS_ERR_DATA && bad == NULL,
        "0-wide grid refused");
  CHECK(talus_domain_create(&bad, NX, NY, 0.0, h, NULL, p) == TALUS_ERR_ARGUMENT, "cell size 0");
  h[5] = NAN;
  CHECK(talus_domain_create(&bad, NX, NY, CELL, h, NULL, p) == TALUS_ERR_DATA &&
            strstr(talus_last_error(), "(5, 0)"),
        "NaN height refused: %s", talus_last_error());
  mask[5] = 1;
  CHECK(talus_domain_create(&bad, NX, NY, CELL, h, mask, p) == TALUS_OK, "NaN under NoData: %s",
        talus_last_error());
  talus_domain_free(bad);
}

typedef struct progress_log {
  int calls, cancel_at, monotone;
  double last;
} progress_log;

static int on_progress(double complete, const char *message, void *user) {
  (void)message;
  progress_log *l = user;
  l->monotone &= complete > l->last && complete <= 1.0;
  l->last = complete;
  return ++l->calls != l->cancel_at;
}

/* 1 when every readable field of a and b is bitwise equal. */
static int same_fields(const talus_domain *a, const talus_domain *b) {
  static const talus_field whole[] = {TALUS_FIELD_SURFACE, TALUS_FIELD_WATER, TALUS_FIELD_SAND,
                                      TALUS_FIELD_SEDIMENT, TALUS_FIELD_COLUMNS};
  static const talus_field layered[] = {TALUS_FIELD_BEDROCK,        TALUS_FIELD_CEILING,
                                        TALUS_FIELD_LAYER_SAND,     TALUS_FIELD_LAYER_WATER,
                                        TALUS_FIELD_LAYER_SEDIMENT, TALUS_FIELD_LAYER_DAMAGE,
                                        TALUS_FIELD_LAYER_STABILITY};
  float fa[NX * NY], fb[NX * NY];
  int same = 1;
  for (size_t f = 0; f < sizeof whole / sizeof whole[0]; f++) {
    talus_domain_read(a, whole[f], 0, fa);
    talus_domain_read(b, whole[f], 0, fb);
    same &= !memcmp(fa, fb, sizeof fa);
  }
  for (size_t f = 0; f < sizeof layered / sizeof layered[0]; f++)
    for (int k = 0; k < talus_domain_layers(a); k++) {
      talus_domain_read(a, layered[f], k, fa);
      talus_domain_read(b, layered[f], k, fb);
      same &= !memcmp(fa, fb, sizeof fa); /* NaN slots compare as bytes */
    }
  return same;
}

/* Progress goes up to 1; a cancel stops at a step boundary; continuing
 * gives the uninterrupted run's bytes and its ledger closes. */
static void test_run_progress_cancel(const talus_params *p) {
  enum { STEPS = 30, CANCEL = 11 };
  talus_domain *a = make_domain(p), *b = make_domain(p);
  if (!a || !b) return;
  progress_log la = {0, -1, 1, 0.0}, lb = {0, CANCEL, 1, 0.0};
  CHECK(talus_domain_run(a, STEPS, on_progress, &la) == TALUS_OK, "run: %s", talus_last_error());
  CHECK(la.monotone && la.last == 1.0 && la.calls >= 1, "progress rose to %g in %d calls", la.last,
        la.calls);
  talus_status st = talus_domain_run(b, STEPS, on_progress, &lb);
  CHECK(st == TALUS_ERR_CANCELLED && strstr(talus_last_error(), "cancel"), "cancel: %s (%s)",
        talus_status_name(st), talus_last_error());
  int64_t stopped = talus_domain_step(b);
  CHECK(stopped > 0 && stopped < STEPS, "cancel stopped at step %lld", (long long)stopped);
  CHECK(talus_domain_run(b, STEPS - stopped, NULL, NULL) == TALUS_OK, "continue: %s",
        talus_last_error());
  CHECK(talus_domain_step(b) == STEPS, "step %lld", (long long)talus_domain_step(b));
  CHECK(same_fields(a, b), "cancelled and continued run differs from the uninterrupted one");
  talus_ledger_summary L;
  talus_domain_ledger(b, &L);
  double material = 0.0;
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    material += L.initial[m];
  double rain = 0.0;
  for (int f = 0; f < talus_flow_count(); f++)
    if (!strcmp(talus_flow_name(f, NULL, NULL), "rain")) rain = talus_domain_flow(b, f);
  CHECK(rain > 0.0, "rain fell: %g m3", rain);
  CHECK(fabs(L.total_residual) <= 1e-6 * material, "ledger residual %g of %g m3", L.total_residual,
        material);
  talus_domain_free(a);
  talus_domain_free(b);
}

int main(void) {
  talus_params *p = NULL;
  CHECK(talus_params_create(&p) == TALUS_OK, "params");
  if (!p) return check_report("test_api");
  CHECK(talus_params_set(p, "water.rain", "0.05") == TALUS_OK, "set: %s", talus_last_error());
  test_create_and_read(p);
  test_run_progress_cancel(p);
  CHECK(!strcmp(talus_status_name(TALUS_ERR_CANCELLED), "TALUS_ERR_CANCELLED"), "status name");
  talus_params_free(p);
  return check_report("test_api");
}
