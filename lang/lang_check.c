/* lang_check.c -- the type checker for expressions.
 *
 * Rules (docs/languages.md, "Types"):
 *   - integer literals are i32 when they fit, else i64 (u64 above
 *     INT64_MAX); float literals f64; constants (parameters) like literals;
 *   - arithmetic (+ - * / % min max abs, unary -) on numbers, not bool; the
 *     result has the wider operand type (IR promotion order);
 *   - %, shifts, & | ^ ~ and array indices need integers;
 *   - comparisons give bool; && || ! and conditions take bool or integers;
 *   - counters (#i) only where env allows, over index variables only. */
#include "spc_lang.h"
#include <stdio.h>
#include <string.h>

bool lang_lookup(const lang_ast *ast, const lang_env *env, const char *name,
                 lang_sym *s, int *local) {
  memset(s, 0, sizeof *s);
  s->var = -1;
  *local = -1;
  for (int i = ast ? ast->nlocals - 1 : -1; i >= 0; i--)
    if (!strcmp(ast->locals[i].name, name)) {
      s->kind = ast->locals[i].type.array ? LANG_SYM_ARRAY : LANG_SYM_SCALAR;
      s->type = ast->locals[i].type;
      s->type.array = false;
      *local = i;
      return true;
    }
  if (!env || !env->resolve || !env->resolve(env->ctx, name, s)) {
    memset(s, 0, sizeof *s);
    s->var = -1;
    return false;
  }
  return s->kind != LANG_SYM_NONE;
}

typedef struct ck {
  lang_ast *ast;
  const lang_env *env;
  spc_error *err;
} ck;

#define fail(c, n, ...) lang_node_error((c)->ast, (n), (c)->err, __VA_ARGS__)

static const char *tys(lang_type t, char *b) { return lang_type_str(t, b, 48); }

static const char *op_str(int op) {
  static const char *const s[] = {
      [IR_ADD] = "+",   [IR_SUB] = "-",  [IR_MUL] = "*",   [IR_DIV] = "/",
      [IR_REM] = "%",   [IR_SHL] = "<<", [IR_SHR] = ">>",  [IR_BAND] = "&",
      [IR_BOR] = "|",   [IR_BXOR] = "^", [IR_LT] = "<",    [IR_LE] = "<=",
      [IR_GT] = ">",    [IR_GE] = ">=",  [IR_EQ] = "==",   [IR_NE] = "!=",
      [IR_LAND] = "&&", [IR_LOR] = "||", [IR_MIN] = "min", [IR_MAX] = "max",
      [IR_NEG] = "-",   [IR_NOT] = "!",  [IR_BNOT] = "~",  [IR_ABS] = "abs"};
  return op >= 0 && op <= IR_ABS ? s[op] : "?";
}

static bool is_num(lang_type t) {
  return !t.array && t.ty != IR_BOOL && t.ty < IR_NTYPES;
}
static bool is_int(lang_type t) { return !t.array && lang_ty_is_int(t.ty); }
static bool is_cond(lang_type t) {
  return !t.array && (t.ty == IR_BOOL || is_int(t));
}

/* The wider of two numeric types; the symbolic name survives when both
 * share it or one side is a constant. */
static lang_type promote(lang_type a, lang_type b) {
  lang_type r = {.ty = a.ty > b.ty ? a.ty : b.ty, .lit = a.lit && b.lit};
  lang_tname s = a.sym == b.sym ? a.sym
                 : b.lit        ? a.sym
                 : a.lit        ? b.sym
                                : LT_NONE;
  if (s != LT_NONE && (s == a.sym ? a.ty : b.ty) == r.ty) r.sym = s;
  return r;
}

static spc_status check(ck *c, lang_node *n);

static spc_status need(ck *c, lang_node *n, bool ok, const char *what) {
  char b[48];
  if (ok) return SPC_OK;
  return fail(c, n, "%s, found %s", what, tys(n->type, b));
}

