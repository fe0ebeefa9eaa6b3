/*
 * test_export.c — engine heightmaps (io/export/heightmap.h), read back by
 * GDAL and by hand: 16 bits span the full range (min → 0, max → 65535) and
 * decode within half a quantum; RAW r16 holds the PNG's codes little-endian
 * and r32 the heights themselves; sizes, sample spacing and the GeoTIFF's
 * geotransform follow the requested size over the same extent; the sidecar
 * states the figures the file was written with; NoData becomes the minimum
 * (raw, PNG) or stays NoData (GeoTIFF); an all-NoData input, an empty Z
 * range and an unwritable path fail and leave nothing behind. The copy
 * of a GeoTIFF into another driver (talus erode -of) keeps the values and
 * leaves nothing when cancelled or failed.
 */
#include "check.h"
#include "scratch.h"
#include "io/export/driver.h"
#include "io/export/heightmap.h"
#include "io/raster/raster.h"

#include <gdal.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NX 61
#define NY 47
#define ND (-9999.0)

/* A rough surface (a tilted sine field, 12.5 .. ~300 m) on 2.5 m cells;
 * with nodata, the first 9 columns are NoData. */
static void make_input(const char *path, int nodata, float *h) {
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++)
      h[y * NX + x] = (float)(150.0 + 2.0 * x - 1.5 * y + 40.0 * sin(0.37 * x) * cos(0.21 * y));
  if (nodata)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < 9; x++)
        h[y * NX + x] = (float)ND;
  talus_georef geo = {{500000.0, 2.5, 0.0, 4100000.0, 0.0, -2.5}, NULL, nodata, ND};
  const float *bands[1] = {h};
  talus_status st = talus_geotiff_write(path, NX, NY, 1, bands, NULL, NULL, &geo, NULL);
  CHECK(st == TALUS_OK, "writing the input: %s", talus_last_error());
}

/* Band 1 of path as doubles (w × h), or NULL. */
static double *read_band(const char *path, int *w, int *h) {
  GDALDatasetH ds = GDALOpen(path, GA_ReadOnly);
  if (!ds) return NULL;
  *w = GDALGetRasterXSize(ds), *h = GDALGetRasterYSize(ds);
  double *v = malloc(sizeof(double) * (size_t)*w * *h);
  if (GDALRasterIO(GDALGetRasterBand(ds, 1), GF_Read, 0, 0, *w, *h, v, *w, *h, GDT_Float64, 0, 0) !=
      CE_None) {
    free(v);
    v = NULL;
  }
  GDALClose(ds);
  return v;
}

/* The whole file at path (its size in *n), or NULL. */
static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n ? *n : 1);
  if (fread(b, 1, *n, f) != *n) *n = 0;
  fclose(f);
  return b;
}

/* Native-size PNG16: full range, round trip within half a quantum. */
static void test_png_round_trip(const float *h) {
  talus_heightmap_options o = {.format = TALUS_HM_PNG16};
  talus_heightmap_info info;
  talus_status st = talus_heightmap_export(tpath("in.tif"), tpath("hm.png"), &o, &info, NULL, NULL);
  CHECK(st == TALUS_OK, "PNG16 export: %s", talus_last_error());
  int w = 0, hh = 0;
  double *q = read_band(tpath("hm.png"), &w, &hh);
  CHECK(q && w == NX && hh == NY, "PNG16 read back %d x %d", w, hh);
  if (!q) return;
  double lo = 1e30, hi = -1e30, zlo = 1e30, zhi = -1e30, worst = 0.0;
  for (int i = 0; i < NX * NY; i++)
    zlo = fmin(zlo, h[i]), zhi = fmax(zhi, h[i]);
  double quantum = (zhi - zlo) / 65535.0;
  for (int i = 0; i < NX * NY; i++) {
    lo = fmin(lo, q[i]), hi = fmax(hi, q[i]);
    worst = fmax(worst, fabs(zlo + q[i] * quantum - h[i]) / quantum);
  }
  CHECK(lo == 0.0 && hi == 65535.0, "codes span %g..%g, not 0..65535", lo, hi);
  CHECK_CLOSE(info.zmin, zlo, 0.0, "stated Z min = the data's min");
  CHECK_CLOSE(info.zmax, zhi, 0.0, "stated Z max = the data's max");
  CHECK(worst <= 0.5 + 1e-3, "round trip error %.4f quanta > 0.5", worst);
  printf("PNG16 round trip: worst error %.4f quanta (quantum %.3g m over %.6g m)\n", worst, quantum,
         zhi - zlo);
  free(q);
}

