/* ir_emit_c.c -- ir_emit_c: a function as one readable C99 function.
 *
 *   int csr_count(int64_t n, const int64_t *row, int64_t row_len,
 *                 int64_t **pos_out, int64_t *pos_len_out, char *err,
 *                 size_t err_len) {
 *     int status = 0;
 *     int64_t *pos = NULL;
 *     ...
 *     for (i = 0; i < row_len; i++) {
 *       pos[row[i] + 1] = ...;
 *     }
 *   done:
 *     if (status == 0) { *pos_out = pos; ... } else { SPC_GEN_FREE(pos); ... }
 *     return status;
 *   }
 *
 * Variables keep their IR names (a C keyword or a name the prelude uses
 * gets a trailing _), are declared once at the top and start at zero.
 * Scalar OUT / INOUT parameters are copied to locals and written back on
 * success; OUT arrays are locals handed out on success and freed on
 * failure; local arrays are freed at the one `done:` exit.  A for loop's
 * upper bound is evaluated once (kept in NAME_hi unless it is a constant,
 * or a variable or length the body cannot change).  The prelude (includes,
 * allocator macros, and the runtime ir_rt.h verbatim) makes the output a
 * standalone file. */
#include "ir_emit.h"
#include <stdio.h>
#include <string.h>

/* ---- names ----------------------------------------------------------------------- */

static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline",
    "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
    "void", "volatile", "while", "bool", "true", "false", "NULL", "malloc",
    "calloc", "realloc", "free", "memset", "memcpy", "memmove", "snprintf",
    "fmod", "fmodf", "fabs", "fabsf", "isnan", "signbit", "INFINITY",
    "HUGE_VAL", "NAN", "size_t", "int32_t", "int64_t", "uint32_t", "uint64_t",
    "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX", "UINT64_MAX",
    "UINT64_C", "INT64_C", "SIZE_MAX", "errno", "main", "asm", "typeof",
    NULL};

static bool taken(const ectx *c, const char *s) {
  if (s[0] == '_' || !strncmp(s, "spc_", 4) || !strncmp(s, "SPC_", 4) ||
      !strcmp(s, c->f->name))
    return true;
  for (int k = 0; reserved[k]; k++)
    if (!strcmp(s, reserved[k])) return true;
  for (int k = 0; k < c->nnames; k++)
    if (!strcmp(s, c->names[k])) return true;
  return false;
}

/* A fresh identifier: base, or base with _ appended until unused. */
static const char *claim(ectx *c, const char *base) {
  size_t n = strlen(base);
  char *s = spc_malloc(n + 64);
  if (!s || c->nomem) goto nomem;
  memcpy(s, base, n + 1);
  while (taken(c, s) && n < strlen(base) + 60) s[n++] = '_', s[n] = 0;
  if (c->nnames == c->capnames) {
    int cap = c->capnames ? 2 * c->capnames : 32;
    char **q = spc_realloc(c->names, (size_t)cap * sizeof *q);
    if (!q) goto nomem;
    c->names = q;
    c->capnames = cap;
  }
  c->names[c->nnames++] = s;
  return s;
nomem:
  spc_free(s);
  c->nomem = true;
  return "x";
}

static const char *claim2(ectx *c, const char *base, const char *suffix) {
  char buf[300];
  snprintf(buf, sizeof buf, "%s%s", base, suffix);
  return claim(c, buf);
}

/* ---- what a body changes ------------------------------------------------------------ */

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

/* ---- statements ------------------------------------------------------------------- */

typedef struct emit_fn {
  ectx *c;
  spc_str decl_hi; /* declarations of saved loop bounds */
  bool jumps;      /* some statement jumps to done */
  bool fails;      /* a FAIL statement uses err */
  const char *status, *err, *err_len; /* names of these */
} emit_fn;

static void ind(ectx *c, int depth) {
  for (int k = 0; k < depth; k++) spc_str_add(c->o, "  ", 2);
}

static void stmts(emit_fn *m, const ir_stmt *s, int depth);

static void line_end(ectx *c) { spc_str_add(c->o, ";\n", 2); }

