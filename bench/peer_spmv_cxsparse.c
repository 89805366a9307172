/* peer_spmv_cxsparse.c -- CXSparse cs_gaxpy (y += A x on CSC): a peer of
 * spmv_bench (spmv_peer.h).  A is held as the CSC of A (cs_compress of the
 * triplets, untimed); y is zeroed inside the timed region.  int indices
 * (cs_di); single-threaded: thread counts above 1 are skipped. */
#include "spmv_peer.h"
#include <limits.h>
#include <suitesparse/cs.h>

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spmv_cxsparse"), fails = 0, th[8];
  int nth = spmv_threads(th, 8);
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tcxsparse\tspmv\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (A.nnz >= INT_MAX || A.m >= INT_MAX || A.n >= INT_MAX) {
      printf("skip\tcxsparse\tspmv\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    cs_di *T = cs_di_spalloc((int)A.m, (int)A.n, (int)(A.nnz ? A.nnz : 1), 1, 1), *C = NULL;
    for (int64_t q = 0; T && q < A.nnz; q++) {
      T->i[q] = (int)A.row[q];
      T->p[q] = (int)A.col[q];
      T->x[q] = A.val[q];
    }
    if (T) T->nz = (int)A.nnz;
    if (T) C = cs_di_compress(T);
    double *x = malloc((size_t)(A.n ? A.n : 1) * 8), *y = calloc((size_t)(A.m ? A.m : 1), 8);
    if (!C || !x || !y) {
      printf("error\tcxsparse\tspmv\t%s\t(out of memory)\n", path);
      fails++;
    } else {
      for (int64_t j = 0; j < A.n; j++) x[j] = spmv_xval(j);
      for (int t = 0; t < nth; t++) {
        if (th[t] != 1) {
          printf("skip\tcxsparse\tspmv\t%s\t(single-threaded: %d threads)\n", path, th[t]);
          continue;
        }
        peer_timer tm;
        peer_timer_init(&tm);
        o.budget = 1e9;
        while (peer_more(&tm, &o)) {
          peer_start(&tm);
          memset(y, 0, (size_t)A.m * 8);
          cs_di_gaxpy(C, x, y);
          peer_stop(&tm);
        }
        spmv_print("cxsparse", tm.best, &A, path, "cs_gaxpy(csc)", 1, y, A.m);
      }
    }
    free(x);
    free(y);
    cs_di_spfree(C);
    cs_di_spfree(T);
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
