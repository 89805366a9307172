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
#ifdef _OPENMP
#include <omp.h>
#endif

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

/* ---- bucket then sort segments (SPW_BUCKET) -------------------------------------
 * Counting by level 0 (stored form, offset x from lo[0]) with one scatter
 * straight into x's segment misses the cache once a point on large
 * inputs; so in two stable steps, each cache-friendly:
 *   1. the points' packed keys (spw_key's: x in the top bits, then the
 *      inner levels) and values scattered by the group g = x >> s1 (at
 *      most 2^BUCKET_GBITS groups: as many write streams as an LSD radix
 *      pass), after a count of each group -- into the run's own arrays
 *      (no scratch of n records: a group's output never passes its end,
 *      and a group is read whole before its output is written).  Where a
 *      key below its group's bits fits 32 bits (K32) and values are 8
 *      bytes, as 12-byte records (that key, the value: one write stream a
 *      group) in r->v, allocated 12 bytes a point; else keys in r->c[0]
 *      (K32: its upper half) and values in r->v.  Where the caller gave
 *      its columns (P->take), they become the run's (no fresh pages for
 *      them) and keys not in records go to a scratch of n keys;
 *   2. per group, in cache: a count of its 2^s1 offsets, a stable scatter
 *      of its keys and values as records into x's segments (a buffer of
 *      the largest group), then per segment a stable sort by key --
 *      insertion sort up to BUCKET_SHORT points, else the LSD radix of
 *      inner key << sb | position in the segment (ties keep arrival
 *      order) -- and one pass writing the tuples into the run, equal keys
 *      combined in arrival order. */

enum { BUCKET_SHORT = 32, BUCKET_GBITS = 9 };

/* Record bytes for values of W bytes (W <= 16): the key, the value
 * padded to 8 or 16. */
#define BUCKET_REC(W) ((size_t)8 + ((W) <= 8 ? 8 : 16))

static inline uint64_t rec_key(const char *p) {
  uint64_t k;
  memcpy(&k, p, 8);
  return k;
}

/* Stable insertion sort of n records of S bytes by key. */
static inline __attribute__((always_inline)) void isort_rec(char *a, int64_t n, const size_t S) {
  for (int64_t i = 1; i < n; i++) {
    const uint64_t x = rec_key(a + i * (int64_t)S);
    if (rec_key(a + (i - 1) * (int64_t)S) <= x) continue;
    char t[24];
    memcpy(t, a + i * (int64_t)S, S);
    int64_t j = i;
    for (; j > 0 && rec_key(a + (j - 1) * (int64_t)S) > x; j--)
      memcpy(a + j * (int64_t)S, a + (j - 1) * (int64_t)S, S);
    memcpy(a + j * (int64_t)S, t, S);
  }
}

typedef struct bucket_ctx {
  const spw_pts *P;
  const spw_packing *pk;
  int s1, ng;    /* offsets per group 2^s1; groups */
  int64_t *gpos; /* ng + 1: group starts (step 1's cursors), then ends */
  void *keys;    /* step 1's keys: n of 32 or 64 bits */
  int innerbits;
} bucket_ctx;

/* A thread's scratch for step 2. */
typedef struct bucket_scr {
  int64_t *pos;      /* 2^s1 + 1: a group's segment starts */
  char *buf;         /* the largest group's records */
  uint64_t *ka, *kb; /* the longest segment's keys, twice */
  char *rs;          /* the longest segment's records */
  int64_t *cnt;      /* radix counters */
} bucket_scr;

/* The sorted records q[0..len) (keys of one group, the first a new tuple)
 * into oc[l][*mp..] and rv (values, W bytes at m), equal keys combined
 * (combine) in their order.  Float64 sums without a branch on "equal":
 * the sum or the value goes to m - 1 or m, m moves by one where the key
 * is new. */
