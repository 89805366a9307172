/* spec_format.c -- load a tensor-format spec from its YAML tree:
 *
 *   format: NAME
 *   description: TEXT
 *   order: 2 | any
 *   params: {M: 4, N: 4}                  integer parameters with defaults
 *   remap: (i, j) -> (i / M as bi, ...)   absent: identity
 *   levels: [dense, {level: compressed, unique: false, repeat: true,
 *            access: E, ...}]             one per remapped coordinate
 *   requires: [j <= i]                     conditions on the entries
 *   fill: zero | none                      zero values are padding
 *
 * The remapping, each level's overrides and each condition are parsed and
 * checked against the levels' specs. */
#include "spec.h"
#include "spc_remap.h"
#include "spec_yaml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lfn_keys[SPC_LF_N] = {
    "begin", "end", "access", "valid", "locate", "size",
    "init", "yield_pos", "insert_coord", "finalize", "yield_run"};

void spc_format_spec_free(spc_format_spec **p) {
  if (!p || !*p) return;
  spc_format_spec *f = *p;
  spc_free(f->name);
  spc_free(f->description);
  spc_free(f->file);
  spc_free(f->yaml);
  for (int i = 0; i < f->nparams; i++) spc_free(f->pnames[i]);
  spc_lfn_free(&f->remap);
  /* every level, not only the nlevels parsed: one that failed part way
   * (an unknown level name after its functions) holds texts too */
  for (int l = 0; l < SPC_MAX_ORDER; l++)
    for (int k = 0; k < SPC_LF_N; k++) spc_lfn_free(&f->lv[l].fn[k]);
  for (int i = 0; i < f->nrequires; i++) spc_lfn_free(&f->requires[i]);
  spc_free(f);
  *p = NULL;
}

static bool parse_bool(const spc_ynode *n, bool *v) {
  if (n->kind != SPC_Y_SCALAR) return false;
  if (!strcmp(n->str, "true") || !strcmp(n->str, "yes")) return (*v = true), true;
  if (!strcmp(n->str, "false") || !strcmp(n->str, "no")) return (*v = false), true;
  return false;
}

static spc_status parse_level(const char *file, const spc_ynode *n,
                              const spc_specs *reg, spc_format_level *lv,
                              spc_error *e) {
  const spc_ynode *name = n;
  if (n->kind == SPC_Y_MAP) {
    name = spc_ymap_get(n, "level");
    if (!name)
      return spc_yerr(e, SPC_ERR_SPEC, file, n, "levels", "expected {level: NAME, ...}");
    for (int i = 0; i < n->n; i++) {
      const char *k = n->keys[i]->str;
      const spc_ynode *v = n->vals[i];
      int f = 0;
      while (f < SPC_LF_N && strcmp(k, lfn_keys[f])) f++;
      if (!strcmp(k, "level")) continue;
      if (!strcmp(k, "unique") || !strcmp(k, "repeat")) {
        bool b;
        if (!parse_bool(v, &b))
          return spc_yerr(e, SPC_ERR_SPEC, file, v, k, "expected true or false");
        if (k[0] == 'u') lv->unique = b;
        else lv->repeat = b;
      } else if (f < SPC_LF_N) {
        spc_status s = spc_lfn_from(file, v, k, &lv->fn[f], e);
        if (s) return s;
      } else {
        return spc_yerr(e, SPC_ERR_SPEC, file, n->keys[i], "levels",
                        "unknown key '%s' (expected level, unique, repeat or a level function)", k);
      }
    }
  } else {
    lv->unique = true;
  }
  if (n->kind == SPC_Y_MAP && !spc_ymap_get(n, "unique")) lv->unique = true;
  if (name->kind != SPC_Y_SCALAR || !(lv->lf = spc_specs_level(reg, name->str)))
    return spc_yerr(e, SPC_ERR_SPEC, file, name, "levels", "unknown level format '%s'",
                    name->kind == SPC_Y_SCALAR ? name->str : "?");
  return SPC_OK;
}

