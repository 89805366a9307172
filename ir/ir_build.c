/* ir_build.c -- expression and statement builders.
 *
 * Operands are promoted (BOOL < I32 < I64 < U64 < F32 < F64 < C128) by
 * inserting IR_E_CAST nodes: arithmetic, min/max and bitwise operators
 * work on at least I32 (as C); a shift has the type of its promoted left
 * operand; comparisons compare in the common type and yield BOOL; && || !
 * and conditions convert their operands to BOOL.  Statements convert
 * their operands as C assignment does: to the variable's (element) type,
 * indices, lengths and builtin ranges to I64, for bounds to the loop
 * variable's type.  A misuse (an operator on the wrong types, a scalar
 * where an array is needed...) or an allocation failure marks f broken
 * and returns a placeholder; ir_verify reports why. */
#include "ir_internal.h"

static ir_ty max_ty(ir_ty a, ir_ty b) { return a > b ? a : b; }

/* Placeholders once broken (every builder returns these then). */
static ir_expr *dummy_e(ir_func *f) { return f ? &f->dummy_e : NULL; }
static ir_stmt *dummy_s(ir_func *f) { return f ? &f->dummy_s : NULL; }

/* f usable and its first n of the operands a, b, c present; else mark
 * f broken. */
static bool ready(ir_func *f, const char *what, int n, const void *a, const void *b,
                  const void *c) {
  if (!f || f->broken) return false;
  if ((n > 0 && !a) || (n > 1 && !b) || (n > 2 && !c)) {
    ir_misuse(f, "%s: an operand is NULL", what);
    return false;
  }
  return true;
}

static ir_expr *new_expr(ir_func *f, ir_expr_kind kind, ir_ty ty) {
  ir_expr *e = ir_arena(f, sizeof *e);
  if (!e) return dummy_e(f);
  e->kind = kind;
  e->ty = ty;
  e->var = -1;
  return e;
}

/* The variable v if it exists and is (not) an array; else misuse. */
static const ir_var_info *var_of(ir_func *f, const char *what, ir_var v, bool array) {
  const ir_var_info *vi = ir_var_get(f, v);
  if (!vi)
    ir_misuse(f, "%s: no variable %d", what, v);
  else if (vi->array != array)
    ir_misuse(f, "%s: %s is %s, expected %s", what, vi->name,
              vi->array ? "an array" : "a scalar", array ? "an array" : "a scalar");
  else
    return vi;
  return NULL;
}

/* ---- expressions --------------------------------------------------------- */

ir_expr *ir_const(ir_func *f, ir_ty ty, ir_val v) {
  if (!ready(f, "ir_const", 0, NULL, NULL, NULL)) return dummy_e(f);
  if (!ir_ty_valid(ty)) return ir_misuse(f, "ir_const: invalid type"), dummy_e(f);
  ir_expr *e = new_expr(f, IR_E_CONST, ty);
  e->v = v;
  return e;
}

ir_expr *ir_int(ir_func *f, int64_t v) { return ir_const(f, IR_I64, (ir_val){.i64 = v}); }
ir_expr *ir_f64(ir_func *f, double v) { return ir_const(f, IR_F64, (ir_val){.f64 = v}); }
ir_expr *ir_bool(ir_func *f, bool v) { return ir_const(f, IR_BOOL, (ir_val){.b = v}); }

ir_expr *ir_ref(ir_func *f, ir_var v) {
  if (!ready(f, "ir_ref", 0, NULL, NULL, NULL)) return dummy_e(f);
  const ir_var_info *vi = var_of(f, "ir_ref", v, false);
  if (!vi) return dummy_e(f);
  ir_expr *e = new_expr(f, IR_E_VAR, vi->ty);
  e->var = v;
  return e;
}

ir_expr *ir_cast(ir_func *f, ir_ty ty, ir_expr *a) {
  if (!ready(f, "ir_cast", 1, a, NULL, NULL)) return dummy_e(f);
  if (!ir_ty_valid(ty)) return ir_misuse(f, "ir_cast: invalid type"), dummy_e(f);
  if (a->ty == ty) return a;
  ir_expr *e = new_expr(f, IR_E_CAST, ty);
  e->a = a;
  return e;
}

