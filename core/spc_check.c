/* spc_check.c -- structural validator: pos monotone and consistent, crd in
 * range, order and uniqueness where a level's properties promise them. */
#include "spc_impl.h"

static spc_status bad(spc_error *e, int l, const char *what, int64_t at) {
  return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "level %d: %s at position %lld",
                 l, what, (long long)at);
}

static spc_status check_segment(const spc_level *lv, const spc_array *crd,
                                int l, int64_t b, int64_t e, spc_error *err) {
  for (int64_t q = b; q < e; q++) {
    int64_t c = spc_arr_get(crd, q);
    if (c < 0 || c >= lv->size) return bad(err, l, "coordinate out of range", q);
    if (q > b && (lv->props & SPC_LP_ORDERED)) {
      int64_t prev = spc_arr_get(crd, q - 1);
      if (prev > c) return bad(err, l, "coordinates not ordered", q);
      if (prev == c && (lv->props & SPC_LP_UNIQUE))
        return bad(err, l, "repeated coordinate", q);
    }
  }
  return SPC_OK;
}

spc_status spc_tensor_check(const spc_tensor *t, spc_error *err) {
  int64_t np = 1; /* positions in the parent level */
  if (t->ext) { /* reading it back runs every bounds check of the IR */
    spc_tensor *c = NULL;
    spc_status s = t->ext->to_coo(t, &c, err);
    spc_tensor_free(&c);
    return s;
  }
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level *lv = &t->lv[l];
    if (lv->dim < 0 || lv->dim >= t->order)
      return spc_err(err, SPC_ERR_INPUT, NULL, 0, 0, "level %d: bad dimension", l);
    const spc_array *pos = spc_level_array_c(lv, "pos");
    const spc_array *crd = spc_level_array_c(lv, "crd");
    if (lv->fmt == &spc_level_compressed) {
      if (!pos || !crd || pos->len != np + 1)
        return spc_err(err, SPC_ERR_INPUT, NULL, 0, 0,
                       "level %d: pos has %lld entries, expected %lld", l,
                       pos ? (long long)pos->len : 0LL, (long long)(np + 1));
      if (spc_arr_get(pos, 0) != 0) return bad(err, l, "pos does not start at 0", 0);
      for (int64_t p = 0; p < np; p++) {
        int64_t b = spc_arr_get(pos, p), e = spc_arr_get(pos, p + 1);
        if (e < b) return bad(err, l, "pos decreases", p + 1);
        if (e > crd->len) return bad(err, l, "pos past the end of crd", p + 1);
        spc_status s = check_segment(lv, crd, l, b, e, err);
        if (s) return s;
      }
      if (spc_arr_get(pos, np) != crd->len)
        return bad(err, l, "pos does not end at the length of crd", np);
    } else if (lv->fmt == &spc_level_singleton) {
      if (!crd || crd->len != np)
        return spc_err(err, SPC_ERR_INPUT, NULL, 0, 0,
                       "level %d: crd length differs from parent positions", l);
      spc_status s = check_segment(lv, crd, l, 0, 0, err);
      for (int64_t q = 0; q < np && !s; q++) {
        int64_t c = spc_arr_get(crd, q);
        if (c < 0 || c >= lv->size) s = bad(err, l, "coordinate out of range", q);
      }
      if (s) return s;
    }
    np = lv->fmt->npos(lv, np);
  }
  if (t->vt != SPC_PATTERN && t->nval != np)
    return spc_err(err, SPC_ERR_INPUT, NULL, 0, 0,
                   "%lld values for %lld stored components", (long long)t->nval,
                   (long long)np);
  return SPC_OK;
}
