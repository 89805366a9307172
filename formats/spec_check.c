/* spec_check.c -- type-check level functions in the names a level sees:
 *   p (parent position), q (position), c (coordinate), np (parent
 *   positions), N (extent of the coordinate), lo (its lower bound), the
 *   level's arrays and workspaces, and its query results (arrays of i64);
 * plus, for tensor-format overrides, the coordinates of the other levels. */
#include "spec.h"
#include "spc_query.h"
#include <string.h>

typedef struct names {
  const spc_level_spec *ls;
  bool run; /* yield_run: n, the run's length */
  const char *const *extra;
  int nextra;
  const char *qnames[SPC_SPEC_MAX * 4];
  int nq;
} names;

static lang_type tname(lang_tname t) {
  lang_type r = {.ty = IR_I64, .sym = LT_NONE};
  if (t == LT_INDEX || t == LT_COORD) r.sym = t;
  else if (t == LT_I32) r.ty = IR_I32;
  else if (t == LT_BOOL) r.ty = IR_BOOL;
  else if (t == LT_F64 || t == LT_VALUE) r.ty = IR_F64;
  return r;
}

static bool resolve(void *ctx, const char *name, lang_sym *s) {
  const names *n = ctx;
  static const char *const idx[] = {"p", "q", "np", "n"};
  for (int k = 0; k < (n->run ? 4 : 3); k++)
    if (!strcmp(name, idx[k])) {
      s->kind = LANG_SYM_SCALAR;
      s->type = tname(LT_INDEX);
      s->readonly = true;
      return true;
    }
  if (!strcmp(name, "c") || !strcmp(name, "N") || !strcmp(name, "lo")) {
    s->kind = LANG_SYM_SCALAR;
    s->type = tname(name[0] == 'c' ? LT_COORD : LT_I64);
    s->readonly = true;
    return true;
  }
  for (int k = 0; k < n->ls->narrays; k++)
    if (!strcmp(name, n->ls->arrays[k].name)) {
      s->kind = LANG_SYM_ARRAY;
      s->type = tname(n->ls->arrays[k].type);
      return true;
    }
  for (int k = 0; k < n->ls->nwork; k++)
    if (!strcmp(name, n->ls->work[k].name)) {
      s->kind = LANG_SYM_ARRAY;
      s->type = tname(n->ls->work[k].type);
      return true;
    }
  for (int k = 0; k < n->nq; k++)
    if (!strcmp(name, n->qnames[k])) {
      s->kind = LANG_SYM_ARRAY;
      s->type = tname(LT_I64);
      s->readonly = true;
      return true;
    }
  for (int k = 0; k < n->nextra; k++)
    if (!strcmp(name, n->extra[k])) {
      s->kind = LANG_SYM_INDEX;
      s->type = tname(LT_COORD);
      s->readonly = true;
      return true;
    }
  return false;
}

/* The names of the aggregates of ls's queries (parsed again: cheap). */
static spc_status query_names(const spc_level_spec *ls, names *n,
                              spc_query **qs, spc_error *e) {
  for (int k = 0; k < ls->nqueries; k++) {
    lang_src src = ls->queries[k].at;
    char *t = spc_strdup(ls->queries[k].text);
    if (!t) return SPC_NOMEM(e);
    char *star = strstr(t, "[*]");
    if (star) star[1] = ' '; /* per parent position: no group coordinates */
    src.text = t;
    spc_status s = spc_query_parse(&src, &qs[k], e);
    /* a level's query groups by [*] or [c] and aggregates c only
     * (docs/formats.md): `select [q]` or `count(x)` were taken as c */
    const spc_query *q = qs[k];
    if (!s && q->ngroup > 1)
      s = lang_node_error(q->ast, q->group_at[1], e, "a level's query groups by [*] or [c] alone");
    if (!s && q->ngroup == 1 && strcmp(q->group[0], "c"))
      s = lang_node_error(q->ast, q->group_at[0], e,
                          "a level's query groups by [*] (the parent position) or [c] (the level's "
                          "coordinate), not '%s'", q->group[0]);
    for (int a = 0; !s && a < q->nagg; a++)
      for (int g = 0; !s && g < q->aggs[a].nargs; g++)
        if (strcmp(q->aggs[a].args[g], "c") || g > 0)
          s = lang_node_error(q->ast, q->aggs[a].arg_at[g], e,
                              "a level's query aggregates its coordinate c alone, not '%s'",
                              q->aggs[a].args[g]);
    spc_free(t);
    if (s) return s;
    for (int a = 0; a < qs[k]->nagg && n->nq < SPC_SPEC_MAX * 4; a++)
      n->qnames[n->nq++] = qs[k]->aggs[a].name;
  }
  return SPC_OK;
}

spc_status spc_lfn_check(const spc_level_spec *ls, spc_lfn_kind k,
                         const spc_lfn *f, const char *const *extra,
                         int nextra, spc_error *e) {
  spc_query *qs[SPC_SPEC_MAX] = {0};
  lang_ast *ast = NULL;
  names n = {.ls = ls, .run = k == SPC_LF_YIELD_RUN, .extra = extra, .nextra = nextra};
  spc_status s = query_names(ls, &n, qs, e);
  bool stmts = k == SPC_LF_LOCATE || k >= SPC_LF_INIT;
  bool returns = k == SPC_LF_LOCATE || k == SPC_LF_YIELD || k == SPC_LF_YIELD_RUN;
  lang_env env = {.resolve = resolve, .ctx = &n, .returns = returns,
                  .ret_type = tname(LT_INDEX)};
  /* access may be a statement block ending in `return` (Morton, ...) */
  if (!s && k == SPC_LF_ACCESS && strchr(f->text, '\n') && strstr(f->text, "return")) {
    stmts = true;
    env.returns = true;
    env.ret_type = tname(LT_COORD);
  }
  if (!s) s = stmts ? lang_parse_stmts(&f->at, &ast, e) : lang_parse_expr(&f->at, &ast, e);
  if (!s) s = stmts ? lang_check_stmts(ast, ast->root, &env, e)
                    : lang_check_expr(ast, ast->root, &env, e);
  if (!s && !stmts && (k == SPC_LF_VALID) != (ast->root->type.ty == IR_BOOL))
    s = lang_node_error(ast, ast->root, e, k == SPC_LF_VALID
                                               ? "expected a condition (true or false)"
                                               : "expected an integer expression");
  if (!s && !stmts && k != SPC_LF_VALID && !lang_ty_is_int(ast->root->type.ty))
    s = lang_node_error(ast, ast->root, e, "expected an integer expression");
  lang_ast_free(&ast);
  for (int q = 0; q < SPC_SPEC_MAX; q++) spc_query_free(&qs[q]);
  return s;
}
