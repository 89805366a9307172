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
 * entries, the numeric pass fills them; rows are split across OpenMP
 * threads (each its own workspace), so results do not depend on the
 * thread count.  Structure is the symbolic product in every algorithm. */
#include "spgemm_internal.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sg_kind sg_kind_of(spc_vtype a, spc_vtype b) {
  if (a == SPC_C128 || b == SPC_C128) return SG_C128;
  /* integers (and patterns) multiply in wrapping int64, as SciPy and
   * GraphBLAS do; a float operand makes the product double */
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
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  double need = (double)nnz * (16.0 + (double)sg_width(k)) * 2.0;
  double have = pages > 0 && psz > 0 ? (double)pages * (double)psz : 0;
  if (have > 0 && need > 0.8 * have)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "the product has %lld entries: too large for this machine's memory "
                   "(about %.1f GB needed, %.1f GB here)",
                   (long long)nnz, need / 1e9, have / 1e9);
  return SPC_OK;
}

/* An empty CSR (m x n, room for nnz entries) as the conversion engine
 * makes it: the conversion of an empty m x n COO (the built-in specs, no
 * parsing), whose crd and values are then given room for nnz entries.
 * SPC_NOT_HANDLED where the engine would choose wider positions for nnz
 * entries than for none, or when its csr holds other arrays. */
static spc_status csr_shell(const spc_convert_opts *o, int64_t m, int64_t n, int64_t nnz, sg_kind k,
                            spc_tensor **out, spc_error *e) {
  *out = NULL;
  if (nnz >= INT32_MAX) return SPC_NOT_HANDLED;
  int64_t dims[2] = {m, n};
  spc_tensor *z = NULL, *t = NULL;
  spc_status s = spc_coo_alloc(2, dims, 0, sg_vtype(k), &z, e);
  if (!s) s = spc_convert_to(z, "csr", o, &t, e);
  spc_tensor_free(&z);
  if (s) return s;
  spc_array *pos = spc_level_array(&t->lv[1], "pos"), *crd = spc_level_array(&t->lv[1], "crd");
  if (t->nlevels != 2 || t->lv[0].narr || t->lv[1].narr != 2 || !pos || !crd || crd->len) {
    spc_tensor_free(&t);
    return SPC_NOT_HANDLED;
  }
  void *c = spc_malloc_n(nnz ? nnz : 1, crd->type == SPC_IDX32 ? 4 : 8);
  void *v = spc_malloc_n(nnz ? nnz : 1, sg_width(k));
  if (!c || !v) {
    spc_free(c), spc_free(v);
    spc_tensor_free(&t);
    return SPC_NOMEM(e);
  }
  if (crd->owned) spc_free(crd->data);
  crd->data = c, crd->len = nnz, crd->owned = 1;
  if (t->val_owned) spc_free(t->val);
  t->val = v, t->val_owned = true, t->nval = nnz;
  *out = t;
  return SPC_OK;
}

