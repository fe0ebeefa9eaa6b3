/*
 * test_mesh.c — the mesh of the layered solid (io/export/mesh.h), read back
 * from the files, smooth (the default) and blocky: on a ramp with a cliff
 * and an overhang, the smooth mesh's ramp vertices lie at the mean of the
 * tops around their corner, the cliff's and overhang's stay where they
 * are; on the cave scene, on arches after an erosion that cuts notches
 * (cells of several columns), on chasm-rain after rain has cut it, and on
 * random layered states (ramps, cliffs, sheets and gaps of 0.05 to 3 m
 * side by side; pinches one float thin, tops level with their neighbour's
 * bottom), the OBJ is a closed oriented manifold (every edge used by
 * exactly two triangles, once in each direction), each triangle faces the
 * normals it states (blocky: exactly; smooth: unit normals on its side),
 * and its enclosed volume (divergence theorem) equals the state's solid
 * volume Σ l_c² Σ_k (B_k + s_k − floor_k): blocky within 1e-6 relative
 * (float32 heights), smooth within 1e-5 on the scenes and 3e-3 on the
 * random states (smoothing moves volume only where a corner's group is
 * partial, by part of a step: a pure ramp keeps it exactly, the scenes
 * move by up to 5.9e-6, random states, steps of up to 3 m on every cell,
 * by up to 1.8e-3 over 30 seeds — a mean height shift of about 1.5 cm);
 * --multi-only meshes
 * are closed too and stay within the margin of multi-column cells, and so
 * are --crop sections through the cave's tunnel; tile meshes together
 * hold exactly the whole mesh's triangles (shared edge vertices bit for
 * bit); GLB and PLY hold the same triangles; --merge (coplanar faces
 * merged) keeps the meshes closed, their normals and volume, with fewer
 * triangles (the cave's flat scene, blocky: under a quarter of the edges).
 */
#include "app/domain.h"
#include "app/scenes.h"
#include "check.h"
#include "scratch.h"
#include "io/export/mesh.h"
#include "io/state.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define ARCHES_STEPS  1500 /* arches at 128²: notches are cut by then */
#define CHASM_STEPS   500  /* chasm-rain at 64²: rain has cut the chasm's walls by then */
#define TOL_VOLUME    1e-6 /* relative: float32 vertex heights */
#define TOL_SMOOTH    1e-5 /* relative, smooth meshes of the scenes (measured up to 5.9e-6) */
#define TOL_RANDOM    3e-3 /* relative, smooth meshes of random states (30 seeds: up to 1.8e-3) */
#define RANDOM_STATES 6    /* seeds; 5 holds a top and its neighbour's bottom at one height */

/* A mesh as read back: positions and triangles (with their stated normal). */
typedef struct rmesh {
  double *p;
  long *t;
  double (*n)[9]; /* each corner's stated normal */
  long nv, nt;
} rmesh;

static void rmesh_free(rmesh *m) {
  free(m->p), free(m->t), free(m->n);
  memset(m, 0, sizeof *m);
}

/* Parses an OBJ of v, vn and f a//n lines. */
static int read_obj(const char *path, rmesh *m) {
  FILE *f = fopen(path, "r");
  char line[256];
  long cv = 1024, ct = 1024, cn = 1024, nn = 0;
  double *vn = malloc(3 * cn * sizeof *vn);
  memset(m, 0, sizeof *m);
  m->p = malloc(3 * cv * sizeof *m->p), m->t = malloc(3 * ct * sizeof *m->t);
  m->n = malloc(ct * sizeof *m->n);
  while (f && fgets(line, sizeof line, f)) {
    if (m->nv == cv) m->p = realloc(m->p, 3 * (cv *= 2) * sizeof *m->p);
    if (nn == cn) vn = realloc(vn, 3 * (cn *= 2) * sizeof *vn);
    if (m->nt == ct) {
      ct *= 2;
      m->t = realloc(m->t, 3 * ct * sizeof *m->t), m->n = realloc(m->n, ct * sizeof *m->n);
    }
    double *p = m->p + 3 * m->nv;
    long *t = m->t + 3 * m->nt, n[3];
    if (sscanf(line, "v %lf %lf %lf", p, p + 1, p + 2) == 3) m->nv++;
    if (sscanf(line, "vn %lf %lf %lf", vn + 3 * nn, vn + 3 * nn + 1, vn + 3 * nn + 2) == 3) nn++;
    if (sscanf(line, "f %ld//%ld %ld//%ld %ld//%ld", t, n, t + 1, n + 1, t + 2, n + 2) == 6) {
      for (int i = 0; i < 3; i++) {
        t[i]--;
        if (n[i] >= 1 && n[i] <= nn) memcpy(m->n[m->nt] + 3 * i, vn + 3 * (n[i] - 1), 24);
      }
      m->nt++;
    }
  }
  free(vn);
  if (f) fclose(f);
  return f != NULL;
}

