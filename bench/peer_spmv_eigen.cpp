// peer_spmv_eigen.cpp -- Eigen: y.noalias() = A * x with A a
// SparseMatrix<double, RowMajor, int> (setFromTriplets, untimed): a peer of
// spmv_bench (spmv_peer.h).  Built with OpenMP, Eigen splits the rows of a
// row-major product over Eigen::setNbThreads threads.
#include "spmv_peer.h"
#include <Eigen/SparseCore>
#include <climits>
#include <vector>

typedef Eigen::SparseMatrix<double, Eigen::RowMajor, int> Csr;

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spmv_eigen"), fails = 0, th[8];
  int nth = spmv_threads(th, 8);
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      std::printf("error\teigen\tspmv\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (A.nnz >= INT_MAX || A.m >= INT_MAX || A.n >= INT_MAX) {
      std::printf("skip\teigen\tspmv\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    Csr M((int)A.m, (int)A.n);
    {
      std::vector<Eigen::Triplet<double, int> > tr;
      tr.reserve((size_t)A.nnz);
      for (int64_t q = 0; q < A.nnz; q++) tr.emplace_back((int)A.row[q], (int)A.col[q], A.val[q]);
      M.setFromTriplets(tr.begin(), tr.end());
      M.makeCompressed();
    }
    Eigen::VectorXd x(A.n), y = Eigen::VectorXd::Zero(A.m);
    for (int64_t j = 0; j < A.n; j++) x[j] = spmv_xval(j);
    for (int t = 0; t < nth; t++) {
      Eigen::setNbThreads(th[t]);
      peer_timer tm;
      peer_timer_init(&tm);
      o.budget = 1e9;
      while (peer_more(&tm, &o)) {
        peer_start(&tm);
        y.noalias() = M * x;
        peer_stop(&tm);
      }
      spmv_print("eigen", tm.best, &A, path, "SparseMatrix*VectorXd(csr)", Eigen::nbThreads(), y.data(), A.m);
    }
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
