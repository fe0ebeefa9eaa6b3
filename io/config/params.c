/*
 * params.c — the declared parameter table and everything that reads or
 * writes a parameter set: typed parsing with range checks, nearest-key
 * suggestions, and the table/JSON/INI writers (INI loading: ini.c; JSON
 * through io/json.h).
 *
 * Owns only static constant data (the table); a talus_params belongs to its
 * creator. Messages go through talus_fail with module "params".
 */
#include "io/config/config_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How a key's value is held inside struct talus_params. */
typedef enum storage { ST_FLOAT, ST_INT, ST_U32, ST_DOUBLE } storage;

typedef struct param_decl {
  talus_param_info info; /* first member: talus_param_at hands out &decl.info */
  size_t offset;         /* into struct talus_params */
  storage st;
} param_decl;

#define OFF(field) offsetof(talus_params, field)
#define REAL(key, field, lo, hi, def, unit, desc)                                                  \
  { {key, TALUS_PARAM_REAL, lo, hi, def, NULL, unit, desc}, OFF(k.field), ST_FLOAT }
#define INPUT_REAL(key, field, lo, hi, def, unit, desc)                                            \
  { {key, TALUS_PARAM_REAL, lo, hi, def, NULL, unit, desc}, OFF(field), ST_DOUBLE }
#define INT(key, field, lo, hi, def, desc)                                                         \
  { {key, TALUS_PARAM_INT, lo, hi, def, NULL, "", desc}, OFF(k.field), ST_INT }
#define U32(key, field, lo, hi, def, desc)                                                         \
  { {key, TALUS_PARAM_INT, lo, hi, def, NULL, "", desc}, OFF(k.field), ST_U32 }
#define BOOL(key, field, def, desc)                                                                \
  { {key, TALUS_PARAM_BOOL, 0, 1, def, NULL, "", desc}, OFF(k.field), ST_INT }
/* Enum bounds are the choice indices, so range checks cover them too. */
#define ENUM(key, field, choices, n, def, desc)                                                    \
  { {key, TALUS_PARAM_ENUM, 0, (n)-1, def, choices, "", desc}, OFF(k.field), ST_INT }

