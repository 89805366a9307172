/* peer_cholmod.c -- time CHOLMOD's cholmod_read_sparse (SuiteSparse) on
 * Matrix Market files: a peer of read_bench, same options and output line:
 *   cholmod 1 SECONDS NNZ FILE TEXT_BYTES MB/s cpu=CPU_SECONDS
 * The time covers fopen, cholmod_read_sparse (which reads triplets, then
 * sorts and sums them into a CSC matrix) and fclose.  Single-threaded.
 * CHOLMOD reads no gzip: such files print "skip". */
#include <cholmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

int main(int argc, char **argv) {
  int reps = 3, i = 1, fails = 0;
  double budget = 20;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-b") && i + 1 < argc) budget = atof(argv[++i]);
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) i++; /* one thread only */
    else { fprintf(stderr, "usage: peer_cholmod [-r R] [-b SEC] FILE...\n"); return 2; }
  }
  cholmod_common c;
  cholmod_start(&c);
  c.print = 0;
  for (; i < argc; i++) {
    const char *path = argv[i];
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".gz")) {
      printf("skip cholmod %s (no gzip support)\n", path);
      continue;
    }
    struct stat st;
    double best = 1e30, best_cpu = 1e30, spent = 0;
    long long nnz = 0;
    if (stat(path, &st)) { fprintf(stderr, "peer_cholmod: cannot stat %s\n", path); fails++; continue; }
    for (int r = 0; r < reps && (r == 0 || spent < budget); r++) {
      double c0 = cpu_now(), t0 = now();
      FILE *f = fopen(path, "r");
      cholmod_sparse *A = f ? cholmod_read_sparse(f, &c) : NULL;
      if (f) fclose(f);
      double dt = now() - t0, dc = cpu_now() - c0;
      if (!A) { best = -1; break; }
      nnz = (long long)cholmod_nnz(A, &c);
      cholmod_free_sparse(&A, &c);
      spent += dt;
      if (dt < best) best = dt;
      if (dc < best_cpu) best_cpu = dc;
    }
    if (best < 0) {
      printf("error cholmod %s (cholmod_read_sparse failed, status %d)\n", path, c.status);
      fails++;
      continue;
    }
    printf("cholmod\t1\t%.6f\t%lld\t%s\t%lld\t%.1f\tcpu=%.3f\n", best, nnz, path,
           (long long)st.st_size, (double)st.st_size / 1e6 / best, best_cpu);
    fflush(stdout);
  }
  cholmod_finish(&c);
  return fails ? 1 : 0;
}
