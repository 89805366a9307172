/* io_mtx_read.c -- Matrix Market reader: header and size line here, entry
 * lines through the shared parallel text parser (io_text.c), dense "array"
 * bodies here.  Coordinate files become COO tensors, array files dense
 * tensors in column-major level order. */
#include "spc_io.h"
#include "spc_num.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct mm_header {
  bool vector, array;
  int field; /* 0 real, 1 integer (or unsigned-integer), 2 complex, 3 pattern */
  spc_symmetry sym;
  bool floats;    /* a "%%GraphBLAS type float" or "double" comment */
  bool unsig;     /* field "unsigned-integer" */
} mm_header;

static const char *line_end(const char *p, const char *end) {
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  return nl ? nl : end;
}

/* Next blank-separated word of [*p, le) into w (lowercased); 0 when none. */
static size_t word(const char **p, const char *le, char *w, size_t n) {
  const char *q = *p;
  while (q < le && isspace((unsigned char)*q)) q++;
  size_t k = 0;
  while (q < le && !isspace((unsigned char)*q)) {
    if (k + 1 < n) w[k++] = (char)tolower((unsigned char)*q);
    q++;
  }
  w[k] = 0;
  *p = q;
  return k;
}

static int lookup(const char *w, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (!strcmp(w, names[i])) return i;
  return -1;
}

/* The note of a banner word read leniently (a second one appended). */
static void lenient(const spc_read_opts *o, const char *path, int64_t col, const char *w,
                    const char *what, const char *as) {
  if (!o || !o->notice || !o->notice_len) return;
  size_t n = strlen(o->notice);
  if (n + 1 >= o->notice_len) return;
  if (n) snprintf(o->notice + n, o->notice_len - n, "; '%s' (column %lld) is no %s: read as %s",
                  w, (long long)col, what, as);
  else snprintf(o->notice, o->notice_len,
                "%s:1:%lld: banner: '%s' is no Matrix Market %s: read as %s, as SciPy reads it",
                path, (long long)col, w, what, as);
}

/* The banner line [p, le).  Its object and format must be known; a field
 * or symmetry word the standard does not name is read as SciPy 1.x's
 * reader takes it (a field as real, a symmetry as general), noted in
 * o->notice: such files are in the collections (LAGraph's test data). */
static spc_status parse_banner(const char *path, const char *p, const char *le,
                               const spc_read_opts *o, mm_header *h, spc_error *e) {
  static const char *const objs[] = {"matrix", "vector", NULL};
  static const char *const fmts[] = {"coordinate", "array", NULL};
  /* "double" as some writers name real; "unsigned-integer" as SciPy writes
   * unsigned values (uint64 up to 2^64 - 1) */
  static const char *const fields[] = {"real", "integer", "complex", "pattern",
                                       "double", "unsigned-integer", NULL};
  static const char *const syms[] = {"general", "symmetric", "skew-symmetric",
                                     "hermitian", NULL};
  char w[64];
  const char *q = p;
  const char *nul = memchr(p, 0, (size_t)(le - p));
  if (nul) /* a word would end there, the rest of the line unread */
    return spc_err(e, SPC_ERR_INPUT, path, 1, (int64_t)(nul - p) + 1, "banner: a NUL byte");
  word(&q, le, w, sizeof w);
  if (strcmp(w, "%%matrixmarket"))
    return spc_err(e, SPC_ERR_INPUT, path, 1, 1,
                   "not a Matrix Market file: expected the banner "
                   "'%%%%MatrixMarket matrix coordinate real general'");
  int v[4];
  const char *const *tab[4] = {objs, fmts, fields, syms};
  const char *what[4] = {"object (matrix or vector)", "format (coordinate or array)",
                         "field (real, integer, unsigned-integer, complex or pattern)",
                         "symmetry (general, symmetric, skew-symmetric or hermitian)"};
  for (int i = 0; i < 4; i++) {
    const char *at = q;
    while (at < le && isspace((unsigned char)*at)) at++;
    word(&q, le, w, sizeof w);
    if ((v[i] = lookup(w, tab[i])) >= 0) continue;
    if (i >= 2 && w[0]) {
      lenient(o, path, (int64_t)(at - p) + 1, w, i == 2 ? "field" : "symmetry",
              i == 2 ? "real" : "general");
      v[i] = 0;
      continue;
    }
    return spc_err(e, SPC_ERR_INPUT, path, 1, (int64_t)(at - p) + 1,
                   "banner: expected %s, found '%s'", what[i], w);
  }
  if (word(&q, le, w, sizeof w))
    return spc_err(e, SPC_ERR_INPUT, path, 1, 0, "banner: unexpected '%s' after the symmetry", w);
  h->vector = v[0] == 1;
  h->array = v[1] == 1;
  h->field = v[2] == 4 ? 0 : v[2] == 5 ? 1 : v[2];
  h->unsig = v[2] == 5;
  h->sym = (spc_symmetry)v[3];
  if (h->array && h->field == 3)
    return spc_err(e, SPC_ERR_INPUT, path, 1, 0, "banner: an array file cannot be pattern");
  /* hermitian is defined for complex values; on real, integer or pattern
   * ones (conjugation changes nothing) it means symmetric, as SciPy reads it */
  if (h->sym == SPC_HERMITIAN && h->field != 2) h->sym = SPC_SYMMETRIC;
  if (h->vector && h->sym != SPC_GENERAL)
    return spc_err(e, SPC_ERR_INPUT, path, 1, 0, "banner: a vector must be general");
  return SPC_OK;
}

