/*
 * test_raster.c — the GDAL raster module: GeoTIFF round trips (CRS,
 * geotransform, NoData, values, band names, metadata, creation options),
 * integer inputs, NoData policies, every refused input (all NoData, NaN,
 * 0-sized, oversized, missing, not a raster), unwritable outputs leaving
 * nothing behind, metric cell sizes of geographic/projected/no CRS, the PNG
 * preview (its water and overhang tints) and `talus info`.
 */
#include "check.h"
#include "scratch.h"
#include "io/export/export.h"
#include "io/raster/raster.h"
#include "kernels/state.h"

#include <cpl_conv.h>
#include <gdal.h>
#include <ogr_srs_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* WKT of an EPSG code (malloc'd). */
static char *epsg_wkt(int code) {
  OGRSpatialReferenceH s = OSRNewSpatialReference(NULL);
  char *wkt = NULL, *out = NULL;
  if (OSRImportFromEPSG(s, code) == OGRERR_NONE && OSRExportToWkt(s, &wkt) == OGRERR_NONE)
    out = strdup(wkt);
  CPLFree(wkt);
  OSRDestroySpatialReference(s);
  return out;
}

static int same_crs(const char *a, const char *b) {
  if (!a || !b) return 0;
  OGRSpatialReferenceH sa = OSRNewSpatialReference(a), sb = OSRNewSpatialReference(b);
  int same = sa && sb && OSRIsSame(sa, sb);
  OSRDestroySpatialReference(sa);
  OSRDestroySpatialReference(sb);
  return same;
}

/* Writes a one-band raster of any type directly with GDAL (not through
 * talus), values given as doubles. */
static void gdal_write(const char *path, GDALDataType type, int nx, int ny, const double *v,
                       const double *gt, const char *wkt, const double *nodata) {
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GTiff"), path, nx, ny, 1, type, NULL);
  if (gt) GDALSetGeoTransform(ds, (double *)gt);
  if (wkt) GDALSetProjection(ds, wkt);
  GDALRasterBandH b = GDALGetRasterBand(ds, 1);
  if (nodata) GDALSetRasterNoDataValue(b, *nodata);
  CPLErr e = GDALRasterIO(b, GF_Write, 0, 0, nx, ny, (void *)v, nx, ny, GDT_Float64, 0, 0);
  CHECK(e == CE_None, "GDAL test write of %s", path);
  GDALClose(ds);
}

/* Height field used by several tests: a smooth surface with 3 NoData cells. */
static float *sample_heights(int nx, int ny, float nodata) {
  float *h = malloc((size_t)nx * ny * sizeof *h);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      h[y * nx + x] = 500.0f + 3.25f * x - 1.5f * y + 0.125f * (x * y % 7);
  h[0] = h[5 * nx + 7] = h[ny * nx - 1] = nodata;
  return h;
}

static void test_roundtrip(void) {
  int nx = 40, ny = 30;
  float *h = sample_heights(nx, ny, -9999.0f);
  talus_georef geo = {{376000.0, 30.0, 0.0, 3808000.0, 0.0, -30.0}, epsg_wkt(32611), 1, -9999.0};
  const float *bands[1] = {h};
  const char *names[1] = {"bedrock"};
  const char *meta[] = {"TALUS_FORMAT=1", "TALUS_STEP=42", NULL};
  const char *p = tpath("rt.tif");
  talus_status st = talus_geotiff_write(p, nx, ny, 1, bands, names, meta, &geo, NULL);
  CHECK(st == TALUS_OK, "write: %s", talus_last_error());
  CHECK(!exists(tpath("rt.tif.partial")), "partial file left after success");
  talus_dem d;
  st = talus_dem_read(p, NULL, &d);
  CHECK(st == TALUS_OK, "read: %s", talus_last_error());
  if (st != TALUS_OK) return;
  CHECK(d.nx == nx && d.ny == ny, "size %d x %d", d.nx, d.ny);
  CHECK(d.cell_size == 30.0, "cell size %g", d.cell_size);
  CHECK(same_crs(d.geo.wkt, geo.wkt), "CRS differs after round trip");
  CHECK(memcmp(d.geo.gt, geo.gt, sizeof geo.gt) == 0, "geotransform differs");
  CHECK(d.geo.has_nodata && d.geo.nodata == -9999.0, "nodata %g", d.geo.nodata);
  CHECK(d.nodata_cells == 3 && d.nodata, "nodata cells %lld", (long long)d.nodata_cells);
  float lo = 1e30f;
  int same = 1;
  for (int i = 0; i < nx * ny; i++)
    if (h[i] != -9999.0f && h[i] < lo) lo = h[i];
  for (int i = 0; i < nx * ny; i++) {
    int nd = h[i] == -9999.0f;
    same &= d.nodata[i] == nd && d.height[i] == (nd ? lo : h[i]);
  }
  CHECK(same, "values or mask differ after round trip (masked cells must read as min %g)", lo);
  talus_dem_free(&d);
  talus_georef_free(&geo);
  free(h);
}

