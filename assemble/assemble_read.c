/* assemble_read.c -- spc_convert_to_coo: read a converted tensor back
 * through the target's READ level functions (begin, end, access, valid),
 * lowered to one IR function: a loop nest, one loop per level, run twice
 * (count, then fill).  Padding is skipped: positions whose `valid` is
 * false, and zero values of `fill: zero` formats.
 *
 * Canonical coordinates come from the level coordinates by inverting the
 * remapping, with no new spec key: a canonical index x is
 *   - the coordinate of a level whose remapping output is exactly `x`
 *     (csr, csc, dcsr, dcsc, coo, csf, dense, dia, ell, sky, morton), or
 *   - lc[a] * K + lc[b] where output a is `x / K` and output b is `x % K`
 *     (K a literal or parameter: bcsr's block split).
 * Any other remapping is refused ("cannot invert ..."); an explicit
 * `inverse:` key in the tensor-format spec would lift that limit. */
#include "assemble_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct inv {
  int a, b;  /* level of x (b < 0), or of x / K and x % K */
  int64_t K;
} inv;

static bool const_of(const conv_info *I, const lang_node *n, int64_t *v) {
  if (n->kind == LN_INT && !n->is_u64) return (*v = n->ival), true;
  if (n->kind != LN_NAME) return false;
  for (int k = 0; k < I->nparams; k++)
    if (!strcmp(I->params[k].name, n->name)) return (*v = I->params[k].value), true;
  return false;
}

static bool is_op_of(const conv_info *I, const lang_node *n, int op,
                     const char *x, int64_t *K) {
  return n->kind == LN_BINARY && n->op == op && n->a->kind == LN_NAME &&
         !strcmp(n->a->name, x) && const_of(I, n->b, K);
}

static spc_status invert(const conv_info *I, const spc_remap *r, inv *iv,
                         spc_error *e) {
  for (int k = 0; k < r->order_in; k++) {
    const char *x = r->in_names[k];
    iv[k] = (inv){-1, -1, 0};
    for (int l = 0; l < r->order_out && iv[k].a < 0; l++)
      if (r->out[l]->kind == LN_NAME && !strcmp(r->out[l]->name, x)) iv[k].a = l;
    for (int a = 0; a < r->order_out && iv[k].a < 0; a++) {
      int64_t K1, K2;
      if (!is_op_of(I, r->out[a], IR_DIV, x, &K1)) continue;
      for (int b = 0; b < r->order_out; b++)
        if (is_op_of(I, r->out[b], IR_REM, x, &K2) && K1 == K2 && K1 > 0) {
          iv[k] = (inv){a, b, K1};
          break;
        }
    }
    if (iv[k].a < 0)
      return spc_err(e, SPC_ERR_UNSUPPORTED, I->fmt->file, I->fmt->remap.at.line,
                     I->fmt->remap.at.col,
                     "cannot invert the remapping of format %s: index %s is "
                     "neither a level coordinate nor split as %s / K, %s %% K",
                     I->fmt->name, x, x, x);
  }
  return SPC_OK;
}

spc_status asm_remap_invertible(const spc_format_spec *fmt, const spc_remap *r,
                                const spc_remap_param *ps, int nps, spc_error *e) {
  conv_info I;
  memset(&I, 0, sizeof I);
  I.fmt = fmt;
  I.nparams = nps < SPC_SPEC_MAX ? nps : SPC_SPEC_MAX;
  for (int k = 0; k < I.nparams; k++) I.params[k] = ps[k];
  inv iv[SPC_MAX_ORDER];
  return r->order_in <= SPC_MAX_ORDER ? invert(&I, r, iv, e) : SPC_OK;
}

typedef struct rd {
  const conv_info *I;
  int order;
  spc_vtype vt;
  const spc_remap *r;
  const inv *iv;
  ir_func *f;
  ir_var arr[SPC_MAX_ORDER][SPC_SPEC_MAX];
  ir_var vals, nout, crd[SPC_MAX_ORDER], vout;
  ir_var c[SPC_MAX_ORDER], Nv[SPC_MAX_ORDER], lov[SPC_MAX_ORDER];
  /* SpMV: y[i] += A[i][j] * x[j] (transpose: y[j] += A[i][j] * x[i]) over
   * the positions [q0, q1) of the top level */
  bool spmv, transpose;
  bool clip; /* a fused routine's nest: the top level clipped to [q0, q1) */
  bool at;   /* the read-out in chunks (spc_conv_reado): the top positions
                [q0, q1) counted, or written into given arrays from o0 */
  bool checked; /* compiled with every index checked (ir_func_set_checked):
                   the read-out of arrays from a file */
  ir_var o0;
  bool split; /* positions schedule: level 1 clipped to [r0, r1) too */
  bool lanes; /* lanes schedule: each innermost loop's products in four
                 partial sums (lanes_fit: y's index fixed over it) */
  bool pair;  /* rows two at a time where pair_fit (rows of 24 or more
                 entries on average: pair_wanted) */
  bool same;  /* with lanes: each row's lanes kept only where its products
                 are nonnegative (spmv_lanes_same), else summed in order;
                 only where each y entry is one row's (rows_own_y) */
  ir_ty sty;  /* the arithmetic type: F64 or C128 */
  ir_var x, y, q0, q1, r0, r1;
  /* a fused routine's leaf (asm_src_nest): the code for one component,
   * and a flag that, once set, leaves every loop of the nest */
  asm_leaf_fn leaf;
  void *leaf_ctx;
  ir_var stop;
  /* a fused nest over a two-level source with a compact level 1, flat:
   * level 1's positions under the top positions [fb, fe) in one loop,
   * level 0's coordinate not read (asm_src_nest_flat) */
  bool flat;
  ir_var fb, fe;
  ir_var fp; /* level 1's parent position in the flat loop: never assigned */
  ir_var c0; /* level 0's own coordinate (c[0] is the flat loop's stand-in) */
} rd;

/* Canonical index d of the current component, from the level coordinates. */
static ir_expr *canon(rd *R, int d) {
  ir_func *f = R->f;
  const inv *v = &R->iv[d];
  ir_expr *x = ir_cast(f, IR_I64, ir_ref(f, R->c[v->a]));
  if (v->b >= 0)
    x = ir_bin(f, IR_ADD, ir_bin(f, IR_MUL, x, ir_int(f, v->K)),
               ir_cast(f, IR_I64, ir_ref(f, R->c[v->b])));
  return x;
}

/* One product of the innermost level at position qv into lane `lane`:
 * the coordinate (access), valid, the padding's zero skipped, then
 * lane += a * x[j]. */
static spc_status lane_product(rd *R, lvbind *b, ir_stmt *into, ir_var qv, ir_var lane,
                               ir_var hit, spc_error *e) {
  ir_func *f = R->f;
  const conv_info *I = R->I;
  b->q = qv;
  spc_status s = asm_lower_fn(f, into, b, SPC_LF_ACCESS, b->c, NULL, e);
  if (s) return s;
  if (asm_lfn(b, SPC_LF_VALID)) {
    ir_var ok = lang_fresh_local(f, "ok", IR_BOOL, false);
    if ((s = asm_lower_fn(f, into, b, SPC_LF_VALID, ok, NULL, e))) return s;
    into = ir_then(ir_add(f, into, ir_if(f, ir_ref(f, ok), NULL, NULL)));
  }
  if (R->vals >= 0 && I->fmt->fill_zero)
    into = ir_then(ir_add(f, into, ir_if(f, ir_cast(f, IR_BOOL, ir_load(f, R->vals, ir_ref(f, qv))), NULL, NULL)));
  ir_expr *a = R->vals >= 0 ? ir_cast(f, R->sty, ir_load(f, R->vals, ir_ref(f, qv)))
                            : ir_cast(f, R->sty, ir_f64(f, 1.0));
  ir_expr *prod = ir_bin(f, IR_MUL, a, ir_load(f, R->x, canon(R, R->transpose ? 0 : 1)));
  ir_add(f, into, ir_assign(f, lane, ir_bin(f, IR_ADD, ir_ref(f, lane), prod)));
  if (hit >= 0) ir_add(f, into, ir_assign(f, hit, ir_bool(f, true)));
  return SPC_OK;
}

static bool rows_own_y(const rd *R);

/* Whether the lanes loop may be the runtime's spmv_lanes (ir_rt.h: the
 * same sums, its four lanes paired with vector operations where the C
 * compiler has them): real double values, x and y; no valid function and no
 * padding's zeros to skip; x's index the innermost level's coordinate
 * itself; and that coordinate exactly arr[q] (compressed, singleton), its
 * array typed as the coordinate.  *crd: that array. */
static bool lanes_plain(rd *R, lvbind *b, ir_var *crd) {
  ir_func *f = R->f;
  const conv_info *I = R->I;
  const inv *v = &R->iv[R->transpose ? 0 : 1];
  if (R->sty != IR_F64 || R->vals < 0 || ir_var_get(f, R->vals)->ty != IR_F64 ||
      ir_var_get(f, R->x)->ty != IR_F64 || ir_var_get(f, R->y)->ty != IR_F64 ||
      asm_lfn(b, SPC_LF_VALID) || I->fmt->fill_zero || v->b >= 0 || R->c[v->a] != b->c)
    return false;
  ir_stmt *probe = ir_block(f); /* the access lowered apart, only looked at */
  spc_error e;
  spc_error_clear(&e);
  if (asm_lower_fn(f, probe, b, SPC_LF_ACCESS, b->c, NULL, &e) || probe->nkids != 1) return false;
  const ir_stmt *st = probe->kids[0];
  ir_ty ct = ir_var_get(f, b->c)->ty;
  if (st->kind != IR_S_ASSIGN || st->var != b->c) return false;
  const ir_expr *x = st->a;
  if (x->kind == IR_E_CAST && x->ty == ct) x = x->a;
  if (x->kind != IR_E_LOAD || x->ty != ct || (ct != IR_I32 && ct != IR_I64)) return false;
  const ir_expr *at = x->a;
  if (at->kind == IR_E_CAST && (at->ty == IR_I64 || at->ty == at->a->ty)) at = at->a;
  if (at->kind != IR_E_VAR || at->var != b->q) return false;
  const ir_var_info *a = ir_var_get(f, x->var);
  if (!a || !a->array || a->ty != ct) return false;
  *crd = x->var;
  return true;
}

/* The lanes schedule's innermost loop over positions [bg, en): four
 * partial sums, the positions taken four at a time (the k-th of each four
 * into lane k), the last (en - bg) % 4 into lane 0; then y[i] += (l0 +
 * l1) + (l2 + l3).  y's index comes from the levels above (lanes_fit).
 * Where positions may be skipped (valid, a padding's zeros) y is written
 * only when one was not: a padded block row past the matrix has no y. */
static spc_status lanes_loop(rd *R, lvbind *b, ir_stmt *dst, ir_var bg, ir_var en, spc_error *e) {
  ir_func *f = R->f;
  const conv_info *I = R->I;
  ir_var lane[4], q = b->q, qk[4], crd = -1;
  bool plain = lanes_plain(R, b, &crd);
  if (R->same && (!plain || !rows_own_y(R))) /* auto then runs rows */
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "spmv_lanes_same: %s's rows do not each own an entry of y",
                   I->fmt->name);
  if (plain) { /* one call: y[yl] += the four lanes' sum */
    ir_var yl = lang_fresh_local(f, "yl", IR_I64, false);
    ir_add(f, dst, ir_assign(f, yl, canon(R, R->transpose ? 1 : 0)));
    ir_var arrs[4] = {R->y, crd, R->vals, R->x};
    ir_expr *args[3] = {ir_ref(f, yl), ir_cast(f, IR_I64, ir_ref(f, bg)), ir_cast(f, IR_I64, ir_ref(f, en))};
    ir_add(f, dst, ir_call(f, R->same ? IR_SPMV_LANES_SAME : IR_SPMV_LANES, arrs, 4, args, 3));
    return SPC_OK;
  }
  for (int k = 0; k < 4; k++) {
    lane[k] = lang_fresh_local(f, "lane", R->sty, false);
    ir_add(f, dst, ir_assign(f, lane[k], ir_cast(f, R->sty, ir_f64(f, 0.0))));
    qk[k] = lang_fresh_local(f, "qk", I->index_ty, false);
  }
  ir_var yl = lang_fresh_local(f, "yl", IR_I64, false);
  ir_add(f, dst, ir_assign(f, yl, canon(R, R->transpose ? 1 : 0)));
  ir_var hit = -1;
  if (asm_lfn(b, SPC_LF_VALID) || (R->vals >= 0 && I->fmt->fill_zero)) {
    hit = lang_fresh_local(f, "hit", IR_BOOL, false);
    ir_add(f, dst, ir_assign(f, hit, ir_bool(f, false)));
  }
  ir_add(f, dst, ir_assign(f, q, ir_ref(f, bg)));
  ir_expr *four = ir_bin(f, IR_LT, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, q)), ir_int(f, 3)),
                         ir_cast(f, IR_I64, ir_ref(f, en)));
  ir_stmt *wb = ir_body(ir_add(f, dst, ir_while(f, four, NULL)));
  spc_status s = SPC_OK;
  for (int k = 0; k < 4 && !s; k++) {
    ir_add(f, wb, ir_assign(f, qk[k], ir_cast(f, I->index_ty, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, q)), ir_int(f, k)))));
    s = lane_product(R, b, wb, qk[k], lane[k], hit, e);
  }
  ir_add(f, wb, ir_assign(f, q, ir_cast(f, I->index_ty, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, q)), ir_int(f, 4)))));
  ir_stmt *tb = ir_body(ir_add(f, dst, ir_while(f, ir_bin(f, IR_LT, ir_ref(f, q), ir_ref(f, en)), NULL)));
  if (!s) s = lane_product(R, b, tb, q, lane[0], hit, e);
  ir_add(f, tb, ir_assign(f, q, ir_cast(f, I->index_ty, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, q)), ir_int(f, 1)))));
  ir_expr *sum = ir_bin(f, IR_ADD, ir_bin(f, IR_ADD, ir_ref(f, lane[0]), ir_ref(f, lane[1])),
                        ir_bin(f, IR_ADD, ir_ref(f, lane[2]), ir_ref(f, lane[3])));
  ir_stmt *put = hit >= 0 ? ir_then(ir_add(f, dst, ir_if(f, ir_ref(f, hit), NULL, NULL))) : dst;
  ir_add(f, put, ir_store(f, R->y, ir_ref(f, yl), ir_bin(f, IR_ADD, ir_load(f, R->y, ir_ref(f, yl)), sum)));
  b->q = q;
  return s;
}

