/*
 * scenes.c — scene definitions in metres, sampled at cell centres into a
 * layered tile, and the value-noise fBm the procedural scenes use. See
 * scenes.h for the conventions (band rule, pillars, noise scale).
 */
#include "app/scenes.h"

#include <math.h>
#include <string.h>

#define SCENE_WIDTH 256.0 /* metres, every paper scene */

/* The columns of one cell, bottom-up, before they go into the tile. The
 * topmost column's ceiling is filled in by the builder. */
typedef struct cell_cols {
  int n;
  float B[TALUS_NZ_MAX], s[TALUS_NZ_MAX], C[TALUS_NZ_MAX];
} cell_cols;

/* What a scene function may depend on besides the cell centre. */
typedef struct scene_ctx {
  double l;        /* cell size [m] */
  int north_cells; /* the map's north edge (row 0's top) at y = north_cells·l */
  uint32_t seed;
} scene_ctx;

typedef void (*scene_fn)(const scene_ctx *c, double X, double Y, cell_cols *out);

/* ---- fBm ---------------------------------------------------------------- */

/* Lattice value in [−1, 1) of lattice point (i, j) of one octave. The lattice
 * wraps every 2^32 points, far beyond any terrain. */
static double lattice_value(uint32_t seed, int64_t i, int64_t j, uint32_t octave) {
  uint32_t h = talus_hash(seed, (int32_t)(uint32_t)i, (int32_t)(uint32_t)j, 0, octave);
  return (double)(h >> 8) * (2.0 / 16777216.0) - 1.0;
}

/* Quintic fade: C2-continuous interpolation weight, so slopes have no kinks
 * at lattice lines. */
static double fade(double t) {
  return t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
}

/* One octave of value noise at lattice coordinates (u, v); 0 where the
 * coordinates are beyond float-free integer range. */
static double value_noise(uint32_t seed, double u, double v, uint32_t octave) {
  if (!(fabs(u) < 0x1p52 && fabs(v) < 0x1p52)) return 0.0;
  double fu = floor(u), fv = floor(v);
  int64_t i = (int64_t)fu, j = (int64_t)fv;
  double tu = fade(u - fu), tv = fade(v - fv);
  double a = lattice_value(seed, i, j, octave), b = lattice_value(seed, i + 1, j, octave);
  double c = lattice_value(seed, i, j + 1, octave), d = lattice_value(seed, i + 1, j + 1, octave);
  double lo = a + (b - a) * tu, hi = c + (d - c) * tu;
  return lo + (hi - lo) * tv;
}

/* Each octave's lattice turned by the golden angle (2.39996 rad) more than
 * the last, starting at 0.6 rad: value noise keeps its lattice's axes (the
 * quintic fade flattens the slope across every lattice line), and octaves
 * sharing one lattice stack those creases into a visible grid (gradient
 * directions 1.28–1.45x as often along the axes as along the diagonals on
 * noise and rivers-rain); turned lattices cross at no common angle.
 * {cos, sin} per octave; octaves beyond the table reuse it cyclically. */
static const double fbm_turn[16][2] = {
    {0.82533561490967833, 0.56464247339503537},   {-0.98998730691019665, 0.1411564102571895},
    {0.63463604470661927, -0.77281116112484938},  {0.054065570363432687, 0.99853738743287757},
    {-0.71436858262971625, -0.69976962505642548}, {0.99944075025271428, 0.033439299249408624},
    {-0.75954442680947942, 0.65045542791390354},  {0.12068809344158214, -0.99269047749106365},
    {0.58156113869262138, 0.81350269941933295},   {-0.97833826218503783, -0.20701266807797106},
    {0.86123123484432729, -0.50821330180202406},  {-0.29175195662129638, 0.95649401242644749},
    {-0.43097360898232795, -0.90236453186101429}, {0.9273250096946215, 0.37425703252560272},
    {-0.93658759504265487, 0.35043355548836336},  {0.45389607866272313, -0.89105462782850919},
};