/* The file talus writes is tiled 256², ZSTD with the floating-point
 * predictor, and carries band names and TALUS_* metadata. */
static void test_layout_and_metadata(void) {
  GDALDatasetH ds = GDALOpen(tpath("rt.tif"), GA_ReadOnly);
  CHECK(ds != NULL, "reopen rt.tif");
  if (!ds) return;
  const char *c = GDALGetMetadataItem(ds, "COMPRESSION", "IMAGE_STRUCTURE");
  const char *pr = GDALGetMetadataItem(ds, "PREDICTOR", "IMAGE_STRUCTURE");
  CHECK(c && strcmp(c, "ZSTD") == 0, "compression %s", c ? c : "(none)");
  CHECK(pr && strcmp(pr, "3") == 0, "predictor %s", pr ? pr : "(none)");
  int bx = 0, by = 0;
  GDALGetBlockSize(GDALGetRasterBand(ds, 1), &bx, &by);
  CHECK(bx == 256 && by == 256, "block %d x %d", bx, by);
  GDALClose(ds);
  talus_bands b;
  talus_status st = talus_bands_read(tpath("rt.tif"), &b);
  CHECK(st == TALUS_OK, "bands read: %s", talus_last_error());
  if (st != TALUS_OK) return;
  CHECK(b.nbands == 1 && strcmp(b.name[0], "bedrock") == 0, "band name '%s'", b.name[0]);
  const char *step = talus_bands_meta(&b, "TALUS_STEP");
  CHECK(step && strcmp(step, "42") == 0, "TALUS_STEP = %s", step ? step : "(missing)");
  CHECK(b.band[0][0] == -9999.0f, "raw NoData value kept in bands read: %g", b.band[0][0]);
  talus_bands_free(&b);
}

static void test_band_names_and_co(void) {
  int nx = 300, ny = 260; /* more than one tile and more than one read window */
  size_t n = (size_t)nx * ny;
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
  for (size_t i = 0; i < n; i++)
    a[i] = (float)i, b[i] = -(float)i * 0.5f, c[i] = (float)(i % 13);
  const float *bands[3] = {a, b, c};
  const char *names[3] = {"water", NULL, "sand"};
  const char *co[] = {"COMPRESS=DEFLATE", "BLOCKXSIZE=128", "BLOCKYSIZE=128", NULL};
  talus_write_options opt = {.creation_options = co};
  const char *p = tpath("bands.tif");
  talus_status st = talus_geotiff_write(p, nx, ny, 3, bands, names, NULL, NULL, &opt);
  CHECK(st == TALUS_OK, "write 3 bands: %s", talus_last_error());
  GDALDatasetH ds = GDALOpen(p, GA_ReadOnly);
  const char *cm = ds ? GDALGetMetadataItem(ds, "COMPRESSION", "IMAGE_STRUCTURE") : NULL;
  CHECK(cm && strcmp(cm, "DEFLATE") == 0, "-co COMPRESS=DEFLATE ignored: %s", cm ? cm : "(none)");
  int bx = 0, by = 0;
  if (ds) GDALGetBlockSize(GDALGetRasterBand(ds, 2), &bx, &by), GDALClose(ds);
  CHECK(bx == 128 && by == 128, "-co block size ignored: %d x %d", bx, by);
  talus_bands r;
  st = talus_bands_read(p, &r);
  CHECK(st == TALUS_OK && r.nbands == 3, "read back: %s", talus_last_error());
  if (st != TALUS_OK) return;
  CHECK(strcmp(r.name[0], "water") == 0 && r.name[1][0] == 0 && strcmp(r.name[2], "sand") == 0,
        "names '%s' '%s' '%s'", r.name[0], r.name[1], r.name[2]);
  CHECK(talus_bands_find(&r, "sand") == 2 && talus_bands_find(&r, "rock") == -1, "band lookup");
  CHECK(memcmp(r.band[0], a, n * 4) == 0 && memcmp(r.band[1], b, n * 4) == 0 &&
            memcmp(r.band[2], c, n * 4) == 0,
        "band values differ after round trip");
  CHECK(r.geo.wkt == NULL && r.geo.gt[1] == 0.0 && !r.geo.has_nodata, "no georef was written");
  talus_bands_free(&r);
  free(a), free(b), free(c);
}

