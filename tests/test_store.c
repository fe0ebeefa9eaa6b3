/*
 * test_store.c — the tile store (io/store.h): blob round trips in both kinds
 * (random floats, odd sizes, blobs spanning several shuffle chunks), real
 * compression of smooth fields, the CRC32C check value, missing keys, every
 * kind of damaged file (payload, header, truncated, extended, renamed)
 * refused as corrupt without data, the manifest and journal across
 * close/reopen (compaction, torn and corrupt records), run-id and tile-count
 * mismatches, refusal to clear a user directory, drop_before, leftover
 * temporary files, write failures leaving the old blob intact, OpenMP
 * concurrency, the byte counters, and a child process SIGKILLed at random
 * points and resumed until it finishes with exactly the expected blobs —
 * synchronous and with write-behind and read-ahead, whose files are also
 * compared byte for byte with a synchronous store's and whose failed
 * write is shown to block the commit after it.
 */
#include "check.h"
#include "io/store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char root[64];

/* A fresh, not yet existing directory path under the test's root. */
static const char *newdir(const char *name) {
  static char buf[8][256];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
  return buf[k];
}

/* Removes a flat directory and its files. */
static void rm_flat(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char p[512];
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.')) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* Number of entries in dir whose name ends with suffix ("" = all). */
static int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  size_t ls = strlen(suffix);
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.')) continue;
    if (l >= ls && strcmp(e->d_name + l - ls, suffix) == 0) n++;
  }
  closedir(d);
  return n;
}

static int exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

static void touch(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static talus_store_key K(int tile, int64_t step, int part) {
  return (talus_store_key){tile, step, part};
}

/* Deterministic random bytes (xorshift) of a given seed. */
static void fill_random(unsigned char *p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = (unsigned char)(x >> 24);
  }
}

/* A smooth terrain-like float field of n values, distinct per seed. */
static void fill_smooth(float *v, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    double x = (double)(i % 512), y = (double)(i / 512);
    v[i] = (float)(100.0 + 0.01 * (double)seed + 20.0 * sin(x * 0.02) * cos(y * 0.03) + 0.05 * x);
  }
}

/* Puts data, gets it back, and compares bytes. */
static void round_trip(talus_store *s, talus_store_key k, const void *data, size_t n, int elem4,
                       const char *what) {
  CHECK(talus_store_put(s, k, data, n, elem4) == TALUS_OK, "%s: put: %s", what, talus_last_error());
  void *got = NULL;
  size_t m = 99;
  talus_status st = talus_store_get(s, k, &got, &m);
  CHECK(st == TALUS_OK && got && m == n && (n == 0 || memcmp(got, data, n) == 0),
        "%s: %zu bytes back as %zu (%s)", what, n, m, talus_last_error());
  free(got);
}

/* Round trips of random and odd-sized blobs, with and without shuffle. */
static void test_round_trip(talus_store_kind kind) {
  talus_store *s;
  const char *dir = newdir(kind ? "rt_disk" : "rt_mem");
  CHECK(talus_store_open(&s, kind, dir, "run-rt", 4, 0) == TALUS_OK, "open: %s",
        talus_last_error());
  size_t sizes[] = {0,
                    1,
                    3,
                    4,
                    5,
                    4097,
                    TALUS_STORE_CHUNK,
                    TALUS_STORE_CHUNK + 7,
                    2 * TALUS_STORE_CHUNK + TALUS_STORE_CHUNK / 2 + 2};
  unsigned char *buf = malloc(sizes[8]);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int elem4 = 0; elem4 < 2; elem4++) {
      char what[64];
      snprintf(what, sizeof what, "%s %zu bytes elem4=%d", kind ? "disk" : "memory", sizes[i],
               elem4);
      fill_random(buf, sizes[i], i * 2 + (size_t)elem4);
      round_trip(s, K((int)i % 4, (int64_t)i, elem4), buf, sizes[i], elem4, what);
    }
  /* a put of an existing key replaces its blob */
  fill_smooth((float *)buf, 1000, 7);
  round_trip(s, K(0, 0, 0), buf, 4000, 1, "replace");
  CHECK(talus_store_has(s, K(0, 0, 0)) && !talus_store_has(s, K(0, 0, 9)), "has");
  free(buf);
  talus_store_close(s);
}

/* Smooth floats compress by more than 1.5 with the shuffle; the stats count
 * raw and file bytes and blobs. */