static spc_status check_name(ck *c, lang_node *n) {
  lang_sym s;
  if (!lang_lookup(c->ast, c->env, n->name, &s, &n->local))
    return fail(c, n, "unknown name '%s'", n->name);
  switch (s.kind) {
  case LANG_SYM_ARRAY:
    if (n->kind == LN_NAME)
      return fail(c, n, "'%s' is an array, used here as a scalar", n->name);
    n->type = s.type;
    n->type.array = false;
    n->type.lit = false;
    return SPC_OK;
  case LANG_SYM_CONST:
    n->type = (lang_type){
        .ty = s.value >= INT32_MIN && s.value <= INT32_MAX ? IR_I32 : IR_I64,
        .lit = true};
    break;
  default:
    n->type = s.type;
    n->type.array = false;
    n->type.lit = false;
    break;
  }
  if (n->kind == LN_INDEX)
    return fail(c, n, "'%s' is a scalar, used here as an array", n->name);
  return SPC_OK;
}

static spc_status check_call(ck *c, lang_node *n) {
  spc_status st;
  int want = n->fn == LF_MIN || n->fn == LF_MAX ? 2 : 1;
  if (n->nkids < want || (want == 1 && n->nkids > 1))
    return fail(c, n, "%s takes %s%d argument%s, found %d", n->name,
                want == 2 ? "at least " : "", want, want == 1 ? "" : "s",
                n->nkids);
  if (n->fn == LF_LEN) {
    lang_node *a = n->kids[0];
    lang_sym s;
    if (a->kind != LN_NAME) return fail(c, a, "len takes an array name");
    if (!lang_lookup(c->ast, c->env, a->name, &s, &a->local))
      return fail(c, a, "unknown name '%s'", a->name);
    if (s.kind != LANG_SYM_ARRAY)
      return fail(c, a, "'%s' is a scalar, used here as an array", a->name);
    a->type = s.type;
    a->type.array = true;
    n->type = (lang_type){.ty = IR_I64};
    return SPC_OK;
  }
  for (int i = 0; i < n->nkids; i++)
    if ((st = check(c, n->kids[i])) != SPC_OK) return st;
  if (n->fn == LF_CAST) {
    lang_node *a = n->kids[0];
    if ((st = need(c, a, !a->type.array && a->type.ty != IR_C128,
                   "a cast needs a real number or bool")) != SPC_OK)
      return st;
    n->type = lang_type_of(c->env, n->tname);
    n->type.lit = a->type.lit;
    return SPC_OK;
  }
  n->type = n->kids[0]->type;
  for (int i = 0; i < n->nkids; i++) {
    lang_node *a = n->kids[i];
    char what[64];
    snprintf(what, sizeof what, "argument of %s must be a real number",
             n->name);
    if ((st = need(c, a, is_num(a->type) && a->type.ty != IR_C128, what)))
      return st;
    if (i) n->type = promote(n->type, a->type);
  }
  return SPC_OK;
}

static spc_status check_unary(ck *c, lang_node *n) {
  spc_status st = check(c, n->a);
  if (st != SPC_OK) return st;
  lang_type t = n->a->type;
  char what[64];
  snprintf(what, sizeof what, "operand of '%s' must be %s", op_str(n->op),
           n->op == IR_NEG   ? "a number"
           : n->op == IR_NOT ? "bool or an integer"
                             : "an integer");
  bool ok = n->op == IR_NEG   ? is_num(t)
            : n->op == IR_NOT ? is_cond(t)
                              : is_int(t);
  if ((st = need(c, n->a, ok, what)) != SPC_OK) return st;
  n->type = n->op == IR_NOT ? (lang_type){.ty = IR_BOOL, .lit = t.lit} : t;
  if (n->op == IR_NEG && t.sym != LT_VALUE) n->type.sym = LT_NONE;
  return SPC_OK;
}

