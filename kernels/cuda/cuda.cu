/*
 * cuda.cu — the CUDA backend (see cuda.h): device mirror of one tile,
 * stage launches over the shared k_* bodies, deterministic ledger sums.
 *
 * Every CUDA error is converted to a talus_status here and nowhere else
 * (cuda_ok). The backend's state is one process-wide struct because the
 * device and its buffers are per process (one GPU per rank); it is only
 * touched by the driver thread.
 *
 * Slots: TALUS_CUDA_SLOTS device mirrors, each with its own stream, so a
 * tiled run uploads the next tile while the current one computes (see
 * cuda.h). Calls act on the slot picked by talus_cuda_use_slot.
 *
 * Resident tiles (talus_cuda_resident_*): a table of tiles whose
 * persistent arrays stay on the device for a whole tiled run. A slot
 * advances one by borrowing its arrays (resident_bind: the slot's own
 * persistent arrays are freed, its scratch stays), so the stages, the
 * ledger and the block packing below see a bound slot exactly as an
 * uploaded one. Strips move between resident tiles by one copy kernel
 * (strip_copy), never through the host.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C headers of the library (common.h, the kernels) carry no C++
 * linkage guards of their own. */
extern "C" {
#include "cuda.h"

#include "kernels/bodies.h"
#include "halo/block.h"
}

namespace {

constexpr int BLOCK_X = 32; /* one warp per row of the block: coalesced rows */
constexpr int BLOCK_Y = 8;
/* Events of one step's plan plus its end. A slot holds STEP_BATCH steps
 * of events and ledger rows; a longer queue is harvested at a step's end. */
constexpr int STEP_EVENTS = 4 * TALUS_STAGE_COUNT + 2 * 64 + 1;
constexpr int STEP_BATCH = 8;
constexpr int EVENTS_MAX = STEP_BATCH * STEP_EVENTS;
constexpr int STEP_END = -1; /* the event that closes a step's last stage */

/* A field of talus_tile the mirror carries: bytes per cell (per layer when
 * layered) in `planes` planes per layer (the four directions of f, pipe,
 * slip, dpipe, dslip); persistent fields travel, scratch fields live on the
 * device. */
struct field_decl {
  size_t offset;
  size_t cell_bytes;
  int planes;
  bool layered;
  bool persistent;
};

#define FIELD(m, bytes, planes, layered, persistent)                                               \
  { offsetof(talus_tile, m), bytes, planes, layered, persistent }
const field_decl fields[] = {
    FIELD(count, 1, 1, false, true),  FIELD(mask, 1, 1, false, true),
    FIELD(B, 4, 1, true, true),       FIELD(s, 4, 1, true, true),
    FIELD(w, 4, 1, true, true),       FIELD(C, 4, 1, true, true),
    FIELD(r, 4, 1, true, true),       FIELD(D, 4, 1, true, true),
    FIELD(p, 4, 1, true, true),       FIELD(f, 16, 4, true, true),
    FIELD(hard, 4, 1, false, true),   FIELD(rain, 4, 1, false, true),
    FIELD(grade_in, 4, 1, false, true),
    FIELD(acc, 4 * TALUS_ACC_PLANES, TALUS_ACC_PLANES, false, true),
    FIELD(fd, 16, 4, false, true),
    FIELD(pipe, 4, 4, true, false),   FIELD(slip, 16, 4, true, false),
    FIELD(kr, 4, 1, true, false),     FIELD(sina, 4, 1, true, false),
    FIELD(vx, 4, 1, true, false),     FIELD(vy, 4, 1, true, false),
    FIELD(sig_lo, 4, 1, true, false), FIELD(sig_hi, 4, 1, true, false),
    FIELD(dpipe, 4, 4, true, false),  FIELD(dslip, 16, 4, true, false),
};
#undef FIELD

void *&member(talus_tile *t, size_t offset) {
  return *(void **)((char *)t + offset);
}
const void *member(const talus_tile *t, size_t offset) {
  return *(void *const *)((const char *)t + offset);
}

/* One device mirror and its stream. Each queued step books its ledger
 * flows into a device row of its own (rows[nrows]); a harvest waits for
 * the stream, then adds the rows in step order to acc_flows and the stage
 * times to acc_seconds, exactly as a wait after every step would. */
struct slot {
  talus_tile d;       /* the mirror: host struct, device arrays; its persistent arrays are
                       * the slot's own, or a resident tile's while borrowed */
  bool borrowed;      /* d's persistent arrays belong to a resident tile (resident_bind) */
  size_t alloc_plane; /* plane and nz the arrays were sized for */
  int alloc_nz;
  double *rows;    /* device [STEP_BATCH][TALUS_FLOW_COUNT] per-step flows */
  double *partial; /* device [TALUS_FLOW_COUNT * blocks] block sums */
  size_t partial_blocks;
  cudaStream_t stream;
  cudaEvent_t events[EVENTS_MAX];
  int event_stage[EVENTS_MAX]; /* the stage an event starts, or STEP_END */
  int queued;                  /* events recorded since the last harvest */
  int nrows;                   /* steps ended since the last harvest */
  double acc_flows[TALUS_FLOW_COUNT];
  double acc_seconds[TALUS_STAGE_COUNT];
  unsigned char *pack;      /* device staging of packed halo blocks */
  unsigned char *pack_host; /* pinned host copy of pack */
  size_t pack_bytes;
  int *layers;      /* device [TALUS_HALO_PARTS] column maxima of the blocks */
  unsigned *spawns; /* device pt_trace's spawn list: [0, rows] row starts, then the cells */
  size_t spawns_cap;
};

/* Host arrays pinned by talus_cuda_pin (two tile buffers' worth). */
constexpr int PINNED_MAX = 2 * (int)(sizeof fields / sizeof fields[0]);

/* The backend's one state. Concurrency: only the driver thread touches
 * it. A resident tile is written on the device by the one slot bound to
 * it (the tiler never binds a tile to two slots at once) and by the strip
 * copies of an exchange, which the tiler queues on one slot while no
 * slot has work in flight and which the other slots wait for
 * (talus_cuda_fence) before their next stage. */
struct backend {
  bool ready;
  int device;
  int pt_blocks; /* pt_trace_list's grid: one wave of resident blocks (set at init) */
  char name[256];
  slot s[TALUS_CUDA_SLOTS];
  int cur; /* the slot the calls act on */
  void *pinned[PINNED_MAX];
  talus_tile *res; /* [nres] resident tiles: host structs, device persistent arrays */
  int nres;
  cudaEvent_t fence; /* talus_cuda_fence: the other slots wait for it */
};
backend G;

/* The slot the calls act on. */
slot &cur() {
  return G.s[G.cur];
}

/* The one conversion of CUDA errors into talus statuses. */
talus_status cuda_ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return TALUS_OK;
  return talus_fail(TALUS_ERR_DEVICE, "cuda", "%s: %s", what, cudaGetErrorString(e));
}

