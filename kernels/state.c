/*
 * state.c — tile buffers and rectangles, parameter defaults and
 * derivation, ledger flow declarations. Owns nothing global: every tile
 * belongs to its creator.
 */
#include "state.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

static void pt_units_derive(talus_kparams *p);

void talus_kparams_defaults(talus_kparams *p) {
  memset(p, 0, sizeof *p);
  p->model = TALUS_MODEL_LAYERED;
  p->nz = 8;
  p->cell_size = 1.0f;
  p->dt = 0.15f;
  p->gravity = 9.81f;
  p->seed = 1;
  p->rain = 0.07f;
  p->rain_noise = 1.0f;
  p->rain_noise_scale = 0.0f;
  p->rain_steps = 0;
  p->evaporation = 0.09f;
  p->evap_space_scale = 10.0f;
  p->pipe_damping = 0.01f;
  p->water_reference_cell = 0.0f;
  p->water_finest_cell = 0.0f;
  p->capacity = 0.1f;
  p->sand_dissolve = 0.05f;
  p->deposition = 0.04f;
  p->bedrock_dissolve = 0.01f;
  p->min_scale = 0.1f;
  p->max_scale = 1.0f;
  p->water_max_height = 10.0f;
  p->sand_threshold = 0.01f;
  p->slope_fade_start = 0.6f;
  p->top_erosion_scale = 2.0f;
  p->petrification = 1e-4f;
  p->erosion_law = TALUS_LAW_PAPER;
  p->critical_power = 0.0f;
  p->erosion_spinup = 0;
  p->base_level = 0;
  p->capacity_fade = 1;
  p->erosion_tilt = TALUS_TILT_STEEPEST;
  p->talus_dry_deg = 30.0f;
  p->talus_wet_deg = 0.0f;
  p->slippage_range = 1.0f;
  p->slip_diagonal = 1;
  p->sand_creep = 0.0f;
  p->horiz_min_slope = 0.9f;
  p->horiz_strength = 0.1f;
  p->split_size = 0.75f;
  p->damage_recovery = 0.005f;
  p->horiz_reference_cell = 0.0f;
  p->horiz_notch_wall = 0;
  p->horiz_reference_slope = 1;
  p->rho_bedrock = 2600.0f;
  p->rho_sand = 1600.0f;
  p->rho_water = 1000.0f;
  p->bedrock_support = 60000.0f;
  p->border_support = 60000.0f;
  p->min_bedrock = 1.0f;
  p->max_prop_distance = 100.0f;
  p->prop_iterations = 5;
  p->enable_slippage = 1;
  p->enable_vertical = 1;
  p->enable_horizontal = 1;
  p->enable_support = 1;
  p->use_weight = 1;
  p->enable_border_support = 1;
  p->outflow_water = 0;
  p->outflow_slippage = 0;
  p->nodata_policy = TALUS_NODATA_OUTFLOW;
  p->accumulate = 0;
  p->enable_thermal = 0;
  p->thermal_talus_deg = 30.0f;
  p->thermal_rate = 0.1f;
  p->thermal_creep = 0.0f;
  p->thermal_crests = 0;
  p->thermal_every = 1;
  p->thermal_bank_deg = 0.0f;
  p->hardness = 0.5f;
  p->hf_hydraulic = 1;
  p->hf_water_swell = 1;
  p->hf_rain_scale = 1.0f;
  p->hf_pipe_area = 0.0f;
  p->hf_pipe_length = 0.0f;
  p->hf_capacity = 0.05f;
  p->hf_dissolve = 0.1f;
  p->hf_deposit = 0.5f;
  p->hf_max_depth = 10.0f;
  p->hf_min_tilt = 0.01f;
  p->hf_river_width = 0.0f;
  p->hf_no_dam = 0;
  p->hf_base_level = 0;
  p->hf_grade = 0.0f;
  p->hf_grade_share = 0.0f;
  p->hf_grade_noise = 2.0f;
  p->hf_sheet = 1.0f;
  p->hf_sheet_slope = 0.001f;
  p->hf_sheet_reach = 4;
  p->hf_sheet_wall = 0.1f;
  p->hf_diagonal = 0;
  p->hf_min_hardness = 0.1f;
  p->hf_softening = 5.0f;
  p->hf_evaporation = 0.015f;
  p->pt_enable = 0;
  p->pt_density_log2 = 8;
  p->pt_every = 1;
  p->pt_path_length = 32.0f;
  p->pt_brush_length = 2.0f;
  p->pt_inertia = 0.3f;
  p->pt_capacity = 8.0f;
  p->pt_min_slope = 0.01f;
  p->pt_erosion = 0.7f;
  p->pt_deposition = 0.3f;
  p->pt_evaporation = 0.02f;
  p->pt_water_gain = 0.0f;
  p->pt_gravity = 1.0f;
  p->pt_initial_speed = 0.9f;
  p->pt_initial_water = 1.0f;
  p->pt_deposit_at_death = 1;
  p->pt_bedrock_erodibility = 1.0f;
  p->pt_water_stop = 0.05f;
  p->pt_river_depth = 0.0f;
  p->pt_river_discharge = 0.0f;
  pt_units_derive(p); /* the droplets' cells and per-move shares at the 1 m cell */
}

