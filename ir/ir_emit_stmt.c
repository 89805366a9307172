/* ir_emit_stmt.c -- IR statements as C99 (see ir_emit_c.c for the layout).
 *
 * One C statement per IR statement: assignments and stores as written;
 * `for (i = lo; i < hi; i++)` with hi saved in NAME_hi first unless it is
 * a constant, or a variable or length the body cannot change; if / else
 * if / else chains; ALLOC frees the old array, allocates through
 * spc_gen_alloc and jumps to done on failure; builtins call the runtime
 * (spc_fill_T, spc_prefix_sum_T, spc_shift_T, spc_copy_T,
 * spc_gen_sort_perm_T); FAIL formats err with snprintf and jumps to done. */
#include "ir_emit.h"
#include <stdio.h>
#include <string.h>

/* ---- what a body changes ------------------------------------------------- */

/* Whether s assigns scalar v (assignment, loop variable). */
static bool assigns(const ir_stmt *s, ir_var v) {
  if (!s) return false;
  if ((s->kind == IR_S_ASSIGN || s->kind == IR_S_FOR) && s->var == v) return true;
  for (int k = 0; k < s->nkids; k++)
    if (assigns(s->kids[k], v)) return true;
  return false;
}

/* Whether s reallocates array v (alloc, free). */
static bool reallocates(const ir_stmt *s, ir_var v) {
  if (!s) return false;
  if ((s->kind == IR_S_ALLOC || s->kind == IR_S_FREE) && s->var == v) return true;
  if (s->kind == IR_S_BUILTIN && s->builtin == IR_MOVE && (s->vars[0] == v || s->vars[1] == v))
    return true;
  for (int k = 0; k < s->nkids; k++)
    if (reallocates(s->kids[k], v)) return true;
  return false;
}

/* Whether hi can be tested on every iteration instead of saved. */
static bool steady_bound(const ir_expr *hi, const ir_stmt *body, ir_var loopvar) {
  switch (hi->kind) {
  case IR_E_CONST: return true;
  case IR_E_VAR: return hi->var != loopvar && !assigns(body, hi->var);
  case IR_E_LEN: return !reallocates(body, hi->var);
  case IR_E_CAST: return steady_bound(hi->a, body, loopvar);
  default: return false;
  }
}

/* ---- statements ---------------------------------------------------------- */

static void ind(ectx *c, int depth) {
  for (int k = 0; k < depth; k++) spc_str_add(c->o, "  ", 2);
}

static void line_end(ectx *c) { spc_str_add(c->o, ";\n", 2); }

static void fail_jump(ectx *c, int depth, const char *code);

/* The end of a check's failure block opened at depth: status =
 * SPC_ERR_INTERNAL, to done, and the closing brace. */
static void fail_internal_close(ectx *c, int depth) {
  char code[32];
  snprintf(code, sizeof code, "%d", (int)SPC_ERR_INTERNAL);
  fail_jump(c, depth + 1, code);
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
}

/* check: the failure's message into err (the interpreter's words). */
static void fault_msg(ectx *c, int depth) {
  const char *f = c->flt_a;
  c->flt_used = true;
  c->fails = true;
  ind(c, depth);
  spc_str_addf(c->o, "if (%s) {\n", c->err);
  ind(c, depth + 1);
  spc_str_addf(c->o,
               "if (%s.n >= 0) snprintf(%s, %s, \"index %%lld out of bounds for %%s (length %%lld)\", "
               "(long long)%s.i, %s.a, (long long)%s.n);\n",
               f, c->err, c->err_len, f, f, f);
  ind(c, depth + 1);
  spc_str_addf(c->o, "else if (%s.n == -1) snprintf(%s, %s, \"%%s\", %s.a);\n", f, c->err,
               c->err_len, f);
  ind(c, depth + 1);
  spc_str_addf(c->o, "else snprintf(%s, %s, \"shift count %%lld out of range\", (long long)%s.i);\n",
               c->err, c->err_len, f);
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
}

void emit_load_test(ectx *c, int depth) {
  if (!c->check || !c->flt_pending) return;
  c->flt_pending = false;
  ind(c, depth);
  spc_str_addf(c->o, "if (%s.a) {\n", c->flt_a);
  fault_msg(c, depth + 1);
  fail_internal_close(c, depth);
}