/* Owns the rule that queued work needs talus_cuda_init first (only the
 * caller knows the local rank that picks the device). */
talus_status need_init(const char *what) {
  if (G.ready) return TALUS_OK;
  return talus_fail(TALUS_ERR_INTERNAL, "cuda", "%s before talus_cuda_init", what);
}

size_t field_bytes(const field_decl &f, size_t plane, int nz) {
  return f.cell_bytes * plane * (f.layered ? (size_t)nz : 1u);
}

/* Frees the device arrays of one group of d: the persistent fields, or
 * the scratch fields with the lazily allocated ones. */
void free_group(talus_tile &d, bool persistent) {
  for (const field_decl &f : fields)
    if (f.persistent == persistent) {
      cudaFree(member(&d, f.offset));
      member(&d, f.offset) = nullptr;
    }
  if (persistent) return;
  void **lazy[] = {(void **)&d.thermal, (void **)&d.hf_cap, (void **)&d.hf_sed, (void **)&d.nb8,
                   (void **)&d.pt_acc,  (void **)&d.acc_s0, (void **)&d.qin};
  for (void **p : lazy) {
    cudaFree(*p);
    *p = nullptr;
  }
}

/* Allocates one group of d's device arrays for t's plane and nz: the
 * persistent fields t has, or every scratch field. Nothing on failure. */
talus_status alloc_group(talus_tile &d, const talus_tile *t, bool persistent) {
  for (const field_decl &f : fields) {
    if (f.persistent != persistent || (persistent && !member(t, f.offset))) continue;
    void *p = nullptr;
    talus_status st = cuda_ok(cudaMalloc(&p, field_bytes(f, t->plane, t->nz)), "device tile");
    if (st) {
      free_group(d, persistent);
      return st;
    }
    member(&d, f.offset) = p;
  }
  return TALUS_OK;
}

/* Forgets the resident tile's arrays q borrows (they stay the tile's). */
void unbind(slot &q) {
  if (!q.borrowed) return;
  for (const field_decl &f : fields)
    if (f.persistent) member(&q.d, f.offset) = nullptr;
  q.borrowed = false;
}

void free_arrays(slot &q) {
  if (q.borrowed)
    unbind(q);
  else
    free_group(q.d, true);
  free_group(q.d, false);
  q.alloc_plane = 0;
  q.alloc_nz = 0;
}

/* Sizes q's mirror for t: the fields t has (optional ones only if t has
 * them), scratch always. Reuses the allocation when it matches; a slot
 * bound to a resident tile gets arrays of its own again. */
talus_status alloc_arrays(slot &q, const talus_tile *t) {
  if (q.borrowed) free_arrays(q);
  bool same = q.alloc_plane == t->plane && q.alloc_nz == t->nz;
  for (const field_decl &f : fields)
    same = same && (!f.persistent ||
                    (member(t, f.offset) != nullptr) == (member(&q.d, f.offset) != nullptr));
  if (same) return TALUS_OK;
  free_arrays(q);
  talus_status st = alloc_group(q.d, t, true);
  if (!st) st = alloc_group(q.d, t, false);
  if (st) {
    free_arrays(q);
    return st;
  }
  q.alloc_plane = t->plane;
  q.alloc_nz = t->nz;
  return TALUS_OK;
}

/* The lazily allocated scratch of stage id on q's mirror (zeroed, as
 * talus_tile_ensure does on the host), sized for any parameters (the
 * needs of P NULL): a slot outlives the run whose stage allocated it, and
 * the next run's droplets may write more planes (scratch_cell_bytes
 * counts the same). */
talus_status ensure_scratch(slot &q, talus_stage_id id) {
  talus_scratch_need need[TALUS_SCRATCH_NEEDS_MAX];
  int n = talus_stage_scratch_needs(id, NULL, need);
  for (int i = 0; i < n; i++) {
    void *&p = member(&q.d, need[i].offset);
    if (p) continue;
    size_t bytes = talus_scratch_bytes(&need[i], q.alloc_nz) * q.alloc_plane;
    talus_status st = cuda_ok(cudaMalloc(&p, bytes), need[i].what);
    if (!st) st = cuda_ok(cudaMemsetAsync(p, 0, bytes, q.stream), need[i].what);
    if (st) return st;
  }
  return TALUS_OK;
}

/* Frees a buffer of q that grow_buffer sized (*cap units). */
template <typename T> void free_buffer(T *&p, size_t &cap) {
  cudaFree(p);
  p = nullptr;
  cap = 0;
}

/* Grows q's device buffer p to hold n units of `unit` elements (cap: the
 * units it holds); nothing when it holds them. */
template <typename T>
talus_status grow_buffer(slot &q, T *&p, size_t &cap, size_t n, size_t unit, const char *what) {
  if (n <= cap) return TALUS_OK;
  /* The old buffer may still be read by queued work of this slot. */
  talus_status st = cuda_ok(cudaStreamSynchronize(q.stream), what);
  free_buffer(p, cap);
  if (!st) st = cuda_ok(cudaMalloc(&p, n * unit * sizeof(T)), what);
  if (!st) cap = n;
  return st;
}

talus_status ensure_partial(slot &q, size_t blocks) {
  return grow_buffer(q, q.partial, q.partial_blocks, blocks, TALUS_FLOW_COUNT, "ledger block sums");
}

/* Sums the block's booked flows: each warp by a fixed shuffle tree, then
 * the warps in order; writes partial[f * nblocks + block]. Every thread of
 * the block must call it (no early returns before). */
__device__ void block_flows(const double *acc, double *partial, int nblocks) {
  __shared__ double warp_sums[BLOCK_Y][TALUS_FLOW_COUNT];
  const unsigned full = 0xffffffffu;
#pragma unroll
  for (int f = 0; f < TALUS_FLOW_COUNT; f++) {
    double v = acc[f];
    if (__any_sync(full, v != 0.0))
      for (int o = BLOCK_X / 2; o > 0; o >>= 1)
        v += __shfl_down_sync(full, v, o);
    if (threadIdx.x == 0) warp_sums[threadIdx.y][f] = v;
  }
  __syncthreads();
  for (int f = threadIdx.x; threadIdx.y == 0 && f < TALUS_FLOW_COUNT; f += BLOCK_X) {
    double s = 0.0;
    for (int w = 0; w < BLOCK_Y; w++)
      s += warp_sums[w][f];
    partial[(size_t)f * nblocks + blockIdx.y * gridDim.x + blockIdx.x] = s;
  }
}

