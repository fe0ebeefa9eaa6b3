/*
 * state.h — the data model every kernel sees: physics parameters, the tile
 * buffer (layer-major structure of arrays), the kernel context, the mass
 * ledger's flows, and the neighbour/border helpers.
 *
 * Design notes
 * ------------
 * - A tile buffer is a rectangle of the global grid (core plus halo). Each
 *   per-column field is stored layer-major: field[k*plane + y*pitch + x].
 *   Layer 0 of B is therefore a plain heightmap. Fluxes, pipes and slippage
 *   have 4 planes per layer: field[(k*4 + dir)*plane + y*pitch + x].
 * - Columns of a cell are sorted bottom-up; slots k >= count[cell] are
 *   stale and never read. The top column's ceiling is TALUS_TOP; the floor
 *   of column 0 is TALUS_BOTTOM. Floor of column k is C[k-1].
 * - Kernels address cells by buffer-local (x, y); global coordinates are
 *   buf.x0 + x, buf.y0 + y. Borders of the *domain* are decided from global
 *   coordinates (talus_nb_kind), never from the buffer's edges, so a tile
 *   interior edge is never a boundary.
 * - Concurrency rule: during a stage a kernel writes only its own cell's
 *   slots (all layers) and reads neighbours within the stage's declared
 *   radius. Stages are separated by barriers. Therefore results never depend
 *   on thread count or tiling.
 * - Directions: 0 R(+x), 1 U(+y), 2 L(-x), 3 D(-y); opposite = (d+2)&3.
 *   +y is "up" in the grid = increasing row index (row 0 is the first row of
 *   the raster). Geography does not matter to the physics.
 */
#ifndef TALUS_KERNELS_STATE_H
#define TALUS_KERNELS_STATE_H

#include "common/common.h"
#include "talus_ledger.h"
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Stage kernels the CPU backend's row loop must inline: GCC otherwise
 * calls the larger ones per cell (the loop instantiates each body three
 * times), which keeps nothing in registers across cells. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define TALUS_FORCE_INLINE __attribute__((always_inline))
#else
#define TALUS_FORCE_INLINE
#endif

/* Fully unrolls a loop over the 4 (8) directions, so that a CPU row loop
 * around the cell body holds no inner loop and can be an `omp simd` loop
 * (GCC does not unroll the larger direction loops by itself). */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define TALUS_UNROLL4 _Pragma("GCC unroll 4")
#define TALUS_UNROLL8 _Pragma("GCC unroll 8")
#else
#define TALUS_UNROLL4
#define TALUS_UNROLL8
#endif

#define TALUS_NZ_MAX      16
#define TALUS_TOP         FLT_MAX
#define TALUS_BOTTOM      (-FLT_MAX)
#define TALUS_EPS         1e-6f
#define TALUS_MAX_SOURCES 4

/* Planes of at least this many cells are first written by all threads
 * (OpenMP, static over rows, as the stages' loops), so each thread takes
 * the first touch of the pages it will use. */
#define TALUS_TILE_PARALLEL_CELLS 65536

/* The most int64 total planes per column the droplets keep in t->pt_acc
 * (kernels/particles.h, pt_plane and pt_planes): erosion (on heightfields
 * net of the deposits), load handed to the pipes' suspended sediment (the
 * river), deposit on the bed (layered stacks only). */
#define TALUS_PT_PLANES 3

/* The accumulator planes of t->acc (kernels/accum.h): flow [m³], wear [m],
 * deposition [m]. */
enum { TALUS_ACC_FLOW = 0, TALUS_ACC_WEAR = 1, TALUS_ACC_DEPOSITION = 2, TALUS_ACC_PLANES = 3 };

enum { TALUS_DIR_R = 0, TALUS_DIR_U = 1, TALUS_DIR_L = 2, TALUS_DIR_D = 3 };

TALUS_HD static inline int talus_dir_dx(int d) {
  return d == 0 ? 1 : (d == 2 ? -1 : 0);
}
TALUS_HD static inline int talus_dir_dy(int d) {
  return d == 1 ? 1 : (d == 3 ? -1 : 0);
}

typedef enum talus_model { TALUS_MODEL_LAYERED = 0, TALUS_MODEL_HEIGHTFIELD = 1 } talus_model;

/* How water erodes (erosion.law; both models). */
typedef enum talus_erosion_law {
  TALUS_LAW_PAPER = 0,       /* capacity ~ slope x speed: the paper's metre-scale scenes */
  TALUS_LAW_STREAM_POWER = 1 /* capacity ~ sqrt(unit discharge) x slope: real DEMs */
} talus_erosion_law;

/* Where the erosion law reads the surface's tilt (erosion.tilt; layered). */
typedef enum talus_erosion_tilt {
  TALUS_TILT_STEEPEST = 0, /* the steepest tilt, whichever way the water flows (the paper) */
  TALUS_TILT_DOWNHILL = 1, /* the steepest tilt where the outflow runs downhill; none uphill */
  TALUS_TILT_NO_PITS = 2   /* the steepest tilt but in a pit (ground below all 4 neighbours') */
} talus_erosion_tilt;

