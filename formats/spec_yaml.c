/* spec_yaml.c -- load a YAML document into a tree of spc_ynode with
 * positions (libyaml's document API).  Anchors and aliases are resolved by
 * libyaml; recursion through an alias cycle is refused. */
#include "spec_yaml.h"
#include <stdio.h>
#include <string.h>
#include <yaml.h>

static void free_node(spc_ynode *n) {
  if (!n) return;
  for (int i = 0; i < n->n; i++) {
    if (n->keys) free_node(n->keys[i]);
    free_node(n->vals[i]);
  }
  spc_free(n->keys);
  spc_free(n->vals);
  spc_free(n->str);
  spc_free(n);
}

void spc_ynode_free(spc_ynode **n) {
  if (!n) return;
  free_node(*n);
  *n = NULL;
}

/* First content line of a block scalar starting at mark: line and the
 * column of its first non-blank character. */
static void block_base(const char *text, size_t len, const yaml_mark_t *m,
                       int64_t *line, int64_t *col) {
  size_t i = m->index;
  while (i < len && text[i] != '\n') i++; /* skip the indicator line */
  int64_t l = (int64_t)m->line + 2;
  for (;;) {
    size_t s = ++i, k = s;
    while (k < len && text[k] == ' ') k++;
    if (k >= len || text[k] != '\n') {
      *line = l;
      *col = (int64_t)(k - s) + 1;
      return;
    }
    i = k; /* blank line: keep looking */
    l++;
  }
}

/* why convert gave NULL: out of memory, a key that is not a scalar (at
 * key_line:key_col), else nesting past 64 */
typedef struct cvt_why {
  bool nomem;
  int64_t key_line, key_col;
  bool has_dup; /* a key given twice in one mapping (at key_line:key_col) */
  char dup[64];
  int64_t dup_first;
} cvt_why;

static spc_ynode *convert(yaml_document_t *d, yaml_node_t *y, int depth,
                          const char *text, size_t len, cvt_why *why) {
  if (!y || depth > 64) return NULL;
  bool *nomem = &why->nomem;
  spc_ynode *n = spc_calloc(1, sizeof *n);
  if (!n) { *nomem = true; return NULL; }
  n->line = (int64_t)y->start_mark.line + 1;
  n->col = (int64_t)y->start_mark.column + 1;
  n->bline = n->line;
  n->bcol = n->col;
  if (y->type == YAML_SCALAR_NODE) {
    n->kind = SPC_Y_SCALAR;
    n->str = spc_malloc(y->data.scalar.length + 1);
    if (!n->str) { *nomem = true; free_node(n); return NULL; }
    memcpy(n->str, y->data.scalar.value, y->data.scalar.length);
    n->str[y->data.scalar.length] = 0;
    yaml_scalar_style_t st = y->data.scalar.style;
    if (st == YAML_LITERAL_SCALAR_STYLE || st == YAML_FOLDED_SCALAR_STYLE) {
      n->block = true;
      block_base(text, len, &y->start_mark, &n->bline, &n->bcol);
    } else if (st == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
               st == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
      n->bcol++;
    }
    return n;
  }
  bool map = y->type == YAML_MAPPING_NODE;
  n->kind = map ? SPC_Y_MAP : SPC_Y_SEQ;
  int cnt = map ? (int)(y->data.mapping.pairs.top - y->data.mapping.pairs.start)
                : (int)(y->data.sequence.items.top - y->data.sequence.items.start);
  n->vals = spc_calloc((size_t)cnt + 1, sizeof *n->vals);
  if (map) n->keys = spc_calloc((size_t)cnt + 1, sizeof *n->keys);
  if (!n->vals || (map && !n->keys)) { *nomem = true; free_node(n); return NULL; }
  for (int i = 0; i < cnt; i++) {
    if (map) {
      yaml_node_pair_t *p = y->data.mapping.pairs.start + i;
      yaml_node_t *k = yaml_document_get_node(d, p->key);
      if (k && k->type != YAML_SCALAR_NODE) { /* `? - a`: every key is read as text */
        why->key_line = (int64_t)k->start_mark.line + 1;
        why->key_col = (int64_t)k->start_mark.column + 1;
        free_node(n);
        return NULL;
      }
      n->keys[i] = convert(d, k, depth + 1, text, len, why);
      n->vals[i] = convert(d, yaml_document_get_node(d, p->value), depth + 1, text, len, why);
      n->n = i + 1;
      if (!n->keys[i] || !n->vals[i]) { free_node(n); return NULL; }
      /* a key twice: YAML forbids it and libyaml keeps both (the first
       * would win unseen) */
      for (int j = 0; j < i; j++)
        if (!strcmp(n->keys[j]->str, n->keys[i]->str)) {
          why->has_dup = true;
          snprintf(why->dup, sizeof why->dup, "%s", n->keys[i]->str);
          why->dup_first = n->keys[j]->line;
          why->key_line = n->keys[i]->line;
          why->key_col = n->keys[i]->col;
          free_node(n);
          return NULL;
        }
    } else {
      yaml_node_item_t it = y->data.sequence.items.start[i];
      n->vals[i] = convert(d, yaml_document_get_node(d, it), depth + 1, text, len, why);
      n->n = i + 1;
      if (!n->vals[i]) { free_node(n); return NULL; }
    }
  }
  return n;
}

