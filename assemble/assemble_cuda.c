/* assemble_cuda.c -- the device routines of the CUDA kernels, as IR built
 * from a matrix format's read-side level functions (begin, end, access,
 * valid, locate), like the CPU SpMV of assemble_read.c.  Each routine is
 * what ONE GPU thread runs; assemble_cuda_text.c wraps them in __global__
 * kernels (and ir_emit_cuda.c makes them device code).  The interpreter
 * runs the very same routines, so tests check the schedules' arithmetic
 * (lane striding, position windows, hashing) on the CPU.
 *
 * SpMV (y += A x, values in double):
 *   spmv(arrays.., vals, ext, x, y, ya, q0, q1, p0, p1, lane, nl, flush,
 *        acc OUT, yrow OUT, hit OUT)
 *   walks the top-level positions [q0, q1); under each, the level-1
 *   positions in [p0, p1) numbered lane, lane + nl, lane + 2 nl, ...; the
 *   levels below in full.  When the row index of y is the coordinate of a
 *   unique top level ("row mode": csr, dcsr, dense, sky), the products go
 *   to acc and, with flush, to y[yrow] at the end of each top position
 *   (into y when all of its level-1 positions lie in [p0, p1), else into
 *   ya, which the CUDA kernels update atomically); otherwise every product
 *   goes to ya[i] (atomic on the GPU).  Thread per row: one top position,
 *   all of [p0, p1), one lane.  Warp per row: 32 lanes, no flush, the
 *   kernel reduces acc across the warp.  Position split: a window [p0,
 *   p1) of level-1 positions and the top positions that reach into it.
 *   range(arrays.., ext, lvl, q, b OUT, e OUT): the top level's positions
 *   (lvl 0), or the level-1 positions under top position q (lvl 1).
 *
 * SpGEMM (C = A B in level space: row i of C is level-0 coordinate i of A;
 * for csc this is the transposed product, C' = A' B'), Gustavson's
 * algorithm, one top position of A per nl lanes (threads), lane l taking
 * the row's level-1 positions l, l + nl, l + 2 nl, ... of A: a hash table
 * per row and lane in global memory (keys -1 when empty, row r lane l's
 * table at off[s] .. off[s+1], s = r nl + l), for formats of two levels
 * whose top level can locate:
 *   spgemm_ub: ub[s] = the products of the lane (its table's size),
 *   spgemm_sym: cnt[s] = distinct columns of the lane (keys filled),
 *   spgemm_num: the values summed in the table, then the lane's columns
 *     gathered to ccrd/cval from cpos[s] and sorted (insertion sort).
 * With nl = 1 that is the row.  With nl > 1 a row holds nl sorted runs
 * whose columns may repeat: the launcher sorts each row (CUB's stable
 * segmented sort) and adds the repeats in lane order.
 * Padding (valid false, zeros of fill: zero formats) is skipped. */
#include "assemble_cuda.h"
#include "spc_cuda_host.h"
#include <stdio.h>
#include <string.h>

/* ---- one operand: its arrays, values, extents, coordinates ---------------- */

static void operand(cu_build *C, cu_opnd *o, const char *pre) {
  const conv_info *I = &C->I;
  ir_func *f = C->f;
  char name[96];
  for (int l = 0; l < I->nlevels; l++) {
    const spc_level_spec *ls = I->lv[l]->lf;
    for (int k = 0; k < ls->narrays; k++) {
      snprintf(name, sizeof name, "%s%d_%s", pre, l, ls->arrays[k].name);
      o->arr[l][k] = ir_param(f, name, asm_tname_ty(ls->arrays[k].type, I->index_ty, I->coord_ty), true, IR_IN);
    }
  }
  snprintf(name, sizeof name, "%svals", pre);
  o->vals = ir_param(f, name, IR_F64, true, IR_IN);
  snprintf(name, sizeof name, "%sext", pre);
  o->ext = ir_param(f, name, IR_I64, true, IR_IN);
}

/* lo and N of every level from ext (at the top of the body). */
static void extents(cu_build *C, cu_opnd *o, const char *pre) {
  ir_func *f = C->f;
  ir_stmt *body = ir_func_body(f);
  char name[64];
  for (int l = 0; l < C->I.nlevels; l++) {
    snprintf(name, sizeof name, "%sc%d", pre, l);
    o->c[l] = lang_fresh_local(f, name, C->I.coord_ty, false);
    o->Nv[l] = lang_fresh_local(f, "N", IR_I64, false);
    o->lov[l] = lang_fresh_local(f, "lo", IR_I64, false);
    ir_add(f, body, ir_assign(f, o->lov[l], ir_load(f, o->ext, ir_int(f, 2 * l))));
    ir_add(f, body, ir_assign(f, o->Nv[l], ir_load(f, o->ext, ir_int(f, 2 * l + 1))));
  }
}

/* Level l of operand o bound for lowering, the parent position p set to
 * parent in dst. */