typedef enum talus_nodata_policy {
  TALUS_NODATA_OUTFLOW = 0, /* NoData cells are sinks: matter entering leaves */
  TALUS_NODATA_WALL = 1,    /* NoData cells are reflecting walls */
  TALUS_NODATA_FILL = 2     /* holes filled at load time; no masked cells */
} talus_nodata_policy;

typedef struct talus_source {
  float strength; /* water added [m/s] */
  float radius;   /* [m] */
  float x, y;     /* centre [m] from the corner of cell (0,0) */
  float flux[4];  /* flux acceleration R,U,L,D [m³/s²] */
} talus_source;

/* The droplets' bounds in cells (kernels/particles.h): they bound the
 * stage radius L + 2r + 2; talus_kparams_derive caps L and r at them. */
#define PT_MOVES_MAX 256 /* the most moves L of a droplet's life (bounds the stage radius) */
#define PT_BRUSH_MAX 8   /* the widest brush r [cells] */

/*
 * Physics parameters, plain data copied by value into every kernel launch.
 * Filled from the declared parameter table (io/config/params.c); the fields marked
 * "derived" are computed by talus_kparams_derive() and never set directly.
 */
typedef struct talus_kparams {
  int model;       /* talus_model */
  int nz;          /* column slots per cell, 1..TALUS_NZ_MAX */
  float cell_size; /* l_c [m] */
  float dt;        /* [s] */
  float gravity;   /* magnitude [m/s²] (the paper's g = -gravity) */
  uint32_t seed;
  /* water */
  float rain;                 /* [m/s] */
  float rain_noise;           /* 0 = uniform rain, 1 = the reference's 2*noise */
  float rain_noise_scale;     /* the noise's correlation length [m]; 0 = each cell's own */
  int rain_steps;             /* global steps with rain, then none (dry-out); 0 = always */
  float evaporation;          /* [m/s] */
  float evap_space_scale;     /* empty-space scale of evaporation [m] */
  float pipe_damping;         /* δ_d [1/s] */
  float water_reference_cell; /* cell size the pipes' flux gain holds at [m]; 0 = this run's */
  float water_finest_cell;    /* finer grids run the water of this cell size [m]; 0 = off */
  int num_sources;
  talus_source sources[TALUS_MAX_SOURCES];
  /* sediment & vertical erosion */
  float capacity;             /* κ_C */
  float sand_dissolve;        /* κ_s [1/s] */
  float deposition;           /* κ_d [1/s] */
  float bedrock_dissolve;     /* κ_b [m/s] */
  float min_scale, max_scale; /* slope/speed remap m, M */
  float water_max_height;     /* w_max [m] */
  float sand_threshold;       /* [m] */
  float slope_fade_start;     /* [sin] */
  float top_erosion_scale;    /* [m] */
  float petrification;        /* κ_petr [1/s] */
  int erosion_law;            /* talus_erosion_law */
  float critical_power;       /* stream power √q·S below which nothing erodes [√(m²/s)] */
  int erosion_spinup;         /* global steps before erosion starts (water only) */
  int base_level;             /* 1: a layered cell on an outflow face erodes no bedrock */
  int capacity_fade;          /* 1: the capacity fades with depth as the incision does */
  int erosion_tilt;           /* talus_erosion_tilt */
  /* sand */
  float talus_dry_deg, talus_wet_deg; /* angles of repose [deg] */
  float slippage_range;               /* water depth of full wet talus [m] */
  int slip_diagonal;                  /* 1: sand also slips to the 4 diagonal neighbours */
  float sand_creep;                   /* linear creep (diffusivity) of sand [m²/s] */
  /* horizontal erosion */
  float horiz_min_slope;      /* [sin] */
  float horiz_strength;       /* κ of eq. 22 */
  float split_size;           /* D_split [m] */
  float damage_recovery;      /* κ_r [m/s] */
  float horiz_reference_cell; /* cell size the two above hold at [m]; 0 = this run's */
  int horiz_notch_wall;       /* 1: the back wall of a roofed gap is a vertical face */
  int horiz_reference_slope;  /* 1: a wall's sin β over horiz_reference_cell; 0: over l_c */
  /* support check */
  float rho_bedrock, rho_sand, rho_water; /* [kg/m³] */
  float bedrock_support;                  /* κ_p [kg/m²] */
  float border_support;                   /* support offered outside the grid [kg/m²] */
  float min_bedrock;                      /* b_min [m] */
  float max_prop_distance;                /* [m] */
  int prop_iterations;                    /* P */
  /* switches */
  int enable_slippage, enable_vertical, enable_horizontal, enable_support, use_weight;
  int enable_border_support;
  int outflow_water, outflow_slippage; /* domain border modes: 1 outflow, 0 reflect */
  int nodata_policy;                   /* talus_nodata_policy */
  int accumulate;                      /* 1: flow, wear and deposition summed every step (acc) */
  /* thermal erosion, both models (kernels/thermal.h) */
  int enable_thermal;
  float thermal_talus_deg; /* talus angle α [deg]: steeper material moves */
  float thermal_rate;      /* K_t [1/s] */
  float thermal_creep;     /* heightfield: linear creep (hillslope diffusion) [m²/s] */
  int thermal_crests;      /* 1: the talus rule moves material off one-cell crests only */
  int thermal_every;       /* thermal erosion on the steps divisible by this */
  float thermal_bank_deg;  /* bank angle [deg] the steps the run cut shed to; 0 off */
  float hardness;          /* default hardness H in [0,1] of cells without a raster */
  /* heightfield model (kernels/heightfield.h; Mei et al. with Jákó's extensions) */
  int hf_hydraulic;     /* 0: no water stages (thermal only) */
  int hf_water_swell;   /* 1: dissolving raises the water, depositing lowers it */
  float hf_rain_scale;  /* K_r */
  float hf_pipe_area;   /* A [m²]; 0 = l_c² */
  float hf_pipe_length; /* l [m]; 0 = l_c */
  float hf_capacity;    /* K_c [s] */
  float hf_dissolve;    /* K_s [1/s] */
  float hf_deposit;     /* K_d [1/s] */
  float hf_max_depth;   /* depth where l_max reaches 0 [m] */
  float hf_min_tilt;    /* floor of the slope factor of the capacity [sin] */
  float hf_river_width; /* width a river's discharge is spread over [m]; 0 = the cell's */
  int hf_no_dam;        /* 1: a deposit never lifts a bed above its neighbours' water surface */
  int hf_base_level;    /* 1: dissolving never takes a bed below its lowest neighbour's */
  float hf_sheet;       /* share of the capacity water keeps where it spreads (hf_flux_marks) */
  float hf_sheet_slope; /* least fall [m/m] of spreading water's surface (hf_flux_marks) */
  int hf_sheet_reach;   /* cells hf_open looks for valley walls (k_hf_open) */
  float hf_sheet_wall;  /* least rise [m/m] of a valley wall over the water (k_hf_open) */
  float hf_grade; /* with hf_base_level: the least descent kept [m/m] (the bound + grade·l) */
  float hf_grade_share;  /* with hf_base_level: the share of its input drop kept (t->grade_in) */
  float hf_grade_noise;  /* [m] input drops up to this are noise the share does not keep */
  int hf_diagonal;       /* 1: water pipes to the 4 diagonal neighbours too (8 pipes, t->fd) */
  float hf_min_hardness; /* R_min: softening stops here */
  float hf_softening;    /* K_h [1/m] */
  float hf_evaporation;  /* K_e [1/s] */
  /* particle (droplet) erosion, both models (kernels/particles.h) */
  int pt_enable;       /* 1: a batch of droplets on the steps of pt_every */
  int pt_density_log2; /* n: 2^-n droplets per cell and batch */
  int pt_every;        /* a batch on global steps with step % every == 0 */
  /* The keys are set in metres of path (particles.path_length, brush_radius,
   * the rates per metre) so a preset erodes the same physical terrain alike
   * on any grid; talus_kparams_derive converts them once per run to the
   * cells and per-move shares below, which the kernels read. */
  float pt_path_length;         /* droplet life [m of path] (key) */
  float pt_brush_length;        /* brush radius [m] (key) */
  int pt_max_moves;             /* L: moves of a droplet's life, derived [cells] */
  int pt_brush_radius;          /* r: erosion brush radius, derived [cells] */
  float pt_inertia;             /* I: share of the old direction kept */
  float pt_capacity;            /* K_c [m]: load per unit slope, m/s of speed and unit water */
  float pt_min_slope;           /* floor of the slope −Δh/l_c in the capacity [m/m] */
  float pt_erosion;             /* k_e: share of the missing load taken per m of path (key) */
  float pt_deposition;          /* k_d: share of the excess load dropped per m of path (key) */
  float pt_evaporation;         /* e: share of the water lost per m of path (key) */
  float pt_water_gain;          /* water gathered per m of path (key) */
  float pt_erode_move;          /* K_e = 1 − (1 − k_e)^l_c: share per move, derived */
  float pt_deposit_move;        /* K_d = 1 − (1 − k_d)^l_c, derived */
  float pt_evap_move;           /* 1 − (1 − e)^l_c, derived */
  float pt_gain_move;           /* water gathered over one move, derived */
  float pt_gravity;             /* γ: speed² gained per metre of drop [1/m] */
  float pt_initial_speed;       /* v0 */
  float pt_initial_water;       /* w0 */
  int pt_deposit_at_death;      /* 1: the load is deposited at the end of life, 0: lost */
  float pt_bedrock_erodibility; /* layered: bedrock's rate against sand's */
  float pt_water_stop;          /* layered: water depth where a droplet stops [m] */
  float pt_river_depth;         /* pipe water depth where a droplet hands its load to the
                                 * suspended sediment and ends [m]; 0 off */
  float pt_river_discharge;     /* the same at this unit discharge [m²/s]; 0 off */
  /* derived (talus_kparams_derive) */
  float tan_dry, tan_wet;
  int support_cycle;              /* steps per support cycle */
  float thermal_tan;              /* tan α of the thermal talus angle */
  float thermal_dt;               /* the time one thermal step covers: dt × thermal_every [s] */
  float thermal_bank_tan;         /* tan of thermal_bank_deg with thermal on, else 0 */
  float tcreep_axis, tcreep_diag; /* thermal creep share per pipe and step (heightfield) */
  float slip_room;                /* share of a receiver's free space one slippage pipe may fill */
  float creep_axis, creep_diag;   /* creep share per pipe and step: sand_creep·dt/l_c²·weight */
  float hf_flux_gain;             /* A·g/l [m³/s² per m of head] */
  float hf_flux_gain_diag;        /* the same of a diagonal pipe, A·g/(√2·l) */
  float hf_inv_depth;             /* 1 / hf_max_depth [1/m] */
  float hf_flow_width;            /* min(l_c, hf_river_width): the unit discharge's width [m] */
  float pipe_gain_length;         /* L of the pipes' gain g·L: water.reference_cell or l_c [m] */
  float hz_run;                   /* run over which a wall's rise gives sin β [m] */
  float hz_recovery;              /* damage healed per second [m/s] */
  int rain_noise_span;            /* rain_noise_scale in whole cells, at least 1 */
} talus_kparams;