/* "%%GraphBLAS type T": whether the writer's type T is a floating one (an
 * integer type changes nothing: pick_vtype). */
static void type_comment(const char *p, const char *le, mm_header *h) {
  char w[64];
  word(&p, le, w, sizeof w);
  if (strcmp(w, "%%graphblas")) return;
  word(&p, le, w, sizeof w);
  if (strcmp(w, "type")) return;
  word(&p, le, w, sizeof w);
  h->floats = !strcmp(w, "float") || !strcmp(w, "double");
}

static spc_vtype pick_vtype(const mm_header *h, spc_vtype want) {
  if (want != SPC_VTYPE_AUTO) return want;
  /* a skew-symmetric pattern's mirrors are -1 (SciPy reads it so): the
   * ones need values */
  if (h->field == 3) return h->sym == SPC_SKEW ? SPC_I64 : SPC_PATTERN;
  if (h->field == 2) return SPC_C128;
  if (h->unsig) return SPC_U64; /* as SciPy reads "unsigned-integer" */
  /* "%%GraphBLAS type float" or "double": floating values even under an
   * integer field (inf: matrix_fp32.mtx), read as double -- the text
   * exactly, as SciPy reads a real file (float32 would round 0.1) */
  if (h->floats) return SPC_F64;
  /* an integer type named (int8_t .. uint64_t, bool) changes nothing: an
   * integer field is int64 -- uint64 only where a value passes INT64_MAX
   * (the parse widens) -- as SciPy's int64, whose sums and products wrap
   * to the same values (a uint64 read of LAGraph's
   * random_weighted_general2.mtx squared differs from SciPy's past 2^63);
   * a real field's values are doubles */
  return h->field == 1 ? SPC_I64 : SPC_F64;
}

static void fill_ones(spc_tensor *t) {
  for (int64_t k = 0; k < t->nval; k++) {
    switch (t->vt) {
    case SPC_I64: ((int64_t *)t->val)[k] = 1; break;
    case SPC_U64: ((uint64_t *)t->val)[k] = 1; break;
    case SPC_F32: ((float *)t->val)[k] = 1; break;
    case SPC_F64: ((double *)t->val)[k] = 1; break;
    case SPC_C128: ((double *)t->val)[2 * k] = 1; ((double *)t->val)[2 * k + 1] = 0; break;
    default: return;
    }
  }
}

/* Dense body: one value (two for complex) per line, column-major; the
 * symmetric kinds store the lower triangle (skew: strictly lower), which
 * is mirrored so the dense tensor holds every entry. */
