/*
 * erode_tiled.c — the tiled path of `talus erode`: the input is read window
 * by window into tiles kept in a store (tiler/tiled.h), the tiles advance
 * K steps per generation, and the outputs are written tile by tile. Nothing
 * ever holds the whole map, so peak memory follows the tile size, not the
 * map size.
 *
 * The plan, one piece or tiled, core size, K and the store kind, is
 * tiler/plan.h's (its rules and memory model are written there); this
 * file hands it the options, the machine's memory (default --mem-limit:
 * 3/4 of the RAM, shared by the ranks of one machine) and the input's
 * facts, and words its outcome. A disk store lives in --store DIR, or
 * <output>.store when not given.
 *
 * Ranks (mpi/ranks.h): under `mpirun -np N` (N > 1) every rank runs this
 * path on the tiles it owns, with its own store (memory, or DIR/rank<r> of
 * the shared DIR); each phase ends with an agreement, so an error on any
 * rank stops all of them with its message. Rank 0 writes the outputs,
 * asking the owners for their cores, and books the initial volumes while
 * it re-reads the input for the erosion map (same cells, same order as a
 * load, so the same sums). Logs, progress and the report come from rank 0.
 */
#include "erode_tiled.h"
#include "io/state.h"
#include "kernels/stages.h"
#include "mpi/ranks.h"
#include "report.h"
#include "tiler/plan.h"
#include "tiler/volumes.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tiled_run {
  erode_opts *o;
  erode_source *src;
  talus_store *store;
  talus_tiled *g;
  talus_mpi_grid *m;           /* with more than one rank, else NULL */
  int core, K, disk, optional; /* optional: talus_tile_optional of the run */
  char dir[TALUS_PATH_BUF];    /* the disk store's directory */
  int overlap;                 /* the plan's: write-behind and read-ahead fit the limit */
  int64_t end;
  talus_volumes v0, v1;
  talus_run_stats stats;
  report_run rr;
  report_facts facts;
} tiled_run;

/* ---------------------------------------------------------------------
 * The plan (tiler/plan.h), from the options and the input's facts
 * ------------------------------------------------------------------- */

/* The optional state band groups of a run (io/state.h, TALUS_STATE_*). */
static int erode_tiled_state_extras(const talus_kparams *P) {
  int opt = talus_tile_optional(P);
  return (opt & TALUS_TILE_ACC ? TALUS_STATE_ACC : 0) |
         (opt & TALUS_TILE_FDIAG ? TALUS_STATE_FDIAG : 0) |
         (opt & TALUS_TILE_HARD ? TALUS_STATE_HARD : 0) |
         (talus_hf_grade_in(P) ? TALUS_STATE_GRADE : 0);
}

static int64_t default_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  int64_t all = pages > 0 && size > 0 ? (int64_t)pages * size / 4 * 3 : (int64_t)4 << 30;
  return all / talus_mpi_node_size(); /* ranks on one machine share its memory */
}

/* What the planner needs of the run: the options, the machine, and the
 * input's size nx × ny, its layers (P->nz), the scratch P's stages add
 * and whether it is a state. R, the step radius, is 0 until the input is
 * open (talus_plan_tiles reads it). */
