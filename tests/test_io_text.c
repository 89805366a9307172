/* test_io_text.c -- suite_io: Matrix Market and FROSTT variants that must
 * be read (line ends, spacing, comments, number spellings, every object /
 * format / field / symmetry), given versus inferred FROSTT dimensions, and
 * the parallel chunked parser against the serial one on a large file. */
#include "test_io.h"
#include "spc_io.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A COO tensor from 1-based coordinates x (n*order) and values. */
static spc_tensor *coo1(int order, const int64_t *dims, int n, spc_vtype vt,
                        const int64_t *x, const void *vals) {
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(order, dims, n, vt, &t, &e), &e);
  for (int l = 0; l < order; l++) {
    spc_itype ty;
    ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), SPC_OK);
    void *c = spc_tensor_level_array_mut(t, l, "crd");
    for (int k = 0; k < n; k++) {
      int64_t v = x[k * order + l] - 1;
      if (ty == SPC_IDX32) ((int32_t *)c)[k] = (int32_t)v;
      else ((int64_t *)c)[k] = v;
    }
  }
  if (vt != SPC_PATTERN && n)
    memcpy(spc_tensor_values_mut(t), vals, (size_t)n * spc_vtype_size(vt));
  return t;
}

/* Read text as NAME and compare with the expected components. */
static spc_tensor *read_expect(const char *name, const char *text, int expand,
                               spc_vtype want_vt, int order, const int64_t *dims,
                               int n, const int64_t *x, const void *vals) {
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.expand = expand;
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(io_read_text(name, text, &o, &t, &e, NULL), &e);
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  ck_assert_int_eq(spc_tensor_vtype(t), want_vt);
  spc_tensor *w = coo1(order, dims, n, want_vt, x, vals);
  tu_assert_same_tensor(w, t, 0, name);
  spc_tensor_free(&w);
  return t;
}

#define RE "%%MatrixMarket matrix coordinate real general\n"

START_TEST(test_mtx_spacing) {
  int64_t d34[2] = {3, 4};
  const int64_t x[] = {1, 1, 2, 2, 3, 4, 1, 4, 2, 3};
  const double v[] = {1000, -0.015, 20, 0.5, 6};
  const char *texts[] = {
      /* plain */
      RE "3 4 5\n1 1 1e3\n2 2 -1.5E-2\n3 4 +2e+1\n1 4 .5\n2 3 6.\n",
      /* CRLF everywhere */
      "%%MatrixMarket matrix coordinate real general\r\n% c\r\n3 4 5\r\n1 1 1e3\r\n"
      "2 2 -1.5E-2\r\n3 4 +2e+1\r\n1 4 .5\r\n2 3 6.\r\n",
      /* tabs, trailing spaces, blank lines, comments anywhere */
      RE "%c1\n\n  % indented comment\n3\t4\t5  \n1\t1\t1e3\n\n2 2  -1.5E-2   \n"
         "% mid comment\n3 4 +2e+1\t\n   \n\t\n1 4 .5\n   % c\n2 3 6.",
      /* leading blanks on entries, leading zeros, exponent spellings */
      RE "  3   4   5\n  01 1 1000.000\n 2 002 -15e-3\n3 4 2.0E1\n1 4 5e-1\n2 3 0.6e+1\n",
      /* upper-case banner words */
      "%%MatrixMarket MATRIX Coordinate REAL General\n3 4 5\n1 1 1e3\n2 2 -1.5E-2\n"
      "3 4 +2e+1\n1 4 .5\n2 3 6.\n",
      /* form feeds and vertical tabs: blanks to Python's split (SciPy's
       * mmread), a line of them a blank line */
      RE "3\f4\v5\n1\f1\v1e3\f\n\f\n2 2 -1.5E-2\v\n \t\f\v\r\n3 4 +2e+1\n1 4 .5\n2\v3\f6.\n"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    spc_tensor *t = read_expect("v.mtx", texts[i], 0, SPC_F64, 2, d34, 5, x, v);
    spc_tensor_free(&t);
  }
}
END_TEST

START_TEST(test_mtx_special_values) {
  int64_t d[2] = {2, 4};
  const int64_t x[] = {1, 1, 1, 2, 1, 3, 1, 4, 2, 1, 2, 2, 2, 3, 2, 4};
  const double v[] = {INFINITY, -INFINITY, NAN, INFINITY, -INFINITY, -0.0, 5e-324, 1.7976931348623157e308};
  spc_tensor *t = read_expect(
      "s.mtx",
      RE "2 4 8\n1 1 inf\n1 2 -inf\n1 3 nan\n1 4 +INF\n2 1 -Infinity\n2 2 -0\n"
         "2 3 4.9406564584124654e-324\n2 4 1.7976931348623157e308\n",
      0, SPC_F64, 2, d, 8, x, v);
  spc_tensor_free(&t);
  /* overflow to inf and underflow to 0, as strtod */
  const double v2[] = {HUGE_VAL, -0.0};
  const int64_t x2[] = {1, 1, 2, 2};
  t = read_expect("o.mtx", RE "2 4 2\n1 1 1e400\n2 2 -1e-400\n", 0, SPC_F64, 2, d, 2, x2, v2);
  spc_tensor_free(&t);
}
END_TEST

/* An array file's zeros are its padding, as a conversion and SciPy's
 * mmread take them: read with --expand (symmetric storage made general),
 * a skew-symmetric 2 x 2 gives its two mirrored entries, not the zero
 * diagonal the file never holds; a symmetric one with a stored zero drops
 * it; and a query over a general array counts its nonzeros (it counted
 * every position, where --to=csr of the same file holds only the
 * nonzeros). */
