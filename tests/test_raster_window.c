/*
 * test_raster_window.c — windowed raster I/O for maps larger than memory:
 * windowed DEM reads equal talus_dem_read's arrays (Int16 and Float32
 * inputs with NoData, geographic and projected CRS, z scale, every policy,
 * the real DEMs of $TALUS_TEST_DATA when set), errors at open (NaN,
 * all-NoData, missing) and the FILL memory rule; the multi-band reader;
 * the streaming GeoTIFF writer (shuffled windows through a tiny block
 * cache, names/metadata/georef, abort and unwritable destinations leave
 * nothing); the preview accumulator equals talus_preview_png pixel for
 * pixel, and its water/overhang tints fed by windows equal those fed whole;
 * scene windows equal the whole-scene build for every scene.
 */
#include "check.h"
#include "scratch.h"
#include "io/export/export.h"
#include "io/raster/raster.h"
#include "app/scenes.h"
#include "kernels/state.h"

#include <cpl_conv.h>
#include <cpl_string.h>
#include <dirent.h>
#include <gdal.h>
#include <ogr_srs_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Deterministic xorshift generator: windows and data are the same every run. */
static uint32_t rng_state = 2463534242u;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
static int rnd_int(int n) {
  return (int)(rnd() % (uint32_t)n);
}

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

/* Writes a one-band tiled (64²) GeoTIFF of any type directly with GDAL. */
static void gdal_write(const char *path, GDALDataType type, int nx, int ny, const double *v,
                       const double *gt, const char *wkt, const double *nodata) {
  char **co = CSLSetNameValue(NULL, "TILED", "YES");
  co = CSLSetNameValue(co, "BLOCKXSIZE", "64");
  co = CSLSetNameValue(co, "BLOCKYSIZE", "64");
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName("GTiff"), path, nx, ny, 1, type, co);
  CSLDestroy(co);
  CHECK(ds != NULL, "GDAL test create of %s", path);
  if (!ds) return;
  if (gt) GDALSetGeoTransform(ds, (double *)gt);
  if (wkt) GDALSetProjection(ds, wkt);
  GDALRasterBandH b = GDALGetRasterBand(ds, 1);
  if (nodata) GDALSetRasterNoDataValue(b, *nodata);
  CPLErr e = GDALRasterIO(b, GF_Write, 0, 0, nx, ny, (void *)v, nx, ny, GDT_Float64, 0, 0);
  CHECK(e == CE_None, "GDAL test write of %s", path);
  GDALClose(ds);
}

/* Terrain with NoData: a smooth surface (whole numbers when integer, for
 * Int16 files), a NoData rectangle and scattered NoData cells, all of
 * value nd (NaN allowed). */
static double *terrain(int nx, int ny, double nd, int integer) {
  double *v = malloc(sizeof *v * (size_t)nx * ny);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      double z = 800.0 + 3.0 * x - 2.0 * y + 40.0 * sin(x * 0.05) * cos(y * 0.07);
      z = integer ? round(z) : z;
      int hole = (x >= 20 && x < 45 && y >= 100 && y < 130) || ((x * 7 + y * 13) % 97 == 0);
      v[(size_t)y * nx + x] = hole ? nd : z;
    }
  return v;
}

/* Compares n reader window cells with the whole read's at (x0, y0). */
static int same_window(const talus_dem *d, int x0, int y0, int w, int h, const float *hw,
                       const uint8_t *nw) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t g = (size_t)(y0 + y) * d->nx + (x0 + x), l = (size_t)y * w + x;
      uint8_t nd = d->nodata ? d->nodata[g] : 0;
      if (memcmp(&hw[l], &d->height[g], sizeof(float)) != 0 || nw[l] != nd) return 0;
    }
  return 1;
}

/* Reads `count` random windows (and the four corners) of path through the
 * reader and compares them, bit for bit, with talus_dem_read. */
static void check_windows(const char *path, const talus_dem_options *o, int count) {
  talus_dem d;
  talus_dem_reader *r = NULL;
  talus_status s1 = talus_dem_read(path, o, &d);
  talus_status s2 = talus_dem_reader_open(path, o, &r);
  CHECK(s1 == TALUS_OK && s2 == TALUS_OK, "%s: read %d, reader %d: %s", path, s1, s2,
        talus_last_error());
  if (s1 != TALUS_OK || s2 != TALUS_OK) {
    if (s1 == TALUS_OK) talus_dem_free(&d);
    talus_dem_reader_close(r);
    return;
  }
  const talus_georef *g = talus_dem_reader_georef(r);
  CHECK(talus_dem_reader_nx(r) == d.nx && talus_dem_reader_ny(r) == d.ny, "%s: size", path);
  CHECK(talus_dem_reader_cell_size(r) == d.cell_size, "%s: cell size %.17g vs %.17g", path,
        talus_dem_reader_cell_size(r), d.cell_size);
  CHECK(memcmp(g->gt, d.geo.gt, sizeof g->gt) == 0 && g->has_nodata == d.geo.has_nodata &&
            ((!g->wkt && !d.geo.wkt) || (g->wkt && d.geo.wkt && !strcmp(g->wkt, d.geo.wkt))),
        "%s: georef differs", path);
  CHECK(talus_dem_reader_nodata_cells(r) == d.nodata_cells &&
            talus_dem_reader_filled_cells(r) == d.filled_cells,
        "%s: nodata %lld vs %lld, filled %lld vs %lld", path,
        (long long)talus_dem_reader_nodata_cells(r), (long long)d.nodata_cells,
        (long long)talus_dem_reader_filled_cells(r), (long long)d.filled_cells);
  int bad = 0;
  for (int k = 0; k < count + 4; k++) {
    int w = 1 + rnd_int(d.nx < 90 ? d.nx : 90), h = 1 + rnd_int(d.ny < 90 ? d.ny : 90);
    int x0 = rnd_int(d.nx - w + 1), y0 = rnd_int(d.ny - h + 1);
    if (k >= count) /* the corners, where windows meet the raster's edges */
      x0 = (k - count) & 1 ? d.nx - w : 0, y0 = (k - count) & 2 ? d.ny - h : 0;
    float *hw = malloc(sizeof(float) * w * h);
    uint8_t *nw = malloc((size_t)w * h);
    talus_status st = talus_dem_reader_read(r, x0, y0, w, h, hw, nw);
    if (st != TALUS_OK || !same_window(&d, x0, y0, w, h, hw, nw)) bad++;
    free(hw), free(nw);
  }
  CHECK(bad == 0, "%s: %d of %d windows differ from talus_dem_read", path, bad, count + 4);
  talus_dem_reader_close(r);
  talus_dem_free(&d);
}

