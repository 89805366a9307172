/* remap_parse.c -- the remapping grammar (newlines are white space):
 *
 *   remap   := '(' NAME (',' NAME)* ')' '->' lets? '(' output (',' output)* ')'
 *   lets    := 'let' NAME '=' expr (',' NAME '=' expr)* 'in'
 *   output  := expr ('as' NAME)?
 *
 * expr is the shared expression grammar (lang_parse_expr.c), where `#i`
 * and `#(i, k)` are counters.  Checking follows in remap_check.c. */
#include "remap_internal.h"
#include <stdio.h>
#include <string.h>

static bool parse_lets(lang_parser *p, spc_remap *r) {
  int cap = 0;
  do {
    const lang_tok *t = lang_peek(p, 0);
    if (!lang_expect(p, TK_IDENT, "a let name")) return false;
    if (r->nlets == cap) {
      cap = cap ? 2 * cap : 8;
      lang_node **d = lang_alloc(p->ast, (size_t)cap * sizeof *d);
      lang_node **x = lang_alloc(p->ast, (size_t)cap * sizeof *x);
      const char **nm = lang_alloc(p->ast, (size_t)cap * sizeof *nm);
      if (!d || !x || !nm) return lang_nomem(p);
      if (r->nlets) {
        memcpy(d, r->let_decl, (size_t)r->nlets * sizeof *d);
        memcpy(x, r->let_exprs, (size_t)r->nlets * sizeof *x);
        memcpy(nm, r->let_names, (size_t)r->nlets * sizeof *nm);
      }
      r->let_decl = d;
      r->let_exprs = x;
      r->let_names = nm;
    }
    lang_node *d = lang_p_node(p, LN_NAME, t);
    if (!d || !(d->name = lang_p_name(p, t))) return false;
    if (!lang_expect(p, TK_ASSIGN, "'=' after the let name")) return false;
    lang_node *e = lang_parse_expr_at(p);
    if (!e) return false;
    r->let_decl[r->nlets] = d;
    r->let_names[r->nlets] = d->name;
    r->let_exprs[r->nlets++] = e;
  } while (lang_accept(p, TK_COMMA));
  return lang_expect(p, TK_IN, "',' or 'in' after the let bindings");
}

static bool parse_outputs(lang_parser *p, spc_remap *r) {
  if (!lang_expect(p, TK_LPAREN, "'(' before the output coordinates"))
    return false;
  do {
    const lang_tok *t = lang_peek(p, 0);
    if (r->order_out == SPC_MAX_ORDER) {
      lang_fail(p, t, "a remapping has at most %d outputs", SPC_MAX_ORDER);
      return false;
    }
    lang_node *e = lang_parse_expr_at(p);
    if (!e) return false;
    int k = r->order_out++;
    r->out[k] = e;
    if (lang_accept(p, TK_AS)) {
      const lang_tok *a = lang_peek(p, 0);
      if (!lang_expect(p, TK_IDENT, "a name after 'as'")) return false;
      if (!(r->out_as[k] = lang_p_node(p, LN_NAME, a)) ||
          !(r->out_as[k]->name = lang_p_name(p, a)))
        return false;
    }
  } while (lang_accept(p, TK_COMMA));
  return lang_expect(p, TK_RPAREN, "',' or ')' after an output");
}

