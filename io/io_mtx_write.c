/* io_mtx_write.c -- Matrix Market writer.  Dense tensors are written as
 * "array" (column-major; symmetric kinds store their lower triangle), all
 * others as "coordinate" listing their stored components, with the symmetry
 * kept as stored.  Values print shortest-round-trip, so reading the output
 * gives the same bits.  Lines are formatted in parallel blocks. */
#include "spc_io.h"
#include "spc_num.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 65536 /* entries formatted per task */

/* uint64 values above INT64_MAX are "unsigned-integer" (as SciPy names
 * them: an "integer" reader takes signed 64-bit values); the others are
 * "integer" with a GraphBLAS type comment, which any reader takes. */
static const char *field_of(const spc_tensor *t) {
  switch (t->vt) {
  case SPC_PATTERN: return "pattern";
  case SPC_U64:
    for (int64_t k = 0; k < t->nval; k++)
      if (((const uint64_t *)t->val)[k] > (uint64_t)INT64_MAX) return "unsigned-integer";
    return "integer";
  case SPC_I64: return "integer";
  case SPC_C128: return "complex";
  default: return "real";
  }
}

static spc_status header(const spc_tensor *t, spc_out *o, bool array,
                         spc_error *e) {
  char h[512];
  int n = snprintf(h, sizeof h, "%%%%MatrixMarket %s %s %s %s\n",
                   t->order == 1 ? "vector" : "matrix",
                   array ? "array" : "coordinate", field_of(t),
                   spc_symmetry_name(t->sym));
  /* value types Matrix Market cannot name, as GraphBLAS writes them */
  if (t->vt == SPC_U64) n += snprintf(h + n, sizeof h - (size_t)n, "%%%%GraphBLAS type uint64_t\n");
  if (t->vt == SPC_F32) n += snprintf(h + n, sizeof h - (size_t)n, "%%%%GraphBLAS type float\n");
  n += snprintf(h + n, sizeof h - (size_t)n, "%% written by spconv %s\n", SPCONV_VERSION);
  return spc_out_write(o, h, (size_t)n, e);
}

/* Format entries [b, e) of COO tensor c into buf (grown as needed). */
static char *format_block(const spc_tensor *c, int64_t b, int64_t e,
                          size_t *len) {
  size_t per = (size_t)c->order * 21 + 64;
  char *buf = spc_malloc((size_t)(e - b) * per + 1);
  if (!buf) return NULL;
  size_t n = 0;
  size_t w = spc_vtype_size(c->vt);
  /* each dimension's coordinates, wherever its level stands (a COO stored
   * column first, --modes=1,0, lists rows first all the same) */
  const spc_array *crd[SPC_MAX_ORDER] = {NULL};
  for (int l = 0; l < c->nlevels; l++) crd[c->lv[l].dim] = spc_level_array_c(&c->lv[l], "crd");
  for (int64_t k = b; k < e; k++) {
    for (int d = 0; d < c->order; d++) {
      if (d) buf[n++] = ' ';
      n += (size_t)spc_format_i64(spc_arr_get(crd[d], k) + 1, buf + n);
    }
    if (c->vt != SPC_PATTERN) {
      buf[n++] = ' ';
      n += (size_t)spc_format_value(c->vt, (const char *)c->val + k * (int64_t)w, buf + n);
    }
    buf[n++] = '\n';
  }
  *len = n;
  return buf;
}

static spc_status write_coo(const spc_tensor *c, spc_out *o,
                            const spc_write_opts *wo, spc_error *e) {
  int threads = wo->threads;
  int64_t nnz = c->nval ? c->nval : spc_tensor_nstored(c);
  char line[128];
  int n = 0;
  for (int d = 0; d < c->order; d++)
    n += snprintf(line + n, sizeof line - (size_t)n, "%lld ", (long long)c->dims[d]);
  n += snprintf(line + n, sizeof line - (size_t)n, "%lld\n", (long long)nnz);
  spc_status s = spc_out_write(o, line, (size_t)n, e);
  int nt = threads > 0 ? threads : omp_get_max_threads();
  int64_t nblk = (nnz + BLOCK - 1) / BLOCK;
  char **bufs = spc_calloc((size_t)nt, sizeof *bufs);
  size_t *lens = spc_calloc((size_t)nt, sizeof *lens);
  if (!bufs || !lens) s = SPC_NOMEM(e);
  for (int64_t g = 0; !s && g < nblk; g += nt) {
    int m = (int)(nblk - g < nt ? nblk - g : nt);
#pragma omp parallel for num_threads(nt) if (m > 1)
    for (int i = 0; i < m; i++) {
      int64_t b = (g + i) * BLOCK, en = b + BLOCK < nnz ? b + BLOCK : nnz;
      bufs[i] = format_block(c, b, en, &lens[i]);
    }
    for (int i = 0; i < m; i++) {
      if (!bufs[i] && !s) s = SPC_NOMEM(e);
      if (!s) s = spc_out_write(o, bufs[i], lens[i], e);
      spc_free(bufs[i]);
      bufs[i] = NULL;
    }
    spc_map_drop_all(); /* arrays in temporary files: their pages back */
    if (wo->progress)
      wo->progress(wo->progress_ctx, "write", (double)(g + m) / (double)nblk);
  }
  if (wo->progress) wo->progress(wo->progress_ctx, "write", 1.0);
  spc_free(bufs);
  spc_free(lens);
  return s;
}

