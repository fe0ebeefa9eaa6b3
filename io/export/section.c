/*
 * section.c — the cross-section PNG of a layered state (section.h). Reads
 * the cut's row or column of every layer's bedrock, sand, water and
 * ceiling through a windowed band reader, then paints each pixel column
 * from the cell's columns: column k holds rock from its floor (column
 * k − 1's ceiling; none for k = 0) to B, sand to B + s, water to
 * B + s + w, and air to its ceiling (none for the top column).
 */
#include "io/export/export.h"
#include "io/export/section.h"
#include "io/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SECTION_FIELDS 4 /* bedrock, sand, water, ceiling: io/state.h's 0..3 */

typedef talus_section_cut section_cut;

float *talus_section_cut_field(const section_cut *c, int k, int f) {
  return c->v + ((size_t)k * SECTION_FIELDS + (size_t)f) * (size_t)c->n;
}
static float *cut_field(const section_cut *c, int k, int f) {
  return talus_section_cut_field(c, k, f);
}

talus_status talus_section_cut_alloc(section_cut *c, int n, int L, double cell) {
  memset(c, 0, sizeof *c);
  c->n = n, c->L = L, c->cell = cell;
  size_t bytes = (size_t)n * (size_t)L * SECTION_FIELDS * 4;
  talus_status st = talus_alloc((void **)&c->v, bytes, "section");
  if (!st) st = talus_alloc((void **)&c->count, (size_t)n, "section");
  if (!st) {
    memset(c->v, 0, bytes);
    memset(c->count, 0, (size_t)n);
  }
  return st;
}

void talus_section_cut_free(section_cut *c) {
  talus_free(c->v);
  talus_free(c->count);
  c->v = NULL, c->count = NULL;
}

/* Reads band b over the cut's window into out. */
static talus_status cut_read(talus_bands_reader *r, const talus_section_options *o, int n, int b,
                             float *out) {
  return o->along_x ? talus_bands_reader_read(r, b, 0, o->index, n, 1, out)
                    : talus_bands_reader_read(r, b, o->index, 0, 1, n, out);
}

/* Reads the cut of an open state: its layers, counts and fields. */
static talus_status cut_load(talus_bands_reader *r, const talus_section_options *o,
                             section_cut *c) {
  talus_state_header h;
  talus_status st = talus_state_header_reader(r, &h);
  int nx = talus_bands_reader_nx(r), ny = talus_bands_reader_ny(r);
  int n = o->along_x ? nx : ny, limit = o->along_x ? ny : nx;
  if (!st && (o->index < 0 || o->index >= limit))
    st = talus_fail(TALUS_ERR_RANGE, "export", "--section %s=%d lies outside the map (0..%d)",
                    o->along_x ? "y" : "x", o->index, limit - 1);
  int band[TALUS_NZ_MAX][TALUS_STATE_FIELDS];
  int L = talus_state_layer_bands(r, band);
  float *surface = NULL;
  if (!st) st = talus_section_cut_alloc(c, n, L, h.cell);
  if (!st) st = talus_alloc((void **)&surface, (size_t)n * 4, "section");
  if (!st) st = cut_read(r, o, n, h.surface, surface);
  if (!st) st = cut_read(r, o, n, h.columns, cut_field(c, 0, 0)); /* counts, for now */
  for (int i = 0; !st && i < n; i++) {
    float k = cut_field(c, 0, 0)[i];
    int nodata = talus_state_nodata(talus_bands_reader_georef(r), surface[i]);
    c->count[i] = nodata || !(k >= 1.0f && k <= (float)L) ? 0 : (uint8_t)k;
  }
  talus_free(surface);
  for (int k = 0; !st && k < L; k++)
    for (int f = 0; !st && f < SECTION_FIELDS; f++)
      st = band[k][f] < 0 ? talus_fail(TALUS_ERR_FORMAT, "export", "state layer %d lacks a band", k)
                          : cut_read(r, o, n, band[k][f], cut_field(c, k, f));
  return st;
}

/* What lies at height z in cell i: 0 rock, 1 sand, 2 water, 3 air. */
static int cut_at(const section_cut *c, size_t i, double z) {
  int n = c->count[i];
  for (int k = 0; k < n; k++) {
    double B = cut_field(c, k, 0)[i], s = cut_field(c, k, 1)[i], w = cut_field(c, k, 2)[i];
    if (k + 1 < n && z >= cut_field(c, k, 3)[i]) continue; /* above its ceiling */
    return z < B ? 0 : z < B + s ? 1 : z < B + s + w ? 2 : 3;
  }
  return 3;
}