static inline __attribute__((always_inline)) spc_status
emit_recs(spw *w, int64_t *const *oc, char *rv, const spw_packing *pk, const char *q, int64_t len,
          int64_t *mp, const int L, const size_t W, const bool combine, spc_error *e) {
  const size_t S = BUCKET_REC(W);
  int64_t m = *mp;
  uint64_t last = rec_key(q);
  for (int l = 0; l < L; l++) oc[l][m] = spw_unkey(pk, l, last);
  spw_val_copy(rv + m * (int64_t)W, q + 8, W);
  m++;
  if (combine && W == 8 && w->vt == SPC_F64 && w->o.dup == SPC_DUP_SUM) {
    /* the packing and the columns in locals: the int64 stores would
     * reload them from pk and oc */
    const spw_packing lp = *pk;
    int64_t *lc[MAXL];
    for (int l = 0; l < L; l++) lc[l] = oc[l];
    double *rvd = (double *)(void *)rv;
    for (int64_t j = 1; j < len; j++) {
      const char *p = q + j * (int64_t)S;
      const uint64_t k = rec_key(p);
      double v;
      memcpy(&v, p + 8, 8);
      const int64_t nw = k != last, d = m - 1 + nw;
      const double sum = rvd[m - 1] + v;
      rvd[d] = nw ? v : sum;
      for (int l = 0; l < L; l++) lc[l][d] = spw_unkey(&lp, l, k);
      last = k;
      m += nw;
    }
    *mp = m;
    return SPC_OK;
  }
  for (int64_t j = 1; j < len; j++) {
    const char *p = q + j * (int64_t)S;
    const uint64_t k = rec_key(p);
    if (combine && k == last) {
      if (w->o.dup == SPC_DUP_ERROR) {
        int64_t t[MAXL];
        for (int l = 0; l < L; l++) t[l] = spw_unkey(pk, l, k);
        return spw_dup_error(e, w, t);
      }
      spw_val_combine(w, rv + (m - 1) * (int64_t)W, p + 8);
      continue;
    }
    for (int l = 0; l < L; l++) oc[l][m] = spw_unkey(pk, l, k);
    spw_val_copy(rv + m * (int64_t)W, p + 8, W);
    last = k;
    m++;
  }
  *mp = m;
  return SPC_OK;
}

static inline uint32_t rk4(const char *p) {
  uint32_t k;
  memcpy(&k, p, 4);
  return k;
}

/* K32: step 1's keys as 32 bits, the key below the group's bits (s1 + the
 * inner bits fit 32).  On one thread they are in r->c[0]'s upper half: the
 * int64 output at m <= the group's end stays below a later group's keys.
 * R12 (K32, W = 8): step 1 writes 12-byte records (key, value) to r->v;
 * the output's values at 8 m <= 12 x the group's start stay below them
 * too. */

/* Step 1 for points [i0, i1): keys and values to their group's cursor in
 * gp (advanced). */
static inline __attribute__((always_inline)) void
bucket_scatter(run *r, const bucket_ctx *b, int64_t i0, int64_t i1, int64_t *gp, const int L,
               const size_t W, const bool K32, const bool R12) {
  const spw_pts *P = b->P;
  const spw_packing *pk = b->pk;
  const int64_t lo0 = r->lo[0];
  const int s1 = b->s1;
  const int lb = s1 + b->innerbits; /* a key's bits below its group */
  const uint64_t lm = K32 ? ((uint64_t)1 << lb) - 1 : 0;
  uint64_t *K = b->keys;
  uint32_t *K4 = b->keys;
  char *rv = r->v;
  /* in locals: the stores below would reload them from P and pk */
  const int64_t *pc[MAXL];
  uint64_t plo[MAXL];
  int psh[MAXL];
  for (int l = 0; l < L; l++) pc[l] = P->c[l], plo[l] = (uint64_t)pk->lo[l], psh[l] = pk->sh[l];
  const char *pv = P->v;
  for (int64_t i = i0; i < i1; i++) {
    uint64_t k = 0;
    for (int l = 0; l < L; l++) k |= ((uint64_t)pc[l][i] - plo[l]) << psh[l];
    const int64_t d = gp[(uint64_t)(pc[0][i] - lo0) >> s1]++;
    if (R12) {
      const uint32_t k4 = (uint32_t)(k & lm);
      memcpy(rv + d * 12, &k4, 4);
      memcpy(rv + d * 12 + 4, pv + i * 8, 8);
      continue;
    }
    if (K32) K4[d] = (uint32_t)(k & lm);
    else K[d] = k;
    spw_val_copy(rv + d * (int64_t)W, pv + i * (int64_t)W, W);
  }
}

