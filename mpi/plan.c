/*
 * plan.c — which rank owns which tile (design in ranks.h): a px × py grid of
 * rectangular blocks over the tile grid, the factor pair of the rank count
 * whose blocks are closest to square, block sides differing by at most one
 * tile. Pure arithmetic: built with or without MPI.
 */
#include "ranks.h"

#include <assert.h>
#include <math.h>

/* Start of block b of n blocks over `len` tiles (balanced: sizes differ by
 * at most one). */
static int plan_cut(int len, int n, int b) {
  return (int)(((int64_t)len * b) / n);
}

/* Cost of a px × py split: the longer side of a block over the shorter
 * (1 = square blocks), then more empty blocks as the tie breaker. */
static double plan_cost(int ntx, int nty, int px, int py) {
  double bw = (double)ntx / px, bh = (double)nty / py;
  double empty = (px > ntx ? px - ntx : 0) * py + (py > nty ? py - nty : 0) * px;
  return (bw > bh ? bw / bh : bh / bw) + 1e3 * empty;
}

/* Owns: the rank count's factor pair of least cost. */
static void plan_shape(int ntx, int nty, int ranks, int *px, int *py) {
  double best = INFINITY;
  for (int a = 1; a <= ranks; a++) {
    if (ranks % a) continue;
    double c = plan_cost(ntx, nty, a, ranks / a);
    if (c < best) best = c, *px = a, *py = ranks / a;
  }
}

void talus_mpi_plan(int ntx, int nty, int ranks, int *owner) {
  assert(ntx > 0 && nty > 0 && ranks > 0);
  int px = 1, py = 1;
  plan_shape(ntx, nty, ranks, &px, &py);
  assert(px * py == ranks);
  for (int by = 0; by < py; by++)
    for (int bx = 0; bx < px; bx++)
      for (int j = plan_cut(nty, py, by); j < plan_cut(nty, py, by + 1); j++)
        for (int i = plan_cut(ntx, px, bx); i < plan_cut(ntx, px, bx + 1); i++)
          owner[j * ntx + i] = by * px + bx;
}
