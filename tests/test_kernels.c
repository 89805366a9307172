/* test_kernels.c -- suite_kernels: spc_spmv and spc_spgemm of
 * include/spconv.h ("kernels") and `spconv spmv` / `spconv spgemm`, end
 * to end, against references computed here in plain C from the
 * components (long double accumulation; wrapping uint64 for integers):
 *
 *   api       argument errors (order, NULLs, dimension mismatch: SPC_ERR_ARG
 *             with a message and no result); a COO run through
 *             opts.format = every built-in format gives the bits of the
 *             matrix converted first; bcsr with other block sizes
 *             (parameters), and matrices written to .bsp.h5 and read back;
 *   spmv      every built-in order-2 format on every shared matrix (read
 *             with expand, complex included; sky, which holds lower
 *             triangles, also on the lower triangle of the others), x a
 *             deterministic vector of mixed signs (pairs for complex),
 *             y = A x and y = A^T x on the generic engine, each entry
 *             within 1e-12 of the reference relative to sum |a_ij x_j|
 *             (infinities in the data met exactly; formats refusing a
 *             matrix with "cannot" / "too large" are skipped and counted);
 *             hand-made edge cases (purely imaginary and negative entries
 *             in padded formats, int64 / uint64 extremes, float32, a row,
 *             a column, 0 x 3 and 3 x 0);
 *   threads   1, 2 and 65 threads (the rows schedule, as every SpMV here;
 *             the others: test_spmv_sched.c): within tolerance of each other, bit
 *             identical where every top-level position owns whole entries
 *             of y (csr, dcsr, dense, csf; csc, dcsc transposed), and from
 *             run to run;
 *   engines   generic, JIT and auto bit identical (memcmp) for threads 1
 *             and 2 on several matrices and formats; the factory's SpMV
 *             routines equal to the interpreter's (test_factory_spmv);
 *   user      user YAML formats from test_convert.c (csr_desc: columns
 *             descending through an offset level; bcsr_cm over a user
 *             level format) converted, then SpMV against the reference,
 *             on the interpreter and the JIT, and through opts.format;
 *   spgemm    C = A A on every shared square matrix with n < 5000, A A^T
 *             and A^T A on rectangular ones, A (27 x 51) times a band
 *             (51 x 7), hand-made mixes of every value type (int64 that
 *             wraps, uint64, pattern, float32, float64, complex) with a
 *             duplicate, a cancellation, empty operands and zero
 *             dimensions, operands in every format: structure exact
 *             against a plain-C Gustavson (row pointers, columns,
 *             cancellation zeros kept), values within 1e-10 of
 *             sum |a_ik b_kj| (integers bit exact), the value type
 *             documented; threads 1 and 2 bit identical; out_format dcsc
 *             reads back equal to csr;
 *   cli       spconv spmv (x all ones, X from a file, a sparse X,
 *             --transpose, complex, --to, --engine, --threads, infinities,
 *             stdout, --repeat) read back bit-equal to spc_spmv; spconv
 *             spgemm -o c.mtx and -o c.bsp.h5 --to dcsc read back equal
 *             to spc_spgemm; bad input (missing file, order-3 .tns,
 *             dimension mismatch, x of the wrong length, an output folder
 *             that does not exist, unknown --to) exits non-zero with a
 *             message and leaves no output file.
 *
 * One JIT cache folder serves the whole suite (under the run's scratch
 * root; SPCONV_JIT_DIR points at it, for the CLI too).
 * SPC_KERNELS_VERBOSE=1 prints per-matrix timings. */
#include "suites.h"
#include "testutil.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIMIT ((int64_t)1 << 19) /* max_positions of the conversions here */
#define SPMV_TOL 1e-12L
#define SPGEMM_TOL 1e-10L

static char *g_jit;

static void make_jit_dir(void) {
  if (!g_jit) g_jit = tu_mkdtemp();
}
static void jit_env(void) {
  if (g_jit) setenv("SPCONV_JIT_DIR", g_jit, 1);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static bool verbose(void) {
  const char *v = getenv("SPC_KERNELS_VERBOSE");
  return v && *v && strcmp(v, "0");
}

#define assert_has(hay, needle)                                              \
  ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in:\n%s", (needle), (hay))

static const char *const fmts[] = {"csr", "csc", "coo", "dcsr", "dcsc", "dia",
                                   "ell", "bcsr", "sky", "morton", "dense", "csf"};
#define NF ((int)(sizeof fmts / sizeof fmts[0]))

/* ---- matrices as plain arrays ---------------------------------------------- */

typedef struct cm {
  char name[128];
  spc_tensor *A; /* as read (expand): usually a COO, dense for array files */
  int64_t m, n, nnz;
  spc_vtype vt;
  int64_t *ri, *ci;   /* components sorted by (i, j), duplicates combined */
  long double *re, *im; /* values exactly (pattern: 1; im: 0 unless complex) */
  uint64_t *u;        /* integer bits (I64 / U64; pattern 1; others 0) */
} cm;

static bool is_cplx(const cm *M) { return M->vt == SPC_C128; }

/* Entries of equal coordinates summed as a conversion sums them (in the
 * value type: float32 in float, integers wrapping, a pattern's repeats
 * counted, as SciPy reads them),
 * sorted by (i, j): the matrix every kernel sees. */
static const cm *g_sort;
static int cmp_ij(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  if (g_sort->ri[x] != g_sort->ri[y]) return g_sort->ri[x] < g_sort->ri[y] ? -1 : 1;
  if (g_sort->ci[x] != g_sort->ci[y]) return g_sort->ci[x] < g_sort->ci[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

static void cm_combine(cm *M) {
  int64_t n = M->nnz;
  int64_t *p = malloc((size_t)(n ? n : 1) * sizeof *p);
  for (int64_t k = 0; k < n; k++) p[k] = k;
  g_sort = M;
  qsort(p, (size_t)n, sizeof *p, cmp_ij);
  size_t c = (size_t)(n ? n : 1);
  int64_t *ri = malloc(c * sizeof *ri), *ci = malloc(c * sizeof *ci);
  long double *re = malloc(c * sizeof *re), *im = malloc(c * sizeof *im);
  uint64_t *u = malloc(c * sizeof *u);
  int64_t o = -1;
  for (int64_t t = 0; t < n; t++) {
    int64_t k = p[t];
    if (o >= 0 && ri[o] == M->ri[k] && ci[o] == M->ci[k]) {
      switch (M->vt) {
      case SPC_PATTERN: u[o] += M->u[k], re[o] = (long double)u[o]; break;
      case SPC_I64: u[o] += M->u[k], re[o] = (long double)(int64_t)u[o]; break;
      case SPC_U64: u[o] += M->u[k], re[o] = (long double)u[o]; break;
      case SPC_F32: re[o] = (float)re[o] + (float)M->re[k]; break;
      default:
        re[o] = (double)re[o] + (double)M->re[k];
        im[o] = (double)im[o] + (double)M->im[k];
      }
      continue;
    }
    o++;
    ri[o] = M->ri[k], ci[o] = M->ci[k], re[o] = M->re[k], im[o] = M->im[k], u[o] = M->u[k];
  }
  free(p);
  free(M->ri);
  free(M->ci);
  free(M->re);
  free(M->im);
  free(M->u);
  M->ri = ri, M->ci = ci, M->re = re, M->im = im, M->u = u;
  M->nnz = o + 1;
}

/* The components of t (any format) into M's arrays. */
static void cm_fill(cm *M, spc_tensor *t, const char *name) {
  memset(M, 0, sizeof *M);
  snprintf(M->name, sizeof M->name, "%s", name);
  M->A = t;
  ck_assert_int_eq(spc_tensor_order(t), 2);
  M->m = spc_tensor_dim(t, 0);
  M->n = spc_tensor_dim(t, 1);
  M->vt = spc_tensor_vtype(t);
  int64_t cap = spc_tensor_nstored(t);
  size_t c = (size_t)(cap ? cap : 1);
  M->ri = malloc(c * sizeof *M->ri);
  M->ci = malloc(c * sizeof *M->ci);
  M->re = malloc(c * sizeof *M->re);
  M->im = malloc(c * sizeof *M->im);
  M->u = malloc(c * sizeof *M->u);
  ck_assert(M->ri && M->ci && M->re && M->im && M->u);
  spc_iter *it = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t k[2];
  const void *v;
  int64_t q = 0;
  while (spc_iter_next(it, k, &v)) {
    ck_assert_msg(q < cap, "%s: more components than stored", name);
    M->ri[q] = k[0];
    M->ci[q] = k[1];
    long double r = 1, i = 0;
    uint64_t u = 0;
    switch (M->vt) {
    case SPC_PATTERN: u = 1; break;
    case SPC_I64: u = (uint64_t) * (const int64_t *)v, r = (long double)*(const int64_t *)v; break;
    case SPC_U64: u = *(const uint64_t *)v, r = (long double)*(const uint64_t *)v; break;
    case SPC_F32: r = *(const float *)v; break;
    case SPC_F64: r = *(const double *)v; break;
    case SPC_C128: r = ((const double *)v)[0], i = ((const double *)v)[1]; break;
    default: ck_abort_msg("%s: value type %d", name, (int)M->vt);
    }
    M->re[q] = r;
    M->im[q] = i;
    M->u[q] = u;
    q++;
  }
  spc_iter_free(&it);
  M->nnz = q;
  cm_combine(M);
}

static void cm_free(cm *M) {
  spc_tensor_free(&M->A);
  free(M->ri);
  free(M->ci);
  free(M->re);
  free(M->im);
  free(M->u);
  memset(M, 0, sizeof *M);
}

static void cm_read(cm *M, const char *path, const char *name) {
  cm_fill(M, tu_read_ok(path, 1, SPC_VTYPE_AUTO), name);
}

/* A COO with the given components (values: double re/im for floats and
 * complex, int64 bits for integers). */
static spc_tensor *coo_make(int64_t m, int64_t n, int64_t nnz, spc_vtype vt, const int64_t *ri,
                            const int64_t *ci, const double *re, const double *im, const uint64_t *u) {
  int64_t dims[2] = {m, n};
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_tensor_create_coo(2, dims, nnz, vt, &t, &e), &e);
  for (int l = 0; l < 2; l++) {
    spc_itype ty;
    tu_assert_ok(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), &e);
    void *c = spc_tensor_level_array_mut(t, l, "crd");
    const int64_t *src = l ? ci : ri;
    for (int64_t k = 0; k < nnz; k++) {
      if (ty == SPC_IDX32) ((int32_t *)c)[k] = (int32_t)src[k];
      else ((int64_t *)c)[k] = src[k];
    }
  }
  void *v = spc_tensor_values_mut(t);
  for (int64_t k = 0; k < nnz; k++) {
    switch (vt) {
    case SPC_I64: ((int64_t *)v)[k] = (int64_t)u[k]; break;
    case SPC_U64: ((uint64_t *)v)[k] = u[k]; break;
    case SPC_F32: ((float *)v)[k] = (float)re[k]; break;
    case SPC_F64: ((double *)v)[k] = re[k]; break;
    case SPC_C128:
      ((double *)v)[2 * k] = re[k];
      ((double *)v)[2 * k + 1] = im ? im[k] : 0;
      break;
    default: break;
    }
  }
  return t;
}

/* M transposed (a new COO with the same values). */
static void cm_transpose(const cm *M, cm *T) {
  int64_t n = M->nnz;
  double *re = malloc((size_t)(n ? n : 1) * sizeof *re), *im = malloc((size_t)(n ? n : 1) * sizeof *im);
  for (int64_t k = 0; k < n; k++) re[k] = (double)M->re[k], im[k] = (double)M->im[k];
  char name[160];
  snprintf(name, sizeof name, "%s^T", M->name);
  spc_tensor *t = coo_make(M->n, M->m, n, M->vt, M->ci, M->ri, re, im, M->u);
  free(re);
  free(im);
  cm_fill(T, t, name);
}

/* The size line of a Matrix Market file (rows, columns, entries as
 * stored: a symmetric file holds about half); false when unreadable. */
static bool mtx_header(const char *path, int64_t *m, int64_t *n, int64_t *nnz) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[4096];
  bool ok = false, array = false;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '%') {
      if (!strncmp(line, "%%MatrixMarket", 14) && strstr(line, " array")) array = true;
      continue;
    }
    long long a, b, c = 0;
    int got = sscanf(line, "%lld %lld %lld", &a, &b, &c);
    if (got >= 2) {
      *m = a, *n = b, *nnz = array ? a * b : c;
      ok = true;
      break;
    }
  }
  fclose(f);
  return ok;
}

