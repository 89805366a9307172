/* spgemm_bench.c -- time spconv's SpGEMM loop orders in process (issue 6).
 *
 *   spgemm_bench [-r R] [-b SEC] [-t THREADS] [-a ALGO,...] FILE...
 *
 * For every FILE (Matrix Market) it reads the matrix (symmetric storage
 * expanded, values as double), converts it to CSR untimed, and times
 * C = A A (square) or C = A A^T (rectangular; A^T made untimed: A's COO
 * with the coordinates swapped, converted to CSR) for each algorithm: gustavson with the dense and the
 * hash workspace, inner (only where its merges, nzrows(A) nnz(B) +
 * nzcols(B) nnz(A), stay under 4e9), outer, and auto (the cost model's
 * choice, named).  Each is run up to R times (default 3) or until SEC
 * seconds (default 10) went on it; the best wall time counts.  The time
 * covers spc_spgemm whole: conversions of the operands the loop order
 * needs (B to CSC for inner, A to CSC for outer), both passes and the
 * result's CSR.  Output, one tab-separated line per file and algorithm:
 *   spconv ALGO SECONDS NNZ(C) FILE [chose=ALGO]
 * and "skip spconv ALGO FILE (why)".  Uses only include/spconv.h. */
#include "spconv.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* wall time; the calling thread's CPU time with BENCH_CLOCK=thread (one
 * thread only: on a machine shared with other jobs it leaves out the time
 * the thread waited for a core) */
