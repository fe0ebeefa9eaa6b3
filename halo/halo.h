/*
 * halo.h — edge strips: cut a rectangle of a tile's persistent fields into a
 * self-describing byte block, and paste a block into another tile's buffer
 * (clipped to it). The kernels never see tiles; the tiler moves blocks
 * between tiles through a store.
 *
 * The block format (header, sizes, plane order, the parts of a core) is
 * block.h's, which this header includes; here are the operations on tiles.
 */
#ifndef TALUS_HALO_H
#define TALUS_HALO_H

#include "block.h"
#include "kernels/state.h"

/* Writes the header of the block of global rectangle r at dst (block.h's
 * halo_header_of), for packers that write the body themselves (the GPU:
 * kernels/cuda). */
void halo_block_header(void *dst, talus_rect r, int layers, int flags);

/* Cuts the global rectangle r (inside t->buf) into a new malloc'd block. */
talus_status halo_block_cut(const talus_tile *t, talus_rect r, void **out, size_t *n);
/* Bytes the block of global rectangle r of t takes; 0 when r is empty or
 * not inside t->buf. */
size_t halo_block_size(const talus_tile *t, talus_rect r);
/* Cuts r into dst (n >= halo_block_size(t, r) bytes, e.g. a reused
 * buffer); the block is exactly halo_block_size bytes long. */
talus_status halo_block_write(const talus_tile *t, talus_rect r, void *dst, size_t n);
/* Pastes a block into t where it overlaps t->buf; fails, changing
 * nothing, if the block is malformed (its size, its header, a column count
 * outside 1..its layers) or holds more layers than t. */
talus_status halo_block_paste(talus_tile *t, const void *data, size_t n);
/* Like halo_block_paste, but also writes every slot the block does not
 * carry (layers at or above a cell's count, up to t->nz, and hardness)
 * with the value talus_tile_reset gives it: the cells pasted end up as a
 * reset followed by a paste, so a buffer fully covered by such pastes
 * needs no reset. *cells (may be NULL) gets the cells written. */
talus_status halo_block_paste_fill(talus_tile *t, const void *data, size_t n, size_t *cells);
/* Copies global rectangle r of `from` into `to` (as cut then paste). */
talus_status halo_block_copy(const talus_tile *from, talus_rect r, talus_tile *to);
/* The global rectangle a block covers (for checks); 0 on malformed data. */
int halo_block_rect(const void *data, size_t n, talus_rect *r);

/* Strip `part` (1..8) of core c for halo width H, clipped to c. */
talus_rect halo_strip_rect(talus_rect core, int H, int part);
/* The strip part a tile at tile-offset (dx, dy) ∈ {-1,0,1}² (not both 0)
 * from the publisher needs: the publisher's side facing it. */
int halo_strip_facing(int dx, int dy);

#endif /* TALUS_HALO_H */
