/* test_query.c -- suite_query: the attribute query language.  Parsing and
 * its errors; evaluation over small hand-made COO tensors (unsorted, with
 * duplicates) through the DIA, ELL, BCSR, Morton and CSF remappings,
 * checked against plain C; the group-space limit; the text lines; the
 * interpreter against compiled emitted C; and every shared matrix: row
 * counts, nonempty diagonals and row widths against plain C. */
#include "spc_query.h"
#include "suites.h"
#include "testutil.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------
 */

static spc_tensor *coo(int order, const int64_t *dims, int n,
                       const int64_t *x) {
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(order, dims, n, SPC_PATTERN, &t, &e), &e);
  for (int l = 0; l < order; l++) {
    spc_itype ty;
    ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL),
                     SPC_OK);
    void *p = spc_tensor_level_array_mut(t, l, "crd");
    for (int k = 0; k < n; k++) {
      if (ty == SPC_IDX32)
        ((int32_t *)p)[k] = (int32_t)x[k * order + l];
      else
        ((int64_t *)p)[k] = x[k * order + l];
    }
  }
  return t;
}

static spc_query_results *eval_ok(const char *q, const char *r,
                                  const spc_tensor *t,
                                  const spc_query_opts *o) {
  spc_query_results *res = NULL;
  spc_error e;
  tu_assert_ok(spc_query_eval(q, r, t, o, &res, &e), &e);
  return res;
}

static const int64_t *vals(const spc_query_results *r, const char *name) {
  const spc_query_result *x = spc_query_result_get(r, name);
  ck_assert_msg(x != NULL, "no result %s", name);
  return x->values;
}

static const char *const dia = "(i, j) -> (j - i as d, i, j)";
static const char *const ell = "(i, j) -> (#i as k, i, j)";
static const char *const bcsr =
    "(i, j) -> let bi = i / M, bj = j / N in (bi, bj, i % M, j % N)";
static const char *const morton =
    "(i, j) -> let\n"
    "  x0 = u64(i), x1 = (x0 | (x0 << 16)) & 0x0000FFFF0000FFFF,\n"
    "  x2 = (x1 | (x1 << 8)) & 0x00FF00FF00FF00FF,\n"
    "  x3 = (x2 | (x2 << 4)) & 0x0F0F0F0F0F0F0F0F,\n"
    "  x4 = (x3 | (x3 << 2)) & 0x3333333333333333,\n"
    "  x5 = (x4 | (x4 << 1)) & 0x5555555555555555,\n"
    "  y0 = u64(j), y1 = (y0 | (y0 << 16)) & 0x0000FFFF0000FFFF,\n"
    "  y2 = (y1 | (y1 << 8)) & 0x00FF00FF00FF00FF,\n"
    "  y3 = (y2 | (y2 << 4)) & 0x0F0F0F0F0F0F0F0F,\n"
    "  y4 = (y3 | (y3 << 2)) & 0x3333333333333333,\n"
    "  y5 = (y4 | (y4 << 1)) & 0x5555555555555555\n"
    "in (x5 | (y5 << 1) as z, i, j)";

/* A 4 x 5 matrix, unsorted, (2,1) and (0,3) twice, row 1 empty. */
static const int64_t X[] = {2, 1, 0, 3, 2, 1, 3, 4, 0, 0, 2, 4, 0, 3, 3, 0};
enum { NX = 8, MX = 4, NCOLS = 5 };

/* Number of distinct t in [0, n) with key(t) tuples over w coordinates of
 * x (order o) at positions pos[0..w), restricted to sel(t). */
static int64_t distinct(const int64_t *x, int n, int o, const int *pos, int w,
                        bool (*sel)(const int64_t *, void *), void *ctx) {
  int64_t c = 0;
  for (int t = 0; t < n; t++) {
    if (sel && !sel(x + t * o, ctx)) continue;
    bool seen = false;
    for (int u = 0; u < t && !seen; u++) {
      if (sel && !sel(x + u * o, ctx)) continue;
      bool same = true;
      for (int k = 0; k < w; k++)
        same &= x[t * o + pos[k]] == x[u * o + pos[k]];
      seen = same;
    }
    c += !seen;
  }
  return c;
}

