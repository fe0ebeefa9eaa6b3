/*
 * version.c — the version string with the backends this build contains.
 */
#include "talus.h"

const char *talus_version(void) {
  return TALUS_VERSION_STRING " (backends: cpu/openmp"
#ifdef TALUS_HAVE_CUDA
                              ", cuda"
#endif
#ifdef TALUS_HAVE_MPI
                              "; mpi"
#endif
                              ")";
}
