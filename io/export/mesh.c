/*
 * mesh.c — the watertight mesh of a layered state's solid, smooth or
 * blocky (mesh.h): a state read window by window into each cell's merged
 * solid intervals, each cell corner's profile (its breaks, the solid
 * between, the groups a smooth mesh draws as one vertex), then per cell
 * its tops, bottoms and walls, with vertices looked up by (corner, group,
 * solid side) so faces share them exactly where they share edges. Owns
 * the interval model, the corner profiles and union-find and the vertex
 * table; the file formats are mesh_write.c's.
 */
#include "io/export/mesh.h"
#include "io/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IV_MAX     TALUS_NZ_MAX /* merged intervals a cell can hold */
#define BREAK_MAX  (8 * IV_MAX) /* interval ends of four cells */
#define LADDER_MAX 6 /* slabs around a group: at most 4 breaks, each changing a quadrant once */

/* ---------------------------------------------------------------------
 * The vertex table: (corner x, corner y, height bits, side) → index
 * ------------------------------------------------------------------- */

typedef struct mesh_key {
  int32_t px, py;
  uint32_t z;
  uint32_t side; /* the quadrant standing for the vertex's solid side */
} mesh_key;

struct mesh_hash {
  mesh_key *key;
  uint32_t *idx; /* UINT32_MAX: empty */
  size_t cap;    /* a power of two */
};

/* The hash of a vertex key (multiplicative mixing of its four fields). */
static uint64_t key_hash(const mesh_key *k) {
  uint64_t h = (uint64_t)(uint32_t)k->px * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)(uint32_t)k->py + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= ((uint64_t)k->z << 2 | k->side) * 0x165667B19E3779F9ull;
  return h ^ (h >> 29);
}

/* Grows the table to cap slots (rehashing what it holds). */
static talus_status hash_grow(struct mesh_hash *t, size_t cap) {
  mesh_key *key = malloc(cap * sizeof *key);
  uint32_t *idx = malloc(cap * sizeof *idx);
  if (!key || !idx) {
    free(key), free(idx);
    return talus_fail(TALUS_ERR_NOMEM, "export", "no memory for %zu mesh vertices", cap / 2);
  }
  memset(idx, 0xff, cap * sizeof *idx);
  for (size_t i = 0; i < t->cap; i++) {
    if (t->idx[i] == UINT32_MAX) continue;
    size_t j = key_hash(&t->key[i]) & (cap - 1);
    while (idx[j] != UINT32_MAX)
      j = (j + 1) & (cap - 1);
    key[j] = t->key[i], idx[j] = t->idx[i];
  }
  free(t->key), free(t->idx);
  t->key = key, t->idx = idx, t->cap = cap;
  return TALUS_OK;
}

/* Appends a vertex at (x, y, z). */
static talus_status mesh_push_vertex(talus_mesh *m, float x, float y, float z) {
  if (m->nv == m->cap_v) {
    size_t cap = m->cap_v ? 2 * m->cap_v : 4096;
    float *p = realloc(m->pos, 3 * cap * sizeof *p);
    if (!p || cap > UINT32_MAX) return talus_fail(TALUS_ERR_NOMEM, "export", "mesh too large");
    m->pos = p, m->cap_v = cap;
  }
  float *p = m->pos + 3 * m->nv++;
  p[0] = x, p[1] = y, p[2] = z;
  return TALUS_OK;
}

/* The index of the vertex with key k at position (x, y, z), added when new. */
static talus_status mesh_vertex(talus_mesh *m, const mesh_key *k, float x, float y, float z,
                                uint32_t *out) {
  struct mesh_hash *t = m->hash;
  talus_status st = TALUS_OK;
  if (2 * (m->nv + 1) > t->cap) st = hash_grow(t, t->cap ? 2 * t->cap : 8192);
  if (st) return st;
  size_t j = key_hash(k) & (t->cap - 1);
  for (; t->idx[j] != UINT32_MAX; j = (j + 1) & (t->cap - 1))
    if (!memcmp(&t->key[j], k, sizeof *k)) return *out = t->idx[j], TALUS_OK;
  st = mesh_push_vertex(m, x, y, z);
  if (st) return st;
  t->key[j] = *k, t->idx[j] = *out = (uint32_t)(m->nv - 1);
  return TALUS_OK;
}

/* Appends triangle (a, b, c) facing direction dir. */
talus_status talus_mesh_push_tri(talus_mesh *m, uint32_t a, uint32_t b, uint32_t c, int dir) {
  if (m->nt == m->cap_t) {
    size_t cap = m->cap_t ? 2 * m->cap_t : 8192;
    uint32_t *t = realloc(m->tri, 3 * cap * sizeof *t);
    if (t) m->tri = t;
    uint8_t *d = t ? realloc(m->dir, cap) : NULL;
    if (!d) return talus_fail(TALUS_ERR_NOMEM, "export", "no memory for %zu triangles", cap);
    m->dir = d, m->cap_t = cap;
  }
  uint32_t *t = m->tri + 3 * m->nt;
  t[0] = a, t[1] = b, t[2] = c;
  m->dir[m->nt++] = (uint8_t)dir;
  return TALUS_OK;
}

