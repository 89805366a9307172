/* remap_bounds.c -- ranges of a remapping's outputs by interval analysis:
 * source index k over [0, dims[k] - 1] (an empty dimension: [0, 0]),
 * counter c over [0, counter_max[c]], lets in binding order. */
#include "remap_internal.h"

spc_status spc_remap_bounds(const spc_remap *r, const int64_t *dims,
                            const int64_t *counter_max, lang_ival *out,
                            spc_error *err) {
  lang_ival in[SPC_MAX_ORDER], ctr[SPC_MAX_ORDER];
  lang_ival *let = NULL;
  for (int k = 0; k < r->order_in; k++) {
    if (dims[k] < 0)
      return spc_err(err, SPC_ERR_ARG, NULL, 0, 0,
                     "dimension %d is negative (%lld)", k, (long long)dims[k]);
    in[k] = lang_ival_make(0, dims[k] > 0 ? dims[k] - 1 : 0);
  }
  for (int c = 0; c < r->ncounters; c++)
    ctr[c] = counter_max
                 ? lang_ival_make(0, counter_max[c] > 0 ? counter_max[c] : 0)
                 : lang_ival_unbounded();
  if (r->nlets && !(let = spc_malloc_n(r->nlets, sizeof *let)))
    return SPC_NOMEM(err);
  remap_scope sc = {.r = r, .in_ival = in, .let_ival = let};
  lang_env env = spc_remap_env(&sc);
  env.counter_ival = ctr;
  for (int k = 0; k < r->nlets; k++) {
    sc.nlets_visible = k;
    let[k] = lang_interval(r->let_exprs[k], &env);
  }
  sc.nlets_visible = r->nlets;
  for (int k = 0; k < r->order_out; k++)
    out[k] = lang_interval(r->out[k], &env);
  spc_free(let);
  return SPC_OK;
}
