/*
 * masks.c — texturing masks out of a talus state (masks.h): the state read
 * window by window (its columns, surface, accumulators and the top
 * column's water, sediment and sand), each cell's masks computed in
 * physical units or normalised codes, the rows streamed into a temporary
 * GeoTIFF and copied into the asked driver's file (export_driver.c).
 */
#include "io/export/masks.h"
#include "io/export/driver.h"
#include "io/json.h"
#include "io/raster/raster_private.h"
#include "io/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name, *unit, *what;
  double scale;
} mask_table[TALUS_MASKS] = {
    {"flow", "m3", "water that left the cell over the run", 1.0},
    {"wear", "m", "solid lost over the run", 1.0},
    {"deposition", "m", "solid gained over the run", 1.0},
    {"water", "m", "water depth on the top column", 1.0},
    {"sediment", "m", "suspended sediment on the top column", 0.1},
    {"sand", "m", "sand on the top column", 1.0},
};

const char *talus_mask_name(talus_mask m) {
  return (unsigned)m < TALUS_MASKS ? mask_table[m].name : "";
}

const char *talus_mask_unit(talus_mask m) {
  return (unsigned)m < TALUS_MASKS ? mask_table[m].unit : "";
}

int talus_mask_parse(const char *name) {
  for (int m = 0; m < TALUS_MASKS; m++)
    if (!strcmp(name, mask_table[m].name)) return m;
  return -1;
}

double talus_mask_default_scale(talus_mask m) {
  return (unsigned)m < TALUS_MASKS ? mask_table[m].scale : 1.0;
}

double talus_mask_normalise(talus_mask m, double x, double scale, double cell) {
  if (!(x > 0.0)) return 0.0; /* NaN, nothing, or a negative rounding */
  double v =
      m == TALUS_MASK_FLOW ? log10(1.0 + x / cell / scale) / TALUS_MASK_FLOW_DECADES : x / scale;
  return v < 1.0 ? v : 1.0;
}

/* The open state and one window of what the masks read. */
typedef struct mask_src {
  talus_bands_reader *r;
  talus_state_header h;
  int nx, ny, L;             /* L: layers stored */
  int acc[TALUS_ACC_PLANES]; /* accumulator bands, -1 if absent */
  int top[3][TALUS_NZ_MAX];  /* water, sediment, sand band of layer k */
  float *cnt, *surf, *v;     /* a window: counts, surface, scratch */
  float *field[TALUS_MASKS]; /* a window of each mask's physical values */
} mask_src;

/* The state field behind top-column mask m (water, sediment, sand). */
static int mask_top_field(talus_mask m) {
  return m == TALUS_MASK_WATER
             ? TALUS_STATE_WATER
             : (m == TALUS_MASK_SEDIMENT ? TALUS_STATE_SEDIMENT : TALUS_STATE_SAND);
}

/* Opens the state and finds the bands the asked masks read. */
static talus_status src_open(mask_src *s, const char *path, const talus_mask_options *o) {
  talus_status st = talus_bands_reader_open(path, &s->r);
  int layers = 0;
  if (!st && !talus_state_reader_probe(s->r, &layers))
    st = talus_fail(TALUS_ERR_FORMAT, "export", "'%s' is not a talus state (talus erode --state)",
                    path);
  if (!st) st = talus_state_header_reader(s->r, &s->h);
  if (st) return st;
  s->nx = talus_bands_reader_nx(s->r), s->ny = talus_bands_reader_ny(s->r);
  for (int a = 0; a < TALUS_ACC_PLANES; a++)
    s->acc[a] = talus_bands_reader_find(s->r, talus_state_acc_name(a));
  char name[TALUS_STATE_NAME_MAX];
  for (int k = 0; k < TALUS_NZ_MAX; k++)
    for (int i = 0; i < 3; i++) {
      talus_state_band_name(k, mask_top_field((talus_mask)(TALUS_MASK_WATER + i)), name);
      s->top[i][k] = talus_bands_reader_find(s->r, name);
      if (i == 0 && s->top[0][k] >= 0) s->L = k + 1;
    }
  for (int i = 0; i < o->n; i++)
    if (o->kind[i] <= TALUS_MASK_DEPOSITION && s->acc[o->kind[i]] < 0)
      return talus_fail(TALUS_ERR_DATA, "export",
                        "'%s' holds no %s: run talus erode with --set simulation.masks=true "
                        "(and --state) to sum flow, wear and deposition",
                        path, talus_mask_name(o->kind[i]));
  size_t n = (size_t)s->nx * TALUS_RASTER_WINDOW_ROWS;
  st = talus_alloc((void **)&s->cnt, n * sizeof(float), "mask rows");
  if (!st) st = talus_alloc((void **)&s->surf, n * sizeof(float), "mask rows");
  if (!st) st = talus_alloc((void **)&s->v, n * sizeof(float), "mask rows");
  for (int i = 0; i < o->n && !st; i++)
    if (!s->field[o->kind[i]])
      st = talus_alloc((void **)&s->field[o->kind[i]], n * sizeof(float), "mask rows");
  return st;
}

