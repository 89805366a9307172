/* spmv_bench.c -- time spconv's SpMV (y = A x) in process, per schedule and
 * thread count, against the copy bandwidth measured in the same run (issue 6).
 *
 *   spmv_bench [-r R] [-t T,...] [-w CACHEDIR] FILE...
 *   spmv_bench -g KIND:M:NNZ -w CACHEDIR [-r R] [-t T,...] NAME
 *   spmv_bench --bw MIB [-r R] [-t T,...]
 *
 * Every FILE (Matrix Market) is read with spc_read (symmetric storage
 * expanded, values as double) and converted to CSR untimed; -g instead
 * generates an M x M matrix of about NNZ entries (values in [0.5, 1.5)):
 *   uniform  row lengths 1..19 (mean 10 x NNZ / 10M, scaled to NNZ), columns
 *            uniform at random, distinct and sorted within a row;
 *   skewed   the same with a third of NNZ in 4 dense rows (evenly spaced
 *            columns, at most M each): rows of very unequal length;
 * and writes CACHEDIR/NAME.coo (bench/conv_peer.h's layout) for the peers.
 * x[j] = 1 + (j % 7) / 8.  Each run times spc_spmv (y zeroed, the kernel's
 * routine looked up in the factory, the schedule planned, the product),
 * best of R (default 10), for each thread count (default 1,2) and schedule
 * rows, positions, auto.  Output, tab-separated:
 *   spconv spmv SECONDS NNZ FILE method=csr/SCHED threads=T bytes=B sum=S ran=SCHED
 *   copy bw SECONDS BYTES - threads=T GB/s=G
 * B, the bytes that must move: pos (4 (m + 1)) + crd (4 nnz) + val (8 nnz)
 * + x (8 n) + y (8 m), 4-byte indices below 2^31 (8 above), the same for
 * every tool whatever its own index width.  S = sum of y, to check that
 * the tools agree.  --bw: memcpy of MIB MiB, threads each copying their
 * share; BYTES counts the read and the write. */
#include "spconv.h"
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int nthr, thr[8];

static void parse_threads(const char *s) {
  nthr = 0;
  while (*s && nthr < 8) {
    char *e;
    thr[nthr++] = (int)strtol(s, &e, 10);
    s = *e == ',' ? e + 1 : e;
    if (e == s && *s) break;
  }
}

static void bandwidth(size_t mib, int reps) {
  size_t n = mib << 20;
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b) {
    printf("error\tcopy\tbw\t-\t(out of memory)\n");
    exit(1);
  }
  memset(a, 1, n);
  memset(b, 2, n);
  for (int ti = 0; ti < nthr; ti++) {
    int t = thr[ti];
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
      double t0 = now();
#pragma omp parallel for num_threads(t) schedule(static, 1)
      for (int k = 0; k < t; k++) {
        size_t lo = n * (size_t)k / (size_t)t, hi = n * (size_t)(k + 1) / (size_t)t;
        memcpy((r & 1 ? a : b) + lo, (r & 1 ? b : a) + lo, hi - lo);
      }
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("copy\tbw\t%.6f\t%.0f\t-\tthreads=%d\tGB/s=%.2f\n", best, 2.0 * (double)n, t,
           2.0 * (double)n / best * 1e-9);
    fflush(stdout);
  }
  free(a);
  free(b);
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 31;
  h *= 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

static int cmp32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The generated matrix as a sorted COO (int32 coordinates); the cache
 * file written too.  NULL on failure (message printed). */
