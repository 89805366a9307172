/* query_api.c -- the public face of attribute queries (spconv.h): evaluate
 * over any tensor, symmetric storage expanded, and read the results. */
#include "spc_query.h"
#include <string.h>

spc_status spc_tensor_query(const spc_tensor *t, const char *query, const char *remap,
                     const char *const *param_names, const int64_t *param_values,
                     int nparams, spc_query_results **out, spc_error *err) {
  spc_remap_param params[SPC_MAX_ORDER * 2];
  spc_tensor *x = NULL;
  if (!out) return spc_err(err, SPC_ERR_ARG, NULL, 0, 0, "no result handle");
  *out = NULL;
  if (!t || !query || nparams < 0 || nparams > (int)(sizeof params / sizeof params[0]))
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0, "invalid query arguments");
  for (int k = 0; k < nparams; k++)
    params[k] = (spc_remap_param){.name = param_names[k], .value = param_values[k]};
  /* symmetric storage expanded; a dense layout's zeros dropped (its
   * padding: the components a conversion of it holds) */
  if (spc_tensor_symmetry(t) != SPC_GENERAL || spc_native_dense(t)) {
    spc_status s = spc_tensor_expand(t, &x, err);
    if (s) return s;
    t = x;
  }
  spc_query_opts o = {.params = params, .nparams = nparams};
  o.query_at = (lang_src){.file = "query", .line = 1, .col = 1};
  o.remap_at = (lang_src){.file = "remap", .line = 1, .col = 1};
  spc_status s = spc_query_eval(query, remap, t, &o, out, err);
  spc_tensor_free(&x);
  return s;
}

int spc_query_count(const spc_query_results *r) { return r->nresults; }

const char *spc_query_name(const spc_query_results *r, int k) {
  return k >= 0 && k < r->nresults ? r->res[k].name : NULL;
}

const int64_t *spc_query_values(const spc_query_results *r, int k) {
  return k >= 0 && k < r->nresults ? r->res[k].values : NULL;
}

int64_t spc_query_ngroups(const spc_query_results *r) { return r->ngroups; }

int spc_query_groups(const spc_query_results *r, int64_t *lo, int64_t *ext,
                     const char **names) {
  for (int k = 0; k < r->ngroup; k++) {
    if (lo) lo[k] = r->lo[k];
    if (ext) ext[k] = r->ext[k];
    if (names) names[k] = r->group_names[k];
  }
  return r->ngroup;
}

int spc_query_nonempty_group(const spc_query_results *r, int k, int64_t g) {
  return k >= 0 && k < r->nresults && g >= 0 && g < r->ngroups &&
         spc_query_nonempty(r, k, g);
}
