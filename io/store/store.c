/*
 * store.c — the tile store (see store.h): key bookkeeping shared by both
 * kinds, the memory store, the disk store's directory handling, manifest
 * and commit journal. The blob file codec lives in disk.c.
 */
#include "io/store/store_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- keys and per-tile bookkeeping ---- */

/* Checks that key lies in the store's ranges. */
talus_status store_key_check(const talus_store *s, talus_store_key k) {
  if (k.tile < 0 || k.tile >= s->ntiles || k.step < 0 || k.part < 0 || k.part >= TALUS_STORE_PARTS)
    return talus_fail(TALUS_ERR_ARGUMENT, "store",
                      "bad key: tile %d (of %d), part %d, step %" PRId64, k.tile, s->ntiles, k.part,
                      k.step);
  return TALUS_OK;
}

/* File name of a blob under dir ("<dir>/t<tile>_s<step>_p<part>.tzst"). */
void store_blob_path(const talus_store *s, talus_store_key k, char *buf, size_t size) {
  snprintf(buf, size, "%s/t%d_s%" PRId64 "_p%d.tzst", s->dir, k.tile, k.step, k.part);
}

pthread_mutex_t *store_stripe(const talus_store *s, int32_t tile) {
  return (pthread_mutex_t *)&s->stripe[tile % STRIPES];
}

/* Index of (step, part) in the slot, -1 if absent. Caller holds the stripe. */
int store_slot_find(const tile_slot *t, int64_t step, int32_t part) {
  for (int i = 0; i < t->count; i++)
    if (t->e[i].step == step && t->e[i].part == part) return i;
  return -1;
}

/* Records key with data/n (taken over) and the queued write seq that
 * brings its file (0: none), replacing and freeing an older entry of the
 * same key. Caller holds the stripe. */
static talus_status slot_add(talus_store *s, talus_store_key k, void *data, size_t n,
                             uint64_t seq) {
  tile_slot *t = &s->tiles[k.tile];
  int i = store_slot_find(t, k.step, k.part);
  if (i >= 0) {
    atomic_fetch_sub(&s->held, t->e[i].n);
    talus_store_blob_release(s, t->e[i].data);
  } else {
    if (t->count == t->cap) {
      int cap = t->cap ? 2 * t->cap : 8;
      entry *e = realloc(t->e, (size_t)cap * sizeof *e);
      if (!e) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for the tile index");
      atomic_fetch_add(&s->held, (size_t)(cap - t->cap) * sizeof *e);
      t->e = e;
      t->cap = cap;
    }
    i = t->count++;
  }
  t->e[i] = (entry){k.step, k.part, n, data, seq};
  atomic_fetch_add(&s->held, n);
  return TALUS_OK;
}

/* Removes entry i of the slot (unordered). Caller holds the stripe. */
static void slot_remove(talus_store *s, tile_slot *t, int i) {
  atomic_fetch_sub(&s->held, t->e[i].n);
  talus_store_blob_release(s, t->e[i].data);
  t->e[i] = t->e[--t->count];
}

/* ---- the blob buffer pool ----
 * Blobs are large (a 2048² core of 4 layers is ~750 MB) and every
 * generation replaces each with one of about the same size. Fresh
 * allocations of that size are fresh pages: page faults and kernel zeroing
 * cost as much as the copy itself. So the memory store's blobs, the blocks
 * the tiler cuts and the buffers of disk gets live in buffers that are
 * recycled: a dropped or released buffer goes to the pool, an allocation
 * takes the smallest pooled buffer that fits (and is not more than twice
 * too large). MEMORY pools only after talus_store_set_recycle(s, 1), and
 * then at most as many bytes as its live blobs (so peak memory stays two
 * generations of blobs, as without the pool); DISK pools at most twice the
 * largest buffer asked for (a core and a strip in flight). */

static size_t pool_cap_of(const void *p) {
  size_t cap;
  memcpy(&cap, (const unsigned char *)p - POOL_HEAD, sizeof cap);
  return cap;
}

/* A fresh buffer of cap bytes (huge pages asked for when large). */
static void *pool_fresh(size_t cap) {
  void *base = NULL;
  size_t align = cap >= POOL_HUGE ? ((size_t)2 << 20) : 64;
  if (posix_memalign(&base, align, cap + POOL_HEAD)) return NULL;
#ifdef MADV_HUGEPAGE
  if (cap >= POOL_HUGE) madvise(base, (cap + POOL_HEAD) & ~(align - 1), MADV_HUGEPAGE);
#endif
  memcpy(base, &cap, sizeof cap);
  return (unsigned char *)base + POOL_HEAD;
}

void *talus_store_blob_alloc(talus_store *s, size_t n) {
  n = n ? n : 1;
  pthread_mutex_lock(&s->pool_lock);
  s->largest = n > s->largest ? n : s->largest;
  int best = -1;
  for (int i = 0; i < s->npool; i++)
    if (s->pool[i].cap >= n && s->pool[i].cap / 2 <= n &&
        (best < 0 || s->pool[i].cap < s->pool[best].cap))
      best = i;
  void *p = NULL;
  if (best >= 0) {
    p = s->pool[best].p;
    s->pool_bytes -= s->pool[best].cap;
    s->pool[best] = s->pool[--s->npool];
  }
  pthread_mutex_unlock(&s->pool_lock);
  return p ? p : pool_fresh(n);
}

/* Whether the pool may keep cap more bytes (caller holds pool_lock). */
static int pool_keeps(const talus_store *s, size_t cap) {
  size_t limit = s->kind == TALUS_STORE_DISK ? 2 * s->largest
                 : s->recycle                ? atomic_load(&s->held)
                                             : 0;
  return s->npool < POOL_MAX && s->pool_bytes + cap <= limit;
}

