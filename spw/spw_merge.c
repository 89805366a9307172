/* spw_merge.c -- merges of sorted runs.
 *
 *   spw_merge       k runs (memory or files) into a run in memory, a
 *                   temporary file or chunks handed to a callback; runs
 *                   read and written a block at a time (files: records of
 *                   L int64 then W bytes, decoded into columns); the head
 *                   chosen by a loser tree (ties: the older run);
 *   spw_merge2_mem  two runs in memory into the older one's grown arrays;
 *   spw_merge2_new  two runs in memory into new arrays (the final pack).
 *
 * Heads compare as packed 64-bit keys when the runs' coordinate ranges
 * fit in 64 bits (the two-run merges need that), else tuple by tuple. */
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
    memcpy(w->writing, r->path, sizeof w->writing);
    w->writing_on = 1;
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

/* packed key of tuple i of columns c (L levels) */
static inline uint64_t key_at(const spw_packing *pk, int L, int64_t *const *c, int64_t i) {
  uint64_t k = 0;
  for (int l = 0; l < L; l++) k |= ((uint64_t)c[l][i] - (uint64_t)pk->lo[l]) << pk->sh[l];
  return k;
}

/* ---- choosing the head ------------------------------------------------------------ */

/* a's head before b's (a the older run on ties) */
static inline __attribute__((always_inline)) bool head_before(const spw *w, bool packed, const src *a, int ia, const src *b,
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

static inline __attribute__((always_inline)) int lt_replay(const spw *w, bool packed, const src *S, int k, int *tree, int win) {
  for (int node = (win + k) >> 1; node >= 1; node >>= 1) {
    int o = tree[node];
    if (head_before(w, packed, &S[o], o, &S[win], win)) {
      tree[node] = win;
      win = o;
    }
  }
  return win;
}

/* The merge proper: S[0..k) open, s open.  packed, L and W constant in the
 * hot instances. */
static inline __attribute__((always_inline)) spc_status
merge_loop(spw *w, src *S, int k, int *tree, snk *sp, const spw_packing *pk, const bool packed,
           const bool combine, const int L, const size_t W, spc_error *e) {
  snk s = *sp;
  spc_status st = SPC_OK;
  int win = lt_build(w, packed, S, k, tree, 1);
  bool have = false;
  uint64_t last = 0;
  while (!S[win].done) {
    src *h = &S[win];
    int64_t i = h->i;
    bool same = false;
    if (have && combine) {
      if (packed) {
        same = h->key == last;
      } else {
        same = true;
        for (int l = 0; l < L && same; l++) same = h->c[l][i] == s.c[l][s.n - 1];
      }
    }
    if (same) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < L; l++) t[l] = h->c[l][i];
        st = spw_dup_error(e, w, t);
        break;
      }
      spw_val_combine(w, s.v + (s.n - 1) * (int64_t)W, h->v + i * (int64_t)W);
    } else {
      if (s.n == s.cap && (st = snk_drain(&s, e))) break;
      for (int l = 0; l < L; l++) s.c[l][s.n] = h->c[l][i];
      spw_val_copy(s.v + s.n * (int64_t)W, h->v + i * (int64_t)W, W);
      s.n++;
      last = h->key;
      have = true;
    }
    if (++h->i == h->n) {
      if (h->f && (st = src_fill(w, h, e))) break;
      if (!h->f) h->done = true;
    }
    if (packed && !h->done) h->key = key_at(pk, L, h->c, h->i);
    if (k > 1) win = lt_replay(w, packed, S, k, tree, win);
  }
  *sp = s;
  return st;
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
  /* exact: only the oldest run may hold combined (prefix) sums */
  const bool packed = pk.ok, combine = final || !w->exact || rs == w->runs;
  const size_t W = w->W;
  if (cb && total > chunk) total = chunk;
  if (!st) st = snk_open(&s, w, out, total, file, e);
  s.cb = cb;
  s.ctx = ctx;
  for (int i = 0; i < k && !st; i++) {
    st = src_open(w, &S[i], &rs[i], e);
    if (!st && packed && !S[i].done) S[i].key = spw_key(&pk, S[i].c, S[i].i);
  }
  if (!st && k) {
    const int L = w->L;
    if (packed && L == 2 && W == 8) st = merge_loop(w, S, k, tree, &s, &pk, true, combine, 2, 8, e);
    else if (packed && L == 3 && W == 8) st = merge_loop(w, S, k, tree, &s, &pk, true, combine, 3, 8, e);
    else if (packed) st = merge_loop(w, S, k, tree, &s, &pk, true, combine, L, W, e);
    else st = merge_loop(w, S, k, tree, &s, &pk, false, combine, L, W, e);
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
    w->writing_on = 0;
  } else {
    if (k) w->st.merges++; /* (none: the pack of an empty workspace) */
    for (int l = 0; l < w->L && any; l++) out->lo[l] = lo[l], out->hi[l] = hi[l];
  }
  return st;
}