static talus_plan_in tiled_plan_in(const erode_opts *o, int nx, int ny, const talus_kparams *P,
                                   int state) {
  talus_plan_in in = {0};
  in.nx = nx, in.ny = ny, in.nz = P->nz,
  in.state_bands = talus_state_bands(P->nz, erode_tiled_state_extras(P));
  if (P->model != TALUS_MODEL_HEIGHTFIELD)
    in.reach_layers =
        talus_plan_reach_layers(P->nz, state, P->enable_horizontal, P->erosion_spinup, o->steps);
  /* the droplets' totals (t->pt_acc: erosion, and river and deposit where
   * the run writes them), allocated by the first batch, which runs after
   * erosion.spinup (a state may resume past it) */
  if (P->pt_enable && (state || o->steps > (int64_t)P->erosion_spinup)) {
    talus_scratch_need need[TALUS_SCRATCH_NEEDS_MAX];
    int n = talus_stage_scratch_needs(TALUS_STAGE_PT_TRACE, P, need);
    for (int i = 0; i < n; i++)
      in.extra_scratch += (int)talus_scratch_bytes(&need[i], P->nz);
  }
  if (P->accumulate) /* the accumulators (persistent) and the start-of-step solid (scratch) */
    in.extra_scratch += TALUS_ACC_PLANES * (int)sizeof(float) + (int)sizeof(double);
  if (o->rain_map) in.extra_scratch += (int)sizeof(float);          /* the rain plane (t->rain) */
  if (talus_hf_grade_in(P)) in.extra_scratch += (int)sizeof(float); /* t->grade_in */
  if (P->model == TALUS_MODEL_HEIGHTFIELD) in.heightfield = P->enable_thermal ? 2 : 1;
  in.optional = talus_tile_optional(P);
  in.state_in = state, in.map_bands = o->maps ? erode_map_count() : 0,
  in.state_out = o->state != NULL;
  in.mem_limit = o->mem_limit;
  in.auto_limit = o->mem_limit ? 0 : default_limit();
  in.tile = o->tile, in.steps_per_exchange = o->steps_per_exchange;
  in.store_dir = o->store_dir != NULL, in.resume = o->resume;
  in.ranks = talus_mpi_size();
  in.gdal_cache = TALUS_GDAL_CACHE_BYTES;
  return in;
}

/* Core size, K and the store: the user's, else the plan's. Tiles that do
 * not fit a --mem-limit the user gave are refused. */
static talus_status tiled_plan(tiled_run *t) {
  const talus_kparams *P = &t->src->ctx.P;
  talus_plan_in in = tiled_plan_in(t->o, t->src->nx, t->src->ny, P, t->src->bands != NULL);
  in.input_bands = t->src->bands ? talus_bands_reader_nbands(t->src->bands) : 1;
  in.R = talus_step_radius(P);
  in.threads = omp_get_max_threads();
  talus_plan plan = {0};
  talus_plan_tiles(&in, &plan);
  t->core = plan.core, t->K = plan.K;
  if (plan.halo_refused)
    return talus_fail(TALUS_ERR_ARGUMENT, "erode",
                      "--steps-per-exchange %d makes a halo of %d cells around tiles of %d: more "
                      "than %d tiles wide; use at most %d steps per exchange, or larger tiles",
                      plan.K, plan.halo, plan.core, TALUS_PLAN_MAX_HALO_CORES,
                      TALUS_PLAN_MAX_HALO_CORES * plan.core / (in.R > 0 ? in.R : 1));
  if (plan.refused)
    return talus_fail(TALUS_ERR_ARGUMENT, "erode",
                      "tiles of %d cells with %d steps per exchange (halo %d) need about %.2f GiB, "
                      "more than --mem-limit %.2f GiB: use a smaller --tile or a larger limit",
                      t->core, t->K, plan.halo, plan.tile_bytes / 1073741824.0,
                      plan.limit / 1073741824.0);
  t->disk = plan.store == TALUS_STORE_DISK;
  t->overlap = plan.overlap;
  t->o->predicted_bytes = plan.tile_bytes + (t->disk ? 0 : plan.kept_bytes);
  if (t->o->store_dir)
    snprintf(t->dir, sizeof t->dir, "%s", t->o->store_dir);
  else if (t->disk)
    app_derived_path(t->dir, sizeof t->dir, t->o->output, ".store");
  return TALUS_OK;
}

/* The cell size [m] a run of o->input uses, from its metadata alone: a
 * state's own; a DEM's input.cell_size, else its georeferencing. */
static talus_status erode_plan_cell(const erode_opts *o, const talus_params *p,
                                    const talus_bands_reader *r, int state, double *cell) {
  if (state) {
    talus_state_header h;
    talus_status st = talus_state_header_reader(r, &h);
    *cell = st ? 0.0 : h.cell;
    return st;
  }
  talus_params_get(p, "input.cell_size", cell);
  return *cell > 0.0 ? TALUS_OK : talus_raster_cell_size(o->input, cell);
}