static spc_status parse_params(const char *file, const spc_ynode *n,
                               spc_format_spec *f, spc_error *e) {
  if (n->kind != SPC_Y_MAP || n->n > SPC_SPEC_MAX)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, "params", "expected {NAME: default, ...}");
  for (int i = 0; i < n->n; i++) {
    char *end;
    const spc_ynode *v = n->vals[i];
    long long x = v->kind == SPC_Y_SCALAR ? strtoll(v->str, &end, 0) : 0;
    if (v->kind != SPC_Y_SCALAR || *end || end == v->str || x < 1)
      return spc_yerr(e, SPC_ERR_SPEC, file, v, "params", "expected a positive integer default");
    if (!(f->pnames[i] = spc_strdup(n->keys[i]->str))) return SPC_NOMEM(e);
    f->pdefaults[i] = x;
    f->nparams++;
  }
  return SPC_OK;
}

/* Resolver for `requires`: source indices and parameters. */
typedef struct req_names {
  const spc_remap *r;
  const spc_format_spec *f;
} req_names;

static bool req_resolve(void *ctx, const char *name, lang_sym *s) {
  const req_names *n = ctx;
  for (int k = 0; k < n->r->order_in; k++)
    if (!strcmp(name, n->r->in_names[k])) {
      s->kind = LANG_SYM_INDEX;
      s->type = (lang_type){.ty = IR_I64, .sym = LT_COORD};
      s->readonly = true;
      return true;
    }
  for (int k = 0; k < n->f->nparams; k++)
    if (!strcmp(name, n->f->pnames[k])) {
      s->kind = LANG_SYM_CONST;
      s->type = (lang_type){.ty = IR_I64, .lit = true};
      s->value = n->f->pdefaults[k];
      return true;
    }
  return false;
}

static spc_status check_all(spc_format_spec *f, spc_error *e) {
  spc_remap_param ps[SPC_SPEC_MAX];
  spc_remap *r = NULL;
  int order = f->order ? f->order : 2, nl = f->nlevels;
  spc_status s = SPC_OK;
  for (int k = 0; k < f->nparams; k++) ps[k] = (spc_remap_param){f->pnames[k], f->pdefaults[k]};
  if (f->remap.text) s = spc_remap_parse(&f->remap.at, order, ps, f->nparams, &r, e);
  else s = spc_remap_identity(order, &r, e);
  if (s) return s;
  if (!f->order) {
    if (f->remap.text)
      s = spc_err(e, SPC_ERR_SPEC, f->file, f->remap.at.line, f->remap.at.col,
                  "remap: a format of any order takes its level order from --modes, not a remapping");
    else if (!f->lv[nl - 1].repeat)
      s = spc_err(e, SPC_ERR_SPEC, f->file, 0, 0,
                  "levels: a format of any order needs a last level with repeat: true");
  } else if (r->order_out != nl) {
    s = spc_err(e, SPC_ERR_SPEC, f->file, f->remap.at.line, f->remap.at.col,
                "the remapping gives %d coordinates but there are %d levels", r->order_out, nl);
  }
  /* overrides and required functions, with the other levels' coordinates */
  const char *coords[SPC_MAX_ORDER];
  for (int k = 0; k < r->order_out; k++) coords[k] = r->out_names[k];
  for (int l = 0; l < nl && !s; l++)
    for (int k = 0; k < SPC_LF_N && !s; k++) {
      const spc_lfn *o = &f->lv[l].fn[k];
      if (o->text) s = spc_lfn_check(f->lv[l].lf, (spc_lfn_kind)k, o, coords, f->order ? r->order_out : 0, e);
      else if (f->lv[l].lf->fn[k].required)
        s = spc_err(e, SPC_ERR_SPEC, f->file, 0, 0,
                    "levels: level %d (%s) needs '%s' from the tensor format", l,
                    f->lv[l].lf->name, lfn_keys[k]);
    }
  req_names rn = {r, f};
  lang_env env = {.resolve = req_resolve, .ctx = &rn};
  for (int i = 0; i < f->nrequires && !s; i++) {
    lang_ast *ast = NULL;
    s = lang_parse_expr(&f->requires[i].at, &ast, e);
    if (!s) s = lang_check_expr(ast, ast->root, &env, e);
    if (!s && ast->root->type.ty != IR_BOOL)
      s = lang_node_error(ast, ast->root, e, "expected a condition on the entries");
    lang_ast_free(&ast);
  }
  spc_remap_free(&r);
  return s;
}