/* Step 2 for groups [g0, g1) (gpos[g]: g's end; ga: g0's start): each
 * group as records in x->buf, sorted, written to oc[l] and ov (values at
 * W bytes a point) from *mp on.  One thread: oc and ov are the run's own,
 * the output at m <= the group's start, over its keys and values, already
 * in buf. */
static inline __attribute__((always_inline)) spc_status
bucket_groups(spw *w, run *r, const bucket_ctx *b, const bucket_scr *x, int g0, int g1,
              int64_t ga, int64_t *const *oc, char *ov, int64_t *mp, const int L, const size_t W,
              const bool K32, const bool R12, spc_error *e) {
  const spw_packing *pk = b->pk;
  const size_t S = BUCKET_REC(W);
  const int s1 = b->s1, ib = b->innerbits;
  const uint64_t inner = ib >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << ib) - 1;
  const int64_t no = (int64_t)1 << s1; /* offsets per group */
  const bool combine = !w->exact || !w->nruns; /* exact: the first run only */
  const int64_t *gpos = b->gpos;
  int64_t *pos = x->pos;
  const uint64_t *K = b->keys;
  const uint32_t *K4 = b->keys;
  const int lb = s1 + ib;
  char *buf = x->buf;
  const char *rv = r->v;
  int64_t m = *mp;
  for (int g = g0; g < g1; g++) {
    const int64_t gb = gpos[g], gn = gb - ga;
    if (!gn) continue;
    const uint64_t *gk = K + ga;
    const uint32_t *gk4 = K4 + ga;
    const uint64_t top = K32 ? (uint64_t)g << lb : 0; /* the group's bits */
    const char *gv = R12 ? rv + ga * 12 + 4 : rv + ga * (int64_t)W;
    const char *gr = rv + ga * 12;
    const int64_t VS = R12 ? 12 : (int64_t)W; /* value stride */
    int64_t mx = s1 ? 0 : gn; /* the longest segment */
    ga = gb;
#define GKEY(j) (R12 ? top | rk4(gr + (j) * 12) : K32 ? top | gk4[j] : gk[j])
    if (s1) { /* into the offsets' segments */
      memset(pos, 0, (size_t)(no + 1) * sizeof *pos);
      for (int64_t j = 0; j < gn; j++) pos[((GKEY(j) >> ib) & (uint64_t)(no - 1)) + 1]++;
      for (int64_t o = 0; o < no; o++) {
        mx = pos[o + 1] > mx ? pos[o + 1] : mx;
        pos[o + 1] += pos[o];
      }
      for (int64_t j = 0; j < gn; j++) {
        const uint64_t k = GKEY(j);
        char *q = buf + pos[(k >> ib) & (uint64_t)(no - 1)]++ * (int64_t)S;
        memcpy(q, &k, 8);
        spw_val_copy(q + 8, gv + j * VS, W);
      }
    } else { /* one offset: as they are */
      for (int64_t j = 0; j < gn; j++) {
        const uint64_t k = GKEY(j);
        char *q = buf + j * (int64_t)S;
        memcpy(q, &k, 8);
        spw_val_copy(q + 8, gv + j * VS, W);
      }
    }
#undef GKEY
    /* sort, write; segments all short (one is o's points): one insertion
     * sort of the whole group, no record crossing a segment */
    if (mx <= BUCKET_SHORT) {
      isort_rec(buf, gn, S);
      spc_status st = emit_recs(w, oc, ov, pk, buf, gn, &m, L, W, combine, e);
      if (st) return st;
      continue;
    }
    for (int64_t a = 0; a < gn;) { /* segments of equal offsets */
      char *seg = buf + a * (int64_t)S;
      const uint64_t o = ib >= 64 ? 0 : rec_key(seg) >> ib;
      int64_t len = 1;
      while (a + len < gn && (ib >= 64 ? 0 : rec_key(seg + len * (int64_t)S) >> ib) == o) len++;
      a += len;
      if (len <= BUCKET_SHORT) {
        isort_rec(seg, len, S);
      } else {
        const int sb = 64 - __builtin_clzll((uint64_t)(len - 1));
        const uint64_t jm = ((uint64_t)1 << sb) - 1;
        for (int64_t j = 0; j < len; j++)
          x->ka[j] = (rec_key(seg + j * (int64_t)S) & inner) << sb | (uint64_t)j;
        const uint64_t *sv = radix(x->ka, x->kb, len, sb, ib, x->cnt);
        for (int64_t j = 0; j < len; j++)
          memcpy(x->rs + j * (int64_t)S, seg + (int64_t)(sv[j] & jm) * (int64_t)S, S);
        memcpy(seg, x->rs, (size_t)len * S);
      }
      spc_status st = emit_recs(w, oc, ov, pk, seg, len, &m, L, W, combine, e);
      if (st) return st;
    }
  }
  *mp = m;
  return SPC_OK;
}