static bool in_row(const int64_t *p, void *ctx) {
  return p[0] == *(int64_t *)ctx;
}
static bool on_diag(const int64_t *p, void *ctx) {
  return p[1] - p[0] == *(int64_t *)ctx;
}
static bool in_block(const int64_t *p, void *ctx) {
  const int64_t *b = ctx; /* bi, bj, M, N */
  return p[0] / b[2] == b[0] && p[1] / b[3] == b[1];
}

/* ---- parsing --------------------------------------------------------------
 */

START_TEST(test_query_parse) {
  spc_query *q = NULL;
  spc_error e;
  lang_src s = {.text = "select [i, j]\n  -> count(j, i) as c, min(j) as lo, "
                        "max(i) as hi, id() as used"};
  tu_assert_ok(spc_query_parse(&s, &q, &e), &e);
  ck_assert_int_eq(q->ngroup, 2);
  ck_assert_str_eq(q->group[1], "j");
  ck_assert_int_eq(q->nagg, 4);
  ck_assert_int_eq(q->aggs[0].kind, SPC_AGG_COUNT);
  ck_assert_int_eq(q->aggs[0].nargs, 2);
  ck_assert_str_eq(q->aggs[0].args[1], "i");
  ck_assert_int_eq(q->aggs[1].kind, SPC_AGG_MIN);
  ck_assert_int_eq(q->aggs[2].kind, SPC_AGG_MAX);
  ck_assert_int_eq(q->aggs[3].kind, SPC_AGG_ID);
  ck_assert_str_eq(q->aggs[3].name, "used");
  spc_query_free(&q);
  s.text = "select [] -> max(k) as width";
  tu_assert_ok(spc_query_parse(&s, &q, &e), &e);
  ck_assert_int_eq(q->ngroup, 0);
  spc_query_free(&q);
}
END_TEST