/* Whether the SpMV nest may take the top level's positions two at a time
 * (pair_loop): two levels, y's index the coordinate of a unique top level
 * (each row once, so two rows' sums never meet), no valid function and
 * no padding's zeros to skip, neither a split nor lanes. */
static bool pair_fit(const rd *R) {
  return R->pair && R->spmv && !R->split && !R->lanes && !R->leaf && !R->clip && rows_own_y(R);
}

/* pair_fit's matrix: two levels, y's index the coordinate of a unique top
 * level, no valid function and no padding's zeros to skip: each entry of
 * y is the sum of one top position's products. */
static bool rows_own_y(const rd *R) {
  const conv_info *I = R->I;
  if (I->nlevels != 2) return false;
  const inv *v = &R->iv[R->transpose ? 1 : 0];
  if (v->a != 0 || v->b >= 0 || !I->lv[0]->unique || !(I->lv[0]->lf->props & SPC_LP_UNIQUE)) return false;
  if (R->vt != SPC_PATTERN && I->fmt->fill_zero) return false;
  lvbind b0, b1;
  asm_bind_init(&b0, I->lv[0]->lf, I->lv[0], I->index_ty, I->coord_ty);
  asm_bind_init(&b1, I->lv[1]->lf, I->lv[1], I->index_ty, I->coord_ty);
  return !asm_lfn(&b0, SPC_LF_VALID) && !asm_lfn(&b1, SPC_LF_VALID);
}

/* Level l's binding in the nest: its arrays, extents, coordinate and
 * position variables, the coordinates above it by their remapped names. */
static void bind_level(rd *R, int l, lvbind *b) {
  asm_bind_nest(b, R->I, R->r->out_names, l, R->arr[l], R->Nv, R->lov, R->c, R->f);
}

static ir_expr *plus(ir_func *f, ir_ty t, ir_var v, ir_expr *k) {
  return ir_cast(f, t, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, v)), ir_cast(f, IR_I64, k)));
}

/* ok = whether level 1's segments lie in its parents' order over the top
 * positions [from, to): end(p) == begin(p + 1) for each p but the last,
 * the loop left at the first gap -- `compact` says the positions are
 * contiguous, not in which order (a level may lay its segments out
 * otherwise).  b1: level 1's binding, its p set here; pc counts in type
 * pct; ok is a bool or an int64 (true / 1 first). */
static spc_status segs_check(ir_func *f, ir_stmt *dst, lvbind *b1, ir_ty it, ir_ty pct, ir_var from,
                             ir_var to, ir_var ok, spc_error *e) {
  bool flag = ir_var_get(f, ok)->ty == IR_BOOL;
  ir_var pc = lang_fresh_local(f, "pc", pct, false);
  ir_var te = lang_fresh_local(f, "te", it, false), tb = lang_fresh_local(f, "tb", it, false);
  ir_add(f, dst, ir_assign(f, ok, flag ? ir_bool(f, true) : ir_int(f, 1)));
  ir_expr *last = ir_cast(f, pct, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, ir_ref(f, to)), ir_int(f, 1)));
  ir_stmt *cb = ir_body(ir_add(f, dst, ir_for(f, pc, ir_cast(f, pct, ir_ref(f, from)), last, NULL)));
  ir_add(f, cb, ir_assign(f, b1->p, ir_cast(f, it, ir_ref(f, pc))));
  spc_status s = asm_lower_fn(f, cb, b1, SPC_LF_END, te, NULL, e);
  ir_add(f, cb, ir_assign(f, b1->p, plus(f, it, pc, ir_int(f, 1))));
  if (!s) s = asm_lower_fn(f, cb, b1, SPC_LF_BEGIN, tb, NULL, e);
  ir_stmt *gap = ir_then(ir_add(f, cb, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, te), ir_ref(f, tb)), NULL, NULL)));
  ir_add(f, gap, ir_assign(f, ok, flag ? ir_bool(f, false) : ir_int(f, 0)));
  ir_add(f, gap, ir_break(f));
  return s;
}

/* SpMV over the top level's positions [q, en), two rows at a time while
 * two remain (the caller runs the last one, if any): both rows' sums start
 * from y and take their products in position order, the two chains
 * interleaved up to the shorter row's length, then each row's rest.  Each
 * row's sum is the rows schedule's, bit for bit (pair_fit: every row
 * once); two independent add chains instead of one hide the add's
 * latency.  b0 is level 0's binding, b0->q the running position. */
static spc_status pair_loop(rd *R, lvbind *b0, ir_stmt *dst, ir_var en, spc_error *e) {
  ir_func *f = R->f;
  const conv_info *I = R->I;
  ir_ty it = I->index_ty;
  int yi = R->transpose ? 1 : 0;
  ir_var q = b0->q;
  ir_expr *two = ir_bin(f, IR_LT, ir_bin(f, IR_ADD, ir_cast(f, IR_I64, ir_ref(f, q)), ir_int(f, 1)),
                        ir_cast(f, IR_I64, ir_ref(f, en)));
  ir_stmt *wb = ir_body(ir_add(f, dst, ir_while(f, two, NULL)));
  lvbind b1;
  bind_level(R, 1, &b1);
  ir_var cr[2], yl[2], bg[2], nd[2], sum[2];
  ir_var qr = lang_fresh_local(f, "qr", it, false);
  spc_status s = SPC_OK;
  for (int k = 0; k < 2 && !s; k++) {
    cr[k] = lang_fresh_local(f, "cr", I->coord_ty, false);
    yl[k] = lang_fresh_local(f, "yl", IR_I64, false);
    bg[k] = lang_fresh_local(f, "rb", it, false);
    nd[k] = lang_fresh_local(f, "re", it, false);
    sum[k] = lang_fresh_local(f, "sum", R->sty, false);
    ir_add(f, wb, ir_assign(f, qr, plus(f, it, q, ir_int(f, k))));
    b0->q = qr;
    s = asm_lower_fn(f, wb, b0, SPC_LF_ACCESS, b0->c, NULL, e);
    if (s) break;
    ir_add(f, wb, ir_assign(f, cr[k], ir_ref(f, R->c[0])));
    ir_add(f, wb, ir_assign(f, yl[k], canon(R, yi)));
    ir_add(f, wb, ir_assign(f, b1.p, ir_ref(f, qr)));
    s = asm_lower_fn(f, wb, &b1, SPC_LF_BEGIN, bg[k], NULL, e);
    if (!s) s = asm_lower_fn(f, wb, &b1, SPC_LF_END, nd[k], NULL, e);
    ir_add(f, wb, ir_assign(f, sum[k], ir_load(f, R->y, ir_ref(f, yl[k]))));
  }
  b0->q = q;
  if (s) return s;
  /* the shorter row's length (an empty or reversed range counts 0), in
   * the index type: the positions' own arithmetic, no widening a step */
  ir_var mn = lang_fresh_local(f, "mn", it, false), t = lang_fresh_local(f, "t", it, false);
  ir_expr *len[2];
  for (int k = 0; k < 2; k++)
    len[k] = ir_bin(f, IR_MAX, ir_cast(f, it, ir_int(f, 0)),
                    ir_bin(f, IR_SUB, ir_ref(f, nd[k]), ir_ref(f, bg[k])));
  ir_add(f, wb, ir_assign(f, mn, ir_bin(f, IR_MIN, len[0], len[1])));
  ir_stmt *jb = ir_body(ir_add(f, wb, ir_for(f, t, ir_cast(f, it, ir_int(f, 0)), ir_ref(f, mn), NULL)));
  /* each product under its own row: the parent position too, which a
   * level's access may read (a user level's `base[p] + crd[q]`: both rows'
   * products took the second row's base) */
  for (int k = 0; k < 2 && !s; k++) {
    ir_add(f, jb, ir_assign(f, R->c[0], ir_ref(f, cr[k])));
    ir_add(f, jb, ir_assign(f, b1.p, plus(f, it, q, ir_int(f, k))));
    ir_add(f, jb, ir_assign(f, b1.q, ir_bin(f, IR_ADD, ir_ref(f, bg[k]), ir_ref(f, t))));
    s = lane_product(R, &b1, jb, b1.q, sum[k], -1, e);
  }
  for (int k = 0; k < 2 && !s; k++) { /* the rest of each row, alone */
    ir_add(f, wb, ir_assign(f, R->c[0], ir_ref(f, cr[k])));
    ir_add(f, wb, ir_assign(f, b1.p, plus(f, it, q, ir_int(f, k))));
    ir_add(f, wb, ir_assign(f, bg[k], ir_bin(f, IR_ADD, ir_ref(f, bg[k]), ir_ref(f, mn))));
    ir_stmt *rb = ir_body(ir_add(f, wb, ir_for(f, b1.q, ir_ref(f, bg[k]), ir_ref(f, nd[k]), NULL)));
    s = lane_product(R, &b1, rb, b1.q, sum[k], -1, e);
  }
  for (int k = 0; k < 2; k++) ir_add(f, wb, ir_store(f, R->y, ir_ref(f, yl[k]), ir_ref(f, sum[k])));
  ir_add(f, wb, ir_assign(f, q, plus(f, it, q, ir_int(f, 2))));
  return s;
}

static spc_status nest(rd *R, int l, ir_stmt *dst, ir_expr *parent, bool fill,
                       spc_error *e) {
  ir_func *f = R->f;
  const conv_info *I = R->I;
  lvbind b;
  bind_level(R, l, &b);
  ir_var bg = lang_fresh_local(f, "qb", I->index_ty, false);
  ir_var en = lang_fresh_local(f, "qe", I->index_ty, false);
  spc_status s;
  if (R->flat && l == 1) { /* compact: [begin(fb), end(fe - 1)) holds them all */
    ir_add(f, dst, ir_assign(f, b.p, ir_ref(f, R->fb)));
    s = asm_lower_fn(f, dst, &b, SPC_LF_BEGIN, bg, NULL, e);
    ir_add(f, dst, ir_assign(f, b.p, ir_cast(f, I->index_ty, ir_bin(f, IR_SUB, ir_cast(f, IR_I64, ir_ref(f, R->fe)), ir_int(f, 1)))));
    if (!s) s = asm_lower_fn(f, dst, &b, SPC_LF_END, en, NULL, e);
    b.p = R->fp; /* unknown in the loop: access and valid must not read it */
  } else {
    ir_add(f, dst, ir_assign(f, b.p, ir_cast(f, I->index_ty, parent)));
    s = asm_lower_fn(f, dst, &b, SPC_LF_BEGIN, bg, NULL, e);
    if (!s) s = asm_lower_fn(f, dst, &b, SPC_LF_END, en, NULL, e);
  }
  if (s) return s;
  if ((R->spmv || R->clip) && l == 0) { /* this call's share of the top level */
    ir_add(f, dst, ir_assign(f, bg, ir_bin(f, IR_MAX, ir_ref(f, bg), ir_cast(f, I->index_ty, ir_ref(f, R->q0)))));
    ir_add(f, dst, ir_assign(f, en, ir_bin(f, IR_MIN, ir_ref(f, en), ir_cast(f, I->index_ty, ir_ref(f, R->q1)))));
  }
  if (R->flat && l == 0) {
    /* level 1 in one loop where its segments lie in the parents' order
     * across the range (segs_check; compiled, a compressed level's check is
     * pos[p + 1] == pos[p + 1] and folds away), else the nested loops below */
    R->fb = bg;
    R->fe = en;
    lvbind b1;
    bind_level(R, 1, &b1);
    ir_var ok = lang_fresh_local(f, "inorder", IR_BOOL, false);
    s = segs_check(f, dst, &b1, I->index_ty, I->index_ty, bg, en, ok, e);
    ir_stmt *iff = ir_add(f, dst, ir_if(f, ir_bin(f, IR_LAND, ir_ref(f, ok),
                                                  ir_bin(f, IR_LT, ir_ref(f, bg), ir_ref(f, en))),
                                        NULL, NULL));
    if (!s) s = nest(R, 1, ir_then(iff), NULL, fill, e);
    if (s) return s;
    /* the nested loops, level 0's coordinate its own again */
    R->flat = false;
    R->c[0] = R->c0;
    bind_level(R, 0, &b);
    dst = ir_else(f, iff);
    ir_add(f, dst, ir_assign(f, b.p, ir_cast(f, I->index_ty, parent)));
  }
  if (R->spmv && R->split && l == 1) { /* this call's chunk of level 1 */
    ir_add(f, dst, ir_assign(f, bg, ir_bin(f, IR_MAX, ir_ref(f, bg), ir_cast(f, I->index_ty, ir_ref(f, R->r0)))));
    ir_add(f, dst, ir_assign(f, en, ir_bin(f, IR_MIN, ir_ref(f, en), ir_cast(f, I->index_ty, ir_ref(f, R->r1)))));
  }
  if (R->spmv && R->lanes && l == I->nlevels - 1) return lanes_loop(R, &b, dst, bg, en, e);
  if (l == 0 && pair_fit(R)) { /* two rows at a time; the last one below */
    ir_add(f, dst, ir_assign(f, b.q, ir_ref(f, bg)));
    if ((s = pair_loop(R, &b, dst, en, e))) return s;
    ir_add(f, dst, ir_assign(f, bg, ir_ref(f, b.q)));
  }
  ir_stmt *loop = ir_add(f, dst, ir_for(f, b.q, ir_ref(f, bg), ir_ref(f, en), NULL));
  ir_stmt *body = ir_body(loop);
  if (R->leaf && R->stop >= 0) {
    ir_stmt *st = ir_add(f, body, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, R->stop), ir_int(f, 0)), NULL, NULL));
    ir_add(f, ir_then(st), ir_break(f));
  }
  if ((s = asm_lower_fn(f, body, &b, SPC_LF_ACCESS, b.c, NULL, e))) return s;
  if (asm_lfn(&b, SPC_LF_VALID)) {
    ir_var ok = lang_fresh_local(f, "ok", IR_BOOL, false);
    if ((s = asm_lower_fn(f, body, &b, SPC_LF_VALID, ok, NULL, e))) return s;
    body = ir_then(ir_add(f, body, ir_if(f, ir_ref(f, ok), NULL, NULL)));
  }
  if (l + 1 < I->nlevels) return nest(R, l + 1, body, ir_ref(f, b.q), fill, e);
  /* a leaf: one stored position */
  if (R->vals >= 0 && I->fmt->fill_zero)
    body = ir_then(ir_add(f, body, ir_if(f, ir_cast(f, IR_BOOL, ir_load(f, R->vals, ir_ref(f, b.q))), NULL, NULL)));
  if (R->leaf) { /* canonical coordinates (int64 locals) and the value */
    ir_expr *xs[SPC_MAX_ORDER];
    for (int d = 0; d < R->order; d++) {
      const inv *v = &R->iv[d];
      ir_expr *x = ir_cast(f, IR_I64, ir_ref(f, R->c[v->a]));
      if (v->b >= 0)
        x = ir_bin(f, IR_ADD, ir_bin(f, IR_MUL, x, ir_int(f, v->K)),
                   ir_cast(f, IR_I64, ir_ref(f, R->c[v->b])));
      ir_var xv = lang_fresh_local(f, "x", IR_I64, false);
      ir_add(f, body, ir_assign(f, xv, x));
      xs[d] = ir_ref(f, xv);
    }
    return R->leaf(R->leaf_ctx, f, body, xs,
                   R->vals >= 0 ? ir_load(f, R->vals, ir_ref(f, b.q)) : NULL, e);
  }
  if (R->spmv) {
    ir_expr *cd[2];
    for (int d = 0; d < 2; d++) cd[d] = canon(R, d);
    ir_expr *a = R->vals >= 0 ? ir_cast(f, R->sty, ir_load(f, R->vals, ir_ref(f, b.q)))
                              : ir_cast(f, R->sty, ir_f64(f, 1.0));
    int yi = R->transpose ? 1 : 0;
    ir_expr *prod = ir_bin(f, IR_MUL, a, ir_load(f, R->x, cd[1 - yi]));
    ir_var iv2 = lang_fresh_local(f, "yi", IR_I64, false);
    ir_add(f, body, ir_assign(f, iv2, cd[yi]));
    ir_add(f, body, ir_store(f, R->y, ir_ref(f, iv2),
                             ir_bin(f, IR_ADD, ir_load(f, R->y, ir_ref(f, iv2)), prod)));
    return SPC_OK;
  }
  if (fill) {
    ir_expr *k = ir_ref(f, R->nout);
    for (int d = 0; d < R->order; d++) {
      const inv *v = &R->iv[d];
      ir_expr *x = ir_cast(f, IR_I64, ir_ref(f, R->c[v->a]));
      if (v->b >= 0)
        x = ir_bin(f, IR_ADD, ir_bin(f, IR_MUL, x, ir_int(f, v->K)),
                   ir_cast(f, IR_I64, ir_ref(f, R->c[v->b])));
      ir_add(f, body, ir_store(f, R->crd[d], k, x));
    }
    if (R->vals >= 0)
      ir_add(f, body, ir_store(f, R->vout, ir_ref(f, R->nout), ir_load(f, R->vals, ir_ref(f, b.q))));
  }
  ir_add(f, body, ir_assign(f, R->nout, ir_bin(f, IR_ADD, ir_ref(f, R->nout), ir_int(f, 1))));
  return SPC_OK;
}