static void test_bad_creation_options(void) {
  float v[4] = {1, 2, 3, 4};
  const float *bands[1] = {v};
  const char *unknown[] = {"NOT_AN_OPTION=1", NULL}, *malformed[] = {"COMPRESS", NULL};
  talus_write_options o1 = {.creation_options = unknown}, o2 = {.creation_options = malformed};
  talus_status st = talus_geotiff_write(tpath("co.tif"), 2, 2, 1, bands, NULL, NULL, NULL, &o1);
  CHECK(st == TALUS_ERR_ARGUMENT && strstr(talus_last_error(), "NOT_AN_OPTION"),
        "unknown -co: %d %s", st, talus_last_error());
  st = talus_geotiff_write(tpath("co.tif"), 2, 2, 1, bands, NULL, NULL, NULL, &o2);
  CHECK(st == TALUS_ERR_ARGUMENT, "malformed -co: %d %s", st, talus_last_error());
  CHECK(!exists(tpath("co.tif")) && !exists(tpath("co.tif.partial")), "bad -co left a file");
}

static void test_int16_input(void) {
  int nx = 23, ny = 300; /* more rows than one read window */
  double *v = malloc(sizeof *v * nx * ny), nd = -32768, gt[6] = {0, 10, 0, 0, 0, -10};
  for (int i = 0; i < nx * ny; i++)
    v[i] = (i * 37) % 4001 - 500;
  v[17] = nd;
  char *wkt = epsg_wkt(32633);
  gdal_write(tpath("i16.tif"), GDT_Int16, nx, ny, v, gt, wkt, &nd);
  talus_dem d;
  talus_dem_options o = {TALUS_NODATA_OUTFLOW, 0.0, 0.3048, 0, 0};
  talus_status st = talus_dem_read(tpath("i16.tif"), &o, &d);
  CHECK(st == TALUS_OK, "Int16 read: %s", talus_last_error());
  if (st == TALUS_OK) {
    int ok = d.nodata_cells == 1 && d.nodata && d.nodata[17] == 1;
    for (int i = 0; i < nx * ny; i++)
      if (i != 17) ok &= d.height[i] == (float)((double)(float)v[i] * 0.3048);
    CHECK(ok, "Int16 values (z-scaled by 0.3048) or mask wrong");
    CHECK(d.cell_size == 10.0 && d.geo.nodata == -32768.0, "cell %g nodata %g", d.cell_size,
          d.geo.nodata);
  }
  talus_dem_free(&d);
  free(wkt);
  free(v);
}

/* A ramp with a 6 × 5 hole inside and a NoData strip along the left edge. */
static void write_holey(const char *p, int nx, int ny, double base) {
  double *v = malloc(sizeof *v * nx * ny), nd = -1.0;
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      int hole = (x >= 8 && x < 14 && y >= 6 && y < 11) || x == 0;
      v[y * nx + x] = hole ? nd : base + 2.0 * x + (base == 0 ? 0.5 * y : 0.0);
    }
  double gt[6] = {0, 5, 0, 0, 0, -5};
  gdal_write(p, GDT_Float32, nx, ny, v, gt, NULL, &nd);
  free(v);
}

