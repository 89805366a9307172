/* io_text.c -- parallel parsing of coordinate entry lines, shared by the
 * Matrix Market and FROSTT readers.
 *
 * The body is split into chunks at line boundaries.  Pass 1 counts lines
 * and entries per chunk (so nothing is sized by a header that may lie);
 * pass 2 parses every chunk straight into its slice of the output arrays.
 * Both passes run in parallel; the result does not depend on the number of
 * threads.  Errors name the file, line and column; the earliest wins. */
#include "spc_io.h"
#include "spc_num.h"
#include <omp.h>
#include <stdatomic.h>
#include <string.h>


static inline bool is_blank(char c) { return spc_is_blank(c); }
static inline bool is_digit(char c) { return (unsigned)(c - '0') <= 9; }
static inline bool tok_end(const char *p, const char *end) {
  return p >= end || is_blank(*p) || *p == '\n';
}

/* Is the line starting at p an entry (not blank, not a comment)? */
static inline bool is_entry(const char *p, const char *end, char comment) {
  if (p < end && is_digit(*p)) return true;
  while (p < end && is_blank(*p)) p++;
  return p < end && *p != '\n' && *p != comment;
}

void spc_text_count(spc_text_chunk *c, char comment) {
  const char *p = c->b;
  int64_t nl = 0, ne = 0;
  while (p < c->e) {
    ne += is_entry(p, c->e, comment);
    const char *nlp = memchr(p, '\n', (size_t)(c->e - p));
    nl++;
    if (!nlp) break;
    p = nlp + 1;
  }
  c->nlines = nl;
  c->nent = ne;
}

void spc_text_zero_based(spc_tensor *t, spc_text_chunk *const *cs, int nch) {
  unsigned mask = 0;
  for (int d = 0; d < t->order; d++) {
    bool z = false;
    for (int i = 0; i < nch; i++) z |= cs[i]->zero[d];
    if (!z) continue;
    mask |= 1u << d;
    for (int i = 0; i < nch; i++) cs[i]->maxc[d]++;
  }
  spc_text_shift_modes(t, mask);
}

void spc_text_shift_modes(spc_tensor *t, unsigned mask) {
  for (int d = 0; d < t->order; d++) {
    if (!(mask >> d & 1)) continue;
    t->zero_based |= 1u << d;
    spc_array *a = &t->lv[d].arr[d == 0 ? 1 : 0];
    int64_t n = a->len;
    if (a->type == SPC_IDX64) {
      int64_t *c = a->data;
#pragma omp parallel for schedule(static) if (n > (1 << 20))
      for (int64_t k = 0; k < n; k++) c[k]++;
    } else {
      for (int64_t k = 0; k < n; k++) spc_arr_set(a, k, spc_arr_get(a, k) + 1);
    }
  }
}

int64_t spc_text_entry_line(const char *body, const char *end, int64_t first_line,
                            char comment, int64_t k) {
  const char *p = body;
  for (int64_t line = first_line; p < end; line++) {
    if (is_entry(p, end, comment) && k-- == 0) return line;
    const char *nlp = memchr(p, '\n', (size_t)(end - p));
    if (!nlp) break;
    p = nlp + 1;
  }
  return 0;
}

/* Slow path of parse_index: more than 19 digits (leading zeros or a value
 * past 2^64, then *ovf is set). */
static __attribute__((noinline)) const char *
parse_long_index(const char *s, const char *p, uint64_t *v, int *ovf) {
  uint64_t x;
  while (s < p - 1 && *s == '0') s++;
  if (!spc_parse_u64(s, p, &x, ovf)) return NULL;
  *v = x;
  return p;
}

/* Unsigned decimal index; NULL when no digits, or (with *ovf set) a value
 * past 2^64. */
static inline const char *parse_index(const char *p, const char *end,
                                      uint64_t *v, int *ovf) {
  if (p < end && *p == '+') p++;
  const char *s = p;
  uint64_t x = 0;
  unsigned d;
  while (p < end && (d = (unsigned)(*p - '0')) <= 9) {
    x = x * 10 + d;
    p++;
  }
  if (SPC_NUM_US_PY(p, end) && p > s) /* "1_000", as Python's int() reads it */
    return spc_num_unscored(s, end, p, SPC_NUM_US_U64, v, ovf);
  if (p - s > 19) return parse_long_index(s, p, v, ovf);
  *v = x;
  return p > s ? p : NULL;
}

#define FAIL(code, ...)                                                   \
  do {                                                                    \
    c->st = (code);                                                       \
    c->eline = line;                                                      \
    c->ecol = (int64_t)(p - ls) + 1;                                      \
    snprintf(c->emsg, sizeof c->emsg, __VA_ARGS__);                       \
    return;                                                               \
  } while (0)

