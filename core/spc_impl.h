/* spc_impl.h -- internal definitions shared by the library's modules.
 * Not installed; the public interface is include/spconv.h. */
#ifndef SPC_IMPL_H
#define SPC_IMPL_H

#include "spconv.h"
#include <stdarg.h>
#include <stdbool.h>

#define SPC_INTERNAL __attribute__((visibility("hidden")))
#define SPC_LEVEL_MAX_ARRAYS 4

/* ---- allocation seam (core/spc_alloc.c) --------------------------------
 * Every allocation of the library goes through these.  A test hook makes
 * the k-th allocation from now fail, so tests can walk every failure. */
SPC_INTERNAL void *spc_malloc(size_t n);
SPC_INTERNAL void *spc_calloc(size_t n, size_t size);
SPC_INTERNAL void *spc_realloc(void *p, size_t n);
SPC_INTERNAL void spc_free(void *p);
/* Allocate n*size bytes, failing cleanly on overflow of the product. */
SPC_INTERNAL void *spc_malloc_n(int64_t n, size_t size);
/* the machine's memory in bytes, asked once (0: unknown) */
SPC_INTERNAL int64_t spc_phys_bytes(void);
/* Spawning a child copies every descriptor into it until it closes them
 * or execs: a descriptor whose life other code can see (an HDF5 file's
 * flock) is held under the shared side, a spawn under the exclusive one. */
SPC_INTERNAL void spc_spawn_guard_shared(void);
SPC_INTERNAL void spc_spawn_guard_exclusive(void);
SPC_INTERNAL void spc_spawn_guard_release(void);
/* Arrays in a temporary file (a shared mapping of an unlinked file in
 * $TMPDIR, its blocks reserved, zero-filled), for outputs larger than a
 * memory budget.  spc_free and spc_realloc take them like any other.
 *   spc_map_alloc   n bytes of zeros
 *   spc_map_adopt   *p (n bytes from spc_malloc) moved into a mapping (its
 *                   non-zero pages copied) and freed; *p the mapping
 *   spc_map_drop    the pages of the mapping at p out of the process (kept
 *                   in the file): p's resident size back to zero
 *   spc_map_drop_all  the same for every mapping
 *   spc_map_owns    p is a mapping's start;  spc_map_live  mappings now */
SPC_INTERNAL spc_status spc_map_alloc(size_t n, void **out, spc_error *e);
SPC_INTERNAL spc_status spc_map_adopt(void **p, size_t n, spc_error *e);
SPC_INTERNAL void spc_map_drop(const void *p);
SPC_INTERNAL void spc_map_drop_all(void);
SPC_INTERNAL bool spc_map_owns(const void *p);
SPC_API int spc_map_live(void);
/* The pages of [p, p + n) faulted in writable, their contents kept
 * (Linux MADV_POPULATE_WRITE), in nt slices on nt threads: for an array a
 * routine reads before it writes (a zeroed array whose untouched page a
 * read maps to the shared zero page, then copies on the write -- and on
 * several threads flushes the other CPUs' TLBs by interrupt, page by page).
 * Nothing where n < 1 MiB, p is a temporary file's mapping, or the system
 * lacks it. */
SPC_INTERNAL void spc_prefault_write(void *p, size_t n, int nt);
SPC_API void spc_alloc_fail_at(int64_t k); /* 0: off; k: k-th from now fails */
SPC_API int64_t spc_alloc_count(void);     /* allocations made so far */

