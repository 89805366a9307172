/* test_containers.c -- suite_containers: binsparse HDF5 (.bsp.h5) and scipy
 * .npz files.  Exact round trips of every level array (all value types,
 * both index widths, COO / CSR / CSC / DCSR / DCSC / order-N / formats
 * binsparse cannot describe), files other tools write (built here with the
 * HDF5 C API), corrupt and lying files (checksums, crc32, headers,
 * descriptors), the allocation-failure walk, SciPy / h5py reading what we
 * write (when python3 has them), and the shared matrices. */
#include "spc_containers.h"
#include "suites.h"
#include "testutil.h"
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- building tensors --------------------------------------------------- */

typedef struct lvdef {
  const spc_level_format *fmt;
  int dim;
  int64_t size;
  int64_t npos, ncrd;
  const int64_t *pos, *crd;
} lvdef;

/* A tensor from level definitions; arrays of width w; nval values. */
static spc_tensor *mk(const char *format, int order, const int64_t *dims, int nl,
                      const lvdef *d, spc_itype w, spc_vtype vt, const void *vals,
                      int64_t nval) {
  spc_error e;
  spc_tensor *t = spc_tensor_alloc(order, dims, vt);
  ck_assert_ptr_nonnull(t);
  t->format = format;
  t->nlevels = nl;
  for (int l = 0; l < nl; l++) {
    spc_level *lv = &t->lv[l];
    lv->fmt = d[l].fmt;
    lv->dim = d[l].dim;
    lv->size = d[l].size;
    lv->props = lv->fmt->props;
    if (lv->fmt == &spc_level_compressed) {
      ck_assert_int_eq(spc_level_add_array(lv, "pos", w, d[l].npos, &e), SPC_OK);
      for (int64_t k = 0; k < d[l].npos; k++) spc_arr_set(&lv->arr[0], k, d[l].pos[k]);
    }
    if (lv->fmt != &spc_level_dense) {
      ck_assert_int_eq(spc_level_add_array(lv, "crd", w, d[l].ncrd, &e), SPC_OK);
      for (int64_t k = 0; k < d[l].ncrd; k++)
        spc_arr_set(&lv->arr[lv->narr - 1], k, d[l].crd[k]);
    }
  }
  t->nval = nval;
  if (vt != SPC_PATTERN) {
    t->val = spc_malloc_n(nval, spc_vtype_size(vt));
    ck_assert_ptr_nonnull(t->val);
    if (nval) memcpy(t->val, vals, (size_t)nval * spc_vtype_size(vt));
    t->val_owned = true;
  }
  tu_assert_ok(spc_cnt_validate(t, "mk", &e), &e);
  return t;
}

/* 2-d COO: rows r, cols c (n entries); lv0 stores dimension d0. */
static spc_tensor *mk_coo2(int64_t m, int64_t n, int64_t nnz, const int64_t *r,
                           const int64_t *c, int d0, spc_itype w, spc_vtype vt,
                           const void *vals) {
  int64_t dims[2] = {m, n}, pos[2] = {0, nnz};
  lvdef d[2] = {{&spc_level_compressed, d0, dims[d0], 2, nnz, pos, d0 ? c : r},
                {&spc_level_singleton, 1 - d0, dims[1 - d0], 0, nnz, NULL, d0 ? r : c}};
  return mk("coo", 2, dims, 2, d, w, vt, vals, nnz);
}

/* CSR (outer = 0) or CSC (outer = 1). */
static spc_tensor *mk_csx(int64_t m, int64_t n, int outer, const int64_t *ptr,
                          const int64_t *idx, spc_itype w, spc_vtype vt,
                          const void *vals) {
  int64_t dims[2] = {m, n}, nnz = ptr[dims[outer]];
  lvdef d[2] = {{&spc_level_dense, outer, dims[outer], 0, 0, NULL, NULL},
                {&spc_level_compressed, 1 - outer, dims[1 - outer], dims[outer] + 1,
                 nnz, ptr, idx}};
  return mk(outer ? "csc" : "csr", 2, dims, 2, d, w, vt, vals, nnz);
}

/* The 5 x 4 example of most tests: 6 entries, unsorted, one repeated. */
static const int64_t ex_r[6] = {4, 0, 2, 0, 4, 2}, ex_c[6] = {3, 1, 0, 1, 0, 3};

static void ex_values(spc_vtype vt, void *v) {
  static const double d[12] = {1.5, -2, 3.25, 4, -0.0, 6e300, 7, 8, 9, 10, 11, 12};
  for (int k = 0; k < 6; k++) switch (vt) {
    case SPC_I64: ((int64_t *)v)[k] = k == 5 ? INT64_MIN : (int64_t)(k * 7 - 20); break;
    case SPC_U64: ((uint64_t *)v)[k] = k == 5 ? UINT64_MAX : (uint64_t)k * 3; break;
    case SPC_F32: ((float *)v)[k] = (float)d[k]; break;
    case SPC_F64: ((double *)v)[k] = d[k]; break;
    case SPC_C128: ((double *)v)[2 * k] = d[k], ((double *)v)[2 * k + 1] = d[11 - k]; break;
    default: break;
    }
}

static spc_tensor *mk_example(spc_vtype vt, spc_itype w, int d0) {
  double v[12];
  ex_values(vt, v);
  return mk_coo2(5, 4, 6, ex_r, ex_c, d0, w, vt, v);
}

/* Every field, level array and value identical. */
static void assert_identical(const spc_tensor *a, const spc_tensor *b, const char *what) {
  ck_assert_msg(!strcmp(a->format, b->format), "%s: format %s != %s", what, a->format, b->format);
  ck_assert_int_eq(a->order, b->order);
  ck_assert_int_eq(a->nlevels, b->nlevels);
  ck_assert_msg(a->vt == b->vt, "%s: vtype %s != %s", what, spc_vtype_name(a->vt),
                spc_vtype_name(b->vt));
  ck_assert_int_eq(a->sym, b->sym);
  for (int d = 0; d < a->order; d++) ck_assert_int_eq(a->dims[d], b->dims[d]);
  for (int l = 0; l < a->nlevels; l++) {
    const spc_level *x = &a->lv[l], *y = &b->lv[l];
    ck_assert_msg(x->fmt == y->fmt, "%s: level %d format", what, l);
    ck_assert_int_eq(x->dim, y->dim);
    ck_assert_int_eq(x->size, y->size);
    ck_assert_msg(x->props == y->props, "%s: level %d props %#x != %#x", what, l,
                  x->props, y->props);
    ck_assert_int_eq(x->narr, y->narr);
    for (int i = 0; i < x->narr; i++) {
      const spc_array *u = &x->arr[i], *v = &y->arr[i];
      ck_assert_str_eq(u->name, v->name);
      ck_assert_int_eq(u->len, v->len);
      /* a root pos ({0, n}) is not stored: its width may change */
      bool root_pos = !l && x->fmt == &spc_level_compressed && !strcmp(u->name, "pos");
      ck_assert_msg(root_pos || u->type == v->type, "%s: level %d %s width", what, l, u->name);
      for (int64_t k = 0; k < u->len; k++)
        ck_assert_msg(spc_arr_get(u, k) == spc_arr_get(v, k), "%s: level %d %s[%lld]", what,
                      l, u->name, (long long)k);
    }
  }
  ck_assert_int_eq(a->nval, b->nval);
  if (a->vt != SPC_PATTERN)
    ck_assert_msg(!memcmp(a->val, b->val, (size_t)a->nval * spc_vtype_size(a->vt)),
                  "%s: values differ", what);
}

/* ---- files -------------------------------------------------------------- */

typedef spc_status (*wr_fn)(const spc_tensor *, const char *, const spc_write_opts *,
                            spc_error *);
typedef spc_status (*rd_fn)(const char *, const spc_read_opts *, spc_tensor **, spc_error *);

/* Write t with w, read it back with r, and return what was read. */
static spc_tensor *round_trip(const spc_tensor *t, const char *path, wr_fn w, rd_fn r,
                              const spc_write_opts *wo, const spc_read_opts *ro) {
  spc_error e;
  spc_tensor *back = NULL;
  spc_error_clear(&e);
  tu_assert_ok(w(t, path, wo, &e), &e);
  tu_assert_ok(r(path, ro, &back, &e), &e);
  ck_assert_ptr_nonnull(back);
  return back;
}

/* Root attribute text (malloc'ed) or NULL. */
static char *h5_attr(const char *path, const char *name) {
  char *out = NULL;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  if (H5Aexists(f, name) > 0) {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT), ty = H5Aget_type(a);
    size_t n = H5Tget_size(ty);
    out = calloc(1, n + 1);
    ck_assert_int_ge(H5Aread(a, ty, out), 0);
    H5Tclose(ty);
    H5Aclose(a);
  }
  H5Fclose(f);
  return out;
}

