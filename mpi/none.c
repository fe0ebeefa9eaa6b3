/*
 * none.c — the mpi/ interface in a build without MPI: always one rank. A
 * process started by an MPI launcher with more than one rank is refused
 * (each would write the same output), with the reason.
 */
#ifndef TALUS_HAVE_MPI
#include "ranks.h"

#include <stdlib.h>

/* Owns the refusal of a multi-rank launch without MPI support. */
talus_status talus_mpi_begin(void) {
  const char *n = talus_mpi_launch_size();
  if (n && atoi(n) > 1)
    return talus_fail(TALUS_ERR_UNSUPPORTED, "mpi",
                      "this talus was built without MPI but runs as one of %s ranks: rebuild "
                      "with MPI (libopenmpi-dev, -DTALUS_MPI=ON) or run one process",
                      n);
  return TALUS_OK;
}
void talus_mpi_end(void) {}
int talus_mpi_rank(void) {
  return 0;
}
int talus_mpi_size(void) {
  return 1;
}
int talus_mpi_node_size(void) {
  return 1;
}
talus_status talus_mpi_agree(talus_status st) {
  return st;
}
void talus_mpi_barrier(void) {}

/* The grid calls below are reached only with more than one rank. */
static talus_status none_fail(void) {
  return talus_fail(TALUS_ERR_UNSUPPORTED, "mpi", "built without MPI");
}
talus_status talus_mpi_grid_create(talus_mpi_grid **out, talus_tiled *g) {
  *out = NULL;
  return none_fail();
}
void talus_mpi_grid_free(talus_mpi_grid *m) {}
int talus_mpi_owns(const talus_mpi_grid *m, int tile) {
  return 1;
}
talus_status talus_mpi_start(talus_mpi_grid *m, const talus_tile_source *src, int resume,
                             int *resumed) {
  return none_fail();
}
talus_status talus_mpi_run(talus_mpi_grid *m, int64_t end, talus_run_stats *stats,
                           talus_step_progress_fn progress, void *user) {
  return none_fail();
}
void talus_mpi_traffic(const talus_mpi_grid *m, int64_t *bytes_sent, int64_t *generations) {
  *bytes_sent = *generations = 0;
}
int talus_mpi_rank_times(const talus_mpi_grid *m, const double **table) {
  *table = NULL;
  return 0;
}
talus_status talus_mpi_read_core(talus_mpi_grid *m, int tile, talus_tile *dst) {
  return none_fail();
}
talus_status talus_mpi_serve_cores(talus_mpi_grid *m) {
  return none_fail();
}
void talus_mpi_cores_done(talus_mpi_grid *m) {}
#endif /* !TALUS_HAVE_MPI */