static double now(void) {
  static int thread = -1;
  if (thread < 0) thread = getenv("BENCH_CLOCK") && !strcmp(getenv("BENCH_CLOCK"), "thread");
  struct timespec t;
  clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t get(const void *d, spc_itype t, int64_t k) {
  return t == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

/* B = A^T as a CSR (A's COO with the coordinates swapped, converted) */
static spc_tensor *transposed(const spc_tensor *coo, const spc_convert_opts *o, spc_error *e) {
  int64_t n = spc_tensor_nstored(coo), dims[2] = {spc_tensor_dim(coo, 1), spc_tensor_dim(coo, 0)};
  spc_tensor *T = NULL, *C = NULL;
  if (spc_tensor_create_coo(2, dims, n, SPC_F64, &T, e)) return NULL;
  for (int l = 0; l < 2; l++) {
    const void *src;
    spc_itype ts, td;
    int64_t len;
    const void *dd;
    spc_tensor_level_array(coo, 1 - l, "crd", &src, &ts, &len);
    spc_tensor_level_array(T, l, "crd", &dd, &td, &len);
    void *dst = spc_tensor_level_array_mut(T, l, "crd");
    for (int64_t q = 0; q < n; q++) {
      int64_t x = get(src, ts, q);
      if (td == SPC_IDX32) ((int32_t *)dst)[q] = (int32_t)x;
      else ((int64_t *)dst)[q] = x;
    }
  }
  int64_t nv;
  const double *v = spc_tensor_values(coo, &nv);
  memcpy(spc_tensor_values_mut(T), v, (size_t)n * sizeof *v);
  spc_convert_to(T, "csr", o, &C, e);
  spc_tensor_free(&T);
  return C;
}

/* merges inner products would run */
static double merges(const spc_tensor *A, const spc_tensor *B) {
  const void *pa, *pb, *cb;
  spc_itype ta, tb, tc;
  int64_t la, lb, lc;
  spc_tensor_level_array(A, 1, "pos", &pa, &ta, &la);
  spc_tensor_level_array(B, 1, "pos", &pb, &tb, &lb);
  spc_tensor_level_array(B, 1, "crd", &cb, &tc, &lc);
  int64_t nzr = 0, nzc = 0, n = spc_tensor_dim(B, 1);
  for (int64_t i = 0; i + 1 < la; i++) nzr += get(pa, ta, i + 1) > get(pa, ta, i);
  char *seen = calloc((size_t)n + 1, 1);
  for (int64_t q = 0; q < lc; q++) nzc += !seen[get(cb, tc, q)], seen[get(cb, tc, q)] = 1;
  free(seen);
  return (double)nzr * (double)spc_tensor_nstored(B) + (double)nzc * (double)spc_tensor_nstored(A);
}

/* name is one of the comma-separated names in list (whole names: -a auto
 * does not also run unsorted_auto) */
static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *q = strchr(p, ',');
    size_t len = q ? (size_t)(q - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return true;
    if (!q) break;
    p = q + 1;
  }
  return false;
}

int main(int argc, char **argv) {
  int reps = 3, threads = 1, i = 1;
  double budget = 10;
  const char *only = NULL;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-b")) budget = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-a")) only = argv[i + 1];
    else break;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: spgemm_bench [-r R] [-b SEC] [-t THREADS] [-a ALGO,...] FILE.mtx...\n");
    return 2;
  }
  static const struct {
    const char *name;
    int algo, ws, unsorted;
  } algos[] = {{"gustavson_dense", SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_DENSE, 0},
               {"gustavson_hash", SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_HASH, 0},
               {"gustavson_bitmap", SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_BITMAP, 0},
               {"inner", SPC_SPGEMM_INNER, 0, 0},
               {"outer", SPC_SPGEMM_OUTER, 0, 0},
               {"auto", SPC_SPGEMM_AUTO, 0, 0},
               /* rows in the order found (--unsorted), as CXSparse's and SciPy's */
               {"unsorted_auto", SPC_SPGEMM_AUTO, 0, 1}};
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  for (; i < argc; i++) {
    const char *path = argv[i];
    spc_read_opts r;
    spc_read_opts_init(&r);
    r.expand = 1;
    r.vtype = SPC_F64;
    spc_error e;
    spc_error_clear(&e);
    spc_tensor *T = NULL, *A = NULL, *B = NULL;
    char msg[1200];
    if (spc_read(path, &r, &T, &e) || spc_tensor_order(T) != 2 || spc_convert_to(T, "csr", &o, &A, &e)) {
      printf("skip\tspconv\tall\t%s\t(%s)\n", path, spc_error_string(&e, msg, sizeof msg));
      spc_tensor_free(&T);
      continue;
    }
    bool square = spc_tensor_dim(T, 0) == spc_tensor_dim(T, 1);
    if (!square) {
      spc_tensor *c = NULL;
      spc_tensor_to_coo(T, 0, &c, &e);
      B = c ? transposed(c, &o, &e) : NULL;
      spc_tensor_free(&c);
    }
    const spc_tensor *b = square ? A : B;
    for (size_t k = 0; b && k < sizeof algos / sizeof algos[0]; k++) {
      if (only && !listed(only, algos[k].name)) continue;
      if (algos[k].algo == SPC_SPGEMM_INNER && merges(A, b) > 4e9) {
        printf("skip\tspconv\t%s\t%s\t(%.3g merges)\n", algos[k].name, path, merges(A, b));
        continue;
      }
      spc_kernel_opts ko;
      memset(&ko, 0, sizeof ko);
      ko.threads = threads;
      ko.algo = algos[k].algo;
      ko.workspace = algos[k].ws;
      ko.unsorted = algos[k].unsorted;
      double best = 1e300, spent = 0;
      int64_t nnz = 0;
      bool bad = false;
      for (int t = 0; t < reps && spent < budget && !bad; t++) {
        spc_tensor *C = NULL;
        double t0 = now();
        bad = spc_spgemm(A, b, NULL, &ko, &C, &e) != SPC_OK;
        double dt = now() - t0;
        spent += dt;
        if (dt < best) best = dt;
        nnz = C ? spc_tensor_nstored(C) : 0;
        spc_tensor_free(&C);
      }
      if (bad) {
        printf("error\tspconv\t%s\t%s\t(%s)\n", algos[k].name, path, spc_error_string(&e, msg, sizeof msg));
        continue;
      }
      printf("spconv\t%s\t%.9f\t%lld\t%s", algos[k].name, best, (long long)nnz, path);
      if (!algos[k].algo) {
        int a = 0, w = 0;
        spc_spgemm_explain(A, b, &ko, &a, &w, NULL, &e);
        printf("\tchose=%s%s%s", spc_spgemm_algo_name(a), a == SPC_SPGEMM_GUSTAVSON ? "_" : "",
               a == SPC_SPGEMM_GUSTAVSON ? spc_spgemm_workspace_name(w) : "");
      }
      printf("\n");
      fflush(stdout);
    }
    spc_tensor_free(&T);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
  }
  return 0;
}
