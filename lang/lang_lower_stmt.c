/* lang_lower_stmt.c -- lowering of checked statement lists to the IR.
 *
 * Each local of the list becomes one ir_local (lang_fresh_local); `x op= e`
 * becomes `x = x op e` and `a[i] op= e` becomes `a[i] = a[i] op e` (the
 * index is pure, evaluating it twice is harmless); `return e` assigns the
 * caller's result variable (it only ends the function, so nothing follows
 * it); `fail("... %d ...", e)` becomes an IR FAIL with SPC_ERR_INPUT and
 * the message's %d written %lld. */
#include "spc_lang.h"
#include <string.h>

typedef struct sl {
  ir_func *f;
  const lang_ast *ast;
  const lang_env *env;
  ir_var *vars; /* one per local */
  ir_var ret;
  spc_error *err;
} sl;

#define fail(c, n, ...) lang_node_error((c)->ast, (n), (c)->err, __VA_ARGS__)

/* The status of the error a failed lowering recorded. */
#define ERR(c) ((c)->err ? (c)->err->code : SPC_ERR_SPEC)

static ir_expr *ex(sl *c, const lang_node *e) {
  return lang_lower_expr_in(c->f, e, c->env, c->vars, c->ast->nlocals, c->err);
}

/* The ir_var of the variable a statement names (local or environment). */
static ir_var target(sl *c, const lang_node *n, const char *name, int local) {
  if (local >= 0) return c->vars[local];
  lang_sym s = {.var = -1};
  if (!c->env || !c->env->resolve || !c->env->resolve(c->env->ctx, name, &s) ||
      s.var < 0) {
    fail(c, n, "'%s' cannot be written here (no variable bound)", name);
    return -1;
  }
  return s.var;
}

static spc_status block(sl *c, ir_stmt *dst, const lang_node *b);

static spc_status assign(sl *c, ir_stmt *dst, const lang_node *n) {
  ir_var v = target(c, n, n->name, n->local);
  ir_expr *val = v >= 0 ? ex(c, n->b) : NULL, *idx = NULL;
  if (!val || (n->a && !(idx = ex(c, n->a)))) return ERR(c);
  if (n->op >= 0) {
    ir_expr *old = n->a ? ir_load(c->f, v, idx) : ir_ref(c->f, v);
    val = ir_cast(c->f, n->type.ty, ir_bin(c->f, (ir_op)n->op, old, val));
  }
  ir_add(c->f, dst,
         n->a ? ir_store(c->f, v, idx, val) : ir_assign(c->f, v, val));
  return SPC_OK;
}

static spc_status builtin(sl *c, ir_stmt *dst, const lang_node *n) {
  ir_var arrs[SPC_MAX_ORDER + 2];
  ir_expr *args[4];
  int na = 0, ns = 0;
  if (n->nkids > SPC_MAX_ORDER + 3)
    return fail(c, n, "%s: too many arguments", n->name);
  for (int k = 0; k < n->nkids; k++) {
    const lang_node *a = n->kids[k];
    if (a->type.array) {
      if ((arrs[na++] = target(c, a, a->name, a->local)) < 0)
        return SPC_ERR_SPEC;
    } else if (!(args[ns++] = ex(c, a))) {
      return ERR(c);
    }
  }
  ir_add(c->f, dst, ir_call(c->f, n->bi, arrs, na, args, ns));
  return SPC_OK;
}

static spc_status fail_stmt(sl *c, ir_stmt *dst, const lang_node *n) {
  ir_expr *args[32];
  char msg[512];
  size_t k = 0;
  if (n->nkids > 32) return fail(c, n, "fail takes at most 32 values");
  for (int i = 0; i < n->nkids; i++)
    if (!(args[i] = ex(c, n->kids[i]))) return ERR(c);
  for (const char *s = n->name; *s && k + 4 < sizeof msg; s++) {
    if (s[0] == '%' && s[1] == 'd') {
      memcpy(msg + k, "%lld", 4);
      k += 4;
      s++;
    } else if (s[0] == '%') {
      memcpy(msg + k, "%%", 2);
      k += 2;
      s++;
    } else {
      msg[k++] = *s;
    }
  }
  msg[k] = 0;
  ir_add(c->f, dst, ir_fail(c->f, SPC_ERR_INPUT, msg, args, n->nkids));
  return SPC_OK;
}

