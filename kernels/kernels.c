/* kernels.c -- SpMV and SpGEMM on converted data (DESIGN.md section 6).
 *
 * SpMV runs the IR routine made from the matrix format's read-side level
 * functions (assemble_read.c, spc_conv_spmv): any format, built-in or a
 * user's YAML, on the generic, factory or JIT engine; a matrix that is
 * not in a spec format yet (a COO just read) is converted to CSR first.
 *
 * SpGEMM is Gustavson's row-by-row product (i, k, j) on CSR operands
 * (converted by the engine when they are in another format), two-phase:
 * a symbolic pass counts each row's distinct columns with a marker array,
 * the numeric pass accumulates into a dense row workspace and emits the
 * row's columns in ascending order; rows are split across OpenMP threads
 * (each thread its own workspace), so results do not depend on the thread
 * count.  Values are double (complex when an operand is complex),
 * wrapping int64 when both operands are integers; pattern operands count
 * as ones. */
#include "spc_assemble.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static spc_status as_format(const spc_tensor *a, const char *fmt, const spc_convert_opts *o,
                            spc_tensor **own, const spc_tensor **use, spc_error *e) {
  *own = NULL;
  *use = a;
  if (spc_is_converted(a) && (!fmt || !strcmp(spc_tensor_format(a), fmt))) return SPC_OK;
  spc_status s = spc_convert_to(a, fmt ? fmt : "csr", o, own, e);
  if (!s) *use = *own;
  return s;
}

static const char *const sched_names[] = {"auto", "rows", "positions"};

const char *spc_schedule_name(spc_schedule s) {
  return (unsigned)s < 3 ? sched_names[s] : "?";
}

int spc_schedule_parse(const char *name, spc_schedule *s) {
  for (int k = 0; name && k < 3; k++)
    if (!strcmp(name, sched_names[k])) return (*s = (spc_schedule)k), 0;
  return -1;
}

spc_status spc_spmv(const spc_tensor *A, int transpose, const void *x, void *y,
                    const spc_kernel_opts *ko, spc_error *e) {
  if (!A || !x || !y || A->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv needs a matrix, x and y");
  spc_schedule sched = ko ? ko->schedule : SPC_SCHED_AUTO;
  if ((unsigned)sched > SPC_SCHED_POSITIONS)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv: unknown schedule %d (auto, rows, positions)",
                   (int)sched);
  {
    size_t w = A->vt == SPC_C128 ? 16 : 8;
    const char *xb = x, *yb = y;
    const char *xe = xb + (size_t)A->dims[transpose ? 0 : 1] * w, *ye = yb + (size_t)A->dims[transpose ? 1 : 0] * w;
    if (xb < ye && yb < xe) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv: x and y overlap");
  }
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  if (ko) o.engine = ko->engine, o.no_jit = ko->no_jit;
  spc_tensor *own = NULL;
  const spc_tensor *a = NULL;
  spc_status s = as_format(A, ko && ko->format ? ko->format : NULL, &o, &own, &a, e);
  if (!s) {
    int64_t ny = A->dims[transpose ? 1 : 0];
    size_t w = a->vt == SPC_C128 ? 16 : 8;
    memset(y, 0, (size_t)ny * w);
    s = spc_conv_spmv(a, transpose != 0, x, y, ko && ko->threads > 0 ? ko->threads : 1, sched,
                      ko ? ko->info : NULL, &o, e);
  }
  spc_tensor_free(&own);
  return s;
}

/* ---- SpGEMM ------------------------------------------------------------------- */

typedef struct csr {
  int64_t m, n;
  const spc_array *pos, *crd;
  const void *val;
  spc_vtype vt;
} csr;

static void csr_of(const spc_tensor *t, csr *c) {
  c->m = t->dims[0];
  c->n = t->dims[1];
  c->pos = spc_level_array_c(&t->lv[1], "pos");
  c->crd = spc_level_array_c(&t->lv[1], "crd");
  c->val = t->val;
  c->vt = t->vt;
}

