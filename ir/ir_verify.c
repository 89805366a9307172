/* ir_verify.c -- the IR verifier: run before interpreting or emitting.
 *
 * Checks every rule of spc_ir.h: the function was built without failure;
 * variable names are unique C identifiers and parameters are numbered in
 * order; every node has a valid kind and type, its operands exist and have
 * the types the builders produce (see ir_build.c); variables are used as
 * declared (scalar or array); IN arrays are never written (store, builtin
 * destination) and only local or OUT arrays are allocated or freed; loop
 * variables are integer scalars; break is inside a loop; builtins get the
 * right operands; FAIL has a negative code and a message whose only
 * conversions are one %lld per argument; nesting stays below IR_MAX_DEPTH.
 * The first violation is reported as SPC_ERR_INTERNAL naming the function,
 * the statement and what was expected. */
#include "ir_internal.h"
#include <stdio.h>
#include <string.h>

typedef struct vctx {
  const ir_func *f;
  spc_error *e;
  const ir_stmt *s; /* statement being checked */
  int loops;        /* enclosing loops */
  bool failed;
} vctx;

static void bad(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(vctx *c, const char *fmt, ...) {
  if (c->failed) return;
  c->failed = true;
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  spc_str st = {0};
  if (c->s) ir_fmt_stmt_head(&st, c->f, c->s);
  if (c->s && !st.failed)
    spc_err(c->e, SPC_ERR_INTERNAL, NULL, 0, 0,
            "ir_verify: function %s: statement `%.200s`: %s", ir_func_name(c->f), st.s,
            what);
  else
    spc_err(c->e, SPC_ERR_INTERNAL, NULL, 0, 0, "ir_verify: function %s: %s",
            ir_func_name(c->f), what);
  spc_str_free(&st);
}

static const char *tyn(ir_ty t) { return ir_ty_name(t); }

static const ir_var_info *var(vctx *c, ir_var v, bool array, const char *what) {
  const ir_var_info *vi = ir_var_get(c->f, v);
  if (!vi) {
    bad(c, "%s: variable %d does not exist", what, v);
    return NULL;
  }
  if (vi->array != array) {
    bad(c, "%s: %s is %s, expected %s", what, vi->name,
        vi->array ? "an array" : "a scalar", array ? "an array" : "a scalar");
    return NULL;
  }
  return vi;
}

/* ---- expressions --------------------------------------------------------- */

static void expr(vctx *c, const ir_expr *x, int depth);

static void operand(vctx *c, const ir_expr *x, int depth, const char *what) {
  if (!x)
    bad(c, "%s is missing", what);
  else
    expr(c, x, depth + 1);
}

static void want(vctx *c, const ir_expr *x, ir_ty t, const char *what) {
  if (!c->failed && x->ty != t)
    bad(c, "%s has type %s, expected %s", what, tyn(x->ty), tyn(t));
}

static void want_int(vctx *c, const ir_expr *x, const char *what) {
  if (!c->failed && !ir_ty_int(x->ty))
    bad(c, "%s has type %s, expected int32_t, int64_t or uint64_t", what, tyn(x->ty));
}

/* Types of a binary node: operands a, b and result t. */
static void bin_types(vctx *c, const ir_expr *x) {
  ir_ty a = x->a->ty, b = x->b->ty, t = x->ty;
  const char *op = ir_op_name(x->op);
  switch (x->op) {
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV:
  case IR_REM:
  case IR_MIN:
  case IR_MAX:
    if (t == IR_BOOL ||
        (t == IR_C128 && (x->op == IR_REM || x->op == IR_MIN || x->op == IR_MAX)))
      bad(c, "operator %s on %s operands", op, tyn(t));
    break;
  case IR_BAND:
  case IR_BOR:
  case IR_BXOR:
    if (!ir_ty_int(t)) bad(c, "operator %s on %s, expected an integer type", op, tyn(t));
    break;
  case IR_SHL:
  case IR_SHR:
    if (!ir_ty_int(t)) bad(c, "operator %s on %s, expected an integer type", op, tyn(t));
    want(c, x->a, t, "the shifted operand");
    want_int(c, x->b, "the shift count");
    return;
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_EQ:
  case IR_NE:
    want(c, x, IR_BOOL, "a comparison");
    if (a != b)
      bad(c, "operator %s compares %s with %s, expected equal types", op, tyn(a), tyn(b));
    else if (a == IR_C128 && x->op != IR_EQ && x->op != IR_NE)
      bad(c, "operator %s on complex operands", op);
    return;
  case IR_LAND:
  case IR_LOR:
    want(c, x, IR_BOOL, "a logical operator");
    want(c, x->a, IR_BOOL, "its left operand");
    want(c, x->b, IR_BOOL, "its right operand");
    return;
  default: bad(c, "binary node with operator %d", (int)x->op); return;
  }
  want(c, x->a, t, "the left operand");
  want(c, x->b, t, "the right operand");
}

static void un_types(vctx *c, const ir_expr *x) {
  ir_ty t = x->ty;
  const char *op = ir_op_name(x->op);
  switch (x->op) {
  case IR_NEG:
    if (t == IR_BOOL) bad(c, "operator - on bool");
    break;
  case IR_NOT: want(c, x, IR_BOOL, "operator !"); break;
  case IR_BNOT:
    if (!ir_ty_int(t)) bad(c, "operator ~ on %s", tyn(t));
    break;
  case IR_ABS:
    if (t == IR_BOOL || t == IR_C128) bad(c, "operator %s on %s", op, tyn(t));
    break;
  default: bad(c, "unary node with operator %d", (int)x->op); return;
  }
  want(c, x->a, t, "the operand");
}

static void expr(vctx *c, const ir_expr *x, int depth) {
  if (c->failed) return;
  if (depth > IR_MAX_DEPTH) {
    bad(c, "expression nested deeper than %d", IR_MAX_DEPTH);
    return;
  }
  if (!ir_ty_valid(x->ty)) {
    bad(c, "expression of invalid type %d", (int)x->ty);
    return;
  }
  const ir_var_info *vi;
  switch (x->kind) {
  case IR_E_CONST: return;
  case IR_E_VAR:
    if ((vi = var(c, x->var, false, "a variable reference")))
      want(c, x, vi->ty, "a reference to variable");
    return;
  case IR_E_LOAD:
    if ((vi = var(c, x->var, true, "a load"))) want(c, x, vi->ty, "a load");
    operand(c, x->a, depth, "the index");
    if (!c->failed) want_int(c, x->a, "the index");
    return;
  case IR_E_LEN:
    var(c, x->var, true, "len()");
    want(c, x, IR_I64, "len()");
    return;
  case IR_E_BIN:
    operand(c, x->a, depth, "the left operand");
    operand(c, x->b, depth, "the right operand");
    if (!c->failed && !ir_op_binary(x->op)) {
      bad(c, "binary node with operator %d", (int)x->op);
      return;
    }
    if (!c->failed) bin_types(c, x);
    return;
  case IR_E_UN:
    operand(c, x->a, depth, "the operand");
    if (!c->failed && !ir_op_unary(x->op)) {
      bad(c, "unary node with operator %d", (int)x->op);
      return;
    }
    if (!c->failed) un_types(c, x);
    return;
  case IR_E_CAST: operand(c, x->a, depth, "the operand of a cast"); return;
  case IR_E_SELECT:
    operand(c, x->c, depth, "the condition");
    operand(c, x->a, depth, "the first choice");
    operand(c, x->b, depth, "the second choice");
    if (c->failed) return;
    want(c, x->c, IR_BOOL, "the condition of ?:");
    want(c, x->a, x->ty, "the first choice");
    want(c, x->b, x->ty, "the second choice");
    return;
  }
  bad(c, "expression of invalid kind %d", (int)x->kind);
}

/* e present, well formed, of type t (or any integer when t is -1). */
static void typed(vctx *c, const ir_expr *x, int t, const char *what) {
  if (c->failed) return;
  if (!x) {
    bad(c, "%s is missing", what);
    return;
  }
  expr(c, x, 0);
  if (t < 0)
    want_int(c, x, what);
  else
    want(c, x, (ir_ty)t, what);
}

/* ---- statements ---------------------------------------------------------- */

static void stmt(vctx *c, const ir_stmt *s, int depth);

static const ir_var_info *writable(vctx *c, ir_var v, const char *what) {
  const ir_var_info *vi = var(c, v, true, what);
  if (vi && vi->dir == IR_IN) {
    bad(c, "%s writes to %s, an IN array", what, vi->name);
    return NULL;
  }
  return vi;
}

static void owned(vctx *c, ir_var v, const char *what) {
  const ir_var_info *vi = var(c, v, true, what);
  if (vi && (vi->dir == IR_IN || vi->dir == IR_INOUT))
    bad(c,
        "%s of %s, a parameter the caller owns (expected a local or OUT "
        "array)",
        what, vi->name);
}

static void builtin(vctx *c, const ir_stmt *s) {
  if ((int)s->builtin < 0 || s->builtin >= IR_NBUILTINS) {
    bad(c, "builtin %d does not exist", (int)s->builtin);
    return;
  }
  const ir_builtin_info *bi = &ir_builtins[s->builtin];
  if ((bi->narrays >= 0 ? s->nvars != bi->narrays : s->nvars < 2) ||
      s->nargs != bi->nargs || (s->nvars && !s->vars) || (s->nargs && !s->args)) {
    bad(c, "%s with %d arrays and %d scalars", bi->name, s->nvars, s->nargs);
    return;
  }
  const ir_var_info *d = writable(c, s->vars[0], bi->name);
  if (!d) return;
  switch (s->builtin) {
  case IR_FILL:
  case IR_SHIFT:
    typed(c, s->args[0], IR_I64, "lo");
    typed(c, s->args[1], IR_I64, "hi");
    typed(c, s->args[2], d->ty, "the value");
    return;
  case IR_PREFIX_SUM:
    if (d->ty == IR_BOOL) {
      bad(c, "prefix_sum of a bool array");
      return;
    }
    typed(c, s->args[0], IR_I64, "lo");
    typed(c, s->args[1], IR_I64, "hi");
    return;
  case IR_COPY: {
    const ir_var_info *src = var(c, s->vars[1], true, "copy");
    if (src && src->ty != d->ty) {
      bad(c, "copy from %s[] to %s[], expected equal types", tyn(src->ty), tyn(d->ty));
      return;
    }
    for (int k = 0; k < 3; k++) typed(c, s->args[k], IR_I64, "an operand of copy");
    return;
  }
  case IR_MOVE: {
    owned(c, s->vars[0], "move");
    owned(c, s->vars[1], "move");
    const ir_var_info *src = var(c, s->vars[1], true, "move");
    if (src && src->ty != d->ty)
      bad(c, "move from %s[] to %s[], expected equal types", tyn(src->ty), tyn(d->ty));
    if (s->vars[0] == s->vars[1]) bad(c, "move of %s into itself", d->name);
    return;
  }
  case IR_SORT_PERM:
    if (d->ty != IR_I32 && d->ty != IR_I64) {
      bad(c, "sort_perm of %s[], expected int32_t or int64_t", tyn(d->ty));
      return;
    }
    typed(c, s->args[0], IR_I64, "n");
    for (int k = 1; k < s->nvars && !c->failed; k++) {
      const ir_var_info *key = var(c, s->vars[k], true, "a sort key");
      if (key && key->ty == IR_C128) bad(c, "sort key %s is complex", key->name);
    }
    return;
  case IR_SPMV_LANES:
  case IR_SPMV_LANES_SAME: {
    static const char *const what[4] = {"y", "crd", "vals", "x"};
    const char *bn = ir_builtins[s->builtin].name;
    char op[48];
    snprintf(op, sizeof op, "an operand of %s", bn);
    for (int k = 0; k < 4 && !c->failed; k++) {
      const ir_var_info *a = k ? var(c, s->vars[k], true, bn) : d;
      bool fits = a && (k == 1 ? a->ty == IR_I32 || a->ty == IR_I64 : a->ty == IR_F64);
      if (a && !fits)
        bad(c, "%s: %s is %s[], expected %s", bn, what[k], tyn(a->ty),
            k == 1 ? "int32_t[] or int64_t[]" : "double[]");
    }
    for (int k = 0; k < 3; k++) typed(c, s->args[k], IR_I64, op);
    return;
  }
  default: return;
  }
}

static void fail_stmt(vctx *c, const ir_stmt *s) {
  if (s->code >= 0) {
    bad(c, "status %d is not an error", (int)s->code);
    return;
  }
  const char *why = ir_fail_msg_check(s->msg, s->nargs);
  if (why) {
    bad(c, "message: %s", why);
    return;
  }
  if (s->nargs && !s->args) {
    bad(c, "arguments missing");
    return;
  }
  for (int k = 0; k < s->nargs; k++) typed(c, s->args[k], IR_I64, "an argument");
}

static void stmt(vctx *c, const ir_stmt *s, int depth) {
  if (c->failed) return;
  if (!s) {
    bad(c, "a statement is missing");
    return;
  }
  if (depth > IR_MAX_DEPTH) {
    bad(c, "statements nested deeper than %d", IR_MAX_DEPTH);
    return;
  }
  c->s = s;
  const ir_var_info *vi;
  switch (s->kind) {
  case IR_S_BLOCK:
    if (s->nkids && !s->kids) {
      bad(c, "block without statements");
      return;
    }
    for (int k = 0; k < s->nkids && !c->failed; k++) stmt(c, s->kids[k], depth + 1);
    return;
  case IR_S_ASSIGN:
    if ((vi = var(c, s->var, false, "assignment"))) typed(c, s->a, vi->ty, "the value");
    return;
  case IR_S_STORE:
    if ((vi = writable(c, s->var, "store"))) {
      typed(c, s->a, -1, "the index");
      typed(c, s->b, vi->ty, "the value");
    }
    return;
  case IR_S_FOR:
    if (!(vi = var(c, s->var, false, "for"))) return;
    if (!ir_ty_int(vi->ty)) {
      bad(c, "loop variable %s has type %s, expected an integer", vi->name, tyn(vi->ty));
      return;
    }
    typed(c, s->a, vi->ty, "the lower bound");
    typed(c, s->b, vi->ty, "the upper bound");
    goto body;
  case IR_S_WHILE:
    typed(c, s->a, IR_BOOL, "the condition");
  body:
    if (s->nkids < 1 || !s->kids || !s->kids[0]) {
      bad(c, "loop without a body");
      return;
    }
    c->loops++;
    stmt(c, s->kids[0], depth + 1);
    c->loops--;
    return;
  case IR_S_IF:
    typed(c, s->a, IR_BOOL, "the condition");
    if (s->nkids < 1 || !s->kids || !s->kids[0]) {
      bad(c, "if without a body");
      return;
    }
    stmt(c, s->kids[0], depth + 1);
    if (s->nkids > 1 && s->kids[1]) stmt(c, s->kids[1], depth + 1);
    return;
  case IR_S_ALLOC:
    owned(c, s->var, "allocation");
    typed(c, s->a, -1, "the length");
    return;
  case IR_S_FREE: owned(c, s->var, "free"); return;
  case IR_S_BUILTIN: return builtin(c, s);
  case IR_S_FAIL: return fail_stmt(c, s);
  case IR_S_BREAK:
    if (!c->loops) bad(c, "break outside a loop");
    return;
  }
  bad(c, "statement of invalid kind %d", (int)s->kind);
}

/* ---- variables ----------------------------------------------------------- */

static bool ident(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
    return false;
  for (s++; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return false;
  return true;
}

static void vars(vctx *c) {
  const ir_func *f = c->f;
  if (!ident(f->name)) {
    bad(c, "the function name '%s' is not a C identifier", f->name);
    return;
  }
  int np = 0;
  for (int v = 0; v < f->nvars && !c->failed; v++) {
    const ir_var_info *vi = &f->vars[v];
    if (!ident(vi->name)) {
      bad(c, "variable %d: '%s' is not a C identifier", v,
          vi->name ? vi->name : "(null)");
      return;
    }
    if (!ir_ty_valid(vi->ty)) {
      bad(c, "variable %s has invalid type %d", vi->name, (int)vi->ty);
      return;
    }
    if (ir_find_var(f, vi->name) != v) { /* another of that name (hashed: not quadratic) */
      bad(c, "variable %s declared twice", vi->name);
      return;
    }
    if (vi->dir == IR_LOCAL
            ? vi->param != -1
            : vi->param < 0 || vi->param >= f->nparams || f->params[vi->param] != v) {
      bad(c, "variable %s: parameter number %d does not match its direction", vi->name,
          vi->param);
      return;
    }
    np += vi->dir != IR_LOCAL;
  }
  if (!c->failed && np != f->nparams)
    bad(c, "%d parameters declared, %d in the table", np, f->nparams);
}

spc_status ir_verify(const ir_func *f, spc_error *e) {
  if (!f) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "ir_verify: no function");
  if (f->broken)
    return spc_err(e, f->why, NULL, 0, 0, "ir_verify: function %s: %s", ir_func_name(f),
                   f->msg);
  vctx c = {.f = f, .e = e};
  vars(&c);
  if (!c.failed) stmt(&c, f->body, 0);
  return c.failed ? SPC_ERR_INTERNAL : SPC_OK;
}
