/*
 * store_private.h — what store.c (bookkeeping, memory store, directory,
 * manifest, journal: the synchronous store) and async.c (the disk store's
 * write-behind queue and read-ahead, and the store.h calls they change)
 * share: the store's struct and store.c's synchronous operations. The
 * layers: disk.c (the codec) < store.c < async.c; async.c calls down
 * only. Not for use outside io/store/.
 *
 * Concurrency (who may touch what, and under which lock):
 * - tiles[t]: the index, under stripe[t % STRIPES]. An entry's `seq` says
 *   which queued write brings its file (0: the file is in place).
 * - committed[]: the steps the manifest and journal hold (durable), set
 *   under `lock` by whoever appends the journal (the caller, or the
 *   writer thread). promised[]: the steps callers see
 *   (talus_store_committed), set when a commit is called; equal to
 *   committed[] whenever the queue is empty.
 * - The queue (jobs, seq counters, prefetch slots, the sticky error) is
 *   guarded by q_lock, with q_cond broadcast on every change of state.
 *   Lock order: q_lock before a stripe; `lock` and pool_lock are taken
 *   alone.
 * - The pool (pool_lock) and the counters (atomics) are free for all.
 */
#ifndef TALUS_IO_STORE_PRIVATE_H
#define TALUS_IO_STORE_PRIVATE_H

#include "io/store/store.h"

#include <pthread.h>
#include <stdatomic.h>

#define STRIPES         64
#define MANIFEST_MAGIC  "TALUS-STORE 1\n"
#define JOURNAL_MAGIC   0x314A5254u /* "TRJ1" */
#define JOURNAL_RECORD  24
#define JOURNAL_COMPACT 4096

/* A pooled blob buffer (see the pool section of store.c). */
typedef struct pool_buf {
  void *p;
  size_t cap;
} pool_buf;

#define POOL_MAX  64
#define POOL_HEAD 64                /* bytes before a pooled buffer: its capacity */
#define POOL_HUGE ((size_t)8 << 20) /* buffers from here up ask for huge pages */

/* One live blob of a tile. data/n: the bytes (MEMORY); unused on DISK.
 * seq: DISK, the queued write that brings its file (0: in place). */
typedef struct entry {
  int64_t step;
  int32_t part;
  size_t n;
  void *data;
  uint64_t seq;
} entry;

typedef struct tile_slot {
  entry *e;
  int count, cap;
} tile_slot;

typedef struct meta_kv {
  char *key, *value;
} meta_kv;

/* A queued mutating call of the disk store (async.c), run in call order. */
typedef struct store_job store_job;

/* A read-ahead slot (async.c): the blob of key read by a reader thread. */
typedef struct prefetch_slot {
  talus_store_key key;
  int state;      /* PF_* (async.c) */
  uint64_t after; /* the queued write of key to wait for (0: none) */
  void *buf;      /* PF_READY: the blob, a pool buffer */
  size_t n;
} prefetch_slot;

#define PREFETCH_SLOTS 16 /* blobs read ahead at most (a tile reads at most 9) */
#define IO_READERS_MAX 8

