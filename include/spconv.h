/* spconv.h -- public interface of the spconv library.
 *
 * A sparse tensor is a coordinate hierarchy: a stack of levels, one per stored
 * dimension, each stored in a level format (dense, compressed, singleton, ...).
 * See README.md and DESIGN.md for the model; the glossary in README.md fixes
 * the vocabulary used here:
 *
 *   dimension  an axis of the canonical tensor (row, column, mode k)
 *   level      an axis of the stored hierarchy (after remapping / mode order)
 *   pos        a level's position array (edges from parent to children)
 *   crd        a level's coordinate array
 *   val        the value array, one value per leaf position
 *
 * Conventions:
 *   - Every function that can fail returns spc_status and fills a caller-owned
 *     spc_error (which may be NULL).  The library never prints, exits or aborts.
 *   - Every object has one create and one free; free functions accept NULL and
 *     clear the caller's handle.
 *   - Arrays returned by accessors are borrowed: they belong to the tensor and
 *     live until it is freed.
 */
#ifndef SPCONV_H
#define SPCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SPC_API __attribute__((visibility("default")))
#else
#define SPC_API
#endif

#define SPCONV_VERSION "0.1.0"
#define SPC_MAX_ORDER 16 /* highest tensor order supported */

/* ---- status and errors -------------------------------------------------- */

typedef enum spc_status {
  SPC_OK = 0,
  SPC_NOT_HANDLED = 1,       /* a fast path declines: try the next path */
  SPC_ERR_INPUT = -1,        /* malformed or inconsistent input data */
  SPC_ERR_SPEC = -2,         /* invalid format spec */
  SPC_ERR_UNSUPPORTED = -3,  /* valid request this build cannot serve */
  SPC_ERR_NOMEM = -4,        /* allocation failed */
  SPC_ERR_IO = -5,           /* open/read/write/rename failed */
  SPC_ERR_OVERFLOW = -6,     /* a size or index does not fit */
  SPC_ERR_ARG = -7,          /* invalid argument from the caller */
  SPC_ERR_INTERNAL = -8      /* a broken invariant (a bug) */
} spc_status;

/* Error record, owned by the caller.  Fields not known are 0 / empty. */
typedef struct spc_error {
  spc_status code;
  char file[512]; /* input file or spec file */
  int64_t line;   /* 1-based line, 0 when not applicable */
  int64_t col;    /* 1-based column, 0 when not applicable */
  char key[128];  /* spec key or option name, when relevant */
  char msg[512];  /* what was found and what was expected */
} spc_error;

SPC_API const char *spc_status_name(spc_status s);
/* "file:line:col: msg" (parts omitted when unknown).  Returns buf. */
SPC_API const char *spc_error_string(const spc_error *e, char *buf, size_t n);
SPC_API void spc_error_clear(spc_error *e);

/* ---- memory ------------------------------------------------------------- */
/* Arrays of 4 MiB or more (the library's and the generated routines') are
 * advised to transparent huge pages on Linux unless the environment holds
 * SPCONV_HUGEPAGES=0; this says which holds now. */
SPC_API int spc_hugepages_on(void);  /* 1: on, 0: off */
/* Whether this is a virtual machine whose balloon device hands free pages
 * back to the hypervisor (virtio-balloon free page reporting): there a
 * fresh huge page faults on the host too, several times slower than fresh
 * 4 KiB pages, so a program that allocates once (the spconv command) is
 * faster without the hint.  sysfs: "/sys", or NULL for it. */
SPC_API int spc_free_page_reporting(const char *sysfs); /* 1: yes */

/* HDF5's own printing of its error stack off for the whole process.  The
 * library's calls are quiet anyway (their messages go to spc_error) and
 * leave the caller's setting as they found it; but after a corrupt .bsp.h5
 * HDF5 1.10 may fail to shut down cleanly at exit and print a stack of
 * "infinite loop closing library" there.  A program that prints nothing of
 * HDF5's (the command line) calls this once. */
SPC_API void spc_hdf5_quiet(void);

/* ---- element types ------------------------------------------------------ */

typedef enum spc_vtype {
  SPC_PATTERN = 0, /* no values: every stored component is 1 */
  SPC_I64,         /* int64_t */
  SPC_U64,         /* uint64_t (integer files with values above INT64_MAX) */
  SPC_F32,         /* float */
  SPC_F64,         /* double */
  SPC_C128,        /* double complex, stored as two doubles (re, im) */
  SPC_VTYPE_AUTO = -1
} spc_vtype;

