/* test_io_bad.c -- suite_io: malformed inputs give the expected status,
 * line and column and name the file; failed writes leave nothing behind
 * and an existing target untouched; a tiny file with a huge header fails
 * fast without a large allocation. */
#include "test_io.h"
#include "spc_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BAN(field, sym) "%%MatrixMarket matrix coordinate " field " " sym "\n"
#define RE BAN("real", "general")
#define INT BAN("integer", "general")
#define CPX BAN("complex", "general")
#define ARR "%%MatrixMarket matrix array real general\n"
#define ANY -1 /* line or column not checked */
#define B(what, name, text, st, line, col) {what, name, text, st, line, col, 0, {0, 0, 0}, 0}

typedef struct bad_case {
  const char *what, *name, *text;
  spc_status st;
  int64_t line, col; /* exact (0 = none given) or ANY */
  int ndims;         /* FROSTT: dimensions given in the options */
  int64_t dims[3];
  int c128;          /* ask for complex values */
} bad_case;

static const bad_case bad_cases[] = {
    /* banner */
    B("misspelt banner", "b.mtx", "%%MatrixMarkt matrix coordinate real general\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, 1),
    B("no banner", "b.mtx", "3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, 1),
    B("bad object", "b.mtx", "%%MatrixMarket tensor coordinate real general\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, 16),
    B("bad format", "b.mtx", "%%MatrixMarket matrix sparse real general\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, 23),
    /* an unknown field or symmetry word is read as SciPy reads it
     * (test_mtx_lenient_banner); a missing one is an error */
    B("no field", "b.mtx", "%%MatrixMarket matrix coordinate\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, ANY),
    B("no symmetry", "b.mtx", "%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, 38),
    B("extra banner word", "b.mtx", "%%MatrixMarket matrix coordinate real general extra\n3 3 1\n1 1 1\n", SPC_ERR_INPUT, 1, ANY),
    B("array pattern", "b.mtx", "%%MatrixMarket matrix array pattern general\n2 2\n", SPC_ERR_INPUT, 1, ANY),
    B("symmetric vector", "b.mtx", "%%MatrixMarket vector coordinate real symmetric\n2 1\n1 1\n", SPC_ERR_INPUT, 1, ANY),
    /* size line */
    B("no size line", "b.mtx", RE "% only a comment\n", SPC_ERR_INPUT, 3, ANY),
    B("nothing after the banner", "b.mtx", RE, SPC_ERR_INPUT, 2, ANY),
    B("negative size", "b.mtx", RE "3 -3 2\n1 1 1\n2 2 2\n", SPC_ERR_INPUT, 2, 3),
    B("size: two numbers", "b.mtx", RE "3 3\n1 1 1\n", SPC_ERR_INPUT, 2, 4),
    B("size: not a number", "b.mtx", RE "3 x 2\n", SPC_ERR_INPUT, 2, 3),
    B("size: overflow", "b.mtx", RE "99999999999999999999 3 1\n1 1 1\n", SPC_ERR_OVERFLOW, 2, 1),
    B("size: trailing text", "b.mtx", RE "3 3 1 7\n1 1 1\n", SPC_ERR_INPUT, 2, 7),
    B("non-square symmetric, a mirror outside", "b.mtx", BAN("real", "symmetric") "3 4 2\n1 1 1\n1 4 2\n", SPC_ERR_INPUT, 4, 1),
    /* the entry's line counted past blank and comment lines */
    B("a mirror outside, after comments", "b.mtx", BAN("real", "skew-symmetric") "4 3 3\n2 1 1\n\n% c\n  \n4 1 2\n3 2 3\n", SPC_ERR_INPUT, 7, 1),
    B("non-square symmetric array", "b.mtx", "%%MatrixMarket matrix array real symmetric\n3 4\n1\n", SPC_ERR_INPUT, 2, ANY),
    /* entries */
    B("row 0", "b.mtx", RE "3 3 2\n1 1 1.0\n0 1 2.0\n", SPC_ERR_INPUT, 4, 1),
    B("row > rows", "b.mtx", RE "3 3 2\n1 1 1.0\n4 1 2.0\n", SPC_ERR_INPUT, 4, 1),
    B("column > columns", "b.mtx", RE "3 3 2\n1 1 1.0\n1 4 2.0\n", SPC_ERR_INPUT, 4, 3),
    B("column 0", "b.mtx", RE "3 3 1\n1 0 1.0\n", SPC_ERR_INPUT, 3, 3),
    B("too few fields", "b.mtx", RE "3 3 2\n1 1 1.0\n2 2\n", SPC_ERR_INPUT, 4, 4),
    B("one field", "b.mtx", RE "3 3 2\n1 1 1.0\n2\n", SPC_ERR_INPUT, 4, 2),
    B("complex with three parts", "b.mtx", CPX "3 3 1\n1 1 1.0 2 3\n", SPC_ERR_INPUT, 3, 11),
    B("value 1.5x", "b.mtx", RE "3 3 1\n1 1 1.5x 2\n", SPC_ERR_INPUT, 3, 5),
    B("non-numeric value", "b.mtx", RE "3 3 1\n1 1 abc\n", SPC_ERR_INPUT, 3, 5),
    B("value 1.0.0", "b.mtx", RE "3 3 1\n1 1 1.0.0\n", SPC_ERR_INPUT, 3, 5),
    B("real in an integer file", "b.mtx", INT "3 3 1\n1 1 1.5\n", SPC_ERR_INPUT, 3, 5),
    B("index 1.5", "b.mtx", RE "3 3 1\n1.5 1 1\n", SPC_ERR_INPUT, 3, 1),
    B("index -1", "b.mtx", RE "3 3 1\n-1 1 1\n", SPC_ERR_INPUT, 3, 1),
    B("index overflow (20 digits)", "b.mtx", RE "3 3 1\n99999999999999999999 1 1\n", SPC_ERR_OVERFLOW, 3, 1),
    B("index past int64", "b.mtx", RE "3 3 1\n1 9223372036854775808 1\n", SPC_ERR_INPUT, 3, 3),
    B("fewer entries than announced", "b.mtx", RE "3 3 3\n1 1 1\n2 2 2\n", SPC_ERR_INPUT, 5, ANY),
    B("more entries than announced", "b.mtx", RE "3 3 1\n1 1 1\n% c\n2 2 2\n", SPC_ERR_INPUT, 5, ANY),
    B("integer above uint64", "b.mtx", INT "3 3 1\n1 1 18446744073709551616\n", SPC_ERR_OVERFLOW, 3, 5),
    B("integer below int64", "b.mtx", INT "3 3 1\n1 1 -9223372036854775809\n", SPC_ERR_OVERFLOW, 3, 5),
    B("negative with uint64 values", "b.mtx", INT "3 3 2\n1 1 -1\n2 2 18446744073709551615\n", SPC_ERR_INPUT, 3, 5),
    /* dense arrays */
    /* a count that differs from the size line is reported at the size line */
    B("array: too few values", "b.mtx", ARR "2 2\n1\n2\n3\n", SPC_ERR_INPUT, 2, ANY),
    B("array: too many values", "b.mtx", ARR "% c\n2 2\n1\n2\n3\n4\n5\n", SPC_ERR_INPUT, 3, ANY),
    B("array: bad value", "b.mtx", ARR "2 2\n1\nx\n3\n4\n", SPC_ERR_INPUT, 4, 1),
    B("array: two values on a line", "b.mtx", ARR "2 2\n1 2\n3\n4\n5\n", SPC_ERR_INPUT, 3, 3),
    /* FROSTT */
    B("tns: order drops", "b.tns", "1 1 1 1.0\n1 1 2.0\n", SPC_ERR_INPUT, 2, 5),
    B("tns: order grows", "b.tns", "1 1 1 1.0\n1 1 1 1 2.0\n", SPC_ERR_INPUT, 2, 9),
    B("tns: one field first", "b.tns", "# c\n5\n1 1 1\n", SPC_ERR_INPUT, 2, ANY),
    B("tns: one field later", "b.tns", "1 1 1.0\n5\n", SPC_ERR_INPUT, 2, 2),
    B("tns: empty file", "b.tns", "", SPC_ERR_INPUT, 0, ANY),
    B("tns: only comments", "b.tns", "# a\n\n# b\n", SPC_ERR_INPUT, 0, ANY),
    /* an index 0 counts its mode from 0 (test_tns_zero_based), unless the
     * dimensions are given */
    {"tns: index 0, dims given", "b.tns", "1 1 1.0\n1 0 1.0\n", SPC_ERR_INPUT, 2, 3, 2, {2, 2, 0}, 0},
    B("tns: non-numeric value", "b.tns", "1 1 x\n", SPC_ERR_INPUT, 1, 5),
    B("tns: index past int64", "b.tns", "9223372036854775808 1 1.0\n", SPC_ERR_OVERFLOW, 1, 1),
    /* a mode counted from 0 (an index 0) whose largest index is 2^63 - 1:
     * its dimension 2^63 overflowed (found by fuzz_tns) */
    B("tns: 2^63 - 1 in a mode from 0", "b.tns", "0 1.0\n9223372036854775807 2.0\n", SPC_ERR_OVERFLOW, 0, ANY),
    B("tns: index of 20 digits", "b.tns", "1 1 1.0\n99999999999999999999 1 1.0\n", SPC_ERR_OVERFLOW, 2, 1),
    {"tns: index past given dims", "b.tns", "1 1 1.0\n3 1 2.0\n", SPC_ERR_INPUT, 2, 1, 2, {2, 2, 0}, 0},
    {"tns: given order differs", "b.tns", "1 1 1.0\n", SPC_ERR_INPUT, 1, ANY, 3, {2, 2, 2}, 0},
    B("tns: order above 16", "b.tns", "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1.0\n", SPC_ERR_UNSUPPORTED, 1, ANY),
    {"tns: complex values", "b.tns", "1 1 1.0\n", SPC_ERR_UNSUPPORTED, ANY, ANY, 0, {0, 0, 0}, 1},
};
#define NBAD ((int)(sizeof bad_cases / sizeof bad_cases[0]))

/* The messages a user reads for an index 0 and an index past the size (a
 * FROSTT index 0 with inferred dimensions counts that mode from 0:
 * test_tns_zero_based). */
START_TEST(test_index_messages) {
  const struct { const char *name, *text, *want; } m[] = {
      {"z.mtx", RE "3 3 1\n1 0 1\n", "column index 0 is outside 1..3"},
      {"z.mtx", RE "3 3 1\n0 1 1\n", "row index 0 is outside 1..3"},
      {"z.mtx", RE "3 3 1\n1 4 1\n", "column index 4 is outside 1..3"},
      {"z.tns", "1 1 1.0\n1 3 1.0\n", "mode 2 index 3 is outside 1..2"}};
  for (int i = 0; i < 4; i++) {
    spc_read_opts o;
    spc_read_opts_init(&o);
    if (i == 3) { /* FROSTT with its dimensions given: 2 x 2 */
      o.ndims = 2;
      o.dims[0] = o.dims[1] = 2;
    }
    spc_tensor *t = NULL;
    spc_error e;
    char *dir = NULL;
    ck_assert_int_eq(io_read_text(m[i].name, m[i].text, &o, &t, &e, &dir), SPC_ERR_INPUT);
    ck_assert_msg(strstr(e.msg, m[i].want), "'%s' lacks '%s'", e.msg, m[i].want);
    ck_assert_ptr_null(t);
    tu_rmtree(dir);
    free(dir);
  }
}
END_TEST

/* A FROSTT mode with an index 0 counts from 0 read whole (SPLATT's
 * small4_zeroidx.tns: written back from 0, the note says so); streamed in
 * blocks (--mem) the whole file is not seen, so it is refused, and with
 * the dimensions given too. */
START_TEST(test_tns_zero_based) {
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "z.tns"), *out = tu_path(dir, "o.tns");
  const char *text = "# test\n1 1 3 0 2.0\n2 1 1 1 4.0\n1 2 1 2 3.0\n";
  ck_assert_int_eq(tu_write_file(path, text, strlen(text)), 0);
  char note[256];
  spc_read_opts o;
  io_opts_note(&o, note, sizeof note);
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_read(path, &o, &t, &e), &e);
  ck_assert_uint_eq(t->zero_based, 8u);
  ck_assert_int_eq(spc_tensor_dim(t, 3), 3);
  ck_assert_int_eq(spc_tensor_dim(t, 2), 3);
  ck_assert_msg(strstr(note, "the indices of mode 4 start at 0"), "%s", note);
  tu_assert_ok(spc_write(t, out, NULL, &e), &e);
  char *back = tu_read_file(out, NULL);
  ck_assert_str_eq(back, "1 1 3 0 2\n2 1 1 1 4\n1 2 1 2 3\n");
  free(back);
  spc_tensor_free(&t);
  spc_convert_opts c;
  spc_convert_opts_init(&c);
  c.mem = 1 << 20;
  ck_assert_int_eq(spc_convert_file(path, "csf", &o, &c, &t, &e), SPC_ERR_INPUT);
  ck_assert_msg(strstr(e.msg, "mode 4 index is 0: a mode counted from 0 is read from the whole "
                              "file"),
                "%s", e.msg);
  ck_assert_ptr_null(t);
  o.ndims = 4;
  for (int d = 0; d < 4; d++) o.dims[d] = 3;
  ck_assert_int_eq(spc_read(path, &o, &t, &e), SPC_ERR_INPUT);
  tu_rmtree(dir);
  free(path);
  free(out);
  free(dir);
}
END_TEST

START_TEST(test_bad_input) {
  const bad_case *b = &bad_cases[_i];
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.ndims = b->ndims;
  for (int d = 0; d < b->ndims; d++) o.dims[d] = b->dims[d];
  if (b->c128) o.vtype = SPC_C128;
  spc_tensor *t = NULL;
  spc_error e;
  char *dir = NULL;
  spc_status s = io_read_text(b->name, b->text, &o, &t, &e, &dir);
  char buf[1200];
  spc_error_string(&e, buf, sizeof buf);
  ck_assert_msg(s == b->st, "%s: status %s, expected %s (%s)", b->what, spc_status_name(s),
                spc_status_name(b->st), buf);
  ck_assert_msg(e.code == b->st, "%s: e.code %d", b->what, e.code);
  ck_assert_msg(b->line == ANY || e.line == b->line, "%s: line %lld, expected %lld (%s)",
                b->what, (long long)e.line, (long long)b->line, buf);
  ck_assert_msg(b->col == ANY || e.col == b->col, "%s: column %lld, expected %lld (%s)",
                b->what, (long long)e.col, (long long)b->col, buf);
  char *p = tu_path(dir, b->name);
  ck_assert_msg(!strcmp(e.file, p), "%s: error names '%s', not the file", b->what, e.file);
  ck_assert_msg(e.msg[0], "%s: no message", b->what);
  ck_assert_ptr_null(t);
  free(p);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- failed writes ------------------------------------------------------- */

static spc_tensor *small(int order, spc_vtype vt) {
  int64_t dims[3] = {3, 3, 3};
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(order, dims, 1, vt, &t, &e), &e);
  for (int l = 0; l < order; l++) ((int32_t *)spc_tensor_level_array_mut(t, l, "crd"))[0] = 1;
  if (vt != SPC_PATTERN) memset(spc_tensor_values_mut(t), 0, spc_vtype_size(vt));
  return t;
}

/* spc_write must fail with st, leave the folder as it was and any file
 * already at the target unchanged. */
static void expect_write_fails(const spc_tensor *t, const char *dir, const char *name,
                               spc_status st, bool existing) {
  char *p = tu_path(dir, name);
  const char *old = "old content\n";
  if (existing) ck_assert_int_eq(tu_write_str(p, old), 0);
  int before = tu_count_dir(dir);
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_write(t, p, NULL, &e);
  ck_assert_msg(s == st, "%s: status %s, expected %s", name, spc_status_name(s),
                spc_status_name(st));
  ck_assert_int_eq(e.code, st);
  ck_assert_msg(tu_count_dir(dir) == before, "%s: the folder changed", name);
  if (existing) {
    char *now = tu_read_file(p, NULL);
    ck_assert_msg(now && !strcmp(now, old), "%s: existing file changed", name);
    free(now);
    unlink(p);
  } else {
    ck_assert_msg(!tu_exists(p), "%s: output left", name);
  }
  free(p);
}

START_TEST(test_write_failures) {
  char *dir = tu_mkdtemp();
  spc_tensor *c = small(2, SPC_C128), *t3 = small(3, SPC_F64), *r = small(2, SPC_F64);
  for (int existing = 0; existing < 2; existing++) {
    expect_write_fails(c, dir, "c.tns", SPC_ERR_UNSUPPORTED, existing);
    expect_write_fails(c, dir, "c.tns.gz", SPC_ERR_UNSUPPORTED, existing);
    expect_write_fails(t3, dir, "t3.mtx", SPC_ERR_UNSUPPORTED, existing);
    expect_write_fails(t3, dir, "t3.npz", SPC_ERR_UNSUPPORTED, existing);
    expect_write_fails(r, dir, "r.unknown", SPC_ERR_ARG, existing);
  }
  /* a folder in the way of the rename */
  char *sub = tu_path(dir, "taken.mtx");
  ck_assert_int_eq(mkdir(sub, 0755), 0);
  spc_error e;
  ck_assert_int_eq(tu_count_dir(dir), 1);
  ck_assert_int_eq(spc_write(r, sub, NULL, &e), SPC_ERR_IO);
  ck_assert_int_eq(tu_count_dir(dir), 1);
  free(sub);
  /* a folder that does not exist */
  char *gone = tu_path(dir, "no/such/dir/x.mtx");
  ck_assert_int_eq(spc_write(r, gone, NULL, &e), SPC_ERR_IO);
  ck_assert_int_eq(tu_count_dir(dir), 1);
  free(gone);
  ck_assert_int_eq(spc_write(NULL, "x.mtx", NULL, &e), SPC_ERR_ARG);
  ck_assert_int_eq(spc_write(r, NULL, NULL, &e), SPC_ERR_ARG);
  /* a success replaces an existing file */
  char *p = tu_path(dir, "ok.mtx");
  ck_assert_int_eq(tu_write_str(p, "old\n"), 0);
  tu_assert_ok(spc_write(r, p, NULL, &e), &e);
  spc_tensor *back = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
  tu_assert_same_tensor(r, back, 0, "overwrite");
  ck_assert_int_eq(tu_count_dir(dir), 2);
  spc_tensor_free(&back);
  free(p);
  spc_tensor_free(&c);
  spc_tensor_free(&t3);
  spc_tensor_free(&r);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- huge headers on tiny files ------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Cap the address space of this (forked) test process at its current size
 * plus 512 MB, so an allocation sized by a lying header fails instead of
 * succeeding lazily.  Not under ASan, whose shadow memory needs far more. */
static void limit_memory(void) {
#ifndef UNDER_ASAN
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f) return;
  if (fscanf(f, "%lu", &pages) != 1) pages = 0;
  fclose(f);
  if (!pages) return;
  rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)512 << 20);
  struct rlimit rl = {lim, lim};
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void expect_fast_failure(const char *name, const char *text, spc_status want) {
  ck_assert_uint_le(strlen(text), 1200);
  spc_tensor *t = NULL;
  spc_error e;
  int64_t a0 = spc_alloc_count();
  double t0 = now_s();
  spc_status s = io_read_text(name, text, NULL, &t, &e, NULL);
  double dt = now_s() - t0;
  char buf[1200];
  ck_assert_msg(s == want, "%s: status %s, expected %s (%s)", name, spc_status_name(s),
                spc_status_name(want), spc_error_string(&e, buf, sizeof buf));
  ck_assert_msg(spc_alloc_count() - a0 < 64, "%s: %lld allocations", name,
                (long long)(spc_alloc_count() - a0));
  ck_assert_msg(dt < 2.0, "%s: took %.2f s", name, dt);
}

START_TEST(test_huge_header) {
  limit_memory();
  char text[1400];
  int n = sprintf(text, RE "%% claims 10^12 entries\n1000000 1000000 1000000000000\n");
  for (int k = 1; k <= 40; k++) n += sprintf(text + n, "%d %d %d.5\n", k, 1000000 - k, k);
  expect_fast_failure("huge.mtx", text, SPC_ERR_INPUT);
  /* the same claim near INT64_MAX */
  n = sprintf(text, RE "1000000 1000000 9223372036854775807\n1 1 1\n");
  expect_fast_failure("huge2.mtx", text, SPC_ERR_INPUT);
  /* a dense array claiming 10^12 values, with three */
  expect_fast_failure("huge_array.mtx", ARR "1000000 1000000\n1\n2\n3\n", SPC_ERR_INPUT);
  /* a vector array claiming 10^11 values */
  expect_fast_failure("huge_vec.mtx",
                      "%%MatrixMarket vector array real general\n100000000000\n1\n",
                      SPC_ERR_INPUT);
  /* a FROSTT index of 10^15: nothing sized by the dimension */
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(io_read_text("far.tns", "1000000000000000 1 1 1.0\n2 3 4 5.0\n", NULL, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 1000000000000000LL);
  ck_assert_int_le(spc_tensor_bytes(t), 256);
  spc_tensor_free(&t);
}
END_TEST

void io_add_bad_tcases(Suite *s) {
  TCase *tc = tcase_create("bad_input");
  tcase_add_loop_test(tc, test_bad_input, 0, NBAD);
  tcase_add_test(tc, test_index_messages);
  tcase_add_test(tc, test_tns_zero_based);
  suite_add_tcase(s, tc);
  tc = tcase_create("bad_write");
  tcase_add_test(tc, test_write_failures);
  tcase_add_test(tc, test_huge_header);
  suite_add_tcase(s, tc);
}
