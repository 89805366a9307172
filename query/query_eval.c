/* query_eval.c -- evaluate a query over a tensor's components with the
 * generic interpreter: parse the query and the remapping, bind names,
 * plan one IR function (query_plan.c), run it on the COO arrays (ir_run)
 * and keep its OUT arrays as the results. */
#include "spc_query.h"
#include <string.h>

/* Fill the shape and IR arguments from a COO tensor (crd arrays are
 * borrowed); args has room for order + 1 entries. */
static spc_status coo_args(const spc_tensor *t, spc_query_shape *sh,
                           ir_arg *args, spc_error *err) {
  sh->order = spc_tensor_order(t);
  sh->nnz = spc_tensor_nstored(t);
  for (int d = 0; d < sh->order; d++) sh->dims[d] = spc_tensor_dim(t, d);
  for (int l = 0; l < spc_tensor_nlevels(t); l++) {
    const void *data;
    spc_itype ty;
    int64_t len;
    int d = spc_tensor_level_dim(t, l);
    spc_status st = spc_tensor_level_array(t, l, "crd", &data, &ty, &len);
    if (st != SPC_OK || d < 0 || d >= sh->order)
      return spc_err(err, SPC_ERR_INTERNAL, NULL, 0, 0,
                     "COO level %d has no crd array", l);
    sh->crd_ty[d] = ty == SPC_IDX32 ? IR_I32 : IR_I64;
    args[d] = (ir_arg){.data = (void *)data, .len = len};
  }
  args[sh->order] = (ir_arg){.s.i64 = sh->nnz};
  return SPC_OK;
}

/* Move the OUT arrays of a successful run into a results object. */
static spc_status collect(const spc_query *q, const spc_query_layout *lay,
                          ir_arg *args, spc_query_results **out,
                          spc_error *err) {
  spc_query_results *r = spc_calloc(1, sizeof *r);
  if (!r || !(r->res = spc_calloc((size_t)q->nagg, sizeof *r->res))) {
    spc_free(r);
    return SPC_NOMEM(err);
  }
  r->ngroup = lay->ngroup;
  r->ngroups = lay->ngroups;
  for (int g = 0; g < lay->ngroup; g++) {
    r->lo[g] = lay->lo[g];
    r->ext[g] = lay->ext[g];
  }
  for (int a = 0; a < q->nagg; a++) {
    ir_arg *x = &args[lay->first_out + a];
    r->res[a] = (spc_query_result){.kind = q->aggs[a].kind, .values = x->data};
    x->data = NULL;
    r->nresults++;
    size_t n = strlen(q->aggs[a].name);
    char *s = spc_malloc(n + 1);
    if (!s) goto nomem;
    memcpy(s, q->aggs[a].name, n + 1);
    r->res[a].name = s;
  }
  if (lay->has_present) {
    r->present = args[lay->present_param].data;
    args[lay->present_param].data = NULL;
  }
  for (int g = 0; g < lay->ngroup; g++) {
    size_t n = strlen(q->group[g]);
    if (!(r->group_names[g] = spc_malloc(n + 1))) goto nomem;
    memcpy(r->group_names[g], q->group[g], n + 1);
  }
  *out = r;
  return SPC_OK;
nomem:
  spc_query_results_free(&r);
  return SPC_NOMEM(err);
}

spc_status spc_query_eval(const char *query, const char *remap,
                          const spc_tensor *coo, const spc_query_opts *opts,
                          spc_query_results **out, spc_error *err) {
  static const spc_query_opts none;
  spc_query *q = NULL;
  spc_remap *r = NULL;
  spc_tensor *tmp = NULL;
  ir_func *f = NULL;
  ir_arg *args = NULL;
  spc_query_layout lay;
  spc_query_shape sh = {0};
  spc_status st;
  if (!opts) opts = &none;
  *out = NULL;
  lang_src qs = opts->query_at, rs = opts->remap_at;
  qs.text = query;
  rs.text = remap;
  if ((st = spc_query_parse(&qs, &q, err)) != SPC_OK) goto done;
  if (strcmp(spc_tensor_format(coo), "coo")) {
    if ((st = spc_tensor_to_coo(coo, 0, &tmp, err)) != SPC_OK) goto done;
    coo = tmp;
  }
  int order = spc_tensor_order(coo);
  st = remap ? spc_remap_parse(&rs, order, opts->params, opts->nparams, &r, err)
             : spc_remap_identity(order, &r, err);
  if (st != SPC_OK || (st = spc_query_bind(q, r, err)) != SPC_OK) goto done;
  sh.flags = opts->flags;
  sh.max_groups = opts->max_groups;
  sh.counter_mode = opts->counter_mode;
  if (!(args = spc_calloc((size_t)order + 2 + (size_t)q->nagg, sizeof *args))) {
    st = SPC_NOMEM(err);
    goto done;
  }
  if ((st = coo_args(coo, &sh, args, err)) != SPC_OK ||
      (st = spc_query_plan(q, r, &sh, &f, &lay, err)) != SPC_OK ||
      (st = ir_run(f, args, err)) != SPC_OK)
    goto done;
  st = collect(q, &lay, args, out, err);
  for (int k = order + 1; k < ir_nparams(f); k++) spc_free(args[k].data);
done:
  ir_func_free(&f);
  spc_free(args);
  spc_remap_free(&r);
  spc_query_free(&q);
  spc_tensor_free(&tmp);
  return st;
}