/* Step 1 and step 2 specialised where it pays: 12-byte records (K32,
 * float64) for L = 2 and 3, else the general loops.  Used by the serial
 * flush and by each thread of bucket_parallel. */
static void scatter_spec(const spw *w, run *r, const bucket_ctx *b, int64_t i0, int64_t i1,
                         int64_t *gp) {
  const bool k32 = b->s1 + b->innerbits <= 32, r12 = k32 && w->W == 8;
  if (w->L == 2 && r12) bucket_scatter(r, b, i0, i1, gp, 2, 8, true, true);
  else if (w->L == 3 && r12) bucket_scatter(r, b, i0, i1, gp, 3, 8, true, true);
  else bucket_scatter(r, b, i0, i1, gp, w->L, w->W, k32, r12);
}

static spc_status groups_spec(spw *w, run *r, const bucket_ctx *b, const bucket_scr *x, int g0,
                              int g1, int64_t ga, char *ov, int64_t *mp, spc_error *e) {
  const bool k32 = b->s1 + b->innerbits <= 32, r12 = k32 && w->W == 8;
  if (w->L == 2 && r12) return bucket_groups(w, r, b, x, g0, g1, ga, r->c, ov, mp, 2, 8, true, true, e);
  if (w->L == 3 && r12) return bucket_groups(w, r, b, x, g0, g1, ga, r->c, ov, mp, 3, 8, true, true, e);
  return bucket_groups(w, r, b, x, g0, g1, ga, r->c, ov, mp, w->L, w->W, k32, r12, e);
}

/* Step 1 then step 2 on one thread (gpos: the group starts). */
static spc_status bucket_serial(spw *w, run *r, const bucket_ctx *b, const bucket_scr *x,
                                spc_error *e) {
  scatter_spec(w, r, b, 0, b->P->n, b->gpos);
  int64_t m = 0;
  spc_status st = groups_spec(w, r, b, x, 0, b->ng, 0, r->v, &m, e);
  r->n = m;
  return st;
}

/* A thread's scratch for groups whose largest holds `largest` points. */
static bool scr_make(bucket_scr *x, const bucket_ctx *b, int64_t largest, size_t W, int64_t *cnt) {
  memset(x, 0, sizeof *x);
  x->cnt = cnt ? cnt : spc_malloc_n(6 * 2048, 8);
  if (!x->cnt || !(x->buf = spc_malloc_n(largest ? largest : 1, BUCKET_REC(W))))
    return false;
  if (b->s1 && !(x->pos = spc_malloc_n(((int64_t)1 << b->s1) + 1, 8))) return false;
  if (largest > BUCKET_SHORT &&
      (!(x->ka = spc_malloc_n(largest, 8)) || !(x->kb = spc_malloc_n(largest, 8)) ||
       !(x->rs = spc_malloc_n(largest, BUCKET_REC(W)))))
    return false;
  return true;
}

static void scr_free(bucket_scr *x, bool own_cnt) {
  spc_free(x->pos);
  spc_free(x->buf);
  spc_free(x->ka);
  spc_free(x->kb);
  spc_free(x->rs);
  if (own_cnt) spc_free(x->cnt);
}