typedef enum spc_itype { SPC_IDX32 = 32, SPC_IDX64 = 64 } spc_itype;

typedef enum spc_symmetry {
  SPC_GENERAL = 0,
  SPC_SYMMETRIC,
  SPC_SKEW,
  SPC_HERMITIAN
} spc_symmetry;

/* How entries with equal coordinates combine where they meet. */
typedef enum spc_dup {
  SPC_DUP_SUM = 0,
  SPC_DUP_FIRST,
  SPC_DUP_LAST,
  SPC_DUP_MIN,
  SPC_DUP_MAX,
  SPC_DUP_ERROR
} spc_dup;

SPC_API size_t spc_vtype_size(spc_vtype t);  /* bytes per value (0: pattern) */
SPC_API const char *spc_vtype_name(spc_vtype t);
SPC_API int spc_vtype_parse(const char *name, spc_vtype *t); /* 0 ok, -1 unknown */
SPC_API const char *spc_symmetry_name(spc_symmetry s);
SPC_API const char *spc_dup_name(spc_dup d);
SPC_API int spc_dup_parse(const char *name, spc_dup *d);

/* ---- the tensor --------------------------------------------------------- */

typedef struct spc_tensor spc_tensor;

SPC_API void spc_tensor_free(spc_tensor **t);

SPC_API int spc_tensor_order(const spc_tensor *t);
SPC_API int64_t spc_tensor_dim(const spc_tensor *t, int d);
SPC_API const char *spc_tensor_format(const spc_tensor *t); /* "coo", "dense" */
SPC_API spc_vtype spc_tensor_vtype(const spc_tensor *t);
SPC_API spc_symmetry spc_tensor_symmetry(const spc_tensor *t);
/* True when the values are booleans held as int64 0 / 1 (a bool .npz, a
 * binsparse bint8 array): duplicates summed combine by OR (SciPy's and
 * GraphBLAS's plus on bool), and the .npz and .bsp.h5 writers store them
 * as bool / bint8 again.  Conversions and spc_tensor_combine keep it. */
SPC_API int spc_tensor_boolean(const spc_tensor *t); /* 1: yes */
/* Number of stored components (leaf positions). */
SPC_API int64_t spc_tensor_nstored(const spc_tensor *t);
/* Bytes held by the tensor's level arrays and values. */
SPC_API int64_t spc_tensor_bytes(const spc_tensor *t);
SPC_API int spc_tensor_nlevels(const spc_tensor *t);
/* Level format name of level l ("dense", "compressed", "singleton"). */
SPC_API const char *spc_tensor_level_format(const spc_tensor *t, int l);
/* Arrays of level l: how many, and the name of the k-th ("pos", "crd",
 * or what the level's spec names them). */
SPC_API int spc_tensor_level_narrays(const spc_tensor *t, int l);
SPC_API const char *spc_tensor_level_array_name(const spc_tensor *t, int l, int k);
/* Dimension stored by level l (-1: a level whose coordinate is computed
 * from several dimensions, e.g. DIA's diagonal offset). */
SPC_API int spc_tensor_level_dim(const spc_tensor *t, int l);
/* Borrow level l's array NAME ("pos", "crd"); SPC_ERR_ARG when absent. */
SPC_API spc_status spc_tensor_level_array(const spc_tensor *t, int l,
                                          const char *name, const void **data,
                                          spc_itype *type, int64_t *len);
/* Borrow the value array (NULL for pattern); *n = number of values. */
SPC_API const void *spc_tensor_values(const spc_tensor *t, int64_t *n);

/* Create an order-N COO tensor with room for nnz components; the arrays are
 * allocated (widths chosen from dims and nnz) and owned by the tensor; fill
 * them through spc_tensor_level_array_mut / spc_tensor_values_mut. */
SPC_API spc_status spc_tensor_create_coo(int order, const int64_t *dims,
                                         int64_t nnz, spc_vtype vt,
                                         spc_tensor **out, spc_error *err);
SPC_API void *spc_tensor_level_array_mut(spc_tensor *t, int l, const char *name);
SPC_API void *spc_tensor_values_mut(spc_tensor *t);

