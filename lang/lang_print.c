/* lang_print.c -- print an AST back in the languages' syntax: binary and
 * conditional operators fully parenthesised, statements one a line with a
 * two-space indent per level.  Re-parsing the output gives the same tree
 * (hexadecimal literals come back decimal, above INT64_MAX hexadecimal). */
#include "spc_lang.h"
#include <stdio.h>
#include <string.h>

static void print_expr(const lang_node *n, spc_str *o);

static void print_list(lang_node *const *k, int n, spc_str *o) {
  for (int i = 0; i < n; i++) {
    if (i) spc_str_add(o, ", ", 2);
    print_expr(k[i], o);
  }
}

static void print_string(const char *s, spc_str *o) {
  spc_str_add(o, "\"", 1);
  for (; *s; s++) {
    if (*s == '\n')
      spc_str_add(o, "\\n", 2);
    else if (*s == '\t')
      spc_str_add(o, "\\t", 2);
    else if (*s == '"' || *s == '\\')
      spc_str_addf(o, "\\%c", *s);
    else
      spc_str_add(o, s, 1);
  }
  spc_str_add(o, "\"", 1);
}

static const char *op_text(int op) {
  static const char *const s[] = {
      [IR_ADD] = "+",   [IR_SUB] = "-",  [IR_MUL] = "*",   [IR_DIV] = "/",
      [IR_REM] = "%",   [IR_SHL] = "<<", [IR_SHR] = ">>",  [IR_BAND] = "&",
      [IR_BOR] = "|",   [IR_BXOR] = "^", [IR_LT] = "<",    [IR_LE] = "<=",
      [IR_GT] = ">",    [IR_GE] = ">=",  [IR_EQ] = "==",   [IR_NE] = "!=",
      [IR_LAND] = "&&", [IR_LOR] = "||", [IR_MIN] = "min", [IR_MAX] = "max",
      [IR_NEG] = "-",   [IR_NOT] = "!",  [IR_BNOT] = "~",  [IR_ABS] = "abs"};
  return op >= 0 && op <= IR_ABS ? s[op] : "?";
}

static void print_expr(const lang_node *n, spc_str *o) {
  switch (n->kind) {
  case LN_INT:
    if (n->is_u64)
      spc_str_addf(o, "0x%llX", (unsigned long long)n->uval);
    else
      spc_str_addf(o, "%lld", (long long)n->ival);
    break;
  case LN_FLOAT: {
    char b[40];
    snprintf(b, sizeof b, "%.17g", n->fval);
    spc_str_addf(o, "%s%s", b, strpbrk(b, ".en") ? "" : ".0");
    break;
  }
  case LN_BOOL: spc_str_addf(o, "%s", n->bval ? "true" : "false"); break;
  case LN_STRING: print_string(n->name, o); break;
  case LN_NAME: spc_str_addf(o, "%s", n->name); break;
  case LN_INDEX:
    spc_str_addf(o, "%s[", n->name);
    print_expr(n->a, o);
    spc_str_add(o, "]", 1);
    break;
  case LN_CALL:
    spc_str_addf(o, "%s(", n->name);
    print_list(n->kids, n->nkids, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_UNARY:
    spc_str_addf(o, "%s", op_text(n->op));
    print_expr(n->a, o);
    break;
  case LN_BINARY:
    spc_str_add(o, "(", 1);
    print_expr(n->a, o);
    spc_str_addf(o, " %s ", op_text(n->op));
    print_expr(n->b, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_COND:
    spc_str_add(o, "(", 1);
    print_expr(n->a, o);
    spc_str_add(o, " ? ", 3);
    print_expr(n->b, o);
    spc_str_add(o, " : ", 3);
    print_expr(n->c, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_COUNTER:
    if (n->nkids == 1) {
      spc_str_addf(o, "#%s", n->kids[0]->name);
    } else {
      spc_str_add(o, "#(", 2);
      print_list(n->kids, n->nkids, o);
      spc_str_add(o, ")", 1);
    }
    break;
  default: spc_str_add(o, "<stmt>", 6); break;
  }
}

static void print_block(const lang_node *b, int ind, spc_str *o);

static void print_if(const lang_node *n, int ind, spc_str *o) {
  spc_str_add(o, "if ", 3);
  print_expr(n->a, o);
  spc_str_add(o, " {\n", 3);
  print_block(n->b, ind + 1, o);
  spc_str_addf(o, "%*s}", 2 * ind, "");
  if (!n->c) return;
  spc_str_add(o, " else ", 6);
  if (n->c->kind == LN_IF) {
    print_if(n->c, ind, o);
    return;
  }
  spc_str_add(o, "{\n", 2);
  print_block(n->c, ind + 1, o);
  spc_str_addf(o, "%*s}", 2 * ind, "");
}

static void print_stmt(const lang_node *n, int ind, spc_str *o) {
  spc_str_addf(o, "%*s", 2 * ind, "");
  switch (n->kind) {
  case LN_ASSIGN:
    spc_str_addf(o, "%s", n->name);
    if (n->a) {
      spc_str_add(o, "[", 1);
      print_expr(n->a, o);
      spc_str_add(o, "]", 1);
    }
    spc_str_addf(o, " %s ",
                 n->op == IR_ADD   ? "+="
                 : n->op == IR_SUB ? "-="
                                   : "=");
    print_expr(n->b, o);
    break;
  case LN_ALLOC:
    spc_str_addf(o, "%s = alloc(%s, ", n->name, lang_tname_str(n->tname));
    print_expr(n->a, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_FREE: spc_str_addf(o, "free(%s)", n->name); break;
  case LN_FOR:
    spc_str_addf(o, "for %s in ", n->name);
    print_expr(n->a, o);
    spc_str_add(o, " .. ", 4);
    print_expr(n->b, o);
    spc_str_add(o, " {\n", 3);
    print_block(n->c, ind + 1, o);
    spc_str_addf(o, "%*s}", 2 * ind, "");
    break;
  case LN_WHILE:
    spc_str_add(o, "while ", 6);
    print_expr(n->a, o);
    spc_str_add(o, " {\n", 3);
    print_block(n->c, ind + 1, o);
    spc_str_addf(o, "%*s}", 2 * ind, "");
    break;
  case LN_IF: print_if(n, ind, o); break;
  case LN_BREAK: spc_str_add(o, "break", 5); break;
  case LN_RETURN:
    spc_str_add(o, "return ", 7);
    print_expr(n->a, o);
    break;
  case LN_BUILTIN:
    spc_str_addf(o, "%s(", n->name);
    print_list(n->kids, n->nkids, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_FAIL:
    spc_str_add(o, "fail(", 5);
    print_string(n->name, o);
    if (n->nkids) spc_str_add(o, ", ", 2);
    print_list(n->kids, n->nkids, o);
    spc_str_add(o, ")", 1);
    break;
  case LN_BLOCK:
    spc_str_add(o, "{\n", 2);
    print_block(n, ind + 1, o);
    spc_str_addf(o, "%*s}", 2 * ind, "");
    break;
  default: print_expr(n, o); break;
  }
  spc_str_add(o, "\n", 1);
}

static void print_block(const lang_node *b, int ind, spc_str *o) {
  for (int i = 0; i < b->nkids; i++) print_stmt(b->kids[i], ind, o);
}

void lang_print(const lang_node *n, spc_str *out) {
  if (n->kind == LN_BLOCK)
    print_block(n, 0, out);
  else if (n->kind > LN_COUNTER)
    print_stmt(n, 0, out);
  else
    print_expr(n, out);
}
