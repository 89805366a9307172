/* read_bench.c -- time spc_read on text files, in process.
 *
 *   read_bench [-r R] [-b SEC] [-t 1,2] [-e] FILE...
 *   read_bench --zlib [-r R] [-b SEC] FILE.gz...
 *   read_bench --write DIR [-r R] [-b SEC] [-t 1,2] FILE...
 *
 * For each file and thread count, runs spc_read (spc_read_opts.threads = T)
 * up to R times (default 3), stopping early once the runs of that file and
 * thread count have taken SEC seconds (default 20), and keeps the best time.
 * -e expands symmetric storage to general (spc_read_opts.expand), the work
 * SciPy and fast_matrix_market do; off by default, as CHOLMOD and Eigen.
 * The file is read once before timing, so the page cache is warm.  The
 * tensor's free is not timed.  With --zlib it times zlib's own inflation of
 * each gzip file into a discarded buffer instead (the bound for reading .gz).
 *
 * Output, one line per measurement (the format every peer_* program prints):
 *   TOOL THREADS SECONDS NNZ FILE TEXT_BYTES MB/s cpu=CPU_SECONDS
 * where TEXT_BYTES is the uncompressed size, MB/s = TEXT_BYTES/1e6/SECONDS,
 * and CPU_SECONDS the least process CPU time of the runs (all threads: about
 * THREADS * SECONDS when the threads were busy and had the cores; on a
 * shared machine the better measure of single-thread work).
 * With --write DIR it times the writers instead: each file is read once
 * (untimed, symmetric storage expanded, as SciPy and fast_matrix_market
 * hold it) and spc_write writes it to DIR/NAME.mtx and DIR/NAME.mtx.gz
 * with spc_write_opts.threads = T; tools spconv-write and spconv-write-gz,
 * TEXT_BYTES the plain file's size (MB/s of text, as for reading).
 * Only the public header is used.
 */
#include "spconv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int is_gzip(const char *path) {
  unsigned char m[2] = {0, 0};
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(m, 1, 2, f);
  fclose(f);
  return n == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

/* Bytes of text: the file's size, or the inflated size of a gzip file.  The
 * pass also brings the file into the page cache.  -1 when unreadable. */
static long long text_bytes(const char *path) {
  static char buf[1 << 20];
  long long total = 0;
  gzFile g = gzopen(path, "rb"); /* reads plain files transparently */
  if (!g) return -1;
  gzbuffer(g, 1 << 18);
  for (;;) {
    int n = gzread(g, buf, sizeof buf);
    if (n < 0) { gzclose(g); return -1; }
    if (n == 0) break;
    total += n;
  }
  gzclose(g);
  return total;
}

static void report(const char *tool, int threads, double sec, long long nnz,
                   const char *path, long long bytes, double cpu) {
  printf("%s\t%d\t%.6f\t%lld\t%s\t%lld\t%.1f\tcpu=%.3f\n", tool, threads, sec,
         nnz, path, bytes, sec > 0 ? (double)bytes / 1e6 / sec : 0.0, cpu);
  fflush(stdout);
}

/* Best time of spc_read with T threads; 0 on success. */
static int bench_spconv(const char *path, int threads, int expand, int reps,
                        double budget, double *best, double *best_cpu,
                        long long *nnz) {
  spc_read_opts o;
  spc_error e;
  double spent = 0;
  *best = 1e30;
  for (int r = 0; r < reps && (r == 0 || spent < budget); r++) {
    spc_tensor *t = NULL;
    spc_read_opts_init(&o);
    o.threads = threads;
    o.expand = expand;
    double c0 = cpu_now(), t0 = now();
    spc_status s = spc_read(path, &o, &t, &e);
    double dt = now() - t0, dc = cpu_now() - c0;
    if (s != SPC_OK) {
      char msg[1200];
      fprintf(stderr, "read_bench: %s\n", spc_error_string(&e, msg, sizeof msg));
      return -1;
    }
    *nnz = spc_tensor_nstored(t);
    spc_tensor_free(&t);
    spent += dt;
    if (dt < *best) *best = dt;
    if (r == 0 || dc < *best_cpu) *best_cpu = dc;
  }
  return 0;
}

/* Best time of inflating path with zlib into a 1 MiB buffer. */
static double bench_zlib(const char *path, int reps, double budget,
                         double *best_cpu) {
  static char buf[1 << 20];
  double best = 1e30, spent = 0;
  for (int r = 0; r < reps && (r == 0 || spent < budget); r++) {
    double c0 = cpu_now(), t0 = now();
    gzFile g = gzopen(path, "rb");
    if (!g) return -1;
    gzbuffer(g, 1 << 18);
    while (gzread(g, buf, sizeof buf) > 0) {}
    gzclose(g);
    double dt = now() - t0, dc = cpu_now() - c0;
    spent += dt;
    if (dt < best) best = dt;
    if (r == 0 || dc < *best_cpu) *best_cpu = dc;
  }
  return best;
}

