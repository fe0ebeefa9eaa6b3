/*
 * mesh.h — a triangle mesh of the layered terrain's solid (bedrock + sand),
 * overhangs, arches and cave ceilings included, out of a talus state read
 * window by window; written as OBJ, PLY or binary glTF (mesh_write.c).
 *
 * Design notes
 * ------------
 * - The solid of a cell is the union of its columns' intervals [floor,
 *   B + s]: the floor of column k is the ceiling C of column k − 1, that of
 *   column 0 the base level (column 0 reaches down without end). Touching
 *   intervals are merged. Each interval is a prism over the cell's square:
 *   a top face, a bottom face, and walls where the neighbour across an edge
 *   has no solid (interval subtraction). A blocky mesh (--mesh-style
 *   blocks) stops there: every face axis-aligned, one of six normals.
 * - Smooth (the default): up the vertical line of each cell corner, the
 *   interval ends of the four cells around it (breaks) are grouped, and a
 *   group is one vertex at the mean height of the quadrants' changes. A
 *   break joins the group below when the slab between them is mixed (some
 *   quadrants solid: the caps it separates are one surface stepping), at
 *   most smooth_step thick, no quadrant changes twice across the group (a
 *   thin sheet or gap stays open) and no two quadrants side by side change
 *   oppositely (a top beside a bottom: an overhang's rim stays). Walls
 *   between grouped breaks shrink to fans or vanish; a ramp of steps
 *   becomes a ramp (and keeps its volume: each cell's cap corners average
 *   its neighbours'), cliffs taller than the step, overhang rims, cave
 *   ceilings apart from their floors stay at their heights. Walls stay in
 *   their vertical planes; caps tilt (normals averaged over a vertex's caps).
 * - Watertight by construction: every wall's vertical sides are split at
 *   every interval end of the four cells around its corner, so no vertex
 *   lies inside another face's edge (no T-junctions); and where four walls
 *   meet along one vertical segment (two diagonal solid cells, a saddle),
 *   or four faces along one horizontal edge, each solid side gets its own
 *   copy of the vertex (and where a cell's top is level with its
 *   neighbour's bottom, the edge between is split at its middle, a vertex
 *   for each solid, their caps and walls fanned round it): at a corner
 *   and height the four quadrants' copies
 *   are merged exactly where faces bounding one run of solid quadrants
 *   meet (a union-find over four; for a smooth group, over the ladder of
 *   its slabs along each half-edge). Hence every edge is used by exactly
 *   two triangles, and the blocky mesh's enclosed volume is the solid's,
 *   down to the base (the smooth one's within a few 1e-6 on the scenes).
 * - Coordinates: metres, Y up: x = east (column · cell), y = height, z =
 *   south (row · cell), relative to the map's north-west corner; right-
 *   handed, so the triangles wind counter-clockwise seen from outside.
 * - Windowed: a tile of cells needs its window grown by one cell (its
 *   neighbours) and by the selection margin; the map is meshed strip by
 *   strip into one mesh, or tile by tile into one mesh each. Vertices on
 *   a tile's edge are computed from global corner indices and the same
 *   floats in both tiles, so neighbouring tiles share them bit for bit.
 */
#ifndef TALUS_IO_EXPORT_MESH_H
#define TALUS_IO_EXPORT_MESH_H

#include "io/raster/raster.h"

/* Face normals: east, west, up, down, south, north. */
enum { TALUS_MESH_E, TALUS_MESH_W, TALUS_MESH_UP, TALUS_MESH_DOWN, TALUS_MESH_S, TALUS_MESH_N };

/* An indexed triangle mesh: nv vertices (xyz), nt triangles (3 indices and
 * the direction of the face each comes from: a smooth mesh's caps tilt). */
typedef struct talus_mesh {
  float *pos;    /* [3 nv] */
  uint32_t *tri; /* [3 nt] */
  uint8_t *dir;  /* [nt] TALUS_MESH_* */
  size_t nv, nt;
  size_t cap_v, cap_t;
  struct mesh_hash *hash; /* vertex lookup (mesh.c) */
} talus_mesh;