typedef void (*stage_body)(const talus_tile *, const talus_kctx *, int, int, double *);

/* Stages whose bodies book no ledger flow (their flows argument is
 * unused): their kernels skip the block sums and the host queues no
 * flows_reduce after them. Leaving that out changes no byte of the
 * ledger: a step's row starts at +0.0 and only ever gains sums, so it is
 * never -0.0, and adding the +0.0 such a stage's blocks would sum to is
 * the identity. A body listed here that booked a flow would stop the
 * kernel (__trap, an error at the next wait), never drop it silently. */
constexpr bool stage_books(talus_stage_id id) {
  return !(id == TALUS_STAGE_PIPES || id == TALUS_STAGE_HORIZONTAL ||
           id == TALUS_STAGE_SUPPORT_INIT || id == TALUS_STAGE_SUPPORT_RED ||
           id == TALUS_STAGE_SUPPORT_BLACK || id == TALUS_STAGE_THERMAL_OUT ||
           id == TALUS_STAGE_HF_FLUX || id == TALUS_STAGE_HF_SETTLE || id == TALUS_STAGE_PT_CLEAR ||
           id == TALUS_STAGE_INFLOW);
}

/* The cells a stage's body updates: 1 those with global (gx + gy) odd (the
 * red half-sweep), 0 even (black), -1 all. A half-sweep's kernel gets
 * threads only for its cells (support.h, "Parity"); its body still tests
 * the parity, which then always holds. */
constexpr int stage_parity(talus_stage_id id) {
  return id == TALUS_STAGE_SUPPORT_RED ? 1 : id == TALUS_STAGE_SUPPORT_BLACK ? 0 : -1;
}

/* One thread per cell of `region` (PARITY -1), or per cell of one parity
 * (PARITY 1 odd, 0 even, from global coordinates: thread column i of row
 * y is the i-th such cell from the region's left edge); the body is the
 * CPU backend's. MINB resident blocks per SM bound its registers (the
 * CUDA_MINB column of stages.def). BOOKS: the body books flows, summed per
 * block into partial (see stage_books). */
template <stage_body BODY, int MINB, bool BOOKS, int PARITY>
__global__ void __launch_bounds__(BLOCK_X *BLOCK_Y, MINB)
    stage_kernel(talus_tile t, talus_kctx c, talus_rect region, talus_rect book, double *partial) {
  int i = (int)(blockIdx.x * BLOCK_X + threadIdx.x);
  int y = region.y0 + (int)(blockIdx.y * BLOCK_Y + threadIdx.y);
  int x = region.x0 + i;
  if (PARITY >= 0) {
    /* 0 when the region's first cell of row y has the wanted parity */
    unsigned first =
        ((uint32_t)(t.buf.x0 + region.x0) + (uint32_t)(t.buf.y0 + y) + (uint32_t)PARITY) & 1u;
    x = region.x0 + (int)first + 2 * i;
  }
  bool inside = x < region.x0 + region.w && y < region.y0 + region.h;
  double acc[TALUS_FLOW_COUNT];
#pragma unroll
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    acc[f] = 0.0;
  if (!BOOKS) {
    if (!inside) return;
    BODY(&t, &c, x, y, acc);
#pragma unroll
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      if (acc[f] != 0.0) __trap(); /* folded away: the body does not touch acc */
    return;
  }
  if (inside) {
    BODY(&t, &c, x, y, acc);
    bool booked = x >= book.x0 && x < book.x0 + book.w && y >= book.y0 && y < book.y0 + book.h;
    if (!booked)
#pragma unroll
      for (int f = 0; f < TALUS_FLOW_COUNT; f++)
        acc[f] = 0.0;
  }
  block_flows(acc, partial, (int)(gridDim.x * gridDim.y));
}

/* flows[f] += the block sums of flow f in block order (one block per flow,
 * a fixed stride and tree: the same bytes every run). */
__global__ void flows_reduce(const double *partial, int nblocks, double *flows) {
  __shared__ double sh[256];
  int f = blockIdx.x;
  double s = 0.0;
  for (int b = threadIdx.x; b < nblocks; b += 256)
    s += partial[(size_t)f * nblocks + b];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int o = 128; o > 0; o >>= 1) {
    if ((int)threadIdx.x < o) sh[threadIdx.x] += sh[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) flows[f] += sh[0];
}

/* Queues stage_kernel<BODY, MINB, BOOKS, PARITY> over region and, when
 * the body books flows, the reduction of its booked flows into the slot's
 * current ledger row; owns the grid shape and the block-sum buffer's size.
 * MINB is the stage's CUDA_MINB column of stages.def (why it is not 1 for
 * some stages is written there); BOOKS and PARITY as stage_books and
 * stage_parity say. */
template <stage_body BODY, int MINB, bool BOOKS, int PARITY>
talus_status launch(const talus_kctx *c, talus_rect region, talus_rect book) {
  int columns = PARITY >= 0 ? (region.w + 1) / 2 : region.w; /* threads per row */
  dim3 block(BLOCK_X, BLOCK_Y);
  dim3 grid((unsigned)((columns + BLOCK_X - 1) / BLOCK_X),
            (unsigned)((region.h + BLOCK_Y - 1) / BLOCK_Y));
  size_t nblocks = (size_t)grid.x * grid.y;
  slot &q = cur();
  if (!BOOKS) {
    stage_kernel<BODY, MINB, BOOKS, PARITY>
        <<<grid, block, 0, q.stream>>>(q.d, *c, region, book, nullptr);
    return cuda_ok(cudaGetLastError(), "stage launch");
  }
  talus_status st = ensure_partial(q, nblocks);
  if (st) return st;
  stage_kernel<BODY, MINB, BOOKS, PARITY>
      <<<grid, block, 0, q.stream>>>(q.d, *c, region, book, q.partial);
  double *row = q.rows + (size_t)q.nrows * TALUS_FLOW_COUNT;
  flows_reduce<<<TALUS_FLOW_COUNT, 256, 0, q.stream>>>(q.partial, (int)nblocks, row);
  return cuda_ok(cudaGetLastError(), "stage launch");
}

