/* test_spmv_sched.c -- suite_spmv_sched: the SpMV schedules of
 * include/spconv.h (spc_kernel_opts.schedule) and `spconv spmv
 * --schedule`, against references computed here in plain C (long double
 * sums over the components as read):
 *
 *   formats   every built-in order-2 format on small shared matrices
 *             (real, complex, pattern, integer, rectangular), schedules
 *             rows / positions / auto x threads 1, 2, 3 x transposed or
 *             not, on the factory: each entry within 1e-12 of the
 *             reference relative to sum |a_ij x_j|; the generic engine
 *             gives the same bits for the same schedule and threads; one
 *             thread gives the same bits under every schedule; integer
 *             and pattern matrices with an integer x give the same bits
 *             under every schedule and thread count (sums are exact);
 *   jit       csr, bcsr, dia and coo on the JIT: the factory's bits, per
 *             schedule, threads 1 and 3;
 *   skewed    one dense row (1e16 then ones): positions with 3 threads
 *             splits inside it, so its entry is (1e16 + 15), not the rows
 *             schedule's 1e16 (each piece summed apart, added in thread
 *             order); auto keeps rows there (too small to gain) and on
 *             1 thread, and picks positions at 100000 rows;
 *             the same bits from run to run; dcsr and bcsr split too;
 *   same      auto on rows of 30 entries whose values and x sample one
 *             sign: lanes where a row's products are nonnegative (those
 *             rows the lanes schedule's bits), the ordered sums' bits on
 *             the two rows holding a negative product; within 5.7e-13 of
 *             the ordered sums; every engine and thread count the same
 *             bits; negative values times negative x too; an x of mixed
 *             sample, products of negative sign, or coo (rows repeat in
 *             its top level) run rows, the ordered sums' bits;
 *   fallback  a user format whose second level is not `compact`:
 *             positions runs rows and says so in info.note;
 *   lanes     every format, the small matrices, transposed or not,
 *             threads 1, 2, 3: within 1e-12 of the reference; the
 *             generic engine's bits (and the JIT's on csr); csr and a
 *             transposed csc run lanes, csc and a transposed csr run rows
 *             and say why in info.note; csr gives the same bits on every
 *             thread count;
 *             integer sums equal the rows schedule's; the last bits of a
 *             real sum differ from rows somewhere (the partial sums are
 *             not left to right);
 *   pairs     rows two at a time (info.paired): a 301 x 301 matrix of
 *             rows of about 38 entries (every fifth empty, one full), real
 *             and complex, as csr, dcsr, csc, dcsc and coo, transposed or
 *             not, factory / generic / JIT x threads 1-3 on the rows
 *             schedule: paired exactly where y's index is the top level's
 *             coordinate (csr, dcsr; csc, dcsc transposed) and the rows
 *             are long; every y bit for bit the in-order sums computed
 *             here (complex: coo's rows); positions and lanes never pair;
 *             rows of about 22 never pair either;
 *   cli       --schedule=positions -v names the schedule, y read back
 *             equal to spc_spmv's; --schedule=lanes too; an unknown
 *             schedule exits 1 (usage) naming the choices. */
#include "suites.h"
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12L

static char *g_jit;
static void make_jit_dir(void) {
  if (!g_jit) g_jit = tu_mkdtemp();
}

static const char *const fmts[] = {"csr", "csc", "coo", "dcsr", "dcsc", "dia",
                                   "ell", "bcsr", "sky", "morton", "dense", "csf"};
#define NF ((int)(sizeof fmts / sizeof fmts[0]))
static const spc_schedule scheds[] = {SPC_SCHED_ROWS, SPC_SCHED_POSITIONS, SPC_SCHED_AUTO};

/* ---- the reference ------------------------------------------------------------ */

typedef struct ref {
  int64_t n;
  bool cplx;
  long double *re, *im, *sc; /* sc: sum of |a| |x| */
} ref;

/* y = A x (tr: A^T x) from A's components, in long double. */
static void reference(const spc_tensor *A, bool tr, const double *x, ref *r) {
  r->n = spc_tensor_dim(A, tr ? 1 : 0);
  r->cplx = spc_tensor_vtype(A) == SPC_C128;
  size_t c = (size_t)(r->n ? r->n : 1);
  r->re = calloc(c, sizeof *r->re);
  r->im = calloc(c, sizeof *r->im);
  r->sc = calloc(c, sizeof *r->sc);
  spc_iter *it = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_iter_create(A, &it, &e), &e);
  int64_t k[SPC_MAX_ORDER];
  const void *v;
  while (spc_iter_next(it, k, &v)) {
    long double ar = 1, ai = 0;
    switch (spc_tensor_vtype(A)) {
    case SPC_I64: ar = (double)*(const int64_t *)v; break;
    case SPC_U64: ar = (double)*(const uint64_t *)v; break;
    case SPC_F32: ar = *(const float *)v; break;
    case SPC_F64: ar = *(const double *)v; break;
    case SPC_C128: ar = ((const double *)v)[0], ai = ((const double *)v)[1]; break;
    default: break;
    }
    int64_t o = tr ? k[1] : k[0], in = tr ? k[0] : k[1];
    long double xr = r->cplx ? x[2 * in] : x[in], xi = r->cplx ? x[2 * in + 1] : 0;
    r->re[o] += ar * xr - ai * xi;
    r->im[o] += ar * xi + ai * xr;
    r->sc[o] += (fabsl(ar) + fabsl(ai)) * (fabsl(xr) + fabsl(xi));
  }
  spc_iter_free(&it);
}

static void ref_free(ref *r) {
  free(r->re);
  free(r->im);
  free(r->sc);
}

static void check_ref(const ref *r, const double *y, const char *what) {
  for (int64_t i = 0; i < r->n; i++) {
    long double tol = TOL * r->sc[i];
    long double yr = r->cplx ? y[2 * i] : y[i], yi = r->cplx ? y[2 * i + 1] : 0;
    tu_check(fabsl(yr - r->re[i]) <= tol && fabsl(yi - r->im[i]) <= tol,
             "%s: y[%lld] = (%.17g, %.17g), reference (%.17Lg, %.17Lg)", what, (long long)i,
             (double)yr, (double)yi, r->re[i], r->im[i]);
  }
}

/* x of n entries (pairs when cplx): mixed signs with full mantissas, or
 * small integers (ints). */
