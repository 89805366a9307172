/* lang_check_stmt.c -- the type checker for statement lists.
 *
 * Locals are function-scoped, declared by their first assignment (the
 * assigned expression's type; constant expressions give i64 / f64 / bool),
 * by `a = alloc(T, n)` (array of T) or by `for x in ...` (the bounds' type,
 * i64 for constants).  A loop variable is read-only inside its loop and may
 * be reused by a later loop.  `return e` may only end the function (the
 * last statement of the top block, or of an if/else branch that is last). */
#include "spc_lang.h"
#include <stdio.h>
#include <string.h>

typedef struct sck {
  lang_ast *ast;
  const lang_env *env;
  spc_error *err;
  int loops;
} sck;

#define fail(c, n, ...) lang_node_error((c)->ast, (n), (c)->err, __VA_ARGS__)

static const char *tys(lang_type t, char *b) { return lang_type_str(t, b, 48); }

static int add_local(sck *c, const char *name, lang_type t, bool loopvar) {
  lang_ast *a = c->ast;
  if (a->nlocals == a->caplocals) {
    int cap = a->caplocals ? 2 * a->caplocals : 16;
    lang_local *l = spc_realloc(a->locals, (size_t)cap * sizeof *l);
    if (!l) return -1;
    a->locals = l;
    a->caplocals = cap;
  }
  if (t.lit && lang_ty_is_int(t.ty)) t.ty = IR_I64;
  if (t.lit && t.ty == IR_F32) t.ty = IR_F64;
  t.lit = false;
  a->locals[a->nlocals] =
      (lang_local){.name = name, .type = t, .loopvar = loopvar};
  return a->nlocals++;
}

static spc_status expr(sck *c, lang_node *e) {
  return lang_check_expr(c->ast, e, c->env, c->err);
}

static spc_status int_expr(sck *c, lang_node *e, const char *what) {
  spc_status st = expr(c, e);
  char b[48];
  if (st == SPC_OK && (e->type.array || !lang_ty_is_int(e->type.ty)))
    st = fail(c, e, "%s must be an integer, found %s", what, tys(e->type, b));
  return st;
}

static spc_status convert(sck *c, const lang_node *at, lang_type dst,
                          const lang_node *v, const char *target) {
  char b[48], d[48];
  if (lang_assignable(dst, v->type)) return SPC_OK;
  return fail(c, at,
              "cannot assign %s to %s of type %s (only widening "
              "conversions are implicit)",
              tys(v->type, b), target, tys(dst, d));
}

/* The named array of statement n (name in n->name): element type in *t. */
static spc_status array_of(sck *c, lang_node *at, const char *name, bool write,
                           lang_type *t, int *local) {
  lang_sym s;
  if (!lang_lookup(c->ast, c->env, name, &s, local))
    return fail(c, at, "unknown name '%s'", name);
  if (s.kind != LANG_SYM_ARRAY)
    return fail(c, at, "'%s' is a scalar, used here as an array", name);
  if (write && s.readonly)
    return fail(c, at, "cannot modify the input array '%s'", name);
  *t = s.type;
  t->array = false;
  t->lit = false;
  return SPC_OK;
}

static spc_status check_assign(sck *c, lang_node *n) {
  spc_status st = expr(c, n->b);
  lang_sym s;
  lang_type t;
  char target[80];
  if (st != SPC_OK) return st;
  if (n->a) {
    if ((st = array_of(c, n, n->name, true, &t, &n->local)) != SPC_OK ||
        (st = int_expr(c, n->a, "array index")) != SPC_OK)
      return st;
    snprintf(target, sizeof target, "an element of '%s'", n->name);
  } else {
    if (!lang_lookup(c->ast, c->env, n->name, &s, &n->local)) {
      if (n->op >= 0) return fail(c, n, "unknown name '%s'", n->name);
      if (n->b->type.array)
        return fail(c, n, "cannot assign an array to '%s'", n->name);
      n->local = add_local(c, n->name, n->b->type, false);
      return n->local < 0 ? SPC_NOMEM(c->err) : SPC_OK;
    }
    if (s.kind == LANG_SYM_ARRAY)
      return fail(c, n, "'%s' is an array, used here as a scalar", n->name);
    if (s.kind == LANG_SYM_CONST || s.kind == LANG_SYM_INDEX)
      return fail(c, n, "cannot assign to '%s' (%s)", n->name,
                  s.kind == LANG_SYM_CONST ? "a constant"
                                           : "an index variable");
    if (s.readonly)
      return fail(c, n, "cannot assign to the input '%s'", n->name);
    if (n->local >= 0 && c->ast->locals[n->local].loopvar)
      return fail(c, n, "cannot assign to the loop variable '%s'", n->name);
    t = s.type;
    t.array = t.lit = false;
    snprintf(target, sizeof target, "'%s'", n->name);
  }
  if (n->op >= 0 && t.ty == IR_BOOL)
    return fail(c, n, "'%s' needs a number on its left",
                n->op == IR_ADD ? "+=" : "-=");
  n->type = t;
  return convert(c, n, t, n->b, target);
}

