/* assemble_internal.h -- shared by the conversion engine's files:
 * the converted tensor (a spc_tensor with the conversion's description
 * behind it) and the binding of a level's names to IR variables. */
#ifndef SPC_ASSEMBLE_INTERNAL_H
#define SPC_ASSEMBLE_INTERNAL_H

#include "spc_assemble.h"
#include <stdatomic.h>

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
  spc_specs *own; /* the registry fmt lives in, when the tensor owns it */
  spc_engine engine; /* read back with the engine it was made with */
  bool no_jit;
  char jit_dir[512]; /* and its JIT cache ("" : the default) */
  int nmodes;        /* a mode order given for a format without remapping */
  int modes[SPC_MAX_ORDER];
  char remap_text[320]; /* the remapping made from modes */
  /* a hash of fmt .. modes (the format's texts, levels, parameters, types),
   * made by the first SpMV of the tensor (kh_made 1 once kh holds it):
   * hashing the texts was a fifth of a small SpMV */
  _Atomic uint64_t kh[2];
  _Atomic int kh_made;
  /* whether level 1's segments lie in the parents' order, end(p) ==
   * begin(p + 1) (the positions schedule's split needs it): 0 not known
   * yet, 1 yes, 2 no -- checked by the first SpMV that would split */
  _Atomic int segs;
  /* auto's SpMV plan for the thread count asked last (amemo.req; 0: none
   * yet), so later products of the tensor skip top_range's and the cuts'
   * interpreted routines (1.5 us of bayer10's 27 on two threads); read
   * and written under a critical section (assemble_read.c plan_spmv) */
  struct conv_amemo {
    int req, nt, sched;
    bool balanced;
    int64_t b0, e0;
    int64_t at[65];
    char note[256];
  } amemo;
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
  ir_var nrun; /* yield_run's n (-1: not bound) */
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
/* Level l of a read nest bound for lowering in f: its arrays arr,
 * extents Nv[l] and lov[l], coordinate c[l], fresh p and q, and the
 * coordinates above it (c[0..l)) by their remapped names out_names;
 * arr: level l's arrays. */
void asm_bind_nest(lvbind *b, const conv_info *I, const char *const *out_names, int l,
                   const ir_var *arr, const ir_var *Nv, const ir_var *lov, const ir_var *c,
                   ir_func *f);
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

/* ---- engines (assemble_engine.c) ------------------------------------------ */
typedef struct asm_key {
  uint64_t hi, lo;
  char hex[33];
} asm_key;

typedef struct asm_engine {
  const spc_convert_opts *o;
  spc_engine want;
  bool no_jit;
  spc_convert_info *info;
} asm_engine;

void asm_engine_init(asm_engine *E, const spc_convert_opts *o);
/* Run f with ir_run's arguments on the engine E picks (E NULL: generic). */
typedef int (*asm_entry)(ir_arg *args, char *err, size_t err_len);
/* The same in two steps: pick the engine once (compiling if need be),
 * then call from any number of threads. */
spc_status asm_prepare(asm_engine *E, const ir_func *f, asm_entry *fn,
                       spc_error *e);
/* asm_prepare where only a factory routine will do: *fn that routine,
 * or NULL; nothing noted in E's info (asm_note_factory: n routines ran
 * on the factory). */
spc_status asm_prepare_factory(const ir_func *f, asm_entry *fn, spc_error *e);
void asm_note_factory(asm_engine *E, int n);
/* a routine ran on the interpreter without asm_prepare (called as asm_call
 * with no entry) */
void asm_note_generic(asm_engine *E);
spc_status asm_call(asm_entry fn, const ir_func *f, ir_arg *args, spc_error *e);
/* Threads for a phase over n components (counting, chunks, the read-out
 * in chunks): OpenMP's count, at most 64, one per 2^17 components at least. */
int asm_threads(int64_t n);
spc_status asm_run(asm_engine *E, const ir_func *f, ir_arg *args,
                   spc_error *e);
/* Key of f: a hash of its C text under a fixed name, and of the JIT
 * flags.  With out: also append f emitted as C named `name` (NULL:
 * "spc_f_" + the key), with the prelude when prelude is set. */