static spc_status stmt(sl *c, ir_stmt *dst, const lang_node *n) {
  ir_func *f = c->f;
  ir_expr *a, *b;
  ir_stmt *s;
  spc_status st;
  switch (n->kind) {
  case LN_ASSIGN: return assign(c, dst, n);
  case LN_ALLOC:
    if (!(a = ex(c, n->a))) return ERR(c);
    ir_add(f, dst, ir_alloc(f, target(c, n, n->name, n->local), a, true));
    return SPC_OK;
  case LN_FREE:
    ir_add(f, dst, ir_free(f, target(c, n, n->name, n->local)));
    return SPC_OK;
  case LN_FOR:
    if (!(a = ex(c, n->a)) || !(b = ex(c, n->b))) return ERR(c);
    s = ir_add(f, dst, ir_for(f, c->vars[n->local], a, b, NULL));
    return block(c, ir_body(s), n->c);
  case LN_WHILE:
    if (!(a = ex(c, n->a))) return ERR(c);
    s = ir_add(f, dst, ir_while(f, a, NULL));
    return block(c, ir_body(s), n->c);
  case LN_IF:
    if (!(a = ex(c, n->a))) return ERR(c);
    s = ir_add(f, dst, ir_if(f, a, NULL, NULL));
    if ((st = block(c, ir_then(s), n->b)) != SPC_OK || !n->c) return st;
    if (n->c->kind == LN_IF) return stmt(c, ir_else(f, s), n->c);
    return block(c, ir_else(f, s), n->c);
  case LN_BREAK: ir_add(f, dst, ir_break(f)); return SPC_OK;
  case LN_RETURN:
    if (c->ret < 0) return fail(c, n, "this function returns no value");
    if (!(a = ex(c, n->a))) return ERR(c);
    ir_add(f, dst, ir_assign(f, c->ret, a));
    return SPC_OK;
  case LN_BUILTIN: return builtin(c, dst, n);
  case LN_FAIL: return fail_stmt(c, dst, n);
  case LN_BLOCK: return block(c, dst, n);
  default: return fail(c, n, "not a statement");
  }
}

static spc_status block(sl *c, ir_stmt *dst, const lang_node *b) {
  for (int i = 0; i < b->nkids; i++) {
    spc_status st = stmt(c, dst, b->kids[i]);
    if (st != SPC_OK) return st;
  }
  return SPC_OK;
}

spc_status lang_lower_stmts(ir_func *f, ir_stmt *dst, const lang_ast *ast,
                            const lang_node *b, const lang_env *env, ir_var ret,
                            spc_error *err) {
  sl c = {f, ast, env, NULL, ret, err};
  spc_status st = SPC_OK;
  if (ast->nlocals &&
      !(c.vars = spc_malloc((size_t)ast->nlocals * sizeof *c.vars)))
    return SPC_NOMEM(err);
  for (int i = 0; i < ast->nlocals; i++)
    c.vars[i] = lang_fresh_local(f, ast->locals[i].name, ast->locals[i].type.ty,
                                 ast->locals[i].type.array);
  if (ir_func_ok(f)) st = block(&c, dst, b);
  if (st == SPC_OK && !ir_func_ok(f)) {
    spc_error tmp;
    spc_status vs = ir_verify(f, &tmp);
    st = spc_err(err, vs == SPC_ERR_NOMEM ? SPC_ERR_NOMEM : SPC_ERR_INTERNAL,
                 NULL, 0, 0, "lowering failed: %s",
                 vs != SPC_OK ? tmp.msg : "the IR builder failed");
  }
  spc_free(c.vars);
  return st;
}
