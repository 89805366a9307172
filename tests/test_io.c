/* test_io.c -- suite_io: file kinds, gzip input (magic bytes, several
 * members, truncation, corruption), reading from memory; the rest of the
 * suite is in test_io_data.c, test_io_text.c and test_io_bad.c. */
#include "test_io.h"
#include "spc_io.h"
#include "suites.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

spc_status io_read_text(const char *name, const char *text,
                        const spc_read_opts *o, spc_tensor **t, spc_error *e,
                        char **dirp) {
  char *dir = tu_mkdtemp(), *p = tu_file(dir, name, text);
  spc_error_clear(e);
  *t = (spc_tensor *)e; /* sentinel: must be NULL on failure */
  spc_status s = spc_read(p, o, t, e);
  if (s) ck_assert_msg(*t == NULL, "%s: failed read left *out set", name);
  else ck_assert_ptr_nonnull(*t);
  free(p);
  if (dirp) *dirp = dir;
  else {
    tu_rmtree(dir);
    free(dir);
  }
  return s;
}

/* ---- file kinds ---------------------------------------------------------- */

START_TEST(test_kind_from_name) {
  static const struct {
    const char *name;
    spc_file_kind k;
  } cs[] = {{"a.mtx", SPC_FILE_MTX},       {"dir.x/A.MTX.GZ", SPC_FILE_MTX},
            {"a.mm", SPC_FILE_MTX},        {"a.tns", SPC_FILE_TNS},
            {"a.tns.gz", SPC_FILE_TNS},    {"a.bsp.h5", SPC_FILE_BSP},
            {"a.h5", SPC_FILE_BSP},        {"a.npz", SPC_FILE_NPZ},
            {"a.txt", SPC_FILE_UNKNOWN},   {"mtx", SPC_FILE_UNKNOWN},
            {"a.gz", SPC_FILE_UNKNOWN},    {"", SPC_FILE_UNKNOWN}};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    ck_assert_msg(spc_file_kind_from_name(cs[i].name) == cs[i].k, "'%s'", cs[i].name);
}
END_TEST

static const char small_mtx[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "% small\n"
    "4 5 6\n"
    "1 1 0.1\n4 5 -2.5e-3\n2 3 1e300\n3 1 -0\n1 5 7\n4 4 inf\n";

/* Expected content of small_mtx, as a tensor read from the plain file. */
static spc_tensor *small_ref(void) {
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(io_read_text("ref.mtx", small_mtx, NULL, &t, &e, NULL), &e);
  ck_assert_int_eq(spc_tensor_nstored(t), 6);
  return t;
}

static spc_status read_bytes(const char *name, const void *data, size_t n,
                             spc_tensor **t, spc_error *e) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, name);
  ck_assert_int_eq(tu_write_file(p, data, n), 0);
  spc_error_clear(e);
  *t = (spc_tensor *)e;
  spc_status s = spc_read(p, NULL, t, e);
  if (s) {
    ck_assert_ptr_null(*t);
    ck_assert_msg(strstr(e->file, name), "error does not name the file: '%s'", e->file);
  }
  tu_rmtree(dir);
  free(p);
  free(dir);
  return s;
}

/* ---- gzip ------------------------------------------------------------------ */

START_TEST(test_gzip_by_magic) {
  spc_tensor *ref = small_ref(), *t = NULL;
  size_t n;
  unsigned char *gz = tu_gzip(small_mtx, strlen(small_mtx), &n);
  spc_error e;
  const char *names[] = {"plain_name.mtx", "named.mtx.gz", "no_extension", "odd.tns"};
  for (int i = 0; i < 4; i++) {
    tu_assert_ok(read_bytes(names[i], gz, n, &t, &e), &e);
    tu_assert_same_tensor(ref, t, 0, names[i]);
    spc_tensor_free(&t);
  }
  free(gz);
  /* FROSTT in gzip, named .tns and .mtx-less */
  const char tns[] = "# gz\n1 2 3 4.5\n2 2 2 -1\n";
  gz = tu_gzip(tns, strlen(tns), &n);
  spc_tensor *tr = NULL;
  tu_assert_ok(io_read_text("r.tns", tns, NULL, &tr, &e, NULL), &e);
  tu_assert_ok(read_bytes("t.tns", gz, n, &t, &e), &e);
  tu_assert_same_tensor(tr, t, 0, "tns.gz");
  spc_tensor_free(&t);
  tu_assert_ok(read_bytes("t.tns.gz", gz, n, &t, &e), &e);
  tu_assert_same_tensor(tr, t, 0, "tns.gz");
  spc_tensor_free(&t);
  spc_tensor_free(&tr);
  spc_tensor_free(&ref);
  free(gz);
}
END_TEST