spc_status asm_emit_keyed(const ir_func *f, const char *name, bool prelude,
                          spc_str *out, asm_key *k, spc_error *e);
void asm_key_of(const char *text, size_t n, asm_key *k);

/* The routine cache (assemble_engine.c): a conversion's routines built
 * once per process for a key (assemble_write.c's rc_key: the formats,
 * when built in, the types, the parameters and whatever else the builder
 * reads), with what the builder found out beside the function.  f is
 * shared (ir_func_share), fn its factory routine (NULL: f is only
 * interpreted, e.g. a routine run once with ir_run, or no function). */
typedef struct asm_rc_val {
  ir_func *f;
  asm_entry fn;
  int aux[6];
  bool flags[SPC_SPEC_MAX];
} asm_rc_val;
bool asm_rc_get(const uint64_t key[2], asm_rc_val *v);
/* Keep *v under key: f is shared and the cache holds it from now on
 * (true).  Another thread's for the same key first: *v becomes that one
 * and ours is freed (true).  The cache full: nothing kept, *v the
 * caller's still (false). */
bool asm_rc_put(const uint64_t key[2], asm_rc_val *v);
/* Keys of the cache: two 64-bit lanes fed a word (a name: its hash) at a
 * time; a format by its content hash and levels by their places in it,
 * a converted tensor's description (false: a spec without a hash, which
 * is not cached). */
void asm_rk_put(uint64_t k[2], uint64_t x);
void asm_rk_str(uint64_t k[2], const char *s);
bool asm_rk_fmt(uint64_t k[2], const spc_format_spec *f, const spc_format_level *const *lv, int nl);
bool asm_rk_info(uint64_t k[2], const conv_info *I);
/* SPC_ROUTINE_CHECK set in the environment (the tests): every routine
 * found in the cache is built again and must equal it.  Read on the first
 * call; asm_rc_recheck makes the next call read it again. */
bool asm_rc_checking(void);
void asm_rc_recheck(void);
/* A mismatch found (counted; returns true), and the count so far: the
 * tests assert none, since some callers fall back quietly on the error. */
bool asm_rc_mismatch(void);
long asm_rc_mismatches(void);
/* The remappings asm_remap has parsed in this process (cached or, the cache full, not):
 * a format's remapping is parsed once, whichever registry holds it. */
long asm_remap_parses(void);
/* The routine under key into *v: the cache's (*hit), else made by build
 * (into a zeroed *v; its function freed on error) and kept where can is
 * set -- with fac, only where the factory has it (looked up into v->fn,
 * *looked set).  Under SPC_ROUTINE_CHECK a hit is built again and must
 * equal the cache's (IR hash, aux, flags): else SPC_ERR_INTERNAL naming
 * the routine (what) and the format.  v->f is the caller's to free (a
 * no-op when shared). */
typedef spc_status (*asm_rc_build_fn)(void *ctx, asm_rc_val *v, spc_error *e);
spc_status asm_rc_routine(const uint64_t key[2], bool can, bool fac, const char *what,
                          const char *fmt, asm_rc_build_fn build, void *ctx, asm_rc_val *v,
                          bool *hit, bool *looked, spc_error *e);

/* The factory: routines compiled in at build time (build/gen/factory.c,
 * written by tools/factory_gen.c; an empty table when built without). */
typedef struct asm_factory_entry {
  uint64_t hi, lo;
  int (*fn)(ir_arg *args, char *err, size_t err_len);
} asm_factory_entry;
extern const asm_factory_entry spc_factory_table[];
extern const int spc_factory_n;

/* The extension table every converted tensor carries (assemble_api.c). */
extern const spc_tensor_ext asm_conv_ext;
/* FORMAT (a built-in name or a YAML path, with o->spec_files) -> its spec;
 * *reg the registry it lives in; *own set when that registry is new (the
 * caller owns it). */
spc_status asm_resolve_format(const char *format, const spc_convert_opts *o,
                              const spc_specs **reg, spc_specs **own,
                              const spc_format_spec **fmt, spc_error *e);