void talus_mesh_forget_vertices(talus_mesh *m) {
  if (m->hash) free(m->hash->key), free(m->hash->idx), free(m->hash);
  m->hash = NULL;
}

void talus_mesh_free(talus_mesh *m) {
  if (!m) return;
  talus_mesh_forget_vertices(m);
  free(m->pos), free(m->tri), free(m->dir);
  memset(m, 0, sizeof *m);
}

double talus_mesh_volume(const talus_mesh *m) {
  double v = 0.0;
  const float *o = m->pos;
  for (size_t t = 0; t < m->nt; t++) {
    double p[3][3];
    for (int i = 0; i < 3; i++)
      for (int c = 0; c < 3; c++)
        p[i][c] = (double)m->pos[3 * m->tri[3 * t + i] + c] - o[c];
    v += p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
         p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
         p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0]);
  }
  return v / 6.0;
}

/* ---------------------------------------------------------------------
 * The source: a state's bands, and windows of cells as solid intervals
 * ------------------------------------------------------------------- */

struct talus_mesh_source {
  talus_bands_reader *r;
  talus_mesh_options o;
  int nx, ny, L; /* L: layers stored */
  double cell, base;
  double step; /* [m] the thickest step a smooth mesh smooths; 0: blocky */
  int columns, surface, band[TALUS_NZ_MAX][TALUS_STATE_FIELDS]; /* of field f of layer k */
  const talus_georef *geo;
};

/* A window of cells: each cell's merged solid intervals (none when NoData
 * or not selected). */
typedef struct mesh_win {
  int x0, y0, w, h;
  uint8_t *n, *count; /* intervals, columns */
  float *lo, *hi;     /* [IV_MAX] per cell */
  float *v, *top;     /* a band's window, the layer tops [L] */
  const talus_mesh_source *s;
} mesh_win;

int talus_mesh_source_nx(const talus_mesh_source *s) {
  return s->nx;
}
int talus_mesh_source_ny(const talus_mesh_source *s) {
  return s->ny;
}
double talus_mesh_source_cell(const talus_mesh_source *s) {
  return s->cell;
}
double talus_mesh_source_base(const talus_mesh_source *s) {
  return s->base;
}

/* The band indices of the stored layers; a mesh needs each one's
 * bedrock, sand and ceiling. */
static talus_status source_bands(talus_mesh_source *s) {
  s->L = talus_state_layer_bands(s->r, s->band);
  for (int k = 0; k < s->L; k++)
    if (s->band[k][TALUS_STATE_SAND] < 0 || s->band[k][TALUS_STATE_CEILING] < 0)
      return talus_fail(TALUS_ERR_FORMAT, "export", "state layer %d lacks sand or ceiling", k);
  return TALUS_OK;
}

/* Reads band b over the window into w->v. */
static talus_status win_band(mesh_win *w, int b) {
  return talus_bands_reader_read(w->s->r, b, w->x0, w->y0, w->w, w->h, w->v);
}

/* Allocates a window of (x0, y0, w, h), clamped to the map. */
static talus_status win_alloc(mesh_win *w, const talus_mesh_source *s, int x0, int y0, int x1,
                              int y1) {
  memset(w, 0, sizeof *w);
  w->s = s;
  w->x0 = x0 < 0 ? 0 : x0, w->y0 = y0 < 0 ? 0 : y0;
  w->w = (x1 > s->nx ? s->nx : x1) - w->x0, w->h = (y1 > s->ny ? s->ny : y1) - w->y0;
  size_t n = (size_t)w->w * w->h, L = s->L ? (size_t)s->L : 1;
  talus_status st = talus_alloc((void **)&w->n, n, "mesh window");
  if (!st) st = talus_alloc((void **)&w->count, n, "mesh window");
  if (!st) st = talus_alloc((void **)&w->lo, n * IV_MAX * sizeof(float), "mesh window");
  if (!st) st = talus_alloc((void **)&w->hi, n * IV_MAX * sizeof(float), "mesh window");
  if (!st) st = talus_alloc((void **)&w->v, n * sizeof(float), "mesh window");
  if (!st) st = talus_alloc((void **)&w->top, n * L * sizeof(float), "mesh window");
  return st;
}

/* Frees the window's arrays (not the window). */
static void win_free(mesh_win *w) {
  talus_free(w->n), talus_free(w->count), talus_free(w->lo), talus_free(w->hi);
  talus_free(w->v), talus_free(w->top);
}

/* Adds solid [lo, hi] to cell i, merging it into the last interval when
 * they touch; empty intervals are dropped. */
static void win_push(mesh_win *w, size_t i, float lo, float hi) {
  if (!(hi > lo)) return;
  float *L = w->lo + i * IV_MAX, *H = w->hi + i * IV_MAX;
  int n = w->n[i];
  if (n && lo <= H[n - 1]) {
    H[n - 1] = hi > H[n - 1] ? hi : H[n - 1];
    return;
  }
  if (n < IV_MAX) L[n] = lo, H[n] = hi, w->n[i] = (uint8_t)(n + 1);
}

