/* remap_check.c -- names, types and counters of a parsed remapping, and
 * the resolver binding its names (source indices, lets, parameters) for
 * the checker, the interval analysis and the lowering.
 *
 * Checks, in order: arity (source list vs the tensor's order); duplicate
 * source, let and output names, and clashes with parameters; every let and
 * output typed, integer-valued, using only source indices, earlier lets and
 * parameters; counters over source indices only; every source index used
 * by some output (through lets; a counter's indices do not count). */
#include "remap_internal.h"
#include <stdio.h>
#include <string.h>

#define ERR(r, n, ...) lang_node_error((r)->ast, (n), err, __VA_ARGS__)

bool spc_remap_resolve(void *ctx, const char *name, lang_sym *s) {
  const remap_scope *sc = ctx;
  const spc_remap *r = sc->r;
  for (int k = 0; k < r->order_in; k++)
    if (!strcmp(r->in_names[k], name)) {
      s->kind = LANG_SYM_INDEX;
      s->type = sc->coord;
      s->readonly = true;
      if (sc->in_ival && sc->in_ival[k].bounded) {
        s->has_range = true;
        s->lo = sc->in_ival[k].lo;
        s->hi = sc->in_ival[k].hi;
      }
      if (sc->in_expr) s->expr = sc->in_expr[k];
      return true;
    }
  for (int k = sc->nlets_visible - 1; k >= 0; k--)
    if (!strcmp(r->let_names[k], name)) {
      s->kind = LANG_SYM_SCALAR;
      s->type = r->let_exprs[k]->type;
      s->type.lit = false;
      s->readonly = true;
      if (sc->let_ival && sc->let_ival[k].bounded) {
        s->has_range = true;
        s->lo = sc->let_ival[k].lo;
        s->hi = sc->let_ival[k].hi;
        s->bits = sc->let_ival[k].bits;
      }
      if (sc->let_var && sc->let_var[k] >= 0)
        s->var = sc->let_var[k];
      else if (sc->let_expr)
        s->expr = sc->let_expr[k];
      return true;
    }
  for (int k = 0; k < r->nparams; k++)
    if (!strcmp(r->params[k].name, name)) {
      s->kind = LANG_SYM_CONST;
      s->value = r->params[k].value;
      return true;
    }
  return false;
}

lang_env spc_remap_env(remap_scope *sc) {
  if (sc->coord.ty == IR_BOOL)
    sc->coord = (lang_type){.ty = IR_I64, .sym = LT_COORD};
  return (lang_env){.resolve = spc_remap_resolve,
                    .ctx = sc,
                    .allow_counters = true,
                    .ncounters = sc->r->ncounters};
}

static bool is_param(const spc_remap *r, const char *name) {
  for (int k = 0; k < r->nparams; k++)
    if (!strcmp(r->params[k].name, name)) return true;
  return false;
}

static spc_status check_names(spc_remap *r, spc_error *err) {
  for (int k = 0; k < r->order_in; k++) {
    const char *nm = r->in_names[k];
    if (is_param(r, nm))
      return ERR(r, r->in_decl[k],
                 "'%s' is a format parameter; it cannot "
                 "name a source index",
                 nm);
    for (int j = 0; j < k; j++)
      if (!strcmp(r->in_names[j], nm))
        return ERR(r, r->in_decl[k], "duplicate source index '%s'", nm);
  }
  for (int k = 0; k < r->nlets; k++) {
    const char *nm = r->let_names[k];
    bool dup = is_param(r, nm) || spc_remap_find_in(r, nm) >= 0;
    for (int j = 0; j < k; j++) dup |= !strcmp(r->let_names[j], nm);
    if (dup)
      return ERR(r, r->let_decl[k], "let name '%s' is already defined", nm);
  }
  return SPC_OK;
}

/* Check e with lets [0, nlets) in scope; it must be an integer. */
static spc_status check_expr(spc_remap *r, lang_node *e, int nlets,
                             const char *what, spc_error *err) {
  remap_scope sc = {.r = r, .nlets_visible = nlets};
  lang_env env = spc_remap_env(&sc);
  spc_status st = lang_check_expr(r->ast, e, &env, err);
  if (st == SPC_ERR_SPEC && err && !strncmp(err->msg, "unknown name", 12)) {
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n,
             " (a remapping may use its "
             "source indices, earlier let names and the format's parameters)");
  }
  if (st != SPC_OK) return st;
  char b[48];
  if (!lang_ty_is_int(e->type.ty))
    return ERR(r, e, "%s is %s: coordinates are integers", what,
               lang_type_str(e->type, b, sizeof b));
  return SPC_OK;
}

