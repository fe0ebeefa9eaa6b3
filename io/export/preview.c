/*
 * preview.c — before/after hillshade PNG previews (RGB), written through
 * GDAL's PNG driver from a MEM dataset. Downsampling is the preview
 * accumulator's (below): heights, water depths and multi-column counts are
 * box-summed exactly first, then shaded and tinted here at the preview's own
 * resolution, so memory is O(preview) and a preview built from windows
 * equals one built from whole arrays.
 */
#include "io/export/export.h"
#include "io/raster/raster_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct shade_src {
  int nx, ny;
  double cell;
  const float *z;
  const uint8_t *nodata;
  double sun[3]; /* unit vector towards the sun: east, north, up */
} shade_src;

/* Height at (x, y) clamped to the grid; NoData neighbours take the centre
 * height so they do not paint cliffs along the mask. */
static double height_at(const shade_src *s, int x, int y, double centre) {
  x = x < 0 ? 0 : (x >= s->nx ? s->nx - 1 : x);
  y = y < 0 ? 0 : (y >= s->ny ? s->ny - 1 : y);
  size_t i = (size_t)y * (size_t)s->nx + (size_t)x;
  return (s->nodata && s->nodata[i]) ? centre : (double)s->z[i];
}

/* Horn-gradient hillshade of a valid cell, 1..255 (0 is kept for NoData).
 * Row index grows southwards for a north-up raster, so north = -row. */
static int shade_at(const shade_src *s, int x, int y) {
  double c = s->z[(size_t)y * (size_t)s->nx + (size_t)x];
  double a = height_at(s, x - 1, y - 1, c), b = height_at(s, x, y - 1, c);
  double cc = height_at(s, x + 1, y - 1, c), d = height_at(s, x - 1, y, c);
  double f = height_at(s, x + 1, y, c), g = height_at(s, x - 1, y + 1, c);
  double h = height_at(s, x, y + 1, c), i = height_at(s, x + 1, y + 1, c);
  double ge = ((cc + 2 * f + i) - (a + 2 * d + g)) / (8.0 * s->cell);
  double gs = ((g + 2 * h + i) - (a + 2 * b + cc)) / (8.0 * s->cell);
  double gn = -gs;
  double dot = (-ge * s->sun[0] - gn * s->sun[1] + s->sun[2]) / sqrt(ge * ge + gn * gn + 1.0);
  if (!(dot > 0.0)) dot = 0.0; /* also maps NaN to black-ish */
  return 1 + (int)lround(254.0 * dot);
}

/* What the after panel is tinted with, per preview pixel (NULL: none). */
typedef struct tint_src {
  const float *water; /* mean water depth on the top columns [m] */
  const float *multi; /* share of cells holding more than one column */
} tint_src;

/* Mixes rgb towards colour c, shaded by the hillshade g (1..255) so the
 * relief stays readable under the tint, by weight a ∈ [0, 1]. */
static void tint_mix(double rgb[3], const double c[3], int g, double lo, double a) {
  double lit = lo + (1.0 - lo) * g / 255.0;
  for (int i = 0; i < 3; i++)
    rgb[i] += a * (c[i] * lit - rgb[i]);
}

/* The after panel's colour of a pixel of hillshade g (TALUS_PREVIEW_*
 * in export.h): overhangs first, water over them, as seen from above. */
static void tint_pixel(uint8_t out[3], int g, double depth, double multi) {
  static const double overhang[3] = {235, 110, 30};
  double rgb[3] = {g, g, g};
  if (multi > 0.0) tint_mix(rgb, overhang, g, 0.7, TALUS_PREVIEW_OVERHANG_ALPHA * fmin(multi, 1.0));
  if (depth > 0.0) {
    double t = 1.0 - exp(-depth / TALUS_PREVIEW_DEEP_M); /* shallow → deep blue */
    double water[3] = {120 - 100 * t, 180 - 120 * t, 235 - 75 * t};
    double a = TALUS_PREVIEW_WATER_ALPHA * (1.0 - exp(-depth / TALUS_PREVIEW_WATER_M));
    tint_mix(rgb, water, g, 0.6, a);
  }
  for (int i = 0; i < 3; i++)
    out[i] = (uint8_t)lround(fmax(1.0, fmin(255.0, rgb[i])));
}

/* Renders one panel into the RGB image img at column x0 (row stride w
 * pixels); tint (may be NULL) colours it. */
