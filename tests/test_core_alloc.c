/* test_core_alloc.c -- suite_core: the allocation-failure walk.  For
 * spc_read (.mtx, .mtx.gz, array .mtx, .tns), spc_tensor_combine,
 * spc_tensor_expand and spc_write (.mtx, .tns, .mtx.gz), the 1st, 2nd, ...
 * allocation is made to fail until the operation runs clean: every failing
 * run must return SPC_ERR_NOMEM, leave *out NULL and the output folder as
 * it was; leaks show under `make asan` (LeakSanitizer). */
#include "spc_impl.h"
#include "test_core.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- allocation-failure walk -------------------------------------------- */

typedef struct walk_ctx {
  const char *path;    /* input or output file */
  const spc_tensor *t; /* input tensor */
  int expand;
  const char *dir;     /* output folder (writes) */
  const char *keep;    /* content already at the output path, or NULL */
} walk_ctx;

typedef spc_status (*walk_op)(const walk_ctx *c, spc_tensor **out, spc_error *e);

static spc_status op_read(const walk_ctx *c, spc_tensor **out, spc_error *e) {
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.expand = c->expand;
  return spc_read(c->path, &o, out, e);
}
static spc_status op_combine(const walk_ctx *c, spc_tensor **out, spc_error *e) {
  return spc_tensor_combine(c->t, SPC_DUP_SUM, out, e);
}
static spc_status op_expand(const walk_ctx *c, spc_tensor **out, spc_error *e) {
  return spc_tensor_expand(c->t, out, e);
}
static spc_status op_write(const walk_ctx *c, spc_tensor **out, spc_error *e) {
  *out = NULL;
  return spc_write(c->t, c->path, NULL, e);
}

/* Fail the 1st, 2nd, ... allocation of op until it runs clean; each
 * failing run must give SPC_ERR_NOMEM, leave *out NULL and (writes) leave
 * the output folder as it was.  Leaks show under `make asan`.  The clean
 * result must equal the one of a run without injected failures. */
static void alloc_walk(const char *what, walk_op op, const walk_ctx *c) {
  spc_tensor *ref = NULL;
  spc_error e;
  spc_error_clear(&e);
  tu_assert_ok(op(c, &ref, &e), &e);
  if (c->dir && c->keep) /* restore what the reference run replaced */
    ck_assert_int_eq(tu_write_str(c->path, c->keep), 0);
  else if (c->dir) /* writes start from an empty target */
    unlink(c->path);
  int files = c->dir ? tu_count_dir(c->dir) : 0;
  int64_t k;
  for (k = 1;; k++) {
    ck_assert_msg(k < 100000, "%s: no clean run after %lld failures", what, (long long)k);
    spc_tensor *out = (spc_tensor *)&e; /* sentinel: must become NULL */
    spc_error_clear(&e);
    int64_t a0 = spc_alloc_count();
    spc_alloc_fail_at(k);
    spc_status s = op(c, &out, &e);
    int64_t used = spc_alloc_count() - a0;
    spc_alloc_fail_at(0);
    if (used < k) { /* allocation k never happened: a clean run */
      tu_assert_ok(s, &e);
      if (ref) tu_assert_same_tensor(ref, out, 0, what);
      spc_tensor_free(&out);
      break;
    }
    ck_assert_msg(s == SPC_ERR_NOMEM, "%s: allocation %lld of %lld failed, status %s",
                  what, (long long)k, (long long)used, spc_status_name(s));
    ck_assert_int_eq(e.code, SPC_ERR_NOMEM);
    ck_assert_msg(out == NULL, "%s: allocation %lld failed, *out not NULL", what,
                  (long long)k);
    if (c->dir) {
      ck_assert_msg(tu_count_dir(c->dir) == files,
                    "%s: allocation %lld failed and the folder changed", what,
                    (long long)k);
      if (c->keep) {
        char *now = tu_read_file(c->path, NULL);
        ck_assert_msg(now && !strcmp(now, c->keep),
                      "%s: failed write changed the existing file", what);
        free(now);
      }
    }
  }
  ck_assert_int_gt(k, 1); /* the operation allocates at all */
  spc_tensor_free(&ref);
}

static const char walk_mtx[] =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "% a comment\n"
    "4 4 6\n"
    "1 1 1.5\n2 1 -2\n3 2 3e2\n4 4 4\n4 1 0.25\n2 1 1\n";
static const char walk_array[] =
    "%%MatrixMarket matrix array complex hermitian\n3 3\n"
    "1 0\n2 1\n3 -1\n4 0\n5 2\n6 0\n";
static const char walk_tns[] = "# comment\n1 2 3 1.5\n2 1 1 2.5\n\n1 1 1 -1\n1 2 3 4\n";

