/* mkl_peer.h -- what the Intel MKL peers (peer_mkl.c, peer_spmv_mkl.c,
 * peer_spgemm_mkl.c) share on top of conv_peer.h: the reference CSR every
 * MKL result is checked against, made untimed by plain code here (not by
 * MKL), and MKL's status names.
 *
 * MKL's inspector-executor sparse BLAS (mkl_spblas.h), LP64 interface:
 * MKL_INT is a 4-byte int, as conv_bench's model counts 4-byte indices;
 * inputs whose sizes do not fit are skipped.  Zero-based indexing.  The
 * Makefile links the sequential layer (libmkl_sequential) for conversions
 * and SpGEMM, the GNU OpenMP layer (libmkl_gnu_thread) for SpMV, whose
 * thread count is set per run (mkl_set_num_threads). */
#ifndef MKL_PEER_H
#define MKL_PEER_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* the helpers a peer does not use */
#include "conv_peer.h"
#include <limits.h>
#include <math.h>
#include <mkl.h>
#include <mkl_spblas.h>

/* A CSR with 4-byte indices: rows sorted by column, duplicates summed. */
typedef struct ref_csr {
  MKL_INT m, n, nnz;
  MKL_INT *ptr, *col;
  double *val;
} ref_csr;

static void ref_free(ref_csr *R) {
  free(R->ptr);
  free(R->col);
  free(R->val);
  memset(R, 0, sizeof *R);
}

static int mkl_peer_fits(const peer_coo *A) {
  return A->m < INT_MAX && A->n < INT_MAX && A->nnz < INT_MAX;
}

/* R = A (transpose 0) or A^T (transpose 1), from the COO: a counting sort
 * by row, then by column within each row (insertion sort of short rows,
 * qsort of long ones), duplicates summed.  0 ok, -1 out of memory. */
static int cmp_colval(const void *a, const void *b) {
  const MKL_INT *x = (const MKL_INT *)a, *y = (const MKL_INT *)b;
  return (*x > *y) - (*x < *y);
}
static int ref_build(const peer_coo *A, int transpose, ref_csr *R) {
  MKL_INT m = (MKL_INT)(transpose ? A->n : A->m), n = (MKL_INT)(transpose ? A->m : A->n);
  const int64_t *ri = transpose ? A->col : A->row, *ci = transpose ? A->row : A->col;
  size_t cap = (size_t)(A->nnz ? A->nnz : 1);
  memset(R, 0, sizeof *R);
  R->m = m;
  R->n = n;
  R->ptr = (MKL_INT *)calloc((size_t)m + 1, sizeof(MKL_INT));
  R->col = (MKL_INT *)malloc(cap * sizeof(MKL_INT));
  R->val = (double *)malloc(cap * sizeof(double));
  /* (col, position) pairs to sort a row by column, stable by position */
  MKL_INT *pair = (MKL_INT *)malloc(2 * cap * sizeof(MKL_INT));
  MKL_INT *next = (MKL_INT *)malloc(((size_t)m + 1) * sizeof(MKL_INT));
  if (!R->ptr || !R->col || !R->val || !pair || !next) {
    free(pair);
    free(next);
    ref_free(R);
    return -1;
  }
  for (int64_t q = 0; q < A->nnz; q++) R->ptr[ri[q] + 1]++;
  for (MKL_INT i = 0; i < m; i++) R->ptr[i + 1] += R->ptr[i];
  memcpy(next, R->ptr, ((size_t)m + 1) * sizeof(MKL_INT));
  for (int64_t q = 0; q < A->nnz; q++) {
    MKL_INT p = next[ri[q]]++;
    pair[2 * p] = (MKL_INT)ci[q];
    pair[2 * p + 1] = (MKL_INT)q;
  }
  MKL_INT out = 0;
  for (MKL_INT i = 0; i < m; i++) {
    MKL_INT b = R->ptr[i], e = R->ptr[i + 1];
    /* sort by (col, position): position order keeps the sum's order */
    if (e - b > 32) {
      qsort(pair + 2 * b, (size_t)(e - b), 2 * sizeof(MKL_INT), cmp_colval);
      /* qsort is not stable: order equal columns by position */
      for (MKL_INT p = b + 1; p < e; p++)
        for (MKL_INT r = p; r > b && pair[2 * r] == pair[2 * r - 2] &&
                            pair[2 * r + 1] < pair[2 * r - 1]; r--) {
          MKL_INT t = pair[2 * r + 1];
          pair[2 * r + 1] = pair[2 * r - 1];
          pair[2 * r - 1] = t;
        }
    } else {
      for (MKL_INT p = b + 1; p < e; p++)
        for (MKL_INT r = p; r > b && pair[2 * r] < pair[2 * r - 2]; r--) {
          MKL_INT c = pair[2 * r], t = pair[2 * r + 1];
          pair[2 * r] = pair[2 * r - 2];
          pair[2 * r + 1] = pair[2 * r - 1];
          pair[2 * r - 2] = c;
          pair[2 * r - 1] = t;
        }
    }
    R->ptr[i] = out;
    for (MKL_INT p = b; p < e; p++) {
      double v = A->val[pair[2 * p + 1]];
      if (out > R->ptr[i] && R->col[out - 1] == pair[2 * p]) R->val[out - 1] += v;
      else {
        R->col[out] = pair[2 * p];
        R->val[out++] = v;
      }
    }
  }
  R->ptr[m] = out;
  R->nnz = out;
  free(pair);
  free(next);
  return 0;
}

