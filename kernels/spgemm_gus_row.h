/* spgemm_gus_row.h -- one row of Gustavson's product, written once and
 * instantiated by spgemm.c (an x-macro template, STYLE.md habit 8) for
 * each combination of widths and value path:
 *
 *   SG_SUF    the name suffix
 *   SG_T      the element type of both operands' crd arrays, SG_P of both
 *             pos arrays (int32_t, int64_t); both undefined: any widths,
 *             through spc_arr_get
 *   SG_OT     the element type of the output's columns (int32_t, int64_t)
 *   SG_FAST   1: both operands double (products double, no dispatch per
 *             product); 0: any value types, through sg_fma
 *
 * row_bound_SUF: min(flops of row i, cols(B)), the most entries the row
 * can hold; row_count_SUF: its distinct columns (the symbolic pass);
 * row_fill_SUF: its columns, ascending, and values into oc[0..] and
 * ov[0..] (the numeric pass).  Products are added in the order (A's k
 * ascending, then B's j), in every workspace and thread count.
 *
 * The dense workspace: a stamp per column of B (mark[j] == g: column j is
 * in the row stamped g, one stamp per row of the thread) and, in the
 * numeric pass, the accumulator acc[j].  A row's columns are collected in
 * the thread's scratch sc and come out ascending read off a two-level
 * bitmap (seen: a bit a column; sum: a bit a word of seen) when the
 * second level's words over [min j, max j] are few against the row's
 * count c (SCAN_WORDS), else sorted: O(those words + c) against
 * O(c log c); the bitmaps are zero again after.  The hash table is sized
 * from the row's bound (symbolic pass) or count (numeric pass) and
 * cleared over the prefix the row used. */
#define SG_CAT2(a, b) a##_##b
#define SG_CAT(a, b) SG_CAT2(a, b)
#define SG_SORT SG_CAT(sort_cols, SG_OT)

#ifdef SG_T
#define SG_DECL                                                                                    \
  const SG_T *restrict acrd = a->crd->data, *restrict bcrd = b->crd->data;                        \
  const SG_P *restrict apos = a->pos->data, *restrict bpos = b->pos->data;
#define ACRD(p) ((int64_t)acrd[p])
#define BCRD(q) ((int64_t)bcrd[q])
#define APOS(i) ((int64_t)apos[i])
#define BPOS(k) ((int64_t)bpos[k])
#else
#define SG_DECL
#define ACRD(p) spc_arr_get(a->crd, p)
#define BCRD(q) spc_arr_get(b->crd, q)
#define APOS(i) spc_arr_get(a->pos, i)
#define BPOS(k) spc_arr_get(b->pos, k)
#endif
/* a numeric row's value pointers: both operands' and the output's
 * doubles, or the product kind's width */
#if SG_FAST
#define SG_VDECL                                                                                   \
  const double *restrict av = a->val, *restrict bv = b->val;                                      \
  double *restrict cv = ov;                                                                        \
  (void)kind;
#else
#define SG_VDECL size_t w = sg_width(kind);
#endif

static int64_t SG_CAT(row_bound, SG_SUF)(const sg_mat *a, const sg_mat *b, int64_t i) {
  SG_DECL
#ifdef SG_T
  (void)bcrd;
#endif
  int64_t p1 = APOS(i + 1), f = 0;
  for (int64_t p = APOS(i); p < p1; p++) {
    int64_t k = ACRD(p);
    f += BPOS(k + 1) - BPOS(k);
  }
  return f < b->minor ? f : b->minor;
}

/* bound (hash only): row_bound of row i, the table holding room for it */
static int64_t SG_CAT(row_count, SG_SUF)(const sg_mat *a, const sg_mat *b, int64_t i, int64_t bound,
                                          bool hash, int32_t *restrict mark, int32_t g, hws *h) {
  SG_DECL
  int64_t p0 = APOS(i), p1 = APOS(i + 1), c = 0;
  if (!hash) {
    for (int64_t p = p0; p < p1; p++) {
      int64_t k = ACRD(p), q1 = BPOS(k + 1);
      for (int64_t q = BPOS(k); q < q1; q++) {
        int64_t j = BCRD(q);
        if (mark[j] != g) mark[j] = g, c++;
      }
    }
    return c;
  }
  if (!bound) return 0;
  int bits = bits_for(bound);
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p), q1 = BPOS(k + 1);
    for (int64_t q = BPOS(k); q < q1; q++) {
      bool fresh;
      hws_slot(h, bits, BCRD(q), &fresh);
      c += fresh;
    }
  }
  memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
  return c;
}

