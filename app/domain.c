/*
 * domain.c — the domain API of include/talus.h: create from a heightmap,
 * load layered fields, run, read back, and the mass ledger summary.
 *
 * Invariant: after every completed step the ledger closes, i.e. for each
 * material current − initial == Σ recorded inflows − Σ recorded outflows up
 * to float rounding; talus_domain_ledger reports the residual.
 */
#include "domain.h"

#include "mpi/ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static talus_status domain_check_args(int nx, int ny, double cell_size, const float *bedrock) {
  if (nx <= 0 || ny <= 0)
    return talus_fail(TALUS_ERR_DATA, "domain", "grid %d x %d is empty", nx, ny);
  if ((int64_t)nx * ny > ((int64_t)1 << 31))
    return talus_fail(TALUS_ERR_DATA, "domain", "grid %d x %d is too large for one tile", nx, ny);
  if (!(cell_size > 0.0) || !isfinite(cell_size))
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "cell size %g must be positive", cell_size);
  if (!bedrock) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "no heightmap given");
  return TALUS_OK;
}

/* Copies the heightmap into layer 0 and the mask; rejects non-finite
 * heights (the first in row-major order is named). Rows are written by the
 * threads that will step them (TALUS_TILE_PARALLEL_CELLS). */
static talus_status domain_load_heights(talus_domain *d, const float *bedrock,
                                        const uint8_t *mask) {
  talus_tile *t = d->tile;
  int nx = t->buf.w, ny = t->buf.h;
  int64_t bad = INT64_MAX;
#pragma omp parallel for schedule(static)                                                          \
    reduction(min                                                                                  \
              : bad) if (t->plane >= TALUS_TILE_PARALLEL_CELLS)
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      size_t i = (size_t)y * nx + x, idx = talus_idx(t, x, y);
      int masked = mask && mask[i];
      if (!masked && !isfinite(bedrock[i]) && (int64_t)i < bad) bad = (int64_t)i;
      t->mask[idx] = (uint8_t)masked;
      t->B[idx] = masked ? 0.0f : bedrock[i];
    }
  if (bad != INT64_MAX)
    return talus_fail(TALUS_ERR_DATA, "domain", "height at cell (%d, %d) is not a finite number",
                      (int)(bad % nx), (int)(bad / nx));
  return TALUS_OK;
}

/* Parameters for a domain of cell_size metres: p's physics, derived. */
static talus_status domain_params(talus_domain *d, double cell_size, const talus_params *p) {
  d->cell_area = cell_size * cell_size;
  if (p) return talus_params_to_kparams(p, cell_size, &d->ctx.P);
  talus_kparams_defaults(&d->ctx.P);
  d->ctx.P.cell_size = (float)cell_size;
  return talus_kparams_derive(&d->ctx.P);
}

/* Fills the hardness plane (allocating it if the tile lacks one) with the
 * configured constant, for the models that read it: the heightfield model
 * always, the layered model when thermal erosion is on. A raster given
 * later (TALUS_FIELD_HARDNESS) overwrites it. */
static talus_status domain_init_hardness(talus_domain *d) {
  talus_tile *t = d->tile;
  const talus_kparams *P = &d->ctx.P;
  if (P->model != TALUS_MODEL_HEIGHTFIELD && !P->enable_thermal) return TALUS_OK;
  if (t->hard) return TALUS_OK;
  talus_status st = talus_tile_ensure(t, (void **)&t->hard, sizeof(float), "hardness");
  if (st) return st;
  float h = P->hardness;
  size_t pitch = (size_t)t->pitch;
  int rows = (int)(t->plane / pitch);
#pragma omp parallel for schedule(static) if (t->plane >= TALUS_TILE_PARALLEL_CELLS)
  for (int y = 0; y < rows; y++)
    for (size_t i = (size_t)y * pitch; i < (size_t)(y + 1) * pitch; i++)
      t->hard[i] = h;
  return TALUS_OK;
}

