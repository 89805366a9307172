/* lang_types.c -- type names of the languages and the conversion rule.
 *
 * Implicit conversion (assignment, arguments): widening only, along the
 * IR's promotion order bool < i32 < i64 < u64 < f32 < f64 < c128; besides,
 * any integer converts to an `index` or `coord` target (the planner sizes
 * those types so every value fits) and integer constant expressions
 * convert to any integer type, float constants to any float type. */
#include "spc_lang.h"
#include <stdio.h>
#include <string.h>

static const char *const tnames[] = {
    [LT_NONE] = "?",      [LT_BOOL] = "bool",  [LT_I32] = "i32",
    [LT_I64] = "i64",     [LT_U64] = "u64",    [LT_F32] = "f32",
    [LT_F64] = "f64",     [LT_C128] = "c128",  [LT_INDEX] = "index",
    [LT_COORD] = "coord", [LT_VALUE] = "value"};

const char *lang_tname_str(lang_tname t) {
  return t >= LT_NONE && t <= LT_VALUE ? tnames[t] : "?";
}

lang_tname lang_tname_parse(const char *s, size_t n) {
  for (int t = LT_BOOL; t <= LT_VALUE; t++)
    if (strlen(tnames[t]) == n && !memcmp(tnames[t], s, n)) return t;
  return LT_NONE;
}

bool lang_ty_is_int(ir_ty t) {
  return t == IR_I32 || t == IR_I64 || t == IR_U64;
}

static const char *ty_short(ir_ty t) {
  static const char *const s[IR_NTYPES] = {"bool", "i32", "i64", "u64",
                                           "f32",  "f64", "c128"};
  return t >= 0 && t < IR_NTYPES ? s[t] : "?";
}

const char *lang_type_str(lang_type t, char *buf, size_t n) {
  const char *pre = t.array ? "array of " : "";
  if (t.sym != LT_NONE)
    snprintf(buf, n, "%s%s (%s)", pre, lang_tname_str(t.sym), ty_short(t.ty));
  else
    snprintf(buf, n, "%s%s", pre, ty_short(t.ty));
  return buf;
}

lang_type lang_type_of(const lang_env *env, lang_tname t) {
  lang_type r = {.ty = IR_I64};
  switch (t) {
  case LT_BOOL: r.ty = IR_BOOL; break;
  case LT_I32: r.ty = IR_I32; break;
  case LT_I64: r.ty = IR_I64; break;
  case LT_U64: r.ty = IR_U64; break;
  case LT_F32: r.ty = IR_F32; break;
  case LT_F64: r.ty = IR_F64; break;
  case LT_C128: r.ty = IR_C128; break;
  case LT_INDEX:
    r.ty = env && env->index_ty != IR_BOOL ? env->index_ty : IR_I64;
    r.sym = t;
    break;
  case LT_COORD:
    r.ty = env && env->coord_ty != IR_BOOL ? env->coord_ty : IR_I64;
    r.sym = t;
    break;
  case LT_VALUE:
    r.ty = env && env->value_ty != IR_BOOL ? env->value_ty : IR_F64;
    r.sym = t;
    break;
  case LT_NONE: break;
  }
  return r;
}

static bool is_float(ir_ty t) { return t == IR_F32 || t == IR_F64; }

bool lang_assignable(lang_type dst, lang_type src) {
  if (dst.array || src.array) return false;
  if (src.ty == dst.ty) return true;
  if (lang_ty_is_int(dst.ty) && lang_ty_is_int(src.ty) &&
      (dst.sym == LT_INDEX || dst.sym == LT_COORD || src.lit))
    return true;
  if (is_float(dst.ty) && is_float(src.ty) && src.lit) return true;
  if (src.ty == IR_BOOL) return dst.ty == IR_BOOL;
  return src.ty < dst.ty;
}
