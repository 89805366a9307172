/* npz_read.c -- spc_npz_read: a scipy.sparse .npz file into a tensor. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "npz_internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read an integer vector of `expect` elements into a new level array
 * (`as`: what says how many, for the message). */
static spc_status read_index_as(zfile *z, const char *name, spc_level *lv, const char *aname,
                                int64_t expect, const char *as);
static spc_status read_index(zfile *z, const char *name, spc_level *lv,
                             const char *aname, int64_t expect) {
  const char *as = !strcmp(name, "indptr.npy") ? "one more than the rows (csc: columns, bsr: block rows)"
                   : !strcmp(name, "offsets.npy") ? "data.npy's rows"
                                                  : "data.npy's values";
  return read_index_as(z, name, lv, aname, expect, as);
}

static spc_status read_index_as(zfile *z, const char *name, spc_level *lv, const char *aname,
                                int64_t expect, const char *as) {
  zr r;
  npy h;
  spc_status s = spc_cnt_npy_open(z, name, &r, &h);
  if (!s && (!spc_cnt_is_int(&h) || h.kind == 'b' || h.ndim != 1))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "not an integer vector");
  if (!s && h.count != expect)
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name,
                    "%lld elements, expected %lld (%s)", (long long)h.count,
                    (long long)expect, as);
  bool direct = h.kind == 'i' && (h.isz == 4 || h.isz == 8);
  if (!s && (s = spc_level_add_array(lv, aname, direct && h.isz == 4 ? SPC_IDX32 : SPC_IDX64,
                                     expect, z->e)))
    spc_cnt_err(z->e, s, z->path, name, "out of memory");
  if (!s) {
    void *dst = lv->arr[lv->narr - 1].data;
    s = direct ? spc_cnt_zr_read(&r, dst, h.bytes) : spc_cnt_read_conv(&r, &h, dst);
  }
  return spc_cnt_zr_close(&r, s);
}

/* Value type for a data dtype, and whether it loads without conversion. */
static int data_vtype(const npy *h, spc_vtype *vt, bool *direct) {
  *direct = true;
  if (h->kind == 'f' && h->isz == 8) *vt = SPC_F64;
  else if (h->kind == 'f' && h->isz == 4) *vt = SPC_F32;
  else if (h->kind == 'c' && h->isz == 16) *vt = SPC_C128;
  else if (h->kind == 'u' && h->isz == 8) *vt = SPC_U64;
  else if (h->kind == 'c' && h->isz == 8) *vt = SPC_C128, *direct = false;
  else if (spc_cnt_is_int(h)) *vt = SPC_I64, *direct = h->kind == 'i' && h->isz == 8;
  else return -1;
  return 0;
}

/* The 0-d string array format.npy ("coo", "csr", ...). */
static spc_status read_format(zfile *z, char *out, size_t n) {
  zr r;
  npy h;
  unsigned char b[64];
  spc_status s = spc_cnt_npy_open(z, "format.npy", &r, &h);
  if (!s && ((h.kind != 'U' && h.kind != 'S') || h.count != 1 || h.bytes > sizeof b))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "format.npy", "not a short string");
  if (!s) s = spc_cnt_zr_read(&r, b, h.bytes);
  s = spc_cnt_zr_close(&r, s);
  if (s) return s;
  size_t k = 0, step = h.kind == 'U' ? 4 : 1;
  for (size_t i = 0; i < h.bytes && b[i] && k + 1 < n; i += step) {
    if (b[i] > 127 || (step == 4 && (b[i + 1] || b[i + 2] || b[i + 3])))
      return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "format.npy", "not an ASCII string");
    out[k++] = (char)b[i];
  }
  out[k] = 0;
  return SPC_OK;
}

static spc_status read_shape(zfile *z, int64_t *dims) {
  zr r;
  npy h;
  spc_status s = spc_cnt_npy_open(z, "shape.npy", &r, &h);
  if (!s && (!spc_cnt_is_int(&h) || h.count != 2))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "shape.npy", "not 2 integers");
  if (!s) s = spc_cnt_read_conv(&r, &h, dims);
  if ((s = spc_cnt_zr_close(&r, s))) return s;
  if (dims[0] < 0 || dims[1] < 0)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "shape.npy", "negative dimension");
  return SPC_OK;
}

