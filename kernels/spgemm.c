/* spgemm.c -- C = A B (DESIGN.md section 6): the entry point, the operands,
 * and Gustavson's row-by-row product (i, k, j).
 *
 * spc_spgemm takes the loop order from opts->algo (SPC_SPGEMM_AUTO: the
 * cost model of spgemm_plan.c), converts each operand to the format the
 * loop order walks it in (CSR for rows, CSC for columns) with the
 * ordinary conversion routines, and runs:
 *
 *   gustavson (i,k,j)  C(i,:) = sum_k A(i,k) B(k,:), A and B CSR, into a
 *                      dense row workspace (a marker array over B's
 *                      columns) or a hash workspace (open addressing sized
 *                      from the row's count), columns sorted at row emit;
 *   inner (i,j,k)      C(i,j) = A(i,:) . B(:,j), A CSR, B CSC, sorted
 *                      merges (spgemm_inner.c);
 *   outer (k,i,j)      C = sum_k A(:,k) B(k,:), A CSC, B CSR, products
 *                      summed in the sparse workspace (spgemm_outer.c).
 *
 * Gustavson and inner are two-phase: a symbolic pass counts each row's
 * entries, the numeric pass fills them (Gustavson on one thread with the
 * dense workspace and a small product: one pass, gus_onepass, the same
 * rows); rows are split across OpenMP
 * threads (each its own workspace), so results do not depend on the
 * thread count.  Structure is the symbolic product in every algorithm. */
#include "spgemm_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sg_kind sg_kind_of(spc_vtype a, spc_vtype b) {
  if (a == SPC_C128 || b == SPC_C128) return SG_C128;
  /* integers (and patterns) multiply in wrapping int64, as SciPy and
   * GraphBLAS do (two uint64 operands: in wrapping uint64, the same bits
   * typed unsigned, as SciPy's uint64 product); a float operand makes the
   * product double */
  if (a == SPC_U64 && b == SPC_U64) return SG_U64;
  bool ia = a == SPC_I64 || a == SPC_U64 || a == SPC_PATTERN;
  bool ib = b == SPC_I64 || b == SPC_U64 || b == SPC_PATTERN;
  return ia && ib && !(a == SPC_PATTERN && b == SPC_PATTERN) ? SG_I64 : SG_F64;
}

/* a converted csr (rows major) or csc (columns major) */
void sg_view(const spc_tensor *t, sg_mat *c) {
  c->major = t->dims[t->lv[0].dim];
  c->minor = t->dims[t->lv[1].dim];
  c->pos = spc_level_array_c(&t->lv[1], "pos");
  c->crd = spc_level_array_c(&t->lv[1], "crd");
  c->val = t->val;
  c->vt = t->vt;
}

int sg_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

spc_status sg_check_fits(int64_t nnz, sg_kind k, spc_error *e) {
  /* the product, its COO and the converted result must fit in memory */
  double need = (double)nnz * (16.0 + (double)sg_width(k)) * 2.0;
  double have = (double)spc_phys_bytes();
  if (have > 0 && need > 0.8 * have)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "the product has %lld entries: too large for this machine's memory "
                   "(about %.1f GB needed, %.1f GB here)",
                   (long long)nnz, need / 1e9, have / 1e9);
  return SPC_OK;
}

/* An empty CSR (m x n, room for nnz entries) as the conversion engine
 * makes it: the shell spc_conv_result_shell gives (levels, extents,
 * index widths of a conversion with nnz entries; no routine runs) with
 * the arrays its level spec lists -- pos over the top level's positions
 * plus one, crd and values for nnz entries.  SPC_NOT_HANDLED when the
 * engine's csr is not that (other arrays, a shape it cannot say). */
static spc_status csr_shell(const spc_convert_opts *o, int64_t m, int64_t n, int64_t nnz, sg_kind k,
                            spc_tensor **out, spc_error *e) {
  *out = NULL;
  int64_t dims[2] = {m, n};
  spc_tensor *t = NULL;
  spc_status s = spc_conv_result_shell("csr", o, 2, dims, nnz, sg_vtype(k), &t, e);
  if (s) return s;
  if (t->nlevels != 2 || spc_conv_narrays(t, 0) || spc_conv_narrays(t, 1) != 2) s = SPC_NOT_HANDLED;
  for (int a = 0; a < 2 && !s; a++) {
    const char *name = NULL;
    spc_itype ty = spc_conv_array_type(t, 1, a, &name);
    int64_t top = t->lv[0].size; /* rows: 0 gives one pointer */
    if (!strcmp(name, "pos")) s = spc_level_add_array(&t->lv[1], name, ty, top + 1, e);
    else if (!strcmp(name, "crd")) s = spc_level_add_array(&t->lv[1], name, ty, nnz, e);
    else s = SPC_NOT_HANDLED;
  }
  if (!s && !(t->val = spc_malloc_n(nnz ? nnz : 1, sg_width(k)))) s = SPC_NOMEM(e);
  if (s) {
    spc_tensor_free(&t);
    return s;
  }
  t->val_owned = true, t->nval = nnz;
  *out = t;
  return SPC_OK;
}