/* Horizontal erosion at a reference cell size L (horizontal.reference_cell).
 * Damage grows per step as overlap·dt/l_c and a split moves the face one
 * cell, so a wall retreats at the same speed on any grid; two things do not
 * scale with the grid and are pinned to L here. A wall's sin β is its rise
 * over one cell's run, so a 0.75 m notch reads 0.95 at 0.25 m cells and 0.35
 * at 2 m, under min_slope: it is measured over L instead. Healing is a
 * fixed rate against wear ∝ 1/l_c, so it is scaled by L/l_c. With L = 0
 * both are the reference's (the run's own cell size).
 * The slope's pin is itself grid-dependent: the rise is still the step to
 * the next cell, l_c away, so a face of true slope tan θ reads tan θ·l_c/L
 * and damage stops where that equals min_slope's tangent — 30° at 2 m cells
 * but 67° at 0.5 m for L = 2 m and min_slope 0.5 (arches at 512²: the
 * notches stall on pedestals). horizontal.reference_slope = false reads
 * the rise over l_c and leaves L to scale the healing only; with the
 * reference's min_slope 0.9 and notch_wall faces then stop at 64° on any
 * grid (configs/arches.ini). */
static void hz_scale_derive(talus_kparams *p) {
  float L = p->horiz_reference_cell > 0.0f ? p->horiz_reference_cell : p->cell_size;
  p->hz_run = p->horiz_reference_slope ? L : p->cell_size;
  p->hz_recovery =
      p->horiz_reference_cell > 0.0f ? p->damage_recovery * (L / p->cell_size) : p->damage_recovery;
}

/* A share k per metre of path as the share per move of l_c metres:
 * 1 − (1 − k)^l_c, in double so that at l_c = 1 m it is k to the bit. */
static float pt_per_move(float k, double lc) {
  return (float)(1.0 - pow(1.0 - (double)k, lc));
}

/* The droplets' keys in metres as the cells and per-move rates the kernel
 * reads (state.h): L = path / l_c and r = brush / l_c rounded, each at
 * least 1 (a droplet moves and brushes at least one cell) and at most
 * PT_MOVES_MAX and PT_BRUSH_MAX (state.h; they bound the stage radius
 * L + 2r + 2; the params are derived before the raster's cell size is
 * known, so this caps rather than fails, and erode warns: pt_units_capped);
 * the shares per move from the shares per metre, and the water gathered
 * over a move of l_c metres of the per-metre recurrence w ← w·(1 − e) + g,
 * which is w·a + g·(1 − a)/e with a = (1 − e)^l_c (g·l_c when e = 0). At
 * l_c = 1 m every value is the key's own, so 1 m runs keep their bytes. */
/* A length [m] in whole cells of lc metres, rounded (not yet bounded). */
static double pt_cells(float length, double lc) {
  return floor((double)length / lc + 0.5);
}