static spc_status parse_body(const char *file, const spc_ynode *root,
                             const spc_specs *reg, spc_format_spec *f,
                             spc_error *e) {
  static const char *const top[] = {"format", "description", "order", "params",
                                    "remap", "levels", "requires", "fill"};
  const spc_ynode *n;
  if (root->kind != SPC_Y_MAP) return spc_yerr(e, SPC_ERR_SPEC, file, root, NULL, "expected a mapping");
  for (int i = 0; i < root->n; i++) {
    int k = 0;
    while (k < 8 && strcmp(root->keys[i]->str, top[k])) k++;
    if (k == 8)
      return spc_yerr(e, SPC_ERR_SPEC, file, root->keys[i], NULL,
                      "unknown key '%s' (expected format, description, order, params, remap, "
                      "levels, requires or fill)", root->keys[i]->str);
  }
  n = spc_ymap_get(root, "format");
  if (!n || n->kind != SPC_Y_SCALAR || !n->str[0])
    return spc_yerr(e, SPC_ERR_SPEC, file, n ? n : root, "format", "expected the format's name");
  if (!(f->name = spc_strdup(n->str))) return SPC_NOMEM(e);
  if ((n = spc_ymap_get(root, "description")) && n->kind == SPC_Y_SCALAR &&
      !(f->description = spc_strdup(n->str)))
    return SPC_NOMEM(e);
  n = spc_ymap_get(root, "order");
  if (!n) return spc_yerr(e, SPC_ERR_SPEC, file, root, "order", "missing (a number or 'any')");
  char *end;
  long v = n->kind == SPC_Y_SCALAR ? strtol(n->str, &end, 10) : 0;
  if (n->kind == SPC_Y_SCALAR && !strcmp(n->str, "any")) f->order = 0;
  else if (n->kind != SPC_Y_SCALAR || *end || v < 1 || v > SPC_MAX_ORDER)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, "order", "expected 1..%d or 'any'", SPC_MAX_ORDER);
  else f->order = (int)v;
  spc_status s = SPC_OK;
  if ((n = spc_ymap_get(root, "params")) && (s = parse_params(file, n, f, e))) return s;
  if ((n = spc_ymap_get(root, "remap")) && (s = spc_lfn_from(file, n, "remap", &f->remap, e))) return s;
  n = spc_ymap_get(root, "levels");
  if (!n || n->kind != SPC_Y_SEQ || n->n < 1 || n->n > SPC_MAX_ORDER)
    return spc_yerr(e, SPC_ERR_SPEC, file, n ? n : root, "levels",
                    "expected a list of 1..%d levels", SPC_MAX_ORDER);
  for (int l = 0; l < n->n; l++) {
    if ((s = parse_level(file, n->vals[l], reg, &f->lv[l], e))) return s;
    f->nlevels++;
    if (f->lv[l].repeat && l != n->n - 1)
      return spc_yerr(e, SPC_ERR_SPEC, file, n->vals[l], "levels", "only the last level may repeat");
  }
  if ((n = spc_ymap_get(root, "requires"))) {
    if (n->kind != SPC_Y_SEQ || n->n > SPC_SPEC_MAX)
      return spc_yerr(e, SPC_ERR_SPEC, file, n, "requires", "expected a list of conditions");
    for (int i = 0; i < n->n; i++) {
      if ((s = spc_lfn_from(file, n->vals[i], "requires", &f->requires[i], e))) return s;
      f->nrequires++;
    }
  }
  if ((n = spc_ymap_get(root, "fill"))) {
    if (n->kind != SPC_Y_SCALAR || (strcmp(n->str, "zero") && strcmp(n->str, "none")))
      return spc_yerr(e, SPC_ERR_SPEC, file, n, "fill", "expected zero or none");
    f->fill_zero = !strcmp(n->str, "zero");
  }
  return check_all(f, e);
}

spc_status spc_format_spec_parse(const char *file, const spc_ynode *root,
                                 const spc_specs *reg, spc_format_spec **out,
                                 spc_error *e) {
  *out = NULL;
  spc_format_spec *f = spc_calloc(1, sizeof *f);
  if (!f) return SPC_NOMEM(e);
  spc_status s = (f->file = spc_strdup(file)) ? parse_body(f->file, root, reg, f, e) : SPC_NOMEM(e);
  if (s) spc_format_spec_free(&f);
  *out = f;
  return s;
}