/* the CSR's row pointers from rp (m + 1) */
static void sg_out_rows(sg_out *o, int64_t m, const int64_t *rp) {
  spc_array *pos = spc_level_array(&o->t->lv[1], "pos");
  int64_t n = pos->len < m + 1 ? pos->len : m + 1;
  if (pos->type == SPC_IDX32) { /* typed: twice on every small product */
    int32_t *x = pos->data;
    for (int64_t i = 0; i < n; i++) x[i] = (int32_t)rp[i];
  } else {
    for (int64_t i = 0; i < n; i++) spc_arr_set(pos, i, rp[i]);
  }
  for (int64_t i = n; i < pos->len; i++) spc_arr_set(pos, i, rp[m]);
}

spc_status sg_out_make(const spc_convert_opts *co, int64_t m, int64_t n, const int64_t *rp, sg_kind k,
                       sg_out *o, spc_error *e) {
  memset(o, 0, sizeof *o);
  int64_t nnz = rp[m];
  spc_status s = sg_check_fits(nnz, k, e);
  if (!s) s = csr_shell(co, m, n, nnz, k, &o->t, e);
  if (!s) {
    sg_out_rows(o, m, rp);
  } else if (s == SPC_NOT_HANDLED) {
    int64_t dims[2] = {m, n};
    if (!(s = spc_coo_alloc(2, dims, nnz, sg_vtype(k), &o->t, e)))
      o->ci = spc_level_array(&o->t->lv[0], "crd");
  }
  if (s) return s;
  o->cj = spc_level_array(&o->t->lv[1], "crd");
  o->val = o->t->val;
  return SPC_OK;
}

/* ---- Gustavson ------------------------------------------------------------------ */

/* The hash workspace: 2^bits slots keyed by column (-1: empty), linear
 * probing; grown per thread to the largest row it meets. */
typedef struct hws {
  int64_t *key;
  double *val; /* two doubles per slot (complex), one otherwise */
  int bits;
} hws;

static bool hws_size(hws *h, int64_t want) {
  int bits = 4;
  while (bits < 62 && ((int64_t)1 << bits) < 2 * want) bits++;
  if (bits > h->bits) {
    free(h->key);
    free(h->val);
    h->key = malloc(((size_t)1 << bits) * sizeof *h->key);
    h->val = malloc(((size_t)1 << bits) * 16);
    if (!h->key || !h->val) return false;
    h->bits = bits;
    memset(h->key, 0xff, ((size_t)1 << bits) * sizeof *h->key);
  }
  return true;
}

/* slot of column j (inserted when absent: *fresh) in a table of 2^bits
 * slots (bits <= h->bits: a row uses the table's prefix) */
static inline int64_t hws_slot(const hws *h, int bits, int64_t j, bool *fresh) {
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  uint64_t s = ((uint64_t)j * 0x9E3779B97F4A7C15ull) >> (64 - bits);
  while (h->key[s] != j && h->key[s] != -1) s = (s + 1) & mask;
  *fresh = h->key[s] == -1;
  h->key[s] = j;
  return (int64_t)s;
}

static int bits_for(int64_t want) {
  int bits = 4;
  while (bits < 62 && ((int64_t)1 << bits) < 2 * want) bits++;
  return bits;
}

/* ascending columns: quicksort (median of three, no callback) down to
 * insertion sort on short runs; one per output column width */
#define SORT_COLS(T)                                                                               \
  static void sort_cols_##T(T *restrict c, int64_t n) {                                            \
    while (n > 24) {                                                                               \
      T x = c[0], y = c[n / 2], z = c[n - 1];                                                      \
      T piv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);                   \
      int64_t i = 0, j = n - 1;                                                                    \
      for (;;) {                                                                                   \
        while (c[i] < piv) i++;                                                                    \
        while (c[j] > piv) j--;                                                                    \
        if (i >= j) break;                                                                         \
        T t = c[i];                                                                                \
        c[i++] = c[j], c[j--] = t;                                                                 \
      }                                                                                            \
      /* [0, j] <= piv <= [j+1, n): recurse on the smaller side */                                 \
      if (j + 1 < n - j - 1) {                                                                     \
        sort_cols_##T(c, j + 1);                                                                   \
        c += j + 1, n -= j + 1;                                                                    \
      } else {                                                                                     \
        sort_cols_##T(c + j + 1, n - j - 1);                                                       \
        n = j + 1;                                                                                 \
      }                                                                                            \
    }                                                                                              \
    for (int64_t s = 1; s < n; s++) {                                                              \
      T v = c[s];                                                                                  \
      int64_t t = s;                                                                               \
      while (t > 0 && c[t - 1] > v) c[t] = c[t - 1], t--;                                          \
      c[t] = v;                                                                                    \
    }                                                                                              \
  }
SORT_COLS(int32_t)
SORT_COLS(int64_t)
#undef SORT_COLS

/* B's rows as bitmaps over their spans, for products whose B rows are
 * dense there (sg_bits_make): row k's words w[off[k] .. off[k+1]), the
 * first covering columns 64 lo[k] .. 64 lo[k] + 63. */
typedef struct sg_bits {
  int64_t *off, *lo;
  uint64_t *w;
} sg_bits;

/* the dense workspace reads a row off its bitmap when the bitmap's
 * second-level words over the row's span are at most its count c (each
 * costs about what placing one column in a sort does), else sorts */
#define SCAN_WORDS(nw, c) ((nw) <= (c))
/* the row kernels, per widths and value path (spgemm_gus_row.h):
 * operands' crd / pos / output columns */
