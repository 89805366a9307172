/* spw.c -- the sparse workspace: Acc (hash or list), sorted runs merged
 * geometrically, spill to temporary files, k-way pack.  See spw.h. */
#include "spw.h"
#include "ir_rt.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXL SPC_MAX_ORDER

/* ---- runs --------------------------------------------------------------------- */

typedef struct run {
  int64_t n;
  int64_t *c[MAXL]; /* columns (in memory) */
  char *v;          /* values (in memory) */
  bool file;        /* spilled: records (L int64, then W bytes) in path */
  char path[512];
} run;

struct spw {
  int L;
  size_t W;
  spc_vtype vt;
  spw_opts o;
  int64_t cap;      /* Acc capacity */
  int64_t n;        /* points in Acc */
  int64_t *c[MAXL]; /* Acc columns (stored transformed: ~x when descending) */
  char *v;
  int64_t *slot;    /* hash: slot -> entry + 1 (0: empty) */
  int64_t nslot;
  run *runs;
  int nruns, caprun;
  int64_t mem_runs; /* bytes of runs in memory */
  int64_t budget_runs;
  spw_stats st;
  int files_made;
  bool exact;       /* list + float sum: duplicates kept until the final
                       pack, so the sum runs left to right in arrival order */
  struct spw *next_live;
};

/* live workspaces, for spw_cleanup_files */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static spw *live;

void spw_cleanup_files(void) {
  for (spw *w = live; w; w = w->next_live)
    for (int i = 0; i < w->nruns; i++)
      if (w->runs[i].file) unlink(w->runs[i].path);
}

static int64_t rec_bytes(const spw *w) { return (int64_t)w->L * 8 + (int64_t)w->W; }

static int cmp_tuple(const spw *w, const int64_t *a, const int64_t *b) {
  for (int l = 0; l < w->L; l++)
    if (a[l] != b[l]) return a[l] < b[l] ? -1 : 1;
  return 0;
}

static spc_status dup_error(spc_error *e, const spw *w, const int64_t *x) {
  char b[256];
  int k = snprintf(b, sizeof b, "(");
  for (int l = 0; l < w->L && k < (int)sizeof b - 24; l++) {
    int64_t v = w->o.descending ? ~x[l] : x[l];
    k += snprintf(b + k, sizeof b - (size_t)k, "%s%lld", l ? ", " : "", (long long)v);
  }
  return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                 "duplicate entries at level coordinates %s) and --dup=error", b);
}

/* ---- cursors over runs ------------------------------------------------------- */

typedef struct cur {
  const spw *w;
  run *r;
  int64_t i;
  FILE *f;
  int64_t t[MAXL];
  char val[16];
  bool done;
} cur;

static spc_status cur_next(cur *c, spc_error *e) {
  const spw *w = c->w;
  if (c->i >= c->r->n) {
    c->done = true;
    return SPC_OK;
  }
  if (c->r->file) {
    if (fread(c->t, 8, (size_t)w->L, c->f) != (size_t)w->L ||
        (w->W && fread(c->val, 1, w->W, c->f) != w->W))
      return spc_err(e, SPC_ERR_IO, c->r->path, 0, 0, "cannot read a workspace run back");
  } else {
    for (int l = 0; l < w->L; l++) c->t[l] = c->r->c[l][c->i];
    if (w->W) memcpy(c->val, c->r->v + c->i * (int64_t)w->W, w->W);
  }
  c->i++;
  return SPC_OK;
}

static spc_status cur_open(cur *c, const spw *w, run *r, spc_error *e) {
  memset(c, 0, sizeof *c);
  c->w = w;
  c->r = r;
  if (r->file) {
    if (!(c->f = fopen(r->path, "rb")))
      return spc_err(e, SPC_ERR_IO, r->path, 0, 0, "cannot open a workspace run: %s", strerror(errno));
    setvbuf(c->f, NULL, _IOFBF, 1 << 16);
  }
  return cur_next(c, e);
}

static void cur_close(cur *c) {
  if (c->f) fclose(c->f);
  c->f = NULL;
}