/* Threads for the bucket flush of n points in ng groups: past 2^17
 * points, at most one a 2^16 points and 4 groups, at most 64; one inside
 * an active parallel region. */
static int bucket_nthreads(int64_t n, int ng) {
#ifdef _OPENMP
  /* inside a caller's parallel region (a builder per thread) the ranges
   * would run one after the other: the serial flush */
  if (n < ((int64_t)1 << 17) || ng < 8 || omp_in_parallel()) return 1;
  int64_t t = omp_get_max_threads();
  t = t < 64 ? t : 64;
  t = t < n >> 16 ? t : n >> 16;
  t = t < ng / 4 ? t : ng / 4;
  return t > 1 ? (int)t : 1;
#else
  (void)n, (void)ng;
  return 1;
#endif
}

#define BUCKET_MAXT 64

/* The flush on T > 1 threads, the same result as bucket_serial's (each
 * step a loop over t, right with fewer threads than T):
 *   1. slice t of the points counted by group (hist[t]); the groups'
 *      starts, and slice t's cursors: its group's start plus the earlier
 *      slices' counts (the serial order within each group); each slice
 *      scattered to its cursors;
 *   2. the groups split into T ranges of about equal points; range t's
 *      output written from its start s_t on, in place as one thread does
 *      (its writes stay within [s_t, its group's start] for the columns and
 *      values of W bytes; R12's 8-byte values from s_t + h_t on, h_t =
 *      ceil(s_t / 2): 8 (m + h_t) >= 12 s_t, past the records of the
 *      ranges below, and 8 (m + h_t) + 8 <= 12 x its group's end); K32 keys
 *      not in records are in a scratch (b->keys), since in r->c[0]'s upper
 *      half they would lie under another range's output;
 *   3. each range's output moved down (memmove) to follow the one before.
 * The error of the first range that has one (its first duplicate under
 * --dup=error is the first overall). */
static spc_status bucket_parallel(spw *w, run *r, bucket_ctx *b, int T, spc_error *e) {
  const int L = w->L;
  const size_t W = w->W;
  const int64_t n = b->P->n, lo0 = r->lo[0];
  const int ng = b->ng, s1 = b->s1;
  const bool r12 = s1 + b->innerbits <= 32 && W == 8;
  int64_t *hist = spc_calloc((size_t)T * (size_t)(ng + 1), sizeof *hist);
  int64_t *gstart = spc_malloc_n(ng + 1, 8);
  spc_error *te = spc_calloc((size_t)T, sizeof *te);
  bucket_scr x[BUCKET_MAXT];
  int64_t g0[BUCKET_MAXT + 1], s[BUCKET_MAXT + 1], mo[BUCKET_MAXT];
  spc_status st[BUCKET_MAXT];
  memset(x, 0, sizeof x);
  spc_status rs = hist && gstart && te ? SPC_OK : SPC_NOMEM(e);
  int64_t *gpos = b->gpos; /* the groups' ends, after step 1 */
#define SLICE(t) ((t) == T ? n : (int64_t)((double)n * (t) / T))
  if (!rs) {
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 0; t < T; t++) {
      int64_t *h = hist + (int64_t)t * (ng + 1);
      const int64_t *c0 = b->P->c[0];
      for (int64_t i = SLICE(t); i < SLICE(t + 1); i++) h[(uint64_t)(c0[i] - lo0) >> s1]++;
    }
    int64_t c = 0;
    for (int g = 0; g < ng; g++) {
      gstart[g] = c;
      for (int u = 0; u < T; u++) {
        int64_t k = hist[(int64_t)u * (ng + 1) + g];
        hist[(int64_t)u * (ng + 1) + g] = c;
        c += k;
      }
      gpos[g] = c;
    }
    gstart[ng] = n;
    /* range t: from g0[t], the first group starting at or past t n / T */
    for (int t = 0, g = 0; t <= T; t++) {
      while (g < ng && gstart[g] < SLICE(t)) g++;
      g0[t] = t == T ? ng : g;
      s[t] = gstart[g0[t]];
    }
    for (int t = 0; t < T && !rs; t++) {
      int64_t largest = 0;
      for (int64_t g = g0[t]; g < g0[t + 1]; g++)
        largest = gstart[g + 1] - gstart[g] > largest ? gstart[g + 1] - gstart[g] : largest;
      if (!scr_make(&x[t], b, largest, W, t ? NULL : w->cnt)) rs = SPC_NOMEM(e);
    }
  }
  if (!rs) {
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 0; t < T; t++) {
      scatter_spec(w, r, b, SLICE(t), SLICE(t + 1), hist + (int64_t)t * (ng + 1));
    }
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int t = 0; t < T; t++) {
      int64_t m = s[t];
      char *ov = r12 ? r->v + 8 * ((s[t] + 1) / 2) : r->v;
      st[t] = groups_spec(w, r, b, &x[t], (int)g0[t], (int)g0[t + 1], s[t], ov, &m, &te[t]);
      mo[t] = m - s[t];
    }
    for (int t = 0; t < T && !rs; t++)
      if (st[t]) {
        rs = st[t];
        if (e) *e = te[t];
      }
  }
