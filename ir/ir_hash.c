/* ir_hash.c -- a 128-bit hash of everything a function's emitted C text
 * depends on, but its name: every variable (name, type, array, direction,
 * parameter number), the noalias flag, and every statement and expression
 * (kind, type, operator, variables, constants by their type, builtins,
 * failure codes and messages).  Two functions with equal hashes emit the
 * same text under one name, so the engine keys its memo of factory
 * lookups with it instead of emitting and hashing the text on every call
 * (most of a small conversion's fixed cost). */
#include "ir_internal.h"
#include <string.h>

typedef struct hs {
  uint64_t a, b;
} hs;

static void put(hs *h, uint64_t w) {
  h->a = (h->a ^ w) * 0x100000001b3ULL;
  h->a = (h->a << 29) | (h->a >> 35);
  h->b = spc_mix64(h->b ^ w) + 0x9e3779b97f4a7c15ULL;
}

static void put_str(hs *h, const char *s) {
  if (!s) {
    put(h, 0x5a5a5a5a5a5a5a5aULL);
    return;
  }
  size_t n = strlen(s);
  put(h, n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = 0;
    memcpy(&w, s + i, n - i < 8 ? n - i : 8);
    put(h, w);
  }
}

static void put_val(hs *h, ir_ty ty, const ir_val *v) {
  uint64_t w[2] = {0, 0};
  switch (ty) {
  case IR_BOOL: w[0] = v->b; break;
  case IR_I32: w[0] = (uint64_t)(int64_t)v->i32; break;
  case IR_I64: w[0] = (uint64_t)v->i64; break;
  case IR_U64: w[0] = v->u64; break;
  case IR_F32: {
    uint32_t u;
    memcpy(&u, &v->f32, sizeof u);
    w[0] = u;
    break;
  }
  case IR_F64: memcpy(&w[0], &v->f64, 8); break;
  case IR_C128: memcpy(w, v->c128, 16); break;
  default: memcpy(w, v, sizeof *v < 16 ? sizeof *v : 16); break;
  }
  put(h, w[0]);
  put(h, w[1]);
}

static void put_expr(hs *h, const ir_expr *x) {
  if (!x) {
    put(h, 0xe0e0e0e0ULL);
    return;
  }
  put(h, ((uint64_t)x->kind << 48) ^ ((uint64_t)x->ty << 32) ^ ((uint64_t)x->op << 16));
  switch (x->kind) {
  case IR_E_CONST: put_val(h, x->ty, &x->v); break;
  case IR_E_VAR:
  case IR_E_LEN: put(h, (uint64_t)(int64_t)x->var); break;
  case IR_E_LOAD:
    put(h, (uint64_t)(int64_t)x->var);
    put_expr(h, x->a);
    break;
  default:
    put_expr(h, x->a);
    put_expr(h, x->b);
    put_expr(h, x->c);
    break;
  }
}

static void put_stmt(hs *h, const ir_stmt *s) {
  if (!s) {
    put(h, 0x57575757ULL);
    return;
  }
  put(h, ((uint64_t)s->kind << 40) ^ ((uint64_t)s->builtin << 24) ^ ((uint64_t)s->zero << 8) ^
             (uint64_t)(uint32_t)s->var);
  put_expr(h, s->a);
  put_expr(h, s->b);
  put(h, (uint64_t)s->nvars);
  for (int k = 0; k < s->nvars; k++) put(h, (uint64_t)(int64_t)s->vars[k]);
  put(h, (uint64_t)s->nargs);
  for (int k = 0; k < s->nargs; k++) put_expr(h, s->args[k]);
  if (s->kind == IR_S_FAIL) {
    put(h, (uint64_t)(int64_t)s->code);
    put_str(h, s->msg);
  }
  put(h, (uint64_t)s->nkids);
  for (int k = 0; k < s->nkids; k++) put_stmt(h, s->kids[k]);
}

void ir_func_hash(const ir_func *f, uint64_t out[2]) {
  if (f->shared) { /* computed once, when it was shared */
    out[0] = f->hash[0], out[1] = f->hash[1];
    return;
  }
  hs h = {0xcbf29ce484222325ULL, 0x6a09e667f3bcc909ULL};
  put(&h, (uint64_t)f->nvars);
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    put_str(&h, vi->name);
    put(&h, ((uint64_t)vi->ty << 32) ^ ((uint64_t)vi->array << 24) ^ ((uint64_t)vi->dir << 16) ^
                (uint64_t)(uint16_t)vi->param);
  }
  put(&h, (uint64_t)f->nparams);
  for (int k = 0; k < f->nparams; k++) put(&h, (uint64_t)(int64_t)f->params[k]);
  put(&h, f->noalias);
  put(&h, f->checked);
  put_stmt(&h, f->body);
  out[0] = spc_mix64(h.a ^ spc_mix64(h.b));
  out[1] = spc_mix64(h.b ^ 0x243f6a8885a308d3ULL) ^ h.a;
}