START_TEST(test_query_errors) {
  static const struct {
    const char *text;
    int64_t line, col;
    const char *msg;
  } cases[] = {
      {"count [i] -> id() as x", 1, 1, "expected 'select', found 'count'"},
      {"select i -> id() as x", 1, 8, "expected '[' and the group coordinates"},
      {"select [i, i] -> id() as x", 1, 12, "duplicate group coordinate 'i'"},
      {"select [i] id() as x", 1, 12, "expected '->'"},
      {"select [i] -> sum(j) as x", 1, 15,
       "expected an aggregate (count, min, max or id), found 'sum'"},
      {"select [i] -> count() as x", 1, 15,
       "count takes at least one coordinate"},
      {"select [i] -> min(j, i) as x", 1, 15,
       "min takes one coordinate, found 2"},
      {"select [i] -> max() as x", 1, 15, "max takes one coordinate, found 0"},
      {"select [i] -> id(j) as x", 1, 15, "id takes no coordinates, found 1"},
      {"select [i] -> count(j, j) as x", 1, 15,
       "coordinate 'j' appears twice in count"},
      {"select [i] -> count(j)", 1, 23,
       "expected 'as' and a result name after the aggregate"},
      {"select [i] -> count(j) as", 1, 26, "expected a result name after 'as'"},
      {"select [i] -> count(j) as a,\n  id() as a", 2, 3,
       "duplicate result name 'a'"},
      {"select [i] -> id() as x y", 1, 25, "unexpected 'y' after the query"},
      {"select [i] -> count(3) as x", 1, 21, "expected a coordinate name"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    spc_query *q = NULL;
    spc_error e;
    lang_src s = {.text = cases[k].text, .file = "q.yaml"};
    spc_status st = spc_query_parse(&s, &q, &e);
    ck_assert_ptr_null(q);
    ck_assert_msg(st == SPC_ERR_SPEC, "%s: %d", cases[k].text, st);
    ck_assert_msg(strstr(e.msg, cases[k].msg), "%s: '%s'", cases[k].text,
                  e.msg);
    ck_assert_msg(e.line == cases[k].line && e.col == cases[k].col,
                  "%s: at %lld:%lld (%s)", cases[k].text, (long long)e.line,
                  (long long)e.col, e.msg);
    ck_assert_str_eq(e.file, "q.yaml");
  }
  /* names bind to the remapping's outputs; errors keep the positions of
   * their texts in the enclosing file */
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  spc_query_results *r = NULL;
  spc_error e;
  spc_query_opts o = {.query_at = {.file = "f.yaml", .line = 4, .col = 10},
                      .remap_at = {.file = "f.yaml", .line = 3, .col = 9}};
  ck_assert_int_eq(
      spc_query_eval("select [q] -> id() as x", NULL, t, &o, &r, &e),
      SPC_ERR_SPEC);
  ck_assert_str_eq(e.msg,
                   "unknown coordinate 'q' (the source coordinates are i, j)");
  ck_assert(e.line == 4 && e.col == 18);
  ck_assert_int_eq(
      spc_query_eval("select [i] -> id() as x", dia, t, &o, &r, &e), SPC_OK);
  spc_query_results_free(&r);
  ck_assert_int_eq(
      spc_query_eval("select [bi] -> id() as x", dia, t, &o, &r, &e),
      SPC_ERR_SPEC);
  ck_assert_str_eq(
      e.msg, "unknown coordinate 'bi' (the remapped coordinates are d, i, j)");
  ck_assert_int_eq(
      spc_query_eval("select [] -> id() as x", "(i, j) -> (i)", t, &o, &r, &e),
      SPC_ERR_SPEC);
  ck_assert(strstr(e.msg, "index j is not used"));
  ck_assert(e.line == 3 && e.col == 13);
  ck_assert_str_eq(e.file, "f.yaml");
  ck_assert_int_eq(
      spc_query_eval("select [i] -> id() as x", bcsr, t, NULL, &r, &e),
      SPC_ERR_SPEC);
  ck_assert(strstr(e.msg, "unknown name 'M'"));
  ck_assert_ptr_null(r);
  spc_tensor_free(&t);
}
END_TEST

/* ---- evaluation on small tensors ------------------------------------------
 */

START_TEST(test_query_rows) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  spc_query_results *r =
      eval_ok("select [i] -> count(j) as nnz, min(j) as first, "
              "max(j) as last, id() as nonempty, count(i, j) as pairs",
              NULL, t, NULL);
  ck_assert_int_eq(r->ngroup, 1);
  ck_assert_str_eq(r->group_names[0], "i");
  ck_assert(r->lo[0] == 0 && r->ext[0] == MX && r->ngroups == MX);
  const int pj[] = {1}, pij[] = {0, 1};
  for (int64_t i = 0; i < MX; i++) {
    int64_t n = distinct(X, NX, 2, pj, 1, in_row, &i), lo = INT64_MAX, hi = -1;
    for (int t2 = 0; t2 < NX; t2++)
      if (X[2 * t2] == i) {
        lo = X[2 * t2 + 1] < lo ? X[2 * t2 + 1] : lo;
        hi = X[2 * t2 + 1] > hi ? X[2 * t2 + 1] : hi;
      }
    ck_assert_int_eq(vals(r, "nnz")[i], n);
    ck_assert_int_eq(vals(r, "pairs")[i],
                     distinct(X, NX, 2, pij, 2, in_row, &i));
    ck_assert_int_eq(vals(r, "nonempty")[i], n > 0);
    ck_assert_int_eq(r->present[i], n > 0);
    if (n) {
      ck_assert_int_eq(vals(r, "first")[i], lo);
      ck_assert_int_eq(vals(r, "last")[i], hi);
    }
  }
  /* lines: all groups, or the nonempty ones */
  char buf[64], all[256] = "";
  int64_t g = 0;
  while (spc_query_next(r, 0, 0, &g, buf, sizeof buf))
    strcat(strcat(all, buf), "\n");
  ck_assert_str_eq(all, "0\t2\n1\t0\n2\t2\n3\t2\n");
  all[0] = 0;
  g = 0;
  while (spc_query_next(r, 1, SPC_QUERY_NONEMPTY, &g, buf, sizeof buf))
    strcat(strcat(all, buf), "\n");
  ck_assert_str_eq(all, "0\t0\n2\t1\n3\t0\n");
  spc_query_results_free(&r);
  /* one group; the same counts from a sorted, unique source without sorting */
  r = eval_ok("select [] -> count(i, j) as nnz, max(i) as last_row", NULL, t,
              NULL);
  ck_assert_int_eq(r->ngroups, 1);
  ck_assert_int_eq(vals(r, "nnz")[0], 6);
  ck_assert_int_eq(vals(r, "last_row")[0], 3);
  g = 0;
  ck_assert(spc_query_next(r, 0, 0, &g, buf, sizeof buf));
  ck_assert_str_eq(buf, "\t6");
  ck_assert(!spc_query_next(r, 0, 0, &g, buf, sizeof buf));
  spc_query_results_free(&r);
  spc_tensor *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  spc_query_opts o = {.flags = SPC_QUERY_SORTED};
  spc_query_results *a =
      eval_ok("select [i] -> count(j) as nnz", NULL, c, NULL);
  spc_query_results *b = eval_ok("select [i] -> count(j) as nnz", NULL, c, &o);
  for (int i = 0; i < MX; i++)
    ck_assert_int_eq(vals(a, "nnz")[i], vals(b, "nnz")[i]);
  spc_query_results_free(&a);
  spc_query_results_free(&b);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_query_dia_ell) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  spc_query_results *r =
      eval_ok("select [d] -> id() as used, count(i) as len", dia, t, NULL);
  ck_assert(r->lo[0] == -(MX - 1) && r->ext[0] == MX + NCOLS - 1);
  const int pi[] = {0};
  for (int64_t d = -(MX - 1); d < NCOLS; d++) {
    int64_t n = distinct(X, NX, 2, pi, 1, on_diag, &d);
    ck_assert_int_eq(vals(r, "used")[d + MX - 1], n > 0);
    ck_assert_int_eq(vals(r, "len")[d + MX - 1], n);
  }
  char buf[64], all[256] = "";
  int64_t g = 0;
  while (spc_query_next(r, 0, SPC_QUERY_NONEMPTY, &g, buf, sizeof buf))
    strcat(strcat(all, buf), "\n");
  ck_assert_str_eq(all, "-3\t1\n-1\t1\n0\t1\n1\t1\n2\t1\n3\t1\n");
  spc_query_results_free(&r);
  /* ELL: k counts earlier components of the row (duplicates included) */
  int64_t rows[MX] = {0};
  for (int t2 = 0; t2 < NX; t2++) rows[X[2 * t2]]++;
  int64_t width = 0;
  for (int i = 0; i < MX; i++) width = rows[i] > width ? rows[i] : width;
  for (int mode = 0; mode < 2; mode++) {
    spc_query_opts o = {.counter_mode =
                            mode ? SPC_COUNTER_GROUPED : SPC_COUNTER_DENSE};
    spc_tensor *c = NULL;
    spc_error e;
    tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e),
                 &e); /* grouped by i */
    r = eval_ok("select [] -> max(k) as width", ell, mode ? c : t, &o);
    ck_assert_int_eq(vals(r, "width")[0], mode ? 1 : width - 1);
    spc_query_results_free(&r);
    spc_tensor_free(&c);
  }
  r = eval_ok("select [k] -> count(i) as rows, id() as used", ell, t, NULL);
  ck_assert(r->lo[0] == 0 && r->ext[0] == NX);
  for (int k = 0; k < NX; k++) {
    int64_t n = 0;
    for (int i = 0; i < MX; i++) n += rows[i] > k;
    ck_assert_int_eq(vals(r, "rows")[k], n);
    ck_assert_int_eq(vals(r, "used")[k], n > 0);
  }
  spc_query_results_free(&r);
  spc_tensor_free(&t);
}
END_TEST

