/* spec.h -- format specs: level formats and tensor formats written in YAML
 * (DESIGN.md sections 1-2; the YAML schema is in docs/formats.md).
 *
 * A level spec names its stored arrays and workspaces, its properties, its
 * read-side level functions (begin, end, access, valid, locate, size) and
 * its write side (attribute queries, init, yield_pos, insert_coord,
 * finalize), each written in the statement language of docs/languages.md.
 * A tensor-format spec lists its levels (level format, per-level
 * overrides), its parameters with defaults, its coordinate remapping, the
 * conditions entries must satisfy (`requires`) and its fill.
 *
 * Loading parses and type-checks every function, query and remapping, so a
 * spec that loads is well-formed; errors name the file, line and column
 * inside the YAML and what was expected.  Built-in specs are compiled into
 * the library (formats/specs/, embedded at build time). */
#ifndef SPC_SPEC_H
#define SPC_SPEC_H

#include "spc_lang.h"

/* Level functions, in the order of the YAML keys. */
typedef enum spc_lfn_kind {
  SPC_LF_BEGIN, SPC_LF_END, SPC_LF_ACCESS, SPC_LF_VALID, SPC_LF_LOCATE,
  SPC_LF_SIZE, /* read side: expressions except locate (returns) */
  SPC_LF_INIT, SPC_LF_YIELD, SPC_LF_INSERT, SPC_LF_FINALIZE, /* write side */
  SPC_LF_YIELD_RUN, /* optional: the positions of the next n children of p,
                       inserted in order, consecutive; returns the first */
  SPC_LF_N
} spc_lfn_kind;

/* One function's source text and where it sits in its YAML file. */
typedef struct spc_lfn {
  char *text;  /* NULL: absent */
  lang_src at; /* file, line, col, indent of the text */
  bool required; /* "required": the tensor format must supply it */
} spc_lfn;

#define SPC_SPEC_MAX 8 /* arrays, workspaces, queries, params, requires */

typedef struct spc_named_type {
  char *name;
  lang_tname type;
} spc_named_type;

typedef struct spc_level_spec {
  char *name, *description, *file, *yaml;
  unsigned props; /* SPC_LP_* */
  bool pads;      /* positions may hold no component */
  int narrays, nwork, nqueries;
  spc_named_type arrays[SPC_SPEC_MAX], work[SPC_SPEC_MAX];
  spc_lfn queries[SPC_SPEC_MAX]; /* "select [*] -> ..." per parent position,
                                    "select [c] -> ..." per coordinate */
  spc_lfn fn[SPC_LF_N];
  /* a hash of its file name and YAML text (spc_specs_add; {0, 0}: none):
   * equal hashes, the same spec -- the conversion engine's routine cache
   * keys on it */
  uint64_t hash[2];
} spc_level_spec;

typedef struct spc_format_level {
  const spc_level_spec *lf;
  bool unique;           /* instance property (COO's root is not) */
  bool repeat;           /* "any order": repeats to fill the order */
  spc_lfn fn[SPC_LF_N];  /* overrides (offset's access) */
} spc_format_level;

typedef struct spc_format_spec {
  char *name, *description, *file, *yaml;
  int order; /* 0: any order */
  int nparams;
  char *pnames[SPC_SPEC_MAX];
  int64_t pdefaults[SPC_SPEC_MAX];
  spc_lfn remap; /* text NULL: identity */
  int nlevels;
  spc_format_level lv[SPC_MAX_ORDER];
  int nrequires;
  spc_lfn requires[SPC_SPEC_MAX];
  bool fill_zero; /* zero values are padding, not components */
  /* a hash of its file name, YAML text and its levels' specs' hashes
   * (spc_specs_add; {0, 0}: none) */
  uint64_t hash[2];
} spc_format_spec;

/* ---- the registry: built-in specs plus those loaded from files ---------- */
typedef struct spc_specs spc_specs;

