/* lang_interval.c -- conservative integer ranges of checked expressions.
 *
 * Every operator maps operand intervals to an interval that contains every
 * value the operator can produce (interval arithmetic; corners for * / and
 * shifts; & | ^ only on non-negative operands; select: the union).  When a
 * bound does not fit int64, or the range leaves the node's own type (an
 * i32 expression that could wrap), the result is unbounded.  Used to size
 * dense group spaces and to choose index widths. */
#include "spc_lang.h"

lang_ival lang_ival_make(int64_t lo, int64_t hi) {
  return (lang_ival){lo, hi, true, 0};
}
lang_ival lang_ival_unbounded(void) {
  return (lang_ival){INT64_MIN, INT64_MAX, false, 0};
}

/* An interval plus, for non-negative ones, the bits that may be set (so
 * masks and shifts by constants stay tight: Morton codes). */
typedef struct ivb {
  lang_ival v;
  uint64_t bits; /* valid when v.bounded && v.lo >= 0 */
} ivb;

static uint64_t ones_above(uint64_t x) { /* the smallest 2^k - 1 >= x */
  uint64_t m = 0;
  while (m < x) m = m * 2 + 1;
  return m;
}

static ivb unb(void) { return (ivb){lang_ival_unbounded(), 0}; }

/* Normalise: bits cover [lo, hi] and hi <= bits. */
static ivb mk(int64_t lo, int64_t hi, uint64_t bits) {
  ivb r = {lang_ival_make(lo, hi), 0};
  if (lo >= 0) {
    r.bits = bits & ones_above((uint64_t)hi);
    if ((uint64_t)r.v.hi > r.bits) r.v.hi = (int64_t)r.bits;
  }
  return r;
}
static ivb plain(lang_ival v) {
  return v.bounded ? mk(v.lo, v.hi, v.bits ? v.bits : UINT64_MAX) : unb();
}

static lang_ival of_type(ir_ty t) {
  switch (t) {
  case IR_BOOL: return lang_ival_make(0, 1);
  case IR_I32: return lang_ival_make(INT32_MIN, INT32_MAX);
  default: return lang_ival_unbounded();
  }
}

static lang_ival hull(const int64_t *v, int n) {
  lang_ival r = lang_ival_make(v[0], v[0]);
  for (int i = 1; i < n; i++) {
    if (v[i] < r.lo) r.lo = v[i];
    if (v[i] > r.hi) r.hi = v[i];
  }
  return r;
}

static lang_ival add(lang_ival a, lang_ival b, bool sub) {
  int64_t lo, hi;
  bool o = sub ? __builtin_sub_overflow(a.lo, b.hi, &lo) ||
                     __builtin_sub_overflow(a.hi, b.lo, &hi)
               : __builtin_add_overflow(a.lo, b.lo, &lo) ||
                     __builtin_add_overflow(a.hi, b.hi, &hi);
  return o ? lang_ival_unbounded() : lang_ival_make(lo, hi);
}

static lang_ival mul(lang_ival a, lang_ival b) {
  int64_t v[4];
  bool o = __builtin_mul_overflow(a.lo, b.lo, &v[0]) ||
           __builtin_mul_overflow(a.lo, b.hi, &v[1]) ||
           __builtin_mul_overflow(a.hi, b.lo, &v[2]) ||
           __builtin_mul_overflow(a.hi, b.hi, &v[3]);
  return o ? lang_ival_unbounded() : hull(v, 4);
}

/* a / b over the part of b on one side of zero, b = [lo, hi] (0 outside). */
static bool div_part(lang_ival a, int64_t lo, int64_t hi, int64_t *v, int *n) {
  int64_t d[2] = {lo, hi}, x[2] = {a.lo, a.hi};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      if (x[i] == INT64_MIN && d[j] == -1) return false;
      v[(*n)++] = x[i] / d[j];
    }
  return true;
}