spc_status spc_yaml_load(const char *name, const char *text, size_t len,
                         spc_ynode **root, spc_error *e) {
  yaml_parser_t p;
  yaml_document_t d;
  *root = NULL;
  if (!yaml_parser_initialize(&p)) return SPC_NOMEM(e);
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  if (!yaml_parser_load(&p, &d)) {
    spc_status s = spc_err(e, SPC_ERR_SPEC, name,
                           (int64_t)p.problem_mark.line + 1,
                           (int64_t)p.problem_mark.column + 1, "YAML: %s%s%s",
                           p.problem ? p.problem : "syntax error",
                           p.context ? " " : "", p.context ? p.context : "");
    yaml_parser_delete(&p);
    return s;
  }
  yaml_node_t *top = yaml_document_get_root_node(&d);
  spc_status s = SPC_OK;
  cvt_why why = {false, 0, 0, false, "", 0};
  if (!top) {
    s = spc_err(e, SPC_ERR_SPEC, name, 1, 1, "empty YAML document");
  } else {
    *root = convert(&d, top, 0, text, len, &why);
    if (!*root)
      s = why.nomem      ? SPC_NOMEM(e)
          : why.has_dup  ? spc_err(e, SPC_ERR_SPEC, name, why.key_line, why.key_col,
                                   "key '%s' appears twice in this mapping (first at line %lld)",
                                   why.dup, (long long)why.dup_first)
          : why.key_line ? spc_err(e, SPC_ERR_SPEC, name, why.key_line, why.key_col,
                                   "a key must be plain text, not a list or a mapping")
                         : spc_err(e, SPC_ERR_SPEC, name, 0, 0, "YAML nested too deeply");
  }
  yaml_document_delete(&d);
  yaml_parser_delete(&p);
  return s;
}

const spc_ynode *spc_ymap_get(const spc_ynode *map, const char *key) {
  if (!map || map->kind != SPC_Y_MAP) return NULL;
  for (int i = 0; i < map->n; i++)
    if (map->keys[i]->kind == SPC_Y_SCALAR && !strcmp(map->keys[i]->str, key))
      return map->vals[i];
  return NULL;
}

spc_status spc_yerr(spc_error *e, spc_status code, const char *name,
                    const spc_ynode *n, const char *key, const char *fmt, ...) {
  if (!e) return code;
  char msg[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  spc_err(e, code, name, n ? n->line : 0, n ? n->col : 0, "%s", msg);
  if (key) snprintf(e->key, sizeof e->key, "%s", key);
  return code;
}
