/*
 * test_alloc.c — talus_alloc / talus_free (common.h): blocks small and
 * large (the mapped ones, 1 MiB and more) are zero, 64-byte aligned (large
 * ones 2 MiB aligned), writable to their last byte, and given back; 0
 * bytes gives a block; NULL frees nothing; sizes that overflow fail with
 * TALUS_ERR_NOMEM. All of it again with TALUS_HUGEPAGES=1 (huge pages
 * asked for); whether the kernel backed a large block with them is
 * printed, not checked (it depends on the machine's THP setting and free
 * memory).
 */
#include "check.h"
#include "common/common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 if the n bytes at p are all zero. */
static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* Allocates n bytes, checks zero and alignment, writes every byte, frees. */
static void block(size_t n, size_t align) {
  unsigned char *p = NULL;
  talus_status st = talus_alloc((void **)&p, n, "test block");
  CHECK(st == TALUS_OK && p, "%zu bytes: status %d", n, (int)st);
  if (!p) return;
  CHECK((uintptr_t)p % align == 0, "%zu bytes: %p not %zu-byte aligned", n, (void *)p, align);
  CHECK(all_zero(p, n), "%zu bytes: not zero", n);
  memset(p, 0xa5, n ? n : 1);
  CHECK(n < 2 || (p[0] == 0xa5 && p[n - 1] == 0xa5), "%zu bytes: not writable", n);
  talus_free(p);
}

/* AnonHugePages of this process [kB], or -1. */
static long huge_kb(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

/* Every block size once. */
static void blocks(void) {
  block(0, 64);
  block(1, 64);
  block(1000, 64);
  block(((size_t)1 << 20) - 64, 64); /* the largest heap block */
  block((size_t)1 << 20, (size_t)2 << 20);
  block(((size_t)3 << 20) + 5, (size_t)2 << 20);
  /* a freed large block's pages come back zero in the next one */
  for (int i = 0; i < 3; i++)
    block((size_t)8 << 20, (size_t)2 << 20);
}

int main(void) {
  blocks();
  setenv("TALUS_HUGEPAGES", "1", 1);
  blocks();
  talus_free(NULL);
  void *p = (void *)1;
  CHECK(talus_alloc(&p, SIZE_MAX - 10, "overflow") == TALUS_ERR_NOMEM && p == NULL,
        "a size that overflows fails with TALUS_ERR_NOMEM and NULL");
  /* huge pages: informational */
  unsigned char *h = NULL;
  long before = huge_kb();
  if (talus_alloc((void **)&h, (size_t)16 << 20, "huge") == TALUS_OK) {
    memset(h, 1, (size_t)16 << 20);
    printf("test_alloc: 16 MiB block written: AnonHugePages %ld -> %ld kB\n", before, huge_kb());
    talus_free(h);
  }
  return check_report("test_alloc");
}