/* Mark the source indices and lets that n uses (counter indices excluded). */
static void mark_uses(const spc_remap *r, const lang_node *n, bool *in,
                      bool *let) {
  if (!n) return;
  if (n->kind == LN_NAME) {
    int k = spc_remap_find_in(r, n->name);
    if (k >= 0) in[k] = true;
    for (int j = r->nlets - 1; j >= 0 && k < 0; j--)
      if (!strcmp(r->let_names[j], n->name)) {
        let[j] = true;
        break;
      }
    return;
  }
  if (n->kind == LN_COUNTER) return;
  mark_uses(r, n->a, in, let);
  mark_uses(r, n->b, in, let);
  mark_uses(r, n->c, in, let);
  for (int i = 0; i < n->nkids; i++) mark_uses(r, n->kids[i], in, let);
}

static spc_status check_used(spc_remap *r, spc_error *err) {
  bool in[SPC_MAX_ORDER] = {false};
  bool *let = r->nlets ? lang_alloc(r->ast, (size_t)r->nlets) : NULL;
  if (r->nlets && !let) return SPC_NOMEM(err);
  for (int k = 0; k < r->order_out; k++) mark_uses(r, r->out[k], in, let);
  for (int j = r->nlets - 1; j >= 0; j--) /* a let sees only earlier lets */
    if (let[j]) mark_uses(r, r->let_exprs[j], in, let);
  for (int k = 0; k < r->order_in; k++)
    if (!in[k])
      return ERR(r, r->in_decl[k],
                 "index %s is not used: the remapping "
                 "would lose it",
                 r->in_names[k]);
  return SPC_OK;
}

/* Number the counters of n (equal index sets share a number). */
static spc_status number_counters(spc_remap *r, lang_node *n, spc_error *err) {
  if (!n) return SPC_OK;
  spc_status st;
  if (n->kind == LN_COUNTER) {
    spc_remap_counter c = {.n = n->nkids};
    for (int i = 0; i < n->nkids; i++)
      c.idx[i] = spc_remap_find_in(r, n->kids[i]->name);
    for (int k = 0; k < r->ncounters; k++) {
      const spc_remap_counter *o = &r->counters[k];
      bool same = o->n == c.n;
      for (int i = 0; i < c.n && same; i++) {
        bool found = false;
        for (int j = 0; j < o->n; j++) found |= o->idx[j] == c.idx[i];
        same = found;
      }
      if (same) {
        n->ival = k;
        return SPC_OK;
      }
    }
    if (r->ncounters == SPC_MAX_ORDER)
      return ERR(r, n, "too many distinct counters");
    n->ival = r->ncounters;
    r->counters[r->ncounters++] = c;
    return SPC_OK;
  }
  if ((st = number_counters(r, n->a, err)) ||
      (st = number_counters(r, n->b, err)) ||
      (st = number_counters(r, n->c, err)))
    return st;
  for (int i = 0; i < n->nkids; i++)
    if ((st = number_counters(r, n->kids[i], err)) != SPC_OK) return st;
  return SPC_OK;
}

static spc_status name_outputs(spc_remap *r, spc_error *err) {
  for (int k = 0; k < r->order_out; k++) {
    lang_node *at = r->out_as[k] ? r->out_as[k] : r->out[k];
    if (r->out_as[k]) {
      r->out_names[k] = r->out_as[k]->name;
    } else if (r->out[k]->kind == LN_NAME) {
      r->out_names[k] = r->out[k]->name;
    } else {
      char b[16];
      snprintf(b, sizeof b, "l%d", k);
      if (!(r->out_names[k] = lang_strdup(r->ast, b, strlen(b))))
        return SPC_NOMEM(err);
    }
    if (r->out_as[k] && is_param(r, r->out_names[k]))
      return ERR(r, at, "'%s' is a format parameter; it cannot name an output",
                 r->out_names[k]);
    for (int j = 0; j < k; j++)
      if (!strcmp(r->out_names[j], r->out_names[k]))
        return ERR(r, at, "duplicate output name '%s'", r->out_names[k]);
  }
  return SPC_OK;
}

spc_status spc_remap_check(spc_remap *r, int order, spc_error *err) {
  spc_status st;
  char what[96];
  if (r->order_in != order)
    return ERR(r, r->head,
               "the remapping has %d source ind%s but the tensor "
               "has order %d",
               r->order_in, r->order_in == 1 ? "ex" : "ices", order);
  if ((st = check_names(r, err)) != SPC_OK) return st;
  for (int k = 0; k < r->nlets; k++) {
    snprintf(what, sizeof what, "let '%s'", r->let_names[k]);
    if ((st = check_expr(r, r->let_exprs[k], k, what, err)) != SPC_OK)
      return st;
  }
  for (int k = 0; k < r->order_out; k++) {
    snprintf(what, sizeof what, "output %d", k);
    if ((st = check_expr(r, r->out[k], r->nlets, what, err)) != SPC_OK)
      return st;
  }
  if ((st = name_outputs(r, err)) != SPC_OK ||
      (st = check_used(r, err)) != SPC_OK)
    return st;
  for (int k = 0; k < r->nlets; k++)
    if ((st = number_counters(r, r->let_exprs[k], err)) != SPC_OK) return st;
  for (int k = 0; k < r->order_out; k++)
    if ((st = number_counters(r, r->out[k], err)) != SPC_OK) return st;
  return SPC_OK;
}
