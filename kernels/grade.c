/*
 * grade.c — the input drop heightfield.grade_share keeps (t->grade_in).
 *
 * Why: with heightfield.base_level a river cut down towards a fixed
 * outlet stops at its lowest neighbour's bed, and the stream-power
 * capacity's floor (min_tilt) keeps a flat bed's capacity above its load,
 * so a knick near an outlet retreated as a dead-flat reach (Zion's
 * west-edge valley planed 2.5 km upstream to the outlet's 1024 m, 52 m
 * deep). A fixed least slope (heightfield.grade) stops that but also
 * stops a plain's rivers, which run flatter than any grade. The input's
 * own drops tell the two apart: each cell keeps a share of the drop it
 * had to its lowest neighbour, so a cut reach stays graded like the
 * valley it was; drops within the DEM's noise (SRTM's whole metres: a
 * plain's staircase of flats and 1 m steps) are not kept, so a plain's
 * river still cuts. A drop read from the input's fall over a kilometre
 * instead kept the plain's local relief too (Fort Worth's ratio 5.4 ->
 * 2.7; benchmarks/RESULTS.md, "A river keeps a share of its input drop").
 *
 * Exactness: the drop reads the cell and its neighbours only, so a
 * tile's buffer read with its window grown by one cell gets, cell for
 * cell, what the whole map gives; the kernel reads its own cell's value.
 */
#include "state.h"

static const int grade_dx[8] = {1, 0, -1, 0, 1, -1, -1, 1};
static const int grade_dy[8] = {0, 1, 0, -1, 1, 1, -1, -1};

talus_status talus_grade_drop(const float *h, const uint8_t *nodata, size_t pitch, talus_rect win,
                              talus_rect r, int diagonal, float noise, talus_tile *t) {
  talus_status st = talus_tile_ensure(t, (void **)&t->grade_in, sizeof(float), "input drop");
  if (st) return st;
  int dirs = diagonal ? 8 : 4;
#pragma omp parallel for schedule(static) if ((size_t)r.w * (size_t)r.h >=                         \
                                              TALUS_TILE_PARALLEL_CELLS)
  for (int y = 0; y < r.h; y++)
    for (int x = 0; x < r.w; x++) {
      int gx = r.x0 + x, gy = r.y0 + y;
      size_t c = (size_t)(gy - win.y0) * pitch + (size_t)(gx - win.x0);
      float lo = h[c];
      for (int k = 0; k < dirs; k++) {
        int nx = gx + grade_dx[k], ny = gy + grade_dy[k];
        if (nx < win.x0 || ny < win.y0 || nx >= win.x0 + win.w || ny >= win.y0 + win.h) continue;
        size_t n = (size_t)(ny - win.y0) * pitch + (size_t)(nx - win.x0);
        lo = !nodata[n] && h[n] < lo ? h[n] : lo;
      }
      float beyond = h[c] - lo - noise;
      t->grade_in[talus_idx(t, gx - t->buf.x0, gy - t->buf.y0)] =
          nodata[c] || !(beyond > 0.0f) ? 0.0f : beyond;
    }
  return TALUS_OK;
}