START_TEST(test_mtx_array_zeros) {
  int64_t d[2] = {2, 2};
  const int64_t xs[] = {1, 2, 2, 1}; /* 1-based, row by row: (1, 2) = -3.5 mirrors the file's (2, 1) */
  const double vs[] = {-3.5, 3.5};
  spc_tensor *t = read_expect("s.mtx", "%%MatrixMarket matrix array real skew-symmetric\n2 2\n3.5\n", 1,
                              SPC_F64, 2, d, 2, xs, vs);
  spc_tensor_free(&t);
  const int64_t xy[] = {1, 1, 2, 2};
  const double vy[] = {1, 2};
  t = read_expect("y.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n0\n2\n", 1, SPC_F64, 2,
                  d, 2, xy, vy);
  spc_tensor_free(&t);
  /* the query, over the file read as it is (dense, general) */
  spc_read_opts o;
  spc_read_opts_init(&o);
  spc_error e;
  tu_assert_ok(io_read_text("g.mtx", "%%MatrixMarket matrix array real general\n1 2\n0\n5\n", &o, &t, &e, NULL),
               &e);
  ck_assert_int_eq(spc_tensor_nstored(t), 2); /* both positions stored */
  spc_query_results *q = NULL;
  tu_assert_ok(spc_tensor_query(t, "select [i] -> count(j) as nnz", NULL, NULL, NULL, 0, &q, &e), &e);
  ck_assert_int_eq(spc_query_count(q), 1);
  ck_assert_int_eq(spc_query_ngroups(q), 1);
  ck_assert_int_eq(spc_query_values(q, 0)[0], 1);
  spc_query_results_free(&q);
  /* and the symmetric file, expanded by the query: one per row */
  spc_tensor_free(&t);
  tu_assert_ok(io_read_text("s.mtx", "%%MatrixMarket matrix array real skew-symmetric\n2 2\n3.5\n", &o, &t,
                            &e, NULL),
               &e);
  tu_assert_ok(spc_tensor_query(t, "select [i] -> count(j) as nnz", NULL, NULL, NULL, 0, &q, &e), &e);
  ck_assert_int_eq(spc_query_ngroups(q), 2);
  ck_assert_int_eq(spc_query_values(q, 0)[0], 1);
  ck_assert_int_eq(spc_query_values(q, 0)[1], 1);
  spc_query_results_free(&q);
  spc_tensor_free(&t);
  /* asked as a pattern: the nonzeros' structure (it read a complex file's
   * imaginary parts as reals, an integer file as reals) */
  const char *arrs[3] = {"%%MatrixMarket matrix array complex general\n2 2\n1 2\n0 0\n0 0\n0 -1\n",
                         "%%MatrixMarket matrix array integer general\n2 2\n5\n0\n0\n3\n",
                         "%%MatrixMarket matrix array real symmetric\n2 2\n5\n0\n3\n"};
  const int64_t xp[] = {1, 1, 2, 2};
  o.vtype = SPC_PATTERN;
  for (int k = 0; k < 3; k++) {
    tu_assert_ok(io_read_text("p.mtx", arrs[k], &o, &t, &e, NULL), &e);
    spc_tensor *w = coo1(2, d, 2, SPC_PATTERN, xp, NULL);
    ck_assert_int_eq(spc_tensor_vtype(t), SPC_PATTERN);
    tu_assert_same_tensor(w, t, 0, arrs[k]);
    spc_tensor_free(&w);
    spc_tensor_free(&t);
  }
}
END_TEST

START_TEST(test_mtx_fields) {
  int64_t d[2] = {3, 3};
  const int64_t x[] = {1, 1, 3, 2, 2, 3};
  const int64_t iv[] = {-5, 9223372036854775807LL, 0};
  spc_tensor *t = read_expect(
      "i.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 1 -5\n"
               "3 2 9223372036854775807\n2 3 +0\n",
      0, SPC_I64, 2, d, 3, x, iv);
  spc_tensor_free(&t);
  /* a value above INT64_MAX makes the whole file uint64 */
  const uint64_t uv[] = {5, 9223372036854775808ULL, 18446744073709551615ULL};
  t = read_expect("u.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 1 5\n"
                           "3 2 9223372036854775808\n2 3 18446744073709551615\n",
                  0, SPC_U64, 2, d, 3, x, uv);
  spc_tensor_free(&t);
  const double cv[] = {1, -1, 0.5, 2, -0.0, 3e10};
  t = read_expect("c.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 3\n"
                           "1 1 1 -1\n3 2 .5 2\n2 3 -0 3e10\n",
                  0, SPC_C128, 2, d, 3, x, cv);
  spc_tensor_free(&t);
  t = read_expect("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n"
                           "1 1\n3 2\n2 3\n",
                  0, SPC_PATTERN, 2, d, 3, x, NULL);
  spc_tensor_free(&t);
  /* "%%GraphBLAS type float" on an integer file: doubles (the text exactly,
   * as SciPy reads values: float32 would round 0.1 and 16777217), inf
   * allowed */
  const double fv[] = {-INFINITY, 0.1, 16777217.0};
  t = read_expect("f.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                           "%%GraphBLAS type float\n3 3 3\n1 1 -inf\n3 2 0.1\n2 3 16777217\n",
                  0, SPC_F64, 2, d, 3, x, fv);
  spc_tensor_free(&t);
  /* "%%GraphBLAS type uint64_t" on values that fit int64: int64, as SciPy
   * reads them (its products wrap the same); one past INT64_MAX: uint64 */
  const int64_t sv[] = {5, 0, 9223372036854775807LL};
  t = read_expect("g.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                           "%%GraphBLAS type uint64_t\n3 3 3\n1 1 5\n3 2 0\n"
                           "2 3 9223372036854775807\n",
                  0, SPC_I64, 2, d, 3, x, sv);
  spc_tensor_free(&t);
  /* an integer type on a real field: doubles */
  t = read_expect("h.mtx", RE "%%GraphBLAS type int32_t\n3 3 3\n1 1 1.5\n3 2 0\n2 3 -2\n", 0,
                  SPC_F64, 2, d, 3, x, (const double[]){1.5, 0, -2});
  spc_tensor_free(&t);
  /* empty coordinate file */
  t = read_expect("e.mtx", RE "3 3 0\n", 0, SPC_F64, 2, d, 0, x, NULL);
  ck_assert_int_eq(spc_tensor_nstored(t), 0);
  spc_tensor_free(&t);
}
END_TEST

/* "unsigned-integer" (SciPy writes it for unsigned values): read as uint64,
 * coordinate and array; written back "unsigned-integer" when a value
 * exceeds INT64_MAX (an "integer" reader takes signed values), else
 * "integer", and read back the same. */