/* Best time of spc_write(t) to out with T threads; 0 on success. */
static int bench_write(const spc_tensor *t, const char *out, int threads, int reps, double budget,
                       double *best, double *best_cpu) {
  spc_write_opts o;
  spc_error e;
  double spent = 0;
  *best = 1e30;
  for (int r = 0; r < reps && (r == 0 || spent < budget); r++) {
    spc_write_opts_init(&o);
    o.threads = threads;
    double c0 = cpu_now(), t0 = now();
    spc_status s = spc_write(t, out, &o, &e);
    double dt = now() - t0, dc = cpu_now() - c0;
    if (s != SPC_OK) {
      char msg[1200];
      fprintf(stderr, "read_bench: %s\n", spc_error_string(&e, msg, sizeof msg));
      return -1;
    }
    spent += dt;
    if (dt < *best) *best = dt;
    if (r == 0 || dc < *best_cpu) *best_cpu = dc;
  }
  return 0;
}

static long long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long long n = ftell(f);
  fclose(f);
  return n;
}

/* --write: every file read once, then written plain and gzip per thread count */
static int write_mode(const char *dir, char **files, int nfiles, const int *thr, int nthr, int reps,
                      double budget) {
  int fails = 0;
  for (int i = 0; i < nfiles; i++) {
    spc_read_opts ro;
    spc_read_opts_init(&ro);
    ro.expand = 1;
    spc_tensor *t = NULL;
    spc_error e;
    if (spc_read(files[i], &ro, &t, &e) != SPC_OK) {
      char msg[1200];
      fprintf(stderr, "read_bench: %s\n", spc_error_string(&e, msg, sizeof msg));
      fails++;
      continue;
    }
    const char *base = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
    char out[4096], outgz[4100];
    snprintf(out, sizeof out, "%s/%.*s.mtx", dir, (int)strcspn(base, "."), base);
    snprintf(outgz, sizeof outgz, "%s.gz", out);
    for (int k = 0; k < nthr; k++) {
      double best, cpu = 0;
      if (bench_write(t, out, thr[k], reps, budget, &best, &cpu)) {
        fails++;
        break;
      }
      long long bytes = file_size(out);
      report("spconv-write", thr[k], best, spc_tensor_nstored(t), files[i], bytes, cpu);
      if (bench_write(t, outgz, thr[k], reps, budget, &best, &cpu)) {
        fails++;
        break;
      }
      report("spconv-write-gz", thr[k], best, spc_tensor_nstored(t), files[i], bytes, cpu);
    }
    spc_tensor_free(&t);
  }
  return fails ? 1 : 0;
}

static void usage(void) {
  fprintf(stderr, "usage: read_bench [-r R] [-b SEC] [-t 1,2] [-e] FILE...\n"
                  "       read_bench --zlib [-r R] [-b SEC] FILE.gz...\n"
                  "       read_bench --write DIR [-r R] [-b SEC] [-t 1,2] FILE...\n");
  exit(2);
}

int main(int argc, char **argv) {
  int reps = 3, zlib = 0, expand = 0, nthr = 0, thr[16];
  double budget = 20;
  const char *tlist = "1,2", *wdir = NULL;
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *k = argv[i];
    if (!strcmp(k, "--zlib")) zlib = 1;
    else if (!strcmp(k, "--write") && i + 1 < argc) wdir = argv[++i];
    else if (!strcmp(k, "-e")) expand = 1;
    else if (!strcmp(k, "-r") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(k, "-b") && i + 1 < argc) budget = atof(argv[++i]);
    else if (!strcmp(k, "-t") && i + 1 < argc) tlist = argv[++i];
    else usage();
  }
  if (i == argc || reps < 1) usage();
  for (const char *p = tlist; *p && nthr < 16;) {
    thr[nthr++] = atoi(p);
    p = strchr(p, ',');
    if (!p) break;
    p++;
  }
  if (wdir) return write_mode(wdir, argv + i, argc - i, thr, nthr, reps, budget);
  int fails = 0;
  for (; i < argc; i++) {
    const char *path = argv[i];
    long long bytes = text_bytes(path), nnz = 0;
    if (bytes < 0) {
      fprintf(stderr, "read_bench: cannot read %s\n", path);
      fails++;
      continue;
    }
    if (zlib) {
      if (!is_gzip(path)) continue;
      double cpu = 0, sec = bench_zlib(path, reps, budget, &cpu);
      report("zlib", 1, sec, 0, path, bytes, cpu);
      continue;
    }
    for (int k = 0; k < nthr; k++) {
      double best, cpu = 0;
      if (bench_spconv(path, thr[k], expand, reps, budget, &best, &cpu, &nnz)) {
        fails++;
        break;
      }
      report("spconv", thr[k], best, nnz, path, bytes, cpu);
    }
  }
  return fails ? 1 : 0;
}