static void test_policies(void) {
  int nx = 24, ny = 16, holes = 6 * 5 + ny;
  write_holey(tpath("holey.tif"), nx, ny, 0.0);
  talus_dem m, w, f, f2;
  talus_dem_options om = {TALUS_NODATA_OUTFLOW, 0, 1, 0, 0}, ow = {TALUS_NODATA_WALL, 0, 1, 0, 0},
                    of = {TALUS_NODATA_FILL, 0, 1, 0, 0};
  talus_status s1 = talus_dem_read(tpath("holey.tif"), &om, &m);
  talus_status s2 = talus_dem_read(tpath("holey.tif"), &ow, &w);
  talus_status s3 = talus_dem_read(tpath("holey.tif"), &of, &f);
  talus_status s4 = talus_dem_read(tpath("holey.tif"), &of, &f2);
  CHECK(!s1 && !s2 && !s3 && !s4, "policy reads: %s", talus_last_error());
  if (s1 || s2 || s3 || s4) return;
  CHECK(m.nodata_cells == holes && w.nodata_cells == holes && m.nodata && w.nodata,
        "mask kept: %lld", (long long)m.nodata_cells);
  CHECK(f.nodata == NULL && f.nodata_cells == 0 && f.filled_cells == holes, "fill clears mask");
  float lo = 2.0f, hi = 2.0f * (nx - 1) + 0.5f * (ny - 1); /* valid range of the ramp */
  int untouched = 1, bounded = 1, masked_min = 1;
  for (int i = 0; i < nx * ny; i++) {
    if (!m.nodata[i])
      untouched &= f.height[i] == m.height[i];
    else
      bounded &= f.height[i] >= lo && f.height[i] <= hi && isfinite(f.height[i]);
    if (m.nodata[i]) masked_min &= m.height[i] == lo && w.height[i] == lo;
  }
  CHECK(untouched, "fill changed valid cells");
  CHECK(bounded, "filled heights leave the valid range [%g, %g]", lo, hi);
  CHECK(masked_min, "masked cells are not at the minimum valid height %g", lo);
  /* The left strip's cells each touch exactly one valid cell (x = 1). */
  int strip = 1;
  for (int y = 0; y < ny; y++)
    strip &= f.height[y * nx] == m.height[y * nx + 1];
  CHECK(strip, "first fill ring must copy its single known neighbour");
  CHECK(memcmp(f.height, f2.height, sizeof(float) * nx * ny) == 0, "fill is not deterministic");
  talus_dem_free(&m), talus_dem_free(&w), talus_dem_free(&f), talus_dem_free(&f2);
}

static void test_fill_constant(void) {
  int nx = 24, ny = 16;
  double *v = malloc(sizeof *v * nx * ny), nd = -1.0;
  for (int i = 0; i < nx * ny; i++)
    v[i] = (i % nx > 9 && i % nx < 13 && i / nx > 5) ? nd : 77.5;
  gdal_write(tpath("flat.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  talus_dem d;
  talus_dem_options of = {TALUS_NODATA_FILL, 2.0, 1, 0, 0};
  talus_status st = talus_dem_read(tpath("flat.tif"), &of, &d);
  CHECK(st == TALUS_OK, "flat read: %s", talus_last_error());
  int flat = st == TALUS_OK;
  for (int i = 0; flat && i < nx * ny; i++)
    flat &= d.height[i] == 77.5f;
  CHECK(flat, "filling a hole in a flat surface must give the same height");
  CHECK(st != TALUS_OK || d.cell_size == 2.0, "cell size override: %g", d.cell_size);
  talus_dem_free(&d);
  free(v);
}

static void test_bad_data(void) {
  int nx = 8, ny = 6;
  double v[48], nd = 5.0;
  for (int i = 0; i < 48; i++)
    v[i] = 5.0;
  gdal_write(tpath("allnd.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  talus_dem d;
  talus_status st = talus_dem_read(tpath("allnd.tif"), NULL, &d);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "NoData"), "all NoData: %d %s", st,
        talus_last_error());
  CHECK(d.height == NULL && d.nodata == NULL, "failed read must leave an empty DEM");
  for (int i = 0; i < 48; i++)
    v[i] = i;
  v[2 * nx + 3] = NAN;
  v[4 * nx + 1] = NAN;
  gdal_write(tpath("nan.tif"), GDT_Float32, nx, ny, v, NULL, NULL, NULL);
  st = talus_dem_read(tpath("nan.tif"), NULL, &d);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "2 heights") &&
            strstr(talus_last_error(), "column 3, row 2") && strstr(talus_last_error(), "NoData"),
        "undeclared NaN: %d %s", st, talus_last_error());
  double nan_nd = NAN;
  gdal_write(tpath("nan_nd.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nan_nd);
  st = talus_dem_read(tpath("nan_nd.tif"), NULL, &d);
  CHECK(st == TALUS_OK && d.nodata_cells == 2 && d.nodata[2 * nx + 3],
        "NaN NoData counts as NoData: %s", talus_last_error());
  talus_dem_free(&d);
  v[2 * nx + 3] = INFINITY, v[4 * nx + 1] = 1.0;
  gdal_write(tpath("inf.tif"), GDT_Float32, nx, ny, v, NULL, NULL, NULL);
  st = talus_dem_read(tpath("inf.tif"), NULL, &d);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "1 height is"), "undeclared Inf: %d %s",
        st, talus_last_error());
}

