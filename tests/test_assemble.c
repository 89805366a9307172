/* test_assemble.c -- suite_assemble: the conversion engine's generic path
 * (assemble/).  Every built-in matrix format on small hand-made matrices
 * (duplicates, unsorted, empty rows, hypersparse, explicit zeros, empty)
 * and on every shared matrix: spc_convert then spc_convert_to_coo gives
 * exactly the components of spc_tensor_combine(expanded source, SUM), or
 * the documented refusal (explicit zeros into fill: zero formats, entries
 * above the diagonal into sky, a padded layout over the size limit).  CSR's
 * arrays are checked against a plain C CSR. */
#include "spc_assemble.h"
#include "suites.h"
#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tfmt {
  const char *name, *label;
  int np;
  spc_remap_param ps[2];
} tfmt;

static const tfmt fmts[] = {
    {"coo", "coo", 0, {{0}}},       {"csr", "csr", 0, {{0}}},
    {"csc", "csc", 0, {{0}}},       {"dcsr", "dcsr", 0, {{0}}},
    {"dcsc", "dcsc", 0, {{0}}},     {"dia", "dia", 0, {{0}}},
    {"ell", "ell", 0, {{0}}},       {"bcsr", "bcsr2x2", 2, {{"M", 2}, {"N", 2}}},
    {"bcsr", "bcsr3x2", 2, {{"M", 3}, {"N", 2}}},
    {"sky", "sky", 0, {{0}}},       {"morton", "morton", 0, {{0}}},
    {"dense", "dense", 0, {{0}}},   {"csf", "csf", 0, {{0}}},
};
#define NFMT ((int)(sizeof fmts / sizeof fmts[0]))

enum { R_OK, R_ZEROS, R_UPPER, R_LARGE };

static spc_specs *specs_ok(void) {
  spc_specs *r = NULL;
  spc_error e;
  tu_assert_ok(spc_specs_builtin(&r, &e), &e);
  return r;
}

static spc_tensor *matrix(int64_t rows, int64_t cols, int n, const int64_t *ij,
                          const double *v) {
  int64_t dims[2] = {rows, cols};
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(2, dims, n, SPC_F64, &t, &e), &e);
  for (int l = 0; l < 2; l++) {
    spc_itype ty;
    ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), SPC_OK);
    void *p = spc_tensor_level_array_mut(t, l, "crd");
    for (int k = 0; k < n; k++) {
      if (ty == SPC_IDX32) ((int32_t *)p)[k] = (int32_t)ij[2 * k + l];
      else ((int64_t *)p)[k] = ij[2 * k + l];
    }
  }
  if (n) memcpy(spc_tensor_values_mut(t), v, (size_t)n * sizeof *v);
  return t;
}

static bool has_zero(const spc_tensor *ref) {
  int64_t n;
  const void *v = spc_tensor_values(ref, &n);
  spc_vtype vt = spc_tensor_vtype(ref);
  size_t w = spc_vtype_size(vt);
  for (int64_t k = 0; w && k < n; k++) {
    const char *x = (const char *)v + k * (int64_t)w;
    bool z = vt == SPC_I64 ? *(const int64_t *)x == 0
             : vt == SPC_U64 ? *(const uint64_t *)x == 0
             : vt == SPC_F32 ? *(const float *)x == 0
             : vt == SPC_F64 ? *(const double *)x == 0
                             : ((const double *)x)[0] == 0 && ((const double *)x)[1] == 0;
    if (z) return true;
  }
  return false;
}

