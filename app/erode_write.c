/*
 * erode_write.c — the output files of `talus erode` (surface, --maps,
 * --state, preview), written a row of GeoTIFF blocks at a time from cells
 * handed in by rectangles: the whole map of a monolithic run or one tile
 * core after another of a tiled run. Rows of blocks are written whole and
 * flushed at once, so the file bytes depend on the values only (see
 * talus_geotiff_stream_flush): a tiled run writes the bytes of a
 * monolithic one. Memory: max_rows + one block row of every band, never
 * the whole map.
 */
#include "erode.h"
#include "export_app.h"
#include "io/export/driver.h"
#include "io/export/export.h"
#include "io/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { MAP_WATER, MAP_SAND, MAP_SEDIMENT, MAP_COLUMNS, MAP_EROSION, MAP_WATER_SURFACE, MAP_COUNT };
static const struct {
  const char *suffix, *name;
} map_files[MAP_COUNT] = {{"_water.tif", "water depth [m]"},
                          {"_sand.tif", "sand thickness [m]"},
                          {"_sediment.tif", "suspended sediment [m]"},
                          {"_columns.tif", "column count"},
                          {"_erosion.tif", "net deposition (+) / erosion (-) [m]"},
                          {"_water_surface.tif", "terrain surface plus water depth [m]"}};

int erode_map_count(void) {
  return MAP_COUNT;
}

int erode_converts(const erode_opts *o) {
  return o->format && strcasecmp(o->format, "GTiff") != 0;
}

/* The path of map m: <out>_water.tif beside <out>.tif; with a driver of
 * -of (erode_converts), <stem>_water<ext> beside <stem><ext>, the output's
 * own extension (none when it has none). */
static void map_path(const erode_opts *o, int m, char *out, size_t size) {
  if (!erode_converts(o)) {
    app_derived_path(out, size, o->output, map_files[m].suffix);
    return;
  }
  const char *slash = strrchr(o->output, '/'), *name = slash ? slash + 1 : o->output;
  const char *dot = strrchr(name, '.');
  size_t stem = dot && dot != name ? (size_t)(dot - o->output) : strlen(o->output);
  size_t suffix = strlen(map_files[m].suffix) - strlen(".tif");
  snprintf(out, size, "%.*s%.*s%s", (int)stem, o->output, (int)suffix, map_files[m].suffix,
           o->output + stem);
}

/* The surface, the maps, then state, preview and report. */
_Static_assert(1 + MAP_COUNT + 4 + 2 * ERODE_MAX_EXPORTS <= ERODE_MAX_OUTPUTS,
               "erode_output_paths overruns its array");

int erode_output_paths(const erode_opts *o, char paths[][ERODE_PATH_MAX]) {
  int n = 0;
  snprintf(paths[n++], ERODE_PATH_MAX, "%s", o->output);
  for (int m = 0; o->maps && m < MAP_COUNT; m++)
    map_path(o, m, paths[n++], ERODE_PATH_MAX);
  const char *more[] = {o->state, o->no_preview ? NULL : o->preview, o->section, o->report};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
    if (more[i]) snprintf(paths[n++], ERODE_PATH_MAX, "%s", more[i]);
  for (int e = 0; e < o->nexports; e++) {
    const char *path = NULL;
    int kind = 0;
    if (export_spec_check(o->exports[e], &path, &kind)) continue; /* refused when parsed */
    snprintf(paths[n++], ERODE_PATH_MAX, "%s", path);
    if (kind != EXPORT_MESH) export_sidecar_path(paths[n++], ERODE_PATH_MAX, path);
  }
  return n;
}

struct erode_writer {
  const erode_opts *o;
  int has_nodata;
  float nodata;
  int nx, ny, L, bh;                          /* map, state layers, block rows */
  int acc;                                    /* the state's optional band groups (TALUS_STATE_*) */
  int cap, base;                              /* ring rows held, first global row held */
  int nbands;                                 /* 1 + maps + state bands */
  float **ring;                               /* [nbands][cap * nx] */
  talus_geotiff_stream *files[2 + MAP_COUNT]; /* surface, maps, state */
  int nfiles;
  /* -of DRIVER (erode_converts): file i streams to tmp[i], copied into
   * final[i] at commit; "" for a file written as it is (the state) */
  char tmp[2 + MAP_COUNT][TALUS_PATH_BUF + sizeof ".rows.tif"],
      final[2 + MAP_COUNT][TALUS_PATH_BUF];
  int file_of[2 + MAP_COUNT]; /* first ring band of each file */
  int bands_of[2 + MAP_COUNT];
  talus_preview_acc *preview;
  int32_t *multi; /* [ny] cells of several columns per row, for the section (o->section) */
  uint8_t *nd;    /* a rectangle's NoData mask, for the preview */
  float *after;   /* a rectangle's surface, for the preview */
  float *water;   /* a rectangle's water depth, for the preview's tint */
  uint8_t *cols;  /* a rectangle's column counts, for the preview's tint */
  size_t rect_cells;
};

