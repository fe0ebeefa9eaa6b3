/*
 * volumes.c — the mass ledger's volumes of a tiled run, summed tile by
 * tile (volumes.h).
 */
#include "tiler/volumes.h"

#include <math.h>
#include <string.h>

void talus_volumes_reset(talus_volumes *v) {
  memset(v, 0, sizeof *v);
  v->lowest = INFINITY;
}

void talus_volumes_add(const talus_tile *t, talus_rect r, talus_volumes *v) {
  for (int y = r.y0; y < r.y0 + r.h; y++)
    for (int x = r.x0; x < r.x0 + r.w; x++) {
      size_t idx = talus_idx(t, x - t->buf.x0, y - t->buf.y0);
      if (t->mask[idx]) continue;
      v->live++;
      if (t->B[idx] < v->lowest) v->lowest = t->B[idx];
      v->bedrock0 += t->B[idx];
      for (int k = 0; k < t->count[idx]; k++) {
        size_t c = talus_col(t, idx, k);
        v->m[TALUS_MAT_WATER] += t->w[c];
        v->m[TALUS_MAT_SEDIMENT] += t->r[c];
        v->m[TALUS_MAT_SAND] += t->s[c];
        if (k) v->m[TALUS_MAT_BEDROCK] += (double)t->B[c] - (double)t->C[c - t->plane];
      }
    }
}

void talus_volumes_of(const talus_volumes *v, double datum, double area,
                      double out[TALUS_MAT_COUNT]) {
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    out[m] = v->m[m] * area;
  out[TALUS_MAT_BEDROCK] += (v->bedrock0 - datum * (double)v->live) * area;
}