/* Fills the defaults of the reference implementation (see io/config/params.c for
 * the declared table, which is the authority for keys and ranges). */
void talus_kparams_defaults(talus_kparams *p);
/* Computes the derived fields. Returns TALUS_ERR_RANGE on inconsistent values. */
/* 1 when particles.path_length or brush_radius exceed 256 moves or an
 * 8-cell brush at the cell size and were capped there (erode warns). */
int pt_units_capped(const talus_kparams *p);
talus_status talus_kparams_derive(talus_kparams *p);
/* water.finest_cell F on a grid of cells finer than F (layered model, with
 * no water.reference_cell): pins the pipes to F (water_reference_cell = F)
 * and scales dt by l_c / F, so the water runs as on F-metre cells — the
 * same gain, the same speed the laws read and the same speed limit per
 * cell (l_c / dt), benchmarks/RESULTS.md "Water alike on any grid" — and
 * a second takes F / l_c times the steps (water.rain_steps is scaled with
 * it, so the rain lasts the same seconds). Rewrites dt and the pin, so it
 * runs once, on parameters just loaded at their final cell size
 * (talus_params_to_kparams); a second call finds the pin set and does
 * nothing. */
void talus_kparams_finest_water(talus_kparams *p);
/* The largest stable time step [s] of the water pipes of derived p: the
 * pipes carry gravity waves at √(g·A/l) (A, l the pipe's area and length:
 * L·l_c and l_c in the layered model, L = water.reference_cell or l_c),
 * and the grid's fastest mode (the checkerboard, ω² = 8·g·A/(l·l_c²))
 * stays bounded while ω·dt <= 2, so dt <= √(l·l_c²/(2·g·A)) = l_c/√(2gL):
 * √(l_c/(2g)) with the default pipes, 1.24 s at 30 m cells, 0.71 s at
 * 10 m. Above it water sloshes in checkerboards. */
