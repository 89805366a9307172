/* assemble_gen.c -- `spconv gen --from=A --to=B`: one standalone C99 file
 * (no spconv header or library) holding the routines a conversion from A
 * to B runs, emitted from the very IR the engines run (the read-back of
 * A, the remapping of B, one routine per level of B, and the level
 * extents of B from the dimensions), plus a small fixed driver that
 * strings them together.  Index and coordinate arrays are int64 on both
 * sides; the value type is chosen at generation time.
 *
 * Extents: the engine computes a level's range [lo, lo+N) by interval
 * analysis of the remapping (lang_interval.c, with bit-level tracking for
 * & | ^ and shifts); the generated file evaluates the same rules, as IR,
 * at run time from the dimensions and the counters' maxima. */
#include "assemble_internal.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the extents, as an IR routine ----------------------------------------
 * The rules of lang_interval.c, evaluated at run time: a range [lo, hi]
 * plus, for non-negative ranges, the bits that may be set (so masks and
 * shifts keep Morton codes tight).  Overflow of the bounds themselves
 * (which the analysis reports as "no finite range") is not detected here:
 * it needs dimensions near 2^62. */

typedef struct ivx {
  ir_var lo, hi, bits; /* bits: U64, meaningful when lo >= 0 */
} ivx;

typedef struct gb {
  ir_func *f;
  ir_stmt *body;
  const spc_remap *r;
  ir_var dims, cmax;
  ivx let[64];
  int nlets;
  spc_error *e;
  spc_status s;
  int tmp;
} gb;

#define R(v) ir_ref(g->f, (v))
#define I(k) ir_int(g->f, (k))
#define B(op, a, b) ir_bin(g->f, (op), (a), (b))
#define SEL(c, a, b) ir_select(g->f, (c), (a), (b))
#define ALL ir_const(g->f, IR_U64, (ir_val){.u64 = UINT64_MAX})
#define U(x) ir_cast(g->f, IR_U64, (x))
#define ADD(st) ir_add(g->f, g->body, (st))

static ir_var local(gb *g, const char *p, ir_ty ty) {
  char n[32];
  snprintf(n, sizeof n, "%s%d", p, g->tmp++);
  return lang_fresh_local(g->f, n, ty, false);
}

/* the smallest 2^k - 1 >= x (x >= 0) */
static ir_var ones_above(gb *g, ir_expr *x) {
  ir_var m = local(g, "m", IR_U64), xv = local(g, "x", IR_U64);
  ADD(ir_assign(g->f, xv, x));
  ADD(ir_assign(g->f, m, U(I(0))));
  ir_stmt *w = ADD(ir_while(g->f, B(IR_LT, R(m), R(xv)), NULL));
  ir_add(g->f, ir_body(w), ir_assign(g->f, m, B(IR_ADD, B(IR_MUL, R(m), U(I(2))), U(I(1)))));
  return m;
}

/* mk(): bits cover [lo, hi] and hi <= bits (non-negative ranges) */
static ivx mk(gb *g, ir_expr *lo, ir_expr *hi, ir_expr *bits) {
  ivx v = {local(g, "lo", IR_I64), local(g, "hi", IR_I64), local(g, "b", IR_U64)};
  ADD(ir_assign(g->f, v.lo, lo));
  ADD(ir_assign(g->f, v.hi, hi));
  ADD(ir_assign(g->f, v.bits, bits));
  ir_stmt *iff = ADD(ir_if(g->f, B(IR_GE, R(v.lo), I(0)), NULL, NULL));
  ir_stmt *save = g->body;
  g->body = ir_then(iff);
  ir_var m = ones_above(g, U(R(v.hi)));
  ADD(ir_assign(g->f, v.bits, B(IR_BAND, R(v.bits), R(m))));
  ir_stmt *cl = ADD(ir_if(g->f, B(IR_GT, U(R(v.hi)), R(v.bits)), NULL, NULL));
  ir_add(g->f, ir_then(cl), ir_assign(g->f, v.hi, ir_cast(g->f, IR_I64, R(v.bits))));
  g->body = save;
  return v;
}

static ivx plain(gb *g, ir_expr *lo, ir_expr *hi) { return mk(g, lo, hi, ALL); }

static ir_expr *hull4(gb *g, int op, ivx a, ivx b, int mm) {
  ir_expr *p0 = B(op, R(a.lo), R(b.lo)), *p1 = B(op, R(a.lo), R(b.hi));
  ir_expr *p2 = B(op, R(a.hi), R(b.lo)), *p3 = B(op, R(a.hi), R(b.hi));
  return B(mm, B(mm, p0, p1), B(mm, p2, p3));
}

static ivx iv(gb *g, const lang_node *n);

static ivx iv_name(gb *g, const lang_node *n) {
  const spc_remap *r = g->r;
  int k = spc_remap_find_in(r, n->name);
  if (k >= 0)
    return plain(g, I(0), B(IR_MAX, B(IR_SUB, ir_load(g->f, g->dims, I(k)), I(1)), I(0)));
  for (int i = g->nlets - 1; i >= 0; i--)
    if (!strcmp(r->let_names[i], n->name)) return g->let[i];
  for (int i = 0; i < r->nparams; i++)
    if (!strcmp(r->params[i].name, n->name)) {
      int64_t v = r->params[i].value;
      return mk(g, I(v), I(v), U(I(v >= 0 ? v : 0)));
    }
  if (!g->s)
    g->s = spc_err(g->e, SPC_ERR_UNSUPPORTED, NULL, n->line, n->col,
                   "spconv gen: cannot bound the name %s", n->name);
  return plain(g, I(0), I(0));
}