static int64_t crd_at(const spc_tensor *t, int l, int64_t k) {
  const void *d;
  spc_itype ty;
  spc_tensor_level_array(t, l, "crd", &d, &ty, NULL);
  return ty == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

static bool has_upper(const spc_tensor *ref) {
  int64_t n = spc_tensor_nstored(ref);
  for (int64_t k = 0; k < n; k++)
    if (crd_at(ref, 1, k) > crd_at(ref, 0, k)) return true;
  return false;
}

static int64_t arr_get(const void *d, spc_itype ty, int64_t k) {
  return ty == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

/* CSR's pos/crd/values against a plain C CSR of the combined source. */
static void check_csr_arrays(const spc_tensor *conv, const spc_tensor *ref) {
  int64_t rows = spc_tensor_dim(ref, 0), n = spc_tensor_nstored(ref);
  int64_t *pos = calloc((size_t)rows + 1, sizeof *pos);
  for (int64_t k = 0; k < n; k++) pos[crd_at(ref, 0, k) + 1]++;
  for (int64_t i = 0; i < rows; i++) pos[i + 1] += pos[i];
  const void *p, *c;
  spc_itype pt, ct;
  int64_t pl, cl, nv;
  tu_assert_ok(spc_tensor_level_array(conv, 1, "pos", &p, &pt, &pl), NULL);
  tu_assert_ok(spc_tensor_level_array(conv, 1, "crd", &c, &ct, &cl), NULL);
  ck_assert_int_eq(pl, rows + 1);
  ck_assert_int_eq(cl, n);
  for (int64_t i = 0; i <= rows; i++)
    tu_check(arr_get(p, pt, i) == pos[i], "pos[%lld]", (long long)i);
  for (int64_t k = 0; k < n; k++) /* ref is sorted by (i, j): CSR order */
    tu_check(arr_get(c, ct, k) == crd_at(ref, 1, k), "crd[%lld]", (long long)k);
  const void *cv = spc_tensor_values(conv, &nv), *rv = spc_tensor_values(ref, NULL);
  size_t w = spc_vtype_size(spc_tensor_vtype(ref));
  ck_assert_int_eq(nv, n);
  if (w && n) ck_assert(memcmp(cv, rv, (size_t)n * w) == 0);
  free(pos);
}

/* Convert and read back; the result kind (R_*). */
static int roundtrip(const spc_specs *S, const tfmt *tf, const spc_tensor *src,
                     int64_t limit, const char *label) {
  spc_error e;
  spc_tensor *ex = NULL, *ref = NULL, *conv = NULL, *back = NULL, *sorted = NULL;
  const spc_format_spec *fs = spc_specs_format(S, tf->name);
  ck_assert_msg(fs != NULL, "no format %s", tf->name);
  tu_assert_ok(spc_tensor_expand(src, &ex, &e), &e);
  tu_assert_ok(spc_tensor_combine(ex, SPC_DUP_SUM, &ref, &e), &e);
  spc_convert_opts o = {.max_positions = limit};
  spc_error_clear(&e);
  spc_status st = spc_convert_ex(src, S, fs, tf->ps, tf->np, SPC_DUP_SUM, &o, &conv, &e);
  int kind = R_OK;
  if (st == SPC_ERR_UNSUPPORTED) {
    if (strstr(e.msg, "explicit zeros")) {
      kind = R_ZEROS;
      ck_assert_msg(fs->fill_zero && has_zero(ref), "%s -> %s: %s", label, tf->label, e.msg);
    } else if (strstr(e.msg, "requires j <= i")) {
      kind = R_UPPER;
      ck_assert_msg(!strcmp(tf->name, "sky") && has_upper(ref), "%s -> %s: %s", label, tf->label, e.msg);
    } else {
      kind = R_LARGE;
      ck_assert_msg(strstr(e.msg, "too large"), "%s -> %s: %s", label, tf->label, e.msg);
    }
  } else {
    char b[1200];
    ck_assert_msg(st == SPC_OK, "%s -> %s: %s", label, tf->label, spc_error_string(&e, b, sizeof b));
    ck_assert_str_eq(spc_tensor_format(conv), tf->name);
    ck_assert(spc_is_converted(conv));
    st = spc_convert_to_coo(conv, &back, &e);
    ck_assert_msg(st == SPC_OK, "%s <- %s: %s", label, tf->label, spc_error_string(&e, b, sizeof b));
    st = spc_tensor_combine(back, SPC_DUP_ERROR, &sorted, &e);
    ck_assert_msg(st == SPC_OK, "%s <- %s: %s", label, tf->label, spc_error_string(&e, b, sizeof b));
    char why[512];
    int d = tu_combined_diff(sorted, ref, TU_PATTERN_AS_ONE, why, sizeof why);
    ck_assert_msg(d == 0, "%s -> %s -> coo: %s", label, tf->label, why);
    if (!strcmp(tf->name, "csr")) check_csr_arrays(conv, ref);
  }
  if (kind != R_OK && getenv("SPC_ASSEMBLE_VERBOSE"))
    fprintf(stderr, "refused %s -> %s: %s\n", label, tf->label, e.msg);
  spc_tensor_free(&ex);
  spc_tensor_free(&ref);
  spc_tensor_free(&conv);
  spc_tensor_free(&back);
  spc_tensor_free(&sorted);
  return kind;
}

/* ---- hand-made matrices ------------------------------------------------- */

/* 4 x 5: unsorted, duplicates, an empty row */
static const int64_t m1_ij[] = {2, 1, 0, 4, 2, 1, 3, 0, 0, 0, 3, 4, 2, 3};
static const double m1_v[] = {1.5, 2, 0.25, -1, 3, 7, 4};
/* hypersparse 1000 x 800 */
static const int64_t m2_ij[] = {999, 0, 5, 799, 500, 400, 5, 799};
static const double m2_v[] = {1, 2, 3, 4};
/* lower triangular 5 x 5 with duplicates and an empty row */
static const int64_t m3_ij[] = {4, 0, 0, 0, 2, 2, 4, 4, 2, 0, 4, 0, 3, 3};
static const double m3_v[] = {1, 2, 3, 4, 5, 6, 7};
/* explicit zero, and duplicates summing to zero */
static const int64_t m4_ij[] = {1, 1, 0, 2, 2, 0, 2, 0};
static const double m4_v[] = {9, 0.0, 1, -1};

START_TEST(test_small) {
  spc_specs *S = specs_ok();
  struct { spc_tensor *t; const char *name; } m[] = {
      {matrix(4, 5, 7, m1_ij, m1_v), "m1"},
      {matrix(1000, 800, 4, m2_ij, m2_v), "hypersparse"},
      {matrix(5, 5, 7, m3_ij, m3_v), "lower"},
      {matrix(3, 3, 4, m4_ij, m4_v), "zeros"},
      {matrix(3, 4, 0, NULL, NULL), "empty"},
  };
  for (int k = 0; k < 5; k++)
    for (int f = 0; f < NFMT; f++) {
      int r = roundtrip(S, &fmts[f], m[k].t, 0, m[k].name);
      bool fz = spc_specs_format(S, fmts[f].name)->fill_zero;
      if (k == 3 && fz) /* sky: (1, 3) is above the diagonal too */
        ck_assert_msg(r == R_ZEROS || (r == R_UPPER && !strcmp(fmts[f].name, "sky")),
                      "zeros -> %s", fmts[f].label);
      else if (!strcmp(fmts[f].name, "sky") && (k == 0 || k == 1))
        ck_assert_msg(r == R_UPPER, "%s -> sky", m[k].name);
      else ck_assert_msg(r == R_OK, "%s -> %s refused", m[k].name, fmts[f].label);
    }
  for (int k = 0; k < 5; k++) spc_tensor_free(&m[k].t);
  spc_specs_free(&S);
}
END_TEST

START_TEST(test_refusals) {
  spc_specs *S = specs_ok();
  spc_tensor *t = matrix(4, 5, 7, m1_ij, m1_v), *out = NULL;
  spc_error e;
  const spc_format_spec *sky = spc_specs_format(S, "sky");
  ck_assert_int_eq(spc_convert(t, S, sky, NULL, 0, SPC_DUP_SUM, &out, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_str_eq(e.msg, "cannot hold entry (1, 5): requires j <= i");
  spc_tensor_free(&t);
  t = matrix(3, 3, 4, m4_ij, m4_v);
  ck_assert_int_eq(spc_convert(t, S, spc_specs_format(S, "dia"), NULL, 0, SPC_DUP_SUM, &out, &e),
                   SPC_ERR_UNSUPPORTED);
  ck_assert_str_eq(e.msg, "cannot hold the 2 explicit zeros of this tensor: format dia pads with zeros");
  /* dup policies act before the remapping: first keeps 2,0 -> 1 */
  ck_assert_int_eq(spc_convert(t, S, spc_specs_format(S, "csr"), NULL, 0, SPC_DUP_ERROR, &out, &e),
                   SPC_ERR_INPUT);
  spc_remap_param bad = {"Q", 2};
  ck_assert_int_eq(spc_convert(t, S, spc_specs_format(S, "bcsr"), &bad, 1, SPC_DUP_SUM, &out, &e),
                   SPC_ERR_ARG);
  spc_tensor_free(&t);
  /* the size limit */
  t = matrix(1000, 800, 4, m2_ij, m2_v);
  spc_convert_opts o = {.max_positions = 1000};
  ck_assert_int_eq(spc_convert_ex(t, S, spc_specs_format(S, "dense"), NULL, 0, SPC_DUP_SUM, &o, &out, &e),
                   SPC_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(e.msg, "too large") != NULL, "%s", e.msg);
  ck_assert(!spc_is_converted(t));
  ck_assert_int_eq(spc_convert_to_coo(t, &out, &e), SPC_ERR_ARG);
  spc_tensor_free(&t);
  spc_specs_free(&S);
}
END_TEST

START_TEST(test_csr_arrays_types) {
  /* CSR of a small matrix: 32-bit arrays, native levels (spc_iter works) */
  spc_specs *S = specs_ok();
  spc_tensor *t = matrix(4, 5, 7, m1_ij, m1_v), *out = NULL, *c = NULL, *ref = NULL;
  spc_error e;
  tu_assert_ok(spc_convert(t, S, spc_specs_format(S, "csr"), NULL, 0, SPC_DUP_SUM, &out, &e), &e);
  spc_itype ty;
  tu_assert_ok(spc_tensor_level_array(out, 1, "pos", NULL, &ty, NULL), &e);
  ck_assert_int_eq(ty, SPC_IDX32);
  ck_assert_str_eq(spc_tensor_level_format(out, 1), "compressed");
  tu_assert_ok(spc_tensor_to_coo(out, 0, &c, &e), &e); /* through spc_iter */
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &ref, &e), &e);
  tu_assert_same_tensor(c, ref, 0, "csr via spc_iter");
  spc_tensor_free(&c);
  spc_tensor_free(&ref);
  spc_tensor_free(&out);
  spc_tensor_free(&t);
  spc_specs_free(&S);
}
END_TEST

/* ---- the shared matrices ------------------------------------------------ */

/* The lower triangle of t (expanded, combined): an input sky can hold. */
static spc_tensor *tril(const spc_tensor *t) {
  spc_tensor *ex = NULL, *ref = NULL, *out = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &ex, &e), &e);
  tu_assert_ok(spc_tensor_combine(ex, SPC_DUP_SUM, &ref, &e), &e);
  int64_t n = spc_tensor_nstored(ref), m = 0, dims[2] = {spc_tensor_dim(ref, 0), spc_tensor_dim(ref, 1)};
  for (int64_t k = 0; k < n; k++) m += crd_at(ref, 1, k) <= crd_at(ref, 0, k);
  spc_vtype vt = spc_tensor_vtype(ref);
  size_t w = spc_vtype_size(vt);
  tu_assert_ok(spc_tensor_create_coo(2, dims, m, vt, &out, &e), &e);
  const char *v = spc_tensor_values(ref, NULL);
  char *ov = spc_tensor_values_mut(out);
  m = 0;
  for (int64_t k = 0; k < n; k++) {
    if (crd_at(ref, 1, k) > crd_at(ref, 0, k)) continue;
    for (int l = 0; l < 2; l++) {
      spc_itype ty;
      spc_tensor_level_array(out, l, "crd", NULL, &ty, NULL);
      void *c = spc_tensor_level_array_mut(out, l, "crd");
      if (ty == SPC_IDX32) ((int32_t *)c)[m] = (int32_t)crd_at(ref, l, k);
      else ((int64_t *)c)[m] = crd_at(ref, l, k);
    }
    if (w) memcpy(ov + m * (int64_t)w, v + k * (int64_t)w, w);
    m++;
  }
  spc_tensor_free(&ex);
  spc_tensor_free(&ref);
  return out;
}