static bool parse(lang_parser *p, spc_remap *r) {
  const lang_tok *h = lang_peek(p, 0);
  if (!lang_expect(p, TK_LPAREN, "'(' starting the source indices"))
    return false;
  if (!(r->head = lang_p_node(p, LN_NAME, h))) return false;
  do {
    const lang_tok *t = lang_peek(p, 0);
    if (!lang_expect(p, TK_IDENT, "a source index name")) return false;
    if (r->order_in == SPC_MAX_ORDER) {
      lang_fail(p, t, "a tensor has at most %d dimensions", SPC_MAX_ORDER);
      return false;
    }
    lang_node *d = lang_p_node(p, LN_NAME, t);
    if (!d || !(d->name = lang_p_name(p, t))) return false;
    r->in_decl[r->order_in] = d;
    r->in_names[r->order_in++] = d->name;
  } while (lang_accept(p, TK_COMMA));
  if (!lang_expect(p, TK_RPAREN, "',' or ')' after a source index") ||
      !lang_expect(p, TK_ARROW, "'->'"))
    return false;
  if (lang_accept(p, TK_LET) && !parse_lets(p, r)) return false;
  if (!parse_outputs(p, r)) return false;
  if (lang_peek(p, 0)->kind != TK_EOF) {
    char b[64];
    lang_fail(p, lang_peek(p, 0), "unexpected %s after the remapping",
              lang_tok_text(lang_peek(p, 0), b, sizeof b));
    return false;
  }
  return true;
}

spc_status spc_remap_parse(const lang_src *src, int order,
                           const spc_remap_param *params, int nparams,
                           spc_remap **out, spc_error *err) {
  spc_remap *r = spc_calloc(1, sizeof *r);
  lang_parser p;
  spc_status st;
  *out = NULL;
  if (!r || !(r->ast = lang_ast_new(src))) {
    spc_free(r);
    return SPC_NOMEM(err);
  }
  if (nparams > 0) {
    r->params = lang_alloc(r->ast, (size_t)nparams * sizeof *r->params);
    if (!r->params) goto nomem;
    for (int i = 0; i < nparams; i++) {
      r->params[i].value = params[i].value;
      r->params[i].name =
          lang_strdup(r->ast, params[i].name, strlen(params[i].name));
      if (!r->params[i].name) goto nomem;
    }
    r->nparams = nparams;
  }
  if ((st = lang_parser_open(&p, r->ast, LANG_LEX_NO_NEWLINES, err)) != SPC_OK)
    goto fail;
  bool ok = parse(&p, r);
  st = ok ? SPC_OK : p.status;
  lang_parser_close(&p);
  if (st == SPC_OK) st = spc_remap_check(r, order, err);
  if (st != SPC_OK) goto fail;
  *out = r;
  return SPC_OK;
nomem:
  st = SPC_NOMEM(err);
fail:
  spc_remap_free(&r);
  return st;
}

spc_status spc_remap_identity(int order, spc_remap **out, spc_error *err) {
  static const char names[] = "ijklmnopqrstuvwx";
  char text[4 * SPC_MAX_ORDER * 2 + 16];
  size_t k = 0;
  if (order < 1 || order > SPC_MAX_ORDER)
    return spc_err(err, SPC_ERR_ARG, NULL, 0, 0,
                   "tensor order %d is outside 1..%d", order, SPC_MAX_ORDER);
  for (int pass = 0; pass < 2; pass++) {
    text[k++] = '(';
    for (int d = 0; d < order; d++) {
      if (d) text[k++] = ',';
      text[k++] = names[d];
    }
    text[k++] = ')';
    if (!pass) {
      memcpy(text + k, " -> ", 4);
      k += 4;
    }
  }
  text[k] = 0;
  lang_src src = {.text = text, .line = 1, .col = 1};
  spc_status st = spc_remap_parse(&src, order, NULL, 0, out, err);
  if (st == SPC_OK) (*out)->identity = true;
  return st;
}

void spc_remap_free(spc_remap **pr) {
  if (!pr || !*pr) return;
  if ((*pr)->shared) { /* a cached one lives as long as the process */
    *pr = NULL;
    return;
  }
  lang_ast_free(&(*pr)->ast);
  spc_free(*pr);
  *pr = NULL;
}

int spc_remap_find_out(const spc_remap *r, const char *name) {
  for (int k = 0; k < r->order_out; k++)
    if (!strcmp(r->out_names[k], name)) return k;
  return -1;
}

int spc_remap_find_in(const spc_remap *r, const char *name) {
  for (int k = 0; k < r->order_in; k++)
    if (!strcmp(r->in_names[k], name)) return k;
  return -1;
}
