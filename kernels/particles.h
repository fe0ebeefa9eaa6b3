/*
 * particles.h — particle (droplet) erosion on the heightfield and the
 * layered model, one batch of droplets per step, exact and order-free
 * (../shared/reference/particle-erosion-reference.md §2).
 *
 * Design notes
 * ------------
 * - Spawn. A droplet starts at global cell (gx, gy) on step t iff
 *   talus_hash(seed, gx, gy, t, PT_STREAM) >> (32 − n) == 0, n =
 *   particles.density_log2: 2⁻ⁿ droplets per cell and step, on the steps
 *   where t % particles.every == 0. Its sub-cell offset comes from stream
 *   PT_STREAM + 1, and a direction on flat ground from that hash plus the
 *   move number (a table of 16 unit vectors, no sin/cos).
 * - Batch with self-visibility. Every droplet of a step reads the terrain
 *   B as at the start of the particle stages plus its own earlier changes
 *   (its ≤ L events, summed per node and column in a droplet-local table,
 *   on the CPU in a per-thread window indexed by node (pt_win_side);
 *   replayed once per move when the table would overflow), moves at most L
 *   cells (particles.path_length over the cell size) and ends within the
 *   step. Nothing persists.
 * - Droplet (the Beyer family, with the reference's fixes): bilinear height
 *   and gradient at the position; d = I·d − (1 − I)·∇h, normalised (random
 *   if zero); one cell along d; Δh = h(p') − h(p); capacity
 *   c = max(−Δh/l_c, min_slope)·v·w·K_c; uphill: deposit min(Δh, s); over
 *   capacity: deposit K_d(s − c); else erode min(K_e(c − s), −Δh)·(1 − H)
 *   (H the bilinear hardness at p: the droplet reads no node beyond its
 *   4, which keeps its reads within the brush's box) with the cone brush max(0, r − d)
 *   centred on the droplet (not on a node), normalised by the sum of its
 *   discrete weights over live nodes (not an open domain's edge nodes
 *   lower than the node inside them, the rivers' base level: pt_edge); v = √max(0, v² − γ·Δh);
 *   w = w·(1 − e) + particles.water_gain (a flow line gathering water:
 *   0 in the peers). At the end its sediment is deposited
 *   (deposit_at_death) or lost (PT_LOST).
 * - Units. The law is in metres so that a preset erodes the same physical
 *   terrain alike at any cell size: the capacity reads the slope
 *   S = −Δh/l_c (min_slope a slope, K_c in metres), the speed gains γ per
 *   metre of drop (energy, not per cell), and the path length, brush
 *   radius, erosion, deposition, evaporation and water gain are keys per
 *   metre of path that talus_kparams_derive turns into L, r and per-move
 *   shares once per run (state.c, pt_units_derive; at 1 m cells they are
 *   the keys' own values, bit for bit). What stays per move: the inertia
 *   (direction smoothing) and the rounding of L and r to whole cells.
 * - River. A droplet one of whose 4 nodes holds pipe water at least
 *   particles.river_depth deep (the deepest, not the bilinear depth: a
 *   one-cell river running diagonally wets two opposite nodes, which
 *   read bilinearly as half its depth, and the droplets crossed it and
 *   filled its canyon; Zion), or a unit discharge (the nodes' outflow
 *   Σf / l_c, bilinear) of at least particles.river_discharge (each 0:
 *   off), ends there (pt_in_river, checked before each move and after the
 *   last) and hands its whole load to the river: into a third plane of
 *   totals at its deepest-watered node (pt_hand), which pt_apply adds to
 *   the suspended sediment r, for the pipes to carry or settle by their
 *   capacity. It reads only the water and fluxes of the 4 nodes whose
 *   heights it reads: the radius stays R. Off the domain: sediment leaves (PT_OUTFLOW) with
 *   water.outflow_border, else it is deposited where the droplet stands
 *   (a wall); a NoData cell is a border of its policy.
 * - Exact sums. Amounts are int64 in units of 2⁻³² m. Shares are integer
 *   weights (brush: the cone × 64, truncated; bilinear: the offsets in
 *   sixteenths) times q = amount / Σweights; what the division leaves stays
 *   in the droplet's load, so every share is exact and the load is exact.
 *   On heightfields every share goes to one int64 plane of net erosion
 *   (t->pt_acc: erosion adds, deposit subtracts), whose per-cell totals
 *   are integer sums: order-free; pt_apply adds each cell's total to B
 *   once, h = (float)((double)h − N·2⁻³²), and books the float rounding
 *   (PT_ROUNDING). One plane, not an erosion and a deposit plane: the
 *   height needs only their difference, and the sweeps that clear and
 *   apply the totals, and the droplets' cache lines, halve (1.14x the
 *   droplets a second at 2048², benchmarks/RESULTS.md). Layered stacks
 *   keep the two apart (pt_apply takes sand before rock). The batch's
 *   identity eroded = deposited + outflow + lost + river holds exactly
 *   in integers.
 * - Radius. Reads reach the brush's box, r + 1 beyond the position (the
 *   next position's nodes; on layered stacks the box's columns,
 *   pt_brush_col; on an open domain's edge the base level, pt_edge),
 *   writes the brush r + 1 beyond it, positions L cells from the spawn. A
 *   droplet first reading a stale cell does so within r + 1 cells of its
 *   position and thereafter writes within L more moves + r + 1, so the
 *   stale ring of a tile grows by R = L + 2r + 2 per step (pt_radius; it
 *   was L + r + 1, which counted the next position's nodes but not the
 *   box's reads): R is the stage's radius in the stage table. A droplet
 *   needing a node inside the domain but outside the tile buffer stops and
 *   deposits its load where it stands (only stale cells see it).
 * - Scatter without float atomics. CPU (cpu/cpu.c, CPU_STAGE_LOOP_PARTICLES):
 *   spawn rows in bands of 2R + 1 rows; even bands in parallel, then odd
 *   bands; same-coloured bands write disjoint rows; a band's heightfield
 *   droplets run 8 at a time in vector lanes (pt_gang_run: the same float
 *   operations per droplet, so the same bytes). CUDA: one thread per
 *   droplet from a list of the spawn cells (cuda.cu, launch_pt_trace),
 *   adds by 64-bit integer atomics (exact, order-free).
 * - Stages: pt_clear (radius 0) zeroes the planes of the cells pt_apply
 *   will read (the river plane only with the river on: pt_kinds);
 *   pt_trace (radius R) runs the droplets spawned in its region grown by
 *   R + 1 (pt_spawn_region); pt_apply (radius 0) applies.
 * - Ledger: PT_EROSION bedrock → sediment and PT_DEPOSIT sediment →
 *   bedrock (on heightfields what each droplet took and laid, booked by
 *   its spawn cell when it ends: the net plane no longer holds them apart;
 *   on layered stacks by the cell changed); PT_OUTFLOW and PT_LOST
 *   sediment → outside, booked by the droplet's spawn cell; PT_RIVER sediment →
 *   sediment (the load handed on, exact) and PT_RIVER_ROUND its float
 *   rounding into r, booked by the cell that receives it. The identity
 *   is eroded = deposited + outflow + lost + river.
 *
 * Layered model (the reference's §3)
 * ----------------------------------
 * - Level. The droplet carries its level z (the height it stands at; at
 *   birth the top columns' surface under it: rain falls on top). At each
 *   node it stands on column j*(z) = the lowest column whose ceiling
 *   C > z + ε, else the top one (pt_pick), whose surface is B + s. A
 *   droplet on a roof reads the roof; past the roof's edge the nodes have
 *   no roof, it reads the ground far below (a large −Δh: it falls, and
 *   gains speed; a move that drops more than (r + 1)·l_c is a fall, which
 *   neither erodes nor deposits: the capacity's cap −Δh would otherwise
 *   let it dig metres out of the roof's lip); under a ceiling it reads the cave's floor, never the
 *   roof's top; a wall reads as steep uphill (it deposits). One-column
 *   cells are the heightfield case with B + s for B.
 * - The brush erodes column j*(z) of each live node whose surface lies
 *   within (r + 1)·l_c of z (pt_brush_col): a droplet in a tunnel does not
 *   erode the hill's top beside it, one on a roof not the ground below
 *   its edge. Deposits go to j*(z) of the 4 nodes. Every choice reads the
 *   terrain at the step's start (ceilings never change in a batch), so an
 *   event's columns are known again from its z: the droplet's own changes
 *   of a node count when the event's column is the one it reads now.
 * - Erodibility. Where the droplet's sand (bilinear sand of its columns
 *   plus its own changes) is less than the amount, the rest is taken at
 *   particles.bedrock_erodibility of the rate. In water deeper than
 *   particles.water_stop (the layered pipes' water) it deposits all and
 *   stops.
 * - Floor limit. A brush share from a column with a floor (k > 0) takes
 *   at most what the column has above the floor + support.min_bedrock at
 *   the step's start (its sand, pt_avail) plus the droplet's own change of
 *   it (pt_take): the droplet carries only what it removed. The table and
 *   the replay give the same shares (the replay recomputes the cap from
 *   the events in order).
 * - Totals per column: pt_acc holds an erosion and a deposit plane per
 *   layer (pt_plane; a river plane between them, written only with the
 *   river on). pt_apply, per cell top-down: deposits fill sand up
 *   to the free room C − B − s − w at the step's start; erosion takes sand
 *   first, then bedrock down to the floor (pt_take keeps each droplet
 *   above floor + support.min_bedrock; only droplets of one batch eroding
 *   the same node together reach into that last support.min_bedrock,
 *   which the support check lets collapse, and what even the floor cannot
 *   give comes from the column below; column 0 has no floor): erosion is
 *   never refused, nothing is created. Deposits a ceiling refuses are
 *   booked (PT_CLAMP, outside → sediment, signed: ≤ 0), all in integer
 *   units, so the batch's identity eroded = deposited + outflow + lost
 *   + river holds exactly, with eroded = PT_EROSION + PT_SAND_EROSION and
 *   deposited = PT_SAND_DEPOSIT − PT_CLAMP. The float rounding of sand and
 *   bedrock is booked (PT_SAND_ROUNDING, PT_ROUNDING).
 */
#ifndef TALUS_KERNELS_PARTICLES_H
#define TALUS_KERNELS_PARTICLES_H
#include "heightfield.h"
#include "state.h"

#define PT_STREAM  0x70A10u     /* hash stream of spawns; + 1: offsets and directions */
#define PT_UNIT    4294967296.0 /* 2^32 units per metre */
#define PT_BRUSH_Q 64.0f        /* brush weight units per cell of cone height */

/* The stage radius of pt_trace: L + 2r + 2 (see the notes). */
TALUS_HD static inline int pt_radius(const talus_kparams *P) {
  return P->pt_max_moves + 2 * P->pt_brush_radius + 2;
}

/* 1 when global step `step` runs a batch: one of every pt_every steps,
 * after erosion.spinup (droplets erode, so they wait for the water's
 * spin-up like the other erosion stages). */
TALUS_HD static inline int pt_runs(const talus_kparams *P, int64_t step) {
  return P->pt_enable && talus_eroding(P, step) &&
         step % (int64_t)(P->pt_every > 0 ? P->pt_every : 1) == 0;
}

/* The buffer-local cells whose droplets pt_trace runs for `region`: the
 * region grown by R + 1, clipped to the buffer. */