static void pt_units_derive(talus_kparams *p) {
  double lc = p->cell_size;
  double L = pt_cells(p->pt_path_length, lc), r = pt_cells(p->pt_brush_length, lc);
  p->pt_max_moves = L < 1.0 ? 1 : (L > PT_MOVES_MAX ? PT_MOVES_MAX : (int)L);
  p->pt_brush_radius = r < 1.0 ? 1 : (r > PT_BRUSH_MAX ? PT_BRUSH_MAX : (int)r);
  p->pt_erode_move = pt_per_move(p->pt_erosion, lc);
  p->pt_deposit_move = pt_per_move(p->pt_deposition, lc);
  double e = p->pt_evaporation, a = pow(1.0 - e, lc);
  p->pt_evap_move = (float)(1.0 - a);
  p->pt_gain_move =
      (float)(e > 0.0 ? (double)p->pt_water_gain * ((1.0 - a) / e) : (double)p->pt_water_gain * lc);
}

int pt_units_capped(const talus_kparams *p) {
  return pt_cells(p->pt_path_length, p->cell_size) > p->pt_max_moves ||
         pt_cells(p->pt_brush_length, p->cell_size) > p->pt_brush_radius;
}

/* The creep share of one step, D·dt/l_c², of key `key` = D [m²/s] in
 * *share, or an error when it exceeds `bound`: past it a peak sends more
 * than half its drop and overshoots into a pit. */
static talus_status creep_share(const talus_kparams *p, const char *key, float D, float dt,
                                float bound, float *share) {
  *share = D * dt / (p->cell_size * p->cell_size);
  if (*share <= bound) return TALUS_OK;
  return talus_fail(TALUS_ERR_RANGE, "params",
                    "%s = %g m2/s is unstable at dt = %g s and cell size %g m: "
                    "creep*dt/cell_size^2 must be <= %g (%s <= %g)",
                    key, (double)D, (double)dt, (double)p->cell_size, (double)bound, key,
                    (double)bound * (double)p->cell_size * (double)p->cell_size / (double)dt);
}

/* The heightfield's thermal creep shares per pipe (the 9-point weights of
 * sand creep; 0 with thermal.enable off), and its checks: the
 * layered model's loose material creeps by sand.creep instead (its
 * thermal pays from sand, then bedrock above a floor: a creep share
 * outside that budget would create material). A peak sends creep·(10/3)·ΔS
 * plus at most 1/9 of its excess by the talus rule: with creep ≤ 0.1 that
 * stays under half the drop. */
static talus_status thermal_creep_derive(talus_kparams *p) {
  p->tcreep_axis = p->tcreep_diag = 0.0f;
  if (!p->enable_thermal || !(p->thermal_creep > 0.0f)) return TALUS_OK; /* runs in thermal */
  if (p->model != TALUS_MODEL_HEIGHTFIELD)
    return talus_fail(TALUS_ERR_RANGE, "params",
                      "thermal.creep = %g is for the heightfield model; the layered model's sand "
                      "creeps by sand.creep",
                      (double)p->thermal_creep);
  float creep = 0.0f;
  talus_status st = creep_share(p, "thermal.creep", p->thermal_creep, p->thermal_dt, 0.1f, &creep);
  p->tcreep_axis = creep * (2.0f / 3.0f);
  p->tcreep_diag = creep * (1.0f / 6.0f);
  return st;
}

void talus_kparams_finest_water(talus_kparams *p) {
  if (p->model != TALUS_MODEL_LAYERED || p->water_reference_cell > 0.0f ||
      !(p->water_finest_cell > p->cell_size))
    return;
  p->water_reference_cell = p->water_finest_cell;
  p->dt *= p->cell_size / p->water_finest_cell; /* 0.5 m under 1 m: exactly half */
  /* the rain lasts the same seconds */
  double steps = nearbyint((double)p->rain_steps * p->water_finest_cell / p->cell_size);
  p->rain_steps = steps < 1e9 ? (int)steps : 1000000000;
}

