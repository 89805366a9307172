/* spgemm_plan.c -- choosing the SpGEMM loop order by an asymptotic cost
 * model (DESIGN.md section 6), and the explanation `spconv explain spgemm`
 * prints.
 *
 * Each candidate's work is a sum of terms, each a set over the operands'
 * nonzeros and dimensions (A = {(i,k) stored}, B = {(k,j) stored}):
 *
 *   gustavson (i,k,j)  A + A*B + rowsort(C) + workspace
 *                      (A*B = {(i,k,j) : (i,k) in A, (k,j) in B}, the
 *                      flops; dense workspace: threads x cols(B); hash:
 *                      slots(C) = 2 |C(i,:)| per row, inside A*B)
 *   inner (i,j,k)      pairs + merge: pairs = {(i,j) : A(i,:), B(:,j)
 *                      nonempty}, merge = {(i,j,k) : (i,j) in pairs,
 *                      k in A(i,:) u B(:,j)}
 *   outer (k,i,j)      A + A*B + sort(A*B) (the sparse workspace orders
 *                      and combines every product)
 *
 * plus, for each operand whose stored level order is discordant with the
 * loop order (Gustavson walks A and B by rows, inner B by columns, outer
 * A by columns) or that is not compressed yet, a conversion: its nonzeros
 * and its new major dimension.  Terms are compared by containment
 * (merge contains A*B, A, B and pairs; sort(A*B) contains A*B and
 * rowsort(C); A*B contains slots(C); threads x cols(B) contains cols(B)).
 * A candidate is dropped when every term of another candidate is
 * contained in one of its terms (its work contains the other's, up to a
 * constant) and not the reverse.  The remaining candidates are ranked by
 * estimates: term sizes from row and column counts (count(j) per i,
 * count(i) per j; read from the pos arrays of a CSR / CSC, else counted
 * over the components) times a per-term weight (nanoseconds per element,
 * measured on this code; bench/README.md), parallel terms divided by the
 * thread count, plus a fixed cost per run.
 *
 * The Gustavson workspace: hash when B has more than 16 columns per
 * product of an average nonempty row of A (the dense accumulator would
 * be mostly idle) and the dense one (16 bytes a column) would pass 2 MiB,
 * beyond a core's cache (n > 131072); dense otherwise.  Measured
 * (bench/README.md): dense wins at n = 64000 (a 7-point stencil), hash at
 * n = 200000 and 2000000 (uniform random, 5 and 1.5 per row). */
#include "spgemm_internal.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { T_A, T_B, T_FLOPS, T_SLOTS, T_ROWSORT, T_SORTW, T_PAIRS, T_MERGE, T_DENSE, T_M, T_K, T_N, NTERMS };

static const char *const term_set[NTERMS] = {
    [T_A] = "A",
    [T_B] = "B",
    [T_FLOPS] = "A*B",
    [T_SLOTS] = "slots(C)",
    [T_ROWSORT] = "rowsort(C)",
    [T_SORTW] = "sort(A*B)",
    [T_PAIRS] = "pairs",
    [T_MERGE] = "merge",
    [T_DENSE] = "threads x cols(B)",
    [T_M] = "rows(A)",
    [T_K] = "cols(A)",
    [T_N] = "cols(B)",
};

/* contains[x] has bit y: term x's set contains term y's */
static const unsigned contains[NTERMS] = {
    [T_MERGE] = 1u << T_FLOPS | 1u << T_SLOTS | 1u << T_A | 1u << T_B | 1u << T_PAIRS,
    [T_SORTW] = 1u << T_FLOPS | 1u << T_SLOTS | 1u << T_ROWSORT,
    [T_FLOPS] = 1u << T_SLOTS,
    [T_DENSE] = 1u << T_N,
};