/* Opens file i of nbands bands at path; with convert, streamed to the
 * temporary GeoTIFF "<path>.rows.tif" (as talus export's driver outputs)
 * and copied into -of's driver at commit. */
static talus_status writer_add_file(erode_writer *w, const char *path, int nbands,
                                    const char *const *names, const char *const *meta,
                                    const talus_georef *geo, const talus_write_options *wo,
                                    int convert) {
  int i = w->nfiles;
  if (convert) {
    snprintf(w->final[i], sizeof w->final[i], "%s", path);
    snprintf(w->tmp[i], sizeof w->tmp[i], "%s.rows.tif", path);
    path = w->tmp[i];
  }
  talus_status st =
      talus_geotiff_stream_open(path, w->nx, w->ny, nbands, names, meta, geo, wo, &w->files[i]);
  if (st) return st;
  w->file_of[i] = i ? w->file_of[i - 1] + w->bands_of[i - 1] : 0;
  w->bands_of[i] = nbands;
  w->nfiles++;
  return TALUS_OK;
}

/* The state file (io/state.h): surface, columns, then 11 fields of each
 * layer k < L, then the accumulators. */
static talus_status writer_open_state(erode_writer *w, const talus_georef *geo,
                                      const talus_write_options *wo, int nz, double cell,
                                      int64_t step) {
  int nb = talus_state_bands(w->L, w->acc);
  char(*buf)[TALUS_STATE_NAME_MAX] = calloc((size_t)nb, sizeof *buf);
  const char **names = calloc((size_t)nb + 1, sizeof *names);
  const char **units = calloc((size_t)nb + 1, sizeof *units);
  talus_status st = (buf && names && units)
                        ? TALUS_OK
                        : talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for bands");
  if (!st) {
    talus_state_band_names(w->L, w->acc, buf, names);
    talus_state_band_units(w->L, w->acc, units);
    talus_state_meta md;
    st = talus_state_metadata(&md, nz, step, cell, w->o->params_ini);
    talus_write_options o = *wo;
    o.units = units;
    if (!st) st = writer_add_file(w, w->o->state, nb, names, md.list, geo, &o, 0);
    talus_state_metadata_free(&md);
  }
  free(buf);
  free(names);
  free(units);
  return st;
}

/* Opens every output file. NoData: the float files take NaN whatever the
 * input's value (a UInt16 DEM's 65535 is a height in a float map), the
 * column counts (Byte) take 0, which no valid cell has. With -of DRIVER
 * the surface and the maps go through the driver, which takes the -co;
 * their temporary GeoTIFFs and the state (talus's own GeoTIFF format, read
 * back by talus erode and talus export) take talus's default options. */
static talus_status writer_open_files(erode_writer *w, const talus_georef *geo, int nz, double cell,
                                      int64_t step) {
  int convert = erode_converts(w->o);
  talus_write_options wo = {.creation_options = convert ? NULL : w->o->co}, wb = wo;
  wb.byte_bands = 1;
  talus_georef none = {.has_nodata = 0};
  talus_georef fgeo = geo ? *geo : none; /* shallow: the writers copy what they keep */
  talus_georef bgeo = fgeo;
  fgeo.nodata = NAN, bgeo.nodata = 0.0;
  const char *name[1] = {"eroded surface [m]"};
  talus_status st =
      writer_add_file(w, w->o->output, 1, name, NULL, geo ? &fgeo : NULL, &wo, convert);
  char path[TALUS_PATH_BUF];
  for (int m = 0; m < MAP_COUNT && !st && w->o->maps; m++) {
    map_path(w->o, m, path, sizeof path);
    name[0] = map_files[m].name;
    st = writer_add_file(w, path, 1, name, NULL, geo ? (m == MAP_COLUMNS ? &bgeo : &fgeo) : NULL,
                         m == MAP_COLUMNS ? &wb : &wo, convert);
  }
  if (!st && w->o->state) st = writer_open_state(w, geo ? &fgeo : NULL, &wo, nz, cell, step);
  int bx = 0;
  if (!st) talus_geotiff_stream_block_size(w->files[0], &bx, &w->bh);
  if (!st && w->bh < 1) w->bh = 256;
  return st;
}