#define SG_FAST 1
#define SG_SUF w32_32_fast
#define SG_T int32_t
#define SG_P int32_t
#define SG_OT int32_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_P
#define SG_SUF w32_64_fast
#define SG_P int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_OT
#define SG_SUF w64_64_fast
#define SG_T int64_t
#define SG_OT int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_P
#undef SG_OT
#define SG_SUF any_32_fast
#define SG_OT int32_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_OT
#define SG_SUF any_64_fast
#define SG_OT int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_OT
#undef SG_FAST
#define SG_FAST 0
#define SG_SUF w32_32_any
#define SG_T int32_t
#define SG_P int32_t
#define SG_OT int32_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_P
#define SG_SUF w32_64_any
#define SG_P int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_OT
#define SG_SUF w64_64_any
#define SG_T int64_t
#define SG_OT int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_P
#undef SG_OT
#define SG_SUF any_32_any
#define SG_OT int32_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_OT
#define SG_SUF any_64_any
#define SG_OT int64_t
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_OT
#undef SG_FAST

typedef int64_t (*row_bound_fn)(const sg_mat *, const sg_mat *, int64_t);
/* (sc, oc: int32_t or int64_t as the kernel's output width) */
typedef int64_t (*row_count_fn)(const sg_mat *, const sg_mat *, int64_t, int64_t, bool, int32_t *, int32_t,
                                hws *);
typedef int64_t (*row_fill_fn)(const sg_mat *, const sg_mat *, sg_kind, int64_t, int64_t, bool, int32_t *,
                               int32_t, uint64_t *, uint64_t *, double *, hws *, void *, void *, void *);
typedef int64_t (*row_fillu_fn)(const sg_mat *, const sg_mat *, sg_kind, int64_t, int64_t, bool, int32_t *,
                                int32_t, double *, hws *, void *, void *);
typedef int64_t (*row_bcount_fn)(const sg_mat *, const sg_bits *, int64_t, uint64_t *);
typedef int64_t (*row_bfill_fn)(const sg_mat *, const sg_mat *, const sg_bits *, sg_kind, int64_t, int64_t,
                                uint64_t *, double *, void *, void *);
typedef struct rowfns {
  row_bound_fn bound;
  row_count_fn count;
  row_fill_fn fill;
  row_fillu_fn fillu;
  row_bcount_fn bcount;
  row_bfill_fn bfill;
} rowfns;

