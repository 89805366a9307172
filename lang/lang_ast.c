/* lang_ast.c -- the AST arena: nodes, names and lists of one parse live in
 * chunks owned by a lang_ast and are released together by lang_ast_free. */
#include "spc_lang.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CHUNK_MIN 4096

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char mem[];
} chunk;

lang_ast *lang_ast_new(const lang_src *src) {
  lang_ast *a = spc_calloc(1, sizeof *a);
  if (!a) return NULL;
  a->src = *src;
  a->src.file = NULL;
  if (src->file &&
      !(a->src.file = lang_strdup(a, src->file, strlen(src->file)))) {
    lang_ast_free(&a);
    return NULL;
  }
  return a;
}

void lang_ast_free(lang_ast **pa) {
  if (!pa || !*pa) return;
  lang_ast *a = *pa;
  for (chunk *c = a->arena, *n; c; c = n) {
    n = c->next;
    spc_free(c);
  }
  spc_free(a->locals);
  spc_free(a);
  *pa = NULL;
}

void *lang_alloc(lang_ast *a, size_t n) {
  const size_t al = _Alignof(max_align_t);
  n = (n + al - 1) / al * al;
  chunk *c = a->arena;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
    chunk *nc = spc_malloc(sizeof *nc + cap);
    if (!nc) return NULL;
    nc->next = c;
    nc->used = 0;
    nc->cap = cap;
    a->arena = c = nc;
  }
  void *p = c->mem + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *lang_strdup(lang_ast *a, const char *s, size_t n) {
  char *d = lang_alloc(a, n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = 0;
  }
  return d;
}

lang_node *lang_node_new(lang_ast *a, lang_kind k, int64_t line, int64_t col) {
  lang_node *n = lang_alloc(a, sizeof *n);
  if (!n) return NULL;
  n->kind = k;
  n->line = line;
  n->col = col;
  n->op = -1;
  n->local = -1;
  return n;
}

/* Lists grow by doubling inside the arena (the old block is abandoned). */
bool lang_node_push(lang_ast *a, lang_node *n, lang_node *kid) {
  int k = n->nkids; /* capacity is 4, 8, 16, ...: full at those sizes */
  if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
    int ncap = n->nkids ? 2 * n->nkids : 4;
    lang_node **v = lang_alloc(a, (size_t)ncap * sizeof *v);
    if (!v) return false;
    if (k) memcpy(v, n->kids, (size_t)k * sizeof *v);
    n->kids = v;
  }
  n->kids[n->nkids++] = kid;
  return true;
}

spc_status lang_node_error(const lang_ast *a, const lang_node *n, spc_error *e,
                           const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return spc_err(e, SPC_ERR_SPEC, a ? a->src.file : NULL, n ? n->line : 0,
                 n ? n->col : 0, "%s", msg);
}
