/* test_io_data.c -- suite_io on the shared data ($SPC_DATA): every file is
 * read and checked; the matrices against the reference table of the data's
 * README.md (parsed when the suite is built, so rows added later are
 * covered); every value token rounds exactly as strtod / strtof reads it;
 * every file survives a round trip through each container. */
#include "test_io.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- what the suite found (built in the parent, read by the tests) ------ */

typedef struct table_row {
  char file[256];
  char header[128]; /* "matrix coordinate real general" */
  int64_t rows, cols, entries, nnz;
  char sum[96];
} table_row;

static const char *g_data;
static char **g_mtx, **g_tns; /* file names */
static int g_nmtx, g_ntns;
static table_row *g_rows;
static int g_nrows;

static char *data_path(const char *sub, const char *name) {
  char *d = tu_path(g_data, sub), *p = tu_path(d, name);
  free(d);
  return p;
}

/* File i of the combined list: matrices first, then tensors. */
static char *file_path(int i) {
  return i < g_nmtx ? data_path("matrices", g_mtx[i])
                    : data_path("tensors", g_tns[i - g_nmtx]);
}
static const char *file_name(int i) {
  return i < g_nmtx ? g_mtx[i] : g_tns[i - g_nmtx];
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
    s[--n] = 0;
  return s;
}

/* Rows "| file.mtx | header | rows | cols | entries | nnz | sum |"; rows
 * whose header cell says SciPy could not read the file are left to the
 * dedicated tests. */
static void parse_table(void) {
  char *p = tu_path(g_data, "README.md");
  char *text = tu_read_file(p, NULL);
  if (!text) {
    free(p);
    p = data_path("data", "README.md");
    text = tu_read_file(p, NULL);
  }
  free(p);
  if (!text) return;
  int cap = 128;
  g_rows = calloc((size_t)cap, sizeof *g_rows);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] != '|') continue;
    char *cell[9];
    int nc = 0;
    for (char *q = line + 1; nc < 9;) {
      char *bar = strchr(q, '|');
      if (!bar) break;
      *bar = 0;
      cell[nc++] = trim(q);
      q = bar + 1;
    }
    if (nc < 7) continue;
    size_t fl = strlen(cell[0]);
    if (fl < 5 || strcmp(cell[0] + fl - 4, ".mtx")) continue;
    if (strncmp(cell[1], "matrix ", 7) && strncmp(cell[1], "vector ", 7)) continue;
    if (g_nrows == cap) g_rows = realloc(g_rows, (size_t)(cap *= 2) * sizeof *g_rows);
    table_row *r = &g_rows[g_nrows++];
    snprintf(r->file, sizeof r->file, "%s", cell[0]);
    snprintf(r->header, sizeof r->header, "%s", cell[1]);
    r->rows = atoll(cell[2]);
    r->cols = atoll(cell[3]);
    r->entries = atoll(cell[4]);
    r->nnz = atoll(cell[5]);
    snprintf(r->sum, sizeof r->sum, "%s", cell[6]);
  }
  free(text);
}

/* ---- the file text, read independently of the library -------------------- */

typedef struct ftext {
  char *buf;
  bool mtx, array;
  int field; /* 0 real, 1 integer, 2 complex, 3 pattern */
  spc_symmetry sym;
  spc_vtype hint; /* from "%%GraphBLAS type", or AUTO */
  int order;
  int64_t size[3];
  char **val;       /* value tokens in file order */
  int64_t nval, nent; /* tokens, entry lines */
  int64_t maxc[SPC_MAX_ORDER];
} ftext;

static int word_index(const char *w, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (!strcasecmp(w, names[i])) return i;
  return -1;
}

static void push_val(ftext *f, char *tok, int64_t *cap) {
  if (f->nval == *cap) f->val = realloc(f->val, (size_t)(*cap *= 2) * sizeof *f->val);
  f->val[f->nval++] = tok;
}

static void ftext_free(ftext *f) {
  free(f->buf);
  free(f->val);
}

