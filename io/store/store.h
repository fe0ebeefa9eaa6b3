/*
 * store.h — the tile store: keeps the byte blobs ("blocks") that halo/
 * serialises from a tile's persistent fields — each tile's core and its
 * edge strips, per global step — between generations, plus a manifest of
 * each tile's committed step so that a killed run can resume. One interface,
 * two implementations: MEMORY (blobs held as they are) and DISK (one
 * zstd-compressed, byte-shuffled, checksummed file per blob).
 *
 * Design notes
 * ------------
 * - Keys. A blob is named by (tile, step, part): part 0 is the tile's core,
 *   parts 1..8 its edge strips in the order of the TALUS_PART_* enum below
 *   (sides R,U,L,D as TALUS_DIR_*, then corners RU,LU,LD,RD counter-
 *   clockwise), parts 9..15 are free for the caller (e.g. a tile's ledger).
 *   The store never looks inside a blob; "only the layers in use" is the
 *   serialiser's job (halo/ writes layers up to the tile's highest count).
 * - Generations. The tiler puts a tile's new core and strips for step s+K,
 *   then commits s+K; once every tile has committed s+K it drops what is
 *   older than s+K (drop_before). Strips of the open generation therefore
 *   stay until the generation completes, and a tile that resumes at its
 *   committed step s finds its core and its neighbours' strips at step s.
 * - Disk layout. All files lie flat in DIR:
 *     t<tile>_s<step>_p<part>.tzst   one blob (format below)
 *     *.tmp                          a file being written (never read)
 *     manifest                       text snapshot: run id, tile count,
 *                                    journal epoch, meta, committed steps,
 *                                    and a CRC32C line over all of it
 *     journal.<epoch>                binary commit records appended since
 *                                    the snapshot
 *   Blob files and the manifest are written to "<name>.tmp" and renamed, so
 *   a name holds either a complete file or nothing. A commit appends one
 *   24-byte record (magic, tile, step, epoch, CRC32C) to the journal instead
 *   of rewriting the manifest: a commit costs O(1), not O(tiles), so a
 *   100 000-tile run does not write gigabytes of manifests per generation.
 *   When the journal holds more than max(4096, ntiles) records, and on every
 *   open and set_meta, the manifest is rewritten (tmp + rename) with the
 *   next epoch and the old journal is removed: a crash between the rename
 *   and the removal leaves a journal of an older epoch, which is ignored.
 * - Crash safety (SIGKILL). A put returns only after its file is renamed
 *   into place, and commit appends its record after, so a committed step's
 *   blobs always exist. Re-running a generation after a resume rewrites
 *   the same names with the same bytes (rename replaces them). A torn last
 *   journal record (the process died inside commit, which therefore never
 *   returned) is ignored; a bad record followed by good ones is corruption.
 *   With talus_store_set_sync(s, 1) files are fsync'ed before rename and
 *   the directory and journal are fsync'ed in commit, which extends the
 *   guarantee to power loss; SIGKILL safety does not need it (the page cache
 *   survives the process), so it is off by default.
 * - Blob file (all integers little-endian): a 64-byte header
 *     0 "TALUSBLK"  8 u32 version (1)  12 u32 flags (bit 0: 4-byte shuffle)
 *     16 i32 tile  20 i32 part  24 i64 step  32 u64 raw size
 *     40 u64 compressed size  48 u32 shuffle chunk  52 u32 CRC32C of the raw
 *     bytes  56 u32 zero  60 u32 CRC32C of header bytes 0..59
 *   then one zstd frame of the raw bytes. With the shuffle flag the raw
 *   bytes are cut in chunks of TALUS_STORE_CHUNK bytes and each chunk is
 *   stored as its 4 byte planes (all first bytes of its 4-byte lanes, then
 *   all second bytes, ...) followed by its n % 4 tail bytes: the exponent
 *   and high mantissa bytes of smooth floats form long runs that zstd
 *   compresses well. Chunking keeps the extra memory of a put or get at
 *   O(chunk) (~ 4 MiB with zstd's context; up to ~16 MiB with zstd's
 *   worker threads on large blobs, TALUS_STORE_CALL_BYTES) instead of
 *   O(blob).
 * - Checksum: CRC32C (Castagnoli, reflected polynomial 0x82F63B78, the
 *   iSCSI/ext4 CRC; software slice-by-8), chosen because it detects every
 *   burst error up to 32 bits. A get checks magic, header CRC, version, that
 *   the header's key is the one asked for, that the file size is header +
 *   compressed size (truncation), that the zstd frame decodes to exactly the
 *   raw size, and finally the CRC of the raw bytes. Any failure is
 *   TALUS_ERR_FORMAT "store: tile file X is corrupt (why)" and no data is
 *   returned.
 * - Threads. Calls on different keys may run concurrently (puts, gets and
 *   drops of different tiles from OpenMP workers). Per-tile bookkeeping is
 *   guarded by striped mutexes, commit/meta/manifest by one mutex, counters
 *   are atomic. Two concurrent puts of the same key are not supported.
 *   (Locks and who owns what: store_private.h.)
 * - Write-behind and read-ahead (DISK, after talus_store_set_io_threads;
 *   the tiler turns them on). The mutating calls — put, put_owned, commit,
 *   drop_before — are queued, in call order, for one writer thread and
 *   return once queued; the writer runs them in that order, each exactly
 *   as the synchronous store would (tmp + rename, then the journal
 *   record). So the files on disk after a kill at any instant are those a
 *   synchronous store leaves after some prefix of the calls: a commit's
 *   record still follows the renames of its tile's blobs, and a resume
 *   sees a state a synchronous run passes through (the crash injection
 *   below counts the queued calls as they complete, in the same order).
 *   What callers observe runs ahead of the disk and is always the state
 *   after every call made: talus_store_has and _committed answer for the
 *   queued calls too, and a get of a key whose write is queued waits for
 *   it. The zstd work, the checksums and the writes thus leave the
 *   caller's thread; a caller that computes meanwhile (the tiler, the
 *   next tile) overlaps them. The queue holds at most about two of the
 *   largest blobs (a tile's core and strips): a put beyond that waits.
 *   talus_store_prefetch asks a reader thread to read and decompress a
 *   blob ahead (after its queued write, if any); the next get_ref of that
 *   key takes it (PREFETCH_SLOTS blobs at most; more are ignored). The
 *   blob's bytes are the file's, so a read ahead changes nothing but when
 *   the work is done. A queued call that fails fails the store: later
 *   queued calls are skipped (never a commit after a failed put), and the
 *   error comes back from the next call that queues, from
 *   talus_store_flush, or from a get that needed a skipped write.
 * - Memory. The MEMORY store holds every blob put and not dropped (plus,
 *   with set_recycle, dropped buffers kept for reuse: at most as many bytes
 *   as the live blobs; see talus_store_blob_alloc). The DISK
 *   store holds only bookkeeping: ~24 bytes per tile plus 32 bytes per live
 *   blob; each concurrent put/get adds at most TALUS_STORE_CALL_BYTES while
 *   it runs (zstd levels <= 3; level 19 needs ~95 MB), and a get's result
 *   (the blob itself) belongs to the caller; put_owned and get_ref recycle
 *   their buffers in a pool of at most twice the largest blob. With
 *   write-behind and read-ahead add the queued blobs (about two of the
 *   largest) and up to PREFETCH_SLOTS blobs read ahead (the tiler asks for
 *   one tile's), plus the writer's and readers' zstd contexts.
 */