static uint64_t morton_c(uint64_t i, uint64_t j) {
  uint64_t z = 0;
  for (int b = 0; b < 32; b++)
    z |= ((i >> b) & 1) << (2 * b) | ((j >> b) & 1) << (2 * b + 1);
  return z;
}

START_TEST(test_query_bcsr_morton_csf) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  static const int64_t blocks[][2] = {{2, 3}, {3, 2}, {1, 1}, {4, 5}, {2, 2}};
  const int pl[] = {0, 1};
  for (int b = 0; b < 5; b++) {
    spc_remap_param ps[] = {{"M", blocks[b][0]}, {"N", blocks[b][1]}};
    spc_query_opts o = {.params = ps, .nparams = 2};
    spc_query_results *r = eval_ok(
        "select [bi, bj] -> id() as nz, count(l2, l3) as fill", bcsr, t, &o);
    int64_t nbi = (MX - 1) / ps[0].value + 1,
            nbj = (NCOLS - 1) / ps[1].value + 1;
    ck_assert(r->ngroup == 2 && r->ext[0] == nbi && r->ext[1] == nbj);
    for (int64_t bi = 0; bi < nbi; bi++)
      for (int64_t bj = 0; bj < nbj; bj++) {
        int64_t ctx[] = {bi, bj, ps[0].value, ps[1].value};
        int64_t n = distinct(X, NX, 2, pl, 2, in_block, ctx);
        ck_assert_int_eq(vals(r, "nz")[bi * nbj + bj], n > 0);
        ck_assert_int_eq(vals(r, "fill")[bi * nbj + bj], n);
      }
    spc_query_results_free(&r);
  }
  spc_query_results *r = eval_ok("select [] -> min(z) as zmin, max(z) as zmax, "
                                 "count(z) as codes",
                                 morton, t, NULL);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int k = 0; k < NX; k++) {
    uint64_t z = morton_c((uint64_t)X[2 * k], (uint64_t)X[2 * k + 1]);
    lo = z < lo ? z : lo;
    hi = z > hi ? z : hi;
  }
  ck_assert_int_eq(vals(r, "zmin")[0], (int64_t)lo);
  ck_assert_int_eq(vals(r, "zmax")[0], (int64_t)hi);
  ck_assert_int_eq(vals(r, "codes")[0], 6);
  spc_query_results_free(&r);
  /* group by the Morton code: the codes of 4 x 5 lie in [0, 47] (bits
   * 0b101 | 0b101010: interval analysis tracks the bits that may be set) */
  r = eval_ok("select [z] -> id() as used", morton, t, NULL);
  ck_assert_msg(r->lo[0] == 0 && r->ext[0] == 48, "[%lld, +%lld]",
                (long long)r->lo[0], (long long)r->ext[0]);
  for (int k = 0; k < NX; k++)
    ck_assert_int_eq(
        vals(r, "used")[morton_c((uint64_t)X[2 * k], (uint64_t)X[2 * k + 1])],
        1);
  spc_query_results_free(&r);
  spc_tensor_free(&t);
  /* CSF mode permutation (i, j, k) -> (k, i, j): fibers per slice k */
  const int64_t y[] = {0, 1, 2, 1, 0, 2, 0, 1, 2, 2, 2, 0, 1, 1, 0, 0, 0, 1};
  t = coo(3, (int64_t[]){3, 3, 3}, 6, y);
  r = eval_ok("select [k] -> count(i, j) as fibers, min(i) as top",
              "(i, j, k) -> (k, i, j)", t, NULL);
  const int64_t fib[] = {2, 1, 2}, top[] = {1, 0, 0};
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(vals(r, "fibers")[k], fib[k]);
    ck_assert_int_eq(vals(r, "top")[k], top[k]);
  }
  spc_query_results_free(&r);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_query_limits) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  spc_query_results *r = NULL;
  spc_error e;
  spc_query_opts o = {.max_groups = 10};
  ck_assert_int_eq(
      spc_query_eval("select [i, j] -> id() as x", NULL, t, &o, &r, &e),
      SPC_ERR_UNSUPPORTED);
  ck_assert_str_eq(e.msg,
                   "group space of 20 entries is too large to hold densely "
                   "(group by i, j)");
  o.max_groups = 20;
  tu_assert_ok(
      spc_query_eval("select [i, j] -> id() as x", NULL, t, &o, &r, &e), &e);
  spc_query_results_free(&r);
  spc_tensor_free(&t);
  /* Morton codes of 2^32 x 2^32 do not fit int64: no dense group space */
  int64_t big = (int64_t)1 << 32;
  t = coo(2, (int64_t[]){big, big}, 1, (int64_t[]){big - 1, big - 1});
  ck_assert_int_eq(
      spc_query_eval("select [z] -> id() as u", morton, t, NULL, &r, &e),
      SPC_ERR_UNSUPPORTED);
  ck_assert_str_eq(e.msg,
                   "group coordinate 'z' has no finite range: the group space "
                   "cannot be held densely (group by z)");
  r = eval_ok("select [] -> count(z) as n", morton, t, NULL);
  ck_assert_int_eq(vals(r, "n")[0], 1);
  spc_query_results_free(&r);
  ck_assert_int_eq(
      spc_query_eval("select [i, j] -> id() as u", NULL, t, NULL, &r, &e),
      SPC_ERR_UNSUPPORTED);
  ck_assert(strstr(e.msg, "group space of 18446744073709551616") == NULL);
  ck_assert(strstr(e.msg, "is too large to hold densely (group by i, j)"));
  spc_tensor_free(&t);
  /* an empty tensor: every group empty */
  t = coo(2, (int64_t[]){3, 3}, 0, NULL);
  r = eval_ok("select [i] -> count(j) as n, max(j) as m", NULL, t, NULL);
  for (int i = 0; i < 3; i++) ck_assert(vals(r, "n")[i] == 0 && !r->present[i]);
  spc_query_results_free(&r);
  spc_tensor_free(&t);
  /* 0 x 5 and 0 x 0: no rows at all (a row 0 was reported, and
   * `--all` printed "0<TAB>0"); 5 x 0: five empty rows, no column */
  t = coo(2, (int64_t[]){0, 5}, 0, NULL);
  r = eval_ok("select [i] -> count(j) as n", NULL, t, NULL);
  ck_assert_int_eq(r->ngroups, 0);
  ck_assert_int_eq(r->ext[0], 0);
  spc_query_results_free(&r);
  r = eval_ok("select [j] -> count(i) as n", NULL, t, NULL);
  ck_assert_int_eq(r->ngroups, 5);
  for (int j = 0; j < 5; j++) ck_assert_int_eq(vals(r, "n")[j], 0);
  spc_query_results_free(&r);
  r = eval_ok("select [] -> count(j) as n", NULL, t, NULL);
  ck_assert_int_eq(r->ngroups, 1);
  ck_assert_int_eq(vals(r, "n")[0], 0);
  spc_query_results_free(&r);
  spc_tensor_free(&t);
  t = coo(2, (int64_t[]){0, 0}, 0, NULL);
  r = eval_ok("select [i, j] -> count(j) as n", NULL, t, NULL);
  ck_assert_int_eq(r->ngroups, 0);
  spc_query_results_free(&r);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_query_alloc_failures) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X);
  for (int64_t k = 1;; k++) {
    spc_query_results *r = NULL;
    spc_error e;
    spc_alloc_fail_at(k);
    spc_status st = spc_query_eval("select [d] -> count(i) as n, max(k) as w",
                                   "(i, j) -> (j - i as d, #i as k, i, j)", t,
                                   NULL, &r, &e);
    spc_alloc_fail_at(0);
    ck_assert_msg(st == SPC_OK || st == SPC_ERR_NOMEM, "k=%lld: %d %s",
                  (long long)k, st, e.msg);
    if (st == SPC_OK) {
      ck_assert_int_eq(vals(r, "n")[3], 1); /* d = 0: only (0, 0) */
      spc_query_results_free(&r);
      break;
    }
    ck_assert_ptr_null(r);
    ck_assert_int_lt(k, 100000);
  }
  spc_tensor_free(&t);
}
END_TEST