static void bind(cu_build *C, const cu_opnd *o, int l, lvbind *b, ir_stmt *dst,
                 ir_expr *parent) {
  asm_bind_nest(b, &C->I, C->r->out_names, l, o->arr[l], o->Nv, o->lov, o->c, C->f);
  ir_add(C->f, dst, ir_assign(C->f, b->p, ir_cast(C->f, C->I.index_ty, parent)));
}

/* begin and end of the bound level into fresh locals *bg, *en. */
static spc_status range_of(cu_build *C, ir_stmt *dst, const lvbind *b, ir_var *bg,
                           ir_var *en, spc_error *e) {
  *bg = lang_fresh_local(C->f, "qb", C->I.index_ty, false);
  *en = lang_fresh_local(C->f, "qe", C->I.index_ty, false);
  spc_status s = asm_lower_fn(C->f, dst, b, SPC_LF_BEGIN, *bg, NULL, e);
  return s ? s : asm_lower_fn(C->f, dst, b, SPC_LF_END, *en, NULL, e);
}

/* The coordinate at position b->q (access), and the body that runs only
 * for a valid one (*body updated). */
static spc_status access(cu_build *C, const lvbind *b, ir_stmt **body, spc_error *e) {
  ir_func *f = C->f;
  spc_status s = asm_lower_fn(f, *body, b, SPC_LF_ACCESS, b->c, NULL, e);
  if (s || !asm_lfn(b, SPC_LF_VALID)) return s;
  ir_var ok = lang_fresh_local(f, "ok", IR_BOOL, false);
  if ((s = asm_lower_fn(f, *body, b, SPC_LF_VALID, ok, NULL, e))) return s;
  *body = ir_then(ir_add(f, *body, ir_if(f, ir_ref(f, ok), NULL, NULL)));
  return SPC_OK;
}

/* Canonical index d of the operand's current leaf. */
static ir_expr *canon(cu_build *C, const cu_opnd *o, int d) {
  ir_func *f = C->f;
  const asm_inv *v = &C->iv[d];
  ir_expr *x = ir_cast(f, IR_I64, ir_ref(f, o->c[v->a]));
  if (v->b >= 0)
    x = ir_bin(f, IR_ADD, ir_bin(f, IR_MUL, x, ir_int(f, v->K)),
               ir_cast(f, IR_I64, ir_ref(f, o->c[v->b])));
  return x;
}

/* Only non-zero values of a fill: zero format at position q. */
static ir_stmt *nonzero(cu_build *C, const cu_opnd *o, ir_stmt *body, ir_var q) {
  if (!C->I.fmt->fill_zero) return body;
  ir_func *f = C->f;
  ir_expr *v = ir_load(f, o->vals, ir_ref(f, q));
  return ir_then(ir_add(f, body, ir_if(f, ir_bin(f, IR_NE, v, ir_f64(f, 0.0)), NULL, NULL)));
}

static ir_expr *I64(cu_build *C, ir_var v) { return ir_cast(C->f, IR_I64, ir_ref(C->f, v)); }

/* ---- SpMV -------------------------------------------------------------------- */

static spc_status spmv_leaf(cu_build *C, int l, ir_stmt *dst, ir_expr *parent, spc_error *e);

/* y[i] += prod, or into ya (atomic on the GPU). */
static void spmv_add(cu_build *C, ir_stmt *body, ir_var q) {
  ir_func *f = C->f;
  cu_opnd *A = &C->A;
  ir_expr *prod = ir_bin(f, IR_MUL, ir_load(f, A->vals, ir_ref(f, q)),
                         ir_load(f, C->x, canon(C, A, 1)));
  if (C->rowmode) {
    ir_add(f, body, ir_assign(f, C->acc, ir_bin(f, IR_ADD, ir_ref(f, C->acc), prod)));
    return;
  }
  ir_var yi = lang_fresh_local(f, "yi", IR_I64, false);
  ir_add(f, body, ir_assign(f, yi, canon(C, A, 0)));
  ir_add(f, body, ir_store(f, C->ya, ir_ref(f, yi),
                           ir_bin(f, IR_ADD, ir_load(f, C->ya, ir_ref(f, yi)), prod)));
}

/* Levels l >= 2: every position under the parent. */
static spc_status spmv_leaf(cu_build *C, int l, ir_stmt *dst, ir_expr *parent, spc_error *e) {
  ir_func *f = C->f;
  lvbind b;
  ir_var bg, en;
  bind(C, &C->A, l, &b, dst, parent);
  spc_status s = range_of(C, dst, &b, &bg, &en, e);
  if (s) return s;
  ir_stmt *body = ir_body(ir_add(f, dst, ir_for(f, b.q, ir_ref(f, bg), ir_ref(f, en), NULL)));
  if ((s = access(C, &b, &body, e))) return s;
  if (l + 1 < C->I.nlevels) return spmv_leaf(C, l + 1, body, ir_ref(f, b.q), e);
  spmv_add(C, nonzero(C, &C->A, body, b.q), b.q);
  return SPC_OK;
}