/* weights: nanoseconds per element of each term (bench/README.md) */
static const double weight[NTERMS] = {
    [T_A] = 1.0,       [T_B] = 1.0,        [T_FLOPS] = 3.0, [T_SLOTS] = 4.0,
    [T_ROWSORT] = 1.5, [T_SORTW] = 12.0,   [T_PAIRS] = 2.0, [T_MERGE] = 4.0,
    [T_DENSE] = 0.5,   [T_M] = 1.0,        [T_K] = 1.0,     [T_N] = 1.0,
};
#define CONV_NNZ 15.0 /* ns per nonzero converted (count, place, values) */
/* a fixed cost per run, outside the sets (bench/README.md: the products of
 * the smallest matrices): the result's CSR shell and the workspaces
 * (gustavson, inner: about 10 us); the workspace, the builder and its
 * conversion (outer) */
static const double fixed_ns[] = {0, 1e4, 1e4, 1.2e6};

typedef struct cand {
  int algo, ws;
  unsigned terms; /* bits of the terms, conversions' included */
  bool parallel;  /* the kernel's terms run over threads (not outer's sort) */
  const char *fa, *fb; /* formats the loop order needs */
  bool conv_a, conv_b;
  double est;
  int dropped_by; /* -1: kept */
} cand;

typedef struct stats {
  int64_t m, K, n, nnz_a, nnz_b, nzr_a, nzc_b;
  double size[NTERMS];
  int64_t *rows; /* NULL, or m + 1: each row's flops at [i + 1] (rows_set says when filled) */
  bool rows_set;
} stats;

/* row and column counts of t (either may be NULL): from a CSR's or CSC's
 * pos (and crd), else one pass over the components */
static spc_status counts(const spc_tensor *t, int64_t *rows, int64_t *cols, int64_t *nnz, spc_error *e) {
  const char *f = spc_tensor_format(t);
  *nnz = 0;
  if (spc_is_converted(t) && (!strcmp(f, "csr") || !strcmp(f, "csc"))) {
    sg_mat c;
    sg_view(t, &c);
    bool r = !strcmp(f, "csr");
    int64_t *maj = r ? rows : cols, *min = r ? cols : rows;
    for (int64_t s = 0; maj && s < c.major; s++) maj[s] = spc_arr_get(c.pos, s + 1) - spc_arr_get(c.pos, s);
    int64_t p0 = spc_arr_get(c.pos, 0), p1 = spc_arr_get(c.pos, c.major);
    if (min && c.crd->type == SPC_IDX32) { /* one pass over crd, typed */
      const int32_t *restrict x = c.crd->data;
      for (int64_t p = p0; p < p1; p++) min[x[p]]++;
    } else if (min) {
      const int64_t *restrict x = c.crd->data;
      for (int64_t p = p0; p < p1; p++) min[x[p]]++;
    }
    *nnz = p1 - p0;
    return SPC_OK;
  }
  spc_iter *it = NULL;
  spc_status s = spc_iter_create(t, &it, e);
  int64_t k[SPC_MAX_ORDER];
  const void *v;
  while (!s && spc_iter_next(it, k, &v)) {
    if (rows) rows[k[0]]++;
    if (cols) cols[k[1]]++;
    ++*nnz;
  }
  spc_iter_free(&it);
  return s;
}

static double xlogx(double x) { return x > 2 ? x * log2(x) : x; }

/* A and B both CSR made by the conversion: nonempty rows of A and B's row
 * counts from their pos; int32 arrays: the flops row by row (each row's
 * kept in st->rows when given), B's nonempty columns marked over its crd
 * (A A: over A's, in the same pass); other widths: A's column counts over
 * its crd (A A: B's nonempty columns read off them); else the counts of
 * both, rows and columns */
