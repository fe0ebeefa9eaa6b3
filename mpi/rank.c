/*
 * rank.c — MPI start and stop, rank facts, and the collective error
 * agreement (design in ranks.h). Built only with MPI (none.c otherwise).
 *
 * Agreement: every rank contributes its own rank when it failed, the rank
 * count when not; MPI_Allreduce(MIN) names the first failing rank, which
 * then broadcasts its status and message. Two collectives, once per
 * generation and once per phase of the run: cheap next to a generation.
 */
#ifdef TALUS_HAVE_MPI
#include "grid.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define AGREE_MSG 1024

static int mpi_started; /* 1 when talus_mpi_begin called MPI_Init */
static int mpi_rank, mpi_size = 1, mpi_node_size = 1;

talus_status talus_mpi_begin(void) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited || !talus_mpi_launched()) return TALUS_OK;
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return talus_fail(TALUS_ERR_IO, "mpi", "MPI_Init failed");
  mpi_started = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi_rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &mpi_node_size);
  MPI_Comm_free(&node);
  talus_log_set_rank(mpi_rank);
  return TALUS_OK;
}

void talus_mpi_end(void) {
  if (!mpi_started) return;
  MPI_Finalize();
  mpi_started = 0;
  mpi_rank = 0;
  mpi_size = mpi_node_size = 1;
  talus_log_set_rank(0);
}

int talus_mpi_rank(void) {
  return mpi_rank;
}
int talus_mpi_size(void) {
  return mpi_size;
}
int talus_mpi_node_size(void) {
  return mpi_node_size;
}

int mpi_nap(int tries) {
  nanosleep(&(struct timespec){0, 20000L << (tries < 6 ? tries : 6)}, NULL);
  return tries + 1;
}

void mpi_wait_quietly(int n, MPI_Request *reqs) {
  for (int tries = 0;; tries = mpi_nap(tries)) {
    int done = 0;
    MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (done) return;
  }
}

void talus_mpi_barrier(void) {
  if (mpi_size == 1) return;
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  mpi_wait_quietly(1, &req);
}

talus_status talus_mpi_agree(talus_status st) {
  if (mpi_size == 1) return st;
  int mine = st ? mpi_rank : mpi_size, first = mpi_size;
  MPI_Request req;
  MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
  mpi_wait_quietly(1, &req);
  if (first == mpi_size) return TALUS_OK;
  struct {
    int status;
    char msg[AGREE_MSG];
  } e;
  memset(&e, 0, sizeof e);
  if (first == mpi_rank) {
    e.status = (int)st;
    snprintf(e.msg, sizeof e.msg, "%s", talus_last_error());
  }
  MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, MPI_COMM_WORLD);
  if (first == mpi_rank) return st; /* keeps its own message */
  return talus_fail((talus_status)e.status, "mpi", "rank %d: %s", first,
                    e.msg[0] ? e.msg : talus_status_name((talus_status)e.status));
}
#endif /* TALUS_HAVE_MPI */
