/* spc_assemble.h -- the conversion engine's generic path (DESIGN.md
 * sections 1, 3, 4; docs/formats.md, "How a conversion uses a spec").
 *
 * spc_convert turns any tensor readable through its levels into a tensor
 * format given by a spec (formats/spec.h): the source's components are
 * expanded (symmetric storage) and combined by the duplicate policy, then
 * remapped, checked against `requires` and `fill: zero`, ordered in the
 * target's level order, analysed (the levels' attribute queries) and
 * assembled level by level, top first: init, size, yield_pos +
 * insert_coord for every new coordinate prefix, finalize.  The remapping
 * and every level function run as IR (ir_run, the interpreter); one IR
 * function for the remapping and one per level.
 *
 * spc_convert_to_coo reads a converted tensor back through the target's
 * READ functions (begin, end, access, valid), lowered to one IR function,
 * and maps level coordinates back to canonical ones (see assemble_read.c
 * for the inverse of the remapping).
 *
 * The returned tensor borrows the format spec: the registry it came from
 * must outlive it. */
#ifndef SPC_ASSEMBLE_H
#define SPC_ASSEMBLE_H

#include "spc_query.h"
#include "spec.h"

typedef struct spc_convert_opts {
  int64_t max_positions; /* refuse ("too large") when a level would hold
                            more positions; 0: the default (2^31 - 1, less
                            when physical memory is small) */
} spc_convert_opts;

/* Convert src (any tensor readable through its levels) to the tensor
 * format fmt with parameters params[0..nparams) (overriding the format's
 * defaults), combining duplicates by dup.  *out: a new tensor whose levels
 * carry the target's level arrays (named as in the level specs),
 * t->format = fmt->name.  Refusals: SPC_ERR_UNSUPPORTED with "cannot hold
 * entry (i, j): requires ..." (1-based), "cannot hold the N explicit zeros
 * of this tensor: format F pads with zeros", "... too large ...". */
SPC_INTERNAL spc_status spc_convert(const spc_tensor *src,
                                    const spc_specs *specs,
                                    const spc_format_spec *fmt,
                                    const spc_remap_param *params, int nparams,
                                    spc_dup dup, spc_tensor **out,
                                    spc_error *e);
SPC_INTERNAL spc_status spc_convert_ex(const spc_tensor *src,
                                       const spc_specs *specs,
                                       const spc_format_spec *fmt,
                                       const spc_remap_param *params,
                                       int nparams, spc_dup dup,
                                       const spc_convert_opts *o,
                                       spc_tensor **out, spc_error *e);

/* Read a tensor made by spc_convert back to a COO tensor (canonical
 * coordinates, in the target's level order; padding skipped: positions
 * whose level says they are not valid, and zero values of fill: zero
 * formats).  SPC_ERR_ARG for a tensor spc_convert did not make. */
SPC_INTERNAL spc_status spc_convert_to_coo(const spc_tensor *t,
                                           spc_tensor **out, spc_error *e);

/* Whether t was made by spc_convert. */
SPC_INTERNAL bool spc_is_converted(const spc_tensor *t);

#endif