#define SOURCE(n)                                                                                  \
  REAL("source" #n ".strength", sources[n - 1].strength, 0, 100, 0, "m/s",                         \
       "water added inside the circle, noise-modulated like rain (active when strength or "        \
       "radius > 0)"),                                                                             \
      REAL("source" #n ".radius", sources[n - 1].radius, 0, 1e8, 0, "m", "radius of the source"),  \
      REAL("source" #n ".x", sources[n - 1].x, -1e8, 1e8, 0, "m",                                  \
           "centre x, from the corner of cell (0,0)"),                                             \
      REAL("source" #n ".y", sources[n - 1].y, -1e8, 1e8, 0, "m",                                  \
           "centre y, from the corner of cell (0,0) along growing rows (southwards on a "          \
           "north-up raster; a paper scene's y is 256 m - this)"),                                 \
      REAL("source" #n ".flux_r", sources[n - 1].flux[0], 0, 1e9, 0, "m3/s2",                      \
           "flux acceleration added to the outflow toward +x"),                                    \
      REAL("source" #n ".flux_u", sources[n - 1].flux[1], 0, 1e9, 0, "m3/s2",                      \
           "flux acceleration added to the outflow toward +y"),                                    \
      REAL("source" #n ".flux_l", sources[n - 1].flux[2], 0, 1e9, 0, "m3/s2",                      \
           "flux acceleration added to the outflow toward -x"),                                    \
      REAL("source" #n ".flux_d", sources[n - 1].flux[3], 0, 1e9, 0, "m3/s2",                      \
           "flux acceleration added to the outflow toward -y")

/*
 * The table. Sections are contiguous; the printed order is this order.
 * Defaults repeat talus_kparams_defaults (test_config checks they agree).
 * Lower bounds above 0 guard divisions (scales, ranges, thresholds);
 * fade starts stay below 1 because smoothstep(start, 1, x) needs start < 1.
 * [thermal] (both models), [heightfield] and [particles] follow [support].
 */
static const param_decl table[] = {
    ENUM("simulation.model", model, "layered|heightfield", 2, 0,
         "erosion model: layered stacks (overhangs, caves) or a plain heightfield"),
    INT("simulation.layers", nz, 1, TALUS_NZ_MAX, 8,
        "column slots per cell N_z (memory grows with it); the heightfield model uses 1"),
    REAL("simulation.dt", dt, 1e-5, 100, 0.15, "s",
         "time step; the pipe model needs roughly dt < cell_size / sqrt(gravity * depth)"),
    REAL("simulation.gravity", gravity, 0.01, 100, 9.81, "m/s2", "gravitational acceleration g"),
    U32("simulation.seed", seed, 0, 4294967295.0, 1,
        "seed of the counter-based hash behind rain and source noise"),
    BOOL("simulation.masks", accumulate, 0,
         "sum flow (outflow volume), wear and deposition every step for talus export --mask "
         "(saved with --state; a state that holds them keeps summing)"),

    REAL("water.rain", rain, 0, 10, 0.07, "m/s", "rain added to the top column each step (mean)"),
    REAL("water.rain_noise", rain_noise, 0, 1, 1, "",
         "rain noise: 0 uniform, 1 the reference's 2*noise*rain (same mean)"),
    REAL("water.rain_noise_scale", rain_noise_scale, 0, 1000, 0, "m",
         "the rain noise's correlation length: its draw is blended over a lattice this many "
         "metres apart (shifted every step), so a finer grid does not get finer noise; 0 or "
         "less than a cell: each cell draws its own (the reference)"),
    INT("water.rain_steps", rain_steps, 0, 1000000000, 0,
        "steps (global step count) with rain; after them the rain stops (sources go on) and "
        "the water drains and evaporates, leaving channels and fans (a dry-out); 0 = rain "
        "throughout"),
    REAL("water.evaporation", evaporation, 0, 10, 0.09, "m/s",
         "evaporation removed from the water after transport"),
    REAL("water.evaporation_space_scale", evap_space_scale, 1e-3, 1e6, 10, "m",
         "empty space above the water below which evaporation fades to 1% (flooded passages)"),
    REAL("water.pipe_damping", pipe_damping, 0, 100, 0.01, "1/s",
         "virtual-pipe flux damping: f <- (1 - pipe_damping*dt) f + ..."),
    REAL("water.reference_cell", water_reference_cell, 0, 1e3, 0, "m",
         "cell size at which the water pipes hold: a pipe's section is L x cell (not cell^2), "
         "so its flux grows by dt*g*L per metre of head and the speed the erosion laws read is "
         "flux / (L x cell); with simulation.dt scaled by cell / L the water runs alike on any "
         "grid (the same sheet depth and speed; 0 = the run's cell size, the paper's)"),
    REAL("water.finest_cell", water_finest_cell, 0, 1e3, 0, "m",
         "layered model: on cells finer than this the water runs as on cells of this size: "
         "the pipes hold at it (as water.reference_cell does) and simulation.dt shrinks with "
         "the cell (dt x cell / finest_cell), so a second takes finest_cell / cell times the "
         "steps (--seconds counts them; water.rain_steps is scaled with it); on coarser "
         "cells nothing changes. 0 = off; ignored "
         "when water.reference_cell is set"),
    BOOL("water.outflow_border", outflow_water, 0,
         "water and sediment leave across the domain border (false: reflecting wall)"),

    BOOL("sand.slippage", enable_slippage, 1, "sand slips toward its angle of repose"),
    REAL("sand.talus_dry", talus_dry_deg, 0, 89, 30, "deg", "angle of repose of dry sand"),
    REAL("sand.talus_wet", talus_wet_deg, 0, 89, 0, "deg", "angle of repose of submerged sand"),
    REAL("sand.slippage_range", slippage_range, 1e-6, 1e6, 1, "m",
         "water depth over which tan(talus) goes from the dry to the wet value"),
    ENUM("sand.neighbours", slip_diagonal, "4|8", 2, 1,
         "neighbours sand slips to: 8 (diagonals too, sqrt(2)*l_c away) forms round piles; 4 "
         "is the paper's eq. 14, whose rows and columns settle independently (stripes)"),
    REAL("sand.creep", sand_creep, 0, 1e6, 0, "m2/s",
         "linear creep of sand (hillslope diffusion): sand also moves below the angle of "
         "repose, at D*dt/l_c^2 of the height difference per step"),
    BOOL("sand.slippage_outflow_border", outflow_slippage, 0,
         "sand slips off the domain border (false: reflecting wall)"),
    REAL("sand.petrification", petrification, 0, 10, 1e-4, "1/s",
         "rate at which sand turns into bedrock (petrified = rate * dt * sand)"),

    BOOL("erosion.enable", enable_vertical, 1,
         "vertical erosion: bedrock and sand dissolving, sediment deposition"),
    REAL("erosion.capacity", capacity, 0, 100, 0.1, "", "sediment capacity constant"),
    REAL("erosion.sand_dissolve", sand_dissolve, 0, 100, 0.05, "1/s", "sand dissolving rate"),
    REAL("erosion.deposition", deposition, 0, 100, 0.04, "1/s", "sediment deposition rate"),
    REAL("erosion.bedrock_dissolve", bedrock_dissolve, 0, 100, 0.01, "m/s",
         "bedrock dissolving rate (floor and ceiling erosion)"),
    REAL("erosion.min_scale", min_scale, 0, 10, 0.1, "",
         "minimum m of the slope and speed remaps m + (M - m) x"),
    REAL("erosion.max_scale", max_scale, 0, 10, 1, "",
         "maximum M of the slope and speed remaps (>= min_scale)"),
    REAL("erosion.water_max_height", water_max_height, 1e-6, 1e6, 10, "m",
         "water depth scale w_max over which capacity fades (1 - tanh(2w/w_max))"),
    REAL("erosion.sand_threshold", sand_threshold, 1e-6, 1e3, 0.01, "m",
         "sand thickness that fully shields bedrock from floor erosion"),
    REAL("erosion.slope_fade_start", slope_fade_start, 0, 0.999, 0.6, "sin",
         "tilt above which erosion fades back toward min_scale on steep slopes"),
    REAL("erosion.top_erosion_scale", top_erosion_scale, 1e-6, 1e6, 2, "m",
         "dry gap under a ceiling over which ceiling erosion fades out"),
    ENUM("erosion.law", erosion_law, "paper|stream_power", 2, 0,
         "how water erodes (both models): paper (capacity and incision ~ slope x speed, the "
         "paper's scenes) or stream_power (~ sqrt(q) x slope, q the unit discharge: incises "
         "the channels of real DEMs and leaves thin sheet flow on hillslopes nearly idle)"),
    REAL("erosion.critical_power", critical_power, 0, 1e3, 0, "m/s^0.5",
         "stream_power: sqrt(q) x sine of the slope below which water neither erodes nor "
         "carries sediment (the channel-head threshold; 0 = none)"),
    INT("erosion.spinup", erosion_spinup, 0, 1000000000, 0,
        "steps (global step count) during which water flows but nothing erodes (droplets "
        "wait too), so the discharge reaches the channels before they cut (both models)"),
    BOOL("erosion.base_level", base_level, 0,
         "layered model: a cell beside an outflow border or NoData sink erodes no bedrock, so "
         "the outlets are a fixed base level and rivers cut down towards them, no trench runs "
         "up from an edge (the heightfield's is heightfield.base_level)"),
    BOOL("erosion.capacity_fade", capacity_fade, 1,
         "layered model: the sediment capacity fades with the water's depth as the bedrock "
         "incision does (1 - tanh(2w/w_max)); false: only the incision fades, so a deep river "
         "carries the load its discharge gives while a still pool (no surface tilt) holds none"),
    ENUM("erosion.tilt", erosion_tilt, "steepest|downhill|no_pits", 3, 0,
         "layered model: where the erosion law reads the surface's tilt: steepest (everywhere, "
         "the paper's), downhill (only where the water's outflow runs downhill: water "
         "climbing out of a scour hole does not cut its far rim, so the hole fills) or no_pits "
         "(everywhere but in a pit, a cell whose ground lies below its four neighbours': its "
         "still water does not scour it deeper, and it fills)"),

    BOOL("horizontal.enable", enable_horizontal, 1,
         "horizontal erosion of walls by flowing water, splitting columns (overhangs)"),
    REAL("horizontal.min_slope", horiz_min_slope, 0, 0.999, 0.9, "sin",
         "wall steepness where horizontal erosion starts (smoothstep to vertical)"),
    REAL("horizontal.strength", horiz_strength, 0, 100, 0.1, "", "horizontal erosion strength"),
    REAL("horizontal.split_size", split_size, 1e-3, 1e3, 0.75, "m",
         "damage at which a column splits in two"),
    REAL("horizontal.damage_recovery", damage_recovery, 0, 100, 0.005, "m/s",
         "rate at which horizontal-erosion damage heals (no rock is removed)"),
    REAL("horizontal.reference_cell", horiz_reference_cell, 0, 1e3, 0, "m",
         "cell size at which min_slope and damage_recovery hold, so a scene erodes alike on "
         "any grid: a wall's slope is taken over this run and healing scales by it / cell "
         "size (0 = the run's cell size, the reference)"),
    BOOL("horizontal.reference_slope", horiz_reference_slope, 1,
         "with reference_cell set, a wall's slope is read as its rise over reference_cell "
         "(true) or over the run's own cell (false: reference_cell then scales the healing "
         "only); the rise is the step to the next cell either way, so true makes faces stop "
         "steeper on finer cells"),
    BOOL("horizontal.notch_wall", horiz_notch_wall, 0,
         "water in a roofed gap (a notch, a cave) wears the rock that rises to the gap's roof "
         "beside it as a vertical face (sin beta = 1), whatever the cell size"),

    BOOL("support.enable", enable_support, 1,
         "bedrock support check: unsupported columns collapse"),
    BOOL("support.use_weight", use_weight, 1,
         "the weight of bedrock, sand and water counts against a column's support"),
    REAL("support.density_bedrock", rho_bedrock, 0, 1e5, 2600, "kg/m3", "density of bedrock"),
    REAL("support.density_sand", rho_sand, 0, 1e5, 1600, "kg/m3", "density of sand"),
    REAL("support.density_water", rho_water, 0, 1e5, 1000, "kg/m3", "density of water"),
    REAL("support.bedrock_support", bedrock_support, 0, 1e12, 60000, "kg/m2",
         "support carried per contact between overlapping bedrock columns"),
    REAL("support.border_support", border_support, 0, 1e12, 60000, "kg/m2",
         "support offered by the world beyond the domain border"),
    BOOL("support.border_support_enable", enable_border_support, 1,
         "columns at the domain border draw support from beyond it"),
    REAL("support.min_bedrock", min_bedrock, 0, 1e6, 1, "m", "bedrock thinner than this collapses"),
    REAL("support.max_propagation_distance", max_prop_distance, 1e-3, 1e9, 100, "m",
         "distance stability travels per support cycle (sets the cycle length)"),
    INT("support.iterations", prop_iterations, 1, 1000, 5,
        "propagation iterations per step (two red-black half sweeps each)"),

    BOOL("thermal.enable", enable_thermal, 0,
         "thermal erosion: material steeper than the talus angle slides to lower neighbours "
         "(8 pipes); layered model: top columns only, bedrock weathers into sand"),
    REAL("thermal.talus_angle", thermal_talus_deg, 0, 89, 30, "deg",
         "talus angle: slopes steeper than this shed material"),
    REAL("thermal.rate", thermal_rate, 0, 1e3, 0.1, "1/s",
         "K_t: share of half the excess over the talus slope moved per second (the step "
         "fraction is capped at 2/9 so nothing oscillates)"),
    REAL("thermal.creep", thermal_creep, 0, 1e6, 0, "m2/s",
         "heightfield model, with thermal.enable: linear creep (hillslope diffusion) below the "
         "talus angle, "
         "D*dt/l_c^2 of the height difference per step over 8 pipes; it rounds the one-cell "
         "crests and streaks that water erosion leaves (0: off)"),
    INT("thermal.every", thermal_every, 1, 1000000, 1,
        "thermal erosion on the steps divisible by this, each covering that many steps' time "
        "(the same rate per second while the step fraction stays under its 2/9 cap; a slow "
        "process need not run every step)"),
    BOOL("thermal.crests_only", thermal_crests, 0,
         "the talus rule moves material only off one-cell crests: through a pipe whose "
         "opposite pipe falls steeper than the talus angle too (a one-cell fin, spur or "
         "pillar), never off a cliff or slope with higher ground behind it"),
    REAL("thermal.bank_angle", thermal_bank_deg, 0, 89, 0, "deg",
         "steps the run itself cut (a cell lowered more than its upper neighbour since the "
         "run began) shed to this angle even where crests_only keeps them: a gorge a river "
         "cuts widens into a V, a DEM's own cliffs stay (0: off; turns simulation.masks' "
         "accumulators on, which it reads)"),
    REAL("thermal.hardness", hardness, 0, 1, 0.5, "",
         "hardness H of cells without a --hardness raster (1 = unerodible); thermal and "
         "heightfield dissolution run at 1 - H of their rate"),

    BOOL("heightfield.hydraulic", hf_hydraulic, 1,
         "heightfield model: run the water stages (false: thermal erosion only)"),
    BOOL("heightfield.water_swell", hf_water_swell, 1,
         "dissolved rock raises the water by its height and deposits lower it (Jako eq. 9c/10c, "
         "booked as hf_water_swell/shrink); false keeps the water as it is"),
    REAL("heightfield.rain_scale", hf_rain_scale, 0, 1e3, 1, "",
         "K_r: scales water.rain or the --rain-map rate"),
    REAL("heightfield.pipe_area", hf_pipe_area, 0, 1e12, 0, "m2",
         "A: cross-section of a virtual pipe; 0 = cell_size^2"),
    REAL("heightfield.pipe_length", hf_pipe_length, 0, 1e7, 0, "m",
         "l: length of a virtual pipe; 0 = cell_size"),
    REAL("heightfield.capacity", hf_capacity, 0, 1e3, 0.05, "s",
         "K_c: sediment capacity per m/s of flow speed and unit slope sine (stream_power: per "
         "m of depth and unit sqrt(q) x slope sine)"),
    REAL("heightfield.dissolve", hf_dissolve, 0, 1e3, 0.1, "1/s",
         "K_s: dissolving rate below capacity (times 1 - hardness)"),
    REAL("heightfield.deposit", hf_deposit, 0, 1e3, 0.5, "1/s",
         "K_d: deposition rate above capacity"),
    REAL("heightfield.max_depth", hf_max_depth, 1e-6, 1e6, 10, "m",
         "l_max: water depth at which erosion has faded to zero (linear fade)"),
    REAL("heightfield.min_tilt", hf_min_tilt, 0, 1, 0.01, "sin",
         "floor of the slope factor of the capacity, so flat channels carry sediment"),
    REAL("heightfield.river_width", hf_river_width, 0, 1e5, 0, "m",
         "stream_power: the width a river's discharge runs in where the cells are wider, so "
         "its unit discharge q = Q / min(cell_size, river_width) does not shrink on coarse "
         "grids; 0 = the cell's width"),
    BOOL("heightfield.no_dam", hf_no_dam, 0,
         "a river's deposit never lifts its bed above the lowest water surface (terrain + water) "
         "of its 4 neighbours: no dam across its own course, the excess load travels on"),
    BOOL("heightfield.base_level", hf_base_level, 0,
         "dissolving never takes a cell's bed below the lowest bed of its neighbours, and an "
         "outflow border or NoData sink is a fixed base level (its virtual neighbour is its own "
         "height): rivers cut down towards their outlets, no pit or border trench deepens"),
    REAL("heightfield.sheet_capacity", hf_sheet, 0, 1, 1, "",
         "share of the capacity kept by water that spreads in the open (it wets more than 2 "
         "of its neighbours to half its depth, its surface falls by more than sheet_slope, "
         "and no valley walls rise on both sides within sheet_reach: sheet flow on a fan or a "
         "wide valley floor, not a lake, a one-cell river or a river in a gorge), so a river "
         "leaving its channel lays its load where it spreads; with no_dam such a deposit never "
         "lifts a cell's bed more than sheet_slope above both neighbours' beds of an axis "
         "(without it, one-cell ridges can grow); 1 = off (dem-heightfield: 0.1)"),
    REAL("heightfield.sheet_slope", hf_sheet_slope, 0, 1, 0.001, "m/m",
         "with sheet_capacity < 1: the least fall of a spreading water surface to its lowest "
         "neighbour's, per metre (flatter: a lake, or a plain's river that keeps its "
         "capacity), and how far a spreading deposit may lift a cell's bed above both "
         "neighbours' beds of an axis, per metre of cell"),
    INT("heightfield.sheet_reach", hf_sheet_reach, 1, 16, 4,
        "cells: with sheet_capacity < 1, water spreads only in the open: where the water "
        "surfaces this far away on both sides along each axis and diagonal do not both stand "
        "above its own (a valley wall), so a river between the walls of a gorge keeps its "
        "capacity while a fan or a valley floor wider than twice this lays its load; each step "
        "reads this much further (a tiled run's halo grows by it)"),
    REAL("heightfield.sheet_wall", hf_sheet_wall, 0, 100, 0.1, "m/m",
         "with sheet_capacity < 1: how steeply the ground must rise from the water (over "
         "sheet_reach cells) on both sides to count as a valley wall"),
    REAL("heightfield.grade", hf_grade, 0, 1, 0, "m/m",
         "with base_level: the least descent a river keeps; dissolving never takes a bed below "
         "the lowest bed of its neighbours plus grade x cell_size, so a river graded down to its "
         "outlet keeps this slope instead of planing a flat trench at the outlet's height"),
    REAL("heightfield.grade_share", hf_grade_share, 0, 1, 0, "",
         "with base_level: the share of its input's drop a bed keeps; dissolving never takes "
         "a bed below the lowest bed of its neighbours plus this share of the input's drop "
         "there (to its lowest neighbour, less grade_noise), so a knick near a fixed outlet "
         "retreats as a graded reach, not a flat at the outlet's height, while drops at the "
         "DEM's noise (a plain's rivers) stay free to cut; 4 bytes a cell"),
    REAL("heightfield.grade_noise", hf_grade_noise, 0, 100, 2, "m",
         "with grade_share: input drops up to this are the DEM's noise (SRTM heights are whole "
         "metres), not a slope to keep; only the drop beyond it is kept"),
    ENUM("heightfield.neighbours", hf_diagonal, "4|8", 2, 0,
         "water pipes to 4 neighbours (Mei et al.) or 8: diagonal pipes of length sqrt(2) x "
         "cell_size too, with their own fluxes, the sediment carried along all 8 (isotropic "
         "flow; diagonal canyons narrower than a cell drain instead of holding lakes)"),
    REAL("heightfield.min_hardness", hf_min_hardness, 0, 1, 0.1, "",
         "R_min: deposited sediment softens the hardness down to this value"),
    REAL("heightfield.softening", hf_softening, 0, 1e6, 5, "1/m",
         "K_h: hardness lost per metre of deposition excess (times K_s, dt)"),
    REAL("heightfield.evaporation", hf_evaporation, 0, 1e3, 0.015, "1/s",
         "K_e: water lost per second as a fraction of the depth"),

    BOOL("particles.enable", pt_enable, 0,
         "particle (droplet) erosion, one batch of droplets per step, on either model "
         "(kernels/particles.h)"),
    INT("particles.density_log2", pt_density_log2, 1, 24, 8,
        "n: 2^-n droplets per cell and batch (8 stays near serial droplets; 4 does not, and "
        "below 6 erode warns: a dense batch overshoots)"),
    INT("particles.every", pt_every, 1, 1000000, 1, "a batch on the steps divisible by this"),
    REAL("particles.path_length", pt_path_length, 1e-3, 1e7, 32, "m",
         "length of a droplet's life along its path; it moves one cell a move, so "
         "L = path_length / cell_size moves (rounded, at least 1, at most 256: beyond, capped and "
         "erode warns); the stage "
         "radius is L + brush cells + 1"),
    REAL("particles.brush_radius", pt_brush_length, 1e-3, 1e6, 2, "m",
         "radius of the erosion brush max(0, r - d), centred on the droplet; r = "
         "brush_radius / cell_size cells (rounded, at least 1, at most 8: beyond, capped and "
         "erode warns)"),
    REAL("particles.inertia", pt_inertia, 0, 1, 0.3, "",
         "share of the old direction kept against the downhill gradient (per move)"),
    REAL("particles.capacity", pt_capacity, 0, 1e6, 8, "m",
         "K_c: load carried per unit slope (-dh/cell_size), unit speed and unit water "
         "(the load is a height in m spread by the brush)"),
    REAL("particles.min_slope", pt_min_slope, 0, 1e3, 0.01, "m/m",
         "floor of the slope in the capacity, so flat runs still carry"),
    REAL("particles.erosion", pt_erosion, 0, 1, 0.7, "1/m",
         "k_e: share of the missing load taken per metre of path (per move: 1 - (1 - k_e)^"
         "cell_size; times 1 - hardness, at most the drop)"),
    REAL("particles.deposition", pt_deposition, 0, 1, 0.3, "1/m",
         "k_d: share of the load above capacity dropped per metre of path (per move: 1 - (1 - "
         "k_d)^cell_size)"),
    REAL("particles.evaporation", pt_evaporation, 0, 1, 0.02, "1/m",
         "e: share of a droplet's water lost per metre of path"),
    REAL("particles.water_gain", pt_water_gain, 0, 1e6, 0, "1/m",
         "water a droplet gathers per metre of path, in units of w (w = w*(1 - e) + gain per "
         "metre): a flow line's growing discharge, so capacity follows stream power downstream"),
    REAL("particles.gravity", pt_gravity, 0, 1e6, 1, "1/m",
         "gamma: speed^2 gained per metre of drop (v = sqrt(max(0, v^2 - gamma*dh)))"),
    REAL("particles.initial_speed", pt_initial_speed, 0, 1e6, 0.9, "", "v0: speed at birth"),
    REAL("particles.initial_water", pt_initial_water, 1e-6, 1e6, 1, "", "w0: water at birth"),
    BOOL("particles.deposit_at_death", pt_deposit_at_death, 1,
         "deposit the load where a droplet ends its life (false: booked as pt_lost)"),
    REAL("particles.bedrock_erodibility", pt_bedrock_erodibility, 0, 1, 1, "",
         "layered model: rate of bedrock erosion against sand's once a droplet's sand is gone"),
    REAL("particles.water_stop", pt_water_stop, 0, 1e6, 0.05, "m",
         "layered model: a droplet reaching water this deep deposits its load and stops"),
    REAL("particles.river_depth", pt_river_depth, 0, 1e6, 0, "m",
         "a droplet reaching pipe water this deep ends there and hands its load to the water's "
         "suspended sediment, which the pipes carry or settle by their capacity (0: off)"),
    REAL("particles.river_discharge", pt_river_discharge, 0, 1e9, 0, "m^2/s",
         "the same where the pipes' unit discharge (a cell's outflow / cell size) reaches this "
         "(0: off)"),

    ENUM("input.nodata", nodata_policy, "outflow|wall|fill", 3, 0,
         "NoData cells: outflow (sinks), wall (reflecting) or fill (holes filled at load)"),
    INPUT_REAL("input.z_scale", z_scale, 1e-6, 1e6, 1, "",
               "factor applied to input heights (0.3048 for feet)"),
    INPUT_REAL("input.cell_size", cell_size, 0, 1e7, 0, "m",
               "cell size override; 0 takes it from the raster"),

    SOURCE(1),
    SOURCE(2),
    SOURCE(3),
    SOURCE(4),
};

#define TABLE_COUNT ((int)(sizeof table / sizeof table[0]))
_Static_assert(sizeof table / sizeof table[0] <= TALUS_PARAM_MAX,
               "raise TALUS_PARAM_MAX: the parameter table outgrew the set mask");
_Static_assert(offsetof(param_decl, info) == 0, "talus_param_at relies on info first");

/* Longest text compared by the suggestion search; longer input gets none. */
#define SUGGEST_MAX TALUS_PARAM_KEY_MAX
/* Longest value text accepted. */
#define VALUE_MAX 256

int talus_param_count(void) {
  return TABLE_COUNT;
}

const talus_param_info *talus_param_at(int index) {
  return index >= 0 && index < TABLE_COUNT ? &table[index].info : NULL;
}

int talus_param_find(const char *key) {
  if (!key) return -1;
  for (int i = 0; i < TABLE_COUNT; i++)
    if (!strcmp(table[i].info.key, key)) return i;
  return -1;
}

/* Length of the section part of a declared key ("water" in "water.rain"). */
static size_t section_len(const char *key) {
  const char *dot = strchr(key, '.');
  return dot ? (size_t)(dot - key) : strlen(key);
}

/* ---------------------------------------------------------------------
 * Nearest-key suggestions.
 * ------------------------------------------------------------------- */

/* Optimal string alignment distance (Levenshtein plus adjacent swaps, which
 * are the commonest typo). Both lengths must be <= SUGGEST_MAX. */
static int osa_distance(const char *a, size_t la, const char *b, size_t lb) {
  int d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

/* Scores a declared key against a typed one: the distance of the whole key,
 * or of the name part alone plus one (right name, wrong or missing section).
 * INT_MAX when neither is close enough to be worth suggesting. */
static int key_score(const char *typed, const char *declared) {
  size_t lt = strlen(typed), ld = strlen(declared);
  int best = INT_MAX, full = osa_distance(typed, lt, declared, ld);
  int full_limit = lt / 4 > 2 ? (int)(lt / 4) : 2;
  if (full <= full_limit) best = full;
  const char *tname = strrchr(typed, '.');
  tname = tname ? tname + 1 : typed;
  const char *dname = declared + section_len(declared) + 1;
  size_t ltn = strlen(tname);
  int name = osa_distance(tname, ltn, dname, strlen(dname));
  if (name <= (int)(ltn / 4) && name + 1 < best) best = name + 1;
  return best;
}

/* The declared key nearest to `typed`, or NULL when none is close. */
static const char *nearest_key(const char *typed) {
  if (strlen(typed) > SUGGEST_MAX) return NULL;
  int best = INT_MAX;
  const char *found = NULL;
  for (int i = 0; i < TABLE_COUNT; i++) {
    int s = key_score(typed, table[i].info.key);
    if (s < best) best = s, found = table[i].info.key;
  }
  return found;
}

/* Records the unknown-key error, with a suggestion when one is close. */
talus_status talus_params_unknown_key(const char *key, const char *where) {
  const char *near = nearest_key(key);
  if (near)
    return talus_fail(TALUS_ERR_PARAM, "params", "%sunknown key '%s'; did you mean '%s'?", where,
                      key, near);
  return talus_fail(TALUS_ERR_PARAM, "params", "%sunknown key '%s' (`talus params` lists them)",
                    where, key);
}

/* 1 when some declared key lies in section `name` (len bytes). */
static int section_known(const char *name, size_t len) {
  for (int i = 0; i < TABLE_COUNT; i++)
    if (section_len(table[i].info.key) == len && !strncmp(table[i].info.key, name, len)) return 1;
  return 0;
}

/* Records the unknown-section error, suggesting the nearest section. */
static talus_status unknown_section(const char *name, const char *where) {
  size_t ln = strlen(name);
  int best = INT_MAX, limit = ln / 3 > 1 ? (int)(ln / 3) : 1;
  const char *found = NULL;
  size_t found_len = 0;
  for (int i = 0; i < TABLE_COUNT && ln <= SUGGEST_MAX; i++) {
    const char *k = table[i].info.key;
    int d = osa_distance(name, ln, k, section_len(k));
    if (d <= limit && d < best) best = d, found = k, found_len = section_len(k);
  }
  if (found)
    return talus_fail(TALUS_ERR_PARAM, "params", "%sunknown section [%s]; did you mean [%.*s]?",
                      where, name, (int)found_len, found);
  return talus_fail(TALUS_ERR_PARAM, "params", "%sunknown section [%s] (`talus params` lists them)",
                    where, name);
}

talus_status talus_params_section_check(const char *name, size_t cap, const char *where) {
  if (strlen(name) >= cap || !section_known(name, strlen(name)))
    return unknown_section(name, where);
  return TALUS_OK;
}
/* ---------------------------------------------------------------------
 * Values: reading and writing the storage, parsing and formatting text.
 * ------------------------------------------------------------------- */

/* The stored value of key i as a double. */
static double value_get(const talus_params *p, int i) {
  const char *at = (const char *)p + table[i].offset;
  switch (table[i].st) {
  case ST_FLOAT:
    return *(const float *)at;
  case ST_INT:
    return *(const int *)at;
  case ST_U32:
    return *(const uint32_t *)at;
  case ST_DOUBLE:
    return *(const double *)at;
  }
  return 0.0;
}

/* Stores v (already parsed and range-checked) into key i. */
static void value_put(talus_params *p, int i, double v) {
  char *at = (char *)p + table[i].offset;
  switch (table[i].st) {
  case ST_FLOAT:
    *(float *)at = (float)v;
    break;
  case ST_INT:
    *(int *)at = (int)v;
    break;
  case ST_U32:
    *(uint32_t *)at = (uint32_t)v;
    break;
  case ST_DOUBLE:
    *(double *)at = v;
    break;
  }
}

/* Finds choice `index` of "a|b|c": its start and length; 0 if absent. */
static int enum_choice(const char *choices, int index, const char **start, size_t *len) {
  const char *c = choices;
  for (int i = 0; i < index && c; i++) {
    c = strchr(c, '|');
    if (c) c++;
  }
  if (!c) return 0;
  const char *bar = strchr(c, '|');
  *start = c;
  *len = bar ? (size_t)(bar - c) : strlen(c);
  return 1;
}

/* The %g precision that prints v with just enough digits to read back
 * exactly (to the float that holds it when as_float). %g drops trailing
 * zeros, so starting at 6 digits still gives "0.07" and "10" rather than
 * "1e+01". */
static int real_digits(double v, int as_float) {
  char buf[40];
  int prec = 6;
  for (; prec < 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (as_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  return prec;
}

/* Writes v as %g text with real_digits(v, as_float) digits. */
static void format_real(char *buf, size_t n, double v, int as_float) {
  snprintf(buf, n, "%.*g", real_digits(v, as_float), v);
}

/* Formats a value of key i as text: numbers, true/false, enum names. */
static void format_value(char *buf, size_t n, int i, double v) {
  const talus_param_info *info = &table[i].info;
  const char *s;
  size_t len;
  switch (info->type) {
  case TALUS_PARAM_REAL:
    format_real(buf, n, v, table[i].st == ST_FLOAT);
    break;
  case TALUS_PARAM_INT:
    snprintf(buf, n, "%.0f", v);
    break;
  case TALUS_PARAM_BOOL:
    snprintf(buf, n, "%s", v != 0.0 ? "true" : "false");
    break;
  case TALUS_PARAM_ENUM:
    if (!enum_choice(info->choices, (int)v, &s, &len)) s = "?", len = 1;
    snprintf(buf, n, "%.*s", (int)len, s);
    break;
  }
}

/* Formats the allowed values of key i: "[min, max]" or the choices. */
static void format_range(char *buf, size_t n, int i) {
  const talus_param_info *info = &table[i].info;
  char lo[32], hi[32];
  if (info->type == TALUS_PARAM_BOOL) {
    snprintf(buf, n, "true|false");
  } else if (info->type == TALUS_PARAM_ENUM) {
    snprintf(buf, n, "%s", info->choices);
  } else {
    format_real(lo, sizeof lo, info->min, 0);
    format_real(hi, sizeof hi, info->max, 0);
    snprintf(buf, n, "[%s, %s]", lo, hi);
  }
}

/* Parses a real: decimal or exponent form, finite, nothing trailing. */
static talus_status parse_real(int i, const char *text, double *out, const char *where) {
  const char *key = table[i].info.key;
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || strpbrk(text, "xX"))
    return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: '%s' is not a number", where, key, text);
  if (*end)
    return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: '%s' has trailing characters '%s'", where,
                      key, text, end);
  if (!isfinite(v))
    return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: '%s' is not a finite number", where, key,
                      text);
  *out = v;
  return TALUS_OK;
}

/* Parses a base-10 integer with nothing trailing. */
static talus_status parse_int(int i, const char *text, double *out, const char *where) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno == ERANGE)
    return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: '%s' is not an integer", where,
                      table[i].info.key, text);
  *out = (double)v;
  return TALUS_OK;
}