static bool h5_has(const char *path, const char *dset) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  bool r = H5Lexists(f, dset, H5P_DEFAULT) > 0;
  H5Fclose(f);
  return r;
}

/* Replace (or add) a scalar string attribute, variable-length. */
static void h5_set_attr(const char *path, const char *name, const char *text) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  if (H5Aexists(f, name) > 0) H5Adelete(f, name);
  hid_t ty = H5Tcopy(H5T_C_S1);
  H5Tset_size(ty, H5T_VARIABLE);
  H5Tset_cset(ty, H5T_CSET_UTF8);
  hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(f, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert_int_ge(H5Awrite(a, ty, &text), 0);
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(ty);
  H5Fclose(f);
}

/* Replace a dataset by a contiguous one of n elements of file type ft. */
static void h5_set_dset(const char *path, const char *name, hid_t ft, hid_t mt, int64_t n,
                        const void *data) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  if (H5Lexists(f, name, H5P_DEFAULT) > 0) H5Ldelete(f, name, H5P_DEFAULT);
  if (n >= 0) {
    hsize_t dims = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(f, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    if (n) ck_assert_int_ge(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    H5Dclose(d);
    H5Sclose(sp);
  }
  H5Fclose(f);
}

/* A new file holding only a string attribute "binsparse" (NULL: none). */
static void h5_new(const char *path, const char *desc) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  H5Fclose(f);
  if (desc) h5_set_attr(path, "binsparse", desc);
}

/* Flip a byte in the middle of the first chunk of dataset name. */
static void h5_corrupt(const char *path, const char *name) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, name, H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t off[1];
  unsigned mask;
  haddr_t addr;
  hsize_t size;
  ck_assert_int_ge(H5Dget_chunk_info(d, sp, 0, off, &mask, &addr, &size), 0);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  FILE *fp = fopen(path, "r+b");
  ck_assert_ptr_nonnull(fp);
  fseek(fp, (long)(addr + size / 2), SEEK_SET);
  int c = fgetc(fp);
  fseek(fp, (long)(addr + size / 2), SEEK_SET);
  fputc(c ^ 0x5a, fp);
  fclose(fp);
}

static void expect_fail(rd_fn r, const char *path, spc_status want, const char *key,
                        const char *text) {
  spc_error e;
  spc_tensor *t = (spc_tensor *)&e;
  char buf[1200];
  spc_error_clear(&e);
  spc_status s = r(path, NULL, &t, &e);
  ck_assert_msg(s == want, "%s: status %s, expected %s: %s", path, spc_status_name(s),
                spc_status_name(want), spc_error_string(&e, buf, sizeof buf));
  ck_assert_ptr_null(t);
  ck_assert_int_eq(e.code, want);
  ck_assert_msg(!strcmp(e.file, path), "error names %s, not %s", e.file, path);
  if (key) ck_assert_msg(!strcmp(e.key, key), "key '%s', expected '%s' (%s)", e.key, key, e.msg);
  if (text) ck_assert_msg(strstr(e.msg, text), "message '%s' lacks '%s'", e.msg, text);
}

static const spc_vtype all_vt[] = {SPC_I64, SPC_U64, SPC_F32, SPC_F64, SPC_C128, SPC_PATTERN};

/* ---- binsparse: round trips --------------------------------------------- */

START_TEST(test_bsp_coo_types) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "a.bsp.h5");
  for (size_t i = 0; i < sizeof all_vt / sizeof *all_vt; i++)
    for (int w = 0; w < 2; w++)
      for (int d0 = 0; d0 < 2; d0++) {
        spc_tensor *t = mk_example(all_vt[i], w ? SPC_IDX64 : SPC_IDX32, d0);
        spc_tensor *b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
        assert_identical(t, b, spc_vtype_name(all_vt[i]));
        char *desc = h5_attr(p, "binsparse");
        ck_assert_ptr_nonnull(desc);
        ck_assert_ptr_nonnull(strstr(desc, d0 ? "\"COOC\"" : "\"COO\""));
        ck_assert_ptr_nonnull(strstr(desc, w ? "\"int64\"" : "\"int32\""));
        ck_assert_ptr_nonnull(strstr(desc, "\"number_of_stored_values\": 6"));
        free(desc);
        spc_tensor_free(&t);
        spc_tensor_free(&b);
      }
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_compressed) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "c.bsp.h5");
  /* rows 0 and 3 of 5 hold entries (row 3 unsorted: no ORDERED) */
  const int64_t ptr[6] = {0, 2, 2, 2, 5, 5}, idx[5] = {0, 3, 2, 1, 3};
  const double v[5] = {1, 2, 3, 4, 5};
  const int64_t dpos[2] = {0, 2}, drow[2] = {0, 3}, dptr[3] = {0, 2, 5};
  int64_t dims[2] = {5, 4};
  for (int w = 0; w < 2; w++) {
    spc_itype it = w ? SPC_IDX64 : SPC_IDX32;
    spc_tensor *t[4];
    t[0] = mk_csx(5, 4, 0, ptr, idx, it, SPC_F64, v);
    t[1] = mk_csx(4, 5, 1, ptr, idx, it, SPC_F64, v);
    lvdef dc[2] = {{&spc_level_compressed, 0, 5, 2, 2, dpos, drow},
                   {&spc_level_compressed, 1, 4, 3, 5, dptr, idx}};
    t[2] = mk("dcsr", 2, dims, 2, dc, it, SPC_F64, v, 5);
    dc[0].dim = 1, dc[1].dim = 0, dc[0].size = 4, dc[1].size = 5;
    int64_t dims2[2] = {5, 4};
    const int64_t dcol[2] = {0, 3};
    dc[0].crd = dcol;
    t[3] = mk("dcsc", 2, dims2, 2, dc, it, SPC_F64, v, 5);
    const char *names[4] = {"\"CSR\"", "\"CSC\"", "\"DCSR\"", "\"DCSC\""};
    for (int k = 0; k < 4; k++) {
      spc_tensor *b = round_trip(t[k], p, spc_bsp_write, spc_bsp_read, NULL, NULL);
      assert_identical(t[k], b, names[k]);
      char *desc = h5_attr(p, "binsparse");
      ck_assert_ptr_nonnull(strstr(desc, names[k]));
      free(desc);
      ck_assert(h5_has(p, "pointers_to_1") && h5_has(p, "indices_1"));
      ck_assert(h5_has(p, "indices_0") == (k >= 2));
      spc_tensor_free(&b);
      spc_tensor_free(&t[k]);
    }
  }
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_order_n) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "n.bsp.h5");
  /* order-3 COO, levels in dimension order (2, 0, 1) */
  int64_t dims[3] = {3, 4, 5}, pos[2] = {0, 4};
  const int64_t c0[4] = {4, 0, 4, 2}, c1[4] = {1, 2, 0, 2}, c2[4] = {3, 3, 0, 1};
  const double v[4] = {1, 2, 3, 4};
  lvdef d[3] = {{&spc_level_compressed, 2, 5, 2, 4, pos, c0},
                {&spc_level_singleton, 0, 3, 0, 4, NULL, c1},
                {&spc_level_singleton, 1, 4, 0, 4, NULL, c2}};
  spc_tensor *t = mk("coo", 3, dims, 3, d, SPC_IDX32, SPC_F64, v, 4);
  spc_tensor *b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "coo3");
  char *desc = h5_attr(p, "binsparse");
  ck_assert_ptr_nonnull(strstr(desc, "\"swizzle\": [2, 0, 1], \"level\": \"sparse\", \"rank\": 3"));
  ck_assert(h5_has(p, "indices_2") && !h5_has(p, "pointers_to_1"));
  free(desc);
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  /* order-3 CSF (dense, compressed, compressed) */
  const int64_t p1[4] = {0, 1, 1, 3}, i1[3] = {2, 0, 3}, p2[4] = {0, 2, 3, 4}, i2[4] = {0, 4, 1, 2};
  lvdef f[3] = {{&spc_level_dense, 0, 3, 0, 0, NULL, NULL},
                {&spc_level_compressed, 1, 4, 4, 3, p1, i1},
                {&spc_level_compressed, 2, 5, 4, 4, p2, i2}};
  t = mk("csf", 3, dims, 3, f, SPC_IDX64, SPC_F64, v, 4);
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "csf");
  ck_assert(h5_has(p, "pointers_to_2") && h5_has(p, "indices_1"));
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  /* order 1 */
  int64_t n1 = 9, vp[2] = {0, 2};
  const int64_t vc[2] = {1, 7};
  lvdef g[1] = {{&spc_level_compressed, 0, 9, 2, 2, vp, vc}};
  t = mk("coo", 1, &n1, 1, g, SPC_IDX32, SPC_F64, v, 2);
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "vector");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_dense_and_empty) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "d.bsp.h5");
  spc_error e;
  spc_tensor *t = NULL, *ref = NULL;
  int64_t dims[2] = {3, 2};
  int mode[2] = {1, 0}; /* column-major, as a Matrix Market array */
  tu_assert_ok(spc_dense_alloc(2, dims, mode, SPC_F64, &t, &e), &e);
  const double v[6] = {1, 0, 2, 0, -0.0, 3};
  memcpy(t->val, v, sizeof v);
  spc_tensor *b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  ck_assert_str_eq(b->format, "coo");
  ck_assert_int_eq(spc_tensor_nstored(b), 3);
  tu_assert_ok(spc_tensor_to_coo(t, 1, &ref, &e), &e);
  tu_assert_same_tensor(ref, b, 0, "dense");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  spc_tensor_free(&ref);
  /* empty COO and empty CSR */
  t = mk_coo2(3, 4, 0, NULL, NULL, 0, SPC_IDX32, SPC_F64, NULL);
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "empty coo");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  const int64_t z[4] = {0, 0, 0, 0};
  t = mk_csx(3, 4, 0, z, NULL, SPC_IDX64, SPC_PATTERN, NULL);
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "empty csr");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* A format binsparse cannot describe: written with our attribute alone. */
static spc_tensor *mk_native(void) {
  int64_t dims[2] = {4, 6};
  const int64_t crd[4] = {5, 0, 2, 2};
  const int64_t v[4] = {10, 20, 30, 40};
  lvdef d[2] = {{&spc_level_dense, 0, 4, 0, 0, NULL, NULL},
                {&spc_level_singleton, 1, 6, 0, 4, NULL, crd}};
  return mk("test-ell", 2, dims, 2, d, SPC_IDX32, SPC_I64, v, 4);
}