static double *make_x(int64_t n, bool cplx, bool ints) {
  double *x = malloc((size_t)(n ? n : 1) * 16);
  for (int64_t j = 0; j < 2 * n; j++) {
    uint64_t h = ((uint64_t)j + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    x[j] = ints ? (double)((int64_t)(h % 7) - 3) : (double)(h >> 11) * 0x1p-53 * 2.0 - 0.75;
  }
  (void)cplx;
  return x;
}

/* y = A x asserted to succeed (y pre-filled with a pattern); info filled. */
static double *spmv_run(const spc_tensor *A, bool tr, const double *x, spc_engine g, int threads,
                        spc_schedule sc, spc_kernel_info *info, const char *what) {
  int64_t ny = spc_tensor_dim(A, tr ? 1 : 0);
  size_t w = spc_tensor_vtype(A) == SPC_C128 ? 16 : 8;
  double *y = malloc((size_t)(ny ? ny : 1) * w);
  memset(y, 0x7f, (size_t)(ny ? ny : 1) * w);
  spc_kernel_opts k;
  memset(&k, 0, sizeof k);
  k.engine = g;
  k.threads = threads;
  k.schedule = sc;
  k.info = info;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_spmv(A, tr, x, y, &k, &e);
  ck_assert_msg(s == SPC_OK, "%s: spmv (%s, %s, %d threads): %s: %s", what, spc_engine_name(g),
                spc_schedule_name(sc), threads, spc_status_name(s), e.msg);
  return y;
}

static size_t ybytes(const spc_tensor *A, bool tr) {
  return (size_t)spc_tensor_dim(A, tr ? 1 : 0) * (spc_tensor_vtype(A) == SPC_C128 ? 16 : 8);
}

/* A in format f on the factory; false when the format refuses A. */
static bool convert(const spc_tensor *A, const char *f, spc_tensor **out, const char *what) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.jit_dir = g_jit;
  o.max_positions = (int64_t)1 << 19;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_convert_to(A, f, &o, out, &e);
  if (s) ck_assert_msg(s == SPC_ERR_UNSUPPORTED, "%s -> %s: %s: %s", what, f, spc_status_name(s), e.msg);
  return s == SPC_OK;
}

static spc_tensor *read_matrix(const char *name) {
  const char *dd = tu_data_dir();
  if (!dd) return NULL;
  char path[2048];
  snprintf(path, sizeof path, "%s/matrices/%s", dd, name);
  return tu_exists(path) ? tu_read_ok(path, 1, SPC_VTYPE_AUTO) : NULL;
}

/* ---- every format x schedule x threads -------------------------------------------- */

static const char *const small[] = {"bcspwr01.mtx", "young1c.mtx", "lp_e226.mtx", "Ragusa16_pattern.mtx",
                                    "matrix_int64.mtx", "LFAT5_hypersparse.mtx", "dwt_992.mtx", NULL};

START_TEST(test_formats) {
  long runs = 0, exact = 0;
  for (int mi = 0; small[mi]; mi++) {
    spc_tensor *A = read_matrix(small[mi]);
    if (!A) continue;
    spc_vtype vt = spc_tensor_vtype(A);
    bool ints = vt == SPC_PATTERN || vt == SPC_I64 || vt == SPC_U64;
    int64_t nmax = spc_tensor_dim(A, 0) > spc_tensor_dim(A, 1) ? spc_tensor_dim(A, 0) : spc_tensor_dim(A, 1);
    double *x = make_x(nmax, vt == SPC_C128, ints);
    for (int f = 0; f < NF; f++) {
      spc_tensor *B = NULL;
      char what[300];
      snprintf(what, sizeof what, "%s as %s", small[mi], fmts[f]);
      if (!convert(A, fmts[f], &B, what)) continue;
      for (int tr = 0; tr < 2; tr++) {
        ref r;
        reference(A, tr, x, &r);
        double *y1 = NULL; /* rows, one thread */
        for (int si = 0; si < 3; si++)
          for (int nt = 1; nt <= 3; nt++) {
            snprintf(what, sizeof what, "%s as %s%s, %s, %d threads", small[mi], fmts[f],
                     tr ? " transposed" : "", spc_schedule_name(scheds[si]), nt);
            spc_kernel_info info;
            double *y = spmv_run(B, tr, x, SPC_ENGINE_FACTORY, nt, scheds[si], &info, what);
            ck_assert_msg(info.used == SPC_SCHED_ROWS || info.used == SPC_SCHED_POSITIONS, "%s: used %d", what,
                          (int)info.used);
            if (scheds[si] != SPC_SCHED_AUTO)
              ck_assert_msg(info.used == scheds[si], "%s: ran %s (%s)", what, spc_schedule_name(info.used),
                            info.note);
            ck_assert_msg(info.threads >= 1 && info.threads <= nt, "%s: %d threads", what, info.threads);
            check_ref(&r, y, what);
            double *yg = spmv_run(B, tr, x, SPC_ENGINE_GENERIC, nt, scheds[si], NULL, what);
            ck_assert_msg(!memcmp(y, yg, ybytes(B, tr)), "%s: generic and factory differ", what);
            free(yg);
            if (!y1) y1 = y;
            else {
              if (nt == 1 || ints)
                ck_assert_msg(!memcmp(y, y1, ybytes(B, tr)), "%s: bits differ from rows, 1 thread", what);
              exact += nt == 1 || ints;
              free(y);
            }
            runs++;
          }
        free(y1);
        ref_free(&r);
      }
      spc_tensor_free(&B);
    }
    free(x);
    spc_tensor_free(&A);
  }
  if (!runs) return;
  printf("spmv_sched: %ld runs within 1e-12 of the reference, generic = factory; %ld bit identical to rows "
         "on 1 thread\n", runs, exact);
}
END_TEST

/* ---- the lanes schedule ------------------------------------------------------------- */

