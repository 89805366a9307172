/* ir_emit_expr.c -- IR expressions as C99, with the semantics of ir_run.
 *
 * Plain C operators where C means the same thing (unsigned and float
 * arithmetic, comparisons, bitwise and logical operators, ?:); the
 * runtime's helpers (ir_rt.h) where it does not: signed +, -, *, /, %,
 * <<, >>, unary - and abs (wrap-around, INT_MIN / -1), min and max (NaN
 * rule), complex arithmetic, float-to-integer casts (saturating).  One
 * exception keeps loops readable: `i + 1` stays plain inside `for i`
 * when the body never assigns i (i < hi, so i + 1 cannot overflow).
 * Parentheses follow C precedence, plus those gcc's -Wparentheses asks
 * for around bitwise, shift and logical operands.  What compilers call
 * suspicious in hand-written code (x < x, unsigned >= 0, ~ of a bool, a
 * guarded x / 0) is well defined here: the emitted function silences
 * those warnings (SPC_GEN_BEGIN, ir_emit_prelude.c). */
#include "ir_emit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *emit_cty(ir_ty t) {
  static const char *const n[] = {"bool",  "int32_t", "int64_t", "uint64_t",
                                  "float", "double",  "spc_c128"};
  return ir_ty_valid(t) ? n[t] : "void";
}

static const char *sfx(ir_ty t) { return ir_ty_short(t); }

static void put(ectx *c, const char *s) { spc_str_add(c->o, s, strlen(s)); }

/* ---- constants ----------------------------------------------------------- */

static bool const_negative(const ir_expr *x) {
  switch (x->ty) {
  case IR_I32: return x->v.i32 < 0 && x->v.i32 != INT32_MIN;
  case IR_I64: return x->v.i64 < 0 && x->v.i64 != INT64_MIN;
  case IR_F32: return !isnan(x->v.f32) && signbit(x->v.f32);
  case IR_F64: return !isnan(x->v.f64) && signbit(x->v.f64);
  default: return false;
  }
}

static void real(ectx *c, double x, bool f32) {
  if (isnan(x)) {
    if (f32) {
      float v = (float)x;
      uint32_t b;
      memcpy(&b, &v, 4);
      spc_str_addf(c->o, "spc_f32_from_bits(0x%08xu)", (unsigned)b);
    } else {
      uint64_t b;
      memcpy(&b, &x, 8);
      spc_str_addf(c->o, "spc_f64_from_bits(UINT64_C(0x%016llx))", (unsigned long long)b);
    }
    return;
  }
  if (isinf(x)) {
    spc_str_addf(c->o, "%s%s", x < 0 ? "-" : "", f32 ? "INFINITY" : "HUGE_VAL");
    return;
  }
  char buf[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, x);
    if (f32 ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
  }
  if (!strpbrk(buf, ".e")) strcat(buf, ".0");
  spc_str_addf(c->o, "%s%s", buf, f32 ? "f" : "");
}

static void constant(ectx *c, const ir_expr *x) {
  switch (x->ty) {
  case IR_BOOL: put(c, x->v.b ? "true" : "false"); return;
  case IR_I32:
    if (x->v.i32 == INT32_MIN)
      put(c, "INT32_MIN");
    else
      spc_str_addf(c->o, "%d", (int)x->v.i32);
    return;
  case IR_I64:
    if (x->v.i64 == INT64_MIN)
      put(c, "INT64_MIN");
    else
      spc_str_addf(c->o, "%lld", (long long)x->v.i64);
    return;
  case IR_U64: spc_str_addf(c->o, "UINT64_C(%llu)", (unsigned long long)x->v.u64); return;
  case IR_F32: real(c, x->v.f32, true); return;
  case IR_F64: real(c, x->v.f64, false); return;
  default:
    put(c, "spc_c128_make(");
    real(c, x->v.c128[0], false);
    put(c, ", ");
    real(c, x->v.c128[1], false);
    put(c, ")");
    return;
  }
}

/* ---- how each node is written -------------------------------------------- */

typedef enum form {
  F_INFIX, /* a op b, or op a */
  F_CALL,  /* name(a, b) */
  F_NCALL, /* !name(a, b) (complex !=) */
  F_SAME   /* the operand itself (abs of unsigned) */
} form;