static spc_status build_read(rd *R, int *p_arr, spc_error *e) {
  const conv_info *I = R->I;
  ir_func *f = R->f;
  ir_stmt *body = ir_func_body(f);
  char name[64];
  int np = 0;
  for (int l = 0; l < I->nlevels; l++) {
    const spc_level_spec *ls = I->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      R->arr[l][k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
      p_arr[np++] = l * SPC_SPEC_MAX + k;
    }
  }
  ir_ty vty = asm_value_ty(R->vt);
  R->vals = R->vout = -1;
  if (R->vt != SPC_PATTERN) R->vals = ir_param(f, "vals", vty, true, IR_IN);
  /* level extents: ext[2l] = lo, ext[2l+1] = N (data, not code, so one
   * compiled routine serves every tensor of the format) */
  ir_var ext = ir_param(f, "ext", IR_I64, true, IR_IN);
  for (int d = 0; d < R->order; d++) {
    snprintf(name, sizeof name, "crd%d", d);
    R->crd[d] = ir_param(f, name, IR_I64, true, R->at ? IR_INOUT : IR_OUT);
  }
  if (R->vt != SPC_PATTERN) R->vout = ir_param(f, "vout", vty, true, R->at ? IR_INOUT : IR_OUT);
  R->nout = ir_param(f, "nout", IR_I64, false, IR_OUT);
  ir_var cnt = -1;
  if (R->clip) { /* ranged: the top positions [q0, q1); cnt != 0: count only */
    R->q0 = ir_param(f, "q0", IR_I64, false, IR_IN);
    R->q1 = ir_param(f, "q1", IR_I64, false, IR_IN);
    cnt = ir_param(f, "cnt", IR_I64, false, IR_IN);
  }
  if (R->at) R->o0 = ir_param(f, "o0", IR_I64, false, IR_IN);
  for (int l = 0; l < I->nlevels; l++) {
    snprintf(name, sizeof name, "c%d", l);
    R->c[l] = lang_fresh_local(f, name, I->coord_ty, false);
    R->Nv[l] = lang_fresh_local(f, "N", IR_I64, false);
    R->lov[l] = lang_fresh_local(f, "lo", IR_I64, false);
    ir_add(f, body, ir_assign(f, R->lov[l], ir_load(f, ext, ir_int(f, 2 * l))));
    ir_add(f, body, ir_assign(f, R->Nv[l], ir_load(f, ext, ir_int(f, 2 * l + 1))));
  }
  if (R->at) { /* cnt != 0: count [q0, q1); else write it from o0 on */
    ir_stmt *br = ir_add(f, body, ir_if(f, ir_bin(f, IR_NE, ir_ref(f, cnt), ir_int(f, 0)), NULL, NULL));
    ir_add(f, ir_then(br), ir_assign(f, R->nout, ir_int(f, 0)));
    spc_status s = nest(R, 0, ir_then(br), ir_int(f, 0), false, e);
    ir_stmt *el = s ? NULL : ir_else(f, br);
    if (!s && !el) s = SPC_NOMEM(e);
    if (!s) ir_add(f, el, ir_assign(f, R->nout, ir_ref(f, R->o0)));
    if (!s) s = nest(R, 0, el, ir_int(f, 0), true, e);
    return s ? s : ir_verify(f, e);
  }
  ir_add(f, body, ir_assign(f, R->nout, ir_int(f, 0)));
  spc_status s = nest(R, 0, body, ir_int(f, 0), false, e);
  if (s) return s;
  if (cnt >= 0) /* the fill only when asked */
    body = ir_then(ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, cnt), ir_int(f, 0)), NULL, NULL)));
  for (int d = 0; d < R->order; d++) ir_add(f, body, ir_alloc(f, R->crd[d], ir_ref(f, R->nout), false));
  if (R->vout >= 0) ir_add(f, body, ir_alloc(f, R->vout, ir_ref(f, R->nout), false));
  ir_add(f, body, ir_assign(f, R->nout, ir_int(f, 0)));
  if ((s = nest(R, 0, body, ir_int(f, 0), true, e))) return s;
  return ir_verify(f, e);
}

/* The options a tensor was made with (engine, JIT), when the caller gives
 * none. */
static const spc_convert_opts *made_with(const conv_info *I, const spc_convert_opts *o,
                                         spc_convert_opts *dflt) {
  if (o) return o;
  spc_convert_opts_init(dflt);
  dflt->engine = I->engine;
  dflt->no_jit = I->no_jit;
  dflt->jit_dir = I->jit_dir[0] ? I->jit_dir : NULL;
  return dflt;
}

/* The arguments every read-side routine starts with: each level's arrays,
 * the values (unless pattern), the level extents (into extv).  Returns
 * how many, or -1 naming a missing array in e. */
static int level_args(const conv_info *I, const spc_tensor *t, ir_arg *a, int64_t *extv,
                      spc_error *e) {
  int k = 0;
  for (int l = 0; l < I->nlevels; l++)
    for (int q = 0; q < I->lv[l]->lf->narrays; q++) {
      const spc_array *x = spc_level_array_c(&t->lv[l], I->lv[l]->lf->arrays[q].name);
      if (!x) {
        spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "level %d has no array %s", l,
                I->lv[l]->lf->arrays[q].name);
        return -1;
      }
      a[k++] = (ir_arg){.data = x->data, .len = x->len};
    }
  if (t->vt != SPC_PATTERN) a[k++] = (ir_arg){.data = t->val, .len = t->nval};
  for (int l = 0; l < I->nlevels; l++) {
    extv[2 * l] = I->lo[l];
    extv[2 * l + 1] = I->N[l];
  }
  a[k++] = (ir_arg){.data = extv, .len = 2 * I->nlevels};
  return k;
}

/* The read routine of R->I for the routine cache (its remapping parsed
 * and inverted here, freed once the routine is built). */
typedef struct read_req {
  rd *R;
  int order;
  int *p_arr;
} read_req;

static spc_status make_read(void *ctx, asm_rc_val *v, spc_error *e) {
  read_req *q = ctx;
  rd R = *q->R;
  const conv_info *I = R.I;
  spc_remap *r = NULL;
  inv iv[SPC_MAX_ORDER];
  char rt[320];
  spc_status s = asm_remap(I->fmt, q->order, I->params, I->nparams, I->modes, I->nmodes, rt,
                           sizeof rt, &r, e);
  if (!s) s = invert(I, r, iv, e);
  R.r = r;
  R.iv = iv;
  if (!s && !(R.f = ir_func_new(R.at ? "spc_conv_reado" : R.clip ? "spc_conv_readr" : "spc_conv_read")))
    s = SPC_NOMEM(e);
  if (!s && R.checked) ir_func_set_checked(R.f);
  if (!s) s = build_read(&R, q->p_arr, e);
  v->f = R.f;
  spc_remap_free(&r);
  return s;
}

spc_status spc_convert_to_coo(const spc_tensor *t, spc_tensor **out,
                              spc_error *e) {
  return spc_convert_to_coo_ex(t, NULL, out, e);
}

static spc_status top_range(const conv_info *I, const spc_tensor *t, int64_t *b0, int64_t *e0,
                            spc_error *e);

/* Thread k's chunks (k, k + nt, ...) of the read-out in chunks: one call of
 * spc_conv_reado each, arguments a row of A. */
typedef struct rpar_job {
  asm_entry fn;
  const ir_func *f;
  ir_arg *A;
  int np, nk, nt;
  spc_status *st;
} rpar_job;

static void rpar_one(void *job, int k) {
  const rpar_job *J = job;
  for (int c = k; c < J->nk; c += J->nt) {
    spc_error ec;
    spc_error_clear(&ec);
    J->st[c] = asm_call(J->fn, J->f, J->A + (size_t)c * (size_t)J->np, &ec);
  }
}

/* The read-out in chunks on threads: the top level's positions cut into
 * chunks (8 a thread), each chunk's components counted (spc_conv_reado,
 * cnt), then each written at its offset -- the earlier chunks' count -- into
 * the shared arrays, so the COO holds the components in the storage order,
 * as the one-thread routine's, bit for bit.  *c the COO when it went
 * through; nothing made otherwise (any failure: the one-thread read-out
 * runs and reports).  On the auto engine only where the factory has the
 * routine (no compiling at run time for it). */
