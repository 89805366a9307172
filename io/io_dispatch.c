/* io_dispatch.c -- spc_read / spc_write: pick the container from the
 * content (magic bytes) or the name, prepare the tensor for what the
 * container can hold, and write atomically. */
#include "spc_containers.h"
#include "spc_io.h"
#include <string.h>
#include <sys/stat.h>

void spc_read_opts_init(spc_read_opts *o) {
  memset(o, 0, sizeof *o);
  o->vtype = SPC_VTYPE_AUTO;
}

void spc_write_opts_init(spc_write_opts *o) {
  memset(o, 0, sizeof *o);
  o->gzip = -1;
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  if (m > n) return false;
  for (size_t i = 0; i < m; i++) {
    char a = s[n - m + i], b = suf[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

spc_file_kind spc_file_kind_from_name(const char *path) {
  char base[4096];
  snprintf(base, sizeof base, "%s", path);
  if (ends_with(base, ".gz")) base[strlen(base) - 3] = 0;
  if (ends_with(base, ".mtx") || ends_with(base, ".mm")) return SPC_FILE_MTX;
  if (ends_with(base, ".tns")) return SPC_FILE_TNS;
  if (ends_with(base, ".h5") || ends_with(base, ".hdf5") || ends_with(base, ".bsp"))
    return SPC_FILE_BSP;
  if (ends_with(base, ".npz")) return SPC_FILE_NPZ;
  return SPC_FILE_UNKNOWN;
}

static spc_file_kind kind_from_content(const unsigned char *h, size_t n) {
  static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && !memcmp(h, hdf5, 8)) return SPC_FILE_BSP;
  if (n >= 4 && !memcmp(h, "PK\003\004", 4)) return SPC_FILE_NPZ;
  if (n >= 14 && !memcmp(h, "%%MatrixMarket", 14)) return SPC_FILE_MTX;
  if (n >= 14 && !strncasecmp((const char *)h, "%%matrixmarket", 14)) return SPC_FILE_MTX;
  return SPC_FILE_UNKNOWN;
}

spc_status spc_read_text(const char *name, const char *data, size_t len,
                        const spc_read_opts *o, spc_tensor **out,
                        spc_error *e) {
  spc_read_opts def;
  if (!o) { spc_read_opts_init(&def); o = &def; }
  if (o->notice && o->notice_len) o->notice[0] = 0;
  spc_buf b = {.data = data, .len = len};
  spc_file_kind k = kind_from_content((const unsigned char *)data, len);
  if (k == SPC_FILE_UNKNOWN) k = spc_file_kind_from_name(name);
  *out = NULL;
  if (k == SPC_FILE_MTX) return spc_mtx_read(name, &b, o, out, e);
  if (k == SPC_FILE_TNS || k == SPC_FILE_UNKNOWN) return spc_tns_read(name, &b, o, out, e);
  return spc_err(e, SPC_ERR_ARG, name, 0, 0, "only text formats are read from memory");
}

static void dims_text(char *b, size_t n, int order, const int64_t *d) {
  int k = snprintf(b, n, "%s", order ? "" : "none");
  for (int i = 0; i < order && k < (int)n - 24; i++)
    k += snprintf(b + k, n - (size_t)k, "%s%lld", i ? " x " : "", (long long)d[i]);
}

spc_status spc_dims_given(const char *path, const spc_read_opts *o, int order, const int64_t *dims,
                          spc_error *e) {
  if (!o || o->ndims <= 0) return SPC_OK;
  bool same = o->ndims == order;
  for (int d = 0; d < order && same; d++) same = o->dims[d] == dims[d];
  if (same) return SPC_OK;
  char g[200], f[200];
  dims_text(g, sizeof g, o->ndims, o->dims);
  dims_text(f, sizeof f, order, dims);
  return spc_err(e, SPC_ERR_ARG, path, 0, 0,
                 "dimensions given (%s) differ from the file's own (%s): only a FROSTT file takes "
                 "its dimensions from the caller", g, f);
}

/* The reader for the file's kind; dimensions given checked against those
 * a Matrix Market, binsparse or npz file states. */
static spc_status read_kind(const char *path, const spc_read_opts *o, spc_tensor **out, spc_error *e);

spc_status spc_read(const char *path, const spc_read_opts *o,
                    spc_tensor **out, spc_error *e) {
  spc_status s = read_kind(path, o, out, e);
  if (!s && o && o->ndims > 0 && (s = spc_dims_given(path, o, (*out)->order, (*out)->dims, e)))
    spc_tensor_free(out);
  return s;
}

static spc_status read_kind(const char *path, const spc_read_opts *o,
                            spc_tensor **out, spc_error *e) {
  spc_read_opts def;
  if (!o) { spc_read_opts_init(&def); o = &def; }
  if (!path || !out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no path");
  if (o->notice && o->notice_len) o->notice[0] = 0; /* "" unless the reader notes */
  *out = NULL;
  /* a FIFO, a device, a directory: refused before anything opens it (an
   * open would wait for a FIFO's writer; what it sent is read once) */
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "not a regular file%s",
                   S_ISFIFO(st.st_mode) ? " (a FIFO: give it as standard input, '-')" : "");
  unsigned char h[16];
  size_t n = spc_peek(path, h, sizeof h);
  spc_file_kind k = kind_from_content(h, n);
  if (k == SPC_FILE_BSP) return spc_bsp_read(path, o, out, e);
  if (k == SPC_FILE_NPZ) return spc_npz_read(path, o, out, e);
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) { /* parse while inflating */
    spc_status s = spc_gz_text_read(path, o, out, e);
    if (s != SPC_NOT_HANDLED) return s;
  }
  spc_buf b;
  spc_status s = spc_buf_open(path, &b, e);
  if (s) return s;
  k = kind_from_content((const unsigned char *)b.data, b.len);
  if (k == SPC_FILE_UNKNOWN) k = spc_file_kind_from_name(path);
  if (k == SPC_FILE_UNKNOWN && b.len && b.data[0] != '%') k = SPC_FILE_TNS;
  if (k == SPC_FILE_MTX) s = spc_mtx_read(path, &b, o, out, e);
  else if (k == SPC_FILE_TNS) s = spc_tns_read(path, &b, o, out, e);
  else s = spc_err(e, SPC_ERR_INPUT, path, b.len ? 1 : 0, b.len ? 1 : 0,
                   "%s: expected Matrix Market, FROSTT, binsparse HDF5 or npz",
                   b.len ? "unrecognised content" : "an empty file");
  spc_buf_close(&b);
  return s;
}

spc_status spc_write(const spc_tensor *t, const char *path,
                     const spc_write_opts *o, spc_error *e) {
  spc_write_opts def;
  if (!o) { spc_write_opts_init(&def); o = &def; }
  if (!t || !path) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no tensor or path");
  spc_file_kind k = spc_file_kind_from_name(path);
  if (k == SPC_FILE_UNKNOWN)
    return spc_err(e, SPC_ERR_ARG, path, 0, 0,
                   "unknown output extension: use .mtx, .tns (either with .gz), "
                   ".bsp.h5 or .npz");
  size_t pn = strlen(path);
  if ((k == SPC_FILE_BSP || k == SPC_FILE_NPZ) && pn >= 3 && !strcasecmp(path + pn - 3, ".gz"))
    return spc_err(e, SPC_ERR_ARG, path, 0, 0,
                   ".bsp.h5 and .npz files are not gzip-compressed (.mtx.gz and .tns.gz are)");
  /* expand symmetric storage where the container cannot record it */
  spc_tensor *x = NULL;
  const spc_tensor *w = t;
  spc_status s = SPC_OK;
  /* (a dense layout holds both triangles already; its writers drop the
   * zeros, which are padding) */
  bool expand = t->sym != SPC_GENERAL && !spc_native_dense(t) &&
                (k == SPC_FILE_TNS || k == SPC_FILE_NPZ ||
                 (k == SPC_FILE_BSP && !o->keep_symmetry));
  if (expand) {
    if ((s = spc_tensor_expand(t, &x, e))) return s;
    w = x;
  }
  if (k == SPC_FILE_MTX || k == SPC_FILE_TNS) {
    spc_out out;
    int gz = o->gzip >= 0 ? o->gzip : ends_with(path, ".gz");
    if (!(s = spc_out_open(&out, path, gz, e))) {
      out.threads = o->threads;
      s = k == SPC_FILE_MTX ? spc_mtx_write(w, &out, o, e) : spc_tns_write(w, &out, o, e);
      s = spc_out_close(&out, s, e);
    }
  } else {
    char tmp[4096];
    if (!(s = spc_tmpname(path, tmp, sizeof tmp, e))) {
      s = k == SPC_FILE_BSP ? spc_bsp_write(w, tmp, o, e) : spc_npz_write(w, tmp, o, e);
      if (s && e && !strcmp(e->file, tmp)) /* name the target, not the temp */
        snprintf(e->file, sizeof e->file, "%s", path);
      s = spc_commit_tmp(tmp, path, s, e);
    }
  }
  if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  spc_tensor_free(&x);
  return s;
}
