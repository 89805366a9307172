/* test_core.c -- suite_core: tensor objects and their accessors, COO index
 * widths (64-bit only where dimensions demand it), the structural checker
 * against each kind of corruption, iteration over COO and dense, names and
 * error records.  Expansion and combination are in test_core_ops.c, the
 * allocation-failure walk in test_core_alloc.c. */
#include "spc_impl.h"
#include "suites.h"
#include "test_core.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* Store coordinate v at component k of level l's crd (any width). */
void core_set_crd(spc_tensor *t, int l, int64_t k, int64_t v) {
  spc_itype ty;
  ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), SPC_OK);
  void *p = spc_tensor_level_array_mut(t, l, "crd");
  ck_assert_ptr_nonnull(p);
  if (ty == SPC_IDX32) ((int32_t *)p)[k] = (int32_t)v;
  else ((int64_t *)p)[k] = v;
}

/* A COO tensor of n components: x holds n*order coordinates (0-based),
 * vals n values of type vt (NULL for pattern). */
spc_tensor *core_make_coo(int order, const int64_t *dims, int64_t n,
                          spc_vtype vt, const int64_t *x, const void *vals) {
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(order, dims, n, vt, &t, &e), &e);
  for (int64_t k = 0; k < n; k++)
    for (int l = 0; l < order; l++) core_set_crd(t, l, k, x[k * order + l]);
  if (vt != SPC_PATTERN && n)
    memcpy(spc_tensor_values_mut(t), vals, (size_t)n * spc_vtype_size(vt));
  return t;
}

static spc_itype width_of(const spc_tensor *t, int l, const char *name) {
  spc_itype ty = 0;
  ck_assert_int_eq(spc_tensor_level_array(t, l, name, NULL, &ty, NULL), SPC_OK);
  return ty;
}

/* Component k of an iteration must be (x0, x1) with double value v. */
void core_expect_next_f64(spc_iter *it, int64_t x0, int64_t x1, double v) {
  int64_t x[SPC_MAX_ORDER];
  const void *pv = NULL;
  ck_assert_int_eq(spc_iter_next(it, x, &pv), 1);
  ck_assert_int_eq(x[0], x0);
  ck_assert_int_eq(x[1], x1);
  ck_assert_ptr_nonnull(pv);
  ck_assert_msg(tu_same_f64(*(const double *)pv, v), "(%lld,%lld): %a != %a",
                (long long)x0, (long long)x1, *(const double *)pv, v);
}

/* ---- creation and accessors --------------------------------------------- */

START_TEST(test_create_accessors) {
  int64_t dims[2] = {3, 4};
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(2, dims, 5, SPC_F64, &t, &e), &e);
  ck_assert_int_eq(spc_tensor_order(t), 2);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 3);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 4);
  ck_assert_int_eq(spc_tensor_dim(t, 2), -1);
  ck_assert_int_eq(spc_tensor_dim(t, -1), -1);
  ck_assert_str_eq(spc_tensor_format(t), "coo");
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_F64);
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_GENERAL);
  ck_assert_int_eq(spc_tensor_nstored(t), 5);
  ck_assert_int_eq(spc_tensor_nlevels(t), 2);
  ck_assert_str_eq(spc_tensor_level_format(t, 0), "compressed");
  ck_assert_str_eq(spc_tensor_level_format(t, 1), "singleton");
  ck_assert_ptr_null(spc_tensor_level_format(t, 2));
  ck_assert_int_eq(spc_tensor_level_dim(t, 0), 0);
  ck_assert_int_eq(spc_tensor_level_dim(t, 1), 1);
  ck_assert_int_eq(spc_tensor_level_dim(t, 2), -1);
  const void *data = NULL;
  spc_itype ty = 0;
  int64_t len = -1;
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "pos", &data, &ty, &len), SPC_OK);
  ck_assert_int_eq(len, 2);
  ck_assert_int_eq(ty, SPC_IDX32);
  ck_assert_int_eq(((const int32_t *)data)[0], 0);
  ck_assert_int_eq(((const int32_t *)data)[1], 5);
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "crd", &data, &ty, &len), SPC_OK);
  ck_assert_int_eq(len, 5);
  ck_assert_int_eq(spc_tensor_level_array(t, 1, "crd", &data, &ty, &len), SPC_OK);
  ck_assert_int_eq(len, 5);
  ck_assert_ptr_eq(data, spc_tensor_level_array_mut(t, 1, "crd"));
  ck_assert_int_eq(spc_tensor_level_array(t, 1, "pos", &data, &ty, &len), SPC_ERR_ARG);
  ck_assert_int_eq(spc_tensor_level_array(t, 2, "crd", &data, &ty, &len), SPC_ERR_ARG);
  ck_assert_ptr_null(spc_tensor_level_array_mut(t, 1, "pos"));
  ck_assert_ptr_null(spc_tensor_level_array_mut(t, -1, "crd"));
  int64_t n = -1;
  const void *v = spc_tensor_values(t, &n);
  ck_assert_ptr_nonnull(v);
  ck_assert_ptr_eq(v, spc_tensor_values_mut(t));
  ck_assert_int_eq(n, 5);
  /* 5 doubles + pos 2 x int32 + two crd 5 x int32 */
  ck_assert_int_eq(spc_tensor_bytes(t), 5 * 8 + 2 * 4 + 2 * 5 * 4);
  for (int k = 0; k < 5; k++) {
    core_set_crd(t, 0, k, k % 3);
    core_set_crd(t, 1, k, 3 - k % 4);
    ((double *)spc_tensor_values_mut(t))[k] = k;
  }
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_tensor_free(&t);
  ck_assert_ptr_null(t);
  spc_tensor_free(&t); /* NULL handle: no-op */
  spc_tensor_free(NULL);
}
END_TEST