static spc_status read_out_par(const spc_tensor *t, const conv_info *I, asm_engine *eng,
                               bool checked, spc_tensor **c, spc_error *e) {
  *c = NULL;
  int64_t ns = spc_tensor_nstored(t), b0 = 0, e0 = 0;
  int nt = asm_threads(ns);
  if (nt < 2 || t->order > SPC_MAX_ORDER) return SPC_OK;
  spc_error e2;
  spc_error_clear(&e2);
  if (top_range(I, t, &b0, &e0, &e2) || e0 - b0 < 2) return SPC_OK;
  rd R = {.I = I, .order = t->order, .vt = t->vt, .clip = true, .at = true, .checked = checked};
  uint64_t key[2] = {0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL};
  asm_rk_put(key, 0x726561644fULL /* "readO" */);
  if (checked) asm_rk_put(key, 0x636865636bULL /* "check" */);
  asm_rk_put(key, ((uint64_t)t->order << 8) ^ (uint64_t)t->vt);
  bool can = (eng->want == SPC_ENGINE_AUTO || eng->want == SPC_ENGINE_FACTORY) && asm_rk_info(key, I);
  int p_arr[SPC_MAX_ORDER * SPC_SPEC_MAX];
  read_req q = {&R, t->order, p_arr};
  asm_rc_val v;
  memset(&v, 0, sizeof v);
  bool hit = false, looked = false;
  spc_status s = asm_rc_routine(key, can, true, "read", I->fmt->name, make_read, &q, &v, &hit,
                                &looked, &e2);
  asm_entry fn = !s && looked ? v.fn : NULL;
  bool go = !s && v.f;
  bool noted = false; /* asm_prepare said which engine runs it */
  if (go && !fn && eng->want == SPC_ENGINE_AUTO && checked) {
    /* checked on auto: compiled at run time unless no_jit, else (or where
     * that fails) the interpreter */
    noted = !asm_prepare(eng, v.f, &fn, &e2);
    if (!noted) fn = NULL;
  } else if (go && !fn && eng->want != SPC_ENGINE_GENERIC) {
    /* auto and factory: the factory's routine only; jit: compiled */
    go = eng->want == SPC_ENGINE_JIT && !asm_prepare(eng, v.f, &fn, &e2) && fn;
  }
  int np = go ? ir_nparams(v.f) : 0, nouts = t->order + (t->vt != SPC_PATTERN);
  int nk = (int)(e0 - b0 < 8 * nt ? e0 - b0 : 8 * nt);
  ir_arg *A = go ? spc_calloc((size_t)nk * (size_t)np, sizeof *A) : NULL;
  int64_t extv[2 * SPC_MAX_ORDER], *off = go ? spc_malloc_n(nk + 1, sizeof *off) : NULL;
  spc_status *st = go ? spc_calloc((size_t)nk, sizeof *st) : NULL;
  void *o[SPC_MAX_ORDER + 1] = {NULL};
  go = go && A && off && st;
  int nl = go ? level_args(I, t, A, extv, &e2) : -1, in = nl + nouts;
  go = go && nl >= 0 && np == in + 5;
  for (int k = 1; k < nk && go; k++) memcpy(A + (size_t)k * (size_t)np, A, (size_t)nl * sizeof *A);
  for (int k = 0; k < nk && go; k++) { /* count [q0, q1) */
    ir_arg *a = A + (size_t)k * (size_t)np;
    a[in + 1].s.i64 = b0 + (e0 - b0) * k / nk;
    a[in + 2].s.i64 = b0 + (e0 - b0) * (k + 1) / nk;
    a[in + 3].s.i64 = 1;
  }
  rpar_job J = {.fn = fn, .f = v.f, .A = A, .np = np, .nk = nk, .nt = nt, .st = st};
  if (go) spc_par_for(nt, rpar_one, &J);
  int64_t n = 0;
  for (int k = 0; k < nk && go; k++) {
    off[k] = n;
    int64_t m = A[(size_t)k * (size_t)np + in].s.i64;
    go = !st[k] && m >= 0 && !__builtin_add_overflow(n, m, &n);
  }
  if (go) off[nk] = n;
  size_t w = spc_vtype_size(t->vt);
  for (int d = 0; d < nouts && go; d++)
    go = (o[d] = spc_malloc_n(n ? n : 1, d < t->order ? 8 : w)) != NULL;
  for (int k = 0; k < nk && go; k++) { /* write [q0, q1) from its offset */
    ir_arg *a = A + (size_t)k * (size_t)np;
    for (int d = 0; d < nouts; d++) a[nl + d] = (ir_arg){.data = o[d], .len = n};
    a[in + 3].s.i64 = 0;
    a[in + 4].s.i64 = off[k];
  }
  if (go) spc_par_for(nt, rpar_one, &J);
  for (int k = 0; k < nk && go; k++)
    go = !st[k] && A[(size_t)k * (size_t)np + in].s.i64 == off[k + 1];
  spc_tensor *x = NULL;
  if (go && spc_coo_alloc(t->order, t->dims, n, t->vt, &x, &e2)) go = false;
  for (int d = 0; d < t->order && go && n; d++) {
    spc_array *ca = spc_level_array(&x->lv[d], "crd");
    void *data = o[d];
    if (ca->type == SPC_IDX32) { /* narrowed into a fresh array, on the threads */
      int32_t *x32 = spc_malloc_n(n, sizeof *x32);
      const int64_t *x64 = o[d];
      if (!x32) {
        go = false;
        break;
      }
#pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t i = 0; i < n; i++) x32[i] = (int32_t)x64[i];
      spc_free(o[d]);
      data = x32;
    }
    o[d] = NULL;
    if (ca->owned) spc_free(ca->data);
    ca->data = data;
    ca->owned = true;
  }
  if (go && t->vt != SPC_PATTERN && n) {
    if (x->val_owned) {
      spc_free(x->val);
      x->val = o[t->order];
      o[t->order] = NULL;
    } else {
      memcpy(x->val, o[t->order], (size_t)n * w);
    }
  }
  for (int d = 0; d < nouts; d++) spc_free(o[d]);
  spc_free(A);
  spc_free(off);
  spc_free(st);
  ir_func_free(&v.f);
  if (go) {
    if (hit && eng->info) eng->info->routines_cached++;
    if (fn && looked) asm_note_factory(eng, 1);
    else if (!fn && !noted) asm_note_generic(eng);
    if (eng->info)
      snprintf(eng->info->plan, sizeof eng->info->plan,
               "read out in %d chunks of the top level on %d threads", nk, nt);
    *c = x;
  } else {
    spc_tensor_free(&x);
  }
  (void)e; /* a failure of any kind: the one-thread read-out's to report */
  return SPC_OK;
}

/* The read-out: t's stored components into a new COO *out -- all of them,
 * or (ranged) those under the top level's positions [q0, q1), in the
 * storage order either way; with count, only their number *n (no COO). */
static spc_status read_out(const spc_tensor *t, const spc_convert_opts *o, bool ranged,
                           bool checked, int64_t q0, int64_t q1, bool count, int64_t *n_out,
                           spc_tensor **out, spc_error *e) {
  if (out) *out = NULL;
  if (!spc_is_converted(t))
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                   "tensor of format %s was not made by spc_convert",
                   t ? t->format : "(null)");
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  rd R = {.I = I, .order = t->order, .vt = t->vt, .clip = ranged, .checked = checked};
  spc_convert_opts dflt;
  o = made_with(I, o, &dflt);
  asm_engine E;
  asm_engine_init(&E, o);
  asm_engine *eng = &E;
  ir_arg *args = NULL;
  int p_arr[SPC_MAX_ORDER * SPC_SPEC_MAX];
  int64_t extv[2 * SPC_MAX_ORDER];
  spc_tensor *c = NULL;
  /* the routine cache (assemble_write.c): a format's read routine that the
   * factory has is built once */
  if (!ranged && !count && out) { /* in chunks on threads where that goes through */
    spc_status sp = read_out_par(t, I, eng, checked, &c, e);
    if (sp || c) {
      *out = c;
      return sp;
    }
  }
  uint64_t key[2] = {0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL};
  asm_rk_put(key, ranged ? 0x7265616451ULL /* "readQ" */ : 0x7265616452ULL /* "readR" */);
  if (checked) asm_rk_put(key, 0x636865636bULL /* "check" */);
  asm_rk_put(key, ((uint64_t)t->order << 8) ^ (uint64_t)t->vt);
  bool can = (eng->want == SPC_ENGINE_AUTO || eng->want == SPC_ENGINE_FACTORY) &&
             asm_rk_info(key, I);
  asm_rc_val v;
  bool hit, looked;
  read_req q = {&R, t->order, p_arr};
  spc_status s = asm_rc_routine(key, can, true, "read", I->fmt->name, make_read, &q, &v, &hit,
                                &looked, e);
  R.f = v.f;
  int np = R.f ? ir_nparams(R.f) : 0;
  int nl = 0; /* the level arrays, the values, ext */
  if (!s && !(args = spc_calloc((size_t)np, sizeof *args))) s = SPC_NOMEM(e);
  if (!s) s = (nl = level_args(I, t, args, extv, e)) < 0 ? SPC_ERR_INTERNAL : SPC_OK;
  int first = nl, nouts = t->order + (t->vt != SPC_PATTERN), in = first + nouts;
  if (!s && ranged) { /* after nout: q0, q1, cnt */
    args[in + 1].s.i64 = q0;
    args[in + 2].s.i64 = q1;
    args[in + 3].s.i64 = count;
  }
  if (!s && looked && v.fn) {
    asm_note_factory(eng, 1);
    if (hit && eng->info) eng->info->routines_cached++;
    s = asm_call(v.fn, R.f, args, e);
  } else if (!s) {
    s = asm_run(eng, R.f, args, e);
  }
  int64_t n = s ? 0 : args[in].s.i64;
  if (n_out) *n_out = n;
  if (!s && !ranged && eng->info)
    snprintf(eng->info->plan, sizeof eng->info->plan, "read out by one routine");
  if (!s && !count) {
    /* the COO takes the routine's arrays as they are (its own, allocated
     * but never written, hold no pages): int64 coordinates narrowed in
     * place where the COO's are int32, then cut to size.  A copy held
     * both at once, twice the components' bytes (DIA of a 27-point
     * stencil, 6.9 M entries, written as .mtx) */
    s = spc_coo_alloc(t->order, t->dims, n, t->vt, &c, e);
    for (int d = 0; d < t->order && !s && n; d++) {
      char *x = args[first + d].data;
      spc_array *ca = spc_level_array(&c->lv[d], "crd");
      if (ca->type == SPC_IDX32) {
        for (int64_t i = 0; i < n; i++) { /* forward: 4 i <= 8 i, bytes through memcpy */
          int64_t xv;
          memcpy(&xv, x + 8 * i, 8);
          int32_t w = (int32_t)xv;
          memcpy(x + 4 * i, &w, 4);
        }
        char *cut = spc_realloc(x, (size_t)n * 4);
        if (cut) x = cut;
      }
      if (ca->owned) spc_free(ca->data);
      ca->data = x;
      ca->owned = true;
      args[first + d].data = NULL;
    }
    if (!s && t->vt != SPC_PATTERN && n && c->val_owned) {
      spc_free(c->val);
      c->val = args[first + t->order].data;
      args[first + t->order].data = NULL;
    } else if (!s && t->vt != SPC_PATTERN && n) {
      memcpy(c->val, args[first + t->order].data, (size_t)n * spc_vtype_size(t->vt));
    }
  }
  for (int k = first; args && nl >= 0 && k < first + nouts && k < np; k++) spc_free(args[k].data);
  spc_free(args);
  ir_func_free(&R.f);
  if (s) spc_tensor_free(&c);
  if (out) *out = c;
  else spc_tensor_free(&c);
  return s;
}

spc_status spc_convert_to_coo_ex(const spc_tensor *t,
                                 const spc_convert_opts *o, spc_tensor **out,
                                 spc_error *e) {
  return read_out(t, o, false, false, 0, 0, false, NULL, out, e);
}

/* The read-out of arrays nothing has checked (a file's): every load and
 * store of the routine checked against its array's length.  engine auto:
 * the factory's checked routine where it has one (compiled with the checks
 * the interpreter makes), else -- from CHECKED_JIT_MIN stored positions
 * on, where the interpreter would take longer than a compile -- one
 * compiled at run time (JIT, cached on disk), else the interpreter; a
 * failure is reported by the interpreter, so its words are the same
 * whichever ran first (no_jit: never compiled at run time).  factory: its
 * checked routines only; jit: compiled
 * at run time (built-in formats too); either reports a failure as it
 * found it; generic: the interpreter. */
#define CHECKED_JIT_MIN ((int64_t)1 << 20)
spc_status spc_convert_to_coo_checked(const spc_tensor *t, spc_engine engine, int no_jit,
                                      spc_convert_info *info, spc_tensor **out, spc_error *e) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.engine = engine;
  o.no_jit = engine == SPC_ENGINE_AUTO && (no_jit || spc_tensor_nstored(t) < CHECKED_JIT_MIN);
  o.info = info;
  if (o.engine != SPC_ENGINE_AUTO) return read_out(t, &o, false, true, 0, 0, false, NULL, out, e);
  spc_error e1;
  spc_error_clear(&e1);
  spc_status s = read_out(t, &o, false, true, 0, 0, false, NULL, out, &e1);
  if (s == SPC_ERR_NOMEM && e) *e = e1;
  if (s == SPC_OK || s == SPC_ERR_NOMEM) return s;
  o.engine = SPC_ENGINE_GENERIC;
  return read_out(t, &o, false, true, 0, 0, false, NULL, out, e);
}

/* The stored components under the top level's positions [q0, q1): their
 * number (*out NULL) or a new COO of them, in the storage order. */
spc_status asm_read_part(const spc_tensor *t, int64_t q0, int64_t q1, int64_t *n,
                         spc_tensor **out, spc_error *e) {
  return read_out(t, NULL, true, false, q0, q1, !out, n, out, e);
}

/* For routines built without data: I (fmt and types set) gets the
 * format's default parameters and its levels for this order, *r its
 * remapping and iv the inverse. */
static spc_status dry_info(conv_info *I, int order, spc_remap **r, inv *iv, spc_error *e) {
  const spc_format_spec *fmt = I->fmt;
  I->nparams = fmt->nparams;
  for (int k = 0; k < fmt->nparams; k++)
    I->params[k] = (spc_remap_param){fmt->pnames[k], fmt->pdefaults[k]};
  spc_status s = fmt->remap.text
                     ? spc_remap_parse(&fmt->remap.at, order, I->params, I->nparams, r, e)
                     : spc_remap_identity(order, r, e);
  if (s) return s;
  I->nlevels = (*r)->order_out;
  for (int l = 0; l < I->nlevels; l++)
    I->lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
  if (!fmt->order && I->nlevels < fmt->nlevels - 1)
    for (int l = 0; l < I->nlevels; l++) I->lv[l] = &fmt->lv[l];
  return invert(I, *r, iv, e);
}

spc_status asm_read_routine(const spc_format_spec *fmt, int order,
                            ir_ty index_ty, ir_ty coord_ty, spc_vtype vt, int mode,
                            bool checked, asm_routine_cb cb, void *ctx, spc_error *e) {
  conv_info I = {.fmt = fmt, .index_ty = index_ty, .coord_ty = coord_ty};
  bool ranged = mode == 1;
  rd R = {.I = &I, .order = order, .vt = vt, .clip = mode != 0, .at = mode == 2};
  spc_remap *r = NULL;
  inv iv[SPC_MAX_ORDER];
  int p_arr[SPC_MAX_ORDER * SPC_SPEC_MAX];
  spc_status s = dry_info(&I, order, &r, iv, e);
  R.r = r;
  R.iv = iv;
  if (!s && ranged && !fmt->fill_zero) { /* a writer walks levels of plain coordinates */
    bool plain = true;
    for (int l = 0; l < r->order_out; l++) plain &= r->out[l]->kind == LN_NAME;
    if (plain) {
      spc_remap_free(&r);
      return SPC_OK;
    }
  }
  if (!s && !(R.f = ir_func_new(R.at ? "spc_conv_reado" : ranged ? "spc_conv_readr" : "spc_conv_read")))
    s = SPC_NOMEM(e);
  if (!s && checked) ir_func_set_checked(R.f);
  if (!s) s = build_read(&R, p_arr, e);
  if (!s) s = cb(ctx, R.f, e);
  ir_func_free(&R.f);
  spc_remap_free(&r);
  return s;
}

