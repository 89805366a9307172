/* level_singleton.c -- singleton level: exactly one child per parent, at
 * the parent's own position, with coordinate crd[p] (COO's lower levels). */
#include "spc_impl.h"

static void sgl_bounds(const spc_level *lv, int64_t p, int64_t *b,
                       int64_t *e) {
  (void)lv;
  *b = p;
  *e = p + 1;
}

static int64_t sgl_access(const spc_level *lv, int64_t p, int64_t q) {
  (void)p;
  return spc_arr_get(&lv->arr[0], q);
}

static int64_t sgl_locate(const spc_level *lv, int64_t p, int64_t c) {
  return spc_arr_get(&lv->arr[0], p) == c ? p : -1;
}

static int64_t sgl_npos(const spc_level *lv, int64_t nparent) {
  (void)lv;
  return nparent;
}

const spc_level_format spc_level_singleton = {
    .name = "singleton",
    .props = SPC_LP_COMPACT | SPC_LP_BRANCHLESS | SPC_LP_UNIQUE,
    .arrays = {"crd", NULL},
    .bounds = sgl_bounds,
    .access = sgl_access,
    .locate = sgl_locate,
    .npos = sgl_npos,
};