static talus_status writer_alloc(erode_writer *w, int max_rows, double cell) {
  w->nbands = 0;
  for (int i = 0; i < w->nfiles; i++)
    w->nbands += w->bands_of[i];
  w->cap = max_rows + w->bh;
  w->ring = calloc((size_t)w->nbands, sizeof *w->ring);
  if (!w->ring) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for output rows");
  for (int b = 0; b < w->nbands; b++) {
    talus_status st =
        talus_alloc((void **)&w->ring[b], (size_t)w->cap * w->nx * sizeof(float), "output rows");
    if (st) return st;
  }
  if (w->o->section) {
    talus_status st = talus_alloc((void **)&w->multi, (size_t)w->ny * sizeof *w->multi, "section");
    if (st) return st;
    memset(w->multi, 0, (size_t)w->ny * sizeof *w->multi);
  }
  if (!w->o->preview || w->o->no_preview) return TALUS_OK;
  return talus_preview_acc_open(w->nx, w->ny, cell, 2048, &w->preview);
}

talus_status erode_writer_open(erode_writer **out, const erode_opts *o, const talus_georef *geo,
                               int nx, int ny, double cell, int nz, int L, int acc, int64_t step,
                               int max_rows) {
  erode_writer *w = calloc(1, sizeof *w);
  *out = NULL;
  if (!w) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for the outputs");
  w->o = o;
  w->nx = nx, w->ny = ny, w->L = L, w->acc = acc;
  w->has_nodata = geo && geo->has_nodata;
  w->nodata = NAN; /* writer_open_files */
  talus_status st = writer_open_files(w, geo, nz, cell, step);
  if (!st) st = writer_alloc(w, max_rows, cell);
  if (st) {
    erode_writer_abort(w);
    return st;
  }
  *out = w;
  return TALUS_OK;
}

int erode_writer_block_rows(const erode_writer *w) {
  return w->bh;
}

/* Whole-cell outputs of the cell at idx: surface, then the maps. */
static void writer_cell(const erode_writer *w, const talus_tile *t, size_t idx, float before,
                        float v[1 + MAP_COUNT]) {
  int top = t->count[idx] - 1;
  size_t ct = talus_col(t, idx, top);
  float sand = 0.0f, sed = 0.0f;
  for (int k = 0; k <= top; k++) {
    sand += t->s[talus_col(t, idx, k)];
    sed += t->r[talus_col(t, idx, k)];
  }
  v[0] = t->B[ct] + t->s[ct];
  v[1 + MAP_WATER] = t->w[ct];
  v[1 + MAP_SAND] = sand;
  v[1 + MAP_SEDIMENT] = sed;
  v[1 + MAP_COLUMNS] = (float)t->count[idx];
  v[1 + MAP_EROSION] = v[0] - before;
  /* lakes and rivers as they stand: the surface alone shows a lake
   * flattened by the wet angle of repose as a plain */
  v[1 + MAP_WATER_SURFACE] = v[0] + t->w[ct];
  if (t->mask[idx] && w->has_nodata)
    for (int i = 0; i < 1 + MAP_COUNT; i++)
      v[i] = i == 1 + MAP_COLUMNS ? 0.0f : w->nodata;
}

/* State bands of the cell at idx from ring band b0 on, at ring offset off. */
static void writer_state_cell(const erode_writer *w, const talus_tile *t, size_t idx, float surface,
                              int b0, size_t off) {
  w->ring[b0][off] = surface;
  w->ring[b0 + 1][off] = (float)t->count[idx];
  for (int k = 0; k < w->L; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS; f++)
      w->ring[b0 + talus_state_band(k, f)][off] = talus_state_value(t, idx, f, k);
  for (int a = 0; (w->acc & TALUS_STATE_ACC) && a < TALUS_ACC_PLANES; a++)
    w->ring[b0 + talus_state_acc_band(w->L, a)][off] = talus_state_acc_value(t, idx, a);
  for (int j = 0; (w->acc & TALUS_STATE_FDIAG) && j < 4; j++)
    w->ring[b0 + talus_state_fdiag_band(w->L, w->acc, j)][off] = t->fd[(size_t)j * t->plane + idx];
  if (w->acc & TALUS_STATE_HARD)
    w->ring[b0 + talus_state_hard_band(w->L, w->acc)][off] = t->hard[idx];
  if (w->acc & TALUS_STATE_GRADE)
    w->ring[b0 + talus_state_grade_band(w->L, w->acc)][off] = t->grade_in[idx];
}

