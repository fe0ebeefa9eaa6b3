/*
 * test_scenes.c — the scene builder: every scene at two resolutions keeps
 * the layered-stack invariants; the geometry of each paper scene (bridge
 * thickness profiles, chasm levels, arches blocks, cave tunnel) matches its
 * definition; fBm is deterministic, bounded, continuous and seed-dependent;
 * the noise scene is one landscape whatever its size; scenes are north-up
 * (row 0 is the scene's north, the geotransform gives its metres).
 */
#include "check.h"
#include "app/scenes.h"

#include <stdlib.h>
#include <string.h>

/* Column k of the cell holding point (X, Y) metres. */
typedef struct col {
  int count;
  float B, s, w, C, floor_z;
} col;

/* The paper's scenes: y of the north edge, where row 0 starts. */
#define NORTH 256.0

/* Y of the centre of row y (rows run north to south) of a paper scene. */
static double row_y(int y, double l) {
  return NORTH - (y + 0.5) * l;
}

/* Reads column k of the cell containing metre point (X, Y) of a paper
 * scene: Y grows northwards, the row index southwards. */
static col at(const talus_tile *t, double l, double X, double Y, int k) {
  size_t idx = talus_idx(t, (int)(X / l), (int)((NORTH - Y) / l));
  size_t ci = talus_col(t, idx, k);
  col c = {t->count[idx], t->B[ci], t->s[ci], t->w[ci], t->C[ci], talus_floor(t, idx, k)};
  return c;
}

/* Counts the layered-stack invariants the cell at idx breaks. */
static int cell_faults(const talus_tile *t, size_t idx) {
  int cnt = t->count[idx], bad = 0;
  if (cnt < 1 || cnt > t->nz || t->mask[idx]) return 1;
  for (int k = 0; k < cnt; k++) {
    size_t ci = talus_col(t, idx, k);
    float B = t->B[ci], s = t->s[ci], w = t->w[ci], C = t->C[ci];
    bad += !isfinite(B) || !isfinite(s) || !isfinite(w) || s < 0 || w < 0;
    bad += k == cnt - 1 ? C != TALUS_TOP : !(isfinite(C) && B + s + w <= C);
    if (k > 0) bad += !(B > t->C[talus_col(t, idx, k - 1)]); /* material above the floor */
  }
  return bad;
}

/* Checks the invariants of every cell; returns the number of bad cells. */
static int check_invariants(const talus_tile *t, int n, const char *name) {
  int bad = 0;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      if (cell_faults(t, talus_idx(t, x, y)) && ++bad <= 3)
        fprintf(stderr, "%s: cell (%d,%d) breaks an invariant\n", name, x, y);
  return bad;
}

/* Builds a scene, checking status and cell size. */
static talus_tile *build(const char *name, int n, int nz, uint32_t seed, double *l) {
  talus_tile *t = NULL;
  talus_status st = talus_scene_build(name, n, nz, seed, &t, l);
  CHECK(st == TALUS_OK && t, "%s n=%d nz=%d: %s", name, n, nz, talus_last_error());
  return t;
}

/* True when two tiles hold the same B, s, C and counts over n × n cells. */
static int same_terrain(const talus_tile *a, const talus_tile *b, int n) {
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t ia = talus_idx(a, x, y), ib = talus_idx(b, x, y);
      if (a->count[ia] != b->count[ib]) return 0;
      for (int k = 0; k < a->count[ia]; k++) {
        size_t ca = talus_col(a, ia, k), cb = talus_col(b, ib, k);
        if (a->B[ca] != b->B[cb] || a->s[ca] != b->s[cb] || a->C[ca] != b->C[cb]) return 0;
      }
    }
  return 1;
}

