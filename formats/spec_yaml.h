/* spec_yaml.h -- a YAML document as a small tree with source positions,
 * loaded with libyaml.  Used by the format spec loader. */
#ifndef SPEC_YAML_H
#define SPEC_YAML_H

#include "spc_impl.h"

typedef enum spc_ykind { SPC_Y_SCALAR, SPC_Y_SEQ, SPC_Y_MAP } spc_ykind;

typedef struct spc_ynode spc_ynode;
struct spc_ynode {
  spc_ykind kind;
  int64_t line, col;   /* 1-based position of the node in the file */
  int64_t bline, bcol; /* where the scalar's text starts (block scalars:
                          the first content line and its indentation) */
  bool block;          /* a literal or folded block scalar */
  char *str;           /* scalar text (NUL-terminated) */
  int n;               /* entries of a sequence or mapping */
  spc_ynode **keys;    /* mapping keys (scalars), NULL for sequences */
  spc_ynode **vals;    /* mapping values or sequence items */
};

/* Parse one YAML document.  name is used in messages.  *root owns the
 * whole tree; free with spc_ynode_free. */
SPC_INTERNAL spc_status spc_yaml_load(const char *name, const char *text,
                                      size_t len, spc_ynode **root,
                                      spc_error *e);
SPC_INTERNAL void spc_ynode_free(spc_ynode **n);
/* Value of key in a mapping, or NULL. */
SPC_INTERNAL const spc_ynode *spc_ymap_get(const spc_ynode *map,
                                           const char *key);
/* Error at node n: "name:line:col: key: msg". */
SPC_INTERNAL spc_status spc_yerr(spc_error *e, spc_status code,
                                 const char *name, const spc_ynode *n,
                                 const char *key, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
