/*
 * test_plan.c — the plan of a run (tiler/plan.h), a pure function: a map
 * that fits runs in one piece and one that does not is tiled; the core is
 * the largest multiple of 256 up to 2048 whose working set fits; K follows
 * the store's rule (memory: core / (32 R) in 1..8, disk: core / (8 R) in
 * 1..32); --tile, --steps-per-exchange and --store are respected; the disk
 * store is taken when the tiles do not fit in memory; a --mem-limit even
 * the smallest tile exceeds is refused; the predicted bytes grow with the
 * map; the disk store's peak is two generations of blobs as deep as the
 * layers in use. Expected numbers are worked out here from the memory model that
 * plan.h states, not copied from the planner's output.
 */
#include "check.h"
#include "io/state.h"
#include "kernels/state.h"
#include "tiler/plan.h"

#include <string.h>

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)

/* A run of an nx × ny map with 4 layers, step radius 4, one thread, one
 * rank, no outputs besides the surface, and a generous machine. */
static talus_plan_in base(int nx, int ny) {
  talus_plan_in in;
  memset(&in, 0, sizeof in);
  in.nx = nx, in.ny = ny, in.nz = 4, in.state_bands = talus_state_band_count(4);
  in.R = 4;
  in.auto_limit = 64 * GIB;
  in.ranks = 1, in.threads = 1;
  in.gdal_cache = 256 * MIB;
  return in;
}

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* plan.h's memory model, written out again: a cell costs 56 + 88 nz with
 * scratch, 6 + 44 nz kept; io is GDAL's cache as far as the rasters read
 * and written fill it (4 bytes a cell a band, at most its cap) and one
 * store call per thread (16 MiB, or half a kept tile when smaller); 80 MiB
 * of slack. */
static int64_t out_bands(const talus_plan_in *in) {
  return 1 + in->map_bands + (in->state_out ? 2 + 11 * in->nz : 0);
}
static int64_t model_cache(const talus_plan_in *in) {
  int64_t in_bands = in->input_bands ? in->input_bands : in->state_in ? 2 + 11 * in->nz : 1;
  return min64(in->gdal_cache, (int64_t)in->nx * in->ny * 4 * (in_bands + out_bands(in)));
}
static int64_t model_tile(const talus_plan_in *in, int c, int H) {
  int64_t full = 56 + 88 * in->nz, kept = 6 + 44 * in->nz;
  int64_t bw = min64(c + 2 * H, in->nx), bh = min64(c + 2 * H, in->ny);
  int64_t run = bw * bh * full;
  int64_t cw = min64(c, in->nx), ch = min64(c, in->ny); /* a core clipped to the map */
  int64_t out =
      (cw * ch + cw * min64(256, in->ny)) * kept + out_bands(in) * (ch + 256) * in->nx * 4;
  int64_t call = min64(16 * MIB, bw * bh * kept / 2);
  return max64(run, out) + model_cache(in) + call * in->threads + 80 * MIB;
}
static int64_t model_kept(const talus_plan_in *in, int c, int H) {
  int64_t ntiles = (int64_t)((in->nx + c - 1) / c) * ((in->ny + c - 1) / c);
  int64_t mine = (ntiles + in->ranks - 1) / in->ranks;
  int64_t bw = min64(c + 2 * H, in->nx), bh = min64(c + 2 * H, in->ny);
  int64_t strips = ntiles > 1 ? 2 * (4 * (int64_t)H * c + 4 * (int64_t)H * H) : 0;
  return mine * (bw * bh + strips) * (6 + 44 * in->nz);
}
static int64_t model_one(const talus_plan_in *in) {
  int64_t in_bands = in->input_bands ? in->input_bands : 2 + 11 * in->nz;
  int64_t input = in->state_in ? 4 * in_bands : 5;
  return (int64_t)in->nx * in->ny * (56 + 88 * in->nz + 4 + input) +
         out_bands(in) * 256 * in->nx * 4 + model_cache(in) + 80 * MIB;
}