static void test_names_and_errors(void) {
  static const char *want[] = {"bridges",     "chasm-rain",    "chasm-source", "arches",    "cave",
                               "rivers-rain", "rivers-source", "noise",        "gully-arch"};
  CHECK(talus_scene_count() == 9, "count %d", talus_scene_count());
  for (int i = 0; i < 9; i++)
    CHECK(talus_scene_name(i) && !strcmp(talus_scene_name(i), want[i]), "name %d", i);
  CHECK(!talus_scene_name(-1) && !talus_scene_name(9), "out-of-range names");
  talus_tile *t = NULL;
  CHECK(talus_scene_build("bridges", 64, 1, 0, &t, NULL) == TALUS_ERR_RANGE && !t, "bridges nz1");
  CHECK(talus_scene_build("cave", 64, 1, 0, &t, NULL) == TALUS_ERR_RANGE && !t, "cave nz1");
  CHECK(talus_scene_build("arches", 64, TALUS_NZ_MAX + 1, 0, &t, NULL) == TALUS_ERR_RANGE,
        "nz too big");
  CHECK(talus_scene_build("arches", 0, 2, 0, &t, NULL) == TALUS_ERR_RANGE, "n = 0");
  CHECK(talus_scene_build("volcano", 64, 2, 0, &t, NULL) == TALUS_ERR_ARGUMENT && !t, "unknown");
  CHECK(strstr(talus_last_error(), "volcano") != NULL, "message names it: %s", talus_last_error());
  CHECK(talus_scene_min_layers("cave") == 2 && talus_scene_min_layers("noise") == 1 &&
            talus_scene_min_layers("x") == 0,
        "min layers");
  double l = 0;
  t = build("chasm-rain", 64, 1, 0, &l);
  CHECK(t && t->count[0] == 1, "single-column scenes build with nz = 1");
  talus_tile_free(t);
}

/* Every scene at n = 64 and 128: cell size and invariants. */
static void test_all_invariants(void) {
  for (int i = 0; i < talus_scene_count(); i++) {
    const char *name = talus_scene_name(i);
    for (int n = 64; n <= 128; n *= 2) {
      double l = -1;
      talus_tile *t = build(name, n, 4, 7, &l);
      if (!t) continue;
      double want = strcmp(name, "noise") ? 256.0 / n : 1.0;
      CHECK_CLOSE(l, want, 0, name);
      CHECK(t->buf.x0 == 0 && t->buf.y0 == 0 && t->buf.w == n && t->buf.h == n && t->nz == 4,
            "%s tile rect", name);
      int bad = check_invariants(t, n, name);
      CHECK(bad == 0, "%s n=%d: %d invariant failures", name, n, bad);
      talus_tile_free(t);
    }
  }
}

/* Thickness of a bridge deck (upper column) at metre point (X, Y). */
static float deck(const talus_tile *t, double l, double X, double Y) {
  col c = at(t, l, X, Y, 1);
  return c.count == 2 ? c.B - c.floor_z : -1.0f;
}

static void test_bridges(int n) {
  double l;
  talus_tile *t = build("bridges", n, 2, 0, &l);
  if (!t) return;
  /* arch bridge y∈(150,160): thick in the middle, thin at its pillars */
  CHECK(at(t, l, 128, 155, 0).count == 2, "arch bridge two columns");
  CHECK(fabs(deck(t, l, 128, 155) - 10.0) < 0.1, "arch middle %g", deck(t, l, 128, 155));
  CHECK(fabs(deck(t, l, 22, 155) - 2.0) < 1.0, "arch near pillar %g", deck(t, l, 22, 155));
  CHECK(fabs(deck(t, l, 234, 155) - 2.0) < 1.0, "arch near east pillar %g", deck(t, l, 234, 155));
  /* y∈(50,60): the reverse */
  CHECK(fabs(deck(t, l, 128, 55) - 2.0) < 0.1, "thick-end middle %g", deck(t, l, 128, 55));
  CHECK(deck(t, l, 22, 55) > 6.0, "thick-end near pillar %g", deck(t, l, 22, 55));
  /* monotone profiles along the west half */
  int mono_arch = 1, mono_thick = 1;
  for (double X = 20 + l; X + l < 128; X += l) {
    mono_arch &= deck(t, l, X + l, 155) >= deck(t, l, X, 155);
    mono_thick &= deck(t, l, X + l, 55) <= deck(t, l, X, 55);
  }
  CHECK(mono_arch, "arch deck thickens towards the middle");
  CHECK(mono_thick, "thick-end deck thins towards the middle");
  /* y∈(100,110): 10 m everywhere along the span, gap floor −30 to 10 */
  int flat = 1;
  for (double X = 21; X < 236; X += l) {
    col lo = at(t, l, X, 105, 0);
    flat &= lo.count == 2 && lo.B == -30.0f && lo.C == 10.0f && deck(t, l, X, 105) == 10.0f;
  }
  CHECK(flat, "flat bridge 10 m thick over the whole span");
  /* pillars reach each bridge's top; no pillar between bridges */
  CHECK(at(t, l, 15, 55, 0).count == 1 && at(t, l, 15, 55, 0).B == 30.0f, "pillar 1");
  CHECK(at(t, l, 241, 105, 0).B == 20.0f, "pillar 2");
  CHECK(at(t, l, 15, 155, 0).B == 10.0f, "pillar 3");
  CHECK(at(t, l, 15, 80, 0).B == -30.0f, "no pillar between bridges");
  CHECK(at(t, l, 128, 80, 0).count == 1 && at(t, l, 128, 80, 0).B == -30.0f, "base");
  CHECK(at(t, l, 128, 155, 0).s == 0.0f && at(t, l, 128, 155, 1).w == 0.0f, "no sand/water");
  talus_tile_free(t);
}