static const char *dim_name(const spc_text_job *j, int d, char *buf) {
  if (j->comment == '%' && j->order == 2) return d ? "column index" : "row index";
  if (j->comment == '%') return "index";
  snprintf(buf, 32, "mode %d index", d + 1);
  return buf;
}

static const char *vtype_word(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: case SPC_U64: return "an integer value";
  case SPC_C128: return "a complex value (real and imaginary parts)";
  default: return "a real value";
  }
}

/* Parse one value token of type vt at p into dst; NULL on failure. */
static inline const char *parse_value(spc_vtype vt, const char *p,
                                      const char *end, void *dst, bool *u64) {
  int ovf = 0;
  const char *q;
  switch (vt) {
  case SPC_F64: return spc_parse_f64_py(p, end, dst);
  case SPC_F32: return spc_parse_f32_py(p, end, dst);
  case SPC_I64:
    q = spc_parse_i64_py(p, end, dst, &ovf);
    if (!q && ovf && *p != '-') {
      uint64_t u;
      q = spc_parse_u64_py(p, end, &u, &ovf);
      if (q) { *u64 = true; memcpy(dst, &u, 8); }
    }
    return q;
  case SPC_U64: return spc_parse_u64_py(p, end, dst, &ovf);
  default: return NULL;
  }
}

void spc_text_parse_chunk(const spc_text_job *j, spc_text_chunk *c,
                          spc_tensor *t) {
  const char *p = c->b, *end = c->e, *ls = p;
  int64_t line = c->line0 - 1, k = c->k0;
  const int order = j->order;
  const size_t w = spc_vtype_size(t->vt);
  int32_t *c32[SPC_MAX_ORDER]; /* where coordinates go: one of the two */
  int64_t *c64[SPC_MAX_ORDER];
  char nb[32];
  for (int d = 0; d < order; d++) {
    spc_array *a = &t->lv[d].arr[d == 0 ? 1 : 0];
    c32[d] = a->type == SPC_IDX32 ? a->data : NULL;
    c64[d] = a->type == SPC_IDX64 ? a->data : NULL;
  }
  while (p < end) {
    ls = p;
    line++;
    if (!is_entry(p, end, j->comment)) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl + 1 : end;
      continue;
    }
    for (int d = 0; d < order; d++) {
      uint64_t x;
      int ovf = 0;
      while (p < end && is_blank(*p)) p++;
      const char *q = parse_index(p, end, &x, &ovf);
      if (ovf)
        FAIL(SPC_ERR_OVERFLOW, "%s does not fit 64 bits", dim_name(j, d, nb));
      if (!q || !tok_end(q, end)) {
        if (p >= end || *p == '\n')
          FAIL(SPC_ERR_INPUT, "line has too few fields: expected %d indices and %d value%s",
               order, j->ntok, j->ntok == 1 ? "" : "s");
        FAIL(SPC_ERR_INPUT, "expected a positive integer %s", dim_name(j, d, nb));
      }
      /* FROSTT: a mode with an index 0 counts from 0 (spc_text_zero_based) */
      if (x < 1 && j->infer_dims && j->from0) c->zero[d] = true;
      else if (x < 1 && j->infer_dims)
        FAIL(SPC_ERR_INPUT, "%s is 0: a mode counted from 0 is read from the whole file, "
             "not in blocks (without --mem)", dim_name(j, d, nb));
      else if (x < 1 || (!j->infer_dims && x > (uint64_t)j->dims[d]))
        FAIL(SPC_ERR_INPUT, "%s %llu is outside 1..%lld", dim_name(j, d, nb),
             (unsigned long long)x, (long long)j->dims[d]);
      if (x > (uint64_t)INT64_MAX)
        FAIL(SPC_ERR_OVERFLOW, "%s %llu is too large", dim_name(j, d, nb),
             (unsigned long long)x);
      int64_t xi = (int64_t)x - 1;
      if (xi > c->maxc[d]) c->maxc[d] = xi;
      if (c32[d]) c32[d][k] = (int32_t)xi;
      else c64[d][k] = xi;
      p = q;
    }
    if (j->ntok == 1 && (t->vt == SPC_F64 || t->vt == SPC_I64)) { /* common */
      while (p < end && is_blank(*p)) p++;
      int ovf = 0;
      const char *q = t->vt == SPC_F64
                          ? spc_parse_f64_py(p, end, (double *)t->val + k)
                          : spc_parse_i64_py(p, end, (int64_t *)t->val + k, &ovf);
      if (q && tok_end(q, end)) {
        p = q;
        goto line_end;
      }
    }
    unsigned char vbuf[16] = {0}; /* a real read as complex: imag 0 */
    for (int v = 0; v < j->ntok; v++) {
      while (p < end && is_blank(*p)) p++;
      const char *q;
      if (t->vt == SPC_PATTERN) { /* values present but not wanted */
        double skip;
        q = spc_parse_f64_py(p, end, &skip);
      } else if (t->vt == SPC_C128) {
        q = spc_parse_f64_py(p, end, (double *)vbuf + v);
      } else {
        q = parse_value(t->vt, p, end, vbuf, &c->need_u64);
      }
      if (!q && j->lax && j->ntok == 2 && (p >= end || *p == '\n' || *p == '\r'))
        break; /* "1 1 2.5" in a complex file: 2.5 + 0i ("1 1": 0), as SciPy reads it */
      if (!q || !tok_end(q, end)) {
        if (p >= end || *p == '\n')
          FAIL(SPC_ERR_INPUT, "line has too few fields: expected %d indices and %s",
               order, vtype_word(t->vt));
        if (t->vt == SPC_U64 && p < end && *p == '-' && j->vt == SPC_U64)
          FAIL(SPC_ERR_INPUT, "negative integer value: the values are read as uint64 "
               "(unsigned)");
        if (t->vt == SPC_U64 && p < end && *p == '-')
          FAIL(SPC_ERR_INPUT, "negative integer value, but other values of "
               "this file need uint64 (they exceed INT64_MAX)");
        int ovf = 0;
        int64_t dummy;
        if ((t->vt == SPC_I64 || t->vt == SPC_U64) &&
            !spc_parse_i64_py(p, end, &dummy, &ovf) && ovf)
          FAIL(SPC_ERR_OVERFLOW, "integer value does not fit %s",
               t->vt == SPC_U64 || *p != '-' ? "uint64" : "int64");
        FAIL(SPC_ERR_INPUT, "expected %s", vtype_word(t->vt));
      }
      p = q;
    }
    switch (w) { /* fixed-size copies: no call per entry */
    case 4: memcpy((char *)t->val + k * 4, vbuf, 4); break;
    case 8: memcpy((char *)t->val + k * 8, vbuf, 8); break;
    case 16: memcpy((char *)t->val + k * 16, vbuf, 16); break;
    default: break;
    }
  line_end:
    while (p < end && is_blank(*p)) p++;
    if (p < end && *p != '\n' && j->lax && j->ntok < 2) { /* ignored, as SciPy does */
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
    }
    if (p < end && *p != '\n')
      FAIL(SPC_ERR_INPUT, "unexpected text after the entry: expected %d indices and %d value%s",
           order, j->ntok, j->ntok == 1 ? "" : "s");
    p++;
    k++;
  }
}
#undef FAIL