/* Frees everything m holds and zeroes it; NULL is a no-op. */
void talus_mesh_free(talus_mesh *m);
/* Appends triangle (a, b, c) facing direction dir (TALUS_MESH_*). */
talus_status talus_mesh_push_tri(talus_mesh *m, uint32_t a, uint32_t b, uint32_t c, int dir);
/* Drops m's vertex lookup: faces added later get vertices of their own. */
void talus_mesh_forget_vertices(talus_mesh *m);
/* Fewer triangles, the same surface (mesh_merge.c): every vertex inside a
 * flat region (all its triangles in one axis-aligned plane, facing one
 * way) is removed and its neighbours' polygon re-triangulated; unused
 * vertices go. A closed mesh stays closed (each edge used by two
 * triangles, oppositely) with the same volume; vertices on folds and open
 * edges (a tile's) stay. Call it after the last talus_mesh_add_rect. */
talus_status talus_mesh_merge_coplanar(talus_mesh *m);
/* The enclosed volume [m³] by the divergence theorem (Σ p0 · (p1 × p2) / 6),
 * in double, about the mesh's first vertex. */
double talus_mesh_volume(const talus_mesh *m);

typedef struct talus_mesh_options {
  int multi_only; /* only cells of more than one column, and those within margin */
  int margin;     /* cells (Chebyshev distance) around them; with multi_only */
  int base_given; /* 1: base below is the bottom of column 0 */
  double base;    /* [m]; else the lowest column-0 top less max(1 m, a cell) */
  int crop;       /* 1: only the cells of the rectangle below, closed along its edges */
  int crop_x0, crop_y0, crop_w, crop_h; /* cells */
  int merge;                            /* 1: the caller merges coplanar faces (--merge) */
  int blocks;                           /* 1: the blocky mesh (--mesh-style blocks); else smooth */
  double smooth_step;    /* [m] smooth: the thickest step between caps smoothed; 0: two cells */
  int64_t max_triangles; /* > 0: the caller refuses a larger mesh */
} talus_mesh_options;

typedef struct talus_mesh_source talus_mesh_source;

/* Opens a talus state for meshing and settles the base (a windowed pass
 * over the map when not given). Not a state: TALUS_ERR_FORMAT. */
talus_status talus_mesh_source_open(const char *path, const talus_mesh_options *o,
                                    talus_mesh_source **out);
int talus_mesh_source_nx(const talus_mesh_source *s);
int talus_mesh_source_ny(const talus_mesh_source *s);
double talus_mesh_source_cell(const talus_mesh_source *s);
double talus_mesh_source_base(const talus_mesh_source *s);
/* Closes the file; NULL is a no-op. */
void talus_mesh_source_close(talus_mesh_source *s);

/* Adds the faces of the cells of global rectangle (x0, y0, w, h) to m. */
talus_status talus_mesh_add_rect(talus_mesh_source *s, int x0, int y0, int w, int h, talus_mesh *m);

/* Mesh file formats. */
typedef enum talus_mesh_format {
  TALUS_MESH_OBJ = 0,
  TALUS_MESH_PLY = 1,
  TALUS_MESH_GLB = 2,
  TALUS_MESH_FORMATS = 3
} talus_mesh_format;
/* Parses "OBJ", "PLY", "GLB" (any case; "glTF" is GLB) into *f; 0 if none. */
int talus_mesh_format_parse(const char *name, talus_mesh_format *f);
/* The format of a path's extension (.obj, .ply, .glb); 0 if none. */
int talus_mesh_format_from_path(const char *path, talus_mesh_format *f);

/*
 * Writes m to path (partial + rename): OBJ (text; shared vertices, the six
 * normals as vn, faces v//n), PLY (binary little-endian; a vertex per
 * position and normal) or GLB (glTF 2.0 binary: POSITION, NORMAL, uint32
 * indices; a vertex per position and normal). A mesh with no triangle is
 * a TALUS_ERR_DATA.
 */
talus_status talus_mesh_write(const talus_mesh *m, talus_mesh_format f, const char *path);

#endif /* TALUS_IO_EXPORT_MESH_H */