/* An integer operand (index, length, bound) converted to ty. */
static ir_expr *int_operand(ir_func *f, const char *what, ir_expr *a, ir_ty ty) {
  if (!f || f->broken) return dummy_e(f);
  if (!a) return ir_misuse(f, "%s: an operand is NULL", what), dummy_e(f);
  if (!ir_ty_intb(a->ty))
    return ir_misuse(f, "%s: operand has type %s, expected an integer", what,
                     ir_ty_name(a->ty)),
           dummy_e(f);
  return ir_cast(f, ty, a);
}

ir_expr *ir_load(ir_func *f, ir_var arr, ir_expr *idx) {
  if (!ready(f, "ir_load", 1, idx, NULL, NULL)) return dummy_e(f);
  const ir_var_info *vi = var_of(f, "ir_load", arr, true);
  if (!vi) return dummy_e(f);
  ir_ty ty = vi->ty;
  idx = int_operand(f, "ir_load index", idx, IR_I64);
  ir_expr *e = new_expr(f, IR_E_LOAD, ty);
  e->var = arr;
  e->a = idx;
  return e;
}

ir_expr *ir_len(ir_func *f, ir_var arr) {
  if (!ready(f, "ir_len", 0, NULL, NULL, NULL)) return dummy_e(f);
  if (!var_of(f, "ir_len", arr, true)) return dummy_e(f);
  ir_expr *e = new_expr(f, IR_E_LEN, IR_I64);
  e->var = arr;
  return e;
}

static ir_expr *node2(ir_func *f, ir_expr_kind k, ir_op op, ir_ty ty, ir_expr *a,
                      ir_expr *b) {
  ir_expr *e = new_expr(f, k, ty);
  e->op = op;
  e->a = a;
  e->b = b;
  return e;
}

ir_expr *ir_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b) {
  if (!ready(f, "ir_bin", 2, a, b, NULL)) return dummy_e(f);
  if (!ir_op_binary(op))
    return ir_misuse(f, "ir_bin: %d is not a binary operator", (int)op), dummy_e(f);
  ir_ty ta = a->ty, tb = b->ty, t = max_ty(max_ty(ta, tb), IR_I32);
  switch (op) {
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV: break;
  case IR_REM:
  case IR_MIN:
  case IR_MAX:
    if (t == IR_C128) goto bad;
    break;
  case IR_BAND:
  case IR_BOR:
  case IR_BXOR:
    if (!ir_ty_intb(ta) || !ir_ty_intb(tb)) goto bad;
    break;
  case IR_SHL:
  case IR_SHR:
    if (!ir_ty_intb(ta) || !ir_ty_intb(tb)) goto bad;
    t = max_ty(ta, IR_I32);
    return node2(f, IR_E_BIN, op, t, ir_cast(f, t, a), ir_cast(f, max_ty(tb, IR_I32), b));
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_EQ:
  case IR_NE:
    t = max_ty(ta, tb);
    if (t == IR_C128 && op != IR_EQ && op != IR_NE) goto bad;
    return node2(f, IR_E_BIN, op, IR_BOOL, ir_cast(f, t, a), ir_cast(f, t, b));
  case IR_LAND:
  case IR_LOR:
    return node2(f, IR_E_BIN, op, IR_BOOL, ir_cast(f, IR_BOOL, a),
                 ir_cast(f, IR_BOOL, b));
  default: goto bad;
  }
  return node2(f, IR_E_BIN, op, t, ir_cast(f, t, a), ir_cast(f, t, b));
bad:
  ir_misuse(f, "ir_bin: operator %s does not apply to %s and %s", ir_op_name(op),
            ir_ty_name(ta), ir_ty_name(tb));
  return dummy_e(f);
}

ir_expr *ir_un(ir_func *f, ir_op op, ir_expr *a) {
  if (!ready(f, "ir_un", 1, a, NULL, NULL)) return dummy_e(f);
  ir_ty t = max_ty(a->ty, IR_I32);
  switch (op) {
  case IR_NEG: break;
  case IR_NOT: return node2(f, IR_E_UN, op, IR_BOOL, ir_cast(f, IR_BOOL, a), NULL);
  case IR_BNOT:
    if (!ir_ty_intb(a->ty)) goto bad;
    break;
  case IR_ABS:
    if (t == IR_C128) goto bad;
    break;
  default: ir_misuse(f, "ir_un: %d is not a unary operator", (int)op); return dummy_e(f);
  }
  return node2(f, IR_E_UN, op, t, ir_cast(f, t, a), NULL);
bad:
  ir_misuse(f, "ir_un: operator %s does not apply to %s", ir_op_name(op),
            ir_ty_name(a->ty));
  return dummy_e(f);
}