START_TEST(test_mtx_unsigned_field) {
  int64_t d[2] = {3, 3};
  const int64_t x[] = {1, 1, 3, 2, 2, 3};
  const uint64_t big[] = {5, 9223372036854775808ULL, 18446744073709551615ULL};
  const uint64_t small[] = {5, 0, 9223372036854775807ULL};
  spc_tensor *t = read_expect(
      "u.mtx", "%%MatrixMarket matrix coordinate unsigned-integer general\n3 3 3\n1 1 5\n"
               "3 2 9223372036854775808\n2 3 18446744073709551615\n",
      0, SPC_U64, 2, d, 3, x, big);
  spc_tensor *t2 = read_expect(
      "s.mtx", "%%MatrixMarket Matrix Coordinate Unsigned-Integer General\n3 3 3\n1 1 5\n"
               "3 2 0\n2 3 9223372036854775807\n",
      0, SPC_U64, 2, d, 3, x, small);
  spc_error e;
  spc_tensor *a = NULL;
  spc_read_opts o;
  spc_read_opts_init(&o);
  tu_assert_ok(io_read_text("a.mtx", "%%MatrixMarket matrix array unsigned-integer general\n"
                                     "2 1\n18446744073709551615\n7\n", &o, &a, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_vtype(a), SPC_U64);
  int64_t nv = 0;
  const uint64_t *av = spc_tensor_values(a, &nv);
  ck_assert_int_eq(nv, 2);
  ck_assert(av[0] == 18446744073709551615ULL && av[1] == 7);
  spc_tensor_free(&a);
  /* skew-symmetric uint64: refused as the coordinate expansion refuses it
   * (the mirror -a is not uint64), not mirrored unnegated */
  ck_assert_int_eq(io_read_text("k.mtx", "%%MatrixMarket matrix array unsigned-integer "
                                         "skew-symmetric\n3 3\n5\n0\n7\n", &o, &a, &e, NULL),
                   SPC_ERR_UNSUPPORTED);
  ck_assert_ptr_null(a);
  /* a negative value is not unsigned */
  ck_assert_int_eq(io_read_text("n.mtx", "%%MatrixMarket matrix coordinate unsigned-integer "
                                         "general\n3 3 1\n1 1 -5\n", &o, &a, &e, NULL),
                   SPC_ERR_INPUT);
  char *dir = tu_mkdtemp();
  spc_tensor *ts[2] = {t, t2};
  const char *banner[2] = {"%%MatrixMarket matrix coordinate unsigned-integer general\n",
                           "%%MatrixMarket matrix coordinate integer general\n"};
  for (int i = 0; i < 2; i++) {
    char *out = tu_path(dir, "out.mtx");
    tu_assert_ok(spc_write(ts[i], out, NULL, &e), &e);
    size_t len = 0;
    char *text = tu_read_file(out, &len);
    ck_assert_msg(!strncmp(text, banner[i], strlen(banner[i])), "banner: %.60s", text);
    free(text);
    spc_tensor *back = NULL;
    tu_assert_ok(spc_read(out, &o, &back, &e), &e);
    /* values that fit int64, written "integer", read back as int64 (as
     * SciPy reads them), the same values */
    ck_assert_int_eq(spc_tensor_vtype(back), i == 0 ? SPC_U64 : SPC_I64);
    int64_t nb = 0, nt = 0;
    const void *vb = spc_tensor_values(back, &nb), *vt = spc_tensor_values(ts[i], &nt);
    ck_assert_int_eq(nb, nt);
    ck_assert(!memcmp(vb, vt, (size_t)nb * 8)); /* two's complement: the same words */
    if (i == 0) tu_assert_same_tensor(ts[i], back, 0, banner[i]);
    spc_tensor_free(&back);
    unlink(out);
    free(out);
  }
  tu_rmtree(dir);
  free(dir);
  spc_tensor_free(&t2);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_mtx_read_as_type) {
  spc_read_opts o;
  spc_read_opts_init(&o);
  spc_tensor *t = NULL;
  spc_error e;
  const char *text = RE "2 2 2\n1 1 0.1\n2 2 3\n";
  o.vtype = SPC_F32;
  tu_assert_ok(io_read_text("t.mtx", text, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_F32);
  ck_assert(tu_same_f32(((const float *)spc_tensor_values(t, NULL))[0], 0.1f));
  spc_tensor_free(&t);
  o.vtype = SPC_PATTERN;
  tu_assert_ok(io_read_text("t.mtx", text, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_PATTERN);
  ck_assert_int_eq(spc_tensor_nstored(t), 2);
  spc_tensor_free(&t);
  o.vtype = SPC_F64;
  tu_assert_ok(io_read_text("t.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                     "2 2 1\n2 1 -7\n", &o, &t, &e, NULL), &e);
  ck_assert(((const double *)spc_tensor_values(t, NULL))[0] == -7.0);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_mtx_vectors) {
  int64_t d5[1] = {5};
  const int64_t x[] = {2, 5};
  const double v[] = {1.5, -1};
  spc_tensor *t = read_expect("v.mtx", "%%MatrixMarket vector coordinate real general\n5 2\n2 1.5\n5 -1\n",
                              0, SPC_F64, 1, d5, 2, x, v);
  ck_assert_int_eq(spc_tensor_order(t), 1);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 5);
  spc_tensor_free(&t);
  int64_t d3[1] = {3};
  const int64_t xa[] = {1, 2, 3};
  const int64_t iv[] = {1, -2, 0};
  t = read_expect("va.mtx", "%%MatrixMarket vector array integer general\n3\n1\n-2\n0\n",
                  0, SPC_I64, 1, d3, 3, xa, iv);
  ck_assert_str_eq(spc_tensor_format(t), "dense");
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_mtx_arrays) {
  int64_t d23[2] = {2, 3};
  const int64_t xg[] = {1, 1, 2, 1, 1, 2, 2, 2, 1, 3, 2, 3};
  const double vg[] = {1, 2, 3, 4, 5, 6};
  spc_tensor *t = read_expect("g.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n",
                              0, SPC_F64, 2, d23, 6, xg, vg);
  ck_assert_str_eq(spc_tensor_format(t), "dense");
  ck_assert_int_eq(spc_tensor_nstored(t), 6);
  spc_tensor_free(&t);
  int64_t d22[2] = {2, 2};
  const int64_t x22[] = {1, 1, 2, 1, 1, 2, 2, 2};
  const double vc[] = {1, 2, 3, 4, 5, 6, 7, 8};
  t = read_expect("c.mtx", "%%MatrixMarket matrix array complex general\n2 2\n1 2\n3 4\n5 6\n7 8\n",
                  0, SPC_C128, 2, d22, 4, x22, vc);
  spc_tensor_free(&t);
  /* symmetric: lower triangle by columns, mirrored */
  int64_t d33[2] = {3, 3};
  const int64_t x33[] = {1, 1, 2, 1, 3, 1, 1, 2, 2, 2, 3, 2, 1, 3, 2, 3, 3, 3};
  const double vs[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
  for (int expand = 0; expand < 2; expand++) {
    t = read_expect("s.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
                    expand, SPC_F64, 2, d33, 9, x33, vs);
    spc_tensor_free(&t);
  }
  /* skew: strictly lower, zero diagonal */
  const double vk[] = {0, 1, 2, -1, 0, 3, -2, -3, 0};
  t = read_expect("k.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
                  0, SPC_F64, 2, d33, 9, x33, vk);
  spc_tensor_free(&t);
  /* hermitian: conjugate mirror */
  const double vh[] = {1, 0, 2, 3, 2, -3, 4, 0};
  t = read_expect("h.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n",
                  1, SPC_C128, 2, d22, 4, x22, vh);
  spc_tensor_free(&t);
  /* array with CRLF, blank lines and comments between values */
  t = read_expect("g2.mtx", "%%MatrixMarket matrix array real general\r\n% c\r\n2 3\r\n1\r\n\r\n2\r\n"
                            "% mid\r\n3\r\n  4  \r\n5\r\n6",
                  0, SPC_F64, 2, d23, 6, xg, vg);
  spc_tensor_free(&t);
}
END_TEST

/* "hermitian" on real, integer or pattern values means symmetric (SciPy
 * reads such files so). */
START_TEST(test_mtx_hermitian_not_complex) {
  int64_t d[2] = {3, 3};
  const int64_t x[] = {2, 1, 1, 2, 3, 3};
  const double v[] = {1.5, 1.5, -2};
  spc_tensor *t = read_expect("hr.mtx", "%%MatrixMarket matrix coordinate real hermitian\n3 3 2\n"
                                        "2 1 1.5\n3 3 -2\n",
                              1, SPC_F64, 2, d, 3, x, v);
  spc_tensor_free(&t);
  t = read_expect("hr.mtx", "%%MatrixMarket matrix coordinate real hermitian\n3 3 2\n2 1 1.5\n3 3 -2\n",
                  0, SPC_F64, 2, d, 2, (const int64_t[]){2, 1, 3, 3}, (const double[]){1.5, -2});
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_SYMMETRIC);
  spc_tensor_free(&t);
  const int64_t iv[] = {7, 7, 9};
  t = read_expect("hi.mtx", "%%MatrixMarket matrix coordinate integer Hermitian\n3 3 2\n2 1 7\n3 3 9\n",
                  1, SPC_I64, 2, d, 3, x, iv);
  spc_tensor_free(&t);
  t = read_expect("hp.mtx", "%%MatrixMarket matrix coordinate pattern hermitian\n3 3 2\n2 1\n3 3\n",
                  1, SPC_PATTERN, 2, d, 3, x, NULL);
  spc_tensor_free(&t);
  /* array real hermitian: the lower triangle mirrored */
  const int64_t xa[] = {1, 1, 2, 1, 1, 2, 2, 2};
  t = read_expect("ha.mtx", "%%MatrixMarket matrix array real hermitian\n2 2\n1\n-3\n4\n",
                  1, SPC_F64, 2, (const int64_t[]){2, 2}, 4, xa, (const double[]){1, -3, -3, 4});
  spc_tensor_free(&t);
}
END_TEST

/* What SciPy's reader (1.10 and 1.17) accepts beyond the strict grammar
 * is read as SciPy reads it: text after the last field of a real, integer
 * or pattern entry is ignored (values on a pattern file's lines too), a
 * complex value of one number has imaginary part 0, and a skew-symmetric
 * pattern's mirrors are -1 (integer values; its structure when read as
 * pattern). */
START_TEST(test_mtx_as_scipy_reads) {
  int64_t d[2] = {3, 3};
  const int64_t x2[] = {1, 1, 2, 3};
  spc_tensor *t = read_expect("pv.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n"
                                        "1 1 5.0\n2 3 x y\r\n",
                              0, SPC_PATTERN, 2, d, 2, x2, NULL);
  spc_tensor_free(&t);
  t = read_expect("rx.mtx", RE "3 3 2\n1 1 1.5 junk 7\n2 3 2.5\t8 \n", 0, SPC_F64, 2, d, 2, x2,
                  (const double[]){1.5, 2.5});
  spc_tensor_free(&t);
  t = read_expect("ix.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 2\n"
                            "1 1 -4 0.5\n2 3 9 z\n",
                  0, SPC_I64, 2, d, 2, x2, (const int64_t[]){-4, 9});
  spc_tensor_free(&t);
  t = read_expect("c1.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 2\n"
                            "1 1 1.5\n2 3 2 -3\n",
                  0, SPC_C128, 2, d, 2, x2, (const double[]){1.5, 0, 2, -3});
  spc_tensor_free(&t);
  t = read_expect("c0.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 2\n"
                            "1 1\n2 3 2 -3\n",
                  0, SPC_C128, 2, d, 2, x2, (const double[]){0, 0, 2, -3});
  spc_tensor_free(&t);
  /* an array skew-symmetric file read as pattern: its n(n-1)/2 values */
  {
    spc_read_opts o2;
    spc_read_opts_init(&o2);
    o2.vtype = SPC_PATTERN;
    spc_error e2;
    tu_assert_ok(io_read_text("as.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
                              &o2, &t, &e2, NULL),
                 &e2);
    spc_tensor_free(&t);
  }
  t = read_expect("ca.mtx", "%%MatrixMarket matrix array complex general\n2 1\n4\r\n1 2\n", 0,
                  SPC_C128, 2, (const int64_t[]){2, 1}, 2, (const int64_t[]){1, 1, 2, 1},
                  (const double[]){4, 0, 1, 2});
  spc_tensor_free(&t);
  /* skew pattern: (2,1) and (1,1) stored; the mirror of (2,1) is -1 */
  const char *ps = "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 2\n2 1\n1 1\n";
  t = read_expect("ps.mtx", ps, 1, SPC_I64, 2, d, 3, (const int64_t[]){2, 1, 1, 1, 1, 2},
                  (const int64_t[]){1, 1, -1});
  spc_tensor_free(&t);
  t = read_expect("ps.mtx", ps, 0, SPC_I64, 2, d, 2, (const int64_t[]){2, 1, 1, 1},
                  (const int64_t[]){1, 1});
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_SKEW);
  spc_tensor_free(&t);
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.vtype = SPC_PATTERN;
  o.expand = 1;
  spc_error e;
  tu_assert_ok(io_read_text("ps.mtx", ps, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_PATTERN);
  ck_assert_int_eq(spc_tensor_nstored(t), 3);
  spc_tensor_free(&t);
  /* a symmetric kind that is not square: expanded even unasked (every
   * mirror inside; one outside is refused: test_io_bad) */
  const char *sr = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 4 2\n3 1 2.5\n2 2 1\n";
  t = read_expect("sr.mtx", sr, 0, SPC_F64, 2, (const int64_t[]){3, 4}, 3,
                  (const int64_t[]){3, 1, 2, 2, 1, 3}, (const double[]){2.5, 1, -2.5});
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_GENERAL);
  spc_tensor_free(&t);
}
END_TEST

/* A banner's field or symmetry word the standard does not name (LAGraph's
 * mangled3.mtx, mangled4.mtx): read as SciPy reads it -- the field as real,
 * the symmetry as general -- and said in the notice; without a notice
 * buffer the same; an unknown object or format stays an error
 * (test_io_bad). */
START_TEST(test_mtx_lenient_banner) {
  int64_t d[2] = {3, 3};
  char note[256];
  spc_read_opts o;
  io_opts_note(&o, note, sizeof note);
  spc_tensor *t = NULL;
  spc_error e;
  strcpy(note, "stale");
  /* a mangled field on a symmetric file: real values, mirrored */
  const char *mf = "%%MatrixMarket matrix coordinate mangled symmetric\n3 3 2\n2 1 1.5\n3 3 -2\n";
  tu_assert_ok(io_read_text("f.mtx", mf, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_F64);
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_SYMMETRIC);
  ck_assert_msg(strstr(note, "f.mtx:1:34: banner: 'mangled' is no Matrix Market field: read as "
                             "real"),
                "%s", note);
  spc_tensor_free(&t);
  t = read_expect("f.mtx", mf, 1, SPC_F64, 2, d, 3, (const int64_t[]){2, 1, 3, 3, 1, 2},
                  (const double[]){1.5, -2, 1.5});
  spc_tensor_free(&t);
  /* an unknown symmetry: general, nothing mirrored */
  tu_assert_ok(io_read_text("s.mtx",
                            "%%MatrixMarket matrix coordinate real Symmetrical\n3 3 2\n2 1 1.5\n"
                            "3 3 -2\n",
                            &o, &t, &e, NULL),
               &e);
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_GENERAL);
  ck_assert_int_eq(spc_tensor_nstored(t), 2);
  ck_assert_msg(strstr(note, "'symmetrical' is no Matrix Market symmetry: read as general"), "%s",
                note);
  spc_tensor_free(&t);
  /* both, on an array file: one note naming both words */
  tu_assert_ok(io_read_text("b.mtx", "%%MatrixMarket matrix array float whatever\n2 2\n1\n2\n3\n4\n",
                            &o, &t, &e, NULL),
               &e);
  ck_assert_int_eq(spc_tensor_vtype(t), SPC_F64);
  ck_assert_msg(strstr(note, "'float' is no Matrix Market field") &&
                    strstr(note, "'whatever' (column 35) is no symmetry: read as general"),
                "%s", note);
  spc_tensor_free(&t);
  /* a standard banner clears the note */
  tu_assert_ok(io_read_text("g.mtx", RE "3 3 1\n1 1 1\n", &o, &t, &e, NULL), &e);
  ck_assert_str_eq(note, "");
  spc_tensor_free(&t);
}
END_TEST

/* Numbers with Python's underscores (one between two digits), as SciPy
 * 1.10's reader (int(), float()) takes them: indices, values of every kind,
 * the size line, array files, FROSTT; any other underscore is refused where
 * it stands. */
START_TEST(test_underscores) {
  int64_t d[2] = {10, 10};
  spc_tensor *t = read_expect(
      "u.mtx", RE "1_0 1_0 3\n1_0 1 2_5.0_1e1_0\n2 2 -1_0\n+0_3 1_0 1e-0_1\n", 1, SPC_F64, 2, d,
      3, (const int64_t[]){10, 1, 2, 2, 3, 10}, (const double[]){250100000000.0, -10, 0.1});
  spc_tensor_free(&t);
  t = read_expect("i.mtx",
                  "%%MatrixMarket matrix coordinate integer general\n10 10 2\n1 1 1_000_000\n"
                  "2 2 -9_223_372_036_854_775_808\n",
                  1, SPC_I64, 2, d, 2, (const int64_t[]){1, 1, 2, 2},
                  (const int64_t[]){1000000, INT64_MIN});
  spc_tensor_free(&t);
  /* past INT64_MAX: uint64, as without underscores */
  t = read_expect("w.mtx",
                  "%%MatrixMarket matrix coordinate integer general\n10 10 1\n1 1 "
                  "18_446_744_073_709_551_615\n",
                  1, SPC_U64, 2, d, 1, (const int64_t[]){1, 1}, (const uint64_t[]){UINT64_MAX});
  spc_tensor_free(&t);
  int64_t d21[2] = {2, 1};
  t = read_expect("a.mtx", "%%MatrixMarket matrix array real general\n2 1\n1_0\n2.5_5\n", 1,
                  SPC_F64, 2, d21, 2, (const int64_t[]){1, 1, 2, 1}, (const double[]){10, 2.55});
  spc_tensor_free(&t);
  int64_t d3[3] = {2, 10, 1};
  t = read_expect("t.tns", "1 1_0 1 2.5\n2 1 1 1_5\n", 1, SPC_F64, 3, d3, 2,
                  (const int64_t[]){1, 10, 1, 2, 1, 1}, (const double[]){2.5, 15});
  spc_tensor_free(&t);
  static const struct {
    const char *text, *what;
    int64_t col;
  } bad[] = {
      {RE "2 2 1\n1 1 1__0\n", "expected a real value", 5},
      {RE "2 2 1\n1 1 _1\n", "expected a real value", 5},
      {RE "2 2 1\n1 1 1_\n", "expected a real value", 5},
      {RE "2 2 1\n1 1 1_.5\n", "expected a real value", 5},
      {RE "2 2 1\n1 1 1e_5\n", "expected a real value", 5},
      {RE "2 2 1\n1_ 1 1\n", "expected a positive integer row index", 1},
      {RE "2_ 2 1\n1 1 1\n", "size line", 1},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 99_999_999_999_999_999_999\n",
       "integer value does not fit uint64", 5},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    spc_read_opts o;
    spc_read_opts_init(&o);
    spc_error e;
    t = NULL;
    spc_status st = io_read_text("b.mtx", bad[k].text, &o, &t, &e, NULL);
    ck_assert_msg(st != SPC_OK && !t, "%s: read", bad[k].text);
    ck_assert_msg(strstr(e.msg, bad[k].what) && e.col == bad[k].col, "%s: %s (col %lld)",
                  bad[k].text, e.msg, (long long)e.col);
  }
}
END_TEST

/* Zeros of an array file are padding, not stored entries, once the matrix
 * leaves the dense layout -- written to .npz / .bsp.h5 / .tns or converted
 * -- as SciPy reads them; the symmetric and skew kinds (whose mirrored
 * dense layout was expanded again, keeping the zero diagonal) too. */
START_TEST(test_mtx_array_zeros_leave_dense) {
  char *dir = tu_mkdtemp();
  const char *texts[] = {"%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
                         "%%MatrixMarket matrix array real symmetric\n3 3\n0\n1\n2\n0\n3\n0\n",
                         "%%MatrixMarket matrix array integer general\n3 2\n0\n1\n2\n0\n3\n0\n"};
  const int64_t want_n[] = {6, 6, 3};
  const char *outs[] = {"o.npz", "o.bsp.h5", "o.tns"};
  spc_error e;
  for (int f = 0; f < 3; f++) {
    char *in = tu_file(dir, "a.mtx", texts[f]);
    spc_tensor *t = tu_read_ok(in, 0, SPC_VTYPE_AUTO), *b = NULL, *c = NULL;
    ck_assert_str_eq(spc_tensor_format(t), "dense");
    for (int k = 0; k < 3; k++) {
      char *out = tu_path(dir, outs[k]);
      spc_read_opts ro; /* .tns does not record the value type */
      spc_read_opts_init(&ro);
      ro.vtype = spc_tensor_vtype(t);
      tu_assert_ok(spc_write(t, out, NULL, &e), &e);
      tu_assert_ok(spc_read(out, &ro, &b, &e), &e);
      ck_assert_msg(spc_tensor_nstored(b) == want_n[f], "%s -> %s: %lld stored, want %lld",
                    texts[f], outs[k], (long long)spc_tensor_nstored(b), (long long)want_n[f]);
      tu_assert_ok(spc_tensor_to_coo(t, 1, &c, &e), &e);
      tu_assert_same_tensor(c, b, 0, outs[k]);
      spc_tensor_free(&c);
      spc_tensor_free(&b);
      free(out);
    }
    spc_convert_opts co;
    spc_convert_opts_init(&co);
    tu_assert_ok(spc_convert_to(t, "csr", &co, &b, &e), &e);
    ck_assert_int_eq(spc_tensor_nstored(b), want_n[f]);
    tu_assert_ok(spc_tensor_to_coo(t, 1, &c, &e), &e);
    tu_assert_same_tensor(c, b, 0, "to csr");
    spc_tensor_free(&c);
    spc_tensor_free(&b);
    spc_tensor_free(&t);
    free(in);
  }
  /* the skew one: 2 at (3,1), -2 at (1,3) */
  char *in = tu_file(dir, "k.mtx", texts[0]);
  spc_tensor *t = tu_read_ok(in, 0, SPC_VTYPE_AUTO), *b = NULL;
  spc_convert_opts co;
  spc_convert_opts_init(&co);
  tu_assert_ok(spc_convert_to(t, "coo", &co, &b, &e), &e);
  spc_iter *it = NULL;
  int64_t x[2];
  const void *v;
  double sum13 = 0, sum31 = 0;
  int n = 0;
  tu_assert_ok(spc_iter_create(b, &it, &e), &e);
  while (spc_iter_next(it, x, &v)) {
    ck_assert_int_ne(x[0], x[1]);
    if (x[0] == 0 && x[1] == 2) sum13 += *(const double *)v;
    if (x[0] == 2 && x[1] == 0) sum31 += *(const double *)v;
    n++;
  }
  spc_iter_free(&it);
  ck_assert_int_eq(n, 6);
  ck_assert_double_eq(sum31, 2);
  ck_assert_double_eq(sum13, -2);
  spc_tensor_free(&b);
  spc_tensor_free(&t);
  free(in);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_mtx_symmetric_coordinate) {
  int64_t d[2] = {3, 3};
  /* hermitian: (1,1)=1, (2,1)=2-1i, (3,3)=5 */
  const char *herm = "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n"
                     "1 1 1 0\n2 1 2 -1\n3 3 5 0\n";
  const int64_t xh[] = {1, 1, 2, 1, 1, 2, 3, 3};
  const double vh[] = {1, 0, 2, -1, 2, 1, 5, 0};
  spc_tensor *t = read_expect("h.mtx", herm, 1, SPC_C128, 2, d, 4, xh, vh);
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_GENERAL);
  spc_tensor_free(&t);
  /* unexpanded: stored as in the file, symmetry recorded */
  const int64_t xs[] = {1, 1, 2, 1, 3, 3};
  const double vs[] = {1, 0, 2, -1, 5, 0};
  t = read_expect("h.mtx", herm, 0, SPC_C128, 2, d, 3, xs, vs);
  ck_assert_int_eq(spc_tensor_symmetry(t), SPC_HERMITIAN);
  spc_tensor_free(&t);
  /* pattern symmetric */
  const int64_t xp[] = {2, 1, 1, 2, 3, 3, 3, 2, 2, 3};
  t = read_expect("p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n"
                           "2 1\n3 3\n3 2\n",
                  1, SPC_PATTERN, 2, d, 5, xp, NULL);
  spc_tensor_free(&t);
  /* skew integer */
  const int64_t xk[] = {2, 1, 1, 2, 3, 1, 1, 3};
  const int64_t vk[] = {4, -4, -9, 9};
  t = read_expect("k.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n"
                           "2 1 4\n3 1 -9\n",
                  1, SPC_I64, 2, d, 4, xk, vk);
  spc_tensor_free(&t);
}
END_TEST