#ifndef TALUS_IO_STORE_H
#define TALUS_IO_STORE_H

#include "common/common.h"
#include <stddef.h>
#include <stdint.h>

/* Parts of a tile: its core, then its edge strips (sides in TALUS_DIR_*
 * order, then corners counter-clockwise from RU). 9..15 are caller-defined. */
enum {
  TALUS_PART_CORE = 0,
  TALUS_PART_R = 1,
  TALUS_PART_U = 2,
  TALUS_PART_L = 3,
  TALUS_PART_D = 4,
  TALUS_PART_RU = 5,
  TALUS_PART_LU = 6,
  TALUS_PART_LD = 7,
  TALUS_PART_RD = 8,
  TALUS_STORE_PARTS = 16 /* parts are 0 .. TALUS_STORE_PARTS-1 */
};

#define TALUS_STORE_CHUNK      ((size_t)1 << 20)  /* shuffle / streaming chunk [bytes] */
#define TALUS_STORE_CALL_BYTES ((size_t)16 << 20) /* transient memory of a disk put/get */
#define TALUS_STORE_RUN_ID_MAX 1024               /* longest run id / meta key+value */

typedef struct talus_store talus_store;
typedef enum { TALUS_STORE_MEMORY = 0, TALUS_STORE_DISK = 1 } talus_store_kind;

/* A blob key: tile in [0, ntiles), step >= 0 (global step), part in
 * [0, TALUS_STORE_PARTS). */
typedef struct talus_store_key {
  int32_t tile;
  int64_t step;
  int32_t part;
} talus_store_key;

