/* cnt_internal.h -- private to the binary containers (binsparse, npz):
 * what their pieces share beyond spc_containers.h.  Not installed. */
#ifndef CNT_INTERNAL_H
#define CNT_INTERNAL_H

#include "spc_containers.h"
#include <stdarg.h>

/* ---- cnt_finish.c ------------------------------------------------------ */
/* Every level of t is dense. */
SPC_INTERNAL bool spc_cnt_all_dense(const spc_tensor *t);

/* ---- cnt_json.c: JSON, a growing output buffer and a small DOM parser -- */

typedef struct jb {
  char *s;
  size_t n, cap;
  bool oom;
} jb;

SPC_INTERNAL void spc_cnt_jb_add(jb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal. */
SPC_INTERNAL void spc_cnt_jb_str(jb *b, const char *s);

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
  int type;
  bool b, isint;
  int64_t i;
  double d;
  char *s;   /* J_STR */
  char *key; /* member name inside an object */
  struct jv *kid, *next;
} jv;

SPC_INTERNAL void spc_cnt_jv_free(jv *v);
/* Parse NUL-terminated text; NULL when it is not one JSON value (*oom:
 * because memory ran out). */
SPC_INTERNAL jv *spc_cnt_json_parse(const char *s, bool *oom);
SPC_INTERNAL const jv *spc_cnt_jget(const jv *o, const char *key);
SPC_INTERNAL const char *spc_cnt_jgets(const jv *o, const char *key);
SPC_INTERNAL bool spc_cnt_jgeti(const jv *o, const char *key, int64_t *x);
SPC_INTERNAL int spc_cnt_jlen(const jv *a);

#endif