START_TEST(test_create_pattern_and_empty) {
  int64_t dims[3] = {2, 0, 5};
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(3, dims, 0, SPC_PATTERN, &t, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(t), 0);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_PATTERN);
  ck_assert_ptr_null(spc_tensor_values(t, NULL));
  ck_assert_int_eq(spc_tensor_dim(t, 1), 0);
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t x[3];
  const void *v;
  ck_assert_int_eq(spc_iter_next(it, x, &v), 0);
  spc_iter_free(&it);
  ck_assert_ptr_null(it);
  spc_tensor_free(&t);

  int64_t d2[2] = {4, 4};
  int64_t xs[] = {0, 1, 3, 2};
  t = core_make_coo(2, d2, 2, SPC_PATTERN, xs, NULL);
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  v = (const void *)&e;
  ck_assert_int_eq(spc_iter_next(it, x, &v), 1);
  ck_assert_ptr_null(v);
  ck_assert_int_eq(x[0], 0);
  ck_assert_int_eq(x[1], 1);
  ck_assert_int_eq(spc_iter_next(it, x, NULL), 1);
  ck_assert_int_eq(x[0], 3);
  ck_assert_int_eq(x[1], 2);
  ck_assert_int_eq(spc_iter_next(it, x, &v), 0);
  spc_iter_free(&it);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_create_bad_args) {
  int64_t dims[SPC_MAX_ORDER + 1] = {0};
  for (int d = 0; d <= SPC_MAX_ORDER; d++) dims[d] = 2;
  spc_tensor *const sentinel = (spc_tensor *)&dims;
  struct {
    int order;
    int64_t d0, nnz;
  } bad[] = {{0, 2, 1}, {-1, 2, 1}, {SPC_MAX_ORDER + 1, 2, 1}, {2, -1, 1}, {2, 2, -1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    spc_tensor *t = sentinel;
    spc_error e;
    spc_error_clear(&e);
    dims[0] = bad[i].d0;
    spc_status s = spc_tensor_create_coo(bad[i].order, dims, bad[i].nnz, SPC_F64, &t, &e);
    ck_assert_msg(s == SPC_ERR_ARG, "case %zu: status %s", i, spc_status_name(s));
    ck_assert_int_eq(e.code, SPC_ERR_ARG);
    ck_assert_msg(t == NULL, "case %zu: *out not cleared on failure", i);
    if (t != sentinel) spc_tensor_free(&t);
  }
  dims[0] = 2;
  ck_assert_int_eq(spc_tensor_create_coo(2, dims, 1, SPC_F64, NULL, NULL), SPC_ERR_ARG);
  spc_tensor *t = NULL;
  ck_assert_int_eq(spc_tensor_create_coo(2, NULL, 1, SPC_F64, &t, NULL), SPC_ERR_ARG);
  ck_assert_ptr_null(t);
  /* order SPC_MAX_ORDER is allowed */
  tu_assert_ok(spc_tensor_create_coo(SPC_MAX_ORDER, dims, 1, SPC_I64, &t, NULL), NULL);
  ck_assert_int_eq(spc_tensor_nlevels(t), SPC_MAX_ORDER);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_index_widths) {
  struct {
    int64_t d0, d1;
    spc_itype w0, w1;
  } cs[] = {{10, 20, SPC_IDX32, SPC_IDX32},
            {10000000000LL, 7, SPC_IDX64, SPC_IDX32},
            {7, 10000000000LL, SPC_IDX32, SPC_IDX64},
            {1, (int64_t)INT32_MAX + 1, SPC_IDX32, SPC_IDX32}, /* max crd 2^31-1 */
            {1, (int64_t)INT32_MAX + 2, SPC_IDX32, SPC_IDX64},
            {0, 0, SPC_IDX32, SPC_IDX32}};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    int64_t dims[2] = {cs[i].d0, cs[i].d1};
    spc_tensor *t = NULL;
    tu_assert_ok(spc_tensor_create_coo(2, dims, 3, SPC_F32, &t, NULL), NULL);
    ck_assert_msg(width_of(t, 0, "crd") == cs[i].w0, "case %zu level 0", i);
    ck_assert_msg(width_of(t, 1, "crd") == cs[i].w1, "case %zu level 1", i);
    ck_assert_int_eq(width_of(t, 0, "pos"), SPC_IDX32);
    spc_tensor_free(&t);
  }
  /* pos width follows nnz (not allocated here: the rule itself) */
  ck_assert_int_eq(spc_itype_for(INT32_MAX), SPC_IDX32);
  ck_assert_int_eq(spc_itype_for((int64_t)INT32_MAX + 1), SPC_IDX64);
  ck_assert_int_eq(spc_itype_for(0), SPC_IDX32);
}
END_TEST

