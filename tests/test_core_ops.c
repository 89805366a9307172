/* test_core_ops.c -- suite_core: symmetric, skew and hermitian expansion
 * (exact values, signed zeros included) and duplicate combination under
 * every spc_dup policy for every value type. */
#include "spc_impl.h" /* setting t->sym: no public setter */
#include "test_core.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expansion ---------------------------------------------------------- */

/* Expand t, combine, and compare with the n expected (i, j, value) in
 * order; values compared bit for bit as vt. */
static void expect_expanded(spc_tensor *t, int n, const int64_t (*ij)[2],
                            const void *want) {
  spc_tensor *x = NULL, *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &x, &e), &e);
  ck_assert_int_eq(spc_tensor_symmetry(x), SPC_GENERAL);
  ck_assert_int_eq(spc_tensor_nstored(x), n);
  tu_assert_ok(spc_tensor_check(x, &e), &e);
  tu_assert_ok(spc_tensor_combine(x, SPC_DUP_ERROR, &c, &e), &e);
  spc_vtype vt = spc_tensor_vtype(c);
  size_t w = spc_vtype_size(vt);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  for (int k = 0; k < n; k++) {
    int64_t y[2];
    const void *pv;
    ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
    ck_assert_int_eq(y[0], ij[k][0]);
    ck_assert_int_eq(y[1], ij[k][1]);
    if (w)
      ck_assert_msg(!memcmp(pv, (const char *)want + k * w, w),
                    "entry %d (%lld,%lld): value bits differ", k,
                    (long long)y[0], (long long)y[1]);
  }
  spc_iter_free(&it);
  spc_tensor_free(&c);
  spc_tensor_free(&x);
}