void talus_store_blob_release(talus_store *s, void *p) {
  if (!p) return;
  size_t cap = pool_cap_of(p);
  pthread_mutex_lock(&s->pool_lock);
  int keep = pool_keeps(s, cap);
  if (keep) {
    s->pool[s->npool++] = (pool_buf){p, cap};
    s->pool_bytes += cap;
  }
  pthread_mutex_unlock(&s->pool_lock);
  if (!keep) free((unsigned char *)p - POOL_HEAD);
}

/* Frees every pooled buffer (close). */
static void pool_clear(talus_store *s) {
  for (int i = 0; i < s->npool; i++)
    free((unsigned char *)s->pool[i].p - POOL_HEAD);
  s->npool = 0;
  s->pool_bytes = 0;
}

/* ---- small file helpers ---- */

/* Creates dir and its missing parents (mkdir -p). */
static talus_status make_dirs(const char *dir) {
  char path[TALUS_PATH_MAX];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "store path too long: %s", dir);
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      return talus_fail(TALUS_ERR_IO, "store", "cannot create store directory %s: %s", path,
                        strerror(errno));
    *p = c;
    if (c == '\0') break;
  }
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return talus_fail(TALUS_ERR_IO, "store", "store path %s is not a directory", dir);
  return TALUS_OK;
}