/*
 * Opens a store for ntiles tiles; *out owned by the caller (close or
 * destroy). MEMORY ignores dir and resume. DISK: dir is created (with its
 * parents) if missing. resume == 0: dir must be empty, or hold an old talus
 * store, whose files are then removed (other files are left alone); a
 * non-empty directory without a manifest is refused, so user data is never
 * clobbered. resume == 1: the manifest and journal are loaded (committed
 * steps, meta), leftover *.tmp files are removed; a missing manifest is
 * TALUS_ERR_IO, a run_id or ntiles that differs from the manifest's is
 * TALUS_ERR_ARGUMENT "store DIR belongs to another run". run_id identifies
 * the run (e.g. a hash of parameters, input and grid): one line, printable,
 * at most TALUS_STORE_RUN_ID_MAX bytes.
 */
talus_status talus_store_open(talus_store **out, talus_store_kind kind, const char *dir,
                              const char *run_id, int ntiles, int resume);
/* MEMORY or DISK, as opened. */
talus_store_kind talus_store_get_kind(const talus_store *s);
/* Frees the store; disk files stay in place (for a later resume). NULL is a
 * no-op. */
void talus_store_close(talus_store *s);
/* Removes the store's files (and DIR itself when nothing else is in it),
 * then frees the store, also on error. For the end of a successful run. */
talus_status talus_store_destroy(talus_store *s);

/* DISK: fsync files before rename and the directory + journal in commit
 * (power-loss safety; default off). MEMORY: no effect. */
void talus_store_set_sync(talus_store *s, int on);
/* MEMORY: keep the buffers of dropped blobs for reuse by later puts and
 * talus_store_blob_alloc (up to the bytes of the live blobs) instead of
 * freeing them; for a caller that replaces every blob each generation
 * (the tiler). Default off: a drop frees its memory. DISK: no effect (its
 * pool is always on and bounded by two blob buffers). */
void talus_store_set_recycle(talus_store *s, int on);
/* DISK: zstd level of later puts (default 1: ~850 MB/s for shuffled floats
 * on one core, within 2% of level 3's ratio). The options that set it
 * (--store-level) take TALUS_STORE_LEVEL_MIN..MAX: negative levels are
 * zstd's fast modes (bigger files, less CPU); the level changes the files'
 * size, never the blobs read back, so a resume may use another. */
#define TALUS_STORE_LEVEL_MIN     (-7)
#define TALUS_STORE_LEVEL_MAX     19
#define TALUS_STORE_LEVEL_DEFAULT 1
void talus_store_set_level(talus_store *s, int level);
/* DISK: starts write-behind (one writer thread) and read-ahead (`readers`
 * reader threads; 0: none) as described above; before the first put.
 * readers < 0: the store stays synchronous (later calls do nothing; for a
 * run whose memory limit leaves no room for the queue). MEMORY, or once
 * started: no effect. */
talus_status talus_store_set_io_threads(talus_store *s, int readers);
/* Waits until every queued call is on disk; the first error of a queued
 * call, if any (TALUS_OK without a queue). */
talus_status talus_store_flush(talus_store *s);
/* DISK with read-ahead: queues the read of key's blob on a reader thread
 * (ignored when key is absent, already read ahead, or every slot is
 * taken; MEMORY or without readers: no effect). */
void talus_store_prefetch(talus_store *s, talus_store_key key);

/*
 * Stores a copy of n bytes of data (data may be NULL when n == 0) under
 * key, replacing any blob of that key. elem4 = 1 when the blob is mostly
 * 4-byte values (floats): the disk store byte-shuffles it before zstd.
 * DISK write failures (ENOSPC, EFBIG, ...) are TALUS_ERR_IO naming the file
 * and the cause; the temporary file is removed and the key keeps its old
 * blob, if any.
 */
talus_status talus_store_put(talus_store *s, talus_store_key key, const void *data, size_t n,
                             int elem4);
/*
 * Fetches a blob: *data is malloc'd (caller frees with free(); non-NULL even
 * when *n == 0), *n its size. A missing key is TALUS_ERR_IO "store: missing
 * tile T part P at step S"; a damaged file TALUS_ERR_FORMAT "store: tile
 * file X is corrupt (why)". On error *data is NULL and *n is 0.
 */
