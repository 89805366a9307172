/* peer_mkl.c -- Intel MKL conversions (inspector-executor sparse BLAS): a
 * peer of conv_bench (options, input and output line in conv_peer.h; the
 * reference check in mkl_peer.h).
 *
 *   coo_csr   mkl_sparse_convert_csr of a COO handle
 *             (mkl_sparse_d_create_coo over int arrays, made untimed) +
 *             mkl_sparse_d_export_csr.
 *   csr_csc   from a CSR handle (untimed, over the sorted CSR), two methods
 *             (the table takes the faster):
 *               convert_csr(T): mkl_sparse_convert_csr with
 *                 SPARSE_OPERATION_TRANSPOSE: the CSR of A^T = the CSC of A;
 *               convert_csc: mkl_sparse_convert_csc (non-transposed);
 *             each + its export.
 *   coo_bcsr  mkl_sparse_convert_bsr of the COO handle, 4 x 4 blocks,
 *             row-major inside a block, + mkl_sparse_d_export_bsr (skipped,
 *             as by conv_bench, when the padded size exceeds PADMAX x nnz,
 *             and, as by SciPy, when the shape is not a multiple of 4:
 *             MKL answers SPARSE_STATUS_INVALID_VALUE).
 * Timed: the convert and export calls (the export returns MKL's arrays,
 * which makes sure nothing is left to do); the result handle is destroyed
 * untimed.  Every result of the first run is checked against a CSR made
 * here (rows sorted, duplicates summed): an entry missing or different is
 * an error line; a result whose rows are not sorted is printed sorted=0.
 * Sequential MKL (libmkl_sequential), LP64 (int indices).  MKL has no DIA
 * or ELL conversion in this API. */
#include "mkl_peer.h"

typedef struct conv_fn {
  const char *conv, *method;
  /* converts src into *dst and exports the result (timed) */
  sparse_status_t (*run)(sparse_matrix_t src, sparse_matrix_t *dst);
} conv_fn;

static sparse_status_t export_csr(sparse_matrix_t d, MKL_INT *m, MKL_INT *n, MKL_INT **rb,
                                  MKL_INT **re, MKL_INT **col, double **val) {
  sparse_index_base_t ix;
  return mkl_sparse_d_export_csr(d, &ix, m, n, rb, re, col, val);
}
static sparse_status_t export_csc(sparse_matrix_t d, MKL_INT *m, MKL_INT *n, MKL_INT **cb,
                                  MKL_INT **ce, MKL_INT **row, double **val) {
  sparse_index_base_t ix;
  return mkl_sparse_d_export_csc(d, &ix, m, n, cb, ce, row, val);
}
static sparse_status_t export_bsr(sparse_matrix_t d, MKL_INT *mb, MKL_INT *nb, MKL_INT *bs,
                                  sparse_layout_t *lay, MKL_INT **rb, MKL_INT **re,
                                  MKL_INT **col, double **val) {
  sparse_index_base_t ix;
  return mkl_sparse_d_export_bsr(d, &ix, lay, mb, nb, bs, rb, re, col, val);
}

/* s (op) converted to CSR and exported, as a caller would use it */
static sparse_status_t to_csr(sparse_matrix_t s, sparse_operation_t op, sparse_matrix_t *d) {
  MKL_INT m, n, *rb, *re, *col;
  double *val;
  sparse_status_t st = mkl_sparse_convert_csr(s, op, d);
  return st ? st : export_csr(*d, &m, &n, &rb, &re, &col, &val);
}
static sparse_status_t run_coo_csr(sparse_matrix_t s, sparse_matrix_t *d) {
  return to_csr(s, SPARSE_OPERATION_NON_TRANSPOSE, d);
}
static sparse_status_t run_csr_t(sparse_matrix_t s, sparse_matrix_t *d) {
  return to_csr(s, SPARSE_OPERATION_TRANSPOSE, d);
}
static sparse_status_t run_csc(sparse_matrix_t s, sparse_matrix_t *d) {
  MKL_INT m, n, *cb, *ce, *row;
  double *val;
  sparse_status_t st = mkl_sparse_convert_csc(s, SPARSE_OPERATION_NON_TRANSPOSE, d);
  return st ? st : export_csc(*d, &m, &n, &cb, &ce, &row, &val);
}
static sparse_status_t run_bsr(sparse_matrix_t s, sparse_matrix_t *d) {
  MKL_INT mb, nb, bs, *rb, *re, *col;
  sparse_layout_t lay;
  double *val;
  sparse_status_t st =
      mkl_sparse_convert_bsr(s, 4, SPARSE_LAYOUT_ROW_MAJOR, SPARSE_OPERATION_NON_TRANSPOSE, d);
  return st ? st : export_bsr(*d, &mb, &nb, &bs, &lay, &rb, &re, &col, &val);
}

