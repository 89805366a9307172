/* bsp_read.c -- spc_bsp_read: a binsparse HDF5 file into a tensor. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Memory type for a compound of two floats (names as in the file). */
static hid_t complex_mtype(hid_t ft) {
  hid_t mt = H5I_INVALID_HID;
  if (H5Tget_nmembers(ft) != 2 || H5Tget_member_class(ft, 0) != H5T_FLOAT ||
      H5Tget_member_class(ft, 1) != H5T_FLOAT)
    return mt;
  char *n0 = H5Tget_member_name(ft, 0), *n1 = H5Tget_member_name(ft, 1);
  if (n0 && n1 && (mt = H5Tcreate(H5T_COMPOUND, 16)) >= 0 &&
      (H5Tinsert(mt, n0, 0, H5T_NATIVE_DOUBLE) < 0 || H5Tinsert(mt, n1, 8, H5T_NATIVE_DOUBLE) < 0))
    H5CLOSE(H5Tclose, mt);
  H5free_memory(n0);
  H5free_memory(n1);
  return mt;
}

/* The values dataset into a new buffer: *n values of type *vt (pattern:
 * only its length, or -1 without one). */
spc_status spc_cnt_rd_values(h5c *c, const plan *p, void **val, int64_t *n, spc_vtype *vt) {
  hid_t d = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
  bool own_mt = false;
  int64_t len;
  spc_status s;
  *val = NULL;
  *n = -1;
  *vt = SPC_PATTERN;
  if (p->pattern && H5Lexists(c->f, "values", H5P_DEFAULT) <= 0) return SPC_OK;
  if ((s = spc_cnt_ds_open(c, "values", &d, &len))) return s;
  *n = len;
  if (p->pattern) goto done;
  ft = H5Dget_type(d);
  H5T_class_t cls = ft < 0 ? H5T_NO_CLASS : H5Tget_class(ft);
  size_t sz = ft < 0 ? 0 : H5Tget_size(ft);
  if (cls == H5T_COMPOUND && (mt = complex_mtype(ft)) >= 0) {
    own_mt = true;
    *vt = SPC_C128;
  } else if (cls == H5T_FLOAT && p->cpairs) {
    if (len % 2) {
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "values",
                      "complex values as an odd number (%lld) of floats", (long long)len);
      goto done;
    }
    *n = len / 2;
    *vt = SPC_C128;
    mt = H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_FLOAT) {
    *vt = sz <= 4 ? SPC_F32 : SPC_F64;
    mt = sz <= 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_INTEGER && !p->cpairs) {
    bool u64 = H5Tget_sign(ft) == H5T_SGN_NONE && sz > 4;
    *vt = u64 ? SPC_U64 : SPC_I64;
    mt = u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
  } else {
    s = spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "values",
                    "values of this HDF5 type (class %d) are not supported", (int)cls);
    goto done;
  }
  if (!(*val = spc_malloc_n(*n, spc_vtype_size(*vt)))) {
    s = spc_cnt_nomem(c);
    goto done;
  }
  if (len > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, *val) < 0)
    s = spc_cnt_h5_fail(c, SPC_ERR_INPUT, "values", "cannot read dataset (corrupt or truncated file)");
done:
  if (own_mt) H5CLOSE(H5Tclose, mt);
  H5CLOSE(H5Tclose, ft);
  H5CLOSE(H5Dclose, d);
  return s;
}

static spc_status rd_levels(h5c *c, const plan *p, spc_tensor *t) {
  spc_status s = SPC_OK;
  for (int l = 0; l < p->nlevels && !s; l++) {
    const plevel *q = &p->lv[l];
    spc_level *lv = &t->lv[l];
    lv->fmt = q->fmt;
    lv->props = q->fmt->props;
    lv->dim = q->dim;
    lv->size = q->size;
    t->nlevels = l + 1;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && q->fmt->arrays[i] && !s; i++) {
      const char *an = q->fmt->arrays[i];
      int64_t n;
      if (q->dset[i][0]) {
        s = spc_cnt_rd_index(c, q->dset[i], lv, an);
      } else if (!(s = spc_cnt_ds_len(c, q->dset[spc_cnt_array_index(q->fmt, "crd")], &n))) {
        if ((s = spc_level_add_array(lv, an, spc_itype_for(n), 2, c->e))) return spc_cnt_nomem(c);
        spc_arr_set(&lv->arr[lv->narr - 1], 0, 0);
        spc_arr_set(&lv->arr[lv->narr - 1], 1, n);
      }
    }
  }
  return s;
}

/* Entries of a binsparse "structure" must lie in its triangle. */
static spc_status check_triangle(h5c *c, const spc_tensor *t, int tri) {
  spc_iter *it = NULL;
  int64_t x[SPC_MAX_ORDER];
  spc_status s = spc_iter_create(t, &it, c->e);
  while (!s && spc_iter_next(it, x, NULL))
    if (tri == 1 ? x[0] < x[1] : x[0] > x[1])
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                      "entry (%lld, %lld) lies outside the %s triangle the "
                      "structure key declares", (long long)x[0], (long long)x[1],
                      tri == 1 ? "lower" : "upper");
  spc_iter_free(&it);
  return s;
}