typedef bool (*mat_filter)(int64_t m, int64_t n, int64_t nnz);

/* The shared matrices (sorted names) that pass want (NULL: all), read
 * with expand; NULL without data. */
static cm *load_shared(int *nm, mat_filter want) {
  *nm = 0;
  const char *dd = tu_data_dir();
  if (!dd) return NULL;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/matrices", dd);
  int n = 0, got = 0;
  char **files = tu_list_files(dir, ".mtx", &n);
  cm *m = calloc((size_t)n + 1, sizeof *m);
  for (int f = 0; f < n; f++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, files[f]);
    int64_t r = 0, c = 0, z = 0;
    if (want && (!mtx_header(path, &r, &c, &z) || !want(r, c, z))) continue;
    double ta = now_s();
    cm_read(&m[got++], path, files[f]);
    if (verbose() && now_s() - ta > 0.05) printf("kernels: read %s: %.2f s\n", files[f], now_s() - ta);
  }
  tu_free_list(files);
  *nm = got;
  return m;
}

static void free_all(cm *m, int n) {
  for (int k = 0; m && k < n; k++) cm_free(&m[k]);
  free(m);
}

static cm *load_one(const char *name) {
  const char *dd = tu_data_dir();
  if (!dd) return NULL;
  char path[2048];
  snprintf(path, sizeof path, "%s/matrices/%s", dd, name);
  if (!tu_exists(path)) return NULL;
  cm *M = calloc(1, sizeof *M);
  cm_read(M, path, name);
  return M;
}

static void free_one(cm *M) {
  if (M) cm_free(M);
  free(M);
}

/* ---- x and the SpMV reference ------------------------------------------------- */

/* A deterministic value in [-0.75, 1.25) with a full mantissa. */
static double xval(int64_t j, int part) {
  uint64_t h = ((uint64_t)j + 1) * 0x9E3779B97F4A7C15ull ^ (part ? 0xD1B54A32D192ED03ull : 0);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (double)(h >> 11) * 0x1p-53 * 2.0 - 0.75;
}

/* x of n entries (pairs when cplx); malloc'ed, never empty. */
static double *make_x(int64_t n, bool cplx) {
  double *x = malloc((size_t)(n ? n : 1) * 16);
  for (int64_t j = 0; j < n; j++) {
    if (cplx) x[2 * j] = xval(j, 0), x[2 * j + 1] = xval(j, 1);
    else x[j] = xval(j, 0);
  }
  return x;
}

typedef struct yref {
  int64_t n;
  bool cplx;
  long double *re, *im, *sc; /* sc: sum of |a| |x| (1-norms for complex) */
} yref;

static void spmv_ref(const cm *M, bool tr, const double *x, yref *r) {
  r->n = tr ? M->n : M->m;
  r->cplx = is_cplx(M);
  size_t c = (size_t)(r->n ? r->n : 1);
  r->re = calloc(c, sizeof *r->re);
  r->im = calloc(c, sizeof *r->im);
  r->sc = calloc(c, sizeof *r->sc);
  for (int64_t k = 0; k < M->nnz; k++) {
    int64_t o = tr ? M->ci[k] : M->ri[k], in = tr ? M->ri[k] : M->ci[k];
    long double ar = M->re[k], ai = M->im[k];
    long double xr = r->cplx ? x[2 * in] : x[in], xi = r->cplx ? x[2 * in + 1] : 0;
    if (r->cplx) {
      r->re[o] += ar * xr - ai * xi;
      r->im[o] += ar * xi + ai * xr;
    } else {
      r->re[o] += ar * xr;
    }
    r->sc[o] += (fabsl(ar) + fabsl(ai)) * (fabsl(xr) + fabsl(xi));
  }
}

static void yref_free(yref *r) {
  free(r->re);
  free(r->im);
  free(r->sc);
}

/* v within tol of ref; a reference that is not finite (the data hold
 * infinities) must be met exactly (NaN by NaN). */
static bool near(long double v, long double ref, long double tol) {
  if (!isfinite(ref)) return v == ref || (isnan(v) && isnan(ref));
  return fabsl(v - ref) <= tol;
}

/* y (from the library) within tolerance of r; else a failure naming the
 * first entry off. */
static void check_y(const yref *r, const double *y, const char *what) {
  for (int64_t i = 0; i < r->n; i++) {
    long double tol = SPMV_TOL * r->sc[i];
    long double yr = r->cplx ? y[2 * i] : y[i], yi = r->cplx ? y[2 * i + 1] : 0;
    tu_check(near(yr, r->re[i], tol) && near(yi, r->im[i], tol),
             "%s: y[%lld] = (%.17g, %.17g), reference (%.17Lg, %.17Lg), scale %.3Lg", what, (long long)i,
             (double)yr, (double)yi, r->re[i], r->im[i], r->sc[i]);
  }
}

/* Two results within tolerance of each other (scaled by r's sums). */
static void check_close(const yref *r, const double *a, const double *b, const char *what) {
  int64_t len = r->cplx ? 2 * r->n : r->n;
  for (int64_t k = 0; k < len; k++) {
    long double tol = 2 * SPMV_TOL * r->sc[r->cplx ? k / 2 : k];
    tu_check(near(a[k], b[k], tol), "%s: entry %lld: %.17g vs %.17g", what, (long long)k,
             a[k], b[k]);
  }
}

static void kopts(spc_kernel_opts *k, spc_engine g, int threads, const char *format) {
  memset(k, 0, sizeof *k);
  k->engine = g;
  k->threads = threads;
  k->format = format;
  k->schedule = SPC_SCHED_ROWS;
}

/* y = A x (tr: A^T x) asserted to succeed; y malloc'ed (filled with a
 * pattern first, so entries the kernel leaves alone show). */
static double *spmv_sched_ok(const spc_tensor *A, bool tr, const double *x, spc_engine g, int threads,
                             const char *format, spc_schedule sched, const char *what) {
  int64_t ny = spc_tensor_dim(A, tr ? 1 : 0);
  size_t w = spc_tensor_vtype(A) == SPC_C128 ? 16 : 8;
  double *y = malloc((size_t)(ny ? ny : 1) * w);
  memset(y, 0x7f, (size_t)(ny ? ny : 1) * w);
  spc_kernel_opts k;
  kopts(&k, g, threads, format);
  k.schedule = sched;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_spmv(A, tr, x, y, &k, &e);
  char b[1200];
  ck_assert_msg(s == SPC_OK, "%s: spmv%s (%s, %d threads): %s: %s", what, tr ? " transposed" : "",
                spc_engine_name(g), threads, spc_status_name(s), spc_error_string(&e, b, sizeof b));
  return y;
}

static double *spmv_ok(const spc_tensor *A, bool tr, const double *x, spc_engine g, int threads,
                       const char *format, const char *what) {
  return spmv_sched_ok(A, tr, x, g, threads, format, SPC_SCHED_ROWS, what);
}

static size_t ybytes(const spc_tensor *A, bool tr) {
  return (size_t)spc_tensor_dim(A, tr ? 1 : 0) * (spc_tensor_vtype(A) == SPC_C128 ? 16 : 8);
}

static void conv_opts(spc_convert_opts *o, spc_engine g) {
  spc_convert_opts_init(o);
  o->engine = g;
  o->jit_dir = g_jit;
  o->max_positions = LIMIT;
}

/* A in format f: SPC_OK, or a refusal (SPC_ERR_UNSUPPORTED saying cannot /
 * too large) with *out NULL; anything else fails. */
static spc_status convert(const spc_tensor *A, const char *f, spc_tensor **out, const char *what) {
  spc_convert_opts o;
  conv_opts(&o, SPC_ENGINE_AUTO);
  spc_error e;
  spc_error_clear(&e);
  *out = NULL;
  spc_status s = spc_convert_to(A, f, &o, out, &e);
  if (s) {
    ck_assert_msg(s == SPC_ERR_UNSUPPORTED && (strstr(e.msg, "cannot") || strstr(e.msg, "too large")),
                  "%s -> %s: %s: %s", what, f, spc_status_name(s), e.msg);
    ck_assert_ptr_null(*out);
  }
  return s;
}

/* ---- api ---------------------------------------------------------------------------- */