static spc_status read_array(const char *path, const char *p, const char *end,
                             int64_t line, const mm_header *h,
                             const int64_t *dims, int order, spc_vtype vt,
                             spc_tensor **out, spc_error *e) {
  int mode[2] = {1, 0};
  spc_tensor *t = NULL;
  int64_t m = dims[0], n = order == 2 ? dims[1] : 1;
  /* as a skew-symmetric coordinate file's expansion: no uint64 holds -a */
  if (h->sym == SPC_SKEW && vt == SPC_U64)
    return spc_err(e, SPC_ERR_UNSUPPORTED, path, 1, 0,
                   "skew-symmetric uint64 values: their mirrors -a(i,j) are not uint64");
  if (n && m > INT64_MAX / n)
    return spc_err(e, SPC_ERR_OVERFLOW, path, line - 1, 0,
                   "a dense %lld x %lld matrix has more than 2^63 entries",
                   (long long)m, (long long)n);
  int64_t total = h->sym == SPC_GENERAL ? m * n
                  : h->sym == SPC_SKEW ? n / 2 * (n - 1) + (n % 2) * ((n - 1) / 2)
                                       : n / 2 * (n + 1) + (n % 2) * ((n + 1) / 2);
  /* count the value lines before allocating: the size line may lie */
  int64_t have = 0;
  for (const char *c = p; c < end;) {
    const char *le = line_end(c, end);
    while (c < le && spc_is_blank(*c)) c++;
    have += c < le && *c != '%';
    c = le + 1;
  }
  if (have != total)
    return spc_err(e, SPC_ERR_INPUT, path, line - 1, 0,
                   "the size line announces %lld values but the file has %lld",
                   (long long)total, (long long)have);
  spc_status s = spc_dense_alloc(order, dims, order == 2 ? mode : NULL, vt, &t, e);
  if (s) return s;
  t->sym = h->sym;
  memset(t->val, 0, (size_t)t->nval * spc_vtype_size(t->vt));
  int64_t i = h->sym == SPC_SKEW ? 1 : 0, j = 0, k = 0;
  size_t w = spc_vtype_size(t->vt);
  int ntok = h->field == 2 ? 2 : 1;
  while (p < end) {
    const char *le = line_end(p, end), *ls = p;
    while (p < le && spc_is_blank(*p)) p++;
    if (p == le || *p == '%') { p = le + 1; line++; continue; }
    if (k >= total) {
      s = spc_err(e, SPC_ERR_INPUT, path, line, 1,
                  "more values than the %lld the size line announces", (long long)total);
      goto fail;
    }
    unsigned char v[16] = {0};
    for (int tk = 0; tk < ntok; tk++) {
      while (p < le && spc_is_blank(*p)) p++;
      const char *q;
      int ovf = 0;
      if (t->vt == SPC_C128) q = spc_parse_f64_py(p, le, (double *)v + tk);
      else if (t->vt == SPC_F32) q = spc_parse_f32_py(p, le, (float *)v);
      else if (t->vt == SPC_I64) q = spc_parse_i64_py(p, le, (int64_t *)v, &ovf);
      else if (t->vt == SPC_U64) q = spc_parse_u64_py(p, le, (uint64_t *)v, &ovf);
      else q = spc_parse_f64_py(p, le, (double *)v);
      if (!q && tk == 1 && (p == le || *p == '\r'))
        break; /* one number in a complex file: imaginary part 0, as SciPy reads it */
      if (!q || (q < le && !spc_is_blank(*q))) {
        s = spc_err(e, SPC_ERR_INPUT, path, line, (int64_t)(p - ls) + 1,
                    "expected %s value", ntok == 2 ? "a complex (two numbers)"
                    : t->vt == SPC_I64 || t->vt == SPC_U64 ? "an integer" : "a real");
        goto fail;
      }
      p = q;
    }
    while (p < le && spc_is_blank(*p)) p++;
    if (p < le) {
      s = spc_err(e, SPC_ERR_INPUT, path, line, (int64_t)(p - ls) + 1,
                  "unexpected text after the value");
      goto fail;
    }
    memcpy((char *)t->val + (j * m + i) * (int64_t)w, v, w);
    if (h->sym != SPC_GENERAL && i != j) {
      if (h->sym == SPC_SKEW) {
        if (t->vt == SPC_F64) *(double *)v = -*(double *)v;
        else if (t->vt == SPC_F32) *(float *)v = -*(float *)v;
        else if (t->vt == SPC_I64) *(int64_t *)v = (int64_t)(0 - *(uint64_t *)v);
        else if (t->vt == SPC_C128) { ((double *)v)[0] = -((double *)v)[0]; ((double *)v)[1] = -((double *)v)[1]; }
      } else if (h->sym == SPC_HERMITIAN) {
        ((double *)v)[1] = -((double *)v)[1];
      }
      memcpy((char *)t->val + (i * m + j) * (int64_t)w, v, w);
    }
    k++;
    if (++i == m) { j++; i = h->sym == SPC_GENERAL ? 0 : h->sym == SPC_SKEW ? j + 1 : j; }
    p = le + 1;
    line++;
  }
  if (k != total) {
    s = spc_err(e, SPC_ERR_INPUT, path, line, 0,
                "the size line announces %lld values but the file has %lld",
                (long long)total, (long long)k);
    goto fail;
  }
  if (h->sym == SPC_SKEW) t->sym = SPC_SKEW;
  *out = t;
  return SPC_OK;
fail:
  spc_tensor_free(&t);
  return s;
}