/* The height range: lowest bedrock top of column 0 to the highest water
 * surface, with a margin of max(1 m, 5 %); counts the multi-column cells. */
static void cut_range(const section_cut *c, talus_section_info *info) {
  double lo = INFINITY, hi = -INFINITY;
  info->multi = 0;
  for (int i = 0; i < c->n; i++) {
    int n = c->count[i];
    if (!n) continue;
    info->multi += n > 1;
    lo = fmin(lo, cut_field(c, 0, 0)[i]);
    double top =
        (double)cut_field(c, n - 1, 0)[i] + cut_field(c, n - 1, 1)[i] + cut_field(c, n - 1, 2)[i];
    hi = fmax(hi, top);
  }
  if (!(hi >= lo)) lo = 0.0, hi = 1.0; /* all NoData */
  double pad = fmax(1.0, 0.05 * (hi - lo));
  info->zlo = lo - pad, info->zhi = hi + pad;
}

/* Paints the cut into a fresh RGB image (*img) of info's size. */
static talus_status cut_paint(const section_cut *c, int px, const talus_section_info *info,
                              uint8_t **img) {
  static const uint8_t colour[5][3] = {
      {115, 77, 51}, {230, 204, 102}, {77, 128, 242}, {235, 242, 255}, {0, 0, 0}};
  size_t w = (size_t)info->width, h = (size_t)info->height;
  if (!(*img = malloc(w * h * 3)))
    return talus_fail(TALUS_ERR_NOMEM, "export", "section: cannot allocate %zu x %zu pixels", w, h);
  for (size_t y = 0; y < h; y++) {
    double z = info->zhi - ((double)y + 0.5) * info->m_per_px_z;
    for (size_t x = 0; x < w; x++) {
      size_t i = x / (size_t)px;
      int what = c->count[i] ? cut_at(c, i, z) : 4;
      memcpy(*img + (y * w + x) * 3, colour[what], 3);
    }
  }
  return TALUS_OK;
}

/* Settles the image's size and scales from the cut and the options. */
static void cut_scale(const section_cut *c, const talus_section_options *o, int *px,
                      talus_section_info *info) {
  int maxh = o->max_height > 0 ? o->max_height : 1024;
  *px = o->px > 0 ? o->px : (int)fmin(8.0, fmax(1.0, floor(1024.0 / c->n)));
  cut_range(c, info);
  info->cells = c->n;
  info->width = c->n * *px;
  info->m_per_px_x = c->cell / *px;
  double tall = ceil((info->zhi - info->zlo) / info->m_per_px_x);
  info->height = (int)fmax(16.0, fmin(tall, (double)maxh));
  info->m_per_px_z = (info->zhi - info->zlo) / info->height;
}

talus_status talus_section_cut_png(const section_cut *c, const talus_section_options *o,
                                   const char *png_path, talus_section_info *info) {
  talus_section_info local;
  info = info ? info : &local;
  memset(info, 0, sizeof *info);
  uint8_t *img = NULL;
  int px = 1;
  cut_scale(c, o, &px, info);
  talus_status st = cut_paint(c, px, info, &img);
  if (!st) st = talus_rgb_png_write(png_path, img, info->width, info->height);
  free(img);
  return st;
}

talus_status talus_section_png(const char *state_path, const talus_section_options *o,
                               const char *png_path, talus_section_info *info) {
  section_cut c;
  memset(&c, 0, sizeof c);
  talus_bands_reader *r = NULL;
  int layers = 0;
  talus_status st = talus_bands_reader_open(state_path, &r);
  if (!st && !talus_state_reader_probe(r, &layers))
    st = talus_fail(TALUS_ERR_FORMAT, "export",
                    "'%s' is not a talus state: --section cuts a layered state (erode --state)",
                    state_path);
  if (!st) st = cut_load(r, o, &c);
  if (!st) st = talus_section_cut_png(&c, o, png_path, info);
  talus_section_cut_free(&c);
  if (r) talus_bands_reader_close(r);
  return st;
}