/* The tensor of plan p, validated. */
static spc_status build(h5c *c, const plan *p, spc_tensor **out) {
  void *val = NULL;
  int64_t nval;
  spc_vtype vt;
  spc_status s;
  spc_tensor *t = spc_tensor_alloc(p->order, p->dims, SPC_PATTERN);
  *out = NULL;
  if (!t) return spc_cnt_nomem(c);
  t->format = p->format;
  t->sym = p->sym;
  if ((s = rd_levels(c, p, t)) || (s = spc_cnt_rd_values(c, p, &val, &nval, &vt)) ||
      (s = spc_cnt_validate(t, c->path, c->e)))
    goto fail;
  int64_t np = spc_tensor_nstored(t);
  if (p->have_nsv && p->nsv != np) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                    "number_of_stored_values is %lld but the arrays hold %lld",
                    (long long)p->nsv, (long long)np);
    goto fail;
  }
  if (p->iso && nval == 1 && vt != SPC_PATTERN && np != 1) { /* one value for all */
    size_t w = spc_vtype_size(vt);
    void *all = spc_malloc_n(np, w);
    if (!all) {
      s = spc_cnt_nomem(c);
      goto fail;
    }
    for (int64_t k = 0; k < np; k++) memcpy((char *)all + k * (int64_t)w, val, w);
    spc_free(val);
    val = all;
    nval = np;
  }
  if (nval != np && !(vt == SPC_PATTERN && nval < 0)) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "values",
                    "%lld values for %lld stored components", (long long)nval, (long long)np);
    goto fail;
  }
  t->vt = vt;
  t->val = val;
  t->val_owned = val != NULL;
  t->nval = np;
  val = NULL;
  if (p->boolean && vt == SPC_I64) bsp_booleans(t); /* bint8 */
  if (p->bsp && p->sym != SPC_GENERAL && (s = check_triangle(c, t, p->tri))) goto fail;
  *out = t;
  return SPC_OK;
fail:
  spc_free(val);
  spc_tensor_free(&t);
  return s;
}

/* Descriptors: the "binsparse" attribute (else any root attribute holding
 * JSON with a "binsparse" key) and ours. */
static spc_status read_descriptors(h5c *c, jv **bj, jv **sj) {
  spc_status s = spc_cnt_rd_json_attr(c, "binsparse", bj);
  if (!s && !*bj) {
    scan sc = {c, NULL, SPC_OK};
    hsize_t idx = 0;
    if (H5Aiterate2(c->f, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, spc_cnt_scan_attr, &sc) < 0)
      s = sc.s ? sc.s : spc_cnt_h5_fail(c, SPC_ERR_INPUT, NULL, "cannot list attributes");
    *bj = sc.found;
  }
  if (!s) s = spc_cnt_rd_json_attr(c, "spconv", sj);
  return s;
}

static spc_status bsp_load(h5c *c, spc_tensor **out) {
  jv *bj = NULL, *sj = NULL;
  bool conv = false;
  spc_status cs = spc_cnt_bsp_read_conv(c, &conv, out);
  if (conv || cs) return cs;
  plan *p = spc_calloc(1, sizeof *p);
  spc_status s = p ? read_descriptors(c, &bj, &sj) : spc_cnt_nomem(c);
  if (s) goto done;
  const jv *b = spc_cnt_jget(bj, "binsparse");
  if (!b && spc_cnt_jget(bj, "format")) b = bj; /* the inner dict alone */
  if (b) {
    if (!(s = spc_cnt_plan_from_bsp(c, b, p)) && sj) spc_cnt_plan_overlay(p, sj);
  } else if (sj) {
    s = spc_cnt_plan_from_spconv(c, sj, p);
  } else {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                    "no binsparse descriptor (root attribute \"binsparse\")");
  }
  if (!s) s = build(c, p, out);
done:
  spc_cnt_jv_free(bj);
  spc_cnt_jv_free(sj);
  spc_free(p);
  return s;
}

spc_status spc_bsp_read(const char *path, const spc_read_opts *o,
                        spc_tensor **out, spc_error *e) {
  h5c c = {.path = path, .e = e, .f = H5I_INVALID_HID, .no_jit = o && o->no_jit};
  hid_t fapl = H5I_INVALID_HID;
  spc_tensor *t = NULL;
  spc_status s = SPC_OK;
  if (!out || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no output or no path");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
  fclose(f);
  spc_cnt_h5_quiet(&c);
  if (H5Fis_hdf5(path) <= 0) {
    s = spc_cnt_err(e, SPC_ERR_INPUT, path, NULL, "not an HDF5 file");
  } else if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
             H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0
#if H5_VERSION_GE(1, 10, 7)
             || H5Pset_file_locking(fapl, 1, 1) < 0
#endif
  ) {
    s = spc_cnt_h5_fail(&c, SPC_ERR_IO, NULL, "cannot set file properties");
  } else if ((c.f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
    s = spc_cnt_h5_fail(&c, spc_cnt_h5_cause(), NULL, "cannot open HDF5 file");
  } else {
    s = bsp_load(&c, &t);
    H5Fclose(c.f);
  }
  H5CLOSE(H5Pclose, fapl);
  spc_cnt_h5_restore(&c);
  if (!s) s = spc_cnt_finish(&t, path, o, e);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}