/* Vectors and empty matrices through every container and back. */
START_TEST(test_small_shapes_round_trip) {
  static const char *const texts[] = {
      "%%MatrixMarket vector coordinate real general\n5 2\n2 1.5\n5 -1\n",
      "%%MatrixMarket vector array integer general\n3\n1\n-2\n0\n",
      "%%MatrixMarket matrix array real general\n0 0\n",
      RE "0 7 0\n",
      "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
      /* no rows, 10^12 columns (column-major: a dense level of 10^12
       * positions over an empty one), and the transpose: nothing to walk
       * (both once spent hours walking 10^12 empty columns) */
      "%%MatrixMarket matrix array real general\n0 1000000000000\n",
      "%%MatrixMarket matrix array integer general\n1000000000000 0\n"};
  static const char *const exts[] = {"mtx", "tns", "bsp.h5", "npz"};
  char *dir = tu_mkdtemp();
  for (int i = 0; i < 7; i++) {
    char *in = tu_file(dir, "in.mtx", texts[i]);
    spc_tensor *t = tu_read_ok(in, 0, SPC_VTYPE_AUTO), *x = NULL, *a = NULL;
    spc_error e;
    tu_assert_ok(spc_tensor_expand(t, &x, &e), &e);
    tu_assert_ok(spc_tensor_to_coo(x, 1, &a, &e), &e); /* nonzeros */
    int order = spc_tensor_order(t);
    for (int k = 0; k < 4; k++) {
      char name[32], what[96];
      snprintf(name, sizeof name, "out.%s", exts[k]);
      snprintf(what, sizeof what, "text %d -> %s", i, exts[k]);
      char *out = tu_path(dir, name);
      spc_status s = spc_write(t, out, NULL, &e);
      if (k == 3 && order != 2) {
        ck_assert_msg(s == SPC_ERR_UNSUPPORTED, "%s: %s", what, spc_status_name(s));
        ck_assert(!tu_exists(out));
        free(out);
        continue;
      }
      ck_assert_msg(s == SPC_OK, "%s: %s", what, e.msg);
      spc_read_opts o;
      spc_read_opts_init(&o);
      o.expand = 1;
      if (k == 1) { /* FROSTT: no sizes, no type in the file */
        o.vtype = spc_tensor_vtype(t);
        o.ndims = order;
        for (int d = 0; d < order; d++) o.dims[d] = spc_tensor_dim(t, d);
      }
      spc_tensor *back = NULL, *b = NULL;
      s = spc_read(out, &o, &back, &e);
      ck_assert_msg(s == SPC_OK, "%s, read back: %s", what, e.msg);
      tu_assert_ok(spc_tensor_to_coo(back, 1, &b, &e), &e);
      tu_assert_same_tensor(a, b, 0, what);
      spc_tensor_free(&b);
      spc_tensor_free(&back);
      unlink(out);
      free(out);
    }
    spc_tensor_free(&a);
    spc_tensor_free(&x);
    spc_tensor_free(&t);
    unlink(in);
    free(in);
  }
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- FROSTT ---------------------------------------------------------------- */

START_TEST(test_tns_comments_blanks) {
  int64_t d[3] = {2, 2, 3};
  const int64_t x[] = {1, 2, 3, 2, 1, 1, 2, 2, 1};
  const double v[] = {1.5, -2, 7};
  const char *texts[] = {"# c\n\n1 2 3 1.5\n  # indented\n2 1 1 -2\n\n2 2 1 7\n",
                         "1 2 3 1.5\r\n2 1 1 -2\r\n# c\r\n\r\n2 2 1 7",
                         "  1\t2\t3\t1.5e0  \n\t2 1 1 -2.0\n2 2 1 +7\n\n\n",
                         "1\f2\v3 1.5\f\n\f\n2 1 1\v-2\n\v\n2 2 1 7\n"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    spc_tensor *t = read_expect("c.tns", texts[i], 0, SPC_F64, 3, d, 3, x, v);
    spc_tensor_free(&t);
  }
}
END_TEST

/* Orders 1 to 5, generated; dimensions inferred from the largest index. */
START_TEST(test_tns_orders) {
  int order = _i + 1;
  char text[4096];
  int len = 0, n = 7;
  int64_t x[7 * 5], dims[5] = {0};
  double v[7];
  for (int k = 0; k < n; k++) {
    for (int d = 0; d < order; d++) {
      x[k * order + d] = 1 + (k * 7 + d * 3) % (4 + d);
      if (x[k * order + d] > dims[d]) dims[d] = x[k * order + d];
      len += sprintf(text + len, "%lld ", (long long)x[k * order + d]);
    }
    v[k] = (k - 3) * 0.25;
    len += sprintf(text + len, "%.17g\n", v[k]);
  }
  spc_tensor *t = read_expect("o.tns", text, 0, SPC_F64, order, dims, n, x, v);
  ck_assert_int_eq(spc_tensor_order(t), order);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_tns_given_dims) {
  const char *text = "1 2 3 1.5\n2 1 1 -2\n";
  spc_read_opts o;
  spc_read_opts_init(&o);
  spc_tensor *t = NULL;
  spc_error e;
  /* inferred */
  tu_assert_ok(io_read_text("d.tns", text, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 2);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 2);
  ck_assert_int_eq(spc_tensor_dim(t, 2), 3);
  spc_tensor_free(&t);
  /* given, larger than the data */
  o.ndims = 3;
  o.dims[0] = 5, o.dims[1] = 6, o.dims[2] = 7;
  tu_assert_ok(io_read_text("d.tns", text, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 5);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 6);
  ck_assert_int_eq(spc_tensor_dim(t, 2), 7);
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  spc_tensor_free(&t);
  /* given dims also give the order of a file without entries */
  tu_assert_ok(io_read_text("d.tns", "# nothing\n", &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_order(t), 3);
  ck_assert_int_eq(spc_tensor_nstored(t), 0);
  ck_assert_int_eq(spc_tensor_dim(t, 2), 7);
  spc_tensor_free(&t);
  /* given dims past 2^31 need 64-bit coordinates; inferred small ones not */
  o.dims[0] = 3000000000LL;
  tu_assert_ok(io_read_text("d.tns", text, &o, &t, &e, NULL), &e);
  spc_itype ty;
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "crd", NULL, &ty, NULL), SPC_OK);
  ck_assert_int_eq(ty, SPC_IDX64);
  ck_assert_int_eq(spc_tensor_level_array(t, 1, "crd", NULL, &ty, NULL), SPC_OK);
  ck_assert_int_eq(ty, SPC_IDX32);
  spc_tensor_free(&t);
  spc_read_opts_init(&o);
  tu_assert_ok(io_read_text("d.tns", "3000000000 1 1 1\n1 70000 2 2\n", &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 3000000000LL);
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "crd", NULL, &ty, NULL), SPC_OK);
  ck_assert_int_eq(ty, SPC_IDX64);
  ck_assert_int_eq(spc_tensor_level_array(t, 1, "crd", NULL, &ty, NULL), SPC_OK);
  ck_assert_int_eq(ty, SPC_IDX32);
  ck_assert_int_le(spc_tensor_bytes(t), 256);
  spc_tensor_free(&t);
  /* a file that states its dimensions: equal ones given are fine, others
   * refused naming both (they were ignored) -- Matrix Market plain, gzip,
   * and npz */
  static const char mm[] = "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.5\n2 3 -2\n";
  o.ndims = 2;
  o.dims[0] = 2, o.dims[1] = 3;
  tu_assert_ok(io_read_text("d.mtx", mm, &o, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 3);
  char *dir = tu_mkdtemp(), *npz = tu_path(dir, "d.npz"), *gz = tu_path(dir, "d.mtx.gz");
  tu_assert_ok(spc_write(t, npz, NULL, &e), &e);
  tu_assert_ok(spc_write(t, gz, NULL, &e), &e);
  spc_tensor_free(&t);
  for (int k = 0; k < 3; k++) {
    o.ndims = k == 2 ? 3 : 2;
    o.dims[0] = k == 0 ? 5 : 2, o.dims[1] = k == 1 ? 4 : 3, o.dims[2] = 1;
    ck_assert_int_eq(io_read_text("d.mtx", mm, &o, &t, &e, NULL), SPC_ERR_ARG);
    ck_assert_ptr_null(t);
    static const char *const want[] = {"(5 x 3) differ", "(2 x 4) differ", "(2 x 3 x 1) differ"};
    ck_assert_msg(strstr(e.msg, want[k]) && strstr(e.msg, "from the file's own (2 x 3)"),
                  "%s", e.msg);
    for (int f = 0; f < 2; f++) {
      ck_assert_int_eq(spc_read(f ? gz : npz, &o, &t, &e), SPC_ERR_ARG);
      ck_assert_ptr_null(t);
      ck_assert_msg(strstr(e.msg, "differ from the file's own (2 x 3)"), "%s", e.msg);
    }
  }
  tu_rmtree(dir);
  free(npz), free(gz), free(dir);
  spc_read_opts_init(&o);
  /* integer values on request */
  o.vtype = SPC_I64;
  tu_assert_ok(io_read_text("d.tns", "1 1 -9007199254740993\n", &o, &t, &e, NULL), &e);
  ck_assert_int_eq(((const int64_t *)spc_tensor_values(t, NULL))[0], -9007199254740993LL);
  spc_tensor_free(&t);
}
END_TEST

