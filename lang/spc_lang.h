/* spc_lang.h -- the expression and statement language shared by the
 * coordinate remapping notation (remap/), the attribute query language
 * (query/) and the level-function statement language of format specs
 * (DESIGN.md section 2; grammar and semantics in docs/languages.md).
 *
 * One lexer (lang_lex.c), one arena-allocated AST (lang_ast.c, printed
 * back by lang_print.c), one parser for expressions (lang_parse_expr.c)
 * and statements (lang_parse_stmt.c), one type checker (lang_check*.c),
 * one lowering to the IR of ir/spc_ir.h (lang_lower*.c) and an interval
 * analysis of integer expressions (lang_interval.c).
 *
 * Names are bound by the caller through a resolver (lang_env): the same
 * resolver answers the checker (kind and type), the lowering (an ir_var, a
 * constant or an ir_expr to substitute) and the interval analysis (a range).
 *
 * Errors: every function returning spc_status fills the caller's spc_error
 * with the source file, the line and column of the offending token (in the
 * enclosing file's coordinates, see lang_src) and a message.
 */
#ifndef SPC_LANG_H
#define SPC_LANG_H

#include "spc_impl.h"
#include "spc_ir.h"

/* ---- source text ---------------------------------------------------------
 * A NUL-terminated text embedded at a position of an enclosing file (a YAML
 * scalar): its first character is at (line, col); every later line of the
 * text starts at column indent + 1 (the block scalar's stripped indentation).
 * A stand-alone text: line = col = 1, indent = 0 (zeros mean the same). */
typedef struct lang_src {
  const char *text;
  const char *file; /* named in errors; may be NULL */
  int64_t line, col, indent;
} lang_src;

/* ---- tokens (lang_lex.c) ------------------------------------------------- */
typedef enum lang_tok_kind {
  TK_EOF = 0,
  TK_NEWLINE,
  TK_IDENT,
  TK_INT,
  TK_FLOAT,
  TK_STRING,
  TK_LPAREN,
  TK_RPAREN,
  TK_LBRACK,
  TK_RBRACK,
  TK_LBRACE,
  TK_RBRACE,
  TK_COMMA,
  TK_SEMI,
  TK_COLON,
  TK_QUESTION,
  TK_HASH,
  TK_ARROW,
  TK_DOTDOT,
  TK_ASSIGN,
  TK_PLUSEQ,
  TK_MINUSEQ,
  TK_PLUS,
  TK_MINUS,
  TK_STAR,
  TK_SLASH,
  TK_PERCENT,
  TK_SHL,
  TK_SHR,
  TK_AMP,
  TK_PIPE,
  TK_CARET,
  TK_TILDE,
  TK_BANG,
  TK_ANDAND,
  TK_OROR,
  TK_EQ,
  TK_NE,
  TK_LT,
  TK_LE,
  TK_GT,
  TK_GE,
  /* keywords */
  TK_LET,
  TK_IN,
  TK_AS,
  TK_FOR,
  TK_WHILE,
  TK_IF,
  TK_ELSE,
  TK_BREAK,
  TK_RETURN,
  TK_TRUE,
  TK_FALSE,
  TK_NKINDS
} lang_tok_kind;

typedef struct lang_tok {
  lang_tok_kind kind;
  int64_t line, col; /* absolute position of the first character */
  const char *start; /* into the source text */
  size_t len;
  uint64_t ival; /* TK_INT (values above INT64_MAX: is_u64) */
  bool is_u64;
  double fval; /* TK_FLOAT */
  char *str;   /* TK_STRING: unescaped text (owned by the lexer) */
} lang_tok;

enum {
  LANG_LEX_NO_NEWLINES = 1 /* newlines are white space (remap, query) */
};

/* Tokenize src.  Newlines become TK_NEWLINE tokens (one per run, none
 * inside ( ) or [ ]) unless LANG_LEX_NO_NEWLINES; comments run from `//`
 * to the end of the line.  *toks (ending with TK_EOF) is freed with
 * lang_toks_free.  SPC_ERR_SPEC with a position on a bad character, number
 * or string. */
SPC_INTERNAL spc_status lang_lex(const lang_src *src, int flags,
                                 lang_tok **toks, int *ntoks, spc_error *e);
SPC_INTERNAL void lang_toks_free(lang_tok **toks, int ntoks);
/* "identifier", "'+='", "end of input", ... for messages. */
SPC_INTERNAL const char *lang_tok_name(lang_tok_kind k);
/* "'x'" (quoted text) for names and numbers, else lang_tok_name. */
SPC_INTERNAL const char *lang_tok_text(const lang_tok *t, char *buf, size_t n);