/* cnt: row i's count (the symbolic pass's); the workspace holds room for it */
static int64_t SG_CAT(row_fill, SG_SUF)(const sg_mat *a, const sg_mat *b, sg_kind kind, int64_t i,
                                         int64_t cnt, bool hash, int32_t *restrict mark, int32_t g,
                                         uint64_t *restrict seen, uint64_t *restrict sum,
                                         double *restrict acc, hws *h, SG_OT *restrict sc,
                                         SG_OT *restrict oc, void *restrict ov) {
  SG_DECL
  if (!cnt) return 0;
  int64_t p0 = APOS(i), p1 = APOS(i + 1), c = 0, lo = INT64_MAX, hi = -1;
  SG_VDECL
  if (!hash) {
    for (int64_t p = p0; p < p1; p++) {
      int64_t k = ACRD(p), q1 = BPOS(k + 1);
#if SG_FAST
      double x = av[p];
#endif
      for (int64_t q = BPOS(k); q < q1; q++) {
        int64_t j = BCRD(q);
        bool fresh = mark[j] != g;
        if (fresh) {
          mark[j] = g;
          sc[c++] = (SG_OT)j;
          lo = j < lo ? j : lo;
          hi = j > hi ? j : hi;
        }
#if SG_FAST
        acc[j] = fresh ? x * bv[q] : acc[j] + x * bv[q];
#else
        sg_fma(kind, acc, j, a, p, b, q, fresh);
#endif
      }
    }
#if SG_FAST
#define SG_PUT(t, j) (oc[t] = (SG_OT)(j), cv[t] = acc[j])
#else
#define SG_PUT(t, j) (oc[t] = (SG_OT)(j), memcpy((char *)ov + (size_t)(t) * w, (const char *)acc + (size_t)(j) * w, w))
#endif
    if (SCAN_WORDS((hi >> 12) - (lo >> 12) + 1, c)) {
      /* the columns off the two-level bitmap, ascending.  The bits are
       * gathered in registers while the columns stay in one word (B's
       * rows are ascending, and a row's few second-level words take
       * nearly every column): an OR into memory a column made a chain
       * of store-to-load forwards through one word, a third of the
       * row's time (Franz6 A A^T) */
      int64_t cw = sc[0] >> 6, cs = sc[0] >> 12;
      uint64_t bw = 0, bs = (uint64_t)1 << (cw & 63);
      for (int64_t t = 0; t < c; t++) {
        int64_t j = sc[t], x = j >> 6;
        if (x != cw) {
          seen[cw] |= bw;
          bw = 0;
          cw = x;
          if (x >> 6 != cs) {
            sum[cs] |= bs;
            bs = 0;
            cs = x >> 6;
          }
          bs |= (uint64_t)1 << (x & 63);
        }
        bw |= (uint64_t)1 << (j & 63);
      }
      seen[cw] |= bw;
      sum[cs] |= bs;
      int64_t t = 0;
      for (int64_t y = lo >> 12; y <= hi >> 12; y++) {
        uint64_t u = sum[y];
        if (u) sum[y] = 0;
        while (u) {
          int64_t x = y * 64 + __builtin_ctzll(u);
          uint64_t v = seen[x];
          seen[x] = 0;
          u &= u - 1;
          while (v) {
            int64_t j = x * 64 + __builtin_ctzll(v);
            SG_PUT(t, j);
            t++;
            v &= v - 1;
          }
        }
      }
    } else {
      SG_SORT(sc, c);
      for (int64_t t = 0; t < c; t++) {
        int64_t j = sc[t];
        SG_PUT(t, j);
      }
    }
#undef SG_PUT
    return c;
  }
  int bits = bits_for(cnt);
  double *restrict vals = h->val;
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p), q1 = BPOS(k + 1);
#if SG_FAST
    double x = av[p];