talus_status erode_input_kparams(const erode_opts *o, const talus_params *p, talus_kparams *P,
                                 erode_input_meta *m) {
  talus_bands_reader *r = NULL;
  erode_input_meta meta = {0};
  talus_status st = talus_bands_reader_open(o->input, &r);
  if (st) return st;
  meta.nx = talus_bands_reader_nx(r), meta.ny = talus_bands_reader_ny(r);
  meta.state = talus_state_reader_probe(r, &meta.layers);
  meta.bands = talus_bands_reader_nbands(r);
  st = erode_plan_cell(o, p, r, meta.state, &meta.cell);
  talus_bands_reader_close(r);
  if (!st) st = talus_params_to_kparams(p, meta.cell, P);
  if (!st && meta.layers > 0) P->nz = meta.layers, st = talus_kparams_derive(P);
  if (!st && m) *m = meta;
  return st;
}

/* The planner's input for o->input without reading its cells: size,
 * layers (a state's own), whether it is a state, the step radius (of
 * the parameters derived on the input's cells, as the run derives them:
 * the droplets' radius is a length in cells) and the threads. */
static talus_status erode_plan_input(const erode_opts *o, const talus_params *p,
                                     talus_plan_in *in) {
  talus_kparams P;
  erode_input_meta m;
  talus_status st = erode_input_kparams(o, p, &P, &m);
  if (st) return st;
  *in = tiled_plan_in(o, m.nx, m.ny, &P, m.state);
  in->input_bands = m.state ? m.bands : 1;
  in->R = talus_step_radius(&P);
  in->threads = omp_get_max_threads();
  return TALUS_OK;
}

talus_status erode_use_tiles(erode_opts *o, const talus_params *p, int *tiled) {
  *tiled = 0;
  talus_plan_in in;
  talus_status st = erode_plan_input(o, p, &in);
  if (st) return st;
  talus_plan plan;
  talus_plan_pieces(&in, &plan);
  if (plan.too_large)
    return talus_fail(TALUS_ERR_DATA, "erode",
                      "'%s' is %d x %d cells, too large: at most %lld cells", o->input, in.nx,
                      in.ny, (long long)TALUS_PLAN_MAX_CELLS);
  *tiled = plan.tiled;
  o->predicted_bytes = plan.one_bytes;
  if (plan.tiled && !plan.asked && !o->dry_run)
    talus_info("%d x %d cells need about %.1f GiB in one piece, more than the %.1f GiB limit: "
               "running tiled",
               in.nx, in.ny, plan.one_bytes / 1073741824.0, plan.limit / 1073741824.0);
  return TALUS_OK;
}

/* Bytes as "1.23 GiB" or "456 MiB" into buf. */
static const char *plan_size(int64_t bytes, char *buf, size_t n) {
  if (bytes >= (int64_t)1 << 30)
    snprintf(buf, n, "%.2f GiB", bytes / 1073741824.0);
  else
    snprintf(buf, n, "%.0f MiB", bytes / 1048576.0);
  return buf;
}

/* The dry run's disk lines: the store's bound before zstd (every layer in
 * use), then where the cells start with fewer layers (a DEM's one column)
 * those bytes, and the typical store after zstd (tiler/plan.h). */
static void erode_dry_run_disk(const talus_plan_in *in, const talus_plan *plan) {
  char a[32], b[32], c[32];
  int L = talus_plan_start_layers(in);
  int64_t most = talus_plan_disk_bytes(in, plan->core, plan->halo, in->nz);
  int64_t start = talus_plan_disk_bytes(in, plan->core, plan->halo, L);
  printf("disk:     at most %s in the store before zstd (two generations of cores and strips, "
         "%d layer%s a cell)\n",
         plan_size(most, a, sizeof a), in->nz, in->nz == 1 ? "" : "s");
  if (L < in->nz)
    printf("          %s before zstd while the cells keep the DEM's one column\n",
           plan_size(start, a, sizeof a));
  printf("          typically %s to %s after zstd (%.1fx to %.1fx as measured once water has "
         "spread; more in the first steps and on smooth maps)\n",
         plan_size((int64_t)(start / TALUS_PLAN_ZSTD_HIGH), b, sizeof b),
         plan_size((int64_t)(start / TALUS_PLAN_ZSTD_LOW), c, sizeof c), TALUS_PLAN_ZSTD_HIGH,
         TALUS_PLAN_ZSTD_LOW);
}