static void render_panel(const shade_src *s, const tint_src *tint, uint8_t *img, int w, int x0) {
  for (int y = 0; y < s->ny; y++) {
    uint8_t *row = img + 3 * ((size_t)y * (size_t)w + (size_t)x0);
    for (int x = 0; x < s->nx; x++) {
      size_t i = (size_t)y * (size_t)s->nx + (size_t)x;
      if (s->nodata && s->nodata[i]) continue; /* stays black */
      int g = shade_at(s, x, y);
      double depth = tint && tint->water ? tint->water[i] : 0.0;
      double multi = tint && tint->multi ? tint->multi[i] : 0.0;
      tint_pixel(row + 3 * (size_t)x, g, depth, multi);
    }
  }
}

/* Writes the pixel-interleaved RGB image through MEM → PNG CreateCopy
 * into partial. */
static talus_status write_png(const char *path, const char *partial, uint8_t *img, int w, int h) {
  GDALDriverH mem = GDALGetDriverByName("MEM"), png = GDALGetDriverByName("PNG");
  if (!mem || !png)
    return talus_fail(TALUS_ERR_UNSUPPORTED, "io", "GDAL lacks the MEM or PNG driver");
  GDALDatasetH src = GDALCreate(mem, "", w, h, 3, GDT_Byte, NULL);
  if (!src) return talus_gdal_fail(TALUS_ERR_NOMEM, "cannot create the preview image");
  talus_status st = TALUS_OK;
  if (GDALDatasetRasterIO(src, GF_Write, 0, 0, w, h, img, w, h, GDT_Byte, 3, NULL, 3,
                          3 * (GSpacing)w, 1) != CE_None)
    st = talus_gdal_fail(TALUS_ERR_INTERNAL, "cannot fill the preview image");
  CPLErrorReset();
  GDALDatasetH out =
      st == TALUS_OK ? GDALCreateCopy(png, partial, src, FALSE, NULL, NULL, NULL) : NULL;
  if (st == TALUS_OK && !out)
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot write '%s'%s", path, talus_disk_full_hint(path));
  if (out) GDALClose(out);
  if (st == TALUS_OK && CPLGetLastErrorType() >= CE_Failure)
    st = talus_gdal_fail(TALUS_ERR_IO, "cannot finish writing '%s'%s", path,
                         talus_disk_full_hint(path));
  GDALClose(src);
  return st;
}

/* Renders both panels into a fresh RGB image (*img, malloc'd, w × ny):
 * the before panel a plain hillshade, the after panel tinted. */
static talus_status render(int nx, int ny, double cell, const float *const z[2],
                           const uint8_t *const nodata[2], const tint_src *tint, uint8_t **img,
                           int *w) {
  *w = 2 * nx + TALUS_PREVIEW_GAP;
  if (!(*img = calloc((size_t)*w * (size_t)ny, 3)))
    return talus_fail(TALUS_ERR_NOMEM, "io", "preview: cannot allocate %d x %d pixels", *w, ny);
  double az = 315.0 * M_PI / 180.0, alt = 45.0 * M_PI / 180.0;
  shade_src s = {nx, ny, cell, z[0], nodata[0], {sin(az) * cos(alt), cos(az) * cos(alt), sin(alt)}};
  render_panel(&s, NULL, *img, *w, 0);
  s.z = z[1];
  s.nodata = nodata[1];
  render_panel(&s, tint, *img, *w, nx + TALUS_PREVIEW_GAP);
  return TALUS_OK;
}

talus_status talus_rgb_png_write(const char *path, uint8_t *img, int w, int h) {
  char *partial = NULL;
  talus_gdal_enter();
  talus_status st = talus_partial_begin(path, &partial);
  if (st == TALUS_OK) st = write_png(path, partial, img, w, h);
  talus_status end = talus_partial_end(path, partial, st == TALUS_OK);
  talus_gdal_leave();
  return st != TALUS_OK ? st : end;
}

/* Renders and writes the PNG at path (partial + rename). */
static talus_status preview_render(const char *path, int nx, int ny, double cell_size,
                                   const float *const z[2], const uint8_t *const nodata[2],
                                   const tint_src *tint) {
  uint8_t *img = NULL;
  int w = 0;
  talus_status st = render(nx, ny, cell_size, z, nodata, tint, &img, &w);
  if (st == TALUS_OK) st = talus_rgb_png_write(path, img, w, ny);
  free(img);
  return st;
}