static void test_chasm(int n) {
  double l;
  talus_tile *a = build("chasm-rain", n, 2, 0, &l), *b = build("chasm-source", n, 2, 5, &l);
  if (!a || !b) return;
  CHECK(same_terrain(a, b, n), "chasm-rain and chasm-source share a terrain");
  int ok = 1;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      double X = (x + 0.5) * l, Y = row_y(y, l);
      float B = a->B[talus_idx(a, x, y)];
      int inside = X > 64 && X < 240 && Y > 120 && Y < 136;
      ok &= a->count[talus_idx(a, x, y)] == 1 && B == (inside ? 25.0f : X > 64 ? 50.0f : 0.0f);
    }
  CHECK(ok, "chasm levels 0 / 50 / 25");
  CHECK(at(a, l, 100, 128, 0).B == 25.0f && at(a, l, 250, 128, 0).B == 50.0f, "chasm ends");
  talus_tile_free(a);
  talus_tile_free(b);
}

static void test_arches(int n) {
  double l;
  talus_tile *t = build("arches", n, 1, 0, &l);
  if (!t) return;
  CHECK(at(t, l, 128, 128, 0).B == 50.0f, "centre tower");
  CHECK(at(t, l, 80, 48, 0).B == 40.0f && at(t, l, 230, 208, 0).B == 40.0f, "40 m walls");
  CHECK(at(t, l, 80, 128, 0).B == 30.0f && at(t, l, 128, 30, 0).B == 30.0f, "30 m walls");
  CHECK(at(t, l, 128, 48, 0).B == 40.0f, "crossing takes the higher block");
  CHECK(at(t, l, 30, 30, 0).B == 0.0f && at(t, l, 30, 48, 0).B == 0.0f, "plain");
  CHECK(at(t, l, 128, 248, 0).B == 0.0f && at(t, l, 248, 128, 0).B == 0.0f, "beyond the walls");
  /* The middle wall's faces wander (scenes.c): its thickness along x, away
   * from the tower, spans several metres around the paper's 16. */
  double thin = 1e9, thick = 0.0;
  for (double X = 66.0; X < 238.0; X += l) {
    if (X > 112.0 && X < 144.0) continue;
    double m = 0.0;
    for (double Y = 100.0; Y < 156.0; Y += l)
      m += at(t, l, X, Y, 0).B == 30.0f ? l : 0.0;
    thin = fmin(thin, m);
    thick = fmax(thick, m);
  }
  CHECK(thin <= 13.0 && thick >= 18.0 && thin >= 6.0,
        "the middle wall %.1f to %.1f m thick at n=%d (want <= 13 and >= 18, no gap)", thin, thick,
        n);
  talus_tile_free(t);
}

