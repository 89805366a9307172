/* test_lang.c -- suite_lang: the shared expression/statement language
 * (lexer positions, parser and printer, type checker, lowering run through
 * ir_run, interval analysis) and the coordinate remapping notation (DIA,
 * ELL, BCSR, Morton, CSF permutation; bounds, lowering, counters; every
 * error with its message, line and column). */
#include "spc_remap.h"
#include "suites.h"
#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------
 */

/* A name of a test environment. */
typedef struct tsym {
  const char *name;
  lang_sym_kind kind;
  lang_tname t;
  int64_t value, lo, hi;
  bool ranged, readonly;
  ir_var var;
} tsym;

typedef struct tenv {
  tsym *syms;
  int n;
  ir_ty index_ty; /* what `index` names (0: i64) */
} tenv;

static bool tresolve(void *ctx, const char *name, lang_sym *s) {
  const tenv *e = ctx;
  for (int i = 0; i < e->n; i++) {
    const tsym *x = &e->syms[i];
    if (strcmp(x->name, name)) continue;
    s->kind = x->kind;
    lang_env types = {.index_ty = e->index_ty};
    s->type = lang_type_of(&types, x->t);
    s->value = x->value;
    s->readonly = x->readonly;
    s->var = x->var;
    s->has_range = x->ranged;
    s->lo = x->lo;
    s->hi = x->hi;
    return true;
  }
  return false;
}

static lang_src src_of(const char *text) {
  return (lang_src){.text = text, .file = "test.yaml", .line = 1, .col = 1};
}

/* Parse text as an expression or statements; print it back. */
static char *printed(const char *text, bool stmts) {
  lang_ast *a = NULL;
  spc_error e;
  lang_src s = src_of(text);
  spc_status st =
      stmts ? lang_parse_stmts(&s, &a, &e) : lang_parse_expr(&s, &a, &e);
  tu_assert_ok(st, &e);
  spc_str o = {0};
  lang_print(a->root, &o);
  lang_ast_free(&a);
  ck_assert(!o.failed);
  return o.s ? o.s : strdup("");
}

static void expect_print(const char *text, const char *want, bool stmts) {
  char *p = printed(text, stmts);
  ck_assert_msg(!strcmp(p, want), "%s: printed\n%s\nwant\n%s", text, p, want);
  char *q = printed(p, stmts); /* printing is a fixed point */
  ck_assert_msg(!strcmp(p, q), "reprint of %s: %s", p, q);
  free(p);
  free(q);
}

static void expect_error(spc_status st, const spc_error *e, spc_status code,
                         int64_t line, int64_t col, const char *msg,
                         const char *what) {
  ck_assert_msg(st == code, "%s: status %d (%s), want %d", what, st, e->msg,
                code);
  ck_assert_msg(strstr(e->msg, msg), "%s: message '%s' lacks '%s'", what,
                e->msg, msg);
  ck_assert_msg(e->line == line && e->col == col,
                "%s: at %lld:%lld, want %lld:%lld (%s)", what,
                (long long)e->line, (long long)e->col, (long long)line,
                (long long)col, e->msg);
}

/* ---- lexer and parser -----------------------------------------------------
 */

START_TEST(test_lex_positions) {
  lang_tok *t = NULL;
  int n = 0;
  spc_error e;
  lang_src s = {.text = "a + 0x1f\n  b[2] // c\n\n#(i, k)",
                .line = 10,
                .col = 7,
                .indent = 4};
  tu_assert_ok(lang_lex(&s, 0, &t, &n, &e), &e);
  /* a + 31 NL b [ 2 ] NL # ( i , k ) EOF */
  ck_assert_int_eq(n, 16);
  ck_assert_int_eq(t[0].kind, TK_IDENT);
  ck_assert_int_eq(t[0].line, 10);
  ck_assert_int_eq(t[0].col, 7);
  ck_assert_int_eq(t[2].kind, TK_INT);
  ck_assert_int_eq((int)t[2].ival, 31);
  ck_assert_int_eq(t[2].col, 11);
  ck_assert_int_eq(t[3].kind, TK_NEWLINE);
  ck_assert_int_eq(t[4].line, 11);
  ck_assert_int_eq(t[4].col, 4 + 3);
  ck_assert_int_eq(t[8].kind, TK_NEWLINE);
  ck_assert_int_eq(t[9].kind, TK_HASH);
  ck_assert_int_eq(t[9].line, 13);
  ck_assert_int_eq(t[9].col, 5);
  ck_assert_int_eq(t[15].kind, TK_EOF);
  lang_toks_free(&t, n);
  /* no newline tokens inside parentheses, nor with the flag */
  s = src_of("f(a,\n b)\nc");
  tu_assert_ok(lang_lex(&s, 0, &t, &n, &e), &e);
  ck_assert_int_eq(n, 9);
  ck_assert_int_eq(t[6].kind, TK_NEWLINE);
  lang_toks_free(&t, n);
  tu_assert_ok(lang_lex(&s, LANG_LEX_NO_NEWLINES, &t, &n, &e), &e);
  ck_assert_int_eq(n, 8);
  lang_toks_free(&t, n);
  s = src_of("1.5 2e3 .25 7 0xFFFFFFFFFFFFFFFF \"a\\tb\\\"\"");
  tu_assert_ok(lang_lex(&s, 0, &t, &n, &e), &e);
  ck_assert(t[0].kind == TK_FLOAT && t[0].fval == 1.5);
  ck_assert(t[1].kind == TK_FLOAT && t[1].fval == 2000.0);
  ck_assert(t[2].kind == TK_FLOAT && t[2].fval == 0.25);
  ck_assert(t[3].kind == TK_INT && t[3].ival == 7);
  ck_assert(t[4].kind == TK_INT && t[4].is_u64 && t[4].ival == UINT64_MAX);
  ck_assert(t[5].kind == TK_STRING && !strcmp(t[5].str, "a\tb\""));
  lang_toks_free(&t, n);
}
END_TEST