static bool steady_var(const ectx *c, const ir_expr *x) {
  if (x->kind != IR_E_VAR) return false;
  for (const emit_loop *l = c->loops; l; l = l->up)
    if (l->var == x->var) return l->steady;
  return false;
}

/* Bounds of an integer expression, when known and within +-2^62 (so
 * sums and small products of two of them cannot overflow int64_t). */
#define RANGE_MAX ((int64_t)1 << 62)
static bool range(const ir_expr *x, int64_t *lo, int64_t *hi) {
  int64_t a, b, c, d;
  if (x->ty == IR_BOOL) return *lo = 0, *hi = 1, true;
  switch (x->kind) {
  case IR_E_CONST: {
    int64_t v = x->ty == IR_I32    ? x->v.i32
                : x->ty == IR_I64  ? x->v.i64
                : x->ty == IR_BOOL ? x->v.b
                                   : RANGE_MAX + 1;
    if (v > RANGE_MAX || v < -RANGE_MAX) return false;
    *lo = *hi = v;
    return true;
  }
  case IR_E_LEN: *lo = 0, *hi = RANGE_MAX; return true; /* lengths of real arrays */
  case IR_E_LOAD:
  case IR_E_VAR:
    if (x->ty == IR_I32) return *lo = INT32_MIN, *hi = INT32_MAX, true;
    return false;
  case IR_E_CAST:
    if (x->a->ty != IR_BOOL && x->a->ty != IR_I32) return false;
    return range(x->a, lo, hi);
  case IR_E_BIN:
    if (!ir_ty_signed(x->ty) || !range(x->a, &a, &b) || !range(x->b, &c, &d))
      return false;
    if (x->op == IR_ADD)
      *lo = a + c, *hi = b + d;
    else if (x->op == IR_SUB)
      *lo = a - d, *hi = b - c;
    else if (x->op == IR_MUL && a >= -INT32_MAX && b <= INT32_MAX && c >= -INT32_MAX &&
             d <= INT32_MAX) {
      int64_t p[4] = {a * c, a * d, b * c, b * d};
      *lo = *hi = p[0];
      for (int k = 1; k < 4; k++)
        *lo = p[k] < *lo ? p[k] : *lo, *hi = p[k] > *hi ? p[k] : *hi;
    } else
      return false;
    return *lo >= -RANGE_MAX && *hi <= RANGE_MAX;
  default: return false;
  }
}

/* Whether signed +, -, * of x cannot overflow its type: then plain C. */
static bool no_overflow(const ir_expr *x) {
  int64_t lo, hi;
  if (x->op != IR_ADD && x->op != IR_SUB && x->op != IR_MUL) return false;
  if (!range(x, &lo, &hi)) return false;
  return x->ty == IR_I64 || (lo >= INT32_MIN && hi <= INT32_MAX);
}

static bool is_const_int(const ir_expr *x, int64_t v) {
  return x->kind == IR_E_CONST &&
         ((x->ty == IR_I64 && x->v.i64 == v) || (x->ty == IR_I32 && x->v.i32 == v));
}

/* Whether x is an integer constant, seen through integer casts that keep
 * its value (it fits 32 bits): *v the value. */
static bool const_int_value(const ir_expr *x, int64_t *v) {
  while (x->kind == IR_E_CAST && ir_ty_int(x->ty) && ir_ty_int(x->a->ty) && x->ty != IR_U64 &&
         x->a->ty != IR_U64)
    x = x->a;
  if (x->kind != IR_E_CONST) return false;
  if (x->ty == IR_I32)
    *v = x->v.i32;
  else if (x->ty == IR_I64 && x->v.i64 >= INT32_MIN && x->v.i64 <= INT32_MAX)
    *v = x->v.i64;
  else
    return false;
  return true;
}

