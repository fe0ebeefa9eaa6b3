/*
 * report.c — run report (JSON) and terminal summary.
 */
#include "report.h"

#include <errno.h>
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

void report_ledger_ratios(const report_facts *f, double *rel_material, double *rel_water) {
  const talus_ledger_summary *L = &f->ledger;
  double solids = L->initial[TALUS_MAT_SEDIMENT] + L->initial[TALUS_MAT_SAND] +
                  L->initial[TALUS_MAT_BEDROCK] + L->initial[TALUS_MAT_WATER];
  double added = f->flows[TALUS_FLOW_RAIN] + f->flows[TALUS_FLOW_SOURCE];
  *rel_material = solids > 0 ? fabs(L->total_residual) / solids : 0.0;
  *rel_water = added > 0 ? fabs(L->residual[TALUS_MAT_WATER]) / added : 0.0;
}

static double report_mcells(const report_run *run, const report_facts *f) {
  double cells = (double)f->nx * f->ny * (double)run->steps;
  return run->seconds > 0 ? cells / run->seconds / 1e6 : 0.0;
}

static void report_json_ledger(FILE *f, const report_facts *rf) {
  const talus_ledger_summary *L = &rf->ledger;
  fprintf(f, "  \"ledger\": {\n    \"unit\": \"m3\",\n    \"flows\": {");
  for (int i = 0; i < talus_flow_count(); i++)
    fprintf(f, "%s\n      \"%s\": %.17g", i ? "," : "", talus_flow_name(i, NULL, NULL),
            rf->flows[i]);
  fprintf(f, "\n    },\n    \"materials\": {");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    fprintf(f,
            "%s\n      \"%s\": {\"initial\": %.17g, \"current\": %.17g, \"inflow\": %.17g, "
            "\"outflow\": %.17g, \"residual\": %.17g}",
            m ? "," : "", material_names[m], L->initial[m], L->current[m], L->inflow[m],
            L->outflow[m], L->residual[m]);
  double rm, rw;
  report_ledger_ratios(rf, &rm, &rw);
  fprintf(f,
          "\n    },\n    \"total_residual\": %.17g,\n    \"residual_relative_to_material\": "
          "%.6g,\n    \"water_residual_relative_to_water_added\": %.6g\n  }",
          L->total_residual, rm, rw);
}

/* Tiling, halo, store and I/O: what the out-of-core machinery cost. */
static void report_json_tiling(FILE *f, const report_tiling *t) {
  double ratio = t->bytes_written ? (double)t->raw_written / (double)t->bytes_written : 0.0;
  fprintf(f,
          "  \"tiling\": {\"store\": \"%s\", \"store_dir\": \"%s\", \"tiles\": %d, "
          "\"core\": %d, \"halo_width\": %d, \"steps_per_exchange\": %d, \"resumed\": %s,\n"
          "    \"bytes_written\": %llu, \"raw_bytes_written\": %llu, \"bytes_read\": %llu, "
          "\"raw_bytes_read\": %llu, \"compression_ratio\": %.4g},\n",
          t->store ? t->store : "none", t->dir ? t->dir : "", t->tiles, t->core, t->halo, t->K,
          t->resumed ? "true" : "false", (unsigned long long)t->bytes_written,
          (unsigned long long)t->raw_written, (unsigned long long)t->bytes_read,
          (unsigned long long)t->raw_read, ratio);
}

static void report_json(FILE *f, const report_run *run, const report_facts *rf,
                        const talus_params *p) {
  fprintf(f, "{\n  \"talus\": \"%s\",\n", talus_version());
  fprintf(f, "  \"input\": \"%s\",\n  \"output\": \"%s\",\n", run->input ? run->input : "",
          run->output ? run->output : "");
  fprintf(f, "  \"grid\": {\"nx\": %d, \"ny\": %d, \"cell_size_m\": %.9g, \"layers\": %d},\n",
          rf->nx, rf->ny, rf->cell_size, rf->layers);
  fprintf(f, "  \"steps\": %lld,\n  \"first_step\": %lld,\n  \"threads\": %d,\n",
          (long long)run->steps, (long long)run->first_step, run->threads);
  fprintf(f, "  \"seconds\": %.6f,\n  \"mcell_steps_per_s\": %.6g,\n", run->seconds,
          report_mcells(run, rf));
  report_json_tiling(f, &rf->tiling);
  fprintf(f, "  \"peak_rss_bytes\": %zu,\n  \"stage_seconds\": {", talus_peak_rss());
  for (int s = 0; s < talus_stage_count(); s++)
    fprintf(f, "%s\n    \"%s\": %.6f", s ? "," : "", talus_stage_name(s), rf->stage_seconds[s]);
  fprintf(f, "\n  },\n  \"parameters\": ");
  talus_params_write_json(p, f, 2);
  fprintf(f, ",\n");
  report_json_ledger(f, rf);
  fprintf(f, "\n}\n");
}

talus_status report_write(const char *path, const report_run *run, const report_facts *f,
                          const talus_params *p) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.partial", path);
  FILE *out = fopen(tmp, "w");
  if (!out)
    return talus_fail(TALUS_ERR_IO, "report", "cannot write '%s': %s", path, strerror(errno));
  report_json(out, run, f, p);
  int bad = ferror(out);
  bad |= fclose(out) != 0;
  if (bad || rename(tmp, path) != 0) {
    remove(tmp);
    return talus_fail(TALUS_ERR_IO, "report", "cannot write '%s': %s", path, strerror(errno));
  }
  return TALUS_OK;
}

void report_print_summary(FILE *to, const report_run *run, const report_facts *f) {
  const talus_ledger_summary *L = &f->ledger;
  double rm, rw;
  report_ledger_ratios(f, &rm, &rw);
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
  fprintf(to, "talus: ledger residual %.3g m3 (%.2g of material, %.2g of water added)\n",
          L->total_residual, rm, rw);
}