/* ---- SpMV from the read-side level functions ----------------------------------
 * spmv(arrays..., vals, ext, x, y, q0, q1 [, r0, r1]): for every stored
 * component (i, j, a) under the top-level positions [q0, q1) -- and, for
 * the positions schedule (R->split), under the level-1 positions
 * [r0, r1) -- y[i] += a * x[j] (or y[j] += a * x[i] transposed), in the
 * arithmetic type F64 (C128 for complex values).  The loop nest is the
 * read-back's: the format's begin, end, access and valid, with the
 * remapping inverted.  Its arrays never overlap (restrict in C). */
static spc_status build_spmv(rd *R, spc_error *e) {
  const conv_info *I = R->I;
  ir_func *f = R->f;
  ir_stmt *body = ir_func_body(f);
  char name[64];
  for (int l = 0; l < I->nlevels; l++) {
    const spc_level_spec *ls = I->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      R->arr[l][k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
    }
  }
  R->vals = R->vout = -1;
  if (R->vt != SPC_PATTERN) R->vals = ir_param(f, "vals", asm_value_ty(R->vt), true, IR_IN);
  ir_var ext = ir_param(f, "ext", IR_I64, true, IR_IN);
  R->x = ir_param(f, "x", R->sty, true, IR_IN);
  R->y = ir_param(f, "y", R->sty, true, IR_INOUT);
  R->q0 = ir_param(f, "q0", IR_I64, false, IR_IN);
  R->q1 = ir_param(f, "q1", IR_I64, false, IR_IN);
  if (R->split) {
    R->r0 = ir_param(f, "r0", IR_I64, false, IR_IN);
    R->r1 = ir_param(f, "r1", IR_I64, false, IR_IN);
  }
  ir_func_set_noalias(f);
  for (int l = 0; l < I->nlevels; l++) {
    snprintf(name, sizeof name, "c%d", l);
    R->c[l] = lang_fresh_local(f, name, I->coord_ty, false);
    R->Nv[l] = lang_fresh_local(f, "N", IR_I64, false);
    R->lov[l] = lang_fresh_local(f, "lo", IR_I64, false);
    ir_add(f, body, ir_assign(f, R->lov[l], ir_load(f, ext, ir_int(f, 2 * l))));
    ir_add(f, body, ir_assign(f, R->Nv[l], ir_load(f, ext, ir_int(f, 2 * l + 1))));
  }
  spc_status s = nest(R, 0, body, ir_int(f, 0), false, e);
  return s ? s : ir_verify(f, e);
}

/* The positions of the top level (its begin and end under parent 0),
 * through a tiny routine of the format's own functions (interpreted: O(1)
 * work; built once per format and types, the routine cache's). */
static spc_status build_top(const conv_info *I, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_top_range");
  if (!f) return SPC_NOMEM(e);
  lvbind b;
  asm_bind_init(&b, I->lv[0]->lf, I->lv[0], I->index_ty, I->coord_ty);
  const spc_level_spec *ls = I->lv[0]->lf;
  char name[64];
  for (int k = 0; k < ls->narrays; k++) {
    snprintf(name, sizeof name, "l0_%s", ls->arrays[k].name);
    b.arr[k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
  }
  ir_var ext = ir_param(f, "ext", IR_I64, true, IR_IN);
  ir_var ob = ir_param(f, "b", IR_I64, false, IR_OUT), oe = ir_param(f, "e", IR_I64, false, IR_OUT);
  ir_stmt *body = ir_func_body(f);
  b.N = lang_fresh_local(f, "N", IR_I64, false);
  b.lo = lang_fresh_local(f, "lo", IR_I64, false);
  b.c = lang_fresh_local(f, "c", I->coord_ty, false);
  b.p = lang_fresh_local(f, "p", I->index_ty, false);
  b.q = lang_fresh_local(f, "q", I->index_ty, false);
  ir_var bg = lang_fresh_local(f, "qb", I->index_ty, false), en = lang_fresh_local(f, "qe", I->index_ty, false);
  ir_add(f, body, ir_assign(f, b.lo, ir_load(f, ext, ir_int(f, 0))));
  ir_add(f, body, ir_assign(f, b.N, ir_load(f, ext, ir_int(f, 1))));
  ir_add(f, body, ir_assign(f, b.p, ir_cast(f, I->index_ty, ir_int(f, 0))));
  spc_status s = asm_lower_fn(f, body, &b, SPC_LF_BEGIN, bg, NULL, e);
  if (!s) s = asm_lower_fn(f, body, &b, SPC_LF_END, en, NULL, e);
  if (!s) {
    ir_add(f, body, ir_assign(f, ob, ir_cast(f, IR_I64, ir_ref(f, bg))));
    ir_add(f, body, ir_assign(f, oe, ir_cast(f, IR_I64, ir_ref(f, en))));
    s = ir_verify(f, e);
  }
  return s;
}

static spc_status make_top(void *ctx, asm_rc_val *v, spc_error *e) {
  return build_top(ctx, &v->f, e);
}

/* A routine of I's format and types alone (tag: which), from the routine
 * cache, built by make where missing; the caller interprets it. */
static spc_status info_routine(const conv_info *I, uint64_t tag, const char *what,
                               asm_rc_build_fn make, ir_func **f, spc_error *e) {
  uint64_t key[2] = {0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL};
  asm_rk_put(key, tag);
  asm_rc_val v;
  bool hit, looked;
  spc_status s = asm_rc_routine(key, asm_rk_info(key, I), false, what, I->fmt->name, make,
                                (void *)I, &v, &hit, &looked, e);
  *f = v.f;
  return s;
}

static spc_status top_range(const conv_info *I, const spc_tensor *t, int64_t *b0, int64_t *e0,
                            spc_error *e) {
  ir_func *f = NULL;
  spc_status s = info_routine(I, 0x746f70ULL /* "top" */, "top-range", make_top, &f, e);
  const spc_level_spec *ls = I->lv[0]->lf;
  ir_arg args[SPC_SPEC_MAX + 4] = {{0}};
  int64_t extv[2] = {I->lo[0], I->N[0]};
  int k = 0;
  for (int a = 0; a < ls->narrays && !s; a++) {
    const spc_array *x = spc_level_array_c(&t->lv[0], ls->arrays[a].name);
    args[k++] = (ir_arg){.data = x ? x->data : NULL, .len = x ? x->len : 0};
  }
  args[k++] = (ir_arg){.data = extv, .len = 2};
  if (!s) s = ir_run(f, args, e);
  if (!s) {
    *b0 = args[k].s.i64;
    *e0 = args[k + 1].s.i64;
  }
  ir_func_free(&f);
  return s;
}

/* Whether the positions schedule can split level 1 of I: a second level
 * whose positions are contiguous across parents (`compact`: begin is
 * monotone and end(p) = begin(p + 1)), with begin and end. */
static bool splittable(const conv_info *I) {
  if (I->nlevels < 2 || !(I->lv[1]->lf->props & SPC_LP_COMPACT)) return false;
  lvbind b;
  asm_bind_init(&b, I->lv[1]->lf, I->lv[1], I->index_ty, I->coord_ty);
  return asm_lfn(&b, SPC_LF_BEGIN) && asm_lfn(&b, SPC_LF_END);
}

/* The schedules' cuts, from one routine of level 1's begin and end and
 * level 0's access (run interpreted: O(nt log n) work).  With [b0, e0)
 * the top level's positions and [P0, P1) = [begin1(b0), end1(e0 - 1))
 * level 1's, for k = 0 .. nt (n1 = nt + 1):
 *   cut[k]          where the rows split's part k starts in level 1
 *                   (begin1(b0 + (e0 - b0) k / nt); P1 for k = nt)
 *   cut[n1 + k]     r_k = P0 + (P1 - P0) k / nt, the positions split
 *   cut[2 n1 + k]   the parent owning r_k: the last p in [b0, e0) with
 *                   begin1(p) <= r_k (binary search)
 *   cut[3 n1 + k]   begin1 of that parent (< r_k: it started before)
 *   cut[4 n1 + k]   its coordinate (level 0's access)
 *   cut[5 n1 + k]   end1 of that parent (the balanced rows split's
 *                   other choice of border) */
#define NCUT 6
static spc_status build_cuts(const conv_info *I, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_spmv_split");
  if (!f) return SPC_NOMEM(e);
  lvbind lb[2];
  char name[64];
  for (int l = 0; l < 2; l++) {
    asm_bind_init(&lb[l], I->lv[l]->lf, I->lv[l], I->index_ty, I->coord_ty);
    const spc_level_spec *ls = I->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "l%d_%s", l, ls->arrays[k].name);
      lb[l].arr[k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
    }
    snprintf(name, sizeof name, "lo%d", l);
    lb[l].lo = ir_param(f, name, IR_I64, false, IR_IN);
    snprintf(name, sizeof name, "N%d", l);
    lb[l].N = ir_param(f, name, IR_I64, false, IR_IN);
    lb[l].c = lang_fresh_local(f, "c", I->coord_ty, false);
    lb[l].p = lang_fresh_local(f, "p", I->index_ty, false);
    lb[l].q = lang_fresh_local(f, "q", I->index_ty, false);
  }
  lvbind *b = &lb[1];
  ir_var vb0 = ir_param(f, "b0", IR_I64, false, IR_IN), ve0 = ir_param(f, "e0", IR_I64, false, IR_IN);
  ir_var vnt = ir_param(f, "nt", IR_I64, false, IR_IN);
  ir_var vcut = ir_param(f, "cut", IR_I64, true, IR_INOUT);
  ir_stmt *body = ir_func_body(f);
  ir_var bg = lang_fresh_local(f, "qb", I->index_ty, false);
  ir_var P0 = lang_fresh_local(f, "P0", IR_I64, false), P1 = lang_fresh_local(f, "P1", IR_I64, false);
  ir_var k = lang_fresh_local(f, "k", IR_I64, false), r = lang_fresh_local(f, "r", IR_I64, false);
  ir_var a = lang_fresh_local(f, "a", IR_I64, false), z = lang_fresh_local(f, "z", IR_I64, false);
  ir_var m = lang_fresh_local(f, "m", IR_I64, false), pk = lang_fresh_local(f, "pk", IR_I64, false);
#define REF(v) ir_ref(f, v)
#define BIN(op, x, y) ir_bin(f, op, x, y)
#define SETP(x) ir_add(f, dst, ir_assign(f, b->p, ir_cast(f, I->index_ty, x)))
#define SLOT(j) BIN(IR_ADD, BIN(IR_MUL, ir_int(f, j), BIN(IR_ADD, REF(vnt), ir_int(f, 1))), REF(k))
  ir_stmt *dst = body;
  SETP(REF(vb0));
  spc_status s = asm_lower_fn(f, dst, b, SPC_LF_BEGIN, bg, NULL, e);
  ir_add(f, dst, ir_assign(f, P0, ir_cast(f, IR_I64, REF(bg))));
  SETP(BIN(IR_SUB, REF(ve0), ir_int(f, 1)));
  if (!s) s = asm_lower_fn(f, dst, b, SPC_LF_END, bg, NULL, e);
  ir_add(f, dst, ir_assign(f, P1, ir_cast(f, IR_I64, REF(bg))));
  ir_stmt *loop = ir_add(f, body, ir_for(f, k, ir_int(f, 0), BIN(IR_ADD, REF(vnt), ir_int(f, 1)), NULL));
  dst = ir_body(loop);
  /* rows: part k starts at parent pk */
  ir_add(f, dst, ir_assign(f, pk, BIN(IR_ADD, REF(vb0), BIN(IR_DIV, BIN(IR_MUL, BIN(IR_SUB, REF(ve0), REF(vb0)), REF(k)), REF(vnt)))));
  ir_add(f, dst, ir_store(f, vcut, REF(k), REF(P1)));
  ir_stmt *in = ir_add(f, dst, ir_if(f, BIN(IR_LT, REF(pk), REF(ve0)), NULL, NULL));
  {
    ir_stmt *save = dst;
    dst = ir_then(in);
    SETP(REF(pk));
    if (!s) s = asm_lower_fn(f, dst, b, SPC_LF_BEGIN, bg, NULL, e);
    ir_add(f, dst, ir_store(f, vcut, REF(k), ir_cast(f, IR_I64, REF(bg))));
    dst = save;
  }
  /* positions: border r_k, its owner, the owner's begin and coordinate */
  ir_add(f, dst, ir_assign(f, r, BIN(IR_ADD, REF(P0), BIN(IR_DIV, BIN(IR_MUL, BIN(IR_SUB, REF(P1), REF(P0)), REF(k)), REF(vnt)))));
  ir_add(f, dst, ir_store(f, vcut, SLOT(1), REF(r)));
  ir_add(f, dst, ir_assign(f, a, REF(vb0)));
  ir_add(f, dst, ir_assign(f, z, REF(ve0)));
  ir_stmt *w = ir_add(f, dst, ir_while(f, BIN(IR_LT, REF(a), REF(z)), NULL));
  {
    ir_stmt *save = dst;
    dst = ir_body(w);
    ir_add(f, dst, ir_assign(f, m, BIN(IR_ADD, REF(a), BIN(IR_DIV, BIN(IR_SUB, REF(z), REF(a)), ir_int(f, 2)))));
    SETP(REF(m));
    if (!s) s = asm_lower_fn(f, dst, b, SPC_LF_BEGIN, bg, NULL, e);
    ir_stmt *c = ir_add(f, dst, ir_if(f, BIN(IR_LE, ir_cast(f, IR_I64, REF(bg)), REF(r)), NULL, NULL));
    ir_add(f, ir_then(c), ir_assign(f, a, BIN(IR_ADD, REF(m), ir_int(f, 1))));
    ir_add(f, ir_else(f, c), ir_assign(f, z, REF(m)));
    dst = save;
  }
  ir_add(f, dst, ir_assign(f, a, BIN(IR_SUB, REF(a), ir_int(f, 1))));
  ir_add(f, dst, ir_store(f, vcut, SLOT(2), REF(a)));
  SETP(REF(a));
  if (!s) s = asm_lower_fn(f, dst, b, SPC_LF_BEGIN, bg, NULL, e);
  ir_add(f, dst, ir_store(f, vcut, SLOT(3), ir_cast(f, IR_I64, REF(bg))));
  if (!s) s = asm_lower_fn(f, dst, b, SPC_LF_END, bg, NULL, e);
  ir_add(f, dst, ir_store(f, vcut, SLOT(5), ir_cast(f, IR_I64, REF(bg))));
  ir_add(f, dst, ir_assign(f, lb[0].p, ir_cast(f, I->index_ty, ir_int(f, 0))));
  ir_add(f, dst, ir_assign(f, lb[0].q, ir_cast(f, I->index_ty, REF(a))));
  if (!s) s = asm_lower_fn(f, dst, &lb[0], SPC_LF_ACCESS, lb[0].c, NULL, e);
  ir_add(f, dst, ir_store(f, vcut, SLOT(4), ir_cast(f, IR_I64, REF(lb[0].c))));
#undef REF
#undef BIN
#undef SETP
#undef SLOT
  return s ? s : ir_verify(f, e);
}

