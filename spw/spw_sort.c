/* spw_sort.c -- the flush's sort: Acc's points become one sorted run,
 * duplicates combined in arrival order (in an exact workspace only in the
 * first run, the only one whose sums are serial prefix sums).
 *
 * Where every level's range (max - min, found in one pass) fits with the
 * point's index in 64 bits, each point becomes key << ib | index (key:
 * the packed tuple, spw_impl.h), an LSD radix sort orders the key bits
 * (the index bits start in order, so ties keep arrival order), and one
 * pass unpacks the coordinates, gathers the values and combines equal
 * keys.  Otherwise a stable sort of positions by the columns
 * (spc_sort_perm_i64) and a gather comparing tuples. */
#include "spw_impl.h"
#include "ir_rt.h"

void spw_packing_of(spw_packing *p, int L, const int64_t *lo, const int64_t *hi) {
  int bits[MAXL], total = 0;
  p->L = L;
  for (int l = 0; l < L; l++) {
    uint64_t range = (uint64_t)hi[l] - (uint64_t)lo[l];
    bits[l] = range ? 64 - __builtin_clzll(range) : 0;
    total += bits[l];
    p->lo[l] = lo[l];
  }
  p->ok = total <= 64;
  p->bits = total;
  for (int l = L - 1, sh = 0; l >= 0 && p->ok; l--) {
    p->sh[l] = bits[l] ? sh : 0;
    p->mask[l] = bits[l] == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits[l]) - 1;
    sh += bits[l];
  }
}

/* Stable LSD radix sort of a[0..n) by bits [b0, b0 + nb); t: n scratch,
 * cnt: 6 x 2048 counters.  Returns a or t, whichever holds the result. */
static uint64_t *radix(uint64_t *a, uint64_t *t, int64_t n, int b0, int nb, int64_t *cnt) {
  int maxd = n < 4096 ? 8 : 11;
  int passes = (nb + maxd - 1) / maxd, d = passes ? (nb + passes - 1) / passes : 0;
  int64_t nd = (int64_t)1 << d;
  uint64_t m = (uint64_t)nd - 1;
  memset(cnt, 0, (size_t)(passes * nd) * sizeof *cnt);
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = a[i] >> b0;
    for (int p = 0; p < passes; p++) cnt[p * nd + (int64_t)((x >> (p * d)) & m)]++;
  }
  for (int p = 0; p < passes; p++) {
    int64_t *c = cnt + p * nd, s = 0;
    int sh = b0 + p * d;
    if (c[(a[0] >> sh) & m] == n) continue; /* one digit everywhere */
    for (int64_t j = 0; j < nd; j++) {
      int64_t x = c[j];
      c[j] = s;
      s += x;
    }
    for (int64_t i = 0; i < n; i++) t[c[(a[i] >> sh) & m]++] = a[i];
    uint64_t *x = a;
    a = t;
    t = x;
  }
  return a;
}

/* The packed path: sk holds n scratch keys, tmp n more. */
static spc_status sort_packed(spw *w, run *r, const spw_packing *pk, int ib, uint64_t *sk,
                              uint64_t *tmp, int64_t *cnt, spc_error *e) {
  const int64_t n = w->n;
  const int L = w->L;
  const size_t W = w->W;
  const bool combine = !w->exact || !w->nruns; /* exact: the first run only */
  const uint64_t im = ib ? ((uint64_t)1 << ib) - 1 : 0;
  for (int64_t i = 0; i < n; i++) sk[i] = spw_key(pk, w->c, i) << ib | (uint64_t)i;
  uint64_t *a = radix(sk, tmp, n, ib, pk->bits, cnt);
  int64_t m = 0;
  uint64_t last = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i] >> ib;
    int64_t p = (int64_t)(a[i] & im);
    if (i + 16 < n) __builtin_prefetch(w->v + (int64_t)(a[i + 16] & im) * (int64_t)W);
    if (m && combine && k == last) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < L; l++) t[l] = w->c[l][p];
        return spw_dup_error(e, w, t);
      }
      spw_val_combine(w, r->v + (m - 1) * (int64_t)W, w->v + p * (int64_t)W);
      continue;
    }
    for (int l = 0; l < L; l++) r->c[l][m] = spw_unkey(pk, l, k);
    spw_val_copy(r->v + m * (int64_t)W, w->v + p * (int64_t)W, W);
    last = k;
    m++;
  }
  r->n = m;
  return SPC_OK;
}

/* The general path: a stable sort of positions by the columns. */
static spc_status sort_tuples(spw *w, run *r, int64_t *perm, int64_t *scr, spc_error *e) {
  const int64_t n = w->n;
  const int L = w->L;
  const size_t W = w->W;
  const bool combine = !w->exact || !w->nruns; /* exact: the first run only */
  spc_rt_key key[MAXL];
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int l = 0; l < L; l++) key[l] = (spc_rt_key){w->c[l], SPC_RT_I64};
  spc_sort_perm_i64(perm, n, key, L, scr);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t p = perm[i];
    bool same = m && combine;
    for (int l = 0; l < L && same; l++) same = w->c[l][p] == r->c[l][m - 1];
    if (same) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < L; l++) t[l] = w->c[l][p];
        return spw_dup_error(e, w, t);
      }
      spw_val_combine(w, r->v + (m - 1) * (int64_t)W, w->v + p * (int64_t)W);
      continue;
    }
    for (int l = 0; l < L; l++) r->c[l][m] = w->c[l][p];
    spw_val_copy(r->v + m * (int64_t)W, w->v + p * (int64_t)W, W);
    m++;
  }
  r->n = m;
  return SPC_OK;
}

/* Acc's w->n > 0 points, sorted and combined, into r (a run in memory,
 * filled here; freed by the caller on failure). */
spc_status spw_sort_acc(spw *w, run *r, spc_error *e) {
  const int64_t n = w->n;
  const int L = w->L;
  memset(r, 0, sizeof *r);
  for (int l = 0; l < L; l++) {
    const int64_t *c = w->c[l];
    int64_t lo = c[0], hi = c[0];
    for (int64_t i = 1; i < n; i++) {
      lo = c[i] < lo ? c[i] : lo;
      hi = c[i] > hi ? c[i] : hi;
    }
    r->lo[l] = lo;
    r->hi[l] = hi;
  }
  spw_packing pk;
  spw_packing_of(&pk, L, r->lo, r->hi);
  int ib = n > 1 ? 64 - __builtin_clzll((uint64_t)(n - 1)) : 0;
  bool fast = pk.ok && pk.bits + ib <= 64;
  if (!w->sk) w->sk = spc_malloc_n(w->cap, 8);
  if (!w->tmp) w->tmp = spc_malloc_n(w->cap, 8);
  if (fast && !w->cnt) w->cnt = spc_malloc_n(6 * 2048, 8);
  spc_status st = w->sk && w->tmp && (w->cnt || !fast) ? SPC_OK : SPC_NOMEM(e);
  for (int l = 0; l < L && !st; l++)
    if (!(r->c[l] = spc_malloc_n(n, 8))) st = SPC_NOMEM(e);
  if (!st && w->W && !(r->v = spc_malloc_n(n, w->W))) st = SPC_NOMEM(e);
  if (!st)
    st = fast ? sort_packed(w, r, &pk, ib, w->sk, w->tmp, w->cnt, e)
              : sort_tuples(w, r, (int64_t *)w->sk, (int64_t *)w->tmp, e);
  return st;
}
