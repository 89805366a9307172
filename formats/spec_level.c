/* spec_level.c -- load a level-format spec from its YAML tree:
 *
 *   level: NAME
 *   description: TEXT
 *   properties: [ordered, unique, full, compact, branchless, locate, pads]
 *   arrays: {NAME: index|coord|value, ...}     stored with the tensor
 *   workspace: {NAME: index|coord, ...}        used while assembling
 *   read:  {begin: E, end: E, access: E, valid: E, locate: S, size: E}
 *   write: {queries: [Q, ...], init: S, yield_pos: S, insert_coord: S,
 *           finalize: S}
 *
 * E: an expression, S: statements (docs/languages.md).  Every function is
 * parsed and type-checked here. */
#include "spec.h"
#include "spec_yaml.h"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const fn_keys[SPC_LF_N] = {
    "begin", "end", "access", "valid", "locate", "size",
    "init", "yield_pos", "insert_coord", "finalize", "yield_run"};

char *spc_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = spc_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void spc_lfn_free(spc_lfn *f) {
  spc_free(f->text);
  f->text = NULL;
}

spc_status spc_lfn_from(const char *file, const spc_ynode *n, const char *key,
                        spc_lfn *out, spc_error *e) {
  if (n->kind != SPC_Y_SCALAR)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, key, "expected text (an expression or statements)");
  if (!(out->text = spc_strdup(n->str))) return SPC_NOMEM(e);
  out->required = !strcmp(n->str, "required");
  out->at = (lang_src){.text = out->text, .file = file, .line = n->bline,
                       .col = n->bcol, .indent = n->block ? n->bcol - 1 : 0};
  return SPC_OK;
}

/* Check that every key of map is one of keys. */
static spc_status known_keys(const char *file, const spc_ynode *map,
                             const char *const *keys, int nkeys,
                             const char *where, spc_error *e) {
  if (map->kind != SPC_Y_MAP)
    return spc_yerr(e, SPC_ERR_SPEC, file, map, where, "expected a mapping");
  for (int i = 0; i < map->n; i++) {
    int k = 0;
    while (k < nkeys && strcmp(map->keys[i]->str, keys[k])) k++;
    if (k == nkeys) {
      char list[256] = "";
      for (int j = 0; j < nkeys; j++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", keys[j]);
      return spc_yerr(e, SPC_ERR_SPEC, file, map->keys[i], where,
                      "unknown key '%s' (expected one of: %s)", map->keys[i]->str, list);
    }
  }
  return SPC_OK;
}

static spc_status props(const char *file, const spc_ynode *n,
                        spc_level_spec *ls, spc_error *e) {
  static const char *const names[] = {"ordered", "unique", "full", "compact",
                                      "branchless", "locate", "pads"};
  if (n->kind != SPC_Y_SEQ)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, "properties", "expected a list such as [ordered, unique]");
  for (int i = 0; i < n->n; i++) {
    int k = 0;
    while (k < 7 && (n->vals[i]->kind != SPC_Y_SCALAR || strcmp(n->vals[i]->str, names[k]))) k++;
    if (k == 7)
      return spc_yerr(e, SPC_ERR_SPEC, file, n->vals[i], "properties",
                      "unknown property (expected ordered, unique, full, compact, branchless, locate or pads)");
    if (k == 6) ls->pads = true;
    else ls->props |= 1u << k;
  }
  return SPC_OK;
}

/* An array's or workspace's name becomes part of C identifiers in the
 * emitted routines ("l1_crd"), within buffers of 64 bytes: a C identifier
 * of at most SPC_ARRAY_NAME_MAX bytes. */
#define SPC_ARRAY_NAME_MAX 40
static bool array_name_ok(const char *s) {
  return strlen(s) <= SPC_ARRAY_NAME_MAX && ir_ident_ok(s);
}

static spc_status named_types(const char *file, const spc_ynode *n,
                              const char *key, spc_named_type *out, int *cnt,
                              spc_error *e) {
  if (n->kind != SPC_Y_MAP)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, key, "expected NAME: index|coord|value entries");
  if (n->n > SPC_SPEC_MAX)
    return spc_yerr(e, SPC_ERR_SPEC, file, n, key, "at most %d entries", SPC_SPEC_MAX);
  for (int i = 0; i < n->n; i++) {
    const spc_ynode *v = n->vals[i];
    lang_tname t = v->kind == SPC_Y_SCALAR ? lang_tname_parse(v->str, strlen(v->str)) : LT_NONE;
    if (t == LT_NONE)
      return spc_yerr(e, SPC_ERR_SPEC, file, v, key,
                      "expected a type (index, coord, value, i32, i64, f64, ...)");
    if (!array_name_ok(n->keys[i]->str))
      return spc_yerr(e, SPC_ERR_SPEC, file, n->keys[i], key,
                      "'%.60s%s' is not a name: letters, digits and '_', not first a digit, at most %d bytes",
                      n->keys[i]->str, strlen(n->keys[i]->str) > 60 ? "..." : "", SPC_ARRAY_NAME_MAX);
    for (int j = 0; j < *cnt; j++)
      if (!strcmp(out[j].name, n->keys[i]->str))
        return spc_yerr(e, SPC_ERR_SPEC, file, n->keys[i], key, "'%s' appears twice", out[j].name);
    if (!(out[*cnt].name = spc_strdup(n->keys[i]->str))) return SPC_NOMEM(e);
    out[(*cnt)++].type = t;
  }
  return SPC_OK;
}

