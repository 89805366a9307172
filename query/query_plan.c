/* query_plan.c -- one IR function computing every aggregate of a query
 * over a COO source, the remapping computed inline:
 *
 *   out_A = alloc(i64, G) ...              (zeroed; present too)
 *   for p in 0 .. nnz:                     (pass 1, source order)
 *     x = crd0[p], ...; counters; lets; outputs
 *     g = sum (group_k - lo_k) * stride_k
 *     id:      out[g] = 1
 *     min/max: out[g] = present[g] ? min(out[g], v) : v; present[g] = 1
 *     count:   gkey[p] = g; ckey_x[p] = x  (the counted coordinates)
 *   per count(x, ...):                      (pass 2)
 *     perm = 0 .. nnz-1; sort_perm(perm, nnz, gkey, ckey_x, ...)   (stable)
 *     for t in 0 .. nnz: q = perm[t]
 *       if t == 0 || (gkey, ckey...)[q] != (...)[prev]: out[gkey[q]] += 1
 *       prev = q
 *
 * With SPC_QUERY_SORTED the components already arrive in (group...,
 * counted...) order: no permutation, the scan runs in source order.
 * Sorting by the row-major group number g sorts by the group tuple. */
#include "spc_query.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int64_t spc_query_default_limit(void) {
  int64_t lim = (int64_t)1 << 31;
  int64_t phys = spc_phys_bytes();
  if (phys > 0) {
    int64_t quarter = phys / 4 / 8;
    if (quarter > 0 && quarter < lim) lim = quarter;
  }
  return lim;
}

static spc_status group_space(const spc_query *q, const spc_remap *r,
                              const spc_query_shape *sh, spc_query_layout *lay,
                              spc_error *err) {
  lang_ival iv[SPC_MAX_ORDER];
  int64_t cmax[SPC_MAX_ORDER];
  char by[400];
  size_t k = 0;
  by[0] = 0;
  for (int g = 0; g < q->ngroup && k < sizeof by; g++)
    k += (size_t)snprintf(by + k, sizeof by - k, "%s%s", g ? ", " : "",
                          q->group[g]);
  for (int c = 0; c < r->ncounters; c++)
    cmax[c] = sh->nnz > 0 ? sh->nnz - 1 : 0;
  spc_status st = spc_remap_bounds(r, sh->dims, cmax, iv, err);
  if (st != SPC_OK) return st;
  int64_t limit =
      sh->max_groups > 0 ? sh->max_groups : spc_query_default_limit();
  int64_t total = 1;
  bool over = false;
  lay->ngroup = q->ngroup;
  for (int g = 0; g < q->ngroup; g++) {
    lang_ival v = iv[q->group_out[g]];
    if (!v.bounded || __builtin_sub_overflow(v.hi, v.lo, &lay->ext[g]) ||
        lay->ext[g] == INT64_MAX)
      return spc_err(err, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                     "group coordinate '%s' has no finite range: the group "
                     "space cannot be held densely (group by %s)",
                     q->group[g], by);
    lay->lo[g] = v.lo;
    lay->ext[g]++;
    /* a source index over an empty dimension takes no value (the interval
     * analysis gives such an index [0, 0]): no groups, no row 0 printed */
    if (r->identity && sh->dims[q->group_out[g]] == 0) lay->ext[g] = 0;
    over |= __builtin_mul_overflow(total, lay->ext[g], &total);
  }
  if (over)
    return spc_err(err, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "group space of more than %lld entries is too large to "
                   "hold densely (group by %s)",
                   (long long)INT64_MAX, by);
  if (total > limit)
    return spc_err(err, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "group space of %lld entries is too large to hold densely "
                   "(group by %s)",
                   (long long)total, by);
  lay->ngroups = total;
  return SPC_OK;
}

typedef struct plan {
  ir_func *f;
  const spc_query *q;
  const spc_remap *r;
  const spc_query_shape *sh;
  spc_query_layout *lay;
  ir_var crd[SPC_MAX_ORDER], nnz, present;
  ir_var *out;                      /* one per aggregate */
  ir_var gkey, ckey[SPC_MAX_ORDER]; /* per remapping output, -1 unused */
  spc_counter_ir ctr[SPC_MAX_ORDER];
} plan;

static ir_expr *ld(plan *P, ir_var a, ir_expr *i) {
  return ir_load(P->f, a, i);
}