/* Parses true/false, 1/0, yes/no, on/off (any case). */
static talus_status parse_bool(int i, const char *text, double *out, const char *where) {
  static const char *const yes[] = {"true", "1", "yes", "on"};
  static const char *const no[] = {"false", "0", "no", "off"};
  for (int j = 0; j < 4; j++) {
    if (!strcasecmp(text, yes[j])) return *out = 1.0, TALUS_OK;
    if (!strcasecmp(text, no[j])) return *out = 0.0, TALUS_OK;
  }
  return talus_fail(TALUS_ERR_RANGE, "params",
                    "%s%s: '%s' is not a boolean (true/false, 1/0, yes/no, on/off)", where,
                    table[i].info.key, text);
}

/* Parses an enum choice by name (any case); the value is its index. */
static talus_status parse_enum(int i, const char *text, double *out, const char *where) {
  const char *s;
  size_t len;
  for (int j = 0; enum_choice(table[i].info.choices, j, &s, &len); j++)
    if (strlen(text) == len && !strncasecmp(text, s, len)) return *out = j, TALUS_OK;
  return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: '%s' is not one of %s", where,
                    table[i].info.key, text, table[i].info.choices);
}

/* Parses text (trimmed) for key i by its type and checks the range. */
static talus_status parse_value(int i, const char *text, double *out, const char *where) {
  const talus_param_info *info = &table[i].info;
  talus_status st = TALUS_OK;
  switch (info->type) {
  case TALUS_PARAM_REAL:
    st = parse_real(i, text, out, where);
    break;
  case TALUS_PARAM_INT:
    st = parse_int(i, text, out, where);
    break;
  case TALUS_PARAM_BOOL:
    return parse_bool(i, text, out, where);
  case TALUS_PARAM_ENUM:
    return parse_enum(i, text, out, where);
  }
  if (st || (*out >= info->min && *out <= info->max)) return st;
  char range[80];
  format_range(range, sizeof range, i);
  return talus_fail(TALUS_ERR_RANGE, "params", "%s%s = %s is outside %s%s%s", where, info->key,
                    text, range, info->unit[0] ? " " : "", info->unit);
}