static void test_model(void) {
  CHECK(talus_state_band_count(4) == 46, "a state of 4 layers has %d bands, not 46",
        talus_state_band_count(4));
  talus_plan_in in = base(512, 512);
  /* 512² cells × (408 + 4 + 5) + 256 rows × 512 × 4 + GDAL's cache of two
   * 512² Float32 bands (2 MiB) + 80 MiB */
  CHECK(talus_plan_one_bytes(&in) == 195821568, "one piece of 512²: %lld bytes",
        (long long)talus_plan_one_bytes(&in));
  in.map_bands = 6, in.state_out = 1, in.state_in = 1;
  CHECK(talus_plan_one_bytes(&in) == model_one(&in), "one piece with every output: %lld vs %lld",
        (long long)talus_plan_one_bytes(&in), (long long)model_one(&in));
  in.input_bands = 13; /* a state of one layer read as 4 layers: its own 13 bands */
  CHECK(talus_plan_one_bytes(&in) == model_one(&in) &&
            talus_plan_one_bytes(&in) < model_one(&(talus_plan_in){.nx = 512,
                                                                   .ny = 512,
                                                                   .nz = 4,
                                                                   .state_in = 1,
                                                                   .map_bands = 6,
                                                                   .state_out = 1,
                                                                   .gdal_cache = 256 * MIB}),
        "a state's own bands: %lld vs %lld", (long long)talus_plan_one_bytes(&in),
        (long long)model_one(&in));
  in = base(8192, 8192);
  /* core 1024, halo 32: the buffer (1088² × 408) outweighs the outputs;
   * GDAL's cache at its cap, one 16 MiB store call, 80 MiB */
  CHECK(talus_plan_tile_bytes(&in, 1024, 32) == (int64_t)1088 * 1088 * 408 + 352 * MIB,
        "tiles of 1024 + 2·32 over 8192²: %lld bytes",
        (long long)talus_plan_tile_bytes(&in, 1024, 32));
  for (int c = 256; c <= 2048; c += 256)
    for (int H = 0; H <= 128; H += 32)
      CHECK(talus_plan_tile_bytes(&in, c, H) == model_tile(&in, c, H),
            "core %d halo %d: %lld vs %lld", c, H, (long long)talus_plan_tile_bytes(&in, c, H),
            (long long)model_tile(&in, c, H));
  /* a buffer is clipped to the map: 1024 + 2·32 > 1070 */
  in = base(1070, 1070);
  /* GDAL's cache: two 1070² Float32 bands */
  CHECK(talus_plan_tile_bytes(&in, 1024, 32) ==
            (int64_t)1070 * 1070 * 408 + (int64_t)1070 * 1070 * 8 + 96 * MIB,
        "tiles of 1024 + 2·32 over 1070²: %lld bytes",
        (long long)talus_plan_tile_bytes(&in, 1024, 32));
  for (int n = 1000; n <= 1200; n += 10)
    for (int H = 0; H <= 96; H += 8) {
      in = base(n, 2 * n);
      CHECK(talus_plan_tile_bytes(&in, 1024, H) == model_tile(&in, 1024, H),
            "%d x %d, halo %d: %lld vs %lld", n, 2 * n, H,
            (long long)talus_plan_tile_bytes(&in, 1024, H), (long long)model_tile(&in, 1024, H));
      CHECK(talus_plan_kept_bytes(&in, 1024, H) == model_kept(&in, 1024, H),
            "kept %d x %d, halo %d: %lld vs %lld", n, 2 * n, H,
            (long long)talus_plan_kept_bytes(&in, 1024, H), (long long)model_kept(&in, 1024, H));
    }
  /* 2048² in cores of 512, halo 16: 16 tiles, each 544² and 8 strips at two
   * steps, 2 · (4·16·512 + 4·16²) cells, of 182 bytes a cell */
  in = base(2048, 2048);
  CHECK(talus_plan_kept_bytes(&in, 512, 16) == 16 * (544 * 544 + 67584) * (int64_t)182,
        "kept tiles of 2048² at core 512: %lld bytes",
        (long long)talus_plan_kept_bytes(&in, 512, 16));
  in.ranks = 4; /* a rank keeps at most a quarter of them */
  CHECK(talus_plan_kept_bytes(&in, 512, 16) == 4 * (544 * 544 + 67584) * (int64_t)182,
        "kept tiles of a rank of 4: %lld bytes", (long long)talus_plan_kept_bytes(&in, 512, 16));
  in = base(512, 512); /* one tile: no strips */
  CHECK(talus_plan_kept_bytes(&in, 512, 16) == 512 * 512 * (int64_t)182,
        "one kept tile: %lld bytes", (long long)talus_plan_kept_bytes(&in, 512, 16));
}

