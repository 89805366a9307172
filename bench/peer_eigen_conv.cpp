// peer_eigen_conv.cpp -- Eigen conversions: a peer of conv_bench (options,
// input and output line in conv_peer.h).
//
//   coo_csr  SparseMatrix<double, RowMajor, int>::setFromTriplets of a
//            std::vector<Triplet<double, int>> (built untimed): sorts and
//            sums duplicates, the result compressed.
//   csr_csc  SparseMatrix<double, ColMajor, int> B = A from that RowMajor
//            matrix: Eigen's storage-order change (a transposing copy).
// Single-threaded.  Eigen has no DIA, ELL or BCSR.
#include "conv_peer.h"
#include <Eigen/SparseCore>
#include <climits>
#include <vector>

typedef Eigen::SparseMatrix<double, Eigen::RowMajor, int> Csr;
typedef Eigen::SparseMatrix<double, Eigen::ColMajor, int> Csc;

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_eigen_conv"), fails = 0;
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      std::printf("error\teigen\tread\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (A.nnz >= INT_MAX || A.m >= INT_MAX || A.n >= INT_MAX) {
      std::printf("skip\teigen\t*\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    std::vector<Eigen::Triplet<double, int>> tr;
    tr.reserve((size_t)A.nnz);
    for (int64_t q = 0; q < A.nnz; q++)
      tr.emplace_back((int)A.row[q], (int)A.col[q], A.val[q]);
    peer_timer t;
    Csr S;
    if (peer_selected(&o, "coo_csr") || peer_selected(&o, "csr_csc")) {
      peer_timer_init(&t);
      do {
        Csr B;
        peer_start(&t);
        B.resize((Eigen::Index)A.m, (Eigen::Index)A.n);
        B.setFromTriplets(tr.begin(), tr.end());
        peer_stop(&t);
        S.swap(B);
      } while (peer_selected(&o, "coo_csr") && peer_more(&t, &o));
      if (peer_selected(&o, "coo_csr"))
        peer_print("eigen", "coo_csr", &t, &A, path, "setFromTriplets", 1);
    }
    std::vector<Eigen::Triplet<double, int>>().swap(tr);
    if (peer_selected(&o, "csr_csc")) {
      peer_timer_init(&t);
      while (peer_more(&t, &o)) {
        peer_start(&t);
        Csc C = S;
        peer_stop(&t);
        if (C.nonZeros() != S.nonZeros()) { t.best = -1; break; }
      }
      if (t.best < 0) { std::printf("error\teigen\tcsr_csc\t%s\t(nnz differs)\n", path); fails++; }
      else peer_print("eigen", "csr_csc", &t, &A, path, "storage_order", 1);
    }
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