static spc_status make_cuts(void *ctx, asm_rc_val *v, spc_error *e) {
  return build_cuts(ctx, &v->f, e);
}

/* The cuts (above) for [b0, e0) in nt parts; the routine built once per
 * format and types (the routine cache's: building it, mostly parsing the
 * level functions, was 13 us of a positions SpMV, interpreting it under
 * 1 us at nt 2). */
static spc_status split_cuts(const conv_info *I, const spc_tensor *t, int64_t b0, int64_t e0,
                             int64_t nt, int64_t *cut, spc_error *e) {
  ir_func *f = NULL;
  spc_status s = info_routine(I, 0x63757473ULL /* "cuts" */, "cuts", make_cuts, &f, e);
  ir_arg args[2 * SPC_SPEC_MAX + 12] = {{0}};
  int na = 0;
  for (int l = 0; l < 2 && !s; l++) {
    const spc_level_spec *ls = I->lv[l]->lf;
    for (int q = 0; q < ls->narrays; q++) {
      const spc_array *x = spc_level_array_c(&t->lv[l], ls->arrays[q].name);
      args[na++] = (ir_arg){.data = x ? x->data : NULL, .len = x ? x->len : 0};
    }
    args[na++].s.i64 = I->lo[l];
    args[na++].s.i64 = I->N[l];
  }
  args[na++].s.i64 = b0;
  args[na++].s.i64 = e0;
  args[na++].s.i64 = nt;
  args[na++] = (ir_arg){.data = cut, .len = NCUT * (nt + 1)};
  if (!s) s = asm_run(NULL, f, args, e);
  ir_func_free(&f);
  return s;
}

/* Whether level 1's segments lie in the parents' order over the top
 * positions [b0, e0) (segs_check): the split clips each thread's rows to a
 * range of positions.  A routine of level 1's begin and end, interpreted,
 * once per tensor (the answer kept in its conv_info). */