START_TEST(test_parse_print_expr) {
  static const char *const cases[][2] = {
      {"a + b * c", "(a + (b * c))"},
      {"a / b % c - d", "(((a / b) % c) - d)"},
      {"a ? b : c ? d : e", "(a ? b : (c ? d : e))"},
      {"a || b && c | d ^ e & f == g < h << i + j * k",
       "(a || (b && (c | (d ^ (e & (f == (g < (h << (i + (j * k))))))))))"},
      {"a != b <= c >> d - e / f", "(a != (b <= (c >> (d - (e / f)))))"},
      {"a >= b > c", "((a >= b) > c)"},
      {"-x[i + 1] + !p + ~q", "((-x[(i + 1)] + !p) + ~q)"},
      {"--a", "--a"},
      {"min(a, b, c) + max(1, 2) + abs(-3)",
       "((min(a, b, c) + max(1, 2)) + abs(-3))"},
      {"i32(x) + i64(y) * u64(z) - f32(w) / f64(v)",
       "((i32(x) + (i64(y) * u64(z))) - (f32(w) / f64(v)))"},
      {"len(a) - 1", "(len(a) - 1)"},
      {"0x1F + 1.5e3 + .5 + 2.0", "(((31 + 1500.0) + 0.5) + 2.0)"},
      {"true && !false", "(true && !false)"},
      {"#i + #(i, k)", "(#i + #(i, k))"},
      {"((a))", "a"},
      {"a +\n b", "(a + b)"},
      {"0xFFFFFFFFFFFFFFFF + 1", "(0xFFFFFFFFFFFFFFFF + 1)"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_print(cases[i][0], cases[i][1], false);
}
END_TEST

static const char *const every_stmt =
    "x = 1; y += 2\n"
    "z -= x\n"
    "a = alloc(index, n + 1)\n"
    "a[0] = 5; a[x] += 1; a[1] -= y\n"
    "for k in 0 .. n {\n"
    "  if k == 2 { break } else if k > 3 { a[k] = k } else { x = k }\n"
    "}\n"
    "while x < 10 { x += 1 }\n"
    "fill(a, 0, n, 3)\n"
    "prefix_sum(a, 0, n)\n"
    "shift(a, 0, n, 0)\n"
    "copy(b, 0, a, 1, 2)\n"
    "sort_perm(p, n, a, b)\n"
    "if x > 99 {\n  fail(\"bad \\\"%d\\\" %%\\n\", x)\n}\n"
    "free(a) // the end\n"
    "return x * 2\n";

START_TEST(test_parse_print_stmts) {
  expect_print(every_stmt,
               "x = 1\ny += 2\nz -= x\na = alloc(index, (n + 1))\na[0] = 5\n"
               "a[x] += 1\na[1] -= y\nfor k in 0 .. n {\n  if (k == 2) {\n"
               "    break\n  } else if (k > 3) {\n    a[k] = k\n  } else {\n"
               "    x = k\n  }\n}\nwhile (x < 10) {\n  x += 1\n}\n"
               "fill(a, 0, n, 3)\nprefix_sum(a, 0, n)\nshift(a, 0, n, 0)\n"
               "copy(b, 0, a, 1, 2)\nsort_perm(p, n, a, b)\nif (x > 99) {\n"
               "  fail(\"bad \\\"%d\\\" %%\\n\", x)\n}\nfree(a)\n"
               "return (x * 2)\n",
               true);
  expect_print("if a {\n}\nelse {\n  b = 1\n}",
               "if a {\n} else {\n  b = 1\n}\n", true);
  expect_print("", "", true);
}
END_TEST

typedef struct err_case {
  const char *text;
  int64_t line, col;
  const char *msg;
} err_case;

START_TEST(test_syntax_errors) {
  static const err_case exprs[] = {
      {"a + ", 1, 5, "expected an expression, found end of input"},
      {"a $ b", 1, 3, "unexpected character '$'"},
      {"(a + b", 1, 7, "expected ')', found end of input"},
      {"foo(1)", 1, 1, "unknown function 'foo'"},
      {"x[1][2]", 1, 5, "only a named array can be indexed"},
      {"12abc", 1, 1, "malformed number '12a'"},
      {"1e+", 1, 1, "malformed number '1e+'"},
      {"99999999999999999999", 1, 1,
       "integer literal 99999999999999999999 is too large"},
      {"0x1FFFFFFFFFFFFFFFF", 1, 1, "is too large"},
      {"a b", 1, 3, "unexpected 'b' after the expression"},
      {"# 3", 1, 3, "expected an index name after '#'"},
      {"#(i k)", 1, 5, "expected ',' or ')'"},
      {"a ? b", 1, 6, "expected ':' of '?:'"},
      {"\"s", 1, 1, "unterminated string"},
      {"min(a,", 1, 7, "expected an expression"}};
  for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
    lang_ast *a = NULL;
    spc_error e;
    lang_src s = src_of(exprs[i].text);
    spc_status st = lang_parse_expr(&s, &a, &e);
    ck_assert_ptr_null(a);
    expect_error(st, &e, SPC_ERR_SPEC, exprs[i].line, exprs[i].col,
                 exprs[i].msg, exprs[i].text);
    ck_assert_str_eq(e.file, "test.yaml");
  }
  static const err_case stmts[] = {
      {"x = 1 y = 2", 1, 7,
       "expected end of line or ';' after the statement, found 'y'"},
      {"break", 1, 1, "'break' outside a loop"},
      {"while x { }\nbreak", 2, 1, "'break' outside a loop"},
      {"for i in 0 10 {}", 1, 12, "expected '..' between the loop bounds"},
      {"for 3 in 0 .. 1 {}", 1, 5, "expected a loop variable"},
      {"a = alloc(foo, 3)", 1, 11, "unknown type 'foo'"},
      {"fail(\"x", 1, 6, "unterminated string"},
      {"fail(\"\\q\")", 1, 7, "unknown escape '\\q' in string"},
      {"fail(x)", 1, 6, "expected a message string"},
      {"if x { y = 1", 1, 13, "expected '}'"},
      {"x + 1", 1, 3, "expected '=', '+=' or '-=' after 'x'"},
      {"a[1] * 2", 1, 6, "expected '=', '+=' or '-=' after 'a[...]'"},
      {"}", 1, 1, "expected a statement, found '}'"},
      {"free a", 1, 6, "expected '('"},
      {"x = 1\n\ny = 2 +\n  3 @", 4, 5, "unexpected character '@'"}};
  for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
    lang_ast *a = NULL;
    spc_error e;
    lang_src s = src_of(stmts[i].text);
    spc_status st = lang_parse_stmts(&s, &a, &e);
    ck_assert_ptr_null(a);
    expect_error(st, &e, SPC_ERR_SPEC, stmts[i].line, stmts[i].col,
                 stmts[i].msg, stmts[i].text);
  }
  /* a block scalar in a YAML file: text starts at 12:9, later lines at
   * column indent + 1 = 7 */
  lang_ast *a = NULL;
  spc_error e;
  lang_src s = {.text = "x = 1\ny = (2 +\n  $)",
                .file = "fmt.yaml",
                .line = 12,
                .col = 9,
                .indent = 6};
  expect_error(lang_parse_stmts(&s, &a, &e), &e, SPC_ERR_SPEC, 14, 9,
               "unexpected character '$'", "yaml offset");
  ck_assert_str_eq(e.file, "fmt.yaml");
  s.text = "x = $";
  expect_error(lang_parse_stmts(&s, &a, &e), &e, SPC_ERR_SPEC, 12, 13,
               "unexpected character '$'", "yaml first line");
  /* nesting: LANG_MAX_NEST (100) deep is taken, one more is refused with
   * a message, whether by a chain of operators (found by fuzz_notation:
   * its IR failed to verify), parentheses, unary operators or blocks */
  char buf[4096];
  for (int deep = 0; deep < 2; deep++) {
    /* 99 operators (a tree 100 deep), parentheses, signs or blocks
     * inside the outermost one: at the limit; 100: past it */
    int reps = LANG_MAX_NEST - 1 + deep;
    struct {
      const char *pre, *mid, *post, *msg;
      bool stmts;
    } forms[] = {{"i", " & i", "", "expression nested more than 100 operators deep", false},
                 {"", "-", "i", "nested more than 100 deep", false},
                 {"", "(", "i", "nested more than 100 deep", false},
                 {"", "if i { ", "x = 1", "nested more than 100 deep", true}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
      size_t len = 0;
      if (f == 3) reps--; /* the innermost statement's expression is one more */
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", forms[f].pre);
      for (int k = 0; k < reps; k++) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", forms[f].mid);
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", forms[f].post);
      for (int k = 0; k < reps && (f == 2 || f == 3); k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", f == 2 ? ")" : " }");
      if (f == 3) reps++;
      lang_ast *t = NULL;
      lang_src sx = src_of(buf);
      spc_error_clear(&e);
      spc_status st = forms[f].stmts ? lang_parse_stmts(&sx, &t, &e) : lang_parse_expr(&sx, &t, &e);
      if (!deep) {
        ck_assert_msg(st == SPC_OK, "form %zu at the limit: %s", f, e.msg);
        lang_ast_free(&t);
      } else {
        ck_assert_msg(st == SPC_ERR_SPEC && strstr(e.msg, forms[f].msg) && e.line == 1,
                      "form %zu past the limit: %d %s", f, (int)st, e.msg);
        ck_assert_ptr_null(t);
      }
    }
  }
}
END_TEST