talus_status talus_kparams_derive(talus_kparams *p) {
  if (p->nz < 1 || p->nz > TALUS_NZ_MAX)
    return talus_fail(TALUS_ERR_RANGE, "params", "layers = %d outside [1, %d]", p->nz,
                      TALUS_NZ_MAX);
  if (!(p->cell_size > 0.0f) || !isfinite(p->cell_size))
    return talus_fail(TALUS_ERR_RANGE, "params", "cell size %g must be positive",
                      (double)p->cell_size);
  if (p->model == TALUS_MODEL_HEIGHTFIELD) p->nz = 1;
  p->tan_dry = tanf(p->talus_dry_deg * 0.017453292519943295f);
  p->tan_wet = tanf(p->talus_wet_deg * 0.017453292519943295f);
  /* A cycle lasts maxDist / (2 l_c P) steps: propagation covers 2P cells per
   * step, so stability can travel max_prop_distance within one cycle. */
  p->thermal_tan = tanf(p->thermal_talus_deg * 0.017453292519943295f);
  /* thermal.every: a thermal step covers that many steps' time (× 1 is exact) */
  p->thermal_dt = p->dt * (float)(p->thermal_every > 0 ? p->thermal_every : 1);
  /* thermal.bank_angle reads each cell's net change since the run began
   * from the accumulators (kernels/thermal.h), so it turns them on */
  int banks = p->enable_thermal && p->thermal_bank_deg > 0.0f;
  p->thermal_bank_tan = banks ? tanf(p->thermal_bank_deg * 0.017453292519943295f) : 0.0f;
  if (banks) p->accumulate = 1;
  /* A receiver has as many senders as pipes: each may fill its share. */
  p->slip_room = p->slip_diagonal ? 0.125f : 0.25f;
  /* Creep weights of the isotropic 9-point Laplacian, (4·axis + diagonals)
   * / 6 l_c²: an axis pipe carries 2/3, a diagonal 1/6 of D·dt/l_c²·ΔS. */
  float creep = 0.0f;
  talus_status st = creep_share(p, "sand.creep", p->sand_creep, p->dt, 0.125f, &creep);
  if (st != TALUS_OK) return st;
  p->creep_axis = p->slip_diagonal ? creep * (2.0f / 3.0f) : creep;
  p->creep_diag = p->slip_diagonal ? creep * (1.0f / 6.0f) : 0.0f;
  st = thermal_creep_derive(p);
  if (st != TALUS_OK) return st;
  /* Pipe area and length 0 mean the cell: A = l_c², l = l_c (the layered
   * model's pipes), so the flux gain is g·l_c. */
  float area = p->hf_pipe_area > 0.0f ? p->hf_pipe_area : p->cell_size * p->cell_size;
  float length = p->hf_pipe_length > 0.0f ? p->hf_pipe_length : p->cell_size;
  p->hf_flux_gain = area * p->gravity / length;
  /* heightfield.neighbours = 8: a diagonal pipe of the same area is
   * sqrt(2) times as long */
  p->hf_flux_gain_diag = p->hf_flux_gain / sqrtf(2.0f);
  p->hf_inv_depth = p->hf_max_depth > 0.0f ? 1.0f / p->hf_max_depth : 0.0f;
  /* A river narrower than its cell keeps its own unit discharge: the
   * stream-power law reads q over min(l_c, river_width) (heightfield.h,
   * hf_stream_capacity); 0 or a width above the cell is the cell's. */
  p->hf_flow_width = p->hf_river_width > 0.0f && p->hf_river_width < p->cell_size
                         ? p->hf_river_width
                         : p->cell_size;
  hz_scale_derive(p);
  p->pipe_gain_length = p->water_reference_cell > 0.0f ? p->water_reference_cell : p->cell_size;
  pt_units_derive(p);
  /* The rain noise's lattice in whole cells (rain.h, rain_noise_draw):
   * within a cell, or 0, each cell draws its own. */
  double span =
      p->rain_noise_scale > 0.0f ? floor((double)p->rain_noise_scale / p->cell_size + 0.5) : 1.0;
  p->rain_noise_span = span < 1.0 ? 1 : (span > 4096.0 ? 4096 : (int)span);
  int P = p->prop_iterations > 0 ? p->prop_iterations : 1;
  double cycle = ceil((double)p->max_prop_distance / (2.0 * (double)p->cell_size * P));
  p->support_cycle = cycle < 1.0 ? 1 : (cycle > 1e6 ? 1000000 : (int)cycle);
  return TALUS_OK;
}