static void for_stmt(ectx *c, const ir_stmt *s, int depth) {
  const char *v = c->cname[s->var];
  ir_ty t = ir_var_get(c->f, s->var)->ty;
  const ir_stmt *body = s->kids[0];
  const char *hi = NULL;
  bool own = false; /* this loop holds the variable's saved bound */
  if (!steady_bound(s->b, body, s->var)) {
    if (c->hiname[s->var] && !c->hibusy[s->var]) {
      hi = c->hiname[s->var]; /* an earlier loop's, free again */
    } else {
      hi = emit_claim(c, v, "_hi");
      spc_str_addf(&c->decl_hi, "  %s %s = 0;\n", emit_cty(t), hi);
      if (!c->hiname[s->var]) c->hiname[s->var] = hi;
    }
    own = hi == c->hiname[s->var];
    if (own) c->hibusy[s->var] = true;
    ind(c, depth);
    spc_str_addf(c->o, "%s = ", hi);
    emit_expr(c, s->b, 0);
    line_end(c);
    emit_load_test(c, depth);
  }
  ind(c, depth);
  spc_str_addf(c->o, "for (%s = ", v);
  emit_expr(c, s->a, 0);
  spc_str_addf(c->o, "; %s < ", v);
  if (hi)
    spc_str_addf(c->o, "%s", hi);
  else
    emit_expr(c, s->b, 11);
  spc_str_addf(c->o, "; %s++) {\n", v);
  c->read[s->var] = true;
  bool test = c->flt_pending; /* the start's loads: tested in the body and after */
  emit_load_test(c, depth + 1);
  emit_loop l = {.up = c->loops, .var = s->var, .steady = !assigns(body, s->var)};
  c->loops = &l;
  emit_stmts(c, body, depth + 1);
  c->loops = l.up;
  if (own) c->hibusy[s->var] = false;
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
  c->flt_pending = test;
  emit_load_test(c, depth);
}

/* check: a condition's loads are tested at the start of each branch
 * after it and after the statement. */
static void if_stmt(ectx *c, const ir_stmt *s, int depth) {
  ind(c, depth);
  spc_str_addf(c->o, "if (");
  bool test = false;
  for (;;) {
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, ") {\n");
    test |= c->flt_pending;
    c->flt_pending = test;
    emit_load_test(c, depth + 1);
    emit_stmts(c, s->kids[0], depth + 1);
    const ir_stmt *e = s->nkids > 1 ? s->kids[1] : NULL;
    ind(c, depth);
    if (e && e->kind == IR_S_BLOCK && e->nkids == 1 && e->kids[0]->kind == IR_S_IF) {
      s = e->kids[0];
      spc_str_addf(c->o, "} else if (");
      continue;
    }
    if (e) {
      spc_str_addf(c->o, "} else {\n");
      c->flt_pending = test;
      emit_load_test(c, depth + 1);
      emit_stmts(c, e, depth + 1);
      ind(c, depth);
    }
    spc_str_addf(c->o, "}\n");
    c->flt_pending = test;
    emit_load_test(c, depth);
    return;
  }
}

static void fail_jump(ectx *c, int depth, const char *code) {
  ind(c, depth);
  spc_str_addf(c->o, "%s = %s;\n", c->status, code);
  ind(c, depth);
  spc_str_addf(c->o, "goto done;\n");
  c->jumps = true;
}

static void alloc_stmt(ectx *c, const ir_stmt *s, int depth) {
  const char *v = c->cname[s->var], *len = c->lname[s->var];
  ind(c, depth);
  spc_str_addf(c->o, "%s = ", len);
  emit_expr(c, s->a, 0);
  line_end(c);
  emit_load_test(c, depth);
  if (c->check) { /* the interpreter's words, not out of memory */
    c->fails = true;
    ind(c, depth);
    spc_str_addf(c->o, "if (%s < 0) {\n", len);
    ind(c, depth + 1);
    spc_str_addf(c->o, "if (%s) snprintf(%s, %s, \"negative length %%lld for %s\", (long long)%s);\n",
                 c->err, c->err, c->err_len, c->cname[s->var], len);
    fail_internal_close(c, depth);
  }
  ind(c, depth);
  spc_str_addf(c->o, "SPC_GEN_FREE(%s);\n", v);
  ind(c, depth);
  spc_str_addf(c->o, "%s = spc_gen_alloc(%s, sizeof *%s, %s);\n", v, len, v,
               s->zero ? "true" : "false");
  ind(c, depth);
  spc_str_addf(c->o, "if (!%s) {\n", v);
  fail_jump(c, depth + 1, "SPC_GEN_NOMEM");
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
}

