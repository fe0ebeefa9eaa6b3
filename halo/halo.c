/*
 * halo.c — block cut/paste of persistent tile fields (format in block.h).
 *
 * Both directions copy one row of one plane at a time (the count and mask
 * rows, each layer's 11 float planes, hardness): the inner loops are
 * selects on the row's counts the compiler vectorises. The loop runs plane
 * by plane, rows inner, and large blocks share its (plane, row) pairs
 * among the OpenMP threads in contiguous ranges: each thread streams long
 * runs of one plane rather than hopping across ~24 planes every row,
 * which the hardware prefetchers follow badly (blocks are disjoint in the
 * destination, so no two pairs write the same bytes).
 */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

#define HALO_MAX_SIDE (1 << 20) /* a block side [cells]; keeps sizes from overflowing */
#define HALO_MAX_POS  (1 << 30) /* |x0|, |y0|: x0 + w stays an int */

/* Plane of field f (HALO_PLANE_*) of layer k in tile t. */
static float *halo_plane(const talus_tile *t, int f, int k) {
  return HALO_TILE_PLANE(t, f, k);
}

/* Highest column count inside global rectangle r of t (at least 1). */
static int halo_layers_in(const talus_tile *t, talus_rect r) {
  int L = 1;
  for (int y = r.y0; y < r.y0 + r.h; y++) {
    const uint8_t *c = t->count + talus_idx(t, r.x0 - t->buf.x0, y - t->buf.y0);
    for (int x = 0; x < r.w; x++)
      L = c[x] > L ? c[x] : L;
  }
  return L;
}

/* Where a block's count, mask and float planes start. */
typedef struct halo_view {
  halo_header hd;
  size_t cells;
  const uint8_t *cnt, *msk;
  const float *fl;
} halo_view;

static halo_view halo_view_of(const void *data) {
  halo_view v;
  memcpy(&v.hd, data, sizeof v.hd);
  v.cells = (size_t)v.hd.w * v.hd.h;
  v.cnt = (const uint8_t *)data + sizeof v.hd;
  v.msk = v.cnt + v.cells;
  v.fl = (const float *)((const unsigned char *)data + halo_planes_offset(v.cells));
  return v;
}

/* Parallel loops pay off only on large blocks. */
#define HALO_PAR_CELLS 65536

/* The layers the block of global rectangle r of t carries; 0 when r is
 * empty or not inside t->buf. */
static int halo_block_layers(const talus_tile *t, talus_rect r) {
  talus_rect in = talus_rect_intersect(r, t->buf);
  return in.w == r.w && in.h == r.h && r.w ? halo_layers_in(t, r) : 0;
}

size_t halo_block_size(const talus_tile *t, talus_rect r) {
  int L = halo_block_layers(t, r);
  return L ? halo_block_bytes(r.w, r.h, L, HALO_TILE_FLAGS(t)) : 0;
}

_Static_assert((int)HALO_ACC_PLANES == (int)TALUS_ACC_PLANES,
               "block.h counts the accumulator planes");

/* The tile plane behind the tile's optional float plane e (0.. in
 * HALO_TILE_FLAGS order: hardness, the accumulators, the diagonal
 * fluxes); *flag gets its group's flag and *j its index in the group. */
static float *halo_extra_of(const talus_tile *t, int e, int *flag, int *j) {
  int tf = HALO_TILE_FLAGS(t);
  if (tf & HALO_FLAG_HARD) {
    if (e == 0) return *flag = HALO_FLAG_HARD, *j = 0, t->hard;
    e--;
  }
  if (tf & HALO_FLAG_ACC) {
    if (e < HALO_ACC_PLANES) return *flag = HALO_FLAG_ACC, *j = e, t->acc + (size_t)e * t->plane;
    e -= HALO_ACC_PLANES;
  }
  return *flag = HALO_FLAG_FDIAG, *j = e, t->fd + (size_t)e * t->plane;
}

/* The tile plane behind optional float plane q (past the layers' planes)
 * of a block cut from t with L layers. */
static float *halo_extra_plane(const talus_tile *t, int L, int q) {
  int flag, j;
  return halo_extra_of(t, q - 1 - L * HALO_FIELDS, &flag, &j);
}

/* Copies row j of plane q of rectangle r of t into block v: q = 0 the
 * count and mask bytes, 1 .. L·11 the float planes of layers below L
 * (slots at or above a cell's count become 0), then hardness and the
 * accumulators (halo_extra_plane). */
