/* test_threads.c -- the library called from several threads of one process
 * at once: conversions through the JIT racing on the same cold routines in
 * one cache directory, .bsp.h5 written and read back in every thread (a
 * user format's name interned by the reader), SpMV; every result equal bit
 * for bit to the one-thread generic result.  (Threads compiling the same
 * routine shared its temporary file names: failed compiles and a
 * half-written .so; the compiler inherited other threads' HDF5 files and
 * their locks: a later open of one failed "unable to lock file".) */
#include "suites.h"
#include "testutil.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NTHREADS = 4, NMAT = 2, MAXFMT = 8 };

static const char *const mats[NMAT] = {"bp_1200.mtx", "bcspwr06.mtx"}; /* real, pattern */
static const char *const fmts[] = {"csr", "csc", "dcsr", "coo", "ell", "bcsr", NULL /* the user's */};
#define NFMT ((int)(sizeof fmts / sizeof fmts[0]))

typedef struct job {
  spc_tensor *src[NMAT];
  char *user;    /* a user format's YAML path */
  char *jit;     /* the shared cache directory */
  char *dir;     /* files written here */
  uint64_t want[NMAT][NFMT], y[NMAT];
  /* per thread: results and the first failure */
  uint64_t got[NTHREADS][NMAT][NFMT], gotb[NTHREADS][NMAT][NFMT], goty[NTHREADS][NMAT];
  char err[NTHREADS][600];
} job;

typedef struct arg {
  job *J;
  int t;
} arg;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

/* format, dims, every level array and the values */
static uint64_t digest(const spc_tensor *t) {
  uint64_t h = 14695981039346656037ULL;
  const char *f = spc_tensor_format(t);
  h = fnv(h, f, strlen(f));
  for (int d = 0; d < spc_tensor_order(t); d++) {
    int64_t x = spc_tensor_dim(t, d);
    h = fnv(h, &x, sizeof x);
  }
  for (int l = 0; l < spc_tensor_nlevels(t); l++)
    for (int k = 0; k < spc_tensor_level_narrays(t, l); k++) {
      const void *p;
      spc_itype ty;
      int64_t n;
      const char *name = spc_tensor_level_array_name(t, l, k);
      if (spc_tensor_level_array(t, l, name, &p, &ty, &n)) return 0;
      h = fnv(h, name, strlen(name));
      h = fnv(h, p, (size_t)n * (ty == SPC_IDX32 ? 4 : 8));
    }
  int64_t nv = 0;
  const void *v = spc_tensor_values(t, &nv);
  if (v) h = fnv(h, v, (size_t)nv * 8);
  return h;
}

static const char *fmt_of(const job *J, int f) { return fmts[f] ? fmts[f] : J->user; }

/* convert, digest; 0 on failure (the message in err) */
static uint64_t run_conv(const job *J, const spc_tensor *src, int f, spc_engine g, spc_tensor **keep, char *err,
                         size_t nerr) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.engine = g;
  o.jit_dir = J->jit;
  spc_tensor *x = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_convert_to(src, fmt_of(J, f), &o, &x, &e);
  if (s) {
    snprintf(err, nerr, "convert to %s: %s", fmt_of(J, f), e.msg);
    return 0;
  }
  uint64_t h = digest(x);
  if (keep) *keep = x;
  else spc_tensor_free(&x);
  return h;
}

static uint64_t run_spmv(const spc_tensor *A, spc_engine g, char *err, size_t nerr) {
  int64_t m = spc_tensor_dim(A, 0), n = spc_tensor_dim(A, 1);
  double *x = malloc((size_t)n * sizeof *x), *y = calloc((size_t)m, sizeof *y);
  for (int64_t j = 0; j < n; j++) x[j] = 1 + (double)(j % 7) / 8;
  spc_kernel_opts k;
  memset(&k, 0, sizeof k);
  k.engine = g;
  k.threads = 1;
  spc_error e;
  spc_error_clear(&e);
  uint64_t h = 0;
  if (spc_spmv(A, 0, x, y, &k, &e)) snprintf(err, nerr, "spmv: %s", e.msg);
  else h = fnv(14695981039346656037ULL, y, (size_t)m * sizeof *y);
  free(x);
  free(y);
  return h;
}

