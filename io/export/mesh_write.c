/*
 * mesh_write.c — the mesh file formats (mesh.h): OBJ text with shared
 * vertices, binary PLY and binary glTF 2.0 (GLB) with a vertex per position
 * and face direction, its normal the area-weighted mean over that vertex's
 * triangles of that direction (the axis itself on walls, flat caps and
 * every face of a blocky mesh; smooth shading of a smooth mesh's sloping
 * caps, hard edges where caps meet walls). Every file is written
 * under io/raster's partial name and renamed when complete; binary values
 * are little-endian whatever the host. The glTF JSON is an io/json
 * document.
 */
#include "io/export/mesh.h"
#include "io/json.h"
#include "io/raster/raster_private.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const float normals[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                    {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};

int talus_mesh_format_parse(const char *name, talus_mesh_format *f) {
  static const struct {
    const char *name;
    talus_mesh_format f;
  } names[] = {{"OBJ", TALUS_MESH_OBJ},
               {"PLY", TALUS_MESH_PLY},
               {"GLB", TALUS_MESH_GLB},
               {"glTF", TALUS_MESH_GLB}};
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(name, names[i].name)) return *f = names[i].f, 1;
  return 0;
}

int talus_mesh_format_from_path(const char *path, talus_mesh_format *f) {
  const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash + 1 : path, '.');
  return dot && talus_mesh_format_parse(dot + 1, f) && strcasecmp(dot + 1, "glTF");
}

/* Writes 32-bit value v little-endian. */
static void put32(FILE *f, uint32_t v) {
  unsigned char b[4] = {v & 255, (v >> 8) & 255, (v >> 16) & 255, v >> 24};
  fwrite(b, 1, 4, f);
}
/* Writes float x little-endian. */
static void putf(FILE *f, float x) {
  uint32_t v;
  memcpy(&v, &x, 4);
  put32(f, v);
}

/* The mesh with a vertex per (position, normal): *map[v * 6 + dir] is the
 * new index (UINT32_MAX: unused), *n the count. */
static talus_status flat_vertices(const talus_mesh *m, uint32_t **map, uint32_t *n) {
  *n = 0;
  talus_status st = talus_alloc((void **)map, m->nv * 6 * sizeof **map, "mesh normals");
  if (st) return st;
  memset(*map, 0xff, m->nv * 6 * sizeof **map);
  for (size_t t = 0; t < m->nt; t++)
    for (int i = 0; i < 3; i++) {
      uint32_t *slot = *map + (size_t)m->tri[3 * t + i] * 6 + m->dir[t];
      if (*slot == UINT32_MAX) *slot = (*n)++;
    }
  return TALUS_OK;
}

/* The normal of each of the n flat vertices into nrm[3n]: the normalised
 * area-weighted sum of its triangles' normals, so a smooth mesh's sloping
 * caps shade smoothly; where that sum lies along the vertex's face
 * direction (walls, flat caps, every face of a blocky mesh) that axis
 * exactly. */
static talus_status flat_normals(const talus_mesh *m, const uint32_t *map, uint32_t n, float *nrm) {
  double *sum = NULL;
  talus_status st = talus_alloc((void **)&sum, (size_t)n * 3 * sizeof *sum, "mesh normals");
  if (st) return st;
  memset(sum, 0, (size_t)n * 3 * sizeof *sum);
  for (size_t t = 0; t < m->nt; t++) {
    const uint32_t *i = m->tri + 3 * t;
    const float *a = m->pos + 3 * i[0], *b = m->pos + 3 * i[1], *c = m->pos + 3 * i[2];
    double u[3], v[3];
    for (int k = 0; k < 3; k++)
      u[k] = (double)b[k] - a[k], v[k] = (double)c[k] - a[k];
    double x[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    for (int k = 0; k < 3; k++)
      for (int c = 0; c < 3; c++)
        sum[3 * (size_t)map[(size_t)i[k] * 6 + m->dir[t]] + c] += x[c];
  }
  for (size_t v = 0; v < m->nv; v++)
    for (int d = 0; d < 6; d++) {
      uint32_t i = map[v * 6 + d];
      if (i == UINT32_MAX) continue;
      double *s = sum + 3 * (size_t)i, len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      int axis = 1;
      for (int c = 0; c < 3; c++)
        axis &= normals[d][c] == 0.0f ? s[c] == 0.0 : s[c] * normals[d][c] > 0.0;
      for (int c = 0; c < 3; c++)
        nrm[3 * (size_t)i + c] = axis || !(len > 0.0) ? normals[d][c] : (float)(s[c] / len);
    }
  talus_free(sum);
  return TALUS_OK;
}

/* Positions and normals of the flat vertices, in their order, into p[3n]
 * and nrm[3n]. */
static talus_status flat_arrays(const talus_mesh *m, const uint32_t *map, uint32_t n, float *p,
                                float *nrm) {
  for (size_t v = 0; v < m->nv; v++)
    for (int d = 0; d < 6; d++) {
      uint32_t i = map[v * 6 + d];
      if (i != UINT32_MAX) memcpy(p + 3 * (size_t)i, m->pos + 3 * v, 3 * sizeof(float));
    }
  return flat_normals(m, map, n, nrm);
}

/* The OBJ normal index (1-based) of each flat vertex into ni[n]: one of
 * the six axes, or 7 + its rank among those whose normal is none of them
 * (written in that order); their count into *extra. */
static void obj_normal_index(const talus_mesh *m, const uint32_t *map, uint32_t n, const float *nrm,
                             uint32_t *ni, uint32_t *extra) {
  for (size_t v = 0; v < m->nv; v++)
    for (uint32_t d = 0; d < 6; d++) {
      uint32_t i = map[v * 6 + d];
      if (i != UINT32_MAX) ni[i] = memcmp(nrm + 3 * (size_t)i, normals[d], 12) ? 0 : d + 1;
    }
  *extra = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!ni[i]) ni[i] = 7 + (*extra)++;
}