/* ---- the type checker -----------------------------------------------------
 */

static tsym check_syms[] = {
    {"n", LANG_SYM_SCALAR, LT_I64, 0, 0, 0, false, false, -1},
    {"v", LANG_SYM_SCALAR, LT_F64, 0, 0, 0, false, false, -1},
    {"w", LANG_SYM_SCALAR, LT_I32, 0, 0, 0, false, false, -1},
    {"pos", LANG_SYM_ARRAY, LT_INDEX, 0, 0, 0, false, false, -1},
    {"crd", LANG_SYM_ARRAY, LT_COORD, 0, 0, 0, false, false, -1},
    {"val", LANG_SYM_ARRAY, LT_VALUE, 0, 0, 0, false, false, -1},
    {"src", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, true, -1},
    {"cin", LANG_SYM_SCALAR, LT_I64, 0, 0, 0, false, true, -1},
    {"M", LANG_SYM_CONST, LT_I64, 4, 0, 0, false, false, -1},
    {"i", LANG_SYM_INDEX, LT_COORD, 0, 0, 0, false, true, -1}};

static spc_status check_text(const char *text, bool returns, lang_ast **out,
                             spc_error *e) {
  tenv te = {check_syms, (int)(sizeof check_syms / sizeof check_syms[0]),
             IR_I32};
  lang_env env = {.resolve = tresolve,
                  .ctx = &te,
                  .index_ty = IR_I32,
                  .returns = returns,
                  .ret_type = {.ty = IR_I64}};
  lang_src s = src_of(text);
  spc_status st = lang_parse_stmts(&s, out, e);
  if (st == SPC_OK) st = lang_check_stmts(*out, (*out)->root, &env, e);
  return st;
}

