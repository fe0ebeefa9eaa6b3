/*
 * run.c — a tile grid shared by the ranks: who owns what, the start (load
 * or resume) and the generations with their strip exchange and agreement
 * (design in ranks.h).
 */
#ifdef TALUS_HAVE_MPI
#include "grid.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

talus_status talus_mpi_grid_create(talus_mpi_grid **out, talus_tiled *g) {
  *out = NULL;
  talus_mpi_grid *m = calloc(1, sizeof *m);
  if (!m) return talus_fail(TALUS_ERR_NOMEM, "mpi", "no memory for the rank grid");
  int ntx = 0, nty = 0;
  talus_tiled_grid(g, &ntx, &nty);
  m->g = g;
  m->store = talus_tiled_store(g);
  m->rank = talus_mpi_rank();
  m->size = talus_mpi_size();
  m->ntiles = talus_tiled_count(g);
  m->owner = malloc((size_t)m->ntiles * sizeof *m->owner);
  if (!m->owner) {
    free(m);
    return talus_fail(TALUS_ERR_NOMEM, "mpi", "no memory for the tile owners");
  }
  talus_mpi_plan(ntx, nty, m->size, m->owner);
  *out = m;
  return TALUS_OK;
}

int talus_mpi_rank_times(const talus_mpi_grid *m, const double **table) {
  *table = m && m->rank_times ? m->rank_times : NULL;
  return *table ? m->size : 0;
}

void talus_mpi_grid_free(talus_mpi_grid *m) {
  if (!m) return;
  free(m->owner);
  free(m->rank_times);
  free(m);
}

int talus_mpi_owns(const talus_mpi_grid *m, int tile) {
  return m->owner[tile] == m->rank;
}

void talus_mpi_traffic(const talus_mpi_grid *m, int64_t *bytes_sent, int64_t *generations) {
  *bytes_sent = m->bytes_all;
  *generations = m->generations;
}

/* 1 when every own tile is committed (a killed run got past its load). */
static int own_tiles_stored(talus_mpi_grid *m) {
  for (int p = 0; p < m->ntiles; p++)
    if (talus_mpi_owns(m, p) && talus_store_committed(m->store, p) < 0) return 0;
  return 1;
}

/* Owns the resume: ledgers of own tiles, then the common start step, the
 * least committed step of any rank. */
