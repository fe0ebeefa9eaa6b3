/*
 * stages.c — the stage table (the rows of stages.def) and the step plan.
 * The plan is the only place that says which stages run at a given global
 * step; the support cycle's phase comes from the global step, never from a
 * tile-local counter.
 */
#include "stages.h"

#include "particles.h"

#include <stddef.h>

/* The rows of stages.def, indexed by id. */
static const talus_stage_def stage_table[TALUS_STAGE_COUNT] = {
#define TALUS_STAGE(ID, NAME, RADIUS, BODY, CPU_LOOP, CUDA_MINB) {TALUS_STAGE_##ID, NAME, RADIUS},
#include "stages.def"
#undef TALUS_STAGE
};

const talus_stage_def *talus_stage_def_of(talus_stage_id id) {
  if ((unsigned)id >= TALUS_STAGE_COUNT) return NULL;
  return &stage_table[id];
}

/* 1 when global step `step` runs thermal erosion: thermal.enable, on the
 * steps thermal.every selects (each covering that many steps' time). */
static int thermal_runs(const talus_kparams *P, int64_t step) {
  return P->enable_thermal && step % (int64_t)(P->thermal_every > 0 ? P->thermal_every : 1) == 0;
}

static int plan_push(talus_stage_id *out, int n, int max, talus_stage_id id) {
  if (n < 0 || n >= max) return -1;
  out[n] = id;
  return n + 1;
}

/* The heightfield step in the order of Jákó & Tóth §2: rain, flow,
 * thermal outflow, erosion/deposition (with evaporation: nothing between
 * it and the end of the step reads water), sediment advection, thermal
 * collection. */
static int plan_heightfield(const talus_kparams *P, int64_t step, talus_stage_id *out, int max) {
  int n = 0, thermal = thermal_runs(P, step);
  if (P->hf_hydraulic) {
    n = plan_push(out, n, max, TALUS_STAGE_HF_RAIN);
    /* hf_open's marks matter only where spreading water loses capacity */
    if (hf_sheet_on(P)) n = plan_push(out, n, max, TALUS_STAGE_HF_OPEN);
    n = plan_push(out, n, max, TALUS_STAGE_HF_FLUX);
    n = plan_push(out, n, max, TALUS_STAGE_HF_WATER);
  }
  if (thermal) n = plan_push(out, n, max, TALUS_STAGE_THERMAL_OUT);
  if (P->hf_hydraulic) {
    n = plan_push(out, n, max, TALUS_STAGE_HF_ERODE);
    n = plan_push(out, n, max, TALUS_STAGE_HF_ADVECT);
    n = plan_push(out, n, max, TALUS_STAGE_HF_SETTLE);
  }
  if (thermal) n = plan_push(out, n, max, TALUS_STAGE_THERMAL_IN);
  return n;
}

/* The droplet batch (kernels/particles.h) on the steps particles.every
 * selects: at the end of a heightfield step; in a layered step after
 * vertical erosion, before thermal erosion and the support check (which
 * then see the roofs droplets thinned). */
static int plan_particles(const talus_kparams *P, int64_t step, talus_stage_id *out, int n,
                          int max) {
  if (!pt_runs(P, step)) return n;
  n = plan_push(out, n, max, TALUS_STAGE_PT_CLEAR);
  n = plan_push(out, n, max, TALUS_STAGE_PT_TRACE);
  return plan_push(out, n, max, TALUS_STAGE_PT_APPLY);
}

/* The layered step: water, erosion, thermal, then the support cycle. */
static int plan_layered(const talus_kparams *P, int64_t step, talus_stage_id *out, int n, int max) {
  n = plan_push(out, n, max, TALUS_STAGE_RAIN);
  n = plan_push(out, n, max, TALUS_STAGE_PIPES);
  n = plan_push(out, n, max, TALUS_STAGE_INFLOW);
  n = plan_push(out, n, max, TALUS_STAGE_TRANSPORT);
  if (P->enable_horizontal) {
    n = plan_push(out, n, max, TALUS_STAGE_HORIZONTAL);
    n = plan_push(out, n, max, TALUS_STAGE_SPLIT);
  }
  n = plan_push(out, n, max, TALUS_STAGE_VERTICAL);
  n = plan_particles(P, step, out, n, max);
  if (thermal_runs(P, step)) {
    n = plan_push(out, n, max, TALUS_STAGE_THERMAL_OUT);
    n = plan_push(out, n, max, TALUS_STAGE_THERMAL_IN);
  }
  if (P->enable_support && P->nz > 1) {
    int64_t phase = step % P->support_cycle;
    if (phase == 0) n = plan_push(out, n, max, TALUS_STAGE_SUPPORT_INIT);
    for (int i = 0; i < P->prop_iterations; i++) {
      n = plan_push(out, n, max, TALUS_STAGE_SUPPORT_RED);
      n = plan_push(out, n, max, TALUS_STAGE_SUPPORT_BLACK);
    }
    if (phase == P->support_cycle - 1) n = plan_push(out, n, max, TALUS_STAGE_COLLAPSE);
  }
  return n;
}