static ivx iv(gb *g, const lang_node *n) {
  ivx a, b;
  switch (n->kind) {
  case LN_INT:
    if (n->is_u64) break;
    return mk(g, I(n->ival), I(n->ival), U(I(n->ival)));
  case LN_BOOL: return mk(g, I(n->bval), I(n->bval), U(I(n->bval)));
  case LN_NAME: return iv_name(g, n);
  case LN_COUNTER:
    return plain(g, I(0), B(IR_MAX, ir_load(g->f, g->cmax, I(n->ival)), I(0)));
  case LN_CALL:
    if (n->fn == LF_MIN || n->fn == LF_MAX) {
      a = iv(g, n->kids[0]);
      ir_var lo = local(g, "l", IR_I64), hi = local(g, "h", IR_I64), bits = local(g, "b", IR_U64);
      ADD(ir_assign(g->f, lo, R(a.lo)));
      ADD(ir_assign(g->f, hi, R(a.hi)));
      ADD(ir_assign(g->f, bits, R(a.bits)));
      int op = n->fn == LF_MIN ? IR_MIN : IR_MAX;
      for (int i = 1; i < n->nkids; i++) {
        b = iv(g, n->kids[i]);
        ADD(ir_assign(g->f, lo, B(op, R(lo), R(b.lo))));
        ADD(ir_assign(g->f, hi, B(op, R(hi), R(b.hi))));
        ADD(ir_assign(g->f, bits, B(IR_BOR, R(bits), R(b.bits))));
      }
      return mk(g, R(lo), R(hi), SEL(B(IR_GE, R(lo), I(0)), R(bits), ALL));
    }
    if (n->fn == LF_ABS) {
      a = iv(g, n->kids[0]);
      ir_expr *nn = B(IR_GE, R(a.lo), I(0));
      ir_expr *lo = SEL(B(IR_GE, R(a.lo), I(0)), R(a.lo),
                        SEL(B(IR_LE, R(a.hi), I(0)), ir_un(g->f, IR_NEG, R(a.hi)), I(0)));
      ir_expr *hi = SEL(B(IR_GE, R(a.lo), I(0)), R(a.hi), B(IR_MAX, ir_un(g->f, IR_NEG, R(a.lo)), R(a.hi)));
      return mk(g, lo, hi, SEL(nn, R(a.bits), ALL));
    }
    if (n->fn == LF_CAST && n->nkids == 1) return iv(g, n->kids[0]);
    break;
  case LN_UNARY:
    if (n->op == IR_NOT) return mk(g, I(0), I(1), U(I(1)));
    a = iv(g, n->a);
    if (n->op == IR_NEG) return plain(g, ir_un(g->f, IR_NEG, R(a.hi)), ir_un(g->f, IR_NEG, R(a.lo)));
    if (n->op == IR_BNOT)
      return plain(g, B(IR_SUB, ir_un(g->f, IR_NEG, R(a.hi)), I(1)), B(IR_SUB, ir_un(g->f, IR_NEG, R(a.lo)), I(1)));
    break;
  case LN_COND:
    a = iv(g, n->b);
    b = iv(g, n->c);
    return mk(g, B(IR_MIN, R(a.lo), R(b.lo)), B(IR_MAX, R(a.hi), R(b.hi)),
              SEL(B(IR_LAND, B(IR_GE, R(a.lo), I(0)), B(IR_GE, R(b.lo), I(0))),
                  B(IR_BOR, R(a.bits), R(b.bits)), ALL));
  case LN_BINARY: {
    if (n->op >= IR_LT && n->op <= IR_LOR) return mk(g, I(0), I(1), U(I(1)));
    a = iv(g, n->a);
    b = iv(g, n->b);
    switch (n->op) {
    case IR_ADD: return plain(g, B(IR_ADD, R(a.lo), R(b.lo)), B(IR_ADD, R(a.hi), R(b.hi)));
    case IR_SUB: return plain(g, B(IR_SUB, R(a.lo), R(b.hi)), B(IR_SUB, R(a.hi), R(b.lo)));
    case IR_MUL: return plain(g, hull4(g, IR_MUL, a, b, IR_MIN), hull4(g, IR_MUL, a, b, IR_MAX));
    case IR_DIV: { /* a divisor range holding 0 is refused at run time */
      ir_stmt *iff = ADD(ir_if(g->f, B(IR_LE, R(b.lo), I(0)), NULL, NULL));
      ir_add(g->f, ir_then(iff), ir_fail(g->f, SPC_ERR_UNSUPPORTED,
                                         "cannot bound a division by a range holding 0", NULL, 0));
      return plain(g, hull4(g, IR_DIV, a, b, IR_MIN), hull4(g, IR_DIV, a, b, IR_MAX));
    }
    case IR_REM: { /* |a % b| <= max(|b|) - 1 */
      ir_var m = local(g, "m", IR_I64);
      ADD(ir_assign(g->f, m, B(IR_SUB, B(IR_MAX, R(b.hi), ir_un(g->f, IR_NEG, R(b.lo))), I(1))));
      ir_expr *lo = SEL(B(IR_GE, R(a.lo), I(0)), I(0), B(IR_MAX, R(a.lo), ir_un(g->f, IR_NEG, R(m))));
      ir_expr *hi = SEL(B(IR_LE, R(a.hi), I(0)), I(0), B(IR_MIN, R(a.hi), R(m)));
      return plain(g, lo, hi);
    }
    case IR_SHL:
    case IR_SHR: {
      bool left = n->op == IR_SHL;
      ir_expr *k = B(IR_EQ, R(b.lo), R(b.hi)); /* a constant count keeps the bits */
      if (left) {
        ir_expr *fits = B(IR_LE, R(a.bits), B(IR_SHR, U(I(INT64_MAX)), R(b.lo)));
        ir_expr *bits = SEL(B(IR_LAND, k, fits), B(IR_SHL, R(a.bits), R(b.lo)), ALL);
        return mk(g, B(IR_SHL, R(a.lo), R(b.lo)), B(IR_SHL, R(a.hi), R(b.hi)), bits);
      }
      ir_expr *bits = SEL(B(IR_LAND, k, B(IR_GE, R(a.lo), I(0))), B(IR_SHR, R(a.bits), R(b.lo)), ALL);
      return mk(g, hull4(g, IR_SHR, a, b, IR_MIN), hull4(g, IR_SHR, a, b, IR_MAX), bits);
    }
    case IR_BAND: {
      ir_expr *an = B(IR_GE, R(a.lo), I(0)), *bn = B(IR_GE, R(b.lo), I(0));
      ir_expr *hi = SEL(B(IR_LAND, an, bn), B(IR_MIN, R(a.hi), R(b.hi)),
                        SEL(B(IR_GE, R(a.lo), I(0)), R(a.hi), R(b.hi)));
      ir_expr *bits = SEL(B(IR_LAND, B(IR_GE, R(a.lo), I(0)), B(IR_GE, R(b.lo), I(0))),
                          B(IR_BAND, R(a.bits), R(b.bits)),
                          SEL(B(IR_GE, R(a.lo), I(0)), R(a.bits), R(b.bits)));
      return mk(g, I(0), hi, bits);
    }
    case IR_BOR:
    case IR_BXOR: {
      ir_var bits = local(g, "b", IR_U64);
      ADD(ir_assign(g->f, bits, B(IR_BOR, R(a.bits), R(b.bits))));
      ir_expr *lo = n->op == IR_BXOR ? I(0) : B(IR_MAX, R(a.lo), R(b.lo));
      return mk(g, lo, ir_cast(g->f, IR_I64, R(bits)), R(bits));
    }
    default: break;
    }
    break;
  }
  default: break;
  }
  if (!g->s)
    g->s = spc_err(g->e, SPC_ERR_UNSUPPORTED, NULL, n->line, n->col,
                   "spconv gen: cannot bound this expression of the remapping");
  return plain(g, I(0), I(0));
}