/* The BSR result against R (the CSR of A): every block row's blocks, each
 * entry of R at its place, and nothing else nonzero in the blocks. */
static const char *check_bsr(sparse_matrix_t d, const ref_csr *R, int *sorted) {
  static char why[160];
  MKL_INT mb, nb, bs, *rb, *re, *col;
  sparse_layout_t lay;
  double *val;
  *sorted = 1;
  if (export_bsr(d, &mb, &nb, &bs, &lay, &rb, &re, &col, &val)) return "export failed";
  if (bs != 4 || mb != (R->m + 3) / 4 || nb != (R->n + 3) / 4) {
    snprintf(why, sizeof why, "block size %d, %dx%d blocks", (int)bs, (int)mb, (int)nb);
    return why;
  }
  MKL_INT base = rb[0];
  int64_t nz = 0, rnz = 0; /* nonzero values in the blocks, in R */
  for (MKL_INT I = 0; I < mb; I++) {
    MKL_INT b = rb[I] - base, e = re[I] - base;
    for (MKL_INT p = b; p + 1 < e; p++)
      if (col[p] >= col[p + 1]) *sorted = 0;
    for (MKL_INT p = 16 * b; p < 16 * e; p++) nz += val[p] != 0;
    for (MKL_INT i = 4 * I; i < 4 * I + 4 && i < R->m; i++)
      for (MKL_INT q = R->ptr[i]; q < R->ptr[i + 1]; q++) {
        MKL_INT J = R->col[q] / 4, p = b;
        while (p < e && col[p] - base != J) p++;
        double v = p < e ? (lay == SPARSE_LAYOUT_ROW_MAJOR ? val[16 * p + 4 * (i % 4) + R->col[q] % 4]
                                                           : val[16 * p + 4 * (R->col[q] % 4) + i % 4])
                         : NAN;
        if (v != R->val[q]) {
          snprintf(why, sizeof why, "entry (%d, %d) = %.17g, expected %.17g", (int)i,
                   (int)R->col[q], v, R->val[q]);
          return why;
        }
        rnz += R->val[q] != 0;
      }
  }
  if (nz != rnz) {
    snprintf(why, sizeof why, "the blocks hold %lld nonzero values, expected %lld", (long long)nz,
             (long long)rnz);
    return why;
  }
  return NULL;
}

