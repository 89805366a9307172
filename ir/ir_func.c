/* ir_func.c -- the function object: its arena (every node, name and kids
 * array lives in it; ir_func_free releases all), the variable table, the
 * broken state and the names of types. */
#include "ir_bc.h"
#include <stdio.h>
#include <string.h>

struct ir_chunk {
  ir_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char mem[];
};

#define CHUNK_SIZE 16384

/* ---- broken state -------------------------------------------------------- */

void ir_nomem(ir_func *f) {
  if (!f || f->broken) return;
  f->broken = true;
  f->why = SPC_ERR_NOMEM;
  snprintf(f->msg, sizeof f->msg, "out of memory while building the IR");
}

void ir_misuse(ir_func *f, const char *fmt, ...) {
  if (!f || f->broken) return;
  f->broken = true;
  f->why = SPC_ERR_INTERNAL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->msg, sizeof f->msg, fmt, ap);
  va_end(ap);
}

/* ---- arena --------------------------------------------------------------- */

void *ir_arena(ir_func *f, size_t n) {
  if (!f || f->broken) return NULL;
  n = (n + 15) & ~(size_t)15;
  ir_chunk *c = f->chunks;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;
    c = spc_malloc(sizeof *c + cap);
    if (!c) {
      ir_nomem(f);
      return NULL;
    }
    c->used = 0;
    c->cap = cap;
    if (f->chunks && n > CHUNK_SIZE) { /* keep filling the current chunk */
      c->next = f->chunks->next;
      f->chunks->next = c;
    } else {
      c->next = f->chunks;
      f->chunks = c;
    }
  }
  void *p = c->mem + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *ir_arena_str(ir_func *f, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = ir_arena(f, n);
  if (p) memcpy(p, s, n);
  return p;
}

/* ---- the function -------------------------------------------------------- */

ir_func *ir_func_new(const char *name) {
  ir_func *f = spc_calloc(1, sizeof *f);
  if (!f) return NULL;
  f->dummy_e.kind = IR_E_CONST;
  f->dummy_e.ty = IR_I64;
  f->dummy_e.var = -1;
  f->dummy_s.kind = IR_S_BLOCK;
  f->dummy_s.var = -1;
  f->name = ir_arena_str(f, name ? name : "");
  f->body = ir_block(f);
  if (!f->body) f->body = &f->dummy_s;
  return f;
}

void ir_func_free(ir_func **pf) {
  if (!pf || !*pf) return;
  ir_func *f = *pf;
  if (f->shared) { /* the routine cache's: only the reference goes */
    *pf = NULL;
    return;
  }
  for (ir_chunk *c = f->chunks, *next; c; c = next) {
    next = c->next;
    spc_free(c);
  }
  spc_free(f->vars);
  spc_free(f->hidx);
  spc_free(f->params);
  spc_free(f);
  *pf = NULL;
}

bool ir_func_ok(const ir_func *f) { return f && !f->broken; }

spc_status ir_func_why(const ir_func *f) {
  return !f ? SPC_ERR_NOMEM : f->broken ? f->why : SPC_OK;
}
const char *ir_func_name(const ir_func *f) { return f && f->name ? f->name : ""; }
void ir_func_share(ir_func *f, bool bytecode) {
  if (!f || f->shared) return;
  ir_func_hash(f, f->hash);
  spc_error e;
  if (bytecode && (ir_verify(f, &e) || bc_compile(f, &f->bc, &e))) f->bc = NULL;
  f->shared = true;
}

bool ir_func_shared(const ir_func *f) { return f && f->shared; }

bool ir_func_set_name(ir_func *f, const char *name) {
  char *n = f ? ir_arena_str(f, name) : NULL;
  if (n) f->name = n;
  return n != NULL;
}
ir_stmt *ir_func_body(ir_func *f) { return f ? f->body : NULL; }
void ir_func_set_checked(ir_func *f) {
  if (f) f->checked = true;
}

void ir_func_set_noalias(ir_func *f) {
  if (f) f->noalias = true;
}

/* ---- variables ----------------------------------------------------------- */