/* A hypersparse wide matrix in a converted format whose direct plan marks
 * block columns (bcsr: 2^32 of them for one component, 32 GiB of marker):
 * written and read back (the read's check converts the components again),
 * through the sort path, which needs no marker. */
START_TEST(test_bsp_hypersparse_bcsr) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "w.bsp.h5");
  const int64_t r[2] = {0, 2}, c[2] = {6, ((int64_t)1 << 34) - 1};
  const double v[2] = {3.5, -1};
  spc_tensor *t = mk_coo2(3, (int64_t)1 << 34, 2, r, c, 0, SPC_IDX64, SPC_F64, v), *x = NULL,
             *b = NULL;
  spc_error e;
  const char *fmts[2] = {"bcsr", "ell"};
  for (int k = 0; k < 2; k++) {
    tu_assert_ok(spc_convert_to(t, fmts[k], NULL, &x, &e), &e);
    tu_assert_ok(spc_bsp_write(x, p, NULL, &e), &e);
    tu_assert_ok(spc_bsp_read(p, NULL, &b, &e), &e);
    assert_identical(x, b, fmts[k]);
    spc_tensor_free(&b);
    spc_tensor_free(&x);
  }
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_native) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "x.bsp.h5");
  spc_tensor *t = mk_native();
  spc_tensor *b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
  assert_identical(t, b, "native");
  ck_assert_ptr_eq(b->format, spc_tensor_format(b));
  char *desc = h5_attr(p, "binsparse"), *sp = h5_attr(p, "spconv"), *spec = h5_attr(p, "spconv_spec");
  ck_assert_ptr_null(desc);
  ck_assert_ptr_nonnull(strstr(sp, "\"format\": \"test-ell\""));
  ck_assert_ptr_nonnull(spec);
  ck_assert_str_eq(spec, "");
  ck_assert(h5_has(p, "level1_crd") && h5_has(p, "values"));
  /* an unknown level format */
  char *bad = malloc(strlen(sp) + 16), *at = strstr(sp, "\"singleton\"");
  ck_assert_ptr_nonnull(at);
  sprintf(bad, "%.*s\"squeezed\"%s", (int)(at - sp), sp, at + strlen("\"singleton\""));
  h5_set_attr(p, "spconv", bad);
  expect_fail(spc_bsp_read, p, SPC_ERR_UNSUPPORTED, "spconv", "'squeezed'");
  /* a dataset name that is a path */
  at = strstr(sp, "level1_crd");
  sprintf(bad, "%.*s../x%s", (int)(at - sp), sp, at + strlen("level1_crd"));
  h5_set_attr(p, "spconv", bad);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "spconv", "no valid dataset");
  free(bad);
  free(sp);
  free(spec);
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_symmetry) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "s.bsp.h5");
  spc_error e;
  const int64_t r[4] = {0, 2, 3, 3}, c[4] = {0, 0, 1, 3};
  const double v[4] = {1, 2, 3, 4};
  spc_tensor *t = mk_coo2(4, 4, 4, r, c, 0, SPC_IDX32, SPC_F64, v), *x = NULL, *b;
  spc_write_opts wo;
  spc_read_opts ro;
  spc_write_opts_init(&wo);
  spc_read_opts_init(&ro);
  wo.keep_symmetry = 1;
  t->sym = SPC_SYMMETRIC;
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, &wo, NULL);
  assert_identical(t, b, "symmetric kept");
  char *desc = h5_attr(p, "binsparse");
  ck_assert_ptr_nonnull(strstr(desc, "\"structure\": \"symmetric_lower\""));
  free(desc);
  spc_tensor_free(&b);
  ro.expand = 1; /* read expanded */
  tu_assert_ok(spc_bsp_read(p, &ro, &b, &e), &e);
  tu_assert_ok(spc_tensor_expand(t, &x, &e), &e);
  ck_assert_int_eq(b->sym, SPC_GENERAL);
  tu_assert_same_tensor(x, b, 0, "expanded on read");
  spc_tensor_free(&b);
  /* not kept: written expanded */
  wo.keep_symmetry = 0;
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, &wo, NULL);
  ck_assert_int_eq(b->sym, SPC_GENERAL);
  tu_assert_same_tensor(x, b, 0, "expanded on write");
  spc_tensor_free(&b);
  /* both triangles: kept storage cannot be described, written expanded */
  spc_tensor_free(&t);
  const int64_t r2[2] = {0, 1}, c2[2] = {1, 2};
  t = mk_coo2(4, 4, 2, r2, c2, 0, SPC_IDX32, SPC_F64, v);
  t->sym = SPC_SKEW;
  ((int32_t *)t->lv[0].arr[1].data)[1] = 2, ((int32_t *)t->lv[1].arr[0].data)[1] = 1;
  wo.keep_symmetry = 1;
  b = round_trip(t, p, spc_bsp_write, spc_bsp_read, &wo, NULL);
  ck_assert_int_eq(b->sym, SPC_GENERAL);
  ck_assert_int_eq(spc_tensor_nstored(b), 4);
  spc_tensor_free(&b);
  /* a structure key whose entries lie in the other triangle */
  spc_tensor_free(&x);
  x = mk_coo2(4, 4, 2, r2, c2, 0, SPC_IDX32, SPC_F64, v);
  x->sym = SPC_SYMMETRIC; /* upper triangle */
  tu_assert_ok(spc_bsp_write(x, p, &wo, &e), &e);
  desc = h5_attr(p, "binsparse");
  ck_assert_ptr_nonnull(strstr(desc, "symmetric_upper"));
  char *q = strstr(desc, "upper");
  memcpy(q, "lower", 5);
  h5_set_attr(p, "binsparse", desc);
  free(desc);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "triangle");
  spc_tensor_free(&x);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* A binsparse CSR with structure symmetric_lower (what another writer
 * produces): its first level is dense, yet it is no dense layout, so the
 * mirror entries are made on expansion, on writing .npz and on
 * conversion (they were silently dropped). */