/* Column counts (0 on NoData) and the layer tops B + s into w->top. */
static talus_status win_tops(mesh_win *w) {
  const talus_mesh_source *s = w->s;
  size_t n = (size_t)w->w * w->h;
  talus_status st = win_band(w, s->surface);
  for (size_t i = 0; !st && i < n; i++)
    w->count[i] = talus_state_nodata(s->geo, w->v[i]) ? 0 : 1;
  if (!st) st = win_band(w, s->columns);
  for (size_t i = 0; !st && i < n; i++)
    if (w->count[i]) {
      float c = w->v[i];
      if (!(c >= 1.0f && c <= (float)s->L))
        return talus_fail(TALUS_ERR_FORMAT, "export", "column count %g at (%zu, %zu)", c,
                          w->x0 + i % w->w, w->y0 + i / w->w);
      w->count[i] = (uint8_t)c;
    }
  for (int k = 0; !st && k < s->L; k++) {
    float *top = w->top + (size_t)k * n;
    st = win_band(w, s->band[k][TALUS_STATE_BEDROCK]);
    if (!st) memcpy(top, w->v, n * sizeof(float));
    if (!st) st = win_band(w, s->band[k][TALUS_STATE_SAND]);
    for (size_t i = 0; !st && i < n; i++)
      top[i] += w->v[i];
  }
  return st;
}

/* Each cell's intervals: column k from its floor (the base, or C of k − 1)
 * to its top. */
static talus_status win_fill(mesh_win *w) {
  const talus_mesh_source *s = w->s;
  size_t n = (size_t)w->w * w->h;
  talus_status st = win_tops(w);
  memset(w->n, 0, n);
  for (size_t i = 0; !st && i < n; i++)
    if (w->count[i]) win_push(w, i, (float)s->base, w->top[i]);
  for (int k = 1; !st && k < s->L; k++) {
    st = win_band(w, s->band[k - 1][TALUS_STATE_CEILING]); /* the floor of column k */
    for (size_t i = 0; !st && i < n; i++)
      if (w->count[i] > k) win_push(w, i, w->v[i], w->top[(size_t)k * n + i]);
  }
  return st;
}

/* Drops the cells outside the crop rectangle: the mesh closes along it. */
static void win_crop(mesh_win *w) {
  const talus_mesh_options *o = &w->s->o;
  for (int y = 0; o->crop && y < w->h; y++)
    for (int x = 0; x < w->w; x++) {
      int gx = w->x0 + x, gy = w->y0 + y;
      if (gx < o->crop_x0 || gy < o->crop_y0 || gx >= o->crop_x0 + o->crop_w ||
          gy >= o->crop_y0 + o->crop_h)
        w->n[(size_t)y * w->w + x] = 0;
    }
}

/* Drops the cells the selection leaves out: with multi_only, those farther
 * than the margin from every cell of more than one column; with crop,
 * those outside it. */
static talus_status win_select(mesh_win *w) {
  const talus_mesh_options *o = &w->s->o;
  win_crop(w);
  if (!o->multi_only) return TALUS_OK;
  size_t n = (size_t)w->w * w->h;
  uint8_t *keep = calloc(n, 1);
  if (!keep) return talus_fail(TALUS_ERR_NOMEM, "export", "no memory for the selection");
  int m = o->margin;
  for (int y = 0; y < w->h; y++)
    for (int x = 0; x < w->w; x++) {
      if (w->count[(size_t)y * w->w + x] < 2) continue;
      for (int yy = y - m > 0 ? y - m : 0; yy <= y + m && yy < w->h; yy++)
        for (int xx = x - m > 0 ? x - m : 0; xx <= x + m && xx < w->w; xx++)
          keep[(size_t)yy * w->w + xx] = 1;
    }
  for (size_t i = 0; i < n; i++)
    if (!keep[i]) w->n[i] = 0;
  free(keep);
  return TALUS_OK;
}

/* ---------------------------------------------------------------------
 * Corners: the four cells around one, their interval ends and the union
 * of their solid sides at a height
 * ------------------------------------------------------------------- */

/* The intervals of global cell (gx, gy): count in *n, NULL when outside
 * the window (never solid). */
static const float *win_cell(const mesh_win *w, int gx, int gy, int *n, const float **hi) {
  int x = gx - w->x0, y = gy - w->y0;
  if (x < 0 || y < 0 || x >= w->w || y >= w->h) return *n = 0, *hi = NULL, NULL;
  size_t i = (size_t)y * w->w + x;
  *n = w->n[i], *hi = w->hi + i * IV_MAX;
  return w->lo + i * IV_MAX;
}

/* Quadrant q of corner (px, py): 0 NW, 1 NE, 2 SE, 3 SW of the corner. */
static void corner_cell(int px, int py, int q, int *gx, int *gy) {
  *gx = px - (q == 0 || q == 3);
  *gy = py - (q == 0 || q == 1);
}

/* Whether the cell's solid fills heights just below z. */
static int solid_below(const float *lo, const float *hi, int n, float z) {
  for (int i = 0; i < n; i++)
    if (lo[i] < z && z <= hi[i]) return 1;
  return 0;
}

/* The union-find over a corner's four quadrants: the root of a, and the
 * union of a's and b's sets (the smaller index becomes the root). */