/* Structural check: pos monotone, crd in range, order and uniqueness where a
 * level's properties promise them.  SPC_ERR_INPUT with a message otherwise. */
SPC_API spc_status spc_tensor_check(const spc_tensor *t, spc_error *err);

/* Expand symmetric / skew / hermitian storage to general (a new COO).  A
 * dense layout (an array file) gives its nonzeros: its zeros are padding. */
SPC_API spc_status spc_tensor_expand(const spc_tensor *t, spc_tensor **out,
                                     spc_error *err);
/* A new COO holding t's stored components, dropping explicit zeros when
 * drop_zeros (used when leaving a dense format). */
SPC_API spc_status spc_tensor_to_coo(const spc_tensor *t, int drop_zeros,
                                     spc_tensor **out, spc_error *err);
/* A new COO, sorted lexicographically by dimension order, with entries of
 * equal coordinates combined by policy (SPC_DUP_ERROR: SPC_ERR_INPUT naming
 * the first duplicate).  A pattern summed (SPC_DUP_SUM) whose coordinates
 * repeat becomes int64 counts, every component being 1 (as SciPy reads it);
 * without repeats it stays a pattern. */
/* SciPy's order of a matrix's duplicates (a plain COO matrix with float or
 * complex values; anything else is left as it is): each run of three or
 * more entries of one coordinate, in a row of more than 16 entries, has
 * its values moved among its own positions so that adding them in storage
 * order -- as spc_tensor_combine and every conversion do -- adds them in
 * the order SciPy's csr_matrix(coo) does (its rows sorted by libstdc++'s
 * std::sort, which is not stable past 16 entries), bit for bit SciPy's
 * sums. Coordinates do not move. Symmetric, skew or hermitian storage
 * with duplicates is first expanded (*t replaced by a general COO, as
 * SciPy's mmread expands it: the stored entries, then their mirrors).
 * *moved (may be NULL) counts the runs whose values moved. Cost: one pass
 * where the entries come strictly increasing by rows or by columns (no
 * duplicates: most files); else the entries counted by rows (sorted by row
 * where the rows are too many for an array) and std::sort replayed only
 * on the long rows holding a coordinate three times. */
SPC_API spc_status spc_coo_scipy_dup_order(spc_tensor **t, int *moved, spc_error *err);
SPC_API spc_status spc_tensor_combine(const spc_tensor *t, spc_dup policy,
                                      spc_tensor **out, spc_error *err);

/* ---- iteration over stored components (any format, via level functions) -- */

typedef struct spc_iter spc_iter;
SPC_API spc_status spc_iter_create(const spc_tensor *t, spc_iter **it,
                                   spc_error *err);
/* Next stored component: coords[0..order-1] in dimension order, *val points
 * at its value (NULL for pattern).  Returns 1, or 0 at the end. */
SPC_API int spc_iter_next(spc_iter *it, int64_t *coords, const void **val);
SPC_API void spc_iter_free(spc_iter **it);

/* ---- attribute queries (docs/languages.md) -------------------------------
 * `select [g1, ...] -> count(x) as nnz, max(y) as w, id() as used` over the
 * components of t (symmetric storage expanded first, a dense layout's zeros
 * dropped: its padding), optionally after a
 * coordinate remapping such as "(i,j) -> (j - i as d, i, j)".  Results are
 * dense int64 arrays over the group space (row-major; group k ranges over
 * lo[k] .. lo[k]+ext[k]-1). */
typedef struct spc_query_results spc_query_results;

SPC_API spc_status spc_tensor_query(const spc_tensor *t, const char *query,
                                    const char *remap,
                                    const char *const *param_names,
                                    const int64_t *param_values, int nparams,
                                    spc_query_results **out, spc_error *err);
SPC_API void spc_query_results_free(spc_query_results **r);
SPC_API int spc_query_count(const spc_query_results *r); /* aggregates */
SPC_API const char *spc_query_name(const spc_query_results *r, int k);
SPC_API const int64_t *spc_query_values(const spc_query_results *r, int k);
SPC_API int64_t spc_query_ngroups(const spc_query_results *r);
/* Group dimensions; lo/ext (may be NULL) receive ranges and names. */
SPC_API int spc_query_groups(const spc_query_results *r, int64_t *lo,
                             int64_t *ext, const char **names);
