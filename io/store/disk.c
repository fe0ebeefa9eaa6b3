/*
 * disk.c — the blob file codec of the disk store: CRC32C, the 4-byte
 * lane shuffle, and streaming zstd write (tmp + rename) and verified read of
 * one blob file. The format is documented in store.h. The CRC uses the
 * SSE4.2 instruction where the CPU has it (TALUS_CRC_SOFT=1 forces the
 * tables); large blobs are compressed by zstd worker threads (one per
 * OpenMP thread of the caller outside a parallel region, or as many as
 * talus_blob_write_mt is told: the store's writer thread passes the
 * count of the thread that queued the put, so the file is the same). Both directions work
 * chunk by chunk so a call needs O(TALUS_STORE_CHUNK) memory whatever the
 * blob size (the blob itself aside).
 */
#include "io/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define BLOB_MAGIC   "TALUSBLK"
#define BLOB_VERSION 1u
#define BLOB_HEADER  64
#define FLAG_SHUFFLE 1u

/* ---- CRC32C (Castagnoli), software slice-by-8 ---- */

static uint32_t crc_table[8][256];
static int crc_use_hw; /* set once by crc_init */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Fills the slice-by-8 tables of the reflected polynomial 0x82F63B78. */
static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  crc_use_hw = __builtin_cpu_supports("sse4.2") && !getenv("TALUS_CRC_SOFT");
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define CRC_HW 1
/* CRC32C with the SSE4.2 crc32 instruction (the same polynomial): ~4x
 * the table version; used when the CPU has it. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p,
                                                         size_t n) {
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
  }
  c = (uint32_t)c64;
  while (n--)
    c = _mm_crc32_u8(c, *p++);
  return c;
}
#endif

uint32_t talus_crc32c(uint32_t crc, const void *data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const unsigned char *p = data;
  uint32_t c = ~crc;
#ifdef CRC_HW
  if (crc_use_hw) return ~crc_hw(c, p, n);
#endif
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo =
        c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
        crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
        crc_table[0][p[7]];
  }
  while (n--)
    c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xFF];
  return ~c;
}

/* ---- little-endian fields and the header ---- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

typedef struct blob_header {
  talus_store_key key;
  uint32_t flags, chunk, crc;
  uint64_t raw, packed;
} blob_header;

/* Serialises h into the 64-byte on-disk header, its own CRC last. */
static void header_encode(unsigned char *b, const blob_header *h) {
  memset(b, 0, BLOB_HEADER);
  memcpy(b, BLOB_MAGIC, 8);
  put_u32(b + 8, BLOB_VERSION);
  put_u32(b + 12, h->flags);
  put_u32(b + 16, (uint32_t)h->key.tile);
  put_u32(b + 20, (uint32_t)h->key.part);
  put_u64(b + 24, (uint64_t)h->key.step);
  put_u64(b + 32, h->raw);
  put_u64(b + 40, h->packed);
  put_u32(b + 48, h->chunk);
  put_u32(b + 52, h->crc);
  put_u32(b + 60, talus_crc32c(0, b, 60));
}

/* Parses and checks a header; returns the reason it is bad, NULL if good. */
static const char *header_decode(const unsigned char *b, blob_header *h) {
  if (memcmp(b, BLOB_MAGIC, 8) != 0) return "bad magic";
  if (get_u32(b + 60) != talus_crc32c(0, b, 60)) return "header checksum mismatch";
  if (get_u32(b + 8) != BLOB_VERSION) return "unknown version";
  h->flags = get_u32(b + 12);
  h->key.tile = (int32_t)get_u32(b + 16);
  h->key.part = (int32_t)get_u32(b + 20);
  h->key.step = (int64_t)get_u64(b + 24);
  h->raw = get_u64(b + 32);
  h->packed = get_u64(b + 40);
  h->chunk = get_u32(b + 48);
  h->crc = get_u32(b + 52);
  if ((h->flags & ~FLAG_SHUFFLE) || h->chunk != TALUS_STORE_CHUNK) return "bad header fields";
  return NULL;
}

/* ---- the 4-byte lane shuffle of one chunk ---- */

/* Writes the m bytes of src as 4 byte planes plus the m % 4 tail bytes
 * (one sequential pass over src feeding four sequential planes). */
