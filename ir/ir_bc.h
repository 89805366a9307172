/* ir_bc.h -- the interpreter's compact form of a function: typed register
 * bytecode (ir/ir_compile.c makes it, ir/ir_interp.c runs it with the
 * out-of-line operations of ir/ir_interp_ops.c).
 *
 * Every scalar variable, constant, loop bound and temporary is a slot (an
 * ir_val) resolved at compile time; every array variable an entry of the
 * array table (data, len).  An instruction names its operand slots; jumps
 * name instruction indices.  where[pc] is the statement instruction pc
 * belongs to, for error messages. */
#ifndef SPC_IR_BC_H
#define SPC_IR_BC_H

#include "ir_internal.h"

/* Opcodes.  Suffixes: _B bool, _I32, _I64 (also U64 where the bits agree:
 * add, sub, mul, and, or, xor, shl, ==, !=), _U64, _F32, _F64, _C complex;
 * _64 either 64-bit integer.  Operands: d destination slot, a and b source
 * slots; c as noted. */
/* clang-format off */
#define BC_OPS(X)                                                              \
  X(END)                       /* return SPC_OK */                            \
  X(MOV)                       /* d = a */                                    \
  X(ADD_I32) X(ADD_I64) X(ADD_F32) X(ADD_F64) X(ADD_C)                         \
  X(SUB_I32) X(SUB_I64) X(SUB_F32) X(SUB_F64) X(SUB_C)                         \
  X(MUL_I32) X(MUL_I64) X(MUL_F32) X(MUL_F64) X(MUL_C)                         \
  X(DIV_I32) X(DIV_I64) X(DIV_U64) X(DIV_F32) X(DIV_F64) X(DIV_C)              \
  X(REM_I32) X(REM_I64) X(REM_U64) X(REM_F32) X(REM_F64)                       \
  X(MIN_I32) X(MIN_I64) X(MIN_U64) X(MIN_F32) X(MIN_F64)                       \
  X(MAX_I32) X(MAX_I64) X(MAX_U64) X(MAX_F32) X(MAX_F64)                       \
  X(AND_I32) X(AND_64) X(OR_I32) X(OR_64) X(XOR_I32) X(XOR_64)                 \
  X(SHL_I32) X(SHL_64) X(SHR_I32) X(SHR_I64) X(SHR_U64) /* b: count, i64 */   \
  X(LT_B) X(LT_I32) X(LT_I64) X(LT_U64) X(LT_F32) X(LT_F64)                    \
  X(LE_B) X(LE_I32) X(LE_I64) X(LE_U64) X(LE_F32) X(LE_F64)                    \
  X(EQ_B) X(EQ_I32) X(EQ_I64) X(EQ_F32) X(EQ_F64) X(EQ_C)                      \
  X(NE_B) X(NE_I32) X(NE_I64) X(NE_F32) X(NE_F64) X(NE_C)                      \
  X(NEG_I32) X(NEG_I64) X(NEG_F32) X(NEG_F64) X(NEG_C)                         \
  X(NOT) X(BNOT_I32) X(BNOT_64)                                                \
  X(ABS_I32) X(ABS_I64) X(ABS_F32) X(ABS_F64)                                  \
  X(I32_I64) X(I64_I32) X(I32_F64) X(I64_F64) X(F32_F64) X(F64_F32)            \
  X(CVT)                       /* d = (ty c) a, a of type b */                 \
  X(LOAD1) X(LOAD4) X(LOAD8) X(LOAD16) /* d = arr a [slot b] */                \
  X(STORE1) X(STORE4) X(STORE8) X(STORE16) /* arr a [slot b] = slot c */       \
  X(ADDL_I64) X(ADDL_F64) X(SUBL_I64) X(SUBL_F64) X(MULL_I64) X(MULL_F64)      \
                               /* d = a op arr c [slot b]: fused loads */     \
  X(LEN)                       /* d = len(arr a) */                           \
  X(JMP)                       /* goto c */                                   \
  X(JZ) X(JNZ)                 /* if (!a) / if (a) goto c */                  \
  X(FOR_I32) X(FOR_I64) X(FOR_U64) /* d = a; if !(d < b) goto c */            \
  X(NEXT_I32) X(NEXT_I64) X(NEXT_U64) /* d++; if (d < b) goto c */            \
  X(ALLOC)                     /* arr d = new [slot a] (b: zero), c: aux */   \
  X(FREE)                      /* free arr d */                               \
  X(BUILTIN) X(FAIL)           /* c: aux */

/* clang-format on */
typedef enum bc_op {
#define BC_ENUM(n) BC_##n,
  BC_OPS(BC_ENUM)
#undef BC_ENUM
      BC_NOPS
} bc_op;

typedef struct bc_ins {
  int32_t op, d, a, b, c;
} bc_ins;

/* Operands of a BUILTIN, FAIL or ALLOC: the statement, its array operands
 * (array table indices) and scalar operand slots, in pool[at..]. */
typedef struct bc_aux {
  const ir_stmt *s;
  int32_t at; /* arrays first (s->nvars), then scalar slots (s->nargs) */
} bc_aux;

typedef struct bc_prog {
  const ir_func *f;
  bc_ins *code;
  const ir_stmt **where; /* per instruction */
  int ncode, capcode;
  ir_val *init; /* initial slots: zeros, constants */
  int nslots;
  int32_t *slot_of; /* var -> slot (scalars), -1 for arrays */
  int32_t *arr_of;  /* var -> array table index, -1 for scalars */
  int32_t *arr_var; /* array table index -> var */
  int narr;
  bc_aux *aux;
  int naux, capaux;
  int32_t *pool;
  int npool, cappool;
} bc_prog;

/* An array operand while running: the caller's or the run's memory. */
typedef struct bc_arr {
  void *data;
  int64_t len;
} bc_arr;

/* Compile a verified function; SPC_ERR_NOMEM or SPC_OK. */
SPC_INTERNAL spc_status bc_compile(const ir_func *f, bc_prog **out, spc_error *e);
SPC_INTERNAL void bc_free(bc_prog **p);

/* The interpreter's out-of-line operations (ir_interp_ops.c), at the
 * instruction ip of p: fill e with "ir_run: function F: WHAT in `STMT`";
 * a cast the fast opcodes do not cover; a BUILTIN (ranges checked); a
 * FAIL (its code and formatted message). */
SPC_INTERNAL spc_status bc_error(const bc_prog *p, const bc_ins *ip, spc_error *e,
                                 spc_status code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
SPC_INTERNAL void bc_convert(ir_val *d, const ir_val *s, ir_ty from, ir_ty to);
SPC_INTERNAL spc_status bc_builtin(const bc_prog *p, const bc_ins *ip, ir_val *R,
                                   bc_arr *A, spc_error *e);
SPC_INTERNAL spc_status bc_fail(const bc_prog *p, const bc_ins *ip, const ir_val *R,
                                spc_error *e);
SPC_INTERNAL const char *bc_arr_name(const bc_prog *p, int a);

#endif