/* ---- two runs in memory ------------------------------------------------------------ */

typedef struct two {
  int64_t *O[MAXL], *A[MAXL], *B[MAXL]; /* output, the older run, the newer */
  char *Ov;
  const char *Av, *Bv;
  int64_t na, nb;
} two;

/* One tuple (coordinates C[.][j], value x, key k) after the last written:
 * combined with it when equal, else written at o. */
static inline __attribute__((always_inline)) spc_status
put1(spw *w, two *t, int64_t *const *C, int64_t j, const char *x, uint64_t k, uint64_t *last,
     int64_t *o, const bool combine, const int L, const size_t W, spc_error *e) {
  if (combine && *o && k == *last) {
    if (w->o.dup == SPC_DUP_ERROR) {
      int64_t tu[MAXL];
      for (int l = 0; l < L; l++) tu[l] = C[l][j];
      return spw_dup_error(e, w, tu);
    }
    spw_val_combine(w, t->Ov + (*o - 1) * (int64_t)W, x);
    return SPC_OK;
  }
  for (int l = 0; l < L; l++) t->O[l][*o] = C[l][j];
  spw_val_copy(t->Ov + *o * (int64_t)W, x, W);
  ++*o;
  *last = k;
  return SPC_OK;
}

/* Merge A and B into O (O may be A's storage below A: the write position
 * never passes the read position); ties: A first; equal tuples combine
 * with the last written (combine).  Float sums of doubles choose without
 * branches.  *no: tuples written.  L, W constant in the hot instances. */
static inline __attribute__((always_inline)) spc_status
merge2_body(spw *w, two *t, const spw_packing *pk, const bool combine, const int L,
            const size_t W, int64_t *no, spc_error *e) {
  const int64_t na = t->na, nb = t->nb;
  int64_t *const *A = t->A, *const *B = t->B, *const *O = t->O;
  const bool fsum = combine && W == 8 && w->vt == SPC_F64 && w->o.dup == SPC_DUP_SUM;
  int64_t ia = 0, ib = 0, o = 0;
  uint64_t ka = key_at(pk, L, A, 0), kb = key_at(pk, L, B, 0), last = 0;
  spc_status st = SPC_OK;
  while (ia < na && ib < nb) {
    const bool tb = kb < ka; /* ties: a, the older run */
    const uint64_t k = tb ? kb : ka;
    const int64_t ja = ia, jb = ib;
    if (fsum || !combine) {
      const bool same = fsum && o && k == last;
      const int64_t p = o - same;
      for (int l = 0; l < L; l++) O[l][p] = tb ? B[l][jb] : A[l][ja];
      if (W == 8) {
        uint64_t xa, xb, xp;
        memcpy(&xa, t->Av + ja * 8, 8);
        memcpy(&xb, t->Bv + jb * 8, 8);
        memcpy(&xp, t->Ov + (o ? o - 1 : 0) * 8, 8);
        uint64_t x = tb ? xb : xa;
        if (fsum) {
          double dx, dp;
          memcpy(&dx, &x, 8);
          memcpy(&dp, &xp, 8);
          dp = dp + dx;
          memcpy(&xp, &dp, 8);
          x = same ? xp : x;
        }
        memcpy(t->Ov + p * 8, &x, 8);
      } else {
        spw_val_copy(t->Ov + p * (int64_t)W, tb ? t->Bv + jb * (int64_t)W : t->Av + ja * (int64_t)W,
                     W);
      }
      o = p + 1;
      last = k;
    } else {
      st = put1(w, t, tb ? B : A, tb ? jb : ja, tb ? t->Bv + jb * (int64_t)W : t->Av + ja * (int64_t)W,
                k, &last, &o, combine, L, W, e);
      if (st) return st;
    }
    ia += !tb;
    ib += tb;
    int64_t *const *C = tb ? B : A;
    const int64_t j = tb ? ib : ia, n = tb ? nb : na;
    const uint64_t kn = key_at(pk, L, C, j < n ? j : n - 1);
    ka = tb ? ka : kn;
    kb = tb ? kn : kb;
  }
  if (!combine) { /* the rest in one move */
    for (int l = 0; l < L; l++) {
      memmove(O[l] + o, A[l] + ia, (size_t)(na - ia) * 8);
      memcpy(O[l] + o + (na - ia), B[l] + ib, (size_t)(nb - ib) * 8);
    }
    if (W) {
      memmove(t->Ov + o * (int64_t)W, t->Av + ia * (int64_t)W, (size_t)(na - ia) * W);
      memcpy(t->Ov + (o + na - ia) * (int64_t)W, t->Bv + ib * (int64_t)W, (size_t)(nb - ib) * W);
    }
    *no = o + (na - ia) + (nb - ib);
    return SPC_OK;
  }
  for (; ia < na && !st; ia++)
    st = put1(w, t, A, ia, t->Av + ia * (int64_t)W, key_at(pk, L, A, ia), &last, &o, true, L, W, e);
  for (; ib < nb && !st; ib++)
    st = put1(w, t, B, ib, t->Bv + ib * (int64_t)W, key_at(pk, L, B, ib), &last, &o, true, L, W, e);
  *no = o;
  return st;
}