/* ---- the interpreter against compiled emitted C ---------------------------
 */

typedef int (*entry_fn)(ir_arg *args, char *err, size_t err_len);

/* Compile f's C (with its NAME_entry wrapper) into a shared object; NULL
 * when there is no C compiler. */
static void *compile_c(const ir_func *f, const char *dir, entry_fn *fn) {
  spc_str c = {0};
  spc_error e;
  ir_emit_opts o = {.prelude = true, .entry = true};
  tu_assert_ok(ir_emit_c(f, &o, &c, &e), &e);
  char *src = tu_path(dir, "q.c"), *so = tu_path(dir, "q.so"), cmd[3000];
  ck_assert_int_eq(tu_write_file(src, c.s, c.len), 0);
  spc_str_free(&c);
  const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
  snprintf(cmd, sizeof cmd,
           "%s -std=c99 -O1 -fPIC -shared -ffp-contract=off -o %s %s 2>&1", cc,
           so, src);
  int rc = system(cmd);
  void *h = rc == 0 ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
  ck_assert_msg(rc != 0 || h, "dlopen: %s", dlerror());
  char sym[300];
  snprintf(sym, sizeof sym, "%s_entry", ir_func_name(f));
  if (h) *fn = (entry_fn)(uintptr_t)dlsym(h, sym);
  free(src);
  free(so);
  return h;
}

