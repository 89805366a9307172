/* bsp_read_plan.c -- the plan of a binsparse file, from its descriptors:
 * the binsparse JSON, our own "spconv" JSON, or both. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Reading
 * ====================================================================== */

/* binsparse levels: kind 'd' (dense) or 's' (sparse) and rank */
typedef struct stack {
  int n;
  char kind[SPC_MAX_ORDER];
  int rank[SPC_MAX_ORDER];
} stack;

static const struct predef {
  const char *name, *kinds;
  int r0;    /* rank of the first level (the others: 1) */
  bool swap; /* swizzle [1, 0] */
} predefined[] = {{"COO", "s", 2, false},   {"COOR", "s", 2, false},
                  {"COOC", "s", 2, true},   {"CSR", "ds", 1, false},
                  {"CSC", "ds", 1, true},   {"DCSR", "ss", 1, false},
                  {"DCSC", "ss", 1, true},  {"DMAT", "dd", 1, false},
                  {"DMATR", "dd", 1, false}, {"DMATC", "dd", 1, true},
                  {"DVEC", "d", 1, false},  {"VEC", "s", 1, false}};

/* The level stack of a "format" value (a name or nested level dicts). */
static spc_status bsp_stack(h5c *c, const jv *fmt, stack *st, bool *swap,
                            bool *cplx, bool *iso) {
  memset(st, 0, sizeof *st);
  *swap = false;
  if (fmt && fmt->type == J_STR) {
    for (size_t i = 0; i < sizeof predefined / sizeof *predefined; i++) {
      const struct predef *d = &predefined[i];
      if (strcmp(d->name, fmt->s)) continue;
      st->n = (int)strlen(d->kinds);
      for (int k = 0; k < st->n; k++) {
        st->kind[k] = d->kinds[k];
        st->rank[k] = k ? 1 : d->r0;
      }
      *swap = d->swap;
      return SPC_OK;
    }
    return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                       "binsparse format '%s' is not supported", fmt->s);
  }
  for (const jv *cur = fmt; cur; cur = spc_cnt_jget(cur, "subformat")) {
    const char *lvl = spc_cnt_jgets(cur, "level");
    int64_t r = 0;
    if (cur->type != J_OBJ || !lvl) break;
    if (!strcmp(lvl, "element")) return SPC_OK;
    if (!strcmp(lvl, "complex")) *cplx = true;
    else if (!strcmp(lvl, "iso")) *iso = true;
    else if (!strcmp(lvl, "dense") || !strcmp(lvl, "sparse")) {
      if (!spc_cnt_jgeti(cur, "rank", &r) || r < 1 || r > SPC_MAX_ORDER || st->n == SPC_MAX_ORDER)
        return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                           "format: bad rank of a %s level", lvl);
      st->kind[st->n] = lvl[0];
      st->rank[st->n++] = (int)r;
    } else {
      return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                         "binsparse level '%s' is not supported", lvl);
    }
  }
  return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                     "format: expected a format name or level dicts ending in "
                     "an element level");
}

static spc_status shape_from(h5c *c, const jv *shape, const char *key, plan *p) {
  int n = spc_cnt_jlen(shape);
  if (n < 1 || n > SPC_MAX_ORDER)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, key,
                       "shape: expected 1 to %d dimensions", SPC_MAX_ORDER);
  p->order = n;
  int d = 0;
  for (const jv *k = shape->kid; k; k = k->next, d++) {
    if (k->type != J_NUM || !k->isint || k->i < 0)
      return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, key,
                         "shape: dimension %d is not a non-negative integer", d);
    p->dims[d] = k->i;
  }
  return SPC_OK;
}

/* Swizzle: the dimension of each level, a permutation. */
static spc_status swizzle_from(h5c *c, const jv *swz, bool swap, int *dimof, int order) {
  unsigned seen = 0;
  for (int l = 0; l < order; l++) dimof[l] = swap ? order - 1 - l : l;
  if (!swz) return SPC_OK;
  if (spc_cnt_jlen(swz) != order) goto bad;
  int l = 0;
  for (const jv *k = swz->kid; k; k = k->next, l++) {
    if (k->type != J_NUM || !k->isint || k->i < 0 || k->i >= order || (seen >> k->i & 1))
      goto bad;
    seen |= 1u << k->i;
    dimof[l] = (int)k->i;
  }
  return SPC_OK;
bad:
  return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                     "swizzle is not a permutation of the %d dimensions", order);
}