static const char *const rt_code[] = {"BOOL", "I32", "I64", "U64", "F32", "F64", "C128"};

static void builtin_stmt(ectx *c, const ir_stmt *s, int depth) {
  const ir_var_info *d = ir_var_get(c->f, s->vars[0]);
  for (int k = 0; k < s->nvars; k++) c->read[s->vars[k]] = true;
  ind(c, depth);
  if (s->builtin == IR_MOVE) {
    const char *dn = c->cname[s->vars[0]], *sn = c->cname[s->vars[1]];
    spc_str_addf(c->o, "SPC_GEN_FREE(%s);\n", dn);
    ind(c, depth);
    spc_str_addf(c->o, "%s = %s;\n", dn, sn);
    ind(c, depth);
    spc_str_addf(c->o, "%s = %s;\n", c->lname[s->vars[0]], c->lname[s->vars[1]]);
    ind(c, depth);
    spc_str_addf(c->o, "%s = NULL;\n", sn);
    ind(c, depth);
    spc_str_addf(c->o, "%s = 0;\n", c->lname[s->vars[1]]);
    return;
  }
  if (s->builtin == IR_SORT_PERM) {
    spc_str_addf(c->o, "if (spc_gen_sort_perm_%s(%s, ", ir_ty_short(d->ty),
                 c->cname[s->vars[0]]);
    emit_expr(c, s->args[0], 0);
    spc_str_addf(c->o, ", (const spc_rt_key[]){");
    for (int k = 1; k < s->nvars; k++)
      spc_str_addf(c->o, "%s{%s, SPC_RT_%s}", k > 1 ? ", " : "", c->cname[s->vars[k]],
                   rt_code[ir_var_get(c->f, s->vars[k])->ty]);
    spc_str_addf(c->o, "}, %d) != 0) {\n", s->nvars - 1);
    fail_jump(c, depth + 1, "SPC_GEN_NOMEM");
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    return;
  }
  if (s->builtin == IR_SPMV_LANES || s->builtin == IR_SPMV_LANES_SAME) { /* typed by crd: y, crd, vals, x, yl, bg, en */
    spc_str_addf(c->o, "spc_%s_%s(%s, %s, %s, %s", ir_builtins[s->builtin].name,
                 ir_ty_short(ir_var_get(c->f, s->vars[1])->ty),
                 c->cname[s->vars[0]], c->cname[s->vars[1]], c->cname[s->vars[2]],
                 c->cname[s->vars[3]]);
    for (int k = 0; k < s->nargs; k++) {
      spc_str_addf(c->o, ", ");
      emit_expr(c, s->args[k], 0);
    }
    spc_str_addf(c->o, ");\n");
    return;
  }
  spc_str_addf(c->o, "spc_%s_%s(%s", ir_builtins[s->builtin].name, ir_ty_short(d->ty),
               c->cname[s->vars[0]]);
  for (int k = 0; k < s->nargs; k++) {
    if (s->builtin == IR_COPY && k == 1) spc_str_addf(c->o, ", %s", c->cname[s->vars[1]]);
    spc_str_addf(c->o, ", ");
    emit_expr(c, s->args[k], 0);
  }
  spc_str_addf(c->o, ");\n");
}

/* ---- check: the interpreter's range checks of a builtin, before it ------ */

/* x as C text (kept in t; the caller frees t). */
static const char *etext(ectx *c, const ir_expr *x, spc_str *t) {
  spc_str *o = c->o;
  c->o = t;
  spc_str_addf(t, "(");
  emit_expr(c, x, 0);
  spc_str_addf(t, ")");
  c->o = o;
  if (t->failed || !t->s) c->nomem = true;
  return t->s ? t->s : "0";
}