/* ---- output of a merge: a run in memory or a file ---------------------------- */

typedef struct sink {
  spw *w;
  run *r;
  spw_chunk_fn cb; /* a chunk sink: r holds cap tuples, handed to cb when full */
  void *ctx;
  FILE *f;
  int64_t cap;
  bool combine;
  bool have_last;
  int64_t last[MAXL];
  char lastv[16];
} sink;

static spc_status sink_open(sink *s, spw *w, run *r, int64_t cap, bool file, spc_error *e) {
  memset(s, 0, sizeof *s);
  memset(r, 0, sizeof *r);
  s->w = w;
  s->r = r;
  s->cap = cap;
  s->combine = !w->exact;
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
    return SPC_OK;
  }
  for (int l = 0; l < w->L; l++)
    if (!(r->c[l] = spc_malloc_n(cap ? cap : 1, 8))) return SPC_NOMEM(e);
  if (w->W && !(r->v = spc_malloc_n(cap ? cap : 1, w->W))) return SPC_NOMEM(e);
  return SPC_OK;
}

static spc_status sink_chunk(sink *s, spc_error *e) {
  run *r = s->r;
  if (!r->n) return SPC_OK;
  if (s->w->o.descending)
    for (int l = 0; l < s->w->L; l++)
      for (int64_t i = 0; i < r->n; i++) r->c[l][i] = ~r->c[l][i];
  spc_status st = s->cb(s->ctx, r->n, r->c, r->v, e);
  r->n = 0;
  return st;
}

static spc_status sink_emit(sink *s, spc_error *e) {
  spw *w = s->w;
  run *r = s->r;
  if (r->file) {
    if (fwrite(s->last, 8, (size_t)w->L, s->f) != (size_t)w->L ||
        (w->W && fwrite(s->lastv, 1, w->W, s->f) != w->W))
      return spc_err(e, SPC_ERR_IO, r->path, 0, 0, "cannot write a workspace run (disk full?)");
    w->st.spilled_bytes += rec_bytes(w);
  } else {
    for (int l = 0; l < w->L; l++) r->c[l][r->n] = s->last[l];
    if (w->W) memcpy(r->v + r->n * (int64_t)w->W, s->lastv, w->W);
  }
  r->n++;
  if (s->cb && r->n == s->cap) return sink_chunk(s, e);
  return SPC_OK;
}

/* Next tuple in order: combined with the previous when equal. */
static spc_status sink_put(sink *s, const int64_t *t, const char *v, spc_error *e) {
  spw *w = s->w;
  if (s->have_last && s->combine && !cmp_tuple(w, s->last, t)) {
    if (w->o.dup == SPC_DUP_ERROR) return dup_error(e, w, t);
    if (w->W) spc_val_combine(w->vt, w->o.dup, s->lastv, v);
    return SPC_OK;
  }
  spc_status st = s->have_last ? sink_emit(s, e) : SPC_OK;
  memcpy(s->last, t, (size_t)w->L * 8);
  if (w->W) memcpy(s->lastv, v, w->W);
  s->have_last = true;
  return st;
}

static spc_status sink_close(sink *s, spc_error *e) {
  spc_status st = s->have_last ? sink_emit(s, e) : SPC_OK;
  if (!st && s->cb) st = sink_chunk(s, e);
  if (s->f && fclose(s->f) && !st)
    st = spc_err(e, SPC_ERR_IO, s->r->path, 0, 0, "cannot write a workspace run (disk full?)");
  s->f = NULL;
  return st;
}

static void run_free(run *r) {
  for (int l = 0; l < MAXL; l++) spc_free(r->c[l]);
  spc_free(r->v);
  if (r->file) unlink(r->path);
  memset(r, 0, sizeof *r);
}

static int64_t run_mem(const spw *w, const run *r) { return r->file ? 0 : r->n * rec_bytes(w); }

/* Merge runs [a, b) (chronological) into out; ties: the older run first.
 * final: the last merge, which always combines. */