static void test_K(void) {
  talus_plan_in in = base(8192, 8192); /* R = 4 */
  int mem[][2] = {{256, 2}, {512, 4}, {1024, 8}, {2048, 8}, {64, 1}};
  for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
    CHECK(talus_plan_K(&in, mem[i][0], TALUS_STORE_MEMORY) == mem[i][1],
          "memory K of core %d: %d, not %d", mem[i][0],
          talus_plan_K(&in, mem[i][0], TALUS_STORE_MEMORY), mem[i][1]);
  int disk[][2] = {{256, 8}, {512, 16}, {1024, 32}, {2048, 32}, {16, 1}};
  for (size_t i = 0; i < sizeof disk / sizeof disk[0]; i++)
    CHECK(talus_plan_K(&in, disk[i][0], TALUS_STORE_DISK) == disk[i][1],
          "disk K of core %d: %d, not %d", disk[i][0],
          talus_plan_K(&in, disk[i][0], TALUS_STORE_DISK), disk[i][1]);
  in.R = 0; /* no stage reaches a neighbour: the caps */
  CHECK(talus_plan_K(&in, 256, TALUS_STORE_MEMORY) == 8, "memory K at R 0");
  CHECK(talus_plan_K(&in, 256, TALUS_STORE_DISK) == 32, "disk K at R 0");
  in.R = 13; /* rivers-rain's ring: 2048 / (32·13) = 4, 2048 / (8·13) = 19 */
  CHECK(talus_plan_K(&in, 2048, TALUS_STORE_MEMORY) == 4, "memory K at R 13");
  CHECK(talus_plan_K(&in, 2048, TALUS_STORE_DISK) == 19, "disk K at R 13");
  in.steps_per_exchange = 3; /* the user's, whatever the store */
  CHECK(talus_plan_K(&in, 2048, TALUS_STORE_MEMORY) == 3, "--steps-per-exchange, memory");
  CHECK(talus_plan_K(&in, 2048, TALUS_STORE_DISK) == 3, "--steps-per-exchange, disk");
}

static void test_pieces(void) {
  talus_plan_in in = base(512, 512);
  talus_plan p;
  in.auto_limit = model_one(&in); /* fits exactly */
  talus_plan_pieces(&in, &p);
  CHECK(!p.tiled && !p.asked && !p.too_large, "a map that fits runs in one piece");
  CHECK(p.one_bytes == model_one(&in) && p.limit == in.auto_limit, "one piece: %lld bytes of %lld",
        (long long)p.one_bytes, (long long)p.limit);
  in.auto_limit--; /* a byte short */
  talus_plan_pieces(&in, &p);
  CHECK(p.tiled && !p.asked, "a map that does not fit is tiled");
  in.mem_limit = 64 * GIB; /* --mem-limit wins over the machine's limit */
  talus_plan_pieces(&in, &p);
  CHECK(!p.tiled && p.limit == 64 * GIB, "--mem-limit: limit %lld", (long long)p.limit);
  /* each tiling option asks for tiles, and so do ranks */
  for (int i = 0; i < 5; i++) {
    talus_plan_in a = base(512, 512);
    if (i == 0) a.tile = 256;
    if (i == 1) a.steps_per_exchange = 2;
    if (i == 2) a.store_dir = 1;
    if (i == 3) a.resume = 1;
    if (i == 4) a.ranks = 2;
    talus_plan_pieces(&a, &p);
    CHECK(p.tiled && p.asked, "option %d asks for tiles", i);
  }
  in = base(262144, 262144); /* 2^36 cells: the most */
  talus_plan_pieces(&in, &p);
  CHECK(!p.too_large, "262144² is not too large");
  in.nx++;
  talus_plan_pieces(&in, &p);
  CHECK(p.too_large && !p.tiled, "262145 × 262144 is too large");
}

static talus_plan tiles(const talus_plan_in *in) {
  talus_plan p;
  memset(&p, 0, sizeof p);
  talus_plan_tiles(in, &p);
  return p;
}