double talus_kparams_dt_limit(const talus_kparams *p) {
  double lc = p->cell_size, gain = (double)p->gravity * p->pipe_gain_length; /* layered: A·g/l */
  if (p->model == TALUS_MODEL_HEIGHTFIELD) gain = p->hf_flux_gain;
  /* The stencil's largest eigenvalue: 8 with 4 pipes (the checkerboard);
   * with the diagonal pipes (gain ratio q = hf_flux_gain_diag / gain) the
   * larger of that and the stripe mode's 4 + 8q. */
  double q = p->hf_flux_gain > 0.0f ? (double)p->hf_flux_gain_diag / p->hf_flux_gain : 0.0;
  double lam = talus_hf_diagonal(p) && 4.0 + 8.0 * q > 8.0 ? 4.0 + 8.0 * q : 8.0;
  return gain > 0.0 ? sqrt(4.0 * lc * lc / (lam * gain)) : INFINITY;
}

static const struct {
  const char *name;
  int from, to;
} flow_table[TALUS_FLOW_COUNT] = {
    [TALUS_FLOW_RAIN] = {"rain", TALUS_MAT_OUTSIDE, TALUS_MAT_WATER},
    [TALUS_FLOW_SOURCE] = {"sources", TALUS_MAT_OUTSIDE, TALUS_MAT_WATER},
    [TALUS_FLOW_EVAPORATION] = {"evaporation", TALUS_MAT_WATER, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_WATER_OUTFLOW] = {"water_outflow", TALUS_MAT_WATER, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_WATER_OVERFILL] = {"water_overfill_clamp", TALUS_MAT_WATER, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_SEDIMENT_OUTFLOW] = {"sediment_outflow", TALUS_MAT_SEDIMENT, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_SEDIMENT_CLAMP] = {"sediment_negative_clamp", TALUS_MAT_OUTSIDE,
                                   TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_SAND_OUTFLOW] = {"sand_outflow", TALUS_MAT_SAND, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_SAND_OVERFILL] = {"sand_overfill_clamp", TALUS_MAT_SAND, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_SAND_CLAMP] = {"sand_negative_clamp", TALUS_MAT_OUTSIDE, TALUS_MAT_SAND},
    [TALUS_FLOW_DISSOLVE] = {"dissolve", TALUS_MAT_SAND, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_DEPOSIT] = {"deposit", TALUS_MAT_SEDIMENT, TALUS_MAT_SAND},
    [TALUS_FLOW_PETRIFY] = {"petrification", TALUS_MAT_SAND, TALUS_MAT_BEDROCK},
    [TALUS_FLOW_BEDROCK_EROSION] = {"bedrock_erosion", TALUS_MAT_BEDROCK, TALUS_MAT_SAND},
    [TALUS_FLOW_CEILING_EROSION] = {"ceiling_erosion", TALUS_MAT_BEDROCK, TALUS_MAT_SAND},
    [TALUS_FLOW_SPLIT] = {"split", TALUS_MAT_BEDROCK, TALUS_MAT_SAND},
    [TALUS_FLOW_COLLAPSE] = {"collapse", TALUS_MAT_BEDROCK, TALUS_MAT_SAND},
    [TALUS_FLOW_MERGE] = {"merge", TALUS_MAT_SAND, TALUS_MAT_BEDROCK},
    [TALUS_FLOW_THERMAL] = {"thermal", TALUS_MAT_BEDROCK, TALUS_MAT_SAND},
    [TALUS_FLOW_HF_DISSOLVE] = {"hf_dissolve", TALUS_MAT_BEDROCK, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_HF_DEPOSIT] = {"hf_deposit", TALUS_MAT_SEDIMENT, TALUS_MAT_BEDROCK},
    [TALUS_FLOW_HF_SWELL] = {"hf_water_swell", TALUS_MAT_OUTSIDE, TALUS_MAT_WATER},
    [TALUS_FLOW_HF_SHRINK] = {"hf_water_shrink", TALUS_MAT_WATER, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_HF_ADVECTION] = {"hf_advection_net", TALUS_MAT_OUTSIDE, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_PT_EROSION] = {"pt_erosion", TALUS_MAT_BEDROCK, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_PT_DEPOSIT] = {"pt_deposit", TALUS_MAT_SEDIMENT, TALUS_MAT_BEDROCK},
    [TALUS_FLOW_PT_OUTFLOW] = {"pt_outflow", TALUS_MAT_SEDIMENT, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_PT_LOST] = {"pt_lost", TALUS_MAT_SEDIMENT, TALUS_MAT_OUTSIDE},
    [TALUS_FLOW_PT_ROUNDING] = {"pt_rounding", TALUS_MAT_OUTSIDE, TALUS_MAT_BEDROCK},
    [TALUS_FLOW_PT_SAND_EROSION] = {"pt_sand_erosion", TALUS_MAT_SAND, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_PT_SAND_DEPOSIT] = {"pt_sand_deposit", TALUS_MAT_SEDIMENT, TALUS_MAT_SAND},
    [TALUS_FLOW_PT_CLAMP] = {"pt_clamp", TALUS_MAT_OUTSIDE, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_PT_SAND_ROUNDING] = {"pt_sand_rounding", TALUS_MAT_OUTSIDE, TALUS_MAT_SAND},
    [TALUS_FLOW_PT_RIVER] = {"pt_river", TALUS_MAT_SEDIMENT, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_PT_RIVER_ROUND] = {"pt_river_rounding", TALUS_MAT_OUTSIDE, TALUS_MAT_SEDIMENT},
    [TALUS_FLOW_THERMAL_ROUNDING] = {"thermal_rounding", TALUS_MAT_OUTSIDE, TALUS_MAT_BEDROCK},
};

