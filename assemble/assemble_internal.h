/* assemble_internal.h -- shared by the conversion engine's files:
 * the converted tensor (a spc_tensor with the conversion's description
 * behind it) and the binding of a level's names to IR variables. */
#ifndef SPC_ASSEMBLE_INTERNAL_H
#define SPC_ASSEMBLE_INTERNAL_H

#include "spc_assemble.h"

/* What reading a converted tensor back needs.  Until struct spc_level can
 * hold a YAML level (see the report), it lives behind the spc_tensor in
 * one allocation (spc_tensor_free frees it with the tensor; nothing in it
 * is owned separately). */
typedef struct conv_info {
  const spc_format_spec *fmt; /* borrowed from the registry */
  int nlevels;
  const spc_format_level *lv[SPC_MAX_ORDER];
  int64_t lo[SPC_MAX_ORDER], N[SPC_MAX_ORDER];
  int nparams;
  spc_remap_param params[SPC_SPEC_MAX]; /* names borrowed from fmt */
  ir_ty index_ty, coord_ty;
  char name[64]; /* t->format points here */
} conv_info;

typedef struct conv_tensor {
  spc_tensor t; /* first: the pointer handed out */
  conv_info info;
} conv_tensor;

/* Names a level function sees, bound to variables of the function being
 * built (-1: not available here). */
typedef struct lvbind {
  const spc_level_spec *ls;
  const spc_format_level *fl; /* overrides; may be NULL */
  ir_ty index_ty, coord_ty;
  ir_var p, q, c, np, N, lo;
  ir_var arr[SPC_SPEC_MAX], work[SPC_SPEC_MAX];
  int nq;
  const char *qnames[SPC_SPEC_MAX * 4];
  ir_var qvars[SPC_SPEC_MAX * 4];
  char qbuf[SPC_SPEC_MAX * 4][64];
  int nextra; /* other levels' coordinates (read side) */
  const char *extra[SPC_MAX_ORDER];
  ir_var extra_var[SPC_MAX_ORDER];
} lvbind;

void asm_bind_init(lvbind *b, const spc_level_spec *ls,
                   const spc_format_level *fl, ir_ty index_ty,
                   ir_ty coord_ty);
/* IR type of a level array / workspace type name. */
ir_ty asm_tname_ty(lang_tname t, ir_ty index_ty, ir_ty coord_ty);
/* The text of function k (the format's override first); NULL: absent. */
const spc_lfn *asm_lfn(const lvbind *b, spc_lfn_kind k);
/* Lower function k: an expression into *val (when val is non-NULL and the
 * function is an expression), or statements appended to dst (`return e`
 * assigns ret).  SPC_ERR_INTERNAL when absent. */
spc_status asm_lower_fn(ir_func *f, ir_stmt *dst, const lvbind *b,
                        spc_lfn_kind k, ir_var ret, ir_expr **val,
                        spc_error *e);
ir_ty asm_value_ty(spc_vtype vt);

#endif