START_TEST(test_bsp_symmetric_csr) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "s.bsp.h5"), *z = tu_path(dir, "s.npz");
  spc_error e;
  const int64_t ptr[4] = {0, 1, 2, 4}, idx[4] = {0, 0, 1, 2};
  const double v[4] = {1, 2, 3, 4};
  spc_tensor *t = mk_csx(3, 3, 0, ptr, idx, SPC_IDX64, SPC_F64, v), *x = NULL, *b = NULL;
  t->sym = SPC_SYMMETRIC;
  const int64_t r6[6] = {0, 1, 0, 2, 1, 2}, c6[6] = {0, 0, 1, 1, 2, 2};
  const double v6[6] = {1, 2, 2, 3, 3, 4};
  spc_tensor *want = mk_coo2(3, 3, 6, r6, c6, 0, SPC_IDX64, SPC_F64, v6);
  tu_assert_ok(spc_tensor_expand(t, &x, &e), &e);
  ck_assert_int_eq(spc_tensor_symmetry(x), SPC_GENERAL);
  tu_assert_same_tensor(want, x, 0, "csr expanded");
  spc_tensor_free(&x);
  spc_write_opts wo;
  spc_write_opts_init(&wo);
  wo.keep_symmetry = 1;
  tu_assert_ok(spc_write(t, p, &wo, &e), &e);
  char *desc = h5_attr(p, "binsparse");
  ck_assert_ptr_nonnull(strstr(desc, "\"structure\": \"symmetric_lower\""));
  free(desc);
  tu_assert_ok(spc_read(p, NULL, &b, &e), &e);
  ck_assert_str_eq(spc_tensor_format(b), "csr");
  ck_assert_int_eq(spc_tensor_symmetry(b), SPC_SYMMETRIC);
  tu_assert_ok(spc_write(b, z, NULL, &e), &e); /* scipy has no symmetric storage */
  spc_tensor_free(&x);
  tu_assert_ok(spc_read(z, NULL, &x, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(x), 6);
  tu_assert_same_tensor(want, x, 0, "csr written to npz");
  spc_tensor_free(&x);
  spc_convert_opts co;
  spc_convert_opts_init(&co);
  tu_assert_ok(spc_convert_to(b, "csc", &co, &x, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(x), 6);
  tu_assert_same_tensor(want, x, 0, "csr converted to csc");
  spc_tensor_free(&x);
  spc_tensor_free(&b);
  spc_tensor_free(&want);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(z);
  free(dir);
}
END_TEST

START_TEST(test_bsp_read_vtype) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "v.bsp.h5");
  spc_error e;
  spc_read_opts ro;
  spc_tensor *t = mk_example(SPC_F64, SPC_IDX32, 0), *b = NULL;
  spc_read_opts_init(&ro);
  tu_assert_ok(spc_bsp_write(t, p, NULL, &e), &e);
  ro.vtype = SPC_F32;
  tu_assert_ok(spc_bsp_read(p, &ro, &b, &e), &e);
  ck_assert_int_eq(b->vt, SPC_F32);
  ck_assert(((float *)b->val)[2] == 3.25f);
  spc_tensor_free(&b);
  ro.vtype = SPC_PATTERN;
  tu_assert_ok(spc_bsp_read(p, &ro, &b, &e), &e);
  ck_assert_int_eq(b->vt, SPC_PATTERN);
  ck_assert_ptr_null(b->val);
  spc_tensor_free(&b);
  ro.vtype = SPC_C128;
  tu_assert_ok(spc_bsp_read(p, &ro, &b, &e), &e);
  ck_assert(((double *)b->val)[0] == 1.5 && ((double *)b->val)[1] == 0);
  spc_tensor_free(&b);
  ro.vtype = SPC_I64; /* 1.5 is not an integer */
  ck_assert_int_eq(spc_bsp_read(p, &ro, &b, &e), SPC_ERR_INPUT);
  ck_assert_ptr_null(b);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* ---- binsparse: files from other tools ---------------------------------- */

START_TEST(test_bsp_foreign) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "f.h5");
  spc_error e;
  spc_tensor *t = NULL;
  /* CSC with uint64 pointers and uint8 indices, int16 values, vlen attribute */
  h5_new(p, "{\"binsparse\": {\"version\": \"0.1\", \"format\": \"CSC\", \"shape\": [3, 2], "
            "\"number_of_stored_values\": 3, \"data_types\": {\"pointers_to_1\": \"uint64\", "
            "\"indices_1\": \"uint8\", \"values\": \"int16\"}}, \"author\": \"\\u00e9\"}");
  const uint64_t ptr[3] = {0, 2, 3};
  const uint8_t idx[3] = {0, 2, 1};
  const int16_t v16[3] = {-1, 2, 300};
  h5_set_dset(p, "pointers_to_1", H5T_STD_U64LE, H5T_NATIVE_UINT64, 3, ptr);
  h5_set_dset(p, "indices_1", H5T_STD_U8LE, H5T_NATIVE_UINT8, 3, idx);
  h5_set_dset(p, "values", H5T_STD_I16BE, H5T_NATIVE_INT16, 3, v16);
  tu_assert_ok(spc_bsp_read(p, NULL, &t, &e), &e);
  ck_assert_str_eq(t->format, "csc");
  ck_assert_int_eq(t->vt, SPC_I64);
  ck_assert_int_eq(t->lv[0].dim, 1);
  ck_assert_int_eq(t->lv[1].arr[0].type, SPC_IDX64);
  ck_assert_int_eq(t->lv[1].arr[1].type, SPC_IDX32);
  ck_assert_int_eq(((int64_t *)t->val)[2], 300);
  ck_assert(t->lv[1].props & SPC_LP_ORDERED);
  spc_tensor_free(&t);
  /* a pointer past 2^63 */
  const uint64_t huge[3] = {0, 2, UINT64_MAX};
  h5_set_dset(p, "pointers_to_1", H5T_STD_U64LE, H5T_NATIVE_UINT64, 3, huge);
  expect_fail(spc_bsp_read, p, SPC_ERR_OVERFLOW, "pointers_to_1", NULL);
  /* iso values, complex pairs; any attribute name holding the descriptor */
  h5_new(p, NULL);
  h5_set_attr(p, "meta", "{\"binsparse\": {\"format\": \"COOR\", \"shape\": [2, 2], "
                         "\"data_types\": {\"values\": \"iso[complex[float64]]\"}}}");
  const int32_t r[2] = {0, 1}, c[2] = {1, 0};
  const double z[2] = {0.5, -2};
  h5_set_dset(p, "indices_0", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, r);
  h5_set_dset(p, "indices_1", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, c);
  h5_set_dset(p, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, z);
  tu_assert_ok(spc_bsp_read(p, NULL, &t, &e), &e);
  ck_assert_int_eq(t->vt, SPC_C128);
  ck_assert_int_eq(t->nval, 2);
  ck_assert(((double *)t->val)[2] == 0.5 && ((double *)t->val)[3] == -2);
  spc_tensor_free(&t);
  /* dense column-major matrix; a custom format with the swizzle outside */
  h5_new(p, "{\"binsparse\": {\"format\": \"DMATC\", \"shape\": [2, 3], "
            "\"data_types\": {\"values\": \"float32\"}}}");
  const float f6[6] = {1, 2, 3, 4, 5, 6};
  h5_set_dset(p, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 6, f6);
  tu_assert_ok(spc_bsp_read(p, NULL, &t, &e), &e);
  ck_assert_str_eq(t->format, "dense");
  ck_assert_int_eq(t->lv[0].dim, 1);
  ck_assert_int_eq(t->vt, SPC_F32);
  spc_tensor_free(&t);
  h5_new(p, "{\"binsparse\": {\"swizzle\": [1, 0], \"format\": {\"level\": \"dense\", "
            "\"rank\": 1, \"subformat\": {\"level\": \"sparse\", \"rank\": 1, "
            "\"subformat\": {\"level\": \"element\"}}}, \"shape\": [3, 2], "
            "\"data_types\": {\"values\": \"float32\"}}}");
  h5_set_dset(p, "pointers_to_1", H5T_STD_U64LE, H5T_NATIVE_UINT64, 3, ptr);
  h5_set_dset(p, "indices_1", H5T_STD_U8LE, H5T_NATIVE_UINT8, 3, idx);
  h5_set_dset(p, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 3, f6);
  tu_assert_ok(spc_bsp_read(p, NULL, &t, &e), &e);
  ck_assert_str_eq(t->format, "csc");
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* ---- binsparse: bad files ----------------------------------------------- */

