/* spw.c -- the sparse workspace: Acc (hash or list), sorted runs merged
 * geometrically, spill to temporary files, k-way pack.  See spw.h. */
#include "spw_impl.h"
#include "spc_io.h" /* spc_io_cleanup_outputs */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* live workspaces, for spw_cleanup_files */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static spw *live;

void spc_cleanup_temp_files(void) {
  spc_io_cleanup_outputs();
  spw_cleanup_files();
}

void spw_cleanup_files(void) {
  for (spw *w = live; w; w = w->next_live)
  {
    for (int i = 0; i < w->nruns; i++)
      if (w->runs[i].file) unlink(w->runs[i].path);
    if (w->writing_on) unlink(w->writing);
  }
}

spc_status spw_dup_error(spc_error *e, const spw *w, const int64_t *x) {
  char b[256];
  int k = snprintf(b, sizeof b, "(");
  for (int l = 0; l < w->L && k < (int)sizeof b - 24; l++) {
    int64_t v = w->o.descending ? ~x[l] : x[l];
    k += snprintf(b + k, sizeof b - (size_t)k, "%s%lld", l ? ", " : "", (long long)v);
  }
  return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                 "duplicate entries at level coordinates %s) and --dup=error", b);
}

void spw_run_free(run *r) {
  for (int l = 0; l < MAXL; l++) spc_free(r->c[l]);
  spc_free(r->v);
  if (r->file) unlink(r->path);
  memset(r, 0, sizeof *r);
}

static int64_t run_mem(const spw *w, const run *r) { return r->file ? 0 : r->n * spw_rec_bytes(w); }