/* Sets key from value text; `where` prefixes messages ("file:line: " or ""). */
talus_status talus_params_set_at(talus_params *p, const char *key, const char *value,
                                 const char *where) {
  int i = talus_param_find(key);
  if (i < 0) return talus_params_unknown_key(key, where);
  while (isspace((unsigned char)*value))
    value++;
  size_t len = strlen(value);
  while (len && isspace((unsigned char)value[len - 1]))
    len--;
  if (len == 0) return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: missing value", where, key);
  if (len >= VALUE_MAX)
    return talus_fail(TALUS_ERR_RANGE, "params", "%s%s: value longer than %d characters", where,
                      key, VALUE_MAX - 1);
  char text[VALUE_MAX];
  memcpy(text, value, len);
  text[len] = '\0';
  double v = 0.0;
  talus_status st = parse_value(i, text, &v, where);
  if (st) return st;
  value_put(p, i, v);
  p->set[i] = 1;
  return TALUS_OK;
}

/* ---------------------------------------------------------------------
 * Parameter sets.
 * ------------------------------------------------------------------- */

talus_status talus_params_create(talus_params **out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "params", "no output pointer");
  talus_params *p = calloc(1, sizeof *p);
  *out = NULL;
  if (!p) return talus_fail(TALUS_ERR_NOMEM, "params", "no memory for a parameter set");
  talus_kparams_defaults(&p->k);
  p->z_scale = 1.0;
  p->cell_size = 0.0;
  *out = p;
  return TALUS_OK;
}