/* Level 1: positions max(begin, p0) + lane + t nl below min(end, p1). */
static spc_status spmv_child(cu_build *C, ir_stmt *dst, ir_expr *parent, spc_error *e) {
  ir_func *f = C->f;
  ir_ty it = C->I.index_ty;
  lvbind b;
  ir_var bg, en;
  bind(C, &C->A, 1, &b, dst, parent);
  spc_status s = range_of(C, dst, &b, &bg, &en, e);
  if (s) return s;
  ir_var lo = lang_fresh_local(f, "wlo", IR_I64, false), hi = lang_fresh_local(f, "whi", IR_I64, false);
  ir_var n = lang_fresh_local(f, "wn", IR_I64, false), t = lang_fresh_local(f, "t", IR_I64, false);
  ir_add(f, dst, ir_assign(f, lo, ir_bin(f, IR_MAX, I64(C, bg), ir_ref(f, C->p0))));
  ir_add(f, dst, ir_assign(f, hi, ir_bin(f, IR_MIN, I64(C, en), ir_ref(f, C->p1))));
  ir_add(f, dst, ir_assign(f, n, ir_bin(f, IR_SUB, ir_bin(f, IR_SUB, ir_ref(f, hi), ir_ref(f, lo)),
                                        ir_ref(f, C->lane))));
  ir_expr *cnt = ir_bin(f, IR_DIV, ir_bin(f, IR_ADD, ir_ref(f, n), ir_bin(f, IR_SUB, ir_ref(f, C->nl), ir_int(f, 1))),
                        ir_ref(f, C->nl));
  ir_stmt *loop = ir_add(f, dst, ir_for(f, t, ir_int(f, 0), ir_select(f, ir_bin(f, IR_GT, ir_ref(f, n), ir_int(f, 0)), cnt, ir_int(f, 0)), NULL));
  ir_stmt *body = ir_body(loop);
  ir_expr *q = ir_bin(f, IR_ADD, ir_bin(f, IR_ADD, ir_ref(f, lo), ir_ref(f, C->lane)),
                      ir_bin(f, IR_MUL, ir_ref(f, t), ir_ref(f, C->nl)));
  ir_add(f, body, ir_assign(f, b.q, ir_cast(f, it, q)));
  if ((s = access(C, &b, &body, e))) return s;
  if (C->I.nlevels > 2) {
    if ((s = spmv_leaf(C, 2, body, ir_ref(f, b.q), e))) return s;
  } else {
    spmv_add(C, nonzero(C, &C->A, body, b.q), b.q);
  }
  if (!C->rowmode) return SPC_OK;
  /* flush: y when this call holds every level-1 position of the row */
  ir_expr *go = ir_bin(f, IR_LAND, ir_ref(f, C->flush), ir_bin(f, IR_LT, ir_ref(f, lo), ir_ref(f, hi)));
  ir_stmt *fl = ir_then(ir_add(f, dst, ir_if(f, go, NULL, NULL)));
  ir_expr *own = ir_bin(f, IR_LAND, ir_bin(f, IR_GE, I64(C, bg), ir_ref(f, C->p0)),
                        ir_bin(f, IR_LE, I64(C, en), ir_ref(f, C->p1)));
  ir_stmt *br = ir_add(f, fl, ir_if(f, own, NULL, NULL));
  ir_var targets[2] = {C->y, C->ya};
  for (int k = 0; k < 2; k++) {
    ir_stmt *in = k ? ir_else(f, br) : ir_then(br);
    ir_var v = targets[k];
    ir_add(f, in, ir_store(f, v, ir_ref(f, C->yrow),
                           ir_bin(f, IR_ADD, ir_load(f, v, ir_ref(f, C->yrow)), ir_ref(f, C->acc))));
  }
  return SPC_OK;
}

