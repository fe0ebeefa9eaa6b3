/*
 * fuzz_halo.c — halo blocks (halo_block_rect / halo_block_paste) on
 * arbitrary bytes. Invariants: a malformed block is refused with
 * TALUS_ERR_FORMAT and a message and the tile is left untouched; an
 * accepted block leaves every cell with 1..nz columns, and cutting the
 * pasted rectangle again gives a block that pastes to the same bytes.
 */
#include "fuzz.h"
#include "halo/halo.h"
#include "app/scenes.h"

#include <string.h>

#define HALO_NZ 4

/* The fixed scene blocks come from: rivers-rain, 24², 4 layers. */
static talus_tile *halo_scene(void) {
  static talus_tile *t;
  if (!t)
    FUZZ_CHECK(talus_scene_build("rivers-rain", 24, HALO_NZ, 3, &t, NULL) == TALUS_OK, "scene: %s",
               talus_last_error());
  return t;
}

/* A tile whose buffer overlaps the scene's partly (so pastes clip). */
static talus_tile *halo_target(void) {
  talus_tile *t = NULL;
  FUZZ_CHECK(talus_tile_create(&t, (talus_rect){8, 4, 20, 16}, HALO_NZ, 1) == TALUS_OK,
             "create: %s", talus_last_error());
  return t;
}

/* A cut of t's whole buffer: the form in which two tiles compare. */
static void *halo_snapshot(const talus_tile *t, size_t *n) {
  void *b = NULL;
  FUZZ_CHECK(halo_block_cut(t, t->buf, &b, n) == TALUS_OK, "cut: %s", talus_last_error());
  return b;
}

static void halo_check_accepted(const talus_tile *t, talus_rect r) {
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++) {
      int c = t->count[talus_idx(t, x, y)];
      FUZZ_CHECK(c >= 1 && c <= t->nz, "cell (%d,%d) holds %d columns", x, y, c);
    }
  talus_rect in = talus_rect_intersect(r, t->buf);
  if (!in.w) return;
  void *again = NULL, *third = NULL;
  size_t n2 = 0, n3 = 0;
  FUZZ_CHECK(halo_block_cut(t, in, &again, &n2) == TALUS_OK, "re-cut: %s", talus_last_error());
  talus_tile *u = halo_target();
  FUZZ_CHECK(halo_block_paste(u, again, n2) == TALUS_OK, "re-paste: %s", talus_last_error());
  FUZZ_CHECK(halo_block_cut(u, in, &third, &n3) == TALUS_OK, "third cut");
  FUZZ_CHECK(n2 == n3 && !memcmp(again, third, n2), "a pasted block does not cut back the same");
  free(again);
  free(third);
  talus_tile_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  talus_tile *t = halo_target();
  size_t n0 = 0;
  void *before = halo_snapshot(t, &n0);
  talus_rect r;
  int wellformed = halo_block_rect(data, size, &r);
  talus_error_clear();
  talus_status st = halo_block_paste(t, data, size);
  FUZZ_CHECK(st == TALUS_OK || st == TALUS_ERR_FORMAT, "paste: status %d", (int)st);
  FUZZ_CHECK(!st || talus_last_error()[0], "refused without a message");
  FUZZ_CHECK(!st || !wellformed || st == TALUS_ERR_FORMAT, "well-formed block refused oddly");
  if (st) {
    size_t n1 = 0;
    void *after = halo_snapshot(t, &n1);
    FUZZ_CHECK(n0 == n1 && !memcmp(before, after, n0), "a refused block changed the tile");
    free(after);
  } else {
    FUZZ_CHECK(wellformed, "a block halo_block_rect calls malformed was pasted");
    halo_check_accepted(t, r);
  }
  free(before);
  talus_tile_free(t);
  return 0;
}

/* Seeds: cuts of the scene — whole, clipped, strips, single cells. */
void fuzz_seeds(fuzz_add_fn add, void *user) {
  const talus_rect rects[] = {{0, 0, 24, 24}, {6, 2, 10, 7}, {20, 0, 4, 24},  {0, 20, 24, 4},
                              {13, 9, 1, 1},  {0, 0, 3, 3},  {10, 10, 14, 14}};
  for (size_t i = 0; i < sizeof rects / sizeof rects[0]; i++) {
    void *b = NULL;
    size_t n = 0;
    FUZZ_CHECK(halo_block_cut(halo_scene(), rects[i], &b, &n) == TALUS_OK, "seed cut");
    add(b, n, user);
    free(b);
  }
}
