/*
 * carve_metrics.h — does an eroded DEM look carved? The acceptance figures
 * of ../shared/reference/dem-carving.md, computed from the surface before
 * and after a run:
 *   - D8 flow accumulation (cells draining through each cell, itself
 *     included) of the input, on the priority-flood filled surface (each
 *     filled cell a hair above the cell it spills to, so every cell drains
 *     to the border or a NoData sink);
 *   - channel cells: accumulation >= CARVE_CHANNEL_CELLS; hillslope cells:
 *     <= CARVE_HILL_CELLS;
 *   - mean erosion max(-dz, 0) per class, their ratio, mean dz on channels;
 *   - the Pearson correlation of erosion max(-dz, 0) with log(accumulation)
 *     over all valid cells (erosion concentrated where the flow gathers);
 *   - the 99.9th percentile of |dz| against the relief of the input, and the
 *     count of non-finite outputs where the input was valid;
 *   - trunk cells: accumulation >= CARVE_TRUNK_CELLS: their mean dz and the
 *     share of them raised by more than CARVE_BURIED_M (a trunk river buried
 *     under the load its tributaries brought, issue 17);
 *   - the tallest one-cell tower before and after: the most a valid cell
 *     stands above both its valid neighbours along a row or a column (a
 *     pile no slope could hold: a grid artefact, not a landform), and the
 *     tallest one the run built: the least of a cell's tower and its rise
 *     (a cell left standing while the river cut beside it was not built);
 *   - the tallest wall the run cut (carve_cut_wall): over the 8
 *     neighbour pairs, the part of a step steeper than a given slope that
 *     the run made (its drop less the input's), the least of the two: a
 *     river's slot with walls no hillslope holds (the whole Big Tujunga
 *     map: 124 m over 50 degrees), not a DEM's own cliff;
 *   - the most a cell on the map's edge was lowered: an outlet that took
 *     its slope from upstream dug a trench that ran away (5.5 km deep at
 *     the west edge of the whole Big Tujunga map; heightfield.base_level).
 * A fixture of the tests (static functions, no state); it owns nothing it
 * returns beyond the struct.
 */
#ifndef TALUS_TEST_CARVE_METRICS_H
#define TALUS_TEST_CARVE_METRICS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CARVE_CHANNEL_CELLS 200
#define CARVE_HILL_CELLS    5
#define CARVE_TRUNK_CELLS   2000
#define CARVE_BURIED_M      5.0

typedef struct carve_metrics {
  long channels, hills;   /* cells in each class */
  double channel_erosion; /* mean max(-dz, 0) on channel cells [m] */
  double hill_erosion;    /* mean max(-dz, 0) on hillslope cells [m] */
  double ratio;           /* channel_erosion / hill_erosion (inf when hills are 0) */
  double channel_net;     /* mean dz on channel cells [m] */
  double hill_net;        /* mean dz on hillslope cells [m] */
  double correlation;     /* Pearson r of erosion with log(accumulation), valid cells */
  double p999;            /* 99.9th percentile of |dz| over valid cells [m] */
  double relief;          /* max - min of the valid input [m] */
  long nonfinite;         /* valid input cells whose output is NaN or infinite */
  long trunks;            /* cells with accumulation >= CARVE_TRUNK_CELLS */
  double trunk_net;       /* mean dz on trunk cells [m] */
  double trunk_buried;    /* share of trunk cells raised by more than CARVE_BURIED_M */
  double tower_before;    /* tallest one-cell tower of the input [m] */
  double tower_after;     /* ... and of the output [m] */
  double tower_built;     /* the most a raised cell stands as a tower: min(tower, dz) [m] */
  double edge_lowered;    /* the most a valid cell on the map's edge was lowered [m] */
} carve_metrics;

/* A binary min-heap of cells keyed by height: the priority-flood queue. */
typedef struct carve_heap {
  long n;
  long *cell;
  double *key;
} carve_heap;

/* Pushes cell i with key z. */
static inline void carve_heap_push(carve_heap *h, long i, double z) {
  long k = h->n++;
  while (k > 0 && h->key[(k - 1) / 2] > z) {
    h->cell[k] = h->cell[(k - 1) / 2], h->key[k] = h->key[(k - 1) / 2];
    k = (k - 1) / 2;
  }
  h->cell[k] = i, h->key[k] = z;
}

/* Pops the lowest cell. */
static inline long carve_heap_pop(carve_heap *h) {
  long top = h->cell[0], last = h->cell[--h->n], k = 0;
  double z = h->key[h->n];
  for (;;) {
    long c = 2 * k + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->key[c + 1] < h->key[c]) c++;
    if (h->key[c] >= z) break;
    h->cell[k] = h->cell[c], h->key[k] = h->key[c];
    k = c;
  }
  if (h->n > 0) h->cell[k] = last, h->key[k] = z;
  return top;
}