/* Split a shared file into header facts and value tokens. */
static void ftext_load(const char *path, ftext *f) {
  static const char *const fields[] = {"real", "integer", "complex", "pattern", NULL};
  static const char *const syms[] = {"general", "symmetric", "skew-symmetric",
                                     "hermitian", NULL};
  memset(f, 0, sizeof *f);
  f->hint = SPC_VTYPE_AUTO;
  f->buf = tu_read_file(path, NULL);
  ck_assert_msg(f->buf, "cannot read %s", path);
  int64_t cap = 1024;
  f->val = malloc((size_t)cap * sizeof *f->val);
  f->mtx = !strncasecmp(f->buf, "%%MatrixMarket", 14);
  bool have_size = false;
  char *save = NULL;
  for (char *line = strtok_r(f->buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *tok[SPC_MAX_ORDER + 4], *s2 = NULL;
    int nt = 0;
    if (f->mtx && line == f->buf) { /* banner */
      strtok_r(line, " \t\r", &s2);
      char *w[4];
      for (int i = 0; i < 4; i++) w[i] = strtok_r(NULL, " \t\r", &s2);
      ck_assert_msg(w[3], "%s: short banner", path);
      f->order = !strcasecmp(w[0], "vector") ? 1 : 2;
      f->array = !strcasecmp(w[1], "array");
      f->field = word_index(w[2], fields);
      f->sym = (spc_symmetry)word_index(w[3], syms);
      continue;
    }
    const char *q = line;
    while (*q == ' ' || *q == '\t' || *q == '\r') q++;
    if (!*q) continue;
    if (*q == (f->mtx ? '%' : '#')) {
      char a[32], b[32], c[32];
      if (f->mtx && sscanf(q, "%31s %31s %31s", a, b, c) == 3 &&
          !strcasecmp(a, "%%GraphBLAS") && !strcasecmp(b, "type")) {
        if (!strcmp(c, "float")) f->hint = SPC_F32;
        else if (!strcmp(c, "double")) f->hint = SPC_F64;
        else if (!strcmp(c, "uint64_t")) f->hint = SPC_U64;
        else if (!strncmp(c, "int", 3) || !strncmp(c, "uint", 4) || !strcmp(c, "bool"))
          f->hint = SPC_I64;
      }
      continue;
    }
    for (char *t = strtok_r(line, " \t\r", &s2); t && nt < SPC_MAX_ORDER + 4;
         t = strtok_r(NULL, " \t\r", &s2))
      tok[nt++] = t;
    if (f->mtx && !have_size) {
      for (int i = 0; i < nt && i < 3; i++) f->size[i] = atoll(tok[i]);
      have_size = true;
      continue;
    }
    f->nent++;
    int nidx = f->mtx ? (f->array ? 0 : f->order) : nt - 1;
    if (!f->mtx) f->order = nidx;
    for (int i = 0; i < nidx; i++) {
      int64_t c = atoll(tok[i]) - 1;
      if (c > f->maxc[i]) f->maxc[i] = c;
    }
    for (int i = nidx; i < nt; i++) push_val(f, tok[i], &cap);
  }
}

static spc_vtype expected_vtype(const ftext *f) {
  if (!f->mtx) return SPC_F64;
  if (f->field == 3) return SPC_PATTERN;
  if (f->field == 2) return SPC_C128;
  /* a "%%GraphBLAS type" names floats: doubles; an integer type: the
   * field's (uint64 where a value passes INT64_MAX) */
  if (f->hint == SPC_F32 || f->hint == SPC_F64) return SPC_F64;
  if (f->field == 1)
    for (int64_t k = 0; k < f->nval; k++)
      if (f->val[k][0] != '-' && strtoull(f->val[k], NULL, 10) > (uint64_t)INT64_MAX)
        return SPC_U64;
  return f->field == 1 ? SPC_I64 : SPC_F64;
}

/* ---- every file read ----------------------------------------------------- */

START_TEST(test_read_every_file) {
  char *p = file_path(_i);
  ftext f;
  ftext_load(p, &f);
  spc_tensor *t = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
  spc_error e;
  tu_assert_ok(spc_tensor_check(t, &e), &e);
  ck_assert_int_eq(spc_tensor_order(t), f.order);
  ck_assert_int_eq(spc_tensor_vtype(t), expected_vtype(&f));
  if (f.mtx) {
    ck_assert_int_eq(spc_tensor_symmetry(t), f.sym);
    for (int d = 0; d < f.order; d++) ck_assert_int_eq(spc_tensor_dim(t, d), f.size[d]);
    ck_assert_str_eq(spc_tensor_format(t), f.array ? "dense" : "coo");
    if (!f.array) ck_assert_int_eq(spc_tensor_nstored(t), f.size[f.order]);
    else ck_assert_int_eq(spc_tensor_nstored(t), f.size[0] * (f.order > 1 ? f.size[1] : 1));
  } else {
    for (int d = 0; d < f.order; d++) ck_assert_int_eq(spc_tensor_dim(t, d), f.maxc[d] + 1);
    ck_assert_int_eq(spc_tensor_nstored(t), f.nent);
    /* the crd widths follow the inferred dimensions */
    for (int l = 0; l < f.order; l++) {
      spc_itype ty;
      ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), SPC_OK);
      ck_assert_int_eq(ty, f.maxc[spc_tensor_level_dim(t, l)] > INT32_MAX ? SPC_IDX64 : SPC_IDX32);
    }
  }
  spc_tensor *x = tu_read_ok(p, 1, SPC_VTYPE_AUTO);
  tu_assert_ok(spc_tensor_check(x, &e), &e);
  ck_assert_int_eq(spc_tensor_symmetry(x), SPC_GENERAL);
  spc_tensor_free(&x);
  spc_tensor_free(&t);
  ftext_free(&f);
  free(p);
}
END_TEST