void talus_params_free(talus_params *params) {
  free(params);
}

talus_status talus_params_copy(const talus_params *src, talus_params **out) {
  if (!src) return talus_fail(TALUS_ERR_ARGUMENT, "params", "no parameter set to copy");
  talus_status st = talus_params_create(out);
  if (!st) **out = *src;
  return st;
}

talus_status talus_params_set(talus_params *params, const char *key, const char *value) {
  if (!params || !key || !value)
    return talus_fail(TALUS_ERR_ARGUMENT, "params", "set needs a parameter set, key and value");
  return talus_params_set_at(params, key, value, "");
}

talus_status talus_params_get(const talus_params *params, const char *key, double *out) {
  if (!params || !key || !out)
    return talus_fail(TALUS_ERR_ARGUMENT, "params", "get needs a parameter set, key and output");
  int i = talus_param_find(key);
  if (i < 0) return talus_params_unknown_key(key, "");
  *out = value_get(params, i);
  return TALUS_OK;
}

int talus_params_is_set(const talus_params *p, const char *key) {
  int i = talus_param_find(key);
  return p && i >= 0 && p->set[i];
}

void talus_params_overlay(talus_params *dst, const talus_params *src) {
  for (int i = 0; i < TABLE_COUNT; i++)
    if (src->set[i]) {
      value_put(dst, i, value_get(src, i));
      dst->set[i] = 1;
    }
}