static void shuffle4(unsigned char *restrict dst, const unsigned char *restrict src, size_t m) {
  size_t lanes = m / 4;
  unsigned char *d0 = dst, *d1 = dst + lanes, *d2 = dst + 2 * lanes, *d3 = dst + 3 * lanes;
  for (size_t i = 0; i < lanes; i++) {
    d0[i] = src[4 * i];
    d1[i] = src[4 * i + 1];
    d2[i] = src[4 * i + 2];
    d3[i] = src[4 * i + 3];
  }
  memcpy(dst + 4 * lanes, src + 4 * lanes, m % 4);
}

/* Inverse of shuffle4. */
static void unshuffle4(unsigned char *restrict dst, const unsigned char *restrict src, size_t m) {
  size_t lanes = m / 4;
  const unsigned char *s0 = src, *s1 = src + lanes, *s2 = src + 2 * lanes, *s3 = src + 3 * lanes;
  for (size_t i = 0; i < lanes; i++) {
    dst[4 * i] = s0[i];
    dst[4 * i + 1] = s1[i];
    dst[4 * i + 2] = s2[i];
    dst[4 * i + 3] = s3[i];
  }
  memcpy(dst + 4 * lanes, src + 4 * lanes, m % 4);
}

/* ---- write ---- */

/* Writes all n bytes at the current offset; -1 with errno on failure. */
static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) {
      errno = EIO;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Buffers of a streaming write; owned by blob_write_stream. */
typedef struct wstate {
  ZSTD_CCtx *z;
  unsigned char *shuf, *out;
  size_t out_cap;
} wstate;

/* Compresses data (shuffled per chunk when elem4) into fd after the
 * header; fills h->crc and h->packed. Returns a static reason on a zstd
 * failure, "" with errno on a write failure, NULL on success. */
static const char *stream_out(int fd, wstate *w, const unsigned char *data, size_t n, int elem4,
                              blob_header *h) {
  size_t off = 0;
  do {
    size_t m = n - off < TALUS_STORE_CHUNK ? n - off : TALUS_STORE_CHUNK;
    h->crc = talus_crc32c(h->crc, data + off, m);
    const unsigned char *src = data + off;
    if (elem4) {
      shuffle4(w->shuf, src, m);
      src = w->shuf;
    }
    off += m;
    ZSTD_EndDirective end = off == n ? ZSTD_e_end : ZSTD_e_continue;
    ZSTD_inBuffer in = {src, m, 0};
    size_t left;
    do {
      ZSTD_outBuffer out = {w->out, w->out_cap, 0};
      left = ZSTD_compressStream2(w->z, &out, &in, end);
      if (ZSTD_isError(left)) return ZSTD_getErrorName(left);
      if (write_all(fd, w->out, out.pos) != 0) return "";
      h->packed += out.pos;
    } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
  } while (off < n);
  return NULL;
}

/* Allocates the buffers and zstd context of a write; 0 on success. */
static int wstate_init(wstate *w, size_t n, int level, int workers) {
  w->out_cap = ZSTD_CStreamOutSize();
  w->z = ZSTD_createCCtx();
  w->shuf = malloc(TALUS_STORE_CHUNK);
  w->out = malloc(w->out_cap);
  if (!w->z || !w->shuf || !w->out) return -1;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(w->z, n)))
    return -1;
  /* Large blobs compress on worker threads while this one shuffles and
   * checksums the next chunk (the frame decodes to the same bytes). A
   * libzstd without threads refuses the parameter: then single-threaded. */
  if (n >= 4 * TALUS_STORE_CHUNK && workers > 1)
    (void)ZSTD_CCtx_setParameter(w->z, ZSTD_c_nbWorkers, workers);
  return 0;
}

static void wstate_free(wstate *w) {
  ZSTD_freeCCtx(w->z);
  free(w->shuf);
  free(w->out);
}

/* Streams header placeholder, payload and the final header into fd. */
static talus_status blob_write_fd(int fd, const char *tmp, talus_store_key key, const void *data,
                                  size_t n, int elem4, int level, int workers) {
  wstate w = {0};
  blob_header h = {key, elem4 ? FLAG_SHUFFLE : 0u, (uint32_t)TALUS_STORE_CHUNK, 0, n, 0};
  unsigned char hb[BLOB_HEADER] = {0};
  talus_status st = TALUS_OK;
  if (wstate_init(&w, n, level, workers) != 0) {
    st = talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for zstd (level %d)", level);
  } else if (write_all(fd, hb, BLOB_HEADER) != 0) {
    st = talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", tmp, strerror(errno));
  } else {
    const char *why = stream_out(fd, &w, data ? data : (const void *)"", n, elem4, &h);
    if (why && why[0])
      st = talus_fail(TALUS_ERR_INTERNAL, "store", "zstd compression failed: %s", why);
    else if (why)
      st = talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", tmp, strerror(errno));
  }
  if (st == TALUS_OK) {
    header_encode(hb, &h);
    if (pwrite(fd, hb, BLOB_HEADER, 0) != BLOB_HEADER)
      st = talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", tmp, strerror(errno));
  }
  wstate_free(&w);
  return st;
}