static void halo_cut_row(const talus_tile *t, talus_rect r, int j, halo_view v, int L, int q) {
  size_t idx = talus_idx(t, r.x0 - t->buf.x0, r.y0 - t->buf.y0 + j), c = (size_t)j * r.w;
  const uint8_t *cnt = t->count + idx;
  if (q == 0) {
    memcpy((uint8_t *)v.cnt + c, cnt, (size_t)r.w);
    memcpy((uint8_t *)v.msk + c, t->mask + idx, (size_t)r.w);
  } else if (q <= L * HALO_FIELDS) {
    int k = (q - 1) / HALO_FIELDS, f = (q - 1) % HALO_FIELDS;
    const float *src = halo_plane(t, f, k) + idx;
    float *dst = (float *)v.fl + (size_t)(q - 1) * v.cells + c;
    for (int i = 0; i < r.w; i++)
      dst[i] = cnt[i] > k ? src[i] : 0.0f;
  } else {
    memcpy((float *)v.fl + (size_t)(q - 1) * v.cells + c, halo_extra_plane(t, L, q) + idx,
           (size_t)r.w * 4);
  }
}

void halo_block_header(void *dst, talus_rect r, int layers, int flags) {
  halo_header hd = halo_header_of(r.x0, r.y0, r.w, r.h, layers, flags);
  memcpy(dst, &hd, sizeof hd);
}

talus_status halo_block_write(const talus_tile *t, talus_rect r, void *dst, size_t n) {
  int L = halo_block_layers(t, r);
  if (!L || n < halo_block_bytes(r.w, r.h, L, HALO_TILE_FLAGS(t)))
    return talus_fail(TALUS_ERR_INTERNAL, "halo", "cut %dx%d+%d+%d outside tile or short buffer",
                      r.w, r.h, r.x0, r.y0);
  halo_block_header(dst, r, L, HALO_TILE_FLAGS(t));
  halo_view v = halo_view_of(dst);
  unsigned char *pad = (unsigned char *)dst + sizeof v.hd + 2 * v.cells;
  memset(pad, 0, (size_t)((const unsigned char *)v.fl - pad));
  int planes = 1 + halo_float_planes(L, HALO_TILE_FLAGS(t));
#pragma omp parallel for collapse(2) schedule(static) if (v.cells >= HALO_PAR_CELLS)
  for (int q = 0; q < planes; q++)
    for (int j = 0; j < r.h; j++)
      halo_cut_row(t, r, j, v, L, q);
  return TALUS_OK;
}

