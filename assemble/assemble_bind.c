/* assemble_bind.c -- lowering a level function in the names of its level
 * (docs/formats.md: p q c np N lo, arrays, workspaces, query results, and
 * for tensor-format overrides the other levels' coordinates). */
#include "assemble_internal.h"
#include <stdio.h>
#include <string.h>

void asm_bind_init(lvbind *b, const spc_level_spec *ls,
                   const spc_format_level *fl, ir_ty index_ty,
                   ir_ty coord_ty) {
  memset(b, 0, sizeof *b);
  b->ls = ls;
  b->fl = fl;
  b->index_ty = index_ty;
  b->coord_ty = coord_ty;
  b->p = b->q = b->c = b->np = b->N = b->lo = b->nrun = -1;
  for (int k = 0; k < SPC_SPEC_MAX; k++) b->arr[k] = b->work[k] = -1;
}

void asm_bind_nest(lvbind *b, const conv_info *I, const char *const *out_names, int l,
                   const ir_var *arr, const ir_var *Nv, const ir_var *lov, const ir_var *c,
                   ir_func *f) {
  asm_bind_init(b, I->lv[l]->lf, I->lv[l], I->index_ty, I->coord_ty);
  for (int k = 0; k < b->ls->narrays; k++) b->arr[k] = arr[k];
  b->N = Nv[l];
  b->lo = lov[l];
  b->c = c[l];
  b->p = lang_fresh_local(f, "p", I->index_ty, false);
  b->q = lang_fresh_local(f, "q", I->index_ty, false);
  for (int a = 0; a < l; a++) {
    b->extra[b->nextra] = out_names[a];
    b->extra_var[b->nextra++] = c[a];
  }
}

ir_ty asm_tname_ty(lang_tname t, ir_ty index_ty, ir_ty coord_ty) {
  switch (t) {
  case LT_INDEX: return index_ty;
  case LT_COORD: return coord_ty;
  case LT_I32: return IR_I32;
  case LT_BOOL: return IR_BOOL;
  case LT_U64: return IR_U64;
  case LT_F32: return IR_F32;
  case LT_F64: case LT_VALUE: return IR_F64;
  default: return IR_I64;
  }
}

ir_ty asm_value_ty(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return IR_I64;
  case SPC_U64: return IR_U64;
  case SPC_F32: return IR_F32;
  case SPC_C128: return IR_C128;
  default: return IR_F64;
  }
}

static lang_type ltype(const lvbind *b, lang_tname t) {
  lang_type r = {.ty = asm_tname_ty(t, b->index_ty, b->coord_ty)};
  if (t == LT_INDEX || t == LT_COORD) r.sym = t;
  return r;
}

static bool scalar(lang_sym *s, lang_type t, ir_var v) {
  s->kind = LANG_SYM_SCALAR;
  s->type = t;
  s->readonly = true;
  s->var = v;
  return true;
}

static bool resolve(void *ctx, const char *name, lang_sym *s) {
  const lvbind *b = ctx;
  const spc_level_spec *ls = b->ls;
  if (!strcmp(name, "p")) return scalar(s, ltype(b, LT_INDEX), b->p);
  if (!strcmp(name, "q")) return scalar(s, ltype(b, LT_INDEX), b->q);
  if (!strcmp(name, "np")) return scalar(s, ltype(b, LT_INDEX), b->np);
  if (b->nrun >= 0 && !strcmp(name, "n")) return scalar(s, ltype(b, LT_INDEX), b->nrun);
  if (!strcmp(name, "c")) return scalar(s, ltype(b, LT_COORD), b->c);
  if (!strcmp(name, "N")) return scalar(s, ltype(b, LT_I64), b->N);
  if (!strcmp(name, "lo")) return scalar(s, ltype(b, LT_I64), b->lo);
  for (int k = 0; k < ls->narrays; k++)
    if (!strcmp(name, ls->arrays[k].name)) {
      s->kind = LANG_SYM_ARRAY;
      s->type = ltype(b, ls->arrays[k].type);
      s->var = b->arr[k];
      return true;
    }
  for (int k = 0; k < ls->nwork; k++)
    if (!strcmp(name, ls->work[k].name)) {
      s->kind = LANG_SYM_ARRAY;
      s->type = ltype(b, ls->work[k].type);
      s->var = b->work[k];
      return true;
    }
  for (int k = 0; k < b->nq; k++)
    if (!strcmp(name, b->qnames[k])) {
      s->kind = LANG_SYM_ARRAY;
      s->type = ltype(b, LT_I64);
      s->readonly = true;
      s->var = b->qvars[k];
      return true;
    }
  for (int k = 0; k < b->nextra; k++)
    if (!strcmp(name, b->extra[k])) {
      scalar(s, ltype(b, LT_COORD), b->extra_var[k]);
      s->kind = LANG_SYM_INDEX;
      return true;
    }
  return false;
}

const spc_lfn *asm_lfn(const lvbind *b, spc_lfn_kind k) {
  if (b->fl && b->fl->fn[k].text) return &b->fl->fn[k];
  if (b->ls->fn[k].text && !b->ls->fn[k].required) return &b->ls->fn[k];
  return NULL;
}

spc_status asm_lower_fn(ir_func *f, ir_stmt *dst, const lvbind *b,
                        spc_lfn_kind k, ir_var ret, ir_expr **val,
                        spc_error *e) {
  const spc_lfn *fn = asm_lfn(b, k);
  if (!fn)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0,
                   "level %s has no function %d", b->ls->name, (int)k);
  /* a user's level functions: compiled stores checked against their
   * arrays' lengths (a wrong `size` or `init` fails with a message) */
  if (!spc_level_spec_builtin(b->ls)) ir_func_set_checked(f);
  bool stmts = k == SPC_LF_LOCATE || k >= SPC_LF_INIT;
  lang_env env = {.resolve = resolve, .ctx = (void *)b,
                  .index_ty = b->index_ty, .coord_ty = b->coord_ty,
                  .returns = k == SPC_LF_LOCATE || k == SPC_LF_YIELD || k == SPC_LF_YIELD_RUN,
                  .ret_type = ltype(b, LT_INDEX)};
  if (k == SPC_LF_ACCESS && strchr(fn->text, '\n') && strstr(fn->text, "return")) {
    stmts = true;
    env.returns = true;
    env.ret_type = ltype(b, LT_COORD);
  }
  lang_ast *ast = NULL;
  spc_status s = stmts ? lang_parse_stmts(&fn->at, &ast, e)
                       : lang_parse_expr(&fn->at, &ast, e);
  if (!s) s = stmts ? lang_check_stmts(ast, ast->root, &env, e)
                    : lang_check_expr(ast, ast->root, &env, e);
  if (!s) {
    if (stmts) {
      s = lang_lower_stmts(f, dst, ast, ast->root, &env, ret, e);
      if (val) *val = NULL;
    } else {
      ir_expr *x = lang_lower_expr(f, ast->root, &env, e);
      if (!x) s = e && e->code ? e->code : SPC_ERR_INTERNAL;
      else if (val) *val = x;
      else if (ret >= 0)
        ir_add(f, dst, ir_assign(f, ret, ir_cast(f, ir_var_get(f, ret)->ty, x)));
    }
  }
  /* the lowering's own errors (a name with no value in this context)
   * carry the function's line and column: its file too, not the input's
   * that a caller would otherwise name */
  if (s == SPC_ERR_SPEC && e && !e->file[0] && fn->at.file)
    snprintf(e->file, sizeof e->file, "%s", fn->at.file);
  lang_ast_free(&ast);
  return s;
}