static int cmp_edge(const void *a, const void *b) {
  const long *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Every directed edge occurs once and its reverse once: each edge is used
 * by exactly two triangles, wound oppositely (closed and oriented).
 * Returns the count of edges breaking it; *edges the undirected count. */
static long manifold_faults(const rmesh *m, long *edges) {
  long ne = 3 * m->nt, bad = 0;
  long(*e)[2] = malloc(ne * sizeof *e);
  for (long t = 0; t < m->nt; t++)
    for (int i = 0; i < 3; i++)
      e[3 * t + i][0] = m->t[3 * t + i], e[3 * t + i][1] = m->t[3 * t + (i + 1) % 3];
  qsort(e, ne, sizeof *e, cmp_edge);
  for (long i = 0; i < ne; i++) {
    long key[2] = {e[i][1], e[i][0]};
    int dup = i + 1 < ne && !cmp_edge(e[i], e[i + 1]);
    bad += dup || !bsearch(key, e, ne, sizeof *e, cmp_edge);
  }
  *edges = ne / 2;
  free(e);
  return bad;
}

/* Triangles whose winding disagrees with a corner's stated normal: walls
 * and every face of a flat (blocky) mesh state the face's own normal
 * (cosine above 1 − 1e-9); a smooth mesh's caps, whose normals average a
 * vertex's caps, a unit normal facing up (down) where the face does.
 * Triangles
 * of no area (none but where a pinched slab is one float thin) have no
 * winding to check. */
static long normal_faults(const rmesh *m, int flat) {
  long bad = 0;
  for (long t = 0; t < m->nt; t++) {
    const double *a = m->p + 3 * m->t[3 * t], *b = m->p + 3 * m->t[3 * t + 1];
    const double *c = m->p + 3 * m->t[3 * t + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
           v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len == 0.0) continue; /* a pinch one float thin: its middle vertex sits on an end */
    for (int i = 0; i < 3; i++) {
      const double *s = m->n[t] + 3 * i;
      double dot = (n[0] * s[0] + n[1] * s[1] + n[2] * s[2]) / len;
      double unit = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      int cap = !flat && n[1] != 0.0; /* walls stand in their vertical planes */
      bad += cap ? !(s[1] * n[1] > 0.0 && fabs(unit - 1.0) < 1e-6) : !(dot > 1.0 - 1e-9);
    }
  }
  return bad;
}

/* The enclosed volume, Σ a · (b × c) / 6 about the first vertex. */
static double rmesh_volume(const rmesh *m) {
  double v = 0.0;
  for (long t = 0; t < m->nt; t++) {
    double q[3][3];
    for (int i = 0; i < 3; i++)
      for (int c = 0; c < 3; c++)
        q[i][c] = m->p[3 * m->t[3 * t + i] + c] - m->p[c];
    v += q[0][0] * (q[1][1] * q[2][2] - q[1][2] * q[2][1]) -
         q[0][1] * (q[1][0] * q[2][2] - q[1][2] * q[2][0]) +
         q[0][2] * (q[1][0] * q[2][1] - q[1][1] * q[2][0]);
  }
  return v / 6.0;
}

/* 1 when cell i of b lies within `margin` cells (Chebyshev) of a cell of
 * more than one column. */
static int near_multi(const talus_bands *b, int columns, size_t i, int margin) {
  int cx = (int)(i % b->nx), cy = (int)(i / b->nx);
  for (int y = cy - margin; y <= cy + margin; y++)
    for (int x = cx - margin; x <= cx + margin; x++)
      if (x >= 0 && y >= 0 && x < b->nx && y < b->ny && b->band[columns][y * b->nx + x] > 1)
        return 1;
  return 0;
}

/* The solid volume of a state file above `base`, summed from its bands:
 * Σ l_c² Σ_k (B_k + s_k − floor_k), floor_0 = base, floor_k = C_{k−1},
 * over the cells o selects (near_multi with multi_only, inside the crop
 * with crop); *multi gets the cells of more than one column. */
static double state_volume(const char *path, double base, const talus_mesh_options *o,
                           long *multi) {
  talus_bands b;
  talus_state_header h;
  double v = 0.0;
  *multi = 0;
  if (talus_bands_read(path, &b) || talus_state_header_bands(&b, &h)) return NAN;
  char name[3][TALUS_STATE_NAME_MAX];
  for (size_t i = 0; i < (size_t)b.nx * b.ny; i++) {
    int n = (int)b.band[h.columns][i];
    *multi += n > 1;
    int x = (int)(i % b.nx), y = (int)(i / b.nx);
    if (o->multi_only && !near_multi(&b, h.columns, i, o->margin)) continue;
    if (o->crop && (x < o->crop_x0 || y < o->crop_y0 || x >= o->crop_x0 + o->crop_w ||
                    y >= o->crop_y0 + o->crop_h))
      continue;
    for (int k = 0; k < n; k++) {
      talus_state_band_name(k, 0, name[0]), talus_state_band_name(k, 1, name[1]);
      talus_state_band_name(k - (k > 0), 3, name[2]);
      float top =
          b.band[talus_bands_find(&b, name[0])][i] + b.band[talus_bands_find(&b, name[1])][i];
      double floor = k ? b.band[talus_bands_find(&b, name[2])][i] : base;
      v += top > floor ? top - floor : 0.0;
    }
  }
  talus_bands_free(&b);
  return v * h.cell * h.cell;
}

/* Meshes rectangle (x0, y0, w, h) of state `state` with options o into m. */
static talus_status mesh_rect(const char *state, const talus_mesh_options *o, int x0, int y0, int w,
                              int h, talus_mesh *m, double *base) {
  talus_mesh_source *s = NULL;
  talus_status st = talus_mesh_source_open(state, o, &s);
  if (!st && w <= 0) w = talus_mesh_source_nx(s), h = talus_mesh_source_ny(s);
  if (!st) st = talus_mesh_add_rect(s, x0, y0, w, h, m);
  if (!st && base) *base = talus_mesh_source_base(s);
  talus_mesh_source_close(s);
  return st;
}

/* The OBJ of a whole state: closed, oriented, normals right, the state's
 * volume. Returns the triangle count. */
static long check_closed(const char *name, const char *state, const talus_mesh_options *o,
                         double tol) {
  talus_mesh m = {0};
  double base = 0.0;
  char obj[64];
  snprintf(obj, sizeof obj, "%s.obj", name);
  talus_status st =
      o->crop ? mesh_rect(state, o, o->crop_x0, o->crop_y0, o->crop_w, o->crop_h, &m, &base)
              : mesh_rect(state, o, 0, 0, 0, 0, &m, &base);
  size_t blocky = m.nt;
  if (!st && o->merge) st = talus_mesh_merge_coplanar(&m);
  if (!st) st = talus_mesh_write(&m, TALUS_MESH_OBJ, tpath(obj));
  CHECK(st == TALUS_OK, "%s: %s", name, talus_last_error());
  if (o->merge) CHECK(m.nt < blocky, "%s: --merge keeps %zu of %zu triangles", name, m.nt, blocky);
  rmesh r;
  CHECK(read_obj(tpath(obj), &r) && r.nt == (long)m.nt && r.nv == (long)m.nv, "%s: OBJ read back",
        name);
  long edges = 0, bad = manifold_faults(&r, &edges), multi = 0;
  CHECK(bad == 0, "%s: %ld of %ld edges not used exactly twice, oppositely", name, bad, edges);
  long nbad = normal_faults(&r, o->blocks);
  CHECK(nbad == 0, "%s: %ld triangle corners facing away from their normal", name, nbad);
  double vm = rmesh_volume(&r), vs = state_volume(state, base, o, &multi);
  printf("%s: %ld vertices, %ld triangles, %ld edges (each used twice), %ld multi-column cells; "
         "volume mesh %.6f m3, state %.6f m3, relative error %.2e\n",
         name, r.nv, r.nt, edges, multi, vm, vs, fabs(vm - vs) / vs);
  tol = o->blocks ? TOL_VOLUME : tol > 0.0 ? tol : TOL_SMOOTH;
  CHECK(fabs(vm - vs) <= tol * vs, "%s: volume %.6f vs the state's %.6f", name, vm, vs);
  if (!o->multi_only && !o->crop) CHECK(multi > 0, "%s: no cell of several columns to test", name);
  rmesh_free(&r);
  talus_mesh_free(&m);
  return edges;
}

/* A scene's initial state (steps = 0) or after `steps` of its preset,
 * written to path. */
static talus_status make_state(const char *scene, int n, int steps, const char *path) {
  talus_tile *t = NULL;
  talus_domain *d = NULL;
  talus_params *p = NULL;
  double cell = 0.0;
  char ini[512];
  snprintf(ini, sizeof ini, "%s/configs/%s.ini", getenv("TALUS_SOURCE_DIR"), scene);
  talus_status st = talus_params_create(&p);
  if (!st) st = talus_params_load(p, ini);
  if (!st) st = talus_scene_build(scene, n, 8, 1, &t, &cell);
  if (!st) st = talus_domain_wrap(t, cell, p, &d);
  if (!st && steps) st = talus_domain_run(d, steps, NULL, NULL);
  if (!st) st = talus_state_write(path, d->tile, d->ctx.step, cell, NULL, NULL);
  talus_domain_free(d);
  talus_params_free(p);
  return st;
}

/* A random layered state of n × n cells of 1 m written to path: column
 * 0's top a slope of 0.3 and 0.2 m a cell with a step of up to 3 m on a
 * quarter of the cells, up to three columns above it after gaps and of
 * thicknesses of 0.05 to 3 m: ramps, cliffs, thin sheets, thin gaps and
 * overhang rims side by side in every arrangement. */
static talus_status make_random_state(int n, unsigned seed, const char *path) {
  talus_tile *t = NULL;
  talus_status st = talus_tile_create(&t, (talus_rect){0, 0, n, n}, 8, 0);
  srand(seed);
  for (int y = 0; !st && y < n; y++)
    for (int x = 0; x < n; x++) {
      size_t idx = talus_idx(t, x, y);
      int cols = 1 + rand() % 4;
      float top = 0.3f * x + 0.2f * y + (rand() % 4 ? 0.0f : (float)(rand() % 300) / 100.0f);
      t->count[idx] = (uint8_t)cols;
      for (int k = 0; k < cols; k++) {
        size_t c = talus_col(t, idx, k);
        if (k) top = t->C[talus_col(t, idx, k - 1)] + 0.05f + (float)(rand() % 300) / 100.0f;
        t->B[c] = top, t->s[c] = (float)(rand() % 3) * 0.05f;
        float gap = 0.05f + (float)(rand() % 300) / 100.0f;
        t->C[c] = k + 1 < cols ? top + t->s[c] + gap : TALUS_TOP;
      }
    }
  if (!st) st = talus_state_write(path, t, 0, 1.0, NULL, NULL);
  talus_tile_free(t);
  return st;
}

/* A ramp, a cliff and an overhang on 24 × 24 cells of 1 m, written to
 * path: column 0's top rises 0.5 m a cell eastwards and 20 m more from
 * x = 12 on (a cliff); cells 16..19 × 8..15 hold a second column from 31
 * to 33 m (an overhang over the ramp). */
static talus_status make_ramp_state(const char *path) {
  talus_tile *t = NULL;
  talus_status st = talus_tile_create(&t, (talus_rect){0, 0, 24, 24}, 2, 0);
  for (int y = 0; !st && y < 24; y++)
    for (int x = 0; x < 24; x++) {
      size_t idx = talus_idx(t, x, y), c1 = talus_col(t, idx, 1);
      t->B[idx] = 0.5f * (float)x + (x >= 12 ? 20.0f : 0.0f);
      if (x < 16 || x > 19 || y < 8 || y > 15) continue;
      t->count[idx] = 2, t->C[idx] = 31.0f, t->B[c1] = 33.0f, t->C[c1] = TALUS_TOP;
    }
  if (!st) st = talus_state_write(path, t, 0, 1.0, NULL, NULL);
  talus_tile_free(t);
  return st;
}

/* On the ramp state's smooth mesh: a ramp is a ramp (every vertex west of
 * the cliff at the mean height of the tops around its corner, or the
 * base), the cliff stays (its corners' vertices at the tops on either
 * side: 5.5 and 26 m) and so does the overhang (its vertices at 31 and
 * 33 m exactly). */
static void check_ramp(const char *state) {
  talus_mesh_options o = {0};
  talus_mesh m = {0};
  double base = 0.0;
  talus_status st = mesh_rect(state, &o, 0, 0, 0, 0, &m, &base);
  CHECK(st == TALUS_OK, "ramp: %s", talus_last_error());
  long ramp = 0, cliff = 0, over = 0, n_ramp = 0, n_over = 0;
  for (size_t v = 0; v < m.nv; v++) {
    const float *p = m.pos + 3 * v;
    int px = (int)p[0], py = (int)p[2];
    float want = px ? 0.5f * (float)px - 0.25f : 0.0f;
    if (p[1] == (float)base) continue;
    if (px < 12) n_ramp++, ramp += p[1] != want;
    if (px == 12) cliff += p[1] != 5.5f && p[1] != 26.0f;
    if (px >= 16 && px <= 20 && py >= 8 && py <= 16 && p[1] > 30.9f)
      n_over++, over += p[1] != 31.0f && p[1] != 33.0f;
  }
  printf("ramp: %zu vertices, %ld on the ramp, %ld on the overhang\n", m.nv, n_ramp, n_over);
  CHECK(n_ramp > 0 && ramp == 0, "ramp: %ld of %ld vertices off the ramp", ramp, n_ramp);
  CHECK(cliff == 0, "ramp: %ld cliff vertices moved", cliff);
  CHECK(n_over > 0 && over == 0, "ramp: %ld of %ld overhang vertices moved", over, n_over);
  talus_mesh_free(&m);
}

/* A triangle as its three positions, rotated to start at the least. */
typedef struct tri9 {
  float v[9];
} tri9;
static int cmp_tri(const void *a, const void *b) {
  return memcmp(a, b, sizeof(tri9));
}
static void tri_set(const talus_mesh *m, tri9 *out) {
  for (size_t t = 0; t < m->nt; t++) {
    int s = 0;
    for (int i = 1; i < 3; i++)
      if (memcmp(m->pos + 3 * m->tri[3 * t + i], m->pos + 3 * m->tri[3 * t + s], 12) < 0) s = i;
    for (int i = 0; i < 3; i++)
      memcpy(out[t].v + 3 * i, m->pos + 3 * m->tri[3 * t + (s + i) % 3], 12);
  }
  qsort(out, m->nt, sizeof *out, cmp_tri);
}

/* Tiles of 40 cells hold exactly the whole mesh's triangles. */
static void check_tiles(const char *state, int n) {
  talus_mesh_options o = {0};
  talus_mesh whole = {0};
  talus_status st = mesh_rect(state, &o, 0, 0, n, n, &whole, NULL);
  tri9 *all = malloc(whole.nt * sizeof *all), *parts = malloc(whole.nt * sizeof *parts);
  size_t np = 0, ok = 1;
  for (int y0 = 0; y0 < n && !st; y0 += 40)
    for (int x0 = 0; x0 < n && !st; x0 += 40) {
      talus_mesh m = {0};
      st = mesh_rect(state, &o, x0, y0, n - x0 < 40 ? n - x0 : 40, n - y0 < 40 ? n - y0 : 40, &m,
                     NULL);
      ok &= np + m.nt <= whole.nt;
      if (ok) tri_set(&m, parts + np), np += m.nt;
      talus_mesh_free(&m);
    }
  CHECK(st == TALUS_OK && ok && np == whole.nt, "tiles: %zu triangles, whole %zu", np, whole.nt);
  if (ok && np == whole.nt) {
    tri_set(&whole, all);
    qsort(parts, np, sizeof *parts, cmp_tri);
    CHECK(!memcmp(all, parts, np * sizeof *all), "tile triangles differ from the whole mesh's");
  }
  free(all), free(parts);
  talus_mesh_free(&whole);
}

/* --multi-only: closed, smaller, every vertex within margin + 1 cells of a
 * cell of several columns. */
static void check_multi_only(const char *state, long full_edges) {
  talus_mesh_options o = {.multi_only = 1, .margin = 2};
  long edges = check_closed("multi", state, &o, 0);
  CHECK(edges > 0 && edges < full_edges, "multi-only mesh: %ld edges of %ld", edges, full_edges);
  talus_bands b;
  talus_state_header h;
  if (talus_bands_read(state, &b) || talus_state_header_bands(&b, &h)) return;
  talus_mesh m = {0};
  mesh_rect(state, &o, 0, 0, 0, 0, &m, NULL);
  long far = 0;
  for (size_t v = 0; v < m.nv; v++) {
    int cx = (int)lround(m.pos[3 * v] / h.cell), cy = (int)lround(m.pos[3 * v + 2] / h.cell),
        near = 0;
    for (int y = cy - 4; y < cy + 4 && !near; y++)
      for (int x = cx - 4; x < cx + 4 && !near; x++)
        near = x >= 0 && y >= 0 && x < b.nx && y < b.ny && b.band[h.columns][y * b.nx + x] > 1;
    far += !near;
  }
  CHECK(far == 0, "%ld multi-only vertices farther than the margin from any overhang", far);
  talus_mesh_free(&m);
  talus_bands_free(&b);
}

/* GLB and PLY of the same mesh: sizes and counts consistent, GLB's JSON. */
static void check_binary(const char *state) {
  talus_mesh_options o = {0};
  talus_mesh m = {0};
  talus_status st = mesh_rect(state, &o, 0, 0, 0, 0, &m, NULL);
  if (!st) st = talus_mesh_write(&m, TALUS_MESH_GLB, tpath("m.glb"));
  if (!st) st = talus_mesh_write(&m, TALUS_MESH_PLY, tpath("m.ply"));
  CHECK(st == TALUS_OK, "GLB/PLY: %s", talus_last_error());
  FILE *f = fopen(tpath("m.glb"), "rb");
  uint32_t hd[5] = {0};
  CHECK(f && fread(hd, 4, 5, f) == 5, "GLB header");
  char *json = calloc(hd[3] + 1, 1);
  CHECK(f && fread(json, 1, hd[3], f) == hd[3], "GLB JSON chunk");
  fseek(f, 0, SEEK_END);
  CHECK(hd[0] == 0x46546C67 && hd[1] == 2 && hd[2] == (uint32_t)ftell(f), "GLB magic, length");
  json_object *doc = json_tokener_parse(json), *acc = NULL, *a0 = NULL, *cnt = NULL;
  CHECK(doc && json_object_object_get_ex(doc, "accessors", &acc), "GLB JSON parses");
  a0 = acc ? json_object_array_get_idx(acc, 2) : NULL;
  CHECK(a0 && json_object_object_get_ex(a0, "count", &cnt) &&
            json_object_get_int64(cnt) == 3 * (int64_t)m.nt,
        "GLB index count");
  json_object_put(doc);
  free(json);
  if (f) fclose(f);
  f = fopen(tpath("m.ply"), "rb");
  char line[128];
  long nv = -1, nf = -1, header = 0;
  while (f && fgets(line, sizeof line, f) && strcmp(line, "end_header\n")) {
    sscanf(line, "element vertex %ld", &nv), sscanf(line, "element face %ld", &nf);
  }
  header = f ? ftell(f) : 0;
  if (f) fseek(f, 0, SEEK_END);
  CHECK(f && nf == (long)m.nt && ftell(f) == header + nv * 24 + nf * 13, "PLY counts and size");
  if (f) fclose(f);
  talus_mesh_free(&m);
}

int main(void) {
  if (!getenv("TALUS_SOURCE_DIR")) return check_skip("test_mesh", "TALUS_SOURCE_DIR unset");
  if (!scratch_open("talus_mesh")) return 1;
  talus_mesh_options o = {0}, blocks = {.blocks = 1};
  talus_status st = make_ramp_state(tpath("ramp.tif"));
  CHECK(st == TALUS_OK, "ramp state: %s", talus_last_error());
  check_ramp(tpath("ramp.tif"));
  check_closed("ramp", tpath("ramp.tif"), &o, 0);
  st = make_state("cave", 64, 0, tpath("cave.tif"));
  CHECK(st == TALUS_OK, "cave state: %s", talus_last_error());
  long cave = check_closed("cave blocks", tpath("cave.tif"), &blocks, 0);
  check_closed("cave", tpath("cave.tif"), &o, 0);
  talus_mesh_options merged = {.merge = 1, .blocks = 1};
  long cave_merged = check_closed("cave blocks merged", tpath("cave.tif"), &merged, 0);
  CHECK(cave_merged * 4 < cave, "cave (flat caps and walls): --merge keeps %ld of %ld edges",
        cave_merged, cave);
  check_binary(tpath("cave.tif"));
  talus_mesh_options cut = {.crop = 1, .crop_x0 = 20, .crop_y0 = 25, .crop_w = 9, .crop_h = 13};
  check_closed("cave crop through the tunnel", tpath("cave.tif"), &cut, 0);
  st = make_state("arches", 128, ARCHES_STEPS, tpath("arches.tif"));
  CHECK(st == TALUS_OK, "arches state: %s", talus_last_error());
  long edges = check_closed("arches", tpath("arches.tif"), &o, 0);
  check_closed("arches blocks", tpath("arches.tif"), &blocks, 0);
  merged.blocks = 0;
  check_closed("arches merged", tpath("arches.tif"), &merged, 0);
  check_multi_only(tpath("arches.tif"), edges);
  check_tiles(tpath("arches.tif"), 128);
  st = make_state("chasm-rain", 64, CHASM_STEPS, tpath("chasm.tif"));
  CHECK(st == TALUS_OK, "chasm state: %s", talus_last_error());
  check_closed("chasm-rain", tpath("chasm.tif"), &o, 0);
  check_closed("chasm-rain merged", tpath("chasm.tif"), &merged, 0);
  for (unsigned seed = 1; seed <= RANDOM_STATES; seed++) {
    char name[32];
    snprintf(name, sizeof name, "random %u", seed);
    st = make_random_state(seed == 1 ? 40 : 24 + (int)seed, seed, tpath("random.tif"));
    CHECK(st == TALUS_OK, "random state: %s", talus_last_error());
    check_closed(name, tpath("random.tif"), &o, TOL_RANDOM);
    check_closed(name, tpath("random.tif"), &blocks, TOL_RANDOM);
    check_closed(name, tpath("random.tif"), &merged, TOL_RANDOM);
    if (seed == 1) check_tiles(tpath("random.tif"), 40);
  }
  scratch_close();
  return check_report("test_mesh");
}
