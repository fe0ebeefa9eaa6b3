/*
 * cuda.cu — the CUDA backend (see cuda.h): device mirror of one tile,
 * stage launches over the shared k_* bodies, deterministic ledger sums.
 *
 * Every CUDA error is converted to a talus_status here and nowhere else
 * (cuda_ok). The backend's state is one process-wide struct because the
 * device and its buffers are per process (one GPU per rank); it is only
 * touched by the driver thread.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The C headers of the library (common.h, the kernels) carry no C++
 * linkage guards of their own. */
extern "C" {
#include "cuda.h"

#include "../heightfield.h"
#include "../horizontal.h"
#include "../pipes.h"
#include "../rain.h"
#include "../split.h"
#include "../support.h"
#include "../thermal.h"
#include "../transport.h"
#include "../vertical.h"
}

namespace {

constexpr int BLOCK_X = 32; /* one warp per row of the block: coalesced rows */
constexpr int BLOCK_Y = 8;
constexpr int EVENTS_MAX = 4 * TALUS_STAGE_COUNT + 2 * 64 + 1; /* a step's plan, plus its end */
static_assert(TALUS_FLOW_COUNT <= BLOCK_X, "one lane per flow in the block sum");

/* A field of talus_tile the mirror carries: bytes per cell (per layer when
 * layered); persistent fields travel, scratch fields live on the device. */
struct field_decl {
  size_t offset;
  size_t cell_bytes;
  bool layered;
  bool persistent;
};

#define FIELD(m, bytes, layered, persistent)                                                       \
  { offsetof(talus_tile, m), bytes, layered, persistent }
const field_decl fields[] = {
    FIELD(count, 1, false, true),  FIELD(mask, 1, false, true),   FIELD(B, 4, true, true),
    FIELD(s, 4, true, true),       FIELD(w, 4, true, true),       FIELD(C, 4, true, true),
    FIELD(r, 4, true, true),       FIELD(D, 4, true, true),       FIELD(p, 4, true, true),
    FIELD(f, 16, true, true),      FIELD(hard, 4, false, true),   FIELD(rain, 4, false, true),
    FIELD(pipe, 4, true, false),   FIELD(slip, 16, true, false),  FIELD(kr, 4, true, false),
    FIELD(sina, 4, true, false),   FIELD(vx, 4, true, false),     FIELD(vy, 4, true, false),
    FIELD(sig_lo, 4, true, false), FIELD(sig_hi, 4, true, false),
};
#undef FIELD

void *&member(talus_tile *t, size_t offset) {
  return *(void **)((char *)t + offset);
}
const void *member(const talus_tile *t, size_t offset) {
  return *(void *const *)((const char *)t + offset);
}

struct backend {
  bool ready;
  int device;
  char name[256];
  talus_tile d;       /* the mirror: host struct, device arrays */
  size_t alloc_plane; /* plane and nz the arrays were sized for */
  int alloc_nz;
  double *flows;   /* device [TALUS_FLOW_COUNT], this step's booked flows */
  double *partial; /* device [TALUS_FLOW_COUNT * blocks] block sums */
  size_t partial_blocks;
  cudaStream_t stream;
  cudaEvent_t events[EVENTS_MAX];
  talus_stage_id event_stage[EVENTS_MAX];
  int queued; /* stages queued since the last finish_step */
};
backend G;

/* The one conversion of CUDA errors into talus statuses. */
talus_status cuda_ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return TALUS_OK;
  return talus_fail(TALUS_ERR_DEVICE, "cuda", "%s: %s", what, cudaGetErrorString(e));
}

/* The node-local rank from the MPI launcher's environment (0 alone). */
int local_rank() {
  const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                        "MV2_COMM_WORLD_LOCAL_RANK"};
  for (const char *v : vars) {
    const char *s = getenv(v);
    if (s && *s) return atoi(s) > 0 ? atoi(s) : 0;
  }
  return 0;
}