static void test_compression_and_stats(void) {
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, newdir("cmp"), "run-cmp", 1, 0) == TALUS_OK,
        "open: %s", talus_last_error());
  size_t n = 512 * 600;
  float *v = malloc(n * sizeof *v);
  fill_smooth(v, n, 1);
  CHECK(talus_store_put(s, K(0, 2, 0), v, n * 4, 1) == TALUS_OK, "put smooth");
  talus_store_stats a;
  talus_store_get_stats(s, &a);
  double ratio = (double)a.raw_written / (double)a.bytes_written;
  CHECK(ratio > 1.5, "smooth field compresses %.2fx", ratio);
  CHECK(a.raw_written == n * 4 && a.blobs_written == 1 && a.blobs_read == 0, "write stats");
  CHECK(talus_store_put(s, K(0, 2, 1), v, n * 4, 0) == TALUS_OK, "put unshuffled");
  talus_store_stats b;
  talus_store_get_stats(s, &b);
  double plain =
      (double)(b.raw_written - a.raw_written) / (double)(b.bytes_written - a.bytes_written);
  CHECK(ratio > plain, "shuffle helps: %.2fx vs %.2fx", ratio, plain);
  void *got;
  size_t m;
  CHECK(talus_store_get(s, K(0, 2, 0), &got, &m) == TALUS_OK, "get");
  free(got);
  talus_store_get_stats(s, &b);
  CHECK(b.raw_read == n * 4 && b.bytes_read == a.bytes_written && b.blobs_read == 1,
        "read stats: raw %llu file %llu", (unsigned long long)b.raw_read,
        (unsigned long long)b.bytes_read);
  CHECK(talus_store_memory_bytes(s) < 64 * 1024, "disk store holds ~no memory: %zu",
        talus_store_memory_bytes(s));
  free(v);
  talus_store_close(s);
}

/* The CRC32C check value of "123456789", whole and in pieces. */
static void test_crc(void) {
  CHECK(talus_crc32c(0, "123456789", 9) == 0xE3069283u, "crc32c check value %08x",
        talus_crc32c(0, "123456789", 9));
  CHECK(talus_crc32c(talus_crc32c(0, "1234", 4), "56789", 5) == 0xE3069283u, "crc32c pieces");
}

/* Missing keys and bad keys in both kinds. */
static void test_missing(talus_store_kind kind) {
  talus_store *s;
  CHECK(talus_store_open(&s, kind, newdir(kind ? "miss_d" : "miss_m"), "r", 2, 0) == TALUS_OK,
        "open");
  void *got = (void *)1;
  size_t m = 5;
  talus_status st = talus_store_get(s, K(1, 4, 2), &got, &m);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "missing tile 1 part 2 at step 4"),
        "missing: %s", talus_last_error());
  CHECK(got == NULL && m == 0, "no data on a miss");
  CHECK(talus_store_get(s, K(2, 0, 0), &got, &m) == TALUS_ERR_ARGUMENT, "tile out of range");
  CHECK(talus_store_put(s, K(0, -1, 0), "x", 1, 0) == TALUS_ERR_ARGUMENT, "negative step");
  CHECK(talus_store_put(s, K(0, 0, TALUS_STORE_PARTS), "x", 1, 0) == TALUS_ERR_ARGUMENT,
        "part out of range");
  talus_store_close(s);
}

/* Overwrites len bytes at off of a file (off < 0: from the end). */
static void poke(const char *path, long off, const void *bytes, size_t len) {
  int fd = open(path, O_RDWR);
  if (off < 0) off += (long)lseek(fd, 0, SEEK_END);
  CHECK(pwrite(fd, bytes, len, off) == (ssize_t)len, "poke %s", path);
  close(fd);
}

/* Copies file a to b. */
static void copy_file(const char *a, const char *b) {
  FILE *f = fopen(a, "rb"), *g = fopen(b, "wb");
  int c;
  while ((c = fgetc(f)) != EOF)
    fputc(c, g);
  fclose(f);
  fclose(g);
}

/* A get of key must fail as corrupt and return nothing. */
static void expect_corrupt(talus_store *s, talus_store_key k, const char *what) {
  void *got = (void *)1;
  size_t m = 5;
  talus_status st = talus_store_get(s, k, &got, &m);
  CHECK(st == TALUS_ERR_FORMAT && strstr(talus_last_error(), "corrupt") && !got && m == 0,
        "%s: status %d, '%s'", what, (int)st, talus_last_error());
}

/* Every damage is detected: payload, header fields, truncation, extension,
 * a file renamed to another key's name. */
