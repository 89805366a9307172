/* remap_bounds.c -- ranges of a remapping's outputs by interval analysis:
 * source index k over [0, dims[k] - 1], counter c over [0,
 * counter_max[c]], lets in binding order.  An empty dimension (and a
 * counter of no values: counter_max[c] < 0, a tensor of no components) is
 * analysed as [0, 0], and every output whose range depends on it (found
 * by analysing again with [0, 1] there) is empty: [lo, lo - 1], an extent
 * of 0 -- a CSR of no rows has one row pointer, a dense 0 x 5 no values,
 * an ELL of no entries no slots. */
#include "remap_internal.h"

static void eval_outs(const spc_remap *r, lang_ival *in, lang_ival *ctr, lang_ival *let,
                      lang_ival *out) {
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
}

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
  eval_outs(r, in, ctr, let, out);
  bool empty[SPC_MAX_ORDER] = {false};
  for (int k = 0; k < r->order_in + r->ncounters; k++) {
    bool ctrk = k >= r->order_in;
    int c = k - r->order_in;
    if (ctrk ? !counter_max || counter_max[c] >= 0 : dims[k] != 0) continue;
    lang_ival o2[SPC_MAX_ORDER], *x = ctrk ? &ctr[c] : &in[k];
    *x = lang_ival_make(0, 1);
    eval_outs(r, in, ctr, let, o2);
    *x = lang_ival_make(0, 0);
    for (int l = 0; l < r->order_out && l < SPC_MAX_ORDER; l++)
      empty[l] |= o2[l].lo != out[l].lo || o2[l].hi != out[l].hi || o2[l].bounded != out[l].bounded;
  }
  for (int l = 0; l < r->order_out && l < SPC_MAX_ORDER; l++)
    if (empty[l] && out[l].bounded && out[l].lo > INT64_MIN) out[l] = lang_ival_make(out[l].lo, out[l].lo - 1);
  spc_free(let);
  return SPC_OK;
}
