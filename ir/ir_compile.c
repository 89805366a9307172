/* ir_compile.c -- IR to the interpreter's register bytecode (ir_bc.h).
 *
 * Slots: scalar variables first, then constants and the saved upper bound
 * of every for loop, then temporaries, reused statement by statement (a
 * stack: an operator's operand temporaries are released before its result
 * is allocated, so a chain of operators reuses a few slots).  An
 * expression is compiled into a destination slot when one is given (an
 * assignment writes straight into its variable); every instruction reads
 * all its operands before it writes.  && || and ?: become jumps, so only
 * the taken side runs (as in C). */
#include "ir_bc.h"
#include <string.h>

typedef struct loop {
  struct loop *up;
  int nbreaks, capbreaks;
  int32_t *breaks; /* JMP instructions to patch to the loop's end */
} loop;

typedef struct cctx {
  bc_prog *p;
  bool nomem;
  int nfixed; /* slots below are variables, constants, loop bounds */
  int top;    /* next free temporary */
  int capslots, capwhere;
  loop *loops;
} cctx;

static bool grow(cctx *c, void **a, int *cap, int need, size_t size) {
  if (c->nomem) return false;
  if (need <= *cap) return true;
  int n = *cap ? *cap * 2 : 64;
  while (n < need) n *= 2;
  void *q = spc_realloc(*a, (size_t)n * size);
  if (!q) {
    c->nomem = true;
    return false;
  }
  *a = q;
  *cap = n;
  return true;
}

static int emit(cctx *c, const ir_stmt *s, bc_op op, int d, int a, int b, int x) {
  bc_prog *p = c->p;
  if (!grow(c, (void **)&p->code, &p->capcode, p->ncode + 1, sizeof *p->code) ||
      !grow(c, (void **)&p->where, &c->capwhere, p->ncode + 1, sizeof *p->where))
    return -1;
  p->code[p->ncode] = (bc_ins){op, d, a, b, x};
  p->where[p->ncode] = s;
  return p->ncode++;
}

static int here(cctx *c) { return c->p->ncode; }
static void patch(cctx *c, int at, int target) {
  if (at >= 0 && !c->nomem) c->p->code[at].c = target;
}

/* A permanent slot (constant, loop bound) holding v. */
static int fixed_slot(cctx *c, ir_val v) {
  bc_prog *p = c->p;
  if (!grow(c, (void **)&p->init, &c->capslots, c->nfixed + 1, sizeof *p->init)) return 0;
  p->init[c->nfixed] = v;
  return c->nfixed++;
}

/* Temporaries are numbered from 0 here and placed after the fixed slots
 * once compilation is over (relocate()). */
#define TEMP_BASE (1 << 28)
static int temp(cctx *c) {
  int t = c->top++;
  if (c->top > c->p->nslots) c->p->nslots = c->top;
  return TEMP_BASE + t;
}

static int place(cctx *c, const ir_stmt *s, int slot, int dest) {
  if (dest >= 0 && dest != slot) {
    emit(c, s, BC_MOV, dest, slot, 0, 0);
    return dest;
  }
  return slot;
}

/* Opcode of a typed operator: index by type class. */
static int by_ty(ir_ty t, int i32, int i64, int u64, int f32, int f64, int cx) {
  switch (t) {
  case IR_I32: return i32;
  case IR_I64: return i64;
  case IR_U64: return u64;
  case IR_F32: return f32;
  case IR_F64: return f64;
  case IR_C128: return cx;
  default: return -1;
  }
}

