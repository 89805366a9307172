/* peer_spgemm_cxsparse.c -- CXSparse cs_multiply: a peer of spgemm_bench
 * (input, product and output line in spgemm_peer.h).  The operands are
 * compressed untimed (cs_compress, int indices); C = A B by cs_multiply
 * (a Gustavson by columns with a dense marker, one thread; its row
 * indices are not sorted within a column). */
#include "spgemm_peer.h"
#include <suitesparse/cs.h>

static cs_di *compress(const peer_coo *A) {
  cs_di *T = cs_di_spalloc((int)A->m, (int)A->n, (int)(A->nnz ? A->nnz : 1), 1, 1);
  if (!T) return NULL;
  for (int64_t q = 0; q < A->nnz; q++) cs_di_entry(T, (int)A->row[q], (int)A->col[q], A->val[q]);
  cs_di *C = cs_di_compress(T);
  cs_di_spfree(T);
  if (C) cs_di_dupl(C);
  return C;
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spgemm_cxsparse");
  for (; i < argc; i++) {
    char why[256];
    peer_coo A, B;
    if (peer_load(argv[i], &A, why, sizeof why) || peer_right(&A, &B)) {
      printf("skip\tcxsparse\tspgemm\t%s\t(%s)\n", argv[i], why);
      continue;
    }
    cs_di *a = compress(&A), *b = compress(&B);
    peer_timer t;
    peer_timer_init(&t);
    long long nnz = -1, unsorted = 0;
    while (a && b && peer_more(&t, &o)) {
      peer_start(&t);
      cs_di *c = cs_di_multiply(a, b);
      peer_stop(&t);
      nnz = c ? c->p[c->n] : -1;
      if (c && t.r == 1) /* C = A B as the CSC of (A B)^T: its columns are C's rows */
        for (int j = 0; j < c->n; j++)
          for (int p = c->p[j] + 1; p < c->p[j + 1]; p++)
            if (c->i[p] < c->i[p - 1]) {
              unsorted++;
              break;
            }
      cs_di_spfree(c);
    }
    if (nnz < 0) printf("error\tcxsparse\tspgemm\t%s\t(out of memory)\n", argv[i]);
    else peer_spgemm_line_rows("cxsparse", t.best, nnz, argv[i], unsorted);
    cs_di_spfree(a);
    cs_di_spfree(b);
    peer_free(&A);
    peer_free(&B);
  }
  return 0;
}