START_TEST(test_bsp_bad_files) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "b.bsp.h5"), *txt = tu_file(dir, "t.h5", "hello\n");
  char *none = tu_path(dir, "none.bsp.h5");
  spc_error e;
  expect_fail(spc_bsp_read, none, SPC_ERR_IO, NULL, NULL);
  expect_fail(spc_bsp_read, txt, SPC_ERR_INPUT, NULL, "not an HDF5 file");
  h5_new(p, NULL);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "no binsparse descriptor");
  h5_new(p, "{\"binsparse\": {\"format\": \"COO\", \"shape\": [2, 2]");
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "not JSON");
  h5_new(p, "{\"binsparse\": {\"format\": \"BSR\", \"shape\": [2, 2]}}");
  expect_fail(spc_bsp_read, p, SPC_ERR_UNSUPPORTED, "binsparse", "'BSR'");
  h5_new(p, "{\"binsparse\": {\"format\": \"CSR\", \"shape\": [2, -2]}}");
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "shape");
  h5_new(p, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", NULL);
  /* lies about a good file */
  const int64_t ptr[6] = {0, 2, 2, 2, 5, 5}, idx[5] = {0, 3, 2, 1, 3};
  const double v[5] = {1, 2, 3, 4, 5};
  spc_tensor *t = mk_csx(5, 4, 0, ptr, idx, SPC_IDX32, SPC_F64, v);
  tu_assert_ok(spc_bsp_write(t, p, NULL, &e), &e);
  char *desc = h5_attr(p, "binsparse"), *alt = malloc(strlen(desc) + 8);
  char *at = strstr(desc, "\"number_of_stored_values\": 5");
  sprintf(alt, "%.*s\"number_of_stored_values\": 6%s", (int)(at - desc), desc, at + 28);
  h5_set_attr(p, "binsparse", alt);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "number_of_stored_values");
  at = strstr(desc, "[5, 4]");
  sprintf(alt, "%.*s[5, 3]%s", (int)(at - desc), desc, at + 6);
  h5_set_attr(p, "binsparse", alt);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, NULL, "out of range");
  /* the version: a later major one refused, a malformed one named */
  at = strstr(desc, "\"0.1\"");
  ck_assert_ptr_nonnull(at);
  sprintf(alt, "%.*s\"1.0\"%s", (int)(at - desc), desc, at + 5);
  h5_set_attr(p, "binsparse", alt);
  expect_fail(spc_bsp_read, p, SPC_ERR_UNSUPPORTED, "binsparse", "version 1.0");
  sprintf(alt, "%.*s0.1%s", (int)(at - desc), desc, at + 5);
  h5_set_attr(p, "binsparse", alt);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "version: expected");
  sprintf(alt, "%.*s\"0.1x\"%s", (int)(at - desc), desc, at + 5);
  h5_set_attr(p, "binsparse", alt);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "binsparse", "version: expected");
  h5_set_attr(p, "binsparse", desc);
  /* cut short: the file's contents (input), not an i/o error */
  {
    size_t n;
    char *whole = tu_read_file(p, &n), *cut = tu_path(dir, "cut.bsp.h5");
    tu_write_file(cut, whole, n / 2);
    expect_fail(spc_bsp_read, cut, SPC_ERR_INPUT, NULL, "truncated");
    free(whole);
    free(cut);
  }
  const int32_t bad_ptr[6] = {0, 2, 1, 2, 5, 5};
  h5_set_dset(p, "pointers_to_1", H5T_STD_I32LE, H5T_NATIVE_INT32, 6, bad_ptr);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, NULL, "pos decreases");
  const int32_t end_ptr[6] = {0, 2, 2, 2, 5, 9};
  h5_set_dset(p, "pointers_to_1", H5T_STD_I32LE, H5T_NATIVE_INT32, 6, end_ptr);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, NULL, "crd has 5");
  h5_set_dset(p, "pointers_to_1", H5T_STD_I32LE, H5T_NATIVE_INT32, 5, end_ptr);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, NULL, "expected 6");
  h5_set_dset(p, "pointers_to_1", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 5, v);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "pointers_to_1", "not integer");
  h5_set_dset(p, "pointers_to_1", 0, 0, -1, NULL);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "pointers_to_1", "missing");
  tu_assert_ok(spc_bsp_write(t, p, NULL, &e), &e);
  h5_set_dset(p, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 4, v);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "values", "4 values for 5");
  free(desc);
  free(alt);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(txt);
  free(none);
  free(dir);
}
END_TEST

/* A spconv-format container whose arrays are in bounds but not what its
 * components give: refused (the components rebuilt, handed over to the
 * check, and compared array by array) */
START_TEST(test_bsp_inconsistent) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "d.bsp.h5");
  const int64_t ptr[6] = {0, 2, 3, 5, 6, 8}, idx[8] = {0, 1, 1, 1, 2, 3, 2, 4};
  const double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  spc_tensor *t = mk_csx(5, 5, 0, ptr, idx, SPC_IDX32, SPC_F64, v), *d = NULL, *b = NULL;
  spc_error e;
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  tu_assert_ok(spc_convert_to(t, "dia", &o, &d, &e), &e);
  tu_assert_ok(spc_bsp_write(d, p, NULL, &e), &e);
  tu_assert_ok(spc_bsp_read(p, NULL, &b, &e), &e); /* as written: read back */
  spc_tensor_free(&b);
  const spc_array *perm = spc_level_array_c(&d->lv[0], "perm");
  ck_assert_ptr_nonnull(perm);
  ck_assert_int_ge(perm->len, 2);
  /* the diagonals' offsets swapped: in bounds, out of order */
  int32_t off[16];
  for (int64_t k = 0; k < perm->len && k < 16; k++) off[k] = (int32_t)spc_arr_get(perm, k);
  int32_t x = off[0];
  off[0] = off[1], off[1] = x;
  h5_set_dset(p, "level0_perm", H5T_STD_I32LE, H5T_NATIVE_INT32, perm->len, off);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "spconv_format", "perm differs");
  /* every position (padding too) holding 7: the padding is not zero */
  tu_assert_ok(spc_bsp_write(d, p, NULL, &e), &e);
  double *w = malloc((size_t)d->nval * sizeof *w);
  for (int64_t k = 0; k < d->nval; k++) w[k] = 7;
  h5_set_dset(p, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d->nval, w);
  expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, "spconv_format", "padding");
  free(w);
  spc_tensor_free(&t);
  spc_tensor_free(&d);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_bsp_checksum) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "k.bsp.h5");
  spc_error e;
  const char *dsets[3] = {"indices_0", "indices_1", "values"};
  for (int k = 0; k < 3; k++) {
    spc_tensor *t = mk_example(SPC_C128, SPC_IDX64, 0);
    tu_assert_ok(spc_bsp_write(t, p, NULL, &e), &e);
    h5_corrupt(p, dsets[k]);
    expect_fail(spc_bsp_read, p, SPC_ERR_INPUT, dsets[k], "corrupt");
    spc_tensor_free(&t);
  }
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

/* ---- npz ---------------------------------------------------------------- */

START_TEST(test_npz_round_trips) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "a.npz");
  const int64_t ptr[6] = {0, 2, 2, 2, 5, 6}, idx[6] = {0, 3, 2, 1, 3, 0};
  spc_write_opts wo;
  spc_write_opts_init(&wo);
  for (int mode = 0; mode < 3; mode++) {
    wo.gzip = mode == 1;
    spc_npz_force_zip64 = mode == 2;
    for (size_t i = 0; i < sizeof all_vt / sizeof *all_vt; i++)
      for (int w = 0; w < 2; w++) {
        spc_itype it = w ? SPC_IDX64 : SPC_IDX32;
        double v[12];
        ex_values(all_vt[i], v);
        spc_tensor *t[3] = {mk_example(all_vt[i], it, 0),
                            mk_csx(5, 4, 0, ptr, idx, it, all_vt[i], v),
                            mk_csx(4, 5, 1, ptr, idx, it, all_vt[i], v)};
        for (int k = 0; k < 3; k++) {
          spc_tensor *b = round_trip(t[k], p, spc_npz_write, spc_npz_read, &wo, NULL);
          if (all_vt[i] == SPC_PATTERN) { /* read back as 1.0s */
            ck_assert_int_eq(b->vt, SPC_F64);
            for (int64_t j = 0; j < b->nval; j++) ck_assert(((double *)b->val)[j] == 1.0);
            spc_tensor shallow = *b;
            shallow.vt = SPC_PATTERN;
            assert_identical(t[k], &shallow, "npz pattern");
          } else {
            assert_identical(t[k], b, "npz");
          }
          spc_tensor_free(&b);
          spc_tensor_free(&t[k]);
        }
      }
  }
  spc_npz_force_zip64 = 0;
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

