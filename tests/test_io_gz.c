/* test_io_gz.c -- gzip input parsed while it is inflated (io/io_gz.c):
 * the same tensor as the one-thread path on files of many pieces, Matrix
 * Market and FROSTT, with errors reported at the right line. */
#include "suites.h"
#include "testutil.h"
#include "spc_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A Matrix Market (or FROSTT) text of n entries of about 30 bytes; zero:
 * FROSTT's third mode counted from 0. */
static char *make_text_z(bool mtx, bool zero, int64_t n, int64_t bad_line, size_t *len) {
  size_t cap = (size_t)n * 48 + 256, k = 0;
  char *s = malloc(cap);
  if (mtx) k += (size_t)snprintf(s, cap, "%%%%MatrixMarket matrix coordinate real general\n%% c\n1000 2000 %lld\n", (long long)n);
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t line = (mtx ? 4 : 1) + i;
    if (line == bad_line)
      k += (size_t)snprintf(s + k, cap - k, "%lld x 1.5\n", (long long)(x % 1000 + 1));
    else if (mtx)
      k += (size_t)snprintf(s + k, cap - k, "%lld %lld %.17g\n", (long long)(x % 1000 + 1),
                            (long long)((x >> 20) % 2000 + 1), (double)(x >> 11) * 0x1p-53 - 0.5);
    else
      k += (size_t)snprintf(s + k, cap - k, "%lld %lld %lld %.17g\n", (long long)(x % 1000 + 1),
                            (long long)((x >> 20) % 2000 + 1), (long long)((x >> 40) % 30 + !zero),
                            (double)(x >> 11) * 0x1p-53);
  }
  *len = k;
  return s;
}

static char *make_text(bool mtx, int64_t n, int64_t bad_line, size_t *len) {
  return make_text_z(mtx, false, n, bad_line, len);
}

static void same_both_ways_z(bool mtx, bool zero) {
  char *dir = tu_mkdtemp(), *path = tu_path(dir, mtx ? "a.mtx.gz" : "a.tns.gz");
  size_t len, zlen;
  char *text = make_text_z(mtx, zero, 600000, 0, &len); /* ~18 MB: several pieces */
  unsigned char *z = tu_gzip(text, len, &zlen);
  ck_assert_int_eq(tu_write_file(path, z, zlen), 0);
  spc_tensor *a = NULL, *b = NULL;
  spc_error e;
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.threads = 1;
  ck_assert_int_eq(spc_read(path, &o, &a, &e), SPC_OK);
  o.threads = 2;
  ck_assert_int_eq(spc_read(path, &o, &b, &e), SPC_OK);
  ck_assert_int_eq(spc_tensor_nstored(a), 600000);
  ck_assert_int_eq(spc_tensor_nstored(b), 600000);
  /* a FROSTT mode with an index 0 counts from 0 on either path */
  ck_assert_uint_eq(a->zero_based, zero ? 4u : 0u);
  ck_assert_uint_eq(b->zero_based, zero ? 4u : 0u);
  if (!mtx) ck_assert_int_eq(spc_tensor_dim(a, 2), 30);
  for (int d = 0; d < spc_tensor_order(a); d++)
    ck_assert_int_eq(spc_tensor_dim(a, d), spc_tensor_dim(b, d));
  for (int l = 0; l < spc_tensor_nlevels(a); l++) {
    const void *x, *y;
    spc_itype tx, ty;
    int64_t nx, ny;
    ck_assert_int_eq(spc_tensor_level_array(a, l, "crd", &x, &tx, &nx), SPC_OK);
    ck_assert_int_eq(spc_tensor_level_array(b, l, "crd", &y, &ty, &ny), SPC_OK);
    ck_assert_int_eq(tx, ty);
    ck_assert_int_eq(nx, ny);
    ck_assert(!memcmp(x, y, (size_t)nx * (tx == SPC_IDX32 ? 4 : 8)));
  }
  int64_t n = 0, m = 0;
  const void *va = spc_tensor_values(a, &n), *vb = spc_tensor_values(b, &m);
  ck_assert_int_eq(n, m);
  ck_assert(!memcmp(va, vb, (size_t)n * 8));
  spc_tensor_free(&a);
  spc_tensor_free(&b);
  free(text);
  free(z);
  tu_rmtree(dir);
  free(path);
  free(dir);
}