static spc_status flops_of(const spc_tensor *A, const spc_tensor *B, stats *st, double *F, spc_error *e) {
  bool csr = spc_is_converted(A) && spc_is_converted(B) && !strcmp(spc_tensor_format(A), "csr") &&
             !strcmp(spc_tensor_format(B), "csr");
  spc_status s = SPC_OK;
  if (csr) {
    sg_mat a, b;
    sg_view(A, &a);
    sg_view(B, &b);
    /* int32 pos and crd (the usual CSR): typed loops (the statistics are
     * most of auto's cost on small products), the flops summed over A's
     * entries from B's row lengths -- loads only: A's column counts,
     * incremented, chained through memory where a column repeats
     * (cryg2500 squared: 13 us of a 199 us auto product) */
    bool w32 = a.pos->type == SPC_IDX32 && b.pos->type == SPC_IDX32 && b.crd->type == SPC_IDX32;
    bool gat = w32 && a.crd->type == SPC_IDX32;
    int64_t *ca = gat ? NULL : spc_calloc((size_t)st->K + 1, sizeof *ca);
    if (!gat && !ca) return SPC_NOMEM(e);
    if (!gat) s = counts(A, NULL, ca, &st->nnz_a, e);
    const int32_t *ap = a.pos->data, *bp = b.pos->data, *bc = b.crd->data;
    int64_t nzr = 0, nzc = 0;
    double f = 0;
    /* B's nonempty columns, marked (A A, int32: A's, in the flops' pass);
     * A A of other widths: A's column counts */
    bool marks = !(A == B && !gat);
    unsigned char *seen = marks && !s ? spc_calloc((size_t)st->n + 1, 1) : NULL;
    if (marks && !s && !seen) s = SPC_NOMEM(e);
    if (s) {
    } else if (gat) {
      /* row by row: each row's flops kept for the kernel where asked
       * (its rows' bounds, not counted again) */
      const int32_t *ac = a.crd->data;
      int64_t *rw = st->rows, fl = 0;
      for (int64_t i = 0; i < st->m; i++) {
        int64_t fi = 0, q1 = ap[i + 1];
        nzr += q1 > ap[i];
        if (A == B)
          for (int64_t p = ap[i]; p < q1; p++) fi += bp[ac[p] + 1] - bp[ac[p]], seen[ac[p]] = 1;
        else
          for (int64_t p = ap[i]; p < q1; p++) fi += bp[ac[p] + 1] - bp[ac[p]];
        if (rw) rw[i + 1] = fi;
        fl += fi;
      }
      if (rw) rw[0] = 0, st->rows_set = true;
      st->nnz_a = ap[st->m] - ap[0];
      f = (double)fl;
    } else if (w32) {
      for (int64_t i = 0; i < st->m; i++) nzr += ap[i + 1] > ap[i];
      for (int64_t k = 0; k < st->K; k++) f += (double)ca[k] * (double)(bp[k + 1] - bp[k]);
    } else {
      for (int64_t i = 0; i < st->m; i++) nzr += spc_arr_get(a.pos, i + 1) > spc_arr_get(a.pos, i);
      for (int64_t k = 0; k < st->K; k++)
        f += (double)ca[k] * (double)(spc_arr_get(b.pos, k + 1) - spc_arr_get(b.pos, k));
    }
    st->nzr_a += nzr, *F += f;
    st->nnz_b = spc_arr_get(b.pos, st->K) - spc_arr_get(b.pos, 0);
    if (s) {
    } else if (A == B && !gat) {
      for (int64_t j = 0; j < st->n; j++) nzc += ca[j] > 0;
    } else {
      int64_t q0 = spc_arr_get(b.pos, 0), q1 = spc_arr_get(b.pos, st->K);
      /* stores only, then one count over the bytes (a test of each
       * column's byte before its store waited on the store before) */
      if (A != B && w32) /* (A A: marked in the flops' pass) */
        for (int64_t q = q0; q < q1; q++) seen[bc[q]] = 1;
      else if (A != B)
        for (int64_t q = q0; q < q1; q++) seen[spc_arr_get(b.crd, q)] = 1;
      for (int64_t j = 0; j < st->n; j++) nzc += seen[j];
    }
    spc_free(seen);
    st->nzc_b += nzc;
    spc_free(ca);
    return s;
  }
  int64_t *ca = spc_calloc((size_t)st->K + 1, sizeof *ca), *ra = spc_calloc((size_t)st->m + 1, sizeof *ra);
  int64_t *rb = spc_calloc((size_t)st->K + 1, sizeof *rb), *cb = spc_calloc((size_t)st->n + 1, sizeof *cb);
  s = ca && ra && rb && cb ? counts(A, ra, ca, &st->nnz_a, e) : SPC_NOMEM(e);
  if (!s) s = counts(B, rb, cb, &st->nnz_b, e);
  if (!s) {
    for (int64_t k = 0; k < st->K; k++) *F += (double)ca[k] * (double)rb[k];
    for (int64_t i = 0; i < st->m; i++) st->nzr_a += ra[i] > 0;
    for (int64_t j = 0; j < st->n; j++) st->nzc_b += cb[j] > 0;
  }
  spc_free(ra);
  spc_free(ca);
  spc_free(rb);
  spc_free(cb);
  return s;
}