static void test_core(void) {
  /* 8192², R 4: the memory K is core / 128 up to 8, so a halo of 32 from
   * core 1024 on. Cores of 1024 fit this limit, cores of 1280 do not. */
  talus_plan_in in = base(8192, 8192);
  in.auto_limit = model_tile(&in, 1024, 32) + 1;
  CHECK(model_tile(&in, 1280, 32) > in.auto_limit, "the limit is below cores of 1280");
  talus_plan p = tiles(&in);
  CHECK(p.core == 1024, "core %d, not 1024", p.core);
  /* 64 tiles of 1088² cells and 2 · (4·32·1024 + 4·32²) strip cells do
   * not fit besides: disk; its K of 32 (halo 128) does not fit either, so
   * the memory K stays */
  CHECK(p.store == TALUS_STORE_DISK, "the tiles do not fit in memory: disk");
  CHECK(p.K == 8 && p.halo == 32, "K %d halo %d, not 8 and 32", p.K, p.halo);
  CHECK(p.tile_bytes == model_tile(&in, 1024, 32) &&
            p.kept_bytes == 64 * ((int64_t)1088 * 1088 + 270336) * 182,
        "bytes %lld kept %lld", (long long)p.tile_bytes, (long long)p.kept_bytes);
  CHECK(!p.refused, "no --mem-limit: never refused");
  /* room for the disk store's halo of 128 (a 1280² buffer, smaller than
   * 1280 + 2·32): the disk K */
  in.auto_limit = model_tile(&in, 1024, 128);
  CHECK(model_tile(&in, 1280, 32) > in.auto_limit, "the limit is below cores of 1280");
  p = tiles(&in);
  CHECK(p.core == 1024 && p.store == TALUS_STORE_DISK && p.K == 32 && p.halo == 128,
        "core %d K %d halo %d store %d", p.core, p.K, p.halo, (int)p.store);
  CHECK(p.tile_bytes == model_tile(&in, 1024, 128), "bytes at the disk K: %lld",
        (long long)p.tile_bytes);
  /* a generous limit: the largest core, 2048, at K 8 */
  in.auto_limit = 1024 * GIB;
  p = tiles(&in);
  CHECK(p.core == 2048 && p.K == 8 && p.store == TALUS_STORE_MEMORY, "core %d K %d store %d",
        p.core, p.K, (int)p.store);
  /* cores are multiples of 256 for every limit between the extremes */
  for (int c = 256; c <= 2048; c += 256) {
    int K = c / 128 < 8 ? c / 128 : 8;
    in.auto_limit = model_tile(&in, c, K * 4);
    p = tiles(&in);
    CHECK(p.core == c, "the limit of core %d gives core %d", c, p.core);
  }
  /* no core is larger than twice the map's larger side; a map whose side
   * is 256 or less gets about a quarter of it, or all of it under 128 */
  int small[][3] = {{600, 600, 1024}, {1000, 300, 1792}, {300, 300, 512},
                    {256, 200, 64},   {200, 200, 50},    {100, 60, 100}};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    in = base(small[i][0], small[i][1]);
    p = tiles(&in);
    CHECK(p.core == small[i][2], "%d x %d: core %d, not %d", small[i][0], small[i][1], p.core,
          small[i][2]);
  }
}