/* ---------------------------------------------------------------------
 * Droplets (pt_trace) from a spawn list. The hash spawns one droplet in
 * 2^density_log2 cells, so a thread per cell left 31 of a warp's 32 lanes
 * idle while its one droplet walked its path (at 8192², 285 ms a batch,
 * 12 % occupancy, 2 % of DRAM: ncu 2026-11-27). Instead: the spawn cells
 * of the region are listed in row-major order (a warp per row, ballots,
 * a scan of the rows' counts), then one wave of threads walks the list
 * with a fixed stride (pt_trace_list says which thread takes which
 * droplet). At 8192² the batch's 262 144 droplets took 44 ms instead of
 * 286 (H200, 2026-11-27, the list read in order by blocks of consecutive
 * droplets; the order now used is not yet timed). Droplets of a batch do not
 * see each other (particles.h) and scatter by integer atomics, so which
 * thread runs a droplet changes no height; the list's order and the fixed
 * stride keep the ledger's block sums in the same order every run.
 * ------------------------------------------------------------------- */

/* Bit 1 when cell (x, y) spawns a droplet this step, else 0 (pt_spawn). */
__device__ unsigned pt_spawns_at(const talus_tile &t, const talus_kctx &c, int x, int y) {
  uint32_t o;
  return (unsigned)pt_spawn(&t, &c, x, y, &o);
}

/* Pass 0: rows[r] = the spawn cells of region row r. Pass 1: writes row
 * r's cells (their region-local index) from list[rows[r]] on, in x
 * order. A warp per row (threadIdx.y), lanes over x. */
template <int PASS>
__global__ void pt_spawn_rows(talus_tile t, talus_kctx c, talus_rect region, unsigned *rows,
                              unsigned *list) {
  int r = (int)(blockIdx.x * BLOCK_Y + threadIdx.y), lane = (int)threadIdx.x;
  if (r >= region.h) return; /* whole warps: region.h rows of BLOCK_X lanes */
  unsigned n = PASS ? rows[r] : 0u;
  for (int x0 = 0; x0 < region.w; x0 += BLOCK_X) {
    int x = x0 + lane;
    unsigned hit = x < region.w ? pt_spawns_at(t, c, region.x0 + x, region.y0 + r) : 0u;
    unsigned ballot = __ballot_sync(0xffffffffu, hit);
    if (PASS && hit)
      list[n + (unsigned)__popc(ballot & ((1u << lane) - 1u))] = (unsigned)r * region.w + x;
    n += (unsigned)__popc(ballot);
  }
  if (!PASS && lane == 0) rows[r] = n;
}

/* rows[0..n) counts → exclusive starts, rows[n] = the total; one block of
 * 1024 threads, each over a contiguous run of rows. */
__global__ void pt_spawn_scan(unsigned *rows, int n) {
  __shared__ unsigned sums[1024];
  int per = (n + 1023) / 1024, a = (int)threadIdx.x * per, b = min(a + per, n);
  unsigned s = 0;
  for (int i = a; i < b; i++)
    s += rows[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int o = 1; o < 1024; o <<= 1) { /* inclusive scan of the runs' sums */
    unsigned v = threadIdx.x >= (unsigned)o ? sums[threadIdx.x - o] : 0u;
    __syncthreads();
    sums[threadIdx.x] += v;
    __syncthreads();
  }
  unsigned run = threadIdx.x ? sums[threadIdx.x - 1] : 0u;
  for (int i = a; i < b; i++) {
    unsigned v = rows[i];
    rows[i] = run;
    run += v;
  }
  if (threadIdx.x == 1023) rows[n] = sums[1023];
}

/* The droplets of the list (list[0..*total)); flows booked by spawn
 * cells inside book, summed per block as stage_kernel does. Droplet j
 * goes to block j mod B, then to the block's warps, then to their lanes
 * (B = gridDim.x, one wave of resident blocks): a batch of fewer droplets
 * than warps runs one droplet per warp, as many warps apart as it can
 * (a warp's lanes walk their paths in lock step, so 32 droplets in one
 * warp take as long as the slowest, with their branches in turn), and a
 * large batch fills every lane. Two blocks a multiprocessor (128
 * registers, not 152): 53.8 -> 46.6 ms a batch at 8192² (H100,
 * 2026-11-28; 3 and 4 blocks, 80 and 64 registers, 47.7 and 46.6 ms:
 * the droplets wait on their tables in local memory, not on registers). */
#define PT_TRACE_MINB 2
__global__ void __launch_bounds__(BLOCK_X *BLOCK_Y, PT_TRACE_MINB)
    pt_trace_list(talus_tile t, talus_kctx c, talus_rect region, talus_rect book,
                  const unsigned *total, const unsigned *list, double *partial) {
  unsigned stride = gridDim.x * BLOCK_X * BLOCK_Y;
  unsigned j = blockIdx.x + gridDim.x * (threadIdx.y + BLOCK_Y * threadIdx.x);
  double acc[TALUS_FLOW_COUNT], one[TALUS_FLOW_COUNT];
#pragma unroll
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    acc[f] = 0.0;
  for (unsigned n = *total; j < n; j += stride) {
    int x = region.x0 + (int)(list[j] % (unsigned)region.w);
    int y = region.y0 + (int)(list[j] / (unsigned)region.w);
#pragma unroll
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      one[f] = 0.0;
    k_pt_trace(&t, &c, x, y, one);
    if (x >= book.x0 && x < book.x0 + book.w && y >= book.y0 && y < book.y0 + book.h)
#pragma unroll
      for (int f = 0; f < TALUS_FLOW_COUNT; f++)
        acc[f] += one[f];
  }
  block_flows(acc, partial, (int)gridDim.x);
}

/* Queues pt_trace over the droplets spawned in region (pt_spawn_region of
 * the stage's region): the list, then the droplets, then the ledger row's
 * block sums. Owns q.spawns (grown to the region's rows + 1 + cells: every
 * cell could spawn at density 2^0). */
talus_status launch_pt_trace(const talus_kctx *c, talus_rect region, talus_rect book) {
  slot &q = cur();
  if (region.w <= 0 || region.h <= 0) return TALUS_OK;
  size_t need = (size_t)region.h + 1 + (size_t)region.w * region.h;
  if (need > 0xffffffffu)
    return talus_fail(TALUS_ERR_DEVICE, "cuda", "droplet region of %d x %d cells: too large",
                      region.w, region.h);
  talus_status st = grow_buffer(q, q.spawns, q.spawns_cap, need, 1, "droplet spawn list");
  if (!st) st = ensure_partial(q, (size_t)G.pt_blocks);
  if (st) return st;
  unsigned *rows = q.spawns, *list = q.spawns + region.h + 1;
  dim3 block(BLOCK_X, BLOCK_Y), rgrid((unsigned)((region.h + BLOCK_Y - 1) / BLOCK_Y));
  pt_spawn_rows<0><<<rgrid, block, 0, q.stream>>>(q.d, *c, region, rows, list);
  pt_spawn_scan<<<1, 1024, 0, q.stream>>>(rows, region.h);
  pt_spawn_rows<1><<<rgrid, block, 0, q.stream>>>(q.d, *c, region, rows, list);
  pt_trace_list<<<G.pt_blocks, block, 0, q.stream>>>(q.d, *c, region, book, rows + region.h, list,
                                                     q.partial);
  double *row = q.rows + (size_t)q.nrows * TALUS_FLOW_COUNT;
  flows_reduce<<<TALUS_FLOW_COUNT, 256, 0, q.stream>>>(q.partial, G.pt_blocks, row);
  return cuda_ok(cudaGetLastError(), "droplet launch");
}

