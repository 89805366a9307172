/* io_stream.c -- spc_convert_file: a Matrix Market coordinate or FROSTT
 * file (plain or gzip, through zlib's gzread) read in blocks of whole
 * lines, each block parsed by the ordinary text parser (in parallel) into
 * a small COO (symmetric storage expanded) and pushed into a builder, so
 * the file is never held whole: the working set is one block plus the
 * builder's workspace (opts->mem).  Line numbers in messages are those of
 * the file.  Files this does not handle (array Matrix Market, binary
 * containers, integer values past INT64_MAX) are read whole instead. */
#include "spc_io.h"
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
    if (k == 0) st->eof = true;
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

static spc_status push_block(spc_builder **b, const char *format,
                             const spc_convert_opts *o, const spc_tensor *t,
                             const int64_t *dims, bool dims_known, spc_error *e) {
  if (!*b) {
    spc_status s = spc_builder_create(format, t->order, dims_known ? dims : NULL, t->vt, o, b, e);
    if (s) return s;
  }
  int64_t n = spc_tensor_nstored(t);
  int64_t *cols[SPC_MAX_ORDER] = {0};
  spc_status s = SPC_OK;
  for (int d = 0; d < t->order && !s; d++) { /* widen to int64 */
    const spc_array *a = spc_level_array_c(&t->lv[d], "crd");
    if (!(cols[d] = spc_malloc_n(n ? n : 1, 8))) s = SPC_NOMEM(e);
    for (int64_t i = 0; i < n && !s; i++) cols[d][i] = spc_arr_get(a, i);
  }
  if (!s) s = spc_builder_push(*b, n, (const int64_t *const *)cols, t->val, e);
  for (int d = 0; d < t->order; d++) spc_free(cols[d]);
  return s;
}

