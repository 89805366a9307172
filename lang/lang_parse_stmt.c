/* lang_parse_stmt.c -- the statement language of level functions:
 *
 *   block := (stmt ((NEWLINE | ';') stmt)*)?
 *   stmt  := NAME ('=' | '+=' | '-=') expr
 *          | NAME '[' expr ']' ('=' | '+=' | '-=') expr
 *          | NAME '=' 'alloc' '(' TYPE ',' expr ')'     (zero-filled)
 *          | 'free' '(' NAME ')'
 *          | 'for' NAME 'in' expr '..' expr '{' block '}'
 *          | 'while' expr '{' block '}'
 *          | 'if' expr '{' block '}' ('else' ('if' ... | '{' block '}'))?
 *          | 'break' | 'return' expr
 *          | ('fill' | 'prefix_sum' | 'shift' | 'copy' | 'sort_perm')
 *            '(' expr (',' expr)* ')'
 *          | 'fail' '(' STRING (',' expr)* ')'
 *
 * `break` is legal only inside a loop; where `return` may stand is checked
 * by lang_check_stmts. */
#include "spc_lang.h"
#include <string.h>

static bool is_word(const lang_tok *t, const char *w) {
  return t->kind == TK_IDENT && strlen(w) == t->len &&
         !memcmp(t->start, w, t->len);
}

static const struct {
  const char *s;
  ir_builtin bi;
} builtins[] = {{"fill", IR_FILL},
                {"prefix_sum", IR_PREFIX_SUM},
                {"shift", IR_SHIFT},
                {"copy", IR_COPY},
                {"sort_perm", IR_SORT_PERM}};

/* '(' expr, ... ')' into n->kids. */
static bool parse_args(lang_parser *p, lang_node *n) {
  if (!lang_expect(p, TK_LPAREN, "'('")) return false;
  if (lang_accept(p, TK_RPAREN)) return true;
  do {
    lang_node *a = lang_parse_expr_at(p);
    if (!a || !lang_p_push(p, n, a)) return false;
  } while (lang_accept(p, TK_COMMA));
  return lang_expect(p, TK_RPAREN, "',' or ')'");
}

static lang_node *parse_braced(lang_parser *p) {
  if (!lang_expect(p, TK_LBRACE, "'{'")) return NULL;
  lang_node *b = lang_parse_block_at(p, true);
  return b && lang_expect(p, TK_RBRACE, "'}'") ? b : NULL;
}

static lang_node *parse_if(lang_parser *p, const lang_tok *t) {
  lang_node *n = lang_p_node(p, LN_IF, t);
  if (!n || !(n->a = lang_parse_expr_at(p)) || !(n->b = parse_braced(p)))
    return NULL;
  if (lang_peek(p, 0)->kind == TK_NEWLINE && lang_peek(p, 1)->kind == TK_ELSE)
    lang_next(p);
  if (!lang_accept(p, TK_ELSE)) return n;
  const lang_tok *u = lang_peek(p, 0);
  if (lang_accept(p, TK_IF)) return (n->c = parse_if(p, u)) ? n : NULL;
  return (n->c = parse_braced(p)) ? n : NULL;
}

static lang_node *parse_loop(lang_parser *p, const lang_tok *t) {
  lang_node *n = lang_p_node(p, t->kind == TK_FOR ? LN_FOR : LN_WHILE, t);
  if (!n) return NULL;
  if (t->kind == TK_FOR) {
    const lang_tok *v = lang_peek(p, 0);
    if (!lang_expect(p, TK_IDENT, "a loop variable") ||
        !(n->name = lang_p_name(p, v)) || !lang_expect(p, TK_IN, "'in'") ||
        !(n->a = lang_parse_expr_at(p)) ||
        !lang_expect(p, TK_DOTDOT, "'..' between the loop bounds") ||
        !(n->b = lang_parse_expr_at(p)))
      return NULL;
  } else if (!(n->a = lang_parse_expr_at(p))) {
    return NULL;
  }
  p->loops++;
  n->c = parse_braced(p);
  p->loops--;
  return n->c ? n : NULL;
}

/* NAME = alloc(TYPE, n) after the '='. */
static lang_node *parse_alloc(lang_parser *p, const lang_tok *id) {
  lang_node *n = lang_p_node(p, LN_ALLOC, id);
  if (!n || !(n->name = lang_p_name(p, id))) return NULL;
  lang_next(p); /* alloc */
  if (!lang_expect(p, TK_LPAREN, "'('")) return NULL;
  const lang_tok *ty = lang_peek(p, 0);
  if (!lang_expect(p, TK_IDENT, "a type name")) return NULL;
  n->tname = lang_tname_parse(ty->start, ty->len);
  if (n->tname == LT_NONE)
    return lang_fail(p, ty,
                     "unknown type '%.*s' (expected index, coord, value, "
                     "bool, i32, i64, u64, f32, f64 or c128)",
                     (int)ty->len, ty->start);
  if (!lang_expect(p, TK_COMMA, "','") || !(n->a = lang_parse_expr_at(p)) ||
      !lang_expect(p, TK_RPAREN, "')'"))
    return NULL;
  return n;
}

