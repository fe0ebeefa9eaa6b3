/*
 * raster_read.c — whole-map reads: a DEM (band 1, NoData mask, policy,
 * cell size) and every band of a talus state. Both are thin wrappers over
 * the windowed readers of raster_window.c, so there is one code path.
 */
#define TALUS_RASTER_INTERNAL
#include "io/raster.h"

#include <cpl_string.h>
#include <stdlib.h>
#include <string.h>

talus_status talus_dem_read(const char *path, const talus_dem_options *opt, talus_dem *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "dem read: NULL output");
  memset(out, 0, sizeof *out);
  talus_dem_reader *r = NULL;
  talus_status st = talus_dem_reader_open_whole(path, opt, &r);
  if (st == TALUS_OK) st = talus_dem_reader_take(r, out);
  talus_dem_reader_close(r);
  return st;
}

void talus_dem_free(talus_dem *d) {
  if (!d) return;
  talus_free(d->height);
  talus_free(d->nodata);
  talus_georef_free(&d->geo);
  memset(d, 0, sizeof *d);
}

/* Allocates the per-band arrays of b (sized from r) and reads every band. */
static talus_status bands_load(const char *path, talus_bands_reader *r, talus_bands *b) {
  talus_status st = talus_raster_check_size(path, b->nx, b->ny, 0);
  if (st == TALUS_OK && !(b->band = calloc((size_t)b->nbands, sizeof *b->band)))
    st = talus_fail(TALUS_ERR_NOMEM, "io", "cannot allocate %d bands", b->nbands);
  size_t n = (size_t)b->nx * (size_t)b->ny;
  for (int k = 0; st == TALUS_OK && k < b->nbands; k++) {
    st = talus_alloc((void **)&b->band[k], n * sizeof(float), "raster band");
    if (st == TALUS_OK) st = talus_bands_reader_read(r, k, 0, 0, b->nx, b->ny, b->band[k]);
  }
  return st;
}

talus_status talus_bands_read(const char *path, talus_bands *out) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "io", "bands read: NULL output");
  memset(out, 0, sizeof *out);
  talus_bands_reader *r = NULL;
  talus_status st = talus_bands_reader_open(path, &r);
  if (st == TALUS_OK) {
    talus_bands_reader_take(r, out);
    st = bands_load(path, r, out);
  }
  talus_bands_reader_close(r);
  if (st != TALUS_OK) talus_bands_free(out);
  return st;
}

void talus_bands_free(talus_bands *b) {
  if (!b) return;
  for (int k = 0; k < b->nbands; k++) {
    if (b->band) talus_free(b->band[k]);
    if (b->name) free(b->name[k]);
  }
  free(b->band);
  free(b->name);
  CSLDestroy(b->metadata);
  talus_georef_free(&b->geo);
  memset(b, 0, sizeof *b);
}

const char *talus_bands_meta(const talus_bands *b, const char *key) {
  return (b && key) ? CSLFetchNameValue(b->metadata, key) : NULL;
}

int talus_bands_find(const talus_bands *b, const char *name) {
  for (int k = 0; b && name && k < b->nbands; k++)
    if (b->name[k] && strcmp(b->name[k], name) == 0) return k;
  return -1;
}