/* Split [b, e) into about n pieces ending at newlines. */
static int split(const char *b, const char *e, int n, spc_text_chunk *cs) {
  int k = 0;
  size_t step = (size_t)(e - b) / (size_t)n + 1;
  const char *p = b;
  while (p < e && k < n) {
    const char *q = (size_t)(e - p) <= step ? e : p + step;
    if (q < e) {
      const char *nl = memchr(q, '\n', (size_t)(e - q));
      q = nl ? nl + 1 : e;
    }
    if (k == n - 1) q = e;
    memset(&cs[k], 0, sizeof cs[k]);
    for (int d = 0; d < SPC_MAX_ORDER; d++) cs[k].maxc[d] = -1;
    cs[k].b = p;
    cs[k].e = q;
    k++;
    p = q;
  }
  return k;
}

/* Line number of entry number k (0-based) in chunk c. */
static int64_t line_of_entry(const spc_text_chunk *c, int64_t k, char comment) {
  const char *p = c->b;
  int64_t line = c->line0, n = c->k0;
  while (p < c->e) {
    if (is_entry(p, c->e, comment) && n++ == k) return line;
    const char *nl = memchr(p, '\n', (size_t)(c->e - p));
    if (!nl) break;
    p = nl + 1;
    line++;
  }
  return line;
}

/* Narrow 64-bit coordinate arrays to 32 bits where the dimension allows. */
spc_status spc_text_narrow(spc_tensor *t, spc_error *e) {
  for (int l = 0; l < t->nlevels; l++) {
    spc_array *a = spc_level_array(&t->lv[l], "crd");
    if (!a || a->type != SPC_IDX64 || t->lv[l].size - 1 > INT32_MAX) continue;
    int32_t *n = spc_malloc_n(a->len, 4);
    if (!n) return SPC_NOMEM(e);
    const int64_t *o = a->data;
#pragma omp parallel for schedule(static) if (a->len > (1 << 20))
    for (int64_t i = 0; i < a->len; i++) n[i] = (int32_t)o[i];
    spc_free(a->data);
    a->data = n;
    a->type = SPC_IDX32;
  }
  return SPC_OK;
}