static void *worker(void *p) {
  arg *a = p;
  job *J = a->J;
  char *err = J->err[a->t];
  size_t nerr = sizeof J->err[a->t];
  /* every thread in the same order first: all race on the same compiles */
  for (int i = 0; i < NMAT; i++)
    for (int f = 0; f < NFMT; f++) {
      spc_tensor *x = NULL;
      uint64_t h = run_conv(J, J->src[i], f, SPC_ENGINE_JIT, &x, err, nerr);
      J->got[a->t][i][f] = h;
      if (!x) continue;
      /* written and read back (its own file), while others compile */
      char name[64];
      snprintf(name, sizeof name, "t%d_%d_%d.bsp.h5", a->t, i, f);
      char *path = tu_path(J->dir, name);
      spc_error e;
      spc_error_clear(&e);
      spc_tensor *b = NULL;
      if (spc_write(x, path, NULL, &e) || spc_read(path, NULL, &b, &e))
        snprintf(err, nerr, "%s: %s", name, e.msg);
      else
        J->gotb[a->t][i][f] = digest(b);
      spc_tensor_free(&b);
      if (f == 0) J->goty[a->t][i] = run_spmv(x, SPC_ENGINE_JIT, err, nerr);
      spc_tensor_free(&x);
      free(path);
    }
  return NULL;
}

START_TEST(test_threads_convert) {
  if (!tu_data_dir()) return;
  job *J = calloc(1, sizeof *J);
  J->dir = tu_mkdtemp();
  J->jit = tu_mkdtemp();
  /* a user format: columns first, as [dense, compressed] */
  J->user = tu_file(J->dir, "colmajor.yaml",
                    "format: colmajor\norder: 2\nremap: (i, j) -> (j, i)\nlevels: [dense, compressed]\n");
  setenv("SPCONV_JIT_DIR", J->jit, 1); /* the kernels' cache (no option) */
  for (int i = 0; i < NMAT; i++) {
    char *q = NULL;
    ck_assert_int_ge(asprintf(&q, "%s/matrices/%s", tu_data_dir(), mats[i]), 0);
    ck_assert_ptr_nonnull(q);
    J->src[i] = tu_read_ok(q, 1, SPC_VTYPE_AUTO);
    free(q);
    /* the one-thread generic results (nothing compiled) */
    char err[600] = "";
    for (int f = 0; f < NFMT; f++) {
      spc_tensor *x = NULL;
      J->want[i][f] = run_conv(J, J->src[i], f, SPC_ENGINE_GENERIC, f == 0 ? &x : NULL, err, sizeof err);
      ck_assert_msg(J->want[i][f], "%s: %s", mats[i], err);
      if (x) J->y[i] = run_spmv(x, SPC_ENGINE_GENERIC, err, sizeof err);
      ck_assert_msg(!err[0], "%s: %s", mats[i], err);
      spc_tensor_free(&x);
    }
  }
  pthread_t th[NTHREADS];
  arg a[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    a[t] = (arg){J, t};
    ck_assert_int_eq(pthread_create(&th[t], NULL, worker, &a[t]), 0);
  }
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  int n = 0;
  for (int t = 0; t < NTHREADS; t++) {
    ck_assert_msg(!J->err[t][0], "thread %d: %s", t, J->err[t]);
    for (int i = 0; i < NMAT; i++) {
      for (int f = 0; f < NFMT; f++) {
        ck_assert_msg(J->got[t][i][f] == J->want[i][f], "thread %d: %s -> %s: JIT result differs", t, mats[i],
                      fmt_of(J, f));
        ck_assert_msg(J->gotb[t][i][f] == J->want[i][f], "thread %d: %s -> %s: .bsp.h5 read back differs", t,
                      mats[i], fmt_of(J, f));
        n += 2;
      }
      ck_assert_msg(J->goty[t][i] == J->y[i], "thread %d: %s: spmv differs", t, mats[i]);
    }
  }
  printf("threads: %d threads, %d conversions and read-backs equal to one thread's, JIT cache shared\n", NTHREADS,
         n);
  for (int i = 0; i < NMAT; i++) spc_tensor_free(&J->src[i]);
  tu_rmtree(J->dir);
  tu_rmtree(J->jit);
  free(J->user);
  free(J->dir);
  free(J->jit);
  free(J);
}
END_TEST

Suite *suite_threads(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("jit");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_threads_convert);
  suite_add_tcase(s, tc);
  return s;
}