static spc_status gather(const spc_tensor *A, const spc_tensor *B, int64_t *rows, stats *st, spc_error *e) {
  memset(st, 0, sizeof *st);
  st->m = A->dims[0], st->K = A->dims[1], st->n = B->dims[1];
  st->rows = rows;
  double F = 0;
  spc_status s = flops_of(A, B, st, &F, e);
  if (!s) {
    /* |C(i,:)|: the distinct columns among an average row's products,
     * as if they fell uniformly on B's nonempty columns */
    double rbar = st->nzr_a ? F / (double)st->nzr_a : 0, nc = (double)st->nzc_b;
    double c = nc > 0 ? nc * -expm1(-rbar / nc) : 0;
    double *z = st->size;
    z[T_A] = (double)st->nnz_a, z[T_B] = (double)st->nnz_b, z[T_FLOPS] = F;
    z[T_SLOTS] = 2 * c * (double)st->nzr_a;
    z[T_ROWSORT] = (double)st->nzr_a * xlogx(c);
    z[T_SORTW] = xlogx(F);
    z[T_PAIRS] = (double)st->nzr_a * (double)st->nzc_b;
    z[T_MERGE] = (double)st->nzc_b * (double)st->nnz_a + (double)st->nzr_a * (double)st->nnz_b;
    z[T_M] = (double)st->m, z[T_K] = (double)st->K, z[T_N] = (double)st->n;
  }
  return s;
}

static int ws_rule(const stats *st) {
  double rbar = st->nzr_a ? st->size[T_FLOPS] / (double)st->nzr_a : 0;
  return (double)st->n > 16 * rbar && st->n > 131072 ? SPC_SPGEMM_WS_HASH : SPC_SPGEMM_WS_DENSE;
}

static bool needs(const spc_tensor *t, const char *fmt) {
  return !(spc_is_converted(t) && !strcmp(spc_tensor_format(t), fmt));
}

/* x's terms cover y's: each of y's terms inside one of x's */
static bool covers(unsigned x, unsigned y) {
  for (int t = 0; t < NTERMS; t++) {
    if (!(y >> t & 1)) continue;
    bool in = false;
    for (int u = 0; u < NTERMS && !in; u++) in = (x >> u & 1) && (u == t || (contains[u] >> t & 1));
    if (!in) return false;
  }
  return true;
}

static void build(const spc_tensor *A, const spc_tensor *B, const stats *st, int nt, int ws, cand *c) {
  c[0] = (cand){.algo = SPC_SPGEMM_GUSTAVSON, .ws = ws, .fa = "csr", .fb = "csr", .parallel = true,
                .terms = 1u << T_A | 1u << T_FLOPS | 1u << T_ROWSORT |
                         (ws == SPC_SPGEMM_WS_HASH ? 1u << T_SLOTS : 1u << T_DENSE)};
  c[1] = (cand){.algo = SPC_SPGEMM_INNER, .fa = "csr", .fb = "csc", .parallel = true,
                .terms = 1u << T_PAIRS | 1u << T_MERGE};
  c[2] = (cand){.algo = SPC_SPGEMM_OUTER, .fa = "csc", .fb = "csr",
                .terms = 1u << T_A | 1u << T_FLOPS | 1u << T_SORTW};
  for (int k = 0; k < 3; k++) {
    cand *x = &c[k];
    x->conv_a = needs(A, x->fa);
    x->conv_b = needs(B, x->fb);
    double conv = 0, work = 0;
    if (x->conv_a) { /* nonzeros and the new major dimension */
      x->terms |= 1u << T_A | 1u << (!strcmp(x->fa, "csr") ? T_M : T_K);
      conv += CONV_NNZ * st->size[T_A] + st->size[!strcmp(x->fa, "csr") ? T_M : T_K];
    }
    if (x->conv_b) {
      x->terms |= 1u << T_B | 1u << (!strcmp(x->fb, "csr") ? T_K : T_N);
      conv += CONV_NNZ * st->size[T_B] + st->size[!strcmp(x->fb, "csr") ? T_K : T_N];
    }
    unsigned kt = x->terms;
    for (int t = 0; t < NTERMS; t++) {
      if (!(kt >> t & 1) || t == T_M || t == T_K || t == T_N) continue;
      double w = weight[t] * st->size[t];
      if (t == T_DENSE) w = weight[t] * (double)nt * (double)st->n;
      if (x->parallel || t != T_SORTW) w /= nt;
      work += w;
    }
    x->est = fixed_ns[x->algo] + conv + work;
    x->dropped_by = -1;
  }
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3 && c[k].dropped_by < 0; l++)
      if (l != k && c[l].dropped_by < 0 && covers(c[k].terms, c[l].terms) && !covers(c[l].terms, c[k].terms))
        c[k].dropped_by = l;
}

