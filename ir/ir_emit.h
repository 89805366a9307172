/* ir_emit.h -- state shared by the C emitter's files (ir_emit_c.c: names,
 * statements, the function; ir_emit_expr.c: expressions). */
#ifndef SPC_IR_EMIT_H
#define SPC_IR_EMIT_H

#include "ir_internal.h"

typedef struct emit_loop {
  struct emit_loop *up;
  ir_var var;  /* loop variable */
  bool steady; /* not assigned in the body: var + 1 cannot overflow */
} emit_loop;

typedef struct ectx {
  const ir_func *f;
  spc_str *o;
  char **names;   /* every identifier taken (spc_malloc'ed), for uniqueness */
  int nnames, capnames;
  const char **cname; /* var -> C name */
  const char **lname; /* array var -> its length's name */
  bool *read;         /* var read (scalar) or accessed (array) in the body */
  bool *len_read;     /* array var's length read in the body */
  emit_loop *loops;
  bool nomem;
} ectx;

/* C type of ty ("double", "spc_c128"). */
SPC_INTERNAL const char *emit_cty(ir_ty t);
/* Emit expression x as C; parenthesized when its precedence is below min. */
SPC_INTERNAL void emit_expr(ectx *c, const ir_expr *x, int min);

#endif