/* Values: data.npy into a new value array of t (vt chosen from the dtype). */
static spc_status read_data(zfile *z, const int64_t *dims, const char *fmt, int ndim,
                            int64_t *shape, spc_tensor **out, bool *boolean) {
  zr r;
  npy h;
  spc_vtype vt = SPC_F64;
  bool direct = true;
  spc_status s = spc_cnt_npy_open(z, "data.npy", &r, &h);
  if (!s && h.ndim != ndim)
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "data.npy",
                    "a %d-dimensional array; format %s stores %d", h.ndim, fmt, ndim);
  else if (!s && data_vtype(&h, &vt, &direct))
    s = spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, "data.npy",
                    "values of numpy kind '%c%d' are not supported", h.kind, h.isz);
  for (int d = 0; d < ndim && !s; d++) shape[d] = h.shape[d];
  *boolean = !s && h.kind == 'b';
  spc_tensor *t = NULL;
  if (!s && !(t = spc_tensor_alloc(2, dims, vt)))
    s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, NULL, "out of memory");
  if (!s) {
    t->format = fmt;
    t->nval = h.count;
    if (!(t->val = spc_malloc_n(h.count, spc_vtype_size(vt))))
      s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, "data.npy", "out of memory");
    t->val_owned = t->val != NULL;
  }
  if (!s) s = direct ? spc_cnt_zr_read(&r, t->val, h.bytes) : spc_cnt_read_conv(&r, &h, t->val);
  s = spc_cnt_zr_close(&r, s);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}

/* Levels of a coo / csr / csc tensor whose values are read. */
static spc_status read_levels(zfile *z, spc_tensor *t, const char *fmt) {
  int64_t nnz = t->nval;
  spc_status s;
  t->nlevels = 2;
  if (!strcmp(fmt, "coo")) {
    spc_level *a = &t->lv[0], *b = &t->lv[1];
    *a = (spc_level){.fmt = &spc_level_compressed, .dim = 0, .size = t->dims[0]};
    *b = (spc_level){.fmt = &spc_level_singleton, .dim = 1, .size = t->dims[1]};
    if ((s = spc_level_add_array(a, "pos", spc_itype_for(nnz), 2, z->e)))
      return spc_cnt_err(z->e, s, z->path, NULL, "out of memory");
    spc_arr_set(&a->arr[0], 0, 0);
    spc_arr_set(&a->arr[0], 1, nnz);
    if ((s = read_index(z, "row.npy", a, "crd", nnz))) return s;
    return read_index(z, "col.npy", b, "crd", nnz);
  }
  int outer = fmt[2] == 'r' ? 0 : 1; /* csr: rows outside */
  spc_level *a = &t->lv[0], *b = &t->lv[1];
  *a = (spc_level){.fmt = &spc_level_dense, .dim = outer, .size = t->dims[outer]};
  *b = (spc_level){.fmt = &spc_level_compressed, .dim = 1 - outer,
                   .size = t->dims[1 - outer]};
  if ((s = read_index(z, "indptr.npy", b, "pos", t->dims[outer] + 1))) return s;
  return read_index(z, "indices.npy", b, "crd", nnz);
}