const char *talus_flow_info(int flow, int *from, int *to) {
  if (flow < 0 || flow >= TALUS_FLOW_COUNT) return NULL;
  if (from) *from = flow_table[flow].from;
  if (to) *to = flow_table[flow].to;
  return flow_table[flow].name;
}

talus_rect talus_rect_intersect(talus_rect a, talus_rect b) {
  int32_t x0 = a.x0 > b.x0 ? a.x0 : b.x0, y0 = a.y0 > b.y0 ? a.y0 : b.y0;
  int32_t x1 = a.x0 + a.w < b.x0 + b.w ? a.x0 + a.w : b.x0 + b.w;
  int32_t y1 = a.y0 + a.h < b.y0 + b.h ? a.y0 + a.h : b.y0 + b.h;
  talus_rect r = {x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
  if (!r.w || !r.h) r.w = r.h = 0;
  return r;
}

/* One column a cell, its ceiling at the top: written row by row by the
 * threads that will run the stages on those rows (static schedule, as
 * kernels/cpu's loops), which so take the pages' first touch. */
static void tile_init_columns(talus_tile *t) {
  size_t pitch = (size_t)t->pitch;
  int rows = (int)(t->plane / pitch); /* buf.h, or more for a retargeted tile */
#pragma omp parallel for schedule(static) if (t->plane >= TALUS_TILE_PARALLEL_CELLS)
  for (int y = 0; y < rows; y++)
    for (size_t i = (size_t)y * pitch; i < (size_t)(y + 1) * pitch; i++) {
      t->count[i] = 1;
      t->C[i] = TALUS_TOP;
    }
}

int talus_tile_optional(const talus_kparams *P) {
  int hard = P->model == TALUS_MODEL_HEIGHTFIELD || P->enable_thermal;
  return (hard ? TALUS_TILE_HARD : 0) | (P->accumulate ? TALUS_TILE_ACC : 0) |
         (talus_hf_diagonal(P) ? TALUS_TILE_FDIAG : 0);
}

talus_status talus_tile_create(talus_tile **out, talus_rect buf, int nz, int optional) {
  return talus_tile_create_groups(out, buf, nz, optional,
                                  TALUS_TILE_PERSISTENT | TALUS_TILE_SCRATCH);
}

talus_status talus_tile_create_groups(talus_tile **out, talus_rect buf, int nz, int optional,
                                      int groups) {
  *out = NULL;
  if (buf.w <= 0 || buf.h <= 0 || nz < 1 || nz > TALUS_NZ_MAX || !groups)
    return talus_fail(TALUS_ERR_ARGUMENT, "tile", "bad tile %dx%d with %d layers", buf.w, buf.h,
                      nz);
  talus_tile *t = NULL;
  talus_status st = talus_alloc((void **)&t, sizeof *t, "tile header");
  if (st) return st;
  t->buf = buf;
  t->pitch = (buf.w + 15) & ~15; /* 64-byte rows for vector loads */
  t->nz = nz;
  t->plane = (size_t)t->pitch * (size_t)buf.h;
  size_t n = (size_t)nz * t->plane, P = t->plane;
  enum { K = TALUS_TILE_PERSISTENT, S = TALUS_TILE_SCRATCH };
  struct {
    void **p;
    size_t bytes;
    int group;
    const char *what;
  } parts[] = {
      {(void **)&t->count, P, K, "column counts"},
      {(void **)&t->mask, P, K, "NoData mask"},
      {(void **)&t->B, n * 4, K, "bedrock"},
      {(void **)&t->s, n * 4, K, "sand"},
      {(void **)&t->w, n * 4, K, "water"},
      {(void **)&t->C, n * 4, K, "ceilings"},
      {(void **)&t->r, n * 4, K, "sediment"},
      {(void **)&t->D, n * 4, K, "damage"},
      {(void **)&t->p, n * 4, K, "stability"},
      {(void **)&t->f, 4 * n * 4, K, "fluxes"},
      {(void **)&t->hard, optional & TALUS_TILE_HARD ? P * 4 : 0, K, "hardness"},
      {(void **)&t->acc, optional & TALUS_TILE_ACC ? TALUS_ACC_PLANES * P * 4 : 0, K,
       "accumulators"},
      {(void **)&t->fd, optional & TALUS_TILE_FDIAG ? 4 * P * 4 : 0, K, "diagonal fluxes"},
      {(void **)&t->pipe, 4 * n, S, "pipes"},
      {(void **)&t->slip, 4 * n * 4, S, "slippage"},
      {(void **)&t->dpipe, 4 * n, S, "diagonal pipes"},
      {(void **)&t->dslip, 4 * n * 4, S, "diagonal slippage"},
      {(void **)&t->kr, n * 4, S, "sediment scale"},
      {(void **)&t->sina, n * 4, S, "tilt"},
      {(void **)&t->vx, n * 4, S, "velocity x"},
      {(void **)&t->vy, n * 4, S, "velocity y"},
      {(void **)&t->sig_lo, n * 4, S, "overlap lo"},
      {(void **)&t->sig_hi, n * 4, S, "overlap hi"},
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0] && !st; i++)
    if (parts[i].bytes && (parts[i].group & groups))
      st = talus_alloc(parts[i].p, parts[i].bytes, parts[i].what);
  if (st) {
    talus_tile_free(t);
    return st;
  }
  if (groups & K) tile_init_columns(t);
  *out = t;
  return TALUS_OK;
}