static void for_stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  const char *v = c->cname[s->var];
  ir_ty t = ir_var_get(c->f, s->var)->ty;
  const ir_stmt *body = s->kids[0];
  const char *hi = NULL;
  if (!steady_bound(s->b, body, s->var)) {
    hi = claim2(c, v, "_hi");
    spc_str_addf(&m->decl_hi, "  %s %s = 0;\n", emit_cty(t), hi);
    ind(c, depth);
    spc_str_addf(c->o, "%s = ", hi);
    emit_expr(c, s->b, 0);
    line_end(c);
  }
  ind(c, depth);
  spc_str_addf(c->o, "for (%s = ", v);
  emit_expr(c, s->a, 0);
  spc_str_addf(c->o, "; %s < ", v);
  if (hi) spc_str_addf(c->o, "%s", hi);
  else emit_expr(c, s->b, 11);
  spc_str_addf(c->o, "; %s++) {\n", v);
  c->read[s->var] = true;
  emit_loop l = {.up = c->loops, .var = s->var, .steady = !assigns(body, s->var)};
  c->loops = &l;
  stmts(m, body, depth + 1);
  c->loops = l.up;
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
}

static void if_stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  ind(c, depth);
  spc_str_addf(c->o, "if (");
  for (;;) {
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, ") {\n");
    stmts(m, s->kids[0], depth + 1);
    const ir_stmt *e = s->nkids > 1 ? s->kids[1] : NULL;
    ind(c, depth);
    if (e && e->kind == IR_S_BLOCK && e->nkids == 1 && e->kids[0]->kind == IR_S_IF) {
      s = e->kids[0];
      spc_str_addf(c->o, "} else if (");
      continue;
    }
    if (e) {
      spc_str_addf(c->o, "} else {\n");
      stmts(m, e, depth + 1);
      ind(c, depth);
    }
    spc_str_addf(c->o, "}\n");
    return;
  }
}

static void fail_jump(emit_fn *m, int depth, const char *code) {
  ectx *c = m->c;
  ind(c, depth);
  spc_str_addf(c->o, "%s = %s;\n", m->status, code);
  ind(c, depth);
  spc_str_addf(c->o, "goto done;\n");
  m->jumps = true;
}

static void alloc_stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  const char *v = c->cname[s->var], *len = c->lname[s->var];
  ind(c, depth);
  spc_str_addf(c->o, "%s = ", len);
  emit_expr(c, s->a, 0);
  line_end(c);
  ind(c, depth);
  spc_str_addf(c->o, "SPC_GEN_FREE(%s);\n", v);
  ind(c, depth);
  spc_str_addf(c->o, "%s = spc_gen_alloc(%s, sizeof *%s, %s);\n", v, len, v,
               s->zero ? "true" : "false");
  ind(c, depth);
  spc_str_addf(c->o, "if (!%s) {\n", v);
  fail_jump(m, depth + 1, "SPC_GEN_NOMEM");
  ind(c, depth);
  spc_str_addf(c->o, "}\n");
}

static const char *const rt_code[] = {"BOOL", "I32", "I64", "U64",
                                      "F32",  "F64", "C128"};

static void builtin_stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  const ir_var_info *d = ir_var_get(c->f, s->vars[0]);
  for (int k = 0; k < s->nvars; k++) c->read[s->vars[k]] = true;
  ind(c, depth);
  if (s->builtin == IR_SORT_PERM) {
    spc_str_addf(c->o, "if (spc_gen_sort_perm_%s(%s, ", ir_ty_short(d->ty),
                 c->cname[s->vars[0]]);
    emit_expr(c, s->args[0], 0);
    spc_str_addf(c->o, ", (const spc_rt_key[]){");
    for (int k = 1; k < s->nvars; k++)
      spc_str_addf(c->o, "%s{%s, SPC_RT_%s}", k > 1 ? ", " : "", c->cname[s->vars[k]],
                   rt_code[ir_var_get(c->f, s->vars[k])->ty]);
    spc_str_addf(c->o, "}, %d) != 0) {\n", s->nvars - 1);
    fail_jump(m, depth + 1, "SPC_GEN_NOMEM");
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    return;
  }
  spc_str_addf(c->o, "spc_%s_%s(%s", ir_builtins[s->builtin].name,
               ir_ty_short(d->ty), c->cname[s->vars[0]]);
  for (int k = 0; k < s->nargs; k++) {
    if (s->builtin == IR_COPY && k == 1)
      spc_str_addf(c->o, ", %s", c->cname[s->vars[1]]);
    spc_str_addf(c->o, ", ");
    emit_expr(c, s->args[k], 0);
  }
  spc_str_addf(c->o, ");\n");
}