#define ROWFNS(suf)                                                                                \
  {row_bound_##suf, (row_count_fn)row_count_##suf, (row_fill_fn)row_fill_##suf,                    \
   (row_fillu_fn)row_fillu_##suf, row_bcount_##suf, (row_bfill_fn)row_bfill_##suf}
/* [fast][widths]: w32_32, w32_64, w64_64, any (32-bit output), any (64-bit output) */
static const rowfns row_table[2][5] = {
    {ROWFNS(w32_32_any), ROWFNS(w32_64_any), ROWFNS(w64_64_any), ROWFNS(any_32_any), ROWFNS(any_64_any)},
    {ROWFNS(w32_32_fast), ROWFNS(w32_64_fast), ROWFNS(w64_64_fast), ROWFNS(any_32_fast), ROWFNS(any_64_fast)}};
#undef ROWFNS

/* the row kernels for a and b with output columns 32 bits wide (c32) or 64 */
static rowfns pick_rows(const sg_mat *a, const sg_mat *b, bool c32) {
  bool fast = a->vt == SPC_F64 && b->vt == SPC_F64;
  spc_itype ct = a->crd->type, pt = a->pos->type;
  int x = c32 ? 3 : 4;
  if (b->crd->type == ct && b->pos->type == pt) {
    if (ct == SPC_IDX32 && pt == SPC_IDX32 && c32) x = 0;
    else if (ct == SPC_IDX32 && pt == SPC_IDX64 && c32) x = 1;
    else if (ct == SPC_IDX64 && pt == SPC_IDX64 && !c32) x = 2;
  }
  return row_table[fast][x];
}

/* One thread's workspace, allocated once per pass: over B's n columns
 * the dense stamps, and (numeric pass) the bitmap and the accumulator;
 * or the hash table; the row's scratch columns; grown to the widest row
 * met. */
typedef struct gws {
  int32_t *mark, g; /* g: the stamp of the thread's current row */
  uint64_t *seen, *sum;
  double *acc;
  void *sc;
  int64_t sccap, n;
  hws h;
} gws;

static bool gws_init(gws *w, bool hash, bool numeric, int64_t n, sg_kind kind) {
  memset(w, 0, sizeof *w);
  if (hash) return true;
  size_t n1 = (size_t)(n ? n : 1);
  w->n = (int64_t)n1;
  w->g = -1;
  w->mark = spc_malloc_n((int64_t)n1, sizeof *w->mark);
  if (w->mark) memset(w->mark, 0xff, n1 * sizeof *w->mark); /* -1: no row */
  w->seen = spc_calloc((n1 + 63) / 64, sizeof *w->seen); /* and the bitmap plan's row */
  if (numeric) {
    w->sum = spc_calloc((n1 + 4095) / 4096, sizeof *w->sum);
    w->acc = spc_malloc_n((int64_t)n1, sg_width(kind));
  }
  return w->mark && w->seen && (!numeric || (w->sum && w->acc));
}

/* the next row's stamp (the stamps start over when they run out) */
static int32_t gws_stamp(gws *w) {
  if (w->mark && w->g == INT32_MAX) {
    memset(w->mark, 0xff, (size_t)w->n * sizeof *w->mark);
    w->g = -1;
  }
  return ++w->g;
}

/* room for a row of at most bound entries (scratch columns cw bytes wide;
 * cw 0: no scratch) */
static bool gws_room(gws *w, int64_t bound, size_t cw, bool hash) {
  if (cw && bound > w->sccap) {
    int64_t cap = bound > 2 * w->sccap ? bound : 2 * w->sccap;
    void *x = spc_realloc(w->sc, (size_t)cap * cw);
    if (!x) return false;
    w->sc = x, w->sccap = cap;
  }
  return !hash || !bound || hws_size(&w->h, bound);
}

static void gws_free(gws *w) {
  spc_free(w->mark);
  spc_free(w->seen);
  spc_free(w->sum);
  spc_free(w->acc);
  spc_free(w->sc);
  free(w->h.key);
  free(w->h.val);
}

/* B's row bitmaps, when B's rows are dense in their spans: their words
 * at most half B's entries (two or more entries a word), so ORing a row
 * of B costs at most half what marking its entries does, and the row's
 * columns come out of the OR ascending (no sort); or always (force, the
 * bitmap workspace; SPC_ERR_UNSUPPORTED past a quarter of memory).
 * bb->w NULL when not taken (B has no entries, or too few a word). */
static spc_status sg_bits_make(const sg_mat *b, bool force, sg_bits *bb, spc_error *e) {
  memset(bb, 0, sizeof *bb);
  int64_t rows = b->major, nnz = spc_arr_get(b->pos, rows), nw = 0;
  if (b->pos->type == SPC_IDX32 && b->crd->type == SPC_IDX32) { /* typed: on every product */
    const int32_t *bp = b->pos->data, *bc = b->crd->data;
    for (int64_t k = 0; k < rows; k++)
      if (bp[k + 1] > bp[k]) nw += (bc[bp[k + 1] - 1] >> 6) - (bc[bp[k]] >> 6) + 1;
  } else {
    for (int64_t k = 0; k < rows; k++) {
      int64_t q0 = spc_arr_get(b->pos, k), q1 = spc_arr_get(b->pos, k + 1);
      if (q1 > q0) nw += (spc_arr_get(b->crd, q1 - 1) >> 6) - (spc_arr_get(b->crd, q0) >> 6) + 1;
    }
  }
  if (!nw || (!force && 2 * nw > nnz)) return SPC_OK;
  double have = (double)spc_phys_bytes();
  if (have > 0 && (double)nw * 8.0 > 0.25 * have)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "the bitmap workspace needs %.1f GB for B's rows (%lld entries over wide spans); "
                   "the dense or hash workspace does not",
                   (double)nw * 8e-9, (long long)nnz);
  bb->off = spc_malloc_n(rows + 1, sizeof *bb->off);
  bb->lo = spc_malloc_n(rows ? rows : 1, sizeof *bb->lo);
  bb->w = spc_calloc((size_t)nw, sizeof *bb->w);
  if (!bb->off || !bb->lo || !bb->w) {
    spc_free(bb->off), spc_free(bb->lo), spc_free(bb->w);
    memset(bb, 0, sizeof *bb);
    return SPC_NOMEM(e);
  }
  bb->off[0] = 0;
  for (int64_t k = 0; k < rows; k++) {
    int64_t q0 = spc_arr_get(b->pos, k), q1 = spc_arr_get(b->pos, k + 1), o = bb->off[k];
    bb->lo[k] = q1 > q0 ? spc_arr_get(b->crd, q0) >> 6 : 0;
    bb->off[k + 1] = o + (q1 > q0 ? (spc_arr_get(b->crd, q1 - 1) >> 6) - bb->lo[k] + 1 : 0);
    for (int64_t q = q0; q < q1; q++) {
      int64_t j = spc_arr_get(b->crd, q);
      bb->w[o + (j >> 6) - bb->lo[k]] |= (uint64_t)1 << (j & 63);
    }
  }
  return SPC_OK;
}

static void sg_bits_free(sg_bits *bb) {
  spc_free(bb->off), spc_free(bb->lo), spc_free(bb->w);
  memset(bb, 0, sizeof *bb);
}

/* row i of the numeric pass into oc / ov: ascending, or (unsorted) in
 * the order found; through B's row bitmaps when bb holds them (ascending) */
static inline int64_t gus_row(rowfns f, bool unsorted, const sg_bits *bb, const sg_mat *a, const sg_mat *b,
                              sg_kind kind, int64_t i, int64_t cnt, bool hash, gws *w, void *oc, void *ov) {
  if (bb && bb->w) return f.bfill(a, b, bb, kind, i, cnt, w->seen, w->acc, oc, ov);
  int32_t g = gws_stamp(w);
  if (unsorted) return f.fillu(a, b, kind, i, cnt, hash, w->mark, g, w->acc, &w->h, oc, ov);
  return f.fill(a, b, kind, i, cnt, hash, w->mark, g, w->seen, w->sum, w->acc, &w->h, w->sc, oc, ov);
}