/* ---- the parallel parser on a file of several MB ---------------------------- */

/* A coordinate file of n entries (~6 MB for n = 300000), deterministic. */
static char *big_text(int n, bool tns, size_t *len) {
  size_t cap = (size_t)n * 48 + 256, k = 0;
  char *s = malloc(cap);
  if (!tns) k += (size_t)sprintf(s, "%s%% big\n100000 70000 %d\n", RE, n);
  uint64_t r = 88172645463325252ULL;
  for (int i = 0; i < n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    if (i % 5000 == 17) s[k++] = '\n'; /* blank lines */
    if (i % 7919 == 3) k += (size_t)sprintf(s + k, "%c comment line\n", tns ? '#' : '%');
    k += (size_t)sprintf(s + k, "%d %d %.*g\n", (int)(r % 100000) + 1,
                         (int)((r >> 20) % 70000) + 1, 1 + (int)(r >> 60),
                         (double)(int64_t)(r >> 11) * 0x1p-40 - 1000.0);
  }
  s[k] = 0;
  *len = k;
  return s;
}

typedef struct progress_log {
  int calls;
  double last, max;
} progress_log;

static void on_progress(void *ctx, const char *what, double done) {
  progress_log *l = ctx;
  (void)what;
  l->calls++;
  l->last = done;
  if (done > l->max) l->max = done;
}