static void write_text(const char *p, const char *text) {
  FILE *f = fopen(p, "w");
  if (f) fputs(text, f), fclose(f);
}

static void test_bad_files(void) {
  talus_dem d;
  const char *p = tpath("missing.tif");
  talus_status st = talus_dem_read(p, NULL, &d);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "missing.tif") &&
            strstr(talus_last_error(), "No such file"),
        "missing: %d %s", st, talus_last_error());
  write_text(tpath("notes.txt"), "this is not a raster\n");
  st = talus_dem_read(tpath("notes.txt"), NULL, &d);
  CHECK(st == TALUS_ERR_FORMAT && strstr(talus_last_error(), "notes.txt"), "text: %d %s", st,
        talus_last_error());
  write_text(tpath("zero.vrt"), "<VRTDataset rasterXSize=\"0\" rasterYSize=\"0\"><VRTRasterBand "
                                "dataType=\"Float32\" band=\"1\"/></VRTDataset>\n");
  st = talus_dem_read(tpath("zero.vrt"), NULL, &d);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "0 x 0"), "0x0: %d %s", st,
        talus_last_error());
  write_text(tpath("huge.vrt"), "<VRTDataset rasterXSize=\"200000\" rasterYSize=\"100000\">"
                                "<VRTRasterBand dataType=\"Float32\" band=\"1\"/></VRTDataset>\n");
  st = talus_dem_read(tpath("huge.vrt"), NULL, &d);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "200000 x 100000"), "huge: %d %s", st,
        talus_last_error());
  talus_dem_options o = {0, 0, 1, 40, 0};
  st = talus_dem_read(tpath("allnd.tif"), &o, &d); /* 8 x 6 = 48 > 40 */
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "8 x 6"), "max_cells: %d %s", st,
        talus_last_error());
}

static void test_unwritable(void) {
  float v[4] = {1, 2, 3, 4};
  const float *bands[1] = {v};
  const char *p = tpath("no_such_dir/out.tif");
  talus_status st = talus_geotiff_write(p, 2, 2, 1, bands, NULL, NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "no_such_dir/out.tif"),
        "missing directory: %d %s", st, talus_last_error());
  st = talus_preview_png(tpath("no_such_dir/p.png"), 2, 2, 1.0, v, v, NULL, 0);
  CHECK(st == TALUS_ERR_IO, "preview to missing directory: %d %s", st, talus_last_error());
  write_text(tpath("plainfile"), "x");
  st = talus_geotiff_write(tpath("plainfile/out.tif"), 2, 2, 1, bands, NULL, NULL, NULL, NULL);
  CHECK(st == TALUS_ERR_IO, "parent is a file: %d %s", st, talus_last_error());
  if (geteuid() != 0) { /* root ignores permissions */
    mkdir(tpath("ro"), 0500);
    st = talus_geotiff_write(tpath("ro/out.tif"), 2, 2, 1, bands, NULL, NULL, NULL, NULL);
    CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "ro/out.tif"), "read-only dir: %s",
          talus_last_error());
    CHECK(!exists(tpath("ro/out.tif")) && !exists(tpath("ro/out.tif.partial")), "left a file");
    chmod(tpath("ro"), 0700);
  }
  CHECK(!exists(tpath("no_such_dir")), "a directory was created");
  /* A failure after the file was created must remove it too. */
  talus_georef bad = {{0, 1, 0, 0, 0, -1}, "NOT A CRS", 0, 0};
  st = talus_geotiff_write(tpath("badcrs.tif"), 2, 2, 1, bands, NULL, NULL, &bad, NULL);
  CHECK(st == TALUS_ERR_ARGUMENT && strstr(talus_last_error(), "badcrs.tif"), "bad CRS: %d %s", st,
        talus_last_error());
  CHECK(!exists(tpath("badcrs.tif")) && !exists(tpath("badcrs.tif.partial")),
        "bad CRS left a file");
}