START_TEST(test_args) {
  double re[] = {1, 2, 3};
  int64_t ri[] = {0, 1, 1}, ci[] = {1, 0, 2};
  spc_tensor *A = coo_make(2, 3, 3, SPC_F64, ri, ci, re, NULL, NULL), *C = NULL;
  double x[4] = {1, 1, 1, 1}, y[4];
  spc_kernel_opts k;
  kopts(&k, SPC_ENGINE_GENERIC, 1, NULL);
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spmv(NULL, 0, x, y, &k, &e), SPC_ERR_ARG);
  ck_assert_msg(e.msg[0], "no message");
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spmv(A, 0, NULL, y, &k, &e), SPC_ERR_ARG);
  ck_assert_int_eq(spc_spmv(A, 0, x, NULL, &k, &e), SPC_ERR_ARG);
  /* NULL opts: defaults */
  ck_assert_int_eq(spc_spmv(A, 0, x, y, NULL, &e), SPC_OK);
  ck_assert(y[0] == 1 && y[1] == 5);
  ck_assert_int_eq(spc_spmv(A, 1, x, y, NULL, NULL), SPC_OK);
  ck_assert(y[0] == 2 && y[1] == 1 && y[2] == 3);
  /* an order-3 tensor */
  int64_t d3[3] = {2, 2, 2};
  spc_tensor *T = NULL;
  tu_assert_ok(spc_tensor_create_coo(3, d3, 0, SPC_F64, &T, &e), &e);
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spmv(T, 0, x, y, &k, &e), SPC_ERR_ARG);
  ck_assert_msg(e.msg[0], "no message");
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spgemm(T, A, NULL, &k, &C, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(C);
  ck_assert_int_eq(spc_spgemm(A, NULL, NULL, &k, &C, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(C);
  /* dimension mismatch: 2 x 3 times 2 x 3 */
  spc_error_clear(&e);
  C = (spc_tensor *)&e; /* must be cleared */
  ck_assert_int_eq(spc_spgemm(A, A, NULL, &k, &C, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(C);
  assert_has(e.msg, "cannot multiply");
  assert_has(e.msg, "2 x 3");
  /* an unknown output format */
  spc_tensor *At = NULL;
  {
    double rt[] = {1, 2, 3};
    At = coo_make(3, 2, 3, SPC_F64, ci, ri, rt, NULL, NULL);
  }
  spc_error_clear(&e);
  spc_status s = spc_spgemm(A, At, "nosuchformat", &k, &C, &e);
  ck_assert_msg(s != SPC_OK && e.msg[0], "unknown out_format: %s", spc_status_name(s));
  ck_assert_ptr_null(C);
  /* and a known one, with NULL opts */
  tu_assert_ok(spc_spgemm(A, At, NULL, NULL, &C, &e), &e);
  ck_assert_str_eq(spc_tensor_format(C), "csr");
  ck_assert_int_eq(spc_tensor_dim(C, 0), 2);
  ck_assert_int_eq(spc_tensor_dim(C, 1), 2);
  spc_tensor_free(&C);
  spc_tensor_free(&At);
  spc_tensor_free(&T);
  spc_tensor_free(&A);
}
END_TEST

/* A COO given to spc_spmv with opts.format = F runs as the matrix
 * converted to F first (the same conversion, the same kernel: the same
 * bits), and a converted matrix asked for another format is converted. */
START_TEST(test_format_option) {
  cm *M = load_one("west0067.mtx");
  if (!M) { /* no data: a small hand-made one */
    double re[] = {1.5, -2, 0.25, 3, 7, -1};
    int64_t ri[] = {0, 0, 1, 2, 3, 3}, ci[] = {0, 2, 1, 3, 0, 3};
    M = calloc(1, sizeof *M);
    cm_fill(M, coo_make(4, 4, 6, SPC_F64, ri, ci, re, NULL, NULL), "small");
  }
  double *x = make_x(M->m > M->n ? M->m : M->n, false);
  int n = 0;
  for (int f = 0; f < NF; f++) {
    spc_tensor *B = NULL;
    if (convert(M->A, fmts[f], &B, M->name)) continue;
    for (int tr = 0; tr < 2; tr++) {
      char what[256];
      snprintf(what, sizeof what, "%s as %s%s", M->name, fmts[f], tr ? " transposed" : "");
      double *y1 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
      double *y2 = spmv_ok(M->A, tr, x, SPC_ENGINE_GENERIC, 1, fmts[f], what);
      ck_assert_msg(!memcmp(y1, y2, ybytes(B, tr)), "%s: opts.format differs from converting first", what);
      /* the converted matrix, asked for csr: converted again */
      double *y3 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, "csr", what);
      double *y4 = spmv_ok(M->A, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what); /* default csr */
      ck_assert_msg(!memcmp(y3, y4, ybytes(B, tr)), "%s: opts.format = csr on a %s matrix", what, fmts[f]);
      free(y1);
      free(y2);
      free(y3);
      free(y4);
      n++;
    }
    spc_tensor_free(&B);
  }
  ck_assert_int_ge(n, 2 * 8);
  free(x);
  free_one(M);
}
END_TEST

/* Formats with parameters other than their defaults (bcsr 3 x 2), and
 * matrices read back from .bsp.h5 (a converted tensor from a file): SpMV
 * against the reference. */
START_TEST(test_params_bsp) {
  cm *M = load_one("lp_afiro.mtx"); /* 27 x 51: blocks cut at the edges */
  if (!M) {
    double re[] = {1.5, -2, 0.25, 3, 7, -1, 2};
    int64_t ri[] = {0, 0, 1, 2, 3, 3, 4}, ci[] = {0, 6, 1, 3, 0, 3, 2};
    M = calloc(1, sizeof *M);
    cm_fill(M, coo_make(5, 7, 7, SPC_F64, ri, ci, re, NULL, NULL), "small");
  }
  char *dir = tu_mkdtemp();
  double *x = make_x(M->m > M->n ? M->m : M->n, is_cplx(M));
  yref r[2];
  spmv_ref(M, false, x, &r[0]);
  spmv_ref(M, true, x, &r[1]);
  static const struct {
    const char *fmt;
    int64_t bm, bn;
  } cases[] = {{"bcsr", 3, 2}, {"bcsr", 1, 5}, {"bcsr", 4, 4}, {"dia", 0, 0},
               {"csc", 0, 0}, {"dcsc", 0, 0}, {"morton", 0, 0}, {"ell", 0, 0}};
  int ran = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    spc_convert_opts o;
    conv_opts(&o, SPC_ENGINE_AUTO);
    if (cases[c].bm) {
      o.nparams = 2;
      o.param_names[0] = "M", o.param_values[0] = cases[c].bm;
      o.param_names[1] = "N", o.param_values[1] = cases[c].bn;
    }
    spc_tensor *B = NULL;
    spc_error e;
    spc_error_clear(&e);
    spc_status s = spc_convert_to(M->A, cases[c].fmt, &o, &B, &e);
    if (s) { /* explicit zeros into a padded format */
      ck_assert_msg(s == SPC_ERR_UNSUPPORTED && strstr(e.msg, "cannot"), "%s: %s", cases[c].fmt, e.msg);
      continue;
    }
    char name[64], what[256];
    snprintf(name, sizeof name, "m%zu.bsp.h5", c);
    char *p = tu_path(dir, name);
    tu_assert_ok(spc_write(B, p, NULL, &e), &e);
    spc_tensor *R = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
    ck_assert_str_eq(spc_tensor_format(R), cases[c].fmt);
    for (int tr = 0; tr < 2; tr++) {
      snprintf(what, sizeof what, "%s as %s %lldx%lld%s", M->name, cases[c].fmt, (long long)cases[c].bm,
               (long long)cases[c].bn, tr ? " transposed" : "");
      double *y = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
      double *y2 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 2, NULL, what);
      check_y(&r[tr], y, what);
      check_y(&r[tr], y2, what);
      strcat(what, " (.bsp.h5)");
      /* single-threaded: the same bits (the binsparse formats csr, csc,
       * dcsc, coo come back as plain tensors, which spc_spmv converts to
       * csr: with one thread that sums each y entry in the same order) */
      double *yr = spmv_ok(R, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
      ck_assert_msg(!memcmp(y, yr, ybytes(B, tr)), "%s: differs from the matrix written", what);
      double *yr2 = spmv_ok(R, tr, x, SPC_ENGINE_GENERIC, 2, NULL, what);
      check_y(&r[tr], yr2, what);
      free(y);
      free(y2);
      free(yr);
      free(yr2);
    }
    spc_tensor_free(&R);
    spc_tensor_free(&B);
    free(p);
    ran++;
  }
  ck_assert_int_ge(ran, 6);
  yref_free(&r[0]);
  yref_free(&r[1]);
  free(x);
  free_one(M);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- spmv on every format and matrix ------------------------------------------------ */

/* sky on the lower triangle of M (with the diagonal), both products. */
static bool sky_lower(const cm *M, const double *x) {
  size_t c = (size_t)(M->nnz ? M->nnz : 1);
  int64_t *ri = malloc(c * sizeof *ri), *ci = malloc(c * sizeof *ci), n = 0;
  double *re = malloc(c * sizeof *re), *im = malloc(c * sizeof *im);
  uint64_t *u = malloc(c * sizeof *u);
  for (int64_t k = 0; k < M->nnz; k++) {
    if (M->ci[k] > M->ri[k]) continue;
    ri[n] = M->ri[k], ci[n] = M->ci[k], re[n] = (double)M->re[k], im[n] = (double)M->im[k], u[n] = M->u[k];
    n++;
  }
  char name[160];
  snprintf(name, sizeof name, "tril(%s)", M->name);
  cm L;
  cm_fill(&L, coo_make(M->m, M->n, n, M->vt, ri, ci, re, im, u), name);
  free(ri), free(ci), free(re), free(im), free(u);
  spc_tensor *B = NULL;
  if (convert(L.A, "sky", &B, name)) { /* too large (a wide profile) */
    cm_free(&L);
    return false;
  }
  for (int tr = 0; tr < 2; tr++) {
    char what[256];
    snprintf(what, sizeof what, "%s as sky%s", name, tr ? " transposed" : "");
    yref r;
    spmv_ref(&L, tr, x, &r);
    double *y = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
    check_y(&r, y, what);
    free(y);
    yref_free(&r);
  }
  spc_tensor_free(&B);
  cm_free(&L);
  return true;
}

START_TEST(test_spmv_formats) {
  double t0 = now_s();
  int nm = 0;
  cm *m = load_shared(&nm, NULL);
  if (!m) return;
  long runs = 0, refused = 0, cplx = 0;
  int fmt_ok[NF] = {0};
  for (int i = 0; i < nm; i++) {
    const cm *M = &m[i];
    double ta = now_s();
    int64_t nx = M->m > M->n ? M->m : M->n;
    double *x = make_x(nx, is_cplx(M));
    yref r[2];
    spmv_ref(M, false, x, &r[0]);
    spmv_ref(M, true, x, &r[1]);
    for (int f = 0; f < NF; f++) {
      spc_tensor *B = NULL;
      if (convert(M->A, fmts[f], &B, M->name)) {
        refused++;
        if (!strcmp(fmts[f], "sky") && M->nnz <= 30000 && M->m == M->n) {
          /* sky holds lower triangles: run it on M's */
          if (sky_lower(M, x)) {
            fmt_ok[f]++;
            runs += 2;
          }
        }
        continue;
      }
      fmt_ok[f]++;
      for (int tr = 0; tr < 2; tr++) {
        char what[256];
        snprintf(what, sizeof what, "%s (%s) as %s: y = A%s x", M->name, spc_vtype_name(M->vt), fmts[f],
                 tr ? "^T" : "");
        double *y = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
        check_y(&r[tr], y, what);
        free(y);
        runs++;
        cplx += is_cplx(M);
      }
      spc_tensor_free(&B);
    }
    yref_free(&r[0]);
    yref_free(&r[1]);
    free(x);
    if (verbose()) printf("kernels: spmv %s: %.2f s\n", M->name, now_s() - ta), fflush(stdout);
  }
  /* every format ran on most matrices */
  for (int f = 0; f < NF; f++)
    ck_assert_msg(fmt_ok[f] >= nm / 2, "%s ran on %d of %d matrices only",
                  fmts[f], fmt_ok[f], nm);
  printf("kernels: spmv on %d matrices x %d formats: %ld products (%ld complex) within 1e-12 of the "
         "reference, %ld conversions refused (sky on the lower triangle instead where it fits); %.1f s\n",
         nm, NF, runs, cplx, refused, now_s() - t0);
  free_all(m, nm);
}
END_TEST

/* Hand-made matrices for the padded formats' zero test and sign cases:
 * purely imaginary complex entries, negative entries, an empty row and an
 * empty column, a 1 x n and an n x 1. */
START_TEST(test_spmv_edges) {
  struct {
    const char *name;
    int64_t m, n, nnz;
    spc_vtype vt;
    int64_t ri[8], ci[8];
    double re[8], im[8];
    uint64_t u[8];
  } cases[] = {
      {"imaginary", 4, 4, 5, SPC_C128, {0, 1, 1, 3, 3}, {0, 0, 2, 1, 3},
       {0, 0, 2, 0, -1}, {1, -3, 0, 0.5, 0}, {0}},
      {"negative", 4, 5, 6, SPC_F64, {0, 0, 2, 2, 3, 3}, {0, 4, 1, 4, 0, 1},
       {-1, -2.5, 3, -0.125, -7, 1e-3}, {0}, {0}},
      {"int big", 3, 3, 4, SPC_I64, {0, 1, 2, 2}, {2, 1, 0, 2}, {0}, {0},
       {(uint64_t)INT64_MAX, (uint64_t)-5, (uint64_t)INT64_MIN, 3}},
      {"uint big", 2, 2, 3, SPC_U64, {0, 1, 1}, {0, 0, 1}, {0}, {0},
       {UINT64_MAX, (uint64_t)1 << 63, 7}},
      {"float32", 3, 2, 3, SPC_F32, {0, 1, 2}, {1, 0, 1}, {0.1, -3.75, 1e30}, {0}, {0}},
      {"row", 1, 6, 3, SPC_F64, {0, 0, 0}, {0, 3, 5}, {1, -2, 3}, {0}, {0}},
      {"column", 6, 1, 3, SPC_F64, {1, 2, 5}, {0, 0, 0}, {4, 5, -6}, {0}, {0}},
      {"pattern", 3, 4, 4, SPC_PATTERN, {0, 0, 2, 2}, {1, 3, 0, 3}, {0}, {0}, {0}},
      {"0 x 3", 0, 3, 0, SPC_F64, {0}, {0}, {0}, {0}, {0}},
      {"3 x 0", 3, 0, 0, SPC_C128, {0}, {0}, {0}, {0}, {0}},
  };
  long runs = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cm M;
    cm_fill(&M,
            coo_make(cases[c].m, cases[c].n, cases[c].nnz, cases[c].vt, cases[c].ri, cases[c].ci, cases[c].re,
                     cases[c].im, cases[c].u),
            cases[c].name);
    double *x = make_x(M.m > M.n ? M.m : M.n, is_cplx(&M));
    for (int tr = 0; tr < 2; tr++) {
      yref r;
      spmv_ref(&M, tr, x, &r);
      for (int f = 0; f < NF; f++) {
        spc_tensor *B = NULL;
        if (convert(M.A, fmts[f], &B, M.name)) continue;
        char what[256];
        snprintf(what, sizeof what, "%s as %s%s", M.name, fmts[f], tr ? " transposed" : "");
        double *y = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
        check_y(&r, y, what);
        free(y);
        runs++;
        spc_tensor_free(&B);
      }
      yref_free(&r);
    }
    free(x);
    cm_free(&M);
  }
  ck_assert_int_ge(runs, 100);
}
END_TEST

/* Formats whose top-level positions each own whole entries of y: their
 * threaded result is the single-threaded one bit for bit. */
static bool rows_on_top(const char *f, bool tr) {
  static const char *const rows[] = {"csr", "dcsr", "dense", "csf", NULL}, *const cols[] = {"csc", "dcsc", NULL};
  for (const char *const *p = tr ? cols : rows; *p; p++)
    if (!strcmp(*p, f)) return true;
  return false;
}

START_TEST(test_spmv_threads) {
  double t0 = now_s();
  static const char *const names[] = {"bp_1200.mtx", "young1c.mtx", "lp_e226.mtx", "G51.mtx",
                                      "Franz6_id1959_aug.mtx", NULL};
  long runs = 0, same = 0;
  for (int i = 0; names[i]; i++) {
    cm *M = load_one(names[i]);
    if (!M) continue;
    double *x = make_x(M->m > M->n ? M->m : M->n, is_cplx(M));
    for (int f = 0; f < NF; f++) {
      spc_tensor *B = NULL;
      if (convert(M->A, fmts[f], &B, M->name)) continue;
      for (int tr = 0; tr < 2; tr++) {
        char what[256];
        snprintf(what, sizeof what, "%s as %s%s", M->name, fmts[f], tr ? " transposed" : "");
        yref r;
        spmv_ref(M, tr, x, &r);
        double *y1 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
        static const int nts[] = {2, 65};
        for (int t = 0; t < 2; t++) {
          double *yt = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, nts[t], NULL, what);
          char w2[300];
          snprintf(w2, sizeof w2, "%s: 1 vs %d threads", what, nts[t]);
          check_y(&r, yt, w2);
          check_close(&r, y1, yt, w2);
          if (rows_on_top(fmts[f], tr)) {
            ck_assert_msg(!memcmp(y1, yt, ybytes(B, tr)), "%s: rows split over threads, yet bits differ", w2);
            same++;
          }
          /* the same thread count again: the same bits */
          if (t == 0) {
            double *y2 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, nts[t], NULL, what);
            ck_assert_msg(!memcmp(y2, yt, ybytes(B, tr)), "%s: two runs differ", w2);
            free(y2);
          }
          free(yt);
          runs++;
        }
        free(y1);
        yref_free(&r);
      }
      spc_tensor_free(&B);
    }
    free(x);
    free_one(M);
  }
  if (!runs) return; /* no data */
  printf("kernels: spmv threads 2, 65 vs 1: %ld runs within tolerance, %ld of them bit identical "
         "(rows on top); %.1f s\n",
         runs, same, now_s() - t0);
}
END_TEST