/* R16 holds the PNG's codes little-endian; R32 the heights themselves. */
static void test_raw(const float *h) {
  talus_heightmap_options o = {.format = TALUS_HM_R16};
  talus_status st = talus_heightmap_export(tpath("in.tif"), tpath("hm.r16"), &o, NULL, NULL, NULL);
  o.format = TALUS_HM_R32;
  if (!st) st = talus_heightmap_export(tpath("in.tif"), tpath("hm.r32"), &o, NULL, NULL, NULL);
  CHECK(st == TALUS_OK, "raw exports: %s", talus_last_error());
  size_t n16 = 0, n32 = 0;
  int w = 0, hh = 0;
  unsigned char *r16 = read_file(tpath("hm.r16"), &n16), *r32 = read_file(tpath("hm.r32"), &n32);
  double *png = read_band(tpath("hm.png"), &w, &hh);
  CHECK(n16 == 2u * NX * NY && n32 == 4u * NX * NY, "raw sizes %zu, %zu", n16, n32);
  int same16 = 1, same32 = 1;
  for (int i = 0; png && n16 == 2u * NX * NY && n32 == 4u * NX * NY && i < NX * NY; i++) {
    same16 &= (r16[2 * i] | r16[2 * i + 1] << 8) == (int)png[i];
    uint32_t u = (uint32_t)r32[4 * i] | (uint32_t)r32[4 * i + 1] << 8 |
                 (uint32_t)r32[4 * i + 2] << 16 | (uint32_t)r32[4 * i + 3] << 24;
    float f;
    memcpy(&f, &u, 4);
    same32 &= f == h[i];
  }
  CHECK(same16, "R16 codes differ from the PNG's");
  CHECK(same32, "R32 values differ from the input's heights");
  free(r16), free(r32), free(png);
}

/* A number from the sidecar document at a dotted path ("z.range_m"). */
static double json_num(json_object *doc, const char *path) {
  char key[64];
  json_object *o = doc;
  for (const char *p = path; o && *p;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    snprintf(key, sizeof key, "%.*s", (int)n, p);
    if (!json_object_object_get_ex(o, key, &o)) o = NULL;
    p += n + (dot ? 1 : 0);
  }
  return o ? json_object_get_double(o) : NAN;
}

/* --size 33 and 40x17: sizes, spacing over the same extent, geotransform,
 * full range kept after resampling; the sidecar's figures. */