TALUS_HD static inline talus_rect pt_spawn_region(const talus_tile *t, const talus_kparams *P,
                                                  talus_rect region) {
  int g = pt_radius(P) + 1;
  int x0 = region.x0 - g > 0 ? region.x0 - g : 0, y0 = region.y0 - g > 0 ? region.y0 - g : 0;
  int x1 = region.x0 + region.w + g, y1 = region.y0 + region.h + g;
  x1 = x1 < t->buf.w ? x1 : t->buf.w;
  y1 = y1 < t->buf.h ? y1 : t->buf.h;
  talus_rect r = {x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
  return r;
}

/* Adds v to *p: plainly on the CPU (bands write disjoint rows), by a
 * 64-bit integer atomic on the GPU (exact in any order). */
TALUS_HD static inline void pt_add(int64_t *p, int64_t v) {
#ifdef __CUDA_ARCH__
  atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
  *p += v;
#endif
}

/* The kinds of droplet totals, in the order of their planes in t->pt_acc
 * (pt_plane): erosion (on heightfields net erosion: erosion − deposit),
 * load handed to the river (the suspended sediment), deposit on the bed
 * (layered stacks only). A run allocates the planes of the kinds it can
 * write (pt_planes): the deposit's last, so a heightfield run keeps one
 * plane, or two with the river on. */
enum { PT_TOTAL_EROSION = 0, PT_TOTAL_RIVER = 1, PT_TOTAL_DEPOSIT = 2 };

/* Offset in t->pt_acc of the plane of totals of kind `kind` of column k:
 * the erosion planes of the layers, then their river planes, then their
 * deposit planes. */
TALUS_HD static inline size_t pt_plane(const talus_tile *t, int kind, int k) {
  return ((size_t)kind * (size_t)t->nz + (size_t)k) * t->plane;
}

/* 1 when droplets may hand their load to the river (particles.river_depth
 * or particles.river_discharge set): only then is the river plane
 * written, cleared and read (and, on heightfields, allocated: pt_planes);
 * without it pt_clear and pt_apply touch the erosion (and deposit) planes
 * alone. */
TALUS_HD static inline int pt_river_on(const talus_kparams *P) {
  return P->pt_river_depth > 0.0f || P->pt_river_discharge > 0.0f;
}

/* The kinds of totals a batch writes, bit k for kind k: erosion (on
 * heightfields net of deposits), with the river on (pt_river_on) river,
 * deposit on layered stacks. */
TALUS_HD static inline int pt_kinds(const talus_kparams *P) {
  return 1 << PT_TOTAL_EROSION | (pt_river_on(P) ? 1 << PT_TOTAL_RIVER : 0) |
         (P->model == TALUS_MODEL_LAYERED ? 1 << PT_TOTAL_DEPOSIT : 0);
}

/* The planes per column t->pt_acc holds under P: up to the last kind the
 * batches write (pt_kinds); TALUS_PT_PLANES for P NULL (any parameters:
 * a device's worst case). Heightfields: 8 or 16 bytes a cell, not 24. */
TALUS_HD static inline int pt_planes(const talus_kparams *P) {
  if (!P) return TALUS_PT_PLANES;
  int kinds = pt_kinds(P), n = 0;
  while (kinds >> n)
    n++;
  return n;
}

/* The column of the cell at buffer index idx a droplet at level z stands
 * on: the lowest whose ceiling is above z + ε, else the top one. */
TALUS_HD static inline int pt_pick(const talus_tile *t, size_t idx, float z) {
  int n = t->count[idx];
  for (int k = 0; k < n - 1; k++)
    if (t->C[talus_col(t, idx, k)] > z + TALUS_EPS) return k;
  return n - 1;
}

/* Surface B + s of column k of the cell at buffer index idx. */
TALUS_HD static inline float pt_surface(const talus_tile *t, size_t idx, int k) {
  size_t ci = talus_col(t, idx, k);
  return t->B[ci] + t->s[ci];
}

/* The columns (pt_pick at level z) of the 4 nodes of global cell
 * (ix, iy), node k = (ix + (k & 1), iy + (k >> 1)). */
TALUS_HD static inline void pt_cols(const talus_tile *t, int ix, int iy, float z, int8_t cols[4]) {
  size_t i = talus_idx(t, ix - t->buf.x0, iy - t->buf.y0), p = (size_t)t->pitch;
  size_t n[4] = {i, i + 1, i + p, i + p + 1};
  for (int k = 0; k < 4; k++)
    cols[k] = (int8_t)pt_pick(t, n[k], z);
}

/* The column the brush of a droplet at level z erodes at live global node
 * (gx, gy) of the buffer: pt_pick, or -1 when its surface lies more than
 * (r + 1)·l_c from z (a wall above the droplet, ground below a roof). */
TALUS_HD static inline int pt_brush_col(const talus_tile *t, const talus_kparams *P, int gx, int gy,
                                        float z) {
  size_t idx = talus_idx(t, gx - t->buf.x0, gy - t->buf.y0);
  int k = pt_pick(t, idx, z);
  float reach = (float)(P->pt_brush_radius + 1) * P->cell_size;
  return fabsf(pt_surface(t, idx, k) - z) <= reach ? k : -1;
}

/* One change a droplet made at level z: a brush erosion (kind 0) or a
 * bilinear deposit (kind 1) of q per weight unit around global cell
 * (ix, iy) plus (fx, fy). */
typedef struct pt_event {
  int32_t ix, iy;
  float fx, fy;
  int64_t q;
  int kind;
  float z;
} pt_event;

/* A droplet's own changes are kept in a table keyed by node and column
 * (open addressing, linear probing) so that reading the 4 nodes of a cell
 * costs 4 look-ups instead of a replay of every event (the replay tests
 * each event's reach and recomputes its weights: O(L) per move, O(L²) per
 * droplet). Each entry is the integer sum of the shares the droplet wrote
 * there, exactly what the replay adds up. A table that would pass
 * PT_OWN_KEYS keys (long lives, wide brushes) is dropped for the replay of
 * the events, which are always recorded: either way the same sums. The
 * GPU keeps a table per thread in local memory, so its size is the
 * droplets' memory traffic there: 512 slots instead of 1024 took a batch
 * at 8192² from 46.6 to 41.9 ms (H100, 2026-11-28; 256 slots 40.4 ms, but
 * a droplet past 192 keys, a long life or a wide brush, replays). */
#define PT_OWN_LOG2  9                      /* log2 of the table's slots */
#define PT_OWN_SLOTS (1 << PT_OWN_LOG2)     /* slots of the table of own changes */
#define PT_OWN_KEYS  (PT_OWN_SLOTS / 4 * 3) /* keys it may hold (load ≤ 3/4) */
#define PT_OWN_BIAS  512                    /* > R ≤ 256 + 8 + 1: offsets from the spawn */
#ifndef PT_OWN_TABLE
#define PT_OWN_TABLE 1 /* 0: every droplet replays its events (the same bytes; for A/B timing) */
#endif

/* On the CPU a droplet keeps its own changes in a window instead: a
 * per-thread plane of int64 per column, (2(L + r) + 2)² nodes centred on
 * the spawn cell (every node a droplet reads or writes lies within L + r
 * of it, L + r + 1 on the far side: pt_where), indexed directly, zero
 * between droplets (pt_win_clear zeroes what a droplet wrote, from its
 * events). The same integer sums as the table, without hashing, probing
 * or an overflow (pt_win_side; cpu/cpu.c allocates it). The GPU keeps
 * the table (PT_WIN: no window in device code). */
#ifdef __CUDA_ARCH__
#define PT_WIN(d) ((int64_t *)0)
#else
#define PT_WIN(d) ((d)->win)
#endif

/* The side of the window of own changes for L and r, its bias (the
 * spawn's offset in it) to *bias. */
TALUS_HD static inline int pt_win_side(const talus_kparams *P, int *bias) {
  if (bias) *bias = P->pt_max_moves + P->pt_brush_radius;
  return 2 * (P->pt_max_moves + P->pt_brush_radius) + 2;
}

/* A droplet: position (global cell + offset in [0,1)), direction, speed,
 * water, load [2⁻³² m], level z and the columns of its cell's nodes
 * (layered model; 0 on heightfields), its own changes of those nodes, its
 * events, its spawn cell and its table of own changes (keys -1: dropped,
 * the events are replayed) or, on the CPU, its window of them (win, at
 * the spawn cell's node of column 0: keys 1 throughout). */
typedef struct pt_drop {
  int32_t ix, iy;
  float fx, fy, dx, dy, v, w, z;
  int64_t s;
  int64_t taken;  /* the units its brush took so far (pt_take: no cap where it fits) */
  int64_t laid;   /* the units it deposited so far */
  int64_t own[4]; /* pt_own4 of the current cell, kept up to date */
  int8_t col[4];  /* pt_cols of the current cell at level z */
  int n;
  int32_t ox, oy;          /* the spawn cell: table keys are offsets from it */
  int keys;                /* keys in the table (0: none, not yet cleared), -1 dropped */
  int64_t *win;            /* the window of own changes (NULL: the table) */
  ptrdiff_t wside, wplane; /* its row and column strides */
  int wcols;               /* columns it wrote to: 0..wcols − 1 */
  int32_t in[4];           /* pt_inner: cells whose brush box is in the domain and buffer */
  pt_event ev[PT_MOVES_MAX];
  uint32_t key[PT_OWN_SLOTS]; /* pt_own_key, 0 for an empty slot */
  int64_t val[PT_OWN_SLOTS];  /* the own change [units] of the slot's key */
} pt_drop;

/* The table key of column col of global node (gx, gy): nonzero (0 marks an
 * empty slot), unique for nodes within PT_OWN_BIAS of the spawn cell,
 * where every node a droplet touches lies (R ≤ 265). */
TALUS_HD static inline uint32_t pt_own_key(const pt_drop *d, int gx, int gy, int col) {
  return ((uint32_t)(gy - d->oy + PT_OWN_BIAS) << 14) |
         ((uint32_t)(gx - d->ox + PT_OWN_BIAS) << 4) | (uint32_t)col;
}

/* The first slot key probes (Fibonacci hashing). */
TALUS_HD static inline uint32_t pt_own_slot(uint32_t key) {
  return (key * 0x9E3779B1u) >> (32 - PT_OWN_LOG2);
}

/* The droplet's own change [units] of key in its table (0 if absent). The
 * table is never full, so the probe ends at the key or an empty slot. */
TALUS_HD static inline int64_t pt_own_get(const pt_drop *d, uint32_t key) {
  for (uint32_t i = pt_own_slot(key);; i = (i + 1) & (PT_OWN_SLOTS - 1)) {
    if (d->key[i] == key) return d->val[i];
    if (!d->key[i]) return 0;
  }
}

/* Adds v [units] to key in the droplet's table; a key past PT_OWN_KEYS
 * drops the table (keys -1: from then on the events are replayed). The
 * table is cleared at its first key: a droplet that never erodes or
 * deposits (flat ground) never pays for it. */
TALUS_HD static inline void pt_own_add_key(pt_drop *d, uint32_t key, int64_t v) {
  if (d->keys < 0) return;
  if (d->keys == 0)
    for (int i = 0; i < PT_OWN_SLOTS; i++)
      d->key[i] = 0;
  for (uint32_t i = pt_own_slot(key);; i = (i + 1) & (PT_OWN_SLOTS - 1)) {
    if (d->key[i] == key) {
      d->val[i] += v;
      return;
    }
    if (!d->key[i]) {
      if (d->keys >= PT_OWN_KEYS) {
        d->keys = -1;
      } else {
        d->key[i] = key, d->val[i] = v, d->keys++;
      }
      return;
    }
  }
}

/* The window's entry of column col of global node (gx, gy). */
TALUS_HD static inline int64_t *pt_win_at(const pt_drop *d, int gx, int gy, int col) {
  return d->win + (ptrdiff_t)col * d->wplane + (ptrdiff_t)(gy - d->oy) * d->wside + (gx - d->ox);
}

/* Adds v [units] to the droplet's own change of column col of global
 * node (gx, gy): in its window, else in its table. */
TALUS_HD static inline void pt_own_add(pt_drop *d, int gx, int gy, int col, int64_t v) {
  if (PT_WIN(d)) {
    *pt_win_at(d, gx, gy, col) += v;
    d->wcols = col < d->wcols ? d->wcols : col + 1;
    return;
  }
  pt_own_add_key(d, pt_own_key(d, gx, gy, col), v);
}

/* Cone weight [units] of a node at squared distance d2 from the droplet
 * (ex² + ey², formed as pt_cone does), brush radius r: max(0, r − d)·64
 * truncated. */
TALUS_HD static inline int32_t pt_cone_d2(float d2, int r) {
  if (d2 >= (float)(r * r)) return 0; /* sqrtf(d2) >= r: the same 0, without the root */
  float c = (float)r - sqrtf(d2);
  return c > 0.0f ? (int32_t)(c * PT_BRUSH_Q) : 0;
}

/* Cone weight [units] of node (nx, ny) for a brush of radius r around
 * (ix + fx, iy + fy): max(0, r − d)·64 truncated. */
TALUS_HD static inline int64_t pt_cone(int nx, int ny, int ix, int iy, float fx, float fy, int r) {
  float ex = (float)(nx - ix) - fx, ey = (float)(ny - iy) - fy;
  return pt_cone_d2(ex * ex + ey * ey, r);
}

/* Bilinear weight [sixteenths², sum 256] of corner (cx, cy) ∈ {0,1}² of an
 * offset (fx, fy). */
TALUS_HD static inline int64_t pt_bilinear(int cx, int cy, float fx, float fy) {
  int ax = (int)(fx * 16.0f), ay = (int)(fy * 16.0f);
  return (int64_t)(cx ? ax : 16 - ax) * (int64_t)(cy ? ay : 16 - ay);
}

/* 1 when global node (gx, gy) is a live cell of the domain. */
TALUS_HD static inline int pt_live(const talus_tile *t, const talus_kctx *c, int gx, int gy) {
  if (gx < 0 || gy < 0 || gx >= c->nx || gy >= c->ny) return 0;
  return !talus_cell_masked(t, talus_idx(t, gx - t->buf.x0, gy - t->buf.y0));
}

/* The surface of node idx at the batch's start: the heightfield, or the
 * top column's ground (the map's surface, not the droplet's level). */
TALUS_HD static inline float pt_top(const talus_tile *t, const talus_kctx *c, size_t idx) {
  return c->P.model == TALUS_MODEL_LAYERED ? pt_surface(t, idx, t->count[idx] - 1) : t->B[idx];
}

/* 1 when global node (gx, gy), on the edge ring of a domain with outflow
 * borders, lies no higher than its inward neighbour (the batch's start
 * terrain): the base level its rivers leave at. Brushes do not erode it
 * (weight 0), so the nodes inside sink only until the next position's
 * height, which reads the edge, stops them (the exchange's cap −Δh).
 * Without it every node of a channel sank with the brushes upstream of
 * it, the outlet with them, and a channel leaving the map cut down to the
 * floor: 36 m into rivers-rain's 30 m of relief in 3500 steps (256²). An
 * edge node above its neighbour (the map rising to its border) erodes as
 * any other, so hills at the border wear down with the rest instead of
 * standing as a wall (every edge node held fixed, rivers-rain's west edge
 * stood up to 8.7 m above the cells inside it, and test_base_level's
 * valley blew up: droplets fell off the held rim into the lowered
 * map). Behind walls (no outflow) the load stays on the
 * map and nothing runs away. Reads two nodes of the brush's box, which
 * lies in the buffer (pt_where): the radius is unchanged. */
TALUS_HD static inline int pt_edge(const talus_tile *t, const talus_kctx *c, int gx, int gy) {
  int nx = c->nx, ny = c->ny;
  if (!c->P.outflow_water || gx < 0 || gy < 0 || gx >= nx || gy >= ny) return 0; /* off: no node */
  if (gx > 0 && gy > 0 && gx < nx - 1 && gy < ny - 1) return 0;
  if (nx < 3 || ny < 3) return 1;
  int ix = gx < 1 ? 1 : gx > nx - 2 ? nx - 2 : gx, iy = gy < 1 ? 1 : gy > ny - 2 ? ny - 2 : gy;
  size_t e = talus_idx(t, gx - t->buf.x0, gy - t->buf.y0);
  return pt_top(t, c, e) <= pt_top(t, c, talus_idx(t, ix - t->buf.x0, iy - t->buf.y0));
}

/* 1 when global node (gx, gy) lies in the tile buffer. */
TALUS_HD static inline int pt_in_buf(const talus_tile *t, int gx, int gy) {
  return gx >= t->buf.x0 && gy >= t->buf.y0 && gx < t->buf.x0 + t->buf.w &&
         gy < t->buf.y0 + t->buf.h;
}

/* 1 when event e wrote to the column cols_k of node (gx, gy) the droplet
 * reads now: always on heightfields (cols NULL); on layered stacks when
 * the event's column there (the brush's rule or pt_pick at its level) is
 * that one. */
TALUS_HD static inline int pt_event_hits(const pt_event *e, const talus_tile *t,
                                         const talus_kparams *P, int gx, int gy, const int8_t *cols,
                                         int k) {
  if (!cols) return 1;
  size_t idx = talus_idx(t, gx - t->buf.x0, gy - t->buf.y0);
  if (t->count[idx] == 1 && e->kind == 1) return 1;
  int col = e->kind == 1 ? pt_pick(t, idx, e->z) : pt_brush_col(t, P, gx, gy, e->z);
  return col == cols[k];
}

/* Units of float v [m] ≥ 0 below it: floor(v·2³²) (exact: v·2³² is). */
TALUS_HD static inline int64_t pt_units(double v) {
  return v > 0.0 ? (int64_t)(v * PT_UNIT) : 0;
}

#define PT_NO_FLOOR INT64_MAX /* pt_avail of a column without a floor limit */

/* The units a droplet may take from layered column col of the cell at
 * buffer index idx at the step's start: its sand and its bedrock above
 * the floor + support.min_bedrock, in the units pt_apply_column counts
 * them; PT_NO_FLOOR for column 0 (no floor) and on heightfields (col < 0). */
TALUS_HD static inline int64_t pt_avail(const talus_tile *t, const talus_kparams *P, size_t idx,
                                        int col) {
  if (col <= 0) return PT_NO_FLOOR;
  size_t ci = talus_col(t, idx, col);
  return pt_units(t->s[ci]) +
         pt_units((double)t->B[ci] - (double)t->C[ci - t->plane] - (double)P->min_bedrock);
}

/* The units a brush share of `share` takes from a node whose droplet has
 * taken `taken` in all so far, with `avail` (pt_avail) at the step's
 * start and its own change there `own` (read by *own_of only when the
 * share might not fit): at most what is left above the floor limit, so
 * the limit is a no-op at pt_apply (no droplet carries away what it did
 * not remove). own ≥ −taken, so a share with taken + share ≤ avail fits
 * whatever own is: the replay, which always knows own, gives the same. */
TALUS_HD static inline int64_t pt_take(int64_t share, int64_t avail, int64_t taken, int64_t own) {
  if (avail == PT_NO_FLOOR || taken + share <= avail) return share;
  int64_t left = avail + own;
  return left <= 0 ? 0 : share < left ? share : left;
}

/* Adds event e's change [units] of global node (gx, gy), column col
 * (cols[k] of pt_event_hits; NULL cols on heightfields), to *own, the
 * droplet's own change there from the events before e (brush shares
 * capped by pt_take, as pt_erode took them). */
TALUS_HD static inline void pt_event_node(const pt_event *e, const talus_tile *t,
                                          const talus_kctx *c, int gx, int gy, const int8_t *cols,
                                          int k, int64_t *own) {
  const talus_kparams *P = &c->P;
  int r = P->pt_brush_radius, kx = gx - e->ix, ky = gy - e->iy;
  if (e->kind == 1) {
    if (kx >= 0 && kx <= 1 && ky >= 0 && ky <= 1 && pt_event_hits(e, t, P, gx, gy, cols, k))
      *own += e->q * pt_bilinear(kx, ky, e->fx, e->fy);
  } else if (kx >= -r && kx <= r + 1 && ky >= -r && ky <= r + 1) {
    int64_t wgt = pt_edge(t, c, gx, gy) ? 0 : pt_cone(gx, gy, e->ix, e->iy, e->fx, e->fy, r);
    if (wgt && pt_event_hits(e, t, P, gx, gy, cols, k)) {
      size_t idx = talus_idx(t, gx - t->buf.x0, gy - t->buf.y0);
      int64_t avail = pt_avail(t, P, idx, cols ? cols[k] : -1);
      *own -= pt_take(e->q * wgt, avail, avail == PT_NO_FLOOR ? 0 : INT64_MAX / 4, *own);
    }
  }
}

/* Adds event e's change [units] of the 4 nodes of cell (ix, iy) to
 * own[k], node k = (ix + (k & 1), iy + (k >> 1)), columns cols (NULL on
 * heightfields): pt_event_node per node. The nodes a droplet reads are
 * live (pt_where), as every node its brush wrote to is, so the brush's
 * rule for dead nodes needs no test here; its rule for the edge ring
 * (pt_edge: weight 0) does, in pt_event_node. */
TALUS_HD static inline void pt_event_own(const pt_event *e, const talus_tile *t,
                                         const talus_kctx *c, int ix, int iy, const int8_t *cols,
                                         int64_t own[4]) {
  int r = c->P.pt_brush_radius;
  int ox = ix - e->ix, oy = iy - e->iy, reach = e->kind == 1 ? 1 : r + 1;
  if (ox < -reach || ox > reach || oy < -reach || oy > reach) return;
  for (int k = 0; k < 4; k++)
    pt_event_node(e, t, c, ix + (k & 1), iy + (k >> 1), cols, k, &own[k]);
}

/* The droplet's own changes [units] of the 4 nodes of cell (ix, iy),
 * columns cols (NULL on heightfields): from its table, or its events
 * replayed when the table was dropped (integer sums: the same either
 * way, in any order). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_own4(const pt_drop *d, const talus_tile *t,
                                                       const talus_kctx *c, int ix, int iy,
                                                       const int8_t *cols, int64_t own[4]) {
  if (PT_WIN(d)) {
    if (!cols) { /* heightfields: one address, the 4 nodes at fixed offsets */
      const int64_t *o = pt_win_at(d, ix, iy, 0);
      own[0] = o[0], own[1] = o[1], own[2] = o[d->wside], own[3] = o[d->wside + 1];
      return;
    }
    for (int k = 0; k < 4; k++)
      own[k] = *pt_win_at(d, ix + (k & 1), iy + (k >> 1), cols[k]);
    return;
  }
  if (d->keys == 0) { /* no event yet (each puts a key in the table) */
    own[0] = own[1] = own[2] = own[3] = 0;
    return;
  }
  if (d->keys > 0) { /* the table holds every event's shares */
    for (int k = 0; k < 4; k++)
      own[k] = pt_own_get(d, pt_own_key(d, ix + (k & 1), iy + (k >> 1), cols ? cols[k] : 0));
    return;
  }
  own[0] = own[1] = own[2] = own[3] = 0;
  for (int i = 0; i < d->n; i++)
    pt_event_own(&d->ev[i], t, c, ix, iy, cols, own);
}

