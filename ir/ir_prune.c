/* ir_prune.c -- variables' dead definitions dropped (ir_prune_from).
 *
 * Liveness here is flow-insensitive and conservative: a variable is live
 * when an effect reads it -- a store (index or value), a loop's bounds or
 * condition, a branch's condition, an allocation's length, a builtin's
 * operand, a failure's argument --, when it is a parameter (its value
 * leaves the function), or when a live variable's assignment reads it.
 * Anything else only feeds assignments to dead variables: removing those
 * changes no store, no branch, no result. */
#include <string.h>

#include "ir_internal.h"

/* Mark every variable e reads in m. */
static void expr_vars(const ir_expr *e, bool *m, int nv) {
  if (!e) return;
  if ((e->kind == IR_E_VAR || e->kind == IR_E_LOAD || e->kind == IR_E_LEN) && e->var >= 0 &&
      e->var < nv)
    m[e->var] = true;
  expr_vars(e->a, m, nv);
  expr_vars(e->b, m, nv);
  expr_vars(e->c, m, nv);
}

/* Whether e reads a variable marked in m. */
static bool expr_reads(const ir_expr *e, const bool *m, int nv) {
  if (!e) return false;
  if ((e->kind == IR_E_VAR || e->kind == IR_E_LOAD || e->kind == IR_E_LEN) && e->var >= 0 &&
      e->var < nv && m[e->var])
    return true;
  return expr_reads(e->a, m, nv) || expr_reads(e->b, m, nv) || expr_reads(e->c, m, nv);
}

/* The effects' reads (every statement but an assignment's right side). */
static void effect_vars(const ir_stmt *s, bool *m, int nv) {
  if (!s) return;
  switch (s->kind) {
  case IR_S_ASSIGN: break;
  case IR_S_STORE:
    if (s->var >= 0 && s->var < nv) m[s->var] = true;
    expr_vars(s->a, m, nv);
    expr_vars(s->b, m, nv);
    break;
  case IR_S_BUILTIN:
    for (int k = 0; k < s->nvars; k++)
      if (s->vars[k] >= 0 && s->vars[k] < nv) m[s->vars[k]] = true;
    for (int k = 0; k < s->nargs; k++) expr_vars(s->args[k], m, nv);
    break;
  case IR_S_FAIL:
    for (int k = 0; k < s->nargs; k++) expr_vars(s->args[k], m, nv);
    break;
  default: /* for, while, if, alloc, free, block, break */
    expr_vars(s->a, m, nv);
    expr_vars(s->b, m, nv);
    break;
  }
  for (int c = 0; c < s->nkids; c++) effect_vars(s->kids[c], m, nv);
}

/* One round: every assignment to a variable in live adds its reads;
 * whether anything was added. */
static bool assign_round(const ir_stmt *s, bool *live, bool *tmp, int nv) {
  if (!s) return false;
  bool more = false;
  if (s->kind == IR_S_ASSIGN && s->var >= 0 && s->var < nv && live[s->var]) {
    memset(tmp, 0, (size_t)nv);
    expr_vars(s->a, tmp, nv);
    for (int v = 0; v < nv; v++)
      if (tmp[v] && !live[v]) live[v] = more = true;
  }
  for (int c = 0; c < s->nkids; c++) more |= assign_round(s->kids[c], live, tmp, nv);
  return more;
}

/* One round of the taint: every assignment reading a tainted variable
 * taints its target. */
static bool taint_round(const ir_stmt *s, bool *taint, int nv) {
  if (!s) return false;
  bool more = false;
  if (s->kind == IR_S_ASSIGN && s->var >= 0 && s->var < nv && !taint[s->var] &&
      expr_reads(s->a, taint, nv))
    taint[s->var] = more = true;
  for (int c = 0; c < s->nkids; c++) more |= taint_round(s->kids[c], taint, nv);
  return more;
}

/* Drop the assignments to variables marked in m from every block. */
static void drop_assigns(ir_stmt *s, const bool *m, int nv) {
  if (!s) return;
  int w = 0;
  for (int c = 0; c < s->nkids; c++) {
    ir_stmt *k = s->kids[c];
    if (s->kind == IR_S_BLOCK && k && k->kind == IR_S_ASSIGN && k->var >= 0 && k->var < nv &&
        m[k->var])
      continue;
    drop_assigns(k, m, nv);
    s->kids[w++] = k;
  }
  if (s->kind == IR_S_BLOCK) s->nkids = w;
}

int ir_prune_from(ir_func *f, const ir_var *vs, int n) {
  if (!f || f->broken || f->shared || n < 1) return -1;
  for (int k = 0; k < n; k++)
    if (vs[k] < 0 || vs[k] >= f->nvars) return -1;
  int nv = f->nvars;
  bool *live = spc_calloc((size_t)nv, 1), *tmp = spc_calloc((size_t)nv, 1);
  if (!live || !tmp) {
    spc_free(live);
    spc_free(tmp);
    return -1;
  }
  for (int p = 0; p < f->nparams; p++) live[f->params[p]] = true;
  effect_vars(f->body, live, nv);
  while (assign_round(f->body, live, tmp, nv)) {
  }
  int r = 1;
  for (int k = 0; k < n; k++) r &= !live[vs[k]];
  if (r) { /* all dead: so is everything an assignment reading them feeds */
    memset(tmp, 0, (size_t)nv);
    for (int k = 0; k < n; k++) tmp[vs[k]] = true;
    while (taint_round(f->body, tmp, nv)) {
    }
    drop_assigns(f->body, tmp, nv);
  }
  spc_free(live);
  spc_free(tmp);
  return r;
}