/* Pass 1 body: the remapping and the per-component aggregates. */
static spc_status pass1(plan *P, ir_stmt *body, ir_var p, spc_error *err) {
  ir_func *f = P->f;
  const spc_query *q = P->q;
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  ir_var cv[SPC_MAX_ORDER];
  for (int k = 0; k < P->sh->order; k++) {
    ir_var x = lang_fresh_local(f, P->r->in_names[k], IR_I64, false);
    ir_add(f, body, ir_assign(f, x, ld(P, P->crd[k], ir_ref(f, p))));
    src[k] = ir_ref(f, x);
  }
  for (int c = 0; c < P->r->ncounters; c++) {
    spc_counter_step(&P->ctr[c], f, body, src);
    cv[c] = P->ctr[c].value;
  }
  spc_status st = spc_remap_lower(P->r, f, body, src, cv, outs, err);
  if (st != SPC_OK) return st;
  ir_expr *g = ir_int(f, 0);
  int64_t stride = 1;
  for (int k = q->ngroup - 1; k >= 0; k--) {
    ir_expr *x = ir_bin(f, IR_SUB, ir_cast(f, IR_I64, outs[q->group_out[k]]),
                        ir_int(f, P->lay->lo[k]));
    g = ir_bin(f, IR_ADD, g,
               stride == 1 ? x : ir_bin(f, IR_MUL, x, ir_int(f, stride)));
    stride *= P->lay->ext[k];
  }
  ir_var gv = lang_fresh_local(f, "grp", IR_I64, false);
  ir_add(f, body, ir_assign(f, gv, g));
  bool minmax = false;
  for (int a = 0; a < q->nagg; a++) {
    const spc_query_agg *A = &q->aggs[a];
    ir_var o = P->out[a];
    if (A->kind == SPC_AGG_ID)
      ir_add(f, body, ir_store(f, o, ir_ref(f, gv), ir_int(f, 1)));
    if (A->kind != SPC_AGG_MIN && A->kind != SPC_AGG_MAX) continue;
    minmax = true;
    ir_expr *v = ir_cast(f, IR_I64, outs[A->arg_out[0]]);
    ir_expr *seen =
        ir_bin(f, IR_NE, ld(P, P->present, ir_ref(f, gv)), ir_int(f, 0));
    ir_expr *m = ir_bin(f, A->kind == SPC_AGG_MIN ? IR_MIN : IR_MAX,
                        ld(P, o, ir_ref(f, gv)), v);
    ir_add(f, body, ir_store(f, o, ir_ref(f, gv), ir_select(f, seen, m, v)));
  }
  if (minmax)
    ir_add(f, body, ir_store(f, P->present, ir_ref(f, gv), ir_int(f, 1)));
  if (P->gkey >= 0)
    ir_add(f, body, ir_store(f, P->gkey, ir_ref(f, p), ir_ref(f, gv)));
  for (int k = 0; k < P->r->order_out; k++)
    if (P->ckey[k] >= 0)
      ir_add(
          f, body,
          ir_store(f, P->ckey[k], ir_ref(f, p), ir_cast(f, IR_I64, outs[k])));
  return SPC_OK;
}

/* Pass 2 for count aggregate a: sort (unless sorted) and count changes. */
static void count_pass(plan *P, ir_stmt *body, int a) {
  ir_func *f = P->f;
  const spc_query_agg *A = &P->q->aggs[a];
  bool sorted = P->sh->flags & SPC_QUERY_SORTED;
  ir_var perm = -1, t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var qv = lang_fresh_local(f, "q", IR_I64, false);
  ir_var prev = lang_fresh_local(f, "prev", IR_I64, false);
  ir_expr *n = ir_ref(f, P->nnz);
  if (!sorted) {
    ir_var keys[SPC_MAX_ORDER + 2];
    int nk = 0;
    perm = lang_fresh_local(f, "perm", IR_I64, true);
    ir_add(f, body, ir_alloc(f, perm, n, false));
    ir_stmt *init = ir_add(f, body, ir_for(f, t, ir_int(f, 0), n, NULL));
    ir_add(f, ir_body(init), ir_store(f, perm, ir_ref(f, t), ir_ref(f, t)));
    keys[nk++] = perm;
    keys[nk++] = P->gkey;
    for (int k = 0; k < A->nargs; k++) keys[nk++] = P->ckey[A->arg_out[k]];
    ir_add(f, body, ir_call(f, IR_SORT_PERM, keys, nk, &n, 1));
  }
  ir_add(f, body, ir_assign(f, prev, ir_int(f, 0)));
  ir_stmt *loop = ir_add(f, body, ir_for(f, t, ir_int(f, 0), n, NULL));
  ir_stmt *lb = ir_body(loop);
  ir_add(f, lb,
         ir_assign(f, qv, sorted ? ir_ref(f, t) : ld(P, perm, ir_ref(f, t))));
  ir_expr *changed = ir_bin(f, IR_EQ, ir_ref(f, t), ir_int(f, 0));
  for (int k = -1; k < A->nargs; k++) {
    ir_var key = k < 0 ? P->gkey : P->ckey[A->arg_out[k]];
    changed = ir_bin(f, IR_LOR, changed,
                     ir_bin(f, IR_NE, ld(P, key, ir_ref(f, qv)),
                            ld(P, key, ir_ref(f, prev))));
  }
  ir_stmt *iff = ir_add(f, lb, ir_if(f, changed, NULL, NULL));
  ir_expr *g = ld(P, P->gkey, ir_ref(f, qv));
  ir_add(f, ir_then(iff),
         ir_store(f, P->out[a], g,
                  ir_bin(f, IR_ADD, ld(P, P->out[a], g), ir_int(f, 1))));
  ir_add(f, lb, ir_assign(f, prev, ir_ref(f, qv)));
  if (perm >= 0) ir_add(f, body, ir_free(f, perm));
}

