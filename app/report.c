/*
 * report.c — run report (JSON, built as one io/json.h document) and
 * terminal summary.
 */
#include "report.h"
#include "io/json.h"
#include "mpi/ranks.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const material_names[TALUS_MAT_COUNT] = {"water", "sediment", "sand", "bedrock"};

void report_facts_from_domain(const talus_domain *d, report_facts *f) {
  memset(f, 0, sizeof *f);
  f->nx = talus_domain_nx(d);
  f->ny = talus_domain_ny(d);
  f->layers = talus_domain_layers(d);
  f->cell_size = (double)d->ctx.P.cell_size;
  f->dt = (double)d->ctx.P.dt;
  for (int s = 0; s < TALUS_STAGE_COUNT; s++)
    f->stage_seconds[s] = talus_domain_stage_seconds(d, s);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++)
    f->flows[i] = talus_domain_flow(d, i);
  talus_domain_ledger(d, &f->ledger);
  f->tiling = (report_tiling){.store = "none", .tiles = 1};
}

void report_close_ledger(report_facts *f) {
  talus_ledger_summary *L = &f->ledger;
  memset(L->inflow, 0, sizeof L->inflow);
  memset(L->outflow, 0, sizeof L->outflow);
  for (int i = 0; i < TALUS_FLOW_COUNT; i++) {
    talus_material from, to;
    talus_flow_name(i, &from, &to);
    if (from < TALUS_MAT_COUNT) L->outflow[from] += f->flows[i];
    if (to < TALUS_MAT_COUNT) L->inflow[to] += f->flows[i];
  }
  L->total_residual = 0.0;
  for (int m = 0; m < TALUS_MAT_COUNT; m++) {
    L->residual[m] = L->current[m] - L->initial[m] - L->inflow[m] + L->outflow[m];
    L->total_residual += L->residual[m];
  }
}

/* 1 for the solids (sediment, sand, bedrock), whose residual the ratio
 * against the solid moved sums. */
static int report_solid(talus_material m) {
  return m == TALUS_MAT_SEDIMENT || m == TALUS_MAT_SAND || m == TALUS_MAT_BEDROCK;
}

void report_ledger_ratios(const report_facts *f, double *rel_material, double *rel_water,
                          double *rel_solid) {
  const talus_ledger_summary *L = &f->ledger;
  double solids = L->initial[TALUS_MAT_SEDIMENT] + L->initial[TALUS_MAT_SAND] +
                  L->initial[TALUS_MAT_BEDROCK] + L->initial[TALUS_MAT_WATER];
  double added = f->flows[TALUS_FLOW_RAIN] + f->flows[TALUS_FLOW_SOURCE], moved = 0.0;
  for (int i = 0; i < TALUS_FLOW_COUNT; i++) {
    talus_material from, to;
    talus_flow_name(i, &from, &to);
    if (report_solid(from) || report_solid(to)) moved += fabs(f->flows[i]);
  }
  double solid_residual = L->residual[TALUS_MAT_SEDIMENT] + L->residual[TALUS_MAT_SAND] +
                          L->residual[TALUS_MAT_BEDROCK];
  *rel_material = solids > 0 ? fabs(L->total_residual) / solids : 0.0;
  *rel_water = added > 0 ? fabs(L->residual[TALUS_MAT_WATER]) / added : 0.0;
  *rel_solid = moved > 0 ? fabs(solid_residual) / moved : 0.0;
}

static double report_mcells(const report_run *run, const report_facts *f) {
  double cells = (double)f->nx * f->ny * (double)run->steps;
  return run->seconds > 0 ? cells / run->seconds / 1e6 : 0.0;
}

/* The share of the removed solid still suspended at which the summary
 * says so. */
#define REPORT_SUSPENDED_NOTE 0.05