static void test_resized(void) {
  talus_heightmap_options o = {.format = TALUS_HM_PNG16, .width = 33, .height = 33};
  talus_heightmap_info info;
  talus_status st = talus_heightmap_export(tpath("in.tif"), tpath("s.png"), &o, &info, NULL, NULL);
  if (!st) st = talus_heightmap_sidecar(tpath("s.png.json"), "s.png", &info);
  CHECK(st == TALUS_OK, "33 x 33 export: %s", talus_last_error());
  int w = 0, h = 0;
  double *q = read_band(tpath("s.png"), &w, &h), lo = 1e9, hi = -1e9;
  CHECK(q && w == 33 && h == 33, "resized to %d x %d", w, h);
  for (int i = 0; q && i < w * h; i++)
    lo = fmin(lo, q[i]), hi = fmax(hi, q[i]);
  CHECK(lo == 0.0 && hi == 65535.0, "resampled codes span %g..%g", lo, hi);
  CHECK_CLOSE(info.dx * 33, 2.5 * NX, 1e-9, "33 samples cover the input's width");
  CHECK_CLOSE(info.dy * 33, 2.5 * NY, 1e-9, "33 samples cover the input's height");
  json_object *doc = json_object_from_file(tpath("s.png.json"));
  CHECK(doc != NULL, "sidecar parses as JSON");
  double range = info.zmax - info.zmin;
  CHECK_CLOSE(json_num(doc, "width"), 33, 0, "sidecar width");
  CHECK_CLOSE(json_num(doc, "sample_spacing_m.x"), info.dx, 1e-12, "sidecar spacing");
  CHECK_CLOSE(json_num(doc, "z.range_m"), range, 1e-9, "sidecar range");
  CHECK_CLOSE(json_num(doc, "unreal.scale_cm.x"), info.dx * 100, 1e-9, "Unreal X scale [cm]");
  /* Unreal: code c is (c - 32768) / 128 local units times the Z scale [cm] */
  double zs = json_num(doc, "unreal.scale_cm.z"), loc = json_num(doc, "unreal.location_z_cm");
  CHECK_CLOSE(loc + (0 - 32768) / 128.0 * zs, info.zmin * 100, 1e-6, "Unreal: code 0 at zmin");
  CHECK_CLOSE(loc + (65535 - 32768) / 128.0 * zs, info.zmax * 100, 1e-6, "Unreal: 65535 at zmax");
  CHECK_CLOSE(json_num(doc, "unity.terrain_size_m.x"), 32 * info.dx, 1e-9, "Unity width");
  json_object_put(doc);
  free(q);
  talus_heightmap_options g = {.format = TALUS_HM_GTIFF, .width = 40, .height = 17};
  st = talus_heightmap_export(tpath("in.tif"), tpath("s.tif"), &g, NULL, NULL, NULL);
  GDALDatasetH ds = st ? NULL : GDALOpen(tpath("s.tif"), GA_ReadOnly);
  double gt[6] = {0};
  if (ds) GDALGetGeoTransform(ds, gt);
  CHECK(ds && GDALGetRasterXSize(ds) == 40 && GDALGetRasterYSize(ds) == 17, "GTiff 40 x 17");
  CHECK_CLOSE(gt[0], 500000.0, 1e-6, "GTiff origin x kept");
  CHECK_CLOSE(gt[1] * 40, 2.5 * NX, 1e-9, "GTiff pixels cover the width");
  CHECK_CLOSE(gt[5] * 17, -2.5 * NY, 1e-9, "GTiff pixels cover the height");
  if (ds) GDALClose(ds);
}

/* NoData: the minimum code in the PNG, NoData in the GeoTIFF; a stated Z
 * range is what the codes span. */
static void test_nodata_and_range(void) {
  talus_heightmap_options o = {.format = TALUS_HM_PNG16, .z_stated = 1, .zmin = 0, .zmax = 400};
  talus_heightmap_info info;
  talus_status st = talus_heightmap_export(tpath("nd.tif"), tpath("nd.png"), &o, &info, NULL, NULL);
  CHECK(st == TALUS_OK, "NoData export: %s", talus_last_error());
  CHECK(info.nodata_samples == 9 * NY, "%lld NoData samples, not %d",
        (long long)info.nodata_samples, 9 * NY);
  int w = 0, h = 0;
  double *q = read_band(tpath("nd.png"), &w, &h);
  int zero = 1, coded = 1;
  for (int y = 0; q && y < h; y++)
    for (int x = 0; x < w; x++) {
      if (x < 9) zero &= q[y * w + x] == 0.0;
      float v = (float)(150.0 + 2.0 * x - 1.5 * y + 40.0 * sin(0.37 * x) * cos(0.21 * y));
      if (x >= 9) coded &= q[y * w + x] == lround(v / 400.0 * 65535.0);
    }
  CHECK(zero, "NoData samples are not code 0");
  CHECK(coded, "codes are not round(h / 400 * 65535) in the stated range 0..400");
  free(q);
  o.format = TALUS_HM_GTIFF;
  st = talus_heightmap_export(tpath("nd.tif"), tpath("nd_out.tif"), &o, NULL, NULL, NULL);
  double *v = st ? NULL : read_band(tpath("nd_out.tif"), &w, &h);
  CHECK(v && v[0] == ND && v[9] != ND, "GeoTIFF keeps NoData (%g) and heights (%g)", v ? v[0] : 0,
        v ? v[9] : 0);
  free(v);
}

