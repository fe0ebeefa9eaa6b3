/*
 * scratch.h — a C test's scratch directory: scratch_open("talus_raster")
 * makes /tmp/talus_raster_XXXXXX (mkdtemp), tpath(name) names a file in
 * it, exists() asks whether a path is there, and scratch_close() removes
 * the directory with everything in it.
 */
#ifndef TALUS_TEST_SCRATCH_H
#define TALUS_TEST_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static char tmpdir[64];

/* Creates the scratch directory; 0 when it cannot be made. */
static inline int scratch_open(const char *prefix) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/%s_XXXXXX", prefix);
  return mkdtemp(tmpdir) != NULL;
}

/* Path of a file in the scratch directory (a ring of 8 static buffers, so
 * a few may be held at once). */
static inline const char *tpath(const char *name) {
  static char buf[8][256];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
  return buf[k];
}

static inline int exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* Removes the scratch directory and what it holds. */
static inline void scratch_close(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

#endif /* TALUS_TEST_SCRATCH_H */