/* Writes text to "<dir>/<name>" via "<name>.tmp" + rename (+ fsyncs). */
static talus_status write_atomic(talus_store *s, const char *name, const char *text, size_t n) {
  char path[TALUS_PATH_BUF], tmp[TALUS_PATH_BUF + TALUS_PATH_SUFFIX_MAX];
  snprintf(path, sizeof path, "%s/%s", s->dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return talus_fail(TALUS_ERR_IO, "store", "cannot create %s: %s", tmp, strerror(errno));
  int bad = fwrite(text, 1, n, f) != n || fflush(f) != 0;
  bad = bad || (s->sync && fsync(fileno(f)) != 0);
  int err = errno;
  bad = (fclose(f) != 0) || bad;
  if (!bad && rename(tmp, path) != 0) bad = 1, err = errno;
  if (bad) {
    unlink(tmp);
    return talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", path, strerror(err));
  }
  if (s->sync && s->dir_fd >= 0) fsync(s->dir_fd);
  return TALUS_OK;
}

/* Reads a whole file into a NUL-terminated malloc'd buffer. */
static talus_status read_file(const char *path, char **text, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return talus_fail(TALUS_ERR_IO, "store", "cannot open %s: %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *b = realloc(buf, cap *= 2);
    if (!b) free(buf);
    buf = b;
  }
  int err = ferror(f);
  fclose(f);
  if (!buf) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory reading %s", path);
  if (err) {
    free(buf);
    return talus_fail(TALUS_ERR_IO, "store", "cannot read %s", path);
  }
  buf[len] = '\0';
  *text = buf;
  *n = len;
  return TALUS_OK;
}

/* ---- text checks ---- */

/* 1 when v is one printable line of at most TALUS_STORE_RUN_ID_MAX bytes. */
static int text_ok(const char *v) {
  size_t n = 0;
  for (; v[n]; n++)
    if ((unsigned char)v[n] < 0x20 || v[n] == 0x7f) return 0;
  return n <= TALUS_STORE_RUN_ID_MAX;
}

/* 1 when k is a non-empty [A-Za-z0-9_.-]+ of at most 128 bytes. */
static int meta_key_ok(const char *k) {
  size_t n = strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
  return n > 0 && k[n] == '\0' && n <= 128;
}

/* ---- manifest ---- */

/* A growable text buffer for the manifest. */
typedef struct tbuf {
  char *p;
  size_t n, cap;
  int bad;
} tbuf;

static void tb_printf(tbuf *b, const char *fmt, ...) TALUS_PRINTF(2, 3);
static void tb_printf(tbuf *b, const char *fmt, ...) {
  for (int tries = 0; !b->bad && tries < 2; tries++) {
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (m >= 0 && (size_t)m < b->cap - b->n) {
      b->n += (size_t)m;
      return;
    }
    size_t cap = 2 * b->cap + (size_t)(m > 0 ? m : 0) + 64;
    char *p = realloc(b->p, cap);
    if (!p)
      b->bad = 1;
    else
      b->p = p, b->cap = cap;
  }
  b->bad = 1;
}

/* Rewrites the manifest (tmp + rename) with the current state and epoch.
 * Caller holds lock. */
static talus_status manifest_write(talus_store *s) {
  tbuf b = {malloc(4096), 0, 4096, 0};
  b.bad = !b.p;
  tb_printf(&b, "%srun_id %s\nntiles %d\nepoch %" PRIu32 "\n", MANIFEST_MAGIC, s->run_id, s->ntiles,
            s->epoch);
  for (int i = 0; i < s->nmeta; i++)
    tb_printf(&b, "meta %s %s\n", s->meta[i].key, s->meta[i].value);
  for (int t = 0; t < s->ntiles; t++) {
    int64_t c = atomic_load(&s->committed[t]);
    if (c >= 0) tb_printf(&b, "committed %d %" PRId64 "\n", t, c);
  }
  tb_printf(&b, "crc32c %08" PRIx32 "\n", b.bad ? 0u : talus_crc32c(0, b.p, b.n));
  talus_status st = b.bad ? talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for the manifest")
                          : write_atomic(s, "manifest", b.p, b.n);
  free(b.p);
  return st;
}

/* Sets meta key to value (copies). Caller holds lock (or is opening). */
static talus_status meta_put(talus_store *s, const char *key, const char *value) {
  char *v = strdup(value);
  if (!v) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory");
  for (int i = 0; i < s->nmeta; i++)
    if (strcmp(s->meta[i].key, key) == 0) {
      free(s->meta[i].value);
      s->meta[i].value = v;
      return TALUS_OK;
    }
  meta_kv *m = realloc(s->meta, (size_t)(s->nmeta + 1) * sizeof *m);
  char *k = strdup(key);
  if (m) s->meta = m;
  if (!m || !k) {
    free(v);
    free(k);
    return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory");
  }
  s->meta[s->nmeta++] = (meta_kv){k, v};
  return TALUS_OK;
}

/* Parses one manifest line (NUL-terminated, no newline) into s. */
static int manifest_line(talus_store *s, char *line, char **run_id, int *ntiles) {
  int t;
  int64_t step;
  char *sp;
  if (strncmp(line, "run_id ", 7) == 0) return (*run_id = line + 7), 0;
  if (sscanf(line, "ntiles %d", ntiles) == 1) return 0;
  if (sscanf(line, "epoch %" SCNu32, &s->epoch) == 1) return 0;
  if (strncmp(line, "meta ", 5) == 0 && (sp = strchr(line + 5, ' '))) {
    *sp = '\0';
    return meta_put(s, line + 5, sp + 1) == TALUS_OK ? 0 : -1;
  }
  if (sscanf(line, "committed %d %" SCNd64, &t, &step) == 2 && t >= 0 && step >= 0) {
    if (t < s->ntiles) atomic_store(&s->committed[t], step); /* else: ntiles differs, refused */
    return 0;
  }
  return -1;
}

/* Loads "<dir>/manifest": checks its CRC, run id and tile count. */
static talus_status manifest_load(talus_store *s) {
  char path[TALUS_PATH_BUF], *text, *run_id = NULL;
  size_t n;
  int ntiles = -1;
  snprintf(path, sizeof path, "%s/manifest", s->dir);
  talus_status st = read_file(path, &text, &n);
  if (st != TALUS_OK) return st;
  char *crc_line = n >= 17 ? text + n - 16 : NULL; /* "crc32c xxxxxxxx\n" */
  unsigned crc = 0;
  if (!crc_line || strncmp(text, MANIFEST_MAGIC, strlen(MANIFEST_MAGIC)) != 0 ||
      crc_line[-1] != '\n' || sscanf(crc_line, "crc32c %8x", &crc) != 1 ||
      crc != talus_crc32c(0, text, (size_t)(crc_line - text))) {
    free(text);
    return talus_fail(TALUS_ERR_FORMAT, "store", "manifest %s is corrupt (checksum mismatch)",
                      path);
  }
  *crc_line = '\0';
  char *save = NULL;
  for (char *l = strtok_r(text + strlen(MANIFEST_MAGIC), "\n", &save); l && st == TALUS_OK;
       l = strtok_r(NULL, "\n", &save))
    if (manifest_line(s, l, &run_id, &ntiles) != 0)
      st = talus_fail(TALUS_ERR_FORMAT, "store", "manifest %s: bad line '%.80s'", path, l);
  if (st == TALUS_OK && (!run_id || strcmp(run_id, s->run_id) != 0 || ntiles != s->ntiles))
    st = talus_fail(TALUS_ERR_ARGUMENT, "store",
                    "store %s belongs to another run (run id '%.80s', %d tiles; this run: "
                    "'%.80s', %d tiles)",
                    s->dir, run_id ? run_id : "?", ntiles, s->run_id, s->ntiles);
  free(text);
  return st;
}

/* ---- commit journal ---- */

/* Encodes one journal record of (tile, step) in the current epoch. */
static void journal_encode(const talus_store *s, unsigned char *r, int32_t tile, int64_t step) {
  uint32_t w[5] = {JOURNAL_MAGIC, (uint32_t)tile, (uint32_t)(uint64_t)step,
                   (uint32_t)((uint64_t)step >> 32), s->epoch};
  for (int i = 0; i < 5; i++)
    for (int b = 0; b < 4; b++)
      r[4 * i + b] = (unsigned char)(w[i] >> (8 * b));
  uint32_t c = talus_crc32c(0, r, 20);
  for (int b = 0; b < 4; b++)
    r[20 + b] = (unsigned char)(c >> (8 * b));
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Applies one record; 1 when it is valid, 0 when not. */
static int journal_apply(talus_store *s, const unsigned char *r) {
  if (le32(r) != JOURNAL_MAGIC || le32(r + 16) != s->epoch ||
      le32(r + 20) != talus_crc32c(0, r, 20))
    return 0;
  int32_t tile = (int32_t)le32(r + 4);
  int64_t step = (int64_t)((uint64_t)le32(r + 12) << 32 | le32(r + 8));
  if (tile < 0 || tile >= s->ntiles || step < 0) return 0;
  atomic_store(&s->committed[tile], step);
  return 1;
}

/* Replays "<dir>/journal.<epoch>" over the manifest's steps. A bad or torn
 * last record is a commit that never returned and is ignored. */
static talus_status journal_replay(talus_store *s) {
  char path[TALUS_PATH_BUF], *text;
  size_t n;
  snprintf(path, sizeof path, "%s/journal.%" PRIu32, s->dir, s->epoch);
  if (access(path, F_OK) != 0) return TALUS_OK;
  talus_status st = read_file(path, &text, &n);
  if (st != TALUS_OK) return st;
  size_t records = n / JOURNAL_RECORD;
  for (size_t i = 0; i < records && st == TALUS_OK; i++)
    if (!journal_apply(s, (unsigned char *)text + i * JOURNAL_RECORD) &&
        (i + 1 < records || n % JOURNAL_RECORD))
      st = talus_fail(TALUS_ERR_FORMAT, "store", "journal %s is corrupt (record %zu of %zu)", path,
                      i + 1, records);
  free(text);
  return st;
}

/* Starts a new epoch: manifest with the current state, old journal gone.
 * Caller holds lock (or is opening). */
static talus_status compact(talus_store *s) {
  char old[TALUS_PATH_BUF];
  snprintf(old, sizeof old, "%s/journal.%" PRIu32, s->dir, s->epoch);
  s->epoch++;
  talus_status st = manifest_write(s);
  if (st != TALUS_OK) {
    s->epoch--;
    return st;
  }
  if (s->journal_fd >= 0) close(s->journal_fd);
  s->journal_fd = -1;
  s->journal_records = 0;
  if (unlink(old) != 0 && errno != ENOENT)
    talus_warn("store: cannot remove %s: %s", old, strerror(errno));
  return TALUS_OK;
}

/* Appends one commit record (opening the epoch's journal when needed).
 * Caller holds lock. */
static talus_status journal_append(talus_store *s, int32_t tile, int64_t step) {
  char path[TALUS_PATH_BUF];
  snprintf(path, sizeof path, "%s/journal.%" PRIu32, s->dir, s->epoch);
  if (s->journal_fd < 0)
    s->journal_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s->journal_fd < 0)
    return talus_fail(TALUS_ERR_IO, "store", "cannot open %s: %s", path, strerror(errno));
  unsigned char r[JOURNAL_RECORD];
  journal_encode(s, r, tile, step);
  if (s->sync && s->dir_fd >= 0 && fsync(s->dir_fd) != 0)
    return talus_fail(TALUS_ERR_IO, "store", "cannot sync %s: %s", s->dir, strerror(errno));
  ssize_t w = write(s->journal_fd, r, sizeof r);
  if (w != (ssize_t)sizeof r || (s->sync && fdatasync(s->journal_fd) != 0)) {
    int err = w < 0 ? errno : ENOSPC;
    /* a partial record must not stay in front of later ones */
    if (w > 0) (void)!ftruncate(s->journal_fd, lseek(s->journal_fd, 0, SEEK_END) - w);
    return talus_fail(TALUS_ERR_IO, "store", "cannot write %s: %s", path, strerror(err));
  }
  s->journal_records++;
  return TALUS_OK;
}

/* ---- the store directory ---- */

/* Parses a blob file name (optionally + ".tmp"); 1 when it is one. */
static int parse_blob_name(const char *name, talus_store_key *k, int *tmp) {
  int tile, part, end = 0;
  int64_t step;
  if (sscanf(name, "t%d_s%" SCNd64 "_p%d.tzst%n", &tile, &step, &part, &end) != 3 || end == 0)
    return 0;
  *tmp = strcmp(name + end, ".tmp") == 0;
  if (name[end] && !*tmp) return 0;
  *k = (talus_store_key){tile, step, part};
  return 1;
}

/* 1 when name is one of the files a store writes. */
static int is_ours(const char *name) {
  talus_store_key k;
  int tmp;
  unsigned e;
  char c;
  return parse_blob_name(name, &k, &tmp) || strcmp(name, "manifest") == 0 ||
         strcmp(name, "manifest.tmp") == 0 || sscanf(name, "journal.%u%c", &e, &c) == 1;
}

/* 1 when "<dir>/manifest" starts like a talus manifest. */
static int has_manifest(const char *dir) {
  char path[TALUS_PATH_BUF], head[32] = {0};
  snprintf(path, sizeof path, "%s/manifest", dir);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(head, 1, strlen(MANIFEST_MAGIC), f);
  fclose(f);
  return n == strlen(MANIFEST_MAGIC) && memcmp(head, MANIFEST_MAGIC, n) == 0;
}

/* What to do with each directory entry during a scan. */
typedef enum { SCAN_COUNT, SCAN_CLEAR, SCAN_RESUME } scan_mode;

/* Handles one entry: counts foreign ones, removes ours (CLEAR), or on
 * RESUME removes *.tmp and stale journals and indexes blob files. */
static talus_status scan_entry(talus_store *s, const char *name, scan_mode mode, int *foreign) {
  talus_store_key k = {0, 0, 0};
  int tmp = 0;
  char path[4400], cur[32];
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return TALUS_OK;
  if (!is_ours(name)) return (*foreign)++, TALUS_OK;
  snprintf(path, sizeof path, "%s/%s", s->dir, name);
  snprintf(cur, sizeof cur, "journal.%" PRIu32, s->epoch);
  int blob = parse_blob_name(name, &k, &tmp);
  int drop = mode == SCAN_CLEAR ||
             (mode == SCAN_RESUME && (tmp || strcmp(name, "manifest.tmp") == 0 ||
                                      (strncmp(name, "journal.", 8) == 0 && strcmp(name, cur))));
  if (drop) {
    if (mode != SCAN_COUNT && unlink(path) != 0 && errno != ENOENT)
      return talus_fail(TALUS_ERR_IO, "store", "cannot remove %s: %s", path, strerror(errno));
    return TALUS_OK;
  }
  if (mode != SCAN_RESUME || !blob) return TALUS_OK;
  if (store_key_check(s, k) != TALUS_OK)
    return talus_fail(TALUS_ERR_FORMAT, "store", "store %s holds %s, outside this run's grid",
                      s->dir, name);
  pthread_mutex_lock(store_stripe(s, k.tile));
  talus_status st = slot_add(s, k, NULL, 0, 0);
  pthread_mutex_unlock(store_stripe(s, k.tile));
  return st;
}

/* Scans the store directory in the given mode; *foreign gets the number of
 * entries the store did not write. */
static talus_status scan_dir(talus_store *s, scan_mode mode, int *foreign) {
  DIR *d = opendir(s->dir);
  if (!d) return talus_fail(TALUS_ERR_IO, "store", "cannot list %s: %s", s->dir, strerror(errno));
  *foreign = 0;
  talus_status st = TALUS_OK;
  for (struct dirent *e; st == TALUS_OK && (e = readdir(d));)
    st = scan_entry(s, e->d_name, mode, foreign);
  closedir(d);
  return st;
}

/* Prepares the directory of a new run: empty, or an old store to clear. */
static talus_status disk_start_fresh(talus_store *s) {
  int foreign;
  talus_status st = scan_dir(s, SCAN_COUNT, &foreign);
  if (st == TALUS_OK && foreign && !has_manifest(s->dir))
    return talus_fail(TALUS_ERR_ARGUMENT, "store",
                      "directory %s is not empty and holds no talus store; refusing to clear it "
                      "(give an empty or new directory)",
                      s->dir);
  if (st == TALUS_OK) st = scan_dir(s, SCAN_CLEAR, &foreign);
  if (st == TALUS_OK) st = manifest_write(s);
  return st;
}

/* Loads the manifest and journal of a killed run and tidies its files. */
static talus_status disk_resume(talus_store *s) {
  int foreign;
  if (!has_manifest(s->dir))
    return talus_fail(TALUS_ERR_IO, "store", "%s holds no talus store to resume (no manifest)",
                      s->dir);
  talus_status st = manifest_load(s);
  if (st == TALUS_OK) st = journal_replay(s);
  if (st == TALUS_OK) st = scan_dir(s, SCAN_RESUME, &foreign);
  if (st == TALUS_OK) st = compact(s);
  return st;
}

/* Opens the disk side of s: directory, manifest, journal. */
static talus_status disk_open(talus_store *s, const char *dir, int resume) {
  if (!dir || !dir[0]) return talus_fail(TALUS_ERR_ARGUMENT, "store", "no store directory given");
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/')
    len--;
  if (len > 3800) return talus_fail(TALUS_ERR_ARGUMENT, "store", "store path too long: %s", dir);
  if (!(s->dir = strndup(dir, len))) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory");
  struct stat sb;
  if (resume && stat(s->dir, &sb) != 0)
    return talus_fail(TALUS_ERR_IO, "store", "%s holds no talus store to resume (%s)", s->dir,
                      strerror(errno));
  talus_status st = make_dirs(s->dir);
  if (st != TALUS_OK) return st;
  s->dir_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s->dir_fd < 0)
    return talus_fail(TALUS_ERR_IO, "store", "cannot open %s: %s", s->dir, strerror(errno));
  return resume ? disk_resume(s) : disk_start_fresh(s);
}

