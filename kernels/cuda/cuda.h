/*
 * cuda.h — the CUDA backend: the same k_* kernel bodies as kernels/cpu/,
 * launched one thread per cell on the GPU.
 *
 * Design notes
 * ------------
 * - The backend owns one device per process (MPI local rank modulo the
 *   visible devices, chosen by talus_cuda_init) and one *device mirror* of
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
 *   the math libraries' tolerance (expf, powf, … differ in the last bits).
 * - Without the CUDA toolkit at build time every call below except
 *   talus_cuda_built() fails with TALUS_ERR_UNSUPPORTED (cuda_none.c).
 * - Concurrency: one driver thread per process calls the backend.
 */
#ifndef TALUS_KERNELS_CUDA_H
#define TALUS_KERNELS_CUDA_H

#include "../stages.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build contains the CUDA backend. */
int talus_cuda_built(void);

/* Makes the backend usable: finds the driver and a device (the local MPI
 * rank, from the launcher's environment, modulo the visible devices) and
 * writes its name to name[len] (may be NULL). TALUS_ERR_DEVICE with the
 * driver's reason when there is none. Cheap after the first success. */
talus_status talus_cuda_init(char *name, size_t len);

/* Copies the persistent fields of t into the device mirror (allocating or
 * growing it); scratch arrays are allocated on the device as stages need
 * them. Resets the queued ledger flows and stage times. */
talus_status talus_cuda_upload(const talus_tile *t);

/* Queues stage `id` over buffer-local `region` of the uploaded tile,
 * booking the flows of cells in buffer-local `book` (as
 * talus_cpu_stage_booked). Errors of queued work surface at the next
 * talus_cuda_finish_step or talus_cuda_download. */
talus_status talus_cuda_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                              talus_rect book);

/* Waits for the queued stages of one step; adds their ledger flows
 * (heights, m) to flows[TALUS_FLOW_COUNT] and their GPU times to
 * stage_seconds[TALUS_STAGE_COUNT]. */
talus_status talus_cuda_finish_step(double *flows, double *stage_seconds);

/* Copies the persistent fields of the mirror back into t (the tile that
 * was uploaded). */
talus_status talus_cuda_download(talus_tile *t);

/* Frees the device mirror (the next upload allocates again). */
void talus_cuda_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TALUS_KERNELS_CUDA_H */
