/* ir_internal.h -- what the files of ir/ share and nobody else needs:
 * the function object and its arena, type classes, the builtin table,
 * the expression and statement formatters shared by ir_print, ir_verify,
 * ir_run's messages and the C emitter, and the embedded runtime text. */
#ifndef SPC_IR_INTERNAL_H
#define SPC_IR_INTERNAL_H

#include "spc_ir.h"

/* Deepest nesting of expressions / statements ir_verify accepts (the
 * recursive passes stay far from the stack limit). */
#define IR_MAX_DEPTH 500

/* ---- the function (ir_func.c) -------------------------------------------- */
typedef struct ir_chunk ir_chunk; /* an arena block */

struct ir_func {
  char *name;        /* in the arena */
  ir_var_info *vars; /* spc_realloc'ed table */
  int nvars, capvars;
  int *hidx;         /* names hashed: slot = variable + 1, 0 empty (spc_realloc) */
  int hcap;          /* a power of two above 2 nvars, or 0 */
  ir_var *params; /* params[k] = variable of parameter k (spc_realloc) */
  int nparams, capparams;
  ir_stmt *body;
  ir_chunk *chunks; /* arena: every node, name and kids array */
  bool noalias;     /* array parameters never overlap (C: restrict) */
  bool checked;     /* emitted C checks each store's index against its array's
                       length (a user's level functions: a wrong size fails
                       with a message, as the interpreter does, instead of
                       writing past the allocation) */
  bool broken;      /* an allocation failed or a builder was misused */
  bool shared;      /* ir_func_share: read-only, kept for the process */
  uint64_t hash[2]; /* ir_func_hash, computed when shared */
  struct bc_prog *bc; /* shared: verified and compiled once for ir_run (NULL:
                         it did not compile; ir_run says why each time) */
  spc_status why;   /* SPC_ERR_NOMEM or SPC_ERR_INTERNAL */
  char msg[256];    /* the first failure */
  ir_expr dummy_e;  /* placeholders returned once broken */
  ir_stmt dummy_s;
};

/* Zeroed arena memory, or NULL (and f marked broken: out of memory). */
SPC_INTERNAL void *ir_arena(ir_func *f, size_t n);
SPC_INTERNAL char *ir_arena_str(ir_func *f, const char *s);
/* Mark f broken by a misuse (first message wins). */
SPC_INTERNAL void ir_misuse(ir_func *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
SPC_INTERNAL void ir_nomem(ir_func *f);

/* ---- types --------------------------------------------------------------- */
static inline bool ir_ty_valid(ir_ty t) { return t >= IR_BOOL && t < IR_NTYPES; }
static inline bool ir_ty_int(ir_ty t) { /* I32, I64, U64 */
  return t == IR_I32 || t == IR_I64 || t == IR_U64;
}
static inline bool ir_ty_intb(ir_ty t) { return t == IR_BOOL || ir_ty_int(t); }
static inline bool ir_ty_float(ir_ty t) { return t == IR_F32 || t == IR_F64; }
static inline bool ir_ty_signed(ir_ty t) { return t == IR_I32 || t == IR_I64; }
SPC_INTERNAL const char *ir_ty_short(ir_ty t); /* "bool", "i32", ... */
SPC_INTERNAL const char *ir_op_name(ir_op op); /* "+", "min", ... */
static inline bool ir_op_binary(ir_op op) { return op >= IR_ADD && op <= IR_MAX; }
static inline bool ir_op_unary(ir_op op) { return op >= IR_NEG && op <= IR_ABS; }
static inline bool ir_op_cmp(ir_op op) { return op >= IR_LT && op <= IR_NE; }

/* ---- builtins ------------------------------------------------------------ */
typedef struct ir_builtin_info {
  const char *name;
  int narrays; /* -1: at least 2 (sort_perm: perm and one key or more) */
  int nargs;
} ir_builtin_info;
SPC_INTERNAL extern const ir_builtin_info ir_builtins[IR_NBUILTINS];

/* Whether msg is a valid FAIL message for nargs arguments: only "%lld"
 * (one per argument, all used) and "%%" conversions.  NULL when valid,
 * else what is wrong (a static string). */
SPC_INTERNAL const char *ir_fail_msg_check(const char *msg, int nargs);

/* ---- formatting (ir_print.c) ------------------------------------------------
 * The listing syntax: `a[i + 1]`, `min(a, b)`, `i64(x)`, `c ? a : b`. */
SPC_INTERNAL void ir_fmt_expr(spc_str *out, const ir_func *f, const ir_expr *e);
/* One line: a simple statement, or the head of a compound one
 * (`for i in 0 .. n`, `while c`, `if c`). */
SPC_INTERNAL void ir_fmt_stmt_head(spc_str *out, const ir_func *f, const ir_stmt *s);
/* C operator precedence of e as printed in the listing (16: primary). */
SPC_INTERNAL int ir_prec_bin(ir_op op);
/* A C string literal for s ("..." with escapes). */
SPC_INTERNAL void ir_fmt_cstring(spc_str *out, const char *s);

/* ---- the runtime shared with generated code (ir_rt_text.c) --------------- */
SPC_INTERNAL extern const char ir_rt_text[]; /* ir/ir_rt.h verbatim */

#endif