static void test_corrupt(void) {
  talus_store *s;
  const char *dir = newdir("corrupt");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 1, 0) == TALUS_OK, "open");
  size_t n = 300000;
  float *v = malloc(n * 4);
  fill_smooth(v, n, 3);
  long offsets[] = {-1, -100, 64 + 20, 0, 9, 17, 30, 35, 44, 50, 54, 57, 62};
  const char *names[] = {"payload end", "payload",  "payload start", "magic",       "version",
                         "tile",        "step",     "raw size",      "packed size", "chunk",
                         "raw crc",     "reserved", "header crc"};
  char path[512];
  snprintf(path, sizeof path, "%s/t0_s1_p0.tzst", dir);
  for (int i = 0; i < 13; i++) {
    CHECK(talus_store_put(s, K(0, 1, 0), v, n * 4, 1) == TALUS_OK, "put");
    unsigned char b;
    int fd = open(path, O_RDONLY);
    off_t off = offsets[i] < 0 ? lseek(fd, 0, SEEK_END) + offsets[i] : offsets[i];
    CHECK(pread(fd, &b, 1, off) == 1, "read byte");
    close(fd);
    b ^= 0x10;
    poke(path, offsets[i], &b, 1);
    expect_corrupt(s, K(0, 1, 0), names[i]);
  }
  CHECK(talus_store_put(s, K(0, 1, 0), v, n * 4, 1) == TALUS_OK, "put");
  CHECK(truncate(path, 5000) == 0, "truncate");
  expect_corrupt(s, K(0, 1, 0), "truncated");
  CHECK(truncate(path, 40) == 0, "truncate header");
  expect_corrupt(s, K(0, 1, 0), "truncated header");
  CHECK(talus_store_put(s, K(0, 1, 0), v, n * 4, 1) == TALUS_OK, "put");
  FILE *f = fopen(path, "ab");
  fputs("extra", f);
  fclose(f);
  expect_corrupt(s, K(0, 1, 0), "extended");
  CHECK(talus_store_put(s, K(0, 1, 0), v, n * 4, 1) == TALUS_OK, "put");
  char other[512];
  snprintf(other, sizeof other, "%s/t0_s1_p2.tzst", dir);
  copy_file(path, other);
  expect_corrupt(s, K(0, 1, 2), "renamed to another key");
  free(v);
  talus_store_close(s);
}

/* Manifest and meta survive close + reopen; blobs are found again; a
 * different run id or tile count is refused; many commits compact the
 * journal; a torn last record is ignored, a bad middle record is not. */
static void test_manifest(void) {
  const char *dir = newdir("manifest");
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 0) == TALUS_OK, "open");
  CHECK(talus_store_committed(s, 3) == -1, "nothing committed yet");
  CHECK(talus_store_set_meta(s, "steps_total", "2000") == TALUS_OK, "meta");
  CHECK(talus_store_set_meta(s, "K", "2") == TALUS_OK && talus_store_set_meta(s, "K", "4") == 0,
        "meta replace");
  CHECK(talus_store_set_meta(s, "bad key", "x") == TALUS_ERR_ARGUMENT, "meta key refused");
  CHECK(talus_store_set_meta(s, "k", "two\nlines") == TALUS_ERR_ARGUMENT, "meta value refused");
  float v[64];
  fill_smooth(v, 64, 9);
  CHECK(talus_store_put(s, K(2, 8, 5), v, sizeof v, 1) == TALUS_OK, "put");
  CHECK(talus_store_commit(s, 2, 8) == TALUS_OK && talus_store_commit(s, 4, 6) == TALUS_OK,
        "commit");
  for (int i = 0; i < 5000; i++) /* crosses the compaction threshold */
    CHECK(talus_store_commit(s, i % 5, 10 + i) == TALUS_OK || i < 0, "commit %d", i);
  CHECK(talus_store_commit(s, 2, 8) == TALUS_OK, "commit");
  talus_store_close(s);
  CHECK(count_files(dir, "") == 3, "manifest, one journal, one blob: %d", count_files(dir, ""));

  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 1) == TALUS_OK, "resume: %s",
        talus_last_error());
  CHECK(talus_store_committed(s, 2) == 8 && talus_store_committed(s, 4) == 10 + 4999,
        "committed steps back: %lld %lld", (long long)talus_store_committed(s, 2),
        (long long)talus_store_committed(s, 4));
  const char *ks = talus_store_get_meta(s, "K"), *st = talus_store_get_meta(s, "steps_total");
  CHECK(ks && strcmp(ks, "4") == 0 && st && strcmp(st, "2000") == 0, "meta back");
  CHECK(talus_store_get_meta(s, "nope") == NULL, "absent meta");
  CHECK(talus_store_has(s, K(2, 8, 5)), "blob indexed after resume");
  round_trip(s, K(2, 8, 5), v, sizeof v, 1, "after resume");
  CHECK(talus_store_commit(s, 1, 3) == TALUS_OK, "commit after resume");
  talus_store_close(s);

  /* a torn last journal record is a commit that never returned */
  char jpath[512];
  DIR *d = opendir(dir);
  for (struct dirent *e; (e = readdir(d));)
    if (strncmp(e->d_name, "journal.", 8) == 0)
      snprintf(jpath, sizeof jpath, "%s/%s", dir, e->d_name);
  closedir(d);
  FILE *f = fopen(jpath, "ab");
  fwrite("\x54\x52\x4a\x31\x01\x00\x00", 1, 7, f);
  fclose(f);
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 1) == TALUS_OK,
        "torn record ignored: %s", talus_last_error());
  CHECK(talus_store_committed(s, 1) == 3, "journal replayed");
  CHECK(talus_store_commit(s, 0, 1) == TALUS_OK && talus_store_commit(s, 0, 2) == TALUS_OK,
        "commits");
  talus_store_close(s);
  d = opendir(dir);
  for (struct dirent *e; (e = readdir(d));)
    if (strncmp(e->d_name, "journal.", 8) == 0)
      snprintf(jpath, sizeof jpath, "%s/%s", dir, e->d_name);
  closedir(d);
  poke(jpath, 9, "\xff", 1); /* first of two records */
  talus_status rs = talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 1);
  CHECK(rs == TALUS_ERR_FORMAT && strstr(talus_last_error(), "corrupt"), "bad record: %s",
        talus_last_error());
  poke(jpath, 9, "\x00", 1);
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 1) == TALUS_OK, "repaired");
  CHECK(talus_store_committed(s, 0) == 2, "both records");
  talus_store_close(s);

  rs = talus_store_open(&s, TALUS_STORE_DISK, dir, "run-B", 5, 1);
  CHECK(rs == TALUS_ERR_ARGUMENT && strstr(talus_last_error(), "belongs to another run") && !s,
        "other run id: %s", talus_last_error());
  rs = talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 6, 1);
  CHECK(rs == TALUS_ERR_ARGUMENT && strstr(talus_last_error(), "another run"), "other ntiles");
  char mpath[512];
  snprintf(mpath, sizeof mpath, "%s/manifest", dir);
  poke(mpath, 20, "X", 1);
  rs = talus_store_open(&s, TALUS_STORE_DISK, dir, "run-A k=2", 5, 1);
  CHECK(rs == TALUS_ERR_FORMAT && strstr(talus_last_error(), "corrupt"), "manifest damage: %s",
        talus_last_error());
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "run-C", 2, 0) == TALUS_OK,
        "a new run clears the old store");
  CHECK(talus_store_committed(s, 0) == -1 && !talus_store_has(s, K(2, 8, 5)), "clean");
  CHECK(count_files(dir, ".tzst") == 0, "old blobs gone");
  CHECK(talus_store_destroy(s) == TALUS_OK && !exists(dir), "destroy removes the directory");
}