/* A registry holding every built-in level and tensor format (parsed and
 * checked).  Owned by the caller. */
SPC_INTERNAL spc_status spc_specs_builtin(spc_specs **out, spc_error *e);
SPC_INTERNAL void spc_specs_free(spc_specs **r);
/* The registry's counts of levels and formats, and the entries added after
 * such counts freed (a fuzz harness adds one spec to the built-ins per
 * input instead of loading them again). */
SPC_INTERNAL void spc_specs_counts(const spc_specs *r, int *nlevels, int *nformats);
SPC_INTERNAL void spc_specs_truncate(spc_specs *r, int nlevels, int nformats);
/* Whether ls is one of the built-in levels, file and text (its hash): a
 * level a user wrote may lay its segments out in any order. */
SPC_INTERNAL bool spc_level_spec_builtin(const spc_level_spec *ls);
SPC_INTERNAL const spc_level_spec *spc_specs_level(const spc_specs *r,
                                                   const char *name);
SPC_INTERNAL const spc_format_spec *spc_specs_format(const spc_specs *r,
                                                     const char *name);
/* The tensor format whose name is nearest name (at most two edits), or
 * NULL: the "did you mean" of an unknown name. */
SPC_INTERNAL const char *spc_specs_format_near(const spc_specs *r, const char *name);
SPC_INTERNAL int spc_specs_nformats(const spc_specs *r);
SPC_INTERNAL const spc_format_spec *spc_specs_format_at(const spc_specs *r,
                                                        int k);
SPC_INTERNAL int spc_specs_nlevels(const spc_specs *r);
SPC_INTERNAL const spc_level_spec *spc_specs_level_at(const spc_specs *r,
                                                      int k);
/* Load a YAML text (a level format or a tensor format, told apart by its
 * first key) into the registry; *name receives the spec's name. */
SPC_INTERNAL spc_status spc_specs_add(spc_specs *r, const char *file,
                                      const char *text, size_t len,
                                      const char **name, spc_error *e);
SPC_INTERNAL spc_status spc_specs_add_file(spc_specs *r, const char *path,
                                           const char **name, spc_error *e);

/* Built-in YAML texts (generated at build time from formats/specs/). */
typedef struct spc_builtin_text {
  const char *file;
  const char *text;
} spc_builtin_text;
SPC_INTERNAL extern const spc_builtin_text spc_builtin_specs[];
SPC_INTERNAL extern const int spc_nbuiltin_specs;

/* ---- loading one spec (spec_level.c, spec_format.c) ---------------------- */
struct spc_ynode;
SPC_INTERNAL spc_status spc_level_spec_parse(const char *file,
                                             const struct spc_ynode *root,
                                             spc_level_spec **out,
                                             spc_error *e);
SPC_INTERNAL void spc_level_spec_free(spc_level_spec **s);
SPC_INTERNAL spc_status spc_format_spec_parse(const char *file,
                                              const struct spc_ynode *root,
                                              const spc_specs *levels,
                                              spc_format_spec **out,
                                              spc_error *e);
SPC_INTERNAL void spc_format_spec_free(spc_format_spec **s);

/* Shared by both: a scalar's text as a function source (copied). */
SPC_INTERNAL spc_status spc_lfn_from(const char *file,
                                     const struct spc_ynode *n,
                                     const char *key, spc_lfn *out,
                                     spc_error *e);
SPC_INTERNAL void spc_lfn_free(spc_lfn *f);
SPC_INTERNAL char *spc_strdup(const char *s);
/* Type-check a level function (expression or statements) in the names of
 * a level (p q c np N lo, the arrays, workspaces and query results), plus
 * extra index names (ancestor coordinates, for tensor-format overrides). */
SPC_INTERNAL spc_status spc_lfn_check(const spc_level_spec *ls,
                                      spc_lfn_kind k, const spc_lfn *f,
                                      const char *const *extra, int nextra,
                                      spc_error *e);

#endif