double talus_kparams_dt_limit(const talus_kparams *p);

/* The excess stream power of erosion.law = stream_power, both models:
 * (√q·S − θ_c)⁺ for unit discharge q [m²/s] and slope sine S (at least
 * `min_sine`). Times a depth and a rate constant it is a capacity or an
 * incision rate ~ q^0.5·S: it grows with the water gathered upstream, so
 * channels cut while thin sheet flow on hillslopes stays nearly idle
 * (../shared/reference/dem-carving.md). sqrtf only: the CPU's vector
 * loops compute it lane by lane as the scalar body does. */
TALUS_HD static inline float talus_stream_power(const talus_kparams *P, float q, float sine,
                                                float min_sine) {
  float S = sine > min_sine ? sine : min_sine;
  float power = sqrtf(q) * S - P->critical_power;
  return power > 0.0f ? power : 0.0f;
}

/* 1 when water erodes in global step `step`: erosion.spinup steps of
 * water only come first (vertical and horizontal erosion, the heightfield's
 * dissolving and deposition). */
TALUS_HD static inline int talus_eroding(const talus_kparams *P, int64_t step) {
  return step >= (int64_t)P->erosion_spinup;
}

/* A rectangle in global cell coordinates. */
typedef struct talus_rect {
  int32_t x0, y0, w, h;
} talus_rect;

/* Intersection of two rectangles (w or h 0 when empty). */
talus_rect talus_rect_intersect(talus_rect a, talus_rect b);

/*
 * A tile buffer: persistent fields (kept by stores and exchanged by halos)
 * then scratch fields (rebuilt every step). Owned by whoever created it via
 * talus_tile_create; all arrays are 64-byte aligned.
 */