/* Engine tiles: windows of the output grid written with the grid's range
 * hold the whole export's samples there, so neighbours share their edge
 * rows and columns; 61 x 47 splits into 4 x 2 tiles of 16 x 24. */
static void test_tiles(void) {
  talus_heightmap_options o = {.format = TALUS_HM_R16};
  talus_heightmap_info all, info;
  talus_status st = talus_heightmap_scan(tpath("in.tif"), &o, &all, NULL, NULL);
  if (!st) st = talus_heightmap_export(tpath("in.tif"), tpath("w.r16"), &o, NULL, NULL, NULL);
  size_t n = 0, nt = 0;
  unsigned char *whole = read_file(tpath("w.r16"), &n);
  CHECK(st == TALUS_OK && n == 2u * NX * NY, "whole R16: %s", talus_last_error());
  int same = 1, shared = 0;
  for (int j = 0; j < 2 && whole && n == 2u * NX * NY; j++)
    for (int i = 0; i < 4; i++) {
      talus_heightmap_options t = o;
      t.z_stated = 1, t.zmin = all.zmin, t.zmax = all.zmax;
      t.win_x0 = 15 * i, t.win_y0 = 23 * j, t.win_w = 16, t.win_h = 24;
      st = talus_heightmap_export(tpath("in.tif"), tpath("t.r16"), &t, &info, NULL, NULL);
      unsigned char *b = read_file(tpath("t.r16"), &nt);
      CHECK(!st && nt == 2 * 16 * 24 && info.x0 == 15 * i && info.y0 == 23 * j, "tile %d,%d", i, j);
      for (int y = 0; b && nt == 2 * 16 * 24 && y < 24; y++)
        same &= !memcmp(b + 2 * 16 * y, whole + 2 * ((23 * j + y) * NX + 15 * i), 2 * 16);
      shared += i > 0; /* its first column is the last of the tile west of it */
      free(b);
    }
  CHECK(same, "tile samples differ from the whole grid's at the same place");
  CHECK(shared == 6, "tiles sharing a column with a neighbour: %d", shared);
  free(whole);
}

/* Refusals: all NoData, empty range, unwritable path; nothing left. */
static void test_refusals(float *h) {
  for (int i = 0; i < NX * NY; i++)
    h[i] = (float)ND;
  talus_georef geo = {{0, 1, 0, 0, 0, -1}, NULL, 1, ND};
  const float *bands[1] = {h};
  talus_status st = talus_geotiff_write(tpath("all.tif"), NX, NY, 1, bands, NULL, NULL, &geo, NULL);
  talus_heightmap_options o = {.format = TALUS_HM_R16};
  if (!st) st = talus_heightmap_export(tpath("all.tif"), tpath("all.r16"), &o, NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_DATA, "all NoData: %s", talus_status_name(st));
  CHECK(!exists(tpath("all.r16")) && !exists(tpath("all.r16.partial")), "all NoData left a file");
  o.z_stated = 1, o.zmin = 5, o.zmax = 5;
  st = talus_heightmap_export(tpath("in.tif"), tpath("e.r16"), &o, NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_ARGUMENT && !exists(tpath("e.r16")), "empty Z range: %s",
        talus_status_name(st));
  o.z_stated = 0;
  st = talus_heightmap_export(tpath("in.tif"), "/nonexistent-dir/x.r16", &o, NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_IO, "unwritable path: %s", talus_status_name(st));
  talus_hm_format f;
  CHECK(!talus_hm_format_parse("PNG8", &f) && talus_hm_format_parse("png16", &f) &&
            f == TALUS_HM_PNG16,
        "format names");
  CHECK(talus_hm_format_from_path("a/b.R32", &f) && f == TALUS_HM_R32 &&
            !talus_hm_format_from_path("x.obj.d/y", &f),
        "formats from extensions");
}