float talus_fbm(uint32_t seed, double x, double y, int octaves, double frequency) {
  if (octaves < 1 || !isfinite(x) || !isfinite(y) || !isfinite(frequency)) return 0.0f;
  double sum = 0.0, norm = 0.0, amp = 1.0, f = frequency;
  for (int o = 0; o < octaves; o++) {
    const double *r = fbm_turn[o & 15];
    double u = (r[0] * x - r[1] * y) * f, v = (r[1] * x + r[0] * y) * f;
    sum += amp * value_noise(seed, u, v, (uint32_t)o);
    norm += amp;
    amp *= 0.5;
    f *= 2.0;
  }
  return (float)(sum / norm);
}

int talus_fbm_octaves(int octaves, double frequency, double cell_size) {
  int n = 1;
  double wavelength = frequency > 0.0 ? 1.0 / frequency : INFINITY;
  while (n < octaves && wavelength / 2.0 >= TALUS_FBM_MIN_CELLS * cell_size) {
    wavelength /= 2.0;
    n++;
  }
  return octaves < 1 ? octaves : n;
}

/* ---- scene geometry ------------------------------------------------------ */

/* Band rule of scenes.h: centre c strictly inside (a, b), or the cell
 * [c − l/2, c + l/2) holds the band's midpoint. */
static int in_band(double c, double l, double a, double b) {
  double m = 0.5 * (a + b);
  return (c > a && c < b) || (m >= c - 0.5 * l && m < c + 0.5 * l);
}

/* Appends a column (bedrock top B, sand s, ceiling C). */
static void cols_push(cell_cols *o, double B, double s, double C) {
  o->B[o->n] = (float)B;
  o->s[o->n] = (float)s;
  o->C[o->n] = (float)C;
  o->n++;
}

/* Bridges: the three decks, their pillars, base bedrock −30 elsewhere. */
static void scene_bridges(const scene_ctx *c, double X, double Y, cell_cols *o) {
  static const double y0[3] = {50, 100, 150}, top[3] = {30, 20, 10};
  const double base = -30.0;
  for (int b = 0; b < 3; b++) {
    if (!in_band(Y, c->l, y0[b], y0[b] + 10)) continue;
    if (in_band(X, c->l, 10, 20) || in_band(X, c->l, 236, 246)) {
      cols_push(o, top[b], 0, TALUS_TOP);
      return;
    }
    if (in_band(X, c->l, 20, 236)) {
      double u = fabs(X - 128.0) / 108.0; /* < 1 inside the span */
      double ceil = b == 0 ? 20.0 + 8.0 * pow(1.0 - u, 0.25) : b == 1 ? 10.0 : 8.0 * pow(u, 4.0);
      cols_push(o, base, 0, ceil);
      cols_push(o, top[b], 0, TALUS_TOP);
      return;
    }
  }
  cols_push(o, base, 0, TALUS_TOP);
}

/* ChasmRain / ChasmSource: plain 0 up to x = 64, plateau 50, chasm at 25. */
static void scene_chasm(const scene_ctx *c, double X, double Y, cell_cols *o) {
  double B = X <= 64.0 ? 0.0 : 50.0;
  if (in_band(X, c->l, 64, 240) && in_band(Y, c->l, 120, 136)) B = 25.0;
  cols_push(o, B, 0, TALUS_TOP);
}

/* Arches: blocks on a plain at 0; overlaps take the highest. The four
 * walls' long faces wander by up to ARCH_FACE_WANDER metres (fBm along the
 * wall, each face its own draw, wavelengths 48 to 12 m), so a wall is 16 m
 * thick on average but thinner in places: the paper's straight walls are
 * eroded alike along their whole length, so the notches from both faces
 * met nowhere or everywhere at once, and where everywhere the roof fell.
 * Faces stay vertical: no overhang at the start. The centre tower's and
 * the walls' ends are straight. */
#define ARCH_FACE_WANDER 8.0

/* Offset [m] of face f (0 or 1) of wall w at distance u along it. */
static double arch_face_offset(const scene_ctx *c, int w, int f, double u) {
  int oct = talus_fbm_octaves(3, 1.0 / 48.0, c->l);
  return ARCH_FACE_WANDER * talus_fbm(c->seed, u, 101.0 * (2 * w + f + 1), oct, 1.0 / 48.0);
}

enum { ARCH_BLOCK, ARCH_WALL_X, ARCH_WALL_Y }; /* straight; long faces along x or y wander */

