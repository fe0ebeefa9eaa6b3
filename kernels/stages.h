/*
 * stages.h — the ordered stage table of one simulation step, with each
 * stage's declared dependency radius, and the per-cell kernel contract.
 *
 * Kernel contract (every k_* function, CPU and GPU alike):
 *   TALUS_HD static inline void k_NAME(const talus_tile *t, const talus_kctx *c,
 *                                      int x, int y, double *flows);
 *   - (x, y) are buffer-local; the kernel reads cells within its stage's
 *     radius and writes only the slots of cell (x, y);
 *   - `flows` points at TALUS_FLOW_COUNT doubles (heights in metres) the
 *     kernel adds its ledger flows to; it may be NULL-free but never shared
 *     between threads;
 *   - no globals, no atomics, randomness only from talus_hash().
 * The tiler derives halo widths from talus_step_radius() and nowhere else.
 * The droplet stage (kernels/particles.h) is the one exception to "writes
 * only its own cell": it scatters exact int64 totals over its radius, in
 * bands on the CPU and by integer atomics on the GPU (order-free sums).
 *
 * Each stage is declared once, as a row of stages.def (id, name, radius,
 * body, CPU loop shape, CUDA launch bounds), which this header (the enum),
 * stages.c (the table), cpu/cpu.c and cuda/cuda.cu (the dispatch) expand.
 */
#ifndef TALUS_KERNELS_STAGES_H
#define TALUS_KERNELS_STAGES_H

#include "state.h"

/* The stages, numbered in the order of stages.def (what each does is
 * written beside its row there). */
typedef enum talus_stage_id {
#define TALUS_STAGE(ID, NAME, RADIUS, BODY, CPU_LOOP, CUDA_MINB) TALUS_STAGE_##ID,
#include "stages.def"
#undef TALUS_STAGE
  TALUS_STAGE_COUNT
} talus_stage_id;

/* The RADIUS of a stages.def row whose radius follows from the
 * parameters (talus_stage_radius). */
#define TALUS_RADIUS_PARAMS (-1)

/* A stage's declaration: its row of stages.def. */
typedef struct talus_stage_def {
  talus_stage_id id;
  const char *name;
  int radius; /* cells, or TALUS_RADIUS_PARAMS */
} talus_stage_def;

/* The declaration of a stage (never NULL for a valid id). */
const talus_stage_def *talus_stage_def_of(talus_stage_id id);

/* Writes the ordered stages of global step `step` into out[max]; returns
 * how many (or -1 if max is too small). */
int talus_step_plan(const talus_kparams *P, int64_t step, talus_stage_id *out, int max);

/* One lazily allocated scratch array of a tile: the pointer member at
 * `offset` in talus_tile, cell_bytes per cell of the plane, times the
 * tile's layers when per_layer is 1 (talus_scratch_bytes). */
typedef struct talus_scratch_need {
  size_t offset;
  size_t cell_bytes;
  const char *what;
  int per_layer;
} talus_scratch_need;

/* Bytes per cell of the plane of need n in a tile of nz layers. */
static inline size_t talus_scratch_bytes(const talus_scratch_need *n, int nz) {
  return n->per_layer ? n->cell_bytes * (size_t)nz : n->cell_bytes;
}

/* The most scratch arrays one stage needs (hf_flux and hf_water: hf_cap,
 * hf_sed and nb8). */
#define TALUS_SCRATCH_NEEDS_MAX 3
/* The lazily allocated scratch arrays stage `id` uses under parameters P
 * (t->thermal, t->hf_cap, t->hf_sed, t->nb8, t->pt_acc: the droplets'
 * planes of pt_planes(P)), written to out; returns how many (0..3). P
 * NULL: what any parameters may need (a device's worst case). The one
 * rule behind the host and device allocations. A tile keeps what it was
 * given first, so its parameters must not change to need more. */
int talus_stage_scratch_needs(talus_stage_id id, const talus_kparams *P,
                              talus_scratch_need out[TALUS_SCRATCH_NEEDS_MAX]);

/* Allocates the scratch arrays of talus_stage_scratch_needs if t lacks
 * them; the CPU backend calls it before running a stage. */
talus_status talus_stage_scratch(talus_tile *t, const talus_kparams *P, talus_stage_id id);

/* Dependency radius of one step: the largest sum of stage radii over the
 * steps of a support cycle (4 + 2P for the layered model with support:
 * pipes, inflow, transport and horizontal, 1 each, and the P red and
 * black half-sweeps of the support check). */
int talus_step_radius(const talus_kparams *P);
/* How far the n stages of a plan read in all: the sum of their radii. */
int talus_plan_radius(const talus_kparams *P, const talus_stage_id *plan, int n);
/* The radius of stage `id` under parameters P: its row's RADIUS, or the
 * one computed from P where the row says TALUS_RADIUS_PARAMS. */
int talus_stage_radius(const talus_kparams *P, talus_stage_id id);

#endif /* TALUS_KERNELS_STAGES_H */
