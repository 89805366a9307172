/* ir_interp.c -- ir_run: the interpreter, the generic path that runs any
 * function with no compiler.
 *
 * The function is verified, compiled to register bytecode (ir_compile.c)
 * and executed by a threaded dispatch loop.  Arithmetic goes through the
 * runtime the generated C includes too (ir_rt.h), so both paths compute
 * the same bits.  Loads, stores and builtin ranges are bounds-checked;
 * integer division by zero, shift counts outside [0, width) and negative
 * allocation lengths are errors (SPC_ERR_INTERNAL: the IR is wrong) that
 * name the function and print the statement that failed.  A FAIL
 * statement returns its code with its formatted message as e->msg, exactly
 * the text the generated C writes to err.  On any error every array the
 * run allocated is freed (OUT arrays included: their args become NULL, 0)
 * and no scalar is written back. */
#include "ir_bc.h"
#include "ir_rt.h"
#include <stdio.h>
#include <string.h>

_Static_assert((int)SPC_RT_C128 == (int)IR_C128 && (int)SPC_RT_F32 == (int)IR_F32 &&
                   (int)SPC_RT_BOOL == (int)IR_BOOL,
               "ir_rt.h type codes follow ir_ty");
_Static_assert(sizeof(spc_c128) == 2 * sizeof(double), "complex layout");

static spc_c128 cx(const ir_val *v) { return spc_c128_make(v->c128[0], v->c128[1]); }
static void set_cx(ir_val *d, spc_c128 z) {
  d->c128[0] = z.re;
  d->c128[1] = z.im;
}
static ir_ty arr_ty(const bc_prog *p, int a) { return p->f->vars[p->arr_var[a]].ty; }

/* clang-format off */
/* Store k in the OOB record and fail. */
#define OOB(k, arr)                                                            \
  do {                                                                         \
    bad_k = (k);                                                               \
    bad_a = (arr);                                                             \
    goto oob;                                                                  \
  } while (0)