static void fail_stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  m->fails = true;
  ind(c, depth);
  spc_str_addf(c->o, "if (%s) snprintf(%s, %s, ", m->err, m->err, m->err_len);
  ir_fmt_cstring(c->o, s->msg);
  for (int k = 0; k < s->nargs; k++) {
    spc_str_addf(c->o, ", (long long)");
    emit_expr(c, s->args[k], 14);
  }
  spc_str_addf(c->o, ");\n");
  char code[32];
  snprintf(code, sizeof code, "%d", (int)s->code);
  fail_jump(m, depth, code);
}

static void stmt(emit_fn *m, const ir_stmt *s, int depth) {
  ectx *c = m->c;
  switch (s->kind) {
  case IR_S_BLOCK:
    ind(c, depth);
    spc_str_addf(c->o, "{\n");
    stmts(m, s, depth + 1);
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    return;
  case IR_S_ASSIGN:
    ind(c, depth);
    spc_str_addf(c->o, "%s = ", c->cname[s->var]);
    emit_expr(c, s->a, 0);
    { line_end(c); return; }
  case IR_S_STORE:
    ind(c, depth);
    c->read[s->var] = true;
    spc_str_addf(c->o, "%s[", c->cname[s->var]);
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, "] = ");
    emit_expr(c, s->b, 0);
    { line_end(c); return; }
  case IR_S_FOR: { for_stmt(m, s, depth); return; }
  case IR_S_WHILE:
    ind(c, depth);
    spc_str_addf(c->o, "while (");
    emit_expr(c, s->a, 0);
    spc_str_addf(c->o, ") {\n");
    stmts(m, s->kids[0], depth + 1);
    ind(c, depth);
    spc_str_addf(c->o, "}\n");
    return;
  case IR_S_IF: { if_stmt(m, s, depth); return; }
  case IR_S_ALLOC: { alloc_stmt(m, s, depth); return; }
  case IR_S_FREE:
    ind(c, depth);
    spc_str_addf(c->o, "SPC_GEN_FREE(%s);\n", c->cname[s->var]);
    ind(c, depth);
    spc_str_addf(c->o, "%s = NULL;\n", c->cname[s->var]);
    ind(c, depth);
    spc_str_addf(c->o, "%s = 0;\n", c->lname[s->var]);
    return;
  case IR_S_BUILTIN: { builtin_stmt(m, s, depth); return; }
  case IR_S_FAIL: { fail_stmt(m, s, depth); return; }
  case IR_S_BREAK:
    ind(c, depth);
    spc_str_addf(c->o, "break;\n");
    return;
  }
}

/* The statements of a block (or one statement). */
static void stmts(emit_fn *m, const ir_stmt *s, int depth) {
  if (s->kind != IR_S_BLOCK) { stmt(m, s, depth); return; }
  for (int k = 0; k < s->nkids; k++) stmt(m, s->kids[k], depth);
}

/* ---- the function ------------------------------------------------------------------ */

static const char prelude_head[] =
    "/* Generated by spconv's C emitter: plain C99 that needs only the C\n"
    " * library and libm.  The runtime below turns floating-point contraction\n"
    " * off (gcc, clang), so results are the bits spconv's interpreter gets;\n"
    " * with other compilers pass their equivalent of -ffp-contract=off. */\n"
    "#ifndef SPC_GEN_PRELUDE\n"
    "#define SPC_GEN_PRELUDE\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#ifndef SPC_GEN_MALLOC\n"
    "#define SPC_GEN_MALLOC(n) malloc(n)\n"
    "#endif\n"
    "#ifndef SPC_GEN_FREE\n"
    "#define SPC_GEN_FREE(p) free(p)\n"
    "#endif\n"
    "#define SPC_GEN_NOMEM (-4) /* SPC_ERR_NOMEM */\n\n";