START_TEST(test_lanes) {
  long runs = 0, lanes = 0, rows = 0, differ = 0;
  for (int mi = 0; small[mi]; mi++) {
    spc_tensor *A = read_matrix(small[mi]);
    if (!A) continue;
    spc_vtype vt = spc_tensor_vtype(A);
    bool ints = vt == SPC_PATTERN || vt == SPC_I64 || vt == SPC_U64;
    int64_t nmax = spc_tensor_dim(A, 0) > spc_tensor_dim(A, 1) ? spc_tensor_dim(A, 0) : spc_tensor_dim(A, 1);
    double *x = make_x(nmax, vt == SPC_C128, ints);
    for (int f = 0; f < NF; f++) {
      spc_tensor *B = NULL;
      char what[300];
      snprintf(what, sizeof what, "%s as %s", small[mi], fmts[f]);
      if (!convert(A, fmts[f], &B, what)) continue;
      for (int tr = 0; tr < 2; tr++) {
        ref r;
        reference(A, tr, x, &r);
        double *yr = spmv_run(B, tr, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_ROWS, NULL, what);
        double *y1 = NULL;
        for (int nt = 1; nt <= 3; nt++) {
          snprintf(what, sizeof what, "%s as %s%s, lanes, %d threads", small[mi], fmts[f],
                   tr ? " transposed" : "", nt);
          spc_kernel_info info;
          double *y = spmv_run(B, tr, x, SPC_ENGINE_FACTORY, nt, SPC_SCHED_LANES, &info, what);
          /* y's index above the innermost level: csr's rows, a transposed
           * csc's columns; not csr transposed or csc */
          bool csr = !strcmp(fmts[f], "csr"), csc = !strcmp(fmts[f], "csc");
          if ((csr && !tr) || (csc && tr))
            ck_assert_msg(info.used == SPC_SCHED_LANES, "%s: ran %s", what, spc_schedule_name(info.used));
          if ((csr && tr) || (csc && !tr))
            ck_assert_msg(info.used == SPC_SCHED_ROWS && strstr(info.note, "lanes schedule: y's index"),
                          "%s: ran %s (%s)", what, spc_schedule_name(info.used), info.note);
          ck_assert_msg(info.used == SPC_SCHED_LANES || info.used == SPC_SCHED_ROWS, "%s: used %d", what,
                        (int)info.used);
          lanes += info.used == SPC_SCHED_LANES;
          rows += info.used == SPC_SCHED_ROWS;
          check_ref(&r, y, what);
          double *yg = spmv_run(B, tr, x, SPC_ENGINE_GENERIC, nt, SPC_SCHED_LANES, NULL, what);
          ck_assert_msg(!memcmp(y, yg, ybytes(B, tr)), "%s: generic and factory differ", what);
          free(yg);
          if (ints) /* exact sums: any order */
            ck_assert_msg(!memcmp(y, yr, ybytes(B, tr)), "%s: an integer sum differs from rows", what);
          if (nt == 1) differ += info.used == SPC_SCHED_LANES && memcmp(y, yr, ybytes(B, tr)) != 0;
          if (!y1) {
            y1 = y;
          } else {
            if (!strcmp(fmts[f], "csr") && !tr) /* whole rows a thread */
              ck_assert_msg(!memcmp(y, y1, ybytes(B, tr)), "%s: bits differ from 1 thread", what);
            free(y);
          }
          runs++;
        }
        free(y1);
        free(yr);
        ref_free(&r);
      }
      spc_tensor_free(&B);
    }
    free(x);
    spc_tensor_free(&A);
  }
  if (!runs) return;
  ck_assert_msg(lanes > 20 && rows > 20 && differ > 0, "lanes %ld, rows %ld, differing %ld", lanes, rows,
                differ);
  /* the JIT's routine: the factory's bits */
  spc_tensor *A = read_matrix("dwt_992.mtx"), *B = NULL;
  if (A && convert(A, "csr", &B, "dwt_992 as csr")) {
    double *x = make_x(spc_tensor_dim(A, 0), false, false);
    double *yf = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 2, SPC_SCHED_LANES, NULL, "lanes factory");
    double *yj = spmv_run(B, false, x, SPC_ENGINE_JIT, 2, SPC_SCHED_LANES, NULL, "lanes jit");
    ck_assert_msg(!memcmp(yf, yj, ybytes(B, false)), "dwt_992 lanes: jit and factory differ");
    free(yf);
    free(yj);
    free(x);
  }
  spc_tensor_free(&B);
  spc_tensor_free(&A);
  printf("spmv_sched: lanes %ld runs within 1e-12 of the reference, generic = factory (%ld ran lanes, "
         "%ld rows; %ld real sums with other last bits than rows)\n", runs, lanes, rows, differ);
}
END_TEST

/* compressed with its coordinates stored plus one: the lanes loop over a
 * coordinate the level computes (crd[q] - 1) is the IR's own four scalar
 * chains, not the runtime's spmv_lanes. */
/* compressed's write side (queries, init, yield_pos, finalize), the
 * coordinate stored as INSERT */
#define COMPRESSED_WRITE(INSERT)                                                                   \
  "write:\n"                                                                                       \
  "  queries:\n"                                                                                   \
  "    - select [*] -> count(c) as nnz\n"                                                          \
  "  init: |\n"                                                                                    \
  "    pos = alloc(index, np + 1)\n"                                                               \
  "    for x in 0 .. np { pos[x + 1] = nnz[x] }\n"                                                 \
  "    prefix_sum(pos, 0, np + 1)\n"                                                               \
  "    crd = alloc(coord, pos[np])\n"                                                              \
  "  yield_pos: |\n"                                                                               \
  "    r = pos[p]\n"                                                                               \
  "    pos[p] += 1\n"                                                                              \
  "    return r\n"                                                                                 \
  "  insert_coord: " INSERT "\n"                                                                   \
  "  finalize: shift(pos, 0, np, 0)\n"
static const char sh_level[] = "level: shcompressed\n"
                               "properties: [ordered, unique, compact]\n"
                               "arrays: {pos: index, crd: coord}\n"
                               "read: {begin: 'pos[p]', end: 'pos[p + 1]', access: 'crd[q] - 1', size: 'pos[np]'}\n"
                               COMPRESSED_WRITE("crd[q] = c + 1");

/* A in the user format fm (its level spec file lv), by the interpreter. */
static spc_tensor *to_user(const spc_tensor *A, const char *lv, const char *fm) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.engine = SPC_ENGINE_GENERIC;
  o.nspec_files = 1;
  o.spec_files[0] = lv;
  spc_error e;
  spc_error_clear(&e);
  spc_tensor *B = NULL;
  tu_assert_ok(spc_convert_to(A, fm, &o, &B, &e), &e);
  return B;
}

static int64_t arr_at(const void *a, spc_itype t, int64_t k) {
  return t == SPC_IDX32 ? ((const int32_t *)a)[k] : ((const int64_t *)a)[k];
}

/* The lanes schedule's bits, three ways: CSR's loop is the runtime's
 * spmv_lanes (factory: its four lanes paired by vector operations; generic:
 * the same function), shcompressed's is the IR's four scalar chains
 * (interpreted), and the order written out here from CSR's arrays -- lane k
 * the k-th of each four entries of a row, the rest into lane 0, y = (l0 +
 * l1) + (l2 + l3) -- all equal bit for bit, on one and two threads. */