spc_status spc_mtx_header(const char *path, const char *data, size_t len,
                          const spc_read_opts *o, spc_mtx_info *mi,
                          spc_error *e) {
  const char *p = data, *end = data + len;
  mm_header h = {0};
  if (o && o->notice && o->notice_len) o->notice[0] = 0; /* read twice by the gzip path */
  if (len == 0)
    return spc_err(e, SPC_ERR_INPUT, path, 0, 0,
                   "an empty file: expected the banner '%%%%MatrixMarket matrix coordinate real general'");
  const char *le = line_end(p, end);
  spc_status s = parse_banner(path, p, le, o, &h, e);
  if (s) return s;
  int64_t line = 1;
  /* comments and blank lines until the size line */
  for (;;) {
    p = le < end ? le + 1 : end;
    line++;
    if (p >= end)
      return spc_err(e, SPC_ERR_INPUT, path, line, 0, "missing the size line");
    le = line_end(p, end);
    const char *q = p;
    while (q < le && isspace((unsigned char)*q)) q++;
    if (q == le) continue;
    if (*q == '%') { type_comment(q, le, &h); continue; }
    break;
  }
  int order = h.vector ? 1 : 2;
  int nsize = order + !h.array;
  int64_t sz[3];
  const char *q = p;
  for (int i = 0; i < nsize; i++) {
    while (q < le && spc_is_blank(*q)) q++;
    int ovf = 0;
    const char *r = spc_parse_i64_py(q, le, &sz[i], &ovf);
    if (!r || sz[i] < 0 || (r < le && !isspace((unsigned char)*r)))
      return spc_err(e, ovf ? SPC_ERR_OVERFLOW : SPC_ERR_INPUT, path, line,
                     (int64_t)(q - p) + 1,
                     "size line: expected %d non-negative integers (%s)", nsize,
                     h.vector ? (h.array ? "length" : "length, entries")
                              : (h.array ? "rows, columns" : "rows, columns, entries"));
    q = r;
  }
  while (q < le && isspace((unsigned char)*q)) q++;
  if (q < le)
    return spc_err(e, SPC_ERR_INPUT, path, line, (int64_t)(q - p) + 1,
                   "size line: unexpected text after %d numbers", nsize);
  if (h.sym != SPC_GENERAL && sz[0] != sz[1] && h.array)
    return spc_err(e, SPC_ERR_INPUT, path, line, 0,
                   "a %s matrix must be square, not %lld x %lld",
                   spc_symmetry_name(h.sym), (long long)sz[0], (long long)sz[1]);
  if ((s = spc_dims_given(path, o, order, sz, e))) return s;
  spc_vtype vt = pick_vtype(&h, o->vtype);
  if (h.field == 2 && vt != SPC_C128 && vt != SPC_PATTERN)
    return spc_err(e, SPC_ERR_UNSUPPORTED, path, 0, 0,
                   "complex values cannot be read as %s", spc_vtype_name(vt));
  memset(mi, 0, sizeof *mi);
  mi->array = h.array;
  mi->rect_sym = h.sym != SPC_GENERAL && sz[0] != sz[1];
  mi->pattern = h.field == 3;
  /* read without values, a skew-symmetric pattern is its structure: symmetric */
  mi->sym = h.sym == SPC_SKEW && vt == SPC_PATTERN && !h.array ? SPC_SYMMETRIC : h.sym;
  mi->body = (size_t)((le < end ? le + 1 : end) - data);
  mi->job = (spc_text_job){.path = path, .first_line = line + 1, .comment = '%',
                           .order = order, .ntok = h.field == 3 ? 0 : h.field == 2 ? 2 : 1,
                           .lax = true,
                           .vt = vt, .expect = sz[order], .kind = "Matrix Market",
                           .threads = o->threads, .progress = o->progress,
                           .progress_ctx = o->progress_ctx};
  for (int d = 0; d < order; d++) mi->job.dims[d] = sz[d];
  mi->h_field = h.field;
  mi->h_vector = h.vector;
  mi->h_floats = h.floats;
  return SPC_OK;
}

