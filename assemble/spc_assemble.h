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

/* spc_convert_opts (spconv.h): max_positions, engine, no_jit, jit_dir,
 * info are used here; dup and params come as arguments. */

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
/* spc_convert_ex of a source handed over: its coordinate arrays are freed
 * once remapped and its values taken (or freed) once in level order, so
 * the conversion never holds two copies of the components; src is left
 * to the caller to free (its arrays possibly gone), success or not. */
SPC_INTERNAL spc_status asm_convert_eat(spc_tensor *src, const spc_specs *specs,
                                        const spc_format_spec *fmt,
                                        const spc_remap_param *params, int nparams,
                                        spc_dup dup, const spc_convert_opts *o,
                                        spc_tensor **out, spc_error *e);
/* The conversion of a sparse workspace's sorted, combined stream (spw.h;
 * at most nmax components) whose shape is the plain COO shell `shell` (no
 * components, int64 coordinates): the stream is remapped chunk by chunk
 * (spw_stream), so its columns are never held whole, then sorted and
 * assembled as spc_convert_ex does, bit for bit; the shell's arrays are
 * the conversion's to replace and free.  SPC_NOT_HANDLED, nothing done,
 * where that does not apply (a remapping with a counter, a workspace
 * option in o). */
typedef struct spw spw;
typedef struct spw_stats spw_stats;
/* The stream: the workspace (freed, *w NULL, once streamed: its runs
 * give their memory back before the assembly; left as it is when
 * SPC_NOT_HANDLED), its statistics filled then (stats may be NULL). */
typedef struct asm_stream {
  spw *w;
  int64_t nmax;
  spw_stats *stats;
  /* the workspace's options (a second one puts a remapped stream in level
   * order): spc_convert_opts' spw, acc, mem */
  int spw;
  int64_t acc, mem;
} asm_stream;
SPC_INTERNAL spc_status asm_convert_stream(spc_tensor *shell, asm_stream *S,
                                           const spc_specs *specs, const spc_format_spec *fmt,
                                           const spc_remap_param *params, int nparams,
                                           spc_dup dup, const spc_convert_opts *o,
                                           spc_tensor **out, spc_error *e);
/* The same by format name or path (asm_convert_to_eat's resolution);
 * SPC_NOT_HANDLED also for a pattern summed (it may need counts). */
SPC_INTERNAL spc_status asm_convert_stream_to(spc_tensor *shell, asm_stream *S,
                                              const char *format, const spc_convert_opts *o,
                                              spc_tensor **out, spc_error *e);
/* spc_convert_to of a source handed over (asm_convert_eat; a pattern
 * summed converts as spc_convert_to does, from the source kept): *src is
 * freed, success or not. */
SPC_INTERNAL spc_status asm_convert_to_eat(spc_tensor **src, const char *format,
                                           const spc_convert_opts *o, spc_tensor **out,
                                           spc_error *e);
/* The bytes (level arrays and values) spc_convert_ex would give, without
 * placing the components: the target levels' queries and init functions
 * size the arrays (the levels above the last one yield their positions,
 * which the next level's per-parent queries group by; the last level
 * places nothing and no value array is made). */
SPC_INTERNAL spc_status asm_convert_size(const spc_tensor *src, const spc_specs *specs,
                                         const spc_format_spec *fmt,
                                         const spc_remap_param *params, int nparams,
                                         spc_dup dup, const spc_convert_opts *o,
                                         int64_t *bytes, spc_error *e);

/* Read a tensor made by spc_convert back to a COO tensor (canonical
 * coordinates, in the target's level order; padding skipped: positions
 * whose level says they are not valid, and zero values of fill: zero
 * formats).  SPC_ERR_ARG for a tensor spc_convert did not make. */
SPC_INTERNAL spc_status spc_convert_to_coo(const spc_tensor *t,
                                           spc_tensor **out, spc_error *e);
/* The same on the engine opts picks (NULL: the one t was made with). */
SPC_INTERNAL spc_status spc_convert_to_coo_ex(const spc_tensor *t,
                                              const spc_convert_opts *o,
                                              spc_tensor **out, spc_error *e);
/* The same for arrays nothing has checked (a file's): every index checked.
 * engine auto: the factory's checked routine, else (2^20 stored positions
 * or more) one compiled at run time, else the interpreter; a failure
 * reported by the interpreter.  factory: the factory's checked routines
 * only (SPC_ERR_UNSUPPORTED where it has none); jit: compiled at run time;
 * generic: the interpreter.  no_jit: never compiled at run time (auto).
 * info (may be NULL) as spc_convert_opts.info. */
SPC_INTERNAL spc_status spc_convert_to_coo_checked(const spc_tensor *t, spc_engine engine,
                                                   int no_jit, spc_convert_info *info,
                                                   spc_tensor **out, spc_error *e);