/* ---- open / close ---- */

/* Allocates s with its tile index, locks and an empty manifest state. */
static talus_status store_alloc(talus_store **out, talus_store_kind kind, const char *run_id,
                                int ntiles) {
  talus_store *s = calloc(1, sizeof *s);
  if (!s) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory");
  s->kind = kind;
  s->ntiles = ntiles;
  s->level = 1;
  s->journal_fd = s->dir_fd = -1;
  s->tiles = calloc((size_t)ntiles, sizeof *s->tiles);
  s->committed = malloc((size_t)ntiles * sizeof *s->committed);
  s->promised = malloc((size_t)ntiles * sizeof *s->promised);
  s->run_id = strdup(run_id);
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->pool_lock, NULL);
  pthread_mutex_init(&s->q_lock, NULL);
  pthread_cond_init(&s->q_cond, NULL);
  for (int i = 0; i < STRIPES; i++)
    pthread_mutex_init(&s->stripe[i], NULL);
  *out = s;
  if (!s->tiles || !s->committed || !s->promised || !s->run_id)
    return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for %d tiles", ntiles);
  for (int t = 0; t < ntiles; t++)
    atomic_init(&s->committed[t], -1), atomic_init(&s->promised[t], -1);
  return TALUS_OK;
}

talus_status talus_store_open(talus_store **out, talus_store_kind kind, const char *dir,
                              const char *run_id, int ntiles, int resume) {
  if (!out) return talus_fail(TALUS_ERR_ARGUMENT, "store", "no output pointer");
  *out = NULL;
  if (kind != TALUS_STORE_MEMORY && kind != TALUS_STORE_DISK)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "unknown store kind %d", (int)kind);
  if (ntiles < 1) return talus_fail(TALUS_ERR_ARGUMENT, "store", "bad tile count %d", ntiles);
  if (!run_id || !text_ok(run_id))
    return talus_fail(TALUS_ERR_ARGUMENT, "store",
                      "run id must be one printable line of at most %d bytes",
                      TALUS_STORE_RUN_ID_MAX);
  talus_store *s = NULL;
  talus_status st = store_alloc(&s, kind, run_id, ntiles);
  if (st == TALUS_OK && kind == TALUS_STORE_DISK) st = disk_open(s, dir, resume);
  for (int t = 0; st == TALUS_OK && t < ntiles; t++)
    atomic_store(&s->promised[t], atomic_load(&s->committed[t]));
  if (st != TALUS_OK) {
    store_close_sync(s);
    return st;
  }
  *out = s;
  return TALUS_OK;
}

