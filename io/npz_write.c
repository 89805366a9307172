/* npz_write.c -- spc_npz_write: a matrix as scipy.sparse.save_npz writes it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "npz_internal.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { NPZ_COO, NPZ_CSR, NPZ_CSC, NPZ_DIA };

static const char *lv_name(const spc_tensor *t, int l) {
  if (t->ext && t->ext->level_name) return t->ext->level_name(t, l);
  return t->lv[l].fmt ? t->lv[l].fmt->name : "";
}

/* The built-in dia (read-side names and arrays as its spec gives them)
 * is SciPy's dia_matrix as it is: values offsets x columns, data[k][j] =
 * A[j - offsets[k], j], the padding zeros, which SciPy drops as dia's.
 * bcsr is not written as bsr_matrix: SciPy counts a block's zeros as
 * stored entries, so a round trip would gain the padding (a COO instead).
 * Values only (a pattern has none). */
static int padded_kind(const spc_tensor *t) {
  if (t->vt == SPC_PATTERN || !t->ext || !t->format) return -1;
  if (!strcmp(t->format, "dia") && t->nlevels == 3 && !strcmp(lv_name(t, 0), "squeezed") &&
      !strcmp(lv_name(t, 1), "dense") && !strcmp(lv_name(t, 2), "offset")) {
    const spc_array *perm = spc_level_array_c(&t->lv[0], "perm");
    if (perm && t->lv[1].size == t->dims[1] && t->nval == perm->len * t->dims[1]) return NPZ_DIA;
  }
  return -1;
}

/* The scipy layout t is stored in as is, or -1. */
static int npz_kind(const spc_tensor *t) {
  if (t->order != 2) return -1;
  int k = padded_kind(t);
  if (k >= 0 || t->nlevels != 2) return k;
  const spc_level *a = &t->lv[0], *b = &t->lv[1];
  if (a->fmt == &spc_level_compressed && b->fmt == &spc_level_singleton &&
      a->dim != b->dim)
    return NPZ_COO;
  if (a->fmt == &spc_level_dense && b->fmt == &spc_level_compressed)
    return a->dim == 0 && b->dim == 1 ? NPZ_CSR : a->dim == 1 && b->dim == 0 ? NPZ_CSC : -1;
  return -1;
}

static zsrc arr_src(unsigned char *hdr, const spc_array *a) {
  size_t w = a->type == SPC_IDX32 ? 4 : 8;
  zsrc s = {hdr, spc_cnt_npy_header(hdr, w == 4 ? "<i4" : "<i8", a->len), a->data,
            (uint64_t)a->len * w, false};
  return s;
}

/* n int64 values 0 / 1 as numpy's bool bytes. */
static unsigned char *bool_bytes(const int64_t *v, int64_t n) {
  unsigned char *b = spc_malloc_n(n > 0 ? n : 1, 1);
  for (int64_t i = 0; b && i < n; i++) b[i] = v[i] != 0;
  return b;
}

