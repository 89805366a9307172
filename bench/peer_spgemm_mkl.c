/* peer_spgemm_mkl.c -- Intel MKL sparse product (inspector-executor
 * mkl_sparse_spmm, C = A B, result a new CSR handle): a peer of
 * spgemm_bench (input, product and output line in spgemm_peer.h; the
 * reference CSR in mkl_peer.h).
 *
 * The operands are CSR handles over sorted CSRs (duplicates summed), made
 * untimed.  Timed: mkl_sparse_spmm + mkl_sparse_d_export_csr (MKL's arrays
 * of C); C is destroyed untimed.  Sequential MKL (libmkl_sequential).  The
 * first C is checked against a plain Gustavson product made here (same
 * pattern, every value within 1e-12 of the sum of |a b| it adds): a
 * difference is an error line. */
#include "mkl_peer.h"
#include "spgemm_peer.h"

/* C (as exported: row begin/end, col, val) against A B; NULL when equal. */
static const char *check(const ref_csr *a, const ref_csr *b, MKL_INT m, MKL_INT n,
                         const MKL_INT *rb, const MKL_INT *re, const MKL_INT *col,
                         const double *val) {
  static char why[160];
  if (m != a->m || n != b->n) {
    snprintf(why, sizeof why, "C is %dx%d, expected %dx%d", (int)m, (int)n, (int)a->m, (int)b->n);
    return why;
  }
  size_t n1 = (size_t)(n ? n : 1);
  double *acc = calloc(n1, 8), *mag = calloc(n1, 8);
  MKL_INT *mark = malloc(n1 * sizeof(MKL_INT)), base = rb[0];
  const char *bad = NULL;
  if (!acc || !mag || !mark) bad = "out of memory (check)";
  for (MKL_INT j = 0; !bad && j < n; j++) mark[j] = -1;
  for (MKL_INT i = 0; !bad && i < m; i++) {
    MKL_INT cnt = 0;
    for (MKL_INT p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
      MKL_INT k = a->col[p];
      for (MKL_INT q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
        MKL_INT j = b->col[q];
        double v = a->val[p] * b->val[q];
        if (mark[j] != i) { mark[j] = i; acc[j] = mag[j] = 0; cnt++; }
        acc[j] += v;
        mag[j] += fabs(v);
      }
    }
    if (re[i] - rb[i] != cnt) {
      snprintf(why, sizeof why, "row %d holds %d entries, expected %d", (int)i,
               (int)(re[i] - rb[i]), (int)cnt);
      bad = why;
      break;
    }
    for (MKL_INT p = rb[i] - base; p < re[i] - base; p++) {
      MKL_INT j = col[p];
      if (j < 0 || j >= n || mark[j] != i || fabs(val[p] - acc[j]) > 1e-12 * mag[j]) {
        snprintf(why, sizeof why, "C(%d, %d) = %.17g not in A B", (int)i, (int)j, val[p]);
        bad = why;
        break;
      }
      mark[j] = -2 - i; /* seen: a repeated column fails above */
    }
  }
  free(acc);
  free(mag);
  free(mark);
  return bad;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spgemm_mkl"), fails = 0;
  mkl_set_num_threads(1);
  for (; i < argc; i++) {
    char why[256] = "out of memory";
    peer_coo A, B;
    if (peer_load(argv[i], &A, why, sizeof why) || peer_right(&A, &B)) {
      printf("skip\tmkl\tspgemm\t%s\t(%s)\n", argv[i], why);
      continue;
    }
    if (!mkl_peer_fits(&A)) {
      printf("skip\tmkl\tspgemm\t%s\t(too large for int indices)\n", argv[i]);
      peer_free(&A);
      peer_free(&B);
      continue;
    }
    ref_csr a, b;
    sparse_matrix_t ha = NULL, hb = NULL;
    sparse_status_t st = SPARSE_STATUS_ALLOC_FAILED;
    int built = !ref_build(&A, 0, &a);
    if (built && !ref_build(&B, 0, &b)) {
      st = ref_handle(&a, &ha);
      if (!st) st = ref_handle(&b, &hb);
    } else if (built) {
      ref_free(&a);
      built = 0;
    }
    peer_timer t;
    peer_timer_init(&t);
    long long nnz = -1, unsorted = 0;
    const char *bad = NULL;
    while (!st && !bad && peer_more(&t, &o)) {
      sparse_matrix_t hc = NULL;
      sparse_index_base_t ix;
      MKL_INT m, n, *rb, *re, *col;
      double *val;
      peer_start(&t);
      st = mkl_sparse_spmm(SPARSE_OPERATION_NON_TRANSPOSE, ha, hb, &hc);
      if (!st) st = mkl_sparse_d_export_csr(hc, &ix, &m, &n, &rb, &re, &col, &val);
      peer_stop(&t);
      if (!st) {
        nnz = m ? (long long)(re[m - 1] - rb[0]) : 0;
        if (t.r == 1) bad = check(&a, &b, m, n, rb, re, col, val);
        if (t.r == 1) /* rows whose columns MKL leaves out of order */
          for (MKL_INT r = 0; r < m; r++)
            for (MKL_INT p = rb[r] - rb[0] + 1; p < re[r] - rb[0]; p++)
              if (col[p] < col[p - 1]) {
                unsorted++;
                break;
              }
      }
      mkl_sparse_destroy(hc);
    }
    if (st) {
      printf("error\tmkl\tspgemm\t%s\t(mkl_sparse_spmm: %s)\n", argv[i], mkl_status(st));
      fails++;
    } else if (bad) {
      printf("error\tmkl\tspgemm\t%s\t(C differs from A B: %s)\n", argv[i], bad);
      fails++;
    } else {
      peer_spgemm_line_rows("mkl", t.best, nnz, argv[i], unsorted);
    }
    mkl_sparse_destroy(ha);
    mkl_sparse_destroy(hb);
    if (built) {
      ref_free(&a);
      ref_free(&b);
    }
    peer_free(&A);
    peer_free(&B);
  }
  return fails ? 1 : 0;
}
