/* io_stream.c -- spc_convert_file: a Matrix Market coordinate or FROSTT
 * file (plain or gzip, through zlib's gzread) read in blocks of whole
 * lines, each block parsed by the ordinary text parser (in parallel) into
 * a small COO (symmetric storage expanded) and pushed into a builder, so
 * the file is never held whole: the working set is one block plus the
 * builder's workspace (opts->mem).  Line numbers in messages are those of
 * the file.  Files this does not handle (array Matrix Market, binary
 * containers, integer values past INT64_MAX) are read whole instead. */
#include "spc_io.h"
#include "spc_assemble.h"
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

typedef struct stream {
  const char *path;
  gzFile gz;
  char *buf;
  size_t cap, len; /* bytes held */
  bool eof;
} stream;

static spc_status fill(stream *st, spc_error *e) {
  while (!st->eof && st->len < st->cap) {
    int k = gzread(st->gz, st->buf + st->len, (unsigned)(st->cap - st->len > (1u << 30) ? (1u << 30) : st->cap - st->len));
    if (k < 0) {
      int zerr;
      const char *m = gzerror(st->gz, &zerr);
      return spc_err(e, zerr == Z_ERRNO ? SPC_ERR_IO : SPC_ERR_INPUT, st->path, 0, 0,
                     "cannot read: %s", m ? m : "error");
    }
    if (k == 0) {
      /* zlib ends a stream cut short as an end of file, its error
       * Z_BUF_ERROR ("unexpected end of file") */
      int zerr = Z_OK;
      gzerror(st->gz, &zerr);
      if (zerr == Z_BUF_ERROR)
        return spc_err(e, SPC_ERR_INPUT, st->path, 0, 0, "gzip data ends early (truncated file)");
      st->eof = true;
    }
    st->len += (size_t)k;
  }
  return SPC_OK;
}