static spc_status check_binary(ck *c, lang_node *n) {
  spc_status st;
  if ((st = check(c, n->a)) != SPC_OK || (st = check(c, n->b)) != SPC_OK)
    return st;
  lang_type a = n->a->type, b = n->b->type;
  int op = n->op;
  char what[80];
  bool want_int = op == IR_REM || op == IR_SHL || op == IR_SHR ||
                  op == IR_BAND || op == IR_BOR || op == IR_BXOR;
  bool logical = op == IR_LAND || op == IR_LOR;
  bool equality = op == IR_EQ || op == IR_NE;
  bool cmp =
      equality || op == IR_LT || op == IR_LE || op == IR_GT || op == IR_GE;
  snprintf(what, sizeof what, "operand of '%s' must be %s", op_str(op),
           want_int  ? "an integer"
           : logical ? "bool or an integer"
                     : "a number");
  for (int k = 0; k < 2; k++) {
    lang_node *x = k ? n->b : n->a;
    lang_type t = x->type;
    bool ok = want_int   ? is_int(t)
              : logical  ? is_cond(t)
              : equality ? !t.array
                         : is_num(t);
    if (ok && (op == IR_LT || op == IR_LE || op == IR_GT || op == IR_GE))
      ok = t.ty != IR_C128;
    if ((st = need(c, x, ok, what)) != SPC_OK) return st;
  }
  if (equality && (a.ty == IR_BOOL) != (b.ty == IR_BOOL))
    return fail(c, n, "'%s' compares bool with a number", op_str(op));
  if (cmp || logical) {
    n->type = (lang_type){.ty = IR_BOOL, .lit = a.lit && b.lit};
    return SPC_OK;
  }
  if (op == IR_SHL || op == IR_SHR) { /* the type of the left operand */
    n->type = a;
    n->type.lit = a.lit && b.lit;
    return SPC_OK;
  }
  n->type = promote(a, b);
  return SPC_OK;
}

static spc_status check_cond(ck *c, lang_node *n) {
  spc_status st;
  if ((st = check(c, n->a)) != SPC_OK || (st = check(c, n->b)) != SPC_OK ||
      (st = check(c, n->c)) != SPC_OK)
    return st;
  if ((st = need(c, n->a, is_cond(n->a->type),
                 "condition of '?:' must be bool or an integer")))
    return st;
  lang_type b = n->b->type, d = n->c->type;
  if ((b.ty == IR_BOOL) != (d.ty == IR_BOOL) || b.array || d.array)
    return fail(c, n, "the branches of '?:' have incompatible types");
  n->type = b.ty == IR_BOOL ? (lang_type){.ty = IR_BOOL} : promote(b, d);
  n->type.lit = n->a->type.lit && b.lit && d.lit;
  return SPC_OK;
}

static spc_status check_counter(ck *c, lang_node *n) {
  if (!c->env || !c->env->allow_counters)
    return fail(c, n,
                "counters (#i) are only allowed in coordinate "
                "remappings");
  for (int i = 0; i < n->nkids; i++) {
    lang_node *k = n->kids[i];
    lang_sym s;
    if (!lang_lookup(c->ast, c->env, k->name, &s, &k->local))
      return fail(c, k, "unknown name '%s'", k->name);
    if (s.kind != LANG_SYM_INDEX)
      return fail(c, k,
                  "counter over '%s': counters count source indices "
                  "only",
                  k->name);
    k->type = s.type;
    for (int j = 0; j < i; j++)
      if (!strcmp(n->kids[j]->name, k->name))
        return fail(c, k, "index '%s' appears twice in the counter", k->name);
  }
  n->type = (lang_type){.ty = IR_I64};
  return SPC_OK;
}

static spc_status check(ck *c, lang_node *n) {
  switch (n->kind) {
  case LN_INT:
    n->type = (lang_type){.ty = n->is_u64              ? IR_U64
                                : n->ival <= INT32_MAX ? IR_I32
                                                       : IR_I64,
                          .lit = true};
    return SPC_OK;
  case LN_FLOAT:
    n->type = (lang_type){.ty = IR_F64, .lit = true};
    return SPC_OK;
  case LN_BOOL:
    n->type = (lang_type){.ty = IR_BOOL, .lit = true};
    return SPC_OK;
  case LN_STRING:
    return fail(c, n, "a string is only allowed as fail's message");
  case LN_NAME: return check_name(c, n);
  case LN_INDEX: {
    spc_status st = check_name(c, n);
    if (st == SPC_OK) st = check(c, n->a);
    if (st == SPC_OK)
      st = need(c, n->a, is_int(n->a->type), "array index must be an integer");
    return st;
  }
  case LN_CALL: return check_call(c, n);
  case LN_UNARY: return check_unary(c, n);
  case LN_BINARY: return check_binary(c, n);
  case LN_COND: return check_cond(c, n);
  case LN_COUNTER: return check_counter(c, n);
  default: return fail(c, n, "a statement where an expression was expected");
  }
}

spc_status lang_check_expr(lang_ast *ast, lang_node *e, const lang_env *env,
                           spc_error *err) {
  ck c = {ast, env, err};
  return check(&c, e);
}