/* if (cond) { err = msg (printf args); status = SPC_ERR_INTERNAL; goto done; } */
static void check_fail(ectx *c, int depth, const char *cond, const char *msg, const char *args) {
  c->fails = true;
  ind(c, depth);
  spc_str_addf(c->o, "if (%s) {\n", cond);
  /* an argument's failed load (read as 0) is the cause to report */
  ind(c, depth + 1);
  spc_str_addf(c->o, "if (%s.a) {\n", c->flt_a);
  fault_msg(c, depth + 2);
  ind(c, depth + 1);
  spc_str_addf(c->o, "} else if (%s) {\n", c->err);
  ind(c, depth + 2);
  spc_str_addf(c->o, "snprintf(%s, %s, \"%s\", %s);\n", c->err, c->err_len, msg, args);
  ind(c, depth + 1);
  spc_str_addf(c->o, "}\n");
  fail_internal_close(c, depth);
}

static void builtin_check(ectx *c, const ir_stmt *s, int depth) {
  spc_str t[3] = {{0}}, cond = {0}, msg = {0}, args = {0};
  const char *a[3] = {"0", "0", "0"};
  for (int k = 0; k < s->nargs && k < 3; k++) a[k] = etext(c, s->args[k], &t[k]);
  const char *n0 = c->cname[s->vars[0]], *l0 = c->lname[s->vars[0]];
  c->len_read[s->vars[0]] = true;
  switch (s->builtin) {
  case IR_FILL:
  case IR_PREFIX_SUM:
    spc_str_addf(&cond, "%s < %s && (%s < 0 || %s > %s)", a[0], a[1], a[0], a[1], l0);
    spc_str_addf(&msg, "range [%%lld, %%lld) out of bounds for %s (length %%lld)", n0);
    spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)%s", a[0], a[1], l0);
    check_fail(c, depth, cond.s, msg.s, args.s);
    break;
  case IR_SHIFT:
    spc_str_addf(&cond, "%s < 0 || %s > %s || %s > %s - 1", a[0], a[0], a[1], a[1], l0);
    spc_str_addf(&msg, "shift range [%%lld, %%lld] out of bounds for %s (length %%lld)", n0);
    spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)%s", a[0], a[1], l0);
    check_fail(c, depth, cond.s, msg.s, args.s);
    break;
  case IR_COPY: {
    const char *n1 = c->cname[s->vars[1]], *l1 = c->lname[s->vars[1]];
    c->len_read[s->vars[1]] = true;
    spc_str_addf(&cond, "%s < 0 || %s < 0 || %s > %s - %s", a[2], a[0], a[0], l0, a[2]);
    spc_str_addf(&msg, "copy: destination range [%%lld, %%lld + %%lld) out of bounds for %s (length %%lld)", n0);
    spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)%s, (long long)%s", a[0], a[0], a[2], l0);
    check_fail(c, depth, cond.s, msg.s, args.s);
    cond.len = msg.len = args.len = 0;
    spc_str_addf(&cond, "%s < 0 || %s > %s - %s", a[1], a[1], l1, a[2]);
    spc_str_addf(&msg, "copy: source range [%%lld, %%lld + %%lld) out of bounds for %s (length %%lld)", n1);
    spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)%s, (long long)%s", a[1], a[1], a[2], l1);
    check_fail(c, depth, cond.s, msg.s, args.s);
    break;
  }
  case IR_SORT_PERM: {
    spc_str_addf(&cond, "%s < 0 || %s > %s", a[0], a[0], l0);
    spc_str_addf(&msg, "sort_perm: n = %%lld out of bounds for %s (length %%lld)", n0);
    spc_str_addf(&args, "(long long)%s, (long long)%s", a[0], l0);
    check_fail(c, depth, cond.s, msg.s, args.s);
    const char *k = emit_claim(c, "chk", "_k"), *v = emit_claim(c, "chk", "_v");
    ind(c, depth);
    spc_str_addf(c->o, "for (int64_t %s = 0; %s < %s; %s++) {\n", k, k, a[0], k);
    ind(c, depth + 1);
    spc_str_addf(c->o, "int64_t %s = (int64_t)%s[%s];\n", v, n0, k);
    for (int j = 1; j < s->nvars; j++) {
      const char *nj = c->cname[s->vars[j]], *lj = c->lname[s->vars[j]];
      c->len_read[s->vars[j]] = true;
      cond.len = msg.len = args.len = 0;
      spc_str_addf(&cond, "%s < 0 || %s >= %s", v, v, lj);
      spc_str_addf(&msg, "sort_perm: %s[%%lld] = %%lld out of bounds for key %s (length %%lld)", n0, nj);
      spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)%s", k, v, lj);
      check_fail(c, depth + 1, cond.s, msg.s, args.s);
    }
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    break;
  }
  case IR_SPMV_LANES:
  case IR_SPMV_LANES_SAME: { /* y, crd, vals, x; yl, bg, en */
    const char *bn = ir_builtins[s->builtin].name;
    const char *crd = c->cname[s->vars[1]], *lcrd = c->lname[s->vars[1]];
    const char *vals = c->cname[s->vars[2]], *lvals = c->lname[s->vars[2]];
    const char *x = c->cname[s->vars[3]], *lx = c->lname[s->vars[3]];
    for (int j = 1; j < 4; j++) c->len_read[s->vars[j]] = true;
    spc_str_addf(&cond, "(uint64_t)%s >= (uint64_t)%s", a[0], l0);
    spc_str_addf(&msg, "%s: index %%lld out of bounds for %s (length %%lld)", bn, n0);
    spc_str_addf(&args, "(long long)%s, (long long)%s", a[0], l0);
    check_fail(c, depth, cond.s, msg.s, args.s);
    const char *arr[2] = {crd, vals}, *len[2] = {lcrd, lvals};
    for (int j = 0; j < 2; j++) {
      cond.len = msg.len = args.len = 0;
      spc_str_addf(&cond, "%s < %s && (%s < 0 || %s > %s)", a[1], a[2], a[1], a[2], len[j]);
      spc_str_addf(&msg, "%s: range [%%lld, %%lld + %%lld) out of bounds for %s (length %%lld)", bn, arr[j]);
      spc_str_addf(&args, "(long long)%s, (long long)%s, (long long)(%s - %s), (long long)%s", a[1], a[1],
                   a[2], a[1], len[j]);
      check_fail(c, depth, cond.s, msg.s, args.s);
    }
    const char *k = emit_claim(c, "chk", "_k");
    ind(c, depth);
    spc_str_addf(c->o, "for (int64_t %s = %s; %s < %s; %s++) {\n", k, a[1], k, a[2], k);
    cond.len = msg.len = args.len = 0;
    spc_str_addf(&cond, "(uint64_t)(int64_t)%s[%s] >= (uint64_t)%s", crd, k, lx);
    spc_str_addf(&msg, "%s: %s[%%lld] = %%lld out of bounds for %s (length %%lld)", bn, crd, x);
    spc_str_addf(&args, "(long long)%s, (long long)%s[%s], (long long)%s", k, crd, k, lx);
    check_fail(c, depth + 1, cond.s, msg.s, args.s);
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    break;
  }
  default: break;
  }
  if (cond.failed || msg.failed || args.failed) c->nomem = true;
  for (int k = 0; k < 3; k++) spc_str_free(&t[k]);
  spc_str_free(&cond);
  spc_str_free(&msg);
  spc_str_free(&args);
}