/* ---- the explanation ---------------------------------------------------------- */

typedef struct buf {
  char *s;
  size_t n, cap;
  bool bad;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
  if (b->bad) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)k + 1 > b->cap) {
    size_t cap = (b->cap ? 2 * b->cap : 4096) + (size_t)k;
    char *s = spc_realloc(b->s, cap);
    if (!s) return (void)(b->bad = true);
    b->s = s, b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

static const char *const order_of[] = {"", "(i,k,j)", "(i,j,k)", "(k,i,j)"};
static const char *const work_of[] = {"", "A + A*B + rowsort(C) + ", "pairs + merge", "A + A*B + sort(A*B)"};

static void put_terms(buf *b, unsigned terms) {
  bool first = true;
  for (int t = 0; t < NTERMS; t++)
    if (terms >> t & 1) put(b, "%s%s", first ? "" : " + ", term_set[t]), first = false;
}

static void explain(buf *b, const spc_tensor *A, const spc_tensor *B, const stats *st, const cand *c, int nt,
                    int chosen, bool forced) {
  const double *z = st->size;
  put(b, "spgemm C = A B: A %lld x %lld (%s, %lld stored), B %lld x %lld (%s, %lld stored), %d thread%s\n",
      (long long)st->m, (long long)st->K, spc_tensor_format(A), (long long)st->nnz_a, (long long)st->K,
      (long long)st->n, spc_tensor_format(B), (long long)st->nnz_b, nt, nt == 1 ? "" : "s");
  put(b, "attribute queries: A: count(k) per i, count(i) per k; B: count(j) per k, count(k) per j\n");
  put(b, "  nonempty rows of A %lld, nonempty columns of B %lld\n", (long long)st->nzr_a, (long long)st->nzc_b);
  put(b, "sets (sizes estimated from the counts):\n");
  put(b, "  A          {(i,k) in A}                                        %.4g\n", z[T_A]);
  put(b, "  B          {(k,j) in B}                                        %.4g\n", z[T_B]);
  put(b, "  A*B        {(i,k,j) : (i,k) in A, (k,j) in B}                  %.4g\n", z[T_FLOPS]);
  put(b, "  rowsort(C) sum_i |C(i,:)| log |C(i,:)|                       %.4g\n", z[T_ROWSORT]);
  put(b, "  slots(C)   sum_i 2 |C(i,:)| (hash tables), inside A*B          %.4g\n", z[T_SLOTS]);
  put(b, "  sort(A*B)  |A*B| log |A*B| (order and combine every product)   %.4g\n", z[T_SORTW]);
  put(b, "  pairs      {(i,j) : A(i,:) and B(:,j) nonempty}                %.4g\n", z[T_PAIRS]);
  put(b, "  merge      {(i,j,k) : (i,j) in pairs, k in A(i,:) u B(:,j)}    %.4g\n", z[T_MERGE]);
  put(b, "candidates:\n");
  for (int k = 0; k < 3; k++) {
    const cand *x = &c[k];
    put(b, "  %s %s", spc_spgemm_algo_name(x->algo), order_of[x->algo]);
    if (x->algo == SPC_SPGEMM_GUSTAVSON) put(b, ", %s workspace", spc_spgemm_workspace_name(x->ws));
    put(b, ": A as %s, B as %s\n    work: ", x->fa, x->fb);
    put(b, "%s%s", work_of[x->algo],
        x->algo != SPC_SPGEMM_GUSTAVSON      ? ""
        : x->ws == SPC_SPGEMM_WS_HASH ? "slots(C)"
                                      : "threads x cols(B)");
    put(b, "\n    conversions: ");
    if (!x->conv_a && !x->conv_b) put(b, "none");
    /* (a csr read from a file, not made by the conversion engine, is
     * converted too: "as read") */
    if (x->conv_a)
      put(b, "A %s -> %s (A + %s)", strcmp(spc_tensor_format(A), x->fa) ? spc_tensor_format(A) : "as read", x->fa,
          !strcmp(x->fa, "csr") ? "rows(A)" : "cols(A)");
    if (x->conv_b)
      put(b, "%sB %s -> %s (B + %s)", x->conv_a ? ", " : "",
          strcmp(spc_tensor_format(B), x->fb) ? spc_tensor_format(B) : "as read", x->fb,
          !strcmp(x->fb, "csr") ? "rows(B)" : "cols(B)");
    put(b, "\n    all terms: ");
    put_terms(b, x->terms);
    put(b, "\n    estimate: %.4g ns\n", x->est);
  }
  put(b, "dominance:\n");
  bool any = false;
  for (int k = 0; k < 3; k++)
    if (c[k].dropped_by >= 0) {
      put(b, "  %s dropped: its work contains %s's (each of ", spc_spgemm_algo_name(c[k].algo),
          spc_spgemm_algo_name(c[c[k].dropped_by].algo));
      put_terms(b, c[c[k].dropped_by].terms);
      put(b, " lies inside one of its terms)\n");
      any = true;
    }
  if (!any) put(b, "  none dropped: no candidate's work contains another's\n");
  put(b, "choice: %s", spc_spgemm_algo_name(chosen));
  if (chosen == SPC_SPGEMM_GUSTAVSON) put(b, " (%s workspace)", spc_spgemm_workspace_name(c[0].ws));
  if (forced) {
    put(b, ", as asked\n");
  } else {
    put(b, ": the lowest estimate of those kept");
    for (int k = 0; k < 3; k++)
      if (c[k].dropped_by < 0 && c[k].algo != chosen)
        put(b, "; %s %.3gx", spc_spgemm_algo_name(c[k].algo), c[k].est / (c[chosen - 1].est > 0 ? c[chosen - 1].est : 1));
    put(b, "\n");
  }
}

spc_status sg_plan(const spc_tensor *A, const spc_tensor *B, const spc_kernel_opts *ko, int *algo, int *ws,
                   int64_t *rows, bool *rows_set, char **text, spc_error *e) {
  stats st;
  spc_status s = gather(A, B, rows, &st, e);
  if (rows_set) *rows_set = !s && st.rows_set;
  if (s) return s;
  int nt = ko && ko->threads > 0 ? ko->threads : 1;
  int want = ko ? ko->algo : 0, wws = ko ? ko->workspace : 0;
  int w = wws ? wws : ws_rule(&st);
  cand c[3];
  build(A, B, &st, nt, w, c);
  int best = -1;
  for (int k = 0; k < 3; k++)
    if (c[k].dropped_by < 0 && (best < 0 || c[k].est < c[best].est)) best = k;
  *algo = want ? want : c[best].algo;
  *ws = *algo == SPC_SPGEMM_GUSTAVSON ? w : SPC_SPGEMM_WS_AUTO;
  if (text) {
    buf b = {0};
    explain(&b, A, B, &st, c, nt, *algo, want != 0);
    if (b.bad || !b.s) {
      spc_free(b.s);
      return SPC_NOMEM(e);
    }
    *text = b.s;
  }
  return SPC_OK;
}