/* OBJ: shared positions, the six axis normals and the smooth ones, faces
 * v//n (1-based). */
static talus_status write_obj(FILE *f, const talus_mesh *m) {
  uint32_t *map = NULL, *ni = NULL, n = 0, extra = 0;
  float *p = NULL, *nrm = NULL;
  talus_status st = flat_vertices(m, &map, &n);
  if (!st) st = talus_alloc((void **)&p, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = talus_alloc((void **)&nrm, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = talus_alloc((void **)&ni, (size_t)n * sizeof *ni, "mesh");
  if (!st) st = flat_arrays(m, map, n, p, nrm);
  if (!st) {
    obj_normal_index(m, map, n, nrm, ni, &extra);
    fprintf(f,
            "# talus: the solid (bedrock + sand) of a layered state; metres, Y up, x east,\n"
            "# z south; %zu vertices, %zu triangles\no terrain\n",
            m->nv, m->nt);
    for (size_t v = 0; v < m->nv; v++)
      fprintf(f, "v %.9g %.9g %.9g\n", m->pos[3 * v], m->pos[3 * v + 1], m->pos[3 * v + 2]);
    for (int d = 0; d < 6; d++)
      fprintf(f, "vn %g %g %g\n", normals[d][0], normals[d][1], normals[d][2]);
    for (uint32_t i = 0; i < n; i++)
      if (ni[i] > 6) fprintf(f, "vn %.7g %.7g %.7g\n", nrm[3 * i], nrm[3 * i + 1], nrm[3 * i + 2]);
    for (size_t t = 0; t < m->nt; t++) {
      const uint32_t *i = m->tri + 3 * t;
      fputs("f", f);
      for (int c = 0; c < 3; c++)
        fprintf(f, " %u//%u", i[c] + 1, ni[map[(size_t)i[c] * 6 + m->dir[t]]]);
      fputc('\n', f);
    }
  }
  talus_free(map), talus_free(p), talus_free(nrm), talus_free(ni);
  return st;
}

/* PLY: binary little-endian, float position and normal per vertex. */
static talus_status write_ply(FILE *f, const talus_mesh *m) {
  uint32_t *map = NULL, n = 0;
  talus_status st = flat_vertices(m, &map, &n);
  float *p = NULL, *nrm = NULL;
  if (!st) st = talus_alloc((void **)&p, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = talus_alloc((void **)&nrm, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = flat_arrays(m, map, n, p, nrm);
  if (!st) {
    fprintf(f,
            "ply\nformat binary_little_endian 1.0\ncomment talus: metres, Y up, x east, z south\n"
            "element vertex %u\nproperty float x\nproperty float y\nproperty float z\n"
            "property float nx\nproperty float ny\nproperty float nz\n"
            "element face %zu\nproperty list uchar int vertex_indices\nend_header\n",
            n, m->nt);
    for (size_t i = 0; i < n; i++)
      for (int c = 0; c < 6; c++)
        putf(f, c < 3 ? p[3 * i + c] : nrm[3 * i + c - 3]);
    for (size_t t = 0; t < m->nt; t++) {
      fputc(3, f);
      for (int i = 0; i < 3; i++)
        put32(f, map[(size_t)m->tri[3 * t + i] * 6 + m->dir[t]]);
    }
  }
  talus_free(map), talus_free(p), talus_free(nrm);
  return st;
}

/* {"buffer": 0, "byteOffset": off, "byteLength": len, "target": target} */
static talus_json *glb_view(size_t off, size_t len, int target) {
  talus_json *v = talus_json_object();
  talus_status st = talus_json_set(v, "buffer", talus_json_int(0));
  if (!st) st = talus_json_set(v, "byteOffset", talus_json_int((int64_t)off));
  if (!st) st = talus_json_set(v, "byteLength", talus_json_int((int64_t)len));
  if (!st) st = talus_json_set(v, "target", talus_json_int(target));
  return st ? (talus_json_free(v), NULL) : v;
}

/* An accessor of view `view`: count items of type/componentType, with
 * min/max (3 floats each) when given. */
static talus_json *glb_accessor(int view, size_t count, const char *type, int ctype,
                                const float *lo, const float *hi) {
  talus_json *a = talus_json_object();
  talus_status st = talus_json_set(a, "bufferView", talus_json_int(view));
  if (!st) st = talus_json_set(a, "componentType", talus_json_int(ctype));
  if (!st) st = talus_json_set(a, "count", talus_json_int((int64_t)count));
  if (!st) st = talus_json_set(a, "type", talus_json_string(type));
  for (int k = 0; lo && k < 2 && !st; k++) {
    talus_json *arr = talus_json_array();
    for (int c = 0; c < 3 && !st; c++)
      st = talus_json_push(arr, talus_json_real(k ? hi[c] : lo[c], "%.9g"));
    st = st ? (talus_json_free(arr), st) : talus_json_set(a, k ? "max" : "min", arr);
  }
  return st ? (talus_json_free(a), NULL) : a;
}

/* Sets key of obj to a one-element array holding v. */
static talus_status glb_set1(talus_json *obj, const char *key, talus_json *v) {
  talus_json *arr = talus_json_array();
  talus_status st = talus_json_push(arr, v);
  return st ? (talus_json_free(arr), st) : talus_json_set(obj, key, arr);
}

/* The scene, node, mesh and primitive of the glTF document. */
static talus_status glb_scene(talus_json *d) {
  talus_json *scene = talus_json_object(), *node = talus_json_object();
  talus_json *mesh = talus_json_object(), *prim = talus_json_object();
  talus_json *attr = talus_json_object();
  talus_status st = talus_json_set(d, "scene", talus_json_int(0));
  if (!st) st = glb_set1(scene, "nodes", talus_json_int(0));
  if (!st) st = talus_json_set(node, "mesh", talus_json_int(0));
  if (!st) st = talus_json_set(node, "name", talus_json_string("terrain"));
  if (!st) st = talus_json_set(attr, "POSITION", talus_json_int(0));
  if (!st) st = talus_json_set(attr, "NORMAL", talus_json_int(1));
  if (!st) st = talus_json_set(prim, "attributes", attr), attr = NULL;
  if (!st) st = talus_json_set(prim, "indices", talus_json_int(2));
  if (!st) st = talus_json_set(prim, "mode", talus_json_int(4));
  if (!st) st = glb_set1(mesh, "primitives", prim), prim = NULL;
  if (!st) st = glb_set1(d, "scenes", scene), scene = NULL;
  if (!st) st = glb_set1(d, "nodes", node), node = NULL;
  if (!st) st = glb_set1(d, "meshes", mesh), mesh = NULL;
  talus_json_free(scene), talus_json_free(node), talus_json_free(mesh);
  talus_json_free(prim), talus_json_free(attr);
  return st;
}

/* The glTF JSON of n flat vertices (positions p) and nt triangles. */
static talus_json *glb_json(const float *p, uint32_t n, size_t nt) {
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      lo[c] = fminf(lo[c], p[3 * i + c]), hi[c] = fmaxf(hi[c], p[3 * i + c]);
  size_t pv = (size_t)n * 12, iv = nt * 12;
  talus_json *d = talus_json_object(), *asset = talus_json_object(), *buf = talus_json_object();
  talus_json *views = talus_json_array(), *acc = talus_json_array();
  talus_status st = talus_json_set(asset, "version", talus_json_string("2.0"));
  if (!st) st = talus_json_set(asset, "generator", talus_json_string("talus export"));
  if (!st) st = talus_json_set(d, "asset", asset), asset = NULL;
  if (!st) st = glb_scene(d);
  if (!st) st = talus_json_set(buf, "byteLength", talus_json_int((int64_t)(2 * pv + iv)));
  if (!st) st = glb_set1(d, "buffers", buf), buf = NULL;
  if (!st) st = talus_json_push(views, glb_view(0, pv, 34962));
  if (!st) st = talus_json_push(views, glb_view(pv, pv, 34962));
  if (!st) st = talus_json_push(views, glb_view(2 * pv, iv, 34963));
  if (!st) st = talus_json_set(d, "bufferViews", views), views = NULL;
  if (!st) st = talus_json_push(acc, glb_accessor(0, n, "VEC3", 5126, lo, hi));
  if (!st) st = talus_json_push(acc, glb_accessor(1, n, "VEC3", 5126, NULL, NULL));
  if (!st) st = talus_json_push(acc, glb_accessor(2, 3 * nt, "SCALAR", 5125, NULL, NULL));
  if (!st) st = talus_json_set(d, "accessors", acc), acc = NULL;
  talus_json_free(asset), talus_json_free(buf), talus_json_free(views), talus_json_free(acc);
  return st ? (talus_json_free(d), NULL) : d;
}

/* The JSON text of doc, padded with spaces to a multiple of 4: *text
 * malloc'd, *len its length. */
static talus_status glb_text(talus_json *doc, char **text, size_t *len) {
  FILE *mem = open_memstream(text, len);
  if (!mem) return talus_fail(TALUS_ERR_NOMEM, "export", "no memory for the glTF JSON");
  talus_status st = talus_json_write(doc, mem, -1);
  while (!st && (ftell(mem) & 3))
    fputc(' ', mem);
  fclose(mem);
  return st;
}

/* GLB: header, JSON chunk, BIN chunk (positions, normals, indices). */
static talus_status write_glb(FILE *f, const talus_mesh *m) {
  uint32_t *map = NULL, n = 0;
  float *p = NULL, *nrm = NULL;
  char *text = NULL;
  size_t len = 0;
  talus_status st = flat_vertices(m, &map, &n);
  if (!st) st = talus_alloc((void **)&p, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = talus_alloc((void **)&nrm, (size_t)n * 3 * sizeof(float), "mesh");
  if (!st) st = flat_arrays(m, map, n, p, nrm);
  talus_json *doc = st ? NULL : glb_json(p, n, m->nt);
  if (!st && !doc) st = talus_fail(TALUS_ERR_NOMEM, "export", "no memory for the glTF JSON");
  if (!st) st = glb_text(doc, &text, &len);
  size_t bin = (size_t)n * 24 + m->nt * 12;
  if (!st && 12 + 8 + len + 8 + bin > UINT32_MAX)
    st = talus_fail(TALUS_ERR_RANGE, "export", "mesh too large for one GLB file; use --tile");
  if (!st) {
    put32(f, 0x46546C67), put32(f, 2), put32(f, (uint32_t)(12 + 8 + len + 8 + bin));
    put32(f, (uint32_t)len), put32(f, 0x4E4F534A);
    fwrite(text, 1, len, f);
    put32(f, (uint32_t)bin), put32(f, 0x004E4942);
    for (size_t i = 0; i < 3 * (size_t)n; i++)
      putf(f, p[i]);
    for (size_t i = 0; i < 3 * (size_t)n; i++)
      putf(f, nrm[i]);
    for (size_t t = 0; t < m->nt; t++)
      for (int i = 0; i < 3; i++)
        put32(f, map[(size_t)m->tri[3 * t + i] * 6 + m->dir[t]]);
  }
  talus_json_free(doc);
  free(text);
  talus_free(map), talus_free(p), talus_free(nrm);
  return st;
}

talus_status talus_mesh_write(const talus_mesh *m, talus_mesh_format fmt, const char *path) {
  if (!m || !m->nt)
    return talus_fail(TALUS_ERR_DATA, "export", "'%s': the mesh has no triangle (nothing selected)",
                      path);
  char *partial = NULL;
  talus_gdal_enter();
  talus_status st = talus_partial_begin(path, &partial);
  FILE *f = st ? NULL : fopen(partial, "wb");
  if (!st && !f)
    st = talus_fail(TALUS_ERR_IO, "export", "cannot write '%s': %s", path, strerror(errno));
  if (!st && fmt == TALUS_MESH_OBJ) st = write_obj(f, m);
  if (!st && fmt == TALUS_MESH_PLY) st = write_ply(f, m);
  if (!st && fmt == TALUS_MESH_GLB) st = write_glb(f, m);
  if (f && (ferror(f) | fclose(f)) && !st)
    st =
        talus_fail(TALUS_ERR_IO, "export", "cannot write '%s'%s", path, talus_disk_full_hint(path));
  talus_status end = talus_partial_end(path, partial, !st);
  talus_gdal_leave();
  return st ? st : end;
}