START_TEST(test_parallel_parse) {
  size_t len;
  char *text = big_text(300000, false, &len);
  ck_assert_uint_gt(len, 6u << 20);
  spc_read_opts o;
  spc_read_opts_init(&o);
  spc_tensor *t1 = NULL, *t3 = NULL;
  spc_error e;
  o.threads = 1;
  tu_assert_ok(spc_read_text("big.mtx", text, len, &o, &t1, &e), &e);
  o.threads = 3;
  progress_log pl = {0, -1, -1};
  o.progress = on_progress;
  o.progress_ctx = &pl;
  tu_assert_ok(spc_read_text("big.mtx", text, len, &o, &t3, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(t1), 300000);
  ck_assert_int_gt(pl.calls, 0); /* the progress hook ends at 1.0 */
  ck_assert(pl.last == 1.0 && pl.max == 1.0);
  /* the same components in the same stored order, bit for bit */
  spc_iter *a = NULL, *b = NULL;
  tu_assert_ok(spc_iter_create(t1, &a, &e), &e);
  tu_assert_ok(spc_iter_create(t3, &b, &e), &e);
  int64_t xa[2], xb[2];
  const void *va, *vb;
  int64_t k = 0;
  while (spc_iter_next(a, xa, &va)) {
    tu_check(spc_iter_next(b, xb, &vb) == 1, "3 threads: fewer components");
    tu_check(xa[0] == xb[0] && xa[1] == xb[1] &&
                  tu_same_f64(*(const double *)va, *(const double *)vb),
                  "component %lld differs between 1 and 3 threads", (long long)k);
    k++;
  }
  ck_assert_int_eq(k, 300000);
  spc_iter_free(&a);
  spc_iter_free(&b);
  /* every value equals strtod of its token */
  const double *v = spc_tensor_values(t3, NULL);
  char *p = strchr(text, '\n') + 1;
  p = strchr(p, '\n') + 1;
  p = strchr(p, '\n') + 1; /* past banner, comment, size line */
  for (k = 0; *p; p = strchr(p, '\n') + 1) {
    if (*p == '\n' || *p == '%') continue;
    char *q = strchr(strchr(p, ' ') + 1, ' ') + 1;
    tu_check(tu_same_f64(v[k], strtod(q, NULL)), "value %lld", (long long)k);
    k++;
  }
  spc_tensor_free(&t1);
  spc_tensor_free(&t3);
  free(text);
}
END_TEST

/* Errors found by any chunk report the earliest line, whatever the
 * number of threads. */
START_TEST(test_parallel_errors) {
  size_t len;
  char *text = big_text(300000, true, &len);
  /* line numbers of two entries far apart */
  int64_t line = 1, l1 = 0, l2 = 0;
  char *e1 = NULL, *e2 = NULL;
  for (char *p = text; *p; p = strchr(p, '\n') + 1, line++) {
    if (!e1 && p - text > (long)(len / 2) && *p != '#' && *p != '\n') e1 = p, l1 = line;
    if (!e2 && p - text > (long)(len * 9 / 10) && *p != '#' && *p != '\n') e2 = p, l2 = line;
  }
  ck_assert_ptr_nonnull(e2);
  spc_read_opts o;
  spc_read_opts_init(&o);
  for (int threads = 1; threads <= 4; threads += 3) {
    o.threads = threads;
    spc_tensor *t = NULL;
    spc_error e;
    char keep1 = e1[0], keep2 = e2[0];
    e2[0] = 'x'; /* late error only */
    spc_error_clear(&e);
    ck_assert_int_eq(spc_read_text("big.tns", text, len, &o, &t, &e), SPC_ERR_INPUT);
    ck_assert_int_eq(e.line, l2);
    ck_assert_int_eq(e.col, 1);
    ck_assert_ptr_null(t);
    e1[0] = 'x'; /* an earlier one too */
    spc_error_clear(&e);
    ck_assert_int_eq(spc_read_text("big.tns", text, len, &o, &t, &e), SPC_ERR_INPUT);
    ck_assert_int_eq(e.line, l1);
    e1[0] = keep1;
    e2[0] = keep2;
  }
  free(text);
  /* a Matrix Market header announcing one entry fewer than the file has */
  text = big_text(300000, false, &len);
  char *sz = strstr(text, " 300000\n");
  memcpy(sz, " 299999\n", 8);
  int64_t last = 0;
  line = 1;
  for (char *p = text; *p; p = strchr(p, '\n') + 1, line++)
    if (*p != '%' && *p != '\n') last = line;
  spc_tensor *t = NULL;
  spc_error e;
  o.threads = 3;
  ck_assert_int_eq(spc_read_text("big.mtx", text, len, &o, &t, &e), SPC_ERR_INPUT);
  ck_assert_int_eq(e.line, last); /* the first entry past the announced count */
  free(text);
}
END_TEST

void io_add_text_tcases(Suite *s) {
  TCase *tc = tcase_create("mtx_variants");
  tcase_add_test(tc, test_mtx_spacing);
  tcase_add_test(tc, test_mtx_special_values);
  tcase_add_test(tc, test_mtx_fields);
  tcase_add_test(tc, test_mtx_array_zeros);
  tcase_add_test(tc, test_mtx_unsigned_field);
  tcase_add_test(tc, test_mtx_read_as_type);
  tcase_add_test(tc, test_mtx_vectors);
  tcase_add_test(tc, test_mtx_arrays);
  tcase_add_test(tc, test_mtx_symmetric_coordinate);
  tcase_add_test(tc, test_mtx_hermitian_not_complex);
  tcase_add_test(tc, test_mtx_as_scipy_reads);
  tcase_add_test(tc, test_mtx_lenient_banner);
  tcase_add_test(tc, test_underscores);
  tcase_add_test(tc, test_mtx_array_zeros_leave_dense);
  tcase_add_test(tc, test_small_shapes_round_trip);
  suite_add_tcase(s, tc);
  tc = tcase_create("tns_variants");
  tcase_add_test(tc, test_tns_comments_blanks);
  tcase_add_loop_test(tc, test_tns_orders, 0, 5);
  tcase_add_test(tc, test_tns_given_dims);
  suite_add_tcase(s, tc);
  tc = tcase_create("parallel_parse");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_parallel_parse);
  tcase_add_test(tc, test_parallel_errors);
  suite_add_tcase(s, tc);
}