static void scene_arches(const scene_ctx *c, double X, double Y, cell_cols *o) {
  static const struct {
    double x0, x1, y0, y1, height;
    int kind;
  } blk[5] = {
      {64, 240, 120, 136, 30, ARCH_WALL_X}, {64, 240, 40, 56, 40, ARCH_WALL_X},
      {64, 240, 200, 216, 40, ARCH_WALL_X}, {120, 136, 16, 240, 30, ARCH_WALL_Y},
      {117, 139, 117, 139, 50, ARCH_BLOCK},
  };
  double B = 0.0;
  for (int i = 0; i < 5; i++) {
    double x0 = blk[i].x0, x1 = blk[i].x1, y0 = blk[i].y0, y1 = blk[i].y1;
    if (blk[i].kind == ARCH_WALL_X)
      y0 += arch_face_offset(c, i, 0, X), y1 += arch_face_offset(c, i, 1, X);
    else if (blk[i].kind == ARCH_WALL_Y)
      x0 += arch_face_offset(c, i, 0, Y), x1 += arch_face_offset(c, i, 1, Y);
    if (in_band(X, c->l, x0, x1) && in_band(Y, c->l, y0, y1) && blk[i].height > B)
      B = blk[i].height;
  }
  cols_push(o, B, 0, TALUS_TOP);
}

/* Cave: plain and plateau, a ramped pit, and the guide tunnel leading from
 * the cliff at x = 64 up to the pit's floor at x = 200 under a 50 m roof. */
static void scene_cave(const scene_ctx *c, double X, double Y, cell_cols *o) {
  if (X > 64.0 && X <= 200.0 && in_band(Y, c->l, 126, 130)) {
    double floor_z = 25.0 * (X - 64.0) / 136.0;
    cols_push(o, floor_z, 0, floor_z + 3.0);
    cols_push(o, 50.0, 0, TALUS_TOP);
    return;
  }
  double B = X <= 64.0 ? 0.0 : 50.0;
  if (in_band(X, c->l, 200, 240) && in_band(Y, c->l, 120, 136))
    B = 50.0 - 25.0 * (1.0 - (X - 200.0) / 40.0);
  cols_push(o, B, 0, TALUS_TOP);
}

/* RiversRain / RiversSource: fBm hills on a 16 m tilt falling towards +x,
 * under 1 m of sand. */
static void scene_rivers(const scene_ctx *c, double X, double Y, cell_cols *o) {
  double B = 10.0 * (1.0 + talus_fbm(c->seed, X, Y, talus_fbm_octaves(8, 0.05, c->l), 0.05)) +
             16.0 * (SCENE_WIDTH - X) / SCENE_WIDTH;
  cols_push(o, B, 1.0, TALUS_TOP);
}

/* noise: 0..300 m fBm landscape on 1 m cells, under 1 m of sand. */
static void scene_noise(const scene_ctx *c, double X, double Y, cell_cols *o) {
  cols_push(o, 150.0 * (1.0 + talus_fbm(c->seed, X, Y, talus_fbm_octaves(10, 0.001, c->l), 0.001)),
            1.0, TALUS_TOP);
}

/* Gully arch: a V valley along x (thalweg falling 0.08 m per m towards +x,
 * flanks rising 0.3 m per m, roughened by up to 3 m of fBm) under 1 m of
 * sand, spanned over x ∈ [112, 144) by a natural arch: a 6 m slab whose
 * flat underside lies 10 m above the thalweg at x = 128, standing on the
 * flanks where they rise to it (abutments). Droplets run along the
 * thalweg under the arch and fall off its top. */
static void scene_gully_arch(const scene_ctx *c, double X, double Y, cell_cols *o) {
  double g = 2.0 + 0.08 * (SCENE_WIDTH - X) + 0.3 * fabs(Y - 128.0) +
             1.5 * (1.0 + talus_fbm(c->seed, X, Y, talus_fbm_octaves(6, 0.05, c->l), 0.05));
  double under = 2.0 + 0.08 * (SCENE_WIDTH - 128.0) + 10.0, top = under + 6.0;
  if (in_band(X, c->l, 112, 144) && g < under - 1.0) {
    cols_push(o, g - 1.0, 1.0, under);
    cols_push(o, top, 0, TALUS_TOP);
  } else if (in_band(X, c->l, 112, 144)) {
    cols_push(o, g > top ? g : top, 0, TALUS_TOP);
  } else {
    cols_push(o, g - 1.0, 1.0, TALUS_TOP);
  }
}