/* boolean: the values (int64 0 / 1) written as numpy's bool ('|b1') */
static spc_status npz_emit(zwriter *w, const spc_tensor *m, int kind, bool boolean) {
  static const char *const names[4][2] = {{"row.npy", "col.npy"},
                                          {"indices.npy", "indptr.npy"},
                                          {"indices.npy", "indptr.npy"},
                                          {"offsets.npy", NULL}};
  static const char *const knames[4] = {"coo", "csr", "csc", "dia"};
  unsigned char h[5][128];
  unsigned char fmt[12] = {0}, *ones = (unsigned char *)w->ones;
  int64_t shape[2] = {m->dims[0], m->dims[1]};
  int64_t nnz = spc_tensor_nstored(m);
  zsrc s[5];
  for (int i = 0; i < 3; i++) fmt[4 * i] = (unsigned char)knames[kind][i];
  /* the index arrays, then format, shape and data */
  int k = 2;
  if (kind == NPZ_COO) {
    int r = m->lv[0].dim == 0 ? 0 : 1;
    s[0] = arr_src(h[0], spc_level_array_c(&m->lv[r], "crd"));
    s[1] = arr_src(h[1], spc_level_array_c(&m->lv[1 - r], "crd"));
  } else if (kind == NPZ_DIA) { /* offsets; data offsets x columns */
    s[0] = arr_src(h[0], spc_level_array_c(&m->lv[0], "perm"));
    k = 1;
  } else {
    s[0] = arr_src(h[0], spc_level_array_c(&m->lv[1], "crd"));
    s[1] = arr_src(h[1], spc_level_array_c(&m->lv[1], "pos"));
  }
  s[k] = (zsrc){h[k], spc_cnt_npy_header(h[k], "<U3", -1), fmt, 12, false};
  k++;
  s[k] = (zsrc){h[k], spc_cnt_npy_header(h[k], "<i8", 2), shape, 16, false};
  k++;
  unsigned char *bools = NULL;
  if (boolean) {
    int64_t n = kind == NPZ_DIA ? m->nval : nnz;
    if (!(bools = bool_bytes(m->val, n)))
      return spc_cnt_err(w->e, SPC_ERR_NOMEM, w->path, "data.npy", "out of memory");
    if (kind == NPZ_DIA) {
      int64_t dd[2] = {spc_level_array_c(&m->lv[0], "perm")->len, m->dims[1]};
      s[k] = (zsrc){h[k], spc_cnt_npy_header_nd(h[k], "|b1", 2, dd), bools, (uint64_t)n, false};
    } else {
      s[k] = (zsrc){h[k], spc_cnt_npy_header(h[k], "|b1", n), bools, (uint64_t)n, false};
    }
  } else if (kind == NPZ_DIA) {
    int64_t dd[2] = {spc_level_array_c(&m->lv[0], "perm")->len, m->dims[1]};
    s[k] = (zsrc){h[k], spc_cnt_npy_header_nd(h[k], spc_cnt_npy_descr(m->vt), 2, dd), m->val,
                  (uint64_t)m->nval * spc_vtype_size(m->vt), false};
  } else {
    s[k] = (zsrc){h[k], spc_cnt_npy_header(h[k], spc_cnt_npy_descr(m->vt), nnz), m->val,
                  (uint64_t)nnz * (m->vt == SPC_PATTERN ? 8 : spc_vtype_size(m->vt)),
                  m->vt == SPC_PATTERN};
    if (m->vt == SPC_PATTERN)
      for (size_t i = 0; i < CHUNK / 8; i++) w->ones[i] = 1.0;
  }
  k++;
  const char *nm[5] = {names[kind][0], names[kind][1], "format.npy", "shape.npy", "data.npy"};
  if (kind == NPZ_DIA) nm[1] = nm[2], nm[2] = nm[3], nm[3] = nm[4];
  spc_status st = SPC_OK;
  for (int i = 0; i < k && !st; i++) st = spc_cnt_zw_entry(w, nm[i], &s[i], ones);
  spc_free(bools);
  return st ? st : spc_cnt_zw_finish(w);
}

spc_status spc_npz_write(const spc_tensor *t, const char *path,
                         const spc_write_opts *o, spc_error *e) {
  spc_tensor *own = NULL;
  zwriter *w = NULL;
  spc_status s = SPC_OK;
  if (!t || !path)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no tensor or no path");
  if (t->order != 2)
    return spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, NULL,
                       "npz holds matrices (order 2); this tensor has order %d",
                       t->order);
  const spc_tensor *m = t;
  if (t->sym != SPC_GENERAL && !spc_native_dense(t)) { /* scipy has no symmetric storage */
    if ((s = spc_tensor_expand(t, &own, e))) goto done;
    m = own;
  }
  int kind = npz_kind(m);
  if (kind < 0) {
    spc_tensor *c = NULL;
    if ((s = spc_tensor_to_coo(m, spc_cnt_all_dense(m), &c, e))) goto done;
    spc_tensor_free(&own);
    m = own = c;
    kind = NPZ_COO;
  }
  if (!(w = spc_calloc(1, sizeof *w))) {
    s = spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
    goto done;
  }
  w->path = path;
  w->e = e;
  w->deflate = o && o->gzip > 0;
  if (!(w->f = fopen(path, "wb"))) {
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot create: %s", strerror(errno));
    goto done;
  }
  s = npz_emit(w, m, kind, spc_tensor_boolean(t) && m->vt == SPC_I64);
done:
  if (w && w->f && fclose(w->f) && !s)
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "close failed: %s", strerror(errno));
  spc_free(w);
  spc_tensor_free(&own);
  if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  return s;
}
