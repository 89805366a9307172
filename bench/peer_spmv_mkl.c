/* peer_spmv_mkl.c -- Intel MKL y = A x (inspector-executor mkl_sparse_d_mv,
 * alpha 1, beta 0: y overwritten): a peer of spmv_bench (spmv_peer.h; the
 * reference CSR in mkl_peer.h).
 *
 * A is a CSR handle over the sorted CSR (duplicates summed), made untimed.
 * Two tools, one line each per thread count:
 *   mkl      mkl_sparse_d_mv on the handle as created (no inspection);
 *   mkl-opt  after mkl_sparse_set_mv_hint (non-transposed, general, 1000
 *            calls expected) and mkl_sparse_optimize, both untimed (MKL's
 *            inspector step, amortised over many products).
 * Threads: MKL's GNU OpenMP layer, mkl_set_num_threads(T) for each count
 * of SPMV_THREADS (1 = the single-threaded comparison), each count in a
 * process of its own (per_count).  The first y of
 * each setting is checked against a plain CSR product (relative error per
 * entry at most 1e-12 of the row's sum of |a x|): a larger one is an error
 * line. */
#include "mkl_peer.h"
#include "spmv_peer.h"
#include <sys/wait.h>
#include <unistd.h>

/* One process per thread count: MKL's OpenMP layer, asked for 2 threads
 * and then 1 in the same process, ran every later product of a small
 * matrix in about 10 ms (a scheduler time slice) on a loaded 2-core
 * machine.  With several counts in SPMV_THREADS the program runs itself
 * once per count (SPMV_THREADS=T), one after the other; 0 when all ok. */
static int per_count(char **argv, const int *th, int nth) {
  int fails = 0;
  for (int t = 0; t < nth; t++) {
    char v[16];
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      snprintf(v, sizeof v, "%d", th[t]);
      setenv("SPMV_THREADS", v, 1);
      execv("/proc/self/exe", argv);
      _exit(127);
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws)) fails++;
  }
  return fails ? 1 : 0;
}

/* y_ref = A x in position order, and per row the sum of |a_ij x_j| */
static void ref_mv(const ref_csr *R, const double *x, double *y, double *mag) {
  for (MKL_INT i = 0; i < R->m; i++) {
    double s = 0, a = 0;
    for (MKL_INT q = R->ptr[i]; q < R->ptr[i + 1]; q++) {
      s += R->val[q] * x[R->col[q]];
      a += fabs(R->val[q] * x[R->col[q]]);
    }
    y[i] = s;
    mag[i] = a;
  }
}

int main(int argc, char **argv) {
  peer_opts o;
  int i = peer_args(argc, argv, &o, "peer_spmv_mkl"), fails = 0, th[8];
  int nth = spmv_threads(th, 8), maxth = mkl_get_max_threads();
  if (nth > 1) return per_count(argv, th, nth);
  struct matrix_descr gen = {.type = SPARSE_MATRIX_TYPE_GENERAL};
  char method[96];
  for (; i < argc; i++) {
    const char *path = argv[i];
    char why[256];
    peer_coo A;
    if (peer_load(path, &A, why, sizeof why)) {
      printf("error\tmkl\tspmv\t%s\t(%s)\n", path, why);
      fails++;
      continue;
    }
    if (!mkl_peer_fits(&A)) {
      printf("skip\tmkl\tspmv\t%s\t(too large for int indices)\n", path);
      peer_free(&A);
      continue;
    }
    ref_csr R;
    size_t m1 = (size_t)(A.m ? A.m : 1);
    double *x = malloc((size_t)(A.n ? A.n : 1) * 8), *y = calloc(m1, 8), *yr = malloc(m1 * 8),
           *mag = malloc(m1 * 8);
    if (!x || !y || !yr || !mag || ref_build(&A, 0, &R)) {
      printf("error\tmkl\tspmv\t%s\t(out of memory)\n", path);
      fails++;
      free(x), free(y), free(yr), free(mag);
      peer_free(&A);
      continue;
    }
    for (int64_t j = 0; j < A.n; j++) x[j] = spmv_xval(j);
    ref_mv(&R, x, yr, mag);
    for (int opt = 0; opt < 2; opt++) {
      const char *tool = opt ? "mkl-opt" : "mkl";
      sparse_matrix_t H = NULL;
      sparse_status_t st = ref_handle(&R, &H);
      if (!st && opt) st = mkl_sparse_set_mv_hint(H, SPARSE_OPERATION_NON_TRANSPOSE, gen, 1000);
      if (!st && opt) st = mkl_sparse_optimize(H);
      if (st) {
        printf("error\t%s\tspmv\t%s\t(%s: %s)\n", tool, path,
               opt ? "mkl_sparse_optimize" : "mkl_sparse_d_create_csr", mkl_status(st));
        fails++;
        mkl_sparse_destroy(H);
        continue;
      }
      for (int t = 0; t < nth; t++) {
        if (th[t] < 1 || th[t] > maxth) {
          printf("skip\t%s\tspmv\t%s\t(%d threads: MKL offers 1..%d)\n", tool, path, th[t], maxth);
          continue;
        }
        mkl_set_num_threads(th[t]);
        peer_timer tm;
        peer_timer_init(&tm);
        o.budget = 1e9;
        while (!st && peer_more(&tm, &o)) {
          peer_start(&tm);
          st = mkl_sparse_d_mv(SPARSE_OPERATION_NON_TRANSPOSE, 1.0, H, gen, x, 0.0, y);
          peer_stop(&tm);
        }
        if (st) {
          printf("error\t%s\tspmv\t%s\t(mkl_sparse_d_mv: %s)\n", tool, path, mkl_status(st));
          fails++;
          break;
        }
        int64_t bad = -1;
        for (int64_t r = 0; r < A.m && bad < 0; r++)
          if (fabs(y[r] - yr[r]) > 1e-12 * mag[r]) bad = r;
        if (bad >= 0) {
          printf("error\t%s\tspmv\t%s\t(y[%lld] = %.17g, the plain CSR product %.17g)\n", tool,
                 path, (long long)bad, y[bad], yr[bad]);
          fails++;
          continue;
        }
        snprintf(method, sizeof method, "mkl_sparse_d_mv%s/mkl-%s", opt ? "+optimize" : "",
                 mkl_version_word());
        spmv_print(tool, tm.best, &A, path, method, th[t], y, A.m);
      }
      mkl_sparse_destroy(H);
    }
    free(x), free(y), free(yr), free(mag);
    ref_free(&R);
    peer_free(&A);
  }
  return fails ? 1 : 0;
}