typedef struct talus_tile {
  talus_rect buf; /* global rectangle covered (core + halo) */
  int32_t pitch;  /* elements per row, >= buf.w */
  int32_t nz;     /* layers allocated */
  size_t plane;   /* elements per layer plane = pitch * buf.h */
  /* persistent */
  uint8_t *count;                   /* [plane] columns in the cell, 1..nz (masked cells keep 1) */
  uint8_t *mask;                    /* [plane] 1 = NoData cell (never updated) */
  float *B, *s, *w, *C, *r, *D, *p; /* [nz*plane] */
  float *f;                         /* [4*nz*plane] outflow flux [m³/s] */
  float *fd;       /* [4*plane] heightfield.neighbours = 8: outflow flux through the diagonal pipes
                    * [m³/s], plane j towards talus_dir8 4 + j (RU, LU, LD, RD), else NULL */
  float *hard;     /* [plane] hardness H in [0,1] (heightfield model, or thermal on), else NULL */
  float *rain;     /* [plane] rain rate map [m/s] (heightfield model, optional), else NULL */
  float *grade_in; /* [plane] the input's drop [m] beyond its noise (heightfield.grade_share >
                    * 0), else NULL: a static input like rain (talus_grade_drop) */
  float *acc;      /* [TALUS_ACC_PLANES*plane] run accumulators (simulation.masks), else NULL */
  /* scratch */
  int8_t *pipe;   /* [4*nz*plane] neighbour column per dir, -1 none, -2 outflow */
  float *slip;    /* [4*nz*plane] sand slippage per dir [m] */
  int8_t *dpipe;  /* [4*nz*plane] slippage pipe per diagonal (talus_dir8 4+j at j) */
  float *dslip;   /* [4*nz*plane] sand slippage per diagonal [m] */
  float *kr;      /* [nz*plane] sediment flux scale K_r */
  float *sina;    /* [nz*plane] tilt sin α: of the ground, of the water surface under erosion.law =
                     stream_power */
  float *vx, *vy; /* [nz*plane] velocity [m/s] */
  float *sig_lo, *sig_hi; /* [nz*plane] horizontal-erosion overlap σ of max damage */
  /* scratch allocated by the first stage that needs it (talus_stage_scratch) */
  float *thermal;  /* [8*plane] thermal outflow [m], thermal[d*plane + idx] (d: talus_dir8) */
  float *hf_cap;   /* [plane] heightfield: 1 where the water stands in the open (hf_open ->
                      hf_flux), then 1 where it spreads (hf_flux -> hf_water,
                      heightfield.sheet_capacity), then the transport capacity C [m] */
  float *hf_sed;   /* [plane] heightfield: the deposit's bound [m] (hf_flux -> hf_erode,
                      heightfield.no_dam: hf_flux_marks), then the advected sediment
                      (hf_advect -> hf_settle) */
  int64_t *pt_acc; /* [pt_planes*nz*plane] particle erosion, river, deposit totals [2^-32 m] */
  double *acc_s0;  /* [plane] solid at the step's start (kernels/accum.h) */
  float *qin;      /* [2*nz*plane] shares of water and sand inflow a column under a
                    * ceiling takes (kernels/inflow.h); the top columns' are unused */
  uint16_t *nb8;   /* [plane] talus_nb8_live of the cell, by the step's first stage needing it
                    * (16-bit: a char store would alias every field for the compiler) */
} talus_tile;

/* The optional persistent planes of a tile (a bitmask): hardness, the
 * run accumulators, the heightfield's diagonal water fluxes. */
enum { TALUS_TILE_HARD = 1, TALUS_TILE_ACC = 2, TALUS_TILE_FDIAG = 4 };
/* The optional planes the parameters need: hardness where a stage reads
 * it (heightfield model, thermal), the accumulators with simulation.masks,
 * the diagonal fluxes with heightfield.neighbours = 8 (talus_hf_diagonal). */
int talus_tile_optional(const talus_kparams *P);

/* Allocates a tile covering `buf` with nz layers; every cell starts with one
 * column of bedrock 0 and ceiling TALUS_TOP. `optional` (TALUS_TILE_HARD,
 * TALUS_TILE_ACC; 1 is hardness) adds `hard` and `acc`, zeroed. */
talus_status talus_tile_create(talus_tile **out, talus_rect buf, int nz, int optional);
/* The field groups of a tile: persistent (count .. f, hard) and scratch
 * (pipe .. sig_hi; the lazily allocated ones come with the first stage
 * that needs them). */
enum { TALUS_TILE_PERSISTENT = 1, TALUS_TILE_SCRATCH = 2 };
/* talus_tile_create allocating only the groups in `groups`; the pointers
 * of the others stay NULL. For tiles that take turns at one scratch
 * (talus_tile_swap_scratch): the resident tiles of a tile grid. */
talus_status talus_tile_create_groups(talus_tile **out, talus_rect buf, int nz, int optional,
                                      int groups);
/* Exchanges the scratch arrays (all of them, lazily allocated ones too) of
 * a and b, which must have the same nz and plane: lends one scratch to
 * whichever tile advances. Persistent fields stay where they are. */
talus_status talus_tile_swap_scratch(talus_tile *a, talus_tile *b);
void talus_tile_free(talus_tile *t);
/* Like talus_tile_reset, but resets only the row padding (columns r.w ..
 * pitch-1): for a caller that then writes every cell of r as a reset would
 * leave it plus its data (halo_block_paste_fill over the whole of r). */