static spc_status build_order(const conv_info *I, ir_func **out, spc_error *e) {
  ir_func *f = *out = ir_func_new("spc_spmv_segs");
  if (!f) return SPC_NOMEM(e);
  lvbind b;
  char name[64];
  asm_bind_init(&b, I->lv[1]->lf, I->lv[1], I->index_ty, I->coord_ty);
  const spc_level_spec *ls = I->lv[1]->lf;
  for (int k = 0; k < ls->narrays; k++) {
    snprintf(name, sizeof name, "l1_%s", ls->arrays[k].name);
    b.arr[k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
  }
  b.lo = ir_param(f, "lo1", IR_I64, false, IR_IN);
  b.N = ir_param(f, "N1", IR_I64, false, IR_IN);
  b.c = lang_fresh_local(f, "c", I->coord_ty, false);
  b.p = lang_fresh_local(f, "p", I->index_ty, false);
  b.q = lang_fresh_local(f, "q", I->index_ty, false);
  ir_var vb0 = ir_param(f, "b0", IR_I64, false, IR_IN), ve0 = ir_param(f, "e0", IR_I64, false, IR_IN);
  ir_var ok = ir_param(f, "ok", IR_I64, false, IR_OUT);
  spc_status s = segs_check(f, ir_func_body(f), &b, I->index_ty, IR_I64, vb0, ve0, ok, e);
  return s ? s : ir_verify(f, e);
}

static spc_status make_order(void *ctx, asm_rc_val *v, spc_error *e) {
  return build_order(ctx, &v->f, e);
}

static bool segs_in_order(const conv_info *I, const spc_tensor *t, int64_t b0, int64_t e0) {
  conv_info *M = (conv_info *)(uintptr_t)I; /* its memo only */
  int have = atomic_load_explicit(&M->segs, memory_order_acquire);
  if (have) return have == 1;
  /* every built-in level's end(p) is its begin(p + 1) as written (pos[p +
   * 1], (p + 1) N, p + 1): nothing to check unless a format overrides them */
  const spc_format_level *l1 = I->lv[1];
  if (spc_level_spec_builtin(l1->lf) && !l1->fn[SPC_LF_BEGIN].text && !l1->fn[SPC_LF_END].text) {
    atomic_store_explicit(&M->segs, 1, memory_order_release);
    return true;
  }
  ir_func *f = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = info_routine(I, 0x73656773ULL /* "segs" */, "segments", make_order, &f, &e);
  ir_arg args[SPC_SPEC_MAX + 6] = {{0}};
  int na = 0;
  const spc_level_spec *ls = I->lv[1]->lf;
  for (int q = 0; q < ls->narrays && !s; q++) {
    const spc_array *x = spc_level_array_c(&t->lv[1], ls->arrays[q].name);
    args[na++] = (ir_arg){.data = x ? x->data : NULL, .len = x ? x->len : 0};
  }
  args[na++].s.i64 = I->lo[1];
  args[na++].s.i64 = I->N[1];
  args[na++].s.i64 = b0;
  args[na++].s.i64 = e0;
  if (!s) s = asm_run(NULL, f, args, &e);
  bool ok = !s && args[na].s.i64 == 1; /* a level whose begin or end will not lower: no */
  ir_func_free(&f);
  atomic_store_explicit(&M->segs, ok ? 1 : 2, memory_order_release);
  return ok;
}

typedef struct spmv_plan {
  spc_schedule sched;
  int nt;
  int64_t b0, e0;
  int64_t *cut; /* positions: split_cuts's (spc_malloc'ed) */
  bool balanced;  /* rows: part k is the top positions [at[k], at[k + 1]) */
  int64_t at[65];
} spmv_plan;

/* auto balances when the rows split would give a thread more than
 * AUTO_SHARE times its share of level 1's positions and at least
 * AUTO_EXCESS positions over it (below that, balancing saves little):
 * whole rows, cut at the row border nearest each equal share of the
 * positions (balanced_rows), so every row is still summed by one thread
 * left to right, SciPy's order and one thread's bits.  It never splits a
 * row as positions does: a split row's pieces summed apart round
 * differently, and where the row cancels (a row of 1e16, ones, -1e16,
 * ones) by far more than a tolerance against the sequential sum.  A row
 * longer than a share stays on one thread; `positions` asked splits it.
 * Planning the cuts (top_range's and the cuts' routines, interpreted)
 * costs 1-2 us, once per tensor and thread count (auto's plan is kept in
 * the tensor: plan_spmv); AUTO_EXCESS 4096 positions, about 1.5 us of
 * products at 0.35 ns each, repay it on the second product (two threads,
 * us, equal / balanced rows: bcsstk13, 10068 over, 22.6 / 18.6; arrow,
 * 23249 over, 75.6 / 59.4; at 32768 both ran equal rows). */
#define AUTO_SHARE 1.2
#define AUTO_EXCESS 4096
/* auto runs on at most one thread per AUTO_PER_THREAD stored entries:
 * waking a second thread costs more than it saves below that (one thread
 * against two, rows, us: 1,179 entries 0.60 / 1.48, 1,910 1.03 / 1.58,
 * 12,349 5.75 / 4.91) */
#define AUTO_PER_THREAD 4096

/* The balanced rows split from the cuts of n equal shares of level 1's
 * positions: the border of part k (0 < k < n) at the row owning the k-th
 * share's first position, before that row (its begin) or after it (its
 * end), whichever is nearer that position; borders never go back.  at[]
 * gets the top positions, the return the most level-1 positions a part
 * holds. */
static int64_t balanced_rows(const spmv_plan *P, int64_t n, int64_t *at) {
  const int64_t n1 = n + 1, *rk = P->cut + n1, *own = P->cut + 2 * n1, *beg = P->cut + 3 * n1,
                *end = P->cut + 5 * n1;
  int64_t prev = rk[0], most = 0;
  at[0] = P->b0;
  for (int64_t k = 1; k <= n; k++) {
    int64_t a = P->e0, q = rk[n];
    if (k < n) {
      bool after = end[k] - rk[k] < rk[k] - beg[k];
      a = after ? own[k] + 1 : own[k];
      q = after ? end[k] : beg[k];
      if (a < at[k - 1]) a = at[k - 1], q = prev;
    }
    at[k] = a;
    if (q - prev > most) most = q - prev;
    prev = q;
  }
  return most;
}

/* The schedule and thread count for t (a note in info saying why, when
 * auto chose or positions could not run). */
static spc_status plan_made(const conv_info *I, const spc_tensor *t, int threads, spc_schedule want,
                            spc_kernel_info *info, spmv_plan *P, spc_error *e) {
  P->nt = threads > 0 ? threads : 1;
  if (P->nt > 64) P->nt = 64;
  P->sched = want == SPC_SCHED_LANES ? SPC_SCHED_LANES : SPC_SCHED_ROWS; /* lanes: split as rows */
  P->cut = NULL;
  P->balanced = false;
  char *note = info ? info->note : NULL;
  size_t nn = info ? sizeof info->note : 0;
  if (note) note[0] = 0;
  if (info) info->paired = 0;
  const bool autos = want == SPC_SCHED_AUTO;
  const int64_t nz = autos ? spc_tensor_nstored(t) : 0, most = nz / AUTO_PER_THREAD;
  if (autos && P->nt > 1 && most < P->nt) {
    if (note)
      snprintf(note, nn, "auto: %lld thread%s (%lld stored entries: one thread per %d at most)",
               (long long)(most > 1 ? most : 1), most > 1 ? "s" : "", (long long)nz, AUTO_PER_THREAD);
    P->nt = most > 1 ? (int)most : 1;
  }
  if (P->nt == 1 && want != SPC_SCHED_POSITIONS) {
    /* one call over all of the top level: no range to find (building and
     * interpreting top_range's routine costs more than the product of a
     * small matrix); the kernel's clip to [q0, q1) then keeps every position */
    bool i32 = I->index_ty == IR_I32;
    P->b0 = i32 ? INT32_MIN : INT64_MIN;
    P->e0 = i32 ? INT32_MAX : INT64_MAX;
    return SPC_OK;
  }
  spc_status s = top_range(I, t, &P->b0, &P->e0, e);
  if (s) return s;
  bool can = splittable(I) && P->e0 > P->b0;
  if (want == SPC_SCHED_POSITIONS && !can && note)
    snprintf(note, nn, "positions schedule: level 1 of %s (%s) has no contiguous positions to "
             "split; rows instead", I->fmt->name, I->lv[I->nlevels > 1]->lf->name);
  /* (auto on more than one thread has 2 AUTO_PER_THREAD = 8192 stored
   * entries or more: enough for a thread to be AUTO_EXCESS over its share,
   * so the cuts are always planned -- once, plan_spmv keeping them) */
  if (want == SPC_SCHED_ROWS || want == SPC_SCHED_LANES || !can || (autos && P->nt == 1)) {
    if (P->e0 - P->b0 < 2 * P->nt) P->nt = 1;
    return SPC_OK;
  }
  if (!segs_in_order(I, t, P->b0, P->e0)) { /* the split would clip rows to others' positions */
    if (note)
      snprintf(note, nn, "%s: level 1 of %s (%s) does not lay its segments out in the rows' order; "
               "rows instead", autos ? "auto" : "positions schedule", I->fmt->name, I->lv[1]->lf->name);
    if (P->e0 - P->b0 < 2 * P->nt) P->nt = 1;
    return SPC_OK;
  }
  int64_t n = P->nt;
  if (!(P->cut = spc_malloc((size_t)(NCUT * (n + 1)) * sizeof *P->cut))) return SPC_NOMEM(e);
  spc_error se;
  spc_error_clear(&se);
  s = split_cuts(I, t, P->b0, P->e0, n, P->cut, &se);
  if (s == SPC_ERR_NOMEM) return spc_err(e, s, NULL, 0, 0, "%s", se.msg);
  if (s) { /* a level-1 begin this routine cannot evaluate alone: rows */
    if (note) snprintf(note, nn, "positions schedule: %.200s; rows instead", se.msg);
    spc_free(P->cut);
    P->cut = NULL;
    if (P->e0 - P->b0 < 2 * P->nt) P->nt = 1;
    return SPC_OK;
  }
  int64_t total = P->cut[n] - P->cut[0], busiest = 0;
  for (int64_t k = 0; k < n; k++)
    if (P->cut[k + 1] - P->cut[k] > busiest) busiest = P->cut[k + 1] - P->cut[k];
  double share = total > 0 ? (double)busiest * (double)n / (double)total : 1.0;
  int64_t excess = busiest - total / n;
  P->sched = SPC_SCHED_POSITIONS;
  if (autos) {
    if (share > AUTO_SHARE && excess >= AUTO_EXCESS) {
      int64_t heavy = balanced_rows(P, n, P->at);
      double bal = total > 0 ? (double)heavy * (double)n / (double)total : 1.0;
      if (note)
        snprintf(note, nn, "auto: rows balanced by stored entries (equal rows would give a thread %.2f times "
                 "its share, these %.2f; no row split)", share, bal);
      P->sched = SPC_SCHED_ROWS;
      P->balanced = true;
      return SPC_OK;
    } else {
      if (note)
        snprintf(note, nn, "auto: rows (the rows split gives a thread %.2f times its share, %lld positions over it)",
                 share, (long long)(excess > 0 ? excess : 0));
      P->sched = SPC_SCHED_ROWS;
      if (P->e0 - P->b0 < 2 * P->nt) P->nt = 1;
      return SPC_OK;
    }
  }
  if (total < 2 * n) { /* too little to split: one chunk */
    P->nt = 1;
    s = split_cuts(I, t, P->b0, P->e0, 1, P->cut, e);
  }
  return s;
}

/* plan_made, auto's plan on more than one thread kept in the tensor's
 * memo (I->amemo) for the next product on as many threads: auto's plan
 * never needs the positions' cuts once made (it runs rows, equal or
 * balanced), so the memo holds all of it, the note too. */
/* The memos' lock: a pthread mutex, not an omp critical section -- the
 * same exclusion, but one ThreadSanitizer sees (libgomp's lock is not
 * instrumented, so every caller's use of the memo read as a race). */
static pthread_mutex_t amemo_mu = PTHREAD_MUTEX_INITIALIZER;
static spc_status plan_spmv(const conv_info *I, const spc_tensor *t, int threads, spc_schedule want,
                            spc_kernel_info *info, spmv_plan *P, spc_error *e) {
  if (want != SPC_SCHED_AUTO || threads < 2) return plan_made(I, t, threads, want, info, P, e);
  struct conv_amemo *M = &((conv_info *)(uintptr_t)I)->amemo; /* its memo only */
  bool hit = false;
  pthread_mutex_lock(&amemo_mu);
  if (M->req == threads) {
    hit = true;
    *P = (spmv_plan){.sched = (spc_schedule)M->sched, .nt = M->nt, .b0 = M->b0, .e0 = M->e0,
                     .balanced = M->balanced};
    memcpy(P->at, M->at, sizeof P->at);
    if (info) memcpy(info->note, M->note, sizeof info->note);
  }
  pthread_mutex_unlock(&amemo_mu);
  if (hit) {
    if (info) info->paired = 0;
    return SPC_OK;
  }
  spc_kernel_info own; /* the note kept for later calls that ask for it */
  if (!info) memset(&own, 0, sizeof own), info = &own;
  spc_status s = plan_made(I, t, threads, want, info, P, e);
  if (!s && P->sched == SPC_SCHED_ROWS) {
    pthread_mutex_lock(&amemo_mu);
    *M = (struct conv_amemo){.req = threads, .nt = P->nt, .sched = (int)P->sched, .balanced = P->balanced,
                             .b0 = P->b0, .e0 = P->e0};
    memcpy(M->at, P->at, sizeof M->at);
    memcpy(M->note, info->note, sizeof M->note);
    pthread_mutex_unlock(&amemo_mu);
  }
  return s;
}

/* Thread k's calls.  A thread writes y directly where no other thread
 * writes the same entries: always when y is not owned by the top level
 * (then every thread has a partial), else its rows part, or its positions
 * chunk except the head piece of a parent an earlier thread started
 * (that piece goes to the thread's partial, added after, in thread
 * order: the bits of summing every thread's partial in order). */
typedef struct spmv_call {
  int64_t q0, q1, r0, r1;
  bool to_part;
} spmv_call;

static int thread_calls(const spmv_plan *P, int k, bool owned, spmv_call c[2]) {
  int64_t n = P->nt;
  bool part = n > 1 && !owned;
  if (P->sched == SPC_SCHED_ROWS || P->sched == SPC_SCHED_LANES) {
    if (n == 1) c[0] = (spmv_call){P->b0, P->e0, 0, 0, part}; /* (the whole index range: no arithmetic) */
    else if (P->balanced) c[0] = (spmv_call){P->at[k], P->at[k + 1], 0, 0, part};
    else c[0] = (spmv_call){P->b0 + (P->e0 - P->b0) * k / n, P->b0 + (P->e0 - P->b0) * (k + 1) / n, 0, 0, part};
    return 1;
  }
  const int64_t *rk = P->cut + n + 1, *own = P->cut + 2 * (n + 1), *beg = P->cut + 3 * (n + 1);
  if (rk[k] >= rk[k + 1]) return 0;
  if (part || beg[k] >= rk[k]) {
    c[0] = (spmv_call){own[k], own[k + 1] + 1, rk[k], rk[k + 1], part};
    return 1;
  }
  c[0] = (spmv_call){own[k], own[k] + 1, rk[k], rk[k + 1], true};
  c[1] = (spmv_call){own[k] + 1, own[k + 1] + 1, rk[k], rk[k + 1], false};
  return 2;
}

/* Whether every entry of y is written under one top-level position: y's
 * index comes from level 0's coordinate (times K, plus a coordinate
 * below under K), and level 0 is unique. */
/* Whether the rows schedule takes rows two at a time (pair_loop, where
 * the format allows: pair_fit): for rows of 24 or more stored entries on
 * average.  Shorter rows lose more to the pair's set-up than the second
 * add chain gains (bench/README, "Session 14: two rows at a time": one
 * thread, pushpull (50 a row) 115 -> 85 us, Groebner_id2003_aug (35)
 * 119 -> 85, bcsstk13 (43) 44 -> 37; rows of 24 level; zenios (10)
 * 14 -> 15, rajat01 (6) 25 -> 28). */
static bool pair_wanted(const spc_tensor *t, bool transpose) {
  int64_t rows = t->dims[transpose ? 1 : 0];
  return rows > 1 && spc_tensor_nstored(t) >= 24 * rows;
}

static bool y_owned(const conv_info *I, const inv *iv, bool transpose) {
  const inv *v = &iv[transpose ? 1 : 0];
  return v->a == 0 && v->b != 0 && I->lv[0]->unique && (I->lv[0]->lf->props & SPC_LP_UNIQUE);
}

/* Whether the lanes schedule applies: y's index comes from the levels
 * above the innermost (CSR's rows; not CSC's, nor a transpose's). */
static bool lanes_fit(const conv_info *I, const inv *iv, bool transpose) {
  const inv *v = &iv[transpose ? 1 : 0];
  int in = I->nlevels - 1;
  return in > 0 && v->a < in && v->b < in;
}

/* ---- compiled SpMV routines kept per process ----------------------------------
 * Finding a compiled routine (asm_prepare) emits its C to hash it: about
 * 50 us for SpMV, as long as the product of a matrix in cache.  The
 * entries found (factory functions, or JIT objects, which stay loaded)
 * are kept here under a hash of everything the routine's text depends
 * on: the tensor format's YAML and its levels' (user specs included),
 * parameters, mode order, index / coordinate / value types, transpose,
 * schedule, and the engine options.  Interpreted runs are not kept (the
 * interpreter needs the IR). */
typedef struct spmv_prep {
  uint64_t h1, h2;
  asm_entry fn;
  inv iv[2];
  bool no_same; /* under auto's one-sign lanes key: the rows routine, the
                   format having no one-sign lanes (refused once, not
                   built again on every call) */
} spmv_prep;
enum { NPREP = 64 };
static spmv_prep prep[NPREP];
static int nprep, prep_next;

/* two 64-bit lanes, fed 8 bytes at a time (the tail with its length):
 * the key of every call, so a byte at a time cost as much as the
 * product of a small matrix */
static void hword(uint64_t *h, uint64_t w) {
  h[0] = (h[0] ^ w) * 0x9E3779B97F4A7C15ULL;
  h[0] ^= h[0] >> 29;
  h[1] = (h[1] + w) * 0xBF58476D1CE4E5B9ULL;
  h[1] ^= h[1] >> 31;
}
static void hmix(uint64_t *h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (; n >= 8; c += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, c, 8);
    hword(h, w);
  }
  uint64_t w = (uint64_t)n << 56;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)c[i] << (8 * i);
  hword(h, w);
}
static void hstr(uint64_t *h, const char *s) {
  hmix(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static void prep_key(const conv_info *I, spc_vtype vt, bool transpose, bool split, bool lanes,
                     bool pair, bool same, const asm_engine *E, uint64_t h[2]) {
  conv_info *M = (conv_info *)(uintptr_t)I; /* its memo only */
  if (atomic_load_explicit(&M->kh_made, memory_order_acquire)) {
    h[0] = atomic_load_explicit(&M->kh[0], memory_order_relaxed);
    h[1] = atomic_load_explicit(&M->kh[1], memory_order_relaxed);
  } else {
    h[0] = 0xcbf29ce484222325ULL;
    h[1] = 0x84222325cbf29ce4ULL;
    hstr(h, I->fmt->name);
    hstr(h, I->fmt->yaml);
    hstr(h, I->fmt->remap.text);
    int64_t v[5] = {I->nlevels, I->nparams, I->nmodes, (int64_t)I->index_ty, (int64_t)I->coord_ty};
    hmix(h, v, sizeof v);
    for (int l = 0; l < I->nlevels; l++) {
      hstr(h, I->lv[l]->lf->name);
      hstr(h, I->lv[l]->lf->yaml);
    }
    for (int k = 0; k < I->nparams; k++) {
      hstr(h, I->params[k].name);
      hmix(h, &I->params[k].value, sizeof I->params[k].value);
    }
    hmix(h, I->modes, sizeof I->modes[0] * (size_t)I->nmodes);
    /* racing first calls store the same values */
    atomic_store_explicit(&M->kh[0], h[0], memory_order_relaxed);
    atomic_store_explicit(&M->kh[1], h[1], memory_order_relaxed);
    atomic_store_explicit(&M->kh_made, 1, memory_order_release);
  }
  int64_t v[3] = {(int64_t)vt, (int64_t)transpose * 16 + same * 8 + pair * 4 + split * 2 + lanes,
                  (int64_t)E->want * 2 + E->no_jit};
  hmix(h, v, sizeof v);
  hstr(h, E->o ? E->o->jit_dir : NULL);
}

static pthread_mutex_t prep_mu = PTHREAD_MUTEX_INITIALIZER; /* (see amemo_mu) */
static bool prep_get(const uint64_t h[2], spmv_prep *out) {
  bool hit = false;
  pthread_mutex_lock(&prep_mu);
  for (int k = 0; k < nprep && !hit; k++)
    if (prep[k].h1 == h[0] && prep[k].h2 == h[1]) *out = prep[k], hit = true;
  pthread_mutex_unlock(&prep_mu);
  return hit;
}

static void prep_put(const uint64_t h[2], asm_entry fn, const inv *iv, bool no_same) {
  pthread_mutex_lock(&prep_mu);
  spmv_prep *p = &prep[prep_next];
  *p = (spmv_prep){h[0], h[1], fn, {iv[0], iv[1]}, no_same};
  prep_next = (prep_next + 1) % NPREP;
  if (nprep < NPREP) nprep++;
  pthread_mutex_unlock(&prep_mu);
}

/* Whether auto tries the lanes kept row by row where a row's products
 * are nonnegative (spmv_lanes_same): up to 64 values of t and 64 entries
 * of x, evenly spaced, each sample of one sign (zeros aside), the two
 * signs alike.  Only a guess: a row holding a negative product is summed
 * in order anyway, after its lanes (slower than rows then); never wrong. */
static bool same_likely(const spc_tensor *t, const double *x, int64_t nx) {
  int64_t nv = 0;
  const double *v = spc_tensor_values(t, &nv);
  const double *a[2] = {v, x};
  int64_t n[2] = {v ? nv : 0, nx};
  int sign[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    int64_t step = n[k] > 64 ? n[k] / 64 : 1;
    for (int64_t i = 0; i < n[k]; i += step) {
      double d = a[k][i];
      int s = d > 0 ? 1 : d < 0 ? -1 : d == 0 ? 0 : 2; /* NaN: 2 */
      if (s == 2 || (s && sign[k] && s != sign[k])) return false;
      if (s) sign[k] = s;
    }
  }
  return !(sign[0] && sign[1] && sign[0] != sign[1]);
}

/* Lanes (auto's one-sign lanes, or asked) not for this matrix: the rows
 * schedule's routine (paired where rows would be), looked up again. */
static void rows_instead(rd *R, const spc_tensor *t, bool transpose, const asm_engine *E, uint64_t h[2],
                     bool *kept, asm_entry *fn, spmv_prep *hit) {
  R->same = R->lanes = false;
  R->pair = pair_wanted(t, transpose);
  *kept = false;
  *fn = NULL;
  if (E->want != SPC_ENGINE_GENERIC) {
    prep_key(R->I, t->vt, transpose, R->split, false, R->pair, false, E, h);
    if ((*kept = prep_get(h, hit))) *fn = hit->fn;
  }
}

/* Thread k's calls of the SpMV routine (spc_conv_spmv). */
typedef struct spmv_job {
  const conv_info *I;
  const spc_tensor *t;
  const void *x;
  void *y;
  int64_t nx, ny;
  char **part;
  spmv_call (*calls)[2];
  const int *ncalls;
  asm_entry fn;
  ir_func *f;
  spc_status *st;
  spc_error *ee;
} spmv_job;

static void spmv_one(void *job, int k) {
  const spmv_job *J = job;
  ir_arg a[SPC_MAX_ORDER * SPC_SPEC_MAX + 8];
  int64_t extv[2 * SPC_MAX_ORDER];
  spc_error_clear(&J->ee[k]);
  int na = level_args(J->I, J->t, a, extv, &J->ee[k]);
  if (na < 0) {
    J->st[k] = SPC_ERR_INTERNAL;
    return;
  }
  /* the routine's other six parameters (level_args set the rest: not the
   * whole 4 KB array cleared on every call) */
  memset(a + na, 0, 6 * sizeof *a);
  a[na++] = (ir_arg){.data = (void *)J->x, .len = J->nx};
  for (int c = 0; c < J->ncalls[k] && !J->st[k]; c++) {
    const spmv_call *cl = &J->calls[k][c];
    a[na] = (ir_arg){.data = cl->to_part ? J->part[k] : J->y, .len = J->ny};
    a[na + 1].s.i64 = cl->q0;
    a[na + 2].s.i64 = cl->q1;
    a[na + 3].s.i64 = cl->r0;
    a[na + 4].s.i64 = cl->r1;
    J->st[k] = asm_call(J->fn, J->f, a, &J->ee[k]);
  }
}

spc_status spc_conv_spmv(const spc_tensor *t, bool transpose, const void *x, void *y,
                         int threads, spc_schedule sched, spc_kernel_info *info,
                         const spc_convert_opts *o, spc_error *e) {
  if (!spc_is_converted(t) || t->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv needs a matrix in a format made by spconv");
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  spc_convert_opts dflt;
  o = made_with(I, o, &dflt);
  asm_engine E;
  asm_engine_init(&E, o);
  spmv_plan P = {0};
  spc_status s = plan_spmv(I, t, threads, sched, info, &P, e);
  rd R = {.I = I, .order = 2, .vt = t->vt, .spmv = true, .transpose = transpose,
          .split = P.sched == SPC_SCHED_POSITIONS, .sty = t->vt == SPC_C128 ? IR_C128 : IR_F64};
  spc_remap *r = NULL;
  inv iv[SPC_MAX_ORDER];
  char rt[320];
  uint64_t h[2];
  spmv_prep hit;
  asm_entry fn = NULL;
  bool kept = false;
  /* lanes asked: known to fit once the remapping is inverted (a routine
   * kept under the lanes key fits: the key says the format) */
  R.lanes = P.sched == SPC_SCHED_LANES;
  R.pair = pair_wanted(t, transpose);
  /* auto, where rows would be paired: lanes kept row by row where the
   * products are nonnegative, when the values and x sampled are */
  R.same = !s && sched == SPC_SCHED_AUTO && P.sched == SPC_SCHED_ROWS && R.pair && t->vt == SPC_F64 &&
           I->nlevels == 2 && same_likely(t, (const double *)x, t->dims[transpose ? 0 : 1]);
  if (R.same) R.lanes = true, R.pair = false;
  uint64_t hsame[2] = {0, 0};
  bool refused = false; /* the one-sign lanes refused: rows kept under hsame too */
  if (!s && E.want != SPC_ENGINE_GENERIC) {
    prep_key(I, t->vt, transpose, R.split, R.lanes, R.pair, R.same, &E, h);
    hsame[0] = h[0], hsame[1] = h[1];
    if ((kept = prep_get(h, &hit))) fn = hit.fn, iv[0] = hit.iv[0], iv[1] = hit.iv[1];
    if (kept && hit.no_same) R.same = R.lanes = false, R.pair = pair_wanted(t, transpose);
  }
  if (!s && !kept) s = asm_remap(I->fmt, 2, I->params, I->nparams, I->modes, I->nmodes, rt, sizeof rt, &r, e);
  if (!s && !kept) s = invert(I, r, iv, e);
  R.r = r;
  R.iv = iv;
  if (!s && R.same && !kept && (!lanes_fit(I, iv, transpose) || !rows_own_y(&R))) { /* not its shape: rows */
    rows_instead(&R, t, transpose, &E, h, &kept, &fn, &hit);
    refused = true;
  }
  if (!s && R.lanes && !lanes_fit(I, iv, transpose)) { /* rows instead (not kept under the lanes key) */
    P.sched = SPC_SCHED_ROWS;
    if (info && !info->note[0])
      snprintf(info->note, sizeof info->note,
               "lanes schedule: y's index is not fixed under the innermost level of %s%s; rows "
               "instead", I->fmt->name, transpose ? " (transposed)" : "");
    rows_instead(&R, t, transpose, &E, h, &kept, &fn, &hit);
  }
  if (!s && !kept && !(R.f = ir_func_new("spc_spmv"))) s = SPC_NOMEM(e);
  if (!s && !kept && (s = build_spmv(&R, e)) == SPC_ERR_UNSUPPORTED && R.same) {
    /* a level access the lanes' call does not read (not crd[q]): rows */
    s = SPC_OK;
    if (e) spc_error_clear(e);
    ir_func_free(&R.f);
    rows_instead(&R, t, transpose, &E, h, &kept, &fn, &hit);
    refused = true;
    if (!kept && !(R.f = ir_func_new("spc_spmv"))) s = SPC_NOMEM(e);
    if (!s && !kept) s = build_spmv(&R, e);
  }
  int64_t ny = t->dims[transpose ? 1 : 0], nx = t->dims[transpose ? 0 : 1];
  size_t w = t->vt == SPC_C128 ? 16 : 8, yb = (size_t)(ny ? ny : 1) * w;
  int nt = P.nt;
  bool owned = !s && y_owned(I, iv, transpose);
  char *part[64] = {NULL}; /* thread k's partial y, where it needs one */
  spmv_call calls[64][2];
  int ncalls[64];
  for (int k = 0; k < nt && !s; k++) {
    ncalls[k] = thread_calls(&P, k, owned, calls[k]);
    bool need = false;
    for (int c = 0; c < ncalls[k]; c++) need |= calls[k][c].to_part;
    if (need && !(part[k] = spc_calloc(1, yb))) s = SPC_NOMEM(e);
  }
  if (!s && !kept) {
    s = asm_prepare(&E, R.f, &fn, e); /* compiled (or looked up) once */
    if (!s && fn) prep_put(h, fn, iv, false);
  }
  if (!s && fn && refused && E.want != SPC_ENGINE_GENERIC) prep_put(hsame, fn, iv, true);
  if (!s) {
    spc_status st[64] = {SPC_OK};
    spc_error ee[64];
    spmv_job J = {.I = I, .t = t, .x = x, .y = y, .nx = nx, .ny = ny, .part = part,
                  .calls = calls, .ncalls = ncalls, .fn = fn, .f = R.f, .st = st, .ee = ee};
    spc_par_for(nt, spmv_one, &J);
    for (int k = 0; k < nt && !s; k++)
      if (st[k]) {
        s = st[k];
        if (e) *e = ee[k];
      }
    /* partials summed in thread order: one result per thread count; an
     * owned y's partials hold one parent's entries: [c K, c K + K) */
    const inv *v = &iv[transpose ? 1 : 0];
    int64_t K = v->b >= 0 ? v->K : 1, dw = (int64_t)(w / 8);
    for (int k = 0; k < nt && !s; k++) {
      if (!part[k]) continue;
      int64_t lo = 0, hi = ny;
      if (owned) {
        lo = P.cut[4 * (nt + 1) + k] * K;
        hi = lo + K < ny ? lo + K : ny;
        lo = lo < 0 ? 0 : lo;
      }
      const double *p = (const double *)(const void *)part[k];
      for (int64_t i = lo * dw; i < hi * dw; i++) ((double *)y)[i] += p[i];
    }
  }
  if (!s && info) {
    info->used = R.same ? SPC_SCHED_LANES : P.sched;
    info->threads = nt;
    info->paired = pair_fit(&R);
    if (R.same) {
      size_t n = strlen(info->note);
      snprintf(info->note + n, sizeof info->note - n, "%slanes where a row's products are nonnegative "
               "(within 5.7e-13 of the ordered sum), else in order", n ? "; then " : "auto: ");
    }
  }
  for (int k = 0; k < nt; k++) spc_free(part[k]);
  spc_free(P.cut);
  ir_func_free(&R.f);
  spc_remap_free(&r);
  return s;
}

spc_status asm_spmv_routine(const spc_format_spec *fmt, ir_ty index_ty, ir_ty coord_ty,
                            spc_vtype vt, bool transpose, bool split, bool lanes, bool pair,
                            bool same, asm_routine_cb cb, void *ctx, spc_error *e) {
  conv_info I = {.fmt = fmt, .index_ty = index_ty, .coord_ty = coord_ty};
  rd R = {.I = &I, .order = 2, .vt = vt, .spmv = true, .transpose = transpose, .split = split,
          .lanes = lanes || same, .pair = pair, .same = same, .sty = vt == SPC_C128 ? IR_C128 : IR_F64};
  spc_remap *r = NULL;
  inv iv[SPC_MAX_ORDER];
  spc_status s = dry_info(&I, 2, &r, iv, e);
  R.r = r;
  R.iv = iv;
  if (!s && split && !splittable(&I)) s = SPC_ERR_UNSUPPORTED; /* positions never runs */
  if (!s && R.lanes && (split || !lanes_fit(&I, iv, transpose))) s = SPC_ERR_UNSUPPORTED; /* rows runs */
  if (!s && same && (vt != SPC_F64 || pair || !rows_own_y(&R))) s = SPC_ERR_UNSUPPORTED; /* rows runs */
  if (!s && pair && !pair_fit(&R)) s = SPC_ERR_UNSUPPORTED; /* the same text as without */
  if (!s && !(R.f = ir_func_new("spc_spmv"))) s = SPC_NOMEM(e);
  if (!s) s = build_spmv(&R, e);
  if (!s) s = cb(ctx, R.f, e);
  ir_func_free(&R.f);
  spc_remap_free(&r);
  return s;
}

spc_status asm_read_info(conv_info *I, int order, spc_remap **r, asm_inv *out, spc_error *e) {
  inv iv[SPC_MAX_ORDER];
  spc_status s = dry_info(I, order, r, iv, e);
  for (int d = 0; d < order && !s; d++) out[d] = (asm_inv){iv[d].a, iv[d].b, iv[d].K};
  return s;
}

/* ---- a source read through its levels, inside another routine ----------------
 * The fused routines of assemble_write.c (the counting plan over a
 * converted source) iterate the source with this nest instead of reading
 * it out to a COO first: same begin, end, access, valid and fill-zero
 * checks, same order, so the same components in the same order. */
struct asm_src {
  rd R;
  conv_info I; /* a copy: the nest reads fmt, levels, types, parameters */
  spc_remap *r;
  inv iv[SPC_MAX_ORDER];
  char rt[320]; /* the remapping text made from a mode order */
};

spc_status asm_src_new(const conv_info *I, int order, spc_vtype vt, bool range, ir_func *f,
                       asm_src **out, spc_error *e) {
  asm_src *S = spc_calloc(1, sizeof *S);
  *out = S;
  if (!S) return SPC_NOMEM(e);
  S->I = *I;
  spc_status s = asm_remap(I->fmt, order, S->I.params, S->I.nparams, S->I.modes, S->I.nmodes,
                           S->rt, sizeof S->rt, &S->r, e);
  if (!s) s = invert(&S->I, S->r, S->iv, e);
  if (s) return s;
  if (S->r->order_out != I->nlevels)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "source levels do not match its remapping");
  rd *R = &S->R;
  *R = (rd){.I = &S->I, .order = order, .vt = vt, .r = S->r, .iv = S->iv, .f = f, .stop = -1};
  char name[64];
  for (int l = 0; l < S->I.nlevels; l++) {
    const spc_level_spec *ls = S->I.lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "s%d_%s", l, ls->arrays[k].name);
      R->arr[l][k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, S->I.index_ty, S->I.coord_ty),
                              true, IR_IN);
    }
  }
  R->vals = R->vout = -1;
  if (vt != SPC_PATTERN) R->vals = ir_param(f, "svals", asm_value_ty(vt), true, IR_IN);
  ir_var ext = ir_param(f, "sext", IR_I64, true, IR_IN);
  if (range) {
    R->clip = true;
    R->q0 = ir_param(f, "sq0", IR_I64, false, IR_IN);
    R->q1 = ir_param(f, "sq1", IR_I64, false, IR_IN);
  }
  ir_stmt *body = ir_func_body(f);
  for (int l = 0; l < S->I.nlevels; l++) {
    snprintf(name, sizeof name, "sc%d", l);
    R->c[l] = lang_fresh_local(f, name, S->I.coord_ty, false);
    R->Nv[l] = lang_fresh_local(f, "sN", IR_I64, false);
    R->lov[l] = lang_fresh_local(f, "slo", IR_I64, false);
    ir_add(f, body, ir_assign(f, R->lov[l], ir_load(f, ext, ir_int(f, 2 * l))));
    ir_add(f, body, ir_assign(f, R->Nv[l], ir_load(f, ext, ir_int(f, 2 * l + 1))));
  }
  return SPC_OK;
}