/* ---- engines ------------------------------------------------------------------------ */

/* The JIT compiles one routine per format, transpose, value and index
 * types (a cc run each), so a few representatives: cage5 (float64) on
 * formats with unusual levels, young1c (complex) and G51 (pattern) on
 * csr.  Generic, JIT and auto the same bits, threads 1 and 2; the
 * factory: the same bits where it serves the routine. */
static const struct {
  const char *mat, *fmts;
} engine_set[] = {
    {"cage5.mtx", "csr csc coo dia morton"},
    {"young1c.mtx", "csr"},
    {"Franz6_id1959_aug.mtx", "csr"},
};

static int engines_on(const cm *M, const char *fl, long *factory_refused, char *why, size_t nwhy) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", fl);
  double *x = make_x(M->m > M->n ? M->m : M->n, is_cplx(M));
  int runs = 0;
  char *save = NULL;
  for (char *f = strtok_r(buf, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
    spc_tensor *B = NULL;
    if (convert(M->A, f, &B, M->name)) continue;
    for (int tr = 0; tr < 2; tr++) {
      yref r;
      spmv_ref(M, tr, x, &r);
      for (int nt = 1; nt <= 2; nt++) {
        char what[256];
        snprintf(what, sizeof what, "%s as %s%s, %d thread(s)", M->name, f, tr ? " transposed" : "", nt);
        double *yg = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, nt, NULL, what);
        double *yj = spmv_ok(B, tr, x, SPC_ENGINE_JIT, nt, NULL, what);
        double *ya = spmv_ok(B, tr, x, SPC_ENGINE_AUTO, nt, NULL, what);
        check_y(&r, yg, what);
        ck_assert_msg(!memcmp(yg, yj, ybytes(B, tr)), "%s: JIT differs from generic", what);
        ck_assert_msg(!memcmp(yg, ya, ybytes(B, tr)), "%s: auto differs from generic", what);
        /* the factory */
        size_t w = ybytes(B, tr);
        double *yf = malloc(w ? w : 1);
        spc_kernel_opts k;
        kopts(&k, SPC_ENGINE_FACTORY, nt, NULL);
        spc_error e;
        spc_error_clear(&e);
        spc_status s = spc_spmv(B, tr, x, yf, &k, &e);
        if (s == SPC_OK) {
          ck_assert_msg(!memcmp(yg, yf, w), "%s: factory differs from generic", what);
        } else {
          ck_assert_msg(s == SPC_ERR_UNSUPPORTED && strstr(e.msg, "no factory routine"), "%s: factory: %s: %s",
                        what, spc_status_name(s), e.msg);
          if (!*factory_refused) snprintf(why, nwhy, "%s: %s", what, e.msg);
          ++*factory_refused;
        }
        free(yf);
        free(yg);
        free(yj);
        free(ya);
        runs++;
      }
      yref_free(&r);
    }
    spc_tensor_free(&B);
  }
  free(x);
  return runs;
}

START_TEST(test_spmv_engines) {
  jit_env();
  double t0 = now_s();
  long runs = 0, fref = 0;
  char why[1024] = "";
  for (size_t s = 0; s < sizeof engine_set / sizeof engine_set[0]; s++) {
    cm *M = load_one(engine_set[s].mat);
    if (!M) continue;
    runs += engines_on(M, engine_set[s].fmts, &fref, why, sizeof why);
    free_one(M);
  }
  if (!runs) { /* no data: a hand-made matrix on csr and dia */
    double re[] = {1.5, -2, 0.25, 3, 7, -1};
    int64_t ri[] = {0, 0, 1, 2, 3, 3}, ci[] = {0, 2, 1, 3, 0, 3};
    cm M;
    cm_fill(&M, coo_make(4, 4, 6, SPC_F64, ri, ci, re, NULL, NULL), "small");
    runs += engines_on(&M, "csr dia", &fref, why, sizeof why);
    cm_free(&M);
  }
  printf("kernels: spmv engines: %ld runs generic = JIT = auto bit for bit; factory refused %ld of them "
         "(%s); %.1f s\n",
         runs, fref, fref ? "no factory routine" : "none", now_s() - t0);
}
END_TEST

/* --engine=factory for the kernels (spc_kernel_opts.engine): the factory
 * holds the SpMV routines of every built-in format, equal to the
 * interpreter's result (once a bug: it held none and refused every
 * format). */