#endif
    for (int64_t q = BPOS(k); q < q1; q++) {
      int64_t j = BCRD(q);
      bool fresh;
      int64_t slot = hws_slot(h, bits, j, &fresh);
      if (fresh) sc[c++] = (SG_OT)j;
#if SG_FAST
      vals[slot] = fresh ? x * bv[q] : vals[slot] + x * bv[q];
#else
      sg_fma(kind, vals, slot, a, p, b, q, fresh);
#endif
    }
  }
  SG_SORT(sc, c);
  for (int64_t t = 0; t < c; t++) {
    bool fresh;
    int64_t slot = hws_slot(h, bits, sc[t], &fresh);
    oc[t] = sc[t];
#if SG_FAST
    cv[t] = vals[slot];
#else
    memcpy((char *)ov + (size_t)t * w, (const char *)vals + (size_t)slot * w, w);
#endif
  }
  memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
  return c;
}

/* The bitmap plan (B's rows dense within their spans, sg_bits): row i's
 * columns are the OR of its B rows' bitmaps into rb (all zero on entry
 * and on return), words wlo..whi; row_bcount_SUF counts them (popcount),
 * row_bfill_SUF starts each column's accumulator at the additive identity
 * that keeps a first product's bits (-0.0; 0 for wrapping integers: the
 * sums are row_fill's bit for bit), adds every product without a test
 * and reads the columns off rb, ascending. */
static inline void SG_CAT(row_bor, SG_SUF)(const sg_mat *a, const sg_bits *bb, int64_t i,
                                            uint64_t *restrict rb, int64_t *wlo, int64_t *whi) {
#ifdef SG_T
  const SG_T *restrict acrd = a->crd->data;
  const SG_P *restrict apos = a->pos->data;
#endif
  int64_t p1 = APOS(i + 1), lo = INT64_MAX, hi = -1;
  for (int64_t p = APOS(i); p < p1; p++) {
    int64_t k = ACRD(p), o = bb->off[k], nw = bb->off[k + 1] - o, l = bb->lo[k];
    uint64_t *restrict r = rb + l;
    const uint64_t *restrict w = bb->w + o;
    for (int64_t t = 0; t < nw; t++) r[t] |= w[t];
    if (nw) {
      lo = l < lo ? l : lo;
      hi = l + nw - 1 > hi ? l + nw - 1 : hi;
    }
  }
  *wlo = lo, *whi = hi;
}

static int64_t SG_CAT(row_bcount, SG_SUF)(const sg_mat *a, const sg_bits *bb, int64_t i,
                                           uint64_t *restrict rb) {
  int64_t lo, hi, c = 0;
  SG_CAT(row_bor, SG_SUF)(a, bb, i, rb, &lo, &hi);
  for (int64_t y = lo; y <= hi; y++) {
    c += __builtin_popcountll(rb[y]);
    rb[y] = 0;
  }
  return c;
}