/* Queues stage `id`: its BODY with its CUDA_MINB, as its row of
 * stages.def says (pt_trace from its spawn list). */
talus_status launch_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                          talus_rect book) {
  /* pt_trace runs the droplets of its region grown by their reach
   * (pt_spawn_region), one thread per droplet. */
  if (id == TALUS_STAGE_PT_TRACE)
    return launch_pt_trace(c, pt_spawn_region(&cur().d, &c->P, region), book);
  switch (id) {
#define TALUS_STAGE(ID, NAME, RADIUS, BODY, CPU_LOOP, CUDA_MINB)                                   \
  case TALUS_STAGE_##ID:                                                                           \
    return launch<BODY, CUDA_MINB, stage_books(TALUS_STAGE_##ID), stage_parity(TALUS_STAGE_##ID)>( \
        c, region, book);
#include "kernels/stages.def"
#undef TALUS_STAGE
  default:
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "unknown stage %d", (int)id);
  }
}

/* ---------------------------------------------------------------------
 * Halo blocks packed on the device, in the format of halo/block.h (the
 * body that follows the header: count, mask, padding, each layer's planes
 * in block order, hardness, the accumulators; slots at or above a cell's
 * count are 0). The offsets, the plane order and its mapping onto a tile
 * are block.h's; test_gpu checks the bytes against halo_block_cut.
 * ------------------------------------------------------------------- */

/* layers[0] = max(layers[0], the highest count in r); one thread per cell. */
__global__ void block_layers(talus_tile t, talus_rect r, int *layers) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  int v = 1;
  if (i < r.w * r.h)
    v = t.count[talus_idx(&t, r.x0 - t.buf.x0 + i % r.w, r.y0 - t.buf.y0 + i / r.w)];
  for (int o = 16; o > 0; o >>= 1)
    v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) atomicMax(layers, v); /* a maximum: any order gives it */
}

/* The plane of t that block plane f (HALO_PLANE_*) of layer k holds. */
__device__ float *halo_plane_of(const talus_tile &t, int f, int k) {
  return HALO_TILE_PLANE(&t, f, k);
}

/* Writes the body of the block of r with L layers at body; one thread per cell. */
__global__ void block_pack(talus_tile t, talus_rect r, int L, unsigned char *body) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  size_t cells = (size_t)r.w * r.h, planes = halo_body_planes_offset(cells);
  if (i == 0)
    for (size_t b = 2 * cells; b < planes; b++)
      body[b] = 0;
  if (i >= (int)cells) return;
  size_t idx = talus_idx(&t, r.x0 - t.buf.x0 + i % r.w, r.y0 - t.buf.y0 + i / r.w);
  int cnt = t.count[idx];
  body[i] = (unsigned char)cnt;
  body[cells + i] = t.mask[idx];
  float *fl = (float *)(body + planes);
  for (int k = 0; k < L; k++)
    for (int f = 0; f < HALO_FIELDS; f++)
      fl[((size_t)k * HALO_FIELDS + f) * cells + i] = cnt > k ? halo_plane_of(t, f, k)[idx] : 0.0f;
  if (t.hard) fl[(size_t)L * HALO_FIELDS * cells + i] = t.hard[idx];
  int flags = HALO_TILE_FLAGS(&t);
  for (int a = 0; t.acc && a < HALO_ACC_PLANES; a++)
    fl[(size_t)halo_acc_plane(L, flags, a) * cells + i] = t.acc[(size_t)a * t.plane + idx];
  for (int j = 0; t.fd && j < HALO_FDIAG_PLANES; j++)
    fl[(size_t)halo_fdiag_plane(L, flags, j) * cells + i] = t.fd[(size_t)j * t.plane + idx];
}

/* Copies global rectangle r of src's persistent fields into dst (r inside
 * both buffers), one thread per cell, as a cut of r from src pasted into
 * dst with halo_block_paste_fill would: count, mask, hardness, the
 * accumulators, and every
 * layer slot up to dst.nz, those at or above the cell's count written with
 * the value a reset tile holds there. That value is 0: slot 0 lies below
 * every count (counts are 1..nz), and above slot 0 a reset tile holds 0
 * in every plane (halo.c, halo_reset_value). */
__global__ void strip_copy(talus_tile dst, talus_tile src, talus_rect r) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= r.w * r.h) return;
  int x = r.x0 + i % r.w, y = r.y0 + i / r.w;
  size_t si = talus_idx(&src, x - src.buf.x0, y - src.buf.y0);
  size_t di = talus_idx(&dst, x - dst.buf.x0, y - dst.buf.y0);
  int cnt = src.count[si];
  dst.count[di] = (uint8_t)cnt;
  dst.mask[di] = src.mask[si];
  for (int k = 0; k < dst.nz; k++)
    for (int f = 0; f < HALO_FIELDS; f++)
      halo_plane_of(dst, f, k)[di] = cnt > k ? halo_plane_of(src, f, k)[si] : 0.0f;
  if (dst.hard) dst.hard[di] = src.hard[si];
  for (int a = 0; dst.acc && a < HALO_ACC_PLANES; a++)
    dst.acc[(size_t)a * dst.plane + di] = src.acc[(size_t)a * src.plane + si];
  for (int j = 0; dst.fd && j < HALO_FDIAG_PLANES; j++)
    dst.fd[(size_t)j * dst.plane + di] = src.fd[(size_t)j * src.plane + si];
}

void free_pack(slot &q) {
  cudaFree(q.pack);
  cudaFreeHost(q.pack_host);
  q.pack = nullptr;
  q.pack_host = nullptr;
  q.pack_bytes = 0;
}

/* Grows q's pack staging, device and pinned host, to `bytes` (q has
 * nothing in flight). */
