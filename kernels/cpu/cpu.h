/*
 * cpu.h — the CPU backend: each stage as an OpenMP loop over rows (static
 * schedule) calling the stage's per-cell kernel body.
 *
 * Ledger flows are accumulated per row in double, in x order, then summed
 * over rows in y order by the calling thread, so the ledger — like the
 * state — does not depend on the thread count. On x86-64 the stages run
 * the widest instruction set the CPU has, with the same result bits.
 */
#ifndef TALUS_KERNELS_CPU_H
#define TALUS_KERNELS_CPU_H

#include "kernels/stages.h"

/* Runs stage `id` over the buffer-local rectangle `region` of tile t and
 * adds the ledger flows (heights, m) of the cells inside the buffer-local
 * rectangle `book` (the tile's core: halo cells are other tiles' to book)
 * to flows[TALUS_FLOW_COUNT]. Fails only on allocation failure. */
talus_status talus_cpu_stage_booked(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                                    talus_rect region, talus_rect book, double *flows);
/* The same, booking every cell of the region (unit tests, whole domains). */
talus_status talus_cpu_stage(talus_tile *t, const talus_kctx *c, talus_stage_id id,
                             talus_rect region, double *flows);

/* The instruction set the stages run with ("x86-64-v4", "x86-64-v3" or
 * "baseline"; see cpu.c). */
const char *talus_cpu_isa(void);

#endif /* TALUS_KERNELS_CPU_H */