/* ---- the reference table ------------------------------------------------- */

/* Compensated (Neumaier) sum. */
typedef struct ksum {
  double s, c, abs;
} ksum;
static void ksum_add(ksum *k, double v) {
  double t = k->s + v;
  if (isfinite(t))
    k->c += fabs(k->s) >= fabs(v) ? (k->s - t) + v : (v - t) + k->s;
  k->s = t;
  k->abs += fabs(v);
}
static double ksum_get(const ksum *k) { return k->s + k->c; }

/* got vs the table's printed value: NaN must match NaN; otherwise within
 * 1e-9 relative (the table prints 10 significant digits) plus rounding of
 * the summation order under cancellation. */
static void check_sum(const char *file, const char *part, double got,
                      double sumabs, double want) {
  if (isnan(want)) {
    ck_assert_msg(isnan(got), "%s: %s sum %.17g, table says nan", file, part, got);
    return;
  }
  double tol = 1e-9 * fabs(want) + 1e-12 * sumabs;
  ck_assert_msg(fabs(got - want) <= tol, "%s: %s sum %.17g, table says %.10g", file,
                part, got, want);
}

/* "a+bj", "0+149j", "24125684.42-951.9953017j" */
static void parse_complex(const char *s, double *re, double *im) {
  char *e;
  *re = strtod(s, &e);
  *im = strtod(e, &e);
  ck_assert_msg(*e == 'j', "bad complex sum '%s' in the table", s);
}

static int64_t count_nonzero(const spc_tensor *t) {
  spc_iter *it = NULL;
  spc_error e;
  tu_assert_ok(spc_iter_create(t, &it, &e), &e);
  int64_t x[SPC_MAX_ORDER], n = 0;
  const void *v;
  spc_vtype vt = spc_tensor_vtype(t);
  while (spc_iter_next(it, x, &v)) {
    if (vt == SPC_PATTERN) { n++; continue; }
    const double *d = v;
    switch (vt) {
    case SPC_F64: n += d[0] != 0; break;
    case SPC_C128: n += d[0] != 0 || d[1] != 0; break;
    case SPC_F32: n += *(const float *)v != 0; break;
    default: n += *(const int64_t *)v != 0; break;
    }
  }
  spc_iter_free(&it);
  return n;
}