/* A 10^18 x 10^18 COO with ten entries: 64-bit crd, nothing sized by the
 * dimension, and every operation works on it. */
START_TEST(test_huge_dims) {
  const int64_t big = 1000000000000000000LL;
  int64_t dims[2] = {big, big};
  int64_t x[20];
  double v[10];
  for (int k = 0; k < 10; k++) {
    x[2 * k] = big - 1 - (int64_t)k * 99991;
    x[2 * k + 1] = (int64_t)k * 123456789012345LL;
    v[k] = k + 0.5;
  }
  int64_t a0 = spc_alloc_count();
  spc_tensor *t = core_make_coo(2, dims, 10, SPC_F64, x, v);
  ck_assert_int_le(spc_alloc_count() - a0, 8);
  ck_assert_int_eq(width_of(t, 0, "crd"), SPC_IDX64);
  ck_assert_int_eq(width_of(t, 1, "crd"), SPC_IDX64);
  ck_assert_int_eq(width_of(t, 0, "pos"), SPC_IDX32);
  ck_assert_int_eq(spc_tensor_bytes(t), 10 * 8 + 2 * 4 + 2 * 10 * 8);
  spc_error e;
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_tensor *c = NULL;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 10);
  ck_assert_int_le(spc_tensor_bytes(c), 1024);
  tu_assert_ok(spc_tensor_check(c, &e), &e);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  for (int k = 9; k >= 0; k--) /* sorted by row: reverse of input */
    core_expect_next_f64(it, x[2 * k], x[2 * k + 1], v[k]);
  spc_iter_free(&it);
  /* through a file and back */
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "huge.mtx");
  tu_assert_ok(spc_write(t, p, NULL, &e), &e);
  spc_tensor *r = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
  ck_assert_int_eq(spc_tensor_dim(r, 0), big);
  tu_assert_same_tensor(t, r, 0, p);
  ck_assert_int_le(spc_tensor_bytes(r), 1024);
  /* a coordinate equal to the dimension is caught */
  core_set_crd(t, 1, 3, big);
  ck_assert_int_eq(spc_tensor_check(t, &e), SPC_ERR_INPUT);
  spc_tensor_free(&r);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* ---- the checker -------------------------------------------------------- */