/* Our name for a plain level stack read from another tool. */
static const char *stack_name(const plan *p) {
  const spc_level_format *a = p->lv[0].fmt;
  bool all_c = true, all_d = true, coo = a == &spc_level_compressed;
  for (int l = 0; l < p->nlevels; l++) {
    all_c &= p->lv[l].fmt == &spc_level_compressed;
    all_d &= p->lv[l].fmt == &spc_level_dense;
    if (l) coo &= p->lv[l].fmt == &spc_level_singleton;
  }
  if (coo) return "coo";
  if (all_d) return "dense";
  if (p->order == 2 && a == &spc_level_dense && p->lv[1].fmt == &spc_level_compressed)
    return p->lv[0].dim == 0 ? "csr" : "csc";
  if (p->order == 2 && all_c) return p->lv[0].dim == 0 ? "dcsr" : "dcsc";
  return all_c ? "csf" : "levels";
}

static spc_status structure_from(h5c *c, const char *s, plan *p) {
  for (int y = 1; y < 4; y++)
    for (int k = 1; k < 3; k++)
      if (!strcmp(s, spc_cnt_structure_names[y][k])) {
        if (p->order != 2) break;
        p->sym = (spc_symmetry)y;
        p->tri = k;
        return SPC_OK;
      }
  return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                     "structure '%s' is not supported for order %d", s, p->order);
}

/* A fill value other than zero has no place in our model. */
static spc_status check_fill(h5c *c) {
  hid_t d;
  int64_t n;
  double v = 0;
  spc_status s = spc_cnt_ds_open(c, "fill_value", &d, &n);
  if (!s && (n != 1 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0 ||
             v != 0))
    s = spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "fill_value",
                    "fill values other than 0 are not supported");
  H5CLOSE(H5Dclose, d);
  return s;
}

/* The descriptor's "version" ("MAJOR.MINOR"): absent is taken as 0.1, the
 * version this reader follows; a later major version is refused. */
static spc_status version_check(h5c *c, const jv *v) {
  if (!v) return SPC_OK;
  const char *s = v->type == J_STR ? v->s : NULL;
  char *end = NULL;
  long major = -1, minor = -1;
  if (s && s[0] >= '0' && s[0] <= '9') {
    major = strtol(s, &end, 10);
    if (*end == '.' && end[1] >= '0' && end[1] <= '9') minor = strtol(end + 1, &end, 10);
  }
  if (minor < 0 || *end)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                       "version: expected a string \"MAJOR.MINOR\" such as \"0.1\"");
  if (major > 0)
    return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                       "binsparse version %s: this reader follows version 0.1", s);
  return SPC_OK;
}

spc_status spc_cnt_plan_from_bsp(h5c *c, const jv *b, plan *p) {
  stack st;
  bool swap, cplx = false, iso = false;
  int dimof[SPC_MAX_ORDER];
  const jv *fill = spc_cnt_jget(b, "fill");
  const char *vty = spc_cnt_jgets(spc_cnt_jget(b, "data_types"), "values"), *str = spc_cnt_jgets(b, "structure");
  spc_status s = version_check(c, spc_cnt_jget(b, "version"));
  if (!s) s = shape_from(c, spc_cnt_jget(b, "shape"), "binsparse", p);
  if (s || (s = bsp_stack(c, spc_cnt_jget(b, "format"), &st, &swap, &cplx, &iso))) return s;
  const jv *swz = spc_cnt_jget(spc_cnt_jget(b, "format"), "swizzle");
  if ((s = swizzle_from(c, swz ? swz : spc_cnt_jget(b, "swizzle"), swap, dimof, p->order))) return s;
  for (int k = 0, l = 0; k < st.n; k++) {
    if (l + st.rank[k] > p->order) break;
    for (int r = 0; r < st.rank[k]; r++, l++) {
      plevel *q = &p->lv[l];
      q->dim = dimof[l];
      q->size = p->dims[q->dim];
      q->fmt = st.kind[k] == 'd' ? &spc_level_dense
               : r == 0          ? &spc_level_compressed
                                 : &spc_level_singleton;
      spc_cnt_bsp_dset_names(q, l);
    }
    p->nlevels = l;
  }
  int nl = 0;
  for (int k = 0; k < st.n; k++) nl += st.rank[k];
  if (nl != p->order)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                       "format describes %d dimensions but shape has %d", nl, p->order);
  for (; vty && (!strncmp(vty, "iso[", 4) || !strncmp(vty, "complex[", 8));
       vty = strchr(vty, '[') + 1) {
    if (vty[0] == 'i') iso = true;
    else cplx = true;
  }
  p->iso = iso;
  p->cpairs = cplx;
  p->boolean = vty && !strcmp(vty, "bint8");
  p->have_nsv = spc_cnt_jgeti(b, "number_of_stored_values", &p->nsv);
  p->format = stack_name(p);
  p->bsp = true;
  if (str && (s = structure_from(c, str, p))) return s;
  if (fill && fill->type == J_BOOL && fill->b && (s = check_fill(c))) return s;
  return SPC_OK;
}