START_TEST(test_table_row) {
  const table_row *r = &g_rows[_i];
  char *p = data_path("matrices", r->file);
  ck_assert_msg(tu_exists(p), "%s: in the table but not in matrices/", r->file);
  ftext f;
  ftext_load(p, &f);
  char banner[160];
  static const char *const fl[] = {"real", "integer", "complex", "pattern"};
  snprintf(banner, sizeof banner, "%s %s %s %s", f.order == 1 ? "vector" : "matrix",
           f.array ? "array" : "coordinate", f.field >= 0 ? fl[f.field] : "?",
           spc_symmetry_name(f.sym));
  ck_assert_msg(!strcasecmp(banner, r->header), "%s: banner '%s' vs table '%s'",
                r->file, banner, r->header);
  spc_tensor *t = tu_read_ok(p, 1, SPC_VTYPE_AUTO), *c = NULL;
  bool dense = f.array;
  ck_assert_int_eq(spc_tensor_dim(t, 0), r->rows);
  ck_assert_int_eq(spc_tensor_dim(t, 1), r->cols);
  /* SciPy reads an array file as a dense ndarray: zeros are not entries */
  int64_t entries = dense ? count_nonzero(t) : spc_tensor_nstored(t);
  ck_assert_msg(entries == r->entries, "%s: %lld entries after expansion, table %lld",
                r->file, (long long)entries, (long long)r->entries);
  spc_error e;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  int64_t nnz = dense ? count_nonzero(c) : spc_tensor_nstored(c);
  ck_assert_msg(nnz == r->nnz, "%s: %lld after summing duplicates, table %lld", r->file,
                (long long)nnz, (long long)r->nnz);
  /* sum of values */
  ksum re = {0}, im = {0};
  int64_t n;
  const void *val = spc_tensor_values(c, &n);
  spc_vtype vt = spc_tensor_vtype(c);
  if (vt == SPC_PATTERN) n = spc_tensor_nstored(c);
  for (int64_t k = 0; k < n; k++) {
    switch (vt) {
    case SPC_PATTERN: ksum_add(&re, 1); break;
    case SPC_I64: ksum_add(&re, (double)((const int64_t *)val)[k]); break;
    case SPC_U64: ksum_add(&re, (double)((const uint64_t *)val)[k]); break;
    case SPC_F32: ksum_add(&re, ((const float *)val)[k]); break;
    case SPC_F64: ksum_add(&re, ((const double *)val)[k]); break;
    case SPC_C128:
      ksum_add(&re, ((const double *)val)[2 * k]);
      ksum_add(&im, ((const double *)val)[2 * k + 1]);
      break;
    default: break;
    }
  }
  if (strchr(r->sum, 'j')) {
    double wr, wi;
    parse_complex(r->sum, &wr, &wi);
    ck_assert_int_eq(vt, SPC_C128);
    check_sum(r->file, "real", ksum_get(&re), re.abs, wr);
    check_sum(r->file, "imaginary", ksum_get(&im), im.abs, wi);
  } else {
    ck_assert_int_ne(vt, SPC_C128);
    check_sum(r->file, "value", ksum_get(&re), re.abs, strtod(r->sum, NULL));
  }
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  ftext_free(&f);
  free(p);
}
END_TEST

START_TEST(test_table_covers_data) {
  ck_assert_int_gt(g_nrows, 0);
  /* every matrix is either in the table or one of the files SciPy cannot
   * read (tested on their own below) */
  for (int i = 0; i < g_nmtx; i++) {
    bool found = !strcmp(g_mtx[i], "matrix_fp32.mtx") || !strcmp(g_mtx[i], "matrix_uint64.mtx");
    for (int r = 0; r < g_nrows && !found; r++) found = !strcmp(g_rows[r].file, g_mtx[i]);
    ck_assert_msg(found, "%s has no row in the reference table", g_mtx[i]);
  }
}
END_TEST

/* The two files SciPy cannot read, checked against their own text. */
START_TEST(test_graphblas_types) {
  static const struct {
    const char *file;
    spc_vtype vt;
  } cs[] = {{"matrix_fp32.mtx", SPC_F64}, {"matrix_uint64.mtx", SPC_U64}};
  char *p = data_path("matrices", cs[_i].file);
  if (!tu_exists(p)) { /* nothing to check where the file is gone */
    free(p);
    return;
  }
  ftext f;
  ftext_load(p, &f);
  spc_tensor *t = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
  ck_assert_int_eq(spc_tensor_vtype(t), cs[_i].vt);
  ck_assert_int_eq(spc_tensor_dim(t, 0), 7);
  ck_assert_int_eq(spc_tensor_dim(t, 1), 7);
  ck_assert_int_eq(spc_tensor_nstored(t), 12);
  ck_assert_int_eq(f.nval, 12);
  int64_t n;
  const void *v = spc_tensor_values(t, &n);
  int infs = 0, maxes = 0;
  for (int64_t k = 0; k < 12; k++) {
    if (cs[_i].vt == SPC_F64) {
      double want = strtod(f.val[k], NULL), got = ((const double *)v)[k];
      ck_assert_msg(got == want || (isnan(got) && isnan(want)), "value %lld: %a != %a",
                    (long long)k, got, want);
      infs += isinf(got) != 0;
    } else {
      uint64_t want = strtoull(f.val[k], NULL, 10), got = ((const uint64_t *)v)[k];
      ck_assert_msg(got == want, "value %lld: %llu != %llu", (long long)k,
                    (unsigned long long)got, (unsigned long long)want);
      maxes += got == UINT64_MAX;
    }
  }
  if (cs[_i].vt == SPC_F64) ck_assert_int_eq(infs, 2);
  else ck_assert_int_eq(maxes, 1);
  spc_tensor *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  ck_assert_int_eq(spc_tensor_nstored(c), 12);
  spc_tensor_free(&c);
  spc_tensor_free(&t);
  ftext_free(&f);
  free(p);
}
END_TEST