static spc_status merge_to(spw *w, run *rs, int k, run *out, bool file, bool final,
                           spw_chunk_fn cb, void *ctx, int64_t chunk, spc_error *e) {
  cur *cs = spc_calloc((size_t)k ? (size_t)k : 1, sizeof *cs);
  sink s;
  int64_t total = 0;
  memset(&s, 0, sizeof s);
  memset(out, 0, sizeof *out);
  spc_status st = cs ? SPC_OK : SPC_NOMEM(e);
  for (int i = 0; i < k; i++) total += rs[i].n;
  if (cb && total > chunk) total = chunk;
  if (!st) st = sink_open(&s, w, out, total, file, e);
  s.cb = cb;
  s.ctx = ctx;
  if (!st && final) s.combine = true;
  for (int i = 0; i < k && !st; i++) st = cur_open(&cs[i], w, &rs[i], e);
  while (!st) {
    int best = -1;
    for (int i = 0; i < k; i++) /* k is small: a scan beats a heap */
      if (!cs[i].done && (best < 0 || cmp_tuple(w, cs[i].t, cs[best].t) < 0)) best = i;
    if (best < 0) break;
    st = sink_put(&s, cs[best].t, cs[best].val, e);
    if (!st) st = cur_next(&cs[best], e);
  }
  if (!st) st = sink_close(&s, e);
  else if (s.f) fclose(s.f), s.f = NULL;
  for (int i = 0; cs && i < k; i++) cur_close(&cs[i]);
  spc_free(cs);
  if (st || cb) run_free(out);
  else w->st.merges++;
  return st;
}

static spc_status merge(spw *w, run *rs, int k, run *out, bool file, bool final,
                        spc_error *e) {
  return merge_to(w, rs, k, out, file, final, NULL, NULL, 0, e);
}

/* Keep the runs geometric; spill the oldest in-memory runs past the budget. */
static spc_status balance(spw *w, spc_error *e) {
  spc_status st = SPC_OK;
  while (!st && w->nruns >= 2) {
    run *a = &w->runs[w->nruns - 2], *b = &w->runs[w->nruns - 1];
    if (2 * b->n < a->n) break;
    bool file = a->file || b->file || run_mem(w, a) + run_mem(w, b) > w->budget_runs;
    run m;
    w->mem_runs -= run_mem(w, a) + run_mem(w, b);
    st = merge(w, a, 2, &m, file, false, e);
    if (st) {
      w->mem_runs += run_mem(w, a) + run_mem(w, b);
      break;
    }
    run_free(a);
    run_free(b);
    *a = m;
    w->nruns--;
    w->mem_runs += run_mem(w, a);
    if (m.file) w->st.spilled_runs++;
  }
  for (int i = 0; !st && i < w->nruns && w->mem_runs > w->budget_runs; i++) {
    run *r = &w->runs[i];
    if (r->file) continue;
    run f;
    st = merge(w, r, 1, &f, true, false, e); /* copy to a file */
    if (st) break;
    w->mem_runs -= run_mem(w, r);
    run_free(r);
    *r = f;
    w->st.spilled_runs++;
  }
  if (w->mem_runs > w->st.peak_bytes) w->st.peak_bytes = w->mem_runs;
  return st;
}

/* ---- Acc --------------------------------------------------------------------- */

static uint64_t hash_tuple(const spw *w, const int64_t *t) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int l = 0; l < w->L; l++) {
    h ^= (uint64_t)t[l] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
  }
  return h ^ (h >> 33);
}