static int bin_op(ir_op op, ir_ty t) {
  switch (op) {
  case IR_ADD:
    return by_ty(t, BC_ADD_I32, BC_ADD_I64, BC_ADD_I64, BC_ADD_F32, BC_ADD_F64, BC_ADD_C);
  case IR_SUB:
    return by_ty(t, BC_SUB_I32, BC_SUB_I64, BC_SUB_I64, BC_SUB_F32, BC_SUB_F64, BC_SUB_C);
  case IR_MUL:
    return by_ty(t, BC_MUL_I32, BC_MUL_I64, BC_MUL_I64, BC_MUL_F32, BC_MUL_F64, BC_MUL_C);
  case IR_DIV:
    return by_ty(t, BC_DIV_I32, BC_DIV_I64, BC_DIV_U64, BC_DIV_F32, BC_DIV_F64, BC_DIV_C);
  case IR_REM:
    return by_ty(t, BC_REM_I32, BC_REM_I64, BC_REM_U64, BC_REM_F32, BC_REM_F64, -1);
  case IR_MIN:
    return by_ty(t, BC_MIN_I32, BC_MIN_I64, BC_MIN_U64, BC_MIN_F32, BC_MIN_F64, -1);
  case IR_MAX:
    return by_ty(t, BC_MAX_I32, BC_MAX_I64, BC_MAX_U64, BC_MAX_F32, BC_MAX_F64, -1);
  case IR_BAND: return by_ty(t, BC_AND_I32, BC_AND_64, BC_AND_64, -1, -1, -1);
  case IR_BOR: return by_ty(t, BC_OR_I32, BC_OR_64, BC_OR_64, -1, -1, -1);
  case IR_BXOR: return by_ty(t, BC_XOR_I32, BC_XOR_64, BC_XOR_64, -1, -1, -1);
  case IR_SHL: return by_ty(t, BC_SHL_I32, BC_SHL_64, BC_SHL_64, -1, -1, -1);
  case IR_SHR: return by_ty(t, BC_SHR_I32, BC_SHR_I64, BC_SHR_U64, -1, -1, -1);
  case IR_LT:
  case IR_GT:
    return t == IR_BOOL
               ? BC_LT_B
               : by_ty(t, BC_LT_I32, BC_LT_I64, BC_LT_U64, BC_LT_F32, BC_LT_F64, -1);
  case IR_LE:
  case IR_GE:
    return t == IR_BOOL
               ? BC_LE_B
               : by_ty(t, BC_LE_I32, BC_LE_I64, BC_LE_U64, BC_LE_F32, BC_LE_F64, -1);
  case IR_EQ:
    return t == IR_BOOL
               ? BC_EQ_B
               : by_ty(t, BC_EQ_I32, BC_EQ_I64, BC_EQ_I64, BC_EQ_F32, BC_EQ_F64, BC_EQ_C);
  case IR_NE:
    return t == IR_BOOL
               ? BC_NE_B
               : by_ty(t, BC_NE_I32, BC_NE_I64, BC_NE_I64, BC_NE_F32, BC_NE_F64, BC_NE_C);
  default: return -1;
  }
}

static int un_op(ir_op op, ir_ty t) {
  switch (op) {
  case IR_NEG:
    return by_ty(t, BC_NEG_I32, BC_NEG_I64, BC_NEG_I64, BC_NEG_F32, BC_NEG_F64, BC_NEG_C);
  case IR_NOT: return BC_NOT;
  case IR_BNOT: return by_ty(t, BC_BNOT_I32, BC_BNOT_64, BC_BNOT_64, -1, -1, -1);
  case IR_ABS:
    return by_ty(t, BC_ABS_I32, BC_ABS_I64, BC_MOV, BC_ABS_F32, BC_ABS_F64, -1);
  default: return -1;
  }
}

static int expr(cctx *c, const ir_stmt *s, const ir_expr *e, int dest);

/* e (an integer) as an I64 slot: indices, lengths, shift counts.  U64 and
 * I64 share their bits (a huge U64 reads as negative: out of range). */
static int i64_operand(cctx *c, const ir_stmt *s, const ir_expr *e) {
  int a = expr(c, s, e, -1);
  if (e->ty != IR_I32) return a;
  int d = temp(c);
  emit(c, s, BC_I32_I64, d, a, 0, 0);
  return d;
}

/* The fused opcode for a + b[i], a - b[i], a * b[i] on 64-bit integers or
 * doubles (s = s + a[i] is one instruction), or -1. */
static int fused_op(const ir_expr *e) {
  if (e->b->kind != IR_E_LOAD || (e->op != IR_ADD && e->op != IR_SUB && e->op != IR_MUL))
    return -1;
  bool f = e->ty == IR_F64;
  if (!f && e->ty != IR_I64 && e->ty != IR_U64) return -1;
  switch (e->op) {
  case IR_ADD: return f ? BC_ADDL_F64 : BC_ADDL_I64;
  case IR_SUB: return f ? BC_SUBL_F64 : BC_SUBL_I64;
  default: return f ? BC_MULL_F64 : BC_MULL_I64;
  }
}