talus_status talus_preview_png(const char *path, int nx, int ny, double cell_size,
                               const float *before, const float *after, const uint8_t *nodata,
                               int max_width) {
  if (!before || !after)
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview: no %s heights",
                      before ? "after" : "before");
  talus_preview_acc *acc = NULL;
  talus_status st = talus_preview_acc_open(nx, ny, cell_size, max_width, &acc);
  if (st == TALUS_OK) st = talus_preview_acc_add(acc, 0, 0, 0, nx, ny, before, nodata);
  if (st == TALUS_OK) st = talus_preview_acc_add(acc, 1, 0, 0, nx, ny, after, nodata);
  if (st == TALUS_OK) st = talus_preview_acc_write(acc, path);
  talus_preview_acc_free(acc);
  return st;
}

/* ---------------------------------------------------------------------
 * Preview accumulator
 * ------------------------------------------------------------------- */

#define ACC_ONE        65536.0   /* fixed point: 2^-16 m per unit */
#define ACC_MAX_HEIGHT 1048576.0 /* 2^20 m: |value| <= 2^36 units */
#define ACC_MAX_FACTOR 8192      /* boxes of <= 2^26 cells: sums stay below 2^62 */

struct talus_preview_acc {
  int nx, ny, f, ow, oh; /* map, box size, panel size */
  double cell;           /* cell size of the map [m] */
  int64_t *sum[2];       /* [ow*oh] per panel, fixed point */
  uint32_t *cnt[2];      /* [ow*oh] valid cells summed */
  int64_t *water;        /* [ow*oh] after panel: water depth, fixed point */
  uint32_t *multi;       /* [ow*oh] after panel: cells of more than one column */
};

/* Smallest box size f with 2·ceil(nx/f) + gap <= max_width. */
static int64_t acc_factor(int nx, int max_width) {
  int64_t m = (max_width - TALUS_PREVIEW_GAP) / 2; /* widest panel */
  return ((int64_t)nx + m - 1) / m;
}

talus_status talus_preview_acc_open(int nx, int ny, double cell_size, int max_width,
                                    talus_preview_acc **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview: NULL output");
  *out = NULL;
  if (max_width <= 0) max_width = TALUS_PREVIEW_DEFAULT_WIDTH;
  if (nx <= 0 || ny <= 0 || !(cell_size > 0.0) || !isfinite(cell_size) ||
      max_width < 2 + TALUS_PREVIEW_GAP)
    return talus_fail(TALUS_ERR_ARGUMENT, "io",
                      "preview: bad arguments (%d x %d cells, cell size %g, max width %d)", nx, ny,
                      cell_size, max_width);
  int64_t f = acc_factor(nx, max_width);
  if (f > ACC_MAX_FACTOR)
    return talus_fail(TALUS_ERR_RANGE, "io",
                      "preview: %d cells do not fit %d pixels (more than %d cells a pixel)", nx,
                      max_width, ACC_MAX_FACTOR);
  talus_preview_acc *a = calloc(1, sizeof *a);
  if (!a) return talus_fail(TALUS_ERR_NOMEM, "io", "preview: out of memory");
  *a = (talus_preview_acc){.nx = nx,
                           .ny = ny,
                           .f = (int)f,
                           .ow = (int)((nx + f - 1) / f),
                           .oh = (int)((ny + f - 1) / f),
                           .cell = cell_size};
  size_t n = (size_t)a->ow * (size_t)a->oh;
  for (int p = 0; p < 2; p++) {
    a->sum[p] = calloc(n, sizeof *a->sum[p]);
    a->cnt[p] = calloc(n, sizeof *a->cnt[p]);
  }
  a->water = calloc(n, sizeof *a->water);
  a->multi = calloc(n, sizeof *a->multi);
  if (!a->sum[0] || !a->cnt[0] || !a->sum[1] || !a->cnt[1] || !a->water || !a->multi) {
    talus_status st =
        talus_fail(TALUS_ERR_NOMEM, "io", "preview: cannot allocate %d x %d pixels", a->ow, a->oh);
    talus_preview_acc_free(a);
    return st;
  }
  *out = a;
  return TALUS_OK;
}

/* A height in fixed point, clamped to ±ACC_MAX_HEIGHT so sums cannot
 * overflow; rounding is to nearest, ties away from zero, whatever the FPU
 * rounding mode. */
static int64_t acc_fixed(float v) {
  double h = (double)v;
  h = h > ACC_MAX_HEIGHT ? ACC_MAX_HEIGHT : (h < -ACC_MAX_HEIGHT ? -ACC_MAX_HEIGHT : h);
  return (int64_t)llround(h * ACC_ONE);
}

