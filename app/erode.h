/*
 * erode.h — private to `talus erode`: the parsed options and the calls
 * its files share: erode.c (arguments, the monolithic input), erode_output.c
 * (the monolithic run), erode_write.c (the output files), erode_tiled.c and
 * erode_source.c (the tiled run and its windowed input).
 */
#ifndef TALUS_APP_ERODE_H
#define TALUS_APP_ERODE_H

#include "app.h"
#include "domain.h"
#include "io/export/section.h"
#include "io/raster/raster.h"

#define ERODE_MAX_LIST    64
#define ERODE_MAX_EXPORTS 4
#define ERODE_KEY_OPTS    8

/* --strength: how long a run erodes after its spin-up (erode.c's table). */
enum { ERODE_STRENGTH_LIGHT = 1, ERODE_STRENGTH_MEDIUM = 2, ERODE_STRENGTH_HEAVY = 3 };

/* Parsed `talus erode` options; strings point into argv. */
typedef struct erode_opts {
  const char *input, *output, *state, *preview, *report;
  const char *section;                    /* the preview's cross-section (layered runs), or NULL */
  const char *hardness, *rain_map;        /* per-cell input maps (resampled to the grid), or NULL */
  const char *exports[ERODE_MAX_EXPORTS]; /* --export FORMAT:PATH, run on the output */
  int nexports;
  const char *configs[ERODE_MAX_LIST];
  int nconfigs;
  const char *sets[ERODE_MAX_LIST];
  int nsets;
  const char *format;                 /* -of DRIVER, or NULL (GTiff) */
  const char *co[ERODE_MAX_LIST + 1]; /* NULL-terminated -co list */
  int nco;
  int64_t steps;
  int steps_given; /* --steps was given: no default from --strength or the spin-up */
  int strength;    /* --strength: ERODE_STRENGTH_* (0: not given) */
  double seconds;  /* --seconds: simulated time, turned into steps of the run's dt (0: not given) */
  int dem_preset;  /* no -c on a DEM: 1 + the index of the built-in DEM preset loaded */
  double dem_cell; /* the DEM's cell size that chose it [m] (0: unknown) */
  int maps, no_preview, quiet, threads;
  /* tiling and the store (erode_tiled.c); 0 / NULL = automatic */
  int tile, steps_per_exchange;
  const char *store_dir;
  int store_level; /* --store-level: zstd level of a disk store (TALUS_STORE_LEVEL_*) */
  int resume;
  int64_t mem_limit;       /* bytes */
  int64_t predicted_bytes; /* the plan's peak memory (set by erode_use_tiles / tiled_plan) */
  int dry_run;             /* --dry-run: print the plan, run nothing */
  talus_device device;     /* --device auto|cpu|cuda */
  double t_start;          /* talus_now() when the command began (the report's set-up time) */
  char *params_ini;        /* the run's parameters as INI text, recorded in --state (owned) */
  int64_t input_step; /* a state input's global step (0 for a DEM): what is left of the spin-up */
  char preview_buf[TALUS_PATH_MAX];
  char section_buf[TALUS_PATH_MAX];
  char keybuf[ERODE_KEY_OPTS][512]; /* "--cell-size 30" as "input.cell_size=30" */
  int nkeys;
} erode_opts;

/* What a run reads of o->input's metadata (erode_input_kparams). */
typedef struct erode_input_meta {
  int nx, ny, bands;
  int state, layers; /* a talus state, and its layer count (0 for a DEM) */
  double cell;       /* [m]: a state's own; a DEM's input.cell_size, else its georeferencing */
} erode_input_meta;

/* The parameters a run of o->input derives, from its metadata alone (no
 * cell is read): p on the input's cells, at a state's own layer count, as
 * the run itself derives them; m (may be NULL) gets the metadata. */
talus_status erode_input_kparams(const erode_opts *o, const talus_params *p, talus_kparams *P,
                                 erode_input_meta *m);

/* Checks derived parameters P against what the physics can take
 * (erode_source.c): the time step against the cell size
 * (talus_kparams_dt_limit), a warning above the limit and TALUS_ERR_RANGE
 * above ERODE_DT_REFUSE times it, where the water is noise; and a warning
 * for droplets that delete the load they carry when their life ends. */
