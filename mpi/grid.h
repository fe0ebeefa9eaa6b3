/*
 * grid.h — private to mpi/: the rank's view of the tile grid and the
 * per-generation strip exchange (design in ranks.h).
 */
#ifndef TALUS_MPI_GRID_H
#define TALUS_MPI_GRID_H

#include "ranks.h"

#include <mpi.h>

enum { TAG_STRIPS = 11, TAG_CORE_REQ = 12, TAG_CORE = 13, TAG_CORE_ERR = 14 };

/* A strip: tile q's part facing a reader. */
typedef struct mpi_item {
  int q, part;
} mpi_item;

typedef struct mpi_list {
  mpi_item *v;
  int n, cap;
} mpi_list;

/* One generation's messages: per peer rank, the strips to send and those
 * to receive (same order on both sides), buffers and requests. */
typedef struct mpi_exchange {
  int size;              /* ranks */
  mpi_list *send, *recv; /* [size] */
  void **sbuf, **rbuf;   /* [size] packed messages */
  int *rlen;             /* [size] bytes received, -1 until probed */
  MPI_Request *req;      /* [2 * size]: sends, then receives */
  uint8_t *border;       /* [ntiles] own tiles that read a remote strip */
} mpi_exchange;

struct talus_mpi_grid {
  talus_tiled *g;
  talus_store *store;
  int rank, size, ntiles;
  int *owner;                      /* [ntiles] */
  int64_t bytes_sent, generations; /* by this rank */
  int64_t bytes_all;               /* sent by all ranks (after a run) */
  double advance_s, exchange_s;    /* this rank's time in its tiles' steps (store I/O
                                      included) and in posting, finishing and agreeing */
  double *rank_times;              /* rank 0 after a run: [size][TALUS_MPI_TIMES] */
};

/* Completes n requests without spinning: tests, then sleeps between tests
 * (mpi_nap). A rank waiting for a slower one (or rank 0 writing) leaves the
 * core to the ranks that compute, which matters when ranks share cores. */
void mpi_wait_quietly(int n, MPI_Request *reqs);
/* Sleeps 20 µs · 2^min(tries, 6) (20 µs .. 1.3 ms): short waits stay short,
 * long ones wake rarely. Returns tries + 1. */
int mpi_nap(int tries);

/* Plans the generation of k steps (lists and border tiles). */
talus_status mpi_exchange_plan(talus_mpi_grid *m, int k, mpi_exchange *x);
/* Packs and sends the step-s strips each peer reads. A rank that failed
 * before (st != OK) sends empty messages. Returns the packing status. */
talus_status mpi_exchange_post(talus_mpi_grid *m, mpi_exchange *x, int64_t s, talus_status st);
/* Starts receives whose message has arrived (call between tiles). */
void mpi_exchange_poll(talus_mpi_grid *m, mpi_exchange *x);
/* Completes every send and receive, then puts the received strips into the
 * store; *peer_failed when a peer sent an empty message. */
talus_status mpi_exchange_finish(talus_mpi_grid *m, mpi_exchange *x, int64_t s, int keep,
                                 int *peer_failed);
void mpi_exchange_free(talus_mpi_grid *m, mpi_exchange *x);

#endif /* TALUS_MPI_GRID_H */
