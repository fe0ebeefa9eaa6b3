/*
 * state.c — layered state <-> multi-band GeoTIFF (format in state.h).
 */
#include "state.h"

#include <gdal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_FIELDS 11
static const char *const state_field_names[STATE_FIELDS] = {
    "bedrock",   "sand",   "water",  "ceiling", "sediment", "damage",
    "stability", "flux_r", "flux_u", "flux_l",  "flux_d"};

/* Plane of field f (index in state_field_names) of layer k. */
static float *state_plane(const talus_tile *t, int f, int k) {
  float *planes[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
  if (f < 7) return planes[f] + (size_t)k * t->plane;
  return t->f + ((size_t)k * 4 + (size_t)(f - 7)) * t->plane;
}

int app_state_probe(const char *path) {
  GDALAllRegister();
  CPLPushErrorHandler(CPLQuietErrorHandler);
  GDALDatasetH ds = GDALOpen(path, GA_ReadOnly);
  CPLPopErrorHandler();
  if (!ds) return 0;
  const char *v = GDALGetMetadataItem(ds, "TALUS_STATE", NULL);
  int yes = v && !strcmp(v, "1");
  GDALClose(ds);
  return yes;
}

static int state_max_count(const talus_tile *t) {
  int L = 1;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (t->count[idx] > L) L = t->count[idx];
    }
  return L;
}

/* Fills band b (nx*ny) from plane field f of layer k, NaN where absent. */
static void state_band_from_layer(const talus_tile *t, int f, int k, float *band) {
  const float *pl = state_plane(t, f, k);
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      band[(size_t)y * t->buf.w + x] = k < t->count[idx] ? pl[idx] : NAN;
    }
}

static void state_surface_band(const talus_domain *d, const talus_georef *geo, float *band) {
  const talus_tile *t = d->tile;
  talus_domain_read(d, TALUS_FIELD_SURFACE, 0, band);
  if (!geo || !geo->has_nodata) return;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      if (t->mask[talus_idx(t, x, y)]) band[(size_t)y * t->buf.w + x] = (float)geo->nodata;
}

talus_status app_state_write(const char *path, const talus_domain *d, const talus_georef *geo,
                             const talus_write_options *wo) {
  const talus_tile *t = d->tile;
  int L = state_max_count(t), nb = 2 + L * STATE_FIELDS;
  size_t n = (size_t)t->buf.w * t->buf.h;
  float **bands = calloc((size_t)nb, sizeof *bands);
  char **names = calloc((size_t)nb + 1, sizeof *names);
  char *namebuf = calloc((size_t)nb, 32);
  talus_status st = (bands && names && namebuf)
                        ? TALUS_OK
                        : talus_fail(TALUS_ERR_NOMEM, "state", "no memory for state bands");
  for (int b = 0; b < nb && !st; b++) {
    bands[b] = malloc(n * sizeof(float));
    if (!bands[b]) st = talus_fail(TALUS_ERR_NOMEM, "state", "no memory for state bands");
  }
  if (!st) {
    names[0] = "surface";
    names[1] = "columns";
    state_surface_band(d, geo, bands[0]);
    talus_domain_read(d, TALUS_FIELD_COLUMNS, 0, bands[1]);
    for (int k = 0; k < L; k++)
      for (int f = 0; f < STATE_FIELDS; f++) {
        int b = 2 + k * STATE_FIELDS + f;
        names[b] = namebuf + (size_t)b * 32;
        snprintf(names[b], 32, "layer%d.%s", k, state_field_names[f]);
        state_band_from_layer(t, f, k, bands[b]);
      }
    char md[5][64];
    snprintf(md[0], 64, "TALUS_STATE=1");
    snprintf(md[1], 64, "TALUS_STATE_VERSION=1");
    snprintf(md[2], 64, "TALUS_LAYERS=%d", t->nz);
    snprintf(md[3], 64, "TALUS_STEP=%lld", (long long)d->ctx.step);
    snprintf(md[4], 64, "TALUS_CELL_SIZE=%.17g", (double)d->ctx.P.cell_size);
    const char *meta[] = {md[0], md[1], md[2], md[3], md[4], NULL};
    st = talus_geotiff_write(path, t->buf.w, t->buf.h, nb, (const float *const *)bands,
                             (const char *const *)names, meta, geo, wo);
  }
  for (int b = 0; bands && b < nb; b++)
    free(bands[b]);
  free(bands);
  free(names);
  free(namebuf);
  return st;
}

