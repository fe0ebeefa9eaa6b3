/*
 * test_mpi_plan.c — the rank decomposition (mpi/plan.c) for grids and rank
 * counts that do and do not divide: every tile has one owner in range, each
 * rank's tiles form one rectangle (a block), block widths and heights differ
 * by at most one tile, tile counts are balanced within the blocks' shape, and
 * one rank owns everything alone. Pure arithmetic: runs with or without MPI.
 */
#include "check.h"
#include "mpi/ranks.h"

#include <stdlib.h>

/* Checks the plan of an ntx × nty grid for `ranks` ranks. */
static void check_plan(int ntx, int nty, int ranks) {
  int *owner = malloc(sizeof(int) * ntx * nty);
  for (int i = 0; i < ntx * nty; i++)
    owner[i] = -1;
  talus_mpi_plan(ntx, nty, ranks, owner);
  int minw = 1 << 30, maxw = 0, minh = 1 << 30, maxh = 0, most = 0, least = 1 << 30;
  for (int r = 0; r < ranks; r++) {
    int x0 = ntx, x1 = -1, y0 = nty, y1 = -1, n = 0;
    for (int j = 0; j < nty; j++)
      for (int i = 0; i < ntx; i++)
        if (owner[j * ntx + i] == r) {
          n++;
          x0 = i < x0 ? i : x0, x1 = i > x1 ? i : x1, y0 = j < y0 ? j : y0, y1 = j > y1 ? j : y1;
        }
    if (n) {
      CHECK(n == (x1 - x0 + 1) * (y1 - y0 + 1), "%dx%d/%d: rank %d owns %d tiles, not a block", ntx,
            nty, ranks, r, n);
      int w = x1 - x0 + 1, h = y1 - y0 + 1;
      minw = w < minw ? w : minw, maxw = w > maxw ? w : maxw;
      minh = h < minh ? h : minh, maxh = h > maxh ? h : maxh;
    }
    most = n > most ? n : most;
    least = n < least ? n : least;
  }
  int bad = 0;
  for (int i = 0; i < ntx * nty; i++)
    bad += owner[i] < 0 || owner[i] >= ranks;
  CHECK(!bad, "%dx%d/%d: %d tiles without a valid owner", ntx, nty, ranks, bad);
  CHECK(maxw - minw <= 1 && maxh - minh <= 1, "%dx%d/%d: block sides %d..%d x %d..%d", ntx, nty,
        ranks, minw, maxw, minh, maxh);
  if (ranks <= ntx * nty && ranks <= (ntx > nty ? ntx : nty))
    CHECK(least > 0, "%dx%d/%d: a rank owns no tile though the grid has room", ntx, nty, ranks);
  CHECK(most <= (maxw * maxh), "%dx%d/%d: %d tiles on one rank", ntx, nty, ranks, most);
  free(owner);
}

int main(void) {
  int grids[][2] = {{1, 1}, {2, 2}, {3, 2}, {5, 4}, {7, 3}, {16, 16}, {10, 1}, {33, 17}};
  for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
    for (int ranks = 1; ranks <= 12; ranks++)
      check_plan(grids[g][0], grids[g][1], ranks);
  int owner[12];
  talus_mpi_plan(4, 3, 1, owner);
  int all0 = 1;
  for (int i = 0; i < 12; i++)
    all0 &= owner[i] == 0;
  CHECK(all0, "one rank owns every tile");
  talus_mpi_plan(4, 2, 4, owner); /* 2 x 2 blocks of 2 x 1 tiles */
  CHECK(owner[0] == owner[1] && owner[2] == owner[3] && owner[0] != owner[2] &&
            owner[0] != owner[4],
        "4 x 2 tiles on 4 ranks: square-ish blocks (%d %d %d %d / %d %d %d %d)", owner[0], owner[1],
        owner[2], owner[3], owner[4], owner[5], owner[6], owner[7]);
  return check_report("test_mpi_plan");
}
