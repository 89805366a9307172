/* spgemm_outer.c -- outer products (k, i, j): C = sum_k A(:,k) B(k,:),
 * A as CSC, B as CSR (spgemm.c converts them).
 *
 * Every product A(i,k) B(k,j) becomes a point (i, j, v) pushed into a
 * builder (spconv.h) over the sparse workspace (spw/: a hash accumulator
 * combining equal (i, j) by sum, flushed as sorted runs merged k-way,
 * spilling to temporary files past the memory budget), which packs them
 * into out_format.  Points go in blocks of about 2^20: the products of a
 * block of k are made by OpenMP threads at offsets fixed by the counts
 * (each k's slice starts where the previous ends), then pushed in k
 * order, so the pushes -- and the result -- do not depend on the thread
 * count.  Float sums are added in the workspace's order, not ascending k:
 * the same value up to rounding. */
#include "spgemm_internal.h"
#include <string.h>

#define BLOCK ((int64_t)1 << 20)

/* the products of A(:,k) B(k,:) at offset at */
static void products(const sg_mat *a, const sg_mat *b, sg_kind kind, int64_t k, int64_t at, int64_t *I,
                     int64_t *J, void *V) {
  int64_t q0 = spc_arr_get(b->pos, k), q1 = spc_arr_get(b->pos, k + 1);
  for (int64_t p = spc_arr_get(a->pos, k); p < spc_arr_get(a->pos, k + 1); p++) {
    int64_t i = spc_arr_get(a->crd, p);
    for (int64_t q = q0; q < q1; q++, at++) {
      I[at] = i;
      J[at] = spc_arr_get(b->crd, q);
      sg_fma(kind, V, at, a, p, b, q, true);
    }
  }
}

spc_status sg_outer(const sg_mat *a, const sg_mat *b, sg_kind kind, int nt, const char *out_format,
                    const spc_convert_opts *o, spc_tensor **C, spc_error *e) {
  int64_t K = a->major, dims[2] = {a->minor, b->minor};
  spc_convert_opts bo = *o;
  bo.spw = SPC_SPW_HASH;
  bo.dup = SPC_DUP_SUM;
  bo.info = NULL;
  /* the accumulator: room for every product up to 2^22 points (a table
   * sized from the memory budget would cost more to clear than to fill) */
  int64_t F = 0;
  for (int64_t k = 0; k < K; k++)
    F += (spc_arr_get(a->pos, k + 1) - spc_arr_get(a->pos, k)) *
         (spc_arr_get(b->pos, k + 1) - spc_arr_get(b->pos, k));
  if (!bo.acc) bo.acc = F < 1024 ? 1024 : F > ((int64_t)1 << 22) ? (int64_t)1 << 22 : F;
  spc_builder *bld = NULL;
  int64_t *off = spc_malloc_n(K + 1, sizeof *off);
  int64_t *I = spc_malloc_n(BLOCK, sizeof *I), *J = spc_malloc_n(BLOCK, sizeof *J);
  void *V = spc_malloc_n(BLOCK, sg_width(kind));
  spc_status s = off && I && J && V ? spc_builder_create(out_format, 2, dims, sg_vtype(kind), &bo, &bld, e)
                                    : SPC_NOMEM(e);
  for (int64_t k0 = 0; k0 < K && !s;) {
    /* the block: k0 .. k1-1, at least one k (a k with more than BLOCK
     * products gets buffers of its own size) */
    int64_t k1 = k0, tot = 0;
    off[0] = 0;
    while (k1 < K) {
      int64_t f = (spc_arr_get(a->pos, k1 + 1) - spc_arr_get(a->pos, k1)) *
                  (spc_arr_get(b->pos, k1 + 1) - spc_arr_get(b->pos, k1));
      if (k1 > k0 && tot + f > BLOCK) break;
      tot += f;
      off[++k1 - k0] = tot;
    }
    int64_t *bi = I, *bj = J;
    void *bv = V;
    if (tot > BLOCK) {
      bi = spc_malloc_n(tot, sizeof *bi);
      bj = spc_malloc_n(tot, sizeof *bj);
      bv = spc_malloc_n(tot, sg_width(kind));
    }
    if (!bi || !bj || !bv) {
      s = SPC_NOMEM(e);
    } else if (tot) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 64)
      for (int64_t k = k0; k < k1; k++) products(a, b, kind, k, off[k - k0], bi, bj, bv);
      const int64_t *cols[2] = {bi, bj};
      s = spc_builder_push(bld, tot, cols, bv, e);
    }
    if (bi != I) spc_free(bi), spc_free(bj), spc_free(bv);
    k0 = k1;
  }
  if (!s) s = spc_builder_finish(bld, C, e);
  spc_builder_free(&bld);
  spc_free(off);
  spc_free(I);
  spc_free(J);
  spc_free(V);
  return s;
}
