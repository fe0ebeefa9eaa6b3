/*
 * preview.c — before/after hillshade PNG previews, written through GDAL's
 * PNG driver from a MEM dataset. Downsampling is the preview accumulator's
 * (raster_stream.c): heights are box-averaged first and shaded here at the
 * preview's own resolution, so memory is O(preview) and a preview built
 * from windows equals one built from whole arrays.
 */
#define TALUS_RASTER_INTERNAL
#include "io/raster.h"

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

/* Renders one panel into img at column x0 (row stride w). */
static void render_panel(const shade_src *s, uint8_t *img, int w, int x0) {
  for (int y = 0; y < s->ny; y++) {
    uint8_t *row = img + (size_t)y * (size_t)w + (size_t)x0;
    for (int x = 0; x < s->nx; x++) {
      int masked = s->nodata && s->nodata[(size_t)y * (size_t)s->nx + (size_t)x];
      row[x] = masked ? 0 : (uint8_t)shade_at(s, x, y);
    }
  }
}

/* Writes the 8-bit image through MEM → PNG CreateCopy into partial. */
static talus_status write_png(const char *path, const char *partial, uint8_t *img, int w, int h) {
  GDALDriverH mem = GDALGetDriverByName("MEM"), png = GDALGetDriverByName("PNG");
  if (!mem || !png)
    return talus_fail(TALUS_ERR_UNSUPPORTED, "io", "GDAL lacks the MEM or PNG driver");
  GDALDatasetH src = GDALCreate(mem, "", w, h, 1, GDT_Byte, NULL);
  if (!src) return talus_gdal_fail(TALUS_ERR_NOMEM, "cannot create the preview image");
  talus_status st = TALUS_OK;
  if (GDALRasterIO(GDALGetRasterBand(src, 1), GF_Write, 0, 0, w, h, img, w, h, GDT_Byte, 0, 0) !=
      CE_None)
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

/* Renders both panels into a fresh image (*img, malloc'd, w × ny). */
static talus_status render(int nx, int ny, double cell, const float *const z[2],
                           const uint8_t *const nodata[2], uint8_t **img, int *w) {
  *w = 2 * nx + TALUS_PREVIEW_GAP;
  if (!(*img = calloc((size_t)*w * (size_t)ny, 1)))
    return talus_fail(TALUS_ERR_NOMEM, "io", "preview: cannot allocate %d x %d pixels", *w, ny);
  double az = 315.0 * M_PI / 180.0, alt = 45.0 * M_PI / 180.0;
  shade_src s = {nx, ny, cell, z[0], nodata[0], {sin(az) * cos(alt), cos(az) * cos(alt), sin(alt)}};
  render_panel(&s, *img, *w, 0);
  s.z = z[1];
  s.nodata = nodata[1];
  render_panel(&s, *img, *w, nx + TALUS_PREVIEW_GAP);
  return TALUS_OK;
}

talus_status talus_preview_render(const char *path, int nx, int ny, double cell_size,
                                  const float *const z[2], const uint8_t *const nodata[2]) {
  uint8_t *img = NULL;
  char *partial = NULL;
  int w = 0;
  talus_gdal_enter();
  talus_status st = talus_partial_begin(path, &partial);
  if (st == TALUS_OK) st = render(nx, ny, cell_size, z, nodata, &img, &w);
  if (st == TALUS_OK) st = write_png(path, partial, img, w, ny);
  talus_status end = talus_partial_end(path, partial, st == TALUS_OK);
  free(img);
  talus_gdal_leave();
  return st != TALUS_OK ? st : end;
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