/* Statements that start with a NAME. */
static lang_node *parse_named(lang_parser *p, const lang_tok *id) {
  if (is_word(id, "free")) {
    lang_node *n = lang_p_node(p, LN_FREE, id);
    const lang_tok *a = lang_peek(p, 1);
    if (!n || !lang_expect(p, TK_LPAREN, "'('") ||
        !lang_expect(p, TK_IDENT, "an array name") ||
        !(n->name = lang_p_name(p, a)) || !lang_expect(p, TK_RPAREN, "')'"))
      return NULL;
    return n;
  }
  if (is_word(id, "fail")) {
    lang_node *n = lang_p_node(p, LN_FAIL, id);
    if (!n || !lang_expect(p, TK_LPAREN, "'('")) return NULL;
    const lang_tok *s = lang_peek(p, 0);
    if (!lang_expect(p, TK_STRING, "a message string")) return NULL;
    if (!(n->name = lang_strdup(p->ast, s->str, strlen(s->str))))
      return lang_nomem(p);
    while (lang_accept(p, TK_COMMA)) {
      lang_node *a = lang_parse_expr_at(p);
      if (!a || !lang_p_push(p, n, a)) return NULL;
    }
    return lang_expect(p, TK_RPAREN, "',' or ')'") ? n : NULL;
  }
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (is_word(id, builtins[i].s) && lang_peek(p, 0)->kind == TK_LPAREN) {
      lang_node *n = lang_p_node(p, LN_BUILTIN, id);
      if (!n || !(n->name = lang_p_name(p, id))) return NULL;
      n->bi = builtins[i].bi;
      return parse_args(p, n) ? n : NULL;
    }
  lang_node *n = lang_p_node(p, LN_ASSIGN, id);
  if (!n || !(n->name = lang_p_name(p, id))) return NULL;
  if (lang_accept(p, TK_LBRACK) &&
      (!(n->a = lang_parse_expr_at(p)) || !lang_expect(p, TK_RBRACK, "']'")))
    return NULL;
  const lang_tok *op = lang_next(p);
  if (op->kind == TK_ASSIGN && !n->a && is_word(lang_peek(p, 0), "alloc") &&
      lang_peek(p, 1)->kind == TK_LPAREN)
    return parse_alloc(p, id);
  if (op->kind != TK_ASSIGN && op->kind != TK_PLUSEQ && op->kind != TK_MINUSEQ)
    return lang_fail(p, op, "expected '=', '+=' or '-=' after '%s%s', found %s",
                     n->name, n->a ? "[...]" : "", lang_tok_name(op->kind));
  n->op = op->kind == TK_PLUSEQ ? IR_ADD : op->kind == TK_MINUSEQ ? IR_SUB : -1;
  lang_skip_newlines(p);
  return (n->b = lang_parse_expr_at(p)) ? n : NULL;
}

static lang_node *parse_stmt(lang_parser *p) {
  const lang_tok *t = lang_next(p);
  lang_node *n;
  switch (t->kind) {
  case TK_IDENT: return parse_named(p, t);
  case TK_FOR:
  case TK_WHILE: return parse_loop(p, t);
  case TK_IF: return parse_if(p, t);
  case TK_BREAK:
    if (!p->loops) return lang_fail(p, t, "'break' outside a loop");
    return lang_p_node(p, LN_BREAK, t);
  case TK_RETURN:
    n = lang_p_node(p, LN_RETURN, t);
    return n && (n->a = lang_parse_expr_at(p)) ? n : NULL;
  default:
    return lang_fail(p, t, "expected a statement, found %s",
                     lang_tok_name(t->kind));
  }
}

lang_node *lang_parse_block_at(lang_parser *p, bool inside) {
  if (!lang_p_enter(p, lang_peek(p, 0))) return NULL;
  lang_node *b = lang_p_node(p, LN_BLOCK, lang_peek(p, 0));
  if (!b) return NULL;
  for (;;) {
    while (lang_accept(p, TK_NEWLINE) || lang_accept(p, TK_SEMI)) {
    }
    lang_tok_kind k = lang_peek(p, 0)->kind;
    if (k == TK_EOF || (inside && k == TK_RBRACE)) return p->nest--, b;
    lang_node *s = parse_stmt(p);
    if (!s || !lang_p_push(p, b, s)) return NULL;
    const lang_tok *t = lang_peek(p, 0);
    char buf[64];
    if (t->kind != TK_NEWLINE && t->kind != TK_SEMI && t->kind != TK_EOF &&
        !(inside && t->kind == TK_RBRACE))
      return lang_fail(p, t,
                       "expected end of line or ';' after the "
                       "statement, found %s",
                       lang_tok_text(t, buf, sizeof buf));
  }
}

spc_status lang_parse_stmts(const lang_src *src, lang_ast **out, spc_error *e) {
  lang_parser p;
  lang_ast *ast = lang_ast_new(src);
  *out = NULL;
  if (!ast) return SPC_NOMEM(e);
  spc_status st = lang_parser_open(&p, ast, 0, e);
  if (st == SPC_OK) {
    ast->root = lang_parse_block_at(&p, false);
    st = p.failed ? p.status : SPC_OK;
    lang_parser_close(&p);
  }
  if (st != SPC_OK) lang_ast_free(&ast);
  *out = ast;
  return st;
}
