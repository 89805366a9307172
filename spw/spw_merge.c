/* spw_merge.c -- k-way merge of sorted runs (memory or files) into a run
 * in memory, a temporary file or chunks handed to a callback.  Runs are
 * read and written a block at a time (files: records of L int64 then W
 * bytes, decoded into columns); heads compare as packed 64-bit keys when
 * the runs' coordinate ranges fit in 64 bits, else tuple by tuple; the
 * head is chosen by a loser tree (ties: the older run). */
#include "spw_impl.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLK 4096 /* records per file block */

typedef struct src {
  run *r;
  FILE *f;
  int64_t *c[MAXL]; /* current block: the run's columns, or buf */
  const char *v;
  int64_t i, n;     /* position in the block, its length */
  int64_t left;     /* file: records not read yet */
  uint64_t key;
  bool done;
  int64_t *buf;     /* file: L x BLK coordinates, then BLK values */
  char *raw;
} src;

typedef struct snk {
  spw *w;
  run *r;
  FILE *f;
  int64_t *c[MAXL]; /* the output block: r's columns, or buf */
  char *v;
  int64_t n, cap;
  int64_t *buf;
  char *raw;
  spw_chunk_fn cb;
  void *ctx;
} snk;

/* ---- sources -------------------------------------------------------------------- */

static spc_status src_fill(const spw *w, src *s, spc_error *e) {
  int64_t m = s->left < BLK ? s->left : BLK, rb = spw_rec_bytes(w);
  s->i = s->n = 0;
  if (!m) {
    s->done = true;
    return SPC_OK;
  }
  if (fread(s->raw, (size_t)rb, (size_t)m, s->f) != (size_t)m)
    return spc_err(e, SPC_ERR_IO, s->r->path, 0, 0, "cannot read a workspace run back");
  for (int64_t t = 0; t < m; t++) {
    const char *p = s->raw + t * rb;
    for (int l = 0; l < w->L; l++) memcpy(&s->c[l][t], p + 8 * l, 8);
    spw_val_copy((char *)s->v + t * (int64_t)w->W, p + 8 * w->L, w->W);
  }
  s->left -= m;
  s->n = m;
  return SPC_OK;
}

static spc_status src_open(const spw *w, src *s, run *r, spc_error *e) {
  s->r = r;
  if (!r->file) {
    for (int l = 0; l < w->L; l++) s->c[l] = r->c[l];
    s->v = r->v;
    s->n = r->n;
    s->done = !r->n;
    return SPC_OK;
  }
  s->buf = spc_malloc_n(BLK * (w->L + 2), 8);
  s->raw = spc_malloc_n(BLK, (size_t)spw_rec_bytes(w));
  if (!s->buf || !s->raw) return SPC_NOMEM(e);
  for (int l = 0; l < w->L; l++) s->c[l] = s->buf + (int64_t)l * BLK;
  s->v = (const char *)(s->buf + (int64_t)w->L * BLK);
  if (!(s->f = fopen(r->path, "rb")))
    return spc_err(e, SPC_ERR_IO, r->path, 0, 0, "cannot open a workspace run: %s", strerror(errno));
  s->left = r->n;
  return src_fill(w, s, e);
}

static void src_close(src *s) {
  if (s->f) fclose(s->f);
  spc_free(s->buf);
  spc_free(s->raw);
}

/* ---- the sink -------------------------------------------------------------------- */

static spc_status snk_open(snk *s, spw *w, run *r, int64_t cap, bool file, spc_error *e) {
  memset(r, 0, sizeof *r);
  s->w = w;
  s->r = r;
  if (file) {
    const char *d = w->o.tmpdir ? w->o.tmpdir : getenv("TMPDIR");
    if (!d || !*d) d = "/tmp";
    snprintf(r->path, sizeof r->path, "%s/spconv-spw-XXXXXX", d);
    int fd = mkstemp(r->path);
    if (fd < 0 || !(s->f = fdopen(fd, "wb"))) {
      if (fd >= 0) {
        close(fd);
        unlink(r->path);
      }
      return spc_err(e, SPC_ERR_IO, r->path, 0, 0, "cannot create a workspace file: %s",
                     strerror(errno));
    }
    r->file = true;
    w->files_made++;
    setvbuf(s->f, NULL, _IOFBF, 1 << 16);
    s->cap = BLK;
    s->buf = spc_malloc_n(BLK * (w->L + 2), 8);
    s->raw = spc_malloc_n(BLK, (size_t)spw_rec_bytes(w));
    if (!s->buf || !s->raw) return SPC_NOMEM(e);
    for (int l = 0; l < w->L; l++) s->c[l] = s->buf + (int64_t)l * BLK;
    s->v = (char *)(s->buf + (int64_t)w->L * BLK);
    return SPC_OK;
  }
  s->cap = cap;
  for (int l = 0; l < w->L; l++)
    if (!(r->c[l] = spc_malloc_n(cap ? cap : 1, 8))) return SPC_NOMEM(e);
  if (w->W && !(r->v = spc_malloc_n(cap ? cap : 1, w->W))) return SPC_NOMEM(e);
  for (int l = 0; l < w->L; l++) s->c[l] = r->c[l];
  s->v = r->v;
  return SPC_OK;
}

