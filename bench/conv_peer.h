/* conv_peer.h -- what the C and C++ peers of conv_bench share (header only,
 * compiles as C11 and C++): options, the input, the padding rule, timing and
 * the output line.
 *
 * Input: a Matrix Market file, loaded untimed into a general COO (int64
 * indices, double values; symmetric / skew-symmetric storage expanded,
 * pattern as ones).  When the environment names a cache folder
 * (CONV_CACHE=DIR) and DIR/BASENAME.coo exists, that is loaded instead: the
 * same COO as spconv read it, written by `conv_bench -w DIR`, so that large
 * inputs are not parsed again by every peer.  Its layout (little-endian):
 *   "SPCCOO1\n", int64 nrows, ncols, nnz, w (4 or 8),
 *   rows[nnz] and cols[nnz] (w-byte signed, 0-based), double vals[nnz].
 *
 * Options (every peer): -r R (runs, default 3), -b SEC (stop repeating
 * after SEC seconds on a conversion, default 10), -x CONV,... (only these),
 * -p PADMAX (accepted for the driver's sake: the C and C++ peers do no
 * padded format).
 *
 * Output, one tab-separated line per file, conversion and method:
 *   TOOL CONV SECONDS NNZ FILE method=M cpu=CPU sorted=S
 * sorted=0 when the result's minor indices are not sorted (cs_compress of
 * unsorted triplets); such a line is not like-for-like with spconv's.
 *   skip TOOL CONV FILE (why)        error TOOL CONV FILE (why) */
#ifndef CONV_PEER_H
#define CONV_PEER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct peer_coo {
  int64_t m, n, nnz;
  int64_t *row, *col;
  double *val;
  int sorted; /* by (row, col) */
} peer_coo;

typedef struct peer_opts {
  int reps;
  double budget, padmax;
  const char *only;
} peer_opts;

static double peer_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- options ------------------------------------------------------------ */

/* Parses the options; returns the index of the first file. */
static int peer_args(int argc, char **argv, peer_opts *o, const char *tool) {
  int i = 1;
  o->reps = 3;
  o->budget = 10;
  o->padmax = 4;
  o->only = NULL;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) break;
    if (!strcmp(a, "-r")) o->reps = atoi(argv[++i]);
    else if (!strcmp(a, "-b")) o->budget = atof(argv[++i]);
    else if (!strcmp(a, "-x")) o->only = argv[++i];
    else if (!strcmp(a, "-p")) o->padmax = atof(argv[++i]);
    else break;
  }
  if (i >= argc || argv[i][0] == '-') {
    fprintf(stderr, "usage: %s [-r R] [-b SEC] [-x CONV,...] [-p PADMAX] FILE.mtx...\n", tool);
    exit(2);
  }
  if (o->reps < 1) o->reps = 1;
  return i;
}

static int peer_selected(const peer_opts *o, const char *name) {
  if (!o->only) return 1;
  size_t n = strlen(name);
  const char *p = o->only;
  for (;;) {
    const char *c = strchr(p, ',');
    size_t m = c ? (size_t)(c - p) : strlen(p);
    if (m == n && !strncmp(p, name, n)) return 1;
    if (!c) return 0;
    p = c + 1;
  }
}

/* ---- input -------------------------------------------------------------- */

static void peer_free(peer_coo *A) {
  free(A->row);
  free(A->col);
  free(A->val);
  memset(A, 0, sizeof *A);
}

static int peer_alloc(peer_coo *A, int64_t cap) {
  size_t c = (size_t)(cap > 0 ? cap : 1);
  A->row = (int64_t *)malloc(c * sizeof(int64_t));
  A->col = (int64_t *)malloc(c * sizeof(int64_t));
  A->val = (double *)malloc(c * sizeof(double));
  return A->row && A->col && A->val ? 0 : -1;
}

static int peer_load_cache(const char *cp, peer_coo *A) {
  FILE *f = fopen(cp, "rb");
  char magic[8];
  int64_t h[4];
  if (!f) return -1;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "SPCCOO1\n", 8) ||
      fread(h, sizeof h, 1, f) != 1 || (h[3] != 4 && h[3] != 8) ||
      peer_alloc(A, h[2])) {
    fclose(f);
    return -1;
  }
  A->m = h[0];
  A->n = h[1];
  A->nnz = h[2];
  int64_t *dst[2] = {A->row, A->col};
  int ok = 1;
  for (int k = 0; k < 2 && ok; k++) {
    if (h[3] == 8) {
      ok = fread(dst[k], 8, (size_t)A->nnz, f) == (size_t)A->nnz;
    } else { /* widen in place from the back */
      int32_t *s = (int32_t *)dst[k];
      ok = fread(s, 4, (size_t)A->nnz, f) == (size_t)A->nnz;
      for (int64_t q = A->nnz - 1; ok && q >= 0; q--) dst[k][q] = s[q];
    }
  }
  if (ok) ok = fread(A->val, 8, (size_t)A->nnz, f) == (size_t)A->nnz;
  fclose(f);
  return ok ? 0 : -1;
}

