/* ir_print.c -- the IR listing (ir_print) and the expression and statement
 * formatters it shares with ir_verify's and ir_run's messages.
 *
 *   func csr_count(in n: i64, in row: i64[], out pos: i64[]) {
 *     var i: i64
 *     pos = new i64[n + 1] zeroed
 *     for i in 0 .. len(row) {
 *       pos[row[i] + 1] = pos[row[i] + 1] + 1
 *     }
 *   }
 *
 * Expressions use C's operators and precedence; min, max, abs, len and
 * casts (`f64(x)`) read as calls.  The formatters accept ill-formed trees
 * (verify prints what it rejects): a missing node prints as `<null>`. */
#include "ir_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRINT_DEPTH 64 /* deeper expressions print as `...` */

int ir_prec_bin(ir_op op) {
  switch (op) {
  case IR_MUL:
  case IR_DIV:
  case IR_REM: return 13;
  case IR_ADD:
  case IR_SUB: return 12;
  case IR_SHL:
  case IR_SHR: return 11;
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE: return 10;
  case IR_EQ:
  case IR_NE: return 9;
  case IR_BAND: return 8;
  case IR_BXOR: return 7;
  case IR_BOR: return 6;
  case IR_LAND: return 5;
  case IR_LOR: return 4;
  default: return 16; /* min, max: calls */
  }
}

static const char *vname(const ir_func *f, ir_var v) {
  const ir_var_info *vi = ir_var_get(f, v);
  return vi && vi->name ? vi->name : "<bad var>";
}

