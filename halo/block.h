/*
 * block.h — the halo block format: the bytes a rectangle of a tile's
 * persistent fields travels as between tiles, stores and ranks. It holds
 * only the format (the header, the sizes, the order of the planes), in
 * plain types and header-only: halo.h includes it and adds the cut and
 * paste of tiles, and the GPU backend (kernels/cuda), which packs blocks
 * on the device, includes it alone, so the kernels never see the halo
 * module and the format is written in one place.
 *
 * Design notes
 * ------------
 * - Layout (little-endian host order; blocks never leave one machine
 *   architecture): a header {magic, global rect x0 y0 w h, layers L,
 *   flags} of HALO_HEADER_BYTES, then the body: count[w*h] and mask[w*h]
 *   bytes padded to 4, then for each layer k < L the planes B s w C r D p
 *   fR fU fL fD (w*h floats each), then hardness (w*h floats) when flagged,
 *   then the TALUS_ACC_PLANES run accumulators (kernels/accum.h) when
 *   flagged, then the heightfield's 4 diagonal flux planes (RU LU LD RD,
 *   heightfield.neighbours = 8) when flagged.
 * - L is the highest column count inside the rectangle ("only the layers
 *   in use"); slots at or above a cell's count are written as 0, so stale
 *   data never travels.
 * - The 8 strips of a core: parts 1..8 = R, U, L, D sides (width H, full
 *   core length) then RU, LU, LD, RD corners (H × H), clipped to the core;
 *   part 0 is the core itself (halo.h, halo_strip_rect).
 * - test_gpu checks that the GPU's bodies match halo_block_write's bytes.
 */
#ifndef TALUS_HALO_BLOCK_H
#define TALUS_HALO_BLOCK_H

#include "common/common.h" /* TALUS_HD */
#include <stddef.h>
#include <stdint.h>

enum { TALUS_HALO_PARTS = 9 }; /* part 0 = core, 1..8 = strips */

/* The header's size: a block's body (count, mask, planes) starts here. */
enum { HALO_HEADER_BYTES = 32 };

#define HALO_MAGIC 0x4B4C4254u /* "TBLK" */

/* A block's header, as it lies at the block's start. */
typedef struct halo_header {
  uint32_t magic;
  int32_t x0, y0, w, h; /* the global rectangle the block covers */
  int32_t layers;
  int32_t flags; /* HALO_FLAG_*: the optional per-cell planes present */
  int32_t reserved;
} halo_header;

#ifdef __cplusplus
static_assert(sizeof(halo_header) == HALO_HEADER_BYTES, "block.h states the header size");
#else
_Static_assert(sizeof(halo_header) == HALO_HEADER_BYTES, "block.h states the header size");
#endif

/* The optional per-cell planes a block carries (its header's flags). */
enum {
  HALO_FLAG_HARD = 1,   /* hardness: one plane */
  HALO_FLAG_ACC = 2,    /* run accumulators: HALO_ACC_PLANES planes */
  HALO_FLAG_FDIAG = 4,  /* the heightfield's diagonal fluxes (talus_tile fd): 4 planes */
  HALO_FLAGS_ALL = 7,   /* every flag a block may carry */
  HALO_ACC_PLANES = 3,  /* = TALUS_ACC_PLANES (kernels/state.h, checked in halo.c) */
  HALO_FDIAG_PLANES = 4 /* RU, LU, LD, RD */
};

/* The float planes of one layer, in block order: seven fields, then the
 * four flux directions. */
enum {
  HALO_PLANE_B = 0,
  HALO_PLANE_S,
  HALO_PLANE_W,
  HALO_PLANE_C,
  HALO_PLANE_R,
  HALO_PLANE_D,
  HALO_PLANE_P,
  HALO_PLANE_F,                  /* fR fU fL fD follow */
  HALO_FIELDS = HALO_PLANE_F + 4 /* float planes per layer */
};

/* The header of a block of global rectangle (x0, y0, w, h) carrying
 * `layers` layers and the optional planes of `flags` (HALO_FLAG_*): the
 * format's one header constructor. */