START_TEST(test_lanes_paths) {
  spc_tensor *A = read_matrix("bcsstk13.mtx"), *B = NULL, *S = NULL;
  if (!A) return;
  char *dir = tu_mkdtemp();
  char *lv = tu_file(dir, "shcompressed.yaml", sh_level);
  char *fm = tu_file(dir, "csr_sh.yaml", "format: csr_sh\norder: 2\nlevels: [dense, shcompressed]\n");
  ck_assert(convert(A, "csr", &B, "bcsstk13 as csr"));
  S = to_user(A, lv, fm);
  spc_error e;
  int64_t n = spc_tensor_dim(A, 0), nv = 0;
  double *x = make_x(n, false, false), *want = malloc((size_t)n * sizeof *want);
  const void *pos, *crd;
  spc_itype pt, ct;
  tu_assert_ok(spc_tensor_level_array(B, 1, "pos", &pos, &pt, NULL), &e);
  tu_assert_ok(spc_tensor_level_array(B, 1, "crd", &crd, &ct, NULL), &e);
  const double *v = spc_tensor_values(B, &nv);
  for (int64_t i = 0; i < n; i++) {
    double l[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t q = arr_at(pos, pt, i), en = arr_at(pos, pt, i + 1);
    for (; q + 3 < en; q += 4)
      for (int k = 0; k < 4; k++) l[k] = l[k] + v[q + k] * x[arr_at(crd, ct, q + k)];
    for (; q < en; q++) l[0] = l[0] + v[q] * x[arr_at(crd, ct, q)];
    want[i] = 0.0 + ((l[0] + l[1]) + (l[2] + l[3]));
  }
  for (int nt = 1; nt <= 2; nt++) {
    spc_kernel_info info;
    double *yf = spmv_run(B, false, x, SPC_ENGINE_FACTORY, nt, SPC_SCHED_LANES, &info, "csr lanes factory");
    ck_assert_int_eq(info.used, SPC_SCHED_LANES);
    double *yg = spmv_run(B, false, x, SPC_ENGINE_GENERIC, nt, SPC_SCHED_LANES, NULL, "csr lanes generic");
    double *ys = spmv_run(S, false, x, SPC_ENGINE_GENERIC, nt, SPC_SCHED_LANES, &info, "csr_sh lanes generic");
    ck_assert_int_eq(info.used, SPC_SCHED_LANES);
    for (int64_t i = 0; i < n; i++) {
      ck_assert_msg(!memcmp(&yf[i], &want[i], sizeof *yf), "row %lld, %d threads: factory %a, the lanes order %a",
                    (long long)i, nt, yf[i], want[i]);
      ck_assert_msg(!memcmp(&ys[i], &want[i], sizeof *ys), "row %lld, %d threads: shcompressed %a, the lanes order %a",
                    (long long)i, nt, ys[i], want[i]);
    }
    ck_assert_msg(!memcmp(yg, yf, (size_t)n * sizeof *yf), "%d threads: generic and factory differ", nt);
    free(yf);
    free(yg);
    free(ys);
  }
  free(want);
  free(x);
  spc_tensor_free(&S);
  spc_tensor_free(&B);
  spc_tensor_free(&A);
  free(lv);
  free(fm);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* An n x n COO of nnz components to fill (*rc, *cc: its row and column
 * arrays, of type *ty; its values from spc_tensor_values_mut). */
static spc_tensor *coo_shell(int64_t n, int64_t nnz, spc_vtype vt, void **rc, void **cc, spc_itype *ty) {
  int64_t dims[2] = {n, n};
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_tensor_create_coo(2, dims, nnz, vt, &t, &e), &e);
  tu_assert_ok(spc_tensor_level_array(t, 0, "crd", NULL, ty, NULL), &e);
  *rc = spc_tensor_level_array_mut(t, 0, "crd");
  *cc = spc_tensor_level_array_mut(t, 1, "crd");
  return t;
}

static void put_ij(void *rc, void *cc, spc_itype ty, int64_t k, int64_t i, int64_t j) {
  if (ty == SPC_IDX32) ((int32_t *)rc)[k] = (int32_t)i, ((int32_t *)cc)[k] = (int32_t)j;
  else ((int64_t *)rc)[k] = i, ((int64_t *)cc)[k] = j;
}

/* ---- rows two at a time ------------------------------------------------------------ */

/* n x n, n odd: row i holds `base + (i * 37) % 41` entries (every fifth
 * row none; row 5 every column), columns (7 i + 13 k) mod n in that
 * order (unsorted: the conversion sorts them), values with full
 * mantissas and mixed signs. */
static spc_tensor *long_rows(int64_t n, int64_t base, spc_vtype vt) {
  int64_t nnz = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t L = i == 5 ? n : i % 5 == 3 ? 0 : base + (i * 37) % 41;
    nnz += L < n ? L : n;
  }
  void *rc, *cc;
  spc_itype ty;
  spc_tensor *t = coo_shell(n, nnz, vt, &rc, &cc, &ty);
  double *v = spc_tensor_values_mut(t);
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t L = i == 5 ? n : i % 5 == 3 ? 0 : base + (i * 37) % 41;
    for (int64_t q = 0; q < L && q < n; q++, k++) {
      put_ij(rc, cc, ty, k, i, (7 * i + 13 * q) % n);
      int w = vt == SPC_C128 ? 2 : 1;
      for (int c = 0; c < w; c++) {
        uint64_t h = ((uint64_t)(k * w + c) + 11) * 0xD1B54A32D192ED03ull;
        h ^= h >> 29;
        v[k * w + c] = ((double)(h >> 11) * 0x1p-53 - 0.5) * (double)(1 + (h & 3));
      }
    }
  }
  ck_assert_int_eq(k, nnz);
  return t;
}

/* y = A x (tr: A^T x) summed as the rows schedule does: each entry of y
 * from 0, the products added one by one in the stored order. */
static double *inorder(const spc_tensor *B, bool tr, const double *x) {
  int64_t ny = spc_tensor_dim(B, tr ? 1 : 0);
  double *y = calloc((size_t)(ny ? ny : 1), sizeof *y);
  spc_iter *it = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_iter_create(B, &it, &e), &e);
  int64_t k[SPC_MAX_ORDER];
  const void *v;
  while (spc_iter_next(it, k, &v)) {
    int64_t o = tr ? k[1] : k[0], in = tr ? k[0] : k[1];
    y[o] = y[o] + *(const double *)v * x[in];
  }
  spc_iter_free(&it);
  return y;
}

START_TEST(test_pairs) {
  static const char *const pf[] = {"csr", "dcsr", "csc", "dcsc", "coo"};
  long runs = 0, paired = 0;
  setenv("SPCONV_JIT_DIR", g_jit, 1);
  for (int vi = 0; vi < 2; vi++) {
    spc_vtype vt = vi ? SPC_C128 : SPC_F64;
    for (int sh = 0; sh < 2; sh++) { /* rows of 24 + entries on average, then of about 10 */
      int64_t n = 301;
      spc_tensor *A = long_rows(n, sh ? 2 : 18, vt);
      double *x = make_x(n, vt == SPC_C128, false);
      /* complex: the reference is coo's rows (one level a component: never
       * two rows at a time), stored in csr's order */
      spc_tensor *C = NULL;
      ck_assert(convert(A, "coo", &C, "long rows as coo"));
      for (int f = 0; f < 5; f++) {
        spc_tensor *B = NULL;
        char what[300];
        snprintf(what, sizeof what, "long rows (%s, base %d) as %s", vi ? "complex" : "real", sh ? 2 : 18, pf[f]);
        ck_assert(convert(A, pf[f], &B, what));
        for (int tr = 0; tr < 2; tr++) {
          bool by_top = f < 4 && (f < 2) == !tr; /* y's index the top level's coordinate */
          double *want = NULL;
          if (vt == SPC_F64) want = inorder(B, tr, x);
          else if (!tr) want = spmv_run(C, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_ROWS, NULL, what);
          for (int g = 0; g < 3; g++)
            for (int nt = 1; nt <= 3; nt++) {
              spc_engine eng = g == 0 ? SPC_ENGINE_FACTORY : g == 1 ? SPC_ENGINE_GENERIC : SPC_ENGINE_JIT;
              if (eng == SPC_ENGINE_GENERIC && nt == 2) continue;
              char w2[400];
              snprintf(w2, sizeof w2, "%s%s, %s, %d threads", what, tr ? " transposed" : "",
                       spc_engine_name(eng), nt);
              spc_kernel_opts k;
              memset(&k, 0, sizeof k);
              spc_kernel_info info;
              k.engine = eng;
              k.threads = nt;
              k.schedule = SPC_SCHED_ROWS;
              k.info = &info;
              double *y = malloc(ybytes(B, tr));
              memset(y, 0x7f, ybytes(B, tr));
              spc_error e;
              spc_error_clear(&e);
              spc_status s = spc_spmv(B, tr, x, y, &k, &e);
              if (s == SPC_ERR_UNSUPPORTED && eng == SPC_ENGINE_JIT && strstr(e.msg, "compiler")) {
                free(y);
                continue;
              }
              tu_assert_ok(s, &e);
              ck_assert_msg(info.paired == (by_top && !sh), "%s: paired %d", w2, info.paired);
              paired += info.paired;
              if (want && (by_top || nt == 1)) /* else threads' partials meet in y */
                ck_assert_msg(!memcmp(y, want, ybytes(B, tr)), "%s: bits differ from the in-order sums", w2);
              runs++;
              free(y);
            }
          free(want);
        }
        /* other schedules never pair */
        spc_kernel_info info;
        double *y = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 2, SPC_SCHED_POSITIONS, &info, what);
        ck_assert_msg(!info.paired, "%s: positions paired", what);
        free(y);
        y = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_LANES, &info, what);
        ck_assert_msg(!info.paired, "%s: lanes paired", what);
        free(y);
        spc_tensor_free(&B);
      }
      spc_tensor_free(&C);
      spc_tensor_free(&A);
      free(x);
    }
  }
  ck_assert_msg(paired >= 60, "only %ld runs took rows two at a time", paired);
  printf("spmv_sched: rows two at a time: %ld runs, %ld paired, the in-order sums' bits in every one "
         "(generic, factory, JIT; threads 1-3)\n", runs, paired);
}
END_TEST