/* Plan q (over r with params) on t; run it interpreted and compiled and
 * compare every OUT array bit for bit.  false when no compiler. */
static bool compare_emitted(const char *qt, const char *rt,
                            const spc_remap_param *ps, int np,
                            const spc_tensor *t, unsigned flags) {
  spc_query *q = NULL;
  spc_remap *r = NULL;
  spc_error e;
  lang_src qs = {.text = qt}, rs = {.text = rt};
  tu_assert_ok(spc_query_parse(&qs, &q, &e), &e);
  int order = spc_tensor_order(t);
  tu_assert_ok(rt ? spc_remap_parse(&rs, order, ps, np, &r, &e)
                  : spc_remap_identity(order, &r, &e),
               &e);
  tu_assert_ok(spc_query_bind(q, r, &e), &e);
  spc_query_shape sh = {
      .order = order, .nnz = spc_tensor_nstored(t), .flags = flags};
  ir_arg a[2][SPC_MAX_ORDER + 20];
  memset(a, 0, sizeof a);
  for (int l = 0; l < order; l++) {
    const void *d;
    spc_itype ty;
    int64_t len;
    ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", &d, &ty, &len),
                     SPC_OK);
    sh.dims[l] = spc_tensor_dim(t, l);
    sh.crd_ty[l] = ty == SPC_IDX32 ? IR_I32 : IR_I64;
    a[0][l] = a[1][l] = (ir_arg){.data = (void *)d, .len = len};
  }
  a[0][order].s.i64 = a[1][order].s.i64 = sh.nnz;
  ir_func *f = NULL;
  spc_query_layout lay;
  tu_assert_ok(spc_query_plan(q, r, &sh, &f, &lay, &e), &e);
  ck_assert_int_le(ir_nparams(f), SPC_MAX_ORDER + 20);
  char *dir = tu_mkdtemp();
  entry_fn fn = NULL;
  void *h = compile_c(f, dir, &fn);
  if (h) {
    char msg[256] = "";
    tu_assert_ok(ir_run(f, a[0], &e), &e);
    ck_assert_msg(fn && fn(a[1], msg, sizeof msg) == 0, "compiled: %s", msg);
    for (int k = order + 1; k < ir_nparams(f); k++) {
      ck_assert_int_eq(a[0][k].len, a[1][k].len);
      ck_assert_msg(
          !memcmp(a[0][k].data, a[1][k].data, (size_t)a[0][k].len * 8),
          "%s: parameter %d differs", qt, k);
      spc_free(a[0][k].data);
      free(a[1][k].data);
    }
    dlclose(h);
  }
  tu_rmtree(dir);
  free(dir);
  ir_func_free(&f);
  spc_remap_free(&r);
  spc_query_free(&q);
  return h != NULL;
}

