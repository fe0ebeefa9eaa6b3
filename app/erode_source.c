/*
 * erode_source.c — the initial state of a tiled `talus erode` run, read
 * window by window through GDAL: a DEM (band 1 = height) or a talus state.
 * A window filled here holds, cell for cell, what talus_domain_create (DEM)
 * or a state's load (erode.c, with io/state.h) put in a monolithic domain before its first
 * step: NoData cells get bedrock 0, hardness the configured constant, and
 * the heightfield model folds sand into bedrock. Hence tiled == monolithic
 * from the first step on.
 */
#include "erode_tiled.h"
#include "io/state.h"
#include "tiler/plan.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static talus_status source_scratch(erode_source *s, size_t cells) {
  if (cells <= s->cells) return TALUS_OK;
  talus_free(s->v);
  talus_free(s->nd);
  s->v = NULL, s->nd = NULL, s->cells = 0;
  talus_status st = talus_alloc((void **)&s->v, cells * sizeof(float), "input window");
  if (!st) st = talus_alloc((void **)&s->nd, cells, "input window mask");
  if (!st) s->cells = cells;
  return st;
}

/* Opens a DEM: geometry from the reader, physics from p. */
static talus_status source_open_dem(erode_source *s, const char *path, const talus_params *p) {
  talus_dem_options dopt = {0};
  double v = 0;
  talus_params_get(p, "input.nodata", &v);
  dopt.nodata_policy = (int)v;
  talus_params_get(p, "input.cell_size", &dopt.cell_size);
  dopt.z_scale = 1.0;
  talus_params_get(p, "input.z_scale", &dopt.z_scale);
  dopt.max_cells = TALUS_PLAN_MAX_CELLS; /* erode_use_tiles refused larger maps */
  talus_status st = talus_dem_reader_open(path, &dopt, &s->dem);
  if (st) return st;
  s->nx = talus_dem_reader_nx(s->dem);
  s->ny = talus_dem_reader_ny(s->dem);
  s->cell = talus_dem_reader_cell_size(s->dem);
  return talus_georef_copy(&s->geo, talus_dem_reader_georef(s->dem));
}

/* Opens a talus state: geometry, layers and step from its metadata. */
static talus_status source_open_state(erode_source *s, const char *path, talus_params *p) {
  talus_status st = talus_bands_reader_open(path, &s->bands);
  if (st) return st;
  talus_state_header h;
  st = talus_state_header_reader(s->bands, &h);
  if (st) return st;
  s->surface = h.surface;
  s->columns = h.columns;
  char nz[32];
  snprintf(nz, sizeof nz, "%d", h.layers);
  st = talus_params_set(p, "simulation.layers", nz);
  s->nx = talus_bands_reader_nx(s->bands);
  s->ny = talus_bands_reader_ny(s->bands);
  s->cell = h.cell;
  s->step = h.step;
  talus_state_layer_bands(s->bands, s->band);
  for (int a = 0; a < TALUS_ACC_PLANES; a++)
    s->acc[a] = talus_bands_reader_find(s->bands, talus_state_acc_name(a));
  for (int j = 0; j < 4; j++)
    s->fd[j] = talus_bands_reader_find(s->bands, talus_state_fdiag_name(j));
  s->hard = talus_bands_reader_find(s->bands, TALUS_STATE_HARD_NAME);
  s->grade = talus_bands_reader_find(s->bands, TALUS_STATE_GRADE_NAME);
  /* a state that holds accumulators keeps summing them */
  if (!st && s->acc[0] >= 0) st = talus_params_set(p, "simulation.masks", "1");
  return st ? st : talus_georef_copy(&s->geo, talus_bands_reader_georef(s->bands));
}

/* Droplets whose load is deleted at the end of their life (booked as
 * pt_lost, not laid down): on a DEM that loss also let pits deepen batch
 * after batch (configs/particles.ini's notes). */
static void erode_warn_droplet_loss(const talus_kparams *P) {
  if (P->pt_enable && !P->pt_deposit_at_death)
    talus_warn("particles.deposit_at_death = false: the load a droplet still carries when its "
               "life ends is deleted (booked as pt_lost), so matter is not conserved, and with "
               "nothing laid down pits can deepen without bound");
}

/* Batches denser than 2^-6 droplets a cell: the droplets of one batch
 * do not see each other's changes (each sees the batch's start and its
 * own), so where many start near one spot each caps its cut at its own
 * -dh and together they dig many times it. In test_particles' valley at
 * 2^-4 and twice the default capacity the pits ran away to -56 km within
 * 250 batches; at 2^-8 four times the capacity stayed stable for 3200. */