/* Runs talus_dem_read with stderr captured into log (for the warnings). */
static talus_status read_logged(const char *p, talus_dem *d, char *log, size_t size) {
  fflush(stderr);
  int saved = dup(2);
  FILE *f = freopen(tpath("stderr.txt"), "w", stderr);
  talus_status st = talus_dem_read(p, NULL, d);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  log[0] = 0;
  FILE *r = fopen(tpath("stderr.txt"), "r");
  if (r) log[fread(log, 1, size - 1, r)] = 0, fclose(r);
  (void)f;
  return st;
}

static void test_geographic(void) {
  int nx = 100, ny = 100;
  double v[10000], px = 1.0 / 1200.0, gt[6] = {-72.0, px, 0, 45.0, 0, -px};
  for (int i = 0; i < nx * ny; i++)
    v[i] = 100 + i % 17;
  char *wkt = epsg_wkt(4326), log[4096];
  gdal_write(tpath("geo.tif"), GDT_Int16, nx, ny, v, gt, wkt, NULL);
  talus_dem d;
  talus_status st = read_logged(tpath("geo.tif"), &d, log, sizeof log);
  CHECK(st == TALUS_OK, "geographic read: %s", talus_last_error());
  double lat = (45.0 - px * ny / 2) * M_PI / 180.0, R = 6371008.8;
  double dy = px * M_PI / 180.0 * R, dx = dy * cos(lat);
  CHECK_CLOSE(d.cell_size, sqrt(dx * dy), 1e-9 * dy, "geographic cell size [m]");
  CHECK(strstr(log, "gdalwarp -t_srs EPSG:32619 -r bilinear -tr") && strstr(log, "geo_utm.tif"),
        "UTM reprojection hint missing: %s", log);
  talus_dem_free(&d);
  gt[0] = 151.0, gt[3] = -33.0; /* Sydney: southern hemisphere, zone 56 */
  gdal_write(tpath("geo_s.tif"), GDT_Int16, nx, ny, v, gt, wkt, NULL);
  st = read_logged(tpath("geo_s.tif"), &d, log, sizeof log);
  CHECK(st == TALUS_OK && strstr(log, "EPSG:32756"), "southern UTM hint: %s", log);
  talus_dem_free(&d);
  talus_dem_options o = {0, 12.5, 1, 0, 0};
  st = talus_dem_read(tpath("geo.tif"), &o, &d);
  CHECK(st == TALUS_OK && d.cell_size == 12.5, "override: %g", d.cell_size);
  talus_dem_free(&d);
  free(wkt);
}

static void test_projected_units(void) {
  double v[16], gt[6] = {1000, 100, 0, 5000, 0, -100};
  for (int i = 0; i < 16; i++)
    v[i] = i;
  char *ft = epsg_wkt(2227), *utm = epsg_wkt(32611), log[4096]; /* California zone 3, US feet */
  gdal_write(tpath("feet.tif"), GDT_Float32, 4, 4, v, gt, ft, NULL);
  talus_dem d;
  talus_status st = talus_dem_read(tpath("feet.tif"), NULL, &d);
  CHECK(st == TALUS_OK, "feet read: %s", talus_last_error());
  CHECK_CLOSE(d.cell_size, 100.0 * 1200.0 / 3937.0, 1e-9, "US survey feet to metres");
  talus_dem_free(&d);
  gt[1] = 30, gt[5] = -20;
  gdal_write(tpath("rect.tif"), GDT_Float32, 4, 4, v, gt, utm, NULL);
  st = read_logged(tpath("rect.tif"), &d, log, sizeof log);
  CHECK_CLOSE(d.cell_size, sqrt(600.0), 1e-12, "non-square pixels: geometric mean");
  CHECK(st == TALUS_OK && strstr(log, "non-square"), "non-square warning: %s", log);
  talus_dem_free(&d);
  gdal_write(tpath("nocrs.tif"), GDT_Float32, 4, 4, v, gt + 0, NULL, NULL);
  st = read_logged(tpath("nocrs.tif"), &d, log, sizeof log);
  CHECK(st == TALUS_OK && strstr(log, "no CRS"), "no-CRS warning: %s", log);
  CHECK_CLOSE(d.cell_size, sqrt(600.0), 1e-12, "no CRS: pixel size as metres");
  talus_dem_free(&d);
  gdal_write(tpath("nogt.tif"), GDT_Float32, 4, 4, v, NULL, NULL, NULL);
  st = read_logged(tpath("nogt.tif"), &d, log, sizeof log);
  CHECK(st == TALUS_OK && d.cell_size == 1.0 && strstr(log, "no geotransform"), "no gt: %g %s",
        d.cell_size, log);
  talus_dem_free(&d);
  free(ft), free(utm);
}

