/*
 * mesh_merge.c — fewer triangles for the blocky mesh (mesh.h,
 * talus_mesh_merge_coplanar): every vertex whose triangles all lie in one
 * axis-aligned plane and face one way (inside a flat cap or a flat wall)
 * is removed and the polygon of its neighbours re-triangulated by ear
 * clipping. The polygon's edges stay as they were, each used once in the
 * same direction, and its new inner edges are used twice, oppositely: a
 * closed mesh stays closed (every edge used by two triangles), covers the
 * same surface and so encloses the same volume. Vertices on a fold, on a
 * mesh's open edge (a tile's) or shared by differently facing triangles
 * stay, so no T-junction appears.
 */
#include "io/export/mesh.h"

#include <stdlib.h>
#include <string.h>

#define RING_MAX 64 /* neighbours a removable vertex may have */

#define DEAD 0xFF /* the direction of a triangle a merge removed */

/* The working mesh: triangles (t.tri, t.dir; DEAD once removed) and, per
 * vertex, the triangles that use it (dead ones filtered when read). */
typedef struct merge_work {
  talus_mesh t;
  uint32_t **vt; /* [nv] triangle lists */
  uint32_t *vn, *vcap;
  size_t nv;
} merge_work;

/* Appends triangle t to vertex v's list. */
static int work_link(merge_work *w, uint32_t v, uint32_t t) {
  if (w->vn[v] == w->vcap[v]) {
    uint32_t cap = w->vcap[v] ? 2 * w->vcap[v] : 8;
    uint32_t *p = realloc(w->vt[v], cap * sizeof *p);
    if (!p) return 0;
    w->vt[v] = p, w->vcap[v] = cap;
  }
  w->vt[v][w->vn[v]++] = t;
  return 1;
}

/* Appends triangle (a, b, c) facing dir and links it to its vertices. */
static int work_push(merge_work *w, uint32_t a, uint32_t b, uint32_t c, uint8_t dir) {
  uint32_t t = (uint32_t)w->t.nt;
  return !talus_mesh_push_tri(&w->t, a, b, c, dir) && work_link(w, a, t) && work_link(w, b, t) &&
         work_link(w, c, t);
}

/* Frees what w owns: the lists and the working triangles. */
static void work_free(merge_work *w) {
  for (size_t v = 0; w->vt && v < w->nv; v++)
    free(w->vt[v]);
  free(w->vt), free(w->vn), free(w->vcap);
  talus_mesh_free(&w->t);
}

/* The axis a face direction (TALUS_MESH_*) is normal to: x, y or z. */
static int dir_axis(int d) {
  return d == TALUS_MESH_E || d == TALUS_MESH_W         ? 0
         : (d == TALUS_MESH_UP || d == TALUS_MESH_DOWN) ? 1
                                                        : 2;
}

/* The ring of vertex v: its live triangles' opposite edges chained into
 * one cycle, into ring[] (returns its length), when they all face one way
 * in v's plane; 0 when v must stay. *dir gets their direction. */
static int vertex_ring(const merge_work *w, const float *pos, uint32_t v, uint32_t ring[RING_MAX],
                       uint32_t tris[RING_MAX], int *dir) {
  uint32_t from[RING_MAX], to[RING_MAX];
  int k = 0;
  for (uint32_t i = 0; i < w->vn[v]; i++) {
    uint32_t t = w->vt[v][i];
    if (w->t.dir[t] == DEAD) continue;
    if (k == RING_MAX || (k && w->t.dir[t] != *dir)) return 0;
    *dir = w->t.dir[t];
    const uint32_t *p = w->t.tri + 3 * t;
    int s = p[0] == v ? 0 : (p[1] == v ? 1 : 2);
    tris[k] = t, from[k] = p[(s + 1) % 3], to[k] = p[(s + 2) % 3], k++;
  }
  if (k < 3) return 0;
  int ax = dir_axis(*dir);
  for (int i = 0; i < k; i++)
    if (pos[3 * from[i] + ax] != pos[3 * v + ax]) return 0;
  ring[0] = from[0];
  for (int n = 1; n <= k; n++) { /* follow from → to; a single cycle of k */
    int next = -1;
    for (int i = 0; i < k; i++)
      if (from[i] == ring[n - 1]) next = next < 0 ? i : -2;
    if (next < 0) return 0;
    if (n == k) return to[next] == ring[0] ? k : 0;
    ring[n] = to[next];
  }
  return 0;
}

