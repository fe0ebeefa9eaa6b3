/*
 * report.c — run report (JSON) and terminal summary.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const material_names[TALUS_MAT_COUNT] = {"water", "sediment", "sand",
                                                              "bedrock"};

void report_ledger_ratios(const talus_domain *d, double *rel_material, double *rel_water) {
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double solids = L.initial[TALUS_MAT_SEDIMENT] + L.initial[TALUS_MAT_SAND] +
                  L.initial[TALUS_MAT_BEDROCK] + L.initial[TALUS_MAT_WATER];
  double added = talus_domain_flow(d, TALUS_FLOW_RAIN) + talus_domain_flow(d, TALUS_FLOW_SOURCE);
  *rel_material = solids > 0 ? fabs(L.total_residual) / solids : 0.0;
  *rel_water = added > 0 ? fabs(L.residual[TALUS_MAT_WATER]) / added : 0.0;
}

static double report_mcells(const report_run *run, const talus_domain *d) {
  double cells = (double)talus_domain_nx(d) * talus_domain_ny(d) * (double)run->steps;
  return run->seconds > 0 ? cells / run->seconds / 1e6 : 0.0;
}

static void report_json_ledger(FILE *f, const talus_domain *d) {
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  fprintf(f, "  \"ledger\": {\n    \"unit\": \"m3\",\n    \"flows\": {");
  for (int i = 0; i < talus_flow_count(); i++)
    fprintf(f, "%s\n      \"%s\": %.17g", i ? "," : "", talus_flow_name(i, NULL, NULL),
            talus_domain_flow(d, i));
  fprintf(f, "\n    },\n    \"materials\": {");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    fprintf(f,
            "%s\n      \"%s\": {\"initial\": %.17g, \"current\": %.17g, \"inflow\": %.17g, "
            "\"outflow\": %.17g, \"residual\": %.17g}",
            m ? "," : "", material_names[m], L.initial[m], L.current[m], L.inflow[m],
            L.outflow[m], L.residual[m]);
  double rm, rw;
  report_ledger_ratios(d, &rm, &rw);
  fprintf(f,
          "\n    },\n    \"total_residual\": %.17g,\n    \"residual_relative_to_material\": "
          "%.6g,\n    \"water_residual_relative_to_water_added\": %.6g\n  }",
          L.total_residual, rm, rw);
}

static void report_json(FILE *f, const report_run *run, const talus_domain *d,
                        const talus_params *p) {
  fprintf(f, "{\n  \"talus\": \"%s\",\n", talus_version());
  fprintf(f, "  \"input\": \"%s\",\n  \"output\": \"%s\",\n", run->input ? run->input : "",
          run->output ? run->output : "");
  fprintf(f, "  \"grid\": {\"nx\": %d, \"ny\": %d, \"cell_size_m\": %.9g, \"layers\": %d},\n",
          talus_domain_nx(d), talus_domain_ny(d), (double)d->ctx.P.cell_size,
          talus_domain_layers(d));
  fprintf(f, "  \"steps\": %lld,\n  \"first_step\": %lld,\n  \"threads\": %d,\n",
          (long long)run->steps, (long long)run->first_step, run->threads);
  fprintf(f, "  \"seconds\": %.6f,\n  \"mcell_steps_per_s\": %.6g,\n", run->seconds,
          report_mcells(run, d));
  fprintf(f, "  \"peak_rss_bytes\": %zu,\n  \"stage_seconds\": {", talus_peak_rss());
  for (int s = 0; s < talus_stage_count(); s++)
    fprintf(f, "%s\n    \"%s\": %.6f", s ? "," : "", talus_stage_name(s),
            talus_domain_stage_seconds(d, s));
  fprintf(f, "\n  },\n  \"parameters\": ");
  talus_params_write_json(p, f, 2);
  fprintf(f, ",\n");
  report_json_ledger(f, d);
  fprintf(f, "\n}\n");
}

talus_status report_write(const char *path, const report_run *run, const talus_domain *d,
                          const talus_params *p) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.partial", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return talus_fail(TALUS_ERR_IO, "report", "cannot write '%s': %s", path, strerror(errno));
  report_json(f, run, d, p);
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    remove(tmp);
    return talus_fail(TALUS_ERR_IO, "report", "cannot write '%s': %s", path, strerror(errno));
  }
  return TALUS_OK;
}

void report_print_summary(FILE *to, const report_run *run, const talus_domain *d) {
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double rm, rw;
  report_ledger_ratios(d, &rm, &rw);
  fprintf(to, "talus: %lld steps of %d x %d in %.2f s (%.1f Mcell-steps/s, %d threads)\n",
          (long long)run->steps, talus_domain_nx(d), talus_domain_ny(d), run->seconds,
          report_mcells(run, d), run->threads);
  fprintf(to, "talus: mass ledger [m3]  %-9s %14s %14s %14s %11s\n", "material", "initial",
          "current", "net flows", "residual");
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    fprintf(to, "talus:                   %-9s %14.6g %14.6g %14.6g %11.3g\n", material_names[m],
            L.initial[m], L.current[m], L.inflow[m] - L.outflow[m], L.residual[m]);
  fprintf(to, "talus: ledger residual %.3g m3 (%.2g of material, %.2g of water added)\n",
          L.total_residual, rm, rw);
}
