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
#include <stdio.h>
#include <string.h>

#define BLOCK ((int64_t)1 << 20)

/* the products of A(p,k) B(k,:) for p in [p0, p1), at offset at */
static void products(const sg_mat *a, const sg_mat *b, sg_kind kind, int64_t k, int64_t p0, int64_t p1,
                     int64_t at, int64_t *I, int64_t *J, void *V) {
  int64_t q0 = spc_arr_get(b->pos, k), q1 = spc_arr_get(b->pos, k + 1);
  for (int64_t p = p0; p < p1; p++) {
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
  for (int64_t k = 0; k < K; k++) {
    int64_t f = (spc_arr_get(a->pos, k + 1) - spc_arr_get(a->pos, k)) *
                (spc_arr_get(b->pos, k + 1) - spc_arr_get(b->pos, k));
    F = F > INT64_MAX - f ? INT64_MAX : F + f;
  }
  /* C has at most min(products, m n) entries: where even that bound
   * cannot be held, refused before any product is made (arrow squared:
   * 2.16e9 products spilled by the workspace, then a result past memory);
   * Gustavson's symbolic pass counts C exactly */
  double mn = (double)dims[0] * (double)dims[1];
  int64_t bound = (double)F < mn ? F : (int64_t)(mn < 9.2e18 ? mn : 9.2e18);
  spc_error tmp;
  spc_status s = sg_check_fits(bound, kind, &tmp);
  if (s)
    return spc_err(e, s, NULL, 0, 0,
                   "the product may have up to %lld entries (%lld outer products, %lld x %lld): too large "
                   "for this machine's memory (about %.1f GB needed, %.1f GB here; --algo=gustavson counts "
                   "them exactly)",
                   (long long)bound, (long long)F, (long long)dims[0], (long long)dims[1],
                   (double)bound * (16.0 + (double)sg_width(kind)) * 2.0 / 1e9, (double)spc_phys_bytes() / 1e9);
  if (!bo.acc) bo.acc = F < 1024 ? 1024 : F > ((int64_t)1 << 22) ? (int64_t)1 << 22 : F;
  spc_builder *bld = NULL;
  /* a block's pieces: (k, p0, p1) and their offsets; a k of more than
   * BLOCK products is cut by A's rows (a row of more, by itself), so no
   * buffer is larger than BLOCK points or one row of B(k,:).  A k gives a
   * block one piece at most (a piece cut short fills the block), so a
   * block has at most min(K, BLOCK) of them: small products allocate no
   * more than before */
  int64_t npk = K < BLOCK ? K : BLOCK;
  int64_t *pk = spc_malloc_n(npk + 1, 3 * sizeof *pk), *off = spc_malloc_n(npk + 2, sizeof *off);
  int64_t *I = spc_malloc_n(BLOCK, sizeof *I), *J = spc_malloc_n(BLOCK, sizeof *J);
  void *V = spc_malloc_n(BLOCK, sg_width(kind));
  s = pk && off && I && J && V ? spc_builder_create(out_format, 2, dims, sg_vtype(kind), &bo, &bld, e) : SPC_NOMEM(e);
  int64_t k = 0, p = K ? spc_arr_get(a->pos, 0) : 0; /* the next product: A(p, k) */
  while (k < K && !s) {
    int64_t np = 0, tot = 0;
    off[0] = 0;
    while (k < K && np < npk) {
      int64_t pe = spc_arr_get(a->pos, k + 1), nb = spc_arr_get(b->pos, k + 1) - spc_arr_get(b->pos, k);
      if (p >= pe || nb == 0) { /* k done (or nothing to multiply) */
        k++;
        p = k < K ? spc_arr_get(a->pos, k) : 0;
        continue;
      }
      int64_t rows = (BLOCK - tot) / nb; /* whole rows of A(:,k) that fit */
      if (rows < 1) {
        if (tot) break; /* the next block */
        rows = 1;       /* one row of more than BLOCK products */
      }
      int64_t p1 = pe - p < rows ? pe : p + rows;
      pk[3 * np] = k, pk[3 * np + 1] = p, pk[3 * np + 2] = p1;
      tot += (p1 - p) * nb;
      off[++np] = tot;
      p = p1;
    }
    int64_t *bi = I, *bj = J;
    void *bv = V;
    if (tot > BLOCK) { /* one row of A(:,k) times a B(k,:) of more than BLOCK */
      bi = spc_malloc_n(tot, sizeof *bi);
      bj = spc_malloc_n(tot, sizeof *bj);
      bv = spc_malloc_n(tot, sg_width(kind));
    }
    if (!bi || !bj || !bv) {
      s = SPC_NOMEM(e);
    } else if (tot) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 64)
      for (int64_t x = 0; x < np; x++) products(a, b, kind, pk[3 * x], pk[3 * x + 1], pk[3 * x + 2], off[x], bi, bj, bv);
      const int64_t *cols[2] = {bi, bj};
      s = spc_builder_push(bld, tot, cols, bv, e);
    }
    if (bi != I) spc_free(bi), spc_free(bj), spc_free(bv);
  }
  if (!s) s = spc_builder_finish(bld, C, e);
  spc_builder_free(&bld);
  spc_free(pk);
  spc_free(off);
  spc_free(I);
  spc_free(J);
  spc_free(V);
  return s;
}