static int bin(cctx *c, const ir_stmt *s, const ir_expr *e, int dest) {
  if (e->op == IR_LAND || e->op == IR_LOR) { /* t = a; if (t is decisive) skip b */
    int t = temp(c);
    expr(c, s, e->a, t);
    int j = emit(c, s, e->op == IR_LAND ? BC_JZ : BC_JNZ, 0, t, 0, 0);
    expr(c, s, e->b, t);
    patch(c, j, here(c));
    return place(c, s, t, dest);
  }
  int mark = c->top;
  int a = expr(c, s, e->a, -1);
  int fused = fused_op(e);
  if (fused >= 0) { /* a op arr[i] in one instruction */
    int i = i64_operand(c, s, e->b->a);
    c->top = mark;
    int d = dest >= 0 ? dest : temp(c);
    emit(c, s, (bc_op)fused, d, a, i, c->p->arr_of[e->b->var]);
    return d;
  }
  int b =
      e->op == IR_SHL || e->op == IR_SHR ? i64_operand(c, s, e->b) : expr(c, s, e->b, -1);
  c->top = mark;
  int d = dest >= 0 ? dest : temp(c);
  if (e->op == IR_GT || e->op == IR_GE) { /* a > b is b < a */
    int t = a;
    a = b;
    b = t;
  }
  emit(c, s, bin_op(e->op, e->a->ty), d, a, b, 0);
  return d;
}

static int cast(cctx *c, const ir_stmt *s, const ir_expr *e, int dest) {
  ir_ty from = e->a->ty, to = e->ty;
  bool same_bits = (from == IR_I64 && to == IR_U64) || (from == IR_U64 && to == IR_I64);
  if (from == to || same_bits) return expr(c, s, e->a, dest);
  int mark = c->top;
  int a = expr(c, s, e->a, -1);
  c->top = mark;
  int d = dest >= 0 ? dest : temp(c);
  int op = from == IR_I32 && to == IR_I64                       ? BC_I32_I64
           : (from == IR_I64 || from == IR_U64) && to == IR_I32 ? BC_I64_I32
           : from == IR_I32 && to == IR_F64                     ? BC_I32_F64
           : from == IR_I64 && to == IR_F64                     ? BC_I64_F64
           : from == IR_F32 && to == IR_F64                     ? BC_F32_F64
           : from == IR_F64 && to == IR_F32                     ? BC_F64_F32
                                                                : BC_CVT;
  emit(c, s, (bc_op)op, d, a, (int)from, (int)to);
  return d;
}

static int select_expr(cctx *c, const ir_stmt *s, const ir_expr *e, int dest) {
  int mark = c->top;
  int cond = expr(c, s, e->c, -1);
  c->top = mark;
  int d = dest >= 0 ? dest : temp(c);
  int j = emit(c, s, BC_JZ, 0, cond, 0, 0);
  expr(c, s, e->a, d);
  int k = emit(c, s, BC_JMP, 0, 0, 0, 0);
  patch(c, j, here(c));
  expr(c, s, e->b, d);
  patch(c, k, here(c));
  return d;
}

static const int load_op[] = {BC_LOAD1, BC_LOAD4, BC_LOAD8, BC_LOAD8,
                              BC_LOAD4, BC_LOAD8, BC_LOAD16};
static const int store_op[] = {BC_STORE1, BC_STORE4, BC_STORE8, BC_STORE8,
                               BC_STORE4, BC_STORE8, BC_STORE16};

static int expr(cctx *c, const ir_stmt *s, const ir_expr *e, int dest) {
  const bc_prog *p = c->p;
  switch (e->kind) {
  case IR_E_CONST: return place(c, s, fixed_slot(c, e->v), dest);
  case IR_E_VAR: return place(c, s, p->slot_of[e->var], dest);
  case IR_E_LOAD: {
    int mark = c->top;
    int i = i64_operand(c, s, e->a);
    c->top = mark;
    int d = dest >= 0 ? dest : temp(c);
    emit(c, s, (bc_op)load_op[e->ty], d, p->arr_of[e->var], i, 0);
    return d;
  }
  case IR_E_LEN: {
    int d = dest >= 0 ? dest : temp(c);
    emit(c, s, BC_LEN, d, p->arr_of[e->var], 0, 0);
    return d;
  }
  case IR_E_BIN: return bin(c, s, e, dest);
  case IR_E_UN: {
    int op = un_op(e->op, e->ty);
    if (op == BC_MOV) return expr(c, s, e->a, dest); /* abs of unsigned */
    int mark = c->top;
    int a = expr(c, s, e->a, -1);
    c->top = mark;
    int d = dest >= 0 ? dest : temp(c);
    emit(c, s, (bc_op)op, d, a, 0, 0);
    return d;
  }
  case IR_E_CAST: return cast(c, s, e, dest);
  case IR_E_SELECT: return select_expr(c, s, e, dest);
  }
  return 0;
}

