/* test_spgemm.c -- suite_spgemm: the SpGEMM loop orders of spc_spgemm
 * (gustavson with a dense and a hash workspace, inner, outer, auto), the
 * cost model (spc_spgemm_explain) and `spconv spgemm --algo/--workspace`,
 * `spconv explain spgemm`.
 *
 *   square   A A for every shared square matrix with n < 5000, every
 *            algorithm (inner where its merges stay under 2e7), against a
 *            Gustavson in plain C over long double: structure exact,
 *            values within 1e-12 of the sum of |products| (integers bit
 *            exact); threads 1 and 2 bit-identical per algorithm where the
 *            product is moderate, and there the CSR equal to what converting
 *            its components gives (spc_conv_check_consistent); real,
 *            integer, complex, pattern files
 *   rect     A A^T and A^T A for rectangular shared matrices
 *   types    by hand: wrapping int64, uint64, pattern x pattern (counts),
 *            pattern x real, complex, cancellation (the entry stays, value
 *            0), empty and 0-sized operands, every algorithm
 *   nomem    each allocation of a product (every algorithm: inner and
 *            outer convert an operand on the way) failing in turn:
 *            SPC_ERR_NOMEM, nothing leaked, then the
 *            product equal to the one made without failures
 *   auto     the model's choice: a row vector times a column vector gives
 *            inner, a general square product gustavson; with a hash
 *            workspace and converted operands outer is dropped as
 *            dominated; the hash rule for a wide B; bad option values
 *   cli      --algo / --workspace results equal to the library's, explain
 *            output, bad values (exit 1, message naming the value)
 *   unsorted --unsorted (spc_kernel_opts.unsorted) on every shared square
 *            matrix under 5000 rows and A A^T of the rectangular ones,
 *            dense and hash, 1 and 2 threads: each row the sorted
 *            product's entries, bit for bit, in the order first met (A's
 *            k ascending, then B's j: checked against a plain walk) and the
 *            column level without ORDERED -- or, where the bitmap plan ran
 *            (B's rows dense in their spans), ORDERED and the sorted
 *            product itself; converted to csc and back it is the sorted
 *            product; `spconv spgemm --unsorted` likewise */
#include "spc_assemble.h" /* spc_conv_check_consistent */
#include "suites.h"
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12

/* the configurations every product runs in */
typedef struct cfg {
  int algo, ws;
  const char *name;
} cfg;
static const cfg cfgs[] = {
    {SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_DENSE, "gustavson/dense"},
    {SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_HASH, "gustavson/hash"},
    {SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_WS_BITMAP, "gustavson/bitmap"},
    {SPC_SPGEMM_INNER, 0, "inner"},
    {SPC_SPGEMM_OUTER, 0, "outer"},
    {SPC_SPGEMM_AUTO, 0, "auto"},
};
#define NCFG ((int)(sizeof cfgs / sizeof cfgs[0]))

/* A plain CSR (sorted, combined) of a matrix, values as long double. */
typedef struct pm {
  int64_t m, n, nnz, *rp, *cj;
  long double *re, *im;
  uint64_t *u;
  spc_vtype vt;
} pm;

static void pm_of(const spc_tensor *T, pm *p) {
  spc_tensor *c = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(spc_tensor_combine(T, SPC_DUP_SUM, &c, &e), &e);
  p->m = spc_tensor_dim(c, 0), p->n = spc_tensor_dim(c, 1), p->nnz = spc_tensor_nstored(c);
  p->vt = spc_tensor_vtype(c);
  size_t z = (size_t)(p->nnz ? p->nnz : 1);
  p->rp = calloc((size_t)p->m + 1, sizeof *p->rp);
  p->cj = malloc(z * sizeof *p->cj);
  p->re = calloc(z, sizeof *p->re), p->im = calloc(z, sizeof *p->im);
  p->u = calloc(z, sizeof *p->u);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  int64_t k[SPC_MAX_ORDER], q = 0;
  const void *v;
  while (spc_iter_next(it, k, &v)) {
    p->rp[k[0] + 1]++;
    p->cj[q] = k[1];
    switch (p->vt) {
    case SPC_I64: p->u[q] = (uint64_t) * (const int64_t *)v, p->re[q] = (long double)*(const int64_t *)v; break;
    case SPC_U64: p->u[q] = *(const uint64_t *)v, p->re[q] = (long double)*(const uint64_t *)v; break;
    case SPC_F32: p->re[q] = *(const float *)v; break;
    case SPC_F64: p->re[q] = *(const double *)v; break;
    case SPC_C128: p->re[q] = ((const double *)v)[0], p->im[q] = ((const double *)v)[1]; break;
    default: p->re[q] = 1, p->u[q] = 1;
    }
    q++;
  }
  for (int64_t i = 0; i < p->m; i++) p->rp[i + 1] += p->rp[i];
  spc_iter_free(&it);
  spc_tensor_free(&c);
}

static void pm_free(pm *p) {
  free(p->rp), free(p->cj), free(p->re), free(p->im), free(p->u);
}

static bool vt_int(spc_vtype v) { return v == SPC_I64 || v == SPC_U64 || v == SPC_PATTERN; }

static spc_vtype product_vt(spc_vtype a, spc_vtype b) {
  if (a == SPC_C128 || b == SPC_C128) return SPC_C128;
  if (a == SPC_U64 && b == SPC_U64) return SPC_U64; /* as SciPy's uint64 product */
  if (vt_int(a) && vt_int(b) && !(a == SPC_PATTERN && b == SPC_PATTERN)) return SPC_I64;
  return SPC_F64;
}

static int64_t at(const void *d, spc_itype t, int64_t k) {
  return t == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* within tol, or the same infinity, or both NaN */
static bool near(long double v, long double ref, long double tol) {
  if (isnan(v) || isnan(ref)) return isnan(v) && isnan(ref);
  return v == ref || fabsl(v - ref) <= tol;
}

/* C (csr) against the plain-C product of a and b; returns nnz(C). */
static int64_t check(const pm *a, const pm *b, const spc_tensor *C, const char *what) {
  spc_error e;
  ck_assert_msg(!strcmp(spc_tensor_format(C), "csr"), "%s: format %s", what, spc_tensor_format(C));
  ck_assert_int_eq(spc_tensor_dim(C, 0), a->m);
  ck_assert_int_eq(spc_tensor_dim(C, 1), b->n);
  spc_vtype vt = product_vt(a->vt, b->vt);
  ck_assert_msg(spc_tensor_vtype(C) == vt, "%s: value type %s, expected %s", what, spc_vtype_name(spc_tensor_vtype(C)),
                spc_vtype_name(vt));
  const void *pd, *cd;
  spc_itype pt, ct;
  int64_t pl, cl, nv;
  tu_assert_ok(spc_tensor_level_array(C, 1, "pos", &pd, &pt, &pl), &e);
  tu_assert_ok(spc_tensor_level_array(C, 1, "crd", &cd, &ct, &cl), &e);
  const void *val = spc_tensor_values(C, &nv);
  /* (a 0-row csr keeps a pos of 2, as the conversion engine makes it) */
  ck_assert_msg((pl == a->m + 1 || (a->m == 0 && pl == 2 && at(pd, pt, 1) == 0)) && nv == cl, "%s: pos holds %lld, %lld rows; %lld values, %lld crd", what,
                (long long)pl, (long long)a->m, (long long)nv, (long long)cl);
  size_t n1 = (size_t)(b->n ? b->n : 1);
  int64_t *mark = malloc(n1 * sizeof *mark), *cols = malloc(n1 * sizeof *cols);
  long double *sr = calloc(n1, sizeof *sr), *si = calloc(n1, sizeof *si), *sc = calloc(n1, sizeof *sc);
  uint64_t *su = calloc(n1, sizeof *su);
  for (int64_t j = 0; j < b->n; j++) mark[j] = -1;
  bool ints = vt == SPC_I64 || vt == SPC_U64, cplx = vt == SPC_C128;
  for (int64_t i = 0; i < a->m; i++) {
    int64_t cnt = 0;
    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++) {
      int64_t k = a->cj[p];
      for (int64_t q = b->rp[k]; q < b->rp[k + 1]; q++) {
        int64_t j = b->cj[q];
        if (mark[j] != i) mark[j] = i, cols[cnt++] = j, sr[j] = si[j] = sc[j] = 0, su[j] = 0;
        su[j] += a->u[p] * b->u[q];
        if (cplx) {
          sr[j] += a->re[p] * b->re[q] - a->im[p] * b->im[q];
          si[j] += a->re[p] * b->im[q] + a->im[p] * b->re[q];
        } else {
          sr[j] += a->re[p] * b->re[q];
        }
        sc[j] += (fabsl(a->re[p]) + fabsl(a->im[p])) * (fabsl(b->re[q]) + fabsl(b->im[q]));
      }
    }
    qsort(cols, (size_t)cnt, sizeof *cols, cmp64);
    int64_t r0 = at(pd, pt, i), r1 = at(pd, pt, i + 1);
    tu_check(r1 - r0 == cnt, "%s: row %lld holds %lld entries, reference %lld", what, (long long)i,
             (long long)(r1 - r0), (long long)cnt);
    for (int64_t t = 0; t < cnt; t++) {
      int64_t j = cols[t], q = r0 + t;
      tu_check(at(cd, ct, q) == j, "%s: row %lld entry %lld: column %lld, reference %lld", what, (long long)i,
               (long long)t, (long long)at(cd, ct, q), (long long)j);
      if (ints) {
        tu_check(((const uint64_t *)val)[q] == su[j], "%s: C(%lld,%lld) = %lld, reference %lld", what, (long long)i,
                 (long long)j, (long long)((const int64_t *)val)[q], (long long)su[j]);
      } else {
        long double vr = cplx ? ((const double *)val)[2 * q] : ((const double *)val)[q];
        long double vi = cplx ? ((const double *)val)[2 * q + 1] : 0;
        long double tol = TOL * sc[j];
        tu_check(near(vr, sr[j], tol) && near(vi, si[j], tol),
                 "%s: C(%lld,%lld) = (%.17g, %.17g), reference (%.17Lg, %.17Lg)", what, (long long)i, (long long)j,
                 (double)vr, (double)vi, sr[j], si[j]);
      }
    }
  }
  free(mark), free(cols), free(sr), free(si), free(sc), free(su);
  return cl;
}

