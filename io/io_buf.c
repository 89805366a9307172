/* io_buf.c -- whole-file input (mmap, or gzip inflated into memory) and
 * atomic output (temporary file in the target's folder, renamed on commit). */
#include "spc_io.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

size_t spc_peek(const char *path, unsigned char *dst, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t k = fread(dst, 1, n, f);
  fclose(f);
  return k;
}

/* Inflate every gzip member of [src, src+n) into a growing heap buffer. */
static spc_status gunzip(const char *path, const unsigned char *src, size_t n,
                         spc_buf *b, spc_error *e) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return SPC_NOMEM(e);
  /* the trailer's ISIZE (size mod 2^32) is a hint, never trusted */
  size_t cap = n >= 4 ? (size_t)src[n - 4] | (size_t)src[n - 3] << 8 |
                            (size_t)src[n - 2] << 16 | (size_t)src[n - 1] << 24
                      : 0;
  if (cap < 2 * n) cap = 2 * n;
  if (cap > 64 * n + 65536) cap = 64 * n + 65536;
  cap += 1;
  char *out = spc_malloc(cap);
  size_t len = 0;
  spc_status s = SPC_OK;
  if (!out) { inflateEnd(&z); return SPC_NOMEM(e); }
  z.next_in = (unsigned char *)src;
  size_t left = n;
  for (;;) {
    if (len + 1 >= cap) {
      size_t nc = cap * 2;
      char *p = spc_realloc(out, nc);
      if (!p) { s = SPC_NOMEM(e); break; }
      out = p;
      cap = nc;
    }
    uInt in_chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
    uInt out_room = cap - 1 - len > (1u << 30) ? (1u << 30) : (uInt)(cap - 1 - len);
    z.avail_in = in_chunk;
    z.next_out = (unsigned char *)out + len;
    z.avail_out = out_room;
    int r = inflate(&z, Z_NO_FLUSH);
    size_t used = in_chunk - z.avail_in;
    left -= used;
    len += out_room - z.avail_out;
    if (r == Z_STREAM_END) {
      /* another member may follow (skip zero padding) */
      while (left && *z.next_in == 0) { z.next_in++; left--; }
      if (!left) break;
      inflateReset(&z);
      continue;
    }
    if (r == Z_BUF_ERROR && !left) {
      s = spc_err(e, SPC_ERR_INPUT, path, 0, 0, "gzip data ends early (truncated file)");
      break;
    }
    if (r != Z_OK && r != Z_BUF_ERROR) {
      s = spc_err(e, SPC_ERR_INPUT, path, 0, 0, "corrupt gzip data: %s",
                  z.msg ? z.msg : "inflate failed");
      break;
    }
  }
  inflateEnd(&z);
  if (s) { spc_free(out); return s; }
  out[len] = 0;
  b->owned = out;
  b->data = out;
  b->len = len;
  b->gz = true;
  return SPC_OK;
}

spc_status spc_buf_open(const char *path, spc_buf *b, spc_error *e) {
  memset(b, 0, sizeof *b);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "not a regular file");
  }
  size_t n = (size_t)st.st_size;
  void *m = NULL;
  if (n) {
    m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      close(fd);
      return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot map: %s", strerror(errno));
    }
    madvise(m, n, MADV_SEQUENTIAL);
    madvise(m, n, MADV_WILLNEED);
  }
  close(fd);
  const unsigned char *u = m;
  if (n >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
    spc_status s = gunzip(path, u, n, b, e);
    munmap(m, n);
    return s;
  }
  b->map = m;
  b->maplen = n;
  b->data = m ? (const char *)m : "";
  b->len = n;
  return SPC_OK;
}

void spc_buf_close(spc_buf *b) {
  if (b->map) munmap(b->map, b->maplen);
  spc_free(b->owned);
  memset(b, 0, sizeof *b);
}

/* ---- output ------------------------------------------------------------ */

spc_status spc_tmpname(const char *path, char *tmp, size_t n, spc_error *e) {
  const char *slash = strrchr(path, '/');
  int dl = slash ? (int)(slash - path + 1) : 0;
  if ((size_t)snprintf(tmp, n, "%.*s.%s.XXXXXX", dl, path,
                       slash ? slash + 1 : path) >= n)
    return spc_err(e, SPC_ERR_ARG, path, 0, 0, "output path too long");
  int fd = mkstemp(tmp);
  if (fd < 0)
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot create output: %s",
                   strerror(errno));
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um);
  close(fd);
  return SPC_OK;
}

spc_status spc_commit_tmp(const char *tmp, const char *path, spc_status st,
                          spc_error *e) {
  if (st != SPC_OK) {
    unlink(tmp);
    return st;
  }
  if (rename(tmp, path) != 0) {
    int er = errno;
    unlink(tmp);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot rename output into place: %s",
                   strerror(er));
  }
  return SPC_OK;
}

spc_status spc_out_open(spc_out *o, const char *path, int gzip, spc_error *e) {
  memset(o, 0, sizeof *o);
  if (strlen(path) >= sizeof o->final)
    return spc_err(e, SPC_ERR_ARG, path, 0, 0, "output path too long");
  strcpy(o->final, path);
  spc_status s = spc_tmpname(path, o->tmp, sizeof o->tmp, e);
  if (s) return s;
  if (gzip) {
    o->gz = gzopen(o->tmp, "wb6");
    if (o->gz) gzbuffer(o->gz, 1 << 20);
  } else {
    o->f = fopen(o->tmp, "wb");
    if (o->f) setvbuf(o->f, NULL, _IOFBF, 1 << 20);
  }
  if (!o->gz && !o->f) {
    unlink(o->tmp);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  }
  return SPC_OK;
}

spc_status spc_out_write(spc_out *o, const void *p, size_t n, spc_error *e) {
  if (o->st) return o->st;
  const char *c = p;
  while (n) {
    size_t k;
    if (o->gz) {
      unsigned part = n > (1u << 30) ? (1u << 30) : (unsigned)n;
      int w = gzwrite(o->gz, c, part);
      k = w > 0 ? (size_t)w : 0;
    } else {
      k = fwrite(c, 1, n, o->f);
    }
    if (!k)
      return o->st = spc_err(e, SPC_ERR_IO, o->final, 0, 0, "write failed: %s",
                             strerror(errno ? errno : EIO));
    c += k;
    n -= k;
  }
  return SPC_OK;
}

spc_status spc_out_close(spc_out *o, spc_status st, spc_error *e) {
  int bad = 0;
  if (o->gz) bad = gzclose(o->gz) != Z_OK;
  if (o->f) bad = fclose(o->f) != 0;
  o->gz = NULL;
  o->f = NULL;
  if (!st && o->st) st = o->st;
  if (!st && bad)
    st = spc_err(e, SPC_ERR_IO, o->final, 0, 0, "write failed (disk full?)");
  return spc_commit_tmp(o->tmp, o->final, st, e);
}