void store_close_sync(talus_store *s) {
  if (!s) return;
  for (int t = 0; s->tiles && t < s->ntiles; t++) {
    for (int i = 0; i < s->tiles[t].count; i++)
      if (s->tiles[t].e[i].data) free((unsigned char *)s->tiles[t].e[i].data - POOL_HEAD);
    free(s->tiles[t].e);
  }
  pool_clear(s);
  for (int i = 0; i < s->nmeta; i++) {
    free(s->meta[i].key);
    free(s->meta[i].value);
  }
  if (s->journal_fd >= 0) close(s->journal_fd);
  if (s->dir_fd >= 0) close(s->dir_fd);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->pool_lock);
  pthread_mutex_destroy(&s->q_lock);
  pthread_cond_destroy(&s->q_cond);
  for (int i = 0; i < STRIPES; i++)
    pthread_mutex_destroy(&s->stripe[i]);
  free(s->meta);
  free(s->tiles);
  free(s->committed);
  free(s->promised);
  free(s->run_id);
  free(s->dir);
  free(s);
}

talus_status store_destroy_sync(talus_store *s) {
  if (!s) return TALUS_OK;
  talus_status st = TALUS_OK;
  if (s->kind == TALUS_STORE_DISK && s->dir) {
    int foreign = 0;
    if (s->journal_fd >= 0) close(s->journal_fd);
    s->journal_fd = -1;
    st = scan_dir(s, SCAN_CLEAR, &foreign);
    if (st == TALUS_OK && !foreign && rmdir(s->dir) != 0 && errno != ENOENT)
      talus_warn("store: cannot remove %s: %s", s->dir, strerror(errno));
  }
  store_close_sync(s);
  return st;
}