talus_status ensure_pack(slot &q, size_t bytes) {
  if (bytes <= q.pack_bytes) return TALUS_OK;
  free_pack(q);
  talus_status st = cuda_ok(cudaMalloc(&q.pack, bytes), "halo block staging");
  if (!st) st = cuda_ok(cudaMallocHost(&q.pack_host, bytes), "pinned halo block staging");
  if (st) {
    free_pack(q);
    return st;
  }
  q.pack_bytes = bytes;
  return TALUS_OK;
}

/* Queues copies of the persistent fields between host tile t and device
 * mirror d (a slot's or a resident tile's) on stream. They run
 * asynchronously where t's arrays are pinned (talus_cuda_pin). */
talus_status queue_persistent(talus_tile &d, talus_tile *t, bool to_device, cudaStream_t stream) {
  for (const field_decl &f : fields) {
    if (!f.persistent || !member(t, f.offset)) continue;
    size_t bytes = field_bytes(f, t->plane, t->nz);
    void *dev = member(&d, f.offset);
    void *host = member(t, f.offset);
    cudaError_t e = to_device ? cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, stream)
                              : cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream);
    talus_status st = cuda_ok(e, to_device ? "upload" : "download");
    if (st) return st;
  }
  return TALUS_OK;
}

/* Waits for q's queued work, then adds its ledger rows in step order and
 * its stage times to the slot's accumulators. */
talus_status harvest(slot &q) {
  double rows[STEP_BATCH][TALUS_FLOW_COUNT];
  size_t bytes = (size_t)q.nrows * sizeof rows[0];
  talus_status st = TALUS_OK;
  if (bytes)
    st = cuda_ok(cudaMemcpyAsync(rows, q.rows, bytes, cudaMemcpyDeviceToHost, q.stream), "ledger");
  if (!st && bytes) st = cuda_ok(cudaMemsetAsync(q.rows, 0, bytes, q.stream), "ledger");
  if (!st) st = cuda_ok(cudaStreamSynchronize(q.stream), "step");
  if (st) return st;
  for (int r = 0; r < q.nrows; r++)
    for (int f = 0; f < TALUS_FLOW_COUNT; f++)
      q.acc_flows[f] += rows[r][f];
  for (int i = 0; i + 1 < q.queued; i++) {
    if (q.event_stage[i] == STEP_END) continue;
    float ms = 0.0f;
    st = cuda_ok(cudaEventElapsedTime(&ms, q.events[i], q.events[i + 1]), "stage time");
    if (st) return st;
    q.acc_seconds[q.event_stage[i]] += 1e-3 * ms;
  }
  q.queued = 0;
  q.nrows = 0;
  return TALUS_OK;
}

talus_status slot_init(slot &q) {
  talus_status st = cuda_ok(cudaStreamCreateWithFlags(&q.stream, cudaStreamNonBlocking), "stream");
  size_t rows = STEP_BATCH * TALUS_FLOW_COUNT * sizeof(double);
  if (!st) st = cuda_ok(cudaMalloc(&q.rows, rows), "ledger");
  if (!st) st = cuda_ok(cudaMemset(q.rows, 0, rows), "ledger");
  for (int i = 0; i < EVENTS_MAX && !st; i++)
    st = cuda_ok(cudaEventCreate(&q.events[i]), "event");
  if (!st) st = cuda_ok(cudaMalloc(&q.layers, TALUS_HALO_PARTS * sizeof(int)), "halo layers");
  return st;
}

bool mirrors(const slot &q, const talus_tile *t) {
  return !q.borrowed && q.alloc_plane == t->plane && q.alloc_nz == t->nz;
}

/* Resident tile id, or nullptr when there is none. */
talus_tile *resident_of(int id) {
  return G.ready && id >= 0 && id < G.nres ? &G.res[id] : nullptr;
}

bool rect_inside(talus_rect r, talus_rect b) {
  return r.x0 >= b.x0 && r.y0 >= b.y0 && r.x0 + r.w <= b.x0 + b.w && r.y0 + r.h <= b.y0 + b.h;
}

/* Device bytes per cell of a slot's scratch for nz layers: every scratch
 * field and every lazily allocated array some stage may ask for
 * (talus_stage_scratch_needs, each counted once). */
size_t scratch_cell_bytes(int nz) {
  size_t bytes = 0, seen[2 * TALUS_STAGE_COUNT];
  int nseen = 0;
  for (const field_decl &f : fields)
    if (!f.persistent) bytes += field_bytes(f, 1, nz);
  for (int id = 0; id < TALUS_STAGE_COUNT; id++) {
    talus_scratch_need need[TALUS_SCRATCH_NEEDS_MAX];
    int n = talus_stage_scratch_needs((talus_stage_id)id, NULL, need);
    for (int i = 0; i < n; i++) {
      bool dup = false;
      for (int j = 0; j < nseen; j++)
        dup = dup || seen[j] == need[i].offset;
      if (dup) continue;
      seen[nseen++] = need[i].offset;
      bytes += talus_scratch_bytes(&need[i], nz);
    }
  }
  return bytes;
}

/* Points q's persistent arrays at resident tile m's over global rectangle
 * view (inside m's buffer): the stages then see a tile covering view
 * with m's pitch and plane. */
void borrow(slot &q, const talus_tile &m, talus_rect view) {
  size_t cells = (size_t)(view.y0 - m.buf.y0) * (size_t)m.pitch + (size_t)(view.x0 - m.buf.x0);
  for (const field_decl &f : fields) {
    if (!f.persistent) continue;
    char *base = (char *)member(&m, f.offset);
    member(&q.d, f.offset) = base ? base + cells * (f.cell_bytes / f.planes) : nullptr;
  }
  q.d.buf = view;
  q.d.pitch = m.pitch;
  q.d.nz = m.nz;
  q.d.plane = m.plane;
  q.borrowed = true;
}

} // namespace

extern "C" int talus_cuda_built(void) {
  return 1;
}

/* Owns the device choice: local rank modulo the visible devices, once per
 * process. */