talus_status talus_tile_swap_scratch(talus_tile *a, talus_tile *b) {
  if (a->nz != b->nz || a->plane != b->plane)
    return talus_fail(TALUS_ERR_INTERNAL, "tile", "scratch of %zu x %d slots lent to %zu x %d",
                      a->plane, a->nz, b->plane, b->nz);
  void **fields[][2] = {
      {(void **)&a->pipe, (void **)&b->pipe},       {(void **)&a->slip, (void **)&b->slip},
      {(void **)&a->dpipe, (void **)&b->dpipe},     {(void **)&a->dslip, (void **)&b->dslip},
      {(void **)&a->kr, (void **)&b->kr},           {(void **)&a->sina, (void **)&b->sina},
      {(void **)&a->vx, (void **)&b->vx},           {(void **)&a->vy, (void **)&b->vy},
      {(void **)&a->sig_lo, (void **)&b->sig_lo},   {(void **)&a->sig_hi, (void **)&b->sig_hi},
      {(void **)&a->thermal, (void **)&b->thermal}, {(void **)&a->hf_cap, (void **)&b->hf_cap},
      {(void **)&a->hf_sed, (void **)&b->hf_sed},   {(void **)&a->nb8, (void **)&b->nb8},
      {(void **)&a->pt_acc, (void **)&b->pt_acc},   {(void **)&a->acc_s0, (void **)&b->acc_s0},
      {(void **)&a->qin, (void **)&b->qin},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    void *keep = *fields[i][0];
    *fields[i][0] = *fields[i][1];
    *fields[i][1] = keep;
  }
  return TALUS_OK;
}