/* Feeds rectangle r to the preview: both panels' heights, then the after
 * panel's water and overhang tints. */
static talus_status writer_preview(erode_writer *w, talus_rect r, const float *before) {
  if (!w->preview) return TALUS_OK;
  talus_status st = talus_preview_acc_add(w->preview, 0, r.x0, r.y0, r.w, r.h, before, w->nd);
  if (!st) st = talus_preview_acc_add(w->preview, 1, r.x0, r.y0, r.w, r.h, w->after, w->nd);
  if (!st)
    st = talus_preview_acc_add_overlay(w->preview, r.x0, r.y0, r.w, r.h, w->water, w->cols, w->nd);
  return st;
}

/* Frees the preview's per-rectangle scratch. */
static void writer_rect_free(erode_writer *w) {
  talus_free(w->nd);
  talus_free(w->after);
  talus_free(w->water);
  talus_free(w->cols);
  w->nd = NULL, w->after = NULL, w->water = NULL, w->cols = NULL, w->rect_cells = 0;
}

/* Grows the preview's per-rectangle scratch to `cells` cells. */
static talus_status writer_rect_scratch(erode_writer *w, size_t cells) {
  if (cells <= w->rect_cells) return TALUS_OK;
  writer_rect_free(w);
  talus_status st = talus_alloc((void **)&w->nd, cells, "preview mask");
  if (!st) st = talus_alloc((void **)&w->after, cells * sizeof(float), "preview rows");
  if (!st) st = talus_alloc((void **)&w->water, cells * sizeof(float), "preview water");
  if (!st) st = talus_alloc((void **)&w->cols, cells, "preview columns");
  if (!st) w->rect_cells = cells;
  return st;
}

talus_status erode_writer_add(erode_writer *w, const talus_tile *t, talus_rect r,
                              const float *before) {
  if (r.y0 < w->base || r.y0 + r.h > w->base + w->cap)
    return talus_fail(TALUS_ERR_INTERNAL, "erode", "rows %d..%d outside the output window %d..%d",
                      r.y0, r.y0 + r.h, w->base, w->base + w->cap);
  talus_status st = writer_rect_scratch(w, (size_t)r.w * r.h);
  int nmaps = w->o->maps ? MAP_COUNT : 0, sb = 1 + nmaps;
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++) {
      size_t idx = talus_idx(t, r.x0 + x - t->buf.x0, r.y0 + y - t->buf.y0);
      size_t i = (size_t)y * r.w + x, off = (size_t)(r.y0 + y - w->base) * w->nx + r.x0 + x;
      float v[1 + MAP_COUNT];
      writer_cell(w, t, idx, before[i], v);
      for (int b = 0; b < 1 + nmaps; b++)
        w->ring[b][off] = v[b];
      if (w->o->state) writer_state_cell(w, t, idx, v[0], sb, off);
      w->nd[i] = t->mask[idx];
      w->after[i] = v[0];
      w->water[i] = t->w[talus_col(t, idx, t->count[idx] - 1)];
      w->cols[i] = t->count[idx];
      if (w->multi) w->multi[r.y0 + y] += t->count[idx] > 1 && !t->mask[idx];
    }
  return st ? st : writer_preview(w, r, before);
}

/* Writes ring rows [y0, y0+h) of every band and flushes every file. */
static talus_status writer_block_row(erode_writer *w, int y0, int h) {
  talus_status st = TALUS_OK;
  size_t off = (size_t)(y0 - w->base) * w->nx;
  for (int f = 0; f < w->nfiles && !st; f++)
    for (int b = 0; b < w->bands_of[f] && !st; b++)
      st = talus_geotiff_stream_write(w->files[f], b, 0, y0, w->nx, h,
                                      w->ring[w->file_of[f] + b] + off);
  for (int f = 0; f < w->nfiles && !st; f++)
    st = talus_geotiff_stream_flush(w->files[f]);
  return st;
}