static spc_tensor *generate(const char *kind, int64_t m, int64_t want, const char *dir,
                            const char *name) {
  int skew = !strcmp(kind, "skewed");
  if (!skew && strcmp(kind, "uniform")) return NULL;
  int64_t dense = skew ? want / 3 / 4 : 0, ndense = skew ? 4 : 0;
  if (dense > m) dense = m;
  int64_t stride = dense ? m / dense : 1;
  int64_t rest = want - dense * ndense;
  double scale = (double)rest / (double)m / 10.0; /* mean row length 10 scale */
  int64_t cap = dense * ndense + (int64_t)((double)m * 19 * scale) + m + 16;
  int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
  double *v = malloc((size_t)cap * 8);
  if (!ri || !ci || !v) return NULL;
  int64_t k = 0;
  for (int64_t i = 0; i < m; i++) {
    int64_t row0 = k;
    if (i < ndense) {
      for (int64_t q = 0; q < dense; q++) ci[k++] = (int32_t)(stride * q);
    } else {
      int64_t len = (int64_t)((double)(1 + mix((uint64_t)i) % 19) * scale + 0.5);
      for (int64_t q = 0; q < len; q++) ci[k++] = (int32_t)(mix((uint64_t)i * 64 + (uint64_t)q + 7) % (uint64_t)m);
      qsort(ci + row0, (size_t)(k - row0), 4, cmp32);
      int64_t w = row0;
      for (int64_t q = row0; q < k; q++)
        if (q == row0 || ci[q] != ci[w - 1]) ci[w++] = ci[q];
      k = w;
    }
    for (int64_t q = row0; q < k; q++) {
      ri[q] = (int32_t)i;
      v[q] = 0.5 + (double)(mix((uint64_t)q + 12345) >> 11) * 0x1p-53;
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.coo", dir, name);
  FILE *f = fopen(path, "wb");
  int64_t h[4] = {m, m, k, 4};
  int bad = !f || fwrite("SPCCOO1\n", 1, 8, f) != 8 || fwrite(h, sizeof h, 1, f) != 1 ||
            fwrite(ri, 4, (size_t)k, f) != (size_t)k || fwrite(ci, 4, (size_t)k, f) != (size_t)k ||
            fwrite(v, 8, (size_t)k, f) != (size_t)k;
  if (f && fclose(f)) bad = 1;
  if (bad) {
    fprintf(stderr, "spmv_bench: cannot write %s\n", path);
    return NULL;
  }
  int64_t dims[2] = {m, m};
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  if (spc_tensor_create_coo(2, dims, k, SPC_F64, &t, &e)) return NULL;
  for (int l = 0; l < 2; l++) {
    spc_itype ty;
    spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL);
    void *c = spc_tensor_level_array_mut(t, l, "crd");
    const int32_t *src = l ? ci : ri;
    for (int64_t q = 0; q < k; q++) {
      if (ty == SPC_IDX32) ((int32_t *)c)[q] = src[q];
      else ((int64_t *)c)[q] = src[q];
    }
  }
  memcpy(spc_tensor_values_mut(t), v, (size_t)k * 8);
  free(ri);
  free(ci);
  free(v);
  return t;
}


/* x and y as NumPy allocates its arrays (the SciPy peer's x and y): a
 * vector of 4 MiB or more advised to transparent huge pages (THP in
 * "madvise" mode, as on Debian), here also aligned to 2 MiB; a large
 * random-gather x then misses the TLB far less.  BENCH_HUGEPAGES=0: plain
 * malloc. */
static double *vec_alloc(int64_t len) {
  size_t n = (size_t)(len ? len : 1) * 8;
  const char *env = getenv("BENCH_HUGEPAGES");
  if (n < ((size_t)4 << 20) || (env && !strcmp(env, "0"))) return malloc(n);
  void *p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, n)) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}