/* Twice the signed area of triangle (a, b, c) in the plane's 2D axes. */
static double area2(const double *a, const double *b, const double *c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* 1 when point p lies inside or on triangle (a, b, c) of orientation s. */
static int in_tri(const double *p, const double *a, const double *b, const double *c, double s) {
  return s * area2(a, b, p) >= 0 && s * area2(b, c, p) >= 0 && s * area2(c, a, p) >= 0;
}

/* Ear-clips the ring polygon (k points q, orientation s) into out (k − 2
 * triangles of ring positions); 0 when it finds no proper ear. */
static int ear_clip(double q[][2], int k, double s, int out[][3]) {
  int idx[RING_MAX], n = k, nt = 0;
  for (int i = 0; i < k; i++)
    idx[i] = i;
  while (n > 3) {
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
      int a = idx[(i + n - 1) % n], b = idx[i], c = idx[(i + 1) % n], inside = 0;
      if (s * area2(q[a], q[b], q[c]) <= 0) continue;
      for (int j = 0; j < n && !inside; j++) {
        int p = idx[j];
        inside = p != a && p != b && p != c && in_tri(q[p], q[a], q[b], q[c], s);
      }
      if (!inside) found = i;
    }
    if (found < 0) return 0;
    out[nt][0] = idx[(found + n - 1) % n], out[nt][1] = idx[found],
    out[nt][2] = idx[(found + 1) % n];
    nt++;
    memmove(idx + found, idx + found + 1, (size_t)(n - found - 1) * sizeof *idx);
    n--;
  }
  if (s * area2(q[idx[0]], q[idx[1]], q[idx[2]]) <= 0) return 0;
  out[nt][0] = idx[0], out[nt][1] = idx[1], out[nt][2] = idx[2];
  return 1;
}

/* 1 when a live triangle of w holds both vertices a and b (an edge). */
static int work_has_edge(const merge_work *w, uint32_t a, uint32_t b) {
  for (uint32_t i = 0; i < w->vn[a]; i++) {
    const uint32_t t = w->vt[a][i], *p = w->t.tri + 3 * t;
    if (w->t.dir[t] != DEAD && (p[0] == b || p[1] == b || p[2] == b)) return 1;
  }
  return 0;
}

/* 1 when one of the k − 2 triangles `out` of ring positions would add an
 * inner edge that the mesh already holds elsewhere (two ring vertices
 * joined through another face: a smooth mesh's sloping cap edge beside a
 * wall): that edge would then be used four times. */
static int ring_clashes(const merge_work *w, const uint32_t *ring, int k, int out[][3]) {
  for (int i = 0; i < k - 2; i++)
    for (int c = 0; c < 3; c++) {
      int a = out[i][c], b = out[i][(c + 1) % 3];
      if ((a + 1) % k != b && (b + 1) % k != a && work_has_edge(w, ring[a], ring[b])) return 1;
    }
  return 0;
}

/* Removes vertex v when it lies inside a flat face region; 1 if removed,
 * 0 if it stays, -1 out of memory. */
