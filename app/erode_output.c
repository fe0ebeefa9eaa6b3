/*
 * erode_output.c — the run and the outputs of `talus erode`.
 */
#include "erode.h"
#include "report.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole-cell field with NoData cells set to the georef's NoData. */
static talus_status output_field(const talus_domain *d, const talus_georef *geo,
                                 talus_field field, float *out) {
  talus_status st = talus_domain_read(d, field, 0, out);
  if (st || !geo->has_nodata) return st;
  const talus_tile *t = d->tile;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      if (t->mask[talus_idx(t, x, y)]) out[(size_t)y * t->buf.w + x] = (float)geo->nodata;
  return TALUS_OK;
}

static talus_status output_one(const char *path, const talus_domain *d, const talus_georef *geo,
                               const talus_write_options *wo, const float *band,
                               const char *name) {
  const float *bands[1] = {band};
  const char *names[1] = {name};
  return talus_geotiff_write(path, talus_domain_nx(d), talus_domain_ny(d), 1, bands, names, NULL,
                             geo, wo);
}

/* The --maps outputs: water, sand, sediment, net erosion/deposition, columns. */
static talus_status output_maps(const erode_opts *o, const talus_domain *d,
                                const talus_georef *geo, const talus_write_options *wo,
                                const float *before, const float *after, float *scratch) {
  static const struct {
    talus_field field;
    const char *suffix, *name;
  } maps[] = {{TALUS_FIELD_WATER, "_water.tif", "water depth [m]"},
              {TALUS_FIELD_SAND, "_sand.tif", "sand thickness [m]"},
              {TALUS_FIELD_SEDIMENT, "_sediment.tif", "suspended sediment [m]"},
              {TALUS_FIELD_COLUMNS, "_columns.tif", "column count"}};
  char path[4200];
  talus_status st = TALUS_OK;
  for (size_t i = 0; i < sizeof maps / sizeof maps[0] && !st; i++) {
    app_derived_path(path, sizeof path, o->output, maps[i].suffix);
    st = output_field(d, geo, maps[i].field, scratch);
    if (!st) st = output_one(path, d, geo, wo, scratch, maps[i].name);
  }
  if (st) return st;
  size_t n = (size_t)talus_domain_nx(d) * talus_domain_ny(d);
  for (size_t i = 0; i < n; i++)
    scratch[i] = (geo->has_nodata && after[i] == (float)geo->nodata) ? after[i]
                                                                      : after[i] - before[i];
  app_derived_path(path, sizeof path, o->output, "_erosion.tif");
  return output_one(path, d, geo, wo, scratch, "net deposition (+) / erosion (-) [m]");
}

static talus_status output_all(const erode_opts *o, const talus_domain *d,
                               const talus_georef *geo, const float *before) {
  size_t n = (size_t)talus_domain_nx(d) * talus_domain_ny(d);
  float *after = malloc(n * sizeof *after), *scratch = malloc(n * sizeof *scratch);
  talus_write_options wo = {.creation_options = o->co};
  talus_status st = (after && scratch) ? TALUS_OK
                                       : talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for maps");
  if (!st) st = output_field(d, geo, TALUS_FIELD_SURFACE, after);
  if (!st) st = output_one(o->output, d, geo, &wo, after, "eroded surface [m]");
  if (!st && o->maps) st = output_maps(o, d, geo, &wo, before, after, scratch);
  if (!st && o->state) st = app_state_write(o->state, d, geo, &wo);
  if (!st && o->preview && !o->no_preview) {
    const uint8_t *mask = NULL;
    uint8_t *m = NULL;
    if (geo->has_nodata && (m = malloc(n))) {
      for (size_t i = 0; i < n; i++) m[i] = after[i] == (float)geo->nodata;
      mask = m;
    }
    st = talus_preview_png(o->preview, talus_domain_nx(d), talus_domain_ny(d),
                           (double)d->ctx.P.cell_size, before, after, mask, 2048);
    free(m);
  }
  free(after);
  free(scratch);
  return st;
}

talus_status erode_run_and_write(erode_opts *o, talus_domain *d, const talus_georef *geo,
                                 const talus_params *p) {
  size_t n = (size_t)talus_domain_nx(d) * talus_domain_ny(d);
  float *before = malloc(n * sizeof *before);
  if (!before) return talus_fail(TALUS_ERR_NOMEM, "erode", "no memory for the initial surface");
  talus_status st = output_field(d, geo, TALUS_FIELD_SURFACE, before);
  report_run run = {o->input, o->output, o->steps, talus_domain_step(d), 0, omp_get_max_threads()};
  app_progress bar;
  app_progress_begin(&bar, "eroding", o->steps, o->quiet);
  double t0 = talus_now();
  if (!st) st = talus_domain_run(d, o->steps, app_progress_cb, &bar);
  run.seconds = talus_now() - t0;
  app_progress_end(&bar);
  if (!st) st = output_all(o, d, geo, before);
  if (!st && o->report) st = report_write(o->report, &run, d, p);
  if (!st && !o->quiet) report_print_summary(stderr, &run, d);
  free(before);
  return st;
}
