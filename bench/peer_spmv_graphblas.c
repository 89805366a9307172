/* peer_spmv_graphblas.c -- SuiteSparse:GraphBLAS GrB_mxv with the
 * PLUS_TIMES semiring on FP64: a peer of spmv_bench (spmv_peer.h).  A is
 * built by row (GxB_BY_ROW, kept sparse: CSR with 64-bit indices) and x is
 * a full vector, untimed; each timed run overwrites y (no mask, no
 * accumulator) and waits for it (GrB_Vector_wait).  Threads: GxB_NTHREADS. */
#include "spmv_peer.h"
#include <GraphBLAS.h>

#define OK(call) ((call) == GrB_SUCCESS)

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spmv_graphblas"), fails = 0, th[8];
  int nth = spmv_threads(th, 8);
  if (!OK(GrB_init(GrB_NONBLOCKING))) {
    fprintf(stderr, "peer_spmv_graphblas: GrB_init failed\n");
    return 1;
  }
  GxB_Global_Option_set(GxB_BURBLE, 0);
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tgraphblas\tspmv\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    GrB_Index nn = (GrB_Index)A.nnz, *I = malloc((nn ? nn : 1) * sizeof *I), *J = malloc((nn ? nn : 1) * sizeof *J);
    GrB_Index nx = (GrB_Index)A.n, *X = malloc((nx ? nx : 1) * sizeof *X);
    double *xv = malloc((nx ? nx : 1) * 8), *yv = malloc((A.m ? (size_t)A.m : 1) * 8);
    GrB_Matrix M = NULL;
    GrB_Vector x = NULL, y = NULL;
    int ok = I && J && X && xv && yv;
    for (GrB_Index q = 0; ok && q < nn; q++) I[q] = (GrB_Index)A.row[q], J[q] = (GrB_Index)A.col[q];
    for (GrB_Index j = 0; ok && j < nx; j++) X[j] = j, xv[j] = spmv_xval((int64_t)j);
    GxB_Global_Option_set(GxB_NTHREADS, 2);
    ok = ok && OK(GrB_Matrix_new(&M, GrB_FP64, (GrB_Index)A.m, nx)) &&
         OK(GxB_Matrix_Option_set(M, GxB_SPARSITY_CONTROL, GxB_SPARSE)) &&
         OK(GxB_Matrix_Option_set(M, GxB_FORMAT, GxB_BY_ROW)) &&
         OK(GrB_Matrix_build_FP64(M, I, J, A.val, nn, GrB_PLUS_FP64)) &&
         OK(GrB_Matrix_wait(M, GrB_MATERIALIZE)) && OK(GrB_Vector_new(&x, GrB_FP64, nx)) &&
         OK(GrB_Vector_build_FP64(x, X, xv, nx, GrB_PLUS_FP64)) && OK(GrB_Vector_wait(x, GrB_MATERIALIZE)) &&
         OK(GrB_Vector_new(&y, GrB_FP64, (GrB_Index)A.m));
    if (!ok) {
      printf("error\tgraphblas\tspmv\t%s\t(set-up failed)\n", path);
      fails++;
    }
    for (int t = 0; ok && t < nth; t++) {
      GxB_Global_Option_set(GxB_NTHREADS, th[t]);
      peer_timer tm;
      peer_timer_init(&tm);
      o.budget = 1e9;
      while (ok && peer_more(&tm, &o)) {
        peer_start(&tm);
        ok = OK(GrB_mxv(y, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, M, x, NULL)) &&
             OK(GrB_Vector_wait(y, GrB_MATERIALIZE));
        peer_stop(&tm);
      }
      memset(yv, 0, (A.m ? (size_t)A.m : 1) * 8);
      for (GrB_Index r = 0; ok && r < (GrB_Index)A.m; r++) {
        double v;
        if (GrB_Vector_extractElement_FP64(&v, y, r) == GrB_SUCCESS) yv[r] = v;
      }
      if (ok) spmv_print("graphblas", tm.best, &A, path, "GrB_mxv(csr)", th[t], yv, A.m);
      else printf("error\tgraphblas\tspmv\t%s\t(GrB_mxv failed)\n", path);
    }
    GrB_Matrix_free(&M);
    GrB_Vector_free(&x);
    GrB_Vector_free(&y);
    free(I);
    free(J);
    free(X);
    free(xv);
    free(yv);
    peer_free(&A);
  }
  GrB_finalize();
  return fails ? 1 : 0;
}
