/*
 * talus.h — the one public C API of talus, a tiled terrain erosion engine.
 *
 * Design notes
 * ------------
 * - Every call returns a talus_status (talus_status.h: stable codes, the
 *   thread-local error message, the progress callback type).
 * - The parts the lower modules implement have headers of their own, which
 *   this one includes: talus_params.h (the parameter table, io/config) and
 *   talus_ledger.h (the mass ledger's materials and flows, kernels). The
 *   rest (domains, devices, the applications) is app/'s.
 * - Two levels, as in GDAL: the domain API (create a domain from a
 *   heightmap, run N steps, read fields back, free) and the application
 *   calls behind each `talus` command (talus_erode_app, …), which main()
 *   merely parses arguments for.
 * - Long calls take a GDAL-style progress callback. Returning 0 from it
 *   cancels the call, which then returns TALUS_ERR_CANCELLED and leaves the
 *   domain at a consistent step boundary.
 * - Concurrency: a talus_domain is not thread-safe; use one per thread.
 *   The library itself parallelises a run with OpenMP.
 */
#ifndef TALUS_H
#define TALUS_H

#include "talus_ledger.h"
#include "talus_params.h"
#include "talus_status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version string, with the backends built: "0.1.0 (cpu, openmp)". */
const char *talus_version(void);

/* ---------------------------------------------------------------------
 * Domain API: one terrain held in memory.
 * ------------------------------------------------------------------- */
typedef struct talus_domain talus_domain;

/* Fields readable after a run. SURFACE is the top of the topmost column's
 * sand (S), the eroded terrain; TERRAIN_WATER is S + w of the top column. */
typedef enum talus_field {
  TALUS_FIELD_SURFACE = 0,          /* top S = B + s of the topmost column [m] */
  TALUS_FIELD_WATER = 1,            /* water depth of the topmost column [m] */
  TALUS_FIELD_SAND = 2,             /* sand thickness summed over columns [m] */
  TALUS_FIELD_SEDIMENT = 3,         /* suspended sediment summed over columns [m] */
  TALUS_FIELD_COLUMNS = 4,          /* column count of the cell */
  TALUS_FIELD_BEDROCK = 5,          /* per layer: absolute bedrock top B [m] */
  TALUS_FIELD_CEILING = 6,          /* per layer: absolute ceiling C [m] */
  TALUS_FIELD_LAYER_SAND = 7,       /* per layer: s */
  TALUS_FIELD_LAYER_WATER = 8,      /* per layer: w */
  TALUS_FIELD_LAYER_SEDIMENT = 9,   /* per layer: r */
  TALUS_FIELD_LAYER_DAMAGE = 10,    /* per layer: D */
  TALUS_FIELD_LAYER_STABILITY = 11, /* per layer: p */
  TALUS_FIELD_HARDNESS = 12,        /* hardness H in [0,1] (heightfield model or thermal on) */
  TALUS_FIELD_RAIN = 13             /* heightfield model: rain rate map [m/s] (settable) */
} talus_field;

/* Creates a domain of nx × ny cells of cell_size metres from a bedrock
 * heightmap (row-major, row 0 = north, nx*ny floats, copied). nodata_mask
 * may be NULL; else non-zero marks cells handled by the NoData policy.
 * params is copied. *out owned by caller. */
talus_status talus_domain_create(talus_domain **out, int nx, int ny, double cell_size,
                                 const float *bedrock, const uint8_t *nodata_mask,
                                 const talus_params *params);

/* Sets layer `layer` of a per-layer field (BEDROCK, CEILING, LAYER_*) and
 * the column counts (COLUMNS, layer ignored) from nx*ny floats. Used to load
 * multi-column initial states; call before the first run. */
talus_status talus_domain_set_field(talus_domain *domain, talus_field field, int layer,
                                    const float *values);

/* Runs `steps` steps. progress may be NULL. */
talus_status talus_domain_run(talus_domain *domain, int64_t steps, talus_progress_fn progress,
                              void *user);

/* Where a domain's steps run. */
typedef enum talus_device {
  TALUS_DEVICE_AUTO = 0, /* the GPU when this build has CUDA and a device answers, else the CPU */
  TALUS_DEVICE_CPU = 1,  /* OpenMP threads */
  TALUS_DEVICE_CUDA = 2  /* the GPU of this process (MPI local rank modulo visible devices) */
} talus_device;

/* 1 when this build contains the backend of `device` (AUTO and CPU: always). */
int talus_device_built(talus_device device);

/* Chooses where `domain` runs from now on and writes what was chosen ("cpu"
 * or the GPU's name) to name[len] (NULL allowed). CUDA fails with
 * TALUS_ERR_UNSUPPORTED in a build without it, TALUS_ERR_DEVICE without a
 * usable GPU or driver; AUTO then chooses the CPU and succeeds. Results on
 * the GPU equal the CPU's within the math libraries' rounding, not bit for
 * bit; tiling and thread invariance hold bit for bit on each. */
talus_status talus_domain_set_device(talus_domain *domain, talus_device device, char *name,
                                     size_t len);

/* Copies a field (layer ignored unless per-layer) into out[nx*ny]. */
talus_status talus_domain_read(const talus_domain *domain, talus_field field, int layer,
                               float *out);

/* Domain facts. */
int talus_domain_nx(const talus_domain *domain);
int talus_domain_ny(const talus_domain *domain);
int talus_domain_layers(const talus_domain *domain); /* allocated Nz */
int64_t talus_domain_step(const talus_domain *domain);

/* Volume [m³] moved by flow i so far. */
double talus_domain_flow(const talus_domain *domain, int flow);
talus_status talus_domain_ledger(const talus_domain *domain, talus_ledger_summary *out);

/* Per-stage wall time [s] accumulated over all runs; stage names by index. */
int talus_stage_count(void);
const char *talus_stage_name(int stage);
double talus_domain_stage_seconds(const talus_domain *domain, int stage);

/* Frees a domain; NULL is a no-op. */
void talus_domain_free(talus_domain *domain);

/* ---------------------------------------------------------------------
 * Applications: the library calls behind `talus erode|generate|info|params|export`.
 * argv excludes the command name; see each command's --help.
 * ------------------------------------------------------------------- */
talus_status talus_erode_app(int argc, char **argv);
talus_status talus_generate_app(int argc, char **argv);
talus_status talus_info_app(int argc, char **argv);
talus_status talus_params_app(int argc, char **argv);
talus_status talus_presets_app(int argc, char **argv);
talus_status talus_export_app(int argc, char **argv);
/* The signal (SIGINT 2, SIGTERM 15) that stopped the last run of an
 * application call (its status then TALUS_ERR_CANCELLED), or 0; main()
 * exits with 128 + it, as shells expect. */
int talus_app_signal(void);

#ifdef __cplusplus
}
#endif
#endif /* TALUS_H */
