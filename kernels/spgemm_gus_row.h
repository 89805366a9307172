/* spgemm_gus_row.h -- one row of Gustavson's product, written once and
 * instantiated by spgemm.c (an x-macro template, STYLE.md habit 8) for
 * each coordinate width and value path:
 *
 *   SG_SUF    the name suffix
 *   SG_T      the element type of both operands' crd arrays (int32_t,
 *             int64_t), or undefined: any widths, through spc_arr_get
 *   SG_FAST   1: both operands double (products double, no dispatch per
 *             product); 0: any value types, through sg_fma
 *
 * row_count_SUF: row i's distinct columns (the symbolic pass); row_fill_SUF:
 * its sorted columns and values into the output at k0 (the numeric pass).
 * The dense workspace marks columns with the row number (never cleared);
 * the hash table is cleared over the prefix the row used. */
#define SG_CAT2(a, b) a##_##b
#define SG_CAT(a, b) SG_CAT2(a, b)

#ifdef SG_T
#define SG_DECL                                                                                    \
  const SG_T *restrict acrd = a->crd->data, *restrict bcrd = b->crd->data;
#define ACRD(p) ((int64_t)acrd[p])
#define BCRD(q) ((int64_t)bcrd[q])
#else
#define SG_DECL
#define ACRD(p) spc_arr_get(a->crd, p)
#define BCRD(q) spc_arr_get(b->crd, q)
#endif

static int64_t SG_CAT(row_count, SG_SUF)(const sg_mat *a, const sg_mat *b, int64_t i, bool hash,
                                          int64_t *restrict mark, hws *h, bool *ok) {
  SG_DECL
  int64_t p0 = spc_arr_get(a->pos, i), p1 = spc_arr_get(a->pos, i + 1), cnt = 0;
  if (!hash) {
    for (int64_t p = p0; p < p1; p++) {
      int64_t k = ACRD(p), q1 = spc_arr_get(b->pos, k + 1);
      for (int64_t q = spc_arr_get(b->pos, k); q < q1; q++) {
        int64_t j = BCRD(q);
        if (mark[j] != i) mark[j] = i, cnt++;
      }
    }
    return cnt;
  }
  int64_t bound = 0; /* the row's flops, at most B's column count */
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p);
    bound += spc_arr_get(b->pos, k + 1) - spc_arr_get(b->pos, k);
  }
  if (bound > b->minor) bound = b->minor;
  if (!bound) return 0;
  if (!hws_size(h, bound)) return *ok = false, 0;
  int bits = bits_for(bound);
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p), q1 = spc_arr_get(b->pos, k + 1);
    for (int64_t q = spc_arr_get(b->pos, k); q < q1; q++) {
      bool fresh;
      hws_slot(h, bits, BCRD(q), &fresh);
      cnt += fresh;
    }
  }
  memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
  return cnt;
}

static void SG_CAT(row_fill, SG_SUF)(const sg_mat *a, const sg_mat *b, sg_kind kind, int64_t i, int64_t k0,
                                     int64_t cnt, bool hash, int64_t *restrict mark, double *restrict acc,
                                     hws *h, int64_t *restrict cols, const sg_out *out) {
  SG_DECL
  int64_t p0 = spc_arr_get(a->pos, i), p1 = spc_arr_get(a->pos, i + 1), c = 0;
  int bits = hash ? bits_for(cnt) : 0;
  double *restrict vals = hash ? h->val : acc;
#if SG_FAST
  const double *restrict av = a->val, *restrict bv = b->val;
  (void)kind;
#endif
  for (int64_t p = p0; p < p1; p++) {
    int64_t k = ACRD(p), q1 = spc_arr_get(b->pos, k + 1);
#if SG_FAST
    double x = av[p];
#endif
    for (int64_t q = spc_arr_get(b->pos, k); q < q1; q++) {
      int64_t j = BCRD(q), slot = j;
      bool fresh;
      if (hash) {
        slot = hws_slot(h, bits, j, &fresh);
      } else {
        fresh = mark[j] != i;
        mark[j] = i;
      }
      if (fresh) cols[c++] = j;
#if SG_FAST
      vals[slot] = fresh ? x * bv[q] : vals[slot] + x * bv[q];
#else
      sg_fma(kind, vals, slot, a, p, b, q, fresh);
#endif
    }
  }
  sort_cols(cols, c);
#if SG_FAST
  double *restrict cv = out->val;
#else
  size_t w = sg_width(kind);
#endif
  for (int64_t t = 0; t < c; t++) {
    int64_t j = cols[t], slot = j;
    if (hash) {
      bool fresh;
      slot = hws_slot(h, bits, j, &fresh);
    }
    sg_out_put(out, k0 + t, i, j);
#if SG_FAST
    cv[k0 + t] = vals[slot];
#else
    memcpy((char *)out->val + (size_t)(k0 + t) * w, (const char *)vals + (size_t)slot * w, w);
#endif
  }
  if (hash && cnt) memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
}

#undef SG_DECL
#undef ACRD
#undef BCRD
#undef SG_CAT
#undef SG_CAT2
