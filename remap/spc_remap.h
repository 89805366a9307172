/* spc_remap.h -- the coordinate remapping notation (DESIGN.md sections 1-2;
 * grammar, semantics and messages in docs/languages.md).
 *
 *   (i, j) -> (j - i as d, i, j)                         DIA
 *   (i, j) -> (#i as k, i, j)                            ELL (a counter)
 *   (i, j) -> let bi = i / M, bj = j / N in (bi, bj, i % M, j % N)   BCSR
 *
 * A remapping maps a component's canonical coordinates (the source indices,
 * one per tensor dimension) to its level coordinates (the outputs).  Outputs
 * are named by `as NAME`, a bare identifier by itself, others l0, l1, ... by
 * position.  `#i` is a counter: how many earlier components (in the order
 * the components arrive) share index i; `#(i, k)` shares i and k.
 *
 * Files: remap_parse.c (grammar), remap_check.c (names, types, counters),
 * remap_bounds.c (output ranges), remap_lower.c (to the IR),
 * remap_counter.c (counter maintenance in the IR). */
#ifndef SPC_REMAP_H
#define SPC_REMAP_H

#include "spc_lang.h"

/* A named compile-time integer (a format parameter such as a block size). */
typedef struct spc_remap_param {
  const char *name;
  int64_t value;
} spc_remap_param;

/* A counter: the source positions of its indices, in written order. */
typedef struct spc_remap_counter {
  int n;
  int idx[SPC_MAX_ORDER];
} spc_remap_counter;

/* A parsed and checked remapping.  Read-only for callers; names and nodes
 * live in ast (freed by spc_remap_free). */
typedef struct spc_remap {
  lang_ast *ast;
  int order_in, order_out;
  const char *in_names[SPC_MAX_ORDER];
  const char *out_names[SPC_MAX_ORDER];
  lang_node *out[SPC_MAX_ORDER]; /* checked output expressions */
  int nlets;
  const char **let_names; /* in binding order */
  lang_node **let_exprs;
  int nparams;
  spc_remap_param *params; /* copies (names in ast) */
  int ncounters;
  spc_remap_counter counters[SPC_MAX_ORDER];
  bool identity; /* outputs are the source indices */
  bool shared;   /* kept by asm_remap's cache: spc_remap_free leaves it */
  /* positions for messages */
  lang_node *in_decl[SPC_MAX_ORDER]; /* NAME nodes of the source list */
  lang_node **let_decl;              /* NAME nodes of the let names */
  lang_node *out_as[SPC_MAX_ORDER];  /* the `as NAME` node, or NULL */
  lang_node *head;                   /* the source list's '(' */
} spc_remap;

/* Parse and check a remapping for a tensor of the given order.  Parameters
 * (params[0..nparams)) are the only other names it may use.  Errors:
 * SPC_ERR_SPEC with the line and column (in src's file) of the offending
 * token: syntax, arity, duplicate / unknown / unused names, counters over
 * anything but source indices, non-integer outputs, too many outputs. */
SPC_INTERNAL spc_status spc_remap_parse(const lang_src *src, int order,
                                        const spc_remap_param *params,
                                        int nparams, spc_remap **out,
                                        spc_error *err);
/* The identity remapping of an order-N tensor over the source names
 * i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x. */
SPC_INTERNAL spc_status spc_remap_identity(int order, spc_remap **out,
                                           spc_error *err);
SPC_INTERNAL void spc_remap_free(spc_remap **r);

/* Output position of a name, or -1. */
SPC_INTERNAL int spc_remap_find_out(const spc_remap *r, const char *name);
/* Source position of a name, or -1. */
SPC_INTERNAL int spc_remap_find_in(const spc_remap *r, const char *name);

/* Ranges of every output (out[0..order_out)) when source index k ranges
 * over [0, dims[k]) and counter c over [0, counter_max[c]] (NULL: counters
 * unbounded).  An output whose range is unknown or overflows int64 comes
 * back with bounded = false (no error). */
