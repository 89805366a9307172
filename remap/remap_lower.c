/* remap_lower.c -- a remapping's outputs as IR expressions over the caller's
 * source values; lets become locals of the caller's block (or are
 * substituted at each use when there is no block). */
#include "remap_internal.h"

spc_status spc_remap_lower(const spc_remap *r, ir_func *f, ir_stmt *block,
                           ir_expr *const *src, const ir_var *counter_vars,
                           ir_expr **out, spc_error *err) {
  ir_var *lv = NULL;
  ir_expr **le = NULL;
  spc_status st = SPC_OK;
  if (r->ncounters && !counter_vars)
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0,
                   "the remapping uses counters: their variables are needed");
  if (r->nlets && (!(lv = spc_malloc_n(r->nlets, sizeof *lv)) ||
                   !(le = spc_malloc_n(r->nlets, sizeof *le)))) {
    st = SPC_NOMEM(err);
    goto done;
  }
  remap_scope sc = {.r = r, .in_expr = src, .let_var = lv, .let_expr = le};
  lang_env env = spc_remap_env(&sc);
  env.counter_vars = counter_vars;
  for (int k = 0; k < r->nlets; k++) {
    sc.nlets_visible = k;
    lv[k] = -1;
    ir_expr *e = lang_lower_expr(f, r->let_exprs[k], &env, err);
    if (!e) {
      st = err ? err->code : SPC_ERR_INTERNAL;
      goto done;
    }
    le[k] = e;
    if (block) {
      lv[k] = lang_fresh_local(f, r->let_names[k], e->ty, false);
      ir_add(f, block, ir_assign(f, lv[k], e));
    }
  }
  sc.nlets_visible = r->nlets;
  for (int k = 0; k < r->order_out; k++)
    if (!(out[k] = lang_lower_expr(f, r->out[k], &env, err))) {
      st = err ? err->code : SPC_ERR_INTERNAL;
      goto done;
    }
  if (!ir_func_ok(f)) st = ir_verify(f, err);
  if (st == SPC_OK && !ir_func_ok(f))
    st = spc_err(err, SPC_ERR_INTERNAL, NULL, 0, 0, "the IR builder failed");
done:
  spc_free(lv);
  spc_free(le);
  return st;
}