/* ---- statements ---------------------------------------------------------- */

/* Record the operands of s in an aux entry: arrays, then scalar slots
 * (evaluated now into temporaries that live until the instruction). */
static int aux(cctx *c, const ir_stmt *s, int nargs, ir_expr *const *args) {
  bc_prog *p = c->p;
  int n = s->nvars + nargs;
  if (!grow(c, (void **)&p->aux, &p->capaux, p->naux + 1, sizeof *p->aux) ||
      !grow(c, (void **)&p->pool, &p->cappool, p->npool + n + 1, sizeof *p->pool))
    return 0;
  int at = p->npool;
  p->npool += n;
  for (int k = 0; k < s->nvars; k++) p->pool[at + k] = p->arr_of[s->vars[k]];
  for (int k = 0; k < nargs; k++) {
    int t = temp(c);
    expr(c, s, args[k], t);
    if (!c->nomem) c->p->pool[at + s->nvars + k] = t;
  }
  p->aux[p->naux] = (bc_aux){s, at};
  return p->naux++;
}

static void stmt(cctx *c, const ir_stmt *s);

static void block(cctx *c, const ir_stmt *b) {
  for (int k = 0; k < b->nkids; k++) stmt(c, b->kids[k]);
}

/* Body of a loop; breaks jump past the instruction that closes it. */
static void loop_body(cctx *c, const ir_stmt *body) {
  loop l = {.up = c->loops};
  c->loops = &l;
  stmt(c, body);
  c->loops = l.up;
  int end = here(c) + 1; /* after the closing jump */
  for (int k = 0; k < l.nbreaks; k++) patch(c, l.breaks[k], end);
  spc_free(l.breaks);
}

static void for_stmt(cctx *c, const ir_stmt *s) {
  ir_ty t = ir_var_get(c->p->f, s->var)->ty;
  int v = c->p->slot_of[s->var];
  int hi = fixed_slot(c, (ir_val){.i64 = 0});
  int mark = c->top;
  int lo = expr(c, s, s->a, -1);
  expr(c, s, s->b, hi);
  c->top = mark;
  int head = emit(c, s,
                  t == IR_I32   ? BC_FOR_I32
                  : t == IR_U64 ? BC_FOR_U64
                                : BC_FOR_I64,
                  v, lo, hi, 0);
  int body = here(c);
  loop_body(c, s->kids[0]);
  emit(c, s,
       t == IR_I32   ? BC_NEXT_I32
       : t == IR_U64 ? BC_NEXT_U64
                     : BC_NEXT_I64,
       v, 0, hi, body);
  patch(c, head, here(c));
}

static void stmt(cctx *c, const ir_stmt *s) {
  bc_prog *p = c->p;
  int mark = c->top;
  switch (s->kind) {
  case IR_S_BLOCK: block(c, s); break;
  case IR_S_ASSIGN: expr(c, s, s->a, p->slot_of[s->var]); break;
  case IR_S_STORE: {
    int i = i64_operand(c, s, s->a), v = expr(c, s, s->b, -1);
    ir_ty t = ir_var_get(p->f, s->var)->ty;
    emit(c, s, (bc_op)store_op[t], 0, p->arr_of[s->var], i, v);
    break;
  }
  case IR_S_FOR: for_stmt(c, s); break;
  case IR_S_WHILE: {
    int top = here(c);
    int cond = expr(c, s, s->a, -1);
    c->top = mark;
    int j = emit(c, s, BC_JZ, 0, cond, 0, 0);
    loop_body(c, s->kids[0]);
    emit(c, s, BC_JMP, 0, 0, 0, top);
    patch(c, j, here(c));
    break;
  }
  case IR_S_IF: {
    int cond = expr(c, s, s->a, -1);
    c->top = mark;
    int j = emit(c, s, BC_JZ, 0, cond, 0, 0);
    stmt(c, s->kids[0]);
    if (s->nkids > 1 && s->kids[1]) {
      int k = emit(c, s, BC_JMP, 0, 0, 0, 0);
      patch(c, j, here(c));
      stmt(c, s->kids[1]);
      patch(c, k, here(c));
    } else {
      patch(c, j, here(c));
    }
    break;
  }
  case IR_S_ALLOC: {
    int n = i64_operand(c, s, s->a);
    emit(c, s, BC_ALLOC, p->arr_of[s->var], n, s->zero, 0);
    break;
  }
  case IR_S_FREE: emit(c, s, BC_FREE, p->arr_of[s->var], 0, 0, 0); break;
  case IR_S_BUILTIN: emit(c, s, BC_BUILTIN, 0, 0, 0, aux(c, s, s->nargs, s->args)); break;
  case IR_S_FAIL: emit(c, s, BC_FAIL, 0, 0, 0, aux(c, s, s->nargs, s->args)); break;
  case IR_S_BREAK: {
    loop *l = c->loops;
    int j = emit(c, s, BC_JMP, 0, 0, 0, 0);
    if (l &&
        grow(c, (void **)&l->breaks, &l->capbreaks, l->nbreaks + 1, sizeof *l->breaks))
      l->breaks[l->nbreaks++] = j;
    break;
  }
  }
  c->top = mark;
}