static inline halo_header halo_header_of(int32_t x0, int32_t y0, int32_t w, int32_t h, int layers,
                                         int flags) {
  halo_header hd = {HALO_MAGIC, x0, y0, w, h, layers, flags, 0};
  return hd;
}

/* Bytes from a block's body to its float planes: the count and mask bytes
 * of `cells` cells, padded to 4. */
TALUS_HD static inline size_t halo_body_planes_offset(size_t cells) {
  return (2 * cells + 3) & ~(size_t)3;
}

/* Bytes from a block's start to its float planes. */
TALUS_HD static inline size_t halo_planes_offset(size_t cells) {
  return HALO_HEADER_BYTES + halo_body_planes_offset(cells);
}

/* The optional float planes of `flags`: hardness, the accumulators, the
 * diagonal fluxes, in that order after the layers' planes. */
TALUS_HD static inline int halo_extra_planes(int flags) {
  return (flags & HALO_FLAG_HARD ? 1 : 0) + (flags & HALO_FLAG_ACC ? HALO_ACC_PLANES : 0) +
         (flags & HALO_FLAG_FDIAG ? HALO_FDIAG_PLANES : 0);
}

/* Float planes of a block: HALO_FIELDS per layer, then hardness when
 * flagged (the plane after the last layer's), then the accumulators, then
 * the diagonal fluxes. */
TALUS_HD static inline int halo_float_planes(int layers, int flags) {
  return layers * HALO_FIELDS + halo_extra_planes(flags);
}

/* The plane index (among a block's float planes) of accumulator a. */
TALUS_HD static inline int halo_acc_plane(int layers, int flags, int a) {
  return layers * HALO_FIELDS + (flags & HALO_FLAG_HARD ? 1 : 0) + a;
}

/* The plane index (among a block's float planes) of diagonal flux plane j. */
TALUS_HD static inline int halo_fdiag_plane(int layers, int flags, int j) {
  return layers * HALO_FIELDS + halo_extra_planes(flags & (HALO_FLAG_HARD | HALO_FLAG_ACC)) + j;
}

/* The flags of the optional planes tile T holds (a pointer to a
 * talus_tile: hard, acc, fd). */
#define HALO_TILE_FLAGS(T)                                                                         \
  (((T)->hard ? HALO_FLAG_HARD : 0) | ((T)->acc ? HALO_FLAG_ACC : 0) |                             \
   ((T)->fd ? HALO_FLAG_FDIAG : 0))

/* Bytes of the block of a w × h rectangle carrying `layers` layers and
 * the optional planes of `flags`. */
static inline size_t halo_block_bytes(int w, int h, int layers, int flags) {
  size_t cells = (size_t)w * h;
  return halo_planes_offset(cells) + 4 * cells * (size_t)halo_float_planes(layers, flags);
}

/* Of the arrays of the seven per-layer fields in block order, the one of
 * field f < HALO_PLANE_F. */
TALUS_HD static inline float *halo_pick_field(float *B, float *s, float *w, float *C, float *r,
                                              float *D, float *p, int f) {
  float *planes[HALO_PLANE_F] = {B, s, w, C, r, D, p};
  return planes[f];
}

/* The tile plane that plane f (HALO_PLANE_*) of layer k of a block holds,
 * for a pointer T to a tile (talus_tile's arrays B s w C r D p, fluxes f
 * with 4 planes per layer, and plane, the cells per plane): how the host
 * (halo.c) and the device (kernels/cuda) map the block order onto a tile. */
#define HALO_TILE_PLANE(T, f, k)                                                                   \
  ((f) < HALO_PLANE_F                                                                              \
       ? halo_pick_field((T)->B, (T)->s, (T)->w, (T)->C, (T)->r, (T)->D, (T)->p, (f)) +            \
             (size_t)(k) * (T)->plane                                                              \
       : (T)->f + ((size_t)(k)*4 + (size_t)((f)-HALO_PLANE_F)) * (T)->plane)

#endif /* TALUS_HALO_BLOCK_H */
