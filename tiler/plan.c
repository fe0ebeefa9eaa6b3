/*
 * plan.c — the plan of a run (plan.h): the memory model, then one piece or
 * tiled, the core size, K and the store kind. Pure arithmetic on the
 * numbers in talus_plan_in.
 */
#include "tiler/plan.h"

#include "halo/block.h"
#include "kernels/state.h"

#include <string.h>

/* The layers a tile with scratch counts (a run in one piece, the working
 * tile): those the cells can reach (a layer no column reaches is never
 * written, so its pages stay untouched zero pages), every slot when not
 * known. Kept tiles and the output's cores count every slot: a layered
 * DEM tiled in a memory store was measured at 1.8x the figure with one
 * layer kept (cli_memory_plan's lay1024_t256: 335 MiB, 188 MiB predicted),
 * within 1.5x of the every-layer one. */
static int plan_layers(const talus_plan_in *in) {
  return in->reach_layers > 0 && in->reach_layers < in->nz ? in->reach_layers : in->nz;
}

/* The layers cells use at the run's start: a state's own, one for a DEM. */
static int plan_start(int nz, int state_in) {
  return state_in ? nz : 1;
}

int talus_plan_reach_layers(int nz, int state_in, int horizontal, int64_t spinup, int64_t steps) {
  int L = plan_start(nz, state_in);
  for (int64_t s = spinup; horizontal && s < steps && L < nz; s++) /* a split a step at most */
    L *= 2;
  return L < nz ? L : nz;
}

/* Bytes a cell costs in a tile with scratch (talus_tile_create, plus
 * extra_scratch), and in a tile of persistent fields only or a store blob. */
/* The heightfield's diagonal fluxes (heightfield.neighbours = 8): 4 floats. */
static int64_t cell_bytes_fdiag(const talus_plan_in *in) {
  return in->optional & TALUS_TILE_FDIAG ? 16 : 0;
}
static int64_t cell_bytes_full(const talus_plan_in *in) {
  return 56 + 88 * (int64_t)plan_layers(in) + cell_bytes_fdiag(in) + (int64_t)in->extra_scratch;
}
/* Bytes a cell of a run in one piece touches. A tile's planes are fresh
 * zero pages until written (talus_alloc), so the heightfield model costs
 * what it writes: count and mask (1 each); B, s, w, C, r, hardness, vx,
 * vy, capacity and sediment (4 each); the fluxes (16); the neighbour flags
 * (2); thermal erosion's outflows (32). The layered model's layers fill
 * as columns split: its bound is the fields of every layer its cells can
 * reach in the run (plan_layers). */
static int64_t cell_bytes_one(const talus_plan_in *in) {
  if (!in->heightfield) return cell_bytes_full(in);
  return 64 + (in->heightfield == 2 ? 32 : 0) + cell_bytes_fdiag(in) + (int64_t)in->extra_scratch;
}
/* A kept tile's persistent fields: count, mask and B, s, w, C, r, D, p
 * and the fluxes of every layer (a reset writes each layer's ceiling),
 * plus the optional planes (hardness; the accumulators, which
 * simulation.masks and thermal.bank_angle keep; the diagonal fluxes). */
static int64_t cell_bytes_kept(const talus_plan_in *in) {
  int64_t optional = (in->optional & TALUS_TILE_HARD ? 4 : 0) +
                     (in->optional & TALUS_TILE_ACC ? 4 * TALUS_ACC_PLANES : 0);
  return 6 + 44 * (int64_t)in->nz + optional + cell_bytes_fdiag(in);
}

/* Bands of the input as read. */
static int64_t input_bands(const talus_plan_in *in) {
  return in->input_bands > 0 ? in->input_bands : in->state_in ? in->state_bands : 1;
}

/* Output bands a row buffer holds: surface, maps, state. */
static int64_t output_bands(const talus_plan_in *in) {
  return 1 + (int64_t)in->map_bands + (in->state_out ? (int64_t)in->state_bands : 0);
}

/* The side of a tile's buffer along a map side of n cells: its core c
 * grown by H on both sides, clipped to the map. */
static int64_t plan_span(int c, int H, int n) {
  return c + 2 * H < n ? c + 2 * H : n;
}

/* GDAL's block cache as the run fills it: up to its cap, but no more than
 * the rasters the run reads and writes (a small map never fills 256 MiB). */
static int64_t plan_gdal_cache(const talus_plan_in *in) {
  int64_t bands = input_bands(in) + output_bands(in);
  int64_t touched = (int64_t)in->nx * in->ny * 4 * bands;
  return touched < in->gdal_cache ? touched : in->gdal_cache;
}