ir_expr *ir_select(ir_func *f, ir_expr *c, ir_expr *a, ir_expr *b) {
  if (!ready(f, "ir_select", 3, c, a, b)) return dummy_e(f);
  ir_ty t = max_ty(a->ty, b->ty);
  ir_expr *e = new_expr(f, IR_E_SELECT, t);
  e->c = ir_cast(f, IR_BOOL, c);
  e->a = ir_cast(f, t, a);
  e->b = ir_cast(f, t, b);
  return e;
}

/* ---- statements ---------------------------------------------------------- */

static ir_stmt *new_stmt(ir_func *f, ir_stmt_kind kind) {
  ir_stmt *s = ir_arena(f, sizeof *s);
  if (!s) return dummy_s(f);
  s->kind = kind;
  s->var = -1;
  return s;
}

ir_stmt *ir_block(ir_func *f) {
  if (!ready(f, "ir_block", 0, NULL, NULL, NULL)) return dummy_s(f);
  return new_stmt(f, IR_S_BLOCK);
}

ir_stmt *ir_add(ir_func *f, ir_stmt *block, ir_stmt *s) {
  if (!ready(f, "ir_add", 2, block, s, NULL)) return dummy_s(f);
  if (block->kind != IR_S_BLOCK)
    return ir_misuse(f, "ir_add: the target is not a block"), dummy_s(f);
  if (block->nkids == block->capkids) {
    int cap = block->capkids ? block->capkids * 2 : 4;
    ir_stmt **k = ir_arena(f, (size_t)cap * sizeof *k);
    if (!k) return dummy_s(f);
    for (int i = 0; i < block->nkids; i++) k[i] = block->kids[i];
    block->kids = k;
    block->capkids = cap;
  }
  block->kids[block->nkids++] = s;
  return s;
}

/* A block holding s, or s when it is one (NULL: a new empty block). */
static ir_stmt *as_block(ir_func *f, ir_stmt *s) {
  if (!s) return ir_block(f);
  if (s->kind == IR_S_BLOCK) return s;
  ir_stmt *b = ir_block(f);
  ir_add(f, b, s);
  return b;
}

static ir_stmt **kids(ir_func *f, ir_stmt *s, int n) {
  s->kids = ir_arena(f, (size_t)n * sizeof *s->kids);
  s->nkids = s->capkids = s->kids ? n : 0;
  return s->kids;
}

ir_stmt *ir_assign(ir_func *f, ir_var v, ir_expr *e) {
  if (!ready(f, "ir_assign", 1, e, NULL, NULL)) return dummy_s(f);
  const ir_var_info *vi = var_of(f, "ir_assign", v, false);
  if (!vi) return dummy_s(f);
  e = ir_cast(f, vi->ty, e);
  ir_stmt *s = new_stmt(f, IR_S_ASSIGN);
  s->var = v;
  s->a = e;
  return f->broken ? dummy_s(f) : s;
}

ir_stmt *ir_store(ir_func *f, ir_var arr, ir_expr *idx, ir_expr *e) {
  if (!ready(f, "ir_store", 2, idx, e, NULL)) return dummy_s(f);
  const ir_var_info *vi = var_of(f, "ir_store", arr, true);
  if (!vi) return dummy_s(f);
  if (vi->dir == IR_IN)
    return ir_misuse(f, "ir_store: %s is an IN array", vi->name), dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_STORE);
  s->var = arr;
  s->a = int_operand(f, "ir_store index", idx, IR_I64);
  s->b = ir_cast(f, vi->ty, e);
  return f->broken ? dummy_s(f) : s;
}