/* ---- exact rounding of every value token --------------------------------- */

/* Index into the stored values of the k-th value of the file (stored order
 * is file order, except dense symmetric kinds, whose file holds the lower
 * triangle column by column). */
static int64_t stored_index(const ftext *f, const spc_tensor *t, int64_t k) {
  if (!f->array || f->sym == SPC_GENERAL) return k;
  int64_t m = f->size[0], j = 0, i0 = f->sym == SPC_SKEW ? 1 : 0;
  for (;; j++) { /* column j holds m - j - i0 values */
    int64_t len = m - j - i0;
    if (k < len) break;
    k -= len;
  }
  int64_t i = j + i0 + k;
  /* column-major levels: (dim 1, dim 0) -> value j*m + i */
  tu_check(spc_tensor_level_dim(t, 0) == 1, "array levels not column-major");
  return j * m + i;
}

START_TEST(test_exact_rounding) {
  char *p = file_path(_i);
  ftext f;
  ftext_load(p, &f);
  spc_tensor *t = tu_read_ok(p, 0, SPC_VTYPE_AUTO);
  spc_vtype vt = spc_tensor_vtype(t);
  int per = vt == SPC_C128 ? 2 : vt == SPC_PATTERN ? 0 : 1;
  if (vt == SPC_PATTERN) {
    ck_assert_int_eq(f.nval, 0);
  } else {
    tu_check(f.nval % per == 0, "%s: odd number of complex parts", file_name(_i));
    int64_t n;
    const void *val = spc_tensor_values(t, &n);
    for (int64_t k = 0; k < f.nval / per; k++) {
      int64_t s = stored_index(&f, t, k);
      tu_check(s < n, "%s: value %lld past the values", file_name(_i), (long long)k);
      const char *tok = f.val[k * per];
      switch (vt) {
      case SPC_F32: {
        float want = strtof(tok, NULL), got = ((const float *)val)[s];
        tu_check(tu_same_f32(got, want), "%s: value %lld '%s': %a != strtof %a",
                      file_name(_i), (long long)k, tok, (double)got, (double)want);
        break;
      }
      case SPC_F64: {
        double want = strtod(tok, NULL), got = ((const double *)val)[s];
        tu_check(tu_same_f64(got, want), "%s: value %lld '%s': %a != strtod %a",
                      file_name(_i), (long long)k, tok, got, want);
        break;
      }
      case SPC_C128:
        for (int part = 0; part < 2; part++) {
          double want = strtod(f.val[k * 2 + part], NULL);
          double got = ((const double *)val)[2 * s + part];
          tu_check(tu_same_f64(got, want), "%s: value %lld part %d '%s': %a != %a",
                        file_name(_i), (long long)k, part, f.val[k * 2 + part], got, want);
        }
        break;
      case SPC_I64:
        tu_check(((const int64_t *)val)[s] == strtoll(tok, NULL, 10),
                      "%s: value %lld '%s'", file_name(_i), (long long)k, tok);
        break;
      case SPC_U64:
        tu_check(((const uint64_t *)val)[s] == strtoull(tok, NULL, 10),
                      "%s: value %lld '%s'", file_name(_i), (long long)k, tok);
        break;
      default: break;
      }
    }
  }
  spc_tensor_free(&t);
  ftext_free(&f);
  free(p);
}
END_TEST

/* ---- round trips --------------------------------------------------------- */

static const char *const containers[] = {"mtx", "mtx.gz", "tns", "tns.gz", "bsp.h5", "npz"};
#define NCONT ((int)(sizeof containers / sizeof containers[0]))

/* What a container must give back, in canonical form (sorted, duplicates
 * summed): the tensor with symmetric storage expanded; for a dense tensor
 * (drop_zeros), its nonzeros. */
static spc_tensor *canonical(const spc_tensor *t, int drop_zeros) {
  spc_tensor *x = NULL, *y = NULL, *c = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_expand(t, &x, &e), &e);
  if (drop_zeros) tu_assert_ok(spc_tensor_to_coo(x, 1, &y, &e), &e);
  tu_assert_ok(spc_tensor_combine(y ? y : x, SPC_DUP_SUM, &c, &e), &e);
  spc_tensor_free(&x);
  spc_tensor_free(&y);
  return c;
}