START_TEST(test_alloc_walk_read) {
  char *dir = tu_mkdtemp();
  char *mtx = tu_file(dir, "w.mtx", walk_mtx);
  char *arr = tu_file(dir, "a.mtx", walk_array);
  char *tns = tu_file(dir, "w.tns", walk_tns);
  size_t gzn;
  unsigned char *gz = tu_gzip(walk_mtx, strlen(walk_mtx), &gzn);
  char *mgz = tu_path(dir, "w.mtx.gz");
  ck_assert_int_eq(tu_write_file(mgz, gz, gzn), 0);
  free(gz);
  walk_ctx c = {.path = mtx};
  alloc_walk("spc_read .mtx", op_read, &c);
  c.expand = 1;
  alloc_walk("spc_read .mtx expand", op_read, &c);
  c.path = mgz;
  alloc_walk("spc_read .mtx.gz expand", op_read, &c);
  c.path = arr;
  alloc_walk("spc_read array .mtx expand", op_read, &c);
  c.path = tns;
  c.expand = 0;
  alloc_walk("spc_read .tns", op_read, &c);
  tu_rmtree(dir);
  free(mtx), free(arr), free(tns), free(mgz), free(dir);
}
END_TEST

START_TEST(test_alloc_walk_ops) {
  int64_t dims[3] = {3, 3, 3};
  int64_t x[] = {2, 1, 0, 0, 0, 1, 2, 1, 0, 1, 2, 2, 0, 0, 1};
  double v[] = {1, 2, 3, 4, 5};
  spc_tensor *t = core_make_coo(3, dims, 5, SPC_F64, x, v);
  walk_ctx c = {.t = t};
  alloc_walk("spc_tensor_combine", op_combine, &c);
  spc_tensor_free(&t);
  int64_t x2[] = {2, 1, 0, 0, 1, 0, 2, 2};
  double cv[] = {1, 2, 3, 4, 5, 6, 7, 8};
  t = core_make_coo(2, dims, 4, SPC_C128, x2, cv);
  t->sym = SPC_HERMITIAN;
  c.t = t;
  alloc_walk("spc_tensor_expand", op_expand, &c);
  alloc_walk("spc_tensor_combine symmetric", op_combine, &c);
  spc_tensor_free(&t);
}
END_TEST

START_TEST(test_alloc_walk_write) {
  char *dir = tu_mkdtemp();
  int64_t dims[2] = {5, 4};
  int64_t x[] = {4, 3, 0, 0, 2, 1, 4, 3};
  double v[] = {0.1, -2, 1e300, 4};
  spc_tensor *t = core_make_coo(2, dims, 4, SPC_F64, x, v);
  const char *names[] = {"o.mtx", "o.tns", "o.mtx.gz"};
  for (int i = 0; i < 3; i++) {
    char *p = tu_path(dir, names[i]);
    walk_ctx c = {.t = t, .path = p, .dir = dir};
    alloc_walk(names[i], op_write, &c);
    /* again with a file already at the target: it must survive failures */
    ck_assert_int_eq(tu_write_str(p, "previous content\n"), 0);
    c.keep = "previous content\n";
    alloc_walk(names[i], op_write, &c);
    unlink(p);
    free(p);
  }
  spc_tensor_free(&t);
  /* symmetric to .tns: expanded first, so more allocations */
  int64_t xs[] = {3, 3, 0, 0, 2, 1, 3, 2};
  int64_t d4[2] = {4, 4};
  t = core_make_coo(2, d4, 4, SPC_F64, xs, v);
  t->sym = SPC_SYMMETRIC;
  char *p = tu_path(dir, "s.tns");
  walk_ctx c = {.t = t, .path = p, .dir = dir};
  alloc_walk("symmetric .tns", op_write, &c);
  free(p);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(dir);
}
END_TEST


/* ---- spc_prefault_write -----------------------------------------------------------
 * Every byte kept (a patterned buffer, from an unaligned start, on 1 and 3
 * threads); a fresh anonymous mapping's pages all resident afterwards
 * where the kernel has MADV_POPULATE_WRITE; under 1 MiB nothing is done. */
START_TEST(test_prefault_write) {
  const size_t n = (3 << 20) + 100;
  unsigned char *b = spc_malloc(n);
  ck_assert_ptr_nonnull(b);
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 31 + 7);
  for (int nt = 1; nt <= 3; nt += 2) {
    spc_prefault_write(b + 7, n - 7, nt);
    for (size_t i = 0; i < n; i++) ck_assert_msg(b[i] == (unsigned char)(i * 31 + 7), "byte %zu changed", i);
  }
  spc_free(b);