#undef SLICE
  int64_t m = 0;
  for (int t = 0; t < T && !rs; t++) { /* each range's output after the one before */
    const char *src = r12 ? r->v + 8 * (s[t] + (s[t] + 1) / 2) : r->v + s[t] * (int64_t)W;
    if (m != s[t])
      for (int l = 0; l < L; l++) memmove(r->c[l] + m, r->c[l] + s[t], (size_t)mo[t] * 8);
    if (W && src != r->v + m * (int64_t)W) memmove(r->v + m * (int64_t)W, src, (size_t)mo[t] * W);
    m += mo[t];
  }
  r->n = m;
  for (int t = 0; t < T; t++) scr_free(&x[t], t > 0);
  spc_free(hist);
  spc_free(gstart);
  spc_free(te);
  return rs;
}

/* The bucket flush of P into r (its arrays allocated): level 0's range
 * R (at most SPW_BUCKET_RANGE(n)) of bits0 bits. */
static spc_status sort_bucket(spw *w, const spw_pts *P, run *r, const spw_packing *pk,
                              spc_error *e) {
  const size_t W = w->W;
  const int64_t n = P->n, lo0 = r->lo[0];
  const int bits0 = __builtin_popcountll(pk->mask[0]);
  bucket_ctx b = {.P = P, .pk = pk, .innerbits = pk->bits - bits0};
  b.s1 = bits0 > BUCKET_GBITS ? bits0 - BUCKET_GBITS : 0;
  b.ng = 1 << (bits0 - b.s1);
  if (!w->cnt && !(w->cnt = spc_malloc_n(6 * 2048, 8))) return SPC_NOMEM(e);
  const int T = bucket_nthreads(n, b.ng);
  if (!(b.gpos = spc_calloc((size_t)b.ng + 1, sizeof *b.gpos))) return SPC_NOMEM(e);
  const bool k32 = b.s1 + b.innerbits <= 32;
  spc_status st = SPC_OK;
  void *own_keys = NULL;
  if (k32 && W == 8) /* records in r->v */
    b.keys = r->v;
  else if (P->take || (k32 && T > 1)) /* r->c[0] the caller's, read in step 1; or threads */
    b.keys = own_keys = spc_malloc_n(n, k32 ? 4 : 8);
  else
    b.keys = k32 ? (void *)((uint32_t *)(void *)r->c[0] + n) : (void *)r->c[0];
  if (!b.keys) st = SPC_NOMEM(e);
  if (!st && T > 1) {
    st = bucket_parallel(w, r, &b, T, e);
  } else if (!st) {
    /* gpos[g + 1]: points of group g; then gpos[g]: its start; the largest
     * group (a bound on its segments) */
    for (int64_t i = 0; i < n; i++) b.gpos[((uint64_t)(P->c[0][i] - lo0) >> b.s1) + 1]++;
    int64_t largest = 0;
    for (int g = 0; g < b.ng; g++) {
      largest = b.gpos[g + 1] > largest ? b.gpos[g + 1] : largest;
      b.gpos[g + 1] += b.gpos[g];
    }
    bucket_scr x;
    st = scr_make(&x, &b, largest, W, w->cnt) ? bucket_serial(w, r, &b, &x, e) : SPC_NOMEM(e);
    scr_free(&x, false);
  }
  if (!st) w->st.bucketed++;
  if (!st && T > w->st.bucket_threads) w->st.bucket_threads = T;
  spc_free(b.gpos);
  spc_free(own_keys);
  return st;
}