static int peer_load_mtx(const char *path, peer_coo *A, char *why, size_t nwhy) {
  FILE *f = fopen(path, "r");
  char line[1024], obj[64], fmt[64], field[64], sym[64];
  long long m, n, nz;
  if (!f) { snprintf(why, nwhy, "cannot open"); return -1; }
  if (!fgets(line, sizeof line, f) ||
      sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4 ||
      strcmp(fmt, "coordinate") || !strcmp(field, "complex")) {
    snprintf(why, nwhy, "not a real/integer/pattern coordinate Matrix Market file");
    fclose(f);
    return -1;
  }
  int pattern = !strcmp(field, "pattern");
  int symk = !strcmp(sym, "symmetric") ? 1 : !strcmp(sym, "skew-symmetric") ? -1 : 0;
  if (!symk && strcmp(sym, "general")) {
    snprintf(why, nwhy, "symmetry %s not handled", sym);
    fclose(f);
    return -1;
  }
  do {
    if (!fgets(line, sizeof line, f)) { fclose(f); snprintf(why, nwhy, "no size line"); return -1; }
  } while (line[0] == '%');
  if (sscanf(line, "%lld %lld %lld", &m, &n, &nz) != 3 ||
      peer_alloc(A, symk ? 2 * nz : nz)) {
    snprintf(why, nwhy, "bad size line or out of memory");
    fclose(f);
    return -1;
  }
  A->m = m;
  A->n = n;
  int64_t k = 0;
  while (k < (symk ? 2 * nz : nz) && fgets(line, sizeof line, f)) {
    char *p = line, *q;
    if (line[0] == '%' || line[0] == '\n') continue;
    long long i = strtoll(p, &q, 10), j = strtoll(q, &p, 10);
    double v = pattern ? 1.0 : strtod(p, &q);
    A->row[k] = i - 1;
    A->col[k] = j - 1;
    A->val[k++] = v;
    if (symk && i != j) {
      A->row[k] = j - 1;
      A->col[k] = i - 1;
      A->val[k++] = symk * v;
    }
  }
  fclose(f);
  A->nnz = k;
  return 0;
}

/* Loads path (or its cache); 0 ok, -1 with why filled. */
static int peer_load(const char *path, peer_coo *A, char *why, size_t nwhy) {
  const char *dir = getenv("CONV_CACHE"), *base = strrchr(path, '/');
  memset(A, 0, sizeof *A);
  base = base ? base + 1 : path;
  int rc = -1;
  if (dir && *dir) {
    char cp[4096];
    snprintf(cp, sizeof cp, "%s/%s.coo", dir, base);
    rc = peer_load_cache(cp, A);
    if (rc) peer_free(A);
  }
  if (rc) rc = peer_load_mtx(path, A, why, nwhy);
  if (rc) return rc;
  A->sorted = 1;
  for (int64_t q = 1; q < A->nnz && A->sorted; q++)
    if (A->row[q - 1] > A->row[q] ||
        (A->row[q - 1] == A->row[q] && A->col[q - 1] > A->col[q]))
      A->sorted = 0;
  return 0;
}

/* ---- timing --------------------------------------------------------------
 *   peer_timer T; peer_timer_init(&T);
 *   while (peer_more(&T, o)) { untimed set-up; peer_start(&T); work;
 *                              peer_stop(&T); untimed clean-up; } */
typedef struct peer_timer {
  int r;
  double best, best_cpu, spent, t0, c0;
} peer_timer;

static void peer_timer_init(peer_timer *t) {
  memset(t, 0, sizeof *t);
  t->best = t->best_cpu = 1e30;
}
static int peer_more(const peer_timer *t, const peer_opts *o) {
  return t->r < o->reps && (t->r == 0 || t->spent < o->budget);
}
/* the timed clock: wall time, or with BENCH_CLOCK=thread the calling
 * thread's CPU time (one-thread runs on a shared machine) */
static clockid_t peer_wall(void) {
  const char *c = getenv("BENCH_CLOCK");
  return c && !strcmp(c, "thread") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}
static void peer_start(peer_timer *t) {
  t->c0 = peer_clock(CLOCK_PROCESS_CPUTIME_ID);
  t->t0 = peer_clock(peer_wall());
}
static void peer_stop(peer_timer *t) {
  double dt = peer_clock(peer_wall()) - t->t0;
  double dc = peer_clock(CLOCK_PROCESS_CPUTIME_ID) - t->c0;
  t->r++;
  t->spent += dt;
  if (dt < t->best) t->best = dt;
  if (dc < t->best_cpu) t->best_cpu = dc;
}

static void peer_print(const char *tool, const char *conv, const peer_timer *t,
                       const peer_coo *A, const char *path, const char *method,
                       int sorted) {
  printf("%s\t%s\t%.9f\t%lld\t%s\tmethod=%s\tcpu=%.6f\tsorted=%d\n", tool, conv,
         t->best, (long long)A->nnz, path, method, t->best_cpu, sorted);
  fflush(stdout);
}

#endif