/* Form of a binary node; *name receives the helper's name for calls. */
static form bin_form(const ectx *c, const ir_expr *x, char *name, size_t n) {
  static const char *const hname[] = {
      [IR_ADD] = "add", [IR_SUB] = "sub", [IR_MUL] = "mul",
      [IR_DIV] = "div", [IR_REM] = "rem", [IR_SHL] = "shl",
      [IR_SHR] = "shr", [IR_MIN] = "min", [IR_MAX] = "max"};
  ir_ty t = x->a->ty;
  ir_op op = x->op;
  if (op == IR_MIN || op == IR_MAX) {
    snprintf(name, n, "spc_%s_%s", hname[op], sfx(t));
    return F_CALL;
  }
  if (t == IR_C128 && op <= IR_DIV) {
    snprintf(name, n, "spc_c128_%s", hname[op]);
    return F_CALL;
  }
  if (t == IR_C128 && (op == IR_EQ || op == IR_NE)) {
    snprintf(name, n, "spc_c128_eq");
    return op == IR_EQ ? F_CALL : F_NCALL;
  }
  if (ir_ty_float(t) && op == IR_REM) {
    snprintf(name, n, "%s", t == IR_F32 ? "fmodf" : "fmod");
    return F_CALL;
  }
  if (ir_ty_signed(t) && op <= IR_SHR) {
    if (op == IR_ADD && steady_var(c, x->a) && is_const_int(x->b, 1)) return F_INFIX;
    if (no_overflow(x)) return F_INFIX;
    /* a / k, a % k by a constant other than 0 and -1: C's operators are the
     * helpers' (which only special-case -1), and the compiler sees the
     * constant (shifts for a power of two; through the helper GCC kept two
     * 64-bit idivs an entry in COO to BCSR 4x4's place loop) */
    int64_t k;
    if ((op == IR_DIV || op == IR_REM) && const_int_value(x->b, &k) && k != 0 && k != -1)
      return F_INFIX;
    snprintf(name, n, "spc_%s_%s", hname[op], sfx(t));
    return F_CALL;
  }
  return F_INFIX;
}

static form un_form(const ir_expr *x, char *name, size_t n) {
  ir_ty t = x->ty;
  if (x->op == IR_NEG && (ir_ty_signed(t) || t == IR_C128)) {
    if (t == IR_C128)
      snprintf(name, n, "spc_c128_neg");
    else
      snprintf(name, n, "spc_neg_%s", sfx(t));
    return F_CALL;
  }
  if (x->op == IR_ABS) {
    if (t == IR_U64) return F_SAME;
    snprintf(name, n, "%s",
             t == IR_F32   ? "fabsf"
             : t == IR_F64 ? "fabs"
             : t == IR_I32 ? "spc_abs_i32"
                           : "spc_abs_i64");
    return F_CALL;
  }
  return F_INFIX;
}

/* Casts: a call (helper), a C cast `(T)a`, `a != 0`, or `a.re`. */
typedef enum cast_form { C_CALL, C_CAST, C_NZ, C_RE, C_RE_CAST } cast_form;

static cast_form cast_form_of(const ir_expr *x, const char **name) {
  ir_ty from = x->a->ty, to = x->ty;
  *name = NULL;
  if (to == IR_BOOL) {
    if (from == IR_C128) return *name = "spc_c128_nz", C_CALL;
    return C_NZ;
  }
  if (to == IR_C128) return *name = "spc_c128_make", C_CALL;
  if (ir_ty_int(to) && (ir_ty_float(from) || from == IR_C128)) {
    *name = to == IR_I32   ? "spc_f64_to_i32"
            : to == IR_I64 ? "spc_f64_to_i64"
                           : "spc_f64_to_u64";
    return C_CALL;
  }
  if (from == IR_C128) return to == IR_F64 ? C_RE : C_RE_CAST;
  return C_CAST;
}

/* Precedence of x as emitted. */
static int prec(const ectx *c, const ir_expr *x) {
  char name[64];
  const char *cn;
  switch (x->kind) {
  case IR_E_CONST: return const_negative(x) ? 14 : 16;
  case IR_E_BIN:
    switch (bin_form(c, x, name, sizeof name)) {
    case F_CALL: return 16;
    case F_NCALL: return 14;
    default: return ir_prec_bin(x->op);
    }
  case IR_E_UN:
    switch (un_form(x, name, sizeof name)) {
    case F_CALL: return 16;
    case F_SAME: return prec(c, x->a);
    default: return 14;
    }
  case IR_E_CAST:
    switch (cast_form_of(x, &cn)) {
    case C_NZ: return 9;
    case C_CAST:
    case C_RE_CAST: return 14;
    default: return 16;
    }
  case IR_E_SELECT: return 3;
  default: return 16;
  }
}

