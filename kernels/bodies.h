/*
 * bodies.h — every process header, so every k_* body that a row of
 * stages.def names: the one list of physics headers the backends
 * (cpu/cpu.c, cuda/cuda.cu) include before they expand the stage table.
 * A new process adds its header here and its row to stages.def.
 */
#ifndef TALUS_KERNELS_BODIES_H
#define TALUS_KERNELS_BODIES_H

#include "stages.h"

#include "accum.h"
#include "heightfield.h"
#include "horizontal.h"
#include "inflow.h"
#include "particles.h"
#include "pipes.h"
#include "rain.h"
#include "split.h"
#include "support.h"
#include "thermal.h"
#include "transport.h"
#include "vertical.h"

#endif /* TALUS_KERNELS_BODIES_H */