/* Offsets of the 8 neighbours and their distances in cells. */
static const int carve_dx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int carve_dy[8] = {0, 1, 1, 1, 0, -1, -1, -1};
static const double carve_dist[8] = {1, M_SQRT2, 1, M_SQRT2, 1, M_SQRT2, 1, M_SQRT2};

/* Priority flood from the border and the NoData cells (mask may be NULL):
 * fills zf (double, nx*ny) and writes the visiting order to order[] (the
 * valid cells, lowest first). Returns the number of valid cells. */
static inline long carve_fill(const float *z, const uint8_t *mask, int nx, int ny, double *zf,
                              long *order) {
  long n = (long)nx * ny, done = 0;
  carve_heap h = {0, malloc(sizeof(long) * n), malloc(sizeof(double) * n)};
  uint8_t *seen = calloc((size_t)n, 1);
  for (long i = 0; i < n; i++) {
    int x = (int)(i % nx), y = (int)(i / nx);
    if (mask && mask[i]) {
      seen[i] = 1;
      continue;
    }
    int edge = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    for (int d = 0; d < 8 && !edge && mask; d++)
      edge = mask[i + carve_dx[d] + (long)carve_dy[d] * nx];
    if (edge) seen[i] = 1, zf[i] = z[i], carve_heap_push(&h, i, z[i]);
  }
  while (h.n > 0) {
    long c = carve_heap_pop(&h);
    order[done++] = c;
    int x = (int)(c % nx), y = (int)(c / nx);
    for (int d = 0; d < 8; d++) {
      int u = x + carve_dx[d], v = y + carve_dy[d];
      if (u < 0 || v < 0 || u >= nx || v >= ny) continue;
      long m = (long)v * nx + u;
      if (seen[m]) continue;
      seen[m] = 1;
      double floor_ = zf[c] + 1e-6; /* a hair above: the fill drains */
      zf[m] = z[m] > floor_ ? z[m] : floor_;
      carve_heap_push(&h, m, zf[m]);
    }
  }
  free(h.cell), free(h.key), free(seen);
  return done;
}

/* D8 flow accumulation [cells] of z into acc (nx*ny; 0 on NoData). */
static inline void carve_accumulation(const float *z, const uint8_t *mask, int nx, int ny,
                                      double *acc) {
  long n = (long)nx * ny;
  double *zf = malloc(sizeof(double) * n);
  long *order = malloc(sizeof(long) * n);
  long valid = carve_fill(z, mask, nx, ny, zf, order);
  for (long i = 0; i < n; i++)
    acc[i] = mask && mask[i] ? 0.0 : 1.0;
  for (long k = valid - 1; k >= 0; k--) { /* highest first: donors before receivers */
    long c = order[k], best = -1;
    int x = (int)(c % nx), y = (int)(c / nx);
    double steepest = 0.0;
    for (int d = 0; d < 8; d++) {
      int u = x + carve_dx[d], v = y + carve_dy[d];
      if (u < 0 || v < 0 || u >= nx || v >= ny) continue;
      long m = (long)v * nx + u;
      if (mask && mask[m]) continue;
      double s = (zf[c] - zf[m]) / carve_dist[d];
      if (s > steepest) steepest = s, best = m;
    }
    if (best >= 0) acc[best] += acc[c];
  }
  free(zf), free(order);
}

/* How far a cell of height c stands above both its neighbours along x
 * (l, r) or along y (u, d), the larger of the two: its one-cell tower,
 * negative where it stands above neither pair. */
static inline double carve_rise(double c, double l, double r, double u, double d) {
  return fmax(fmin(c - l, c - r), fmin(c - u, c - d));
}

/* The most a valid cell of z (nx*ny) stands above both its valid
 * neighbours along x or along y [m], 0 when none does; with `base` (the
 * input) only what the run built: the least of that and the cell's rise
 * above base (a cell left standing while a river cut beside it counts 0). */
static inline double carve_tower(const float *z, const float *base, const uint8_t *mask, int nx,
                                 int ny) {
  double top = 0.0;
  for (int y = 1; y < ny - 1; y++)
    for (int x = 1; x < nx - 1; x++) {
      long i = (long)y * nx + x;
      long n[4] = {i - 1, i + 1, i - nx, i + nx};
      int ok = !(mask && (mask[i] || mask[n[0]] || mask[n[1]] || mask[n[2]] || mask[n[3]]));
      if (!ok || !isfinite(z[i])) continue;
      double r = carve_rise(z[i], z[n[0]], z[n[1]], z[n[2]], z[n[3]]);
      if (base) r = fmin(r, (double)z[i] - (double)base[i]);
      top = r > top ? r : top;
    }
  return top;
}