extern "C" talus_status talus_cuda_init(int local_rank, char *name, size_t len) {
  if (!G.ready) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      return talus_fail(TALUS_ERR_DEVICE, "cuda", "no usable GPU: %s", cudaGetErrorString(e));
    if (n < 1) return talus_fail(TALUS_ERR_DEVICE, "cuda", "no usable GPU: no CUDA device visible");
    G.device = (local_rank > 0 ? local_rank : 0) % n;
    cudaDeviceProp prop;
    talus_status st = cuda_ok(cudaSetDevice(G.device), "select device");
    if (!st) st = cuda_ok(cudaGetDeviceProperties(&prop, G.device), "device properties");
    for (slot &q : G.s)
      if (!st) st = slot_init(q);
    if (!st) st = cuda_ok(cudaEventCreateWithFlags(&G.fence, cudaEventDisableTiming), "event");
    if (st) return st;
    int per_sm = 1; /* pt_trace_list's blocks a multiprocessor holds at once */
    st = cuda_ok(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pt_trace_list, BLOCK_X * BLOCK_Y, 0),
        "droplet grid");
    if (st) return st;
    G.pt_blocks = (per_sm > 0 ? per_sm : 1) * prop.multiProcessorCount;
    snprintf(G.name, sizeof G.name, "%s (device %d of %d, sm_%d%d)", prop.name, G.device, n,
             prop.major, prop.minor);
    G.ready = true;
  }
  if (name && len) snprintf(name, len, "%s", G.name);
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_use_slot(int s) {
  if (s < 0 || s >= TALUS_CUDA_SLOTS)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "slot %d of %d", s, TALUS_CUDA_SLOTS);
  G.cur = s;
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_pin(const talus_tile *t) {
  talus_status st = need_init("pin");
  for (const field_decl &f : fields) {
    void *host = f.persistent ? const_cast<void *>(member(t, f.offset)) : nullptr;
    if (st || !host) continue;
    int i = 0;
    while (i < PINNED_MAX && G.pinned[i])
      i++;
    if (i == PINNED_MAX) return talus_fail(TALUS_ERR_INTERNAL, "cuda", "too many pinned arrays");
    /* Small arrays may share pages with pinned ones; they stay pageable
     * (their transfers are then synchronous, never wrong). */
    if (cudaHostRegister(host, field_bytes(f, t->plane, t->nz), cudaHostRegisterDefault) ==
        cudaSuccess)
      G.pinned[i] = host;
    else
      (void)cudaGetLastError();
  }
  return st;
}

extern "C" void talus_cuda_unpin(const talus_tile *t) {
  if (!G.ready || !t) return;
  for (const field_decl &f : fields)
    for (void *&p : G.pinned)
      if (p && f.persistent && p == member(t, f.offset)) {
        cudaHostUnregister(p);
        p = nullptr;
      }
}

extern "C" talus_status talus_cuda_upload_async(const talus_tile *t) {
  talus_status st = need_init("upload");
  slot &q = cur();
  if (!st && (q.queued || q.nrows))
    st = talus_fail(TALUS_ERR_INTERNAL, "cuda", "upload into a slot with work in flight");
  if (!st) st = alloc_arrays(q, t);
  if (st) return st;
  q.d.buf = t->buf;
  q.d.pitch = t->pitch;
  q.d.nz = t->nz;
  q.d.plane = t->plane;
  memset(q.acc_flows, 0, sizeof q.acc_flows);
  memset(q.acc_seconds, 0, sizeof q.acc_seconds);
  return queue_persistent(q.d, const_cast<talus_tile *>(t), true, q.stream);
}

extern "C" talus_status talus_cuda_upload(const talus_tile *t) {
  talus_status st = talus_cuda_upload_async(t);
  return st ? st : cuda_ok(cudaStreamSynchronize(cur().stream), "upload");
}

extern "C" talus_status talus_cuda_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                                         talus_rect book) {
  slot &q = cur();
  if (!G.ready || !q.alloc_plane)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "stage queued before a tile was uploaded");
  if (q.queued >= EVENTS_MAX - 1)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "more than %d stages in one step",
                      STEP_EVENTS - 1);
  if (q.nrows >= STEP_BATCH)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "stage queued past the ledger rows");
  if (region.w <= 0 || region.h <= 0) return TALUS_OK;
  talus_status st = ensure_scratch(q, id);
  if (st) return st;
  q.event_stage[q.queued] = id;
  st = cuda_ok(cudaEventRecord(q.events[q.queued++], q.stream), "event");
  return st ? st : launch_stage(c, id, region, book);
}

extern "C" talus_status talus_cuda_end_step(void) {
  slot &q = cur();
  q.event_stage[q.queued] = STEP_END;
  talus_status st = cuda_ok(cudaEventRecord(q.events[q.queued++], q.stream), "event");
  if (st) return st;
  q.nrows++;
  bool full = q.nrows == STEP_BATCH || q.queued > EVENTS_MAX - STEP_EVENTS;
  return full ? harvest(q) : TALUS_OK;
}

extern "C" talus_status talus_cuda_wait(double *flows, double *stage_seconds) {
  slot &q = cur();
  talus_status st = harvest(q);
  if (st) return st;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    flows[f] += q.acc_flows[f];
  for (int i = 0; i < TALUS_STAGE_COUNT; i++)
    stage_seconds[i] += q.acc_seconds[i];
  memset(q.acc_flows, 0, sizeof q.acc_flows);
  memset(q.acc_seconds, 0, sizeof q.acc_seconds);
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_finish_step(double *flows, double *stage_seconds) {
  talus_status st = talus_cuda_end_step();
  return st ? st : talus_cuda_wait(flows, stage_seconds);
}

extern "C" talus_status talus_cuda_block_layers(const talus_rect *r, int n, int *layers) {
  slot &q = cur();
  if (!G.ready || !q.alloc_plane || n < 1 || n > TALUS_HALO_PARTS)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "block layers of %d blocks without a tile", n);
  talus_status st = cuda_ok(cudaMemsetAsync(q.layers, 0, n * sizeof(int), q.stream), "halo layers");
  for (int i = 0; i < n && !st; i++) {
    int cells = r[i].w * r[i].h;
    block_layers<<<(cells + 255) / 256, 256, 0, q.stream>>>(q.d, r[i], q.layers + i);
    st = cuda_ok(cudaGetLastError(), "halo layers");
  }
  if (!st)
    st = cuda_ok(
        cudaMemcpyAsync(layers, q.layers, n * sizeof(int), cudaMemcpyDeviceToHost, q.stream),
        "halo layers");
  return st ? st : cuda_ok(cudaStreamSynchronize(q.stream), "halo layers");
}