static int uf_find(int *uf, int a) {
  while (uf[a] != a)
    a = uf[a];
  return a;
}
static void uf_union(int *uf, int a, int b) {
  a = uf_find(uf, a), b = uf_find(uf, b);
  if (a != b) uf[a > b ? a : b] = a < b ? a : b;
}

/* In a cycle of four elements (solid flags s) with a face between element
 * j and j + 1 owned by owner[j], merges the owners of the two faces that
 * bound each run of solid elements: they share the edge. */
static void uf_runs(int *uf, const int s[4], const int owner[4]) {
  for (int j = 0; j < 4; j++) {
    if (!s[j] || s[(j + 3) % 4]) continue; /* not the start of a run */
    int e = j;
    while (s[(e + 1) % 4] && (e + 1) % 4 != j)
      e = (e + 1) % 4;
    uf_union(uf, owner[(j + 3) % 4], owner[e]);
  }
}

/* Around the horizontal half-edge between quadrants a and b at a vertex
 * whose slabs, bottom to top, hold solid quadrants st[0..L-1] (a single
 * break: L = 2, below and above), the solid pieces form a ladder: a's slab
 * i touches a's slab i + 1 (or a cap of a lies between) and b's slab i (or
 * a wall between them, owned by its solid side). Merges the owners of all
 * faces that bound each connected solid piece: they meet at the vertex
 * around it. */
static void uf_ladder(int *uf, const uint8_t *st, int L, int a, int b) {
  int el[2 * LADDER_MAX], first[2 * LADDER_MAX]; /* a's slab i: i, b's: L + i */
  for (int i = 0; i < 2 * L; i++)
    el[i] = i, first[i] = -1;
  for (int i = 0; i < L; i++) {
    int sa = st[i] >> a & 1, sb = st[i] >> b & 1;
    if (i + 1 < L && sa && st[i + 1] >> a & 1) uf_union(el, i, i + 1);
    if (i + 1 < L && sb && st[i + 1] >> b & 1) uf_union(el, L + i, L + i + 1);
    if (sa && sb) uf_union(el, i, L + i);
  }
  for (int i = 0; i < L; i++)
    for (int f = 0; f < 3; f++) { /* cap of a above slab i, cap of b, wall at slab i */
      if (f < 2 && i + 1 == L) continue;
      int qa = f == 1 ? b : a, qb = f == 0 ? a : b, ia = i + (f == 1) * L;
      int ib = f == 2 ? L + i : ia + 1, j = f == 2 ? i : i + 1;
      int s0 = st[i] >> qa & 1, s1 = st[j] >> qb & 1;
      if (s0 == s1) continue; /* no face between */
      int root = uf_find(el, s0 ? ia : ib), owner = s0 ? qa : qb;
      if (first[root] < 0)
        first[root] = owner;
      else
        uf_union(uf, first[root], owner);
    }
}

/* The quadrant that stands for quadrant q's solid side at a vertex of a
 * corner whose slabs, bottom to top, hold solid quadrants (bit q)
 * st[0..L-1] (a single break: below and above it): the union-find over the
 * four quadrants of the faces that meet there (the vertical segments below
 * and above, the ladders of the four horizontal half-edges), its smallest
 * member. */
static int corner_side(const uint8_t *st, int L, int q) {
  int uf[4] = {0, 1, 2, 3};
  for (int v = 0; v < 2; v++) { /* the vertical segments: walls owned by their solid side */
    int s[4], owner[4];
    for (int j = 0; j < 4; j++)
      s[j] = st[v ? 0 : L - 1] >> j & 1;
    for (int j = 0; j < 4; j++)
      owner[j] = s[j] ? j : (j + 1) % 4;
    uf_runs(uf, s, owner);
  }
  for (int a = 0; a < 4; a++)
    uf_ladder(uf, st, L, a, (a + 1) % 4);
  return uf_find(uf, q);
}

/* ---------------------------------------------------------------------
 * Corner profiles: the breaks up a corner, the solid between them, and
 * the groups of breaks a smooth mesh draws as one vertex
 * ------------------------------------------------------------------- */

/* The column above corner (px, py): its four cells' interval ends (the
 * breaks) z[n], sorted and unique; the solid quadrants (bit q) of each
 * slab, pat[j] just below z[j] and pat[n] above the last (none); and per
 * break its group of breaks g0..g1 drawn as one vertex at height h (a
 * smooth mesh's; in a blocky one each break is its own group). */
typedef struct corner_prof {
  int px, py, n;
  double cell;
  float z[BREAK_MAX], h[BREAK_MAX];
  uint8_t pat[BREAK_MAX + 1], g0[BREAK_MAX], g1[BREAK_MAX];
} corner_prof;

