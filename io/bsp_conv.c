/* bsp_conv.c -- tensors in formats given by YAML specs (DIA, ELL, BCSR,
 * SKY, Morton, a user's format) in a .bsp.h5 file: the format travels with
 * the data, so the file reads back without the spec beside it.  See
 * bsp_internal.h for the layout. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include "spc_assemble.h"
#include <stdio.h>
#include <string.h>

#define ATTR "spconv_format"

bool spc_cnt_bsp_is_conv(const spc_tensor *t) {
  spc_conv_desc d;
  if (!spc_conv_describe(t, &d)) return false;
  bool dense = true;
  for (int l = 0; l < t->nlevels; l++) {
    if (!t->lv[l].fmt || d.lo[l] != 0) return true;
    dense &= t->lv[l].fmt == &spc_level_dense;
  }
  return dense; /* other native stacks: binsparse describes them */
}

static void jb_desc(jb *b, const spc_tensor *t, const spc_conv_desc *d) {
  spc_cnt_jb_add(b, "{\"format\": ");
  spc_cnt_jb_str(b, d->format);
  spc_cnt_jb_add(b, ", \"shape\": [");
  for (int k = 0; k < t->order; k++) spc_cnt_jb_add(b, "%s%lld", k ? ", " : "", (long long)t->dims[k]);
  spc_cnt_jb_add(b, "], \"value_type\": \"%s\", \"index_type\": \"%s\", \"coord_type\": \"%s\", "
                    "\"number_of_values\": %lld, ",
                 spc_vtype_name(t->vt), d->index64 ? "int64" : "int32",
                 d->coord64 ? "int64" : "int32", (long long)t->nval);
  /* values booleans (int64 0 / 1 in memory, bint8 in the file) */
  if (spc_tensor_boolean(t)) spc_cnt_jb_add(b, "\"boolean\": true, ");
  spc_cnt_jb_add(b, "\"params\": {");
  for (int k = 0; k < d->nparams; k++) {
    spc_cnt_jb_add(b, "%s", k ? ", " : "");
    spc_cnt_jb_str(b, d->pname[k]);
    spc_cnt_jb_add(b, ": %lld", (long long)d->pvalue[k]);
  }
  spc_cnt_jb_add(b, "}, \"modes\": [");
  for (int k = 0; k < d->nmodes; k++) spc_cnt_jb_add(b, "%s%d", k ? ", " : "", d->modes[k]);
  spc_cnt_jb_add(b, "], \"levels\": [");
  for (int l = 0; l < d->nlevels; l++) {
    spc_cnt_jb_add(b, "%s{\"level\": ", l ? ", " : "");
    spc_cnt_jb_str(b, d->level_name[l]);
    spc_cnt_jb_add(b, ", \"lo\": %lld, \"N\": %lld, \"spec\": ", (long long)d->lo[l], (long long)d->N[l]);
    spc_cnt_jb_str(b, d->level_yaml[l] ? d->level_yaml[l] : "");
    spc_cnt_jb_add(b, "}");
  }
  spc_cnt_jb_add(b, "], \"spec\": ");
  spc_cnt_jb_str(b, d->format_yaml ? d->format_yaml : "");
  spc_cnt_jb_add(b, "}");
}

spc_status spc_cnt_bsp_write_conv(h5c *c, const spc_tensor *t) {
  spc_conv_desc d;
  spc_status s = SPC_OK;
  if (!spc_conv_describe(t, &d))
    return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, NULL, "not a converted tensor");
  for (int l = 0; l < t->nlevels && !s; l++)
    for (int k = 0; k < spc_conv_narrays(t, l) && !s; k++) {
      const char *an;
      spc_conv_array_type(t, l, k, &an);
      const spc_array *a = spc_level_array_c(&t->lv[l], an);
      char ds[DSET_MAX];
      snprintf(ds, sizeof ds, "level%d_%s", l, an);
      if (!a || !spc_cnt_dset_name_ok(ds))
        return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, ds, "no array or bad name");
      s = spc_cnt_wr_dset(c, ds, a->type == SPC_IDX32 ? H5T_STD_I32LE : H5T_STD_I64LE,
                          a->type == SPC_IDX32 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64, a->len, a->data);
    }
  if (!s && t->vt != SPC_PATTERN) s = spc_cnt_wr_values(c, t, t->nval);
  jb b = {0};
  if (!s) jb_desc(&b, t, &d);
  if (!s && b.oom) s = spc_cnt_nomem(c);
  if (!s) s = spc_cnt_wr_attr(c, ATTR, b.s);
  spc_free(b.s);
  return s;
}