START_TEST(test_check_errors) {
  static const err_case cases[] = {
      {"x = q", 1, 5, "unknown name 'q'"},
      {"q += 1", 1, 1, "unknown name 'q'"},
      {"x = pos", 1, 5, "'pos' is an array, used here as a scalar"},
      {"x = n[1]", 1, 5, "'n' is a scalar, used here as an array"},
      {"pos = 3", 1, 1, "'pos' is an array, used here as a scalar"},
      {"n[0] = 3", 1, 1, "'n' is a scalar, used here as an array"},
      {"x = min(n)", 1, 5, "min takes at least 2 arguments, found 1"},
      {"x = abs(n, n)", 1, 5, "abs takes 1 argument, found 2"},
      {"x = i64()", 1, 5, "i64 takes 1 argument, found 0"},
      {"x = len(n)", 1, 9, "'n' is a scalar, used here as an array"},
      {"x = pos[v]", 1, 9, "array index must be an integer, found f64"},
      {"x = v << 1", 1, 5, "operand of '<<' must be an integer, found f64"},
      {"x = 1 & v", 1, 9, "operand of '&' must be an integer, found f64"},
      {"x = ~v", 1, 6, "operand of '~' must be an integer, found f64"},
      {"x = 1.5 % 2", 1, 5, "operand of '%' must be an integer, found f64"},
      {"x = true + 1", 1, 5, "operand of '+' must be a number, found bool"},
      {"x = v && n", 1, 5,
       "operand of '&&' must be bool or an integer, found f64"},
      {"x = n == true", 1, 7, "'==' compares bool with a number"},
      {"x = 1.0 ? 1 : 2", 1, 5, "condition of '?:' must be bool or an integer"},
      {"x = n ? true : 2", 1, 7,
       "the branches of '?:' have incompatible types"},
      {"for k in 0 .. v { }", 1, 15,
       "loop bound must be an integer, found f64"},
      {"while v { }", 1, 7,
       "loop condition must be bool or an integer, found f64"},
      {"if 2.5 { }", 1, 4, "condition must be bool or an integer, found f64"},
      {"n = v", 1, 1, "cannot assign f64 to 'n' of type i64 (only widening"},
      {"w = n", 1, 1, "cannot assign i64 to 'w' of type i32"},
      {"val[0] = crd", 1, 10, "'crd' is an array"},
      {"crd[0] = v", 1, 1,
       "cannot assign f64 to an element of 'crd' of type coord (i64)"},
      {"M = 3", 1, 1, "cannot assign to 'M' (a constant)"},
      {"i = 3", 1, 1, "cannot assign to 'i' (an index variable)"},
      {"cin = 3", 1, 1, "cannot assign to the input 'cin'"},
      {"src[0] = 1", 1, 1, "cannot modify the input array 'src'"},
      {"free(src)", 1, 1, "cannot modify the input array 'src'"},
      {"x = #i", 1, 5,
       "counters (#i) are only allowed in coordinate remappings"},
      {"return n", 1, 1, "this function returns no value"},
      {"fail(\"bad %d\")", 1, 1,
       "fail message has 1 %d placeholder but 0 arguments"},
      {"fail(\"bad %s\", n)", 1, 1,
       "fail message: only %d and %% may follow '%'"},
      {"fail(\"bad %d\", v)", 1, 16,
       "fail argument must be an integer, found f64"},
      {"for k in 0 .. n { k = 1 }", 1, 19,
       "cannot assign to the loop variable 'k'"},
      {"for k in 0 .. n { for k in 0 .. 2 { } }", 1, 19,
       "loop variable 'k' is in use by an enclosing loop"},
      {"x = 1\nfor x in 0 .. n { }", 2, 1,
       "loop variable 'x' is already defined"},
      {"a = alloc(i64, 3); a = alloc(f64, 2)", 1, 20,
       "'a' holds i64, allocated here as f64"},
      {"a = alloc(i64, 2.0)", 1, 16,
       "array length must be an integer, found f64"},
      {"fill(n, 0, 1, 0)", 1, 6, "'n' is a scalar, used here as an array"},
      {"fill(pos, 0, 1)", 1, 1, "fill takes 4 arguments, found 3"},
      {"sort_perm(pos, n)", 1, 1,
       "sort_perm takes at least 3 arguments, found 2"},
      {"prefix_sum(val, 0, 3)", 1, 12,
       "prefix_sum needs an integer array, found array of value (f64)"},
      {"copy(pos, 0, crd, 0, 2)", 1, 14,
       "copy between arrays of index (i32) and coord (i64)"},
      {"fill(pos, 0, 1, v)", 1, 17,
       "cannot assign f64 to an element of type index (i32)"},
      {"fill(pos, 0, n + 1, 0)\ncopy(pos, 0, 3, 0, 1)", 2, 14,
       "argument 3 of copy must be an array name"},
      {"x = 1 +\n  \"s\"", 2, 3, "expected an expression, found string"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lang_ast *a = NULL;
    spc_error e;
    spc_status st = check_text(cases[i].text, false, &a, &e);
    expect_error(st, &e, SPC_ERR_SPEC, cases[i].line, cases[i].col,
                 cases[i].msg, cases[i].text);
    lang_ast_free(&a);
  }
  lang_ast *a = NULL;
  spc_error e;
  expect_error(check_text("return n\nx = 1", true, &a, &e), &e, SPC_ERR_SPEC, 1,
               1, "'return' must be the last statement of the function",
               "return");
  lang_ast_free(&a);
  expect_error(check_text("for k in 0 .. n { return k }", true, &a, &e), &e,
               SPC_ERR_SPEC, 1, 19, "'return' must be the last",
               "return in loop");
  lang_ast_free(&a);
  expect_error(check_text("return v", true, &a, &e), &e, SPC_ERR_SPEC, 1, 1,
               "cannot assign f64 to the result of type i64", "return type");
  lang_ast_free(&a);
}
END_TEST

START_TEST(test_check_types) {
  lang_ast *a = NULL;
  spc_error e;
  tu_assert_ok(check_text("p = pos[w] + 1\nq = pos[w] + n\nc = crd[0] * M\n"
                          "f = val[0] * 2.0\nk = 7\nb = n < 3\nh = v\n"
                          "pos[0] = n\ncrd[1] = w\nval[2] = w\nu = 1 << 3\n"
                          "s = w << n\nif n > 0 { return w } else { return n }",
                          true, &a, &e),
               &e);
  static const struct {
    const char *name;
    ir_ty ty;
    lang_tname sym;
  } want[] = {
      {"p", IR_I32, LT_INDEX}, {"q", IR_I64, LT_NONE}, {"c", IR_I64, LT_COORD},
      {"f", IR_F64, LT_VALUE}, {"k", IR_I64, LT_NONE}, {"b", IR_BOOL, LT_NONE},
      {"h", IR_F64, LT_NONE},  {"u", IR_I64, LT_NONE}, {"s", IR_I32, LT_NONE}};
  ck_assert_int_eq(a->nlocals, 9);
  for (int i = 0; i < 9; i++) {
    ck_assert_str_eq(a->locals[i].name, want[i].name);
    ck_assert_msg(a->locals[i].type.ty == want[i].ty, "%s: type %d",
                  want[i].name, a->locals[i].type.ty);
    ck_assert_msg(a->locals[i].type.sym == want[i].sym, "%s: sym %d",
                  want[i].name, a->locals[i].type.sym);
  }
  lang_ast_free(&a);
}
END_TEST

/* ---- lowering and running -------------------------------------------------
 */

/* Parse, check and lower text into f's body with env te; ret: result var. */
static void lower_into(ir_func *f, tenv *te, const char *text, ir_var ret) {
  lang_ast *a = NULL;
  spc_error e;
  lang_env env = {.resolve = tresolve,
                  .ctx = te,
                  .index_ty = IR_I64,
                  .returns = ret >= 0,
                  .ret_type = {.ty = IR_I64}};
  lang_src s = src_of(text);
  tu_assert_ok(lang_parse_stmts(&s, &a, &e), &e);
  tu_assert_ok(lang_check_stmts(a, a->root, &env, &e), &e);
  tu_assert_ok(lang_lower_stmts(f, ir_func_body(f), a, a->root, &env, ret, &e),
               &e);
  tu_assert_ok(ir_verify(f, &e), &e);
  lang_ast_free(&a);
}

/* The assembly of a compressed level (docs/languages.md): row counts,
 * prefix sum, then each column inserted at its row's next position. */
static const char *const csr_assembly =
    "pos = alloc(index, m + 1)\n"
    "for p in 0 .. nnz { pos[row[p] + 1] += 1 }\n"
    "prefix_sum(pos, 0, m + 1)\n"
    "crd = alloc(coord, pos[m])\n"
    "next = alloc(index, m)\n"
    "copy(next, 0, pos, 0, m)\n"
    "for p in 0 .. nnz {\n"
    "  q = next[row[p]]\n"
    "  crd[q] = col[p]\n"
    "  next[row[p]] += 1\n"
    "}\n"
    "free(next)\n";

START_TEST(test_lower_csr_assembly) {
  ir_func *f = ir_func_new("csr");
  tsym syms[] = {{"row", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "row", IR_I64, true, IR_IN)},
                 {"col", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "col", IR_I64, true, IR_IN)},
                 {"nnz", LANG_SYM_SCALAR, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "nnz", IR_I64, false, IR_IN)},
                 {"m", LANG_SYM_SCALAR, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "m", IR_I64, false, IR_IN)},
                 {"pos", LANG_SYM_ARRAY, LT_INDEX, 0, 0, 0, false, false,
                  ir_param(f, "pos", IR_I64, true, IR_OUT)},
                 {"crd", LANG_SYM_ARRAY, LT_COORD, 0, 0, 0, false, false,
                  ir_param(f, "crd", IR_I64, true, IR_OUT)}};
  tenv te = {syms, 6, IR_I64};
  lower_into(f, &te, csr_assembly, -1);
  int64_t row[] = {2, 0, 2, 1, 0, 2}, col[] = {1, 3, 0, 2, 0, 4};
  ir_arg args[6] = {{row, 6, {0}},         {col, 6, {0}}, {NULL, 0, {.i64 = 6}},
                    {NULL, 0, {.i64 = 4}}, {0},           {0}};
  spc_error e;
  tu_assert_ok(ir_run(f, args, &e), &e);
  const int64_t pos[] = {0, 2, 3, 6, 6}, crd[] = {3, 0, 2, 1, 0, 4};
  ck_assert_int_eq(args[4].len, 5);
  ck_assert_int_eq(args[5].len, 6);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(((int64_t *)args[4].data)[i], pos[i]);
  for (int i = 0; i < 6; i++)
    ck_assert_int_eq(((int64_t *)args[5].data)[i], crd[i]);
  spc_free(args[4].data);
  spc_free(args[5].data);
  ir_func_free(&f);
}
END_TEST

