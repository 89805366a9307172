/* bsp_plan.c -- the plan of a binsparse container: levels and the dataset
 * holding each level array; from a tensor, and as JSON descriptors. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ======================================================================
 * The plan: levels, and the dataset holding each level array
 * ====================================================================== */

/* Formats made of plain level stacks, no coordinate remapping: the ones
 * binsparse may describe.  "levels" names other such stacks read back. */
static const char *const plain_formats[] = {"coo", "csr",  "csc",    "dcsr",
                                            "dcsc", "csf", "dense", "levels"};

static const spc_level_format *const level_formats[] = {
    &spc_level_dense, &spc_level_compressed, &spc_level_singleton};

const spc_level_format *spc_cnt_level_format_find(const char *name) {
  for (size_t i = 0; i < sizeof level_formats / sizeof *level_formats; i++)
    if (!strcmp(level_formats[i]->name, name)) return level_formats[i];
  return NULL;
}

/* A format name that lives as long as the process (tensors hold static
 * names): the built-in names, or a copy kept in a small pool. */
const char *spc_cnt_format_intern(const char *name) {
  static char pool[32][32];
  static int n;
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* readers of .bsp.h5 in several threads */
  for (size_t i = 0; i < sizeof plain_formats / sizeof *plain_formats; i++)
    if (!strcmp(plain_formats[i], name)) return plain_formats[i];
  const char *r = NULL;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n && !r; i++)
    if (!strcmp(pool[i], name)) r = pool[i];
  if (!r && n < 32 && strlen(name) < sizeof pool[0]) {
    snprintf(pool[n], sizeof pool[n], "%s", name);
    r = pool[n++];
  }
  pthread_mutex_unlock(&mu);
  return r;
}

int spc_cnt_array_index(const spc_level_format *f, const char *name) {
  for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++)
    if (!strcmp(f->arrays[i], name)) return i;
  return -1;
}

/* Binsparse dataset names of level l's arrays: pointers_to_l (none at the
 * root) and indices_l. */
void spc_cnt_bsp_dset_names(plevel *q, int l) {
  int pos = spc_cnt_array_index(q->fmt, "pos"), crd = spc_cnt_array_index(q->fmt, "crd");
  memset(q->dset, 0, sizeof q->dset);
  if (pos >= 0 && l) snprintf(q->dset[pos], DSET_MAX, "pointers_to_%d", l);
  if (crd >= 0) snprintf(q->dset[crd], DSET_MAX, "indices_%d", l);
}

/* Binsparse names for t's level arrays; false when binsparse cannot
 * describe t. */
static bool plan_bsp_names(const spc_tensor *t, plan *p) {
  bool plain = false;
  unsigned seen = 0;
  for (size_t i = 0; i < sizeof plain_formats / sizeof *plain_formats; i++)
    plain |= !strcmp(t->format, plain_formats[i]);
  if (!plain || t->nlevels != t->order) return false;
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level *lv = &t->lv[l];
    plevel *q = &p->lv[l];
    if (lv->dim < 0 || lv->dim >= t->order || (seen >> lv->dim & 1) ||
        lv->size != t->dims[lv->dim])
      return false;
    seen |= 1u << lv->dim;
    if (lv->fmt == &spc_level_singleton && (!l || t->lv[l - 1].fmt == &spc_level_dense))
      return false;
    if (lv->fmt != &spc_level_dense && lv->fmt != &spc_level_compressed &&
        lv->fmt != &spc_level_singleton)
      return false;
    spc_cnt_bsp_dset_names(q, l);
  }
  return true;
}

spc_status spc_cnt_plan_from_tensor(const spc_tensor *t, plan *p) {
  memset(p, 0, sizeof *p);
  p->order = t->order;
  p->nlevels = t->nlevels;
  memcpy(p->dims, t->dims, sizeof p->dims);
  p->format = t->format;
  p->vt = t->vt;
  p->boolean = spc_tensor_boolean(t);
  p->sym = t->sym;
  for (int l = 0; l < t->nlevels; l++) {
    p->lv[l].fmt = t->lv[l].fmt;
    p->lv[l].dim = t->lv[l].dim;
    p->lv[l].size = t->lv[l].size;
  }
  p->bsp = plan_bsp_names(t, p);
  if (p->bsp) return SPC_OK;
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level_format *f = t->lv[l].fmt;
    memset(p->lv[l].dset, 0, sizeof p->lv[l].dset);
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++)
      snprintf(p->lv[l].dset[i], DSET_MAX, "level%d_%s", l, f->arrays[i]);
  }
  return SPC_OK;
}

/* The spec's name for an order-2 layout, or NULL for a custom format. */
static const char *bsp_predefined(const plan *p) {
  if (p->order != 2) return NULL;
  const spc_level_format *a = p->lv[0].fmt, *b = p->lv[1].fmt;
  bool rows = p->lv[0].dim == 0;
  if (a == &spc_level_compressed && b == &spc_level_singleton) return rows ? "COO" : "COOC";
  if (a == &spc_level_dense && b == &spc_level_compressed) return rows ? "CSR" : "CSC";
  if (a == &spc_level_compressed && b == &spc_level_compressed) return rows ? "DCSR" : "DCSC";
  return NULL;
}