/* ---- types ---------------------------------------------------------------
 * Type names of the languages.  index, coord and value are chosen by the
 * caller (lang_env) when a program is checked: index is the position type,
 * coord the coordinate type, value the tensor's value type. */
typedef enum lang_tname {
  LT_NONE = 0,
  LT_BOOL,
  LT_I32,
  LT_I64,
  LT_U64,
  LT_F32,
  LT_F64,
  LT_C128,
  LT_INDEX,
  LT_COORD,
  LT_VALUE
} lang_tname;
SPC_INTERNAL const char *lang_tname_str(lang_tname t);
SPC_INTERNAL lang_tname lang_tname_parse(const char *s, size_t n); /* LT_NONE */

/* The type of an expression or name.  sym remembers a symbolic origin
 * (LT_INDEX, LT_COORD, LT_VALUE or LT_NONE): any integer converts to an
 * index or coord target (the planner sizes those types to hold every
 * value).  lit marks constant expressions (literals, parameters). */
typedef struct lang_type {
  ir_ty ty;
  lang_tname sym;
  bool array;
  bool lit;
} lang_type;

SPC_INTERNAL bool lang_ty_is_int(ir_ty t); /* I32, I64, U64 */
/* "i64", "array of f64", "index (i32)" into buf. */
SPC_INTERNAL const char *lang_type_str(lang_type t, char *buf, size_t n);

/* ---- the AST (lang_ast.c) ------------------------------------------------ */
typedef enum lang_kind {
  /* expressions */
  LN_INT,
  LN_FLOAT,
  LN_BOOL,
  LN_STRING,
  LN_NAME,
  LN_INDEX,
  LN_CALL,
  LN_UNARY,
  LN_BINARY,
  LN_COND,
  LN_COUNTER,
  /* statements */
  LN_BLOCK,
  LN_ASSIGN,
  LN_ALLOC,
  LN_FREE,
  LN_FOR,
  LN_WHILE,
  LN_IF,
  LN_BREAK,
  LN_RETURN,
  LN_BUILTIN,
  LN_FAIL
} lang_kind;

/* Functions callable in expressions (LN_CALL). */
typedef enum lang_fn { LF_MIN, LF_MAX, LF_ABS, LF_LEN, LF_CAST } lang_fn;

/* Node fields by kind (a, b, c: operands; kids: lists):
 *   INT ival (uval when is_u64)  FLOAT fval  BOOL bval  STRING name (text)
 *   NAME name            INDEX name[a]         CALL fn(kids), cast: tname
 *   UNARY op a           BINARY a op b         COND a ? b : c
 *   COUNTER #(kids: NAME nodes); ival: counter number (set by the caller)
 *   BLOCK kids           ASSIGN name[a] op= b  (a NULL: scalar; op IR_ADD,
 *                                               IR_SUB, or -1 for `=`)
 *   ALLOC name = alloc(tname, a)   FREE free(name)
 *   FOR for name in a .. b c       WHILE while a c
 *   IF if a b else c (c: BLOCK, IF or NULL)   BREAK   RETURN return a
 *   BUILTIN bi(kids)     FAIL fail(name, kids)
 * Checked nodes carry their type; `local` is the local a statement or name
 * refers to (-1: a name of the environment). */
typedef struct lang_node lang_node;
struct lang_node {
  lang_kind kind;
  int64_t line, col;
  int op; /* ir_op, or -1 */
  lang_fn fn;
  lang_tname tname;
  ir_builtin bi;
  const char *name;
  uint64_t uval;
  int64_t ival;
  bool is_u64, bval;
  double fval;
  lang_node *a, *b, *c;
  lang_node **kids;
  int nkids;
  lang_type type; /* set by the checker */
  int local;      /* set by the checker */
};

/* A local declared by a checked statement list. */
typedef struct lang_local {
  const char *name;
  lang_type type; /* array flag set for arrays */
  bool loopvar;   /* declared by a `for` */
  bool busy;      /* checker: an enclosing loop runs it */
} lang_local;

/* The arena owning nodes, names and the locals of the last check. */
typedef struct lang_ast {
  lang_src src;    /* text is borrowed; file copied into the arena */
  lang_node *root; /* what lang_parse_* parsed */
  lang_local *locals;
  int nlocals, caplocals;
  void *arena; /* chunk list (lang_ast.c) */
} lang_ast;

SPC_INTERNAL lang_ast *lang_ast_new(const lang_src *src); /* NULL: no memory */
SPC_INTERNAL void lang_ast_free(lang_ast **a);
/* Zeroed arena memory / a copy of s[0..n) ; NULL when out of memory. */
SPC_INTERNAL void *lang_alloc(lang_ast *a, size_t n);
SPC_INTERNAL char *lang_strdup(lang_ast *a, const char *s, size_t n);
SPC_INTERNAL lang_node *lang_node_new(lang_ast *a, lang_kind k, int64_t line,
                                      int64_t col);
