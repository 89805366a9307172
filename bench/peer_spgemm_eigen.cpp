// peer_spgemm_eigen.cpp -- Eigen sparse * sparse: a peer of spgemm_bench
// (spgemm_peer.h).  Operands row-major SparseMatrix<double> built untimed
// (setFromTriplets); the timed statement is C = A * B (Eigen's conservative
// product: sorted result, one thread).
#include "spgemm_peer.h"
#include <Eigen/SparseCore>
#include <vector>

typedef Eigen::SparseMatrix<double, Eigen::RowMajor, int64_t> Mat;

static void build(const peer_coo &A, Mat &M) {
  std::vector<Eigen::Triplet<double, int64_t>> t;
  t.reserve((size_t)A.nnz);
  for (int64_t q = 0; q < A.nnz; q++) t.emplace_back(A.row[q], A.col[q], A.val[q]);
  M.resize(A.m, A.n);
  M.setFromTriplets(t.begin(), t.end());
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spgemm_eigen");
  for (; i < argc; i++) {
    char why[256];
    peer_coo A, B;
    if (peer_load(argv[i], &A, why, sizeof why) || peer_right(&A, &B)) {
      printf("skip\teigen\tspgemm\t%s\t(%s)\n", argv[i], why);
      continue;
    }
    Mat a, b;
    build(A, a);
    build(B, b);
    peer_timer t;
    peer_timer_init(&t);
    long long nnz = 0, unsorted = 0;
    while (peer_more(&t, &o)) {
      Mat c;
      peer_start(&t);
      c = a * b;
      peer_stop(&t);
      nnz = (long long)c.nonZeros();
      if (t.r == 1) /* C's outer vectors whose inner indices are not ascending */
        for (int k = 0; k < c.outerSize(); k++) {
          long long prev = -1;
          for (Mat::InnerIterator it(c, k); it; ++it) {
            if ((long long)it.index() < prev) {
              unsorted++;
              break;
            }
            prev = (long long)it.index();
          }
        }
    }
    peer_spgemm_line_rows("eigen", t.best, nnz, argv[i], unsorted);
    peer_free(&A);
    peer_free(&B);
  }
  return 0;
}