/* ---- the program --------------------------------------------------------- */

static bool is_temp(int32_t x) { return x >= TEMP_BASE; }

/* Temporaries go after the fixed slots.  Every other operand (variable,
 * constant, array index, type code, jump target, aux index) is below
 * TEMP_BASE. */
static void relocate(bc_prog *p, int nfixed) {
  int shift = nfixed - TEMP_BASE;
  for (int i = 0; i < p->ncode; i++) {
    bc_ins *in = &p->code[i];
    if (is_temp(in->d)) in->d += shift;
    if (is_temp(in->a)) in->a += shift;
    if (is_temp(in->b)) in->b += shift;
    if (is_temp(in->c)) in->c += shift;
  }
  for (int i = 0; i < p->naux; i++) {
    const ir_stmt *s = p->aux[i].s;
    for (int k = 0; k < s->nargs; k++) {
      int32_t *x = &p->pool[p->aux[i].at + s->nvars + k];
      if (is_temp(*x)) *x += shift;
    }
  }
}

void bc_free(bc_prog **pp) {
  if (!pp || !*pp) return;
  bc_prog *p = *pp;
  spc_free(p->code);
  spc_free(p->where);
  spc_free(p->init);
  spc_free(p->slot_of);
  spc_free(p->arr_of);
  spc_free(p->arr_var);
  spc_free(p->aux);
  spc_free(p->pool);
  spc_free(p);
  *pp = NULL;
}

spc_status bc_compile(const ir_func *f, bc_prog **out, spc_error *e) {
  *out = NULL;
  bc_prog *p = spc_calloc(1, sizeof *p);
  cctx c = {.p = p};
  int nv = f->nvars;
  if (!p) return SPC_NOMEM(e);
  p->f = f;
  p->slot_of = spc_malloc_n(nv ? nv : 1, sizeof *p->slot_of);
  p->arr_of = spc_malloc_n(nv ? nv : 1, sizeof *p->arr_of);
  p->arr_var = spc_malloc_n(nv ? nv : 1, sizeof *p->arr_var);
  if (!p->slot_of || !p->arr_of || !p->arr_var) goto nomem;
  for (int v = 0; v < nv; v++) {
    p->slot_of[v] = p->arr_of[v] = -1;
    if (f->vars[v].array) {
      p->arr_var[p->narr] = v;
      p->arr_of[v] = p->narr++;
    } else {
      p->slot_of[v] = fixed_slot(&c, (ir_val){.i64 = 0});
    }
  }
  stmt(&c, f->body);
  emit(&c, NULL, BC_END, 0, 0, 0, 0);
  if (c.nomem) goto nomem;
  if (c.nfixed >= TEMP_BASE || p->ncode >= TEMP_BASE || p->nslots >= TEMP_BASE) {
    bc_free(&p);
    return spc_err(e, SPC_ERR_OVERFLOW, NULL, 0, 0,
                   "ir_run: function %s is too large to interpret", f->name);
  }
  relocate(p, c.nfixed);
  int ntemps = p->nslots;
  p->nslots = c.nfixed + ntemps;
  if (!grow(&c, (void **)&p->init, &c.capslots, p->nslots + 1, sizeof *p->init))
    goto nomem;
  memset(p->init + c.nfixed, 0, (size_t)(ntemps + 1) * sizeof *p->init);
  *out = p;
  return SPC_OK;
nomem:
  bc_free(&p);
  return SPC_NOMEM(e);
}
