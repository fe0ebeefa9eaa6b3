/*
 * async.c — the disk store's write-behind queue and read-ahead (store.h,
 * "Write-behind and read-ahead"; the locks: store_private.h), and the
 * store.h calls they change, which queue, wait or pass through to
 * store.c's synchronous store (the layers: disk.c < store.c < async.c).
 *
 * Design notes
 * ------------
 * - One writer thread runs the queued calls (put, commit, drop) one after
 *   another in call order, each through the same code as a synchronous
 *   call (store_write_now, store_commit_now, store_unlink_now). One writer,
 *   not several, keeps the order of the files' renames and journal
 *   records exactly that of the calls, which is the whole crash-safety
 *   argument; the parallelism comes from zstd's worker threads inside a
 *   large put and from the caller, which computes meanwhile.
 * - Every queued call has a sequence number; q_done says every call up to
 *   it has run. An index entry remembers the seq of the write that brings
 *   its file, so a get waits for exactly that (store_async_wait_key).
 * - Reader threads serve prefetch slots: a slot names a key and the seq of
 *   its queued write (waited for first); the blob is read into a pool
 *   buffer and handed to the get_ref that asks for the key. A slot a get
 *   finds still queued is taken back and read by the get itself (no wait
 *   behind other reads). A put or drop of a key frees its slot; a slot
 *   being read then is orphaned and its reader frees the buffer.
 * - The first failure of a queued call is kept (q_err, its message) and
 *   every later queued call is skipped, so no commit follows a failed put;
 *   the error is raised again in the thread that next queues, flushes, or
 *   waits for a skipped write.
 */
#include "io/store/store_private.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { JOB_PUT, JOB_COMMIT, JOB_DROP };
enum { PF_FREE, PF_QUEUED, PF_READING, PF_READY, PF_FAILED, PF_ORPHAN };

struct store_job {
  int kind; /* JOB_* */
  uint64_t seq;
  talus_store_key key;   /* PUT: the blob's; COMMIT: tile and step */
  void *blob;            /* PUT: a pool buffer, released once written */
  size_t n;              /* PUT: its bytes */
  int elem4, workers;    /* PUT: shuffle; zstd threads of the caller */
  talus_store_key *keys; /* DROP: the files to remove (malloc'd) */
  int nkeys;
  store_job *next;
};

/* The kept failure raised again in this thread; caller holds q_lock. */
static talus_status queued_error(const talus_store *s) {
  const char *sep = strstr(s->q_msg, ": ");
  if (!sep) return talus_fail(s->q_err, "store", "%s", s->q_msg);
  char module[32];
  snprintf(module, sizeof module, "%.*s", (int)(sep - s->q_msg), s->q_msg);
  return talus_fail(s->q_err, module, "%s", sep + 2);
}

/* Runs one queued call as the synchronous store would. */
static talus_status job_run(talus_store *s, store_job *j) {
  switch (j->kind) {
  case JOB_PUT:
    return store_write_now(s, j->key, j->blob, j->n, j->elem4, j->workers);
  case JOB_COMMIT:
    return store_commit_now(s, j->key.tile, j->key.step);
  default:
    return store_unlink_now(s, j->keys, j->nkeys);
  }
}

/* Frees a job and what it owns (a put's blob goes back to the pool). */
static void job_free(talus_store *s, store_job *j) {
  talus_store_blob_release(s, j->blob);
  free(j->keys);
  free(j);
}

/* Notes job j done with status st (and this thread's message); caller
 * holds q_lock. */
static void job_done(talus_store *s, store_job *j, talus_status st) {
  if (st != TALUS_OK && s->q_err == TALUS_OK) {
    s->q_err = st;
    s->q_err_seq = j->seq;
    snprintf(s->q_msg, sizeof s->q_msg, "%s", talus_last_error());
  }
  s->q_done = j->seq;
  s->q_bytes -= j->n;
  pthread_cond_broadcast(&s->q_cond);
}

/* The writer thread: runs the queue in order until told to stop and the
 * queue is empty; after a failure it skips what is left. */
static void *writer_main(void *arg) {
  talus_store *s = arg;
  pthread_mutex_lock(&s->q_lock);
  for (;;) {
    while (!s->q_head && !s->q_stop)
      pthread_cond_wait(&s->q_cond, &s->q_lock);
    store_job *j = s->q_head;
    if (!j) break;
    int skip = s->q_err != TALUS_OK;
    pthread_mutex_unlock(&s->q_lock);
    talus_status st = skip ? TALUS_OK : job_run(s, j);
    pthread_mutex_lock(&s->q_lock);
    s->q_head = j->next;
    if (!s->q_head) s->q_tail = NULL;
    job_done(s, j, st);
    job_free(s, j);
  }
  pthread_mutex_unlock(&s->q_lock);
  return NULL;
}