static lang_ival divide(lang_ival a, lang_ival b) {
  int64_t v[8];
  int n = 0;
  if (b.lo < 0 && !div_part(a, b.lo, b.hi < 0 ? b.hi : -1, v, &n))
    return lang_ival_unbounded();
  if (b.hi > 0 && !div_part(a, b.lo > 0 ? b.lo : 1, b.hi, v, &n))
    return lang_ival_unbounded();
  return n ? hull(v, n) : lang_ival_unbounded(); /* b = [0, 0] */
}

static lang_ival rem(lang_ival a, lang_ival b) {
  if (b.lo == INT64_MIN || (b.lo == 0 && b.hi == 0))
    return lang_ival_unbounded();
  int64_t m = (b.hi > -b.lo ? b.hi : -b.lo) - 1; /* |a % b| <= m */
  int64_t lo = a.lo >= 0 ? 0 : (a.lo > -m ? a.lo : -m);
  int64_t hi = a.hi <= 0 ? 0 : (a.hi < m ? a.hi : m);
  return lang_ival_make(lo, hi);
}

static ivb shift(ivb A, ivb B, bool left) {
  lang_ival a = A.v, b = B.v;
  bool k = b.lo == b.hi; /* a constant count keeps the bits */
  if (b.lo < 0 || b.hi > 63) return unb();
  if (!left) {
    int64_t v[4] = {a.lo >> b.lo, a.lo >> b.hi, a.hi >> b.lo, a.hi >> b.hi};
    lang_ival h = hull(v, 4);
    return mk(h.lo, h.hi, k && a.lo >= 0 ? A.bits >> b.lo : UINT64_MAX);
  }
  if (a.lo < 0 || a.hi > (INT64_MAX >> b.hi)) return unb();
  uint64_t bits = k && A.bits <= ((uint64_t)INT64_MAX >> b.lo) ? A.bits << b.lo
                                                               : UINT64_MAX;
  return mk(a.lo << b.lo, a.hi << b.hi, bits);
}

static ivb bitwise(int op, ivb A, ivb B) {
  lang_ival a = A.v, b = B.v;
  if (op == IR_BAND) {
    if (a.lo >= 0 && b.lo >= 0)
      return mk(0, a.hi < b.hi ? a.hi : b.hi, A.bits & B.bits);
    if (a.lo >= 0) return mk(0, a.hi, A.bits);
    if (b.lo >= 0) return mk(0, b.hi, B.bits);
    return unb();
  }
  if (a.lo < 0 || b.lo < 0) return unb();
  uint64_t bits = A.bits | B.bits;
  if (bits > (uint64_t)INT64_MAX) return unb();
  return mk(op == IR_BXOR ? 0 : (a.lo > b.lo ? a.lo : b.lo), (int64_t)bits,
            bits);
}

static ivb iv(const lang_node *n, const lang_env *env);

static ivb of_name(const lang_node *n, const lang_env *env) {
  lang_sym s = {.var = -1};
  if (n->local < 0 && env && env->resolve &&
      env->resolve(env->ctx, n->name, &s)) {
    if (s.kind == LANG_SYM_CONST)
      return mk(s.value, s.value, s.value >= 0 ? (uint64_t)s.value : 0);
    if (s.has_range) return mk(s.lo, s.hi, s.bits ? s.bits : UINT64_MAX);
  }
  return plain(of_type(n->type.ty));
}

