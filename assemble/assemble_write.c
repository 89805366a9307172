/* assemble_write.c -- spc_convert: the generic conversion path.
 *
 *   1. source components: expand symmetric storage, combine duplicates by
 *      the policy (stable: first/last follow the source order);
 *   2. one IR function (remap_func): per component the counters, the
 *      remapping and the `requires` conditions (a failing entry stops the
 *      run with "cannot hold entry ..."), into one array per level;
 *   3. level extents [lo, lo+N) by interval analysis (counters bounded by
 *      their maximum, computed in the same run);
 *   4. in C: a stable sort of the components by their level coordinates,
 *      top level first (pack_components: one packed key per component,
 *      values carried along; else sort_components: the runtime's
 *      sort_perm and a gather), equal level tuples combined (duplicates,
 *      or a remapping that is not one-to-one), the `fill: zero` check, the
 *      per-level "new coordinate prefix" flags;
 *   5. per level, top first, one IR function (level_func): the level's
 *      queries over its parent positions, init, size (with the size limit),
 *      yield_pos + insert_coord at every new prefix, the values at the last
 *      level, finalize.  The positions it yields are the next level's
 *      parent positions.
 * A sparse workspace's merged stream (the builder, a file under --mem) is
 * not held whole: stream_levels runs the same level functions cut at
 * their phases, chunk by chunk, level by level. */
#include "assemble_internal.h"
#include "spw.h"
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "spc_omp.h"

/* An internal plan (not in spconv.h): the triangle plan of a symmetric
 * file into CSR or CSC, or nothing (SPC_NOT_HANDLED) -- convert_run's
 * intermediate on the way to another target. */
#define PLAN_TRIANGLE_ONLY 0x747269

/* ---- parameters, levels, the remapping ------------------------------------ */

typedef struct conv {
  const spc_format_spec *fmt;
  const spc_specs *specs;
  const spc_tensor *comb; /* the source components (COO, levels in
                             dimension order): src itself or own_comb */
  spc_tensor *own_comb;
  /* comb's arrays the conversion may free as it consumes them (its
   * coordinates once remapped, its values once in level order): own_comb,
   * or a source handed over (asm_convert_eat); NULL: none */
  spc_tensor *eat;
  /* the components as a sorted, combined workspace stream (comb: a COO
   * shell, int64 coordinates, no components): remapped chunk by chunk
   * (remap_stream), never held whole; stream_max bounds their count */
  asm_stream *stream;
  int order, L;
  int64_t n;
  spc_remap *r;
  int nparams;
  spc_remap_param ps[SPC_SPEC_MAX];
  const spc_format_level *lv[SPC_MAX_ORDER];
  int64_t lo[SPC_MAX_ORDER], N[SPC_MAX_ORDER];
  int64_t *lc[SPC_MAX_ORDER]; /* level coordinates, level order */
  bool *isnew[SPC_MAX_ORDER]; /* per level: the component's prefix is new there */
  void *vals; /* values in level order (NULL: pattern) */
  bool vals_lent; /* vals is the source's own array (in order, not eaten): not freed */
  spc_vtype vt; /* values of the result */
  ir_ty index_ty, coord_ty;
  int64_t limit;
  spc_dup dup;
  asm_engine eng;
  bool nosort;  /* the sparse workspace orders the components */
  bool carry;   /* build_remap: counters carried across calls (a stream) */
  bool bucketed; /* the plan's sort was the workspace's bucket flush */
  int bucket_threads; /* the threads that flush ran on */
  bool inorder;  /* no sort: the remapped components were in order, unique */
  bool measure; /* spc_convert_size: the sizes only (see run_levels) */
  int64_t bytes; /* measure: the bytes the result would hold */
  const spc_convert_opts *o;
  int nmodes, modes[SPC_MAX_ORDER];
  char remap_text[320];
  /* the output in temporary files (out_take): the budget (0: none), the
   * output's bytes kept in memory, the arrays and bytes moved to files */
  int64_t om_budget, om_held, om_bytes;
  int om_arrays;
  /* rc_key's part that depends on the target alone (format, levels,
   * parameters, modes, remapping), hashed once: kb_fmt and the levels
   * it was hashed for (NULL: not yet) */
  const spc_format_spec *kb_fmt;
  const spc_format_level *kb_lv[SPC_MAX_ORDER];
  int kb_L, kb_order, kb_np, kb_nm;
  bool kb_ok;
  uint64_t kb[2];
  const conv_info *ks; /* the source whose hash ks_h is (NULL: none yet) */
  bool ks_ok;
  uint64_t ks_h[2];
} conv;

/* The placing passes' guard, q < 0 || q >= size, as one unsigned compare
 * (size, a count, is never negative; a negative q turns huge): one branch an
 * entry, not two. */
static ir_expr *pos_outside(ir_func *f, ir_var q, ir_var size) {
  return ir_bin(f, IR_GE, ir_cast(f, IR_U64, ir_cast(f, IR_I64, ir_ref(f, q))),
                ir_cast(f, IR_U64, ir_ref(f, size)));
}

/* ---- the output in temporary files (a memory budget: --mem) -------------------
 * A conversion under a budget (a stream: the file in blocks, the
 * workspace's runs) does not hold its output in memory either.  As soon as
 * init has made a level's arrays (and the values), each one that would
 * take the output's share of memory past a quarter of the budget is moved
 * into a temporary file (spc_map_adopt: only the pages init wrote are
 * copied), and the pages that each chunk fills are given back to the file
 * after it (out_drop).  The writers (.bsp.h5, .npz, COO text) read such
 * arrays block by block in the same way: the output is written to disk as
 * it is packed, and the process holds the budget, a chunk and the
 * queries' per-parent arrays. */
static spc_status out_take(conv *C, ir_arg *a, size_t w, spc_error *e) {
  int64_t b;
  if (C->om_budget <= 0 || !a->data || a->len <= 0 ||
      __builtin_mul_overflow(a->len, (int64_t)w, &b))
    return SPC_OK;
  if (b < 4096 || C->om_held + b <= C->om_budget / 4) {
    C->om_held += b;
    return SPC_OK;
  }
  spc_status s = spc_map_adopt(&a->data, (size_t)b, e);
  if (!s) C->om_arrays++, C->om_bytes += b;
  return s;
}

/* The level's arrays made by init (arr, level l) and the values (vout,
 * NULL: none) into files where out_take says. */
static spc_status out_take_level(conv *C, int l, ir_arg *arr, ir_arg *vout, spc_error *e) {
  const spc_level_spec *ls = C->lv[l]->lf;
  spc_status s = SPC_OK;
  for (int x = 0; x < ls->narrays && !s; x++)
    s = out_take(C, &arr[x],
                 asm_tname_ty(ls->arrays[x].type, C->index_ty, C->coord_ty) == IR_I32 ? 4 : 8, e);
  if (!s && vout && vout->data) s = out_take(C, vout, spc_vtype_size(C->vt), e);
  return s;
}

/* The pages a chunk filled back to the files. */
static void out_drop(const conv *C) {
  if (C->om_arrays) spc_map_drop_all();
}

static void out_info(const conv *C, spc_convert_info *info) {
  if (!info) return;
  info->mapped_arrays = C->om_arrays;
  info->mapped_bytes = C->om_bytes;
}

/* The positions a level may hold by default: half of physical memory at
 * 16 bytes a position (a value and an index, or an index and a count
 * while assembling) -- past 2^31 where the memory is there (69 GB and
 * more); 2^31 - 1 when it is unknown.  Measured peak on 23 GB: R-MAT
 * 2^22 (33 M entries) into bcsr 4 x 4, 527 M positions, 5.6 GB; a
 * 1 x 300 M matrix into csc, 2.4 GB. */
static int64_t default_limit(void) {
  int64_t phys = spc_phys_bytes();
  int64_t q = phys > 0 ? phys / 2 / 16 : 0;
  return q > 0 ? q : INT32_MAX;
}

static spc_status set_params(conv *C, const spc_remap_param *params, int np,
                             spc_error *e) {
  const spc_format_spec *f = C->fmt;
  C->nparams = f->nparams;
  for (int k = 0; k < f->nparams; k++)
    C->ps[k] = (spc_remap_param){f->pnames[k], f->pdefaults[k]};
  for (int i = 0; i < np; i++) {
    int k = 0;
    while (k < f->nparams && strcasecmp(params[i].name, f->pnames[k])) k++;
    if (k == f->nparams)
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "format %s has no parameter '%s'", f->name, params[i].name);
    if (params[i].value < 1)
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "parameter %s of format %s must be positive, found %lld",
                     f->pnames[k], f->name, (long long)params[i].value);
    C->ps[k].value = params[i].value;
  }
  return SPC_OK;
}

/* Resolver for `requires`: source indices (bound to variables) and params. */
typedef struct req_ctx {
  const conv *C;
  ir_var x[SPC_MAX_ORDER];
} req_ctx;

static bool req_resolve(void *ctx, const char *name, lang_sym *s) {
  const req_ctx *q = ctx;
  const spc_remap *r = q->C->r;
  for (int k = 0; k < r->order_in; k++)
    if (!strcmp(name, r->in_names[k])) {
      s->kind = LANG_SYM_INDEX;
      s->type = (lang_type){.ty = IR_I64, .sym = LT_COORD};
      s->readonly = true;
      s->var = q->x[k];
      return true;
    }
  for (int k = 0; k < q->C->nparams; k++)
    if (!strcmp(name, q->C->ps[k].name)) {
      s->kind = LANG_SYM_CONST;
      s->type = (lang_type){.ty = IR_I64, .lit = true};
      s->value = q->C->ps[k].value;
      return true;
    }
  return false;
}

/* "cannot hold entry (%lld, %lld): requires TEXT" with % doubled. */
static void req_msg(const conv *C, const char *text, char *b, size_t n) {
  size_t k = (size_t)snprintf(b, n, "cannot hold entry (");
  for (int d = 0; d < C->order && k < n; d++)
    k += (size_t)snprintf(b + k, n - k, "%s%%lld", d ? ", " : "");
  if (k < n) k += (size_t)snprintf(b + k, n - k, "): requires ");
  for (const char *p = text; *p && k + 3 < n; p++) {
    if (*p == '\n') { b[k++] = ' '; continue; }
    if (*p == '%') b[k++] = '%';
    b[k++] = *p;
  }
  if (k >= n) k = n - 1;
  b[k] = 0;
}

static spc_status lower_source_x(const conv *C, ir_func *f, ir_stmt *lb, ir_expr *const *in,
                                 bool reqs, req_ctx *rq, ir_expr **src, spc_error *e);
static void sparams_crd(conv *C, ir_func *f, ir_var *crd, int gd);

/* The length of counter c's count array: the product of the extents of
 * the indices it counts by (an overflow or a product past the limit is
 * spc_counter_begin's to refuse, when the routine is built). */
static int64_t counter_len(const conv *C, int c) {
  const spc_remap_counter *rc = &C->r->counters[c];
  int64_t len = 1;
  for (int t = 0; t < rc->n; t++) {
    int64_t d = C->comb->dims[rc->idx[t]];
    if (__builtin_mul_overflow(len, d > 0 ? d : 1, &len)) return INT64_MAX;
  }
  return len;
}

/* One component's remapping (remap_fn): each counter stepped and its
 * maximum kept; with coords, its level coordinates stored at t. */
typedef struct rmctx {
  conv *C;
  bool coords;
  spc_counter_ir *ctr;
  const ir_var *cmax, *lout;
  ir_var t;
} rmctx;

static spc_status remap_one(void *ctx, ir_func *f, ir_stmt *lb, ir_expr *const *x, ir_expr *val,
                            spc_error *e) {
  (void)val;
  const rmctx *M = ctx;
  const spc_remap *r = M->C->r;
  req_ctx rq = {.C = M->C};
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  ir_var cv[SPC_MAX_ORDER];
  spc_status s = lower_source_x(M->C, f, lb, x, M->coords, &rq, src, e);
  for (int c = 0; c < r->ncounters && !s; c++) {
    spc_counter_step(&M->ctr[c], f, lb, src);
    cv[c] = M->ctr[c].value;
    ir_add(f, lb, ir_assign(f, M->cmax[c], ir_bin(f, IR_MAX, ir_ref(f, M->cmax[c]),
                                                  ir_ref(f, cv[c]))));
  }
  if (!s && M->coords) s = spc_remap_lower(r, f, lb, src, cv, outs, e);
  for (int l = 0; l < M->C->L && !s && M->coords; l++)
    ir_add(f, lb, ir_store(f, M->lout[l], ir_ref(f, M->t), ir_cast(f, IR_I64, outs[l])));
  return s;
}

/* remap_func(crd0.., n, lc0.., cmax0.., cnt_len0..): the level coordinates
 * of every component (the sort is in C: sort_components).  With C->carry
 * (a stream remapped chunk by chunk) remap_func(crd0.., n, lc0..,
 * cmax0.. INOUT, cnt0.. INOUT): each counter's count array and maximum
 * are the caller's, zeroed once and passed to every chunk's call, so the
 * chunks count as one call over the whole stream would.  Without coords
 * and with SI, a source of that info read through its own levels
 * (spc_conv_fcmax: its arrays, values and extents in place of crd.. and
 * n). */
static spc_status remap_fn(conv *C, const conv_info *SI, bool coords, ir_func **out, spc_error *e) {
  if (SI && coords) return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "no fused remapping routine");
  ir_func *f = ir_func_new(coords ? "spc_conv_remap" : SI ? "spc_conv_fcmax" : "spc_conv_cmax");
  if (!f) return SPC_NOMEM(e);
  const spc_remap *r = C->r;
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], lout[SPC_MAX_ORDER], cmax[SPC_MAX_ORDER], n = -1;
  spc_counter_ir ctr[SPC_MAX_ORDER];
  char name[64];
  asm_src *S = NULL;
  spc_status s = SPC_OK;
  if (SI) {
    s = asm_src_new(SI, C->order, C->comb->vt, false, f, &S, e);
  } else {
    sparams_crd(C, f, crd, -1);
    n = ir_param(f, "n", IR_I64, false, IR_IN);
  }
  for (int l = 0; l < C->L && coords; l++) {
    snprintf(name, sizeof name, "lc%d", l);
    lout[l] = ir_param(f, name, IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, lout[l], ir_ref(f, n), false));
  }
  for (int c = 0; c < r->ncounters; c++) {
    snprintf(name, sizeof name, "cmax%d", c);
    cmax[c] = ir_param(f, name, IR_I64, false, C->carry ? IR_INOUT : IR_OUT);
    if (!coords) ir_add(f, body, ir_assign(f, cmax[c], ir_int(f, 0)));
  }
  ir_var clen[SPC_MAX_ORDER];
  for (int c = 0; c < r->ncounters; c++) {
    snprintf(name, sizeof name, C->carry ? "cnt%d" : "cnt_len%d", c);
    clen[c] = ir_param(f, name, IR_I64, C->carry, C->carry ? IR_INOUT : IR_IN);
  }
  for (int c = 0; c < r->ncounters && !s; c++)
    s = C->carry ? spc_counter_begin_held(r, c, C->comb->dims, C->limit, f, &ctr[c], clen[c], e)
                 : spc_counter_begin(r, c, SPC_COUNTER_DENSE, C->comb->dims, C->limit, f,
                                     body, &ctr[c], ir_ref(f, clen[c]), e);
  rmctx M = {.C = C, .coords = coords, .ctr = ctr, .cmax = cmax, .lout = lout, .t = -1};
  if (!s && S) {
    s = asm_src_nest(S, body, -1, remap_one, &M, e);
  } else if (!s) {
    M.t = lang_fresh_local(f, "t", IR_I64, false);
    ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, M.t, ir_int(f, 0), ir_ref(f, n), NULL)));
    ir_expr *x[SPC_MAX_ORDER];
    for (int k = 0; k < C->order; k++) x[k] = ir_load(f, crd[k], ir_ref(f, M.t));
    s = remap_one(&M, f, lb, x, NULL, e);
  }
  for (int c = 0; c < r->ncounters && !s; c++) spc_counter_end(&ctr[c], f, body);
  asm_src_free(&S);
  if (!s) s = ir_verify(f, e);
  if (s) ir_func_free(&f);
  *out = f;
  return s;
}

static spc_status build_remap(conv *C, ir_func **out, spc_error *e) {
  return remap_fn(C, NULL, true, out, e);
}

/* spc_conv_cmax(crd0.., n, cmax0.. OUT, cnt_len0..): each counter's
 * largest value over the components, as the remapping counts them (the
 * direct plan's extents of the levels a counter gives), without the
 * remapped coordinates the sort path keeps, nor its `requires` (the
 * direct routine checks them). */
static spc_status build_cmax(conv *C, const conv_info *SI, ir_func **out, spc_error *e) {
  return remap_fn(C, SI, false, out, e);
}

/* Component t's source indices, loaded into fresh locals (src[k] refers
 * to index k), and with reqs its `requires` conditions, appended to lb: a
 * failing entry stops the run with "cannot hold entry ...". */
static spc_status lower_source_x(const conv *C, ir_func *f, ir_stmt *lb, ir_expr *const *in,
                                 bool reqs, req_ctx *rq, ir_expr **src, spc_error *e);
static spc_status lower_source(const conv *C, ir_func *f, ir_stmt *lb, const ir_var *crd,
                               ir_var t, bool reqs, req_ctx *rq, ir_expr **src,
                               spc_error *e) {
  ir_expr *in[SPC_MAX_ORDER];
  for (int k = 0; k < C->order; k++) in[k] = ir_load(f, crd[k], ir_ref(f, t));
  return lower_source_x(C, f, lb, in, reqs, rq, src, e);
}

/* The same from expressions of the source indices (a fused routine's
 * canonical coordinates). */
static spc_status lower_source_x(const conv *C, ir_func *f, ir_stmt *lb, ir_expr *const *in,
                                 bool reqs, req_ctx *rq, ir_expr **src, spc_error *e) {
  const spc_remap *r = C->r;
  spc_status s = SPC_OK;
  for (int k = 0; k < C->order; k++) {
    rq->x[k] = lang_fresh_local(f, r->in_names[k], IR_I64, false);
    ir_add(f, lb, ir_assign(f, rq->x[k], ir_cast(f, IR_I64, in[k])));
    src[k] = ir_ref(f, rq->x[k]);
  }
  lang_env renv = {.resolve = req_resolve, .ctx = rq};
  for (int i = 0; reqs && i < C->fmt->nrequires && !s; i++) {
    lang_ast *ast = NULL;
    char msg[400];
    s = lang_parse_expr(&C->fmt->requires[i].at, &ast, e);
    if (!s) s = lang_check_expr(ast, ast->root, &renv, e);
    ir_expr *cond = s ? NULL : lang_lower_expr(f, ast->root, &renv, e);
    if (!s && !cond) s = e && e->code ? e->code : SPC_ERR_INTERNAL;
    if (!s) {
      ir_expr *args[SPC_MAX_ORDER];
      for (int k = 0; k < C->order; k++)
        args[k] = ir_bin(f, IR_ADD, ir_ref(f, rq->x[k]), ir_int(f, 1));
      req_msg(C, C->fmt->requires[i].text, msg, sizeof msg);
      ir_stmt *iff = ir_add(f, lb, ir_if(f, ir_un(f, IR_NOT, cond), NULL, NULL));
      ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, args, C->order));
    }
    lang_ast_free(&ast);
  }
  return s;
}

/* ---- ordering, duplicates, zeros ------------------------------------------ */

/* --dup=error: the repeated level tuple named (counted from 0, in the
 * target's level order, as the workspace names it) */
static spc_status dup_error(const conv *C, const int64_t *x, spc_error *e) {
  char b[256];
  int k = 0;
  for (int l = 0; l < C->L && k < (int)sizeof b - 24; l++)
    k += snprintf(b + k, sizeof b - (size_t)k, "%s%lld", l ? ", " : "", (long long)x[l]);
  return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                 "two entries map to the same coordinates of format %s, level coordinates "
                 "(%s) counted from 0, and --dup=error", C->fmt->name, b);
}

static bool same_tuple(const conv *C, int64_t a, int64_t b) {
  for (int l = 0; l < C->L; l++)
    if (C->lc[l][a] != C->lc[l][b]) return false;
  return true;
}

static spc_status finish_components(conv *C, spc_error *e);

/* The eaten source's values, where it owns them: taken (*v, the caller
 * owns them; NULL: not its to give), or freed once read (v NULL). */
static void eat_vals(conv *C, void **v) {
  spc_tensor *t = C->eat;
  if (v) *v = NULL;
  if (!t || !t->val_owned || !t->val) return;
  if (v) *v = t->val;
  else spc_free(t->val);
  t->val = NULL;
  t->val_owned = false;
}

/* The eaten source's coordinates, once remapped. */
static void eat_crd(conv *C) {
  for (int k = 0; C->eat && k < C->eat->nlevels; k++) {
    spc_array *a = spc_level_array(&C->eat->lv[k], "crd");
    if (a && a->owned) {
      spc_free(a->data);
      a->data = NULL;
      a->len = 0;
    }
  }
}

static spc_status order_components(conv *C, int64_t **lc, const int64_t *perm,
                                   spc_dup dup, spc_error *e) {
  size_t w = spc_vtype_size(C->comb->vt);
  int64_t n = C->n;
  for (int l = 0; l < C->L && perm; l++) { /* perm NULL: lc already in order, owned */
    if (!(C->lc[l] = spc_malloc_n(n ? n : 1, sizeof(int64_t)))) return SPC_NOMEM(e);
    int64_t *dst = C->lc[l];
    const int64_t *sl = lc[l];
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t t = 0; t < n; t++) dst[t] = sl[perm[t]];
  }
  if (w && !perm) eat_vals(C, &C->vals); /* in order already: the source's own */
  if (w && !C->vals) {
    if (!(C->vals = spc_malloc_n(n ? n : 1, w))) return SPC_NOMEM(e);
    const char *sv = C->comb->val;
    char *dv = C->vals;
    if (!perm) {
      memcpy(dv, sv, (size_t)n * w);
    } else if (w == 8) {
#pragma omp parallel for schedule(static) if (n > 65536)
      for (int64_t t = 0; t < n; t++) ((uint64_t *)(void *)dv)[t] = ((const uint64_t *)(const void *)sv)[perm[t]];
    } else if (w == 4) {
#pragma omp parallel for schedule(static) if (n > 65536)
      for (int64_t t = 0; t < n; t++) ((uint32_t *)(void *)dv)[t] = ((const uint32_t *)(const void *)sv)[perm[t]];
    } else {
      for (int64_t t = 0; t < n; t++) memcpy(dv + t * (int64_t)w, sv + perm[t] * (int64_t)w, w);
    }
    eat_vals(C, NULL);
  }
  /* equal level tuples: duplicates of the source, or a remapping that is
   * not one-to-one; most tensors have none (one pass to see) */
  int64_t m = 0, first = n;
  for (int64_t t = 1; t < n && first == n; t++)
    if (same_tuple(C, t - 1, t)) first = t;
  m = first;
  for (int64_t t = first; t < n; t++) {
    if (m > 0 && same_tuple(C, m - 1, t)) {
      if (dup == SPC_DUP_ERROR) {
        int64_t x[SPC_MAX_ORDER];
        for (int l = 0; l < C->L; l++) x[l] = C->lc[l][t];
        return dup_error(C, x, e);
      }
      if (w) spc_val_combine(C->comb->vt, dup, (char *)C->vals + (m - 1) * (int64_t)w,
                             (char *)C->vals + t * (int64_t)w);
      continue;
    }
    if (m != t) {
      for (int l = 0; l < C->L; l++) C->lc[l][m] = C->lc[l][t];
      if (w) memmove((char *)C->vals + m * (int64_t)w, (char *)C->vals + t * (int64_t)w, w);
    }
    m++;
  }
  C->n = m;
  return finish_components(C, e);
}

/* The components in level order and combined: the fill check, then the
 * "new coordinate prefix" flags of every level. */
static spc_status finish_components(conv *C, spc_error *e) {
  size_t w = spc_vtype_size(C->comb->vt);
  int64_t m = C->n;
  C->vt = C->comb->vt;
  if (C->fmt->fill_zero) {
    int64_t zeros = 0;
    for (int64_t t = 0; w && t < m; t++)
      zeros += spc_val_is_zero(C->vt, (char *)C->vals + t * (int64_t)w);
    if (zeros)
      return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                     "cannot hold the %lld explicit zeros of this tensor: "
                     "format %s pads with zeros",
                     (long long)zeros, C->fmt->name);
    if (C->vt == SPC_PATTERN) { /* padding needs values: ones */
      C->vt = SPC_F64;
      double *v = spc_malloc_n(m ? m : 1, sizeof *v);
      if (!v) return SPC_NOMEM(e);
      for (int64_t t = 0; t < m; t++) v[t] = 1.0;
      C->vals = v;
      C->vals_lent = false;
    }
  }
  /* the "new coordinate prefix" flags: made by the level routines' caller
   * (ensure_isnew) where the packed sort did not make them -- the chain
   * routines read the coordinates alone */
  return SPC_OK;
}

/* Each level's "new coordinate prefix" flags (C->isnew) where nothing
 * made them yet: the level routines (run_levels) read them. */
static spc_status ensure_isnew(conv *C, spc_error *e) {
  int64_t m = C->n;
  for (int l = 0; l < C->L; l++) {
    if (C->isnew[l]) continue;
    if (!C->lc[l]) return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "level %d: no coordinates", l);
    if (!(C->isnew[l] = spc_malloc_n(m ? m : 1, sizeof(bool)))) return SPC_NOMEM(e);
    bool uniq = C->lv[l]->unique;
    bool *nw = C->isnew[l];
    const bool *up = l > 0 ? C->isnew[l - 1] : NULL;
    const int64_t *x = C->lc[l];
#pragma omp parallel for schedule(static) if (m > 65536)
    for (int64_t t = 0; t < m; t++)
      nw[t] = t == 0 || !uniq || (up && up[t]) || x[t] != x[t - 1];
  }
  return SPC_OK;
}

/* ---- the packed sort ----------------------------------------------------------
 * Level l's coordinate offset from lo[l] fits bits(N[l] - 1) bits; when the
 * levels' offsets fit 64 bits together, one key per component (the top
 * level in the highest bits) orders the components exactly as the stable
 * sort by (lc0, lc1, ..) does.  The component's index goes below the key
 * when it fits too (ties then break by index: stable, and nothing to carry
 * along), else in an index array beside the keys.  An LSD radix sort
 * orders the keys (nothing when the remapping kept them in order: seen
 * while packing); then one pass writes the level coordinates back from the
 * keys into the remapping's own arrays (no gather), combines equal tuples,
 * gathers the values and sets the "new prefix" flags from the highest bit
 * that differs from the previous key. */

static int bits_of(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* When the keys holding each value of the top digit (bits [sh, sh + D))
 * come in order already -- a source ordered by the lower levels whose top
 * level is a function of them: DIA's diagonal from CSR or CSC, ELL's slot,
 * a mode moved to the front -- one stable pass by that digit sorts them
 * all.  The check rides on the pass that counts the digits.  Returns 1
 * when it sorted (the result in k2/p2), 0 when the keys are not like that
 * (nothing moved), -1 when memory ran out. */
static int radix_top(const uint64_t *k, const void *p, uint64_t *k2, void *p2, int pw,
                     int64_t n, int sh, int D) {
  int64_t nb = (int64_t)1 << D;
  uint64_t mask = (uint64_t)nb - 1;
  int nt = PK_NTHREADS(n);
  int64_t *cnt = spc_malloc_n((int64_t)nt * nb, sizeof *cnt);
  uint64_t *first = spc_malloc_n((int64_t)nt * nb, sizeof *first);
  uint64_t *last = spc_malloc_n((int64_t)nt * nb, sizeof *last);
  int bad = 0;
  if (!cnt || !first || !last) bad = -1;
  if (!bad) {
#pragma omp parallel num_threads(nt) reduction(| : bad)
    {
      int th = PK_THREAD();
      int64_t b0 = n * th / nt, b1 = n * (th + 1) / nt, *c = cnt + th * nb;
      uint64_t *fi = first + th * nb, *la = last + th * nb;
      memset(c, 0, (size_t)nb * sizeof *c);
      for (int64_t i = b0; i < b1; i++) {
        uint64_t x = k[i], b = (x >> sh) & mask;
        if (!c[b]) fi[b] = x;
        else bad |= x < la[b];
        la[b] = x;
        c[b]++;
      }
    }
  }
  for (int64_t b = 0; !bad && nt > 1 && b < nb; b++) { /* across the blocks */
    bool have = false;
    uint64_t prev = 0;
    for (int th = 0; th < nt; th++) {
      if (!cnt[th * nb + b]) continue;
      if (have && first[th * nb + b] < prev) bad = 1;
      prev = last[th * nb + b];
      have = true;
    }
  }
  if (!bad) {
    spc_radix_offsets(cnt, nb, nt, n);
    spc_radix_scatter(k, p, k2, p2, pw, n, sh, mask, cnt, nb, nt);
  }
  spc_free(cnt);
  spc_free(first);
  spc_free(last);
  return bad < 0 ? -1 : bad ? 0 : 1;
}

/* Natural merge sort of k[a, b) (with the payload p) by key, stable:
 * adjacent runs merged pairwise through k2/p2 (the same offsets), rs
 * holding b - a + 1 run starts. */
#define SEG_MERGE(NAME, T)                                                               \
  static void NAME(uint64_t *k, T *p, uint64_t *k2, T *p2, int64_t a, int64_t b,        \
                   int64_t *rs) {                                                        \
    int64_t R = 0;                                                                       \
    rs[R++] = a;                                                                         \
    for (int64_t t = a + 1; t < b; t++)                                                  \
      if (k[t] < k[t - 1]) rs[R++] = t;                                                  \
    rs[R] = b;                                                                           \
    uint64_t *sk = k, *dk = k2;                                                          \
    T *sp = p, *dp = p2;                                                                 \
    while (R > 1) {                                                                      \
      int64_t R2 = 0;                                                                    \
      for (int64_t r = 0; r < R; r += 2) {                                               \
        int64_t i = rs[r], mid = rs[r + 1], j = mid, hi = r + 2 <= R ? rs[r + 2] : mid;  \
        int64_t o = i;                                                                   \
        rs[R2++] = i;                                                                    \
        if (r + 1 >= R) hi = mid;                                                        \
        while (i < mid && j < hi) {                                                      \
          bool right = sk[j] < sk[i];                                                    \
          int64_t x = right ? j++ : i++;                                                 \
          dk[o] = sk[x];                                                                 \
          if (p) dp[o] = sp[x];                                                          \
          o++;                                                                           \
        }                                                                                \
        for (; i < mid; i++, o++) {                                                      \
          dk[o] = sk[i];                                                                 \
          if (p) dp[o] = sp[i];                                                          \
        }                                                                                \
        for (; j < hi; j++, o++) {                                                       \
          dk[o] = sk[j];                                                                 \
          if (p) dp[o] = sp[j];                                                          \
        }                                                                                \
      }                                                                                  \
      rs[R2] = b;                                                                        \
      R = R2;                                                                            \
      uint64_t *tk = sk;                                                                 \
      sk = dk;                                                                           \
      dk = tk;                                                                           \
      T *tp = sp;                                                                        \
      sp = dp;                                                                           \
      dp = tp;                                                                           \
    }                                                                                    \
    if (sk != k) {                                                                       \
      memcpy(k + a, sk + a, (size_t)(b - a) * sizeof *k);                                \
      if (p) memcpy(p + a, sp + a, (size_t)(b - a) * sizeof *p);                         \
    }                                                                                    \
  }
SEG_MERGE(seg_merge8, uint64_t)
SEG_MERGE(seg_merge4, uint32_t)
#undef SEG_MERGE

/* When the top level's field (bits [sh, 64)) never decreases -- a source
 * ordered by the top level already: BCSR's block row from a row-ordered
 * COO -- each run of equal top fields is sorted by itself, in cache, by
 * merging the runs it holds; chosen when that takes fewer merge rounds than
 * twice the radix passes, with segments of at most 2^16 components.
 * Returns 1 when it sorted (the result in k/p), 0 when not chosen, -1 when
 * memory ran out. */
static int segment_sort(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t n,
                        int sh, int B) {
  int64_t segs = 1, runs = 1, len = 1, maxlen = 1;
  for (int64_t t = 1; t < n; t++) {
    uint64_t a = k[t - 1] >> sh, b = k[t] >> sh;
    if (b < a) return 0;
    if (b != a) {
      segs++;
      runs++;
      len = 0;
    } else if (k[t] < k[t - 1]) {
      runs++;
    }
    if (++len > maxlen) maxlen = len;
  }
  int npass = (B + 11) / 12, rounds = 0;
  while (((int64_t)segs << rounds) < runs) rounds++; /* merge rounds, on average */
  if (maxlen > 65536 || rounds >= 2 * npass) return 0;
  int64_t *start = spc_malloc_n(segs + 1, sizeof *start);
  if (!start) return -1;
  int64_t q = 0;
  start[q++] = 0;
  for (int64_t t = 1; t < n; t++)
    if (k[t] >> sh != k[t - 1] >> sh) start[q++] = t;
  start[q] = n;
  int nt = PK_NTHREADS(n), bad = 0;
#pragma omp parallel num_threads(nt) reduction(| : bad)
  {
    int64_t *rs = spc_malloc_n(maxlen + 1, sizeof *rs);
    if (!rs) bad = 1;
#pragma omp for schedule(dynamic, 256)
    for (int64_t g = 0; g < segs; g++) {
      int64_t a = start[g], b = start[g + 1];
      if (!rs || b - a < 2) continue;
      bool in = true;
      for (int64_t t = a + 1; t < b && in; t++) in = k[t - 1] <= k[t];
      if (in) continue;
      if (pw == 8) seg_merge8(k, p, k2, p2, a, b, rs);
      else seg_merge4(k, p, k2, p2, a, b, rs);
    }
    spc_free(rs);
  }
  spc_free(start);
  return bad ? -1 : 1;
}

/* Level l's coordinates o and new-prefix flags f from the sorted packed
 * keys k[0..n) (m distinct: a key equal to the one before it is a repeat,
 * skipped): the level's field (k >> sh) & mask, plus lo; a prefix down
 * to level l is new where the key differs from the one before it in the
 * bits of levels 0..l, [sh, 64) (sh == 64: level l and those above it
 * have no bits), or always where the prefix is never unique.  A loop of
 * its own a level (one loop for every level kept their arrays in memory,
 * reloaded after each flag's store: 13% of a CSF mode change). */
static void unpack_level(const uint64_t *restrict k, int64_t n, int64_t m, int sh, uint64_t mask,
                         uint64_t lo, bool always, int64_t *restrict o, bool *restrict f) {
  if (n < 1) return;
  const int sl = sh < 64 ? sh : 63;
  const uint64_t hi = sh < 64 ? ~0ULL << sl : 0;
  o[0] = (int64_t)(((k[0] >> sl) & mask) + lo);
  f[0] = true; /* the first key's prefixes are all new */
  if (m == n) { /* no repeats: on the threads, each its block of keys */
    int nt = PK_NTHREADS(n);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t t = 1; t < n; t++) {
      uint64_t kk = k[t];
      o[t] = (int64_t)(((kk >> sl) & mask) + lo);
      f[t] = (((kk ^ k[t - 1]) & hi) != 0) | always;
    }
    return;
  }
  int64_t q = 1;
  for (int64_t t = 1; t < n; t++) {
    uint64_t kk = k[t], pv = k[t - 1];
    if (kk == pv) continue;
    o[q] = (int64_t)(((kk >> sl) & mask) + lo);
    f[q++] = (((kk ^ pv) & hi) != 0) | always;
  }
}

/* Sorts, combines and flags the components by packed keys; *done false
 * (nothing changed) where that does not apply: more than 64 bits of
 * offsets (from each level's smallest coordinate present), or 2^32
 * components or more with values of 16 bytes.  On success C->lc[l] is
 * lc[l] (rewritten in level order).  Values of 4 or 8 bytes travel with
 * their keys through the sort (no gather afterwards); others by an index. */
static spc_status pack_components(conv *C, int64_t **lc, bool *done, spc_error *e) {
  int64_t n = C->n;
  int L = C->L, bl[SPC_MAX_ORDER], sh[SPC_MAX_ORDER], B = 0;
  uint64_t mask[SPC_MAX_ORDER], lo[SPC_MAX_ORDER];
  size_t w = spc_vtype_size(C->comb->vt);
  bool byidx = w && w != 4 && w != 8;
  int pw = byidx ? 4 : (int)w;
  *done = false;
  if (n < 1 || L < 1 || (byidx && (uint64_t)n > UINT32_MAX)) return SPC_OK;
  for (int l = L - 1; l >= 0; l--) { /* the range present, often far less than N */
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    const int64_t *x = lc[l];
#pragma omp parallel for schedule(static) reduction(min : mn) reduction(max : mx) if (n > 65536)
    for (int64_t t = 0; t < n; t++) {
      mn = x[t] < mn ? x[t] : mn;
      mx = x[t] > mx ? x[t] : mx;
    }
    bl[l] = bits_of((uint64_t)mx - (uint64_t)mn);
    sh[l] = B;
    B += bl[l];
    mask[l] = bl[l] ? ~0ULL >> (64 - bl[l]) : 0;
    lo[l] = (uint64_t)mn;
  }
  if (B > 64) return SPC_OK;
  uint64_t *key = spc_malloc_n(n, sizeof *key), *k2 = NULL;
  void *p = NULL, *p2 = NULL; /* the payload: values, or indices (byidx) */
  if (!key) return SPC_NOMEM(e);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t t = 0; t < n; t++) {
    uint64_t u = 0;
    for (int l = 0; l < L; l++)
      if (bl[l]) u |= ((uint64_t)lc[l][t] - lo[l]) << sh[l];
    key[t] = u;
  }
  int64_t i0 = 1;
  while (i0 < n && key[i0 - 1] <= key[i0]) i0++;
  bool sorted = i0 >= n;
  spc_status s = SPC_OK;
  const char *sv = C->comb->val;
  /* an eaten source's values are the payload (out of order) or the result
   * (in order) themselves: not copied */
  void *own = NULL;
  if (pw && !byidx) eat_vals(C, &own);
  if (!sorted) {
    /* the keys hold every level coordinate: the level arrays are freed
     * for the sort's scratch and made again from the keys after it (the
     * caller's lc[l] follows: C->lc[l] == lc[l] on return) */
    for (int l = 0; l < L; l++) {
      spc_free(lc[l]);
      lc[l] = NULL;
    }
    k2 = spc_malloc_n(n, sizeof *k2);
    if (pw) {
      p = own ? own : spc_malloc_n(n, (size_t)pw);
      own = NULL;
      p2 = spc_malloc_n(n, (size_t)pw);
    }
    if (!k2 || (pw && (!p || !p2))) s = SPC_NOMEM(e);
    if (!s && byidx)
      for (int64_t t = 0; t < n; t++) ((uint32_t *)p)[t] = (uint32_t)t;
    else if (!s && pw && p != sv)
      memcpy(p, sv, (size_t)n * w);
    /* the top level's field as one digit first, when narrow enough */
    int top = 0, where = s ? 0 : -2;
    while (top < L - 1 && !bl[top]) top++;
    if (where == -2 && bl[top] && bl[top] <= 14) {
      int r = radix_top(key, p, k2, p2, pw, n, B - bl[top], bl[top]);
      where = r == 1 ? 1 : r < 0 ? -1 : -2;
    }
    if (where == -2 && bl[top]) {
      int r = segment_sort(key, p, k2, p2, pw, n, B - bl[top], B);
      where = r == 1 ? 0 : r < 0 ? -1 : -2;
    }
    if (where == -2) where = spc_radix_keys(key, p, k2, p2, pw, n, 0, B);
    if (where < 0) s = SPC_NOMEM(e);
    if (where == 1) {
      uint64_t *tk = key;
      key = k2;
      k2 = tk;
      void *tp = p;
      p = p2;
      p2 = tp;
    }
    spc_free(k2);
    spc_free(p2);
    for (int l = 0; l < L && !s; l++)
      if (!(lc[l] = spc_malloc_n(n, sizeof(int64_t)))) s = SPC_NOMEM(e);
  }
  for (int l = 0; l < L && !s; l++)
    if (!(C->isnew[l] = spc_malloc_n(n, sizeof(bool)))) s = SPC_NOMEM(e);
  /* the values in level order: the sorted payload itself, else gathered */
  bool inplace = (!sorted && pw && !byidx) || own;
  if (!s && own) {
    C->vals = own;
    own = NULL;
  } else if (!s && inplace) {
    C->vals = p;
    p = NULL;
  } else if (!s && w && !(C->vals = spc_malloc_n(n, w))) {
    s = SPC_NOMEM(e);
  }
  /* levels whose prefix is never unique */
  bool nu[SPC_MAX_ORDER];
  for (int l = 0; l < L; l++) nu[l] = !C->lv[l]->unique || (l > 0 && nu[l - 1]);
  char *dv = C->vals;
  const char *from = inplace ? dv : sv; /* value t's source: from[t] */
  const uint32_t *ix = byidx && !sorted ? p : NULL;
  /* the values, a repeated key's combined into its first (equal keys are
   * adjacent: a key equal to the one before it is a repeat) */
  int64_t m = 0;
  for (int64_t t = 0; t < n && !s; t++) {
    int64_t src = ix ? (int64_t)ix[t] : t;
    if (t > 0 && key[t] == key[t - 1]) { /* a duplicate, or a remapping not one-to-one */
      if (C->dup == SPC_DUP_ERROR) {
        int64_t x[SPC_MAX_ORDER];
        for (int l = 0; l < L; l++) x[l] = (int64_t)(((key[t] >> sh[l]) & mask[l]) + lo[l]);
        s = dup_error(C, x, e);
      } else if (w)
        spc_val_combine(C->comb->vt, C->dup, dv + (m - 1) * (int64_t)w, from + src * (int64_t)w);
      continue;
    }
    if (w == 8) {
      if (!inplace || m != t)
        ((uint64_t *)(void *)dv)[m] = ((const uint64_t *)(const void *)from)[src];
    } else if (w && (!inplace || m != t)) {
      memcpy(dv + m * (int64_t)w, from + src * (int64_t)w, w);
    }
    m++;
  }
  /* then each level's coordinates and flags, a level at a time */
  for (int l = 0; l < L && !s; l++)
    unpack_level(key, n, m, sh[l], mask[l], lo[l], nu[l], lc[l], C->isnew[l]);
  spc_free(key);
  spc_free(p);
  spc_free(own);
  if (s) return s;
  eat_vals(C, NULL); /* read (byidx, sorted): no longer needed */
  for (int l = 0; l < L; l++) C->lc[l] = lc[l];
  C->n = m;
  *done = true;
  return finish_components(C, e);
}

/* The remapping kept the components in the target's order, no two equal
 * (COO, DCSR or CSF from a sorted file, a CSR read back): the level
 * coordinates are in place already, and one pass over them checks that
 * and sets the "new prefix" flags, where the packed sort made a key per
 * component, looked for its order and wrote every coordinate back (R-MAT
 * 2^17 sorted COO to DCSR: 21 -> 11 ns a component).  *done false
 * (nothing kept) at the first component out of order or repeated, and
 * under --plan=sort. */
/* Component t against t - 1: its "new prefix" flags set (levels from the
 * first that differs, and every level at or below a non-unique one);
 * false where it is not strictly after t - 1. */
static inline bool inorder_step(int64_t *const *lc, int L, const bool *nu, bool *const *nw, int64_t t) {
  int dl = 0;
  while (dl < L && lc[dl][t] == lc[dl][t - 1]) dl++;
  for (int l = 0; l < L; l++) nw[l][t] = l >= dl || nu[l];
  return dl < L && lc[dl][t] > lc[dl][t - 1];
}

static spc_status inorder_components(conv *C, int64_t **lc, bool *done, spc_error *e) {
  int64_t n = C->n;
  int L = C->L;
  *done = false;
  if (n < 1 || L < 1 || (C->o && C->o->plan == SPC_PLAN_SORT)) return SPC_OK;
  bool nu[SPC_MAX_ORDER], *nw[SPC_MAX_ORDER];
  for (int l = 0; l < L; l++) {
    nu[l] = !C->lv[l]->unique || (l > 0 && nu[l - 1]);
    nw[l] = NULL;
  }
  spc_status s = SPC_OK;
  for (int l = 0; l < L && !s; l++)
    if (!(nw[l] = spc_malloc_n(n, sizeof(bool)))) s = SPC_NOMEM(e);
  bool ok = !s;
  for (int l = 0; l < L && ok; l++) nw[l][0] = true;
  /* the first 2^16 on one thread (a shuffled source stops at once), the
   * rest on the threads, each stopping at its first miss */
  int64_t head = n < 65536 ? n : 65536;
  for (int64_t t = 1; t < head && ok; t++) ok = inorder_step(lc, L, nu, nw, t);
  if (ok && head < n) {
    int bad = 0;
#pragma omp parallel num_threads(PK_NTHREADS(n - head)) reduction(| : bad)
    {
#ifdef _OPENMP
      int nt = omp_get_num_threads(), th = PK_THREAD();
#else
      int nt = 1, th = 0;
#endif
      int64_t t0 = head + (n - head) * th / nt, t1 = head + (n - head) * (th + 1) / nt;
      for (int64_t t = t0; t < t1 && !bad; t++) bad = !inorder_step(lc, L, nu, nw, t);
    }
    ok = !bad;
  }
  if (!ok) {
    for (int l = 0; l < L; l++) spc_free(nw[l]);
    return s;
  }
  for (int l = 0; l < L; l++) C->isnew[l] = nw[l], C->lc[l] = lc[l];
  /* the values in order too: the eaten source's own, else the source's
   * array lent (only the last level's routine reads it, copying) */
  size_t w = spc_vtype_size(C->comb->vt);
  if (w) eat_vals(C, &C->vals);
  if (w && !C->vals) {
    C->vals = (void *)(uintptr_t)C->comb->val;
    C->vals_lent = true;
  }
  *done = C->inorder = true;
  return finish_components(C, e);
}

/* Where the packed keys do not apply: the runtime's stable sort of the
 * positions by the level coordinates, then the gather. */
static spc_status sort_components(conv *C, int64_t **lc, spc_error *e) {
  int64_t n = C->n;
  int64_t *perm = spc_malloc_n(n ? n : 1, sizeof *perm);
  int64_t *scr = spc_malloc_n(n ? n : 1, sizeof *scr);
  if (!perm || !scr) {
    spc_free(perm);
    spc_free(scr);
    return SPC_NOMEM(e);
  }
  for (int64_t t = 0; t < n; t++) perm[t] = t;
  ir_sort_perm_i64(perm, n, lc, C->L, scr);
  spc_free(scr);
  bool inorder = true;
  for (int64_t t = 0; inorder && t < n; t++) inorder = perm[t] == t;
  if (inorder) /* the source was already in the target's order: keep lc */
    for (int l = 0; l < C->L; l++) C->lc[l] = lc[l];
  spc_status s = order_components(C, lc, inorder ? NULL : perm, C->dup, e);
  spc_free(perm);
  return s;
}

/* ---- index types ---------------------------------------------------------- */

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static void choose_types(conv *C) {
  bool c32 = true, i32 = true;
  int64_t np = 1;
  for (int l = 0; l < C->L; l++) {
    if (C->lo[l] < INT32_MIN || C->lo[l] + C->N[l] - 1 > INT32_MAX) c32 = false;
    const spc_level_spec *ls = C->lv[l]->lf;
    if (ls->props & SPC_LP_BRANCHLESS) { /* np positions */
    } else if (ls->pads || (ls->props & SPC_LP_FULL)) {
      np = sat_mul(np, C->N[l] > 0 ? C->N[l] : 1);
    } else {
      int64_t cap = sat_mul(np, C->N[l] > 0 ? C->N[l] : 1);
      np = C->n < cap ? C->n : cap;
    }
    if (np >= INT32_MAX) i32 = false;
  }
  C->coord_ty = c32 ? IR_I32 : IR_I64;
  C->index_ty = i32 ? IR_I32 : IR_I64;
}

/* ---- one level ------------------------------------------------------------ */

typedef struct lvfunc {
  ir_func *f;
  int narr;
  int p_arr0, p_qpos, p_size, p_vout; /* parameter numbers */
} lvfunc;

/* Per-parent ("[*]") or per-coordinate ("[c]") aggregates of the level's
 * queries, over the components whose prefix is new at this level. */
/* How build_queries_m makes the results: QM_ALL locals, allocated,
 * aggregated over the n components and freed by the caller (tofree);
 * over a stream (stream_levels) parameters q_NAME (and q_present for
 * min/max), in one order: QM_ALLOC allocated (OUT) with the size check,
 * QM_LOOP aggregated over a chunk (INOUT), QM_BIND only named (IN). */
enum { QM_ALL, QM_ALLOC, QM_LOOP, QM_BIND };

static spc_status build_queries_m(ir_func *f, ir_stmt *body,
                                  lvbind *b, ir_var pp, ir_var isnew, ir_var crd,
                                  ir_var n, ir_var limit, int lnum, const char *fmt_name,
                                  ir_var *tofree, int *nfree, int mode, spc_error *e);
static spc_status build_queries(ir_func *f, ir_stmt *body,
                                lvbind *b, ir_var pp, ir_var isnew, ir_var crd,
                                ir_var n, ir_var limit, int lnum, const char *fmt_name,
                                ir_var *tofree, int *nfree, spc_error *e) {
  return build_queries_m(f, body, b, pp, isnew, crd, n, limit, lnum, fmt_name, tofree, nfree,
                         QM_ALL, e);
}

/* A query result as a parameter of a streamed level routine. */
static ir_var qparam(ir_func *f, const char *name, int mode) {
  char nm[80];
  snprintf(nm, sizeof nm, "q_%s", name);
  return ir_param(f, nm, IR_I64, true, mode == QM_ALLOC ? IR_OUT : mode == QM_LOOP ? IR_INOUT : IR_IN);
}

static spc_status build_queries_m(ir_func *f, ir_stmt *body,
                                  lvbind *b, ir_var pp, ir_var isnew, ir_var crd,
                                  ir_var n, ir_var limit, int lnum, const char *fmt_name,
                                  ir_var *tofree, int *nfree, int mode, spc_error *e) {
  const spc_level_spec *ls = b->ls;
  spc_status s = SPC_OK;
  /* a query grouped by the coordinate keeps one entry per coordinate of
   * the level's extent N: past the position limit that is "too large"
   * (as the level's own size is), not an allocation failing later */
  bool by_coord = false;
  for (int k = 0; k < ls->nqueries; k++) by_coord |= !strstr(ls->queries[k].text, "[*]");
  if (by_coord && (mode == QM_ALL || mode == QM_ALLOC)) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "level %d (%s) of format %s: its attribute queries would need %%lld "
             "entries: too large (limit %%lld)", lnum, ls->name, fmt_name);
    ir_expr *fa[2] = {ir_ref(f, b->N), ir_ref(f, limit)};
    ir_stmt *iff = ir_add(f, body, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, b->N), ir_ref(f, limit)), NULL, NULL));
    ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, fa, 2));
  }
  for (int k = 0; k < ls->nqueries && !s; k++) {
    spc_query *q = NULL;
    lang_src src = ls->queries[k].at;
    char *txt = spc_strdup(ls->queries[k].text);
    if (!txt) return SPC_NOMEM(e);
    char *star = strstr(txt, "[*]");
    if (star) star[1] = ' ';
    src.text = txt;
    s = spc_query_parse(&src, &q, e);
    spc_free(txt);
    if (s) return s;
    bool per_parent = star != NULL;
    if (!per_parent && (q->ngroup != 1 || strcmp(q->group[0], "c")))
      s = spc_err(e, SPC_ERR_UNSUPPORTED, ls->file, src.line, src.col,
                  "level %s: queries group by [*] or [c] only", ls->name);
    ir_expr *G = per_parent ? ir_ref(f, b->np) : ir_ref(f, b->N);
    ir_var present = -1;
    if (mode != QM_ALL && q->nagg > 0) { /* one per query: min and max of any query */
      bool mm = false;
      for (int a = 0; a < q->nagg; a++)
        mm |= q->aggs[a].kind != SPC_AGG_COUNT && q->aggs[a].kind != SPC_AGG_ID;
      if (mm) {
        char pn[32];
        snprintf(pn, sizeof pn, "present%d", k);
        present = qparam(f, pn, mode);
        if (mode == QM_ALLOC) ir_add(f, body, ir_alloc(f, present, G, true));
      }
    }
    bool agg = mode == QM_ALL || mode == QM_LOOP; /* the aggregation loop */
    ir_var g = -1, cv = -1;
    ir_stmt *loop = NULL, *tb = NULL;
    if (agg) {
      ir_var t = lang_fresh_local(f, "qt", IR_I64, false);
      g = lang_fresh_local(f, "qg", IR_I64, false);
      cv = lang_fresh_local(f, "qc", IR_I64, false);
      loop = ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL);
      ir_stmt *iff = ir_add(f, ir_body(loop),
                            ir_if(f, ir_load(f, isnew, ir_ref(f, t)), NULL, NULL));
      tb = ir_then(iff);
      ir_add(f, tb, ir_assign(f, cv, ir_load(f, crd, ir_ref(f, t))));
      ir_add(f, tb, ir_assign(f, g, per_parent ? ir_load(f, pp, ir_ref(f, t))
                                               : ir_bin(f, IR_SUB, ir_ref(f, cv), ir_ref(f, b->lo))));
    }
    bool minmax = false;
    for (int a = 0; a < q->nagg && !s; a++) {
      const spc_query_agg *A = &q->aggs[a];
      if (A->nargs > 1 || (A->nargs == 1 && strcmp(A->args[0], "c"))) {
        s = spc_err(e, SPC_ERR_UNSUPPORTED, ls->file, src.line, src.col,
                    "level %s: query aggregates take the coordinate c only", ls->name);
        break;
      }
      if (b->nq >= SPC_SPEC_MAX * 4 || *nfree >= SPC_SPEC_MAX * 8) {
        s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "too many query results");
        break;
      }
      ir_var o;
      if (mode == QM_ALL) {
        o = lang_fresh_local(f, A->name, IR_I64, true);
        ir_add(f, body, ir_alloc(f, o, G, true));
        tofree[(*nfree)++] = o;
      } else {
        o = qparam(f, A->name, mode);
        if (mode == QM_ALLOC) ir_add(f, body, ir_alloc(f, o, G, true));
      }
      snprintf(b->qbuf[b->nq], sizeof b->qbuf[0], "%s", A->name);
      b->qnames[b->nq] = b->qbuf[b->nq];
      b->qvars[b->nq++] = o;
      if (!agg) continue;
      ir_expr *cur = ir_load(f, o, ir_ref(f, g));
      switch (A->kind) {
      case SPC_AGG_COUNT:
        ir_add(f, tb, ir_store(f, o, ir_ref(f, g), ir_bin(f, IR_ADD, cur, ir_int(f, 1))));
        break;
      case SPC_AGG_ID: ir_add(f, tb, ir_store(f, o, ir_ref(f, g), ir_int(f, 1))); break;
      default: {
        minmax = true;
        if (present < 0) {
          present = lang_fresh_local(f, "present", IR_I64, true);
          ir_add(f, body, ir_alloc(f, present, G, true));
          tofree[(*nfree)++] = present;
        }
        ir_expr *seen = ir_bin(f, IR_NE, ir_load(f, present, ir_ref(f, g)), ir_int(f, 0));
        ir_expr *m = ir_bin(f, A->kind == SPC_AGG_MIN ? IR_MIN : IR_MAX, cur, ir_ref(f, cv));
        ir_add(f, tb, ir_store(f, o, ir_ref(f, g), ir_select(f, seen, m, ir_ref(f, cv))));
      }
      }
    }
    if (minmax) ir_add(f, tb, ir_store(f, present, ir_ref(f, g), ir_int(f, 1)));
    if (agg) ir_add(f, body, loop);
    spc_query_free(&q);
  }
  return s;
}

/* a level binding's scalar locals: parent p, position q, coordinate c,
 * parents np, extent N and offset lo */
static void bind_locals(ir_func *f, lvbind *b, const conv *C) {
  b->p = lang_fresh_local(f, "p", C->index_ty, false);
  b->q = lang_fresh_local(f, "q", C->index_ty, false);
  b->c = lang_fresh_local(f, "c", C->coord_ty, false);
  b->np = lang_fresh_local(f, "np", C->index_ty, false);
  b->N = lang_fresh_local(f, "N", IR_I64, false);
  b->lo = lang_fresh_local(f, "lo", IR_I64, false);
}

/* bind_locals, np, N and lo set from the routine's parameters */
static void bind_level(ir_func *f, ir_stmt *body, lvbind *b, const conv *C, ir_var npin, ir_var Nin,
                       ir_var loin) {
  bind_locals(f, b, C);
  ir_add(f, body, ir_assign(f, b->np, ir_cast(f, C->index_ty, ir_ref(f, npin))));
  ir_add(f, body, ir_assign(f, b->N, ir_ref(f, Nin)));
  ir_add(f, body, ir_assign(f, b->lo, ir_ref(f, loin)));
}

/* level l's init and size, refused past the position limit; then the
 * next level's parents qpos (n of them, when qpos >= 0) and the values
 * vout (size of them, when vout >= 0) allocated */
static spc_status level_init(ir_func *f, ir_stmt *body, lvbind *b, const conv *C, int l, ir_var size,
                             ir_var limit, ir_var qpos, ir_var n, ir_var vout, spc_error *e) {
  spc_status s = SPC_OK;
  if (asm_lfn(b, SPC_LF_INIT)) s = asm_lower_fn(f, body, b, SPC_LF_INIT, -1, NULL, e);
  if (!s) s = asm_lower_fn(f, body, b, SPC_LF_SIZE, size, NULL, e);
  if (s) return s;
  char msg[200];
  snprintf(msg, sizeof msg,
           "level %d (%s) of format %s would hold %%lld positions: too large "
           "(limit %%lld)", l + 1, C->lv[l]->lf->name, C->fmt->name);
  ir_expr *fa[2] = {ir_ref(f, size), ir_ref(f, limit)};
  ir_stmt *iff = ir_add(f, body, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, size), ir_ref(f, limit)), NULL, NULL));
  ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, fa, 2));
  if (qpos >= 0) ir_add(f, body, ir_alloc(f, qpos, ir_ref(f, n), false));
  if (vout >= 0) ir_add(f, body, ir_alloc(f, vout, ir_ref(f, size), true));
  return SPC_OK;
}

/* component t placed into lb: its parent and coordinate, a position
 * yielded and the coordinate inserted when isnew[t]; the position to
 * qpos[t] and the value vals[t] to vout at it (each when >= 0) */
static spc_status level_place(ir_func *f, ir_stmt *lb, lvbind *b, const conv *C, ir_var t, ir_var pp,
                              ir_var crd, ir_var isnew, ir_var qpos, ir_var vals, ir_var vout,
                              spc_error *e) {
  ir_add(f, lb, ir_assign(f, b->p, ir_cast(f, C->index_ty, ir_load(f, pp, ir_ref(f, t)))));
  ir_add(f, lb, ir_assign(f, b->c, ir_cast(f, C->coord_ty, ir_load(f, crd, ir_ref(f, t)))));
  ir_stmt *iff = ir_add(f, lb, ir_if(f, ir_load(f, isnew, ir_ref(f, t)), NULL, NULL));
  spc_status s = asm_lower_fn(f, ir_then(iff), b, SPC_LF_YIELD, b->q, NULL, e);
  if (!s && asm_lfn(b, SPC_LF_INSERT)) s = asm_lower_fn(f, ir_then(iff), b, SPC_LF_INSERT, -1, NULL, e);
  if (qpos >= 0) ir_add(f, lb, ir_store(f, qpos, ir_ref(f, t), ir_cast(f, IR_I64, ir_ref(f, b->q))));
  if (vout >= 0) ir_add(f, lb, ir_store(f, vout, ir_ref(f, b->q), ir_load(f, vals, ir_ref(f, t))));
  return s;
}

static spc_status build_level(conv *C, int l, lvfunc *F, spc_error *e) {
  const spc_format_level *fl = C->lv[l];
  const spc_level_spec *ls = fl->lf;
  bool last = l == C->L - 1;
  /* measuring (spc_convert_size), the last level runs its queries, init
   * and size only: its arrays have their lengths once init ran (size is
   * evaluated there too), nothing is placed and no value is written.  A
   * finalize that allocates could change a length after the placing:
   * such a level is placed as usual. */
  bool sizes_only = C->measure && last;
  ir_func *f = ir_func_new("spc_conv_level");
  if (!f) return SPC_NOMEM(e);
  F->f = f;
  ir_stmt *body = ir_func_body(f);
  lvbind b;
  asm_bind_init(&b, ls, fl, C->index_ty, C->coord_ty);
  const spc_lfn *fin = asm_lfn(&b, SPC_LF_FINALIZE);
  if (fin && strstr(fin->text, "alloc")) sizes_only = false;
  ir_var pp = ir_param(f, "pp", IR_I64, true, IR_IN);
  ir_var isnew = ir_param(f, "isnew", IR_BOOL, true, IR_IN);
  ir_var crd = ir_param(f, "lcrd", IR_I64, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var npin = ir_param(f, "np_in", IR_I64, false, IR_IN);
  /* extent, offset and position limit: data, so one compiled routine
   * serves every tensor of the format */
  ir_var Nin = ir_param(f, "N_in", IR_I64, false, IR_IN);
  ir_var loin = ir_param(f, "lo_in", IR_I64, false, IR_IN);
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  F->p_arr0 = ir_nparams(f);
  F->narr = ls->narrays;
  for (int k = 0; k < ls->narrays; k++)
    b.arr[k] = ir_param(f, ls->arrays[k].name,
                        asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty), true, IR_OUT);
  F->p_qpos = ir_nparams(f);
  ir_var qpos = ir_param(f, "qpos", IR_I64, true, IR_OUT);
  F->p_size = ir_nparams(f);
  ir_var size = ir_param(f, "size", IR_I64, false, IR_OUT);
  ir_var vals = -1, vout = -1;
  ir_ty vty = asm_value_ty(C->vt);
  F->p_vout = -1;
  if (last && C->vt != SPC_PATTERN && !sizes_only) {
    vals = ir_param(f, "vals", vty, true, IR_IN);
    F->p_vout = ir_nparams(f);
    vout = ir_param(f, "vout", vty, true, IR_OUT);
  }
  for (int k = 0; k < ls->nwork; k++)
    b.work[k] = lang_fresh_local(f, ls->work[k].name,
                                 asm_tname_ty(ls->work[k].type, C->index_ty, C->coord_ty), true);
  bind_level(f, body, &b, C, npin, Nin, loin);
  ir_var tofree[SPC_SPEC_MAX * 8];
  int nfree = 0;
  spc_status s = build_queries(f, body, &b, pp, isnew, crd, n, limit, l + 1,
                               C->fmt->name, tofree, &nfree, e);
  /* the next level's parents (not for the last level, whose are not used) */
  if (!s) s = level_init(f, body, &b, C, l, size, limit, last ? -1 : qpos, n, vout, e);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_stmt *loop = ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL);
  ir_stmt *lb = ir_body(loop);
  if (!s && !sizes_only) {
    s = level_place(f, lb, &b, C, t, pp, crd, isnew, last ? -1 : qpos, vals, vout, e);
    ir_add(f, body, loop);
  }
  if (!s && !sizes_only && asm_lfn(&b, SPC_LF_FINALIZE))
    s = asm_lower_fn(f, body, &b, SPC_LF_FINALIZE, -1, NULL, e);
  for (int k = 0; k < nfree && !s; k++) ir_add(f, body, ir_free(f, tofree[k]));
  for (int k = 0; k < ls->nwork && !s; k++) ir_add(f, body, ir_free(f, b.work[k]));
  if (!s) s = ir_verify(f, e);
  return s;
}

/* ---- one level over a stream ------------------------------------------------
 * build_level's routine cut at its phases, for a stream of components in
 * level order that is never held whole (stream_levels): the level's
 * state -- its arrays, workspaces, query results and values -- lives
 * here between calls, and the per-component parts run chunk by chunk.
 *   spc_conv_lqalloc(np_in, N_in, lo_in, limit, q_..)          queries' arrays (OUT)
 *   spc_conv_lquery(pp, isnew, lcrd, n, np_in, N_in, lo_in, q_..)   per chunk (INOUT)
 *   spc_conv_linit(np_in, N_in, lo_in, limit, q_.., arrays.., work.., size, [vout])
 *   spc_conv_lplace(pp, isnew, lcrd, n, np_in, N_in, lo_in, [vals], q_.., arrays..,
 *                   work.., [qpos], [vout])                    per chunk
 *   spc_conv_lfinal(np_in, N_in, lo_in, q_.., arrays.., work..)
 * The same level functions in the same order per component as
 * build_level's one routine: the same bits. */
enum { LK_QALLOC, LK_QUERY, LK_INIT, LK_PLACE, LK_FINAL };

typedef struct lchunk {
  ir_func *f;
  asm_entry fn;
  int p_pp, p_isnew, p_crd, p_n, p_np, p_N, p_lo, p_limit, p_vals;
  int p_q0, nq, p_arr0, narr, p_work0, nwork, p_qpos, p_qlast, p_size, p_vout;
} lchunk;

/* Level functions that allocate after init cannot run on state kept
 * between calls: such a level is assembled in memory (stream_applies). */
static bool lfn_allocs(const lvbind *b, spc_lfn_kind k) {
  const spc_lfn *fn = asm_lfn(b, k);
  return fn && strstr(fn->text, "alloc");
}

static spc_status build_lchunk(conv *C, int l, int kind, lchunk *R, spc_error *e) {
  static const char *const names[] = {"spc_conv_lqalloc", "spc_conv_lquery", "spc_conv_linit",
                                      "spc_conv_lplace", "spc_conv_lfinal"};
  const spc_format_level *fl = C->lv[l];
  const spc_level_spec *ls = fl->lf;
  bool last = l == C->L - 1, chunk = kind == LK_QUERY || kind == LK_PLACE;
  bool state = kind >= LK_INIT; /* arrays and workspaces */
  *R = (lchunk){.p_pp = -1, .p_isnew = -1, .p_crd = -1, .p_n = -1, .p_limit = -1, .p_vals = -1,
                .p_arr0 = -1, .p_work0 = -1, .p_qpos = -1, .p_qlast = -1, .p_size = -1,
                .p_vout = -1};
  ir_func *f = R->f = ir_func_new(names[kind]);
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  lvbind b;
  asm_bind_init(&b, ls, fl, C->index_ty, C->coord_ty);
  ir_var pp = -1, isnew = -1, crd = -1, n = -1, limit = -1, vals = -1, vout = -1, qpos = -1;
  ir_var size = -1;
  ir_ty vty = asm_value_ty(C->vt);
  bool values = last && C->vt != SPC_PATTERN;
  if (chunk) {
    R->p_pp = ir_nparams(f);
    pp = ir_param(f, "pp", IR_I64, true, IR_IN);
    isnew = ir_param(f, "isnew", IR_BOOL, true, IR_IN);
    crd = ir_param(f, "lcrd", IR_I64, true, IR_IN);
    n = ir_param(f, "n", IR_I64, false, IR_IN);
    R->p_isnew = R->p_pp + 1, R->p_crd = R->p_pp + 2, R->p_n = R->p_pp + 3;
  }
  R->p_np = ir_nparams(f);
  ir_var npin = ir_param(f, "np_in", IR_I64, false, IR_IN);
  ir_var Nin = ir_param(f, "N_in", IR_I64, false, IR_IN);
  ir_var loin = ir_param(f, "lo_in", IR_I64, false, IR_IN);
  R->p_N = R->p_np + 1, R->p_lo = R->p_np + 2;
  if (kind == LK_QALLOC || kind == LK_INIT) {
    R->p_limit = ir_nparams(f);
    limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  }
  if (kind == LK_PLACE && values) {
    R->p_vals = ir_nparams(f);
    vals = ir_param(f, "vals", vty, true, IR_IN);
  }
  bind_level(f, body, &b, C, npin, Nin, loin);
  static const int qmode[] = {QM_ALLOC, QM_LOOP, QM_BIND, QM_BIND, QM_BIND};
  R->p_q0 = ir_nparams(f);
  int nfree = 0;
  spc_status s = build_queries_m(f, body, &b, pp, isnew, crd, n, limit, l + 1, C->fmt->name,
                                 NULL, &nfree, qmode[kind], e);
  R->nq = ir_nparams(f) - R->p_q0;
  if (!s && state) {
    ir_dir d = kind == LK_INIT ? IR_OUT : IR_INOUT;
    R->p_arr0 = ir_nparams(f);
    R->narr = ls->narrays;
    for (int k = 0; k < ls->narrays; k++)
      b.arr[k] = ir_param(f, ls->arrays[k].name,
                          asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty), true, d);
    R->p_work0 = ir_nparams(f);
    R->nwork = ls->nwork;
    for (int k = 0; k < ls->nwork; k++) {
      char nm[80];
      snprintf(nm, sizeof nm, "w_%s", ls->work[k].name);
      b.work[k] = ir_param(f, nm, asm_tname_ty(ls->work[k].type, C->index_ty, C->coord_ty),
                           true, d);
    }
  }
  if (!s && kind == LK_PLACE && !last) {
    R->p_qpos = ir_nparams(f);
    qpos = ir_param(f, "qpos", IR_I64, true, IR_INOUT);
  }
  ir_var qlast = -1; /* the last position yielded, carried across chunks */
  if (!s && kind == LK_PLACE) {
    R->p_qlast = ir_nparams(f);
    qlast = ir_param(f, "qlast", IR_I64, false, IR_INOUT);
    ir_add(f, body, ir_assign(f, b.q, ir_cast(f, C->index_ty, ir_ref(f, qlast))));
  }
  if (!s && kind == LK_INIT) {
    R->p_size = ir_nparams(f);
    size = ir_param(f, "size", IR_I64, false, IR_OUT);
  }
  if (!s && values && (kind == LK_INIT || kind == LK_PLACE)) {
    R->p_vout = ir_nparams(f);
    vout = ir_param(f, "vout", vty, true, kind == LK_INIT ? IR_OUT : IR_INOUT);
  }
  if (!s && kind == LK_INIT) s = level_init(f, body, &b, C, l, size, limit, -1, -1, vout, e);
  if (!s && kind == LK_PLACE) {
    ir_var t = lang_fresh_local(f, "t", IR_I64, false);
    ir_stmt *loop = ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL));
    s = level_place(f, ir_body(loop), &b, C, t, pp, crd, isnew, qpos, vals, vout, e);
    ir_add(f, body, ir_assign(f, qlast, ir_cast(f, IR_I64, ir_ref(f, b.q))));
  }
  if (!s && kind == LK_FINAL && asm_lfn(&b, SPC_LF_FINALIZE))
    s = asm_lower_fn(f, body, &b, SPC_LF_FINALIZE, -1, NULL, e);
  if (!s) s = ir_verify(f, e);
  return s;
}

/* ---- the result tensor ---------------------------------------------------- */

static const spc_level_format *native(const conv *C, int l, bool plain) {
  const char *nm = C->lv[l]->lf->name;
  if (!plain || C->lo[l] != 0) return NULL;
  if (!strcmp(nm, "dense")) return &spc_level_dense;
  if (!strcmp(nm, "compressed")) return &spc_level_compressed;
  if (!strcmp(nm, "singleton")) return &spc_level_singleton;
  return NULL;
}

/* Level l's coordinate is exactly canonical index k: k, else -1. */
static int level_dim(const spc_remap *r, int l) {
  const lang_node *o = r->out[l];
  if (o->kind != LN_NAME) return -1;
  return spc_remap_find_in(r, o->name);
}

static conv_tensor *new_result(conv *C, const int64_t *dims) {
  conv_tensor *ct = spc_calloc(1, sizeof *ct);
  if (!ct) return NULL;
  spc_tensor *t = &ct->t;
  t->order = C->order;
  for (int d = 0; d < C->order; d++) t->dims[d] = dims[d];
  t->vt = C->vt;
  snprintf(ct->info.name, sizeof ct->info.name, "%s", C->fmt->name);
  t->format = ct->info.name;
  t->ext = &asm_conv_ext;
  ct->info.engine = C->eng.want;
  ct->info.no_jit = C->eng.no_jit;
  ct->info.nmodes = C->nmodes;
  memcpy(ct->info.modes, C->modes, sizeof ct->info.modes);
  if (C->o && C->o->jit_dir)
    snprintf(ct->info.jit_dir, sizeof ct->info.jit_dir, "%s", C->o->jit_dir);
  t->sym = SPC_GENERAL;
  conv_info *I = &ct->info;
  I->fmt = C->fmt;
  I->nlevels = C->L;
  for (int l = 0; l < C->L; l++) {
    I->lv[l] = C->lv[l];
    I->lo[l] = C->lo[l];
    I->N[l] = C->N[l];
  }
  I->nparams = C->nparams;
  for (int k = 0; k < C->nparams; k++) I->params[k] = C->ps[k];
  I->index_ty = C->index_ty;
  I->coord_ty = C->coord_ty;
  /* every level stores one distinct canonical index: the native read-side
   * tables (spc_iter) apply to its dense/compressed/singleton levels */
  bool plain = true;
  unsigned seen = 0;
  for (int l = 0; l < C->L; l++) {
    int d = level_dim(C->r, l);
    if (d < 0 || (seen >> d & 1)) plain = false;
    else seen |= 1u << d;
  }
  for (int l = 0; l < C->L; l++) {
    spc_level *lv = &t->lv[l];
    lv->dim = level_dim(C->r, l);
    lv->size = C->N[l];
    lv->props = C->lv[l]->lf->props;
    if (!C->lv[l]->unique) lv->props &= ~(unsigned)SPC_LP_UNIQUE;
    lv->fmt = native(C, l, plain);
  }
  t->nlevels = C->L;
  return ct;
}

/* Level l's n arrays a[0..n) moved into the result's level l (a[k].data
 * NULL after: the result owns them), typed by the spec's array types. */
static void adopt_arrays(const conv *C, conv_tensor *ct, int l, ir_arg *a, int n) {
  spc_level *lv = &ct->t.lv[l];
  const spc_level_spec *ls = C->lv[l]->lf;
  for (int k = 0; k < n; k++) {
    ir_ty ty = asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty);
    lv->arr[lv->narr++] = (spc_array){.name = ls->arrays[k].name,
                                      .type = ty == IR_I32 ? SPC_IDX32 : SPC_IDX64,
                                      .len = a[k].len, .data = a[k].data, .owned = true};
    a[k].data = NULL;
  }
}

/* ---- the routine cache ---------------------------------------------------------
 * A small conversion's time went to building its routines (parsing the
 * level functions' text, lowering, verifying, keying): 97% of CSR to CSC
 * on a 1,910-entry matrix.  They are built once per process instead,
 * kept (asm_rc_put) under a key of every input their builder reads: the
 * formats by their content (spc_specs_add's hash of file name and YAML
 * text, with their levels' specs), a level by its place in its format,
 * the types, the parameters, the mode order, the policies, the source's
 * description and the builder's own argument.  A routine that runs
 * compiled is kept only where the factory has it (on the auto or factory
 * engine); one only interpreted or no function at all (a probe's
 * findings) always.  The tests run with SPC_ROUTINE_CHECK set: every
 * routine found is built again and must hash the same (ir_func_hash) and
 * say the same, which checks that the key misses nothing. */
enum {
  RC_COUNT = 1, RC_FCOUNT, RC_FPLACE, RC_SINIT, RC_SFINAL, RC_NP1, RC_YSTATE, RC_BUCKET,
  RC_LEVEL, RC_REMAP, RC_DIRECT, RC_DBUCKET, RC_KNOWN, RC_RBUCKET, RC_CMAX, RC_FBUCKET,
  RC_FBPACK, RC_BPLACE, RC_CBPACK, RC_RUNS, RC_CHAIN, RC_PCHAIN, RC_NKINDS /* the count: name[] in rc_get_x has one for each */
};

typedef struct rcr rcr;
typedef struct countfn {
  ir_func *f;
  bool cnt32; /* in: the parents' counts in int32 (cnt32_of) */
  bool give;  /* in: the source's arrays handed over (give_plan) where they can be */
  int gd;     /* crd[gd] and the values given (IR_GIVE; -1: none) */
  int narr;
  int p_ok, p_arr0, p_size, p_vout; /* parameter numbers */
  const rcr *rc; /* from the routine cache (NULL: f built here) */
} countfn;
static spc_status build_count(conv *C, countfn *F, spc_error *e);

/* Whether a level of the target may leave positions without a component
 * (`pads`: dense, offset, squeezed, banded, ragged): its values array is
 * then made zeroed, so a position no component reaches holds zero, not
 * what the allocator left there (a format of such levels without `fill:
 * zero` lists every position as a component: dense levels without it,
 * read back, gave garbage values). */
static bool any_pads(const conv *C) {
  for (int l = 0; l < C->L; l++)
    if (C->lv[l]->lf->pads) return true;
  return false;
}
/* The counting routine's per-parent counts (and pass 0's run ends, which
 * are positions) in int32 where positions are (index_ty) and the
 * components fit: half the bytes of int64 counts, which in a loop of
 * conversions took the heap of a file of many short rows past glibc's
 * trim threshold (arrow's 46,500 rows: fresh pages every call). */
static bool cnt32_of(const conv *C) { return C->index_ty == IR_I32 && C->n < INT32_MAX; }
static spc_status build_fcount(conv *C, const conv_info *SI, bool known, ir_func **out,
                               spc_error *e);
static spc_status build_fplace(conv *C, const conv_info *SI, ir_func **out, spc_error *e);
static spc_status build_sinit(conv *C, ir_func **out, int *p_arr0, bool nozero, bool *fill,
                              spc_error *e);
static spc_status build_sfinal(conv *C, ir_func **out, spc_error *e);
static spc_status build_runs(conv *C, ir_func **out, spc_error *e);
static spc_status yield_state(conv *C, bool *w, spc_error *e);
static spc_status build_bucket(conv *C, ir_func **out, spc_error *e);
static spc_status build_rbucket(conv *C, int which, ir_func **out, spc_error *e);
static spc_status build_fbucket(conv *C, const conv_info *SI, bool crd32, ir_func **out,
                                spc_error *e);
static bool fcount_known(const conv *C, const conv_info *SI, const unsigned *props);
static spc_status ip_plan(conv *C, int *gk, int *kc, spc_error *e);
static bool stores_at(const ir_stmt *st, ir_var arr, ir_var q);
static bool pure_insert(const ir_stmt *st, const ir_var *keep, const bool *fill, int narr,
                        ir_var q);
static bool stores_only(const ir_stmt *st, ir_var arr, ir_var c, bool *any);
static spc_status build_fbpack(conv *C, const conv_info *SI, int mode, int gk, ir_func **out,
                               spc_error *e);
static spc_status build_bplace(conv *C, int mode, int gk, ir_func **out, spc_error *e);
static spc_status build_cbpack(conv *C, int mode, int gk, ir_func **out, spc_error *e);
static spc_status sentry(conv *C, ir_func *f, ir_stmt *lb, const ir_var *crd, ir_var t, bool reqs,
                         lvbind *b0, ir_expr **outs, spc_error *e);

struct rcr {
  asm_rc_val v; /* v.f: the caller frees it (a no-op when shared) */
  bool hit;     /* v was found in the cache (built earlier) */
  bool fac;     /* v.fn is the factory's answer (NULL: it has none) */
};

/* rc_key's start: the target's part (format and levels, parameters, mode
 * order, remapping), hashed at the conversion's first routine and again
 * only if its format or levels change (they are set before any routine
 * is asked for); false where the format has no hash. */
static bool rc_key_base(conv *C, uint64_t k[2]) {
  bool same = C->kb_fmt == C->fmt && C->kb_L == C->L && C->kb_order == C->order &&
              C->kb_np == C->nparams && C->kb_nm == C->nmodes;
  for (int l = 0; same && l < C->L && l < SPC_MAX_ORDER; l++) same = C->kb_lv[l] == C->lv[l];
  if (!same) {
    uint64_t b[2] = {0x8c6f2e0a51d3b749ULL, 0x1f83d9abfb41bd6bULL};
    asm_rk_put(b, (uint64_t)C->order);
    C->kb_ok = asm_rk_fmt(b, C->fmt, C->lv, C->L);
    asm_rk_put(b, (uint64_t)C->nparams);
    for (int p = 0; p < C->nparams && p < SPC_SPEC_MAX; p++) {
      asm_rk_str(b, C->ps[p].name);
      asm_rk_put(b, (uint64_t)C->ps[p].value);
    }
    asm_rk_put(b, (uint64_t)C->nmodes);
    for (int m = 0; m < C->nmodes && m < SPC_MAX_ORDER; m++) asm_rk_put(b, (uint64_t)C->modes[m]);
    asm_rk_str(b, C->remap_text);
    C->kb[0] = b[0], C->kb[1] = b[1];
    C->kb_fmt = C->fmt, C->kb_L = C->L, C->kb_order = C->order;
    C->kb_np = C->nparams, C->kb_nm = C->nmodes;
    for (int l = 0; l < C->L && l < SPC_MAX_ORDER; l++) C->kb_lv[l] = C->lv[l];
  }
  k[0] = C->kb[0], k[1] = C->kb[1];
  return C->kb_ok;
}

/* The key of routine `kind` (argument extra) for C and source SI (NULL:
 * a COO); false where it is not cached (a spec not loaded by a registry
 * has no hash). */
static bool rc_key(conv *C, const conv_info *SI, int kind, int64_t extra, uint64_t out[2]) {
  uint64_t k[2];
  if (!rc_key_base(C, k)) return false;
  asm_rk_put(k, (uint64_t)kind);
  asm_rk_put(k, (uint64_t)extra);
  asm_rk_put(k, ((uint64_t)C->vt << 40) ^ ((uint64_t)(C->comb ? C->comb->vt : 99) << 32) ^
                 ((uint64_t)C->index_ty << 16) ^ (uint64_t)C->coord_ty);
  asm_rk_put(k, ((uint64_t)C->nosort << 3) ^ ((uint64_t)C->carry << 2) ^ ((uint64_t)C->measure << 1) ^
                 ((uint64_t)C->dup << 8));
  for (int d = 0; d < C->order && C->comb; d++) { /* the COO's coordinate types */
    const spc_array *a =
        d < C->comb->nlevels ? spc_level_array_c(&C->comb->lv[d], "crd") : NULL;
    asm_rk_put(k, a ? (uint64_t)a->type : 0x77);
  }
  if ((kind == RC_REMAP || kind == RC_CMAX || kind == RC_DIRECT) && C->r->ncounters) {
    /* the counters' extents are built in */
    for (int d = 0; d < C->order; d++) asm_rk_put(k, (uint64_t)C->comb->dims[d]);
    asm_rk_put(k, (uint64_t)C->limit);
  }
  asm_rk_put(k, SI != NULL);
  if (SI && C->ks != SI) { /* a source's description, hashed once */
    C->ks_h[0] = 0x3c6ef372fe94f82bULL, C->ks_h[1] = 0xa54ff53a5f1d36f1ULL;
    C->ks_ok = asm_rk_info(C->ks_h, SI);
    C->ks = SI;
  }
  if (SI && !C->ks_ok) return false;
  if (SI) asm_rk_put(k, C->ks_h[0]), asm_rk_put(k, C->ks_h[1]);
  out[0] = k[0];
  out[1] = k[1];
  return true;
}

static spc_status build_np1(conv *C, ir_func **out, spc_error *e);
typedef struct dplan dplan;
static spc_status build_direct(conv *C, const conv_info *SI, const dplan *P, ir_func **out,
                               int *p_ok, int *p_arr0, spc_error *e);
static spc_status build_dbucket(conv *C, const dplan *P, ir_func **out, spc_error *e);
static spc_status build_cmax(conv *C, const conv_info *SI, ir_func **out, spc_error *e);

/* the chain routine's parameter numbers (chain_layout) */
typedef struct chainfn {
  int p_ok, p_vout;
  int p_arr[SPC_MAX_ORDER], narr[SPC_MAX_ORDER], p_size[SPC_MAX_ORDER];
} chainfn;
static spc_status build_chain(conv *C, bool fromlc, chainfn *F, ir_func **out, spc_error *e);
static spc_status build_pchain(conv *C, int ph, bool fromlc, ir_func **out, spc_error *e);
static spc_status run_pchain(conv *C, bool fromlc, conv_tensor **out, bool *done, int *threads,
                             spc_error *e);
static spc_status rc_build(conv *C, const conv_info *SI, int kind, int64_t extra, const void *arg,
                           asm_rc_val *v, spc_error *e) {
  memset(v, 0, sizeof *v);
  spc_status s = SPC_ERR_INTERNAL;
  switch (kind) {
  case RC_COUNT: {
    countfn F = {.cnt32 = (extra & 1) != 0, .give = (extra & 2) != 0};
    s = build_count(C, &F, e);
    v->f = F.f;
    v->aux[0] = F.narr, v->aux[1] = F.p_ok, v->aux[2] = F.p_arr0;
    v->aux[3] = F.p_size, v->aux[4] = F.p_vout, v->aux[5] = F.gd;
    break;
  }
  case RC_FCOUNT: s = build_fcount(C, SI, extra != 0, &v->f, e); break;
  case RC_FPLACE: s = build_fplace(C, SI, &v->f, e); break;
  case RC_SINIT: s = build_sinit(C, &v->f, &v->aux[0], extra != 0, v->flags, e); break;
  case RC_SFINAL: s = build_sfinal(C, &v->f, e); break;
  case RC_RUNS: s = build_runs(C, &v->f, e); break;
  case RC_CHAIN: {
    chainfn F;
    s = build_chain(C, extra != 0, &F, &v->f, e);
    break;
  }
  case RC_PCHAIN: s = build_pchain(C, (int)(extra >> 40), (extra & 1) != 0, &v->f, e); break;
  case RC_NP1: s = build_np1(C, &v->f, e); break;
  case RC_YSTATE: s = yield_state(C, v->flags, e); break;
  case RC_BUCKET: s = build_bucket(C, &v->f, e); break;
  case RC_RBUCKET: s = build_rbucket(C, (int)extra, &v->f, e); break;
  case RC_FBUCKET: s = build_fbucket(C, SI, extra != 0, &v->f, e); break;
  case RC_FBPACK:
  case RC_CBPACK:
  case RC_BPLACE: { /* the in-place placement's (run_inplace): mode extra */
    int gk, kc;
    s = ip_plan(C, &gk, &kc, e);
    if (!s && gk < 0) s = SPC_ERR_UNSUPPORTED;
    if (!s && kind == RC_FBPACK) s = build_fbpack(C, SI, (int)extra, gk, &v->f, e);
    else if (!s && kind == RC_CBPACK) s = build_cbpack(C, (int)extra, gk, &v->f, e);
    else if (!s) s = build_bplace(C, (int)extra, gk, &v->f, e);
    break;
  }
  case RC_LEVEL: {
    lvfunc F = {0};
    s = build_level(C, (int)extra, &F, e);
    v->f = F.f;
    v->aux[0] = F.narr, v->aux[1] = F.p_arr0, v->aux[2] = F.p_qpos;
    v->aux[3] = F.p_size, v->aux[4] = F.p_vout;
    break;
  }
  case RC_REMAP: s = build_remap(C, &v->f, e); break;
  case RC_DIRECT: s = build_direct(C, SI, arg, &v->f, &v->aux[0], &v->aux[1], e); break;
  case RC_DBUCKET: s = build_dbucket(C, arg, &v->f, e); break;
  case RC_CMAX: s = build_cmax(C, SI, &v->f, e); break;
  case RC_KNOWN: /* no function: fcount_known's answer (its remapping parsed) */
    v->flags[0] = fcount_known(C, SI, arg);
    s = SPC_OK;
    break;
  default: break;
  }
  return s;
}

typedef struct rc_req {
  conv *C;
  const conv_info *SI;
  int kind;
  int64_t extra;
  const void *arg;
} rc_req;

static spc_status rc_make(void *ctx, asm_rc_val *v, spc_error *e) {
  const rc_req *q = ctx;
  return rc_build(q->C, q->SI, q->kind, q->extra, q->arg, v, e);
}

/* Routine `kind` for C (source SI, argument extra) into *r: the cache's
 * when it holds it; else built, and kept when it can be (see above). */
static spc_status rc_get_x(conv *C, const conv_info *SI, int kind, int64_t extra, const void *arg,
                           rcr *r, spc_error *e) {
  static const char *const name[] = {"",       "count",  "fcount",      "fplace", "sinit",
                                     "sfinal", "np1",    "yield-state", "bucket", "level",
                                     "remap",  "direct", "dbucket",     "order-proof", "rbucket",
                                     "cmax",   "fbucket", "fbpack", "bplace", "cbpack", "runs",
                                     "chain", "pchain"};
  _Static_assert(sizeof name / sizeof *name == RC_NKINDS, "a name for every routine kind");
  bool fac = kind != RC_NP1 && kind != RC_YSTATE && kind != RC_KNOWN;
  uint64_t key[2];
  bool can = (!fac || C->eng.want == SPC_ENGINE_AUTO || C->eng.want == SPC_ENGINE_FACTORY) &&
             rc_key(C, SI, kind, extra, key);
  rc_req q = {C, SI, kind, extra, arg};
  return asm_rc_routine(key, can, fac, name[kind], C->fmt->name, rc_make, &q, &r->v, &r->hit,
                        &r->fac, e);
}

/* rc_get_x for the routines that take no argument beyond extra. */
static spc_status rc_get(conv *C, const conv_info *SI, int kind, int64_t extra, rcr *r,
                         spc_error *e) {
  return rc_get_x(C, SI, kind, extra, NULL, r, e);
}

/* r's routine prepared for C's engine: the factory's when looked up
 * already, else as asm_prepare picks. */
static spc_status rc_prepare(conv *C, const rcr *r, asm_entry *fn, spc_error *e) {
  if (r->fac && r->v.fn) {
    *fn = r->v.fn;
    asm_note_factory(&C->eng, 1);
    if (r->hit && C->eng.info) C->eng.info->routines_cached++;
    return SPC_OK;
  }
  return asm_prepare(&C->eng, r->v.f, fn, e);
}

static spc_status rc_run(conv *C, const rcr *r, ir_arg *args, spc_error *e) {
  asm_entry fn = NULL;
  spc_status s = rc_prepare(C, r, &fn, e);
  return s ? s : asm_call(fn, r->v.f, args, e);
}

static spc_status run_levels(conv *C, conv_tensor *ct, spc_error *e) {
  spc_tensor *t = &ct->t;
  spc_status s = ensure_isnew(C, e);
  if (s) return s;
  int64_t np = 1, *pp = spc_calloc((size_t)(C->n ? C->n : 1), sizeof *pp);
  if (!pp) return SPC_NOMEM(e);
  for (int l = 0; l < C->L && !s; l++) {
    lvfunc F = {0};
    ir_arg *args = NULL;
    const spc_level_spec *ls = C->lv[l]->lf;
    if (ls->narrays > SPC_LEVEL_MAX_ARRAYS) {
      s = spc_err(e, SPC_ERR_UNSUPPORTED, ls->file, 0, 0,
                  "level %s has %d arrays; a tensor level holds at most %d",
                  ls->name, ls->narrays, SPC_LEVEL_MAX_ARRAYS);
      break;
    }
    for (int k = 0; k < ls->narrays && !s; k++) {
      ir_ty ty = asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty);
      if (ty != IR_I32 && ty != IR_I64)
        s = spc_err(e, SPC_ERR_UNSUPPORTED, ls->file, 0, 0,
                    "level %s: array %s is not an integer array", ls->name,
                    ls->arrays[k].name);
    }
    rcr rl = {0};
    if (!s) s = rc_get(C, NULL, RC_LEVEL, l, &rl, e);
    F = (lvfunc){.f = rl.v.f, .narr = rl.v.aux[0], .p_arr0 = rl.v.aux[1], .p_qpos = rl.v.aux[2],
                 .p_size = rl.v.aux[3], .p_vout = rl.v.aux[4]};
    if (!s && !(args = spc_calloc((size_t)ir_nparams(F.f), sizeof *args))) s = SPC_NOMEM(e);
    if (!s) {
      args[0] = (ir_arg){.data = pp, .len = C->n};
      args[1] = (ir_arg){.data = C->isnew[l], .len = C->n};
      args[2] = (ir_arg){.data = C->lc[l], .len = C->n};
      args[3].s.i64 = C->n;
      args[4].s.i64 = np;
      args[5].s.i64 = C->N[l];
      args[6].s.i64 = C->lo[l];
      args[7].s.i64 = C->limit;
      if (F.p_vout >= 0) args[F.p_vout - 1] = (ir_arg){.data = C->vals, .len = C->n};
      s = rc_run(C, &rl, args, e);
    }
    if (!s && C->measure) { /* the lengths, then nothing is kept */
      for (int k = 0; k < ls->narrays; k++) {
        ir_arg *a = &args[F.p_arr0 + k];
        ir_ty ty = asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty);
        C->bytes += a->len * (ty == IR_I32 ? 4 : 8);
        spc_free(a->data);
        a->data = NULL;
      }
      spc_free(pp);
      pp = args[F.p_qpos].data;
      args[F.p_qpos].data = NULL;
      np = args[F.p_size].s.i64;
      if (l == C->L - 1)
        C->bytes += (int64_t)spc_vtype_size(C->vt) * (F.p_vout >= 0 ? args[F.p_vout].len : np);
      if (F.p_vout >= 0) {
        spc_free(args[F.p_vout].data);
        args[F.p_vout].data = NULL;
      }
    } else if (!s) {
      adopt_arrays(C, ct, l, &args[F.p_arr0], ls->narrays);
      spc_free(pp);
      pp = args[F.p_qpos].data;
      args[F.p_qpos].data = NULL;
      np = args[F.p_size].s.i64;
      if (F.p_vout >= 0) {
        t->val = args[F.p_vout].data;
        t->nval = args[F.p_vout].len;
        t->val_owned = true;
        args[F.p_vout].data = NULL;
      } else if (l == C->L - 1) {
        t->nval = np;
      }
    }
    ir_func_free(&F.f);
    spc_free(args);
    /* level l placed: its coordinates and flags are consumed (and the
     * values at the last level, copied into the result's) */
    spc_free(C->lc[l]);
    spc_free(C->isnew[l]);
    C->lc[l] = NULL;
    C->isnew[l] = NULL;
    if (l == C->L - 1) {
      if (!C->vals_lent) spc_free(C->vals);
      C->vals = NULL;
    }
  }
  spc_free(pp);
  return s;
}

static spc_status squeries_l(conv *C, int l, lvbind *b, ir_var cnt, spc_error *e);
static bool reads_none(const ir_expr *x);

/* Each level's extent and offset (C->N, C->lo) from the dimensions alone
 * (no counters); false where a level has no finite range. */
static bool dim_bounds(conv *C) {
  lang_ival iv[SPC_MAX_ORDER];
  spc_error e2;
  spc_error_clear(&e2);
  if (spc_remap_bounds(C->r, C->comb->dims, NULL, iv, &e2)) return false;
  for (int l = 0; l < C->L; l++) {
    int64_t ext;
    if (!iv[l].bounded || __builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) || ext == INT64_MAX)
      return false;
    C->lo[l] = iv[l].lo;
    C->N[l] = ext + 1;
  }
  return true;
}

/* ---- the chain plan: levels placed as an ordered source comes ------------------
 * A COO already in the target's order, no two components equal (a sorted
 * file to DCSR, CSF, COO), took the level-by-level path: the remapped
 * coordinates as int64 arrays, a flag array per level, and a routine per
 * level over every component writing each one's position (R-MAT 2^17 to
 * DCSR 8 ns a component against CSR's 1.2).  One routine instead, over the
 * source three times:
 *   pass A: remap each component, check the order (strictly increasing
 *           tuples: else ok = 0 and the other paths run) and count the
 *           components whose prefix is new at each level (m[l]);
 *   pass B: each new component's parent position and its count under it
 *           (the levels' "[*] count" queries), where a level's position
 *           comes from yield_pos itself when that reads and writes none of
 *           the level's arrays (dense, singleton), and is otherwise assumed
 *           to be the new components' running count (compressed: children
 *           of ordered parents take positions 0, 1, 2, ...);
 *   init:   every level's init and size, top first (a size that is not
 *           the one assumed, m[l] or the size function's: ok = 0);
 *   pass C: yield_pos and insert_coord of each new component at each
 *           level, the value at the last level's position; a position
 *           that is not the one assumed stops it (ok = 0); then every
 *           level's finalize.
 * The same level functions on the same parents, coordinates and queries
 * as the level routines: the same arrays, bit for bit.
 *
 * spc_conv_chain(crd0.., [vals], n, N0, lo0, .., limit, ok,
 *                arrays of level 0.., size0, .., [vout]) */

/* Whether st reads or writes an array (a load, a length, a store, an
 * allocation, a builtin): a yield_pos or size that is a function of p, c,
 * np and the extents alone when it does not. */
static bool touches_arrays(const ir_stmt *st) {
  if (!st) return false;
  if (st->kind == IR_S_STORE || st->kind == IR_S_ALLOC || st->kind == IR_S_FREE ||
      st->kind == IR_S_BUILTIN)
    return true;
  if (!reads_none(st->a) || !reads_none(st->b)) return true;
  for (int c = 0; c < st->nkids; c++)
    if (touches_arrays(st->kids[c])) return true;
  return false;
}

/* Level l's function `which` lowered alone into a probe function *fp, the
 * level's arrays bound as its parameters (b->arr) and its locals bound:
 * what the probes below inspect.  *fp is NULL where the level has no such
 * function; the caller frees it.  A size returns into a fresh local, a
 * yield_pos into b->q. */
static spc_status lfn_probe(conv *C, int l, spc_lfn_kind which, lvbind *b, ir_func **fp,
                            spc_error *e) {
  const spc_level_spec *ls = C->lv[l]->lf;
  asm_bind_init(b, ls, C->lv[l], C->index_ty, C->coord_ty);
  *fp = NULL;
  if (!asm_lfn(b, which)) return SPC_OK;
  ir_func *f = ir_func_new("spc_chain_probe");
  if (!f) return SPC_NOMEM(e);
  for (int k = 0; k < ls->narrays; k++)
    b->arr[k] = ir_param(f, ls->arrays[k].name,
                         asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  bind_locals(f, b, C);
  ir_var ret = which == SPC_LF_SIZE ? lang_fresh_local(f, "r", IR_I64, false)
               : which == SPC_LF_YIELD ? b->q : -1;
  spc_status s = asm_lower_fn(f, ir_func_body(f), b, which, ret, NULL, e);
  if (s) ir_func_free(&f);
  *fp = f;
  return s;
}

/* Whether level l's function `which` touches the level's arrays (*pure
 * false) -- the probe binds them, so a pure one touches nothing. */
static spc_status lfn_pure(conv *C, int l, spc_lfn_kind which, bool *pure, spc_error *e) {
  lvbind b;
  ir_func *f;
  spc_status s = lfn_probe(C, l, which, &b, &f, e);
  *pure = f && !touches_arrays(ir_func_body(f));
  ir_func_free(&f);
  return s;
}

/* The chain plan's conditions that need no routine: two levels or more,
 * no counters, no padding, no level workspace, integer arrays. */
static bool chain_applies(const conv *C) {
  if (C->nosort || C->measure || C->L < 2 || C->r->ncounters || C->fmt->fill_zero) return false;
  for (int l = 0; l < C->L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    lvbind b;
    asm_bind_init(&b, ls, C->lv[l], C->index_ty, C->coord_ty);
    if (ls->nwork || ls->narrays > SPC_LEVEL_MAX_ARRAYS || !asm_lfn(&b, SPC_LF_YIELD) ||
        !asm_lfn(&b, SPC_LF_SIZE))
      return false;
    for (int k = 0; k < ls->narrays; k++) {
      ir_ty ty = asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty);
      if (ty != IR_I32 && ty != IR_I64) return false;
    }
    for (int k = 0; k < ls->nqueries; k++)
      if (!strstr(ls->queries[k].text, "[*]") || !strstr(ls->queries[k].text, "count("))
        return false;
  }
  return true;
}

/* Component t remapped into the level coordinates k[l] (int64 locals);
 * with reqs its `requires` checked. */
static spc_status chain_remap(conv *C, ir_func *f, ir_stmt *lb, const ir_var *crd, ir_var t,
                              bool reqs, const ir_var *k, bool fromlc, spc_error *e) {
  if (fromlc) { /* the sort's level coordinates */
    for (int l = 0; l < C->L; l++) ir_add(f, lb, ir_assign(f, k[l], ir_load(f, crd[l], ir_ref(f, t))));
    return SPC_OK;
  }
  req_ctx rq = {.C = C};
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_status s = lower_source(C, f, lb, crd, t, reqs, &rq, src, e);
  if (!s) s = spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
  for (int l = 0; l < C->L && !s; l++) ir_add(f, lb, ir_assign(f, k[l], ir_cast(f, IR_I64, outs[l])));
  return s;
}

/* dl = the first level whose coordinate differs from the component
 * before's (pk), L where none does; with check, a tuple not after the
 * one before sets ok = 0 and leaves the loop.  (Branches: selects instead
 * were slower, R-MAT 2^17 to DCSR 2.9 -> 3.5 ns a component.) */
static void chain_dl_from(conv *C, ir_func *f, ir_stmt *lb, const ir_var *k, const ir_var *pk,
                          ir_var dl, ir_var t, ir_var t0, bool check, ir_var ok) {
  ir_stmt *at = lb;
  ir_expr *t0x = t0 >= 0 ? ir_ref(f, t0) : ir_int(f, 0);
  ir_stmt *first = ir_add(f, at, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, t), t0x), NULL, NULL));
  ir_add(f, ir_then(first), ir_assign(f, dl, ir_int(f, 0)));
  at = ir_else(f, first);
  for (int l = 0; l < C->L; l++) {
    ir_stmt *iff = ir_add(f, at, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, k[l]), ir_ref(f, pk[l])), NULL, NULL));
    ir_add(f, ir_then(iff), ir_assign(f, dl, ir_int(f, l)));
    if (check) {
      ir_stmt *bad = ir_add(f, ir_then(iff), ir_if(f, ir_bin(f, IR_LT, ir_ref(f, k[l]), ir_ref(f, pk[l])), NULL, NULL));
      ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
      ir_add(f, ir_then(bad), ir_break(f));
    }
    at = ir_else(f, iff);
  }
  ir_add(f, at, ir_assign(f, dl, ir_int(f, C->L)));
  if (check) { /* equal to the one before: a repeat, the combining paths' */
    ir_add(f, at, ir_assign(f, ok, ir_int(f, 0)));
    ir_add(f, at, ir_break(f));
  }
}

/* chain_dl from component 0 (t0: the first component of a chunk, where
 * chain_dl_from's dl is 0). */
static void chain_dl(conv *C, ir_func *f, ir_stmt *lb, const ir_var *k, const ir_var *pk,
                     ir_var dl, ir_var t, bool check, ir_var ok) {
  chain_dl_from(C, f, lb, k, pk, dl, t, -1, check, ok);
}

/* Whether the component's prefix is new at level l: l >= dl, or every
 * component is (a level at or below one that is not unique). */
static ir_expr *chain_new(ir_func *f, ir_var dl, int l, bool nu) {
  return nu ? ir_bool(f, true) : ir_bin(f, IR_LE, ir_ref(f, dl), ir_int(f, l));
}

static spc_status build_chain(conv *C, bool fromlc, chainfn *F, ir_func **out, spc_error *e) {
  *out = NULL;
  if (!chain_applies(C)) return SPC_ERR_UNSUPPORTED;
  int L = C->L;
  bool pure[SPC_MAX_ORDER], spure[SPC_MAX_ORDER], nu[SPC_MAX_ORDER];
  spc_status s = SPC_OK;
  for (int l = 0; l < L && !s; l++) {
    s = lfn_pure(C, l, SPC_LF_YIELD, &pure[l], e);
    if (!s) s = lfn_pure(C, l, SPC_LF_SIZE, &spure[l], e);
    nu[l] = !C->lv[l]->unique || (l > 0 && nu[l - 1]);
  }
  if (s) return s;
  for (int l = 0; l < L - 1; l++) /* a parent level's size is assumed before its init */
    if (pure[l] && !spure[l]) return SPC_ERR_UNSUPPORTED;
  ir_func *f = ir_func_new("spc_conv_chain");
  if (!f) return SPC_NOMEM(e);
  *out = f;
  ir_stmt *body = ir_func_body(f);
  char name[96];
  ir_var crd[SPC_MAX_ORDER], Nin[SPC_MAX_ORDER], loin[SPC_MAX_ORDER];
  ir_ty vty = asm_value_ty(C->vt);
  if (fromlc) {
    for (int l = 0; l < L; l++) {
      snprintf(name, sizeof name, "lc%d", l);
      crd[l] = ir_param(f, name, IR_I64, true, IR_IN);
    }
  } else {
    sparams_crd(C, f, crd, -1);
  }
  ir_var vals = C->vt != SPC_PATTERN ? ir_param(f, "vals", vty, true, IR_IN) : -1;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  for (int l = 0; l < L; l++) {
    snprintf(name, sizeof name, "N%d_in", l);
    Nin[l] = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "lo%d_in", l);
    loin[l] = ir_param(f, name, IR_I64, false, IR_IN);
  }
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  F->p_ok = ir_nparams(f);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  lvbind b[SPC_MAX_ORDER];
  ir_var size[SPC_MAX_ORDER];
  for (int l = 0; l < L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    asm_bind_init(&b[l], ls, C->lv[l], C->index_ty, C->coord_ty);
    F->p_arr[l] = ir_nparams(f);
    F->narr[l] = ls->narrays;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      b[l].arr[k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty),
                             true, IR_OUT);
    }
    F->p_size[l] = ir_nparams(f);
    snprintf(name, sizeof name, "size%d", l);
    size[l] = ir_param(f, name, IR_I64, false, IR_OUT);
  }
  F->p_vout = -1;
  ir_var vout = -1;
  if (C->vt != SPC_PATTERN) {
    F->p_vout = ir_nparams(f);
    vout = ir_param(f, "vout", vty, true, IR_OUT);
  }
  for (int l = 0; l < L; l++) {
    bind_locals(f, &b[l], C);
    ir_add(f, body, ir_assign(f, b[l].N, ir_ref(f, Nin[l])));
    ir_add(f, body, ir_assign(f, b[l].lo, ir_ref(f, loin[l])));
    ir_add(f, body, ir_assign(f, size[l], ir_int(f, 0)));
  }
  ir_var k[SPC_MAX_ORDER], pk[SPC_MAX_ORDER], m[SPC_MAX_ORDER], P[SPC_MAX_ORDER],
      o[SPC_MAX_ORDER], np[SPC_MAX_ORDER], cnt[SPC_MAX_ORDER];
  for (int l = 0; l < L; l++) {
    k[l] = lang_fresh_local(f, "k", IR_I64, false);
    pk[l] = lang_fresh_local(f, "pk", IR_I64, false);
    m[l] = lang_fresh_local(f, "m", IR_I64, false);
    P[l] = lang_fresh_local(f, "P", IR_I64, false);
    o[l] = lang_fresh_local(f, "o", IR_I64, false);
    np[l] = lang_fresh_local(f, "npl", IR_I64, false);
    /* counts in the index type: none exceeds the positions (the halved
     * array of int32 counts halves pass B's fresh pages) */
    cnt[l] = C->lv[l]->lf->nqueries ? lang_fresh_local(f, "cnt", C->index_ty, true) : -1;
    ir_add(f, body, ir_assign(f, m[l], ir_int(f, 0)));
    ir_add(f, body, ir_assign(f, pk[l], ir_int(f, 0)));
  }
  ir_var dl = lang_fresh_local(f, "dl", IR_I64, false);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_add(f, body, ir_assign(f, ok, ir_int(f, 1)));
  /* pass A: the order, and the new components of each level */
  ir_stmt *la = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
  s = chain_remap(C, f, la, crd, t, true, k, fromlc, e);
  if (!s) chain_dl(C, f, la, k, pk, dl, t, true, ok);
  for (int l = 0; l < L && !s; l++) {
    ir_stmt *nw = ir_then(ir_add(f, la, ir_if(f, chain_new(f, dl, l, nu[l]), NULL, NULL)));
    ir_add(f, nw, ir_assign(f, m[l], ir_bin(f, IR_ADD, ir_ref(f, m[l]), ir_int(f, 1))));
  }
  for (int l = 0; l < L && !s; l++) ir_add(f, la, ir_assign(f, pk[l], ir_ref(f, k[l])));
  ir_stmt *go = ir_then(ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  /* each level's parents (np) as assumed: 1 under the root, a pure
   * level's size function of its own, else its new components */
  ir_add(f, go, ir_assign(f, np[0], ir_int(f, 1)));
  for (int l = 1; l < L && !s; l++) {
    if (pure[l - 1]) {
      ir_add(f, go, ir_assign(f, b[l - 1].np, ir_cast(f, C->index_ty, ir_ref(f, np[l - 1]))));
      s = asm_lower_fn(f, go, &b[l - 1], SPC_LF_SIZE, np[l], NULL, e);
    } else {
      ir_add(f, go, ir_assign(f, np[l], ir_ref(f, m[l - 1])));
    }
  }
  /* the count queries' arrays, one a level (every count of a level is the
   * same count of its new components), past the limit refused as
   * level_init refuses a size */
  bool anyq = false;
  for (int l = 0; l < L && !s; l++) {
    if (cnt[l] < 0) continue;
    anyq = true;
    char msg[200];
    snprintf(msg, sizeof msg,
             "level %d (%s) of format %s: its attribute queries would need %%lld "
             "entries: too large (limit %%lld)", l + 1, C->lv[l]->lf->name, C->fmt->name);
    ir_expr *fa[2] = {ir_ref(f, np[l]), ir_ref(f, limit)};
    ir_stmt *big = ir_add(f, go, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, np[l]), ir_ref(f, limit)), NULL, NULL));
    ir_add(f, ir_then(big), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, fa, 2));
    ir_add(f, go, ir_alloc(f, cnt[l], ir_ref(f, np[l]), true));
    s = squeries_l(C, l, &b[l], cnt[l], e);
  }
  /* pass B: each new component's parent, counted under it */
  if (!s && anyq) {
    for (int l = 0; l < L; l++) { /* np bound too: a pure yield_pos may read it */
      ir_add(f, go, ir_assign(f, o[l], ir_int(f, 0)));
      ir_add(f, go, ir_assign(f, P[l], ir_int(f, 0)));
      ir_add(f, go, ir_assign(f, b[l].np, ir_cast(f, C->index_ty, ir_ref(f, np[l]))));
    }
    ir_stmt *lb = ir_body(ir_add(f, go, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
    s = chain_remap(C, f, lb, crd, t, false, k, fromlc, e);
    if (!s) chain_dl(C, f, lb, k, pk, dl, t, false, ok);
    for (int l = 0; l < L && !s; l++) {
      ir_stmt *nw = nu[l] ? lb : ir_then(ir_add(f, lb, ir_if(f, chain_new(f, dl, l, nu[l]), NULL, NULL)));
      ir_expr *parent = l ? ir_ref(f, P[l - 1]) : ir_int(f, 0);
      if (cnt[l] >= 0)
        ir_add(f, nw, ir_store(f, cnt[l], parent,
                               ir_bin(f, IR_ADD, ir_load(f, cnt[l], l ? ir_ref(f, P[l - 1]) : ir_int(f, 0)),
                                      ir_int(f, 1))));
      if (l == L - 1) continue; /* the last level's positions are no one's parents */
      if (pure[l]) {
        ir_add(f, nw, ir_assign(f, b[l].p, ir_cast(f, C->index_ty, l ? ir_ref(f, P[l - 1]) : ir_int(f, 0))));
        ir_add(f, nw, ir_assign(f, b[l].c, ir_cast(f, C->coord_ty, ir_ref(f, k[l]))));
        s = asm_lower_fn(f, nw, &b[l], SPC_LF_YIELD, b[l].q, NULL, e);
        ir_add(f, nw, ir_assign(f, P[l], ir_cast(f, IR_I64, ir_ref(f, b[l].q))));
      } else {
        ir_add(f, nw, ir_assign(f, P[l], ir_ref(f, o[l])));
        ir_add(f, nw, ir_assign(f, o[l], ir_bin(f, IR_ADD, ir_ref(f, o[l]), ir_int(f, 1))));
      }
    }
    for (int l = 0; l < L && !s; l++) ir_add(f, lb, ir_assign(f, pk[l], ir_ref(f, k[l])));
  }
  /* init, top first; a size not the one assumed leaves it to the others */
  for (int l = 0; l < L && !s; l++) {
    ir_add(f, go, ir_assign(f, b[l].np, ir_cast(f, C->index_ty, ir_ref(f, np[l]))));
    s = level_init(f, go, &b[l], C, l, size[l], limit, -1, -1, l == L - 1 ? vout : -1, e);
    if (s || l == L - 1) continue;
    ir_expr *want = ir_ref(f, pure[l] ? np[l + 1] : m[l]);
    ir_stmt *bad = ir_add(f, go, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, size[l]), want), NULL, NULL));
    ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
  }
  /* pass C: placing, each stateful level's position checked */
  ir_stmt *go2 = ir_then(ir_add(f, go, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  for (int l = 0; l < L && !s; l++) {
    ir_add(f, go2, ir_assign(f, o[l], ir_int(f, 0)));
    ir_add(f, go2, ir_assign(f, P[l], ir_int(f, 0)));
  }
  if (!s) {
    ir_stmt *lb = ir_body(ir_add(f, go2, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
    s = chain_remap(C, f, lb, crd, t, false, k, fromlc, e);
    if (!s) chain_dl(C, f, lb, k, pk, dl, t, false, ok);
    for (int l = 0; l < L && !s; l++) {
      /* every component is new at the last level (pass A: no repeats) */
      ir_stmt *nw = l == L - 1 || nu[l] ? lb : ir_then(ir_add(f, lb, ir_if(f, chain_new(f, dl, l, nu[l]), NULL, NULL)));
      ir_add(f, nw, ir_assign(f, b[l].p, ir_cast(f, C->index_ty, l ? ir_ref(f, P[l - 1]) : ir_int(f, 0))));
      ir_add(f, nw, ir_assign(f, b[l].c, ir_cast(f, C->coord_ty, ir_ref(f, k[l]))));
      s = asm_lower_fn(f, nw, &b[l], SPC_LF_YIELD, b[l].q, NULL, e);
      if (!s && asm_lfn(&b[l], SPC_LF_INSERT)) s = asm_lower_fn(f, nw, &b[l], SPC_LF_INSERT, -1, NULL, e);
      ir_add(f, nw, ir_assign(f, P[l], ir_cast(f, IR_I64, ir_ref(f, b[l].q))));
      if (!pure[l]) {
        ir_stmt *bad = ir_add(f, nw, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, P[l]), ir_ref(f, o[l])), NULL, NULL));
        ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
        ir_add(f, ir_then(bad), ir_break(f));
        ir_add(f, nw, ir_assign(f, o[l], ir_bin(f, IR_ADD, ir_ref(f, o[l]), ir_int(f, 1))));
      }
    }
    if (!s && vout >= 0)
      ir_add(f, lb, ir_store(f, vout, ir_ref(f, P[L - 1]), ir_load(f, vals, ir_ref(f, t))));
    for (int l = 0; l < L && !s; l++) ir_add(f, lb, ir_assign(f, pk[l], ir_ref(f, k[l])));
  }
  ir_stmt *fin = ir_then(ir_add(f, go2, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  for (int l = 0; l < L && !s; l++)
    if (asm_lfn(&b[l], SPC_LF_FINALIZE)) s = asm_lower_fn(f, fin, &b[l], SPC_LF_FINALIZE, -1, NULL, e);
  for (int l = 0; l < L && !s; l++)
    if (cnt[l] >= 0) ir_add(f, body, ir_free(f, cnt[l]));
  if (!s) s = ir_verify(f, e);
  return s;
}

/* The chain routine's parameter numbers (build_chain's order). */
static void chain_layout(const conv *C, bool fromlc, chainfn *F) {
  int p = (fromlc ? C->L : C->order) + (C->vt != SPC_PATTERN) + 1 + 2 * C->L + 1;
  F->p_ok = p++;
  for (int l = 0; l < C->L; l++) {
    F->p_arr[l] = p;
    F->narr[l] = C->lv[l]->lf->narrays;
    p += F->narr[l];
    F->p_size[l] = p++;
  }
  F->p_vout = C->vt != SPC_PATTERN ? p : -1;
}

/* The chain routine (fromlc: over the sort's level coordinates C->lc and
 * values C->vals; else over the COO C->comb) into *out when it placed
 * everything (*done); nothing changed otherwise. */
static spc_status chain_call(conv *C, bool fromlc, conv_tensor **out, bool *done, spc_error *e) {
  spc_error e2;
  spc_error_clear(&e2);
  rcr rc;
  spc_status s = rc_get(C, NULL, RC_CHAIN, fromlc, &rc, &e2);
  if (s) {
    ir_func_free(&rc.v.f);
    if (s == SPC_ERR_UNSUPPORTED) return SPC_OK;
    if (e) *e = e2;
    return s;
  }
  chainfn F;
  chain_layout(C, fromlc, &F);
  ir_arg *args = spc_calloc((size_t)ir_nparams(rc.v.f), sizeof *args);
  if (!args) s = SPC_NOMEM(e);
  int k = 0;
  for (; !s && k < (fromlc ? C->L : C->order); k++)
    args[k] = (ir_arg){.data = fromlc ? (void *)C->lc[k]
                                      : spc_level_array_c(&C->comb->lv[k], "crd")->data,
                       .len = C->n};
  if (!s && C->vt != SPC_PATTERN)
    args[k++] = (ir_arg){.data = fromlc ? C->vals : C->comb->val, .len = C->n};
  if (!s) {
    args[k++].s.i64 = C->n;
    for (int l = 0; l < C->L; l++) {
      args[k++].s.i64 = C->N[l];
      args[k++].s.i64 = C->lo[l];
    }
    args[k++].s.i64 = C->limit;
    s = rc_run(C, &rc, args, e);
  }
  conv_tensor *ct = NULL;
  if (!s && args[F.p_ok].s.i64 == 1) {
    if (!(ct = new_result(C, C->comb->dims))) {
      s = SPC_NOMEM(e);
    } else {
      spc_tensor *t = &ct->t;
      for (int l = 0; l < C->L; l++) adopt_arrays(C, ct, l, &args[F.p_arr[l]], F.narr[l]);
      if (F.p_vout >= 0) {
        t->val = args[F.p_vout].data;
        t->nval = args[F.p_vout].len;
        t->val_owned = true;
        args[F.p_vout].data = NULL;
      } else {
        t->nval = args[F.p_size[C->L - 1]].s.i64;
      }
      *out = ct;
      *done = true;
    }
  }
  for (int l = 0; args && l < C->L; l++)
    for (int a = 0; a < F.narr[l]; a++) spc_free(args[F.p_arr[l] + a].data);
  if (args && F.p_vout >= 0) spc_free(args[F.p_vout].data);
  spc_free(args);
  ir_func_free(&rc.v.f);
  return s;
}

/* A COO in the target's order placed by the chain routine (*done); any
 * other (out of order, repeats, a level that does not place as assumed)
 * left to the other paths, nothing changed. */
static spc_status run_chain(conv *C, conv_tensor **out, bool *done, spc_error *e) {
  *done = false;
  if (C->nosort || C->n < 1 || (C->o && C->o->plan == SPC_PLAN_SORT)) return SPC_OK;
  if (!dim_bounds(C)) return SPC_OK; /* the sort path says why */
  C->vt = C->comb->vt;
  choose_types(C);
  if (!chain_applies(C)) return SPC_OK;
  int nt = 1;
  spc_status s = run_pchain(C, false, out, done, &nt, e);
  if (!s && !*done) s = chain_call(C, false, out, done, e);
  if (!s && *done && C->o && C->o->info && nt > 1)
    snprintf(C->o->info->plan, sizeof C->o->info->plan,
             "in order (each level placed as the components come, in chunks: no sort; %d threads)", nt);
  else if (!s && *done && C->o && C->o->info)
    snprintf(C->o->info->plan, sizeof C->o->info->plan,
             "in order (each level placed as the components come, one routine: no sort)");
  return s;
}

/* The sort path's components (C->lc, C->vals: sorted and combined) placed
 * by the chain routine instead of a routine a level (run_levels):
 * *ct replaced by the result when it was (*done).  With two levels always
 * (shuffled R-MAT 2^17 to DCSR 21.4-22.1 -> 19.3-20.0 ns a component in a
 * loop, 54 -> 48 ms in the CLI, 13% fewer page faults).  With three or
 * more only in chunks on threads (run_pchain): the routine holds every
 * level's coordinates to the end, where run_levels frees each level's as
 * it goes, so on one thread it gains nothing (order-3 tensor of 2 M, CSF
 * (i, j, k) to (k, i, j): 33-34 against 35-36 ns a component; peak RSS of
 * the CLI 159 -> 172 MB), while on two the level routines, serial, are the
 * largest part left after the sort. */
static spc_status run_chain_lc(conv *C, conv_tensor **ct, bool *done, int *threads, spc_error *e) {
  *done = false;
  *threads = 1;
  if (C->n < 1 || C->L < 2 || (C->L > 2 && asm_threads(C->n) < 2) || !chain_applies(C) ||
      (C->o && C->o->plan == SPC_PLAN_SORT))
    return SPC_OK;
  for (int l = 0; l < C->L; l++)
    if (!C->lc[l]) return SPC_OK;
  conv_tensor *x = NULL;
  /* in chunks on threads where that goes through (run_pchain), else one
   * routine */
  spc_status s = run_pchain(C, true, &x, done, threads, e);
  if (!s && !*done && C->L == 2) s = chain_call(C, true, &x, done, e);
  if (!s && *done) {
    spc_tensor *t = &(*ct)->t;
    spc_tensor_free(&t);
    *ct = x;
  }
  return s;
}

/* ---- the counting path ------------------------------------------------------
 * A two-level target whose top level places a coordinate by itself (dense:
 * no arrays, no queries, yield_pos only) and whose child level keeps only
 * per-parent state (no workspace variables; its queries per-parent counts,
 * as compressed's pos) needs no sort when, in the source's own order, the
 * child coordinates under each parent come strictly increasing -- CSR from
 * a row-sorted COO, CSC from a CSR, any (dense, compressed) format from a
 * source iterated in an order concordant with it.  One IR routine then
 * does it all in two passes over the source (the unsequenced edge
 * insertion of the child level): pass 1 remaps each component, counts it
 * under its parent and checks the order; pass 2 remaps again and places
 * it (yield_pos, insert_coord, the value).  Pass 1 stops at the first
 * component out of order or repeated (ok = 0) and the planner falls back
 * to the sort.  The result equals the sort path's bit for bit: the sort is
 * stable, so a parent's children come in the source's order there too.
 *
 * spc_conv_count(crd0.., [vals], n, N0, lo0, N1, lo1, limit,
 *                ok, arrays of level 1.., size, [vout]) */
/* Level binding for the counting routines: names, the two levels' locals
 * and extents from parameters N0 lo0 N1 lo1 (appended to f). */
static void sbind(conv *C, ir_func *f, ir_stmt *body, lvbind *b0, lvbind *b1, ir_var *Nlo) {
  asm_bind_init(b0, C->lv[0]->lf, C->lv[0], C->index_ty, C->coord_ty);
  asm_bind_init(b1, C->lv[1]->lf, C->lv[1], C->index_ty, C->coord_ty);
  lvbind *bs[2] = {b0, b1};
  for (int l = 0; l < 2; l++) {
    lvbind *b = bs[l];
    bind_locals(f, b, C);
    ir_add(f, body, ir_assign(f, b->N, ir_ref(f, Nlo[2 * l])));
    ir_add(f, body, ir_assign(f, b->lo, ir_ref(f, Nlo[2 * l + 1])));
  }
  ir_add(f, body, ir_assign(f, b0->np, ir_cast(f, C->index_ty, ir_int(f, 1))));
}

static void sparams_Nlo(ir_func *f, ir_var *Nlo) {
  char name[32];
  for (int l = 0; l < 2; l++) {
    snprintf(name, sizeof name, "N%d_in", l);
    Nlo[2 * l] = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "lo%d_in", l);
    Nlo[2 * l + 1] = ir_param(f, name, IR_I64, false, IR_IN);
  }
}

static void sparams_crd(conv *C, ir_func *f, ir_var *crd, int gd) {
  char name[32];
  for (int k = 0; k < C->order; k++) {
    const spc_array *a = spc_level_array_c(&C->comb->lv[k], "crd");
    snprintf(name, sizeof name, "crd%d", k);
    crd[k] = ir_param(f, name, a->type == SPC_IDX32 ? IR_I32 : IR_I64, true, k == gd ? IR_GIVE : IR_IN);
  }
}

/* The child level's queries bound to cnt (the counting path needs them
 * all to be counts: SPC_ERR_UNSUPPORTED otherwise). */
static spc_status squeries(conv *C, lvbind *b1, ir_var cnt, spc_error *e) {
  return squeries_l(C, 1, b1, cnt, e);
}

/* The same for level l. */
static spc_status squeries_l(conv *C, int l, lvbind *b1, ir_var cnt, spc_error *e) {
  const spc_level_spec *l1 = C->lv[l]->lf;
  spc_status s = SPC_OK;
  for (int k = 0; k < l1->nqueries && !s; k++) {
    spc_query *q = NULL;
    lang_src src = l1->queries[k].at;
    char *txt = spc_strdup(l1->queries[k].text);
    if (!txt) return SPC_NOMEM(e);
    char *star = strstr(txt, "[*]");
    if (star) star[1] = ' ';
    src.text = txt;
    s = spc_query_parse(&src, &q, e);
    spc_free(txt);
    for (int a = 0; !s && a < q->nagg; a++) {
      if (q->aggs[a].kind != SPC_AGG_COUNT || b1->nq >= SPC_SPEC_MAX * 4) {
        s = SPC_ERR_UNSUPPORTED;
        break;
      }
      snprintf(b1->qbuf[b1->nq], sizeof b1->qbuf[0], "%s", q->aggs[a].name);
      b1->qnames[b1->nq] = b1->qbuf[b1->nq];
      b1->qvars[b1->nq++] = cnt;
    }
    spc_query_free(&q);
  }
  return s;
}


/* Whether every aggregate of the query text q is a count, the only kind
 * the counting plan's routines compute (squeries_l): as many "count(" as
 * "(" -- a scan, not a parse, on every conversion's path.  `select [*] ->
 * count(c) as nnz, min(c) as cmin` is not: the counting plan then gave
 * way too late, with SPC_ERR_UNSUPPORTED and no message ("ok"). */
static bool counts_only(const char *q) {
  int open = 0, counts = 0;
  for (const char *p = q; *p; p++) open += *p == '(';
  for (const char *p = q; (p = strstr(p, "count(")); p++) counts++;
  return open == counts;
}

static bool count_applies(const conv *C) {
  if (C->nosort || C->L != 2 || C->r->ncounters || C->fmt->fill_zero) return false;
  lvbind b0, b1;
  const spc_level_spec *l0 = C->lv[0]->lf, *l1 = C->lv[1]->lf;
  asm_bind_init(&b0, l0, C->lv[0], C->index_ty, C->coord_ty);
  asm_bind_init(&b1, l1, C->lv[1], C->index_ty, C->coord_ty);
  if (l0->narrays || l0->nwork || l0->nqueries || !C->lv[0]->unique ||
      !asm_lfn(&b0, SPC_LF_YIELD) || !asm_lfn(&b0, SPC_LF_SIZE) ||
      asm_lfn(&b0, SPC_LF_INIT) || asm_lfn(&b0, SPC_LF_INSERT) ||
      asm_lfn(&b0, SPC_LF_FINALIZE))
    return false;
  if (l1->nwork || !C->lv[1]->unique || !(l1->props & SPC_LP_ORDERED) ||
      !asm_lfn(&b1, SPC_LF_YIELD) || !asm_lfn(&b1, SPC_LF_SIZE) ||
      l1->narrays > SPC_LEVEL_MAX_ARRAYS)
    return false;
  for (int k = 0; k < l1->narrays; k++) {
    ir_ty ty = asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty);
    if (ty != IR_I32 && ty != IR_I64) return false;
  }
  for (int k = 0; k < l1->nqueries; k++) {
    const char *txt = l1->queries[k].text;
    if (!strstr(txt, "[*]") || !strstr(txt, "count(") || !counts_only(txt)) return false;
  }
  return true;
}

/* The code of one component in pass `pass` of the counting routine: its
 * source indices x (and value val) remapped, its top-level position, then
 * counted and checked (passes 0, 1) or placed (pass 2).  Shared by the
 * loop over a COO's components and the fused routine's source nest. */
typedef struct cbody {
  conv *C;
  int pass;
  lvbind *b0, *b1;
  ir_var ok, g, k0, k1, pk0, pk1, sa, sb, cnt, last, vout;
  ir_var stop; /* fused: set before every break (-1: a plain loop) */
  ir_var t, from; /* pcount: count only components t >= from (-1: all) */
  ir_var brk;     /* build_count pass 3: the first component out of (c0, c1) order */
  ir_var seen, f0, f1; /* fcount: the first component's keys (-1: none) */
  ir_var size;         /* fplace: every position checked below it (0: not) */
  bool known;          /* fcount: the order is proved (fcount_known): no checks */
  ir_var rg;           /* build_count pass 3: runs' ends stored (-1: counted) */
  bool dups;           /* build_count: repeats combined (count_dups), not refused */
  ir_var p1, lastq;    /* ... pass 1 met a repeat; each parent's last position */
  /* build_count pass 3 placing too (place_in_pass0): each component's
   * insert_coord at position t into sc (the arrays it writes; -1 the
   * others), its value into vout[t] */
  bool place3;
  const ir_var *sc;
  int gk;     /* sc[gk] is a source array handed over (give_plan): not stored to */
  bool gval;  /* the values handed over: vout not stored to */
  /* build_count pass 0 (sbonly): once (c0, c1) has failed and (c1, c0)
   * holds, it leaves at tl + 1 (brk2) for pass 5, which checks only (c1,
   * c0), as one compare of the key k1 * 2^32 + k0 against the one before
   * (pkey) -- where both extents are under 2^31 (narrow).  Three compares
   * and their branches a component were two thirds of counting a file
   * sorted by columns. */
  bool sbonly;
  ir_var tl, brk2, narrow, key, pkey;
  /* pass 3's (c0, c1) order as one compare of the key (k0 << ks) | k1
   * against the one before (pk3, 0 at first), where it fits 63 bits
   * (key_shift); else pass 3 runs over no component and the checks
   * after it take them all.  Two compares and their branches a
   * component, with the two branchy loops over the rows made branch-free
   * (ends_to_counts, placed_runs), were 3.3 -> 2.3 ms of sorted R-MAT
   * 2^17 COO to CSR on one thread (the stencil 2.3 -> 2.4: full rows) */
  ir_var ks, k3, pk3;
} cbody;

/* X->ks: the bits of N1 (k1 in [1, N1] below 2^ks) and kfit = 1 where
 * k0 in [1, N0] shifted by ks stays below 2^63: pass 3 may compare keys
 * (its k3, pk3 made here, pk3 = 0). */
static void key_shift(ir_func *f, ir_stmt *into, ir_var N0, ir_var N1, ir_var kfit, cbody *X) {
  X->ks = lang_fresh_local(f, "ks", IR_I64, false);
  X->k3 = lang_fresh_local(f, "key3", IR_I64, false);
  X->pk3 = lang_fresh_local(f, "pkey3", IR_I64, false);
  ir_add(f, into, ir_assign(f, X->ks, ir_int(f, 1)));
  ir_expr *more = ir_bin(f, IR_LAND, ir_bin(f, IR_LT, ir_ref(f, X->ks), ir_int(f, 62)),
                         ir_bin(f, IR_NE, ir_bin(f, IR_SHR, ir_cast(f, IR_I64, ir_ref(f, N1)), ir_ref(f, X->ks)),
                                ir_int(f, 0)));
  ir_stmt *w = ir_add(f, into, ir_while(f, more, NULL));
  ir_add(f, ir_body(w), ir_assign(f, X->ks, ir_bin(f, IR_ADD, ir_ref(f, X->ks), ir_int(f, 1))));
  ir_expr *fit1 = ir_bin(f, IR_EQ, ir_bin(f, IR_SHR, ir_cast(f, IR_I64, ir_ref(f, N1)), ir_ref(f, X->ks)), ir_int(f, 0));
  ir_expr *fit0 = ir_bin(f, IR_EQ, ir_bin(f, IR_SHR, ir_cast(f, IR_I64, ir_ref(f, N0)),
                                          ir_bin(f, IR_SUB, ir_int(f, 63), ir_ref(f, X->ks))),
                         ir_int(f, 0));
  ir_add(f, into, ir_assign(f, kfit, ir_cast(f, IR_I64, ir_bin(f, IR_LAND, fit1, fit0))));
  ir_add(f, into, ir_assign(f, X->pk3, ir_int(f, 0)));
}

static void cbreak(const cbody *X, ir_func *f, ir_stmt *at) {
  if (X->stop >= 0) ir_add(f, at, ir_assign(f, X->stop, ir_int(f, 1)));
  ir_add(f, at, ir_break(f));
}

/* The order-check locals of passes 0 and 1 (g, k0, k1, the previous
 * keys, the two order flags), set up at the top of body: both orders
 * hold and no key was seen yet. */
static void cbody_locals(ir_func *f, ir_stmt *body, cbody *X) {
  X->g = lang_fresh_local(f, "g", IR_I64, false);
  X->k0 = lang_fresh_local(f, "k0", IR_I64, false);
  X->k1 = lang_fresh_local(f, "k1", IR_I64, false);
  X->pk0 = lang_fresh_local(f, "pk0", IR_I64, false);
  X->pk1 = lang_fresh_local(f, "pk1", IR_I64, false);
  X->sa = lang_fresh_local(f, "sorted01", IR_I64, false);
  X->sb = lang_fresh_local(f, "sorted10", IR_I64, false);
  ir_add(f, body, ir_assign(f, X->sa, ir_int(f, 1)));
  ir_add(f, body, ir_assign(f, X->sb, ir_int(f, 1)));
  ir_add(f, body, ir_assign(f, X->pk0, ir_int(f, -1)));
  ir_add(f, body, ir_assign(f, X->pk1, ir_int(f, -1)));
}

/* st->kids[k] and what it holds: each store into arr made an empty block. */
static void drop_stores(ir_func *f, ir_stmt *st, int k, ir_var arr) {
  ir_stmt *x = st->kids[k];
  if (!x) return;
  if (x->kind == IR_S_STORE && x->var == arr) {
    st->kids[k] = ir_block(f);
    return;
  }
  for (int c = 0; c < x->nkids; c++) drop_stores(f, x, c, arr);
}

static spc_status count_leaf(void *ctx, ir_func *f, ir_stmt *lb, ir_expr *const *x, ir_expr *val,
                             spc_error *e) {
  const cbody *X = ctx;
  conv *C = X->C;
  lvbind *b0 = X->b0, *b1 = X->b1;
  int pass = X->pass;
  req_ctx rq = {.C = C};
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_status s = lower_source_x(C, f, lb, x, pass != 2 && pass != 4, &rq, src, e);
  if (!s) s = spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
  if (s) return s;
  ir_add(f, lb, ir_assign(f, b0->p, ir_cast(f, C->index_ty, ir_int(f, 0))));
  ir_add(f, lb, ir_assign(f, b0->c, ir_cast(f, C->coord_ty, outs[0])));
  if ((s = asm_lower_fn(f, lb, b0, SPC_LF_YIELD, b0->q, NULL, e))) return s;
  ir_var g = X->g, k0 = X->k0, k1 = X->k1, pk0 = X->pk0, pk1 = X->pk1, sa = X->sa, sb = X->sb;
  ir_var ok = X->ok, cnt = X->cnt, last = X->last;
  if (pass != 2) ir_add(f, lb, ir_assign(f, g, ir_cast(f, IR_I64, ir_ref(f, b0->q))));
  if (pass != 2 && !(pass == 0 && X->known)) { /* known pass 0: no order kept */
    /* past lo, +1: 0 is "none yet" */
    ir_add(f, lb, ir_assign(f, k1, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, outs[1]),
                                                            ir_ref(f, b1->lo)), ir_int(f, 1))));
  }
  if (pass == 5) { /* build_count's pass 0 past brk2: (c1, c0) only */
    ir_add(f, lb, ir_assign(f, k0, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, ir_ref(f, b0->c)),
                                                            ir_ref(f, b0->lo)), ir_int(f, 1))));
    ir_add(f, lb, ir_assign(f, X->key, ir_bin(f, IR_BOR, ir_bin(f, IR_SHL, ir_ref(f, k1), ir_int(f, 32)),
                                              ir_ref(f, k0))));
    /* not above the key before: out of (c1, c0) order, or a repeat --
     * both flags down, pass 1 counts again (and finds which) */
    ir_stmt *down = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_LE, ir_ref(f, X->key), ir_ref(f, X->pkey)), NULL, NULL)));
    ir_add(f, down, ir_assign(f, sb, ir_int(f, 0)));
    cbreak(X, f, down);
    ir_add(f, lb, ir_assign(f, X->pkey, ir_ref(f, X->key)));
  } else if (pass == 3 || pass == 4) { /* build_count's pass 0 in two loops */
    ir_add(f, lb, ir_assign(f, k0, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, ir_ref(f, b0->c)),
                                                            ir_ref(f, b0->lo)), ir_int(f, 1))));
    if (pass == 3) /* one key (key_shift) */
      ir_add(f, lb, ir_assign(f, X->k3, ir_bin(f, IR_BOR, ir_bin(f, IR_SHL, ir_ref(f, k0), ir_ref(f, X->ks)),
                                               ir_ref(f, k1))));
    ir_expr *up = pass == 3
      ? ir_bin(f, IR_GT, ir_ref(f, X->k3), ir_ref(f, X->pk3))
      : ir_bin(f, IR_LOR, ir_bin(f, IR_GT, ir_ref(f, k1), ir_ref(f, pk1)),
               ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, k1), ir_ref(f, pk1)),
                      ir_bin(f, IR_GT, ir_ref(f, k0), ir_ref(f, pk0))));
    ir_stmt *i0 = ir_add(f, lb, ir_if(f, ir_un(f, IR_NOT, up), NULL, NULL));
    if (pass == 3) { /* the first component not increasing in (c0, c1) */
      ir_add(f, ir_then(i0), ir_assign(f, X->brk, ir_ref(f, X->t)));
      cbreak(X, f, ir_then(i0));
    } else {
      ir_add(f, ir_then(i0), ir_assign(f, sb, ir_int(f, 0)));
    }
    if (pass == 3) { /* pk0, pk1 not kept: a pass after it starts them again */
      ir_add(f, lb, ir_assign(f, X->pk3, ir_ref(f, X->k3)));
    } else {
      ir_add(f, lb, ir_assign(f, pk0, ir_ref(f, k0)));
      ir_add(f, lb, ir_assign(f, pk1, ir_ref(f, k1)));
      return SPC_OK; /* pass 4: counted by pass 3 already */
    }
  } else if (pass == 0 && X->known) {
    /* in order by the levels' properties: counted, nothing checked */
  } else if (pass == 0) {
    ir_add(f, lb, ir_assign(f, k0, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, ir_ref(f, b0->c)),
                                                            ir_ref(f, b0->lo)), ir_int(f, 1))));
    if (X->seen >= 0) {
      ir_stmt *fst = ir_add(f, lb, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X->seen), ir_int(f, 0)), NULL, NULL));
      ir_add(f, ir_then(fst), ir_assign(f, X->f0, ir_ref(f, k0)));
      ir_add(f, ir_then(fst), ir_assign(f, X->f1, ir_ref(f, k1)));
      ir_add(f, ir_then(fst), ir_assign(f, X->seen, ir_int(f, 1)));
    }
    ir_expr *up01 = ir_bin(f, IR_LOR, ir_bin(f, IR_GT, ir_ref(f, k0), ir_ref(f, pk0)),
                           ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, k0), ir_ref(f, pk0)),
                                  ir_bin(f, IR_GT, ir_ref(f, k1), ir_ref(f, pk1))));
    ir_expr *up10 = ir_bin(f, IR_LOR, ir_bin(f, IR_GT, ir_ref(f, k1), ir_ref(f, pk1)),
                           ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, k1), ir_ref(f, pk1)),
                                  ir_bin(f, IR_GT, ir_ref(f, k0), ir_ref(f, pk0))));
    ir_expr *same = ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, k0), ir_ref(f, pk0)),
                           ir_bin(f, IR_EQ, ir_ref(f, k1), ir_ref(f, pk1)));
    ir_stmt *i0 = ir_add(f, lb, ir_if(f, same, NULL, NULL)); /* a duplicate */
    if (X->dups) { /* neither order is strict: pass 1 counts and combines */
      ir_add(f, ir_then(i0), ir_assign(f, sa, ir_int(f, 0)));
      ir_add(f, ir_then(i0), ir_assign(f, sb, ir_int(f, 0)));
    } else {
      ir_add(f, ir_then(i0), ir_assign(f, ok, ir_int(f, -1)));
    }
    cbreak(X, f, ir_then(i0));
    ir_stmt *i1 = ir_add(f, lb, ir_if(f, ir_un(f, IR_NOT, up01), NULL, NULL));
    ir_add(f, ir_then(i1), ir_assign(f, sa, ir_int(f, 0)));
    ir_stmt *i2 = ir_add(f, lb, ir_if(f, ir_un(f, IR_NOT, up10), NULL, NULL));
    ir_add(f, ir_then(i2), ir_assign(f, sb, ir_int(f, 0)));
    ir_stmt *both = ir_add(f, lb, ir_if(f, ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, sa), ir_int(f, 0)),
                                                   ir_bin(f, IR_EQ, ir_ref(f, sb), ir_int(f, 0))),
                                        NULL, NULL));
    cbreak(X, f, ir_then(both));
    ir_add(f, lb, ir_assign(f, pk0, ir_ref(f, k0)));
    ir_add(f, lb, ir_assign(f, pk1, ir_ref(f, k1)));
  } else if (pass == 1 && X->dups) {
    /* a repeat of the parent's last child is counted once; below it, out
     * of order */
    ir_stmt *bad = ir_add(f, lb, ir_if(f, ir_bin(f, IR_GT, ir_load(f, last, ir_ref(f, g)),
                                                  ir_ref(f, k1)), NULL, NULL));
    ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
    cbreak(X, f, ir_then(bad));
    ir_stmt *nwi = ir_add(f, lb, ir_if(f, ir_bin(f, IR_LT, ir_load(f, last, ir_ref(f, g)), ir_ref(f, k1)), NULL, NULL));
    ir_stmt *nw = ir_then(nwi);
    ir_add(f, nw, ir_store(f, last, ir_ref(f, g), ir_ref(f, k1)));
    ir_add(f, nw, ir_store(f, cnt, ir_ref(f, g), ir_bin(f, IR_ADD, ir_load(f, cnt, ir_ref(f, g)), ir_int(f, 1))));
    ir_add(f, ir_else(f, nwi), ir_assign(f, X->p1, ir_int(f, 1))); /* a repeat: pass 2 combines */
    return SPC_OK;
  } else if (pass == 1) {
    ir_stmt *bad = ir_add(f, lb, ir_if(f, ir_bin(f, IR_GE, ir_load(f, last, ir_ref(f, g)),
                                                  ir_ref(f, k1)), NULL, NULL));
    /* 0: out of order; -1: a duplicate */
    ir_add(f, ir_then(bad), ir_assign(f, ok, ir_select(f, ir_bin(f, IR_EQ, ir_load(f, last, ir_ref(f, g)),
                                                                 ir_ref(f, k1)),
                                                       ir_int(f, -1), ir_int(f, 0))));
    cbreak(X, f, ir_then(bad));
    ir_add(f, lb, ir_store(f, last, ir_ref(f, g), ir_ref(f, k1)));
  }
  if (pass == 3 && X->rg >= 0) {
    /* (c0, c1) increasing and the top level ORDERED: a parent's
     * components come together, in increasing g, so each stores only
     * where its parent's run ends (t + 1), made counts after the loop --
     * not cnt[g] += 1, a chain of stores and loads of one cell (a third
     * of COO to CSR's time on a sorted file) */
    ir_add(f, lb, ir_store(f, cnt, ir_ref(f, g), ir_bin(f, IR_ADD, ir_ref(f, X->t), ir_int(f, 1))));
    if (!X->place3) return SPC_OK;
    /* and placed where it goes if the pass ends with brk == n: position t */
    ir_var keep[SPC_SPEC_MAX];
    int na = C->lv[1]->lf->narrays;
    for (int k = 0; k < na; k++) {
      keep[k] = b1->arr[k];
      if (X->sc[k] >= 0) b1->arr[k] = X->sc[k];
    }
    ir_add(f, lb, ir_assign(f, b1->p, ir_ref(f, b0->q)));
    ir_add(f, lb, ir_assign(f, b1->c, ir_cast(f, C->coord_ty, outs[1])));
    ir_add(f, lb, ir_assign(f, b1->q, ir_cast(f, C->index_ty, ir_ref(f, X->t))));
    int kl = lb->nkids;
    s = asm_lower_fn(f, lb, b1, SPC_LF_INSERT, -1, NULL, e);
    for (int k = kl; k < lb->nkids && X->gk >= 0; k++) /* it holds them already */
      drop_stores(f, lb, k, X->sc[X->gk]);
    for (int k = 0; k < na; k++) b1->arr[k] = keep[k];
    if (!s && X->vout >= 0 && !X->gval) ir_add(f, lb, ir_store(f, X->vout, ir_ref(f, X->t), val));
    return s;
  }
  if (pass != 2) {
    ir_stmt *at = lb;
    if (X->from >= 0)
      at = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_GE, ir_ref(f, X->t), ir_ref(f, X->from)), NULL, NULL)));
    ir_add(f, at, ir_store(f, cnt, ir_ref(f, g),
                           ir_bin(f, IR_ADD, ir_load(f, cnt, ir_ref(f, g)), ir_int(f, 1))));
    if (pass == 0 && X->sbonly) { /* (c0, c1) down, (c1, c0) up: the rest in pass 5 */
      ir_expr *go = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_ref(f, X->narrow), ir_int(f, 0)),
                           ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, sa), ir_int(f, 0)),
                                  ir_bin(f, IR_NE, ir_ref(f, sb), ir_int(f, 0))));
      ir_stmt *th = ir_then(ir_add(f, lb, ir_if(f, go, NULL, NULL)));
      ir_add(f, th, ir_assign(f, X->brk2, ir_bin(f, IR_ADD, ir_ref(f, X->tl), ir_int(f, 1))));
      ir_add(f, th, ir_assign(f, X->pkey, ir_bin(f, IR_BOR, ir_bin(f, IR_SHL, ir_ref(f, k1), ir_int(f, 32)),
                                                 ir_ref(f, k0))));
      cbreak(X, f, th);
    }
    return SPC_OK;
  }
  if (X->dups) {
    /* pass 2 after pass 1: a repeat of the parent's last child combines
     * its value into that child's (in the source's order, as the sort
     * path does); the rest is placed */
    ir_var v = -1;
    if (val) {
      v = lang_fresh_local(f, "dv", asm_value_ty(C->vt), false);
      ir_add(f, lb, ir_assign(f, v, val));
      val = ir_ref(f, v);
    }
    ir_var isrep = lang_fresh_local(f, "isrep", IR_I64, false);
    ir_add(f, lb, ir_assign(f, isrep, ir_int(f, 0)));
    ir_stmt *chk = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X->p1), ir_int(f, 1)), NULL, NULL)));
    ir_add(f, chk, ir_assign(f, g, ir_cast(f, IR_I64, ir_ref(f, b0->q))));
    ir_add(f, chk, ir_assign(f, k1, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, outs[1]),
                                                             ir_ref(f, b1->lo)), ir_int(f, 1))));
    ir_add(f, chk, ir_assign(f, isrep, ir_cast(f, IR_I64, ir_bin(f, IR_EQ, ir_load(f, last, ir_ref(f, g)), ir_ref(f, k1)))));
    ir_stmt *ifr = ir_add(f, lb, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, isrep), ir_int(f, 1)), NULL, NULL));
    if (v >= 0 && X->vout >= 0) {
      ir_stmt *th = ir_then(ifr);
#define AT() ir_load(f, X->lastq, ir_ref(f, g))
      switch (C->dup) {
      case SPC_DUP_SUM:
        ir_add(f, th, ir_store(f, X->vout, AT(), ir_bin(f, IR_ADD, ir_load(f, X->vout, AT()), ir_ref(f, v))));
        break;
      case SPC_DUP_LAST: ir_add(f, th, ir_store(f, X->vout, AT(), ir_ref(f, v))); break;
      case SPC_DUP_MIN:
      case SPC_DUP_MAX: {
        ir_expr *better = ir_bin(f, C->dup == SPC_DUP_MIN ? IR_LT : IR_GT, ir_ref(f, v), ir_load(f, X->vout, AT()));
        ir_stmt *b = ir_then(ir_add(f, th, ir_if(f, better, NULL, NULL)));
        ir_add(f, b, ir_store(f, X->vout, AT(), ir_ref(f, v)));
        break;
      }
      default: /* first: kept */
        break;
      }
#undef AT
    }
    lb = ir_else(f, ifr);
    ir_stmt *p1 = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X->p1), ir_int(f, 1)), NULL, NULL)));
    ir_add(f, p1, ir_store(f, last, ir_ref(f, g), ir_ref(f, k1)));
  }
  ir_add(f, lb, ir_assign(f, b1->p, ir_ref(f, b0->q)));
  ir_add(f, lb, ir_assign(f, b1->c, ir_cast(f, C->coord_ty, outs[1])));
  s = asm_lower_fn(f, lb, b1, SPC_LF_YIELD, b1->q, NULL, e);
  if (!s && X->dups) {
    ir_stmt *p1 = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X->p1), ir_int(f, 1)), NULL, NULL)));
    ir_add(f, p1, ir_store(f, X->lastq, ir_ref(f, g), ir_cast(f, IR_I64, ir_ref(f, b1->q))));
  }
  if (!s && X->size > 0) { /* a position past the counted ones: refused */
    ir_expr *oob = pos_outside(f, b1->q, X->size);
    ir_stmt *iff = ir_add(f, lb, ir_if(f, oob, NULL, NULL));
    ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_INTERNAL, "a position past the counted ones", NULL, 0));
  }
  if (!s && asm_lfn(b1, SPC_LF_INSERT)) s = asm_lower_fn(f, lb, b1, SPC_LF_INSERT, -1, NULL, e);
  if (!s && X->vout >= 0) ir_add(f, lb, ir_store(f, X->vout, ir_ref(f, b1->q), val));
  return s;
}

/* Whether the counting routine combines repeated components itself (pass
 * 1 counts a parent's repeated child once, pass 2 combines its value
 * into the first's position, in the source's order as the sort path
 * does): every policy but error, on float64 or int64 values (the others
 * -- patterns that become counts, float32, uint64, complex -- take the
 * sort path). */
static bool count_dups(const conv *C) {
  return C->dup != SPC_DUP_ERROR && (C->vt == SPC_F64 || C->vt == SPC_I64);
}

/* cnt[x], for the parents x < np1 in order, from where each parent's run
 * ends (t + 1; 0: no component) to its count, the first run counted from
 * `from` (rg: a scratch local). */
static void ends_to_counts(ir_func *f, ir_stmt *into, ir_var cnt, ir_var np1, ir_var rg, ir_expr *from) {
  ir_var x = lang_fresh_local(f, "x", IR_I64, false), en = lang_fresh_local(f, "en", IR_I64, false);
  ir_add(f, into, ir_assign(f, rg, from));
  ir_stmt *z = ir_body(ir_add(f, into, ir_for(f, x, ir_int(f, 0), ir_ref(f, np1), NULL)));
  /* the ends increase with x (a run's end past every earlier parent's),
   * 0 where none: en = max(end, rg) needs no branch a parent (R-MAT 2^17,
   * half its rows empty: 0.43 -> 0.09 ms of mispredicted tests) */
  ir_add(f, z, ir_assign(f, en, ir_bin(f, IR_MAX, ir_cast(f, IR_I64, ir_load(f, cnt, ir_ref(f, x))),
                                       ir_ref(f, rg))));
  ir_add(f, z, ir_store(f, cnt, ir_ref(f, x), ir_bin(f, IR_SUB, ir_ref(f, en), ir_ref(f, rg))));
  ir_add(f, z, ir_assign(f, rg, ir_ref(f, en)));
}

/* v = v + 1 in v's index type */
static void bump(ir_func *f, ir_stmt *into, ir_var v, ir_ty ty) {
  ir_add(f, into, ir_assign(f, v, ir_cast(f, ty, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, v)), ir_int(f, 1)))));
}

/* build_count's placing when every component is a new child, in order,
 * the parents' runs in position order (brk == n): for each parent g with
 * cnt[g] components, yield_run gives the first position of the run and
 * the run's components t (consecutive from 0) take it and the ones after
 * it -- the same positions and arrays as yield_pos a component, which
 * yield_run's contract (docs/formats.md) promises. */
/* t = 0, then for each parent g in order with cnt[g] > 0 (every: each
 * parent, empty ones too -- yield_run of n = 0 leaves the level's state
 * as it is, docs/formats.md, and what it returns is then no position):
 * nrun its count, and yield_run's first position in b1->q; *has the
 * block that follows it, *g and *nrun the loop's locals. */
static spc_status each_run(conv *C, ir_func *f, ir_stmt *into, lvbind *b1, ir_var cnt, ir_var np1,
                           ir_var t, bool every, ir_stmt **has, ir_var *g, ir_var *nrun, spc_error *e) {
  *g = lang_fresh_local(f, "g", IR_I64, false);
  *nrun = lang_fresh_local(f, "nrun", C->index_ty, false);
  ir_add(f, into, ir_assign(f, t, ir_int(f, 0)));
  ir_stmt *gl = ir_body(ir_add(f, into, ir_for(f, *g, ir_int(f, 0), ir_ref(f, np1), NULL)));
  *has = every ? gl
               : ir_then(ir_add(f, gl, ir_if(f, ir_bin(f, IR_GT, ir_load(f, cnt, ir_ref(f, *g)), ir_int(f, 0)),
                                             NULL, NULL)));
  ir_add(f, *has, ir_assign(f, *nrun, ir_cast(f, C->index_ty, ir_load(f, cnt, ir_ref(f, *g)))));
  ir_add(f, *has, ir_assign(f, b1->p, ir_cast(f, C->index_ty, ir_ref(f, *g))));
  b1->nrun = *nrun;
  spc_status s = asm_lower_fn(f, *has, b1, SPC_LF_YIELD_RUN, b1->q, NULL, e);
  b1->nrun = -1;
  return s;
}

/* In an each_run loop over every parent (has): a run of nrun > 0 whose
 * first position b1->q is not t -- placed elsewhere than in parent order
 * from 0 -- sets flag to 0 and leaves; t then moves past the run.  One
 * branch (&, not &&, which the compiler may order nrun > 0 first: a
 * branch a parent again). */
static void check_run(ir_func *f, ir_stmt *has, const lvbind *b1, ir_var t, ir_var nrun, ir_var flag) {
  ir_expr *elsewhere = ir_bin(f, IR_BAND, ir_bin(f, IR_NE, ir_cast(f, IR_I64, ir_ref(f, b1->q)), ir_ref(f, t)),
                              ir_bin(f, IR_GT, ir_cast(f, IR_I64, ir_ref(f, nrun)), ir_int(f, 0)));
  ir_stmt *off = ir_then(ir_add(f, has, ir_if(f, elsewhere, NULL, NULL)));
  ir_add(f, off, ir_assign(f, flag, ir_int(f, 0)));
  ir_add(f, off, ir_break(f));
  ir_add(f, has, ir_assign(f, t, ir_bin(f, IR_ADD, ir_ref(f, t), ir_cast(f, IR_I64, ir_ref(f, nrun)))));
}

static spc_status run_place(conv *C, ir_func *f, ir_stmt *into, lvbind *b1, ir_var cnt, ir_var np1,
                            const ir_var *crd, ir_var vals, ir_var vout, ir_var t, spc_error *e) {
  ir_var g, nrun, u = lang_fresh_local(f, "u", IR_I64, false);
  ir_stmt *has;
  spc_status s = each_run(C, f, into, b1, cnt, np1, t, false, &has, &g, &nrun, e);
  if (s) return s;
  ir_stmt *ul = ir_body(ir_add(f, has, ir_for(f, u, ir_int(f, 0), ir_cast(f, IR_I64, ir_ref(f, nrun)), NULL)));
  req_ctx rq = {.C = C};
  ir_expr *x[SPC_MAX_ORDER], *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  for (int k = 0; k < C->order; k++) x[k] = ir_load(f, crd[k], ir_ref(f, t));
  s = lower_source_x(C, f, ul, x, false, &rq, src, e); /* checked by pass 0 */
  if (!s) s = spc_remap_lower(C->r, f, ul, src, NULL, outs, e);
  if (s) return s;
  ir_add(f, ul, ir_assign(f, b1->c, ir_cast(f, C->coord_ty, outs[1])));
  if (asm_lfn(b1, SPC_LF_INSERT) && (s = asm_lower_fn(f, ul, b1, SPC_LF_INSERT, -1, NULL, e))) return s;
  if (vout >= 0) ir_add(f, ul, ir_store(f, vout, ir_ref(f, b1->q), ir_load(f, vals, ir_ref(f, t))));
  bump(f, ul, b1->q, C->index_ty);
  bump(f, ul, t, IR_I64);
  return SPC_OK;
}

/* spc_conv_count over a COO's components (see above). */
static spc_status insert_fills(conv *C, bool *fill, spc_error *e);
static void unzero(ir_stmt *st, ir_var arr);
static spc_status place_in_pass0(conv *C, bool *fill, bool *yes, spc_error *e);
static spc_status give_plan(conv *C, int *gd, int *gk, spc_error *e);

/* In the child level's init (st's kids from k0 on), each allocation of
 * an array pass 0 placed into (sc[a] >= 0) takes sc[a] (move) when pass
 * 0 ran to the end (brk == n) and the length is sc's: no second array
 * of n made and freed (which, besides, left the allocator fresh pages to
 * fault in: R-MAT 2^17 COO to CSR 5.1 -> 8.2 ms, against 3.9 ms adopted). */
static void adopt_allocs(ir_func *f, ir_stmt *st, int k0, const ir_var *keep, const ir_var *sc,
                         int narr, ir_var brk, ir_var n, int gk, ir_var moved) {
  for (int c = k0; c < st->nkids; c++) {
    ir_stmt *k = st->kids[c];
    if (!k) continue;
    int a = 0;
    while (k->kind == IR_S_ALLOC && a < narr && keep[a] != k->var) a++;
    if (k->kind != IR_S_ALLOC || a == narr || sc[a] < 0) {
      adopt_allocs(f, k, 0, keep, sc, narr, brk, n, gk, moved);
      continue;
    }
    ir_var L = lang_fresh_local(f, "alen", IR_I64, false);
    ir_stmt *blk = ir_block(f);
    ir_add(f, blk, ir_assign(f, L, ir_cast(f, IR_I64, k->a)));
    ir_expr *all = ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, brk), ir_ref(f, n)),
                          ir_bin(f, IR_EQ, ir_ref(f, L), ir_len(f, sc[a])));
    ir_stmt *iff = ir_add(f, blk, ir_if(f, all, NULL, NULL));
    ir_add(f, ir_then(iff), ir_call(f, IR_MOVE, (ir_var[]){keep[a], sc[a]}, 2, NULL, 0));
    /* else sc[a] is dead: freed before the level's array is made, which
     * then takes its memory back (the peak one array of n less, and no
     * heap growth past glibc's trim threshold: a loop of Groebner's COO
     * (column-ordered) to CSR faulted 500 fresh pages a call) -- unless
     * it is the source's own array, handed over (gk): then the placing
     * reads it, and the caller has it back */
    if (a == gk) ir_add(f, ir_then(iff), ir_assign(f, moved, ir_int(f, 1)));
    ir_stmt *els = ir_else(f, iff);
    if (a != gk) ir_add(f, els, ir_free(f, sc[a]));
    ir_add(f, els, ir_alloc(f, keep[a], ir_ref(f, L), k->zero));
    st->kids[c] = blk;
  }
}

/* build_count's placing when pass 0 placed too (place_in_pass0) and met
 * no component out of (c0, c1) order, the level's init having taken the
 * arrays pass 0 wrote (adopt_allocs): each parent's run takes its
 * positions by yield_run, as run_place would, checked to be the runs'
 * components in order (position t: the one pass 0 gave it); the values
 * are in place.  A run elsewhere (a level whose positions do not follow
 * the parents' order), or a size or array length not n: the level's
 * init again and run_place. */
static spc_status placed_runs(conv *C, ir_func *f, ir_stmt *into, lvbind *b1, ir_var cnt,
                              ir_var np1, const ir_var *crd, ir_var vals, ir_var vout, ir_var t,
                              ir_var n, ir_var size, const ir_var *sc, int gk, bool gval,
                              ir_var moved, ir_var vmoved, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_var fz = lang_fresh_local(f, "fz", IR_I64, false);
  ir_expr *fits = ir_bin(f, IR_EQ, ir_ref(f, size), ir_ref(f, n));
  for (int k = 0; k < l1->narrays; k++)
    if (sc[k] >= 0)
      fits = ir_bin(f, IR_LAND, fits, ir_bin(f, IR_EQ, ir_len(f, b1->arr[k]), ir_ref(f, n)));
  ir_add(f, into, ir_assign(f, fz, ir_cast(f, IR_I64, fits)));
  ir_stmt *go = ir_then(ir_add(f, into, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, fz), ir_int(f, 1)), NULL, NULL)));
  ir_var g, nrun;
  ir_stmt *has;
  /* every parent, the empty ones too: no branch on each parent's count
   * (R-MAT 2^17: 0.46 -> 0.10 ms) */
  spc_status s = each_run(C, f, go, b1, cnt, np1, t, true, &has, &g, &nrun, e);
  if (s) return s;
  check_run(f, has, b1, t, nrun, fz);
  ir_stmt *redo = ir_then(ir_add(f, into, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, fz), ir_int(f, 1)), NULL, NULL)));
  /* the source's arrays the level and the values took (give_plan): back,
   * for run_place to read */
  if (gk >= 0)
    ir_add(f, ir_then(ir_add(f, redo, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, moved), ir_int(f, 1)), NULL, NULL))),
           ir_call(f, IR_MOVE, (ir_var[]){sc[gk], b1->arr[gk]}, 2, NULL, 0));
  if (gval)
    ir_add(f, ir_then(ir_add(f, redo, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, vmoved), ir_int(f, 1)), NULL, NULL))),
           ir_call(f, IR_MOVE, (ir_var[]){vals, vout}, 2, NULL, 0));
  if (asm_lfn(b1, SPC_LF_INIT) && (s = asm_lower_fn(f, redo, b1, SPC_LF_INIT, -1, NULL, e))) return s;
  if (gval) /* the values' array again, where they went back */
    ir_add(f, ir_then(ir_add(f, redo, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, vmoved), ir_int(f, 1)), NULL, NULL))),
           ir_alloc(f, vout, ir_ref(f, size), any_pads(C)));
  return run_place(C, f, redo, b1, cnt, np1, crd, vals, vout, t, e);
}

static spc_status build_count(conv *C, countfn *F, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_func *f = ir_func_new("spc_conv_count");
  char name[96];
  if (!f) return SPC_NOMEM(e);
  F->f = f;
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], Nlo[4];
  ir_ty vty = asm_value_ty(C->vt);
  ir_var vals = -1;
  spc_status s = SPC_OK;
  int gd = -1, gk = -1;
  F->gd = -1;
  if (F->give && (s = give_plan(C, &gd, &gk, e))) return s;
  sparams_crd(C, f, crd, gd);
  bool gval = gd >= 0 && C->vt != SPC_PATTERN;
  if (C->vt != SPC_PATTERN) vals = ir_param(f, "vals", vty, true, gval ? IR_GIVE : IR_IN);
  F->gd = gd;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  sparams_Nlo(f, Nlo);
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  F->p_ok = ir_nparams(f);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  F->p_arr0 = ir_nparams(f);
  F->narr = l1->narrays;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_OUT);
  F->p_size = ir_nparams(f);
  ir_var size = ir_param(f, "size", IR_I64, false, IR_OUT);
  F->p_vout = -1;
  ir_var vout = -1;
  if (C->vt != SPC_PATTERN) {
    F->p_vout = ir_nparams(f);
    vout = ir_param(f, "vout", vty, true, IR_OUT);
  }
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo); /* the top level under the root */
  for (int k = 0; k < l1->narrays; k++) b1.arr[k] = keep[k];
  /* its positions are the child's parents */
  ir_var np1 = lang_fresh_local(f, "np1", IR_I64, false);
  s = asm_lower_fn(f, body, &b0, SPC_LF_SIZE, np1, NULL, e);
  if (!s) ir_add(f, body, ir_assign(f, b1.np, ir_cast(f, C->index_ty, ir_ref(f, np1))));
  /* the child's per-parent counts, and the last child coordinate seen per
   * parent (+1 past lo; 0: none yet) */
  ir_var cnt = lang_fresh_local(f, "cnt", F->cnt32 ? IR_I32 : IR_I64, true);
  ir_var last = lang_fresh_local(f, "last", IR_I64, true);
  if (!s) {
    ir_add(f, body, ir_alloc(f, cnt, ir_ref(f, np1), true));
    s = squeries(C, &b1, cnt, e); /* not all counts: the sort path */
  }
  ir_add(f, body, ir_assign(f, ok, ir_int(f, 1)));
  ir_add(f, body, ir_assign(f, size, ir_int(f, 0)));
  cbody X = {.C = C, .b0 = &b0, .b1 = &b1, .ok = ok, .cnt = cnt, .last = last, .vout = vout,
             .stop = -1, .t = -1, .from = -1, .seen = -1, .dups = count_dups(C), .p1 = -1,
             .lastq = -1};
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  cbody_locals(f, body, &X);
  if (X.dups) {
    X.p1 = lang_fresh_local(f, "p1", IR_I64, false);
    X.lastq = lang_fresh_local(f, "lastq", IR_I64, true);
    ir_add(f, body, ir_assign(f, X.p1, ir_int(f, 0)));
  }
  /* pass 0 places too where it can (place_in_pass0): its first loop,
   * while (c0, c1) strictly increases, gives component t position t --
   * where it goes when the loop runs to the end -- into arrays of n
   * (sc) and vout; placed_runs then checks it and keeps them.  One pass
   * over a sorted COO, not two (COO to CSR, one thread, ns a component:
   * R-MAT 2^17 2.6 -> 2.0, the 27-point stencil 1.8 -> 1.35, R-MAT 2^22
   * 3.6 -> 3.2) */
  bool p3 = false, fill0[SPC_LEVEL_MAX_ARRAYS] = {false};
  ir_var sc[SPC_SPEC_MAX];
  if (!s) s = place_in_pass0(C, fill0, &p3, e);
  for (int k = 0; k < l1->narrays; k++)
    sc[k] = k == gk && p3 ? crd[gd]
            : p3 && fill0[k] ? lang_fresh_local(f, "sc", ir_var_get(f, keep[k])->ty, true) : -1;
  X.sc = sc;
  /* the source's arrays handed over (give_plan): the level's array and
   * the values are the source's own when pass 0 runs to the end (moved:
   * no copy made); moved / vmoved say so, for a redo to move them back */
  X.gk = p3 ? gk : -1;
  X.gval = p3 && gval;
  ir_var moved = lang_fresh_local(f, "moved", IR_I64, false);
  ir_var vmoved = lang_fresh_local(f, "vmoved", IR_I64, false);
  ir_add(f, body, ir_assign(f, moved, ir_int(f, 0)));
  ir_add(f, body, ir_assign(f, vmoved, ir_int(f, 0)));
  /* pass 0: counts, while the source is strictly increasing in (c0, c1)
   * or in (c1, c0) -- either way every parent's children increase; pass
   * 1, only when neither holds: counts again, checking each parent's
   * last child (breaks at the first out of order); pass 2: placing */
  for (int pass = 0; pass < 3 && !s; pass++) {
    ir_stmt *into = body;
    if (pass == 1) {
      ir_expr *neither = ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)),
                                ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, X.sa), ir_int(f, 0)),
                                       ir_bin(f, IR_EQ, ir_ref(f, X.sb), ir_int(f, 0))));
      ir_stmt *iff = ir_add(f, body, ir_if(f, neither, NULL, NULL));
      into = ir_then(iff);
      ir_var x = lang_fresh_local(f, "x", IR_I64, false);
      ir_stmt *z = ir_add(f, into, ir_for(f, x, ir_int(f, 0), ir_ref(f, np1), NULL));
      ir_add(f, ir_body(z), ir_store(f, cnt, ir_ref(f, x), ir_int(f, 0)));
      ir_add(f, into, ir_alloc(f, last, ir_ref(f, np1), true));
    }
    if (pass == 2) { /* in order: the child level's init, size, limit, placing */
      ir_stmt *iff = ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL));
      into = ir_then(iff);
      if (X.dups) { /* pass 1 met repeats: the parents' last children again, and positions */
        ir_stmt *rp = ir_then(ir_add(f, into, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X.p1), ir_int(f, 1)), NULL, NULL)));
        ir_var x = lang_fresh_local(f, "x", IR_I64, false);
        ir_stmt *z = ir_add(f, rp, ir_for(f, x, ir_int(f, 0), ir_ref(f, np1), NULL));
        ir_add(f, ir_body(z), ir_store(f, last, ir_ref(f, x), ir_int(f, 0)));
        ir_add(f, rp, ir_alloc(f, X.lastq, ir_ref(f, np1), false));
      }
      /* a compact child level: the arrays insert_coord writes at every
       * position are not zeroed (as the values): every position gets
       * exactly one component -- checked: size is n, else zeroed after */
      bool fill[SPC_LEVEL_MAX_ARRAYS] = {false};
      bool compact = (l1->props & SPC_LP_COMPACT) && l1->narrays <= SPC_LEVEL_MAX_ARRAYS;
      if (compact) s = insert_fills(C, fill, e);
      int ki = into->nkids;
      if (!s && asm_lfn(&b1, SPC_LF_INIT)) s = asm_lower_fn(f, into, &b1, SPC_LF_INIT, -1, NULL, e);
      if (!s && p3) adopt_allocs(f, into, ki, keep, sc, l1->narrays, X.brk, n, X.gk, moved);
      if (!s) s = asm_lower_fn(f, into, &b1, SPC_LF_SIZE, size, NULL, e);
      if (s) break;
      snprintf(name, sizeof name,
               "level 2 (%s) of format %s would hold %%lld positions: too large "
               "(limit %%lld)", l1->name, C->fmt->name);
      ir_expr *fa[2] = {ir_ref(f, size), ir_ref(f, limit)};
      ir_stmt *big = ir_add(f, into, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, size), ir_ref(f, limit)), NULL, NULL));
      ir_add(f, ir_then(big), ir_fail(f, SPC_ERR_UNSUPPORTED, name, fa, 2));
      /* not zeroed: every position gets exactly one component (pass 0
       * placing: kept when its length is the size; the source's own
       * values, handed over, when pass 0 ran to the end) */
      if (X.gval) {
        ir_expr *all = ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, X.brk), ir_ref(f, n)),
                              ir_bin(f, IR_EQ, ir_ref(f, size), ir_len(f, vals)));
        ir_stmt *mv = ir_then(ir_add(f, into, ir_if(f, all, NULL, NULL)));
        ir_add(f, mv, ir_call(f, IR_MOVE, (ir_var[]){vout, vals}, 2, NULL, 0));
        ir_add(f, mv, ir_assign(f, vmoved, ir_int(f, 1)));
      }
      if (vout >= 0 && p3)
        ir_add(f, ir_then(ir_add(f, into, ir_if(f, ir_bin(f, IR_NE, ir_len(f, vout), ir_ref(f, size)), NULL, NULL))),
               ir_alloc(f, vout, ir_ref(f, size), any_pads(C)));
      else if (vout >= 0)
        ir_add(f, into, ir_alloc(f, vout, ir_ref(f, size), any_pads(C)));
      ir_stmt *odd = NULL;
      for (int k = 0; k < l1->narrays; k++) {
        if (!fill[k]) continue;
        unzero(into, keep[k]);
        if (!odd)
          odd = ir_then(ir_add(f, into, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, size), ir_ref(f, n)),
                                              NULL, NULL)));
        ir_var x = lang_fresh_local(f, "z", IR_I64, false);
        ir_stmt *z = ir_add(f, odd, ir_for(f, x, ir_int(f, 0), ir_len(f, keep[k]), NULL));
        ir_add(f, ir_body(z), ir_store(f, keep[k], ir_ref(f, x),
                                       ir_cast(f, ir_var_get(f, keep[k])->ty, ir_int(f, 0))));
      }
    }
    ir_expr *from = ir_int(f, 0);
    if (pass == 0) {
      /* pass 0 in up to three loops: while (c0, c1) strictly increases
       * (a file sorted by rows), counting with one test a component; at
       * the first that does not (brk), the (c1, c0) order of the
       * components before it, then the full checks from brk on */
      X.brk = lang_fresh_local(f, "brk", IR_I64, false);
      bool ends = (C->lv[0]->lf->props & SPC_LP_ORDERED) != 0;
      X.rg = ends ? lang_fresh_local(f, "rg", IR_I64, false) : -1;
      X.t = t;
      ir_var kfit = lang_fresh_local(f, "kfit", IR_I64, false);
      key_shift(f, into, b0.N, b1.N, kfit, &X);
      /* pass 3 over every component where the keys fit, else over none */
      ir_add(f, into, ir_assign(f, X.brk, ir_select(f, ir_bin(f, IR_EQ, ir_ref(f, kfit), ir_int(f, 1)),
                                                    ir_ref(f, n), ir_int(f, 0))));
      for (int sub = 0; sub < 2 && !s; sub++) {
        X.pass = sub == 0 ? 3 : 4;
        if (sub == 1) {
          ir_stmt *iff = ir_add(f, into, ir_if(f, ir_bin(f, IR_LT, ir_ref(f, X.brk), ir_ref(f, n)), NULL, NULL));
          into = ir_then(iff);
          ir_add(f, into, ir_assign(f, X.pk0, ir_int(f, -1)));
          ir_add(f, into, ir_assign(f, X.pk1, ir_int(f, -1)));
        }
        X.place3 = sub == 0 && p3;
        if (X.place3) {
          for (int k = 0; k < l1->narrays; k++)
            if (sc[k] >= 0 && k != X.gk) ir_add(f, into, ir_alloc(f, sc[k], ir_ref(f, n), false));
          if (vout >= 0 && !X.gval) ir_add(f, into, ir_alloc(f, vout, ir_ref(f, n), false));
        }
        ir_stmt *loop = ir_add(f, into, ir_for(f, t, ir_int(f, 0), ir_ref(f, X.brk), NULL));
        ir_expr *in[SPC_MAX_ORDER];
        for (int k = 0; k < C->order; k++) in[k] = ir_load(f, crd[k], ir_ref(f, t));
        ir_expr *v3 = X.place3 && vals >= 0 ? ir_load(f, vals, ir_ref(f, t)) : NULL;
        s = count_leaf(&X, f, ir_body(loop), in, v3, e);
        X.place3 = false;
        if (sub == 0 && X.rg >= 0) /* the runs' ends made counts */
          ends_to_counts(f, into, cnt, np1, X.rg, ir_int(f, 0));
      }
      if (s) break;
      from = ir_ref(f, X.brk);
      X.t = -1;
    }
    X.pass = pass;
    ir_stmt *at = into;
    if (pass == 2 && X.rg >= 0 && asm_lfn(&b1, SPC_LF_YIELD_RUN)) {
      /* pass 0 met no component out of (c0, c1) order (brk == n) and the
       * top level is ORDERED: every component is a new child, in order,
       * each parent's together and the parents in position order.  Each
       * parent's run then takes its positions at once (yield_run) and
       * the rest follow (run_place); else one yield_pos a component
       * (compressed: pos[p] += 1, each component's load waiting on the
       * one before's store) */
      ir_stmt *run = ir_add(f, into, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X.brk), ir_ref(f, n)), NULL, NULL));
      s = p3 ? placed_runs(C, f, ir_then(run), &b1, cnt, np1, crd, vals, vout, t, n, size, sc, X.gk,
                           X.gval, moved, vmoved, e)
             : run_place(C, f, ir_then(run), &b1, cnt, np1, crd, vals, vout, t, e);
      at = ir_else(f, run);
      if (s) break;
    }
    if (pass == 0 && !X.known) { /* the sorted-by-columns exit (cbody.sbonly) */
      X.sbonly = true;
      X.tl = t;
      X.brk2 = lang_fresh_local(f, "brk2", IR_I64, false);
      X.narrow = lang_fresh_local(f, "narrow", IR_I64, false);
      X.key = lang_fresh_local(f, "key", IR_I64, false);
      X.pkey = lang_fresh_local(f, "pkey", IR_I64, false);
      ir_expr *n0 = ir_bin(f, IR_LT, ir_ref(f, b0.N), ir_int(f, (int64_t)1 << 31));
      ir_expr *n1 = ir_bin(f, IR_LT, ir_ref(f, b1.N), ir_int(f, (int64_t)1 << 31));
      ir_add(f, at, ir_assign(f, X.brk2, ir_ref(f, n)));
      ir_add(f, at, ir_assign(f, X.narrow, ir_cast(f, IR_I64, ir_bin(f, IR_LAND, n0, n1))));
    }
    ir_stmt *loop = ir_add(f, at, ir_for(f, t, from, ir_ref(f, n), NULL));
    ir_expr *in[SPC_MAX_ORDER];
    for (int k = 0; k < C->order; k++) in[k] = ir_load(f, crd[k], ir_ref(f, t));
    s = count_leaf(&X, f, ir_body(loop), in, vals >= 0 ? ir_load(f, vals, ir_ref(f, t)) : NULL, e);
    if (!s && pass == 0 && X.sbonly) {
      ir_stmt *rest = ir_then(ir_add(f, at, ir_if(f, ir_bin(f, IR_LT, ir_ref(f, X.brk2), ir_ref(f, n)), NULL, NULL)));
      ir_stmt *l5 = ir_add(f, rest, ir_for(f, t, ir_ref(f, X.brk2), ir_ref(f, n), NULL));
      for (int k = 0; k < C->order; k++) in[k] = ir_load(f, crd[k], ir_ref(f, t));
      X.pass = 5;
      X.sbonly = false;
      s = count_leaf(&X, f, ir_body(l5), in, NULL, e);
      X.pass = pass;
    }
    if (!s && pass == 2 && asm_lfn(&b1, SPC_LF_FINALIZE))
      s = asm_lower_fn(f, into, &b1, SPC_LF_FINALIZE, -1, NULL, e);
  }
  if (!s) {
    ir_add(f, body, ir_free(f, cnt));
    ir_add(f, body, ir_free(f, last));
    if (X.dups) ir_add(f, body, ir_free(f, X.lastq));
    for (int k = 0; k < l1->narrays; k++)
      if (sc[k] >= 0 && k != X.gk) ir_add(f, body, ir_free(f, sc[k]));
    s = ir_verify(f, e);
  }
  return s;
}

/* The parallel counting plan's first pass over one chunk of a COO's
 * components, [off, off + len) (one call per thread): counts under each
 * parent into the thread's own cnt, and pass 0's checks -- a repeated
 * component, strictly increasing in (c0, c1) or in (c1, c0) -- from
 * component off - 1 on, so the chunks' borders are checked too.
 *   spc_conv_pcount(crd0.., off, len, N0, lo0, N1, lo1, cnt, res)
 * res[0] ok (1, 0 out of order, -1 a duplicate), res[1] sorted01,
 * res[2] sorted10. */
static spc_status build_pcount(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_conv_pcount");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], Nlo[4];
  sparams_crd(C, f, crd, -1);
  ir_var off = ir_param(f, "off", IR_I64, false, IR_IN);
  ir_var len = ir_param(f, "len", IR_I64, false, IR_IN);
  sparams_Nlo(f, Nlo);
  ir_var cnt = ir_param(f, "cnt", IR_I64, true, IR_INOUT);
  ir_var res = ir_param(f, "res", IR_I64, true, IR_INOUT);
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo);
  cbody X = {.C = C, .b0 = &b0, .b1 = &b1, .cnt = cnt, .last = -1, .vout = -1, .stop = -1,
             .pass = 0, .seen = -1};
  X.ok = lang_fresh_local(f, "ok", IR_I64, false);
  X.t = lang_fresh_local(f, "t", IR_I64, false);
  X.from = off;
  ir_add(f, body, ir_assign(f, X.ok, ir_int(f, 1)));
  cbody_locals(f, body, &X);
  ir_var t0 = lang_fresh_local(f, "t0", IR_I64, false);
  ir_add(f, body, ir_assign(f, t0, ir_select(f, ir_bin(f, IR_GT, ir_ref(f, off), ir_int(f, 0)),
                                             ir_bin(f, IR_SUB, ir_ref(f, off), ir_int(f, 1)),
                                             ir_ref(f, off))));
  ir_var end = lang_fresh_local(f, "end", IR_I64, false);
  ir_add(f, body, ir_assign(f, end, ir_bin(f, IR_ADD, ir_ref(f, off), ir_ref(f, len))));
  ir_expr *in[SPC_MAX_ORDER];
  for (int k = 0; k < C->order; k++) in[k] = ir_load(f, crd[k], ir_ref(f, X.t));
  spc_status s = SPC_OK;
  ir_stmt *full = body;
  if (C->lv[0]->lf->props & SPC_LP_ORDERED) {
    /* first while the chunk (from the component before it) strictly
     * increases in (c0, c1), storing where each parent's run ends, as
     * build_count's pass 0 does (no load and store of one counter a
     * component); runs' ends made counts from the chunk's start (the
     * component before it counts 0).  At the first out of order, the
     * counts are cleared and the checks below run from the start. */
    X.brk = lang_fresh_local(f, "brk", IR_I64, false);
    X.rg = lang_fresh_local(f, "rg", IR_I64, false);
    ir_var kfit = lang_fresh_local(f, "kfit", IR_I64, false);
    key_shift(f, body, X.b0->N, X.b1->N, kfit, &X);
    /* over the chunk where the keys fit, else over none */
    ir_add(f, body, ir_assign(f, X.brk, ir_select(f, ir_bin(f, IR_EQ, ir_ref(f, kfit), ir_int(f, 1)),
                                                  ir_ref(f, end), ir_ref(f, t0))));
    X.pass = 3;
    X.from = -1;
    ir_stmt *l3 = ir_add(f, body, ir_for(f, X.t, ir_ref(f, t0), ir_ref(f, X.brk), NULL));
    s = count_leaf(&X, f, ir_body(l3), in, NULL, e);
    if (s) return s;
    X.pass = 0;
    X.from = off;
    ir_var x = lang_fresh_local(f, "x", IR_I64, false), np1 = lang_fresh_local(f, "np1", IR_I64, false);
    ir_add(f, body, ir_assign(f, np1, ir_len(f, cnt)));
    ir_stmt *fit = ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, X.brk), ir_ref(f, end)), NULL, NULL));
    ir_stmt *th = ir_then(fit);
    ends_to_counts(f, th, cnt, np1, X.rg, ir_ref(f, off));
    ir_add(f, th, ir_assign(f, X.sb, ir_int(f, 0))); /* not checked: (c0, c1) is enough */
    full = ir_else(f, fit);
    ir_stmt *zc = ir_body(ir_add(f, full, ir_for(f, x, ir_int(f, 0), ir_ref(f, np1), NULL)));
    ir_add(f, zc, ir_store(f, cnt, ir_ref(f, x), ir_int(f, 0)));
    ir_add(f, full, ir_assign(f, X.pk0, ir_int(f, -1)));
    ir_add(f, full, ir_assign(f, X.pk1, ir_int(f, -1)));
    X.rg = -1;
  }
  ir_stmt *loop = ir_add(f, full, ir_for(f, X.t, ir_ref(f, t0), ir_ref(f, end), NULL));
  s = count_leaf(&X, f, ir_body(loop), in, NULL, e);
  if (s) return s;
  ir_add(f, body, ir_store(f, res, ir_int(f, 0), ir_ref(f, X.ok)));
  ir_add(f, body, ir_store(f, res, ir_int(f, 1), ir_ref(f, X.sa)));
  ir_add(f, body, ir_store(f, res, ir_int(f, 2), ir_ref(f, X.sb)));
  return ir_verify(f, e);
}

static spc_status np1_of(conv *C, int64_t *np1, spc_error *e);

/* one step of a counting sort by key g over components t: pass 0 counts
 * it (cnt[g + 1] += 1); pass 1, after the prefix sum, places its
 * coordinates crd[..][t] into o[..] and its value (vout >= 0) at
 * q = cnt[g]++ */
static void bucket_step(ir_func *f, ir_stmt *lb, int pass, ir_var g, ir_var cnt, ir_var q,
                        const ir_var *o, const ir_var *crd, int order, ir_var t, ir_var vals,
                        ir_var vout) {
  if (pass == 0) {
    ir_expr *at = ir_bin(f, IR_ADD, ir_ref(f, g), ir_int(f, 1));
    ir_expr *now = ir_load(f, cnt, ir_bin(f, IR_ADD, ir_ref(f, g), ir_int(f, 1)));
    ir_add(f, lb, ir_store(f, cnt, at, ir_bin(f, IR_ADD, now, ir_int(f, 1))));
    return;
  }
  ir_add(f, lb, ir_assign(f, q, ir_load(f, cnt, ir_ref(f, g))));
  ir_add(f, lb, ir_store(f, cnt, ir_ref(f, g), ir_bin(f, IR_ADD, ir_ref(f, q), ir_int(f, 1))));
  for (int d = 0; d < order; d++)
    ir_add(f, lb, ir_store(f, o[d], ir_ref(f, q), ir_load(f, crd[d], ir_ref(f, t))));
  if (vout >= 0) ir_add(f, lb, ir_store(f, vout, ir_ref(f, q), ir_load(f, vals, ir_ref(f, t))));
}

/* The bucketing routines' leading parameters: the COO's coordinates
 * crd0.. (their own types, into cty), its values (vals; -1 for a
 * pattern), n, and three scalars named pn (into p). */
static ir_var bucket_head(const conv *C, ir_func *f, const char *const pn[3], ir_var *crd,
                          ir_ty *cty, ir_var *vals, ir_var p[3]) {
  char name[64];
  for (int k = 0; k < C->order; k++) {
    const spc_array *a = spc_level_array_c(&C->comb->lv[k], "crd");
    cty[k] = a->type == SPC_IDX32 ? IR_I32 : IR_I64;
    snprintf(name, sizeof name, "crd%d", k);
    crd[k] = ir_param(f, name, cty[k], true, IR_IN);
  }
  *vals = C->vt != SPC_PATTERN ? ir_param(f, "vals", asm_value_ty(C->vt), true, IR_IN) : -1;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  for (int k = 0; k < 3; k++) p[k] = ir_param(f, pn[k], IR_I64, false, IR_IN);
  return n;
}

/* Bucketing for the counting path: the source components (coordinates
 * and values, in their own types) reordered by the child level's
 * coordinate k1 (less its low), stably, by an LSD radix sort of two
 * counting passes: k1's low sh1 bits, then its high bits (sh1: half the
 * bits of the extent, so each pass scatters into at most about 2^(b/2)
 * buckets that stay in cache, not one pass into N1 buckets, a cache miss
 * a component on a large shuffled matrix: R-MAT 2^17 shuffled COO to CSR
 * 35.5 -> 33.2 ns a component, same sitting).  One pass first counts both
 * digits.  The counting path run on the result then places every parent's children
 * in increasing order -- together the stable counting sorts of an LSD
 * radix sort (or Eigen's double transpose) -- unless two components
 * share both coordinates.  (Sorting by k0 too, two more passes, so that
 * placing is sequential, measured slower: 40 ns against 33.)
 *
 * spc_conv_bucket(crd0.., [vals], n, N1, lo1, sh1, out0.., [vout]) */
static spc_status build_bucket(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = ir_func_new("spc_conv_bucket");
  char name[64];
  *out = f;
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], o[SPC_MAX_ORDER], tmp[SPC_MAX_ORDER], vals, p[3];
  ir_ty cty[SPC_MAX_ORDER], vty = asm_value_ty(C->vt);
  static const char *const pn[3] = {"N1_in", "lo1_in", "sh1"};
  ir_var n = bucket_head(C, f, pn, crd, cty, &vals, p), N1 = p[0], lo1 = p[1], sh1 = p[2];
  for (int k = 0; k < C->order; k++) {
    snprintf(name, sizeof name, "out%d", k);
    o[k] = ir_param(f, name, cty[k], true, IR_OUT);
    ir_add(f, body, ir_alloc(f, o[k], ir_ref(f, n), false));
    tmp[k] = lang_fresh_local(f, "tmp", cty[k], true);
    ir_add(f, body, ir_alloc(f, tmp[k], ir_ref(f, n), false));
  }
  ir_var vout = vals >= 0 ? ir_param(f, "vout", vty, true, IR_OUT) : -1;
  ir_var vtmp = vals >= 0 ? lang_fresh_local(f, "vtmp", vty, true) : -1;
  if (vout >= 0) {
    ir_add(f, body, ir_alloc(f, vout, ir_ref(f, n), false));
    ir_add(f, body, ir_alloc(f, vtmp, ir_ref(f, n), false));
  }
  /* the digits' counts: low, 2^sh1 + 1; high, (N1 >> sh1) + 2 */
  ir_var cnt[2], len[2];
  for (int d = 0; d < 2; d++) {
    cnt[d] = lang_fresh_local(f, "cnt", IR_I64, true);
    len[d] = lang_fresh_local(f, "clen", IR_I64, false);
    ir_expr *l = d == 0
      ? ir_bin(f, IR_ADD, ir_bin(f, IR_SHL, ir_int(f, 1), ir_ref(f, sh1)), ir_int(f, 1))
      : ir_bin(f, IR_ADD, ir_bin(f, IR_SHR, ir_ref(f, N1), ir_ref(f, sh1)), ir_int(f, 2));
    ir_add(f, body, ir_assign(f, len[d], l));
    ir_add(f, body, ir_alloc(f, cnt[d], ir_ref(f, len[d]), true));
  }
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var k1 = lang_fresh_local(f, "k1", IR_I64, false);
  ir_var q = lang_fresh_local(f, "q", IR_I64, false);
  ir_var dg = lang_fresh_local(f, "dg", IR_I64, false);
  spc_status s = SPC_OK;
  /* pass -1 counts both digits; pass 0 places crd -> tmp by the low
   * digit, pass 1 tmp -> out by the high one */
  for (int pass = -1; pass < 2 && !s; pass++) {
    const ir_var *from = pass <= 0 ? crd : tmp, *to = pass == 0 ? tmp : o;
    ir_var vfrom = pass <= 0 ? vals : vtmp, vto = pass == 0 ? vtmp : vout;
    if (pass == 0)
      for (int d = 0; d < 2; d++) {
        ir_expr *a[2] = {ir_int(f, 0), ir_ref(f, len[d])};
        ir_add(f, body, ir_call(f, IR_PREFIX_SUM, &cnt[d], 1, a, 2));
      }
    ir_stmt *loop = ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL));
    ir_stmt *lb = ir_body(loop);
    req_ctx rq = {.C = C};
    ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
    s = lower_source(C, f, lb, from, t, false, &rq, src, e);
    if (!s) s = spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
    if (s) break;
    ir_add(f, lb, ir_assign(f, k1, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, outs[1]), ir_ref(f, lo1))));
    for (int d = 0; d < 2; d++) {
      if (pass >= 0 && pass != d) continue;
      ir_expr *dig = d == 0
        ? ir_bin(f, IR_BAND, ir_ref(f, k1),
                 ir_bin(f, IR_SUB, ir_bin(f, IR_SHL, ir_int(f, 1), ir_ref(f, sh1)), ir_int(f, 1)))
        : ir_bin(f, IR_SHR, ir_ref(f, k1), ir_ref(f, sh1));
      ir_add(f, lb, ir_assign(f, dg, dig));
      bucket_step(f, lb, pass < 0 ? 0 : 1, dg, cnt[d], q, to, from, C->order, t, vfrom, vto);
    }
  }
  if (!s) {
    for (int d = 0; d < 2; d++) ir_add(f, body, ir_free(f, cnt[d]));
    for (int k = 0; k < C->order; k++) ir_add(f, body, ir_free(f, tmp[k]));
    if (vtmp >= 0) ir_add(f, body, ir_free(f, vtmp));
    s = ir_verify(f, e);
  }
  return s;
}

/* The low digit's bits for an extent of N: half of its bits, rounded up
 * (0 for N of 1). */
static int64_t bucket_shift(int64_t N) {
  int b = 0;
  while (b < 63 && ((int64_t)1 << b) < N) b++;
  return (b + 1) / 2;
}

/* The remapped level coordinates outs[] of component t of arrays arr,
 * appended to lb (no `requires` checks: the count routine makes them). */
static spc_status remap_at(conv *C, ir_func *f, ir_stmt *lb, const ir_var *arr, ir_var t,
                           ir_expr **outs, spc_error *e) {
  req_ctx rq = {.C = C};
  ir_expr *src[SPC_MAX_ORDER];
  spc_status s = lower_source(C, f, lb, arr, t, false, &rq, src, e);
  return s ? s : spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
}

/* Bucketing by rows for the counting path: the source components (their
 * coordinates and values, in their own types) sorted stably by the level
 * coordinates (k0, k1), so the counting routine then reads them in order
 * and places every child at the next position of its parent, sequentially.
 * Two passes over memory: one counts the components of each bucket of
 * 2^sh0 consecutive k0, one scatters them into their buckets (at most
 * 256 write streams, not one a row: rbucket_shift); then each bucket,
 * about 16 k components that stay in cache, is sorted there -- (k0, k1)
 * and the component's place packed into one word, radix-sorted
 * (packed_sort), or where they do not fit a word a counting sort by k0,
 * then each row by k1 (insertion sort; an LSD radix sort for rows of
 * more than 32) -- and written back in order.  The
 * sort path's order: stable, so repeated components stay in the source's
 * order; where the counting routine would combine them (count_dups) they
 * are combined here by --dup, nout components left (1.1M shuffled points
 * with 10% repeats to CSR: 34 -> 22 ns a point), else left adjacent.  (The column radix sort
 * before it, build_bucket, left the placing random: one cache miss a
 * component on a large shuffled matrix.)
 *
 * Three routines, so that every phase runs on threads (count_rows: each
 * thread a range of the source for the first two, a run of whole buckets
 * for the third, its output written from that run's start):
 *
 *   spc_conv_rbcount(crd0.., n, N0_in, lo0_in, sh0, t0, t1, cnt)
 *       components t0 .. t1-1 counted into cnt[bucket] (k0 checked);
 *   spc_conv_rbplace(crd0.., [vals], n, N0_in, lo0_in, sh0, t0, t1, pos, out0.., [vout])
 *       the same components scattered: each at pos[its bucket]++ (the
 *       caller sets pos from every range's counts, so the ranges' parts of
 *       a bucket follow one another in the source's order);
 *   spc_conv_rbsort(out0.., [vout], bc, N0_in, lo0_in, sh0, b0, b1, w0, nout)
 *       buckets b0 .. b1-1 (bucket b is [bc[b-1], bc[b]), bc[-1] = 0)
 *       sorted, written from w0 (at most bucket b0's start) on, combined;
 *       nout the end of what was written. */
/* Appended to `into`: the pairs (skey, sidx) at [lo, hi) sorted by skey,
 * stably, by an LSD radix sort of (skey - its least) in digits of `bits`
 * bits (dc: 2^bits + 1 counts), as many passes as the range has digits,
 * each from one pair of arrays into the other: (skey, sidx) at [lo, hi)
 * and the scratch (k2, x2) at [0, hi - lo) in turn, copied back once at
 * the end when the passes were odd in number.  (A copy back after every
 * pass moved each pair twice a digit.)  v: the scratch scalars i, kk, xx,
 * j, sl, dp, pp. */
static void lsd_pass(ir_func *f, ir_stmt *ps, ir_var fk, ir_var fx, ir_var tk, ir_var tx,
                     bool from_scratch, ir_var dc, ir_var lo, ir_var hi, int bits, const ir_var v[7]);

static void lsd_pairs(ir_func *f, ir_stmt *into, ir_var skey, ir_var sidx, ir_var k2, ir_var x2,
                      ir_var dc, ir_var lo, ir_var hi, int bits, const ir_var v[7]) {
  const ir_var i = v[0], kk = v[1], xx = v[2], j = v[3], pp = v[6];
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  ir_add(f, into, ir_assign(f, kk, ir_load(f, skey, V(lo))));
  ir_add(f, into, ir_assign(f, xx, V(kk)));
  ir_stmt *pb = ir_body(ir_add(f, into, ir_for(f, i, V(lo), V(hi), NULL)));
  ir_add(f, pb, ir_assign(f, kk, B(IR_MIN, V(kk), ir_load(f, skey, V(i)))));
  ir_add(f, pb, ir_assign(f, xx, B(IR_MAX, V(xx), ir_load(f, skey, V(i)))));
  ir_add(f, into, ir_assign(f, xx, B(IR_SUB, V(xx), V(kk)))); /* the range */
  ir_add(f, into, ir_assign(f, j, I(0)));                     /* the shift */
  ir_add(f, into, ir_assign(f, pp, I(0)));                    /* 1: the pairs in (k2, x2) */
  ir_stmt *ps = ir_body(ir_add(f, into, ir_while(f, B(IR_GT, B(IR_SHR, V(xx), V(j)), I(0)), NULL)));
  ir_stmt *dir = ir_add(f, ps, ir_if(f, B(IR_EQ, V(pp), I(0)), NULL, NULL));
  lsd_pass(f, ir_then(dir), skey, sidx, k2, x2, false, dc, lo, hi, bits, v);
  lsd_pass(f, ir_else(f, dir), k2, x2, skey, sidx, true, dc, lo, hi, bits, v);
  ir_add(f, ps, ir_assign(f, pp, B(IR_SUB, I(1), V(pp))));
  ir_add(f, ps, ir_assign(f, j, B(IR_ADD, V(j), I(bits))));
  ir_stmt *back = ir_then(ir_add(f, into, ir_if(f, B(IR_EQ, V(pp), I(1)), NULL, NULL)));
  pb = ir_body(ir_add(f, back, ir_for(f, i, V(lo), V(hi), NULL)));
  ir_add(f, pb, ir_store(f, skey, V(i), ir_load(f, k2, B(IR_SUB, V(i), V(lo)))));
  ir_add(f, pb, ir_store(f, sidx, V(i), ir_load(f, x2, B(IR_SUB, V(i), V(lo)))));
#undef V
#undef I
#undef B
}

/* One digit pass (shift j) of lsd_pairs over components i in [lo, hi):
 * from (fk, fx) to (tk, tx), stably; from_scratch: the source is the
 * scratch at [0, hi - lo) and the target the pairs' range, else the
 * other way round. */
static void lsd_pass(ir_func *f, ir_stmt *ps, ir_var fk, ir_var fx, ir_var tk, ir_var tx,
                     bool from_scratch, ir_var dc, ir_var lo, ir_var hi, int bits, const ir_var v[7]) {
  const ir_var i = v[0], kk = v[1], j = v[3], sl = v[4], dp = v[5];
  const int64_t nd = (int64_t)1 << bits;
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  {
    ir_expr *fa[3] = {I(0), I(nd + 1), I(0)};
    ir_add(f, ps, ir_call(f, IR_FILL, &dc, 1, fa, 3));
  }
#define AT (from_scratch ? B(IR_SUB, V(i), V(lo)) : V(i))
#define DIGIT B(IR_BAND, B(IR_SHR, B(IR_SUB, ir_load(f, fk, AT), V(kk)), V(j)), I(nd - 1))
  ir_stmt *pb = ir_body(ir_add(f, ps, ir_for(f, i, V(lo), V(hi), NULL)));
  ir_add(f, pb, ir_assign(f, sl, B(IR_ADD, DIGIT, I(1))));
  ir_add(f, pb, ir_store(f, dc, V(sl), B(IR_ADD, ir_load(f, dc, V(sl)), I(1))));
  {
    ir_expr *pa[2] = {I(0), I(nd + 1)};
    ir_add(f, ps, ir_call(f, IR_PREFIX_SUM, &dc, 1, pa, 2));
  }
  /* dc[d]: digit d's first place in [0, hi - lo); the target's index
   * from it (itself for the scratch, + lo for the pairs' range) */
  pb = ir_body(ir_add(f, ps, ir_for(f, i, V(lo), V(hi), NULL)));
  ir_add(f, pb, ir_assign(f, sl, DIGIT));
  ir_add(f, pb, ir_assign(f, dp, ir_load(f, dc, V(sl))));
  ir_add(f, pb, ir_store(f, dc, V(sl), B(IR_ADD, V(dp), I(1))));
#define TO (from_scratch ? B(IR_ADD, V(dp), V(lo)) : V(dp))
  ir_add(f, pb, ir_store(f, tk, TO, ir_load(f, fk, AT)));
  ir_add(f, pb, ir_store(f, tx, TO, ir_load(f, fx, AT)));
#undef TO
#undef AT
#undef DIGIT
#undef V
#undef I
#undef B
}

/* Component xx of the copy in cache (vtmp) combined by --dup into the
 * value last written (vout[w - 1]): a repeat of it. */
static void combine_dup(const conv *C, ir_func *f, ir_stmt *th, ir_var vout, ir_var vtmp, ir_var w,
                        ir_var xx) {
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  ir_expr *at = B(IR_SUB, V(w), I(1));
  ir_expr *v = ir_load(f, vtmp, V(xx));
  switch (C->dup) {
  case SPC_DUP_SUM: ir_add(f, th, ir_store(f, vout, at, B(IR_ADD, ir_load(f, vout, B(IR_SUB, V(w), I(1))), v))); break;
  case SPC_DUP_LAST: ir_add(f, th, ir_store(f, vout, at, v)); break;
  case SPC_DUP_MIN:
  case SPC_DUP_MAX: {
    ir_expr *better = B(C->dup == SPC_DUP_MIN ? IR_LT : IR_GT, v, ir_load(f, vout, B(IR_SUB, V(w), I(1))));
    ir_add(f, ir_then(ir_add(f, th, ir_if(f, better, NULL, NULL))),
           ir_store(f, vout, at, ir_load(f, vtmp, V(xx))));
    break;
  }
  default: /* first: kept */
    break;
  }
#undef V
#undef I
#undef B
}

/* spc_conv_rbsort's sort of one bucket (`into`: its components copied
 * to tmp / vtmp at [0, nbk), k1 in [m1lo, m1hi]) when a component's
 * (k0 - lo0 - base, k1 - m1lo) and its place in the bucket fit one
 * word: word = key << ib | i, key = (k0 - lo0 - base) << cb | (k1 -
 * m1lo), cb and ib the bits of k1's range and of nbk - 1.  The words are
 * sorted by an LSD radix sort of the key in np equal digits of at most 14
 * bits (np = ceil(key bits / 14): R-MAT 2^17's 10 + 17 bits in two), each
 * pass from wk into w2, the two then swapped (moves of the pointers);
 * every digit's counts taken as the words are made, a digit whose value
 * is one for the whole bucket skipped.  Then written out in order, a
 * component whose key equals the one before it combined (combine_dup).
 * The order is the other sort's (both stable: ties in the bucket's order,
 * the source's), so the output is the same bit for bit.  That sort moves
 * pairs of key and index (16 bytes) by k1 then by rows, or by rows then
 * each row, about ten passes over the bucket; this one 8-byte words in
 * two or three.  Stand-alone on the buckets of shuffled COO to CSR (one
 * thread, ms, 13-bit digits): R-MAT 2^17 13.1-14.0 -> 8.9-9.3, uniform
 * 10^6 x 10^6 with 4 M 46-48 -> 21-22, 3000 x 3000 with 2.4 M (20%
 * repeats) 20.6-23.8 -> 12.4-14.8, R-MAT 2^19 56-63 -> 38-49; digits of
 * 8-11 bits (more passes) and 15-16 (counts past the L1) were slower on
 * some of them, 14 with buckets of 16 k components (rbucket_shift) the
 * best on all.  *old: where the other sort goes (a key too wide for the
 * word: k1 spanning about 2^40 and more). */
typedef struct pk_ctx {
  const ir_var *o, *tmp;
  ir_var vout, vtmp;
  bool comb;
  ir_var lo0, sh0, base, nbk, m1lo, m1hi, w, i, xx, kk, sl, dp, j;
  ir_var hc, wk, w2, wsw; /* counts (int32, 5 digits of 16385), words, scratch, swap */
} pk_ctx;

static spc_status packed_sort(conv *C, ir_func *f, ir_stmt *into, ir_stmt **old, pk_ctx P,
                              spc_error *e) {
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  const ir_var i = P.i, xx = P.xx, kk = P.kk, sl = P.sl, dp = P.dp;
  ir_var cb = lang_fresh_local(f, "cb", IR_I64, false);
  ir_var ib = lang_fresh_local(f, "ib", IR_I64, false);
  ir_var kb = lang_fresh_local(f, "kb", IR_I64, false);
  ir_var np = lang_fresh_local(f, "np", IR_I64, false);
  ir_var D = lang_fresh_local(f, "D", IR_I64, false);
  ir_var nd = lang_fresh_local(f, "nd", IR_I64, false);
  ir_var hb = lang_fresh_local(f, "hb", IR_I64, false);
  ir_var pq = lang_fresh_local(f, "pq", IR_I64, false);
  ir_var sh = lang_fresh_local(f, "sh", IR_I64, false);
  ir_var pkey = lang_fresh_local(f, "pkey", IR_I64, false);
  ir_var x = lang_fresh_local(f, "x", IR_I64, false);
  /* bits of k1's range and of the bucket's last index */
  ir_add(f, into, ir_assign(f, cb, I(0)));
  ir_add(f, ir_body(ir_add(f, into, ir_while(f, B(IR_GT, B(IR_SHR, B(IR_SUB, V(P.m1hi), V(P.m1lo)), V(cb)), I(0)), NULL))),
         ir_assign(f, cb, B(IR_ADD, V(cb), I(1))));
  ir_add(f, into, ir_assign(f, ib, I(0)));
  ir_add(f, ir_body(ir_add(f, into, ir_while(f, B(IR_GT, B(IR_SHR, B(IR_SUB, V(P.nbk), I(1)), V(ib)), I(0)), NULL))),
         ir_assign(f, ib, B(IR_ADD, V(ib), I(1))));
  ir_add(f, into, ir_assign(f, kb, B(IR_ADD, V(P.sh0), V(cb))));
  ir_stmt *fits = ir_add(f, into, ir_if(f, B(IR_LE, B(IR_ADD, V(kb), V(ib)), I(62)), NULL, NULL));
  *old = ir_else(f, fits);
  ir_stmt *pk = ir_then(fits);
  ir_add(f, pk, ir_assign(f, np, B(IR_MAX, I(1), B(IR_DIV, B(IR_ADD, V(kb), I(13)), I(14)))));
  ir_add(f, pk, ir_assign(f, D, B(IR_MAX, I(1), B(IR_DIV, B(IR_SUB, B(IR_ADD, V(kb), V(np)), I(1)), V(np)))));
  ir_add(f, pk, ir_assign(f, nd, B(IR_SHL, I(1), V(D))));
  {
    ir_expr *fa[3] = {I(0), B(IR_MUL, V(np), B(IR_ADD, V(nd), I(1))), ir_cast(f, IR_I32, I(0))};
    ir_add(f, pk, ir_call(f, IR_FILL, &P.hc, 1, fa, 3));
  }
  /* the words, and every digit's counts (digit d of pass p at
   * p (nd + 1) + d + 1: the prefix sum then gives each digit's start) */
  ir_stmt *lb = ir_body(ir_add(f, pk, ir_for(f, i, I(0), V(P.nbk), NULL)));
  ir_expr *outs[SPC_MAX_ORDER];
  spc_status s = remap_at(C, f, lb, P.tmp, i, outs, e);
  if (s) return s;
  ir_expr *k0 = B(IR_SUB, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(P.lo0)), V(P.base));
  ir_expr *k1 = B(IR_SUB, ir_cast(f, IR_I64, outs[1]), V(P.m1lo));
  ir_add(f, lb, ir_assign(f, kk, B(IR_BOR, B(IR_SHL, k0, V(cb)), k1)));
  ir_add(f, lb, ir_store(f, P.wk, V(i), B(IR_BOR, B(IR_SHL, V(kk), V(ib)), V(i))));
  ir_stmt *hl = ir_body(ir_add(f, lb, ir_for(f, pq, I(0), V(np), NULL)));
  ir_add(f, hl, ir_assign(f, sl, B(IR_ADD, B(IR_MUL, V(pq), B(IR_ADD, V(nd), I(1))),
                                   B(IR_ADD, B(IR_BAND, B(IR_SHR, V(kk), B(IR_MUL, V(pq), V(D))),
                                               B(IR_SUB, V(nd), I(1))),
                                     I(1)))));
  ir_add(f, hl, ir_store(f, P.hc, V(sl), ir_cast(f, IR_I32, B(IR_ADD, ir_cast(f, IR_I64, ir_load(f, P.hc, V(sl))), I(1)))));
  /* the passes, each from wk into w2, then the two swapped */
  ir_stmt *pl = ir_body(ir_add(f, pk, ir_for(f, pq, I(0), V(np), NULL)));
  ir_add(f, pl, ir_assign(f, hb, B(IR_MUL, V(pq), B(IR_ADD, V(nd), I(1)))));
  ir_add(f, pl, ir_assign(f, sh, B(IR_ADD, V(ib), B(IR_MUL, V(pq), V(D)))));
  ir_expr *d0 = B(IR_BAND, B(IR_SHR, ir_load(f, P.wk, I(0)), V(sh)), B(IR_SUB, V(nd), I(1)));
  ir_expr *one = B(IR_EQ, ir_cast(f, IR_I64, ir_load(f, P.hc, B(IR_ADD, B(IR_ADD, V(hb), d0), I(1)))), V(P.nbk));
  ir_stmt *go = ir_else(f, ir_add(f, pl, ir_if(f, one, NULL, NULL)));
  {
    ir_expr *ps[2] = {V(hb), B(IR_ADD, V(hb), B(IR_ADD, V(nd), I(1)))};
    ir_add(f, go, ir_call(f, IR_PREFIX_SUM, &P.hc, 1, ps, 2));
  }
  lb = ir_body(ir_add(f, go, ir_for(f, i, I(0), V(P.nbk), NULL)));
  ir_add(f, lb, ir_assign(f, x, ir_load(f, P.wk, V(i))));
  ir_add(f, lb, ir_assign(f, sl, B(IR_ADD, V(hb), B(IR_BAND, B(IR_SHR, V(x), V(sh)), B(IR_SUB, V(nd), I(1))))));
  ir_add(f, lb, ir_assign(f, dp, ir_cast(f, IR_I64, ir_load(f, P.hc, V(sl)))));
  ir_add(f, lb, ir_store(f, P.hc, V(sl), ir_cast(f, IR_I32, B(IR_ADD, V(dp), I(1)))));
  ir_add(f, lb, ir_store(f, P.w2, V(dp), V(x)));
  ir_add(f, go, ir_call(f, IR_MOVE, (ir_var[]){P.wsw, P.wk}, 2, NULL, 0));
  ir_add(f, go, ir_call(f, IR_MOVE, (ir_var[]){P.wk, P.w2}, 2, NULL, 0));
  ir_add(f, go, ir_call(f, IR_MOVE, (ir_var[]){P.w2, P.wsw}, 2, NULL, 0));
  /* written out in order at w, as the other sort's components are */
  ir_stmt *wb = ir_body(ir_add(f, pk, ir_for(f, i, I(0), V(P.nbk), NULL)));
  ir_add(f, wb, ir_assign(f, x, ir_load(f, P.wk, V(i))));
  ir_add(f, wb, ir_assign(f, xx, B(IR_BAND, V(x), B(IR_SUB, B(IR_SHL, I(1), V(ib)), I(1)))));
  ir_stmt *put = wb;
  if (P.comb) {
    ir_add(f, wb, ir_assign(f, kk, B(IR_SHR, V(x), V(ib))));
    ir_expr *rep = B(IR_LAND, B(IR_GT, V(i), I(0)), B(IR_EQ, V(kk), V(pkey)));
    ir_stmt *ifr = ir_add(f, wb, ir_if(f, rep, NULL, NULL));
    combine_dup(C, f, ir_then(ifr), P.vout, P.vtmp, P.w, xx);
    put = ir_else(f, ifr);
    ir_add(f, put, ir_assign(f, pkey, V(kk)));
  }
  for (int k = 0; k < C->order; k++) ir_add(f, put, ir_store(f, P.o[k], V(P.w), ir_load(f, P.tmp[k], V(xx))));
  if (P.vout >= 0) ir_add(f, put, ir_store(f, P.vout, V(P.w), ir_load(f, P.vtmp, V(xx))));
  ir_add(f, put, ir_assign(f, P.w, B(IR_ADD, V(P.w), I(1))));
  (void)P.j;
#undef V
#undef I
#undef B
  return SPC_OK;
}

enum { RB_COUNT, RB_PLACE, RB_SORT };
static spc_status build_rbucket(conv *C, int which, ir_func **out, spc_error *e) {
  static const char *const fname[] = {"spc_conv_rbcount", "spc_conv_rbplace", "spc_conv_rbsort"};
  ir_func *f = ir_func_new(fname[which]);
  char name[64];
  *out = f;
  if (!f) return SPC_NOMEM(e);
  ir_func_set_noalias(f); /* the source, the counts, the output: distinct arrays */
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], o[SPC_MAX_ORDER], tmp[SPC_MAX_ORDER], vals = -1, p[3];
  ir_ty cty[SPC_MAX_ORDER], vty = asm_value_ty(C->vt);
  static const char *const pn[3] = {"N0_in", "lo0_in", "sh0"};
  ir_var n = -1, vout = -1, bc = -1, b0 = -1, b1 = -1, w0 = -1, nout = -1, t0 = -1, t1 = -1;
  ir_var cnt = -1;
  if (which == RB_COUNT) { /* bucket_head without the values */
    for (int k = 0; k < C->order; k++) {
      cty[k] = spc_level_array_c(&C->comb->lv[k], "crd")->type == SPC_IDX32 ? IR_I32 : IR_I64;
      snprintf(name, sizeof name, "crd%d", k);
      crd[k] = ir_param(f, name, cty[k], true, IR_IN);
    }
    n = ir_param(f, "n", IR_I64, false, IR_IN);
    for (int k = 0; k < 3; k++) p[k] = ir_param(f, pn[k], IR_I64, false, IR_IN);
  } else if (which == RB_PLACE) {
    n = bucket_head(C, f, pn, crd, cty, &vals, p);
  }
  if (which != RB_SORT) {
    t0 = ir_param(f, "t0", IR_I64, false, IR_IN);
    t1 = ir_param(f, "t1", IR_I64, false, IR_IN);
    cnt = ir_param(f, which == RB_COUNT ? "cnt" : "pos", IR_I64, true, IR_INOUT);
  } else {
    for (int k = 0; k < C->order; k++)
      cty[k] = spc_level_array_c(&C->comb->lv[k], "crd")->type == SPC_IDX32 ? IR_I32 : IR_I64;
  }
  for (int k = 0; k < C->order && which != RB_COUNT; k++) {
    snprintf(name, sizeof name, "out%d", k);
    o[k] = ir_param(f, name, cty[k], true, IR_INOUT);
    tmp[k] = lang_fresh_local(f, "sc", cty[k], true);
  }
  if (C->vt != SPC_PATTERN && which != RB_COUNT) vout = ir_param(f, "vout", vty, true, IR_INOUT);
  if (which == RB_SORT) {
    bc = ir_param(f, "bc", IR_I64, true, IR_IN);
    for (int k = 0; k < 3; k++) p[k] = ir_param(f, pn[k], IR_I64, false, IR_IN);
    b0 = ir_param(f, "b0", IR_I64, false, IR_IN);
    b1 = ir_param(f, "b1", IR_I64, false, IR_IN);
    w0 = ir_param(f, "w0", IR_I64, false, IR_IN);
    nout = ir_param(f, "nout", IR_I64, false, IR_OUT);
  }
  ir_var N0 = p[0], lo0 = p[1], sh0 = p[2];
  ir_var vtmp = vout >= 0 ? lang_fresh_local(f, "vsc", vty, true) : -1;
  bool comb = vout >= 0 && count_dups(C);
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  ir_var R = lang_fresh_local(f, "R", IR_I64, false);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var k0 = lang_fresh_local(f, "k0", IR_I64, false);
  ir_var q = lang_fresh_local(f, "q", IR_I64, false);
  ir_var b = lang_fresh_local(f, "b", IR_I64, false);
  ir_var a = lang_fresh_local(f, "a", IR_I64, false);
  ir_var z = lang_fresh_local(f, "z", IR_I64, false);
  ir_var mx = lang_fresh_local(f, "mx", IR_I64, false);
  ir_var i = lang_fresh_local(f, "i", IR_I64, false);
  spc_status s = SPC_OK;
  ir_expr *outs[SPC_MAX_ORDER];
  ir_stmt *lb;
  (void)n;
  if (which == RB_COUNT) { /* every k0 checked against its extent */
    lb = ir_body(ir_add(f, body, ir_for(f, t, V(t0), V(t1), NULL)));
    s = remap_at(C, f, lb, crd, t, outs, e);
    if (s) return s;
    ir_add(f, lb, ir_assign(f, k0, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(lo0))));
    ir_stmt *bad = ir_then(ir_add(f, lb, ir_if(f, B(IR_LOR, B(IR_LT, V(k0), I(0)), B(IR_GE, V(k0), V(N0))), NULL, NULL)));
    ir_add(f, bad, ir_fail(f, SPC_ERR_INTERNAL, "a level-1 coordinate outside its bounds", NULL, 0));
    ir_add(f, lb, ir_assign(f, b, B(IR_SHR, V(k0), V(sh0))));
    ir_add(f, lb, ir_store(f, cnt, V(b), B(IR_ADD, ir_load(f, cnt, V(b)), I(1))));
    return ir_verify(f, e);
  }
  if (which == RB_PLACE) { /* in the source's order, into the output arrays
                            * (each bucket is then sorted from a copy in
                            * cache back into its place: no second array) */
    lb = ir_body(ir_add(f, body, ir_for(f, t, V(t0), V(t1), NULL)));
    s = remap_at(C, f, lb, crd, t, outs, e);
    if (s) return s;
    ir_add(f, lb, ir_assign(f, b, B(IR_SHR, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(lo0)), V(sh0))));
    ir_add(f, lb, ir_assign(f, q, ir_load(f, cnt, V(b))));
    ir_add(f, lb, ir_store(f, cnt, V(b), B(IR_ADD, V(q), I(1))));
    for (int k = 0; k < C->order; k++) ir_add(f, lb, ir_store(f, o[k], V(q), ir_load(f, crd[k], V(t))));
    if (vout >= 0) ir_add(f, lb, ir_store(f, vout, V(q), ir_load(f, vals, V(t))));
    return ir_verify(f, e);
  }
  /* bc[b] is bucket b's end.  The largest of buckets b0 .. b1-1: the
   * in-cache arrays' length */
  ir_add(f, body, ir_assign(f, R, B(IR_SHL, I(1), V(sh0))));
  ir_add(f, body, ir_assign(f, mx, I(1)));
  ir_add(f, body, ir_assign(f, a, ir_select(f, B(IR_GT, V(b0), I(0)),
                                            ir_load(f, bc, B(IR_SUB, V(b0), I(1))), I(0))));
  ir_add(f, body, ir_assign(f, z, V(a)));
  lb = ir_body(ir_add(f, body, ir_for(f, b, V(b0), V(b1), NULL)));
  ir_add(f, lb, ir_assign(f, mx, B(IR_MAX, V(mx), B(IR_SUB, ir_load(f, bc, V(b)), V(z)))));
  ir_add(f, lb, ir_assign(f, z, ir_load(f, bc, V(b))));
  for (int k = 0; k < C->order; k++) ir_add(f, body, ir_alloc(f, tmp[k], V(mx), false));
  if (vtmp >= 0) ir_add(f, body, ir_alloc(f, vtmp, V(mx), false));
  /* Each bucket in cache: packed_sort, or (a key too wide for its
   * word) rows by a counting sort into skey / sidx (k1, the component),
   * each row sorted by k1, then written out */
  ir_var lc = lang_fresh_local(f, "lc", IR_I64, true);
  ir_var skey = lang_fresh_local(f, "skey", IR_I64, true);
  ir_var sidx = lang_fresh_local(f, "sidx", IR_I64, true);
  ir_var k2 = lang_fresh_local(f, "k2", IR_I64, true); /* a long row's radix passes */
  ir_var x2 = lang_fresh_local(f, "x2", IR_I64, true);
  ir_var dc = lang_fresh_local(f, "dc", IR_I64, true);
  ir_var dp = lang_fresh_local(f, "dp", IR_I64, false);
  ir_var lng = lang_fresh_local(f, "lng", IR_I64, false);
  ir_var nbk = lang_fresh_local(f, "nbk", IR_I64, false);
  ir_add(f, body, ir_alloc(f, lc, B(IR_ADD, V(R), I(1)), false));
  ir_add(f, body, ir_alloc(f, skey, V(mx), false));
  ir_add(f, body, ir_alloc(f, sidx, V(mx), false));
  ir_add(f, body, ir_alloc(f, k2, V(mx), false));
  ir_add(f, body, ir_alloc(f, x2, V(mx), false));
  ir_add(f, body, ir_alloc(f, dc, I(2049), false)); /* digits of up to 11 bits */
  ir_var hc = lang_fresh_local(f, "hc", IR_I32, true); /* packed_sort's */
  ir_var wk = lang_fresh_local(f, "wk", IR_I64, true);
  ir_var w2 = lang_fresh_local(f, "w2", IR_I64, true);
  ir_var wsw = lang_fresh_local(f, "wsw", IR_I64, true);
  ir_add(f, body, ir_alloc(f, hc, I(5 * 16385), false));
  ir_add(f, body, ir_alloc(f, wk, V(mx), false));
  ir_add(f, body, ir_alloc(f, w2, V(mx), false));
  ir_var base = lang_fresh_local(f, "base", IR_I64, false);
  ir_var r = lang_fresh_local(f, "r", IR_I64, false);
  ir_var sl = lang_fresh_local(f, "sl", IR_I64, false);
  ir_var ra = lang_fresh_local(f, "ra", IR_I64, false);
  ir_var rz = lang_fresh_local(f, "rz", IR_I64, false);
  ir_var j = lang_fresh_local(f, "j", IR_I64, false);
  ir_var kk = lang_fresh_local(f, "kk", IR_I64, false);
  ir_var xx = lang_fresh_local(f, "xx", IR_I64, false);
  ir_var ln = lang_fresh_local(f, "ln", IR_I64, false);
  ir_var w = lang_fresh_local(f, "w", IR_I64, false);
  ir_var pk0 = lang_fresh_local(f, "pk0", IR_I64, false);
  ir_var pk1 = lang_fresh_local(f, "pk1", IR_I64, false);
  ir_add(f, body, ir_assign(f, w, V(w0)));
  ir_add(f, body, ir_assign(f, pk0, I(0)));
  ir_add(f, body, ir_assign(f, pk1, I(0)));
  ir_stmt *bb = ir_body(ir_add(f, body, ir_for(f, b, V(b0), V(b1), NULL)));
  ir_add(f, bb, ir_assign(f, z, ir_load(f, bc, V(b))));
  ir_stmt *nz = ir_then(ir_add(f, bb, ir_if(f, B(IR_GT, V(z), V(a)), NULL, NULL)));
  ir_add(f, bb, ir_assign(f, a, V(z)));
  ir_add(f, nz, ir_assign(f, base, B(IR_SHL, V(b), V(sh0))));
  /* the bucket copied into cache, the least and greatest k1 noted */
  ir_var m1lo = lang_fresh_local(f, "m1lo", IR_I64, false);
  ir_var m1hi = lang_fresh_local(f, "m1hi", IR_I64, false);
  lb = ir_body(ir_add(f, nz, ir_for(f, t, V(a), V(z), NULL)));
  ir_add(f, lb, ir_assign(f, i, B(IR_SUB, V(t), V(a))));
  for (int k = 0; k < C->order; k++) ir_add(f, lb, ir_store(f, tmp[k], V(i), ir_load(f, o[k], V(t))));
  if (vtmp >= 0) ir_add(f, lb, ir_store(f, vtmp, V(i), ir_load(f, vout, V(t))));
  if ((s = remap_at(C, f, lb, tmp, i, outs, e))) return s;
  ir_add(f, lb, ir_assign(f, kk, ir_cast(f, IR_I64, outs[1])));
  {
    ir_stmt *fst = ir_add(f, lb, ir_if(f, B(IR_EQ, V(i), I(0)), NULL, NULL));
    ir_add(f, ir_then(fst), ir_assign(f, m1lo, V(kk)));
    ir_add(f, ir_then(fst), ir_assign(f, m1hi, V(kk)));
    ir_add(f, ir_else(f, fst), ir_assign(f, m1lo, B(IR_MIN, V(m1lo), V(kk))));
    ir_add(f, ir_else(f, fst), ir_assign(f, m1hi, B(IR_MAX, V(m1hi), V(kk))));
  }
  ir_add(f, nz, ir_assign(f, nbk, B(IR_SUB, V(z), V(a))));
  ir_var pp = lang_fresh_local(f, "pp", IR_I64, false);
  const ir_var lv[7] = {i, kk, xx, j, sl, dp, pp};
  ir_stmt *old = NULL;
  if ((s = packed_sort(C, f, nz, &old, (const pk_ctx){.o = o, .tmp = tmp, .vout = vout,
                                                      .vtmp = vtmp, .comb = comb, .lo0 = lo0,
                                                      .sh0 = sh0, .base = base, .nbk = nbk,
                                                      .m1lo = m1lo, .m1hi = m1hi, .w = w,
                                                      .i = i, .xx = xx, .kk = kk, .sl = sl,
                                                      .dp = dp, .j = j, .hc = hc, .wk = wk,
                                                      .w2 = w2, .wsw = wsw},
                       e)))
    return s;
  nz = old; /* else: by rows (lc), then within rows */
  {
    ir_expr *fa[3] = {I(0), B(IR_ADD, V(R), I(1)), I(0)};
    ir_add(f, nz, ir_call(f, IR_FILL, &lc, 1, fa, 3));
  }
  lb = ir_body(ir_add(f, nz, ir_for(f, i, I(0), V(nbk), NULL)));
  if ((s = remap_at(C, f, lb, tmp, i, outs, e))) return s;
  ir_add(f, lb, ir_assign(f, r, B(IR_ADD, B(IR_SUB, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(lo0)), V(base)), I(1))));
  ir_add(f, lb, ir_store(f, lc, V(r), B(IR_ADD, ir_load(f, lc, V(r)), I(1))));
  {
    ir_expr *ps[2] = {I(0), B(IR_ADD, V(R), I(1))};
    ir_add(f, nz, ir_call(f, IR_PREFIX_SUM, &lc, 1, ps, 2));
  }
  /* Mostly rows of more than 32 (a skewed matrix's): the whole bucket by
   * k1 (LSD, 11-bit digits), then stably by row (the counts' starts in
   * lc); else by row, then each row by k1 (insertion sort, or the LSD by
   * bytes past 32) */
  ir_add(f, nz, ir_assign(f, lng, I(0)));
  lb = ir_body(ir_add(f, nz, ir_for(f, r, I(0), V(R), NULL)));
  ir_add(f, lb, ir_assign(f, ln, B(IR_SUB, ir_load(f, lc, B(IR_ADD, V(r), I(1))), ir_load(f, lc, V(r)))));
  ir_add(f, ir_then(ir_add(f, lb, ir_if(f, B(IR_GT, V(ln), I(32)), NULL, NULL))),
         ir_assign(f, lng, B(IR_ADD, V(lng), V(ln))));
  ir_stmt *ifb = ir_add(f, nz, ir_if(f, B(IR_GT, B(IR_MUL, V(lng), I(2)), V(nbk)), NULL, NULL));
  ir_stmt *pB = ir_then(ifb), *pA = ir_else(f, ifb);
  lb = ir_body(ir_add(f, pB, ir_for(f, t, I(0), V(nbk), NULL)));
  if ((s = remap_at(C, f, lb, tmp, t, outs, e))) return s;
  ir_add(f, lb, ir_store(f, skey, V(t), ir_cast(f, IR_I64, outs[1])));
  ir_add(f, lb, ir_store(f, sidx, V(t), V(t)));
  ir_add(f, pB, ir_assign(f, ra, I(0)));
  lsd_pairs(f, pB, skey, sidx, k2, x2, dc, ra, nbk, 11, lv);
  lb = ir_body(ir_add(f, pB, ir_for(f, t, I(0), V(nbk), NULL)));
  ir_add(f, lb, ir_assign(f, xx, ir_load(f, sidx, V(t))));
  if ((s = remap_at(C, f, lb, tmp, xx, outs, e))) return s;
  ir_add(f, lb, ir_assign(f, r, B(IR_SUB, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(lo0)), V(base))));
  ir_add(f, lb, ir_assign(f, sl, ir_load(f, lc, V(r))));
  ir_add(f, lb, ir_store(f, lc, V(r), B(IR_ADD, V(sl), I(1))));
  ir_add(f, lb, ir_store(f, x2, V(sl), V(xx)));
  lb = ir_body(ir_add(f, pB, ir_for(f, t, I(0), V(nbk), NULL)));
  ir_add(f, lb, ir_store(f, sidx, V(t), ir_load(f, x2, V(t))));
  lb = ir_body(ir_add(f, pA, ir_for(f, t, I(0), V(nbk), NULL)));
  if ((s = remap_at(C, f, lb, tmp, t, outs, e))) return s;
  ir_add(f, lb, ir_assign(f, r, B(IR_SUB, B(IR_SUB, ir_cast(f, IR_I64, outs[0]), V(lo0)), V(base))));
  ir_add(f, lb, ir_assign(f, sl, ir_load(f, lc, V(r))));
  ir_add(f, lb, ir_store(f, lc, V(r), B(IR_ADD, V(sl), I(1))));
  ir_add(f, lb, ir_store(f, skey, V(sl), ir_cast(f, IR_I64, outs[1])));
  ir_add(f, lb, ir_store(f, sidx, V(sl), V(t)));
  /* lc[r] is row r's end: each row of two or more sorted by k1 */
  ir_add(f, pA, ir_assign(f, ra, I(0)));
  ir_stmt *rb = ir_body(ir_add(f, pA, ir_for(f, r, I(0), V(R), NULL)));
  ir_add(f, rb, ir_assign(f, rz, ir_load(f, lc, V(r))));
  ir_add(f, rb, ir_assign(f, ln, B(IR_SUB, V(rz), V(ra))));
  ir_stmt *two = ir_add(f, rb, ir_if(f, B(IR_LE, V(ln), I(32)), NULL, NULL));
  { /* insertion sort, stable */
    ir_stmt *ib = ir_body(ir_add(f, ir_then(two), ir_for(f, i, B(IR_ADD, V(ra), I(1)), V(rz), NULL)));
    ir_add(f, ib, ir_assign(f, kk, ir_load(f, skey, V(i))));
    ir_add(f, ib, ir_assign(f, xx, ir_load(f, sidx, V(i))));
    ir_add(f, ib, ir_assign(f, j, V(i)));
    ir_stmt *wb = ir_body(ir_add(f, ib, ir_while(f, ir_bool(f, true), NULL)));
    ir_add(f, ir_then(ir_add(f, wb, ir_if(f, B(IR_LE, V(j), V(ra)), NULL, NULL))), ir_break(f));
    ir_expr *pk = ir_load(f, skey, B(IR_SUB, V(j), I(1)));
    ir_add(f, ir_then(ir_add(f, wb, ir_if(f, B(IR_LE, pk, V(kk)), NULL, NULL))), ir_break(f));
    ir_add(f, wb, ir_store(f, skey, V(j), ir_load(f, skey, B(IR_SUB, V(j), I(1)))));
    ir_add(f, wb, ir_store(f, sidx, V(j), ir_load(f, sidx, B(IR_SUB, V(j), I(1)))));
    ir_add(f, wb, ir_assign(f, j, B(IR_SUB, V(j), I(1))));
    ir_add(f, ib, ir_store(f, skey, V(j), V(kk)));
    ir_add(f, ib, ir_store(f, sidx, V(j), V(xx)));
  }
  /* a long row: an LSD radix sort of (k1 - its least k1) by bytes,
   * stable, in cache (k2 / x2: scratch of the largest bucket, made once),
   * as many passes as the row's range of k1 has bytes.  (The runtime's
   * sort_perm, allocating per row, took 27% of an R-MAT 2^17 shuffled COO
   * to CSR: 117 -> 64 ms.) */
  lsd_pairs(f, ir_else(f, two), skey, sidx, k2, x2, dc, ra, rz, 8, lv);
  ir_add(f, rb, ir_assign(f, ra, V(rz)));
  /* written out in order at w (<= a + i: the copy in cache is read, the
   * bucket's place written); with comb a component equal in (k0, k1) to
   * the one before -- a repeat, after it in the source since the sorts
   * are stable -- is combined into it by --dup, as the sort path does */
  ir_stmt *wb = ir_body(ir_add(f, nz, ir_for(f, i, I(0), B(IR_SUB, V(z), V(a)), NULL)));
  ir_add(f, wb, ir_assign(f, xx, ir_load(f, sidx, V(i))));
  ir_stmt *put = wb;
  if (comb) {
    if ((s = remap_at(C, f, wb, tmp, xx, outs, e))) return s;
    ir_add(f, wb, ir_assign(f, kk, ir_cast(f, IR_I64, outs[0])));
    ir_add(f, wb, ir_assign(f, sl, ir_cast(f, IR_I64, outs[1])));
    ir_expr *rep = B(IR_LAND, B(IR_GT, V(w), V(w0)),
                     B(IR_LAND, B(IR_EQ, V(kk), V(pk0)), B(IR_EQ, V(sl), V(pk1))));
    ir_stmt *ifr = ir_add(f, wb, ir_if(f, rep, NULL, NULL));
    combine_dup(C, f, ir_then(ifr), vout, vtmp, w, xx);
    put = ir_else(f, ifr);
    ir_add(f, put, ir_assign(f, pk0, V(kk)));
    ir_add(f, put, ir_assign(f, pk1, V(sl)));
  }
  for (int k = 0; k < C->order; k++) ir_add(f, put, ir_store(f, o[k], V(w), ir_load(f, tmp[k], V(xx))));
  if (vout >= 0) ir_add(f, put, ir_store(f, vout, V(w), ir_load(f, vtmp, V(xx))));
  ir_add(f, put, ir_assign(f, w, B(IR_ADD, V(w), I(1))));
#undef V
#undef I
#undef B
  ir_add(f, body, ir_free(f, lc));
  ir_add(f, body, ir_free(f, skey));
  ir_add(f, body, ir_free(f, sidx));
  ir_add(f, body, ir_free(f, k2));
  ir_add(f, body, ir_free(f, x2));
  ir_add(f, body, ir_free(f, dc));
  ir_add(f, body, ir_free(f, hc));
  ir_add(f, body, ir_free(f, wk));
  ir_add(f, body, ir_free(f, w2));
  ir_add(f, body, ir_free(f, wsw));
  for (int k = 0; k < C->order; k++) ir_add(f, body, ir_free(f, tmp[k]));
  if (vtmp >= 0) ir_add(f, body, ir_free(f, vtmp));
  ir_add(f, body, ir_assign(f, nout, ir_ref(f, w)));
  return ir_verify(f, e);
}

/* The rows' bucket shift for n components under an extent N0: buckets
 * of about 16384 components (packed_sort's copy, words and scratch,
 * about 32 bytes a component, in the core's 1 MB L2), at most 256 of
 * them (the scatter's write streams): the power of two of rows whose
 * bucket count is nearest that.  Shuffled COO to CSR, one thread, ms,
 * with packed_sort (session 33; JIT, best of three runs of 11): 8 k
 * against 16 k components a bucket, R-MAT 2^17 23.6 / 22.4, 3000 x 3000
 * with 2.4 M 24.1 / 22.3, uniform 10^6 x 10^6 with 4 M 54.8 / 51.0,
 * R-MAT 2^19 (8.2 M, 256 buckets either way) 100 / 101; 32 k and 64 k
 * were slower on R-MAT 2^17 (a third digit) and the 3000 x 3000.  With
 * the sort before it (16-byte pairs, about 64 bytes a component), 8 k
 * was best (session 32: R-MAT 2^17 64 buckets 35.4-36.8 ms, 256
 * 28.9-30.5; R-MAT 2^19 512 buckets 137-145 against 256's 109-116). */
static int64_t rbucket_shift(int64_t n, int64_t N0) {
  int64_t want = n >> 14;
  if (want > 256) want = 256;
  if (want < 1) want = 1;
  int sh = 0;
  while (sh < 62 && (((N0 - 1) >> sh) + 1) > want) sh++; /* at most want buckets */
  if (sh > 0) { /* twice as many, when nearer want and still at most 256 */
    int64_t c = ((N0 - 1) >> (sh - 1)) + 1;
    if (c <= 256 && 2 * c <= 3 * want) sh--;
  }
  return sh;
}

/* One run of the counting routine on the components crd / val: *ok 1 and
 * *out the result, or 0 (out of order) / -1 (a duplicate) and nothing.
 * A routine that takes the source's arrays (F->gd >= 0: crd[gd] and val
 * are the caller's to hand over) sets them NULL where the result took
 * them. */
static spc_status count_once(conv *C, const countfn *F, void **crd, void **val,
                             conv_tensor **out, int64_t *ok, spc_error *e) {
  ir_arg *args = spc_calloc((size_t)ir_nparams(F->f), sizeof *args);
  spc_status s = SPC_OK;
  *ok = 0;
  if (!args) return SPC_NOMEM(e);
  int k = 0;
  for (; k < C->order; k++) args[k] = (ir_arg){.data = crd[k], .len = C->n};
  if (C->vt != SPC_PATTERN) args[k++] = (ir_arg){.data = *val, .len = C->n};
  args[k++].s.i64 = C->n;
  for (int l = 0; l < 2; l++) {
    args[k++].s.i64 = C->N[l];
    args[k++].s.i64 = C->lo[l];
  }
  args[k++].s.i64 = C->limit;
  s = F->rc ? rc_run(C, F->rc, args, e) : asm_run(&C->eng, F->f, args, e);
  if (F->gd >= 0) { /* handed back (NULL: the result's now) */
    crd[F->gd] = args[F->gd].data;
    if (C->vt != SPC_PATTERN) *val = args[C->order].data;
  }
  conv_tensor *ct = NULL;
  if (!s) *ok = args[F->p_ok].s.i64;
  if (!s && *ok == 1) {
    if (!(ct = new_result(C, C->comb->dims))) {
      s = SPC_NOMEM(e);
    } else {
      spc_tensor *t = &ct->t;
      adopt_arrays(C, ct, 1, &args[F->p_arr0], C->lv[1]->lf->narrays);
      if (F->p_vout >= 0) {
        t->val = args[F->p_vout].data;
        t->nval = args[F->p_vout].len;
        t->val_owned = true;
        args[F->p_vout].data = NULL;
      } else {
        t->nval = args[F->p_size].s.i64;
      }
      *out = ct;
    }
  }
  for (int a = 0; a < F->narr; a++) spc_free(args[F->p_arr0 + a].data);
  if (F->p_vout >= 0) spc_free(args[F->p_vout].data);
  spc_free(args);
  return s;
}

/* ---- the fused routines: a converted source read through its own levels -----
 * spc_conv_fcount(source arrays.., [svals], sext, sq0, sq1, N0, lo0, N1, lo1,
 *                 serial, cnt, last, res)
 * counts the components under the top-level positions [sq0, sq1) into
 * cnt with pass 0's checks; res = {ok, sorted01, sorted10, first k0, first
 * k1, last k0, last k1} (first k0 0: no component).  With serial set and
 * neither order holding, counts again with the per-parent check on last
 * (pass 1), which the caller zeroed.
 * spc_conv_fplace(source arrays.., [svals], sext, sq0, sq1, N0, lo0, N1,
 *                 lo1, size, arrays of level 1.., [vout])
 * places them (pass 2), each position checked against size. */
/* Whether a source of info SI whose levels have properties props yields
 * its components strictly increasing in the target's (c0, c1) or (c1, c0)
 * order, by those properties alone: two levels, each a plain tensor index
 * (as is each target level), each ORDERED and UNIQUE.  props are the
 * instance's (readers set them from the data, conversions from the
 * target's spec, spgemm --unsorted drops ORDERED), or the spec's for the
 * factory's routines. */
static bool fcount_known(const conv *C, const conv_info *SI, const unsigned *props) {
  if (C->order != 2 || C->L != 2 || SI->nlevels != 2) return false;
  int t0 = level_dim(C->r, 0), t1 = level_dim(C->r, 1), sd[2] = {-1, -1};
  if (t0 < 0 || t1 < 0 || t0 == t1) return false;
  conv_info I = *SI;
  spc_remap *sr = NULL;
  asm_inv iv[SPC_MAX_ORDER];
  spc_error e;
  bool ok = !asm_read_info(&I, 2, &sr, iv, &e);
  spc_remap_free(&sr);
  for (int d = 0; ok && d < 2; d++)
    if (iv[d].b < 0 && iv[d].a >= 0 && iv[d].a < 2) sd[iv[d].a] = d;
  const unsigned need = SPC_LP_ORDERED | SPC_LP_UNIQUE;
  for (int l = 0; ok && l < 2; l++)
    ok = sd[l] >= 0 && (props[l] & need) == need && SI->lv[l]->unique;
  return ok && sd[0] != sd[1] &&
         ((sd[0] == t0 && sd[1] == t1) || (sd[0] == t1 && sd[1] == t0));
}

/* A fused routine's start: *out named name, the source's parameters
 * (*S, freed here on failure) and N0, lo0, N1, lo1 (Nlo). */
static spc_status fsrc_head(conv *C, const conv_info *SI, const char *name, ir_func **out,
                            asm_src **S, ir_var *Nlo, spc_error *e) {
  ir_func *f = *out = ir_func_new(name);
  if (!f) return SPC_NOMEM(e);
  spc_status s = asm_src_new(SI, C->order, C->vt, true, f, S, e);
  if (s) {
    asm_src_free(S);
    return s;
  }
  sparams_Nlo(f, Nlo);
  return SPC_OK;
}

/* spc_conv_fcount over a source of info SI.  known (fcount_known): pass
 * 0 only counts, and res says ok, both orders hold and no first component
 * (so run_fused checks no chunk borders); otherwise every component is
 * checked as below.  flat: pass 0 over level 1's positions in one loop
 * where the source allows (asm_src_nest_flat: fv its two never-assigned
 * variables, else -1; build_fcount below decides). */
static spc_status fcount_ir(conv *C, const conv_info *SI, bool known, bool flat, ir_var *fv,
                            ir_func **out, spc_error *e) {
  fv[0] = fv[1] = -1;
  asm_src *S = NULL;
  ir_var Nlo[4];
  spc_status s = fsrc_head(C, SI, "spc_conv_fcount", out, &S, Nlo, e);
  if (s) return s;
  ir_func *f = *out;
  ir_stmt *body = ir_func_body(f);
  ir_var serial = ir_param(f, "serial", IR_I64, false, IR_IN);
  ir_var cnt = ir_param(f, "cnt", IR_I64, true, IR_INOUT);
  ir_var last = ir_param(f, "last", IR_I64, true, IR_INOUT);
  ir_var res = ir_param(f, "res", IR_I64, true, IR_INOUT);
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo);
  cbody X = {.C = C, .b0 = &b0, .b1 = &b1, .cnt = cnt, .last = last, .vout = -1, .t = -1,
             .from = -1, .known = known};
  ir_var np1 = lang_fresh_local(f, "np1", IR_I64, false);
  s = asm_lower_fn(f, body, &b0, SPC_LF_SIZE, np1, NULL, e);
  X.ok = lang_fresh_local(f, "ok", IR_I64, false);
  X.stop = lang_fresh_local(f, "stop", IR_I64, false);
  X.seen = lang_fresh_local(f, "seen", IR_I64, false);
  X.f0 = lang_fresh_local(f, "f0", IR_I64, false);
  X.f1 = lang_fresh_local(f, "f1", IR_I64, false);
  ir_var zero[] = {X.stop, X.seen, X.f0, X.f1};
  for (int k = 0; k < 4; k++) ir_add(f, body, ir_assign(f, zero[k], ir_int(f, 0)));
  ir_add(f, body, ir_assign(f, X.ok, ir_int(f, 1)));
  cbody_locals(f, body, &X);
  X.pass = 0;
  /* known: pass 0 checks nothing, so never stops -- no test of stop a
   * component (CSR to CSC's count loop) */
  ir_var stop0 = known ? -1 : X.stop;
  if (!s && flat) {
    s = asm_src_nest_flat(S, body, stop0, count_leaf, &X, fv, e);
  } else if (!s) {
    s = asm_src_nest(S, body, stop0, count_leaf, &X, e);
  }
  if (!s) { /* pass 1, serially, when neither order holds */
    ir_expr *neither = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_ref(f, serial), ir_int(f, 0)),
                              ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, X.ok), ir_int(f, 1)),
                                     ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, X.sa), ir_int(f, 0)),
                                            ir_bin(f, IR_EQ, ir_ref(f, X.sb), ir_int(f, 0)))));
    ir_stmt *into = ir_then(ir_add(f, body, ir_if(f, neither, NULL, NULL)));
    ir_var x = lang_fresh_local(f, "x", IR_I64, false);
    ir_stmt *z = ir_add(f, into, ir_for(f, x, ir_int(f, 0), ir_ref(f, np1), NULL));
    ir_add(f, ir_body(z), ir_store(f, cnt, ir_ref(f, x), ir_int(f, 0)));
    ir_add(f, into, ir_assign(f, X.stop, ir_int(f, 0)));
    X.pass = 1;
    s = asm_src_nest(S, into, X.stop, count_leaf, &X, e);
  }
  ir_var put[] = {X.ok, X.sa, X.sb, X.f0, X.f1, X.pk0, X.pk1};
  for (int k = 0; k < 7 && !s; k++) ir_add(f, body, ir_store(f, res, ir_int(f, k), ir_ref(f, put[k])));
  asm_src_free(&S);
  return s ? s : ir_verify(f, e);
}

/* In the levels' order (known), pass 0 only counts: flat where nothing
 * it does reads level 0's coordinate or level 1's parent position (CSR
 * to CSC: the column alone, crd[q]), one loop instead of a loop per row
 * -- the rows' ends were a mispredicted branch each.  Else (CSR to DCSR:
 * the row; a dense second level: access q - p N) the nested loops. */
static spc_status build_fcount(conv *C, const conv_info *SI, bool known, ir_func **out,
                               spc_error *e) {
  ir_var fv[2];
  spc_status s = fcount_ir(C, SI, known, known, fv, out, e);
  int r = !s && fv[0] >= 0 ? ir_prune_from(*out, fv, 2) : 1;
  if (r < 0) s = SPC_NOMEM(e);
  if (!s && r == 0) {
    ir_func_free(out);
    s = fcount_ir(C, SI, known, false, fv, out, e);
  }
  return s;
}

static spc_status build_fplace(conv *C, const conv_info *SI, ir_func **out, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  asm_src *S = NULL;
  ir_var Nlo[4];
  spc_status s = fsrc_head(C, SI, "spc_conv_fplace", out, &S, Nlo, e);
  if (s) return s;
  ir_func *f = *out;
  ir_stmt *body = ir_func_body(f);
  ir_var size = ir_param(f, "size", IR_I64, false, IR_IN);
  lvbind b0, b1;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  ir_var vout = C->vt != SPC_PATTERN ? ir_param(f, "vout", asm_value_ty(C->vt), true, IR_INOUT) : -1;
  sbind(C, f, body, &b0, &b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1.arr[k] = keep[k];
  cbody X = {.C = C, .b0 = &b0, .b1 = &b1, .vout = vout, .stop = -1, .t = -1, .from = -1,
             .seen = -1, .pass = 2, .size = size};
  s = asm_src_nest(S, body, -1, count_leaf, &X, e);
  asm_src_free(&S);
  return s ? s : ir_verify(f, e);
}

/* ---- the partitioned placement -------------------------------------------------
 * A fused source in another order than the target's (CSR to CSC) is
 * placed by a scatter: each component to its parent's cursor, np1 write
 * streams.  Past the last-level cache (np1 lines of output and of values
 * with the cursors) every store misses.  Partitioned instead: the
 * components copied as a COO in the order of buckets of 2^sh parents
 * (spc_conv_fbucket, at most 512 buckets: write streams the cache keeps),
 * then each bucket's placed with its parents' cursors and output in
 * cache (the COO's spc_conv_splace).  Within a parent the components
 * keep the source's order, so the result is the fused place's, bit for
 * bit.
 * spc_conv_fbucket(source arrays.., [svals], sext, sq0, sq1, N0, lo0, N1,
 *                  lo1, sh, ntot, bcur, crd0.., [vout])
 * copies the components under the top-level positions [sq0, sq1): each
 * to position bcur[b]++ of the COO crd / vout, b its parent's bucket (a
 * position past ntot is an error: nothing written out of bounds). */
/* A component read through the source's levels (x), remapped (outs) and
 * its parent's position yielded by the top level (b0's q), for the
 * copies below; src: the source's coordinates. */
static spc_status fentry(conv *C, ir_func *f, ir_stmt *lb, ir_expr *const *x, lvbind *b0,
                         ir_expr **src, ir_expr **outs, spc_error *e) {
  req_ctx rq = {.C = C};
  spc_status s = lower_source_x(C, f, lb, x, false, &rq, src, e);
  if (!s) s = spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
  if (s) return s;
  ir_add(f, lb, ir_assign(f, b0->p, ir_cast(f, C->index_ty, ir_int(f, 0))));
  ir_add(f, lb, ir_assign(f, b0->c, ir_cast(f, C->coord_ty, outs[0])));
  return asm_lower_fn(f, lb, b0, SPC_LF_YIELD, b0->q, NULL, e);
}

/* p = bcur[b]++ for the bucket b = q >> sh of the parent b0's q (a
 * position past ntot fails: nothing written out of bounds). */
static void bucket_next(ir_func *f, ir_stmt *lb, const lvbind *b0, ir_var sh, ir_var ntot,
                        ir_var bcur, ir_var b, ir_var p) {
  ir_add(f, lb, ir_assign(f, b, ir_bin(f, IR_SHR, ir_cast(f, IR_I64, ir_ref(f, b0->q)), ir_ref(f, sh))));
  ir_add(f, lb, ir_assign(f, p, ir_load(f, bcur, ir_ref(f, b))));
  ir_stmt *bad = ir_add(f, lb, ir_if(f, ir_bin(f, IR_GE, ir_ref(f, p), ir_ref(f, ntot)), NULL, NULL));
  ir_add(f, ir_then(bad), ir_fail(f, SPC_ERR_INPUT,
                                  "the source changed between the counting and the placing pass",
                                  NULL, 0));
  ir_add(f, lb, ir_store(f, bcur, ir_ref(f, b), ir_bin(f, IR_ADD, ir_ref(f, p), ir_int(f, 1))));
}

/* The copies' bindings: both levels, the bucket b and position p. */
static void copy_locals(conv *C, ir_func *f, ir_stmt *body, lvbind *b0, lvbind *b1, ir_var *Nlo,
                        ir_var *b, ir_var *p) {
  sbind(C, f, body, b0, b1, Nlo);
  *b = lang_fresh_local(f, "b", IR_I64, false);
  *p = lang_fresh_local(f, "p", IR_I64, false);
}

typedef struct fbctx {
  conv *C;
  lvbind *b0;
  ir_var sh, ntot, bcur, b, p, vout;
  ir_var crd[SPC_MAX_ORDER];
  ir_ty cty;
} fbctx;

static spc_status fbucket_leaf(void *ctx, ir_func *f, ir_stmt *lb, ir_expr *const *x, ir_expr *val,
                               spc_error *e) {
  const fbctx *X = ctx;
  conv *C = X->C;
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_status s = fentry(C, f, lb, x, X->b0, src, outs, e);
  if (s) return s;
  bucket_next(f, lb, X->b0, X->sh, X->ntot, X->bcur, X->b, X->p);
  for (int k = 0; k < C->order; k++)
    ir_add(f, lb, ir_store(f, X->crd[k], ir_ref(f, X->p), ir_cast(f, X->cty, src[k])));
  if (X->vout >= 0 && val) ir_add(f, lb, ir_store(f, X->vout, ir_ref(f, X->p), val));
  return SPC_OK;
}

/* crd32: the COO's coordinates in int32 (else int64). */
static spc_status build_fbucket(conv *C, const conv_info *SI, bool crd32, ir_func **out,
                                spc_error *e) {
  asm_src *S = NULL;
  ir_var Nlo[4];
  spc_status s = fsrc_head(C, SI, "spc_conv_fbucket", out, &S, Nlo, e);
  if (s) return s;
  ir_func *f = *out;
  ir_func_set_noalias(f); /* the source, the cursors, the COO: distinct arrays */
  ir_stmt *body = ir_func_body(f);
  fbctx X = {.C = C, .cty = crd32 ? IR_I32 : IR_I64, .vout = -1};
  X.sh = ir_param(f, "sh", IR_I64, false, IR_IN);
  X.ntot = ir_param(f, "ntot", IR_I64, false, IR_IN);
  X.bcur = ir_param(f, "bcur", IR_I64, true, IR_INOUT);
  char name[32];
  for (int k = 0; k < C->order; k++) {
    snprintf(name, sizeof name, "crd%d", k);
    X.crd[k] = ir_param(f, name, X.cty, true, IR_INOUT);
  }
  if (C->vt != SPC_PATTERN) X.vout = ir_param(f, "vout", asm_value_ty(C->vt), true, IR_INOUT);
  lvbind b0, b1;
  copy_locals(C, f, body, &b0, &b1, Nlo, &X.b, &X.p);
  X.b0 = &b0;
  s = asm_src_nest(S, body, -1, fbucket_leaf, &X, e);
  asm_src_free(&S);
  return s ? s : ir_verify(f, e);
}

/* ---- the in-place partitioned placement ----------------------------------------
 * The partitioned placement above copies the components into a COO of
 * fresh memory (16 bytes a component) and places the COO.  In place, the
 * copy goes into the result's own arrays instead: the child level's array
 * that insert_coord fills with the coordinate (compressed: crd) and the
 * values, in the order of buckets of 2^sh parents -- each bucket's
 * components within its own parents' positions (run_inplace checks that
 * the level's cursors start at the counts' prefix sums).  The coordinate
 * goes in as a word (c << sh) | (parent & (2^sh - 1)) where it fits the
 * array's type (mode 0), else as it is with the parent's low bits in an
 * int32 array (mode 1).  Then each bucket (about 256 of them: the copy's
 * write streams stay in the L1/L2 caches) is copied out to a scratch of
 * one bucket and placed back through the level's own yield_pos and
 * insert_coord, its parents' cursors and output lines in cache.  Within a
 * parent the components keep the source's order: the scatter's arrays
 * bit for bit.  CSR to CSC of R-MAT 2^17 (1.9 M), one thread: 11.4 ms
 * scatter, 7.5 ms in place.
 * spc_conv_fbpack(source arrays.., [svals], sext, sq0, sq1, N0, lo0, N1,
 *                 lo1, sh, ntot, bcur, word, [loc], [vout])
 * spc_conv_bplace(N0, lo0, N1, lo1, sh, b0, b1, bst, level arrays..,
 *                 [vout], sw, [sl, loc], [sv]) */
typedef struct fpctx {
  conv *C;
  lvbind *b0;
  ir_var sh, ntot, bcur, b, p, word, loc, vout;
  ir_ty wty;
} fpctx;

static void bpack_put(const fpctx *X, ir_func *f, ir_stmt *lb, ir_expr *c1, ir_expr *val);

static spc_status fbpack_leaf(void *ctx, ir_func *f, ir_stmt *lb, ir_expr *const *x, ir_expr *val,
                              spc_error *e) {
  const fpctx *X = ctx;
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_status s = fentry(X->C, f, lb, x, X->b0, src, outs, e);
  if (!s) bpack_put(X, f, lb, outs[1], val);
  return s;
}

/* The component's word (and low bits) and value to the next position of
 * its parent's bucket (b0's q the parent, c1 its child coordinate). */
static void bpack_put(const fpctx *X, ir_func *f, ir_stmt *lb, ir_expr *c1, ir_expr *val) {
  lvbind *b0 = X->b0;
  bucket_next(f, lb, b0, X->sh, X->ntot, X->bcur, X->b, X->p);
  ir_expr *low = ir_bin(f, IR_BAND, ir_cast(f, IR_I64, ir_ref(f, b0->q)),
                        ir_bin(f, IR_SUB, ir_bin(f, IR_SHL, ir_int(f, 1), ir_ref(f, X->sh)), ir_int(f, 1)));
  ir_expr *c = ir_cast(f, IR_I64, c1);
  if (X->loc < 0) {
    ir_expr *w = ir_bin(f, IR_BOR, ir_bin(f, IR_SHL, c, ir_ref(f, X->sh)), low);
    ir_add(f, lb, ir_store(f, X->word, ir_ref(f, X->p), ir_cast(f, X->wty, w)));
  } else {
    ir_add(f, lb, ir_store(f, X->word, ir_ref(f, X->p), ir_cast(f, X->wty, c)));
    ir_add(f, lb, ir_store(f, X->loc, ir_ref(f, X->p), ir_cast(f, IR_I32, low)));
  }
  if (X->vout >= 0 && val) ir_add(f, lb, ir_store(f, X->vout, ir_ref(f, X->p), val));
}

/* The child level's array insert_coord fills (ip_plan's *gk): its type. */
static ir_ty ip_word_ty(const conv *C, int gk) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  return asm_tname_ty(l1->arrays[gk].type, C->index_ty, C->coord_ty);
}

/* The in-place copies' parameters after the source's: sh, ntot, bcur,
 * word (level array gk's type), loc (mode 1) and vout. */
static void bpack_params(conv *C, ir_func *f, fpctx *X, int mode, int gk) {
  *X = (fpctx){.C = C, .wty = ip_word_ty(C, gk), .loc = -1, .vout = -1};
  X->sh = ir_param(f, "sh", IR_I64, false, IR_IN);
  X->ntot = ir_param(f, "ntot", IR_I64, false, IR_IN);
  X->bcur = ir_param(f, "bcur", IR_I64, true, IR_INOUT);
  X->word = ir_param(f, "word", X->wty, true, IR_INOUT);
  if (mode) X->loc = ir_param(f, "loc", IR_I32, true, IR_INOUT);
  if (C->vt != SPC_PATTERN) X->vout = ir_param(f, "vout", asm_value_ty(C->vt), true, IR_INOUT);
}

/* mode 0: packed words; 1: the parent's low bits in loc.  gk: ip_plan's. */
static spc_status build_fbpack(conv *C, const conv_info *SI, int mode, int gk, ir_func **out,
                               spc_error *e) {
  asm_src *S = NULL;
  ir_var Nlo[4];
  spc_status s = fsrc_head(C, SI, mode ? "spc_conv_fbpack_loc" : "spc_conv_fbpack", out, &S, Nlo, e);
  if (s) return s;
  ir_func *f = *out;
  ir_func_set_noalias(f); /* the source, the cursors, the result's arrays: distinct */
  ir_stmt *body = ir_func_body(f);
  fpctx X;
  bpack_params(C, f, &X, mode, gk);
  lvbind b0, b1;
  copy_locals(C, f, body, &b0, &b1, Nlo, &X.b, &X.p);
  X.b0 = &b0;
  s = asm_src_nest(S, body, -1, fbpack_leaf, &X, e);
  asm_src_free(&S);
  return s ? s : ir_verify(f, e);
}

/* spc_conv_cbpack: the same copy from a COO's components [t0, t1) (the
 * other order's counting plan: count_chunks_par).
 * spc_conv_cbpack(crd0.., [vals], t0, t1, N0, lo0, N1, lo1, sh, ntot,
 *                 bcur, word, [loc], [vout]) */
static spc_status build_cbpack(conv *C, int mode, int gk, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new(mode ? "spc_conv_cbpack_loc" : "spc_conv_cbpack");
  if (!f) return SPC_NOMEM(e);
  ir_func_set_noalias(f);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], Nlo[4];
  sparams_crd(C, f, crd, -1);
  ir_ty vty = asm_value_ty(C->vt);
  ir_var vals = C->vt != SPC_PATTERN ? ir_param(f, "vals", vty, true, IR_IN) : -1;
  ir_var t0 = ir_param(f, "t0", IR_I64, false, IR_IN);
  ir_var t1 = ir_param(f, "t1", IR_I64, false, IR_IN);
  sparams_Nlo(f, Nlo);
  fpctx X;
  bpack_params(C, f, &X, mode, gk);
  lvbind b0, b1;
  copy_locals(C, f, body, &b0, &b1, Nlo, &X.b, &X.p);
  X.b0 = &b0;
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_ref(f, t0), ir_ref(f, t1), NULL)));
  ir_expr *outs[SPC_MAX_ORDER];
  spc_status s = sentry(C, f, lb, crd, t, false, &b0, outs, e);
  if (s) return s;
  bpack_put(&X, f, lb, outs[1], vals >= 0 ? ir_load(f, vals, ir_ref(f, t)) : NULL);
  return ir_verify(f, e);
}

/* Buckets [b0, b1) placed back (see above): bucket b's components are at
 * positions [bst[b], bst[b + 1]) of the word array (level array gk) and
 * the values; a position the level yields outside them fails (the level
 * is not what run_inplace took it for: the scatter runs instead). */
static spc_status build_bplace(conv *C, int mode, int gk, ir_func **out, spc_error *e) {
#define V(x) ir_ref(f, x)
#define I(x) ir_int(f, x)
#define B(op, a, b) ir_bin(f, op, a, b)
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_func *f = *out = ir_func_new(mode ? "spc_conv_bplace_loc" : "spc_conv_bplace");
  if (!f) return SPC_NOMEM(e);
  ir_func_set_noalias(f);
  ir_stmt *body = ir_func_body(f);
  ir_var Nlo[4];
  sparams_Nlo(f, Nlo);
  ir_var sh = ir_param(f, "sh", IR_I64, false, IR_IN);
  ir_var bb0 = ir_param(f, "b0", IR_I64, false, IR_IN);
  ir_var bb1 = ir_param(f, "b1", IR_I64, false, IR_IN);
  ir_var bst = ir_param(f, "bst", IR_I64, true, IR_IN);
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  ir_ty vty = asm_value_ty(C->vt), wty = ip_word_ty(C, gk);
  ir_var vout = C->vt != SPC_PATTERN ? ir_param(f, "vout", vty, true, IR_INOUT) : -1;
  ir_var sw = ir_param(f, "sw", wty, true, IR_INOUT);
  ir_var sl = mode ? ir_param(f, "sl", IR_I32, true, IR_INOUT) : -1;
  ir_var loc = mode ? ir_param(f, "loc", IR_I32, true, IR_IN) : -1;
  ir_var sv = vout >= 0 ? ir_param(f, "sv", vty, true, IR_INOUT) : -1;
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1.arr[k] = keep[k];
  ir_var b = lang_fresh_local(f, "b", IR_I64, false);
  ir_var q0 = lang_fresh_local(f, "q0", IR_I64, false);
  ir_var n = lang_fresh_local(f, "n", IR_I64, false);
  ir_var base = lang_fresh_local(f, "base", IR_I64, false);
  ir_var mask = lang_fresh_local(f, "mask", IR_I64, false);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var w = lang_fresh_local(f, "w", IR_I64, false);
  ir_add(f, body, ir_assign(f, mask, B(IR_SUB, B(IR_SHL, I(1), V(sh)), I(1))));
  ir_stmt *bl = ir_body(ir_add(f, body, ir_for(f, b, V(bb0), V(bb1), NULL)));
  ir_add(f, bl, ir_assign(f, q0, ir_load(f, bst, V(b))));
  ir_add(f, bl, ir_assign(f, n, B(IR_SUB, ir_load(f, bst, B(IR_ADD, V(b), I(1))), V(q0))));
  ir_add(f, bl, ir_assign(f, base, B(IR_SHL, V(b), V(sh))));
  ir_add(f, bl, ir_call(f, IR_COPY, (ir_var[]){sw, keep[gk]}, 2, (ir_expr *[]){I(0), V(q0), V(n)}, 3));
  if (mode) ir_add(f, bl, ir_call(f, IR_COPY, (ir_var[]){sl, loc}, 2, (ir_expr *[]){I(0), V(q0), V(n)}, 3));
  if (sv >= 0) ir_add(f, bl, ir_call(f, IR_COPY, (ir_var[]){sv, vout}, 2, (ir_expr *[]){I(0), V(q0), V(n)}, 3));
  ir_stmt *lb = ir_body(ir_add(f, bl, ir_for(f, t, I(0), V(n), NULL)));
  ir_add(f, lb, ir_assign(f, w, ir_cast(f, IR_I64, ir_load(f, sw, V(t)))));
  if (mode) {
    ir_add(f, lb, ir_assign(f, b1.p, ir_cast(f, C->index_ty, B(IR_ADD, V(base), ir_cast(f, IR_I64, ir_load(f, sl, V(t)))))));
    ir_add(f, lb, ir_assign(f, b1.c, ir_cast(f, C->coord_ty, V(w))));
  } else {
    ir_add(f, lb, ir_assign(f, b1.p, ir_cast(f, C->index_ty, B(IR_ADD, V(base), B(IR_BAND, V(w), V(mask))))));
    ir_add(f, lb, ir_assign(f, b1.c, ir_cast(f, C->coord_ty, B(IR_SHR, V(w), V(sh)))));
  }
  spc_status s = asm_lower_fn(f, lb, &b1, SPC_LF_YIELD, b1.q, NULL, e);
  if (s) return s;
  /* q0 <= q < q0 + n, as one unsigned compare */
  ir_expr *out_of = B(IR_GE, ir_cast(f, IR_U64, B(IR_SUB, ir_cast(f, IR_I64, V(b1.q)), V(q0))),
                      ir_cast(f, IR_U64, V(n)));
  ir_stmt *iff = ir_add(f, lb, ir_if(f, out_of, NULL, NULL));
  ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_UNSUPPORTED, "a position outside its bucket", NULL, 0));
  if (asm_lfn(&b1, SPC_LF_INSERT)) s = asm_lower_fn(f, lb, &b1, SPC_LF_INSERT, -1, NULL, e);
  if (!s && vout >= 0) ir_add(f, lb, ir_store(f, vout, V(b1.q), ir_load(f, sv, V(t))));
#undef V
#undef I
#undef B
  return s ? s : ir_verify(f, e);
}

/* ---- the counting plan on several threads -------------------------------------
 * A COO in the target's order (sorted in (c0, c1) or in (c1, c0), no
 * repeat) is counted by chunks of components, one per thread (pcount),
 * and placed by the same chunks (splace).  The child level's yield_pos
 * keeps per-parent state (compressed: the pos cursor): every thread gets
 * its own copy, advanced past the parents' components of the earlier
 * chunks; after placing, each copy must have reached exactly the next
 * copy's start (and the last one the serial end state), which proves the
 * threads yielded the positions one thread would have.  Anything else --
 * a chunk out of order, a repeat, a failed `requires`, a state that is not
 * such a cursor -- leaves nothing and the serial plan runs (and reports
 * any error). */

/* Threads for the counting plan: OpenMP's count (OMP_NUM_THREADS), at
 * most 64, one per 2^17 components at least. */
static int conv_threads(int64_t n) { return asm_threads(n); }

static spc_status build_sinit(conv *C, ir_func **out, int *p_arr0, bool nozero, bool *fill,
                              spc_error *e);
static spc_status build_splace(conv *C, ir_func **out, bool runs, spc_error *e);
static spc_status build_sfinal(conv *C, ir_func **out, spc_error *e);

/* Which of level 1's arrays its yield_pos writes (its state). */
static void writes_of(const ir_stmt *st, const ir_var *arr, int narr, bool *w) {
  if (!st) return;
  if (st->kind == IR_S_STORE || st->kind == IR_S_ALLOC || st->kind == IR_S_FREE)
    for (int k = 0; k < narr; k++) w[k] |= st->var == arr[k];
  if (st->kind == IR_S_BUILTIN)
    for (int v = 0; v < st->nvars; v++)
      for (int k = 0; k < narr; k++) w[k] |= st->vars[v] == arr[k];
  for (int c = 0; c < st->nkids; c++) writes_of(st->kids[c], arr, narr, w);
}

/* A probe of the child level's function `which`: a function of its
 * arrays (keep, in-out) with `which` lowered into its body (a yield into
 * b1->q); *b1 the binding. */
static spc_status lf_probe(conv *C, spc_lfn_kind which, ir_func **out, ir_var *keep, lvbind *b1,
                           spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_func *f = *out = ir_func_new("spc_level_probe");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var Nlo[4];
  sparams_Nlo(f, Nlo);
  lvbind b0;
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  sbind(C, f, body, &b0, b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1->arr[k] = keep[k];
  if (!asm_lfn(b1, which)) return SPC_OK;
  /* the function alone: the body's last statement */
  ir_stmt *fn = ir_add(f, body, ir_block(f));
  return asm_lower_fn(f, fn, b1, which, which == SPC_LF_YIELD ? b1->q : -1, NULL, e);
}

static spc_status yield_state(conv *C, bool *w, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_func *f = NULL;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  lvbind b1;
  for (int k = 0; k < l1->narrays; k++) w[k] = false;
  spc_status s = lf_probe(C, SPC_LF_YIELD, &f, keep, &b1, e);
  if (!s) writes_of(ir_func_body(f), keep, l1->narrays, w);
  ir_func_free(&f);
  return s;
}

/* The chunks' counting done (cnt[t]: chunk t's counts per parent), the
 * rest of the plan for either source: cnt[t] becomes the counts of the
 * chunks before t and tot the total; the child level initialised from
 * tot (sinit); per chunk, a copy of its yield state advanced by cnt[t] and
 * the placing routine called (place_one, from nt threads); the copies
 * checked; finalize (sfinal); the result.  *done false and nothing made
 * when a check fails (the serial plan follows). */
typedef spc_status (*place_fn)(void *ctx, int t, ir_arg *lv, ir_arg vout, int64_t size, spc_error *e);

/* One chunk placed (place_chunks, on its thread): its own copies of the
 * state arrays, the others shared. */
typedef struct chunk_job {
  place_fn place_one;
  void *ctx;
  int narr;
  const ir_arg *arr;
  const bool *st;
  void *(*cp)[SPC_LEVEL_MAX_ARRAYS];
  ir_arg vout;
  int64_t size;
  spc_status *ts;
} chunk_job;

static void chunk_one(void *job, int t) {
  const chunk_job *J = job;
  ir_arg lv[SPC_LEVEL_MAX_ARRAYS];
  spc_error et;
  spc_error_clear(&et);
  for (int x = 0; x < J->narr; x++) {
    lv[x] = J->arr[x];
    if (J->st[x]) lv[x].data = J->cp[t][x];
  }
  J->ts[t] = J->place_one(J->ctx, t, lv, J->vout, J->size, &et);
}

/* place_chunks' passes over the parents, in four independent chains (a
 * small conversion is a few such passes; one chain ran at a cycle an
 * element): the sum of c[0..n), and whether y[g] == x[g] + add[g] below m
 * and y[g] == x[g] up to len (the differences or'ed: no early exit). */
static int64_t sum_i64(const int64_t *c, int64_t n) {
  uint64_t s[4] = {0, 0, 0, 0};
  int64_t g = 0;
  for (; g + 3 < n; g += 4)
    for (int k = 0; k < 4; k++) s[k] += (uint64_t)c[g + k];
  for (; g < n; g++) s[0] += (uint64_t)c[g];
  return (int64_t)((s[0] + s[1]) + (s[2] + s[3]));
}

#define ADVANCED(S, T)                                                                     \
  static bool advanced_##S(const void *xv, const void *yv, const int64_t *add, int64_t m,   \
                           int64_t len) {                                                  \
    const T *x = xv, *y = yv;                                                              \
    uint64_t d[4] = {0, 0, 0, 0};                                                          \
    int64_t g = 0;                                                                         \
    for (; g + 3 < m; g += 4)                                                              \
      for (int k = 0; k < 4; k++)                                                          \
        d[k] |= (uint64_t)y[g + k] - (uint64_t)x[g + k] - (uint64_t)add[g + k];            \
    for (; g < m; g++) d[0] |= (uint64_t)y[g] - (uint64_t)x[g] - (uint64_t)add[g];          \
    for (g = m; g < len; g++) d[1] |= (uint64_t)y[g] ^ (uint64_t)x[g];                     \
    return ((d[0] | d[1]) | (d[2] | d[3])) == 0;                                           \
  }
ADVANCED(i32, int32_t)
ADVANCED(i64, int64_t)
#undef ADVANCED

/* The level's arrays arr (narr; i32: which are int32) after placing, and
 * the values: finalize (rf) and the result (*out). */
static spc_status level1_result(conv *C, const rcr *rf, int64_t np1, int narr, ir_arg *arr,
                                const bool *i32, ir_arg *vout, int64_t size, conv_tensor **out,
                                spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_arg a[5 + SPC_LEVEL_MAX_ARRAYS] = {{0}};
  int k = 0;
  a[k++].s.i64 = np1;
  for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
  for (int x = 0; x < narr; x++) a[k++] = arr[x];
  spc_status s = rc_run(C, rf, a, e);
  if (s) return s;
  conv_tensor *ct = new_result(C, C->comb->dims);
  if (!ct) return SPC_NOMEM(e);
  spc_tensor *t = &ct->t;
  spc_level *lv = &t->lv[1];
  for (int x = 0; x < narr; x++) {
    lv->arr[lv->narr++] = (spc_array){.name = l1->arrays[x].name,
                                      .type = i32[x] ? SPC_IDX32 : SPC_IDX64,
                                      .len = arr[x].len, .data = arr[x].data, .owned = true};
    arr[x].data = NULL;
  }
  if (C->vt != SPC_PATTERN) {
    t->val = vout->data;
    t->nval = vout->len;
    t->val_owned = true;
    vout->data = NULL;
  } else {
    t->nval = size;
  }
  *out = ct;
  return SPC_OK;
}

static spc_status place_chunks(conv *C, int nt, int64_t np1, int64_t **cnt, place_fn place_one,
                               void *ctx, conv_tensor **out, bool *done, spc_error *e) {
  *done = false;
  spc_error e2;
  spc_error_clear(&e2);
  const spc_level_spec *l1 = C->lv[1]->lf;
  int narr = l1->narrays;
  bool i32[SPC_LEVEL_MAX_ARRAYS];
  rcr ys, ri = {0}, rf = {0};
  if (rc_get(C, NULL, RC_YSTATE, 0, &ys, &e2)) return SPC_OK;
  const bool *st = ys.v.flags; /* which of its arrays yield_pos writes */
  for (int k = 0; k < narr; k++)
    i32[k] = asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty) == IR_I32;
  ir_arg arr[SPC_LEVEL_MAX_ARRAYS] = {{0}}, vout = {0};
  void *cp[64][SPC_LEVEL_MAX_ARRAYS] = {{NULL}};
  spc_status s = rc_get(C, NULL, RC_SINIT, 1, &ri, &e2);
  ir_func *fi = ri.v.f, *ff = NULL;
  int p_arr0 = ri.v.aux[0];
  const bool *fill = ri.v.flags; /* the arrays insert_coord fills */
  if (!s) s = rc_get(C, NULL, RC_SFINAL, 0, &rf, &e2);
  ff = rf.v.f;
  bool go = !s;
  /* one chunk: the totals are its counts, and the chunks before it none
   * (cnt[0] is read as zeros by no one: the first copy is not advanced) --
   * no array of the parents made, which with the others pushed a small
   * conversion's heap past glibc's trim threshold (fresh pages each call) */
  int64_t *tot = NULL, ncomp = 0;
  if (go && nt == 1) {
    tot = cnt[0];
    ncomp = sum_i64(tot, np1);
  } else if (go && !(tot = spc_malloc((size_t)(np1 ? np1 : 1) * sizeof *tot))) {
    s = SPC_NOMEM(&e2), go = false;
  }
  for (int64_t g = 0; go && nt > 1 && g < np1; g++) {
    int64_t run = 0;
    for (int t = 0; t < nt; t++) {
      int64_t c = cnt[t][g];
      cnt[t][g] = run;
      run += c;
    }
    tot[g] = run;
    ncomp += run;
  }
  ir_arg *ai = go ? spc_calloc((size_t)ir_nparams(fi), sizeof *ai) : NULL;
  if (go && !ai) s = SPC_NOMEM(&e2), go = false;
  int64_t size = 0;
  if (go) {
    int k = 0;
    ai[k++] = (ir_arg){.data = tot, .len = np1};
    for (int l = 0; l < 2; l++) ai[k++].s.i64 = C->N[l], ai[k++].s.i64 = C->lo[l];
    ai[k++].s.i64 = C->limit;
    /* too large: the error the serial plan reports too */
    if ((s = rc_run(C, &ri, ai, &e2))) go = false;
  }
  if (go) {
    for (int k = 0; k < narr; k++) arr[k] = ai[p_arr0 + k], ai[p_arr0 + k].data = NULL;
    size = ai[p_arr0 + narr].s.i64;
    if (C->vt != SPC_PATTERN) vout = ai[p_arr0 + narr + 1], ai[p_arr0 + narr + 1].data = NULL;
    /* the values and the fill arrays were not zeroed (build_sinit): a
     * compact level of other than one position per component, or such an
     * array of another length, is left to the serial plan */
    if ((l1->props & SPC_LP_COMPACT) && size != ncomp) go = false;
    for (int k = 0; k < narr; k++)
      if (fill[k] && arr[k].len != size) go = false;
  }
  if (ai) {
    ai[0].data = NULL; /* tot: ours */
    for (int k = 0; k < ir_nparams(fi); k++)
      if (ir_var_get(fi, ir_param_var(fi, k))->array) spc_free(ai[k].data);
    spc_free(ai);
  }
  /* every chunk's copy of the state arrays, advanced past the earlier
   * chunks' components of each parent */
  for (int t = 0; t < nt && go; t++)
    for (int k = 0; k < narr && go; k++) {
      if (!st[k]) continue;
      size_t w = i32[k] ? 4 : 8;
      if (!(cp[t][k] = spc_malloc((size_t)(arr[k].len ? arr[k].len : 1) * w))) {
        s = SPC_NOMEM(&e2), go = false;
        break;
      }
      memcpy(cp[t][k], arr[k].data, (size_t)arr[k].len * w);
      int64_t m = arr[k].len < np1 ? arr[k].len : np1;
      if (t == 0) continue; /* the first chunk starts at every parent's start (cnt[0] is 0) */
      if (i32[k])
        for (int64_t g = 0; g < m; g++) ((int32_t *)cp[t][k])[g] += (int32_t)cnt[t][g];
      else
        for (int64_t g = 0; g < m; g++) ((int64_t *)cp[t][k])[g] += cnt[t][g];
    }
  spc_status ts[64] = {SPC_OK};
  if (go) {
    chunk_job J = {.place_one = place_one, .ctx = ctx, .narr = narr, .arr = arr, .st = st,
                   .cp = cp, .vout = vout, .size = size, .ts = ts};
    spc_par_for(nt, chunk_one, &J);
    for (int t = 0; t < nt; t++) go = go && !ts[t];
  }
  /* each copy ends where the next one starts (the last: the serial end) */
  for (int t = 0; t < nt && go; t++)
    for (int k = 0; k < narr && go; k++) {
      if (!st[k]) continue;
      int64_t m = arr[k].len < np1 ? arr[k].len : np1, len = arr[k].len;
      const int64_t *add = t + 1 < nt ? cnt[t + 1] : tot;
      /* typed, no early exit: one pass over each array (small conversions
       * are a few of these passes over the parents) */
      go = i32[k] ? advanced_i32(arr[k].data, cp[t][k], add, m, len)
                  : advanced_i64(arr[k].data, cp[t][k], add, m, len);
    }
  if (go) { /* the last copy is the state one thread would have left */
    for (int k = 0; k < narr; k++)
      if (st[k]) {
        spc_free(arr[k].data);
        arr[k].data = cp[nt - 1][k];
        cp[nt - 1][k] = NULL;
      }
    if (!(s = level1_result(C, &rf, np1, narr, arr, i32, &vout, size, out, &e2))) *done = true;
  }
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < narr; k++) spc_free(cp[t][k]);
  for (int k = 0; k < narr; k++) spc_free(arr[k].data);
  spc_free(vout.data);
  if (nt > 1) spc_free(tot);
  ir_func_free(&fi);
  ir_func_free(&ff);
  /* out of memory and "too large" are the caller's to see (the serial
   * plan would say the same); anything else: the serial plan */
  if (s == SPC_ERR_NOMEM || s == SPC_ERR_UNSUPPORTED) {
    if (e) *e = e2;
    return s;
  }
  return SPC_OK;
}

/* A COO's chunks: [off[t], off[t + 1]) of its components. */
/* The components in chunks: chunk t is components start[t] ..
 * start[t] + len[t] - 1 of crd / val (the source's types), the chunks in
 * order (gaps between them allowed: the rows bucketing's runs). */
typedef struct coo_chunks {
  conv *C;
  const int64_t *start, *len;
  int64_t *const *runs; /* chunk t's count per parent (splace_runs), or NULL */
  int64_t np1;
  void *crd[SPC_MAX_ORDER];
  const void *val;
  ir_func *fp;
  asm_entry ep;
} coo_chunks;

static spc_status place_coo(void *ctx, int t, ir_arg *lv, ir_arg vout, int64_t size, spc_error *e) {
  const coo_chunks *P = ctx;
  conv *C = P->C;
  ir_arg a[SPC_MAX_ORDER + 10 + SPC_LEVEL_MAX_ARRAYS];
  memset(a, 0, sizeof a);
  int64_t n = P->len[t];
  size_t wv = spc_vtype_size(C->vt);
  int k = 0;
  for (; k < C->order; k++) {
    size_t w = spc_level_array_c(&C->comb->lv[k], "crd")->type == SPC_IDX32 ? 4 : 8;
    a[k] = (ir_arg){.data = (char *)P->crd[k] + (size_t)P->start[t] * w, .len = n};
  }
  if (C->vt != SPC_PATTERN)
    a[k++] = (ir_arg){.data = (char *)(uintptr_t)P->val + (size_t)P->start[t] * wv, .len = n};
  a[k++].s.i64 = n;
  for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
  a[k++].s.i64 = size;
  for (int x = 0; x < C->lv[1]->lf->narrays; x++) a[k++] = lv[x];
  if (C->vt != SPC_PATTERN) a[k++] = vout;
  if (P->runs) a[k++] = (ir_arg){.data = P->runs[t], .len = P->np1};
  return asm_call(P->ep, P->fp, a, e);
}

/* The last-level cache's bytes, asked once: the highest cache level in
 * Linux's /sys (one instance: sysconf's L3 size on some AMD machines is
 * the sum over the chip's core complexes, 10 x its 32 MiB), else
 * sysconf's, else 32 MiB. */
static int64_t llc_bytes(void) {
  static _Atomic int64_t cached = -1;
  int64_t v = atomic_load(&cached);
  if (v >= 0) return v;
  v = 0;
  for (int i = 0, best = 0; i < 8; i++) {
    char path[96], buf[32];
    int lvl = 0;
    long long kb = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    bool ok = fgets(buf, sizeof buf, f) && sscanf(buf, "%d", &lvl) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    char unit = 'K';
    if (ok && (f = fopen(path, "r"))) {
      ok = fgets(buf, sizeof buf, f) && sscanf(buf, "%lld%c", &kb, &unit) >= 1;
      fclose(f);
    } else {
      ok = false;
    }
    int64_t bytes = unit == 'M' ? (int64_t)kb << 20 : unit == 'G' ? (int64_t)kb << 30 : (int64_t)kb << 10;
    if (ok && lvl >= best && kb > 0) best = lvl, v = bytes;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = v <= 0 ? sysconf(_SC_LEVEL3_CACHE_SIZE) : 0;
  if (l3 > 0) v = l3;
#endif
  if (v <= 0) v = (int64_t)32 << 20;
  atomic_store(&cached, v);
  return v;
}

/* ---- the partitioned placement: buckets of parents (run_partition, and a COO
 * in the other order: count_chunks_par) ------------------------------------------
 * The components of n chunks, counted per parent into cnt[t], copied (by
 * copy_fn, chunk t on its thread, cursors bcur[b] per bucket b of 2^sh
 * parents) into a COO in bucket order, chunk after chunk within a bucket;
 * then placed in runs of whole buckets on threads (place_chunks over the
 * COO with fp / ep, C->comb's coordinate types).  Within a parent the
 * components keep the chunks' order: the scatter's result bit for bit. */
typedef spc_status (*copy_fn)(void *ctx, int t, int64_t sh, int64_t ntot, int64_t *bcur,
                              int64_t nb, void *const *crd, void *vals, spc_error *e);

typedef struct copy_job {
  copy_fn fn;
  void *ctx;
  int64_t sh, ntot, nb, *bcur;
  void *const *crd;
  void *vals;
  spc_status *ts;
  spc_error *ee;
} copy_job;

static void copy_one(void *job, int t) {
  const copy_job *J = job;
  spc_error_clear(&J->ee[t]);
  J->ts[t] = J->fn(J->ctx, t, J->sh, J->ntot, J->bcur + J->nb * t, J->nb, J->crd, J->vals, &J->ee[t]);
}

/* The bucket shift for np1 parents: at most 128 buckets (the copy's write
 * streams, 3 x 128 a thread: 512 took the copy of R-MAT 2^22 from 4.9 to
 * 9 ns a component), more (up to 4096) where a bucket's parents' lines
 * (a line of coordinates, one of values and a cursor each) would pass a
 * quarter of the cache. */
static int part_shift(const conv *C, int64_t np1) {
  int sh = 0;
  const int64_t per = 64 * (C->vt != SPC_PATTERN ? 2 : 1) + 8;
  while (sh < 62 && ((np1 - 1) >> sh) + 1 > 128) sh++;
  while (sh > 0 && (per << sh) > llc_bytes() / 4 && ((np1 - 1) >> (sh - 1)) + 1 <= 4096) sh--;
  return sh;
}

/* *done false and nothing made where memory runs short (SPC_OK: the
 * scatter follows, needing no copy) or a check fails; a copy's error is
 * returned. */
static spc_status part_place(conv *C, int n, int64_t np1, int64_t **cnt, copy_fn fn, void *ctx,
                             bool crd32, ir_func *fp, asm_entry ep, conv_tensor **out, bool *done,
                             char *how, size_t hown, spc_error *e) {
  *done = false;
  spc_error e2;
  spc_error_clear(&e2);
  const int sh = part_shift(C, np1);
  const int64_t nb = np1 ? ((np1 - 1) >> sh) + 1 : 1;
  void *crd[SPC_MAX_ORDER] = {NULL}, *vals = NULL;
  int64_t *bst = NULL, *bcur = NULL, *bend = NULL, *pc[64] = {NULL}, ntot = 0;
  spc_status s = SPC_OK;
  /* each chunk's start in each bucket: bucket by bucket, chunk by chunk */
  if (!(bst = spc_calloc((size_t)(nb * n), sizeof *bst)) ||
      !(bcur = spc_malloc((size_t)(nb * n) * sizeof *bcur)) ||
      !(bend = spc_malloc((size_t)nb * sizeof *bend)))
    s = SPC_NOMEM(&e2);
  for (int t = 0; t < n && !s; t++)
    for (int64_t g = 0; g < np1; g++) bst[nb * t + (g >> sh)] += cnt[t][g];
  for (int64_t b = 0; b < nb && !s; b++) {
    for (int t = 0; t < n; t++) {
      int64_t c = bst[nb * t + b];
      bst[nb * t + b] = ntot;
      ntot += c;
    }
    bend[b] = ntot;
  }
  if (!s) memcpy(bcur, bst, (size_t)(nb * n) * sizeof *bcur);
  for (int d = 0; d < C->order && !s; d++)
    if (!(crd[d] = spc_malloc_n(ntot ? ntot : 1, crd32 ? 4 : 8))) s = SPC_NOMEM(&e2);
  if (!s && C->vt != SPC_PATTERN && !(vals = spc_malloc_n(ntot ? ntot : 1, spc_vtype_size(C->vt))))
    s = SPC_NOMEM(&e2);
  spc_status ts[64] = {SPC_OK};
  spc_error ee[64];
  if (!s) {
    copy_job J = {.fn = fn, .ctx = ctx, .sh = sh, .ntot = ntot, .nb = nb, .bcur = bcur,
                  .crd = crd, .vals = vals, .ts = ts, .ee = ee};
    spc_par_for(n, copy_one, &J);
    for (int t = 0; t < n && !s; t++)
      if ((s = ts[t])) e2 = ee[t];
  }
  /* every chunk's cursors reached the next chunk's starts (the last: the
   * buckets' ends) -- else the counts and the copy disagree */
  bool go = !s;
  for (int t = 0; t < n && go; t++)
    for (int64_t b = 0; b < nb && go; b++)
      go = bcur[nb * t + b] == (t + 1 < n ? bst[nb * (t + 1) + b] : bend[b]);
  /* the placing runs: whole buckets, about ntot / nt components each;
   * run t's counts are the totals of its parents, zero elsewhere */
  int nt = n < nb ? n : (int)nb;
  int64_t B[65], start[64], len[64];
  B[0] = 0;
  for (int t = 1; t < nt && go; t++) {
    int64_t b = B[t - 1], want = ntot / nt * t;
    while (b < nb && bend[b] <= want) b++;
    B[t] = b;
  }
  B[nt] = nb;
  for (int t = 0; t < nt && go; t++) {
    start[t] = B[t] ? bend[B[t] - 1] : 0;
    len[t] = (B[t + 1] ? bend[B[t + 1] - 1] : 0) - start[t];
    if (!(pc[t] = spc_calloc((size_t)(np1 ? np1 : 1), sizeof **pc))) {
      s = SPC_NOMEM(&e2), go = false;
      break;
    }
    int64_t g1 = B[t + 1] << sh < np1 ? B[t + 1] << sh : np1;
    for (int u = 0; u < n; u++)
      for (int64_t g = B[t] << sh; g < g1; g++) pc[t][g] += cnt[u][g];
  }
  if (go) {
    coo_chunks Q = {.C = C, .start = start, .len = len, .val = vals, .fp = fp, .ep = ep};
    for (int d = 0; d < C->order; d++) Q.crd[d] = crd[d];
    s = place_chunks(C, nt, np1, pc, place_coo, &Q, out, done, &e2);
    if (*done)
      snprintf(how, hown, "; placed through %lld buckets of %lld parents", (long long)nb,
               (long long)((int64_t)1 << sh));
  }
  for (int t = 0; t < nt && t < 64; t++) spc_free(pc[t]);
  for (int d = 0; d < C->order; d++) spc_free(crd[d]);
  spc_free(vals);
  spc_free(bst);
  spc_free(bcur);
  spc_free(bend);
  if (s == SPC_ERR_NOMEM || s == SPC_ERR_UNSUPPORTED) return SPC_OK;
  if (s && e) *e = e2;
  return s;
}

/* The copy's routine r (prepared: fn) and the chunks it copies: a COO's
 * (coo: rb_copy) or a source's read through its levels (src: fb_copy). */
struct src_chunks;
typedef struct part_copy {
  conv *C;
  const coo_chunks *coo;
  const struct src_chunks *src;
  const rcr *r;
  asm_entry fn;
} part_copy;

/* A COO's chunks copied by the rows bucketing's scatter (spc_conv_rbplace:
 * bucket (k0 - lo0) >> sh, stable). */

static spc_status rb_copy(void *ctx, int t, int64_t sh, int64_t ntot, int64_t *bcur, int64_t nb,
                          void *const *crd, void *vals, spc_error *e) {
  const part_copy *R = ctx;
  conv *C = R->C;
  const coo_chunks *P = R->coo;
  ir_arg a[2 * SPC_MAX_ORDER + 12];
  memset(a, 0, sizeof a);
  int q = 0;
  int64_t end = P->start[t] + P->len[t];
  for (; q < C->order; q++) a[q] = (ir_arg){.data = P->crd[q], .len = end};
  if (C->vt != SPC_PATTERN) a[q++] = (ir_arg){.data = (void *)(uintptr_t)P->val, .len = end};
  a[q++].s.i64 = end;
  a[q++].s.i64 = C->N[0];
  a[q++].s.i64 = C->lo[0];
  a[q++].s.i64 = sh;
  a[q++].s.i64 = P->start[t];
  a[q++].s.i64 = end;
  a[q++] = (ir_arg){.data = bcur, .len = nb};
  for (int d = 0; d < C->order; d++) a[q++] = (ir_arg){.data = crd[d], .len = ntot};
  if (C->vt != SPC_PATTERN) a[q++] = (ir_arg){.data = vals, .len = ntot};
  return asm_call(R->fn, R->r->v.f, a, e);
}

static bool want_partition(const conv *C, const conv_info *SI, int64_t np1, bool known, bool s01);
static bool want_inplace(const conv *C, int64_t np1);
static spc_status run_inplace(conv *C, const struct src_chunks *P, const coo_chunks *Q, int n,
                              int64_t np1, int64_t **cnt, bool fac, conv_tensor **out, bool *done,
                              char *how, size_t hown, spc_error *e);

/* A COO strictly in (c0, c1) order across every chunk (count_chunks_par's
 * s01), whose child level stores the source's coordinate as it is
 * (give_plan: compressed's crd[q] = c) and takes each parent's run at once
 * (yield_run): the level made from the chunks' summed counts (sinit), its
 * state advanced run by run and checked to put component t at position t
 * (spc_conv_runs), then the chunks' coordinates and values copied there
 * on their threads -- one pass over the components on each thread after
 * the count, not a placing routine a component (sorted R-MAT 2^17 COO to
 * CSR, 2 threads: 3.3 -> 1.6-1.9 ms, against 2.2-2.3 on one).  The arrays are the
 * serial plan's bit for bit.  False, nothing made: not this plan. */
typedef struct runs_copy {
  const coo_chunks *P;
  int gd;
  void *crd, *vout;
  size_t wc, wv;
} runs_copy;

static void runs_copy_one(void *ctx, int t) {
  const runs_copy *R = ctx;
  size_t a = (size_t)R->P->start[t], n = (size_t)R->P->len[t];
  memcpy((char *)R->crd + a * R->wc, (const char *)R->P->crd[R->gd] + a * R->wc, n * R->wc);
  if (R->vout) memcpy((char *)R->vout + a * R->wv, (const char *)R->P->val + a * R->wv, n * R->wv);
}

static bool copy_runs(conv *C, int nt, const coo_chunks *P, int64_t np1, int64_t *const *cnt,
                      conv_tensor **out) {
  bool done = false;
  spc_error e2;
  spc_error_clear(&e2);
  int gd = -1, gk = -1;
  if (give_plan(C, &gd, &gk, &e2) || gd < 0) return false;
  const spc_level_spec *l1 = C->lv[1]->lf;
  int narr = l1->narrays;
  bool i32[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < narr; k++)
    i32[k] = asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty) == IR_I32;
  rcr ri = {0}, rr = {0}, rf = {0};
  ir_arg arr[SPC_LEVEL_MAX_ARRAYS] = {{0}}, vout = {0}, *ai = NULL, *ar = NULL;
  /* the chunks one after the other from 0: component t is the t-th */
  bool go = P->start[0] == 0;
  for (int t = 1; t < nt; t++) go = go && P->start[t] == P->start[t - 1] + P->len[t - 1];
  if (!go || P->start[nt - 1] + P->len[nt - 1] != C->n) return false;
  int64_t *tot = spc_malloc((size_t)(np1 ? np1 : 1) * sizeof *tot), ncomp = 0, size = 0;
  go = tot != NULL;
  for (int64_t g = 0; go && g < np1; g++) {
    int64_t run = 0;
    for (int t = 0; t < nt; t++) run += cnt[t][g];
    tot[g] = run;
    ncomp += run;
  }
  go = go && ncomp == C->n && !rc_get(C, NULL, RC_SINIT, 1, &ri, &e2) &&
       !rc_get(C, NULL, RC_RUNS, 0, &rr, &e2) && !rc_get(C, NULL, RC_SFINAL, 0, &rf, &e2);
  go = go && (ai = spc_calloc((size_t)ir_nparams(ri.v.f), sizeof *ai)) != NULL;
  if (go) {
    int k = 0, p_arr0 = ri.v.aux[0];
    ai[k++] = (ir_arg){.data = tot, .len = np1};
    for (int l = 0; l < 2; l++) ai[k++].s.i64 = C->N[l], ai[k++].s.i64 = C->lo[l];
    ai[k++].s.i64 = C->limit;
    go = !rc_run(C, &ri, ai, &e2);
    if (go) {
      for (int x = 0; x < narr; x++) arr[x] = ai[p_arr0 + x], ai[p_arr0 + x].data = NULL;
      size = ai[p_arr0 + narr].s.i64;
      if (C->vt != SPC_PATTERN) vout = ai[p_arr0 + narr + 1], ai[p_arr0 + narr + 1].data = NULL;
      /* one position a component, and the arrays copied into that long */
      go = size == C->n && arr[gk].len == C->n && (C->vt == SPC_PATTERN || vout.len == C->n);
    }
    ai[0].data = NULL; /* tot: ours */
    for (int x = 0; x < ir_nparams(ri.v.f); x++)
      if (ir_var_get(ri.v.f, ir_param_var(ri.v.f, x))->array) spc_free(ai[x].data);
  }
  go = go && (ar = spc_calloc((size_t)ir_nparams(rr.v.f), sizeof *ar)) != NULL;
  if (go) { /* the state run by run, checked */
    int k = 0;
    ar[k++] = (ir_arg){.data = tot, .len = np1};
    ar[k++].s.i64 = np1;
    for (int l = 0; l < 2; l++) ar[k++].s.i64 = C->N[l], ar[k++].s.i64 = C->lo[l];
    for (int x = 0; x < narr; x++) ar[k++] = arr[x];
    go = !rc_run(C, &rr, ar, &e2) && ar[k].s.i64 == 1;
  }
  if (go) {
    runs_copy R = {.P = P, .gd = gd, .crd = arr[gk].data, .wc = i32[gk] ? 4 : 8,
                   .vout = C->vt != SPC_PATTERN ? vout.data : NULL,
                   .wv = spc_vtype_size(C->vt)};
    spc_par_for(nt, runs_copy_one, &R);
    /* short of memory for the result: the placings after it say so */
    done = !level1_result(C, &rf, np1, narr, arr, i32, &vout, size, out, &e2);
  }
  for (int x = 0; x < narr; x++) spc_free(arr[x].data);
  spc_free(vout.data);
  spc_free(ai);
  spc_free(ar);
  spc_free(tot);
  ir_func_free(&ri.v.f);
  ir_func_free(&rr.v.f);
  ir_func_free(&rf.v.f);
  return done;
}

/* The counting plan on nt threads over the chunks of S (run_count_par);
 * *done false, nothing made, when a chunk is out of order or repeats a
 * component (the serial plan then sorts or combines). */
static spc_status count_chunks_par(conv *C, int nt, coo_chunks P, conv_tensor **out, bool *done,
                                   spc_error *e) {
  *done = false;
  spc_error e2;
  spc_error_clear(&e2);
  int64_t np1 = 0;
  if (np1_of(C, &np1, &e2)) return SPC_OK;
  ir_func *fc = NULL;
  asm_entry ec = NULL;
  int64_t *cnt[64] = {NULL}, res[64][3];
  spc_status s = build_pcount(C, &fc, &e2);
  /* compiled once, called from every thread */
  if (!s) s = asm_prepare(&C->eng, fc, &ec, &e2);
  for (int t = 0; t < nt && !s; t++)
    if (!(cnt[t] = spc_calloc((size_t)(np1 ? np1 : 1), sizeof **cnt))) s = SPC_NOMEM(&e2);
  spc_status ts[64] = {SPC_OK};
  if (!s) {
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int t = 0; t < nt; t++) {
      ir_arg a[SPC_MAX_ORDER + 10];
      spc_error et;
      memset(a, 0, sizeof a);
      spc_error_clear(&et);
      int k = 0;
      for (; k < C->order; k++) a[k] = (ir_arg){.data = P.crd[k], .len = P.start[t] + P.len[t]};
      a[k++].s.i64 = P.start[t];
      a[k++].s.i64 = P.len[t];
      for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
      a[k++] = (ir_arg){.data = cnt[t], .len = np1};
      res[t][0] = res[t][1] = res[t][2] = 0;
      a[k++] = (ir_arg){.data = res[t], .len = 3};
      ts[t] = asm_call(ec, fc, a, &et);
    }
  }
  bool go = !s, s01 = true, s10 = true;
  for (int t = 0; t < nt && go; t++) {
    go = !ts[t] && res[t][0] == 1;
    s01 &= res[t][1] == 1;
    s10 &= res[t][2] == 1;
  }
  /* the placing routine: strictly in (c0, c1) order across every chunk,
   * by runs, each chunk with its own counts (copied before place_chunks
   * makes them the earlier chunks' sums); else a yield_pos a component */
  int64_t *runs[64] = {NULL};
  go = go && (s01 || s10);
  /* in order and the child level taking the coordinates as they are:
   * copied in place (copy_runs) */
  bool copied = false;
  if (go && s01 && nt > 1) {
    copied = *done = copy_runs(C, nt, &P, np1, cnt, out);
    go = !copied;
  }
  if (go && s01 && !build_splace(C, &P.fp, true, &e2) && !(s = asm_prepare(&C->eng, P.fp, &P.ep, &e2))) {
    for (int t = 0; t < nt && !s; t++)
      if (!(runs[t] = spc_malloc((size_t)(np1 ? np1 : 1) * sizeof **runs))) s = SPC_NOMEM(&e2);
      else memcpy(runs[t], cnt[t], (size_t)np1 * sizeof **runs);
    P.runs = runs;
    P.np1 = np1;
  } else if (go && !s) {
    ir_func_free(&P.fp);
    s = build_splace(C, &P.fp, false, &e2);
    if (!s) s = asm_prepare(&C->eng, P.fp, &P.ep, &e2);
  }
  go = go && !s;
  /* in the other order and past the cache: copied into buckets of
   * parents by the rows bucketing's scatter, then placed */
  char how[96] = "";
  /* in the other order past the L2: copied into buckets in the result's
   * own arrays, then placed back (run_inplace) */
  if (go && !s01 && want_inplace(C, np1)) {
    bool fac = C->eng.want == SPC_ENGINE_AUTO || C->eng.want == SPC_ENGINE_FACTORY;
    s = run_inplace(C, NULL, &P, nt, np1, cnt, fac, out, done, how, sizeof how, &e2);
    go = !s;
  }
  if (go && !*done && !s01 && want_partition(C, NULL, np1, false, false)) {
    rcr rb = {0};
    asm_entry eb = NULL;
    bool crd32 = true;
    for (int d = 0; d < C->order; d++)
      crd32 = crd32 && spc_level_array_c(&C->comb->lv[d], "crd")->type == SPC_IDX32;
    bool mixed = false; /* the copy keeps each array's type: one for all */
    for (int d = 0; d < C->order; d++)
      mixed |= (spc_level_array_c(&C->comb->lv[d], "crd")->type == SPC_IDX32) != crd32;
    s = mixed ? SPC_ERR_UNSUPPORTED : rc_get(C, NULL, RC_RBUCKET, RB_PLACE, &rb, &e2);
    if (!s) s = rc_prepare(C, &rb, &eb, &e2);
    part_copy R = {.C = C, .coo = &P, .r = &rb, .fn = eb};
    if (!s) s = part_place(C, nt, np1, cnt, rb_copy, &R, crd32, P.fp, P.ep, out, done, how, sizeof how, &e2);
    ir_func_free(&rb.v.f);
    if (s == SPC_ERR_UNSUPPORTED || (s == SPC_ERR_NOMEM && !*done)) s = SPC_OK;
    if (s && e) *e = e2;
    go = !s;
  }
  if (go && !*done) s = place_chunks(C, nt, np1, cnt, place_coo, &P, out, done, e);
  if (go || copied) {
    char thr[32] = "";
    if (nt > 1) snprintf(thr, sizeof thr, "; %d threads", nt);
    if (*done && C->o && C->o->info)
      snprintf(C->o->info->plan, sizeof C->o->info->plan,
               "counting (source in order: no sort%s%s%s)",
               copied ? ", copied in place" : P.runs ? ", each parent's run placed at once" : "",
               how, thr);
  } else if (s == SPC_ERR_NOMEM && e) {
    *e = e2;
  } else {
    s = SPC_OK;
  }
  for (int t = 0; t < nt; t++) spc_free(cnt[t]), spc_free(runs[t]);
  ir_func_free(&fc);
  ir_func_free(&P.fp);
  return s;
}

/* The counting plan on nt threads, the source in order: nt equal chunks. */
static bool key_lt(int64_t a0, int64_t a1, int64_t b0, int64_t b1);

/* Whether the serial counting routine goes first on several threads: a
 * COO that looks in (c0, c1) order (1024 samples and the component after
 * each), which its pass 0 places as it counts (place_in_pass0) -- one
 * pass over the source, against two by chunks.  Sorted COO to CSR, 2
 * threads, ms, serial / by chunks: R-MAT 2^17 4.0 / 4.4, 27-point
 * stencil (2.2 M) 3.1 / 4.6, R-MAT 2^22 (65 M) 204 / 216.  Only an order:
 * the routine checks every component and the plans after it follow as
 * after run_count_par. */
static bool sample_order(const conv *C, void *const *crd, bool other);

static bool serial_first(conv *C, void *const *crd) {
  if (!sample_order(C, crd, false)) return false;
  bool fill[SPC_LEVEL_MAX_ARRAYS], yes = false;
  spc_error e2;
  spc_error_clear(&e2);
  /* unless the chunks are copied in place (copy_runs): one pass on each
   * thread after the count */
  int gd = -1, gk = -1;
  if (conv_threads(C->n) > 1 && !give_plan(C, &gd, &gk, &e2) && gd >= 0) return false;
  return place_in_pass0(C, fill, &yes, &e2) == SPC_OK && yes;
}

/* Whether 1024 sampled pairs of neighbouring components of the COO are
 * in the target's order -- (c0, c1), or (c1, c0) where other: the
 * counting plan in the other order (count_chunks_par) may place them in
 * place (run_inplace) -- for a remapping that permutes. */
static bool sample_order(const conv *C, void *const *crd, bool other) {
  int64_t n = C->n, step = (n - 1) / 1024;
  if (step < 2 || C->order != 2 || C->r->order_out != 2) return false;
  /* the level coordinates: source indices (a remapping that permutes) */
  int d[2];
  for (int k = 0; k < 2; k++) {
    const lang_node *o = C->r->out[k];
    if (!o || o->kind != LN_NAME) return false;
    d[k] = spc_remap_find_in(C->r, o->name);
  }
  if (d[0] < 0 || d[1] < 0 || d[0] == d[1]) return false;
  const void *x0 = crd[d[0]], *x1 = crd[d[1]];
  bool w0 = spc_level_array_c(&C->comb->lv[d[0]], "crd")->type == SPC_IDX32;
  bool w1 = spc_level_array_c(&C->comb->lv[d[1]], "crd")->type == SPC_IDX32;
#define K0(t) (w0 ? (int64_t)((const int32_t *)x0)[t] : ((const int64_t *)x0)[t])
#define K1(t) (w1 ? (int64_t)((const int32_t *)x1)[t] : ((const int64_t *)x1)[t])
  int64_t p0 = 0, p1 = 0;
  for (int64_t k = 0; k < 1024; k++)
    for (int64_t u = step * k; u <= step * k + 1; u++) {
      int64_t c0 = K0(u), c1 = K1(u);
      if (u > 0 && !(other ? key_lt(p1, p0, c1, c0) : key_lt(p0, p1, c0, c1))) return false;
      p0 = c0, p1 = c1;
    }
#undef K0
#undef K1
  return true;
}

static spc_status run_count_par(conv *C, int nt, conv_tensor **out, bool *done, spc_error *e) {
  int64_t start[64], len[64];
  coo_chunks P = {.C = C, .start = start, .len = len, .val = C->comb->val};
  for (int k = 0; k < C->order; k++) P.crd[k] = spc_level_array_c(&C->comb->lv[k], "crd")->data;
  for (int t = 0; t < nt; t++) {
    start[t] = C->n / nt * t;
    len[t] = C->n / nt + (t == nt - 1 ? C->n % nt : 0);
  }
  return count_chunks_par(C, nt, P, out, done, e);
}

/* A converted source's chunks: top-level positions [off[t], off[t + 1]). */
typedef struct src_chunks {
  conv *C;
  const spc_tensor *src;
  const int64_t *off;
  ir_func *fp;
  asm_entry ep;
} src_chunks;

static int src_args(const src_chunks *P, int t, ir_arg *a, int64_t *extv, spc_error *e) {
  const conv_info *SI = &((const conv_tensor *)(const void *)P->src)->info;
  int k = asm_src_args(SI, P->src, a, extv, e);
  if (k < 0) return k;
  a[k++].s.i64 = P->off[t];
  a[k++].s.i64 = P->off[t + 1];
  for (int l = 0; l < 2; l++) a[k++].s.i64 = P->C->N[l], a[k++].s.i64 = P->C->lo[l];
  return k;
}

static spc_status place_src(void *ctx, int t, ir_arg *lv, ir_arg vout, int64_t size, spc_error *e) {
  const src_chunks *P = ctx;
  ir_arg a[SPC_MAX_ORDER * SPC_SPEC_MAX + 16 + SPC_LEVEL_MAX_ARRAYS];
  int64_t extv[2 * SPC_MAX_ORDER];
  memset(a, 0, sizeof a);
  int k = src_args(P, t, a, extv, e);
  if (k < 0) return SPC_ERR_INTERNAL;
  a[k++].s.i64 = size;
  for (int x = 0; x < P->C->lv[1]->lf->narrays; x++) a[k++] = lv[x];
  if (P->C->vt != SPC_PATTERN) a[k++] = vout;
  return asm_call(P->ep, P->fp, a, e);
}

/* One chunk of the source counted (run_fused, on its thread). */
typedef struct fcount_job {
  const src_chunks *P;
  int pass;
  int64_t **cnt, *last, np1, (*res)[7];
  asm_entry ec;
  ir_func *fc;
  spc_status *ts;
  spc_error *ee;
} fcount_job;

static void fcount_one(void *job, int t) {
  const fcount_job *J = job;
  ir_arg a[SPC_MAX_ORDER * SPC_SPEC_MAX + 16];
  int64_t extv[2 * SPC_MAX_ORDER];
  spc_error *et = &J->ee[t];
  memset(a, 0, sizeof a);
  spc_error_clear(et);
  int k = src_args(J->P, t, a, extv, et);
  if (k < 0) {
    J->ts[t] = SPC_ERR_INTERNAL;
    return;
  }
  a[k++].s.i64 = J->pass; /* serial: pass 1 when neither order holds */
  a[k++] = (ir_arg){.data = J->cnt[t], .len = J->np1};
  a[k++] = (ir_arg){.data = J->last, .len = J->last ? J->np1 : 0};
  a[k++] = (ir_arg){.data = J->res[t], .len = 7};
  J->ts[t] = asm_call(J->ec, J->fc, a, et);
}

/* Lexicographic (a0, a1) < (b0, b1). */
static bool key_lt(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return a0 < b0 || (a0 == b0 && a1 < b1);
}

/* Whether the source's top level holds another index than the target's
 * first level: its components come out of the target's order (known
 * sources, whose counting checks no order). */
static bool fused_reorders(const conv *C, const conv_info *SI) {
  int t0 = level_dim(C->r, 0);
  conv_info I = *SI;
  spc_remap *sr = NULL;
  asm_inv iv[SPC_MAX_ORDER];
  spc_error e;
  bool ok = !asm_read_info(&I, C->order, &sr, iv, &e);
  spc_remap_free(&sr);
  for (int d = 0; ok && d < C->order; d++)
    if (iv[d].b < 0 && iv[d].a == 0) return d != t0;
  return false;
}

/* Whether run_fused places through buckets (run_partition): forced by
 * SPC_PLAN_PARTITION, never with SPC_PLAN_SCATTER; on auto where the
 * components come out of the target's order (reorders), the scatter's
 * write streams (a line of the child's coordinates and one of values per
 * parent, and its cursor) exceed 4 x the last-level cache, there are 2^20
 * components at least, the COO copy fits in an eighth of memory (and in
 * the budget, --mem, where one is given) -- and fresh memory is not slow
 * (no free page reporting: spc_free_page_reporting).
 * CSR to CSC of R-MAT graphs on this 2-core EPYC VM (32 MiB L3), scatter
 * / partitioned, in one process, the best of 5 runs (pages the run
 * before freed: cleared on first touch, as on any machine), 1 thread, s:
 * 2^19 (streams 2.2 x L3) 0.096 / 0.106 and a uniform 400,000 columns x
 * 6.4 M (1.7 x) 0.100 / 0.106 (the copy costs more than the scatter's
 * misses save), 2^20 (4.4 x) 0.25-0.27 / 0.21, 2^21 0.69-0.73 /
 * 0.51-0.56, 2^22 1.61-1.77 / 1.41-1.58; 2 threads 2^22 1.03 / 0.86.  One
 * conversion per process (spconv's command line) on this VM, whose
 * balloon reports free pages (a page's first touch faults on the host:
 * the kernel's page clearing was 46% of a profile): 2^21 0.61-0.83 /
 * 0.64-0.79, 2^22 1.38-1.87 / 1.48-2.56 -- the copy's 16 bytes a
 * component of fresh memory ate the gain, hence the last condition. */
static bool want_partition(const conv *C, const conv_info *SI, int64_t np1, bool known, bool s01) {
  int pl = C->o ? C->o->plan : SPC_PLAN_AUTO;
  if (pl == SPC_PLAN_PARTITION) return true;
  if (pl == SPC_PLAN_SCATTER || pl == SPC_PLAN_INPLACE || C->n < ((int64_t)1 << 20)) return false;
  int64_t per = 64 * (C->vt != SPC_PATTERN ? 2 : 1) + 8, copy = 0, mem = spc_phys_bytes();
  if (np1 > INT64_MAX / per || np1 * per <= 4 * llc_bytes()) return false;
  int64_t w = (int64_t)C->order * 8 + (int64_t)spc_vtype_size(C->vt);
  if (__builtin_mul_overflow(C->n, w, &copy)) return false;
  if (C->o && C->o->mem > 0 && copy > C->o->mem) return false; /* the user's budget */
  if (mem > 0 && copy > mem / 8) return false;
  if (!(known ? fused_reorders(C, SI) : !s01)) return false;
  /* SPCONV_FRESH_PAGES=fast or slow: the machine's answer overridden */
  const char *fp = getenv("SPCONV_FRESH_PAGES");
  if (fp && (!strcmp(fp, "fast") || !strcmp(fp, "slow"))) return !strcmp(fp, "fast");
  return !spc_free_page_reporting(NULL);
}

/* The partitioned placement of a fused source (see build_fbucket): the
 * source's chunks [off[t], off[t + 1]) counted into cnt[t] (n of them,
 * left as they are), copied by spc_conv_fbucket, placed by part_place
 * (C->comb a COO of the copy's types meanwhile).  *done false and nothing
 * made where a routine is missing (fac: the factory has none) or as
 * part_place says: the fused place follows.  how: the plan's words. */
static spc_status fb_copy(void *ctx, int t, int64_t sh, int64_t ntot, int64_t *bcur, int64_t nb,
                          void *const *crd, void *vals, spc_error *e) {
  const part_copy *F = ctx;
  ir_arg a[SPC_MAX_ORDER * SPC_SPEC_MAX + 24];
  int64_t extv[2 * SPC_MAX_ORDER];
  memset(a, 0, sizeof a);
  int k = src_args(F->src, t, a, extv, e);
  if (k < 0) return SPC_ERR_INTERNAL;
  a[k++].s.i64 = sh;
  a[k++].s.i64 = ntot;
  a[k++] = (ir_arg){.data = bcur, .len = nb};
  for (int d = 0; d < F->C->order; d++) a[k++] = (ir_arg){.data = crd[d], .len = ntot};
  if (vals) a[k++] = (ir_arg){.data = vals, .len = ntot};
  return asm_call(F->fn, F->r->v.f, a, e);
}

static spc_status run_partition(conv *C, const src_chunks *P, int n, int64_t np1, int64_t **cnt,
                                bool fac, conv_tensor **out, bool *done, char *how, size_t hown,
                                spc_error *e) {
  *done = false;
  const spc_tensor *src = P->src;
  const conv_info *SI = &((const conv_tensor *)(const void *)src)->info;
  spc_error e2;
  spc_error_clear(&e2);
  bool crd32 = true;
  for (int d = 0; d < C->order; d++) crd32 = crd32 && src->dims[d] <= INT32_MAX;
  rcr rb = {0};
  asm_entry eb = NULL, ep = NULL;
  ir_func *fp = NULL;
  spc_tensor *shell = NULL;
  const spc_tensor *keep = C->comb;
  spc_status s = rc_get(C, SI, RC_FBUCKET, crd32, &rb, &e2);
  if (!s) s = spc_coo_alloc(C->order, src->dims, 0, C->vt, &shell, &e2);
  for (int d = 0; d < C->order && !s; d++)
    spc_level_array(&shell->lv[d], "crd")->type = crd32 ? SPC_IDX32 : SPC_IDX64;
  if (!s) C->comb = shell;
  if (!s) s = build_splace(C, &fp, false, &e2);
  if (!s && fac) {
    if (rb.fac) eb = rb.v.fn;
    else s = asm_prepare_factory(rb.v.f, &eb, &e2);
    if (!s) s = asm_prepare_factory(fp, &ep, &e2);
    if (!s && (!eb || !ep)) s = SPC_ERR_UNSUPPORTED; /* not compiled in: the scatter */
    if (!s) asm_note_factory(&C->eng, 2);
  } else if (!s) {
    s = asm_prepare(&C->eng, rb.v.f, &eb, &e2);
    if (!s) s = asm_prepare(&C->eng, fp, &ep, &e2);
  }
  part_copy F = {.C = C, .src = P, .r = &rb, .fn = eb};
  if (!s) s = part_place(C, n, np1, cnt, fb_copy, &F, crd32, fp, ep, out, done, how, hown, &e2);
  C->comb = keep;
  spc_tensor_free(&shell);
  ir_func_free(&fp);
  ir_func_free(&rb.v.f);
  if (s == SPC_ERR_NOMEM || s == SPC_ERR_UNSUPPORTED) return SPC_OK;
  if (s && e) *e = e2;
  return s;
}

/* ---- the in-place partitioned placement: the driver ---------------------------- */


/* Whether the child level suits run_inplace: COMPACT, one array (*gk) that
 * insert_coord fills with the coordinate alone at the yielded position and
 * nothing else it writes (compressed: crd[q] = c), of an integer type, and
 * one array its yield_pos writes (*kc: compressed's pos cursors, checked
 * by run_inplace to start at the counts' prefix sums).  *gk -1: not. */
static spc_status ip_plan(conv *C, int *gk, int *kc, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  *gk = *kc = -1;
  if (!(l1->props & SPC_LP_COMPACT) || l1->narrays > SPC_LEVEL_MAX_ARRAYS) return SPC_OK;
  bool fill[SPC_LEVEL_MAX_ARRAYS] = {false}, ys[SPC_LEVEL_MAX_ARRAYS] = {false};
  ir_func *f = NULL;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  lvbind b1;
  spc_status s = lf_probe(C, SPC_LF_INSERT, &f, keep, &b1, e);
  int k1 = -1;
  if (!s && asm_lfn(&b1, SPC_LF_INSERT)) {
    bool any = false;
    for (int k = 0; k < l1->narrays; k++) {
      fill[k] = stores_at(ir_func_body(f), keep[k], b1.q);
      if (fill[k]) k1 = k1 < 0 ? k : -2;
    }
    const ir_stmt *body = ir_func_body(f);
    if (k1 < 0 || body->nkids == 0 ||
        !pure_insert(body->kids[body->nkids - 1], keep, fill, l1->narrays, b1.q) ||
        !stores_only(body, keep[k1], b1.c, &any) || !any)
      k1 = -1;
  }
  ir_func_free(&f);
  if (s || k1 < 0) return s;
  ir_ty wt = ip_word_ty(C, k1);
  if (wt != IR_I32 && wt != IR_I64) return SPC_OK;
  if ((s = yield_state(C, ys, e))) return s;
  int c1 = -1;
  for (int k = 0; k < l1->narrays; k++)
    if (ys[k]) c1 = c1 < 0 ? k : -2;
  if (c1 < 0 || c1 == k1) return SPC_OK;
  ir_ty ct = asm_tname_ty(l1->arrays[c1].type, C->index_ty, C->coord_ty);
  if (ct != IR_I32 && ct != IR_I64) return SPC_OK;
  *gk = k1, *kc = c1;
  return SPC_OK;
}

/* The bucket shift: about 256 buckets (the copy's write streams: a line
 * of words and one of values each; 128 and 512 were slower on R-MAT 2^17
 * and 2^19). */
static int ip_shift(int64_t np1) {
  int sh = 0;
  while (sh < 62 && ((np1 - 1) >> sh) + 1 > 256) sh++;
  return sh;
}

/* Whether the auto plan places in place: 2^18 components at least, the
 * scatter's write streams (a line of coordinates and one of values per
 * parent, and its cursor) past the L2 -- taken as 1 MiB -- and the
 * result's coordinates and values past a quarter of the last-level cache
 * (with the source's, past half of it).  CSR to CSC, one thread, ms,
 * scatter / in place, on this 2-core EPYC VM (1 MiB L2, 32 MiB L3): R-MAT
 * 2^14 (228 k, 16 k columns) 0.43 / 0.75, 2^15 (468 k) 1.1-1.5 / 1.6 --
 * all in the L3, so not --; 2^16 (955 k) 4.6 / 3.7-3.9, 2^17 (1.9 M)
 * 11.8-12.0 / 8.7-8.9, 2^19 (8.4 M) 74.5 / 44.1, 2^21 (32 M) 462-520 /
 * 264-272; the 27-point stencil 44^3 (2.2 M, a band: the scatter's lines
 * stay in cache) 7.3-7.4 / 7.2-7.5. */
static bool want_inplace(const conv *C, int64_t np1) {
  int pl = C->o ? C->o->plan : SPC_PLAN_AUTO;
  if (pl == SPC_PLAN_INPLACE) return true;
  if (pl != SPC_PLAN_AUTO || C->n < ((int64_t)1 << 18)) return false;
  int64_t per = 64 * (C->vt != SPC_PATTERN ? 2 : 1) + 8;
  int64_t comp = (C->coord_ty == IR_I32 ? 4 : 8) + (int64_t)spc_vtype_size(C->vt);
  return np1 > (((int64_t)1 << 20) / per) && C->n > llc_bytes() / 4 / comp;
}

typedef struct ip_job {
  const src_chunks *P;   /* a fused source's chunks (spc_conv_fbpack), or */
  const coo_chunks *Q;   /* a COO's (spc_conv_cbpack) */
  conv *C;
  asm_entry ef, eb;
  const ir_func *ff, *fb;
  int mode, nb, sh;
  int64_t size, *bcur, *bst, *B;
  ir_arg *lv, vout, loc;
  int narr, gk;
  spc_status *ts;
  spc_error *ee;
} ip_job;

static void ip_copy_one(void *job, int t) {
  const ip_job *J = job;
  ir_arg a[SPC_MAX_ORDER * SPC_SPEC_MAX + 24];
  int64_t extv[2 * SPC_MAX_ORDER];
  memset(a, 0, sizeof a);
  spc_error_clear(&J->ee[t]);
  int k = 0;
  const conv *C = J->C;
  if (J->P) {
    k = src_args(J->P, t, a, extv, &J->ee[t]);
  } else {
    const coo_chunks *Q = J->Q;
    int64_t end = Q->start[t] + Q->len[t];
    for (; k < C->order; k++) a[k] = (ir_arg){.data = Q->crd[k], .len = end};
    if (C->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = (void *)(uintptr_t)Q->val, .len = end};
    a[k++].s.i64 = Q->start[t];
    a[k++].s.i64 = end;
    for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
  }
  if (k < 0) {
    J->ts[t] = SPC_ERR_INTERNAL;
    return;
  }
  a[k++].s.i64 = J->sh;
  a[k++].s.i64 = J->size;
  a[k++] = (ir_arg){.data = J->bcur + (int64_t)J->nb * t, .len = J->nb};
  a[k++] = J->lv[J->gk];
  if (J->mode) a[k++] = J->loc;
  if (C->vt != SPC_PATTERN) a[k++] = J->vout;
  J->ts[t] = asm_call(J->ef, J->ff, a, &J->ee[t]);
}

static void ip_place_one(void *job, int t) {
  const ip_job *J = job;
  spc_error *et = &J->ee[t];
  spc_error_clear(et);
  int64_t most = 0;
  for (int64_t b = J->B[t]; b < J->B[t + 1]; b++)
    if (J->bst[b + 1] - J->bst[b] > most) most = J->bst[b + 1] - J->bst[b];
  const conv *C = J->C;
  size_t ww = ip_word_ty(C, J->gk) == IR_I32 ? 4 : 8, wv = spc_vtype_size(C->vt);
  void *sw = spc_malloc_n(most ? most : 1, ww), *sl = NULL, *sv = NULL;
  if (J->mode) sl = spc_malloc_n(most ? most : 1, 4);
  if (C->vt != SPC_PATTERN) sv = spc_malloc_n(most ? most : 1, wv);
  if (!sw || (J->mode && !sl) || (C->vt != SPC_PATTERN && !sv)) {
    J->ts[t] = SPC_NOMEM(et);
  } else {
    ir_arg a[12 + SPC_LEVEL_MAX_ARRAYS];
    memset(a, 0, sizeof a);
    int k = 0;
    for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
    a[k++].s.i64 = J->sh;
    a[k++].s.i64 = J->B[t];
    a[k++].s.i64 = J->B[t + 1];
    a[k++] = (ir_arg){.data = J->bst, .len = J->nb + 1};
    for (int x = 0; x < J->narr; x++) a[k++] = J->lv[x];
    if (C->vt != SPC_PATTERN) a[k++] = J->vout;
    a[k++] = (ir_arg){.data = sw, .len = most};
    if (J->mode) a[k++] = (ir_arg){.data = sl, .len = most}, a[k++] = J->loc;
    if (C->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = sv, .len = most};
    J->ts[t] = asm_call(J->eb, J->fb, a, et);
  }
  spc_free(sw);
  spc_free(sl);
  spc_free(sv);
}

/* run_fused's in-place placement (see build_bplace) of the source's n
 * chunks counted into cnt[t] (left as they are).  *done false and nothing
 * made where the level is not of the kind (ip_plan), a routine is missing
 * (fac: the factory has none), memory runs short or a check fails: the
 * other placements follow (and report any error). */
static spc_status run_inplace(conv *C, const src_chunks *P, const coo_chunks *Q, int n,
                              int64_t np1, int64_t **cnt, bool fac, conv_tensor **out, bool *done,
                              char *how, size_t hown, spc_error *e) {
  *done = false;
  (void)e;
  spc_error e2;
  spc_error_clear(&e2);
  const spc_level_spec *l1 = C->lv[1]->lf;
  const conv_info *SI = P ? &((const conv_tensor *)(const void *)P->src)->info : NULL;
  int gk, kc;
  if (np1 < 2 || n > 64 || ip_plan(C, &gk, &kc, &e2) || gk < 0) return SPC_OK;
  const int narr = l1->narrays, sh = ip_shift(np1);
  const int64_t nb = ((np1 - 1) >> sh) + 1;
  /* packed words where (c - 0) << sh fits the word's type */
  ir_ty wt = ip_word_ty(C, gk);
  int cb = 0;
  int64_t chi = C->lo[1] + C->N[1];
  while (cb < 63 && (chi >> cb) > 0) cb++;
  const int mode = C->lo[1] >= 0 && cb + sh <= (wt == IR_I32 ? 31 : 63) ? 0 : 1;
  bool i32[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < narr; k++)
    i32[k] = asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty) == IR_I32;
  rcr rp = {0}, rb = {0}, ri = {0}, rf = {0};
  asm_entry ef = NULL, eb = NULL;
  ir_arg arr[SPC_LEVEL_MAX_ARRAYS] = {{0}}, vout = {0}, loc = {0};
  int64_t *tot = NULL, *bst = NULL, *bcur = NULL, *bend = NULL, ncomp = 0, size = 0;
  ir_arg *ai = NULL;
  spc_status s = rc_get(C, SI, P ? RC_FBPACK : RC_CBPACK, mode, &rp, &e2);
  if (!s) s = rc_get(C, NULL, RC_BPLACE, mode, &rb, &e2);
  if (!s && fac) {
    if (rp.fac) ef = rp.v.fn;
    else s = asm_prepare_factory(rp.v.f, &ef, &e2);
    if (!s) {
      if (rb.fac) eb = rb.v.fn;
      else s = asm_prepare_factory(rb.v.f, &eb, &e2);
    }
    if (!s && (!ef || !eb)) s = SPC_ERR_UNSUPPORTED; /* not compiled in */
  } else if (!s) {
    s = asm_prepare(&C->eng, rp.v.f, &ef, &e2);
    if (!s) s = asm_prepare(&C->eng, rb.v.f, &eb, &e2);
  }
  if (!s) s = rc_get(C, NULL, RC_SINIT, 1, &ri, &e2);
  if (!s) s = rc_get(C, NULL, RC_SFINAL, 0, &rf, &e2);
  bool go = !s;
  /* the totals per parent (one chunk: its counts) */
  if (go && n == 1) tot = cnt[0];
  else if (go && !(tot = spc_calloc((size_t)np1, sizeof *tot))) go = false;
  for (int t = 0; t < n && go && n > 1; t++)
    for (int64_t g = 0; g < np1; g++) tot[g] += cnt[t][g];
  if (go) ncomp = sum_i64(tot, np1);
  /* the level initialised (its arrays and the values not zeroed) */
  if (go && !(ai = spc_calloc((size_t)ir_nparams(ri.v.f), sizeof *ai))) go = false;
  if (go) {
    int k = 0;
    ai[k++] = (ir_arg){.data = tot, .len = np1};
    for (int l = 0; l < 2; l++) ai[k++].s.i64 = C->N[l], ai[k++].s.i64 = C->lo[l];
    ai[k++].s.i64 = C->limit;
    if (rc_run(C, &ri, ai, &e2)) go = false;
  }
  if (go) {
    const int p_arr0 = ri.v.aux[0];
    for (int k = 0; k < narr; k++) arr[k] = ai[p_arr0 + k], ai[p_arr0 + k].data = NULL;
    size = ai[p_arr0 + narr].s.i64;
    if (C->vt != SPC_PATTERN) vout = ai[p_arr0 + narr + 1], ai[p_arr0 + narr + 1].data = NULL;
    /* one position per component, the coordinates' array one a position */
    go = size == ncomp && arr[gk].len == size && arr[kc].len >= np1 &&
         (C->vt == SPC_PATTERN || vout.len == size);
  }
  if (ai) {
    ai[0].data = NULL; /* tot: ours */
    for (int k = 0; k < ir_nparams(ri.v.f); k++)
      if (ir_var_get(ri.v.f, ir_param_var(ri.v.f, k))->array) spc_free(ai[k].data);
    spc_free(ai);
  }
  /* the cursors start at the counts' prefix sums: bucket b's positions
   * are [bst[b], bst[b + 1]) */
  if (go && (!(bst = spc_malloc((size_t)(nb + 1) * sizeof *bst)) ||
             !(bcur = spc_malloc((size_t)(nb * n) * sizeof *bcur)) ||
             !(bend = spc_malloc((size_t)(nb * n) * sizeof *bend))))
    go = false;
  for (int64_t g = 0, run = 0; go && g < np1; g++) {
    int64_t c = i32[kc] ? ((const int32_t *)arr[kc].data)[g] : ((const int64_t *)arr[kc].data)[g];
    go = c == run;
    if (!(g & ((((int64_t)1) << sh) - 1))) bst[g >> sh] = run;
    run += tot[g];
  }
  if (go) bst[nb] = size;
  /* each chunk's cursor in each bucket: the buckets' starts, past the
   * earlier chunks' components there */
  for (int64_t b = 0; b < nb && go; b++) {
    int64_t at = bst[b], g1 = (b + 1) << sh < np1 ? (b + 1) << sh : np1;
    for (int t = 0; t < n; t++) {
      bcur[nb * t + b] = at;
      for (int64_t g = b << sh; g < g1; g++) at += cnt[t][g];
      bend[nb * t + b] = at;
    }
  }
  if (go && mode) {
    loc = (ir_arg){.data = spc_malloc_n(size ? size : 1, 4), .len = size};
    go = loc.data != NULL;
  }
  spc_status ts[64] = {SPC_OK};
  spc_error ee[64];
  int64_t B[65];
  ip_job J = {.P = P, .Q = Q, .C = C, .ef = ef, .eb = eb, .ff = rp.v.f, .fb = rb.v.f, .mode = mode,
              .nb = (int)nb, .sh = sh, .size = size, .bcur = bcur, .bst = bst, .B = B, .lv = arr,
              .vout = vout, .loc = loc, .narr = narr, .gk = gk, .ts = ts, .ee = ee};
  if (go) { /* the copy, chunk t on thread t */
    spc_par_for(n, ip_copy_one, &J);
    for (int t = 0; t < n && go; t++) go = !ts[t];
  }
  for (int64_t x = 0; x < nb * n && go; x++) go = bcur[x] == bend[x];
  /* the buckets placed back: runs of whole buckets of about size / nt
   * components on nt threads */
  int nt = n < nb ? n : (int)nb;
  if (go) {
    B[0] = 0;
    for (int t = 1; t < nt; t++) {
      int64_t b = B[t - 1], want = size / nt * t;
      while (b < nb && bst[b + 1] <= want) b++;
      B[t] = b;
    }
    B[nt] = nb;
    spc_par_for(nt, ip_place_one, &J);
    for (int t = 0; t < nt && go; t++) go = !ts[t];
  }
  /* every cursor advanced by its parent's components exactly: from the
   * prefix sums (checked above) to the next one */
  if (go) {
    uint64_t d = 0, run = 0;
    if (i32[kc])
      for (int64_t g = 0; g < np1; g++)
        run += (uint64_t)tot[g], d |= (uint64_t)((const int32_t *)arr[kc].data)[g] - run;
    else
      for (int64_t g = 0; g < np1; g++)
        run += (uint64_t)tot[g], d |= (uint64_t)((const int64_t *)arr[kc].data)[g] - run;
    go = d == 0;
  }
  if (go && !(s = level1_result(C, &rf, np1, narr, arr, i32, &vout, size, out, &e2))) {
    *done = true;
    snprintf(how, hown, "; in place: %lld buckets of %lld parents%s", (long long)nb,
             (long long)((int64_t)1 << sh), mode ? " (low bits apart)" : "");
  }
  for (int k = 0; k < narr; k++) spc_free(arr[k].data);
  spc_free(vout.data);
  spc_free(loc.data);
  if (n > 1) spc_free(tot);
  spc_free(bst);
  spc_free(bcur);
  spc_free(bend);
  ir_func_free(&rp.v.f);
  ir_func_free(&rb.v.f);
  ir_func_free(&ri.v.f);
  ir_func_free(&rf.v.f);
  /* anything short of done: the other placements, which say any error */
  return SPC_OK;
}

/* The fused plan: a converted source counted and placed by routines that
 * read it through its own levels -- by chunks of its top level on several
 * threads when every chunk is in order and their borders too, else on
 * one (with the per-parent check).  *done false: the source is read out
 * and the ordinary plans follow. */
static spc_status run_fused(conv *C, const spc_tensor *src, int64_t np1, conv_tensor **out,
                            bool *done, spc_error *e) {
  *done = false;
  spc_error e2;
  spc_error_clear(&e2);
  const conv_info *SI = &((const conv_tensor *)(const void *)src)->info;
  ir_func *fc = NULL;
  asm_entry ec = NULL;
  int64_t off[65], b = 0, en = 0, *cnt[64] = {NULL}, res[64][7], *last = NULL;
  src_chunks P = {.C = C, .src = src, .off = off};
  unsigned props[SPC_MAX_ORDER] = {0};
  for (int l = 0; l < src->nlevels && l < SPC_MAX_ORDER; l++) props[l] = src->lv[l].props;
  rcr rk;
  int64_t pk = 0; /* the properties fcount_known reads, with the key */
  for (int l = 0; l < 2 && l < src->nlevels; l++)
    pk |= (int64_t)(props[l] & (SPC_LP_ORDERED | SPC_LP_UNIQUE)) << (32 * l);
  bool known = !rc_get_x(C, SI, RC_KNOWN, pk, props, &rk, &e2) && rk.v.flags[0];
  spc_error_clear(&e2);
  rcr rc = {0}, rp = {0};
  spc_status s = rc_get(C, SI, RC_FCOUNT, known, &rc, &e2);
  fc = rc.v.f;
  if (!s) s = rc_get(C, SI, RC_FPLACE, 0, &rp, &e2);
  P.fp = rp.v.f;
  /* on the auto (or factory) engine only with compiled-in routines: no
   * run-time compile where the read-out's routines are in the factory */
  bool fac = C->eng.want == SPC_ENGINE_AUTO || C->eng.want == SPC_ENGINE_FACTORY;
  if (!s && fac) { /* each routine keyed once (rc_get did, where it could) */
    if (rc.fac) ec = rc.v.fn;
    else s = asm_prepare_factory(fc, &ec, &e2);
    if (!s && ec) {
      if (rp.fac) P.ep = rp.v.fn;
      else s = asm_prepare_factory(P.fp, &P.ep, &e2);
    }
    if (!s && ec && P.ep) {
      asm_note_factory(&C->eng, 2);
      if (C->eng.info) C->eng.info->routines_cached += rc.hit + rp.hit;
    }
  }
  bool skip = s == SPC_ERR_UNSUPPORTED || (!s && fac && (!ec || !P.ep));
  if (skip) {
    ir_func_free(&fc);
    ir_func_free(&P.fp);
    return SPC_OK;
  }
  if (!s && !fac) s = asm_prepare(&C->eng, fc, &ec, &e2);
  if (!s && !fac) s = asm_prepare(&C->eng, P.fp, &P.ep, &e2);
  if (!s) s = asm_src_top_range(src, &b, &en, &e2);
  int nt = s ? 1 : conv_threads(C->n);
  if (!s && en - b < nt) nt = en - b > 1 ? (int)(en - b) : 1;
  for (int t = 0; t < nt && !s; t++)
    if (!(cnt[t] = spc_calloc((size_t)(np1 ? np1 : 1), sizeof **cnt))) s = SPC_NOMEM(&e2);
  bool go = !s;
  for (int pass = nt > 1 ? 0 : 1; pass < 2 && go && !*done; pass++) {
    int n = pass ? 1 : nt; /* pass 0: chunks, in order; pass 1: one */
    /* chunks of about equal numbers of components where the source's
     * second level allows, else of equal numbers of top positions (any
     * cut gives the same result: the chunks only share the work) */
    spc_error ec2;
    if (n == 1 || C->n < 2 || asm_src_cuts(src, b, en, n, off, &ec2))
      for (int t = 0; t <= n; t++) off[t] = b + (en - b) / n * t + (t == n ? (en - b) % n : 0);
    /* the per-parent check's array: none where the levels' properties
     * say the order (known: the routine's pass 1 never runs) */
    if (pass && !known && !(last = spc_calloc((size_t)(np1 ? np1 : 1), sizeof *last))) {
      s = SPC_NOMEM(&e2);
      break;
    }
    if (pass) memset(cnt[0], 0, (size_t)np1 * sizeof **cnt);
    spc_status ts[64] = {SPC_OK};
    spc_error ee[64];
    fcount_job J = {.P = &P, .pass = pass, .cnt = cnt, .last = last, .np1 = np1, .res = res,
                    .ec = ec, .fc = fc, .ts = ts, .ee = ee};
    spc_par_for(n, fcount_one, &J);
    bool ok = true, s01 = true, s10 = true;
    for (int t = 0; t < n && ok; t++) {
      ok = !ts[t] && res[t][0] == 1;
      s01 &= res[t][1] == 1;
      s10 &= res[t][2] == 1;
    }
    /* the chunks' borders: each chunk's first component after the last
     * of the one before it that had any, in the order that holds */
    int64_t p0 = -1, p1 = -1;
    for (int t = 0; t < n && ok && pass == 0; t++) {
      if (!res[t][3]) continue; /* no component */
      s01 &= p0 < 0 || key_lt(p0, p1, res[t][3], res[t][4]);
      s10 &= p0 < 0 || key_lt(p1, p0, res[t][4], res[t][3]);
      p0 = res[t][5], p1 = res[t][6];
    }
    if (!ok && ts[0] && pass) { /* a failed `requires`: its message */
      s = ts[0];
      e2 = ee[0];
      break;
    }
    if (!ok || (pass == 0 && !s01 && !s10)) continue;
    /* out of the target's order and past the cache: through buckets */
    char how[96] = "";
    if (want_inplace(C, np1) && (known ? fused_reorders(C, SI) : !s01))
      s = run_inplace(C, &P, NULL, n, np1, cnt, fac, out, done, how, sizeof how, &e2);
    if (!s && !*done && want_partition(C, SI, np1, known, s01))
      s = run_partition(C, &P, n, np1, cnt, fac, out, done, how, sizeof how, &e2);
    if (!s && !*done) s = place_chunks(C, n, np1, cnt, place_src, &P, out, done, &e2);
    if (*done && C->o && C->o->info) {
      char thr[32] = "";
      if (n > 1) snprintf(thr, sizeof thr, "; %d threads", n);
      snprintf(C->o->info->plan, sizeof C->o->info->plan,
               "counting (source read through its own levels: no COO, no sort%s%s%s)",
               known ? "; in order by its levels' properties: not checked" : "", how, thr);
    }
    if (s) break;
  }
  for (int t = 0; t < nt; t++) spc_free(cnt[t]);
  spc_free(last);
  ir_func_free(&fc);
  ir_func_free(&P.fp);
  if (s && e) *e = e2;
  return s;
}

/* ---- the mirror: a structurally symmetric matrix to the other order ----------
 * A [dense, compressed] source (CSR, CSC, converted or read) into the
 * built-in [dense, compressed] target of the other order, square: where the
 * pattern is symmetric and each parent's children strictly increase, the
 * target's pos and crd are the source's own, and only the values move --
 * target position p (parent j, child i) takes the source's value of (i, j),
 * found at row i's cursor, which advances as j does.  Checked as it goes:
 * the entry at the cursor must be (i, j) (else the pattern is not
 * symmetric, or a row not ordered or repeats: the counting plans run
 * instead, the values made so far dropped).  Reads at live cursors in
 * place of the scatter's writes at them: a 27-point stencil 44^3 (2.2 M
 * entries), stand-alone, one thread, 3.0-3.3 ns an entry against the
 * scatter's 4.7 (the peers' loop); the result is the scatter's, bit for
 * bit.  Threads take ranges of parents of about equal entries, each row's
 * cursor found by a binary search the first time the range meets it. */
typedef struct mirror_job {
  const void *pos, *crd, *val;
  bool p32, c32;
  size_t w;
  void *vout;
  int64_t n, *bnd, **cur;
  int bad[64];
} mirror_job;

static inline int64_t mj_get(const void *a, bool i32, int64_t k) {
  return i32 ? (int64_t)((const int32_t *)a)[k] : ((const int64_t *)a)[k];
}

/* First position of row i (of crd) whose child is >= j. */
static int64_t mj_lower(const mirror_job *J, int64_t i, int64_t j) {
  int64_t lo = mj_get(J->pos, J->p32, i), hi = mj_get(J->pos, J->p32, i + 1);
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (mj_get(J->crd, J->c32, m) < j) lo = m + 1;
    else hi = m;
  }
  return lo;
}

#define MIRROR_LOOP(PT, CT, COPY)                                                        \
  do {                                                                                   \
    const PT *pos = J->pos;                                                              \
    const CT *crd = J->crd;                                                              \
    for (int64_t j = j0; j < j1; j++) {                                                  \
      int64_t prev = -1, pe = (int64_t)pos[j + 1];                                       \
      for (int64_t p = (int64_t)pos[j]; p < pe; p++) {                                   \
        int64_t i = (int64_t)crd[p], q = cur[i];                                         \
        if (i <= prev) goto bad;                                                         \
        prev = i;                                                                        \
        if (q < 0) q = mj_lower(J, i, j0);                                               \
        if (q >= (int64_t)pos[i + 1] || (int64_t)crd[q] != j) goto bad;                 \
        cur[i] = q + 1;                                                                  \
        COPY;                                                                            \
      }                                                                                  \
    }                                                                                    \
  } while (0)

#define MIRROR_TYPES(COPY)                                               \
  do {                                                                   \
    if (J->p32 && J->c32) MIRROR_LOOP(int32_t, int32_t, COPY);           \
    else if (J->p32) MIRROR_LOOP(int32_t, int64_t, COPY);                \
    else if (J->c32) MIRROR_LOOP(int64_t, int32_t, COPY);                \
    else MIRROR_LOOP(int64_t, int64_t, COPY);                            \
  } while (0)

static void mirror_one(void *ctx, int t) {
  mirror_job *J = ctx;
  int64_t j0 = J->bnd[t], j1 = J->bnd[t + 1], *cur = J->cur[t];
  if (t == 0) { /* from parent 0: every row's cursor at its start */
    for (int64_t i = 0; i < J->n; i++) cur[i] = mj_get(J->pos, J->p32, i);
  } else {
    for (int64_t i = 0; i < J->n; i++) cur[i] = -1;
  }
  const size_t w = J->w;
  if (w == 8) {
    const uint64_t *v = J->val;
    uint64_t *o = J->vout;
    MIRROR_TYPES(o[p] = v[q]);
  } else if (w == 4) {
    const uint32_t *v = J->val;
    uint32_t *o = J->vout;
    MIRROR_TYPES(o[p] = v[q]);
  } else if (w == 0) {
    MIRROR_TYPES((void)0);
  } else {
    const char *v = J->val;
    char *o = J->vout;
    MIRROR_TYPES(memcpy(o + (size_t)p * w, v + (size_t)q * w, w));
  }
  return;
bad:
  J->bad[t] = 1;
}
#undef MIRROR_TYPES
#undef MIRROR_LOOP

/* A copy of index array a as the spec's type (i32 or not). */
static void *mirror_copy(const spc_array *a, bool i32) {
  void *d = spc_malloc_n(a->len ? a->len : 1, i32 ? 4 : 8);
  if (!d) return NULL;
  if ((a->type == SPC_IDX32) == i32) {
    memcpy(d, a->data, (size_t)a->len * (i32 ? 4 : 8));
  } else if (i32) {
    for (int64_t k = 0; k < a->len; k++) ((int32_t *)d)[k] = (int32_t)((const int64_t *)a->data)[k];
  } else {
    for (int64_t k = 0; k < a->len; k++) ((int64_t *)d)[k] = ((const int32_t *)a->data)[k];
  }
  return d;
}

/* The target of the mirror and triangle plans: the built-in [dense,
 * compressed] levels (csr, csc, a user's YAML of those levels), whose
 * compressed level's arrays are pos and crd; *kp which of the two is pos.
 * False: not such a target. */
static bool dc_target(const conv *C, int *kp) {
  const spc_level_spec *l0 = C->lv[0]->lf, *l1 = C->lv[1]->lf;
  if (!spc_level_spec_builtin(l0) || !spc_level_spec_builtin(l1) || strcmp(l0->name, "dense") ||
      strcmp(l1->name, "compressed") || l1->narrays != 2 || l0->narrays != 0)
    return false;
  *kp = strcmp(l1->arrays[0].name, "pos") ? 1 : 0;
  return !strcmp(l1->arrays[*kp].name, "pos") && !strcmp(l1->arrays[1 - *kp].name, "crd");
}

/* Whether each of that level's arrays is int32 (as the spec's types
 * resolve under the conversion's index and coordinate types). */
static void dc_types(const conv *C, bool i32[2]) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  for (int k = 0; k < 2; k++) i32[k] = asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty) == IR_I32;
}

/* The result of such a target from its arrays (n parents, nnz
 * components; val NULL for a pattern), which it owns from here on:
 * freed where the result cannot be made. */
static spc_status dc_result(conv *C, const int64_t *dims, int kp, const bool i32[2], int64_t n,
                            int64_t nnz, void *pos, void *crd, void *val, conv_tensor **out,
                            spc_error *e) {
  conv_tensor *ct = new_result(C, dims);
  if (!ct) {
    spc_free(pos);
    spc_free(crd);
    spc_free(val);
    return SPC_NOMEM(e);
  }
  const spc_level_spec *l1 = C->lv[1]->lf;
  spc_level *lv = &ct->t.lv[1];
  for (int k = 0; k < 2; k++)
    lv->arr[lv->narr++] = (spc_array){.name = l1->arrays[k].name, .type = i32[k] ? SPC_IDX32 : SPC_IDX64,
                                      .len = k == kp ? n + 1 : nnz, .data = k == kp ? pos : crd,
                                      .owned = true};
  if (val) {
    ct->t.val = val;
    ct->t.val_owned = true;
  }
  ct->t.nval = nnz;
  *out = ct;
  return SPC_OK;
}

static spc_status run_mirror(conv *C, const spc_tensor *src, conv_tensor **out, bool *done,
                             spc_error *e) {
  *done = false;
  if (C->L != 2 || C->order != 2 || src->nlevels != 2 || src->sym != SPC_GENERAL ||
      C->om_budget > 0 || (C->o && C->o->plan != SPC_PLAN_AUTO) || C->vt != src->vt)
    return SPC_OK;
  int kp = 0;
  if (!dc_target(C, &kp)) return SPC_OK;
  const int kc = 1 - kp;
  if (src->lv[0].fmt != &spc_level_dense || src->lv[1].fmt != &spc_level_compressed ||
      src->lv[0].dim == src->lv[1].dim || level_dim(C->r, 0) != src->lv[1].dim ||
      level_dim(C->r, 1) != src->lv[0].dim || C->lo[0] || C->lo[1])
    return SPC_OK;
  int64_t n = src->dims[0];
  if (n != src->dims[1] || C->N[0] != n || C->N[1] != n || n + 1 > C->limit) return SPC_OK;
  const spc_array *pos = spc_level_array_c(&src->lv[1], "pos");
  const spc_array *crd = spc_level_array_c(&src->lv[1], "crd");
  int64_t nnz = spc_tensor_nstored(src);
  if (nnz > C->limit) return SPC_OK; /* the counting plans say "too large" */
  if (!pos || !crd || pos->len != n + 1 || crd->len != nnz || mj_get(pos->data, pos->type == SPC_IDX32, 0) ||
      mj_get(pos->data, pos->type == SPC_IDX32, n) != nnz || (src->vt != SPC_PATTERN && src->nval != nnz))
    return SPC_OK;
  bool i32[2];
  dc_types(C, i32);
  if ((i32[kp] && nnz > INT32_MAX) || (i32[kc] && n > INT32_MAX)) return SPC_OK;
  size_t w = spc_vtype_size(C->vt);
  mirror_job J = {.pos = pos->data, .crd = crd->data, .val = src->val, .p32 = pos->type == SPC_IDX32,
                  .c32 = crd->type == SPC_IDX32, .w = w, .n = n};
  /* a probe first, nothing allocated: 256 entries spread over the source,
   * each one's mirror looked up (an asymmetric pattern usually fails it) */
  for (int64_t k = 0; k < 256 && nnz; k++) {
    int64_t p = nnz / 256 * k + nnz % 256 * k / 256, lo = 0, hi = n; /* < nnz */
    while (lo < hi) { /* the parent j of position p: the last j with pos[j] <= p */
      int64_t m = lo + (hi - lo) / 2;
      if (mj_get(J.pos, J.p32, m + 1) <= p) lo = m + 1;
      else hi = m;
    }
    int64_t i = mj_get(J.crd, J.c32, p);
    if (i < 0 || i >= n) return SPC_OK;
    int64_t q = mj_lower(&J, i, lo);
    if (q >= mj_get(J.pos, J.p32, i + 1) || mj_get(J.crd, J.c32, q) != lo) return SPC_OK;
  }
  int nt = conv_threads(nnz);
  if (nt > 64) nt = 64;
  if (nt > n) nt = n > 0 ? (int)n : 1;
  int64_t bnd[65];
  int64_t *cur[64] = {NULL};
  J.bnd = bnd;
  J.cur = cur;
  spc_status s = SPC_OK;
  if (w && !(J.vout = spc_malloc_n(nnz ? nnz : 1, w))) s = SPC_NOMEM(e);
  for (int t = 0; t < nt && !s; t++)
    if (!(cur[t] = spc_malloc_n(n ? n : 1, sizeof **cur))) s = SPC_NOMEM(e);
  if (!s) { /* parents of about equal entries */
    bnd[0] = 0;
    for (int t = 1; t < nt; t++) {
      int64_t want = nnz / nt * t, lo = bnd[t - 1], hi = n;
      while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (mj_get(J.pos, J.p32, m) < want) lo = m + 1;
        else hi = m;
      }
      bnd[t] = lo;
    }
    bnd[nt] = n;
    spc_par_for(nt, mirror_one, &J);
  }
  bool ok = !s;
  for (int t = 0; t < nt && ok; t++) ok = !J.bad[t];
  for (int t = 0; t < nt; t++) spc_free(cur[t]);
  void *arr[2] = {NULL, NULL};
  if (ok) {
    arr[kp] = mirror_copy(pos, i32[kp]);
    arr[kc] = mirror_copy(crd, i32[kc]);
    if (!arr[0] || !arr[1]) s = SPC_NOMEM(e), ok = false;
  }
  if (!ok) {
    spc_free(arr[0]);
    spc_free(arr[1]);
    spc_free(J.vout);
    return s;
  }
  if ((s = dc_result(C, src->dims, kp, i32, n, nnz, arr[kp], arr[kc], J.vout, out, e))) return s;
  *done = true;
  if (C->o && C->o->info) {
    char thr[32] = "";
    if (nt > 1) snprintf(thr, sizeof thr, "; %d threads", nt);
    snprintf(C->o->info->plan, sizeof C->o->info->plan,
             "mirror (a symmetric pattern in the other order: the source's positions and "
             "coordinates kept, the values gathered%s)", thr);
  }
  return SPC_OK;
}

/* ---- a symmetric file's stored triangle straight into CSR or CSC -------------
 * A plain COO holding one triangle of a symmetric, skew-symmetric or
 * hermitian matrix (what a `symmetric` Matrix Market file reads as) into
 * the built-in [dense, compressed] target of either order, without the
 * expanded copy the other plans take (every stored entry, then every
 * off-diagonal one's mirror: 16-24 bytes a component of fresh memory, then
 * scattered).  Where the stored entries all lie on one side of the
 * diagonal in the target's terms (parent >= child, or parent <= child),
 * each parent's components are two runs: those stored under it and the
 * mirrors of those stored under its coordinate as a child, one run wholly
 * before the other.  One pass counts both runs of every parent, one places
 * each stored entry at its own run's cursor and its mirror (the value as
 * spc_tensor_expand makes it) at the other's; then each parent's children
 * are checked to increase strictly -- a triangle not stored in order, or a
 * repeat, gives the arrays up, and the expansion and the counting plans
 * run as before.  The same arrays as those plans, bit for bit: the
 * components are the same and no two share a coordinate, so only their
 * order within a parent matters, which the check proves sorted. */
typedef struct symf_job {
  const void *x[2]; /* stored coordinates: the parent's dimension, the child's */
  bool x32[2], p32, c32, same;
  const unsigned char *val;
  size_t w;
  spc_vtype vt;
  spc_symmetry sym;
  int64_t ns, n, nnz;
  void *pos, *crd;
  unsigned char *vout;
  int64_t *cu[64], *cm[64]; /* a thread's counts, then its cursors, by parent */
  int64_t lo[65];           /* thread t's stored entries [lo[t], lo[t+1]) */
  int64_t nd[64];           /* its diagonal entries */
  int64_t pb[65];           /* the check: thread t's parents [pb[t], pb[t+1]) */
  bool lower[64], upper[64], bad[64];
} symf_job;

static inline void sf_put(void *a, bool i32, int64_t k, int64_t v) {
  if (i32) ((int32_t *)a)[k] = (int32_t)v;
  else ((int64_t *)a)[k] = v;
}

/* pass 1: thread t's entries counted by parent, the side of the diagonal
 * and the range checked */
static void symf_count(void *ctx, int t) {
  symf_job *J = ctx;
  int64_t *cu = J->cu[t], *cm = J->cm[t], n = J->n, nd = 0;
  bool lower = true, upper = true;
  for (int64_t k = J->lo[t]; k < J->lo[t + 1]; k++) {
    int64_t a = mj_get(J->x[0], J->x32[0], k), b = mj_get(J->x[1], J->x32[1], k);
    if ((uint64_t)a >= (uint64_t)n || (uint64_t)b >= (uint64_t)n) {
      lower = upper = false;
      break;
    }
    lower &= a >= b;
    upper &= a <= b;
    if (!lower && !upper) break;
    cu[a]++;
    if (a != b) cm[b]++;
    else nd++;
  }
  J->lower[t] = lower;
  J->upper[t] = upper;
  J->nd[t] = nd;
}

/* pass 2: each stored entry at its run's cursor, its mirror at the other's */
static void symf_place(void *ctx, int t) {
  symf_job *J = ctx;
  int64_t *cu = J->cu[t], *cm = J->cm[t];
  const bool c32 = J->c32, same = J->same;
  const size_t w = J->w;
  const unsigned char *val = J->val;
  unsigned char *vout = J->vout;
  for (int64_t k = J->lo[t]; k < J->lo[t + 1]; k++) {
    int64_t a = mj_get(J->x[0], J->x32[0], k), b = mj_get(J->x[1], J->x32[1], k);
    int64_t q = cu[a]++;
    sf_put(J->crd, c32, q, b);
    if (w == 8) memcpy(vout + q * 8, val + k * 8, 8);
    else if (w) memcpy(vout + q * (int64_t)w, val + k * (int64_t)w, w);
    if (a == b) continue;
    q = cm[b]++;
    sf_put(J->crd, c32, q, a);
    if (!w) continue;
    if (same && w == 8) memcpy(vout + q * 8, val + k * 8, 8);
    else if (same) memcpy(vout + q * (int64_t)w, val + k * (int64_t)w, w);
    else spc_mirror_value(J->vt, J->sym, val + k * (int64_t)w, vout + q * (int64_t)w);
  }
}

/* pass 3: each parent's children strictly increasing */
static void symf_check(void *ctx, int t) {
  symf_job *J = ctx;
  J->bad[t] = false;
  for (int64_t a = J->pb[t]; a < J->pb[t + 1]; a++) {
    int64_t p = mj_get(J->pos, J->p32, a), pe = mj_get(J->pos, J->p32, a + 1), prev = -1;
    for (; p < pe; p++) {
      int64_t c = mj_get(J->crd, J->c32, p);
      if (c <= prev) {
        J->bad[t] = true;
        return;
      }
      prev = c;
    }
  }
}

static spc_status run_symfile(conv *C, const spc_tensor *src, conv_tensor **out, bool *done,
                              spc_error *e) {
  *done = false;
  if (C->L != 2 || C->order != 2 || src->order != 2 || src->nlevels != 2 || src->ext ||
      src->sym == SPC_GENERAL || C->nosort || C->measure || C->stream || C->om_budget > 0 ||
      C->r->ncounters ||
      (C->o && C->o->plan != SPC_PLAN_AUTO && C->o->plan != PLAN_TRIANGLE_ONLY))
    return SPC_OK;
  if (src->sym == SPC_SKEW && (src->vt == SPC_U64 || src->vt == SPC_PATTERN))
    return SPC_OK; /* the expansion refuses it */
  if (src->lv[0].fmt != &spc_level_compressed || src->lv[1].fmt != &spc_level_singleton ||
      src->lv[0].dim != 0 || src->lv[1].dim != 1)
    return SPC_OK;
  const spc_array *ps = spc_level_array_c(&src->lv[0], "pos");
  const spc_array *xa[2] = {spc_level_array_c(&src->lv[0], "crd"), spc_level_array_c(&src->lv[1], "crd")};
  if (!ps || ps->len != 2 || !xa[0] || !xa[1] || spc_arr_get(ps, 0) != 0) return SPC_OK;
  const int64_t ns = spc_arr_get(ps, 1), n = src->dims[0];
  if (ns < 0 || xa[0]->len < ns || xa[1]->len < ns || n != src->dims[1] ||
      (src->vt != SPC_PATTERN && src->nval < ns))
    return SPC_OK;
  int kp = 0;
  if (!dc_target(C, &kp)) return SPC_OK;
  const int kc = 1 - kp;
  int d0 = level_dim(C->r, 0), d1 = level_dim(C->r, 1);
  if (d0 < 0 || d1 < 0 || d0 == d1) return SPC_OK;
  const spc_tensor *keep = C->comb;
  C->comb = src;
  bool bounded = dim_bounds(C);
  C->comb = keep;
  if (!bounded || C->lo[0] || C->lo[1] || C->N[0] != n || C->N[1] != n || n + 1 > C->limit)
    return SPC_OK;
  symf_job *J = spc_calloc(1, sizeof *J);
  if (!J) return SPC_NOMEM(e);
  *J = (symf_job){.x = {xa[d0]->data, xa[d1]->data},
                  .x32 = {xa[d0]->type == SPC_IDX32, xa[d1]->type == SPC_IDX32},
                  .val = src->val, .w = src->vt == SPC_PATTERN ? 0 : spc_vtype_size(src->vt),
                  .vt = src->vt, .sym = src->sym, .ns = ns, .n = n,
                  .same = src->sym == SPC_SYMMETRIC || (src->sym == SPC_HERMITIAN && src->vt != SPC_C128)};
  /* threads: one per 2^17 stored entries, fewer where their count arrays
   * (two of n a thread) would pass the entries' own size */
  int nt = conv_threads(ns);
  if (nt > 64) nt = 64;
  while (nt > 1 && (double)nt * 2 * (double)n > (double)ns) nt--;
  for (int t = 0; t <= nt; t++) J->lo[t] = ns / nt * t + (t == nt ? ns % nt : 0);
  spc_status s = SPC_OK;
  bool ok = true;
  for (int t = 0; t < nt && !s; t++)
    if (!(J->cu[t] = spc_calloc((size_t)n + 1, sizeof(int64_t))) ||
        !(J->cm[t] = spc_calloc((size_t)n + 1, sizeof(int64_t))))
      s = SPC_NOMEM(e);
  if (!s) spc_par_for(nt, symf_count, J);
  bool lower = !s, upper = !s;
  int64_t nd = 0;
  for (int t = 0; t < nt && !s; t++) {
    lower &= J->lower[t];
    upper &= J->upper[t];
    nd += J->nd[t];
  }
  J->nnz = 2 * ns - nd; /* no overflow: ns entries are held */
  ok = !s && (lower || upper) && J->nnz <= C->limit; /* past it: "too large" from the others */
  bool i32[2] = {false, false};
  if (ok) {
    C->vt = src->vt;
    C->n = J->nnz;
    choose_types(C); /* the types the counting plans pick for these components */
    dc_types(C, i32);
    ok = !(i32[kp] && J->nnz > INT32_MAX) && !(i32[kc] && n > INT32_MAX);
  }
  if (ok) {
    J->p32 = i32[kp];
    J->c32 = i32[kc];
    J->pos = spc_malloc_n((size_t)n + 1, J->p32 ? 4 : 8);
    J->crd = spc_malloc_n(J->nnz ? J->nnz : 1, J->c32 ? 4 : 8);
    J->vout = J->w ? spc_malloc_n(J->nnz ? J->nnz : 1, J->w) : NULL;
    if (!J->pos || !J->crd || (J->w && !J->vout)) s = SPC_NOMEM(e), ok = false;
  }
  if (ok) { /* positions; the counts become each thread's cursors in both runs */
    int64_t run = 0;
    sf_put(J->pos, J->p32, 0, 0);
    for (int64_t a = 0; a < n; a++) {
      int64_t u = 0, m = 0;
      for (int t = 0; t < nt; t++) u += J->cu[t][a], m += J->cm[t][a];
      int64_t uc = lower ? run : run + m, mc = lower ? run + u : run;
      for (int t = 0; t < nt; t++) {
        int64_t cu = J->cu[t][a], cm = J->cm[t][a];
        J->cu[t][a] = uc;
        J->cm[t][a] = mc;
        uc += cu;
        mc += cm;
      }
      run += u + m;
      sf_put(J->pos, J->p32, a + 1, run);
    }
    spc_par_for(nt, symf_place, J);
    J->pb[0] = 0; /* the check: parents of about equal entries a thread */
    for (int t = 1; t < nt; t++) {
      int64_t want = J->nnz / nt * t, lo = J->pb[t - 1], hi = n;
      while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (mj_get(J->pos, J->p32, m) < want) lo = m + 1;
        else hi = m;
      }
      J->pb[t] = lo;
    }
    J->pb[nt] = n;
    spc_par_for(nt, symf_check, J);
    for (int t = 0; t < nt; t++) ok &= !J->bad[t];
  }
  for (int t = 0; t < nt; t++) {
    spc_free(J->cu[t]);
    spc_free(J->cm[t]);
  }
  if (!ok) {
    spc_free(J->pos);
    spc_free(J->crd);
    spc_free(J->vout);
    spc_free(J);
    return s;
  }
  if ((s = dc_result(C, src->dims, kp, i32, n, J->nnz, J->pos, J->crd, J->vout, out, e))) {
    spc_free(J);
    return s;
  }
  *done = true;
  if (C->o && C->o->info) {
    char thr[32] = "";
    if (nt > 1) snprintf(thr, sizeof thr, "; %d threads", nt);
    snprintf(C->o->info->plan, sizeof C->o->info->plan,
             "%s triangle (the stored entries and their mirrors placed in one pass: no "
             "expanded copy, no sort%s)",
             src->sym == SPC_SKEW ? "skew-symmetric" : src->sym == SPC_HERMITIAN ? "hermitian" : "symmetric",
             thr);
  }
  spc_free(J);
  return SPC_OK;
}

/* The counting path when it applies: the source as it is, else bucketed
 * by the child coordinate first (when that level's extent is not much
 * larger than the source).  *done set and *out the result; else nothing
 * changes (the sort path follows: duplicates, counters, other formats). */
static bool fusable(const spc_tensor *src);

/* Rows bucketing (build_rbucket) then counting: the scatter; the buckets
 * sorted on nt threads, each a run of whole buckets of about n / nt
 * components written from the run's start (repeats combined where
 * count_dups, so a run may end short of the next); then counting and
 * placing on those threads over the runs as written (count_chunks_par),
 * or, on one thread or where a run repeats a component (no count_dups),
 * serially over the runs moved together.  The plan's bits either way. */
static spc_status count_rows(conv *C, const countfn *F, void *const *crd, conv_tensor **out,
                             int64_t *ok, int *threads, spc_error *e) {
  rcr rr[3];
  memset(rr, 0, sizeof rr);
  const bool vals = C->vt != SPC_PATTERN;
  const int64_t n = C->n, sh0 = rbucket_shift(n, C->N[0]), nb = ((C->N[0] - 1) >> sh0) + 1;
  asm_entry fn[3] = {NULL};
  int nt = conv_threads(n);
  spc_status s = SPC_OK;
  for (int k = 0; k < 3 && !s; k++) {
    s = rc_get(C, NULL, RC_RBUCKET, k, &rr[k], e);
    if (!s) s = rc_prepare(C, &rr[k], &fn[k], e);
  }
  void *oc[SPC_MAX_ORDER] = {NULL}, *ov = NULL;
  int64_t *bc = spc_calloc((size_t)nb + 1, sizeof *bc), *cnt = spc_calloc((size_t)(nb * nt), sizeof *cnt);
  if (!s && (!bc || !cnt)) s = SPC_NOMEM(e);
  spc_status ts[64] = {SPC_OK};
  spc_error et[64];
  /* the source in nt ranges: each counted, then scattered from positions
   * that put the ranges' parts of every bucket in the source's order */
  for (int ph = 0; ph < 2 && !s; ph++) {
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
    for (int t = 0; t < nt; t++) {
      ir_arg a[2 * SPC_MAX_ORDER + 12];
      memset(a, 0, sizeof a);
      spc_error_clear(&et[t]);
      int q = 0;
      for (; q < C->order; q++) a[q] = (ir_arg){.data = crd[q], .len = n};
      if (ph && vals) a[q++] = (ir_arg){.data = C->comb->val, .len = n};
      a[q++].s.i64 = n;
      a[q++].s.i64 = C->N[0];
      a[q++].s.i64 = C->lo[0];
      a[q++].s.i64 = sh0;
      a[q++].s.i64 = n / nt * t;
      a[q++].s.i64 = t == nt - 1 ? n : n / nt * (t + 1);
      a[q++] = (ir_arg){.data = cnt + nb * t, .len = nb};
      for (int d = 0; ph && d < C->order; d++) a[q++] = (ir_arg){.data = oc[d], .len = n};
      if (ph && vals) a[q++] = (ir_arg){.data = ov, .len = n};
      ts[t] = asm_call(fn[ph], rr[ph].v.f, a, &et[t]);
    }
    for (int t = 0; t < nt && !s; t++)
      if ((s = ts[t]) && e) *e = et[t];
    if (!s && ph == 0) /* starts: bucket by bucket, range by range */
      for (int64_t b = 0, run = 0; b < nb; b++) {
        for (int t = 0; t < nt; t++) {
          int64_t c = cnt[nb * t + b];
          cnt[nb * t + b] = run;
          run += c;
        }
        bc[b] = run; /* bucket b's end */
      }
    for (int d = 0; d < C->order && !s && ph == 0; d++) {
      size_t w = spc_level_array_c(&C->comb->lv[d], "crd")->type == SPC_IDX32 ? 4 : 8;
      if (!(oc[d] = spc_malloc_n(n, w))) s = SPC_NOMEM(e);
    }
    if (!s && ph == 0 && vals && !(ov = spc_malloc_n(n, spc_vtype_size(C->vt)))) s = SPC_NOMEM(e);
  }
  /* the threads' runs of buckets [B[t], B[t+1]), about n / nt each */
  if (nt > nb) nt = (int)nb;
  int64_t B[65], start[64], len[64];
  B[0] = 0;
  for (int t = 1; t < nt && !s; t++) {
    int64_t b = B[t - 1], want = C->n / nt * t;
    while (b < nb && (b ? bc[b - 1] : 0) < want) b++;
    B[t] = b;
  }
  B[nt] = nb;
  if (!s) {
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
    for (int t = 0; t < nt; t++) {
      ir_arg b[SPC_MAX_ORDER + 10];
      memset(b, 0, sizeof b);
      spc_error_clear(&et[t]);
      int q = 0;
      for (; q < C->order; q++) b[q] = (ir_arg){.data = oc[q], .len = C->n};
      if (vals) b[q++] = (ir_arg){.data = ov, .len = C->n};
      b[q++] = (ir_arg){.data = (void *)(uintptr_t)bc, .len = nb + 1};
      b[q++].s.i64 = C->N[0];
      b[q++].s.i64 = C->lo[0];
      b[q++].s.i64 = sh0;
      b[q++].s.i64 = B[t];
      b[q++].s.i64 = B[t + 1];
      start[t] = B[t] ? bc[B[t] - 1] : 0;
      b[q++].s.i64 = start[t];
      ts[t] = asm_call(fn[RB_SORT], rr[RB_SORT].v.f, b, &et[t]);
      len[t] = ts[t] ? 0 : b[q].s.i64 - start[t];
    }
    for (int t = 0; t < nt && !s; t++)
      if ((s = ts[t]) && e) *e = et[t];
  }
  spc_free(bc); /* before the counting allocates: the heap as the single routine left it */
  spc_free(cnt);
  bc = NULL;
  cnt = NULL;
  bool done = false;
  /* the routine that takes the sorted copy's arrays as the result's
   * (give_plan), where there is one: then the runs are moved together and
   * counted by it on one thread (no copy of the result: 2 threads, ms,
   * counted on the threads / taken: uniform 10^6 x 10^6 with 4 M 58-65 /
   * 33-36, R-MAT 2^19 76-79 / 59-66, 3000 x 3000 with 2.4 M 16.5-17.0 /
   * 13.5-14.0, R-MAT 2^17 12.9-13.7 / 12.6-13.3); else counted and
   * placed on the threads over the runs as written */
  rcr rg;
  spc_error e2;
  spc_error_clear(&e2);
  countfn G = *F;
  bool hg = !s && !rc_get(C, NULL, RC_COUNT, (cnt32_of(C) ? 1 : 0) | 2, &rg, &e2);
  if (hg)
    G = (countfn){.f = rg.v.f, .narr = rg.v.aux[0], .p_ok = rg.v.aux[1], .p_arr0 = rg.v.aux[2],
                  .p_size = rg.v.aux[3], .p_vout = rg.v.aux[4], .gd = rg.v.aux[5], .rc = &rg};
  if (!s && nt > 1 && G.gd < 0) {
    coo_chunks P = {.C = C, .start = start, .len = len, .val = ov};
    for (int d = 0; d < C->order; d++) P.crd[d] = oc[d];
    s = count_chunks_par(C, nt, P, out, &done, e);
    if (!s && done) *ok = 1;
  }
  *threads = done ? nt : 1;
  if (!s && !done) { /* one run: the others moved down to the first's end */
    int64_t m = len[0];
    for (int t = 1; t < nt; t++) {
      if (start[t] == m) {
        m += len[t];
        continue;
      }
      for (int d = 0; d < C->order; d++) {
        size_t w = spc_level_array_c(&C->comb->lv[d], "crd")->type == SPC_IDX32 ? 4 : 8;
        memmove((char *)oc[d] + (size_t)m * w, (char *)oc[d] + (size_t)start[t] * w, (size_t)len[t] * w);
      }
      if (vals) {
        size_t w = spc_vtype_size(C->vt);
        memmove((char *)ov + (size_t)m * w, (char *)ov + (size_t)start[t] * w, (size_t)len[t] * w);
      }
      m += len[t];
    }
    C->n = m;
    void *tc = G.gd >= 0 ? oc[G.gd] : NULL, *tv = ov;
    s = count_once(C, &G, oc, &ov, out, ok, e);
    C->n = n;
    /* the buckets were sorted on the threads */
    if (!s && *ok == 1 && G.gd >= 0) *threads = nt;
    /* arrays taken with room for n components that hold m (repeats
     * combined): given back the rest where it is an eighth or more */
    if (!s && *ok == 1 && G.gd >= 0 && m < n - n / 8) {
      spc_tensor *t = &(*out)->t;
      for (int l = 0; l < SPC_MAX_ORDER; l++)
        for (int a = 0; a < t->lv[l].narr; a++) {
          spc_array *x = &t->lv[l].arr[a];
          void *q = x->data == tc && tc && !oc[G.gd] && x->len > 0
                        ? spc_realloc(x->data, (size_t)x->len * (x->type == SPC_IDX32 ? 4 : 8))
                        : NULL;
          if (q) x->data = q;
        }
      void *q = t->val == tv && tv && !ov && t->nval > 0
                    ? spc_realloc(t->val, (size_t)t->nval * spc_vtype_size(C->vt))
                    : NULL;
      if (q) t->val = q;
    }
  }
  if (hg) ir_func_free(&rg.v.f);
  for (int d = 0; d < C->order; d++) spc_free(oc[d]);
  spc_free(ov);
  spc_free(bc);
  spc_free(cnt);
  for (int k = 0; k < 3; k++) ir_func_free(&rr[k].v.f);
  return s;
}


static spc_status run_count(conv *C, const spc_tensor *fsrc, conv_tensor **out, bool *done,
                            spc_error *e) {
  *done = false;
  spc_error e2;
  spc_error_clear(&e2);
  /* fsrc: fusable (convert_run asked) */
  C->vt = C->comb->vt;
  if (C->nosort || C->L != 2 || C->r->ncounters || (C->o && C->o->plan == SPC_PLAN_SORT))
    return SPC_OK;
  if (!dim_bounds(C)) return SPC_OK; /* the sort path says why */
  choose_types(C);
  if (!count_applies(C)) return SPC_OK;
  /* the parents' count arrays: a top level past the position limit is
   * the sort path's to refuse ("too large"), before anything is allocated */
  int64_t np1 = 0;
  if (np1_of(C, &np1, &e2) || np1 > C->limit) return SPC_OK;
  if (fsrc) {
    spc_status sm = run_mirror(C, fsrc, out, done, e);
    return sm || *done ? sm : run_fused(C, fsrc, np1, out, done, e);
  }
  rcr rcount;
  spc_status s = rc_get(C, NULL, RC_COUNT, cnt32_of(C), &rcount, &e2);
  countfn F = {.f = rcount.v.f, .narr = rcount.v.aux[0], .p_ok = rcount.v.aux[1],
               .p_arr0 = rcount.v.aux[2], .p_size = rcount.v.aux[3], .p_vout = rcount.v.aux[4],
               .gd = rcount.v.aux[5], .rc = &rcount};
  if (s) {
    ir_func_free(&F.f);
    if (s == SPC_ERR_UNSUPPORTED) return SPC_OK;
    if (e) *e = e2;
    return s;
  }
  void *crd[SPC_MAX_ORDER] = {0};
  for (int k = 0; k < C->order; k++) crd[k] = spc_level_array_c(&C->comb->lv[k], "crd")->data;
  int nt = conv_threads(C->n);
  /* several threads, when the source is in order; or one, where it may
   * go through buckets (count_chunks_par: in the other order) */
  if ((nt > 1 || want_partition(C, NULL, np1, false, false) ||
       (want_inplace(C, np1) && sample_order(C, crd, true))) &&
      !serial_first(C, crd)) {
    if ((s = run_count_par(C, nt, out, done, e)) || *done) {
      ir_func_free(&F.f);
      return s;
    }
  }
  int64_t ok = 0;
  void *cv = C->comb->val;
  s = count_once(C, &F, crd, &cv, out, &ok, e);
  /* out of order: bucketed by rows (k0) and sorted in cache from 2^20
   * components on one thread, 3 x 2^17 on several (its phases run on
   * them, count_rows; the radix sort's do not) -- rows not many more than
   * the components --, else by the column radix sort (columns not many
   * more).  Shuffled COO to CSR with 10% repeats, ns a component (rows /
   * radix), one thread: 220k 21 / 11, 550k 24 / 14, 1.1M 24 / 24, 2.2M
   * 23 / 33, 4.4M 23 / 37 (the radix's random placing is cheap while the
   * output stays in the 32 MiB L3); rows on 2 threads against the radix
   * (session 13, ms): 297k 7.8 / 3.8, 396k 7.4-8.7 / 9.3-9.6, 495k 9.5 /
   * 11-12, 660k 14.7-15.2 / 17.5-25.8 */
  int pl = C->o ? C->o->plan : SPC_PLAN_AUTO;
  int64_t rows_from = nt > 1 ? (int64_t)3 << 17 : (int64_t)1 << 20;
  bool rows = pl == SPC_PLAN_ROWS ? C->N[0] <= 4 * C->n + 65536
              : pl == SPC_PLAN_RADIX ? false
                                     : C->n >= rows_from && C->N[0] <= 4 * C->n;
  bool cols = pl != SPC_PLAN_ROWS && C->N[1] <= 2 * C->n + 4096 && C->N[1] < C->limit;
  if (!s && ok == 0 && rows) {
    int rnt = 1;
    s = count_rows(C, &F, crd, out, &ok, &rnt, e);
    if (!s && ok == 1 && C->o && C->o->info) {
      int m = snprintf(C->o->info->plan, sizeof C->o->info->plan,
                       "counting (bucketed by the level-1 coordinate, each bucket sorted in cache, "
                       "then placed in order");
      if (m > 0 && (size_t)m < sizeof C->o->info->plan)
        snprintf(C->o->info->plan + m, sizeof C->o->info->plan - (size_t)m,
                 rnt > 1 ? "; %d threads)" : ")", rnt);
    }
  } else if (!s && ok == 0 && cols) {
    rcr rb;
    ir_arg *args = NULL;
    s = rc_get(C, NULL, RC_BUCKET, 0, &rb, e);
    ir_func *B = rb.v.f;
    if (!s && !(args = spc_calloc((size_t)ir_nparams(B), sizeof *args))) s = SPC_NOMEM(e);
    if (!s) {
      int k = 0;
      for (; k < C->order; k++) args[k] = (ir_arg){.data = crd[k], .len = C->n};
      if (C->vt != SPC_PATTERN) args[k++] = (ir_arg){.data = C->comb->val, .len = C->n};
      args[k++].s.i64 = C->n;
      args[k++].s.i64 = C->N[1];
      args[k++].s.i64 = C->lo[1];
      args[k++].s.i64 = bucket_shift(C->N[1]);
      int o0 = k;
      s = rc_run(C, &rb, args, e);
      if (!s) {
        void *bc[SPC_MAX_ORDER];
        for (int d = 0; d < C->order; d++) bc[d] = args[o0 + d].data;
        void *bv = C->vt != SPC_PATTERN ? args[o0 + C->order].data : NULL;
        s = count_once(C, &F, bc, &bv, out,
                       &ok, e);
      }
      for (int a = o0; a < ir_nparams(B); a++) spc_free(args[a].data);
    }
    spc_free(args);
    ir_func_free(&B);
    if (!s && ok == 1 && C->o && C->o->info)
      snprintf(C->o->info->plan, sizeof C->o->info->plan,
               "counting (bucketed by the level-2 coordinate, a radix sort of two digits, then placed: no sort)");
  } else if (!s && ok == 1 && C->o && C->o->info) {
    snprintf(C->o->info->plan, sizeof C->o->info->plan, "counting (source in order: no sort)");
  }
  *done = !s && ok == 1;
  ir_func_free(&F.f);
  return s;
}

/* ---- the direct plan ------------------------------------------------------------
 * A padding target (`fill: zero`) whose levels place a component by its
 * coordinates alone -- yield_pos writes no level array and there is no
 * insert_coord (dense, offset, squeezed: DIA, dense) -- except at most one
 * level k that keeps per-parent state (compressed: BCSR's block columns)
 * needs no sort: every component's position follows from its level
 * coordinates once the levels are initialized.  One IR routine:
 *
 *   pass 0: remap each component (its `requires` checked); per-coordinate
 *           queries ("[c]", id: squeezed's used) set a marker; level k's
 *           per-parent counts come from a marker of its coordinates stamped
 *           with the parent (reset by the stamp, never cleared: SciPy's
 *           csr_tobsr), which needs each parent's components contiguous
 *           (the source grouped by level k's parent);
 *   init:   every level's init and size, top first;
 *   pass 1: remap again and place: at level k, at each parent's first
 *           component, its distinct coordinates (listed by pass 0's marker)
 *           sorted (insertion sort, else sort_perm) and inserted in
 *           increasing order (yield_pos, insert_coord), their positions kept
 *           per coordinate; below, the
 *           stateless levels' yield_pos; the value stored at the last
 *           position.
 *
 * ok = 0 (a value that is zero, a level or a marker past the position
 * limit: the sort path refuses them, in its order), 2 (level k's parents
 * not grouped: bucketed first, see run_direct) or -1 (two components at one position: duplicates, or a
 * remapping that is not one-to-one) leaves the conversion to the sort path,
 * which combines or refuses them.  Otherwise the result is the sort path's
 * bit for bit: every position receives at most one component, the padding
 * is zero, and level k's coordinates are inserted in increasing order as the
 * sort would give them.
 *
 * spc_conv_direct(crd0.., vals, n, N0, lo0, .., limit, ok, arrays of every
 *                 level.., size, vout) */
struct dplan {
  int k;             /* the stateful level (-1: none) */
  int phase;         /* spc_conv_fdirect in phases (1 mark, 2 init, 3 place:
                        direct_body), over chunks of the source on threads */
  bool can_phase;    /* k < 0 and no level finalizes: phases may run */
  bool can_cphase;   /* k >= 0: a COO source may run in phases (1 mark, 2
                        init, 3 place, 4 finalize: run_cdirect) */
  int bphase;        /* build_dbucket in chunks (1 count, 2 place:
                        run_pdbucket) */
  bool idq[SPC_MAX_ORDER]; /* level l has [c] id() queries */
  bool ins[SPC_MAX_ORDER]; /* level l's insert_coord runs at the position its
                              yield_pos gives without state (singleton) */
};

/* Whether yield_pos of level l writes one of its arrays, or it has
 * insert_coord (its placing keeps state); *ins_only: it has insert_coord
 * but its yield_pos writes nothing (a singleton: the position follows
 * from the parent's, the coordinate is stored there). */
static spc_status level_stateful(conv *C, int l, bool *st, bool *ins_only, spc_error *e) {
  const spc_level_spec *ls = C->lv[l]->lf;
  lvbind b;
  asm_bind_init(&b, ls, C->lv[l], C->index_ty, C->coord_ty);
  bool ins = asm_lfn(&b, SPC_LF_INSERT) != NULL;
  *st = ins;
  *ins_only = ins;
  if (!ls->narrays) return SPC_OK;
  ir_func *f = ir_func_new("spc_yield_probe");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  bool w[SPC_LEVEL_MAX_ARRAYS] = {false};
  for (int k = 0; k < ls->narrays; k++)
    b.arr[k] = keep[k] = ir_param(f, ls->arrays[k].name,
                                  asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty),
                                  true, IR_INOUT);
  for (int k = 0; k < ls->nwork; k++)
    b.work[k] = lang_fresh_local(f, ls->work[k].name,
                                 asm_tname_ty(ls->work[k].type, C->index_ty, C->coord_ty), true);
  bind_locals(f, &b, C);
  spc_status s = asm_lower_fn(f, body, &b, SPC_LF_YIELD, b.q, NULL, e);
  if (!s) writes_of(body, keep, ls->narrays, w);
  for (int k = 0; k < ls->narrays; k++) *st |= w[k], *ins_only &= !w[k];
  ir_func_free(&f);
  return s;
}

/* The queries of level l parsed: every aggregate's kind and name into
 * kinds/names (at most SPC_SPEC_MAX * 4); *per_parent when any is "[*]";
 * false when one groups by anything but [*] or [c]. */
static bool dqueries(const spc_level_spec *ls, int *nagg, spc_agg_kind *kinds,
                     char (*names)[64], bool *per_parent, bool *by_coord) {
  *nagg = 0;
  *per_parent = *by_coord = false;
  for (int k = 0; k < ls->nqueries; k++) {
    spc_query *q = NULL;
    spc_error e2;
    lang_src src = ls->queries[k].at;
    char *txt = spc_strdup(ls->queries[k].text);
    if (!txt) return false;
    char *star = strstr(txt, "[*]");
    if (star) star[1] = ' ';
    src.text = txt;
    spc_error_clear(&e2);
    bool ok = !spc_query_parse(&src, &q, &e2);
    spc_free(txt);
    if (ok && !star) ok = q->ngroup == 1 && !strcmp(q->group[0], "c");
    for (int a = 0; ok && a < q->nagg; a++) {
      const spc_query_agg *A = &q->aggs[a];
      if (*nagg >= SPC_SPEC_MAX * 4 || A->nargs > 1 || (A->nargs == 1 && strcmp(A->args[0], "c"))) {
        ok = false;
        break;
      }
      kinds[*nagg] = A->kind;
      snprintf(names[*nagg], 64, "%s", A->name);
      (*nagg)++;
    }
    spc_query_free(&q);
    if (!ok) return false;
    if (star) *per_parent = true;
    else *by_coord = true;
  }
  return true;
}

/* Whether the direct plan applies to C (index types chosen): *P its shape. */
static bool direct_applies(conv *C, dplan *P) {
  if (C->nosort || C->measure || !C->fmt->fill_zero || C->L < 1) return false;
  spc_vtype sv = C->comb->vt;
  if (sv != SPC_PATTERN && sv != SPC_F64 && sv != SPC_F32 && sv != SPC_I64 && sv != SPC_U64)
    return false;
  if (C->vt != (sv == SPC_PATTERN ? SPC_F64 : sv)) return false;
  if (C->o && C->o->plan == SPC_PLAN_SORT) return false;
  P->k = -1;
  spc_error e2;
  for (int l = 0; l < C->L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    lvbind b;
    asm_bind_init(&b, ls, C->lv[l], C->index_ty, C->coord_ty);
    if (!C->lv[l]->unique || ls->narrays > SPC_LEVEL_MAX_ARRAYS || !asm_lfn(&b, SPC_LF_YIELD) ||
        !asm_lfn(&b, SPC_LF_SIZE))
      return false;
    for (int k = 0; k < ls->narrays; k++) {
      ir_ty ty = asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty);
      if (ty != IR_I32 && ty != IR_I64) return false;
    }
    bool st = false, io = false;
    spc_error_clear(&e2);
    if (level_stateful(C, l, &st, &io, &e2)) return false;
    P->ins[l] = io && !ls->nwork;
    if (P->ins[l]) st = false; /* placed like the stateless levels, then inserted */
    int nagg;
    spc_agg_kind kinds[SPC_SPEC_MAX * 4];
    char names[SPC_SPEC_MAX * 4][64];
    bool pp, bc;
    if (!dqueries(ls, &nagg, kinds, names, &pp, &bc)) return false;
    P->idq[l] = bc;
    if (st) { /* the one stateful level: per-parent counts, no workspace */
      if (P->k >= 0 || bc || ls->nwork || !(ls->props & SPC_LP_ORDERED)) return false;
      for (int a = 0; a < nagg; a++)
        if (kinds[a] != SPC_AGG_COUNT) return false;
      P->k = l;
    } else { /* stateless: per-coordinate markers only */
      if (pp) return false;
      for (int a = 0; a < nagg; a++)
        if (kinds[a] != SPC_AGG_ID) return false;
    }
  }
  /* a counter (ell's #i): counted in every pass, in the components' order
   * (which the sort path's remapping counts in too); not with a stateful
   * level, whose pass 1 runs per parent */
  if (C->r->ncounters && P->k >= 0) return false;
  for (int l = 0; l < P->k; l++) { /* the parents of level k: placed before any init */
    const spc_level_spec *ls = C->lv[l]->lf;
    lvbind b;
    asm_bind_init(&b, ls, C->lv[l], C->index_ty, C->coord_ty);
    if (ls->narrays || ls->nwork || ls->nqueries || asm_lfn(&b, SPC_LF_INIT) ||
        asm_lfn(&b, SPC_LF_FINALIZE))
      return false;
  }
  /* a COO's chunks on threads (run_cdirect): each chunk owns whole
   * parents of level k, so no two threads touch one parent's positions */
  P->can_cphase = P->k >= 0;
  /* in phases on threads (run_pdirect): no stateful level, no finalize */
  P->can_phase = P->k < 0 && C->order == 2;
  for (int l = 0; l < C->L && P->can_phase; l++) {
    lvbind b;
    asm_bind_init(&b, C->lv[l]->lf, C->lv[l], C->index_ty, C->coord_ty);
    P->can_phase = !asm_lfn(&b, SPC_LF_FINALIZE);
  }
  return true;
}

typedef struct dctx {
  conv *C;
  ir_func *f;
  const dplan *P;
  ir_var crd[SPC_MAX_ORDER];
  lvbind b[SPC_MAX_ORDER];
  ir_var o[SPC_MAX_ORDER]; /* one component's level coordinates */
  ir_var Nin[SPC_MAX_ORDER], loin[SPC_MAX_ORDER];
  ir_var x[SPC_MAX_ORDER]; /* its source indices */
  ir_var tlo, tv;          /* a COO's pass from tlo (-1: 0); tv its index */
  ir_var t0, t1, gskip;    /* a COO's chunk (run_cdirect; -1: the whole COO) */
  ir_var chk;              /* pass 1 checks for a position taken (-1: always) */
  ir_var clen[SPC_MAX_ORDER];      /* the counters' count array lengths */
  spc_counter_ir ctr[SPC_MAX_ORDER]; /* the counters of the pass being built */
  asm_src *S;  /* the source read through its own levels (NULL: the COO's crd..) */
  ir_var vals; /* the COO's values (-1: a pattern, or S) */
  ir_var stop; /* S: set before every break out of its nest */
} dctx;

/* The code of one component (x its source indices, val its value, NULL
 * for a pattern) appended to lb. */
typedef spc_status (*dbody)(dctx *D, ir_stmt *lb, ir_expr *const *x, ir_expr *val, void *arg,
                            spc_error *e);
typedef struct dleaf {
  dctx *D;
  dbody fn;
  void *arg;
} dleaf;

static spc_status dleaf_fn(void *ctx, ir_func *f, ir_stmt *lb, ir_expr *const *x, ir_expr *val,
                           spc_error *e) {
  (void)f;
  const dleaf *L = ctx;
  return L->fn(L->D, lb, x, val, L->arg, e);
}

/* One pass over the components appended to into, fn the code of each:
 * the COO's n components in order, or the source's nest (the order its
 * read-out gives). */
static spc_status dloop(dctx *D, ir_stmt *into, ir_var n, dbody fn, void *arg, spc_error *e) {
  ir_func *f = D->f;
  if (D->S) {
    ir_add(f, into, ir_assign(f, D->stop, ir_int(f, 0)));
    dleaf L = {D, fn, arg};
    return asm_src_nest(D->S, into, D->stop, dleaf_fn, &L, e);
  }
  ir_var t = D->tv = lang_fresh_local(f, "t", IR_I64, false);
  ir_expr *lo = D->tlo >= 0 ? ir_ref(f, D->tlo) : ir_int(f, 0);
  ir_stmt *lb = ir_body(ir_add(f, into, ir_for(f, t, lo, ir_ref(f, n), NULL)));
  ir_expr *x[SPC_MAX_ORDER];
  for (int k = 0; k < D->C->order; k++) x[k] = ir_load(f, D->crd[k], ir_ref(f, t));
  return fn(D, lb, x, D->vals >= 0 ? ir_load(f, D->vals, ir_ref(f, t)) : NULL, arg, e);
}

/* A component (source indices x) remapped into D->o (with its `requires`
 * when reqs); D->x its source indices. */
static spc_status dremap(dctx *D, ir_stmt *lb, ir_expr *const *x, bool reqs, spc_error *e) {
  conv *C = D->C;
  ir_func *f = D->f;
  req_ctx rq = {.C = C};
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_status s = lower_source_x(C, f, lb, x, reqs, &rq, src, e);
  for (int d = 0; d < C->order; d++) D->x[d] = rq.x[d];
  ir_var cv[SPC_MAX_ORDER];
  for (int c = 0; c < C->r->ncounters && !s; c++) { /* each pass counts afresh, in t's order */
    spc_counter_step(&D->ctr[c], f, lb, src);
    cv[c] = D->ctr[c].value;
  }
  if (!s) s = spc_remap_lower(C->r, f, lb, src, C->r->ncounters ? cv : NULL, outs, e);
  for (int l = 0; l < C->L && !s; l++) ir_add(f, lb, ir_assign(f, D->o[l], ir_cast(f, IR_I64, outs[l])));
  return s;
}

/* yield_pos of levels [from, to) down from position p (-1: the root, 0). */
static spc_status dchain(dctx *D, ir_stmt *lb, int from, int to, ir_var p, spc_error *e) {
  conv *C = D->C;
  ir_func *f = D->f;
  spc_status s = SPC_OK;
  for (int l = from; l < to && !s; l++) {
    lvbind *b = &D->b[l];
    ir_expr *pe = l > from ? ir_ref(f, D->b[l - 1].q)
                           : p >= 0 ? ir_cast(f, C->index_ty, ir_ref(f, p))
                                    : ir_cast(f, C->index_ty, ir_int(f, 0));
    ir_add(f, lb, ir_assign(f, b->p, pe));
    ir_add(f, lb, ir_assign(f, b->c, ir_cast(f, C->coord_ty, ir_ref(f, D->o[l]))));
    s = asm_lower_fn(f, lb, b, SPC_LF_YIELD, b->q, NULL, e);
    if (!s && D->P && D->P->ins[l]) s = asm_lower_fn(f, lb, b, SPC_LF_INSERT, -1, NULL, e);
  }
  return s;
}

/* if (cond) { ok = v; break } (out of the whole nest of a source read
 * through its levels) */
static void dbail(const dctx *D, ir_stmt *lb, ir_expr *cond, ir_var ok, int v) {
  ir_func *f = D->f;
  ir_stmt *iff = ir_add(f, lb, ir_if(f, cond, NULL, NULL));
  ir_add(f, ir_then(iff), ir_assign(f, ok, ir_int(f, v)));
  if (D->S) ir_add(f, ir_then(iff), ir_assign(f, D->stop, ir_int(f, 1)));
  ir_add(f, ir_then(iff), ir_break(f));
}

static ir_expr *dsub(ir_func *f, ir_var a, ir_var b) {
  return ir_bin(f, IR_SUB, ir_ref(f, a), ir_ref(f, b));
}

/* A component's value (val; NULL: a pattern's, 1.0) stored at position
 * qq: a zero (ok 0) or a position taken already (ok -1) stops the loop. */
static void dvalue(const dctx *D, ir_stmt *lb, ir_expr *val, ir_var vout, ir_var qq, ir_var ok) {
  ir_func *f = D->f;
  ir_ty vty = asm_value_ty(D->C->vt);
  ir_expr *v = ir_f64(f, 1.0);
  if (val) {
    ir_var vv = lang_fresh_local(f, "v", vty, false);
    ir_add(f, lb, ir_assign(f, vv, val));
    dbail(D, lb, ir_bin(f, IR_EQ, ir_ref(f, vv), ir_cast(f, vty, ir_int(f, 0))), ok, 0);
    v = ir_ref(f, vv);
  }
  ir_expr *taken = ir_bin(f, IR_NE, ir_load(f, vout, ir_ref(f, qq)), ir_cast(f, vty, ir_int(f, 0)));
  if (D->chk >= 0) taken = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_ref(f, D->chk), ir_int(f, 0)), taken);
  dbail(D, lb, taken, ok, -1);
  ir_add(f, lb, ir_store(f, vout, ir_ref(f, qq), v));
}

/* A COO's chunk [t0, t1) in phases (run_cdirect), the component at index
 * tv with level k's parent g: the chunk owns the parents whose first
 * component lies in [t0, t1), whole.  Its loop starts at t0 - 1 (where
 * t0 > 0), whose parent (gskip) is the chunk before's; it skips the
 * components of that parent until another comes, and past t1 it stops at
 * the first component of another parent than its last (cur: the last
 * parent it took, -1 before any; endt, where >= 0: where it stopped).
 * Returns the block the component's own code goes in (lb itself when the
 * COO is not in chunks).  What a chunk took, run_cdirect checks: the
 * chunks' ranges of components adjoin, their parents increase. */
static ir_stmt *dchunk(dctx *D, ir_stmt *lb, ir_var g, ir_var cur, ir_var endt) {
  if (D->t0 < 0) return lb;
  ir_func *f = D->f;
  ir_stmt *a = ir_add(f, lb, ir_if(f, ir_bin(f, IR_LT, ir_ref(f, D->tv), ir_ref(f, D->t0)), NULL, NULL));
  ir_add(f, ir_then(a), ir_assign(f, D->gskip, ir_ref(f, g)));
  ir_expr *fresh = ir_bin(f, IR_EQ, ir_ref(f, cur), ir_int(f, -1));
  ir_expr *prev = ir_bin(f, IR_LAND, fresh, ir_bin(f, IR_EQ, ir_ref(f, g), ir_ref(f, D->gskip)));
  ir_stmt *b = ir_then(ir_add(f, ir_else(f, a), ir_if(f, ir_un(f, IR_NOT, prev), NULL, NULL)));
  ir_expr *past = ir_bin(f, IR_LAND, ir_bin(f, IR_GE, ir_ref(f, D->tv), ir_ref(f, D->t1)),
                         ir_bin(f, IR_NE, ir_ref(f, g), ir_ref(f, cur)));
  ir_stmt *c = ir_add(f, b, ir_if(f, past, NULL, NULL));
  if (endt >= 0) ir_add(f, ir_then(c), ir_assign(f, endt, ir_ref(f, D->tv)));
  ir_add(f, ir_then(c), ir_break(f));
  return ir_else(f, c);
}

/* Level k placed per parent in pass 1 (see above): at each parent's
 * first component, the parent's distinct coordinates (dl, from pass 0's
 * marker: dl[doff .. doff + cnt[g])) sorted and inserted. */
typedef struct dpk {
  ir_var ok, cnt, dl, slot, perm, vout;
  ir_var g, cur, doff, m, x, r, u, cc, pk;
} dpk;

static spc_status dplace_k_one(dctx *D, ir_stmt *pl, ir_expr *const *xs, ir_expr *val, void *arg,
                               spc_error *e) {
  const dpk *K = arg;
  conv *C = D->C;
  ir_func *f = D->f;
  int k = D->P->k;
  lvbind *bk = &D->b[k];
  ir_var g = K->g, cur = K->cur, doff = K->doff, m = K->m, x = K->x, r = K->r, u = K->u;
  ir_var cc = K->cc, pk = K->pk, cnt = K->cnt, dl = K->dl, slot = K->slot, perm = K->perm;
  spc_status s = dremap(D, pl, xs, false, e);
  if (!s) s = dchain(D, pl, 0, k, -1, e);
  if (s) return s;
  ir_add(f, pl, ir_assign(f, g, k > 0 ? ir_cast(f, IR_I64, ir_ref(f, D->b[k - 1].q)) : ir_int(f, 0)));
  if (D->t0 >= 0) { /* a chunk: its dl begins at its first component */
    pl = dchunk(D, pl, g, cur, -1);
    ir_stmt *f0 = ir_then(ir_add(f, pl, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, cur), ir_int(f, -1)), NULL, NULL)));
    ir_add(f, f0, ir_assign(f, doff, ir_ref(f, D->tv)));
  }
  ir_stmt *ng = ir_then(ir_add(f, pl, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, g), ir_ref(f, cur)), NULL, NULL)));
  ir_add(f, ng, ir_assign(f, cur, ir_ref(f, g)));
  ir_add(f, ng, ir_assign(f, m, ir_load(f, cnt, ir_ref(f, g))));
  /* sorted: insertion sort of a short list, else sort_perm; perm holds
   * the positions in dl in increasing coordinate order */
  ir_stmt *sh = ir_add(f, ng, ir_if(f, ir_bin(f, IR_LE, ir_ref(f, m), ir_int(f, 32)), NULL, NULL));
  {
    ir_stmt *tb = ir_then(sh);
    ir_stmt *fl = ir_body(ir_add(f, tb, ir_for(f, r, ir_int(f, 1), ir_ref(f, m), NULL)));
    ir_expr *at_r = ir_bin(f, IR_ADD, ir_ref(f, doff), ir_ref(f, r));
    ir_add(f, fl, ir_assign(f, x, ir_load(f, dl, at_r)));
    ir_add(f, fl, ir_assign(f, u, ir_bin(f, IR_ADD, ir_ref(f, doff), ir_ref(f, r))));
    ir_stmt *wl = ir_body(ir_add(f, fl, ir_while(f, ir_bin(f, IR_GT, ir_ref(f, u), ir_ref(f, doff)), NULL)));
    ir_expr *prev = ir_load(f, dl, ir_bin(f, IR_SUB, ir_ref(f, u), ir_int(f, 1)));
    ir_stmt *le = ir_add(f, wl, ir_if(f, ir_bin(f, IR_LE, prev, ir_ref(f, x)), NULL, NULL));
    ir_add(f, ir_then(le), ir_break(f));
    ir_add(f, wl, ir_store(f, dl, ir_ref(f, u), ir_load(f, dl, ir_bin(f, IR_SUB, ir_ref(f, u), ir_int(f, 1)))));
    ir_add(f, wl, ir_assign(f, u, ir_bin(f, IR_SUB, ir_ref(f, u), ir_int(f, 1))));
    ir_add(f, fl, ir_store(f, dl, ir_ref(f, u), ir_ref(f, x)));
    ir_stmt *fi = ir_body(ir_add(f, tb, ir_for(f, r, ir_int(f, 0), ir_ref(f, m), NULL)));
    ir_add(f, fi, ir_store(f, perm, ir_ref(f, r), ir_bin(f, IR_ADD, ir_ref(f, doff), ir_ref(f, r))));
    ir_stmt *eb = ir_else(f, sh);
    ir_stmt *fp = ir_body(ir_add(f, eb, ir_for(f, r, ir_int(f, 0), ir_ref(f, m), NULL)));
    ir_add(f, fp, ir_store(f, perm, ir_ref(f, r), ir_bin(f, IR_ADD, ir_ref(f, doff), ir_ref(f, r))));
    ir_var sv[2] = {perm, dl};
    ir_expr *na[1] = {ir_ref(f, m)};
    ir_add(f, eb, ir_call(f, IR_SORT_PERM, sv, 2, na, 1));
  }
  /* inserted in increasing order; each coordinate's position kept */
  ir_stmt *il = ir_body(ir_add(f, ng, ir_for(f, r, ir_int(f, 0), ir_ref(f, m), NULL)));
  ir_add(f, il, ir_assign(f, cc, ir_load(f, dl, ir_load(f, perm, ir_ref(f, r)))));
  ir_add(f, il, ir_assign(f, bk->p, ir_cast(f, C->index_ty, ir_ref(f, g))));
  ir_add(f, il, ir_assign(f, bk->c, ir_cast(f, C->coord_ty, ir_bin(f, IR_ADD, ir_ref(f, cc),
                                                                  ir_ref(f, D->loin[k])))));
  if ((s = asm_lower_fn(f, il, bk, SPC_LF_YIELD, bk->q, NULL, e))) return s;
  if (asm_lfn(bk, SPC_LF_INSERT) && (s = asm_lower_fn(f, il, bk, SPC_LF_INSERT, -1, NULL, e))) return s;
  ir_add(f, il, ir_store(f, slot, ir_ref(f, cc), ir_cast(f, IR_I64, ir_ref(f, bk->q))));
  ir_add(f, ng, ir_assign(f, doff, ir_bin(f, IR_ADD, ir_ref(f, doff), ir_ref(f, m))));
  /* the component placed */
  ir_add(f, pl, ir_assign(f, pk, ir_load(f, slot, dsub(f, D->o[k], D->loin[k]))));
  if ((s = dchain(D, pl, k + 1, C->L, pk, e))) return s;
  ir_expr *q = k + 1 < C->L ? ir_ref(f, D->b[C->L - 1].q) : ir_ref(f, pk);
  ir_var qq = lang_fresh_local(f, "qv", IR_I64, false);
  ir_add(f, pl, ir_assign(f, qq, ir_cast(f, IR_I64, q)));
  dvalue(D, pl, val, K->vout, qq, K->ok);
  return SPC_OK;
}

static spc_status dplace_k(dctx *D, ir_stmt *into, ir_var n, ir_var ok, ir_var cnt, ir_var dl,
                           ir_var slot, ir_var perm, ir_var vout, spc_error *e) {
  ir_func *f = D->f;
  dpk K = {.ok = ok, .cnt = cnt, .dl = dl, .slot = slot, .perm = perm, .vout = vout};
  K.g = lang_fresh_local(f, "g", IR_I64, false);
  K.cur = lang_fresh_local(f, "gcur", IR_I64, false);
  K.doff = lang_fresh_local(f, "doff", IR_I64, false);
  K.m = lang_fresh_local(f, "m", IR_I64, false);
  K.x = lang_fresh_local(f, "x", IR_I64, false);
  K.r = lang_fresh_local(f, "r", IR_I64, false);
  K.u = lang_fresh_local(f, "u", IR_I64, false);
  K.cc = lang_fresh_local(f, "cc", IR_I64, false);
  K.pk = lang_fresh_local(f, "pk", IR_I64, false);
  ir_add(f, into, ir_assign(f, K.cur, ir_int(f, -1)));
  ir_add(f, into, ir_assign(f, K.doff, ir_int(f, 0)));
  return dloop(D, into, n, dplace_k_one, &K, e);
}

/* ok = 0 when cond (no break: straight-line code) */
static void dunless(ir_func *f, ir_stmt *lb, ir_expr *cond, ir_var ok) {
  ir_stmt *iff = ir_add(f, lb, ir_if(f, cond, NULL, NULL));
  ir_add(f, ir_then(iff), ir_assign(f, ok, ir_int(f, 0)));
}

/* The counters of one pass over the components: their count arrays made
 * zero in `into` (end: freed there, after the pass's loop). */
static spc_status dcounters(dctx *D, ir_stmt *into, bool end, spc_error *e) {
  conv *C = D->C;
  spc_status s = SPC_OK;
  for (int c = 0; c < C->r->ncounters && !s; c++)
    if (end)
      spc_counter_end(&D->ctr[c], D->f, into);
    else
      s = spc_counter_begin(C->r, c, SPC_COUNTER_DENSE, C->comb->dims, C->limit, D->f, into,
                            &D->ctr[c], ir_ref(D->f, D->clen[c]), e);
  return s;
}

/* Pass 0's code of one component (see above); in a chunk (dchunk) also
 * its first component's index (first, where the chunk's dl begins) and
 * parent (gfirst), and where it stopped (endt). */
typedef struct dp0 {
  ir_var ok, g, pg, mark, cnt, dl, nd, first, gfirst, endt;
  const ir_var *inc, *px, *used;
} dp0;

static spc_status dpass0_one(dctx *D, ir_stmt *l0, ir_expr *const *xs, ir_expr *val, void *arg,
                             spc_error *e) {
  (void)val;
  const dp0 *Z = arg;
  conv *C = D->C;
  ir_func *f = D->f;
  int k = D->P->k;
  ir_var g = Z->g, pg = Z->pg, mark = Z->mark, cnt = Z->cnt, dl = Z->dl, nd = Z->nd, ok = Z->ok;
  spc_status s = dremap(D, l0, xs, true, e);
  if (s) return s;
  for (int w = 0; w < 2; w++) {
    ir_expr *lt = NULL; /* (px..) < (x..) lexicographically, built from the last index up */
    for (int a = C->order - 1; a >= 0; a--) {
      int d = w ? C->order - 1 - a : a;
      ir_expr *l1 = ir_bin(f, IR_LT, ir_ref(f, Z->px[d]), ir_ref(f, D->x[d]));
      lt = !lt ? l1
               : ir_bin(f, IR_LOR, l1,
                        ir_bin(f, IR_LAND, ir_bin(f, IR_EQ, ir_ref(f, Z->px[d]), ir_ref(f, D->x[d])), lt));
    }
    ir_stmt *iff = ir_add(f, l0, ir_if(f, ir_un(f, IR_NOT, lt), NULL, NULL));
    ir_add(f, ir_then(iff), ir_assign(f, Z->inc[w], ir_int(f, 0)));
  }
  for (int d = 0; d < C->order; d++) ir_add(f, l0, ir_assign(f, Z->px[d], ir_ref(f, D->x[d])));
  for (int l = 0; l < C->L; l++)
    if (Z->used[l] >= 0)
      ir_add(f, l0, ir_store(f, Z->used[l], dsub(f, D->o[l], D->loin[l]), ir_int(f, 1)));
  if (k >= 0) {
    if ((s = dchain(D, l0, 0, k, -1, e))) return s;
    ir_add(f, l0, ir_assign(f, g, k > 0 ? ir_cast(f, IR_I64, ir_ref(f, D->b[k - 1].q)) : ir_int(f, 0)));
    if (D->t0 >= 0) {
      l0 = dchunk(D, l0, g, pg, Z->endt);
      ir_stmt *f0 = ir_then(ir_add(f, l0, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, pg), ir_int(f, -1)), NULL, NULL)));
      ir_add(f, f0, ir_assign(f, Z->first, ir_ref(f, D->tv)));
      ir_add(f, f0, ir_assign(f, Z->gfirst, ir_ref(f, g)));
      ir_add(f, f0, ir_assign(f, nd, ir_ref(f, D->tv)));
    }
    dbail(D, l0, ir_bin(f, IR_LT, ir_ref(f, g), ir_ref(f, pg)), ok, 2); /* not grouped */
    ir_add(f, l0, ir_assign(f, pg, ir_ref(f, g)));
    ir_expr *cc = dsub(f, D->o[k], D->loin[k]);
    ir_expr *st = ir_bin(f, IR_ADD, ir_ref(f, g), ir_int(f, 1));
    ir_stmt *nw = ir_add(f, l0, ir_if(f, ir_bin(f, IR_NE, ir_load(f, mark, cc), st), NULL, NULL));
    ir_add(f, ir_then(nw), ir_store(f, mark, dsub(f, D->o[k], D->loin[k]),
                                    ir_bin(f, IR_ADD, ir_ref(f, g), ir_int(f, 1))));
    ir_add(f, ir_then(nw), ir_store(f, cnt, ir_ref(f, g),
                                    ir_bin(f, IR_ADD, ir_load(f, cnt, ir_ref(f, g)), ir_int(f, 1))));
    ir_add(f, ir_then(nw), ir_store(f, dl, ir_ref(f, nd), dsub(f, D->o[k], D->loin[k])));
    ir_add(f, ir_then(nw), ir_assign(f, nd, ir_bin(f, IR_ADD, ir_ref(f, nd), ir_int(f, 1))));
  }
  return SPC_OK;
}

/* Pass 1's code of one component where no level keeps state. */
typedef struct dp1 {
  ir_var ok, vout;
} dp1;

static spc_status dpass1_one(dctx *D, ir_stmt *l1, ir_expr *const *xs, ir_expr *val, void *arg,
                             spc_error *e) {
  const dp1 *Z = arg;
  ir_func *f = D->f;
  spc_status s = dremap(D, l1, xs, false, e);
  if (!s) s = dchain(D, l1, 0, D->C->L, -1, e);
  if (s) return s;
  ir_var qq = lang_fresh_local(f, "qv", IR_I64, false);
  ir_add(f, l1, ir_assign(f, qq, ir_cast(f, IR_I64, ir_ref(f, D->b[D->C->L - 1].q))));
  dvalue(D, l1, val, Z->vout, qq, Z->ok);
  return SPC_OK;
}

/* spc_conv_direct's code into f (see above); S: the source read through
 * its own levels (spc_conv_fdirect: its arrays, values and extents in
 * place of crd.. and vals).  P->phase 1, 2, 3 (S, k < 0): only pass 0
 * over the source's top positions [sq0, sq1) into the caller's markers
 * (used0.., zeroed), its order flags into res; only the levels' init and
 * size from those markers (the level arrays, workspaces, size and vout
 * made); only pass 1 over [sq0, sq1) into them, checking taken positions
 * where chk_in (run_pdirect: the chunks on threads). */
static spc_status direct_body(conv *C, asm_src *S, const dplan *P, ir_func *f, int *p_ok,
                              int *p_arr0, spc_error *e) {
  char name[160];
  dctx D = {.C = C, .f = f, .P = P, .chk = -1, .S = S, .vals = -1, .stop = -1, .tlo = -1, .tv = -1,
            .t0 = -1, .t1 = -1, .gskip = -1};
  int k = P->k;
  const int ph = P->phase;
  ir_stmt *body = ir_func_body(f);
  ir_ty vty = asm_value_ty(C->vt);
  if (!S) {
    sparams_crd(C, f, D.crd, -1);
    if (C->comb->vt != SPC_PATTERN) D.vals = ir_param(f, "vals", vty, true, IR_IN);
  }
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  const bool chunked = ph && !S; /* a COO's chunks (run_cdirect) */
  if (chunked) {
    D.t0 = ir_param(f, "t0_in", IR_I64, false, IR_IN);
    D.t1 = ir_param(f, "t1_in", IR_I64, false, IR_IN);
  }
  for (int l = 0; l < C->L; l++) {
    snprintf(name, sizeof name, "N%d_in", l);
    D.Nin[l] = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "lo%d_in", l);
    D.loin[l] = ir_param(f, name, IR_I64, false, IR_IN);
  }
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  for (int c = 0; c < C->r->ncounters; c++) {
    snprintf(name, sizeof name, "cnt_len%d", c);
    D.clen[c] = ir_param(f, name, IR_I64, false, IR_IN);
  }
  /* in phases: pass 1's check, pass 0's order flags, the markers; what
   * init makes is its output and the others' input */
  const ir_dir made = !ph || ph == 2 ? IR_OUT : IR_INOUT;
  ir_var cnt = -1, mark = -1, slot = -1, dl = -1, nd = -1, perm = -1, npk = -1, pg = -1, g = -1;
  ir_var chkin = -1, res = -1, used[SPC_MAX_ORDER];
  for (int l = 0; l < C->L; l++) used[l] = -1;
  if (ph) {
    chkin = ir_param(f, "chk_in", IR_I64, false, IR_IN);
    res = ir_param(f, "res", IR_I64, true, IR_INOUT);
    for (int l = 0; l < C->L; l++) {
      snprintf(name, sizeof name, "used%d", l);
      if (P->idq[l]) used[l] = ir_param(f, name, IR_I64, true, IR_INOUT);
    }
    /* a chunk's counts per parent of level k (phase 1 makes its own, the
     * others read the combined ones); every chunk's parents' distinct
     * coordinates, each chunk's from its first component's index */
    if (chunked) {
      cnt = ir_param(f, "cntk", IR_I64, true, ph == 1 ? IR_OUT : IR_IN);
      dl = ir_param(f, "dl", IR_I64, true, ph == 1 || ph == 3 ? IR_INOUT : IR_IN);
    }
  }
  for (int l = 0; l < C->L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    lvbind *b = &D.b[l];
    asm_bind_init(b, ls, C->lv[l], C->index_ty, C->coord_ty);
    for (int a = 0; a < ls->nwork; a++) {
      ir_ty ty = asm_tname_ty(ls->work[a].type, C->index_ty, C->coord_ty);
      b->work[a] = ph ? ir_param(f, ls->work[a].name, ty, true, made)
                      : lang_fresh_local(f, ls->work[a].name, ty, true);
    }
  }
  *p_ok = ir_nparams(f);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  *p_arr0 = ir_nparams(f);
  for (int l = 0; l < C->L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    for (int a = 0; a < ls->narrays; a++)
      D.b[l].arr[a] = ir_param(f, ls->arrays[a].name,
                               asm_tname_ty(ls->arrays[a].type, C->index_ty, C->coord_ty), true, made);
  }
  ir_var size = ir_param(f, "size", IR_I64, false, made == IR_OUT ? IR_OUT : IR_IN);
  ir_var vout = ir_param(f, "vout", vty, true, made);
  for (int l = 0; l < C->L; l++) {
    lvbind *b = &D.b[l];
    bind_locals(f, b, C);
    ir_add(f, body, ir_assign(f, b->N, ir_ref(f, D.Nin[l])));
    ir_add(f, body, ir_assign(f, b->lo, ir_ref(f, D.loin[l])));
    snprintf(name, sizeof name, "o%d", l);
    D.o[l] = lang_fresh_local(f, name, IR_I64, false);
  }
  ir_add(f, body, ir_assign(f, ok, ir_int(f, 1)));
  if (made == IR_OUT) ir_add(f, body, ir_assign(f, size, ir_int(f, 0)));
  ir_add(f, body, ir_assign(f, D.b[0].np, ir_cast(f, C->index_ty, ir_int(f, 1))));
  spc_status s = SPC_OK;
  /* a chunk's phases 3 and 4: the levels' parent counts as init found
   * them (phase 2 left them in res[8 + l]; a size read again now could
   * race with another chunk's yield_pos) */
  for (int l = 1; l < C->L && chunked && ph >= 3; l++)
    ir_add(f, body, ir_assign(f, D.b[l].np, ir_cast(f, C->index_ty, ir_load(f, res, ir_int(f, 8 + l)))));
  if (ph == 4) { /* the levels' finalize, once every chunk is placed */
    for (int l = 0; l < C->L && !s; l++)
      if (asm_lfn(&D.b[l], SPC_LF_FINALIZE)) s = asm_lower_fn(f, body, &D.b[l], SPC_LF_FINALIZE, -1, NULL, e);
    return s;
  }
  ir_var sz = lang_fresh_local(f, "sz", IR_I64, false);
  /* the parents of level k: their sizes need no init */
  for (int l = 0; l < k && !s; l++) {
    s = asm_lower_fn(f, body, &D.b[l], SPC_LF_SIZE, sz, NULL, e);
    ir_add(f, body, ir_assign(f, D.b[l + 1].np, ir_cast(f, C->index_ty, ir_ref(f, sz))));
  }
  if (s) return s;
  /* markers (and level k's parents) past the position limit: the sort
   * path's to refuse */
  for (int l = 0; l < C->L; l++) {
    if (P->idq[l] || l == k)
      dunless(f, body, ir_bin(f, IR_GT, ir_ref(f, D.Nin[l]), ir_ref(f, limit)), ok);
  }
  if (k >= 0) {
    npk = lang_fresh_local(f, "npk", IR_I64, false);
    ir_add(f, body, ir_assign(f, npk, ir_cast(f, IR_I64, ir_ref(f, D.b[k].np))));
    dunless(f, body, ir_bin(f, IR_GT, ir_ref(f, npk), ir_ref(f, limit)), ok);
    if (!chunked) cnt = lang_fresh_local(f, "cnt", IR_I64, true);
    mark = lang_fresh_local(f, "mark", IR_I64, true);
    slot = lang_fresh_local(f, "slot", IR_I64, true);
    if (!chunked) dl = lang_fresh_local(f, "dl", IR_I64, true);
    nd = lang_fresh_local(f, "nd", IR_I64, false);
    perm = lang_fresh_local(f, "perm", IR_I64, true);
    pg = lang_fresh_local(f, "pg", IR_I64, false);
    g = lang_fresh_local(f, "g", IR_I64, false);
  }
  ir_stmt *in = ir_then(ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  for (int l = 0; l < C->L && !ph; l++) {
    if (!P->idq[l]) continue;
    used[l] = lang_fresh_local(f, "used", IR_I64, true);
    ir_add(f, in, ir_alloc(f, used[l], ir_ref(f, D.Nin[l]), true));
  }
  if (k >= 0 && (!ph || ph == 1)) {
    ir_add(f, in, ir_alloc(f, cnt, ir_ref(f, npk), true));
    ir_add(f, in, ir_alloc(f, mark, ir_ref(f, D.Nin[k]), true));
    /* each parent's distinct coordinates, in the order met (at most n) */
    if (!chunked) ir_add(f, in, ir_alloc(f, dl, ir_ref(f, n), false));
    ir_add(f, in, ir_assign(f, nd, ir_int(f, 0)));
    ir_add(f, in, ir_assign(f, pg, ir_int(f, -1)));
  }
  /* a chunk's passes start at t0 - 1 (dchunk) */
  if (chunked && (ph == 1 || ph == 3)) {
    D.tlo = lang_fresh_local(f, "tlo", IR_I64, false);
    D.gskip = lang_fresh_local(f, "gskip", IR_I64, false);
    ir_add(f, in, ir_assign(f, D.tlo, ir_select(f, ir_bin(f, IR_GT, ir_ref(f, D.t0), ir_int(f, 0)),
                                                 ir_bin(f, IR_SUB, ir_ref(f, D.t0), ir_int(f, 1)),
                                                 ir_int(f, 0))));
    ir_add(f, in, ir_assign(f, D.gskip, ir_int(f, -1)));
  }
  if (S) D.stop = lang_fresh_local(f, "stop", IR_I64, false);
  /* pass 0 */
  /* the source strictly increasing in its indices, in dimension order or
   * the reverse: no two components alike, pass 1 need not check */
  ir_var inc[2], px[SPC_MAX_ORDER];
  for (int d = 0; d < C->order; d++) px[d] = lang_fresh_local(f, "px", IR_I64, false);
  for (int w = 0; w < 2; w++) inc[w] = lang_fresh_local(f, w ? "inc10" : "inc01", IR_I64, false);
  if (!ph || ph == 1) {
    for (int d = 0; d < C->order; d++) ir_add(f, in, ir_assign(f, px[d], ir_int(f, -1)));
    for (int w = 0; w < 2; w++) ir_add(f, in, ir_assign(f, inc[w], ir_int(f, 1)));
    if ((s = dcounters(&D, in, false, e))) return s;
    dp0 Z0 = {.ok = ok, .g = g, .pg = pg, .mark = mark, .cnt = cnt, .dl = dl, .nd = nd,
              .first = -1, .gfirst = -1, .endt = -1, .inc = inc, .px = px, .used = used};
    if (chunked) {
      Z0.first = lang_fresh_local(f, "first", IR_I64, false);
      Z0.gfirst = lang_fresh_local(f, "gfirst", IR_I64, false);
      Z0.endt = lang_fresh_local(f, "endt", IR_I64, false);
      ir_add(f, in, ir_assign(f, Z0.first, ir_int(f, -1)));
      ir_add(f, in, ir_assign(f, Z0.gfirst, ir_int(f, -1)));
      ir_add(f, in, ir_assign(f, Z0.endt, ir_ref(f, n)));
    }
    if ((s = dloop(&D, in, n, dpass0_one, &Z0, e))) return s;
    if (chunked) { /* what the chunk took: [first, endt), parents gfirst .. pg */
      ir_stmt *no = ir_then(ir_add(f, in, ir_if(f, ir_bin(f, IR_LT, ir_ref(f, Z0.first), ir_int(f, 0)), NULL, NULL)));
      ir_add(f, no, ir_assign(f, Z0.first, ir_ref(f, Z0.endt)));
      ir_var rv[4] = {Z0.first, Z0.endt, Z0.gfirst, pg};
      for (int w = 0; w < 4; w++) ir_add(f, in, ir_store(f, res, ir_int(f, 2 + w), ir_ref(f, rv[w])));
    }
    if ((s = dcounters(&D, in, true, e))) return s;
    /* a counter numbers the components of the combined source (strictly
     * increasing in dimension order, as the sort path's and the read-out's
     * are): a source read in any other order is left to them */
    if (S && C->r->ncounters) dunless(f, in, ir_bin(f, IR_EQ, ir_ref(f, inc[0]), ir_int(f, 0)), ok);
    for (int w = 0; w < 2 && ph; w++) ir_add(f, in, ir_store(f, res, ir_int(f, w), ir_ref(f, inc[w])));
  }
  /* every level's init and size, top first */
  ir_stmt *in2 = ph ? in : ir_then(ir_add(f, in, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  for (int l = 0; l < C->L && !s && (!ph || ph == 2); l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    lvbind *b = &D.b[l];
    if (l > 0) ir_add(f, in2, ir_assign(f, b->np, ir_cast(f, C->index_ty, ir_ref(f, sz))));
    int nagg;
    spc_agg_kind kinds[SPC_SPEC_MAX * 4];
    char names[SPC_SPEC_MAX * 4][64];
    bool pp, bc;
    if (!dqueries(ls, &nagg, kinds, names, &pp, &bc)) return SPC_ERR_UNSUPPORTED;
    for (int a = 0; a < nagg; a++) {
      snprintf(b->qbuf[b->nq], sizeof b->qbuf[0], "%.63s", names[a]);
      b->qnames[b->nq] = b->qbuf[b->nq];
      b->qvars[b->nq++] = l == k ? cnt : used[l];
    }
    if (asm_lfn(b, SPC_LF_INIT)) s = asm_lower_fn(f, in2, b, SPC_LF_INIT, -1, NULL, e);
    if (!s) s = asm_lower_fn(f, in2, b, SPC_LF_SIZE, sz, NULL, e);
    if (s) return s;
    /* past the position limit: the sort path's to refuse, after its
     * check of explicit zeros */
    dunless(f, in2, ir_bin(f, IR_GT, ir_ref(f, sz), ir_ref(f, limit)), ok);
    in2 = ir_then(ir_add(f, in2, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  }
  if (!ph || ph == 2) {
    ir_add(f, in2, ir_assign(f, size, ir_ref(f, sz)));
    ir_add(f, in2, ir_alloc(f, vout, ir_ref(f, size), true));
  }
  for (int l = 0; l < C->L && chunked && ph == 2; l++) /* for phases 3 and 4 */
    ir_add(f, in2, ir_store(f, res, ir_int(f, 8 + l), ir_cast(f, IR_I64, ir_ref(f, D.b[l].np))));
  bool ins = false; /* an insert at a position a component may share: always checked */
  for (int l = 0; l < C->L; l++) ins |= P->ins[l];
  if (!ins) D.chk = lang_fresh_local(f, "chk", IR_I64, false);
  if (!ins && !ph) ir_add(f, in2, ir_assign(f, D.chk, ir_select(f, ir_bin(f, IR_LOR, ir_bin(f, IR_NE, ir_ref(f, inc[0]), ir_int(f, 0)),
                                                              ir_bin(f, IR_NE, ir_ref(f, inc[1]), ir_int(f, 0))),
                                               ir_int(f, 0), ir_int(f, 1))));
  if (ph == 3) { /* the levels' parent counts again (yield_pos may read np) */
    for (int l = 0; l + 1 < C->L && !s && !chunked; l++) {
      s = asm_lower_fn(f, in2, &D.b[l], SPC_LF_SIZE, sz, NULL, e);
      ir_add(f, in2, ir_assign(f, D.b[l + 1].np, ir_cast(f, C->index_ty, ir_ref(f, sz))));
    }
    if (s) return s;
    if (!ins) ir_add(f, in2, ir_assign(f, D.chk, ir_ref(f, chkin)));
  }
  /* pass 1 */
  if ((!ph || ph == 3) && k < 0) {
    if ((s = dcounters(&D, in2, false, e))) return s;
    dp1 Z1 = {.ok = ok, .vout = vout};
    if ((s = dloop(&D, in2, n, dpass1_one, &Z1, e))) return s;
    if ((s = dcounters(&D, in2, true, e))) return s;
  } else if (!ph || (chunked && ph == 3)) {
    ir_var mx = lang_fresh_local(f, "mx", IR_I64, false);
    ir_add(f, in2, ir_assign(f, mx, ir_int(f, 1)));
    ir_var t = lang_fresh_local(f, "t", IR_I64, false);
    ir_stmt *ml = ir_body(ir_add(f, in2, ir_for(f, t, ir_int(f, 0), ir_ref(f, npk), NULL)));
    ir_add(f, ml, ir_assign(f, mx, ir_bin(f, IR_MAX, ir_ref(f, mx), ir_load(f, cnt, ir_ref(f, t)))));
    ir_add(f, in2, ir_alloc(f, perm, ir_ref(f, mx), false));
    ir_add(f, in2, ir_alloc(f, slot, ir_ref(f, D.Nin[k]), false));
    if ((s = dplace_k(&D, in2, n, ok, cnt, dl, slot, perm, vout, e))) return s;
  }
  if (ph) { /* no level finalizes (direct_applies), or phase 4 does */
    if (chunked) {
      ir_var fr[3] = {mark, slot, perm};
      for (int a = 0; a < 3; a++) ir_add(f, body, ir_free(f, fr[a]));
    }
    return s;
  }
  ir_stmt *in3 = ir_then(ir_add(f, in2, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
  for (int l = 0; l < C->L && !s; l++)
    if (asm_lfn(&D.b[l], SPC_LF_FINALIZE)) s = asm_lower_fn(f, in3, &D.b[l], SPC_LF_FINALIZE, -1, NULL, e);
  for (int l = 0; l < C->L && !s; l++) {
    if (used[l] >= 0) ir_add(f, body, ir_free(f, used[l]));
    for (int a = 0; a < C->lv[l]->lf->nwork; a++) ir_add(f, body, ir_free(f, D.b[l].work[a]));
  }
  if (k >= 0) {
    ir_var fr[5] = {cnt, mark, slot, dl, perm};
    for (int a = 0; a < 5; a++) ir_add(f, body, ir_free(f, fr[a]));
  }
  return s;
}

static spc_status build_direct(conv *C, const conv_info *SI, const dplan *P, ir_func **out,
                               int *p_ok, int *p_arr0, spc_error *e) {
  if (P->phase && (SI ? P->k >= 0 || !P->can_phase || P->phase > 3 : !P->can_cphase))
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "direct plan in phases: not for this plan");
  static const char *const nm[] = {"spc_conv_fdirect", "spc_conv_fdmark", "spc_conv_fdinit",
                                   "spc_conv_fdplace"};
  static const char *const cnm[] = {"spc_conv_direct", "spc_conv_dmark", "spc_conv_dinit",
                                    "spc_conv_dplace", "spc_conv_dfinal"};
  ir_func *f = *out = ir_func_new(SI ? nm[P->phase] : cnm[P->phase]);
  if (!f) return SPC_NOMEM(e);
  asm_src *S = NULL;
  spc_status s = SI ? asm_src_new(SI, C->order, C->comb->vt, P->phase != 0, f, &S, e) : SPC_OK;
  if (!s) s = direct_body(C, S, P, f, p_ok, p_arr0, e);
  asm_src_free(&S);
  return s ? s : ir_verify(f, e);
}

/* Bucketing for the direct plan: the components (coordinates and values,
 * in their own types) reordered stably by the position of level k's parent,
 * by one counting sort, so that each parent's components come together (a
 * CSC or a column-ordered COO into BCSR).
 *
 * spc_conv_dbucket(crd0.., vals, n, N0, lo0, .. (levels above k), out0..,
 *                  vout) */
static spc_status build_dbucket(conv *C, const dplan *P, ir_func **out, spc_error *e) {
  /* in chunks [t0, t1) (run_pdbucket): 1 counts a chunk's components per
   * parent into cnt[g + 1] (made here), 2 places them from the chunk's
   * starts cnt[g] into the shared out0.., vout */
  const int bph = P->bphase;
  static const char *const nm[] = {"spc_conv_dbucket", "spc_conv_dbcount", "spc_conv_dbplace"};
  ir_func *f = *out = ir_func_new(nm[bph]);
  if (!f) return SPC_NOMEM(e);
  char name[64];
  dctx D = {.C = C, .f = f, .P = P, .vals = -1, .stop = -1, .tlo = -1, .tv = -1, .t0 = -1, .t1 = -1,
            .gskip = -1};
  int k = P->k;
  ir_stmt *body = ir_func_body(f);
  ir_ty vty = asm_value_ty(C->vt);
  bool pat = C->comb->vt == SPC_PATTERN;
  sparams_crd(C, f, D.crd, -1);
  ir_var vals = !pat ? ir_param(f, "vals", vty, true, IR_IN) : -1;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var t0 = bph ? ir_param(f, "t0_in", IR_I64, false, IR_IN) : -1;
  ir_var t1 = bph ? ir_param(f, "t1_in", IR_I64, false, IR_IN) : -1;
  for (int l = 0; l < k; l++) {
    snprintf(name, sizeof name, "N%d_in", l);
    D.Nin[l] = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "lo%d_in", l);
    D.loin[l] = ir_param(f, name, IR_I64, false, IR_IN);
  }
  ir_var cnt = bph ? ir_param(f, "cnt", IR_I64, true, bph == 1 ? IR_OUT : IR_INOUT) : -1;
  const ir_dir od = bph ? IR_INOUT : IR_OUT; /* in chunks: the caller's */
  ir_var o[SPC_MAX_ORDER];
  for (int d = 0; d < C->order; d++) {
    snprintf(name, sizeof name, "out%d", d);
    o[d] = ir_param(f, name, ir_var_get(f, D.crd[d])->ty, true, od);
    if (!bph) ir_add(f, body, ir_alloc(f, o[d], ir_ref(f, n), false));
  }
  ir_var vout = !pat ? ir_param(f, "vout", vty, true, od) : -1;
  if (!pat && !bph) ir_add(f, body, ir_alloc(f, vout, ir_ref(f, n), false));
  for (int l = 0; l < C->L; l++) {
    snprintf(name, sizeof name, "o%d", l);
    D.o[l] = lang_fresh_local(f, name, IR_I64, false);
  }
  for (int l = 0; l < k; l++) {
    lvbind *b = &D.b[l];
    asm_bind_init(b, C->lv[l]->lf, C->lv[l], C->index_ty, C->coord_ty);
    bind_locals(f, b, C);
    ir_add(f, body, ir_assign(f, b->N, ir_ref(f, D.Nin[l])));
    ir_add(f, body, ir_assign(f, b->lo, ir_ref(f, D.loin[l])));
  }
  ir_var sz = lang_fresh_local(f, "sz", IR_I64, false);
  ir_add(f, body, ir_assign(f, sz, ir_int(f, 1)));
  spc_status s = SPC_OK;
  for (int l = 0; l < k && !s; l++) {
    ir_add(f, body, ir_assign(f, D.b[l].np, ir_cast(f, C->index_ty, ir_ref(f, sz))));
    s = asm_lower_fn(f, body, &D.b[l], SPC_LF_SIZE, sz, NULL, e);
  }
  if (!bph) cnt = lang_fresh_local(f, "cnt", IR_I64, true);
  if (bph != 2) ir_add(f, body, ir_alloc(f, cnt, ir_bin(f, IR_ADD, ir_ref(f, sz), ir_int(f, 1)), true));
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var g = lang_fresh_local(f, "g", IR_I64, false);
  ir_var q = lang_fresh_local(f, "qb", IR_I64, false);
  for (int pass = 0; pass < 2 && !s; pass++) {
    if (bph && pass != bph - 1) continue;
    if (pass == 1 && !bph) {
      ir_expr *a[2] = {ir_int(f, 0), ir_bin(f, IR_ADD, ir_ref(f, sz), ir_int(f, 1))};
      ir_add(f, body, ir_call(f, IR_PREFIX_SUM, &cnt, 1, a, 2));
    }
    ir_expr *lo = bph ? ir_ref(f, t0) : ir_int(f, 0), *hi = ir_ref(f, bph ? t1 : n);
    ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, lo, hi, NULL)));
    ir_expr *x[SPC_MAX_ORDER];
    for (int d = 0; d < C->order; d++) x[d] = ir_load(f, D.crd[d], ir_ref(f, t));
    if ((s = dremap(&D, lb, x, false, e)) || (s = dchain(&D, lb, 0, k, -1, e))) break;
    ir_add(f, lb, ir_assign(f, g, k > 0 ? ir_cast(f, IR_I64, ir_ref(f, D.b[k - 1].q)) : ir_int(f, 0)));
    bucket_step(f, lb, pass, g, cnt, q, o, D.crd, C->order, t, vals, vout);
  }
  if (!s && !bph) ir_add(f, body, ir_free(f, cnt));
  return s ? s : ir_verify(f, e);
}

/* The source's arguments of a fused routine (asm_src_args) into a:
 * how many, or -1 with e set; extv: 2 * SPC_MAX_ORDER, kept alive by the
 * caller. */
static int fsrc_args(const spc_tensor *fsrc, ir_arg *a, int64_t *extv, spc_error *e) {
  const conv_info *SI = &((const conv_tensor *)(const void *)fsrc)->info;
  return asm_src_args(SI, fsrc, a, extv, e);
}

/* One run of the direct routine f on the components crd / val, or on
 * fsrc read through its levels (non-NULL: spc_conv_fdirect): *pargs its
 * arguments (the caller frees them and their arrays). */
static spc_status direct_once(conv *C, const rcr *r, const spc_tensor *fsrc, void *const *crd,
                              void *val, ir_arg **pargs, spc_error *e) {
  const ir_func *f = r->v.f;
  ir_arg *args = *pargs = spc_calloc((size_t)ir_nparams(f), sizeof *args);
  if (!args) return SPC_NOMEM(e);
  int64_t extv[2 * SPC_MAX_ORDER];
  int a = 0;
  if (fsrc) {
    if ((a = fsrc_args(fsrc, args, extv, e)) < 0) return e && e->code ? e->code : SPC_ERR_INTERNAL;
  } else {
    for (; a < C->order; a++) args[a] = (ir_arg){.data = crd[a], .len = C->n};
    if (C->comb->vt != SPC_PATTERN) args[a++] = (ir_arg){.data = val, .len = C->n};
  }
  args[a++].s.i64 = C->n;
  for (int l = 0; l < C->L; l++) {
    args[a++].s.i64 = C->N[l];
    args[a++].s.i64 = C->lo[l];
  }
  args[a++].s.i64 = C->limit;
  for (int c = 0; c < C->r->ncounters; c++) args[a++].s.i64 = counter_len(C, c);
  return rc_run(C, r, args, e);
}

/* Whether a fused routine r may run on C's engine: on auto and factory
 * only where the factory has it (the read-out's routines are compiled
 * in: a compile at run time would cost more than the read-out saves). */
static bool fused_runs(conv *C, rcr *r) {
  if (C->eng.want != SPC_ENGINE_AUTO && C->eng.want != SPC_ENGINE_FACTORY) return true;
  if (r->fac) return r->v.fn != NULL;
  asm_entry fn = NULL;
  spc_error e2;
  spc_error_clear(&e2);
  if (asm_prepare_factory(r->v.f, &fn, &e2) || !fn) return false;
  r->v.fn = fn;
  r->fac = true;
  return true;
}

static void free_out_args(const ir_func *f, ir_arg *args, int from) {
  for (int a = from; args && a < ir_nparams(f); a++)
    if (ir_var_get(f, ir_param_var(f, a))->array) {
      spc_free(args[a].data);
      args[a].data = NULL;
    }
}

/* cmax[c]: counter c's largest value over the components (build_cmax),
 * or over fsrc's read through its levels; *skip: fsrc's routine may not
 * run here (fused_runs). */
static spc_status counter_max(conv *C, const spc_tensor *fsrc, int64_t *cmax, bool *skip,
                              spc_error *e) {
  const conv_info *SI = fsrc ? &((const conv_tensor *)(const void *)fsrc)->info : NULL;
  rcr rm = {0};
  int64_t extv[2 * SPC_MAX_ORDER];
  *skip = false;
  spc_status s = rc_get(C, SI, RC_CMAX, 0, &rm, e);
  ir_arg *args = NULL;
  if (!s && fsrc && !fused_runs(C, &rm)) *skip = true;
  if (!s && !*skip && !(args = spc_calloc((size_t)ir_nparams(rm.v.f), sizeof *args))) s = SPC_NOMEM(e);
  if (!s && !*skip) {
    int a = 0;
    if (fsrc) {
      if ((a = fsrc_args(fsrc, args, extv, e)) < 0) s = e && e->code ? e->code : SPC_ERR_INTERNAL;
    } else {
      for (; a < C->order; a++)
        args[a] = (ir_arg){.data = spc_level_array_c(&C->comb->lv[a], "crd")->data, .len = C->n};
      args[a++].s.i64 = C->n;
    }
    int p0 = a; /* the maxima, then the counters' lengths */
    for (int c = 0; c < C->r->ncounters; c++) args[p0 + C->r->ncounters + c].s.i64 = counter_len(C, c);
    if (!s) s = rc_run(C, &rm, args, e);
    for (int c = 0; c < C->r->ncounters && !s; c++) cmax[c] = args[p0 + c].s.i64;
  }
  spc_free(args);
  ir_func_free(&rm.v.f);
  return s;
}

/* The direct routine's result: its level arrays (from parameter p_arr0
 * on) and values (the last of np) taken into a new tensor; NULL when out
 * of memory (the arrays stay in args). */
static conv_tensor *direct_result(conv *C, ir_arg *args, int p_arr0, int np) {
  conv_tensor *ct = new_result(C, C->comb->dims);
  if (!ct) return NULL;
  for (int l = 0, a = p_arr0; l < C->L; a += C->lv[l]->lf->narrays, l++)
    adopt_arrays(C, ct, l, &args[a], C->lv[l]->lf->narrays);
  ct->t.val = args[np - 1].data;
  ct->t.nval = args[np - 1].len;
  ct->t.val_owned = true;
  args[np - 1].data = NULL;
  return ct;
}

/* Routine fn (f) run on each of nt argument sets A + t * np, one a
 * thread: ts[t] its status, et[t] its error. */
static void call_chunks(int nt, asm_entry fn, const ir_func *f, ir_arg *A, int np, spc_status *ts,
                        spc_error *et) {
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; t++) {
    spc_error_clear(&et[t]);
    ts[t] = asm_call(fn, f, A + (size_t)t * (size_t)np, &et[t]);
  }
}

/* The nph routines of a plan in phases (kind, key pk | phase << 40, *ph
 * set to each phase while it is built, then 0) got and made ready into
 * r and fn; false when one cannot run here (built, not in the factory on
 * auto, not prepared). */
static bool phase_fns(conv *C, int kind, int64_t pk, dplan *P, int *ph, int nph, rcr *r,
                      asm_entry *fn) {
  spc_error e2;
  spc_error_clear(&e2);
  bool go = true;
  for (int q = 0; q < nph && go; q++) {
    *ph = q + 1;
    go = !rc_get_x(C, NULL, kind, pk | (int64_t)(q + 1) << 40, P, &r[q], &e2) &&
         fused_runs(C, &r[q]) && !rc_prepare(C, &r[q], &fn[q], &e2);
  }
  *ph = 0;
  return go;
}

/* The direct plan in phases over chunks of a source read through its
 * levels, one chunk a thread (P->can_phase; order 2): spc_conv_fdmark
 * marks each chunk's coordinates into its own markers (pass 0), which are
 * then combined; spc_conv_fdinit runs the levels' init from them (one
 * thread); spc_conv_fdplace places each chunk (pass 1) into the arrays
 * init made.  Only where the source comes strictly increasing (each chunk
 * by its flags, and across chunks by its top level, ordered and unique,
 * holding the first or the last dimension), so no two components meet
 * and pass 1 checks nothing the serial plan would not; a counter must
 * count by the top level's dimension alone (each chunk holds whole rows).
 * Anything else (a zero, a position limit, an order not proved) leaves
 * nothing and the serial routine runs; an error of pass 0 (a `requires`)
 * is the first chunk's, the serial pass's.  The result is the serial
 * routine's bit for bit: the same markers, init and positions. */
static spc_status run_pdirect(conv *C, const spc_tensor *fsrc, dplan *P, int64_t pk,
                              conv_tensor **out, int *threads, spc_error *e) {
  *out = NULL;
  *threads = 1;
  const conv_info *SI = &((const conv_tensor *)(const void *)fsrc)->info;
  int nt = conv_threads(C->n);
  const unsigned ou = SPC_LP_ORDERED | SPC_LP_UNIQUE;
  int d0 = fsrc->lv[0].dim;
  if (nt < 2 || !P->can_phase || C->order != 2 || (fsrc->lv[0].props & ou) != ou ||
      !SI->lv[0]->unique)
    return SPC_OK;
  for (int c = 0; c < C->r->ncounters; c++)
    if (C->r->counters[c].n != 1 || C->r->counters[c].idx[0] != d0) return SPC_OK;
  spc_error e2;
  spc_error_clear(&e2);
  rcr r[3];
  asm_entry fn[3] = {NULL};
  memset(r, 0, sizeof r);
  spc_status s = SPC_OK;
  bool go = true;
  for (int q = 0; q < 3 && go; q++) {
    P->phase = q + 1;
    s = rc_get_x(C, SI, RC_DIRECT, pk | (int64_t)(q + 1) << 40, P, &r[q], &e2);
    go = !s && fused_runs(C, &r[q]) && !(s = rc_prepare(C, &r[q], &fn[q], &e2));
  }
  P->phase = 0;
  int64_t b = 0, en = 0, off[65];
  if (go && asm_src_top_range(fsrc, &b, &en, &e2)) go = false;
  if (go && en - b < nt) nt = en - b > 1 ? (int)(en - b) : 1;
  if (!go || nt < 2) {
    for (int q = 0; q < 3; q++) ir_func_free(&r[q].v.f);
    return s == SPC_ERR_UNSUPPORTED ? SPC_OK : s ? (e ? (*e = e2, s) : s) : SPC_OK;
  }
  if (asm_src_cuts(fsrc, b, en, nt, off, &e2))
    for (int t = 0; t <= nt; t++) off[t] = b + (en - b) / nt * t + (t == nt ? (en - b) % nt : 0);
  const ir_func *fm = r[0].v.f, *fi = r[1].v.f, *fp = r[2].v.f;
  int np = ir_nparams(fi), nw = 0;
  for (int l = 0; l < C->L; l++) nw += C->lv[l]->lf->nwork;
  /* the chunks' markers: one array a marked level a thread */
  int64_t *used[64][SPC_MAX_ORDER], res[64][2];
  memset(used, 0, sizeof used);
  for (int t = 0; t < nt && !s; t++)
    for (int l = 0; l < C->L && !s; l++)
      if (P->idq[l] && !(used[t][l] = spc_calloc((size_t)(C->N[l] ? C->N[l] : 1), sizeof **used)))
        s = SPC_NOMEM(e);
  ir_arg *A = s ? NULL : spc_calloc((size_t)(nt + 1) * (size_t)np, sizeof *A);
  if (!s && !A) s = SPC_NOMEM(e);
  int64_t extv[65][2 * SPC_MAX_ORDER];
  /* every call's arguments up to the markers, then the markers */
  for (int t = 0; t <= nt && !s; t++) {
    ir_arg *a = A + (size_t)t * (size_t)np;
    int k = fsrc_args(fsrc, a, extv[t], e);
    if (k < 0) {
      s = e && e->code ? e->code : SPC_ERR_INTERNAL;
      break;
    }
    a[k++].s.i64 = t < nt ? off[t] : b;
    a[k++].s.i64 = t < nt ? off[t + 1] : en;
    a[k++].s.i64 = C->n;
    for (int l = 0; l < C->L; l++) {
      a[k++].s.i64 = C->N[l];
      a[k++].s.i64 = C->lo[l];
    }
    a[k++].s.i64 = C->limit;
    for (int c = 0; c < C->r->ncounters; c++) a[k++].s.i64 = counter_len(C, c);
    a[k++].s.i64 = 0; /* chk_in: the source strictly increasing */
    a[k++] = (ir_arg){.data = res[t < nt ? t : 0], .len = 2};
    for (int l = 0; l < C->L; l++)
      if (P->idq[l]) a[k++] = (ir_arg){.data = used[t < nt ? t : 0][l], .len = C->N[l]};
  }
  int p_ok = r[0].v.aux[0], p_arr0 = r[0].v.aux[1];
  /* pass 0, a chunk a thread */
  spc_status ts[64] = {SPC_OK};
  spc_error et[64];
  bool all = !s;
  if (!s) {
    memset(res, 0, sizeof res);
    call_chunks(nt, fn[0], fm, A, np, ts, et);
    for (int t = 0; t < nt && !s; t++)
      if ((s = ts[t]) && e) *e = et[t];
    bool inc[2] = {d0 == 0, d0 == 1};
    for (int t = 0; t < nt && !s; t++) {
      all &= A[(size_t)t * (size_t)np + p_ok].s.i64 == 1;
      inc[0] &= res[t][0] != 0;
      inc[1] &= res[t][1] != 0;
    }
    all &= !s && (inc[0] || inc[1]);
  }
  /* the markers combined into thread 0's; the levels' init */
  ir_arg *ai = A + (size_t)nt * (size_t)np;
  if (all) {
    for (int l = 0; l < C->L; l++)
      if (P->idq[l])
        for (int t = 1; t < nt; t++)
          for (int64_t x = 0; x < C->N[l]; x++) used[0][l][x] |= used[t][l][x];
    spc_error_clear(&e2);
    s = asm_call(fn[1], fi, ai, &e2);
    if (s && e) *e = e2;
    all = !s && ai[p_ok].s.i64 == 1;
  }
  /* pass 1, a chunk a thread, into what init made */
  if (all) {
    for (int t = 0; t < nt; t++) {
      ir_arg *a = A + (size_t)t * (size_t)np;
      for (int w = 0; w < nw; w++) a[p_ok - nw + w] = ai[p_ok - nw + w];
      for (int q = p_arr0; q < np; q++) a[q] = ai[q];
    }
    call_chunks(nt, fn[2], fp, A, np, ts, et);
    for (int t = 0; t < nt && !s; t++)
      if ((s = ts[t]) && e) *e = et[t];
    for (int t = 0; t < nt && !s; t++) all &= A[(size_t)t * (size_t)np + p_ok].s.i64 == 1;
  }
  conv_tensor *ct = NULL;
  if (!s && all && !(ct = direct_result(C, ai, p_arr0, np))) s = SPC_NOMEM(e);
  if (!s && all) {
    *out = ct;
    *threads = nt;
  }
  if (A) { /* what init made and nothing took; the markers */
    for (int w = 0; w < nw; w++) spc_free(ai[p_ok - nw + w].data);
    for (int q = p_arr0; q < np; q++)
      if (ir_var_get(fi, ir_param_var(fi, q))->array) spc_free(ai[q].data);
  }
  for (int t = 0; t < nt; t++)
    for (int l = 0; l < C->L; l++) spc_free(used[t][l]);
  spc_free(A);
  for (int q = 0; q < 3; q++) ir_func_free(&r[q].v.f);
  return s;
}

/* The index of f's parameter named name (-1: none). */
static int param_named(const ir_func *f, const char *name) {
  for (int k = 0; k < ir_nparams(f); k++)
    if (!strcmp(ir_var_get(f, ir_param_var(f, k))->name, name)) return k;
  return -1;
}

/* The direct plan over a COO in chunks of its components, one a thread
 * (P->can_cphase: a stateful level k, such as BCSR's block columns):
 * (crd.., val: the COO's, or its copy bucketed by parent) spc_conv_dmark
 * counts each chunk's parents' distinct coordinates (pass
 * 0) into counts of its own, a chunk owning whole the parents whose first
 * component lies in it (dchunk); the chunks' ranges must adjoin and their
 * parents increase from one chunk to the next, else the serial routine
 * runs (and buckets a COO not grouped by parent).  The counts combined,
 * spc_conv_dinit runs the levels' init (one thread), spc_conv_dplace
 * places each chunk into what init made, spc_conv_dfinal runs the
 * levels' finalize.  A chunk that fails in any way (a zero, a position
 * taken, a `requires`) leaves nothing made: the serial routine runs and
 * says what the serial plan says.  The result is the serial routine's
 * bit for bit: the same counts, init, each parent's coordinates sorted
 * and its components placed by the same code. */
static spc_status run_cdirect(conv *C, dplan *P, int64_t pk, void *const *crd, void *val,
                              conv_tensor **out, int *threads, spc_error *e) {
  *out = NULL;
  *threads = 1;
  int nt = conv_threads(C->n);
  if (nt < 2 || !P->can_cphase || C->L > 8 + SPC_MAX_ORDER) return SPC_OK;
  spc_error e2;
  spc_error_clear(&e2);
  rcr r[4];
  asm_entry fn[4] = {NULL};
  memset(r, 0, sizeof r);
  bool go = phase_fns(C, RC_DIRECT, pk, P, &P->phase, 4, r, fn);
  const ir_func *fi = r[1].v.f;
  int np = go ? ir_nparams(fi) : 0, nw = 0;
  int p_ok = r[0].v.aux[0], p_arr0 = r[0].v.aux[1];
  int p_t0 = go ? param_named(fi, "t0_in") : -1, p_chk = go ? param_named(fi, "chk_in") : -1;
  int p_res = go ? param_named(fi, "res") : -1, p_cnt = go ? param_named(fi, "cntk") : -1;
  int p_dl = go ? param_named(fi, "dl") : -1;
  go = go && p_t0 >= 0 && p_chk >= 0 && p_res >= 0 && p_cnt >= 0 && p_dl >= 0;
  for (int l = 0; l < C->L; l++) nw += C->lv[l]->lf->nwork;
  int64_t off[65], res[65][16 + SPC_MAX_ORDER];
  int64_t *used[65][SPC_MAX_ORDER], *cntp[65] = {NULL};
  memset(used, 0, sizeof used);
  memset(res, 0, sizeof res);
  for (int t = 0; t <= nt; t++) off[t] = C->n / nt * t + (t == nt ? C->n % nt : 0);
  int64_t *dl = go ? spc_malloc((size_t)C->n * sizeof *dl) : NULL;
  ir_arg *A = go && dl ? spc_calloc((size_t)(nt + 1) * (size_t)np, sizeof *A) : NULL;
  go = A != NULL;
  for (int t = 0; t <= nt && go; t++)
    for (int l = 0; l < C->L && go; l++)
      if (P->idq[l] && !(used[t][l] = spc_calloc((size_t)(C->N[l] ? C->N[l] : 1), sizeof **used)))
        go = false;
  /* every call's arguments (A + nt * np: init's and finalize's) */
  for (int t = 0; t <= nt && go; t++) {
    ir_arg *a = A + (size_t)t * (size_t)np;
    int k = 0;
    for (int d = 0; d < C->order; d++) a[k++] = (ir_arg){.data = crd[d], .len = C->n};
    if (C->comb->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = val, .len = C->n};
    a[k++].s.i64 = C->n;
    a[k++].s.i64 = t < nt ? off[t] : 0;
    a[k++].s.i64 = t < nt ? off[t + 1] : C->n;
    for (int l = 0; l < C->L; l++) {
      a[k++].s.i64 = C->N[l];
      a[k++].s.i64 = C->lo[l];
    }
    a[k++].s.i64 = C->limit;
    go = k == p_chk;
    a[p_res] = (ir_arg){.data = res[t], .len = 8 + C->L};
    for (int l = 0, q = p_res + 1; l < C->L; l++)
      if (P->idq[l]) a[q++] = (ir_arg){.data = used[t][l], .len = C->N[l]};
    a[p_dl] = (ir_arg){.data = dl, .len = C->n};
  }
  /* pass 0, a chunk a thread */
  spc_status ts[64] = {SPC_OK};
  spc_error et[64];
  if (go) {
    call_chunks(nt, fn[0], r[0].v.f, A, np, ts, et);
    for (int t = 0; t < nt; t++) cntp[t] = A[(size_t)t * (size_t)np + p_cnt].data;
  }
  /* the chunks adjoin, [0, n) whole; their parents increase; the flags */
  bool inc[2] = {true, true};
  int64_t at = 0, glast = -1, ncnt = go ? A[p_cnt].len : 0;
  for (int t = 0; t < nt && go; t++) {
    const int64_t *rt = res[t];
    go = !ts[t] && A[(size_t)t * (size_t)np + p_ok].s.i64 == 1 && rt[2] == at && rt[3] >= rt[2];
    if (go && rt[2] < rt[3]) {
      go = rt[4] > glast && rt[4] <= rt[5] && rt[5] < ncnt;
      glast = rt[5];
    }
    at = rt[3];
    inc[0] &= rt[0] != 0;
    inc[1] &= rt[1] != 0;
  }
  go = go && at == C->n;
  /* the counts (each chunk's own parents) and the markers combined */
  ir_arg *ai = go ? A + (size_t)nt * (size_t)np : NULL;
  if (go) {
    for (int t = 1; t < nt; t++)
      if (res[t][2] < res[t][3])
        memcpy(cntp[0] + res[t][4], cntp[t] + res[t][4], (size_t)(res[t][5] - res[t][4] + 1) * sizeof **cntp);
    for (int l = 0; l < C->L; l++)
      if (P->idq[l])
        for (int t = 1; t < nt; t++)
          for (int64_t x = 0; x < C->N[l]; x++) used[0][l][x] |= used[t][l][x];
    for (int l = 0, q = p_res + 1; l < C->L; l++)
      if (P->idq[l]) ai[q++].data = used[0][l];
    ai[p_cnt] = (ir_arg){.data = cntp[0], .len = ncnt};
    go = !asm_call(fn[1], fi, ai, &e2) && ai[p_ok].s.i64 == 1;
  }
  /* pass 1, a chunk a thread, into what init made; then finalize */
  if (go) {
    for (int t = 0; t < nt; t++) {
      ir_arg *a = A + (size_t)t * (size_t)np;
      a[p_cnt] = ai[p_cnt];
      a[p_chk].s.i64 = !(inc[0] || inc[1]);
      for (int l = 0; l < C->L; l++) res[t][8 + l] = res[nt][8 + l];
      for (int w = 0; w < nw; w++) a[p_ok - nw + w] = ai[p_ok - nw + w];
      for (int q = p_arr0; q < np; q++) a[q] = ai[q];
    }
    /* chk: the place pass reads each value's slot before it writes it --
     * the arrays init made faulted in writable first, on the threads
     * (2-thread info of a 12 M BCSR file: 1.01-1.11 -> 0.84-0.85 s) */
    for (int q = p_arr0; q < np && !(inc[0] || inc[1]); q++) {
      const ir_var_info *vi = ir_var_get(fi, ir_param_var(fi, q));
      if (vi->array && ai[q].data && ai[q].len > 0)
        spc_prefault_write(ai[q].data, (size_t)ai[q].len * ir_ty_size(vi->ty), nt);
    }
    call_chunks(nt, fn[2], r[2].v.f, A, np, ts, et);
    for (int t = 0; t < nt; t++) go = go && !ts[t] && A[(size_t)t * (size_t)np + p_ok].s.i64 == 1;
    go = go && !asm_call(fn[3], r[3].v.f, ai, &e2) && ai[p_ok].s.i64 == 1;
  }
  conv_tensor *ct = go ? direct_result(C, ai, p_arr0, np) : NULL;
  spc_status s = go && !ct ? SPC_NOMEM(e) : SPC_OK;
  if (ct) {
    *out = ct;
    *threads = nt;
  }
  if (A && ai) { /* what init made and nothing took */
    for (int w = 0; w < nw; w++) spc_free(ai[p_ok - nw + w].data);
    for (int q = p_arr0; q < np; q++)
      if (ir_var_get(fi, ir_param_var(fi, q))->array) spc_free(ai[q].data);
  }
  for (int t = 0; t <= nt; t++) {
    spc_free(cntp[t]);
    for (int l = 0; l < C->L; l++) spc_free(used[t][l]);
  }
  spc_free(dl);
  spc_free(A);
  for (int q = 0; q < 4; q++) ir_func_free(&r[q].v.f);
  return s;
}

/* ---- the chain plan on threads ------------------------------------------------
 * The chain routine's three passes over chunks of the COO, one a thread,
 * where the chunks are cut where the top level's coordinate changes: every
 * prefix of a component, so every parent below the top, then lies in one
 * chunk, and the chunks write disjoint parts of the shared arrays with no
 * atomics.  Six routines (spc_conv_pchain_*), phase ph:
 *   1 (a chunk): its bounds [a, b) from the nominal [t0_in, t1_in) (each
 *     moved up to the next change of the top coordinate, so a chunk's end
 *     is the next one's start), then pass A over them: the order (ok = 0
 *     on anything not strictly increasing), the new components of each
 *     level (m), the first and last tuples, and the first and last
 *     positions of the levels whose positions are functions of the
 *     coordinates alone (the pure prefix: dense on top), which must
 *     increase; into res;
 *   2 (once): each level's parents (np: the levels' new components summed
 *     over the chunks, or a pure level's size), the count arrays, the
 *     top level's count (msum[0] under the root);
 *   3 (a chunk): pass B from the chunk's offsets oin (the earlier chunks'
 *     new components) into the shared count arrays, below the top level;
 *   4 (once): every level's init and size (ok = 0 where a size is not the
 *     one assumed), the values;
 *   5 (a chunk): pass C: yield_pos and insert_coord below the top level
 *     (and at it when its yield_pos is pure), each stateful level's
 *     position checked before it is written, the values; a stateful top
 *     level's insert_coord at the position assumed (the chunk's offset
 *     on);
 *   6 (once): a stateful top level's yield_pos in order (compressed: its
 *     pos[0] is every chunk's), each position checked against the one
 *     assumed -- msum[0] calls where it reads no coordinate, else a walk
 *     over the components; every level's finalize.
 * Only where a stateful level's yield_pos reads and writes its arrays at
 * the parent p alone and every insert_coord at the position q alone (the
 * chunks' parents and positions are disjoint: counted, or checked
 * increasing), and a pure level under a stateful one yields its parent's
 * own position (singleton: COO's lower levels).  The same
 * level functions on the same parents, coordinates, counts and positions
 * as the serial routine: the same arrays, bit for bit; any failure (an
 * order not proved, a `requires`, a position not the one assumed) leaves
 * nothing and the serial routine runs and says what it says. */

/* Whether x reads level arrays arr (narr of them) at index idx alone. */
static bool x_at_only(const ir_expr *x, const ir_var *arr, int narr, ir_var idx) {
  if (!x) return true;
  if (x->kind == IR_E_LOAD || x->kind == IR_E_LEN)
    for (int k = 0; k < narr; k++)
      if (x->var == arr[k]) {
        if (x->kind == IR_E_LEN) break;
        const ir_expr *i = x->a;
        while (i->kind == IR_E_CAST) i = i->a;
        if (i->kind != IR_E_VAR || i->var != idx) return false;
      }
  return x_at_only(x->a, arr, narr, idx) && x_at_only(x->b, arr, narr, idx) &&
         x_at_only(x->c, arr, narr, idx);
}

/* Whether st reads and writes level arrays arr at index idx alone (no
 * allocation, no builtin on them). */
static bool st_at_only(const ir_stmt *st, const ir_var *arr, int narr, ir_var idx) {
  if (!st) return true;
  for (int k = 0; k < narr; k++) {
    if ((st->kind == IR_S_ALLOC || st->kind == IR_S_FREE) && st->var == arr[k]) return false;
    for (int v = 0; st->kind == IR_S_BUILTIN && v < st->nvars; v++)
      if (st->vars[v] == arr[k]) return false;
    if (st->kind == IR_S_STORE && st->var == arr[k]) {
      const ir_expr *i = st->a;
      while (i->kind == IR_E_CAST) i = i->a;
      if (i->kind != IR_E_VAR || i->var != idx) return false;
    }
  }
  if (!x_at_only(st->a, arr, narr, idx) || !x_at_only(st->b, arr, narr, idx)) return false;
  for (int a = 0; a < st->nargs; a++)
    if (!x_at_only(st->args[a], arr, narr, idx)) return false;
  for (int c = 0; c < st->nkids; c++)
    if (!st_at_only(st->kids[c], arr, narr, idx)) return false;
  return true;
}

/* Whether level l's function `which` (yield_pos: at p; insert_coord: at
 * q) touches its arrays at that index alone (*yes; an absent one does). */
static spc_status lfn_local(conv *C, int l, spc_lfn_kind which, bool *yes, spc_error *e) {
  lvbind b;
  ir_func *f;
  spc_status s = lfn_probe(C, l, which, &b, &f, e);
  *yes = !s && (!f || st_at_only(ir_func_body(f), b.arr, C->lv[l]->lf->narrays,
                                  which == SPC_LF_YIELD ? b.p : b.q));
  ir_func_free(&f);
  return s;
}

/* Whether x or st reads variable v. */
static bool x_uses(const ir_expr *x, ir_var v) {
  if (!x) return false;
  if (x->kind == IR_E_VAR && x->var == v) return true;
  return x_uses(x->a, v) || x_uses(x->b, v) || x_uses(x->c, v);
}
static bool st_uses(const ir_stmt *st, ir_var v) {
  if (!st) return false;
  if (x_uses(st->a, v) || x_uses(st->b, v)) return true;
  for (int a = 0; a < st->nargs; a++)
    if (x_uses(st->args[a], v)) return true;
  for (int c = 0; c < st->nkids; c++)
    if (st_uses(st->kids[c], v)) return true;
  return false;
}

/* Level l's yield_pos: whether it is the parent's position itself
 * (*ident: singleton's `return p`) and whether it reads the coordinate
 * (*usesc). */
static spc_status yield_shape(conv *C, int l, bool *ident, bool *usesc, spc_error *e) {
  lvbind b;
  ir_func *f;
  spc_status s = lfn_probe(C, l, SPC_LF_YIELD, &b, &f, e);
  *ident = false;
  *usesc = true;
  if (f) {
    const ir_stmt *body = ir_func_body(f), *one = body;
    *usesc = st_uses(body, b.c);
    while (one->kind == IR_S_BLOCK && one->nkids == 1) one = one->kids[0];
    if (one->kind == IR_S_ASSIGN && one->var == b.q) {
      const ir_expr *x = one->a;
      while (x->kind == IR_E_CAST) x = x->a;
      *ident = x->kind == IR_E_VAR && x->var == b.p;
    }
  }
  ir_func_free(&f);
  return s;
}

/* res's layout (phase 1): a, b, then per level the new components, the
 * first and last tuples, the first and last pure positions. */
#define PCH_M(L, l) (2 + (l))
#define PCH_FK(L, l) (2 + (L) + (l))
#define PCH_LK(L, l) (2 + 2 * (L) + (l))
#define PCH_FP(L, l) (2 + 3 * (L) + (l))
#define PCH_LP(L, l) (2 + 4 * (L) + (l))
#define PCH_RES(L) (2 + 5 * (L))

/* *cut = the first component at or after `from` whose top coordinate is
 * not the one of the component before `from` (from itself at 0; n at or
 * past the end). */
static spc_status pchain_cut(conv *C, ir_func *f, ir_stmt *at, const ir_var *crd, bool fromlc,
                             ir_var from, ir_var n, const ir_var *k, ir_var pk0, ir_var u,
                             ir_var cut, spc_error *e) {
  ir_add(f, at, ir_assign(f, cut, ir_bin(f, IR_MIN, ir_ref(f, from), ir_ref(f, n))));
  ir_expr *inner = ir_bin(f, IR_LAND, ir_bin(f, IR_GT, ir_ref(f, from), ir_int(f, 0)),
                          ir_bin(f, IR_LT, ir_ref(f, from), ir_ref(f, n)));
  ir_stmt *mid = ir_then(ir_add(f, at, ir_if(f, inner, NULL, NULL)));
  ir_add(f, mid, ir_assign(f, u, ir_bin(f, IR_SUB, ir_ref(f, from), ir_int(f, 1))));
  spc_status s = chain_remap(C, f, mid, crd, u, false, k, fromlc, e);
  if (s) return s;
  ir_add(f, mid, ir_assign(f, pk0, ir_ref(f, k[0])));
  ir_add(f, mid, ir_assign(f, cut, ir_ref(f, n)));
  ir_stmt *lb = ir_body(ir_add(f, mid, ir_for(f, u, ir_ref(f, from), ir_ref(f, n), NULL)));
  s = chain_remap(C, f, lb, crd, u, false, k, fromlc, e);
  ir_stmt *ch = ir_then(ir_add(f, lb, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, k[0]), ir_ref(f, pk0)), NULL, NULL)));
  ir_add(f, ch, ir_assign(f, cut, ir_ref(f, u)));
  ir_add(f, ch, ir_break(f));
  return s;
}

static spc_status build_pchain(conv *C, int ph, bool fromlc, ir_func **out, spc_error *e) {
  *out = NULL;
  if (ph < 1 || ph > 6 || !chain_applies(C)) return SPC_ERR_UNSUPPORTED;
  int L = C->L;
  bool pure[SPC_MAX_ORDER], spure[SPC_MAX_ORDER], nu[SPC_MAX_ORDER];
  spc_status s = SPC_OK;
  bool y0c = true, stateful = false;
  for (int l = 0; l < L && !s; l++) {
    bool yl = true, il = true, ident = false, usesc = true;
    s = lfn_pure(C, l, SPC_LF_YIELD, &pure[l], e);
    if (!s) s = lfn_pure(C, l, SPC_LF_SIZE, &spure[l], e);
    if (!s && !pure[l]) s = lfn_local(C, l, SPC_LF_YIELD, &yl, e);
    if (!s) s = lfn_local(C, l, SPC_LF_INSERT, &il, e);
    if (!s && (l == 0 || (pure[l] && stateful))) s = yield_shape(C, l, &ident, &usesc, e);
    if (s) return s;
    if (l == 0) y0c = usesc;
    nu[l] = !C->lv[l]->unique || (l > 0 && nu[l - 1]);
    /* a pure level under a stateful one: only the parent's own position
     * (singleton), apart as the parents are */
    if (!yl || !il || (pure[l] && stateful && !ident) || (l < L - 1 && pure[l] && !spure[l]))
      return SPC_ERR_UNSUPPORTED;
    stateful |= !pure[l];
  }
  static const char *const nm[] = {"", "spc_conv_pchain_a", "spc_conv_pchain_np",
                                   "spc_conv_pchain_b", "spc_conv_pchain_init",
                                   "spc_conv_pchain_c", "spc_conv_pchain_fin"};
  ir_func *f = ir_func_new(nm[ph]);
  if (!f) return SPC_NOMEM(e);
  *out = f;
  ir_stmt *body = ir_func_body(f);
  char name[96];
  ir_var crd[SPC_MAX_ORDER], Nin[SPC_MAX_ORDER], loin[SPC_MAX_ORDER];
  ir_ty vty = asm_value_ty(C->vt);
  if (fromlc) { /* the sort's level coordinates (run_chain_lc), as build_chain's */
    for (int l = 0; l < L; l++) {
      snprintf(name, sizeof name, "lc%d", l);
      crd[l] = ir_param(f, name, IR_I64, true, IR_IN);
    }
  } else {
    sparams_crd(C, f, crd, -1);
  }
  ir_var vals = C->vt != SPC_PATTERN ? ir_param(f, "vals", vty, true, IR_IN) : -1;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  for (int l = 0; l < L; l++) {
    snprintf(name, sizeof name, "N%d_in", l);
    Nin[l] = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "lo%d_in", l);
    loin[l] = ir_param(f, name, IR_I64, false, IR_IN);
  }
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  const bool chunk = ph == 1 || ph == 3 || ph == 5;
  ir_var t0 = -1, t1 = -1, res = -1, msum = -1, npo = -1, oin = -1, vout = -1;
  if (chunk) {
    t0 = ir_param(f, "t0_in", IR_I64, false, IR_IN);
    t1 = ir_param(f, "t1_in", IR_I64, false, IR_IN);
  }
  if (ph == 1) res = ir_param(f, "res", IR_I64, true, IR_INOUT);
  if (ph == 2 || ph == 4 || ph == 6) msum = ir_param(f, "msum", IR_I64, true, IR_IN);
  if (ph >= 2) npo = ir_param(f, "npo", IR_I64, true, ph == 2 ? IR_INOUT : IR_IN);
  if (ph == 3 || ph == 5) oin = ir_param(f, "oin", IR_I64, true, IR_IN);
  lvbind b[SPC_MAX_ORDER];
  ir_var cnt[SPC_MAX_ORDER], size[SPC_MAX_ORDER];
  for (int l = 0; l < L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    asm_bind_init(&b[l], ls, C->lv[l], C->index_ty, C->coord_ty);
    cnt[l] = size[l] = -1;
    snprintf(name, sizeof name, "cnt%d", l);
    if (ls->nqueries && ph >= 2 && ph <= 4)
      cnt[l] = ir_param(f, name, C->index_ty, true, ph == 2 ? IR_OUT : ph == 3 ? IR_INOUT : IR_IN);
  }
  for (int l = 0; l < L && ph >= 4; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      b[l].arr[k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, C->index_ty, C->coord_ty),
                             true, ph == 4 ? IR_OUT : IR_INOUT);
    }
    snprintf(name, sizeof name, "size%d", l);
    if (ph == 4) size[l] = ir_param(f, name, IR_I64, false, IR_OUT);
  }
  if (C->vt != SPC_PATTERN && (ph == 4 || ph == 5))
    vout = ir_param(f, "vout", vty, true, ph == 4 ? IR_OUT : IR_INOUT);
  ir_var k[SPC_MAX_ORDER] = {0}, pk[SPC_MAX_ORDER] = {0}, m[SPC_MAX_ORDER] = {0},
         P[SPC_MAX_ORDER] = {0}, o[SPC_MAX_ORDER] = {0}, np[SPC_MAX_ORDER] = {0};
  for (int l = 0; l < L; l++) {
    bind_locals(f, &b[l], C);
    ir_add(f, body, ir_assign(f, b[l].N, ir_ref(f, Nin[l])));
    ir_add(f, body, ir_assign(f, b[l].lo, ir_ref(f, loin[l])));
    if (size[l] >= 0) ir_add(f, body, ir_assign(f, size[l], ir_int(f, 0)));
    k[l] = lang_fresh_local(f, "k", IR_I64, false);
    pk[l] = lang_fresh_local(f, "pk", IR_I64, false);
    m[l] = lang_fresh_local(f, "m", IR_I64, false);
    P[l] = lang_fresh_local(f, "P", IR_I64, false);
    o[l] = lang_fresh_local(f, "o", IR_I64, false);
    np[l] = lang_fresh_local(f, "npl", IR_I64, false);
    ir_add(f, body, ir_assign(f, m[l], ir_int(f, 0)));
    ir_add(f, body, ir_assign(f, pk[l], ir_int(f, 0)));
    ir_add(f, body, ir_assign(f, P[l], ir_int(f, 0)));
    ir_add(f, body, ir_assign(f, o[l], oin >= 0 ? ir_load(f, oin, ir_int(f, l)) : ir_int(f, 0)));
    if (npo >= 0 && ph != 2)
      ir_add(f, body, ir_assign(f, b[l].np, ir_cast(f, C->index_ty, ir_load(f, npo, ir_int(f, l)))));
  }
  ir_var dl = lang_fresh_local(f, "dl", IR_I64, false);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_add(f, body, ir_assign(f, ok, ir_int(f, 1)));
  /* the pure prefix's parents (their sizes read no counts) */
  int pp = 0;
  while (pp < L && pure[pp]) pp++;
  if (ph != 2) {
    ir_add(f, body, ir_assign(f, np[0], ir_int(f, 1)));
    for (int l = 1; l <= pp && l < L && !s; l++) {
      ir_add(f, body, ir_assign(f, b[l - 1].np, ir_cast(f, C->index_ty, ir_ref(f, np[l - 1]))));
      s = asm_lower_fn(f, body, &b[l - 1], SPC_LF_SIZE, np[l], NULL, e);
    }
    for (int l = 0; l < pp && l < L && npo < 0; l++)
      ir_add(f, body, ir_assign(f, b[l].np, ir_cast(f, C->index_ty, ir_ref(f, np[l]))));
  }
  if (s) return s;
  if (ph == 1) { /* the bounds, then pass A */
    ir_var a = lang_fresh_local(f, "a", IR_I64, false), z = lang_fresh_local(f, "z", IR_I64, false);
    ir_var u = lang_fresh_local(f, "u", IR_I64, false);
    s = pchain_cut(C, f, body, crd, fromlc, t0, n, k, pk[0], u, a, e);
    if (!s) s = pchain_cut(C, f, body, crd, fromlc, t1, n, k, pk[0], u, z, e);
    if (s) return s;
    ir_add(f, body, ir_store(f, res, ir_int(f, 0), ir_ref(f, a)));
    ir_add(f, body, ir_store(f, res, ir_int(f, 1), ir_ref(f, z)));
    ir_stmt *la = ir_body(ir_add(f, body, ir_for(f, t, ir_ref(f, a), ir_ref(f, z), NULL)));
    s = chain_remap(C, f, la, crd, t, true, k, fromlc, e);
    if (s) return s;
    chain_dl_from(C, f, la, k, pk, dl, t, a, true, ok);
    ir_expr *isa = ir_bin(f, IR_EQ, ir_ref(f, t), ir_ref(f, a));
    ir_stmt *fst = ir_then(ir_add(f, la, ir_if(f, isa, NULL, NULL)));
    for (int l = 0; l < L && !s; l++) {
      ir_add(f, fst, ir_store(f, res, ir_int(f, PCH_FK(L, l)), ir_ref(f, k[l])));
      ir_stmt *nw = ir_then(ir_add(f, la, ir_if(f, chain_new(f, dl, l, nu[l]), NULL, NULL)));
      ir_add(f, nw, ir_assign(f, m[l], ir_bin(f, IR_ADD, ir_ref(f, m[l]), ir_int(f, 1))));
      if (l >= pp) continue;
      /* the pure prefix's positions: increasing, the first one kept */
      ir_add(f, nw, ir_assign(f, b[l].p, ir_cast(f, C->index_ty, l ? ir_ref(f, P[l - 1]) : ir_int(f, 0))));
      ir_add(f, nw, ir_assign(f, b[l].c, ir_cast(f, C->coord_ty, ir_ref(f, k[l]))));
      s = asm_lower_fn(f, nw, &b[l], SPC_LF_YIELD, b[l].q, NULL, e);
      ir_expr *down = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_ref(f, t), ir_ref(f, a)),
                             ir_bin(f, IR_LE, ir_cast(f, IR_I64, ir_ref(f, b[l].q)), ir_ref(f, P[l])));
      ir_stmt *bad = ir_add(f, nw, ir_if(f, down, NULL, NULL));
      ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
      ir_add(f, ir_then(bad), ir_break(f));
      ir_add(f, nw, ir_assign(f, P[l], ir_cast(f, IR_I64, ir_ref(f, b[l].q))));
      ir_stmt *fp = ir_then(ir_add(f, nw, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, t), ir_ref(f, a)), NULL, NULL)));
      ir_add(f, fp, ir_store(f, res, ir_int(f, PCH_FP(L, l)), ir_ref(f, P[l])));
    }
    for (int l = 0; l < L && !s; l++) ir_add(f, la, ir_assign(f, pk[l], ir_ref(f, k[l])));
    for (int l = 0; l < L && !s; l++) {
      ir_add(f, body, ir_store(f, res, ir_int(f, PCH_M(L, l)), ir_ref(f, m[l])));
      ir_add(f, body, ir_store(f, res, ir_int(f, PCH_LK(L, l)), ir_ref(f, pk[l])));
      if (l < pp) ir_add(f, body, ir_store(f, res, ir_int(f, PCH_LP(L, l)), ir_ref(f, P[l])));
    }
  } else if (ph == 2) { /* the parents, the count arrays */
    ir_add(f, body, ir_assign(f, np[0], ir_int(f, 1)));
    for (int l = 1; l < L && !s; l++) {
      if (pure[l - 1]) {
        ir_add(f, body, ir_assign(f, b[l - 1].np, ir_cast(f, C->index_ty, ir_ref(f, np[l - 1]))));
        s = asm_lower_fn(f, body, &b[l - 1], SPC_LF_SIZE, np[l], NULL, e);
      } else {
        ir_add(f, body, ir_assign(f, np[l], ir_load(f, msum, ir_int(f, l - 1))));
      }
    }
    for (int l = 0; l < L && !s; l++) {
      ir_add(f, body, ir_store(f, npo, ir_int(f, l), ir_ref(f, np[l])));
      if (cnt[l] < 0) continue;
      char msg[200];
      snprintf(msg, sizeof msg,
               "level %d (%s) of format %s: its attribute queries would need %%lld "
               "entries: too large (limit %%lld)", l + 1, C->lv[l]->lf->name, C->fmt->name);
      ir_expr *fa[2] = {ir_ref(f, np[l]), ir_ref(f, limit)};
      ir_stmt *big = ir_add(f, body, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, np[l]), ir_ref(f, limit)), NULL, NULL));
      ir_add(f, ir_then(big), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, fa, 2));
      ir_add(f, body, ir_alloc(f, cnt[l], ir_ref(f, np[l]), true));
      if (l == 0) ir_add(f, body, ir_store(f, cnt[0], ir_int(f, 0), ir_cast(f, C->index_ty, ir_load(f, msum, ir_int(f, 0)))));
    }
  } else if (ph == 3 || ph == 5) { /* pass B, pass C */
    ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_ref(f, t0), ir_ref(f, t1), NULL)));
    s = chain_remap(C, f, lb, crd, t, false, k, fromlc, e);
    if (s) return s;
    chain_dl_from(C, f, lb, k, pk, dl, t, t0, false, ok);
    for (int l = 0; l < L && !s; l++) {
      bool every = nu[l] || (ph == 5 && l == L - 1);
      ir_stmt *nw = every ? lb : ir_then(ir_add(f, lb, ir_if(f, chain_new(f, dl, l, nu[l]), NULL, NULL)));
      ir_expr *parent = l ? ir_ref(f, P[l - 1]) : ir_int(f, 0);
      if (ph == 3) {
        if (l > 0 && cnt[l] >= 0)
          ir_add(f, nw, ir_store(f, cnt[l], ir_ref(f, P[l - 1]),
                                 ir_bin(f, IR_ADD, ir_load(f, cnt[l], ir_ref(f, P[l - 1])), ir_int(f, 1))));
        if (l == L - 1) continue;
        if (pure[l]) {
          ir_add(f, nw, ir_assign(f, b[l].p, ir_cast(f, C->index_ty, parent)));
          ir_add(f, nw, ir_assign(f, b[l].c, ir_cast(f, C->coord_ty, ir_ref(f, k[l]))));
          s = asm_lower_fn(f, nw, &b[l], SPC_LF_YIELD, b[l].q, NULL, e);
          ir_add(f, nw, ir_assign(f, P[l], ir_cast(f, IR_I64, ir_ref(f, b[l].q))));
        } else {
          ir_add(f, nw, ir_assign(f, P[l], ir_ref(f, o[l])));
          ir_add(f, nw, ir_assign(f, o[l], ir_bin(f, IR_ADD, ir_ref(f, o[l]), ir_int(f, 1))));
        }
        continue;
      }
      if (l == 0 && !pure[0]) { /* at the assumed position: the state is phase 6's */
        ir_add(f, nw, ir_assign(f, P[0], ir_ref(f, o[0])));
        ir_add(f, nw, ir_assign(f, o[0], ir_bin(f, IR_ADD, ir_ref(f, o[0]), ir_int(f, 1))));
        ir_add(f, nw, ir_assign(f, b[0].p, ir_cast(f, C->index_ty, ir_int(f, 0))));
        ir_add(f, nw, ir_assign(f, b[0].c, ir_cast(f, C->coord_ty, ir_ref(f, k[0]))));
        ir_add(f, nw, ir_assign(f, b[0].q, ir_cast(f, C->index_ty, ir_ref(f, P[0]))));
        if (asm_lfn(&b[0], SPC_LF_INSERT)) s = asm_lower_fn(f, nw, &b[0], SPC_LF_INSERT, -1, NULL, e);
        continue;
      }
      ir_add(f, nw, ir_assign(f, b[l].p, ir_cast(f, C->index_ty, parent)));
      ir_add(f, nw, ir_assign(f, b[l].c, ir_cast(f, C->coord_ty, ir_ref(f, k[l]))));
      s = asm_lower_fn(f, nw, &b[l], SPC_LF_YIELD, b[l].q, NULL, e);
      ir_add(f, nw, ir_assign(f, P[l], ir_cast(f, IR_I64, ir_ref(f, b[l].q))));
      if (!pure[l]) { /* checked before anything is written at it */
        ir_stmt *bad = ir_add(f, nw, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, P[l]), ir_ref(f, o[l])), NULL, NULL));
        ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
        ir_add(f, ir_then(bad), ir_break(f));
        ir_add(f, nw, ir_assign(f, o[l], ir_bin(f, IR_ADD, ir_ref(f, o[l]), ir_int(f, 1))));
      }
      if (!s && asm_lfn(&b[l], SPC_LF_INSERT)) s = asm_lower_fn(f, nw, &b[l], SPC_LF_INSERT, -1, NULL, e);
    }
    if (!s && ph == 5 && vout >= 0)
      ir_add(f, lb, ir_store(f, vout, ir_ref(f, P[L - 1]), ir_load(f, vals, ir_ref(f, t))));
    for (int l = 0; l < L && !s; l++) ir_add(f, lb, ir_assign(f, pk[l], ir_ref(f, k[l])));
  } else if (ph == 4) { /* init, top first */
    for (int l = 0; l < L && !s; l++) {
      if (cnt[l] >= 0) s = squeries_l(C, l, &b[l], cnt[l], e);
      if (!s) s = level_init(f, body, &b[l], C, l, size[l], limit, -1, -1, l == L - 1 ? vout : -1, e);
      if (s || l == L - 1) continue;
      ir_expr *want = pure[l] ? ir_load(f, npo, ir_int(f, l + 1)) : ir_load(f, msum, ir_int(f, l));
      ir_stmt *bad = ir_add(f, body, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, size[l]), want), NULL, NULL));
      ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
    }
  } else { /* the top level's state in order; finalize */
    if (!pure[0]) { /* a yield_pos that reads no coordinate: msum[0] calls, else one a new top coordinate */
      ir_stmt *nw;
      if (!y0c) {
        nw = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_load(f, msum, ir_int(f, 0)), NULL)));
        ir_add(f, nw, ir_assign(f, b[0].c, ir_cast(f, C->coord_ty, ir_int(f, 0))));
      } else {
        ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
        s = chain_remap(C, f, lb, crd, t, false, k, fromlc, e);
        if (s) return s;
        ir_expr *nw0 = nu[0] ? ir_bool(f, true)
                             : ir_bin(f, IR_LOR, ir_bin(f, IR_EQ, ir_ref(f, t), ir_int(f, 0)),
                                      ir_bin(f, IR_NE, ir_ref(f, k[0]), ir_ref(f, pk[0])));
        nw = ir_then(ir_add(f, lb, ir_if(f, nw0, NULL, NULL)));
        ir_add(f, lb, ir_assign(f, pk[0], ir_ref(f, k[0])));
        ir_add(f, nw, ir_assign(f, b[0].c, ir_cast(f, C->coord_ty, ir_ref(f, k[0]))));
      }
      ir_add(f, nw, ir_assign(f, b[0].p, ir_cast(f, C->index_ty, ir_int(f, 0))));
      s = asm_lower_fn(f, nw, &b[0], SPC_LF_YIELD, b[0].q, NULL, e);
      ir_stmt *bad = ir_add(f, nw, ir_if(f, ir_bin(f, IR_NE, ir_cast(f, IR_I64, ir_ref(f, b[0].q)), ir_ref(f, o[0])), NULL, NULL));
      ir_add(f, ir_then(bad), ir_assign(f, ok, ir_int(f, 0)));
      ir_add(f, ir_then(bad), ir_break(f));
      ir_add(f, nw, ir_assign(f, o[0], ir_bin(f, IR_ADD, ir_ref(f, o[0]), ir_int(f, 1))));
    }
    ir_stmt *fin = ir_then(ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, ok), ir_int(f, 1)), NULL, NULL)));
    for (int l = 0; l < L && !s; l++)
      if (asm_lfn(&b[l], SPC_LF_FINALIZE)) s = asm_lower_fn(f, fin, &b[l], SPC_LF_FINALIZE, -1, NULL, e);
  }
  if (!s) s = ir_verify(f, e);
  return s;
}

/* The argument of f's parameter `name` in a (NULL: f has none). */
static ir_arg *arg_named(const ir_func *f, ir_arg *a, const char *name) {
  int k = param_named(f, name);
  return k < 0 ? NULL : &a[k];
}

/* Phase q's (r[q].v.f) arguments a after ok: the chunk's bounds (t < 0:
 * none), the sums, the parents, the chunk's offsets, the counts, the
 * level arrays and the values, each where the phase takes it. */
static void pchain_args(const conv *C, const ir_func *f, ir_arg *a, int p_ok, int np,
                        const int64_t *tb, int64_t *msum, int64_t *npo, int64_t *oin,
                        const ir_arg *cnt, ir_arg (*arr)[SPC_LEVEL_MAX_ARRAYS], const ir_arg *vout) {
  memset(a + p_ok, 0, (size_t)(np - p_ok) * sizeof *a);
  ir_arg *x;
  char name[96];
  int L = C->L;
  if (tb && (x = arg_named(f, a, "t0_in"))) x->s.i64 = tb[0];
  if (tb && (x = arg_named(f, a, "t1_in"))) x->s.i64 = tb[1];
  if ((x = arg_named(f, a, "msum"))) *x = (ir_arg){.data = msum, .len = L};
  if ((x = arg_named(f, a, "npo"))) *x = (ir_arg){.data = npo, .len = L};
  if (oin && (x = arg_named(f, a, "oin"))) *x = (ir_arg){.data = oin, .len = L};
  for (int l = 0; l < L; l++) {
    snprintf(name, sizeof name, "cnt%d", l);
    if (cnt[l].data && (x = arg_named(f, a, name))) *x = cnt[l];
    const spc_level_spec *ls = C->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      if (arr[l][k].data && (x = arg_named(f, a, name))) *x = arr[l][k];
    }
  }
  if (vout->data && (x = arg_named(f, a, "vout"))) *x = *vout;
}

/* The chain plan on threads (above) into *out when every phase went
 * through (*threads: the chunks that held components); nothing made
 * otherwise (an error of any phase included), the serial routine's to
 * run. */
static spc_status run_pchain(conv *C, bool fromlc, conv_tensor **out, bool *done, int *threads,
                             spc_error *e) {
  *done = false;
  *threads = 1;
  int nt = conv_threads(C->n), L = C->L;
  if (nt < 2) return SPC_OK;
  rcr r[6];
  asm_entry fn[6] = {NULL};
  memset(r, 0, sizeof r);
  int ph = 0;
  bool go = phase_fns(C, RC_PCHAIN, fromlc, NULL, &ph, 6, r, fn);
  int np = 0, p_ok = go ? param_named(r[0].v.f, "ok") : -1;
  for (int q = 0; q < 6 && go; q++) {
    np = ir_nparams(r[q].v.f) > np ? ir_nparams(r[q].v.f) : np;
    go = param_named(r[q].v.f, "ok") == p_ok;
  }
  int64_t(*res)[PCH_RES(SPC_MAX_ORDER)] = NULL, (*oin)[SPC_MAX_ORDER] = NULL;
  int64_t msum[SPC_MAX_ORDER] = {0}, npo[SPC_MAX_ORDER] = {0}, size[SPC_MAX_ORDER] = {0};
  ir_arg *A = NULL, cnt[SPC_MAX_ORDER], arr[SPC_MAX_ORDER][SPC_LEVEL_MAX_ARRAYS], vout = {0};
  memset(cnt, 0, sizeof cnt);
  memset(arr, 0, sizeof arr);
  if (go) {
    res = spc_malloc((size_t)nt * sizeof *res);
    oin = spc_calloc((size_t)nt, sizeof *oin);
    A = spc_calloc((size_t)(nt + 1) * (size_t)np, sizeof *A);
    go = res && oin && A;
  }
  /* every call's leading arguments: the COO (fromlc: the sort's level
   * coordinates and values), n, the extents, the limit */
  for (int t = 0; t <= nt && go; t++) {
    ir_arg *a = A + (size_t)t * (size_t)np;
    int k = 0;
    for (int d = 0; d < (fromlc ? L : C->order); d++)
      a[k++] = (ir_arg){.data = fromlc ? (void *)C->lc[d]
                                       : spc_level_array_c(&C->comb->lv[d], "crd")->data,
                        .len = C->n};
    if (C->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = fromlc ? C->vals : C->comb->val, .len = C->n};
    a[k++].s.i64 = C->n;
    for (int l = 0; l < L; l++) {
      a[k++].s.i64 = C->N[l];
      a[k++].s.i64 = C->lo[l];
    }
    a[k++].s.i64 = C->limit;
    go = k == p_ok;
  }
  ir_arg *a1 = go ? A + (size_t)nt * (size_t)np : NULL; /* the single calls' */
  spc_status ts[64] = {SPC_OK};
  spc_error et[64];
  /* phase 1: the chunks' bounds and pass A; the chunks adjoin, their
   * tuples and pure positions increase from one to the next */
  int used = 0;
  if (go) {
    for (int t = 0; t < nt; t++) {
      ir_arg *a = A + (size_t)t * (size_t)np;
      int64_t tb[2] = {C->n / nt * t, t == nt - 1 ? C->n : C->n / nt * (t + 1)};
      pchain_args(C, r[0].v.f, a, p_ok, np, tb, msum, npo, NULL, cnt, arr, &vout);
      for (int x = 0; x < PCH_RES(L); x++) res[t][x] = -1;
      *arg_named(r[0].v.f, a, "res") = (ir_arg){.data = res[t], .len = PCH_RES(L)};
    }
    call_chunks(nt, fn[0], r[0].v.f, A, np, ts, et);
    int last = -1;
    for (int t = 0; t < nt && go; t++) {
      const int64_t *rt = res[t];
      go = !ts[t] && A[(size_t)t * (size_t)np + p_ok].s.i64 == 1 &&
           rt[0] == (t ? res[t - 1][1] : 0) && rt[1] >= rt[0] && (t < nt - 1 || rt[1] == C->n);
      if (!go || rt[1] == rt[0]) continue;
      if (last >= 0) {
        /* the top coordinate changes where one chunk meets the next:
         * every prefix, so every parent below the top, in one chunk */
        const int64_t *rl = res[last];
        go = rl[PCH_LK(L, 0)] < rt[PCH_FK(L, 0)];
        for (int l = 0; l < L && go; l++)
          if (rl[PCH_LP(L, l)] >= 0 || rt[PCH_FP(L, l)] >= 0)
            go = rl[PCH_LP(L, l)] >= 0 && rl[PCH_LP(L, l)] < rt[PCH_FP(L, l)];
      }
      for (int l = 0; l < L && go; l++) { /* the offsets: the chunks' before */
        oin[t][l] = msum[l];
        go = !__builtin_add_overflow(msum[l], rt[PCH_M(L, l)], &msum[l]);
      }
      last = t;
      used++;
    }
    go = go && used >= 2;
  }
  char name[96];
  /* phase 2: the parents, the count arrays */
  if (go) {
    pchain_args(C, r[1].v.f, a1, p_ok, np, NULL, msum, npo, NULL, cnt, arr, &vout);
    spc_error_clear(&et[0]);
    go = !asm_call(fn[1], r[1].v.f, a1, &et[0]) && a1[p_ok].s.i64 == 1;
    for (int l = 0; l < L; l++) {
      snprintf(name, sizeof name, "cnt%d", l);
      ir_arg *x = arg_named(r[1].v.f, a1, name);
      if (x) cnt[l] = *x, x->data = NULL;
    }
  }
  /* phase 3: pass B into the shared counts */
  for (int t = 0; t < nt && go; t++)
    pchain_args(C, r[2].v.f, A + (size_t)t * (size_t)np, p_ok, np, res[t], msum, npo, oin[t], cnt,
                arr, &vout);
  if (go) {
    call_chunks(nt, fn[2], r[2].v.f, A, np, ts, et);
    for (int t = 0; t < nt && go; t++) go = !ts[t] && A[(size_t)t * (size_t)np + p_ok].s.i64 == 1;
  }
  /* phase 4: the levels' init */
  if (go) {
    pchain_args(C, r[3].v.f, a1, p_ok, np, NULL, msum, npo, NULL, cnt, arr, &vout);
    spc_error_clear(&et[0]);
    go = !asm_call(fn[3], r[3].v.f, a1, &et[0]) && a1[p_ok].s.i64 == 1;
    for (int l = 0; l < L; l++) {
      const spc_level_spec *ls = C->lv[l]->lf;
      for (int k = 0; k < ls->narrays; k++) {
        snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
        ir_arg *x = arg_named(r[3].v.f, a1, name);
        if (x) arr[l][k] = *x, x->data = NULL;
        else go = false;
      }
      snprintf(name, sizeof name, "size%d", l);
      ir_arg *x = arg_named(r[3].v.f, a1, name);
      if (x) size[l] = x->s.i64;
      else go = false;
    }
    ir_arg *x = arg_named(r[3].v.f, a1, "vout");
    if (x) vout = *x, x->data = NULL;
  }
  /* phase 5: pass C into what init made */
  for (int t = 0; t < nt && go; t++)
    pchain_args(C, r[4].v.f, A + (size_t)t * (size_t)np, p_ok, np, res[t], msum, npo, oin[t], cnt,
                arr, &vout);
  if (go) {
    call_chunks(nt, fn[4], r[4].v.f, A, np, ts, et);
    for (int t = 0; t < nt && go; t++) go = !ts[t] && A[(size_t)t * (size_t)np + p_ok].s.i64 == 1;
  }
  /* phase 6: the top level in order, finalize */
  if (go) {
    pchain_args(C, r[5].v.f, a1, p_ok, np, NULL, msum, npo, NULL, cnt, arr, &vout);
    spc_error_clear(&et[0]);
    go = !asm_call(fn[5], r[5].v.f, a1, &et[0]) && a1[p_ok].s.i64 == 1;
    for (int l = 0; l < L; l++) { /* as finalize left them */
      const spc_level_spec *ls = C->lv[l]->lf;
      for (int k = 0; k < ls->narrays; k++) {
        snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
        ir_arg *x = arg_named(r[5].v.f, a1, name);
        if (x) arr[l][k] = *x;
      }
    }
  }
  conv_tensor *ct = NULL;
  spc_status s = SPC_OK;
  if (go && !(ct = new_result(C, C->comb->dims))) s = SPC_NOMEM(e);
  if (go && ct) {
    for (int l = 0; l < L; l++) adopt_arrays(C, ct, l, arr[l], C->lv[l]->lf->narrays);
    if (vout.data) {
      ct->t.val = vout.data;
      ct->t.nval = vout.len;
      ct->t.val_owned = true;
      vout.data = NULL;
    } else {
      ct->t.nval = size[L - 1];
    }
    *out = ct;
    *done = true;
    *threads = used;
  }
  for (int l = 0; l < L; l++) {
    spc_free(cnt[l].data);
    for (int k = 0; k < C->lv[l]->lf->narrays; k++) spc_free(arr[l][k].data);
  }
  spc_free(vout.data);
  spc_free(A);
  spc_free(res);
  spc_free(oin);
  for (int q = 0; q < 6; q++) ir_func_free(&r[q].v.f);
  return s;
}

/* The bucketing of run_direct in chunks of the COO, one a thread:
 * spc_conv_dbcount counts each chunk's components per parent of level k,
 * each parent's range of the output split among the chunks in their order
 * (the serial counting sort's stable order, bit for bit), and
 * spc_conv_dbplace moves each chunk's components into its share.  bargs:
 * the serial routine's arguments, the COO's up to o0 (crd.., vals, n, the
 * parents' extents); on success (*done) its outputs out0.., vout are set
 * there (the caller frees them as it frees the serial routine's).  Any
 * failure leaves bargs as it was, for the serial routine. */
static spc_status run_pdbucket(conv *C, dplan *P, int64_t pk, ir_arg *bargs, int o0, bool *done,
                               spc_error *e) {
  *done = false;
  int nt = conv_threads(C->n);
  if (nt < 2) return SPC_OK;
  rcr r[2];
  asm_entry fn[2] = {NULL};
  memset(r, 0, sizeof r);
  bool go = phase_fns(C, RC_DBUCKET, pk, P, &P->bphase, 2, r, fn);
  const ir_func *fc = r[0].v.f;
  int np = go ? ir_nparams(fc) : 0, p_cnt = go ? param_named(fc, "cnt") : -1;
  int nin = C->order + (C->comb->vt != SPC_PATTERN); /* n's index */
  int nout = C->order + (C->comb->vt != SPC_PATTERN);
  go = go && p_cnt == o0 + 2 && np == p_cnt + 1 + nout;
  int64_t *cnt[64] = {NULL};
  void *o[SPC_MAX_ORDER + 1] = {NULL};
  ir_arg *A = go ? spc_calloc((size_t)nt * (size_t)np, sizeof *A) : NULL;
  go = A != NULL;
  for (int t = 0; t < nt && go; t++) {
    ir_arg *a = A + (size_t)t * (size_t)np;
    int k = 0;
    for (int j = 0; j <= nin; j++) a[k++] = bargs[j];
    a[k++].s.i64 = C->n / nt * t;
    a[k++].s.i64 = t + 1 < nt ? C->n / nt * (t + 1) : C->n;
    for (int j = nin + 1; j < o0; j++) a[k++] = bargs[j];
  }
  spc_status ts[64] = {SPC_OK};
  spc_error et[64];
  if (go) {
    call_chunks(nt, fn[0], fc, A, np, ts, et);
    for (int t = 0; t < nt; t++) {
      cnt[t] = A[(size_t)t * (size_t)np + p_cnt].data;
      go = go && !ts[t] && cnt[t] && A[(size_t)t * (size_t)np + p_cnt].len == A[p_cnt].len;
    }
  }
  /* each parent's range split among the chunks in order: cnt[t][g] the
   * start of chunk t's share (chunk t counted into cnt[t][g + 1]) */
  int64_t ng = go ? A[p_cnt].len - 1 : 0, run = 0;
  for (int64_t g = 0; g < ng; g++)
    for (int t = 0; t < nt; t++) {
      int64_t c = cnt[t][g + 1];
      cnt[t][g] = run;
      run += c;
    }
  go = go && run == C->n;
  for (int d = 0; d < nout && go; d++) {
    ir_ty ty = ir_var_get(fc, ir_param_var(fc, p_cnt + 1 + d))->ty;
    go = (o[d] = spc_malloc((size_t)(C->n ? C->n : 1) * ir_ty_size(ty))) != NULL;
  }
  if (go) {
    for (int t = 0; t < nt; t++)
      for (int d = 0; d < nout; d++)
        A[(size_t)t * (size_t)np + p_cnt + 1 + d] = (ir_arg){.data = o[d], .len = C->n};
    call_chunks(nt, fn[1], r[1].v.f, A, np, ts, et);
    for (int t = 0; t < nt; t++) go = go && !ts[t];
  }
  if (go) {
    for (int d = 0; d < nout; d++) bargs[o0 + d] = (ir_arg){.data = o[d], .len = C->n};
    *done = true;
  } else {
    for (int d = 0; d < nout; d++) spc_free(o[d]);
  }
  for (int t = 0; t < nt; t++) spc_free(cnt[t]);
  spc_free(A);
  for (int q = 0; q < 2; q++) ir_func_free(&r[q].v.f);
  (void)e;
  return SPC_OK;
}

/* The direct plan when it applies (see above): *done set and *out the
 * result; else nothing changes.  A source whose components are not
 * grouped by level k's parent is bucketed first (build_dbucket). */
static spc_status run_direct(conv *C, const spc_tensor *fsrc, conv_tensor **out, bool *done,
                             spc_error *e) {
  *done = false;
  const conv_info *SI = fsrc ? &((const conv_tensor *)(const void *)fsrc)->info : NULL;
  lang_ival iv[SPC_MAX_ORDER];
  spc_error e2;
  spc_error_clear(&e2);
  C->vt = C->comb->vt;
  if (C->nosort) return SPC_OK;
  int64_t cmax[SPC_MAX_ORDER] = {0};
  /* a counter numbers the components in the combined order (strictly
   * increasing in dimension order): a source read through its levels only
   * where they say it comes in that order (each level its dimension's,
   * ordered or one position a parent: a CSR or a COO; not a CSC, nor a CSR
   * whose rows are not known to be sorted); pass 0 checks it, and that no
   * component repeats */
  for (int l = 0; fsrc && C->r->ncounters && l < fsrc->nlevels; l++)
    if (fsrc->lv[l].dim != l || !(fsrc->lv[l].props & (SPC_LP_ORDERED | SPC_LP_BRANCHLESS)))
      return SPC_OK;
  if (C->r->ncounters) { /* the counters' maxima first: the extents of their levels */
    spc_vtype sv = C->comb->vt;
    if (!C->fmt->fill_zero || C->measure || (C->o && C->o->plan == SPC_PLAN_SORT) ||
        (sv != SPC_PATTERN && sv != SPC_F64 && sv != SPC_F32 && sv != SPC_I64 && sv != SPC_U64))
      return SPC_OK; /* what direct_applies refuses, before a pass to count */
    bool skip = false;
    spc_status s = counter_max(C, fsrc, cmax, &skip, &e2);
    if (s == SPC_ERR_UNSUPPORTED || (!s && skip)) return SPC_OK;
    if (s && e) *e = e2;
    if (s) return s;
  }
  if (C->n == 0) /* no components: the counters hold no value (their levels are empty) */
    for (int c = 0; c < C->r->ncounters; c++) cmax[c] = -1;
  if (spc_remap_bounds(C->r, C->comb->dims, C->r->ncounters ? cmax : NULL, iv, &e2)) return SPC_OK;
  for (int l = 0; l < C->L; l++) {
    int64_t ext;
    if (!iv[l].bounded || __builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) || ext == INT64_MAX)
      return SPC_OK;
    C->lo[l] = iv[l].lo;
    C->N[l] = ext + 1;
  }
  choose_types(C);
  if (C->vt == SPC_PATTERN) C->vt = SPC_F64; /* padding needs values: ones */
  dplan P = {0};
  if (!direct_applies(C, &P)) return SPC_OK;
  /* a marker far wider than the source (a hypersparse level: 2^32 block
   * columns for one component, 8 bytes each) costs more than the sort it
   * spares, and may not be allocatable at all: the sort path needs none */
  for (int l = 0; l < C->L; l++)
    if ((P.idq[l] || l == P.k) && C->N[l] / 8 > C->n + 8192) return SPC_OK;
  int64_t pk = P.k + 1; /* the plan, with the key (it follows from C) */
  for (int l = 0; l < C->L; l++) pk |= (int64_t)P.idq[l] << (8 + l);
  void *crd[SPC_MAX_ORDER] = {NULL};
  for (int d = 0; d < C->order && !fsrc; d++) crd[d] = spc_level_array_c(&C->comb->lv[d], "crd")->data;
  if (!fsrc && P.can_cphase) { /* a COO in chunks on threads */
    conv_tensor *pct = NULL;
    int pth = 1;
    spc_status ps = run_cdirect(C, &P, pk, crd, C->comb->val, &pct, &pth, e);
    if (ps || pct) {
      *out = pct;
      *done = pct != NULL;
      if (pct && C->o && C->o->info)
        snprintf(C->o->info->plan, sizeof C->o->info->plan,
                 "direct (coordinates marked per parent, each parent's sorted, values placed by "
                 "position: no sort; %d threads)", pth);
      return ps;
    }
  }
  if (fsrc && P.can_phase) { /* on threads */
    conv_tensor *pct = NULL;
    int pth = 1;
    spc_status ps = run_pdirect(C, fsrc, &P, pk, &pct, &pth, e);
    if (ps || pct) {
      *out = pct;
      *done = pct != NULL;
      if (pct && C->o && C->o->info)
        snprintf(C->o->info->plan, sizeof C->o->info->plan,
                 "direct (the levels' markers counted, values placed by position: no sort; source "
                 "read through its own levels: no COO; %d threads)", pth);
      return ps;
    }
  }
  rcr rd, rb = {0};
  conv_tensor *ct = NULL;
  int pth = 1;
  char threads[32] = "", bthreads[40] = "";
  spc_status s = rc_get_x(C, SI, RC_DIRECT, pk, &P, &rd, &e2);
  ir_func *f = rd.v.f, *B = NULL;
  int p_ok = rd.v.aux[0], p_arr0 = rd.v.aux[1];
  ir_arg *args = NULL, *bargs = NULL;
  if (s || (fsrc && !fused_runs(C, &rd))) {
    ir_func_free(&f);
    if (!s || s == SPC_ERR_UNSUPPORTED) return SPC_OK;
    if (e) *e = e2;
    return s;
  }
  s = direct_once(C, &rd, fsrc, crd, C->comb->val, &args, e);
  bool bucketed = false;
  if (!s && fsrc && args[p_ok].s.i64 == 2) {
    /* not grouped: the read-out is bucketed (below, in run_direct again) */
  } else if (!s && args[p_ok].s.i64 == 2) { /* not grouped by level k's parent */
    free_out_args(f, args, p_arr0);
    spc_free(args);
    args = NULL;
    s = rc_get_x(C, NULL, RC_DBUCKET, pk, &P, &rb, e);
    B = rb.v.f;
    if (!s && !(bargs = spc_calloc((size_t)ir_nparams(B), sizeof *bargs))) s = SPC_NOMEM(e);
    if (!s) {
      int a = 0;
      for (; a < C->order; a++) bargs[a] = (ir_arg){.data = crd[a], .len = C->n};
      if (C->comb->vt != SPC_PATTERN) bargs[a++] = (ir_arg){.data = C->comb->val, .len = C->n};
      bargs[a++].s.i64 = C->n;
      for (int l = 0; l < P.k; l++) {
        bargs[a++].s.i64 = C->N[l];
        bargs[a++].s.i64 = C->lo[l];
      }
      int o0 = a;
      bool par = false; /* in chunks on threads, else the serial routine */
      if (P.can_cphase) s = run_pdbucket(C, &P, pk, bargs, o0, &par, e);
      if (!s && !par) s = rc_run(C, &rb, bargs, e);
      if (par) snprintf(bthreads, sizeof bthreads, "; bucketed in %d chunks", conv_threads(C->n));
      void *bc[SPC_MAX_ORDER];
      for (int d = 0; d < C->order; d++) bc[d] = bargs[o0 + d].data;
      void *bv = C->comb->vt != SPC_PATTERN ? bargs[o0 + C->order].data : NULL;
      /* the bucketed copy in chunks on threads, else the serial routine */
      if (!s && P.can_cphase) s = run_cdirect(C, &P, pk, bc, bv, &ct, &pth, e);
      if (!s && !ct) s = direct_once(C, &rd, NULL, bc, bv, &args, e);
      snprintf(threads, sizeof threads, "; %d threads", pth);
      bucketed = true;
    }
  }
  int np = ir_nparams(f);
  if (!s && (ct || args[p_ok].s.i64 == 1)) {
    if (!ct && !(ct = direct_result(C, args, p_arr0, np))) {
      s = SPC_NOMEM(e);
    } else {
      *out = ct;
      *done = true;
      if (C->o && C->o->info)
        snprintf(C->o->info->plan, sizeof C->o->info->plan, "%s%s%s)",
                 P.k < 0 ? "direct (the levels' markers counted, values placed by position: no sort"
                 : bucketed ? "direct (bucketed by the parents of the stateful level; coordinates "
                              "marked per parent, each parent's sorted, values placed by position: "
                              "no sort"
                            : "direct (coordinates marked per parent, each parent's sorted, values "
                              "placed by position: no sort",
                 bthreads, fsrc ? "; source read through its own levels: no COO" : pth > 1 ? threads : "");
    }
  }
  if (args) free_out_args(f, args, p_arr0);
  spc_free(args);
  if (B) free_out_args(B, bargs, C->order + 1);
  spc_free(bargs);
  ir_func_free(&f);
  ir_func_free(&B);
  return s;
}

/* A converted source the fused counting routine can read through its
 * levels: general storage, every position a component (no `valid`, no
 * `fill: zero`, a last level without padding: so its stored count is the
 * component count the read-out would give, and the types chosen are the
 * same). */
static bool fusable_info(const conv_info *I) {
  if (I->fmt->fill_zero || I->nlevels < 1 || I->lv[I->nlevels - 1]->lf->pads) return false;
  for (int l = 0; l < I->nlevels; l++) {
    lvbind b;
    asm_bind_init(&b, I->lv[l]->lf, I->lv[l], I->index_ty, I->coord_ty);
    if (asm_lfn(&b, SPC_LF_VALID)) return false;
  }
  return true;
}

static bool fusable(const spc_tensor *src) {
  if (!spc_is_converted(src) || src->sym != SPC_GENERAL) return false;
  const conv_info *I = &((const conv_tensor *)(const void *)src)->info;
  return I->nlevels == src->nlevels && fusable_info(I);
}

/* A native CSR or CSC (a binsparse or .npz file read: levels dense and
 * compressed, general) seen as the built-in format it is, borrowing its
 * arrays and values, so the fused counting routines read it through its
 * levels instead of a COO read out of it.  NULL where it is not one, or
 * its arrays are not the widths the built-in format's routines take for
 * its extents (the caller goes on as before).  The level properties are
 * the instance's (the readers set them from the data). */
static spc_tensor *native_view(const spc_tensor *src) {
  if (spc_is_converted(src) || src->ext || src->sym != SPC_GENERAL || src->order != 2 ||
      src->nlevels != 2 || src->lv[0].fmt != &spc_level_dense ||
      src->lv[1].fmt != &spc_level_compressed || src->lv[0].dim == src->lv[1].dim)
    return NULL;
  const spc_array *pos = spc_level_array_c(&src->lv[1], "pos");
  const spc_array *crd = spc_level_array_c(&src->lv[1], "crd");
  int64_t n = spc_tensor_nstored(src);
  if (!pos || !crd || crd->len != n || (src->vt != SPC_PATTERN && src->nval != n)) return NULL;
  spc_tensor *t = NULL;
  spc_error e;
  if (spc_conv_result_shell(src->lv[0].dim == 0 ? "csr" : "csc", NULL, 2, src->dims, n, src->vt,
                            &t, &e))
    return NULL;
  const spc_array *have[2] = {pos, crd};
  bool ok = t->nlevels == 2 && spc_conv_narrays(t, 0) == 0 && spc_conv_narrays(t, 1) == 2;
  for (int a = 0; ok && a < 2; a++) {
    const char *name = NULL;
    spc_itype ty = spc_conv_array_type(t, 1, a, &name);
    const spc_array *x = !strcmp(name, "pos") ? pos : !strcmp(name, "crd") ? crd : NULL;
    ok = x == have[a] && x->type == ty;
    if (ok)
      t->lv[1].arr[t->lv[1].narr++] =
          (spc_array){.name = name, .type = ty, .len = x->len, .data = x->data, .owned = false};
  }
  if (!ok) {
    spc_tensor_free(&t);
    return NULL;
  }
  for (int l = 0; l < 2; l++) t->lv[l].props = src->lv[l].props;
  t->val = src->val;
  t->nval = src->nval;
  t->val_owned = false;
  return t;
}

/* ---- the counting path over a stream -------------------------------------------
 * The same two passes when the source comes in blocks and is not held
 * whole (a text file read twice, io_stream.c): four routines, the level
 * arrays and the counts kept here between calls.
 *   spc_conv_scount(crd0.., n, N0, lo0, N1, lo1, cnt, last, ok)   per block
 *   spc_conv_sinit(cnt, N0, lo0, N1, lo1, limit, arrays.., size, [vout])
 *   spc_conv_splace(crd0.., [vals], n, N0, lo0, N1, lo1, size, arrays.., [vout])
 *   spc_conv_sfinal(np, N1, lo1, arrays..)
 * A block out of order or repeating a component sets ok (0 / -1) and the
 * caller takes another path; placing more components than were counted
 * (the file changed between the passes) fails. */
struct asm_counter {
  conv C;
  spc_specs *own;
  spc_convert_opts o;
  spc_tensor *proto;    /* the source's types and dims, no components */
  ir_func *fc, *fp;
  asm_entry ec, ep;
  int64_t np1, ok, counted, placed, size;
  int64_t *cnt, *last;
  int narr;
  ir_arg arr[SPC_LEVEL_MAX_ARRAYS], vout;
  spc_convert_info *info; /* the caller's (mapped_*), or NULL */
};

/* One component's level-0 position (into b0->q) and the remapped
 * coordinates (outs), from block position t. */
static spc_status sentry(conv *C, ir_func *f, ir_stmt *lb, const ir_var *crd, ir_var t, bool reqs,
                         lvbind *b0, ir_expr **outs, spc_error *e) {
  req_ctx rq = {.C = C};
  ir_expr *src[SPC_MAX_ORDER];
  spc_status s = lower_source(C, f, lb, crd, t, reqs, &rq, src, e);
  if (!s) s = spc_remap_lower(C->r, f, lb, src, NULL, outs, e);
  if (s) return s;
  ir_add(f, lb, ir_assign(f, b0->p, ir_cast(f, C->index_ty, ir_int(f, 0))));
  ir_add(f, lb, ir_assign(f, b0->c, ir_cast(f, C->coord_ty, outs[0])));
  return asm_lower_fn(f, lb, b0, SPC_LF_YIELD, b0->q, NULL, e);
}

static spc_status build_scount(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_conv_scount");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], Nlo[4];
  sparams_crd(C, f, crd, -1);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  sparams_Nlo(f, Nlo);
  ir_var cnt = ir_param(f, "cnt", IR_I64, true, IR_INOUT);
  ir_var last = ir_param(f, "last", IR_I64, true, IR_INOUT);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_INOUT);
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var g = lang_fresh_local(f, "g", IR_I64, false);
  ir_var k1 = lang_fresh_local(f, "k1", IR_I64, false);
  ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
  ir_expr *outs[SPC_MAX_ORDER];
  spc_status s = sentry(C, f, lb, crd, t, true, &b0, outs, e);
  if (s) return s;
  ir_add(f, lb, ir_assign(f, g, ir_cast(f, IR_I64, ir_ref(f, b0.q))));
  ir_add(f, lb, ir_assign(f, k1, ir_bin(f, IR_ADD, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, outs[1]),
                                                          ir_ref(f, b1.lo)), ir_int(f, 1))));
  ir_stmt *bad = ir_add(f, lb, ir_if(f, ir_bin(f, IR_GE, ir_load(f, last, ir_ref(f, g)), ir_ref(f, k1)),
                                     NULL, NULL));
  ir_add(f, ir_then(bad), ir_assign(f, ok, ir_select(f, ir_bin(f, IR_EQ, ir_load(f, last, ir_ref(f, g)),
                                                               ir_ref(f, k1)),
                                                     ir_int(f, -1), ir_int(f, 0))));
  ir_add(f, ir_then(bad), ir_break(f));
  ir_add(f, lb, ir_store(f, last, ir_ref(f, g), ir_ref(f, k1)));
  ir_add(f, lb, ir_store(f, cnt, ir_ref(f, g), ir_bin(f, IR_ADD, ir_load(f, cnt, ir_ref(f, g)), ir_int(f, 1))));
  return ir_verify(f, e);
}

/* init (p_arr0: the first level array parameter) */
/* Whether st (a block run unconditionally) stores arr[q] for the plain
 * position q, at its top or in nested blocks. */
static bool stores_at(const ir_stmt *st, ir_var arr, ir_var q) {
  if (!st) return false;
  if (st->kind == IR_S_STORE && st->var == arr) {
    const ir_expr *x = st->a;
    while (x->kind == IR_E_CAST) x = x->a;
    return x->kind == IR_E_VAR && x->var == q;
  }
  if (st->kind != IR_S_BLOCK) return false;
  for (int c = 0; c < st->nkids; c++)
    if (stores_at(st->kids[c], arr, q)) return true;
  return false;
}

/* Which arrays of the child level its insert_coord always writes at the
 * yielded position (compressed: crd[q] = c). */
static spc_status insert_fills(conv *C, bool *fill, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  for (int k = 0; k < l1->narrays; k++) fill[k] = false;
  ir_func *f = NULL;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  lvbind b1;
  spc_status s = lf_probe(C, SPC_LF_INSERT, &f, keep, &b1, e);
  for (int k = 0; k < l1->narrays && !s && asm_lfn(&b1, SPC_LF_INSERT); k++)
    fill[k] = stores_at(ir_func_body(f), keep[k], b1.q);
  ir_func_free(&f);
  return s;
}

/* Whether x reads no array. */
static bool reads_none(const ir_expr *x) {
  if (!x) return true;
  if (x->kind == IR_E_LOAD || x->kind == IR_E_LEN) return false;
  return reads_none(x->a) && reads_none(x->b) && reads_none(x->c);
}

/* Whether st is only stores at position q, into arrays k with fill[k],
 * of values that read no array: insert_coord a function of the component
 * and its position alone (compressed: crd[q] = c). */
static bool pure_insert(const ir_stmt *st, const ir_var *keep, const bool *fill, int narr,
                        ir_var q) {
  if (!st) return true;
  if (st->kind == IR_S_BLOCK) {
    for (int c = 0; c < st->nkids; c++)
      if (!pure_insert(st->kids[c], keep, fill, narr, q)) return false;
    return true;
  }
  if (st->kind != IR_S_STORE) return false;
  int k = 0;
  while (k < narr && keep[k] != st->var) k++;
  if (k == narr || !fill[k]) return false;
  const ir_expr *x = st->a;
  while (x->kind == IR_E_CAST) x = x->a;
  return x->kind == IR_E_VAR && x->var == q && reads_none(st->b);
}

/* Whether build_count's pass 0 can place as it counts (its first loop;
 * placed_runs): the top level ORDERED, the child COMPACT with yield_run,
 * and its insert_coord pure (pure_insert; fill: the arrays it writes). */
static spc_status place_in_pass0(conv *C, bool *fill, bool *yes, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  *yes = false;
  if (!(C->lv[0]->lf->props & SPC_LP_ORDERED) || !(l1->props & SPC_LP_COMPACT) ||
      l1->narrays > SPC_LEVEL_MAX_ARRAYS)
    return SPC_OK;
  ir_func *f = NULL;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  lvbind b1;
  spc_status s = lf_probe(C, SPC_LF_INSERT, &f, keep, &b1, e);
  if (!s && asm_lfn(&b1, SPC_LF_INSERT) && asm_lfn(&b1, SPC_LF_YIELD_RUN)) {
    bool any = false;
    for (int k = 0; k < l1->narrays; k++) any |= fill[k] = stores_at(ir_func_body(f), keep[k], b1.q);
    const ir_stmt *body = ir_func_body(f);
    *yes = any && body->nkids > 0 &&
           pure_insert(body->kids[body->nkids - 1], keep, fill, l1->narrays, b1.q);
  }
  ir_func_free(&f);
  return s;
}

/* Whether st stores into arr only the variable c (under casts). */
static bool stores_only(const ir_stmt *st, ir_var arr, ir_var c, bool *any) {
  if (!st) return true;
  if (st->kind == IR_S_STORE && st->var == arr) {
    const ir_expr *x = st->b;
    while (x->kind == IR_E_CAST) x = x->a;
    *any = true;
    return x->kind == IR_E_VAR && x->var == c;
  }
  for (int k = 0; k < st->nkids; k++)
    if (!stores_only(st->kids[k], arr, c, any)) return false;
  return true;
}

/* Whether build_count's pass 0 can take the source's own arrays instead
 * of copying them into the child level (countfn.give): it places as it
 * counts (place_in_pass0) into one array of the level (*gk), which
 * insert_coord fills with the child coordinate itself (compressed:
 * crd[q] = c), that coordinate is the source's dimension *gd as it is
 * (level_dim: no remapping), and the level's array, the coordinates and
 * the source's coordinates have one type; the values go to vout as they
 * are.  The rows bucketing's sorted copy (count_rows) then becomes the
 * result's crd and values: no copy of 12 bytes a component into fresh
 * memory (R-MAT 2^17 shuffled COO to CSR: the counting routine 6.5 ms
 * of 26).  *gd -1: not. */
static spc_status give_plan(conv *C, int *gd, int *gk, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  bool fill[SPC_LEVEL_MAX_ARRAYS] = {false}, yes = false;
  *gd = *gk = -1;
  spc_status s = place_in_pass0(C, fill, &yes, e);
  int d = level_dim(C->r, 1), k1 = -1;
  if (s || !yes || d < 0 || d >= C->order) return s;
  for (int k = 0; k < l1->narrays; k++) {
    if (!fill[k]) continue;
    if (k1 >= 0) return SPC_OK;
    k1 = k;
  }
  ir_ty st = spc_level_array_c(&C->comb->lv[d], "crd")->type == SPC_IDX32 ? IR_I32 : IR_I64;
  if (k1 < 0 || C->coord_ty != st || asm_tname_ty(l1->arrays[k1].type, C->index_ty, C->coord_ty) != st)
    return SPC_OK;
  ir_func *f = NULL;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  lvbind b1;
  bool any = false;
  s = lf_probe(C, SPC_LF_INSERT, &f, keep, &b1, e);
  if (!s && stores_only(ir_func_body(f), keep[k1], b1.c, &any) && any) *gd = d, *gk = k1;
  ir_func_free(&f);
  return s;
}

/* Clear the zero flag of every allocation of arr in st. */
static void unzero(ir_stmt *st, ir_var arr) {
  if (!st) return;
  if (st->kind == IR_S_ALLOC && st->var == arr) st->zero = false;
  for (int c = 0; c < st->nkids; c++) unzero(st->kids[c], arr);
}

/* spc_conv_sinit: the child level's queries from the counts, its init and
 * size, and the values array.  nozero: the placing pass will write every
 * position below size exactly once (place_chunks checks: a COMPACT child
 * level, size equal to the components counted, no duplicate), so the
 * values and the arrays insert_coord writes at every position (fill,
 * when not NULL: which; their lengths must be size) are allocated without
 * zeroing -- 2.2 M values and coordinates: 26 MB not written twice. */
static spc_status build_sinit(conv *C, ir_func **out, int *p_arr0, bool nozero, bool *fill,
                              spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_func *f = *out = ir_func_new(nozero ? "spc_conv_sinit_nz" : "spc_conv_sinit");
  char name[160];
  if (!f) return SPC_NOMEM(e);
  bool fl[SPC_LEVEL_MAX_ARRAYS] = {false};
  nozero = nozero && (l1->props & SPC_LP_COMPACT) && l1->narrays <= SPC_LEVEL_MAX_ARRAYS;
  spc_status s = nozero ? insert_fills(C, fl, e) : SPC_OK;
  if (s) return s;
  for (int k = 0; fill && k < l1->narrays && k < SPC_LEVEL_MAX_ARRAYS; k++) fill[k] = fl[k];
  ir_stmt *body = ir_func_body(f);
  ir_var Nlo[4];
  ir_var cnt = ir_param(f, "cnt", IR_I64, true, IR_IN);
  sparams_Nlo(f, Nlo);
  ir_var limit = ir_param(f, "limit", IR_I64, false, IR_IN);
  lvbind b0, b1;
  *p_arr0 = ir_nparams(f);
  for (int k = 0; k < l1->narrays; k++)
    b1.arr[k] = ir_param(f, l1->arrays[k].name,
                         asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_OUT);
  ir_var size = ir_param(f, "size", IR_I64, false, IR_OUT);
  ir_var vout = C->vt != SPC_PATTERN ? ir_param(f, "vout", asm_value_ty(C->vt), true, IR_OUT) : -1;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < l1->narrays; k++) keep[k] = b1.arr[k];
  sbind(C, f, body, &b0, &b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1.arr[k] = keep[k];
  ir_var np1 = lang_fresh_local(f, "np1", IR_I64, false);
  s = asm_lower_fn(f, body, &b0, SPC_LF_SIZE, np1, NULL, e);
  if (!s) ir_add(f, body, ir_assign(f, b1.np, ir_cast(f, C->index_ty, ir_ref(f, np1))));
  if (!s) s = squeries(C, &b1, cnt, e);
  if (!s && asm_lfn(&b1, SPC_LF_INIT)) s = asm_lower_fn(f, body, &b1, SPC_LF_INIT, -1, NULL, e);
  if (!s) s = asm_lower_fn(f, body, &b1, SPC_LF_SIZE, size, NULL, e);
  if (s) return s;
  for (int k = 0; k < l1->narrays; k++)
    if (fl[k]) unzero(body, keep[k]);
  snprintf(name, sizeof name,
           "level 2 (%s) of format %s would hold %%lld positions: too large (limit %%lld)",
           l1->name, C->fmt->name);
  ir_expr *fa[2] = {ir_ref(f, size), ir_ref(f, limit)};
  ir_stmt *big = ir_add(f, body, ir_if(f, ir_bin(f, IR_GT, ir_ref(f, size), ir_ref(f, limit)), NULL, NULL));
  ir_add(f, ir_then(big), ir_fail(f, SPC_ERR_UNSUPPORTED, name, fa, 2));
  if (vout >= 0) ir_add(f, body, ir_alloc(f, vout, ir_ref(f, size), !nozero));
  return ir_verify(f, e);
}

/* spc_conv_splace: one chunk's components placed, a yield_pos each; with
 * runs (spc_conv_splace_runs, the chunks strictly in (c0, c1) order: every
 * component a new child, in order) each parent's run in the chunk takes
 * its positions by one yield_run of rc[g], the chunk's count under
 * parent g, and the run's components the returned position and the ones
 * after it (as run_place; UNSUPPORTED where the child level has no
 * yield_run). */
static spc_status build_splace(conv *C, ir_func **out, bool runs, spc_error *e) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  *out = NULL;
  if (runs) {
    lvbind bp;
    asm_bind_init(&bp, l1, C->lv[1], C->index_ty, C->coord_ty);
    if (!asm_lfn(&bp, SPC_LF_YIELD_RUN)) return SPC_ERR_UNSUPPORTED;
  }
  ir_func *f = *out = ir_func_new(runs ? "spc_conv_splace_runs" : "spc_conv_splace");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], Nlo[4];
  sparams_crd(C, f, crd, -1);
  ir_ty vty = asm_value_ty(C->vt);
  ir_var vals = C->vt != SPC_PATTERN ? ir_param(f, "vals", vty, true, IR_IN) : -1;
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  sparams_Nlo(f, Nlo);
  ir_var size = ir_param(f, "size", IR_I64, false, IR_IN);
  lvbind b0, b1;
  ir_var keep[SPC_LEVEL_MAX_ARRAYS];
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  ir_var vout = vals >= 0 ? ir_param(f, "vout", vty, true, IR_INOUT) : -1;
  ir_var rc = runs ? ir_param(f, "rc", IR_I64, true, IR_IN) : -1;
  sbind(C, f, body, &b0, &b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1.arr[k] = keep[k];
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_var g = runs ? lang_fresh_local(f, "g", IR_I64, false) : -1;
  ir_var prevg = runs ? lang_fresh_local(f, "prevg", IR_I64, false) : -1;
  ir_var nrun = runs ? lang_fresh_local(f, "nrun", C->index_ty, false) : -1;
  if (runs) ir_add(f, body, ir_assign(f, prevg, ir_int(f, -1)));
  ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
  ir_expr *outs[SPC_MAX_ORDER];
  spc_status s = sentry(C, f, lb, crd, t, false, &b0, outs, e);
  if (s) return s;
  ir_add(f, lb, ir_assign(f, b1.p, ir_ref(f, b0.q)));
  ir_add(f, lb, ir_assign(f, b1.c, ir_cast(f, C->coord_ty, outs[1])));
  if (runs) {
    ir_add(f, lb, ir_assign(f, g, ir_cast(f, IR_I64, ir_ref(f, b0.q))));
    ir_stmt *nw = ir_add(f, lb, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, g), ir_ref(f, prevg)), NULL, NULL));
    ir_add(f, ir_then(nw), ir_assign(f, nrun, ir_cast(f, C->index_ty, ir_load(f, rc, ir_ref(f, g)))));
    b1.nrun = nrun;
    s = asm_lower_fn(f, ir_then(nw), &b1, SPC_LF_YIELD_RUN, b1.q, NULL, e);
    b1.nrun = -1;
    ir_add(f, ir_then(nw), ir_assign(f, prevg, ir_ref(f, g)));
    bump(f, ir_else(f, nw), b1.q, C->index_ty);
  } else {
    s = asm_lower_fn(f, lb, &b1, SPC_LF_YIELD, b1.q, NULL, e);
  }
  if (s) return s;
  ir_expr *oob = pos_outside(f, b1.q, size);
  ir_stmt *iff = ir_add(f, lb, ir_if(f, oob, NULL, NULL));
  ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_INPUT,
                                  "the source changed between the counting and the placing pass",
                                  NULL, 0));
  if (asm_lfn(&b1, SPC_LF_INSERT)) s = asm_lower_fn(f, lb, &b1, SPC_LF_INSERT, -1, NULL, e);
  if (!s && vout >= 0)
    ir_add(f, lb, ir_store(f, vout, ir_ref(f, b1.q), ir_load(f, vals, ir_ref(f, t))));
  return s ? s : ir_verify(f, e);
}

/* A routine over the child level's state (build_sfinal, build_runs): its
 * parameters N0, lo0, N1, lo1 and level 1's arrays (in and out), after
 * np1; the levels bound (b1's arrays those) and b1's np set to np1. */
static void state_params(conv *C, ir_func *f, ir_stmt *body, ir_var np, lvbind *b0, lvbind *b1) {
  const spc_level_spec *l1 = C->lv[1]->lf;
  ir_var Nlo[4], keep[SPC_LEVEL_MAX_ARRAYS];
  sparams_Nlo(f, Nlo);
  for (int k = 0; k < l1->narrays; k++)
    keep[k] = ir_param(f, l1->arrays[k].name,
                       asm_tname_ty(l1->arrays[k].type, C->index_ty, C->coord_ty), true, IR_INOUT);
  sbind(C, f, body, b0, b1, Nlo);
  for (int k = 0; k < l1->narrays; k++) b1->arr[k] = keep[k];
  ir_add(f, body, ir_assign(f, b1->np, ir_cast(f, C->index_ty, ir_ref(f, np))));
}

static spc_status build_sfinal(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_conv_sfinal");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var np = ir_param(f, "np1", IR_I64, false, IR_IN);
  lvbind b0, b1;
  state_params(C, f, body, np, &b0, &b1);
  spc_status s = SPC_OK;
  if (asm_lfn(&b1, SPC_LF_FINALIZE)) s = asm_lower_fn(f, body, &b1, SPC_LF_FINALIZE, -1, NULL, e);
  return s ? s : ir_verify(f, e);
}

/* spc_conv_runs(tot, np1, N0, lo0, N1, lo1, arrays of level 1.., ok): the
 * child level's state, as sinit left it, advanced by each parent's run of
 * tot[g] children at once (yield_run, every parent: n = 0 leaves it as it
 * is), checked to give the runs positions 0, tot[0], tot[0] + tot[1], ..
 * in parent order: then a source in (c0, c1) order places its component
 * t at position t, and copy_runs copies it there (ok 1; 0: a run
 * elsewhere). */
static spc_status build_runs(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_conv_runs");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var tot = ir_param(f, "tot", IR_I64, true, IR_IN);
  ir_var np = ir_param(f, "np1", IR_I64, false, IR_IN);
  lvbind b0, b1;
  state_params(C, f, body, np, &b0, &b1);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  if (!asm_lfn(&b1, SPC_LF_YIELD_RUN)) return SPC_ERR_UNSUPPORTED;
  ir_add(f, body, ir_assign(f, ok, ir_int(f, 1)));
  ir_var t = lang_fresh_local(f, "t", IR_I64, false), g, nrun;
  ir_stmt *has;
  spc_status s = each_run(C, f, body, &b1, tot, np, t, true, &has, &g, &nrun, e);
  if (!s) check_run(f, has, &b1, t, nrun, ok);
  return s ? s : ir_verify(f, e);
}

static spc_status build_np1(conv *C, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_conv_np1");
  if (!f) return SPC_NOMEM(e);
  ir_stmt *body = ir_func_body(f);
  ir_var Nlo[4];
  sparams_Nlo(f, Nlo);
  ir_var np1 = ir_param(f, "np1", IR_I64, false, IR_OUT);
  lvbind b0, b1;
  sbind(C, f, body, &b0, &b1, Nlo);
  return asm_lower_fn(f, body, &b0, SPC_LF_SIZE, np1, NULL, e);
}

static spc_status np1_of(conv *C, int64_t *np1, spc_error *e) {
  rcr r;
  spc_status s = rc_get(C, NULL, RC_NP1, 0, &r, e);
  ir_arg a[5] = {{0}};
  a[0].s.i64 = C->N[0], a[1].s.i64 = C->lo[0], a[2].s.i64 = C->N[1], a[3].s.i64 = C->lo[1];
  if (!s) s = ir_run(r.v.f, a, e);
  *np1 = a[4].s.i64;
  ir_func_free(&r.v.f);
  return s;
}

void asm_counter_free(asm_counter **cp) {
  asm_counter *c = cp ? *cp : NULL;
  if (!c) return;
  ir_func_free(&c->fc);
  ir_func_free(&c->fp);
  spc_free(c->cnt);
  spc_free(c->last);
  for (int k = 0; k < c->narr; k++) spc_free(c->arr[k].data);
  spc_free(c->vout.data);
  spc_remap_free(&c->C.r);
  spc_tensor_free(&c->proto);
  spc_specs_free(&c->own);
  spc_free(c);
  *cp = NULL;
}

spc_status asm_counter_create(const char *format, const spc_convert_opts *o, const spc_tensor *proto,
                              int64_t nmax, asm_counter **out, spc_error *e) {
  *out = NULL;
  asm_counter *c = spc_calloc(1, sizeof *c);
  if (!c) return SPC_NOMEM(e);
  if (o) c->o = *o;
  else spc_convert_opts_init(&c->o);
  c->info = c->o.info;
  c->o.info = NULL;
  conv *C = &c->C;
  const spc_specs *reg = NULL;
  const spc_format_spec *fmt = NULL;
  spc_status s = asm_resolve_format(format, &c->o, &reg, &c->own, &fmt, e);
  if (!s) s = spc_coo_alloc(proto->order, proto->dims, 0, proto->vt, &c->proto, e);
  for (int d = 0; !s && d < proto->order; d++)
    spc_level_array(&c->proto->lv[d], "crd")->type = spc_level_array_c(&proto->lv[d], "crd")->type;
  if (s) {
    asm_counter_free(&c);
    return s;
  }
  *C = (conv){.fmt = fmt, .specs = reg, .dup = c->o.dup, .comb = c->proto, .order = proto->order,
              .n = nmax, .vt = proto->vt, .o = &c->o};
  C->limit = c->o.max_positions > 0 ? c->o.max_positions : default_limit();
  C->om_budget = c->o.mem;
  asm_engine_init(&C->eng, &c->o);
  spc_remap_param ps[SPC_MAX_PARAMS];
  int np = asm_opts_params(&c->o, ps);
  bool fits = !fmt->order || fmt->order == C->order;
  if (fits) s = set_params(C, ps, np, e);
  if (fits && !s) {
    if (c->o.nmodes > 0 && c->o.nmodes <= SPC_MAX_ORDER) {
      C->nmodes = c->o.nmodes;
      memcpy(C->modes, c->o.modes, sizeof C->modes);
    }
    s = asm_remap(fmt, C->order, C->ps, C->nparams, C->modes, C->nmodes, C->remap_text,
                  sizeof C->remap_text, &C->r, e);
  }
  /* the counting path's conditions (run_count's); any error here is the
   * ordinary conversion's to report: not this path */
  bool ok = fits && !s && C->r->order_out == 2 && !C->r->ncounters;
  lang_ival iv[SPC_MAX_ORDER];
  spc_error e2;
  spc_error_clear(&e2);
  if (ok) {
    C->L = 2;
    C->lv[0] = &fmt->lv[0];
    C->lv[1] = &fmt->lv[fmt->nlevels > 1 ? 1 : 0];
    ok = !spc_remap_bounds(C->r, proto->dims, NULL, iv, &e2);
  }
  for (int l = 0; ok && l < 2; l++) {
    int64_t ext;
    ok = iv[l].bounded && !__builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) && ext != INT64_MAX;
    if (ok) C->lo[l] = iv[l].lo, C->N[l] = ext + 1;
  }
  if (ok) {
    choose_types(C); /* for nmax components: the widest it can take */
    ok = count_applies(C);
  }
  lvbind b1;
  if (ok) { /* the child's queries are counts */
    asm_bind_init(&b1, C->lv[1]->lf, C->lv[1], C->index_ty, C->coord_ty);
    ok = !squeries(C, &b1, 0, &e2);
  }
  if (!ok) {
    spc_error_clear(e);
    asm_counter_free(&c);
    return SPC_OK;
  }
  s = np1_of(C, &c->np1, e);
  if (!s && c->np1 > C->limit) { /* the ordinary path refuses it */
    asm_counter_free(&c);
    return SPC_OK;
  }
  if (!s && (!(c->cnt = spc_calloc((size_t)(c->np1 ? c->np1 : 1), sizeof *c->cnt)) ||
             !(c->last = spc_calloc((size_t)(c->np1 ? c->np1 : 1), sizeof *c->last))))
    s = SPC_NOMEM(e);
  if (!s) s = build_scount(C, &c->fc, e);
  if (!s) s = asm_prepare(&C->eng, c->fc, &c->ec, e);
  c->ok = 1;
  if (s) asm_counter_free(&c);
  *out = c;
  return s;
}

static bool same_types(const asm_counter *c, const spc_tensor *b) {
  if (b->order != c->proto->order || b->vt != c->proto->vt) return false;
  for (int d = 0; d < b->order; d++)
    if (b->dims[d] != c->proto->dims[d] ||
        spc_level_array_c(&b->lv[d], "crd")->type != spc_level_array_c(&c->proto->lv[d], "crd")->type)
      return false;
  return true;
}

static void block_crd(const spc_tensor *b, const void **crd) {
  for (int d = 0; d < b->order; d++) crd[d] = spc_level_array_c(&b->lv[d], "crd")->data;
}

spc_status asm_counter_count(asm_counter *c, const spc_tensor *b, spc_error *e) {
  if (c->ok != 1) return SPC_OK;
  if (!same_types(c, b)) {
    c->ok = 0;
    return SPC_OK;
  }
  const void *crd[SPC_MAX_ORDER];
  block_crd(b, crd);
  return asm_counter_count_raw(c, spc_tensor_nstored(b), crd, e);
}

spc_status asm_counter_count_raw(asm_counter *c, int64_t n, const void *const *crd, spc_error *e) {
  if (c->ok != 1) return SPC_OK;
  ir_arg a[SPC_MAX_ORDER + 10] = {{0}};
  int k = 0;
  for (; k < c->C.order; k++) a[k] = (ir_arg){.data = (void *)crd[k], .len = n};
  a[k++].s.i64 = n;
  for (int l = 0; l < 2; l++) a[k++].s.i64 = c->C.N[l], a[k++].s.i64 = c->C.lo[l];
  a[k++] = (ir_arg){.data = c->cnt, .len = c->np1};
  a[k++] = (ir_arg){.data = c->last, .len = c->np1};
  a[k].s.i64 = c->ok;
  spc_status s = asm_call(c->ec, c->fc, a, e);
  if (!s) c->ok = a[k].s.i64, c->counted += n;
  return s;
}

int asm_counter_ok(const asm_counter *c) { return (int)c->ok; }

spc_status asm_counter_begin_place(asm_counter *c, spc_error *e) {
  conv *C = &c->C;
  spc_free(c->last);
  c->last = NULL;
  C->n = c->counted;
  choose_types(C); /* the types the in-memory conversion picks */
  ir_func *fi = NULL;
  int p_arr0 = 0;
  spc_status s = build_sinit(C, &fi, &p_arr0, false, NULL, e);
  ir_arg *a = s ? NULL : spc_calloc((size_t)ir_nparams(fi), sizeof *a);
  if (!s && !a) s = SPC_NOMEM(e);
  if (!s) {
    int k = 0;
    a[k++] = (ir_arg){.data = c->cnt, .len = c->np1};
    for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
    a[k++].s.i64 = C->limit;
    s = asm_run(&C->eng, fi, a, e);
  }
  if (!s) {
    c->narr = C->lv[1]->lf->narrays;
    for (int k = 0; k < c->narr; k++) c->arr[k] = a[p_arr0 + k], a[p_arr0 + k].data = NULL;
    c->size = a[p_arr0 + c->narr].s.i64;
    if (C->vt != SPC_PATTERN) c->vout = a[p_arr0 + c->narr + 1], a[p_arr0 + c->narr + 1].data = NULL;
    spc_free(c->cnt); /* counted into the level's arrays */
    c->cnt = NULL;
    s = out_take_level(C, 1, c->arr, C->vt != SPC_PATTERN ? &c->vout : NULL, e);
  }
  spc_free(a);
  ir_func_free(&fi);
  if (!s) s = build_splace(C, &c->fp, false, e);
  if (!s) s = asm_prepare(&C->eng, c->fp, &c->ep, e);
  return s;
}

spc_status asm_counter_place(asm_counter *c, const spc_tensor *b, spc_error *e) {
  if (!same_types(c, b))
    return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                   "the source changed between the counting and the placing pass");
  const void *crd[SPC_MAX_ORDER];
  block_crd(b, crd);
  return asm_counter_place_raw(c, spc_tensor_nstored(b), crd, b->val, e);
}

spc_status asm_counter_place_raw(asm_counter *c, int64_t n, const void *const *crd,
                                 const void *vals, spc_error *e) {
  conv *C = &c->C;
  if (c->placed + n > c->counted)
    return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                   "the source changed between the counting and the placing pass");
  ir_arg a[SPC_MAX_ORDER + 10 + SPC_LEVEL_MAX_ARRAYS] = {{0}};
  int k = 0;
  for (; k < C->order; k++) a[k] = (ir_arg){.data = (void *)crd[k], .len = n};
  if (C->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = (void *)vals, .len = n};
  a[k++].s.i64 = n;
  for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
  a[k++].s.i64 = c->size;
  for (int x = 0; x < c->narr; x++) a[k++] = c->arr[x];
  if (C->vt != SPC_PATTERN) a[k++] = c->vout;
  spc_status s = asm_call(c->ep, c->fp, a, e);
  out_drop(C);
  if (!s) c->placed += n;
  return s;
}

spc_status asm_counter_finish(asm_counter *c, spc_tensor **out, spc_error *e) {
  conv *C = &c->C;
  *out = NULL;
  if (c->placed != c->counted)
    return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                   "the source changed between the counting and the placing pass "
                   "(%lld components counted, %lld placed)",
                   (long long)c->counted, (long long)c->placed);
  ir_func *ff = NULL;
  spc_status s = build_sfinal(C, &ff, e);
  if (!s) {
    ir_arg a[5 + SPC_LEVEL_MAX_ARRAYS] = {{0}};
    int k = 0;
    a[k++].s.i64 = c->np1;
    for (int l = 0; l < 2; l++) a[k++].s.i64 = C->N[l], a[k++].s.i64 = C->lo[l];
    for (int x = 0; x < c->narr; x++) a[k++] = c->arr[x];
    s = asm_run(&C->eng, ff, a, e);
    out_drop(C);
  }
  ir_func_free(&ff);
  if (!s) out_info(C, c->info);
  conv_tensor *ct = s ? NULL : new_result(C, c->proto->dims);
  if (!s && !ct) s = SPC_NOMEM(e);
  if (!s) {
    spc_tensor *t = &ct->t;
    adopt_arrays(C, ct, 1, c->arr, c->narr);
    if (C->vt != SPC_PATTERN) {
      t->val = c->vout.data;
      t->nval = c->vout.len;
      t->val_owned = true;
      c->vout.data = NULL;
    } else {
      t->nval = c->size;
    }
    /* the result owns the registry its spec lives in */
    ct->info.own = c->own;
    c->own = NULL;
    *out = t;
  }
  return s;
}

/* ---- the sparse workspace path -------------------------------------------------
 * The remapped components go through spw/ (Acc, sorted runs, spill to
 * files past the memory budget, k-way pack) instead of one sort of all of
 * them; the packed stream is sorted and combined, as order_components
 * leaves it.  only_bucket: the workspace's bucket flush or nothing
 * (SPC_NOT_HANDLED: the plan's sort follows). */
static spc_status workspace_components(conv *C, int64_t **lc, bool only_bucket, spc_error *e) {
  spw_opts wo = {.kind = C->o ? spw_kind_of(C->o->spw) : SPW_BUCKET, .acc = C->o ? C->o->acc : 0,
                 .mem = C->o ? C->o->mem : 0, .dup = C->dup};
  spw *w = NULL;
  spc_status s = spw_create(C->L, C->comb->vt, &wo, &w, e);
  size_t wv = spc_vtype_size(C->comb->vt);
  const int64_t *cols[SPC_MAX_ORDER];
  for (int l = 0; l < C->L; l++) cols[l] = lc[l];
  /* the remapping's arrays (lc) given to the workspace: the result is
   * written over them, no fresh pages */
  if (!s && only_bucket) {
    s = spw_bucket_pack(w, C->n, cols, wv ? C->comb->val : NULL, true, &C->n, C->lc, &C->vals, e);
    if (s == SPC_NOT_HANDLED) {
      spw_free(&w);
      return s;
    }
    for (int l = 0; l < C->L; l++) lc[l] = NULL; /* the workspace's */
  } else if (!s) {
    s = spw_push_pack(w, C->n, cols, wv ? C->comb->val : NULL, true, &C->n, C->lc, &C->vals, e);
    for (int l = 0; l < C->L; l++) lc[l] = NULL;
  }
  if (!s) eat_vals(C, NULL);
  if (!s && C->o && C->o->info) {
    spw_stats st;
    spw_get_stats(w, &st);
    C->bucket_threads = (int)st.bucket_threads;
    C->o->info->spw.flushes = st.flushes;
    C->o->info->spw.merges = st.merges;
    C->o->info->spw.spilled_runs = st.spilled_runs;
    C->o->info->spw.spilled_bytes = st.spilled_bytes;
    C->o->info->spw.peak_bytes = st.peak_bytes;
  }
  spw_free(&w);
  if (s && s != SPC_ERR_NOMEM && s != SPC_ERR_IO && e && strstr(e->msg, "--dup=error"))
    snprintf(e->msg + strlen(e->msg), sizeof e->msg - strlen(e->msg), " (format %s)", C->fmt->name);
  return s ? s : finish_components(C, e);
}

/* The plan's sort by the workspace's bucket flush (bench/README.md,
 * "Bucket then sort segments": 0.3-0.4x the packed sort's CPU time on
 * shuffled COO to CSR with duplicates): components out of order, enough
 * of them (2^16) that the packed sort is not cheap anyway, and short
 * segments under level 0 on average (at most 32 components a coordinate
 * of its extent: the packed sort matched it on 750). */
static bool bucket_plan(const conv *C, int64_t *const *lc) {
  if ((C->o && C->o->plan == SPC_PLAN_SORT) || C->n < ((int64_t)1 << 16) || C->L < 1 ||
      C->N[0] < 1 || C->n / C->N[0] > 32)
    return false;
  for (int64_t t = 1; t < C->n; t++) /* in order: the packed sort sees it in one pass */
    for (int l = 0; l < C->L; l++) {
      if (lc[l][t] != lc[l][t - 1]) {
        if (lc[l][t] < lc[l][t - 1]) return true;
        break;
      }
    }
  return false;
}

/* ---- the stream assembled level by level ----------------------------------------
 * The workspace's merged stream (sorted by the canonical coordinates,
 * combined) into a target the counting path does not place, never held
 * whole: where the remapping keeps the canonical order (level l is index l
 * for every index: coo, csf, dcsr, sky, dense, ...) the stream is already
 * in level order and duplicate-free, and each pass remaps it chunk by
 * chunk again; else (dia, dcsc, bcsr, morton, csf in another mode order)
 * one pass pushes the remapped chunks into a second workspace, in level
 * order, duplicates of the remapping combined by --dup, with the same
 * budget, and the passes stream that one.  Then L + 1 passes over the
 * stream, levels top first (build_lchunk's routines):
 *   pass 0      level 0's queries (and the count, the `fill: zero` check);
 *   pass k      level k-1 placed (yield_pos, insert_coord, the values at the
 *               last level) from its parents' positions, read back from a
 *               temporary file, its own positions written to the next, and
 *               fed straight to level k's queries;
 * with level k-1's init before pass k and its finalize after.  The per-
 * component "new prefix" flags are made chunk by chunk, the previous tuple
 * carried over.  Peak: the output, the workspace's budget, a chunk's
 * buffers and the level's query results (per parent or per coordinate,
 * as in memory); the positions of a level go to an unlinked file in
 * $TMPDIR (8 bytes a component, read once). */

#define LS_CHUNK ((int64_t)1 << 16)

typedef struct lstate {
  ir_arg q[SPC_SPEC_MAX * 8], arr[SPC_LEVEL_MAX_ARRAYS], work[SPC_SPEC_MAX], vout;
  int64_t np, size; /* parents (np_in); positions, once init ran */
  int64_t qlast;    /* the position placing left off at */
} lstate;

static void lstate_free(lstate *S) {
  for (size_t k = 0; k < sizeof S->q / sizeof S->q[0]; k++) spc_free(S->q[k].data);
  for (int k = 0; k < SPC_LEVEL_MAX_ARRAYS; k++) spc_free(S->arr[k].data);
  for (int k = 0; k < SPC_SPEC_MAX; k++) spc_free(S->work[k].data);
  spc_free(S->vout.data);
  memset(S, 0, sizeof *S);
}

/* One routine of level l on its state (OUT results kept in S). */
static spc_status lcall(const conv *C, const lchunk *R, int kind, lstate *S, int l,
                        const int64_t *pp, const bool *isnew, const int64_t *crd, int64_t n,
                        const void *vals, int64_t *qpos, spc_error *e) {
  ir_arg *a = spc_calloc((size_t)ir_nparams(R->f), sizeof *a);
  if (!a) return SPC_NOMEM(e);
  if (R->p_pp >= 0) {
    a[R->p_pp] = (ir_arg){.data = (void *)pp, .len = n};
    a[R->p_isnew] = (ir_arg){.data = (void *)isnew, .len = n};
    a[R->p_crd] = (ir_arg){.data = (void *)crd, .len = n};
    a[R->p_n].s.i64 = n;
  }
  a[R->p_np].s.i64 = S->np;
  a[R->p_N].s.i64 = C->N[l];
  a[R->p_lo].s.i64 = C->lo[l];
  if (R->p_limit >= 0) a[R->p_limit].s.i64 = C->limit;
  if (R->p_vals >= 0) a[R->p_vals] = (ir_arg){.data = (void *)vals, .len = n};
  for (int k = 0; k < R->nq; k++) a[R->p_q0 + k] = S->q[k];
  for (int k = 0; R->p_arr0 >= 0 && k < R->narr; k++) a[R->p_arr0 + k] = S->arr[k];
  for (int k = 0; R->p_work0 >= 0 && k < R->nwork; k++) a[R->p_work0 + k] = S->work[k];
  if (R->p_qpos >= 0) a[R->p_qpos] = (ir_arg){.data = qpos, .len = n};
  if (R->p_vout >= 0) a[R->p_vout] = S->vout;
  if (R->p_qlast >= 0) a[R->p_qlast].s.i64 = S->qlast;
  spc_status s = asm_call(R->fn, R->f, a, e);
  if (!s && R->p_qlast >= 0) S->qlast = a[R->p_qlast].s.i64;
  /* OUT arrays: the caller's (NULL after a failure) */
  if (kind == LK_QALLOC)
    for (int k = 0; k < R->nq; k++) S->q[k] = a[R->p_q0 + k];
  if (kind == LK_INIT) {
    for (int k = 0; k < R->narr; k++) S->arr[k] = a[R->p_arr0 + k];
    for (int k = 0; k < R->nwork; k++) S->work[k] = a[R->p_work0 + k];
    if (R->p_vout >= 0) S->vout = a[R->p_vout];
    if (!s) S->size = a[R->p_size].s.i64;
  }
  spc_free(a);
  return s;
}

/* The stream in level order, replayable. */
typedef spc_status (*lsrc_fn)(void *ctx, int64_t n, int64_t *const *lc, const void *vals,
                              spc_error *e);
typedef struct lsrc {
  conv *C;
  spw *w2; /* the second workspace (level order); NULL: the first, remapped */
  const ir_func *rf;
  asm_entry rfn;
  lsrc_fn cb;
  void *ctx;
  /* the counters' state, carried from chunk to chunk (C->carry) */
  int64_t cmax[SPC_MAX_ORDER], *cnt[SPC_MAX_ORDER], cnt_len[SPC_MAX_ORDER];
  int64_t seen; /* components remapped */
} lsrc;

static spc_status lsrc_remap(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                             spc_error *e) {
  lsrc *S = ctx;
  conv *C = S->C;
  int np = ir_nparams(S->rf), p0 = C->order + 1;
  ir_arg *a = spc_calloc((size_t)np, sizeof *a);
  if (!a) return SPC_NOMEM(e);
  for (int k = 0; k < C->order; k++) a[k] = (ir_arg){.data = cols[k], .len = n};
  a[C->order].s.i64 = n;
  S->seen += n;
  int nc = C->r->ncounters, pc = p0 + C->L;
  for (int c = 0; c < nc; c++) {
    a[pc + c].s.i64 = S->cmax[c];
    a[pc + nc + c] = (ir_arg){.data = S->cnt[c], .len = S->cnt_len[c]};
  }
  spc_status s = asm_call(S->rfn, S->rf, a, e);
  for (int c = 0; c < nc && !s; c++) S->cmax[c] = a[pc + c].s.i64;
  int64_t *lc[SPC_MAX_ORDER];
  for (int l = 0; l < C->L; l++) lc[l] = a[p0 + l].data;
  if (!s) s = S->cb(S->ctx, n, lc, vals, e);
  for (int l = 0; l < C->L; l++) spc_free(lc[l]);
  spc_free(a);
  return s;
}

static spc_status lsrc_pass(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                            spc_error *e) {
  lsrc *S = ctx;
  return S->cb(S->ctx, n, cols, vals, e);
}

static spc_status lsrc_run(lsrc *S, lsrc_fn cb, void *ctx, spc_error *e) {
  S->cb = cb;
  S->ctx = ctx;
  return S->w2 ? spw_stream(S->w2, LS_CHUNK, lsrc_pass, S, e)
               : spw_stream(S->C->stream->w, LS_CHUNK, lsrc_remap, S, e);
}

static spc_status push_w2(void *ctx, int64_t n, int64_t *const *lc, const void *vals,
                          spc_error *e) {
  lsrc *S = ctx;
  return spw_push(S->w2, n, (const int64_t *const *)lc, vals, e);
}

/* An unlinked temporary file in $TMPDIR (or /tmp). */
static spc_status tmp_file(FILE **out, spc_error *e) {
  const char *d = getenv("TMPDIR");
  char path[600];
  snprintf(path, sizeof path, "%s/spconv-pos-XXXXXX", d && *d ? d : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0 || !(*out = fdopen(fd, "w+b"))) {
    if (fd >= 0) close(fd), unlink(path);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot create a temporary file: %s", strerror(errno));
  }
  unlink(path);
  return SPC_OK;
}

typedef struct lpass {
  conv *C;
  int k; /* this pass: level k-1 placed, level k queried */
  lchunk *place, *query;
  lstate *sp, *sq;
  FILE *pin, *pout;
  int64_t *ppbuf, *zeros, *qpos;
  bool *isnew[SPC_MAX_ORDER];
  void *ones; /* a pattern padded with zeros: its values are ones */
  int64_t prev[SPC_MAX_ORDER];
  bool have_prev, count_zeros;
  int64_t n, zero_vals;
} lpass;

static spc_status lpass_chunk(void *ctx, int64_t n, int64_t *const *lc, const void *vals,
                              spc_error *e) {
  lpass *P = ctx;
  conv *C = P->C;
  if (n > LS_CHUNK || n < 0)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "a stream chunk of %lld components",
                   (long long)n);
  if (!n) return SPC_OK;
  for (int l = 0; l < C->L; l++) { /* finish_components' flags, across chunks */
    bool uniq = C->lv[l]->unique, *nw = P->isnew[l];
    const bool *up = l > 0 ? P->isnew[l - 1] : NULL;
    const int64_t *x = lc[l];
    nw[0] = !P->have_prev || !uniq || (up && up[0]) || x[0] != P->prev[l];
    for (int64_t t = 1; t < n; t++) nw[t] = !uniq || (up && up[t]) || x[t] != x[t - 1];
    P->prev[l] = x[n - 1];
  }
  P->have_prev = true;
  size_t w = spc_vtype_size(C->comb->vt);
  for (int64_t t = 0; P->count_zeros && w && t < n; t++)
    P->zero_vals += spc_val_is_zero(C->comb->vt, (const char *)vals + t * (int64_t)w);
  P->n += n;
  spc_status s = SPC_OK;
  const int64_t *qp = P->zeros; /* level 0's parent: the root */
  if (P->place) {
    int l = P->k - 1;
    const int64_t *pp = P->zeros;
    if (P->pin) {
      if (fread(P->ppbuf, sizeof(int64_t), (size_t)n, P->pin) != (size_t)n)
        return spc_err(e, SPC_ERR_IO, NULL, 0, 0, "cannot read back the positions of level %d",
                       l);
      pp = P->ppbuf;
    }
    s = lcall(C, P->place, LK_PLACE, P->sp, l, pp, P->isnew[l], lc[l], n,
              P->ones ? P->ones : vals, P->qpos, e);
    out_drop(C);
    if (!s && P->pout && fwrite(P->qpos, sizeof(int64_t), (size_t)n, P->pout) != (size_t)n)
      s = spc_err(e, SPC_ERR_IO, NULL, 0, 0, "cannot write the positions of level %d: %s",
                  l + 1, strerror(errno));
    qp = P->qpos;
  }
  if (!s && P->query)
    s = lcall(C, P->query, LK_QUERY, P->sq, P->k, qp, P->isnew[P->k], lc[P->k], n, NULL, NULL, e);
  return s;
}

/* Whether the stream can be assembled level by level: the level
 * functions keep their state in arrays made by init, integer level
 * arrays (counters are carried from chunk to chunk: stream_source). */
static bool stream_applies(const conv *C) {
  if (C->L < 1) return false;
  for (int l = 0; l < C->L; l++) {
    const spc_level_spec *ls = C->lv[l]->lf;
    if (ls->narrays > SPC_LEVEL_MAX_ARRAYS || ls->nwork > SPC_SPEC_MAX) return false;
    for (int k = 0; k < ls->narrays; k++) {
      ir_ty ty = asm_tname_ty(ls->arrays[k].type, IR_I32, IR_I32);
      if (ty != IR_I32 && ty != IR_I64) return false;
    }
    lvbind b;
    asm_bind_init(&b, ls, C->lv[l], IR_I64, IR_I64);
    if (lfn_allocs(&b, SPC_LF_YIELD) || lfn_allocs(&b, SPC_LF_INSERT) ||
        lfn_allocs(&b, SPC_LF_FINALIZE))
      return false;
  }
  return true;
}

/* Level l holds canonical index l, for every index: the canonical order
 * is the level order. */
static bool keeps_order(const conv *C) {
  if (C->L < C->order) return false;
  for (int l = 0; l < C->order; l++)
    if (level_dim(C->r, l) != l) return false;
  return true;
}

static void free_lchunks(lchunk *R, int n) {
  for (int k = 0; k < n; k++) ir_func_free(&R[k].f);
}

static spc_status prep_lchunk(conv *C, int l, int kind, lchunk *R, spc_error *e) {
  spc_status s = build_lchunk(C, l, kind, R, e);
  return s ? s : asm_prepare(&C->eng, R->f, &R->fn, e);
}

/* Pass k (0 .. L) over the stream. */
static spc_status run_pass(conv *C, lsrc *S, lpass *P, int k, lchunk (*R)[5], lstate *st,
                           FILE **files, spc_error *e) {
  P->k = k;
  P->place = k > 0 ? &R[k - 1][LK_PLACE] : NULL;
  P->sp = k > 0 ? &st[k - 1] : NULL;
  P->query = k < C->L && R[k][LK_QUERY].f ? &R[k][LK_QUERY] : NULL;
  P->sq = k < C->L ? &st[k] : NULL;
  P->have_prev = false;
  P->n = 0;
  P->pin = k > 1 ? files[(k - 1) & 1] : NULL; /* level k-1's parents */
  P->pout = k > 0 && k < C->L ? files[k & 1] : NULL;
  if (P->pin && fflush(P->pin) == 0) rewind(P->pin);
  if (P->pout) rewind(P->pout);
  spc_status s = lsrc_run(S, lpass_chunk, P, e);
  if (!s && P->pout && fflush(P->pout))
    s = spc_err(e, SPC_ERR_IO, NULL, 0, 0, "cannot write the positions of level %d: %s", k,
                strerror(errno));
  return s;
}

/* Level l's routines (the queries' when it has any), made for the
 * current types. */
static spc_status level_routines(conv *C, int l, lchunk *R, spc_error *e) {
  spc_status s = SPC_OK;
  free_lchunks(R, 5);
  memset(R, 0, 5 * sizeof *R);
  for (int k = 0; k < 5 && !s; k++) {
    if ((k == LK_QALLOC || k == LK_QUERY) && !C->lv[l]->lf->nqueries) continue;
    s = prep_lchunk(C, l, k, &R[k], e);
  }
  return s;
}

/* Level extents [lo, lo+N) from the dimensions (and the counters'
 * maxima cmax, NULL: none). */
static spc_status level_bounds(conv *C, const int64_t *cmax, spc_error *e) {
  lang_ival iv[SPC_MAX_ORDER];
  spc_status s = spc_remap_bounds(C->r, C->comb->dims, cmax, iv, e);
  for (int l = 0; l < C->L && !s; l++) {
    int64_t ext;
    if (!iv[l].bounded || __builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) || ext == INT64_MAX) {
      char dm[200] = "";
      size_t m = 0;
      for (int d = 0; d < C->order && m < sizeof dm - 24; d++)
        m += (size_t)snprintf(dm + m, sizeof dm - m, "%s%lld", d ? " x " : "", (long long)C->comb->dims[d]);
      s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                  "cannot bound level coordinate '%s' of format %s for a %s tensor: its "
                  "range is unbounded or past 64-bit integers (too large for this format)",
                  C->r->out_names[l], C->fmt->name, dm);
    }
    else
      C->lo[l] = iv[l].lo, C->N[l] = ext + 1;
  }
  return s;
}

/* The stream in level order: the first workspace remapped (direct), or
 * its remapped components pushed into a second one (then the first is
 * freed: its runs and files given back). */
static spc_status stream_source(conv *C, lsrc *S, ir_func **rf, bool direct, spc_error *e) {
  C->carry = C->r->ncounters > 0;
  spc_status s = build_remap(C, rf, e);
  C->carry = false;
  for (int c = 0; c < C->r->ncounters && !s; c++) { /* zeroed once, for all chunks */
    int64_t len = counter_len(C, c);
    S->cnt_len[c] = len;
    if (!(S->cnt[c] = spc_calloc((size_t)len, sizeof(int64_t)))) s = SPC_NOMEM(e);
  }
  if (!s) s = asm_prepare(&C->eng, *rf, &S->rfn, e);
  S->rf = *rf;
  if (s || direct) return s;
  /* the second workspace's budget: what the first leaves of it (its runs
   * stay in memory while it streams), a quarter at least */
  int64_t mem = C->stream->mem;
  s = spw_settle(C->stream->w, e);
  if (!s && mem > 0) {
    int64_t left = mem - spw_mem_held(C->stream->w);
    mem = left > mem / 4 ? left : mem / 4;
  }
  spw_opts wo = {.kind = spw_kind_of(C->stream->spw), .acc = C->stream->acc, .mem = mem,
                 .dup = C->dup};
  if (!s) s = spw_create(C->L, C->comb->vt, &wo, &S->w2, e);
  S->cb = push_w2;
  S->ctx = S;
  if (!s) s = spw_stream(C->stream->w, LS_CHUNK, lsrc_remap, S, e);
  for (int c = 0; c < C->r->ncounters; c++) spc_free(S->cnt[c]), S->cnt[c] = NULL; /* counted */
  if (C->stream->stats) spw_get_stats(C->stream->w, C->stream->stats);
  spw_free(&C->stream->w);
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  if (s && s != SPC_ERR_NOMEM && s != SPC_ERR_IO && e && strstr(e->msg, "--dup=error"))
    snprintf(e->msg + strlen(e->msg), sizeof e->msg - strlen(e->msg), " (format %s)",
             C->fmt->name);
  return s;
}

/* The chunk buffers, the positions' files (ones: a pattern's values). */
static spc_status pass_buffers(conv *C, lpass *P, FILE **files, bool ones, spc_error *e) {
  for (int l = 0; l < C->L; l++)
    if (!(P->isnew[l] = spc_malloc_n(LS_CHUNK, sizeof(bool)))) return SPC_NOMEM(e);
  if (!(P->ppbuf = spc_malloc_n(LS_CHUNK, sizeof(int64_t))) ||
      !(P->qpos = spc_malloc_n(LS_CHUNK, sizeof(int64_t))) ||
      !(P->zeros = spc_calloc(LS_CHUNK, sizeof(int64_t))))
    return SPC_NOMEM(e);
  if (ones) {
    double *v = P->ones = spc_malloc_n(LS_CHUNK, sizeof *v);
    if (!v) return SPC_NOMEM(e);
    for (int64_t t = 0; t < LS_CHUNK; t++) v[t] = 1.0;
  }
  spc_status s = SPC_OK;
  for (int k = 0; k < 2 && !s && C->L > 1; k++) s = tmp_file(&files[k], e);
  return s;
}

static void pass_free(conv *C, lpass *P, FILE **files) {
  for (int l = 0; l < C->L; l++) spc_free(P->isnew[l]);
  for (int k = 0; k < 2; k++)
    if (files[k]) fclose(files[k]);
  spc_free(P->ppbuf);
  spc_free(P->qpos);
  spc_free(P->zeros);
  spc_free(P->ones);
}

/* Pass 0 (level 0's queries, the count, the fill check, the `requires`
 * conditions) where needed; level 0's routines made for the index types
 * the combined count gives, as in memory (the stream's length bounds it;
 * pass 0 again in the rare case the count changes them). */
static spc_status first_pass(conv *C, lsrc *S, lpass *P, lchunk (*R)[5], lstate *st,
                             FILE **files, bool *counted, int *npass, spc_error *e) {
  C->n = C->stream->nmax;
  choose_types(C);
  st[0].np = 1;
  bool pass0 = C->lv[0]->lf->nqueries > 0 || C->fmt->fill_zero || C->fmt->nrequires > 0;
  if (!pass0) { /* no count needed when no count changes the types */
    ir_ty it = C->index_ty, ct = C->coord_ty;
    C->n = 0;
    choose_types(C);
    pass0 = it != C->index_ty || ct != C->coord_ty;
    C->n = C->stream->nmax;
    choose_types(C);
  }
  *counted = pass0;
  spc_status s = SPC_OK;
  for (int round = 0; round < 2 && pass0 && !s; round++) {
    s = level_routines(C, 0, R[0], e);
    if (!s && R[0][LK_QALLOC].f) {
      lstate_free(&st[0]);
      st[0].np = 1;
      s = lcall(C, &R[0][LK_QALLOC], LK_QALLOC, &st[0], 0, NULL, NULL, NULL, 0, NULL, NULL, e);
    }
    P->count_zeros = C->fmt->fill_zero;
    P->zero_vals = 0;
    if (!s) s = run_pass(C, S, P, 0, R, st, files, e);
    (*npass)++;
    P->count_zeros = false;
    if (!s && P->zero_vals)
      s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                  "cannot hold the %lld explicit zeros of this tensor: format %s pads with zeros",
                  (long long)P->zero_vals, C->fmt->name);
    if (s) break;
    ir_ty it = C->index_ty, ct = C->coord_ty;
    C->n = P->n;
    choose_types(C);
    if (it == C->index_ty && ct == C->coord_ty) break;
  }
  if (!s && !pass0) s = level_routines(C, 0, R[0], e);
  return s;
}

/* Level l's arrays (and the values at the last level) into the result. */
static void take_level(conv *C, conv_tensor *ct, lstate *S, int l) {
  adopt_arrays(C, ct, l, S->arr, C->lv[l]->lf->narrays);
  if (l == C->L - 1 && C->vt != SPC_PATTERN) {
    ct->t.val = S->vout.data;
    ct->t.nval = S->vout.len;
    ct->t.val_owned = true;
    S->vout.data = NULL;
  } else if (l == C->L - 1) {
    ct->t.nval = S->size;
  }
}

/* Pass k >= 1: level k-1's init, level k's query arrays, the pass, level
 * k-1's finalize; its arrays go to the result. */
static spc_status level_pass(conv *C, lsrc *S, lpass *P, lchunk (*R)[5], lstate *st,
                             FILE **files, int k, bool counted, conv_tensor *ct, spc_error *e) {
  int l = k - 1;
  spc_status s = lcall(C, &R[l][LK_INIT], LK_INIT, &st[l], l, NULL, NULL, NULL, 0, NULL, NULL, e);
  if (!s) s = out_take_level(C, l, st[l].arr, R[l][LK_INIT].p_vout >= 0 ? &st[l].vout : NULL, e);
  if (!s && k < C->L) {
    st[k].np = st[l].size;
    s = level_routines(C, k, R[k], e);
    if (!s && R[k][LK_QALLOC].f)
      s = lcall(C, &R[k][LK_QALLOC], LK_QALLOC, &st[k], k, NULL, NULL, NULL, 0, NULL, NULL, e);
  }
  int64_t n0 = P->n;
  if (!s) s = run_pass(C, S, P, k, R, st, files, e);
  if (!s && counted && P->n != n0)
    s = spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "the stream gave %lld components, then %lld",
                (long long)n0, (long long)P->n);
  if (!s) s = lcall(C, &R[l][LK_FINAL], LK_FINAL, &st[l], l, NULL, NULL, NULL, 0, NULL, NULL, e);
  out_drop(C);
  if (!s) take_level(C, ct, &st[l], l);
  lstate_free(&st[l]);
  free_lchunks(R[l], 5);
  return s;
}

static spc_status stream_levels(conv *C, conv_tensor **ctp, spc_error *e) {
  /* counters: bounded by their maxima, known once the stream is remapped
   * into the second workspace (counted once: never direct) */
  bool counters = C->r->ncounters > 0;
  spc_status s = counters ? SPC_OK : level_bounds(C, NULL, e);
  if (s) return s;
  ir_func *rf = NULL;
  lsrc S = {.C = C};
  lchunk R[SPC_MAX_ORDER][5];
  lstate st[SPC_MAX_ORDER];
  memset(R, 0, sizeof R);
  memset(st, 0, sizeof st);
  lpass P = {.C = C};
  FILE *files[2] = {NULL, NULL};
  conv_tensor *ct = NULL;
  bool direct = keeps_order(C) && !counters, counted = false;
  int npass = 0;
  C->vt = C->comb->vt;
  bool ones = C->fmt->fill_zero && C->vt == SPC_PATTERN; /* padding needs values */
  if (ones) C->vt = SPC_F64;
  C->om_budget = C->stream->mem;
  s = stream_source(C, &S, &rf, direct, e);
  /* no components: a counter has no value, its level no extent (as the
   * in-memory paths have it: ELL of an empty product, slots [0, -1]) */
  for (int c = 0; c < C->r->ncounters && !S.seen; c++) S.cmax[c] = -1;
  if (!s && counters) s = level_bounds(C, S.cmax, e);
  if (!s) s = pass_buffers(C, &P, files, ones, e);
  if (!s) s = first_pass(C, &S, &P, R, st, files, &counted, &npass, e);
  if (!s && !(ct = new_result(C, C->comb->dims))) s = SPC_NOMEM(e);
  for (int k = 1; k <= C->L && !s; k++, npass++, counted = true)
    s = level_pass(C, &S, &P, R, st, files, k, counted, ct, e);
  if (!s && C->o && C->o->info) {
    snprintf(C->o->info->plan, sizeof C->o->info->plan, "level by level (%d passes%s)", npass,
             direct ? "" : "; level order by a second workspace");
    out_info(C, C->o->info);
  }
  if (S.w2 && C->stream->stats) { /* both workspaces' work */
    spw_stats b;
    spw_get_stats(S.w2, &b);
    spw_stats *a = C->stream->stats;
    a->flushes += b.flushes;
    a->merges += b.merges;
    a->spilled_runs += b.spilled_runs;
    a->spilled_bytes += b.spilled_bytes;
    if (b.peak_bytes > a->peak_bytes) a->peak_bytes = b.peak_bytes;
  }
  if (!S.w2 && C->stream->w && C->stream->stats) spw_get_stats(C->stream->w, C->stream->stats);
  spw_free(&S.w2);
  spw_free(&C->stream->w);
  for (int c = 0; c < C->r->ncounters; c++) spc_free(S.cnt[c]);
  for (int l = 0; l < C->L; l++) {
    lstate_free(&st[l]);
    free_lchunks(R[l], 5);
  }
  pass_free(C, &P, files);
  ir_func_free(&rf);
  if (s) {
    spc_tensor *t = ct ? &ct->t : NULL;
    spc_tensor_free(&t);
    ct = NULL;
  }
  *ctp = ct;
  return s;
}

/* ---- the entry point ------------------------------------------------------ */

typedef struct remap_ctx {
  conv *C;
  const ir_func *f;
  asm_entry fn;
  int np;
  int64_t off, cap;
  int64_t *lc[SPC_MAX_ORDER];
  char *vals;
} remap_ctx;

/* One chunk of the stream through the remapping, appended to the level
 * coordinates (and its values to the values). */
static spc_status remap_chunk(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                              spc_error *e) {
  remap_ctx *R = ctx;
  conv *C = R->C;
  if (n > R->cap - R->off)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0,
                   "the workspace streamed more than the %lld components pushed",
                   (long long)R->cap);
  ir_arg *a = spc_calloc((size_t)R->np, sizeof *a);
  if (!a) return SPC_NOMEM(e);
  for (int k = 0; k < C->order; k++) a[k] = (ir_arg){.data = cols[k], .len = n};
  a[C->order].s.i64 = n;
  spc_status s = asm_call(R->fn, R->f, a, e);
  int p0 = C->order + 1;
  for (int l = 0; l < C->L; l++) {
    if (!s && n) memcpy(R->lc[l] + R->off, a[p0 + l].data, (size_t)n * sizeof(int64_t));
    spc_free(a[p0 + l].data);
  }
  spc_free(a);
  size_t w = spc_vtype_size(C->comb->vt);
  if (!s && w && n) memcpy(R->vals + (size_t)R->off * w, vals, (size_t)n * w);
  if (!s) R->off += n;
  return s;
}

/* The remapping over the workspace's stream, chunk by chunk: the level
 * coordinates and values of every component into args' lc arrays and the
 * shell's values (owned, eaten later), C->n set; the stream's own columns
 * are never held whole. */
static spc_status remap_stream(conv *C, const rcr *rr, ir_arg *args, spc_error *e) {
  const ir_func *f = rr->v.f;
  remap_ctx R = {.C = C, .f = f, .np = ir_nparams(f),
                 .cap = C->stream->nmax > 0 ? C->stream->nmax : 1};
  size_t w = spc_vtype_size(C->comb->vt);
  int p0 = C->order + 1;
  spc_status s = rc_prepare(C, rr, &R.fn, e);
  for (int l = 0; l < C->L && !s; l++) /* pages touched as filled */
    if (!(R.lc[l] = args[p0 + l].data = spc_malloc_n(R.cap, sizeof(int64_t)))) s = SPC_NOMEM(e);
  if (!s && w && !(R.vals = spc_malloc_n(R.cap, w))) s = SPC_NOMEM(e);
  if (!s) s = spw_stream(C->stream->w, (int64_t)1 << 16, remap_chunk, &R, e);
  /* streamed: the workspace's runs and Acc give their memory back before
   * the sort and the assembly.  Runs below glibc's mmap threshold (up to
   * 32 MiB) live in the heap, under what this conversion allocated since
   * (its routines): free() cannot trim them, malloc_trim returns the free
   * pages (41 MB of peak RSS on 28 M components, bench/README.md) */
  if (C->stream->stats) spw_get_stats(C->stream->w, C->stream->stats);
  spw_free(&C->stream->w);
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  if (!s && R.off < R.cap) { /* fewer after combining: the tails given back */
    for (int l = 0; l < C->L; l++) {
      void *p = spc_realloc(R.lc[l], (size_t)(R.off ? R.off : 1) * sizeof(int64_t));
      if (p) args[p0 + l].data = R.lc[l] = p;
    }
    void *v = w ? spc_realloc(R.vals, (size_t)(R.off ? R.off : 1) * w) : NULL;
    if (v) R.vals = v;
  }
  for (int l = 0; l < C->L; l++) args[p0 + l].len = R.off;
  spc_tensor *t = C->eat;
  if (t->val_owned) spc_free(t->val);
  t->val = R.vals;
  t->nval = R.off;
  t->val_owned = R.vals != NULL;
  C->n = R.off;
  return s;
}

static spc_status remap_and_bounds(conv *C, spc_error *e) {
  ir_arg *args = NULL;
  rcr rr;
  spc_status s = rc_get(C, NULL, RC_REMAP, 0, &rr, e);
  ir_func *f = rr.v.f;
  int np = f ? ir_nparams(f) : 0;
  if (!s && !(args = spc_calloc((size_t)np, sizeof *args))) s = SPC_NOMEM(e);
  if (!s && C->stream) {
    s = remap_stream(C, &rr, args, e);
  } else if (!s) {
    for (int k = 0; k < C->order; k++) {
      const spc_array *a = spc_level_array_c(&C->comb->lv[k], "crd");
      args[k] = (ir_arg){.data = a->data, .len = C->n};
    }
    args[C->order].s.i64 = C->n;
    for (int c = 0; c < C->r->ncounters; c++)
      args[C->order + 1 + C->L + C->r->ncounters + c].s.i64 = counter_len(C, c);
    s = rc_run(C, &rr, args, e);
  }
  if (!s) eat_crd(C); /* remapped: the source coordinates are read */
  if (!s) {
    int64_t *lc[SPC_MAX_ORDER], cmax[SPC_MAX_ORDER];
    int p0 = C->order + 1;
    for (int l = 0; l < C->L; l++) lc[l] = args[p0 + l].data;
    for (int c = 0; c < C->r->ncounters; c++) /* no components: no value (an empty level) */
      cmax[c] = C->n ? args[p0 + C->L + c].s.i64 : -1;
    s = level_bounds(C, cmax, e);
    bool done = false;
    if (!s && C->nosort) {
      s = workspace_components(C, lc, false, e);
    } else if (!s) {
      s = inorder_components(C, lc, &done, e);
      if (!s && !done && bucket_plan(C, lc)) {
        s = workspace_components(C, lc, true, e);
        C->bucketed = !s;
        done = s != SPC_NOT_HANDLED;
        if (!done) s = SPC_OK;
      }
      if (!done && !s && !(s = pack_components(C, lc, &done, e)) && !done) s = sort_components(C, lc, e);
    }
    for (int l = 0; l < C->L; l++) { /* C->lc took the remapping's arrays */
      args[p0 + l].data = lc[l]; /* pack_components may have made them again */
      if (C->lc[l] == lc[l]) args[p0 + l].data = NULL;
    }
  }
  for (int k = C->order + 1; args && k < np; k++)
    if (ir_var_get(f, ir_param_var(f, k))->array) spc_free(args[k].data);
  spc_free(args);
  ir_func_free(&f);
  return s;
}

/* The conversion; measuring (bytes != NULL), the sizes only: the sort
 * path's levels run their queries and init, the last level places
 * nothing (build_level), no array is kept and *bytes receives what the
 * result would hold. */
/* Whether the counters of r see x's components as they would see them
 * combined (sorted, no coordinate twice): x is combined already, or every
 * counter counts over one dimension and each of its groups comes in
 * increasing coordinates (a column-ordered COO into ELL, an ELL's read-out
 * in slot order): the counts are the sorted input's, so the result is the
 * same bit for bit with no sort. */
static bool counters_see_sorted(const spc_remap *r, const spc_tensor *x) {
  if (spc_coo_is_combined(x)) return true;
  for (int c = 0; c < r->ncounters; c++)
    if (r->counters[c].n != 1 || !spc_coo_groups_increasing(x, r->counters[c].idx[0])) return false;
  return r->ncounters > 0;
}

static spc_status convert_run_1(const spc_tensor *src, spc_tensor *eat, asm_stream *stream,
                              const spc_specs *specs,
                              const spc_format_spec *fmt,
                              const spc_remap_param *params, int nparams,
                              spc_dup dup, const spc_convert_opts *o,
                              spc_tensor **out, int64_t *bytes, spc_error *e) {
  conv C = {.fmt = fmt, .specs = specs, .dup = dup, .measure = bytes != NULL};
  spc_tensor *exp = NULL;
  conv_tensor *ct = NULL;
  *out = NULL;
  if (!src || !fmt || (nparams && !params))
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "invalid arguments");
  C.limit = o && o->max_positions > 0 ? o->max_positions : default_limit();
  asm_engine_init(&C.eng, o);
  C.o = o;
  C.nosort = !C.measure && o && (o->spw != SPC_SPW_NONE || o->mem > 0);
  spc_status s = SPC_OK;
  bool plain = src->sym == SPC_GENERAL && !src->ext && src->nlevels == src->order &&
               src->order > 0 && src->lv[0].fmt == &spc_level_compressed;
  for (int l = 0; plain && l < src->nlevels; l++)
    plain = src->lv[l].dim == l && (l == 0 || src->lv[l].fmt == &spc_level_singleton) &&
            spc_level_array_c(&src->lv[l], "crd") != NULL;
  bool counters = fmt->remap.text && strchr(fmt->remap.text, '#') != NULL;
  /* a stream is remapped chunk by chunk: a plain shell, the sort path (a
   * counter only level by level, its count carried across the chunks) */
  if (stream && (!plain || C.measure || C.nosort || !eat || eat != src))
    return SPC_NOT_HANDLED;
  C.stream = stream;
  C.order = src->order;
  if (fmt->order && fmt->order != C.order) {
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                "cannot hold a tensor of order %d: format %s holds order %d",
                C.order, fmt->name, fmt->order);
    goto done;
  }
  if ((s = set_params(&C, params, nparams, e))) goto done;
  if (o && o->nmodes > 0 && o->nmodes <= SPC_MAX_ORDER) {
    C.nmodes = o->nmodes;
    memcpy(C.modes, o->modes, sizeof C.modes);
  }
  s = asm_remap(fmt, C.order, C.ps, C.nparams, C.modes, C.nmodes, C.remap_text,
                sizeof C.remap_text, &C.r, e);
  /* a result that could not be read back (its remapping not invertible
   * by the reader: `R - 1 - i`, `i ^ 1`) is refused before any work, not
   * written to a file no command can open; measured (`sizes`) too: a
   * size for a result no conversion makes would mislead */
  if (!s) s = asm_remap_invertible(fmt, C.r, C.ps, C.nparams, e);
  if (s) goto done;
  C.L = C.r->order_out;
  for (int l = 0; l < C.L; l++)
    C.lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
  if (!fmt->order && C.L < fmt->nlevels - 1) /* fewer levels than listed */
    for (int l = 0; l < C.L; l++) C.lv[l] = &fmt->lv[l];
  bool done_count = false;
  /* a converted source in the target's order: counted and placed by one
   * routine reading it through its own levels (no COO read out); a native
   * CSR or CSC too, seen as the built-in format */
  if (!C.measure && !plain && !C.nosort) {
    bool fu = fusable(src); /* asked once: its levels' bindings are not free */
    spc_tensor *view = fu ? NULL : native_view(src);
    const spc_tensor *fsrc = view ? view : src;
    if (fu || (view && fusable(view))) {
      C.comb = fsrc;
      C.n = spc_tensor_nstored(fsrc);
      if (!counters) s = run_count(&C, fsrc, &ct, &done_count, e);
      if (!s && !done_count) s = run_direct(&C, fsrc, &ct, &done_count, e);
      C.comb = NULL;
    }
    spc_tensor_free(&view);
    if (s || done_count) goto done;
  }
  /* the components: a plain COO (levels in dimension order) is used as
   * it is; anything else is read out (symmetric storage expanded, a
   * converted tensor read back through its level functions).  Duplicates
   * are combined after the remapping, in the target's order (stable, so
   * first/last keep the source order) -- except for remappings with a
   * counter, whose count must see each entry once: combined first. */
  if (!plain && !counters && (s = run_symfile(&C, src, &ct, &done_count, e))) goto done;
  if (done_count) goto done;
  if (o && o->plan == PLAN_TRIANGLE_ONLY) { /* convert_run's intermediate: that plan or none */
    s = SPC_NOT_HANDLED;
    goto done;
  }
  if (plain && (!counters || stream)) { /* a stream arrives combined */
    C.comb = src;
  } else {
    /* a dense layout's zeros are its padding, not components: dropped, as
     * a spec's dense format reads back and as SciPy reads an array file
     * (the layout holds both triangles of a symmetric matrix already) */
    if (spc_native_dense(src)) s = spc_tensor_to_coo(src, 1, &exp, e);
    else if (!plain || src->sym != SPC_GENERAL) s = spc_tensor_expand(src, &exp, e);
    if (!s && counters && counters_see_sorted(C.r, exp ? exp : src)) { /* nothing to combine */
      C.own_comb = exp;
    } else if (!s && counters) {
      s = spc_tensor_combine(exp ? exp : src, dup, &C.own_comb, e);
      spc_tensor_free(&exp);
    } else if (!s) {
      C.own_comb = exp;
    }
    C.comb = C.own_comb ? C.own_comb : src;
    if (s) goto done;
  }
  C.n = spc_tensor_nstored(C.comb);
  if (!C.measure && !C.stream && (s = run_count(&C, NULL, &ct, &done_count, e))) goto done;
  if (!done_count && !C.measure && !C.stream && (s = run_direct(&C, NULL, &ct, &done_count, e)))
    goto done;
  if (!done_count && !C.measure && !C.stream && (s = run_chain(&C, &ct, &done_count, e))) goto done;
  if (done_count) goto done;
  /* the components' arrays freed as they are consumed where they are the
   * conversion's own (expanded, combined) or handed over */
  C.eat = C.own_comb ? C.own_comb : C.comb == src ? eat : NULL;
  if (C.stream && counters && !stream_applies(&C)) { /* packed and handed over */
    s = SPC_NOT_HANDLED;
    goto done;
  }
  if (C.stream && stream_applies(&C)) { /* never held whole: level by level */
    s = stream_levels(&C, &ct, e);
    goto done;
  }
  if ((s = remap_and_bounds(&C, e))) goto done;
  if (o && o->info) {
    char bt[32] = "";
    if (C.bucketed && C.bucket_threads > 1) snprintf(bt, sizeof bt, "; %d threads", C.bucket_threads);
    snprintf(o->info->plan, sizeof o->info->plan, "%s%s%s",
             C.nosort     ? "sparse workspace"
             : C.inorder  ? "in order (the level coordinates in the target's order, no two "
                            "equal: no sort)"
             : C.bucketed ? "sort (by buckets of the top level, each sorted: the workspace's "
                            "bucket flush"
                          : "sort (stable, by the level coordinates)",
             bt, C.bucketed ? ")" : "");
  }
  choose_types(&C);
  if (!(ct = new_result(&C, C.comb->dims))) { s = SPC_NOMEM(e); goto done; }
  bool chained = false;
  int cth = 1;
  if (!C.measure && !C.nosort && !(s = run_chain_lc(&C, &ct, &chained, &cth, e)) && chained && o &&
      o->info && strncmp(o->info->plan, "sort", 4) == 0) {
    size_t m = strlen(o->info->plan);
    if (cth > 1)
      snprintf(o->info->plan + m, sizeof o->info->plan - m, "; placed in chunks on %d threads", cth);
    else
      snprintf(o->info->plan + m, sizeof o->info->plan - m, "; placed by one routine");
  }
  if (!s && !chained) s = run_levels(&C, ct, e);
done:
  if (s || C.measure) {
    spc_tensor *t = ct ? &ct->t : NULL;
    spc_tensor_free(&t);
    if (!s) *bytes = C.bytes;
  } else {
    *out = &ct->t;
  }
  for (int l = 0; l < SPC_MAX_ORDER; l++) {
    spc_free(C.lc[l]);
    spc_free(C.isnew[l]);
  }
  if (!C.vals_lent) spc_free(C.vals);
  spc_remap_free(&C.r);
  spc_tensor_free(&C.own_comb);
  return s;
}

/* A symmetric (skew, hermitian) file into a target other than CSR and
 * CSC: its stored triangle placed into a CSR by the triangle plan (no
 * expanded copy, no sort: run_symfile), then that CSR, a converted source
 * in row order, converted on -- instead of the expansion's COO of every
 * entry sorted into the target's order.  The same components either way
 * (the triangle plan's arrays are the expansion's bit for bit, and it
 * leaves a triangle with repeats to the others); SPC_NOT_HANDLED where it
 * does not apply (the plan forced, a budget, the triangle plan declining)
 * and the usual path runs. */
static spc_status via_triangle(const spc_tensor *src, spc_tensor *eat, const spc_specs *specs,
                               const spc_format_spec *fmt, const spc_remap_param *params,
                               int nparams, spc_dup dup, const spc_convert_opts *o,
                               spc_tensor **out, spc_error *e) {
  if (src->sym == SPC_GENERAL || src->order != 2 || src->ext || !fmt || !specs ||
      (o && (o->plan != SPC_PLAN_AUTO || o->spw != SPC_SPW_NONE || o->mem > 0 || o->nmodes > 0)))
    return SPC_NOT_HANDLED;
  const spc_format_spec *csr = spc_specs_format(specs, "csr");
  const spc_format_spec *csc = spc_specs_format(specs, "csc");
  if (!csr || fmt == csr || fmt == csc || !strcmp(fmt->name, "csr") || !strcmp(fmt->name, "csc"))
    return SPC_NOT_HANDLED; /* those take the triangle plan themselves */
  spc_convert_opts o2;
  if (o) o2 = *o;
  else spc_convert_opts_init(&o2);
  spc_convert_info info2;
  memset(&info2, 0, sizeof info2);
  o2.plan = PLAN_TRIANGLE_ONLY;
  o2.info = o && o->info ? &info2 : NULL;
  spc_tensor *mid = NULL;
  spc_status s = convert_run_1(src, NULL, NULL, specs, csr, NULL, 0, dup, &o2, &mid, NULL, e);
  if (s) return s; /* SPC_NOT_HANDLED included: the usual path */
  mid->boolean = spc_tensor_boolean(src) && mid->vt == SPC_I64;
  for (int l = 0; eat && l < eat->nlevels; l++) /* the source the caller hands over: done with */
    for (int k = 0; k < eat->lv[l].narr; k++) {
      spc_array *a = &eat->lv[l].arr[k];
      if (a->owned) spc_free(a->data);
      a->data = NULL;
      a->len = 0;
      a->owned = false;
    }
  if (eat && eat->val_owned) spc_free(eat->val);
  if (eat) eat->val = NULL, eat->val_owned = false;
  s = convert_run_1(mid, mid, NULL, specs, fmt, params, nparams, dup, o, out, NULL, e);
  spc_tensor_free(&mid);
  if (!s && o && o->info) {
    char p[sizeof o->info->plan];
    snprintf(p, sizeof p, "%s", o->info->plan);
    snprintf(o->info->plan, sizeof o->info->plan,
             "%.180s; from a CSR of the symmetric triangle (no expanded copy, no sort)", p);
  }
  return s;
}

/* Booleans summed combine by OR, which on 0 / 1 is the maximum; the
 * result's values stay booleans (spc_tensor_boolean). */
static spc_status convert_run(const spc_tensor *src, spc_tensor *eat, asm_stream *stream,
                              const spc_specs *specs, const spc_format_spec *fmt,
                              const spc_remap_param *params, int nparams, spc_dup dup,
                              const spc_convert_opts *o, spc_tensor **out, int64_t *bytes,
                              spc_error *e) {
  bool boolean = src && spc_tensor_boolean(src);
  if (boolean && dup == SPC_DUP_SUM) dup = SPC_DUP_MAX;
  spc_status s = SPC_NOT_HANDLED;
  if (src && !stream && !bytes)
    s = via_triangle(src, eat, specs, fmt, params, nparams, dup, o, out, e);
  if (s == SPC_NOT_HANDLED)
    s = convert_run_1(src, eat, stream, specs, fmt, params, nparams, dup, o, out, bytes, e);
  if (!s && *out) (*out)->boolean = boolean && (*out)->vt == SPC_I64;
  return s;
}

spc_status spc_convert_ex(const spc_tensor *src, const spc_specs *specs,
                          const spc_format_spec *fmt,
                          const spc_remap_param *params, int nparams,
                          spc_dup dup, const spc_convert_opts *o,
                          spc_tensor **out, spc_error *e) {
  return convert_run(src, NULL, NULL, specs, fmt, params, nparams, dup, o, out, NULL, e);
}

spc_status asm_convert_eat(spc_tensor *src, const spc_specs *specs, const spc_format_spec *fmt,
                           const spc_remap_param *params, int nparams, spc_dup dup,
                           const spc_convert_opts *o, spc_tensor **out, spc_error *e) {
  return convert_run(src, src, NULL, specs, fmt, params, nparams, dup, o, out, NULL, e);
}

spc_status asm_convert_stream(spc_tensor *shell, asm_stream *S, const spc_specs *specs,
                              const spc_format_spec *fmt, const spc_remap_param *params,
                              int nparams, spc_dup dup, const spc_convert_opts *o,
                              spc_tensor **out, spc_error *e) {
  return convert_run(shell, shell, S, specs, fmt, params, nparams, dup, o, out, NULL, e);
}

spc_status asm_convert_size(const spc_tensor *src, const spc_specs *specs,
                            const spc_format_spec *fmt, const spc_remap_param *params,
                            int nparams, spc_dup dup, const spc_convert_opts *o,
                            int64_t *bytes, spc_error *e) {
  spc_tensor *none = NULL;
  *bytes = 0;
  return convert_run(src, NULL, NULL, specs, fmt, params, nparams, dup, o, &none, bytes, e);
}

spc_status spc_convert(const spc_tensor *src, const spc_specs *specs,
                       const spc_format_spec *fmt,
                       const spc_remap_param *params, int nparams, spc_dup dup,
                       spc_tensor **out, spc_error *e) {
  return spc_convert_ex(src, specs, fmt, params, nparams, dup, NULL, out, e);
}

/* Only pointer arithmetic on t: a plain spc_tensor is never read past. */
bool spc_is_converted(const spc_tensor *t) {
  return t && t->ext == &asm_conv_ext;
}

/* ---- the routines alone, for the factory ---------------------------------------
 * The remapping and level routines a conversion to fmt runs, built for the
 * given types without data (extents, offsets and limits are arguments of
 * the routines, so the code does not depend on them).  cb receives each
 * routine and frees nothing: the caller of cb may keep it until the next
 * call. */
spc_status asm_write_routines(const spc_specs *specs, const spc_format_spec *fmt,
                              int order, ir_ty src_ty, ir_ty index_ty,
                              ir_ty coord_ty, spc_vtype vt,
                              const spc_remap_param *params, int nparams,
                              unsigned what, asm_routine_cb cb, void *ctx,
                              spc_error *e) {
  conv C = {.fmt = fmt, .specs = specs, .dup = SPC_DUP_SUM, .order = order,
            .nosort = (what & ASM_W_NOSORT) != 0};
  int64_t ones[SPC_MAX_ORDER];
  for (int d = 0; d < order; d++) ones[d] = 1;
  C.limit = default_limit();
  spc_status s = spc_coo_alloc(order, ones, 0, vt, &C.own_comb, e);
  if (s) return s;
  C.comb = C.own_comb;
  for (int d = 0; d < order; d++)
    spc_level_array(&C.own_comb->lv[d], "crd")->type = src_ty == IR_I32 ? SPC_IDX32 : SPC_IDX64;
  C.vt = vt;
  C.index_ty = index_ty;
  C.coord_ty = coord_ty;
  if (!(s = set_params(&C, params, nparams, e)))
    s = fmt->remap.text ? spc_remap_parse(&fmt->remap.at, order, C.ps, C.nparams, &C.r, e)
                        : spc_remap_identity(order, &C.r, e);
  if (!s) {
    C.L = C.r->order_out;
    for (int l = 0; l < C.L; l++)
      C.lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
    if (!fmt->order && C.L < fmt->nlevels - 1)
      for (int l = 0; l < C.L; l++) C.lv[l] = &fmt->lv[l];
  }
  ir_func *f = NULL;
  if (!s && !(s = build_remap(&C, &f, e))) s = cb(ctx, f, e);
  ir_func_free(&f);
  if (!s && (what & ASM_W_STREAM) && C.r->ncounters && stream_applies(&C)) {
    C.carry = true; /* the stream's: counters carried from chunk to chunk */
    if (!(s = build_remap(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    C.carry = false;
  }
  if (!s && (what & ASM_W_COUNT) && count_applies(&C)) { /* the counting path's */
    countfn F = {.cnt32 = cnt32_of(&C)};
    spc_error e2;
    spc_error_clear(&e2);
    spc_status q = build_count(&C, &F, &e2);
    if (!q) s = cb(ctx, F.f, e);
    else if (q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
    ir_func_free(&F.f);
    if (!q && !s) { /* taking the rows bucketing's sorted copy (give_plan) */
      countfn G = {.cnt32 = cnt32_of(&C), .give = true};
      if (!(s = build_count(&C, &G, e))) s = cb(ctx, G.f, e);
      ir_func_free(&G.f);
    }
    if (!q && !s && !(s = build_bucket(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    for (int w = 0; w < 3; w++) { /* the rows' count, scatter and sort */
      if (!q && !s && !(s = build_rbucket(&C, w, &f, e))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    /* on several threads */
    if (!q && !s && !(s = build_pcount(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    /* the streamed routines (a file read twice) */
    int p0;
    if (!q && !s && !(s = build_scount(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    for (int z = 0; z < 2; z++) { /* zeroed (streamed) and not (place_chunks) */
      if (!q && !s && !(s = build_sinit(&C, &f, &p0, z == 1, NULL, e))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    if (!q && !s && !(s = build_splace(&C, &f, false, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    if (!q && !s) { /* by runs, where the child level has yield_run */
      spc_error e3;
      spc_error_clear(&e3);
      spc_status q3 = build_splace(&C, &f, true, &e3);
      if (!q3) s = cb(ctx, f, e);
      else if (q3 != SPC_ERR_UNSUPPORTED) s = q3, *e = e3;
      ir_func_free(&f);
    }
    if (!q && !s && !(s = build_sfinal(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    /* a COO in order copied in place (copy_runs) */
    int gd = -1, gk1 = -1;
    if (!q && !s) s = give_plan(&C, &gd, &gk1, e);
    if (!q && !s && gd >= 0 && !(s = build_runs(&C, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    /* the in-place placement of a COO in the other order (run_inplace) */
    int gk = -1, kc;
    if (!q && !s) s = ip_plan(&C, &gk, &kc, e);
    for (int m = 0; m < 2 && gk >= 0 && !q && !s; m++) {
      if (!(s = build_cbpack(&C, m, gk, &f, e))) s = cb(ctx, f, e);
      ir_func_free(&f);
      if (!s && !(s = build_bplace(&C, m, gk, &f, e))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
  }
  dplan P = {0};
  spc_vtype vt_keep = C.vt;
  if (vt == SPC_PATTERN) C.vt = SPC_F64; /* the direct plan pads with ones */
  if (!s && (what & ASM_W_COUNT) && direct_applies(&C, &P)) { /* the direct plan's */
    int p_ok, p_arr0;
    spc_error e2;
    spc_error_clear(&e2);
    spc_status q = build_direct(&C, NULL, &P, &f, &p_ok, &p_arr0, &e2);
    if (!q) s = cb(ctx, f, e);
    else if (q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
    ir_func_free(&f);
    if (!q && !s && C.r->ncounters && !(s = build_cmax(&C, NULL, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    if (!q && !s && P.k >= 0 && !(s = build_dbucket(&C, &P, &f, e))) s = cb(ctx, f, e);
    ir_func_free(&f);
    for (int ph = 1; ph <= 4 && P.can_cphase && !q && !s; ph++) { /* in chunks on threads */
      P.phase = ph;
      if (!(q = build_direct(&C, NULL, &P, &f, &p_ok, &p_arr0, &e2))) s = cb(ctx, f, e);
      else if (q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
      ir_func_free(&f);
    }
    P.phase = 0;
    for (int ph = 1; ph <= 2 && P.can_cphase && !q && !s; ph++) { /* its bucketing too */
      P.bphase = ph;
      if (!(s = build_dbucket(&C, &P, &f, e))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
  }
  C.vt = vt_keep;
  if (!s && (what & ASM_W_COUNT) && chain_applies(&C)) { /* the chain plan's */
    chainfn F;
    spc_error e2;
    spc_error_clear(&e2);
    for (int fl = 0; fl < (C.L == 2 ? 2 : 1) && !s; fl++) { /* from a COO; from the sort's (run_chain_lc) */
      spc_status q = build_chain(&C, fl == 1, &F, &f, &e2);
      if (!q) s = cb(ctx, f, e);
      else if (q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
      ir_func_free(&f);
    }
    for (int fl = 0; fl < 2 && !s; fl++) /* on threads (run_pchain), both sources */
      for (int ph = 1; ph <= 6 && !s; ph++) {
        spc_status q = build_pchain(&C, ph, fl == 1, &f, &e2);
        if (!q) s = cb(ctx, f, e);
        else if (q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
        ir_func_free(&f);
        if (q) break;
      }
  }
  for (int l = 0; l < C.L && !s; l++) {
    lvfunc F = {0};
    if (C.lv[l]->lf->narrays > SPC_LEVEL_MAX_ARRAYS) break;
    if (!(s = build_level(&C, l, &F, e))) s = cb(ctx, F.f, e);
    ir_func_free(&F.f);
  }
  /* a stream assembled level by level (stream_levels) */
  for (int l = 0; (what & ASM_W_STREAM) && !s && stream_applies(&C) && l < C.L; l++)
    for (int k = 0; k < 5 && !s; k++) {
      if ((k == LK_QALLOC || k == LK_QUERY) && !C.lv[l]->lf->nqueries) continue;
      lchunk R;
      if (!(s = build_lchunk(&C, l, k, &R, e))) s = cb(ctx, R.f, e);
      ir_func_free(&R.f);
    }
  if (!s && (what & ASM_W_SIZES) && C.L > 0 &&
      C.lv[C.L - 1]->lf->narrays <= SPC_LEVEL_MAX_ARRAYS) {
    lvfunc F = {0};
    C.measure = true;
    if (!(s = build_level(&C, C.L - 1, &F, e))) s = cb(ctx, F.f, e);
    ir_func_free(&F.f);
    C.measure = false;
  }
  spc_remap_free(&C.r);
  spc_tensor_free(&C.own_comb);
  return s;
}

/* The fused counting routines, and the direct plan's, from a source of
 * format src_fmt (its default parameters, the same index and coordinate
 * types) to fmt, when both allow them (nothing, and SPC_OK, otherwise):
 * for the factory. */
spc_status asm_fused_routines(const spc_specs *specs, const spc_format_spec *src_fmt,
                              const spc_format_spec *fmt, int order, ir_ty sindex_ty,
                              ir_ty scoord_ty, ir_ty index_ty, ir_ty coord_ty, spc_vtype vt,
                              asm_routine_cb cb, void *ctx, spc_error *e) {
  conv C = {.fmt = fmt, .specs = specs, .dup = SPC_DUP_SUM, .order = order};
  conv_info SI = {.fmt = src_fmt, .index_ty = sindex_ty, .coord_ty = scoord_ty};
  const bool same = sindex_ty == index_ty && scoord_ty == coord_ty;
  spc_remap *sr = NULL;
  asm_inv siv[SPC_MAX_ORDER];
  spc_status s = asm_read_info(&SI, order, &sr, siv, e);
  spc_remap_free(&sr);
  if (s == SPC_ERR_UNSUPPORTED) return SPC_OK; /* a source that cannot be read back */
  if (s || !fusable_info(&SI)) return s;
  int64_t ones[SPC_MAX_ORDER];
  for (int d = 0; d < order; d++) ones[d] = 1;
  C.limit = default_limit();
  if ((s = spc_coo_alloc(order, ones, 0, vt, &C.own_comb, e))) return s;
  C.comb = C.own_comb;
  C.vt = vt;
  C.index_ty = index_ty;
  C.coord_ty = coord_ty;
  if (!(s = set_params(&C, NULL, 0, e)))
    s = fmt->remap.text ? spc_remap_parse(&fmt->remap.at, order, C.ps, C.nparams, &C.r, e)
                        : spc_remap_identity(order, &C.r, e);
  if (!s) {
    C.L = C.r->order_out;
    for (int l = 0; l < C.L; l++)
      C.lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
    if (!fmt->order && C.L < fmt->nlevels - 1)
      for (int l = 0; l < C.L; l++) C.lv[l] = &fmt->lv[l];
  }
  if (!s && same && count_applies(&C)) {
    spc_error e2;
    spc_error_clear(&e2);
    ir_func *f = NULL;
    /* both counting routines: checked, and (where the source spec's
     * levels prove the order) unchecked */
    unsigned props[SPC_MAX_ORDER] = {0};
    for (int l = 0; l < SI.nlevels; l++) props[l] = SI.lv[l]->lf->props;
    spc_status q = SPC_OK;
    for (int k = 0; k < 2 && !q && !s; k++) {
      if (k && !fcount_known(&C, &SI, props)) break;
      q = build_fcount(&C, &SI, k == 1, &f, &e2);
      if (!q) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    if (!q && !s) q = build_fplace(&C, &SI, &f, &e2);
    if (!q && !s) s = cb(ctx, f, e);
    ir_func_free(&f);
    /* the partitioned placement's copy (run_partition): int32
     * coordinates, and int64 where the source's may pass 2^31 */
    for (int w = 0; w < (scoord_ty == IR_I64 ? 2 : 1) && !q && !s; w++) {
      if (!(q = build_fbucket(&C, &SI, w == 0, &f, &e2))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    /* the in-place placement's (run_inplace): copy and place back, both modes */
    int gk = -1, kc;
    if (!q && !s) q = ip_plan(&C, &gk, &kc, &e2);
    for (int m = 0; m < 2 && gk >= 0 && !q && !s; m++) {
      if (!(q = build_fbpack(&C, &SI, m, gk, &f, &e2))) s = cb(ctx, f, e);
      ir_func_free(&f);
      if (!q && !s && !(q = build_bplace(&C, m, gk, &f, &e2))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    if (q && q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
  }
  /* the direct plan's (and its counters' maxima) over the source's levels */
  dplan P = {0};
  if (vt == SPC_PATTERN) C.vt = SPC_F64; /* the direct plan pads with ones */
  if (!s && direct_applies(&C, &P)) {
    spc_error e2;
    spc_error_clear(&e2);
    ir_func *f = NULL;
    int p_ok, p_arr0;
    spc_status q = build_direct(&C, &SI, &P, &f, &p_ok, &p_arr0, &e2);
    if (!q) s = cb(ctx, f, e);
    ir_func_free(&f);
    if (!q && !s && C.r->ncounters) q = build_cmax(&C, &SI, &f, &e2);
    if (!q && !s && C.r->ncounters) s = cb(ctx, f, e);
    ir_func_free(&f);
    for (int ph = 1; ph <= 3 && P.can_phase && !q && !s; ph++) { /* on threads */
      P.phase = ph;
      if (!(q = build_direct(&C, &SI, &P, &f, &p_ok, &p_arr0, &e2))) s = cb(ctx, f, e);
      ir_func_free(&f);
    }
    if (q && q != SPC_ERR_UNSUPPORTED) s = q, *e = e2;
  }
  spc_remap_free(&C.r);
  spc_tensor_free(&C.own_comb);
  return s;
}

/* ---- tensors described by containers ---------------------------------------- */

bool spc_conv_describe(const spc_tensor *t, spc_conv_desc *d) {
  if (!spc_is_converted(t)) return false;
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  memset(d, 0, sizeof *d);
  d->format = I->fmt->name;
  d->format_yaml = I->fmt->yaml;
  d->nlevels = I->nlevels;
  for (int l = 0; l < I->nlevels; l++) {
    d->level_name[l] = I->lv[l]->lf->name;
    d->level_yaml[l] = I->lv[l]->lf->yaml;
    d->lo[l] = I->lo[l];
    d->N[l] = I->N[l];
  }
  d->nparams = I->nparams;
  for (int k = 0; k < I->nparams; k++) {
    d->pname[k] = I->params[k].name;
    d->pvalue[k] = I->params[k].value;
  }
  d->index64 = I->index_ty == IR_I64;
  d->coord64 = I->coord_ty == IR_I64;
  d->nmodes = I->nmodes;
  memcpy(d->modes, I->modes, sizeof d->modes);
  return true;
}

spc_itype spc_conv_array_type(const spc_tensor *t, int l, int k,
                              const char **name) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  const spc_level_spec *ls = I->lv[l]->lf;
  if (k < 0 || k >= ls->narrays) return (spc_itype)-1;
  if (name) *name = ls->arrays[k].name;
  return asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty) == IR_I32 ? SPC_IDX32
                                                                             : SPC_IDX64;
}

int spc_conv_narrays(const spc_tensor *t, int l) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  return I->lv[l]->lf->narrays;
}

/* A spec text from a file: the built-in one when equal, else added. */
static spc_status want_spec(spc_specs *r, const char *what, const char *name,
                            const char *yaml, spc_error *e) {
  const spc_level_spec *ls = spc_specs_level(r, name);
  const spc_format_spec *fs = spc_specs_format(r, name);
  const char *have = ls ? ls->yaml : fs ? fs->yaml : NULL;
  if (have && yaml && !strcmp(have, yaml)) return SPC_OK;
  if (!yaml) return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "no spec text for %s %s", what, name);
  const char *got = NULL;
  spc_status s = spc_specs_add(r, what, yaml, strlen(yaml), &got, e);
  if (!s && strcmp(got, name))
    s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "the stored spec of %s %s is named %s", what, name, got);
  return s;
}

spc_status spc_conv_shell(const spc_conv_desc *d, int order, const int64_t *dims,
                          spc_vtype vt, spc_tensor **out, spc_error *e) {
  conv C = {.order = order, .vt = vt};
  spc_specs *r = NULL;
  conv_tensor *ct = NULL;
  *out = NULL;
  spc_status s = spc_specs_builtin(&r, e);
  for (int l = 0; l < d->nlevels && !s; l++)
    s = want_spec(r, "level", d->level_name[l], d->level_yaml[l], e);
  if (!s) s = want_spec(r, "format", d->format, d->format_yaml, e);
  if (!s && !(C.fmt = spc_specs_format(r, d->format)))
    s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "no format %s", d->format);
  if (!s && C.fmt->order && C.fmt->order != order)
    s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "format %s has order %d, the file %d",
                d->format, C.fmt->order, order);
  if (!s) {
    spc_remap_param ps[SPC_SPEC_MAX];
    for (int k = 0; k < d->nparams && k < SPC_SPEC_MAX; k++) ps[k] = (spc_remap_param){d->pname[k], d->pvalue[k]};
    s = set_params(&C, ps, d->nparams, e);
  }
  if (!s && d->nmodes > 0 && d->nmodes <= SPC_MAX_ORDER) {
    C.nmodes = d->nmodes;
    memcpy(C.modes, d->modes, sizeof C.modes);
  }
  if (!s) s = asm_remap(C.fmt, order, C.ps, C.nparams, C.modes, C.nmodes, C.remap_text,
                        sizeof C.remap_text, &C.r, e);
  if (!s) {
    C.L = C.r->order_out;
    if (C.L != d->nlevels)
      s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "format %s has %d levels here, the file %d",
                  d->format, C.L, d->nlevels);
    for (int l = 0; l < C.L && !s; l++) {
      C.lv[l] = &C.fmt->lv[l < C.fmt->nlevels ? l : C.fmt->nlevels - 1];
      if (!C.fmt->order && C.L < C.fmt->nlevels - 1) C.lv[l] = &C.fmt->lv[l];
    }
    for (int l = 0; l < C.L && !s; l++) {
      if (strcmp(C.lv[l]->lf->name, d->level_name[l]))
        s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "level %d is %s in the file, %s in format %s",
                    l, d->level_name[l], C.lv[l]->lf->name, d->format);
      if (d->N[l] < 0) s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "level %d: extent %lld", l, (long long)d->N[l]);
      C.lo[l] = d->lo[l];
      C.N[l] = d->N[l];
    }
  }
  if (!s) {
    C.index_ty = d->index64 ? IR_I64 : IR_I32;
    C.coord_ty = d->coord64 ? IR_I64 : IR_I32;
    if (!(ct = new_result(&C, dims))) s = SPC_NOMEM(e);
  }
  if (!s) {
    ct->info.own = r;
    r = NULL;
    ct->info.engine = SPC_ENGINE_AUTO;
    ct->info.no_jit = d->no_jit != 0;
    *out = &ct->t;
  }
  spc_remap_free(&C.r);
  spc_specs_free(&r);
  return s;
}

/* The tensor spc_convert_to(src, format, o) makes of a source with these
 * dims and n stored components, distinct and in the target's order, up
 * to its contents: format, levels, extents, index types, engine info --
 * with no level arrays and no values (the caller adds them, as
 * spc_conv_array_type names them).  For kernels that write a known
 * format's arrays directly (kernels/spgemm.c: the product's CSR) without
 * running the conversion's routines.  SPC_NOT_HANDLED where the result's
 * shape depends on more than dims and n (a remapping with counters, a
 * format that pads with zeros) or n passes the position limit: convert
 * then. */
spc_status spc_conv_result_shell(const char *format, const spc_convert_opts *o, int order,
                                 const int64_t *dims, int64_t n, spc_vtype vt, spc_tensor **out,
                                 spc_error *e) {
  const spc_specs *reg = NULL;
  spc_specs *own = NULL;
  const spc_format_spec *fmt = NULL;
  conv_tensor *ct = NULL;
  *out = NULL;
  spc_status s = asm_resolve_format(format, o, &reg, &own, &fmt, e);
  if (s) return s;
  conv C = {.fmt = fmt, .specs = reg, .dup = o ? o->dup : SPC_DUP_SUM, .order = order, .n = n, .vt = vt, .o = o};
  C.limit = o && o->max_positions > 0 ? o->max_positions : default_limit();
  asm_engine_init(&C.eng, o);
  if ((fmt->order && fmt->order != order) || fmt->fill_zero || n > C.limit ||
      (fmt->remap.text && strchr(fmt->remap.text, '#')))
    s = SPC_NOT_HANDLED;
  if (!s) {
    spc_remap_param ps[SPC_MAX_PARAMS] = {{0}};
    int np = asm_opts_params(o, ps);
    s = set_params(&C, ps, np, e);
  }
  if (!s && o && o->nmodes > 0 && o->nmodes <= SPC_MAX_ORDER) {
    C.nmodes = o->nmodes;
    memcpy(C.modes, o->modes, sizeof C.modes);
  }
  if (!s) s = asm_remap(fmt, order, C.ps, C.nparams, C.modes, C.nmodes, C.remap_text,
                        sizeof C.remap_text, &C.r, e);
  if (!s && C.r->ncounters) s = SPC_NOT_HANDLED;
  if (!s) {
    C.L = C.r->order_out;
    for (int l = 0; l < C.L; l++) C.lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
    if (!fmt->order && C.L < fmt->nlevels - 1)
      for (int l = 0; l < C.L; l++) C.lv[l] = &fmt->lv[l];
    lang_ival iv[SPC_MAX_ORDER];
    spc_error e2;
    spc_error_clear(&e2);
    if (spc_remap_bounds(C.r, dims, NULL, iv, &e2)) s = SPC_NOT_HANDLED;
    for (int l = 0; l < C.L && !s; l++) {
      int64_t ext;
      if (!iv[l].bounded || __builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) || ext == INT64_MAX)
        s = SPC_NOT_HANDLED;
      else
        C.lo[l] = iv[l].lo, C.N[l] = ext + 1;
    }
  }
  if (!s) {
    choose_types(&C);
    if (!(ct = new_result(&C, dims))) s = SPC_NOMEM(e);
  }
  if (!s) {
    ct->info.own = own;
    own = NULL;
    *out = &ct->t;
  }
  spc_remap_free(&C.r);
  spc_specs_free(&own);
  return s;
}

/* Is t exactly what converting its own components gives?  (For tensors
 * read from files: arrays can be in bounds and still wrong -- positions
 * that decrease, offsets out of order, coordinates outside a level --
 * and only the spec knows what consistent means; rebuilding from the
 * components and comparing every array and value bit for bit checks all of
 * it with no per-format code.) */
spc_status spc_conv_check_consistent(const spc_tensor *t, const spc_tensor *coo,
                                     spc_error *e) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  spc_tensor *x = NULL;
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.max_positions = INT64_MAX;
  o.nmodes = I->nmodes;
  memcpy(o.modes, I->modes, sizeof o.modes);
  o.engine = I->engine; /* as t was made (a file's: auto, no_jit as read) */
  o.no_jit = I->no_jit;
  o.jit_dir = I->jit_dir[0] ? I->jit_dir : NULL;
  spc_status s = spc_convert_ex(coo, I->own, I->fmt, I->params, I->nparams, SPC_DUP_ERROR, &o,
                                &x, e);
  if (s) {
    char m[400];
    snprintf(m, sizeof m, "%.399s", e ? e->msg : "");
    /* memory short is not the file's fault */
    return spc_err(e, s == SPC_ERR_NOMEM ? s : SPC_ERR_INPUT, NULL, 0, 0,
                   "the stored components do not convert back to format %s: %s", I->fmt->name, m);
  }
  const conv_info *J = &((const conv_tensor *)(const void *)x)->info;
  const char *why = NULL;
  char b[160];
  for (int l = 0; l < I->nlevels && !why; l++) {
    if (I->lo[l] != J->lo[l] || I->N[l] != J->N[l]) {
      snprintf(b, sizeof b, "level %d has extent [%lld, +%lld), expected [%lld, +%lld)", l + 1,
               (long long)I->lo[l], (long long)I->N[l], (long long)J->lo[l], (long long)J->N[l]);
      why = b;
    }
    for (int k = 0; k < t->lv[l].narr && !why; k++) {
      const spc_array *a = &t->lv[l].arr[k], *c = spc_level_array_c(&x->lv[l], a->name);
      bool same = c && c->len == a->len;
      if (same && c->type == a->type && a->len) /* the same width: the bytes */
        same = !memcmp(a->data, c->data, (size_t)a->len * (a->type == SPC_IDX32 ? 4 : 8));
      else
        for (int64_t i = 0; same && i < a->len; i++) same = spc_arr_get(a, i) == spc_arr_get(c, i);
      if (!same) {
        snprintf(b, sizeof b, "level %d array %s differs from the one its components give", l + 1,
                 a->name);
        why = b;
      }
    }
  }
  size_t w = spc_vtype_size(t->vt);
  if (!why && (x->vt != t->vt || x->nval != t->nval ||
               (w && t->nval && memcmp(x->val, t->val, (size_t)t->nval * w))))
    why = "the values (or their padding) differ from the ones the components give";
  spc_tensor_free(&x);
  return why ? spc_err(e, SPC_ERR_INPUT, NULL, 0, 0, "inconsistent %s tensor: %s", I->fmt->name, why)
             : SPC_OK;
}