/* Is group g nonempty for aggregate k? */
SPC_API int spc_query_nonempty_group(const spc_query_results *r, int k,
                                     int64_t g);

/* ---- format specs (docs/formats.md) --------------------------------------
 * Load and check a user's YAML spec (a level format or a tensor format)
 * against the built-in level formats: every function, query and remapping
 * is parsed and type-checked.  name (may be NULL) receives the spec's
 * name; errors name the file, line and column. */
SPC_API spc_status spc_spec_check_file(const char *path, char *name,
                                       size_t name_len, spc_error *err);
/* The same with the user's level formats in level_files loaded first (a
 * tensor format whose levels are not built in). */
SPC_API spc_status spc_spec_check_file_with(const char *path, const char *const *level_files,
                                            int nlevel_files, char *name, size_t name_len,
                                            spc_error *err);

/* ---- formats and conversion (docs/formats.md, README "Converting") -------
 * A format is a built-in name ("csr", "dia", "bcsr", ...; spc_format_*
 * list them) or the path of a user's YAML tensor-format spec (a name
 * ending in .yaml / .yml or holding a '/').  Level formats the spec uses
 * that are not built in are loaded from opts->spec_files first. */
typedef enum spc_engine {
  SPC_ENGINE_AUTO = 0, /* factory where it exists, else JIT, else generic */
  SPC_ENGINE_GENERIC,  /* the IR interpreter: any spec, no compiler */
  SPC_ENGINE_FACTORY,  /* routines compiled into the library at build time */
  SPC_ENGINE_JIT       /* emitted C compiled at run time, cached on disk */
} spc_engine;
SPC_API const char *spc_engine_name(spc_engine g);
SPC_API int spc_engine_parse(const char *name, spc_engine *g); /* 0 ok */

#define SPC_MAX_PARAMS 8
typedef struct spc_convert_info spc_convert_info;
typedef struct spc_convert_opts {
  spc_dup dup;              /* duplicates of the source (default: sum) */
  spc_engine engine;        /* default: auto */
  int no_jit;               /* never compile at run time */
  int no_read_back;         /* a result in a user's level (not a built-in
                               one) is read back through it and must give
                               the same arrays, else SPC_ERR_SPEC naming
                               the level; 1: not checked (a level's write
                               side tested alone) */
  const char *jit_dir;      /* JIT cache; NULL: $SPCONV_JIT_DIR, else
                               $XDG_CACHE_HOME/spconv/jit, else
                               ~/.cache/spconv/jit */
  int nparams;              /* format parameters (block sizes, ...) */
  const char *param_names[SPC_MAX_PARAMS];
  int64_t param_values[SPC_MAX_PARAMS];
  int nspec_files;          /* YAML level formats a user format needs */
  const char *spec_files[SPC_MAX_PARAMS];
  int64_t max_positions;    /* refuse a level with more positions ("too
                               large"); 0: physical memory / 32 (2^31-1
                               where it is unknown) */
  int spw;                  /* order the components in the sparse
                               workspace: SPC_SPW_HASH, SPC_SPW_LIST or
                               SPC_SPW_BUCKET (SPC_SPW_NONE: one sort of
                               all of them, unless mem is set; then the
                               workspace takes the bucket strategy) */
  int64_t acc;              /* workspace accumulator capacity (points);
                               0: from mem */
  int64_t mem;              /* workspace memory budget in bytes (runs past
                               it spill to temporary files); 0: 1/4 RAM.
                               Where a conversion streams under it (a file
                               in blocks, the builder), the output's arrays
                               past a quarter of it live in temporary
                               files in $TMPDIR (shared mappings, freed by
                               spc_tensor_free), not in memory */
  int plan;                 /* SPC_PLAN_AUTO: the counting path where the
                               target's levels allow it (no sort), a
                               source out of order bucketed first as its
                               size suggests; SPC_PLAN_SORT: always the
                               sort path; SPC_PLAN_ROWS, SPC_PLAN_RADIX:
                               counting, a source out of order bucketed by
                               rows and sorted in cache, or by a radix
                               sort of the child coordinate;
                               SPC_PLAN_INPLACE, SPC_PLAN_PARTITION,
                               SPC_PLAN_SCATTER: a source read through
                               its own levels (CSR to CSC) placed through
                               about 256 buckets of the target's parents
                               copied into the result's own arrays, or
                               through a COO copy in cache-sized buckets,
                               or straight from the source (auto: in
                               place when the scatter's write streams
                               exceed the L2 and the child level allows;
                               else the COO copy past 4 x the last-level
                               cache where fresh memory is fast) */
  int order;                /* spconv gen (spc_gen_source): the order of the
                               tensors when both formats take any order (coo,
                               csf, dense, a YAML format without `order:`);
                               0: 2.  Formats of a fixed order take theirs */
  int nmodes;               /* a mode order for a format without a remapping */
  int modes[SPC_MAX_ORDER]; /* (csf, coo, dense): level l stores mode modes[l] */
  spc_convert_info *info;   /* filled when non-NULL (below) */
} spc_convert_opts;
enum { SPC_SPW_NONE = 0, SPC_SPW_HASH = 1, SPC_SPW_LIST = 2, SPC_SPW_BUCKET = 3 };
enum { SPC_PLAN_AUTO = 0, SPC_PLAN_SORT = 1, SPC_PLAN_ROWS = 2, SPC_PLAN_RADIX = 3,
       SPC_PLAN_PARTITION = 4, SPC_PLAN_SCATTER = 5, SPC_PLAN_INPLACE = 6 };

