/*
 * state.c — the layered-state file format (io/state.h): band names,
 * metadata, the probe, the whole-map writer and the cell-level readers
 * that both the monolithic load (app/erode.c) and the windowed one
 * (app/erode_source.c) fill tiles with.
 */
#include "io/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_field_names[TALUS_STATE_FIELDS] = {
    "bedrock",   "sand",   "water",  "ceiling", "sediment", "damage",
    "stability", "flux_r", "flux_u", "flux_l",  "flux_d"};

/* Plane of field f (index in state_field_names) of layer k. */
static float *state_plane(const talus_tile *t, int f, int k) {
  float *planes[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
  if (f < 7) return planes[f] + (size_t)k * t->plane;
  return t->f + ((size_t)k * 4 + (size_t)(f - 7)) * t->plane;
}

/* 1 when the value of the TALUS_STATE metadata item marks a state. */
static int state_flagged(const char *v) {
  return v && !strcmp(v, "1");
}

int talus_state_probe(const char *path) {
  char flag[32];
  int nbands = 0;
  return talus_raster_metadata_item(path, "TALUS_STATE", flag, sizeof flag, &nbands) &&
         state_flagged(flag) && nbands >= talus_state_band_count(1);
}

int talus_state_reader_probe(const talus_bands_reader *r, int *layers) {
  int state = state_flagged(talus_bands_reader_meta(r, "TALUS_STATE")) &&
              talus_bands_reader_nbands(r) >= talus_state_band_count(1);
  const char *l = talus_bands_reader_meta(r, "TALUS_LAYERS");
  *layers = state && l ? atoi(l) : 0;
  return state;
}

/* The metadata item of a state's parameters (the INI of every key, about
 * 8 KB). */
#define STATE_PARAMS_KEY "TALUS_PARAMS"

int talus_state_band_count(int L) {
  return 2 + L * TALUS_STATE_FIELDS;
}

int talus_state_extras(const talus_tile *t) {
  return (t->acc ? TALUS_STATE_ACC : 0) | (t->fd ? TALUS_STATE_FDIAG : 0) |
         (t->hard ? TALUS_STATE_HARD : 0) | (t->grade_in ? TALUS_STATE_GRADE : 0);
}

int talus_state_bands(int L, int acc) {
  return talus_state_band_count(L) + (acc & TALUS_STATE_ACC ? TALUS_ACC_PLANES : 0) +
         (acc & TALUS_STATE_FDIAG ? 4 : 0) + (acc & TALUS_STATE_HARD ? 1 : 0) +
         (acc & TALUS_STATE_GRADE ? 1 : 0);
}

int talus_state_hard_band(int L, int acc) {
  return talus_state_bands(L, acc & ~(TALUS_STATE_HARD | TALUS_STATE_GRADE));
}

int talus_state_grade_band(int L, int acc) {
  return talus_state_bands(L, acc & ~TALUS_STATE_GRADE);
}

int talus_state_fdiag_band(int L, int acc, int j) {
  return talus_state_band_count(L) + (acc & TALUS_STATE_ACC ? TALUS_ACC_PLANES : 0) + j;
}

const char *talus_state_fdiag_name(int j) {
  static const char *const names[4] = {"hf.flux_ru", "hf.flux_lu", "hf.flux_ld", "hf.flux_rd"};
  return j >= 0 && j < 4 ? names[j] : "";
}

int talus_state_acc_band(int L, int a) {
  return talus_state_band_count(L) + a;
}

const char *talus_state_acc_name(int a) {
  static const char *const names[TALUS_ACC_PLANES] = {"acc.flow", "acc.wear", "acc.deposition"};
  return a >= 0 && a < TALUS_ACC_PLANES ? names[a] : "";
}

int talus_state_band(int k, int f) {
  return 2 + k * TALUS_STATE_FIELDS + f;
}

void talus_state_band_name(int k, int f, char buf[TALUS_STATE_NAME_MAX]) {
  snprintf(buf, TALUS_STATE_NAME_MAX, "layer%d.%s", k, state_field_names[f]);
}

int talus_state_layer_bands(const talus_bands_reader *r,
                            int band[TALUS_NZ_MAX][TALUS_STATE_FIELDS]) {
  int L = -1;
  char name[TALUS_STATE_NAME_MAX];
  for (int k = 0; k < TALUS_NZ_MAX; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS; f++) {
      talus_state_band_name(k, f, name);
      band[k][f] = talus_bands_reader_find(r, name);
      if (f == TALUS_STATE_BEDROCK && band[k][f] < 0 && L < 0) L = k;
    }
  return L < 0 ? TALUS_NZ_MAX : L;
}

void talus_state_band_names(int L, int acc, char (*buf)[TALUS_STATE_NAME_MAX], const char **names) {
  names[0] = "surface";
  names[1] = "columns";
  for (int k = 0; k < L; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS; f++) {
      int b = talus_state_band(k, f);
      talus_state_band_name(k, f, buf[b]);
      names[b] = buf[b];
    }
  for (int a = 0; (acc & TALUS_STATE_ACC) && a < TALUS_ACC_PLANES; a++)
    names[talus_state_acc_band(L, a)] = talus_state_acc_name(a);
  for (int j = 0; (acc & TALUS_STATE_FDIAG) && j < 4; j++)
    names[talus_state_fdiag_band(L, acc, j)] = talus_state_fdiag_name(j);
  if (acc & TALUS_STATE_HARD) names[talus_state_hard_band(L, acc)] = TALUS_STATE_HARD_NAME;
  if (acc & TALUS_STATE_GRADE) names[talus_state_grade_band(L, acc)] = TALUS_STATE_GRADE_NAME;
}

void talus_state_band_units(int L, int acc, const char **units) {
  static const char *const field_units[TALUS_STATE_FIELDS] = {
      "m", "m", "m", "m", "m", "m", "kg/m2", "m3/s", "m3/s", "m3/s", "m3/s"};
  static const char *const acc_units[TALUS_ACC_PLANES] = {"m3", "m", "m"};
  units[0] = "m";
  units[1] = NULL;
  for (int k = 0; k < L; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS; f++)
      units[talus_state_band(k, f)] = field_units[f];
  for (int a = 0; (acc & TALUS_STATE_ACC) && a < TALUS_ACC_PLANES; a++)
    units[talus_state_acc_band(L, a)] = acc_units[a];
  for (int j = 0; (acc & TALUS_STATE_FDIAG) && j < 4; j++)
    units[talus_state_fdiag_band(L, acc, j)] = "m3/s";
  if (acc & TALUS_STATE_HARD) units[talus_state_hard_band(L, acc)] = NULL; /* a fraction, 0..1 */
  if (acc & TALUS_STATE_GRADE) units[talus_state_grade_band(L, acc)] = "m";
}

talus_status talus_state_metadata(talus_state_meta *m, int nz, int64_t step, double cell,
                                  const char *params_ini) {
  snprintf(m->text[0], sizeof m->text[0], "TALUS_STATE=1");
  snprintf(m->text[1], sizeof m->text[1], "TALUS_STATE_VERSION=1");
  snprintf(m->text[2], sizeof m->text[2], "TALUS_LAYERS=%d", nz);
  snprintf(m->text[3], sizeof m->text[3], "TALUS_STEP=%lld", (long long)step);
  snprintf(m->text[4], sizeof m->text[4], "TALUS_CELL_SIZE=%.17g", cell);
  for (int i = 0; i < TALUS_STATE_META; i++)
    m->list[i] = m->text[i];
  m->params = NULL;
  if (params_ini) {
    size_t n = strlen(STATE_PARAMS_KEY) + 1 + strlen(params_ini) + 1;
    m->params = malloc(n);
    if (!m->params) return talus_fail(TALUS_ERR_NOMEM, "state", "no memory for the parameters");
    snprintf(m->params, n, "%s=%s", STATE_PARAMS_KEY, params_ini);
  }
  m->list[TALUS_STATE_META] = m->params;
  m->list[TALUS_STATE_META + 1] = NULL;
  return TALUS_OK;
}

void talus_state_metadata_free(talus_state_meta *m) {
  free(m->params);
  m->params = NULL;
}

const char *talus_state_reader_params(const talus_bands_reader *r) {
  return talus_bands_reader_meta(r, STATE_PARAMS_KEY);
}

int talus_state_layers(const talus_tile *t, int L) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (t->count[idx] > L) L = t->count[idx];
    }
  return L;
}