/* Reads the whole of path through the reader in 61 × 47 windows and
 * checks every cell against the source values v (NoData value nd): valid
 * cells are the float of v times z_scale, NoData cells masked at the least
 * valid height. An independent check of what the windows must contain. */
static void check_truth(const char *path, const double *v, double nd, const talus_dem_options *o) {
  talus_dem_reader *r = NULL;
  talus_status st = talus_dem_reader_open(path, o, &r);
  CHECK(st == TALUS_OK, "%s: %s", path, talus_last_error());
  if (st != TALUS_OK) return;
  int nx = talus_dem_reader_nx(r), ny = talus_dem_reader_ny(r), bad = 0, masked = 0;
  double z = o->z_scale == 0.0 ? 1.0 : o->z_scale;
  float lo = INFINITY, hw[61 * 47];
  uint8_t nw[61 * 47];
  for (int i = 0; i < nx * ny; i++)
    if (v[i] == v[i] && v[i] != nd && (float)((double)(float)v[i] * z) < lo)
      lo = (float)((double)(float)v[i] * z);
  for (int y0 = 0; y0 < ny; y0 += 47)
    for (int x0 = 0; x0 < nx; x0 += 61) {
      int w = nx - x0 < 61 ? nx - x0 : 61, h = ny - y0 < 47 ? ny - y0 : 47;
      bad += talus_dem_reader_read(r, x0, y0, w, h, hw, nw) != TALUS_OK;
      for (int i = 0; i < w * h; i++) {
        double s = v[(size_t)(y0 + i / w) * nx + x0 + i % w];
        int hole = s != s || s == nd;
        float want = hole ? lo : (float)((double)(float)s * z);
        bad += nw[i] != hole || hw[i] != want;
        masked += hole;
      }
    }
  CHECK(bad == 0 && masked > 700, "%s: %d cells differ from the source (%d masked)", path, bad,
        masked);
  talus_dem_reader_close(r);
}

/* Int16 (geographic CRS, integer NoData) and Float32 (projected, NaN
 * NoData) inputs taller than one validation block, under every policy. */
static void test_dem_windows(void) {
  int nx = 333, ny = 540;
  char *geo = epsg_wkt(4326), *utm = epsg_wkt(32611);
  double gt_geo[6] = {7.0, 1.0 / 1200, 0, 47.5, 0, -1.0 / 1200};
  double gt_utm[6] = {376000.0, 30.0, 0, 3808000.0, 0, -30.0};
  double nd16 = -32768.0, ndnan = NAN;
  double *a = terrain(nx, ny, nd16, 1), *b = terrain(nx, ny, NAN, 0);
  gdal_write(tpath("i16.tif"), GDT_Int16, nx, ny, a, gt_geo, geo, &nd16);
  gdal_write(tpath("f32.tif"), GDT_Float32, nx, ny, b, gt_utm, utm, &ndnan);
  talus_dem_options outflow = {0}, wall = {0}, fill = {0};
  wall.nodata_policy = TALUS_NODATA_WALL;
  wall.z_scale = 0.3048;
  fill.nodata_policy = TALUS_NODATA_FILL; /* fits the default in-memory limit */
  const char *files[2] = {"i16.tif", "f32.tif"};
  for (int f = 0; f < 2; f++) {
    check_windows(tpath(files[f]), &outflow, 40);
    check_windows(tpath(files[f]), &wall, 40);
    check_windows(tpath(files[f]), &fill, 20);
  }
  check_truth(tpath("i16.tif"), a, nd16, &outflow);
  check_truth(tpath("i16.tif"), a, nd16, &wall);
  check_truth(tpath("f32.tif"), b, NAN, &wall);
  /* The masked cells really are there and masked (not a vacuous match). */
  talus_dem_reader *r = NULL;
  talus_status st = talus_dem_reader_open(tpath("i16.tif"), NULL, &r);
  CHECK(st == TALUS_OK && talus_dem_reader_nodata_cells(r) > 750, "Int16 NoData count %lld",
        (long long)talus_dem_reader_nodata_cells(r));
  float hw[4];
  uint8_t nw[4];
  if (st == TALUS_OK) st = talus_dem_reader_read(r, 20, 100, 2, 2, hw, nw);
  CHECK(st == TALUS_OK && nw[0] && nw[3] && hw[0] == hw[3], "hole window: %d %d", nw[0], nw[3]);
  CHECK(talus_dem_reader_read(r, nx - 2, 0, 3, 1, hw, nw) == TALUS_ERR_ARGUMENT,
        "a window past the edge must be refused");
  CHECK(talus_dem_reader_read(r, 0, 0, 0, 1, hw, nw) == TALUS_ERR_ARGUMENT, "empty window");
  talus_dem_reader_close(r);
  free(a), free(b), free(geo), free(utm);
}