static ivb of_call(const lang_node *n, const lang_env *env) {
  if (n->fn == LF_LEN) return mk(0, INT64_MAX, UINT64_MAX);
  ivb A = iv(n->kids[0], env);
  lang_ival a = A.v;
  if (!a.bounded) return A;
  switch (n->fn) {
  case LF_MIN:
  case LF_MAX:
    for (int i = 1; i < n->nkids; i++) {
      ivb B = iv(n->kids[i], env);
      if (!B.v.bounded) return B;
      bool mn = n->fn == LF_MIN;
      if (mn ? B.v.lo < a.lo : B.v.lo > a.lo) a.lo = B.v.lo;
      if (mn ? B.v.hi < a.hi : B.v.hi > a.hi) a.hi = B.v.hi;
      A.bits |= B.bits;
    }
    return mk(a.lo, a.hi, a.lo >= 0 ? A.bits : UINT64_MAX);
  case LF_ABS:
    if (a.lo == INT64_MIN) return unb();
    if (a.lo >= 0) return A;
    if (a.hi <= 0) return mk(-a.hi, -a.lo, UINT64_MAX);
    return mk(0, -a.lo > a.hi ? -a.lo : a.hi, UINT64_MAX);
  default: return A; /* casts: checked against the type by iv() */
  }
}

static ivb binary(const lang_node *n, const lang_env *env) {
  int op = n->op;
  if (op >= IR_LT && op <= IR_LOR) return mk(0, 1, 1);
  ivb A = iv(n->a, env), B = iv(n->b, env);
  if (!A.v.bounded || !B.v.bounded) return unb();
  switch (op) {
  case IR_ADD: return plain(add(A.v, B.v, false));
  case IR_SUB: return plain(add(A.v, B.v, true));
  case IR_MUL: return plain(mul(A.v, B.v));
  case IR_DIV: return plain(divide(A.v, B.v));
  case IR_REM: return plain(rem(A.v, B.v));
  case IR_SHL: return shift(A, B, true);
  case IR_SHR: return shift(A, B, false);
  default: return bitwise(op, A, B);
  }
}

static ivb raw(const lang_node *n, const lang_env *env) {
  ivb a, b;
  switch (n->kind) {
  case LN_INT:
    return n->is_u64 ? unb() : mk(n->ival, n->ival, (uint64_t)n->ival);
  case LN_BOOL: return mk(n->bval, n->bval, n->bval);
  case LN_NAME:
  case LN_INDEX: return of_name(n, env);
  case LN_CALL: return of_call(n, env);
  case LN_UNARY:
    if (n->op == IR_NOT) return mk(0, 1, 1);
    a = iv(n->a, env);
    if (!a.v.bounded || a.v.lo == INT64_MIN) return unb();
    return n->op == IR_NEG ? mk(-a.v.hi, -a.v.lo, UINT64_MAX)
                           : mk(-a.v.hi - 1, -a.v.lo - 1, UINT64_MAX);
  case LN_BINARY: return binary(n, env);
  case LN_COND:
    a = iv(n->b, env);
    b = iv(n->c, env);
    if (!a.v.bounded || !b.v.bounded) return unb();
    return mk(a.v.lo < b.v.lo ? a.v.lo : b.v.lo,
              a.v.hi > b.v.hi ? a.v.hi : b.v.hi,
              a.v.lo >= 0 && b.v.lo >= 0 ? a.bits | b.bits : UINT64_MAX);
  case LN_COUNTER:
    if (env && env->counter_ival && n->ival >= 0 && n->ival < env->ncounters)
      return plain(env->counter_ival[n->ival]);
    return unb();
  default: return unb();
  }
}

/* The range of n, unbounded when it may leave n's type (wrap). */
static ivb iv(const lang_node *n, const lang_env *env) {
  if (n->type.array || n->type.ty > IR_U64) return unb();
  ivb r = raw(n, env);
  lang_ival t = of_type(n->type.ty);
  if (!r.v.bounded) return r;
  if (n->type.ty == IR_U64 && r.v.lo < 0) return unb();
  if (t.bounded && (r.v.lo < t.lo || r.v.hi > t.hi)) return unb();
  return r;
}

lang_ival lang_interval(const lang_node *e, const lang_env *env) {
  ivb r = iv(e, env);
  if (r.v.bounded && r.v.lo >= 0) r.v.bits = r.bits;
  return r.v;
}