float talus_state_value(const talus_tile *t, size_t idx, int f, int k) {
  return k < t->count[idx] ? state_plane(t, f, k)[idx] : NAN;
}

/* The surface band: top S = B + s of the topmost column, NoData on masked
 * cells when geo has one. */
static void state_surface_band(const talus_tile *t, const talus_georef *geo, float *band) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y), ct = talus_col(t, idx, t->count[idx] - 1);
      band[(size_t)y * t->buf.w + x] = t->B[ct] + t->s[ct];
    }
  if (!geo || !geo->has_nodata) return;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      if (t->mask[talus_idx(t, x, y)]) band[(size_t)y * t->buf.w + x] = (float)geo->nodata;
}

/* The columns band: the column count of every cell. */
static void state_columns_band(const talus_tile *t, float *band) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      band[(size_t)y * t->buf.w + x] = (float)t->count[talus_idx(t, x, y)];
}

float talus_state_acc_value(const talus_tile *t, size_t idx, int a) {
  return t->acc[(size_t)a * t->plane + idx];
}

/* The band of accumulator a. */
static void state_acc_band(const talus_tile *t, int a, float *band) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      band[(size_t)y * t->buf.w + x] = talus_state_acc_value(t, talus_idx(t, x, y), a);
}

/* The band of a per-cell plane of t (a diagonal flux plane, the hardness). */
static void state_plane_band(const talus_tile *t, const float *plane, float *band) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      band[(size_t)y * t->buf.w + x] = plane[talus_idx(t, x, y)];
}