talus_store_kind talus_store_get_kind(const talus_store *s) {
  return s->kind;
}

void talus_store_set_sync(talus_store *s, int on) {
  if (s) s->sync = on != 0;
}

void talus_store_set_recycle(talus_store *s, int on) {
  if (s) s->recycle = on != 0;
}

void talus_store_set_level(talus_store *s, int level) {
  if (s) s->level = level;
}

/* ---- blobs ---- */

/* Indexes a pooled buffer holding the blob (MEMORY); takes it over. */
static talus_status mem_index(talus_store *s, talus_store_key k, void *blob, size_t n) {
  pthread_mutex_lock(store_stripe(s, k.tile));
  talus_status st = slot_add(s, k, blob, n, 0);
  pthread_mutex_unlock(store_stripe(s, k.tile));
  if (st != TALUS_OK) talus_store_blob_release(s, blob);
  return st;
}

/* Copies the blob into the tile's index (MEMORY). */
static talus_status mem_put(talus_store *s, talus_store_key k, const void *data, size_t n) {
  void *copy = talus_store_blob_alloc(s, n);
  if (!copy) return talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for a %zu-byte blob", n);
  if (n) memcpy(copy, data, n);
  return mem_index(s, k, copy, n);
}

/* ---- crash injection (tests) ----
 * TALUS_TEST_KILL_AT_OP=N makes the process SIGKILL itself right after its
 * N-th completed mutating store operation (put, commit or drop), counted
 * over all stores of the process: a crash at a chosen, reproducible point
 * of a run, where a kill timed from outside may land before the run starts
 * or after it ends on a loaded machine (tests/cli_tiles_resume.sh,
 * tests/cli_mpi_resume.sh). Unset or 0: off. TALUS_TEST_KILL_SIGNAL=S
 * raises signal S instead (15: a scheduler's SIGTERM, which the app turns
 * into a clean stop that keeps the store; tests/cli_signals.sh). */
static atomic_long fault_ops;
static long fault_at;
static int fault_signal = SIGKILL;
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;

static void fault_init(void) {
  const char *v = getenv("TALUS_TEST_KILL_AT_OP");
  fault_at = v ? atol(v) : 0;
  const char *sig = getenv("TALUS_TEST_KILL_SIGNAL");
  if (sig && atoi(sig) > 0) fault_signal = atoi(sig);
}

/* Counts one completed operation; dies here when it is the N-th. */
static void store_fault_point(void) {
  pthread_once(&fault_once, fault_init);
  if (fault_at > 0 && atomic_fetch_add(&fault_ops, 1) + 1 == fault_at) raise(fault_signal);
}

/* Adds the time since t0 (talus_now) to the store's I/O time; returns st. */
static talus_status store_timed(talus_store *s, double t0, talus_status st) {
  atomic_fetch_add(&s->io_ns, (uint64_t)((talus_now() - t0) * 1e9));
  return st;
}

/* Counts a completed put of n raw bytes, `bytes` of them in the store. */
static talus_status store_wrote(talus_store *s, size_t n, uint64_t bytes) {
  atomic_fetch_add(&s->raw_written, n);
  atomic_fetch_add(&s->bytes_written, bytes);
  atomic_fetch_add(&s->blobs_written, 1);
  store_fault_point();
  return TALUS_OK;
}

/* Counts a completed get of n raw bytes, `bytes` of them read from the store. */
static talus_status store_read(talus_store *s, size_t n, uint64_t bytes) {
  atomic_fetch_add(&s->raw_read, n);
  atomic_fetch_add(&s->bytes_read, bytes);
  atomic_fetch_add(&s->blobs_read, 1);
  return TALUS_OK;
}

talus_status store_index_queued(talus_store *s, talus_store_key key, uint64_t seq) {
  return slot_add(s, key, NULL, 0, seq);
}

/* Indexes key (DISK) with the queued write that brings its file. */
static talus_status disk_index(talus_store *s, talus_store_key k, uint64_t seq) {
  pthread_mutex_lock(store_stripe(s, k.tile));
  talus_status st = slot_add(s, k, NULL, 0, seq);
  pthread_mutex_unlock(store_stripe(s, k.tile));
  return st;
}

talus_status store_write_now(talus_store *s, talus_store_key key, const void *data, size_t n,
                             int elem4, int workers) {
  char path[TALUS_PATH_BUF];
  uint64_t bytes = 0;
  store_blob_path(s, key, path, sizeof path);
  double t0 = talus_now();
  talus_status st = store_timed(
      s, t0, talus_blob_write_mt(path, key, data, n, elem4, s->level, workers, s->sync, &bytes));
  return st != TALUS_OK ? st : store_wrote(s, n, bytes);
}

/* zstd worker threads for a put from the calling thread: as many as its
 * OpenMP threads outside a parallel region (disk.c's rule, kept when the
 * write runs on the store's writer thread, so the files are the same). */
static int put_workers(void) {
  return omp_in_parallel() ? 0 : omp_get_max_threads();
}

