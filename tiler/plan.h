/*
 * plan.h — the plan of a run: in one piece or tiled, and when tiled the
 * tile core, K (steps per exchange), the halo and the store kind, from the
 * map's size, the memory limit and the user's choices. A pure function of
 * plain numbers: the caller opens the input, asks the machine (RAM, MPI
 * ranks, threads) and says what the messages say; nothing here reads a
 * file, logs or fails.
 *
 * Rules (the user's --tile, --steps-per-exchange and --store override them):
 * - One piece or tiled: a map runs as one piece in memory when its
 *   estimated footprint fits the limit and no tiling option was given
 *   (nor more than one rank); tiled otherwise.
 * - Store: memory when every tile this process keeps fits the limit
 *   besides the working set (on the CPU each tile is then resident: its
 *   core grown by H in its own buffer, tiler/tiled.h), else disk.
 * - Core size: the largest multiple of 256 (the output block, so a tile row
 *   writes whole block rows) up to 2048 whose working set fits the limit;
 *   small maps (largest side under 1024) get cores of about a quarter of
 *   the map, or the whole map under 128 cells.
 * - K (steps per exchange): halo H = K·R (R the step radius). A generation
 *   recomputes a ring of width up to H around every core (each stage only
 *   what the later ones read: redundant work ~ 2H/core) but exchanges
 *   tiles once per K steps.
 *   - Memory store: K = core / (32 R), between 1 and 8. Its tiles are
 *     resident and exchange only strips H wide, so the exchange costs about
 *     the same per step whatever K; a narrow ring is then the cheaper side
 *     (rivers-rain at 4096², cores of 2048: K 4 beat K 8; RESULTS.md).
 *   - Disk store: K = core / (8 R), between 1 and 32, when its working set
 *     still fits the limit (else the memory store's K). Every generation
 *     passes each core through zstd and the file system, which costs more
 *     than the wider ring (at 4096², cores of 2048: the heightfield's
 *     scheduler time per step halves from K 8 to 16 and again to 32;
 *     rivers-rain ran fastest at K 16 of 9, 16, 19 and 32, its ring being
 *     13 cells a step).
 * - Refusal: tiles whose working set exceeds a limit the user gave
 *   (--mem-limit) are refused; without one the plan goes ahead.
 *
 * Memory model (bytes): a cell costs 56 + 88·L in a tile with scratch (a
 * run in one piece, the working tile), L the layers its cells can reach
 * in the run (reach_layers: the planes are zero pages until written), and
 * 6 + 44·nz in a tile of persistent fields only or a store blob; a row
 * buffer of the outputs holds 1 band (surface), one per map with --maps and a
 * state file's bands with --state; GDAL's block cache (as far as the
 * rasters read and written fill it: 4 bytes a cell a band, at most its
 * cap), one store call's buffer per thread (16 MiB, or half a tile's blob:
 * only its compressed bytes are touched) and 80 MiB of slack (libraries
 * and heap: a 64² run peaks at 64 MiB) come on top. The input's bands are
 * those the file holds (a state stores only its used layers).
 * A disk store's write-behind and read-ahead (store.h) hold about one
 * tile's blobs each (core and strips, as kept) besides: counted when they
 * fit the limit (overlap), else the store stays synchronous.
 * Measured against getrusage's peak over sizes, tiles, models and stores
 * (tests/cli_memory_plan.sh): predicted / measured 0.99 to 1.4.
 *
 * Disk model (bytes, before zstd): at its peak a disk store holds two
 * generations of every tile's blobs (a generation's new core and strips
 * beside the last committed ones until every tile has committed, then the
 * old ones go: io/store/store.h), each blob only as deep as the layers its
 * cells use (halo/block.h: 2 + 44 bytes a cell a layer, 4 more with
 * hardness, 12 with the run accumulators). The bound counts every layer;
 * a DEM's cells start as one column (the layered model splits columns only
 * where it makes overhangs), so its store starts at one layer's blobs. zstd
 * (level 1, shuffled floats) took them 3.5x (fBm noise, 20 steps) to 4.9x
 * and 5.5x (a DEM stretched to 16384² and 8192², 10 and 20 steps), more in
 * a run's first steps while the water planes are mostly zero and on
 * smoother maps (stretched 4x to 32x, 1 to 4 steps: 7.6x to 23x;
 * RESULTS.md).
 */
#ifndef TALUS_TILER_PLAN_H
#define TALUS_TILER_PLAN_H

#include "io/store/store.h"

#include <stdint.h>

#define TALUS_PLAN_MAX_CORE  2048                /* largest automatic core [cells] */
#define TALUS_PLAN_CORE_STEP 256                 /* automatic cores are multiples of this */
#define TALUS_PLAN_SLACK     ((int64_t)80 << 20) /* libraries, heap (64 MiB at 64²) */
#define TALUS_PLAN_MAX_CELLS ((int64_t)1 << 36)  /* 262144² cells: tile counts stay small */
/* The widest halo a user's --steps-per-exchange may ask for, in cores: a
 * halo of 4 cores makes each tile recompute 81 cores' area per step. */
#define TALUS_PLAN_MAX_HALO_CORES 4
/* The disk store's zstd ratio once water has spread (10-20 steps), low
 * and high (plan.h's disk model): the typical store is its bytes at one
 * column a cell over these. */
#define TALUS_PLAN_ZSTD_LOW  3.5
#define TALUS_PLAN_ZSTD_HIGH 5.5

