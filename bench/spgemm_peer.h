/* spgemm_peer.h -- what the C/C++ SpGEMM peers of spgemm_bench share: the
 * input (conv_peer.h's loader: a Matrix Market file or the COO cache,
 * symmetric storage expanded), the product asked (A A when square, A A^T
 * otherwise, the transpose made untimed) and the output line
 *   TOOL spgemm SECONDS NNZ(C) FILE
 * Options: -r R, -b SEC as conv_peer.h. */
#ifndef SPGEMM_PEER_H
#define SPGEMM_PEER_H
#include "conv_peer.h"
/* (conv_peer.h's helpers this header does not use) */
static inline void spgemm_peer_unused(void) { (void)peer_print; (void)peer_selected; }

/* B = A (square) or A^T (rectangular), as a COO: the operand the product
 * takes on the right */
static int peer_right(const peer_coo *A, peer_coo *B) {
  if (peer_alloc(B, A->nnz)) return -1;
  int sq = A->m == A->n;
  B->m = sq ? A->m : A->n;
  B->n = sq ? A->n : A->m;
  B->nnz = A->nnz;
  B->sorted = sq ? A->sorted : 0;
  for (int64_t q = 0; q < A->nnz; q++) {
    B->row[q] = sq ? A->row[q] : A->col[q];
    B->col[q] = sq ? A->col[q] : A->row[q];
    B->val[q] = A->val[q];
  }
  return 0;
}

static inline void peer_spgemm_line(const char *tool, double best, long long nnz, const char *file) {
  printf("%s\tspgemm\t%.9f\t%lld\t%s\n", tool, best, nnz, file);
  fflush(stdout);
}
/* the line with the count of C's rows whose columns are not ascending (a
 * peer that leaves them so is a peer of spconv's --unsorted product) */
static inline void peer_spgemm_line_rows(const char *tool, double best, long long nnz, const char *file,
                                         long long unsorted) {
  printf("%s\tspgemm\t%.9f\t%lld\t%s\tunsorted_rows=%lld\n", tool, best, nnz, file, unsorted);
  fflush(stdout);
}
#endif