/* The suspended sediment at the end [m³] over the solid (bedrock + sand)
 * the run removed: material that is neither in the surface nor gone off
 * the map (0 when the run removed none). The removed solid is what the
 * flows booked, not initial − current: those two sums of a large map's
 * heights carry the float residual (cave 512², 1000 steps: 16.6 m³ of
 * 2.4 million, which made 157 m³ suspended read as 112 % of 141). */
static double report_suspended_share(const talus_ledger_summary *L) {
  double removed = (L->outflow[TALUS_MAT_BEDROCK] - L->inflow[TALUS_MAT_BEDROCK]) +
                   (L->outflow[TALUS_MAT_SAND] - L->inflow[TALUS_MAT_SAND]);
  return removed > 0.0 ? L->current[TALUS_MAT_SEDIMENT] / removed : 0.0;
}

/* The ledger object: every flow, each material's volumes, the residuals,
 * the share still suspended. Returns a new object (the caller's), or NULL
 * with the error recorded. */
static talus_json *report_json_ledger(const report_facts *rf) {
  const talus_ledger_summary *L = &rf->ledger;
  talus_json *o = talus_json_object(), *flows = talus_json_object(), *mats = talus_json_object();
  talus_status st = talus_json_set(o, "unit", talus_json_string("m3"));
  for (int i = 0; !st && i < talus_flow_count(); i++)
    st = talus_json_set(flows, talus_flow_name(i, NULL, NULL), talus_json_real(rf->flows[i], NULL));
  if (!st) st = talus_json_set(o, "flows", flows), flows = NULL;
  for (int m = 0; !st && m < TALUS_MAT_COUNT; m++) {
    talus_json *v = talus_json_object();
    st = talus_json_set(v, "initial", talus_json_real(L->initial[m], NULL));
    if (!st) st = talus_json_set(v, "current", talus_json_real(L->current[m], NULL));
    if (!st) st = talus_json_set(v, "inflow", talus_json_real(L->inflow[m], NULL));
    if (!st) st = talus_json_set(v, "outflow", talus_json_real(L->outflow[m], NULL));
    if (!st) st = talus_json_set(v, "residual", talus_json_real(L->residual[m], NULL));
    st = st ? (talus_json_free(v), st) : talus_json_set(mats, material_names[m], v);
  }
  if (!st) st = talus_json_set(o, "materials", mats), mats = NULL;
  double rm, rw, rs;
  report_ledger_ratios(rf, &rm, &rw, &rs);
  if (!st) st = talus_json_set(o, "total_residual", talus_json_real(L->total_residual, NULL));
  if (!st) st = talus_json_set(o, "residual_relative_to_material", talus_json_real(rm, "%.6g"));
  if (!st)
    st = talus_json_set(o, "water_residual_relative_to_water_added", talus_json_real(rw, "%.6g"));
  if (!st)
    st = talus_json_set(o, "solid_residual_relative_to_solid_moved", talus_json_real(rs, "%.6g"));
  if (!st)
    st = talus_json_set(o, "suspended_share_of_removed",
                        talus_json_real(report_suspended_share(L), "%.6g"));
  talus_json_free(flows);
  talus_json_free(mats);
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* Tiling, halo, store and I/O: what the out-of-core machinery cost. Returns
 * a new object (the caller's), or NULL with the error recorded. */
static talus_json *report_json_tiling(const report_tiling *t) {
  double ratio = t->bytes_written ? (double)t->raw_written / (double)t->bytes_written : 0.0;
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "store", talus_json_string(t->store ? t->store : "none"));
  if (!st) st = talus_json_set(o, "store_dir", talus_json_string(t->dir ? t->dir : ""));
  if (!st) st = talus_json_set(o, "tiles", talus_json_int(t->tiles));
  if (!st) st = talus_json_set(o, "core", talus_json_int(t->core));
  if (!st) st = talus_json_set(o, "halo_width", talus_json_int(t->halo));
  if (!st) st = talus_json_set(o, "steps_per_exchange", talus_json_int(t->K));
  if (!st) st = talus_json_set(o, "resumed", talus_json_bool(t->resumed));
  if (!st) st = talus_json_set(o, "bytes_written", talus_json_int((int64_t)t->bytes_written));
  if (!st) st = talus_json_set(o, "raw_bytes_written", talus_json_int((int64_t)t->raw_written));
  if (!st) st = talus_json_set(o, "bytes_read", talus_json_int((int64_t)t->bytes_read));
  if (!st) st = talus_json_set(o, "raw_bytes_read", talus_json_int((int64_t)t->raw_read));
  if (!st) st = talus_json_set(o, "compression_ratio", talus_json_real(ratio, "%.4g"));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* Per-rank wall times under MPI: compute, exchange wait, store I/O. New
 * array or NULL. */
static talus_json *report_json_ranks(const report_facts *rf) {
  talus_json *a = talus_json_array();
  talus_status st = a ? TALUS_OK : TALUS_ERR_NOMEM;
  for (int r = 0; !st && r < rf->nranks; r++) {
    const double *t = rf->rank_times + (size_t)r * TALUS_MPI_TIMES;
    talus_json *o = talus_json_object();
    st = talus_json_set(o, "rank", talus_json_int(r));
    if (!st) st = talus_json_set(o, "compute_s", talus_json_real(t[TALUS_MPI_COMPUTE], "%.6f"));
    if (!st)
      st = talus_json_set(o, "exchange_wait_s", talus_json_real(t[TALUS_MPI_EXCHANGE], "%.6f"));
    if (!st) st = talus_json_set(o, "store_io_s", talus_json_real(t[TALUS_MPI_STORE], "%.6f"));
    st = st ? (talus_json_free(o), st) : talus_json_push(a, o);
  }
  if (st) talus_json_free(a);
  return st ? NULL : a;
}

/* The grid: size, cell size and layer count. New object or NULL. */
static talus_json *report_json_grid(const report_facts *rf) {
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "nx", talus_json_int(rf->nx));
  if (!st) st = talus_json_set(o, "ny", talus_json_int(rf->ny));
  if (!st) st = talus_json_set(o, "cell_size_m", talus_json_real(rf->cell_size, "%.9g"));
  if (!st) st = talus_json_set(o, "layers", talus_json_int(rf->layers));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* Wall time per stage [s]. New object or NULL. */
static talus_json *report_json_stages(const report_facts *rf) {
  talus_json *o = talus_json_object();
  talus_status st = TALUS_OK;
  for (int s = 0; !st && s < talus_stage_count(); s++)
    st = talus_json_set(o, talus_stage_name(s), talus_json_real(rf->stage_seconds[s], "%.6f"));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* Wall time of the run's phases [s]: read + set-up, the simulation (as
 * "seconds"), the outputs. New object or NULL. */
static talus_json *report_json_phases(const report_run *run) {
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "setup", talus_json_real(run->setup_seconds, "%.6f"));
  if (!st) st = talus_json_set(o, "simulation", talus_json_real(run->seconds, "%.6f"));
  if (!st) st = talus_json_set(o, "output", talus_json_real(run->output_seconds, "%.6f"));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

/* The whole report, in the order readers see it. New object or NULL. */
static talus_json *report_json(const report_run *run, const report_facts *rf,
                               const talus_params *p) {
  talus_json *o = talus_json_object();
  talus_status st = talus_json_set(o, "talus", talus_json_string(talus_version()));
  if (!st) st = talus_json_set(o, "input", talus_json_string(run->input ? run->input : ""));
  if (!st) st = talus_json_set(o, "output", talus_json_string(run->output ? run->output : ""));
  if (!st) st = talus_json_set(o, "grid", report_json_grid(rf));
  if (!st) st = talus_json_set(o, "steps", talus_json_int(run->steps));
  if (!st) st = talus_json_set(o, "first_step", talus_json_int(run->first_step));
  /* dt is a float: 7 digits give its decimal (0.025, not 0.0250000004) */
  if (!st) st = talus_json_set(o, "dt_s", talus_json_real(rf->dt, "%.7g"));
  if (!st)
    st = talus_json_set(o, "simulated_s", talus_json_real((double)run->steps * rf->dt, "%.7g"));
  if (!st) st = talus_json_set(o, "threads", talus_json_int(run->threads));
  if (!st) st = talus_json_set(o, "seconds", talus_json_real(run->seconds, "%.6f"));
  if (!st) st = talus_json_set(o, "phase_seconds", report_json_phases(run));
  if (!st)
    st = talus_json_set(o, "mcell_steps_per_s", talus_json_real(report_mcells(run, rf), "%.6g"));
  if (!st) st = talus_json_set(o, "tiling", report_json_tiling(&rf->tiling));
  if (!st && rf->nranks > 0) st = talus_json_set(o, "ranks", report_json_ranks(rf));
  if (!st) st = talus_json_set(o, "peak_rss_bytes", talus_json_int((int64_t)talus_peak_rss()));
  if (!st) st = talus_json_set(o, "predicted_peak_bytes", talus_json_int(run->predicted_bytes));
  if (!st) st = talus_json_set(o, "stage_seconds", report_json_stages(rf));
  if (!st) st = talus_json_set(o, "parameters", talus_params_json(p));
  if (!st) st = talus_json_set(o, "ledger", report_json_ledger(rf));
  if (st) talus_json_free(o);
  return st ? NULL : o;
}

talus_status report_write(const char *path, const report_run *run, const report_facts *f,
                          const talus_params *p) {
  talus_json *doc = report_json(run, f, p);
  talus_status st = doc ? talus_json_write_path(doc, path) : TALUS_ERR_NOMEM;
  talus_json_free(doc);
  return st;
}

void report_print_summary(FILE *to, const report_run *run, const report_facts *f) {
  const talus_ledger_summary *L = &f->ledger;
  double rm, rw, rs;
  report_ledger_ratios(f, &rm, &rw, &rs);
  fprintf(to, "talus: %lld steps of %d x %d in %.2f s (%.1f Mcell-steps/s, %d threads)\n",
          (long long)run->steps, f->nx, f->ny, run->seconds, report_mcells(run, f), run->threads);
  const report_tiling *t = &f->tiling;
  if (t->tiles > 1 || strcmp(t->store ? t->store : "none", "none"))
    fprintf(to,
            "talus: %d tiles of %d, halo %d, %d steps per exchange, %s store: %.1f MB written "
            "(compression %.2fx), %.1f MB read\n",
            t->tiles, t->core, t->halo, t->K, t->store, (double)t->bytes_written / 1e6,
            t->bytes_written ? (double)t->raw_written / (double)t->bytes_written : 0.0,
            (double)t->bytes_read / 1e6);
  fprintf(to, "talus: mass ledger [m3]  %-9s %14s %14s %14s %11s\n", "material", "initial",
          "current", "net flows", "residual");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    fprintf(to, "talus:                   %-9s %14.6g %14.6g %14.6g %11.3g\n", material_names[m],
            L->initial[m], L->current[m], L->inflow[m] - L->outflow[m], L->residual[m]);
  fprintf(to,
          "talus: ledger residual %.3g m3 (%.2g of material, %.2g of water added, %.2g of the "
          "solid moved)\n",
          L->total_residual, rm, rw, rs);
  /* Said where it matters: the surface (the output) holds only the bed. */
  double share = report_suspended_share(L);
  if (share >= REPORT_SUSPENDED_NOTE)
    fprintf(to,
            "talus: %.3g m3 of sediment, %.0f%% of the solid the run removed, is suspended in the "
            "water at the end: the surface does not hold it (--maps writes it as _sediment)\n",
            L->current[TALUS_MAT_SEDIMENT], 100.0 * share);
}