static spc_status merge2_run(spw *w, two *t, const spw_packing *pk, bool combine, int64_t *no,
                             spc_error *e) {
  const int L = w->L;
  const size_t W = w->W;
  if (L == 2 && W == 8) return merge2_body(w, t, pk, combine, 2, 8, no, e);
  if (L == 3 && W == 8) return merge2_body(w, t, pk, combine, 3, 8, no, e);
  if (L == 1 && W == 8) return merge2_body(w, t, pk, combine, 1, 8, no, e);
  return merge2_body(w, t, pk, combine, L, W, no, e);
}

static bool two_packing(const spw *w, const run *a, const run *b, spw_packing *pk) {
  int64_t lo[MAXL], hi[MAXL];
  if (!a->n || !b->n || a->file || b->file) return false;
  for (int l = 0; l < w->L; l++) {
    lo[l] = a->lo[l] < b->lo[l] ? a->lo[l] : b->lo[l];
    hi[l] = a->hi[l] > b->hi[l] ? a->hi[l] : b->hi[l];
  }
  spw_packing_of(pk, w->L, lo, hi);
  return pk->ok;
}

static void two_ranges(const spw *w, run *out, const run *a, const run *b) {
  for (int l = 0; l < w->L; l++) {
    out->lo[l] = a->lo[l] < b->lo[l] ? a->lo[l] : b->lo[l];
    out->hi[l] = a->hi[l] > b->hi[l] ? a->hi[l] : b->hi[l];
  }
}

/* a's arrays grown to na + nb, a's tuples moved to the top, merged from
 * there and from b into a's bottom. */
spc_status spw_merge2_mem(spw *w, run *a, run *b, bool fold, spc_error *e) {
  const int L = w->L;
  const size_t W = w->W;
  const int64_t N = a->n + b->n;
  spw_packing pk;
  if (!two_packing(w, a, b, &pk)) return SPC_NOT_HANDLED;
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
  two t = {.Ov = a->v, .Av = a->v + b->n * (int64_t)W, .Bv = b->v, .na = a->n, .nb = b->n};
  for (int l = 0; l < L; l++) {
    memmove(a->c[l] + b->n, a->c[l], (size_t)a->n * 8);
    t.O[l] = a->c[l], t.A[l] = a->c[l] + b->n, t.B[l] = b->c[l];
  }
  if (W) memmove(a->v + b->n * (int64_t)W, a->v, (size_t)a->n * W);
  int64_t no = 0;
  spc_status st = merge2_run(w, &t, &pk, !fold && (!w->exact || a == w->runs), &no, e);
  if (st) return st;
  a->n = no;
  two_ranges(w, a, a, b);
  spw_run_free(b);
  if (!fold) w->st.merges++;
  return SPC_OK;
}

/* The final merge of two runs in memory into a new run out (combining). */
spc_status spw_merge2_new(spw *w, run *a, run *b, run *out, spc_error *e) {
  const int L = w->L;
  const size_t W = w->W;
  const int64_t N = a->n + b->n;
  spw_packing pk;
  memset(out, 0, sizeof *out);
  if (!two_packing(w, a, b, &pk)) return SPC_NOT_HANDLED;
  spc_status st = SPC_OK;
  for (int l = 0; l < L && !st; l++)
    if (!(out->c[l] = spc_malloc_n(N, 8))) st = SPC_NOMEM(e);
  if (!st && W && !(out->v = spc_malloc_n(N, W))) st = SPC_NOMEM(e);
  two t = {.Ov = out->v, .Av = a->v, .Bv = b->v, .na = a->n, .nb = b->n};
  for (int l = 0; l < L; l++) t.O[l] = out->c[l], t.A[l] = a->c[l], t.B[l] = b->c[l];
  int64_t no = 0;
  if (!st) st = merge2_run(w, &t, &pk, true, &no, e);
  if (st) {
    spw_run_free(out);
    return st;
  }
  out->n = no;
  two_ranges(w, out, a, b);
  w->st.merges++;
  return SPC_OK;
}