/* CSR (dense rows, compressed ordered unique columns) built by hand. */
static spc_tensor *make_csr(int64_t m, int64_t n, const int64_t *pos,
                            const int64_t *crd, int64_t nnz) {
  int64_t dims[2] = {m, n};
  spc_tensor *t = spc_tensor_alloc(2, dims, SPC_F64);
  ck_assert_ptr_nonnull(t);
  t->format = "csr";
  t->nlevels = 2;
  t->lv[0] = (spc_level){.fmt = &spc_level_dense, .props = spc_level_dense.props,
                         .dim = 0, .size = m};
  t->lv[1] = (spc_level){.fmt = &spc_level_compressed,
                         .props = SPC_LP_ORDERED | SPC_LP_UNIQUE | SPC_LP_COMPACT |
                                  SPC_LP_LOCATE,
                         .dim = 1, .size = n};
  ck_assert_int_eq(spc_level_add_array(&t->lv[1], "pos", SPC_IDX64, m + 1, NULL), SPC_OK);
  ck_assert_int_eq(spc_level_add_array(&t->lv[1], "crd", SPC_IDX32, nnz, NULL), SPC_OK);
  for (int64_t i = 0; i <= m; i++) spc_arr_set(&t->lv[1].arr[0], i, pos[i]);
  for (int64_t k = 0; k < nnz; k++) spc_arr_set(&t->lv[1].arr[1], k, crd[k]);
  t->val = spc_calloc((size_t)nnz, sizeof(double));
  t->nval = nnz;
  t->val_owned = true;
  return t;
}

static void expect_bad(spc_tensor *t, const char *what) {
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_tensor_check(t, &e);
  ck_assert_msg(s == SPC_ERR_INPUT, "%s: status %s", what, spc_status_name(s));
  ck_assert_int_eq(e.code, SPC_ERR_INPUT);
  ck_assert_msg(e.msg[0], "%s: no message", what);
}

START_TEST(test_check_csr) {
  const int64_t pos[] = {0, 2, 2, 4}, crd[] = {1, 3, 0, 2};
  spc_tensor *t = make_csr(3, 4, pos, crd, 4);
  spc_error e;
  tu_assert_ok(spc_tensor_check(t, &e), &e); /* rows may restart at 0 */
  ck_assert_int_eq(spc_tensor_nstored(t), 4);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t x[2];
  const void *v;
  int64_t want[4][2] = {{0, 1}, {0, 3}, {2, 0}, {2, 2}};
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(spc_iter_next(it, x, &v), 1);
    ck_assert_int_eq(x[0], want[k][0]);
    ck_assert_int_eq(x[1], want[k][1]);
  }
  ck_assert_int_eq(spc_iter_next(it, x, &v), 0);
  spc_iter_free(&it);
  spc_tensor_free(&t);

  struct {
    const char *what;
    int64_t pos[4], crd[4];
  } bad[] = {{"pos does not start at 0", {1, 2, 2, 4}, {1, 3, 0, 2}},
             {"pos decreases", {0, 2, 1, 4}, {1, 3, 0, 2}},
             {"pos past the end of crd", {0, 2, 2, 5}, {1, 3, 0, 2}},
             {"pos ends before the end of crd", {0, 2, 2, 3}, {1, 3, 0, 2}},
             {"crd out of range (= size)", {0, 2, 2, 4}, {1, 4, 0, 2}},
             {"crd negative", {0, 2, 2, 4}, {1, 3, -1, 2}},
             {"crd not ordered in a row", {0, 2, 2, 4}, {3, 1, 0, 2}},
             {"crd repeated in a row", {0, 2, 2, 4}, {1, 1, 0, 2}}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    t = make_csr(3, 4, bad[i].pos, bad[i].crd, 4);
    expect_bad(t, bad[i].what);
    spc_tensor_free(&t);
  }
  t = make_csr(3, 4, pos, crd, 4);
  t->lv[1].arr[0].len = 3; /* pos one short */
  expect_bad(t, "pos length");
  t->lv[1].arr[0].len = 4;
  t->lv[1].arr[1].name = "xrd"; /* no crd array */
  expect_bad(t, "missing crd");
  t->lv[1].arr[1].name = "crd";
  t->lv[0].dim = 2;
  expect_bad(t, "level dimension out of range");
  t->lv[0].dim = 0;
  t->nval = 3;
  expect_bad(t, "value count");
  t->nval = 4;
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_check_coo) {
  int64_t dims[3] = {3, 4, 5};
  int64_t x[] = {0, 0, 0, 2, 3, 4, 1, 1, 1};
  double v[] = {1, 2, 3};
  spc_error e;
  /* each corruption on a fresh tensor */
  for (int kind = 0; kind < 9; kind++) {
    spc_tensor *t = core_make_coo(3, dims, 3, SPC_F64, x, v);
    tu_assert_ok(spc_tensor_check(t, &e), &e);
    int32_t *pos = spc_tensor_level_array_mut(t, 0, "pos");
    const char *what = "";
    switch (kind) {
    case 0: pos[0] = 1; what = "pos[0] != 0"; break;
    case 1: pos[1] = 2; what = "pos end < nnz"; break;
    case 2: pos[1] = 4; what = "pos end > nnz"; break;
    case 3: pos[1] = -1; what = "pos decreasing"; break;
    case 4: core_set_crd(t, 0, 1, 3); what = "level 0 crd = dim"; break;
    case 5: core_set_crd(t, 0, 2, -1); what = "level 0 crd < 0"; break;
    case 6: core_set_crd(t, 1, 0, 4); what = "level 1 crd = dim"; break;
    case 7: core_set_crd(t, 2, 2, -7); what = "level 2 crd < 0"; break;
    case 8: t->lv[2].arr[0].len = 2; what = "singleton crd length"; break;
    }
    expect_bad(t, what);
    if (kind == 8) t->lv[2].arr[0].len = 3;
    spc_tensor_free(&t);
  }
  /* a combined (ordered) COO whose level 0 is put out of order */
  spc_tensor *t = core_make_coo(3, dims, 3, SPC_F64, x, v), *c = NULL;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  tu_assert_ok(spc_tensor_check(c, &e), &e);
  core_set_crd(c, 0, 0, 2); /* rows 2, 1, 2 */
  expect_bad(c, "level 0 not ordered after combine");
  spc_tensor_free(&c);
  spc_tensor_free(&t);
}
END_TEST

