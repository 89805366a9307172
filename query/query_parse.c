/* query_parse.c -- the attribute query grammar (newlines are white space):
 *
 *   query := 'select' '[' (NAME (',' NAME)*)? ']' '->' agg (',' agg)*
 *   agg   := ('count' '(' NAME (',' NAME)* ')' | 'min' '(' NAME ')'
 *            | 'max' '(' NAME ')' | 'id' '(' ')') 'as' NAME
 *
 * and the binding of its names to a remapping's outputs. */
#include "spc_query.h"
#include <stdio.h>
#include <string.h>

static bool word(const lang_tok *t, const char *w) {
  return t->kind == TK_IDENT && strlen(w) == t->len &&
         !memcmp(t->start, w, t->len);
}

static lang_node *name_node(lang_parser *p, const char *what) {
  const lang_tok *t = lang_peek(p, 0);
  if (!lang_expect(p, TK_IDENT, what)) return NULL;
  lang_node *n = lang_p_node(p, LN_NAME, t);
  return n && (n->name = lang_p_name(p, t)) ? n : NULL;
}

static bool parse_agg(lang_parser *p, spc_query_agg *a) {
  static const struct {
    const char *s;
    spc_agg_kind k;
  } kinds[] = {{"count", SPC_AGG_COUNT},
               {"min", SPC_AGG_MIN},
               {"max", SPC_AGG_MAX},
               {"id", SPC_AGG_ID}};
  const lang_tok *t = lang_peek(p, 0);
  char b[64];
  size_t i = 0;
  while (i < 4 && !word(t, kinds[i].s)) i++;
  if (i == 4)
    return lang_fail(p, t,
                     "expected an aggregate (count, min, max or id), "
                     "found %s",
                     lang_tok_text(t, b, sizeof b));
  lang_next(p);
  a->kind = kinds[i].k;
  if (!(a->at = lang_p_node(p, LN_CALL, t)) ||
      !(a->at->name = lang_p_name(p, t)) || !lang_expect(p, TK_LPAREN, "'('"))
    return false;
  if (lang_peek(p, 0)->kind != TK_RPAREN) {
    do {
      if (a->nargs == SPC_MAX_ORDER)
        return lang_fail(p, lang_peek(p, 0), "too many coordinates");
      lang_node *n = name_node(p, "a coordinate name");
      if (!n) return false;
      a->arg_at[a->nargs] = n;
      a->args[a->nargs++] = n->name;
    } while (lang_accept(p, TK_COMMA));
  }
  if (!lang_expect(p, TK_RPAREN, "',' or ')'")) return false;
  const char *fn = kinds[i].s;
  if (a->kind == SPC_AGG_COUNT && a->nargs == 0)
    return lang_fail(p, t, "count takes at least one coordinate");
  if ((a->kind == SPC_AGG_MIN || a->kind == SPC_AGG_MAX) && a->nargs != 1)
    return lang_fail(p, t, "%s takes one coordinate, found %d", fn, a->nargs);
  if (a->kind == SPC_AGG_ID && a->nargs != 0)
    return lang_fail(p, t, "id takes no coordinates, found %d", a->nargs);
  for (int k = 0; k < a->nargs; k++)
    for (int j = 0; j < k; j++)
      if (!strcmp(a->args[j], a->args[k]))
        return lang_fail(p, t, "coordinate '%s' appears twice in %s",
                         a->args[k], fn);
  if (!lang_expect(p, TK_AS, "'as' and a result name after the aggregate"))
    return false;
  lang_node *n = name_node(p, "a result name after 'as'");
  return n && (a->name = n->name);
}