/* The band of field f of layer k, NaN where absent. */
static void state_layer_band(const talus_tile *t, int f, int k, float *band) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      band[(size_t)y * t->buf.w + x] = talus_state_value(t, talus_idx(t, x, y), f, k);
}

talus_status talus_state_write(const char *path, const talus_tile *t, int64_t step, double cell,
                               const talus_georef *geo, const talus_write_options *wo) {
  int L = talus_state_layers(t, 1), ex = talus_state_extras(t), nb = talus_state_bands(L, ex);
  size_t n = (size_t)t->buf.w * t->buf.h;
  float **bands = calloc((size_t)nb, sizeof *bands);
  const char **names = calloc((size_t)nb + 1, sizeof *names);
  const char **units = calloc((size_t)nb + 1, sizeof *units);
  char(*namebuf)[TALUS_STATE_NAME_MAX] = calloc((size_t)nb, sizeof *namebuf);
  talus_status st = (bands && names && units && namebuf)
                        ? TALUS_OK
                        : talus_fail(TALUS_ERR_NOMEM, "state", "no memory for state bands");
  for (int b = 0; b < nb && !st; b++) {
    bands[b] = malloc(n * sizeof(float));
    if (!bands[b]) st = talus_fail(TALUS_ERR_NOMEM, "state", "no memory for state bands");
  }
  if (!st) {
    talus_state_band_names(L, ex, namebuf, names);
    talus_state_band_units(L, ex, units);
    state_surface_band(t, geo, bands[0]);
    state_columns_band(t, bands[1]);
    for (int k = 0; k < L; k++)
      for (int f = 0; f < TALUS_STATE_FIELDS; f++)
        state_layer_band(t, f, k, bands[talus_state_band(k, f)]);
    for (int a = 0; t->acc && a < TALUS_ACC_PLANES; a++)
      state_acc_band(t, a, bands[talus_state_acc_band(L, a)]);
    for (int j = 0; t->fd && j < 4; j++)
      state_plane_band(t, t->fd + (size_t)j * t->plane, bands[talus_state_fdiag_band(L, ex, j)]);
    if (t->hard) state_plane_band(t, t->hard, bands[talus_state_hard_band(L, ex)]);
    if (t->grade_in) state_plane_band(t, t->grade_in, bands[talus_state_grade_band(L, ex)]);
    talus_state_meta md;
    st = talus_state_metadata(&md, t->nz, step, cell, NULL);
    talus_write_options o = wo ? *wo : (talus_write_options){0};
    o.units = units;
    if (!st)
      st = talus_geotiff_write(path, t->buf.w, t->buf.h, nb, (const float *const *)bands, names,
                               md.list, geo, &o);
    talus_state_metadata_free(&md);
  }
  for (int b = 0; bands && b < nb; b++)
    free(bands[b]);
  free(bands);
  free(names);
  free(units);
  free(namebuf);
  return st;
}