/* The breaks of corner p and the solid quadrants of its slabs. */
static void prof_breaks(corner_prof *p, const mesh_win *w) {
  int m = 0;
  for (int q = 0; q < 4; q++) {
    int gx, gy, n;
    const float *hi, *lo;
    corner_cell(p->px, p->py, q, &gx, &gy);
    lo = win_cell(w, gx, gy, &n, &hi);
    for (int i = 0; i < n; i++)
      p->z[m++] = lo[i], p->z[m++] = hi[i];
  }
  for (int i = 1; i < m; i++) /* insertion sort: a few dozen at most */
    for (int j = i; j > 0 && p->z[j - 1] > p->z[j]; j--) {
      float t = p->z[j];
      p->z[j] = p->z[j - 1], p->z[j - 1] = t;
    }
  p->n = 0;
  for (int i = 0; i < m; i++)
    if (!p->n || p->z[i] != p->z[p->n - 1]) p->z[p->n++] = p->z[i];
  for (int j = 0; j < p->n; j++) {
    p->pat[j] = 0;
    for (int q = 0; q < 4; q++) {
      int gx, gy, n;
      const float *hi, *lo;
      corner_cell(p->px, p->py, q, &gx, &gy);
      lo = win_cell(w, gx, gy, &n, &hi);
      p->pat[j] |= (uint8_t)(solid_below(lo, hi, n, p->z[j]) << q);
    }
  }
  p->pat[p->n] = 0;
}

/* 1 when break e + 1 may join the group of breaks s..e: the slab between
 * them is mixed (walls meet along the corner there: the caps it separates
 * are one surface stepping), at most `step` thick; no quadrant changes
 * twice from below break s to above break e + 1 (no cap would fold onto
 * another of its cell's: thin sheets and gaps stay open), and no two
 * quadrants side by side change oppositely (a top beside a bottom: an
 * overhang's rim or a thin overlap, which would pinch to an edge). */
static int prof_joins(const corner_prof *p, int s, int e, double step) {
  int slab = p->pat[e + 1];
  if (!slab || slab == 15 || !(p->z[e + 1] - p->z[e] <= step) || e + 3 - s > LADDER_MAX) return 0;
  int lost = 0, got = 0;
  for (int j = s; j <= e + 1; j++) {
    int l = p->pat[j] & ~p->pat[j + 1], g = p->pat[j + 1] & ~p->pat[j];
    if ((lost | got) & (l | g)) return 0;
    lost |= l, got |= g;
  }
  int next = (lost << 1 | lost >> 3) & 15; /* quadrant q + 1 of each that lost */
  return !(next & got) && !((got << 1 | got >> 3) & 15 & lost);
}

/* The height of the group of breaks s..e: the mean of the heights at which
 * its quadrants change (a single break keeps its own). */
static float prof_height(const corner_prof *p, int s, int e) {
  if (s == e) return p->z[s];
  double sum = 0.0;
  int k = 0;
  for (int j = s; j <= e; j++)
    for (int q = 0; q < 4; q++)
      if ((p->pat[j] ^ p->pat[j + 1]) >> q & 1) sum += p->z[j], k++;
  return (float)(sum / k);
}

/* The profile of corner (px, py) of window w, its breaks grouped greedily
 * from the bottom (prof_joins) when the source smooths (step > 0). */
static void corner_profile(const mesh_win *w, int px, int py, corner_prof *p) {
  double step = w->s->step;
  p->px = px, p->py = py, p->cell = w->s->cell;
  prof_breaks(p, w);
  for (int s = 0, e = 0; s < p->n; s = e + 1) {
    for (e = s; e + 1 < p->n && step > 0.0 && prof_joins(p, s, e, step);)
      e++;
    float h = prof_height(p, s, e);
    for (int j = s; j <= e; j++)
      p->g0[j] = (uint8_t)s, p->g1[j] = (uint8_t)e, p->h[j] = h;
  }
}

/* The index of break z of p (z is one). */
static int prof_find(const corner_prof *p, float z) {
  int j = 0;
  while (j + 1 < p->n && p->z[j] < z)
    j++;
  return j;
}

/* The vertex of corner p at break j (mid = 0), or in the middle of the
 * slab below it (mid = 1: a pinch, below), on quadrant q's solid side. A
 * group's breaks, and the middles of its slabs, are its one vertex at the
 * group's height, keyed by its first break; its solid side is found over
 * the group's slabs (corner_side). A middle of its own is keyed by the
 * break below it and a flag (it may lie at that break's height when the
 * slab is one float thin). */
static talus_status corner_vertex(talus_mesh *m, const corner_prof *p, int j, int mid, int q,
                                  uint32_t *out) {
  int s = p->g0[j], e = p->g1[j], side;
  float key = p->z[s], y = p->h[s];
  if (mid && p->g0[j - 1] != s) {
    uint8_t slab[2] = {p->pat[j], p->pat[j]};
    key = p->z[j - 1], y = 0.5f * (p->z[j - 1] + p->z[j]);
    side = corner_side(slab, 2, q) | 4;
  } else
    side = corner_side(p->pat + s, e - s + 2, q);
  mesh_key k = {p->px, p->py, 0, (uint32_t)side};
  memcpy(&k.z, &key, sizeof key);
  return mesh_vertex(m, &k, (float)(p->px * p->cell), y, (float)(p->py * p->cell), out);
}

/* ---------------------------------------------------------------------
 * Faces of one cell
 * ------------------------------------------------------------------- */

/* A cell's corners (NW, NE, SE, SW) relative to it, and its quadrant at each. */
static const int corner_dx[4] = {0, 1, 1, 0}, corner_dy[4] = {0, 0, 1, 1};
static const int corner_q[4] = {2, 3, 0, 1};
enum { NW, NE, SE, SW };