/* ---- JIT = factory ------------------------------------------------------------------ */

START_TEST(test_jit) {
  spc_tensor *A = read_matrix("dwt_992.mtx");
  if (!A) return;
  static const char *const jf[] = {"csr", "bcsr", "dia", "coo"};
  double *x = make_x(spc_tensor_dim(A, 0), false, false);
  long runs = 0;
  for (int f = 0; f < 4; f++) {
    spc_tensor *B = NULL;
    if (!convert(A, jf[f], &B, jf[f])) continue;
    for (int si = 0; si < 2; si++)
      for (int nt = 1; nt <= 3; nt += 2) {
        bool tr = f == 0 && nt == 3;
        char what[200];
        snprintf(what, sizeof what, "dwt_992 as %s, %s, %d threads", jf[f], spc_schedule_name(scheds[si]), nt);
        double *yf = spmv_run(B, tr, x, SPC_ENGINE_FACTORY, nt, scheds[si], NULL, what);
        spc_kernel_opts k;
        memset(&k, 0, sizeof k);
        k.engine = SPC_ENGINE_JIT;
        k.threads = nt;
        k.schedule = scheds[si];
        double *yj = malloc(ybytes(B, tr));
        spc_error e;
        spc_error_clear(&e);
        setenv("SPCONV_JIT_DIR", g_jit, 1);
        spc_status s = spc_spmv(B, tr, x, yj, &k, &e);
        if (s == SPC_ERR_UNSUPPORTED && strstr(e.msg, "compiler")) { /* no cc here: nothing to compare */
          free(yf);
          free(yj);
          continue;
        }
        tu_assert_ok(s, &e);
        ck_assert_msg(!memcmp(yf, yj, ybytes(B, tr)), "%s: JIT and factory differ", what);
        runs++;
        free(yf);
        free(yj);
      }
    spc_tensor_free(&B);
  }
  printf("spmv_sched: JIT = factory bit for bit in %d runs\n", (int)runs);
  free(x);
  spc_tensor_free(&A);
}
END_TEST

/* ---- one dense row ------------------------------------------------------------------ */


/* n x n: row 7 holds every column (1e16 at column 0, ones after), the
 * other rows two ones each (598 entries for n = 200). */
static spc_tensor *skewed(int64_t n) {
  int64_t nnz = n + 2 * (n - 1) - 1;
  void *rc, *cc;
  spc_itype ty;
  spc_tensor *t = coo_shell(n, nnz, SPC_F64, &rc, &cc, &ty);
  double *v = spc_tensor_values_mut(t);
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      bool dense = i == 7;
      if (!dense && j != i && j != (i + 1) % n) continue;
      if (!dense && i == n - 1 && j == 0) continue; /* keep the count at 2 (n - 1) */
      put_ij(rc, cc, ty, k, i, j);
      v[k++] = dense && j == 0 ? 1e16 : 1.0;
    }
  ck_assert_int_eq(k, nnz); /* the last row holds one entry */
  return t;
}

