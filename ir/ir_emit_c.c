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

/* ---- names --------------------------------------------------------------- */

static const char *const reserved[] = {
    "auto",      "break",     "case",      "char",      "const",      "continue",
    "default",   "do",        "double",    "else",      "enum",       "extern",
    "float",     "for",       "goto",      "if",        "inline",     "int",
    "long",      "register",  "restrict",  "return",    "short",      "signed",
    "sizeof",    "static",    "struct",    "switch",    "typedef",    "union",
    "unsigned",  "void",      "volatile",  "while",     "bool",       "true",
    "false",     "NULL",      "malloc",    "calloc",    "realloc",    "free",
    "memset",    "memcpy",    "memmove",   "snprintf",  "fmod",       "fmodf",
    "fabs",      "fabsf",     "isnan",     "signbit",   "INFINITY",   "HUGE_VAL",
    "NAN",       "size_t",    "int32_t",   "int64_t",   "uint32_t",   "uint64_t",
    "INT32_MIN", "INT32_MAX", "INT64_MIN", "INT64_MAX", "UINT64_MAX", "UINT64_C",
    "INT64_C",   "SIZE_MAX",  "errno",     "main",      "asm",        "typeof",
    NULL};

/* names[k] into the hash set (grown past half full; out of memory: the
 * set is dropped and taken scans) */
static void nh_put(ectx *c, int k) {
  if (2 * c->nnames > c->nhcap) {
    int cap = c->nhcap ? 2 * c->nhcap : 256;
    int *h = spc_calloc((size_t)cap, sizeof *h);
    spc_free(c->nh);
    c->nh = h;
    c->nhcap = h ? cap : 0;
    if (!h) return;
    for (int u = 0; u < c->nnames; u++) {
      size_t i = (size_t)spc_name_hash(c->names[u]) & (size_t)(cap - 1);
      while (c->nh[i]) i = (i + 1) & (size_t)(cap - 1);
      c->nh[i] = u + 1;
    }
    return; /* k < nnames: placed by the loop */
  }
  size_t i = (size_t)spc_name_hash(c->names[k]) & (size_t)(c->nhcap - 1);
  while (c->nh[i]) i = (i + 1) & (size_t)(c->nhcap - 1);
  c->nh[i] = k + 1;
}

static bool taken(const ectx *c, const char *s) {
  if (s[0] == '_' || !strncmp(s, "spc_", 4) || !strncmp(s, "SPC_", 4) ||
      !strcmp(s, c->name))
    return true;
  for (int k = 0; reserved[k]; k++)
    if (s[0] == reserved[k][0] && !strcmp(s, reserved[k])) return true;
  if (c->nhcap) {
    for (size_t i = (size_t)spc_name_hash(s) & (size_t)(c->nhcap - 1); c->nh[i];
         i = (i + 1) & (size_t)(c->nhcap - 1))
      if (!strcmp(s, c->names[c->nh[i] - 1])) return true;
    return false;
  }
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
  if (c->nhcap || c->nnames == 1) nh_put(c, c->nnames - 1);
  return s;
nomem:
  spc_free(s);
  c->nomem = true;
  return "x";
}

const char *emit_claim(ectx *c, const char *base, const char *suffix) {
  char buf[300];
  snprintf(buf, sizeof buf, "%s%s", base, suffix);
  return claim(c, buf);
}

/* ---- the function -------------------------------------------------------- */

static const char *zero_of(ir_ty t) {
  return t == IR_BOOL ? "false" : t == IR_C128 ? "{0, 0}" : "0";
}

/* The parameter list "(T a, ..., char *err, size_t err_len)", wrapped. */
static void signature(ectx *c, spc_str *o, bool is_static, const char *qual,
                      const char *err, const char *err_len, const char **outname) {
  const ir_func *f = c->f;
  size_t line = o->len; /* where the current line starts */
  spc_str_addf(o, "%sint %s(", qual ? qual : is_static ? "static " : "", c->name);
  size_t indent = o->len - line;
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
      if (!vi->array && vi->dir == IR_IN)
        snprintf(p[0], sizeof p[0], "%s %s", t, n);
      else if (!vi->array)
        snprintf(p[0], sizeof p[0], "%s *%s", t, outname[v]);
      else if (vi->dir == IR_OUT || vi->dir == IR_GIVE) {
        snprintf(p[0], sizeof p[0], "%s **%s", t, outname[v]);
        snprintf(p[1], sizeof p[1], "int64_t *%s", outname[f->nvars + v]);
        np = 2;
      } else {
        snprintf(p[0], sizeof p[0], "%s%s *%s%s", vi->dir == IR_IN ? "const " : "", t,
                 f->noalias ? "restrict " : "", n);
        snprintf(p[1], sizeof p[1], "int64_t %s", c->lname[v]);
        np = 2;
      }
    }
    for (int j = 0; j < np; j++) {
      bool first = k == 0 && j == 0;
      size_t w = strlen(p[j]) + 2; /* ", " or "," then the closing ")" */
      if (!first && o->len - line + w > 80) {
        spc_str_add(o, ",\n", 2);
        line = o->len;
        spc_str_addf(o, "%*s", (int)indent, "");
      } else if (!first) {
        spc_str_addf(o, ", ");
      }
      spc_str_addf(o, "%s", p[j]);
    }
  }
  spc_str_addf(o, ")");
}