static void test_user(void) {
  /* --tile: that core, the memory rule's K; in memory when all fit */
  talus_plan_in in = base(2048, 2048);
  in.tile = 512;
  talus_plan p = tiles(&in);
  CHECK(p.core == 512 && p.K == 4 && p.halo == 16 && p.store == TALUS_STORE_MEMORY,
        "--tile 512: core %d K %d halo %d store %d", p.core, p.K, p.halo, (int)p.store);
  /* the memory store exactly fits its tiles besides the working set; a byte
   * less and the tiles go to disk, at the disk rule's K (512 / 32 = 16) */
  int64_t kept = 16 * (544 * 544 + 67584) * (int64_t)182;
  in.auto_limit = kept + model_tile(&in, 512, 16);
  p = tiles(&in);
  CHECK(p.store == TALUS_STORE_MEMORY && p.kept_bytes == kept, "store %d kept %lld", (int)p.store,
        (long long)p.kept_bytes);
  in.auto_limit--;
  p = tiles(&in);
  CHECK(p.store == TALUS_STORE_DISK && p.K == 16 && p.halo == 64, "store %d K %d halo %d",
        (int)p.store, p.K, p.halo);
  /* --store: disk whatever fits */
  in = base(2048, 2048);
  in.tile = 512, in.store_dir = 1;
  p = tiles(&in);
  CHECK(p.store == TALUS_STORE_DISK && p.K == 16, "--store: store %d K %d", (int)p.store, p.K);
  /* --steps-per-exchange: that K in memory and on disk */
  in.steps_per_exchange = 3;
  p = tiles(&in);
  CHECK(p.store == TALUS_STORE_DISK && p.K == 3 && p.halo == 12, "--store, K 3: K %d halo %d", p.K,
        p.halo);
  in.store_dir = 0;
  p = tiles(&in);
  CHECK(p.store == TALUS_STORE_MEMORY && p.K == 3 && p.halo == 12, "K 3: store %d K %d halo %d",
        (int)p.store, p.K, p.halo);
  /* ranks keep a share of the tiles each: a limit too small for all 16
   * tiles fits the 4 a rank of 4 keeps */
  in = base(2048, 2048);
  in.tile = 512;
  in.auto_limit = 4 * (544 * 544 + 67584) * (int64_t)182 + model_tile(&in, 512, 16);
  CHECK(tiles(&in).store == TALUS_STORE_DISK, "one process: disk");
  in.ranks = 4;
  CHECK(tiles(&in).store == TALUS_STORE_MEMORY, "a rank of 4: memory");
}

static void test_refusal(void) {
  /* GDAL's cache (256 MiB at 8192²), a store call and the slack alone
   * exceed 300 MiB: even cores of 256 do not fit, and a --mem-limit so
   * small is refused */
  talus_plan_in in = base(8192, 8192);
  in.mem_limit = 300 * MIB;
  talus_plan p = tiles(&in);
  CHECK(p.refused && p.core == 256 && p.K == 2 && p.halo == 8, "refused %d core %d K %d halo %d",
        p.refused, p.core, p.K, p.halo);
  CHECK(p.tile_bytes == model_tile(&in, 256, 8) && p.limit == 300 * MIB, "refused at %lld of %lld",
        (long long)p.tile_bytes, (long long)p.limit);
  /* so is a --tile too large for the limit */
  in.mem_limit = model_tile(&in, 1024, 32);
  in.tile = 1024;
  CHECK(!tiles(&in).refused, "tiles of 1024 fit exactly");
  in.tile = 1280;
  CHECK(tiles(&in).refused, "tiles of 1280 do not");
  /* without --mem-limit the plan goes ahead on the smallest core */
  in = base(8192, 8192);
  in.auto_limit = 400 * MIB;
  p = tiles(&in);
  CHECK(!p.refused && p.core == 256 && p.store == TALUS_STORE_DISK, "refused %d core %d store %d",
        p.refused, p.core, (int)p.store);
}

static void test_monotone(void) {
  int64_t one = 0, tile = 0, kept = 0;
  for (int n = 256; n <= 65536; n *= 2)
    for (int m = n; m < 2 * n; m += n / 2) {
      talus_plan_in in = base(m, n);
      in.map_bands = 6, in.state_out = 1;
      int64_t o = talus_plan_one_bytes(&in), t = talus_plan_tile_bytes(&in, 1024, 32),
              k = talus_plan_kept_bytes(&in, 1024, 32);
      CHECK(o > one, "%d x %d: one piece %lld after %lld", m, n, (long long)o, (long long)one);
      CHECK(t >= tile, "%d x %d: tiles %lld after %lld", m, n, (long long)t, (long long)tile);
      CHECK(k >= kept, "%d x %d: kept %lld after %lld", m, n, (long long)k, (long long)kept);
      one = o, tile = t, kept = k;
    }
}

/* The heightfield model in one piece costs the planes it writes (64
 * bytes a cell, 96 with thermal erosion): the tile's other planes stay
 * zero pages (talus_alloc). Its tiles keep the full count (a reset tile's
 * persistent planes are written whole). */