/* A dia or bsr file (t: its data as values, shape[] the data's shape)
 * into a COO of the stored components it describes, as SciPy's tocoo
 * counts them:
 *   dia: data (D, L), offsets (D): A[j - offsets[k], j] = data[k, j] for
 *        j < min(L, ncols) where the row is in range, zeros left out (the
 *        padding);
 *   bsr: data (nb, R, C), indices (nb), indptr (nrows / R + 1): block k of
 *        block row I at block column indices[k], every entry of a block
 *        (zeros too: SciPy stores them). */
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static spc_status read_padded(zfile *z, spc_tensor **tp, const char *fmt, const int64_t *shape) {
  spc_tensor *t = *tp;
  bool dia = !strcmp(fmt, "dia");
  int64_t nr = t->dims[0], nc = t->dims[1];
  spc_level a = {0};
  spc_status s = SPC_OK;
  int64_t R = dia ? 1 : shape[1], C = dia ? 1 : shape[2], nb = shape[0];
  if (!dia && ((R < 1 || C < 1) || nr % R || nc % C))
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "data.npy",
                       "blocks of %lld x %lld do not tile the %lld x %lld matrix", (long long)R,
                       (long long)C, (long long)nr, (long long)nc);
  if (dia) s = read_index(z, "offsets.npy", &a, "crd", nb);
  else if (!(s = read_index(z, "indptr.npy", &a, "pos", nr / R + 1)))
    s = read_index_as(z, "indices.npy", &a, "crd", nb, "data.npy's blocks");
  const spc_array *off = dia ? &a.arr[0] : &a.arr[1], *ptr = dia ? NULL : &a.arr[0];
  if (!s && dia && nb > 1) { /* each diagonal once (SciPy: "offset array contains duplicate values") */
    int64_t *o = spc_malloc_n((size_t)nb, sizeof *o);
    if (!o) s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, "offsets.npy", "out of memory");
    for (int64_t k = 0; o && k < nb; k++) o[k] = spc_arr_get(off, k);
    if (o) qsort(o, (size_t)nb, sizeof *o, cmp_i64);
    for (int64_t k = 1; o && k < nb && !s; k++)
      if (o[k] == o[k - 1])
        s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "offsets.npy",
                        "offset %lld appears more than once", (long long)o[k]);
    spc_free(o);
  }
  if (!s && !dia) { /* indptr: from 0 to nb, nondecreasing; indices in range */
    int64_t last = 0;
    for (int64_t I = 0; I <= nr / R && !s; I++) {
      int64_t p = spc_arr_get(ptr, I);
      if ((I == 0 && p) || p < last || p > nb || (I == nr / R && p != nb))
        s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "indptr.npy",
                        "entry %lld (%lld) is not a block row start", (long long)I, (long long)p);
      last = p;
    }
    for (int64_t k = 0; k < nb && !s; k++) {
      int64_t J = spc_arr_get(off, k);
      if (J < 0 || J >= nc / C)
        s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "indices.npy",
                        "block column %lld of block %lld is out of range [0, %lld)", (long long)J,
                        (long long)k, (long long)(nc / C));
    }
  }
  int64_t L = dia ? shape[1] : 0, w = (int64_t)spc_vtype_size(t->vt), n = 0;
  const char *v = t->val;
  /* two passes: count the components, then place them into the COO */
  spc_tensor *c = NULL;
  spc_array *rc = NULL, *cc = NULL;
  for (int pass = 0; pass < 2 && !s; pass++) {
    if (pass == 1) {
      if ((s = spc_coo_alloc(2, t->dims, n, t->vt, &c, z->e))) {
        spc_cnt_err(z->e, s, z->path, NULL, "out of memory");
        break;
      }
      rc = spc_level_array(&c->lv[0], "crd");
      cc = spc_level_array(&c->lv[1], "crd");
      n = 0;
    }
    if (dia) {
      int64_t jn = L < nc ? L : nc;
      for (int64_t k = 0; k < nb; k++) {
        int64_t d = spc_arr_get(off, k);
        if (d <= -nr || d >= nc) continue; /* no row in range (and j - d cannot overflow) */
        for (int64_t j = 0; j < jn; j++) {
          const char *x = v + (k * L + j) * w;
          int64_t i = j - d;
          if (i < 0 || i >= nr || spc_val_is_zero(t->vt, x)) continue;
          if (pass) spc_arr_set(rc, n, i), spc_arr_set(cc, n, j), memcpy((char *)c->val + n * w, x, (size_t)w);
          n++;
        }
      }
    } else {
      for (int64_t I = 0; I < nr / R; I++)
        for (int64_t k = spc_arr_get(ptr, I); k < spc_arr_get(ptr, I + 1); k++) {
          int64_t J = spc_arr_get(off, k);
          for (int64_t ii = 0; ii < R; ii++)
            for (int64_t jj = 0; jj < C; jj++) {
              const char *x = v + ((k * R + ii) * C + jj) * w;
              if (pass)
                spc_arr_set(rc, n, I * R + ii), spc_arr_set(cc, n, J * C + jj),
                    memcpy((char *)c->val + n * w, x, (size_t)w);
              n++;
            }
        }
    }
  }
  for (int k = 0; k < a.narr; k++)
    if (a.arr[k].owned) spc_free(a.arr[k].data);
  if (s) {
    spc_tensor_free(&c);
    return s;
  }
  spc_tensor_free(tp);
  *tp = c;
  return SPC_OK;
}

spc_status spc_npz_read(const char *path, const spc_read_opts *o,
                        spc_tensor **out, spc_error *e) {
  zfile *z = NULL;
  spc_tensor *t = NULL;
  spc_status s = SPC_OK;
  char fmt[16];
  int64_t dims[2];
  bool boolean = false;
  if (!out || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no output or no path");
  *out = NULL;
  if (!(z = spc_calloc(1, sizeof *z)))
    return spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
  z->path = path;
  z->e = e;
  if (!(z->f = fopen(path, "rb"))) {
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
    goto done;
  }
  if ((s = spc_cnt_zf_open(z)) || (s = read_format(z, fmt, sizeof fmt))) goto done;
  static const char *const kinds[] = {"coo", "csr", "csc", "dia", "bsr"};
  const char *kind = NULL;
  int ki = -1;
  for (int i = 0; i < 5; i++)
    if (!strcmp(fmt, kinds[i])) kind = kinds[ki = i];
  if (!kind) {
    s = spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, "format.npy",
                    "npz format '%s' is not supported (coo, csr, csc, dia, bsr)", fmt);
    goto done;
  }
  int64_t shape[3] = {0, 0, 0};
  if ((s = read_shape(z, dims)) ||
      (s = read_data(z, dims, kind, ki < 3 ? 1 : ki == 3 ? 2 : 3, shape, &t, &boolean)))
    goto done;
  if (ki >= 3) s = read_padded(z, &t, kind, shape); /* dia, bsr: a COO of their components */
  else s = read_levels(z, t, kind);
  if (s || (s = spc_cnt_validate(t, path, e))) goto done;
  t->boolean = boolean; /* kept by finish's steps unless --type changes the values */
  s = spc_cnt_finish(&t, path, o, e);
done:
  if (z->f) fclose(z->f);
  spc_free(z);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}