talus_status talus_store_get(talus_store *s, talus_store_key key, void **data, size_t *n);
/*
 * Zero-copy variants for the tiler (the blobs are large and every
 * generation moves each once):
 * - talus_store_blob_alloc: a buffer of at least n bytes from the store's
 *   pool of recycled blob buffers (NULL: out of memory). Give it back with
 *   talus_store_blob_release or hand it to put_owned; never free() it.
 * - talus_store_put_owned: as put, but takes over `blob` (from blob_alloc)
 *   whatever the outcome: MEMORY indexes the buffer itself (no copy), DISK
 *   writes it and recycles the buffer.
 * - talus_store_get_ref: as get, but *data may point into the store:
 *   MEMORY returns the indexed blob itself, valid until that key is
 *   dropped or put again, and *hold = NULL; DISK reads into a pool buffer
 *   returned in *hold too. Pass *hold to talus_store_blob_release when
 *   done (NULL is a no-op).
 */
void *talus_store_blob_alloc(talus_store *s, size_t n);
void talus_store_blob_release(talus_store *s, void *blob);
talus_status talus_store_put_owned(talus_store *s, talus_store_key key, void *blob, size_t n,
                                   int elem4);
talus_status talus_store_get_ref(talus_store *s, talus_store_key key, const void **data, size_t *n,
                                 void **hold);
/* 1 when a blob of key was put (or found on open) and not dropped. */
int talus_store_has(const talus_store *s, talus_store_key key);
/* Drops every blob of tile with step < before_step: cores and strips of
 * finished generations. */
talus_status talus_store_drop_before(talus_store *s, int32_t tile, int64_t before_step);

/* Records step as the committed step of tile (DISK: one journal record;
 * every blob the tile needs at that step must have been put before). */
talus_status talus_store_commit(talus_store *s, int32_t tile, int64_t step);
/* Committed step of tile; -1 when none yet (or tile out of range). */
int64_t talus_store_committed(const talus_store *s, int32_t tile);

/* Free-form run metadata persisted in the manifest ("steps_total" = "2000").
 * key: [A-Za-z0-9_.-]+; value: printable, one line. Setting a key again
 * replaces its value. DISK: rewrites the manifest. */
talus_status talus_store_set_meta(talus_store *s, const char *key, const char *value);
/* Value of a meta key, NULL when absent. Owned by the store, valid until
 * the key is set again or the store is closed; must not run concurrently
 * with set_meta (meta is set at the start of a run, not by workers). */
const char *talus_store_get_meta(const talus_store *s, const char *key);

/* Accounting for the run report. raw_* count blob bytes, bytes_* what was
 * written to / read from files (MEMORY: equal to raw_*). */
typedef struct talus_store_stats {
  uint64_t raw_written, bytes_written, raw_read, bytes_read, blobs_written, blobs_read;
  double io_seconds; /* wall time inside put, get(_ref) and commit, summed over threads */
} talus_store_stats;
void talus_store_get_stats(const talus_store *s, talus_store_stats *out);
/* Memory the store holds between calls: blobs (MEMORY) and bookkeeping. */
size_t talus_store_memory_bytes(const talus_store *s);

/* ---- blob file codec (disk.c), used by the disk store and tests ---- */

/* CRC32C of n bytes continuing from crc (start with 0). */
uint32_t talus_crc32c(uint32_t crc, const void *data, size_t n);
/* Writes the blob file `path` via "<path>.tmp" + rename (see the format
 * above); *file_bytes gets the file's size. sync: fsync before rename. */
talus_status talus_blob_write(const char *path, talus_store_key key, const void *data, size_t n,
                              int elem4, int level, int sync, uint64_t *file_bytes);
/* talus_blob_write with `workers` zstd threads for a large blob (0 or 1:
 * none) instead of the caller's OpenMP thread count. */
talus_status talus_blob_write_mt(const char *path, talus_store_key key, const void *data, size_t n,
                                 int elem4, int level, int workers, int sync, uint64_t *file_bytes);
/* Reads and verifies the blob file `path`, which must hold key. Missing
 * file: TALUS_ERR_IO with errno ENOENT kept in *missing = 1. */
talus_status talus_blob_read(const char *path, talus_store_key key, void **data, size_t *n,
                             uint64_t *file_bytes, int *missing);
/* Where talus_blob_read_mem puts the payload: alloc(user, n) gives a
 * buffer (NULL: out of memory), release(user, p) takes it back. */
typedef struct talus_blob_mem {
  void *(*alloc)(void *user, size_t n);
  void (*release)(void *user, void *p);
  void *user;
} talus_blob_mem;
/* Buffers from malloc, released with free (what talus_blob_read uses). */
extern const talus_blob_mem talus_blob_heap;
/* talus_blob_read into a buffer from mem (talus_blob_read: malloc). */
talus_status talus_blob_read_mem(const char *path, talus_store_key key, const talus_blob_mem *mem,
                                 void **data, size_t *n, uint64_t *file_bytes, int *missing);

#endif /* TALUS_IO_STORE_H */