static const char *const every_construct =
    "s = 0; i = 0\n"
    "while true {\n"
    "  if i >= len(a) { break }\n"
    "  if a[i] < 0 { s -= a[i] } else if a[i] == 0 { s += 100 } else { s += "
    "a[i] }\n"
    "  i += 1\n"
    "}\n"
    "fill(b, 0, 4, 7)\n"
    "shift(b, 0, 3, -1)\n"
    "b[3] -= 2\n"
    "perm = alloc(i64, 4)\n"
    "for k in 0 .. 4 { perm[k] = k }\n"
    "sort_perm(perm, 4, key, a)\n"
    "m = max(s, 3, abs(-5)) + min(i32(2), 9) + i64(f64(3) * 0.5)\n"
    "r = s > 10 ? 1 : 2\n"
    "t = (0xF0 >> 4 | 1 << 8) ^ ~0 & 7\n"
    "u = (s % 7) * (s / 7) + u64(3) - i64(!(s == 0) || false)\n"
    "if s > 1000000 { fail(\"too big: %d > %d (100%%)\", s, 1000000) }\n"
    "return s * 1000 + r * 100 + m * 10000000 + t * 100000000000 + i64(u) * "
    "100000000000000\n";

START_TEST(test_lower_every_construct) {
  ir_func *f = ir_func_new("every");
  tsym syms[] = {{"a", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "a", IR_I64, true, IR_IN)},
                 {"key", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, true,
                  ir_param(f, "key", IR_I64, true, IR_IN)},
                 {"b", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, false,
                  ir_param(f, "b", IR_I64, true, IR_INOUT)},
                 {"perm", LANG_SYM_ARRAY, LT_I64, 0, 0, 0, false, false,
                  ir_param(f, "perm", IR_I64, true, IR_OUT)}};
  ir_var ret = ir_param(f, "ret", IR_I64, false, IR_OUT);
  tenv te = {syms, 4, IR_I64};
  lower_into(f, &te, every_construct, ret);
  int64_t a[] = {5, -3, 0, 2}, key[] = {1, 0, 1, 0}, b[4] = {0};
  ir_arg args[5] = {{a, 4, {0}}, {key, 4, {0}}, {b, 4, {0}}, {0}, {0}};
  spc_error e;
  tu_assert_ok(ir_run(f, args, &e), &e);
  /* s = 5 + 3 + 100 + 2 = 110; r = 1; m = 110 + 2 + 1 = 113;
   * t = (15 | 256) ^ (-1 & 7) = 271 ^ 7 = 264; u = 5 * 15 + 3 - 1 = 77 */
  int64_t want = 110 * 1000 + 100 + 113 * 10000000LL + 264 * 100000000000LL +
                 77 * 100000000000000LL;
  ck_assert_int_eq(args[4].s.i64, want);
  const int64_t bw[] = {-1, 7, 7, 5}, pw[] = {1, 3, 2, 0}; /* by (key, a) */
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(b[i], bw[i]);
    ck_assert_int_eq(((int64_t *)args[3].data)[i], pw[i]);
  }
  spc_free(args[3].data);
  /* fail() reports its formatted message as an input error */
  a[0] = 2000000;
  memset(args + 3, 0, 2 * sizeof *args);
  ck_assert_int_eq(ir_run(f, args, &e), SPC_ERR_INPUT);
  ck_assert_msg(strstr(e.msg, "too big: 2000105 > 1000000 (100%)"), "%s",
                e.msg);
  ir_func_free(&f);
}
END_TEST

/* ---- interval analysis ----------------------------------------------------
 */

START_TEST(test_intervals) {
  static tsym syms[] = {
      {"i", LANG_SYM_INDEX, LT_I64, 0, 0, 9, true, true, -1},
      {"j", LANG_SYM_INDEX, LT_I64, 0, 0, 19, true, true, -1},
      {"n", LANG_SYM_SCALAR, LT_I64, 0, 0, 0, false, true, -1},
      {"w", LANG_SYM_SCALAR, LT_I32, 0, 0, 0, false, true, -1},
      {"M", LANG_SYM_CONST, LT_I64, 4, 0, 0, false, false, -1}};
  static const struct {
    const char *e;
    bool b;
    int64_t lo, hi;
  } cases[] = {
      {"j - i", true, -9, 19},
      {"i * j", true, 0, 171},
      {"i * -j", true, -171, 0},
      {"i / M", true, 0, 2},
      {"i % M", true, 0, 3},
      {"(j - i) % 4", true, -3, 3},
      {"-i % 4", true, -3, 0},
      {"min(i, j)", true, 0, 9},
      {"max(i, j - 30)", true, 0, 9},
      {"abs(j - i - 5)", true, 0, 14},
      {"i << 2", true, 0, 36},
      {"j >> 1", true, 0, 9},
      {"(i - 9) >> 1", true, -5, 0},
      {"i & 3", true, 0, 3},
      {"(i - 5) & 6", true, 0, 6},
      {"i | j", true, 1 - 1, 31},
      {"(i + 4) | (j + 2)", true, 4, 31},
      {"i ^ j", true, 0, 31},
      {"i < j ? i : j + 100", true, 0, 119},
      {"i < j", true, 0, 1},
      {"-i", true, -9, 0},
      {"~i", true, -10, -1},
      {"i / (j - 5)", true, -9, 9},
      {"u64(i)", true, 0, 9},
      {"i32(j)", true, 0, 19},
      {"w", true, INT32_MIN, INT32_MAX},
      {"i64(1) << 62", true, (int64_t)1 << 62, (int64_t)1 << 62},
      {"i64(1) << 63", false, 0, 0},
      {"i * 4611686018427387904", false, 0, 0},
      {"1 << 40", false, 0, 0},
      {"w * 2", false, 0, 0},
      {"n + 1", false, 0, 0},
      {"i / 0", false, 0, 0},
      {"i / (j - j)", true, -9, 9},
      {"u64(i - 1)", false, 0, 0},
      {"i32(i64(w) + 1)", false, 0, 0},
      {"(i - 3) | 1", false, 0, 0},
      {"i64(w) * 4", true, (int64_t)INT32_MIN * 4, (int64_t)INT32_MAX * 4}};
  tenv te = {syms, 5, IR_I64};
  lang_env env = {.resolve = tresolve, .ctx = &te};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    lang_ast *a = NULL;
    spc_error e;
    lang_src s = src_of(cases[k].e);
    tu_assert_ok(lang_parse_expr(&s, &a, &e), &e);
    tu_assert_ok(lang_check_expr(a, a->root, &env, &e), &e);
    lang_ival v = lang_interval(a->root, &env);
    ck_assert_msg(v.bounded == cases[k].b, "%s: bounded %d", cases[k].e,
                  v.bounded);
    if (v.bounded)
      ck_assert_msg(v.lo == cases[k].lo && v.hi == cases[k].hi,
                    "%s: [%lld, %lld]", cases[k].e, (long long)v.lo,
                    (long long)v.hi);
    lang_ast_free(&a);
  }
}
END_TEST

