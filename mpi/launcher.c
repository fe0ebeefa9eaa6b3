/*
 * launcher.c — what an MPI launcher (mpirun, srun, ...) tells a process
 * through its environment: whether one started it, how many ranks it
 * announced, and the process's rank on its node. The one place that reads
 * launcher variables; it needs no MPI library, so it is built with and
 * without MPI (rank.c and none.c ask it, and app/ passes the node-local
 * rank to the GPU backend, which picks its device from it).
 */
#include "ranks.h"

#include <stdlib.h>

/* Owns the launcher test: an MPI launcher set one of these. */
int talus_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* Owns which variables announce the rank count, and their order. */
const char *talus_mpi_launch_size(void) {
  const char *n = getenv("OMPI_COMM_WORLD_SIZE");
  if (!n) n = getenv("PMI_SIZE");
  return n;
}

/* Owns which variables name the node-local rank, and their order: the
 * first one set and not empty; a negative or unreadable value reads 0. */
int talus_mpi_local_rank(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                        "MV2_COMM_WORLD_LOCAL_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *s = getenv(vars[i]);
    if (!s || !*s) continue;
    int rank = atoi(s);
    return rank > 0 ? rank : 0;
  }
  return 0;
}