START_TEST(test_query_emitted) {
  spc_tensor *t = coo(2, (int64_t[]){MX, NCOLS}, NX, X), *c = NULL;
  spc_remap_param ps[] = {{"M", 2}, {"N", 3}};
  spc_error e;
  if (!compare_emitted(
          "select [i] -> count(j) as nnz, min(j) as a, max(j) as b, id() as c",
          NULL, NULL, 0, t, 0)) {
    printf("skipped: emitted C (no C compiler)\n");
    spc_tensor_free(&t);
    return;
  }
  compare_emitted("select [d] -> id() as used, count(i) as len", dia, NULL, 0,
                  t, 0);
  compare_emitted("select [] -> max(k) as width", ell, NULL, 0, t, 0);
  compare_emitted("select [k] -> count(i) as rows", ell, NULL, 0, t, 0);
  compare_emitted("select [bi, bj] -> id() as nz, count(l2, l3) as n", bcsr, ps,
                  2, t, 0);
  compare_emitted("select [z] -> id() as u, min(i) as lo", morton, NULL, 0, t,
                  0);
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  compare_emitted("select [i] -> count(j) as nnz", NULL, NULL, 0, c,
                  SPC_QUERY_SORTED);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  const char *data = tu_data_dir();
  if (!data) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/matrices/west0479.mtx", data);
  t = tu_read_ok(path, 1, SPC_VTYPE_AUTO);
  compare_emitted("select [d] -> id() as used, count(i) as len", dia, NULL, 0,
                  t, 0);
  compare_emitted("select [i] -> count(j) as nnz, max(k) as w",
                  "(i, j) -> (#i as k, i, j)", NULL, 0, t, 0);
  spc_tensor_free(&t);
}
END_TEST