/* Shortest decimal that reads back as the same double (or float). */
static void fmt_real(spc_str *o, double x, bool f32) {
  if (isnan(x)) {
    spc_str_addf(o, "nan");
    return;
  }
  if (isinf(x)) {
    spc_str_addf(o, x < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, x);
    if (f32 ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
  }
  if (!strpbrk(buf, ".e")) strcat(buf, ".0");
  spc_str_addf(o, "%s%s", buf, f32 ? "f" : "");
}

static void fmt_const(spc_str *o, const ir_expr *e) {
  switch (e->ty) {
  case IR_BOOL: spc_str_addf(o, "%s", e->v.b ? "true" : "false"); return;
  case IR_I32: spc_str_addf(o, "%d", (int)e->v.i32); return;
  case IR_I64: spc_str_addf(o, "%lld", (long long)e->v.i64); return;
  case IR_U64: spc_str_addf(o, "%lluu", (unsigned long long)e->v.u64); return;
  case IR_F32: fmt_real(o, e->v.f32, true); return;
  case IR_F64: fmt_real(o, e->v.f64, false); return;
  case IR_C128:
    spc_str_addf(o, "c128(");
    fmt_real(o, e->v.c128[0], false);
    spc_str_addf(o, ", ");
    fmt_real(o, e->v.c128[1], false);
    spc_str_addf(o, ")");
    return;
  default: spc_str_addf(o, "<bad const>"); return;
  }
}

static int prec(const ir_expr *e) {
  if (!e) return 16;
  switch (e->kind) {
  case IR_E_BIN: return ir_prec_bin(e->op);
  case IR_E_UN: return e->op == IR_ABS ? 16 : 14;
  case IR_E_SELECT: return 3;
  case IR_E_CONST: /* a negative number reads as a unary minus */
    return (e->ty == IR_I32 && e->v.i32 < 0) || (e->ty == IR_I64 && e->v.i64 < 0) ||
                   (ir_ty_float(e->ty) && signbit(e->ty == IR_F32 ? e->v.f32 : e->v.f64))
               ? 14
               : 16;
  default: return 16;
  }
}

static void expr(spc_str *o, const ir_func *f, const ir_expr *e, int depth);

/* e, parenthesized when its precedence is below min. */
static void sub(spc_str *o, const ir_func *f, const ir_expr *e, int min, int depth) {
  bool p = prec(e) < min;
  if (p) spc_str_add(o, "(", 1);
  expr(o, f, e, depth + 1);
  if (p) spc_str_add(o, ")", 1);
}

static void expr(spc_str *o, const ir_func *f, const ir_expr *e, int depth) {
  if (!e) {
    spc_str_addf(o, "<null>");
    return;
  }
  if (depth > PRINT_DEPTH) {
    spc_str_addf(o, "...");
    return;
  }
  switch (e->kind) {
  case IR_E_CONST: {
    fmt_const(o, e);
    return;
  }
  case IR_E_VAR: {
    spc_str_addf(o, "%s", vname(f, e->var));
    return;
  }
  case IR_E_LOAD:
    spc_str_addf(o, "%s[", vname(f, e->var));
    expr(o, f, e->a, depth + 1);
    {
      spc_str_addf(o, "]");
      return;
    }
  case IR_E_LEN: {
    spc_str_addf(o, "len(%s)", vname(f, e->var));
    return;
  }
  case IR_E_BIN: {
    int p = ir_prec_bin(e->op);
    if (p == 16) { /* min, max */
      spc_str_addf(o, "%s(", ir_op_name(e->op));
      expr(o, f, e->a, depth + 1);
      spc_str_addf(o, ", ");
      expr(o, f, e->b, depth + 1);
      {
        spc_str_addf(o, ")");
        return;
      }
    }
    sub(o, f, e->a, p, depth);
    spc_str_addf(o, " %s ", ir_op_name(e->op));
    {
      sub(o, f, e->b, p + 1, depth);
      return;
    }
  }
  case IR_E_UN:
    if (e->op == IR_ABS) {
      spc_str_addf(o, "abs(");
      expr(o, f, e->a, depth + 1);
      {
        spc_str_addf(o, ")");
        return;
      }
    }
    spc_str_addf(o, "%s", ir_op_name(e->op));
    {
      sub(o, f, e->a, 15, depth);
      return;
    } /* -(-x), not --x */
  case IR_E_CAST:
    spc_str_addf(o, "%s(", ir_ty_short(e->ty));
    expr(o, f, e->a, depth + 1);
    {
      spc_str_addf(o, ")");
      return;
    }
  case IR_E_SELECT:
    sub(o, f, e->c, 4, depth);
    spc_str_addf(o, " ? ");
    sub(o, f, e->a, 4, depth);
    spc_str_addf(o, " : ");
    {
      sub(o, f, e->b, 3, depth);
      return;
    }
  }
  spc_str_addf(o, "<bad expr>");
}

void ir_fmt_expr(spc_str *o, const ir_func *f, const ir_expr *e) { expr(o, f, e, 0); }

/* ---- statements ---------------------------------------------------------- */

static const ir_expr *arg(const ir_stmt *s, int k) {
  return s->args && k < s->nargs ? s->args[k] : NULL;
}

static void builtin(spc_str *o, const ir_func *f, const ir_stmt *s) {
  bool ok = (int)s->builtin >= 0 && s->builtin < IR_NBUILTINS && s->vars && s->nvars >= 1;
  if (!ok) {
    spc_str_addf(o, "<bad builtin>");
    return;
  }
  spc_str_addf(o, "%s(%s", ir_builtins[s->builtin].name, vname(f, s->vars[0]));
  for (int k = 0; k < s->nargs; k++) {
    if (s->builtin == IR_COPY && k == 1 && s->nvars > 1)
      spc_str_addf(o, ", %s", vname(f, s->vars[1]));
    spc_str_addf(o, ", ");
    ir_fmt_expr(o, f, arg(s, k));
  }
  if (s->builtin == IR_MOVE && s->nvars > 1) spc_str_addf(o, ", %s", vname(f, s->vars[1]));
  if (s->builtin == IR_SORT_PERM || s->builtin == IR_SPMV_LANES || s->builtin == IR_SPMV_LANES_SAME)
    for (int k = 1; k < s->nvars; k++) spc_str_addf(o, ", %s", vname(f, s->vars[k]));
  spc_str_addf(o, ")");
}

void ir_fmt_cstring(spc_str *o, const char *s) {
  spc_str_add(o, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      spc_str_addf(o, "\\%c", *p);
    else if (*p == '\n')
      spc_str_addf(o, "\\n");
    else if (*p == '?' && p[1] == '?')
      spc_str_addf(o, "?\\?"), p++;
    else if (*p < 32 || *p >= 127)
      spc_str_addf(o, "\\%03o", *p);
    else
      spc_str_add(o, (const char *)p, 1);
  }
  spc_str_add(o, "\"", 1);
}

void ir_fmt_stmt_head(spc_str *o, const ir_func *f, const ir_stmt *s) {
  if (!s) {
    spc_str_addf(o, "<null>");
    return;
  }
  switch (s->kind) {
  case IR_S_BLOCK: {
    spc_str_addf(o, "{ %d statements }", s->nkids);
    return;
  }
  case IR_S_ASSIGN:
    spc_str_addf(o, "%s = ", vname(f, s->var));
    {
      ir_fmt_expr(o, f, s->a);
      return;
    }
  case IR_S_STORE:
    spc_str_addf(o, "%s[", vname(f, s->var));
    ir_fmt_expr(o, f, s->a);
    spc_str_addf(o, "] = ");
    {
      ir_fmt_expr(o, f, s->b);
      return;
    }
  case IR_S_FOR:
    spc_str_addf(o, "for %s in ", vname(f, s->var));
    ir_fmt_expr(o, f, s->a);
    spc_str_addf(o, " .. ");
    {
      ir_fmt_expr(o, f, s->b);
      return;
    }
  case IR_S_WHILE:
    spc_str_addf(o, "while ");
    {
      ir_fmt_expr(o, f, s->a);
      return;
    }
  case IR_S_IF:
    spc_str_addf(o, "if ");
    {
      ir_fmt_expr(o, f, s->a);
      return;
    }
  case IR_S_ALLOC: {
    const ir_var_info *vi = ir_var_get(f, s->var);
    spc_str_addf(o, "%s = new %s[", vname(f, s->var), vi ? ir_ty_short(vi->ty) : "?");
    ir_fmt_expr(o, f, s->a);
    {
      spc_str_addf(o, "]%s", s->zero ? " zeroed" : "");
      return;
    }
  }
  case IR_S_FREE: {
    spc_str_addf(o, "free %s", vname(f, s->var));
    return;
  }
  case IR_S_BUILTIN: {
    builtin(o, f, s);
    return;
  }
  case IR_S_FAIL:
    spc_str_addf(o, "fail(%d, ", (int)s->code);
    if (s->msg)
      ir_fmt_cstring(o, s->msg);
    else
      spc_str_addf(o, "<null>");
    for (int k = 0; k < s->nargs; k++) {
      spc_str_addf(o, ", ");
      ir_fmt_expr(o, f, arg(s, k));
    }
    {
      spc_str_addf(o, ")");
      return;
    }
  case IR_S_BREAK: {
    spc_str_addf(o, "break");
    return;
  }
  }
  spc_str_addf(o, "<bad statement>");
}

static void indent(spc_str *o, int depth) {
  for (int k = 0; k < depth; k++) spc_str_add(o, "  ", 2);
}

static void block(spc_str *o, const ir_func *f, const ir_stmt *b, int depth);

static void stmt(spc_str *o, const ir_func *f, const ir_stmt *s, int depth) {
  indent(o, depth);
  if (s && s->kind == IR_S_BLOCK) {
    spc_str_addf(o, "{\n");
    block(o, f, s, depth + 1);
    indent(o, depth);
    {
      spc_str_addf(o, "}\n");
      return;
    }
  }
  ir_fmt_stmt_head(o, f, s);
  if (!s || (s->kind != IR_S_FOR && s->kind != IR_S_WHILE && s->kind != IR_S_IF)) {
    spc_str_addf(o, "\n");
    return;
  }
  spc_str_addf(o, " {\n");
  block(o, f, s->nkids > 0 ? s->kids[0] : NULL, depth + 1);
  /* else, and else-if chains */
  while (s->kind == IR_S_IF && s->nkids > 1 && s->kids[1]) {
    const ir_stmt *e = s->kids[1];
    indent(o, depth);
    if (e->kind == IR_S_BLOCK && e->nkids == 1 && e->kids[0] &&
        e->kids[0]->kind == IR_S_IF) {
      s = e->kids[0];
      spc_str_addf(o, "} else ");
      ir_fmt_stmt_head(o, f, s);
      spc_str_addf(o, " {\n");
      block(o, f, s->kids[0], depth + 1);
      continue;
    }
    spc_str_addf(o, "} else {\n");
    block(o, f, e, depth + 1);
    break;
  }
  indent(o, depth);
  spc_str_addf(o, "}\n");
}

/* The statements of b (a block, or one statement) at depth. */
static void block(spc_str *o, const ir_func *f, const ir_stmt *b, int depth) {
  if (b && b->kind == IR_S_BLOCK) {
    for (int k = 0; k < b->nkids; k++) stmt(o, f, b->kids[k], depth);
  } else {
    stmt(o, f, b, depth);
  }
}

spc_status ir_print(const ir_func *f, spc_str *o) {
  static const char *const dir[] = {"var", "in", "inout", "out", "give", "?", "?", "?"};
  if (!f || !o) return SPC_ERR_ARG;
  spc_str_addf(o, "func %s(", ir_func_name(f));
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = ir_var_get(f, f->params[k]);
    if (!vi) continue;
    spc_str_addf(o, "%s%s %s: %s%s", k ? ", " : "", dir[vi->dir & 7], vi->name,
                 ir_ty_short(vi->ty), vi->array ? "[]" : "");
  }
  spc_str_addf(o, ") {\n");
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    if (vi->dir == IR_LOCAL)
      spc_str_addf(o, "  var %s: %s%s\n", vi->name, ir_ty_short(vi->ty),
                   vi->array ? "[]" : "");
  }
  if (f->broken) spc_str_addf(o, "  # broken: %s\n", f->msg);
  block(o, f, f->body, 1);
  spc_str_addf(o, "}\n");
  return o->failed ? SPC_ERR_NOMEM : SPC_OK;
}