/* Walls by direction (E, N, W, S): the neighbour's offset, the corners Pa,
 * Pb such that (Pa, z0), (Pb, z0), (Pb, z1) winds outwards, the normal. */
static const struct {
  int dx, dy, a, b, dir;
} walls[4] = {{1, 0, SE, NE, TALUS_MESH_E},
              {0, -1, NE, NW, TALUS_MESH_N},
              {-1, 0, NW, SW, TALUS_MESH_W},
              {0, 1, SW, SE, TALUS_MESH_S}};

/* 1 when the edge of cell (gx, gy) towards d is pinched at z, the cell's
 * solid ending there (top = 1: below z; else above) and the neighbour's
 * starting: the two solids touch along the edge, four faces would share
 * it. */
static int edge_pinched(const mesh_win *w, int gx, int gy, int d, float z, int top) {
  int n;
  const float *hi, *lo = win_cell(w, gx + walls[d].dx, gy + walls[d].dy, &n, &hi);
  for (int i = 0; i < n; i++)
    if (top ? lo[i] == z : hi[i] == z) return 1;
  return 0;
}

/* The vertex in the middle of the edge of cell (gx, gy) towards d at
 * height z, of the solid below z (above = 0) or above: a pinched edge is
 * split there, each solid's two faces along it sharing their own. */
static talus_status edge_mid(talus_mesh *m, const mesh_win *w, int gx, int gy, int d, float z,
                             int above, uint32_t *out) {
  int ax = gx + corner_dx[walls[d].a], ay = gy + corner_dy[walls[d].a];
  int bx = gx + corner_dx[walls[d].b], by = gy + corner_dy[walls[d].b];
  mesh_key k = {ax < bx ? ax : bx, ay < by ? ay : by, 0, (uint32_t)(16 | (ay == by) << 1 | above)};
  memcpy(&k.z, &z, sizeof z);
  double c = w->s->cell;
  return mesh_vertex(m, &k, (float)(0.5 * (ax + bx) * c), z, (float)(0.5 * (ay + by) * c), out);
}

/* A cap's corners in the order that winds outwards (bottom, top), and
 * the edge (walls[] direction) from each to the next. */
static const int cap_cycle[2][4] = {{NW, NE, SE, SW}, {NW, SW, SE, NE}};
static const int cap_edge[2][4] = {{1, 0, 3, 2}, {2, 3, 0, 1}};

/* A cap of cell (gx, gy) at z round the n vertices v of its outline
 * (corners and pinched edges' middles): a fan from a vertex of its own at
 * the cell's centre, at their mean height. */
static talus_status cap_fan(talus_mesh *m, const mesh_win *w, int gx, int gy, float z, int up,
                            const uint32_t *v, int n) {
  double y = 0.0, c = w->s->cell;
  for (int i = 0; i < n; i++)
    y += m->pos[3 * v[i] + 1];
  mesh_key k = {gx, gy, 0, (uint32_t)(32 | up)};
  memcpy(&k.z, &z, sizeof z);
  uint32_t ctr;
  talus_status st =
      mesh_vertex(m, &k, (float)((gx + 0.5) * c), (float)(y / n), (float)((gy + 0.5) * c), &ctr);
  for (int i = 0; i < n && !st; i++)
    st = talus_mesh_push_tri(m, ctr, v[i], v[(i + 1) % n], up ? TALUS_MESH_UP : TALUS_MESH_DOWN);
  return st;
}

/* The top (up = 1) or bottom face at height z of cell (gx, gy), whose
 * corners' profiles are cp: two triangles, or a fan (cap_fan) where an
 * edge is pinched. */
static talus_status cell_cap(talus_mesh *m, const mesh_win *w, const corner_prof *cp, int gx,
                             int gy, float z, int up) {
  uint32_t v[8];
  int n = 0, split = 0;
  talus_status st = TALUS_OK;
  for (int i = 0; i < 4 && !st; i++) {
    int c = cap_cycle[up][i], d = cap_edge[up][i];
    st = corner_vertex(m, &cp[c], prof_find(&cp[c], z), 0, corner_q[c], &v[n++]);
    if (!st && edge_pinched(w, gx, gy, d, z, up))
      split = 1, st = edge_mid(m, w, gx, gy, d, z, !up, &v[n++]);
  }
  if (st || split) return st ? st : cap_fan(m, w, gx, gy, z, up, v, n);
  int dir = up ? TALUS_MESH_UP : TALUS_MESH_DOWN;
  st = talus_mesh_push_tri(m, v[0], v[1], v[2], dir);
  return st ? st : talus_mesh_push_tri(m, v[0], v[2], v[3], dir);
}

/* Appends the vertex of corner p at break j (or the middle below it) on
 * quadrant q's side to v unless it is the last one again (a group's
 * breaks are one vertex). */
static talus_status side_push(talus_mesh *m, const corner_prof *p, int j, int mid, int q,
                              uint32_t *v, int *n) {
  uint32_t i;
  talus_status st = corner_vertex(m, p, j, mid, q, &i);
  if (!st && (!*n || v[*n - 1] != i)) v[(*n)++] = i;
  return st;
}