#ifdef MADV_POPULATE_WRITE
  const size_t m = 4 << 20, pg = 4096;
  unsigned char *a = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(a != MAP_FAILED);
  unsigned char vec[(4 << 20) / 4096];
  int supported = madvise(a, pg, MADV_POPULATE_WRITE) == 0; /* the first page: the probe */
  ck_assert_int_eq(mincore(a + pg, m - pg, vec), 0);
  int before = 0;
  for (size_t k = 0; k < (m - pg) / pg; k++) before += vec[k] & 1;
  ck_assert_int_eq(before, 0);
  spc_prefault_write(a + pg, (1 << 20) - pg, 2); /* under 1 MiB: nothing */
  ck_assert_int_eq(mincore(a + pg, m - pg, vec), 0);
  for (size_t k = 0; k < (m - pg) / pg; k++) before += vec[k] & 1;
  ck_assert_int_eq(before, 0);
  spc_prefault_write(a + pg, m - pg, 2);
  ck_assert_int_eq(mincore(a + pg, m - pg, vec), 0);
  int after = 0;
  for (size_t k = 0; k < (m - pg) / pg; k++) after += vec[k] & 1;
  if (supported) ck_assert_int_eq(after, (int)((m - pg) / pg));
  for (size_t i = 0; i < m; i++) ck_assert(a[i] == 0);
  munmap(a, m);
#endif
}
END_TEST

/* ---- arrays in temporary files (spc_map_*) --------------------------------------
 * A mapping reads as zeros, keeps what is written through a drop of its
 * pages, leaves no file visible in $TMPDIR, moves a malloc'ed array in
 * with its contents (zero pages and a tail included), goes back to memory
 * through spc_realloc, is released by spc_free; a folder that cannot hold
 * the file and a failed allocation are errors that leave the caller's
 * array as it was. */
START_TEST(test_map_arrays) {
  char *dir = tu_mkdtemp();
  char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", dir, 1);
  int live0 = spc_map_live();
  spc_error e;
  spc_error_clear(&e);
  const size_t n = 3 * 4096 + 100;
  void *p = NULL;
  tu_assert_ok(spc_map_alloc(n, &p, &e), &e);
  ck_assert_int_eq(spc_map_live(), live0 + 1);
  ck_assert(spc_map_owns(p));
  ck_assert_int_eq(tu_count_dir(dir), 0); /* unlinked at once */
  unsigned char *b = p;
  for (size_t k = 0; k < n; k++) ck_assert_int_eq(b[k], 0);
  for (size_t k = 0; k < n; k++) b[k] = (unsigned char)(k * 7 + 1);
  spc_map_drop(p); /* the pages leave the process, the contents stay */
  for (size_t k = 0; k < n; k++) ck_assert_int_eq(b[k], (unsigned char)(k * 7 + 1));
  spc_map_drop_all();
  ck_assert_int_eq(b[n - 1], (unsigned char)((n - 1) * 7 + 1));
  /* back to memory: the contents kept, the mapping released */
  unsigned char *q = spc_realloc(p, n + 50);
  ck_assert_ptr_nonnull(q);
  ck_assert(!spc_map_owns(q));
  ck_assert_int_eq(spc_map_live(), live0);
  for (size_t k = 0; k < n; k++) ck_assert_int_eq(q[k], (unsigned char)(k * 7 + 1));
  spc_free(q);
  /* adopt: page 1 and the tail hold data, pages 0, 2, 3 zeros */
  const size_t m = 4 * 4096 + 12;
  int64_t *a = spc_calloc(m, 1);
  ck_assert_ptr_nonnull(a);
  a[4096 / 8 + 3] = -5;
  ((unsigned char *)a)[m - 1] = 9;
  void *ad = a;
  tu_assert_ok(spc_map_adopt(&ad, m, &e), &e);
  ck_assert_ptr_ne(ad, a);
  ck_assert(spc_map_owns(ad));
  const unsigned char *c = ad;
  for (size_t k = 0; k < m; k++) {
    unsigned char want = k == m - 1 ? 9 : 0;
    if (k / 8 == 4096 / 8 + 3) want = ((const unsigned char *)&(int64_t){-5})[k % 8];
    ck_assert_msg(c[k] == want, "adopted byte %zu: %d, not %d", k, c[k], want);
  }
  spc_free(ad);
  ck_assert_int_eq(spc_map_live(), live0);
  ck_assert(!spc_map_owns(ad));
  /* a failed allocation: NOMEM, the caller's array untouched */
  void *keep = spc_malloc(8192);
  ck_assert_ptr_nonnull(keep);
  memset(keep, 3, 8192);
  void *kp = keep;
  spc_alloc_fail_at(1);
  ck_assert_int_eq(spc_map_adopt(&kp, 8192, &e), SPC_ERR_NOMEM);
  spc_alloc_fail_at(0);
  ck_assert_ptr_eq(kp, keep);
  ck_assert_int_eq(((unsigned char *)keep)[8191], 3);
  /* no folder for the file: an I/O error naming it */
  char *gone = tu_path(dir, "no/such/folder");
  setenv("TMPDIR", gone, 1);
  spc_error_clear(&e);
  ck_assert_int_eq(spc_map_adopt(&kp, 8192, &e), SPC_ERR_IO);
  ck_assert_ptr_eq(kp, keep);
  ck_assert_msg(strstr(e.msg, "cannot create a temporary file for the output") &&
                    strstr(e.file, "no/such/folder"),
                "%s: %s", e.file, e.msg);
  spc_free(keep);
  ck_assert_int_eq(spc_map_live(), live0);
  if (old) setenv("TMPDIR", old, 1);
  else unsetenv("TMPDIR");
  free(old);
  free(gone);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- huge-page hints ----------------------------------------------------- */

/* The VmFlags of the mapping holding address a in /proc/self/smaps ("" when
 * not found). */
static void vm_flags(uintptr_t a, char *out, size_t n) {
  out[0] = 0;
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return;
  char line[512];
  bool in = false;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
      in = a >= lo && a < hi;
      continue;
    }
    if (in && !strncmp(line, "VmFlags:", 8)) {
      size_t k = strlen(line + 8);
      if (k >= n) k = n - 1;
      memcpy(out, line + 8, k);
      out[k] = 0;
      break;
    }
  }
  fclose(f);
}