/* Write t (file fi) as .ext into dir, read it back, compare with want. */
static void round_trip(int fi, const spc_tensor *t, const spc_tensor *want,
                       const char *ext, const char *dir) {
  spc_vtype vt = spc_tensor_vtype(t);
  int order = spc_tensor_order(t);
  char name[64], eb[1200], what[512];
  snprintf(name, sizeof name, "rt.%s", ext);
  snprintf(what, sizeof what, "%s -> %s", file_name(fi), ext);
  char *out = tu_path(dir, name);
  bool tns = !strncmp(ext, "tns", 3), mtx = !strncmp(ext, "mtx", 3);
  bool refuse = (tns && vt == SPC_C128) || (mtx && order > 2) ||
                (!strcmp(ext, "npz") && order != 2);
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_write(t, out, NULL, &e);
  if (refuse) {
    ck_assert_msg(s == SPC_ERR_UNSUPPORTED, "%s: %s, expected unsupported", what,
                  spc_status_name(s));
    ck_assert_msg(tu_count_dir(dir) == 0, "%s: refused but wrote", what);
    free(out);
    return;
  }
  ck_assert_msg(s == SPC_OK, "%s: %s", what, spc_error_string(&e, eb, sizeof eb));
  ck_assert_msg(tu_count_dir(dir) == 1, "%s: temporary files left", what);
  unsigned char magic[2] = {0, 0};
  FILE *fp = fopen(out, "rb");
  ck_assert_ptr_nonnull(fp);
  size_t got = fread(magic, 1, 2, fp);
  fclose(fp);
  bool gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  ck_assert_msg(gz == (strstr(ext, ".gz") != NULL), "%s: gzip magic %d", what, gz);
  /* FROSTT has no type line and no size line: read back with the
   * original's type and dimensions */
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.expand = 1;
  if (tns) {
    o.vtype = vt != SPC_PATTERN ? vt : SPC_VTYPE_AUTO;
    o.ndims = order;
    for (int d = 0; d < order; d++) o.dims[d] = spc_tensor_dim(t, d);
  }
  spc_tensor *back = NULL;
  s = spc_read(out, &o, &back, &e);
  ck_assert_msg(s == SPC_OK, "%s, read back: %s", what, spc_error_string(&e, eb, sizeof eb));
  tu_assert_ok(spc_tensor_check(back, &e), &e);
  spc_tensor *b = canonical(back, !strcmp(spc_tensor_format(t), "dense"));
  char why[512];
  int d = tu_combined_diff(want, b, TU_PATTERN_AS_ONE, why, sizeof why);
  ck_assert_msg(d == 0, "%s: %s", what, why);
  spc_tensor_free(&b);
  spc_tensor_free(&back);
  unlink(out);
  free(out);
}

START_TEST(test_round_trip) {
  char *src = file_path(_i);
  spc_tensor *t = tu_read_ok(src, 0, SPC_VTYPE_AUTO);
  spc_tensor *want = canonical(t, !strcmp(spc_tensor_format(t), "dense"));
  char *dir = tu_mkdtemp();
  for (int c = 0; c < NCONT; c++) round_trip(_i, t, want, containers[c], dir);
  spc_tensor_free(&want);
  spc_tensor_free(&t);
  tu_rmtree(dir);
  free(dir);
  free(src);
}
END_TEST

void io_add_data_tcases(Suite *s) {
  g_data = tu_data_dir();
  if (!g_data) return; /* tu_data_dir printed the skip note */
  char *m = tu_path(g_data, "matrices"), *t = tu_path(g_data, "tensors");
  g_mtx = tu_list_files(m, ".mtx", &g_nmtx);
  g_tns = tu_list_files(t, ".tns", &g_ntns);
  free(m);
  free(t);
  parse_table();
  int nfiles = g_nmtx + g_ntns;
  TCase *tc = tcase_create("data_read");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_loop_test(tc, test_read_every_file, 0, nfiles);
  tcase_add_loop_test(tc, test_graphblas_types, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("data_table");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_table_covers_data);
  tcase_add_loop_test(tc, test_table_row, 0, g_nrows);
  suite_add_tcase(s, tc);
  tc = tcase_create("data_rounding");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_loop_test(tc, test_exact_rounding, 0, nfiles);
  suite_add_tcase(s, tc);
  tc = tcase_create("data_round_trip");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_loop_test(tc, test_round_trip, 0, nfiles);
  suite_add_tcase(s, tc);
}