static void test_heightfield(void) {
  talus_plan_in in = base(512, 512);
  in.nz = 1, in.state_bands = talus_state_band_count(1);
  int64_t layered = talus_plan_one_bytes(&in), tile = talus_plan_tile_bytes(&in, 256, 8);
  in.heightfield = 1;
  int64_t cells = 512 * 512, rest = layered - cells * (56 + 88 + 4 + 5);
  CHECK(talus_plan_one_bytes(&in) == cells * (64 + 4 + 5) + rest,
        "heightfield one piece of 512²: %lld bytes, not %lld", (long long)talus_plan_one_bytes(&in),
        (long long)(cells * (64 + 4 + 5) + rest));
  in.heightfield = 2;
  CHECK(talus_plan_one_bytes(&in) == cells * (96 + 4 + 5) + rest,
        "heightfield with thermal erosion, one piece of 512²: %lld bytes",
        (long long)talus_plan_one_bytes(&in));
  CHECK(talus_plan_tile_bytes(&in, 256, 8) == tile, "a heightfield tile: %lld vs %lld bytes",
        (long long)talus_plan_tile_bytes(&in, 256, 8), (long long)tile);
}

/* halo/block.h's blob, written out again: a 32-byte header, the count and
 * mask bytes padded to 4, then 11 float planes a layer, 1 for hardness
 * and 3 for the run accumulators. */
static int64_t model_blob(int64_t w, int64_t h, int layers, int optional) {
  int64_t cells = w * h, planes = 11 * layers;
  planes += (optional & TALUS_TILE_HARD ? 1 : 0) + (optional & TALUS_TILE_ACC ? 3 : 0);
  return 32 + ((2 * cells + 3) & ~(int64_t)3) + 4 * cells * planes;
}
/* plan.h's disk model, tile by tile: two generations of each core and
 * (with neighbours) its 8 strips, H wide and clipped to the core. */
static int64_t model_disk(const talus_plan_in *in, int c, int H, int layers) {
  int tx = (in->nx + c - 1) / c, ty = (in->ny + c - 1) / c;
  int64_t all = 0;
  for (int y = 0; y < ty; y++)
    for (int x = 0; x < tx; x++) {
      int64_t w = min64(c, in->nx - (int64_t)x * c), h = min64(c, in->ny - (int64_t)y * c);
      int64_t hw = min64(H, w), hh = min64(H, h);
      all += model_blob(w, h, layers, in->optional);
      if (tx * ty > 1)
        all += 2 * model_blob(hw, h, layers, in->optional) +
               2 * model_blob(w, hh, layers, in->optional) +
               4 * model_blob(hw, hh, layers, in->optional);
    }
  return 2 * all;
}

/* The disk store's peak before zstd: two generations of cores and strips
 * as deep as the layers in use; a DEM starts at one layer, a state at its
 * own. */
static void test_disk(void) {
  /* 2048² in cores of 512, halo 16, one layer (a DEM's start): 16 tiles of
   * a 512² core, 4 sides of 16 × 512 and 4 corners of 16², 46 bytes a
   * cell and 32 a blob, twice */
  talus_plan_in in = base(2048, 2048);
  int64_t cells = 512 * 512 + 4 * 16 * 512 + 4 * 16 * 16;
  CHECK(talus_plan_disk_bytes(&in, 512, 16, 1) == 2 * 16 * (cells * 46 + 9 * 32),
        "disk store of 2048² at core 512, halo 16, one layer: %lld bytes",
        (long long)talus_plan_disk_bytes(&in, 512, 16, 1));
  /* four layers with hardness and the accumulators: 2 + 4·44 + 4 + 12 */
  in.optional = TALUS_TILE_HARD | TALUS_TILE_ACC;
  CHECK(talus_plan_disk_bytes(&in, 512, 16, 4) == 2 * 16 * (cells * 194 + 9 * 32),
        "four layers, hardness, accumulators: %lld bytes",
        (long long)talus_plan_disk_bytes(&in, 512, 16, 4));
  in.ranks = 4; /* a rank keeps a quarter of the tiles */
  CHECK(talus_plan_disk_bytes(&in, 512, 16, 4) == 2 * 4 * (cells * 194 + 9 * 32),
        "a rank of 4: %lld bytes", (long long)talus_plan_disk_bytes(&in, 512, 16, 4));
  in = base(512, 512); /* one tile: its core alone */
  CHECK(talus_plan_disk_bytes(&in, 512, 16, 1) == 2 * (512 * 512 * 46 + 32), "one tile: %lld bytes",
        (long long)talus_plan_disk_bytes(&in, 512, 16, 1));
  /* cores clipped by the map's edges, strips clipped to the cores (a last
   * row 88 cells high under a halo of 100), and rounding of odd cores */
  int sizes[][2] = {{1000, 600}, {600, 1000}, {513, 1537}, {1024, 1024}, {300, 77}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int H = 1; H <= 129; H += 32)
      for (int L = 1; L <= 4; L += 3)
        for (int opt = 0; opt < 4; opt++) {
          in = base(sizes[i][0], sizes[i][1]);
          in.optional = opt;
          CHECK(talus_plan_disk_bytes(&in, 512, H, L) == model_disk(&in, 512, H, L),
                "%d x %d, halo %d, %d layers, planes %d: %lld vs %lld", sizes[i][0], sizes[i][1], H,
                L, opt, (long long)talus_plan_disk_bytes(&in, 512, H, L),
                (long long)model_disk(&in, 512, H, L));
        }
  /* a layered DEM's start (one layer) is under a third of the bound (4) */
  in = base(8192, 8192);
  CHECK(talus_plan_disk_bytes(&in, 2048, 28, 1) * 3 < talus_plan_disk_bytes(&in, 2048, 28, 4),
        "one layer is under a third of four");
  CHECK(talus_plan_start_layers(&in) == 1, "a DEM starts at one layer");
  in.state_in = 1;
  CHECK(talus_plan_start_layers(&in) == 4, "a state starts at its own layers");
}