/* The variable declarations, and (void) for what the body never reads. */
static void declarations(ectx *c, spc_str *o, const char **outname, const char *status) {
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
    else if (vi->dir == IR_GIVE)
      spc_str_addf(o, "  %s *%s = *%s;\n  int64_t %s = *%s;\n", t, n, outname[v], c->lname[v],
                   outname[f->nvars + v]);
  }
}

static void unused(ectx *c, spc_str *o, bool fails, const char *err,
                   const char *err_len) {
  const ir_func *f = c->f;
  for (int v = 0; v < f->nvars; v++) {
    const ir_var_info *vi = &f->vars[v];
    bool keep = vi->dir == IR_OUT || vi->dir == IR_GIVE || (!vi->array && vi->dir == IR_INOUT) ||
                (vi->array && vi->dir == IR_LOCAL);
    if (!keep && !c->read[v]) spc_str_addf(o, "  (void)%s;\n", c->cname[v]);
    if (vi->array && vi->dir != IR_OUT && vi->dir != IR_GIVE && !c->len_read[v])
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
  for (int v = 0; v < f->nvars; v++) /* handed back, whatever the status */
    if (f->vars[v].dir == IR_GIVE)
      spc_str_addf(o, "  *%s = %s;\n  *%s = %s;\n", outname[v], c->cname[v],
                   outname[f->nvars + v], c->lname[v]);
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
static void entry(ectx *c, spc_str *o, bool is_static) {
  const ir_func *f = c->f;
  static const char *const field[] = {"b", "i32", "i64", "u64", "f32", "f64", "c128"};
  if (is_static)
    spc_str_addf(o, "\nstatic int %s_entry(spc_gen_arg *args, char *err, size_t err_len) {\n",
                 c->name);
  else
    spc_str_addf(o,
                 "\nint %s_entry(spc_gen_arg *args, char *err, size_t err_len);\n"
                 "int %s_entry(spc_gen_arg *args, char *err, size_t err_len) {\n",
                 c->name, c->name);
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    const char *t = emit_cty(vi->ty), *fl = field[vi->ty];
    if (vi->array && vi->dir == IR_OUT)
      spc_str_addf(o, "  %s *spc_p%d = NULL;\n  int64_t spc_n%d = 0;\n", t, k, k);
    else if (vi->dir == IR_GIVE)
      spc_str_addf(o, "  %s *spc_p%d = (%s *)args[%d].data;\n  int64_t spc_n%d = args[%d].len;\n", t,
                   k, t, k, k, k);
    else if (!vi->array && vi->dir == IR_OUT)
      spc_str_addf(o, "  %s spc_p%d = %s;\n", t, k, zero_of(vi->ty));
    else if (!vi->array && vi->ty == IR_C128)
      spc_str_addf(o,
                   "  spc_c128 spc_p%d = spc_c128_make(args[%d].s.c128[0], "
                   "args[%d].s.c128[1]);\n",
                   k, k, k);
    else if (!vi->array)
      spc_str_addf(o, "  %s spc_p%d = args[%d].s.%s;\n", t, k, k, fl);
  }
  spc_str_addf(o, "  int spc_st = %s(", c->name);
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    const char *t = emit_cty(vi->ty);
    if (k) spc_str_addf(o, ", ");
    if (vi->array && (vi->dir == IR_OUT || vi->dir == IR_GIVE))
      spc_str_addf(o, "&spc_p%d, &spc_n%d", k, k);
    else if (vi->array)
      spc_str_addf(o, "(%s%s *)args[%d].data, args[%d].len",
                   vi->dir == IR_IN ? "const " : "", t, k, k);
    else
      spc_str_addf(o, "%sspc_p%d", vi->dir == IR_IN ? "" : "&", k);
  }
  spc_str_addf(o, "%serr, err_len);\n", f->nparams ? ", " : "");
  for (int k = 0; k < f->nparams; k++) {
    const ir_var_info *vi = &f->vars[f->params[k]];
    if (vi->array && (vi->dir == IR_OUT || vi->dir == IR_GIVE))
      spc_str_addf(o, "  args[%d].data = spc_p%d;\n  args[%d].len = spc_n%d;\n", k, k, k,
                   k);
    else if (!vi->array && vi->dir != IR_IN && vi->ty == IR_C128)
      spc_str_addf(o,
                   "  if (spc_st == 0) {\n    args[%d].s.c128[0] = spc_p%d.re;\n"
                   "    args[%d].s.c128[1] = spc_p%d.im;\n  }\n",
                   k, k, k, k);
    else if (!vi->array && vi->dir != IR_IN)
      spc_str_addf(o, "  if (spc_st == 0) args[%d].s.%s = spc_p%d;\n", k, field[vi->ty],
                   k);
  }
  spc_str_addf(o, "  return spc_st;\n}\n");
}