static spc_tensor *run(const spc_tensor *A, const spc_tensor *B, const cfg *c, int threads, const char *what) {
  spc_kernel_opts k;
  memset(&k, 0, sizeof k);
  k.threads = threads;
  k.no_jit = 1;
  k.algo = c->algo;
  k.workspace = c->ws;
  spc_tensor *C = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_spgemm(A, B, NULL, &k, &C, &e);
  char b[1200];
  ck_assert_msg(s == SPC_OK, "%s (%s, %d threads): %s: %s", what, c->name, threads, spc_status_name(s),
                spc_error_string(&e, b, sizeof b));
  return C;
}

/* bit-identical csr results */
static void same(const spc_tensor *x, const spc_tensor *y, const char *what) {
  ck_assert_int_eq(spc_tensor_vtype(x), spc_tensor_vtype(y));
  static const char *const nm[] = {"pos", "crd"};
  for (int k = 0; k < 2; k++) {
    const void *p, *q;
    spc_itype tp, tq;
    int64_t lp, lq;
    spc_error e;
    tu_assert_ok(spc_tensor_level_array(x, 1, nm[k], &p, &tp, &lp), &e);
    tu_assert_ok(spc_tensor_level_array(y, 1, nm[k], &q, &tq, &lq), &e);
    ck_assert_msg(tp == tq && lp == lq && (!lp || !memcmp(p, q, (size_t)lp * (tp == SPC_IDX32 ? 4 : 8))),
                  "%s: %s differs", what, nm[k]);
  }
  int64_t nx, ny;
  const void *vx = spc_tensor_values(x, &nx), *vy = spc_tensor_values(y, &ny);
  ck_assert_int_eq(nx, ny);
  ck_assert_msg(!nx || !memcmp(vx, vy, (size_t)nx * spc_vtype_size(spc_tensor_vtype(x))), "%s: values differ",
                what);
}

/* merges an inner product would run: nonempty rows of a x nnz(b) + ... */
static double merges(const pm *a, const pm *b) {
  int64_t nzr = 0, nzc = 0;
  char *seen = calloc((size_t)b->n + 1, 1);
  for (int64_t i = 0; i < a->m; i++) nzr += a->rp[i + 1] > a->rp[i];
  for (int64_t q = 0; q < b->nnz; q++) nzc += !seen[b->cj[q]], seen[b->cj[q]] = 1;
  free(seen);
  return (double)nzc * (double)a->nnz + (double)nzr * (double)b->nnz;
}

/* every configuration of A B against the reference; threads 1 = 2 when
 * twice; returns nnz(C) */
static int64_t all_algos(const spc_tensor *A, const spc_tensor *B, const pm *a, const pm *b, bool twice,
                         const char *what, int *ran) {
  int64_t nnz = -1;
  bool inner_ok = merges(a, b) <= 2e7;
  spc_tensor *hashed = NULL; /* gustavson/hash's product: the bitmap's, bit for bit */
  for (int c = 0; c < NCFG; c++) {
    if (cfgs[c].algo == SPC_SPGEMM_INNER && !inner_ok) continue;
    char w[300];
    snprintf(w, sizeof w, "%s, %s", what, cfgs[c].name);
    spc_tensor *C = run(A, B, &cfgs[c], 1, w);
    int64_t z = check(a, b, C, w);
    spc_error e;
    tu_assert_ok(spc_tensor_check(C, &e), &e);
    if (twice) { /* the CSR made directly is the one the conversion makes */
      spc_tensor *coo = NULL;
      tu_assert_ok(spc_tensor_to_coo(C, 0, &coo, &e), &e);
      tu_assert_ok(spc_conv_check_consistent(C, coo, &e), &e);
      spc_tensor_free(&coo);
    }
    ck_assert_msg(nnz < 0 || z == nnz, "%s: %lld entries, other algorithms %lld", w, (long long)z, (long long)nnz);
    nnz = z;
    if (twice) {
      spc_tensor *C2 = run(A, B, &cfgs[c], 2, w);
      snprintf(w, sizeof w, "%s, %s: threads 1 vs 2", what, cfgs[c].name);
      same(C, C2, w);
      spc_tensor_free(&C2);
    }
    if (cfgs[c].algo == SPC_SPGEMM_GUSTAVSON && cfgs[c].ws == SPC_SPGEMM_WS_HASH) {
      hashed = C, C = NULL;
    } else if (cfgs[c].algo == SPC_SPGEMM_GUSTAVSON && cfgs[c].ws == SPC_SPGEMM_WS_BITMAP && hashed) {
      snprintf(w, sizeof w, "%s: bitmap vs hash workspace", what);
      same(hashed, C, w); /* -0.0 + first product keeps its bits */
    }
    spc_tensor_free(&C);
    ++*ran;
  }
  spc_tensor_free(&hashed);
  return nnz;
}

static int64_t flops(const pm *a, const pm *b) {
  int64_t f = 0;
  for (int64_t p = 0; p < a->nnz; p++) f += b->rp[a->cj[p] + 1] - b->rp[a->cj[p]];
  return f;
}

static spc_tensor *read_mat(const char *name) {
  const char *dd = tu_data_dir();
  if (!dd) return NULL;
  char path[2048];
  snprintf(path, sizeof path, "%s/matrices/%s", dd, name);
  if (!tu_exists(path)) return NULL;
  return tu_read_ok(path, 1, SPC_VTYPE_AUTO);
}