static const char *vt_bsp_name(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return "int64";
  case SPC_U64: return "uint64";
  case SPC_F32: return "float32";
  case SPC_F64: return "float64";
  case SPC_C128: return "complex[float64]";
  default: return "bint8";
  }
}

const char *const spc_cnt_structure_names[4][3] = {
    {NULL, NULL, NULL},
    {NULL, "symmetric_lower", "symmetric_upper"},
    {NULL, "skew_symmetric_lower", "skew_symmetric_upper"},
    {NULL, "hermitian_lower", "hermitian_upper"}};

/* The "format" value of a custom binsparse format. */
static void jb_custom_format(jb *b, const plan *p) {
  int open = 0;
  bool ident = true;
  for (int l = 0; l < p->nlevels; l++) ident &= p->lv[l].dim == l;
  for (int l = 0; l < p->nlevels;) {
    int r = 1;
    spc_cnt_jb_add(b, "{");
    if (!l && !ident) {
      spc_cnt_jb_add(b, "\"swizzle\": [");
      for (int k = 0; k < p->nlevels; k++) spc_cnt_jb_add(b, "%s%d", k ? ", " : "", p->lv[k].dim);
      spc_cnt_jb_add(b, "], ");
    }
    if (p->lv[l].fmt == &spc_level_dense) {
      spc_cnt_jb_add(b, "\"level\": \"dense\", ");
    } else {
      while (l + r < p->nlevels && p->lv[l + r].fmt == &spc_level_singleton) r++;
      spc_cnt_jb_add(b, "\"level\": \"sparse\", ");
    }
    spc_cnt_jb_add(b, "\"rank\": %d, \"subformat\": ", r);
    l += r;
    open++;
  }
  spc_cnt_jb_add(b, "{\"level\": \"element\"}");
  while (open--) spc_cnt_jb_add(b, "}");
}

static void jb_shape(jb *b, const plan *p) {
  spc_cnt_jb_add(b, "[");
  for (int d = 0; d < p->order; d++) spc_cnt_jb_add(b, "%s%lld", d ? ", " : "", (long long)p->dims[d]);
  spc_cnt_jb_add(b, "]");
}

/* Index width of each written array, from the tensor. */
static const char *width_name(const spc_tensor *t, int l, int i) {
  const spc_array *a = spc_level_array_c(&t->lv[l], t->lv[l].fmt->arrays[i]);
  return a && a->type == SPC_IDX32 ? "int32" : "int64";
}

void spc_cnt_jb_binsparse(jb *b, const plan *p, const spc_tensor *t, int64_t nsv) {
  const char *pre = bsp_predefined(p);
  spc_cnt_jb_add(b, "{\"binsparse\": {\"version\": \"" BSP_VERSION "\", \"format\": ");
  if (pre) spc_cnt_jb_str(b, pre);
  else jb_custom_format(b, p);
  spc_cnt_jb_add(b, ", \"shape\": ");
  jb_shape(b, p);
  spc_cnt_jb_add(b, ", \"number_of_stored_values\": %lld, \"data_types\": {", (long long)nsv);
  for (int l = 0; l < p->nlevels; l++)
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS; i++)
      if (p->lv[l].dset[i][0]) {
        spc_cnt_jb_str(b, p->lv[l].dset[i]);
        spc_cnt_jb_add(b, ": \"%s\", ", width_name(t, l, i));
      }
  spc_cnt_jb_add(b, "\"values\": \"%s\"}", p->boolean ? "bint8" : vt_bsp_name(p->vt));
  if (p->sym != SPC_GENERAL) spc_cnt_jb_add(b, ", \"structure\": \"%s\"", spc_cnt_structure_names[p->sym][p->tri]);
  spc_cnt_jb_add(b, "}}");
}

void spc_cnt_jb_spconv(jb *b, const plan *p, int64_t nsv) {
  spc_cnt_jb_add(b, "{\"format\": ");
  spc_cnt_jb_str(b, p->format);
  spc_cnt_jb_add(b, ", \"version\": \"" SPCONV_VERSION "\", \"order\": %d, \"shape\": ", p->order);
  jb_shape(b, p);
  spc_cnt_jb_add(b, ", \"value_type\": \"%s\", \"symmetry\": \"%s\", "
            "\"number_of_stored_values\": %lld, \"levels\": [",
         spc_vtype_name(p->vt), spc_symmetry_name(p->sym), (long long)nsv);
  for (int l = 0; l < p->nlevels; l++) {
    const spc_level_format *f = p->lv[l].fmt;
    spc_cnt_jb_add(b, "%s{\"level_format\": ", l ? ", " : "");
    spc_cnt_jb_str(b, f->name);
    spc_cnt_jb_add(b, ", \"dim\": %d, \"size\": %lld, \"arrays\": {", p->lv[l].dim,
           (long long)p->lv[l].size);
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++) {
      spc_cnt_jb_add(b, "%s", i ? ", " : "");
      spc_cnt_jb_str(b, f->arrays[i]);
      spc_cnt_jb_add(b, ": ");
      spc_cnt_jb_str(b, p->lv[l].dset[i]);
    }
    spc_cnt_jb_add(b, "}}");
  }
  spc_cnt_jb_add(b, "]}");
}