static spc_status exec(const bc_prog *p, ir_val *restrict R, bc_arr *restrict A,
                       spc_error *e) {
  const bc_ins *code = p->code, *ip = code;
  int64_t bad_k = 0;
  int bad_a = 0;
  spc_status st;
#define BC_LABEL(n) &&L_##n,
  static const void *const labels[BC_NOPS] = {BC_OPS(BC_LABEL)};
#undef BC_LABEL
#define OP(n) L_##n:
#define DISPATCH() goto *labels[ip->op]
#define NEXT                                                                   \
  do {                                                                         \
    ip++;                                                                      \
    DISPATCH();                                                                \
  } while (0)
#define JUMP(t)                                                                \
  do {                                                                         \
    ip = code + (t);                                                           \
    DISPATCH();                                                                \
  } while (0)
#define D R[ip->d]
#define A_ R[ip->a]
#define B_ R[ip->b]
#define FN2(n, F, fn) OP(n) D.F = fn(A_.F, B_.F); NEXT;
#define INFIX(n, F, op) OP(n) D.F = A_.F op B_.F; NEXT;
#define CMP(n, F, op) OP(n) D.b = A_.F op B_.F; NEXT;
#define CX2(n, fn) OP(n) set_cx(&D, fn(cx(&A_), cx(&B_))); NEXT;
#define IDIV(n, F, fn)                                                         \
  OP(n) if (B_.F == 0) goto div0; D.F = fn(A_.F, B_.F); NEXT;
#define SHIFT(n, F, fn, W)                                                     \
  OP(n) if ((uint64_t)B_.i64 >= W) goto badshift; D.F = fn(A_.F, B_.i64); NEXT;
#define U64DIV(a, b) ((a) / (b))
#define U64REM(a, b) ((a) % (b))
#define U64SHL(a, k) ((a) << (k))
#define U64SHR(a, k) ((a) >> (k))
#define FOR(n, F)                                                              \
  OP(FOR_##n) D.F = A_.F; if (!(D.F < B_.F)) JUMP(ip->c); NEXT;
#define LOOP(n, F, inc)                                                        \
  OP(NEXT_##n) D.F = inc(D.F, 1); if (D.F < B_.F) JUMP(ip->c); NEXT;
#define LOAD(n, F, size)                                                       \
  OP(LOAD##n) {                                                                \
    const bc_arr *x = &A[ip->a];                                               \
    int64_t k = B_.i64;                                                        \
    if ((uint64_t)k >= (uint64_t)x->len) OOB(k, ip->a);                        \
    memcpy(&D.F, (const char *)x->data + k * size, size);                      \
    NEXT;                                                                      \
  }
#define F64ADD(a, b) ((a) + (b))
#define F64SUB(a, b) ((a) - (b))
#define F64MUL(a, b) ((a) * (b))
#define FUSED(n, F, fn)                                                        \
  OP(n) {                                                                      \
    const bc_arr *x = &A[ip->c];                                               \
    int64_t k = B_.i64;                                                        \
    if ((uint64_t)k >= (uint64_t)x->len) OOB(k, ip->c);                        \
    ir_val v;                                                                  \
    memcpy(&v.F, (const char *)x->data + k * 8, 8);                            \
    D.F = fn(A_.F, v.F);                                                       \
    NEXT;                                                                      \
  }
#define STORE(n, F, size)                                                      \
  OP(STORE##n) {                                                               \
    const bc_arr *x = &A[ip->a];                                               \
    int64_t k = B_.i64;                                                        \
    if ((uint64_t)k >= (uint64_t)x->len) OOB(k, ip->a);                        \
    memcpy((char *)x->data + k * size, &R[ip->c].F, size);                     \
    NEXT;                                                                      \
  }

  DISPATCH();
  OP(END) return SPC_OK;
  OP(MOV) D = A_; NEXT;
  FN2(ADD_I32, i32, spc_add_i32) FN2(ADD_I64, i64, spc_add_i64)
  INFIX(ADD_F32, f32, +) INFIX(ADD_F64, f64, +) CX2(ADD_C, spc_c128_add)
  FN2(SUB_I32, i32, spc_sub_i32) FN2(SUB_I64, i64, spc_sub_i64)
  INFIX(SUB_F32, f32, -) INFIX(SUB_F64, f64, -) CX2(SUB_C, spc_c128_sub)
  FN2(MUL_I32, i32, spc_mul_i32) FN2(MUL_I64, i64, spc_mul_i64)
  INFIX(MUL_F32, f32, *) INFIX(MUL_F64, f64, *) CX2(MUL_C, spc_c128_mul)
  IDIV(DIV_I32, i32, spc_div_i32) IDIV(DIV_I64, i64, spc_div_i64)
  IDIV(DIV_U64, u64, U64DIV)
  INFIX(DIV_F32, f32, /) INFIX(DIV_F64, f64, /) CX2(DIV_C, spc_c128_div)
  IDIV(REM_I32, i32, spc_rem_i32) IDIV(REM_I64, i64, spc_rem_i64)
  IDIV(REM_U64, u64, U64REM) FN2(REM_F32, f32, fmodf) FN2(REM_F64, f64, fmod)
  FN2(MIN_I32, i32, spc_min_i32) FN2(MIN_I64, i64, spc_min_i64)
  FN2(MIN_U64, u64, spc_min_u64) FN2(MIN_F32, f32, spc_min_f32)
  FN2(MIN_F64, f64, spc_min_f64)
  FN2(MAX_I32, i32, spc_max_i32) FN2(MAX_I64, i64, spc_max_i64)
  FN2(MAX_U64, u64, spc_max_u64) FN2(MAX_F32, f32, spc_max_f32)
  FN2(MAX_F64, f64, spc_max_f64)
  INFIX(AND_I32, i32, &) INFIX(AND_64, u64, &)
  INFIX(OR_I32, i32, |) INFIX(OR_64, u64, |)
  INFIX(XOR_I32, i32, ^) INFIX(XOR_64, u64, ^)
  SHIFT(SHL_I32, i32, spc_shl_i32, 32) SHIFT(SHL_64, u64, U64SHL, 64)
  SHIFT(SHR_I32, i32, spc_shr_i32, 32) SHIFT(SHR_I64, i64, spc_shr_i64, 64)
  SHIFT(SHR_U64, u64, U64SHR, 64)
  CMP(LT_B, b, <) CMP(LT_I32, i32, <) CMP(LT_I64, i64, <) CMP(LT_U64, u64, <)
  CMP(LT_F32, f32, <) CMP(LT_F64, f64, <)
  CMP(LE_B, b, <=) CMP(LE_I32, i32, <=) CMP(LE_I64, i64, <=) CMP(LE_U64, u64, <=)
  CMP(LE_F32, f32, <=) CMP(LE_F64, f64, <=)
  CMP(EQ_B, b, ==) CMP(EQ_I32, i32, ==) CMP(EQ_I64, i64, ==)
  CMP(EQ_F32, f32, ==) CMP(EQ_F64, f64, ==)
  OP(EQ_C) D.b = spc_c128_eq(cx(&A_), cx(&B_)); NEXT;
  CMP(NE_B, b, !=) CMP(NE_I32, i32, !=) CMP(NE_I64, i64, !=)
  CMP(NE_F32, f32, !=) CMP(NE_F64, f64, !=)
  OP(NE_C) D.b = !spc_c128_eq(cx(&A_), cx(&B_)); NEXT;
  OP(NEG_I32) D.i32 = spc_neg_i32(A_.i32); NEXT;
  OP(NEG_I64) D.i64 = spc_neg_i64(A_.i64); NEXT;
  OP(NEG_F32) D.f32 = -A_.f32; NEXT;
  OP(NEG_F64) D.f64 = -A_.f64; NEXT;
  OP(NEG_C) set_cx(&D, spc_c128_neg(cx(&A_))); NEXT;
  OP(NOT) D.b = !A_.b; NEXT;
  OP(BNOT_I32) D.i32 = ~A_.i32; NEXT;
  OP(BNOT_64) D.u64 = ~A_.u64; NEXT;
  OP(ABS_I32) D.i32 = spc_abs_i32(A_.i32); NEXT;
  OP(ABS_I64) D.i64 = spc_abs_i64(A_.i64); NEXT;
  OP(ABS_F32) D.f32 = fabsf(A_.f32); NEXT;
  OP(ABS_F64) D.f64 = fabs(A_.f64); NEXT;
  OP(I32_I64) D.i64 = A_.i32; NEXT;
  OP(I64_I32) D.i32 = (int32_t)A_.i64; NEXT;
  OP(I32_F64) D.f64 = (double)A_.i32; NEXT;
  OP(I64_F64) D.f64 = (double)A_.i64; NEXT;
  OP(F32_F64) D.f64 = (double)A_.f32; NEXT;
  OP(F64_F32) D.f32 = (float)A_.f64; NEXT;
  OP(CVT) bc_convert(&D, &A_, (ir_ty)ip->b, (ir_ty)ip->c); NEXT;
  OP(LOAD1) {
    const bc_arr *x = &A[ip->a];
    int64_t k = B_.i64;
    if ((uint64_t)k >= (uint64_t)x->len) OOB(k, ip->a);
    D.b = ((const unsigned char *)x->data)[k] != 0;
    NEXT;
  }
  LOAD(4, i32, 4) LOAD(8, u64, 8) LOAD(16, c128, 16)
  FUSED(ADDL_I64, i64, spc_add_i64) FUSED(SUBL_I64, i64, spc_sub_i64)
  FUSED(MULL_I64, i64, spc_mul_i64) FUSED(ADDL_F64, f64, F64ADD)
  FUSED(SUBL_F64, f64, F64SUB) FUSED(MULL_F64, f64, F64MUL)
  OP(STORE1) {
    const bc_arr *x = &A[ip->a];
    int64_t k = B_.i64;
    if ((uint64_t)k >= (uint64_t)x->len) OOB(k, ip->a);
    ((bool *)x->data)[k] = R[ip->c].b;
    NEXT;
  }
  STORE(4, i32, 4) STORE(8, u64, 8) STORE(16, c128, 16)
  OP(LEN) D.i64 = A[ip->a].len; NEXT;
  OP(JMP) JUMP(ip->c);
  OP(JZ) if (!A_.b) JUMP(ip->c); NEXT;
  OP(JNZ) if (A_.b) JUMP(ip->c); NEXT;
  FOR(I32, i32) FOR(I64, i64) FOR(U64, u64)
  LOOP(I32, i32, spc_add_i32) LOOP(I64, i64, spc_add_i64) LOOP(U64, u64, spc_wadd_u64)
  OP(ALLOC) {
    bc_arr *x = &A[ip->d];
    int64_t n = A_.i64;
    size_t size = ir_ty_size(arr_ty(p, ip->d));
    if (n < 0)
      return bc_error(p, ip, e, SPC_ERR_INTERNAL, "negative length %lld for %s",
                      (long long)n, bc_arr_name(p, ip->d));
    void *q = ip->b ? spc_calloc((size_t)n, size) : spc_malloc_n(n, size);
    if (!q) return SPC_NOMEM(e);
    spc_free(x->data);
    x->data = q;
    x->len = n;
    NEXT;
  }
  OP(FREE) {
    bc_arr *x = &A[ip->d];
    spc_free(x->data);
    x->data = NULL;
    x->len = 0;
    NEXT;
  }
  OP(BUILTIN) if ((st = bc_builtin(p, ip, R, A, e)) != SPC_OK) return st; NEXT;
  OP(FAIL) return bc_fail(p, ip, R, e);

oob:
  return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                  "index %lld out of bounds for %s (length %lld)",
                  (long long)bad_k, bc_arr_name(p, bad_a), (long long)A[bad_a].len);
div0:
  return bc_error(p, ip, e, SPC_ERR_INTERNAL, "integer division by zero");
badshift:
  return bc_error(p, ip, e, SPC_ERR_INTERNAL, "shift count %lld out of range",
                  (long long)B_.i64);
}

/* clang-format on */

/* ---- ir_run -------------------------------------------------------------- */

static spc_status check_args(const ir_func *f, const ir_arg *args, spc_error *e) {
  if (f->nparams && !args)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "ir_run: function %s: no arguments",
                   f->name);
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    if (!vi->array || vi->dir == IR_OUT) continue;
    if (args[k].len < 0 || (args[k].len > 0 && !args[k].data))
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "ir_run: function %s: array "
                     "argument %s has length %lld and data %p",
                     f->name, vi->name, (long long)args[k].len, args[k].data);
  }
  return SPC_OK;
}