/* A symmetric kind that is not square (SciPy reads it, mirroring each
 * entry): every off-diagonal entry's mirror must fall inside. */
/* Every entry of a symmetric kind of rectangular matrix has its mirror
 * inside.  The entries are in the file's order: the first one that fails
 * is named by its line where the text is at hand (mi->job.body: not after
 * a gzip stream), else by its number. */
static spc_status check_mirrors(const spc_mtx_info *mi, const spc_tensor *t, spc_error *e) {
  const spc_array *a = &t->lv[0].arr[1], *b = &t->lv[1].arr[0];
  int64_t n = spc_tensor_nstored(t);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = spc_arr_get(a, k), j = spc_arr_get(b, k);
    if (i == j || (j < t->dims[0] && i < t->dims[1])) continue;
    int64_t line = mi->job.body && mi->job.end
                       ? spc_text_entry_line(mi->job.body, mi->job.end, mi->job.first_line,
                                             '%', k)
                       : 0;
    return spc_err(e, SPC_ERR_INPUT, NULL, line, line ? 1 : 0,
                   "entry %lld of %lld, (%lld, %lld), of a %s %lld x %lld matrix: its mirror "
                   "(%lld, %lld) is outside the matrix",
                   (long long)k + 1, (long long)n, (long long)i + 1, (long long)j + 1,
                   spc_symmetry_name(t->sym), (long long)t->dims[0], (long long)t->dims[1],
                   (long long)j + 1, (long long)i + 1);
  }
  return SPC_OK;
}

spc_status spc_mtx_finish(const char *path, const spc_mtx_info *mi,
                          const spc_read_opts *o, spc_tensor **tp,
                          spc_status s, spc_error *e) {
  spc_tensor *t = *tp;
  if (!s && !mi->array) {
    t->sym = mi->sym;
    if (mi->pattern) fill_ones(t);
  }
  if (!s && mi->rect_sym) s = check_mirrors(mi, t, e);
  if (!s && (o->expand || mi->rect_sym) && t->sym != SPC_GENERAL) {
    spc_tensor *x = NULL;
    s = spc_tensor_expand(t, &x, e);
    spc_tensor_free(&t);
    t = x;
  }
  *tp = t;
  if (s) {
    spc_tensor_free(tp);
    if (!e || e->file[0]) return s;
    char m[sizeof e->msg];
    memcpy(m, e->msg, sizeof m);
    return spc_err(e, s, path, e->line, e->col, "%s", m);
  }
  return SPC_OK;
}

spc_status spc_mtx_read(const char *path, const spc_buf *b,
                        const spc_read_opts *o, spc_tensor **out,
                        spc_error *e) {
  spc_mtx_info mi;
  spc_tensor *t = NULL;
  *out = NULL;
  spc_status s = spc_mtx_header(path, b->data, b->len, o, &mi, e);
  if (s) return s;
  const char *body = b->data + mi.body, *end = b->data + b->len;
  if (mi.array) {
    mm_header h = {.vector = mi.h_vector, .array = true, .field = mi.h_field,
                   .sym = mi.sym, .floats = mi.h_floats};
    /* asked as a pattern: the structure of the nonzeros, from the values
     * read as the file gives them (an array stores every entry) */
    bool pat = mi.job.vt == SPC_PATTERN;
    s = read_array(path, body, end, mi.job.first_line, &h, mi.job.dims, mi.job.order,
                   pat ? pick_vtype(&h, SPC_VTYPE_AUTO) : mi.job.vt, &t, e);
    spc_tensor *c = NULL;
    if (!s && pat && !(s = spc_tensor_to_coo(t, 1, &c, e))) {
      spc_tensor_free(&t);
      t = c;
      if (t->val_owned) spc_free(t->val);
      t->val = NULL;
      t->val_owned = false;
      t->vt = SPC_PATTERN;
    }
  } else {
    mi.job.body = body;
    mi.job.end = end;
    s = spc_text_parse(&mi.job, &t, e);
  }
  s = spc_mtx_finish(path, &mi, o, &t, s, e);
  *out = t;
  return s;
}