talus_status talus_tile_retarget(talus_tile *t, talus_rect r);
/* Re-targets a tile at global rectangle r, keeping its allocation (r must
 * fit: r.w <= pitch, r.h * pitch <= plane) and resetting the persistent
 * fields of every cell to one empty column (bedrock 0, ceiling TALUS_TOP). */
talus_status talus_tile_reset(talus_tile *t, talus_rect r);
/* Allocates *field (one of t's optional arrays: hard, rain, thermal, hf_*,
 * nb8) as cell_bytes zeroed bytes per cell of the plane unless it is
 * already there; the tile owns it. */
talus_status talus_tile_ensure(talus_tile *t, void **field, size_t cell_bytes, const char *what);

TALUS_HD static inline size_t talus_idx(const talus_tile *t, int x, int y) {
  return (size_t)y * (size_t)t->pitch + (size_t)x;
}
TALUS_HD static inline size_t talus_col(const talus_tile *t, size_t idx, int k) {
  return (size_t)k * t->plane + idx;
}
TALUS_HD static inline size_t talus_dcol(const talus_tile *t, size_t idx, int k, int d) {
  return ((size_t)k * 4u + (size_t)d) * t->plane + idx;
}
/* Floor of column k of the cell at idx. */
TALUS_HD static inline float talus_floor(const talus_tile *t, size_t idx, int k) {
  return k == 0 ? TALUS_BOTTOM : t->C[talus_col(t, idx, k - 1)];
}

/*
 * The mass ledger's flows: every process that creates, destroys or converts
 * material is one named flow from one material to another. Kernels add
 * heights [m] into a per-row double accumulator; the driver multiplies by
 * the cell area. Order matters only for reporting.
 */
typedef enum talus_flow {
  TALUS_FLOW_RAIN = 0,         /* outside -> water */
  TALUS_FLOW_SOURCE,           /* outside -> water */
  TALUS_FLOW_EVAPORATION,      /* water -> outside */
  TALUS_FLOW_WATER_OUTFLOW,    /* water -> outside, across outflow borders / NoData sinks */
  TALUS_FLOW_WATER_OVERFILL,   /* water -> outside, clamp w <= C-B-s */
  TALUS_FLOW_SEDIMENT_OUTFLOW, /* sediment -> outside */
  TALUS_FLOW_SEDIMENT_CLAMP,   /* outside -> sediment, clamp r >= 0 */
  TALUS_FLOW_SAND_OUTFLOW,     /* sand -> outside, slippage across borders */
  TALUS_FLOW_SAND_OVERFILL,    /* sand -> outside, clamp s <= C-B-w */
  TALUS_FLOW_SAND_CLAMP,       /* outside -> sand, clamp s >= 0 */
  TALUS_FLOW_DISSOLVE,         /* sand -> sediment */
  TALUS_FLOW_DEPOSIT,          /* sediment -> sand */
  TALUS_FLOW_PETRIFY,          /* sand -> bedrock */
  TALUS_FLOW_BEDROCK_EROSION,  /* bedrock -> sand (floor of the water) */
  TALUS_FLOW_CEILING_EROSION,  /* bedrock -> sand (ceiling above the water) */
  TALUS_FLOW_SPLIT,            /* bedrock -> sand (split cut) */
  TALUS_FLOW_COLLAPSE,         /* bedrock -> sand (collapsed column) */
  TALUS_FLOW_MERGE,            /* sand -> bedrock (too-close columns merged) */
  TALUS_FLOW_THERMAL,          /* bedrock -> sand (thermal weathering) */
  TALUS_FLOW_HF_DISSOLVE,      /* bedrock -> sediment (heightfield eq. 9a/b) */
  TALUS_FLOW_HF_DEPOSIT,       /* sediment -> bedrock (heightfield eq. 10a/b) */
  TALUS_FLOW_HF_SWELL,         /* outside -> water (heightfield eq. 9c) */
  TALUS_FLOW_HF_SHRINK,        /* water -> outside (heightfield eq. 10c) */
  TALUS_FLOW_HF_ADVECTION,     /* outside -> sediment, signed: rounding of the transport */
  TALUS_FLOW_PT_EROSION,       /* bedrock -> sediment (droplets) */
  TALUS_FLOW_PT_DEPOSIT,       /* sediment -> bedrock (droplets) */
  TALUS_FLOW_PT_OUTFLOW,       /* sediment -> outside, droplets leaving the domain */
  TALUS_FLOW_PT_LOST,          /* sediment -> outside, load at death (deposit_at_death off) */
  TALUS_FLOW_PT_ROUNDING,      /* outside -> bedrock, signed: float rounding of the totals */
  TALUS_FLOW_PT_SAND_EROSION,  /* sand -> sediment (droplets, layered model) */
  TALUS_FLOW_PT_SAND_DEPOSIT,  /* sediment -> sand (droplets, layered model) */
  TALUS_FLOW_PT_CLAMP,         /* outside -> sediment, signed (≤ 0): deposits a ceiling refused
                                * (layered model; the floor limit refuses nothing: 0 there) */
  TALUS_FLOW_PT_SAND_ROUNDING, /* outside -> sand, signed: float rounding (layered model) */
  TALUS_FLOW_PT_RIVER,         /* sediment -> sediment: droplet load handed to the pipes'
                                * suspended sediment (particles.river_depth, _discharge) */
  TALUS_FLOW_PT_RIVER_ROUND,   /* outside -> sediment, signed: float rounding of that */
  TALUS_FLOW_THERMAL_ROUNDING, /* outside -> bedrock, signed: float rounding of the
                                * heightfield's thermal exchange (creep moves every cell) */
  TALUS_FLOW_COUNT
} talus_flow;

