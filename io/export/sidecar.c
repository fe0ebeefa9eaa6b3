/*
 * sidecar.c — the JSON sidecar of a heightmap (heightmap.h): what an engine
 * needs to place the terrain at its real size, built as one io/json
 * document. Owns the placement arithmetic of each engine:
 * - Unreal: a 16-bit code c stands for (c − 32768)/128 local units, times
 *   the landscape's Z scale in cm; so Z scale = range_cm · 128 / 65535 makes
 *   the 65535 codes span the range exactly (the usual "range_m · 100 / 512"
 *   differs by 1/65536), and location Z = zmin_cm + 256 · Z scale puts code
 *   0 at zmin. X/Y scale is the sample spacing in cm (one quad per sample).
 * - Unity: heights are 0..1 of TerrainData.size.y = the range; the terrain
 *   is (W − 1)·dx by (H − 1)·dy and sits at y = zmin.
 */
#include "io/export/heightmap.h"
#include "io/json.h"

#include <math.h>
#include <string.h>

/* {"x": x, "y": y[, "z": z]} (z left out when NaN). */
static talus_json *sidecar_xyz(double x, double y, double z) {
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "x", talus_json_real(x, NULL));
  if (!st) st = talus_json_set(o, "y", talus_json_real(y, NULL));
  if (!st && !isnan(z)) st = talus_json_set(o, "z", talus_json_real(z, NULL));
  return st ? (talus_json_free(o), NULL) : o;
}

/* The Z object: range, offset, quantum and how a code becomes a height. */
static talus_json *sidecar_z(const talus_heightmap_info *i) {
  talus_json *o = talus_json_object();
  int coded = i->coded;
  double range = i->zmax - i->zmin;
  talus_status st = talus_json_set(o, "min_m", talus_json_real(i->zmin, NULL));
  if (!st) st = talus_json_set(o, "max_m", talus_json_real(i->zmax, NULL));
  if (!st) st = talus_json_set(o, "range_m", talus_json_real(range, NULL));
  if (!st) st = talus_json_set(o, "offset_m", talus_json_real(i->zmin, NULL));
  if (!st && coded) st = talus_json_set(o, "quantum_m", talus_json_real(range / 65535.0, NULL));
  if (!st && coded) st = talus_json_set(o, "scale_m", talus_json_real(range / 65535.0, NULL));
  const char *enc =
      coded ? "height_m = offset_m + code * range_m / 65535" : "height_m = value (float32 metres)";
  if (!st) st = talus_json_set(o, "encoding", talus_json_string(enc));
  if (!st) st = talus_json_set(o, "data_min_m", talus_json_real(i->data_min, NULL));
  if (!st) st = talus_json_set(o, "data_max_m", talus_json_real(i->data_max, NULL));
  return st ? (talus_json_free(o), NULL) : o;
}

/* Unreal's landscape figures (see the notes above). */
static talus_json *sidecar_unreal(const talus_heightmap_info *i) {
  talus_json *o = talus_json_object();
  double zs = (i->zmax - i->zmin) * 100.0 * 128.0 / 65535.0;
  talus_status st = talus_json_set(o, "scale_cm", sidecar_xyz(i->dx * 100, i->dy * 100, zs));
  if (!st) st = talus_json_set(o, "location_z_cm", talus_json_real(i->zmin * 100 + 256 * zs, NULL));
  if (!st)
    st = talus_json_set(o, "z_scale_approx_range_m_x100_over_512",
                        talus_json_real((i->zmax - i->zmin) * 100.0 / 512.0, NULL));
  return st ? (talus_json_free(o), NULL) : o;
}

/* Unity's terrain figures (see the notes above). */
static talus_json *sidecar_unity(const talus_heightmap_info *i) {
  talus_json *o = talus_json_object();
  double sx = (i->width - 1) * i->dx, sz = (i->height - 1) * i->dy;
  talus_status st = talus_json_set(o, "heightmap_resolution", talus_json_int(i->width));
  if (!st) st = talus_json_set(o, "terrain_size_m", sidecar_xyz(sx, i->zmax - i->zmin, sz));
  if (!st) st = talus_json_set(o, "position_y_m", talus_json_real(i->zmin, NULL));
  if (!st) st = talus_json_set(o, "byte_order", talus_json_string("little-endian (Windows)"));
  return st ? (talus_json_free(o), NULL) : o;
}

/* The sizes: input, output, spacing and extent. */
static talus_status sidecar_sizes(talus_json *d, const talus_heightmap_info *i) {
  talus_status st = talus_json_set(d, "width", talus_json_int(i->width));
  if (!st) st = talus_json_set(d, "height", talus_json_int(i->height));
  if (!st) st = talus_json_set(d, "source_size", sidecar_xyz(i->src_nx, i->src_ny, NAN));
  if (!st) st = talus_json_set(d, "source_cell_m", sidecar_xyz(i->src_dx, i->src_dy, NAN));
  if (!st) st = talus_json_set(d, "sample_spacing_m", sidecar_xyz(i->dx, i->dy, NAN));
  double ex = (i->width - 1) * i->dx, ey = (i->height - 1) * i->dy;
  if (!st) st = talus_json_set(d, "extent_m", sidecar_xyz(ex, ey, NAN));
  if (!st) st = talus_json_set(d, "nodata_samples", talus_json_int(i->nodata_samples));
  if (!st) st = talus_json_set(d, "first_sample", sidecar_xyz(i->x0, i->y0, NAN));
  if (!st) st = talus_json_set(d, "origin_m", sidecar_xyz(i->x0 * i->dx, i->y0 * i->dy, NAN));
  return st;
}

talus_status talus_heightmap_sidecar(const char *path, const char *file,
                                     const talus_heightmap_info *i) {
  talus_json *d = talus_json_object();
  talus_status st = talus_json_set(d, "file", talus_json_string(file));
  if (!st) st = talus_json_set(d, "format", talus_json_string(i->driver));
  if (!st) st = sidecar_sizes(d, i);
  if (!st) st = talus_json_set(d, "z", sidecar_z(i));
  if (!st) st = talus_json_set(d, "unreal", sidecar_unreal(i));
  if (!st) st = talus_json_set(d, "unity", sidecar_unity(i));
  if (!st) st = talus_json_write_path(d, path);
  talus_json_free(d);
  return st;
}