/* value q of c as (re, im) */
static inline void get(const csr *c, int64_t q, double *re, double *im) {
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
static inline uint64_t geti(const csr *c, int64_t q) {
  switch (c->vt) {
  case SPC_I64: return (uint64_t)((const int64_t *)c->val)[q];
  case SPC_U64: return ((const uint64_t *)c->val)[q];
  default: return 1;
  }
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
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
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  if (ko) o.engine = ko->engine, o.no_jit = ko->no_jit;
  spc_tensor *oa = NULL, *ob = NULL, *coo = NULL;
  const spc_tensor *ta, *tb;
  spc_status s = as_format(A, "csr", &o, &oa, &ta, e);
  if (!s) s = as_format(B, "csr", &o, &ob, &tb, e);
  if (s) goto done;
  csr a, b;
  csr_of(ta, &a);
  csr_of(tb, &b);
  bool cplx = a.vt == SPC_C128 || b.vt == SPC_C128;
  /* integers (and patterns) multiply in wrapping int64, as SciPy and
   * GraphBLAS do; a float operand makes the product double */
  bool ints = (a.vt == SPC_I64 || a.vt == SPC_U64 || a.vt == SPC_PATTERN) &&
              (b.vt == SPC_I64 || b.vt == SPC_U64 || b.vt == SPC_PATTERN) &&
              !(a.vt == SPC_PATTERN && b.vt == SPC_PATTERN);
  int64_t m = a.m, n = b.n;
  int nt = ko && ko->threads > 0 ? ko->threads : 1;
  int64_t *rp = spc_calloc((size_t)m + 1, sizeof *rp);
  if (!rp) { s = SPC_NOMEM(e); goto done; }
  /* symbolic: distinct columns per row */
  int fail = 0;
#pragma omp parallel num_threads(nt)
  {
    int64_t *mark = malloc((size_t)(n ? n : 1) * sizeof *mark);
    if (!mark) {
#pragma omp atomic write
      fail = 1;
    } else {
      for (int64_t j = 0; j < n; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 256)
      for (int64_t i = 0; i < m; i++) {
        int64_t cnt = 0;
        for (int64_t p = spc_arr_get(a.pos, i); p < spc_arr_get(a.pos, i + 1); p++) {
          int64_t k = spc_arr_get(a.crd, p);
          for (int64_t q = spc_arr_get(b.pos, k); q < spc_arr_get(b.pos, k + 1); q++) {
            int64_t j = spc_arr_get(b.crd, q);
            if (mark[j] != i) mark[j] = i, cnt++;
          }
        }
        rp[i + 1] = cnt;
      }
      free(mark);
    }
  }
  if (fail) { spc_free(rp); s = SPC_NOMEM(e); goto done; }
  for (int64_t i = 0; i < m; i++) rp[i + 1] += rp[i];
  int64_t nnz = rp[m];
  { /* the product, its COO and the converted result must fit in memory */
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    double need = (double)nnz * (16.0 + (cplx ? 16 : 8)) * 2.0;
    double have = pages > 0 && psz > 0 ? (double)pages * (double)psz : 0;
    if (have > 0 && need > 0.8 * have) {
      spc_free(rp);
      s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                  "the product has %lld entries: too large for this machine's memory "
                  "(about %.1f GB needed, %.1f GB here)",
                  (long long)nnz, need / 1e9, have / 1e9);
      goto done;
    }
  }
  int64_t dims[2] = {m, n};
  if ((s = spc_coo_alloc(2, dims, nnz, cplx ? SPC_C128 : ints ? SPC_I64 : SPC_F64, &coo, e))) {
    spc_free(rp);
    goto done;
  }
  spc_array *ci = spc_level_array(&coo->lv[0], "crd"), *cj = spc_level_array(&coo->lv[1], "crd");
  double *cv = coo->val;
  uint64_t *iv = coo->val;
  /* numeric: dense accumulator per thread, columns sorted per row */
#pragma omp parallel num_threads(nt)
  {
    double *acc = malloc((size_t)(n ? n : 1) * (cplx ? 16 : 8));
    int64_t *mark = malloc((size_t)(n ? n : 1) * sizeof *mark);
    if (!acc || !mark) {
#pragma omp atomic write
      fail = 1;
    } else {
      for (int64_t j = 0; j < n; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 256)
      for (int64_t i = 0; i < m; i++) {
        int64_t *cols = NULL, k0 = rp[i], cnt = 0;
        for (int64_t p = spc_arr_get(a.pos, i); p < spc_arr_get(a.pos, i + 1); p++) {
          int64_t k = spc_arr_get(a.crd, p);
          double ar, ai;
          get(&a, p, &ar, &ai);
          for (int64_t q = spc_arr_get(b.pos, k); q < spc_arr_get(b.pos, k + 1); q++) {
            int64_t j = spc_arr_get(b.crd, q);
            double br, bi;
            get(&b, q, &br, &bi);
            if (mark[j] != i) {
              mark[j] = i;
              spc_arr_set(cj, k0 + cnt++, j);
              if (cplx) acc[2 * j] = 0, acc[2 * j + 1] = 0;
              else if (ints) ((uint64_t *)acc)[j] = 0;
              else acc[j] = 0;
            }
            if (ints) {
              ((uint64_t *)acc)[j] += geti(&a, p) * geti(&b, q);
            } else if (cplx) {
              acc[2 * j] += ar * br - ai * bi;
              acc[2 * j + 1] += ar * bi + ai * br;
            } else {
              acc[j] += ar * br;
            }
          }
        }
        (void)cols;
        /* ascending columns: sort the row's column list */
        if (cj->type == SPC_IDX64) {
          qsort((int64_t *)cj->data + k0, (size_t)cnt, sizeof(int64_t), cmp_i64);
        } else {
          int64_t tmp[64], *buf = cnt <= 64 ? tmp : malloc((size_t)cnt * sizeof *buf);
          if (!buf) {
#pragma omp atomic write
            fail = 1;
            continue;
          }
          for (int64_t t = 0; t < cnt; t++) buf[t] = spc_arr_get(cj, k0 + t);
          qsort(buf, (size_t)cnt, sizeof *buf, cmp_i64);
          for (int64_t t = 0; t < cnt; t++) spc_arr_set(cj, k0 + t, buf[t]);
          if (buf != tmp) free(buf);
        }
        for (int64_t t = 0; t < cnt; t++) {
          int64_t j = spc_arr_get(cj, k0 + t);
          spc_arr_set(ci, k0 + t, i);
          if (cplx) cv[2 * (k0 + t)] = acc[2 * j], cv[2 * (k0 + t) + 1] = acc[2 * j + 1];
          else if (ints) iv[k0 + t] = ((uint64_t *)acc)[j];
          else cv[k0 + t] = acc[j];
        }
      }
    }
    free(acc);
    free(mark);
  }
  spc_free(rp);
  if (fail) { s = SPC_NOMEM(e); goto done; }
  s = spc_convert_to(coo, out_format ? out_format : "csr", &o, C, e);
done:
  spc_tensor_free(&coo);
  spc_tensor_free(&oa);
  spc_tensor_free(&ob);
  return s;
}