talus_status talus_blob_write(const char *path, talus_store_key key, const void *data, size_t n,
                              int elem4, int level, int sync, uint64_t *file_bytes) {
  int workers = omp_in_parallel() ? 0 : omp_get_max_threads();
  return talus_blob_write_mt(path, key, data, n, elem4, level, workers, sync, file_bytes);
}

talus_status talus_blob_write_mt(const char *path, talus_store_key key, const void *data, size_t n,
                                 int elem4, int level, int workers, int sync,
                                 uint64_t *file_bytes) {
  char tmp[TALUS_PATH_BUF];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "path too long: %s", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return talus_fail(TALUS_ERR_IO, "store", "cannot create %s: %s", tmp, strerror(errno));
  talus_status st = blob_write_fd(fd, tmp, key, data, n, elem4, level, workers);
  struct stat sb;
  if (st == TALUS_OK && sync && fsync(fd) != 0)
    st = talus_fail(TALUS_ERR_IO, "store", "cannot sync %s: %s", tmp, strerror(errno));
  if (st == TALUS_OK && fstat(fd, &sb) != 0)
    st = talus_fail(TALUS_ERR_IO, "store", "cannot stat %s: %s", tmp, strerror(errno));
  if (close(fd) != 0 && st == TALUS_OK)
    st = talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", tmp, strerror(errno));
  if (st == TALUS_OK && rename(tmp, path) != 0)
    st = talus_fail(TALUS_ERR_IO, "store", "cannot rename %s: %s", tmp, strerror(errno));
  if (st != TALUS_OK) {
    unlink(tmp);
    return st;
  }
  if (file_bytes) *file_bytes = (uint64_t)sb.st_size;
  return TALUS_OK;
}

/* ---- read ---- */

/* Reads exactly n bytes at the current offset; -1 with errno, or 1 on a
 * premature end of file. */
static int read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return 1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

static talus_status corrupt(const char *path, const char *why) {
  return talus_fail(TALUS_ERR_FORMAT, "store", "tile file %s is corrupt (%s)", path, why);
}

/* Decompresses h->packed bytes from fd into out (h->raw bytes). Returns a
 * reason on bad data, "" with errno on a read error, NULL on success. */
static const char *stream_in(int fd, const blob_header *h, unsigned char *out) {
  ZSTD_DCtx *z = ZSTD_createDCtx();
  size_t cap = ZSTD_DStreamInSize();
  unsigned char *buf = malloc(cap);
  const char *why = (!z || !buf) ? "out of memory" : NULL;
  ZSTD_outBuffer o = {out, h->raw, 0};
  size_t ret = 1;
  for (uint64_t left = h->packed; !why && left > 0;) {
    size_t m = left < cap ? (size_t)left : cap;
    int r = read_all(fd, buf, m);
    if (r != 0) {
      why = r < 0 ? "" : "truncated";
      break;
    }
    left -= m;
    ZSTD_inBuffer in = {buf, m, 0};
    while (!why && in.pos < in.size) {
      size_t ipos = in.pos, opos = o.pos;
      ret = ZSTD_decompressStream(z, &o, &in);
      if (ZSTD_isError(ret))
        why = "undecodable payload";
      else if (ret == 0 && (in.pos < in.size || left > 0))
        why = "data after the payload";
      else if (in.pos == ipos && o.pos == opos)
        why = "size mismatch"; /* output full, frame wants more: stuck */
    }
  }
  if (!why && (ret != 0 || o.pos != h->raw)) why = "size mismatch";
  int err = errno; /* a read error's cause, kept across the frees */
  ZSTD_freeDCtx(z);
  free(buf);
  errno = err;
  return why;
}

/* Undoes the per-chunk shuffle in place and returns the raw bytes' CRC;
 * -1 (as uint64) when the scratch chunk cannot be allocated. */