/* What a conversion did, for --verbose. */
struct spc_convert_info {
  spc_engine used;          /* the slowest engine that ran a routine */
  int routines;             /* routines run */
  int jit_compiled;         /* of them compiled now (not from the cache) */
  int routines_cached;      /* of them built earlier in this process (the
                               routine cache: no IR built, no lookup) */
  char notice[256];         /* a one-line notice (e.g. no compiler) or "" */
  struct {                  /* the sparse workspace, when used */
    int64_t flushes, merges, spilled_runs, spilled_bytes, peak_bytes;
  } spw;
  char plan[256];            /* how the components were ordered: "counting
                               ...", "sort ..." or "sparse workspace" */
  int mapped_arrays;        /* under a budget (mem): the output's arrays */
  int64_t mapped_bytes;     /* kept in temporary files, and their bytes */
};

SPC_API void spc_convert_opts_init(spc_convert_opts *o);
/* Convert src (any tensor) to FORMAT.  The result owns everything it
 * needs (the spec included); refusals are SPC_ERR_UNSUPPORTED with a
 * message saying "cannot ..." or "too large".  Duplicates combine by
 * o->dup; a pattern summed whose coordinates repeat gives int64 counts
 * (as spc_tensor_combine). */
SPC_API spc_status spc_convert_to(const spc_tensor *src, const char *format,
                                  const spc_convert_opts *o, spc_tensor **out,
                                  spc_error *err);
/* Exact bytes src would take in FORMAT (level arrays and values), from
 * the target levels' attribute queries and init functions: the
 * components are ordered and the levels sized, nothing is placed and no
 * value array is made. */
SPC_API spc_status spc_convert_size(const spc_tensor *src, const char *format,
                                    const spc_convert_opts *o, int64_t *bytes,
                                    spc_error *err);
/* Built-in tensor formats: count, and per index name, order (0: any),
 * one-line description and YAML text. */
SPC_API int spc_format_count(void);
SPC_API const char *spc_format_name(int k);
SPC_API int spc_format_order(int k);
SPC_API const char *spc_format_description(int k);
/* YAML of a built-in tensor or level format by name ("level:NAME": the
 * level format, where a tensor format has the same name, e.g. dense);
 * NULL when unknown. */
SPC_API const char *spc_format_yaml(const char *name);
/* Standalone C99 source converting FROM to TO with values of type vt
 * (README "spconv gen"); o (may be NULL) supplies TO's parameters, spec
 * files and the order (o->order) for formats of any order.  *text is
 * malloc'ed: the caller frees it. */
SPC_API spc_status spc_gen_source(const char *from, const char *to,
                                  spc_vtype vt, const spc_convert_opts *o,
                                  char **text, spc_error *err);
/* CUDA source (a .cu file, README "CUDA") of KERNEL ("spmv" or "spgemm")
 * for matrix FORMAT (a built-in name or a YAML path, with o's spec files),
 * made from the format's read-side level functions; needs no CUDA to
 * write.  *text is malloc'ed: the caller frees it. */