static void erode_warn_dense_batches(const talus_kparams *P) {
  if (P->pt_enable && P->pt_density_log2 < 6)
    talus_warn("particles.density_log2 = %d: 2^-%d droplets a cell in one batch, whose droplets "
               "do not see each other's changes; batches this dense overshoot (pits can run away "
               "where many droplets meet). Keep 6 or more and run more batches instead",
               P->pt_density_log2, P->pt_density_log2);
}

talus_status erode_check_params(const talus_kparams *P) {
  erode_warn_droplet_loss(P);
  erode_warn_dense_batches(P);
  if (P->pt_enable && pt_units_capped(P))
    talus_warn("particles.path_length = %g m and brush_radius = %g m are capped at %d moves and a "
               "%d-cell brush on %g m cells (the stage radius' bounds): droplets are shorter and "
               "narrower than set; lower them for this grid",
               (double)P->pt_path_length, (double)P->pt_brush_length, P->pt_max_moves,
               P->pt_brush_radius, (double)P->cell_size);
  double limit = talus_kparams_dt_limit(P), dt = P->dt;
  if (P->model == TALUS_MODEL_HEIGHTFIELD && !P->hf_hydraulic) return TALUS_OK; /* no water */
  if (dt > ERODE_DT_REFUSE * limit)
    return talus_fail(TALUS_ERR_RANGE, "params",
                      "simulation.dt = %g s is %.1fx the stable limit %.3g s of %g m cells "
                      "(cell_size / sqrt(2 g L), L = water.reference_cell or the cell): water "
                      "would be noise; use dt <= %.3g",
                      dt, dt / limit, limit, (double)P->cell_size, limit);
  if (dt > limit)
    talus_warn("simulation.dt = %g s exceeds the stable limit %.3g s of %g m cells "
               "(cell_size / sqrt(2 g L), L = water.reference_cell or the cell): water may "
               "slosh in checkerboards; use dt <= %.3g",
               dt, limit, (double)P->cell_size, limit);
  return TALUS_OK;
}

talus_status erode_source_open(erode_source **out, const char *path, const talus_params *params) {
  *out = NULL;
  erode_source *s = calloc(1, sizeof *s);
  if (!s) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for the input");
  talus_status st = talus_params_copy(params, &s->params);
  if (!st && talus_state_probe(path))
    st = source_open_state(s, path, s->params);
  else if (!st)
    st = source_open_dem(s, path, s->params);
  memset(&s->ctx, 0, sizeof s->ctx);
  if (!st) st = talus_params_to_kparams(s->params, s->cell, &s->ctx.P);
  s->ctx.nx = s->nx, s->ctx.ny = s->ny, s->ctx.step = s->step;
  if (st) {
    erode_source_close(s);
    return st;
  }
  *out = s;
  return TALUS_OK;
}

void erode_source_close(erode_source *s) {
  if (!s) return;
  talus_dem_reader_close(s->dem);
  talus_bands_reader_close(s->bands);
  talus_georef_free(&s->geo);
  talus_params_free(s->params);
  talus_free(s->v);
  talus_free(s->nd);
  talus_free(s->rv);
  free(s);
}

/* Cell (x, y) of window r in tile t. */
static size_t source_idx(const talus_tile *t, talus_rect r, int x, int y) {
  return talus_idx(t, r.x0 + x - t->buf.x0, r.y0 + y - t->buf.y0);
}

static talus_status source_fill_dem(erode_source *s, talus_tile *t, talus_rect r) {
  talus_status st = talus_dem_reader_read(s->dem, r.x0, r.y0, r.w, r.h, s->v, s->nd);
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++) {
      size_t i = (size_t)y * r.w + x, idx = source_idx(t, r, x, y);
      t->mask[idx] = s->nd[i];
      t->B[idx] = s->nd[i] ? 0.0f : s->v[i];
    }
  return st;
}

/* Column counts and the NoData mask from bands "columns" and "surface". */
static talus_status source_state_counts(erode_source *s, talus_tile *t, talus_rect r) {
  talus_status st = talus_bands_reader_read(s->bands, s->surface, r.x0, r.y0, r.w, r.h, s->v);
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++)
      t->mask[source_idx(t, r, x, y)] =
          (uint8_t)talus_state_nodata(&s->geo, s->v[(size_t)y * r.w + x]);
  if (!st) st = talus_bands_reader_read(s->bands, s->columns, r.x0, r.y0, r.w, r.h, s->v);
  return st ? st : talus_state_set_counts(t, r, s->v);
}