/* The padded size of 4 x 4 BCSR: 16 per block that holds an entry. */
static double bcsr_padded(const ref_csr *R) {
  MKL_INT nbc = (R->n + 3) / 4, *seen = (MKL_INT *)malloc(((size_t)nbc + 1) * sizeof(MKL_INT));
  double blocks = 0;
  if (!seen) return 1e300;
  for (MKL_INT J = 0; J <= nbc; J++) seen[J] = -1;
  for (MKL_INT i = 0; i < R->m; i++)
    for (MKL_INT q = R->ptr[i]; q < R->ptr[i + 1]; q++) {
      MKL_INT J = R->col[q] / 4;
      if (seen[J] != i / 4) { seen[J] = i / 4; blocks++; }
    }
  free(seen);
  return 16 * blocks;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_mkl"), fails = 0;
  char method[96];
  mkl_set_num_threads(1);
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tmkl\tread\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (!mkl_peer_fits(&A)) {
      printf("skip\tmkl\t*\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    size_t cap = (size_t)(A.nnz ? A.nnz : 1);
    MKL_INT *ri = (MKL_INT *)malloc(cap * sizeof(MKL_INT)), *ci = (MKL_INT *)malloc(cap * sizeof(MKL_INT));
    ref_csr R;
    sparse_matrix_t coo = NULL, csr = NULL;
    if (!ri || !ci || ref_build(&A, 0, &R)) {
      printf("error\tmkl\tread\t%s\t(out of memory)\n", path);
      fails++;
      free(ri);
      free(ci);
      peer_free(&A);
      continue;
    }
    for (int64_t q = 0; q < A.nnz; q++) {
      ri[q] = (MKL_INT)A.row[q];
      ci[q] = (MKL_INT)A.col[q];
    }
    sparse_status_t st = mkl_sparse_d_create_coo(&coo, SPARSE_INDEX_BASE_ZERO, (MKL_INT)A.m,
                                                 (MKL_INT)A.n, (MKL_INT)A.nnz, ri, ci, A.val);
    if (!st) st = ref_handle(&R, &csr);
    if (st) {
      printf("error\tmkl\tread\t%s\t(handle: %s)\n", path, mkl_status(st));
      fails++;
    }
    static const conv_fn fns[] = {
        {"coo_csr", "convert_csr", run_coo_csr},
        {"csr_csc", "convert_csr(T)", run_csr_t},
        {"csr_csc", "convert_csc", run_csc},
        {"coo_bcsr", "convert_bsr(4,row)", run_bsr},
    };
    ref_csr RT = {0};
    for (size_t k = 0; !st && k < sizeof fns / sizeof fns[0]; k++) {
      const conv_fn *f = &fns[k];
      if (!peer_selected(&o, f->conv)) continue;
      int bsr = !strcmp(f->conv, "coo_bcsr"), csc = !strcmp(f->conv, "csr_csc");
      if (bsr && (A.m % 4 || A.n % 4)) {
        printf("skip\tmkl\t%s\t%s\t(shape %lldx%lld not a multiple of the 4x4 blocks: "
               "mkl_sparse_convert_bsr refuses it)\n", f->conv, path, (long long)A.m, (long long)A.n);
        continue;
      }
      if (bsr) {
        double ps = bcsr_padded(&R);
        if (ps > o.padmax * (double)A.nnz) {
          printf("skip\tmkl\t%s\t%s\t(padded size %.1fx nnz)\n", f->conv, path,
                 ps / (double)(A.nnz ? A.nnz : 1));
          continue;
        }
      }
      if (csc && !RT.ptr && ref_build(&A, 1, &RT)) {
        printf("error\tmkl\t%s\t%s\t(out of memory)\n", f->conv, path);
        fails++;
        continue;
      }
      sparse_matrix_t src = !strcmp(f->conv, "csr_csc") ? csr : coo;
      peer_timer t;
      peer_timer_init(&t);
      const char *bad = NULL;
      int sorted = 1;
      sparse_status_t rs = SPARSE_STATUS_SUCCESS;
      while (peer_more(&t, &o)) {
        sparse_matrix_t d = NULL;
        peer_start(&t);
        rs = f->run(src, &d);
        peer_stop(&t);
        if (rs) { mkl_sparse_destroy(d); break; }
        if (t.r == 1) { /* check the first result */
          MKL_INT m, n, *rb, *re, *col;
          double *val;
          if (bsr) bad = check_bsr(d, &R, &sorted);
          else if (f->run == run_csc) {
            if (export_csc(d, &m, &n, &rb, &re, &col, &val)) bad = "export failed";
            else bad = ref_same(&RT, n, m, rb, re, col, val, &sorted);
          } else {
            if (export_csr(d, &m, &n, &rb, &re, &col, &val)) bad = "export failed";
            else bad = ref_same(csc ? &RT : &R, m, n, rb, re, col, val, &sorted);
          }
        }
        mkl_sparse_destroy(d);
        if (bad) break;
      }
      if (rs) {
        printf("error\tmkl\t%s\t%s\t(%s: %s)\n", f->conv, path, f->method, mkl_status(rs));
        fails++;
      } else if (bad) {
        printf("error\tmkl\t%s\t%s\t(%s: result differs from the reference: %s)\n", f->conv,
               path, f->method, bad);
        fails++;
      } else {
        snprintf(method, sizeof method, "mkl_sparse_%s/mkl-%s", f->method, mkl_version_word());
        peer_print("mkl", f->conv, &t, &A, path, method, sorted);
      }
    }
    mkl_sparse_destroy(coo);
    mkl_sparse_destroy(csr);
    ref_free(&R);
    ref_free(&RT);
    free(ri);
    free(ci);
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
