/*
 * erode_output.c — the monolithic run of `talus erode` and its outputs.
 * The outputs go through erode_writer one block row at a time, as a tiled
 * run's do, so both write the same bytes.
 */
#include "erode.h"
#include "io/state.h"
#include "report.h"

#include <omp.h>
#include <stdlib.h>

/* The preview's cross-section along row y of the domain. */
static talus_status output_section(const erode_opts *o, const talus_domain *d, int y) {
  talus_section_cut c;
  int nx = talus_domain_nx(d);
  talus_status st = talus_section_cut_alloc(&c, nx, d->tile->nz, (double)d->ctx.P.cell_size);
  if (!st) {
    erode_section_add(&c, d->tile, (talus_rect){0, 0, nx, talus_domain_ny(d)}, y);
    st = erode_section_write(o, &c, y);
  }
  talus_section_cut_free(&c);
  return st;
}

static talus_status output_all(const erode_opts *o, const talus_domain *d, const talus_georef *geo,
                               const float *before) {
  int nx = talus_domain_nx(d), ny = talus_domain_ny(d);
  erode_writer *w = NULL;
  talus_status st = erode_writer_open(&w, o, geo, nx, ny, (double)d->ctx.P.cell_size, d->tile->nz,
                                      o->state ? talus_state_layers(d->tile, 1) : 1,
                                      talus_state_extras(d->tile), d->ctx.step, 0);
  int bh = st ? 0 : erode_writer_block_rows(w);
  for (int y0 = 0; y0 < ny && !st; y0 += bh) {
    talus_rect r = {0, y0, nx, ny - y0 < bh ? ny - y0 : bh};
    st = erode_writer_add(w, d->tile, r, before + (size_t)y0 * nx);
    if (!st) st = erode_writer_rows_done(w, r.y0 + r.h);
  }
  if (st) {
    erode_writer_abort(w);
    return st;
  }
  int row = erode_writer_section_row(w);
  st = erode_writer_commit(w);
  if (!st && row >= 0) st = output_section(o, d, row);
  return st;
}

talus_status erode_run_and_write(erode_opts *o, talus_domain *d, const talus_georef *geo,
                                 const talus_params *p) {
  size_t n = (size_t)talus_domain_nx(d) * talus_domain_ny(d);
  float *before = malloc(n * sizeof *before);
  if (!before) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for the initial surface");
  talus_status st = talus_domain_read(d, TALUS_FIELD_SURFACE, 0, before);
  report_run run = {
      o->input,           o->output, o->steps, talus_domain_step(d), 0, omp_get_max_threads(),
      o->predicted_bytes, 0.0,       0.0};
  app_progress bar;
  app_progress_begin(&bar, "eroding", o->steps, o->quiet);
  double t0 = talus_now();
  run.setup_seconds = t0 - o->t_start;
  if (!st) st = talus_domain_run(d, o->steps, app_progress_cb, &bar);
  run.seconds = talus_now() - t0;
  app_progress_end(&bar);
  double t1 = talus_now();
  if (!st) st = output_all(o, d, geo, before);
  run.output_seconds = talus_now() - t1;
  report_facts facts;
  if (!st) report_facts_from_domain(d, &facts);
  if (!st && o->report) st = report_write(o->report, &run, &facts, p);
  if (!st && !o->quiet) report_print_summary(stderr, &run, &facts);
  free(before);
  return st;
}