/* ---- read-ahead ---- */

/* The seq of the queued write that brings key's file (0: in place) in
 * *seq; 0 when key is not in the index. */
static int key_seq(talus_store *s, talus_store_key key, uint64_t *seq) {
  pthread_mutex_lock(store_stripe(s, key.tile));
  const tile_slot *t = &s->tiles[key.tile];
  int i = store_slot_find(t, key.step, key.part);
  *seq = i >= 0 ? t->e[i].seq : 0;
  pthread_mutex_unlock(store_stripe(s, key.tile));
  return i >= 0;
}

/* The slot of key, NULL when none; caller holds q_lock. */
static prefetch_slot *slot_of(talus_store *s, talus_store_key k) {
  for (int i = 0; i < PREFETCH_SLOTS; i++) {
    prefetch_slot *p = &s->pf[i];
    if (p->state != PF_FREE && p->state != PF_ORPHAN && p->key.tile == k.tile &&
        p->key.step == k.step && p->key.part == k.part)
      return p;
  }
  return NULL;
}

/* Frees slot p (its buffer too) or, while it is read, orphans it; caller
 * holds q_lock. */
static void slot_forget(talus_store *s, prefetch_slot *p) {
  if (p->state == PF_READING) {
    p->state = PF_ORPHAN;
    return;
  }
  talus_store_blob_release(s, p->buf);
  p->buf = NULL;
  p->state = PF_FREE;
}

/* A queued slot whose write has run (or the store failed); caller holds
 * q_lock. */
static prefetch_slot *slot_ready_to_read(talus_store *s) {
  for (int i = 0; i < PREFETCH_SLOTS; i++)
    if (s->pf[i].state == PF_QUEUED && (s->pf[i].after <= s->q_done || s->q_err)) return &s->pf[i];
  return NULL;
}

/* A reader thread: reads queued slots until told to stop. */
static void *reader_main(void *arg) {
  talus_store *s = arg;
  pthread_mutex_lock(&s->q_lock);
  for (;;) {
    prefetch_slot *p = NULL;
    while (!s->q_stop && !(p = slot_ready_to_read(s)))
      pthread_cond_wait(&s->q_cond, &s->q_lock);
    if (!p) break;
    p->state = PF_READING;
    talus_store_key k = p->key;
    int failed = s->q_err && p->after >= s->q_err_seq; /* its write failed or was skipped */
    pthread_mutex_unlock(&s->q_lock);
    void *buf = NULL;
    size_t n = 0;
    talus_status st = failed ? TALUS_ERR_IO : store_read_now(s, k, &buf, &n);
    pthread_mutex_lock(&s->q_lock);
    if (p->state == PF_ORPHAN) {
      talus_store_blob_release(s, buf);
      p->state = PF_FREE;
    } else {
      p->buf = buf;
      p->n = n;
      p->state = st == TALUS_OK ? PF_READY : PF_FAILED;
    }
    pthread_cond_broadcast(&s->q_cond);
  }
  pthread_mutex_unlock(&s->q_lock);
  return NULL;
}

static void store_async_prefetch(talus_store *s, talus_store_key key) {
  uint64_t after = 0;
  if (!s->nreaders || !key_seq(s, key, &after)) return; /* absent: a get will say so */
  pthread_mutex_lock(&s->q_lock);
  prefetch_slot *p = slot_of(s, key);
  for (int j = 0; !p && j < PREFETCH_SLOTS; j++)
    if (s->pf[j].state == PF_FREE) {
      s->pf[j] = (prefetch_slot){key, PF_QUEUED, after, NULL, 0};
      pthread_cond_broadcast(&s->q_cond);
      break;
    }
  pthread_mutex_unlock(&s->q_lock);
}

static int store_async_take(talus_store *s, talus_store_key key, void **hold, size_t *n) {
  pthread_mutex_lock(&s->q_lock);
  prefetch_slot *p = slot_of(s, key);
  while (p && p->state == PF_READING)
    pthread_cond_wait(&s->q_cond, &s->q_lock);
  int got = p && p->state == PF_READY;
  if (got) {
    *hold = p->buf;
    *n = p->n;
    p->buf = NULL;
  }
  if (p) slot_forget(s, p); /* queued or failed: the caller reads it itself */
  pthread_mutex_unlock(&s->q_lock);
  return got;
}

/* ---- the queue ---- */

/* Appends j with the next seq, waiting while the queue holds more than
 * about two of the largest blobs; caller holds q_lock. The kept error
 * instead, after a failure (j is then freed). */
