/*
 * erode.h — private to `talus erode`: the parsed options, shared by the
 * argument/input half (erode.c) and the run/output half (erode_output.c).
 */
#ifndef TALUS_APP_ERODE_H
#define TALUS_APP_ERODE_H

#include "app.h"
#include "state.h"

#define ERODE_MAX_LIST 64
#define ERODE_KEY_OPTS 8

/* Parsed `talus erode` options; strings point into argv. */
typedef struct erode_opts {
  const char *input, *output, *state, *preview, *report;
  const char *hardness, *rain_map; /* per-cell input maps (resampled to the grid), or NULL */
  const char *configs[ERODE_MAX_LIST];
  int nconfigs;
  const char *sets[ERODE_MAX_LIST];
  int nsets;
  const char *co[ERODE_MAX_LIST + 1]; /* NULL-terminated -co list */
  int nco;
  int64_t steps;
  int maps, no_preview, quiet, threads;
  char preview_buf[4096];
  char keybuf[ERODE_KEY_OPTS][512]; /* "--cell-size 30" as "input.cell_size=30" */
  int nkeys;
} erode_opts;

/* Runs o->steps steps on d with the progress bar, then writes every
 * requested output. */
talus_status erode_run_and_write(erode_opts *o, talus_domain *d, const talus_georef *geo,
                                 const talus_params *p);

#endif /* TALUS_APP_ERODE_H */