START_TEST(test_factory_spmv) {
  double re[] = {1.5, -2, 0.25, 3};
  int64_t ri[] = {0, 0, 1, 2}, ci[] = {0, 2, 1, 2};
  spc_tensor *A = coo_make(3, 3, 4, SPC_F64, ri, ci, re, NULL, NULL), *B = NULL;
  double x[3] = {1, 2, 3}, y[3], yg[3];
  for (int f = 0; f < NF; f++) {
    if (convert(A, fmts[f], &B, "small")) continue;
    spc_kernel_opts k;
    kopts(&k, SPC_ENGINE_FACTORY, 1, NULL);
    spc_error e;
    spc_error_clear(&e);
    spc_status s = spc_spmv(B, 0, x, y, &k, &e);
    ck_assert_msg(s == SPC_OK, "%s on the factory: %s: %s", fmts[f], spc_status_name(s), e.msg);
    kopts(&k, SPC_ENGINE_GENERIC, 1, NULL);
    tu_assert_ok(spc_spmv(B, 0, x, yg, &k, &e), &e);
    ck_assert(!memcmp(y, yg, sizeof y));
    spc_tensor_free(&B);
  }
  spc_tensor_free(&A);
  /* and from the command line */
  char *dir = tu_mkdtemp();
  char *a = tu_file(dir, "a.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n");
  char *yp = tu_path(dir, "y.mtx");
  tu_run_result r;
  int st = tu_run(&r, "spmv %s -o %s --engine factory", a, yp);
  ck_assert_msg(st == 0, "spmv --engine factory: exit %d: %s", st, r.err);
  tu_run_free(&r);
  free(a);
  free(yp);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* spconv spmv with a real A and a complex X file: the complex y, or a
 * refusal naming X -- never X's imaginary parts dropped without a word
 * (once a bug in cli/cmd_kernels.c read_x). */
START_TEST(test_cli_complex_x) {
  char *dir = tu_mkdtemp();
  char *a = tu_file(dir, "a.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n");
  char *x = tu_file(dir, "x.mtx", "%%MatrixMarket matrix array complex general\n2 1\n1 5\n1 7\n");
  char *yp = tu_path(dir, "y.mtx");
  tu_run_result r;
  int st = tu_run(&r, "spmv %s %s -o %s", a, x, yp);
  if (st == 0) {
    spc_tensor *y = tu_read_ok(yp, 0, SPC_VTYPE_AUTO);
    ck_assert_msg(spc_tensor_vtype(y) == SPC_C128, "real A, complex X: y is %s, X's imaginary parts dropped",
                  spc_vtype_name(spc_tensor_vtype(y)));
    spc_tensor_free(&y);
  } else {
    ck_assert_msg(r.err[0] && !tu_exists(yp), "refused without a message or left y");
  }
  tu_run_free(&r);
  free(a);
  free(x);
  free(yp);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- user formats --------------------------------------------------------------------- */

/* From tests/test_convert.c. */
static const char csr_desc_yaml[] =
    "# CSR whose rows list their columns in descending order: the compressed\n"
    "# level stores -j (ascending), an offset level recovers j.\n"
    "format: csr_desc\n"
    "description: CSR with each row's columns stored descending (crd holds -j)\n"
    "order: 2\n"
    "remap: (i, j) -> (i, 0 - j as nj, j)\n"
    "levels:\n"
    "  - dense\n"
    "  - compressed\n"
    "  - {level: offset, access: 0 - nj}\n";

static const char xcomp_yaml[] =
    "level: xcompressed\n"
    "description: compressed under other names (a user's level format)\n"
    "properties: [ordered, unique, compact, locate]\n"
    "arrays: {ptr: index, idx: coord}\n"
    "read:\n"
    "  begin: ptr[p]\n"
    "  end: ptr[p + 1]\n"
    "  access: idx[q]\n"
    "  size: ptr[np]\n"
    "write:\n"
    "  queries:\n"
    "    - select [*] -> count(c) as nnz\n"
    "  init: |\n"
    "    ptr = alloc(index, np + 1)\n"
    "    for x in 0 .. np { ptr[x + 1] = nnz[x] }\n"
    "    prefix_sum(ptr, 0, np + 1)\n"
    "    idx = alloc(coord, ptr[np])\n"
    "  yield_pos: |\n"
    "    r = ptr[p]\n"
    "    ptr[p] += 1\n"
    "    return r\n"
    "  insert_coord: idx[q] = c\n"
    "  finalize: shift(ptr, 0, np, 0)\n";

static const char bcsr_cm_yaml[] =
    "format: bcsr_cm\n"
    "description: block CSR with column-major M x N blocks, block columns in xcompressed\n"
    "order: 2\n"
    "params: {M: 2, N: 3}\n"
    "remap: (i, j) -> (i / M as bi, j / N as bj, j % N as jj, i % M as ii)\n"
    "levels: [dense, xcompressed, dense, dense]\n"
    "fill: zero\n";

/* columns stored relative to each row's first: a level whose access
 * reads its parent's position (base[p] + crd[q]); one query of a count
 * and a min */
static const char delta_yaml[] =
    "level: delta\n"
    "properties: [ordered, unique, compact]\n"
    "arrays: {pos: index, base: coord, crd: coord}\n"
    "read:\n"
    "  begin: pos[p]\n"
    "  end: pos[p + 1]\n"
    "  access: base[p] + crd[q]\n"
    "  size: pos[np]\n"
    "write:\n"
    "  queries:\n"
    "    - select [*] -> count(c) as nnz, min(c) as cmin\n"
    "  init: |\n"
    "    pos = alloc(index, np + 1)\n"
    "    base = alloc(coord, np)\n"
    "    for x in 0 .. np {\n"
    "      pos[x + 1] = nnz[x]\n"
    "      if nnz[x] > 0 { base[x] = cmin[x] }\n"
    "    }\n"
    "    prefix_sum(pos, 0, np + 1)\n"
    "    crd = alloc(coord, pos[np])\n"
    "  yield_pos: |\n"
    "    r = pos[p]\n"
    "    pos[p] += 1\n"
    "    return r\n"
    "  insert_coord: crd[q] = c - base[p]\n"
    "  finalize: shift(pos, 0, np, 0)\n";

START_TEST(test_spmv_user_formats) {
  jit_env();
  double t0 = now_s();
  char *dir = tu_mkdtemp();
  char *desc = tu_file(dir, "csr_desc.yaml", csr_desc_yaml);
  char *xcomp = tu_file(dir, "xcompressed.yaml", xcomp_yaml);
  char *bcm = tu_file(dir, "bcsr_cm.yaml", bcsr_cm_yaml);
  char *dlv = tu_file(dir, "delta.yaml", delta_yaml);
  char *dcsr = tu_file(dir, "delta_csr.yaml", "format: delta_csr\norder: 2\nlevels: [dense, delta]\n");
  const char *paths[3] = {desc, bcm, dcsr};
  static const char *const fnames[3] = {"csr_desc", "bcsr_cm", "delta_csr"};
  /* bcsstk13: 43 entries a row, taken two rows at a time (the delta level
   * there took both rows' bases from the second row) */
  static const char *const names[] = {"cage5.mtx", "young1c.mtx", "lp_afiro.mtx", "dwt_878.mtx",
                                      "matrix_int64.mtx", "arrowc.mtx", "bcsstk13.mtx", NULL};
  long runs = 0, jit = 0, refused = 0;
  for (int i = -1; i < 0 || names[i]; i++) {
    cm *M;
    if (i < 0) { /* a hand-made one, with data or without */
      double re[] = {1.5, -2, 0.25, 3, 7, -1, 2};
      int64_t ri[] = {0, 0, 1, 2, 3, 3, 4}, ci[] = {0, 4, 1, 3, 0, 3, 2};
      M = calloc(1, sizeof *M);
      cm_fill(M, coo_make(5, 5, 7, SPC_F64, ri, ci, re, NULL, NULL), "small");
    } else if (!(M = load_one(names[i]))) {
      continue;
    }
    double *x = make_x(M->m > M->n ? M->m : M->n, is_cplx(M));
    for (int f = 0; f < 3; f++) {
      spc_convert_opts o; /* the interpreter converts (no factory routine: auto would compile) */
      conv_opts(&o, SPC_ENGINE_GENERIC);
      o.nspec_files = 1;
      o.spec_files[0] = f == 2 ? dlv : xcomp;
      spc_tensor *B = NULL;
      spc_error e;
      spc_error_clear(&e);
      spc_status s = spc_convert_to(M->A, paths[f], &o, &B, &e);
      if (s) {
        ck_assert_msg(s == SPC_ERR_UNSUPPORTED && strstr(e.msg, "cannot"), "%s -> %s: %s", M->name, paths[f],
                      e.msg);
        refused++;
        continue;
      }
      ck_assert_str_eq(spc_tensor_format(B), fnames[f]);
      for (int tr = 0; tr < 2; tr++) {
        char what[256];
        snprintf(what, sizeof what, "%s as %s%s", M->name, spc_tensor_format(B), tr ? " transposed" : "");
        yref r;
        spmv_ref(M, tr, x, &r);
        double *yg = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 1, NULL, what);
        check_y(&r, yg, what);
        double *y2 = spmv_ok(B, tr, x, SPC_ENGINE_GENERIC, 2, NULL, what);
        check_y(&r, y2, what);
        if (f == 0 && !tr) ck_assert_msg(!memcmp(yg, y2, ybytes(B, tr)), "%s: 2 threads", what);
        runs += 2;
        if (i < 1 || f == 2) { /* the JIT on the hand-made one and cage5, and on delta_csr */
          double *yj = spmv_ok(B, tr, x, SPC_ENGINE_JIT, 1, NULL, what);
          ck_assert_msg(!memcmp(yg, yj, ybytes(B, tr)), "%s: JIT differs from generic", what);
          free(yj);
          jit++;
        }
        /* a COO through opts.format = the YAML path (csr_desc needs no
         * level file) */
        if (f == 0) {
          double *yc = spmv_ok(M->A, tr, x, SPC_ENGINE_GENERIC, 1, desc, what);
          ck_assert_msg(!memcmp(yg, yc, ybytes(B, tr)), "%s: opts.format = the YAML differs", what);
          free(yc);
          runs++;
        }
        free(yg);
        free(y2);
        yref_free(&r);
      }
      spc_tensor_free(&B);
    }
    free(x);
    free_one(M);
  }
  printf("kernels: spmv on user formats csr_desc, bcsr_cm, delta_csr: %ld runs within 1e-12 (%ld on the JIT, "
         "bit-equal to generic), %ld conversions refused; %.1f s\n",
         runs, jit, refused, now_s() - t0);
  tu_rmtree(dir);
  free(dir);
  free(desc);
  free(xcomp);
  free(bcm);
  free(dlv);
  free(dcsr);
}
END_TEST

/* ---- spgemm ---------------------------------------------------------------------------- */

/* A plain CSR view of M's components (duplicates kept, stored order kept
 * within a row). */
typedef struct pcsr {
  int64_t m, n, *rp, *k; /* k: component index of M per CSR slot */
} pcsr;

static void pcsr_of(const cm *M, pcsr *c) {
  c->m = M->m;
  c->n = M->n;
  c->rp = calloc((size_t)M->m + 2, sizeof *c->rp);
  c->k = malloc((size_t)(M->nnz ? M->nnz : 1) * sizeof *c->k);
  for (int64_t q = 0; q < M->nnz; q++) c->rp[M->ri[q] + 2]++;
  for (int64_t i = 0; i < M->m; i++) c->rp[i + 2] += c->rp[i + 1];
  for (int64_t q = 0; q < M->nnz; q++) c->k[c->rp[M->ri[q] + 1]++] = q;
}

static void pcsr_free(pcsr *c) {
  free(c->rp);
  free(c->k);
}

static bool vt_int(spc_vtype v) { return v == SPC_I64 || v == SPC_U64 || v == SPC_PATTERN; }

/* The value type spc_spgemm documents for A B. */
static spc_vtype product_vt(spc_vtype a, spc_vtype b) {
  if (a == SPC_C128 || b == SPC_C128) return SPC_C128;
  if (a == SPC_U64 && b == SPC_U64) return SPC_U64; /* as SciPy's uint64 product */
  if (vt_int(a) && vt_int(b) && !(a == SPC_PATTERN && b == SPC_PATTERN)) return SPC_I64;
  return SPC_F64;
}

static int64_t arr_at(const void *d, spc_itype t, int64_t k) {
  return t == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

/* C (csr) = A B checked against a Gustavson in plain C: row pointers and
 * columns exact, values within tolerance (integers bit exact). */
static void check_product(const cm *A, const cm *B, const spc_tensor *C, const char *what) {
  ck_assert_msg(!strcmp(spc_tensor_format(C), "csr"), "%s: format %s", what, spc_tensor_format(C));
  ck_assert_int_eq(spc_tensor_dim(C, 0), A->m);
  ck_assert_int_eq(spc_tensor_dim(C, 1), B->n);
  spc_vtype vt = product_vt(A->vt, B->vt);
  ck_assert_msg(spc_tensor_vtype(C) == vt, "%s: value type %s, expected %s", what,
                spc_vtype_name(spc_tensor_vtype(C)), spc_vtype_name(vt));
  const void *pd, *cd;
  spc_itype pt, ct;
  int64_t pl, cl, nv = 0;
  spc_error e;
  tu_assert_ok(spc_tensor_level_array(C, 1, "pos", &pd, &pt, &pl), &e);
  tu_assert_ok(spc_tensor_level_array(C, 1, "crd", &cd, &ct, &cl), &e);
  const void *val = spc_tensor_values(C, &nv);
  ck_assert_int_eq(pl, A->m + 1);
  ck_assert_int_eq(arr_at(pd, pt, 0), 0);
  ck_assert_int_eq(arr_at(pd, pt, A->m), cl);
  ck_assert_int_eq(nv, cl);
  pcsr a, b;
  pcsr_of(A, &a);
  pcsr_of(B, &b);
  size_t n1 = (size_t)(B->n ? B->n : 1);
  int64_t *mark = malloc(n1 * sizeof *mark), *cols = malloc(n1 * sizeof *cols);
  long double *ar = calloc(n1, sizeof *ar), *ai = calloc(n1, sizeof *ai), *sc = calloc(n1, sizeof *sc);
  uint64_t *au = calloc(n1, sizeof *au);
  for (int64_t j = 0; j < B->n; j++) mark[j] = -1;
  bool ints = vt == SPC_I64 || vt == SPC_U64, cplx = vt == SPC_C128;
  for (int64_t i = 0; i < A->m; i++) {
    int64_t cnt = 0;
    for (int64_t p = a.rp[i]; p < a.rp[i + 1]; p++) {
      int64_t ka = a.k[p], kk = A->ci[ka];
      for (int64_t q = b.rp[kk]; q < b.rp[kk + 1]; q++) {
        int64_t kb = b.k[q], j = B->ci[kb];
        if (mark[j] != i) {
          mark[j] = i;
          cols[cnt++] = j;
          ar[j] = ai[j] = sc[j] = 0;
          au[j] = 0;
        }
        if (ints) {
          au[j] += A->u[ka] * B->u[kb];
        } else {
          long double xr = A->re[ka], xi = A->im[ka], yr = B->re[kb], yi = B->im[kb];
          if (cplx) {
            ar[j] += xr * yr - xi * yi;
            ai[j] += xr * yi + xi * yr;
          } else {
            ar[j] += xr * yr;
          }
          sc[j] += (fabsl(xr) + fabsl(xi)) * (fabsl(yr) + fabsl(yi));
        }
      }
    }
    /* sort the row's columns (insertion sort on short rows, qsort else) */
    for (int64_t s = 1; s < cnt; s++) {
      int64_t v = cols[s], t = s;
      while (t > 0 && cols[t - 1] > v) cols[t] = cols[t - 1], t--;
      cols[t] = v;
    }
    int64_t r0 = arr_at(pd, pt, i), r1 = arr_at(pd, pt, i + 1);
    tu_check(r1 - r0 == cnt, "%s: row %lld holds %lld entries, reference %lld", what, (long long)i,
             (long long)(r1 - r0), (long long)cnt);
    for (int64_t t = 0; t < cnt; t++) {
      int64_t j = cols[t], q = r0 + t;
      tu_check(arr_at(cd, ct, q) == j, "%s: row %lld entry %lld: column %lld, reference %lld", what,
               (long long)i, (long long)t, (long long)arr_at(cd, ct, q), (long long)j);
      if (ints) {
        tu_check(((const uint64_t *)val)[q] == au[j], "%s: C(%lld,%lld) = %lld, reference %lld (wrapping)", what,
                 (long long)i, (long long)j, (long long)((const int64_t *)val)[q], (long long)au[j]);
      } else {
        long double tol = SPGEMM_TOL * sc[j];
        long double vr = cplx ? ((const double *)val)[2 * q] : ((const double *)val)[q];
        long double vi = cplx ? ((const double *)val)[2 * q + 1] : 0;
        tu_check(near(vr, ar[j], tol) && near(vi, ai[j], tol),
                 "%s: C(%lld,%lld) = (%.17g, %.17g), reference (%.17Lg, %.17Lg)", what, (long long)i, (long long)j,
                 (double)vr, (double)vi, ar[j], ai[j]);
      }
    }
  }
  free(mark);
  free(cols);
  free(ar);
  free(ai);
  free(sc);
  free(au);
  pcsr_free(&a);
  pcsr_free(&b);
}

static spc_tensor *spgemm_ok(const spc_tensor *A, const spc_tensor *B, const char *fmt, int threads,
                             const char *what) {
  spc_kernel_opts k;
  kopts(&k, SPC_ENGINE_AUTO, threads, NULL);
  spc_tensor *C = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_spgemm(A, B, fmt, &k, &C, &e);
  char b[1200];
  ck_assert_msg(s == SPC_OK, "%s: spgemm (%s, %d threads): %s: %s", what, fmt ? fmt : "csr", threads,
                spc_status_name(s), spc_error_string(&e, b, sizeof b));
  return C;
}

/* Same level arrays and value bytes (two csr results). */
static void same_csr(const spc_tensor *a, const spc_tensor *b, const char *what) {
  ck_assert_int_eq(spc_tensor_vtype(a), spc_tensor_vtype(b));
  for (int l = 1; l < 2; l++) {
    static const char *const nm[] = {"pos", "crd"};
    for (int k = 0; k < 2; k++) {
      const void *x, *y;
      spc_itype tx, ty;
      int64_t lx, ly;
      spc_error e;
      tu_assert_ok(spc_tensor_level_array(a, l, nm[k], &x, &tx, &lx), &e);
      tu_assert_ok(spc_tensor_level_array(b, l, nm[k], &y, &ty, &ly), &e);
      ck_assert_msg(tx == ty && lx == ly && (!lx || !memcmp(x, y, (size_t)lx * (tx == SPC_IDX32 ? 4 : 8))),
                    "%s: %s differs", what, nm[k]);
    }
  }
  int64_t na, nb;
  const void *va = spc_tensor_values(a, &na), *vb = spc_tensor_values(b, &nb);
  ck_assert_int_eq(na, nb);
  ck_assert_msg(!na || !memcmp(va, vb, (size_t)na * spc_vtype_size(spc_tensor_vtype(a))), "%s: values differ",
                what);
}

/* A B: reference, threads 2 bit-equal (when small enough), dcsc equal. */
static int64_t product_checks_on(const cm *A, const cm *B, const spc_tensor *a, const spc_tensor *b, bool extra,
                                 const char *what) {
  spc_tensor *C = spgemm_ok(a, b, NULL, 1, what);
  check_product(A, B, C, what);
  int64_t nnz = spc_tensor_nstored(C);
  if (extra) {
    spc_tensor *C2 = spgemm_ok(a, b, "csr", 2, what);
    char w[300];
    snprintf(w, sizeof w, "%s: 1 vs 2 threads", what);
    same_csr(C, C2, w);
    spc_tensor_free(&C2);
    spc_tensor *D = spgemm_ok(a, b, "dcsc", 2, what);
    ck_assert_str_eq(spc_tensor_format(D), "dcsc");
    snprintf(w, sizeof w, "%s: dcsc vs csr", what);
    tu_assert_same_tensor(C, D, 0, w);
    spc_tensor_free(&D);
  }
  spc_tensor_free(&C);
  return nnz;
}

static int64_t product_checks(const cm *A, const cm *B, bool extra, const char *what) {
  return product_checks_on(A, B, A->A, B->A, extra, what);
}

static bool square_small(int64_t m, int64_t n, int64_t nnz) {
  (void)nnz;
  return m == n && n < 5000;
}

START_TEST(test_spgemm_square) {
  double t0 = now_s();
  int nm = 0;
  cm *m = load_shared(&nm, square_small);
  if (!m) return;
  long n = 0, extra = 0;
  int64_t tot = 0;
  for (int i = 0; i < nm; i++) {
    const cm *M = &m[i];
    if (M->m != M->n || M->n >= 5000) continue;
    double ta = now_s();
    /* the second run and dcsc where the product is moderate */
    int64_t flops = 0;
    {
      int64_t *rl = calloc((size_t)M->m + 1, sizeof *rl);
      for (int64_t q = 0; q < M->nnz; q++) rl[M->ri[q]]++;
      for (int64_t q = 0; q < M->nnz; q++) flops += rl[M->ci[q]];
      free(rl);
    }
    bool x = flops <= 2000000;
    char what[256];
    snprintf(what, sizeof what, "%s^2", M->name);
    /* the operand in csr already (the kernel takes it as it is; COO
     * operands are converted: test_spgemm_rect, test_spgemm_types) */
    spc_tensor *a = NULL;
    ck_assert_int_eq(convert(M->A, "csr", &a, M->name), SPC_OK);
    tot += product_checks_on(M, M, a, a, x, what);
    spc_tensor_free(&a);
    n++;
    extra += x;
    if (verbose()) printf("kernels: spgemm %s (%lld flops): %.2f s\n", M->name, (long long)flops, now_s() - ta);
  }
  ck_assert_int_ge(n, 20);
  printf("kernels: spgemm A A on %ld square matrices (n < 5000, %lld entries in all the products) equal to "
         "the reference; threads 1 = 2 and dcsc = csr on %ld; %.1f s\n",
         n, (long long)tot, extra, now_s() - t0);
  free_all(m, nm);
}
END_TEST

/* A A^T and A^T A for rectangular shared matrices; A (m x k) times a
 * different B (k x n). */
START_TEST(test_spgemm_rect) {
  double t0 = now_s();
  static const char *const names[] = {"lp_afiro.mtx", "lp_e226.mtx", "lp_share1b.mtx", "ash219.mtx",
                                      "Franz6_id1959_aug.mtx", NULL};
  long n = 0;
  for (int i = 0; names[i]; i++) {
    cm *M = load_one(names[i]);
    if (!M) continue;
    cm T;
    cm_transpose(M, &T);
    char what[256];
    snprintf(what, sizeof what, "%s A^T", M->name);
    bool small = M->nnz < 60000;
    double ta = now_s();
    product_checks(M, &T, small, what);
    if (verbose()) printf("kernels: spgemm %s: %.2f s\n", what, now_s() - ta), ta = now_s();
    snprintf(what, sizeof what, "%s^T A", M->name);
    product_checks(&T, M, small, what);
    if (verbose()) printf("kernels: spgemm %s: %.2f s\n", what, now_s() - ta);
    n += 2;
    /* and the mismatch: A A (m x k times m x k) */
    spc_tensor *C = NULL;
    spc_error e;
    spc_error_clear(&e);
    ck_assert_int_eq(spc_spgemm(M->A, M->A, NULL, NULL, &C, &e), SPC_ERR_ARG);
    ck_assert_ptr_null(C);
    assert_has(e.msg, "cannot multiply");
    cm_free(&T);
    free_one(M);
  }
  /* lp_afiro (27 x 51) times ash219^T's first 51 rows... built by hand:
   * B (51 x 7) with a band, then A B (27 x 7) */
  cm *A = load_one("lp_afiro.mtx");
  if (A) {
    int64_t ri[102], ci[102];
    double re[102];
    int64_t k = 0;
    for (int64_t r = 0; r < 51; r++)
      for (int64_t c = r % 7; c < 7 && k < 102; c += 4) ri[k] = r, ci[k] = c, re[k] = xval(k, 0), k++;
    cm B;
    cm_fill(&B, coo_make(51, 7, k, SPC_F64, ri, ci, re, NULL, NULL), "band51x7");
    product_checks(A, &B, true, "lp_afiro band51x7");
    n++;
    cm_free(&B);
    free_one(A);
  }
  if (n) printf("kernels: spgemm on %ld rectangular products equal to the reference; %.1f s\n", n, now_s() - t0);
}
END_TEST

/* Value types by hand: int64 that wraps, uint64, pattern, float32,
 * complex, mixes; duplicates and cancellation; empty. */
START_TEST(test_spgemm_types) {
  /* A 3 x 4 (with (0,1) twice: summed in the value type first), B 4 x 3,
   * every pair of value types over the same structure; the integer values
   * overflow int64 in the products (wrapping) */
  int64_t ari[] = {0, 0, 0, 1, 2, 2, 0}, aci[] = {0, 1, 3, 2, 0, 3, 1};
  int64_t bri[] = {0, 1, 1, 2, 3, 3}, bci[] = {0, 0, 2, 1, 0, 2};
  double are[] = {1, 2, -0.5, 4, 0.25, -8, 1}, aim[] = {0.5, -1, 2, 0, 3, 1, -2};
  double bre[] = {3, -1.5, 2, 0.125, 1, -4}, bim[] = {1, 0, -2, 5, 0.5, 0};
  uint64_t aiu[] = {(uint64_t)1 << 62, 3, (uint64_t)INT64_MAX, 7, (uint64_t)-2, 5, 1};
  uint64_t biu[] = {4, (uint64_t)1 << 62, 9, (uint64_t)-1, 2, UINT64_MAX};
  static const spc_vtype vts[] = {SPC_PATTERN, SPC_I64, SPC_U64, SPC_F32, SPC_F64, SPC_C128};
  long n = 0;
  for (int x = 0; x < 6; x++)
    for (int y = 0; y < 6; y++) {
      cm A, B;
      cm_fill(&A, coo_make(3, 4, 7, vts[x], ari, aci, are, aim, aiu), spc_vtype_name(vts[x]));
      cm_fill(&B, coo_make(4, 3, 6, vts[y], bri, bci, bre, bim, biu), spc_vtype_name(vts[y]));
      char what[300];
      snprintf(what, sizeof what, "%s x %s", A.name, B.name);
      product_checks(&A, &B, true, what);
      n++;
      cm_free(&A);
      cm_free(&B);
    }
  /* int64 wrapping, by hand: 2^62 * 4 + 3 * 2^62 wraps to 2^62 * 7 mod 2^64 */
  {
    int64_t r1[] = {0, 0}, c1[] = {0, 1}, r2[] = {0, 1}, c2[] = {0, 0};
    uint64_t u1[] = {(uint64_t)1 << 62, 3}, u2[] = {4, (uint64_t)1 << 62};
    spc_tensor *A = coo_make(1, 2, 2, SPC_I64, r1, c1, NULL, NULL, u1);
    spc_tensor *B = coo_make(2, 1, 2, SPC_I64, r2, c2, NULL, NULL, u2);
    spc_tensor *C = spgemm_ok(A, B, NULL, 1, "wrap");
    int64_t nv = 0;
    const int64_t *v = spc_tensor_values(C, &nv);
    ck_assert_int_eq(nv, 1);
    ck_assert_int_eq(spc_tensor_vtype(C), SPC_I64);
    ck_assert_int_eq(v[0], (int64_t)(((uint64_t)1 << 62) * 7u));
    spc_tensor_free(&C);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
  }
  /* cancellation: [1 1] [1; -1] = 0, kept as a stored zero */
  {
    int64_t r1[] = {0, 0}, c1[] = {0, 1}, r2[] = {0, 1}, c2[] = {0, 0};
    double v1[] = {1, 1}, v2[] = {1, -1};
    spc_tensor *A = coo_make(1, 2, 2, SPC_F64, r1, c1, v1, NULL, NULL);
    spc_tensor *B = coo_make(2, 1, 2, SPC_F64, r2, c2, v2, NULL, NULL);
    spc_tensor *C = spgemm_ok(A, B, NULL, 1, "cancel");
    ck_assert_int_eq(spc_tensor_nstored(C), 1);
    ck_assert(((const double *)spc_tensor_values(C, NULL))[0] == 0);
    spc_tensor_free(&C);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
  }
  /* empty operands */
  {
    int64_t r[] = {0}, c[] = {0};
    double v[] = {2};
    spc_tensor *E = coo_make(3, 4, 0, SPC_F64, r, c, v, NULL, NULL);
    spc_tensor *B = coo_make(4, 2, 1, SPC_F64, r, c, v, NULL, NULL);
    spc_tensor *C = spgemm_ok(E, B, NULL, 2, "empty");
    ck_assert_int_eq(spc_tensor_nstored(C), 0);
    ck_assert_int_eq(spc_tensor_dim(C, 0), 3);
    ck_assert_int_eq(spc_tensor_dim(C, 1), 2);
    spc_tensor_free(&C);
    spc_tensor_free(&E);
    spc_tensor_free(&B);
  }
  /* zero inner and outer dimensions: 3 x 0 times 0 x 2, 0 x 3 times 3 x 2 */
  {
    int64_t r[] = {0}, c[] = {0};
    double v[] = {2};
    spc_tensor *A = coo_make(3, 0, 0, SPC_F64, r, c, v, NULL, NULL), *B = coo_make(0, 2, 0, SPC_C128, r, c, v, NULL, NULL);
    spc_tensor *C = spgemm_ok(A, B, "dcsc", 2, "3 x 0 by 0 x 2");
    ck_assert(spc_tensor_nstored(C) == 0 && spc_tensor_dim(C, 0) == 3 && spc_tensor_dim(C, 1) == 2);
    ck_assert_int_eq(spc_tensor_vtype(C), SPC_C128);
    spc_tensor_free(&C);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
    A = coo_make(0, 3, 0, SPC_F64, r, c, v, NULL, NULL);
    B = coo_make(3, 2, 1, SPC_F64, r, c, v, NULL, NULL);
    C = spgemm_ok(A, B, NULL, 1, "0 x 3 by 3 x 2");
    ck_assert(spc_tensor_nstored(C) == 0 && spc_tensor_dim(C, 0) == 0 && spc_tensor_dim(C, 1) == 2);
    spc_tensor_free(&C);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
  }
  /* operands in other formats (converted to csr by the kernel) */
  {
    cm A, B;
    cm_fill(&A, coo_make(3, 4, 7, SPC_F64, ari, aci, are, aim, aiu), "A");
    cm_fill(&B, coo_make(4, 3, 6, SPC_C128, bri, bci, bre, bim, biu), "B");
    spc_tensor *ref = spgemm_ok(A.A, B.A, NULL, 1, "coo operands");
    for (int f = 0; f < NF; f++) {
      spc_tensor *xa = NULL, *xb = NULL;
      if (convert(A.A, fmts[f], &xa, "A")) continue;
      if (convert(B.A, fmts[f], &xb, "B")) {
        spc_tensor_free(&xa);
        continue;
      }
      char what[64];
      snprintf(what, sizeof what, "operands in %s", fmts[f]);
      spc_tensor *C = spgemm_ok(xa, xb, NULL, 2, what);
      same_csr(ref, C, what);
      spc_tensor_free(&C);
      spc_tensor_free(&xa);
      spc_tensor_free(&xb);
      n++;
    }
    spc_tensor_free(&ref);
    cm_free(&A);
    cm_free(&B);
  }
  ck_assert_int_ge(n, 40);
}
END_TEST

/* ---- the command line ------------------------------------------------------------------- */

/* y read back from a Matrix Market array (n x 1): doubles or pairs. */
static double *read_y(const char *path, int64_t n, bool cplx) {
  spc_tensor *t = tu_read_ok(path, 0, SPC_VTYPE_AUTO);
  ck_assert_int_eq(spc_tensor_order(t), 2);
  ck_assert_int_eq(spc_tensor_dim(t, 0), n);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 1);
  ck_assert_int_eq(spc_tensor_vtype(t), cplx ? SPC_C128 : SPC_F64);
  double *y = calloc((size_t)(n ? n : 1), 16);
  spc_iter *it = NULL;
  spc_error e;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t k[2];
  const void *v;
  while (spc_iter_next(it, k, &v)) {
    if (cplx) memcpy(y + 2 * k[0], v, 16);
    else memcpy(y + k[0], v, 8);
  }
  spc_iter_free(&it);
  spc_tensor_free(&t);
  return y;
}

/* x as a Matrix Market array file. */
static char *write_x(const char *dir, const char *name, const double *x, int64_t n, bool cplx) {
  size_t cap = 64 + (size_t)n * 52;
  char *s = malloc(cap);
  size_t l = (size_t)snprintf(s, cap, "%%%%MatrixMarket matrix array %s general\n%lld 1\n",
                              cplx ? "complex" : "real", (long long)n);
  for (int64_t i = 0; i < n; i++)
    l += (size_t)(cplx ? snprintf(s + l, cap - l, "%.17g %.17g\n", x[2 * i], x[2 * i + 1])
                       : snprintf(s + l, cap - l, "%.17g\n", x[i]));
  char *p = tu_file(dir, name, s);
  free(s);
  return p;
}

static const char small_real[] = "%%MatrixMarket matrix coordinate real general\n"
                                 "4 5 6\n1 1 1.5\n1 3 -2\n2 5 0.1\n3 2 3.25\n4 1 -7\n4 4 1e-3\n";
static const char small_cplx[] = "%%MatrixMarket matrix coordinate complex hermitian\n"
                                 "3 3 5\n1 1 1 0\n3 1 2 -1\n2 2 1 0\n3 2 3 0.5\n3 3 42 0\n";

/* One CLI spmv checked against the library. */
static void cli_spmv(const char *dir, const char *A, bool tr, bool with_x, int threads, const char *to,
                     const char *what) {
  spc_tensor *t = tu_read_ok(A, 1, SPC_VTYPE_AUTO);
  bool cplx = spc_tensor_vtype(t) == SPC_C128;
  int64_t nx = spc_tensor_dim(t, tr ? 0 : 1), ny = spc_tensor_dim(t, tr ? 1 : 0);
  double *x;
  char *xp = NULL;
  if (with_x) {
    x = make_x(nx, cplx);
    xp = write_x(dir, "x.mtx", x, nx, cplx);
  } else {
    x = malloc((size_t)(nx ? nx : 1) * 16);
    for (int64_t j = 0; j < nx; j++) {
      if (cplx) x[2 * j] = 1, x[2 * j + 1] = 0;
      else x[j] = 1;
    }
  }
  char *yp = tu_path(dir, "y.mtx");
  remove(yp);
  tu_run_result r;
  char to_opt[300] = "";
  if (to) snprintf(to_opt, sizeof to_opt, " --to %s", to);
  int st = tu_run(&r, "spmv %s %s -o %s --threads %d%s%s", A, xp ? xp : "", yp, threads, tr ? " --transpose" : "",
                  to_opt);
  ck_assert_msg(st == 0, "%s: exit %d: %s", what, st, r.err);
  tu_run_free(&r);
  double *y = read_y(yp, ny, cplx);
  /* the CLI's default schedule: auto (one thread on these small matrices) */
  double *yl = spmv_sched_ok(t, tr, x, SPC_ENGINE_AUTO, threads, to, SPC_SCHED_AUTO, what);
  size_t w = (size_t)ny * (cplx ? 16 : 8);
  ck_assert_msg(!memcmp(y, yl, w), "%s: the CLI's y differs from spc_spmv's", what);
  /* and the reference */
  cm M;
  cm_fill(&M, t, what);
  yref ref;
  spmv_ref(&M, tr, x, &ref);
  check_y(&ref, y, what);
  yref_free(&ref);
  cm_free(&M);
  free(y);
  free(yl);
  free(x);
  free(xp);
  free(yp);
}

START_TEST(test_cli_spmv) {
  jit_env();
  char *dir = tu_mkdtemp();
  char *sr = tu_file(dir, "small.mtx", small_real), *sc = tu_file(dir, "smallc.mtx", small_cplx);
  for (int tr = 0; tr < 2; tr++)
    for (int wx = 0; wx < 2; wx++) {
      char what[128];
      snprintf(what, sizeof what, "small%s%s", tr ? " --transpose" : "", wx ? " X" : "");
      cli_spmv(dir, sr, tr, wx, 1, NULL, what);
      snprintf(what, sizeof what, "complex%s%s", tr ? " --transpose" : "", wx ? " X" : "");
      cli_spmv(dir, sc, tr, wx, 1, NULL, what);
    }
  cli_spmv(dir, sr, false, true, 1, "dia", "small --to dia");
  char buf[2048];
  const char *dd = tu_data_dir();
  if (dd) {
    snprintf(buf, sizeof buf, "%s/matrices/west0067.mtx", dd);
    if (tu_exists(buf)) {
      cli_spmv(dir, buf, false, true, 2, NULL, "west0067 X, 2 threads");
      cli_spmv(dir, buf, true, true, 2, NULL, "west0067 --transpose X, 2 threads");
      cli_spmv(dir, buf, true, false, 1, "csc", "west0067 --transpose --to csc");
    }
  }
  if (dd) { /* infinities in the data: written and read back as such */
    snprintf(buf, sizeof buf, "%s/matrices/matrix_fp32.mtx", dd);
    if (tu_exists(buf)) cli_spmv(dir, buf, false, false, 1, NULL, "matrix_fp32 (inf)");
  }
  tu_run_result r;
  char *yp = tu_path(dir, "y.mtx");
  /* X as a sparse column (coordinate n x 1): missing entries are zeros;
   * --engine generic */
  {
    char *xs = tu_file(dir, "xs.mtx", "%%MatrixMarket matrix coordinate real general\n5 1 2\n2 1 0.5\n5 1 -3\n");
    ck_assert_msg(tu_run(&r, "spmv %s %s -o %s --engine generic --threads 1", sr, xs, yp) == 0, "exit %d: %s",
                  r.status, r.err);
    tu_run_free(&r);
    double x[5] = {0, 0.5, 0, 0, -3};
    spc_tensor *t = tu_read_ok(sr, 1, SPC_VTYPE_AUTO);
    double *yl = spmv_ok(t, false, x, SPC_ENGINE_GENERIC, 1, NULL, "sparse X");
    double *y = read_y(yp, 4, false);
    ck_assert_msg(!memcmp(y, yl, 4 * sizeof *y), "sparse X: the CLI's y differs from spc_spmv's");
    ck_assert(y[0] == 0 && y[1] == 0.1 * -3 && y[2] == 3.25 * 0.5 && y[3] == 0);
    free(y);
    free(yl);
    spc_tensor_free(&t);
    free(xs);
  }
  /* without -o: y on stdout */
  ck_assert_int_eq(tu_run(&r, "spmv %s", sr), 0);
  ck_assert_msg(!strncmp(r.out, "%%MatrixMarket matrix array real general\n4 1\n", 44), "stdout: %s", r.out);
  tu_run_free(&r);
  /* --repeat prints the time on stderr, y still right */
  ck_assert_int_eq(tu_run(&r, "spmv %s -o %s --repeat 3", sr, yp), 0);
  assert_has(r.err, "best of 3");
  tu_run_free(&r);
  double *y = read_y(yp, 4, false);
  ck_assert(y[0] == 1.5 - 2 && y[1] == 0.1 && y[2] == 3.25 && y[3] == -7 + 1e-3);
  free(y);
  /* Y.gz gzip-compressed (it was written as plain text); another
   * container's name refused before anything runs */
  {
    char *yz = tu_path(dir, "y.mtx.gz"), *yh = tu_path(dir, "y.bsp.h5");
    ck_assert_int_eq(tu_run(&r, "spmv %s -o %s", sr, yz), 0);
    tu_run_free(&r);
    size_t zn = 0;
    unsigned char *zb = (unsigned char *)tu_read_file(yz, &zn);
    ck_assert(zn > 2 && zb[0] == 0x1f && zb[1] == 0x8b);
    free(zb);
    y = read_y(yz, 4, false);
    ck_assert(y[0] == 1.5 - 2 && y[1] == 0.1 && y[2] == 3.25 && y[3] == -7 + 1e-3);
    free(y);
    ck_assert_int_eq(tu_run(&r, "spmv %s -o %s", sr, yh), 1);
    assert_has(r.err, "Y is written as Matrix Market");
    ck_assert(!tu_exists(yh));
    tu_run_free(&r);
    free(yz), free(yh);
  }
  /* --to a user format's YAML whose level is another --spec file: the
   * matrix converted once, the kernel run in it (it converted again, by
   * the path, without the level: "unknown level format") */
  {
    char *xc = tu_file(dir, "xcompressed.yaml", xcomp_yaml), *bc = tu_file(dir, "bcsr_cm.yaml", bcsr_cm_yaml);
    remove(yp);
    ck_assert_msg(tu_run(&r, "spmv %s -o %s --spec %s --to %s -v", sr, yp, xc, bc) == 0, "exit %d: %s",
                  r.status, r.err);
    tu_run_free(&r);
    y = read_y(yp, 4, false);
    ck_assert(y[0] == 1.5 - 2 && y[1] == 0.1 && y[2] == 3.25 && y[3] == -7 + 1e-3);
    free(y);
    /* the matrix in that user format in a container (which carries the
     * specs): spmv runs on it as read, with no --to and no --spec (it
     * converted to the format's name: "unknown format 'bcsr_cm'") */
    char *hp = tu_path(dir, "user.bsp.h5");
    ck_assert_msg(tu_run(&r, "%s --spec %s --to %s -o %s", sr, xc, bc, hp) == 0, "exit %d: %s", r.status, r.err);
    tu_run_free(&r);
    remove(yp);
    ck_assert_msg(tu_run(&r, "spmv %s -o %s -v", hp, yp) == 0, "spmv of the container: exit %d: %s", r.status,
                  r.err);
    tu_run_free(&r);
    y = read_y(yp, 4, false);
    ck_assert(y[0] == 1.5 - 2 && y[1] == 0.1 && y[2] == 3.25 && y[3] == -7 + 1e-3);
    free(y);
    free(hp);
    free(xc);
    free(bc);
  }
  free(yp);
  free(sr);
  free(sc);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_cli_spgemm) {
  jit_env();
  char *dir = tu_mkdtemp();
  char *a = tu_file(dir, "a.mtx", small_real);
  char *b = tu_file(dir, "b.mtx",
                    "%%MatrixMarket matrix coordinate integer general\n5 3 5\n1 1 2\n2 2 -3\n3 1 4\n4 3 1\n5 2 7\n");
  char *sc = tu_file(dir, "c.mtx", small_cplx);
  typedef struct pair {
    const char *a, *b, *what;
  } pair;
  pair pairs[4] = {{a, b, "real x integer"}, {sc, sc, "complex^2"}, {NULL, NULL, NULL}, {NULL, NULL, NULL}};
  char buf[2048], buf2[2048];
  const char *dd = tu_data_dir();
  int np = 2;
  if (dd) {
    snprintf(buf, sizeof buf, "%s/matrices/west0067.mtx", dd);
    snprintf(buf2, sizeof buf2, "%s/matrices/matrix_int64.mtx", dd);
    if (tu_exists(buf)) pairs[np++] = (pair){buf, buf, "west0067^2"};
    if (tu_exists(buf2)) pairs[np++] = (pair){buf2, buf2, "matrix_int64^2"};
  }
  char *cp = tu_path(dir, "out.mtx"), *hp = tu_path(dir, "out.bsp.h5");
  for (int k = 0; k < np; k++) {
    tu_run_result r;
    remove(cp);
    ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s", pairs[k].a, pairs[k].b, cp) == 0, "%s: exit %d: %s",
                  pairs[k].what, r.status, r.err);
    tu_run_free(&r);
    spc_tensor *A = tu_read_ok(pairs[k].a, 1, SPC_VTYPE_AUTO), *B = tu_read_ok(pairs[k].b, 1, SPC_VTYPE_AUTO);
    spc_tensor *C = spgemm_ok(A, B, NULL, 1, pairs[k].what);
    spc_tensor *back = tu_read_ok(cp, 0, SPC_VTYPE_AUTO);
    tu_assert_same_tensor(back, C, 0, pairs[k].what);
    spc_tensor_free(&back);
    /* --to dcsc into .bsp.h5: the format travels */
    remove(hp);
    ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s --to dcsc --threads 2", pairs[k].a, pairs[k].b, hp) == 0,
                  "%s --to dcsc: exit %d: %s", pairs[k].what, r.status, r.err);
    tu_run_free(&r);
    back = tu_read_ok(hp, 0, SPC_VTYPE_AUTO);
    ck_assert_str_eq(spc_tensor_format(back), "dcsc");
    tu_assert_same_tensor(back, C, 0, pairs[k].what);
    spc_tensor_free(&back);
    spc_tensor_free(&C);
    spc_tensor_free(&A);
    spc_tensor_free(&B);
  }
  free(cp);
  free(hp);
  free(a);
  free(b);
  free(sc);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* The command fails (non-zero, a message on stderr naming needle) and out
 * is not created; the folder holds only what it held. */