/* The block is final: write it to the file or hand it to the callback. */
static spc_status snk_drain(snk *s, spc_error *e) {
  spw *w = s->w;
  spc_status st = SPC_OK;
  if (!s->n) return SPC_OK;
  if (s->f) {
    int64_t rb = spw_rec_bytes(w);
    for (int64_t t = 0; t < s->n; t++) {
      char *p = s->raw + t * rb;
      for (int l = 0; l < w->L; l++) memcpy(p + 8 * l, &s->c[l][t], 8);
      spw_val_copy(p + 8 * w->L, s->v + t * (int64_t)w->W, w->W);
    }
    if (fwrite(s->raw, (size_t)rb, (size_t)s->n, s->f) != (size_t)s->n)
      return spc_err(e, SPC_ERR_IO, s->r->path, 0, 0, "cannot write a workspace run (disk full?)");
    w->st.spilled_bytes += s->n * rb;
  } else if (s->cb) {
    if (w->o.descending)
      for (int l = 0; l < w->L; l++)
        for (int64_t i = 0; i < s->n; i++) s->c[l][i] = ~s->c[l][i];
    st = s->cb(s->ctx, s->n, s->c, s->v, e);
  } else {
    return SPC_OK; /* the run in memory holds every tuple */
  }
  s->r->n += s->n;
  s->n = 0;
  return st;
}

static spc_status snk_close(snk *s, spc_error *e) {
  spc_status st = SPC_OK;
  if (s->f || s->cb) st = snk_drain(s, e);
  else s->r->n = s->n;
  if (s->f && fclose(s->f) && !st)
    st = spc_err(e, SPC_ERR_IO, s->r->path, 0, 0, "cannot write a workspace run (disk full?)");
  s->f = NULL;
  spc_free(s->buf);
  spc_free(s->raw);
  s->buf = NULL;
  s->raw = NULL;
  return st;
}

/* ---- choosing the head ------------------------------------------------------------ */

/* a's head before b's (a the older run on ties) */
static inline bool head_before(const spw *w, bool packed, const src *a, int ia, const src *b,
                               int ib) {
  if (a->done) return false;
  if (b->done) return true;
  if (packed) return a->key < b->key || (a->key == b->key && ia < ib);
  for (int l = 0; l < w->L; l++) {
    int64_t x = a->c[l][a->i], y = b->c[l][b->i];
    if (x != y) return x < y;
  }
  return ia < ib;
}

/* Loser tree over k sources: tree[0] the winner, tree[1..k) the losers of
 * the internal nodes (leaf j is node k + j). */
static int lt_build(const spw *w, bool packed, const src *S, int k, int *tree, int node) {
  if (node >= k) return node - k;
  int a = lt_build(w, packed, S, k, tree, 2 * node);
  int b = 2 * node + 1 < 2 * k ? lt_build(w, packed, S, k, tree, 2 * node + 1) : a;
  if (head_before(w, packed, &S[a], a, &S[b], b)) {
    tree[node] = b;
    return a;
  }
  tree[node] = a;
  return b;
}

static inline int lt_replay(const spw *w, bool packed, const src *S, int k, int *tree, int win) {
  for (int node = (win + k) >> 1; node >= 1; node >>= 1) {
    int o = tree[node];
    if (head_before(w, packed, &S[o], o, &S[win], win)) {
      tree[node] = win;
      win = o;
    }
  }
  return win;
}

/* ---- the merge ------------------------------------------------------------------- */