/* The droplet's own change [units] of column col of global node
 * (gx, gy): from its table, or its events replayed in order. */
TALUS_HD static inline int64_t pt_own1(const pt_drop *d, const talus_tile *t, const talus_kctx *c,
                                       int gx, int gy, int col) {
  if (PT_WIN(d)) return *pt_win_at(d, gx, gy, col);
  if (d->keys >= 0) return d->keys ? pt_own_get(d, pt_own_key(d, gx, gy, col)) : 0;
  int8_t c1 = (int8_t)col;
  int64_t own = 0;
  for (int i = 0; i < d->n; i++)
    pt_event_node(&d->ev[i], t, c, gx, gy, &c1, 0, &own);
  return own;
}

/* Height h [m] of a node plus a droplet's own change there, own [units]:
 * a select, not a branch (h unchanged where own is 0). */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_plus_own(float h, int64_t own) {
  float hk = (float)((double)h + (double)own * (1.0 / PT_UNIT));
  return own ? hk : h;
}

/* Bilinear value at offset (fx, fy) of the 4 node values v0..v3 of a
 * cell, node k = (k & 1, k >> 1). */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_lerp(float v0, float v1, float v2, float v3,
                                                        float fx, float fy) {
  return (v0 * (1.0f - fx) + v1 * fx) * (1.0f - fy) + (v2 * (1.0f - fx) + v3 * fx) * fy;
}

/* The gradient [per cell] at offset (fx, fy) of the bilinear surface
 * through node heights h0..h3, to *gx, *gy. */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_grad(float h0, float h1, float h2, float h3,
                                                       float fx, float fy, float *gx, float *gy) {
  *gx = (h1 - h0) * (1.0f - fy) + (h3 - h2) * fy;
  *gy = (h2 - h0) * (1.0f - fx) + (h3 - h1) * fx;
}

/* Bilinear height at (ix + fx, iy + fy) of the terrain (B, or B + s of
 * columns cols when cols is not NULL) plus the droplet's own changes
 * own[4] of the cell's nodes and, when g is not NULL, its gradient [m per
 * cell] to g[0..1]. */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_sample(const talus_tile *t, int ix, int iy,
                                                          float fx, float fy, const int8_t *cols,
                                                          const int64_t own[4], float *g) {
  size_t i = talus_idx(t, ix - t->buf.x0, iy - t->buf.y0), p = (size_t)t->pitch;
  float h[4];
  if (cols) {
    size_t n[4] = {i, i + 1, i + p, i + p + 1};
    for (int k = 0; k < 4; k++)
      h[k] = pt_surface(t, n[k], cols[k]);
  } else {
    h[0] = t->B[i], h[1] = t->B[i + 1], h[2] = t->B[i + p], h[3] = t->B[i + p + 1];
  }
  for (int k = 0; k < 4; k++)
    h[k] = pt_plus_own(h[k], own[k]);
  if (g) pt_grad(h[0], h[1], h[2], h[3], fx, fy, &g[0], &g[1]);
  return pt_lerp(h[0], h[1], h[2], h[3], fx, fy);
}