/* the rows' columns (cw bytes each) and values (vw) in cj and val, row i
 * at rp[i], into out when it is not the arrays themselves */
static void gus_copy(sg_out *out, const int64_t *rp, int64_t m, const char *cj, const char *val, size_t cw,
                     size_t vw) {
  if (!out->ci && (size_t)(out->cj->type == SPC_IDX32 ? 4 : 8) == cw) {
    if (rp[m]) memcpy(out->cj->data, cj, (size_t)rp[m] * cw);
  } else {
    for (int64_t i = 0; i < m; i++)
      for (int64_t t = rp[i]; t < rp[i + 1]; t++)
        sg_out_put(out, t, i, cw == 4 ? ((const int32_t *)(const void *)cj)[t] : ((const int64_t *)(const void *)cj)[t]);
  }
  if (rp[m]) memcpy(out->val, val, (size_t)rp[m] * vw);
}

/* The one-pass routines' workspace (dense, numeric), with the scratch
 * columns of the widest row (mb) where the rows are sorted by stamps
 * (not gws_room: a third caller and GCC no longer inlines it in the two
 * passes' loops).  False when out of memory (w freed by gws_free). */
static bool gws_one(gws *w, int64_t n, sg_kind kind, bool scratch, int64_t mb, size_t cw) {
  if (!gws_init(w, false, true, n, kind)) return false;
  if (scratch && !(w->sc = spc_malloc_n(mb + 1, cw))) return false;
  if (scratch) w->sccap = mb + 1;
  return true;
}

/* One thread, dense workspace, a small product whose result gus_bounded
 * does not write (a COO, positions of other widths, a refused shell): one
 * pass.  Row i's bound
 * (min(its flops, n), row_bound; rp[i + 1] on entry) is at least its
 * count, so rows written one after the other into arrays of the bounds'
 * sum tb never overrun; the result is made at its exact size after and
 * the rows copied in: no symbolic pass (a quarter of a small product's
 * time: the same walk over the products as the numeric pass), the
 * arrays' copy instead (12 bytes an entry, in cache at this size).  Each
 * row is the same row_fill as the two passes', so the result is bit for
 * bit theirs.  rp: m + 1 row pointers on return. */
#define SG_ONEPASS_BYTES ((int64_t)4 << 20)
static spc_status gus_onepass(const sg_mat *a, const sg_mat *b, sg_kind kind, rowfns f, bool unsorted,
                              const sg_bits *bb, int64_t *rp, int64_t tb, int64_t mb, bool c32,
                              const spc_convert_opts *co, sg_out *out, spc_error *e) {
  int64_t m = a->major, n = b->minor;
  size_t cw = c32 ? 4 : 8, vw = sg_width(kind);
  /* one block for the values and columns: freed before the result, the
   * top of the heap then holds about twice it at most, which glibc's
   * trimming leaves alone (separate blocks were given back and faulted
   * in again on every call of a loop) */
  char *val = spc_malloc_n(1, (size_t)(tb ? tb : 1) * (vw + cw)), *cj = val ? val + (size_t)tb * vw : NULL;
  gws w;
  bool ok = gws_one(&w, n, kind, !unsorted && !bb->w, mb, cw) && val;
  rp[0] = 0;
  for (int64_t i = 0; ok && i < m; i++) /* the bound for cnt: the dense path only asks whether it is 0 */
    rp[i + 1] = rp[i] + gus_row(f, unsorted, bb, a, b, kind, i, rp[i + 1], false, &w,
                                cj + (size_t)rp[i] * cw, val + (size_t)rp[i] * vw);
  gws_free(&w);
  spc_status s = ok ? sg_out_make(co, m, n, rp, kind, out, e) : SPC_NOMEM(e);
  if (!s) gus_copy(out, rp, m, cj, val, cw, vw);
  spc_free(val);
  return s;
}

/* One thread, dense workspace: one pass straight into the result, made
 * at the bounds' sum tb (rp[i + 1]:
 * row i's bound on entry; the pages past what the rows fill are never
 * touched) and its arrays' lengths cut to the rows' total after.  No
 * symbolic pass (a fifth of the 7-point stencil 40^3 squared: the same
 * walk over the products) and no copy; each row is the same row_fill as
 * the two passes', so the result is bit for bit theirs.  SPC_NOT_HANDLED
 * (nothing made, rp the bounds again) where the result's arrays are not
 * the kernel's widths (a COO, 64-bit columns of a 32-bit kernel) or its
 * shell was refused: the two passes then.  rp: m + 1 row pointers on
 * return. */