/* The vertices of a wall's side up corner p (the cell's quadrant q there)
 * from break z0 to break z1 and at every break between, into v; the count
 * into n. Where two diagonal cells' solids touch along the corner's edge
 * (a pinched slab), the segment's end vertices may be shared by both
 * sheets (they meet there through other faces), so each sheet gets a
 * vertex of its own at the segment's middle: the edge is then used by two
 * triangles, not four. */
static talus_status wall_side(talus_mesh *m, const corner_prof *p, int q, float z0, float z1,
                              uint32_t *v, int *n) {
  int j0 = prof_find(p, z0), j1 = prof_find(p, z1);
  talus_status st = TALUS_OK;
  *n = 0;
  for (int j = j0; j <= j1 && !st; j++) {
    if (j > j0 && (p->pat[j] == 5 || p->pat[j] == 10)) st = side_push(m, p, j, 1, q, v, n);
    if (!st) st = side_push(m, p, j, 0, q, v, n);
  }
  return st;
}

/* A wall with a pinched edge: a fan from the middle f of that edge round
 * the wall's outline, which winds outwards: a[0], the bottom edge's middle
 * mid[0] (if pinched), b[0..nb-1], the top edge's mid[1] (if), a[na-1..1]. */
static talus_status wall_fan(talus_mesh *m, int dir, const uint32_t *a, int na, const uint32_t *b,
                             int nb, const int has[2], const uint32_t mid[2]) {
  uint32_t cyc[4 * BREAK_MAX + 12], f = has[1] ? mid[1] : mid[0];
  int n = 0;
  cyc[n++] = a[0];
  if (has[0]) cyc[n++] = mid[0];
  for (int j = 0; j < nb; j++)
    cyc[n++] = b[j];
  if (has[1]) cyc[n++] = mid[1];
  for (int i = na - 1; i > 0; i--)
    cyc[n++] = a[i];
  talus_status st = TALUS_OK;
  for (int i = 0; i < n && !st; i++)
    if (cyc[i] != f && cyc[(i + 1) % n] != f)
      st = talus_mesh_push_tri(m, f, cyc[i], cyc[(i + 1) % n], dir);
  return st;
}

/* A ladder between a wall's two sides' vertices a (na) and b (nb). */
static talus_status wall_ladder(talus_mesh *m, int dir, const uint32_t *a, int na,
                                const uint32_t *b, int nb) {
  talus_status st = TALUS_OK;
  int i = 0, j = 0;
  while (!st && (i < na - 1 || j < nb - 1)) {
    if (j < nb - 1 && (i == na - 1 || m->pos[3 * b[j + 1] + 1] <= m->pos[3 * a[i + 1] + 1])) {
      st = talus_mesh_push_tri(m, a[i], b[j], b[j + 1], dir);
      j++;
    } else {
      st = talus_mesh_push_tri(m, a[i], b[j], a[i + 1], dir);
      i++;
    }
  }
  return st;
}

/* The wall [z0, z1] of cell (gx, gy) towards direction d, its corners'
 * profiles cp, its solid's interval ending at z0 (end[0]) or z1 (end[1]):
 * a ladder between its two sides' vertices, split at every interval end
 * (a side a smooth group shrank to one vertex makes a fan; both so shrunk,
 * no wall); a fan from its middle where the neighbour's solid starts as
 * the cell's ends at z0 or z1 (a pinched edge). */
static talus_status cell_wall(talus_mesh *m, const mesh_win *w, const corner_prof *cp, int gx,
                              int gy, int d, float z0, float z1, const int end[2]) {
  uint32_t a[2 * BREAK_MAX + 4], b[2 * BREAK_MAX + 4], mid[2]; /* ends and pinch middles */
  int na = 0, nb = 0, ca = walls[d].a, cb = walls[d].b, has[2];
  talus_status st = wall_side(m, &cp[ca], corner_q[ca], z0, z1, a, &na);
  if (!st) st = wall_side(m, &cp[cb], corner_q[cb], z0, z1, b, &nb);
  for (int e = 0; e < 2 && !st; e++) {
    has[e] = end[e] && edge_pinched(w, gx, gy, d, e ? z1 : z0, e);
    if (has[e]) st = edge_mid(m, w, gx, gy, d, e ? z1 : z0, !e, &mid[e]);
  }
  if (st) return st;
  if (has[0] || has[1]) return wall_fan(m, walls[d].dir, a, na, b, nb, has, mid);
  return wall_ladder(m, walls[d].dir, a, na, b, nb);
}

/* The walls towards d of cell (gx, gy) (its corners' profiles cp): its
 * intervals less the neighbour's. */
static talus_status cell_walls(talus_mesh *m, const mesh_win *w, const corner_prof *cp, int gx,
                               int gy, int d) {
  int n, nn;
  const float *hi, *nhi, *lo = win_cell(w, gx, gy, &n, &hi);
  const float *nlo = win_cell(w, gx + walls[d].dx, gy + walls[d].dy, &nn, &nhi);
  talus_status st = TALUS_OK;
  for (int i = 0; i < n && !st; i++) {
    float z = lo[i];
    for (int j = 0; j < nn && z < hi[i] && !st; j++) {
      if (nhi[j] <= z || nlo[j] >= hi[i]) continue; /* no overlap */
      int end[2] = {z == lo[i], 0};
      if (nlo[j] > z) st = cell_wall(m, w, cp, gx, gy, d, z, nlo[j], end);
      z = nhi[j];
    }
    int end[2] = {z == lo[i], 1};
    if (!st && z < hi[i]) st = cell_wall(m, w, cp, gx, gy, d, z, hi[i], end);
  }
  return st;
}