ir_stmt *ir_for(ir_func *f, ir_var v, ir_expr *lo, ir_expr *hi, ir_stmt *body) {
  if (!ready(f, "ir_for", 2, lo, hi, NULL)) return dummy_s(f);
  const ir_var_info *vi = var_of(f, "ir_for", v, false);
  if (!vi) return dummy_s(f);
  if (!ir_ty_int(vi->ty))
    return ir_misuse(f,
                     "ir_for: loop variable %s has type %s, expected an "
                     "integer",
                     vi->name, ir_ty_name(vi->ty)),
           dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_FOR);
  s->var = v;
  s->a = int_operand(f, "ir_for lower bound", lo, vi->ty);
  s->b = int_operand(f, "ir_for upper bound", hi, vi->ty);
  ir_stmt *b = as_block(f, body);
  if (f->broken || !kids(f, s, 1)) return dummy_s(f);
  s->kids[0] = b;
  return s;
}

ir_stmt *ir_while(ir_func *f, ir_expr *cond, ir_stmt *body) {
  if (!ready(f, "ir_while", 1, cond, NULL, NULL)) return dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_WHILE);
  s->a = ir_cast(f, IR_BOOL, cond);
  ir_stmt *b = as_block(f, body);
  if (f->broken || !kids(f, s, 1)) return dummy_s(f);
  s->kids[0] = b;
  return s;
}

ir_stmt *ir_if(ir_func *f, ir_expr *cond, ir_stmt *then, ir_stmt *els) {
  if (!ready(f, "ir_if", 1, cond, NULL, NULL)) return dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_IF);
  s->a = ir_cast(f, IR_BOOL, cond);
  ir_stmt *t = as_block(f, then), *e = els ? as_block(f, els) : NULL;
  if (f->broken || !kids(f, s, 2)) return dummy_s(f);
  s->kids[0] = t;
  s->kids[1] = e;
  return s;
}

/* An array the function owns (local or OUT), for alloc and free. */
static const ir_var_info *owned_array(ir_func *f, const char *what, ir_var v) {
  const ir_var_info *vi = var_of(f, what, v, true);
  if (vi && (vi->dir == IR_IN || vi->dir == IR_INOUT)) {
    ir_misuse(f,
              "%s: %s is a parameter the caller owns (only local and OUT "
              "arrays are allocated and freed)",
              what, vi->name);
    return NULL;
  }
  return vi;
}

ir_stmt *ir_alloc(ir_func *f, ir_var arr, ir_expr *len, bool zero) {
  if (!ready(f, "ir_alloc", 1, len, NULL, NULL)) return dummy_s(f);
  if (!owned_array(f, "ir_alloc", arr)) return dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_ALLOC);
  s->var = arr;
  s->a = int_operand(f, "ir_alloc length", len, IR_I64);
  s->zero = zero;
  return f->broken ? dummy_s(f) : s;
}

ir_stmt *ir_free(ir_func *f, ir_var arr) {
  if (!ready(f, "ir_free", 0, NULL, NULL, NULL)) return dummy_s(f);
  if (!owned_array(f, "ir_free", arr)) return dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_FREE);
  s->var = arr;
  return s;
}

/* The type argument k of builtin b converts to (-1: I64). */
static int builtin_arg_ty(ir_func *f, ir_builtin b, const ir_var *arrays, int k) {
  if ((b == IR_FILL || b == IR_SHIFT) && k == 2) return (int)ir_var_get(f, arrays[0])->ty;
  return -1;
}

ir_stmt *ir_call(ir_func *f, ir_builtin b, const ir_var *arrays, int narrays,
                 ir_expr *const *args, int nargs) {
  if (!ready(f, "ir_call", 0, NULL, NULL, NULL)) return dummy_s(f);
  if ((int)b < 0 || b >= IR_NBUILTINS)
    return ir_misuse(f, "ir_call: no builtin %d", (int)b), dummy_s(f);
  const ir_builtin_info *bi = &ir_builtins[b];
  if ((bi->narrays >= 0 ? narrays != bi->narrays : narrays < 2) || nargs != bi->nargs ||
      (narrays && !arrays) || (nargs && !args))
    return ir_misuse(f, "ir_call %s: %d arrays and %d scalars given", bi->name, narrays,
                     nargs),
           dummy_s(f);
  for (int k = 0; k < narrays; k++)
    if (!var_of(f, "ir_call", arrays[k], true)) return dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_BUILTIN);
  s->builtin = b;
  s->vars = ir_arena(f, (size_t)(narrays ? narrays : 1) * sizeof *s->vars);
  s->args = ir_arena(f, (size_t)(nargs ? nargs : 1) * sizeof *s->args);
  if (f->broken) return dummy_s(f);
  for (int k = 0; k < narrays; k++) s->vars[k] = arrays[k];
  for (int k = 0; k < nargs; k++) {
    int t = builtin_arg_ty(f, b, arrays, k);
    s->args[k] = t >= 0 ? ir_cast(f, (ir_ty)t, args[k])
                        : int_operand(f, bi->name, args[k], IR_I64);
  }
  s->nvars = narrays;
  s->nargs = nargs;
  return f->broken ? dummy_s(f) : s;
}