/* Lines of n components: coordinates x (order a component) plus base[l],
 * values v,
 * into a new buffer of *len bytes; a pattern's lines end at the
 * coordinates (Matrix Market), or with "1" (one: FROSTT). */
static char *format_walked(int order, spc_vtype vt, bool one, const int64_t *base,
                           const int64_t *x, const void *const *v, int64_t n, size_t *len) {
  size_t per = (size_t)order * 21 + 64;
  char *buf = spc_malloc((size_t)n * per + 1);
  if (!buf) return NULL;
  size_t m = 0;
  for (int64_t k = 0; k < n; k++) {
    for (int l = 0; l < order; l++) {
      if (l) buf[m++] = ' ';
      m += (size_t)spc_format_i64(x[k * order + l] + base[l], buf + m);
    }
    if (vt != SPC_PATTERN || one) {
      buf[m++] = ' ';
      m += (size_t)spc_format_value(vt, v[k], buf + m);
    }
    buf[m++] = '\n';
  }
  *len = m;
  return buf;
}

/* The components a text writer lists, in storage order: spc_iter's (which
 * walks CSR, CSC, DCSR, CSF, ... in place), or, for a tensor that cannot
 * be walked (remapped or padded: DIA, ELL, BCSR, ...) and can be read out
 * by ranges of its top level (ext->read_part), those parts' COOs of about
 * PART components each, one held at a time. */
#define PART ((int64_t)1 << 20)
typedef struct tsrc {
  spc_iter *it;
  const spc_tensor *t;
  spc_tensor *c; /* the current part */
  int64_t k, n, q, en, step;
  size_t w;
} tsrc;

/* Whether t is walked in place (native levels) */
static bool walks(const spc_tensor *t) {
  return !t->ext || (t->ext->walk && t->ext->walk(t));
}
/* Whether t is read out in parts */
static bool in_parts(const spc_tensor *t) {
  return !walks(t) && t->ext->read_part && t->ext->top;
}

static spc_status tsrc_open(tsrc *S, const spc_tensor *t, int64_t *nnz, spc_error *e) {
  memset(S, 0, sizeof *S);
  S->t = t;
  if (!in_parts(t)) return spc_iter_create(t, &S->it, e);
  int64_t b;
  spc_status s = t->ext->top(t, &b, &S->en, e);
  if (!s) s = t->ext->read_part(t, b, S->en, nnz, NULL, e); /* count only */
  int64_t m = S->en - b, part = PART;
  const char *pe = getenv("SPC_TEXT_PART"); /* tests: many small parts */
  if (pe && atoll(pe) > 0) part = atoll(pe);
  S->q = b;
  S->step = m > 0 && *nnz > part ? (int64_t)((double)m * (double)part / (double)*nnz) : m;
  if (S->step < 1) S->step = 1;
  S->w = spc_vtype_size(t->vt);
  return s;
}

/* The next component: coordinates into x, *v its value (the iterator's
 * pointer, or a copy into vslot: a part's arrays go with the part) */