static bool parse(lang_parser *p, spc_query *q) {
  const lang_tok *t = lang_peek(p, 0);
  char b[64];
  if (!word(t, "select"))
    return lang_fail(p, t, "expected 'select', found %s",
                     lang_tok_text(t, b, sizeof b));
  lang_next(p);
  if (!lang_expect(p, TK_LBRACK, "'[' and the group coordinates")) return false;
  if (lang_peek(p, 0)->kind != TK_RBRACK) {
    do {
      if (q->ngroup == SPC_MAX_ORDER)
        return lang_fail(p, lang_peek(p, 0), "too many group coordinates");
      const lang_tok *gt = lang_peek(p, 0);
      lang_node *n = name_node(p, "a group coordinate");
      if (!n) return false;
      for (int j = 0; j < q->ngroup; j++)
        if (!strcmp(q->group[j], n->name))
          return lang_fail(p, gt, "duplicate group coordinate '%s'", n->name);
      q->group_at[q->ngroup] = n;
      q->group[q->ngroup++] = n->name;
    } while (lang_accept(p, TK_COMMA));
  }
  if (!lang_expect(p, TK_RBRACK, "',' or ']'") ||
      !lang_expect(p, TK_ARROW, "'->'"))
    return false;
  int cap = 0;
  do {
    if (q->nagg == cap) {
      cap = cap ? 2 * cap : 8;
      spc_query_agg *a = lang_alloc(p->ast, (size_t)cap * sizeof *a);
      if (!a) return lang_nomem(p);
      if (q->nagg) memcpy(a, q->aggs, (size_t)q->nagg * sizeof *a);
      q->aggs = a;
    }
    const lang_tok *at = lang_peek(p, 0);
    spc_query_agg *a = &q->aggs[q->nagg];
    if (!parse_agg(p, a)) return false;
    for (int j = 0; j < q->nagg; j++)
      if (!strcmp(q->aggs[j].name, a->name))
        return lang_fail(p, at, "duplicate result name '%s'", a->name);
    q->nagg++;
  } while (lang_accept(p, TK_COMMA));
  if (lang_peek(p, 0)->kind != TK_EOF)
    return lang_fail(p, lang_peek(p, 0), "unexpected %s after the query",
                     lang_tok_text(lang_peek(p, 0), b, sizeof b));
  return true;
}

spc_status spc_query_parse(const lang_src *src, spc_query **out,
                           spc_error *err) {
  spc_query *q = spc_calloc(1, sizeof *q);
  lang_parser p;
  *out = NULL;
  if (!q || !(q->ast = lang_ast_new(src))) {
    spc_free(q);
    return SPC_NOMEM(err);
  }
  spc_status st = lang_parser_open(&p, q->ast, LANG_LEX_NO_NEWLINES, err);
  if (st == SPC_OK) {
    st = parse(&p, q) ? SPC_OK : p.status;
    lang_parser_close(&p);
  }
  if (st != SPC_OK) {
    spc_query_free(&q);
    return st;
  }
  *out = q;
  return SPC_OK;
}

void spc_query_free(spc_query **pq) {
  if (!pq || !*pq) return;
  lang_ast_free(&(*pq)->ast);
  spc_free(*pq);
  *pq = NULL;
}

static spc_status unknown(const spc_query *q, const spc_remap *r,
                          const lang_node *at, spc_error *err) {
  char list[300];
  size_t k = 0;
  list[0] = 0;
  for (int i = 0; i < r->order_out && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
                          r->out_names[i]);
  return lang_node_error(q->ast, at, err,
                         "unknown coordinate '%s' (the %s "
                         "coordinates are %s)",
                         at->name, r->identity ? "source" : "remapped", list);
}

spc_status spc_query_bind(spc_query *q, const spc_remap *r, spc_error *err) {
  for (int k = 0; k < q->ngroup; k++)
    if ((q->group_out[k] = spc_remap_find_out(r, q->group[k])) < 0)
      return unknown(q, r, q->group_at[k], err);
  for (int a = 0; a < q->nagg; a++)
    for (int k = 0; k < q->aggs[a].nargs; k++)
      if ((q->aggs[a].arg_out[k] = spc_remap_find_out(r, q->aggs[a].args[k])) <
          0)
        return unknown(q, r, q->aggs[a].arg_at[k], err);
  return SPC_OK;
}