SPC_API spc_status spc_gen_cuda_source(const char *format, const char *kernel,
                                       const spc_convert_opts *o, char **text,
                                       spc_error *err);

/* ---- kernels (README "Kernels") -------------------------------------------
 * y = A x (transpose: A^T x) for a matrix in any format, through an IR
 * routine made from the format's read-side level functions; a matrix not
 * yet in a spec format (a COO just read) is converted to opts->format
 * (default csr) first.  x and y are double arrays, or (re, im) pairs when
 * A is complex; y gets A's row count (column count transposed); x and y
 * must not overlap (SPC_ERR_ARG).
 * C = A B in a loop order (opts->algo): Gustavson (i,k,j) with a dense or
 * hash row workspace (opts->workspace), inner products (i,j,k) or outer
 * products (k,i,j) through the sparse workspace; auto picks by an
 * asymptotic cost model (spc_spgemm_explain).  Operands are converted to
 * the formats the loop order walks (CSR, CSC) as needed; two phases
 * (symbolic, numeric), rows over OpenMP threads; the structure is the
 * symbolic product in every algorithm (an entry whose products cancel is
 * stored); values double (complex when an operand is; wrapping int64 when
 * both are integer); the result in out_format (NULL: csr). */
enum {
  SPC_SPGEMM_AUTO = 0,  /* the cost model's choice */
  SPC_SPGEMM_GUSTAVSON, /* (i,k,j): A csr, B csr */
  SPC_SPGEMM_INNER,     /* (i,j,k): A csr, B csc, sorted merges */
  SPC_SPGEMM_OUTER      /* (k,i,j): A csc, B csr, the sparse workspace */
};
enum {
  SPC_SPGEMM_WS_AUTO = 0, /* hash when B's columns far outnumber a row's products */
  SPC_SPGEMM_WS_DENSE,    /* a marker and an accumulator over B's columns */
  SPC_SPGEMM_WS_HASH,     /* open addressing sized from the row's count */
  SPC_SPGEMM_WS_BITMAP    /* dense, each row's columns the OR of its B rows'
                             bitmaps (dense and auto take it by themselves
                             where B's rows hold two or more entries per
                             64-column word of their spans) */
};
/* SpMV schedules (README "Kernels"): how the threads share the work.
 *  rows:      the top level's positions in equal contiguous ranges, one per
 *             thread (CSR: equal numbers of rows);
 *  positions: the positions of the level below the top (CSR: the
 *             nonzeros) in equal chunks; a parent whose children cross a
 *             chunk border is summed in parts (per-thread partials added
 *             in thread order), so floating-point sums of such a row may
 *             round differently from rows; needs a `compact` second level,
 *             else rows runs (spc_kernel_info.note says so);
 *  auto:      rows; where equal rows would give a thread more than 1.2
 *             times its share of those positions and 4096 or more over
 *             it, rows balanced by them (whole rows, each border at the
 *             row end nearest an equal share): never a row split, so each
 *             row is summed left to right by one thread, SciPy's order
 *             (CSR: one thread's bits on any thread count); rows on one
 *             thread.  The plan is kept with A for the next product on as
 *             many threads.  Then, for double values where each entry of
 *             y is one row's (CSR, DCSR; CSC, DCSC transposed), rows of 24
 *             entries or more on average and sampled values and x whose
 *             products are nonnegative: lanes (used says so), each row's
 *             lanes kept only where all its products are nonnegative, it
 *             holds at most 4096 and the sum is at most DBL_MAX / 4 --
 *             then within 5.7e-13 of the left-to-right sum -- and summed
 *             left to right (SciPy's bits) otherwise;
 *  lanes:     rows, each parent's products summed in four partial sums
 *             (its k-th stored child into lane k mod 4, the lanes added as
 *             (l0 + l1) + (l2 + l3), then into y): the add chain of an
 *             in-order sum broken, 1.6-2.4x rows on cache-resident CSR;
 *             not the left-to-right order of rows (or SciPy), so the
 *             last bits may differ; only where y's index is fixed under the
 *             innermost level (CSR; CSC transposed), else rows runs
 *             (spc_kernel_info.used says which, .note why).
 * Each schedule is deterministic: one result, bit for bit, per schedule
 * and thread count, on every engine. */