/* The tallest wall the run cut [m]: over every pair of valid 8-neighbours
 * of `cell` metres, min(drop − tan(deg)·distance, drop − the input's
 * drop), the most of it (0 when no step the run steepened passes deg). */
static inline double carve_cut_wall(const float *before, const float *after, const uint8_t *mask,
                                    int nx, int ny, double cell, double deg) {
  double top = 0.0, T = tan(deg * M_PI / 180.0);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      long i = (long)y * nx + x;
      if ((mask && mask[i]) || !isfinite(after[i])) continue;
      for (int d = 0; d < 8; d++) {
        int u = x + carve_dx[d], v = y + carve_dy[d];
        long j = (long)v * nx + u;
        if (u < 0 || v < 0 || u >= nx || v >= ny || (mask && mask[j]) || !isfinite(after[j]))
          continue;
        double drop = (double)after[i] - (double)after[j];
        double cut = drop - ((double)before[i] - (double)before[j]);
        double e = fmin(drop - T * cell * carve_dist[d], cut);
        top = e > top ? e : top;
      }
    }
  return top;
}

/* Ascending comparison of doubles for qsort. */
static inline int carve_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The figures of before -> after (nx*ny each; mask NULL or 1 = NoData). */
static inline carve_metrics carve_measure(const float *before, const float *after,
                                          const uint8_t *mask, int nx, int ny) {
  long n = (long)nx * ny, nv = 0;
  carve_metrics m;
  memset(&m, 0, sizeof m);
  double *acc = malloc(sizeof(double) * n), *adz = malloc(sizeof(double) * n);
  carve_accumulation(before, mask, nx, ny, acc);
  double lo = INFINITY, hi = -INFINITY, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (long i = 0; i < n; i++) {
    if (mask && mask[i]) continue;
    lo = before[i] < lo ? before[i] : lo, hi = before[i] > hi ? before[i] : hi;
    double dz = (double)after[i] - (double)before[i];
    if (!isfinite(dz)) {
      m.nonfinite++;
      continue;
    }
    adz[nv++] = fabs(dz);
    double ero = dz < 0.0 ? -dz : 0.0, la = log(acc[i]);
    sx += la, sy += ero, sxx += la * la, syy += ero * ero, sxy += la * ero;
    if (acc[i] >= CARVE_CHANNEL_CELLS) m.channels++, m.channel_erosion += ero, m.channel_net += dz;
    if (acc[i] <= CARVE_HILL_CELLS) m.hills++, m.hill_erosion += ero, m.hill_net += dz;
    if (acc[i] >= CARVE_TRUNK_CELLS)
      m.trunks++, m.trunk_net += dz, m.trunk_buried += dz > CARVE_BURIED_M;
    long x = i % nx, y = i / nx;
    if ((x == 0 || y == 0 || x == nx - 1 || y == ny - 1) && -dz > m.edge_lowered)
      m.edge_lowered = -dz;
  }
  m.relief = hi - lo;
  double inv = nv > 0 ? 1.0 / (double)nv : 0.0;
  double cov = sxy - sx * sy * inv, vx = sxx - sx * sx * inv, vy = syy - sy * sy * inv;
  m.correlation = nv > 1 && vx > 0.0 && vy > 0.0 ? cov / sqrt(vx * vy) : 0.0;
  if (m.channels) m.channel_erosion /= m.channels, m.channel_net /= m.channels;
  if (m.hills) m.hill_erosion /= m.hills, m.hill_net /= m.hills;
  if (m.trunks) m.trunk_net /= m.trunks, m.trunk_buried /= m.trunks;
  m.ratio = m.hill_erosion > 0.0 ? m.channel_erosion / m.hill_erosion : INFINITY;
  qsort(adz, (size_t)nv, sizeof(double), carve_cmp);
  m.p999 = nv ? adz[(long)floor(0.999 * (double)(nv - 1))] : 0.0;
  m.tower_before = carve_tower(before, NULL, mask, nx, ny);
  m.tower_after = carve_tower(after, NULL, mask, nx, ny);
  m.tower_built = carve_tower(after, before, mask, nx, ny);
  free(acc), free(adz);
  return m;
}

