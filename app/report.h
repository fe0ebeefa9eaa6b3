/*
 * report.h — the JSON run report (`--report run.json`) and the one-line
 * run summary: parameters, steps, per-stage times, throughput, peak memory
 * and the mass ledger.
 */
#ifndef TALUS_APP_REPORT_H
#define TALUS_APP_REPORT_H

#include "domain.h"
#include <stdio.h>

typedef struct report_run {
  const char *input, *output;
  int64_t steps;        /* steps of this run */
  int64_t first_step;   /* global step the run started at */
  double seconds;       /* wall time of the simulation */
  int threads;
} report_run;

/* Writes the report to `path` (via a temporary file, renamed on success). */
talus_status report_write(const char *path, const report_run *run, const talus_domain *d,
                          const talus_params *p);
/* Ledger residuals relative to the total material volume and to the water
 * added; both 0 when nothing was present or added. */
void report_ledger_ratios(const talus_domain *d, double *rel_material, double *rel_water);
/* Prints the one-line summary and the ledger table to `to`. */
void report_print_summary(FILE *to, const report_run *run, const talus_domain *d);

#endif /* TALUS_APP_REPORT_H */
