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
 * - Resident tiles: a tiled run whose tiles all fit in the device's
 *   memory (talus_cuda_resident_fits, from cudaMemGetInfo with a margin)
 *   keeps each tile's persistent fields in a device mirror of its own for
 *   the whole run (talus_cuda_resident_upload once). A slot advances a
 *   resident tile in place: talus_cuda_resident_bind lends it the tile's
 *   arrays over a view (a rectangle of the tile's buffer, seen with the
 *   tile's pitch and plane), while the scratch stays the slot's; stages,
 *   ledger rows and talus_cuda_pack_blocks then work as after an upload.
 *   Halo strips go from tile to tile on the device
 *   (talus_cuda_resident_copy: one kernel per strip, the bytes a cut and
 *   halo_block_paste_fill would give), so per generation only strips
 *   move, and the host sees a tile only when the tiler packs its blocks
 *   for the store (tiler/tiled.c: at the end of the run).
 * - Without the CUDA toolkit at build time every call below except
 *   talus_cuda_built() fails with TALUS_ERR_UNSUPPORTED (cuda_none.c).
 * - Concurrency: one driver thread per process calls the backend. A
 *   resident tile is written on the device by the one slot bound to it
 *   and by strip copies queued while no slot has work in flight; the
 *   other slots wait for those (talus_cuda_fence) before their next work.
 */
#ifndef TALUS_KERNELS_CUDA_H
#define TALUS_KERNELS_CUDA_H

#include "kernels/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TALUS_CUDA_SLOTS = 2 };
/* Resident tiles leave free 1/TALUS_CUDA_RESIDENT_MARGIN of the device's
 * memory plus 512 MiB (other processes, the driver, fragmentation). */
enum { TALUS_CUDA_RESIDENT_MARGIN = 16 };

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

/* ---------------------------------------------------------------------
 * Resident tiles (design notes above). Ids are 0..n-1 of the last
 * talus_cuda_resident_create.
 * ------------------------------------------------------------------- */

/* *fits = 1 when n resident tiles like `like` (its plane, nz and optional
 * persistent fields; like's arrays are not read), every slot's scratch
 * for them and one tile's pack staging fit in the device's free memory
 * with the margin above. Releases the slots' mirrors first
 * (talus_cuda_release), so what they held counts as free. */
talus_status talus_cuda_resident_fits(const talus_tile *like, int n, int *fits);
/* Makes a table of n resident tiles with no arrays yet, freeing the
 * previous table (talus_cuda_resident_free). */
talus_status talus_cuda_resident_create(int n);
/* Copies the persistent fields of t into resident tile id (allocating its
 * arrays, or reusing them when t is shaped alike) on the current slot's
 * stream, and waits. The tile takes t's buffer rectangle, pitch and plane. */
talus_status talus_cuda_resident_upload(int id, const talus_tile *t);
/* The current slot acts on resident tile id from now on, over global
 * rectangle `view` of the tile's buffer: stages, block_layers,
 * pack_blocks and wait work on the tile's arrays in place, as on a tile
 * uploaded with buffer `view`. The slot's own persistent arrays are freed
 * (the next upload allocates them again); its scratch is kept or sized
 * for the tile. Resets the slot's ledger flows and stage times. The slot
 * must have no work in flight. */
talus_status talus_cuda_resident_bind(int id, talus_rect view);
/* Queues on the current slot a copy of global rectangle r (inside both
 * buffers) of resident tile src's persistent fields into resident tile
 * dst, giving dst the bytes that pasting src's block of r with
 * halo_block_paste_fill would. Errors of queued work surface at the next
 * wait. */
talus_status talus_cuda_resident_copy(int dst, int src, talus_rect r);
/* Makes every other slot's later work wait for the work queued on the
 * current slot so far (without the host waiting). */
talus_status talus_cuda_fence(void);
/* Waits for every slot, unbinds them and frees the resident tiles. */
void talus_cuda_resident_free(void);

/* Waits for every slot and frees the mirrors, the resident tiles too (the
 * next upload allocates again). */
void talus_cuda_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TALUS_KERNELS_CUDA_H */