static spc_status tsrc_next(tsrc *S, int64_t *x, const void **v, char *vslot, bool *more,
                            spc_error *e) {
  if (S->it) {
    *more = spc_iter_next(S->it, x, v);
    return SPC_OK;
  }
  while (!S->c || S->k == S->n) {
    spc_tensor_free(&S->c);
    if (S->q >= S->en) {
      *more = false;
      return SPC_OK;
    }
    int64_t q1 = S->en - S->q > S->step ? S->q + S->step : S->en;
    spc_status s = S->t->ext->read_part(S->t, S->q, q1, &S->n, &S->c, e);
    if (s) return s;
    S->q = q1;
    S->k = 0;
  }
  const spc_tensor *c = S->c;
  for (int l = 0; l < c->order; l++) x[l] = spc_arr_get(&c->lv[l].arr[l == 0], S->k);
  *v = NULL;
  if (c->vt != SPC_PATTERN) {
    memcpy(vslot, (const char *)c->val + S->k * (int64_t)S->w, S->w);
    *v = vslot;
  }
  S->k++;
  *more = true;
  return SPC_OK;
}

static void tsrc_close(tsrc *S) {
  spc_iter_free(&S->it);
  spc_tensor_free(&S->c);
}

/* The components of any tensor in storage order (tsrc), gathered serially
 * BLOCK at a time into nt blocks of coordinates and value pointers, each
 * block's lines formatted on its own thread.  Without a COO copy the
 * memory beyond the tensor is the blocks (about 2 MB a thread) and, for a
 * tensor read out in parts, one part, so a tensor converted under --mem,
 * its arrays in temporary files, is written within the budget.
 *   mm: Matrix Market (the size line first: dims and nnz -- the count of
 *       the levels' positions, or the parts' count -- checked against the
 *       components listed);
 *   else FROSTT (no size line, a pattern's value 1, a native dense
 *       tensor's zeros left out: they are its padding). */
spc_status spc_text_write_walk(const spc_tensor *t, spc_out *o, const spc_write_opts *wo, bool mm,
                               spc_error *e) {
  int64_t nnz = -1;
  tsrc S;
  spc_status s = tsrc_open(&S, t, &nnz, e);
  if (!s && nnz < 0 && mm) {
    nnz = 1;
    for (int l = 0; l < t->nlevels; l++) nnz = t->lv[l].fmt->npos(&t->lv[l], nnz);
  } else if (!s && nnz < 0) {
    nnz = spc_tensor_nstored(t); /* for the progress only */
  }
  if (!s && mm) {
    char line[128];
    int n = 0;
    for (int d = 0; d < t->order; d++)
      n += snprintf(line + n, sizeof line - (size_t)n, "%lld ", (long long)t->dims[d]);
    n += snprintf(line + n, sizeof line - (size_t)n, "%lld\n", (long long)nnz);
    s = spc_out_write(o, line, (size_t)n, e);
  }
  bool dense = !mm && t->nlevels > 0 && !t->ext; /* native dense: zeros are padding */
  for (int l = 0; l < t->nlevels; l++) dense &= t->lv[l].fmt == &spc_level_dense;
  int nt = wo->threads > 0 ? wo->threads : omp_get_max_threads();
  if (nt > 64) nt = 64;
  int64_t nblk = (nnz + BLOCK - 1) / BLOCK, done = 0, g = 0;
  int order = t->order;
  size_t w = spc_vtype_size(t->vt);
  int64_t base[SPC_MAX_ORDER]; /* added to a coordinate: from 1, or from 0 where
                                  a FROSTT file gave the dimension so */
  for (int l = 0; l < order; l++) base[l] = !mm && (t->zero_based >> l & 1) ? 0 : 1;
  int64_t *x = spc_malloc_n((int64_t)nt * BLOCK * order, sizeof *x);
  const void **v = spc_malloc_n((int64_t)nt * BLOCK, sizeof *v);
  char *vcopy = S.it ? NULL : spc_malloc_n((int64_t)nt * BLOCK, w ? w : 1);
  char **bufs = spc_calloc((size_t)nt, sizeof *bufs);
  size_t *lens = spc_calloc((size_t)nt, sizeof *lens);
  int64_t cnt[64], extra[SPC_MAX_ORDER];
  char eslot[32];
  const void *ev;
  if (!s && (!x || !v || !bufs || !lens || (!S.it && !vcopy))) s = SPC_NOMEM(e);
  bool more = true;
  for (; !s && more; g += nt) {
    int m = 0;
    for (; m < nt && !s; m++) { /* up to nt blocks, the last one short */
      int64_t k = 0, *xb = x + (size_t)m * BLOCK * (size_t)order;
      const void **vb = v + (size_t)m * BLOCK;
      char *cb = vcopy ? vcopy + (size_t)m * BLOCK * w : NULL;
      while (k < BLOCK && !(s = tsrc_next(&S, xb + k * order, &vb[k], cb ? cb + k * w : NULL, &more, e)) &&
             more)
        k += !(dense && vb[k] && spc_val_is_zero(t->vt, vb[k]));
      cnt[m] = k;
      done += k;
      if (!more || s) {
        m += k > 0;
        break;
      }
    }
#pragma omp parallel for num_threads(nt) if (m > 1)
    for (int i = 0; i < m; i++)
      bufs[i] = format_walked(order, t->vt, !mm, base, x + (size_t)i * BLOCK * (size_t)order,
                              v + (size_t)i * BLOCK, cnt[i], &lens[i]);
    for (int i = 0; i < m; i++) {
      if (!bufs[i] && !s) s = SPC_NOMEM(e);
      if (!s) s = spc_out_write(o, bufs[i], lens[i], e);
      spc_free(bufs[i]);
      bufs[i] = NULL;
    }
    spc_map_drop_all(); /* arrays in temporary files: their pages back */
    if (wo->progress && nblk)
      wo->progress(wo->progress_ctx, "write", (double)(g + m < nblk ? g + m : nblk) / (double)nblk);
  }
  bool over = false;
  if (!s && mm && done == nnz && !(s = tsrc_next(&S, extra, &ev, eslot, &over, e)) && over)
    done++;
  if (!s && mm && done != nnz) /* the size line's count */
    s = spc_err(e, SPC_ERR_INTERNAL, o->final, 0, 0,
                "the %s tensor's levels hold %lld positions but walked %lld components",
                t->format, (long long)nnz, (long long)done);
  if (wo->progress) wo->progress(wo->progress_ctx, "write", 1.0);
  tsrc_close(&S);
  spc_free(x);
  spc_free(v);
  spc_free(vcopy);
  spc_free(bufs);
  spc_free(lens);
  return s;
}