talus_status store_put_sync(talus_store *s, talus_store_key key, const void *data, size_t n,
                            int elem4) {
  if (!s || (!data && n)) return talus_fail(TALUS_ERR_ARGUMENT, "store", "put: no store or data");
  talus_status st = store_key_check(s, key);
  if (st != TALUS_OK) return st;
  if (s->kind == TALUS_STORE_DISK) {
    st = store_write_now(s, key, data, n, elem4, put_workers());
    return st != TALUS_OK ? st : disk_index(s, key, 0);
  }
  double t0 = talus_now();
  st = store_timed(s, t0, mem_put(s, key, data, n));
  return st != TALUS_OK ? st : store_wrote(s, n, n);
}

talus_status store_put_owned_sync(talus_store *s, talus_store_key key, void *blob, size_t n,
                                  int elem4) {
  if (!s || !blob) return talus_fail(TALUS_ERR_ARGUMENT, "store", "put: no store or data");
  talus_status st = store_key_check(s, key);
  if (st != TALUS_OK || s->kind == TALUS_STORE_DISK) {
    if (st == TALUS_OK) st = store_put_sync(s, key, blob, n, elem4);
    talus_store_blob_release(s, blob);
    return st;
  }
  st = mem_index(s, key, blob, n);
  return st != TALUS_OK ? st : store_wrote(s, n, n);
}

static talus_status missing(talus_store_key k) {
  return talus_fail(TALUS_ERR_IO, "store", "missing tile %d part %d at step %" PRId64, k.tile,
                    k.part, k.step);
}

/* Points *data at the indexed blob (MEMORY), no copy. */
static talus_status mem_ref(talus_store *s, talus_store_key k, const void **data, size_t *n) {
  pthread_mutex_lock(store_stripe(s, k.tile));
  tile_slot *t = &s->tiles[k.tile];
  int i = store_slot_find(t, k.step, k.part);
  if (i >= 0) {
    *data = t->e[i].data;
    *n = t->e[i].n;
  }
  pthread_mutex_unlock(store_stripe(s, k.tile));
  return i < 0 ? missing(k) : TALUS_OK;
}

/* Copies the blob out of the index (MEMORY), under the tile's lock: the
 * copy is taken whole even while another thread replaces the key. */
static talus_status mem_get(talus_store *s, talus_store_key k, void **data, size_t *n) {
  pthread_mutex_lock(store_stripe(s, k.tile));
  tile_slot *t = &s->tiles[k.tile];
  int i = store_slot_find(t, k.step, k.part);
  talus_status st = TALUS_OK;
  if (i < 0)
    st = missing(k);
  else if (!(*data = malloc(t->e[i].n ? t->e[i].n : 1)))
    st = talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for a %zu-byte blob", t->e[i].n);
  else
    memcpy(*data, t->e[i].data, *n = t->e[i].n);
  pthread_mutex_unlock(store_stripe(s, k.tile));
  return st;
}

static void *pool_alloc_cb(void *user, size_t n) {
  return talus_store_blob_alloc(user, n);
}
static void pool_release_cb(void *user, void *p) {
  talus_store_blob_release(user, p);
}

/* Reads the blob file of key through mem (DISK) and counts it. */
static talus_status disk_read(talus_store *s, talus_store_key key, const talus_blob_mem *mem,
                              void **data, size_t *n) {
  char path[TALUS_PATH_BUF];
  uint64_t bytes = 0;
  int gone = 0;
  store_blob_path(s, key, path, sizeof path);
  double t0 = talus_now();
  talus_status st = talus_blob_read_mem(path, key, mem, data, n, &bytes, &gone);
  if (gone) st = missing(key);
  st = store_timed(s, t0, st);
  return st != TALUS_OK ? st : store_read(s, *n, bytes);
}

talus_status store_read_now(talus_store *s, talus_store_key key, void **hold, size_t *n) {
  talus_blob_mem pool = {pool_alloc_cb, pool_release_cb, s};
  return disk_read(s, key, &pool, hold, n);
}

talus_status store_get_sync(talus_store *s, talus_store_key key, void **data, size_t *n) {
  if (!data || !n) return talus_fail(TALUS_ERR_ARGUMENT, "store", "get: no output pointers");
  *data = NULL;
  *n = 0;
  if (!s) return talus_fail(TALUS_ERR_ARGUMENT, "store", "get: no store");
  talus_status st = store_key_check(s, key);
  if (st != TALUS_OK) return st;
  if (s->kind == TALUS_STORE_DISK) return disk_read(s, key, &talus_blob_heap, data, n);
  double t0 = talus_now();
  st = store_timed(s, t0, mem_get(s, key, data, n));
  return st != TALUS_OK ? st : store_read(s, *n, *n);
}

talus_status store_get_ref_sync(talus_store *s, talus_store_key key, const void **data, size_t *n,
                                void **hold) {
  if (!data || !n || !hold)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "get: no output pointers");
  *data = *hold = NULL;
  *n = 0;
  talus_status st =
      s ? store_key_check(s, key) : talus_fail(TALUS_ERR_ARGUMENT, "store", "no store");
  if (st != TALUS_OK) return st;
  if (s->kind == TALUS_STORE_MEMORY) {
    double t0 = talus_now();
    st = store_timed(s, t0, mem_ref(s, key, data, n));
    return st != TALUS_OK ? st : store_read(s, *n, *n);
  }
  st = store_read_now(s, key, hold, n);
  *data = *hold;
  return st;
}

int talus_store_has(const talus_store *s, talus_store_key key) {
  if (!s || store_key_check(s, key) != TALUS_OK) return 0;
  pthread_mutex_lock(store_stripe(s, key.tile));
  int found = store_slot_find(&s->tiles[key.tile], key.step, key.part) >= 0;
  pthread_mutex_unlock(store_stripe(s, key.tile));
  return found;
}