START_TEST(test_skewed) {
  spc_tensor *A = skewed(200), *B = NULL;
  ck_assert(convert(A, "csr", &B, "skewed"));
  int64_t n = 200, nnz = spc_tensor_nstored(B);
  ck_assert_int_eq(nnz, 597);
  double *x = make_x(n, false, false);
  for (int64_t j = 0; j < n; j++) x[j] = 1;
  spc_kernel_info info;
  double *yr = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 3, SPC_SCHED_ROWS, &info, "skewed rows");
  double *yp = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 3, SPC_SCHED_POSITIONS, &info, "skewed positions");
  ck_assert_int_eq(info.used, SPC_SCHED_POSITIONS);
  ck_assert_int_eq(info.threads, 3);
  /* row 7 holds positions [14, 214); chunks [0, 199), [199, 398), [398, 597):
   * thread 0 sums 1e16 and 184 ones (1e16), thread 1 the last 15 ones */
  volatile double big = 1e16, head = 0.0 + big, tail = 15.0;
  double want = head + tail;
  ck_assert_msg(yr[7] == 1e16, "rows: y[7] = %.17g", yr[7]);
  ck_assert_msg(yp[7] == want && want != 1e16, "positions: y[7] = %.17g, want %.17g", yp[7], want);
  for (int64_t i = 0; i < n; i++)
    if (i != 7) ck_assert_msg(yp[i] == yr[i], "y[%lld]: %g vs %g", (long long)i, yp[i], yr[i]);
  ref r;
  reference(A, false, x, &r);
  check_ref(&r, yp, "skewed positions");
  ref_free(&r);
  /* the same bits again, on the interpreter too */
  double *y2 = spmv_run(B, false, x, SPC_ENGINE_GENERIC, 3, SPC_SCHED_POSITIONS, NULL, "again");
  ck_assert(!memcmp(y2, yp, (size_t)n * 8));
  free(y2);
  /* auto: one thread here (597 entries, under 4096 a thread), rows */
  y2 = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 3, SPC_SCHED_AUTO, &info, "auto");
  ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
  ck_assert_int_eq(info.threads, 1);
  ck_assert_msg(strstr(info.note, "auto: 1 thread (597 stored entries"), "note: %s", info.note);
  ck_assert(!memcmp(y2, yr, (size_t)n * 8));
  free(y2);
  for (int wide = 0; wide < 2; wide++) {
    /* auto on 3 threads: at 5000 rows (14,997 entries) equal rows, from
     * the cuts: rows would give one thread 8330, 3331 over its share, too
     * few to gain (AUTO_EXCESS 4096); at 20000 rows (59,997) rows balanced
     * by stored entries (equal rows: 33330, 13331 over); the same bits as
     * one thread either way, and again from the tensor's kept plan */
    int64_t m3 = wide ? 20000 : 5000;
    spc_tensor *A3 = skewed(m3), *B3 = NULL;
    ck_assert(convert(A3, "csr", &B3, wide ? "skewed 20000" : "skewed 5000"));
    double *x3 = make_x(m3, false, false);
    double *ya = spmv_run(B3, false, x3, SPC_ENGINE_FACTORY, 3, SPC_SCHED_AUTO, &info, "auto rows");
    ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
    ck_assert_int_eq(info.threads, 3);
    ck_assert_msg(strstr(info.note, wide ? "auto: rows balanced by stored entries (equal rows would give a thread 1.67"
                                         : "auto: rows (the rows split gives a thread 1.67 times its share, 3331 positions"),
                  "note: %s", info.note);
    double *yq = spmv_run(B3, false, x3, SPC_ENGINE_FACTORY, 1, SPC_SCHED_ROWS, NULL, "rows");
    ck_assert(!memcmp(ya, yq, (size_t)m3 * 8));
    free(ya);
    spc_kernel_info again;
    ya = spmv_run(B3, false, x3, SPC_ENGINE_FACTORY, 3, SPC_SCHED_AUTO, &again, "auto kept");
    ck_assert(!memcmp(ya, yq, (size_t)m3 * 8));
    ck_assert_int_eq(again.used, SPC_SCHED_ROWS);
    ck_assert_int_eq(again.threads, 3);
    ck_assert_str_eq(again.note, info.note);
    free(ya);
    /* another thread count is planned anew, its note kept though the
     * first call asked for none */
    ya = spmv_run(B3, false, x3, SPC_ENGINE_FACTORY, 2, SPC_SCHED_AUTO, NULL, "auto 2");
    ck_assert(!memcmp(ya, yq, (size_t)m3 * 8));
    free(ya);
    ya = spmv_run(B3, false, x3, SPC_ENGINE_FACTORY, 2, SPC_SCHED_AUTO, &again, "auto 2 kept");
    ck_assert(!memcmp(ya, yq, (size_t)m3 * 8));
    ck_assert_int_eq(again.threads, 2);
    ck_assert_msg(strstr(again.note, wide ? "auto: rows balanced by stored entries (equal rows would give a thread 1.33"
                                          : "auto: rows (the rows split gives a thread 1.33"),
                  "note: %s", again.note);
    free(ya);
    free(yq);
    free(x3);
    spc_tensor_free(&B3);
    spc_tensor_free(&A3);
  }
  y2 = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_AUTO, &info, "auto 1");
  ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
  ck_assert(y2[7] == 1e16);
  free(y2);
  { /* auto balances the same shape at 100000 rows (equal rows would give
     * one thread 166664 of 299997 on 3 threads, 199998 on 2) by whole
     * rows: row 7 (1e16 and 99999 ones, positions [14, 100014)) stays on
     * one thread and sums to 1e16 as one thread's rows (SciPy's order),
     * where positions splits it on 3 threads and gets more */
    spc_tensor *A2 = skewed(100000), *B2 = NULL;
    ck_assert(convert(A2, "csr", &B2, "skewed 100000"));
    double *x2 = make_x(100000, false, false);
    for (int64_t j = 0; j < 100000; j++) x2[j] = 1;
    double *y1 = spmv_run(B2, false, x2, SPC_ENGINE_FACTORY, 1, SPC_SCHED_ROWS, NULL, "rows big");
    ck_assert_msg(y1[7] == 1e16, "y[7] = %.17g", y1[7]);
    const char *want_note[4] = {NULL, NULL, "times its share, these 1.00; no row split",
                                "times its share, these 1.00; no row split"};
    for (int nt = 2; nt <= 3; nt++) {
      double *ya = spmv_run(B2, false, x2, SPC_ENGINE_FACTORY, nt, SPC_SCHED_AUTO, &info, "auto big");
      ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
      ck_assert_int_eq(info.threads, nt);
      ck_assert_msg(strstr(info.note, "auto: rows balanced by stored entries (equal rows would give a thread"),
                    "note: %s", info.note);
      ck_assert_msg(strstr(info.note, want_note[nt]), "note: %s", info.note);
      ck_assert(!memcmp(ya, y1, 100000 * 8));
      double *yq = spmv_run(B2, false, x2, SPC_ENGINE_FACTORY, nt, SPC_SCHED_POSITIONS, NULL, "positions big");
      if (nt == 3) ck_assert_msg(yq[7] > 1e16, "positions: y[7] = %.17g", yq[7]);
      double *yg = spmv_run(B2, false, x2, SPC_ENGINE_GENERIC, nt, SPC_SCHED_AUTO, NULL, "auto big generic");
      ck_assert(!memcmp(yg, y1, 100000 * 8));
      free(ya);
      free(yq);
      free(yg);
    }
    free(y1);
    free(x2);
    spc_tensor_free(&B2);
    spc_tensor_free(&A2);
  }
  /* transposed: column 7 of A^T; every split within tolerance */
  reference(A, true, x, &r);
  for (int nt = 2; nt <= 3; nt++) {
    y2 = spmv_run(B, true, x, SPC_ENGINE_FACTORY, nt, SPC_SCHED_POSITIONS, NULL, "transposed");
    check_ref(&r, y2, "skewed transposed");
    free(y2);
  }
  ref_free(&r);
  /* the same split in dcsr (a compressed top) and bcsr (a parent is a
   * block row of 4: its pieces add 4 entries of y) */
  static const char *const other[] = {"dcsr", "bcsr"};
  reference(A, false, x, &r);
  for (int f = 0; f < 2; f++) {
    spc_tensor *C = NULL;
    ck_assert(convert(A, other[f], &C, other[f]));
    for (int nt = 2; nt <= 3; nt++) {
      y2 = spmv_run(C, false, x, SPC_ENGINE_FACTORY, nt, SPC_SCHED_POSITIONS, &info, other[f]);
      ck_assert_int_eq(info.used, SPC_SCHED_POSITIONS);
      check_ref(&r, y2, other[f]);
      if (f == 0 && nt == 3) ck_assert_msg(y2[7] == want, "dcsr: y[7] = %.17g", y2[7]);
      double *yg = spmv_run(C, false, x, SPC_ENGINE_GENERIC, nt, SPC_SCHED_POSITIONS, NULL, other[f]);
      ck_assert(!memcmp(yg, y2, (size_t)n * 8));
      free(yg);
      free(y2);
    }
    spc_tensor_free(&C);
  }
  ref_free(&r);
  free(yr);
  free(yp);
  free(x);
  spc_tensor_free(&B);
  spc_tensor_free(&A);
}
END_TEST

/* ---- a second level without `compact` ----------------------------------------------- */

static const char nc_level[] = "level: ncompressed\n"
                               "description: compressed, not promising contiguous positions\n"
                               "properties: [ordered, unique, locate]\n"
                               "arrays: {pos: index, crd: coord}\n"
                               "read:\n"
                               "  begin: pos[p]\n"
                               "  end: pos[p + 1]\n"
                               "  access: crd[q]\n"
                               "  size: pos[np]\n"
                               COMPRESSED_WRITE("crd[q] = c");
static const char nc_format[] = "format: csr_nc\n"
                                "description: csr over ncompressed\n"
                                "order: 2\n"
                                "levels: [dense, ncompressed]\n";

/* ---- auto's one-sign lanes ---------------------------------------------------------- */

/* 400 x 400, row i holding 30 entries (columns (11 i + 7 k) mod 400) of
 * full-mantissa positive values, but row 5's second and row 17's third
 * (positions 151 and 512: between the 64 values auto samples, every
 * 187th) negative. */