static const char prelude_tail[] =
    "\n/* n elements of size bytes (zeroed when zero); NULL when n < 0, on\n"
    " * overflow, or when the allocation fails. */\n"
    "SPC_RT_FN void *spc_gen_alloc(int64_t n, size_t size, bool zero) {\n"
    "  if (n < 0 || (uint64_t)n > SIZE_MAX / size) return NULL;\n"
    "  void *p = SPC_GEN_MALLOC(n ? (size_t)n * size : 1);\n"
    "  if (p && zero) memset(p, 0, (size_t)n * size);\n"
    "  return p;\n"
    "}\n"
    "#define SPC_GEN_SORT(S, T)                                                     \\\n"
    "  SPC_RT_FN int spc_gen_sort_perm_##S(T *perm, int64_t n,                 \\\n"
    "                                          const spc_rt_key *key, int nkeys) { \\\n"
    "    if (n < 2) return 0;                                                      \\\n"
    "    T *scratch = (T *)spc_gen_alloc(n, sizeof *scratch, false);               \\\n"
    "    if (!scratch) return SPC_GEN_NOMEM;                                       \\\n"
    "    spc_sort_perm_##S(perm, n, key, nkeys, scratch);                          \\\n"
    "    SPC_GEN_FREE(scratch);                                                    \\\n"
    "    return 0;                                                                 \\\n"
    "  }\n"
    "SPC_GEN_SORT(i32, int32_t)\n"
    "SPC_GEN_SORT(i64, int64_t)\n"
    "#undef SPC_GEN_SORT\n"
    "SPC_RT_FN float spc_f32_from_bits(uint32_t b) {\n"
    "  float x;\n"
    "  memcpy(&x, &b, sizeof x);\n"
    "  return x;\n"
    "}\n"
    "SPC_RT_FN double spc_f64_from_bits(uint64_t b) {\n"
    "  double x;\n"
    "  memcpy(&x, &b, sizeof x);\n"
    "  return x;\n"
    "}\n"
    "/* a value the compiler must not fold (see ir_emit_expr.c) */\n"
    "SPC_RT_FN float spc_opaque_f32(float x) { return x; }\n"
    "SPC_RT_FN double spc_opaque_f64(double x) { return x; }\n"
    "/* Around each function: what compilers call suspicious in hand-written\n"
    " * code (x < x, unsigned >= 0, ~ of a bool, a guarded x / 0) is well\n"
    " * defined in generated code. */\n"
    "#if defined(__clang__)\n"
    "#define SPC_GEN_BEGIN                                                          \\\n"
    "  _Pragma(\"clang diagnostic push\")                                         \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wtautological-compare\\\"\")          \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wtautological-constant-compare\\\"\") \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wdivision-by-zero\\\"\")              \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wshift-count-overflow\\\"\")          \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wshift-count-negative\\\"\")          \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wbool-operation\\\"\")                \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Wint-in-bool-context\\\"\")           \\\n"
    "  _Pragma(\"clang diagnostic ignored \\\"-Winteger-overflow\\\"\")\n"
    "#define SPC_GEN_END _Pragma(\"clang diagnostic pop\")\n"
    "#elif defined(__GNUC__)\n"
    "#define SPC_GEN_BEGIN                                                          \\\n"
    "  _Pragma(\"GCC diagnostic push\")                                           \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wtype-limits\\\"\")                      \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wtautological-compare\\\"\")             \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wbool-compare\\\"\")                     \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wsign-compare\\\"\")                     \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wdiv-by-zero\\\"\")                      \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wshift-count-overflow\\\"\")             \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wshift-count-negative\\\"\")             \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wbool-operation\\\"\")                   \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Wint-in-bool-context\\\"\")             \\\n"
    "  _Pragma(\"GCC diagnostic ignored \\\"-Woverflow\\\"\")\n"
    "#define SPC_GEN_END _Pragma(\"GCC diagnostic pop\")\n"
    "#else\n"
    "#define SPC_GEN_BEGIN\n"
    "#define SPC_GEN_END\n"
    "#endif\n"
    "/* ir_run's argument layout, for the NAME_entry wrappers */\n"
    "typedef union spc_gen_val {\n"
    "  bool b;\n"
    "  int32_t i32;\n"
    "  int64_t i64;\n"
    "  uint64_t u64;\n"
    "  float f32;\n"
    "  double f64;\n"
    "  double c128[2];\n"
    "} spc_gen_val;\n"
    "typedef struct spc_gen_arg {\n"
    "  void *data;\n"
    "  int64_t len;\n"
    "  spc_gen_val s;\n"
    "} spc_gen_arg;\n"
    "#endif /* SPC_GEN_PRELUDE */\n\n";