START_TEST(test_expand_symmetric) {
  int64_t dims[2] = {3, 3};
  int64_t x[] = {0, 0, 1, 0, 2, 1, 2, 2};
  double v[] = {1, 2, 3, 4};
  spc_tensor *t = core_make_coo(2, dims, 4, SPC_F64, x, v);
  t->sym = SPC_SYMMETRIC;
  const int64_t ij[6][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 2}};
  const double want[6] = {1, 2, 2, 3, 3, 4};
  expect_expanded(t, 6, ij, want);
  spc_tensor_free(&t);
  /* pattern symmetric */
  t = core_make_coo(2, dims, 4, SPC_PATTERN, x, NULL);
  t->sym = SPC_SYMMETRIC;
  expect_expanded(t, 6, ij, NULL);
  spc_tensor_free(&t);
  /* integer symmetric */
  int64_t iv[] = {-1, INT64_MAX, INT64_MIN, 0};
  t = core_make_coo(2, dims, 4, SPC_I64, x, iv);
  t->sym = SPC_SYMMETRIC;
  const int64_t iwant[6] = {-1, INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN, 0};
  expect_expanded(t, 6, ij, iwant);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_expand_skew) {
  int64_t dims[2] = {3, 3};
  int64_t x[] = {1, 0, 2, 0, 2, 1};
  double v[] = {2.5, -5, 0.0};
  spc_tensor *t = core_make_coo(2, dims, 3, SPC_F64, x, v);
  t->sym = SPC_SKEW;
  const int64_t ij[6][2] = {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};
  const double want[6] = {-2.5, 5, 2.5, -0.0, -5, 0.0}; /* -0.0: bit exact */
  expect_expanded(t, 6, ij, want);
  spc_tensor_free(&t);
  float fv[] = {1.5f, -INFINITY, 3.0f};
  t = core_make_coo(2, dims, 3, SPC_F32, x, fv);
  t->sym = SPC_SKEW;
  const float fwant[6] = {-1.5f, INFINITY, 1.5f, -3.0f, -INFINITY, 3.0f};
  expect_expanded(t, 6, ij, fwant);
  spc_tensor_free(&t);
  int64_t iv[] = {7, -9, INT64_MAX};
  t = core_make_coo(2, dims, 3, SPC_I64, x, iv);
  t->sym = SPC_SKEW;
  const int64_t iwant[6] = {-7, 9, 7, -INT64_MAX, -9, INT64_MAX};
  expect_expanded(t, 6, ij, iwant);
  spc_tensor_free(&t);
  double cv[] = {1, 2, -3, 4, 0, -1};
  t = core_make_coo(2, dims, 3, SPC_C128, x, cv);
  t->sym = SPC_SKEW;
  const double cwant[12] = {-1, -2, 3, -4, 1, 2, -0.0, 1, -3, 4, 0, -1};
  expect_expanded(t, 6, ij, cwant);
  spc_tensor_free(&t);
  /* skew pattern / uint64 cannot be negated */
  spc_tensor *o = (spc_tensor *)&dims;
  spc_error e;
  t = core_make_coo(2, dims, 3, SPC_PATTERN, x, NULL);
  t->sym = SPC_SKEW;
  ck_assert_int_eq(spc_tensor_expand(t, &o, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_ptr_null(o);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_expand_hermitian) {
  int64_t dims[2] = {3, 3};
  int64_t x[] = {0, 0, 2, 0, 1, 1, 2, 1};
  double v[] = {1, 0, 2, -1, 5, 0, 3, 0.5};
  spc_tensor *t = core_make_coo(2, dims, 4, SPC_C128, x, v);
  t->sym = SPC_HERMITIAN;
  const int64_t ij[6][2] = {{0, 0}, {0, 2}, {1, 1}, {1, 2}, {2, 0}, {2, 1}};
  const double want[12] = {1, 0, 2, 1, 5, 0, 3, -0.5, 2, -1, 3, 0.5};
  expect_expanded(t, 6, ij, want);
  spc_tensor_free(&t);
  /* general: a copy; order 3 with symmetry: refused */
  t = core_make_coo(2, dims, 4, SPC_C128, x, v);
  spc_tensor *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &c, &e), &e);
  tu_assert_same_tensor(t, c, 0, "general expand");
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  int64_t d3[3] = {2, 2, 2}, x3[3] = {1, 0, 0};
  double v3 = 1;
  t = core_make_coo(3, d3, 1, SPC_F64, x3, &v3);
  t->sym = SPC_SYMMETRIC;
  c = (spc_tensor *)&v3;
  ck_assert_int_eq(spc_tensor_expand(t, &c, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(c);
  spc_tensor_free(&t);
}
END_TEST

/* ---- combine ------------------------------------------------------------ */

/* (1,1)=3, (0,0)=1, (1,1)=-2, (1,1)=5, (0,1)=7 */
static const int64_t dup_x[] = {1, 1, 0, 0, 1, 1, 1, 1, 0, 1};

static void combine_expect(spc_tensor *t, spc_dup pol, const void *want3) {
  spc_tensor *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_combine(t, pol, &c, &e), &e);
  tu_assert_ok(spc_tensor_check(c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 3);
  ck_assert_str_eq(spc_tensor_format(c), "coo");
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  const int64_t ij[3][2] = {{0, 0}, {0, 1}, {1, 1}};
  size_t w = spc_vtype_size(spc_tensor_vtype(t));
  for (int k = 0; k < 3; k++) {
    int64_t y[2];
    const void *pv;
    ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
    ck_assert_int_eq(y[0], ij[k][0]);
    ck_assert_int_eq(y[1], ij[k][1]);
    if (w)
      ck_assert_msg(!memcmp(pv, (const char *)want3 + k * w, w),
                    "%s %s: entry %d differs", spc_vtype_name(spc_tensor_vtype(t)),
                    spc_dup_name(pol), k);
  }
  spc_iter_free(&it);
  spc_tensor_free(&c);
}

START_TEST(test_combine_policies) {
  int64_t dims[2] = {2, 2};
  double v[] = {3, 1, -2, 5, 7};
  spc_tensor *t = core_make_coo(2, dims, 5, SPC_F64, dup_x, v);
  const double sum[] = {1, 7, 6}, first[] = {1, 7, 3}, last[] = {1, 7, 5},
               mn[] = {1, 7, -2}, mx[] = {1, 7, 5};
  combine_expect(t, SPC_DUP_SUM, sum);
  combine_expect(t, SPC_DUP_FIRST, first);
  combine_expect(t, SPC_DUP_LAST, last);
  combine_expect(t, SPC_DUP_MIN, mn);
  combine_expect(t, SPC_DUP_MAX, mx);
  spc_tensor_free(&t);

  int64_t iv[] = {INT64_MAX, 1, INT64_MIN + 1, -3, 7};
  t = core_make_coo(2, dims, 5, SPC_I64, dup_x, iv);
  const int64_t isum[] = {1, 7, -3}, ifirst[] = {1, 7, INT64_MAX},
                ilast[] = {1, 7, -3}, imin[] = {1, 7, INT64_MIN + 1},
                imax[] = {1, 7, INT64_MAX};
  combine_expect(t, SPC_DUP_SUM, isum);
  combine_expect(t, SPC_DUP_FIRST, ifirst);
  combine_expect(t, SPC_DUP_LAST, ilast);
  combine_expect(t, SPC_DUP_MIN, imin);
  combine_expect(t, SPC_DUP_MAX, imax);
  spc_tensor_free(&t);

  uint64_t uv[] = {UINT64_MAX, 1, 2, UINT64_MAX - 5, 7};
  t = core_make_coo(2, dims, 5, SPC_U64, dup_x, uv);
  const uint64_t umin[] = {1, 7, 2}, umax[] = {1, 7, UINT64_MAX},
                 ulast[] = {1, 7, UINT64_MAX - 5};
  combine_expect(t, SPC_DUP_MIN, umin);
  combine_expect(t, SPC_DUP_MAX, umax);
  combine_expect(t, SPC_DUP_LAST, ulast);
  spc_tensor_free(&t);

  float fv[] = {0.1f, 1, 0.2f, -0.5f, 7};
  t = core_make_coo(2, dims, 5, SPC_F32, dup_x, fv);
  const float fsum[] = {1, 7, (0.1f + 0.2f) + -0.5f}, fmin[] = {1, 7, -0.5f};
  combine_expect(t, SPC_DUP_SUM, fsum);
  combine_expect(t, SPC_DUP_MIN, fmin);
  spc_tensor_free(&t);

  /* complex: sum by parts; min / max lexicographic (real, then imag) */
  double cv[] = {1, 5, 1, 0, 1, -2, 0.5, 9, 7, 7};
  t = core_make_coo(2, dims, 5, SPC_C128, dup_x, cv);
  const double csum[] = {1, 0, 7, 7, 2.5, 12}, cmin[] = {1, 0, 7, 7, 0.5, 9},
               cmax[] = {1, 0, 7, 7, 1, 5}, cfirst[] = {1, 0, 7, 7, 1, 5},
               clast[] = {1, 0, 7, 7, 0.5, 9};
  combine_expect(t, SPC_DUP_SUM, csum);
  combine_expect(t, SPC_DUP_MIN, cmin);
  combine_expect(t, SPC_DUP_MAX, cmax);
  combine_expect(t, SPC_DUP_FIRST, cfirst);
  combine_expect(t, SPC_DUP_LAST, clast);
  spc_tensor_free(&t);

  t = core_make_coo(2, dims, 5, SPC_PATTERN, dup_x, NULL);
  combine_expect(t, SPC_DUP_SUM, NULL);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_combine_error_and_order) {
  int64_t dims[2] = {2, 2};
  double v[] = {3, 1, -2, 5, 7};
  spc_tensor *t = core_make_coo(2, dims, 5, SPC_F64, dup_x, v);
  spc_tensor *c = (spc_tensor *)&dims;
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(spc_tensor_combine(t, SPC_DUP_ERROR, &c, &e), SPC_ERR_INPUT);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(e.code, SPC_ERR_INPUT);
  ck_assert_msg(strstr(e.msg, "(2, 2)"), "message does not name (2, 2): %s", e.msg);
  /* a reused record keeps nothing of an earlier error */
  snprintf(e.key, sizeof e.key, "stale key");
  e.col = 99;
  ck_assert_int_eq(spc_tensor_combine(t, SPC_DUP_ERROR, &c, &e), SPC_ERR_INPUT);
  ck_assert_msg(e.key[0] == 0, "e.key kept '%s' from an earlier error", e.key);
  ck_assert_int_eq(e.col, 0);
  spc_tensor_free(&t);
  /* no duplicates: SPC_DUP_ERROR sorts; order 3 sorts lexicographically */
  int64_t d3[3] = {3, 3, 3};
  int64_t x3[] = {2, 0, 1, 0, 2, 2, 2, 0, 0, 0, 2, 1, 1, 1, 1};
  int64_t iv[] = {1, 2, 3, 4, 5};
  t = core_make_coo(3, d3, 5, SPC_I64, x3, iv);
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_ERROR, &c, &e), &e);
  const int64_t order[5] = {3, 1, 4, 2, 0}; /* input index of sorted k */
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  for (int k = 0; k < 5; k++) {
    int64_t y[3];
    const void *pv;
    ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
    for (int d = 0; d < 3; d++) ck_assert_int_eq(y[d], x3[3 * order[k] + d]);
    ck_assert_int_eq(*(const int64_t *)pv, iv[order[k]]);
  }
  spc_iter_free(&it);
  tu_assert_ok(spc_tensor_check(c, &e), &e);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  /* symmetry is kept by combine */
  int64_t xs[] = {1, 0, 1, 0};
  double vs[] = {1, 2};
  t = core_make_coo(2, dims, 2, SPC_F64, xs, vs);
  t->sym = SPC_SYMMETRIC;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_symmetry(c), SPC_SYMMETRIC);
  ck_assert_int_eq(spc_tensor_nstored(c), 1);
  ck_assert_double_eq(((const double *)spc_tensor_values(c, NULL))[0], 3.0);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
}
END_TEST