/* A progress callback that stops the copy at its first call. */
static int stop_at_once(double complete, const char *message, void *user) {
  (void)complete, (void)message;
  ++*(int *)user;
  return 0;
}

/* A progress callback that counts its calls and lets the copy go on. */
static int count_calls(double complete, const char *message, void *user) {
  (void)complete, (void)message;
  ++*(int *)user;
  return 1;
}

/* talus_export_copy_file (talus erode -of): a COG with the GeoTIFF's
 * values, progress reported; a copy cancelled by its progress callback or
 * failed by the driver leaves nothing at the path nor a partial file, and
 * the source as it was. */
static void test_copy_file(const float *h) {
  int calls = 0;
  const char *co[] = {"COMPRESS=DEFLATE", NULL};
  talus_status st =
      talus_export_copy_file(tpath("in.tif"), tpath("c.tif"), "COG", co, count_calls, &calls);
  CHECK(st == TALUS_OK && calls > 0, "COG copy: %s, %d progress calls", talus_last_error(), calls);
  GDALDatasetH d = GDALOpen(tpath("c.tif"), GA_ReadOnly);
  float *v = malloc(sizeof(float) * NX * NY);
  int same = d && v &&
             GDALRasterIO(GDALGetRasterBand(d, 1), GF_Read, 0, 0, NX, NY, v, NX, NY, GDT_Float32, 0,
                          0) == CE_None &&
             !memcmp(v, h, sizeof(float) * NX * NY);
  const char *layout = d ? GDALGetMetadataItem(d, "LAYOUT", "IMAGE_STRUCTURE") : NULL;
  CHECK(same && layout && !strcmp(layout, "COG"), "COG copy: the input's values, COG layout");
  if (d) GDALClose(d);
  free(v);
  calls = 0;
  st = talus_export_copy_file(tpath("in.tif"), tpath("k.tif"), "COG", NULL, stop_at_once, &calls);
  CHECK(st == TALUS_ERR_CANCELLED && calls == 1, "cancelled copy: %s", talus_status_name(st));
  CHECK(!exists(tpath("k.tif")) && !exists(tpath("k.tif.partial")) && exists(tpath("in.tif")),
        "a cancelled copy left a file or took the source");
  const char *jpeg[] = {"COMPRESS=JPEG", NULL}; /* JPEG takes no Float32 */
  st = talus_export_copy_file(tpath("in.tif"), tpath("j.tif"), "COG", jpeg, NULL, NULL);
  CHECK(st == TALUS_ERR_IO && !exists(tpath("j.tif")) && !exists(tpath("j.tif.partial")),
        "a copy the driver fails: %s, a file left?", talus_status_name(st));
  st = talus_export_copy_file(tpath("none.tif"), tpath("n.tif"), "COG", NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_IO && !exists(tpath("n.tif")), "a missing source: %s",
        talus_status_name(st));
}

int main(void) {
  if (!scratch_open("talus_export")) return 1;
  GDALAllRegister();
  float *h = malloc(sizeof(float) * NX * NY);
  make_input(tpath("in.tif"), 0, h);
  test_copy_file(h);
  test_png_round_trip(h);
  test_raw(h);
  test_resized();
  test_tiles();
  make_input(tpath("nd.tif"), 1, h);
  test_nodata_and_range();
  test_refusals(h);
  free(h);
  scratch_close();
  return check_report("test_export");
}