typedef enum spc_schedule {
  SPC_SCHED_AUTO = 0,
  SPC_SCHED_ROWS = 1,
  SPC_SCHED_POSITIONS = 2,
  SPC_SCHED_LANES = 3
} spc_schedule;
SPC_API const char *spc_schedule_name(spc_schedule s);
/* "auto", "rows", "positions" or "lanes" -> *s; nonzero when unknown. */
SPC_API int spc_schedule_parse(const char *name, spc_schedule *s);
/* What an SpMV did, for --verbose. */
typedef struct spc_kernel_info {
  spc_schedule used; /* the schedule that ran (never auto) */
  int threads;       /* the threads that ran */
  char note[256];    /* why auto chose it, or why positions fell back; "" */
  int paired;        /* spmv, rows: 1 when rows ran two at a time (two add
                        chains, each row still summed left to right: the
                        same bits); formats whose y index is a unique top
                        level's coordinate, rows of 24 entries on average */
} spc_kernel_info;
typedef struct spc_kernel_opts {
  spc_engine engine;
  int no_jit;
  int threads;           /* 0: one */
  const char *format;    /* spmv: the format A runs in when A is not one */
  spc_schedule schedule; /* spmv: 0 (auto), rows, positions or lanes */
  spc_kernel_info *info; /* spmv, spgemm: filled when non-NULL (spgemm: the
                            threads and, for gustavson and inner, a note on
                            the bitmap plan or unsorted rows) */
  int algo;              /* spgemm: SPC_SPGEMM_* (0: auto) */
  int workspace;         /* spgemm, gustavson: SPC_SPGEMM_WS_* (0: auto) */
  int unsorted;          /* spgemm, gustavson into csr: each row's columns in the
                            order found, as SciPy and CXSparse leave them (the
                            result's column level then has no ORDERED); the
                            values are the sorted result's, entry for entry */
} spc_kernel_opts;
SPC_API spc_status spc_spmv(const spc_tensor *A, int transpose, const void *x,
                            void *y, const spc_kernel_opts *o, spc_error *err);
SPC_API spc_status spc_spgemm(const spc_tensor *A, const spc_tensor *B,
                              const char *out_format, const spc_kernel_opts *o,
                              spc_tensor **C, spc_error *err);
/* The loop order (and workspace) spc_spgemm would run for A B with o's
 * threads, from the cost model; text (may be NULL) receives the
 * explanation `spconv explain spgemm` prints: each candidate's work as a
 * set expression, its conversions, its estimate, those dropped and why
 * (malloc'ed: the caller frees it). */
SPC_API spc_status spc_spgemm_explain(const spc_tensor *A, const spc_tensor *B,
                                      const spc_kernel_opts *o, int *algo,
                                      int *workspace, char **text,
                                      spc_error *err);
SPC_API const char *spc_spgemm_algo_name(int algo);
SPC_API int spc_spgemm_algo_parse(const char *name, int *algo); /* 0 ok */
SPC_API const char *spc_spgemm_workspace_name(int ws);
SPC_API int spc_spgemm_workspace_parse(const char *name, int *ws); /* 0 ok */

/* ---- building a tensor from points ---------------------------------------
 * Push points in any order, with duplicates (combined by opts->dup), in
 * batches; finish gives the tensor in FORMAT.  The points wait in the
 * sparse workspace (opts->spw, opts->acc, opts->mem: sorted runs beyond
 * three quarters of the memory budget go to temporary files, removed when
 * done, and the result's arrays past the last quarter live in temporary
 * files too), so the input and the output may be larger than memory.  dims may be NULL (or hold 0s):
 * inferred from the largest index pushed. */
typedef struct spc_builder spc_builder;
SPC_API spc_status spc_builder_create(const char *format, int order,
                                      const int64_t *dims, spc_vtype vt,
                                      const spc_convert_opts *o,
                                      spc_builder **out, spc_error *err);
/* n points: coords[d][i] is the 0-based index in dimension d of point i;
 * vals holds n values of the builder's type (NULL for pattern). */
SPC_API spc_status spc_builder_push(spc_builder *b, int64_t n,
                                    const int64_t *const *coords,
                                    const void *vals, spc_error *err);
SPC_API spc_status spc_builder_finish(spc_builder *b, spc_tensor **out,
                                      spc_error *err);
SPC_API void spc_builder_free(spc_builder **b);

