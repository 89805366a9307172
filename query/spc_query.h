/* spc_query.h -- the attribute query language (DESIGN.md sections 2-3;
 * grammar, semantics and messages in docs/languages.md).
 *
 *   select [i] -> count(j) as nnz       distinct columns per row
 *   select [d] -> id() as used          the nonempty diagonals (DIA)
 *   select [] -> max(k) as width        the widest row (ELL)
 *
 * A query groups the components of a tensor by some of their (remapped)
 * coordinates and computes aggregates per group: count(x, ...) the number
 * of DISTINCT tuples of the named coordinates in the group, min(x), max(x),
 * id() = 1 for every nonempty group.  Results are dense i64 arrays over the
 * group space: row-major over the group coordinates' ranges (interval
 * analysis of the remapping), each coordinate offset by its lower bound.
 *
 * Files: query_parse.c (grammar and names), query_plan.c (one IR function
 * computing every aggregate from a COO source), query_eval.c (the
 * evaluator over a tensor), query_result.c (results and their lines). */
#ifndef SPC_QUERY_H
#define SPC_QUERY_H

#include "spc_remap.h"

typedef enum spc_agg_kind {
  SPC_AGG_COUNT = 0,
  SPC_AGG_MIN,
  SPC_AGG_MAX,
  SPC_AGG_ID
} spc_agg_kind;

typedef struct spc_query_agg {
  spc_agg_kind kind;
  const char *name; /* the `as` name */
  int nargs;
  const char *args[SPC_MAX_ORDER]; /* coordinate names */
  lang_node *at;                   /* position of the aggregate */
  lang_node *arg_at[SPC_MAX_ORDER];
  int arg_out[SPC_MAX_ORDER]; /* bound: remapping output of each arg */
} spc_query_agg;

typedef struct spc_query {
  lang_ast *ast;
  int ngroup;
  const char *group[SPC_MAX_ORDER];
  lang_node *group_at[SPC_MAX_ORDER];
  int group_out[SPC_MAX_ORDER]; /* bound: remapping output of each */
  int nagg;
  spc_query_agg *aggs;
} spc_query;

/* Parse a query; SPC_ERR_SPEC with line and column on a syntax error,
 * a duplicate group coordinate or result name, or a wrong arity. */
SPC_INTERNAL spc_status spc_query_parse(const lang_src *src, spc_query **out,
                                        spc_error *err);
SPC_INTERNAL void spc_query_free(spc_query **q);
/* Bind the query's coordinate names to r's outputs (group_out, arg_out);
 * SPC_ERR_SPEC naming an unknown coordinate and listing r's outputs. */
SPC_INTERNAL spc_status spc_query_bind(spc_query *q, const spc_remap *r,
                                       spc_error *err);

/* ---- planning: one IR function for all aggregates (query_plan.c) -------- */
enum {
  SPC_QUERY_SORTED = 1u << 0 /* components arrive sorted by (group...,
                                counted...) for every count(): no sort */
};

/* What the planned function looks like.  Parameters, in order:
 *   crd0 .. crd{N-1}  IN arrays (crd_ty[k]), the COO coordinates
 *   nnz               IN i64, the number of components
 *   one OUT i64 array per aggregate (out_<name>), G entries
 *   present           OUT i64 array, G entries (only when has_present:
 *                     some min/max; 1 marks a nonempty group). */
typedef struct spc_query_layout {
  int ngroup;
  int64_t lo[SPC_MAX_ORDER], ext[SPC_MAX_ORDER]; /* group ranges */
  int64_t ngroups;                               /* G = product of ext */
  int first_out;                                 /* param of aggregate 0 */
  bool has_present;
  int present_param;
} spc_query_layout;

typedef struct spc_query_shape {
  int order;
  int64_t dims[SPC_MAX_ORDER];
  ir_ty crd_ty[SPC_MAX_ORDER]; /* IR_I32 or IR_I64 */
  int64_t nnz;                 /* bounds counters: #i <= nnz - 1 */
  unsigned flags;              /* SPC_QUERY_SORTED */
  int64_t max_groups;          /* 0: spc_query_default_limit() */
  spc_counter_mode counter_mode;
} spc_query_shape;

/* Default largest group space: 2^31 entries, less when physical memory
 * is small (a quarter of it, in i64 entries). */
SPC_INTERNAL int64_t spc_query_default_limit(void);

/* Build the function computing q (bound to r) over a COO source of the
 * given shape.  SPC_ERR_UNSUPPORTED "group space of N entries is too large
 * to hold densely (group by ...)" past the limit, or when a group
 * coordinate has no finite range. */
SPC_INTERNAL spc_status spc_query_plan(const spc_query *q, const spc_remap *r,
                                       const spc_query_shape *shape,
                                       ir_func **out, spc_query_layout *lay,
                                       spc_error *err);

/* ---- results (query_result.c) ------------------------------------------- */
typedef struct spc_query_result {
  const char *name; /* the aggregate's `as` name */
  spc_agg_kind kind;
  int64_t *values; /* ngroups values, row-major over the groups */
} spc_query_result;

typedef struct spc_query_results {
  int nresults;
  spc_query_result *res;
  int ngroup;
  char *group_names[SPC_MAX_ORDER];
  int64_t lo[SPC_MAX_ORDER], ext[SPC_MAX_ORDER]; /* group k: lo .. lo+ext-1 */
  int64_t ngroups;
  int64_t *present; /* 1 for nonempty groups; NULL when not computed */
} spc_query_results;

/* public: declared in spconv.h */
SPC_API void spc_query_results_free(spc_query_results **r);
/* Result named name, or NULL. */
SPC_INTERNAL const spc_query_result *
spc_query_result_get(const spc_query_results *r, const char *name);
/* Coordinates of group g into coords[0..ngroup). */
SPC_INTERNAL void spc_query_group_coords(const spc_query_results *r, int64_t g,
                                         int64_t *coords);
/* Whether group g is nonempty (for result k: count/id > 0, else present). */
SPC_INTERNAL bool spc_query_nonempty(const spc_query_results *r, int k,
                                     int64_t g);
enum {
  SPC_QUERY_NONEMPTY = 1u << 0 /* iterate nonempty groups only */
};
/* Iterate result k as text lines "c0,c1<TAB>value" (no newline; one group
 * coordinate per group dimension, comma-separated; no coordinates before
 * the TAB for `select []`).  *g starts at 0; each call writes the next
 * line into buf and advances *g; false at the end. */
SPC_INTERNAL bool spc_query_next(const spc_query_results *r, int k,
                                 unsigned flags, int64_t *g, char *buf,
                                 size_t n);

/* ---- evaluation over a tensor (query_eval.c) ---------------------------- */
typedef struct spc_query_opts {
  const spc_remap_param *params; /* format parameters of the remapping */
  int nparams;
  unsigned flags;                /* SPC_QUERY_SORTED */
  int64_t max_groups;            /* 0: default */
  spc_counter_mode counter_mode; /* default SPC_COUNTER_DENSE */
  lang_src query_at, remap_at;   /* positions (file, line, col, indent)
                                    of the texts; text fields ignored */
} spc_query_opts;

/* Evaluate query over the components of coo (a COO tensor; other formats
 * are converted to COO first) after remap (NULL: identity over the names
 * i, j, k, ...), with the generic interpreter (ir_run).  *out is owned by
 * the caller (spc_query_results_free).  opts may be NULL. */
SPC_INTERNAL spc_status spc_query_eval(const char *query, const char *remap,
                                       const spc_tensor *coo,
                                       const spc_query_opts *opts,
                                       spc_query_results **out, spc_error *err);

#endif