talus_status erode_dry_run(erode_opts *o, const talus_params *p) {
  talus_plan_in in;
  talus_status st = erode_plan_input(o, p, &in);
  if (st) return st;
  talus_plan plan;
  talus_plan_pieces(&in, &plan);
  char a[32], b[32], c[32];
  printf("input:    %s, %d x %d cells, %d layer%s, %s\n", o->input, in.nx, in.ny, in.nz,
         in.nz == 1 ? "" : "s", in.state_in ? "a talus state" : "a DEM");
  printf("steps:    %lld, step radius %d cells, %d threads\n", (long long)o->steps, in.R,
         in.threads);
  printf("limit:    %s%s\n", plan_size(plan.limit, a, sizeof a),
         o->mem_limit ? " (--mem-limit)" : " (3/4 of the RAM)");
  if (plan.too_large)
    return talus_fail(TALUS_ERR_DATA, "erode", "%d x %d cells: too large", in.nx, in.ny);
  if (!plan.tiled) {
    printf("plan:     one piece in memory\nmemory:   about %s\n",
           plan_size(plan.one_bytes, a, sizeof a));
    return TALUS_OK;
  }
  talus_plan_tiles(&in, &plan);
  int ntiles = ((in.nx + plan.core - 1) / plan.core) * ((in.ny + plan.core - 1) / plan.core);
  printf("plan:     %d tiles of %d cells, %d steps per exchange, halo %d cells, %s store\n", ntiles,
         plan.core, plan.K, plan.halo, plan.store == TALUS_STORE_DISK ? "disk" : "memory");
  int64_t mem = plan.tile_bytes + (plan.store == TALUS_STORE_DISK ? 0 : plan.kept_bytes);
  printf("memory:   about %s (working set %s, kept tiles %s)\n", plan_size(mem, a, sizeof a),
         plan_size(plan.tile_bytes, b, sizeof b),
         plan_size(plan.store == TALUS_STORE_DISK ? 0 : plan.kept_bytes, c, sizeof c));
  if (plan.store == TALUS_STORE_DISK) erode_dry_run_disk(&in, &plan);
  if (plan.halo_refused || plan.refused)
    return talus_fail(TALUS_ERR_ARGUMENT, "erode", "this plan would be refused: %s",
                      plan.halo_refused ? "the halo is wider than 4 tiles" : "over --mem-limit");
  return TALUS_OK;
}

/* ---------------------------------------------------------------------
 * The store and the start of the run
 * ------------------------------------------------------------------- */

/* Identifies the run: input file, grid, tiling, steps and parameters, so
 * a store is only ever resumed by the run that wrote it. */
static talus_status tiled_run_id(const tiled_run *t, const talus_params *p, char *id, size_t n) {
  char *json = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&json, &len);
  if (!f) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for the run id");
  talus_params_write_json(p, f, 0);
  fclose(f);
  uint32_t crc = talus_crc32c(0, json, len);
  free(json);
  struct stat sb;
  memset(&sb, 0, sizeof sb);
  stat(t->o->input, &sb);
  char real[TALUS_PATH_MAX];
  if (!realpath(t->o->input, real)) snprintf(real, sizeof real, "%s", t->o->input);
  snprintf(id, n,
           "talus-erode-1 %dx%d nz=%d core=%d K=%d steps=%lld..%lld params=%08x "
           "input=%lld:%lld:%.900s",
           t->src->nx, t->src->ny, t->src->ctx.P.nz, t->core, t->K, (long long)t->src->step,
           (long long)t->end, (unsigned)crc, (long long)sb.st_size, (long long)sb.st_mtime, real);
  if (talus_mpi_size() > 1) /* a rank's store holds its own tiles */
    snprintf(id + strlen(id), n - strlen(id), " rank=%d/%d", talus_mpi_rank(), talus_mpi_size());
  return TALUS_OK;
}