int64_t talus_plan_tile_bytes(const talus_plan_in *in, int c, int H) {
  int64_t bw = plan_span(c, H, in->nx), bh = plan_span(c, H, in->ny);
  int64_t run = bw * bh * cell_bytes_full(in);
  /* the output: a core and a block row of cores (clipped to the map), and
   * the row buffers of a tile row and a block row */
  int64_t cw = plan_span(c, 0, in->nx), ch = plan_span(c, 0, in->ny);
  int64_t out = (cw * ch + cw * plan_span(256, 0, in->ny)) * cell_bytes_kept(in) +
                output_bands(in) * (ch + 256) * (int64_t)in->nx * 4;
  /* a store call's buffer is sized for one tile's blob but only the
   * compressed bytes are touched (zstd: 2x or better on these fields) */
  int64_t call = bw * bh * cell_bytes_kept(in) / 2;
  call = call < (int64_t)TALUS_STORE_CALL_BYTES ? call : (int64_t)TALUS_STORE_CALL_BYTES;
  int64_t io = plan_gdal_cache(in) + call * in->threads;
  return (run > out ? run : out) + io + TALUS_PLAN_SLACK;
}

int64_t talus_plan_one_bytes(const talus_plan_in *in) {
  int64_t input = in->state_in ? 4 * input_bands(in) : 5;
  int64_t cells = (int64_t)in->nx * in->ny;
  return cells * (cell_bytes_one(in) + 4 + input) + output_bands(in) * 256 * (int64_t)in->nx * 4 +
         plan_gdal_cache(in) + TALUS_PLAN_SLACK;
}

int64_t talus_plan_kept_bytes(const talus_plan_in *in, int c, int H) {
  int nx = in->nx, ny = in->ny;
  int64_t ntiles = (int64_t)((nx + c - 1) / c) * ((ny + c - 1) / c);
  int64_t kept = (ntiles + in->ranks - 1) / in->ranks;
  int64_t bw = plan_span(c, H, nx), bh = plan_span(c, H, ny);
  int64_t strips = ntiles > 1 ? 2 * (4 * (int64_t)H * c + 4 * (int64_t)H * H) : 0;
  return kept * (bw * bh + strips) * cell_bytes_kept(in);
}

/* Bytes of the blobs one tile of core cw x ch publishes per generation:
 * its core and, when it has neighbours, its 8 strips H wide clipped to the
 * core (halo_strip_rect), `layers` deep with the planes of `flags`. */
static int64_t plan_tile_blobs(int64_t ntiles, int cw, int ch, int H, int layers, int flags) {
  int64_t b = (int64_t)halo_block_bytes(cw, ch, layers, flags);
  if (ntiles == 1) return b;
  int hw = H < cw ? H : cw, hh = H < ch ? H : ch;
  return b +
         2 * ((int64_t)halo_block_bytes(hw, ch, layers, flags) +
              (int64_t)halo_block_bytes(cw, hh, layers, flags)) +
         4 * (int64_t)halo_block_bytes(hw, hh, layers, flags);
}

int64_t talus_plan_disk_bytes(const talus_plan_in *in, int c, int H, int layers) {
  int flags = (in->optional & TALUS_TILE_HARD ? HALO_FLAG_HARD : 0) |
              (in->optional & TALUS_TILE_ACC ? HALO_FLAG_ACC : 0) |
              (in->optional & TALUS_TILE_FDIAG ? HALO_FLAG_FDIAG : 0);
  /* the map's tile columns and rows: full cores, then a last narrower one */
  int w[2] = {c, in->nx % c}, h[2] = {c, in->ny % c};
  int64_t nw[2] = {in->nx / c, w[1] > 0}, nh[2] = {in->ny / c, h[1] > 0};
  int64_t ntiles = (nw[0] + nw[1]) * (nh[0] + nh[1]), all = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      if (nw[i] * nh[j] > 0)
        all += nw[i] * nh[j] * plan_tile_blobs(ntiles, w[i], h[j], H, layers, flags);
  /* under MPI a rank keeps its share (the largest, as kept_bytes), of
   * whole tiles at most */
  int64_t kept = (ntiles + in->ranks - 1) / in->ranks;
  if (kept < ntiles)
    all = kept * plan_tile_blobs(ntiles, w[nw[0] == 0], h[nh[0] == 0], H, layers, flags);
  return 2 * all;
}