/* SPC_ERR_SPEC at n's position in ast's file, message from fmt. */
SPC_INTERNAL spc_status lang_node_error(const lang_ast *a, const lang_node *n,
                                        spc_error *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Append kid to n->kids; false when out of memory. */
SPC_INTERNAL bool lang_node_push(lang_ast *a, lang_node *n, lang_node *kid);

/* Print an expression (fully parenthesised binary and conditional
 * operators) or a statement list (one statement a line, two-space indent)
 * in the languages' own syntax; parsing the output gives the same tree. */
SPC_INTERNAL void lang_print(const lang_node *n, spc_str *out);

/* ---- the parser (lang_parse_*.c) ----------------------------------------- */
/* How deep an expression or statement list may nest: operators over
 * operators (a chain `a & b & c ...` is as deep as it is long),
 * parentheses, blocks.  Far beyond any format's functions; it keeps the
 * parser's recursion and the IR made from the tree (IR_MAX_DEPTH, which
 * lowering may reach at about twice this) bounded. */
#define LANG_MAX_NEST 100
typedef struct lang_parser {
  lang_ast *ast;
  lang_tok *toks;
  int ntoks, pos;
  int loops; /* nesting of loops while parsing statements */
  int nest;  /* open expressions, unary operators and blocks (LANG_MAX_NEST) */
  spc_error *err;
  bool failed;       /* an error was recorded (the first one wins) */
  spc_status status; /* its code */
} lang_parser;

/* Lex src (flags as lang_lex) into a parser writing nodes into ast. */
SPC_INTERNAL spc_status lang_parser_open(lang_parser *p, lang_ast *ast,
                                         int flags, spc_error *e);
SPC_INTERNAL void lang_parser_close(lang_parser *p);
/* one level deeper (false, with the error recorded at `at`, past
 * LANG_MAX_NEST); the caller takes p->nest back down when it returns */
SPC_INTERNAL bool lang_p_enter(lang_parser *p, const lang_tok *at);
SPC_INTERNAL const lang_tok *lang_peek(const lang_parser *p, int ahead);
SPC_INTERNAL const lang_tok *lang_next(lang_parser *p);
SPC_INTERNAL bool lang_accept(lang_parser *p, lang_tok_kind k);
/* Consume a token of kind k or fail with "expected WHAT, found TOKEN". */
SPC_INTERNAL bool lang_expect(lang_parser *p, lang_tok_kind k,
                              const char *what);
/* Record an error at t (the first error wins); returns NULL. */
SPC_INTERNAL void *lang_fail(lang_parser *p, const lang_tok *t, const char *fmt,
                             ...) __attribute__((format(printf, 3, 4)));
/* Record an out-of-memory failure; returns NULL. */
SPC_INTERNAL void *lang_nomem(lang_parser *p);
SPC_INTERNAL void lang_skip_newlines(lang_parser *p);
/* A node at t's position / append kid / t's text in the arena; on
 * allocation failure they record SPC_ERR_NOMEM and return NULL / false. */
SPC_INTERNAL lang_node *lang_p_node(lang_parser *p, lang_kind k,
                                    const lang_tok *t);
SPC_INTERNAL bool lang_p_push(lang_parser *p, lang_node *n, lang_node *kid);
SPC_INTERNAL const char *lang_p_name(lang_parser *p, const lang_tok *t);
/* One expression (C precedence, `?:` lowest); NULL on error. */
SPC_INTERNAL lang_node *lang_parse_expr_at(lang_parser *p);
/* Statements until `}` (inside) or the end (top); NULL on error. */
SPC_INTERNAL lang_node *lang_parse_block_at(lang_parser *p, bool inside);

/* Whole-text entry points: *out owns the tree (root: the expression or the
 * BLOCK); SPC_ERR_SPEC with a position on a syntax error. */
SPC_INTERNAL spc_status lang_parse_expr(const lang_src *src, lang_ast **out,
                                        spc_error *e);
SPC_INTERNAL spc_status lang_parse_stmts(const lang_src *src, lang_ast **out,
                                         spc_error *e);

/* ---- names: the environment ---------------------------------------------- */
typedef enum lang_sym_kind {
  LANG_SYM_NONE = 0, /* unknown */
  LANG_SYM_SCALAR,   /* a scalar variable of type `type` */
  LANG_SYM_ARRAY,    /* an array of elements of type `type` */
  LANG_SYM_CONST,    /* a compile-time integer (a format parameter) */
  LANG_SYM_INDEX     /* an index variable (a coordinate; counters range
                        over these) */
} lang_sym_kind;

typedef struct lang_sym {
  lang_sym_kind kind;
  lang_type type; /* scalar or element type (array flag ignored) */
  int64_t value;  /* CONST */
  bool readonly;  /* no assignment (IN parameters, index variables) */
  ir_var var;     /* lowering: the variable, or -1 */
  ir_expr *expr;  /* lowering: an expression substituted for the name */
  bool has_range; /* interval analysis: values lie in [lo, hi] */
  int64_t lo, hi;
  uint64_t bits; /* ... with only these bits set (0: any) */
} lang_sym;

/* Fill *s for name (s is zeroed with var = -1 before the call); return
 * false for an unknown name. */
typedef bool (*lang_resolve_fn)(void *ctx, const char *name, lang_sym *s);

typedef struct lang_ival {
  int64_t lo, hi;
  bool bounded;  /* false: no finite int64 bound is known */
  uint64_t bits; /* lo >= 0: the bits that may be set (0: those of hi) */
} lang_ival;

typedef struct lang_env {
  lang_resolve_fn resolve;
  void *ctx;
  ir_ty index_ty, coord_ty, value_ty; /* 0 (IR_BOOL) means I64/I64/F64 */
  bool allow_counters;                /* `#i` legal (remappings) */
  int ncounters;                 /* counters numbered by the caller (ival) */
  const ir_var *counter_vars;    /* lowering: the value of counter k */
  const lang_ival *counter_ival; /* intervals: the range of counter k */
  bool returns;                  /* statements: `return e` allowed ... */
  lang_type ret_type;            /* ... converting e to this type */
} lang_env;

/* ---- checking (lang_check.c, lang_check_stmt.c) ---------------------------
 * Type every node of an expression / statement list.  Statements declare
 * locals (recorded in ast->locals, function-scoped): assigning to an
 * unknown name declares it with the assigned expression's type; a loop
 * variable is a local of its bounds' type.  SPC_ERR_SPEC naming the line
 * and column of the offending node. */
SPC_INTERNAL spc_status lang_check_expr(lang_ast *ast, lang_node *e,
                                        const lang_env *env, spc_error *err);
SPC_INTERNAL spc_status lang_check_stmts(lang_ast *ast, lang_node *block,
                                         const lang_env *env, spc_error *err);
/* Look name up: the locals of ast first (*local = its number), then env
 * (*local = -1).  false when unknown. */
SPC_INTERNAL bool lang_lookup(const lang_ast *ast, const lang_env *env,
                              const char *name, lang_sym *s, int *local);
/* Resolved types of the caller's type names under env. */
SPC_INTERNAL lang_type lang_type_of(const lang_env *env, lang_tname t);
/* May a value of type src be assigned to a target of type dst? */
SPC_INTERNAL bool lang_assignable(lang_type dst, lang_type src);

/* ---- lowering to the IR (lang_lower.c, lang_lower_stmt.c) -----------------
 * Checked trees only.  Names resolve through env to an ir_var, a constant
 * or an expression to substitute; counters to env->counter_vars.  The
 * expression result has the node's type.  NULL / an error status when a
 * name has no IR binding or the IR builder ran out of memory. */
SPC_INTERNAL ir_expr *lang_lower_expr(ir_func *f, const lang_node *e,
                                      const lang_env *env, spc_error *err);
/* lang_lower_expr with the locals of a statement list bound to vars. */
SPC_INTERNAL ir_expr *lang_lower_expr_in(ir_func *f, const lang_node *e,
                                         const lang_env *env,
                                         const ir_var *locals, int nlocals,
                                         spc_error *err);
/* Append the statements of block to dst.  Locals of ast become ir_locals
 * (named after them, made unique within f).  `return e` assigns e to ret
 * (an integer/any scalar var of f; -1: the program may not return). */
SPC_INTERNAL spc_status lang_lower_stmts(ir_func *f, ir_stmt *dst,
                                         const lang_ast *ast,
                                         const lang_node *block,
                                         const lang_env *env, ir_var ret,
                                         spc_error *err);
/* A fresh local of f named after base (base, base_1, base_2, ...). */
SPC_INTERNAL ir_var lang_fresh_local(ir_func *f, const char *base, ir_ty ty,
                                     bool array);

/* ---- interval analysis (lang_interval.c) ----------------------------------
 * A conservative range of a checked integer expression given the ranges
 * the resolver reports (names without one: the range of their type; i64
 * and u64 names without one: unbounded).  Any bound that would overflow
 * int64 makes the result unbounded. */
SPC_INTERNAL lang_ival lang_interval(const lang_node *e, const lang_env *env);
SPC_INTERNAL lang_ival lang_ival_make(int64_t lo, int64_t hi);
SPC_INTERNAL lang_ival lang_ival_unbounded(void);

#endif