/* ---- emission ------------------------------------------------------------ */

static bool is_infix_bin(const ectx *c, const ir_expr *x) {
  char name[64];
  return x->kind == IR_E_BIN && bin_form(c, x, name, sizeof name) == F_INFIX;
}

/* Minimum precedence for an operand of infix x (left or right), adding
 * the parentheses -Wparentheses wants. */
static int operand_min(const ectx *c, const ir_expr *x, const ir_expr *o, bool right) {
  int p = ir_prec_bin(x->op), q = prec(c, o);
  bool picky = p >= 6 && p <= 11 && p != 9 && p != 10; /* shifts, bitwise */
  bool chain = is_infix_bin(c, o) && o->op == x->op && p <= 8 && !right; /* a & b & c */
  if (picky && q < 14 && !chain) return 17;
  if ((p == 9 || p == 10) && q >= 4 && q <= 10) return 17; /* a < b == c */
  if (x->op == IR_LOR && q == 5) return 17;                /* a || (b && c) */
  if ((p == 9 || p == 10) && q == 14 && o->kind != IR_E_CONST && o->kind != IR_E_CAST)
    return 17; /* (!a) == b, (-a) < b: not a warning for all, but clearer */
  return right ? p + 1 : p;
}

/* Whether e might fold to a constant in the compiler's front end: it
 * reads no variable, or it converts an integer (b && false is 0). */
static bool may_fold(const ir_expr *e) {
  switch (e->kind) {
  case IR_E_VAR:
  case IR_E_LOAD:
  case IR_E_LEN: return false;
  case IR_E_CONST: return true;
  case IR_E_CAST: return ir_ty_intb(e->a->ty) || may_fold(e->a);
  default:
    return (!e->a || may_fold(e->a)) && (!e->b || may_fold(e->b)) &&
           (!e->c || may_fold(e->c));
  }
}

/* The left operand of a float subtraction that might fold to 0.0, hidden
 * from the compiler: gcc 12 folds 0.0 - y into -y when y cannot be -0.0
 * ((double)i, fabs(x)), which is -0.0 for y = +0.0 (a wrong sign). */
static bool opaque_sub(const ir_expr *x, const ir_expr *o) {
  return x->op == IR_SUB && ir_ty_float(o->ty) && o == x->a && may_fold(o);
}

static void operand(ectx *c, const ir_expr *x, const ir_expr *o, bool right) {
  if (opaque_sub(x, o)) {
    spc_str_addf(c->o, "spc_opaque_%s(", sfx(o->ty));
    emit_expr(c, o, 0);
    put(c, ")");
    return;
  }
  emit_expr(c, o, operand_min(c, x, o, right));
}

static void call2(ectx *c, const char *name, const ir_expr *a, const ir_expr *b) {
  spc_str_addf(c->o, "%s(", name);
  emit_expr(c, a, 0);
  if (b) {
    put(c, ", ");
    emit_expr(c, b, 0);
  }
  put(c, ")");
}

static void bin_plain(ectx *c, const ir_expr *x);

/* check: an integer division's divisor or a shift's count tested first
 * (the interpreter's failures; C leaves them undefined). */
static bool bin_checked(ectx *c, const ir_expr *x) {
  ir_ty t = x->a->ty;
  if (!c->check || t == IR_BOOL || ir_ty_float(t) || t == IR_C128) return false;
  bool div = x->op == IR_DIV || x->op == IR_REM, sh = x->op == IR_SHL || x->op == IR_SHR;
  if (!div && !sh) return false;
  int64_t w = t == IR_I32 ? 32 : 64, k;
  if (x->b->kind == IR_E_CONST && (x->b->ty == IR_I32 || x->b->ty == IR_I64)) {
    k = x->b->ty == IR_I32 ? x->b->v.i32 : x->b->v.i64;
    if (div ? k != 0 : k >= 0 && k < w) return false;
  }
  c->flt_used = c->flt_pending = true;
  spc_str_addf(c->o, div ? "(spc_rt_divisor((int64_t)(" : "(spc_rt_count((int64_t)(");
  emit_expr(c, x->b, 0);
  if (div)
    spc_str_addf(c->o, "), &%s) ? ", c->flt_a);
  else
    spc_str_addf(c->o, "), %lld, &%s) ? ", (long long)w, c->flt_a);
  return true;
}