/* ---- every shared matrix --------------------------------------------------
 */

/* Rows' stored components (duplicates counted) and distinct columns, and
 * the nonempty diagonals, by plain iteration. */
static void plain_stats(const spc_tensor *t, int64_t *raw, int64_t *uniq,
                        bool *diag) {
  int64_t m = spc_tensor_dim(t, 0), x[SPC_MAX_ORDER];
  spc_tensor *c = NULL;
  spc_iter *it = NULL;
  spc_error e;
  const void *v;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  while (spc_iter_next(it, x, &v)) {
    raw[x[0]]++;
    diag[x[1] - x[0] + m - 1] = true;
  }
  spc_iter_free(&it);
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  while (spc_iter_next(it, x, &v)) uniq[x[0]]++;
  spc_iter_free(&it);
  spc_tensor_free(&c);
}

START_TEST(test_query_shared_matrices) {
  const char *data = tu_data_dir();
  if (!data) return;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/matrices", data);
  int n = 0, done = 0;
  char **names = tu_list_files(dir, ".mtx", &n);
  for (int f = 0; f < n; f++) {
    char *path = tu_path(dir, names[f]);
    spc_tensor *t = NULL, *g = NULL;
    spc_error e;
    spc_read_opts o;
    spc_read_opts_init(&o);
    tu_assert_ok(spc_read(path, &o, &t, &e), &e);
    if (spc_tensor_symmetry(t) != SPC_GENERAL) {
      tu_assert_ok(spc_tensor_expand(t, &g, &e), &e);
      spc_tensor_free(&t);
      t = g;
    }
    if (spc_tensor_order(t) != 2) {
      spc_tensor_free(&t);
      free(path);
      continue;
    }
    int64_t m = spc_tensor_dim(t, 0), nc = spc_tensor_dim(t, 1);
    int64_t *raw = calloc((size_t)m + 1, 8), *uniq = calloc((size_t)m + 1, 8);
    bool *diag = calloc((size_t)(m + nc), 1);
    plain_stats(t, raw, uniq, diag);
    spc_query_results *r =
        eval_ok("select [i] -> count(j) as nnz", NULL, t, NULL);
    for (int64_t i = 0; i < m; i++)
      ck_assert_msg(vals(r, "nnz")[i] == uniq[i], "%s row %lld", names[f],
                    (long long)i);
    spc_query_results_free(&r);
    r = eval_ok("select [d] -> id() as used", dia, t, NULL);
    if (m > 0 && nc > 0) ck_assert_int_eq(r->ngroups, m + nc - 1);
    for (int64_t d = 0; m > 0 && nc > 0 && d < m + nc - 1; d++)
      ck_assert_msg(vals(r, "used")[d] == diag[d], "%s diagonal %lld", names[f],
                    (long long)(d - m + 1));
    spc_query_results_free(&r);
    r = eval_ok("select [] -> max(k) as width", ell, t, NULL);
    int64_t w = 0;
    for (int64_t i = 0; i < m; i++) w = raw[i] > w ? raw[i] : w;
    ck_assert_int_eq(r->present[0], w > 0);
    ck_assert_msg(vals(r, "width")[0] == (w ? w - 1 : 0), "%s width", names[f]);
    spc_query_results_free(&r);
    free(raw);
    free(uniq);
    free(diag);
    spc_tensor_free(&t);
    free(path);
    done++;
  }
  tu_free_list(names);
  ck_assert_int_gt(done, 30);
}
END_TEST

Suite *suite_query(void); /* registered in suites.h */
Suite *suite_query(void) {
  Suite *s = suite_create("query");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_query_parse);
  tcase_add_test(tc, test_query_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("eval");
  tcase_add_test(tc, test_query_rows);
  tcase_add_test(tc, test_query_dia_ell);
  tcase_add_test(tc, test_query_bcsr_morton_csf);
  tcase_add_test(tc, test_query_limits);
  tcase_add_test(tc, test_query_alloc_failures);
  suite_add_tcase(s, tc);
  tc = tcase_create("emitted");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_query_emitted);
  suite_add_tcase(s, tc);
  tc = tcase_create("shared");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_query_shared_matrices);
  suite_add_tcase(s, tc);
  return s;
}
