/* spmv_peer.h -- what the SpMV peers of spmv_bench share, on top of
 * conv_peer.h (input, .coo cache, timer): x, the thread counts and the
 * output line.
 *
 *   PEER [-r R] FILE...      (SPMV_THREADS=1,2: the thread counts to try)
 *
 * x[j] = 1 + (j % 7) / 8, as spmv_bench.  Each timed run computes y = A x
 * into a y that holds the previous result (overwritten, or zeroed inside
 * the timed region for y += A x kernels); best of R.  Output:
 *   TOOL spmv SECONDS NNZ FILE method=M threads=T sum=S
 *   skip TOOL spmv FILE (why)       (a thread count the tool cannot use) */
#ifndef SPMV_PEER_H
#define SPMV_PEER_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* the conversion peers' helpers */
#include "conv_peer.h"
#pragma GCC diagnostic pop

static int spmv_threads(int *t, int max) {
  const char *s = getenv("SPMV_THREADS");
  int n = 0;
  if (!s || !*s) s = "1,2";
  while (*s && n < max) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s) break;
    t[n++] = (int)v;
    s = *e == ',' ? e + 1 : e;
  }
  return n;
}

static double spmv_xval(int64_t j) { return 1.0 + (double)(j % 7) / 8.0; }

static void spmv_print(const char *tool, double best, const peer_coo *A, const char *path,
                       const char *method, int threads, const double *y, int64_t m) {
  double sum = 0;
  for (int64_t i = 0; i < m; i++) sum += y[i];
  printf("%s\tspmv\t%.9f\t%lld\t%s\tmethod=%s\tthreads=%d\tsum=%.10e\n", tool, best,
         (long long)A->nnz, path, method, threads, sum);
  fflush(stdout);
}

#endif