#undef R
#undef I
#undef B
#undef SEL
#undef ALL
#undef U
#undef ADD

/* bounds(dims, cmax, ext): ext[2l] = lo, ext[2l+1] = N of every level */
static spc_status build_bounds(const spc_remap *r, ir_func **out, spc_error *e) {
  gb g = {.r = r, .e = e};
  g.f = *out = ir_func_new("bounds");
  if (!g.f) return SPC_NOMEM(e);
  g.body = ir_func_body(g.f);
  g.dims = ir_param(g.f, "dims", IR_I64, true, IR_IN);
  g.cmax = ir_param(g.f, "cmax", IR_I64, true, IR_IN);
  ir_var ext = ir_param(g.f, "ext", IR_I64, true, IR_OUT);
  ir_add(g.f, g.body, ir_alloc(g.f, ext, ir_int(g.f, 2 * r->order_out), true));
  for (int k = 0; k < r->nlets && k < 64 && !g.s; k++) {
    g.let[k] = iv(&g, r->let_exprs[k]);
    g.nlets = k + 1;
  }
  for (int l = 0; l < r->order_out && !g.s; l++) {
    ivx v = iv(&g, r->out[l]);
    ir_expr *bad = ir_bin(g.f, IR_LT, ir_ref(g.f, v.hi), ir_ref(g.f, v.lo));
    ir_stmt *iff = ir_add(g.f, g.body, ir_if(g.f, bad, NULL, NULL));
    ir_add(g.f, ir_then(iff), ir_fail(g.f, SPC_ERR_UNSUPPORTED,
                                      "cannot bound a level coordinate: no finite range (unsupported)", NULL, 0));
    ir_add(g.f, g.body, ir_store(g.f, ext, ir_int(g.f, 2 * l), ir_ref(g.f, v.lo)));
    ir_add(g.f, g.body, ir_store(g.f, ext, ir_int(g.f, 2 * l + 1),
                                 ir_bin(g.f, IR_ADD, ir_bin(g.f, IR_SUB, ir_ref(g.f, v.hi), ir_ref(g.f, v.lo)),
                                        ir_int(g.f, 1))));
  }
  return g.s ? g.s : ir_verify(g.f, e);
}

/* ---- the fixed driver ----------------------------------------------------------
 * After the routines: read A back to components, remap, a stable sort by
 * level coordinates (the runtime's sort_perm), extents, gather in level order combining equal level
 * tuples (sum), the fill check, "new prefix" flags, then B's levels top
 * first, each level's positions the parents of the next. */