/* Mean grey of columns [x0, x1) of band 1. */
static double mean_grey(GDALDatasetH ds, int x0, int x1, int h) {
  unsigned char *px = malloc((size_t)(x1 - x0) * h);
  CPLErr e = GDALRasterIO(GDALGetRasterBand(ds, 1), GF_Read, x0, 0, x1 - x0, h, px, x1 - x0, h,
                          GDT_Byte, 0, 0);
  double s = e == CE_None ? 0 : -1e9;
  for (int i = 0; i < (x1 - x0) * h; i++)
    s += px[i];
  free(px);
  return s / ((x1 - x0) * h);
}

static void test_preview(void) {
  int nx = 300, ny = 200;
  float *lit = malloc(sizeof(float) * nx * ny), *dark = malloc(sizeof(float) * nx * ny);
  uint8_t *nd = calloc((size_t)nx * ny, 1);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      lit[y * nx + x] = 0.5f * (x + y);   /* rises to the south-east: faces the NW sun */
      dark[y * nx + x] = -0.5f * (x + y); /* faces south-east: away from the sun */
      nd[y * nx + x] = y < 30 && x < 30;  /* a 30 × 30 NoData corner */
    }
  const char *p = tpath("preview.png");
  talus_status st = talus_preview_png(p, nx, ny, 1.0, lit, dark, nd, 256);
  CHECK(st == TALUS_OK, "preview: %s", talus_last_error());
  unsigned char magic[8] = {0};
  FILE *f = fopen(p, "rb");
  if (f) {
    CHECK(fread(magic, 1, 8, f) == 8, "short PNG");
    fclose(f);
  }
  CHECK(memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0, "not a PNG signature");
  CHECK(!exists(tpath("preview.png.partial")), "partial left");
  GDALDatasetH ds = GDALOpen(p, GA_ReadOnly);
  CHECK(ds && strcmp(GDALGetDriverShortName(GDALGetDatasetDriver(ds)), "PNG") == 0, "GDAL: PNG");
  if (!ds) return;
  /* 2 * ceil(300 / f) + 4 <= 256 gives f = 3: 100-px panels, 67 rows. */
  int w = GDALGetRasterXSize(ds), h = GDALGetRasterYSize(ds);
  CHECK(w == 204 && h == 67 && GDALGetRasterCount(ds) == 3, "preview size %d x %d", w, h);
  CHECK(GDALGetRasterDataType(GDALGetRasterBand(ds, 1)) == GDT_Byte, "8-bit");
  if (w == 204 && h == 67) {
    CHECK(mean_grey(ds, 0, 10, 10) == 0.0, "NoData corner must be black");
    CHECK(mean_grey(ds, 100, 104, h) == 0.0, "gap must be black");
    double a = mean_grey(ds, 20, 100, h), b = mean_grey(ds, 124, 204, h);
    CHECK(a > 200 && b < 150 && a > b + 80, "NW-facing slope %g must be brighter than SE %g", a, b);
  }
  GDALClose(ds);
  free(lit), free(dark), free(nd);
}

/* Pixel (x, y) of an RGB PNG as r, g, b (all -1 when unreadable). */
static void png_rgb(GDALDatasetH ds, int x, int y, int rgb[3]) {
  unsigned char px[3] = {0};
  CPLErr e = GDALDatasetRasterIO(ds, GF_Read, x, y, 1, 1, px, 1, 1, GDT_Byte, 3, NULL, 3, 3, 1);
  for (int i = 0; i < 3; i++)
    rgb[i] = e == CE_None ? px[i] : -1;
}

/* A 40 × 20 tilted plane, one preview pixel a cell: cells x < 10 hold
 * 2 m of water, 10 <= x < 20 two columns (an overhang), 20 <= x < 30 a
 * 1 cm rain film, the rest is dry single-column ground. */