/* Running max and min of `v` over the live cells (mask NULL or 0) of
 * windows 2w+1 long, along rows (step 1, `n` rows of `len`) or columns
 * (step len): one pass of carve_relief. NoData cells count as -inf / +inf. */
static inline void carve_window_pass(const double *hi_in, const double *lo_in, double *hi,
                                     double *lo, int len, int n, long along, long across, int w) {
  for (int r = 0; r < n; r++)
    for (int i = 0; i < len; i++) {
      double a = -INFINITY, b = INFINITY;
      for (int k = i - w < 0 ? 0 : i - w; k <= i + w && k < len; k++) {
        long j = (long)r * across + (long)k * along;
        a = hi_in[j] > a ? hi_in[j] : a, b = lo_in[j] < b ? lo_in[j] : b;
      }
      long o = (long)r * across + (long)i * along;
      hi[o] = a, lo[o] = b;
    }
}

/* The local relief of `h` (max - min of the live cells within w cells of
 * each cell, in x and in y: a square window) into `relief` (nx*ny); max
 * and min are separable, so two passes of 2w+1 reads, not (2w+1)^2: a
 * 1 km window at 30 m cells is 67 wide. Returns 0 when out of memory. */
static inline int carve_relief(const float *h, const uint8_t *mask, int nx, int ny, int w,
                               double *relief) {
  size_t n = (size_t)nx * ny;
  double *hi = calloc(n, sizeof *hi), *lo = calloc(n, sizeof *lo);
  double *hi2 = calloc(n, sizeof *hi2), *lo2 = calloc(n, sizeof *lo2);
  int ok = hi && lo && hi2 && lo2;
  if (ok) {
    for (size_t i = 0; i < n; i++) {
      int dead = mask && mask[i];
      hi2[i] = dead ? -INFINITY : h[i], lo2[i] = dead ? INFINITY : h[i];
    }
    carve_window_pass(hi2, lo2, hi, lo, nx, ny, 1, nx, w);
    carve_window_pass(hi, lo, hi2, lo2, ny, nx, nx, 1, w);
    for (size_t i = 0; i < n; i++)
      relief[i] = hi2[i] - lo2[i];
  }
  free(hi), free(lo), free(hi2), free(lo2);
  return ok;
}

/* The largest |dz| over the local relief of the input (max − min within
 * w cells of the cell, itself included, and at least `floor` m; mask NULL
 * or 1 = NoData): a run away pit or tower reads as a share near or beyond
 * 1. *at (may be NULL) receives the worst cell's index. NaN when out of
 * memory. */
static inline double carve_runaway_at(const float *before, const float *after, const uint8_t *mask,
                                      int nx, int ny, int w, double floor, long *at) {
  double *relief = malloc((size_t)nx * ny * sizeof *relief), worst = 0.0;
  if (!relief || !carve_relief(before, mask, nx, ny, w, relief)) {
    free(relief);
    return NAN;
  }
  if (at) *at = -1;
  for (long i = 0; i < (long)nx * ny; i++) {
    if (mask && mask[i]) continue;
    /* no change is no share, on a flat window too (0/0); a NaN sticks */
    double dz = fabs((double)after[i] - (double)before[i]);
    double share = dz == 0.0 ? 0.0 : dz / (relief[i] > floor ? relief[i] : floor);
    if (share > worst || isnan(share)) {
      worst = share;
      if (at) *at = i;
      if (isnan(share)) break;
    }
  }
  free(relief);
  return worst;
}

/* One line of the figures, for logs and reports. */
static inline void carve_print(FILE *to, const char *what, const carve_metrics *m) {
  fprintf(to,
          "%s: channels %ld erosion %.4g m net %+.4g m | hillslopes %ld erosion %.4g m net "
          "%+.4g m | ratio %.3g | r(erosion, log acc) %.3f | p99.9 |dz| %.4g m = %.2f%% of relief "
          "%.0f m | non-finite %ld | trunks %ld net %+.4g m, %.1f%% raised > %.0f m | tallest "
          "one-cell tower %.3g m (input %.3g m), built %.3g m | edge lowered %.3g m\n",
          what, m->channels, m->channel_erosion, m->channel_net, m->hills, m->hill_erosion,
          m->hill_net, m->ratio, m->correlation, m->p999, 100.0 * m->p999 / m->relief, m->relief,
          m->nonfinite, m->trunks, m->trunk_net, 100.0 * m->trunk_buried, CARVE_BURIED_M,
          m->tower_after, m->tower_before, m->tower_built, m->edge_lowered);
}