static const char driver[] =
    "\n/* ---- the driver ---------------------------------------------------- */\n"
    "#include <stdlib.h>\n"
    "#include <stdio.h>\n"
    "/* a level holding more positions is refused (\"too large\"); -D to set */\n"
    "#ifndef SPCONV_MAX_POSITIONS\n"
    "#define SPCONV_MAX_POSITIONS INT64_MAX\n"
    "#endif\n"
    "#ifndef SPCONV_TENSOR_DEFINED\n"
    "#define SPCONV_TENSOR_DEFINED\n"
    "/* A tensor as the generated converters take and give it: the arrays of\n"
    " * every level in level order (names in PREFIX_from_arrays / _to_arrays),\n"
    " * int64 each, with their lengths; the values; the level extents\n"
    " * [lo, lo + N) of each level (spconv info and the .bsp.h5 attribute\n"
    " * spconv_format show them; for the row/column levels of CSR, CSC, COO,\n"
    " * DCSR, DCSC, CSF lo = 0 and N = the dimension). */\n"
    "typedef struct spconv_tensor {\n"
    "  int order;\n"
    "  int64_t dims[16];\n"
    "  int nlevels;\n"
    "  int64_t lo[16], N[16];\n"
    "  int narrays;\n"
    "  int64_t *arrays[64];\n"
    "  int64_t lens[64];\n"
    "  void *vals;      /* NULL for pattern */\n"
    "  int64_t nvals;\n"
    "} spconv_tensor;\n"
    "#endif\n"
    "\n"
    "/* Free what a converter allocated in t (arrays, values). */\n"
    "void SPCONV_FN_FREE(spconv_tensor *t);\n"
    "void SPCONV_FN_FREE(spconv_tensor *t) {\n"
    "  for (int k = 0; k < t->narrays; k++) free(t->arrays[k]);\n"
    "  free(t->vals);\n"
    "  memset(t, 0, sizeof *t);\n"
    "}\n"
    "\n"
    "static void spconv_put(char *err, size_t n, const char *m) {\n"
    "  if (err && n) snprintf(err, n, \"%s\", m);\n"
    "}\n"
    "\n"
    "/* Convert in (format SPCONV_FROM) to *out (format SPCONV_TO).  Returns 0,\n"
    " * or a negative code with a message in err: -1 bad input, -3 the\n"
    " * target cannot hold the tensor, -4 out of memory.  *out is owned by\n"
    " * the caller (SPCONV_FN_FREE); on failure it holds nothing. */\n"
    "int SPCONV_FN(const spconv_tensor *in, spconv_tensor *out, char *err, size_t err_len);\n"
    "int SPCONV_FN(const spconv_tensor *in, spconv_tensor *out, char *err, size_t err_len) {\n"
    "  spc_gen_arg a[64 + 16];\n"
    "  int64_t *crd[16] = {0}, *lc[16] = {0}, *lcs[16] = {0}, *perm = NULL, *scr = NULL;\n"
    "  bool *isnew[16] = {0};\n"
    "  spc_rt_key key[16];\n"
    "  int64_t *pp = NULL, ext_in[32], ext[32], cmax[16] = {0}, np = 1, n = 0, m = 0;\n"
    "  char *vals = NULL, *vs = NULL;\n"
    "  int rc = 0, k = 0;\n"
    "  const size_t W = SPCONV_VSIZE;\n"
    "  memset(out, 0, sizeof *out);\n"
    "  if (!in || in->order != SPCONV_ORDER || in->nlevels != SPCONV_LA || in->narrays != SPCONV_NARR_A) {\n"
    "    spconv_put(err, err_len, \"input: wrong order, level count or array count for \" SPCONV_FROM);\n"
    "    return -1;\n"
    "  }\n"
    "  /* 1. components of the source */\n"
    "  memset(a, 0, sizeof a);\n"
    "  for (k = 0; k < SPCONV_NARR_A; k++) a[k].data = in->arrays[k], a[k].len = in->lens[k];\n"
    "  if (W) a[k].data = in->vals, a[k].len = in->nvals, k++;\n"
    "  for (int l = 0; l < SPCONV_LA; l++) ext_in[2 * l] = in->lo[l], ext_in[2 * l + 1] = in->N[l];\n"
    "  a[k].data = ext_in, a[k].len = 2 * SPCONV_LA, k++;\n"
    "  if ((rc = spconv_r_read_entry(a, err, err_len))) return rc;\n"
    "  for (int d = 0; d < SPCONV_ORDER; d++) crd[d] = a[k + d].data;\n"
    "  if (W) vals = a[k + SPCONV_ORDER].data;\n"
    "  n = a[k + SPCONV_ORDER + (W ? 1 : 0)].s.i64;\n"
    "  /* 1b. a counter numbers the components: equal coordinates summed\n"
    "   * first (in their order in the source), as the library combines them\n"
    "   * before remapping, so a duplicate takes no slot of its own */\n"
    "  if (SPCONV_NCTR && n > 1) {\n"
    "    int64_t *cc[16] = {0};\n"
    "    char *cv = NULL;\n"
    "    rc = -4;\n"
    "    if (!(perm = malloc((size_t)n * sizeof(int64_t))) || !(scr = malloc((size_t)n * sizeof(int64_t))))\n"
    "      goto done;\n"
    "    for (int64_t t = 0; t < n; t++) perm[t] = t;\n"
    "    for (int d = 0; d < SPCONV_ORDER; d++) key[d].p = crd[d], key[d].ty = SPC_RT_I64;\n"
    "    spc_sort_perm_i64(perm, n, key, SPCONV_ORDER, scr);\n"
    "    int okc = !W || (cv = malloc((size_t)n * W)) != NULL;\n"
    "    for (int d = 0; d < SPCONV_ORDER && okc; d++) okc = (cc[d] = malloc((size_t)n * sizeof(int64_t))) != NULL;\n"
    "    if (okc) {\n"
    "      for (int64_t t = 0; t < n; t++) {\n"
    "        int64_t u = perm[t];\n"
    "        int same = m > 0;\n"
    "        for (int d = 0; d < SPCONV_ORDER && same; d++) same = cc[d][m - 1] == crd[d][u];\n"
    "        if (same) {\n"
    "          if (W) spconv_add(cv + (m - 1) * W, vals + u * W);\n"
    "          continue;\n"
    "        }\n"
    "        for (int d = 0; d < SPCONV_ORDER; d++) cc[d][m] = crd[d][u];\n"
    "        if (W) memcpy(cv + m * W, vals + u * W, W);\n"
    "        m++;\n"
    "      }\n"
    "    }\n"
    "    for (int d = 0; d < SPCONV_ORDER; d++) free(crd[d]), crd[d] = cc[d];\n"
    "    free(vals), vals = cv;\n"
    "    free(perm), free(scr), perm = scr = NULL;\n"
    "    if (!okc) goto done;\n"
    "    n = m, m = 0, rc = 0;\n"
    "  }\n"
    "  /* 2. remap, sorted by level coordinates */\n"
    "  memset(a, 0, sizeof a);\n"
    "  for (int d = 0; d < SPCONV_ORDER; d++) a[d].data = crd[d], a[d].len = n;\n"
    "  a[SPCONV_ORDER].s.i64 = n;\n"
    "  k = SPCONV_ORDER + 1 + SPCONV_LB + SPCONV_NCTR;\n"
    "  for (int c = 0; c < SPCONV_NCTR; c++) {\n"
    "    int64_t len = 1;\n"
    "    for (int t = 0; t < spconv_cnt_n[c]; t++) {\n"
    "      int64_t x = in->dims[spconv_cnt_idx[c][t]] > 0 ? in->dims[spconv_cnt_idx[c][t]] : 1;\n"
    "      if (len > SPCONV_MAX_POSITIONS / x) { /* the count array: one entry a counted index */\n"
    "        if (err && err_len)\n"
    "          snprintf(err, err_len, \"counter %s needs a count array of more than %lld entries: too large\",\n"
    "                   spconv_cnt_name[c], (long long)SPCONV_MAX_POSITIONS);\n"
    "        rc = -3;\n"
    "        goto done;\n"
    "      }\n"
    "      len *= x;\n"
    "    }\n"
    "    a[k + c].s.i64 = len;\n"
    "  }\n"
    "  if ((rc = spconv_r_remap_entry(a, err, err_len))) goto done;\n"
    "  for (int l = 0; l < SPCONV_LB; l++) lc[l] = a[SPCONV_ORDER + 1 + l].data;\n"
    "  for (int c = 0; c < SPCONV_NCTR; c++) cmax[c] = a[SPCONV_ORDER + 1 + SPCONV_LB + c].s.i64;\n"
    "  perm = malloc((size_t)(n ? n : 1) * sizeof(int64_t));\n"
    "  scr = malloc((size_t)(n ? n : 1) * sizeof(int64_t));\n"
    "  if (!perm || !scr) { rc = -4; goto done; }\n"
    "  for (int64_t t = 0; t < n; t++) perm[t] = t;\n"
    "  for (int l = 0; l < SPCONV_LB; l++) key[l].p = lc[l], key[l].ty = SPC_RT_I64;\n"
    "  spc_sort_perm_i64(perm, n, key, SPCONV_LB, scr);\n"
    "  /* 3. level extents */\n"
    "  memset(a, 0, sizeof a);\n"
    "  a[0].data = (void *)in->dims, a[0].len = SPCONV_ORDER;\n"
    "  a[1].data = cmax, a[1].len = SPCONV_NCTR ? SPCONV_NCTR : 1;\n"
    "  if ((rc = spconv_r_bounds_entry(a, err, err_len))) goto done;\n"
    "  memcpy(ext, a[2].data, 2 * SPCONV_LB * sizeof(int64_t));\n"
    "  free(a[2].data);\n"
    "  /* an empty dimension (and with no components, a counter): every level\n"
    "   * whose range depends on it -- bounded again with it one wider -- holds\n"
    "   * no position (a CSR of no rows: one row pointer), as the library's */\n"
    "  {\n"
    "    int gone[SPCONV_LB > 0 ? SPCONV_LB : 1];\n"
    "    memset(gone, 0, sizeof gone);\n"
    "    for (int k = 0; k < SPCONV_ORDER + SPCONV_NCTR; k++) {\n"
    "      int64_t d2[SPCONV_ORDER], c2[16];\n"
    "      if (k < SPCONV_ORDER ? in->dims[k] != 0 : n != 0) continue;\n"
    "      memcpy(d2, in->dims, sizeof d2);\n"
    "      memcpy(c2, cmax, sizeof c2);\n"
    "      if (k < SPCONV_ORDER) d2[k] = 2;\n"
    "      else c2[k - SPCONV_ORDER] = 1;\n"
    "      memset(a, 0, sizeof a);\n"
    "      a[0].data = d2, a[0].len = SPCONV_ORDER;\n"
    "      a[1].data = c2, a[1].len = SPCONV_NCTR ? SPCONV_NCTR : 1;\n"
    "      if ((rc = spconv_r_bounds_entry(a, err, err_len))) goto done;\n"
    "      for (int l = 0; l < SPCONV_LB; l++)\n"
    "        if (((int64_t *)a[2].data)[2 * l] != ext[2 * l] || ((int64_t *)a[2].data)[2 * l + 1] != ext[2 * l + 1])\n"
    "          gone[l] = 1;\n"
    "      free(a[2].data);\n"
    "    }\n"
    "    for (int l = 0; l < SPCONV_LB; l++)\n"
    "      if (gone[l]) ext[2 * l + 1] = 0;\n"
    "  }\n"
    "  /* 4. level order, equal level tuples summed, new prefixes */\n"
    "  rc = -4;\n"
    "  for (int l = 0; l < SPCONV_LB; l++) {\n"
    "    if (!(lcs[l] = malloc((size_t)(n ? n : 1) * sizeof(int64_t)))) goto done;\n"
    "    for (int64_t t = 0; t < n; t++) lcs[l][t] = lc[l][perm[t]];\n"
    "  }\n"
    "  if (SPCONV_VSIZE_OUT && !(vs = malloc((size_t)(n ? n : 1) * SPCONV_VSIZE_OUT))) goto done;\n"
    "  for (int64_t t = 0; W > 0 && t < n; t++) memcpy(vs + t * W, vals + perm[t] * W, W);\n"
    "  for (int64_t t = 0; t < n; t++) {\n"
    "    int same = m > 0;\n"
    "    for (int l = 0; l < SPCONV_LB && same; l++) same = lcs[l][m - 1] == lcs[l][t];\n"
    "    if (same) {\n"
    "      if (W) spconv_add(vs + (m - 1) * W, vs + t * W);\n"
    "      continue;\n"
    "    }\n"
    "    for (int l = 0; l < SPCONV_LB; l++) lcs[l][m] = lcs[l][t];\n"
    "    if (W && m != t) memmove(vs + m * W, vs + t * W, W);\n"
    "    m++;\n"
    "  }\n"
    "  if (SPCONV_FILL_ZERO) {\n"
    "    int64_t zeros = 0;\n"
    "    for (int64_t t = 0; W > 0 && t < m; t++) zeros += spconv_is_zero(vs + t * W);\n"
    "    if (zeros) {\n"
    "      if (err && err_len) snprintf(err, err_len, \"cannot hold the %lld explicit zeros of this tensor: format %s pads with zeros\", (long long)zeros, SPCONV_TO);\n"
    "      rc = -3;\n"
    "      goto done;\n"
    "    }\n"
    "    if (!W) for (int64_t t = 0; t < m; t++) ((double *)vs)[t] = 1.0;\n"
    "  }\n"
    "  for (int l = 0; l < SPCONV_LB; l++) {\n"
    "    if (!(isnew[l] = malloc((size_t)(m ? m : 1) * sizeof(bool)))) goto done;\n"
    "    for (int64_t t = 0; t < m; t++)\n"
    "      isnew[l][t] = t == 0 || !spconv_unique[l] || (l > 0 && isnew[l - 1][t]) || lcs[l][t] != lcs[l][t - 1];\n"
    "  }\n"
    "  if (!(pp = calloc((size_t)(m ? m : 1), sizeof(int64_t)))) goto done;\n"
    "  /* 5. the levels, top first */\n"
    "  out->order = SPCONV_ORDER;\n"
    "  memcpy(out->dims, in->dims, sizeof out->dims);\n"
    "  out->nlevels = SPCONV_LB;\n"
    "  for (int l = 0; l < SPCONV_LB; l++) {\n"
    "    int na = spconv_narr_b[l];\n"
    "    memset(a, 0, sizeof a);\n"
    "    a[0].data = pp, a[0].len = m;\n"
    "    a[1].data = isnew[l], a[1].len = m;\n"
    "    a[2].data = lcs[l], a[2].len = m;\n"
    "    a[3].s.i64 = m;\n"
    "    a[4].s.i64 = np;\n"
    "    a[5].s.i64 = ext[2 * l + 1];\n"
    "    a[6].s.i64 = ext[2 * l];\n"
    "    a[7].s.i64 = SPCONV_MAX_POSITIONS;\n"
    "    int last = l == SPCONV_LB - 1 && SPCONV_VSIZE_OUT > 0;\n"
    "    if (last) a[8 + na + 2].data = vs, a[8 + na + 2].len = m;\n"
    "    if ((rc = spconv_r_level_entry[l](a, err, err_len))) goto done;\n"
    "    for (int q = 0; q < na; q++) {\n"
    "      out->arrays[out->narrays] = a[8 + q].data;\n"
    "      out->lens[out->narrays++] = a[8 + q].len;\n"
    "    }\n"
    "    free(pp);\n"
    "    pp = a[8 + na].data;\n"
    "    np = a[8 + na + 1].s.i64;\n"
    "    out->lo[l] = ext[2 * l];\n"
    "    out->N[l] = ext[2 * l + 1];\n"
    "    if (last) out->vals = a[8 + na + 3].data, out->nvals = a[8 + na + 3].len;\n"
    "  }\n"
    "  if (!SPCONV_VSIZE_OUT) out->nvals = np;\n"
    "  rc = 0;\n"
    "done:\n"
    "  if (rc == -4) spconv_put(err, err_len, \"out of memory\");\n"
    "  if (rc) SPCONV_FN_FREE(out);\n"
    "  for (int l = 0; l < 16; l++) free(lc[l]), free(lcs[l]), free(isnew[l]);\n"
    "  for (int d = 0; d < 16; d++) free(crd[d]);\n"
    "  free(perm), free(scr), free(pp), free(vals), free(vs);\n"
    "  return rc;\n"
    "}\n";