/* Source and destination material of a flow, and its name. */
const char *talus_flow_info(int flow, int *from, int *to);

/* Everything a kernel needs besides the tile: parameters by value, the
 * domain's size (for borders) and the global step being computed. */
typedef struct talus_kctx {
  talus_kparams P;
  int32_t nx, ny;  /* domain size in cells */
  int64_t step;    /* global step index, 0-based */
  int32_t backend; /* talus_backend the driver runs stages on; kernels never read it */
} talus_kctx;

/* Where the driver runs stages. Zero is the CPU, so a zeroed context runs
 * there; CUDA is chosen only by talus_domain_set_device after a device
 * answered. */
typedef enum talus_backend { TALUS_BACKEND_CPU = 0, TALUS_BACKEND_CUDA = 1 } talus_backend;

/* What lies in direction d of global cell (gx, gy). */
typedef enum talus_nb {
  TALUS_NB_INSIDE = 0,  /* a live cell of the domain */
  TALUS_NB_REFLECT = 1, /* wall: no pipe */
  TALUS_NB_OUTFLOW = 2  /* sink: matter leaves the domain */
} talus_nb;

/*
 * Classifies a neighbour for water (slippage = 0) or sand slippage
 * (slippage = 1): domain borders follow outflow_water / outflow_slippage,
 * NoData cells follow nodata_policy. (x, y) are buffer-local; the neighbour
 * must lie inside the buffer when it is inside the domain (the tiler's
 * region shrinking guarantees it).
 */
TALUS_HD static inline talus_nb talus_nb_kind(const talus_tile *t, const talus_kctx *c, int x,
                                              int y, int d, int slippage) {
  int gx = t->buf.x0 + x + talus_dir_dx(d), gy = t->buf.y0 + y + talus_dir_dy(d);
  if (gx < 0 || gy < 0 || gx >= c->nx || gy >= c->ny) {
    int out = slippage ? c->P.outflow_slippage : c->P.outflow_water;
    return out ? TALUS_NB_OUTFLOW : TALUS_NB_REFLECT;
  }
  if (t->mask && t->mask[talus_idx(t, x + talus_dir_dx(d), y + talus_dir_dy(d))])
    return c->P.nodata_policy == TALUS_NODATA_OUTFLOW ? TALUS_NB_OUTFLOW : TALUS_NB_REFLECT;
  return TALUS_NB_INSIDE;
}

/*
 * What lies at buffer-local cell (x, y), which may be any cell near the one
 * being updated (diagonals, semi-Lagrangian samples): off the domain it is
 * the border mode of water (slippage = 0) or sand (1), on a NoData cell the
 * nodata_policy, else INSIDE. Same buffer rule as talus_nb_kind.
 */
TALUS_HD static inline talus_nb talus_at_kind(const talus_tile *t, const talus_kctx *c, int x,
                                              int y, int slippage) {
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  if (gx < 0 || gy < 0 || gx >= c->nx || gy >= c->ny) {
    int out = slippage ? c->P.outflow_slippage : c->P.outflow_water;
    return out ? TALUS_NB_OUTFLOW : TALUS_NB_REFLECT;
  }
  if (t->mask && t->mask[talus_idx(t, x, y)])
    return c->P.nodata_policy == TALUS_NODATA_OUTFLOW ? TALUS_NB_OUTFLOW : TALUS_NB_REFLECT;
  return TALUS_NB_INSIDE;
}

/* The 8 directions of the thermal pipes: 0..3 as talus_dir (R, U, L, D),
 * then the diagonals 4 RU, 5 LU, 6 LD, 7 RD; opposite = talus_dir8_opp. */
TALUS_HD static inline int talus_dir8_dx(int d) {
  return d < 4 ? talus_dir_dx(d) : ((d == 4 || d == 7) ? 1 : -1);
}
TALUS_HD static inline int talus_dir8_dy(int d) {
  return d < 4 ? talus_dir_dy(d) : (d < 6 ? 1 : -1);
}
TALUS_HD static inline int talus_dir8_opp(int d) {
  return d < 4 ? (d + 2) & 3 : 4 + ((d - 2) & 3);
}
/* Kind of the neighbour in 8-direction d (diagonal-aware talus_nb_kind). */
TALUS_HD static inline talus_nb talus_nb8_kind(const talus_tile *t, const talus_kctx *c, int x,
                                               int y, int d, int slippage) {
  return talus_at_kind(t, c, x + talus_dir8_dx(d), y + talus_dir8_dy(d), slippage);
}