/* Field f (a per-column field: s, w) of the droplet's columns at its 4
 * nodes, into v. */
TALUS_HD static inline void pt_field4(const talus_tile *t, const float *f, const pt_drop *d,
                                      float v[4]) {
  size_t i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0), p = (size_t)t->pitch;
  v[0] = f[talus_col(t, i, d->col[0])], v[1] = f[talus_col(t, i + 1, d->col[1])];
  v[2] = f[talus_col(t, i + p, d->col[2])], v[3] = f[talus_col(t, i + p + 1, d->col[3])];
}

/* Bilinear value of field f at the droplet's position. */
TALUS_HD static inline float pt_field(const talus_tile *t, const float *f, const pt_drop *d) {
  float v[4];
  pt_field4(t, f, d, v);
  return pt_lerp(v[0], v[1], v[2], v[3], d->fx, d->fy);
}

/* The largest of field f at the droplet's 4 nodes. */
TALUS_HD static inline float pt_field_max(const talus_tile *t, const float *f, const pt_drop *d) {
  float v[4];
  pt_field4(t, f, d, v);
  float a = v[0] > v[1] ? v[0] : v[1], b = v[2] > v[3] ? v[2] : v[3];
  return a > b ? a : b;
}

/* Bilinear hardness at the droplet's position. */
TALUS_HD static inline float pt_hardness(const talus_tile *t, const talus_kparams *P,
                                         const pt_drop *d) {
  if (!t->hard) return P->hardness;
  size_t i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0);
  const float *H = t->hard;
  size_t p = (size_t)t->pitch;
  return pt_lerp(H[i], H[i + 1], H[i + p], H[i + p + 1], d->fx, d->fy);
}

/* The cells (ix, iy) whose brush box [ix − r, ix + r + 1]² lies inside
 * both the domain and the buffer (most moves): in[0] ≤ ix ≤ in[2],
 * in[1] ≤ iy ≤ in[3]. A droplet forms them once (pt_run) for pt_where. */
TALUS_HD static inline void pt_inner(const talus_tile *t, const talus_kctx *c, int32_t in[4]) {
  int r = c->P.pt_brush_radius;
  int lox = t->buf.x0 > 0 ? t->buf.x0 : 0, loy = t->buf.y0 > 0 ? t->buf.y0 : 0;
  int hix = t->buf.x0 + t->buf.w < c->nx ? t->buf.x0 + t->buf.w : c->nx;
  int hiy = t->buf.y0 + t->buf.h < c->ny ? t->buf.y0 + t->buf.h : c->ny;
  in[0] = lox + r, in[1] = loy + r, in[2] = hix - r - 2, in[3] = hiy - r - 2;
}

/* Where a droplet at cell (ix, iy) may go: 0 its 4 nodes are live and it
 * may write its brush; 1 a node is off the domain or NoData (a border);
 * 2 a node it needs lies in the domain but outside the buffer (stop).
 * in: pt_inner's cells. */
TALUS_HD static inline int pt_where_in(const talus_tile *t, const talus_kctx *c, int ix, int iy,
                                       const int32_t in[4]) {
  int r = c->P.pt_brush_radius;
  /* the box inside both the domain and the buffer: the clipped box below
   * is the box itself, in the buffer, and the 4 nodes lie in the domain —
   * only the mask can say 1 */
  if (ix >= in[0] && iy >= in[1] && ix <= in[2] && iy <= in[3]) {
    size_t i = talus_idx(t, ix - t->buf.x0, iy - t->buf.y0), p = (size_t)t->pitch;
    return t->mask && (t->mask[i] | t->mask[i + 1] | t->mask[i + p] | t->mask[i + p + 1]) ? 1 : 0;
  }
  /* the brush's box [ix − r, ix + r + 1]² clipped to the domain */
  int x0 = ix - r > 0 ? ix - r : 0, y0 = iy - r > 0 ? iy - r : 0;
  int x1 = ix + r + 1 < c->nx - 1 ? ix + r + 1 : c->nx - 1;
  int y1 = iy + r + 1 < c->ny - 1 ? iy + r + 1 : c->ny - 1;
  if (x0 <= x1 && y0 <= y1 && !(pt_in_buf(t, x0, y0) && pt_in_buf(t, x1, y1))) return 2;
  if (ix >= 0 && iy >= 0 && ix + 1 < c->nx && iy + 1 < c->ny) { /* nodes in the domain: the mask */
    size_t i = talus_idx(t, ix - t->buf.x0, iy - t->buf.y0), p = (size_t)t->pitch;
    return t->mask && (t->mask[i] | t->mask[i + 1] | t->mask[i + p] | t->mask[i + p + 1]) ? 1 : 0;
  }
  for (int k = 0; k < 4; k++)
    if (!pt_live(t, c, ix + (k & 1), iy + (k >> 1))) return 1;
  return 0;
}

/* pt_where_in with the cells of pt_inner formed here. */
TALUS_HD static inline int pt_where(const talus_tile *t, const talus_kctx *c, int ix, int iy) {
  int32_t in[4];
  pt_inner(t, c, in);
  return pt_where_in(t, c, ix, iy, in);
}

/* Lays `share` units on column col of the cell at buffer index i: added to
 * its deposit plane on layered stacks, subtracted from the net erosion
 * plane on heightfields (pt_plane). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_lay(const talus_tile *t, size_t i, int col,
                                                      int64_t share, int layered) {
  pt_add(&t->pt_acc[pt_plane(t, layered ? PT_TOTAL_DEPOSIT : PT_TOTAL_EROSION, col) + i],
         layered ? share : -share);
}

/* pt_deposit of q per weight unit (plus rem on the cell's own node) into
 * column 0 of all 4 nodes (heightfields: subtracted from the net plane;
 * layered cells of one column: added to the deposit plane) of a droplet
 * with a window (CPU): the 4 bilinear weights once (pt_bilinear's
 * integers), one address per plane, the shares added unconditionally (a
 * zero share adds 0: the same totals as pt_deposit's tested adds). */
TALUS_HD static inline TALUS_FORCE_INLINE void
pt_deposit_col0(pt_drop *d, const talus_tile *t, int64_t q, int64_t rem, int all, int layered) {
  int64_t ax = (int64_t)(int)(d->fx * 16.0f), ay = (int64_t)(int)(d->fy * 16.0f);
  int64_t w0 = (16 - ax) * (16 - ay), w1 = ax * (16 - ay), w2 = (16 - ax) * ay, w3 = ax * ay;
  size_t p = (size_t)t->pitch, i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0);
  pt_lay(t, i, 0, q * w0 + rem, layered), pt_lay(t, i + 1, 0, q * w1, layered);
  pt_lay(t, i + p, 0, q * w2, layered), pt_lay(t, i + p + 1, 0, q * w3, layered);
  d->s -= q * 256 + rem, d->laid += q * 256 + rem;
  if (q <= 0 || d->n >= PT_MOVES_MAX || all) return; /* at death nothing is read again */
  d->ev[d->n++] = (pt_event){d->ix, d->iy, d->fx, d->fy, q, 1, d->z};
  int64_t *o = pt_win_at(d, d->ix, d->iy, 0);
  o[0] += q * w0, o[1] += q * w1, o[d->wside] += q * w2, o[d->wside + 1] += q * w3;
  d->wcols = d->wcols > 1 ? d->wcols : 1;
}

/* Deposits `amount` units (≤ the load) bilinearly at the droplet's
 * position into its columns (heightfields: the net plane, subtracted;
 * layered stacks: the deposit planes); `all` puts the division's
 * remainder on the cell's own node, else it stays in the load. Records
 * the event, in the list and in the table. */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_deposit(pt_drop *d, const talus_tile *t,
                                                          int64_t amount, int all, int layered) {
  int64_t q = amount / 256, rem = all ? amount - q * 256 : 0;
  if (q <= 0 && rem <= 0) return;
  if (PT_WIN(d) && !(d->col[0] | d->col[1] | d->col[2] | d->col[3])) {
    pt_deposit_col0(d, t, q, rem, all, layered);
    return;
  }
  size_t i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0), p = (size_t)t->pitch;
  size_t n[4] = {i, i + 1, i + p, i + p + 1};
  for (int k = 0; k < 4; k++) {
    int64_t share = q * pt_bilinear(k & 1, k >> 1, d->fx, d->fy) + (k == 0 ? rem : 0);
    if (share) pt_lay(t, n[k], d->col[k], share, layered);
  }
  d->s -= q * 256 + rem, d->laid += q * 256 + rem;
  if (q <= 0 || d->n >= PT_MOVES_MAX || all) return; /* at death nothing is read again */
  d->ev[d->n++] = (pt_event){d->ix, d->iy, d->fx, d->fy, q, 1, d->z};
  /* the table gets what the event's replay gives; d->col is pt_pick at
   * d->z, the event's column rule */
  for (int k = 0; k < 4; k++)
    pt_own_add(d, d->ix + (k & 1), d->iy + (k >> 1), d->col[k],
               q * pt_bilinear(k & 1, k >> 1, d->fx, d->fy));
}

/* The brush's box: rows and columns [i − r + 1, i + r + 1] around cell
 * (ix, iy). Row and column i − r lie at a distance ≥ r from any offset in
 * [0, 1) (in floats too: −r − f rounds to ≤ −r), so their cone weight is
 * 0 and they are not visited. */
#define PT_BOX_MAX (2 * PT_BRUSH_MAX + 1)

/* The brush's weights w (and, on layered stacks, columns col) over its box
 * around the droplet, row by row: the cone at live nodes (on layered
 * stacks, where pt_brush_col gives a column), else 0. Returns Σw. The
 * squared offsets of the box's columns and rows are computed once (the
 * same floats pt_cone forms per node); a box inside the domain tests only
 * the NoData mask of a node. */
TALUS_HD static inline TALUS_FORCE_INLINE int64_t pt_brush_weights(const pt_drop *d,
                                                                   const talus_tile *t,
                                                                   const talus_kctx *c, int layered,
                                                                   int32_t *w, int8_t *col) {
  int r = c->P.pt_brush_radius, side = 2 * r + 1, k = 0;
  int x0 = d->ix - r + 1, y0 = d->iy - r + 1;
  int inside = x0 >= 0 && y0 >= 0 && x0 + side <= c->nx && y0 + side <= c->ny;
  float ex2[PT_BOX_MAX], ey2[PT_BOX_MAX];
  for (int i = 0; i < side; i++) {
    float ex = (float)(i - r + 1) - d->fx, ey = (float)(i - r + 1) - d->fy;
    ex2[i] = ex * ex, ey2[i] = ey * ey;
  }
  /* inside the domain the box lies in the buffer (pt_where) */
  ptrdiff_t row = (ptrdiff_t)(y0 - t->buf.y0) * t->pitch + (x0 - t->buf.x0);
  int64_t W = 0;
  for (int j = 0; j < side; j++, row += t->pitch)
    for (int i = 0; i < side; i++, k++) {
      int32_t wk = pt_cone_d2(ex2[i] + ey2[j], r);
      if (wk && (pt_edge(t, c, x0 + i, y0 + j) || (inside ? talus_cell_masked(t, (size_t)(row + i))
                                                          : !pt_live(t, c, x0 + i, y0 + j))))
        wk = 0;
      int8_t ck = (int8_t)(layered && wk ? pt_brush_col(t, &c->P, x0 + i, y0 + j, d->z) : 0);
      w[k] = ck < 0 ? 0 : wk, col[k] = ck;
      W += w[k];
    }
  return W;
}

#define PT_ROW8 8 /* lanes of a brush row in pt_erode_row8 (side ≤ 8: r ≤ 3) */

