/* lang_lex.c -- the one lexer of the three languages.
 *
 * Tokens: identifiers [A-Za-z_][A-Za-z0-9_]*, keywords (let in as for while
 * if else break return true false), decimal and 0x hexadecimal integers,
 * floats (digits with a `.` followed by a digit, or an exponent), strings
 * "..." with \n \t \" \\ escapes, and the operators of spc_lang.h.
 * Comments are `//` to the end of the line: `#` is always the counter
 * operator, so a YAML `#` inside a block scalar is never a comment here.
 * Positions are mapped into the enclosing file (lang_src). */
#include "spc_lang.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
  const lang_src *src;
  const char *s;   /* current character */
  const char *bol; /* beginning of the current line */
  int64_t line;    /* 0-based line within the text */
  int depth;       /* open ( and [ */
  lang_tok *toks;
  int n, cap;
  spc_error *err;
} lexer;

static int64_t abs_line(const lexer *L) {
  return (L->src->line > 0 ? L->src->line : 1) + L->line;
}

static int64_t abs_col(const lexer *L, const char *at) {
  int64_t c = (int64_t)(at - L->bol) + 1;
  if (L->line == 0) return (L->src->col > 0 ? L->src->col : 1) + c - 1;
  return L->src->indent + c;
}

static spc_status lex_error(lexer *L, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static spc_status lex_error(lexer *L, const char *at, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return spc_err(L->err, SPC_ERR_SPEC, L->src->file, abs_line(L),
                 abs_col(L, at), "%s", msg);
}

static lang_tok *push(lexer *L, lang_tok_kind k, const char *start,
                      size_t len) {
  if (L->n == L->cap) {
    int cap = L->cap ? 2 * L->cap : 64;
    lang_tok *t = spc_realloc(L->toks, (size_t)cap * sizeof *t);
    if (!t) return NULL;
    L->toks = t;
    L->cap = cap;
  }
  lang_tok *t = &L->toks[L->n++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->line = abs_line(L);
  t->col = abs_col(L, start);
  t->start = start;
  t->len = len;
  return t;
}

static const struct {
  const char *s;
  lang_tok_kind k;
} keywords[] = {{"let", TK_LET},   {"in", TK_IN},       {"as", TK_AS},
                {"for", TK_FOR},   {"while", TK_WHILE}, {"if", TK_IF},
                {"else", TK_ELSE}, {"break", TK_BREAK}, {"return", TK_RETURN},
                {"true", TK_TRUE}, {"false", TK_FALSE}};

/* Operators, longest first. */
static const struct {
  const char *s;
  lang_tok_kind k;
} ops[] = {{"->", TK_ARROW},   {"..", TK_DOTDOT}, {"+=", TK_PLUSEQ},
           {"-=", TK_MINUSEQ}, {"<<", TK_SHL},    {">>", TK_SHR},
           {"&&", TK_ANDAND},  {"||", TK_OROR},   {"==", TK_EQ},
           {"!=", TK_NE},      {"<=", TK_LE},     {">=", TK_GE},
           {"(", TK_LPAREN},   {")", TK_RPAREN},  {"[", TK_LBRACK},
           {"]", TK_RBRACK},   {"{", TK_LBRACE},  {"}", TK_RBRACE},
           {",", TK_COMMA},    {";", TK_SEMI},    {":", TK_COLON},
           {"?", TK_QUESTION}, {"#", TK_HASH},    {"=", TK_ASSIGN},
           {"+", TK_PLUS},     {"-", TK_MINUS},   {"*", TK_STAR},
           {"/", TK_SLASH},    {"%", TK_PERCENT}, {"&", TK_AMP},
           {"|", TK_PIPE},     {"^", TK_CARET},   {"~", TK_TILDE},
           {"!", TK_BANG},     {"<", TK_LT},      {">", TK_GT}};

static bool is_ident0(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident(char c) { return is_ident0(c) || is_digit(c); }
static int hexval(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A number at L->s: integer (decimal / hex) or float. */
static spc_status lex_number(lexer *L) {
  const char *p = L->s, *q = p;
  char tmp[64];
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    uint64_t v = 0;
    bool over = false;
    q = p + 2;
    if (hexval(*q) < 0) return lex_error(L, p, "malformed number '%s'", "0x");
    for (; hexval(*q) >= 0; q++) {
      if (v >> 60) over = true;
      v = v * 16 + (uint64_t)hexval(*q);
    }
    size_t n = (size_t)(q - p);
    snprintf(tmp, sizeof tmp, "%.*s", (int)(n < 40 ? n : 40), p);
    if (over) return lex_error(L, p, "integer literal %s is too large", tmp);
    if (is_ident(*q)) return lex_error(L, p, "malformed number '%s'", tmp);
    lang_tok *t = push(L, TK_INT, p, n);
    if (!t) return SPC_NOMEM(L->err);
    t->ival = v;
    t->is_u64 = v > (uint64_t)INT64_MAX;
    L->s = q;
    return SPC_OK;
  }
  while (is_digit(*q)) q++;
  bool isf = false;
  if (q[0] == '.' && is_digit(q[1])) {
    isf = true;
    for (q++; is_digit(*q);) q++;
  }
  if (*q == 'e' || *q == 'E') {
    const char *r = q + 1;
    if (*r == '+' || *r == '-') r++;
    if (!is_digit(*r)) {
      snprintf(tmp, sizeof tmp, "%.*s", (int)(r - p < 40 ? r - p : 40), p);
      return lex_error(L, p, "malformed number '%s'", tmp);
    }
    while (is_digit(*r)) r++;
    q = r;
    isf = true;
  }
  size_t n = (size_t)(q - p);
  snprintf(tmp, sizeof tmp, "%.*s", (int)(n < 40 ? n : 40), p);
  if (is_ident(*q)) {
    snprintf(tmp, sizeof tmp, "%.*s", (int)(n + 1 < 40 ? n + 1 : 40), p);
    return lex_error(L, p, "malformed number '%s'", tmp);
  }
  lang_tok *t = push(L, isf ? TK_FLOAT : TK_INT, p, n);
  if (!t) return SPC_NOMEM(L->err);
  if (isf) {
    t->fval = strtod(tmp, NULL);
  } else {
    uint64_t v = 0;
    for (const char *r = p; r < q; r++) {
      if (v > (UINT64_MAX - 9) / 10)
        return lex_error(L, p, "integer literal %s is too large", tmp);
      v = v * 10 + (uint64_t)(*r - '0');
    }
    if (v > (uint64_t)INT64_MAX)
      return lex_error(L, p, "integer literal %s is too large", tmp);
    t->ival = v;
  }
  L->s = q;
  return SPC_OK;
}

static spc_status lex_string(lexer *L) {
  const char *p = L->s, *q = p + 1;
  size_t n = 0;
  for (; *q && *q != '"' && *q != '\n'; q++, n++)
    if (*q == '\\' && q[1] && q[1] != '\n') q++;
  if (*q != '"') return lex_error(L, p, "unterminated string");
  lang_tok *t = push(L, TK_STRING, p, (size_t)(q + 1 - p));
  if (!t) return SPC_NOMEM(L->err);
  char *s = spc_malloc(n + 1);
  if (!s) return SPC_NOMEM(L->err);
  t->str = s;
  for (const char *r = p + 1; r < q; r++) {
    if (*r != '\\') {
      *s++ = *r;
      continue;
    }
    r++;
    switch (*r) {
    case 'n': *s++ = '\n'; break;
    case 't': *s++ = '\t'; break;
    case '"': *s++ = '"'; break;
    case '\\': *s++ = '\\'; break;
    default: {
      char c[3] = {'\\', *r, 0}; /* t->str is freed with the tokens */
      return lex_error(L, r - 1, "unknown escape '%s' in string", c);
    }
    }
  }
  *s = 0;
  L->s = q + 1;
  return SPC_OK;
}

static spc_status lex_all(lexer *L, int flags) {
  while (*L->s) {
    char c = *L->s;
    if (c == '\n') {
      bool nl = !(flags & LANG_LEX_NO_NEWLINES) && L->depth == 0 && L->n > 0 &&
                L->toks[L->n - 1].kind != TK_NEWLINE;
      if (nl && !push(L, TK_NEWLINE, L->s, 1)) return SPC_NOMEM(L->err);
      L->s++;
      L->line++;
      L->bol = L->s;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      L->s++;
      continue;
    }
    if (c == '/' && L->s[1] == '/') {
      while (*L->s && *L->s != '\n') L->s++;
      continue;
    }
    spc_status st;
    if (is_digit(c) || (c == '.' && is_digit(L->s[1]))) {
      if ((st = lex_number(L)) != SPC_OK) return st;
      continue;
    }
    if (c == '"') {
      if ((st = lex_string(L)) != SPC_OK) return st;
      continue;
    }
    if (is_ident0(c)) {
      const char *q = L->s;
      while (is_ident(*q)) q++;
      size_t n = (size_t)(q - L->s);
      lang_tok_kind k = TK_IDENT;
      for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].s) == n && !memcmp(keywords[i].s, L->s, n))
          k = keywords[i].k;
      if (!push(L, k, L->s, n)) return SPC_NOMEM(L->err);
      L->s = q;
      continue;
    }
    size_t i = 0, nops = sizeof ops / sizeof ops[0];
    while (i < nops && strncmp(L->s, ops[i].s, strlen(ops[i].s))) i++;
    if (i == nops) {
      char ch[8];
      if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
        snprintf(ch, sizeof ch, "'%c'", c);
      else
        snprintf(ch, sizeof ch, "0x%02x", (unsigned char)c);
      return lex_error(L, L->s, "unexpected character %s", ch);
    }
    lang_tok_kind k = ops[i].k;
    if (k == TK_LPAREN || k == TK_LBRACK) L->depth++;
    if ((k == TK_RPAREN || k == TK_RBRACK) && L->depth > 0) L->depth--;
    size_t n = strlen(ops[i].s);
    if (!push(L, k, L->s, n)) return SPC_NOMEM(L->err);
    L->s += n;
  }
  lang_tok *t = push(L, TK_EOF, L->s, 0);
  return t ? SPC_OK : SPC_NOMEM(L->err);
}