static void comment(spc_str *o, const char *text) {
  spc_str_addf(o, "/* ");
  for (const char *p = text; *p; p++) {
    if (p[0] == '*' && p[1] == '/')
      spc_str_addf(o, "* ");
    else if (*p == '\n')
      spc_str_addf(o, "\n * ");
    else
      spc_str_add(o, p, 1);
  }
  spc_str_addf(o, " */\n");
}

static void ectx_free(ectx *c) {
  for (int k = 0; k < c->nnames; k++) spc_free(c->names[k]);
  spc_free(c->names);
  spc_free(c->nh);
  spc_free(c->cname);
  spc_free(c->lname);
  spc_free(c->read);
  spc_free(c->len_read);
  spc_free(c->hiname);
  spc_free(c->hibusy);
  spc_str_free(&c->decl_hi);
}

spc_status ir_emit_c(const ir_func *f, const ir_emit_opts *opts, spc_str *out,
                     spc_error *e) {
  static const ir_emit_opts none = {0};
  const ir_emit_opts *o = opts ? opts : &none;
  if (!out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "ir_emit_c: no output");
  spc_status st = ir_verify(f, e);
  if (st != SPC_OK) return st;
  const char *fname = o->name ? o->name : f->name;
  for (int k = 0; reserved[k]; k++)
    if (!strcmp(fname, reserved[k]) || !strncmp(fname, "SPC_", 4))
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "ir_emit_c: function %s: the name is taken in C", fname);
  int nv = f->nvars ? f->nvars : 1;
  /* stores checked for a user's level functions, but not in CUDA device
   * code (a qualifier): no snprintf there, and the host checked the same
   * routine on the CPU */
  ectx c = {.f = f, .name = fname, .atomic = o->atomic_array ? ir_find_var(f, o->atomic_array) : -1,
            .check = f->checked && !o->qualifier};
  spc_str body = {0};
  const char **outname = spc_calloc((size_t)nv * 2, sizeof *outname);
  c.cname = spc_calloc((size_t)nv, sizeof *c.cname);
  c.lname = spc_calloc((size_t)nv, sizeof *c.lname);
  c.read = spc_calloc((size_t)nv, sizeof *c.read);
  c.len_read = spc_calloc((size_t)nv, sizeof *c.len_read);
  c.hiname = spc_calloc((size_t)nv, sizeof *c.hiname);
  c.hibusy = spc_calloc((size_t)nv, sizeof *c.hibusy);
  if (!outname || !c.cname || !c.lname || !c.read || !c.len_read || !c.hiname ||
      !c.hibusy)
    c.nomem = true;
  for (int v = 0; v < f->nvars && !c.nomem; v++) c.cname[v] = claim(&c, f->vars[v].name);
  for (int v = 0; v < f->nvars && !c.nomem; v++) {
    const ir_var_info *vi = &f->vars[v];
    if (vi->array) c.lname[v] = emit_claim(&c, c.cname[v], "_len");
    if (vi->dir == IR_OUT || vi->dir == IR_GIVE || (!vi->array && vi->dir == IR_INOUT))
      outname[v] = emit_claim(&c, c.cname[v], vi->dir == IR_OUT ? "_out" : "_io");
    if (vi->array && (vi->dir == IR_OUT || vi->dir == IR_GIVE))
      outname[nv + v] = emit_claim(&c, c.lname[v], vi->dir == IR_OUT ? "_out" : "_io");
  }
  const char *status = claim(&c, "status"), *err = claim(&c, "err"),
             *err_len = claim(&c, "err_len");
  c.status = status;
  c.err = err;
  c.err_len = err_len;
  if (c.check) {
    c.flt_a = claim(&c, "fault");
  }
  if (!c.nomem) {
    c.o = &body;
    emit_stmts(&c, f->body, 1);
  }
  if (c.nomem || body.failed || c.decl_hi.failed) {
    st = SPC_NOMEM(e);
    goto done;
  }
  if (o->prelude) emit_prelude(out);
  if (o->comment) comment(out, o->comment);
  spc_str_addf(out, "SPC_GEN_BEGIN\n");
  if (!o->static_fn && !o->qualifier) {
    signature(&c, out, false, NULL, err, err_len, outname);
    spc_str_addf(out, ";\n");
  }
  signature(&c, out, o->static_fn, o->qualifier, err, err_len, outname);
  spc_str_addf(out, " {\n");
  declarations(&c, out, outname, status);
  if (c.decl_hi.s) spc_str_add(out, c.decl_hi.s, c.decl_hi.len);
  if (c.flt_used) /* the last load out of bounds: index, length, array */
    spc_str_addf(out, "  spc_rt_fault %s = {0, 0, NULL};\n", c.flt_a);
  unused(&c, out, c.fails, err, err_len);
  spc_str_addf(out, "\n");
  if (body.s) spc_str_add(out, body.s, body.len);
  epilogue(&c, out, c.jumps, outname, status);
  if (o->entry) entry(&c, out, o->static_entry);
  spc_str_addf(out, "SPC_GEN_END\n");
  if (out->failed || c.nomem) st = SPC_NOMEM(e);
done:
  spc_str_free(&body);
  spc_free(outname);
  ectx_free(&c);
  return st;
}