static const char *zero_of(ir_ty t) {
  return t == IR_BOOL ? "false" : t == IR_C128 ? "{0, 0}" : "0";
}

/* The parameter list "(T a, ..., char *err, size_t err_len)", wrapped. */
static void signature(ectx *c, spc_str *o, bool is_static, const char *err,
                      const char *err_len, const char **outname) {
  const ir_func *f = c->f;
  spc_str_addf(o, "%sint %s(", is_static ? "static " : "", f->name);
  size_t col = o->len, start = (is_static ? 7 : 0) + 5 + strlen(f->name);
  size_t line = col;
  for (int k = 0; k <= f->nparams; k++) {
    char p[2][600];
    int np = 1;
    if (k == f->nparams) {
      snprintf(p[0], sizeof p[0], "char *%s", err);
      snprintf(p[1], sizeof p[1], "size_t %s", err_len);
      np = 2;
    } else {
      ir_var v = f->params[k];
      const ir_var_info *vi = &f->vars[v];
      const char *t = emit_cty(vi->ty), *n = c->cname[v];
      if (!vi->array && vi->dir == IR_IN) snprintf(p[0], sizeof p[0], "%s %s", t, n);
      else if (!vi->array) snprintf(p[0], sizeof p[0], "%s *%s", t, outname[v]);
      else if (vi->dir == IR_OUT) {
        snprintf(p[0], sizeof p[0], "%s **%s", t, outname[v]);
        snprintf(p[1], sizeof p[1], "int64_t *%s", outname[f->nvars + v]);
        np = 2;
      } else {
        snprintf(p[0], sizeof p[0], "%s%s *%s", vi->dir == IR_IN ? "const " : "", t, n);
        snprintf(p[1], sizeof p[1], "int64_t %s", c->lname[v]);
        np = 2;
      }
    }
    for (int j = 0; j < np; j++) {
      bool first = k == 0 && j == 0;
      size_t w = strlen(p[j]) + 2;
      if (!first && o->len - line + w > 78) {
        spc_str_addf(o, ",\n%*s", (int)start, "");
        line = o->len - start;
      } else if (!first) {
        spc_str_addf(o, ", ");
      }
      spc_str_addf(o, "%s", p[j]);
    }
  }
  spc_str_addf(o, ")");
}

/* The variable declarations, and (void) for what the body never reads. */
static void declarations(ectx *c, spc_str *o, const char **outname,
                         const char *status) {
  const ir_func *f = c->f;
  spc_str_addf(o, "  int %s = 0;\n", status);
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    const char *t = emit_cty(vi->ty), *n = c->cname[v];
    if (!vi->array && vi->dir == IR_INOUT)
      spc_str_addf(o, "  %s %s = *%s;\n", t, n, outname[v]);
    else if (!vi->array && vi->dir != IR_IN)
      spc_str_addf(o, "  %s %s = %s;\n", t, n, zero_of(vi->ty));
    else if (vi->array && (vi->dir == IR_OUT || vi->dir == IR_LOCAL))
      spc_str_addf(o, "  %s *%s = NULL;\n  int64_t %s = 0;\n", t, n, c->lname[v]);
  }
}

static void unused(ectx *c, spc_str *o, bool fails, const char *err,
                   const char *err_len) {
  const ir_func *f = c->f;
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    bool keep = vi->dir == IR_OUT || (!vi->array && vi->dir == IR_INOUT) ||
                (vi->array && vi->dir == IR_LOCAL);
    if (!keep && !c->read[v]) spc_str_addf(o, "  (void)%s;\n", c->cname[v]);
    if (vi->array && vi->dir != IR_OUT && !c->len_read[v])
      spc_str_addf(o, "  (void)%s;\n", c->lname[v]);
  }
  if (!fails) spc_str_addf(o, "  (void)%s;\n  (void)%s;\n", err, err_len);
}

