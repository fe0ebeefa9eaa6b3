/*
 * fuzz.h — fuzz targets, one per API area that reads bytes it did not
 * write: the INI parser and key=value overrides (fuzz_config), halo blocks
 * (fuzz_halo), store blob files (fuzz_blob) and store manifests and
 * journals (fuzz_manifest).
 *
 * Each target defines LLVMFuzzerTestOneInput, the libFuzzer entry point,
 * and fuzz_seeds, which hands valid inputs to a callback (the corpus to
 * start from). A target checks invariants, not only "no crash": a rejected
 * input is rejected with TALUS_ERR_FORMAT/ARGUMENT/RANGE/IO and a message,
 * leaves nothing half-changed, and an accepted one round-trips.
 * FUZZ_CHECK aborts on a violation, which libFuzzer and the plain driver
 * (fuzz_driver.c, used by ctest) both report with the message.
 *
 * Two builds: every build links each target with fuzz_driver.c into a
 * program that replays the seeds and a fixed number of deterministic
 * mutations (ctest label `fuzz`); configuring with CC=clang and
 * -DTALUS_FUZZ=ON also links each with libFuzzer and ASan/UBSan
 * (fuzz_<area>_libfuzzer) for open-ended runs.
 */
#ifndef TALUS_FUZZ_H
#define TALUS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef void (*fuzz_add_fn)(const void *data, size_t size, void *user);
/* Hands the target's seed inputs to add. */
void fuzz_seeds(fuzz_add_fn add, void *user);

#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz: invariant violated at %s:%d: ", __FILE__, __LINE__);                  \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* The target's private scratch directory: made on first use, removed with
 * its files at exit. fuzz_dir_clear empties it. */
const char *fuzz_dir(void);
void fuzz_dir_clear(void);

/* A path naming a file that holds data (memfd; valid until fuzz_file_close). */
int fuzz_file_open(const void *data, size_t size, char *path, size_t cap);
void fuzz_file_close(int fd);

#endif /* TALUS_FUZZ_H */