/* ---- reading and writing files ------------------------------------------ */

typedef void (*spc_progress_fn)(void *ctx, const char *what, double done);

typedef struct spc_read_opts {
  int expand;              /* expand symmetric storage to general */
  spc_vtype vtype;         /* SPC_VTYPE_AUTO: from the file */
  int threads;             /* 0: OpenMP default */
  int ndims;               /* FROSTT: number of given dims (0: inferred) */
  int64_t dims[SPC_MAX_ORDER];
  spc_progress_fn progress; /* called now and then; may be NULL */
  void *progress_ctx;
  /* Out, where notice is not NULL: a one-line note (at most notice_len
   * bytes with its NUL) on what the reader took leniently, "" when
   * nothing.  A Matrix Market banner whose field or symmetry word is none
   * of the standard's is read as SciPy reads it -- an unknown field as
   * real, an unknown symmetry as general -- and noted here; so is a
   * FROSTT mode counted from 0 (an index 0, dimensions inferred). */
  char *notice;
  size_t notice_len;
  /* A .bsp.h5 of a user's format (2^20 stored positions or more) has its
   * arrays checked by a routine compiled at run time (JIT); 1: by the
   * interpreter, never compiling */
  int no_jit;
} spc_read_opts;

typedef enum spc_file_kind {
  SPC_FILE_UNKNOWN = 0,
  SPC_FILE_MTX,  /* Matrix Market */
  SPC_FILE_TNS,  /* FROSTT */
  SPC_FILE_BSP,  /* binsparse in HDF5 (.bsp.h5) */
  SPC_FILE_NPZ   /* scipy.sparse.save_npz layout */
} spc_file_kind;

typedef struct spc_write_opts {
  int gzip;                /* -1: from the name (.gz), 0 no, 1 yes */
  int keep_symmetry;       /* write symmetric storage where the file can */
  int threads;
  spc_progress_fn progress;
  void *progress_ctx;
} spc_write_opts;

SPC_API void spc_read_opts_init(spc_read_opts *o);
SPC_API void spc_write_opts_init(spc_write_opts *o);

/* File kind from a path's extension (".mtx[.gz]", ".tns[.gz]", ".h5",
 * ".npz"). */
SPC_API spc_file_kind spc_file_kind_from_name(const char *path);

/* Read any supported file; the kind comes from the content (gzip magic,
 * "%%MatrixMarket", HDF5 or zip signatures) and then the name. */
SPC_API spc_status spc_read(const char *path, const spc_read_opts *o,
                            spc_tensor **out, spc_error *err);
/* Write t to path in the container named by path's extension.  Written to a
 * temporary name and renamed when complete: a failure leaves nothing. */
/* Removes the library's temporary files now: outputs being written (each
 * goes to a temporary name first), the sparse workspace's spill files.
 * Only unlink: safe in a signal handler, which is what it is for (a
 * command interrupted leaves nothing behind); otherwise the library
 * removes them itself. */
SPC_API void spc_cleanup_temp_files(void);
SPC_API spc_status spc_write(const spc_tensor *t, const char *path,
                             const spc_write_opts *o, spc_error *err);

/* Read IN and convert it to FORMAT.  A Matrix Market coordinate or FROSTT
 * file (plain or gzip; FROSTT with opts dims) is never held whole when
 * opts->mem is set or spc_convert_file_streams says it is large:
 *   - counting (a target the counting path places, e.g. csr, csc, and the
 *     file in an order it can place -- most .mtx files are): read twice
 *     in blocks, count then place; memory: the output plus one block;
 *   - else, with mem set: streamed in blocks into the sparse workspace
 *     (a builder), working memory bounded by mem plus the result.
 * Otherwise spc_read then spc_convert_to.  opts->info->plan says which. */
SPC_API spc_status spc_convert_file(const char *in, const char *format,
                                    const spc_read_opts *ro,
                                    const spc_convert_opts *o,
                                    spc_tensor **out, spc_error *err);
/* Does spc_convert_file try a streamed path for IN: mem set, or the file's
 * components as a COO would take more than 1/8 of physical memory
 * (about 1.2x the text size; gzip counts 3x). */
SPC_API int spc_convert_file_streams(const char *in, const spc_convert_opts *o);

#ifdef __cplusplus
}
#endif
#endif /* SPCONV_H */