/* Copy the value of a ty scalar (only its bytes; bool normalized). */
static void copy_scalar(ir_val *d, const ir_val *s, ir_ty ty) {
  ir_val r = {0};
  if (ty == IR_BOOL) {
    unsigned char c;
    memcpy(&c, s, 1);
    r.b = c != 0;
  } else {
    memcpy(&r, s, ir_ty_size(ty));
  }
  *d = r;
}

/* OUT arrays read NULL, 0 after any failure (GIVE arrays stay the
 * caller's, as handed over). */
static void clear_outs(const ir_func *f, ir_arg *args) {
  if (!f || !args) return;
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = ir_var_get(f, f->params[k]);
    if (vi && vi->array && vi->dir == IR_OUT) {
      args[k].data = NULL;
      args[k].len = 0;
    }
  }
}

spc_status ir_run(const ir_func *f, ir_arg *args, spc_error *e) {
  /* a shared function was verified and compiled once (ir_func_share) */
  bc_prog *pre = f->shared ? f->bc : NULL;
  spc_status st = pre ? SPC_OK : ir_verify(f, e);
  if (st == SPC_OK) st = check_args(f, args, e);
  if (st != SPC_OK) {
    clear_outs(f, args);
    return st;
  }
  bc_prog *p = pre;
  ir_val *R = NULL;
  bc_arr *A = NULL;
  if (!pre && (st = bc_compile(f, &p, e)) != SPC_OK) {
    clear_outs(f, args);
    return st;
  }
  R = spc_malloc_n(p->nslots, sizeof *R);
  A = spc_calloc((size_t)(p->narr ? p->narr : 1), sizeof *A);
  if (!R || !A) {
    st = SPC_NOMEM(e);
    goto done;
  }
  memcpy(R, p->init, (size_t)p->nslots * sizeof *R);
  for (int k = 0; k < f->nparams; k++) {
    ir_var v = f->params[k];
    const ir_var_info *vi = &f->vars[v];
    if (vi->array && vi->dir != IR_OUT)
      A[p->arr_of[v]] = (bc_arr){args[k].data, args[k].len};
    else if (!vi->array && vi->dir != IR_OUT)
      copy_scalar(&R[p->slot_of[v]], &args[k].s, vi->ty);
  }
  st = exec(p, R, A, e);
done:
  /* OUT arrays to the caller (NULL on error), GIVE arrays back as they
   * are (on error too), scalars written back */
  for (int k = 0; k < f->nparams; k++) {
    ir_var v = f->params[k];
    const ir_var_info *vi = &f->vars[v];
    if (vi->dir == IR_GIVE) {
      bc_arr *x = A ? &A[p->arr_of[v]] : NULL;
      if (x) {
        args[k].data = x->data;
        args[k].len = x->len;
        x->data = NULL;
      }
    } else if (vi->array && vi->dir == IR_OUT) {
      bc_arr *x = A ? &A[p->arr_of[v]] : NULL;
      args[k].data = st == SPC_OK ? x->data : NULL;
      args[k].len = st == SPC_OK ? x->len : 0;
      if (x && st != SPC_OK) spc_free(x->data);
      if (x) x->data = NULL;
    } else if (!vi->array && vi->dir != IR_IN && st == SPC_OK) {
      copy_scalar(&args[k].s, &R[p->slot_of[v]], vi->ty);
    }
  }
  if (A)
    for (int a = 0; a < p->narr; a++)
      if (f->vars[p->arr_var[a]].dir == IR_LOCAL) spc_free(A[a].data);
  spc_free(A);
  spc_free(R);
  if (!pre) bc_free(&p);
  return st;
}