/* Allocates the diagonal fluxes (zeroed) of heightfield.neighbours = 8
 * when the tile lacks them. */
static talus_status domain_init_fdiag(talus_domain *d) {
  talus_tile *t = d->tile;
  if (!talus_hf_diagonal(&d->ctx.P) || t->fd) return TALUS_OK;
  return talus_tile_ensure(t, (void **)&t->fd, 4 * sizeof(float), "diagonal fluxes");
}

/* Allocates the accumulators (zeroed) when the run sums them
 * (simulation.masks) and the tile lacks them. */
static talus_status domain_init_acc(talus_domain *d) {
  talus_tile *t = d->tile;
  if (!d->ctx.P.accumulate || t->acc) return TALUS_OK;
  return talus_tile_ensure(t, (void **)&t->acc, TALUS_ACC_PLANES * sizeof(float), "accumulators");
}

talus_status talus_domain_create(talus_domain **out, int nx, int ny, double cell_size,
                                 const float *bedrock, const uint8_t *nodata_mask,
                                 const talus_params *params) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "no output pointer");
  *out = NULL;
  talus_status st = domain_check_args(nx, ny, cell_size, bedrock);
  if (st) return st;
  talus_domain *d = calloc(1, sizeof *d);
  if (!d) return talus_fail(TALUS_ERR_NOMEM, "domain", "no memory for a domain");
  d->ctx.nx = nx;
  d->ctx.ny = ny;
  st = domain_params(d, cell_size, params);
  if (!st) st = talus_tile_create(&d->tile, (talus_rect){0, 0, nx, ny}, d->ctx.P.nz, 0);
  if (!st) st = domain_init_hardness(d);
  if (!st) st = domain_init_acc(d);
  if (!st) st = domain_init_fdiag(d);
  if (!st) st = domain_load_heights(d, bedrock, nodata_mask);
  if (st) {
    talus_domain_free(d);
    return st;
  }
  *out = d;
  return TALUS_OK;
}

talus_status talus_domain_wrap(talus_tile *tile, double cell_size, const talus_params *p,
                               talus_domain **out) {
  *out = NULL;
  talus_domain *d = calloc(1, sizeof *d);
  if (!d) {
    talus_tile_free(tile);
    return talus_fail(TALUS_ERR_NOMEM, "domain", "no memory for a domain");
  }
  d->tile = tile;
  d->ctx.nx = tile->buf.w;
  d->ctx.ny = tile->buf.h;
  talus_status st = domain_params(d, cell_size, p);
  if (!st) d->ctx.P.nz = tile->nz;
  if (!st) st = domain_init_hardness(d);
  if (!st) st = domain_init_acc(d);
  if (!st) st = domain_init_fdiag(d);
  if (st) {
    talus_domain_free(d);
    return st;
  }
  *out = d;
  return TALUS_OK;
}

/* Returns the per-layer plane of a settable field, or NULL. */
static float *domain_layer_field(talus_tile *t, talus_field field) {
  switch (field) {
  case TALUS_FIELD_BEDROCK:
    return t->B;
  case TALUS_FIELD_CEILING:
    return t->C;
  case TALUS_FIELD_LAYER_SAND:
    return t->s;
  case TALUS_FIELD_LAYER_WATER:
    return t->w;
  case TALUS_FIELD_LAYER_SEDIMENT:
    return t->r;
  case TALUS_FIELD_LAYER_DAMAGE:
    return t->D;
  case TALUS_FIELD_LAYER_STABILITY:
    return t->p;
  default:
    return NULL;
  }
}

/* Sets the per-cell input plane of HARDNESS (values in [0,1]) or RAIN
 * (finite, >= 0 m/s; the plane is allocated on first use). */
