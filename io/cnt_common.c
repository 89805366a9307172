/* cnt_common.c -- helpers both binary containers share: error records
 * with a key, and validation of a tensor assembled from a file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cnt_internal.h"
#include <stdio.h>

/* ======================================================================
 * Shared helpers
 * ====================================================================== */

spc_status spc_cnt_err(spc_error *e, spc_status code, const char *path,
                       const char *key, const char *fmt, ...) {
  char msg[sizeof(((spc_error *)0)->msg)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  spc_err(e, code, path, 0, 0, "%s", msg);
  if (e) snprintf(e->key, sizeof e->key, "%s", key ? key : "");
  return code;
}

#define LP_ORDER (SPC_LP_ORDERED | SPC_LP_UNIQUE | SPC_LP_LOCATE)

/* Positions per level (np[l]: parents of level l; np[nlevels]: leaves),
 * checking array presence, lengths and int64 overflow before anything
 * indexes an array with them. */
static spc_status walk_levels(const spc_tensor *t, int64_t *np,
                              const char *path, spc_error *e) {
  int64_t n = 1;
  if (t->nlevels < 1 || t->nlevels > SPC_MAX_ORDER)
    return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL, "%d levels", t->nlevels);
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level *lv = &t->lv[l];
    const spc_array *pos = spc_level_array_c(lv, "pos");
    const spc_array *crd = spc_level_array_c(lv, "crd");
    np[l] = n;
    if (!lv->fmt)
      return spc_cnt_err(e, SPC_ERR_INTERNAL, path, NULL, "level %d: no format", l);
    if (lv->dim < 0 || lv->dim >= t->order || lv->size < 0)
      return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                         "level %d: dimension %d / size %lld out of range", l,
                         lv->dim, (long long)lv->size);
    if (lv->fmt == &spc_level_dense) {
      if (lv->size && n > INT64_MAX / lv->size)
        return spc_cnt_err(e, SPC_ERR_OVERFLOW, path, NULL,
                           "level %d: more than 2^63 positions", l);
      n *= lv->size;
    } else if (lv->fmt == &spc_level_compressed) {
      if (!pos || !crd || pos->len != n + 1)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: pos has %lld entries, expected %lld", l,
                           pos ? (long long)pos->len : 0LL, (long long)n + 1);
      n = spc_arr_get(pos, n);
      if (n != crd->len)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: pos ends at %lld but crd has %lld "
                           "entries", l, (long long)n, (long long)crd->len);
    } else if (lv->fmt == &spc_level_singleton) {
      if (!crd || crd->len != n)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: crd has %lld entries, expected %lld", l,
                           crd ? (long long)crd->len : 0LL, (long long)n);
    } else {
      n = lv->fmt->npos(lv, n);
    }
  }
  np[t->nlevels] = n;
  return SPC_OK;
}

/* Order properties of a compressed level r and the singletons below it
 * (levels r..end-1), from the data: level k is ORDERED when, among
 * neighbours with equal coordinates at levels r..k-1, coordinates at k do
 * not decrease (and every level above is ORDERED); UNIQUE when they
 * strictly increase. */
static void chain_props(spc_tensor *t, int r, int end, int64_t np) {
  bool ord[SPC_MAX_ORDER], unq[SPC_MAX_ORDER];
  const spc_array *crd[SPC_MAX_ORDER];
  const spc_array *pos = spc_level_array_c(&t->lv[r], "pos");
  for (int k = r; k < end; k++) {
    ord[k] = unq[k] = true;
    crd[k] = spc_level_array_c(&t->lv[k], "crd");
  }
  for (int64_t p = 0; p < np; p++) {
    int64_t b = spc_arr_get(pos, p), e = spc_arr_get(pos, p + 1);
    for (int64_t q = b + 1; q < e; q++) {
      int k = r;
      int64_t x = 0, y = 0;
      while (k < end && (x = spc_arr_get(crd[k], q - 1)) ==
                            (y = spc_arr_get(crd[k], q)))
        unq[k++] = false;
      if (k < end && x > y) ord[k] = unq[k] = false;
    }
  }
  bool up = true;
  for (int k = r; k < end; k++) {
    spc_level *lv = &t->lv[k];
    up = up && ord[k];
    lv->props = lv->fmt->props & ~(unsigned)LP_ORDER;
    if (up) lv->props |= SPC_LP_ORDERED;
    if (up && unq[k]) lv->props |= SPC_LP_UNIQUE;
    if (k == r && up && unq[k]) lv->props |= SPC_LP_LOCATE;
  }
}

spc_status spc_cnt_validate(spc_tensor *t, const char *path, spc_error *e) {
  int64_t np[SPC_MAX_ORDER + 1];
  spc_status s = walk_levels(t, np, path, e);
  if (s) return s;
  for (int l = 0; l < t->nlevels; l++) {
    spc_level *lv = &t->lv[l];
    lv->props = lv->fmt->props;
    if (lv->fmt == &spc_level_compressed || lv->fmt == &spc_level_singleton)
      lv->props &= ~(unsigned)LP_ORDER;
  }
  if (t->vt != SPC_PATTERN && t->nval != np[t->nlevels])
    return spc_cnt_err(e, SPC_ERR_INPUT, path, "values",
                       "%lld values for %lld stored components",
                       (long long)t->nval, (long long)np[t->nlevels]);
  if ((s = spc_tensor_check(t, e))) {
    char msg[sizeof(((spc_error *)0)->msg)];
    snprintf(msg, sizeof msg, "%s", e ? e->msg : "");
    return spc_cnt_err(e, s, path, NULL, "%s", msg);
  }
  for (int l = 0; l < t->nlevels;) {
    int end = l + 1;
    if (t->lv[l].fmt != &spc_level_compressed) {
      l++;
      continue;
    }
    while (end < t->nlevels && t->lv[end].fmt == &spc_level_singleton) end++;
    chain_props(t, l, end, np[l]);
    l = end;
  }
  return SPC_OK;
}