/* User directories are never cleared; resume needs a store; a store with
 * user files in it keeps them. */
static void test_directories(void) {
  const char *dir = newdir("user");
  mkdir(dir, 0755);
  char file[512];
  snprintf(file, sizeof file, "%s/thesis.tex", dir);
  touch(file, "precious");
  talus_store *s = (talus_store *)1;
  talus_status st = talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 1, 0);
  CHECK(st == TALUS_ERR_ARGUMENT && strstr(talus_last_error(), "refusing") && !s,
        "user dir refused: %s", talus_last_error());
  CHECK(exists(file), "user file kept");
  st = talus_store_open(&s, TALUS_STORE_DISK, newdir("empty/nested"), "r", 1, 1);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "no talus store to resume"),
        "resume of nothing: %s", talus_last_error());
  st = talus_store_open(&s, TALUS_STORE_DISK, file, "r", 1, 0);
  CHECK(st == TALUS_ERR_IO, "a file is no directory: %s", talus_last_error());

  const char *mixed = newdir("mixed");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, mixed, "r", 1, 0) == TALUS_OK, "open");
  CHECK(talus_store_put(s, K(0, 0, 0), "abc", 3, 0) == TALUS_OK, "put");
  talus_store_close(s);
  snprintf(file, sizeof file, "%s/notes.txt", mixed);
  touch(file, "mine");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, mixed, "r2", 1, 0) == TALUS_OK, "reopen fresh");
  CHECK(exists(file) && count_files(mixed, ".tzst") == 0, "store cleared, user file kept");
  CHECK(talus_store_destroy(s) == TALUS_OK && exists(file), "destroy keeps user file");
}

/* Leftover *.tmp files of a killed run are removed on resume and never
 * read. */
static void test_leftovers(void) {
  const char *dir = newdir("left");
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 2, 0) == TALUS_OK, "open");
  CHECK(talus_store_put(s, K(1, 0, 0), "core", 4, 0) == TALUS_OK, "put");
  talus_store_close(s);
  char p[512];
  snprintf(p, sizeof p, "%s/t1_s4_p0.tzst.tmp", dir);
  touch(p, "half a blob");
  snprintf(p, sizeof p, "%s/manifest.tmp", dir);
  touch(p, "half a manifest");
  snprintf(p, sizeof p, "%s/journal.77", dir);
  touch(p, "stale");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 2, 1) == TALUS_OK, "resume: %s",
        talus_last_error());
  CHECK(count_files(dir, ".tmp") == 0 && !exists(p), "tmp files and stale journal removed");
  CHECK(!talus_store_has(s, K(1, 4, 0)) && talus_store_has(s, K(1, 0, 0)), "index");
  talus_store_close(s);
}