static talus_status source_fill_state(erode_source *s, talus_tile *t, talus_rect r) {
  talus_status st = source_state_counts(s, t, r);
  for (int k = 0; k < t->nz && !st; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS && !st; f++) {
      if (s->band[k][f] < 0) continue; /* layers above the highest count are not stored */
      st = talus_bands_reader_read(s->bands, s->band[k][f], r.x0, r.y0, r.w, r.h, s->v);
      if (!st) talus_state_set_layer(t, r, f, k, s->v);
    }
  for (int a = 0; t->acc && a < TALUS_ACC_PLANES && !st; a++) {
    if (s->acc[a] < 0) continue;
    st = talus_bands_reader_read(s->bands, s->acc[a], r.x0, r.y0, r.w, r.h, s->v);
    if (!st) talus_state_set_acc(t, r, a, s->v);
  }
  for (int j = 0; t->fd && j < 4 && !st; j++) { /* heightfield.neighbours = 8 */
    if (s->fd[j] < 0) continue;
    st = talus_bands_reader_read(s->bands, s->fd[j], r.x0, r.y0, r.w, r.h, s->v);
    if (!st) talus_state_set_fdiag(t, r, j, s->v);
  }
  if (t->hard && s->hard >= 0 && !st) {
    st = talus_bands_reader_read(s->bands, s->hard, r.x0, r.y0, r.w, r.h, s->v);
    if (!st) talus_state_set_hard(t, r, s->v);
  }
  return st;
}

/* A per-cell input map (--hardness, --rain-map): what its values are and
 * the range they must lie in, as talus_domain_set_field checks them. */
typedef struct source_map {
  const char *what, *range;
  float lo, hi;
} source_map;
static const source_map map_hardness = {"hardness", "[0, 1]", 0.0f, 1.0f};
static const source_map map_rain = {"rain rate", "[0, inf]", 0.0f, FLT_MAX}; /* finite */

/* The values of map m at `path` over window r (r.w × r.h, row-major) into
 * out, as the one-piece run reads them (talus_raster_read_resampled),
 * refusing one outside m's range by its grid cell. */
static talus_status source_map_window(const erode_source *s, const source_map *m, const char *path,
                                      talus_rect r, float *out, int *warped) {
  talus_status st = talus_raster_read_resampled_window(path, s->nx, s->ny, &s->geo, r.x0, r.y0, r.w,
                                                       r.h, out, warped);
  for (size_t i = 0; !st && i < (size_t)r.w * (size_t)r.h; i++)
    if (!(out[i] >= m->lo && out[i] <= m->hi))
      st = talus_fail(TALUS_ERR_DATA, "domain", "%s %g at (%d, %d) outside %s", m->what,
                      (double)out[i], r.x0 + (int)(i % (size_t)r.w), r.y0 + (int)(i / (size_t)r.w),
                      m->range);
  if (st) talus_fail_context(st, "%s", path);
  return st;
}

/* Checks the whole of map m at `path` (coverage, values) block row by
 * block row before the first tile is built, so a bad map is refused with
 * nothing written; says when it is stretched rather than warped. */
static talus_status source_map_check(erode_source *s, const source_map *m, const char *path,
                                     int quiet) {
  int rows = 256, warped = 0;
  talus_status st = source_scratch(s, (size_t)rows * (size_t)s->nx);
  for (int y0 = 0; !st && y0 < s->ny; y0 += rows) {
    talus_rect r = {0, y0, s->nx, s->ny - y0 < rows ? s->ny - y0 : rows};
    st = source_map_window(s, m, path, r, s->v, &warped);
  }
  if (!st && !warped && !quiet)
    talus_info("%s: the map or the terrain has no georeferencing; stretched over the terrain",
               path);
  return st;
}

talus_status erode_source_hardness(erode_source *s, const char *path, int quiet) {
  const talus_kparams *P = &s->ctx.P;
  if (P->model != TALUS_MODEL_HEIGHTFIELD && !P->enable_thermal)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain",
                      "a hardness map needs the heightfield model or thermal.enable");
  s->hardness = path;
  return source_map_check(s, &map_hardness, path, quiet);
}

/* Grows the rain window scratch to `cells` cells (apart from s->v: the
 * tiler asks for a tile's rain after its fill). */
static talus_status source_rain_scratch(erode_source *s, size_t cells) {
  if (cells <= s->rcells) return TALUS_OK;
  talus_free(s->rv);
  s->rv = NULL, s->rcells = 0;
  talus_status st = talus_alloc((void **)&s->rv, cells * sizeof(float), "rain map window");
  if (!st) s->rcells = cells;
  return st;
}