START_TEST(test_gzip_multi_member) {
  spc_tensor *ref = small_ref(), *t = NULL;
  spc_error e;
  size_t len = strlen(small_mtx);
  /* split at a line boundary, in the middle of a line, and in three */
  size_t cuts[][2] = {{60, 0}, {strlen("%%MatrixMarket matrix coordinate real general\n% small\n4 5 6\n1 1 0"), 0},
                      {20, 70}};
  cuts[0][0] = (size_t)(strstr(small_mtx, "2 3 1e300") - small_mtx);
  for (int c = 0; c < 3; c++) {
    size_t at[4] = {0, cuts[c][0], cuts[c][1] ? cuts[c][1] : len, len};
    int parts = cuts[c][1] ? 3 : 2;
    unsigned char *all = NULL;
    size_t total = 0;
    for (int k = 0; k < parts; k++) {
      size_t n;
      unsigned char *m = tu_gzip(small_mtx + at[k], at[k + 1] - at[k], &n);
      all = realloc(all, total + n + 8);
      memcpy(all + total, m, n);
      total += n;
      free(m);
    }
    tu_assert_ok(read_bytes("multi.mtx", all, total, &t, &e), &e);
    tu_assert_same_tensor(ref, t, 0, "multi-member");
    spc_tensor_free(&t);
    memset(all + total, 0, 8); /* zero padding after the last member */
    tu_assert_ok(read_bytes("padded.mtx.gz", all, total + 8, &t, &e), &e);
    tu_assert_same_tensor(ref, t, 0, "padded");
    spc_tensor_free(&t);
    free(all);
  }
  /* an empty member between two */
  size_t n1, n0, n2;
  unsigned char *a = tu_gzip(small_mtx, 30, &n1), *z = tu_gzip("", 0, &n0),
                *b = tu_gzip(small_mtx + 30, len - 30, &n2);
  unsigned char *all = malloc(n1 + n0 + n2);
  memcpy(all, a, n1);
  memcpy(all + n1, z, n0);
  memcpy(all + n1 + n0, b, n2);
  tu_assert_ok(read_bytes("empty_member.mtx", all, n1 + n0 + n2, &t, &e), &e);
  tu_assert_same_tensor(ref, t, 0, "empty member");
  spc_tensor_free(&t);
  free(a), free(z), free(b), free(all);
  spc_tensor_free(&ref);
}
END_TEST