/* drop_before removes older files and memory, keeps the rest. */
static void test_drop(talus_store_kind kind) {
  const char *dir = newdir(kind ? "drop_d" : "drop_m");
  talus_store *s;
  CHECK(talus_store_open(&s, kind, dir, "r", 3, 0) == TALUS_OK, "open");
  static float v[10000];
  fill_smooth(v, 10000, 5);
  size_t base = talus_store_memory_bytes(s);
  for (int step = 0; step <= 8; step += 4)
    for (int part = 0; part < 9; part++)
      CHECK(talus_store_put(s, K(1, step, part), v, sizeof v, 1) == TALUS_OK, "put");
  CHECK(talus_store_put(s, K(2, 0, 0), v, sizeof v, 1) == TALUS_OK, "put other tile");
  size_t full = talus_store_memory_bytes(s);
  if (kind == TALUS_STORE_MEMORY) CHECK(full >= base + 28 * sizeof v, "memory holds blobs");
  CHECK(talus_store_drop_before(s, 1, 8) == TALUS_OK, "drop");
  CHECK(!talus_store_has(s, K(1, 4, 3)) && talus_store_has(s, K(1, 8, 3)) &&
            talus_store_has(s, K(2, 0, 0)),
        "dropped only older steps of the tile");
  if (kind == TALUS_STORE_DISK) CHECK(count_files(dir, ".tzst") == 10, "files removed");
  if (kind == TALUS_STORE_MEMORY)
    CHECK(talus_store_memory_bytes(s) <= full - 18 * sizeof v, "memory freed");
  void *got;
  size_t m;
  CHECK(talus_store_get(s, K(1, 0, 0), &got, &m) == TALUS_ERR_IO, "dropped blob is missing");
  talus_store_close(s);
}

/* put_owned / get_ref / blob_alloc: the same bytes as put and get; the
 * memory store hands out its own blob (no copy); with recycling a dropped
 * blob's buffer is reused by the next allocation, and without it the drop
 * frees it. */
static void test_zero_copy(talus_store_kind kind) {
  const char *dir = newdir(kind ? "zc_d" : "zc_m");
  talus_store *s;
  CHECK(talus_store_open(&s, kind, dir, "r", 2, 0) == TALUS_OK, "open");
  talus_store_set_recycle(s, 1);
  static float v[5000];
  fill_smooth(v, 5000, 3);
  float *b = talus_store_blob_alloc(s, sizeof v);
  CHECK(b != NULL, "blob_alloc");
  memcpy(b, v, sizeof v);
  CHECK(talus_store_put_owned(s, K(1, 0, 0), b, sizeof v, 1) == TALUS_OK, "put_owned");
  CHECK(talus_store_put(s, K(1, 4, 0), v, sizeof v, 1) == TALUS_OK, "put");
  const void *got = NULL;
  void *hold = NULL;
  size_t n = 0;
  CHECK(talus_store_get_ref(s, K(1, 0, 0), &got, &n, &hold) == TALUS_OK && n == sizeof v &&
            !memcmp(got, v, n),
        "get_ref returns the bytes put");
  if (kind == TALUS_STORE_MEMORY) CHECK(got == b && !hold, "memory get_ref is the blob itself");
  if (kind == TALUS_STORE_DISK) CHECK(got == hold, "disk get_ref hands over a buffer");
  talus_store_blob_release(s, hold);
  CHECK(talus_store_get_ref(s, K(0, 0, 0), &got, &n, &hold) == TALUS_ERR_IO && !got && !hold,
        "get_ref of a missing key");
  CHECK(talus_store_drop_before(s, 1, 4) == TALUS_OK, "drop");
  void *again = talus_store_blob_alloc(s, sizeof v - 8);
  if (kind == TALUS_STORE_MEMORY) CHECK(again == b, "recycled buffer reused");
  talus_store_blob_release(s, again);
  talus_store_set_recycle(s, 0);
  size_t before = talus_store_memory_bytes(s);
  CHECK(talus_store_drop_before(s, 1, 8) == TALUS_OK, "drop all");
  if (kind == TALUS_STORE_MEMORY)
    CHECK(talus_store_memory_bytes(s) <= before - sizeof v, "without recycling a drop frees");
  talus_store_close(s);
}

/* Checks that tile 0's core at step 0 still holds "old". */
static void check_old_blob(talus_store *s) {
  void *got;
  size_t m;
  CHECK(talus_store_get(s, K(0, 0, 0), &got, &m) == TALUS_OK && m == 3 && !memcmp(got, "old", 3),
        "old blob intact");
  free(got);
}

/* Limits the size of files written to 64 KiB (a full disk's stand-in);
 * returns the limit to restore. */
static struct rlimit small_files(void) {
  struct rlimit old, lim;
  getrlimit(RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = 64 * 1024;
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &lim);
  return old;
}

/* A write failure (file size limit, like a full disk) is TALUS_ERR_IO,
 * leaves no temporary file and keeps the key's previous blob. */