/* Closes the state and frees the windows s owns. */
static void src_close(mask_src *s) {
  talus_bands_reader_close(s->r);
  talus_free(s->cnt);
  talus_free(s->surf);
  talus_free(s->v);
  for (int m = 0; m < TALUS_MASKS; m++)
    talus_free(s->field[m]);
}

/* Top-column mask m of rows [y0, y0 + h): layer k's band where k is the
 * cell's top column. */
static talus_status src_top(mask_src *s, talus_mask m, int y0, int h) {
  float *out = s->field[m];
  int i = m - TALUS_MASK_WATER;
  size_t n = (size_t)s->nx * h;
  talus_status st = TALUS_OK;
  for (int k = 0; k < s->L && !st; k++) {
    if (s->top[i][k] < 0) continue;
    st = talus_bands_reader_read(s->r, s->top[i][k], 0, y0, s->nx, h, s->v);
    for (size_t c = 0; c < n && !st; c++)
      if ((int)s->cnt[c] - 1 == k) out[c] = s->v[c];
  }
  return st;
}

/* Reads the physical values of the asked masks over rows [y0, y0 + h);
 * NoData cells get NaN. */
static talus_status src_rows(mask_src *s, const talus_mask_options *o, int y0, int h) {
  size_t n = (size_t)s->nx * h;
  talus_status st = talus_bands_reader_read(s->r, s->h.columns, 0, y0, s->nx, h, s->cnt);
  if (!st) st = talus_bands_reader_read(s->r, s->h.surface, 0, y0, s->nx, h, s->surf);
  for (int i = 0; i < o->n && !st; i++) {
    talus_mask m = o->kind[i];
    if (m <= TALUS_MASK_DEPOSITION)
      st = talus_bands_reader_read(s->r, s->acc[m], 0, y0, s->nx, h, s->field[m]);
    else
      st = src_top(s, m, y0, h);
    const talus_georef *g = talus_bands_reader_georef(s->r);
    for (size_t c = 0; c < n && !st; c++)
      if (talus_state_nodata(g, s->surf[c])) s->field[m][c] = NAN;
  }
  return st;
}

/* The scale of mask m under o. */
static double mask_scale(const talus_mask_options *o, talus_mask m) {
  return o->scale[m] > 0.0 ? o->scale[m] : talus_mask_default_scale(m);
}

/* Bands the output has: the masks, two normalised ones padded to RGB. */
static int mask_bands(const talus_mask_options *o) {
  return o->n == 2 && o->bits ? 3 : o->n;
}

/* Writes rows [y0, y0 + h) of every band into the rows file. */
static talus_status mask_write_rows(const mask_src *s, const talus_mask_options *o,
                                    talus_export_rows *out, int y0, int h) {
  size_t n = (size_t)s->nx * h;
  double top = o->bits == 16 ? 65535.0 : 255.0;
  talus_status st = TALUS_OK;
  for (int b = 0; b < mask_bands(o) && !st; b++) {
    float *v = s->v;
    for (size_t c = 0; c < n; c++) {
      if (b >= o->n) {
        v[c] = 0.0f;
        continue;
      }
      talus_mask m = o->kind[b];
      double x = s->field[m][c];
      v[c] = o->bits ? (float)lround(talus_mask_normalise(m, x, mask_scale(o, m), s->h.cell) * top)
                     : (float)x;
    }
    st = talus_export_rows_write(out, b, y0, h, v);
  }
  return st;
}

/* The rows file's band names, units and the normalisation metadata. */
static talus_status mask_describe(const mask_src *s, const talus_mask_options *o,
                                  talus_export_rows *out) {
  char text[256];
  talus_status st = TALUS_OK;
  for (int b = 0; b < mask_bands(o) && !st; b++) {
    talus_mask m = b < o->n ? o->kind[b] : TALUS_MASKS;
    if (m == TALUS_MASKS) {
      st = talus_export_rows_band(out, b, "empty", NULL);
      continue;
    }
    double sc = mask_scale(o, m);
    if (!o->bits)
      snprintf(text, sizeof text, "%s [%s]: %s", mask_table[m].name, mask_table[m].unit,
               mask_table[m].what);
    else if (m == TALUS_MASK_FLOW)
      snprintf(text, sizeof text, "flow 0-1: log10(1 + m3 / %g m / %g m2) / %g", s->h.cell, sc,
               TALUS_MASK_FLOW_DECADES);
    else
      snprintf(text, sizeof text, "%s 0-1: m / %g m", mask_table[m].name, sc);
    st = talus_export_rows_band(out, b, text, o->bits ? NULL : mask_table[m].unit);
    char key[64], val[64];
    snprintf(key, sizeof key, "TALUS_MASK_%d", b + 1);
    snprintf(val, sizeof val, "%s scale=%g", mask_table[m].name, sc);
    if (!st) st = talus_export_rows_meta(out, key, val);
  }
  return st;
}