/* Moves the active sources (strength > 0 or radius > 0) to the front, in
 * section order, and counts them. */
static void pack_sources(talus_kparams *k) {
  talus_source packed[TALUS_MAX_SOURCES];
  int n = 0;
  memset(packed, 0, sizeof packed);
  for (int i = 0; i < TALUS_MAX_SOURCES; i++)
    if (k->sources[i].strength > 0.0f || k->sources[i].radius > 0.0f) packed[n++] = k->sources[i];
  memcpy(k->sources, packed, sizeof packed);
  k->num_sources = n;
}

/* Checks relations between keys that single ranges cannot express. */
static talus_status check_consistency(const talus_kparams *k) {
  if (k->min_scale > k->max_scale)
    return talus_fail(TALUS_ERR_RANGE, "params",
                      "erosion.min_scale = %g exceeds erosion.max_scale = %g", (double)k->min_scale,
                      (double)k->max_scale);
  /* The pipe update scales the old flux by (1 - damping*dt); past 1 it flips. */
  if ((double)k->pipe_damping * (double)k->dt > 1.0)
    return talus_fail(TALUS_ERR_RANGE, "params",
                      "water.pipe_damping * simulation.dt = %g must be <= 1",
                      (double)k->pipe_damping * (double)k->dt);
  /* Evaporation keeps d·(1 - K_e·dt); past 1 the factor would go negative. */
  if ((double)k->hf_evaporation * (double)k->dt > 1.0)
    return talus_fail(TALUS_ERR_RANGE, "params",
                      "heightfield.evaporation * simulation.dt = %g must be <= 1",
                      (double)k->hf_evaporation * (double)k->dt);
  return TALUS_OK;
}