static spc_status gus_bounded(const sg_mat *a, const sg_mat *b, sg_kind kind, rowfns f, bool unsorted,
                              const sg_bits *bb, int64_t *rp, int64_t mb, bool c32,
                              const spc_convert_opts *co, sg_out *out, spc_error *e) {
  int64_t m = a->major, n = b->minor;
  size_t cw = c32 ? 4 : 8, vw = sg_width(kind);
  for (int64_t i = 0; i < m; i++) rp[i + 1] += rp[i];
  /* a result the bounds' size refused (a position limit the rows' total
   * may still meet) is the two passes' to make or refuse */
  spc_status s = sg_out_make(co, m, n, rp, kind, out, e);
  if (s || out->ci || out->cj->type != (c32 ? SPC_IDX32 : SPC_IDX64)) {
    if (s) spc_error_clear(e);
    else spc_tensor_free(&out->t);
    for (int64_t i = m; i > 0; i--) rp[i] -= rp[i - 1]; /* the bounds again */
    return SPC_NOT_HANDLED;
  }
  char *cj = out->cj->data, *val = out->val;
  gws w;
  bool ok = gws_one(&w, n, kind, !unsorted && !bb->w, mb, cw);
  int64_t off = 0;
  for (int64_t i = 0; ok && i < m; i++) {
    int64_t bound = rp[i + 1] - rp[i];
    rp[i] = off; /* rp[i + 1] (the next bound's end) is read before it is set */
    off += gus_row(f, unsorted, bb, a, b, kind, i, bound, false, &w, cj + (size_t)off * cw,
                   val + (size_t)off * vw);
  }
  rp[m] = off;
  gws_free(&w);
  if (!ok) {
    spc_tensor_free(&out->t);
    return SPC_NOMEM(e);
  }
  sg_out_rows(out, m, rp);
  /* the unused tails given back where large (over 64 MiB, or over three
   * times what the rows hold: realloc shrinks in place); a small one
   * stays: in a loop of products the arrays then come back from the heap
   * at the next call's size, where cut ones came back from mmap as fresh
   * pages to clear (stencil 40^3 squared, bound 2.0 times its entries,
   * ms: 11.2 with the symbolic pass, 9.1 kept, 11.0 cut) */
  int64_t tb = out->cj->len;
  if ((tb - off) * (int64_t)(cw + vw) > ((int64_t)64 << 20) || tb > 4 * off) {
    void *q = spc_realloc(out->cj->data, (size_t)(off ? off : 1) * cw);
    if (q) out->cj->data = q;
    q = spc_realloc(out->t->val, (size_t)(off ? off : 1) * vw);
    if (q) out->t->val = q;
    out->val = out->t->val;
  }
  out->cj->len = off;
  out->t->nval = off;
  return SPC_OK;
}

/* row i's bound, min(its flops, n): the planner's flops (may be NULL),
 * else counted by row_bound */
static inline int64_t row_bd(rowfns f, const int64_t *flops, const sg_mat *a, const sg_mat *b, int64_t i) {
  if (!flops) return f.bound(a, b, i);
  return flops[i + 1] < b->minor ? flops[i + 1] : b->minor;
}

/* Gustavson, C(i,:) = sum_k A(i,k) B(k,:), in two passes over rows split
 * across threads (each its own workspace, allocated once): the symbolic
 * pass counts each row's columns, the output is allocated at its exact
 * size (the CSR shell of the conversion), the numeric pass writes each
 * row at its place -- straight into the CSR's crd and values when their
 * widths are the kernel's, else into arrays copied after. */
spc_status sg_gustavson(const sg_mat *a, const sg_mat *b, sg_kind kind, int ws, bool unsorted, int nt,
                        const int64_t *flops, const spc_convert_opts *co, sg_out *out, spc_error *e) {
  bool hash = ws == SPC_SPGEMM_WS_HASH;
  int64_t m = a->major, n = b->minor;
  bool c32 = m - 1 <= INT32_MAX && n - 1 <= INT32_MAX; /* the conversion's coordinate width */
  size_t cw = c32 ? 4 : 8, vw = sg_width(kind);
  rowfns f = pick_rows(a, b, c32);
  if (nt > m) nt = m > 1 ? (int)m : 1;
  int64_t *rp = spc_calloc((size_t)m + 1, sizeof *rp);
  sg_bits bb;
  memset(&bb, 0, sizeof bb);
  /* B's row bitmaps: forced, or chosen for a sorted product only.  They
   * save the stamp test a product but cost an OR a B row and two walks
   * over each row's columns; what pays for those is the sort at emit they
   * spare, which an unsorted product does not do (one thread, CPU time:
   * lp_share1b A A^T unsorted 12.8-13.0 us with them, 9.6-9.7 without,
   * CXSparse 8.9; bcsstk13^2 unsorted 4.02-4.19 / 3.98-4.36 ms, noise) */
  bool bits = !hash && (ws == SPC_SPGEMM_WS_BITMAP || !unsorted);
  spc_status bs = !rp ? SPC_NOMEM(e) : bits ? sg_bits_make(b, ws == SPC_SPGEMM_WS_BITMAP, &bb, e) : SPC_OK;
  if (bs) {
    spc_free(rp);
    return bs;
  }
  if (nt == 1 && !hash) {
    int64_t tb = 0, mb = 0; /* the rows' bounds (rp[i + 1]): their sum, the largest */
    for (int64_t i = 0; i < m; i++) {
      int64_t bd = rp[i + 1] = row_bd(f, flops, a, b, i);
      tb += bd, mb = bd > mb ? bd : mb;
    }
    /* straight into a result of the bounds' size, where that stays well
     * inside the memory (a bound is the row's flops, at most n: many times
     * its count where products collide) and its positions the width the
     * rows' total gives them (int32 below 2^31); else, small, through the
     * one-pass scratch.  Small products took the scratch first: its block
     * and the result then held about twice the result, and in a loop of
     * products glibc gave the heap's top back and faulted it in again on
     * every call (west0479 squared 48 -> 24 us unsorted, 59 -> 36 sorted;
     * CXSparse 19) */
    spc_status s = SPC_NOT_HANDLED;
    if ((double)tb * (double)(cw + vw) <= (double)spc_phys_bytes() / 8 && tb <= INT32_MAX)
      s = gus_bounded(a, b, kind, f, unsorted, &bb, rp, mb, c32, co, out, e);
    if (s == SPC_NOT_HANDLED && tb * (int64_t)(cw + vw) <= SG_ONEPASS_BYTES)
      s = gus_onepass(a, b, kind, f, unsorted, &bb, rp, tb, mb, c32, co, out, e);
    if (s != SPC_NOT_HANDLED) {
      if (!s) out->unordered = unsorted && !bb.w, out->bitmap = bb.w != NULL;
      spc_free(rp);
      sg_bits_free(&bb);
      return s;
    }
    memset(rp, 0, ((size_t)m + 1) * sizeof *rp); /* the two passes count into it */
  }
  int fail = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    gws w;
    bool ok = gws_init(&w, hash, false, n, kind);
#pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++) {
      int64_t bound = ok && hash ? row_bd(f, flops, a, b, i) : 0;
      if (ok && bb.w) rp[i + 1] = f.bcount(a, &bb, i, w.seen);
      else if (ok && (ok = gws_room(&w, bound, 0, hash)))
        rp[i + 1] = f.count(a, b, i, bound, hash, w.mark, gws_stamp(&w), &w.h);
    }
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
    gws_free(&w);
  }
  if (fail) {
    spc_free(rp);
    sg_bits_free(&bb);
    return SPC_NOMEM(e);
  }
  for (int64_t i = 0; i < m; i++) rp[i + 1] += rp[i];
  int64_t nnz = rp[m];
  spc_status s = sg_out_make(co, m, n, rp, kind, out, e);
  if (s) {
    spc_free(rp);
    sg_bits_free(&bb);
    return s;
  }
  /* straight into the CSR, else into arrays of the kernel's widths */
  bool direct = !out->ci && out->cj->type == (c32 ? SPC_IDX32 : SPC_IDX64);
  char *cj = direct ? out->cj->data : spc_malloc_n(nnz ? nnz : 1, cw);
  char *val = direct ? out->val : spc_malloc_n(nnz ? nnz : 1, vw);
  fail = !cj || !val;