START_TEST(test_square) {
  const char *dd = tu_data_dir();
  if (!dd) return;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/matrices", dd);
  int nf = 0, done = 0, ran = 0, twice = 0, kinds[6] = {0};
  char **files = tu_list_files(dir, ".mtx", &nf);
  for (int f = 0; f < nf; f++) {
    spc_tensor *T = read_mat(files[f]);
    if (!T || spc_tensor_order(T) != 2 || spc_tensor_dim(T, 0) != spc_tensor_dim(T, 1) ||
        spc_tensor_dim(T, 0) >= 5000) {
      spc_tensor_free(&T);
      continue;
    }
    pm a;
    pm_of(T, &a);
    int64_t fl = flops(&a, &a);
    if (fl > 20000000) { /* arrow.mtx and the like: the kernels suite has them */
      pm_free(&a);
      spc_tensor_free(&T);
      continue;
    }
    bool two = fl <= 300000;
    all_algos(T, T, &a, &a, two, files[f], &ran);
    kinds[a.vt]++;
    twice += two;
    done++;
    pm_free(&a);
    spc_tensor_free(&T);
  }
  tu_free_list(files);
  ck_assert_int_ge(done, 20);
  ck_assert_int_ge(kinds[SPC_PATTERN], 1);
  ck_assert_int_ge(kinds[SPC_I64], 1);
  ck_assert_int_ge(kinds[SPC_C128], 1);
  printf("spgemm: A A on %d square matrices (%d pattern, %d int64, %d real, %d complex): %d products equal to the "
         "reference; threads 1 = 2 on %d matrices\n",
         done, kinds[SPC_PATTERN], kinds[SPC_I64], kinds[SPC_F64], kinds[SPC_C128], ran, twice);
}
END_TEST

/* the transpose of T as a new COO */
static spc_tensor *transpose(const pm *a) {
  int64_t dims[2] = {a->n, a->m};
  spc_tensor *T = NULL;
  spc_error e;
  spc_vtype vt = a->vt == SPC_F32 ? SPC_F64 : a->vt;
  tu_assert_ok(spc_tensor_create_coo(2, dims, a->nnz, vt, &T, &e), &e);
  void *ri = spc_tensor_level_array_mut(T, 0, "crd"), *ci = spc_tensor_level_array_mut(T, 1, "crd");
  const void *d;
  spc_itype t0, t1;
  int64_t len;
  tu_assert_ok(spc_tensor_level_array(T, 0, "crd", &d, &t0, &len), &e);
  tu_assert_ok(spc_tensor_level_array(T, 1, "crd", &d, &t1, &len), &e);
  void *v = spc_tensor_values_mut(T);
  for (int64_t i = 0, q = 0; i < a->m; i++)
    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++, q++) {
      if (t0 == SPC_IDX32) ((int32_t *)ri)[q] = (int32_t)a->cj[p];
      else ((int64_t *)ri)[q] = a->cj[p];
      if (t1 == SPC_IDX32) ((int32_t *)ci)[q] = (int32_t)i;
      else ((int64_t *)ci)[q] = i;
      switch (vt) {
      case SPC_I64: ((int64_t *)v)[q] = (int64_t)a->u[p]; break;
      case SPC_U64: ((uint64_t *)v)[q] = a->u[p]; break;
      case SPC_F64: ((double *)v)[q] = (double)a->re[p]; break;
      case SPC_C128: ((double *)v)[2 * q] = (double)a->re[p], ((double *)v)[2 * q + 1] = (double)a->im[p]; break;
      default: break;
      }
    }
  return T;
}

START_TEST(test_rect) {
  static const char *const names[] = {"lp_afiro.mtx", "lp_e226.mtx", "lp_share1b.mtx", "ash219.mtx",
                                      "Franz6_id1959_aug.mtx", "west0067.mtx", NULL};
  int n = 0, ran = 0;
  for (int f = 0; names[f]; f++) {
    spc_tensor *A = read_mat(names[f]);
    if (!A) continue;
    pm a, at_;
    pm_of(A, &a);
    spc_tensor *T = transpose(&a);
    pm_of(T, &at_);
    char w[256];
    snprintf(w, sizeof w, "%s A^T", names[f]);
    all_algos(A, T, &a, &at_, a.nnz < 60000, w, &ran);
    snprintf(w, sizeof w, "%s^T A", names[f]);
    all_algos(T, A, &at_, &a, a.nnz < 60000, w, &ran);
    n += 2;
    pm_free(&a), pm_free(&at_);
    spc_tensor_free(&A), spc_tensor_free(&T);
  }
  if (tu_data_dir()) ck_assert_int_ge(n, 10);
  printf("spgemm: %d rectangular products, %d runs equal to the reference\n", n, ran);
}
END_TEST

/* a COO from triplets (values by type: re as int64 / uint64 / double,
 * (re, im) for complex) */
static spc_tensor *coo(int64_t m, int64_t n, int64_t nnz, spc_vtype vt, const int64_t *ri, const int64_t *ci,
                       const double *re, const double *im) {
  int64_t dims[2] = {m, n};
  spc_tensor *T = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(2, dims, nnz, vt, &T, &e), &e);
  const void *d;
  spc_itype t[2];
  int64_t len;
  for (int l = 0; l < 2; l++) {
    tu_assert_ok(spc_tensor_level_array(T, l, "crd", &d, &t[l], &len), &e);
    void *c = spc_tensor_level_array_mut(T, l, "crd");
    for (int64_t q = 0; q < nnz; q++) {
      int64_t x = l ? ci[q] : ri[q];
      if (t[l] == SPC_IDX32) ((int32_t *)c)[q] = (int32_t)x;
      else ((int64_t *)c)[q] = x;
    }
  }
  void *v = spc_tensor_values_mut(T);
  for (int64_t q = 0; q < nnz; q++) switch (vt) {
    case SPC_I64: ((int64_t *)v)[q] = (int64_t)re[q]; break;
    case SPC_U64: ((uint64_t *)v)[q] = (uint64_t)re[q]; break;
    case SPC_F64: ((double *)v)[q] = re[q]; break;
    case SPC_C128: ((double *)v)[2 * q] = re[q], ((double *)v)[2 * q + 1] = im ? im[q] : 0; break;
    default: break;
    }
  return T;
}

static void pair(spc_tensor *A, spc_tensor *B, const char *what) {
  pm a, b;
  pm_of(A, &a);
  pm_of(B, &b);
  int ran = 0;
  all_algos(A, B, &a, &b, true, what, &ran);
  ck_assert_int_eq(ran, NCFG);
  pm_free(&a), pm_free(&b);
  spc_tensor_free(&A), spc_tensor_free(&B);
}

/* Outer products of one k past the block of 2^20 points: made in pieces of
 * A's rows (a buffer the size of the k's products was allocated: 52 GB for
 * arrow squared, which the OOM killer ended); every algorithm agrees.  A
 * product whose entries cannot be held even at their bound is refused
 * before any product is made. */