/* What the plan is made from. */
typedef struct talus_plan_in {
  int nx, ny;             /* the map [cells] */
  int nz;                 /* column slots per cell (a state's own layers) */
  int reach_layers;       /* the most columns a cell can hold during the run
                             (talus_plan_reach_layers), <= nz; 0: nz */
  int state_bands;        /* bands of a state file of nz layers (talus_state_band_count) */
  int input_bands;        /* bands of the input file (a state stores only the layers up to
                             its highest column count); 0: state_bands for a state, else 1 */
  int R;                  /* step radius (talus_step_radius); talus_plan_tiles only */
  int extra_scratch;      /* bytes per cell of scratch beyond the model's (droplets' totals) */
  int optional;           /* the tiles' optional planes (talus_tile_optional: hardness, the
                             run accumulators), which travel in the store's blobs */
  int heightfield;        /* 1: the heightfield model, 2: with thermal erosion; 0: layered */
  int state_in;           /* the input is a talus state (read whole: every band) */
  int map_bands;          /* --maps: the map files written (0 without --maps) */
  int state_out;          /* --state: a state file is written */
  int64_t mem_limit;      /* --mem-limit [bytes]; 0: none given */
  int64_t auto_limit;     /* the limit without --mem-limit [bytes] (3/4 of the RAM per rank) */
  int tile;               /* --tile; 0: the rule's core */
  int steps_per_exchange; /* --steps-per-exchange; 0: the rule's K */
  int store_dir;          /* --store given (a disk store) */
  int resume;             /* --resume (of a tiled run) */
  int ranks;              /* MPI ranks (1 without MPI) */
  int threads;            /* worker threads (each may hold a store call's buffer) */
  int64_t gdal_cache;     /* GDAL's block cache [bytes] */
} talus_plan_in;

/* The plan. */
typedef struct talus_plan {
  int64_t limit;          /* the limit planned for: mem_limit, else auto_limit */
  int64_t one_bytes;      /* peak bytes of the run in one piece */
  int too_large;          /* more than TALUS_PLAN_MAX_CELLS cells: no run at all */
  int asked;              /* an option (or more than one rank) asks for tiles */
  int tiled;              /* 1: tiled (asked, or one piece does not fit); 0: one piece */
  int core, K, halo;      /* cores of core² cells, K steps per exchange, halo K·R */
  talus_store_kind store; /* where the tiles are kept */
  int64_t tile_bytes;     /* peak bytes of the tiled run at core and K, besides the store */
  int64_t kept_bytes;     /* bytes of the tiles this process keeps in a memory store */
  int refused;            /* tile_bytes is over the user's --mem-limit: no run */
  int halo_refused;       /* the user's K makes the halo over TALUS_PLAN_MAX_HALO_CORES cores */
  int overlap;            /* disk store: its write-behind and read-ahead fit (in tile_bytes) */
} talus_plan;

/* One piece or tiled: fills limit, one_bytes, too_large, asked and tiled
 * of *out (the rest is zeroed). */
void talus_plan_pieces(const talus_plan_in *in, talus_plan *out);
/* Bytes of a disk store's write-behind and read-ahead at core c, halo H. */
int64_t talus_plan_overlap_bytes(const talus_plan_in *in, int c, int H);
/* The tiles of a tiled run: fills limit, core, K, halo, store, tile_bytes,
 * kept_bytes, refused and halo_refused of *out (the rest is left as it
 * is). When refused (either), core, K, halo and tile_bytes are those
 * refused and the store is not planned (memory, kept_bytes 0). */
void talus_plan_tiles(const talus_plan_in *in, talus_plan *out);

/* The memory model, for tests and messages. Peak bytes of the run in one
 * piece: the domain, the initial surface and the input as read. */
int64_t talus_plan_one_bytes(const talus_plan_in *in);
/* Peak bytes of a tiled run with cores of c and halo H, besides the store. */
int64_t talus_plan_tile_bytes(const talus_plan_in *in, int c, int H);
/* Bytes of the tiles this process keeps in a memory store (all of them,
 * or under MPI the most a rank owns): each tile's resident buffer, its
 * core grown by H, and its 8 strips at two steps while a generation is
 * open. */
int64_t talus_plan_kept_bytes(const talus_plan_in *in, int c, int H);
/* A disk store's peak bytes before zstd at core c, halo H, its blobs
 * `layers` layers deep: two generations of the cores and strips of the
 * tiles this process keeps (the disk model above; blob headers counted,
 * file headers and ledgers not). */
int64_t talus_plan_disk_bytes(const talus_plan_in *in, int c, int H, int layers);
/* The layers a run's cells use at its start: a state's own (nz), one for
 * a DEM (a column a cell). */
int talus_plan_start_layers(const talus_plan_in *in);
/* The most columns a cell of a layered run can hold before its last step,
 * the plan's reach_layers: only a split adds a column (kernels/split.h),
 * which needs horizontal erosion and damage, and damage grows only from
 * the step erosion.spinup on (kernels/horizontal.h); a split cuts each
 * column at most once a step, so a cell's count at most doubles per
 * eroding step. A state's nz (its damage may already split it); a DEM's
 * one column while no step can split, else min(nz, 2^(eroding steps)). */
int talus_plan_reach_layers(int nz, int state_in, int horizontal, int64_t spinup, int64_t steps);
/* Steps per exchange for cores of c cells over `store`: the user's, else
 * the rule's (memory: c / (32 R) in 1..8; disk: c / (8 R) in 1..32). */
int talus_plan_K(const talus_plan_in *in, int c, talus_store_kind store);

#endif /* TALUS_TILER_PLAN_H */