spc_status asm_src_nest(asm_src *S, ir_stmt *dst, ir_var stop, asm_leaf_fn fn, void *ctx,
                        spc_error *e) {
  S->R.leaf = fn;
  S->R.leaf_ctx = ctx;
  S->R.stop = stop;
  return nest(&S->R, 0, dst, ir_int(S->R.f, 0), false, e);
}

spc_status asm_src_nest_flat(asm_src *S, ir_stmt *dst, ir_var stop, asm_leaf_fn fn, void *ctx,
                             ir_var *sent, spc_error *e) {
  const conv_info *I = &S->I;
  sent[0] = sent[1] = -1;
  bool can = I->nlevels == 2 && splittable(I);
  if (can) {
    lvbind b0;
    asm_bind_init(&b0, I->lv[0]->lf, I->lv[0], I->index_ty, I->coord_ty);
    can = !asm_lfn(&b0, SPC_LF_VALID); /* every top position's children */
  }
  if (!can) return asm_src_nest(S, dst, stop, fn, ctx, e);
  rd *R = &S->R;
  ir_var c0 = R->c0 = R->c[0];
  /* never assigned: level 0's coordinate and level 1's parent position */
  sent[0] = R->c[0] = lang_fresh_local(R->f, "sc0_flat", I->coord_ty, false);
  sent[1] = R->fp = lang_fresh_local(R->f, "sp_flat", I->index_ty, false);
  R->flat = true;
  spc_status s = asm_src_nest(S, dst, stop, fn, ctx, e);
  R->flat = false;
  R->c[0] = c0;
  return s;
}

int asm_src_args(const conv_info *I, const spc_tensor *t, ir_arg *a, int64_t *extv, spc_error *e) {
  return level_args(I, t, a, extv, e);
}

spc_status asm_src_top_range(const spc_tensor *t, int64_t *b, int64_t *en, spc_error *e) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  return top_range(I, t, b, en, e);
}

spc_status asm_src_cuts(const spc_tensor *t, int64_t b, int64_t en, int nt, int64_t *off,
                        spc_error *e) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  if (nt < 1 || en <= b || !splittable(I))
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "no contiguous second level to split");
  int64_t *cut = spc_malloc((size_t)NCUT * (size_t)(nt + 1) * sizeof *cut);
  if (!cut) return SPC_NOMEM(e);
  spc_status s = split_cuts(I, t, b, en, nt, cut, e); /* O(nt log n): interpreted */
  if (!s) {
    /* cut[2 (nt + 1) + k]: the last top position whose children start
     * at or before the k-th equal share of level 1's positions */
    off[0] = b;
    for (int k = 1; k < nt; k++) {
      int64_t p = cut[2 * (nt + 1) + k];
      off[k] = p < off[k - 1] ? off[k - 1] : p > en ? en : p;
    }
    off[nt] = en;
  }
  spc_free(cut);
  return s;
}

void asm_src_free(asm_src **S) {
  if (!*S) return;
  spc_remap_free(&(*S)->r);
  spc_free(*S);
  *S = NULL;
}