/* Resets the persistent fields of the n cells from plane index `at` to
 * one empty column (layer 0: no material, ceiling at the top). */
static void tile_reset_cells(talus_tile *t, size_t at, size_t n) {
  memset(t->count + at, 1, n);
  memset(t->mask + at, 0, n);
  for (int k = 0; k < t->nz; k++) {
    float *planes[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
    for (int f = 0; f < 7; f++)
      memset(planes[f] + (size_t)k * t->plane + at, 0, n * 4);
    for (int d = 0; d < 4; d++)
      memset(t->f + ((size_t)k * 4 + d) * t->plane + at, 0, n * 4);
  }
  for (size_t i = 0; i < n; i++)
    t->C[at + i] = TALUS_TOP;
  if (t->hard) memset(t->hard + at, 0, n * 4);
  for (int a = 0; t->acc && a < TALUS_ACC_PLANES; a++)
    memset(t->acc + (size_t)a * t->plane + at, 0, n * 4);
  for (int j = 0; t->fd && j < 4; j++)
    memset(t->fd + (size_t)j * t->plane + at, 0, n * 4);
}

/* Points t at rectangle r, which must fit its allocation. */
static talus_status tile_target(talus_tile *t, talus_rect r) {
  if (r.w <= 0 || r.h <= 0 || r.w > t->pitch || (size_t)r.h * (size_t)t->pitch > t->plane)
    return talus_fail(TALUS_ERR_INTERNAL, "tile", "rectangle %dx%d does not fit the buffer", r.w,
                      r.h);
  t->buf = r;
  return TALUS_OK;
}

talus_status talus_tile_reset(talus_tile *t, talus_rect r) {
  talus_status st = tile_target(t, r);
  if (!st) tile_reset_cells(t, 0, (size_t)r.h * (size_t)t->pitch);
  return st;
}

talus_status talus_tile_retarget(talus_tile *t, talus_rect r) {
  talus_status st = tile_target(t, r);
  /* The row padding [r.w, pitch) of rows [0, r.h), as talus_tile_reset. */
  for (int y = 0; !st && y < r.h && r.w < t->pitch; y++)
    tile_reset_cells(t, (size_t)y * t->pitch + (size_t)r.w, (size_t)(t->pitch - r.w));
  return st;
}

void talus_tile_free(talus_tile *t) {
  if (!t) return;
  void *parts[] = {t->count, t->mask,     t->B,       t->s,      t->w,      t->C,      t->r,
                   t->D,     t->p,        t->f,       t->pipe,   t->slip,   t->dpipe,  t->dslip,
                   t->kr,    t->sina,     t->vx,      t->vy,     t->sig_lo, t->sig_hi, t->hard,
                   t->rain,  t->grade_in, t->thermal, t->hf_cap, t->hf_sed, t->nb8,    t->pt_acc,
                   t->acc,   t->acc_s0,   t->qin,     t->fd};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    talus_free(parts[i]);
  talus_free(t);
}

talus_status talus_tile_ensure(talus_tile *t, void **field, size_t cell_bytes, const char *what) {
  if (*field) return TALUS_OK;
  return talus_alloc(field, cell_bytes * t->plane, what);
}