/* pt_erode on a heightfield droplet with a window (CPU) whose box of
 * side ≤ 8 lies inside the domain, 8 nodes from its first column inside
 * the buffer's row: each row's cone weights, and its shares into the
 * erosion plane and the window, as one 8-lane loop (the lanes past the
 * box weigh 0 and add 0 to nodes of the same rows, which only this
 * droplet's band writes; the window has PT_ROW8 nodes of slack at its
 * end). The same integers as pt_erode: the weights are the same floats
 * (ex² + ey², r − √d2, × 64 truncated; 0 where d2 ≥ r², as pt_cone_d2),
 * and with no floor limit the load gains q·Σw, the sum of the shares. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pt_erode_row8(pt_drop *d, const talus_tile *t, const talus_kctx *c, int r, int64_t amount) {
  int side = 2 * r + 1, x0 = d->ix - r + 1, y0 = d->iy - r + 1;
  float ex2[PT_ROW8], r2 = (float)(r * r), rf = (float)r;
  int32_t w[PT_ROW8 * PT_ROW8];
  for (int i = 0; i < PT_ROW8; i++) {
    float ex = (float)(i - r + 1) - d->fx;
    ex2[i] = i < side ? ex * ex : 1e30f; /* past the box: weight 0 */
  }
  for (int j = 0; j < side; j++) {
    float ey = (float)(j - r + 1) - d->fy, ey2 = ey * ey;
#pragma omp simd
    for (int i = 0; i < PT_ROW8; i++) {
      float d2 = ex2[i] + ey2, cone = rf - sqrtf(d2);
      w[j * PT_ROW8 + i] = d2 < r2 ? (int32_t)(cone * PT_BRUSH_Q) : 0;
    }
  }
  ptrdiff_t row0 = (ptrdiff_t)(y0 - t->buf.y0) * t->pitch + (x0 - t->buf.x0);
  if (t->mask) /* 8 mask bytes a row as one word: most rows have no NoData cell */
    for (int j = 0; j < side; j++) {
      const uint8_t *m = t->mask + row0 + (ptrdiff_t)j * t->pitch;
      uint64_t m8;
      memcpy(&m8, m, sizeof m8); /* past the box: the row's next cells, whose lanes weigh 0 */
      if (m8)
        for (int i = 0; i < side; i++)
          if (m[i]) w[j * PT_ROW8 + i] = 0;
    }
  if (c->P.outflow_water && (x0 == 0 || y0 == 0 || x0 + side == c->nx || y0 + side == c->ny))
    for (int j = 0; j < side; j++)
      for (int i = 0; i < side; i++)
        if (pt_edge(t, c, x0 + i, y0 + j)) w[j * PT_ROW8 + i] = 0;
  int64_t W = 0;
  for (int j = 0; j < side; j++)
#pragma omp simd reduction(+ : W)
    for (int i = 0; i < PT_ROW8; i++)
      W += w[j * PT_ROW8 + i];
  int64_t q = W > 0 ? amount / W : 0;
  if (q <= 0) return;
  int64_t *E = t->pt_acc + row0, *O = pt_win_at(d, x0, y0, 0);
  for (int j = 0; j < side; j++, E += t->pitch, O += d->wside)
#pragma omp simd
    for (int i = 0; i < PT_ROW8; i++) {
      int64_t share = q * (int64_t)w[j * PT_ROW8 + i];
      E[i] += share, O[i] -= share;
    }
  d->s += q * W, d->taken += q * W, d->wcols = d->wcols > 1 ? d->wcols : 1;
  if (d->n < PT_MOVES_MAX) d->ev[d->n++] = (pt_event){d->ix, d->iy, d->fx, d->fy, q, 0, d->z};
}

/* Erodes up to `amount` units with the cone brush around the droplet:
 * q = amount / Σweights of the live nodes (on layered stacks, of the
 * nodes pt_brush_col gives a column), each node gives q·weight into the
 * erosion plane of its column, the load gains the sum. Records the
 * event, in the list and in the table. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pt_erode(pt_drop *d, const talus_tile *t, const talus_kctx *c, int64_t amount, int layered) {
  int r = c->P.pt_brush_radius, side = 2 * r + 1, k = 0;
  if (!layered && PT_WIN(d) && side <= PT_ROW8) {
    int x0 = d->ix - r + 1, y0 = d->iy - r + 1;
    if (x0 >= 0 && y0 >= 0 && x0 + side <= c->nx && y0 + side <= c->ny &&
        x0 - t->buf.x0 + PT_ROW8 <= t->pitch) {
      pt_erode_row8(d, t, c, r, amount);
      return;
    }
  }
  int32_t w[PT_BOX_MAX * PT_BOX_MAX];
  int8_t col[PT_BOX_MAX * PT_BOX_MAX];
  int64_t W = pt_brush_weights(d, t, c, layered, w, col);
  int64_t q = W > 0 ? amount / W : 0;
  if (q <= 0) return;
  /* index of the box's corner: may lie off the buffer, whose nodes weigh 0 */
  int x0 = d->ix - r + 1, y0 = d->iy - r + 1;
  ptrdiff_t row = (ptrdiff_t)(y0 - t->buf.y0) * t->pitch + (x0 - t->buf.x0);
  int64_t took = 0;
  for (int j = 0; j < side; j++, row += t->pitch)
    for (int i = 0; i < side; i++, k++)
      if (w[k]) {
        int64_t share = q * w[k];
        if (layered && col[k] > 0) { /* a floor limit: take at most what is left above it */
          int64_t avail = pt_avail(t, &c->P, (size_t)(row + i), col[k]);
          if (d->taken + took + share > avail)
            share = pt_take(share, avail, INT64_MAX / 4, pt_own1(d, t, c, x0 + i, y0 + j, col[k]));
        }
        if (!share) continue;
        pt_add(&t->pt_acc[pt_plane(t, PT_TOTAL_EROSION, col[k]) + (size_t)(row + i)], share);
        pt_own_add(d, x0 + i, y0 + j, col[k], -share);
        took += share;
      }
  d->s += took, d->taken += took;
  if (d->n < PT_MOVES_MAX) d->ev[d->n++] = (pt_event){d->ix, d->iy, d->fx, d->fy, q, 0, d->z};
}

/* The 16 unit directions of a droplet on flat ground. */
TALUS_HD static inline void pt_random_dir(uint32_t h, float *dx, float *dy) {
  const float cs[5] = {1.0f, 0.9238795f, 0.70710678f, 0.38268343f, 0.0f};
  int k = (int)(h & 15u), q = k >> 2, j = k & 3;
  float a = cs[j], b = cs[4 - j]; /* cos, sin of j·22.5° */
  *dx = q == 0 ? a : q == 1 ? -b : q == 2 ? -a : b;
  *dy = q == 0 ? b : q == 1 ? a : q == 2 ? -b : -a;
}

/* A position: global cell plus offset in [0,1). */
typedef struct pt_pos {
  int32_t ix, iy;
  float fx, fy;
} pt_pos;

/* One axis of pt_moved: cell i, offset f, direction d; returns the new
 * cell, its offset to *nf. */
TALUS_HD static inline TALUS_FORCE_INLINE int32_t pt_moved1(int32_t i, float f, float d,
                                                            float *nf) {
  float x = f + d;
  int cx = (x >= 1.0f) - (x < 0.0f); /* −1, 0 or 1 */
  float g = x - (float)cx;
  *nf = g < 1.0f ? g : 0.99999994f; /* f + 1 may round up to 1 */
  return i + cx;
}

/* The droplet's position moved one cell along its direction, carrying
 * whole cells. */
TALUS_HD static inline pt_pos pt_moved(const pt_drop *d) {
  pt_pos p;
  p.ix = pt_moved1(d->ix, d->fx, d->dx, &p.fx), p.iy = pt_moved1(d->iy, d->fy, d->dy, &p.fy);
  return p;
}

/* The share of the rate an erosion of `amt` [m] keeps: on heightfields
 * 1 − hardness; on layered stacks the droplet's sand (its columns' sand
 * plus its own changes, bilinear) goes at the full rate, the rest at
 * particles.bedrock_erodibility. Returns the amount to erode [m]. */
TALUS_HD static inline float pt_erodible(const pt_drop *d, const talus_tile *t,
                                         const talus_kparams *P, float amt, int layered) {
  if (!layered) return amt * (1.0f - pt_hardness(t, P, d));
  double own = ((double)d->own[0] * (1.0f - d->fx) + (double)d->own[1] * d->fx) * (1.0f - d->fy) +
               ((double)d->own[2] * (1.0f - d->fx) + (double)d->own[3] * d->fx) * d->fy;
  float sand = (float)((double)pt_field(t, t->s, d) + own * (1.0 / PT_UNIT));
  sand = sand > 0.0f ? sand : 0.0f;
  return amt <= sand ? amt : sand + (amt - sand) * P->pt_bedrock_erodibility;
}

/* pt_exchange's choice for a droplet of load s [units], speed v and
 * water w stepping Δh = dh [m]: 1 to deposit *u units (≤ s), else 0 to
 * erode up to *amt [m] (before pt_erodible). */
TALUS_HD static inline TALUS_FORCE_INLINE int pt_choice(const talus_kparams *P, int64_t s, float v,
                                                        float w, float dh, int64_t *u, float *amt) {
  float load = (float)((double)s * (1.0 / PT_UNIT));
  float S = -dh / P->cell_size; /* the slope: capacity per metre of path, not per cell */
  float cap = (S > P->pt_min_slope ? S : P->pt_min_slope) * v * w * P->pt_capacity;
  int dep = dh > 0.0f || load > cap;
  float da = dh > 0.0f ? (dh < load ? dh : load) : P->pt_deposit_move * (load - cap);
  int64_t du =
      (int64_t)((double)(dep ? da : 0.0f) * PT_UNIT); /* converts a deposit's amount only */
  float ea = P->pt_erode_move * (cap - load);
  *u = du < s ? du : s, *amt = ea < -dh ? ea : -dh;
  return dep;
}

/* Erodes or deposits at the droplet's position for a step of Δh to the
 * next position, against capacity c [m]. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pt_exchange(pt_drop *d, const talus_tile *t, const talus_kctx *c, float dh, int layered) {
  const talus_kparams *P = &c->P;
  int64_t u;
  float amt;
  if (pt_choice(P, d->s, d->v, d->w, dh, &u, &amt)) {
    pt_deposit(d, t, u, 0, layered);
    return;
  }
  amt = pt_erodible(d, t, P, amt, layered);
  if (amt > 0.0f) pt_erode(d, t, c, (int64_t)((double)amt * PT_UNIT), layered);
}

/* On layered stacks, the columns of the droplet's cell at its level, and
 * its own changes of them again where they changed. Returns 1 when it
 * stands in water deeper than particles.water_stop (it stops there). */
TALUS_HD static inline int pt_relevel(pt_drop *d, const talus_tile *t, const talus_kctx *c) {
  int8_t cols[4];
  pt_cols(t, d->ix, d->iy, d->z, cols);
  if (cols[0] != d->col[0] || cols[1] != d->col[1] || cols[2] != d->col[2] ||
      cols[3] != d->col[3]) {
    for (int k = 0; k < 4; k++)
      d->col[k] = cols[k];
    pt_own4(d, t, c, d->ix, d->iy, d->col, d->own);
  }
  return c->P.pt_water_stop > 0.0f && pt_field(t, t->w, d) >= c->P.pt_water_stop;
}

/* 1 when the droplet stands in the pipes' river (particles.river_depth,
 * particles.river_discharge, each 0 off): the bilinear water depth of its
 * columns at its position reaches river_depth, or the bilinear unit
 * discharge (a node's outflow Σf over the cell size [m²/s]) reaches
 * river_discharge. It reads the water and the fluxes of the 4 nodes whose
 * heights it reads (both are final before the droplets run, from the
 * step's pipes), so the stage's radius holds. */
TALUS_HD static inline int pt_in_river(const pt_drop *d, const talus_tile *t,
                                       const talus_kparams *P) {
  if (P->pt_river_depth > 0.0f && pt_field_max(t, t->w, d) >= P->pt_river_depth) return 1;
  if (!(P->pt_river_discharge > 0.0f)) return 0;
  size_t i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0), p = (size_t)t->pitch;
  size_t n[4] = {i, i + 1, i + p, i + p + 1};
  float q[4];
  for (int k = 0; k < 4; k++) {
    const float *f = t->f + talus_dcol(t, n[k], d->col[k], 0);
    q[k] = (f[0] + f[t->plane]) + (f[2 * t->plane] + f[3 * t->plane]);
    if (t->fd) { /* heightfield.neighbours = 8: the diagonal pipes' outflow too */
      const float *g = t->fd + n[k];
      q[k] += (g[0] + g[t->plane]) + (g[2 * t->plane] + g[3 * t->plane]);
    }
  }
  float Q = (q[0] * (1.0f - d->fx) + q[1] * d->fx) * (1.0f - d->fy) +
            (q[2] * (1.0f - d->fx) + q[3] * d->fx) * d->fy;
  return Q >= P->pt_river_discharge * P->cell_size;
}