talus_status halo_block_cut(const talus_tile *t, talus_rect r, void **out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t bytes = halo_block_size(t, r);
  if (!bytes)
    return talus_fail(TALUS_ERR_INTERNAL, "halo", "cut %dx%d+%d+%d outside tile", r.w, r.h, r.x0,
                      r.y0);
  void *b = malloc(bytes);
  if (!b) return talus_fail(TALUS_ERR_NOMEM, "halo", "no memory for a %zu-byte block", bytes);
  talus_status st = halo_block_write(t, r, b, bytes);
  if (st) {
    free(b);
    return st;
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
      (hd.flags & ~HALO_FLAGS_ALL) || n != halo_block_bytes(hd.w, hd.h, hd.layers, hd.flags))
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

/* Value a reset tile holds in slot k of field f (talus_tile_reset). */
static float halo_reset_value(int f, int k) {
  return f == HALO_PLANE_C && k == 0 ? TALUS_TOP : 0.0f;
}

/* Layers a paste writes: the block's, or with fill every layer of t. */
static int halo_paste_layers(const talus_tile *t, halo_view v, int fill) {
  return fill ? t->nz : v.hd.layers;
}

/* Pastes w cells from block cell c to tile index idx of the tile's
 * optional plane e (0.. in HALO_TILE_FLAGS order: hardness, the
 * accumulators, the diagonal fluxes) from the block's same plane; where
 * the block lacks it, fill writes 0 and no fill leaves the tile's values. */
static void halo_paste_extra(talus_tile *t, halo_view v, int e, size_t idx, size_t c, int w,
                             int fill) {
  int flag, j, bf = v.hd.flags, L = v.hd.layers, q = -1;
  float *dst = halo_extra_of(t, e, &flag, &j);
  if (bf & flag)
    q = flag == HALO_FLAG_HARD  ? L * HALO_FIELDS
        : flag == HALO_FLAG_ACC ? halo_acc_plane(L, bf, j)
                                : halo_fdiag_plane(L, bf, j);
  if (q >= 0)
    memcpy(dst + idx, v.fl + (size_t)q * v.cells + c, (size_t)w * 4);
  else if (fill)
    memset(dst + idx, 0, (size_t)w * 4);
}

/* Pastes row y (global) of plane q of block v, clipped to columns
 * [x0, x1), into t: q = 0 the count and mask bytes, 1 .. layers·11 the
 * float planes (halo_paste_layers), then hardness and the accumulators
 * (halo_paste_extra).
 * fill = 0: only slots below a cell's count are written (as before);
 * fill = 1: every slot of every layer is written, the others with their
 * reset value, so the row needs no talus_tile_reset first. */
static void halo_paste_row(talus_tile *t, halo_view v, int y, int x0, int x1, int fill, int q) {
  size_t idx = talus_idx(t, x0 - t->buf.x0, y - t->buf.y0);
  size_t c = (size_t)(y - v.hd.y0) * v.hd.w + (size_t)(x0 - v.hd.x0);
  int w = x1 - x0, L = v.hd.layers;
  const uint8_t *cnt = v.cnt + c;
  if (q == 0) {
    memcpy(t->count + idx, cnt, (size_t)w);
    memcpy(t->mask + idx, v.msk + c, (size_t)w);
  } else if (q <= halo_paste_layers(t, v, fill) * HALO_FIELDS) {
    int k = (q - 1) / HALO_FIELDS, f = (q - 1) % HALO_FIELDS;
    float *dst = halo_plane(t, f, k) + idx, z = halo_reset_value(f, k);
    const float *src = v.fl + (size_t)(q - 1) * v.cells + c;
    if (k >= L) {
      for (int i = 0; i < w; i++)
        dst[i] = z;
    } else if (fill) {
      for (int i = 0; i < w; i++)
        dst[i] = cnt[i] > k ? src[i] : z;
    } else {
      for (int i = 0; i < w; i++)
        dst[i] = cnt[i] > k ? src[i] : dst[i];
    }
  } else {
    halo_paste_extra(t, v, q - 1 - halo_paste_layers(t, v, fill) * HALO_FIELDS, idx, c, w, fill);
  }
}

/* Checks a block against t; fills *v and the clipped rectangle *in. */
static talus_status halo_paste_check(const talus_tile *t, const void *data, size_t n, halo_view *v,
                                     talus_rect *in) {
  talus_rect r;
  if (!halo_block_rect(data, n, &r))
    return talus_fail(TALUS_ERR_FORMAT, "halo", "malformed block of %zu bytes", n);
  *v = halo_view_of(data);
  if (v->hd.layers > t->nz || (v->hd.flags & ~HALO_TILE_FLAGS(t)))
    return talus_fail(TALUS_ERR_FORMAT, "halo",
                      "block has %d layers and optional planes %d, tile holds %d and %d",
                      v->hd.layers, v->hd.flags, t->nz, HALO_TILE_FLAGS(t));
  if (!halo_counts_valid(v->cnt, v->cells, v->hd.layers))
    return talus_fail(TALUS_ERR_FORMAT, "halo", "block has a column count outside 1..%d",
                      v->hd.layers);
  *in = talus_rect_intersect(r, t->buf);
  return TALUS_OK;
}

/* Pastes with or without reset-value fill (halo_paste_row); *cells gets
 * the number of cells written. */
static talus_status halo_paste(talus_tile *t, const void *data, size_t n, int fill, size_t *cells) {
  halo_view v;
  talus_rect in;
  talus_status st = halo_paste_check(t, data, n, &v, &in);
  if (st) return st;
  size_t area = (size_t)in.w * in.h;
  int planes = 1 + halo_float_planes(halo_paste_layers(t, v, fill), HALO_TILE_FLAGS(t));
#pragma omp parallel for collapse(2) schedule(static) if (area >= HALO_PAR_CELLS)
  for (int q = 0; q < planes; q++)
    for (int y = in.y0; y < in.y0 + in.h; y++)
      halo_paste_row(t, v, y, in.x0, in.x0 + in.w, fill, q);
  if (cells) *cells = area;
  return TALUS_OK;
}

talus_status halo_block_paste(talus_tile *t, const void *data, size_t n) {
  return halo_paste(t, data, n, 0, NULL);
}

talus_status halo_block_paste_fill(talus_tile *t, const void *data, size_t n, size_t *cells) {
  return halo_paste(t, data, n, 1, cells);
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