static int64_t SG_CAT(row_bfill, SG_SUF)(const sg_mat *a, const sg_mat *b, const sg_bits *bb, sg_kind kind,
                                          int64_t i, int64_t cnt, uint64_t *restrict rb,
                                          double *restrict acc, SG_OT *restrict oc, void *restrict ov) {
  SG_DECL
  if (!cnt) return 0;
  int64_t lo, hi, t = 0;
  SG_CAT(row_bor, SG_SUF)(a, bb, i, rb, &lo, &hi);
#if SG_FAST
  const double *restrict av = a->val, *restrict bv = b->val;
  double *restrict cv = ov;
  (void)kind;
#else
  size_t w = sg_width(kind);
  uint64_t *restrict ua = (uint64_t *)(void *)acc;
#endif
  for (int64_t y = lo; y <= hi; y++)
    for (uint64_t u = rb[y]; u; u &= u - 1) {
      int64_t j = y * 64 + __builtin_ctzll(u);
#if SG_FAST
      acc[j] = -0.0;
#else
      if (kind == SG_I64 || kind == SG_U64) ua[j] = 0;
      else if (kind == SG_C128) acc[2 * j] = -0.0, acc[2 * j + 1] = -0.0;
      else acc[j] = -0.0;
#endif
    }
  int64_t p1 = APOS(i + 1);
  for (int64_t p = APOS(i); p < p1; p++) {
    int64_t k = ACRD(p), q1 = BPOS(k + 1);
#if SG_FAST
    double x = av[p];
    /* no test a product: B's row holds each column once, so the four
     * unrolled updates never meet */
#pragma GCC unroll 4
    for (int64_t q = BPOS(k); q < q1; q++) acc[BCRD(q)] += x * bv[q];
#else
    for (int64_t q = BPOS(k); q < q1; q++) sg_fma(kind, acc, BCRD(q), a, p, b, q, false);
#endif
  }
  for (int64_t y = lo; y <= hi; y++) {
    uint64_t u = rb[y];
    rb[y] = 0;
    for (; u; u &= u - 1, t++) {
      int64_t j = y * 64 + __builtin_ctzll(u);
      oc[t] = (SG_OT)j;
#if SG_FAST
      cv[t] = acc[j];
#else
      memcpy((char *)ov + (size_t)t * w, (const char *)acc + (size_t)j * w, w);
#endif
    }
  }
  return t;
}

/* row_fillu_SUF: row_fill without the order -- the row's columns in the
 * order first met (A's k ascending, then B's j), as SciPy's and
 * CXSparse's rows are; the values the same sums as row_fill's, column for
 * column (each column's products added in the same order). */
static int64_t SG_CAT(row_fillu, SG_SUF)(const sg_mat *a, const sg_mat *b, sg_kind kind, int64_t i,
                                          int64_t cnt, bool hash, int32_t *restrict mark, int32_t g,
                                          double *restrict acc, hws *h, SG_OT *restrict oc,
                                          void *restrict ov) {
  SG_DECL
  if (!cnt) return 0;
  int64_t p0 = APOS(i), p1 = APOS(i + 1), c = 0;
  SG_VDECL
  int bits = hash ? bits_for(cnt) : 0;
  double *restrict vals = hash ? h->val : acc;
  /* the two workspaces' loops apart: -O2 does not unswitch them */
#if SG_FAST
#define SG_ADD(slot) (vals[slot] = fresh ? x * bv[q] : vals[slot] + x * bv[q])
#else
#define SG_ADD(slot) sg_fma(kind, vals, slot, a, p, b, q, fresh)
#endif
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p), q0 = BPOS(k), q1 = BPOS(k + 1);
#if SG_FAST
    double x = av[p];
#endif
    if (!hash) {
      for (int64_t q = q0; q < q1; q++) {
        int64_t j = BCRD(q);
        bool fresh = mark[j] != g;
        if (fresh) mark[j] = g, oc[c++] = (SG_OT)j;
        SG_ADD(j);
      }
    } else {
      for (int64_t q = q0; q < q1; q++) {
        int64_t j = BCRD(q);
        bool fresh;
        int64_t slot = hws_slot(h, bits, j, &fresh);
        if (fresh) oc[c++] = (SG_OT)j;
        SG_ADD(slot);
      }
    }
  }
#undef SG_ADD
  for (int64_t t = 0; t < c; t++) {
    int64_t slot = oc[t];
    if (hash) {
      bool fresh;
      slot = hws_slot(h, bits, slot, &fresh);
    }
#if SG_FAST
    cv[t] = vals[slot];
#else
    memcpy((char *)ov + (size_t)t * w, (const char *)vals + (size_t)slot * w, w);
#endif
  }
  if (hash) memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
  return c;
}

#undef SG_DECL
#undef SG_VDECL
#undef ACRD
#undef BCRD
#undef APOS
#undef BPOS
#undef SG_SORT
#undef SG_CAT
#undef SG_CAT2
