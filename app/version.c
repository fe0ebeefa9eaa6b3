/*
 * version.c — the version string with the backends this build contains
 * and the CPU instruction set the stages run with on this machine.
 */
#include "talus.h"

#include "kernels/cpu/cpu.h"

#include <pthread.h>
#include <stdio.h>

static char version_text[192];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void version_compose(void) {
  snprintf(version_text, sizeof version_text,
           TALUS_VERSION_STRING " (backends: cpu/openmp (%s)"
#ifdef TALUS_HAVE_CUDA
                                ", cuda"
#endif
#ifdef TALUS_HAVE_MPI
                                "; mpi"
#endif
                                ")",
           talus_cpu_isa());
}

const char *talus_version(void) {
  pthread_once(&version_once, version_compose);
  return version_text;
}
