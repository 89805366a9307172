/* level_dense.c -- dense level: every coordinate 0..size-1 under each parent;
 * nothing stored.  Position of (p, c) is p*size + c. */
#include "spc_impl.h"

static void dense_bounds(const spc_level *lv, int64_t p, int64_t *b,
                         int64_t *e) {
  *b = p * lv->size;
  *e = *b + lv->size;
}

static int64_t dense_access(const spc_level *lv, int64_t p, int64_t q) {
  return q - p * lv->size;
}

static int64_t dense_locate(const spc_level *lv, int64_t p, int64_t c) {
  return (c >= 0 && c < lv->size) ? p * lv->size + c : -1;
}

static int64_t dense_npos(const spc_level *lv, int64_t nparent) {
  return nparent * lv->size;
}

const spc_level_format spc_level_dense = {
    .name = "dense",
    .props = SPC_LP_ORDERED | SPC_LP_UNIQUE | SPC_LP_FULL | SPC_LP_COMPACT |
             SPC_LP_LOCATE,
    .arrays = {NULL},
    .bounds = dense_bounds,
    .access = dense_access,
    .locate = dense_locate,
    .npos = dense_npos,
};
