/*
 * fuzz_driver.c — main() for a fuzz target without libFuzzer: runs the
 * target's seeds, the files named on the command line, then -n inputs made
 * by deterministic mutations of them (bit flips, byte values, inserts,
 * deletes, repeats, splices, truncation), seeded by -s. A violated
 * invariant aborts (FUZZ_CHECK); ctest runs it as a short regression test,
 * and -n 1000000 makes it a poor man's fuzzer where clang is absent.
 *   fuzz_<area> [-n N] [-s SEED] [-w DIR] [FILE...]   (-w: write the seeds)
 */
#include "fuzz.h"

#include <string.h>

#define DRIVER_MAX_SEEDS 256
#define DRIVER_MAX_INPUT (1 << 20)

typedef struct driver {
  uint8_t *seed[DRIVER_MAX_SEEDS];
  size_t len[DRIVER_MAX_SEEDS];
  int n;
  uint64_t rng;
} driver;

static void driver_add(const void *data, size_t size, void *user) {
  driver *d = user;
  if (d->n >= DRIVER_MAX_SEEDS || size > DRIVER_MAX_INPUT) return;
  d->seed[d->n] = malloc(size ? size : 1);
  FUZZ_CHECK(d->seed[d->n], "no memory");
  memcpy(d->seed[d->n], data, size);
  d->len[d->n++] = size;
}

static uint64_t driver_next(driver *d) {
  d->rng ^= d->rng << 13, d->rng ^= d->rng >> 7, d->rng ^= d->rng << 17;
  return d->rng;
}

static size_t driver_below(driver *d, size_t n) {
  return n ? (size_t)(driver_next(d) % n) : 0;
}

/* One mutation of buf[*len] in place (capacity DRIVER_MAX_INPUT). */
static void driver_mutate(driver *d, uint8_t *buf, size_t *len) {
  static const uint8_t special[] = {0x00, 0xff, 0x7f, 0x80, 0x01, '=', '[', ']', '\n', '#', ';'};
  size_t n = *len, at = driver_below(d, n + 1), span = 1 + driver_below(d, 16);
  switch (driver_next(d) % 7) {
  case 0:
    if (n) buf[at % n] ^= (uint8_t)(1u << driver_below(d, 8));
    break;
  case 1:
    if (n) buf[at % n] = special[driver_below(d, sizeof special)];
    break;
  case 2:
    if (n) buf[at % n] = (uint8_t)driver_next(d);
    break;
  case 3: /* insert random bytes */
    if (n + span > DRIVER_MAX_INPUT) break;
    memmove(buf + at + span, buf + at, n - at);
    for (size_t i = 0; i < span; i++)
      buf[at + i] = (uint8_t)driver_next(d);
    *len = n + span;
    break;
  case 4: /* delete a range */
    if (at + span > n) span = n - at;
    memmove(buf + at, buf + at + span, n - at - span);
    *len = n - span;
    break;
  case 5: { /* splice a piece of another seed */
    int s = (int)driver_below(d, (size_t)d->n);
    size_t from = driver_below(d, d->len[s]), k = driver_below(d, 64);
    if (from + k > d->len[s]) k = d->len[s] - from;
    if (at + k > DRIVER_MAX_INPUT) break;
    memcpy(buf + at, d->seed[s] + from, k);
    if (at + k > n) *len = at + k;
    break;
  }
  default:
    *len = at; /* truncate */
  }
}

static int driver_run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return fprintf(stderr, "fuzz: cannot open '%s'\n", path), 1;
  uint8_t *buf = malloc(DRIVER_MAX_INPUT);
  size_t n = buf ? fread(buf, 1, DRIVER_MAX_INPUT, f) : 0;
  fclose(f);
  if (buf) LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return buf ? 0 : 1;
}

static void driver_write_seeds(const driver *d, const char *dir) {
  for (int i = 0; i < d->n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed%03d", dir, i);
    FILE *f = fopen(path, "wb");
    if (f) fwrite(d->seed[i], 1, d->len[i], f), fclose(f);
  }
}

int main(int argc, char **argv) {
  static driver d;
  long iterations = 2000;
  const char *write_dir = NULL;
  d.rng = 0x9e3779b97f4a7c15ull;
  fuzz_seeds(driver_add, &d);
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc)
      iterations = atol(argv[++i]);
    else if (!strcmp(argv[i], "-s") && i + 1 < argc)
      d.rng ^= strtoull(argv[++i], NULL, 0) * 2 + 1;
    else if (!strcmp(argv[i], "-w") && i + 1 < argc)
      write_dir = argv[++i];
    else
      bad |= driver_run_file(argv[i]);
  }
  FUZZ_CHECK(d.n > 0, "the target has no seeds");
  if (write_dir) driver_write_seeds(&d, write_dir);
  for (int i = 0; i < d.n; i++)
    LLVMFuzzerTestOneInput(d.seed[i], d.len[i]);
  uint8_t *buf = malloc(DRIVER_MAX_INPUT);
  FUZZ_CHECK(buf, "no memory");
  for (long it = 0; it < iterations; it++) {
    int s = (int)driver_below(&d, (size_t)d.n);
    size_t len = d.len[s];
    memcpy(buf, d.seed[s], len);
    for (int m = 1 + (int)driver_below(&d, 4); m > 0; m--)
      driver_mutate(&d, buf, &len);
    LLVMFuzzerTestOneInput(buf, len);
  }
  printf("fuzz: %d seeds and %ld mutated inputs, every invariant held\n", d.n, iterations);
  free(buf);
  for (int i = 0; i < d.n; i++)
    free(d.seed[i]);
  return bad;
}