/* Where a run lays its load (dem-carving.md: deposition on valley floors
 * and fans, erosion in the steep channels). The slope of a cell is the
 * gradient of the input averaged over a box of CARVE_FLOOR_BOX_M (the
 * SRTM's metre of noise alone makes a 30 m cell's own descent 0.03);
 * floors are the cells of slope < CARVE_FLOOR_SLOPE (valley floors, fans,
 * plains), steep channels those of accumulation >= CARVE_CHANNEL_CELLS
 * and slope >= CARVE_STEEP_SLOPE. */
#define CARVE_FLOOR_SLOPE 0.03
#define CARVE_STEEP_SLOPE 0.08
#define CARVE_FLOOR_BOX_M 150.0

typedef struct carve_floors {
  long cells, floors, steep; /* valid cells, floor cells, steep channel cells */
  double floor_net;          /* mean dz on floor cells [m] */
  double floor_raised;       /* share of floor cells raised by more than 0.5 m */
  double rest_net;           /* mean dz on the other cells [m] */
  double steep_net;          /* mean dz on steep channel cells [m] */
  double floor_share;        /* the floors' share of the raised volume (dz > 0) */
} carve_floors;

/* Mean of z over the (2r+1)² box around each cell, clipped at the edges
 * and NoData (mask may be NULL), into out (nx*ny). */
static inline void carve_box_mean(const float *z, const uint8_t *mask, int nx, int ny, int r,
                                  double *out) {
  for (long i = 0; i < (long)nx * ny; i++) {
    int x = (int)(i % nx), y = (int)(i / nx), k = 0;
    double sum = 0.0;
    for (int v = y - r; v <= y + r; v++)
      for (int u = x - r; u <= x + r; u++) {
        long j = (long)v * nx + u;
        if (u < 0 || v < 0 || u >= nx || v >= ny || (mask && mask[j])) continue;
        sum += z[j], k++;
      }
    out[i] = k ? sum / k : 0.0;
  }
}

/* The floors and steep channels of before -> after (cell size l [m]). */
static inline carve_floors carve_measure_floors(const float *before, const float *after,
                                                const uint8_t *mask, int nx, int ny, double l) {
  long n = (long)nx * ny;
  int r = (int)(0.5 * CARVE_FLOOR_BOX_M / l + 0.5);
  carve_floors f;
  memset(&f, 0, sizeof f);
  double *acc = malloc(sizeof(double) * n), *zs = malloc(sizeof(double) * n);
  double raised = 0.0, floor_raised = 0.0;
  carve_accumulation(before, mask, nx, ny, acc);
  carve_box_mean(before, mask, nx, ny, r > 1 ? r : 1, zs);
  for (long i = 0; i < n; i++) {
    double dz = (double)after[i] - (double)before[i];
    int x = (int)(i % nx), y = (int)(i / nx);
    if ((mask && mask[i]) || !isfinite(dz) || x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
      continue;
    double gx = (zs[i + 1] - zs[i - 1]) / (2.0 * l), gy = (zs[i + nx] - zs[i - nx]) / (2.0 * l);
    double s = sqrt(gx * gx + gy * gy), up = dz > 0.0 ? dz : 0.0;
    f.cells++, raised += up;
    if (s < CARVE_FLOOR_SLOPE)
      f.floors++, f.floor_net += dz, f.floor_raised += dz > 0.5, floor_raised += up;
    else
      f.rest_net += dz;
    if (acc[i] >= CARVE_CHANNEL_CELLS && s >= CARVE_STEEP_SLOPE) f.steep++, f.steep_net += dz;
  }
  if (f.floors) f.floor_net /= f.floors, f.floor_raised /= f.floors;
  if (f.cells > f.floors) f.rest_net /= f.cells - f.floors;
  if (f.steep) f.steep_net /= f.steep;
  f.floor_share = raised > 0.0 ? floor_raised / raised : 0.0;
  free(acc), free(zs);
  return f;
}

/* One line of the floors' figures. */
static inline void carve_print_floors(FILE *to, const char *what, const carve_floors *f) {
  fprintf(to,
          "%s: floors (slope < %.2g) %.1f%% of the cells, net %+.4g m, %.1f%% raised > 0.5 m, "
          "%.1f%% of the raised volume | the rest net %+.4g m | steep channels (slope >= %.2g) "
          "%ld net %+.4g m\n",
          what, CARVE_FLOOR_SLOPE, f->cells ? 100.0 * f->floors / f->cells : 0.0, f->floor_net,
          100.0 * f->floor_raised, 100.0 * f->floor_share, f->rest_net, CARVE_STEEP_SLOPE, f->steep,
          f->steep_net);
}

#endif /* TALUS_TEST_CARVE_METRICS_H */