/* Sort Acc, combine, push as a run. */
static spc_status flush(spw *w, spc_error *e) {
  run r;
  memset(&r, 0, sizeof r);
  if (!w->n) return SPC_OK;
  int64_t n = w->n, *perm = spc_malloc_n(n, 8), *scr = spc_malloc_n(n, 8);
  spc_status st = perm && scr ? SPC_OK : SPC_NOMEM(e);
  if (!st) {
    spc_rt_key key[MAXL];
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int l = 0; l < w->L; l++) key[l] = (spc_rt_key){w->c[l], SPC_RT_I64};
    spc_sort_perm_i64(perm, n, key, w->L, scr);
  }
  sink s;
  memset(&s, 0, sizeof s);
  if (!st) st = sink_open(&s, w, &r, n, false, e);
  for (int64_t i = 0; i < n && !st; i++) {
    int64_t t[MAXL];
    for (int l = 0; l < w->L; l++) t[l] = w->c[l][perm[i]];
    st = sink_put(&s, t, w->W ? w->v + perm[i] * (int64_t)w->W : NULL, e);
  }
  if (!st) st = sink_close(&s, e);
  spc_free(perm);
  spc_free(scr);
  if (st) {
    run_free(&r);
    return st;
  }
  if (w->nruns == w->caprun) {
    int nc = w->caprun ? 2 * w->caprun : 16;
    run *p = spc_realloc(w->runs, (size_t)nc * sizeof *p);
    if (!p) {
      run_free(&r);
      return SPC_NOMEM(e);
    }
    w->runs = p;
    w->caprun = nc;
  }
  w->runs[w->nruns++] = r;
  w->mem_runs += run_mem(w, &r);
  w->n = 0;
  if (w->slot) memset(w->slot, 0, (size_t)w->nslot * sizeof *w->slot);
  w->st.flushes++;
  return balance(w, e);
}

static spc_status insert(spw *w, const int64_t *t, const char *v, spc_error *e) {
  spc_status st;
  if (w->o.kind == SPW_HASH) {
    uint64_t h = hash_tuple(w, t) & (uint64_t)(w->nslot - 1);
    for (;;) {
      int64_t k = w->slot[h];
      if (!k) break;
      bool eq = true;
      for (int l = 0; l < w->L && eq; l++) eq = w->c[l][k - 1] == t[l];
      if (eq) {
        if (w->o.dup == SPC_DUP_ERROR) return dup_error(e, w, t);
        if (w->W) spc_val_combine(w->vt, w->o.dup, w->v + (k - 1) * (int64_t)w->W, v);
        return SPC_OK;
      }
      h = (h + 1) & (uint64_t)(w->nslot - 1);
    }
    if (w->n == w->cap) {
      if ((st = flush(w, e))) return st;
      return insert(w, t, v, e);
    }
    w->slot[h] = w->n + 1;
  } else if (w->n == w->cap && (st = flush(w, e))) {
    return st;
  }
  for (int l = 0; l < w->L; l++) w->c[l][w->n] = t[l];
  if (w->W) memcpy(w->v + w->n * (int64_t)w->W, v, w->W);
  w->n++;
  return SPC_OK;
}

/* ---- the interface -------------------------------------------------------------- */

spc_status spw_create(int L, spc_vtype vt, const spw_opts *o, spw **out,
                      spc_error *e) {
  *out = NULL;
  if (L < 1 || L > MAXL) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "workspace: %d levels", L);
  spw *w = spc_calloc(1, sizeof *w);
  if (!w) return SPC_NOMEM(e);
  w->L = L;
  w->vt = vt;
  w->W = spc_vtype_size(vt);
  if (o) w->o = *o;
  w->exact = w->o.kind == SPW_LIST && w->o.dup == SPC_DUP_SUM &&
             (vt == SPC_F32 || vt == SPC_F64 || vt == SPC_C128);
  int64_t mem = w->o.mem;
  if (mem <= 0) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    mem = pages > 0 && psz > 0 ? (int64_t)pages / 4 * psz : ((int64_t)1 << 30);
  }
  int64_t per = rec_bytes(w) + (w->o.kind == SPW_HASH ? 16 : 0);
  w->cap = w->o.acc > 0 ? w->o.acc : mem / 2 / per;
  if (w->cap < 1) w->cap = 1;
  if (!w->o.acc && w->cap > SPW_DEFAULT_ACC) w->cap = SPW_DEFAULT_ACC; /* cache-sized flushes */
  w->budget_runs = mem - w->cap * per;
  if (w->budget_runs < 0) w->budget_runs = 0;
  spc_status st = SPC_OK;
  for (int l = 0; l < L && !st; l++)
    if (!(w->c[l] = spc_malloc_n(w->cap, 8))) st = SPC_NOMEM(e);
  if (!st && w->W && !(w->v = spc_malloc_n(w->cap, w->W))) st = SPC_NOMEM(e);
  if (!st && w->o.kind == SPW_HASH) {
    w->nslot = 2;
    while (w->nslot < 2 * w->cap) w->nslot *= 2;
    if (!(w->slot = spc_calloc((size_t)w->nslot, sizeof *w->slot))) st = SPC_NOMEM(e);
  }
  if (st) {
    spw_free(&w);
    return st;
  }
  pthread_mutex_lock(&live_mu);
  w->next_live = live;
  live = w;
  pthread_mutex_unlock(&live_mu);
  *out = w;
  return SPC_OK;
}

