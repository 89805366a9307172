/* peer_cxsparse.c -- CXSparse (SuiteSparse) conversions: a peer of
 * conv_bench (options, input and output line in conv_peer.h).
 *
 *   coo_csr  cs_compress of the triplets with rows and columns swapped: the
 *            CSC of A^T, which is the CSR of A.  cs_compress neither sorts
 *            nor sums: for unsorted input its rows come out unsorted
 *            (method=cs_compress, sorted=0).  The like-for-like result,
 *            sorted rows, is cs_compress then cs_transpose twice (CSparse's
 *            way to sort; method=cs_compress+2cs_transpose); for sorted
 *            input cs_compress alone is already sorted.
 *   csr_csc  cs_transpose (values too) of that CSR (as the CSC of A^T).
 * Only the calls are timed; the triplet form and the CSR source are built
 * before.  int indices (cs_di) when they fit, as conv_bench's model counts
 * 4-byte indices; single-threaded.  CXSparse has no DIA, ELL or BCSR. */
#include "conv_peer.h"
#include <limits.h>
#include <suitesparse/cs.h>

/* The triplet form of A^T: rows of A as columns. */
static cs_di *triplets_t(const peer_coo *A) {
  cs_di *T = cs_di_spalloc((int)A->n, (int)A->m, (int)(A->nnz ? A->nnz : 1), 1, 1);
  if (!T) return NULL;
  for (int64_t q = 0; q < A->nnz; q++) {
    T->i[q] = (int)A->col[q];
    T->p[q] = (int)A->row[q];
    T->x[q] = A->val[q];
  }
  T->nz = (int)A->nnz;
  return T;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_cxsparse"), fails = 0;
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tcxsparse\tread\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (A.nnz >= INT_MAX || A.m >= INT_MAX || A.n >= INT_MAX) {
      printf("skip\tcxsparse\t*\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    cs_di *T = triplets_t(&A);
    if (!T) { printf("error\tcxsparse\tread\t%s\t(out of memory)\n", path); fails++; peer_free(&A); continue; }
    peer_timer t;
    if (peer_selected(&o, "coo_csr")) {
      peer_timer_init(&t);
      while (peer_more(&t, &o)) {
        peer_start(&t);
        cs_di *C = cs_di_compress(T);
        peer_stop(&t);
        if (!C) { t.best = -1; break; }
        cs_di_spfree(C);
      }
      if (t.best < 0) { printf("error\tcxsparse\tcoo_csr\t%s\t(cs_compress failed)\n", path); fails++; }
      else peer_print("cxsparse", "coo_csr", &t, &A, path, "cs_compress", A.sorted);
      if (!A.sorted && t.best >= 0) {
        peer_timer_init(&t);
        while (peer_more(&t, &o)) {
          peer_start(&t);
          cs_di *C = cs_di_compress(T), *D = C ? cs_di_transpose(C, 1) : NULL;
          cs_di_spfree(C);
          C = D ? cs_di_transpose(D, 1) : NULL;
          peer_stop(&t);
          cs_di_spfree(D);
          if (!C) { t.best = -1; break; }
          cs_di_spfree(C);
        }
        if (t.best >= 0)
          peer_print("cxsparse", "coo_csr", &t, &A, path, "cs_compress+2cs_transpose", 1);
      }
    }
    if (peer_selected(&o, "csr_csc")) {
      /* the sorted CSR (CSC of A^T), made untimed */
      cs_di *C = cs_di_compress(T), *D = C ? cs_di_transpose(C, 1) : NULL;
      cs_di_spfree(C);
      C = D ? cs_di_transpose(D, 1) : NULL;
      cs_di_spfree(D);
      peer_timer_init(&t);
      while (C && peer_more(&t, &o)) {
        peer_start(&t);
        cs_di *R = cs_di_transpose(C, 1);
        peer_stop(&t);
        if (!R) { t.best = -1; break; }
        cs_di_spfree(R);
      }
      if (!C || t.best < 0) { printf("error\tcxsparse\tcsr_csc\t%s\t(cs_transpose failed)\n", path); fails++; }
      else peer_print("cxsparse", "csr_csc", &t, &A, path, "cs_transpose", 1);
      cs_di_spfree(C);
    }
    cs_di_spfree(T);
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