/* Every face of cell (gx, gy). */
static talus_status cell_faces(talus_mesh *m, const mesh_win *w, int gx, int gy) {
  int n;
  const float *hi, *lo = win_cell(w, gx, gy, &n, &hi);
  if (!n) return TALUS_OK;
  corner_prof cp[4];
  for (int c = 0; c < 4; c++)
    corner_profile(w, gx + corner_dx[c], gy + corner_dy[c], &cp[c]);
  talus_status st = TALUS_OK;
  for (int i = 0; i < n && !st; i++) {
    st = cell_cap(m, w, cp, gx, gy, hi[i], 1);
    if (!st) st = cell_cap(m, w, cp, gx, gy, lo[i], 0);
  }
  for (int d = 0; d < 4 && !st; d++)
    st = cell_walls(m, w, cp, gx, gy, d);
  return st;
}

talus_status talus_mesh_add_rect(talus_mesh_source *s, int x0, int y0, int w, int h,
                                 talus_mesh *m) {
  if (x0 < 0 || y0 < 0 || w < 1 || h < 1 || x0 + w > s->nx || y0 + h > s->ny)
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "mesh window (%d, %d, %d, %d) outside the map",
                      x0, y0, w, h);
  if (!m->hash && !(m->hash = calloc(1, sizeof *m->hash)))
    return talus_fail(TALUS_ERR_NOMEM, "export", "no memory for the mesh");
  int g = 1 + (s->o.multi_only ? s->o.margin : 0);
  mesh_win win;
  talus_status st = win_alloc(&win, s, x0 - g, y0 - g, x0 + w + g, y0 + h + g);
  if (!st) st = win_fill(&win);
  if (!st) st = win_select(&win);
  for (int y = y0; y < y0 + h && !st; y++)
    for (int x = x0; x < x0 + w && !st; x++)
      st = cell_faces(m, &win, x, y);
  win_free(&win);
  return st;
}

/* ---------------------------------------------------------------------
 * Opening: the state's bands and the base
 * ------------------------------------------------------------------- */

/* The default base: the lowest top of column 0 less max(1 m, a cell),
 * over the map in windows of rows. */
static talus_status source_base(talus_mesh_source *s) {
  double low = INFINITY;
  talus_status st = TALUS_OK;
  for (int y0 = 0; y0 < s->ny && !st; y0 += TALUS_RASTER_WINDOW_ROWS) {
    int h = s->ny - y0 < TALUS_RASTER_WINDOW_ROWS ? s->ny - y0 : TALUS_RASTER_WINDOW_ROWS;
    mesh_win w;
    st = win_alloc(&w, s, 0, y0, s->nx, y0 + h);
    if (!st) st = win_tops(&w);
    for (size_t i = 0; !st && i < (size_t)w.w * w.h; i++)
      if (w.count[i] && w.top[i] < low) low = w.top[i];
    win_free(&w);
  }
  if (!st && !isfinite(low))
    st = talus_fail(TALUS_ERR_DATA, "export", "the state holds no valid cell");
  s->base = low - (s->cell > 1.0 ? s->cell : 1.0);
  return st;
}

talus_status talus_mesh_source_open(const char *path, const talus_mesh_options *o,
                                    talus_mesh_source **out) {
  *out = NULL;
  talus_mesh_source *s = calloc(1, sizeof *s);
  if (!s) return talus_fail(TALUS_ERR_NOMEM, "export", "no memory");
  s->o = *o;
  talus_status st = talus_bands_reader_open(path, &s->r);
  int layers = 0;
  if (!st && !talus_state_reader_probe(s->r, &layers))
    st = talus_fail(TALUS_ERR_FORMAT, "export",
                    "'%s' is not a talus state: a mesh needs the layered state "
                    "(talus erode --state FILE, talus generate)",
                    path);
  talus_state_header h;
  if (!st) st = talus_state_header_reader(s->r, &h);
  if (!st) {
    s->nx = talus_bands_reader_nx(s->r), s->ny = talus_bands_reader_ny(s->r);
    s->cell = h.cell, s->surface = h.surface, s->columns = h.columns;
    s->geo = talus_bands_reader_georef(s->r);
    st = source_bands(s);
  }
  if (!st && !(s->cell > 0.0)) st = talus_fail(TALUS_ERR_FORMAT, "export", "bad cell size");
  s->base = o->base;
  s->step = o->blocks ? 0.0 : o->smooth_step > 0.0 ? o->smooth_step : 2.0 * s->cell;
  if (!st && !o->base_given) st = source_base(s);
  if (st) {
    talus_mesh_source_close(s);
    return st;
  }
  *out = s;
  return TALUS_OK;
}

void talus_mesh_source_close(talus_mesh_source *s) {
  if (!s) return;
  talus_bands_reader_close(s->r);
  free(s);
}