START_TEST(test_npz_converted) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "c.npz");
  spc_error e;
  spc_tensor *t = NULL, *b = NULL, *ref = NULL;
  /* order 3 */
  int64_t dims3[3] = {2, 2, 2};
  tu_assert_ok(spc_tensor_create_coo(3, dims3, 0, SPC_F64, &t, &e), &e);
  ck_assert_int_eq(spc_npz_write(t, p, NULL, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_str_eq(e.msg, "npz holds matrices (order 2); this tensor has order 3");
  spc_tensor_free(&t);
  /* dense: coo without zeros */
  int64_t dims[2] = {2, 3};
  tu_assert_ok(spc_dense_alloc(2, dims, NULL, SPC_I64, &t, &e), &e);
  const int64_t v[6] = {0, 5, 0, 0, 0, -7};
  memcpy(t->val, v, sizeof v);
  b = round_trip(t, p, spc_npz_write, spc_npz_read, NULL, NULL);
  ck_assert_str_eq(b->format, "coo");
  tu_assert_ok(spc_tensor_to_coo(t, 1, &ref, &e), &e);
  tu_assert_same_tensor(ref, b, 0, "dense");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  spc_tensor_free(&ref);
  /* symmetric: expanded; COO stored column-first: row/col swapped back */
  const int64_t r[3] = {0, 1, 2}, c[3] = {0, 0, 1};
  const double d[3] = {1, 2, 3};
  t = mk_coo2(3, 3, 3, r, c, 1, SPC_IDX32, SPC_F64, d);
  t->sym = SPC_HERMITIAN;
  b = round_trip(t, p, spc_npz_write, spc_npz_read, NULL, NULL);
  tu_assert_ok(spc_tensor_expand(t, &ref, &e), &e);
  tu_assert_same_tensor(ref, b, 0, "symmetric");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  spc_tensor_free(&ref);
  /* dcsr: written as coo */
  const int64_t dpos[2] = {0, 1}, drow[1] = {1}, dptr[2] = {0, 2}, dcol[2] = {0, 2};
  lvdef dc[2] = {{&spc_level_compressed, 0, 2, 2, 1, dpos, drow},
                 {&spc_level_compressed, 1, 3, 2, 2, dptr, dcol}};
  t = mk("dcsr", 2, dims, 2, dc, SPC_IDX32, SPC_F64, d, 2);
  b = round_trip(t, p, spc_npz_write, spc_npz_read, NULL, NULL);
  tu_assert_same_tensor(t, b, 0, "dcsr");
  spc_tensor_free(&t);
  spc_tensor_free(&b);
  tu_rmtree(dir);
  free(p);
  free(dir);
}
END_TEST

static char *find(unsigned char *z, size_t n, long at, const char *s) {
  return memmem(z + at, n - (size_t)at, s, strlen(s));
}

/* Offset of entry name's data in a stored zip (no ZIP64), and its size. */
static long zip_find(const unsigned char *z, size_t n, const char *name, size_t *len) {
  for (size_t i = 0; i + 30 < n; i++) {
    size_t nl = z[i + 26] | (size_t)z[i + 27] << 8, xl = z[i + 28] | (size_t)z[i + 29] << 8;
    if (memcmp(z + i, "PK\003\004", 4) || i + 30 + nl > n || nl != strlen(name) ||
        memcmp(z + i + 30, name, nl))
      continue;
    *len = z[i + 22] | (size_t)z[i + 23] << 8 | (size_t)z[i + 24] << 16 | (size_t)z[i + 25] << 24;
    return (long)(i + 30 + nl + xl);
  }
  return -1;
}

/* Recompute the crc32 of entry name in both of its headers. */
static void zip_fix_crc(unsigned char *z, size_t n, const char *name) {
  size_t len;
  long at = zip_find(z, n, name, &len);
  ck_assert_int_ge(at, 0);
  uint32_t crc = (uint32_t)crc32(0, z + at, (uInt)len);
  size_t nl = strlen(name);
  for (size_t i = 0; i + 46 < n; i++) {
    bool loc = !memcmp(z + i, "PK\003\004", 4) && !memcmp(z + i + 30, name, nl);
    bool cen = !memcmp(z + i, "PK\001\002", 4) && !memcmp(z + i + 46, name, nl);
    if (!loc && !cen) continue;
    unsigned char *c = z + i + (loc ? 14 : 16);
    for (int k = 0; k < 4; k++) c[k] = (unsigned char)(crc >> (8 * k));
  }
}

START_TEST(test_npz_bad_files) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "b.npz"), *q = tu_path(dir, "q.npz");
  spc_error e;
  spc_tensor *t = mk_example(SPC_F64, SPC_IDX32, 0);
  size_t n, len;
  tu_assert_ok(spc_npz_write(t, p, NULL, &e), &e);
  unsigned char *z = (unsigned char *)tu_read_file(p, &n), *w = malloc(n);
  /* a header lying about the length (crc fixed, so only the size tells) */
  memcpy(w, z, n);
  long at = zip_find(w, n, "data.npy", &len);
  char *shape = find(w, n, at, "(6,)");
  ck_assert_ptr_nonnull(shape);
  shape[1] = '7';
  zip_fix_crc(w, n, "data.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, "data.npy", "header describes 7 elements");
  shape[1] = '5';
  zip_fix_crc(w, n, "data.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, "data.npy", "header describes 5 elements");
  /* a flipped data byte: crc32 */
  memcpy(w, z, n);
  at = zip_find(w, n, "col.npy", &len);
  w[at + (long)len - 3] ^= 1;
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, "col.npy", "crc32");
  /* truncated */
  tu_write_file(q, z, n / 2);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, NULL, "zip");
  tu_write_file(q, z, 10);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, NULL, "zip");
  /* format lil; bsr, whose data has three dimensions */
  memcpy(w, z, n);
  at = zip_find(w, n, "format.npy", &len);
  memcpy(w + at + (long)len - 12, "l\0\0\0i\0\0\0l\0\0\0", 12);
  zip_fix_crc(w, n, "format.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_UNSUPPORTED, "format.npy", "'lil'");
  memcpy(w + at + (long)len - 12, "b\0\0\0s\0\0\0r\0\0\0", 12);
  zip_fix_crc(w, n, "format.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, "data.npy", "a 1-dimensional array; format bsr stores 3");
  /* big-endian data */
  memcpy(w, z, n);
  at = zip_find(w, n, "data.npy", &len);
  char *descr = find(w, n, at, "'<f8'");
  descr[1] = '>';
  zip_fix_crc(w, n, "data.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_UNSUPPORTED, "data.npy", "big-endian");
  /* row index out of range */
  memcpy(w, z, n);
  at = zip_find(w, n, "row.npy", &len);
  w[at + (long)len - 4] = 9;
  zip_fix_crc(w, n, "row.npy");
  tu_write_file(q, w, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, NULL, "out of range");
  /* a dia whose offsets repeat one (SciPy: "offset array contains
   * duplicate values"): refused, not the two diagonals summed */
  {
    const int64_t dr[3] = {0, 1, 0}, dcl[3] = {0, 1, 1};
    const double dv[3] = {1, 2, 3};
    spc_tensor *d2 = mk_coo2(2, 2, 3, dr, dcl, 0, SPC_IDX32, SPC_F64, dv), *dia = NULL;
    tu_assert_ok(spc_convert_to(d2, "dia", NULL, &dia, &e), &e);
    tu_assert_ok(spc_npz_write(dia, q, NULL, &e), &e);
    size_t m, ol;
    unsigned char *y = (unsigned char *)tu_read_file(q, &m);
    long oa = zip_find(y, m, "offsets.npy", &ol);
    ck_assert_int_ge(oa, 0);
    char *d4 = find(y, m, oa, "'<i4'"); /* the offsets' width (in their own header) */
    size_t wd = d4 && d4 < (char *)y + oa + 128 ? 4 : 8;
    memcpy(y + oa + (long)ol - (long)wd, y + oa + (long)ol - 2 * (long)wd, wd);
    zip_fix_crc(y, m, "offsets.npy");
    tu_write_file(q, y, m);
    expect_fail(spc_npz_read, q, SPC_ERR_INPUT, "offsets.npy", "appears more than once");
    free(y);
    spc_tensor_free(&d2);
    spc_tensor_free(&dia);
  }
  /* deflated and corrupt */
  spc_write_opts wo;
  spc_write_opts_init(&wo);
  wo.gzip = 1;
  tu_assert_ok(spc_npz_write(t, q, &wo, &e), &e);
  free(z);
  z = (unsigned char *)tu_read_file(q, &n);
  z[40] ^= 0xff;
  tu_write_file(q, z, n);
  expect_fail(spc_npz_read, q, SPC_ERR_INPUT, NULL, NULL);
  free(z);
  free(w);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(q);
  free(dir);
}
END_TEST

/* ---- SciPy and h5py read what we write, we read what SciPy writes ------- */

/* "rows cols nnz sum_re sum_im" from tests/py/check_npz.py, or NULL. */
static char *py_check(const char *py, const char *path) {
  char cmd[2048], *out = calloc(1, 256);
  snprintf(cmd, sizeof cmd, "%s tests/py/check_npz.py '%s' 2>&1", py, path);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  if (!fgets(out, 256, f)) out[0] = 0;
  pclose(f);
  return out;
}

/* Booleans (a bool .npz, binsparse's bint8): int64 0 / 1 flagged; summed
 * duplicates combine by OR (SciPy's tocsr of a bool COO); written back as
 * '|b1' / bint8, read back flagged, through a conversion and a converted
 * format's container too. */
START_TEST(test_bool_values) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "b.npz"), *h = tu_path(dir, "b.bsp.h5");
  spc_error e;
  /* (0, 1) twice: true and false; (2, 3) false */
  const int64_t v[6] = {1, 1, 1, 0, 0, 0};
  spc_tensor *t = mk_coo2(5, 4, 6, ex_r, ex_c, 0, SPC_IDX32, SPC_I64, v), *b = NULL, *c = NULL;
  t->boolean = true;
  ck_assert(spc_tensor_boolean(t));
  tu_assert_ok(spc_npz_write(t, p, NULL, &e), &e);
  size_t n, len;
  unsigned char *z = (unsigned char *)tu_read_file(p, &n);
  long at = zip_find(z, n, "data.npy", &len);
  ck_assert_ptr_nonnull(find(z, n, at, "'|b1'"));
  free(z);
  tu_assert_ok(spc_npz_read(p, NULL, &b, &e), &e);
  ck_assert(spc_tensor_boolean(b));
  tu_assert_same_tensor(t, b, 0, "bool npz");
  spc_tensor_free(&b);
  /* summed: OR, not the count 2 (the same through combine) */
  tu_assert_ok(spc_convert_to(t, "csr", NULL, &c, &e), &e);
  ck_assert(spc_tensor_boolean(c));
  spc_iter *it = NULL;
  int64_t x[2], seen = 0;
  const void *pv;
  tu_assert_ok(spc_iter_create(c, &it, &e), &e);
  while (spc_iter_next(it, x, &pv)) {
    int64_t want = (x[0] == 0 && x[1] == 1) || (x[0] == 4 && x[1] == 3) || (x[0] == 2 && x[1] == 0);
    ck_assert_int_eq(*(const int64_t *)pv, want);
    seen++;
  }
  spc_iter_free(&it);
  ck_assert_int_eq(seen, 5);
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &b, &e), &e);
  ck_assert(spc_tensor_boolean(b));
  tu_assert_same_tensor(c, b, 0, "combine");
  spc_tensor_free(&b);
  /* binsparse: bint8 values, flagged again; a converted format (csf) too */
  const char *fmts[3] = {"csr", "dcsc", "csf"};
  for (int k = 0; k < 3; k++) {
    spc_tensor *f = NULL;
    tu_assert_ok(spc_convert_to(c, fmts[k], NULL, &f, &e), &e);
    ck_assert(spc_tensor_boolean(f));
    tu_assert_ok(spc_bsp_write(f, h, NULL, &e), &e);
    hid_t fid = H5Fopen(h, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(fid, "values", H5P_DEFAULT);
    hid_t ty = H5Dget_type(d);
    ck_assert_int_eq(H5Tget_size(ty), 1);
    H5Tclose(ty);
    H5Dclose(d);
    H5Fclose(fid);
    tu_assert_ok(spc_bsp_read(h, NULL, &b, &e), &e);
    ck_assert_msg(spc_tensor_boolean(b), "%s read back without its booleans", fmts[k]);
    tu_assert_same_tensor(f, b, 0, fmts[k]);
    spc_tensor_free(&b);
    spc_tensor_free(&f);
  }
  /* a format binsparse cannot describe (ell: our descriptor), no zeros */
  {
    const int64_t ones[6] = {1, 1, 1, 1, 1, 1};
    spc_tensor *o = mk_coo2(5, 4, 6, ex_r, ex_c, 0, SPC_IDX32, SPC_I64, ones), *f = NULL;
    o->boolean = true;
    tu_assert_ok(spc_convert_to(o, "ell", NULL, &f, &e), &e);
    tu_assert_ok(spc_bsp_write(f, h, NULL, &e), &e);
    tu_assert_ok(spc_bsp_read(h, NULL, &b, &e), &e);
    ck_assert(spc_tensor_boolean(b));
    tu_assert_same_tensor(f, b, 0, "ell");
    ck_assert_int_eq(spc_tensor_nstored(b), 5 * 2); /* rows padded to 2 */
    spc_tensor_free(&b);
    spc_tensor_free(&f);
    spc_tensor_free(&o);
  }
  tu_assert_ok(spc_bsp_write(c, h, NULL, &e), &e);
  char *desc = h5_attr(h, "binsparse");
  ck_assert_msg(strstr(desc, "\"values\": \"bint8\""), "%s", desc);
  free(desc);
  /* --type=float64 (a cast) leaves booleans behind */
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.vtype = SPC_F64;
  tu_assert_ok(spc_npz_read(p, &ro, &b, &e), &e);
  ck_assert(!spc_tensor_boolean(b));
  spc_tensor_free(&b);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(p);
  free(h);
  free(dir);
}
END_TEST