static talus_status enqueue(talus_store *s, store_job *j) {
  pthread_mutex_lock(&s->pool_lock);
  size_t cap = 2 * s->largest;
  pthread_mutex_unlock(&s->pool_lock);
  while (!s->q_err && s->q_head && s->q_bytes + j->n > cap)
    pthread_cond_wait(&s->q_cond, &s->q_lock);
  if (s->q_err) {
    job_free(s, j);
    return queued_error(s);
  }
  j->seq = ++s->q_seq;
  s->q_bytes += j->n;
  if (s->q_tail)
    s->q_tail->next = j;
  else
    s->q_head = j;
  s->q_tail = j;
  pthread_cond_broadcast(&s->q_cond);
  return TALUS_OK;
}

/* A zeroed job of `kind`, or NULL with the error recorded. */
static store_job *job_new(int kind) {
  store_job *j = calloc(1, sizeof *j);
  if (!j) talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for a queued call");
  if (j) j->kind = kind;
  return j;
}

static talus_status store_async_put(talus_store *s, talus_store_key key, void *blob, size_t n,
                                    int elem4) {
  store_job *j = job_new(JOB_PUT);
  if (!j) {
    talus_store_blob_release(s, blob);
    return TALUS_ERR_NOMEM;
  }
  *j = (store_job){JOB_PUT, 0, key, blob, n, elem4, omp_in_parallel() ? 0 : omp_get_max_threads(),
                   NULL,    0, NULL};
  pthread_mutex_lock(&s->q_lock);
  talus_status st = enqueue(s, j);
  if (st == TALUS_OK) {
    prefetch_slot *p = slot_of(s, key); /* an old read ahead of the key is stale */
    if (p) slot_forget(s, p);
    pthread_mutex_lock(store_stripe(s, key.tile));
    st = store_index_queued(s, key, j->seq);
    pthread_mutex_unlock(store_stripe(s, key.tile));
  }
  pthread_mutex_unlock(&s->q_lock);
  return st;
}

static talus_status store_async_commit(talus_store *s, int32_t tile, int64_t step) {
  store_job *j = job_new(JOB_COMMIT);
  if (!j) return TALUS_ERR_NOMEM;
  j->key = (talus_store_key){tile, step, 0};
  pthread_mutex_lock(&s->q_lock);
  talus_status st = enqueue(s, j);
  if (st == TALUS_OK) atomic_store(&s->promised[tile], step);
  pthread_mutex_unlock(&s->q_lock);
  return st;
}

static talus_status store_async_drop(talus_store *s, talus_store_key *keys, int n) {
  store_job *j = job_new(JOB_DROP);
  if (!j) {
    free(keys);
    return TALUS_ERR_NOMEM;
  }
  j->keys = keys;
  j->nkeys = n;
  pthread_mutex_lock(&s->q_lock);
  for (int i = 0; i < n; i++) {
    prefetch_slot *p = slot_of(s, keys[i]);
    if (p) slot_forget(s, p);
  }
  talus_status st = enqueue(s, j);
  pthread_mutex_unlock(&s->q_lock);
  return st;
}

static talus_status store_async_wait_key(talus_store *s, talus_store_key key) {
  uint64_t seq = 0;
  key_seq(s, key, &seq);
  pthread_mutex_lock(&s->q_lock);
  while (s->q_done < seq && !(s->q_err && s->q_err_seq <= seq))
    pthread_cond_wait(&s->q_cond, &s->q_lock);
  talus_status st = s->q_err && s->q_err_seq <= seq ? queued_error(s) : TALUS_OK;
  pthread_mutex_unlock(&s->q_lock);
  return st;
}

static talus_status store_async_flush(talus_store *s) {
  pthread_mutex_lock(&s->q_lock);
  while (s->q_head)
    pthread_cond_wait(&s->q_cond, &s->q_lock);
  talus_status st = s->q_err ? queued_error(s) : TALUS_OK;
  pthread_mutex_unlock(&s->q_lock);
  return st;
}

static talus_status store_async_start(talus_store *s, int readers) {
  readers = readers < IO_READERS_MAX ? readers : IO_READERS_MAX;
  if (pthread_create(&s->writer, NULL, writer_main, s) != 0)
    return talus_fail(TALUS_ERR_NOMEM, "store", "cannot start the store's writer thread");
  s->async = 1;
  for (s->nreaders = 0; s->nreaders < readers; s->nreaders++)
    if (pthread_create(&s->readers[s->nreaders], NULL, reader_main, s) != 0) break;
  return TALUS_OK;
}