size_t field_bytes(const field_decl &f, size_t plane, int nz) {
  return f.cell_bytes * plane * (f.layered ? (size_t)nz : 1u);
}

void free_arrays() {
  for (const field_decl &f : fields) {
    cudaFree(member(&G.d, f.offset));
    member(&G.d, f.offset) = nullptr;
  }
  void **lazy[] = {(void **)&G.d.thermal, (void **)&G.d.hf_cap, (void **)&G.d.hf_sed,
                   (void **)&G.d.nb8};
  for (void **p : lazy) {
    cudaFree(*p);
    *p = nullptr;
  }
  G.alloc_plane = 0;
  G.alloc_nz = 0;
}

/* Sizes the mirror's arrays for t: the fields t has (optional ones only if
 * t has them), scratch always. Reuses the allocation when it matches. */
talus_status alloc_arrays(const talus_tile *t) {
  bool same = G.alloc_plane == t->plane && G.alloc_nz == t->nz;
  for (const field_decl &f : fields)
    same = same && (!f.persistent ||
                    (member(t, f.offset) != nullptr) == (member(&G.d, f.offset) != nullptr));
  if (same) return TALUS_OK;
  free_arrays();
  for (const field_decl &f : fields) {
    if (f.persistent && !member(t, f.offset)) continue;
    void *p = nullptr;
    talus_status st = cuda_ok(cudaMalloc(&p, field_bytes(f, t->plane, t->nz)), "device tile");
    if (st) {
      free_arrays();
      return st;
    }
    member(&G.d, f.offset) = p;
  }
  G.alloc_plane = t->plane;
  G.alloc_nz = t->nz;
  return TALUS_OK;
}

/* The lazily allocated scratch of stage id on the device (zeroed, as
 * talus_tile_ensure does on the host). */
talus_status ensure_scratch(talus_stage_id id) {
  talus_scratch_need need[2];
  int n = talus_stage_scratch_needs(id, need);
  for (int i = 0; i < n; i++) {
    void *&p = member(&G.d, need[i].offset);
    if (p) continue;
    size_t bytes = need[i].cell_bytes * G.alloc_plane;
    talus_status st = cuda_ok(cudaMalloc(&p, bytes), need[i].what);
    if (!st) st = cuda_ok(cudaMemsetAsync(p, 0, bytes, G.stream), need[i].what);
    if (st) return st;
  }
  return TALUS_OK;
}

talus_status ensure_partial(size_t blocks) {
  if (blocks <= G.partial_blocks) return TALUS_OK;
  cudaFree(G.partial);
  G.partial = nullptr;
  G.partial_blocks = 0;
  talus_status st = cuda_ok(cudaMalloc(&G.partial, blocks * TALUS_FLOW_COUNT * sizeof(double)),
                            "ledger block sums");
  if (!st) G.partial_blocks = blocks;
  return st;
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
  if (threadIdx.y == 0 && threadIdx.x < TALUS_FLOW_COUNT) {
    double s = 0.0;
    for (int w = 0; w < BLOCK_Y; w++)
      s += warp_sums[w][threadIdx.x];
    partial[(size_t)threadIdx.x * nblocks + blockIdx.y * gridDim.x + blockIdx.x] = s;
  }
}

typedef void (*stage_body)(const talus_tile *, const talus_kctx *, int, int, double *);

