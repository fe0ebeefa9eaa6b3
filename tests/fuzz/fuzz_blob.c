/*
 * fuzz_blob.c — store blob files (talus_blob_read) on arbitrary bytes:
 * the header checks, the zstd frame, the byte shuffle and the checksums.
 * Invariants: a damaged file is refused with TALUS_ERR_FORMAT and a
 * message naming it, and no data is returned; an accepted file's data,
 * written again with talus_blob_write, reads back to the same bytes.
 */
#include "fuzz.h"
#include "io/store/store.h"

#include <string.h>
#include <unistd.h>

static const talus_store_key blob_key = {3, 70, 2};

static void blob_check_rewrite(const void *data, size_t n) {
  char path[128];
  snprintf(path, sizeof path, "%s/again.tzst", fuzz_dir());
  uint64_t bytes = 0;
  FUZZ_CHECK(talus_blob_write(path, blob_key, data, n, n % 4 == 0, 1, 0, &bytes) == TALUS_OK,
             "rewrite: %s", talus_last_error());
  void *back = NULL;
  size_t m = 0;
  int missing = 0;
  FUZZ_CHECK(talus_blob_read(path, blob_key, &back, &m, &bytes, &missing) == TALUS_OK,
             "read back: %s", talus_last_error());
  FUZZ_CHECK(m == n && (!n || !memcmp(back, data, n)), "rewritten blob reads back different");
  free(back);
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_file_open(data, size, path, sizeof path);
  void *out = NULL;
  size_t n = 0;
  uint64_t bytes = 0;
  int missing = 0;
  talus_error_clear();
  talus_status st = talus_blob_read(path, blob_key, &out, &n, &bytes, &missing);
  fuzz_file_close(fd);
  FUZZ_CHECK(st == TALUS_OK || st == TALUS_ERR_FORMAT, "read: status %d (%s)", (int)st,
             talus_last_error());
  if (st) {
    FUZZ_CHECK(!out && talus_last_error()[0], "refused file returned data or no message");
    return 0;
  }
  FUZZ_CHECK(bytes == size, "file bytes %llu, not %zu", (unsigned long long)bytes, size);
  blob_check_rewrite(out, n);
  free(out);
  return 0;
}

/* Writes one blob file of data through the store's writer and adds it. */
static void blob_seed(fuzz_add_fn add, void *user, const void *data, size_t n, int shuffle) {
  char path[128];
  snprintf(path, sizeof path, "%s/seed.tzst", fuzz_dir());
  uint64_t bytes = 0;
  FUZZ_CHECK(talus_blob_write(path, blob_key, data, n, shuffle, 1, 0, &bytes) == TALUS_OK,
             "seed write: %s", talus_last_error());
  FILE *f = fopen(path, "rb");
  FUZZ_CHECK(f, "seed open");
  unsigned char *buf = malloc(bytes);
  FUZZ_CHECK(buf && fread(buf, 1, bytes, f) == bytes, "seed read");
  fclose(f);
  add(buf, bytes, user);
  free(buf);
  unlink(path);
}

/* Seeds: smooth floats shuffled, odd-length bytes unshuffled, a blob of
 * more than one shuffle chunk, an empty blob. */
void fuzz_seeds(fuzz_add_fn add, void *user) {
  size_t nf = TALUS_STORE_CHUNK / 4 + 1000;
  float *v = malloc(nf * sizeof *v);
  FUZZ_CHECK(v, "no memory");
  for (size_t i = 0; i < nf; i++)
    v[i] = 100.0f + 0.01f * (float)(i % 977);
  blob_seed(add, user, v, 64 * sizeof *v, 1);
  blob_seed(add, user, "talus talus talus", 17, 0);
  blob_seed(add, user, v, nf * sizeof *v, 1);
  blob_seed(add, user, v, 0, 1);
  free(v);
}