spc_status cu_build_spmv(cu_build *C, spc_error *e) {
  ir_func *f = C->f;
  ir_ty it = C->I.index_ty;
  cu_opnd *A = &C->A;
  operand(C, A, "l");
  C->x = ir_param(f, "x", IR_F64, true, IR_IN);
  C->y = ir_param(f, "y", IR_F64, true, IR_INOUT);
  C->ya = ir_param(f, "ya", IR_F64, true, IR_INOUT);
  C->q0 = ir_param(f, "q0", IR_I64, false, IR_IN);
  C->q1 = ir_param(f, "q1", IR_I64, false, IR_IN);
  C->p0 = ir_param(f, "p0", IR_I64, false, IR_IN);
  C->p1 = ir_param(f, "p1", IR_I64, false, IR_IN);
  C->lane = ir_param(f, "lane", IR_I64, false, IR_IN);
  C->nl = ir_param(f, "nl", IR_I64, false, IR_IN);
  C->flush = ir_param(f, "flush", IR_BOOL, false, IR_IN);
  C->acc = ir_param(f, "acc", IR_F64, false, IR_OUT);
  C->yrow = ir_param(f, "yrow", IR_I64, false, IR_OUT);
  C->hit = ir_param(f, "hit", IR_BOOL, false, IR_OUT);
  extents(C, A, "");
  ir_stmt *body = ir_func_body(f);
  lvbind b;
  ir_var bg, en;
  bind(C, A, 0, &b, body, ir_int(f, 0));
  spc_status s = range_of(C, body, &b, &bg, &en, e);
  if (s) return s;
  ir_add(f, body, ir_assign(f, bg, ir_cast(f, it, ir_bin(f, IR_MAX, I64(C, bg), ir_ref(f, C->q0)))));
  ir_add(f, body, ir_assign(f, en, ir_cast(f, it, ir_bin(f, IR_MIN, I64(C, en), ir_ref(f, C->q1)))));
  ir_stmt *top = ir_body(ir_add(f, body, ir_for(f, b.q, ir_ref(f, bg), ir_ref(f, en), NULL)));
  if ((s = access(C, &b, &top, e))) return s;
  if (C->rowmode) {
    ir_add(f, top, ir_assign(f, C->yrow, I64(C, A->c[0])));
    ir_add(f, top, ir_assign(f, C->hit, ir_bool(f, true)));
    ir_add(f, top, ir_assign(f, C->acc, ir_f64(f, 0.0)));
  }
  if ((s = spmv_child(C, top, ir_ref(f, b.q), e))) return s;
  return ir_verify(f, e);
}

spc_status cu_build_range(cu_build *C, spc_error *e) {
  ir_func *f = C->f;
  cu_opnd *A = &C->A;
  operand(C, A, "l");
  ir_var lvl = ir_param(f, "lvl", IR_I64, false, IR_IN), q = ir_param(f, "q", IR_I64, false, IR_IN);
  ir_var ob = ir_param(f, "b", IR_I64, false, IR_OUT), oe = ir_param(f, "e", IR_I64, false, IR_OUT);
  extents(C, A, "");
  ir_stmt *body = ir_func_body(f);
  ir_stmt *br = ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, lvl), ir_int(f, 0)), NULL, NULL));
  lvbind b0, b1;
  ir_var bg, en;
  bind(C, A, 0, &b0, ir_then(br), ir_int(f, 0));
  spc_status s = range_of(C, ir_then(br), &b0, &bg, &en, e);
  if (s) return s;
  ir_add(f, ir_then(br), ir_assign(f, ob, I64(C, bg)));
  ir_add(f, ir_then(br), ir_assign(f, oe, I64(C, en)));
  ir_stmt *el = ir_else(f, br);
  bind(C, A, 0, &b0, el, ir_int(f, 0));
  ir_add(f, el, ir_assign(f, b0.q, ir_cast(f, C->I.index_ty, ir_ref(f, q))));
  if ((s = asm_lower_fn(f, el, &b0, SPC_LF_ACCESS, b0.c, NULL, e))) return s;
  bind(C, A, 1, &b1, el, ir_ref(f, q));
  if ((s = range_of(C, el, &b1, &bg, &en, e))) return s;
  ir_add(f, el, ir_assign(f, ob, I64(C, bg)));
  ir_add(f, el, ir_assign(f, oe, I64(C, en)));
  return ir_verify(f, e);
}

/* ---- SpGEMM ------------------------------------------------------------------ */

typedef enum { UB, SYM, NUM } sg_pass;

typedef struct sg {
  cu_build *C;
  sg_pass pass;
  ir_var off, keys, hv, cnt, cpos, ccrd, cval, ub;
  ir_var lane, nl; /* this thread's lane of the nl that share a row */
  ir_var row, rs, base, cap, n, h, av;
} sg;