static int64_t count_lines(const char *p, const char *end) {
  int64_t n = 0;
  while ((p = memchr(p, '\n', (size_t)(end - p)))) n++, p++;
  return n;
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

/* counts: a pattern's components pushed as int64 ones (its duplicates
 * summed are counts); else a pattern summed is built with duplicates
 * refused, so that the caller can tell it needs the counts. */
static spc_status push_block(spc_builder **b, const char *format,
                             const spc_convert_opts *o, const spc_tensor *t,
                             const int64_t *dims, bool dims_known, bool counts,
                             spc_error *e) {
  counts = counts && t->vt == SPC_PATTERN;
  if (!*b) {
    spc_convert_opts o1 = *o;
    if (t->vt == SPC_PATTERN && !counts && o->dup == SPC_DUP_SUM) o1.dup = SPC_DUP_ERROR;
    spc_status s = spc_builder_create(format, t->order, dims_known ? dims : NULL,
                                      counts ? SPC_I64 : t->vt, &o1, b, e);
    if (s) return s;
  }
  int64_t n = spc_tensor_nstored(t);
  int64_t *cols[SPC_MAX_ORDER] = {0}, *ones = NULL;
  spc_status s = SPC_OK;
  for (int d = 0; d < t->order && !s; d++) { /* widen to int64 */
    const spc_array *a = spc_level_array_c(&t->lv[d], "crd");
    if (!(cols[d] = spc_malloc_n(n ? n : 1, 8))) s = SPC_NOMEM(e);
    for (int64_t i = 0; i < n && !s; i++) cols[d][i] = spc_arr_get(a, i);
  }
  if (!s && counts && !(ones = spc_malloc_n(n ? n : 1, 8))) s = SPC_NOMEM(e);
  for (int64_t i = 0; ones && i < n; i++) ones[i] = 1;
  if (!s) s = spc_builder_push(*b, n, (const int64_t *const *)cols, counts ? ones : t->val, e);
  for (int d = 0; d < t->order; d++) spc_free(cols[d]);
  spc_free(ones);
  return s;
}

/* A file read block by block: MM coordinate or FROSTT, plain or gzip. */
typedef struct reader {
  stream st;
  bool mtx;
  spc_read_opts r;
  spc_mtx_info mi;
  spc_text_job job;
  int64_t line, announced, entries, dims[SPC_MAX_ORDER];
  bool dims_known;
  spc_vtype vt0;
  size_t at;
} reader;

static void reader_close(reader *R) {
  if (R->st.gz) gzclose(R->st.gz);
  spc_free(R->st.buf);
  memset(R, 0, sizeof *R);
}

/* SPC_NOT_HANDLED: not a file this path streams. */
static spc_status reader_open(reader *R, const char *path, const spc_read_opts *ro,
                              int64_t block, spc_error *e) {
  memset(R, 0, sizeof *R);
  unsigned char magic[16] = {0};
  size_t nm = spc_peek(path, magic, sizeof magic);
  bool gz = nm >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  bool mtx = nm >= 14 && !memcmp(magic, "%%MatrixMarket", 14);
  bool tns = !mtx && (ends_with(path, ".tns") || ends_with(path, ".tns.gz") ||
                      ends_with(path, ".TNS"));
  if (gz) mtx = ends_with(path, ".mtx.gz") || ends_with(path, ".MTX.GZ");
  if (gz && !mtx) tns = ends_with(path, ".tns.gz");
  if (!mtx && !tns) return SPC_NOT_HANDLED;
  R->mtx = mtx;
  R->st.path = path;
  if (block < (1 << 20)) block = 1 << 20;
  if (block > (64 << 20)) block = 64 << 20;
  R->st.cap = (size_t)block;
  if (!(R->st.buf = spc_malloc(R->st.cap))) return SPC_NOMEM(e);
  if (!(R->st.gz = gzopen(path, "rb"))) {
    reader_close(R);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot open");
  }
  gzbuffer(R->st.gz, 1 << 20);
  R->r = *ro;
  R->r.expand = 1;
  R->line = 1;
  R->announced = -1;
  R->vt0 = SPC_VTYPE_AUTO;
  spc_status s = fill(&R->st, e);
  if (!s && mtx) {
    s = spc_mtx_header(path, R->st.buf, R->st.len, &R->r, &R->mi, e);
    if (!s && R->mi.array) s = SPC_NOT_HANDLED;
    if (!s) {
      R->job = R->mi.job;
      R->announced = R->job.expect;
      R->at = R->mi.body;
      R->line = R->job.first_line;
      R->dims_known = true;
      for (int d = 0; d < R->job.order; d++) R->dims[d] = R->job.dims[d];
    }
  } else if (!s) {
    const char *le;
    int64_t fl;
    int nf = spc_tns_first_fields(R->st.buf, R->st.buf + R->st.len, &fl, &le);
    if (nf < 2) s = SPC_NOT_HANDLED; /* no entries or odd: the whole-file reader says why */
    int order = nf - 1;
    if (!s && (order > SPC_MAX_ORDER || (ro->ndims && ro->ndims != order))) s = SPC_NOT_HANDLED;
    spc_vtype vt = ro->vtype == SPC_VTYPE_AUTO ? SPC_F64 : ro->vtype;
    if (!s && vt == SPC_C128) s = SPC_NOT_HANDLED;
    if (!s) {
      R->job = (spc_text_job){.path = path, .first_line = 1, .comment = '#', .order = order,
                              .ntok = 1, .infer_dims = ro->ndims == 0, .vt = vt, .expect = -1,
                              .kind = "FROSTT", .threads = ro->threads};
      for (int d = 0; d < ro->ndims; d++) R->job.dims[d] = R->dims[d] = ro->dims[d];
      R->dims_known = ro->ndims > 0;
    }
  }
  R->job.expect = -1;
  R->job.progress = NULL;
  if (s) reader_close(R);
  return s;
}

/* The next block's components (symmetric storage expanded) into *t; NULL
 * at the end of the file (the announced count checked there). */
static spc_status reader_next(reader *R, spc_tensor **t, spc_error *e) {
  *t = NULL;
  stream *st = &R->st;
  spc_status s = SPC_OK;
  while (!s) {
    const char *p = st->buf + R->at, *end = st->buf + st->len;
    const char *cut = end;
    if (!st->eof) {
      const char *nl = NULL;
      for (const char *q = end; q > p; q--)
        if (q[-1] == '\n') {
          nl = q;
          break;
        }
      if (!nl) { /* one line longer than the block: grow */
        char *nb = st->cap < ((size_t)1 << 34) ? spc_realloc(st->buf, st->cap * 2) : NULL;
        if (!nb)
          return spc_err(e, SPC_ERR_INPUT, st->path, R->line, 0, "a line longer than %zu bytes",
                         st->cap);
        st->buf = nb;
        st->cap *= 2;
        s = fill(st, e);
        continue;
      }
      cut = nl;
    }
    if (cut > p) {
      R->job.body = p;
      R->job.end = cut;
      R->job.first_line = R->line;
      s = spc_text_parse(&R->job, t, e);
      int64_t k = s ? 0 : spc_tensor_nstored(*t);
      if (R->mtx) s = spc_mtx_finish(st->path, &R->mi, &R->r, t, s, e);
      if (!s && R->vt0 == SPC_VTYPE_AUTO) R->vt0 = (*t)->vt;
      if (!s && (*t)->vt != R->vt0)
        s = spc_err(e, SPC_ERR_UNSUPPORTED, st->path, R->line, 0,
                    "integer values above INT64_MAX past the first block: convert without --mem");
      if (!s) R->entries += k;
      R->line += count_lines(p, cut);
    }
    bool at_end = st->eof;
    if (!s && !at_end) {
      size_t keep = (size_t)(end - cut);
      memmove(st->buf, cut, keep);
      st->len = keep;
      R->at = 0;
      s = fill(st, e);
    } else {
      R->at = (size_t)(cut - st->buf);
      st->len = R->at; /* nothing left */
    }
    if (s) spc_tensor_free(t);
    if (s || *t) return s;
    if (at_end) break;
  }
  if (R->announced >= 0 && R->entries != R->announced)
    return spc_err(e, SPC_ERR_INPUT, st->path, R->line, 0,
                   "the header announces %lld entries but the file holds %lld",
                   (long long)R->announced, (long long)R->entries);
  return SPC_OK;
}

/* Into the sparse workspace: one pass, memory bounded by o->mem.  A
 * pattern summed whose coordinates repeat is read a second time as int64
 * counts (push_block). */
static spc_status stream_convert_1(const char *path, const char *format,
                                   const spc_read_opts *ro, const spc_convert_opts *o,
                                   bool counts, spc_tensor **out, spc_error *e) {
  reader R;
  /* blocks of a sixteenth of the budget: the text and the components
   * parsed from it beside the workspace's three quarters (the builder) */
  spc_status s = reader_open(&R, path, ro, o->mem / 16, e);
  if (s) return s;
  spc_builder *b = NULL;
  spc_tensor *t = NULL;
  while (!(s = reader_next(&R, &t, e)) && t) {
    s = push_block(&b, format, o, t, R.dims, R.dims_known, counts, e);
    spc_tensor_free(&t);
    if (s) break;
  }
  if (!s && !b) s = SPC_NOT_HANDLED; /* no entries: the whole-file reader */
  if (!s) s = spc_builder_finish(b, out, e);
  if (!s && o->info) {
    char p[sizeof o->info->plan];
    snprintf(p, sizeof p, "%s", o->info->plan);
    snprintf(o->info->plan, sizeof o->info->plan, "file in blocks -> %.140s",
             strncmp(p, "sparse", 6) ? "sparse workspace, packed, then sorted" : p);
  }
  spc_builder_free(&b);
  reader_close(&R);
  return s;
}

static spc_status stream_convert(const char *path, const char *format,
                                 const spc_read_opts *ro, const spc_convert_opts *o,
                                 spc_tensor **out, spc_error *e) {
  if (o->dup != SPC_DUP_SUM) return stream_convert_1(path, format, ro, o, false, out, e);
  spc_error le;
  spc_error_clear(&le);
  spc_status s = stream_convert_1(path, format, ro, o, false, out, &le);
  if (!spc_err_is_dup(s, &le)) {
    if (s && e) *e = le;
    return s;
  }
  return stream_convert_1(path, format, ro, o, true, out, e);
}

/* Straight into the target by counting: the file read twice (count, then
 * place), never held whole -- the output plus one block.  SPC_NOT_HANDLED
 * when the format's levels do not allow it, the dimensions are not known
 * before reading (FROSTT without --dims) or the file is not in an order
 * counting can place (the caller reads it another way; *why says). */
static spc_status stream_count(const char *path, const char *format, const spc_read_opts *ro,
                               const spc_convert_opts *o, spc_tensor **out, const char **why,
                               spc_error *e) {
  *why = "";
  reader R;
  int64_t block = o->mem > 0 ? o->mem / 8 : 64 << 20; /* beside the output's quarter */
  spc_status s = reader_open(&R, path, ro, block, e);
  if (s) return s;
  asm_counter *c = NULL;
  spc_tensor *t = NULL;
  if (!R.dims_known) {
    reader_close(&R);
    *why = "FROSTT dimensions unknown before reading (give --dims)";
    return SPC_NOT_HANDLED;
  }
  int64_t nmax = R.announced >= 0 ? R.announced * 2 : INT64_MAX / 4;
  int pass = 0;
  for (; pass < 2 && !s; pass++) {
    if (pass == 1) {
      reader_close(&R);
      if ((s = reader_open(&R, path, ro, block, e))) break;
      if ((s = asm_counter_begin_place(c, e))) break;
    }
    while (!(s = reader_next(&R, &t, e)) && t) {
      if (!c && pass == 0) {
        s = asm_counter_create(format, o, t, nmax, &c, e);
        if (!s && !c) {
          *why = "the format's levels are not placed by counting";
          s = SPC_NOT_HANDLED;
        }
      }
      if (!s) s = pass == 0 ? asm_counter_count(c, t, e) : asm_counter_place(c, t, e);
      spc_tensor_free(&t);
      if (s) break;
      if (pass == 0 && asm_counter_ok(c) != 1) {
        *why = asm_counter_ok(c) < 0 ? "a component repeats (duplicates to combine)"
                                     : "not in an order counting can place";
        s = SPC_NOT_HANDLED;
        break;
      }
    }
    if (!s && !c) s = SPC_NOT_HANDLED; /* no entries: the whole-file reader */
  }
  if (!s) s = asm_counter_finish(c, out, e);
  if (!s && o->info)
    snprintf(o->info->plan, sizeof o->info->plan,
             "counting, the file read twice in blocks (count, then place): never held whole");
  asm_counter_free(&c);
  reader_close(&R);
  return s;
}

/* Is the file worth streaming (not held whole) without --mem: its
 * components as a COO would take more than 1/8 of the memory. */
static bool big_file(const char *path) {
  struct stat sb;
  if (stat(path, &sb)) return false;
  int64_t phys = spc_phys_bytes();
  if (phys <= 0) return false;
  /* text: about 20 bytes a component; a COO of a matrix 24 (gzip: x3) */
  double coo = (double)sb.st_size * (ends_with(path, ".gz") ? 3.0 : 1.0) * 24.0 / 20.0;
  return coo > (double)phys / 8.0;
}

int spc_convert_file_streams(const char *in, const spc_convert_opts *o) {
  return in && ((o && o->mem > 0) || big_file(in));
}

spc_status spc_convert_file(const char *in, const char *format,
                            const spc_read_opts *ro, const spc_convert_opts *o,
                            spc_tensor **out, spc_error *e) {
  spc_read_opts dr;
  spc_convert_opts dc;
  if (!out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no output");
  *out = NULL;
  if (!ro) { spc_read_opts_init(&dr); ro = &dr; }
  if (!o) { spc_convert_opts_init(&dc); o = &dc; }
  if (ro->notice && ro->notice_len) ro->notice[0] = 0;
  const char *why = "";
  if (o->plan != SPC_PLAN_SORT && !o->spw && spc_convert_file_streams(in, o)) {
    spc_status s = stream_count(in, format, ro, o, out, &why, e);
    if (s != SPC_NOT_HANDLED) {
      if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", in);
      return s;
    }
    spc_error_clear(e);
  }
  if (o->mem > 0) {
    spc_status s = stream_convert(in, format, ro, o, out, e);
    if (s != SPC_NOT_HANDLED) {
      if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", in);
      if (!s && o->info && why[0]) {
        size_t k = strlen(o->info->plan);
        snprintf(o->info->plan + k, sizeof o->info->plan - k, "; not read twice: %s", why);
      }
      return s;
    }
    spc_error_clear(e);
  }
  spc_tensor *t = NULL;
  spc_status s = spc_read(in, ro, &t, e);
  if (!s) { /* handed over: its arrays freed as the conversion consumes them */
    s = asm_convert_to_eat(&t, format, o, out, e);
    if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", in);
  }
  spc_tensor_free(&t);
  return s;
}