static talus_status store_async_stop(talus_store *s) {
  if (!s->async) return TALUS_OK;
  talus_status st = store_async_flush(s);
  pthread_mutex_lock(&s->q_lock);
  s->q_stop = 1;
  pthread_cond_broadcast(&s->q_cond);
  pthread_mutex_unlock(&s->q_lock);
  pthread_join(s->writer, NULL);
  for (int i = 0; i < s->nreaders; i++)
    pthread_join(s->readers[i], NULL);
  for (int i = 0; i < PREFETCH_SLOTS; i++)
    if (s->pf[i].state != PF_FREE) slot_forget(s, &s->pf[i]);
  s->async = s->nreaders = s->q_stop = 0;
  s->q_err = TALUS_OK;
  return st;
}

/* ---- the store.h calls a queue changes (the rest: store.c) ---- */

/* 1 when s queues its disk calls. */
static int queued(const talus_store *s) {
  return s && s->kind == TALUS_STORE_DISK && s->async;
}

talus_status talus_store_set_io_threads(talus_store *s, int readers) {
  if (!s || s->kind != TALUS_STORE_DISK || s->async || s->async_never) return TALUS_OK;
  if (readers < 0) {
    s->async_never = 1;
    return TALUS_OK;
  }
  return store_async_start(s, readers);
}

talus_status talus_store_flush(talus_store *s) {
  return queued(s) ? store_async_flush(s) : TALUS_OK;
}

talus_status talus_store_put(talus_store *s, talus_store_key key, const void *data, size_t n,
                             int elem4) {
  if (!queued(s) || (!data && n)) return store_put_sync(s, key, data, n, elem4);
  talus_status st = store_key_check(s, key);
  void *copy = st ? NULL : talus_store_blob_alloc(s, n); /* queued: a copy in a pool buffer */
  if (!st && !copy)
    st = talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for a %zu-byte blob", n);
  if (st) return st;
  if (n) memcpy(copy, data, n);
  return store_async_put(s, key, copy, n, elem4);
}

talus_status talus_store_put_owned(talus_store *s, talus_store_key key, void *blob, size_t n,
                                   int elem4) {
  if (!queued(s) || !blob) return store_put_owned_sync(s, key, blob, n, elem4);
  talus_status st = store_key_check(s, key);
  if (st) {
    talus_store_blob_release(s, blob);
    return st;
  }
  return store_async_put(s, key, blob, n, elem4);
}

talus_status talus_store_get(talus_store *s, talus_store_key key, void **data, size_t *n) {
  talus_status st = queued(s) && data && n ? store_key_check(s, key) : TALUS_OK;
  if (!st && queued(s) && data && n) st = store_async_wait_key(s, key);
  if (!st) return store_get_sync(s, key, data, n);
  *data = NULL;
  *n = 0;
  return st;
}

talus_status talus_store_get_ref(talus_store *s, talus_store_key key, const void **data, size_t *n,
                                 void **hold) {
  if (!queued(s) || !data || !n || !hold || store_key_check(s, key))
    return store_get_ref_sync(s, key, data, n, hold);
  if (store_async_take(s, key, hold, n)) {
    *data = *hold; /* read ahead (and counted) by a reader thread */
    return TALUS_OK;
  }
  talus_status st = store_async_wait_key(s, key);
  if (!st) return store_get_ref_sync(s, key, data, n, hold);
  *data = *hold = NULL;
  *n = 0;
  return st;
}

void talus_store_prefetch(talus_store *s, talus_store_key key) {
  if (queued(s) && store_key_check(s, key) == TALUS_OK)
    store_async_prefetch(s, key);
  else
    talus_error_clear();
}

talus_status talus_store_drop_before(talus_store *s, int32_t tile, int64_t before_step) {
  if (!queued(s) || tile < 0 || tile >= s->ntiles)
    return store_drop_before_sync(s, tile, before_step);
  talus_store_key *keys = NULL;
  int n = 0;
  talus_status st = store_drop_index(s, tile, before_step, &keys, &n);
  return st ? st : store_async_drop(s, keys, n);
}

talus_status talus_store_commit(talus_store *s, int32_t tile, int64_t step) {
  if (!queued(s) || tile < 0 || tile >= s->ntiles || step < 0)
    return store_commit_sync(s, tile, step);
  return store_async_commit(s, tile, step);
}

talus_status talus_store_set_meta(talus_store *s, const char *key, const char *value) {
  talus_status st = talus_store_flush(s); /* the manifest then holds every commit */
  return st ? st : store_set_meta_sync(s, key, value);
}

void talus_store_close(talus_store *s) {
  if (!s) return;
  (void)store_async_stop(s); /* what was queued is on disk, or the store failed (reported) */
  store_close_sync(s);
}

talus_status talus_store_destroy(talus_store *s) {
  if (!s) return TALUS_OK;
  talus_status st = store_async_stop(s);
  talus_status gone = store_destroy_sync(s);
  return st ? st : gone;
}
