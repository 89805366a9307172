/* lang_parse_expr.c -- the parser state and the expression grammar shared
 * by the three languages (precedence as C, lowest first):
 *
 *   expr    := or ('?' expr ':' expr)?
 *   or      := and ('||' and)*         and  := bor ('&&' bor)*
 *   bor     := bxor ('|' bxor)*        bxor := band ('^' band)*
 *   band    := eq ('&' eq)*            eq   := rel (('=='|'!=') rel)*
 *   rel     := shift (('<'|'<='|'>'|'>=') shift)*
 *   shift   := add (('<<'|'>>') add)*  add  := mul (('+'|'-') mul)*
 *   mul     := unary (('*'|'/'|'%') unary)*
 *   unary   := ('-'|'!'|'~') unary | primary
 *   primary := INT | FLOAT | 'true' | 'false' | '(' expr ')'
 *            | NAME | NAME '[' expr ']' | NAME '(' (expr (',' expr)*)? ')'
 *            | '#' NAME | '#' '(' NAME (',' NAME)* ')'
 *
 * A line may break after a binary operator, `?` or `:`. */
#include "spc_lang.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

spc_status lang_parser_open(lang_parser *p, lang_ast *ast, int flags,
                            spc_error *e) {
  memset(p, 0, sizeof *p);
  p->ast = ast;
  p->err = e;
  return lang_lex(&ast->src, flags, &p->toks, &p->ntoks, e);
}

void lang_parser_close(lang_parser *p) { lang_toks_free(&p->toks, p->ntoks); }