START_TEST(test_data) {
  const char *dd = tu_data_dir();
  if (!dd) return;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/matrices", dd);
  int n = 0;
  char **files = tu_list_files(dir, ".mtx", &n);
  spc_specs *S = specs_ok();
  int counts[NFMT][4] = {{0}}, sky_tril[4] = {0};
  for (int k = 0; k < n; k++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, files[k]);
    spc_tensor *t = tu_read_ok(path, 0, SPC_VTYPE_AUTO);
    for (int f = 0; f < NFMT; f++)
      counts[f][roundtrip(S, &fmts[f], t, (int64_t)1 << 21, files[k])]++;
    if (spc_tensor_order(t) == 2) { /* sky on the lower triangle */
      spc_tensor *lt = tril(t);
      int r = roundtrip(S, &fmts[9], lt, (int64_t)1 << 21, files[k]);
      ck_assert_msg(r != R_UPPER, "%s: tril -> sky refused", files[k]);
      sky_tril[r]++;
      spc_tensor_free(&lt);
    }
    spc_tensor_free(&t);
  }
  for (int f = 0; f < NFMT; f++)
    printf("assemble: %-8s ok %d, zeros refused %d, upper refused %d, too large %d\n",
           fmts[f].label, counts[f][0], counts[f][1], counts[f][2], counts[f][3]);
  printf("assemble: sky (lower triangles) ok %d, zeros refused %d, too large %d\n",
         sky_tril[R_OK], sky_tril[R_ZEROS], sky_tril[R_LARGE]);
  spc_specs_free(&S);
  tu_free_list(files);
}
END_TEST

/* registered by the lead in suites.h / test_main.c */
Suite *suite_assemble(void) {
  Suite *s = suite_create("assemble");
  TCase *tc = tcase_create("small");
  tcase_add_test(tc, test_small);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_csr_arrays_types);
  suite_add_tcase(s, tc);
  tc = tcase_create("data");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_data);
  suite_add_tcase(s, tc);
  return s;
}