/*
 * Bit d (talus_dir8 order) set when neighbour d of buffer-local cell (x, y)
 * is a live cell (talus_nb8_kind(..., 0) == INSIDE). Away from the domain
 * border only the NoData mask decides, so stages that need the 8 kinds
 * compute these bits once per step (t->nb8) and later stages branch on it.
 */
TALUS_HD static inline unsigned talus_nb8_live(const talus_tile *t, const talus_kctx *c, int x,
                                               int y) {
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  unsigned bits = 0;
  if (gx > 0 && gy > 0 && gx < c->nx - 1 && gy < c->ny - 1) {
    if (!t->mask) return 0xFFu;
    const uint8_t *m = t->mask + talus_idx(t, x, y);
    ptrdiff_t p = t->pitch;
    bits = (unsigned)!m[1] | (unsigned)!m[p] << 1 | (unsigned)!m[-1] << 2 | (unsigned)!m[-p] << 3 |
           (unsigned)!m[p + 1] << 4 | (unsigned)!m[p - 1] << 5 | (unsigned)!m[-p - 1] << 6 |
           (unsigned)!m[1 - p] << 7;
    return bits;
  }
  for (int d = 0; d < 8; d++)
    bits |= (unsigned)(talus_nb8_kind(t, c, x, y, d, 0) == TALUS_NB_INSIDE) << d;
  return bits;
}

/* True when the heightfield's water also flows through the 4 diagonal
 * pipes (heightfield.neighbours = 8; kernels/heightfield.h, t->fd). */
TALUS_HD static inline int talus_hf_diagonal(const talus_kparams *P) {
  return P->model == TALUS_MODEL_HEIGHTFIELD && P->hf_hydraulic && P->hf_diagonal;
}
/* Whether the run keeps its input's drop in t->grade_in (a static
 * input, filled before the first step by talus_grade_drop): the
 * heightfield's pipes with heightfield.base_level and a grade_share
 * (kernels/heightfield.h, hf_base_mode). */
TALUS_HD static inline int talus_hf_grade_in(const talus_kparams *P) {
  return P->model == TALUS_MODEL_HEIGHTFIELD && P->hf_hydraulic && P->hf_base_level &&
         P->hf_grade_share > 0.0f;
}
/* The input drop heightfield.grade_share keeps (kernels/grade.c): for
 * each cell of global rectangle r, its height's fall to the lowest of
 * its 4 neighbours (8 with `diagonal`) less heightfield.grade_noise
 * (`noise`), at least 0 [m], into t->grade_in (allocated here; r inside
 * t->buf). Heights h (row pitch `pitch`, NoData where nodata is 1: no
 * neighbour, and no drop of its own) cover window `win`, which must hold
 * r grown by one cell and clipped to the map: then a tile's buffer gets,
 * cell for cell, what the whole map gives. */
talus_status talus_grade_drop(const float *h, const uint8_t *nodata, size_t pitch, talus_rect win,
                              talus_rect r, int diagonal, float noise, talus_tile *t);

/* True when sand also slips through the 4 diagonal pipes (pipes.h opens
 * them, transport.h moves sand through them). */
TALUS_HD static inline int talus_slips_diagonally(const talus_kparams *P) {
  return P->enable_slippage && P->slip_diagonal;
}

/* The fast-path promise `one` of the layered bodies (pipes.h, transport.h,
 * vertical.h): 0 on the general path; else TALUS_ONE, plus TALUS_ONE_DIAG
 * exactly when talus_slips_diagonally holds (pipes, transport) and
 * TALUS_ONE_ERODE exactly when vertical erosion runs this step (vertical:
 * vt_eroding); pipes add TALUS_ONE_RANGE2 exactly when
 * talus_pow2f(slippage_range) holds, horizontal TALUS_ONE_CELL2 exactly
 * when talus_pow2f(cell_size) does, transport when that of cell_size and
 * of pipe_gain_length do. The CPU compiles its fast loops once
 * per value, so the test is a constant there: a branch on a parameter left in the loop keeps GCC
 * from vectorising it (it does not unswitch bodies this large). */
#define TALUS_ONE        1
#define TALUS_ONE_DIAG   2
#define TALUS_ONE_ERODE  4
#define TALUS_ONE_RANGE2 8  /* pipes: sand.slippage_range is a power of two */
#define TALUS_ONE_CELL2  16 /* transport, horizontal: the cell size (and L) a power of two */

/* True when v is a power of two (v = 2^k, k in -126..127), so that x / v
 * and x · (1 / v) are the same float for every x. */
TALUS_HD static inline int talus_pow2f(float v) {
  int e;
  return v >= FLT_MIN && v <= FLT_MAX && frexpf(v, &e) == 0.5f;
}

/* talus_slips_diagonally, as a constant where `one` carries it. */
TALUS_HD static inline int talus_one_diag(const talus_kparams *P, int one) {
  return one ? (one & TALUS_ONE_DIAG) != 0 : talus_slips_diagonally(P);
}

/* True when the buffer-local cell is a NoData cell that no kernel updates. */
TALUS_HD static inline int talus_cell_masked(const talus_tile *t, size_t idx) {
  return t->mask && t->mask[idx];
}

#endif /* TALUS_KERNELS_STATE_H */