/* SPC_NOT_HANDLED: not a file this path streams. */
static spc_status stream_convert(const char *path, const char *format,
                                 const spc_read_opts *ro, const spc_convert_opts *o,
                                 spc_tensor **out, spc_error *e) {
  unsigned char magic[16] = {0};
  size_t nm = spc_peek(path, magic, sizeof magic);
  bool gz = nm >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  bool mtx = nm >= 14 && !memcmp(magic, "%%MatrixMarket", 14);
  bool tns = !mtx && (ends_with(path, ".tns") || ends_with(path, ".tns.gz") ||
                      ends_with(path, ".TNS"));
  if (gz) mtx = ends_with(path, ".mtx.gz") || ends_with(path, ".MTX.GZ");
  if (gz && !mtx) tns = ends_with(path, ".tns.gz");
  if (!mtx && !tns) return SPC_NOT_HANDLED;
  stream st = {.path = path};
  int64_t block = o->mem / 4;
  if (block < (1 << 20)) block = 1 << 20;
  if (block > (64 << 20)) block = 64 << 20;
  st.cap = (size_t)block;
  if (!(st.buf = spc_malloc(st.cap))) return SPC_NOMEM(e);
  if (!(st.gz = gzopen(path, "rb"))) {
    spc_free(st.buf);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot open");
  }
  gzbuffer(st.gz, 1 << 20);
  spc_read_opts r = *ro;
  r.expand = 1;
  spc_builder *b = NULL;
  spc_mtx_info mi;
  spc_text_job job;
  int64_t line = 1, announced = -1, entries = 0, dims[SPC_MAX_ORDER] = {0};
  bool dims_known = false;
  spc_vtype vt0 = SPC_VTYPE_AUTO;
  size_t at = 0;
  spc_status s = fill(&st, e);
  if (!s && mtx) {
    s = spc_mtx_header(path, st.buf, st.len, &r, &mi, e);
    if (!s && mi.array) s = SPC_NOT_HANDLED;
    if (!s) {
      job = mi.job;
      announced = job.expect;
      at = mi.body;
      line = job.first_line;
      dims_known = true;
      for (int d = 0; d < job.order; d++) dims[d] = job.dims[d];
    }
  } else if (!s) {
    const char *le;
    int64_t fl;
    int nf = spc_tns_first_fields(st.buf, st.buf + st.len, &fl, &le);
    if (nf < 2) s = SPC_NOT_HANDLED; /* no entries or odd: the whole-file reader says why */
    int order = nf - 1;
    if (!s && (order > SPC_MAX_ORDER || (ro->ndims && ro->ndims != order))) s = SPC_NOT_HANDLED;
    spc_vtype vt = ro->vtype == SPC_VTYPE_AUTO ? SPC_F64 : ro->vtype;
    if (!s && vt == SPC_C128) s = SPC_NOT_HANDLED;
    if (!s) {
      job = (spc_text_job){.path = path, .first_line = 1, .comment = '#', .order = order,
                           .ntok = 1, .infer_dims = ro->ndims == 0, .vt = vt, .expect = -1,
                           .kind = "FROSTT", .threads = ro->threads};
      for (int d = 0; d < ro->ndims; d++) job.dims[d] = dims[d] = ro->dims[d];
      dims_known = ro->ndims > 0;
    }
  }
  job.expect = -1;
  job.progress = NULL;
  while (!s) {
    const char *p = st.buf + at, *end = st.buf + st.len;
    const char *cut = end;
    if (!st.eof) {
      const char *nl = NULL;
      for (const char *q = end; q > p; q--)
        if (q[-1] == '\n') {
          nl = q;
          break;
        }
      if (!nl) { /* one line longer than the block: grow */
        char *nb = st.cap < ((size_t)1 << 34) ? spc_realloc(st.buf, st.cap * 2) : NULL;
        if (!nb) {
          s = spc_err(e, SPC_ERR_INPUT, path, line, 0, "a line longer than %zu bytes", st.cap);
          break;
        }
        st.buf = nb;
        st.cap *= 2;
        if (!(s = fill(&st, e))) continue;
        break;
      }
      cut = nl;
    }
    if (cut > p) {
      spc_tensor *t = NULL;
      job.body = p;
      job.end = cut;
      job.first_line = line;
      s = spc_text_parse(&job, &t, e);
      int64_t k = s ? 0 : spc_tensor_nstored(t);
      if (mtx) s = spc_mtx_finish(path, &mi, &r, &t, s, e);
      if (!s && vt0 == SPC_VTYPE_AUTO) vt0 = t->vt;
      if (!s && t->vt != vt0)
        s = spc_err(e, SPC_ERR_UNSUPPORTED, path, line, 0,
                    "integer values above INT64_MAX past the first block: convert without --mem");
      if (!s) {
        entries += k;
        s = push_block(&b, format, o, t, dims, dims_known, e);
      }
      spc_tensor_free(&t);
      line += count_lines(p, cut);
    }
    if (s || st.eof) break;
    size_t keep = (size_t)(end - cut);
    memmove(st.buf, cut, keep);
    st.len = keep;
    at = 0;
    s = fill(&st, e);
  }
  if (!s && announced >= 0 && entries != announced)
    s = spc_err(e, SPC_ERR_INPUT, path, line, 0,
                "the header announces %lld entries but the file holds %lld",
                (long long)announced, (long long)entries);
  if (!s && !b) s = SPC_NOT_HANDLED; /* no entries: the whole-file reader */
  if (!s) s = spc_builder_finish(b, out, e);
  spc_builder_free(&b);
  gzclose(st.gz);
  spc_free(st.buf);
  return s;
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
  if (o->mem > 0) {
    spc_status s = stream_convert(in, format, ro, o, out, e);
    if (s != SPC_NOT_HANDLED) {
      if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", in);
      return s;
    }
    spc_error_clear(e);
  }
  spc_tensor *t = NULL;
  spc_status s = spc_read(in, ro, &t, e);
  if (!s) {
    s = spc_convert_to(t, format, o, out, e);
    if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", in);
  }
  spc_tensor_free(&t);
  return s;
}