talus_status talus_params_to_kparams(const talus_params *p, double cell, talus_kparams *out) {
  if (!p || !out) return talus_fail(TALUS_ERR_ARGUMENT, "params", "no parameter set or output");
  talus_kparams k = p->k;
  if (p->cell_size > 0.0) k.cell_size = (float)p->cell_size;
  if (cell > 0.0) k.cell_size = (float)cell;
  talus_kparams_finest_water(&k); /* the grid is final: dt from here on is the step's */
  pack_sources(&k);
  talus_status st = check_consistency(&k);
  if (!st) st = talus_kparams_derive(&k);
  if (!st) *out = k;
  return st;
}

/* ---------------------------------------------------------------------
 * Writers.
 * ------------------------------------------------------------------- */

static const char *type_name(talus_param_type t) {
  static const char *const names[] = {"real", "int", "bool", "enum"};
  return (unsigned)t < 4 ? names[t] : "?";
}

/* 1 when key i passes the filter: none, its section, or the key itself. */
static int filter_match(int i, const char *filter) {
  const char *key = table[i].info.key;
  if (!filter || !*filter || !strcmp(filter, key)) return 1;
  return strlen(filter) == section_len(key) && !strncmp(filter, key, section_len(key));
}

int talus_params_print_table(FILE *to, const char *section_filter) {
  int printed = 0;
  size_t last_len = 0;
  const char *last = NULL;
  for (int i = 0; i < TABLE_COUNT; i++) {
    const talus_param_info *info = &table[i].info;
    if (!filter_match(i, section_filter)) continue;
    size_t sl = section_len(info->key);
    if (!last || sl != last_len || strncmp(last, info->key, sl)) {
      if (!printed)
        fprintf(to, "%-34s %-5s %-9s %-22s %-6s %s\n", "key", "type", "default", "range", "unit",
                "description");
      fprintf(to, "%s[%.*s]\n", printed ? "\n" : "", (int)sl, info->key);
      last = info->key, last_len = sl;
    }
    char def[40], range[80];
    format_value(def, sizeof def, i, info->def);
    format_range(range, sizeof range, i);
    fprintf(to, "  %-32s %-5s %-9s %-22s %-6s %s\n", info->key, type_name(info->type), def, range,
            info->unit, info->description);
    printed++;
  }
  return printed;
}