static void bin(ectx *c, const ir_expr *x) {
  if (bin_checked(c, x)) {
    put(c, "(");
    bin_plain(c, x);
    put(c, ") : 0)");
    return;
  }
  bin_plain(c, x);
}

static void bin_plain(ectx *c, const ir_expr *x) {
  char name[64];
  switch (bin_form(c, x, name, sizeof name)) {
  case F_NCALL: put(c, "!"); /* fall through */
  case F_CALL: call2(c, name, x->a, x->b); return;
  default: break;
  }
  operand(c, x, x->a, false);
  spc_str_addf(c->o, " %s ", ir_op_name(x->op));
  operand(c, x, x->b, true);
}

static void cast(ectx *c, const ir_expr *x) {
  const char *name;
  switch (cast_form_of(x, &name)) {
  case C_CALL:
    if (x->ty == IR_C128) { /* spc_c128_make((double)a, 0.0) */
      put(c, "spc_c128_make(");
      if (x->a->ty != IR_F64) put(c, "(double)");
      emit_expr(c, x->a, x->a->ty != IR_F64 ? 14 : 0);
      put(c, ", 0.0)");
      return;
    }
    spc_str_addf(c->o, "%s(", name);
    emit_expr(c, x->a, x->a->ty == IR_C128 && x->ty != IR_BOOL ? 16 : 0);
    put(c, x->a->ty == IR_C128 && x->ty != IR_BOOL ? ".re)" : ")");
    return;
  case C_NZ:
    emit_expr(c, x->a, 10);
    put(c, " != 0");
    return;
  case C_RE:
    emit_expr(c, x->a, 16);
    put(c, ".re");
    return;
  case C_RE_CAST:
    spc_str_addf(c->o, "(%s)", emit_cty(x->ty));
    emit_expr(c, x->a, 16);
    put(c, ".re");
    return;
  case C_CAST:
    spc_str_addf(c->o, "(%s)", emit_cty(x->ty));
    emit_expr(c, x->a, 14);
    return;
  }
}

void emit_expr(ectx *c, const ir_expr *x, int min) {
  bool paren = prec(c, x) < min;
  char name[64];
  if (paren) put(c, "(");
  switch (x->kind) {
  case IR_E_CONST: constant(c, x); break;
  case IR_E_VAR:
    put(c, c->cname[x->var]);
    c->read[x->var] = true;
    break;
  case IR_E_LOAD:
    c->read[x->var] = true;
    if (c->check) { /* a[i], or 0 with the failure noted */
      c->len_read[x->var] = true;
      c->flt_used = c->flt_pending = true;
      spc_str_addf(c->o, "spc_rt_get_%s(%s, (int64_t)(", sfx(ir_var_get(c->f, x->var)->ty),
                   c->cname[x->var]);
      emit_expr(c, x->a, 0);
      spc_str_addf(c->o, "), %s, \"%s\", &%s)", c->lname[x->var], c->cname[x->var], c->flt_a);
      break;
    }
    spc_str_addf(c->o, "%s[", c->cname[x->var]);
    emit_expr(c, x->a, 0);
    put(c, "]");
    break;
  case IR_E_LEN:
    put(c, c->lname[x->var]);
    c->len_read[x->var] = true;
    break;
  case IR_E_BIN: bin(c, x); break;
  case IR_E_UN:
    switch (un_form(x, name, sizeof name)) {
    case F_CALL: call2(c, name, x->a, NULL); break;
    case F_SAME: emit_expr(c, x->a, 0); break; /* parenthesized above */
    default:
      put(c, ir_op_name(x->op));
      emit_expr(c, x->a, 15); /* -(-x), not --x */
      break;
    }
    break;
  case IR_E_CAST: cast(c, x); break;
  case IR_E_SELECT:
    emit_expr(c, x->c, 4);
    put(c, " ? ");
    emit_expr(c, x->a, 4);
    put(c, " : ");
    emit_expr(c, x->b, 4);
    break;
  }
  if (paren) put(c, ")");
}
