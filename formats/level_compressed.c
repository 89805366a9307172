/* level_compressed.c -- compressed level: children of parent p are the
 * positions pos[p] .. pos[p+1]-1, with coordinates crd[q].  Ordered and
 * unique per instance (a COO root is compressed, neither ordered nor unique
 * until sorted).  Ordered instances locate by binary search. */
#include "spc_impl.h"

static void cmp_bounds(const spc_level *lv, int64_t p, int64_t *b,
                       int64_t *e) {
  *b = spc_arr_get(&lv->arr[0], p);
  *e = spc_arr_get(&lv->arr[0], p + 1);
}

static int64_t cmp_access(const spc_level *lv, int64_t p, int64_t q) {
  (void)p;
  return spc_arr_get(&lv->arr[1], q);
}

static int64_t cmp_locate(const spc_level *lv, int64_t p, int64_t c) {
  int64_t lo, hi;
  if (!(lv->props & SPC_LP_ORDERED)) return -1;
  cmp_bounds(lv, p, &lo, &hi);
  while (lo < hi) { /* first position with crd >= c */
    int64_t mid = lo + (hi - lo) / 2;
    if (spc_arr_get(&lv->arr[1], mid) < c) lo = mid + 1;
    else hi = mid;
  }
  return (lo < spc_arr_get(&lv->arr[0], p + 1) &&
          spc_arr_get(&lv->arr[1], lo) == c) ? lo : -1;
}

static int64_t cmp_npos(const spc_level *lv, int64_t nparent) {
  return spc_arr_get(&lv->arr[0], nparent);
}

const spc_level_format spc_level_compressed = {
    .name = "compressed",
    .props = SPC_LP_ORDERED | SPC_LP_UNIQUE | SPC_LP_COMPACT | SPC_LP_LOCATE,
    .arrays = {"pos", "crd", NULL},
    .bounds = cmp_bounds,
    .access = cmp_access,
    .locate = cmp_locate,
    .npos = cmp_npos,
};