/* done: free local arrays; hand out or free what the caller gets. */
static void epilogue(ectx *c, spc_str *o, bool jumps, const char **outname,
                     const char *status) {
  const ir_func *f = c->f;
  if (jumps) spc_str_addf(o, "done:\n");
  bool outs = false, out_arrays = false;
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    if (vi->array && vi->dir == IR_LOCAL)
      spc_str_addf(o, "  SPC_GEN_FREE(%s);\n", c->cname[v]);
    outs |= vi->dir == IR_OUT || (!vi->array && vi->dir == IR_INOUT);
    out_arrays |= vi->array && vi->dir == IR_OUT;
  }
  if (outs) {
    spc_str_addf(o, "  if (%s == 0) {\n", status);
    for (int v = 0; v < f->nvars; v++) {
      const ir_var_info *vi = &f->vars[v];
      if (vi->dir == IR_OUT || (!vi->array && vi->dir == IR_INOUT))
        spc_str_addf(o, "    *%s = %s;\n", outname[v], c->cname[v]);
      if (vi->array && vi->dir == IR_OUT)
        spc_str_addf(o, "    *%s = %s;\n", outname[f->nvars + v], c->lname[v]);
    }
    if (out_arrays) {
      spc_str_addf(o, "  } else {\n");
      for (int v = 0; v < f->nvars; v++) {
        const ir_var_info *vi = &f->vars[v];
        if (vi->array && vi->dir == IR_OUT)
          spc_str_addf(o, "    SPC_GEN_FREE(%s);\n    *%s = NULL;\n    *%s = 0;\n",
                       c->cname[v], outname[v], outname[f->nvars + v]);
      }
    }
    spc_str_addf(o, "  }\n");
  }
  spc_str_addf(o, "  return %s;\n}\n", status);
}

/* int NAME_entry(spc_gen_arg *args, char *err, size_t err_len): NAME
 * called with ir_run's arguments. */
static void entry(ectx *c, spc_str *o) {
  const ir_func *f = c->f;
  static const char *const field[] = {"b", "i32", "i64", "u64", "f32", "f64", "c128"};
  spc_str_addf(o, "\nint %s_entry(spc_gen_arg *args, char *err, size_t err_len);\n"
               "int %s_entry(spc_gen_arg *args, char *err, size_t err_len) {\n",
               f->name, f->name);
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    const char *t = emit_cty(vi->ty), *fl = field[vi->ty];
    if (vi->array && vi->dir == IR_OUT)
      spc_str_addf(o, "  %s *spc_p%d = NULL;\n  int64_t spc_n%d = 0;\n", t, k, k);
    else if (!vi->array && vi->dir == IR_OUT)
      spc_str_addf(o, "  %s spc_p%d = %s;\n", t, k, zero_of(vi->ty));
    else if (!vi->array && vi->ty == IR_C128)
      spc_str_addf(o, "  spc_c128 spc_p%d = spc_c128_make(args[%d].s.c128[0], "
                   "args[%d].s.c128[1]);\n", k, k, k);
    else if (!vi->array)
      spc_str_addf(o, "  %s spc_p%d = args[%d].s.%s;\n", t, k, k, fl);
  }
  spc_str_addf(o, "  int spc_st = %s(", f->name);
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    const char *t = emit_cty(vi->ty);
    if (k) spc_str_addf(o, ", ");
    if (vi->array && vi->dir == IR_OUT) spc_str_addf(o, "&spc_p%d, &spc_n%d", k, k);
    else if (vi->array)
      spc_str_addf(o, "(%s%s *)args[%d].data, args[%d].len",
                   vi->dir == IR_IN ? "const " : "", t, k, k);
    else spc_str_addf(o, "%sspc_p%d", vi->dir == IR_IN ? "" : "&", k);
  }
  spc_str_addf(o, "%serr, err_len);\n", f->nparams ? ", " : "");
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    if (vi->array && vi->dir == IR_OUT)
      spc_str_addf(o, "  args[%d].data = spc_p%d;\n  args[%d].len = spc_n%d;\n", k, k, k, k);
    else if (!vi->array && vi->dir != IR_IN && vi->ty == IR_C128)
      spc_str_addf(o, "  if (spc_st == 0) {\n    args[%d].s.c128[0] = spc_p%d.re;\n"
                   "    args[%d].s.c128[1] = spc_p%d.im;\n  }\n", k, k, k, k);
    else if (!vi->array && vi->dir != IR_IN)
      spc_str_addf(o, "  if (spc_st == 0) args[%d].s.%s = spc_p%d;\n", k, field[vi->ty], k);
  }
  spc_str_addf(o, "  return spc_st;\n}\n");
}