int talus_step_plan(const talus_kparams *P, int64_t step, talus_stage_id *out, int max) {
  int n = P->accumulate ? plan_push(out, 0, max, TALUS_STAGE_ACC_BEGIN) : 0;
  if (P->model == TALUS_MODEL_HEIGHTFIELD)
    n = plan_particles(P, step, out, n + plan_heightfield(P, step, out + n, max - n), max);
  else
    n = plan_layered(P, step, out, n, max);
  return P->accumulate ? plan_push(out, n, max, TALUS_STAGE_ACC_END) : n;
}

int talus_stage_scratch_needs(talus_stage_id id, const talus_kparams *P,
                              talus_scratch_need out[TALUS_SCRATCH_NEEDS_MAX]) {
  int n = 0;
  switch (id) {
  case TALUS_STAGE_THERMAL_OUT:
  case TALUS_STAGE_THERMAL_IN:
    out[n++] = (talus_scratch_need){offsetof(talus_tile, thermal), 8 * sizeof(float),
                                    "thermal outflows", 0};
    break;
  case TALUS_STAGE_HF_OPEN:
  case TALUS_STAGE_HF_FLUX:
  case TALUS_STAGE_HF_WATER:
  case TALUS_STAGE_HF_ERODE:
    /* hf_flux leaves its marks in both (hf_flux_marks): whether the water
     * spreads in hf_cap for hf_water, the deposit's bound in hf_sed for
     * hf_erode */
    out[n++] =
        (talus_scratch_need){offsetof(talus_tile, hf_cap), sizeof(float), "transport capacity", 0};
    /* fall through */
  case TALUS_STAGE_HF_ADVECT:
  case TALUS_STAGE_HF_SETTLE:
    out[n++] =
        (talus_scratch_need){offsetof(talus_tile, hf_sed), sizeof(float), "advected sediment", 0};
    break;
  case TALUS_STAGE_ACC_BEGIN:
  case TALUS_STAGE_ACC_END:
    out[n++] = (talus_scratch_need){offsetof(talus_tile, acc_s0), sizeof(double),
                                    "solid at the step's start", 0};
    break;
  case TALUS_STAGE_INFLOW:
  case TALUS_STAGE_TRANSPORT:
    out[n++] =
        (talus_scratch_need){offsetof(talus_tile, qin), 2 * sizeof(float), "inflow shares", 1};
    break;
  case TALUS_STAGE_PT_CLEAR:
  case TALUS_STAGE_PT_TRACE:
  case TALUS_STAGE_PT_APPLY:
    out[n++] =
        (talus_scratch_need){offsetof(talus_tile, pt_acc), (size_t)pt_planes(P) * sizeof(int64_t),
                             "particle erosion, river and deposit totals", 1};
    break;
  default:
    break;
  }
  int live = id == TALUS_STAGE_HF_FLUX || id == TALUS_STAGE_HF_WATER ||
             id == TALUS_STAGE_HF_ADVECT || id == TALUS_STAGE_THERMAL_OUT ||
             id == TALUS_STAGE_THERMAL_IN;
  if (live)
    out[n++] =
        (talus_scratch_need){offsetof(talus_tile, nb8), sizeof(uint16_t), "neighbour flags", 0};
  return n;
}

talus_status talus_stage_scratch(talus_tile *t, const talus_kparams *P, talus_stage_id id) {
  talus_scratch_need need[TALUS_SCRATCH_NEEDS_MAX];
  int n = talus_stage_scratch_needs(id, P, need);
  talus_status st = TALUS_OK;
  for (int i = 0; i < n && !st; i++)
    st = talus_tile_ensure(t, (void **)((char *)t + need[i].offset),
                           talus_scratch_bytes(&need[i], t->nz), need[i].what);
  return st;
}

int talus_stage_radius(const talus_kparams *P, talus_stage_id id) {
  int r = talus_stage_def_of(id)->radius;
  if (r != TALUS_RADIUS_PARAMS) return r;
  return id == TALUS_STAGE_HF_OPEN ? P->hf_sheet_reach : pt_radius(P);
}

int talus_plan_radius(const talus_kparams *P, const talus_stage_id *plan, int n) {
  int r = 0;
  for (int i = 0; i < n; i++)
    r += talus_stage_radius(P, plan[i]);
  return r;
}

int talus_step_radius(const talus_kparams *P) {
  talus_stage_id plan[4 * TALUS_STAGE_COUNT + 2 * 64];
  /* The widest step the run can reach: eroding, with a droplet batch. A
   * run that starts in its spin-up (the DEM presets) reaches it later, so
   * the probes must not stop at the run's first steps: planned from step 0
   * alone, the bare DEM run tiled with a halo of 3 cells and stopped at the
   * spin-up's end, where the droplets read 137. */
  talus_kparams widest = *P;
  widest.erosion_spinup = 0;
  widest.pt_every = 1;
  widest.thermal_every = 1;
  int worst = 0;
  int cycle = P->enable_support ? P->support_cycle : 1;
  /* The plan differs only at a cycle's first and last step. */
  int64_t probes[3] = {0, cycle > 1 ? 1 : 0, cycle - 1};
  for (int i = 0; i < 3; i++) {
    int n = talus_step_plan(&widest, probes[i], plan, (int)(sizeof plan / sizeof plan[0]));
    int r = talus_plan_radius(P, plan, n);
    if (r > worst) worst = r;
  }
  return worst;
}