static spc_status bad(h5c *c, const char *what) {
  return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, ATTR, "%s", what);
}

static spc_status desc_from(h5c *c, const jv *j, spc_conv_desc *d, int *order,
                            int64_t *dims, spc_vtype *vt, int64_t *nval) {
  memset(d, 0, sizeof *d);
  const jv *sh = spc_cnt_jget(j, "shape"), *ps = spc_cnt_jget(j, "params"),
           *lv = spc_cnt_jget(j, "levels");
  const char *it = spc_cnt_jgets(j, "index_type"), *ct = spc_cnt_jgets(j, "coord_type"),
             *vn = spc_cnt_jgets(j, "value_type");
  if (!(d->format = spc_cnt_jgets(j, "format")) || !(d->format_yaml = spc_cnt_jgets(j, "spec")))
    return bad(c, "no format or no spec");
  if (!sh || sh->type != J_ARR || spc_cnt_jlen(sh) < 1 || spc_cnt_jlen(sh) > SPC_MAX_ORDER)
    return bad(c, "shape must be a list of 1 to 16 sizes");
  *order = 0;
  for (const jv *x = sh->kid; x; x = x->next) {
    if (x->type != J_NUM || !x->isint || x->i < 0) return bad(c, "shape holds a bad size");
    dims[(*order)++] = x->i;
  }
  if (!vn || spc_vtype_parse(vn, vt)) return bad(c, "bad value_type");
  if (!it || !ct || (strcmp(it, "int32") && strcmp(it, "int64")) ||
      (strcmp(ct, "int32") && strcmp(ct, "int64")))
    return bad(c, "index_type and coord_type must be int32 or int64");
  d->index64 = !strcmp(it, "int64");
  d->coord64 = !strcmp(ct, "int64");
  if (!spc_cnt_jgeti(j, "number_of_values", nval) || *nval < 0) return bad(c, "bad number_of_values");
  if (ps && ps->type == J_OBJ)
    for (const jv *x = ps->kid; x; x = x->next) {
      if (d->nparams >= SPC_SPEC_MAX || x->type != J_NUM || !x->isint) return bad(c, "bad params");
      d->pname[d->nparams] = x->key;
      d->pvalue[d->nparams++] = x->i;
    }
  const jv *md = spc_cnt_jget(j, "modes");
  if (md && md->type == J_ARR)
    for (const jv *x = md->kid; x; x = x->next) {
      if (d->nmodes >= SPC_MAX_ORDER || x->type != J_NUM || !x->isint) return bad(c, "bad modes");
      d->modes[d->nmodes++] = (int)x->i;
    }
  if (!lv || lv->type != J_ARR || spc_cnt_jlen(lv) < 1 || spc_cnt_jlen(lv) > SPC_MAX_ORDER)
    return bad(c, "levels must be a list of 1 to 16 levels");
  for (const jv *x = lv->kid; x; x = x->next) {
    int l = d->nlevels++;
    if (!(d->level_name[l] = spc_cnt_jgets(x, "level")) || !(d->level_yaml[l] = spc_cnt_jgets(x, "spec")) ||
        !spc_cnt_jgeti(x, "lo", &d->lo[l]) || !spc_cnt_jgeti(x, "N", &d->N[l]))
      return bad(c, "a level needs level, spec, lo and N");
  }
  return SPC_OK;
}