/* ---- remappings -----------------------------------------------------------
 */

static const char *const dia = "(i, j) -> (j - i as d, i, j)";
static const char *const ell = "(i, j) -> (#i as k, i, j)";
static const char *const bcsr =
    "(i, j) -> let bi = i / M, bj = j / N in (bi, bj, i % M, j % N)";
/* Morton (Z) order of 2-D 32-bit coordinates: spread the bits of each
 * index to the even positions of a 64-bit word, interleave. */
static const char *const morton =
    "(i, j) -> let\n"
    "  x0 = u64(i), x1 = (x0 | (x0 << 16)) & 0x0000FFFF0000FFFF,\n"
    "  x2 = (x1 | (x1 << 8)) & 0x00FF00FF00FF00FF,\n"
    "  x3 = (x2 | (x2 << 4)) & 0x0F0F0F0F0F0F0F0F,\n"
    "  x4 = (x3 | (x3 << 2)) & 0x3333333333333333,\n"
    "  x5 = (x4 | (x4 << 1)) & 0x5555555555555555,\n"
    "  y0 = u64(j), y1 = (y0 | (y0 << 16)) & 0x0000FFFF0000FFFF,\n"
    "  y2 = (y1 | (y1 << 8)) & 0x00FF00FF00FF00FF,\n"
    "  y3 = (y2 | (y2 << 4)) & 0x0F0F0F0F0F0F0F0F,\n"
    "  y4 = (y3 | (y3 << 2)) & 0x3333333333333333,\n"
    "  y5 = (y4 | (y4 << 1)) & 0x5555555555555555\n"
    "in (x5 | (y5 << 1) as z, i, j)";

static spc_remap *remap_ok(const char *text, int order, int64_t M, int64_t N) {
  spc_remap_param ps[] = {{"M", M}, {"N", N}};
  spc_remap *r = NULL;
  spc_error e;
  lang_src s = src_of(text);
  tu_assert_ok(spc_remap_parse(&s, order, ps, 2, &r, &e), &e);
  return r;
}

static uint64_t morton_c(uint64_t i, uint64_t j) {
  uint64_t z = 0;
  for (int b = 0; b < 32; b++)
    z |= ((i >> b) & 1) << (2 * b) | ((j >> b) & 1) << (2 * b + 1);
  return z;
}

/* Run r's outputs over points x (n points of r->order_in coordinates),
 * counters maintained as mode says; out[p * order_out + k]. */
static void run_remap(const spc_remap *r, const int64_t *x, int n,
                      spc_counter_mode mode, const int64_t *dims,
                      int64_t *out) {
  ir_func *f = ir_func_new("remap");
  spc_error e;
  int ni = r->order_in, no = r->order_out;
  ir_var xs = ir_param(f, "x", IR_I64, true, IR_IN);
  ir_var ys = ir_param(f, "y", IR_I64, true, IR_OUT);
  ir_var p = ir_local(f, "p", IR_I64, false);
  ir_stmt *body = ir_func_body(f);
  spc_counter_ir ctr[SPC_MAX_ORDER];
  ir_var cv[SPC_MAX_ORDER];
  ir_add(f, body, ir_alloc(f, ys, ir_int(f, (int64_t)n * no), true));
  for (int c = 0; c < r->ncounters; c++) {
    tu_assert_ok(
        spc_counter_begin(r, c, mode, dims, 1000, f, body, &ctr[c], NULL, &e), &e);
    cv[c] = ctr[c].value;
  }
  ir_stmt *loop =
      ir_add(f, body, ir_for(f, p, ir_int(f, 0), ir_int(f, n), NULL));
  ir_stmt *lb = ir_body(loop);
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  for (int k = 0; k < ni; k++)
    src[k] = ir_load(f, xs,
                     ir_bin(f, IR_ADD,
                            ir_bin(f, IR_MUL, ir_ref(f, p), ir_int(f, ni)),
                            ir_int(f, k)));
  for (int c = 0; c < r->ncounters; c++) spc_counter_step(&ctr[c], f, lb, src);
  tu_assert_ok(spc_remap_lower(r, f, lb, src, cv, outs, &e), &e);
  for (int k = 0; k < no; k++)
    ir_add(f, lb,
           ir_store(f, ys,
                    ir_bin(f, IR_ADD,
                           ir_bin(f, IR_MUL, ir_ref(f, p), ir_int(f, no)),
                           ir_int(f, k)),
                    ir_cast(f, IR_I64, outs[k])));
  for (int c = 0; c < r->ncounters; c++) spc_counter_end(&ctr[c], f, body);
  tu_assert_ok(ir_verify(f, &e), &e);
  ir_arg args[2] = {{(void *)x, (int64_t)n * ni, {0}}, {0}};
  tu_assert_ok(ir_run(f, args, &e), &e);
  memcpy(out, args[1].data, (size_t)n * (size_t)no * sizeof *out);
  spc_free(args[1].data);
  ir_func_free(&f);
}