START_TEST(test_gz_mtx_same) { same_both_ways_z(true, false); }
END_TEST
START_TEST(test_gz_tns_same) { same_both_ways_z(false, false); }
END_TEST
START_TEST(test_gz_tns_zero_based) { same_both_ways_z(false, true); }
END_TEST

/* An error deep in the file (past the first pieces) names its line. */
START_TEST(test_gz_error_line) {
  char *dir = tu_mkdtemp(), *path = tu_path(dir, "bad.mtx.gz");
  size_t len, zlen;
  char *text = make_text(true, 400000, 350004, &len);
  unsigned char *z = tu_gzip(text, len, &zlen);
  ck_assert_int_eq(tu_write_file(path, z, zlen), 0);
  for (int threads = 1; threads <= 2; threads++) {
    spc_tensor *t = NULL;
    spc_error e;
    spc_read_opts o;
    spc_read_opts_init(&o);
    o.threads = threads;
    ck_assert_int_eq(spc_read(path, &o, &t, &e), SPC_ERR_INPUT);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(e.line, 350004);
    ck_assert_str_eq(e.file, path);
  }
  free(text);
  free(z);
  /* a mode counted from 0 whose largest index is 2^63 - 1: refused (its
   * dimension overflowed), as the plain file's reader refuses it */
  char *tp = tu_path(dir, "z.tns.gz");
  static const char zt[] = "0 1.0\n9223372036854775807 2.0\n";
  z = tu_gzip(zt, sizeof zt - 1, &zlen);
  ck_assert_int_eq(tu_write_file(tp, z, zlen), 0);
  spc_tensor *t = NULL;
  spc_error e;
  ck_assert_int_eq(spc_read(tp, NULL, &t, &e), SPC_ERR_OVERFLOW);
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(e.msg, "counts from 0") != NULL, "%s", e.msg);
  free(z);
  free(tp);
  tu_rmtree(dir);
  free(path);
  free(dir);
}
END_TEST

/* A gzip file cut short is "gzip data ends early" on every reading path:
 * whole (one and two threads), in blocks under a memory budget (--mem),
 * and read twice by the streamed count; the plain text, cut where the
 * gzip stream is, says the entry count instead (it cannot know). */