START_TEST(test_outer_heavy) {
  enum { N = 1200 };
  int64_t *ar = malloc(2 * N * sizeof *ar), *ac = malloc(2 * N * sizeof *ac), *br = malloc(2 * N * sizeof *br),
          *bc = malloc(2 * N * sizeof *bc);
  double *av = malloc(2 * N * sizeof *av), *bv = malloc(2 * N * sizeof *bv);
  int64_t na = 0, nb = 0;
  for (int64_t i = 0; i < N; i++) { /* A: column 0 full, column 1 every third row; B: row 0 full, row 2 half */
    ar[na] = i, ac[na] = 0, av[na++] = 1 + (double)(i % 5);
    if (i % 3 == 0) ar[na] = i, ac[na] = 1, av[na++] = -0.5;
    br[nb] = 0, bc[nb] = i, bv[nb++] = 0.25 * (double)(i % 7) - 1;
    if (i % 2 == 0) br[nb] = 2, bc[nb] = i, bv[nb++] = 3;
  }
  pair(coo(N, 3, na, SPC_F64, ar, ac, av, NULL), coo(3, N, nb, SPC_F64, br, bc, bv, NULL), "outer heavy k");
  /* 200000 x 1 times 1 x 200000: 4e10 products, as many entries */
  enum { M = 200000 };
  int64_t *r = calloc(M, sizeof *r), *c = malloc(M * sizeof *c);
  double *v = malloc(M * sizeof *v);
  for (int64_t i = 0; i < M; i++) c[i] = i, v[i] = 1;
  spc_tensor *A = coo(M, 1, M, SPC_F64, c, r, v, NULL), *B = coo(1, M, M, SPC_F64, r, c, v, NULL), *C = NULL;
  spc_kernel_opts ko;
  memset(&ko, 0, sizeof ko);
  ko.algo = SPC_SPGEMM_OUTER;
  ko.threads = 1;
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(spc_spgemm(A, B, NULL, &ko, &C, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_ptr_null(C);
  ck_assert_msg(strstr(e.msg, "may have up to 40000000000 entries"), "%s", e.msg);
  spc_tensor_free(&A), spc_tensor_free(&B);
  free(r), free(c), free(v);
  free(ar), free(ac), free(br), free(bc), free(av), free(bv);
}
END_TEST

START_TEST(test_types) {
  int64_t ari[] = {0, 0, 0, 1, 2, 2}, aci[] = {0, 1, 3, 2, 0, 3};
  int64_t bri[] = {0, 1, 1, 2, 3, 3}, bci[] = {0, 0, 2, 1, 0, 2};
  double big[] = {3e18, 5e18, 7, -2, 9e18, 1}, ar[] = {1, 2, -0.5, 4, 0.25, -8}, ai[] = {0.5, -1, 2, 0, 3, 1};
  spc_vtype vts[] = {SPC_PATTERN, SPC_I64, SPC_U64, SPC_F64, SPC_C128};
  for (int x = 0; x < 5; x++)
    for (int y = 0; y < 5; y++) {
      char w[64];
      snprintf(w, sizeof w, "%s x %s", spc_vtype_name(vts[x]), spc_vtype_name(vts[y]));
      bool ix = vts[x] == SPC_I64 || vts[x] == SPC_U64, iy = vts[y] == SPC_I64 || vts[y] == SPC_U64;
      pair(coo(3, 4, 6, vts[x], ari, aci, ix ? big : ar, ai), coo(4, 3, 6, vts[y], bri, bci, iy ? big : ar, ai), w);
    }
  { /* wrapping: 3e18 * 5 and sums past 2^63, checked against uint64 arithmetic */
    spc_tensor *A = coo(3, 4, 6, SPC_I64, ari, aci, big, NULL), *B = coo(4, 3, 6, SPC_I64, bri, bci, big, NULL);
    spc_tensor *C = run(A, B, &cfgs[3], 1, "wrap");
    int64_t nv;
    const int64_t *v = spc_tensor_values(C, &nv);
    /* C(0,0) = A(0,0) B(0,0) + A(0,1) B(1,0) + A(0,3) B(3,0)
     *        = 3e18 * 3e18 + 5e18 * 5e18 + 7 * 9e18 (mod 2^64) */
    uint64_t want = (uint64_t)3000000000000000000ll * (uint64_t)3000000000000000000ll +
                    (uint64_t)5000000000000000000ll * (uint64_t)5000000000000000000ll +
                    (uint64_t)7 * (uint64_t)9000000000000000000ll;
    ck_assert_int_ge(nv, 1);
    ck_assert_uint_eq((uint64_t)v[0], want);
    spc_tensor_free(&C), spc_tensor_free(&A), spc_tensor_free(&B);
  }
  { /* two uint64 operands: the product is uint64 (as SciPy's), above INT64_MAX */
    int64_t r[] = {0, 0}, c[] = {0, 1}, r2[] = {0, 1}, c2[] = {0, 0};
    double va[] = {3037000500.0, 4294967296.0}, vb[] = {3037000500.0, 1};
    for (int k = 0; k < NCFG; k++) {
      spc_tensor *A = coo(1, 2, 2, SPC_U64, r, c, va, NULL), *B = coo(2, 1, 2, SPC_U64, r2, c2, vb, NULL);
      spc_tensor *C = run(A, B, &cfgs[k], 1, "uint64");
      ck_assert_int_eq(spc_tensor_vtype(C), SPC_U64);
      int64_t nv;
      const uint64_t *v = spc_tensor_values(C, &nv);
      ck_assert_int_eq(nv, 1);
      ck_assert_uint_eq(v[0], 3037000500ull * 3037000500ull + 4294967296ull); /* 9223372041295217296 */
      spc_tensor_free(&C), spc_tensor_free(&A), spc_tensor_free(&B);
    }
  }
  { /* cancellation: C(0,0) = 1*1 + 1*(-1) = 0 stays stored in every algorithm */
    int64_t r[] = {0, 0}, c[] = {0, 1}, r2[] = {0, 1}, c2[] = {0, 0};
    double va[] = {1, 1}, vb[] = {1, -1};
    for (int k = 0; k < NCFG; k++) {
      spc_tensor *A = coo(1, 2, 2, SPC_F64, r, c, va, NULL), *B = coo(2, 1, 2, SPC_F64, r2, c2, vb, NULL);
      spc_tensor *C = run(A, B, &cfgs[k], 1, "cancel");
      ck_assert_msg(spc_tensor_nstored(C) == 1, "cancel, %s: %lld stored", cfgs[k].name,
                    (long long)spc_tensor_nstored(C));
      int64_t nv;
      ck_assert(((const double *)spc_tensor_values(C, &nv))[0] == 0);
      spc_tensor_free(&C), spc_tensor_free(&A), spc_tensor_free(&B);
    }
  }
  /* empty operands and 0-sized dimensions */
  pair(coo(5, 4, 0, SPC_F64, NULL, NULL, NULL, NULL), coo(4, 3, 6, SPC_F64, bri, bci, ar, NULL), "empty x B");
  pair(coo(3, 0, 0, SPC_F64, NULL, NULL, NULL, NULL), coo(0, 2, 0, SPC_F64, NULL, NULL, NULL, NULL), "3x0 by 0x2");
  pair(coo(0, 3, 0, SPC_I64, NULL, NULL, NULL, NULL), coo(3, 2, 1, SPC_I64, bri, bci, big, NULL), "0x3 by 3x2");
  /* one operand in csr, the other in csc (converted per loop order) */
  {
    spc_tensor *A = coo(3, 4, 6, SPC_F64, ari, aci, ar, NULL), *B = coo(4, 3, 6, SPC_C128, bri, bci, ar, ai);
    spc_tensor *ac = NULL, *bc = NULL;
    spc_convert_opts o;
    spc_convert_opts_init(&o);
    o.no_jit = 1;
    spc_error e;
    tu_assert_ok(spc_convert_to(A, "csc", &o, &ac, &e), &e);
    tu_assert_ok(spc_convert_to(B, "csr", &o, &bc, &e), &e);
    pm a, b;
    pm_of(A, &a), pm_of(B, &b);
    int ran = 0;
    all_algos(ac, bc, &a, &b, true, "csc x csr", &ran);
    pm_free(&a), pm_free(&b);
    spc_tensor_free(&A), spc_tensor_free(&B), spc_tensor_free(&ac), spc_tensor_free(&bc);
  }
}
END_TEST

/* Empty products into every built-in matrix format by every algorithm:
 * the result is the format's empty tensor (a counter's level, ELL's
 * slots, of extent 0: the outer product's builder stream made it 1 and
 * the .bsp.h5 could not be read back), written to .bsp.h5 and read back
 * with no entries. */
static int64_t nonzeros(const spc_tensor *t) {
  spc_iter *it = NULL;
  spc_error e;
  int64_t c[2], n = 0;
  const void *v;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  while (spc_iter_next(it, c, &v)) n += spc_tensor_vtype(t) == SPC_PATTERN || *(const double *)v != 0;
  spc_iter_free(&it);
  return n;
}

START_TEST(test_empty_into_formats) {
  char *dir = tu_mkdtemp(), *out = tu_path(dir, "c.bsp.h5");
  static const int64_t shp[][3] = {{2, 2, 2}, {3, 4, 3}, {0, 5, 0}, {5, 0, 5}, {0, 0, 0}};
  static const int algos[] = {SPC_SPGEMM_GUSTAVSON, SPC_SPGEMM_INNER, SPC_SPGEMM_OUTER, 0};
  int runs = 0;
  for (size_t h = 0; h < sizeof shp / sizeof shp[0]; h++)
    for (int f = 0; f < spc_format_count(); f++) {
      if (spc_format_order(f) != 2 && spc_format_order(f) != 0) continue;
      const char *fmt = spc_format_name(f);
      for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++) {
        spc_tensor *A = coo(shp[h][0], shp[h][1], 0, SPC_F64, NULL, NULL, NULL, NULL),
                   *B = coo(shp[h][1], shp[h][2], 0, SPC_F64, NULL, NULL, NULL, NULL), *C = NULL, *R = NULL;
        spc_kernel_opts ko;
        memset(&ko, 0, sizeof ko);
        ko.algo = algos[k];
        ko.threads = 1;
        spc_error e;
        spc_status st = spc_spgemm(A, B, fmt, &ko, &C, &e);
        ck_assert_msg(st == SPC_OK, "%lld x %lld x %lld into %s, %s: %s", (long long)shp[h][0],
                      (long long)shp[h][1], (long long)shp[h][2], fmt, spc_spgemm_algo_name(algos[k]), e.msg);
        ck_assert_msg(nonzeros(C) == 0, "%s, %s: %lld nonzeros", fmt, spc_spgemm_algo_name(algos[k]),
                      (long long)nonzeros(C));
        ck_assert_int_eq(spc_tensor_dim(C, 0), shp[h][0]);
        ck_assert_int_eq(spc_tensor_dim(C, 1), shp[h][2]);
        tu_assert_ok(spc_write(C, out, NULL, &e), &e);
        R = tu_read_ok(out, 0, SPC_VTYPE_AUTO);
        char why[512];
        ck_assert_msg(tu_tensor_diff(C, R, 0, why, sizeof why) == 0, "%s, %s: read back: %s", fmt,
                      spc_spgemm_algo_name(algos[k]), why);
        spc_tensor_free(&A), spc_tensor_free(&B), spc_tensor_free(&C), spc_tensor_free(&R);
        runs++;
      }
    }
  printf("spgemm: %d empty products into every matrix format\n", runs);
  tu_rmtree(dir);
  free(out);
  free(dir);
}
END_TEST

static int choice(const spc_tensor *A, const spc_tensor *B, int threads, int ws, int *wsout, char **text) {
  spc_kernel_opts k;
  memset(&k, 0, sizeof k);
  k.threads = threads;
  k.workspace = ws;
  int algo = -1, w = -1;
  spc_error e;
  tu_assert_ok(spc_spgemm_explain(A, B, &k, &algo, &w, text, &e), &e);
  if (wsout) *wsout = w;
  return algo;
}

/* A A, A an int32 CSR: B's nonempty columns marked in the flops' pass
 * over A (no pass over B's crd): the statistics of a copy of A as B, and
 * of the COO T (counted by the generic pass); line: the counts' line */
static void same_stats(const spc_tensor *T, const char *line) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.no_jit = 1;
  spc_error e;
  spc_tensor *c = NULL, *c2 = NULL;
  tu_assert_ok(spc_convert_to(T, "csr", &o, &c, &e), &e);
  tu_assert_ok(spc_convert_to(T, "csr", &o, &c2, &e), &e);
  for (int th = 1; th <= 2; th++) {
    char *t1 = NULL, *t2 = NULL, *t3 = NULL;
    ck_assert_int_eq(choice(c, c, th, 0, NULL, &t1), choice(c, c2, th, 0, NULL, &t2));
    ck_assert_str_eq(t1, t2);
    choice(T, T, th, 0, NULL, &t3);
    const char *s1 = strstr(t1, "sets ("), *s3 = strstr(t3, "sets ("), *e1 = s1 ? strstr(s1, "candidates:") : NULL;
    ck_assert_ptr_nonnull(s1);
    ck_assert_ptr_nonnull(s3);
    ck_assert_ptr_nonnull(e1);
    ck_assert_int_eq(strncmp(s1, s3, (size_t)(e1 - s1)), 0);
    ck_assert_msg(strstr(t1, line), "%s", t1);
    free(t1), free(t2), free(t3);
  }
  spc_tensor_free(&c2);
  spc_tensor_free(&c);
}