/* Many shuffled components with repeats, sorted and combined: the packed
 * keys' radix sort (coordinates within 64 bits together) and the merge
 * sort (wider) against a reference here -- insertion of each component
 * into a list kept sorted by (coordinates, input position), so stability
 * is what first / last see.  Values are the input positions (int64):
 * first, last and sum checked exactly. */
static int ref_cmp_order;
static int ref_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int l = 0; l <= ref_cmp_order; l++) /* coordinates, then position */
    if (x[l] != y[l]) return x[l] < y[l] ? -1 : 1;
  return 0;
}

static void combine_vs_ref(int order, const int64_t *dims, int64_t n, uint64_t seed) {
  int64_t *x = malloc((size_t)(n * order) * sizeof *x), *v = malloc((size_t)n * sizeof *v);
  int64_t *r = malloc((size_t)(n * (order + 1)) * sizeof *r);
  for (int64_t k = 0; k < n; k++) {
    for (int l = 0; l < order; l++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      /* few distinct values in each mode: many repeats */
      int64_t c = (int64_t)((seed >> 33) % 7) * (dims[l] / 7) + (dims[l] > 7 ? (int64_t)(seed >> 60) % 2 : 0);
      x[k * order + l] = r[k * (order + 1) + l] = c % dims[l];
    }
    v[k] = r[k * (order + 1) + order] = k;
  }
  ref_cmp_order = order;
  qsort(r, (size_t)n, (size_t)(order + 1) * sizeof *r, ref_cmp);
  spc_tensor *t = core_make_coo(order, dims, n, SPC_I64, x, v);
  for (int pol = 0; pol < 3; pol++) {
    spc_dup d = pol == 0 ? SPC_DUP_SUM : pol == 1 ? SPC_DUP_FIRST : SPC_DUP_LAST;
    spc_tensor *c = NULL;
    spc_error e;
    tu_assert_ok(spc_tensor_combine(t, d, &c, &e), &e);
    tu_assert_ok(spc_tensor_check(c, &e), &e);
    spc_iter *it = NULL;
    tu_assert_ok(spc_iter_create(c, &it, &e), &e);
    int64_t k = 0, m = 0;
    while (k < n) {
      int64_t k1 = k + 1, sum = r[k * (order + 1) + order];
      while (k1 < n && !memcmp(&r[k1 * (order + 1)], &r[k * (order + 1)], (size_t)order * sizeof *r))
        sum += r[k1++ * (order + 1) + order];
      int64_t want = d == SPC_DUP_SUM ? sum
                     : d == SPC_DUP_FIRST ? r[k * (order + 1) + order]
                                          : r[(k1 - 1) * (order + 1) + order];
      int64_t y[SPC_MAX_ORDER];
      const void *pv;
      ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
      for (int l = 0; l < order; l++) ck_assert_int_eq(y[l], r[k * (order + 1) + l]);
      ck_assert_msg(*(const int64_t *)pv == want, "order %d, %s, tuple %lld: %lld, want %lld",
                    order, spc_dup_name(d), (long long)m, (long long)*(const int64_t *)pv,
                    (long long)want);
      k = k1;
      m++;
    }
    ck_assert_int_eq(spc_tensor_nstored(c), m);
    ck_assert_int_eq(spc_iter_next(it, (int64_t[SPC_MAX_ORDER]){0}, &(const void *){0}), 0);
    spc_iter_free(&it);
    spc_tensor_free(&c);
  }
  spc_tensor_free(&t);
  free(x);
  free(v);
  free(r);
}