spc_status sg_out_make(const spc_convert_opts *co, int64_t m, int64_t n, const int64_t *rp, sg_kind k,
                       sg_out *o, spc_error *e) {
  memset(o, 0, sizeof *o);
  int64_t nnz = rp[m];
  spc_status s = sg_check_fits(nnz, k, e);
  if (!s) s = csr_shell(co, m, n, nnz, k, &o->t, e);
  if (!s) {
    spc_array *pos = spc_level_array(&o->t->lv[1], "pos");
    for (int64_t i = 0; i < pos->len; i++) spc_arr_set(pos, i, rp[i < m ? i : m]);
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
 * insertion sort on short runs */
static void sort_cols(int64_t *restrict c, int64_t n) {
  while (n > 24) {
    int64_t x = c[0], y = c[n / 2], z = c[n - 1];
    int64_t piv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    int64_t i = 0, j = n - 1;
    for (;;) {
      while (c[i] < piv) i++;
      while (c[j] > piv) j--;
      if (i >= j) break;
      int64_t t = c[i];
      c[i++] = c[j], c[j--] = t;
    }
    /* [0, j] <= piv <= [j+1, n): recurse on the smaller side */
    if (j + 1 < n - j - 1) {
      sort_cols(c, j + 1);
      c += j + 1, n -= j + 1;
    } else {
      sort_cols(c + j + 1, n - j - 1);
      n = j + 1;
    }
  }
  for (int64_t s = 1; s < n; s++) {
    int64_t v = c[s], t = s;
    while (t > 0 && c[t - 1] > v) c[t] = c[t - 1], t--;
    c[t] = v;
  }
}

/* the row kernels, per crd width and value path (spgemm_gus_row.h) */
#define SG_SUF i32_fast
#define SG_T int32_t
#define SG_FAST 1
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_FAST
#define SG_SUF i64_fast
#define SG_T int64_t
#define SG_FAST 1
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_FAST
#define SG_SUF any_fast
#define SG_FAST 1
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_FAST
#define SG_SUF i32_any
#define SG_T int32_t
#define SG_FAST 0
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_FAST
#define SG_SUF i64_any
#define SG_T int64_t
#define SG_FAST 0
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_T
#undef SG_FAST
#define SG_SUF any_any
#define SG_FAST 0
#include "spgemm_gus_row.h"
#undef SG_SUF
#undef SG_FAST

typedef int64_t (*row_count_fn)(const sg_mat *, const sg_mat *, int64_t, bool, int64_t *, hws *, bool *);
typedef void (*row_fill_fn)(const sg_mat *, const sg_mat *, sg_kind, int64_t, int64_t, int64_t, bool, int64_t *,
                            double *, hws *, int64_t *, const sg_out *);

static void pick_rows(const sg_mat *a, const sg_mat *b, row_count_fn *cf, row_fill_fn *ff) {
  bool fast = a->vt == SPC_F64 && b->vt == SPC_F64;
  int w = a->crd->type == b->crd->type ? (a->crd->type == SPC_IDX32 ? 32 : 64) : 0;
  static const row_count_fn counts[2][3] = {{row_count_any_any, row_count_i32_any, row_count_i64_any},
                                            {row_count_any_fast, row_count_i32_fast, row_count_i64_fast}};
  static const row_fill_fn fills[2][3] = {{row_fill_any_any, row_fill_i32_any, row_fill_i64_any},
                                          {row_fill_any_fast, row_fill_i32_fast, row_fill_i64_fast}};
  int x = w == 32 ? 1 : w == 64 ? 2 : 0;
  *cf = counts[fast][x];
  *ff = fills[fast][x];
}

spc_status sg_gustavson(const sg_mat *a, const sg_mat *b, sg_kind kind, bool hash, int nt,
                        const spc_convert_opts *co, sg_out *out, spc_error *e) {
  int64_t m = a->major, n = b->minor;
  int64_t *rp = spc_calloc((size_t)m + 1, sizeof *rp);
  if (!rp) return SPC_NOMEM(e);
  row_count_fn row_count;
  row_fill_fn row_fill;
  pick_rows(a, b, &row_count, &row_fill);
  int fail = 0;
  spc_status s = SPC_OK;
#pragma omp parallel num_threads(nt)
  {
    int64_t *mark = hash ? NULL : malloc((size_t)(n ? n : 1) * sizeof *mark);
    hws h = {0};
    bool ok = hash || mark;
    for (int64_t j = 0; ok && !hash && j < n; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++)
      if (ok) rp[i + 1] = row_count(a, b, i, hash, mark, &h, &ok);
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
    free(mark);
    free(h.key);
    free(h.val);
  }
  if (fail) {
    spc_free(rp);
    return SPC_NOMEM(e);
  }
  int64_t mx = 0;
  for (int64_t i = 0; i < m; i++) {
    if (rp[i + 1] > mx) mx = rp[i + 1];
    rp[i + 1] += rp[i];
  }
  if ((s = sg_out_make(co, m, n, rp, kind, out, e))) {
    spc_free(rp);
    return s;
  }
#pragma omp parallel num_threads(nt)
  {
    int64_t *mark = hash ? NULL : malloc((size_t)(n ? n : 1) * sizeof *mark);
    double *acc = hash ? NULL : malloc((size_t)(n ? n : 1) * sg_width(kind));
    int64_t *cols = malloc((size_t)(mx ? mx : 1) * sizeof *cols);
    hws h = {0};
    bool ok = cols && (hash ? hws_size(&h, mx ? mx : 1) : mark && acc);
    for (int64_t j = 0; ok && !hash && j < n; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++)
      if (ok) row_fill(a, b, kind, i, rp[i], rp[i + 1] - rp[i], hash, mark, acc, &h, cols, out);
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
    free(mark);
    free(acc);
    free(cols);
    free(h.key);
    free(h.val);
  }
  spc_free(rp);
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
  if (spc_is_converted(a) && !strcmp(spc_tensor_format(a), fmt)) return SPC_OK;
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
  if (ws < SPC_SPGEMM_WS_AUTO || ws > SPC_SPGEMM_WS_HASH)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spgemm: unknown workspace %d", ws);
  spc_status s = SPC_OK;
  if ((algo == SPC_SPGEMM_AUTO || (algo == SPC_SPGEMM_GUSTAVSON && ws == SPC_SPGEMM_WS_AUTO)) &&
      (s = sg_plan(A, B, ko, &algo, &ws, NULL, e)))
    return s;
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
  sg_kind kind = sg_kind_of(a.vt, b.vt);
  int nt = ko && ko->threads > 0 ? ko->threads : 1;
  const char *of = out_format ? out_format : "csr";
  if (algo == SPC_SPGEMM_OUTER) {
    s = sg_outer(&a, &b, kind, nt, of, &o, C, e);
    goto done;
  }
  sg_out out;
  s = algo == SPC_SPGEMM_INNER ? sg_inner(&a, &b, kind, nt, &o, &out, e)
                               : sg_gustavson(&a, &b, kind, ws == SPC_SPGEMM_WS_HASH, nt, &o, &out, e);
  if (s) goto done;
  if (!out.ci && !strcmp(of, "csr")) { /* made as the conversion makes it */
    *C = out.t;
  } else {
    s = spc_convert_to(out.t, of, &o, C, e);
    spc_tensor_free(&out.t);
  }
done:
  spc_tensor_free(&oa);
  spc_tensor_free(&ob);
  return s;
}

static const char *const algo_names[] = {"auto", "gustavson", "inner", "outer"};
static const char *const ws_names[] = {"auto", "dense", "hash"};

const char *spc_spgemm_algo_name(int algo) {
  return algo >= 0 && algo <= SPC_SPGEMM_OUTER ? algo_names[algo] : "?";
}

const char *spc_spgemm_workspace_name(int ws) {
  return ws >= 0 && ws <= SPC_SPGEMM_WS_HASH ? ws_names[ws] : "?";
}

int spc_spgemm_algo_parse(const char *name, int *algo) {
  for (int k = 0; name && k <= SPC_SPGEMM_OUTER; k++)
    if (!strcmp(name, algo_names[k])) return *algo = k, 0;
  return -1;
}

int spc_spgemm_workspace_parse(const char *name, int *ws) {
  for (int k = 0; name && k <= SPC_SPGEMM_WS_HASH; k++)
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
  spc_status s = sg_plan(A, B, ko, &a, &w, text, e); /* text: spc_malloc'ed, free() */
  if (s) return s;
  if (algo) *algo = a;
  if (workspace) *workspace = w;
  return SPC_OK;
}
