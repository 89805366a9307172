/* bsp_write.c -- spc_bsp_write: a tensor into a binsparse HDF5 file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include <stdio.h>
#include <string.h>

/* ======================================================================
 * Writing
 * ====================================================================== */

/* Which triangle an order-2 tensor stores: 1 lower (i >= j), 2 upper,
 * 0 both (no binsparse structure fits); a diagonal counts as lower. */
static spc_status stored_triangle(const spc_tensor *t, int *tri, spc_error *e) {
  spc_iter *it = NULL;
  int64_t x[SPC_MAX_ORDER];
  bool lower = false, upper = false;
  spc_status s = spc_iter_create(t, &it, e);
  if (s) return s;
  while (spc_iter_next(it, x, NULL) && !(lower && upper)) {
    lower |= x[0] > x[1];
    upper |= x[0] < x[1];
  }
  spc_iter_free(&it);
  *tri = lower && upper ? 0 : upper ? 2 : 1;
  return SPC_OK;
}

static hid_t index_ftype(const spc_array *a) {
  return a->type == SPC_IDX32 ? H5T_STD_I32LE : H5T_STD_I64LE;
}
static hid_t index_mtype(const spc_array *a) {
  return a->type == SPC_IDX32 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64;
}

/* Compound {r, i} of doubles: file (little-endian) or memory type. */
static hid_t complex_type(bool file) {
  hid_t c = H5Tcreate(H5T_COMPOUND, 16);
  hid_t d = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
  if (c >= 0 && (H5Tinsert(c, "r", 0, d) < 0 || H5Tinsert(c, "i", 8, d) < 0)) {
    H5Tclose(c);
    c = H5I_INVALID_HID;
  }
  return c;
}

spc_status spc_cnt_wr_values(h5c *c, const spc_tensor *t, int64_t n) {
  hid_t ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
  spc_status s;
  if (spc_tensor_boolean(t)) /* booleans: binsparse's bint8, one byte each */
    return spc_cnt_wr_dset(c, "values", H5T_STD_U8LE, H5T_NATIVE_INT64, n, t->val);
  switch (t->vt) {
  case SPC_I64: return spc_cnt_wr_dset(c, "values", H5T_STD_I64LE, H5T_NATIVE_INT64, n, t->val);
  case SPC_U64: return spc_cnt_wr_dset(c, "values", H5T_STD_U64LE, H5T_NATIVE_UINT64, n, t->val);
  case SPC_F32: return spc_cnt_wr_dset(c, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, n, t->val);
  case SPC_F64: return spc_cnt_wr_dset(c, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, t->val);
  case SPC_C128:
    if ((ft = complex_type(true)) < 0 || (mt = complex_type(false)) < 0)
      s = spc_cnt_h5_fail(c, SPC_ERR_IO, "values", "cannot make the complex type");
    else
      s = spc_cnt_wr_dset(c, "values", ft, mt, n, t->val);
    H5CLOSE(H5Tclose, ft);
    H5CLOSE(H5Tclose, mt);
    return s;
  default: return spc_cnt_wr_dset(c, "values", H5T_STD_U8LE, H5T_NATIVE_UINT8, n, NULL);
  }
}

static spc_status wr_levels(h5c *c, const spc_tensor *t, const plan *p) {
  spc_status s = SPC_OK;
  for (int l = 0; l < t->nlevels && !s; l++) {
    const spc_level_format *f = t->lv[l].fmt;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i] && !s; i++) {
      const spc_array *a = spc_level_array_c(&t->lv[l], f->arrays[i]);
      if (!a)
        return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, NULL,
                           "level %d has no %s array", l, f->arrays[i]);
      if (!p->lv[l].dset[i][0]) { /* omitted root pos: must be {0, n} */
        if (a->len != 2 || spc_arr_get(a, 0) != 0)
          return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, NULL,
                             "root pos of level %d is not {0, n}", l);
        continue;
      }
      s = spc_cnt_wr_dset(c, p->lv[l].dset[i], index_ftype(a), index_mtype(a), a->len, a->data);
    }
  }
  return s;
}