static talus_status tiled_open_store(tiled_run *t, const talus_params *p) {
  int ntx = (t->src->nx + t->core - 1) / t->core, nty = (t->src->ny + t->core - 1) / t->core;
  char id[TALUS_STORE_RUN_ID_MAX], dir[TALUS_PATH_BUF + TALUS_PATH_SUFFIX_MAX];
  snprintf(dir, sizeof dir, "%s", t->dir);
  if (talus_mpi_size() > 1) /* ranks share DIR, one sub-directory each */
    snprintf(dir, sizeof dir, "%s/rank%d", t->dir, talus_mpi_rank());
  talus_status st = tiled_run_id(t, p, id, sizeof id);
  if (!st)
    st = talus_store_open(&t->store, t->disk ? TALUS_STORE_DISK : TALUS_STORE_MEMORY,
                          t->disk ? dir : NULL, id, ntx * nty, t->o->resume);
  if (!st) talus_store_set_level(t->store, t->o->store_level);
  if (!st && !t->overlap) st = talus_store_set_io_threads(t->store, -1); /* over the limit */
  if (st && t->o->resume)
    talus_fail_context(st,
                       "cannot resume from --store %s (it must hold a run of the same "
                       "input, parameters, --steps, --tile and --steps-per-exchange)",
                       t->dir);
  return st;
}

/* Fills a tile from the input and books its initial volumes. */
static talus_status tiled_fill(void *user, talus_tile *tile, talus_rect r) {
  tiled_run *t = user;
  talus_status st = erode_source_fill(t->src, tile, r);
  if (!st) talus_volumes_add(tile, r, &t->v0);
  return st;
}

static talus_status tiled_save_volumes(tiled_run *t) {
  const talus_volumes *v = &t->v0;
  char text[512];
  snprintf(text, sizeof text, "%a %a %a %a %a %lld %a", v->m[0], v->m[1], v->m[2], v->m[3],
           v->bedrock0, (long long)v->live, v->lowest);
  return talus_store_set_meta(t->store, "initial_volumes", text);
}

static int tiled_load_volumes(tiled_run *t) {
  const char *text = talus_store_get_meta(t->store, "initial_volumes");
  talus_volumes *v = &t->v0;
  long long live = 0;
  if (!text || sscanf(text, "%la %la %la %la %la %lld %la", &v->m[0], &v->m[1], &v->m[2], &v->m[3],
                      &v->bedrock0, &live, &v->lowest) != 7)
    return 0;
  v->live = live;
  return 1;
}

/* Every tile committed and the initial volumes recorded: a run got past
 * its load. */
static int tiled_loaded(tiled_run *t) {
  for (int i = 0; i < talus_tiled_count(t->g); i++)
    if (talus_store_committed(t->store, i) < 0) return 0;
  return tiled_load_volumes(t);
}

/* Builds every tile from the input, or picks up a killed run's store. */
static talus_status tiled_start(tiled_run *t) {
  talus_tile_source src = {tiled_fill, t};
  int resumed = 0; /* the report tells --resume as asked, as without ranks */
  if (t->m) return talus_mpi_start(t->m, &src, t->o->resume, &resumed);
  if (t->o->resume && tiled_loaded(t)) return talus_tiled_resume(t->g);
  talus_volumes_reset(&t->v0);
  talus_status st = talus_tiled_load(t->g, &src);
  return st ? st : tiled_save_volumes(t);
}

static int tiled_progress(int64_t done, int64_t total, void *user) {
  return app_progress_cb(total > 0 ? (double)done / (double)total : 1.0, NULL, user);
}

static talus_status tiled_advance(tiled_run *t) {
  app_progress bar;
  int64_t todo = t->end - talus_tiled_step(t->g);
  app_progress_begin(&bar, "eroding", todo, t->o->quiet);
  double t0 = talus_now();
  talus_status st = t->m ? talus_mpi_run(t->m, t->end, &t->stats, tiled_progress, &bar)
                         : talus_tiled_run(t->g, t->end, &t->stats, tiled_progress, &bar);
  t->rr.seconds = talus_now() - t0;
  app_progress_end(&bar);
  return st;
}