START_TEST(test_remap_formats) {
  const int64_t x[] = {2, 1, 0, 3, 2, 1, 3, 4, 0, 0, 2, 4, 1, 1, 4, 6};
  const int n = 8;
  int64_t dims[] = {5, 7}, out[8 * 4];
  lang_ival iv[SPC_MAX_ORDER];
  spc_error e;
  /* DIA */
  spc_remap *r = remap_ok(dia, 2, 0, 0);
  ck_assert_int_eq(r->order_out, 3);
  ck_assert_str_eq(r->out_names[0], "d");
  ck_assert_str_eq(r->out_names[2], "j");
  tu_assert_ok(spc_remap_bounds(r, dims, NULL, iv, &e), &e);
  ck_assert(iv[0].bounded && iv[0].lo == -4 && iv[0].hi == 6);
  run_remap(r, x, n, SPC_COUNTER_DENSE, dims, out);
  for (int p = 0; p < n; p++) {
    ck_assert_int_eq(out[p * 3], x[2 * p + 1] - x[2 * p]);
    ck_assert_int_eq(out[p * 3 + 1], x[2 * p]);
  }
  spc_remap_free(&r);
  /* ELL: #i counts earlier components of the same row, in both modes */
  r = remap_ok(ell, 2, 0, 0);
  ck_assert_int_eq(r->ncounters, 1);
  ck_assert_int_eq(r->counters[0].n, 1);
  ck_assert_int_eq(r->counters[0].idx[0], 0);
  ck_assert_str_eq(r->out_names[0], "k");
  run_remap(r, x, n, SPC_COUNTER_DENSE, dims, out);
  for (int p = 0; p < n; p++) {
    int64_t c = 0;
    for (int q = 0; q < p; q++) c += x[2 * q] == x[2 * p];
    ck_assert_int_eq(out[p * 3], c);
  }
  const int64_t sorted[] = {0, 1, 0, 5, 1, 0, 3, 3, 3, 4, 3, 6};
  int64_t o2[6 * 3];
  run_remap(r, sorted, 6, SPC_COUNTER_DENSE, dims, out);
  run_remap(r, sorted, 6, SPC_COUNTER_GROUPED, dims, o2);
  const int64_t kw[] = {0, 1, 0, 0, 1, 2};
  for (int p = 0; p < 6; p++) {
    ck_assert_int_eq(out[p * 3], kw[p]);
    ck_assert_int_eq(o2[p * 3], kw[p]);
  }
  tu_assert_ok(spc_remap_bounds(r, dims, (int64_t[]){3}, iv, &e), &e);
  ck_assert(iv[0].bounded && iv[0].lo == 0 && iv[0].hi == 3);
  tu_assert_ok(spc_remap_bounds(r, dims, NULL, iv, &e), &e);
  ck_assert(!iv[0].bounded);
  spc_remap_free(&r);
  /* let names longer than the IR's name buffer, equal in their first 100
   * bytes (found by fuzz_notation: both became one local) */
  {
    char text[700], a[121], b[121];
    memset(a, 'v', 120), memset(b, 'v', 120);
    a[120] = b[120] = 0;
    a[119] = 'a', b[119] = 'b';
    snprintf(text, sizeof text, "(i, j) -> let %s = i + 1, %s = j * 2 in (%s, %s - %s)", a, b, b, a, b);
    r = remap_ok(text, 2, 0, 0);
    run_remap(r, x, n, SPC_COUNTER_DENSE, dims, out);
    for (int p = 0; p < n; p++) {
      ck_assert_int_eq(out[p * 2], 2 * x[2 * p + 1]);
      ck_assert_int_eq(out[p * 2 + 1], x[2 * p] + 1 - 2 * x[2 * p + 1]);
    }
    spc_remap_free(&r);
  }
  /* BCSR for several block shapes */
  static const int64_t blocks[][2] = {{2, 3}, {3, 2}, {1, 1}, {4, 4}, {5, 7}};
  for (int b = 0; b < 5; b++) {
    int64_t M = blocks[b][0], N = blocks[b][1];
    r = remap_ok(bcsr, 2, M, N);
    ck_assert_int_eq(r->order_out, 4);
    ck_assert_str_eq(r->out_names[0], "bi");
    ck_assert_str_eq(r->out_names[1], "bj");
    ck_assert_str_eq(r->out_names[2], "l2");
    ck_assert_str_eq(r->out_names[3], "l3");
    tu_assert_ok(spc_remap_bounds(r, dims, NULL, iv, &e), &e);
    ck_assert_int_eq(iv[0].hi, 4 / M);
    ck_assert_int_eq(iv[1].hi, 6 / N);
    ck_assert_int_eq(iv[2].hi, M - 1 < 4 ? M - 1 : 4);
    ck_assert_int_eq(iv[3].hi, N - 1 < 6 ? N - 1 : 6);
    run_remap(r, x, n, SPC_COUNTER_DENSE, dims, out);
    for (int p = 0; p < n; p++) {
      ck_assert_int_eq(out[p * 4], x[2 * p] / M);
      ck_assert_int_eq(out[p * 4 + 1], x[2 * p + 1] / N);
      ck_assert_int_eq(out[p * 4 + 2], x[2 * p] % M);
      ck_assert_int_eq(out[p * 4 + 3], x[2 * p + 1] % N);
    }
    spc_remap_free(&r);
  }
}
END_TEST

START_TEST(test_remap_morton_csf) {
  spc_remap *r = remap_ok(morton, 2, 0, 0);
  spc_error e;
  lang_ival iv[SPC_MAX_ORDER];
  ck_assert_int_eq(r->nlets, 12);
  ck_assert_str_eq(r->out_names[0], "z");
  ck_assert_int_eq(r->out[0]->type.ty, IR_U64);
  const int64_t x[] = {0,
                       0,
                       1,
                       0,
                       0,
                       1,
                       3,
                       5,
                       12345,
                       67890,
                       2147483647,
                       1,
                       4294967295LL,
                       4294967295LL,
                       65536,
                       4294901760LL};
  int64_t out[8 * 3];
  run_remap(r, x, 8, SPC_COUNTER_DENSE, (int64_t[]){1, 1}, out);
  for (int p = 0; p < 8; p++)
    ck_assert_msg((uint64_t)out[p * 3] ==
                      morton_c((uint64_t)x[2 * p], (uint64_t)x[2 * p + 1]),
                  "morton(%lld, %lld)", (long long)x[2 * p],
                  (long long)x[2 * p + 1]);
  int64_t small[] = {8, 8}, big[] = {(int64_t)1 << 31, (int64_t)1 << 31},
          huge[] = {(int64_t)1 << 32, (int64_t)1 << 32};
  tu_assert_ok(spc_remap_bounds(r, small, NULL, iv, &e), &e);
  ck_assert(iv[0].bounded && iv[0].lo == 0 && iv[0].hi == 63);
  tu_assert_ok(spc_remap_bounds(r, big, NULL, iv, &e), &e);
  ck_assert(iv[0].bounded && iv[0].hi == ((int64_t)1 << 62) - 1);
  tu_assert_ok(spc_remap_bounds(r, huge, NULL, iv, &e), &e);
  ck_assert(!iv[0].bounded);
  spc_remap_free(&r);
  /* CSF mode permutation of an order-3 tensor */
  r = remap_ok("(i, j, k) -> (k, i, j)", 3, 0, 0);
  ck_assert_str_eq(r->out_names[0], "k");
  ck_assert_str_eq(r->out_names[1], "i");
  const int64_t t[] = {1, 2, 3, 4, 5, 6};
  run_remap(r, t, 2, SPC_COUNTER_DENSE, (int64_t[]){9, 9, 9}, out);
  const int64_t w[] = {3, 1, 2, 6, 4, 5};
  for (int q = 0; q < 6; q++) ck_assert_int_eq(out[q], w[q]);
  spc_remap_free(&r);
  /* identity, and a two-index counter */
  tu_assert_ok(spc_remap_identity(3, &r, &e), &e);
  ck_assert(r->identity);
  ck_assert_str_eq(r->out_names[2], "k");
  spc_remap_free(&r);
  r = remap_ok("(i, j, k) -> (#(i, k) as c, #(k, i), i, j, k)", 3, 0, 0);
  ck_assert_int_eq(r->ncounters, 1);
  ck_assert_int_eq(r->counters[0].n, 2);
  const int64_t u[] = {1, 0, 2, 1, 1, 2, 0, 0, 2, 1, 2, 2};
  int64_t o5[4 * 5];
  run_remap(r, u, 4, SPC_COUNTER_DENSE, (int64_t[]){3, 3, 3}, o5);
  const int64_t cw[] = {0, 1, 0, 2};
  for (int p = 0; p < 4; p++) ck_assert_int_eq(o5[p * 5], cw[p]);
  spc_remap_free(&r);
}
END_TEST