START_TEST(test_combine_many) {
  combine_vs_ref(2, (int64_t[]){1000, 3000}, 20000, 1);
  combine_vs_ref(2, (int64_t[]){1, 5000000000LL}, 20000, 2);       /* a mode of one */
  combine_vs_ref(3, (int64_t[]){1 << 20, 1 << 21, 1 << 22}, 20000, 3); /* 63 bits */
  combine_vs_ref(3, (int64_t[]){1LL << 30, 1LL << 30, 1LL << 30}, 20000, 4); /* 90: merge */
  combine_vs_ref(4, (int64_t[]){9, 10, 11, 12}, 5000, 5);
  /* 2^18 components or more: spc_radix_keys's pass by the top digit, then
   * its buckets in cache (on the threads there are) */
  combine_vs_ref(2, (int64_t[]){5000, 3000}, 300000, 6);
  combine_vs_ref(3, (int64_t[]){1 << 20, 1 << 21, 1 << 22}, 300000, 7);
}
END_TEST

/* Duplicates of one position in a symmetric COO: the expansion lists the
 * stored entries in their order, then the mirrors in the same order (as
 * SciPy's mmread does), so (i,j) and (j,i) get the same sum whoever adds
 * them. */
/* The expansion's layout: the stored components in their order, then the
 * mirrors of the off-diagonal ones in the same order (SciPy mmread's), with
 * coordinates past 2^31 (64-bit arrays) and hermitian values. */
