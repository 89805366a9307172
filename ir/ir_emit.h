/* ir_emit.h -- state shared by the C emitter's files: ir_emit_c.c (names,
 * the function around the body), ir_emit_stmt.c (statements),
 * ir_emit_expr.c (expressions), ir_emit_prelude.c (the prelude). */
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
  const char *name; /* the function's name in C: opts' name, else f's */
  spc_str *o;
  char **names; /* every identifier taken (spc_malloc'ed), for uniqueness */
  int nnames, capnames;
  int *nh, nhcap; /* names hashed: slot = index + 1, 0 empty (0 cap: scan) */
  const char **cname; /* var -> C name */
  const char **lname; /* array var -> its length's name */
  bool *read;         /* var read (scalar) or accessed (array) in the body */
  bool *len_read;     /* array var's length read in the body */
  emit_loop *loops;
  bool nomem;
  spc_str decl_hi;                    /* declarations of saved loop bounds */
  const char **hiname;                /* var -> its saved bound (reused) */
  bool *hibusy;                       /* var -> that bound is live */
  bool jumps;                         /* some statement jumps to done */
  bool fails;                         /* a FAIL statement uses err */
  const char *status, *err, *err_len; /* names of these */
  ir_var atomic;                      /* stores a[i] = a[i] + e: atomicAdd */
  bool check;                         /* loads' and stores' indices and builtins' ranges
                                         checked (f->checked, not CUDA) */
  const char *flt_a;                  /* check: the spc_rt_fault noting a failed load */
  bool flt_used;                      /* check: some load is checked */
  const char *sidx;                   /* check: a store's index, evaluated once */
  bool flt_pending;                   /* check: loads emitted since the last test of flt_a */
} ectx;

/* A fresh identifier: base followed by suffix, with _ appended until it
 * is unused (the names are owned by c). */
SPC_INTERNAL const char *emit_claim(ectx *c, const char *base, const char *suffix);
/* The statements of a block (or one statement) at depth, to c->o. */
SPC_INTERNAL void emit_stmts(ectx *c, const ir_stmt *s, int depth);
/* The includes, macros and runtime a standalone file starts with. */
SPC_INTERNAL void emit_prelude(spc_str *out);

/* check: when loads were emitted since the last test, test whether one
 * failed (its message in err, SPC_ERR_INTERNAL, to done). */
SPC_INTERNAL void emit_load_test(ectx *c, int depth);

/* C type of ty ("double", "spc_c128"). */
SPC_INTERNAL const char *emit_cty(ir_ty t);
/* Emit expression x as C; parenthesized when its precedence is below min. */
SPC_INTERNAL void emit_expr(ectx *c, const ir_expr *x, int min);

#endif