/* The routines of a conversion to / from fmt, built for the given types
 * (nosort: the remapping for the sparse workspace path) without data (assemble_write.c, assemble_read.c): for the factory
 * generator and `spconv gen`.  cb gets each routine (owned by the caller
 * of cb, freed after cb returns). */
typedef spc_status (*asm_routine_cb)(void *ctx, ir_func *f, spc_error *e);
spc_status asm_write_routines(const spc_specs *specs, const spc_format_spec *fmt,
                              int order, ir_ty src_ty, ir_ty index_ty,
                              ir_ty coord_ty, spc_vtype vt,
                              const spc_remap_param *params, int nparams,
                              unsigned what, asm_routine_cb cb, void *ctx,
                              spc_error *e);
/* what: ASM_W_NOSORT the remapping for the sparse workspace (no sort);
 * ASM_W_COUNT also the counting path's routines (count, bucket);
 * ASM_W_SIZES also the last level's measuring routine (spc_convert_size);
 * ASM_W_STREAM also every level's routines over a stream (stream_levels) */
enum { ASM_W_NOSORT = 1, ASM_W_COUNT = 2, ASM_W_SIZES = 4, ASM_W_STREAM = 8 };
/* mode 0: spc_conv_read, the whole read-out; 1 (ranged): spc_conv_readr,
 * the read-out of the top level's positions [q0, q1) (three more
 * parameters after nout: q0, q1, and cnt: nonzero counts only, no arrays)
 * -- a text writer's parts (asm_read_part); 2: spc_conv_reado, the same
 * range counted (cnt) or written into given arrays from position o0 (a
 * fourth parameter) -- the read-out in chunks on threads.  checked: every
 * index checked in compiled code too (spc_convert_to_coo_checked) */
spc_status asm_read_routine(const spc_format_spec *fmt, int order,
                            ir_ty index_ty, ir_ty coord_ty, spc_vtype vt, int mode,
                            bool checked, asm_routine_cb cb, void *ctx, spc_error *e);
spc_status asm_read_part(const spc_tensor *t, int64_t q0, int64_t q1, int64_t *n,
                         spc_tensor **out, spc_error *e);
/* The fused routines (a source of format src_fmt and types sindex_ty,
 * scoord_ty read through its levels into fmt of types index_ty, coord_ty:
 * assemble_write.c): the counting plan's where the types are equal, the
 * direct plan's for any, when both formats allow them; nothing otherwise. */
spc_status asm_fused_routines(const spc_specs *specs, const spc_format_spec *src_fmt,
                              const spc_format_spec *fmt, int order, ir_ty sindex_ty,
                              ir_ty scoord_ty, ir_ty index_ty, ir_ty coord_ty, spc_vtype vt,
                              asm_routine_cb cb, void *ctx, spc_error *e);

/* The options' format parameters (o may be NULL) as remapping parameters
 * into ps[SPC_MAX_PARAMS]; their count. */
int asm_opts_params(const spc_convert_opts *o, spc_remap_param *ps);
/* fmt's remapping for a tensor of this order (built-in formats' parsed
 * once and shared), or the mode order `modes` written into buf. */
spc_status asm_remap(const spc_format_spec *fmt, int order, const spc_remap_param *ps,
                     int nps, const int *modes, int nmodes, char *buf, size_t nbuf,
                     spc_remap **r, spc_error *e);

/* The SpMV routine of a matrix format (assemble_read.c), for the factory:
 * split for the positions schedule (SPC_ERR_UNSUPPORTED when the format's
 * second level cannot be split), lanes for the lanes schedule
 * (SPC_ERR_UNSUPPORTED where it does not fit), same for auto's lanes kept
 * only where a row's products are nonnegative (real values, each entry of y
 * one row's), else the rows schedule's. */
spc_status asm_spmv_routine(const spc_format_spec *fmt, ir_ty index_ty, ir_ty coord_ty,
                            spc_vtype vt, bool transpose, bool split, bool lanes, bool pair,
                            bool same, asm_routine_cb cb, void *ctx, spc_error *e);

