/* spgemm_inner.c -- inner products (i, j, k): C(i,j) = A(i,:) . B(:,j),
 * A as CSR, B as CSC (spgemm.c converts it), each dot a merge of two
 * sorted coordinate lists.
 *
 * Two-phase: the symbolic pass asks, for every nonempty row i of A and
 * nonempty column j of B, whether the lists intersect (stopping at the
 * first common k); the numeric pass merges again and sums the products in
 * ascending k -- the order Gustavson adds them in, so the values are the
 * same bits.  Rows over OpenMP threads.  The work is
 * |rows(A)| x |cols(B)| merges: sensible only for small outputs (the cost
 * model says when). */
#include "spgemm_internal.h"
#include <stdlib.h>

/* does A(i,:) (crd[p0..p1)) meet B(:,j) (crd[q0..q1))? */
static bool meets(const spc_array *ac, int64_t p0, int64_t p1, const spc_array *bc, int64_t q0,
                  int64_t q1) {
  if (p0 == p1 || q0 == q1) return false;
  if (spc_arr_get(ac, p1 - 1) < spc_arr_get(bc, q0) || spc_arr_get(bc, q1 - 1) < spc_arr_get(ac, p0))
    return false;
  while (p0 < p1 && q0 < q1) {
    int64_t x = spc_arr_get(ac, p0), y = spc_arr_get(bc, q0);
    if (x == y) return true;
    if (x < y) p0++;
    else q0++;
  }
  return false;
}

/* C(i,j) into slot t of the COO's values; false (nothing written) when
 * the lists do not meet */
static bool dot(const sg_mat *a, int64_t p0, int64_t p1, const sg_mat *b, int64_t q0, int64_t q1,
                sg_kind kind, void *val, int64_t t) {
  bool first = true;
  while (p0 < p1 && q0 < q1) {
    int64_t x = spc_arr_get(a->crd, p0), y = spc_arr_get(b->crd, q0);
    if (x == y) {
      sg_fma(kind, val, t, a, p0, b, q0, first);
      first = false;
      p0++, q0++;
    } else if (x < y) {
      p0++;
    } else {
      q0++;
    }
  }
  return !first;
}

spc_status sg_inner(const sg_mat *a, const sg_mat *b, sg_kind kind, int nt, const spc_convert_opts *co,
                    sg_out *out, spc_error *e) {
  int64_t m = a->major, n = b->major, nc = 0;
  int64_t *rp = spc_calloc((size_t)m + 1, sizeof *rp);
  int64_t *cols = spc_malloc_n(n ? n : 1, sizeof *cols); /* B's nonempty columns */
  spc_status s = SPC_OK;
  if (!rp || !cols) {
    s = SPC_NOMEM(e);
    goto done;
  }
  for (int64_t j = 0; j < n; j++)
    if (spc_arr_get(b->pos, j + 1) > spc_arr_get(b->pos, j)) cols[nc++] = j;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
  for (int64_t i = 0; i < m; i++) {
    int64_t p0 = spc_arr_get(a->pos, i), p1 = spc_arr_get(a->pos, i + 1), cnt = 0;
    for (int64_t t = 0; p0 < p1 && t < nc; t++) {
      int64_t j = cols[t];
      cnt += meets(a->crd, p0, p1, b->crd, spc_arr_get(b->pos, j), spc_arr_get(b->pos, j + 1));
    }
    rp[i + 1] = cnt;
  }
  for (int64_t i = 0; i < m; i++) rp[i + 1] += rp[i];
  if ((s = sg_out_make(co, m, n, rp, kind, out, e))) goto done;
  void *val = out->val;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
  for (int64_t i = 0; i < m; i++) {
    int64_t p0 = spc_arr_get(a->pos, i), p1 = spc_arr_get(a->pos, i + 1), k = rp[i];
    for (int64_t t = 0; k < rp[i + 1] && t < nc; t++) {
      int64_t j = cols[t], q0 = spc_arr_get(b->pos, j), q1 = spc_arr_get(b->pos, j + 1);
      if (!dot(a, p0, p1, b, q0, q1, kind, val, k)) continue;
      sg_out_put(out, k, i, j);
      k++;
    }
  }
done:
  spc_free(rp);
  spc_free(cols);
  return s;
}