/* The products of A's level-1 position qa (value av) with B's row k. */
static spc_status sg_brow(sg *G, ir_stmt *dst, spc_error *e) {
  cu_build *C = G->C;
  ir_func *f = C->f;
  cu_opnd *A = &C->A, *B = &C->B;
  lvbind lb, b1;
  bind(C, B, 0, &lb, dst, ir_int(f, 0));
  ir_add(f, dst, ir_assign(f, lb.c, ir_cast(f, C->I.coord_ty, ir_ref(f, A->c[1]))));
  ir_var r = lang_fresh_local(f, "rb", C->I.index_ty, false);
  spc_status s = asm_lower_fn(f, dst, &lb, SPC_LF_LOCATE, r, NULL, e);
  if (s) return s;
  ir_stmt *in = ir_then(ir_add(f, dst, ir_if(f, ir_bin(f, IR_GE, ir_ref(f, r), ir_int(f, 0)), NULL, NULL)));
  bind(C, B, 1, &b1, in, ir_ref(f, r));
  ir_var bg, en;
  if ((s = range_of(C, in, &b1, &bg, &en, e))) return s;
  if (G->pass == UB) {
    ir_add(f, in, ir_assign(f, G->n, ir_bin(f, IR_ADD, ir_ref(f, G->n), ir_bin(f, IR_SUB, I64(C, en), I64(C, bg)))));
    return SPC_OK;
  }
  ir_stmt *body = ir_body(ir_add(f, in, ir_for(f, b1.q, ir_ref(f, bg), ir_ref(f, en), NULL)));
  if ((s = access(C, &b1, &body, e))) return s;
  body = nonzero(C, B, body, b1.q);
  /* probe: h = j % cap, then linearly to j's slot or an empty one */
  ir_var j = lang_fresh_local(f, "j", IR_I64, false);
  ir_add(f, body, ir_assign(f, j, I64(C, B->c[1])));
  ir_add(f, body, ir_assign(f, G->h, ir_bin(f, IR_REM, ir_ref(f, j), ir_ref(f, G->cap))));
  ir_expr *slot = ir_bin(f, IR_ADD, ir_ref(f, G->base), ir_ref(f, G->h));
  ir_expr *busy = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_load(f, G->keys, slot), ir_int(f, -1)),
                         ir_bin(f, IR_NE, ir_load(f, G->keys, ir_bin(f, IR_ADD, ir_ref(f, G->base), ir_ref(f, G->h))), ir_ref(f, j)));
  ir_stmt *w = ir_add(f, body, ir_while(f, busy, NULL));
  ir_expr *h1 = ir_bin(f, IR_ADD, ir_ref(f, G->h), ir_int(f, 1));
  ir_add(f, ir_body(w), ir_assign(f, G->h, ir_select(f, ir_bin(f, IR_EQ, h1, ir_ref(f, G->cap)), ir_int(f, 0),
                                                      ir_bin(f, IR_ADD, ir_ref(f, G->h), ir_int(f, 1)))));
  ir_var at = lang_fresh_local(f, "at", IR_I64, false);
  ir_add(f, body, ir_assign(f, at, ir_bin(f, IR_ADD, ir_ref(f, G->base), ir_ref(f, G->h))));
  ir_stmt *nw = ir_add(f, body, ir_if(f, ir_bin(f, IR_EQ, ir_load(f, G->keys, ir_ref(f, at)), ir_int(f, -1)), NULL, NULL));
  ir_add(f, ir_then(nw), ir_store(f, G->keys, ir_ref(f, at), ir_ref(f, j)));
  ir_add(f, ir_then(nw), ir_assign(f, G->n, ir_bin(f, IR_ADD, ir_ref(f, G->n), ir_int(f, 1))));
  if (G->pass == NUM) {
    ir_expr *prod = ir_bin(f, IR_MUL, ir_ref(f, G->av), ir_load(f, B->vals, ir_ref(f, b1.q)));
    ir_add(f, ir_then(nw), ir_store(f, G->hv, ir_ref(f, at), prod));
    prod = ir_bin(f, IR_MUL, ir_ref(f, G->av), ir_load(f, B->vals, ir_ref(f, b1.q)));
    ir_add(f, ir_else(f, nw), ir_store(f, G->hv, ir_ref(f, at),
                                       ir_bin(f, IR_ADD, ir_load(f, G->hv, ir_ref(f, at)), prod)));
  }
  return SPC_OK;
}

