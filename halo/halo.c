/*
 * halo.c — block cut/paste of persistent tile fields (format in halo.h).
 */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

#define HALO_MAGIC    0x4B4C4254u /* "TBLK" */
#define HALO_FIELDS   11          /* B s w C r D p fR fU fL fD */
#define HALO_MAX_SIDE (1 << 20)   /* a block side [cells]; keeps sizes from overflowing */
#define HALO_MAX_POS  (1 << 30)   /* |x0|, |y0|: x0 + w stays an int */

typedef struct halo_header {
  uint32_t magic;
  int32_t x0, y0, w, h;
  int32_t layers;
  int32_t flags; /* bit 0: hardness present */
  int32_t reserved;
} halo_header;

talus_rect talus_rect_intersect(talus_rect a, talus_rect b) {
  int32_t x0 = a.x0 > b.x0 ? a.x0 : b.x0, y0 = a.y0 > b.y0 ? a.y0 : b.y0;
  int32_t x1 = a.x0 + a.w < b.x0 + b.w ? a.x0 + a.w : b.x0 + b.w;
  int32_t y1 = a.y0 + a.h < b.y0 + b.h ? a.y0 + a.h : b.y0 + b.h;
  talus_rect r = {x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
  if (!r.w || !r.h) r.w = r.h = 0;
  return r;
}

/* Plane of field f of layer k in tile t. */
static float *halo_plane(const talus_tile *t, int f, int k) {
  float *planes[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
  if (f < 7) return planes[f] + (size_t)k * t->plane;
  return t->f + ((size_t)k * 4 + (size_t)(f - 7)) * t->plane;
}

static size_t halo_bytes(int w, int h, int layers, int hard) {
  size_t cells = (size_t)w * h, head = sizeof(halo_header) + ((2 * cells + 3) & ~(size_t)3);
  return head + 4 * cells * ((size_t)layers * HALO_FIELDS + (hard ? 1u : 0u));
}

static int halo_layers_in(const talus_tile *t, talus_rect r) {
  int L = 1;
  for (int y = r.y0; y < r.y0 + r.h; y++)
    for (int x = r.x0; x < r.x0 + r.w; x++) {
      int c = t->count[talus_idx(t, x - t->buf.x0, y - t->buf.y0)];
      if (c > L) L = c;
    }
  return L;
}

talus_status halo_block_cut(const talus_tile *t, talus_rect r, void **out, size_t *n) {
  *out = NULL;
  *n = 0;
  talus_rect in = talus_rect_intersect(r, t->buf);
  if (in.w != r.w || in.h != r.h || !r.w)
    return talus_fail(TALUS_ERR_INTERNAL, "halo", "cut %dx%d+%d+%d outside tile", r.w, r.h, r.x0,
                      r.y0);
  int L = halo_layers_in(t, r), hard = t->hard != NULL;
  size_t bytes = halo_bytes(r.w, r.h, L, hard), cells = (size_t)r.w * r.h;
  unsigned char *b = calloc(1, bytes);
  if (!b) return talus_fail(TALUS_ERR_NOMEM, "halo", "no memory for a %zu-byte block", bytes);
  halo_header hd = {HALO_MAGIC, r.x0, r.y0, r.w, r.h, L, hard, 0};
  memcpy(b, &hd, sizeof hd);
  uint8_t *cnt = b + sizeof hd, *msk = cnt + cells;
  float *fl = (float *)(b + sizeof hd + ((2 * cells + 3) & ~(size_t)3));
  for (int j = 0; j < r.h; j++)
    for (int i = 0; i < r.w; i++) {
      size_t idx = talus_idx(t, r.x0 - t->buf.x0 + i, r.y0 - t->buf.y0 + j),
             c = (size_t)j * r.w + i;
      cnt[c] = t->count[idx];
      msk[c] = t->mask[idx];
      for (int k = 0; k < t->count[idx]; k++)
        for (int f = 0; f < HALO_FIELDS; f++)
          fl[((size_t)k * HALO_FIELDS + f) * cells + c] = halo_plane(t, f, k)[idx];
      if (hard) fl[(size_t)L * HALO_FIELDS * cells + c] = t->hard[idx];
    }
  *out = b;
  *n = bytes;
  return TALUS_OK;
}

int halo_block_rect(const void *data, size_t n, talus_rect *r) {
  halo_header hd;
  if (!data || n < sizeof hd) return 0;
  memcpy(&hd, data, sizeof hd);
  if (hd.magic != HALO_MAGIC || hd.w <= 0 || hd.h <= 0 || hd.w > HALO_MAX_SIDE ||
      hd.h > HALO_MAX_SIDE || hd.x0 < -HALO_MAX_POS || hd.x0 > HALO_MAX_POS ||
      hd.y0 < -HALO_MAX_POS || hd.y0 > HALO_MAX_POS || hd.layers < 1 || hd.layers > TALUS_NZ_MAX ||
      n != halo_bytes(hd.w, hd.h, hd.layers, hd.flags & 1))
    return 0;
  *r = (talus_rect){hd.x0, hd.y0, hd.w, hd.h};
  return 1;
}

/* 1 when every cell of the block holds 1..layers columns (a tile's
 * invariant): a count read from a damaged block must never index past
 * either buffer. */
static int halo_counts_valid(const unsigned char *cnt, size_t cells, int layers) {
  for (size_t c = 0; c < cells; c++)
    if (cnt[c] < 1 || cnt[c] > layers) return 0;
  return 1;
}

talus_status halo_block_paste(talus_tile *t, const void *data, size_t n) {
  talus_rect r;
  if (!halo_block_rect(data, n, &r))
    return talus_fail(TALUS_ERR_FORMAT, "halo", "malformed block of %zu bytes", n);
  halo_header hd;
  memcpy(&hd, data, sizeof hd);
  if (hd.layers > t->nz || ((hd.flags & 1) && !t->hard))
    return talus_fail(TALUS_ERR_FORMAT, "halo", "block has %d layers, tile holds %d", hd.layers,
                      t->nz);
  if (!halo_counts_valid((const unsigned char *)data + sizeof hd, (size_t)r.w * r.h, hd.layers))
    return talus_fail(TALUS_ERR_FORMAT, "halo", "block has a column count outside 1..%d",
                      hd.layers);
  talus_rect in = talus_rect_intersect(r, t->buf);
  size_t cells = (size_t)r.w * r.h;
  const unsigned char *b = data;
  const uint8_t *cnt = b + sizeof hd, *msk = cnt + cells;
  const float *fl = (const float *)(b + sizeof hd + ((2 * cells + 3) & ~(size_t)3));
  for (int y = in.y0; y < in.y0 + in.h; y++)
    for (int x = in.x0; x < in.x0 + in.w; x++) {
      size_t idx = talus_idx(t, x - t->buf.x0, y - t->buf.y0);
      size_t c = (size_t)(y - r.y0) * r.w + (size_t)(x - r.x0);
      t->count[idx] = cnt[c];
      t->mask[idx] = msk[c];
      for (int k = 0; k < cnt[c]; k++)
        for (int f = 0; f < HALO_FIELDS; f++)
          halo_plane(t, f, k)[idx] = fl[((size_t)k * HALO_FIELDS + f) * cells + c];
      if (hd.flags & 1) t->hard[idx] = fl[(size_t)hd.layers * HALO_FIELDS * cells + c];
    }
  return TALUS_OK;
}

talus_rect halo_strip_rect(talus_rect c, int H, int part) {
  int hw = H < c.w ? H : c.w, hh = H < c.h ? H : c.h;
  int xr = c.x0 + c.w - hw, yu = c.y0 + c.h - hh;
  switch (part) {
  case 1:
    return (talus_rect){xr, c.y0, hw, c.h}; /* R side */
  case 2:
    return (talus_rect){c.x0, yu, c.w, hh}; /* U side */
  case 3:
    return (talus_rect){c.x0, c.y0, hw, c.h}; /* L side */
  case 4:
    return (talus_rect){c.x0, c.y0, c.w, hh}; /* D side */
  case 5:
    return (talus_rect){xr, yu, hw, hh}; /* RU corner */
  case 6:
    return (talus_rect){c.x0, yu, hw, hh}; /* LU corner */
  case 7:
    return (talus_rect){c.x0, c.y0, hw, hh}; /* LD corner */
  case 8:
    return (talus_rect){xr, c.y0, hw, hh}; /* RD corner */
  default:
    return c;
  }
}

int halo_strip_facing(int dx, int dy) {
  /* A receiver to the right (dx = +1) needs the publisher's R side, etc. */
  if (dy == 0) return dx > 0 ? 1 : 3;
  if (dx == 0) return dy > 0 ? 2 : 4;
  if (dx > 0) return dy > 0 ? 5 : 8;
  return dy > 0 ? 6 : 7;
}

talus_status halo_block_copy(const talus_tile *from, talus_rect r, talus_tile *to) {
  void *blob = NULL;
  size_t n = 0;
  talus_status st = halo_block_cut(from, r, &blob, &n);
  if (!st) st = halo_block_paste(to, blob, n);
  free(blob);
  return st;
}