START_TEST(test_gzip_truncated_corrupt) {
  size_t n;
  unsigned char *gz = tu_gzip(small_mtx, strlen(small_mtx), &n);
  spc_tensor *t = NULL;
  spc_error e;
  size_t cuts[] = {n / 2, n - 4, n - 1, 10, 3, 2};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    spc_status s = read_bytes("cut.mtx", gz, cuts[i], &t, &e);
    ck_assert_msg(s == SPC_ERR_INPUT, "cut at %zu of %zu: %s", cuts[i], n,
                  spc_status_name(s));
    ck_assert_int_eq(e.code, SPC_ERR_INPUT);
  }
  /* a second member cut short */
  unsigned char *two = malloc(2 * n);
  memcpy(two, gz, n);
  memcpy(two + n, gz, n);
  ck_assert_int_eq(read_bytes("cut2.mtx.gz", two, n + n / 2, &t, &e), SPC_ERR_INPUT);
  /* garbage after a complete member */
  memcpy(two + n, "garbage!", 8);
  ck_assert_int_eq(read_bytes("trail.mtx.gz", two, n + 8, &t, &e), SPC_ERR_INPUT);
  free(two);
  /* corrupt deflate data and a corrupt CRC */
  unsigned char *bad = malloc(n);
  memcpy(bad, gz, n);
  bad[n - 6] ^= 0x55; /* inside the CRC32 of the trailer */
  ck_assert_int_eq(read_bytes("crc.mtx", bad, n, &t, &e), SPC_ERR_INPUT);
  memcpy(bad, gz, n);
  for (size_t k = 12; k < n - 8; k += 3) bad[k] ^= 0xA5;
  ck_assert_int_eq(read_bytes("corrupt.mtx", bad, n, &t, &e), SPC_ERR_INPUT);
  free(bad);
  free(gz);
  /* gzip of nothing, named .mtx: no banner */
  gz = tu_gzip("", 0, &n);
  ck_assert_int_eq(read_bytes("empty.mtx.gz", gz, n, &t, &e), SPC_ERR_INPUT);
  free(gz);
}
END_TEST

/* Inflated data far larger than the compressed size suggests. */
START_TEST(test_gzip_high_ratio) {
  const int n = 200000;
  size_t cap = (size_t)n * 8 + 128, len = 0;
  char *text = malloc(cap);
  len += (size_t)sprintf(text, "%%%%MatrixMarket matrix coordinate integer general\n2 2 %d\n", n);
  for (int k = 0; k < n; k++) {
    memcpy(text + len, "2 1 3\n", 6);
    len += 6;
  }
  size_t gn;
  unsigned char *gz = tu_gzip(text, len, &gn);
  ck_assert_uint_gt(len / gn, 64);
  spc_tensor *t = NULL, *c = NULL;
  spc_error e;
  tu_assert_ok(read_bytes("ratio.mtx", gz, gn, &t, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(t), n);
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 1);
  ck_assert_int_eq(((const int64_t *)spc_tensor_values(c, NULL))[0], 3LL * n);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  free(gz);
  free(text);
}
END_TEST

/* ---- reading from memory, missing files ---------------------------------- */

START_TEST(test_read_text_memory) {
  spc_tensor *ref = small_ref(), *t = NULL;
  spc_error e;
  size_t n = strlen(small_mtx);
  char *copy = malloc(n); /* exact size, no NUL: overreads show under ASan */
  memcpy(copy, small_mtx, n);
  tu_assert_ok(spc_read_text("mem.mtx", copy, n, NULL, &t, &e), &e);
  tu_assert_same_tensor(ref, t, 0, "spc_read_text");
  spc_tensor_free(&t);
  /* the same without the final newline */
  tu_assert_ok(spc_read_text("mem.mtx", copy, n - 1, NULL, &t, &e), &e);
  tu_assert_same_tensor(ref, t, 0, "no final newline");
  spc_tensor_free(&t);
  /* cut inside the last value: "inf" -> "in" is not a number */
  t = (spc_tensor *)&e;
  ck_assert_int_eq(spc_read_text("mem.mtx", copy, n - 2, NULL, &t, &e), SPC_ERR_INPUT);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(e.line, 9);
  free(copy);
  const char tns[] = "1 1 2\n";
  copy = malloc(sizeof tns - 1);
  memcpy(copy, tns, sizeof tns - 1);
  tu_assert_ok(spc_read_text("mem.tns", copy, sizeof tns - 1, NULL, &t, &e), &e);
  ck_assert_int_eq(spc_tensor_order(t), 2);
  spc_tensor_free(&t);
  free(copy);
  spc_tensor_free(&ref);
}
END_TEST