static void test_cave(int n) {
  double l;
  talus_tile *t = build("cave", n, 3, 0, &l);
  if (!t) return;
  int rows = 0, ok = 1, ty = -1;
  for (int y = 0; y < n; y++) {
    double Y = row_y(y, l);
    if (t->count[talus_idx(t, (int)(100 / l), y)] != 2) continue;
    rows++;
    ok &= Y > 124 && Y < 132;
    if (ty < 0) ty = y;
  }
  CHECK(rows >= 1 && rows <= (int)(4 / l) + 1 && ok, "tunnel rows %d at n=%d", rows, n);
  double Yt = row_y(ty, l);
  float prev = -1;
  int gap_ok = 1, rising = 1;
  for (double X = 64 + l; X < 200; X += l) {
    col lo = at(t, l, X, Yt, 0), hi = at(t, l, X, Yt, 1);
    gap_ok &= lo.count == 2 && fabs(lo.C - lo.B - 3.0) < 1e-4 && lo.s == 0 && hi.B == 50.0f;
    gap_ok &= fabs(lo.B - 25.0 * ((floor(X / l) + 0.5) * l - 64) / 136) < 1e-4;
    rising &= lo.B > prev;
    prev = lo.B;
  }
  CHECK(gap_ok, "tunnel: 3 m gap over a ramped floor under a 50 m roof");
  CHECK(rising, "tunnel floor rises towards the pit");
  CHECK(at(t, l, 30, 128, 0).count == 1 && at(t, l, 30, 128, 0).B == 0.0f, "plain");
  CHECK(at(t, l, 150, 60, 0).B == 50.0f, "plateau");
  CHECK(fabs(at(t, l, 220, 122, 0).B - 37.5) <= 25.0 * l / 40 && at(t, l, 220, 122, 0).count == 1,
        "pit ramp %g", at(t, l, 220, 122, 0).B);
  CHECK(at(t, l, 250, 128, 0).B == 50.0f, "beyond the pit");
  talus_tile_free(t);
}

static void test_fbm(void) {
  double sum = 0, sum2 = 0, max_abs = 0, max_step = 0;
  int m = 0, same = 1, differ = 0;
  for (int j = -50; j < 50; j++)
    for (int i = -50; i < 50; i++) {
      double x = i * 3.7, y = j * 2.3;
      float v = talus_fbm(42, x, y, 8, 0.05);
      same &= v == talus_fbm(42, x, y, 8, 0.05);
      differ += v != talus_fbm(43, x, y, 8, 0.05);
      max_abs = fmax(max_abs, fabs(v));
      max_step = fmax(max_step, fabs(talus_fbm(42, x + 1e-3, y, 8, 0.05) - v));
      sum += v;
      sum2 += (double)v * v;
      m++;
    }
  double sd = sqrt(sum2 / m - (sum / m) * (sum / m));
  CHECK(same, "fbm deterministic");
  CHECK(differ > m * 9 / 10, "another seed gives another field (%d of %d differ)", differ, m);
  CHECK(max_abs <= 1.0, "fbm in [-1,1]: %g", max_abs);
  CHECK(sd > 0.1 && fabs(sum / m) < 0.1, "fbm mean %g sd %g", sum / m, sd);
  CHECK(max_step < 0.002, "fbm continuous: step %g over 1 mm", max_step);
  CHECK(talus_fbm(1, NAN, 0, 8, 1) == 0.0f && talus_fbm(1, 1, 1, 0, 1) == 0.0f, "degenerate");
}

/* Gradient directions of fbm(octaves) on an n² grid of 1 m: the share of
 * directions within 11.25° of the axes over that within 11.25° of the
 * diagonals (1 for an isotropic field), on the steepest 90 % of cells. */
static double fbm_axis_share(int octaves, double frequency) {
  const int n = 384;
  float *z = malloc(sizeof *z * n * n);
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++)
      z[y * n + x] = talus_fbm(7, x, y, octaves, frequency);
  long axis = 0, diag = 0;
  for (int y = 1; y < n - 1; y++)
    for (int x = 1; x < n - 1; x++) {
      const float *c = z + y * n + x;
      double gx = c[1] - c[-1], gy = c[n] - c[-n];
      if (hypot(gx, gy) < 1e-4) continue; /* flat: no direction */
      double a = fmod(atan2(gy, gx) * 180.0 / M_PI + 360.0, 90.0);
      axis += a < 11.25 || a >= 78.75;
      diag += fabs(a - 45.0) < 11.25;
    }
  free(z);
  return diag ? (double)axis / (double)diag : INFINITY;
}

/* No grid in the noise: value noise's lattice shows in one octave (its
 * slopes follow the lattice's axes, turned for octave 0 by 0.6 rad, about
 * 34°: the diagonal band), but the octaves' turned lattices sum to a field
 * whose slopes face the axes and the diagonals alike. Before each octave
 * was turned they shared the grid's axes: 1.28 on `noise`, 1.45 on
 * rivers-rain. */
static void test_fbm_isotropic(void) {
  double one = fbm_axis_share(1, 0.05), all = fbm_axis_share(8, 0.05);
  printf("fbm gradient directions, axes / diagonals: 1 octave %.3f, 8 octaves %.3f\n", one, all);
  CHECK(one < 0.8 || one > 1.25, "one octave's lattice must show (%.3f): the measure can fail",
        one);
  CHECK(fabs(all - 1.0) <= 0.1,
        "8 octaves: gradients face the axes %.3fx as often as the diagonals", all);
}