const lang_tok *lang_peek(const lang_parser *p, int ahead) {
  int i = p->pos + ahead;
  return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

const lang_tok *lang_next(lang_parser *p) {
  const lang_tok *t = lang_peek(p, 0);
  if (p->pos < p->ntoks - 1) p->pos++;
  return t;
}

bool lang_accept(lang_parser *p, lang_tok_kind k) {
  if (lang_peek(p, 0)->kind != k) return false;
  lang_next(p);
  return true;
}

void lang_skip_newlines(lang_parser *p) {
  while (lang_accept(p, TK_NEWLINE)) {
  }
}

void *lang_fail(lang_parser *p, const lang_tok *t, const char *fmt, ...) {
  if (p->failed) return NULL;
  p->failed = true;
  p->status = SPC_ERR_SPEC;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  spc_err(p->err, SPC_ERR_SPEC, p->ast->src.file, t->line, t->col, "%s", msg);
  return NULL;
}

const char *lang_tok_text(const lang_tok *t, char *buf, size_t n) {
  if (t->kind == TK_IDENT || t->kind == TK_INT || t->kind == TK_FLOAT)
    snprintf(buf, n, "'%.*s'", (int)(t->len < 40 ? t->len : 40), t->start);
  else
    snprintf(buf, n, "%s", lang_tok_name(t->kind));
  return buf;
}

bool lang_expect(lang_parser *p, lang_tok_kind k, const char *what) {
  if (lang_accept(p, k)) return true;
  char b[64];
  const lang_tok *t = lang_peek(p, 0);
  lang_fail(p, t, "expected %s, found %s", what ? what : lang_tok_name(k),
            lang_tok_text(t, b, sizeof b));
  return false;
}

void *lang_nomem(lang_parser *p) {
  if (!p->failed) {
    p->failed = true;
    p->status = SPC_NOMEM(p->err);
  }
  return NULL;
}

lang_node *lang_p_node(lang_parser *p, lang_kind k, const lang_tok *at) {
  lang_node *n = lang_node_new(p->ast, k, at->line, at->col);
  return n ? n : lang_nomem(p);
}

bool lang_p_push(lang_parser *p, lang_node *n, lang_node *kid) {
  return lang_node_push(p->ast, n, kid) || lang_nomem(p);
}

const char *lang_p_name(lang_parser *p, const lang_tok *t) {
  char *s = lang_strdup(p->ast, t->start, t->len);
  return s ? s : lang_nomem(p);
}

/* '#' NAME | '#' '(' NAME, ... ')' after the '#'. */
static lang_node *parse_counter(lang_parser *p, const lang_tok *hash) {
  lang_node *n = lang_p_node(p, LN_COUNTER, hash);
  if (!n) return NULL;
  bool paren = lang_accept(p, TK_LPAREN);
  do {
    const lang_tok *t = lang_peek(p, 0);
    if (!lang_expect(p, TK_IDENT, "an index name after '#'")) return NULL;
    lang_node *k = lang_p_node(p, LN_NAME, t);
    if (!k || !(k->name = lang_p_name(p, t)) || !lang_p_push(p, n, k))
      return NULL;
  } while (paren && lang_accept(p, TK_COMMA));
  if (paren && !lang_expect(p, TK_RPAREN, "',' or ')'")) return NULL;
  return n;
}

static const struct {
  const char *s;
  lang_fn fn;
  lang_tname cast;
} fns[] = {{"min", LF_MIN, LT_NONE}, {"max", LF_MAX, LT_NONE},
           {"abs", LF_ABS, LT_NONE}, {"len", LF_LEN, LT_NONE},
           {"i32", LF_CAST, LT_I32}, {"i64", LF_CAST, LT_I64},
           {"u64", LF_CAST, LT_U64}, {"f32", LF_CAST, LT_F32},
           {"f64", LF_CAST, LT_F64}};

/* NAME '(' args ')' after the NAME. */
static lang_node *parse_call(lang_parser *p, const lang_tok *id) {
  size_t i = 0, n = sizeof fns / sizeof fns[0];
  while (i < n && !(strlen(fns[i].s) == id->len &&
                    !memcmp(fns[i].s, id->start, id->len)))
    i++;
  if (i == n)
    return lang_fail(p, id, "unknown function '%.*s'", (int)id->len, id->start);
  lang_node *c = lang_p_node(p, LN_CALL, id);
  if (!c || !(c->name = lang_p_name(p, id))) return NULL;
  c->fn = fns[i].fn;
  c->tname = fns[i].cast;
  c->op = c->fn == LF_MIN   ? IR_MIN
          : c->fn == LF_MAX ? IR_MAX
          : c->fn == LF_ABS ? IR_ABS
                            : -1;
  if (lang_accept(p, TK_RPAREN)) return c;
  do {
    lang_node *a = lang_parse_expr_at(p);
    if (!a || !lang_p_push(p, c, a)) return NULL;
  } while (lang_accept(p, TK_COMMA));
  return lang_expect(p, TK_RPAREN, "',' or ')'") ? c : NULL;
}

static lang_node *parse_primary(lang_parser *p) {
  const lang_tok *t = lang_next(p);
  lang_node *n;
  char b[64];
  switch (t->kind) {
  case TK_INT:
    if (!(n = lang_p_node(p, LN_INT, t))) return NULL;
    n->uval = t->ival;
    n->ival = (int64_t)t->ival;
    n->is_u64 = t->is_u64;
    return n;
  case TK_FLOAT:
    if (!(n = lang_p_node(p, LN_FLOAT, t))) return NULL;
    n->fval = t->fval;
    return n;
  case TK_TRUE:
  case TK_FALSE:
    if (!(n = lang_p_node(p, LN_BOOL, t))) return NULL;
    n->bval = t->kind == TK_TRUE;
    return n;
  case TK_LPAREN:
    n = lang_parse_expr_at(p);
    return n && lang_expect(p, TK_RPAREN, "')'") ? n : NULL;
  case TK_HASH: return parse_counter(p, t);
  case TK_IDENT:
    if (lang_accept(p, TK_LPAREN)) return parse_call(p, t);
    if (lang_accept(p, TK_LBRACK)) {
      if (!(n = lang_p_node(p, LN_INDEX, t)) ||
          !(n->name = lang_p_name(p, t)) || !(n->a = lang_parse_expr_at(p)) ||
          !lang_expect(p, TK_RBRACK, "']'"))
        return NULL;
    } else {
      if (!(n = lang_p_node(p, LN_NAME, t)) || !(n->name = lang_p_name(p, t)))
        return NULL;
    }
    if (lang_peek(p, 0)->kind == TK_LBRACK)
      return lang_fail(p, lang_peek(p, 0),
                       "only a named array can be indexed (one index)");
    return n;
  default:
    return lang_fail(p, t, "expected an expression, found %s",
                     lang_tok_text(t, b, sizeof b));
  }
}

static lang_node *parse_unary(lang_parser *p) {
  const lang_tok *t = lang_peek(p, 0);
  int op = t->kind == TK_MINUS   ? IR_NEG
           : t->kind == TK_BANG  ? IR_NOT
           : t->kind == TK_TILDE ? IR_BNOT
                                 : -1;
  if (op < 0) return parse_primary(p);
  lang_next(p);
  if (!lang_p_enter(p, t)) return NULL;
  lang_node *n = lang_p_node(p, LN_UNARY, t);
  if (!n || !(n->a = parse_unary(p))) return NULL;
  n->op = op;
  p->nest--;
  return n;
}

/* Binary levels, lowest first; each entry: token -> IR op. */
#define NLEVELS 10
static const struct {
  lang_tok_kind k;
  ir_op op;
} levels[NLEVELS][5] = {
    {{TK_OROR, IR_LOR}},
    {{TK_ANDAND, IR_LAND}},
    {{TK_PIPE, IR_BOR}},
    {{TK_CARET, IR_BXOR}},
    {{TK_AMP, IR_BAND}},
    {{TK_EQ, IR_EQ}, {TK_NE, IR_NE}},
    {{TK_LT, IR_LT}, {TK_LE, IR_LE}, {TK_GT, IR_GT}, {TK_GE, IR_GE}},
    {{TK_SHL, IR_SHL}, {TK_SHR, IR_SHR}},
    {{TK_PLUS, IR_ADD}, {TK_MINUS, IR_SUB}},
    {{TK_STAR, IR_MUL}, {TK_SLASH, IR_DIV}, {TK_PERCENT, IR_REM}}};

static int level_op(int lv, lang_tok_kind k) {
  for (int i = 0; i < 5 && levels[lv][i].k; i++)
    if (levels[lv][i].k == k) return (int)levels[lv][i].op;
  return -1;
}

static lang_node *parse_binary(lang_parser *p, int lv) {
  if (lv == NLEVELS) return parse_unary(p);
  lang_node *l = parse_binary(p, lv + 1);
  while (l) {
    const lang_tok *t = lang_peek(p, 0);
    int op = level_op(lv, t->kind);
    if (op < 0) break;
    lang_next(p);
    lang_skip_newlines(p);
    lang_node *n = lang_p_node(p, LN_BINARY, t);
    if (!n) return NULL;
    n->op = op;
    n->a = l;
    if (!(n->b = parse_binary(p, lv + 1))) return NULL;
    l = n;
  }
  return l;
}

/* the depth of n's tree, counted up to limit + 1 */
static int depth_of(const lang_node *n, int limit) {
  if (!n) return 0;
  if (limit < 0) return 1;
  int d = 0;
  const lang_node *k3[3] = {n->a, n->b, n->c};
  for (int k = 0; k < 3 && d <= limit; k++) {
    int x = depth_of(k3[k], limit - 1);
    d = x > d ? x : d;
  }
  for (int k = 0; k < n->nkids && d <= limit; k++) {
    int x = depth_of(n->kids[k], limit - 1);
    d = x > d ? x : d;
  }
  return d + 1;
}

bool lang_p_enter(lang_parser *p, const lang_tok *at) {
  if (++p->nest <= LANG_MAX_NEST) return true;
  lang_fail(p, at, "nested more than %d deep", LANG_MAX_NEST);
  return false;
}

static lang_node *parse_cond(lang_parser *p) {
  lang_node *c = parse_binary(p, 0);
  const lang_tok *q = lang_peek(p, 0);
  if (!c || q->kind != TK_QUESTION) return c;
  lang_next(p);
  lang_skip_newlines(p);
  lang_node *n = lang_p_node(p, LN_COND, q);
  if (!n) return NULL;
  n->a = c;
  if (!(n->b = lang_parse_expr_at(p))) return NULL;
  lang_skip_newlines(p);
  if (!lang_expect(p, TK_COLON, "':' of '?:'")) return NULL;
  lang_skip_newlines(p);
  n->c = lang_parse_expr_at(p);
  return n->c ? n : NULL;
}

lang_node *lang_parse_expr_at(lang_parser *p) {
  const lang_tok *at = lang_peek(p, 0);
  if (!lang_p_enter(p, at)) return NULL;
  lang_node *n = parse_cond(p);
  p->nest--;
  /* a chain of operators is as deep as it is long */
  if (n && depth_of(n, LANG_MAX_NEST) > LANG_MAX_NEST)
    return lang_fail(p, at, "expression nested more than %d operators deep", LANG_MAX_NEST);
  return n;
}

spc_status lang_parse_expr(const lang_src *src, lang_ast **out, spc_error *e) {
  lang_parser p;
  lang_ast *ast = lang_ast_new(src);
  *out = NULL;
  if (!ast) return SPC_NOMEM(e);
  spc_status st = lang_parser_open(&p, ast, LANG_LEX_NO_NEWLINES, e);
  if (st == SPC_OK) {
    ast->root = lang_parse_expr_at(&p);
    if (ast->root && lang_peek(&p, 0)->kind != TK_EOF) {
      char b[64];
      lang_fail(&p, lang_peek(&p, 0), "unexpected %s after the expression",
                lang_tok_text(lang_peek(&p, 0), b, sizeof b));
    }
    st = p.failed ? p.status : SPC_OK;
    lang_parser_close(&p);
  }
  if (st != SPC_OK) lang_ast_free(&ast);
  *out = ast;
  return st;
}