/* ---- errors (core/spc_error.c) ---------------------------------------- */
/* Fill e (when non-NULL) and return code.  file may be NULL. */
SPC_INTERNAL spc_status spc_err(spc_error *e, spc_status code, const char *file,
                                int64_t line, int64_t col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
#define SPC_NOMEM(e) spc_err((e), SPC_ERR_NOMEM, NULL, 0, 0, "out of memory")

/* ---- level arrays ------------------------------------------------------ */
typedef struct spc_array {
  const char *name; /* static string: "pos", "crd", ... */
  spc_itype type;   /* element width */
  int64_t len;
  void *data;
  bool owned; /* freed with the tensor */
} spc_array;

static inline int64_t spc_arr_get(const spc_array *a, int64_t i) {
  return a->type == SPC_IDX32 ? (int64_t)((const int32_t *)a->data)[i]
                              : ((const int64_t *)a->data)[i];
}
static inline void spc_arr_set(spc_array *a, int64_t i, int64_t v) {
  if (a->type == SPC_IDX32)
    ((int32_t *)a->data)[i] = (int32_t)v;
  else
    ((int64_t *)a->data)[i] = v;
}
/* Narrowest index type that holds values in [0, maxval]. */
static inline spc_itype spc_itype_for(int64_t maxval) {
  return maxval <= INT32_MAX ? SPC_IDX32 : SPC_IDX64;
}

/* ---- level formats (formats/level_*.c) ---------------------------------
 * A level format is a table of read-side level functions plus properties. */
enum spc_level_prop {
  SPC_LP_ORDERED = 1u << 0,    /* coordinates under a parent ascend */
  SPC_LP_UNIQUE = 1u << 1,     /* no repeated coordinate under a parent */
  SPC_LP_FULL = 1u << 2,       /* every coordinate of the extent is present */
  SPC_LP_COMPACT = 1u << 3,    /* positions are contiguous */
  SPC_LP_BRANCHLESS = 1u << 4, /* one child per parent */
  SPC_LP_LOCATE = 1u << 5      /* random access by coordinate */
};

typedef struct spc_level spc_level;
typedef struct spc_level_format {
  const char *name;
  unsigned props;                              /* properties of the format */
  const char *arrays[SPC_LEVEL_MAX_ARRAYS + 1]; /* array names, NULL-ended */
  /* children of parent position p occupy positions [*b, *e) */
  void (*bounds)(const spc_level *lv, int64_t p, int64_t *b, int64_t *e);
  /* coordinate at position q (child of p) */
  int64_t (*access)(const spc_level *lv, int64_t p, int64_t q);
  /* position of coordinate c under p, or -1; NULL when no locate */
  int64_t (*locate)(const spc_level *lv, int64_t p, int64_t c);
  /* number of positions of the level given nparent parent positions */
  int64_t (*npos)(const spc_level *lv, int64_t nparent);
} spc_level_format;

struct spc_level {
  const spc_level_format *fmt;
  unsigned props; /* properties that hold for this instance */
  int dim;        /* dimension this level stores */
  int64_t size;   /* extent of the level coordinate */
  int narr;
  spc_array arr[SPC_LEVEL_MAX_ARRAYS];
};

SPC_INTERNAL extern const spc_level_format spc_level_dense;
SPC_INTERNAL extern const spc_level_format spc_level_compressed;
SPC_INTERNAL extern const spc_level_format spc_level_singleton;

SPC_INTERNAL spc_array *spc_level_array(spc_level *lv, const char *name);
SPC_INTERNAL const spc_array *spc_level_array_c(const spc_level *lv,
                                                const char *name);

/* ---- the tensor -------------------------------------------------------- */
/* Tensors whose levels are not all native tables (formats given by YAML
 * specs, made by the conversion engine or read back from a container)
 * carry this table; the generic operations defer to it. */
typedef struct spc_tensor_ext {
  /* release what the tensor owns beyond its arrays (spec registry, ...) */
  void (*destroy)(spc_tensor *t);
  /* a new COO of the stored components (padding skipped) */
  spc_status (*to_coo)(const spc_tensor *t, spc_tensor **out, spc_error *e);
  /* level format name of level l */
  const char *(*level_name)(const spc_tensor *t, int l);
  /* true when the levels' native tables (set on every level) walk
   * exactly to_coo's components in its order: no padding to skip, no
   * coordinate to map back.  spc_iter then walks them in place instead
   * of making the COO.  NULL: never */
  bool (*walk)(const spc_tensor *t);
  /* the top level's positions [*b, *en), and the stored components under
   * a range [q0, q1) of them, in to_coo's order: their number *n, and
   * (out non-NULL) a new COO of them -- a writer's parts, so a tensor
   * that cannot be walked is written without a COO of the whole.  NULL:
   * none */
  spc_status (*top)(const spc_tensor *t, int64_t *b, int64_t *en, spc_error *e);
  spc_status (*read_part)(const spc_tensor *t, int64_t q0, int64_t q1, int64_t *n,
                          spc_tensor **out, spc_error *e);
} spc_tensor_ext;

struct spc_tensor {
  int order;
  int64_t dims[SPC_MAX_ORDER];
  const char *format; /* static name */
  int nlevels;
  spc_level lv[SPC_MAX_ORDER];
  spc_vtype vt;
  void *val;
  int64_t nval;
  bool val_owned;
  spc_symmetry sym;
  /* values are booleans as int64 0 / 1 (spc_tensor_boolean) */
  bool boolean;
  const spc_tensor_ext *ext; /* NULL: every level has a native table */
  /* FROSTT: a bit a dimension whose indices the file gave from 0 (as
   * SPLATT reads such a mode), written back from 0 to a FROSTT file */
  unsigned zero_based;
};

/* An empty tensor shell (no arrays). */
SPC_INTERNAL spc_tensor *spc_tensor_alloc(int order, const int64_t *dims,
                                          spc_vtype vt);
/* Add an array to a level, allocating len elements of type ty (owned). */
SPC_INTERNAL spc_status spc_level_add_array(spc_level *lv, const char *name,
                                            spc_itype ty, int64_t len,
                                            spc_error *e);
/* t (a pattern) as a COO of int64 ones (spc_tensor_combine, spc_convert_to:
 * a pattern's duplicates summed are counts). */
SPC_INTERNAL spc_status spc_tensor_pattern_counts(const spc_tensor *t, spc_tensor **out,
                                                  spc_error *e);
/* s, e: a duplicate refused under SPC_DUP_ERROR (the message says --dup=error). */
SPC_INTERNAL bool spc_err_is_dup(spc_status s, const spc_error *e);
/* COO shell with arrays for nnz components: level 0 compressed (pos =
 * {0, nnz}), levels 1.. singleton; crd widths from dims. Values allocated
 * unless pattern. */
SPC_INTERNAL spc_status spc_coo_alloc(int order, const int64_t *dims,
                                      int64_t nnz, spc_vtype vt,
                                      spc_tensor **out, spc_error *e);
/* Dense shell: levels in the given dimension order (mode[l] = dimension). */
SPC_INTERNAL spc_status spc_dense_alloc(int order, const int64_t *dims,
                                        const int *mode, spc_vtype vt,
                                        spc_tensor **out, spc_error *e);
/* t is a plain COO (level l on dimension l, read in place) whose entries
 * come strictly increasing: spc_tensor_combine would only copy it. */
SPC_INTERNAL bool spc_coo_is_combined(const spc_tensor *t);
/* Whether the plain COO t's components sharing dimension g's coordinate
 * come in strictly increasing coordinates (dimension order), group by
 * group: then no coordinate repeats, and a counter over dimension g numbers
 * each group as it would once t is sorted.  false also where it cannot say
 * in one pass and a table of dims[g] (dims[g] past max(2n, 2^20), memory). */
SPC_INTERNAL bool spc_coo_groups_increasing(const spc_tensor *t, int g);
/* The value of the mirror (j, i) of an entry (i, j) holding *v under sym
 * (symmetric: the same; skew: negated; hermitian complex: conjugated), as
 * spc_tensor_expand writes it; out holds spc_vtype_size(vt) bytes. */
SPC_INTERNAL void spc_mirror_value(spc_vtype vt, spc_symmetry sym, const void *v,
                                   unsigned char *out);
/* Whether the pairs (a[k], b[k]), k < n, strictly increase (no two equal). */
SPC_INTERNAL bool spc_pairs_increasing(const spc_array *a, const spc_array *b, int64_t n);
/* fn(ctx, t) for t = 0 .. n - 1: on n OpenMP threads (one t each) when n
 * > 1, called directly when n is 1 (no OpenMP region: one costs a futex
 * wake even under a false if clause). */
SPC_INTERNAL void spc_par_for(int n, void (*fn)(void *ctx, int t), void *ctx);
/* Every level dense, no spec behind it (an array file read, a binsparse
 * dense): the layout holds every entry, both triangles of a symmetric
 * matrix included, and its zeros are padding.  A CSR (dense, compressed)
 * is not one. */
SPC_INTERNAL bool spc_native_dense(const spc_tensor *t);
/* Shrink a COO tensor's arrays to nnz entries (nnz <= allocated). */
SPC_INTERNAL void spc_coo_truncate(spc_tensor *t, int64_t nnz);

/* Value helpers: is value i zero; add/min/max src value into dst value. */
SPC_INTERNAL bool spc_val_is_zero(spc_vtype vt, const void *v);
SPC_INTERNAL void spc_val_combine(spc_vtype vt, spc_dup pol, void *dst,
                                  const void *src);

/* ---- radix sort (core/spc_radix.c) -------------------------------------
 * spc_radix_keys  k[0..n) sorted by bits [lo, hi) (the bits above hi zero),
 *                 stable, with the payload p (pw = 0, 4 or 8 bytes an
 *                 element); k2 / p2 scratch of the same sizes.  Returns
 *                 where the result is (0: k / p, 1: k2 / p2), -1 when
 *                 memory ran out.
 *   spc_radix_offsets  per-thread digit counts (nt x nb) turned into
 *                 scatter offsets; true when one digit holds all n
 *   spc_radix_scatter  the stable scatter of k (p) into k2 (p2) by the
 *                 digit (k >> sh) & mask at those offsets, on nt threads */
SPC_INTERNAL int spc_radix_keys(uint64_t *k, void *p, uint64_t *k2, void *p2, int pw, int64_t n,
                                int lo, int hi);
SPC_INTERNAL bool spc_radix_offsets(int64_t *cnt, int64_t nb, int nt, int64_t n);
SPC_INTERNAL void spc_radix_scatter(const uint64_t *k, const void *p, uint64_t *k2, void *p2,
                                    int pw, int64_t n, int sh, uint64_t mask, int64_t *cnt,
                                    int64_t nb, int nt);

#endif
