/* spc_tensor.c -- tensor objects: create, free, accessors, shells for COO
 * and dense.  Ownership: a tensor owns every array whose `owned` flag is
 * set and its value array when val_owned; spc_tensor_free releases them. */
#include "spc_impl.h"
#include <string.h>

spc_tensor *spc_tensor_alloc(int order, const int64_t *dims, spc_vtype vt) {
  if (order < 0 || order > SPC_MAX_ORDER) return NULL;
  spc_tensor *t = spc_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->order = order;
  for (int d = 0; d < order; d++) t->dims[d] = dims[d];
  t->vt = vt;
  t->format = "none";
  return t;
}

void spc_tensor_free(spc_tensor **tp) {
  if (!tp || !*tp) return;
  spc_tensor *t = *tp;
  for (int l = 0; l < t->nlevels; l++)
    for (int a = 0; a < t->lv[l].narr; a++)
      if (t->lv[l].arr[a].owned) spc_free(t->lv[l].arr[a].data);
  if (t->val_owned) spc_free(t->val);
  if (t->ext && t->ext->destroy) t->ext->destroy(t);
  spc_free(t);
  *tp = NULL;
}

spc_status spc_level_add_array(spc_level *lv, const char *name, spc_itype ty,
                               int64_t len, spc_error *e) {
  if (lv->narr >= SPC_LEVEL_MAX_ARRAYS)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "too many level arrays");
  void *p = spc_malloc_n(len, ty == SPC_IDX32 ? 4 : 8);
  if (!p) return SPC_NOMEM(e);
  lv->arr[lv->narr++] =
      (spc_array){.name = name, .type = ty, .len = len, .data = p, .owned = 1};
  return SPC_OK;
}

spc_array *spc_level_array(spc_level *lv, const char *name) {
  for (int a = 0; a < lv->narr; a++)
    if (!strcmp(lv->arr[a].name, name)) return &lv->arr[a];
  return NULL;
}

const spc_array *spc_level_array_c(const spc_level *lv, const char *name) {
  return spc_level_array((spc_level *)lv, name);
}

static spc_status alloc_values(spc_tensor *t, int64_t n, spc_error *e) {
  t->nval = n;
  if (t->vt == SPC_PATTERN) return SPC_OK;
  t->val = spc_malloc_n(n, spc_vtype_size(t->vt));
  if (!t->val) return SPC_NOMEM(e);
  t->val_owned = 1;
  return SPC_OK;
}

static spc_status check_shape(int order, const int64_t *dims, spc_error *e) {
  if (order < 1 || order > SPC_MAX_ORDER)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                   "tensor order %d is outside 1..%d", order, SPC_MAX_ORDER);
  for (int d = 0; d < order; d++)
    if (dims[d] < 0)
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "dimension %d is negative", d);
  return SPC_OK;
}

spc_status spc_coo_alloc(int order, const int64_t *dims, int64_t nnz,
                         spc_vtype vt, spc_tensor **out, spc_error *e) {
  *out = NULL;
  spc_status s = check_shape(order, dims, e);
  if (s) return s;
  spc_tensor *t = spc_tensor_alloc(order, dims, vt);
  if (!t) return SPC_NOMEM(e);
  t->format = "coo";
  t->nlevels = order;
  for (int l = 0; l < order && !s; l++) {
    spc_level *lv = &t->lv[l];
    lv->dim = l;
    lv->size = dims[l];
    lv->fmt = l == 0 ? &spc_level_compressed : &spc_level_singleton;
    lv->props = l == 0 ? SPC_LP_COMPACT : SPC_LP_COMPACT | SPC_LP_BRANCHLESS;
    if (l == 0 && !(s = spc_level_add_array(lv, "pos", spc_itype_for(nnz), 2, e))) {
      spc_arr_set(&lv->arr[0], 0, 0);
      spc_arr_set(&lv->arr[0], 1, nnz);
    }
    if (!s) s = spc_level_add_array(lv, "crd", spc_itype_for(dims[l] - 1), nnz, e);
  }
  if (!s) s = alloc_values(t, nnz, e);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}