static spc_tensor *one_sign(double sign) {
  enum { M = 400, L = 30 };
  void *rc, *cc;
  spc_itype ty;
  spc_tensor *t = coo_shell(M, (int64_t)M * L, SPC_F64, &rc, &cc, &ty);
  double *v = spc_tensor_values_mut(t);
  for (int64_t i = 0, k = 0; i < M; i++)
    for (int64_t j = 0; j < L; j++, k++) {
      put_ij(rc, cc, ty, k, i, (11 * i + 7 * j) % M);
      uint64_t h = ((uint64_t)k + 7) * 0x9E3779B97F4A7C15ull;
      v[k] = sign * (0.5 + (double)(h >> 11) * 0x1p-53);
      if (k == 151 || k == 512) v[k] = -v[k];
    }
  return t;
}

/* y's row i summed left to right, as the rows schedule does. */
static double row_sum(const spc_tensor *B, const double *x, int64_t i) {
  const void *pp, *cp;
  spc_itype pt, ct;
  int64_t n;
  spc_error e;
  tu_assert_ok(spc_tensor_level_array(B, 1, "pos", &pp, &pt, &n), &e);
  tu_assert_ok(spc_tensor_level_array(B, 1, "crd", &cp, &ct, &n), &e);
  const double *v = spc_tensor_values(B, &n);
  int64_t b = pt == SPC_IDX32 ? ((const int32_t *)pp)[i] : ((const int64_t *)pp)[i];
  int64_t en = pt == SPC_IDX32 ? ((const int32_t *)pp)[i + 1] : ((const int64_t *)pp)[i + 1];
  double s = 0.0;
  for (int64_t q = b; q < en; q++)
    s = s + v[q] * x[ct == SPC_IDX32 ? ((const int32_t *)cp)[q] : ((const int64_t *)cp)[q]];
  return s;
}

/* y: every row of B summed left to right, bit for bit */
static void expect_ordered(const spc_tensor *B, const double *x, const double *y, const char *what) {
  for (int64_t i = 0; i < spc_tensor_dim(B, 0); i++) {
    double ord = row_sum(B, x, i);
    ck_assert_msg(!memcmp(&y[i], &ord, 8), "%s, row %lld: %a, want %a", what, (long long)i, y[i], ord);
  }
}

/* auto, rows of 30 entries, values and x sampled of one sign: lanes where
 * a row's products are nonnegative, the lanes schedule's bits there (rows 5
 * and 17, holding a negative product, the rows schedule's); within 5.7e-13
 * of the ordered sums; the same bits on every engine and thread count.
 * Negative values times negative x: lanes too.  A negative x or a mixed
 * sample: rows, the ordered sums' bits. */
START_TEST(test_same_sign) {
  make_jit_dir();
  for (int neg = 0; neg < 2; neg++) {
    spc_tensor *A = one_sign(neg ? -1.0 : 1.0), *B = NULL;
    ck_assert(convert(A, "csr", &B, "one sign"));
    int64_t n = 400;
    double *x = malloc((size_t)n * sizeof *x);
    for (int64_t j = 0; j < n; j++) x[j] = (neg ? -1.0 : 1.0) * (1.0 + (double)(j % 7) / 8.0 + (double)j * 1e-5);
    spc_kernel_info info;
    double *yl = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_LANES, NULL, "lanes");
    double *ya = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_AUTO, &info, "auto");
    ck_assert_int_eq(info.used, SPC_SCHED_LANES);
    ck_assert_msg(strstr(info.note, "auto: lanes where a row's products are nonnegative"), "note: %s", info.note);
    long differ = 0;
    for (int64_t i = 0; i < n; i++) {
      double ord = row_sum(B, x, i), want = i == 5 || i == 17 ? ord : yl[i];
      ck_assert_msg(!memcmp(&ya[i], &want, 8), "row %lld: %a, want %a", (long long)i, ya[i], want);
      ck_assert_msg(fabs(ya[i] - ord) <= 5.7e-13 * fabs(ord), "row %lld: %a vs %a", (long long)i, ya[i], ord);
      differ += memcmp(&ya[i], &ord, 8) != 0;
    }
    ck_assert_msg(differ > 10, "only %ld rows differ from the ordered sums", differ);
    static const spc_engine eng[3] = {SPC_ENGINE_GENERIC, SPC_ENGINE_FACTORY, SPC_ENGINE_JIT};
    for (int g = 0; g < 3; g++)
      for (int nt = 1; nt <= 3; nt++) {
        double *y2 = spmv_run(B, false, x, eng[g], nt, SPC_SCHED_AUTO, &info, "auto again");
        ck_assert_msg(!memcmp(y2, ya, (size_t)n * 8), "%s, %d threads: other bits", spc_engine_name(eng[g]), nt);
        ck_assert_int_eq(info.used, SPC_SCHED_LANES);
        free(y2);
      }
    /* x of the other sign somewhere in the sample: rows */
    x[198] = -x[198]; /* sampled: every 6th of 400 */
    free(ya);
    ya = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 2, SPC_SCHED_AUTO, &info, "auto, x mixed");
    ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
    expect_ordered(B, x, ya, "rows");
    /* values and x of opposite signs (every product negative): rows */
    for (int64_t j = 0; j < n; j++) x[j] = -fabs(x[j]) * (neg ? -1.0 : 1.0);
    free(ya);
    ya = spmv_run(B, false, x, SPC_ENGINE_FACTORY, 1, SPC_SCHED_AUTO, &info, "auto, products negative");
    ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
    expect_ordered(B, x, ya, "rows");
    free(yl);
    free(ya);
    free(x);
    spc_tensor_free(&B);
    spc_tensor_free(&A);
  }
  /* a format whose rows do not own y (coo: its top level repeats rows):
   * rows, on every engine, and again from the routine kept for it */
  spc_tensor *A = one_sign(1.0), *C = NULL, *B = NULL;
  ck_assert(convert(A, "coo", &C, "one sign coo"));
  ck_assert(convert(A, "csr", &B, "one sign csr"));
  double *x = malloc(400 * sizeof *x);
  for (int64_t j = 0; j < 400; j++) x[j] = 1.0 + (double)(j % 7) / 8.0;
  static const spc_engine eng[3] = {SPC_ENGINE_GENERIC, SPC_ENGINE_FACTORY, SPC_ENGINE_JIT};
  for (int g = 0; g < 3; g++)
    for (int again = 0; again < 2; again++) {
      spc_kernel_info info;
      double *y = spmv_run(C, false, x, eng[g], 1, SPC_SCHED_AUTO, &info, "coo auto");
      ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
      expect_ordered(B, x, y, "coo");
      free(y);
    }
  free(x);
  spc_tensor_free(&B);
  spc_tensor_free(&C);
  spc_tensor_free(&A);
}
END_TEST

/* compact, its parents' segments laid out in pairs swapped (1, 0, 3, 2,
 * ...): the positions split would clip a thread's rows to positions of
 * other rows (it summed wrong: 3e-3 off on bcsstk13), so rows runs. */