START_TEST(test_auto) {
  /* a row vector (1 x K) times a column vector (K x 1): inner, no matter
   * the threads; its explanation says so */
  int64_t K = 200000, nz = 500;
  int64_t *z0 = calloc((size_t)nz, sizeof *z0), *ka = malloc((size_t)nz * sizeof *ka),
          *kb = malloc((size_t)nz * sizeof *kb);
  double *v = malloc((size_t)nz * sizeof *v);
  for (int64_t t = 0; t < nz; t++) ka[t] = t * 397, kb[t] = t * 211 + 5, v[t] = 1.0 / (double)(t + 1);
  spc_tensor *x = coo(1, K, nz, SPC_F64, z0, ka, v, NULL), *y = coo(K, 1, nz, SPC_F64, kb, z0, v, NULL);
  char *text = NULL;
  for (int th = 1; th <= 2; th++) ck_assert_int_eq(choice(x, y, th, 0, NULL, NULL), SPC_SPGEMM_INNER);
  ck_assert_int_eq(choice(x, y, 1, 0, NULL, &text), SPC_SPGEMM_INNER);
  ck_assert_ptr_nonnull(strstr(text, "choice: inner"));
  ck_assert_ptr_nonnull(strstr(text, "B coo -> csc"));
  ck_assert_ptr_nonnull(strstr(text, "merge      {(i,j,k)"));
  free(text);
  {
    pm a, b;
    pm_of(x, &a), pm_of(y, &b);
    int ran = 0;
    all_algos(x, y, &a, &b, true, "row x column", &ran);
    pm_free(&a), pm_free(&b);
  }
  spc_tensor_free(&x), spc_tensor_free(&y);
  free(z0), free(ka), free(kb), free(v);
  /* a general square product: gustavson, dense workspace (n small) */
  spc_tensor *T = read_mat("west0479.mtx");
  if (T) {
    spc_tensor *c = NULL;
    spc_convert_opts o;
    spc_convert_opts_init(&o);
    o.no_jit = 1;
    spc_error e;
    tu_assert_ok(spc_convert_to(T, "csr", &o, &c, &e), &e);
    int w;
    ck_assert_int_eq(choice(T, T, 1, 0, &w, NULL), SPC_SPGEMM_GUSTAVSON);
    ck_assert_int_eq(w, SPC_SPGEMM_WS_DENSE);
    /* converted operands, a hash workspace: outer's work contains
     * gustavson's (and one conversion more): dropped */
    ck_assert_int_eq(choice(c, c, 2, SPC_SPGEMM_WS_HASH, &w, &text), SPC_SPGEMM_GUSTAVSON);
    ck_assert_int_eq(w, SPC_SPGEMM_WS_HASH);
    ck_assert_ptr_nonnull(strstr(text, "outer dropped: its work contains gustavson's"));
    ck_assert_ptr_nonnull(strstr(text, "conversions: none"));
    free(text);
    same_stats(T, "nonempty rows of A 479, nonempty columns of B 479");
    /* an unsorted int32 CSR as both operands (auto's statistics, and the
     * rows' bounds, from it; the kernel's operand its sorted copy): the
     * product of the sorted one, bit for bit */
    spc_kernel_opts k;
    memset(&k, 0, sizeof k);
    k.no_jit = 1, k.threads = 1, k.unsorted = 1;
    spc_tensor *U = NULL, *S = NULL, *CU = NULL, *CS = NULL;
    tu_assert_ok(spc_spgemm(c, c, NULL, &k, &U, &e), &e);
    k.unsorted = 0;
    tu_assert_ok(spc_spgemm(c, c, NULL, &k, &S, &e), &e);
    ck_assert(!(U->lv[1].props & SPC_LP_ORDERED));
    tu_assert_ok(spc_spgemm(U, U, NULL, &k, &CU, &e), &e);
    tu_assert_ok(spc_spgemm(S, S, NULL, &k, &CS, &e), &e);
    same(CU, CS, "auto on an unsorted CSR");
    spc_tensor_free(&U), spc_tensor_free(&S), spc_tensor_free(&CU), spc_tensor_free(&CS);
    spc_tensor_free(&c);
    spc_tensor_free(&T);
  }
  { /* empty rows and columns: 4 of 7 rows, 3 of 7 columns hold entries */
    int64_t ri[] = {0, 2, 2, 3, 6, 6}, ci[] = {5, 0, 5, 2, 0, 2};
    double vv[] = {1, 2, 3, 4, 5, 6};
    spc_tensor *A = coo(7, 7, 6, SPC_F64, ri, ci, vv, NULL);
    same_stats(A, "nonempty rows of A 4, nonempty columns of B 3");
    spc_tensor_free(&A);
  }
  { /* a wide B (10^6 columns) and short rows: the hash workspace */
    int64_t ri[] = {0, 1, 2, 3}, ci[] = {0, 1, 2, 3}, bj[] = {7, 999999, 500000, 3};
    double vv[] = {1, 2, 3, 4};
    spc_tensor *A = coo(4, 4, 4, SPC_F64, ri, ci, vv, NULL), *B = coo(4, 1000000, 4, SPC_F64, ri, bj, vv, NULL);
    int w;
    ck_assert_int_eq(choice(A, B, 1, 0, &w, NULL), SPC_SPGEMM_GUSTAVSON);
    ck_assert_int_eq(w, SPC_SPGEMM_WS_HASH);
    { /* 100000 columns: the dense workspace still fits (2 MiB rule) */
      int64_t bj2[] = {7, 99999, 50000, 3};
      spc_tensor *B2 = coo(4, 100000, 4, SPC_F64, ri, bj2, vv, NULL);
      ck_assert_int_eq(choice(A, B2, 1, 0, &w, NULL), SPC_SPGEMM_GUSTAVSON);
      ck_assert_int_eq(w, SPC_SPGEMM_WS_DENSE);
      spc_tensor_free(&B2);
    }
    pm a, b;
    pm_of(A, &a), pm_of(B, &b);
    int ran = 0;
    all_algos(A, B, &a, &b, true, "wide B", &ran);
    pm_free(&a), pm_free(&b);
    /* bad option values and shapes */
    spc_kernel_opts k;
    memset(&k, 0, sizeof k);
    spc_tensor *C = NULL;
    spc_error e;
    k.algo = 7;
    ck_assert_int_eq(spc_spgemm(A, B, NULL, &k, &C, &e), SPC_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "unknown algorithm"));
    k.algo = 0, k.workspace = -2;
    ck_assert_int_eq(spc_spgemm(A, B, NULL, &k, &C, &e), SPC_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "unknown workspace"));
    ck_assert_ptr_null(C);
    ck_assert_int_eq(spc_spgemm_explain(B, A, NULL, NULL, NULL, NULL, &e), SPC_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot multiply"));
    int al;
    ck_assert_int_eq(spc_spgemm_algo_parse("outer", &al), 0);
    ck_assert_int_eq(al, SPC_SPGEMM_OUTER);
    ck_assert_int_eq(spc_spgemm_algo_parse("gus", &al), -1);
    ck_assert_int_eq(spc_spgemm_workspace_parse("hash", &al), 0);
    ck_assert_int_eq(al, SPC_SPGEMM_WS_HASH);
    ck_assert_int_eq(spc_spgemm_workspace_parse("sparse", &al), -1);
    ck_assert_str_eq(spc_spgemm_algo_name(SPC_SPGEMM_INNER), "inner");
    spc_tensor_free(&A), spc_tensor_free(&B);
  }
}
END_TEST