START_TEST(test_remap_errors) {
  static const struct {
    const char *text;
    int order;
    int64_t line, col;
    const char *msg;
  } cases[] = {
      {"(i) -> (i)", 2, 1, 1,
       "the remapping has 1 source index but the tensor has order 2"},
      {"(i, j, k) -> (i, j, k)", 2, 1, 1,
       "has 3 source indices but the tensor has order 2"},
      {"(i, i) -> (i)", 2, 1, 5, "duplicate source index 'i'"},
      {"(i, M) -> (i, M)", 2, 1, 5, "'M' is a format parameter"},
      {"(i, j) -> (i)", 2, 1, 5,
       "index j is not used: the remapping would lose it"},
      {"(i, j) -> (#j, i)", 2, 1, 5, "index j is not used"},
      {"(i, j) -> let a = j in (i, i % 2)", 2, 1, 5, "index j is not used"},
      {"(i, j) -> (i, j, q)", 2, 1, 18,
       "unknown name 'q' (a remapping may use its "
       "source indices, earlier let names and the "
       "format's parameters)"},
      {"(i, j) -> let a = b, b = i in (a, j)", 2, 1, 19, "unknown name 'b'"},
      {"(i, j) -> let a = i, a = j in (a, i, j)", 2, 1, 22,
       "let name 'a' is already defined"},
      {"(i, j) -> let j = i in (i, j)", 2, 1, 15,
       "let name 'j' is already defined"},
      {"(i, j) -> (i as x, j as x)", 2, 1, 25, "duplicate output name 'x'"},
      {"(i, j) -> (i, i + 0 as i, j)", 2, 1, 24, "duplicate output name 'i'"},
      {"(i, j) -> (j - i, i, j as l0)", 2, 1, 27, "duplicate output name 'l0'"},
      {"(i, j) -> let b = i / 2 in (#b, i, j)", 2, 1, 30,
       "counter over 'b': counters count source indices only"},
      {"(i, j) -> (#M, i, j)", 2, 1, 13, "counter over 'M'"},
      {"(i, j) -> (#(i, i), i, j)", 2, 1, 17,
       "index 'i' appears twice in the counter"},
      {"(i, j) -> (f64(i), j)", 2, 1, 12,
       "output 0 is f64: coordinates are integers"},
      {"(i, j) -> (i < j, i, j)", 2, 1, 14, "output 0 is bool"},
      {"(i, j) -> let a = i * 0.5 in (i, j)", 2, 1, 21, "let 'a' is f64"},
      {"(i, j) -> (i, j", 2, 1, 16, "expected ',' or ')' after an output"},
      {"(i, j) (i, j)", 2, 1, 8, "expected '->'"},
      {"i, j -> (i, j)", 2, 1, 1, "expected '(' starting the source indices"},
      {"(i, j) -> let a = i; (a, j)", 2, 1, 20,
       "expected ',' or 'in' after the let bindings"},
      {"(i, j) -> (i as 3, j)", 2, 1, 17, "expected a name after 'as'"},
      {"(i, j) -> (i, j) x", 2, 1, 18, "unexpected 'x' after the remapping"},
      {"(i, j) -> (i, j, M as N)", 2, 1, 23,
       "'N' is a format parameter; it cannot name an output"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    spc_remap_param ps[] = {{"M", 2}, {"N", 3}};
    spc_remap *r = NULL;
    spc_error e;
    lang_src s = src_of(cases[k].text);
    spc_status st = spc_remap_parse(&s, cases[k].order, ps, 2, &r, &e);
    ck_assert_ptr_null(r);
    expect_error(st, &e, SPC_ERR_SPEC, cases[k].line, cases[k].col,
                 cases[k].msg, cases[k].text);
  }
  /* positions inside a YAML file: a block scalar at 7:5, indent 4 */
  spc_remap *r = NULL;
  spc_error e;
  lang_src s = {.text = "(i, j) -> let\n  bi = i / Q\nin (bi, j)",
                .file = "bcsr.yaml",
                .line = 7,
                .col = 5,
                .indent = 4};
  expect_error(spc_remap_parse(&s, 2, NULL, 0, &r, &e), &e, SPC_ERR_SPEC, 8, 16,
               "unknown name 'Q'", "yaml remap");
  ck_assert_str_eq(e.file, "bcsr.yaml");
}
END_TEST

START_TEST(test_alloc_failures) {
  /* every allocation of parse + check + lower fails in turn, cleanly */
  for (int64_t k = 1;; k++) {
    spc_remap *r = NULL;
    spc_error e;
    lang_src s = src_of(bcsr);
    spc_remap_param ps[] = {{"M", 2}, {"N", 3}};
    spc_alloc_fail_at(k);
    spc_status st = spc_remap_parse(&s, 2, ps, 2, &r, &e);
    lang_ast *a = NULL;
    if (st == SPC_OK) {
      s = src_of(every_stmt);
      st = lang_parse_stmts(&s, &a, &e);
    }
    spc_alloc_fail_at(0);
    ck_assert_msg(st == SPC_OK || st == SPC_ERR_NOMEM, "k=%lld: %d",
                  (long long)k, st);
    spc_remap_free(&r);
    lang_ast_free(&a);
    if (st == SPC_OK) break;
    ck_assert_int_lt(k, 10000);
  }
}
END_TEST

Suite *suite_lang(void); /* registered in suites.h */
Suite *suite_lang(void) {
  Suite *s = suite_create("lang");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_lex_positions);
  tcase_add_test(tc, test_parse_print_expr);
  tcase_add_test(tc, test_parse_print_stmts);
  tcase_add_test(tc, test_syntax_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("check");
  tcase_add_test(tc, test_check_errors);
  tcase_add_test(tc, test_check_types);
  tcase_add_test(tc, test_intervals);
  suite_add_tcase(s, tc);
  tc = tcase_create("lower");
  tcase_add_test(tc, test_lower_csr_assembly);
  tcase_add_test(tc, test_lower_every_construct);
  suite_add_tcase(s, tc);
  tc = tcase_create("remap");
  tcase_add_test(tc, test_remap_formats);
  tcase_add_test(tc, test_remap_morton_csf);
  tcase_add_test(tc, test_remap_errors);
  tcase_add_test(tc, test_alloc_failures);
  suite_add_tcase(s, tc);
  return s;
}