static talus_status start_resume(talus_mpi_grid *m) {
  int64_t span[2] = {INT64_MAX, INT64_MAX}; /* least step, -(greatest step) */
  talus_status st = TALUS_OK;
  for (int p = 0; p < m->ntiles && !st; p++) {
    int64_t at = 0;
    if (!talus_mpi_owns(m, p)) continue;
    st = talus_tiled_resume_tile(m->g, p, &at);
    if (at < span[0]) span[0] = at;
    if (-at < span[1]) span[1] = -at;
  }
  st = talus_mpi_agree(st);
  if (st) return st;
  MPI_Allreduce(MPI_IN_PLACE, span, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (-span[1] - span[0] > talus_tiled_steps_per_exchange(m->g))
    return talus_fail(TALUS_ERR_FORMAT, "mpi",
                      "the ranks' tiles span steps %lld..%lld, more than one generation",
                      (long long)span[0], (long long)-span[1]);
  talus_tiled_set_step(m->g, span[0]);
  return TALUS_OK;
}

talus_status talus_mpi_start(talus_mpi_grid *m, const talus_tile_source *src, int resume,
                             int *resumed) {
  int loaded = resume && own_tiles_stored(m);
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, &loaded, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
  mpi_wait_quietly(1, &req); /* the ranks opened their stores at their pace */
  *resumed = loaded;
  if (loaded) return start_resume(m);
  talus_status st = TALUS_OK;
  for (int p = 0; p < m->ntiles && !st; p++)
    if (talus_mpi_owns(m, p)) st = talus_tiled_load_tile(m->g, p, src);
  return talus_mpi_agree(st);
}

/* Advances the own tiles that are (border = 1) or are not (0) border tiles,
 * polling the exchange between tiles. */
static talus_status advance_own(talus_mpi_grid *m, mpi_exchange *x, int border, int k,
                                talus_run_stats *stats) {
  talus_status st = TALUS_OK;
  for (int p = 0; p < m->ntiles && !st; p++) {
    if (!talus_mpi_owns(m, p) || x->border[p] != border) continue;
    st = talus_tiled_advance_one(m->g, p, k, stats);
    if (!border) mpi_exchange_poll(m, x);
  }
  return st;
}

/* Owns one generation of k steps: exchange, interior tiles, border tiles,
 * agreement; the older blobs are dropped only once every rank is done. */
static talus_status generation(talus_mpi_grid *m, int k, talus_run_stats *stats) {
  int64_t s = talus_tiled_step(m->g);
  mpi_exchange x;
  talus_status st = mpi_exchange_plan(m, k, &x);
  if (st) { /* the peers would wait for this rank's messages forever */
    fprintf(stderr, "talus: rank %d: %s\n", m->rank, talus_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double t0 = talus_now();
  st = mpi_exchange_post(m, &x, s, TALUS_OK);
  double t1 = talus_now();
  if (!st) st = advance_own(m, &x, 0, k, stats);
  int peer_failed = 0;
  double t2 = talus_now();
  talus_status xs = mpi_exchange_finish(m, &x, s, !st, &peer_failed);
  if (!st) st = xs;
  double t3 = talus_now();
  if (!st && !peer_failed) st = advance_own(m, &x, 1, k, stats);
  mpi_exchange_free(m, &x);
  double t4 = talus_now();
  st = talus_mpi_agree(st);
  m->advance_s += (t2 - t1) + (t4 - t3);
  m->exchange_s += (t1 - t0) + (t3 - t2) + (talus_now() - t4);
  assert(st || !peer_failed); /* a peer that sent nothing failed */
  if (!st) st = talus_mpi_agree(talus_tiled_end_generation(m->g, k));
  m->generations++;
  return st;
}

/* Sums a table of n doubles over all ranks, in place. */
static void sum_over_ranks(double *table, int n, void *user) {
  MPI_Allreduce(MPI_IN_PLACE, table, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* Gathers every rank's compute, exchange and store times on rank 0
 * (talus_mpi_rank_times). */
static void gather_times(talus_mpi_grid *m) {
  talus_store_stats ss;
  talus_store_get_stats(m->store, &ss);
  double mine[TALUS_MPI_TIMES] = {0};
  mine[TALUS_MPI_STORE] = ss.io_seconds;
  mine[TALUS_MPI_COMPUTE] = m->advance_s > ss.io_seconds ? m->advance_s - ss.io_seconds : 0.0;
  mine[TALUS_MPI_EXCHANGE] = m->exchange_s;
  double *all = m->rank == 0 ? calloc((size_t)m->size * TALUS_MPI_TIMES, sizeof *all) : NULL;
  if (m->rank == 0 && !all) { /* the peers are already in the gather */
    fprintf(stderr, "talus: rank 0: no memory for the ranks' timings\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Gather(mine, TALUS_MPI_TIMES, MPI_DOUBLE, all, TALUS_MPI_TIMES, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  free(m->rank_times);
  m->rank_times = all;
}

/* Sums the ledger flows and stats of all ranks (exact: see ranks.h). */
static void reduce_stats(talus_mpi_grid *m, talus_run_stats *stats) {
  talus_tiled_flows_reduce(m->g, sum_over_ranks, NULL);
  MPI_Allreduce(MPI_IN_PLACE, stats->stage_seconds, TALUS_STAGE_COUNT, MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &stats->cell_steps, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&m->bytes_sent, &m->bytes_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  gather_times(m);
}

talus_status talus_mpi_run(talus_mpi_grid *m, int64_t end, talus_run_stats *stats,
                           talus_step_progress_fn progress, void *user) {
  int64_t start = talus_tiled_step(m->g);
  talus_status st = TALUS_OK;
  while (!st && talus_tiled_step(m->g) < end) {
    st = generation(m, talus_tiled_generation_steps(m->g, end), stats);
    int64_t done = talus_tiled_step(m->g) - start;
    if (!st && m->rank == 0 && progress && !progress(done, end - start, user))
      st = talus_fail(TALUS_ERR_CANCELLED, "run", "cancelled at step %lld (resumable)",
                      (long long)talus_tiled_step(m->g));
    st = talus_mpi_agree(st);
  }
  if (!st) reduce_stats(m, stats);
  return st;
}
#endif /* TALUS_HAVE_MPI */
