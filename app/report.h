/*
 * report.h — the JSON run report (`--report run.json`) and the one-line
 * run summary: parameters, steps, per-stage times, throughput, peak memory,
 * tiling and store I/O, and the mass ledger. Both read a report_facts,
 * which a monolithic run takes from its domain and a tiled run assembles
 * from its tiles, so the two report alike.
 */
#ifndef TALUS_APP_REPORT_H
#define TALUS_APP_REPORT_H

#include "domain.h"
#include <stdio.h>

typedef struct report_run {
  const char *input, *output;
  int64_t steps;      /* steps of this run */
  int64_t first_step; /* global step the run started at */
  double seconds;     /* wall time of the simulation */
  int threads;
  int64_t predicted_bytes; /* the plan's peak memory (tiler/plan.h), beside the measured peak */
  double setup_seconds;    /* wall time from the command's start to the first step: read + set-up */
  double output_seconds;   /* wall time writing the outputs (the report excepted) */
} report_run;

/* How the run was tiled and what its store moved (zero for monolithic). */
typedef struct report_tiling {
  const char *store; /* "none" (monolithic), "memory" or "disk" */
  const char *dir;   /* disk store directory, else NULL */
  int tiles, core, halo, K;
  int resumed; /* continued a killed run (--resume) */
  uint64_t raw_written, bytes_written, raw_read, bytes_read;
} report_tiling;

/* Everything a report says about a finished run besides report_run. */
typedef struct report_facts {
  int nx, ny, layers;
  double cell_size;                        /* [m] */
  double dt;                               /* a step's simulated time [s] (water.finest_cell's) */
  double stage_seconds[TALUS_STAGE_COUNT]; /* wall time per stage */
  double flows[TALUS_FLOW_COUNT];          /* volumes moved [m³] */
  talus_ledger_summary ledger;
  report_tiling tiling;
  int nranks;               /* MPI ranks with timings (0: one process) */
  const double *rank_times; /* [nranks][TALUS_MPI_TIMES] (mpi/ranks.h), borrowed */
} report_facts;

/* Fills f from a monolithic domain (tiling: one tile, no store). */
void report_facts_from_domain(const talus_domain *d, report_facts *f);
/* Completes f->ledger's inflow, outflow and residuals from f->flows and
 * its initial and current volumes. */
void report_close_ledger(report_facts *f);

/* Writes the report to `path` (via a temporary file, renamed on success). */
talus_status report_write(const char *path, const report_run *run, const report_facts *f,
                          const talus_params *p);
/* Ledger residuals relative to the total material volume, to the water
 * added, and (the solids': bedrock, sand, sediment) to the solid the flows
 * moved — the one that shows a process making or losing rock, which the
 * whole map's volume hides; each 0 when its base is 0. */
void report_ledger_ratios(const report_facts *f, double *rel_material, double *rel_water,
                          double *rel_solid);
/* Prints the one-line summary and the ledger table to `to`. */
void report_print_summary(FILE *to, const report_run *run, const report_facts *f);

#endif /* TALUS_APP_REPORT_H */
