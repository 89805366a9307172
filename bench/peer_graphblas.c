/* peer_graphblas.c -- SuiteSparse:GraphBLAS conversions: a peer of
 * conv_bench (options, input and output line in conv_peer.h).
 *
 *   coo_csr  GrB_Matrix_new + GrB_Matrix_build_FP64 (dup PLUS) of a matrix
 *            held by row (GxB_BY_ROW, sparse: CSR) + GrB_Matrix_wait
 *            (GrB_MATERIALIZE), so nothing is left pending.  The build
 *            sorts and sums: its result is like spconv's.
 *   csr_csc  from that CSR, two methods (the table takes the faster):
 *            GxB_FORMAT: GxB_Matrix_Option_set(D, GxB_FORMAT, GxB_BY_COL) on
 *              a copy D of the CSR (the copy, GrB_Matrix_dup, is untimed):
 *              the storage-order change in place;
 *            GrB_transpose: C = A' into a new matrix held by row, which is
 *              the CSC of A.
 * Every matrix is kept sparse (GxB_SPARSITY_CONTROL = GxB_SPARSE: no
 * hypersparse or bitmap forms) and GraphBLAS runs one thread
 * (GxB_NTHREADS = 1).  The index arrays of the build are GrB_Index
 * (uint64), made untimed.  GraphBLAS has no DIA, ELL or BCSR. */
#include "conv_peer.h"
#include <GraphBLAS.h>

#define OK(call) ((call) == GrB_SUCCESS)

static GrB_Matrix new_sparse(GrB_Index m, GrB_Index n, GxB_Format_Value by) {
  GrB_Matrix A = NULL;
  if (!OK(GrB_Matrix_new(&A, GrB_FP64, m, n))) return NULL;
  GxB_Matrix_Option_set(A, GxB_SPARSITY_CONTROL, GxB_SPARSE);
  GxB_Matrix_Option_set(A, GxB_FORMAT, by);
  return A;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_graphblas"), fails = 0;
  if (!OK(GrB_init(GrB_NONBLOCKING))) { fprintf(stderr, "peer_graphblas: GrB_init failed\n"); return 1; }
  GxB_Global_Option_set(GxB_NTHREADS, 1);
  GxB_Global_Option_set(GxB_BURBLE, 0);
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tgraphblas\tread\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    size_t nn = (size_t)(A.nnz ? A.nnz : 1);
    GrB_Index *I = malloc(nn * sizeof *I), *J = malloc(nn * sizeof *J);
    for (int64_t q = 0; q < A.nnz; q++) {
      I[q] = (GrB_Index)A.row[q];
      J[q] = (GrB_Index)A.col[q];
    }
    GrB_Index m = (GrB_Index)A.m, n = (GrB_Index)A.n, nv = (GrB_Index)A.nnz;
    peer_timer t;
    GrB_Matrix S = NULL; /* the CSR source of csr_csc */
    if (peer_selected(&o, "coo_csr") || peer_selected(&o, "csr_csc")) {
      int ok = 1;
      peer_timer_init(&t);
      do {
        GrB_Matrix B = NULL;
        peer_start(&t);
        B = new_sparse(m, n, GxB_BY_ROW);
        ok = B && OK(GrB_Matrix_build_FP64(B, I, J, A.val, nv, GrB_PLUS_FP64)) &&
             OK(GrB_Matrix_wait(B, GrB_MATERIALIZE));
        peer_stop(&t);
        if (!ok) { GrB_Matrix_free(&B); break; }
        if (S) GrB_Matrix_free(&S);
        S = B;
      } while (peer_selected(&o, "coo_csr") && peer_more(&t, &o));
      if (!ok) {
        printf("error\tgraphblas\tcoo_csr\t%s\t(GrB_Matrix_build failed)\n", path);
        fails++;
      } else if (peer_selected(&o, "coo_csr")) {
        peer_print("graphblas", "coo_csr", &t, &A, path, "GrB_Matrix_build", 1);
      }
    }
    if (S && peer_selected(&o, "csr_csc")) {
      int ok = 1;
      peer_timer_init(&t);
      while (ok && peer_more(&t, &o)) {
        GrB_Matrix D = NULL;
        ok = OK(GrB_Matrix_dup(&D, S)) && OK(GrB_Matrix_wait(D, GrB_MATERIALIZE));
        if (ok) {
          peer_start(&t);
          ok = OK(GxB_Matrix_Option_set(D, GxB_FORMAT, GxB_BY_COL)) &&
               OK(GrB_Matrix_wait(D, GrB_MATERIALIZE));
          peer_stop(&t);
        }
        GrB_Matrix_free(&D);
      }
      if (ok) peer_print("graphblas", "csr_csc", &t, &A, path, "GxB_FORMAT", 1);
      peer_timer_init(&t);
      while (ok && peer_more(&t, &o)) {
        peer_start(&t);
        GrB_Matrix C = new_sparse(n, m, GxB_BY_ROW);
        ok = C && OK(GrB_transpose(C, NULL, NULL, S, NULL)) &&
             OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
        peer_stop(&t);
        GrB_Matrix_free(&C);
      }
      if (ok) peer_print("graphblas", "csr_csc", &t, &A, path, "GrB_transpose", 1);
      else { printf("error\tgraphblas\tcsr_csc\t%s\t(transpose failed)\n", path); fails++; }
    }
    GrB_Matrix_free(&S);
    free(I);
    free(J);
    peer_free(&A);
  }
  GrB_finalize();
  return fails ? 1 : 0;
}