/* ---- table and builder --------------------------------------------------- */

typedef struct scene_def {
  const char *name;
  scene_fn fn;
  int min_nz;
  int metre_cells; /* 1: cells of 1 m; 0: 256 m wide whatever n */
} scene_def;

static const scene_def scene_table[] = {
    {"bridges", scene_bridges, 2, 0},
    {"chasm-rain", scene_chasm, 1, 0},
    {"chasm-source", scene_chasm, 1, 0},
    {"arches", scene_arches, 1, 0},
    {"cave", scene_cave, 2, 0},
    {"rivers-rain", scene_rivers, 1, 0},
    {"rivers-source", scene_rivers, 1, 0},
    {"noise", scene_noise, 1, 1},
    {"gully-arch", scene_gully_arch, 2, 0},
};
#define SCENE_COUNT ((int)(sizeof scene_table / sizeof scene_table[0]))

int talus_scene_count(void) {
  return SCENE_COUNT;
}

const char *talus_scene_name(int i) {
  return i >= 0 && i < SCENE_COUNT ? scene_table[i].name : NULL;
}

/* The table entry of a name, or NULL. */
static const scene_def *scene_find(const char *name) {
  for (int i = 0; name && i < SCENE_COUNT; i++)
    if (!strcmp(scene_table[i].name, name)) return &scene_table[i];
  return NULL;
}

int talus_scene_min_layers(const char *name) {
  const scene_def *d = scene_find(name);
  return d ? d->min_nz : 0;
}

/* Drops every column whose gap has closed (ceiling at or below its sand
 * top): the column above then rests directly on its material. */
static void cols_merge_closed(cell_cols *o) {
  int k = 0;
  while (k < o->n - 1) {
    if (o->C[k] > o->B[k] + o->s[k]) {
      k++;
      continue;
    }
    memmove(&o->B[k], &o->B[k + 1], sizeof(float) * (size_t)(o->n - k - 1));
    memmove(&o->s[k], &o->s[k + 1], sizeof(float) * (size_t)(o->n - k - 1));
    memmove(&o->C[k], &o->C[k + 1], sizeof(float) * (size_t)(o->n - k - 1));
    o->n--;
  }
}

/* Writes one cell's columns into the tile. */
static void cols_store(talus_tile *t, size_t idx, const cell_cols *o) {
  t->count[idx] = (uint8_t)o->n;
  for (int k = 0; k < o->n; k++) {
    size_t ci = talus_col(t, idx, k);
    t->B[ci] = o->B[k];
    t->s[ci] = o->s[k];
    t->w[ci] = 0.0f;
    t->C[ci] = k == o->n - 1 ? TALUS_TOP : o->C[k];
  }
}

/* Samples the scene at the centre of every cell of global rectangle r of
 * t: column x at X = (x + 0.5)·l, row y at Y = (north_cells − y − 0.5)·l,
 * so row 0 is the scene's north (highest y) and a north-up geotransform
 * (talus_scene_geotransform) gives the scene's own metres. Cells are
 * independent, so rows run in parallel with a result
 * independent of the thread count and of how the map is cut into windows. */
static void scene_sample(const scene_def *d, const scene_ctx *c, talus_tile *t, talus_rect r) {
#pragma omp parallel for schedule(static)
  for (int y = r.y0; y < r.y0 + r.h; y++) {
    for (int x = r.x0; x < r.x0 + r.w; x++) {
      cell_cols o = {0};
      d->fn(c, ((double)x + 0.5) * c->l, ((double)(c->north_cells - y) - 0.5) * c->l, &o);
      cols_merge_closed(&o);
      cols_store(t, talus_idx(t, x - t->buf.x0, y - t->buf.y0), &o);
    }
  }
}

/* The frame of scene d at n × n cells: paper scenes span y ∈ [0, 256) m
 * whatever n; noise has 1 m cells and its north edge at y = 0, so a
 * smaller map is the north-west corner of a larger one. */