/* Row r of C gathered from its table to cpos[r].., sorted by column. */
static void sg_gather(sg *G, ir_stmt *dst) {
  ir_func *f = G->C->f;
  ir_var s0 = lang_fresh_local(f, "s0", IR_I64, false), m = lang_fresh_local(f, "m", IR_I64, false);
  ir_var k = lang_fresh_local(f, "k", IR_I64, false), kk = lang_fresh_local(f, "kk", IR_I64, false);
  ir_var key = lang_fresh_local(f, "key", IR_I64, false), v = lang_fresh_local(f, "v", IR_F64, false);
  ir_var mn = lang_fresh_local(f, "mn", IR_I64, false), st = lang_fresh_local(f, "st", IR_I64, false);
  ir_var sl = lang_fresh_local(f, "sl", IR_I64, false);
  ir_add(f, dst, ir_assign(f, s0, ir_load(f, G->cpos, ir_ref(f, G->rs))));
  ir_add(f, dst, ir_assign(f, m, ir_int(f, 0)));
  /* the slot of the least column: with j % cap as the hash, a lane whose
   * columns span less than cap has no collisions, and its table read
   * round from that slot is already in column order, so the insertion
   * sort below only checks it (read from slot 0 it is a rotation, which
   * costs the sort a quarter of m^2 moves on average) */
  ir_add(f, dst, ir_assign(f, mn, ir_int(f, -1)));
  ir_add(f, dst, ir_assign(f, st, ir_int(f, 0)));
  /* with nl > 1 lanes the launcher sorts each row: no order needed here */
  ir_expr *one = ir_bin(f, IR_EQ, ir_ref(f, G->nl), ir_int(f, 1));
  ir_stmt *l0 = ir_body(ir_add(f, ir_then(ir_add(f, dst, ir_if(f, one, NULL, NULL))),
                               ir_for(f, k, ir_int(f, 0), ir_ref(f, G->cap), NULL)));
  ir_add(f, l0, ir_assign(f, key, ir_load(f, G->keys, ir_bin(f, IR_ADD, ir_ref(f, G->base), ir_ref(f, k)))));
  ir_expr *less = ir_bin(f, IR_LAND, ir_bin(f, IR_NE, ir_ref(f, key), ir_int(f, -1)),
                         ir_bin(f, IR_LOR, ir_bin(f, IR_EQ, ir_ref(f, mn), ir_int(f, -1)),
                                ir_bin(f, IR_LT, ir_ref(f, key), ir_ref(f, mn))));
  ir_stmt *lt = ir_then(ir_add(f, l0, ir_if(f, less, NULL, NULL)));
  ir_add(f, lt, ir_assign(f, mn, ir_ref(f, key)));
  ir_add(f, lt, ir_assign(f, st, ir_ref(f, k)));
  ir_stmt *l1 = ir_body(ir_add(f, dst, ir_for(f, k, ir_int(f, 0), ir_ref(f, G->cap), NULL)));
  ir_expr *wrap = ir_bin(f, IR_ADD, ir_ref(f, st), ir_ref(f, k));
  ir_add(f, l1, ir_assign(f, sl, ir_select(f, ir_bin(f, IR_GE, wrap, ir_ref(f, G->cap)),
                                           ir_bin(f, IR_SUB, ir_bin(f, IR_ADD, ir_ref(f, st), ir_ref(f, k)), ir_ref(f, G->cap)),
                                           ir_bin(f, IR_ADD, ir_ref(f, st), ir_ref(f, k)))));
  ir_add(f, l1, ir_assign(f, sl, ir_bin(f, IR_ADD, ir_ref(f, G->base), ir_ref(f, sl))));
  ir_stmt *full = ir_then(ir_add(f, l1, ir_if(f, ir_bin(f, IR_NE, ir_load(f, G->keys, ir_ref(f, sl)), ir_int(f, -1)), NULL, NULL)));
  ir_expr *to = ir_bin(f, IR_ADD, ir_ref(f, s0), ir_ref(f, m));
  ir_add(f, full, ir_store(f, G->ccrd, to, ir_load(f, G->keys, ir_ref(f, sl))));
  ir_add(f, full, ir_store(f, G->cval, ir_bin(f, IR_ADD, ir_ref(f, s0), ir_ref(f, m)), ir_load(f, G->hv, ir_ref(f, sl))));
  ir_add(f, full, ir_assign(f, m, ir_bin(f, IR_ADD, ir_ref(f, m), ir_int(f, 1))));
  /* insertion sort of [s0, s0 + m) by column (one lane) */
  ir_stmt *l2 = ir_body(ir_add(f, ir_then(ir_add(f, dst, ir_if(f, ir_bin(f, IR_EQ, ir_ref(f, G->nl), ir_int(f, 1)), NULL, NULL))),
                               ir_for(f, k, ir_int(f, 1), ir_ref(f, m), NULL)));
#define AT(x) ir_bin(f, IR_ADD, ir_ref(f, s0), (x))
  ir_add(f, l2, ir_assign(f, key, ir_load(f, G->ccrd, AT(ir_ref(f, k)))));
  ir_add(f, l2, ir_assign(f, v, ir_load(f, G->cval, AT(ir_ref(f, k)))));
  ir_add(f, l2, ir_assign(f, kk, ir_ref(f, k)));
  ir_expr *prev = ir_bin(f, IR_SUB, ir_ref(f, kk), ir_int(f, 1));
  ir_expr *more = ir_bin(f, IR_LAND, ir_bin(f, IR_GT, ir_ref(f, kk), ir_int(f, 0)),
                         ir_bin(f, IR_GT, ir_load(f, G->ccrd, AT(prev)), ir_ref(f, key)));
  ir_stmt *w = ir_body(ir_add(f, l2, ir_while(f, more, NULL)));
  ir_add(f, w, ir_store(f, G->ccrd, AT(ir_ref(f, kk)), ir_load(f, G->ccrd, AT(ir_bin(f, IR_SUB, ir_ref(f, kk), ir_int(f, 1))))));
  ir_add(f, w, ir_store(f, G->cval, AT(ir_ref(f, kk)), ir_load(f, G->cval, AT(ir_bin(f, IR_SUB, ir_ref(f, kk), ir_int(f, 1))))));
  ir_add(f, w, ir_assign(f, kk, ir_bin(f, IR_SUB, ir_ref(f, kk), ir_int(f, 1))));
  ir_add(f, l2, ir_store(f, G->ccrd, AT(ir_ref(f, kk)), ir_ref(f, key)));
  ir_add(f, l2, ir_store(f, G->cval, AT(ir_ref(f, kk)), ir_ref(f, v)));
#undef AT
}