#pragma omp parallel num_threads(nt) if (nt > 1 && !fail)
  {
    gws w;
    bool ok = !fail && gws_init(&w, hash, true, n, kind);
#pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++) {
      int64_t cnt = rp[i + 1] - rp[i];
      /* scratch columns only for rows sorted at emit (not the bitmap plan's) */
      if (ok && (ok = gws_room(&w, cnt, unsorted || bb.w ? 0 : cw, hash)))
        gus_row(f, unsorted, &bb, a, b, kind, i, cnt, hash, &w, cj + (size_t)rp[i] * cw,
                val + (size_t)rp[i] * vw);
    }
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
    gws_free(&w);
  }
  if (!direct && !fail) gus_copy(out, rp, m, cj, val, cw, vw);
  if (!direct) spc_free(cj), spc_free(val);
  spc_free(rp);
  out->unordered = unsorted && !bb.w; /* the bitmap plan's rows come out ascending */
  out->bitmap = bb.w != NULL;
  sg_bits_free(&bb);
  if (fail) {
    spc_tensor_free(&out->t);
    return SPC_NOMEM(e);
  }
  return SPC_OK;
}

/* ---- the entry point ------------------------------------------------------------ */

/* a in FMT: itself when it is converted to FMT already, else *own */
static spc_status as_format(const spc_tensor *a, const char *fmt, const spc_convert_opts *o,
                            spc_tensor **own, const spc_tensor **use, spc_error *e) {
  *own = NULL;
  *use = a;
  /* a csr or csc whose minor level is not ordered (an unsorted product, a
   * container's unsorted rows) is sorted first: inner products merge */
  if (spc_is_converted(a) && !strcmp(spc_tensor_format(a), fmt) && a->nlevels == 2 &&
      (a->lv[1].props & SPC_LP_ORDERED))
    return SPC_OK;
  spc_status s = spc_convert_to(a, fmt, o, own, e);
  if (!s) *use = *own;
  return s;
}