/* The header from the three metadata values; `bands` says whether the
 * bands the caller requires exist. */
static talus_status state_header(const char *layers, const char *step, const char *cell, int bands,
                                 talus_state_header *h) {
  if (!layers || !step || !cell || !bands)
    return talus_fail(TALUS_ERR_FORMAT, "state",
                      "incomplete talus state (metadata or bands missing)");
  h->layers = atoi(layers);
  h->step = atoll(step);
  h->cell = atof(cell);
  return TALUS_OK;
}

talus_status talus_state_header_bands(const talus_bands *b, talus_state_header *h) {
  h->surface = talus_bands_find(b, "surface");
  h->columns = talus_bands_find(b, "columns");
  h->bed0 = talus_bands_find(b, "layer0.bedrock");
  return state_header(talus_bands_meta(b, "TALUS_LAYERS"), talus_bands_meta(b, "TALUS_STEP"),
                      talus_bands_meta(b, "TALUS_CELL_SIZE"), h->bed0 >= 0 && h->surface >= 0, h);
}

talus_status talus_state_header_reader(const talus_bands_reader *r, talus_state_header *h) {
  h->surface = talus_bands_reader_find(r, "surface");
  h->columns = talus_bands_reader_find(r, "columns");
  h->bed0 = talus_bands_reader_find(r, "layer0.bedrock");
  return state_header(talus_bands_reader_meta(r, "TALUS_LAYERS"),
                      talus_bands_reader_meta(r, "TALUS_STEP"),
                      talus_bands_reader_meta(r, "TALUS_CELL_SIZE"),
                      h->surface >= 0 && h->columns >= 0 && h->bed0 >= 0, h);
}

int talus_state_nodata(const talus_georef *geo, float v) {
  return geo->has_nodata && (v == (float)geo->nodata || isnan(v));
}

/* Buffer index of cell (x, y) of global rectangle r in tile t. */
static size_t state_idx(const talus_tile *t, talus_rect r, int x, int y) {
  return talus_idx(t, r.x0 + x - t->buf.x0, r.y0 + y - t->buf.y0);
}

talus_status talus_state_set_counts(talus_tile *t, talus_rect r, const float *columns) {
  for (int y = 0; y < r.h; y++)
    for (int x = 0; x < r.w; x++) {
      size_t idx = state_idx(t, r, x, y);
      float c = columns[(size_t)y * r.w + x];
      if (t->mask[idx]) continue;
      if (!(c >= 1.0f && c <= (float)t->nz))
        return talus_fail(TALUS_ERR_FORMAT, "state", "column count %g at (%d, %d) outside [1, %d]",
                          (double)c, r.x0 + x, r.y0 + y, t->nz);
      t->count[idx] = (uint8_t)c;
    }
  return TALUS_OK;
}

void talus_state_set_layer(talus_tile *t, talus_rect r, int f, int k, const float *band) {
  float *pl = state_plane(t, f, k);
  for (int y = 0; y < r.h; y++)
    for (int x = 0; x < r.w; x++) {
      size_t idx = state_idx(t, r, x, y);
      if (k < t->count[idx]) pl[idx] = band[(size_t)y * r.w + x];
    }
}

/* The cells of r of a per-cell plane of t from band (r.w × r.h, row-major). */
static void state_set_plane(const talus_tile *t, talus_rect r, float *plane, const float *band) {
  for (int y = 0; y < r.h; y++)
    for (int x = 0; x < r.w; x++)
      plane[state_idx(t, r, x, y)] = band[(size_t)y * r.w + x];
}

void talus_state_set_fdiag(talus_tile *t, talus_rect r, int j, const float *band) {
  state_set_plane(t, r, t->fd + (size_t)j * t->plane, band);
}

void talus_state_set_acc(talus_tile *t, talus_rect r, int a, const float *band) {
  state_set_plane(t, r, t->acc + (size_t)a * t->plane, band);
}

void talus_state_set_hard(talus_tile *t, talus_rect r, const float *band) {
  state_set_plane(t, r, t->hard, band);
}

void talus_state_set_grade(talus_tile *t, talus_rect r, const float *band) {
  state_set_plane(t, r, t->grade_in, band);
}
