/* cnt_finish.c -- the read options applied to a tensor just read from a
 * container: value cast and symmetric expansion. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cnt_internal.h"
#include <math.h>
#include <stdio.h>

/* One value as the widest integer or float it came from. */
typedef struct num { int kind; int64_t i; uint64_t u; double d; } num; /* 0 i, 1 u, 2 d */

static num num_get(spc_vtype vt, const void *v, int64_t k) {
  num x = {0, 1, 0, 0};
  switch (vt) {
  case SPC_I64: x.i = ((const int64_t *)v)[k]; break;
  case SPC_U64: x.kind = 1; x.u = ((const uint64_t *)v)[k]; break;
  case SPC_F32: x.kind = 2; x.d = ((const float *)v)[k]; break;
  case SPC_F64: x.kind = 2; x.d = ((const double *)v)[k]; break;
  default: break; /* pattern: 1 */
  }
  return x;
}

static double num_double(num x) {
  return x.kind == 0 ? (double)x.i : x.kind == 1 ? (double)x.u : x.d;
}

/* Store x as value k of type vt; -1 when it does not fit, -2 when a float
 * is not an integer. */
static int num_put(spc_vtype vt, void *v, int64_t k, num x) {
  switch (vt) {
  case SPC_I64:
    if (x.kind == 1 && x.u > (uint64_t)INT64_MAX) return -1;
    if (x.kind == 2 && x.d != trunc(x.d)) return -2;
    if (x.kind == 2 && !(x.d >= -0x1p63 && x.d < 0x1p63)) return -1;
    ((int64_t *)v)[k] = x.kind == 0 ? x.i : x.kind == 1 ? (int64_t)x.u
                                                        : (int64_t)x.d;
    return 0;
  case SPC_U64:
    if ((x.kind == 0 && x.i < 0) || (x.kind == 2 && !(x.d >= 0 && x.d < 0x1p64)))
      return -1;
    if (x.kind == 2 && x.d != trunc(x.d)) return -2;
    ((uint64_t *)v)[k] = x.kind == 0 ? (uint64_t)x.i : x.kind == 1 ? x.u
                                                         : (uint64_t)x.d;
    return 0;
  case SPC_F32: ((float *)v)[k] = (float)num_double(x); return 0;
  case SPC_F64: ((double *)v)[k] = num_double(x); return 0;
  case SPC_C128:
    ((double *)v)[2 * k] = num_double(x);
    ((double *)v)[2 * k + 1] = 0;
    return 0;
  default: return 0;
  }
}

bool spc_cnt_all_dense(const spc_tensor *t) {
  for (int l = 0; l < t->nlevels; l++)
    if (t->lv[l].fmt != &spc_level_dense) return false;
  return true;
}

/* Cast t's values to type `to` in place (a new value array). */
static spc_status cast_values(spc_tensor **tp, spc_vtype to, const char *path,
                              spc_error *e) {
  spc_tensor *t = *tp;
  if (to < SPC_PATTERN || to > SPC_C128)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "unknown value type %d", (int)to);
  if (to == SPC_PATTERN) {
    if (spc_cnt_all_dense(t)) { /* a dense pattern would turn zeros into ones */
      spc_tensor *c = NULL;
      spc_status s = spc_tensor_to_coo(t, 1, &c, e);
      if (s) return s;
      spc_tensor_free(tp);
      *tp = t = c;
    }
    if (t->val_owned) spc_free(t->val);
    t->val = NULL;
    t->val_owned = false;
    t->vt = SPC_PATTERN;
    return SPC_OK;
  }
  if (t->vt == SPC_C128)
    return spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, "values",
                       "complex values cannot be read as %s", spc_vtype_name(to));
  int64_t n = t->vt == SPC_PATTERN ? spc_tensor_nstored(t) : t->nval;
  void *dst = spc_malloc_n(n, spc_vtype_size(to));
  if (!dst) return spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
  for (int64_t k = 0; k < n; k++) {
    num x = num_get(t->vt, t->val, k);
    int r = num_put(to, dst, k, x);
    if (r) {
      spc_free(dst);
      return spc_cnt_err(e, r == -1 ? SPC_ERR_OVERFLOW : SPC_ERR_INPUT, path,
                         "values", "value %lld (%g) %s %s", (long long)k,
                         num_double(x), r == -1 ? "does not fit" : "is not an integer, as",
                         spc_vtype_name(to));
    }
  }
  if (t->val_owned) spc_free(t->val);
  t->val = dst;
  t->val_owned = true;
  t->nval = n;
  t->vt = to;
  return SPC_OK;
}

spc_status spc_cnt_finish(spc_tensor **tp, const char *path,
                          const spc_read_opts *o, spc_error *e) {
  spc_status s = SPC_OK;
  if (!o) return SPC_OK;
  if (o->vtype != SPC_VTYPE_AUTO && o->vtype != (*tp)->vt &&
      (s = cast_values(tp, o->vtype, path, e)))
    return s;
  if (o->expand && (*tp)->sym != SPC_GENERAL) {
    spc_tensor *x = NULL;
    if ((s = spc_tensor_expand(*tp, &x, e))) {
      if (e) snprintf(e->file, sizeof e->file, "%s", path);
      return s;
    }
    spc_tensor_free(tp);
    *tp = x;
  }
  return SPC_OK;
}
