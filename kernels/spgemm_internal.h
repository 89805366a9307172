/* spgemm_internal.h -- pieces shared by the SpGEMM loop orders
 * (spgemm.c: entry, operands, Gustavson; spgemm_inner.c; spgemm_outer.c;
 * spgemm_plan.c: the cost model and `spconv explain`).
 *
 * A compressed operand is seen as a `sg_mat`: `major` outer slices (rows
 * of a CSR, columns of a CSC), each a sorted, duplicate-free list of
 * `minor` coordinates in crd[pos[s] .. pos[s+1]-1], values in val.
 * Products: double, complex (an operand is complex), wrapping uint64
 * (both uint64, as SciPy multiplies them) or wrapping int64 (both integer
 * or pattern otherwise, not both pattern); a pattern operand counts as
 * ones.  Every algorithm gives the symbolic product's structure: (i,j) is
 * stored when some k has A(i,k) and B(k,j) stored, whatever the sum. */
#ifndef SPC_SPGEMM_INTERNAL_H
#define SPC_SPGEMM_INTERNAL_H

#include "spc_assemble.h"

typedef struct sg_mat {
  int64_t major, minor;
  const spc_array *pos, *crd;
  const void *val;
  spc_vtype vt;
} sg_mat;

typedef enum sg_kind { SG_F64 = 0, SG_C128, SG_I64, SG_U64 } sg_kind;

/* value q of c as (re, im) */
static inline void sg_get(const sg_mat *c, int64_t q, double *re, double *im) {
  *im = 0;
  switch (c->vt) {
  case SPC_I64: *re = (double)((const int64_t *)c->val)[q]; break;
  case SPC_U64: *re = (double)((const uint64_t *)c->val)[q]; break;
  case SPC_F32: *re = ((const float *)c->val)[q]; break;
  case SPC_F64: *re = ((const double *)c->val)[q]; break;
  case SPC_C128:
    *re = ((const double *)c->val)[2 * q];
    *im = ((const double *)c->val)[2 * q + 1];
    break;
  default: *re = 1;
  }
}

/* integer value q of c (pattern: 1), for products in wrapping int64 */
static inline uint64_t sg_geti(const sg_mat *c, int64_t q) {
  switch (c->vt) {
  case SPC_I64: return (uint64_t)((const int64_t *)c->val)[q];
  case SPC_U64: return ((const uint64_t *)c->val)[q];
  default: return 1;
  }
}

/* acc[slot] += a[p] * b[q] in the product kind (acc: double, (re, im)
 * pairs or uint64 by kind; int64 and uint64 wrap alike, their bits are
 * the same); *set: assign instead of add */
static inline void sg_fma(sg_kind kind, void *acc, int64_t slot, const sg_mat *a, int64_t p,
                          const sg_mat *b, int64_t q, bool set) {
  if (kind == SG_I64 || kind == SG_U64) {
    uint64_t x = sg_geti(a, p) * sg_geti(b, q);
    uint64_t *u = acc;
    u[slot] = set ? x : u[slot] + x;
    return;
  }
  double ar, ai, br, bi;
  sg_get(a, p, &ar, &ai);
  sg_get(b, q, &br, &bi);
  double *d = acc;
  if (kind == SG_C128) {
    double re = ar * br - ai * bi, im = ar * bi + ai * br;
    if (set) d[2 * slot] = re, d[2 * slot + 1] = im;
    else d[2 * slot] += re, d[2 * slot + 1] += im;
  } else {
    d[slot] = set ? ar * br : d[slot] + ar * br;
  }
}

static inline size_t sg_width(sg_kind k) { return k == SG_C128 ? 16 : 8; }
static inline spc_vtype sg_vtype(sg_kind k) {
  return k == SG_C128 ? SPC_C128 : k == SG_I64 ? SPC_I64 : k == SG_U64 ? SPC_U64 : SPC_F64;
}

SPC_INTERNAL sg_kind sg_kind_of(spc_vtype a, spc_vtype b);
SPC_INTERNAL void sg_view(const spc_tensor *t, sg_mat *c);
/* SPC_ERR_UNSUPPORTED when a product of nnz entries (and its COO and
 * converted copy) would not fit in memory */
SPC_INTERNAL spc_status sg_check_fits(int64_t nnz, sg_kind k, spc_error *e);
/* Where a two-phase product goes once its row counts are known: a CSR
 * made as spc_convert makes one (co: the conversion options; pos = rp)
 * when it can, else a COO sorted by (i, j); row
 * i's entries at rp[i] .. rp[i+1]-1 of cj and val (and ci, for the COO). */
typedef struct sg_out {
  spc_tensor *t;
  spc_array *ci, *cj; /* ci NULL: t is the CSR */
  void *val;
  bool unordered; /* rows left in the order found (Gustavson, unsorted) */
  bool bitmap;    /* Gustavson ran the bitmap plan */
} sg_out;
SPC_INTERNAL spc_status sg_out_make(const spc_convert_opts *co, int64_t m, int64_t n, const int64_t *rp,
                                    sg_kind k, sg_out *o, spc_error *e);
/* entry t of the output: row i, column j (the value is written apart) */
static inline void sg_out_put(const sg_out *o, int64_t t, int64_t i, int64_t j) {
  if (o->ci) spc_arr_set(o->ci, t, i);
  spc_arr_set(o->cj, t, j);
}
SPC_INTERNAL int sg_cmp_i64(const void *a, const void *b);

/* The loop orders: C into an sg_out (Gustavson, inner) or
 * in out_format (outer, packed from the sparse workspace). */
/* ws: SPC_SPGEMM_WS_DENSE (the bitmap plan where B's rows are dense in
 * their spans), _HASH or _BITMAP; unsorted: each row's columns in the
 * order found (the values the same) */
/* flops (may be NULL): each row's flops, row i at [i + 1] (sg_plan's),
 * for the rows' bounds */
SPC_INTERNAL spc_status sg_gustavson(const sg_mat *a, const sg_mat *b, sg_kind k, int ws, bool unsorted,
                                     int nt, const int64_t *flops, const spc_convert_opts *co, sg_out *out,
                                     spc_error *e);
SPC_INTERNAL spc_status sg_inner(const sg_mat *a, const sg_mat *bc, sg_kind k, int nt,
                                 const spc_convert_opts *co, sg_out *out, spc_error *e);
SPC_INTERNAL spc_status sg_outer(const sg_mat *ac, const sg_mat *b, sg_kind k, int nt,
                                 const char *out_format, const spc_convert_opts *o,
                                 spc_tensor **C, spc_error *e);

/* The cost model's decision for A B (spgemm_plan.c); text (may be NULL)
 * receives the explanation, spc_malloc'ed.  rows (may be NULL): m + 1
 * slots, where the statistics' pass leaves each row's flops, row i at
 * [i + 1] (*rows_set true), when A and B are int32 CSRs. */
SPC_INTERNAL spc_status sg_plan(const spc_tensor *A, const spc_tensor *B, const spc_kernel_opts *ko,
                                int *algo, int *ws, int64_t *rows, bool *rows_set, char **text,
                                spc_error *e);

#endif