#define ERODE_DT_REFUSE 4.0
talus_status erode_check_params(const talus_kparams *P);

/* Runs o->steps steps on d with the progress bar, then writes every
 * requested output. */
talus_status erode_run_and_write(erode_opts *o, talus_domain *d, const talus_georef *geo,
                                 const talus_params *p);

#define ERODE_MAX_OUTPUTS (11 + 2 * ERODE_MAX_EXPORTS)
#define ERODE_PATH_MAX    TALUS_PATH_BUF
/* 1 when -of names a GDAL driver other than GTiff: the surface and the
 * --maps are streamed as GeoTIFF under a temporary name, then copied into
 * the driver's file (erode_write.c). */
int erode_converts(const erode_opts *o);
/* How many map files --maps writes (the planner counts their row buffers). */
int erode_map_count(void);
/* Writes every path a run writes into paths (erode_write.c): the surface,
 * the --maps, the state, the preview, the report and each --export with
 * its sidecar; returns the count.
 * The checks before the run and the cleanup after a failed write both walk
 * this one list. */
int erode_output_paths(const erode_opts *o, char paths[][ERODE_PATH_MAX]);

/* The output files (erode_write.c): cells are added by rectangles, rows
 * of blocks are written as soon as every row below y_end was added. */
typedef struct erode_writer erode_writer;
/* Opens the surface, --maps and --state files and the preview of an nx × ny
 * map; the state holds L layers (the highest column count) of nz, and the
 * accumulators when acc is set (the tiles added then have them), at
 * global step `step`. max_rows: the most rows one batch of adds spans
 * before erode_writer_rows_done. */
talus_status erode_writer_open(erode_writer **out, const erode_opts *o, const talus_georef *geo,
                               int nx, int ny, double cell, int nz, int L, int acc, int64_t step,
                               int max_rows);
/* Rows of one GeoTIFF block (the unit rows are written in). */
int erode_writer_block_rows(const erode_writer *w);
/* Adds the cells of global rectangle r: the final state from t (r inside
 * t->buf) and the initial surface `before` (r.w*r.h, row-major). */
talus_status erode_writer_add(erode_writer *w, const talus_tile *t, talus_rect r,
                              const float *before);
/* Every row below y_end was added: writes the whole block rows it completes. */
talus_status erode_writer_rows_done(erode_writer *w, int y_end);
/* The row the preview's cross-section cuts: the one with the most cells of
 * several columns among those added (the first on a tie; the middle row
 * when none has any), or -1 when no section is asked for (o->section). */
int erode_writer_section_row(const erode_writer *w);
/* Commits every file (all rows must have been written) and writes the
 * preview; frees w. */
talus_status erode_writer_commit(erode_writer *w);
/* Copies row y's cells of global rectangle r (inside t->buf) into cut c
 * (indexed by global x): columns, bedrock, sand, water, ceiling. */
void erode_section_add(talus_section_cut *c, const talus_tile *t, talus_rect r, int y);
/* Writes cut c, the section of row y, to o->section, and says where. */
talus_status erode_section_write(const erode_opts *o, const talus_section_cut *c, int y);
/* Removes every partial file; frees w. NULL is a no-op. */
void erode_writer_abort(erode_writer *w);

/* Sets *tiled when the run must be tiled (erode_tiled.c, by the rule of
 * tiler/plan.h): asked for (--tile, --store, ...) or the input does not
 * fit the memory limit in one piece. */
talus_status erode_use_tiles(erode_opts *o, const talus_params *p, int *tiled);
/* --dry-run (erode_tiled.c): prints the plan of the run, one piece or
 * tiled (tiles, K, halo, store, predicted memory and disk), runs nothing. */
talus_status erode_dry_run(erode_opts *o, const talus_params *p);
/* The tiled run (erode_tiled.c): input read window by window into tiles in
 * a store (memory, or disk when it does not fit o->mem_limit), run, outputs
 * written tile by tile. */
talus_status erode_tiled(erode_opts *o, const talus_params *p);

#endif /* TALUS_APP_ERODE_H */