static void test_write_failure(void) {
  const char *dir = newdir("full");
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 1, 0) == TALUS_OK, "open");
  CHECK(talus_store_put(s, K(0, 0, 0), "old", 3, 0) == TALUS_OK, "put");
  size_t n = 1 << 20;
  unsigned char *buf = malloc(n);
  fill_random(buf, n, 42);
  struct rlimit old = small_files();
  talus_status st = talus_store_put(s, K(0, 0, 0), buf, n, 0);
  setrlimit(RLIMIT_FSIZE, &old);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "cannot write"), "write failure: %s",
        talus_last_error());
  CHECK(count_files(dir, ".tmp") == 0, "temporary file removed");
  check_old_blob(s);
  free(buf);
  talus_store_close(s);
}

/* Parallel puts, gets, commits and drops of different tiles. */
static void test_concurrency(talus_store_kind kind) {
  enum { T = 16, PARTS = 9, N = 20000 };
  talus_store *s;
  CHECK(talus_store_open(&s, kind, newdir(kind ? "par_d" : "par_m"), "r", T, 0) == TALUS_OK,
        "open");
  int bad = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
  for (int t = 0; t < T; t++) {
    float *v = malloc(N * sizeof *v);
    for (int64_t step = 0; step < 3; step++) {
      for (int p = 0; p < PARTS; p++) {
        fill_smooth(v, N, (uint64_t)(t * 1000 + step * 10 + p));
        bad += talus_store_put(s, K(t, step, p), v, N * 4, 1) != TALUS_OK;
      }
      bad += talus_store_commit(s, t, step) != TALUS_OK;
      int nb = (t + 1) % T; /* a neighbour's blobs of the previous step, once committed */
      int ready = step > 0 && talus_store_committed(s, nb) >= step - 1;
      for (int p = 0; p < PARTS && ready; p++) {
        void *got = NULL;
        size_t m = 0;
        if (talus_store_get(s, K(nb, step - 1, p), &got, &m) != TALUS_OK) {
          bad++;
          continue;
        }
        fill_smooth(v, N, (uint64_t)(nb * 1000 + (step - 1) * 10 + p));
        bad += m != N * 4 || memcmp(got, v, m) != 0;
        free(got);
      }
    }
    free(v);
  }
  CHECK(bad == 0, "%d failures in parallel calls (%s)", bad, talus_last_error());
  for (int t = 0; t < T; t++)
    CHECK(talus_store_committed(s, t) == 2, "tile %d committed", t);
  talus_store_stats st;
  talus_store_get_stats(s, &st);
  CHECK(st.blobs_written == T * 3 * PARTS && st.raw_written == (uint64_t)T * 3 * PARTS * N * 4,
        "counters are exact under threads");
  talus_store_destroy(s);
}

/* ---- crash and resume ---- */

enum { CT = 6, CPARTS = 9, CK = 3, CSTEPS = 30, CN = 40000 };

/* Content of a blob of the simulated run: a function of its key only. */
static void crash_blob(float *v, int tile, int64_t step, int part) {
  fill_smooth(v, CN, (uint64_t)(tile * 100000 + step * 10 + part));
}

/* The simulated tiler: generations of CK steps over CT tiles, each tile
 * reading its neighbours' strips, putting its parts and committing; old
 * steps dropped once every tile finished the generation. Returns 0 when
 * finished, non-zero on a failure. */
static int crash_async; /* crash_run with write-behind and read-ahead (store.h) */

/* Reads ahead the strips tile t reads at step gen (an async crash_run). */
static void crash_prefetch(talus_store *s, int t, int64_t gen) {
  for (int p = 1; p < CPARTS && crash_async && gen > 0; p++)
    talus_store_prefetch(s, K((t + p) % CT, gen, p));
}

static int crash_run(const char *dir) {
  talus_store *s;
  char manifest[512];
  snprintf(manifest, sizeof manifest, "%s/manifest", dir);
  int resume = exists(manifest); /* killed before its first manifest: start afresh */
  if (talus_store_open(&s, TALUS_STORE_DISK, dir, "crash-run", CT, resume) != TALUS_OK) return 2;
  if (crash_async && talus_store_set_io_threads(s, 1) != TALUS_OK) return 2;
  float *v = malloc(CN * sizeof *v), *w = malloc(CN * sizeof *w);
  int rc = 0;
  for (int64_t gen = 0; gen < CSTEPS && !rc; gen += CK) {
    for (int t = 0; t < CT && !rc; t++) {
      if (talus_store_committed(s, t) >= gen + CK) continue;
      crash_prefetch(s, t, gen);
      if (gen > 0) /* neighbours' strips at step gen must all be there and intact */
        for (int p = 1; p < CPARTS && !rc; p++) {
          void *got;
          size_t m;
          int nb = (t + p) % CT;
          if (talus_store_get(s, K(nb, gen, p), &got, &m) != TALUS_OK)
            rc = 3;
          else {
            crash_blob(w, nb, gen, p);
            rc = m != CN * 4 || memcmp(got, w, m) ? 4 : 0;
            free(got);
          }
        }
      for (int p = 0; p < CPARTS && !rc; p++) {
        crash_blob(v, t, gen + CK, p);
        rc = talus_store_put(s, K(t, gen + CK, p), v, CN * 4, 1) != TALUS_OK ? 5 : 0;
      }
      if (!rc) rc = talus_store_commit(s, t, gen + CK) != TALUS_OK ? 6 : 0;
    }
    for (int t = 0; t < CT && !rc; t++)
      rc = talus_store_drop_before(s, t, gen + CK) != TALUS_OK ? 7 : 0;
  }
  if (!rc) rc = talus_store_flush(s) != TALUS_OK ? 8 : 0;
  if (rc) fprintf(stderr, "crash_run: rc %d: %s\n", rc, talus_last_error());
  free(v);
  free(w);
  talus_store_close(s);
  return rc;
}