static void comment(spc_str *o, const char *text) {
  spc_str_addf(o, "/* ");
  for (const char *p = text; *p; p++) {
    if (p[0] == '*' && p[1] == '/') spc_str_addf(o, "* ");
    else if (*p == '\n') spc_str_addf(o, "\n * ");
    else spc_str_add(o, p, 1);
  }
  spc_str_addf(o, " */\n");
}

static void ectx_free(ectx *c) {
  for (int k = 0; k < c->nnames; k++) spc_free(c->names[k]);
  spc_free(c->names);
  spc_free(c->cname);
  spc_free(c->lname);
  spc_free(c->read);
  spc_free(c->len_read);
}

spc_status ir_emit_c(const ir_func *f, const ir_emit_opts *opts, spc_str *out,
                     spc_error *e) {
  static const ir_emit_opts none = {0};
  const ir_emit_opts *o = opts ? opts : &none;
  if (!out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "ir_emit_c: no output");
  spc_status st = ir_verify(f, e);
  if (st != SPC_OK) return st;
  int nv = f->nvars ? f->nvars : 1;
  ectx c = {.f = f};
  spc_str body = {0};
  emit_fn m = {.c = &c};
  const char **outname = spc_calloc((size_t)nv * 2, sizeof *outname);
  c.cname = spc_calloc((size_t)nv, sizeof *c.cname);
  c.lname = spc_calloc((size_t)nv, sizeof *c.lname);
  c.read = spc_calloc((size_t)nv, sizeof *c.read);
  c.len_read = spc_calloc((size_t)nv, sizeof *c.len_read);
  if (!outname || !c.cname || !c.lname || !c.read || !c.len_read) c.nomem = true;
  for (int v = 0; v < f->nvars && !c.nomem; v++) c.cname[v] = claim(&c, f->vars[v].name);
  for (int v = 0; v < f->nvars && !c.nomem; v++) {
    const ir_var_info *vi = &f->vars[v];
    if (vi->array) c.lname[v] = claim2(&c, c.cname[v], "_len");
    if (vi->dir == IR_OUT || (!vi->array && vi->dir == IR_INOUT))
      outname[v] = claim2(&c, c.cname[v], vi->dir == IR_OUT ? "_out" : "_io");
    if (vi->array && vi->dir == IR_OUT)
      outname[nv + v] = claim2(&c, c.lname[v], "_out");
  }
  const char *status = claim(&c, "status"), *err = claim(&c, "err"),
             *err_len = claim(&c, "err_len");
  m.status = status;
  m.err = err;
  m.err_len = err_len;
  if (!c.nomem) {
    c.o = &body;
    stmts(&m, f->body, 1);
  }
  if (c.nomem || body.failed || m.decl_hi.failed) {
    st = SPC_NOMEM(e);
    goto done;
  }
  if (o->prelude) {
    spc_str_add(out, prelude_head, sizeof prelude_head - 1);
    spc_str_add(out, ir_rt_text, strlen(ir_rt_text));
    spc_str_add(out, prelude_tail, sizeof prelude_tail - 1);
  }
  if (o->comment) comment(out, o->comment);
  spc_str_addf(out, "SPC_GEN_BEGIN\n");
  if (!o->static_fn) {
    signature(&c, out, false, err, err_len, outname);
    spc_str_addf(out, ";\n");
  }
  signature(&c, out, o->static_fn, err, err_len, outname);
  spc_str_addf(out, " {\n");
  declarations(&c, out, outname, status);
  if (m.decl_hi.s) spc_str_add(out, m.decl_hi.s, m.decl_hi.len);
  unused(&c, out, m.fails, err, err_len);
  spc_str_addf(out, "\n");
  if (body.s) spc_str_add(out, body.s, body.len);
  epilogue(&c, out, m.jumps, outname, status);
  if (o->entry) entry(&c, out);
  spc_str_addf(out, "SPC_GEN_END\n");
  if (out->failed || c.nomem) st = SPC_NOMEM(e);
done:
  spc_str_free(&body);
  spc_str_free(&m.decl_hi);
  spc_free(outname);
  ectx_free(&c);
  return st;
}