talus_status erode_writer_rows_done(erode_writer *w, int y_end) {
  int y = w->base;
  talus_status st = TALUS_OK;
  while (!st && y < w->ny) {
    int h = w->ny - y < w->bh ? w->ny - y : w->bh;
    if (y + h > y_end) break;
    st = writer_block_row(w, y, h);
    y += h;
  }
  if (st || y == w->base) return st;
  size_t keep = (size_t)(w->base + w->cap - y) * w->nx, drop = (size_t)(y - w->base) * w->nx;
  for (int b = 0; b < w->nbands; b++)
    memmove(w->ring[b], w->ring[b] + drop, keep * sizeof(float));
  w->base = y;
  return TALUS_OK;
}

static void writer_free(erode_writer *w) {
  for (int b = 0; w->ring && b < w->nbands; b++)
    talus_free(w->ring[b]);
  free(w->ring);
  talus_preview_acc_free(w->preview);
  talus_free(w->multi);
  writer_rect_free(w);
  free(w);
}

int erode_writer_section_row(const erode_writer *w) {
  if (!w->multi) return -1;
  int best = -1, most = 0;
  for (int y = 0; y < w->ny; y++)
    if (w->multi[y] > most) best = y, most = w->multi[y];
  return best >= 0 ? best : w->ny / 2;
}

void erode_section_add(talus_section_cut *c, const talus_tile *t, talus_rect r, int y) {
  if (y < r.y0 || y >= r.y0 + r.h) return;
  for (int x = r.x0; x < r.x0 + r.w; x++) {
    size_t idx = talus_idx(t, x - t->buf.x0, y - t->buf.y0);
    int n = t->mask[idx] ? 0 : t->count[idx];
    c->count[x] = (uint8_t)(n < c->L ? n : c->L);
    for (int k = 0; k < c->count[x]; k++) {
      size_t ci = talus_col(t, idx, k);
      const float v[4] = {t->B[ci], t->s[ci], t->w[ci], t->C[ci]};
      for (int f = 0; f < 4; f++)
        talus_section_cut_field(c, k, f)[x] = v[f];
    }
  }
}

talus_status erode_section_write(const erode_opts *o, const talus_section_cut *c, int y) {
  talus_section_options so = {.along_x = 1, .index = y};
  talus_section_info info;
  talus_status st = talus_section_cut_png(c, &so, o->section, &info);
  if (!st && !o->quiet)
    talus_info("%s: cross-section along row %d (%d cells of several columns)", o->section, y,
               info.multi);
  return st;
}

/* -of DRIVER: copies each streamed temporary GeoTIFF into its file (GDAL
 * CreateCopy with the -co, under a partial name renamed into place), with
 * a progress bar; the temporaries are removed whatever happens. */
static talus_status writer_convert(erode_writer *w, talus_status st) {
  for (int f = 0; f < w->nfiles; f++) {
    if (!w->tmp[f][0]) continue;
    if (!st) {
      char label[64];
      snprintf(label, sizeof label, "writing %s", w->o->format);
      app_progress bar;
      app_progress_begin(&bar, label, 100, w->o->quiet);
      st = talus_export_copy_file(w->tmp[f], w->final[f], w->o->format, w->o->co, app_progress_cb,
                                  &bar);
      app_progress_end(&bar);
    }
    unlink(w->tmp[f]);
  }
  return st;
}

talus_status erode_writer_commit(erode_writer *w) {
  talus_status st = w->base == w->ny
                        ? TALUS_OK
                        : talus_fail(TALUS_ERR_INTERNAL, "erode", "only %d of %d rows were written",
                                     w->base, w->ny);
  for (int f = 0; f < w->nfiles; f++) {
    if (st) {
      talus_geotiff_stream_abort(w->files[f]);
      continue;
    }
    st = talus_geotiff_stream_commit(w->files[f]);
  }
  st = writer_convert(w, st);
  w->nfiles = 0;
  if (!st && w->preview) st = talus_preview_acc_write(w->preview, w->o->preview);
  writer_free(w);
  return st;
}

void erode_writer_abort(erode_writer *w) {
  if (!w) return;
  for (int f = 0; f < w->nfiles; f++)
    talus_geotiff_stream_abort(w->files[f]);
  writer_free(w);
}
