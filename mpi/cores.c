/*
 * cores.c — committed cores for rank 0's output writer (design in ranks.h):
 * rank 0 asks a tile's owner (TAG_CORE_REQ, the tile number; -1 ends the
 * service) and gets the core block (TAG_CORE: talus_tiled_core_block, from
 * the owner's store or its resident tile), or the owner's error message
 * (TAG_CORE_ERR). One core is in
 * flight at a time, so no rank holds more than a tile.
 */
#ifdef TALUS_HAVE_MPI
#include "grid.h"

#include "halo/halo.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Receives the answer to a core request from rank r into a malloc'd blob. */
static talus_status core_receive(int r, int tile, void **blob, int *n) {
  MPI_Status status;
  int flag = 0;
  for (int tries = 0;; tries = mpi_nap(tries)) { /* the owner reads its store */
    MPI_Iprobe(r, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) break;
  }
  assert(status.MPI_TAG == TAG_CORE || status.MPI_TAG == TAG_CORE_ERR);
  MPI_Get_count(&status, MPI_BYTE, n);
  *blob = malloc((size_t)*n + 1);
  if (!*blob) MPI_Abort(MPI_COMM_WORLD, 3); /* the message cannot be drained */
  MPI_Recv(*blob, *n, MPI_BYTE, r, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (status.MPI_TAG == TAG_CORE) return TALUS_OK;
  ((char *)*blob)[*n] = 0;
  return talus_fail(TALUS_ERR_IO, "mpi", "rank %d cannot send tile %d: %s", r, tile, (char *)*blob);
}

talus_status talus_mpi_read_core(talus_mpi_grid *m, int tile, talus_tile *dst) {
  assert(m->rank == 0 && tile >= 0 && tile < m->ntiles);
  int r = m->owner[tile];
  if (r == 0) return talus_tiled_read_core(m->g, tile, dst);
  MPI_Send(&tile, 1, MPI_INT, r, TAG_CORE_REQ, MPI_COMM_WORLD);
  void *blob = NULL;
  int n = 0;
  talus_status st = core_receive(r, tile, &blob, &n);
  if (!st) st = talus_tile_reset(dst, talus_tiled_core(m->g, tile));
  if (!st) st = halo_block_paste(dst, blob, (size_t)n);
  free(blob);
  return st;
}

/* Owns one answer: the core blob of own tile `tile`, or the error. */
static talus_status core_send(talus_mpi_grid *m, int tile) {
  const void *blob = NULL; /* read in place where the store allows */
  void *hold = NULL;
  size_t n = 0;
  talus_status st = talus_mpi_owns(m, tile)
                        ? talus_tiled_core_block(m->g, tile, &blob, &n, &hold)
                        : talus_fail(TALUS_ERR_INTERNAL, "mpi",
                                     "asked for tile %d, owned by rank %d", tile, m->owner[tile]);
  if (!st)
    MPI_Send(blob, (int)n, MPI_BYTE, 0, TAG_CORE, MPI_COMM_WORLD);
  else
    MPI_Send(talus_last_error(), (int)strlen(talus_last_error()), MPI_CHAR, 0, TAG_CORE_ERR,
             MPI_COMM_WORLD);
  talus_store_blob_release(m->store, hold);
  return st;
}

talus_status talus_mpi_serve_cores(talus_mpi_grid *m) {
  assert(m->rank != 0);
  talus_status st = TALUS_OK;
  for (;;) {
    int tile = -1;
    MPI_Request req;
    MPI_Irecv(&tile, 1, MPI_INT, 0, TAG_CORE_REQ, MPI_COMM_WORLD, &req);
    mpi_wait_quietly(1, &req); /* rank 0 writes meanwhile */
    if (tile < 0) return st;
    talus_status one = core_send(m, tile);
    if (!st) st = one;
  }
}

void talus_mpi_cores_done(talus_mpi_grid *m) {
  int stop = -1;
  for (int r = 1; r < m->size; r++)
    MPI_Send(&stop, 1, MPI_INT, r, TAG_CORE_REQ, MPI_COMM_WORLD);
}
#endif /* TALUS_HAVE_MPI */
