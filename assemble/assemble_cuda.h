/* assemble_cuda.h -- the CUDA emitter's routines (assemble_cuda.c: the IR
 * one GPU thread runs; assemble_cuda_text.c: the .cu file around them). */
#ifndef SPC_ASSEMBLE_CUDA_H
#define SPC_ASSEMBLE_CUDA_H

#include "assemble_internal.h"

/* One operand's variables in the routine being built. */
typedef struct cu_opnd {
  ir_var arr[SPC_MAX_ORDER][SPC_SPEC_MAX], vals, ext;
  ir_var c[SPC_MAX_ORDER], Nv[SPC_MAX_ORDER], lov[SPC_MAX_ORDER];
} cu_opnd;

typedef struct cu_build {
  conv_info I;  /* the format, its levels, index and coordinate types (int64) */
  spc_remap *r; /* its remapping (default parameters) */
  asm_inv iv[2];
  bool rowmode; /* y's row is the coordinate of a unique top level */
  ir_func *f;   /* the routine being built */
  cu_opnd A, B;
  ir_var x, y, ya, q0, q1, p0, p1, lane, nl, flush, acc, yrow, hit;
} cu_build;

/* The format's description and a first function named fname; order-2
 * formats of two levels or more (SPC_ERR_UNSUPPORTED otherwise, or when
 * the remapping cannot be inverted).  cu_build_free frees all, also after
 * an error. */
spc_status cu_build_init(cu_build *C, const spc_format_spec *fmt, const char *fname,
                         spc_error *e);
spc_status cu_build_next(cu_build *C, const char *fname, spc_error *e);
void cu_build_free(cu_build *C);
/* Into C->f (see assemble_cuda.c for the parameters). */
spc_status cu_build_spmv(cu_build *C, spc_error *e);
spc_status cu_build_range(cu_build *C, spc_error *e);
/* pass 0: upper bounds, 1: symbolic, 2: numeric. */
spc_status cu_build_spgemm(cu_build *C, int pass, spc_error *e);
/* SpGEMM needs two levels, the top one unique and with locate. */
bool cu_spgemm_ok(const cu_build *C);

#endif