static const char sw_level[] =
    "level: swcompressed\n"
    "properties: [ordered, unique, compact]\n"
    "arrays: {beg: index, fin: index, tot: index, idx: coord}\n"
    "read: {begin: 'beg[p]', end: 'fin[p]', access: 'idx[q]', size: 'tot[0]'}\n"
    "write:\n"
    "  queries: ['select [*] -> count(c) as nnz']\n"
    "  init: |\n"
    "    beg = alloc(index, np)\n"
    "    fin = alloc(index, np)\n"
    "    tot = alloc(index, 1)\n"
    "    for x in 0 .. np {\n"
    "      y = x + 1 - 2 * (x % 2)\n"
    "      if y >= np { y = x }\n"
    "      beg[y] = tot[0]\n"
    "      fin[y] = tot[0]\n"
    "      tot[0] += nnz[y]\n"
    "    }\n"
    "    idx = alloc(coord, tot[0])\n"
    "  yield_pos: |\n"
    "    r = fin[p]\n"
    "    fin[p] += 1\n"
    "    return r\n"
    "  insert_coord: idx[q] = c\n";

START_TEST(test_fallback) {
  char *dir = tu_mkdtemp();
  char *lv = tu_file(dir, "ncompressed.yaml", nc_level), *fm = tu_file(dir, "csr_nc.yaml", nc_format);
  spc_tensor *A = skewed(40), *B = to_user(A, lv, fm);
  spc_error e;
  double *x = make_x(40, false, false);
  spc_kernel_info info;
  double *y = spmv_run(B, false, x, SPC_ENGINE_GENERIC, 2, SPC_SCHED_POSITIONS, &info, "csr_nc");
  ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
  ck_assert_msg(strstr(info.note, "positions schedule") && strstr(info.note, "ncompressed") &&
                    strstr(info.note, "rows instead"),
                "note: %s", info.note);
  ref r;
  reference(A, false, x, &r);
  check_ref(&r, y, "csr_nc");
  /* compact, segments out of the rows' order: asked for positions, and on
   * auto, rows runs (and is right) */
  {
    char *sl = tu_file(dir, "swcompressed.yaml", sw_level);
    char *sf = tu_file(dir, "csr_sw.yaml", "format: csr_sw\norder: 2\nlevels: [dense, swcompressed]\n");
    spc_tensor *S = NULL, *A2 = skewed(12000); /* 35,997 entries: auto would split */
    double *x2 = make_x(12000, false, false);
    ref r2;
    reference(A2, false, x2, &r2);
    S = to_user(A2, sl, sf);
    for (int a = 0; a < 2; a++) {
      double *y2 = spmv_run(S, false, x2, SPC_ENGINE_GENERIC, 2, a ? SPC_SCHED_AUTO : SPC_SCHED_POSITIONS,
                            &info, "csr_sw");
      ck_assert_int_eq(info.used, SPC_SCHED_ROWS);
      ck_assert_msg(strstr(info.note, "does not lay its segments out") && strstr(info.note, "swcompressed"),
                    "note: %s", info.note);
      check_ref(&r2, y2, "csr_sw");
      free(y2);
    }
    ref_free(&r2);
    free(x2);
    spc_tensor_free(&S);
    spc_tensor_free(&A2);
    free(sl);
    free(sf);
  }
  ref_free(&r);
  /* a schedule out of range */
  spc_kernel_opts k;
  memset(&k, 0, sizeof k);
  k.schedule = (spc_schedule)7;
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spmv(B, 0, x, y, &k, &e), SPC_ERR_ARG);
  ck_assert_msg(strstr(e.msg, "schedule"), "%s", e.msg);
  /* x and y overlapping */
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spmv(B, 0, y, y, NULL, &e), SPC_ERR_ARG);
  ck_assert_msg(strstr(e.msg, "overlap"), "%s", e.msg);
  spc_schedule s;
  ck_assert_int_eq(spc_schedule_parse("positions", &s), 0);
  ck_assert_int_eq(s, SPC_SCHED_POSITIONS);
  ck_assert_int_ne(spc_schedule_parse("cols", &s), 0);
  ck_assert_str_eq(spc_schedule_name(SPC_SCHED_AUTO), "auto");
  free(y);
  free(x);
  spc_tensor_free(&B);
  spc_tensor_free(&A);
  free(lv);
  free(fm);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- the command line ---------------------------------------------------------------- */

START_TEST(test_cli) {
  char *dir = tu_mkdtemp();
  spc_tensor *A = skewed(200);
  char *in = tu_path(dir, "skewed.mtx"), *out = tu_path(dir, "y.mtx");
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_write(A, in, NULL, &e), &e);
  tu_run_result r;
  tu_run(&r, "spmv '%s' -o '%s' --threads 3 --schedule=positions -v", in, out);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.err, "3 threads, schedule positions"), "%s", r.err);
  tu_run_free(&r);
  spc_tensor *Y = tu_read_ok(out, 0, SPC_F64);
  spc_tensor *B = NULL;
  ck_assert(convert(A, "csr", &B, "skewed"));
  double x[200];
  for (int j = 0; j < 200; j++) x[j] = 1;
  double *y = spmv_run(B, false, x, SPC_ENGINE_AUTO, 3, SPC_SCHED_POSITIONS, NULL, "cli");
  const double *yv = spc_tensor_values(Y, NULL);
  ck_assert_int_eq(spc_tensor_nstored(Y), 200);
  ck_assert_msg(!memcmp(y, yv, sizeof x), "CLI y differs from spc_spmv's");
  ck_assert(yv[7] != 1e16);
  free(y);
  spc_tensor_free(&Y);
  tu_run(&r, "spmv '%s' -o '%s' --threads 3 --schedule rows -v", in, out);
  ck_assert_msg(r.status == 0 && strstr(r.err, "schedule rows"), "exit %d: %s", r.status, r.err);
  tu_run_free(&r);
  Y = tu_read_ok(out, 0, SPC_F64);
  ck_assert(((const double *)spc_tensor_values(Y, NULL))[7] == 1e16);
  spc_tensor_free(&Y);
  tu_run(&r, "spmv '%s' -o '%s' --schedule=lanes -v", in, out);
  ck_assert_msg(r.status == 0 && strstr(r.err, "schedule lanes"), "exit %d: %s", r.status, r.err);
  tu_run_free(&r);
  Y = tu_read_ok(out, 0, SPC_F64);
  y = spmv_run(B, false, x, SPC_ENGINE_AUTO, 1, SPC_SCHED_LANES, NULL, "cli lanes");
  ck_assert_msg(!memcmp(y, spc_tensor_values(Y, NULL), sizeof x), "CLI lanes y differs from spc_spmv's");
  free(y);
  spc_tensor_free(&Y);
  tu_run(&r, "spmv '%s' --schedule=columns", in);
  ck_assert_int_eq(r.status, 1);
  ck_assert_msg(strstr(r.err, "unknown schedule 'columns'") && strstr(r.err, "positions"), "%s", r.err);
  tu_run_free(&r);
  spc_tensor_free(&B);
  spc_tensor_free(&A);
  free(in);
  free(out);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

Suite *suite_spmv_sched(void) {
  Suite *s = suite_create("spmv_sched");
  TCase *tc = tcase_create("schedules");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_unchecked_fixture(tc, make_jit_dir, NULL);
  tcase_add_test(tc, test_formats);
  tcase_add_test(tc, test_jit);
  tcase_add_test(tc, test_lanes);
  tcase_add_test(tc, test_lanes_paths);
  tcase_add_test(tc, test_pairs);
  tcase_add_test(tc, test_skewed);
  tcase_add_test(tc, test_same_sign);
  tcase_add_test(tc, test_fallback);
  tcase_add_test(tc, test_cli);
  suite_add_tcase(s, tc);
  return s;
}