/* The general path: a stable sort of positions by the columns. */
static spc_status sort_tuples(spw *w, run *r, int64_t *perm, int64_t *scr, spc_error *e) {
  const int64_t n = w->n;
  const int L = w->L;
  const size_t W = w->W;
  const bool combine = !w->exact || !w->nruns; /* exact: the first run only */
  spc_rt_key key[MAXL] = {{0}};
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

/* P's n > 0 points (stored form), sorted and combined, into r (a run in
 * memory, filled here; freed by the caller on failure).  P: Acc, or
 * (only_bucket) the caller's columns: SPC_NOT_HANDLED, nothing made, where
 * the bucket flush does not apply. */
static spc_status sort_pts(spw *w, const spw_pts *P, run *r, bool only_bucket, spc_error *e) {
  const int64_t n = P->n;
  const int L = w->L;
  memset(r, 0, sizeof *r);
  for (int l = 0; l < L; l++) { /* the ranges (threads past 2^17 points) */
    const int64_t *c = P->c[l];
    int64_t lo = c[0], hi = c[0];
#pragma omp parallel for reduction(min : lo) reduction(max : hi) if (n >= ((int64_t)1 << 17))
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
  /* bucket: level 0's range counted (R counters); the tuples pack, and
   * a segment's inner keys with a position in it (at most n) */
  const uint64_t R = (uint64_t)r->hi[0] - (uint64_t)r->lo[0] + 1;
  const bool bucket = pk.ok && w->o.kind == SPW_BUCKET && R && R <= (uint64_t)SPW_BUCKET_RANGE(n) &&
                      w->W <= 16 && pk.bits - __builtin_popcountll(pk.mask[0]) + ib <= 64;
  if (only_bucket && !bucket) return SPC_NOT_HANDLED;
  spc_status st = SPC_OK;
  if (!bucket) {
    if (!w->sk) w->sk = spc_malloc_n(w->cap, 8);
    if (!w->tmp) w->tmp = spc_malloc_n(w->cap, 8);
    if (fast && !w->cnt) w->cnt = spc_malloc_n(6 * 2048, 8);
    st = w->sk && w->tmp && (w->cnt || !fast) ? SPC_OK : SPC_NOMEM(e);
  }
  for (int l = 0; l < L && !st; l++) /* taken: the caller's, written over */
    if (!(r->c[l] = bucket && P->take ? (int64_t *)(uintptr_t)P->c[l] : spc_malloc_n(n, 8)))
      st = SPC_NOMEM(e);
  /* bucket, 8-byte values: room for step 1's 12-byte records (R12) */
  if (!st && w->W && !(r->v = spc_malloc_n(n, bucket && w->W == 8 ? 12 : w->W))) st = SPC_NOMEM(e);
  if (!st && bucket)
    st = sort_bucket(w, P, r, &pk, e);

  else if (!st)
    st = fast ? sort_packed(w, r, &pk, ib, w->sk, w->tmp, w->cnt, e)
              : sort_tuples(w, r, (int64_t *)w->sk, (int64_t *)w->tmp, e);
  return st;
}

spc_status spw_sort_acc(spw *w, run *r, spc_error *e) {
  spw_pts P = {.n = w->n, .v = w->v};
  for (int l = 0; l < w->L; l++) P.c[l] = w->c[l];
  return sort_pts(w, &P, r, false, e);
}

spc_status spw_sort_cols(spw *w, const spw_pts *P, run *r, spc_error *e) {
  return sort_pts(w, P, r, true, e);
}