void spw_free(spw **wp) {
  if (!wp || !*wp) return;
  spw *w = *wp;
  pthread_mutex_lock(&live_mu);
  for (spw **p = &live; *p; p = &(*p)->next_live)
    if (*p == w) {
      *p = w->next_live;
      break;
    }
  pthread_mutex_unlock(&live_mu);
  for (int i = 0; i < w->nruns; i++) run_free(&w->runs[i]);
  spc_free(w->runs);
  for (int l = 0; l < MAXL; l++) spc_free(w->c[l]);
  spc_free(w->v);
  spc_free(w->slot);
  spc_free(w);
  *wp = NULL;
}

spc_status spw_push(spw *w, int64_t n, const int64_t *const *cols,
                    const void *vals, spc_error *e) {
  static const char zero[16];
  for (int64_t i = 0; i < n; i++) {
    int64_t t[MAXL];
    for (int l = 0; l < w->L; l++) t[l] = w->o.descending ? ~cols[l][i] : cols[l][i];
    const char *v = w->W ? (vals ? (const char *)vals + i * (int64_t)w->W : zero) : NULL;
    spc_status st = insert(w, t, v, e);
    if (st) return st;
  }
  return SPC_OK;
}

spc_status spw_pack(spw *w, int64_t *n, int64_t **cols, void **vals,
                    spc_error *e) {
  spc_status st = flush(w, e);
  run out;
  *n = 0;
  *vals = NULL;
  for (int l = 0; l < w->L; l++) cols[l] = NULL;
  memset(&out, 0, sizeof out);
  if (!st && w->nruns == 1 && !w->runs[0].file && !w->exact) {
    out = w->runs[0];
    w->nruns = 0;
  } else if (!st) {
    st = merge(w, w->runs, w->nruns, &out, false, true, e);
  }
  for (int i = 0; i < w->nruns; i++) run_free(&w->runs[i]);
  w->nruns = 0;
  w->mem_runs = 0;
  if (st) return st;
  for (int l = 0; l < w->L; l++) {
    cols[l] = out.c[l] ? out.c[l] : spc_calloc(1, 8);
    out.c[l] = NULL;
    if (!cols[l]) st = SPC_NOMEM(e);
    if (w->o.descending)
      for (int64_t i = 0; cols[l] && i < out.n; i++) cols[l][i] = ~cols[l][i];
  }
  *vals = out.v;
  out.v = NULL;
  *n = out.n;
  run_free(&out);
  if (st) {
    for (int l = 0; l < w->L; l++) spc_free(cols[l]), cols[l] = NULL;
    spc_free(*vals);
    *vals = NULL;
  }
  return st;
}

spc_status spw_stream(spw *w, int64_t chunk, spw_chunk_fn cb, void *ctx, spc_error *e) {
  spc_status st = flush(w, e);
  run out;
  if (chunk < 1) chunk = 1;
  if (!st) st = merge_to(w, w->runs, w->nruns, &out, false, true, cb, ctx, chunk, e);
  return st;
}

void spw_get_stats(const spw *w, spw_stats *s) { *s = w->st; }