START_TEST(test_expand_plain_order) {
  int64_t dims[2] = {3000000000LL, 3000000000LL};
  const int64_t b = 2147483653LL, c = 4294967296LL;
  int64_t x[] = {b, 7, 9, 9, c, b};
  double v[] = {1, 2, 3, 0, 4, -5};
  spc_tensor *t = core_make_coo(2, dims, 3, SPC_C128, x, v);
  t->sym = SPC_HERMITIAN;
  spc_tensor *o = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &o, &e), &e);
  const int64_t want[5][2] = {{b, 7}, {9, 9}, {c, b}, {7, b}, {b, c}};
  const double wv[5][2] = {{1, 2}, {3, 0}, {4, -5}, {1, -2}, {4, 5}};
  ck_assert_int_eq(spc_tensor_nstored(o), 5);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(o, &it, &e), &e);
  for (int k = 0; k < 5; k++) {
    int64_t y[2];
    const void *pv;
    ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
    ck_assert_msg(y[0] == want[k][0] && y[1] == want[k][1], "component %d: (%lld, %lld)", k,
                  (long long)y[0], (long long)y[1]);
    ck_assert(!memcmp(pv, wv[k], 16));
  }
  ck_assert_int_eq(spc_iter_next(it, (int64_t[2]){0, 0}, &(const void *){NULL}), 0);
  spc_iter_free(&it);
  spc_tensor_free(&o);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_expand_order) {
  int64_t dims[2] = {3, 3};
  int64_t x[] = {1, 0, 2, 2, 1, 0, 2, 1};
  double v[] = {0.1, 5, 0.2, 7};
  spc_tensor *t = core_make_coo(2, dims, 4, SPC_F64, x, v), *c = NULL;
  t->sym = SPC_SYMMETRIC;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 7);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  core_expect_next_f64(it, 1, 0, 0.1);
  core_expect_next_f64(it, 2, 2, 5);
  core_expect_next_f64(it, 1, 0, 0.2);
  core_expect_next_f64(it, 2, 1, 7);
  core_expect_next_f64(it, 0, 1, 0.1);
  core_expect_next_f64(it, 0, 1, 0.2);
  core_expect_next_f64(it, 1, 2, 7);
  int64_t y[2];
  ck_assert_int_eq(spc_iter_next(it, y, NULL), 0);
  spc_iter_free(&it);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
}
END_TEST

void core_add_ops_tcases(Suite *s) {
  TCase *tc = tcase_create("expand");
  tcase_add_test(tc, test_expand_symmetric);
  tcase_add_test(tc, test_expand_skew);
  tcase_add_test(tc, test_expand_hermitian);
  tcase_add_test(tc, test_expand_order);
  tcase_add_test(tc, test_expand_plain_order);
  suite_add_tcase(s, tc);
  tc = tcase_create("combine");
  tcase_add_test(tc, test_combine_policies);
  tcase_add_test(tc, test_combine_error_and_order);
  tcase_add_test(tc, test_combine_many);
  suite_add_tcase(s, tc);
}
