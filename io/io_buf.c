/* io_buf.c -- whole-file input (mmap, or gzip inflated into memory) and
 * atomic output (temporary file in the target's folder, renamed on commit). */
#include "spc_io.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <omp.h>
#include <stdint.h>
#include <zlib.h>

size_t spc_peek(const char *path, unsigned char *dst, size_t n) {
  /* only a regular file: a FIFO opened to peek would lose what its writer
   * sent (and block the reader's own open after it) */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
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

/* The outputs being written (their temporary names), for
 * spc_cleanup_temp_files from a signal handler: a slot's name is written
 * before it is marked used and unmarked after the file is renamed or
 * removed (an unlink of a name already gone does nothing).  Past the slots
 * a file is not listed: it is still removed on every failure. */
#define TMP_SLOTS 16
static char tmp_names[TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
/* threads register and unregister under tmp_mu (a name is never rewritten
 * while another thread compares it); the signal handler takes no lock and
 * reads tmp_used with acquire loads */
static pthread_mutex_t tmp_mu = PTHREAD_MUTEX_INITIALIZER;

static void tmp_register(const char *tmp) {
  pthread_mutex_lock(&tmp_mu);
  for (int i = 0; i < TMP_SLOTS; i++) {
    if (__atomic_load_n(&tmp_used[i], __ATOMIC_RELAXED)) continue;
    __atomic_store_n(&tmp_used[i], 2, __ATOMIC_RELAXED); /* 2: being written */
    snprintf(tmp_names[i], sizeof tmp_names[i], "%s", tmp);
    __atomic_store_n(&tmp_used[i], 1, __ATOMIC_RELEASE);
    break;
  }
  pthread_mutex_unlock(&tmp_mu);
}

static void tmp_unregister(const char *tmp) {
  pthread_mutex_lock(&tmp_mu);
  for (int i = 0; i < TMP_SLOTS; i++)
    if (__atomic_load_n(&tmp_used[i], __ATOMIC_RELAXED) == 1 && !strcmp(tmp_names[i], tmp)) {
      __atomic_store_n(&tmp_used[i], 0, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&tmp_mu);
}

void spc_io_cleanup_outputs(void) { /* async-signal-safe: no lock */
  for (int i = 0; i < TMP_SLOTS; i++)
    if (__atomic_load_n(&tmp_used[i], __ATOMIC_ACQUIRE) == 1) unlink(tmp_names[i]);
}

/* An output onto something that is not a regular file (a device such as
 * /dev/null, a FIFO): renaming a temporary onto it would replace the node
 * with a file (and /dev is no place for the temporary either).  Such an
 * output is written to a temporary in $TMPDIR (else /tmp), then copied
 * into the node. */
static bool special_out(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

/* Copy the finished temporary into the node path. */
static spc_status copy_into(const char *tmp, const char *path, spc_error *e) {
  int from = open(tmp, O_RDONLY), to = from < 0 ? -1 : open(path, O_WRONLY);
  int er = from < 0 || to < 0 ? errno : 0;
  char *buf = er ? NULL : malloc((size_t)1 << 16);
  if (!er && !buf) er = ENOMEM;
  for (ssize_t k; !er && (k = read(from, buf, (size_t)1 << 16)) != 0;) {
    if (k < 0) {
      if (errno != EINTR) er = errno;
      continue;
    }
    for (ssize_t w = 0, d; !er && w < k; w += d > 0 ? d : 0)
      if ((d = write(to, buf + w, (size_t)(k - w))) < 0 && errno != EINTR) er = errno;
  }
  free(buf);
  if (to >= 0 && close(to) && !er) er = errno;
  if (from >= 0) close(from);
  return er ? spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot write: %s", strerror(er)) : SPC_OK;
}

spc_status spc_tmpname(const char *path, char *tmp, size_t n, spc_error *e) {
  const char *slash = strrchr(path, '/');
  int dl = slash ? (int)(slash - path + 1) : 0;
  const char *td = getenv("TMPDIR");
  if (special_out(path)) {
    if ((size_t)snprintf(tmp, n, "%s/.spconv.out.XXXXXX", td && *td ? td : "/tmp") >= n)
      return spc_err(e, SPC_ERR_ARG, path, 0, 0, "output path too long");
  } else if ((size_t)snprintf(tmp, n, "%.*s.%s.XXXXXX", dl, path,
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
  tmp_register(tmp);
  return SPC_OK;
}

spc_status spc_commit_tmp(const char *tmp, const char *path, spc_status st,
                          spc_error *e) {
  if (st != SPC_OK) {
    unlink(tmp);
    tmp_unregister(tmp);
    return st;
  }
  if (special_out(path)) { /* copied in, the node kept */
    spc_status s = copy_into(tmp, path, e);
    unlink(tmp);
    tmp_unregister(tmp);
    return s;
  }
  if (rename(tmp, path) != 0) {
    int er = errno;
    unlink(tmp);
    tmp_unregister(tmp);
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot rename output into place: %s",
                   strerror(er));
  }
  tmp_unregister(tmp);
  return SPC_OK;
}

/* gzip output, deflated on threads: the bytes are cut into chunks of
 * GZ_CHUNK (fixed, whatever the thread count, so the file is the same
 * bytes on any), each deflated alone as raw deflate at level 6 with the
 * 32 KiB before it as its dictionary (so the ratio is gzip's, within
 * about 0.1%), ended by a sync flush (byte-aligned, not final);
 * a batch of up to one chunk a thread runs at once, the chunks' CRCs
 * are combined (crc32_combine) and the whole is one gzip member: the
 * 10-byte header, the chunks, an empty final block, CRC and size.  As
 * pigz does it; zlib's gzwrite on one core made a .mtx.gz five times
 * slower to write than the .mtx. */
#define GZ_CHUNK ((size_t)1 << 20)

typedef struct gzjob {
  const unsigned char *p, *dict;
  size_t n, ndict;
  unsigned char *out;
  size_t nout;
  unsigned long crc;
  int ok;
} gzjob;

static void gz_chunk(gzjob *j) {
  z_stream z;
  memset(&z, 0, sizeof z);
  j->ok = 0;
  j->crc = crc32(0L, Z_NULL, 0);
  if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  size_t cap = deflateBound(&z, (uLong)j->n) + 64;
  if (!(j->out = malloc(cap))) {
    deflateEnd(&z);
    return;
  }
  if (j->ndict) deflateSetDictionary(&z, j->dict, (uInt)j->ndict);
  z.next_in = (unsigned char *)(uintptr_t)j->p;
  z.avail_in = (uInt)j->n;
  z.next_out = j->out;
  z.avail_out = (uInt)cap;
  int r = deflate(&z, Z_SYNC_FLUSH);
  j->nout = cap - z.avail_out;
  j->ok = (r == Z_OK || r == Z_BUF_ERROR) && z.avail_in == 0;
  deflateEnd(&z);
  j->crc = crc32(j->crc, j->p, (uInt)j->n);
}

static spc_status out_put(spc_out *o, const void *p, size_t n, spc_error *e) {
  if (n && fwrite(p, 1, n, o->f) != n)
    return o->st = spc_err(e, SPC_ERR_IO, o->final, 0, 0, "write failed: %s",
                           strerror(errno ? errno : EIO));
  return SPC_OK;
}

/* Deflate the whole chunks of o->in (all of it when last), keep the rest. */
static spc_status gz_flush(spc_out *o, bool last, spc_error *e) {
  size_t nch = o->inlen / GZ_CHUNK + (last && o->inlen % GZ_CHUNK);
  if (!nch) return SPC_OK;
  gzjob *jobs = calloc(nch, sizeof *jobs);
  if (!jobs) return o->st = SPC_NOMEM(e);
  for (size_t k = 0; k < nch; k++) {
    size_t b = k * GZ_CHUNK, n = o->inlen - b < GZ_CHUNK ? o->inlen - b : GZ_CHUNK;
    jobs[k].p = o->in + b;
    jobs[k].n = n;
    if (k) jobs[k].dict = o->in + b - 32768, jobs[k].ndict = 32768;
    else jobs[k].dict = o->dict, jobs[k].ndict = o->dictlen;
  }
  int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nch > 1 && nt > 1)
  for (size_t k = 0; k < nch; k++) gz_chunk(&jobs[k]);
  spc_status s = SPC_OK;
  for (size_t k = 0; k < nch; k++) {
    if (!s && !jobs[k].ok) s = o->st = SPC_NOMEM(e);
    if (!s) s = out_put(o, jobs[k].out, jobs[k].nout, e);
    if (!s) o->crc = crc32_combine(o->crc, jobs[k].crc, (z_off_t)jobs[k].n);
    free(jobs[k].out);
  }
  free(jobs);
  if (s) return s;
  size_t used = nch * GZ_CHUNK < o->inlen ? nch * GZ_CHUNK : o->inlen;
  o->isize += used;
  /* the window of the next chunk: the last 32 KiB deflated */
  size_t keep = used < 32768 ? used : 32768;
  if (keep < 32768 && o->dictlen) { /* short: the old window's tail first */
    size_t old = o->dictlen + keep > 32768 ? 32768 - keep : o->dictlen;
    memmove(o->dict, o->dict + o->dictlen - old, old);
    o->dictlen = old;
  } else {
    o->dictlen = 0;
  }
  memcpy(o->dict + o->dictlen, o->in + used - keep, keep);
  o->dictlen += keep;
  memmove(o->in, o->in + used, o->inlen - used);
  o->inlen -= used;
  return SPC_OK;
}

spc_status spc_out_open(spc_out *o, const char *path, int gzip, spc_error *e) {
  memset(o, 0, sizeof *o);
  if (strlen(path) >= sizeof o->final)
    return spc_err(e, SPC_ERR_ARG, path, 0, 0, "output path too long");
  strcpy(o->final, path);
  spc_status s = spc_tmpname(path, o->tmp, sizeof o->tmp, e);
  if (s) return s;
  o->f = fopen(o->tmp, "wb");
  if (o->f) setvbuf(o->f, NULL, _IOFBF, 1 << 20);
  if (!o->f) {
    int er = errno;
    spc_commit_tmp(o->tmp, path, SPC_ERR_IO, NULL); /* removed */
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot write: %s", strerror(er));
  }
  if (gzip) {
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    o->gz = true;
    o->crc = crc32(0L, Z_NULL, 0);
    if ((s = out_put(o, head, sizeof head, e))) {
      fclose(o->f);
      o->f = NULL;
      return spc_commit_tmp(o->tmp, path, s, e); /* removed */
    }
  }
  return SPC_OK;
}

spc_status spc_out_write(spc_out *o, const void *p, size_t n, spc_error *e) {
  if (o->st) return o->st;
  if (!o->gz) return out_put(o, p, n, e);
  const unsigned char *c = p;
  while (n) {
    if (!o->in) { /* a batch: a chunk a thread, at least two */
      int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
      o->incap = GZ_CHUNK * (size_t)(nt < 2 ? 2 : nt > 64 ? 64 : nt);
      if (!(o->in = malloc(o->incap))) return o->st = SPC_NOMEM(e);
    }
    size_t k = o->incap - o->inlen < n ? o->incap - o->inlen : n;
    memcpy(o->in + o->inlen, c, k);
    o->inlen += k;
    c += k;
    n -= k;
    spc_status s = o->inlen == o->incap ? gz_flush(o, false, e) : SPC_OK;
    if (s) return s;
  }
  return SPC_OK;
}

spc_status spc_out_close(spc_out *o, spc_status st, spc_error *e) {
  int bad = 0;
  if (o->gz && !st && !o->st && !gz_flush(o, true, e)) {
    /* an empty final block, then CRC-32 and the size mod 2^32 */
    unsigned char tail[10] = {3, 0};
    for (int k = 0; k < 4; k++) {
      tail[2 + k] = (unsigned char)(o->crc >> (8 * k));
      tail[6 + k] = (unsigned char)(o->isize >> (8 * k));
    }
    out_put(o, tail, sizeof tail, e);
  }
  free(o->in);
  o->in = NULL;
  if (o->f) bad = fclose(o->f) != 0;
  o->f = NULL;
  if (!st && o->st) st = o->st;
  if (!st && bad)
    st = spc_err(e, SPC_ERR_IO, o->final, 0, 0, "write failed (disk full?)");
  return spc_commit_tmp(o->tmp, o->final, st, e);
}