START_TEST(test_cli) {
  spc_tensor *T = read_mat("west0479.mtx");
  if (!T) return;
  const char *dd = tu_data_dir();
  char in[2048];
  snprintf(in, sizeof in, "%s/matrices/west0479.mtx", dd);
  char *dir = tu_mkdtemp();
  pm a;
  pm_of(T, &a);
  tu_run_result r;
  static const char *const opts[] = {"--algo=gustavson --workspace=dense", "--algo=gustavson --workspace=hash",
                                     "--algo=inner", "--algo outer", "--algo=auto", "", NULL};
  for (int k = 0; opts[k]; k++) {
    char *out = tu_path(dir, "c.mtx");
    ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s %s --threads 2 --no-jit -v", in, in, out, opts[k]) == 0,
                  "%s: exit %d: %s", opts[k], r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "spconv: spgemm ("));
    if (k < 4) { /* -v names the algorithm that ran */
      const char *nm[] = {"gustavson, workspace dense", "gustavson, workspace hash", "inner", "outer"};
      ck_assert_msg(strstr(r.err, nm[k]) != NULL, "%s: %s", opts[k], r.err);
    }
    tu_run_free(&r);
    spc_tensor *C = tu_read_ok(out, 0, SPC_VTYPE_AUTO), *Cr = NULL;
    spc_convert_opts o;
    spc_convert_opts_init(&o);
    o.no_jit = 1;
    spc_error e;
    tu_assert_ok(spc_convert_to(C, "csr", &o, &Cr, &e), &e);
    check(&a, &a, Cr, opts[k]); /* through %.17g text: exact for doubles */
    spc_tensor_free(&C), spc_tensor_free(&Cr);
    free(out);
  }
  /* C in a user's format over a user's level (--spec): converted from
   * the product, equal to it */
  {
    char *lv = tu_file(dir, "xcomp.yaml",
                       "level: xcompressed\nproperties: [ordered, unique, compact, locate]\n"
                       "arrays: {ptr: index, idx: coord}\n"
                       "read:\n  begin: ptr[p]\n  end: ptr[p + 1]\n  access: idx[q]\n  size: ptr[np]\n"
                       "write:\n  queries:\n    - select [*] -> count(c) as nnz\n  init: |\n"
                       "    ptr = alloc(index, np + 1)\n    for x in 0 .. np { ptr[x + 1] = nnz[x] }\n"
                       "    prefix_sum(ptr, 0, np + 1)\n    idx = alloc(coord, ptr[np])\n"
                       "  yield_pos: |\n    r = ptr[p]\n    ptr[p] += 1\n    return r\n"
                       "  insert_coord: idx[q] = c\n  finalize: shift(ptr, 0, np, 0)\n");
    char *fm = tu_file(dir, "xcsr.yaml", "format: xcsr\norder: 2\nlevels: [dense, xcompressed]\n");
    const char *fmt[] = {"xcsr"};
    for (int k = 0; k < 1; k++) {
      char *out = tu_path(dir, "c.bsp.h5"), opt[4200];
      snprintf(opt, sizeof opt, "--to %s --spec %s", fm, lv);
      ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s %s --no-jit", in, in, out, opt) == 0, "%s: exit %d: %s", opt,
                    r.status, r.err);
      tu_run_free(&r);
      spc_tensor *C = tu_read_ok(out, 0, SPC_VTYPE_AUTO), *Cr = NULL;
      ck_assert_str_eq(spc_tensor_format(C), fmt[k]);
      spc_convert_opts o;
      spc_convert_opts_init(&o);
      o.no_jit = 1;
      spc_error e;
      tu_assert_ok(spc_convert_to(C, "csr", &o, &Cr, &e), &e);
      check(&a, &a, Cr, opt);
      spc_tensor_free(&C), spc_tensor_free(&Cr);
      remove(out);
      free(out);
    }
    free(lv), free(fm);
  }
  /* explain */
  ck_assert_int_eq(tu_run(&r, "explain spgemm %s %s --threads 1", in, in), 0);
  const char *want[] = {"candidates:", "gustavson (i,k,j), dense workspace", "inner (i,j,k): A as csr, B as csc",
                        "outer (k,i,j): A as csc, B as csr", "A*B        {(i,k,j) : (i,k) in A, (k,j) in B}",
                        "conversions: A coo -> csr", "estimate: ", "dominance:", "choice: gustavson", NULL};
  for (int k = 0; want[k]; k++) ck_assert_msg(strstr(r.out, want[k]) != NULL, "explain lacks '%s':\n%s", want[k], r.out);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "explain spgemm %s %s --algo=outer", in, in), 0);
  ck_assert_ptr_nonnull(strstr(r.out, "choice: outer, as asked"));
  tu_run_free(&r);
  /* bad values: usage errors naming the value */
  struct {
    const char *pre, *post, *msg;
    bool two;
  } bad[] = {{"spgemm", "-o x.mtx --algo=fast", "unknown algorithm 'fast'", true},
             {"spgemm", "-o x.mtx --workspace=sparse", "unknown workspace 'sparse'", true},
             {"explain spmv", "", "expected 'spgemm A B'", true},
             {"explain spgemm", "", "expected spgemm A B", false},
             {NULL, NULL, NULL, false}};
  for (int k = 0; bad[k].pre; k++) {
    int st = tu_run(&r, "%s %s %s %s", bad[k].pre, in, bad[k].two ? in : "", bad[k].post);
    ck_assert_msg(st == 1 && strstr(r.err, bad[k].msg), "%s: exit %d, %s", bad[k].msg, st, r.err);
    tu_run_free(&r);
  }
  /* explain on mismatched shapes: the library's message */
  char rect[2048];
  snprintf(rect, sizeof rect, "%s/matrices/lp_afiro.mtx", dd);
  int st = tu_run(&r, "explain spgemm %s %s", rect, rect);
  ck_assert_msg(st != 0 && strstr(r.err, "cannot multiply"), "exit %d: %s", st, r.err);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "help explain"), 0);
  ck_assert_ptr_nonnull(strstr(r.out, "explain spgemm A B"));
  tu_run_free(&r);
  pm_free(&a);
  spc_tensor_free(&T);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* every allocation of a product failing in turn: SPC_ERR_NOMEM and
 * nothing leaked (ASan), until the product goes through and equals the
 * one made without failures; gustavson (dense, hash) and auto (which
 * picks it here), 1 and 2 threads, CSR operands (no operand conversion:
 * the conversion engine's own handling of failing allocations is not
 * this suite's) */
START_TEST(test_nomem) {
  spc_tensor *T = read_mat("west0479.mtx");
  if (!T) {
    printf("spgemm: skipped test_nomem (no west0479.mtx)\n");
    return;
  }
  spc_tensor *A = NULL;
  spc_error e;
  tu_assert_ok(spc_convert_to(T, "csr", NULL, &A, &e), &e);
  const spc_tensor *ops[1] = {A};
  int runs = 0;
  for (int o = 0; o < 1; o++)
    for (int c = 0; c < NCFG; c++) {
      /* inner and outer convert an operand: their allocations fail too */
      for (int t = 1; t <= 2; t++) {
        spc_tensor *ref = run(ops[o], ops[o], &cfgs[c], t, "nomem reference");
        spc_kernel_opts k;
        memset(&k, 0, sizeof k);
        k.threads = t, k.no_jit = 1, k.algo = cfgs[c].algo, k.workspace = cfgs[c].ws;
        for (int64_t at = 1;; at++) {
          spc_tensor *C = NULL;
          spc_alloc_fail_at(at);
          spc_status st = spc_spgemm(ops[o], ops[o], NULL, &k, &C, &e);
          spc_alloc_fail_at(0);
          if (st == SPC_OK) {
            char w[128];
            snprintf(w, sizeof w, "%s, %d threads, allocation %lld failing", cfgs[c].name, t, (long long)at);
            same(C, ref, w);
            spc_tensor_free(&C);
            break;
          }
          ck_assert_msg(st == SPC_ERR_NOMEM && !C, "%s, %d threads, allocation %lld failing: %s: %s", cfgs[c].name,
                        t, (long long)at, spc_status_name(st), e.msg);
          ck_assert_int_lt(at, 100000);
          runs++;
        }
        spc_tensor_free(&ref);
      }
    }
  printf("spgemm: %d products with an allocation failing: SPC_ERR_NOMEM each\n", runs);
  spc_tensor_free(&A);
  spc_tensor_free(&T);
}
END_TEST

/* C, an unsorted product of a b (Gustavson), against S, the sorted one:
 * the same row pointers; each row S's entries, bit for bit, in the order
 * a plain walk meets its columns first.  Returns the rows whose order is
 * not ascending. */
static int64_t check_unsorted(const pm *a, const pm *b, const spc_tensor *C, const spc_tensor *S,
                              const char *what) {
  const void *cp, *cc, *sp, *sc;
  spc_itype tcp, tcc, tsp, tsc;
  int64_t lcp, lcc, lsp, lsc, nc, ns;
  spc_error e;
  tu_assert_ok(spc_tensor_level_array(C, 1, "pos", &cp, &tcp, &lcp), &e);
  tu_assert_ok(spc_tensor_level_array(C, 1, "crd", &cc, &tcc, &lcc), &e);
  tu_assert_ok(spc_tensor_level_array(S, 1, "pos", &sp, &tsp, &lsp), &e);
  tu_assert_ok(spc_tensor_level_array(S, 1, "crd", &sc, &tsc, &lsc), &e);
  ck_assert_msg(tcp == tsp && lcp == lsp && !memcmp(cp, sp, (size_t)lcp * (tcp == SPC_IDX32 ? 4 : 8)),
                "%s: row pointers differ", what);
  ck_assert_int_eq(tcc, tsc);
  ck_assert_int_eq(lcc, lsc);
  const char *cv = spc_tensor_values(C, &nc), *sv = spc_tensor_values(S, &ns);
  ck_assert_int_eq(nc, ns);
  size_t w = spc_vtype_size(spc_tensor_vtype(C));
  int64_t *first = malloc((size_t)(b->n ? b->n : 1) * sizeof *first), *order = NULL, shuffled = 0;
  for (int64_t j = 0; j < b->n; j++) first[j] = -1;
#define AT(t, arr, q) ((t) == SPC_IDX32 ? (int64_t)((const int32_t *)(arr))[q] : ((const int64_t *)(arr))[q])
  for (int64_t i = 0; i < a->m; i++) {
    int64_t p0 = AT(tcp, cp, i), p1 = AT(tcp, cp, i + 1), c = 0;
    order = realloc(order, (size_t)(p1 - p0 + 1) * sizeof *order);
    for (int64_t p = a->rp[i]; p < a->rp[i + 1]; p++)
      for (int64_t q = b->rp[a->cj[p]]; q < b->rp[a->cj[p] + 1]; q++)
        if (first[b->cj[q]] != i) first[b->cj[q]] = i, order[c++] = b->cj[q];
    ck_assert_msg(c == p1 - p0, "%s: row %lld has %lld entries, the walk meets %lld columns", what,
                  (long long)i, (long long)(p1 - p0), (long long)c);
    bool asc = true;
    for (int64_t t = p0; t < p1; t++) {
      int64_t j = AT(tcc, cc, t);
      ck_assert_msg(j == order[t - p0], "%s: row %lld entry %lld: column %lld, first met %lld", what,
                    (long long)i, (long long)(t - p0), (long long)j, (long long)order[t - p0]);
      asc = asc && (t == p0 || j > AT(tcc, cc, t - 1));
      /* the sorted row holds j once: its value bit for bit */
      int64_t lo = p0, hi = p1;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (AT(tsc, sc, mid) < j) lo = mid + 1;
        else hi = mid;
      }
      ck_assert_msg(lo < p1 && AT(tsc, sc, lo) == j && !memcmp(cv + (size_t)t * w, sv + (size_t)lo * w, w),
                    "%s: row %lld column %lld: value differs from the sorted product's", what, (long long)i,
                    (long long)j);
    }
    shuffled += !asc;
  }
#undef AT
  free(first), free(order);
  return shuffled;
}