int talus_plan_start_layers(const talus_plan_in *in) {
  return plan_start(in->nz, in->state_in);
}

int64_t talus_plan_overlap_bytes(const talus_plan_in *in, int c, int H) {
  int64_t cw = plan_span(c, 0, in->nx), ch = plan_span(c, 0, in->ny);
  int64_t strips = 4 * (int64_t)H * (cw > ch ? cw : ch) + 4 * (int64_t)H * H;
  return 2 * (cw * ch + strips) * cell_bytes_kept(in);
}

/* The rule for steps per exchange, K = core / (div R) within 1..cap, of a
 * memory store and of a disk store (plan.h). */
typedef struct k_rule {
  int div, cap;
} k_rule;
static const k_rule PLAN_K_MEMORY = {32, 8}, PLAN_K_DISK = {8, 32};

int talus_plan_K(const talus_plan_in *in, int c, talus_store_kind store) {
  k_rule rule = store == TALUS_STORE_DISK ? PLAN_K_DISK : PLAN_K_MEMORY;
  if (in->steps_per_exchange) return in->steps_per_exchange;
  int K = in->R > 0 ? c / (rule.div * in->R) : rule.cap;
  return K < 1 ? 1 : (K > rule.cap ? rule.cap : K);
}

static int64_t plan_limit(const talus_plan_in *in) {
  return in->mem_limit ? in->mem_limit : in->auto_limit;
}

void talus_plan_pieces(const talus_plan_in *in, talus_plan *out) {
  memset(out, 0, sizeof *out);
  out->limit = plan_limit(in);
  out->one_bytes = talus_plan_one_bytes(in);
  out->too_large = (int64_t)in->nx * in->ny > TALUS_PLAN_MAX_CELLS;
  if (out->too_large) return;
  out->asked = in->tile || in->steps_per_exchange || in->store_dir || in->resume || in->ranks > 1;
  out->tiled = out->asked || out->one_bytes > out->limit;
}

/* The core: the user's, else the largest multiple of 256 up to 2048 whose
 * working set (at the memory store's K) fits the limit; small maps get
 * about a quarter of the map. */
static int plan_core(const talus_plan_in *in, int64_t limit) {
  if (in->tile) return in->tile;
  int big = in->nx > in->ny ? in->nx : in->ny, c = TALUS_PLAN_MAX_CORE;
  while (c > TALUS_PLAN_CORE_STEP &&
         (c / 2 >= big ||
          talus_plan_tile_bytes(in, c, talus_plan_K(in, c, TALUS_STORE_MEMORY) * in->R) > limit))
    c -= TALUS_PLAN_CORE_STEP;
  if (c == TALUS_PLAN_CORE_STEP && big < 1024) c = big < 128 ? big : (big + 3) / 4;
  return c;
}

void talus_plan_tiles(const talus_plan_in *in, talus_plan *out) {
  int64_t limit = plan_limit(in);
  int R = in->R;
  out->limit = limit;
  out->core = plan_core(in, limit);
  out->K = talus_plan_K(in, out->core, TALUS_STORE_MEMORY);
  out->halo = out->K * R;
  out->tile_bytes = talus_plan_tile_bytes(in, out->core, out->halo);
  out->store = TALUS_STORE_MEMORY;
  out->kept_bytes = 0;
  out->halo_refused = 0;
  out->refused = in->mem_limit && out->tile_bytes > limit;
  out->halo_refused = in->steps_per_exchange && out->halo > TALUS_PLAN_MAX_HALO_CORES * out->core;
  if (out->refused || out->halo_refused) return;
  /* Memory store when every tile this process keeps fits besides the
   * working set, else disk. */
  out->kept_bytes = talus_plan_kept_bytes(in, out->core, out->halo);
  if (in->store_dir || out->kept_bytes + out->tile_bytes > limit) out->store = TALUS_STORE_DISK;
  int K = talus_plan_K(in, out->core, TALUS_STORE_DISK);
  int64_t bytes = talus_plan_tile_bytes(in, out->core, K * R);
  if (out->store == TALUS_STORE_DISK && bytes <= limit) {
    out->K = K; /* a disk store's longer generations, when their halo fits */
    out->halo = K * R;
    out->tile_bytes = bytes;
  }
  int64_t overlap = talus_plan_overlap_bytes(in, out->core, out->halo);
  out->overlap = out->store == TALUS_STORE_DISK && out->tile_bytes + overlap <= limit;
  if (out->overlap) out->tile_bytes += overlap;
}