START_TEST(test_gz_truncated) {
  char *dir = tu_mkdtemp();
  size_t len, zlen;
  for (int mtx = 0; mtx < 2; mtx++) {
    char *path = tu_path(dir, mtx ? "cut.mtx.gz" : "cut.tns.gz");
    char *text = make_text(mtx, 300000, 0, &len);
    unsigned char *z = tu_gzip(text, len, &zlen);
    ck_assert_int_eq(tu_write_file(path, z, zlen / 2), 0);
    for (int way = 0; way < 4; way++) {
      spc_tensor *t = NULL;
      spc_error e;
      spc_error_clear(&e);
      spc_read_opts o;
      spc_read_opts_init(&o);
      o.threads = way == 1 ? 2 : 1;
      spc_status s;
      if (way < 2) {
        s = spc_read(path, &o, &t, &e);
      } else {
        spc_convert_opts c;
        spc_convert_opts_init(&c);
        if (way == 2) c.mem = 1 << 20; /* blocks */
        s = spc_convert_file(path, mtx ? "csr" : "csf", &o, &c, &t, &e);
      }
      ck_assert_msg(s == SPC_ERR_INPUT && strstr(e.msg, "gzip data ends early"), "%s, way %d: %d %s", path, way,
                    s, e.msg);
      ck_assert_ptr_null(t);
    }
    free(text);
    free(z);
    free(path);
  }
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* gunzip a whole file with zlib (which checks the trailer's CRC-32 and
 * size); NULL unless it ends where the single member ends. */
static char *gunzip_all(const char *path, size_t *len) {
  size_t zn = 0;
  unsigned char *zb = (unsigned char *)tu_read_file(path, &zn);
  if (!zb) return NULL;
  size_t cap = zn * 8 + 1024;
  char *out = malloc(cap);
  z_stream z;
  memset(&z, 0, sizeof z);
  ck_assert_int_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  z.next_in = zb;
  z.avail_in = (uInt)zn;
  int r;
  do {
    if (z.total_out == cap) out = realloc(out, cap *= 2);
    z.next_out = (unsigned char *)out + z.total_out;
    z.avail_out = (uInt)(cap - z.total_out);
    r = inflate(&z, Z_NO_FLUSH);
  } while (r == Z_OK);
  bool ok = r == Z_STREAM_END && z.avail_in == 0;
  *len = z.total_out;
  inflateEnd(&z);
  free(zb);
  if (!ok) free(out);
  return ok ? out : NULL;
}

/* .mtx.gz / .tns.gz written on threads (chunks of 1 MiB deflated apart,
 * io_buf.c): the same bytes on 1, 2 and 3 threads, one gzip member that
 * zlib inflates (CRC and size checked) to the plain file's bytes; a
 * file shorter than one chunk and an empty tensor too. */
START_TEST(test_gz_write) {
  char *dir = tu_mkdtemp();
  for (int c = 0; c < 4; c++) {
    bool mtx = c != 1;
    int64_t n = c == 2 ? 3 : c == 3 ? 0 : 600000;
    size_t len;
    char *text = make_text(mtx, n, 0, &len);
    char *src = tu_path(dir, mtx ? "src.mtx" : "src.tns");
    ck_assert_int_eq(tu_write_file(src, text, len), 0);
    free(text);
    spc_tensor *t = tu_read_ok(src, 0, SPC_VTYPE_AUTO);
    char *plain = tu_path(dir, mtx ? "p.mtx" : "p.tns");
    spc_error e;
    spc_error_clear(&e);
    tu_assert_ok(spc_write(t, plain, NULL, &e), &e);
    size_t pn = 0;
    char *pb = tu_read_file(plain, &pn);
    char *first = NULL;
    size_t firstn = 0;
    for (int th = 1; th <= 3; th++) {
      char name[32];
      snprintf(name, sizeof name, "z%d.%s.gz", th, mtx ? "mtx" : "tns");
      char *zp = tu_path(dir, name);
      spc_write_opts wo;
      spc_write_opts_init(&wo);
      wo.threads = th;
      tu_assert_ok(spc_write(t, zp, &wo, &e), &e);
      size_t un = 0, zn = 0;
      char *ub = gunzip_all(zp, &un);
      ck_assert_msg(ub != NULL, "case %d, %d threads: not one valid gzip member", c, th);
      ck_assert_msg(un == pn && !memcmp(ub, pb, pn), "case %d, %d threads: inflates to %zu bytes, not the %zu written plain", c, th, un, pn);
      free(ub);
      char *zb = tu_read_file(zp, &zn);
      if (!first) first = zb, firstn = zn;
      else {
        ck_assert_msg(zn == firstn && !memcmp(zb, first, zn), "case %d: %d threads wrote other bytes", c, th);
        free(zb);
      }
      if (c == 0) ck_assert_uint_lt(zn, pn / 2); /* compressed */
      free(zp);
    }
    free(first);
    free(pb);
    free(plain);
    free(src);
    spc_tensor_free(&t);
  }
  tu_rmtree(dir);
  free(dir);
}
END_TEST

Suite *suite_gz(void) {
  Suite *s = suite_create("gz");
  TCase *tc = tcase_create("pipeline");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_gz_mtx_same);
  tcase_add_test(tc, test_gz_tns_same);
  tcase_add_test(tc, test_gz_tns_zero_based);
  tcase_add_test(tc, test_gz_error_line);
  tcase_add_test(tc, test_gz_truncated);
  tcase_add_test(tc, test_gz_write);
  suite_add_tcase(s, tc);
  return s;
}