spc_status cu_build_spgemm(cu_build *C, int pass, spc_error *e) {
  ir_func *f = C->f;
  cu_opnd *A = &C->A, *B = &C->B;
  sg G = {.C = C, .pass = (sg_pass)pass};
  operand(C, A, "a");
  operand(C, B, "b");
  ir_var q = ir_param(f, "q", IR_I64, false, IR_IN);
  G.lane = ir_param(f, "lane", IR_I64, false, IR_IN);
  G.nl = ir_param(f, "nl", IR_I64, false, IR_IN);
  if (G.pass == UB) {
    G.ub = ir_param(f, "ub", IR_I64, true, IR_INOUT);
  } else {
    G.off = ir_param(f, "off", IR_I64, true, IR_IN);
    G.keys = ir_param(f, "keys", IR_I64, true, IR_INOUT);
  }
  if (G.pass == SYM) G.cnt = ir_param(f, "cnt", IR_I64, true, IR_INOUT);
  if (G.pass == NUM) {
    G.hv = ir_param(f, "hv", IR_F64, true, IR_INOUT);
    G.cpos = ir_param(f, "cpos", IR_I64, true, IR_IN);
    G.ccrd = ir_param(f, "ccrd", IR_I64, true, IR_INOUT);
    G.cval = ir_param(f, "cval", IR_F64, true, IR_INOUT);
  }
  extents(C, A, "a");
  extents(C, B, "b");
  G.row = lang_fresh_local(f, "row", IR_I64, false);
  G.rs = lang_fresh_local(f, "rs", IR_I64, false);
  G.base = lang_fresh_local(f, "base", IR_I64, false);
  G.cap = lang_fresh_local(f, "cap", IR_I64, false);
  G.n = lang_fresh_local(f, "n", IR_I64, false);
  G.h = lang_fresh_local(f, "h", IR_I64, false);
  G.av = lang_fresh_local(f, "av", IR_F64, false);
  ir_stmt *body = ir_func_body(f);
  lvbind b0, b1;
  bind(C, A, 0, &b0, body, ir_int(f, 0));
  ir_add(f, body, ir_assign(f, b0.q, ir_cast(f, C->I.index_ty, ir_ref(f, q))));
  ir_stmt *top = body;
  spc_status s = access(C, &b0, &top, e);
  if (s) return s;
  ir_add(f, top, ir_assign(f, G.row, ir_bin(f, IR_SUB, I64(C, A->c[0]), ir_ref(f, A->lov[0]))));
  ir_add(f, top, ir_assign(f, G.rs, ir_bin(f, IR_ADD, ir_bin(f, IR_MUL, ir_ref(f, G.row), ir_ref(f, G.nl)), ir_ref(f, G.lane))));
  ir_add(f, top, ir_assign(f, G.n, ir_int(f, 0)));
  if (G.pass != UB) {
    ir_add(f, top, ir_assign(f, G.base, ir_load(f, G.off, ir_ref(f, G.rs))));
    ir_add(f, top, ir_assign(f, G.cap, ir_bin(f, IR_SUB, ir_load(f, G.off, ir_bin(f, IR_ADD, ir_ref(f, G.rs), ir_int(f, 1))),
                                                ir_ref(f, G.base))));
  }
  bind(C, A, 1, &b1, top, ir_ref(f, b0.q));
  ir_var bg, en;
  if ((s = range_of(C, top, &b1, &bg, &en, e))) return s;
  /* the lane's level-1 positions: bg + lane + t nl */
  ir_var t = lang_fresh_local(f, "t", IR_I64, false), w = lang_fresh_local(f, "wn", IR_I64, false);
  ir_add(f, top, ir_assign(f, w, ir_bin(f, IR_SUB, ir_bin(f, IR_SUB, I64(C, en), I64(C, bg)), ir_ref(f, G.lane))));
  ir_expr *tn = ir_bin(f, IR_DIV, ir_bin(f, IR_ADD, ir_ref(f, w), ir_bin(f, IR_SUB, ir_ref(f, G.nl), ir_int(f, 1))),
                       ir_ref(f, G.nl));
  ir_stmt *body1 = ir_body(ir_add(f, top, ir_for(f, t, ir_int(f, 0),
                                                 ir_select(f, ir_bin(f, IR_GT, ir_ref(f, w), ir_int(f, 0)), tn, ir_int(f, 0)), NULL)));
  ir_expr *qa = ir_bin(f, IR_ADD, ir_bin(f, IR_ADD, I64(C, bg), ir_ref(f, G.lane)), ir_bin(f, IR_MUL, ir_ref(f, t), ir_ref(f, G.nl)));
  ir_add(f, body1, ir_assign(f, b1.q, ir_cast(f, C->I.index_ty, qa)));
  if ((s = access(C, &b1, &body1, e))) return s;
  body1 = nonzero(C, A, body1, b1.q);
  ir_add(f, body1, ir_assign(f, G.av, ir_load(f, A->vals, ir_ref(f, b1.q))));
  if ((s = sg_brow(&G, body1, e))) return s;
  if (G.pass == UB) ir_add(f, top, ir_store(f, G.ub, ir_ref(f, G.rs), ir_ref(f, G.n)));
  if (G.pass == SYM) ir_add(f, top, ir_store(f, G.cnt, ir_ref(f, G.rs), ir_ref(f, G.n)));
  if (G.pass == NUM) sg_gather(&G, top);
  return ir_verify(f, e);
}