/* Hands the droplet's whole load to the river: into the river plane of
 * the column of the deepest-watered of its 4 nodes (the first of equals),
 * where the pipes' water will carry it. A bilinear share on a dry node
 * would lie in a cell whose sediment no water moves, all of it settling
 * there batch after batch: single-cell towers of hundreds of metres
 * beside the rivers (Big Tujunga 360²). */
TALUS_HD static inline void pt_hand(pt_drop *d, const talus_tile *t) {
  if (d->s <= 0) return;
  size_t i = talus_idx(t, d->ix - t->buf.x0, d->iy - t->buf.y0), p = (size_t)t->pitch;
  size_t n[4] = {i, i + 1, i + p, i + p + 1};
  int best = 0;
  for (int k = 1; k < 4; k++)
    if (t->w[talus_col(t, n[k], d->col[k])] > t->w[talus_col(t, n[best], d->col[best])]) best = k;
  pt_add(&t->pt_acc[pt_plane(t, PT_TOTAL_RIVER, d->col[best]) + n[best]], d->s);
  d->s = 0;
}

/* Asks the cache for one address (CPU only: a hint, no effect on
 * results; the GPU has no use for it). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_prefetch1(const void *p) {
#ifndef __CUDA_ARCH__
  __builtin_prefetch(p, 1, 3);
#else
  (void)p;
#endif
}

/* Prefetches what the move from cell (ix, iy) will touch (the planes of
 * the first column): its brush's rows of erosion totals, its deposit
 * nodes, hardness, and the heights of the cells it may move to (on
 * layered stacks also their sand, water and column counts). A droplet
 * touches mostly cold lines of planes far larger than the cache, one
 * chain of dependent moves at a time; a move ahead hides most of the
 * miss. The rows clip to the buffer (pt_where guarantees only the
 * domain's part of the box). Forced inline, as pt_prefetch1: a call of
 * it has no side effect the compiler sees, and GCC 12 deleted the call
 * where it did not inline it (the droplet lanes' first version: no
 * prefetch instruction left in the stage, the lanes 1.6× slower). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_prefetch(const talus_tile *t, const talus_kctx *c,
                                                           int ix, int iy, int layered) {
  int r = c->P.pt_brush_radius, x = ix - t->buf.x0, y = iy - t->buf.y0;
  int xa = x - r + 1 > 0 ? x - r + 1 : 0, xb = x + r + 1 < t->buf.w ? x + r + 1 : t->buf.w - 1;
  int ya = y - r + 1 > 0 ? y - r + 1 : 0, yb = y + r + 1 < t->buf.h ? y + r + 1 : t->buf.h - 1;
  /* the deposit plane: layered stacks only (heightfields do not hold it) */
  int64_t *E = t->pt_acc, *D = layered ? t->pt_acc + pt_plane(t, PT_TOTAL_DEPOSIT, 0) : E;
  for (int j = ya; j <= yb; j++) {
    size_t row = (size_t)j * (size_t)t->pitch;
    pt_prefetch1(E + row + xa), pt_prefetch1(E + row + xb);
    pt_prefetch1(t->B + row + xa), pt_prefetch1(t->B + row + xb);
    pt_prefetch1(t->mask + row + xa), pt_prefetch1(t->mask + row + xb); /* pt_where_in's test */
    if (layered) { /* the surfaces' sand, the water stop, the columns */
      pt_prefetch1(t->s + row + xa), pt_prefetch1(t->s + row + xb);
      pt_prefetch1(t->w + row + xa), pt_prefetch1(t->w + row + xb);
      pt_prefetch1(t->count + row + xa), pt_prefetch1(t->count + row + xb);
    }
  }
  for (int j = y; j <= y + 1; j++) {
    size_t i = (size_t)j * (size_t)t->pitch + (size_t)x;
    if (layered) pt_prefetch1(D + i), pt_prefetch1(D + i + 1); /* heightfields: in E's rows */
    if (t->hard) pt_prefetch1(t->hard + i), pt_prefetch1(t->hard + i + 1);
  }
}

/* The speed after a step of Δh = dh [m]: per metre of drop, not per
 * cell of slope. */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_speed(const talus_kparams *P, float v,
                                                         float dh) {
  float v2 = v * v - P->pt_gravity * dh;
  return sqrtf(v2 > 0.0f ? v2 : 0.0f);
}

/* The water after a move: evaporation, then the gain. */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_water(const talus_kparams *P, float w) {
  return w * (1.0f - P->pt_evap_move) + P->pt_gain_move;
}

/* The direction d·I − (1 − I)·g (inertia I, gradient g [per cell]) to
 * (*nx, *ny), unnormalised; returns its length (normalise where
 * > 1e-12, else a random direction). */
TALUS_HD static inline TALUS_FORCE_INLINE float pt_turn(const talus_kparams *P, float dx, float dy,
                                                        float gx, float gy, float *nx, float *ny) {
  *nx = P->pt_inertia * dx - (1.0f - P->pt_inertia) * gx;
  *ny = P->pt_inertia * dy - (1.0f - P->pt_inertia) * gy;
  return sqrtf(*nx * *nx + *ny * *ny);
}

/* One move of the droplet (the notes' droplet step). Each move reads its
 * own changes of the next cell's nodes (pt_own4) before its exchange and
 * again after it (or adds the exchange's event where the events are
 * replayed); the current cell's were kept from the move before (on layered
 * stacks read again where its level changed the columns). Returns 0
 * to go on, else how it ended: 1 a border (handled), 2 stopped at the
 * buffer, 3 stopped in deep water (layered: particles.water_stop), 4
 * reached the river (pt_in_river: its load goes to the suspended
 * sediment). */
TALUS_HD static inline TALUS_FORCE_INLINE int pt_step(pt_drop *d, const talus_tile *t,
                                                      const talus_kctx *c, int m, uint32_t h,
                                                      double *flows, int layered) {
  const talus_kparams *P = &c->P;
  int deep = layered ? pt_relevel(d, t, c) : 0; /* layered: the columns at its level first */
  if (pt_in_river(d, t, P)) return 4;
  if (deep) return 3;
  float g[2], h0 = pt_sample(t, d->ix, d->iy, d->fx, d->fy, layered ? d->col : NULL, d->own, g);
  float dx, dy, len = pt_turn(P, d->dx, d->dy, g[0], g[1], &dx, &dy);
  if (len > 1e-12f) {
    d->dx = dx / len, d->dy = dy / len;
  } else {
    pt_random_dir(h + (uint32_t)m * 0x9E3779B9u, &d->dx, &d->dy);
  }
  pt_pos next = pt_moved(d);
  int where = pt_where_in(t, c, next.ix, next.iy, d->in);
  if (where == 1 && c->P.outflow_water) {
    flows[TALUS_FLOW_PT_OUTFLOW] += (double)d->s * (1.0 / PT_UNIT);
    d->s = 0;
  }
  if (where) return where;
  pt_prefetch(t, c, next.ix, next.iy, layered);
  int64_t own[4];
  int8_t cols[4] = {0, 0, 0, 0};
  if (layered) pt_cols(t, next.ix, next.iy, d->z, cols);
  pt_own4(d, t, c, next.ix, next.iy, layered ? cols : NULL, own);
  float dh =
      pt_sample(t, next.ix, next.iy, next.fx, next.fy, layered ? cols : NULL, own, NULL) - h0;
  int n = d->n;
  if (!layered || dh >= -(float)(P->pt_brush_radius + 1) * P->cell_size) /* else it falls */
    pt_exchange(d, t, c, dh, layered);
  if (d->n > n && d->keys > 0) /* the table holds the new event too */
    pt_own4(d, t, c, next.ix, next.iy, layered ? cols : NULL, own);
  else if (d->n > n) /* replayed before, or the table dropped just now: add it */
    pt_event_own(&d->ev[n], t, c, next.ix, next.iy, layered ? cols : NULL, own);
  d->v = pt_speed(P, d->v, dh), d->w = pt_water(P, d->w);
  d->ix = next.ix, d->iy = next.iy, d->fx = next.fx, d->fy = next.fy, d->z = h0 + dh;
  for (int k = 0; k < 4; k++)
    d->own[k] = own[k], d->col[k] = cols[k];
  return 0;
}

/* Stage pt_clear: zeroes the cell's totals of the kinds the batch writes
 * (pt_kinds), of its columns. */
TALUS_HD static inline void k_pt_clear(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  (void)flows;
  size_t idx = talus_idx(t, x, y);
  int n = c->P.model == TALUS_MODEL_LAYERED ? t->count[idx] : 1, kinds = pt_kinds(&c->P);
  for (int k = 0; k < n; k++)
    for (int kind = 0; kind < TALUS_PT_PLANES; kind++)
      if (kinds >> kind & 1) t->pt_acc[pt_plane(t, kind, k) + idx] = 0;
}

/* Zeroes what droplet d wrote to its window (its events' boxes and
 * nodes, in the columns it wrote to): the window is zero again for the
 * next droplet. Boxes of side ≤ 8 in column 0 are zeroed as rows of 8
 * nodes (a fixed-size store; the nodes past a box are zero or this
 * droplet's own, the window has PT_ROW8 nodes of slack at its end). */
TALUS_HD static inline void pt_win_clear(pt_drop *d, int r) {
  if (d->wcols <= 1 && 2 * r + 1 <= PT_ROW8) { /* column 0, boxes of side ≤ 8: 8-node rows */
    for (int i = 0; i < d->n; i++) {
      const pt_event *e = &d->ev[i];
      int a = e->kind == 1 ? 0 : 1 - r, rows = e->kind == 1 ? 2 : 2 * r + 1;
      int64_t *row = pt_win_at(d, e->ix + a, e->iy + a, 0);
      for (int y = 0; y < rows; y++, row += d->wside)
        memset(row, 0, PT_ROW8 * sizeof *row); /* past the box: this droplet's nodes or zeros */
    }
    return;
  }
  for (int i = 0; i < d->n; i++) {
    const pt_event *e = &d->ev[i];
    int a = e->kind == 1 ? 0 : 1 - r, b = e->kind == 1 ? 1 : r + 1; /* box [a, b] around the cell */
    for (int k = 0; k < d->wcols; k++)
      for (int y = e->iy + a; y <= e->iy + b; y++) {
        int64_t *row = pt_win_at(d, e->ix + a, y, k);
        for (int x = 0; x <= b - a; x++)
          row[x] = 0;
      }
  }
}

/* Droplet d born at global cell (gx, gy) at offset o of the spawn hash,
 * keeping its own changes in win (the zeroed window, pt_win_side²·columns
 * int64, CPU only) or, with NULL, in the table. */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_born(pt_drop *d, const talus_tile *t,
                                                       const talus_kctx *c, int gx, int gy,
                                                       uint32_t o, int layered, int64_t *win) {
  const talus_kparams *P = &c->P;
  d->ix = gx, d->iy = gy;
  d->fx = (float)(o & 0xFFFFu) * (1.0f / 65536.0f), d->fy = (float)(o >> 16) * (1.0f / 65536.0f);
  d->dx = d->dy = 0.0f, d->v = P->pt_initial_speed, d->w = P->pt_initial_water;
  d->s = 0, d->taken = 0, d->laid = 0, d->n = 0, d->z = 0.0f, d->ox = gx, d->oy = gy;
  d->keys = PT_OWN_TABLE ? 0 : -1;
  d->win = NULL, d->wside = d->wplane = 0, d->wcols = 0;
  pt_inner(t, c, d->in);
#ifndef __CUDA_ARCH__
  if (win && PT_OWN_TABLE) {
    int bias, side = pt_win_side(P, &bias);
    d->wside = side, d->wplane = (ptrdiff_t)side * side;
    d->win = win + (ptrdiff_t)bias * side + bias, d->keys = 1;
  }
#else
  (void)win;
#endif
  for (int k = 0; k < 4; k++)
    d->own[k] = 0, d->col[k] = 0;
  if (layered) { /* rain falls on the top columns */
    pt_cols(t, gx, gy, TALUS_TOP, d->col);
    d->z = pt_sample(t, gx, gy, d->fx, d->fy, d->col, d->own, NULL);
  }
}

/* The end of droplet d, `end` as pt_step returned it (0: it made its L
 * moves): its load to the river, deposited or lost (booked to flows),
 * its window zeroed again. On heightfields what it took and laid in all
 * is booked here too (PT_EROSION, PT_DEPOSIT), as the net plane cannot. */
