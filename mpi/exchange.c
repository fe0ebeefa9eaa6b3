/*
 * exchange.c — one generation's strip exchange between ranks (design in
 * ranks.h). Message from rank a to rank b: for each strip (q, part) that a
 * tile of b reads and a owns, sorted by (q, part) and without repeats:
 * a header {q, part, bytes} then the blob as the store holds it. An empty
 * message means "a failed and sends nothing". Receives are matched with
 * MPI_Improbe / MPI_Mprobe, so their size needs no separate phase.
 */
#ifdef TALUS_HAVE_MPI
#include "grid.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct mpi_item_head {
  int32_t q, part;
  uint64_t bytes;
} mpi_item_head;

/* Appends an item to a list (duplicates are removed later). */
static talus_status list_add(mpi_list *l, int q, int part) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    mpi_item *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) return talus_fail(TALUS_ERR_NOMEM, "mpi", "no memory for the strip lists");
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = (mpi_item){q, part};
  return TALUS_OK;
}

static int item_cmp(const void *a, const void *b) {
  const mpi_item *x = a, *y = b;
  return x->q != y->q ? (x->q > y->q) - (x->q < y->q) : (x->part > y->part) - (x->part < y->part);
}

/* Sorts a list by (q, part) and removes repeats: the order both sides use. */
static void list_normalise(mpi_list *l) {
  if (l->n < 2) return;
  qsort(l->v, (size_t)l->n, sizeof *l->v, item_cmp);
  int n = 1;
  for (int i = 1; i < l->n; i++)
    if (item_cmp(&l->v[i], &l->v[n - 1])) l->v[n++] = l->v[i];
  l->n = n;
}

typedef struct plan_walk {
  talus_mpi_grid *m;
  mpi_exchange *x;
  int p;
  talus_status st;
} plan_walk;

/* Owns the classification of one read (q, part) of tile walk->p. */
static void plan_read(void *user, int q, int part) {
  plan_walk *w = user;
  int a = w->m->owner[q], b = w->m->owner[w->p], me = w->m->rank;
  if (a == b || w->st) return;
  if (a == me) w->st = list_add(&w->x->send[b], q, part);
  if (b == me) {
    w->st = list_add(&w->x->recv[a], q, part);
    w->x->border[w->p] = 1;
  }
}

talus_status mpi_exchange_plan(talus_mpi_grid *m, int k, mpi_exchange *x) {
  memset(x, 0, sizeof *x);
  int n = x->size = m->size;
  x->send = calloc((size_t)n, sizeof *x->send);
  x->recv = calloc((size_t)n, sizeof *x->recv);
  x->sbuf = calloc((size_t)n, sizeof *x->sbuf);
  x->rbuf = calloc((size_t)n, sizeof *x->rbuf);
  x->rlen = malloc((size_t)n * sizeof *x->rlen);
  x->req = malloc((size_t)2 * n * sizeof *x->req);
  x->border = calloc((size_t)m->ntiles, 1);
  if (!x->send || !x->recv || !x->sbuf || !x->rbuf || !x->rlen || !x->req || !x->border)
    return talus_fail(TALUS_ERR_NOMEM, "mpi", "no memory for the exchange plan");
  for (int i = 0; i < 2 * n; i++)
    x->req[i] = MPI_REQUEST_NULL;
  plan_walk w = {m, x, 0, TALUS_OK};
  for (w.p = 0; w.p < m->ntiles && !w.st; w.p++)
    talus_tiled_reads(m->g, w.p, k, plan_read, &w);
  for (int r = 0; r < n; r++) {
    list_normalise(&x->send[r]);
    list_normalise(&x->recv[r]);
    x->rlen[r] = x->recv[r].n ? -1 : 0;
  }
  assert(!x->send[m->rank].n && !x->recv[m->rank].n);
  return w.st;
}

/* Packs the strips of list l at step s into one malloc'd message. */
static talus_status pack(talus_mpi_grid *m, const mpi_list *l, int64_t s, void **out, size_t *len) {
  unsigned char *buf = NULL;
  size_t n = 0;
  talus_status st = TALUS_OK;
  for (int i = 0; i < l->n && !st; i++) {
    const void *blob = NULL; /* read in place where the store allows (tiled.c does so) */
    void *hold = NULL;
    size_t bytes = 0;
    st = talus_store_get_ref(m->store, (talus_store_key){l->v[i].q, s, l->v[i].part}, &blob, &bytes,
                             &hold);
    unsigned char *nb = st ? NULL : realloc(buf, n + sizeof(mpi_item_head) + bytes);
    if (!st && !nb) st = talus_fail(TALUS_ERR_NOMEM, "mpi", "no memory for a strip message");
    if (nb) {
      mpi_item_head h = {l->v[i].q, l->v[i].part, bytes};
      memcpy(nb + n, &h, sizeof h);
      memcpy(nb + n + sizeof h, blob, bytes);
      buf = nb, n += sizeof h + bytes;
    }
    talus_store_blob_release(m->store, hold);
  }
  if (!st && n > INT_MAX)
    st = talus_fail(TALUS_ERR_UNSUPPORTED, "mpi",
                    "a strip message of %zu bytes exceeds MPI's 2 GiB: use smaller tiles or "
                    "fewer steps per exchange",
                    n);
  if (st) free(buf), buf = NULL, n = 0;
  *out = buf;
  *len = n;
  return st;
}