/* The inverse of a format's remapping (assemble_read.c): canonical index d
 * is level coordinate a (b < 0), or lc[a] * K + lc[b]. */
typedef struct asm_inv {
  int a, b;
  int64_t K;
} asm_inv;
/* For routines built without data (the CUDA emitter): I (fmt and types
 * set) gets fmt's default parameters and its levels for this order, *r
 * the remapping (the caller frees it, also on error) and iv its inverse. */
spc_status asm_read_info(conv_info *I, int order, spc_remap **r, asm_inv *iv, spc_error *e);

/* A source tensor read through its own level functions inside another
 * routine (assemble_read.c): asm_src_new appends to f the parameters of
 * the source (each level's arrays, the values unless pattern, the level
 * extents) and loads the extents at the top of f's body; asm_src_nest
 * appends the loop nest to dst, calling fn for the code of one component
 * with its canonical coordinates (int64) and value (NULL: pattern).  With
 * stop >= 0 every loop of the nest is left once stop is non-zero (the leaf
 * sets it and breaks).  asm_src_args fills those arguments for tensor t
 * of info I (extv: 2 * SPC_MAX_ORDER int64 kept alive by the caller),
 * returning how many, or -1 with e set. */
typedef spc_status (*asm_leaf_fn)(void *ctx, ir_func *f, ir_stmt *body, ir_expr *const *x,
                                  ir_expr *val, spc_error *e);
typedef struct asm_src asm_src;
spc_status asm_src_new(const conv_info *I, int order, spc_vtype vt, bool range, ir_func *f,
                       asm_src **S, spc_error *e);
/* range: two more parameters after the extents, q0 and q1, the top
 * level's positions the nest visits (asm_src_top_range: all of them). */
spc_status asm_src_top_range(const spc_tensor *t, int64_t *b, int64_t *en, spc_error *e);
/* SPC_OK where every index of r (fmt's remapping with the parameters ps)
 * can be recovered from the level coordinates as the tensor is read back
 * (a coordinate itself, or i / K with i % K); else the reader's refusal,
 * naming the index and the remapping's line. */
spc_status asm_remap_invertible(const spc_format_spec *fmt, const spc_remap *r,
                                const spc_remap_param *ps, int nps, spc_error *e);
/* Top positions [b, en) cut into nt chunks of about equal numbers of
 * level-1 positions (components of a two-level source): off[0] = b, ...,
 * off[nt] = en, nondecreasing.  SPC_ERR_UNSUPPORTED where level 1's
 * positions are not contiguous across parents (then cut by top positions). */
spc_status asm_src_cuts(const spc_tensor *t, int64_t b, int64_t en, int nt, int64_t *off,
                        spc_error *e);
spc_status asm_src_nest(asm_src *S, ir_stmt *dst, ir_var stop, asm_leaf_fn fn, void *ctx,
                        spc_error *e);
/* asm_src_nest over level 1's positions in one loop where the source has
 * two levels, the second compact (its positions contiguous across parents)
 * and the top one without `valid`, and -- checked by the routine, else it
 * runs the nested loops -- level 1's segments lie in the parents' order
 * (end(p) == begin(p + 1)): the components and their order are the
 * nested loops', but level 0's coordinate and, in the loop, level 1's
 * parent position are fresh variables never assigned, sent[0] and
 * sent[1] (both -1: the nested loops were built, no flat form).  The
 * caller, its routine complete, calls ir_prune_from on them: 1, the nest
 * is right (and the dead reads gone); 0, something reads one of them and
 * the routine must be built again with asm_src_nest. */
spc_status asm_src_nest_flat(asm_src *S, ir_stmt *dst, ir_var stop, asm_leaf_fn fn, void *ctx,
                             ir_var *sent, spc_error *e);
int asm_src_args(const conv_info *I, const spc_tensor *t, ir_arg *a, int64_t *extv, spc_error *e);
void asm_src_free(asm_src **S);

/* The process-wide registry of built-in specs (built once, never freed). */
spc_status asm_builtin_specs(const spc_specs **out, spc_error *e);

#endif