START_TEST(test_unsorted) {
  const char *dd = tu_data_dir();
  if (!dd) return;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/matrices", dd);
  int nf = 0, products = 0, bitmap = 0;
  int64_t shuffled = 0;
  char **files = tu_list_files(dir, ".mtx", &nf);
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.no_jit = 1;
  for (int f = 0; f < nf; f++) {
    spc_tensor *T = read_mat(files[f]);
    if (!T || spc_tensor_order(T) != 2 || spc_tensor_dim(T, 0) >= 5000 || spc_tensor_dim(T, 1) >= 5000) {
      spc_tensor_free(&T);
      continue;
    }
    spc_error e;
    pm a, b;
    pm_of(T, &a);
    /* A A, or A A^T */
    spc_tensor *Bt = spc_tensor_dim(T, 0) != spc_tensor_dim(T, 1) ? transpose(&a) : NULL, *B = Bt ? Bt : T;
    pm_of(B, &b);
    if (flops(&a, &b) > 20000000) {
      pm_free(&a), pm_free(&b), spc_tensor_free(&Bt), spc_tensor_free(&T);
      continue;
    }
    for (int ws = SPC_SPGEMM_WS_DENSE; ws <= SPC_SPGEMM_WS_BITMAP; ws++)
      for (int t = 1; t <= 2; t++) {
        char what[300];
        snprintf(what, sizeof what, "%s, %s, %d threads, unsorted", files[f],
                 spc_spgemm_workspace_name(ws), t);
        spc_kernel_opts k;
        memset(&k, 0, sizeof k);
        k.threads = t, k.no_jit = 1, k.algo = SPC_SPGEMM_GUSTAVSON, k.workspace = ws;
        spc_tensor *S = NULL, *C = NULL, *X = NULL, *Y = NULL;
        tu_assert_ok(spc_spgemm(T, B, NULL, &k, &S, &e), &e);
        k.unsorted = 1;
        spc_kernel_info info;
        k.info = &info;
        tu_assert_ok(spc_spgemm(T, B, NULL, &k, &C, &e), &e);
        ck_assert_int_eq(info.threads, t);
        ck_assert_msg(S->lv[1].props & SPC_LP_ORDERED, "%s: the sorted product's ORDERED", what);
        tu_assert_ok(spc_tensor_check(C, &e), &e);
        /* the bitmap plan (forced only: dense leaves it to sorted
         * products): ascending at no cost */
        ck_assert_msg(ws == SPC_SPGEMM_WS_BITMAP || !(C->lv[1].props & SPC_LP_ORDERED), "%s: ordered", what);
        if (C->lv[1].props & SPC_LP_ORDERED) {
          ck_assert_msg(strstr(info.note, "bitmap plan"), "%s: note '%s'", what, info.note);
          same(S, C, what);
          bitmap++;
        } else {
          ck_assert_msg(strstr(info.note, "order found"), "%s: note '%s'", what, info.note);
          shuffled += check_unsorted(&a, &b, C, S, what);
        }
        /* a conversion sorts it: csc and back is the sorted product */
        tu_assert_ok(spc_convert_to(C, "csc", &o, &X, &e), &e);
        tu_assert_ok(spc_convert_to(X, "csr", &o, &Y, &e), &e);
        same(S, Y, what);
        /* another output format: sorted as before */
        spc_tensor_free(&X);
        tu_assert_ok(spc_spgemm(T, B, "csc", &k, &X, &e), &e);
        ck_assert(X->lv[1].props & SPC_LP_ORDERED);
        spc_tensor_free(&S), spc_tensor_free(&C), spc_tensor_free(&X), spc_tensor_free(&Y);
        products++;
      }
    pm_free(&a), pm_free(&b), spc_tensor_free(&Bt), spc_tensor_free(&T);
  }
  tu_free_list(files);
  printf("spgemm: %d unsorted products (%d ascending by the bitmap plan), %lld rows not ascending\n", products,
         bitmap, (long long)shuffled);
  ck_assert_int_ge(products, 100);
  ck_assert_int_gt(shuffled, 1000); /* the option does leave rows unsorted */
  ck_assert_int_gt(bitmap, 10);     /* and the bitmap plan ran */
  /* the command line: --unsorted gives the same entries */
  char in[2048];
  snprintf(in, sizeof in, "%s/matrices/west0479.mtx", dd);
  char *tmp = tu_mkdtemp(), *out = tu_path(tmp, "c.mtx");
  tu_run_result r;
  ck_assert_msg(tu_run(&r, "spgemm %s %s -o %s --unsorted --no-jit -v", in, in, out) == 0, "exit %d: %s", r.status,
                r.err);
  ck_assert_msg(strstr(r.err, "rows left in the order found"), "-v: %s", r.err);
  tu_run_free(&r);
  spc_tensor *T = read_mat("west0479.mtx"), *C = tu_read_ok(out, 0, SPC_VTYPE_AUTO), *Cr = NULL;
  pm a;
  pm_of(T, &a);
  spc_error e;
  tu_assert_ok(spc_convert_to(C, "csr", &o, &Cr, &e), &e);
  check(&a, &a, Cr, "spconv spgemm --unsorted");
  pm_free(&a);
  spc_tensor_free(&T), spc_tensor_free(&C), spc_tensor_free(&Cr);
  ck_assert_int_ne(tu_run(&r, "spgemm %s %s -o %s --unsorted=yes", in, in, out), 0);
  tu_run_free(&r);
  free(out);
  tu_rmtree(tmp);
  free(tmp);
}
END_TEST