struct talus_store {
  talus_store_kind kind;
  int ntiles, sync, level, recycle;
  char *dir, *run_id;
  tile_slot *tiles;           /* guarded by stripe[tile % STRIPES] */
  _Atomic int64_t *committed; /* durable (manifest + journal); written under lock */
  _Atomic int64_t *promised;  /* as callers see it (committed, queued commits included) */
  pthread_mutex_t stripe[STRIPES];
  pthread_mutex_t lock; /* commit, meta, manifest, journal */
  meta_kv *meta;
  int nmeta;
  uint32_t epoch;         /* DISK: journal epoch of the manifest */
  int journal_fd, dir_fd; /* DISK: -1 when not open */
  uint64_t journal_records;
  _Atomic uint64_t raw_written, bytes_written, raw_read, bytes_read, blobs_written, blobs_read;
  _Atomic uint64_t io_ns; /* wall time inside put, get and commit, summed over threads */
  _Atomic size_t held;    /* blob bytes + entry arrays */
  pthread_mutex_t pool_lock;
  pool_buf pool[POOL_MAX]; /* buffers of dropped or released blobs, for reuse */
  int npool;
  size_t pool_bytes, largest; /* bytes pooled; largest buffer asked for */
  /* DISK write-behind and read-ahead (async.c); under q_lock, but `async`
   * and `nreaders`, set before the first put and read freely after */
  int async;            /* 1 while the queue's threads run */
  int async_never;      /* set_io_threads(s, -1): stays synchronous */
  int nreaders, q_stop; /* reader threads; 1 when the threads must end */
  pthread_t writer, readers[IO_READERS_MAX];
  pthread_mutex_t q_lock;
  pthread_cond_t q_cond;
  store_job *q_head, *q_tail; /* queued calls, oldest first */
  uint64_t q_seq, q_done;     /* last seq given out; every job up to q_done has run */
  size_t q_bytes;             /* blob bytes queued */
  talus_status q_err;         /* first failure of a queued call (sticky) */
  uint64_t q_err_seq;         /* its seq: later jobs were skipped */
  char q_msg[512];            /* its message */
  prefetch_slot pf[PREFETCH_SLOTS];
};

/* ---- store.c: the synchronous store, below async.c ----
 * The store.h calls a queue changes (put, put_owned, get, get_ref,
 * drop_before, commit, set_meta, close, destroy) are async.c's: each
 * queues, waits or passes through to its synchronous version here. */

talus_status store_key_check(const talus_store *s, talus_store_key k);
talus_status store_put_sync(talus_store *s, talus_store_key key, const void *data, size_t n,
                            int elem4);
talus_status store_put_owned_sync(talus_store *s, talus_store_key key, void *blob, size_t n,
                                  int elem4);
talus_status store_get_sync(talus_store *s, talus_store_key key, void **data, size_t *n);
talus_status store_get_ref_sync(talus_store *s, talus_store_key key, const void **data, size_t *n,
                                void **hold);
talus_status store_drop_before_sync(talus_store *s, int32_t tile, int64_t before_step);
talus_status store_commit_sync(talus_store *s, int32_t tile, int64_t step);
talus_status store_set_meta_sync(talus_store *s, const char *key, const char *value);
void store_close_sync(talus_store *s);
talus_status store_destroy_sync(talus_store *s);
/* Takes the entries of tile older than before_step out of the index (a
 * queued drop's first half): their keys in *out (malloc'd), *count. */
talus_status store_drop_index(talus_store *s, int32_t tile, int64_t before_step,
                              talus_store_key **out, int *count);

pthread_mutex_t *store_stripe(const talus_store *s, int32_t tile);
void store_blob_path(const talus_store *s, talus_store_key k, char *buf, size_t size);
/* Index position of (step, part) in tile's slot, -1 if absent; caller
 * holds the stripe. */
int store_slot_find(const tile_slot *t, int64_t step, int32_t part);
/* Indexes key (DISK) as brought by queued write seq; caller holds the
 * stripe. */
talus_status store_index_queued(talus_store *s, talus_store_key key, uint64_t seq);
/* Writes the blob file of key (zstd with `workers` threads) and counts it. */
talus_status store_write_now(talus_store *s, talus_store_key key, const void *data, size_t n,
                             int elem4, int workers);
/* Appends the journal record of (tile, step) and records it as durable. */
talus_status store_commit_now(talus_store *s, int32_t tile, int64_t step);
/* Removes the files of keys[0..n) (a drop's), then counts the drop. */
talus_status store_unlink_now(talus_store *s, const talus_store_key *keys, int n);
/* Reads the blob of key into a pool buffer (*hold) and counts it. */
talus_status store_read_now(talus_store *s, talus_store_key key, void **hold, size_t *n);

#endif /* TALUS_IO_STORE_PRIVATE_H */