/* ---------------------------------------------------------------------
 * Outputs, tile row by tile row
 * ------------------------------------------------------------------- */

/* A tile of persistent fields only (what the store holds, less the
 * optional planes not in `optional`): reading back needs no scratch,
 * which would double the footprint. */
static talus_status tiled_light_tile(const tiled_run *t, int w, int h, int optional,
                                     talus_tile **out) {
  return talus_tile_create_groups(out, (talus_rect){0, 0, w, h}, t->src->ctx.P.nz, optional,
                                  TALUS_TILE_PERSISTENT);
}

/* The committed core of a tile, from this process or its rank. */
static talus_status tiled_read_core(tiled_run *t, int tile, talus_tile *core) {
  return t->m ? talus_mpi_read_core(t->m, tile, core) : talus_tiled_read_core(t->g, tile, core);
}

/* Highest column count over the committed cores (the state's layers). */
static talus_status tiled_layers(tiled_run *t, talus_tile *core, int *L) {
  *L = 1;
  for (int i = 0; i < talus_tiled_count(t->g); i++) {
    talus_status st = tiled_read_core(t, i, core);
    if (st) return st;
    *L = talus_state_layers(core, *L);
  }
  return TALUS_OK;
}

/* The initial surface of rectangle r, re-read from the input into tile b. */
static talus_status tiled_before(tiled_run *t, talus_tile *b, talus_rect r, float *out) {
  talus_status st = talus_tile_reset(b, r);
  if (!st) st = erode_source_fill(t->src, b, r);
  for (int y = 0; y < r.h && !st; y++)
    for (int x = 0; x < r.w; x++) {
      size_t idx = talus_idx(b, x, y), ct = talus_col(b, idx, b->count[idx] - 1);
      out[(size_t)y * r.w + x] = b->B[ct] + b->s[ct];
    }
  return st;
}

/* Adds tile `tile`'s core (in core) to the outputs, a block row at a time. */
static talus_status tiled_output_tile(tiled_run *t, erode_writer *w, talus_tile *core,
                                      talus_tile *b, float *before, int tile) {
  talus_rect c = talus_tiled_core(t->g, tile);
  int bh = erode_writer_block_rows(w);
  talus_status st = tiled_read_core(t, tile, core);
  if (!st) talus_volumes_add(core, c, &t->v1);
  /* the state keeps the input's drop, a static input the store does not hold */
  if (!st && t->o->state && talus_hf_grade_in(&t->src->ctx.P))
    st = erode_source_grade(t->src, core, c);
  for (int y0 = c.y0; y0 < c.y0 + c.h && !st; y0 += bh) {
    talus_rect r = {c.x0, y0, c.w, c.y0 + c.h - y0 < bh ? c.y0 + c.h - y0 : bh};
    st = tiled_before(t, b, r, before);
    if (!st && t->m) talus_volumes_add(b, r, &t->v0); /* row-major over the core, as a load */
    if (!st) st = erode_writer_add(w, core, r, before);
  }
  return st;
}

static talus_status tiled_output_rows(tiled_run *t, erode_writer *w, talus_tile *core) {
  int bh = erode_writer_block_rows(w), ntiles = talus_tiled_count(t->g);
  talus_tile *b = NULL;
  float *before = NULL;
  /* b holds the input's initial surface only: no hardness plane, so the
   * source does not read --hardness again for every block row */
  talus_status st = tiled_light_tile(t, t->core, bh, t->optional & ~TALUS_TILE_HARD, &b);
  if (!st) st = talus_alloc((void **)&before, (size_t)t->core * bh * 4, "initial surface");
  talus_volumes_reset(&t->v1);
  if (t->m) talus_volumes_reset(&t->v0);
  for (int i = 0; i < ntiles && !st; i++) {
    st = tiled_output_tile(t, w, core, b, before, i);
    talus_rect c = talus_tiled_core(t->g, i);
    if (!st && c.x0 + c.w == t->src->nx) st = erode_writer_rows_done(w, c.y0 + c.h);
  }
  talus_free(before);
  talus_tile_free(b);
  return st;
}