static const char *ctype_of(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return "int64_t";
  case SPC_U64: return "uint64_t";
  case SPC_F32: return "float";
  case SPC_F64: return "double";
  case SPC_C128: return "double complex (two doubles)";
  default: return "none (pattern)";
  }
}

typedef struct gen {
  spc_str *out;
  const char *name;
  int nlevel;
  int nparams[40];
} gen;

static spc_status emit_one(void *ctx, ir_func *f, spc_error *e) {
  gen *g = ctx;
  char nm[64];
  if (!strcmp(g->name, "level"))
    snprintf(nm, sizeof nm, "spconv_r_level%d", g->nlevel++);
  else
    snprintf(nm, sizeof nm, "spconv_r_%s", g->name);
  if (!strcmp(g->name, "write")) { /* the remapping first, then the levels */
    snprintf(nm, sizeof nm, "spconv_r_remap");
    g->name = "level";
  }
  if (!ir_func_set_name(f, nm)) return SPC_NOMEM(e);
  ir_emit_opts o = {.static_fn = true, .entry = true, .static_entry = true};
  return ir_emit_c(f, &o, g->out, e);
}

static void sanitize(char *s) {
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) *s = '_';
}

spc_status spc_gen_source(const char *from, const char *to, spc_vtype vt,
                          const spc_convert_opts *o, char **text, spc_error *e) {
  const spc_specs *ra, *rb;
  spc_specs *oa = NULL, *ob = NULL;
  const spc_format_spec *A = NULL, *Bf = NULL;
  spc_remap *r = NULL;
  ir_func *bf = NULL;
  spc_str out = {0};
  *text = NULL;
  if (vt < SPC_PATTERN || vt > SPC_C128)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spconv gen: a value type is needed");
  spc_status s = asm_resolve_format(from, o, &ra, &oa, &A, e);
  if (!s) s = asm_resolve_format(to, o, &rb, &ob, &Bf, e);
  int want = o ? o->order : 0;
  int order = A && A->order ? A->order : Bf && Bf->order ? Bf->order : want ? want : 2;
  if (!s && ((A->order && A->order != order) || (Bf->order && Bf->order != order)))
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "formats %s and %s hold different orders",
                A->name, Bf->name);
  if (!s && (want < 0 || want > SPC_MAX_ORDER))
    s = spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "order %d is outside 1..%d", want,
                SPC_MAX_ORDER);
  else if (!s && want && want != order)
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                "format %s holds tensors of order %d, not %d",
                A->order ? A->name : Bf->name, order, want);
  if (!s && o && o->nmodes)
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                "spconv gen: --modes is not supported; write the mode order as a YAML "
                "format's remap, e.g. (i, j, k) -> (k, i, j)");
  spc_remap_param ps[SPC_MAX_PARAMS];
  int np = asm_opts_params(o, ps);
  /* what the target keeps: pattern into a padded format keeps ones */
  spc_vtype vout = Bf && Bf->fill_zero && vt == SPC_PATTERN ? SPC_F64 : vt;
  char fn[160];
  snprintf(fn, sizeof fn, "spconv_%s_to_%s", A ? A->name : "x", Bf ? Bf->name : "y");
  sanitize(fn + 7);
  if (!s) {
    spc_str_addf(&out,
                 "/* %s.c -- converts a tensor from format %s to format %s, values %s.\n"
                 " * Generated by `spconv gen --from=%s --to=%s` (spconv %s) from the\n"
                 " * format specs; standalone C99, no spconv header or library needed:\n"
                 " *   cc -O2 -c %s.c\n"
                 " * Entry points (at the end of the file):\n"
                 " *   int %s(const spconv_tensor *in, spconv_tensor *out, char *err, size_t err_len);\n"
                 " *   void %s_free(spconv_tensor *t);\n"
                 " * in holds the arrays of every level of %s in level order (names in\n"
                 " * %s_from_arrays), all int64; *out receives those of %s (names in\n"
                 " * %s_to_arrays), malloc'ed and owned by the caller.  Duplicates are\n"
                 " * summed. */\n",
                 fn, A->name, Bf->name, ctype_of(vt), from, to, SPCONV_VERSION, fn, fn, fn,
                 A->name, fn, Bf->name, fn);
    spc_str_addf(&out, "#define SPCONV_FN %s\n#define SPCONV_FN_FREE %s_free\n", fn, fn);
    ir_emit_c_prelude(&out);
  }
  gen g = {.out = &out, .name = "read"};
  if (!s) s = asm_read_routine(A, order, IR_I64, IR_I64, vt, 0, false, emit_one, &g, e);
  g.name = "write";
  g.nlevel = 0;
  if (!s) s = asm_write_routines(rb, Bf, order, IR_I64, IR_I64, IR_I64, vout, ps, np, 0, emit_one, &g, e);
  /* the remapping once more, for the extents */
  spc_remap_param all[SPC_SPEC_MAX];
  int nall = 0;
  if (!s) {
    nall = Bf->nparams;
    for (int k = 0; k < Bf->nparams; k++) all[k] = (spc_remap_param){Bf->pnames[k], Bf->pdefaults[k]};
    for (int i = 0; i < np; i++)
      for (int k = 0; k < Bf->nparams; k++)
        if (!strcasecmp(ps[i].name, Bf->pnames[k])) all[k].value = ps[i].value;
    s = Bf->remap.text ? spc_remap_parse(&Bf->remap.at, order, all, nall, &r, e)
                       : spc_remap_identity(order, &r, e);
  }
  if (!s) s = build_bounds(r, &bf, e);
  if (!s) {
    g.name = "bounds";
    s = emit_one(&g, bf, e);
  }
  if (!s) {
    int L = r->order_out, LA = 0, narr_a = 0;
    /* A's levels: as the read routine saw them */
    spc_remap *ra_r = NULL;
    s = A->remap.text ? spc_remap_parse(&A->remap.at, order, NULL, 0, &ra_r, e)
                      : spc_remap_identity(order, &ra_r, e);
    if (s && A->nparams) { /* A's remapping names parameters: its defaults */
      spc_remap_param pa[SPC_SPEC_MAX];
      for (int k = 0; k < A->nparams; k++) pa[k] = (spc_remap_param){A->pnames[k], A->pdefaults[k]};
      spc_error_clear(e);
      s = spc_remap_parse(&A->remap.at, order, pa, A->nparams, &ra_r, e);
    }
    if (!s) LA = ra_r->order_out;
    spc_remap_free(&ra_r);
    const spc_format_level *la[SPC_MAX_ORDER], *lb[SPC_MAX_ORDER];
    for (int l = 0; l < LA; l++) {
      la[l] = &A->lv[l < A->nlevels ? l : A->nlevels - 1];
      if (!A->order && LA < A->nlevels - 1) la[l] = &A->lv[l];
      narr_a += la[l]->lf->narrays;
    }
    for (int l = 0; l < L; l++) {
      lb[l] = &Bf->lv[l < Bf->nlevels ? l : Bf->nlevels - 1];
      if (!Bf->order && L < Bf->nlevels - 1) lb[l] = &Bf->lv[l];
    }
    static const char *const vsz[] = {"0", "8", "8", "4", "8", "16"};
    spc_str_addf(&out, "\n#define SPCONV_FROM \"%s\"\n#define SPCONV_TO \"%s\"\n"
                       "#define SPCONV_ORDER %d\n#define SPCONV_LA %d\n#define SPCONV_LB %d\n"
                       "#define SPCONV_NARR_A %d\n#define SPCONV_NCTR %d\n"
                       "#define SPCONV_VSIZE %s\n#define SPCONV_VSIZE_OUT %s\n#define SPCONV_FILL_ZERO %d\n",
                 A->name, Bf->name, order, LA, L, narr_a, r->ncounters, vsz[vt], vsz[vout],
                 Bf->fill_zero ? 1 : 0);
    spc_str_addf(&out, "const char *const %s_from_arrays[] = {", fn);
    for (int l = 0; l < LA; l++)
      for (int k = 0; k < la[l]->lf->narrays; k++)
        spc_str_addf(&out, "\"level%d_%s\", ", l, la[l]->lf->arrays[k].name);
    spc_str_addf(&out, "NULL};\nconst char *const %s_to_arrays[] = {", fn);
    for (int l = 0; l < L; l++)
      for (int k = 0; k < lb[l]->lf->narrays; k++)
        spc_str_addf(&out, "\"level%d_%s\", ", l, lb[l]->lf->arrays[k].name);
    spc_str_addf(&out, "NULL};\nextern const char *const %s_from_arrays[], *const %s_to_arrays[];\n", fn, fn);
    spc_str_addf(&out, "static const int spconv_narr_b[] = {");
    for (int l = 0; l < L; l++) spc_str_addf(&out, "%d, ", lb[l]->lf->narrays);
    spc_str_addf(&out, "0};\nstatic const int spconv_unique[] = {");
    for (int l = 0; l < L; l++) spc_str_addf(&out, "%d, ", lb[l]->unique ? 1 : 0);
    spc_str_addf(&out, "0};\nstatic const int spconv_cnt_n[] = {");
    for (int c = 0; c < r->ncounters; c++) spc_str_addf(&out, "%d, ", r->counters[c].n);
    spc_str_addf(&out, "0};\nstatic const int spconv_cnt_idx[][16] = {");
    for (int c = 0; c < r->ncounters; c++) {
      spc_str_addf(&out, "{");
      for (int t = 0; t < r->counters[c].n; t++) spc_str_addf(&out, "%d, ", r->counters[c].idx[t]);
      spc_str_addf(&out, "0}, ");
    }
    spc_str_addf(&out, "{0}};\nstatic const char *const spconv_cnt_name[] = {");
    for (int c = 0; c < r->ncounters; c++) {
      spc_str_addf(&out, "\"");
      for (int t = 0; t < r->counters[c].n; t++)
        spc_str_addf(&out, "%s%s", t ? "_" : "", r->in_names[r->counters[c].idx[t]]);
      spc_str_addf(&out, "\", ");
    }
    spc_str_addf(&out, "NULL};\nstatic int (*const spconv_r_level_entry[])(spc_gen_arg *, char *, size_t) = {");
    for (int l = 0; l < L; l++) spc_str_addf(&out, "spconv_r_level%d_entry, ", l);
    spc_str_addf(&out, "NULL};\n");
    /* value helpers */
    switch (vt) {
    case SPC_I64:
    case SPC_U64:
      spc_str_addf(&out, "static void spconv_add(char *d, const char *s) { uint64_t x, y; memcpy(&x, d, 8); memcpy(&y, s, 8); x += y; memcpy(d, &x, 8); }\n"
                         "static int spconv_is_zero(const char *v) { uint64_t x; memcpy(&x, v, 8); return x == 0; }\n");
      break;
    case SPC_F32:
      spc_str_addf(&out, "static void spconv_add(char *d, const char *s) { float x, y; memcpy(&x, d, 4); memcpy(&y, s, 4); x = spc_opaque_f32(x + y); memcpy(d, &x, 4); }\n"
                         "static int spconv_is_zero(const char *v) { float x; memcpy(&x, v, 4); return x == 0; }\n");
      break;
    case SPC_F64:
      spc_str_addf(&out, "static void spconv_add(char *d, const char *s) { double x, y; memcpy(&x, d, 8); memcpy(&y, s, 8); x = spc_opaque_f64(x + y); memcpy(d, &x, 8); }\n"
                         "static int spconv_is_zero(const char *v) { double x; memcpy(&x, v, 8); return x == 0; }\n");
      break;
    case SPC_C128:
      spc_str_addf(&out, "static void spconv_add(char *d, const char *s) { double x[2], y[2]; memcpy(x, d, 16); memcpy(y, s, 16); x[0] = spc_opaque_f64(x[0] + y[0]); x[1] = spc_opaque_f64(x[1] + y[1]); memcpy(d, x, 16); }\n"
                         "static int spconv_is_zero(const char *v) { double x[2]; memcpy(x, v, 16); return x[0] == 0 && x[1] == 0; }\n");
      break;
    default:
      spc_str_addf(&out, "static void spconv_add(char *d, const char *s) { (void)d; (void)s; }\n"
                         "static int spconv_is_zero(const char *v) { (void)v; return 0; }\n");
    }
    spc_str_add(&out, driver, sizeof driver - 1);
    if (out.failed) s = SPC_NOMEM(e);
  }
  ir_func_free(&bf);
  spc_remap_free(&r);
  spc_specs_free(&oa);
  spc_specs_free(&ob);
  if (s) spc_str_free(&out);
  else *text = out.s;
  return s;
}