static spc_status merge(spw *w, run *rs, int k, run *out, bool file, bool final,
                        spc_error *e) {
  return spw_merge(w, rs, k, out, file, final, NULL, NULL, 0, e);
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
    st = file ? SPC_NOT_HANDLED : spw_merge2_mem(w, a, b, false, e);
    if (st == SPC_NOT_HANDLED) {
      st = merge(w, a, 2, &m, file, false, e);
      if (!st) {
        spw_run_free(a);
        spw_run_free(b);
        *a = m;
        w->writing_on = 0; /* among runs now */
      }
    }
    if (st) {
      w->mem_runs += run_mem(w, a) + run_mem(w, b);
      break;
    }
    w->nruns--;
    w->mem_runs += run_mem(w, a);
    if (file) w->st.spilled_runs++;
  }
  for (int i = 0; !st && i < w->nruns && w->mem_runs > w->budget_runs; i++) {
    run *r = &w->runs[i];
    if (r->file) continue;
    run f;
    st = merge(w, r, 1, &f, true, false, e); /* copy to a file */
    if (st) break;
    w->mem_runs -= run_mem(w, r);
    spw_run_free(r);
    *r = f;
    w->writing_on = 0; /* among runs now */
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

static void spw_drop_scratch(spw *w) {
  spc_free(w->sk);
  spc_free(w->tmp);
  spc_free(w->cnt);
  w->sk = w->tmp = NULL;
  w->cnt = NULL;
}

/* Empty the hash: re-probe each entry's slot when few are used, else
 * clear the whole table (a slot is found by probing past emptied ones). */
static void hash_clear(spw *w) {
  const uint64_t m = (uint64_t)(w->nslot - 1);
  if (w->n * 8 >= w->nslot) {
    memset(w->slot, 0, (size_t)w->nslot * sizeof *w->slot);
    return;
  }
  for (int64_t k = 0; k < w->n; k++) {
    int64_t t[MAXL];
    for (int l = 0; l < w->L; l++) t[l] = w->c[l][k];
    uint64_t h = hash_tuple(w, t) & m;
    while (w->slot[h] != k + 1) h = (h + 1) & m;
    w->slot[h] = 0;
  }
}

/* Acc held as a hash (entries in the slots) rather than appended: every
 * fill but the exact workspace's after its first run (see push_hash). */
static bool acc_hashed(const spw *w) { return w->slot && !(w->exact && w->nruns > 0); }

/* r (in memory) the newest run; freed on failure. */
static spc_status add_run(spw *w, run *r, spc_status st, spc_error *e) {
  if (!st && w->nruns == w->caprun) {
    int nc = w->caprun ? 2 * w->caprun : 16;
    run *p = spc_realloc(w->runs, (size_t)nc * sizeof *p);
    if (p) {
      w->runs = p;
      w->caprun = nc;
    } else {
      st = SPC_NOMEM(e);
    }
  }
  if (st) {
    spw_run_free(r);
    return st;
  }
  w->runs[w->nruns++] = *r;
  w->mem_runs += run_mem(w, r);
  return SPC_OK;
}

/* Sort Acc, combine, push as a run. */
static spc_status flush(spw *w, spc_error *e) {
  run r;
  if (!w->n) return SPC_OK;
  const bool hashed = acc_hashed(w);
  spc_status st = add_run(w, &r, spw_sort_acc(w, &r, e), e);
  if (st) return st;
  if (hashed) hash_clear(w);
  w->n = 0;
  w->st.flushes++;
  return balance(w, e);
}

static spc_status push_list(spw *w, int64_t n, const int64_t *const *cols, const char *vals,
                            spc_error *e);

/* The hash: combine with an equal tuple in Acc, or add one (flushing a
 * full Acc first).  An exact workspace (float sums) combines on insert
 * only while no run exists (its sums are then the serial prefix sums of
 * the first run); once a run exists it appends, as the list does, so
 * duplicates stay apart, in arrival order, until a merge with the oldest
 * run or the pack adds them left to right. */
static spc_status push_hash(spw *w, int64_t n, const int64_t *const *cols, const char *vals,
                            spc_error *e) {
  static const char zero[16];
  if (!acc_hashed(w)) return push_list(w, n, cols, vals, e);
  const int L = w->L;
  const size_t W = w->W;
  const uint64_t m = (uint64_t)(w->nslot - 1);
  /* hashes of the next AHEAD points in a ring; their slots prefetched
   * AHEAD points ahead, the entries those slots hold AHEAD / 2 ahead */
  enum { AHEAD = 16, RING = 2 * AHEAD };
  uint64_t ring[RING];
  int64_t t[MAXL];
  for (int64_t i = 0; i < n + AHEAD; i++) {
    if (i < n) {
      for (int l = 0; l < L; l++) t[l] = w->o.descending ? ~cols[l][i] : cols[l][i];
      ring[i % RING] = hash_tuple(w, t) & m;
      __builtin_prefetch(&w->slot[ring[i % RING]]);
    }
    int64_t j = i - AHEAD / 2, q = i - AHEAD;
    if (j >= 0 && j < n) {
      int64_t k = w->slot[ring[j % RING]];
      if (k) {
        for (int l = 0; l < L; l++) __builtin_prefetch(&w->c[l][k - 1]);
        if (W) __builtin_prefetch(w->v + (k - 1) * (int64_t)W);
      }
    }
    if (q < 0) continue;
    for (int l = 0; l < L; l++) t[l] = w->o.descending ? ~cols[l][q] : cols[l][q];
    const char *v = vals ? vals + q * (int64_t)W : zero;
    uint64_t h;
  probe:
    h = ring[q % RING];
    for (int64_t k; (k = w->slot[h]); h = (h + 1) & m) {
      bool eq = true;
      for (int l = 0; l < L && eq; l++) eq = w->c[l][k - 1] == t[l];
      if (eq) {
        if (w->o.dup == SPC_DUP_ERROR) return spw_dup_error(e, w, t);
        spw_val_combine(w, w->v + (k - 1) * (int64_t)W, v);
        goto next;
      }
    }
    if (w->n == w->cap) {
      spc_status st = flush(w, e);
      if (st) return st;
      if (!acc_hashed(w)) { /* exact: the rest appended */
        const int64_t *rest[MAXL];
        for (int l = 0; l < L; l++) rest[l] = cols[l] + q;
        return push_list(w, n - q, rest, vals ? vals + q * (int64_t)W : NULL, e);
      }
      goto probe;
    }
    w->slot[h] = w->n + 1;
    for (int l = 0; l < L; l++) w->c[l][w->n] = t[l];
    spw_val_copy(w->v + w->n * (int64_t)W, v, W);
    w->n++;
  next:;
  }
  return SPC_OK;
}

/* Acc's arrays resized to cap points (w->n <= cap); the flush's scratch,
 * sized to the old capacity, dropped. */
static spc_status acc_resize(spw *w, int64_t cap, spc_error *e) {
  for (int l = 0; l < w->L; l++) {
    int64_t *p = spc_realloc(w->c[l], (size_t)cap * 8);
    if (!p) return SPC_NOMEM(e);
    w->c[l] = p;
  }
  if (w->W) {
    char *p = spc_realloc(w->v, (size_t)cap * w->W);
    if (!p) return SPC_NOMEM(e);
    w->v = p;
  }
  spw_drop_scratch(w);
  w->cap = cap;
  return SPC_OK;
}

/* Bytes a bucket workspace's Acc of cap points takes with its flush. */
static int64_t bucket_bytes(const spw *w, int64_t cap) {
  int64_t b;
  return __builtin_mul_overflow(cap, (int64_t)SPW_BUCKET_PER(spw_rec_bytes(w)), &b) ? INT64_MAX : b;
}

/* A full Acc of a bucket workspace: grown (twice, or up to the budget)
 * while no run exists and the budget allows; SPC_NOT_HANDLED when it
 * cannot grow: the workspace goes on as the list (budget_runs set for
 * the list's Acc, which the flush's caller restores). */
static spc_status acc_grow(spw *w, spc_error *e) {
  if (w->o.kind != SPW_BUCKET || w->o.acc > 0 || w->abandoned || w->nruns)
    return SPC_NOT_HANDLED;
  int64_t want = w->cap > INT64_MAX / 4 ? INT64_MAX / 2 : 2 * w->cap;
  if (bucket_bytes(w, want) > w->mem) want = w->mem / SPW_BUCKET_PER(spw_rec_bytes(w));
  if (want > w->cap) return acc_resize(w, want, e);
  w->abandoned = true;
  w->budget_runs = w->mem - w->cap_list * spw_rec_bytes(w);
  if (w->budget_runs < 0) w->budget_runs = 0;
  return SPC_NOT_HANDLED;
}

/* The list: append blocks, flushing a full Acc before the next point (a
 * bucket workspace grows it while it may; once it cannot, its Acc goes
 * back to the list's capacity after the flush). */
static spc_status push_list(spw *w, int64_t n, const int64_t *const *cols, const char *vals,
                            spc_error *e) {
  const size_t W = w->W;
  for (int64_t i = 0; i < n;) {
    if (w->n == w->cap) {
      spc_status st = acc_grow(w, e);
      if (st == SPC_NOT_HANDLED) {
        st = flush(w, e);
        if (!st && w->cap > w->cap_list) st = acc_resize(w, w->cap_list, e);
      }
      if (st) return st;
    }
    int64_t m = w->cap - w->n < n - i ? w->cap - w->n : n - i;
    for (int l = 0; l < w->L; l++) {
      int64_t *d = w->c[l] + w->n;
      const int64_t *s = cols[l] + i;
      if (w->o.descending)
        for (int64_t j = 0; j < m; j++) d[j] = ~s[j];
      else
        memcpy(d, s, (size_t)m * 8);
    }
    if (W && vals) memcpy(w->v + w->n * (int64_t)W, vals + i * (int64_t)W, (size_t)m * W);
    else if (W) memset(w->v + w->n * (int64_t)W, 0, (size_t)m * W);
    w->n += m;
    i += m;
  }
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
  w->exact = w->o.dup == SPC_DUP_SUM &&
             (vt == SPC_F32 || vt == SPC_F64 || vt == SPC_C128);
  int64_t mem = w->o.mem;
  if (mem <= 0) {
    int64_t phys = spc_phys_bytes();
    mem = phys > 0 ? phys / 4 : ((int64_t)1 << 30);
  }
  int64_t per = spw_rec_bytes(w) + (w->o.kind == SPW_HASH ? 16 : 0);
  w->mem = mem;
  w->cap = w->o.acc > 0 ? w->o.acc : mem / 2 / per;
  if (w->cap < 1) w->cap = 1;
  if (!w->o.acc && w->cap > SPW_DEFAULT_ACC) w->cap = SPW_DEFAULT_ACC; /* cache-sized flushes */
  w->cap_list = w->cap;
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
  for (int i = 0; i < w->nruns; i++) spw_run_free(&w->runs[i]);
  spc_free(w->runs);
  for (int l = 0; l < MAXL; l++) spc_free(w->c[l]);
  spc_free(w->v);
  spc_free(w->slot);
  spw_drop_scratch(w);
  spc_free(w);
  *wp = NULL;
}

/* The statistics cover one filling: from the first push (or pack, or
 * stream) after a pack, or after spw_create, up to the end of the next
 * pack; they are reset here when a pack has ended the previous one. */
static void fill_begins(spw *w) {
  if (!w->packed) return;
  if (w->abandoned) { /* a bucket workspace may grow again */
    w->abandoned = false;
    w->budget_runs = w->mem - w->cap * spw_rec_bytes(w);
    if (w->budget_runs < 0) w->budget_runs = 0;
  }
  memset(&w->st, 0, sizeof w->st);
  w->packed = false;
}

spc_status spw_push(spw *w, int64_t n, const int64_t *const *cols,
                    const void *vals, spc_error *e) {
  fill_begins(w);
  return w->o.kind == SPW_HASH ? push_hash(w, n, cols, vals, e) : push_list(w, n, cols, vals, e);
}

spc_status spw_pack(spw *w, int64_t *n, int64_t **cols, void **vals,
                    spc_error *e) {
  fill_begins(w);
  spc_status st = flush(w, e);
  spw_drop_scratch(w);
  w->packed = true;
  run out;
  *n = 0;
  *vals = NULL;
  for (int l = 0; l < w->L; l++) cols[l] = NULL;
  memset(&out, 0, sizeof out);
  if (!st && w->nruns == 1 && !w->runs[0].file) { /* the oldest run is combined */
    out = w->runs[0];
    w->nruns = 0;
  } else if (!st) {
    /* in memory: the newest two folded together (not combined) down to
     * two runs, then one merge of the two (the ties' order and every
     * combine as a k-way merge gives them) */
    bool mem = true;
    for (int i = 0; i < w->nruns; i++) mem = mem && !w->runs[i].file;
    st = mem && w->nruns >= 2 ? SPC_OK : SPC_NOT_HANDLED;
    while (!st && w->nruns > 2) {
      st = spw_merge2_mem(w, &w->runs[w->nruns - 2], &w->runs[w->nruns - 1], true, e);
      if (!st) w->nruns--;
    }
    if (!st) st = spw_merge2_new(w, &w->runs[0], &w->runs[1], &out, e);
    if (st == SPC_NOT_HANDLED) st = merge(w, w->runs, w->nruns, &out, false, true, e);
  }
  for (int i = 0; i < w->nruns; i++) spw_run_free(&w->runs[i]);
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
  spw_run_free(&out);
  if (st) {
    for (int l = 0; l < w->L; l++) spc_free(cols[l]), cols[l] = NULL;
    spc_free(*vals);
    *vals = NULL;
  }
  return st;
}

spc_status spw_bucket_pack(spw *w, int64_t n, const int64_t *const *cols, const void *vals,
                           bool take, int64_t *nout, int64_t **out, void **vout, spc_error *e) {
  fill_begins(w);
  if (w->o.kind != SPW_BUCKET || w->o.acc || w->o.descending || w->n || w->nruns || n < 1 ||
      (!vals && w->W) || bucket_bytes(w, n) > w->mem)
    return SPC_NOT_HANDLED;
  spw_pts P = {.n = n, .v = vals, .take = take};
  for (int l = 0; l < w->L; l++) P.c[l] = cols[l];
  run r;
  spc_status st = spw_sort_cols(w, &P, &r, e);
  if (st == SPC_NOT_HANDLED) return st;
  if (!(st = add_run(w, &r, st, e))) {
    w->st.flushes++;
    st = balance(w, e);
  }
  return st ? st : spw_pack(w, nout, out, vout, e);
}

spc_status spw_push_pack(spw *w, int64_t n, const int64_t *const *cols, const void *vals,
                         bool take, int64_t *nout, int64_t **out, void **vout, spc_error *e) {
  spc_status st = spw_bucket_pack(w, n, cols, vals, take, nout, out, vout, e);
  if (st != SPC_NOT_HANDLED) return st;
  st = spw_push(w, n, cols, vals, e);
  for (int l = 0; take && l < w->L; l++) spc_free((void *)(uintptr_t)cols[l]); /* copied */
  return st ? st : spw_pack(w, nout, out, vout, e);
}

spc_status spw_settle(spw *w, spc_error *e) {
  fill_begins(w);
  spc_status st = flush(w, e);
  spw_drop_scratch(w);
  /* a bucket Acc grown past the list's capacity is not needed to stream:
   * back to that capacity (a later push grows it again, as after a flush) */
  if (!st && !w->n && w->o.kind != SPW_HASH && w->cap > w->cap_list)
    st = acc_resize(w, w->cap_list, e);
  return st;
}

int64_t spw_mem_held(const spw *w) {
  int64_t b = w->mem_runs + w->cap * spw_rec_bytes(w);
  return b + (w->slot ? w->nslot * (int64_t)sizeof *w->slot : 0);
}

spc_status spw_stream(spw *w, int64_t chunk, spw_chunk_fn cb, void *ctx, spc_error *e) {
  spc_status st = spw_settle(w, e);
  run out;
  if (chunk < 1) chunk = 1;
  if (!st) st = spw_merge(w, w->runs, w->nruns, &out, false, true, cb, ctx, chunk, e);
  return st;
}

void spw_get_stats(const spw *w, spw_stats *s) { *s = w->st; }
