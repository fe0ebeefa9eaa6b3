/*
 * test_dem_data.c — every DEM in $TALUS_TEST_DATA reads through
 * talus_dem_read, and its size, NoData count, height range and metric cell
 * size match ../shared/data/dem/SOURCES.md. Geographic files get the
 * geometric mean of dx and dy at their centre latitude (see io/raster.h).
 * Skipped (77) when $TALUS_TEST_DATA is unset.
 */
#include "check.h"
#include "io/raster/raster.h"
#include "kernels/state.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

typedef struct expected {
  const char *file;
  int nx, ny;
  long long nodata;
  double zmin, zmax;       /* valid heights [m] */
  double cell_lo, cell_hi; /* cell size [m] */
  int seen;
} expected;

/* SOURCES.md; geographic cell sizes are sqrt(dx*dy) at the centre latitude
 * (N44W072 44.5°: 66.09 × 92.66 m; zion 37.32°: 73.69 × 92.66 m; Fort Worth
 * 32.67°: 78.00 × 92.66 m; Austria 47.7°: 623.6 × 926.6 m). */
static expected table[] = {
    {"bigtujunga_srtm30m_utm11.tif", 1197, 643, 0, 315, 2295, 30.0, 30.0, 0},
    {"N44W072.hgt", 1201, 1201, 0, 115, 1908, 78.2, 78.3, 0},
    {"zion_srtm3s.tif", 465, 457, 0, 1024, 2892, 82.6, 82.7, 0},
    {"pysheds_fortworth_3s.tif", 367, 359, 0, 147, 298, 84.98, 85.05, 0},
    {"austria_srtm30s.tif", 948, 360, 196952, 108, 3547, 760.0, 760.4, 0},
    {"mandakini_srtm90m_utm44.bil", 587, 648, 172089, 644, 6741, 88.8141, 88.8142, 0},
};
#define NTABLE (int)(sizeof table / sizeof table[0])

static expected *lookup(const char *name) {
  for (int i = 0; i < NTABLE; i++)
    if (strcmp(table[i].file, name) == 0) return &table[i];
  return NULL;
}

/* Companion and documentation files that are not rasters themselves. */
static int skipped_name(const char *name) {
  const char *dot = strrchr(name, '.');
  return name[0] == '.' ||
         (dot && (strcmp(dot, ".hdr") == 0 || strcmp(dot, ".md") == 0 || strcmp(dot, ".xml") == 0));
}

/* Min and max of the valid heights. */
static void valid_range(const talus_dem *d, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (size_t i = 0; i < (size_t)d->nx * d->ny; i++) {
    if (d->nodata && d->nodata[i]) continue;
    *lo = d->height[i] < *lo ? d->height[i] : *lo;
    *hi = d->height[i] > *hi ? d->height[i] : *hi;
  }
}

static void check_file(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  talus_dem d;
  talus_status st = talus_dem_read(path, NULL, &d);
  CHECK(st == TALUS_OK, "%s: %s", name, talus_last_error());
  expected *e = lookup(name);
  if (st != TALUS_OK || !e) {
    if (!e) printf("%s: read, not in the table (no value checks)\n", name);
    talus_dem_free(&d);
    return;
  }
  e->seen = 1;
  double lo, hi;
  valid_range(&d, &lo, &hi);
  CHECK(d.nx == e->nx && d.ny == e->ny, "%s: %d x %d", name, d.nx, d.ny);
  CHECK(d.nodata_cells == e->nodata, "%s: %lld NoData cells", name, (long long)d.nodata_cells);
  CHECK(lo == e->zmin && hi == e->zmax, "%s: heights %g..%g", name, lo, hi);
  CHECK(d.cell_size >= e->cell_lo && d.cell_size <= e->cell_hi, "%s: cell size %.4f m", name,
        d.cell_size);
  printf("%s: %d x %d, %lld NoData, %g..%g m, cell %.4f m\n", name, d.nx, d.ny,
         (long long)d.nodata_cells, lo, hi, d.cell_size);
  talus_dem_free(&d);
}

/* FILL on a file with holes: no mask, every height finite and inside the
 * valid range (filling averages valid heights, it cannot overshoot). */
static void check_fill(const char *dir, const expected *e) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, e->file);
  talus_dem d;
  talus_dem_options o = {TALUS_NODATA_FILL, 0, 1, 0, 0};
  talus_status st = talus_dem_read(path, &o, &d);
  CHECK(st == TALUS_OK, "%s fill: %s", e->file, talus_last_error());
  if (st != TALUS_OK) return;
  double lo, hi;
  valid_range(&d, &lo, &hi);
  CHECK(d.nodata == NULL && d.filled_cells == e->nodata, "%s: filled %lld", e->file,
        (long long)d.filled_cells);
  CHECK(lo >= e->zmin && hi <= e->zmax, "%s: filled heights %g..%g", e->file, lo, hi);
  talus_dem_free(&d);
}

int main(void) {
  const char *dir = getenv("TALUS_TEST_DATA");
  if (!dir || !dir[0]) return check_skip("test_dem_data", "TALUS_TEST_DATA is not set");
  DIR *dp = opendir(dir);
  if (!dp) return check_skip("test_dem_data", "TALUS_TEST_DATA is not a readable directory");
  talus_log_set_level(0); /* the geographic-CRS warnings are expected here */
  struct dirent *ent;
  while ((ent = readdir(dp)) != NULL)
    if (!skipped_name(ent->d_name)) check_file(dir, ent->d_name);
  closedir(dp);
  for (int i = 0; i < NTABLE; i++) {
    CHECK(table[i].seen, "%s listed in SOURCES.md is missing from %s", table[i].file, dir);
    if (table[i].seen && table[i].nodata) check_fill(dir, &table[i]);
  }
  return check_report("test_dem_data");
}