talus_status talus_preview_acc_add(talus_preview_acc *acc, int which, int x0, int y0, int w, int h,
                                   const float *heights, const uint8_t *nodata) {
  if (!acc || !heights || (which != 0 && which != 1))
    return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview add: bad arguments (panel %d)", which);
  talus_status st = talus_window_check("preview", acc->nx, acc->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  for (int y = 0; y < h; y++) {
    size_t row = (size_t)((y0 + y) / acc->f) * (size_t)acc->ow;
    int64_t *sum = acc->sum[which] + row;
    uint32_t *cnt = acc->cnt[which] + row;
    for (int x = 0; x < w; x++) {
      size_t i = (size_t)y * (size_t)w + (size_t)x;
      if ((nodata && nodata[i]) || !isfinite(heights[i])) continue;
      int ox = (x0 + x) / acc->f;
      sum[ox] += acc_fixed(heights[i]);
      cnt[ox]++;
    }
  }
  return TALUS_OK;
}

talus_status talus_preview_acc_add_overlay(talus_preview_acc *acc, int x0, int y0, int w, int h,
                                           const float *water, const uint8_t *columns,
                                           const uint8_t *nodata) {
  if (!acc) return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview overlay: NULL accumulator");
  talus_status st = talus_window_check("preview overlay", acc->nx, acc->ny, x0, y0, w, h);
  if (st != TALUS_OK) return st;
  for (int y = 0; y < h; y++) {
    size_t row = (size_t)((y0 + y) / acc->f) * (size_t)acc->ow;
    for (int x = 0; x < w; x++) {
      size_t i = (size_t)y * (size_t)w + (size_t)x, o = row + (size_t)((x0 + x) / acc->f);
      if (nodata && nodata[i]) continue;
      if (water && water[i] > 0.0f) acc->water[o] += acc_fixed(water[i]); /* NaN fails too */
      if (columns && columns[i] > 1) acc->multi[o]++;
    }
  }
  return TALUS_OK;
}

/* The after panel's tints: mean water depth and multi-column share per
 * pixel over the valid cells the heights counted (0 where none). */
static void acc_tints(const talus_preview_acc *acc, float *water, float *multi) {
  size_t n = (size_t)acc->ow * (size_t)acc->oh;
  for (size_t i = 0; i < n; i++) {
    double c = acc->cnt[1][i];
    water[i] = c ? (float)((double)acc->water[i] / c / ACC_ONE) : 0.0f;
    multi[i] = c ? (float)(acc->multi[i] / c) : 0.0f;
  }
}

/* Box means of panel p as floats, and its NoData mask (boxes with no
 * valid cell). */
static void acc_means(const talus_preview_acc *acc, int p, float *z, uint8_t *nd) {
  size_t n = (size_t)acc->ow * (size_t)acc->oh;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = acc->cnt[p][i];
    nd[i] = c == 0;
    z[i] = c ? (float)((double)acc->sum[p][i] / (double)c / ACC_ONE) : 0.0f;
  }
}

talus_status talus_preview_acc_write(const talus_preview_acc *acc, const char *path) {
  if (!acc) return talus_fail(TALUS_ERR_ARGUMENT, "io", "preview write: NULL accumulator");
  size_t n = (size_t)acc->ow * (size_t)acc->oh;
  float *z[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
  float *water = malloc(n * sizeof(float)), *multi = malloc(n * sizeof(float));
  uint8_t *nd[2] = {malloc(n), malloc(n)};
  talus_status st = TALUS_OK;
  if (!z[0] || !z[1] || !nd[0] || !nd[1] || !water || !multi)
    st = talus_fail(TALUS_ERR_NOMEM, "io", "preview: cannot allocate %d x %d pixels", acc->ow,
                    acc->oh);
  for (int p = 0; st == TALUS_OK && p < 2; p++)
    acc_means(acc, p, z[p], nd[p]);
  if (st == TALUS_OK) acc_tints(acc, water, multi);
  tint_src tint = {water, multi};
  if (st == TALUS_OK)
    st = preview_render(path, acc->ow, acc->oh, acc->cell * acc->f, (const float *const *)z,
                        (const uint8_t *const *)nd, &tint);
  for (int p = 0; p < 2; p++)
    free(z[p]), free(nd[p]);
  free(water), free(multi);
  return st;
}

void talus_preview_acc_free(talus_preview_acc *acc) {
  if (!acc) return;
  for (int p = 0; p < 2; p++)
    free(acc->sum[p]), free(acc->cnt[p]);
  free(acc->water), free(acc->multi);
  free(acc);
}