static spc_status check_alloc(sck *c, lang_node *n) {
  spc_status st = int_expr(c, n->a, "array length");
  lang_type want = lang_type_of(c->env, n->tname), t;
  char b[48], d[48];
  lang_sym s;
  if (st != SPC_OK) return st;
  if (!lang_lookup(c->ast, c->env, n->name, &s, &n->local)) {
    want.array = true;
    n->local = add_local(c, n->name, want, false);
    n->type = want;
    return n->local < 0 ? SPC_NOMEM(c->err) : SPC_OK;
  }
  if ((st = array_of(c, n, n->name, true, &t, &n->local)) != SPC_OK) return st;
  if (t.ty != want.ty)
    return fail(c, n, "'%s' holds %s, allocated here as %s", n->name, tys(t, b),
                tys(want, d));
  n->type = t;
  n->type.array = true;
  return SPC_OK;
}

static spc_status check_block(sck *c, lang_node *b, bool tail);

static spc_status check_for(sck *c, lang_node *n) {
  spc_status st;
  lang_sym s;
  if ((st = int_expr(c, n->a, "loop bound")) != SPC_OK ||
      (st = int_expr(c, n->b, "loop bound")) != SPC_OK)
    return st;
  if (!lang_lookup(c->ast, c->env, n->name, &s, &n->local)) {
    lang_type t = n->a->type;
    if (n->b->type.ty > t.ty) t = n->b->type;
    t.lit = n->a->type.lit && n->b->type.lit;
    if ((n->local = add_local(c, n->name, t, true)) < 0)
      return SPC_NOMEM(c->err);
  } else if (n->local < 0 || !c->ast->locals[n->local].loopvar) {
    return fail(c, n, "loop variable '%s' is already defined", n->name);
  } else if (c->ast->locals[n->local].busy) {
    return fail(c, n, "loop variable '%s' is in use by an enclosing loop",
                n->name);
  }
  n->type = c->ast->locals[n->local].type;
  int k = n->local;
  c->ast->locals[k].busy = true;
  c->loops++;
  st = check_block(c, n->c, false);
  c->loops--;
  c->ast->locals[k].busy = false;
  return st;
}

static spc_status cond_expr(sck *c, lang_node *e, const char *what) {
  spc_status st = expr(c, e);
  char b[48];
  if (st == SPC_OK && (e->type.array || e->type.ty > IR_U64))
    st = fail(c, e, "%s must be bool or an integer, found %s", what,
              tys(e->type, b));
  return st;
}

/* Argument k of builtin n: an array name, or a scalar of a kind. */
static spc_status arr_arg(sck *c, lang_node *n, int k, bool write,
                          lang_type *t) {
  lang_node *a = n->kids[k];
  if (a->kind != LN_NAME)
    return fail(c, a, "argument %d of %s must be an array name", k + 1,
                n->name);
  spc_status st = array_of(c, a, a->name, write, t, &a->local);
  a->type = *t;
  a->type.array = true;
  return st;
}