SPC_INTERNAL spc_status spc_remap_bounds(const spc_remap *r,
                                         const int64_t *dims,
                                         const int64_t *counter_max,
                                         lang_ival *out, spc_error *err);

/* Lower every output to the IR of f: src[k] is the value of source index
 * k (any integer type), counter_vars[c] a scalar holding counter c for the
 * current component (see below; may be NULL without counters).  Let
 * bindings are assigned to fresh locals appended to block (NULL: each use
 * substitutes the expression).  out[k] receives output k (type: i64, or
 * what the output expression yields, e.g. u64). */
SPC_INTERNAL spc_status spc_remap_lower(const spc_remap *r, ir_func *f,
                                        ir_stmt *block, ir_expr *const *src,
                                        const ir_var *counter_vars,
                                        ir_expr **out, spc_error *err);

/* ---- counter maintenance (remap_counter.c) ------------------------------
 * How a counter's value is computed is the caller's (the planner's)
 * choice; these helpers emit the two common schemes:
 *   SPC_COUNTER_DENSE   a zeroed count array over the counted indices'
 *                       extents (mixed radix); per component
 *                       `value = cnt[key]; cnt[key] += 1`.  Any arrival
 *                       order; O(extent) memory.  The default.
 *   SPC_COUNTER_GROUPED components arrive grouped by the counted indices
 *                       (e.g. sorted): value restarts at 0 when they change.
 *                       No memory; wrong if the input is not grouped. */
typedef enum spc_counter_mode {
  SPC_COUNTER_DENSE = 0,
  SPC_COUNTER_GROUPED
} spc_counter_mode;

typedef struct spc_counter_ir {
  spc_counter_mode mode;
  const spc_remap_counter *ctr;
  ir_var value;               /* i64: the counter of this component */
  ir_var cnt;                 /* DENSE: the i64 count array */
  bool held;                  /* DENSE: cnt is the caller's (not freed) */
  ir_var prev[SPC_MAX_ORDER]; /* GROUPED: the previous indices */
  ir_var started;             /* GROUPED: a component was seen */
  int64_t stride[SPC_MAX_ORDER];
} spc_counter_ir;

/* Declare counter c's variables in f and append its setup to init (DENSE:
 * allocation of the count array, sized from dims; SPC_ERR_UNSUPPORTED when
 * the product overflows or exceeds max_entries).  len (may be NULL): for a
 * counter of one index, the array length as an expression (the extent
 * passed as data, so the routine does not depend on dims). */
SPC_INTERNAL spc_status spc_counter_begin(const spc_remap *r, int c,
                                          spc_counter_mode mode,
                                          const int64_t *dims,
                                          int64_t max_entries, ir_func *f,
                                          ir_stmt *init, spc_counter_ir *s,
                                          ir_expr *len, spc_error *err);
/* DENSE with the count array held by the caller: cnt, an i64 array
 * parameter of f (IR_INOUT) that the caller allocates zeroed (the extent
 * product of the counted indices, checked as above) and passes to every
 * call, so a count runs on across calls (a stream remapped chunk by
 * chunk counts as if in one call); spc_counter_end frees nothing. */
SPC_INTERNAL spc_status spc_counter_begin_held(const spc_remap *r, int c,
                                               const int64_t *dims,
                                               int64_t max_entries, ir_func *f,
                                               spc_counter_ir *s, ir_var cnt,
                                               spc_error *err);
/* Append to body (once per component, before its outputs are used) the
 * statements that set s->value for the component whose source indices are
 * src[0..order_in) and advance the count. */
SPC_INTERNAL void spc_counter_step(const spc_counter_ir *s, ir_func *f,
                                   ir_stmt *body, ir_expr *const *src);
/* Append the release of the counter's memory to fini. */
SPC_INTERNAL void spc_counter_end(const spc_counter_ir *s, ir_func *f,
                                  ir_stmt *fini);

#endif