START_TEST(test_hugepages) {
  char *old = getenv("SPCONV_HUGEPAGES") ? strdup(getenv("SPCONV_HUGEPAGES")) : NULL;
  unsetenv("SPCONV_HUGEPAGES");
  ck_assert_int_eq(spc_hugepages_on(), 1);
  setenv("SPCONV_HUGEPAGES", "0", 1);
  ck_assert_int_eq(spc_hugepages_on(), 0);
  setenv("SPCONV_HUGEPAGES", "1", 1);
  ck_assert_int_eq(spc_hugepages_on(), 1);
  setenv("SPCONV_HUGEPAGES", "07", 1); /* only "0" turns it off */
  ck_assert_int_eq(spc_hugepages_on(), 1);
  /* the hint reaches the kernel, or not: the mapping's VmFlags "hg" */
  const size_t n = (size_t)16 << 20;
  for (int on = 0; on < 2; on++) {
    setenv("SPCONV_HUGEPAGES", on ? "1" : "0", 1);
    char *p = spc_malloc(n);
    ck_assert_ptr_nonnull(p);
    uintptr_t a = ((uintptr_t)p + 0x1fffff) & ~(uintptr_t)0x1fffff;
    char fl[256];
    vm_flags(a, fl, sizeof fl);
    if (!fl[0] || access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK)) {
      spc_free(p);
      break; /* no smaps or no THP: nothing to see */
    }
    ck_assert_msg((strstr(fl, " hg") != NULL) == on, "SPCONV_HUGEPAGES=%d: VmFlags%s", on, fl);
    spc_free(p);
  }
  if (old) setenv("SPCONV_HUGEPAGES", old, 1);
  else unsetenv("SPCONV_HUGEPAGES");
  free(old);
  /* free page reporting, from a copy of sysfs' layout */
  char *dir = tu_mkdtemp();
  ck_assert_int_eq(spc_free_page_reporting(dir), 0); /* no balloon driver */
  char *drv = tu_path(dir, "bus/virtio/drivers/virtio_balloon");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/virtio0' && touch '%s/bind'", drv, drv);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_int_eq(spc_free_page_reporting(dir), 0); /* a device, no features file */
  char *feat = tu_path(drv, "virtio0/features");
  ck_assert_int_eq(tu_write_str(feat, "0110000100000000000000000000000010000000\n"), 0);
  ck_assert_int_eq(spc_free_page_reporting(dir), 0); /* bit 5 clear */
  ck_assert_int_eq(tu_write_str(feat, "0110010100000000000000000000000010000000\n"), 0);
  ck_assert_int_eq(spc_free_page_reporting(dir), 1); /* bit 5: VIRTIO_BALLOON_F_REPORTING */
  ck_assert_int_eq(tu_write_str(feat, "01100\n"), 0);
  ck_assert_int_eq(spc_free_page_reporting(dir), 0); /* too short to say */
  free(feat);
  free(drv);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

void core_add_alloc_tcases(Suite *s) {
  TCase *tc = tcase_create("alloc_fail");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_alloc_walk_read);
  tcase_add_test(tc, test_alloc_walk_ops);
  tcase_add_test(tc, test_alloc_walk_write);
  tcase_add_test(tc, test_map_arrays);
  tcase_add_test(tc, test_prefault_write);
  tcase_add_test(tc, test_hugepages);
  suite_add_tcase(s, tc);
}