/* SciPy's bool matrices: read, converted, written, loaded by SciPy again
 * as bool with the duplicates OR-ed as its own tocsr does. */
static void py_run(const char *py, const char *dir, const char *code) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s -c \"import scipy.sparse as sp, numpy as np\n%s\"", dir,
           py, code);
  ck_assert_msg(system(cmd) == 0, "%s", code);
}

START_TEST(test_bool_scipy) {
  const char *py = tu_python_with("scipy");
  if (!py) return;
  char *dir = tu_mkdtemp();
  py_run(py, dir,
         "r = np.array([0, 0, 2, 1, 1, 2]); c = np.array([0, 0, 0, 2, 2, 2])\n"
         "d = np.array([True, True, True, True, False, False])\n"
         "sp.save_npz('coo.npz', sp.coo_matrix((d, (r, c)), shape=(3, 4)))");
  char *in = tu_path(dir, "coo.npz"), *out = tu_path(dir, "csr.npz");
  spc_error e;
  spc_tensor *t = NULL, *c = NULL;
  tu_assert_ok(spc_npz_read(in, NULL, &t, &e), &e);
  ck_assert(spc_tensor_boolean(t));
  tu_assert_ok(spc_convert_to(t, "csc", NULL, &c, &e), &e);
  tu_assert_ok(spc_npz_write(c, out, NULL, &e), &e);
  py_run(py, dir,
         "a = sp.load_npz('coo.npz').tocsr(); b = sp.load_npz('csr.npz')\n"
         "assert b.dtype == np.bool_, b.dtype\n"
         "assert (a != b).nnz == 0 and b.nnz == 4, (a.toarray(), b.toarray())");
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(in);
  free(out);
  free(dir);
}
END_TEST

START_TEST(test_python_reads) {
  const char *py = tu_python_with("scipy, h5py");
  if (!py) return;
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "p.npz"), *h = tu_path(dir, "p.bsp.h5");
  spc_error e;
  spc_write_opts wo;
  spc_write_opts_init(&wo);
  for (int k = 0; k < 4; k++) {
    spc_vtype vt = k == 0 ? SPC_C128 : k == 1 ? SPC_PATTERN : SPC_I64;
    double v[12];
    for (int i = 0; i < 6; i++) {
      if (vt == SPC_I64) ((int64_t *)v)[i] = -3 * i;
      else v[2 * i] = i + 0.5, v[2 * i + 1] = -i;
    }
    spc_tensor *t = mk_coo2(5, 4, 6, ex_r, ex_c, k == 2, k == 3 ? SPC_IDX64 : SPC_IDX32, vt, v);
    wo.gzip = k == 3;
    spc_npz_force_zip64 = k == 2;
    tu_assert_ok(spc_npz_write(t, p, &wo, &e), &e);
    tu_assert_ok(spc_bsp_write(t, h, &wo, &e), &e);
    /* 6 entries, (0, 1) twice: 5 after summing */
    const char *want[3] = {"5 4 5 18 -15", "5 4 5 6 0", "5 4 5 -45 0"};
    char *a = py_check(py, p), *b = py_check(py, h);
    ck_assert_msg(!strncmp(a, want[k < 3 ? k : 2], strlen(want[k < 3 ? k : 2])), "npz %d: %s", k, a);
    ck_assert_msg(!strncmp(b, want[k < 3 ? k : 2], strlen(want[k < 3 ? k : 2])), "bsp %d: %s", k, b);
    free(a);
    free(b);
    spc_tensor_free(&t);
  }
  spc_npz_force_zip64 = 0;
  /* files SciPy writes: coo / csr / csc / bsr, compressed or not */
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s -c \"import scipy.sparse as sp, numpy as np\n"
           "m = sp.random(30, 20, density=0.2, format='csr', random_state=1, dtype=np.float32)\n"
           "sp.save_npz('csr.npz', m); sp.save_npz('csc.npz', m.tocsc(), compressed=False)\n"
           "c = m.tocoo(); c.row = c.row.astype(np.int64)\n"
           "sp.save_npz('coo.npz', c); b = m.tobsr((2, 2)); sp.save_npz('bsr.npz', b)\n"
           "sp.save_npz('bsr_coo.npz', b.tocoo())\n"
           "d = sp.dia_matrix((np.arange(1.0, 1 + 4 * 9).reshape(4, 9) %% 5, [-3, 0, 2, 7]), shape=(8, 7))\n"
           "sp.save_npz('dia.npz', d); sp.save_npz('dia_coo.npz', d.tocoo())\"",
           dir, py);
  ck_assert_int_eq(system(cmd), 0);
  spc_tensor *ref = NULL;
  const char *names[3] = {"csr.npz", "csc.npz", "coo.npz"};
  for (int k = 0; k < 3; k++) {
    char *f = tu_path(dir, names[k]);
    spc_tensor *t = NULL;
    tu_assert_ok(spc_npz_read(f, NULL, &t, &e), &e);
    ck_assert_int_eq(t->vt, SPC_F32);
    ck_assert_int_eq(spc_tensor_nstored(t), 120);
    if (!ref) ref = t;
    else {
      tu_assert_same_tensor(ref, t, 0, names[k]);
      spc_tensor_free(&t);
    }
    free(f);
  }
  spc_tensor_free(&ref);
  /* SciPy's bsr (a block's zeros are stored entries) and dia (data wider
   * than the matrix, rows out of range, zeros: none stored), read as the
   * COO SciPy's tocoo makes of them */
  const char *pairs[2][2] = {{"bsr.npz", "bsr_coo.npz"}, {"dia.npz", "dia_coo.npz"}};
  for (int k = 0; k < 2; k++) {
    char *f = tu_path(dir, pairs[k][0]), *g = tu_path(dir, pairs[k][1]);
    spc_tensor *a = NULL, *b = NULL;
    tu_assert_ok(spc_npz_read(f, NULL, &a, &e), &e);
    tu_assert_ok(spc_npz_read(g, NULL, &b, &e), &e);
    ck_assert_int_gt(spc_tensor_nstored(b), k ? 10 : 120);
    tu_assert_same_tensor(b, a, 0, pairs[k][0]);
    spc_tensor_free(&a);
    spc_tensor_free(&b);
    free(f);
    free(g);
  }
  /* spconv's dia written as SciPy's dia_matrix: offsets x columns, the
   * padding's zeros dropped by SciPy; read back the same */
  {
    const int64_t dr[7] = {0, 1, 2, 4, 0, 3, 4}, dcl[7] = {0, 1, 2, 4, 3, 0, 1};
    const double dv[7] = {1, 2, 3, 4, -5, 6.5, 7};
    spc_tensor *t = mk_coo2(5, 6, 7, dr, dcl, 0, SPC_IDX32, SPC_F64, dv), *dia = NULL, *back = NULL;
    tu_assert_ok(spc_convert_to(t, "dia", NULL, &dia, &e), &e);
    tu_assert_ok(spc_npz_write(dia, p, NULL, &e), &e);
    char *a = py_check(py, p);
    ck_assert_msg(!strncmp(a, "5 6 7 18.5 0 dia", 16), "dia npz: %s", a);
    free(a);
    tu_assert_ok(spc_npz_read(p, NULL, &back, &e), &e);
    tu_assert_same_tensor(t, back, 0, "dia npz read back");
    spc_tensor_free(&t);
    spc_tensor_free(&dia);
    spc_tensor_free(&back);
  }
  tu_rmtree(dir);
  free(p);
  free(h);
  free(dir);
}
END_TEST