/* Octaves a grid resolves: wavelengths 1/f, 1/2f, ... down to 4 cells. */
static void test_fbm_octaves(void) {
  /* rivers-rain's first wavelength is 20 m: 20, 10, 5 m >= 4 m at 1 m cells
   * (256 cells over the 256 m scene); 2.5 m is not */
  CHECK(talus_fbm_octaves(8, 0.05, 1.0) == 3, "rivers at 1 m: %d", talus_fbm_octaves(8, 0.05, 1.0));
  CHECK(talus_fbm_octaves(8, 0.05, 0.5) == 4, "rivers at 0.5 m: %d",
        talus_fbm_octaves(8, 0.05, 0.5));
  /* noise: 1000 m down to 1000/2^7 = 7.8 m >= 4 m; 3.9 m is not */
  CHECK(talus_fbm_octaves(10, 0.001, 1.0) == 8, "noise at 1 m: %d",
        talus_fbm_octaves(10, 0.001, 1.0));
  CHECK(talus_fbm_octaves(8, 0.05, 1e-6) == 8, "a fine grid keeps every octave asked for");
  CHECK(talus_fbm_octaves(8, 0.05, 100.0) == 1, "a coarse grid keeps the first octave");
  CHECK(talus_fbm_octaves(0, 0.05, 1.0) == 0, "no octaves stay none");
  /* each kept octave is at least 4 cells long, the next one would not be */
  for (double l = 0.1; l < 10.0; l *= 1.37) {
    int n = talus_fbm_octaves(16, 0.05, l);
    double shortest = 20.0 / ldexp(1.0, n - 1);
    CHECK(n == 1 || shortest >= 4.0 * l, "cell %g: %d octaves, shortest %g m", l, n, shortest);
    CHECK(n == 16 || shortest / 2.0 < 4.0 * l, "cell %g: octave %d would be resolved", l, n + 1);
  }
}

/* Rms of the grid-scale grain of bedrock: a cell less the mean of its 4
 * neighbours, over the interior of an n × n tile. */
static double grain(const talus_tile *t, int n) {
  double s = 0.0;
  for (int y = 1; y < n - 1; y++)
    for (int x = 1; x < n - 1; x++) {
      double l = t->B[talus_idx(t, x, y)] -
                 0.25 * ((double)t->B[talus_idx(t, x - 1, y)] + t->B[talus_idx(t, x + 1, y)] +
                         t->B[talus_idx(t, x, y - 1)] + t->B[talus_idx(t, x, y + 1)]);
      s += l * l;
    }
  return sqrt(s / ((double)(n - 2) * (n - 2)));
}

/* What the octave limit looks like: the demo's terrain (rivers-rain at
 * 512², 0.5 m cells) has no grain at the scale of a cell. Measured: 3.5 cm
 * rms with the limit, 9.4 cm with all 8 octaves (then octaves 5-7 were
 * finer than a cell and showed as per-cell noise in the hillshade). */
static void test_rivers_grain(void) {
  double l;
  talus_tile *t = build("rivers-rain", 512, 1, 7, &l);
  if (!t) return;
  double g = grain(t, 512);
  printf("rivers-rain 512: grid-scale grain %.4f m rms\n", g);
  CHECK(l == 0.5 && g < 0.05, "grain %.4f m rms at %g m cells", g, l);
  talus_tile_free(t);
}

static void test_rivers(void) {
  double l;
  int n = 128;
  talus_tile *a = build("rivers-rain", n, 4, 1, &l), *b = build("rivers-source", n, 4, 1, &l),
             *c = build("rivers-rain", n, 4, 2, &l);
  if (!a || !b || !c) return;
  CHECK(same_terrain(a, b, n), "rivers-rain and rivers-source share a terrain");
  CHECK(!same_terrain(a, c, n), "rivers vary with the seed");
  double west = 0, east = 0, lo = 1e9, hi = -1e9;
  int ok = 1;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t i = talus_idx(a, x, y);
      ok &= a->count[i] == 1 && a->s[i] == 1.0f && a->w[i] == 0.0f;
      lo = fmin(lo, a->B[i]);
      hi = fmax(hi, a->B[i]);
      if (x < n / 4) west += a->B[i];
      if (x >= 3 * n / 4) east += a->B[i];
    }
  west /= n * n / 4;
  east /= n * n / 4;
  CHECK(ok, "one column, 1 m sand, no water");
  CHECK(lo >= 0 && hi <= 36, "bedrock range [%g, %g]", lo, hi);
  CHECK(hi - lo > 8, "noise gives relief: %g", hi - lo);
  CHECK(west - east > 8 && west - east < 16, "tilt: west %g east %g", west, east);
  talus_tile_free(a);
  talus_tile_free(b);
  talus_tile_free(c);
}