talus_status store_unlink_now(talus_store *s, const talus_store_key *keys, int n) {
  talus_status st = TALUS_OK;
  for (int i = 0; i < n; i++) {
    char path[TALUS_PATH_BUF];
    store_blob_path(s, keys[i], path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT && st == TALUS_OK)
      st = talus_fail(TALUS_ERR_IO, "store", "cannot remove %s: %s", path, strerror(errno));
  }
  if (st == TALUS_OK) store_fault_point();
  return st;
}

talus_status store_drop_index(talus_store *s, int32_t tile, int64_t before_step,
                              talus_store_key **out, int *count) {
  pthread_mutex_lock(store_stripe(s, tile));
  tile_slot *t = &s->tiles[tile];
  talus_store_key *keys = malloc((size_t)(t->count ? t->count : 1) * sizeof *keys);
  int n = 0;
  for (int i = t->count - 1; keys && i >= 0; i--)
    if (t->e[i].step < before_step) {
      keys[n++] = (talus_store_key){tile, t->e[i].step, t->e[i].part};
      slot_remove(s, t, i);
    }
  pthread_mutex_unlock(store_stripe(s, tile));
  *out = keys;
  *count = n;
  return keys ? TALUS_OK : talus_fail(TALUS_ERR_NOMEM, "store", "out of memory for a drop");
}

talus_status store_drop_before_sync(talus_store *s, int32_t tile, int64_t before_step) {
  if (!s || tile < 0 || tile >= s->ntiles)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "drop: bad tile %d", tile);
  talus_status st = TALUS_OK;
  pthread_mutex_lock(store_stripe(s, tile));
  tile_slot *t = &s->tiles[tile];
  for (int i = t->count - 1; i >= 0; i--) {
    if (t->e[i].step >= before_step) continue;
    char path[TALUS_PATH_BUF];
    if (s->kind == TALUS_STORE_DISK) {
      store_blob_path(s, (talus_store_key){tile, t->e[i].step, t->e[i].part}, path, sizeof path);
      if (unlink(path) != 0 && errno != ENOENT) {
        st = talus_fail(TALUS_ERR_IO, "store", "cannot remove %s: %s", path, strerror(errno));
        continue; /* still indexed: a later drop retries it */
      }
    }
    slot_remove(s, t, i);
  }
  pthread_mutex_unlock(store_stripe(s, tile));
  if (st == TALUS_OK) store_fault_point();
  return st;
}

/* ---- manifest API ---- */

talus_status store_commit_now(talus_store *s, int32_t tile, int64_t step) {
  talus_status st = TALUS_OK;
  double t0 = talus_now();
  pthread_mutex_lock(&s->lock);
  if (s->kind == TALUS_STORE_DISK) st = journal_append(s, tile, step);
  if (st == TALUS_OK) atomic_store(&s->committed[tile], step);
  uint64_t limit = (uint64_t)s->ntiles > JOURNAL_COMPACT ? (uint64_t)s->ntiles : JOURNAL_COMPACT;
  if (st == TALUS_OK && s->kind == TALUS_STORE_DISK && s->journal_records > limit) st = compact(s);
  pthread_mutex_unlock(&s->lock);
  st = store_timed(s, t0, st);
  if (st == TALUS_OK) store_fault_point();
  return st;
}

talus_status store_commit_sync(talus_store *s, int32_t tile, int64_t step) {
  if (!s || tile < 0 || tile >= s->ntiles || step < 0)
    return talus_fail(TALUS_ERR_ARGUMENT, "store", "commit: bad tile %d or step %" PRId64, tile,
                      step);
  talus_status st = store_commit_now(s, tile, step);
  if (st == TALUS_OK) atomic_store(&s->promised[tile], step);
  return st;
}

int64_t talus_store_committed(const talus_store *s, int32_t tile) {
  if (!s || tile < 0 || tile >= s->ntiles) return -1;
  return atomic_load(&s->promised[tile]);
}

talus_status store_set_meta_sync(talus_store *s, const char *key, const char *value) {
  if (!s || !key || !value || !meta_key_ok(key) || !text_ok(value))
    return talus_fail(TALUS_ERR_ARGUMENT, "store",
                      "meta key must be [A-Za-z0-9_.-]+ and its value one printable line "
                      "(key '%.80s')",
                      key ? key : "(null)");
  pthread_mutex_lock(&s->lock);
  talus_status st = meta_put(s, key, value);
  if (st == TALUS_OK && s->kind == TALUS_STORE_DISK) st = compact(s);
  pthread_mutex_unlock(&s->lock);
  return st;
}

const char *talus_store_get_meta(const talus_store *s, const char *key) {
  if (!s || !key) return NULL;
  for (int i = 0; i < s->nmeta; i++)
    if (strcmp(s->meta[i].key, key) == 0) return s->meta[i].value;
  return NULL;
}

/* ---- accounting ---- */

void talus_store_get_stats(const talus_store *s, talus_store_stats *out) {
  memset(out, 0, sizeof *out);
  if (!s) return;
  out->raw_written = atomic_load(&s->raw_written);
  out->bytes_written = atomic_load(&s->bytes_written);
  out->raw_read = atomic_load(&s->raw_read);
  out->bytes_read = atomic_load(&s->bytes_read);
  out->blobs_written = atomic_load(&s->blobs_written);
  out->blobs_read = atomic_load(&s->blobs_read);
  out->io_seconds = (double)atomic_load(&s->io_ns) * 1e-9;
}

size_t talus_store_memory_bytes(const talus_store *s) {
  if (!s) return 0;
  size_t fixed = sizeof *s + (size_t)s->ntiles * (sizeof *s->tiles + sizeof *s->committed);
  pthread_mutex_lock((pthread_mutex_t *)&s->pool_lock);
  size_t pooled = s->pool_bytes;
  pthread_mutex_unlock((pthread_mutex_t *)&s->pool_lock);
  return fixed + atomic_load(&s->held) + pooled;
}