/* Prints the committed steps after a kill (debugging aid). */
static void crash_trace(const char *dir) {
  talus_store *s;
  if (talus_store_open(&s, TALUS_STORE_DISK, dir, "crash-run", CT, 1) != TALUS_OK) {
    printf("  killed before the first manifest\n");
    return;
  }
  printf("  committed:");
  for (int t = 0; t < CT; t++)
    printf(" %lld", (long long)talus_store_committed(s, t));
  printf("\n");
  talus_store_close(s);
}

/* Kills the run at random points, resumes it until it finishes, and checks
 * the final blobs and that nothing older is left. */
static void test_crash_resume(int async) {
  const char *dir = newdir(async ? "crash_a" : "crash");
  crash_async = async;
  srand((unsigned)time(NULL));
  int kills = 0, finished = 0;
  for (int attempt = 0; attempt < 60 && !finished; attempt++) {
    pid_t pid = fork();
    if (pid == 0) _exit(crash_run(dir));
    usleep((useconds_t)(rand() % 150000));
    int status;
    if (waitpid(pid, &status, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      kills++;
      waitpid(pid, &status, 0);
      if (getenv("TALUS_STORE_TRACE")) crash_trace(dir);
      continue;
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run failed: status %d", status);
    finished = WIFEXITED(status);
  }
  if (!finished) CHECK(crash_run(dir) == 0, "final run");
  printf("crash test%s: %d kills before the run finished\n", async ? " (write-behind)" : "", kills);
  CHECK(kills > 0, "the run was killed at least once");
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "crash-run", CT, 1) == TALUS_OK, "reopen");
  float *v = malloc(CN * sizeof *v);
  for (int t = 0; t < CT; t++) {
    CHECK(talus_store_committed(s, t) == CSTEPS, "tile %d finished", t);
    for (int p = 0; p < CPARTS; p++) {
      void *got;
      size_t m;
      crash_blob(v, t, CSTEPS, p);
      CHECK(talus_store_get(s, K(t, CSTEPS, p), &got, &m) == TALUS_OK && m == CN * 4 &&
                memcmp(got, v, m) == 0,
            "final blob t%d p%d", t, p);
      free(got);
    }
  }
  CHECK(count_files(dir, ".tzst") == CT * CPARTS && count_files(dir, ".tmp") == 0,
        "only the final generation is left: %d files", count_files(dir, ".tzst"));
  free(v);
  talus_store_destroy(s);
}

/* Bytes of a whole file (malloc'd), NULL when unreadable. */
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
  *n = b ? fread(b, 1, (size_t)len, f) : 0;
  fclose(f);
  return b;
}

/* 1 when every file of dir a has a byte-identical twin in dir b and both
 * hold as many files. */
static int same_files(const char *a, const char *b) {
  DIR *d = opendir(a);
  int same = d && count_files(a, "") == count_files(b, "");
  for (struct dirent *e; same && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char pa[512], pb[512];
    size_t na = 0, nb = 0;
    snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
    snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
    unsigned char *x = slurp(pa, &na), *y = slurp(pb, &nb);
    same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
  }
  if (d) closedir(d);
  return same;
}

/* The calls of a small tiler run (puts of large and small blobs, commits,
 * gets and read-aheads of what was just put, drops) on store s. */
static void async_calls(talus_store *s, float *v, size_t n) {
  for (int64_t step = 0; step <= 4; step += 2)
    for (int t = 0; t < 3; t++) {
      for (int p = 0; p < 3; p++) {
        fill_smooth(v, p ? n / 64 : n, (uint64_t)(t * 100 + step * 10 + p));
        CHECK(talus_store_put(s, K(t, step, p), v, (p ? n / 64 : n) * 4, 1) == TALUS_OK,
              "put t%d s%d p%d: %s", t, (int)step, p, talus_last_error());
      }
      CHECK(talus_store_commit(s, t, step) == TALUS_OK && talus_store_committed(s, t) == step,
            "commit t%d s%d", t, (int)step);
      talus_store_prefetch(s, K(t, step, 1));
      talus_store_prefetch(s, K(t, step, 0));
      const void *got;
      void *hold;
      size_t m;
      fill_smooth(v, n, (uint64_t)(t * 100 + step * 10));
      CHECK(talus_store_get_ref(s, K(t, step, 0), &got, &m, &hold) == TALUS_OK && m == n * 4 &&
                !memcmp(got, v, m),
            "the core just put reads back t%d s%d", t, (int)step);
      talus_store_blob_release(s, hold);
      if (step > 0) CHECK(talus_store_drop_before(s, t, step) == TALUS_OK, "drop");
      CHECK(!talus_store_has(s, K(t, step - 2, 0)), "dropped t%d s%d gone", t, (int)step - 2);
    }
}