static spc_status symmetry_from(const char *s, spc_symmetry *y) {
  for (int k = 0; k < 4 && s; k++)
    if (!strcmp(s, spc_symmetry_name((spc_symmetry)k))) {
      *y = (spc_symmetry)k;
      return SPC_OK;
    }
  return SPC_ERR_INPUT;
}

/* Our own attribute, where it agrees with the binsparse levels: the
 * format name and pattern values. */
void spc_cnt_plan_overlay(plan *p, const jv *sp) {
  const jv *lv = spc_cnt_jget(sp, "levels"), *k;
  const char *name = spc_cnt_jgets(sp, "format"), *vt = spc_cnt_jgets(sp, "value_type");
  int l = 0;
  if (!name || spc_cnt_jlen(lv) != p->nlevels) return;
  for (k = lv->kid; k; k = k->next, l++) {
    const char *f = spc_cnt_jgets(k, "level_format");
    int64_t dim;
    if (!f || strcmp(f, p->lv[l].fmt->name) || !spc_cnt_jgeti(k, "dim", &dim) || dim != p->lv[l].dim)
      return;
  }
  const char *in = spc_cnt_format_intern(name);
  if (in) p->format = in;
  p->pattern = vt && !strcmp(vt, "pattern");
}

/* Formats binsparse cannot describe: everything from our attribute. */
spc_status spc_cnt_plan_from_spconv(h5c *c, const jv *sp, plan *p) {
  const jv *lvs = spc_cnt_jget(sp, "levels");
  const char *name = spc_cnt_jgets(sp, "format"), *vt = spc_cnt_jgets(sp, "value_type");
  spc_status s = shape_from(c, spc_cnt_jget(sp, "shape"), "spconv", p);
  if (s) return s;
  p->nlevels = spc_cnt_jlen(lvs);
  if (p->nlevels < 1 || p->nlevels > SPC_MAX_ORDER || !name || !vt)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                       "expected format, value_type and 1 to %d levels", SPC_MAX_ORDER);
  int l = 0;
  for (const jv *k = lvs->kid; k; k = k->next, l++) {
    plevel *q = &p->lv[l];
    const char *f = spc_cnt_jgets(k, "level_format");
    int64_t dim, size;
    const jv *arrs = spc_cnt_jget(k, "arrays");
    if (!f || !spc_cnt_jgeti(k, "dim", &dim) || !spc_cnt_jgeti(k, "size", &size) || dim < 0 ||
        dim >= p->order || size < 0 || !arrs)
      return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                         "level %d: expected level_format, dim, size, arrays", l);
    if (!(q->fmt = spc_cnt_level_format_find(f)))
      return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "spconv",
                         "level format '%s' (level %d) is not known to this build", f, l);
    q->dim = (int)dim;
    q->size = size;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && q->fmt->arrays[i]; i++) {
      const char *ds = spc_cnt_jgets(arrs, q->fmt->arrays[i]);
      bool implied = ds && !ds[0] && !l && q->fmt == &spc_level_compressed && !i;
      if (!ds || (!implied && !spc_cnt_dset_name_ok(ds)))
        return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                           "level %d: no valid dataset for array %s", l, q->fmt->arrays[i]);
      snprintf(q->dset[i], DSET_MAX, "%s", ds);
    }
  }
  if (symmetry_from(spc_cnt_jgets(sp, "symmetry"), &p->sym))
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv", "bad symmetry");
  if (p->sym != SPC_GENERAL && p->order != 2)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv", "symmetry needs order 2");
  p->format = spc_cnt_format_intern(name);
  if (!p->format) p->format = "levels";
  p->pattern = !strcmp(vt, "pattern");
  return SPC_OK;
}