static spc_status bsp_emit(h5c *c, const spc_tensor *t, const plan *p,
                           const spc_write_opts *o) {
  jb b = {0}, sb = {0};
  int64_t n = spc_tensor_nstored(t);
  spc_status s = wr_levels(c, t, p);
  if (!s && o && o->progress) o->progress(o->progress_ctx, "write", 0.5);
  if (!s) s = spc_cnt_wr_values(c, t, n);
  if (!s && p->bsp) spc_cnt_jb_binsparse(&b, p, t, n);
  if (!s) spc_cnt_jb_spconv(&sb, p, n);
  if (!s && (b.oom || sb.oom)) s = spc_cnt_nomem(c);
  if (!s && p->bsp) s = spc_cnt_wr_attr(c, "binsparse", b.s);
  if (!s) s = spc_cnt_wr_attr(c, "spconv", sb.s);
  if (!s) s = spc_cnt_wr_attr(c, "spconv_spec", "");
  spc_free(b.s);
  spc_free(sb.s);
  return s;
}

/* The tensor to write: dense converted to COO without zeros, symmetric
 * storage expanded unless kept (which needs one whole triangle). */
static spc_status write_form(const spc_tensor *t, const spc_write_opts *o,
                             spc_tensor **own, int *tri, spc_error *e) {
  spc_status s;
  bool dense = true;
  *tri = 0;
  for (int l = 0; l < t->nlevels; l++) dense &= t->lv[l].fmt == &spc_level_dense;
  if (dense) {
    if ((s = spc_tensor_to_coo(t, 1, own, e))) return s;
    t = *own;
  }
  if (t->sym == SPC_GENERAL) return SPC_OK;
  if (o && o->keep_symmetry && t->order == 2 && (s = stored_triangle(t, tri, e)))
    return s;
  if (!*tri) {
    spc_tensor *x = NULL;
    if ((s = spc_tensor_expand(t, &x, e))) return s;
    spc_tensor_free(own);
    *own = x;
  }
  return SPC_OK;
}

spc_status spc_bsp_write(const spc_tensor *t, const char *path,
                         const spc_write_opts *o, spc_error *e) {
  h5c c = {.path = path, .e = e, .f = H5I_INVALID_HID};
  spc_tensor *own = NULL;
  hid_t fapl = H5I_INVALID_HID;
  plan *p = NULL;
  int tri = 0;
  if (!t || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no tensor or no path");
  if (t->nlevels < 1 || t->nlevels > SPC_MAX_ORDER)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "tensor has %d levels", t->nlevels);
  bool conv = spc_cnt_bsp_is_conv(t); /* a YAML format: stored as it is */
  spc_status s = conv ? SPC_OK : write_form(t, o, &own, &tri, e);
  if (s) goto done;
  const spc_tensor *m = own ? own : t;
  if (!(p = spc_malloc(sizeof *p))) {
    s = spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
    goto done;
  }
  if (!conv) spc_cnt_plan_from_tensor(m, p);
  p->tri = tri;
  c.compress = o && o->gzip > 0;
  spc_cnt_h5_quiet(&c);
  if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
      H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0
#if H5_VERSION_GE(1, 10, 7)
      || H5Pset_file_locking(fapl, 1, 1) < 0
#endif
  ) {
    s = spc_cnt_h5_fail(&c, SPC_ERR_IO, NULL, "cannot set file properties");
  } else if ((c.f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
    s = spc_cnt_h5_fail(&c, SPC_ERR_IO, NULL, "cannot create HDF5 file");
  } else {
    s = conv ? spc_cnt_bsp_write_conv(&c, m) : bsp_emit(&c, m, p, o);
    if (H5Fclose(c.f) < 0 && !s) s = spc_cnt_h5_fail(&c, SPC_ERR_IO, NULL, "cannot close HDF5 file");
  }
  H5CLOSE(H5Pclose, fapl);
  spc_cnt_h5_restore(&c);
done:
  spc_free(p);
  spc_tensor_free(&own);
  if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  return s;
}