static spc_status check_builtin(sck *c, lang_node *n) {
  static const int arity[IR_NBUILTINS] = {[IR_FILL] = 4,
                                          [IR_PREFIX_SUM] = 3,
                                          [IR_SHIFT] = 4,
                                          [IR_COPY] = 5,
                                          [IR_SORT_PERM] = 3};
  int want = arity[n->bi];
  spc_status st;
  lang_type t, u;
  char b[48];
  if (n->bi == IR_SORT_PERM ? n->nkids < want : n->nkids != want)
    return fail(c, n, "%s takes %s%d arguments, found %d", n->name,
                n->bi == IR_SORT_PERM ? "at least " : "", want, n->nkids);
  if ((st = arr_arg(c, n, 0, true, &t)) != SPC_OK) return st;
  bool int_arr = n->bi == IR_PREFIX_SUM || n->bi == IR_SORT_PERM;
  if (int_arr && !lang_ty_is_int(t.ty))
    return fail(c, n->kids[0], "%s needs an integer array, found %s", n->name,
                tys(n->kids[0]->type, b));
  for (int k = 1; k < n->nkids; k++) {
    lang_node *a = n->kids[k];
    bool arr =
        (n->bi == IR_COPY && k == 2) || (n->bi == IR_SORT_PERM && k >= 2);
    bool val = (n->bi == IR_FILL || n->bi == IR_SHIFT) && k == 3;
    if (arr) {
      if ((st = arr_arg(c, n, k, false, &u)) != SPC_OK) return st;
      if (n->bi == IR_COPY && u.ty != t.ty)
        return fail(c, a, "copy between arrays of %s and %s", tys(t, b),
                    lang_type_str(u, (char[48]){0}, 48));
      if (n->bi == IR_SORT_PERM && (u.ty == IR_C128 || u.ty == IR_BOOL))
        return fail(c, a, "sort key '%s' must hold real numbers", a->name);
    } else if (val) {
      if ((st = expr(c, a)) != SPC_OK ||
          (st = convert(c, a, t, a, "an element")) != SPC_OK)
        return st;
    } else if ((st = int_expr(c, a, "this argument")) != SPC_OK) {
      return st;
    }
  }
  return SPC_OK;
}

static spc_status check_fail(sck *c, lang_node *n) {
  int holes = 0;
  for (const char *s = n->name; *s; s++) {
    if (*s != '%') continue;
    if (s[1] == 'd')
      holes++;
    else if (s[1] != '%')
      return fail(c, n, "fail message: only %%d and %%%% may follow '%%'");
    s++;
  }
  if (holes != n->nkids)
    return fail(c, n,
                "fail message has %d %%d placeholder%s but %d "
                "argument%s",
                holes, holes == 1 ? "" : "s", n->nkids,
                n->nkids == 1 ? "" : "s");
  for (int k = 0; k < n->nkids; k++) {
    spc_status st = int_expr(c, n->kids[k], "fail argument");
    if (st != SPC_OK) return st;
  }
  return SPC_OK;
}

static spc_status check_stmt(sck *c, lang_node *n, bool tail) {
  spc_status st;
  switch (n->kind) {
  case LN_ASSIGN: return check_assign(c, n);
  case LN_ALLOC: return check_alloc(c, n);
  case LN_FREE: {
    lang_type t;
    return array_of(c, n, n->name, true, &t, &n->local);
  }
  case LN_FOR: return check_for(c, n);
  case LN_WHILE:
    if ((st = cond_expr(c, n->a, "loop condition")) != SPC_OK) return st;
    c->loops++;
    st = check_block(c, n->c, false);
    c->loops--;
    return st;
  case LN_IF:
    if ((st = cond_expr(c, n->a, "condition")) != SPC_OK ||
        (st = check_block(c, n->b, tail)) != SPC_OK)
      return st;
    return !n->c                 ? SPC_OK
           : n->c->kind == LN_IF ? check_stmt(c, n->c, tail)
                                 : check_block(c, n->c, tail);
  case LN_BREAK:
    return c->loops ? SPC_OK : fail(c, n, "'break' outside a loop");
  case LN_RETURN: {
    char b[48];
    if (!c->env || !c->env->returns)
      return fail(c, n, "this function returns no value");
    if (!tail)
      return fail(c, n, "'return' must be the last statement of the function");
    if ((st = expr(c, n->a)) != SPC_OK) return st;
    n->type = c->env->ret_type;
    snprintf(b, sizeof b, "the result");
    return convert(c, n, c->env->ret_type, n->a, b);
  }
  case LN_BUILTIN: return check_builtin(c, n);
  case LN_FAIL: return check_fail(c, n);
  case LN_BLOCK: return check_block(c, n, tail);
  default: return fail(c, n, "an expression where a statement was expected");
  }
}

static spc_status check_block(sck *c, lang_node *b, bool tail) {
  for (int i = 0; i < b->nkids; i++) {
    spc_status st = check_stmt(c, b->kids[i], tail && i == b->nkids - 1);
    if (st != SPC_OK) return st;
  }
  return SPC_OK;
}

spc_status lang_check_stmts(lang_ast *ast, lang_node *block,
                            const lang_env *env, spc_error *err) {
  sck c = {ast, env, err, 0};
  ast->nlocals = 0;
  return check_block(&c, block, true);
}