/* One thread past the one-pass scratch (the bounds' sum over 4 MiB of
 * columns and values): the rows go straight into a result made at the
 * bounds' size and cut to the rows' total -- its tail kept where small
 * (3000 x 3000, 12 a row: 432 k bound, 418 k entries), given back where
 * over 64 MiB (6000 x 6000, 100 a row: 36 M bound, about 29 M entries)
 * -- equal bit for bit to two threads' two passes (symbolic, then
 * numeric), sorted and unsorted, dense and bitmap workspaces, and to the
 * reference. */
START_TEST(test_bounded) {
  static const int64_t sz[][2] = {{3000, 12}, {6000, 100}};
  for (int c = 0; c < 2; c++) {
    int64_t m = sz[c][0], k = sz[c][1], nnz = m * k;
    int64_t *ri = malloc((size_t)nnz * sizeof *ri), *ci = malloc((size_t)nnz * sizeof *ci);
    double *re = malloc((size_t)nnz * sizeof *re);
    uint64_t x = 0x9e3779b97f4a7c15ULL + (uint64_t)c;
    for (int64_t q = 0; q < nnz; q++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      ri[q] = q / k, ci[q] = (int64_t)((x >> 20) % (uint64_t)m), re[q] = (double)(x >> 40) / 1048576.0 - 4;
    }
    spc_tensor *A = coo(m, m, nnz, SPC_F64, ri, ci, re, NULL);
    free(ri), free(ci), free(re);
    pm a;
    pm_of(A, &a);
    static const struct {
      int ws, unsorted;
    } runs[] = {{SPC_SPGEMM_WS_DENSE, 0}, {SPC_SPGEMM_WS_DENSE, 1}, {SPC_SPGEMM_WS_BITMAP, 0}};
    for (int r = 0; r < 3; r++) {
      spc_tensor *C[2] = {NULL, NULL};
      char what[200];
      snprintf(what, sizeof what, "%lld x %lld, %lld a row, workspace %d%s", (long long)m, (long long)m,
               (long long)k, runs[r].ws, runs[r].unsorted ? ", unsorted" : "");
      for (int t = 0; t < 2; t++) {
        spc_kernel_opts ko;
        memset(&ko, 0, sizeof ko);
        ko.threads = t + 1, ko.no_jit = 1, ko.algo = SPC_SPGEMM_GUSTAVSON, ko.workspace = runs[r].ws;
        ko.unsorted = runs[r].unsorted;
        spc_error e;
        spc_error_clear(&e);
        tu_assert_ok(spc_spgemm(A, A, NULL, &ko, &C[t], &e), &e);
        tu_assert_ok(spc_tensor_check(C[t], &e), &e);
      }
      same(C[0], C[1], what);
      if (!runs[r].unsorted) check(&a, &a, C[0], what);
      spc_tensor_free(&C[0]), spc_tensor_free(&C[1]);
    }
    pm_free(&a);
    spc_tensor_free(&A);
  }
}
END_TEST

Suite *suite_spgemm(void) {
  Suite *s = suite_create("spgemm");
  TCase *tc = tcase_create("products");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_square);
  tcase_add_test(tc, test_rect);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_outer_heavy);
  tcase_add_test(tc, test_empty_into_formats);
  tcase_add_test(tc, test_nomem);
  tcase_add_test(tc, test_unsorted);
  tcase_add_test(tc, test_bounded);
  suite_add_tcase(s, tc);
  tc = tcase_create("model");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_auto);
  tcase_add_test(tc, test_cli);
  suite_add_tcase(s, tc);
  return s;
}