spc_status lang_lex(const lang_src *src, int flags, lang_tok **toks, int *ntoks,
                    spc_error *e) {
  lexer L = {.src = src, .s = src->text ? src->text : "", .err = e};
  L.bol = L.s;
  *toks = NULL;
  *ntoks = 0;
  spc_status st = lex_all(&L, flags);
  if (st != SPC_OK) {
    lang_toks_free(&L.toks, L.n);
    return st;
  }
  *toks = L.toks;
  *ntoks = L.n;
  return SPC_OK;
}

void lang_toks_free(lang_tok **toks, int ntoks) {
  if (!toks || !*toks) return;
  for (int i = 0; i < ntoks; i++) spc_free((*toks)[i].str);
  spc_free(*toks);
  *toks = NULL;
}

static const char *const tok_names[TK_NKINDS] = {
    [TK_EOF] = "end of input", [TK_NEWLINE] = "end of line",
    [TK_IDENT] = "identifier", [TK_INT] = "integer",
    [TK_FLOAT] = "number",     [TK_STRING] = "string",
    [TK_LPAREN] = "'('",       [TK_RPAREN] = "')'",
    [TK_LBRACK] = "'['",       [TK_RBRACK] = "']'",
    [TK_LBRACE] = "'{'",       [TK_RBRACE] = "'}'",
    [TK_COMMA] = "','",        [TK_SEMI] = "';'",
    [TK_COLON] = "':'",        [TK_QUESTION] = "'?'",
    [TK_HASH] = "'#'",         [TK_ARROW] = "'->'",
    [TK_DOTDOT] = "'..'",      [TK_ASSIGN] = "'='",
    [TK_PLUSEQ] = "'+='",      [TK_MINUSEQ] = "'-='",
    [TK_PLUS] = "'+'",         [TK_MINUS] = "'-'",
    [TK_STAR] = "'*'",         [TK_SLASH] = "'/'",
    [TK_PERCENT] = "'%'",      [TK_SHL] = "'<<'",
    [TK_SHR] = "'>>'",         [TK_AMP] = "'&'",
    [TK_PIPE] = "'|'",         [TK_CARET] = "'^'",
    [TK_TILDE] = "'~'",        [TK_BANG] = "'!'",
    [TK_ANDAND] = "'&&'",      [TK_OROR] = "'||'",
    [TK_EQ] = "'=='",          [TK_NE] = "'!='",
    [TK_LT] = "'<'",           [TK_LE] = "'<='",
    [TK_GT] = "'>'",           [TK_GE] = "'>='",
    [TK_LET] = "'let'",        [TK_IN] = "'in'",
    [TK_AS] = "'as'",          [TK_FOR] = "'for'",
    [TK_WHILE] = "'while'",    [TK_IF] = "'if'",
    [TK_ELSE] = "'else'",      [TK_BREAK] = "'break'",
    [TK_RETURN] = "'return'",  [TK_TRUE] = "'true'",
    [TK_FALSE] = "'false'"};

const char *lang_tok_name(lang_tok_kind k) {
  return k >= 0 && k < TK_NKINDS && tok_names[k] ? tok_names[k] : "token";
}
