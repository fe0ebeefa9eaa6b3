/*
 * ranks.h — ranks: the same `talus` binary runs alone or under `mpirun -np N`.
 *
 * Design notes
 * ------------
 * - Start. talus_mpi_begin initialises MPI only when a launcher started the
 *   process (talus_mpi_launched: OMPI_COMM_WORLD_SIZE / PMI_SIZE /
 *   PMIX_RANK in the environment); a plain run never touches MPI. A build
 *   without MPI (none.c) refuses to run as one of several ranks instead of
 *   writing the same output N times. Logs and progress come from rank 0
 *   only (talus_log_set_rank).
 * - Decomposition (plan.c). The tile grid (ntx × nty) is cut into a
 *   px × py grid of rectangular blocks, px·py = ranks, px and py the factor
 *   pair whose block shape is closest to square (least strip traffic);
 *   block widths differ by at most one tile column (heights by one row), so
 *   the blocks are balanced when the grid does not divide evenly. A rank may
 *   own no tile when there are more ranks than tile columns or rows.
 * - Generation (run.c, exchange.c). Each rank keeps its own store (memory,
 *   or DIR/rank<r> of a shared --store DIR) holding its tiles and, under the
 *   owners' keys, the strips it received. At step s each rank packs, per
 *   peer rank, every strip (q, part) at step s that a tile of the peer
 *   reads — one message per peer pair, items in (q, part) order, both sides
 *   deriving the list from the same tiler rule (talus_tiled_reads) — and
 *   posts MPI_Isend; then advances its interior tiles (those reading no
 *   remote strip), polling MPI_Improbe between tiles to start receives
 *   (MPI_Imrecv: no size phase, no upper bound on a strip's bytes); then
 *   completes all receives, puts the strips into its store and advances its
 *   border tiles. Tile order never changes bytes: each tile reads only
 *   step-s blobs and writes step-(s+k) blobs.
 * - Errors. A rank that fails keeps its part of the exchange (an empty
 *   message marks "no strips from me") so no peer waits forever, and the
 *   generation ends with talus_mpi_agree: one MPI_Allreduce (MIN of the
 *   failing rank) and, on failure, one MPI_Bcast of the first failing
 *   rank's status and message. Every rank then returns that error; rank 0
 *   prints it. A killed rank makes mpirun stop the others.
 * - Resume. The disk stores are crash-safe per rank; the run restarts at
 *   the least committed step over all ranks (MPI_Allreduce MIN). No rank can
 *   pass a generation's agreement before every rank committed all its tiles,
 *   so the older blobs a restarted generation needs are still on disk.
 * - Output (cores.c). Rank 0 writes the GeoTIFF alone, streaming tile by
 *   tile in the writer's order and asking each tile's owner for the core
 *   (request → blob): one core in flight, no rank holds the map. Chosen over
 *   per-rank parts + a VRT because the promise is the same GeoTIFF bytes as
 *   one process (a VRT mosaic is a different file, and merging parts would
 *   re-read and re-encode the whole map), and the writer's block rows span
 *   tiles of several ranks anyway.
 * - Launcher facts (launcher.c). The launcher's environment variables are
 *   read there and nowhere else, in builds with and without MPI: whether a
 *   launcher started the process, the rank count it announced, and the
 *   node-local rank, from which the GPU backend picks its device (local
 *   rank modulo the visible devices; app/domain.c passes it down).
 * - Exact sums. Per-tile ledger flows are reduced with MPI_SUM where every
 *   entry is non-zero on one rank only (x + 0 = x), then summed in tile
 *   order as one process does: the report's ledger matches bit for bit.
 */
#ifndef TALUS_MPI_RANKS_H
#define TALUS_MPI_RANKS_H

#include "tiler/tiled.h"

/* Launcher facts (launcher.c; built with and without MPI, and the only
 * reader of the launcher's environment). 1 when an MPI launcher started
 * this process. */
int talus_mpi_launched(void);
/* The rank count the launcher announced, as its text; NULL when none did. */
const char *talus_mpi_launch_size(void);
/* This process's rank on its node as the launcher tells it (0 when alone
 * or when no launcher says): the GPU it uses is this modulo the visible
 * devices. */
int talus_mpi_local_rank(void);

/* Starts MPI when launched by mpirun; sets the log rank. Idempotent. */
talus_status talus_mpi_begin(void);
/* Finalises MPI when begin started it. */
void talus_mpi_end(void);
/* This process's rank and the rank count (0 and 1 when MPI is not used). */
int talus_mpi_rank(void);
int talus_mpi_size(void);
/* Ranks running on this machine, this one included (1 without MPI): they
 * share its memory, so each plans with its share of the default limit. */
int talus_mpi_node_size(void);
/* Collective: every rank passes its status; all get the first failing
 * rank's status and message ("rank r: ..."), or TALUS_OK. Identity when
 * alone. */
talus_status talus_mpi_agree(talus_status st);
/* Collective barrier (no-op alone). */
void talus_mpi_barrier(void);

/* Owner rank of each tile of an ntx × nty grid for `ranks` ranks (plan.c;
 * pure, also built without MPI). owner has ntx·nty entries. */
void talus_mpi_plan(int ntx, int nty, int ranks, int *owner);

/* A tile grid shared by the ranks. */
typedef struct talus_mpi_grid talus_mpi_grid;
talus_status talus_mpi_grid_create(talus_mpi_grid **out, talus_tiled *g);
void talus_mpi_grid_free(talus_mpi_grid *m);
int talus_mpi_owns(const talus_mpi_grid *m, int tile);
/* Collective. Builds this rank's tiles from src, or, when resume and every
 * rank's tiles are all committed, picks up the stores of a killed run. */
talus_status talus_mpi_start(talus_mpi_grid *m, const talus_tile_source *src, int resume,
                             int *resumed);
/* Collective. Advances every rank's tiles to step `end` (generations with
 * strip exchange, agreed once per generation); progress is called on rank 0.
 * Then sums the ledger flows and the stats over the ranks. */
talus_status talus_mpi_run(talus_mpi_grid *m, int64_t end, talus_run_stats *stats,
                           talus_step_progress_fn progress, void *user);
/* Strip bytes all ranks sent during talus_mpi_run, and its generations. */
void talus_mpi_traffic(const talus_mpi_grid *m, int64_t *bytes_sent, int64_t *generations);
/* Per-rank wall times of talus_mpi_run, gathered on rank 0: row r holds
 * rank r's compute (its tiles' steps, store I/O taken out), exchange wait
 * (packing, sending, waiting for strips and for the agreement) and store
 * I/O (put, get, commit) seconds. Returns the number of rows (the ranks)
 * and points *table at them (borrowed from m); 0 on other ranks, before a
 * run, and without MPI. */
enum { TALUS_MPI_COMPUTE, TALUS_MPI_EXCHANGE, TALUS_MPI_STORE, TALUS_MPI_TIMES };
int talus_mpi_rank_times(const talus_mpi_grid *m, const double **table);

/* Output on rank 0: the committed core of any tile (its own, or asked from
 * the owner). Other ranks call talus_mpi_serve_cores, which answers until
 * rank 0 calls talus_mpi_cores_done (also after an error). */
talus_status talus_mpi_read_core(talus_mpi_grid *m, int tile, talus_tile *dst);
talus_status talus_mpi_serve_cores(talus_mpi_grid *m);
void talus_mpi_cores_done(talus_mpi_grid *m);

#endif /* TALUS_MPI_RANKS_H */