/* Key i's value v as a new JSON value (the caller's): a number with as
 * many digits as format_value prints, true/false, or the enum's name. */
static talus_json *json_value(int i, double v) {
  const talus_param_info *info = &table[i].info;
  char text[64];
  switch (info->type) {
  case TALUS_PARAM_REAL:
    snprintf(text, sizeof text, "%%.%dg", real_digits(v, table[i].st == ST_FLOAT));
    return talus_json_real(v, text);
  case TALUS_PARAM_INT:
    return talus_json_int((int64_t)v);
  case TALUS_PARAM_BOOL:
    return talus_json_bool(v != 0.0);
  case TALUS_PARAM_ENUM:
    break;
  }
  format_value(text, sizeof text, i, v);
  return talus_json_string(text);
}

talus_json *talus_params_json(const talus_params *p) {
  if (!p) {
    talus_fail(TALUS_ERR_ARGUMENT, "params", "no parameter set");
    return NULL;
  }
  talus_json *o = talus_json_object();
  talus_status st = TALUS_OK;
  for (int i = 0; !st && i < TABLE_COUNT; i++)
    st = talus_json_set(o, table[i].info.key, json_value(i, value_get(p, i)));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

talus_status talus_params_write_json(const talus_params *p, FILE *to, int indent) {
  if (!p || !to) return talus_fail(TALUS_ERR_ARGUMENT, "params", "no parameter set or stream");
  talus_json *o = talus_params_json(p);
  if (!o) return TALUS_ERR_NOMEM;
  talus_status st = talus_json_write(o, to, indent > 0 ? (indent - 1) / 2 : -1);
  talus_json_free(o);
  return st;
}

talus_status talus_params_print_ini(const talus_params *p, const char *version, FILE *to) {
  if (!p || !to) return talus_fail(TALUS_ERR_ARGUMENT, "params", "no parameter set or stream");
  fprintf(to, "; talus %s parameters: every key (load with -c FILE)\n",
          version ? version : TALUS_VERSION_STRING);
  const char *last = NULL;
  size_t last_len = 0;
  for (int i = 0; i < TABLE_COUNT; i++) {
    const talus_param_info *info = &table[i].info;
    size_t sl = section_len(info->key);
    if (!last || sl != last_len || strncmp(last, info->key, sl))
      fprintf(to, "\n[%.*s]\n", (int)sl, info->key);
    last = info->key, last_len = sl;
    char v[40], range[80], line[96];
    format_value(v, sizeof v, i, value_get(p, i));
    format_range(range, sizeof range, i);
    snprintf(line, sizeof line, "%s = %s", info->key + sl + 1, v);
    fprintf(to, "%-40s ; %s%s%s\n", line, range, info->unit[0] ? " " : "", info->unit);
  }
  return ferror(to) ? talus_fail(TALUS_ERR_IO, "params", "error writing the INI parameters")
                    : TALUS_OK;
}