TALUS_HD static inline TALUS_FORCE_INLINE void
pt_died(pt_drop *d, const talus_tile *t, const talus_kctx *c, int end, double *flows) {
  const talus_kparams *P = &c->P;
  int layered = P->model == TALUS_MODEL_LAYERED;
  if (!end && pt_in_river(d, t, P)) end = 4; /* its last move ended in the river */
  if (end == 4) pt_hand(d, t);               /* the load to the river's suspended sediment */
  if (d->s > 0 && (end || P->pt_deposit_at_death)) pt_deposit(d, t, d->s, 1, layered);
  if (d->s > 0) flows[TALUS_FLOW_PT_LOST] += (double)d->s * (1.0 / PT_UNIT);
  if (!layered) {
    flows[TALUS_FLOW_PT_EROSION] += (double)d->taken * (1.0 / PT_UNIT);
    flows[TALUS_FLOW_PT_DEPOSIT] += (double)d->laid * (1.0 / PT_UNIT);
  }
  if (PT_WIN(d)) pt_win_clear(d, P->pt_brush_radius);
}

/* The droplet spawned at global cell (gx, gy) at offset o of the spawn
 * hash, from birth to its end; its outflow and loss are booked here. win:
 * the zeroed window of own changes (pt_win_side²·columns int64, CPU only),
 * or NULL for the table. Returns the moves it made. */
TALUS_HD static inline TALUS_FORCE_INLINE int pt_run(const talus_tile *t, const talus_kctx *c,
                                                     int gx, int gy, uint32_t o, double *flows,
                                                     int layered, int64_t *win) {
  pt_drop d;
  pt_born(&d, t, c, gx, gy, o, layered, win);
  int end = 0, m = 0;
  for (; m < c->P.pt_max_moves && !end; m++)
    end = pt_step(&d, t, c, m, o, flows, layered);
  pt_died(&d, t, c, end, flows);
  return end ? m - 1 : m;
}

/* 1 when the hash rule spawns a droplet at global cell (gx, gy) on
 * global step `step` (branch-free: the CPU tests rows of cells as vector
 * loops, cpu/cpu.c). */
TALUS_HD static inline int pt_hashed(const talus_kparams *P, int gx, int gy, int64_t step) {
  return (talus_hash(P->seed, gx, gy, (uint64_t)step, PT_STREAM) >> (32 - P->pt_density_log2)) ==
         0u;
}

/* 1 when a droplet spawns at buffer-local cell (x, y) this step (the
 * hash rule, a cell with an offset, its nodes live and in the buffer);
 * its offset hash to *o. */
TALUS_HD static inline int pt_spawn(const talus_tile *t, const talus_kctx *c, int x, int y,
                                    uint32_t *o) {
  const talus_kparams *P = &c->P;
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  if (!pt_hashed(P, gx, gy, c->step)) return 0;
  if (gx >= c->nx - 1 || gy >= c->ny - 1) return 0; /* the last row and column hold no offset */
  if (pt_where(t, c, gx, gy) != 0) return 0;
  *o = talus_hash(P->seed, gx, gy, (uint64_t)c->step, PT_STREAM + 1u);
  return 1;
}

/* The droplet spawned at cell (x, y) this step, if any (pt_spawn; pt_run,
 * the layered or the heightfield droplet, each with a constant model flag),
 * keeping its own changes in `win` (CPU: one per thread, zeroed,
 * pt_win_side²·t->nz int64) or, with NULL, in the table. */
TALUS_HD static inline void k_pt_trace_win(const talus_tile *t, const talus_kctx *c, int x, int y,
                                           double *flows, int64_t *win) {
  uint32_t o;
  if (!pt_spawn(t, c, x, y, &o)) return;
  int gx = t->buf.x0 + x, gy = t->buf.y0 + y;
  if (c->P.model == TALUS_MODEL_LAYERED)
    pt_run(t, c, gx, gy, o, flows, 1, win);
  else
    pt_run(t, c, gx, gy, o, flows, 0, win);
}

/* Stage pt_trace: k_pt_trace_win with the table (the GPU's path). */
TALUS_HD static inline void k_pt_trace(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  k_pt_trace_win(t, c, x, y, flows, NULL);
}

#ifndef __CUDA_ARCH__
/* Droplets in lanes (CPU): the heightfield droplets of a band run PT_LANES
 * at a time, each move as vector loops over the lanes (the bilinear
 * samples with own changes, the turn, the move, the exchange's choice,
 * speed and water: pt_plus_own, pt_lerp, pt_grad, pt_turn, pt_moved1,
 * pt_choice, pt_speed, pt_water, the scalar body's float operations in
 * its order) and per lane where a droplet writes (pt_deposit, pt_erode,
 * pt_died: the scalar body's functions on the lane's pt_drop) or leaves
 * the common case (a random direction, pt_where_in off its inner cells).
 * One droplet's moves are one chain of dependent operations (samples,
 * a root, two divisions, the brush's int64 division); lanes overlap 8
 * chains and share the instructions. Each droplet books its outflow and
 * loss (each at most once: a droplet that flows out ends with no load)
 * to its pt_job, which the loop adds to its row's flows in spawn order:
 * the same sums. A lane keeps its own window of own changes. Used where
 * pt_gang_fits: heightfields, no river by discharge (a river by depth:
 * pt_gang_river, pt_hand), brushes of side ≤ 8 (pt_erode_row8's box),
 * the window (PT_OWN_TABLE). */
#ifndef PT_LANES
#define PT_LANES 8
#endif

/* 1 when tile t's droplets run in lanes: heightfields without a river
 * by discharge (particles.river_discharge; a river by depth, the DEM
 * preset's, runs in them: pt_gang_river), brushes of side ≤ PT_ROW8, the
 * window, and buffer and windows small enough for the lanes' 32-bit
 * indices (a vector gather's; buffer-local cells and the lanes' window
 * nodes). */
static inline int pt_gang_fits(const talus_tile *t, const talus_kctx *c) {
  int64_t ws = pt_win_side(&c->P, NULL), lim = INT32_MAX / 2;
  return PT_OWN_TABLE && c->P.model != TALUS_MODEL_LAYERED && !(c->P.pt_river_discharge > 0.0f) &&
         2 * c->P.pt_brush_radius + 1 <= PT_ROW8 && (int64_t)t->pitch * (t->buf.h + 1) < lim &&
         (int64_t)PT_LANES * (ws * ws + PT_ROW8) + (t->buf.h + t->buf.w + 2) * (ws + 1) < lim;
}

/* A droplet to run: its spawn cell and offset hash, and what it booked to
 * PT_OUTFLOW, PT_LOST, PT_EROSION and PT_DEPOSIT (0 where it booked
 * nothing). */
typedef struct pt_job {
  int32_t gx, gy;
  uint32_t o;
  double out, lost, ero, dep;
} pt_job;

/* The lanes: per lane the droplet's job (-1: idle), moves made, position,
 * direction, speed, water, load, own changes of its cell's nodes, the
 * offset in the lanes' windows of its window's node at the buffer's
 * origin, and its pt_drop (events, window; position and load copied in
 * where a scalar function reads them). */
typedef struct pt_gang {
  int32_t job[PT_LANES], m[PT_LANES], ix[PT_LANES], iy[PT_LANES];
  float fx[PT_LANES], fy[PT_LANES], dx[PT_LANES], dy[PT_LANES], v[PT_LANES], w[PT_LANES];
  int64_t s[PT_LANES], own[4][PT_LANES];
  int32_t wo[PT_LANES];
  pt_drop d[PT_LANES];
} pt_gang;

/* Lane l takes droplet `job` (pt_born into the lane's window). */
static inline void pt_gang_start(pt_gang *g, int l, int job, const pt_job *jobs,
                                 const talus_tile *t, const talus_kctx *c, int64_t *win,
                                 ptrdiff_t wstride) {
  pt_drop *d = &g->d[l];
  int gx = jobs[job].gx, gy = jobs[job].gy;
  pt_born(d, t, c, gx, gy, jobs[job].o, 0, win + (ptrdiff_t)l * wstride);
  g->job[l] = job, g->m[l] = 0, g->ix[l] = gx, g->iy[l] = gy, g->fx[l] = d->fx, g->fy[l] = d->fy;
  g->dx[l] = d->dx, g->dy[l] = d->dy, g->v[l] = d->v, g->w[l] = d->w, g->s[l] = d->s;
  for (int k = 0; k < 4; k++)
    g->own[k][l] = 0;
  g->wo[l] = (int32_t)(d->win - win) - (gy - t->buf.y0) * (int32_t)d->wside - (gx - t->buf.x0);
}

/* pt_in_river by depth for the droplet of lane l, at the position its
 * move starts from (pt_step checks there first): the deepest water of
 * its 4 nodes reaches particles.river_depth (0: off). */
static inline int pt_gang_river(const talus_tile *t, const talus_kparams *P, const pt_gang *g,
                                int l) {
  if (!(P->pt_river_depth > 0.0f)) return 0;
  const float *W = t->w;
  int32_t p = t->pitch, i = (g->iy[l] - t->buf.y0) * p + (g->ix[l] - t->buf.x0);
  float a = W[i] > W[i + 1] ? W[i] : W[i + 1],
        b = W[i + p] > W[i + p + 1] ? W[i + p] : W[i + p + 1];
  return (a > b ? a : b) >= P->pt_river_depth;
}

/* Runs droplets jobs[0 .. n) in the lanes (pt_gang_fits), booking each
 * one's outflow and loss to its job. win: PT_LANES zeroed windows of
 * wstride int64 (pt_win_side² + PT_ROW8), left zeroed. */