/* ---- set-up ------------------------------------------------------------------ */

spc_status cu_build_init(cu_build *C, const spc_format_spec *fmt, const char *fname,
                         spc_error *e) {
  memset(C, 0, sizeof *C);
  C->I.fmt = fmt;
  C->I.index_ty = C->I.coord_ty = IR_I64;
  if (fmt->order && fmt->order != 2)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "CUDA kernels: format %s holds order %d, not a matrix", fmt->name, fmt->order);
  spc_status s = asm_read_info(&C->I, 2, &C->r, C->iv, e);
  if (!s && C->I.nlevels < 2)
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "CUDA kernels: format %s has one level",
                fmt->name);
  C->rowmode = !s && C->iv[0].a == 0 && C->iv[0].b < 0 && C->I.lv[0]->unique;
  if (!s && !(C->f = ir_func_new(fname))) s = SPC_NOMEM(e);
  return s;
}

/* A fresh function for the next routine of the same format. */
spc_status cu_build_next(cu_build *C, const char *fname, spc_error *e) {
  ir_func_free(&C->f);
  memset(&C->A, 0, sizeof C->A);
  memset(&C->B, 0, sizeof C->B);
  return (C->f = ir_func_new(fname)) ? SPC_OK : SPC_NOMEM(e);
}

void cu_build_free(cu_build *C) {
  ir_func_free(&C->f);
  spc_remap_free(&C->r);
}

bool cu_spgemm_ok(const cu_build *C) {
  if (C->I.nlevels != 2 || !C->I.lv[0]->unique) return false;
  lvbind b;
  asm_bind_init(&b, C->I.lv[0]->lf, C->I.lv[0], IR_I64, IR_I64);
  return asm_lfn(&b, SPC_LF_LOCATE) != NULL;
}

/* ---- operands for the kernels (spc_cuda_host.h) ------------------------------- */

void spc_cu_operand_free(spc_cu_operand *m) {
  for (int k = 0; k < m->narr; k++) spc_free(m->arr[k]);
  spc_free(m->vals);
  memset(m, 0, sizeof *m);
}

spc_status spc_cu_operand_of(const spc_tensor *t, spc_cu_operand *m, spc_error *e) {
  memset(m, 0, sizeof *m);
  if (!spc_is_converted(t) || t->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "CUDA kernels need a matrix made by spc_convert");
  if (t->vt == SPC_C128)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "CUDA kernels: complex values are not covered");
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  if (2 * I->nlevels > 16) return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "CUDA kernels: too many levels");
  for (int l = 0; l < I->nlevels; l++) {
    m->ext[2 * l] = I->lo[l];
    m->ext[2 * l + 1] = I->N[l];
    for (int k = 0; k < I->lv[l]->lf->narrays; k++) {
      const spc_array *a = spc_level_array_c(&t->lv[l], I->lv[l]->lf->arrays[k].name);
      if (!a || m->narr == 16) {
        spc_cu_operand_free(m);
        return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "level %d: array %s missing", l,
                       I->lv[l]->lf->arrays[k].name);
      }
      int64_t *x = spc_malloc_n(a->len ? a->len : 1, sizeof *x);
      m->arr[m->narr] = x;
      m->len[m->narr++] = a->len;
      if (!x) {
        spc_cu_operand_free(m);
        return SPC_NOMEM(e);
      }
      for (int64_t i = 0; i < a->len; i++) x[i] = spc_arr_get(a, i);
    }
  }
  m->next = 2 * I->nlevels;
  m->nvals = t->nval;
  if (!(m->vals = spc_malloc_n(t->nval ? t->nval : 1, sizeof *m->vals))) {
    spc_cu_operand_free(m);
    return SPC_NOMEM(e);
  }
  for (int64_t i = 0; i < t->nval; i++)
    m->vals[i] = t->vt == SPC_I64   ? (double)((const int64_t *)t->val)[i]
                 : t->vt == SPC_U64 ? (double)((const uint64_t *)t->val)[i]
                 : t->vt == SPC_F32 ? (double)((const float *)t->val)[i]
                 : t->vt == SPC_F64 ? ((const double *)t->val)[i]
                                    : 1.0;
  return SPC_OK;
}