/* The preview's cross-section along row y, from the cores that cross it. */
static talus_status tiled_output_section(tiled_run *t, talus_tile *core, int y) {
  talus_section_cut c;
  const talus_kparams *P = &t->src->ctx.P;
  talus_status st = talus_section_cut_alloc(&c, t->src->nx, P->nz, (double)P->cell_size);
  for (int i = 0; i < talus_tiled_count(t->g) && !st; i++) {
    talus_rect r = talus_tiled_core(t->g, i);
    if (y < r.y0 || y >= r.y0 + r.h) continue;
    st = tiled_read_core(t, i, core);
    if (!st) erode_section_add(&c, core, r, y);
  }
  if (!st) st = erode_section_write(t->o, &c, y);
  talus_section_cut_free(&c);
  return st;
}

static talus_status tiled_output(tiled_run *t) {
  talus_tiled_trim(t->g);
  if (t->m && talus_mpi_rank() != 0) return talus_mpi_serve_cores(t->m);
  talus_tile *core = NULL;
  erode_writer *w = NULL;
  int L = 1;
  talus_status st = tiled_light_tile(t, t->core, t->core, t->optional, &core);
  if (!st && t->o->state) st = tiled_layers(t, core, &L);
  if (!st)
    st = erode_writer_open(&w, t->o, &t->src->geo, t->src->nx, t->src->ny,
                           (double)t->src->ctx.P.cell_size, t->src->ctx.P.nz, L,
                           erode_tiled_state_extras(&t->src->ctx.P), t->end, t->core);
  if (!st) st = tiled_output_rows(t, w, core);
  int row = st ? -1 : erode_writer_section_row(w);
  if (!st) {
    st = erode_writer_commit(w);
  } else {
    erode_writer_abort(w);
  }
  if (!st && row >= 0) st = tiled_output_section(t, core, row);
  talus_tile_free(core);
  if (t->m) talus_mpi_cores_done(t->m);
  return st;
}

/* ---------------------------------------------------------------------
 * The run
 * ------------------------------------------------------------------- */

static void tiled_facts(tiled_run *t) {
  report_facts *f = &t->facts;
  const talus_kparams *P = &t->src->ctx.P;
  double area = (double)P->cell_size * (double)P->cell_size, heights[TALUS_FLOW_COUNT];
  memset(f, 0, sizeof *f);
  f->nx = t->src->nx, f->ny = t->src->ny, f->layers = P->nz, f->cell_size = (double)P->cell_size;
  f->dt = (double)P->dt;
  memcpy(f->stage_seconds, t->stats.stage_seconds, sizeof f->stage_seconds);
  talus_tiled_flows(t->g, heights);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    f->flows[i] = heights[i] * area;
  double datum = isfinite(t->v0.lowest) ? t->v0.lowest : 0.0;
  talus_volumes_of(&t->v0, datum, area, f->ledger.initial);
  talus_volumes_of(&t->v1, datum, area, f->ledger.current);
  report_close_ledger(f);
  talus_store_stats ss;
  talus_store_get_stats(t->store, &ss);
  f->tiling = (report_tiling){t->disk ? "disk" : "memory",
                              t->disk ? t->dir : NULL,
                              talus_tiled_count(t->g),
                              t->core,
                              talus_tiled_halo(t->g),
                              t->K,
                              t->o->resume,
                              ss.raw_written,
                              ss.bytes_written,
                              ss.raw_read,
                              ss.bytes_read};
  f->nranks = talus_mpi_rank_times(t->m, &f->rank_times);
}