/* One thread per cell of `region`; the body is the CPU backend's. */
template <stage_body BODY>
__global__ void __launch_bounds__(BLOCK_X *BLOCK_Y)
    stage_kernel(talus_tile t, talus_kctx c, talus_rect region, talus_rect book, double *partial) {
  int x = region.x0 + (int)(blockIdx.x * BLOCK_X + threadIdx.x);
  int y = region.y0 + (int)(blockIdx.y * BLOCK_Y + threadIdx.y);
  double acc[TALUS_FLOW_COUNT];
#pragma unroll
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    acc[f] = 0.0;
  if (x < region.x0 + region.w && y < region.y0 + region.h) {
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

template <stage_body BODY>
talus_status launch(const talus_kctx *c, talus_rect region, talus_rect book) {
  dim3 block(BLOCK_X, BLOCK_Y);
  dim3 grid((unsigned)((region.w + BLOCK_X - 1) / BLOCK_X),
            (unsigned)((region.h + BLOCK_Y - 1) / BLOCK_Y));
  size_t nblocks = (size_t)grid.x * grid.y;
  talus_status st = ensure_partial(nblocks);
  if (st) return st;
  stage_kernel<BODY><<<grid, block, 0, G.stream>>>(G.d, *c, region, book, G.partial);
  flows_reduce<<<TALUS_FLOW_COUNT, 256, 0, G.stream>>>(G.partial, (int)nblocks, G.flows);
  return cuda_ok(cudaGetLastError(), "stage launch");
}

talus_status launch_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                          talus_rect book) {
  switch (id) {
  case TALUS_STAGE_RAIN:
    return launch<k_rain>(c, region, book);
  case TALUS_STAGE_PIPES:
    return launch<k_pipes>(c, region, book);
  case TALUS_STAGE_TRANSPORT:
    return launch<k_transport>(c, region, book);
  case TALUS_STAGE_HORIZONTAL:
    return launch<k_horizontal>(c, region, book);
  case TALUS_STAGE_SPLIT:
    return launch<k_split>(c, region, book);
  case TALUS_STAGE_VERTICAL:
    return launch<k_vertical>(c, region, book);
  case TALUS_STAGE_SUPPORT_INIT:
    return launch<k_support_init>(c, region, book);
  case TALUS_STAGE_SUPPORT_RED:
    return launch<k_support_red>(c, region, book);
  case TALUS_STAGE_SUPPORT_BLACK:
    return launch<k_support_black>(c, region, book);
  case TALUS_STAGE_COLLAPSE:
    return launch<k_collapse>(c, region, book);
  case TALUS_STAGE_THERMAL_OUT:
    return launch<k_thermal_out>(c, region, book);
  case TALUS_STAGE_THERMAL_IN:
    return launch<k_thermal_in>(c, region, book);
  case TALUS_STAGE_HF_RAIN:
    return launch<k_hf_rain>(c, region, book);
  case TALUS_STAGE_HF_FLUX:
    return launch<k_hf_flux>(c, region, book);
  case TALUS_STAGE_HF_WATER:
    return launch<k_hf_water>(c, region, book);
  case TALUS_STAGE_HF_ERODE:
    return launch<k_hf_erode>(c, region, book);
  case TALUS_STAGE_HF_ADVECT:
    return launch<k_hf_advect>(c, region, book);
  case TALUS_STAGE_HF_SETTLE:
    return launch<k_hf_settle>(c, region, book);
  default:
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "unknown stage %d", (int)id);
  }
}

/* Copies the persistent fields between t and the mirror. */
talus_status copy_persistent(talus_tile *t, bool to_device) {
  for (const field_decl &f : fields) {
    if (!f.persistent || !member(t, f.offset)) continue;
    size_t bytes = field_bytes(f, t->plane, t->nz);
    void *dev = member(&G.d, f.offset);
    void *host = member(t, f.offset);
    cudaError_t e = to_device ? cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, G.stream)
                              : cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, G.stream);
    talus_status st = cuda_ok(e, to_device ? "upload" : "download");
    if (st) return st;
  }
  return cuda_ok(cudaStreamSynchronize(G.stream), to_device ? "upload" : "download");
}

} // namespace

extern "C" int talus_cuda_built(void) {
  return 1;
}