spc_status spc_dense_alloc(int order, const int64_t *dims, const int *mode,
                           spc_vtype vt, spc_tensor **out, spc_error *e) {
  *out = NULL;
  spc_status s = check_shape(order, dims, e);
  if (s) return s;
  int64_t n = 1;
  for (int d = 0; d < order; d++) {
    if (dims[d] && n > INT64_MAX / dims[d])
      return spc_err(e, SPC_ERR_OVERFLOW, NULL, 0, 0,
                     "dense tensor with these dimensions has more than 2^63 "
                     "entries");
    n *= dims[d];
  }
  spc_tensor *t = spc_tensor_alloc(order, dims, vt);
  if (!t) return SPC_NOMEM(e);
  t->format = "dense";
  t->nlevels = order;
  for (int l = 0; l < order; l++) {
    t->lv[l].fmt = &spc_level_dense;
    t->lv[l].props = spc_level_dense.props;
    t->lv[l].dim = mode ? mode[l] : l;
    t->lv[l].size = dims[t->lv[l].dim];
  }
  if (vt == SPC_PATTERN) t->vt = SPC_F64; /* dense storage needs values */
  s = alloc_values(t, n, e);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}

void spc_coo_truncate(spc_tensor *t, int64_t nnz) {
  spc_arr_set(&t->lv[0].arr[0], 1, nnz);
  for (int l = 0; l < t->nlevels; l++) {
    spc_array *c = spc_level_array(&t->lv[l], "crd");
    if (c) c->len = nnz;
  }
  t->nval = nnz;
}

spc_status spc_tensor_create_coo(int order, const int64_t *dims, int64_t nnz,
                                 spc_vtype vt, spc_tensor **out,
                                 spc_error *e) {
  if (out) *out = NULL;
  if (!out || !dims || nnz < 0)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "invalid arguments");
  return spc_coo_alloc(order, dims, nnz, vt, out, e);
}

/* ---- accessors --------------------------------------------------------- */

int spc_tensor_order(const spc_tensor *t) { return t->order; }
int64_t spc_tensor_dim(const spc_tensor *t, int d) {
  return (d >= 0 && d < t->order) ? t->dims[d] : -1;
}
const char *spc_tensor_format(const spc_tensor *t) { return t->format; }
spc_vtype spc_tensor_vtype(const spc_tensor *t) { return t->vt; }
spc_symmetry spc_tensor_symmetry(const spc_tensor *t) { return t->sym; }
int spc_tensor_boolean(const spc_tensor *t) { return t->boolean && t->vt == SPC_I64; }
int spc_tensor_nlevels(const spc_tensor *t) { return t->nlevels; }

int64_t spc_tensor_nstored(const spc_tensor *t) {
  if (t->ext) return t->nval;
  int64_t n = 1;
  for (int l = 0; l < t->nlevels; l++) n = t->lv[l].fmt->npos(&t->lv[l], n);
  return n;
}

int64_t spc_tensor_bytes(const spc_tensor *t) {
  int64_t b = (int64_t)spc_vtype_size(t->vt) * t->nval;
  for (int l = 0; l < t->nlevels; l++)
    for (int a = 0; a < t->lv[l].narr; a++)
      b += t->lv[l].arr[a].len * (t->lv[l].arr[a].type == SPC_IDX32 ? 4 : 8);
  return b;
}

const char *spc_tensor_level_format(const spc_tensor *t, int l) {
  if (l < 0 || l >= t->nlevels) return NULL;
  return t->ext ? t->ext->level_name(t, l) : t->lv[l].fmt->name;
}

int spc_tensor_level_narrays(const spc_tensor *t, int l) {
  return (l >= 0 && l < t->nlevels) ? t->lv[l].narr : 0;
}

const char *spc_tensor_level_array_name(const spc_tensor *t, int l, int k) {
  if (l < 0 || l >= t->nlevels || k < 0 || k >= t->lv[l].narr) return NULL;
  return t->lv[l].arr[k].name;
}

int spc_tensor_level_dim(const spc_tensor *t, int l) {
  return (l >= 0 && l < t->nlevels) ? t->lv[l].dim : -1;
}

spc_status spc_tensor_level_array(const spc_tensor *t, int l, const char *name,
                                  const void **data, spc_itype *type,
                                  int64_t *len) {
  if (l < 0 || l >= t->nlevels)
    return spc_err(NULL, SPC_ERR_ARG, NULL, 0, 0, "no level");
  const spc_array *a = spc_level_array_c(&t->lv[l], name);
  if (!a) return SPC_ERR_ARG;
  if (data) *data = a->data;
  if (type) *type = a->type;
  if (len) *len = a->len;
  return SPC_OK;
}

void *spc_tensor_level_array_mut(spc_tensor *t, int l, const char *name) {
  if (l < 0 || l >= t->nlevels) return NULL;
  spc_array *a = spc_level_array(&t->lv[l], name);
  return a ? a->data : NULL;
}

const void *spc_tensor_values(const spc_tensor *t, int64_t *n) {
  if (n) *n = t->nval;
  return t->val;
}

void *spc_tensor_values_mut(spc_tensor *t) { return t->val; }