/* Dense: values in column-major order; symmetric kinds write i >= j
 * (skew: i > j). */
static spc_status write_array(const spc_tensor *t, spc_out *o, spc_error *e) {
  int64_t m = t->dims[0], nc = t->order == 2 ? t->dims[1] : 1;
  char line[128];
  int n = t->order == 2 ? snprintf(line, sizeof line, "%lld %lld\n", (long long)m, (long long)nc)
                        : snprintf(line, sizeof line, "%lld\n", (long long)m);
  spc_status s = spc_out_write(o, line, (size_t)n, e);
  size_t w = spc_vtype_size(t->vt);
  /* stride of dimension 0 and 1 within the value array */
  int64_t st[2] = {1, 1};
  if (t->order == 2) {
    if (t->lv[0].dim == 0) st[1] = 1, st[0] = t->dims[1];
    else st[0] = 1, st[1] = t->dims[0];
  }
  if (m == 0) nc = 0; /* 0 x n: no values (and no walk over n empty columns) */
  for (int64_t j = 0; j < nc && !s; j++) {
    int64_t i0 = t->sym == SPC_GENERAL ? 0 : t->sym == SPC_SKEW ? j + 1 : j;
    for (int64_t i = i0; i < m && !s; i++) {
      n = spc_format_value(t->vt, (const char *)t->val + (i * st[0] + j * st[1]) * (int64_t)w, line);
      line[n++] = '\n';
      s = spc_out_write(o, line, (size_t)n, e);
    }
  }
  return s;
}

spc_status spc_mtx_write(const spc_tensor *t, spc_out *o,
                         const spc_write_opts *wo, spc_error *e) {
  if (t->order > 2)
    return spc_err(e, SPC_ERR_UNSUPPORTED, o->final, 0, 0,
                   "Matrix Market holds order 1 or 2; this tensor has order %d "
                   "(write .tns)", t->order);
  bool dense = t->nlevels > 0 && !t->ext; /* native dense: an array */
  for (int l = 0; l < t->nlevels; l++) dense &= t->lv[l].fmt == &spc_level_dense;
  if (dense && t->vt == SPC_PATTERN)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "dense pattern tensor");
  spc_status s = header(t, o, dense, e);
  if (s) return s;
  if (dense) return write_array(t, o, e);
  if (!strcmp(t->format, "coo")) return write_coo(t, o, wo, e);
  if (walks(t) || in_parts(t)) return spc_text_write_walk(t, o, wo, true, e);
  spc_tensor *c = NULL;
  if (!(s = spc_tensor_to_coo(t, 0, &c, e))) s = write_coo(c, o, wo, e);
  spc_tensor_free(&c);
  return s;
}