talus_status erode_source_rain(erode_source *s, const char *path, int quiet) {
  if (s->ctx.P.model != TALUS_MODEL_HEIGHTFIELD)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "a rain map needs the heightfield model");
  s->rain = path;
  return source_map_check(s, &map_rain, path, quiet);
}

/* The heights of window w (a DEM's, or a state's surface) into v with
 * their NoData flags in nd, w.w × w.h row-major. */
static talus_status source_heights(const erode_source *s, talus_rect w, float *v, uint8_t *nd) {
  if (s->dem) return talus_dem_reader_read(s->dem, w.x0, w.y0, w.w, w.h, v, nd);
  talus_status st = talus_bands_reader_read(s->bands, s->surface, w.x0, w.y0, w.w, w.h, v);
  for (size_t i = 0; !st && i < (size_t)w.w * (size_t)w.h; i++)
    nd[i] = (uint8_t)talus_state_nodata(&s->geo, v[i]);
  return st;
}

/* The input drop of r from a state that keeps it (band s->grade): the
 * run's first input's. */
static talus_status source_grade_band(const erode_source *s, talus_tile *t, talus_rect r) {
  float *v = NULL;
  talus_status st =
      talus_alloc((void **)&v, (size_t)r.w * (size_t)r.h * sizeof(float), "input drop window");
  if (!st) st = talus_bands_reader_read(s->bands, s->grade, r.x0, r.y0, r.w, r.h, v);
  if (!st) st = talus_tile_ensure(t, (void **)&t->grade_in, sizeof(float), "input drop");
  if (!st) talus_state_set_grade(t, r, v);
  talus_free(v);
  return st;
}

talus_status erode_source_grade(erode_source *s, talus_tile *t, talus_rect r) {
  if (s->bands && s->grade >= 0) return source_grade_band(s, t, r);
  const talus_kparams *P = &s->ctx.P;
  talus_rect w = {r.x0 - 1, r.y0 - 1, r.w + 2, r.h + 2};
  w = talus_rect_intersect(w, (talus_rect){0, 0, s->nx, s->ny});
  size_t n = (size_t)w.w * (size_t)w.h;
  float *v = NULL;
  uint8_t *nd = NULL;
  talus_status st = talus_alloc((void **)&v, n * sizeof(float), "input drop window");
  if (!st) st = talus_alloc((void **)&nd, n, "input drop window mask");
  if (!st) st = source_heights(s, w, v, nd);
  if (!st) st = talus_grade_drop(v, nd, (size_t)w.w, w, r, P->hf_diagonal, P->hf_grade_noise, t);
  talus_free(v);
  talus_free(nd);
  return st;
}

talus_status erode_source_inputs(void *user, talus_tile *t, talus_rect r) {
  erode_source *s = user;
  talus_status st = talus_hf_grade_in(&s->ctx.P) ? erode_source_grade(s, t, r) : TALUS_OK;
  if (st || !s->rain) return st;
  st = talus_tile_ensure(t, (void **)&t->rain, sizeof(float), "rain map");
  if (!st) st = source_rain_scratch(s, (size_t)r.w * r.h);
  if (!st) st = source_map_window(s, &map_rain, s->rain, r, s->rv, NULL);
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++)
      t->rain[source_idx(t, r, x, y)] = s->rv[(size_t)y * r.w + x];
  return st;
}

/* What a domain does before its first step: hardness where a stage reads
 * it and the input holds none (the configured constant, or --hardness's
 * window), and the heightfield model's fold of layer-0 sand into bedrock. */
static talus_status source_start(const erode_source *s, talus_tile *t, talus_rect r) {
  const talus_kparams *P = &s->ctx.P;
  int fill_hard = t->hard && !(s->bands && s->hard >= 0);
  talus_status st = fill_hard && s->hardness
                        ? source_map_window(s, &map_hardness, s->hardness, r, s->v, NULL)
                        : TALUS_OK;
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++) {
      size_t idx = source_idx(t, r, x, y);
      if (fill_hard) t->hard[idx] = s->hardness ? s->v[(size_t)y * r.w + x] : P->hardness;
      if (P->model == TALUS_MODEL_HEIGHTFIELD && t->s[idx] != 0.0f) {
        t->B[idx] += t->s[idx];
        t->s[idx] = 0.0f;
      }
    }
  return st;
}

talus_status erode_source_fill(void *user, talus_tile *t, talus_rect r) {
  erode_source *s = user;
  talus_status st = source_scratch(s, (size_t)r.w * r.h);
  if (!st) st = s->dem ? source_fill_dem(s, t, r) : source_fill_state(s, t, r);
  if (!st) st = source_start(s, t, r);
  return st;
}