static talus_status domain_set_input(talus_domain *d, talus_field field, const float *values) {
  talus_tile *t = d->tile;
  int rain = field == TALUS_FIELD_RAIN;
  if (!rain && !t->hard)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain",
                      "a hardness map needs the heightfield model or thermal.enable");
  if (rain && d->ctx.P.model != TALUS_MODEL_HEIGHTFIELD)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "a rain map needs the heightfield model");
  talus_status st =
      rain ? talus_tile_ensure(t, (void **)&t->rain, sizeof(float), "rain map") : TALUS_OK;
  float hi = rain ? INFINITY : 1.0f;
  for (int y = 0; !st && y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      float v = values[(size_t)y * t->buf.w + x];
      if (!(v >= 0.0f && v <= hi && isfinite(v)))
        return talus_fail(TALUS_ERR_DATA, "domain", "%s %g at (%d, %d) outside [0, %s]",
                          rain ? "rain rate" : "hardness", (double)v, x, y, rain ? "inf" : "1");
      (rain ? t->rain : t->hard)[talus_idx(t, x, y)] = v;
    }
  return st;
}

talus_status talus_domain_set_field(talus_domain *d, talus_field field, int layer,
                                    const float *values) {
  if (!d || !values) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "no domain or values");
  if (d->started)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "fields can only be set before a run");
  talus_tile *t = d->tile;
  int nx = t->buf.w, ny = t->buf.h;
  if (field == TALUS_FIELD_HARDNESS || field == TALUS_FIELD_RAIN)
    return domain_set_input(d, field, values);
  if (field == TALUS_FIELD_COLUMNS) {
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        float v = values[(size_t)y * nx + x];
        size_t idx = talus_idx(t, x, y);
        if (!(v >= 1.0f && v <= (float)t->nz)) {
          return talus_fail(TALUS_ERR_DATA, "domain", "column count %g at (%d, %d) outside [1, %d]",
                            (double)v, x, y, t->nz);
        } else {
          t->count[idx] = (uint8_t)v;
        }
      }
    return TALUS_OK;
  }
  float *plane = domain_layer_field(t, field);
  if (!plane || layer < 0 || layer >= t->nz)
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "field %d layer %d cannot be set", (int)field,
                      layer);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      plane[talus_col(t, talus_idx(t, x, y), layer)] = values[(size_t)y * nx + x];
  return TALUS_OK;
}

/* The bedrock datum: the lowest bedrock top of a live cell, so that bedrock
 * volume means "material above the lowest point of the initial terrain". */
static double domain_datum(const talus_tile *t) {
  double lo = INFINITY;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (!t->mask[idx] && t->B[idx] < lo) lo = t->B[idx];
    }
  return isfinite(lo) ? lo : 0.0;
}

void talus_domain_volumes(const talus_domain *d, double out[TALUS_MAT_COUNT]) {
  const talus_tile *t = d->tile;
  double v[TALUS_MAT_COUNT] = {0};
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (t->mask[idx]) continue;
      for (int k = 0; k < t->count[idx]; k++) {
        size_t c = talus_col(t, idx, k);
        double floor = k == 0 ? d->datum : (double)t->C[c - t->plane];
        v[TALUS_MAT_WATER] += t->w[c];
        v[TALUS_MAT_SEDIMENT] += t->r[c];
        v[TALUS_MAT_SAND] += t->s[c];
        v[TALUS_MAT_BEDROCK] += (double)t->B[c] - floor;
      }
    }
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    out[m] = v[m] * d->cell_area;
}

/* The heightfield model's terrain is the whole surface B + s of layer 0:
 * sand a state or scene brought along is folded into it before the first
 * run (the model has no sand; volumes are taken after the fold). */
static void domain_fold_sand(talus_tile *t) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      if (t->s[idx] == 0.0f) continue;
      t->B[idx] += t->s[idx];
      t->s[idx] = 0.0f;
    }
}

/* The input's drop heightfield.grade_share reads (t->grade_in), from
 * the terrain after the fold, unless a state brought it along. */
