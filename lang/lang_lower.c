/* lang_lower.c -- lowering of checked expressions to the IR.
 *
 * Every node becomes the IR expression of the same operator; the result is
 * cast to the node's checked type, so the IR's promotion and the checker's
 * agree by construction.  Names: locals of the statement list (their
 * ir_var), else the environment: a substituted expression, a variable, or
 * a constant.  `c ? a : b` becomes an IR select, which may evaluate both
 * branches (docs/languages.md): it must not guard an array access. */
#include "spc_lang.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* C keywords and runtime names a local must not take in emitted C. */
static const char *const reserved[] = {
    "auto",     "bool",     "break",    "case",     "char",   "const",
    "continue", "default",  "do",       "double",   "else",   "enum",
    "extern",   "float",    "for",      "goto",     "if",     "inline",
    "int",      "long",     "register", "restrict", "return", "short",
    "signed",   "sizeof",   "static",   "struct",   "switch", "typedef",
    "union",    "unsigned", "void",     "volatile", "while",  "main",
    "free",     "malloc",   "calloc",   "realloc",  "err",    "err_len",
    "int32_t",  "int64_t",  "uint64_t", "true",     "false",  "NULL"};

ir_var lang_fresh_local(ir_func *f, const char *base, ir_ty ty, bool array) {
  char name[96];
  bool bad = false;
  for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (!strcmp(base, reserved[i])) bad = true;
  /* a long name is cut to `keep` bytes so the "_k" suffix always fits:
   * two names equal in their first `keep` bytes then differ by suffix
   * (cutting after the suffix made every candidate the same name) */
  int keep = (int)strnlen(base, 80);
  snprintf(name, sizeof name, "%.*s%s", keep, base, bad ? "_" : "");
  for (int k = 1; ir_find_var(f, name) >= 0 && k < 1000000; k++)
    snprintf(name, sizeof name, "%.*s_%d", keep, base, k);
  return ir_local(f, name, ty, array);
}

typedef struct lw {
  ir_func *f;
  const lang_env *env;
  const ir_var *locals; /* ir_var of each local of the statement list */
  int nlocals;
  spc_error *err;
  bool failed;
} lw;

static ir_expr *fail(lw *c, const lang_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ir_expr *fail(lw *c, const lang_node *n, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  spc_status why = ir_func_why(c->f);
  if (!c->failed && why == SPC_ERR_NOMEM) /* a name unbound because a local could not be made */
    spc_err(c->err, SPC_ERR_NOMEM, NULL, n->line, n->col, "out of memory while building the IR");
  else if (!c->failed)
    spc_err(c->err, SPC_ERR_SPEC, NULL, n->line, n->col, "%s", msg);
  c->failed = true;
  return NULL;
}

/* The IR variable or value behind a checked NAME / INDEX node. */
static bool bind(lw *c, const lang_node *n, lang_sym *s) {
  memset(s, 0, sizeof *s);
  s->var = -1;
  if (n->local >= 0) {
    if (n->local >= c->nlocals) return false;
    s->kind = LANG_SYM_SCALAR;
    s->var = c->locals[n->local];
    return true;
  }
  return c->env && c->env->resolve && c->env->resolve(c->env->ctx, n->name, s);
}

static ir_expr *lower(lw *c, const lang_node *n);

static ir_expr *lower_name(lw *c, const lang_node *n) {
  lang_sym s;
  if (!bind(c, n, &s)) return fail(c, n, "unknown name '%s'", n->name);
  if (s.kind == LANG_SYM_CONST)
    return ir_cast(c->f, n->type.ty, ir_int(c->f, s.value));
  if (n->kind == LN_NAME && s.expr) return s.expr;
  if (s.var < 0) return fail(c, n, "'%s' has no value here", n->name);
  if (n->kind == LN_NAME) return ir_ref(c->f, s.var);
  ir_expr *i = lower(c, n->a);
  return i ? ir_load(c->f, s.var, i) : NULL;
}

static ir_expr *lower_call(lw *c, const lang_node *n) {
  ir_func *f = c->f;
  if (n->fn == LF_LEN) {
    lang_sym s;
    if (!bind(c, n->kids[0], &s) || s.var < 0)
      return fail(c, n, "'%s' has no array here", n->kids[0]->name);
    return ir_len(f, s.var);
  }
  ir_expr *r = lower(c, n->kids[0]);
  if (!r) return NULL;
  if (n->fn == LF_CAST) return ir_cast(f, n->type.ty, r);
  if (n->fn == LF_ABS) return ir_un(f, IR_ABS, r);
  for (int i = 1; i < n->nkids; i++) {
    ir_expr *b = lower(c, n->kids[i]);
    if (!b) return NULL;
    r = ir_bin(f, (ir_op)n->op, r, b);
  }
  return r;
}

static ir_expr *lower_raw(lw *c, const lang_node *n) {
  ir_func *f = c->f;
  ir_expr *a, *b, *d;
  switch (n->kind) {
  case LN_INT:
    if (n->type.ty == IR_U64)
      return ir_const(f, IR_U64, (ir_val){.u64 = n->uval});
    if (n->type.ty == IR_I32)
      return ir_const(f, IR_I32, (ir_val){.i32 = (int32_t)n->ival});
    return ir_int(f, n->ival);
  case LN_FLOAT: return ir_f64(f, n->fval);
  case LN_BOOL: return ir_bool(f, n->bval);
  case LN_NAME:
  case LN_INDEX: return lower_name(c, n);
  case LN_CALL: return lower_call(c, n);
  case LN_UNARY: return (a = lower(c, n->a)) ? ir_un(f, (ir_op)n->op, a) : NULL;
  case LN_BINARY:
    if (!(a = lower(c, n->a)) || !(b = lower(c, n->b))) return NULL;
    return ir_bin(f, (ir_op)n->op, a, b);
  case LN_COND:
    if (!(a = lower(c, n->a)) || !(b = lower(c, n->b)) || !(d = lower(c, n->c)))
      return NULL;
    return ir_select(f, a, b, d);
  case LN_COUNTER:
    if (!c->env || n->ival < 0 || n->ival >= c->env->ncounters ||
        !c->env->counter_vars || c->env->counter_vars[n->ival] < 0)
      return fail(c, n, "counter #%s has no value here", n->kids[0]->name);
    return ir_ref(f, c->env->counter_vars[n->ival]);
  default: return fail(c, n, "cannot lower this");
  }
}

static ir_expr *lower(lw *c, const lang_node *n) {
  ir_expr *e = lower_raw(c, n);
  return e ? ir_cast(c->f, n->type.ty, e) : NULL;
}

ir_expr *lang_lower_expr_in(ir_func *f, const lang_node *e, const lang_env *env,
                            const ir_var *locals, int nlocals, spc_error *err) {
  lw c = {f, env, locals, nlocals, err, false};
  ir_expr *r = lower(&c, e);
  if (r && !ir_func_ok(f)) {
    spc_error tmp;
    spc_status st = ir_verify(f, &tmp);
    spc_err(err, st == SPC_ERR_NOMEM ? SPC_ERR_NOMEM : SPC_ERR_INTERNAL, NULL,
            e->line, e->col, "lowering failed: %s",
            st != SPC_OK ? tmp.msg : "the IR builder failed");
    return NULL;
  }
  return r;
}

ir_expr *lang_lower_expr(ir_func *f, const lang_node *e, const lang_env *env,
                         spc_error *err) {
  return lang_lower_expr_in(f, e, env, NULL, 0, err);
}