spc_status spc_cnt_bsp_read_conv(h5c *c, bool *found, spc_tensor **out) {
  jv *j = NULL;
  spc_tensor *t = NULL;
  spc_conv_desc d;
  int order = 0;
  int64_t dims[SPC_MAX_ORDER], nval = 0;
  spc_vtype vt = SPC_PATTERN;
  *found = false;
  *out = NULL;
  spc_status s = spc_cnt_rd_json_attr(c, ATTR, &j);
  if (s || !j) return s;
  *found = true;
  if ((s = desc_from(c, j, &d, &order, dims, &vt, &nval))) goto done;
  d.no_jit = c->no_jit;
  if ((s = spc_conv_shell(&d, order, dims, vt, &t, c->e))) {
    if (c->e && !c->e->file[0]) snprintf(c->e->file, sizeof c->e->file, "%s", c->path);
    goto done;
  }
  for (int l = 0; l < t->nlevels && !s; l++)
    for (int k = 0; k < spc_conv_narrays(t, l) && !s; k++) {
      const char *an;
      spc_itype ty = spc_conv_array_type(t, l, k, &an);
      char ds[DSET_MAX];
      snprintf(ds, sizeof ds, "level%d_%s", l, an);
      if (!(s = spc_cnt_rd_index(c, ds, &t->lv[l], an))) {
        spc_array *a = spc_level_array(&t->lv[l], an);
        if (a->type != ty) { /* the routines take exactly the stored width */
          void *w = spc_malloc_n(a->len, ty == SPC_IDX32 ? 4 : 8);
          if (!w) { s = spc_cnt_nomem(c); break; }
          spc_array na = *a;
          na.type = ty;
          na.data = w;
          for (int64_t i = 0; i < a->len; i++) {
            int64_t v = spc_arr_get(a, i);
            if (ty == SPC_IDX32 && (v < INT32_MIN || v > INT32_MAX)) {
              spc_free(w);
              s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, ds, "value %lld does not fit int32", (long long)v);
              break;
            }
            spc_arr_set(&na, i, v);
          }
          if (s) break;
          if (a->owned) spc_free(a->data);
          *a = na;
          a->owned = true;
        }
      }
    }
  if (!s) {
    plan p = {.pattern = vt == SPC_PATTERN};
    void *val = NULL;
    int64_t n;
    spc_vtype got;
    s = spc_cnt_rd_values(c, &p, &val, &n, &got);
    if (!s && vt != SPC_PATTERN && (got != vt || n != nval))
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "values",
                      "%lld values of type %s, the descriptor says %lld of %s", (long long)n,
                      spc_vtype_name(got), (long long)nval, spc_vtype_name(vt));
    if (s) spc_free(val);
    else {
      t->val = val;
      t->val_owned = val != NULL;
      t->nval = nval;
      const jv *bo = spc_cnt_jget(j, "boolean");
      if (bo && bo->type == J_BOOL && bo->b && vt == SPC_I64) bsp_booleans(t);
    }
  }
  /* every position and coordinate checked: read back with every index
   * checked (the factory's checked routine, else the interpreter) before
   * anything unchecked touches it */
  if (!s) {
    spc_tensor *coo = NULL;
    s = spc_convert_to_coo_checked(t, SPC_ENGINE_AUTO, c->no_jit, NULL, &coo, c->e);
    /* and every coordinate inside the shape */
    int64_t n = coo ? spc_tensor_nstored(coo) : 0;
    for (int dd = 0; !s && dd < coo->order; dd++) {
      const spc_array *a = spc_level_array_c(&coo->lv[dd], "crd");
      for (int64_t i = 0; i < n && !s; i++) {
        int64_t x = spc_arr_get(a, i);
        if (x < 0 || x >= dims[dd])
          s = spc_err(c->e, SPC_ERR_INPUT, NULL, 0, 0,
                      "component %lld has index %lld in dimension %d of size %lld",
                      (long long)i, (long long)x, dd + 1, (long long)dims[dd]);
      }
    }
    if (!s) s = spc_conv_check_consistent(t, coo, c->e);
    spc_tensor_free(&coo);
    if (s == SPC_ERR_NOMEM) { /* the check's own memory: not the file's fault */
      if (c->e) snprintf(c->e->file, sizeof c->e->file, "%s", c->path);
    } else if (s && c->e) {
      char m[sizeof c->e->msg];
      snprintf(m, sizeof m, "%s", c->e->msg);
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, ATTR, "arrays inconsistent with format %s: %s",
                      d.format, m);
    } else if (s) {
      s = SPC_ERR_INPUT;
    }
  }
done:
  spc_cnt_jv_free(j);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}