static talus_status domain_init_grade_in(talus_domain *d) {
  talus_tile *t = d->tile;
  const talus_kparams *P = &d->ctx.P;
  if (!talus_hf_grade_in(P) || t->grade_in) return TALUS_OK;
  return talus_grade_drop(t->B, t->mask, (size_t)t->pitch, t->buf, t->buf, P->hf_diagonal,
                          P->hf_grade_noise, t);
}

static talus_status domain_start(talus_domain *d) {
  if (d->started) return TALUS_OK;
  if (d->ctx.P.model == TALUS_MODEL_HEIGHTFIELD) domain_fold_sand(d->tile);
  talus_status st = domain_init_grade_in(d);
  if (st) return st;
  d->datum = domain_datum(d->tile);
  talus_domain_volumes(d, d->initial);
  d->started = 1;
  return TALUS_OK;
}

typedef struct run_progress {
  talus_progress_fn fn;
  void *user;
} run_progress;

static int domain_step_progress(int64_t done, int64_t total, void *user) {
  run_progress *rp = user;
  return rp->fn ? rp->fn((double)done / (double)total, NULL, rp->user) : 1;
}

talus_status talus_domain_run(talus_domain *d, int64_t steps, talus_progress_fn progress,
                              void *user) {
  if (!d || steps < 0) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "bad run request");
  talus_status st = domain_start(d);
  if (st) return st;
  run_progress rp = {progress, user};
  double t0 = talus_now();
  st = talus_tiler_advance(d->tile, &d->ctx, d->tile->buf, steps, &d->stats, domain_step_progress,
                           &rp);
  d->run_seconds += talus_now() - t0;
  return st;
}

/* Value of a whole-cell field at buffer index idx. */
static float domain_cell_value(const talus_tile *t, talus_field field, size_t idx) {
  int top = t->count[idx] - 1;
  size_t ct = talus_col(t, idx, top);
  float acc = 0.0f;
  switch (field) {
  case TALUS_FIELD_SURFACE:
    return t->B[ct] + t->s[ct];
  case TALUS_FIELD_WATER:
    return t->w[ct];
  case TALUS_FIELD_COLUMNS:
    return (float)t->count[idx];
  case TALUS_FIELD_HARDNESS:
    return t->hard ? t->hard[idx] : 0.0f;
  case TALUS_FIELD_RAIN:
    return t->rain ? t->rain[idx] : NAN;
  case TALUS_FIELD_SAND:
    for (int k = 0; k <= top; k++)
      acc += t->s[talus_col(t, idx, k)];
    return acc;
  case TALUS_FIELD_SEDIMENT:
    for (int k = 0; k <= top; k++)
      acc += t->r[talus_col(t, idx, k)];
    return acc;
  default:
    return NAN;
  }
}

talus_status talus_domain_read(const talus_domain *d, talus_field field, int layer, float *out) {
  if (!d || !out) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "no domain or output");
  const talus_tile *t = d->tile;
  float *plane = domain_layer_field((talus_tile *)t, field);
  if (plane && (layer < 0 || layer >= t->nz))
    return talus_fail(TALUS_ERR_ARGUMENT, "domain", "layer %d outside [0, %d)", layer, t->nz);
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      size_t idx = talus_idx(t, x, y);
      float v;
      if (plane) /* absent columns read as NaN so stale slots never leak out */
        v = layer < t->count[idx] ? plane[talus_col(t, idx, layer)] : NAN;
      else
        v = domain_cell_value(t, field, idx);
      out[(size_t)y * t->buf.w + x] = v;
    }
  return TALUS_OK;
}

int talus_domain_nx(const talus_domain *d) {
  return d ? d->ctx.nx : 0;
}
int talus_domain_ny(const talus_domain *d) {
  return d ? d->ctx.ny : 0;
}
int talus_domain_layers(const talus_domain *d) {
  return d ? d->tile->nz : 0;
}
int64_t talus_domain_step(const talus_domain *d) {
  return d ? d->ctx.step : 0;
}