/* Write-behind and read-ahead (store.h): the same calls give the same
 * files, byte for byte, as a synchronous store; reads see queued writes. */
static void test_async_same_files(void) {
  const char *da = newdir("async_a"), *ds = newdir("async_s");
  size_t n = 5 * (TALUS_STORE_CHUNK / 4) + 77; /* several chunks and zstd workers */
  float *v = malloc(n * sizeof *v);
  talus_store *a, *s;
  CHECK(talus_store_open(&a, TALUS_STORE_DISK, da, "same", 3, 0) == TALUS_OK, "open async");
  CHECK(talus_store_set_io_threads(a, 2) == TALUS_OK, "io threads");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, ds, "same", 3, 0) == TALUS_OK, "open sync");
  async_calls(a, v, n);
  async_calls(s, v, n);
  CHECK(talus_store_flush(a) == TALUS_OK, "flush: %s", talus_last_error());
  CHECK(count_files(da, ".tzst") == 9, "one generation left: %d", count_files(da, ".tzst"));
  CHECK(same_files(da, ds), "write-behind writes the synchronous store's files");
  talus_store_close(a);
  talus_store_close(s);
  CHECK(same_files(da, ds), "and the same manifest after close");
  free(v);
}

/* A queued put that fails fails the store: the commit after it is never
 * recorded, the error reaches the caller (here at the commit or flush),
 * and a resume finds the tile at its old step with its old blob. */
static void test_async_write_failure(void) {
  const char *dir = newdir("afull");
  talus_store *s;
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 1, 0) == TALUS_OK, "open");
  CHECK(talus_store_set_io_threads(s, 1) == TALUS_OK, "io threads");
  CHECK(talus_store_put(s, K(0, 0, 0), "old", 3, 0) == TALUS_OK, "put");
  CHECK(talus_store_commit(s, 0, 0) == TALUS_OK && talus_store_flush(s) == TALUS_OK, "commit 0");
  size_t n = 1 << 20;
  unsigned char *buf = malloc(n);
  fill_random(buf, n, 42);
  struct rlimit old = small_files();
  talus_status put = talus_store_put(s, K(0, 2, 0), buf, n, 0);
  talus_status commit = put ? put : talus_store_commit(s, 0, 2);
  talus_status st = commit ? commit : talus_store_flush(s);
  setrlimit(RLIMIT_FSIZE, &old);
  CHECK(st == TALUS_ERR_IO && strstr(talus_last_error(), "cannot write"),
        "the queued write's failure comes back: %s", talus_last_error());
  CHECK(talus_store_flush(s) == TALUS_ERR_IO, "and stays");
  talus_store_close(s);
  CHECK(count_files(dir, ".tmp") == 0, "temporary file removed");
  CHECK(talus_store_open(&s, TALUS_STORE_DISK, dir, "r", 1, 1) == TALUS_OK, "resume");
  CHECK(talus_store_committed(s, 0) == 0, "the commit after the failed put never happened: %lld",
        (long long)talus_store_committed(s, 0));
  check_old_blob(s);
  free(buf);
  talus_store_close(s);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/talus_store_XXXXXX");
  if (!mkdtemp(root)) return check_skip("test_store", "cannot create a temporary directory");
  test_crc();
  for (int kind = 0; kind < 2; kind++) {
    test_round_trip((talus_store_kind)kind);
    test_missing((talus_store_kind)kind);
    test_drop((talus_store_kind)kind);
    test_concurrency((talus_store_kind)kind);
    test_zero_copy((talus_store_kind)kind);
  }
  test_compression_and_stats();
  test_corrupt();
  test_manifest();
  test_directories();
  test_leftovers();
  test_write_failure();
  test_crash_resume(0);
  test_async_same_files();
  test_async_write_failure();
  test_crash_resume(1);
  const char *dirs[] = {"crash_a", "async_a",      "async_s", "afull", "rt_disk", "rt_mem",
                        "cmp",     "miss_d",       "drop_d",  "par_d", "corrupt", "manifest",
                        "user",    "empty/nested", "empty",   "mixed", "left",    "full",
                        "crash",   "zc_d",         "zc_m"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    rm_flat(newdir(dirs[i]));
  rmdir(root);
  return check_report("test_store");
}