static void test_noise(void) {
  double l;
  talus_tile *small = build("noise", 64, 2, 9, &l), *big = build("noise", 128, 2, 9, &l),
             *other = build("noise", 64, 2, 10, &l);
  if (!small || !big || !other) return;
  CHECK(same_terrain(small, big, 64), "noise at 64 is the corner of noise at 128");
  CHECK(!same_terrain(small, other, 64), "noise varies with the seed");
  double lo = 1e9, hi = -1e9;
  for (int y = 0; y < 128; y++)
    for (int x = 0; x < 128; x++) {
      float B = big->B[talus_idx(big, x, y)];
      lo = fmin(lo, B);
      hi = fmax(hi, B);
    }
  CHECK(lo >= 0 && hi <= 300 && hi - lo > 1, "noise heights [%g, %g]", lo, hi);
  talus_tile_free(small);
  talus_tile_free(big);
  talus_tile_free(other);
}

/* Bridges at nz = 2 and nz = 4 hold the same terrain. */
static void test_layers_independent(void) {
  double l;
  talus_tile *a = build("bridges", 64, 2, 0, &l), *b = build("bridges", 64, 4, 0, &l);
  if (a && b) CHECK(same_terrain(a, b, 64), "terrain independent of nz");
  talus_tile_free(a);
  talus_tile_free(b);
}

/* Generated scenes are north-up: the geotransform maps a cell to the scene
 * point it was sampled at, y growing northwards while rows grow
 * southwards. Rows used to run northwards, which mirrored every written
 * scene north–south: then the arch bridge (y ∈ (150, 160), deck top 10 m)
 * lay in the southern half of the raster. */
static void test_north_up(void) {
  double gt[6] = {0}, l = 0;
  CHECK(talus_scene_geotransform("bridges", 64, gt) == TALUS_OK && gt[0] == 0 && gt[1] == 4 &&
            gt[2] == 0 && gt[3] == 256 && gt[4] == 0 && gt[5] == -4,
        "bridges geotransform %g %g %g %g %g %g", gt[0], gt[1], gt[2], gt[3], gt[4], gt[5]);
  CHECK(talus_scene_geotransform("noise", 100, gt) == TALUS_OK && gt[1] == 1 && gt[3] == 0 &&
            gt[5] == -1,
        "noise: north edge at y = 0");
  CHECK(talus_scene_geotransform("nope", 64, gt) == TALUS_ERR_ARGUMENT, "unknown scene");
  CHECK(talus_scene_geotransform("bridges", 64, NULL) == TALUS_ERR_ARGUMENT, "NULL gt");
  talus_tile *t = build("bridges", 64, 2, 0, &l);
  if (!t) return;
  talus_scene_geotransform("bridges", 64, gt);
  int arch = (int)((155.0 - gt[3]) / gt[5]), thick = (int)((55.0 - gt[3]) / gt[5]);
  size_t a = talus_idx(t, 32, arch), b = talus_idx(t, 32, thick);
  CHECK(arch < 32 && t->count[a] == 2 && t->B[talus_col(t, a, 1)] == 10.0f,
        "arch bridge at row %d, in the north half", arch);
  CHECK(thick >= 32 && t->count[b] == 2 && t->B[talus_col(t, b, 1)] == 30.0f,
        "thick bridge at row %d, in the south half", thick);
  talus_tile_free(t);
}

int main(void) {
  test_names_and_errors();
  test_north_up();
  test_all_invariants();
  for (int n = 64; n <= 128; n *= 2) {
    test_bridges(n);
    test_chasm(n);
    test_arches(n);
    test_cave(n);
  }
  test_fbm();
  test_fbm_isotropic();
  test_fbm_octaves();
  test_rivers_grain();
  test_rivers();
  test_noise();
  test_layers_independent();
  return check_report("test_scenes");
}