spc_status spc_spgemm(const spc_tensor *A, const spc_tensor *B, const char *out_format,
                      const spc_kernel_opts *ko, spc_tensor **C, spc_error *e) {
  *C = NULL;
  if (!A || !B || A->order != 2 || B->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spgemm needs two matrices");
  if (A->dims[1] != B->dims[0])
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                   "cannot multiply a %lld x %lld matrix by a %lld x %lld one",
                   (long long)A->dims[0], (long long)A->dims[1], (long long)B->dims[0],
                   (long long)B->dims[1]);
  int algo = ko ? ko->algo : SPC_SPGEMM_AUTO, ws = ko ? ko->workspace : SPC_SPGEMM_WS_AUTO;
  if (algo < SPC_SPGEMM_AUTO || algo > SPC_SPGEMM_OUTER)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spgemm: unknown algorithm %d", algo);
  if (ws < SPC_SPGEMM_WS_AUTO || ws > SPC_SPGEMM_WS_BITMAP)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spgemm: unknown workspace %d", ws);
  spc_status s = SPC_OK;
  /* the planner's pass over A leaves each row's flops: Gustavson's rows'
   * bounds (a small product's row_bound was 6% of it) */
  int64_t *flops = NULL;
  bool have_flops = false;
  if (algo == SPC_SPGEMM_AUTO || (algo == SPC_SPGEMM_GUSTAVSON && ws == SPC_SPGEMM_WS_AUTO)) {
    if (!(flops = spc_malloc_n(A->dims[0] + 1, sizeof *flops))) return SPC_NOMEM(e);
    if ((s = sg_plan(A, B, ko, &algo, &ws, flops, &have_flops, NULL, e))) {
      spc_free(flops);
      return s;
    }
  }
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  if (ko) o.engine = ko->engine, o.no_jit = ko->no_jit;
  const char *fa = algo == SPC_SPGEMM_OUTER ? "csc" : "csr";
  const char *fb = algo == SPC_SPGEMM_INNER ? "csc" : "csr";
  spc_tensor *oa = NULL, *ob = NULL;
  const spc_tensor *ta, *tb;
  s = as_format(A, fa, &o, &oa, &ta, e);
  if (!s) s = as_format(B, fb, &o, &ob, &tb, e);
  if (s) goto done;
  sg_mat a, b;
  sg_view(ta, &a);
  sg_view(tb, &b);
  /* by the operands' own types: a pattern whose coordinates repeat
   * converts as int64 counts, and still multiplies as a pattern */
  sg_kind kind = sg_kind_of(A->vt, B->vt);
  int nt = ko && ko->threads > 0 ? ko->threads : 1;
  const char *of = out_format ? out_format : "csr";
  if (algo == SPC_SPGEMM_OUTER) {
    s = sg_outer(&a, &b, kind, nt, of, &o, C, e);
    goto done;
  }
  sg_out out;
  /* rows in the order found: only where the product is the result (a
   * conversion to another format would sort them again) */
  bool unsorted = ko && ko->unsorted && !strcmp(of, "csr");
  s = algo == SPC_SPGEMM_INNER
          ? sg_inner(&a, &b, kind, nt, &o, &out, e)
          : sg_gustavson(&a, &b, kind, ws, unsorted, nt, have_flops ? flops : NULL, &o, &out, e);
  if (s) goto done;
  if (ko && ko->info) {
    memset(ko->info, 0, sizeof *ko->info);
    ko->info->threads = nt;
    if (out.bitmap)
      snprintf(ko->info->note, sizeof ko->info->note,
               "bitmap plan: B's rows dense in their spans, each row the OR of its B rows' bitmaps");
    else if (out.unordered)
      snprintf(ko->info->note, sizeof ko->info->note, "rows left in the order found (--unsorted)");
  }
  if (!out.ci && !strcmp(of, "csr")) { /* made as the conversion makes it */
    *C = out.t;
    /* Gustavson's unsorted rows: the column level says so (no order, so
     * no binary-search locate); readers and conversions then sort */
    if (out.unordered) (*C)->lv[1].props &= ~(unsigned)(SPC_LP_ORDERED | SPC_LP_LOCATE);
  } else {
    s = spc_convert_to(out.t, of, &o, C, e);
    spc_tensor_free(&out.t);
  }
done:
  spc_free(flops);
  spc_tensor_free(&oa);
  spc_tensor_free(&ob);
  return s;
}

static const char *const algo_names[] = {"auto", "gustavson", "inner", "outer"};
static const char *const ws_names[] = {"auto", "dense", "hash", "bitmap"};

const char *spc_spgemm_algo_name(int algo) {
  return algo >= 0 && algo <= SPC_SPGEMM_OUTER ? algo_names[algo] : "?";
}

const char *spc_spgemm_workspace_name(int ws) {
  return ws >= 0 && ws <= SPC_SPGEMM_WS_BITMAP ? ws_names[ws] : "?";
}

int spc_spgemm_algo_parse(const char *name, int *algo) {
  for (int k = 0; name && k <= SPC_SPGEMM_OUTER; k++)
    if (!strcmp(name, algo_names[k])) return *algo = k, 0;
  return -1;
}

int spc_spgemm_workspace_parse(const char *name, int *ws) {
  for (int k = 0; name && k <= SPC_SPGEMM_WS_BITMAP; k++)
    if (!strcmp(name, ws_names[k])) return *ws = k, 0;
  return -1;
}

spc_status spc_spgemm_explain(const spc_tensor *A, const spc_tensor *B, const spc_kernel_opts *ko,
                              int *algo, int *workspace, char **text, spc_error *e) {
  if (text) *text = NULL;
  if (!A || !B || A->order != 2 || B->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spgemm needs two matrices");
  if (A->dims[1] != B->dims[0])
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                   "cannot multiply a %lld x %lld matrix by a %lld x %lld one",
                   (long long)A->dims[0], (long long)A->dims[1], (long long)B->dims[0],
                   (long long)B->dims[1]);
  int a = 0, w = 0;
  spc_status s = sg_plan(A, B, ko, &a, &w, NULL, NULL, text, e); /* text: spc_malloc'ed, free() */
  if (s) return s;
  if (algo) *algo = a;
  if (workspace) *workspace = w;
  return SPC_OK;
}