bool ir_ident_ok(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
    return false;
  for (s++; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return false;
  return true;
}

static bool grow(ir_func *f, void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return true;
  int c = *cap ? *cap * 2 : 8;
  while (c < need) c *= 2;
  void *q = spc_realloc(*p, (size_t)c * size);
  if (!q) {
    ir_nomem(f);
    return false;
  }
  *p = q;
  *cap = c;
  return true;
}

static bool hidx_put(ir_func *f, ir_var v);

static ir_var add_var(ir_func *f, const char *what, const char *name, ir_ty ty,
                      bool array, ir_dir dir) {
  if (!f || f->broken) return -1;
  if (!ir_ident_ok(name))
    return ir_misuse(f, "%s: variable name '%s' is not an identifier", what,
                     name ? name : "(null)"),
           -1;
  if (!ir_ty_valid(ty))
    return ir_misuse(f, "%s %s: invalid type %d", what, name, (int)ty), -1;
  if (ir_find_var(f, name) >= 0)
    return ir_misuse(f, "%s: variable '%s' declared twice", what, name), -1;
  if (!grow(f, (void **)&f->vars, &f->capvars, f->nvars + 1, sizeof *f->vars)) return -1;
  if (dir != IR_LOCAL &&
      !grow(f, (void **)&f->params, &f->capparams, f->nparams + 1, sizeof *f->params))
    return -1;
  const char *copy = ir_arena_str(f, name);
  if (!copy) return -1;
  ir_var v = f->nvars++;
  f->vars[v] =
      (ir_var_info){.name = copy, .ty = ty, .array = array, .dir = dir, .param = -1};
  if (dir != IR_LOCAL) {
    f->vars[v].param = f->nparams;
    f->params[f->nparams++] = v;
  }
  (void)hidx_put(f, v); /* without it, lookups scan */
  return v;
}

ir_var ir_param(ir_func *f, const char *name, ir_ty ty, bool array, ir_dir dir) {
  if (f && !f->broken && dir != IR_IN && dir != IR_INOUT && dir != IR_OUT && dir != IR_GIVE)
    return ir_misuse(f, "ir_param %s: direction must be in, inout, out or give",
                     name ? name : "(null)"),
           -1;
  if (f && !f->broken && dir == IR_GIVE && !array)
    return ir_misuse(f, "ir_param %s: give is for arrays", name ? name : "(null)"), -1;
  return add_var(f, "ir_param", name, ty, array, dir);
}

ir_var ir_local(ir_func *f, const char *name, ir_ty ty, bool array) {
  return add_var(f, "ir_local", name, ty, array, IR_LOCAL);
}

int ir_nvars(const ir_func *f) { return f ? f->nvars : 0; }
int ir_nparams(const ir_func *f) { return f ? f->nparams : 0; }

const ir_var_info *ir_var_get(const ir_func *f, ir_var v) {
  return f && v >= 0 && v < f->nvars ? &f->vars[v] : NULL;
}

ir_var ir_param_var(const ir_func *f, int k) {
  return f && k >= 0 && k < f->nparams ? f->params[k] : -1;
}

/* The names' hash index: built at 16 variables, doubled past half full
 * (a function of a few hundred locals was a quadratic scan of names on
 * every declaration; false when out of memory, the index then dropped
 * and lookups scan). */
static bool hidx_put(ir_func *f, ir_var v) {
  if (f->nvars < 16 && !f->hcap) return true;
  if (2 * f->nvars > f->hcap) {
    int cap = f->hcap ? 2 * f->hcap : 64;
    while (cap < 2 * f->nvars) cap *= 2;
    int *h = spc_calloc((size_t)cap, sizeof *h);
    spc_free(f->hidx);
    f->hidx = h;
    f->hcap = h ? cap : 0;
    if (!h) return false;
    for (int u = 0; u < f->nvars; u++) {
      size_t k = (size_t)spc_name_hash(f->vars[u].name) & (size_t)(cap - 1);
      while (f->hidx[k]) k = (k + 1) & (size_t)(cap - 1);
      f->hidx[k] = u + 1;
    }
    return true;
  }
  size_t k = (size_t)spc_name_hash(f->vars[v].name) & (size_t)(f->hcap - 1);
  while (f->hidx[k]) k = (k + 1) & (size_t)(f->hcap - 1);
  f->hidx[k] = v + 1;
  return true;
}

ir_var ir_find_var(const ir_func *f, const char *name) {
  if (!f || !name) return -1;
  if (f->hcap) {
    size_t k = (size_t)spc_name_hash(name) & (size_t)(f->hcap - 1);
    for (; f->hidx[k]; k = (k + 1) & (size_t)(f->hcap - 1))
      if (!strcmp(f->vars[f->hidx[k] - 1].name, name)) return f->hidx[k] - 1;
    return -1;
  }
  for (int v = 0; v < f->nvars; v++)
    if (!strcmp(f->vars[v].name, name)) return v;
  return -1;
}

/* ---- names --------------------------------------------------------------- */

const char *ir_ty_name(ir_ty t) {
  static const char *const n[] = {"bool",  "int32_t", "int64_t",   "uint64_t",
                                  "float", "double",  "complex128"};
  return ir_ty_valid(t) ? n[t] : "?";
}

const char *ir_ty_short(ir_ty t) {
  static const char *const n[] = {"bool", "i32", "i64", "u64", "f32", "f64", "c128"};
  return ir_ty_valid(t) ? n[t] : "?";
}

size_t ir_ty_size(ir_ty t) {
  static const size_t n[] = {sizeof(bool), 4, 8, 8, 4, 8, 16};
  return ir_ty_valid(t) ? n[t] : 0;
}

const char *ir_op_name(ir_op op) {
  static const char *const n[] = {"+",  "-",  "*",   "/",   "%", "<<", ">>", "&",
                                  "|",  "^",  "<",   "<=",  ">", ">=", "==", "!=",
                                  "&&", "||", "min", "max", "-", "!",  "~",  "abs"};
  return op >= IR_ADD && op <= IR_ABS ? n[op] : "?";
}