extern "C" talus_status talus_cuda_pack_blocks(const talus_rect *r, const int *layers, int n,
                                               const void **bodies) {
  slot &q = cur();
  int flags = HALO_TILE_FLAGS(&q.d);
  size_t off[TALUS_HALO_PARTS + 1] = {0};
  for (int i = 0; i < n; i++) /* bodies start 256-byte aligned */
    off[i + 1] =
        off[i] + ((halo_block_bytes(r[i].w, r[i].h, layers[i], flags) + 255) & ~(size_t)255);
  talus_status st = ensure_pack(q, off[n]);
  for (int i = 0; i < n && !st; i++) {
    int cells = r[i].w * r[i].h;
    block_pack<<<(cells + 255) / 256, 256, 0, q.stream>>>(q.d, r[i], layers[i], q.pack + off[i]);
    st = cuda_ok(cudaGetLastError(), "halo pack");
    bodies[i] = q.pack_host + off[i];
  }
  if (!st)
    st = cuda_ok(cudaMemcpyAsync(q.pack_host, q.pack, off[n], cudaMemcpyDeviceToHost, q.stream),
                 "halo download");
  return st ? st : cuda_ok(cudaStreamSynchronize(q.stream), "halo download");
}

extern "C" talus_status talus_cuda_download(talus_tile *t) {
  if (!G.ready || !mirrors(cur(), t))
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "download of a tile that was not uploaded");
  talus_status st = queue_persistent(cur().d, t, false, cur().stream);
  return st ? st : cuda_ok(cudaStreamSynchronize(cur().stream), "download");
}

/* ---------------------------------------------------------------------
 * Resident tiles (cuda.h)
 * ------------------------------------------------------------------- */

extern "C" talus_status talus_cuda_resident_fits(const talus_tile *like, int n, int *fits) {
  *fits = 0;
  talus_status st = need_init("resident tiles");
  if (st) return st;
  talus_cuda_release(); /* what the slots hold is reallocated as needed */
  size_t pers = 0, free_bytes = 0, total = 0;
  for (const field_decl &f : fields)
    if (f.persistent && member(like, f.offset)) pers += field_bytes(f, like->plane, like->nz);
  size_t scratch = scratch_cell_bytes(like->nz) * like->plane;
  /* n tiles, each slot's scratch, and the pack staging of one tile's blocks */
  size_t need = (size_t)n * pers + TALUS_CUDA_SLOTS * scratch + pers;
  st = cuda_ok(cudaMemGetInfo(&free_bytes, &total), "device memory");
  size_t margin = total / TALUS_CUDA_RESIDENT_MARGIN + ((size_t)512 << 20);
  if (!st) *fits = need + margin <= free_bytes;
  return st;
}

extern "C" talus_status talus_cuda_resident_create(int n) {
  talus_status st = need_init("resident tiles");
  if (st) return st;
  talus_cuda_resident_free();
  G.res = (talus_tile *)calloc((size_t)(n > 0 ? n : 1), sizeof *G.res);
  if (!G.res) return talus_fail(TALUS_ERR_NOMEM, "cuda", "no memory for %d resident tiles", n);
  G.nres = n;
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_resident_upload(int id, const talus_tile *t) {
  talus_tile *m = resident_of(id);
  if (!m) return talus_fail(TALUS_ERR_INTERNAL, "cuda", "resident tile %d of %d", id, G.nres);
  bool same = m->plane == t->plane && m->nz == t->nz;
  for (const field_decl &f : fields)
    same = same &&
           (!f.persistent || (member(t, f.offset) != nullptr) == (member(m, f.offset) != nullptr));
  if (!same) {
    free_group(*m, true);
    m->plane = 0;
    talus_status st = alloc_group(*m, t, true);
    if (st) return st;
  }
  m->buf = t->buf;
  m->pitch = t->pitch;
  m->nz = t->nz;
  m->plane = t->plane;
  talus_status st = queue_persistent(*m, const_cast<talus_tile *>(t), true, cur().stream);
  return st ? st : cuda_ok(cudaStreamSynchronize(cur().stream), "upload");
}

extern "C" talus_status talus_cuda_resident_bind(int id, talus_rect view) {
  slot &q = cur();
  talus_tile *m = resident_of(id);
  if (!m || !m->plane || !rect_inside(view, m->buf))
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "bind of resident tile %d over %dx%d+%d+%d", id,
                      view.w, view.h, view.x0, view.y0);
  if (q.queued || q.nrows)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "bind of a slot with work in flight");
  if (q.borrowed)
    unbind(q);
  else
    free_group(q.d, true); /* the slot's own copy makes room */
  if (q.alloc_plane != m->plane || q.alloc_nz != m->nz) {
    free_group(q.d, false);
    q.alloc_plane = 0;
    q.alloc_nz = 0;
    talus_status st = alloc_group(q.d, m, false);
    if (st) return st;
    q.alloc_plane = m->plane;
    q.alloc_nz = m->nz;
  }
  borrow(q, *m, view);
  memset(q.acc_flows, 0, sizeof q.acc_flows);
  memset(q.acc_seconds, 0, sizeof q.acc_seconds);
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_resident_copy(int dst, int src, talus_rect r) {
  talus_tile *a = resident_of(dst), *b = resident_of(src);
  if (r.w <= 0 || r.h <= 0) return TALUS_OK;
  if (!a || !b || !a->plane || !b->plane || !rect_inside(r, a->buf) || !rect_inside(r, b->buf) ||
      a->nz != b->nz || !a->hard != !b->hard || !a->acc != !b->acc || !a->fd != !b->fd)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "strip %dx%d+%d+%d of tile %d into tile %d", r.w,
                      r.h, r.x0, r.y0, src, dst);
  int cells = r.w * r.h;
  strip_copy<<<(cells + 255) / 256, 256, 0, cur().stream>>>(*a, *b, r);
  return cuda_ok(cudaGetLastError(), "halo strip copy");
}

extern "C" talus_status talus_cuda_fence(void) {
  talus_status st = need_init("fence");
  if (!st) st = cuda_ok(cudaEventRecord(G.fence, cur().stream), "fence");
  for (int i = 0; i < TALUS_CUDA_SLOTS && !st; i++)
    if (i != G.cur) st = cuda_ok(cudaStreamWaitEvent(G.s[i].stream, G.fence, 0), "fence");
  return st;
}

extern "C" void talus_cuda_resident_free(void) {
  if (!G.ready) return;
  for (slot &q : G.s) {
    cudaStreamSynchronize(q.stream);
    unbind(q);
  }
  for (int i = 0; i < G.nres; i++)
    free_group(G.res[i], true);
  free(G.res);
  G.res = nullptr;
  G.nres = 0;
}

extern "C" void talus_cuda_release(void) {
  if (!G.ready) return;
  talus_cuda_resident_free();
  for (slot &q : G.s) {
    cudaStreamSynchronize(q.stream);
    free_arrays(q);
    free_buffer(q.partial, q.partial_blocks);
    free_pack(q);
    free_buffer(q.spawns, q.spawns_cap);
    q.queued = 0;
    q.nrows = 0;
  }
}