/* Does the CSR (ptr begin/end, zero-based) equal R exactly?  Rows may come
 * with their columns unsorted: *sorted says whether they were; the check
 * then sorts a copy of the row.  Returns NULL when equal, else why. */
static const char *ref_same(const ref_csr *R, MKL_INT m, MKL_INT n, const MKL_INT *rb,
                            const MKL_INT *re, const MKL_INT *col, const double *val,
                            int *sorted) {
  static char why[160];
  *sorted = 1;
  if (m != R->m || n != R->n) {
    snprintf(why, sizeof why, "shape %dx%d, expected %dx%d", (int)m, (int)n, (int)R->m, (int)R->n);
    return why;
  }
  MKL_INT base = rb[0];
  for (MKL_INT i = 0; i < m; i++) {
    MKL_INT b = rb[i] - base, e = re[i] - base, k = R->ptr[i];
    if (e - b != R->ptr[i + 1] - k) {
      snprintf(why, sizeof why, "row %d holds %d entries, expected %d", (int)i, (int)(e - b),
               (int)(R->ptr[i + 1] - k));
      return why;
    }
    for (MKL_INT p = b; p + 1 < e; p++)
      if (col[p] >= col[p + 1]) *sorted = 0;
    for (MKL_INT p = b; p < e; p++) {
      MKL_INT q = k + (p - b);
      if (!*sorted) /* find the column in the reference row */
        for (q = k; q < R->ptr[i + 1] && R->col[q] != col[p]; q++) {}
      if (q >= R->ptr[i + 1] || R->col[q] != col[p] || R->val[q] != val[p]) {
        snprintf(why, sizeof why, "row %d, entry %d: (%d, %.17g) not in the reference", (int)i,
                 (int)(p - b), (int)col[p], val[p]);
        return why;
      }
    }
  }
  return NULL;
}

/* An MKL CSR handle over R's arrays (MKL does not copy them). */
static sparse_status_t ref_handle(const ref_csr *R, sparse_matrix_t *H) {
  return mkl_sparse_d_create_csr(H, SPARSE_INDEX_BASE_ZERO, R->m, R->n, R->ptr, R->ptr + 1,
                                 R->col, R->val);
}

static const char *mkl_status(sparse_status_t s) {
  switch (s) {
  case SPARSE_STATUS_SUCCESS: return "success";
  case SPARSE_STATUS_NOT_INITIALIZED: return "not initialized";
  case SPARSE_STATUS_ALLOC_FAILED: return "allocation failed";
  case SPARSE_STATUS_INVALID_VALUE: return "invalid value";
  case SPARSE_STATUS_EXECUTION_FAILED: return "execution failed";
  case SPARSE_STATUS_INTERNAL_ERROR: return "internal error";
  case SPARSE_STATUS_NOT_SUPPORTED: return "not supported";
  }
  return "unknown status";
}

/* "mkl-2026.2" style version words for the method field */
static const char *mkl_version_word(void) {
  static char w[32];
  MKLVersion v;
  mkl_get_version(&v);
  snprintf(w, sizeof w, "%d.%d", v.MajorVersion, v.UpdateVersion);
  return w;
}

#pragma GCC diagnostic pop
#endif