ir_stmt *ir_fail(ir_func *f, spc_status code, const char *msg, ir_expr *const *args,
                 int nargs) {
  if (!ready(f, "ir_fail", 1, msg, NULL, NULL)) return dummy_s(f);
  const char *why = ir_fail_msg_check(msg, nargs);
  if (why) return ir_misuse(f, "ir_fail \"%s\": %s", msg, why), dummy_s(f);
  if (code >= 0)
    return ir_misuse(f, "ir_fail: status %d is not an error", (int)code), dummy_s(f);
  if (nargs && !args) return ir_misuse(f, "ir_fail: args is NULL"), dummy_s(f);
  ir_stmt *s = new_stmt(f, IR_S_FAIL);
  s->code = code;
  s->msg = ir_arena_str(f, msg);
  s->args = ir_arena(f, (size_t)(nargs ? nargs : 1) * sizeof *s->args);
  if (f->broken) return dummy_s(f);
  for (int k = 0; k < nargs; k++)
    s->args[k] = int_operand(f, "ir_fail argument", args[k], IR_I64);
  s->nargs = nargs;
  return f->broken ? dummy_s(f) : s;
}

ir_stmt *ir_break(ir_func *f) {
  if (!ready(f, "ir_break", 0, NULL, NULL, NULL)) return dummy_s(f);
  return new_stmt(f, IR_S_BREAK);
}

ir_stmt *ir_body(ir_stmt *loop) {
  if (!loop) return NULL;
  if ((loop->kind == IR_S_FOR || loop->kind == IR_S_WHILE) && loop->nkids > 0)
    return loop->kids[0];
  return loop->kind == IR_S_BLOCK ? loop : NULL; /* a placeholder */
}

ir_stmt *ir_then(ir_stmt *s) {
  if (!s) return NULL;
  if (s->kind == IR_S_IF && s->nkids > 0) return s->kids[0];
  return s->kind == IR_S_BLOCK ? s : NULL;
}

ir_stmt *ir_else(ir_func *f, ir_stmt *s) {
  if (!ready(f, "ir_else", 1, s, NULL, NULL)) return dummy_s(f);
  if (s->kind != IR_S_IF || s->nkids < 2)
    return ir_misuse(f, "ir_else: not an if statement"), dummy_s(f);
  if (!s->kids[1]) {
    ir_stmt *b = ir_block(f);
    if (f->broken) return dummy_s(f);
    s->kids[1] = b;
  }
  return s->kids[1];
}

/* ---- builtins and FAIL messages ------------------------------------------ */

const ir_builtin_info ir_builtins[IR_NBUILTINS] = {
    [IR_FILL] = {"fill", 1, 3},
    [IR_PREFIX_SUM] = {"prefix_sum", 1, 2},
    [IR_SHIFT] = {"shift", 1, 3},
    [IR_COPY] = {"copy", 2, 3},
    [IR_SORT_PERM] = {"sort_perm", -1, 1},
    [IR_MOVE] = {"move", 2, 0},
    [IR_SPMV_LANES] = {"spmv_lanes", 4, 3},
    [IR_SPMV_LANES_SAME] = {"spmv_lanes_same", 4, 3},
};

const char *ir_fail_msg_check(const char *msg, int nargs) {
  if (!msg) return "no message";
  int n = 0;
  for (const char *p = msg; *p; p++) {
    if (*p != '%') continue;
    if (p[1] == '%')
      p++;
    else if (p[1] == 'l' && p[2] == 'l' && p[3] == 'd')
      p += 3, n++;
    else
      return "the only conversions allowed are %lld and %%";
  }
  if (n != nargs) return "the number of %lld differs from the number of arguments";
  return NULL;
}