static talus_status tint_scene(const char *path) {
  enum { NX = 40, NY = 20 };
  static float z[NX * NY], water[NX * NY];
  static uint8_t cols[NX * NY];
  for (int i = 0; i < NX * NY; i++) {
    int x = i % NX;
    z[i] = 0.2f * (float)(i / NX) + 0.1f * (float)x;
    water[i] = x < 10 ? 2.0f : (x >= 20 && x < 30 ? 0.01f : 0.0f);
    cols[i] = x >= 10 && x < 20 ? 2 : 1;
  }
  talus_preview_acc *acc = NULL;
  talus_status st = talus_preview_acc_open(NX, NY, 1.0, 2 * NX + TALUS_PREVIEW_GAP, &acc);
  if (!st) st = talus_preview_acc_add(acc, 0, 0, 0, NX, NY, z, NULL);
  if (!st) st = talus_preview_acc_add(acc, 1, 0, 0, NX, NY, z, NULL);
  if (!st) st = talus_preview_acc_add_overlay(acc, 0, 0, NX, NY, water, cols, NULL);
  if (!st) st = talus_preview_acc_write(acc, path);
  talus_preview_acc_free(acc);
  return st;
}

/* The after panel tints water blue and multi-column cells orange, leaves
 * dry single-column cells and thin films grey; the before panel is grey. */
static void test_preview_tint(void) {
  const char *p = tpath("tint.png");
  talus_status st = tint_scene(p);
  CHECK(st == TALUS_OK, "tinted preview: %s", talus_last_error());
  GDALDatasetH ds = GDALOpen(p, GA_ReadOnly);
  CHECK(ds && GDALGetRasterXSize(ds) == 84 && GDALGetRasterCount(ds) == 3, "tinted size");
  if (!ds) return;
  int a = 40 + TALUS_PREVIEW_GAP, c[3];
  png_rgb(ds, a + 5, 10, c);
  CHECK(c[2] > c[0] + 60 && c[2] > c[1] + 20, "water bluish: %d %d %d", c[0], c[1], c[2]);
  png_rgb(ds, a + 15, 10, c);
  CHECK(c[0] > c[2] + 60 && c[0] > c[1] + 30, "overhang orange: %d %d %d", c[0], c[1], c[2]);
  png_rgb(ds, a + 25, 10, c);
  CHECK(abs(c[2] - c[0]) < 12 && c[0] > 0, "1 cm film nearly grey: %d %d %d", c[0], c[1], c[2]);
  png_rgb(ds, a + 35, 10, c);
  CHECK(c[0] == c[1] && c[1] == c[2] && c[0] > 0, "dry ground grey: %d %d %d", c[0], c[1], c[2]);
  for (int x = 5; x < 40; x += 10) {
    png_rgb(ds, x, 10, c);
    CHECK(c[0] == c[1] && c[1] == c[2] && c[0] > 0, "before panel grey at %d", x);
  }
  GDALClose(ds);
}

static void test_info(void) {
  FILE *f = fopen(tpath("info.txt"), "w+");
  talus_status st = talus_raster_info(tpath("rt.tif"), f);
  CHECK(st == TALUS_OK, "info: %s", talus_last_error());
  char text[8192] = {0};
  rewind(f);
  text[fread(text, 1, sizeof text - 1, f)] = 0;
  fclose(f);
  CHECK(strstr(text, "40 x 30") && strstr(text, "UTM zone 11N (EPSG:32611)") &&
            strstr(text, "cell size:    30 m"),
        "info header: %s", text);
  CHECK(strstr(text, "-9999 (3 cells") && strstr(text, "bedrock") && strstr(text, "TALUS_STEP=42"),
        "info nodata/bands/metadata: %s", text);
  CHECK(strstr(text, "min / max:    456.5 / 626.75"), "info min/max: %s", text);
  st = talus_raster_info(tpath("missing.tif"), stdout);
  CHECK(st == TALUS_ERR_IO, "info on a missing file: %d", st);
}

int main(void) {
  if (!scratch_open("talus_raster"))
    return check_skip("test_raster", "cannot create a scratch directory");
  GDALAllRegister();
  CPLPushErrorHandler(CPLQuietErrorHandler);
  test_roundtrip();
  test_layout_and_metadata();
  test_band_names_and_co();
  test_bad_creation_options();
  test_int16_input();
  test_policies();
  test_fill_constant();
  test_bad_data();
  test_bad_files();
  test_unwritable();
  test_geographic();
  test_projected_units();
  test_preview();
  test_preview_tint();
  test_info();
  scratch_close();
  return check_report("test_raster");
}