static void run(const spc_tensor *A0, const char *file, int reps) {
  spc_error e;
  spc_error_clear(&e);
  spc_tensor *A = NULL;
  if (spc_convert_to(A0, "csr", NULL, &A, &e)) {
    printf("error\tspconv\tspmv\t%s\t(%s)\n", file, e.msg);
    return;
  }
  int64_t m = spc_tensor_dim(A, 0), n = spc_tensor_dim(A, 1), nnz = spc_tensor_nstored(A);
  int iw = m < INT32_MAX && n < INT32_MAX && nnz < INT32_MAX ? 4 : 8;
  double bytes = (double)iw * (double)(m + 1) + (double)(iw + 8) * (double)nnz + 8.0 * (double)(n + m);
  double *x = vec_alloc(n), *y = vec_alloc(m);
  for (int64_t j = 0; j < n; j++) x[j] = 1.0 + (double)(j % 7) / 8.0;
  static const spc_schedule sc[] = {SPC_SCHED_ROWS, SPC_SCHED_POSITIONS, SPC_SCHED_AUTO,
                                    SPC_SCHED_LANES};
  for (int ti = 0; ti < nthr; ti++)
    for (int s = 0; s < 4; s++) {
      spc_kernel_opts k;
      memset(&k, 0, sizeof k);
      k.threads = thr[ti];
      k.schedule = sc[s];
      spc_kernel_info info;
      k.info = &info;
      double best = 1e30;
      for (int r = 0; r < reps; r++) {
        double t0 = now();
        spc_status st = spc_spmv(A, 0, x, y, &k, &e);
        double dt = now() - t0;
        if (st) {
          printf("error\tspconv\tspmv\t%s\t(%s)\n", file, e.msg);
          break;
        }
        if (dt < best) best = dt;
      }
      double sum = 0;
      for (int64_t i = 0; i < m; i++) sum += y[i];
      printf("spconv\tspmv\t%.9f\t%lld\t%s\tmethod=csr/%s\tthreads=%d\tbytes=%.0f\tsum=%.10e\tran=%s\n", best,
             (long long)nnz, file, spc_schedule_name(sc[s]), thr[ti], bytes, sum,
             spc_schedule_name(info.used));
      fflush(stdout);
    }
  free(x);
  free(y);
  spc_tensor_free(&A);
}

int main(int argc, char **argv) {
  int reps = 10, i = 1;
  size_t bw = 0;
  const char *cache = NULL, *gen = NULL;
  parse_threads("1,2");
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (i + 1 >= argc) break;
    if (!strcmp(argv[i], "-r")) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-t")) parse_threads(argv[++i]);
    else if (!strcmp(argv[i], "-w")) cache = argv[++i];
    else if (!strcmp(argv[i], "-g")) gen = argv[++i];
    else if (!strcmp(argv[i], "--bw")) bw = (size_t)atol(argv[++i]);
    else break;
  }
  if (reps < 1) reps = 1;
  if (bw) {
    bandwidth(bw, reps);
    return 0;
  }
  if (i >= argc || (gen && !cache)) {
    fprintf(stderr, "usage: spmv_bench [-r R] [-t T,...] [-w CACHEDIR] FILE...\n"
                    "       spmv_bench -g KIND:M:NNZ -w CACHEDIR [-r R] [-t T,...] NAME\n"
                    "       spmv_bench --bw MIB [-r R] [-t T,...]\n");
    return 2;
  }
  for (; i < argc; i++) {
    spc_tensor *A = NULL;
    spc_error e;
    spc_error_clear(&e);
    if (gen) {
      char kind[32];
      long long m = 0, nnz = 0;
      if (sscanf(gen, "%31[a-z]:%lld:%lld", kind, &m, &nnz) != 3 ||
          !(A = generate(kind, m, nnz, cache, argv[i]))) {
        fprintf(stderr, "spmv_bench: cannot generate %s\n", gen);
        return 1;
      }
    } else {
      spc_read_opts r;
      spc_read_opts_init(&r);
      r.expand = 1;
      r.vtype = SPC_F64;
      if (spc_read(argv[i], &r, &A, &e)) {
        printf("error\tspconv\tspmv\t%s\t(%s)\n", argv[i], e.msg);
        continue;
      }
    }
    run(A, argv[i], reps);
    spc_tensor_free(&A);
  }
  return 0;
}