/* ---- iteration ---------------------------------------------------------- */

START_TEST(test_iter_coo) {
  int64_t dims[3] = {4, 5, 6};
  int64_t x[] = {3, 4, 5, 0, 0, 0, 3, 4, 5, 1, 2, 3};
  int64_t v[] = {-7, 8, 9, INT64_MIN};
  spc_tensor *t = core_make_coo(3, dims, 4, SPC_I64, x, v);
  spc_iter *it = NULL;
  spc_error e;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t c[3];
  const void *pv;
  for (int k = 0; k < 4; k++) { /* stored order, duplicates kept */
    ck_assert_int_eq(spc_iter_next(it, c, &pv), 1);
    for (int d = 0; d < 3; d++) ck_assert_int_eq(c[d], x[3 * k + d]);
    ck_assert_int_eq(*(const int64_t *)pv, v[k]);
  }
  for (int k = 0; k < 3; k++) ck_assert_int_eq(spc_iter_next(it, c, &pv), 0);
  spc_iter_free(&it);
  spc_iter_free(&it);
  spc_iter_free(NULL);
  spc_tensor_free(&t);
  ck_assert_int_eq(spc_iter_create(NULL, &it, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(it);
}
END_TEST

START_TEST(test_iter_dense) {
  int64_t dims[2] = {2, 3};
  int mode[2] = {1, 0}; /* column-major: level 0 is dimension 1 */
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_dense_alloc(2, dims, mode, SPC_F64, &t, &e), &e);
  double *val = spc_tensor_values_mut(t);
  for (int k = 0; k < 6; k++) val[k] = k == 3 ? 0.0 : 10 + k;
  ck_assert_str_eq(spc_tensor_format(t), "dense");
  ck_assert_int_eq(spc_tensor_nstored(t), 6);
  ck_assert_int_eq(spc_tensor_level_dim(t, 0), 1);
  ck_assert_str_eq(spc_tensor_level_format(t, 0), "dense");
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_iter *it = NULL;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 2; i++) core_expect_next_f64(it, i, j, val[j * 2 + i]);
  int64_t x[2];
  ck_assert_int_eq(spc_iter_next(it, x, NULL), 0);
  spc_iter_free(&it);
  /* to COO: all 6, or 5 without the explicit zero */
  spc_tensor *c = NULL;
  tu_assert_ok(spc_tensor_to_coo(t, 0, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 6);
  ck_assert_str_eq(spc_tensor_format(c), "coo");
  spc_tensor_free(&c);
  tu_assert_ok(spc_tensor_to_coo(t, 1, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 5);
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  core_expect_next_f64(it, 0, 0, 10);
  core_expect_next_f64(it, 1, 0, 11);
  core_expect_next_f64(it, 0, 1, 12);
  core_expect_next_f64(it, 0, 2, 14);
  core_expect_next_f64(it, 1, 2, 15);
  spc_iter_free(&it);
  spc_tensor_free(&c);
  spc_tensor_free(&t);

  /* row-major (mode NULL) order 3 */
  int64_t d3[3] = {2, 2, 2};
  tu_assert_ok(spc_dense_alloc(3, d3, NULL, SPC_I64, &t, &e), &e);
  int64_t *iv = spc_tensor_values_mut(t);
  for (int k = 0; k < 8; k++) iv[k] = k;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  const void *pv;
  int64_t y[3];
  for (int k = 0; k < 8; k++) {
    ck_assert_int_eq(spc_iter_next(it, y, &pv), 1);
    ck_assert_int_eq(y[0] * 4 + y[1] * 2 + y[2], k);
    ck_assert_int_eq(*(const int64_t *)pv, k);
  }
  ck_assert_int_eq(spc_iter_next(it, y, &pv), 0);
  spc_iter_free(&it);
  spc_tensor_free(&t);
}
END_TEST

/* ---- enumerations and errors -------------------------------------------- */

START_TEST(test_names) {
  for (int d = SPC_DUP_SUM; d <= SPC_DUP_ERROR; d++) {
    spc_dup back = (spc_dup)-1;
    ck_assert_int_eq(spc_dup_parse(spc_dup_name((spc_dup)d), &back), 0);
    ck_assert_int_eq(back, d);
  }
  spc_dup dd;
  ck_assert_int_eq(spc_dup_parse("average", &dd), -1);
  for (int v = SPC_PATTERN; v <= SPC_C128; v++) {
    spc_vtype back = SPC_VTYPE_AUTO;
    ck_assert_int_eq(spc_vtype_parse(spc_vtype_name((spc_vtype)v), &back), 0);
    ck_assert_int_eq(back, v);
  }
  ck_assert_int_eq(spc_vtype_size(SPC_PATTERN), 0);
  ck_assert_int_eq(spc_vtype_size(SPC_F32), 4);
  ck_assert_int_eq(spc_vtype_size(SPC_U64), 8);
  ck_assert_int_eq(spc_vtype_size(SPC_C128), 16);
  ck_assert_str_eq(spc_symmetry_name(SPC_SKEW), "skew-symmetric");
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(e.code, SPC_OK);
  char buf[64];
  e.code = SPC_ERR_INPUT;
  snprintf(e.file, sizeof e.file, "a.mtx");
  e.line = 7;
  e.col = 3;
  snprintf(e.msg, sizeof e.msg, "bad");
  ck_assert_str_eq(spc_error_string(&e, buf, sizeof buf), "a.mtx:7:3: bad");
  e.col = 0;
  ck_assert_str_eq(spc_error_string(&e, buf, sizeof buf), "a.mtx:7: bad");
  spc_error_string(&e, buf, 5); /* truncation stays within the buffer */
  ck_assert_int_eq(strlen(buf), 4);
  for (int s = SPC_ERR_INTERNAL; s <= SPC_NOT_HANDLED; s++)
    ck_assert_str_ne(spc_status_name((spc_status)s), "unknown status");
}
END_TEST

/* SciPy's order of duplicates (spc_coo_scipy_dup_order): a 4 x 8 matrix of
 * 78 entries, rows interleaved in the file, each row's columns cycling
 * (rows 0, 2 and 3 of over 16 entries with runs of three or more, row 1 of
 * 10); values of magnitudes 1 to 1e15 alternating in sign, so the order
 * of a sum shows in its bits.  The expected sums are SciPy 1.10's
 * (coo_matrix((v, (r, c))).tocsr(), in hexadecimal): 5 of them differ
 * from the file order's. */
START_TEST(test_scipy_dup_order) {
  static const int64_t x[2 * 78] = {
    2, 0, 3, 0, 3, 1, 0, 0, 3, 0, 0, 5, 2, 3, 0, 2, 0, 7, 2, 1, 1, 0, 2, 4, 0, 4, 3, 1, 3,
    0, 1, 2, 2, 2, 3, 1, 2, 0, 0, 1, 2, 3, 0, 6, 2, 1, 0, 3, 2, 4, 3, 0, 3, 1, 2, 2, 0, 0,
    2, 0, 1, 1, 0, 5, 1, 0, 0, 2, 0, 7, 3, 0, 0, 4, 3, 1, 0, 1, 1, 2, 2, 3, 0, 6, 1, 1, 0,
    3, 0, 0, 3, 0, 1, 0, 0, 5, 1, 2, 2, 1, 3, 1, 0, 2, 2, 4, 2, 2, 3, 0, 0, 7, 0, 4, 3, 1,
    2, 0, 0, 1, 3, 0, 2, 3, 0, 6, 3, 1, 2, 1, 3, 0, 0, 3, 1, 1, 1, 0, 0, 0, 0, 5, 3, 1, 0,
    2, 2, 4, 0, 7, 2, 2, 0, 4, 0, 1};
  static const double v[78] = {
    0x1.0000000000000p+0, 0x1.0000000000000p+0, -0x1.be6db6db6db6dp+16,
    0x1.0000000000000p+0, 0x1.7f2c372492492p+33, -0x1.be6db6db6db6dp+16,
    -0x1.be6db6db6db6dp+16, 0x1.7f2c372492492p+33, -0x1.44d1cd2252492p+50,
    0x1.7f2c372492492p+33, 0x1.0000000000000p+0, -0x1.44d1cd2252492p+50,
    0x1.9249249249249p+0, -0x1.44d1cd2252492p+50, 0x1.9249249249249p+0,
    -0x1.be6db6db6db6dp+16, 0x1.9249249249249p+0, -0x1.4ed2492492493p+17,
    -0x1.4ed2492492493p+17, -0x1.4ed2492492493p+17, 0x1.14bc60b6db6dcp+34,
    0x1.14bc60b6db6dcp+34, -0x1.c6bf526340000p+50, -0x1.c6bf526340000p+50,
    0x1.1249249249249p+1, 0x1.14bc60b6db6dcp+34, -0x1.c6bf526340000p+50,
    -0x1.be6db6db6db6dp+17, 0x1.1249249249249p+1, 0x1.69e2a5db6db6ep+34,
    0x1.7f2c372492492p+33, -0x1.be6db6db6db6dp+17, -0x1.44d1cd2252492p+50,
    0x1.69e2a5db6db6ep+34, -0x1.24566bd216db6p+51, 0x1.1249249249249p+1,
    0x1.5b6db6db6db6ep+1, -0x1.be6db6db6db6dp+17, -0x1.1704924924925p+18,
    0x1.9249249249249p+0, -0x1.24566bd216db6p+51, 0x1.bf08eb0000000p+34,
    -0x1.4ed2492492493p+17, -0x1.654d2e728db6ep+51, 0x1.a492492492492p+1,
    0x1.69e2a5db6db6ep+34, 0x1.14bc60b6db6dcp+34, -0x1.4ed2492492492p+18,
    -0x1.c6bf526340000p+50, 0x1.5b6db6db6db6ep+1, -0x1.24566bd216db6p+51,
    0x1.0a17981249249p+35, -0x1.1704924924925p+18, 0x1.bf08eb0000000p+34,
    0x1.5b6db6db6db6ep+1, -0x1.a643f11304925p+51, 0x1.edb6db6db6db7p+1,
    -0x1.1704924924925p+18, -0x1.654d2e728db6ep+51, -0x1.86a0000000000p+18,
    0x1.bf08eb0000000p+34, 0x1.a492492492492p+1, 0x1.34aabaa492492p+35,
    -0x1.654d2e728db6ep+51, -0x1.4ed2492492492p+18, 0x1.a492492492492p+1,
    -0x1.e73ab3b37b6dbp+51, 0x1.1249249249249p+1, -0x1.be6db6db6db6dp+17,
    0x1.1b6db6db6db6ep+2, -0x1.be6db6db6db6dp+18, -0x1.4ed2492492492p+18,
    0x1.5f3ddd36db6dcp+35, 0x1.0a17981249249p+35, -0x1.1418bb29f924ap+52,
    -0x1.a643f11304925p+51, 0x1.4000000000000p+2, -0x1.f63b6db6db6dcp+18};
  static const int64_t ptr[5] = {0, 8, 11, 16, 18};
  static const int64_t col[18] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 0, 1, 2, 3, 4, 0, 1};
  static const double want[18] = {
    0x1.5b6db6db6db6ep+3, -0x1.4ed2492492493p+20, 0x1.bf08eb0000000p+36,
    -0x1.0bf9e2d5ea492p+53, 0x1.a492492492492p+3, -0x1.1704924924924p+20,
    0x1.4f46b04000000p+36, -0x1.654d2e728db6ep+53, -0x1.44d0b866d0c8ep+50,
    0x1.7f2ae8535b6dbp+33, -0x1.c6bf5263af9b1p+50, -0x1.654c79818e7dap+51,
    -0x1.c6be92ce733f5p+50, -0x1.a643118efead9p+51, -0x1.2455e1741e4d3p+51,
    -0x1.44cfb8f43928ap+50, 0x1.3f4f8349d0000p+36, -0x1.03db0a8266f00p+53};
  const int64_t dims[2] = {4, 8};
  spc_error e;
  int differ[2] = {0, 0};
  for (int scipy = 0; scipy < 2; scipy++) {
    spc_tensor *t = core_make_coo(2, dims, 78, SPC_F64, x, v), *c = NULL;
    int moved = -1;
    if (scipy) tu_assert_ok(spc_coo_scipy_dup_order(&t, &moved, &e), &e);
    if (scipy) ck_assert_int_gt(moved, 0);
    tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
    ck_assert_int_eq(spc_tensor_nstored(c), ptr[4]);
    spc_iter *it = NULL;
    tu_assert_ok(spc_iter_create(c, &it, &e), &e);
    int64_t y[2];
    const void *pv;
    for (int64_t i = 0; i < 4; i++)
      for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
        ck_assert(spc_iter_next(it, y, &pv));
        ck_assert(y[0] == i && y[1] == col[k]);
        double got;
        memcpy(&got, pv, sizeof got);
        differ[scipy] += memcmp(&got, &want[k], sizeof got) != 0;
      }
    spc_iter_free(&it);
    spc_tensor_free(&c);
    spc_tensor_free(&t);
  }
  ck_assert_int_eq(differ[0], 5); /* the file's order: not SciPy's bits */
  ck_assert_int_eq(differ[1], 0);
  /* rows whose columns never fall in file order: SciPy sorts no row and
   * adds in file order -- nothing moves; nor in a pattern or integers */
  int64_t xs[2 * 78];
  double vs[78];
  int64_t m = 0;
  for (int64_t i = 0; i < 4; i++)
    for (int64_t cc = 0; cc < 8; cc++)
      for (int64_t k = 0; k < 78; k++)
        if (x[2 * k] == i && x[2 * k + 1] == cc) xs[2 * m] = i, xs[2 * m + 1] = cc, vs[m++] = v[k];
  ck_assert_int_eq(m, 78);
  spc_vtype vts[3] = {SPC_F64, SPC_I64, SPC_PATTERN};
  for (int q = 0; q < 3; q++) {
    spc_tensor *t = core_make_coo(2, dims, 78, vts[q], q ? x : xs, q == 1 ? (const void *)x : (const void *)vs);
    int moved = -1;
    tu_assert_ok(spc_coo_scipy_dup_order(&t, &moved, &e), &e);
    ck_assert_int_eq(moved, 0);
    spc_tensor_free(&t);
  }
}
END_TEST

Suite *suite_core(void) {
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("tensor");
  tcase_add_test(tc, test_create_accessors);
  tcase_add_test(tc, test_create_pattern_and_empty);
  tcase_add_test(tc, test_create_bad_args);
  tcase_add_test(tc, test_index_widths);
  tcase_add_test(tc, test_huge_dims);
  tcase_add_test(tc, test_scipy_dup_order);
  tcase_add_test(tc, test_names);
  suite_add_tcase(s, tc);
  tc = tcase_create("check");
  tcase_add_test(tc, test_check_csr);
  tcase_add_test(tc, test_check_coo);
  suite_add_tcase(s, tc);
  tc = tcase_create("iter");
  tcase_add_test(tc, test_iter_coo);
  tcase_add_test(tc, test_iter_dense);
  suite_add_tcase(s, tc);
  core_add_ops_tcases(s);
  core_add_alloc_tcases(s);
  return s;
}