/* The layers a layered run's cells can reach: a DEM keeps its one column
 * while no step can split one (horizontal erosion off, or every step
 * before the spin-up ends, when damage is 0 and a split needs damage >=
 * split_size > 0); from then on a cell's count at most doubles a step up
 * to nz. A state may split at once. A run in one piece counts those
 * layers, and so does a working tile: a DEM that cannot split costs one
 * layer's 56 + 88 bytes a cell, not 4 layers'. */
static void test_reach(void) {
  CHECK(talus_plan_reach_layers(4, 0, 1, 1500, 1500) == 1, "1500 steps, spin-up 1500: 1 layer");
  CHECK(talus_plan_reach_layers(4, 0, 0, 0, 100000) == 1, "no horizontal erosion: 1 layer");
  CHECK(talus_plan_reach_layers(4, 0, 1, 1500, 1501) == 2, "one eroding step: at most 2 columns");
  CHECK(talus_plan_reach_layers(4, 0, 1, 1500, 1502) == 4, "two eroding steps: 4");
  CHECK(talus_plan_reach_layers(3, 0, 1, 0, 1000000) == 3, "never more than nz");
  CHECK(talus_plan_reach_layers(4, 1, 0, 1500, 2) == 4, "a state: its own nz");
  talus_plan_in in = base(512, 512);
  int64_t all = talus_plan_one_bytes(&in), tile = talus_plan_tile_bytes(&in, 256, 8);
  in.reach_layers = 1;
  int64_t cells = 512 * 512, one = talus_plan_one_bytes(&in);
  CHECK(all - one == cells * 88 * 3, "one piece of 512², 1 of 4 layers: %lld fewer bytes, not %lld",
        (long long)(all - one), (long long)(cells * 88 * 3));
  /* a working tile of 256 + 2·8 = 272² cells: 3 layers' 88 bytes a cell
   * fewer at most (its kept output cores still count every slot) */
  int64_t tile1 = talus_plan_tile_bytes(&in, 256, 8), buf = 272 * 272;
  CHECK(tile1 < tile && tile - tile1 <= buf * 88 * 3,
        "a tile of one layer: %lld bytes, of four %lld (at most %lld fewer)", (long long)tile1,
        (long long)tile, (long long)(buf * 88 * 3));
  in.reach_layers = 9; /* more than the slots: the slots */
  CHECK(talus_plan_one_bytes(&in) == all, "reach above nz counts nz");
}

int main(void) {
  test_reach();
  test_model();
  test_disk();
  test_heightfield();
  test_K();
  test_pieces();
  test_core();
  test_user();
  test_refusal();
  test_monotone();
  return check_report("test_plan");
}