int talus_flow_count(void) {
  return TALUS_FLOW_COUNT;
}

const char *talus_flow_name(int flow, talus_material *from, talus_material *to) {
  int f = 0, t = 0;
  const char *name = talus_flow_info(flow, &f, &t);
  if (from) *from = (talus_material)f;
  if (to) *to = (talus_material)t;
  return name;
}

double talus_domain_flow(const talus_domain *d, int flow) {
  if (!d || flow < 0 || flow >= TALUS_FLOW_COUNT) return 0.0;
  return d->stats.flows[flow] * d->cell_area;
}

talus_status talus_domain_ledger(const talus_domain *d, talus_ledger_summary *out) {
  if (!d || !out) return talus_fail(TALUS_ERR_ARGUMENT, "domain", "no domain or output");
  memset(out, 0, sizeof *out);
  talus_domain_volumes(d, out->current);
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    out->initial[m] = d->started ? d->initial[m] : out->current[m];
  for (int f = 0; f < TALUS_FLOW_COUNT; f++) {
    int from, to;
    talus_flow_info(f, &from, &to);
    double v = talus_domain_flow(d, f);
    if (from < TALUS_MAT_COUNT) out->outflow[from] += v;
    if (to < TALUS_MAT_COUNT) out->inflow[to] += v;
  }
  for (int m = 0; m < TALUS_MAT_COUNT; m++) {
    out->residual[m] = out->current[m] - out->initial[m] - out->inflow[m] + out->outflow[m];
    out->total_residual += out->residual[m];
  }
  return TALUS_OK;
}

int talus_stage_count(void) {
  return TALUS_STAGE_COUNT;
}
const char *talus_stage_name(int stage) {
  const talus_stage_def *s = talus_stage_def_of((talus_stage_id)stage);
  return s ? s->name : NULL;
}
double talus_domain_stage_seconds(const talus_domain *d, int stage) {
  if (!d || stage < 0 || stage >= TALUS_STAGE_COUNT) return 0.0;
  return d->stats.stage_seconds[stage];
}

int talus_device_built(talus_device device) {
  return device != TALUS_DEVICE_CUDA || talus_cuda_built();
}

/* Owns the device rule of a run: the GPU of this process (the MPI local
 * rank, a launcher fact of mpi/, picks it among the visible devices) unless
 * the CPU is asked for, or AUTO finds no GPU. */
talus_status talus_backend_choose(talus_device device, int32_t *backend, char *name, size_t len) {
  if (device != TALUS_DEVICE_CPU) {
    talus_status st = talus_cuda_init(talus_mpi_local_rank(), name, len);
    if (!st) {
      *backend = TALUS_BACKEND_CUDA;
      return TALUS_OK;
    }
    if (device == TALUS_DEVICE_CUDA) return st;
  }
  *backend = TALUS_BACKEND_CPU;
  if (name && len) snprintf(name, len, "cpu");
  return TALUS_OK;
}

talus_status talus_backend_choose_reported(talus_device device, int32_t *backend) {
  char name[256];
  talus_status st = talus_backend_choose(device, backend, name, sizeof name);
  if (st || device == TALUS_DEVICE_CPU) return st;
  if (*backend == TALUS_BACKEND_CUDA)
    talus_info("running on %s", name);
  else if (talus_cuda_built())
    talus_info("--device auto: %s; running on the CPU", talus_last_error());
  talus_error_clear();
  return TALUS_OK;
}

talus_status talus_domain_set_device(talus_domain *d, talus_device device, char *name, size_t len) {
  return talus_backend_choose(device, &d->ctx.backend, name, len);
}

void talus_domain_free(talus_domain *d) {
  if (!d) return;
  if (d->ctx.backend == TALUS_BACKEND_CUDA) talus_cuda_release();
  talus_tile_free(d->tile);
  free(d);
}