static spc_status build(plan *P, spc_error *err) {
  ir_func *f = P->f;
  const spc_query *q = P->q;
  char name[160];
  ir_stmt *body = ir_func_body(f);
  for (int k = 0; k < P->sh->order; k++) {
    snprintf(name, sizeof name, "crd%d", k);
    P->crd[k] = ir_param(f, name, P->sh->crd_ty[k], true, IR_IN);
  }
  P->nnz = ir_param(f, "nnz", IR_I64, false, IR_IN);
  P->lay->first_out = P->sh->order + 1;
  ir_expr *G = ir_int(f, P->lay->ngroups);
  bool counts = false;
  for (int a = 0; a < q->nagg; a++) {
    snprintf(name, sizeof name, "out_%s", q->aggs[a].name);
    P->out[a] = ir_param(f, name, IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, P->out[a], G, true));
    P->lay->has_present |=
        q->aggs[a].kind == SPC_AGG_MIN || q->aggs[a].kind == SPC_AGG_MAX;
    counts |= q->aggs[a].kind == SPC_AGG_COUNT;
  }
  P->present = -1;
  if (P->lay->has_present) {
    P->lay->present_param = ir_nparams(f);
    P->present = ir_param(f, "present", IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, P->present, G, true));
  }
  P->gkey = -1;
  for (int k = 0; k < SPC_MAX_ORDER; k++) P->ckey[k] = -1;
  if (counts) {
    P->gkey = lang_fresh_local(f, "gkey", IR_I64, true);
    ir_add(f, body, ir_alloc(f, P->gkey, ir_ref(f, P->nnz), false));
    for (int a = 0; a < q->nagg; a++)
      for (int k = 0; q->aggs[a].kind == SPC_AGG_COUNT && k < q->aggs[a].nargs;
           k++) {
        int o = q->aggs[a].arg_out[k];
        if (P->ckey[o] >= 0) continue;
        snprintf(name, sizeof name, "ckey_%s", P->r->out_names[o]);
        P->ckey[o] = lang_fresh_local(f, name, IR_I64, true);
        ir_add(f, body, ir_alloc(f, P->ckey[o], ir_ref(f, P->nnz), false));
      }
  }
  int64_t lim =
      P->sh->max_groups > 0 ? P->sh->max_groups : spc_query_default_limit();
  for (int c = 0; c < P->r->ncounters; c++) {
    spc_status st = spc_counter_begin(P->r, c, P->sh->counter_mode, P->sh->dims,
                                      lim, f, body, &P->ctr[c], NULL, err);
    if (st != SPC_OK) return st;
  }
  ir_var p = lang_fresh_local(f, "p", IR_I64, false);
  ir_stmt *loop =
      ir_add(f, body, ir_for(f, p, ir_int(f, 0), ir_ref(f, P->nnz), NULL));
  spc_status st = pass1(P, ir_body(loop), p, err);
  if (st != SPC_OK) return st;
  for (int c = 0; c < P->r->ncounters; c++)
    spc_counter_end(&P->ctr[c], f, body);
  for (int a = 0; a < q->nagg; a++)
    if (q->aggs[a].kind == SPC_AGG_COUNT) count_pass(P, body, a);
  if (P->gkey >= 0) ir_add(f, body, ir_free(f, P->gkey));
  for (int k = 0; k < P->r->order_out; k++)
    if (P->ckey[k] >= 0) ir_add(f, body, ir_free(f, P->ckey[k]));
  return SPC_OK;
}

spc_status spc_query_plan(const spc_query *q, const spc_remap *r,
                          const spc_query_shape *sh, ir_func **out,
                          spc_query_layout *lay, spc_error *err) {
  plan P = {.q = q, .r = r, .sh = sh, .lay = lay};
  spc_status st;
  *out = NULL;
  memset(lay, 0, sizeof *lay);
  if (sh->order != r->order_in)
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0,
                   "the remapping expects order "
                   "%d, the source has order %d",
                   r->order_in, sh->order);
  if ((st = group_space(q, r, sh, lay, err)) != SPC_OK) return st;
  if (!(P.f = ir_func_new("spc_query")) ||
      !(P.out = spc_malloc_n(q->nagg, sizeof *P.out))) {
    ir_func_free(&P.f);
    return SPC_NOMEM(err);
  }
  st = build(&P, err);
  if (st == SPC_OK) st = ir_verify(P.f, err);
  spc_free(P.out);
  if (st != SPC_OK) {
    ir_func_free(&P.f);
    return st;
  }
  *out = P.f;
  return SPC_OK;
}