static talus_status tiled_prepare(tiled_run *t, const talus_params *p) {
  talus_status st = erode_source_open(&t->src, t->o->input, p);
  if (!st) st = erode_check_params(&t->src->ctx.P);
  if (!st && t->o->hardness) st = erode_source_hardness(t->src, t->o->hardness, t->o->quiet);
  if (!st && t->o->rain_map) st = erode_source_rain(t->src, t->o->rain_map, t->o->quiet);
  if (!st) st = talus_backend_choose_reported(t->o->device, &t->src->ctx.backend);
  if (st) return st;
  t->end = t->src->step + t->o->steps;
  t->optional = talus_tile_optional(&t->src->ctx.P);
  st = tiled_plan(t);
  if (st) return st;
  st = tiled_open_store(t, t->src->params);
  if (!st) st = talus_tiled_create(&t->g, &t->src->ctx, t->core, t->K, t->store);
  /* --rain-map and heightfield.grade_share's input drop: every buffer,
   * halo included, reads its window of the map (they never change, so
   * they need not travel in the halo blocks) */
  talus_tile_source inputs = {erode_source_inputs, t->src};
  if (!st && (t->o->rain_map || talus_hf_grade_in(&t->src->ctx.P)))
    talus_tiled_set_inputs(t->g, &inputs);
  if (!st && talus_mpi_size() > 1) st = talus_mpi_grid_create(&t->m, t->g);
  if (!st && !t->o->quiet)
    talus_info("%d tiles of %d cells, halo %d, %d steps per exchange, %s store%s%s%s",
               talus_tiled_count(t->g), t->core, talus_tiled_halo(t->g), t->K,
               t->disk ? "disk" : "memory", t->disk ? " in " : "", t->disk ? t->dir : "",
               t->m ? ", one per rank" : "");
  return st;
}

/* Rank 0 tells the strip traffic between ranks. */
static void tiled_traffic(const tiled_run *t) {
  int64_t bytes = 0, gens = 0;
  talus_mpi_traffic(t->m, &bytes, &gens);
  if (!t->o->quiet && gens > 0)
    talus_info("%d ranks exchanged %.3f MB of strips in %lld generations (%.3f MB per generation)",
               talus_mpi_size(), bytes / 1e6, (long long)gens, bytes / 1e6 / (double)gens);
}

static talus_status tiled_finish(tiled_run *t, const talus_params *p) {
  if (t->m && talus_mpi_rank() != 0) return TALUS_OK; /* rank 0 reports */
  tiled_facts(t);
  if (t->m) tiled_traffic(t);
  talus_status st = TALUS_OK;
  if (t->o->report) st = report_write(t->o->report, &t->rr, &t->facts, p);
  if (!st && !t->o->quiet) report_print_summary(stderr, &t->rr, &t->facts);
  return st;
}

talus_status erode_tiled(erode_opts *o, const talus_params *p) {
  tiled_run t;
  memset(&t, 0, sizeof t);
  t.o = o;
  /* With ranks every phase ends agreed: all ranks go on, or all stop. */
  talus_status st = talus_mpi_agree(tiled_prepare(&t, p));
  if (!st) {
    t.rr =
        (report_run){o->input,           o->output, o->steps, t.src->step, 0, omp_get_max_threads(),
                     o->predicted_bytes, 0.0,       0.0};
    st = talus_mpi_agree(tiled_start(&t));
    t.rr.setup_seconds = talus_now() - o->t_start;
  }
  if (!st) st = tiled_advance(&t);
  double t1 = talus_now();
  if (!st) st = talus_mpi_agree(tiled_output(&t));
  t.rr.output_seconds = talus_now() - t1;
  if (!st) st = talus_mpi_agree(tiled_finish(&t, t.src->params));
  int ranked = t.m != NULL;
  talus_mpi_grid_free(t.m);
  talus_tiled_free(t.g);
  if (t.src && t.src->ctx.backend == TALUS_BACKEND_CUDA) talus_cuda_release();
  if (!st && t.store) {
    st = talus_mpi_agree(talus_store_destroy(t.store));
    if (!st && ranked && t.disk && talus_mpi_rank() == 0) rmdir(t.dir); /* the ranks' parent */
  } else if (t.store) {
    talus_store_close(t.store);
    if (t.disk && st != TALUS_ERR_FORMAT)
      talus_fail_context(st, "the store in %s is kept: continue with --store %s --resume", t.dir,
                         t.dir);
  }
  erode_source_close(t.src);
  return st;
}