static void fail_stmt(ectx *c, const ir_stmt *s, int depth) {
  c->fails = true;
  ind(c, depth);
  spc_str_addf(c->o, "if (%s) snprintf(%s, %s, ", c->err, c->err, c->err_len);
  ir_fmt_cstring(c->o, s->msg);
  for (int k = 0; k < s->nargs; k++) {
    spc_str_addf(c->o, ", (long long)");
    emit_expr(c, s->args[k], 14);
  }
  spc_str_addf(c->o, ");\n");
  emit_load_test(c, depth); /* an argument's failed load: that message */
  char code[32];
  snprintf(code, sizeof code, "%d", (int)s->code);
  fail_jump(c, depth, code);
}

/* s is `a[i] = a[i] + e` with i a variable (CUDA: atomicAdd(&a[i], e)). */
static bool atomic_add(const ir_stmt *s) {
  const ir_expr *v = s->b, *i = s->a;
  return i->kind == IR_E_VAR && v->kind == IR_E_BIN && v->op == IR_ADD &&
         v->a->kind == IR_E_LOAD && v->a->var == s->var && v->a->a->kind == IR_E_VAR &&
         v->a->a->var == i->var;
}

static void stmt(ectx *c, const ir_stmt *s, int depth) {
  switch (s->kind) {
  case IR_S_BLOCK:
    ind(c, depth);
    spc_str_addf(c->o, "{\n");
    emit_stmts(c, s, depth + 1);
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    return;
  case IR_S_ASSIGN:
    ind(c, depth);
    spc_str_addf(c->o, "%s = ", c->cname[s->var]);
    emit_expr(c, s->a, 0);
    line_end(c);
    emit_load_test(c, depth);
    return;
  case IR_S_STORE:
    ind(c, depth);
    c->read[s->var] = true;
    if (s->var == c->atomic && atomic_add(s)) {
      spc_str_addf(c->o, "atomicAdd(&%s[", c->cname[s->var]);
      emit_expr(c, s->a, 0);
      spc_str_addf(c->o, "], ");
      emit_expr(c, s->b->b, 0);
      spc_str_addf(c->o, ");\n");
      return;
    }
    if (c->check) { /* the index once, checked; then the store (kept plain:
                       the compiler may keep a[i] in a register across a loop) */
      c->len_read[s->var] = true;
      c->flt_used = true;
      if (!c->sidx) {
        c->sidx = emit_claim(c, "sidx", "");
        spc_str_addf(&c->decl_hi, "  int64_t %s = 0;\n", c->sidx);
      }
      spc_str_addf(c->o, "%s = (int64_t)(", c->sidx);
      emit_expr(c, s->a, 0);
      spc_str_addf(c->o, ");\n");
      bool pend = c->flt_pending; /* the index's loads: tested after the store */
      ind(c, depth);
      spc_str_addf(c->o, "if ((uint64_t)%s >= (uint64_t)%s) {\n", c->sidx, c->lname[s->var]);
      ind(c, depth + 1);
      spc_str_addf(c->o, "if (!%s.a) spc_rt_note(&%s, %s, %s, \"%s\");\n", c->flt_a, c->flt_a,
                   c->sidx, c->lname[s->var], c->cname[s->var]);
      c->flt_pending = true;
      emit_load_test(c, depth + 1);
      ind(c, depth);
      spc_str_addf(c->o, "}\n");
      c->flt_pending = pend;
      ind(c, depth);
      spc_str_addf(c->o, "%s[%s] = ", c->cname[s->var], c->sidx);
      emit_expr(c, s->b, 0);
      line_end(c);
      emit_load_test(c, depth);
      return;
    }
    spc_str_addf(c->o, "%s[", c->cname[s->var]);
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, "] = ");
    emit_expr(c, s->b, 0);
    line_end(c);
    emit_load_test(c, depth);
    return;
  case IR_S_FOR: {
    for_stmt(c, s, depth);
    return;
  }
  case IR_S_WHILE: {
    ind(c, depth);
    spc_str_addf(c->o, "while (");
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, ") {\n");
    bool test = c->flt_pending; /* the condition's loads: in the body and after */
    emit_load_test(c, depth + 1);
    emit_stmts(c, s->kids[0], depth + 1);
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    c->flt_pending = test;
    emit_load_test(c, depth);
    return;
  }
  case IR_S_IF: {
    if_stmt(c, s, depth);
    return;
  }
  case IR_S_ALLOC: {
    alloc_stmt(c, s, depth);
    emit_load_test(c, depth);
    return;
  }
  case IR_S_FREE:
    ind(c, depth);
    spc_str_addf(c->o, "SPC_GEN_FREE(%s);\n", c->cname[s->var]);
    ind(c, depth);
    spc_str_addf(c->o, "%s = NULL;\n", c->cname[s->var]);
    ind(c, depth);
    spc_str_addf(c->o, "%s = 0;\n", c->lname[s->var]);
    return;
  case IR_S_BUILTIN: {
    if (c->check) builtin_check(c, s, depth);
    builtin_stmt(c, s, depth);
    emit_load_test(c, depth);
    return;
  }
  case IR_S_FAIL: {
    fail_stmt(c, s, depth);
    return;
  }
  case IR_S_BREAK:
    ind(c, depth);
    spc_str_addf(c->o, "break;\n");
    return;
  }
}

void emit_stmts(ectx *c, const ir_stmt *s, int depth) {
  if (s->kind != IR_S_BLOCK) {
    stmt(c, s, depth);
    return;
  }
  for (int k = 0; k < s->nkids; k++) stmt(c, s->kids[k], depth);
}