spc_status spw_merge(spw *w, run *rs, int k, run *out, bool file, bool final, spw_chunk_fn cb,
                     void *ctx, int64_t chunk, spc_error *e) {
  src *S = spc_calloc((size_t)k ? (size_t)k : 1, sizeof *S);
  int *tree = spc_calloc((size_t)k + 1, sizeof *tree);
  snk s;
  int64_t total = 0, lo[MAXL], hi[MAXL];
  bool any = false;
  memset(&s, 0, sizeof s);
  memset(out, 0, sizeof *out);
  spc_status st = S && tree ? SPC_OK : SPC_NOMEM(e);
  for (int i = 0; i < k; i++) {
    total += rs[i].n;
    for (int l = 0; l < w->L && rs[i].n; l++) {
      if (!any || rs[i].lo[l] < lo[l]) lo[l] = rs[i].lo[l];
      if (!any || rs[i].hi[l] > hi[l]) hi[l] = rs[i].hi[l];
    }
    any = any || rs[i].n;
  }
  spw_packing pk = {.ok = false};
  if (any) spw_packing_of(&pk, w->L, lo, hi);
  const bool packed = pk.ok, combine = final || !w->exact;
  const size_t W = w->W;
  if (cb && total > chunk) total = chunk;
  if (!st) st = snk_open(&s, w, out, total, file, e);
  s.cb = cb;
  s.ctx = ctx;
  for (int i = 0; i < k && !st; i++) {
    st = src_open(w, &S[i], &rs[i], e);
    if (!st && packed && !S[i].done) S[i].key = spw_key(&pk, S[i].c, S[i].i);
  }
  int win = st || !k ? 0 : lt_build(w, packed, S, k, tree, 1);
  bool have = false;
  uint64_t last = 0;
  while (!st && k && !S[win].done) {
    src *h = &S[win];
    int64_t i = h->i;
    bool same = false;
    if (have && combine) {
      if (packed) {
        same = h->key == last;
      } else {
        same = true;
        for (int l = 0; l < w->L && same; l++) same = h->c[l][i] == s.c[l][s.n - 1];
      }
    }
    if (same) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < w->L; l++) t[l] = h->c[l][i];
        st = spw_dup_error(e, w, t);
        break;
      }
      spw_val_combine(w, s.v + (s.n - 1) * (int64_t)W, h->v + i * (int64_t)W);
    } else {
      if (s.n == s.cap && (st = snk_drain(&s, e))) break;
      for (int l = 0; l < w->L; l++) s.c[l][s.n] = h->c[l][i];
      spw_val_copy(s.v + s.n * (int64_t)W, h->v + i * (int64_t)W, W);
      s.n++;
      last = h->key;
      have = true;
    }
    if (++h->i == h->n) {
      if (h->f) st = src_fill(w, h, e);
      else h->done = true;
    }
    if (!h->done && packed) h->key = spw_key(&pk, h->c, h->i);
    if (k > 1) win = lt_replay(w, packed, S, k, tree, win);
  }
  if (!st) st = snk_close(&s, e);
  else if (s.f) fclose(s.f), s.f = NULL;
  spc_free(s.buf);
  spc_free(s.raw);
  for (int i = 0; S && i < k; i++) src_close(&S[i]);
  spc_free(S);
  spc_free(tree);
  if (st || cb) {
    spw_run_free(out);
  } else {
    w->st.merges++;
    for (int l = 0; l < w->L && any; l++) out->lo[l] = lo[l], out->hi[l] = hi[l];
  }
  return st;
}

/* ---- two runs in memory, merged in place ----------------------------------------- */

static inline uint64_t key_at(const spw_packing *pk, int L, int64_t *const *c, int64_t i) {
  uint64_t k = 0;
  for (int l = 0; l < L; l++) k |= ((uint64_t)c[l][i] - (uint64_t)pk->lo[l]) << pk->sh[l];
  return k;
}

/* a's arrays grown to na + nb with a's tuples moved to the top; merged
 * forward from there and from b into a's bottom (the write position never
 * passes the read position in a).  Heads compare as packed keys; without
 * combining, or with runs free of duplicates, equal heads are the only
 * combining there is.  L, W constant in the hot instances. */