static inline void pt_gang_run(const talus_tile *t, const talus_kctx *c, pt_job *jobs, int n,
                               pt_gang *g, int64_t *win, ptrdiff_t wstride) {
  const talus_kparams *P = &c->P;
  const float *B = t->B, *H = t->hard;
  const int32_t p = t->pitch, bx = t->buf.x0, by = t->buf.y0; /* 32-bit indices: the lanes' */
  const int32_t ws = pt_win_side(P, NULL);                    /* gathers (pt_gang_fits) */
  int32_t in[4];
  pt_inner(t, c, in);
  int next = 0, live = 0;
  for (int l = 0; l < PT_LANES; l++) {
    g->job[l] = -1;
    g->ix[l] = (int32_t)bx, g->iy[l] = (int32_t)by, g->fx[l] = g->fy[l] = 0.0f; /* idle: a valid */
    g->wo[l] = (int32_t)(l * wstride); /* cell (the buffer's first), reads that nothing uses */
    /* and defined state, so an idle lane's discarded arithmetic reads no
     * uninitialised memory (valgrind flagged its select in pt_plus_own) */
    g->m[l] = 0, g->dx[l] = g->dy[l] = g->v[l] = g->w[l] = 0.0f, g->s[l] = 0;
    for (int k = 0; k < 4; k++)
      g->own[k][l] = 0;
    if (next < n) pt_gang_start(g, l, next++, jobs, t, c, win, wstride), live++;
  }
  while (live) {
    float h0[PT_LANES], dh[PT_LANES], nfx[PT_LANES], nfy[PT_LANES], ea[PT_LANES];
    int32_t nix[PT_LANES], niy[PT_LANES], rnd[PT_LANES], dep[PT_LANES], where[PT_LANES];
    int64_t u[PT_LANES], on[4][PT_LANES];
    /* the sample at the position, the turn (pt_step) */
#pragma omp simd simdlen(PT_LANES)
    for (int l = 0; l < PT_LANES; l++) {
      int32_t i = (g->iy[l] - by) * p + (g->ix[l] - bx);
      float a0 = pt_plus_own(B[i], g->own[0][l]), a1 = pt_plus_own(B[i + 1], g->own[1][l]);
      float a2 = pt_plus_own(B[i + p], g->own[2][l]), a3 = pt_plus_own(B[i + p + 1], g->own[3][l]);
      float gx, gy, nx, ny;
      pt_grad(a0, a1, a2, a3, g->fx[l], g->fy[l], &gx, &gy);
      h0[l] = pt_lerp(a0, a1, a2, a3, g->fx[l], g->fy[l]);
      float len = pt_turn(P, g->dx[l], g->dy[l], gx, gy, &nx, &ny);
      rnd[l] = !(len > 1e-12f);
      g->dx[l] = rnd[l] ? g->dx[l] : nx / len, g->dy[l] = rnd[l] ? g->dy[l] : ny / len;
    }
    for (int l = 0; l < PT_LANES; l++)
      if (rnd[l] && g->job[l] >= 0)
        pt_random_dir(jobs[g->job[l]].o + (uint32_t)g->m[l] * 0x9E3779B9u, &g->dx[l], &g->dy[l]);
#pragma omp simd simdlen(PT_LANES)
    for (int l = 0; l < PT_LANES; l++) {
      nix[l] = pt_moved1(g->ix[l], g->fx[l], g->dx[l], &nfx[l]);
      niy[l] = pt_moved1(g->iy[l], g->fy[l], g->dy[l], &nfy[l]);
    }
    /* where it may go: the river it stands in (pt_gang_river, ending 4:
     * pt_died hands its load over), else pt_where_in: its end, or the
     * next cell's lines (the turn above changed only its direction) */
    for (int l = 0; l < PT_LANES; l++) {
      where[l] = -1; /* idle */
      if (g->job[l] < 0) continue;
      where[l] = pt_gang_river(t, P, g, l) ? 4 : pt_where_in(t, c, nix[l], niy[l], in);
      if (where[l] == 1 && P->outflow_water) {
        jobs[g->job[l]].out = (double)g->s[l] * (1.0 / PT_UNIT);
        g->s[l] = 0;
      }
    }
    /* the own changes and the sample at the next position, the choice */
    for (int l = 0; l < PT_LANES; l++) { /* int64 loads by lane: no 64-bit gathers in 256 bits */
      int go = where[l] == 0;
      int32_t o = g->wo[l] + ((go ? niy[l] : g->iy[l]) - by) * ws + ((go ? nix[l] : g->ix[l]) - bx);
      on[0][l] = win[o], on[1][l] = win[o + 1], on[2][l] = win[o + ws], on[3][l] = win[o + ws + 1];
    }
#pragma omp simd simdlen(PT_LANES)
    for (int l = 0; l < PT_LANES; l++) {
      int go = where[l] == 0;
      int32_t i = ((go ? niy[l] : g->iy[l]) - by) * p + ((go ? nix[l] : g->ix[l]) - bx);
      int64_t o0 = on[0][l], o1 = on[1][l], o2 = on[2][l], o3 = on[3][l];
      float a0 = pt_plus_own(B[i], o0), a1 = pt_plus_own(B[i + 1], o1);
      float a2 = pt_plus_own(B[i + p], o2), a3 = pt_plus_own(B[i + p + 1], o3);
      dh[l] = pt_lerp(a0, a1, a2, a3, nfx[l], nfy[l]) - h0[l];
      float amt;
      dep[l] = pt_choice(P, g->s[l], g->v[l], g->w[l], dh[l], &u[l], &amt);
      ea[l] = amt;
    }
    if (H) { /* pt_erodible: the bilinear hardness at the position */
#pragma omp simd simdlen(PT_LANES)
      for (int l = 0; l < PT_LANES; l++) {
        int32_t i = (g->iy[l] - by) * p + (g->ix[l] - bx);
        ea[l] =
            ea[l] * (1.0f - pt_lerp(H[i], H[i + 1], H[i + p], H[i + p + 1], g->fx[l], g->fy[l]));
      }
    } else {
#pragma omp simd simdlen(PT_LANES)
      for (int l = 0; l < PT_LANES; l++)
        ea[l] = ea[l] * (1.0f - P->hardness);
    }
    /* the exchange (pt_exchange), per lane: its writes */
    for (int l = 0; l < PT_LANES; l++) {
      if (where[l]) continue;
      pt_drop *d = &g->d[l];
      d->ix = g->ix[l], d->iy = g->iy[l], d->fx = g->fx[l], d->fy = g->fy[l], d->s = g->s[l];
      int n0 = d->n;
      if (dep[l])
        pt_deposit(d, t, u[l], 0, 0);
      else if (ea[l] > 0.0f)
        pt_erode(d, t, c, (int64_t)((double)ea[l] * PT_UNIT), 0);
      g->s[l] = d->s;
      dep[l] = d->n > n0; /* from here: an event, whose shares the next cell's own changes gain */
      pt_prefetch(t, c, nix[l], niy[l], 0); /* for its next move, a gang's move ahead */
    }
    /* the own changes after the exchange, speed, water, the move */
    for (int l = 0; l < PT_LANES; l++) {
      int32_t o = g->wo[l] + (niy[l] - by) * ws + (nix[l] - bx);
      if (where[l] == 0 && dep[l])
        on[0][l] = win[o], on[1][l] = win[o + 1], on[2][l] = win[o + ws],
        on[3][l] = win[o + ws + 1];
      if (where[l] == 0)
        for (int k = 0; k < 4; k++)
          g->own[k][l] = on[k][l];
    }
#pragma omp simd simdlen(PT_LANES)
    for (int l = 0; l < PT_LANES; l++) { /* selects, not branches: lanes that ended keep theirs */
      int go = where[l] == 0;
      float v = pt_speed(P, g->v[l], dh[l]), w = pt_water(P, g->w[l]);
      g->v[l] = go ? v : g->v[l], g->w[l] = go ? w : g->w[l];
      g->ix[l] = go ? nix[l] : g->ix[l], g->iy[l] = go ? niy[l] : g->iy[l];
      g->fx[l] = go ? nfx[l] : g->fx[l], g->fy[l] = go ? nfy[l] : g->fy[l];
      g->m[l] += go;
    }
    /* the lanes whose droplet ended: pt_died, the next droplet */
    for (int l = 0; l < PT_LANES; l++) {
      if (where[l] < 0 || (where[l] == 0 && g->m[l] < P->pt_max_moves)) continue;
      pt_drop *d = &g->d[l];
      double fl[TALUS_FLOW_COUNT] = {0};
      d->ix = g->ix[l], d->iy = g->iy[l], d->fx = g->fx[l], d->fy = g->fy[l], d->s = g->s[l];
      pt_died(d, t, c, where[l], fl);
      jobs[g->job[l]].lost = fl[TALUS_FLOW_PT_LOST];
      jobs[g->job[l]].ero = fl[TALUS_FLOW_PT_EROSION],
      jobs[g->job[l]].dep = fl[TALUS_FLOW_PT_DEPOSIT];
      g->job[l] = -1;
      if (next < n)
        pt_gang_start(g, l, next++, jobs, t, c, win, wstride);
      else
        live--;
    }
  }
}
#endif

/* pt_apply's river total: adds `R` units of droplet load to the suspended
 * sediment t->r of column ci (the pipes carry it on, or settle it, by
 * their capacity), booked as PT_RIVER (sediment → sediment: nothing is
 * created or lost) and its float rounding (PT_RIVER_ROUNDING). */
TALUS_HD static inline void pt_apply_river(const talus_tile *t, size_t ci, int64_t R,
                                           double *flows) {
  if (!R) return;
  double exact = (double)R * (1.0 / PT_UNIT);
  float r = t->r[ci], rn = (float)((double)r + exact);
  t->r[ci] = rn;
  flows[TALUS_FLOW_PT_RIVER] += exact;
  flows[TALUS_FLOW_PT_RIVER_ROUND] += ((double)rn - (double)r) - exact;
}

/* pt_apply on layered column k of the cell at idx, with `carry` units of
 * erosion the column above could not give: deposits fill its sand up to
 * the free room; erosion takes sand, then bedrock down to its floor (the
 * ceiling of column k − 1). Each droplet took no more than a column had
 * above its floor + support.min_bedrock (pt_take), so the floor limit
 * refuses nothing a droplet carried; only where several droplets of the
 * batch took the same node's last sand and rock does their sum reach
 * into the roof's last support.min_bedrock (which the support check then
 * lets collapse), and past the floor into column k − 1 (returned: its
 * carry; column 0 has no floor). What a ceiling refuses to deposit is
 * booked (PT_CLAMP, sediment → outside), as is the float rounding. */
TALUS_HD static inline int64_t pt_apply_column(const talus_tile *t, size_t idx, int k,
                                               int64_t carry, int river, double *flows) {
  int64_t E = t->pt_acc[pt_plane(t, PT_TOTAL_EROSION, k) + idx] + carry;
  int64_t D = t->pt_acc[pt_plane(t, PT_TOTAL_DEPOSIT, k) + idx];
  size_t ci = talus_col(t, idx, k);
  if (river) pt_apply_river(t, ci, t->pt_acc[pt_plane(t, PT_TOTAL_RIVER, k) + idx], flows);
  if (!E && !D) return 0;
  float s = t->s[ci], B = t->B[ci], C = t->C[ci];
  int64_t dep = D;
  if (C < TALUS_TOP) {
    int64_t room = pt_units((double)C - (double)B - (double)s - (double)t->w[ci]);
    dep = D < room ? D : room;
  }
  int64_t sand = pt_units(s) + dep, take_s = E < sand ? E : sand, take_b = E - take_s;
  if (k > 0) {
    int64_t room = pt_units((double)B - (double)t->C[ci - t->plane]);
    take_b = take_b < room ? take_b : room;
  }
  float sn = (float)((double)s + (double)(dep - take_s) * (1.0 / PT_UNIT));
  float bn = (float)((double)B - (double)take_b * (1.0 / PT_UNIT));
  t->s[ci] = sn, t->B[ci] = bn;
  flows[TALUS_FLOW_PT_SAND_DEPOSIT] += (double)dep * (1.0 / PT_UNIT);
  flows[TALUS_FLOW_PT_SAND_EROSION] += (double)take_s * (1.0 / PT_UNIT);
  flows[TALUS_FLOW_PT_EROSION] += (double)take_b * (1.0 / PT_UNIT);
  flows[TALUS_FLOW_PT_CLAMP] -= (double)(D - dep) * (1.0 / PT_UNIT);
  flows[TALUS_FLOW_PT_SAND_ROUNDING] +=
      ((double)sn - (double)s) - (double)(dep - take_s) * (1.0 / PT_UNIT);
  flows[TALUS_FLOW_PT_ROUNDING] += ((double)bn - (double)B) + (double)take_b * (1.0 / PT_UNIT);
  return E - take_s - take_b;
}

/* pt_apply on the heightfield cell at idx with its net erosion and river
 * totals N and R (read by the caller: k_pt_apply, or the CPU's row loop
 * with the planes' rows at hand): the river total first, then the height
 * and its float rounding, booked in that order (what the droplets took
 * and laid they booked themselves: pt_died). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_apply_hf(const talus_tile *t, size_t idx,
                                                           int64_t N, int64_t R, double *flows) {
  pt_apply_river(t, idx, R, flows);
  if (!N) return;
  double exact = (double)(-N) * (1.0 / PT_UNIT);
  float b = t->B[idx], bn = (float)((double)b + exact);
  t->B[idx] = bn;
  flows[TALUS_FLOW_PT_ROUNDING] += ((double)bn - (double)b) - exact;
}

/* pt_apply on the heightfield cell at idx: its totals read from their
 * planes (pt_apply_hf), the river plane only when `river` (pt_river_on). */
TALUS_HD static inline TALUS_FORCE_INLINE void pt_apply_hf_at(const talus_tile *t, size_t idx,
                                                              int river, double *flows) {
  pt_apply_hf(t, idx, t->pt_acc[pt_plane(t, PT_TOTAL_EROSION, 0) + idx],
              river ? t->pt_acc[pt_plane(t, PT_TOTAL_RIVER, 0) + idx] : 0, flows);
}

/* pt_apply on a heightfield cell (x, y) (pt_apply_hf_at). The CPU runs
 * heightfield rows with the river's test made once (CPU_STAGE_LOOP_PT_APPLY). */
TALUS_HD static inline TALUS_FORCE_INLINE void
k_pt_apply_hf(const talus_tile *t, const talus_kctx *c, int x, int y, double *flows) {
  pt_apply_hf_at(t, talus_idx(t, x, y), pt_river_on(&c->P), flows);
}

/* Stage pt_apply: the cell's totals change its height once (on layered
 * stacks, each column's sand and bedrock: pt_apply_column) and its river
 * total its suspended sediment (pt_apply_river); the float rounding
 * against the exact change is booked. */
TALUS_HD static inline void k_pt_apply(const talus_tile *t, const talus_kctx *c, int x, int y,
                                       double *flows) {
  if (c->P.model != TALUS_MODEL_LAYERED) {
    k_pt_apply_hf(t, c, x, y, flows);
    return;
  }
  size_t idx = talus_idx(t, x, y);
  int64_t carry = 0; /* top-down: what a roof could not give comes from the column below */
  int river = pt_river_on(&c->P);
  for (int k = t->count[idx] - 1; k >= 0; k--)
    carry = pt_apply_column(t, idx, k, carry, river, flows);
}

#endif /* TALUS_KERNELS_PARTICLES_H */