/* ---- for containers: describe a converted tensor, rebuild one -------------- */
typedef struct spc_conv_desc {
  const char *format, *format_yaml;
  int nlevels;
  const char *level_name[SPC_MAX_ORDER], *level_yaml[SPC_MAX_ORDER];
  int nparams;
  const char *pname[SPC_SPEC_MAX];
  int64_t pvalue[SPC_SPEC_MAX];
  int64_t lo[SPC_MAX_ORDER], N[SPC_MAX_ORDER]; /* level extents */
  int index64, coord64; /* position / coordinate arrays are int64 */
  int nmodes, modes[SPC_MAX_ORDER]; /* a mode order (formats without remap) */
  int no_jit; /* spc_conv_shell: the tensor's routines (its check included)
                 never compiled at run time */
} spc_conv_desc;
/* Fill d (pointers into t) when t was made by spc_convert. */
SPC_INTERNAL bool spc_conv_describe(const spc_tensor *t, spc_conv_desc *d);
/* Array k of level l of a converted tensor: its width and name. */
SPC_INTERNAL spc_itype spc_conv_array_type(const spc_tensor *t, int l, int k,
                                           const char **name);
SPC_INTERNAL int spc_conv_narrays(const spc_tensor *t, int l);
/* An empty converted tensor (no arrays, no values) of the described
 * format, owning a registry made from the built-in specs and the texts in
 * d (spec texts equal to built-in ones reuse those). */
SPC_INTERNAL spc_status spc_conv_shell(const spc_conv_desc *d, int order,
                                       const int64_t *dims, spc_vtype vt,
                                       spc_tensor **out, spc_error *e);

/* The tensor spc_convert_to(src, format, o) makes of a source of these
 * dims with n distinct stored components, without its contents: levels,
 * extents, index types and engine info as the conversion sets them, no
 * level arrays, no values (the caller adds them, spc_conv_array_type
 * naming each).  SPC_NOT_HANDLED where that shape depends on more than
 * dims and n (counters, zero padding) or n passes the position limit. */
SPC_INTERNAL spc_status spc_conv_result_shell(const char *format, const spc_convert_opts *o,
                                              int order, const int64_t *dims, int64_t n,
                                              spc_vtype vt, spc_tensor **out, spc_error *e);

/* SPC_OK when converting coo (t's components, read back) to t's format
 * gives t exactly (every array, extent and value bit for bit);
 * SPC_ERR_INPUT saying what differs otherwise. */
SPC_INTERNAL spc_status spc_conv_check_consistent(const spc_tensor *t,
                                                  const spc_tensor *coo,
                                                  spc_error *e);

/* y += A x (transpose: y += A^T x) for a matrix A made by spc_convert, from
 * the format's read-side level functions lowered to one IR routine (run on
 * the engine o picks, NULL: A's).  x and y are double (complex A: two
 * doubles per entry), not overlapping; threads > 1 splits the work by the
 * schedule (include/spconv.h: the top level's positions, or level 1's in
 * equal chunks), with per-thread partials summed in thread order; info
 * (may be NULL) gets the schedule that ran. */
SPC_INTERNAL spc_status spc_conv_spmv(const spc_tensor *t, bool transpose,
                                      const void *x, void *y, int threads,
                                      spc_schedule sched, spc_kernel_info *info,
                                      const spc_convert_opts *o, spc_error *e);

/* Whether t was made by spc_convert. */
SPC_INTERNAL bool spc_is_converted(const spc_tensor *t);


/* The counting path over a stream of blocks (assemble_write.c): create
 * for FORMAT with a prototype (order, dims, value and coordinate types of
 * every block; nmax: at most this many components) -- *out NULL when the
 * format's levels do not allow it; count every block (asm_counter_ok: 1
 * while the blocks are in an order counting can place, 0 out of order,
 * -1 a repeated component); then begin_place, place the same blocks
 * again, finish. */
typedef struct asm_counter asm_counter;
SPC_INTERNAL spc_status asm_counter_create(const char *format, const spc_convert_opts *o,
                                           const spc_tensor *proto, int64_t nmax,
                                           asm_counter **out, spc_error *e);
SPC_INTERNAL spc_status asm_counter_count(asm_counter *c, const spc_tensor *block, spc_error *e);
SPC_INTERNAL int asm_counter_ok(const asm_counter *c);
/* The same on raw blocks: n components, crd[d] of the prototype's types. */
SPC_INTERNAL spc_status asm_counter_count_raw(asm_counter *c, int64_t n, const void *const *crd,
                                              spc_error *e);
SPC_INTERNAL spc_status asm_counter_place_raw(asm_counter *c, int64_t n, const void *const *crd,
                                              const void *vals, spc_error *e);
SPC_INTERNAL spc_status asm_counter_begin_place(asm_counter *c, spc_error *e);
SPC_INTERNAL spc_status asm_counter_place(asm_counter *c, const spc_tensor *block, spc_error *e);
SPC_INTERNAL spc_status asm_counter_finish(asm_counter *c, spc_tensor **out, spc_error *e);
SPC_INTERNAL void asm_counter_free(asm_counter **c);

#endif