talus_status mpi_exchange_post(talus_mpi_grid *m, mpi_exchange *x, int64_t s, talus_status st) {
  for (int r = 0; r < m->size; r++) {
    if (!x->send[r].n) continue;
    size_t len = 0;
    if (!st) st = pack(m, &x->send[r], s, &x->sbuf[r], &len);
    m->bytes_sent += (int64_t)len;
    MPI_Isend(x->sbuf[r], (int)len, MPI_BYTE, r, TAG_STRIPS, MPI_COMM_WORLD, &x->req[r]);
  }
  return st;
}

/* Starts the receive of the message from peer r once it is matched. */
static void receive(mpi_exchange *x, int r, MPI_Message msg, MPI_Status *status) {
  int len = 0;
  MPI_Get_count(status, MPI_BYTE, &len);
  x->rlen[r] = len;
  x->rbuf[r] = malloc(len ? (size_t)len : 1);
  if (!x->rbuf[r]) MPI_Abort(MPI_COMM_WORLD, 3); /* cannot even drain the message */
  MPI_Imrecv(x->rbuf[r], len, MPI_BYTE, &msg, &x->req[x->size + r]);
}

void mpi_exchange_poll(talus_mpi_grid *m, mpi_exchange *x) {
  for (int r = 0; r < m->size; r++) {
    if (x->rlen[r] != -1) continue;
    int flag = 0;
    MPI_Message msg;
    MPI_Status status;
    MPI_Improbe(r, TAG_STRIPS, MPI_COMM_WORLD, &flag, &msg, &status);
    if (flag) receive(x, r, msg, &status);
  }
  int done = 0; /* drives progress of the transfers in flight */
  MPI_Testall(2 * m->size, x->req, &done, MPI_STATUSES_IGNORE);
}

/* Puts the strips of peer r's message into the store (checked against the
 * list both sides derived). */
static talus_status unpack(talus_mpi_grid *m, mpi_exchange *x, int r, int64_t s) {
  const unsigned char *b = x->rbuf[r];
  size_t at = 0, len = (size_t)x->rlen[r];
  talus_status st = TALUS_OK;
  for (int i = 0; i < x->recv[r].n && !st; i++) {
    mpi_item_head h = {-1, -1, 0};
    if (len - at >= sizeof h) memcpy(&h, b + at, sizeof h);
    if (h.q != x->recv[r].v[i].q || h.part != x->recv[r].v[i].part || len - at < h.bytes + sizeof h)
      return talus_fail(TALUS_ERR_INTERNAL, "mpi",
                        "rank %d sent strip %d/%d, expected %d/%d (ranks disagree on the plan)", r,
                        h.q, h.part, x->recv[r].v[i].q, x->recv[r].v[i].part);
    at += sizeof h;
    st = talus_store_put(m->store, (talus_store_key){h.q, s, h.part}, b + at, h.bytes, 1);
    at += h.bytes;
  }
  if (!st && at != len)
    st = talus_fail(TALUS_ERR_INTERNAL, "mpi", "rank %d sent %zu bytes, %zu expected", r, len, at);
  return st;
}

talus_status mpi_exchange_finish(talus_mpi_grid *m, mpi_exchange *x, int64_t s, int keep,
                                 int *peer_failed) {
  for (int r = 0, tries = 0; r < m->size; r++)
    while (x->rlen[r] == -1) { /* not matched yet: poll without spinning */
      mpi_exchange_poll(m, x);
      if (x->rlen[r] == -1) tries = mpi_nap(tries);
    }
  mpi_wait_quietly(2 * m->size, x->req);
  *peer_failed = 0;
  talus_status st = TALUS_OK;
  for (int r = 0; r < m->size && !st; r++) {
    if (!x->recv[r].n) continue;
    if (!x->rlen[r])
      *peer_failed = 1;
    else if (keep)
      st = unpack(m, x, r, s);
  }
  return st;
}

void mpi_exchange_free(talus_mpi_grid *m, mpi_exchange *x) {
  for (int r = 0; r < x->size; r++) {
    if (x->send) free(x->send[r].v);
    if (x->recv) free(x->recv[r].v);
    if (x->sbuf) free(x->sbuf[r]);
    if (x->rbuf) free(x->rbuf[r]);
  }
  free(x->send), free(x->recv), free(x->sbuf), free(x->rbuf), free(x->rlen), free(x->req);
  free(x->border);
  memset(x, 0, sizeof *x);
}
#endif /* TALUS_HAVE_MPI */
