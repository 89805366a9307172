// peer_eigen.cpp -- time Eigen's loadMarket (unsupported/SparseExtra) on
// Matrix Market files: a peer of read_bench, same options and output line:
//   eigen 1 SECONDS NNZ FILE TEXT_BYTES MB/s cpu=CPU_SECONDS
// The time covers Eigen::loadMarket into SparseMatrix<double> (getline +
// stringstream per line, then setFromTriplets).  Single-threaded.  No gzip.
#include <unsupported/Eigen/SparseExtra>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
static double cpu_now() { return (double)std::clock() / CLOCKS_PER_SEC; }

int main(int argc, char **argv) {
  int reps = 3, i = 1, fails = 0;
  double budget = 20;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!std::strcmp(argv[i], "-r") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "-b") && i + 1 < argc) budget = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "-t") && i + 1 < argc) i++;
    else { std::fprintf(stderr, "usage: peer_eigen [-r R] [-b SEC] FILE...\n"); return 2; }
  }
  for (; i < argc; i++) {
    const char *path = argv[i];
    size_t n = std::strlen(path);
    if (n > 3 && !std::strcmp(path + n - 3, ".gz")) {
      std::printf("skip eigen %s (no gzip support)\n", path);
      continue;
    }
    struct stat st;
    if (stat(path, &st)) { std::fprintf(stderr, "peer_eigen: cannot stat %s\n", path); fails++; continue; }
    double best = 1e30, best_cpu = 1e30, spent = 0;
    long long nnz = 0;
    for (int r = 0; r < reps && (r == 0 || spent < budget); r++) {
      Eigen::SparseMatrix<double> A;
      double c0 = cpu_now(), t0 = now();
      bool ok = Eigen::loadMarket(A, path);
      double dt = now() - t0, dc = cpu_now() - c0;
      if (!ok) { best = -1; break; }
      nnz = (long long)A.nonZeros();
      spent += dt;
      if (dt < best) best = dt;
      if (dc < best_cpu) best_cpu = dc;
    }
    if (best < 0) { std::printf("error eigen %s (loadMarket failed)\n", path); fails++; continue; }
    std::printf("eigen\t1\t%.6f\t%lld\t%s\t%lld\t%.1f\tcpu=%.3f\n", best, nnz, path,
                (long long)st.st_size, (double)st.st_size / 1e6 / best, best_cpu);
    std::fflush(stdout);
  }
  return fails ? 1 : 0;
}