static void cli_fails(const char *dir, const char *out, const char *needle, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cli_fails(const char *dir, const char *out, const char *needle, const char *fmt, ...) {
  int before = tu_count_dir(dir);
  tu_run_result r;
  char args[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  int st = tu_run(&r, "%s", args);
  ck_assert_msg(st != 0, "spconv %s: exit 0", args);
  ck_assert_msg(st < 128, "spconv %s: killed (%d): %s", args, st, r.err);
  ck_assert_msg(r.err[0], "spconv %s: no message", args);
  if (needle) ck_assert_msg(strstr(r.err, needle), "spconv %s: '%s' not in: %s", args, needle, r.err);
  ck_assert_msg(!tu_exists(out), "spconv %s: left %s", args, out);
  ck_assert_msg(tu_count_dir(dir) == before, "spconv %s: left a file in %s", args, dir);
  tu_run_free(&r);
}

START_TEST(test_cli_bad) {
  jit_env();
  char *dir = tu_mkdtemp(), *work = tu_mkdtemp();
  char *a = tu_file(dir, "a.mtx", small_real);
  char *b = tu_file(dir, "b.mtx", "%%MatrixMarket matrix coordinate integer general\n5 3 2\n1 1 2\n5 2 7\n");
  char *t3 = tu_file(dir, "t.tns", "1 1 1 1.5\n2 3 1 2\n2 2 2 -1\n");
  char *xbad = tu_file(dir, "x.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n");
  char *nf = tu_path(dir, "missing.mtx");
  char *out = tu_path(work, "out.mtx");
  cli_fails(work, out, "missing.mtx", "spmv %s -o %s", nf, out);
  cli_fails(work, out, "missing.mtx", "spmv %s %s -o %s", a, nf, out);
  cli_fails(work, out, "matrix", "spmv %s -o %s", t3, out);
  cli_fails(work, out, "x.mtx", "spmv %s %s -o %s", a, xbad, out); /* x has 3 entries, A 5 columns */
  /* x not a vector: a 5 x 2 x 2 tensor (its first dimension A's columns:
   * once read as the vector of its first coordinates) */
  char *x3 = tu_file(dir, "x3.tns", "1 1 1 1.5\n5 2 2 2\n");
  cli_fails(work, out, "x3.tns: x must be a vector (an n x 1 or 1 x n array, or of order 1), not 5 x 2 x 2",
            "spmv %s %s -o %s", a, x3, out);
  free(x3);
  cli_fails(work, out, "cannot", "spmv %s --to sky -o %s", a, out);  /* entries above the diagonal */
  cli_fails(work, out, "missing.mtx", "spgemm %s %s -o %s", nf, a, out);
  cli_fails(work, out, "missing.mtx", "spgemm %s %s -o %s", a, nf, out);
  cli_fails(work, out, NULL, "spgemm %s %s -o %s", t3, t3, out);
  cli_fails(work, out, "cannot multiply", "spgemm %s %s -o %s", a, a, out); /* 4 x 5 by 4 x 5 */
  { /* the exit codes: shapes that do not match are inconsistent inputs (2,
     * as x's length for spmv), both named; a tensor unsupported (5, as for
     * spmv), named */
    tu_run_result r;
    ck_assert_int_eq(tu_run(&r, "spgemm %s %s -o %s", a, a, out), 2);
    ck_assert_msg(strstr(r.err, " x ") && strstr(r.err, "a.mtx x ") && strstr(r.err, "cannot multiply a 4 x 5 matrix"),
                  "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_run(&r, "explain spgemm %s %s", a, a), 2);
    ck_assert_msg(strstr(r.err, "a.mtx x ") && strstr(r.err, "cannot multiply"), "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_run(&r, "spgemm %s %s -o %s", a, t3, out), 5);
    ck_assert_msg(strstr(r.err, t3) && strstr(r.err, "order 3"), "%s", r.err);
    tu_run_free(&r);
  }
  /* a failure past reading names the inputs: A's conversion (spmv), the product (spgemm) */
  char *huge = tu_file(dir, "huge.mtx", "%%MatrixMarket matrix coordinate real general\n9000000000000000000 2 1\n1 1 1\n");
  cli_fails(work, out, "huge.mtx: ", "spmv %s -o %s", huge, out); /* a csr of 9e18 rows: too large */
  cli_fails(work, out, "a.mtx x ", "spgemm %s %s -o %s", a, a, out);
  cli_fails(work, out, "huge.mtx x ", "spgemm %s %s -o %s", huge, b, out);
  free(huge);
  /* x or y past memory: said so (1 x 2^61: its bytes wrapped round to a
   * small allocation once, and the ones written into x crashed) */
  char *wide = tu_file(dir, "wide.mtx", "%%MatrixMarket matrix coordinate real general\n1 2305843009213693952 1\n1 1 1\n");
  cli_fails(work, out, "out of memory for the dense vector x of 2305843009213693952 entries", "spmv %s -o %s", wide, out);
  cli_fails(work, out, "out of memory for the dense vector y of 2305843009213693952 entries",
            "spmv %s --transpose -o %s", wide, out);
  free(wide);
  /* -o into a folder that does not exist */
  char *nodir = tu_path(work, "nodir/y.mtx");
  cli_fails(work, nodir, NULL, "spmv %s -o %s", a, nodir);
  cli_fails(work, nodir, NULL, "spgemm %s %s -o %s", a, b, nodir);
  free(nodir);
  /* spgemm without -o */
  tu_run_result r;
  ck_assert_int_ne(tu_run(&r, "spgemm %s %s", a, a), 0);
  ck_assert_msg(r.err[0], "no message");
  tu_run_free(&r);
  /* an unknown --to */
  cli_fails(work, out, NULL, "spgemm %s %s --to nosuch -o %s", a, b, out);
  /* and the same pair, good: the output appears */
  ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s", a, b, out) == 0, "exit %d: %s", r.status, r.err);
  tu_run_free(&r);
  ck_assert(tu_exists(out));
  free(a);
  free(b);
  free(t3);
  free(xbad);
  free(nf);
  free(out);
  tu_rmtree(dir);
  tu_rmtree(work);
  free(dir);
  free(work);
}
END_TEST

static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_unchecked_fixture(tc, make_jit_dir, NULL);
  tcase_add_checked_fixture(tc, jit_env, NULL);
  suite_add_tcase(s, tc);
  return tc;
}

Suite *suite_kernels(void) {
  Suite *s = suite_create("kernels");
  TCase *tc = tcase(s, "api");
  tcase_add_test(tc, test_args);
  tcase_add_test(tc, test_format_option);
  tcase_add_test(tc, test_params_bsp);
  tc = tcase(s, "spmv");
  tcase_add_test(tc, test_spmv_formats);
  tcase_add_test(tc, test_spmv_edges);
  tcase_add_test(tc, test_spmv_threads);
  tc = tcase(s, "engines");
  tcase_add_test(tc, test_spmv_engines);
  tcase_add_test(tc, test_spmv_user_formats);
  tcase_add_test(tc, test_factory_spmv);
  tc = tcase(s, "spgemm");
  tcase_add_test(tc, test_spgemm_square);
  tcase_add_test(tc, test_spgemm_rect);
  tcase_add_test(tc, test_spgemm_types);
  tc = tcase(s, "cli");
  tcase_add_test(tc, test_cli_spmv);
  tcase_add_test(tc, test_cli_spgemm);
  tcase_add_test(tc, test_cli_bad);
  tcase_add_test(tc, test_cli_complex_x);
  return s;
}
