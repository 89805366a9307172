/* remap_internal.h -- what the files of remap/ share: the checker run
 * after parsing, and the resolver that binds a remapping's names. */
#ifndef SPC_REMAP_INTERNAL_H
#define SPC_REMAP_INTERNAL_H

#include "spc_remap.h"

/* Check a parsed remapping (remap_check.c): names, types, counters,
 * output names; numbers the counters (node->ival). */
SPC_INTERNAL spc_status spc_remap_check(spc_remap *r, int order,
                                        spc_error *err);

/* Binding of a remapping's names for the checker, the interval analysis
 * and the lowering (remap_check.c).  nlets_visible: lets [0, n) are in
 * scope.  Ranges and IR bindings are filled where given (NULL: none). */
typedef struct remap_scope {
  const spc_remap *r;
  int nlets_visible;
  lang_type coord;           /* type of a source index */
  const lang_ival *in_ival;  /* ranges of source indices */
  const lang_ival *let_ival; /* ranges of lets */
  ir_expr *const *in_expr;   /* IR: source values */
  const ir_var *let_var;     /* IR: lets assigned to locals ... */
  ir_expr *const *let_expr;  /* ... or substituted */
} remap_scope;
SPC_INTERNAL bool spc_remap_resolve(void *ctx, const char *name, lang_sym *s);
SPC_INTERNAL lang_env spc_remap_env(remap_scope *sc);

#endif
