/* query_result.c -- the results of an evaluated query: one dense i64
 * array per aggregate over the group space, and their text lines. */
#include "spc_query.h"
#include <stdio.h>
#include <string.h>

void spc_query_results_free(spc_query_results **pr) {
  if (!pr || !*pr) return;
  spc_query_results *r = *pr;
  for (int k = 0; k < r->nresults; k++) {
    spc_free((char *)r->res[k].name);
    spc_free(r->res[k].values);
  }
  for (int g = 0; g < r->ngroup; g++) spc_free(r->group_names[g]);
  spc_free(r->res);
  spc_free(r->present);
  spc_free(r);
  *pr = NULL;
}

const spc_query_result *spc_query_result_get(const spc_query_results *r,
                                             const char *name) {
  for (int k = 0; k < r->nresults; k++)
    if (!strcmp(r->res[k].name, name)) return &r->res[k];
  return NULL;
}

void spc_query_group_coords(const spc_query_results *r, int64_t g,
                            int64_t *coords) {
  for (int k = r->ngroup - 1; k >= 0; k--) {
    coords[k] = r->lo[k] + g % r->ext[k];
    g /= r->ext[k];
  }
}

bool spc_query_nonempty(const spc_query_results *r, int k, int64_t g) {
  const spc_query_result *x = &r->res[k];
  if (x->kind == SPC_AGG_COUNT || x->kind == SPC_AGG_ID)
    return x->values[g] > 0;
  return r->present && r->present[g];
}

bool spc_query_next(const spc_query_results *r, int k, unsigned flags,
                    int64_t *g, char *buf, size_t n) {
  if (k < 0 || k >= r->nresults || n == 0) return false;
  while (*g < r->ngroups && (flags & SPC_QUERY_NONEMPTY) &&
         !spc_query_nonempty(r, k, *g))
    ++*g;
  if (*g >= r->ngroups) return false;
  int64_t c[SPC_MAX_ORDER];
  size_t len = 0;
  spc_query_group_coords(r, *g, c);
  buf[0] = 0;
  for (int d = 0; d < r->ngroup && len < n; d++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? "," : "",
                            (long long)c[d]);
  if (len < n)
    snprintf(buf + len, n - len, "\t%lld", (long long)r->res[k].values[*g]);
  ++*g;
  return true;
}
