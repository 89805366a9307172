/* spc_iter.c -- iterate the stored components of any tensor through its
 * levels' read-side functions (bounds + access): a depth-first walk of the
 * coordinate hierarchy. */
#include "spc_impl.h"

struct spc_iter {
  const spc_tensor *t;
  spc_tensor *own; /* a COO copy of a tensor whose levels are YAML specs */
  bool started;
  bool empty; /* a dimension of size 0: no component can exist */
  int64_t q[SPC_MAX_ORDER]; /* current position per level */
  int64_t e[SPC_MAX_ORDER]; /* end of the current segment per level */
};

spc_status spc_iter_create(const spc_tensor *t, spc_iter **it, spc_error *e) {
  *it = NULL;
  if (!t || t->nlevels < 1)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "tensor has no levels");
  spc_iter *i = spc_calloc(1, sizeof *i);
  if (!i) return SPC_NOMEM(e);
  i->t = t;
  /* (a dense level over an empty one would otherwise walk every one of its
   * positions: a 0 x 10^12 dense matrix, 10^12 empty columns) */
  for (int d = 0; d < t->order; d++) i->empty |= t->dims[d] == 0;
  if (i->empty) {
    *it = i;
    return SPC_OK;
  }
  if (t->ext && !(t->ext->walk && t->ext->walk(t))) {
    /* read through the spec's level functions (which skip padding), once */
    spc_status s = t->ext->to_coo(t, &i->own, e);
    if (s) {
      spc_free(i);
      return s;
    }
    i->t = i->own;
  }
  *it = i;
  return SPC_OK;
}

void spc_iter_free(spc_iter **it) {
  if (!it || !*it) return;
  spc_tensor_free(&(*it)->own);
  spc_free(*it);
  *it = NULL;
}

int spc_iter_next(spc_iter *it, int64_t *coords, const void **val) {
  const spc_tensor *t = it->t;
  const int L = t->nlevels;
  int l;
  if (it->empty) return 0;
  if (!it->started) {
    it->started = true;
    l = 0;
    t->lv[0].fmt->bounds(&t->lv[0], 0, &it->q[0], &it->e[0]);
  } else {
    l = L - 1;
    if (it->q[l] >= it->e[l]) return 0; /* already finished */
    it->q[l]++;
  }
  for (;;) {
    if (it->q[l] >= it->e[l]) {
      if (l == 0) {
        it->q[L - 1] = it->e[L - 1] = 0; /* stay finished */
        return 0;
      }
      it->q[--l]++;
      continue;
    }
    if (l == L - 1) break;
    t->lv[l + 1].fmt->bounds(&t->lv[l + 1], it->q[l], &it->q[l + 1],
                             &it->e[l + 1]);
    l++;
  }
  for (l = 0; l < L; l++) {
    const spc_level *lv = &t->lv[l];
    coords[lv->dim] = lv->fmt->access(lv, l ? it->q[l - 1] : 0, it->q[l]);
  }
  if (val)
    *val = t->vt == SPC_PATTERN
               ? NULL
               : (const char *)t->val + it->q[L - 1] * (int64_t)spc_vtype_size(t->vt);
  return 1;
}
