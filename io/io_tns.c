/* io_tns.c -- FROSTT .tns reader and writer: one nonzero per line, 1-based
 * coordinates then the value; '#' comments.  The order comes from the first
 * entry and is checked on every line; dimensions are inferred (largest
 * coordinate) unless given. */
#include "spc_io.h"
#include "spc_num.h"
#include <string.h>

int spc_tns_first_fields(const char *p, const char *end, int64_t *line,
                         const char **line_end) {
  *line = 1;
  *line_end = end;
  while (p < end) {
    const char *le = memchr(p, '\n', (size_t)(end - p));
    if (!le) le = end;
    const char *q = p;
    while (q < le && spc_is_blank(*q)) q++;
    if (q < le && *q != '#') {
      int n = 0;
      *line_end = le;
      while (q < le) {
        while (q < le && spc_is_blank(*q)) q++;
        if (q >= le) break;
        n++;
        while (q < le && !spc_is_blank(*q)) q++;
      }
      return n;
    }
    p = le + 1;
    (*line)++;
  }
  return 0;
}

spc_status spc_tns_read(const char *path, const spc_buf *b,
                        const spc_read_opts *o, spc_tensor **out,
                        spc_error *e) {
  int64_t line;
  *out = NULL;
  const char *le;
  int nf = spc_tns_first_fields(b->data, b->data + b->len, &line, &le);
  if (nf == 0 && o->ndims == 0)
    return spc_err(e, SPC_ERR_INPUT, path, 0, 0,
                   "no entries, so the order is unknown (give the dimensions)");
  int order = nf ? nf - 1 : o->ndims;
  if (nf == 1)
    return spc_err(e, SPC_ERR_INPUT, path, line, 0,
                   "an entry needs coordinates and a value; found one field");
  if (order > SPC_MAX_ORDER)
    return spc_err(e, SPC_ERR_UNSUPPORTED, path, line, 0,
                   "order %d is above the supported %d", order, SPC_MAX_ORDER);
  if (o->ndims && o->ndims != order)
    return spc_err(e, SPC_ERR_INPUT, path, line, 0,
                   "the first entry has order %d but %d dimensions were given",
                   order, o->ndims);
  spc_vtype vt = o->vtype == SPC_VTYPE_AUTO ? SPC_F64 : o->vtype;
  if (vt == SPC_C128)
    return spc_err(e, SPC_ERR_UNSUPPORTED, path, 0, 0, "FROSTT values are real");
  spc_text_job j = {.path = path, .body = b->data, .end = b->data + b->len,
                    .first_line = 1, .comment = '#', .order = order, .ntok = 1,
                    .infer_dims = o->ndims == 0, .from0 = true, .vt = vt, .expect = -1,
                    .kind = "FROSTT", .threads = o->threads,
                    .progress = o->progress, .progress_ctx = o->progress_ctx};
  for (int d = 0; d < o->ndims; d++) j.dims[d] = o->dims[d];
  spc_status s = spc_text_parse(&j, out, e);
  if (!s) spc_tns_note(path, *out, o);
  return s;
}

void spc_tns_note(const char *path, const spc_tensor *t, const spc_read_opts *o) {
  if (!o->notice || !o->notice_len || !t->zero_based) return;
  char modes[64] = "";
  size_t n = 0;
  int k = 0;
  for (int d = 0; d < t->order && n + 8 < sizeof modes; d++)
    if (t->zero_based >> d & 1)
      n += (size_t)snprintf(modes + n, sizeof modes - n, "%s%d", k++ ? ", " : "", d + 1);
  snprintf(o->notice, o->notice_len,
           "%s: the indices of mode%s %s start at 0: read from 0, as SPLATT reads such a mode "
           "(a FROSTT file written from it counts so too)",
           path, k > 1 ? "s" : "", modes);
}

int spc_format_value(spc_vtype vt, const void *v, char *buf) {
  switch (vt) {
  case SPC_I64: return spc_format_i64(*(const int64_t *)v, buf);
  case SPC_U64: return spc_format_u64(*(const uint64_t *)v, buf);
  case SPC_F32: return spc_format_f32(*(const float *)v, buf);
  case SPC_F64: return spc_format_f64(*(const double *)v, buf);
  case SPC_C128: {
    int n = spc_format_f64(((const double *)v)[0], buf);
    buf[n++] = ' ';
    return n + spc_format_f64(((const double *)v)[1], buf + n);
  }
  default: buf[0] = '1'; buf[1] = 0; return 1;
  }
}

spc_status spc_tns_write(const spc_tensor *t, spc_out *o,
                         const spc_write_opts *wo, spc_error *e) {
  if (t->vt == SPC_C128)
    return spc_err(e, SPC_ERR_UNSUPPORTED, o->final, 0, 0,
                   "FROSTT holds real values; this tensor is complex");
  return spc_text_write_walk(t, o, wo, false, e);
}