static scene_ctx scene_frame(const scene_def *d, int n, uint32_t seed) {
  return d->metre_cells ? (scene_ctx){1.0, 0, seed} : (scene_ctx){SCENE_WIDTH / n, n, seed};
}

/* Looks up scene `name` and checks the map size n. */
static talus_status scene_check(const char *name, int n, const scene_def **out) {
  const scene_def *d = *out = scene_find(name);
  if (!d)
    return talus_fail(TALUS_ERR_ARGUMENT, "scenes",
                      "unknown scene '%s' (bridges, chasm-rain, chasm-source, arches, cave, "
                      "rivers-rain, rivers-source, noise)",
                      name ? name : "(null)");
  if (n < 1 || n > 1 << 20)
    return talus_fail(TALUS_ERR_RANGE, "scenes", "scene %s: size %d outside 1..%d", d->name, n,
                      1 << 20);
  return TALUS_OK;
}

/* Whether rectangle r is non-empty and lies inside rectangle b. */
static int rect_inside(talus_rect r, talus_rect b) {
  return r.w > 0 && r.h > 0 && r.x0 >= b.x0 && r.y0 >= b.y0 &&
         (int64_t)r.x0 + r.w <= (int64_t)b.x0 + b.w && (int64_t)r.y0 + r.h <= (int64_t)b.y0 + b.h;
}

talus_status talus_scene_fill(const char *name, int n, uint32_t seed, talus_tile *t, talus_rect r,
                              double *cell_size) {
  const scene_def *d = NULL;
  talus_status st = scene_check(name, n, &d);
  if (st != TALUS_OK) return st;
  if (!t) return talus_fail(TALUS_ERR_ARGUMENT, "scenes", "scene %s: no tile", d->name);
  if (t->nz < d->min_nz || t->nz > TALUS_NZ_MAX)
    return talus_fail(TALUS_ERR_RANGE, "scenes", "scene %s: %d layers outside %d..%d", d->name,
                      t->nz, d->min_nz, TALUS_NZ_MAX);
  if (!rect_inside(r, t->buf) || !rect_inside(r, (talus_rect){0, 0, n, n}))
    return talus_fail(TALUS_ERR_ARGUMENT, "scenes",
                      "scene %s: window at (%d, %d) of %d x %d is outside the tile or the %d x %d "
                      "map",
                      d->name, r.x0, r.y0, r.w, r.h, n, n);
  scene_ctx c = scene_frame(d, n, seed);
  scene_sample(d, &c, t, r);
  if (cell_size) *cell_size = c.l;
  return TALUS_OK;
}

talus_status talus_scene_geotransform(const char *name, int n, double gt[6]) {
  const scene_def *d = NULL;
  talus_status st = scene_check(name, n, &d);
  if (st != TALUS_OK) return st;
  if (!gt) return talus_fail(TALUS_ERR_ARGUMENT, "scenes", "scene %s: no geotransform", d->name);
  scene_ctx c = scene_frame(d, n, 0);
  double north = c.north_cells * c.l;
  double g[6] = {0.0, c.l, 0.0, north, 0.0, -c.l};
  memcpy(gt, g, sizeof g);
  return TALUS_OK;
}

talus_status talus_scene_build(const char *name, int n, int nz, uint32_t seed, talus_tile **out,
                               double *cell_size) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "scenes", "no output tile");
  *out = NULL;
  const scene_def *d = NULL;
  talus_status st = scene_check(name, n, &d);
  if (st != TALUS_OK) return st;
  if (nz < d->min_nz || nz > TALUS_NZ_MAX)
    return talus_fail(TALUS_ERR_RANGE, "scenes", "scene %s: %d layers outside %d..%d", d->name, nz,
                      d->min_nz, TALUS_NZ_MAX);
  talus_tile *t = NULL;
  talus_rect all = {0, 0, n, n};
  st = talus_tile_create(&t, all, nz, 0);
  if (st) return talus_fail_context(st, "scene %s", d->name);
  st = talus_scene_fill(name, n, seed, t, all, cell_size);
  if (st != TALUS_OK) {
    talus_tile_free(t);
    return st;
  }
  *out = t;
  return TALUS_OK;
}