static int merge_vertex(merge_work *w, const float *pos, uint32_t v) {
  uint32_t ring[RING_MAX], tris[RING_MAX];
  int dir = -1, k = vertex_ring(w, pos, v, ring, tris, &dir);
  if (!k) return 0;
  int ax = dir_axis(dir), u = (ax + 1) % 3, t2 = (ax + 2) % 3;
  double q[RING_MAX][2], s = 0.0;
  for (int i = 0; i < k; i++) {
    q[i][0] = pos[3 * ring[i] + u], q[i][1] = pos[3 * ring[i] + t2];
    for (int j = 0; j < i; j++)
      if (q[i][0] == q[j][0] && q[i][1] == q[j][1]) return 0; /* a pinched ring */
  }
  for (int i = 0; i < k; i++)
    s += q[i][0] * q[(i + 1) % k][1] - q[(i + 1) % k][0] * q[i][1];
  if (s == 0.0) return 0;
  s = s > 0 ? 1.0 : -1.0;
  int out[RING_MAX][3];
  if (!ear_clip(q, k, s, out) || ring_clashes(w, ring, k, out)) return 0;
  for (int i = 0; i < k; i++)
    w->t.dir[tris[i]] = DEAD;
  for (int i = 0; i < k - 2; i++)
    if (!work_push(w, ring[out[i][0]], ring[out[i][1]], ring[out[i][2]], (uint8_t)dir)) return -1;
  return 1;
}

/* Loads m's triangles into w. */
static int work_load(merge_work *w, const talus_mesh *m) {
  w->nv = m->nv;
  w->vt = calloc(m->nv, sizeof *w->vt);
  w->vn = calloc(m->nv, sizeof *w->vn);
  w->vcap = calloc(m->nv, sizeof *w->vcap);
  if (!w->vt || !w->vn || !w->vcap) return 0;
  for (size_t t = 0; t < m->nt; t++)
    if (!work_push(w, m->tri[3 * t], m->tri[3 * t + 1], m->tri[3 * t + 2], m->dir[t])) return 0;
  return 1;
}

/* Replaces m's triangles with w's live ones and drops unused vertices. */
static talus_status work_store(merge_work *w, talus_mesh *m) {
  talus_mesh *t = &w->t;
  uint32_t *map = malloc((m->nv ? m->nv : 1) * sizeof *map);
  float *pos = map ? malloc(3 * (m->nv ? m->nv : 1) * sizeof *pos) : NULL;
  if (!pos) {
    free(map);
    return talus_fail(TALUS_ERR_NOMEM, "export", "no memory to merge the mesh");
  }
  memset(map, 0xff, m->nv * sizeof *map);
  size_t nt = 0, nv = 0;
  for (size_t i = 0; i < t->nt; i++) {
    if (t->dir[i] == DEAD) continue;
    for (int c = 0; c < 3; c++) {
      uint32_t v = t->tri[3 * i + c];
      if (map[v] == UINT32_MAX) {
        memcpy(pos + 3 * nv, m->pos + 3 * v, 3 * sizeof *pos);
        map[v] = (uint32_t)nv++;
      }
      t->tri[3 * nt + c] = map[v];
    }
    t->dir[nt++] = t->dir[i];
  }
  free(map);
  talus_mesh_forget_vertices(m);
  free(m->pos), free(m->tri), free(m->dir);
  m->pos = pos, m->nv = nv, m->cap_v = m->nv;
  m->tri = t->tri, m->dir = t->dir, m->nt = nt, m->cap_t = t->cap_t;
  t->tri = NULL, t->dir = NULL;
  return TALUS_OK;
}

talus_status talus_mesh_merge_coplanar(talus_mesh *m) {
  merge_work w;
  memset(&w, 0, sizeof w);
  int ok = work_load(&w, m);
  for (int pass = 0; ok && pass < 2; pass++)
    for (uint32_t v = 0; ok && v < (uint32_t)w.nv; v++)
      ok = merge_vertex(&w, m->pos, v) >= 0;
  talus_status st =
      ok ? work_store(&w, m) : talus_fail(TALUS_ERR_NOMEM, "export", "no memory to merge the mesh");
  work_free(&w);
  return st;
}
