/*
 * fuzz_manifest.c — resuming a disk store (talus_store_open, resume) from
 * an arbitrary manifest. The target appends the manifest's CRC line to the
 * input, so mutations reach the line parser instead of stopping at the
 * checksum (fuzz_blob covers checksum failures). Invariants: a manifest of
 * another run or a malformed one is refused with a message; an accepted
 * one yields committed steps of -1 (none) or more for every tile and a
 * store that commits and resumes again.
 */
#include "fuzz.h"
#include "io/store/store.h"

#include <string.h>
#include <unistd.h>

#define MANIFEST_TILES 4
static const char manifest_run[] = "fuzz-run";

/* Writes body, then the CRC32C line the store checks ("crc32c" and the
 * checksum of body in 8 hex digits), as the only file of the directory:
 * each input starts from its manifest alone. */
static void manifest_put(const uint8_t *body, size_t size) {
  char path[128];
  fuzz_dir_clear();
  snprintf(path, sizeof path, "%s/manifest", fuzz_dir());
  FILE *f = fopen(path, "wb");
  FUZZ_CHECK(f, "cannot write %s", path);
  fwrite(body, 1, size, f);
  fprintf(f, "crc32c %08x\n", (unsigned)talus_crc32c(0, body, size));
  fclose(f);
}

static void manifest_check_accepted(talus_store *s) {
  for (int t = 0; t < MANIFEST_TILES; t++)
    FUZZ_CHECK(talus_store_committed(s, t) >= -1, "tile %d committed at %lld", t,
               (long long)talus_store_committed(s, t));
  int64_t next = talus_store_committed(s, 1) + 1;
  FUZZ_CHECK(talus_store_commit(s, 1, next > 0 ? next : 0) == TALUS_OK, "commit: %s",
             talus_last_error());
  talus_store_close(s);
  FUZZ_CHECK(talus_store_open(&s, TALUS_STORE_DISK, fuzz_dir(), manifest_run, MANIFEST_TILES, 1) ==
                 TALUS_OK,
             "an accepted store does not resume again: %s", talus_last_error());
  FUZZ_CHECK(talus_store_committed(s, 1) == (next > 0 ? next : 0), "the commit was lost");
  talus_store_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  manifest_put(data, size);
  talus_store *s = NULL;
  talus_error_clear();
  talus_status st =
      talus_store_open(&s, TALUS_STORE_DISK, fuzz_dir(), manifest_run, MANIFEST_TILES, 1);
  if (st) {
    FUZZ_CHECK(st == TALUS_ERR_FORMAT || st == TALUS_ERR_ARGUMENT || st == TALUS_ERR_IO,
               "open: status %d (%s)", (int)st, talus_last_error());
    FUZZ_CHECK(!s && talus_last_error()[0], "refused without a message, or a store returned");
    return 0;
  }
  manifest_check_accepted(s);
  return 0;
}

/* Seeds: the manifests of stores with nothing, some and all tiles
 * committed, with meta data; each without its CRC line. */
void fuzz_seeds(fuzz_add_fn add, void *user) {
  for (int seed = 0; seed < 3; seed++) {
    talus_store *s = NULL;
    fuzz_dir_clear();
    FUZZ_CHECK(talus_store_open(&s, TALUS_STORE_DISK, fuzz_dir(), manifest_run, MANIFEST_TILES,
                                0) == TALUS_OK,
               "seed open: %s", talus_last_error());
    for (int t = 0; t < seed * 2 && t < MANIFEST_TILES; t++)
      FUZZ_CHECK(talus_store_commit(s, t, 12 * (t + 1)) == TALUS_OK, "seed commit");
    if (seed) FUZZ_CHECK(talus_store_set_meta(s, "input", "dem.tif 30 m") == TALUS_OK, "meta");
    talus_store_close(s);
    char path[128], buf[8192];
    snprintf(path, sizeof path, "%s/manifest", fuzz_dir());
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    FUZZ_CHECK(n > 16, "seed manifest missing");
    add(buf, n - 16, user);
  }
}