/* Copies every stored layer field into the domain's tile. */
static talus_status state_fill_layers(const talus_bands *b, talus_domain *d) {
  talus_tile *t = d->tile;
  char name[32];
  for (int k = 0; k < t->nz; k++)
    for (int f = 0; f < STATE_FIELDS; f++) {
      snprintf(name, sizeof name, "layer%d.%s", k, state_field_names[f]);
      int bi = talus_bands_find(b, name);
      if (bi < 0) continue; /* layers above the highest count are not stored */
      float *pl = state_plane(t, f, k);
      for (int y = 0; y < t->buf.h; y++)
        for (int x = 0; x < t->buf.w; x++) {
          size_t idx = talus_idx(t, x, y);
          if (k < t->count[idx]) pl[idx] = b->band[bi][(size_t)y * b->nx + x];
        }
    }
  return TALUS_OK;
}

/* Column counts and the NoData mask from bands "columns" and "surface". */
static talus_status state_fill_counts(const talus_bands *b, talus_domain *d) {
  talus_tile *t = d->tile;
  int ci = talus_bands_find(b, "columns");
  if (ci < 0) return talus_fail(TALUS_ERR_FORMAT, "state", "state has no 'columns' band");
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y), i = (size_t)y * b->nx + x;
      float c = b->band[ci][i];
      if (t->mask[idx]) continue;
      if (!(c >= 1.0f && c <= (float)t->nz))
        return talus_fail(TALUS_ERR_FORMAT, "state", "column count %g at (%d, %d) outside [1, %d]",
                          (double)c, x, y, t->nz);
      t->count[idx] = (uint8_t)c;
    }
  return TALUS_OK;
}

talus_status app_state_load(const talus_bands *b, const talus_params *params, talus_domain **out) {
  *out = NULL;
  const char *layers = talus_bands_meta(b, "TALUS_LAYERS"),
             *step = talus_bands_meta(b, "TALUS_STEP");
  const char *cell = talus_bands_meta(b, "TALUS_CELL_SIZE");
  int bi = talus_bands_find(b, "layer0.bedrock"), si = talus_bands_find(b, "surface");
  if (!layers || !step || !cell || bi < 0 || si < 0)
    return talus_fail(TALUS_ERR_FORMAT, "state",
                      "incomplete talus state (metadata or bands missing)");
  talus_params *p = NULL;
  talus_status st = talus_params_copy(params, &p);
  char nz[32];
  snprintf(nz, sizeof nz, "%d", atoi(layers));
  if (!st) st = talus_params_set(p, "simulation.layers", nz);
  size_t n = (size_t)b->nx * b->ny;
  uint8_t *mask = calloc(n, 1);
  if (!st && !mask) st = talus_fail(TALUS_ERR_NOMEM, "state", "no memory for the mask");
  for (size_t i = 0; !st && i < n; i++)
    mask[i] =
        b->geo.has_nodata && (b->band[si][i] == (float)b->geo.nodata || isnan(b->band[si][i]));
  talus_domain *d = NULL;
  if (!st) st = talus_domain_create(&d, b->nx, b->ny, atof(cell), b->band[bi], mask, p);
  if (!st) st = state_fill_counts(b, d);
  if (!st) st = state_fill_layers(b, d);
  if (!st) d->ctx.step = atoll(step);
  free(mask);
  talus_params_free(p);
  if (st) {
    talus_domain_free(d);
    return st;
  }
  *out = d;
  return TALUS_OK;
}