spc_status spc_text_parse(const spc_text_job *j, spc_tensor **out,
                          spc_error *e) {
  spc_tensor *t = NULL;
  spc_text_chunk *cs = NULL;
  spc_status s = SPC_OK;
  *out = NULL;
  int nt = j->threads > 0 ? j->threads : omp_get_max_threads();
  size_t len = (size_t)(j->end - j->body);
  int want = len < (4u << 20) ? 1 : nt * 16;
  if (want > 1 && len / (size_t)want < (1u << 20)) want = (int)(len >> 20) + 1;
  cs = spc_calloc((size_t)want, sizeof *cs);
  if (!cs) return SPC_NOMEM(e);
  int nch = split(j->body, j->end, want, cs);

#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nch > 1)
  for (int i = 0; i < nch; i++) spc_text_count(&cs[i], j->comment);

  int64_t n = 0, line = j->first_line;
  for (int i = 0; i < nch; i++) {
    cs[i].line0 = line;
    cs[i].k0 = n;
    line += cs[i].nlines;
    n += cs[i].nent;
  }
  if (j->expect >= 0 && n != j->expect) {
    int64_t at = line;
    if (n > j->expect)
      for (int i = 0; i < nch; i++)
        if (cs[i].k0 + cs[i].nent > j->expect) {
          at = line_of_entry(&cs[i], j->expect, j->comment);
          break;
        }
    s = spc_err(e, SPC_ERR_INPUT, j->path, at, 0,
                "the header announces %lld entries but the file has %s%lld",
                (long long)j->expect, n > j->expect ? "more: " : "",
                (long long)n);
    goto done;
  }
  int64_t dims[SPC_MAX_ORDER];
  for (int d = 0; d < j->order; d++)
    dims[d] = j->infer_dims ? INT64_MAX : j->dims[d];
  if ((s = spc_coo_alloc(j->order, dims, n, j->vt, &t, e))) goto done;

  for (int pass = 0; pass < 2; pass++) {
    _Atomic int64_t done_bytes = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nch > 1)
    for (int i = 0; i < nch; i++) {
      spc_text_parse_chunk(j, &cs[i], t);
      int64_t db = atomic_fetch_add(&done_bytes, (int64_t)(cs[i].e - cs[i].b));
      if (j->progress && omp_get_thread_num() == 0)
        j->progress(j->progress_ctx, "parse", (double)db / (double)(len + 1));
    }
    int bad = -1;
    bool u64 = false;
    for (int i = 0; i < nch; i++) {
      if (cs[i].st && bad < 0) bad = i;
      u64 |= cs[i].need_u64;
    }
    if (bad >= 0) {
      s = spc_err(e, cs[bad].st, j->path, cs[bad].eline, cs[bad].ecol, "%s",
                  cs[bad].emsg);
      goto done;
    }
    if (!(u64 && t->vt == SPC_I64)) break;
    t->vt = SPC_U64; /* same width: parse again as unsigned */
    for (int i = 0; i < nch; i++) cs[i].need_u64 = false;
  }
  if (j->infer_dims) {
    spc_text_chunk *cp[nch > 0 ? nch : 1];
    for (int i = 0; i < nch; i++) cp[i] = &cs[i];
    spc_text_zero_based(t, cp, nch);
  }
  for (int d = 0; d < j->order; d++) {
    int64_t mx = -1;
    for (int i = 0; i < nch; i++)
      if (cs[i].maxc[d] > mx) mx = cs[i].maxc[d];
    if (j->infer_dims && mx == INT64_MAX) { /* a mode counted from 0 */
      s = spc_err(e, SPC_ERR_OVERFLOW, j->path, 0, 0,
                  "mode %d counts from 0 and has index %lld: its dimension would pass 2^63 - 1",
                  d + 1, (long long)mx);
      goto done;
    }
    if (j->infer_dims) t->dims[d] = t->lv[d].size = mx + 1;
  }
  if (j->infer_dims && (s = spc_text_narrow(t, e))) goto done;
  if (j->progress) j->progress(j->progress_ctx, "parse", 1.0);
  *out = t;
  t = NULL;
done:
  spc_tensor_free(&t);
  spc_free(cs);
  return s;
}