extern "C" talus_status talus_cuda_init(char *name, size_t len) {
  if (!G.ready) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      return talus_fail(TALUS_ERR_DEVICE, "cuda", "no usable GPU: %s", cudaGetErrorString(e));
    if (n < 1) return talus_fail(TALUS_ERR_DEVICE, "cuda", "no usable GPU: no CUDA device visible");
    G.device = local_rank() % n;
    cudaDeviceProp prop;
    talus_status st = cuda_ok(cudaSetDevice(G.device), "select device");
    if (!st) st = cuda_ok(cudaGetDeviceProperties(&prop, G.device), "device properties");
    if (!st) st = cuda_ok(cudaStreamCreateWithFlags(&G.stream, cudaStreamNonBlocking), "stream");
    if (!st) st = cuda_ok(cudaMalloc(&G.flows, TALUS_FLOW_COUNT * sizeof(double)), "ledger");
    for (int i = 0; i < EVENTS_MAX && !st; i++)
      st = cuda_ok(cudaEventCreate(&G.events[i]), "event");
    if (st) return st;
    snprintf(G.name, sizeof G.name, "%s (device %d of %d, sm_%d%d)", prop.name, G.device, n,
             prop.major, prop.minor);
    G.ready = true;
  }
  if (name && len) snprintf(name, len, "%s", G.name);
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_upload(const talus_tile *t) {
  talus_status st = talus_cuda_init(NULL, 0);
  if (!st) st = alloc_arrays(t);
  if (st) return st;
  G.d.buf = t->buf;
  G.d.pitch = t->pitch;
  G.d.nz = t->nz;
  G.d.plane = t->plane;
  G.queued = 0;
  st = cuda_ok(cudaMemsetAsync(G.flows, 0, TALUS_FLOW_COUNT * sizeof(double), G.stream), "ledger");
  return st ? st : copy_persistent(const_cast<talus_tile *>(t), true);
}

extern "C" talus_status talus_cuda_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                                         talus_rect book) {
  if (!G.ready || !G.alloc_plane)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "stage queued before a tile was uploaded");
  if (G.queued >= EVENTS_MAX - 1)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "more than %d stages in one step",
                      EVENTS_MAX - 1);
  if (region.w <= 0 || region.h <= 0) return TALUS_OK;
  talus_status st = ensure_scratch(id);
  if (st) return st;
  G.event_stage[G.queued] = id;
  st = cuda_ok(cudaEventRecord(G.events[G.queued++], G.stream), "event");
  return st ? st : launch_stage(c, id, region, book);
}

extern "C" talus_status talus_cuda_finish_step(double *flows, double *stage_seconds) {
  double step_flows[TALUS_FLOW_COUNT];
  talus_status st = cuda_ok(cudaEventRecord(G.events[G.queued], G.stream), "event");
  if (!st)
    st = cuda_ok(
        cudaMemcpyAsync(step_flows, G.flows, sizeof step_flows, cudaMemcpyDeviceToHost, G.stream),
        "ledger");
  if (!st) st = cuda_ok(cudaMemsetAsync(G.flows, 0, sizeof step_flows, G.stream), "ledger");
  if (!st) st = cuda_ok(cudaStreamSynchronize(G.stream), "step");
  if (st) return st;
  for (int f = 0; f < TALUS_FLOW_COUNT; f++)
    flows[f] += step_flows[f];
  for (int i = 0; i < G.queued; i++) {
    float ms = 0.0f;
    st = cuda_ok(cudaEventElapsedTime(&ms, G.events[i], G.events[i + 1]), "stage time");
    if (st) return st;
    stage_seconds[G.event_stage[i]] += 1e-3 * ms;
  }
  G.queued = 0;
  return TALUS_OK;
}

extern "C" talus_status talus_cuda_download(talus_tile *t) {
  if (!G.ready || G.alloc_plane != t->plane || G.alloc_nz != t->nz)
    return talus_fail(TALUS_ERR_INTERNAL, "cuda", "download of a tile that was not uploaded");
  return copy_persistent(t, false);
}

extern "C" void talus_cuda_release(void) {
  if (!G.ready) return;
  cudaStreamSynchronize(G.stream);
  free_arrays();
  cudaFree(G.partial);
  G.partial = nullptr;
  G.partial_blocks = 0;
}