static spc_status fns(const char *file, const spc_ynode *sec, int lo, int hi,
                      spc_level_spec *ls, spc_error *e) {
  for (int k = lo; k < hi; k++) {
    const spc_ynode *v = spc_ymap_get(sec, fn_keys[k]);
    if (!v) continue;
    spc_status s = spc_lfn_from(file, v, fn_keys[k], &ls->fn[k], e);
    if (s) return s;
  }
  return SPC_OK;
}

void spc_level_spec_free(spc_level_spec **p) {
  if (!p || !*p) return;
  spc_level_spec *s = *p;
  spc_free(s->name);
  spc_free(s->description);
  spc_free(s->file);
  spc_free(s->yaml);
  for (int i = 0; i < s->narrays; i++) spc_free(s->arrays[i].name);
  for (int i = 0; i < s->nwork; i++) spc_free(s->work[i].name);
  for (int i = 0; i < s->nqueries; i++) spc_lfn_free(&s->queries[i]);
  for (int k = 0; k < SPC_LF_N; k++) spc_lfn_free(&s->fn[k]);
  spc_free(s);
  *p = NULL;
}

static spc_status parse_body(const char *file, const spc_ynode *root,
                             spc_level_spec *ls, spc_error *e) {
  static const char *const top[] = {"level", "description", "properties", "arrays",
                                    "workspace", "read", "write"};
  static const char *const wr[] = {"queries", "init", "yield_pos", "insert_coord", "finalize",
                                   "yield_run"};
  spc_status s = known_keys(file, root, top, 7, NULL, e);
  const spc_ynode *n = spc_ymap_get(root, "level");
  if (!s && (!n || n->kind != SPC_Y_SCALAR || !n->str[0]))
    s = spc_yerr(e, SPC_ERR_SPEC, file, n ? n : root, "level", "expected the level format's name");
  if (!s && !(ls->name = spc_strdup(n->str))) s = SPC_NOMEM(e);
  if (!s && (n = spc_ymap_get(root, "description")) && n->kind == SPC_Y_SCALAR &&
      !(ls->description = spc_strdup(n->str)))
    s = SPC_NOMEM(e);
  if (!s && (n = spc_ymap_get(root, "properties"))) s = props(file, n, ls, e);
  if (!s && (n = spc_ymap_get(root, "arrays")))
    s = named_types(file, n, "arrays", ls->arrays, &ls->narrays, e);
  if (!s && (n = spc_ymap_get(root, "workspace")))
    s = named_types(file, n, "workspace", ls->work, &ls->nwork, e);
  const spc_ynode *rd = spc_ymap_get(root, "read"), *w = spc_ymap_get(root, "write");
  if (!s && !rd) s = spc_yerr(e, SPC_ERR_SPEC, file, root, "read", "missing: every level needs read functions");
  if (!s) s = known_keys(file, rd, fn_keys, SPC_LF_INIT, "read", e);
  if (!s) s = fns(file, rd, 0, SPC_LF_INIT, ls, e);
  if (!s && w) s = known_keys(file, w, wr, 6, "write", e);
  if (!s && w) s = fns(file, w, SPC_LF_INIT, SPC_LF_N, ls, e);
  if (!s && w && (n = spc_ymap_get(w, "queries"))) {
    if (n->kind != SPC_Y_SEQ || n->n > SPC_SPEC_MAX)
      return spc_yerr(e, SPC_ERR_SPEC, file, n, "queries", "expected a list of queries");
    for (int i = 0; i < n->n && !s; i++)
      if (!(s = spc_lfn_from(file, n->vals[i], "queries", &ls->queries[i], e))) ls->nqueries++;
  }
  static const spc_lfn_kind need[] = {SPC_LF_BEGIN, SPC_LF_END, SPC_LF_ACCESS, SPC_LF_SIZE, SPC_LF_YIELD};
  for (int i = 0; i < 5 && !s; i++)
    if (!ls->fn[need[i]].text)
      s = spc_yerr(e, SPC_ERR_SPEC, file, need[i] == SPC_LF_YIELD && w ? w : rd,
                   fn_keys[need[i]], "missing: a level format needs %s", fn_keys[need[i]]);
  for (int k = 0; k < SPC_LF_N && !s; k++)
    if (ls->fn[k].text && !ls->fn[k].required)
      s = spc_lfn_check(ls, (spc_lfn_kind)k, &ls->fn[k], NULL, 0, e);
  return s;
}

spc_status spc_level_spec_parse(const char *file, const spc_ynode *root,
                                spc_level_spec **out, spc_error *e) {
  *out = NULL;
  spc_level_spec *ls = spc_calloc(1, sizeof *ls);
  if (!ls) return SPC_NOMEM(e);
  spc_status s = (ls->file = spc_strdup(file)) ? parse_body(ls->file, root, ls, e) : SPC_NOMEM(e);
  if (s) spc_level_spec_free(&ls);
  *out = ls;
  return s;
}