talus_status talus_mask_export(const char *state, const char *output, const talus_mask_options *o,
                               double *cell, talus_progress_fn progress, void *user) {
  if (o->n < 1 || o->n > TALUS_MASK_MAX || (o->bits && o->bits != 8 && o->bits != 16))
    return talus_fail(TALUS_ERR_ARGUMENT, "export", "1 to %d masks of 8 or 16 bits (or float)",
                      TALUS_MASK_MAX);
  talus_gdal_enter();
  mask_src s;
  memset(&s, 0, sizeof s);
  talus_export_rows *out = NULL;
  talus_status st = talus_export_driver_check(o->driver, o->bits == 8    ? "Byte"
                                                         : o->bits == 16 ? "UInt16"
                                                                         : "Float32");
  if (!st) st = src_open(&s, state, o);
  int type =
      o->bits == 8 ? TALUS_EXPORT_BYTE : (o->bits ? TALUS_EXPORT_UINT16 : TALUS_EXPORT_FLOAT);
  if (!st)
    st = talus_export_rows_open(output, s.nx, s.ny, mask_bands(o), type,
                                talus_bands_reader_georef(s.r), &out);
  if (!st && o->width) st = talus_export_rows_resize(out, o->width, o->height, o->resampling);
  if (!st) st = mask_describe(&s, o, out);
  for (int y0 = 0; !st && y0 < s.ny; y0 += TALUS_RASTER_WINDOW_ROWS) {
    int h = s.ny - y0 < TALUS_RASTER_WINDOW_ROWS ? s.ny - y0 : TALUS_RASTER_WINDOW_ROWS;
    st = src_rows(&s, o, y0, h);
    if (!st) st = mask_write_rows(&s, o, out, y0, h);
    if (!st && progress && !progress((double)(y0 + h) / s.ny, NULL, user))
      st = talus_fail(TALUS_ERR_CANCELLED, "export", "cancelled");
  }
  st = o->grid ? talus_export_rows_close_grid(out, st, o->driver, o->creation_options, o->grid)
               : talus_export_rows_close(out, st, o->driver, o->creation_options);
  if (cell) *cell = s.h.cell;
  src_close(&s);
  talus_gdal_leave();
  return st;
}

/* The sidecar's object of channel b: the mask and how its codes read. */
static talus_json *sidecar_channel(const talus_mask_options *o, int b, double cell) {
  static const char *const names[4] = {"R", "G", "B", "A"};
  talus_json *c = talus_json_object();
  talus_mask m = o->kind[b];
  double sc = mask_scale(o, m);
  char v[160], code[64];
  if (m == TALUS_MASK_FLOW)
    snprintf(v, sizeof v, "v = min(log10(1 + value / %.9g / %.9g) / %g, 1)", cell, sc,
             TALUS_MASK_FLOW_DECADES);
  else
    snprintf(v, sizeof v, "v = min(value / %.9g, 1)", sc);
  snprintf(code, sizeof code, "code = round(v * %d)", o->bits == 16 ? 65535 : 255);
  talus_status st = talus_json_set(c, "channel", talus_json_string(o->n > 1 ? names[b] : "grey"));
  if (!st) st = talus_json_set(c, "mask", talus_json_string(mask_table[m].name));
  if (!st) st = talus_json_set(c, "what", talus_json_string(mask_table[m].what));
  if (!st) st = talus_json_set(c, "unit", talus_json_string(mask_table[m].unit));
  if (!st) st = talus_json_set(c, "scale", talus_json_real(sc, NULL));
  if (!st && o->bits) st = talus_json_set(c, "normalisation", talus_json_string(v));
  if (!st && o->bits) st = talus_json_set(c, "code", talus_json_string(code));
  return st ? (talus_json_free(c), NULL) : c;
}

talus_status talus_mask_sidecar(const char *path, const char *file, const talus_mask_options *o,
                                double cell) {
  talus_json *d = talus_json_object(), *ch = talus_json_array();
  talus_status st = talus_json_set(d, "file", talus_json_string(file));
  if (!st) st = talus_json_set(d, "driver", talus_json_string(o->driver));
  if (!st) st = talus_json_set(d, "bits", talus_json_int(o->bits ? o->bits : 32));
  if (!st)
    st = talus_json_set(d, "values",
                        talus_json_string(o->bits ? "codes of v in 0-1" : "float32, physical"));
  if (!st) st = talus_json_set(d, "cell_m", talus_json_real(cell, NULL));
  for (int b = 0; b < o->n && !st; b++)
    st = talus_json_push(ch, sidecar_channel(o, b, cell));
  talus_status set = talus_json_set(d, "channels", ch); /* takes ch, also on failure */
  if (!st) st = set;
  if (!st) st = talus_json_write_path(d, path);
  talus_json_free(d);
  return st;
}