/* ---- allocation failures ------------------------------------------------ */

/* Fail allocation 1, 2, ... of op in turn: a clean SPC_ERR_NOMEM each time,
 * until op runs through. */
static void walk(spc_status (*op)(const char *, spc_tensor **, spc_error *),
                 const char *path, const spc_tensor *ref, const char *what) {
  int64_t k;
  for (k = 1;; k++) {
    spc_error e;
    spc_tensor *out = NULL;
    spc_error_clear(&e);
    int64_t a0 = spc_alloc_count();
    spc_alloc_fail_at(k);
    spc_status s = op(path, &out, &e);
    int64_t used = spc_alloc_count() - a0;
    spc_alloc_fail_at(0);
    if (used < k) {
      tu_assert_ok(s, &e);
      if (ref && out) assert_identical(ref, out, what);
      spc_tensor_free(&out);
      break;
    }
    ck_assert_msg(s == SPC_ERR_NOMEM, "%s: allocation %lld failed, status %s (%s)", what,
                  (long long)k, spc_status_name(s), e.msg);
    ck_assert_int_eq(e.code, SPC_ERR_NOMEM);
    ck_assert_ptr_null(out);
  }
  ck_assert_int_gt(k, 1);
}

static const spc_tensor *walk_t;
static spc_status op_bsp_w(const char *p, spc_tensor **o, spc_error *e) {
  (void)o;
  return spc_bsp_write(walk_t, p, NULL, e);
}
static spc_status op_npz_w(const char *p, spc_tensor **o, spc_error *e) {
  (void)o;
  return spc_npz_write(walk_t, p, NULL, e);
}
static spc_status op_bsp_r(const char *p, spc_tensor **o, spc_error *e) {
  return spc_bsp_read(p, NULL, o, e);
}
static spc_status op_npz_r(const char *p, spc_tensor **o, spc_error *e) {
  return spc_npz_read(p, NULL, o, e);
}

START_TEST(test_alloc_walk) {
  char *dir = tu_mkdtemp(), *p = tu_path(dir, "w.bsp.h5"), *q = tu_path(dir, "w.npz");
  spc_tensor *t = mk_example(SPC_C128, SPC_IDX32, 0), *n = mk_native();
  spc_tensor *s = mk_example(SPC_F64, SPC_IDX32, 0);
  s->sym = SPC_SYMMETRIC; /* both writers expand it */
  walk_t = t;
  walk(op_bsp_w, p, NULL, "bsp write");
  walk(op_bsp_r, p, t, "bsp read");
  walk(op_npz_w, q, NULL, "npz write");
  walk(op_npz_r, q, t, "npz read");
  walk_t = n;
  walk(op_bsp_w, p, NULL, "bsp write native");
  walk(op_bsp_r, p, n, "bsp read native");
  walk_t = s;
  walk(op_bsp_w, p, NULL, "bsp write symmetric");
  walk(op_npz_w, q, NULL, "npz write symmetric");
  spc_tensor_free(&t);
  spc_tensor_free(&n);
  spc_tensor_free(&s);
  tu_rmtree(dir);
  free(p);
  free(q);
  free(dir);
}
END_TEST

/* ---- the shared matrices ------------------------------------------------ */

START_TEST(test_shared_matrices) {
  const char *data = tu_data_dir();
  if (!data) return;
  char *mdir = tu_path(data, "matrices"), *dir = tu_mkdtemp();
  char *p = tu_path(dir, "m.bsp.h5"), *q = tu_path(dir, "m.npz");
  int n = 0, done = 0;
  char **files = tu_list_files(mdir, ".mtx", &n);
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.expand = 1;
  for (int i = 0; files && files[i]; i++) {
    char *f = tu_path(mdir, files[i]);
    spc_error e;
    spc_tensor *t = NULL, *b = NULL;
    if (spc_read(f, &ro, &t, &e) == SPC_OK) { /* the io suite tests reading */
      b = round_trip(t, p, spc_bsp_write, spc_bsp_read, NULL, NULL);
      tu_assert_same_tensor(t, b, 0, files[i]);
      spc_tensor_free(&b);
      if (t->order == 2) {
        b = round_trip(t, q, spc_npz_write, spc_npz_read, NULL, NULL);
        tu_assert_same_tensor(t, b, TU_PATTERN_AS_ONE, files[i]);
        spc_tensor_free(&b);
      }
      done++;
    }
    spc_tensor_free(&t);
    free(f);
  }
  ck_assert_int_gt(done, n / 2);
  tu_free_list(files);
  tu_rmtree(dir);
  free(mdir);
  free(dir);
  free(p);
  free(q);
}
END_TEST

Suite *suite_containers(void) {
  Suite *s = suite_create("containers");
  TCase *tc = tcase_create("bsp");
  tcase_add_test(tc, test_bsp_coo_types);
  tcase_add_test(tc, test_bsp_compressed);
  tcase_add_test(tc, test_bsp_order_n);
  tcase_add_test(tc, test_bsp_dense_and_empty);
  tcase_add_test(tc, test_bsp_native);
  tcase_add_test(tc, test_bsp_hypersparse_bcsr);
  tcase_add_test(tc, test_bsp_symmetry);
  tcase_add_test(tc, test_bsp_symmetric_csr);
  tcase_add_test(tc, test_bsp_read_vtype);
  tcase_add_test(tc, test_bsp_foreign);
  tcase_add_test(tc, test_bsp_bad_files);
  tcase_add_test(tc, test_bsp_inconsistent);
  tcase_add_test(tc, test_bsp_checksum);
  suite_add_tcase(s, tc);
  tc = tcase_create("npz");
  tcase_add_test(tc, test_npz_round_trips);
  tcase_add_test(tc, test_npz_converted);
  tcase_add_test(tc, test_npz_bad_files);
  tcase_add_test(tc, test_bool_values);
  tcase_add_test(tc, test_bool_scipy);
  suite_add_tcase(s, tc);
  tc = tcase_create("python");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_python_reads);
  suite_add_tcase(s, tc);
  tc = tcase_create("alloc_fail");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_alloc_walk);
  suite_add_tcase(s, tc);
  tc = tcase_create("shared_data");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_shared_matrices);
  suite_add_tcase(s, tc);
  return s;
}

#ifdef STANDALONE /* temporary: run this suite alone */
int main(void) {
  tu_tmp_root_init();
  SRunner *sr = srunner_create(suite_containers());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tu_tmp_root_cleanup();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
#endif