static inline __attribute__((always_inline)) spc_status
merge2_body(spw *w, run *a, run *b, const spw_packing *pk, bool combine, const int L,
            const size_t W, spc_error *e) {
  const int64_t na = a->n, nb = b->n;
  int64_t *A[MAXL], *B[MAXL], *O[MAXL];
  for (int l = 0; l < L; l++) O[l] = a->c[l], A[l] = a->c[l] + nb, B[l] = b->c[l];
  char *Av = a->v + nb * (int64_t)W, *Bv = b->v, *Ov = a->v;
  int64_t ia = 0, ib = 0, o = 0;
  uint64_t ka = key_at(pk, L, A, 0), kb = key_at(pk, L, B, 0);
  while (ia < na && ib < nb) {
    if (combine && ka == kb) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < L; l++) t[l] = A[l][ia];
        return spw_dup_error(e, w, t);
      }
      for (int l = 0; l < L; l++) O[l][o] = A[l][ia];
      spw_val_copy(Ov + o * (int64_t)W, Av + ia * (int64_t)W, W);
      spw_val_combine(w, Ov + o * (int64_t)W, Bv + ib * (int64_t)W);
      o++, ia++, ib++;
      if (ia < na) ka = key_at(pk, L, A, ia);
      if (ib < nb) kb = key_at(pk, L, B, ib);
      continue;
    }
    const bool tb = kb < ka; /* ties: a, the older run */
    const int64_t ja = ia, jb = ib;
    for (int l = 0; l < L; l++) O[l][o] = tb ? B[l][jb] : A[l][ja];
    if (W == 8) {
      uint64_t x, y;
      memcpy(&x, Av + ja * 8, 8);
      memcpy(&y, Bv + jb * 8, 8);
      x = tb ? y : x;
      memcpy(Ov + o * 8, &x, 8);
    } else {
      spw_val_copy(Ov + o * (int64_t)W, tb ? Bv + jb * (int64_t)W : Av + ja * (int64_t)W, W);
    }
    o++;
    ia += !tb;
    ib += tb;
    int64_t *const *C = tb ? B : A;
    int64_t j = tb ? ib : ia, n = tb ? nb : na;
    uint64_t k = key_at(pk, L, C, j < n ? j : n - 1);
    ka = tb ? ka : k;
    kb = tb ? k : kb;
  }
  for (int l = 0; l < L; l++) {
    memmove(O[l] + o, A[l] + ia, (size_t)(na - ia) * 8);
    memcpy(O[l] + o + (na - ia), B[l] + ib, (size_t)(nb - ib) * 8);
  }
  if (W) {
    memmove(Ov + o * (int64_t)W, Av + ia * (int64_t)W, (size_t)(na - ia) * W);
    memcpy(Ov + (o + na - ia) * (int64_t)W, Bv + ib * (int64_t)W, (size_t)(nb - ib) * W);
  }
  a->n = o + (na - ia) + (nb - ib);
  return SPC_OK;
}

spc_status spw_merge2_mem(spw *w, run *a, run *b, spc_error *e) {
  const int L = w->L;
  const size_t W = w->W;
  const int64_t N = a->n + b->n;
  int64_t lo[MAXL], hi[MAXL];
  for (int l = 0; l < L; l++) {
    lo[l] = a->lo[l] < b->lo[l] ? a->lo[l] : b->lo[l];
    hi[l] = a->hi[l] > b->hi[l] ? a->hi[l] : b->hi[l];
  }
  spw_packing pk;
  spw_packing_of(&pk, L, lo, hi);
  if (!pk.ok || !a->n || !b->n || a->file || b->file) return SPC_NOT_HANDLED;
  for (int l = 0; l < L; l++) { /* grow every array, then move: a stays whole on failure */
    int64_t *p = spc_realloc(a->c[l], (size_t)N * 8);
    if (!p) return SPC_NOMEM(e);
    a->c[l] = p;
  }
  if (W) {
    char *p = spc_realloc(a->v, (size_t)N * W);
    if (!p) return SPC_NOMEM(e);
    a->v = p;
  }
  for (int l = 0; l < L; l++) memmove(a->c[l] + b->n, a->c[l], (size_t)a->n * 8);
  if (W) memmove(a->v + b->n * (int64_t)W, a->v, (size_t)a->n * W);
  const bool combine = !w->exact;
  spc_status st;
  if (L == 2 && W == 8) st = merge2_body(w, a, b, &pk, combine, 2, 8, e);
  else if (L == 3 && W == 8) st = merge2_body(w, a, b, &pk, combine, 3, 8, e);
  else if (L == 1 && W == 8) st = merge2_body(w, a, b, &pk, combine, 1, 8, e);
  else st = merge2_body(w, a, b, &pk, combine, L, W, e);
  if (st) return st;
  for (int l = 0; l < L; l++) a->lo[l] = lo[l], a->hi[l] = hi[l];
  spw_run_free(b);
  w->st.merges++;
  return SPC_OK;
}
