/*
 * cuda.h — the CUDA backend: the same k_* kernel bodies as kernels/cpu/,
 * launched one thread per cell on the GPU.
 *
 * Design notes
 * ------------
 * - The backend owns one device per process (MPI local rank modulo the
 *   visible devices, chosen by talus_cuda_init; the caller passes the
 *   rank, the backend reads no launcher variable) and one *device mirror* of
 *   the tile being advanced: a talus_tile whose arrays live on the GPU.
 *   The driver (tiler/tiler.c) uploads a tile's persistent fields, queues
 *   the stages of `steps` steps, and downloads the persistent fields back.
 *   Scratch fields exist only on the device (ARCHITECTURE §2). The mirror's
 *   allocation is reused while the next tile fits, so a tiled run
 *   allocates once.
 * - Stages are queued on one stream; a stage is one kernel over its region
 *   plus a deterministic reduction of the booked cells' ledger flows (a
 *   fixed tree per block, then a fixed-order sum over blocks) into a device
 *   accumulator. Hence a run on the GPU gives the same bytes for any tiling
 *   of the same work, as on the CPU; against the CPU it agrees only within
 *   a tolerance: the CPU flushes denormals to zero, the GPU keeps them (the
 *   kernels call no libm function whose bits differ; see fmath.h).
 * - Slots: TALUS_CUDA_SLOTS mirrors, each with its own stream. A tiled run
 *   (tiler/tiled.c) pins its two host tile buffers (talus_cuda_pin) and
 *   alternates slots: while tile p computes on one slot, tile p+1 is
 *   assembled on the host and uploaded on the other, and tile p-1's core
 *   and edge strips are packed into halo blocks on the device and copied
 *   to the store (talus_cuda_pack_blocks): the halo ring and unused
 *   column slots never travel back. Each slot books every step's ledger flows in
 *   a row of its own and adds the rows in step order when waited on, so a
 *   queued run books the same bytes as one that waits after every step.
 * - Without the CUDA toolkit at build time every call below except
 *   talus_cuda_built() fails with TALUS_ERR_UNSUPPORTED (cuda_none.c).
 * - Concurrency: one driver thread per process calls the backend.
 */
#ifndef TALUS_KERNELS_CUDA_H
#define TALUS_KERNELS_CUDA_H

#include "kernels/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TALUS_CUDA_SLOTS = 2 };

/* 1 when this build contains the CUDA backend. */
int talus_cuda_built(void);

/* Makes the backend usable: finds the driver and a device (local_rank,
 * the process's MPI rank on its node as the caller has it from
 * talus_mpi_local_rank, modulo the visible devices) and writes its name
 * to name[len] (may be NULL). TALUS_ERR_DEVICE with the driver's reason
 * when there is none. Cheap after the first success, which fixes the
 * device for the process (a later local_rank is ignored). The calls
 * below need it first (pin and upload fail with TALUS_ERR_INTERNAL). */
talus_status talus_cuda_init(int local_rank, char *name, size_t len);

/* Picks the slot (0..TALUS_CUDA_SLOTS-1) the calls below act on. */
talus_status talus_cuda_use_slot(int slot);

/* Page-locks the persistent host arrays of t, so transfers to and from
 * it run asynchronously at full speed; talus_cuda_unpin must be called
 * before t is freed. Arrays that cannot be pinned stay pageable (their
 * transfers then block the caller, which is slower, never wrong). */
talus_status talus_cuda_pin(const talus_tile *t);
void talus_cuda_unpin(const talus_tile *t); /* NULL or an unpinned tile: no-op */

/* Copies the persistent fields of t into the slot's mirror (allocating or
 * growing it); scratch arrays are allocated on the device as stages need
 * them. Resets the slot's ledger flows and stage times. The slot must
 * have no work in flight. */
talus_status talus_cuda_upload(const talus_tile *t);
/* The same, queued: t must not change until talus_cuda_wait returns. */
talus_status talus_cuda_upload_async(const talus_tile *t);

/* Queues stage `id` over buffer-local `region` of the uploaded tile,
 * booking the flows of cells in buffer-local `book` (as
 * talus_cpu_stage_booked). Errors of queued work surface at the next
 * talus_cuda_finish_step or talus_cuda_download. */
talus_status talus_cuda_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                              talus_rect book);

/* Closes the step whose stages were queued since the last one (may wait
 * for the slot when its queue of steps is full). */
talus_status talus_cuda_end_step(void);
/* Waits for the slot's queued work; adds the ledger flows (heights, m) of
 * its steps, in step order, to flows[TALUS_FLOW_COUNT] and their GPU
 * times to stage_seconds[TALUS_STAGE_COUNT]. */
talus_status talus_cuda_wait(double *flows, double *stage_seconds);
/* talus_cuda_end_step then talus_cuda_wait. */
talus_status talus_cuda_finish_step(double *flows, double *stage_seconds);

/* Copies the persistent fields of the mirror back into t (the tile that
 * was uploaded). */
talus_status talus_cuda_download(talus_tile *t);

/* Halo blocks (halo/block.h) of global rectangles r[0..n) of the slot's
 * mirror (n <= TALUS_HALO_PARTS, each inside the tile): block_layers
 * writes the highest column count in each (at least 1) to layers[]; then
 * pack_blocks packs each block's body (what follows its header) on the
 * device with layers[i] layers and copies them all to pinned host
 * memory: bodies[i] (owned by the slot, valid until its next pack or
 * talus_cuda_release) holds halo_block_bytes - HALO_HEADER_BYTES bytes.
 * With its header in front (halo.h, halo_block_header), a body gives
 * halo_block_write's bytes.
 * Both wait for the slot. */
talus_status talus_cuda_block_layers(const talus_rect *r, int n, int *layers);
talus_status talus_cuda_pack_blocks(const talus_rect *r, const int *layers, int n,
                                    const void **bodies);

/* Waits for every slot and frees the mirrors (the next upload allocates
 * again). */
void talus_cuda_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TALUS_KERNELS_CUDA_H */
