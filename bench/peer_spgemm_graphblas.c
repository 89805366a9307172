/* peer_spgemm_graphblas.c -- SuiteSparse:GraphBLAS GrB_mxm with the
 * PLUS_TIMES semiring on FP64: a peer of spgemm_bench (spgemm_peer.h).
 * Operands built untimed, held by row and sparse (no hypersparse or
 * bitmap); the timed call is GrB_mxm + GrB_Matrix_wait (materialized), on
 * GxB_NTHREADS threads (OMP_NUM_THREADS, default 1).  GraphBLAS picks its
 * own method (Gustavson, hash or dot) per product. */
#include "spgemm_peer.h"
#include <GraphBLAS.h>
#include <stdbool.h>

#define OK(call) ((call) == GrB_SUCCESS)

static GrB_Matrix build(const peer_coo *A) {
  GrB_Matrix M = NULL;
  GrB_Index n = (GrB_Index)(A->nnz ? A->nnz : 1);
  GrB_Index *I = malloc(n * sizeof *I), *J = malloc(n * sizeof *J);
  bool ok = I && J && OK(GrB_Matrix_new(&M, GrB_FP64, (GrB_Index)A->m, (GrB_Index)A->n));
  if (ok) {
    GxB_Matrix_Option_set(M, GxB_SPARSITY_CONTROL, GxB_SPARSE);
    GxB_Matrix_Option_set(M, GxB_FORMAT, GxB_BY_ROW);
    for (int64_t q = 0; q < A->nnz; q++) I[q] = (GrB_Index)A->row[q], J[q] = (GrB_Index)A->col[q];
    ok = OK(GrB_Matrix_build_FP64(M, I, J, A->val, (GrB_Index)A->nnz, GrB_PLUS_FP64)) &&
         OK(GrB_Matrix_wait(M, GrB_MATERIALIZE));
  }
  free(I);
  free(J);
  if (!ok) GrB_Matrix_free(&M);
  return M;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spgemm_graphblas");
  if (!OK(GrB_init(GrB_NONBLOCKING))) return 1;
  const char *nt = getenv("OMP_NUM_THREADS");
  GxB_Global_Option_set(GxB_NTHREADS, nt ? atoi(nt) : 1);
  GxB_Global_Option_set(GxB_BURBLE, 0);
  for (; i < argc; i++) {
    char why[256];
    peer_coo A, B;
    if (peer_load(argv[i], &A, why, sizeof why) || peer_right(&A, &B)) {
      printf("skip\tgraphblas\tspgemm\t%s\t(%s)\n", argv[i], why);
      continue;
    }
    GrB_Matrix a = build(&A), b = build(&B);
    peer_timer t;
    peer_timer_init(&t);
    GrB_Index nv = 0;
    bool ok = a && b;
    while (ok && peer_more(&t, &o)) {
      GrB_Matrix C = NULL;
      ok = OK(GrB_Matrix_new(&C, GrB_FP64, (GrB_Index)A.m, (GrB_Index)B.n));
      if (ok) GxB_Matrix_Option_set(C, GxB_FORMAT, GxB_BY_ROW);
      peer_start(&t);
      ok = ok && OK(GrB_mxm(C, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, a, b, NULL)) &&
           OK(GrB_Matrix_wait(C, GrB_MATERIALIZE));
      peer_stop(&t);
      if (ok) GrB_Matrix_nvals(&nv, C);
      GrB_Matrix_free(&C);
    }
    if (!ok) printf("error\tgraphblas\tspgemm\t%s\t(GrB_mxm failed)\n", argv[i]);
    else peer_spgemm_line("graphblas", t.best, (long long)nv, argv[i]);
    GrB_Matrix_free(&a);
    GrB_Matrix_free(&b);
    peer_free(&A);
    peer_free(&B);
  }
  GrB_finalize();
  return 0;
}