START_TEST(test_read_missing) {
  spc_tensor *t = NULL;
  spc_error e;
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "absent.mtx");
  spc_error_clear(&e);
  ck_assert_int_eq(spc_read(p, NULL, &t, &e), SPC_ERR_IO);
  ck_assert_ptr_null(t);
  ck_assert_str_eq(e.file, p);
  spc_error_clear(&e);
  ck_assert_int_eq(spc_read(dir, NULL, &t, &e), SPC_ERR_IO); /* a folder */
  ck_assert_ptr_null(t);
  ck_assert_int_eq(spc_read(NULL, NULL, &t, &e), SPC_ERR_ARG);
  ck_assert_int_eq(spc_read(p, NULL, NULL, &e), SPC_ERR_ARG);
  /* content nobody recognises, with a name nobody knows */
  ck_assert_int_eq(io_read_text("x.dat", "% hello\n", NULL, &t, &e, NULL), SPC_ERR_INPUT);
  ck_assert_int_eq(e.line, 1);
  /* empty file named .mtx */
  ck_assert_int_eq(io_read_text("e.mtx", "", NULL, &t, &e, NULL), SPC_ERR_INPUT);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* spc_cleanup_temp_files removes the temporary file of every output being
 * written (what a signal handler calls): the output then fails to commit,
 * named, and leaves nothing; an output committed is not touched, and one
 * opened after the cleanup is listed again. */
START_TEST(test_cleanup_temp_files) {
  char *dir = tu_mkdtemp();
  char *p1 = tu_path(dir, "a.mtx"), *p2 = tu_path(dir, "b.mtx.gz"), *p3 = tu_path(dir, "c.tns");
  spc_out o1, o2, o3;
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(spc_out_open(&o1, p1, 0, &e), SPC_OK);
  ck_assert_int_eq(spc_out_open(&o2, p2, 1, &e), SPC_OK);
  ck_assert_int_eq(spc_out_write(&o1, "x\n", 2, &e), SPC_OK);
  ck_assert_int_eq(tu_count_dir(dir), 2); /* the two temporary names */
  spc_cleanup_temp_files();
  ck_assert_int_eq(tu_count_dir(dir), 0);
  ck_assert_int_eq(spc_out_open(&o3, p3, 0, &e), SPC_OK);
  ck_assert_int_eq(spc_out_write(&o3, "1 1\n", 4, &e), SPC_OK);
  ck_assert_int_eq(spc_out_close(&o3, SPC_OK, &e), SPC_OK);
  ck_assert(tu_exists(p3));
  spc_cleanup_temp_files(); /* c.tns is committed: kept */
  ck_assert(tu_exists(p3));
  ck_assert_int_ne(spc_out_close(&o1, SPC_OK, &e), SPC_OK);
  ck_assert_str_eq(e.file, p1);
  ck_assert_msg(strstr(e.msg, "cannot rename output into place") != NULL, "%s", e.msg);
  ck_assert_int_ne(spc_out_close(&o2, SPC_OK, &e), SPC_OK);
  ck_assert_int_eq(tu_count_dir(dir), 1);
  ck_assert(!tu_exists(p1) && !tu_exists(p2));
  /* an output opened after a cleanup is listed again */
  ck_assert_int_eq(spc_out_open(&o1, p1, 0, &e), SPC_OK);
  ck_assert_int_eq(tu_count_dir(dir), 2);
  spc_cleanup_temp_files();
  ck_assert_int_eq(tu_count_dir(dir), 1);
  ck_assert_int_ne(spc_out_close(&o1, SPC_OK, &e), SPC_OK);
  free(p1);
  free(p2);
  free(p3);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

Suite *suite_io(void) {
  Suite *s = suite_create("io");
  TCase *tc = tcase_create("kinds_gzip");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_kind_from_name);
  tcase_add_test(tc, test_gzip_by_magic);
  tcase_add_test(tc, test_gzip_multi_member);
  tcase_add_test(tc, test_gzip_truncated_corrupt);
  tcase_add_test(tc, test_gzip_high_ratio);
  tcase_add_test(tc, test_read_text_memory);
  tcase_add_test(tc, test_read_missing);
  tcase_add_test(tc, test_cleanup_temp_files);
  suite_add_tcase(s, tc);
  io_add_text_tcases(s);
  io_add_bad_tcases(s);
  io_add_data_tcases(s);
  return s;
}