static uint64_t unshuffle_crc(unsigned char *data, size_t n, int shuffled) {
  if (!shuffled) return talus_crc32c(0, data, n);
  unsigned char *tmp = malloc(TALUS_STORE_CHUNK);
  if (!tmp) return UINT64_MAX;
  uint32_t crc = 0;
  for (size_t off = 0; off < n; off += TALUS_STORE_CHUNK) {
    size_t m = n - off < TALUS_STORE_CHUNK ? n - off : TALUS_STORE_CHUNK;
    memcpy(tmp, data + off, m);
    unshuffle4(data + off, tmp, m);
    crc = talus_crc32c(crc, data + off, m);
  }
  free(tmp);
  return crc;
}

/* Header checks against the file size and the key asked for. */
static const char *header_check(const blob_header *h, talus_store_key key, uint64_t size) {
  if (h->key.tile != key.tile || h->key.step != key.step || h->key.part != key.part)
    return "holds another key";
  if (size < BLOB_HEADER + h->packed) return "truncated";
  if (size > BLOB_HEADER + h->packed) return "size mismatch";
  if (h->raw > ((uint64_t)1 << 46)) return "bad header fields";
  return NULL;
}

/* Reads the verified payload of an open blob file into *data, a buffer
 * from mem (released again on failure). */
static talus_status blob_read_fd(int fd, const char *path, talus_store_key key, uint64_t size,
                                 const talus_blob_mem *mem, void **data, size_t *n) {
  unsigned char hb[BLOB_HEADER];
  blob_header h;
  if (size < BLOB_HEADER) return corrupt(path, "truncated");
  int r = read_all(fd, hb, BLOB_HEADER);
  if (r != 0)
    return r > 0 ? corrupt(path, "truncated")
                 : talus_fail(TALUS_ERR_IO, "store", "cannot read %s: %s", path, strerror(errno));
  const char *why = header_decode(hb, &h);
  if (!why) why = header_check(&h, key, size);
  if (why) return corrupt(path, why);
  unsigned char *out = mem->alloc(mem->user, h.raw ? (size_t)h.raw : 1);
  if (!out) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory reading %s", path);
  talus_status st = TALUS_OK;
  why = stream_in(fd, &h, out);
  if (why && !why[0])
    st = talus_fail(TALUS_ERR_IO, "store", "cannot read %s: %s", path, strerror(errno));
  else if (why)
    st = corrupt(path, why);
  uint64_t crc = st == TALUS_OK ? unshuffle_crc(out, (size_t)h.raw, h.flags & FLAG_SHUFFLE) : 0;
  if (st == TALUS_OK && crc == UINT64_MAX)
    st = talus_fail(TALUS_ERR_NOMEM, "store", "out of memory reading %s", path);
  else if (st == TALUS_OK && crc != h.crc)
    st = corrupt(path, "checksum mismatch");
  if (st != TALUS_OK) {
    mem->release(mem->user, out);
    return st;
  }
  *data = out;
  *n = (size_t)h.raw;
  return TALUS_OK;
}

static void *heap_alloc(void *user, size_t n) {
  (void)user;
  return malloc(n);
}
static void heap_release(void *user, void *p) {
  (void)user;
  free(p);
}

const talus_blob_mem talus_blob_heap = {heap_alloc, heap_release, NULL};

talus_status talus_blob_read(const char *path, talus_store_key key, void **data, size_t *n,
                             uint64_t *file_bytes, int *missing) {
  return talus_blob_read_mem(path, key, &talus_blob_heap, data, n, file_bytes, missing);
}

talus_status talus_blob_read_mem(const char *path, talus_store_key key, const talus_blob_mem *mem,
                                 void **data, size_t *n, uint64_t *file_bytes, int *missing) {
  *data = NULL;
  *n = 0;
  if (missing) *missing = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (missing) *missing = errno == ENOENT;
    return talus_fail(TALUS_ERR_IO, "store", "cannot open %s: %s", path, strerror(errno));
  }
  struct stat sb;
  talus_status st = TALUS_OK;
  if (fstat(fd, &sb) != 0)
    st = talus_fail(TALUS_ERR_IO, "store", "cannot stat %s: %s", path, strerror(errno));
  else
    st = blob_read_fd(fd, path, key, (uint64_t)sb.st_size, mem, data, n);
  close(fd);
  if (st == TALUS_OK && file_bytes) *file_bytes = (uint64_t)sb.st_size;
  return st;
}