/* Errors come at open, before any window is read; the NaN error names the
 * first bad cell even when it lies beyond the first block of rows. */
static void test_dem_errors(void) {
  int nx = 50, ny = 600;
  double *v = terrain(nx, ny, -9999.0, 0), nd = -9999.0;
  v[(size_t)517 * nx + 31] = NAN;
  v[(size_t)590 * nx + 3] = INFINITY;
  gdal_write(tpath("nan.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  talus_dem_reader *r = (talus_dem_reader *)1;
  talus_status st = talus_dem_reader_open(tpath("nan.tif"), NULL, &r);
  CHECK(st == TALUS_ERR_DATA && r == NULL, "NaN heights: %d", st);
  CHECK(strstr(talus_last_error(), "2 heights are NaN") &&
            strstr(talus_last_error(), "column 31, row 517"),
        "NaN message: %s", talus_last_error());
  for (int i = 0; i < nx * ny; i++)
    v[i] = nd;
  gdal_write(tpath("allnd.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  st = talus_dem_reader_open(tpath("allnd.tif"), NULL, &r);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "all 30000 cells are NoData"),
        "all NoData: %d %s", st, talus_last_error());
  st = talus_dem_reader_open(tpath("missing.tif"), NULL, &r);
  CHECK(st == TALUS_ERR_IO && r == NULL, "missing file: %d", st);
  talus_dem_options big = {0};
  big.max_cells = 1000;
  gdal_write(tpath("ok.tif"), GDT_Float32, 40, 30, v, NULL, NULL, NULL);
  st = talus_dem_reader_open(tpath("ok.tif"), &big, &r);
  CHECK(st == TALUS_ERR_DATA && strstr(talus_last_error(), "limit"), "max cells: %d %s", st,
        talus_last_error());
  free(v);
}

/* FILL needs the whole map: refused above max_fill_cells when there are
 * holes, served from memory below it, streamed when there are no holes. */
static void test_fill_limit(void) {
  int nx = 120, ny = 90;
  double nd = -1.0, *v = terrain(nx, ny, nd, 0);
  gdal_write(tpath("holes.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  talus_dem_options o = {0};
  o.nodata_policy = TALUS_NODATA_FILL;
  o.max_fill_cells = (int64_t)nx * ny - 1;
  talus_dem_reader *r = NULL;
  talus_status st = talus_dem_reader_open(tpath("holes.tif"), &o, &r);
  CHECK(st == TALUS_ERR_UNSUPPORTED && r == NULL &&
            strstr(talus_last_error(), "fill NoData policy needs the whole map") &&
            strstr(talus_last_error(), "outflow|wall"),
        "FILL above the limit: %d %s", st, talus_last_error());
  o.max_fill_cells = (int64_t)nx * ny;
  check_windows(tpath("holes.tif"), &o, 30);
  st = talus_dem_reader_open(tpath("holes.tif"), &o, &r);
  CHECK(st == TALUS_OK && talus_dem_reader_nodata_cells(r) == 0 &&
            talus_dem_reader_filled_cells(r) == 112,
        "FILL below the limit: %d filled %lld", st, (long long)talus_dem_reader_filled_cells(r));
  talus_dem_reader_close(r);
  for (int i = 0; i < nx * ny; i++)
    v[i] = 10.0 + i % 17;
  gdal_write(tpath("noholes.tif"), GDT_Float32, nx, ny, v, NULL, NULL, &nd);
  o.max_fill_cells = 100;
  st = talus_dem_reader_open(tpath("noholes.tif"), &o, &r);
  CHECK(st == TALUS_OK, "FILL of a hole-free map streams: %s", talus_last_error());
  talus_dem_reader_close(r);
  check_windows(tpath("noholes.tif"), &o, 10);
  free(v);
}

/* Every real DEM of $TALUS_TEST_DATA: windows equal the whole read. */
static void test_real_dems(void) {
  const char *dir = getenv("TALUS_TEST_DATA");
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) {
    printf("test_raster_window: TALUS_TEST_DATA unset, real DEMs not checked\n");
    return;
  }
  struct dirent *e;
  int seen = 0;
  while ((e = readdir(d))) {
    const char *dot = strrchr(e->d_name, '.');
    if (!dot || (strcmp(dot, ".tif") && strcmp(dot, ".hgt") && strcmp(dot, ".bil"))) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    check_windows(path, NULL, 15);
    seen++;
  }
  closedir(d);
  CHECK(seen > 0, "no DEM found in %s", dir);
}

/* The multi-band reader serves windows of talus_bands_read's arrays with
 * the same names, metadata and georef. */
static void test_bands_reader(void) {
  int nx = 140, ny = 70, nb = 4;
  float *band[4];
  for (int b = 0; b < nb; b++) {
    band[b] = malloc(sizeof(float) * nx * ny);
    for (int i = 0; i < nx * ny; i++)
      band[b][i] = (float)(b * 1000 + i) * 0.25f - (b == 3 ? NAN : 0.0f) * (i % 5 == 0);
  }
  const char *names[4] = {"surface", "columns", NULL, "layer0.bedrock"};
  const char *meta[] = {"TALUS_STATE=1", "TALUS_STEP=7", NULL};
  talus_georef geo = {{500.0, 2.0, 0, 900.0, 0, -2.0}, epsg_wkt(32633), 1, -9999.0};
  talus_status st = talus_geotiff_write(tpath("state.tif"), nx, ny, nb, (const float *const *)band,
                                        names, meta, &geo, NULL);
  CHECK(st == TALUS_OK, "write state: %s", talus_last_error());
  talus_bands whole;
  talus_bands_reader *r = NULL;
  st = talus_bands_read(tpath("state.tif"), &whole);
  talus_status st2 = talus_bands_reader_open(tpath("state.tif"), &r);
  CHECK(st == TALUS_OK && st2 == TALUS_OK, "open: %s", talus_last_error());
  if (st != TALUS_OK || st2 != TALUS_OK) return;
  CHECK(talus_bands_reader_nbands(r) == nb && talus_bands_reader_nx(r) == nx &&
            talus_bands_reader_ny(r) == ny,
        "sizes");
  CHECK(!strcmp(talus_bands_reader_name(r, 0), "surface") && !talus_bands_reader_name(r, 2)[0] &&
            talus_bands_reader_find(r, "layer0.bedrock") == 3 &&
            talus_bands_reader_find(r, "nope") == -1 && talus_bands_reader_name(r, 4) == NULL,
        "band names");
  const char *step = talus_bands_reader_meta(r, "talus_step");
  CHECK(step && !strcmp(step, "7"), "metadata TALUS_STEP: %s", step ? step : "(none)");
  const talus_georef *g = talus_bands_reader_georef(r);
  CHECK(!memcmp(g->gt, geo.gt, sizeof geo.gt) && g->has_nodata && g->nodata == -9999.0 && g->wkt &&
            whole.geo.wkt && !strcmp(g->wkt, whole.geo.wkt),
        "georef");
  int bad = 0;
  float *w = malloc(sizeof(float) * nx * ny);
  for (int k = 0; k < 40; k++) {
    int b = rnd_int(nb), ww = 1 + rnd_int(nx), hh = 1 + rnd_int(ny);
    int x0 = rnd_int(nx - ww + 1), y0 = rnd_int(ny - hh + 1);
    st = talus_bands_reader_read(r, b, x0, y0, ww, hh, w);
    for (int y = 0; st == TALUS_OK && y < hh; y++)
      bad += memcmp(w + (size_t)y * ww, whole.band[b] + (size_t)(y0 + y) * nx + x0,
                    sizeof(float) * ww) != 0;
    bad += st != TALUS_OK;
  }
  CHECK(bad == 0, "%d band window rows differ from talus_bands_read", bad);
  CHECK(memcmp(whole.band[1], band[1], sizeof(float) * nx * ny) == 0, "whole band 2 round trip");
  CHECK(talus_bands_reader_read(r, nb, 0, 0, 1, 1, w) == TALUS_ERR_ARGUMENT, "band out of range");
  talus_bands_reader_close(r);
  talus_bands_free(&whole);
  talus_georef_free(&geo);
  free(w);
  for (int b = 0; b < nb; b++)
    free(band[b]);
}

/* Value of band b at (x, y) in the stream test. */
static float stream_value(int b, int x, int y) {
  return (float)(b + 1) * 1000.0f + (float)x * 0.5f - (float)y * 0.25f;
}

/* Reads band b of path whole with GDAL (malloc'd), or NULL. */
static float *gdal_band(GDALDatasetH ds, int b, int nx, int ny) {
  float *v = malloc(sizeof(float) * nx * ny);
  if (GDALRasterIO(GDALGetRasterBand(ds, b + 1), GF_Read, 0, 0, nx, ny, v, nx, ny, GDT_Float32, 0,
                   0) != CE_None)
    free(v), v = NULL;
  return v;
}

/* Writes the 300 × 200 × 3 raster in 64 × 64 windows in shuffled order. */
static talus_status stream_shuffled(const char *path, const talus_georef *geo) {
  const char *names[3] = {"water", "sand", "bedrock"};
  const char *meta[] = {"TALUS_STEP=42", "TALUS_MODEL=layered", NULL};
  talus_geotiff_stream *s = NULL;
  talus_status st = talus_geotiff_stream_open(path, 300, 200, 3, names, meta, geo, NULL, &s);
  if (st != TALUS_OK) return st;
  int order[3 * 5 * 4], n = 0;
  for (int i = 0; i < 3 * 5 * 4; i++)
    order[n++] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rnd_int(i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  float buf[64 * 64];
  for (int k = 0; st == TALUS_OK && k < n; k++) {
    int b = order[k] % 3, x0 = (order[k] / 3 % 5) * 64, y0 = (order[k] / 15) * 64;
    int w = 300 - x0 < 64 ? 300 - x0 : 64, h = 200 - y0 < 64 ? 200 - y0 : 64;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        buf[y * w + x] = stream_value(b, x0 + x, y0 + y);
    st = talus_geotiff_stream_write(s, b, x0, y0, w, h, buf);
  }
  if (st != TALUS_OK) {
    talus_geotiff_stream_abort(s);
    return st;
  }
  return talus_geotiff_stream_commit(s);
}

/* Checks the values, names, metadata and georef of the streamed file. */
static void check_streamed(const char *path, const talus_georef *geo) {
  GDALDatasetH ds = GDALOpen(path, GA_ReadOnly);
  CHECK(ds != NULL, "reopen %s", path);
  if (!ds) return;
  int bad = 0;
  for (int b = 0; b < 3; b++) {
    float *v = gdal_band(ds, b, 300, 200);
    for (int i = 0; v && i < 300 * 200; i++)
      bad += v[i] != stream_value(b, i % 300, i / 300);
    bad += v == NULL;
    free(v);
  }
  CHECK(bad == 0, "%d streamed cells differ", bad);
  const char *d1 = GDALGetDescription(GDALGetRasterBand(ds, 1));
  const char *d3 = GDALGetDescription(GDALGetRasterBand(ds, 3));
  CHECK(!strcmp(d1, "water") && !strcmp(d3, "bedrock"), "band names '%s' '%s'", d1, d3);
  const char *step = GDALGetMetadataItem(ds, "TALUS_STEP", NULL);
  CHECK(step && !strcmp(step, "42"), "metadata: %s", step ? step : "(none)");
  double gt[6];
  int has = 0;
  double nd = GDALGetRasterNoDataValue(GDALGetRasterBand(ds, 2), &has);
  CHECK(GDALGetGeoTransform(ds, gt) == CE_None && !memcmp(gt, geo->gt, sizeof gt), "gt");
  CHECK(has && nd == -9999.0, "NoData %g", nd);
  OGRSpatialReferenceH a = OSRNewSpatialReference(GDALGetProjectionRef(ds));
  OGRSpatialReferenceH e = OSRNewSpatialReference(geo->wkt);
  CHECK(a && e && OSRIsSame(a, e), "CRS kept");
  OSRDestroySpatialReference(a), OSRDestroySpatialReference(e);
  const char *c = GDALGetMetadataItem(ds, "COMPRESSION", "IMAGE_STRUCTURE");
  CHECK(c && !strcmp(c, "ZSTD"), "talus defaults (ZSTD): %s", c ? c : "(none)");
  GDALClose(ds);
}

/* Shuffled windows through a cache smaller than the raster's blocks, so
 * partial blocks are flushed and merged again; values must not care. */
static void test_stream_shuffled(void) {
  talus_georef geo = {{376000.0, 30.0, 0, 3808000.0, 0, -30.0}, epsg_wkt(32611), 1, -9999.0};
  int64_t cache = GDALGetCacheMax64();
  GDALSetCacheMax64(300 * 1024); /* ~1 block of 256² floats: forces evictions */
  talus_status st = stream_shuffled(tpath("stream.tif"), &geo);
  GDALSetCacheMax64(cache);
  CHECK(st == TALUS_OK, "stream: %s", talus_last_error());
  CHECK(!exists(tpath("stream.tif.partial")), "partial left after commit");
  check_streamed(tpath("stream.tif"), &geo);
  st = stream_shuffled(tpath("stream2.tif"), &geo); /* the default (capped) cache */
  CHECK(st == TALUS_OK, "stream: %s", talus_last_error());
  check_streamed(tpath("stream2.tif"), &geo);
  CHECK(GDALGetCacheMax64() <= TALUS_GDAL_CACHE_BYTES || CPLGetConfigOption("GDAL_CACHEMAX", NULL),
        "GDAL cache %lld not capped", (long long)GDALGetCacheMax64());
  talus_georef_free(&geo);
}

/* Pitched writes, unwritten cells, bad windows, abort, unwritable paths. */
static void test_stream_edges(void) {
  talus_georef geo = {{0, 1, 0, 0, 0, -1}, NULL, 1, -9999.0};
  talus_geotiff_stream *s = NULL;
  talus_status st =
      talus_geotiff_stream_open(tpath("edge.tif"), 100, 80, 2, NULL, NULL, &geo, NULL, &s);
  CHECK(st == TALUS_OK, "open: %s", talus_last_error());
  if (st != TALUS_OK) return;
  int bx = 0, by = 0;
  talus_geotiff_stream_block_size(s, &bx, &by);
  CHECK(bx == 256 && by == 256, "default block %d x %d", bx, by);
  float tile[20 * 32]; /* a 10 x 20 window in a buffer of pitch 32 */
  for (int i = 0; i < 20 * 32; i++)
    tile[i] = (float)i;
  st = talus_geotiff_stream_write_pitched(s, 1, 5, 7, 10, 20, tile, 32);
  CHECK(st == TALUS_OK, "pitched write: %s", talus_last_error());
  CHECK(talus_geotiff_stream_write(s, 2, 0, 0, 1, 1, tile) == TALUS_ERR_ARGUMENT, "band 3 of 2");
  CHECK(talus_geotiff_stream_write(s, 0, 95, 0, 6, 1, tile) == TALUS_ERR_ARGUMENT, "past edge");
  st = talus_geotiff_stream_commit(s);
  CHECK(st == TALUS_OK, "commit: %s", talus_last_error());
  GDALDatasetH ds = GDALOpen(tpath("edge.tif"), GA_ReadOnly);
  float *b2 = ds ? gdal_band(ds, 1, 100, 80) : NULL, *b1 = ds ? gdal_band(ds, 0, 100, 80) : NULL;
  CHECK(b1 && b2, "read back edge.tif");
  if (b1 && b2) {
    CHECK(b2[7 * 100 + 5] == 0.0f && b2[8 * 100 + 5] == 32.0f && b2[26 * 100 + 14] == 19 * 32 + 9,
          "pitched rows: %g %g %g", b2[7 * 100 + 5], b2[8 * 100 + 5], b2[26 * 100 + 14]);
    CHECK(b2[0] == -9999.0f && b2[27 * 100 + 5] == -9999.0f && b1[4000] == -9999.0f,
          "unwritten cells read %g %g %g, not NoData", b2[0], b2[27 * 100 + 5], b1[4000]);
  }
  free(b1), free(b2);
  if (ds) GDALClose(ds);
  st = talus_geotiff_stream_open(tpath("aborted.tif"), 10, 10, 1, NULL, NULL, NULL, NULL, &s);
  CHECK(st == TALUS_OK && exists(tpath("aborted.tif.partial")), "partial exists while open");
  if (st == TALUS_OK) st = talus_geotiff_stream_write(s, 0, 0, 0, 10, 2, tile);
  talus_geotiff_stream_abort(s);
  CHECK(!exists(tpath("aborted.tif")) && !exists(tpath("aborted.tif.partial")),
        "abort left a file");
  s = (talus_geotiff_stream *)1;
  st = talus_geotiff_stream_open(tpath("no_such_dir/x.tif"), 10, 10, 1, NULL, NULL, NULL, NULL, &s);
  CHECK(st == TALUS_ERR_IO && s == NULL && strstr(talus_last_error(), "no_such_dir"),
        "unwritable dir: %d %s", st, talus_last_error());
  CHECK(!exists(tpath("no_such_dir")), "something created for an unwritable path");
  st = talus_geotiff_stream_open(tpath("edge.tif/x.tif"), 10, 10, 1, NULL, NULL, NULL, NULL, &s);
  CHECK(st == TALUS_ERR_IO && !exists(tpath("edge.tif/x.tif.partial")), "file as dir: %d", st);
}

/* Reads a PNG's grey pixels (malloc'd), its size in *w, *h. */
static uint8_t *png_pixels(const char *path, int *w, int *h) {
  GDALDatasetH ds = GDALOpen(path, GA_ReadOnly);
  if (!ds) return NULL;
  *w = GDALGetRasterXSize(ds), *h = GDALGetRasterYSize(ds);
  uint8_t *px = malloc((size_t)*w * *h);
  if (GDALRasterIO(GDALGetRasterBand(ds, 1), GF_Read, 0, 0, *w, *h, px, *w, *h, GDT_Byte, 0, 0) !=
      CE_None)
    free(px), px = NULL;
  GDALClose(ds);
  return px;
}

/* Optional after-panel tints of a whole map (NULL: none). */
typedef struct tints {
  const float *water;
  const uint8_t *cols;
} tints;

/* Copies window (x0, y0, w, h) of the nx-wide map's tints into scratch
 * (hw, hc) and adds them to acc; no tints adds nothing. */
static talus_status acc_tint_window(talus_preview_acc *acc, const tints *tn, int nx, int x0, int y0,
                                    int w, int h, float *hw, uint8_t *hc, const uint8_t *hn) {
  if (!tn) return TALUS_OK;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t g = (size_t)(y0 + y) * nx + x0 + x;
      hw[y * w + x] = tn->water[g], hc[y * w + x] = tn->cols[g];
    }
  return talus_preview_acc_add_overlay(acc, x0, y0, w, h, hw, hc, hn);
}

/* Feeds both panels (and tints tn, may be NULL) to an accumulator in
 * shuffled 50 × 37 windows. */
static talus_status acc_shuffled(const char *path, int nx, int ny, const float *z0, const float *z1,
                                 const uint8_t *nd, const tints *tn, int max_width) {
  talus_preview_acc *acc = NULL;
  talus_status st = talus_preview_acc_open(nx, ny, 2.0, max_width, &acc);
  int gx = (nx + 49) / 50, gy = (ny + 36) / 37, n = 2 * gx * gy;
  int *order = malloc(sizeof *order * n);
  for (int i = 0; i < n; i++)
    order[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rnd_int(i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  float *hz = malloc(sizeof(float) * 50 * 37), *hw = malloc(sizeof(float) * 50 * 37);
  uint8_t *hn = malloc(50 * 37), *hc = malloc(50 * 37);
  for (int k = 0; st == TALUS_OK && k < n; k++) {
    int p = order[k] % 2, x0 = (order[k] / 2 % gx) * 50, y0 = (order[k] / 2 / gx) * 37;
    int w = nx - x0 < 50 ? nx - x0 : 50, h = ny - y0 < 37 ? ny - y0 : 37;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        size_t g = (size_t)(y0 + y) * nx + x0 + x;
        hz[y * w + x] = (p ? z1 : z0)[g], hn[y * w + x] = nd[g];
      }
    st = talus_preview_acc_add(acc, p, x0, y0, w, h, hz, hn);
    if (st == TALUS_OK && p) st = acc_tint_window(acc, tn, nx, x0, y0, w, h, hw, hc, hn);
  }
  if (st == TALUS_OK) st = talus_preview_acc_write(acc, path);
  talus_preview_acc_free(acc);
  free(order), free(hz), free(hn), free(hw), free(hc);
  return st;
}

/* The same tinted preview from whole arrays, as one window. */
static talus_status acc_whole(const char *path, int nx, int ny, const float *z0, const float *z1,
                              const uint8_t *nd, const tints *tn, int max_width) {
  talus_preview_acc *acc = NULL;
  talus_status st = talus_preview_acc_open(nx, ny, 2.0, max_width, &acc);
  if (st == TALUS_OK) st = talus_preview_acc_add(acc, 0, 0, 0, nx, ny, z0, nd);
  if (st == TALUS_OK) st = talus_preview_acc_add(acc, 1, 0, 0, nx, ny, z1, nd);
  if (st == TALUS_OK)
    st = talus_preview_acc_add_overlay(acc, 0, 0, nx, ny, tn->water, tn->cols, nd);
  if (st == TALUS_OK) st = talus_preview_acc_write(acc, path);
  talus_preview_acc_free(acc);
  return st;
}

/* Tinted previews (water, overhangs) from shuffled windows equal the one
 * from whole arrays byte for byte, and are tinted somewhere. */
static void test_preview_acc_tints(int nx, int ny, const float *z0, const float *z1,
                                   const uint8_t *nd, int max_width) {
  float *water = malloc(sizeof(float) * nx * ny);
  uint8_t *cols = malloc((size_t)nx * ny);
  for (int i = 0; i < nx * ny; i++) {
    water[i] = z0[i] - z1[i]; /* the pit holds water */
    cols[i] = (uint8_t)(1 + (i % nx > 500 && i / nx > 200));
  }
  tints tn = {water, cols};
  talus_status s1 = acc_whole(tpath("twhole.png"), nx, ny, z0, z1, nd, &tn, max_width);
  talus_status s2 = acc_shuffled(tpath("tacc.png"), nx, ny, z0, z1, nd, &tn, max_width);
  CHECK(s1 == TALUS_OK && s2 == TALUS_OK, "tinted previews: %s", talus_last_error());
  GDALDatasetH a = GDALOpen(tpath("twhole.png"), GA_ReadOnly);
  GDALDatasetH b = GDALOpen(tpath("tacc.png"), GA_ReadOnly);
  int w = a ? GDALGetRasterXSize(a) : 0, h = a ? GDALGetRasterYSize(a) : 0, tinted = 0, same = 1;
  uint8_t *pa = malloc((size_t)w * h * 3 + 1), *pb = malloc((size_t)w * h * 3 + 1);
  same = a && b && GDALGetRasterXSize(b) == w &&
         GDALDatasetRasterIO(a, GF_Read, 0, 0, w, h, pa, w, h, GDT_Byte, 3, NULL, 3, 3 * w, 1) ==
             CE_None &&
         GDALDatasetRasterIO(b, GF_Read, 0, 0, w, h, pb, w, h, GDT_Byte, 3, NULL, 3, 3 * w, 1) ==
             CE_None &&
         !memcmp(pa, pb, (size_t)w * h * 3);
  for (int i = 0; same && i < w * h; i++)
    tinted += pa[3 * i] != pa[3 * i + 2];
  CHECK(same && tinted > 0, "tinted preview from windows differs (width %d, %d tinted)", max_width,
        tinted);
  if (a) GDALClose(a);
  if (b) GDALClose(b);
  free(pa), free(pb), free(water), free(cols);
}

/* The accumulator fed shuffled windows gives talus_preview_png's image,
 * pixel for pixel, downsampled (f = 6) and not (f = 1). */
static void test_preview_acc(void) {
  int nx = 700, ny = 300;
  float *z0 = malloc(sizeof(float) * nx * ny), *z1 = malloc(sizeof(float) * nx * ny);
  uint8_t *nd = calloc((size_t)nx * ny, 1);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      size_t i = (size_t)y * nx + x;
      z0[i] = 300.0f + 20.0f * sinf(x * 0.031f) * cosf(y * 0.047f) + 0.37f * x;
      z1[i] = z0[i] - 8.0f * expf(-((x - 350) * (x - 350) + (y - 150) * (y - 150)) / 2000.0f);
      nd[i] = (x > 600 && y < 40) || (x * 31 + y * 17) % 211 == 0;
    }
  int widths[2] = {256, 1500}, expect_w[2] = {2 * 117 + 4, 2 * 700 + 4};
  for (int t = 0; t < 2; t++) {
    talus_status s1 = talus_preview_png(tpath("whole.png"), nx, ny, 2.0, z0, z1, nd, widths[t]);
    talus_status s2 = acc_shuffled(tpath("acc.png"), nx, ny, z0, z1, nd, NULL, widths[t]);
    CHECK(s1 == TALUS_OK && s2 == TALUS_OK, "previews: %d %d %s", s1, s2, talus_last_error());
    int w1 = 0, h1 = 0, w2 = 0, h2 = 0;
    uint8_t *a = png_pixels(tpath("whole.png"), &w1, &h1),
            *b = png_pixels(tpath("acc.png"), &w2, &h2);
    CHECK(a && b && w1 == w2 && h1 == h2 && w1 == expect_w[t], "sizes %d x %d, %d x %d", w1, h1, w2,
          h2);
    if (a && b && w1 == w2 && h1 == h2) {
      CHECK(memcmp(a, b, (size_t)w1 * h1) == 0, "accumulated preview differs (max width %d)",
            widths[t]);
      int lit = 0, black = 0, diff = 0, pw = (w1 - 4) / 2;
      for (int i = 0; i < w1 * h1; i++)
        lit += a[i] > 0, black += a[i] == 0;
      for (int y = 0; y < h1; y++)
        for (int x = 0; x < pw; x++)
          diff += a[y * w1 + x] != a[y * w1 + x + pw + 4];
      CHECK(lit > w1 * h1 / 2 && black >= 4 * h1 && diff > 0,
            "image not plausible: %d lit, %d black, %d before/after differences", lit, black, diff);
    }
    free(a), free(b);
    test_preview_acc_tints(nx, ny, z0, z1, nd, widths[t]);
  }
  talus_preview_acc *acc = NULL;
  CHECK(talus_preview_acc_open(nx, ny, 2.0, 5, &acc) == TALUS_ERR_ARGUMENT && !acc, "width 5");
  CHECK(talus_preview_acc_open(1 << 30, 2, 1.0, 64, &acc) == TALUS_ERR_RANGE, "factor too big");
  free(z0), free(z1), free(nd);
}

/* Whether cell (x, y) of tiles a and b (buffer-local) hold the same
 * persistent state in every used layer. */
static int same_cell(const talus_tile *a, int ax, int ay, const talus_tile *b, int bx, int by) {
  size_t i = talus_idx(a, ax, ay), j = talus_idx(b, bx, by);
  if (a->count[i] != b->count[j] || a->mask[i] != b->mask[j]) return 0;
  for (int k = 0; k < a->count[i]; k++) {
    size_t ci = talus_col(a, i, k), cj = talus_col(b, j, k);
    if (a->B[ci] != b->B[cj] || a->s[ci] != b->s[cj] || a->w[ci] != b->w[cj] ||
        a->C[ci] != b->C[cj] || a->r[ci] != b->r[cj] || a->D[ci] != b->D[cj] ||
        a->p[ci] != b->p[cj])
      return 0;
    for (int d = 0; d < 4; d++)
      if (a->f[talus_dcol(a, i, k, d)] != b->f[talus_dcol(b, j, k, d)]) return 0;
  }
  return 1;
}

/* Fills one scene window by window into a reused tile and compares every
 * cell with the whole build; cells of the buffer outside the window must
 * stay empty columns. */
static void check_scene(const char *name, int n, int nz) {
  talus_tile *whole = NULL, *t = NULL;
  double l0 = 0, l1 = 0;
  talus_status st = talus_scene_build(name, n, nz, 99, &whole, &l0);
  if (st == TALUS_OK) st = talus_tile_create(&t, (talus_rect){0, 0, 40, 32}, nz, 0);
  CHECK(st == TALUS_OK, "%s: %s", name, talus_last_error());
  int bad = 0, outside = 0, multi = 0;
  for (int y0 = 0; st == TALUS_OK && y0 < n; y0 += 27)
    for (int x0 = 0; st == TALUS_OK && x0 < n; x0 += 33) {
      talus_rect buf = {x0 - 3, y0 - 2, 40, 32}; /* a halo around the window */
      talus_rect r = {x0, y0, n - x0 < 33 ? n - x0 : 33, n - y0 < 27 ? n - y0 : 27};
      st = talus_tile_reset(t, buf);
      if (st == TALUS_OK) st = talus_scene_fill(name, n, 99, t, r, &l1);
      for (int y = 0; st == TALUS_OK && y < buf.h; y++)
        for (int x = 0; x < buf.w; x++) {
          int gx = buf.x0 + x, gy = buf.y0 + y;
          size_t i = talus_idx(t, x, y);
          if (gx >= r.x0 && gx < r.x0 + r.w && gy >= r.y0 && gy < r.y0 + r.h) {
            bad += !same_cell(t, x, y, whole, gx, gy);
            multi += t->count[i] > 1;
          } else {
            outside += t->count[i] != 1 || t->B[i] != 0.0f || t->C[i] != TALUS_TOP;
          }
        }
    }
  CHECK(st == TALUS_OK && bad == 0 && l0 == l1, "%s: %d window cells differ (l %g vs %g): %s", name,
        bad, l0, l1, st ? talus_last_error() : "");
  CHECK(outside == 0, "%s: %d cells outside the window were touched", name, outside);
  if (talus_scene_min_layers(name) > 1)
    CHECK(multi > 0, "%s: windows never met a multi-column cell", name);
  talus_tile_free(whole);
  talus_tile_free(t);
}

static void test_scene_fill(void) {
  for (int i = 0; i < talus_scene_count(); i++) {
    const char *name = talus_scene_name(i);
    check_scene(name, 128, talus_scene_min_layers(name) + 1);
  }
  talus_tile *t = NULL;
  talus_status st = talus_tile_create(&t, (talus_rect){0, 0, 16, 16}, 1, 0);
  if (st != TALUS_OK) return;
  CHECK(talus_scene_fill("bridges", 64, 0, t, (talus_rect){0, 0, 8, 8}, NULL) == TALUS_ERR_RANGE,
        "bridges needs 2 layers");
  CHECK(talus_scene_fill("arches", 64, 0, t, (talus_rect){8, 8, 9, 8}, NULL) == TALUS_ERR_ARGUMENT,
        "window past the tile");
  talus_tile_reset(t, (talus_rect){60, 60, 8, 8});
  CHECK(talus_scene_fill("arches", 64, 0, t, (talus_rect){60, 60, 8, 8}, NULL) ==
            TALUS_ERR_ARGUMENT,
        "window past the map");
  CHECK(talus_scene_fill("nope", 64, 0, t, (talus_rect){60, 60, 4, 4}, NULL) == TALUS_ERR_ARGUMENT,
        "unknown scene");
  talus_tile_free(t);
}

int main(void) {
  if (!scratch_open("talus_rwin"))
    return check_skip("test_raster_window", "cannot create a scratch dir");
  GDALAllRegister();
  CPLPushErrorHandler(CPLQuietErrorHandler);
  talus_log_set_level(0); /* the geographic-CRS warnings are expected */
  test_dem_windows();
  test_dem_errors();
  test_fill_limit();
  test_real_dems();
  test_bands_reader();
  test_stream_shuffled();
  test_stream_edges();
  test_preview_acc();
  test_scene_fill();
  scratch_close();
  return check_report("test_raster_window");
}
