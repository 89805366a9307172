/* io_npz.c -- scipy.sparse .npz files (a zip of .npy arrays), and the helpers
 * both binary containers share: error records with a key, validation of a
 * tensor assembled from a file, and the read options (value cast, expand).
 *
 * Layout written (as scipy.sparse.save_npz): coo -> row, col, data, shape,
 * format; csr / csc -> indices, indptr, data, shape, format.  `format` is a
 * 0-d '<U3' array, `shape` a 1-d '<i8' array of 2.  Index arrays keep their
 * 32/64-bit width ('<i4' / '<i8').  Entries are stored, or deflated when
 * o->gzip > 0; ZIP64 records are written where a size or offset reaches
 * 4 GiB.  The host must be little-endian (checked at compile time). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spc_containers.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "io_npz.c moves host arrays as little-endian .npy data"
#endif

int spc_npz_force_zip64 = 0;

/* ======================================================================
 * Shared helpers
 * ====================================================================== */

spc_status spc_cnt_err(spc_error *e, spc_status code, const char *path,
                       const char *key, const char *fmt, ...) {
  char msg[sizeof(((spc_error *)0)->msg)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  spc_err(e, code, path, 0, 0, "%s", msg);
  if (e) snprintf(e->key, sizeof e->key, "%s", key ? key : "");
  return code;
}

#define LP_ORDER (SPC_LP_ORDERED | SPC_LP_UNIQUE | SPC_LP_LOCATE)

/* Positions per level (np[l]: parents of level l; np[nlevels]: leaves),
 * checking array presence, lengths and int64 overflow before anything
 * indexes an array with them. */
static spc_status walk_levels(const spc_tensor *t, int64_t *np,
                              const char *path, spc_error *e) {
  int64_t n = 1;
  if (t->nlevels < 1 || t->nlevels > SPC_MAX_ORDER)
    return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL, "%d levels", t->nlevels);
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level *lv = &t->lv[l];
    const spc_array *pos = spc_level_array_c(lv, "pos");
    const spc_array *crd = spc_level_array_c(lv, "crd");
    np[l] = n;
    if (!lv->fmt)
      return spc_cnt_err(e, SPC_ERR_INTERNAL, path, NULL, "level %d: no format", l);
    if (lv->dim < 0 || lv->dim >= t->order || lv->size < 0)
      return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                         "level %d: dimension %d / size %lld out of range", l,
                         lv->dim, (long long)lv->size);
    if (lv->fmt == &spc_level_dense) {
      if (lv->size && n > INT64_MAX / lv->size)
        return spc_cnt_err(e, SPC_ERR_OVERFLOW, path, NULL,
                           "level %d: more than 2^63 positions", l);
      n *= lv->size;
    } else if (lv->fmt == &spc_level_compressed) {
      if (!pos || !crd || pos->len != n + 1)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: pos has %lld entries, expected %lld", l,
                           pos ? (long long)pos->len : 0LL, (long long)n + 1);
      n = spc_arr_get(pos, n);
      if (n != crd->len)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: pos ends at %lld but crd has %lld "
                           "entries", l, (long long)n, (long long)crd->len);
    } else if (lv->fmt == &spc_level_singleton) {
      if (!crd || crd->len != n)
        return spc_cnt_err(e, SPC_ERR_INPUT, path, NULL,
                           "level %d: crd has %lld entries, expected %lld", l,
                           crd ? (long long)crd->len : 0LL, (long long)n);
    } else {
      n = lv->fmt->npos(lv, n);
    }
  }
  np[t->nlevels] = n;
  return SPC_OK;
}

/* Order properties of a compressed level r and the singletons below it
 * (levels r..end-1), from the data: level k is ORDERED when, among
 * neighbours with equal coordinates at levels r..k-1, coordinates at k do
 * not decrease (and every level above is ORDERED); UNIQUE when they
 * strictly increase. */
static void chain_props(spc_tensor *t, int r, int end, int64_t np) {
  bool ord[SPC_MAX_ORDER], unq[SPC_MAX_ORDER];
  const spc_array *crd[SPC_MAX_ORDER];
  const spc_array *pos = spc_level_array_c(&t->lv[r], "pos");
  for (int k = r; k < end; k++) {
    ord[k] = unq[k] = true;
    crd[k] = spc_level_array_c(&t->lv[k], "crd");
  }
  for (int64_t p = 0; p < np; p++) {
    int64_t b = spc_arr_get(pos, p), e = spc_arr_get(pos, p + 1);
    for (int64_t q = b + 1; q < e; q++) {
      int k = r;
      int64_t x = 0, y = 0;
      while (k < end && (x = spc_arr_get(crd[k], q - 1)) ==
                            (y = spc_arr_get(crd[k], q)))
        unq[k++] = false;
      if (k < end && x > y) ord[k] = unq[k] = false;
    }
  }
  bool up = true;
  for (int k = r; k < end; k++) {
    spc_level *lv = &t->lv[k];
    up = up && ord[k];
    lv->props = lv->fmt->props & ~(unsigned)LP_ORDER;
    if (up) lv->props |= SPC_LP_ORDERED;
    if (up && unq[k]) lv->props |= SPC_LP_UNIQUE;
    if (k == r && up && unq[k]) lv->props |= SPC_LP_LOCATE;
  }
}

spc_status spc_cnt_validate(spc_tensor *t, const char *path, spc_error *e) {
  int64_t np[SPC_MAX_ORDER + 1];
  spc_status s = walk_levels(t, np, path, e);
  if (s) return s;
  for (int l = 0; l < t->nlevels; l++) {
    spc_level *lv = &t->lv[l];
    lv->props = lv->fmt->props;
    if (lv->fmt == &spc_level_compressed || lv->fmt == &spc_level_singleton)
      lv->props &= ~(unsigned)LP_ORDER;
  }
  if (t->vt != SPC_PATTERN && t->nval != np[t->nlevels])
    return spc_cnt_err(e, SPC_ERR_INPUT, path, "values",
                       "%lld values for %lld stored components",
                       (long long)t->nval, (long long)np[t->nlevels]);
  if ((s = spc_tensor_check(t, e))) {
    char msg[sizeof(((spc_error *)0)->msg)];
    snprintf(msg, sizeof msg, "%s", e ? e->msg : "");
    return spc_cnt_err(e, s, path, NULL, "%s", msg);
  }
  for (int l = 0; l < t->nlevels;) {
    int end = l + 1;
    if (t->lv[l].fmt != &spc_level_compressed) {
      l++;
      continue;
    }
    while (end < t->nlevels && t->lv[end].fmt == &spc_level_singleton) end++;
    chain_props(t, l, end, np[l]);
    l = end;
  }
  return SPC_OK;
}

/* One value as the widest integer or float it came from. */
typedef struct num { int kind; int64_t i; uint64_t u; double d; } num; /* 0 i, 1 u, 2 d */

static num num_get(spc_vtype vt, const void *v, int64_t k) {
  num x = {0, 1, 0, 0};
  switch (vt) {
  case SPC_I64: x.i = ((const int64_t *)v)[k]; break;
  case SPC_U64: x.kind = 1; x.u = ((const uint64_t *)v)[k]; break;
  case SPC_F32: x.kind = 2; x.d = ((const float *)v)[k]; break;
  case SPC_F64: x.kind = 2; x.d = ((const double *)v)[k]; break;
  default: break; /* pattern: 1 */
  }
  return x;
}

static double num_double(num x) {
  return x.kind == 0 ? (double)x.i : x.kind == 1 ? (double)x.u : x.d;
}

/* Store x as value k of type vt; -1 when it does not fit, -2 when a float
 * is not an integer. */
static int num_put(spc_vtype vt, void *v, int64_t k, num x) {
  switch (vt) {
  case SPC_I64:
    if (x.kind == 1 && x.u > (uint64_t)INT64_MAX) return -1;
    if (x.kind == 2 && x.d != trunc(x.d)) return -2;
    if (x.kind == 2 && !(x.d >= -0x1p63 && x.d < 0x1p63)) return -1;
    ((int64_t *)v)[k] = x.kind == 0 ? x.i : x.kind == 1 ? (int64_t)x.u
                                                        : (int64_t)x.d;
    return 0;
  case SPC_U64:
    if ((x.kind == 0 && x.i < 0) || (x.kind == 2 && !(x.d >= 0 && x.d < 0x1p64)))
      return -1;
    if (x.kind == 2 && x.d != trunc(x.d)) return -2;
    ((uint64_t *)v)[k] = x.kind == 0 ? (uint64_t)x.i : x.kind == 1 ? x.u
                                                         : (uint64_t)x.d;
    return 0;
  case SPC_F32: ((float *)v)[k] = (float)num_double(x); return 0;
  case SPC_F64: ((double *)v)[k] = num_double(x); return 0;
  case SPC_C128:
    ((double *)v)[2 * k] = num_double(x);
    ((double *)v)[2 * k + 1] = 0;
    return 0;
  default: return 0;
  }
}

static bool all_dense(const spc_tensor *t) {
  for (int l = 0; l < t->nlevels; l++)
    if (t->lv[l].fmt != &spc_level_dense) return false;
  return true;
}

/* Cast t's values to type `to` in place (a new value array). */
static spc_status cast_values(spc_tensor **tp, spc_vtype to, const char *path,
                              spc_error *e) {
  spc_tensor *t = *tp;
  if (to < SPC_PATTERN || to > SPC_C128)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "unknown value type %d", (int)to);
  if (to == SPC_PATTERN) {
    if (all_dense(t)) { /* a dense pattern would turn zeros into ones */
      spc_tensor *c = NULL;
      spc_status s = spc_tensor_to_coo(t, 1, &c, e);
      if (s) return s;
      spc_tensor_free(tp);
      *tp = t = c;
    }
    if (t->val_owned) spc_free(t->val);
    t->val = NULL;
    t->val_owned = false;
    t->vt = SPC_PATTERN;
    return SPC_OK;
  }
  if (t->vt == SPC_C128)
    return spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, "values",
                       "complex values cannot be read as %s", spc_vtype_name(to));
  int64_t n = t->vt == SPC_PATTERN ? spc_tensor_nstored(t) : t->nval;
  void *dst = spc_malloc_n(n, spc_vtype_size(to));
  if (!dst) return spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
  for (int64_t k = 0; k < n; k++) {
    num x = num_get(t->vt, t->val, k);
    int r = num_put(to, dst, k, x);
    if (r) {
      spc_free(dst);
      return spc_cnt_err(e, r == -1 ? SPC_ERR_OVERFLOW : SPC_ERR_INPUT, path,
                         "values", "value %lld (%g) %s %s", (long long)k,
                         num_double(x), r == -1 ? "does not fit" : "is not an integer, as",
                         spc_vtype_name(to));
    }
  }
  if (t->val_owned) spc_free(t->val);
  t->val = dst;
  t->val_owned = true;
  t->nval = n;
  t->vt = to;
  return SPC_OK;
}

spc_status spc_cnt_finish(spc_tensor **tp, const char *path,
                          const spc_read_opts *o, spc_error *e) {
  spc_status s = SPC_OK;
  if (!o) return SPC_OK;
  if (o->vtype != SPC_VTYPE_AUTO && o->vtype != (*tp)->vt &&
      (s = cast_values(tp, o->vtype, path, e)))
    return s;
  if (o->expand && (*tp)->sym != SPC_GENERAL) {
    spc_tensor *x = NULL;
    if ((s = spc_tensor_expand(*tp, &x, e))) {
      if (e) snprintf(e->file, sizeof e->file, "%s", path);
      return s;
    }
    spc_tensor_free(tp);
    *tp = x;
  }
  return SPC_OK;
}

/* ======================================================================
 * Little-endian fields
 * ====================================================================== */

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static unsigned get16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static uint32_t get32(const unsigned char *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) {
  return get32(p) | (uint64_t)get32(p + 4) << 32;
}

#define Z_LOCAL 0x04034b50u
#define Z_CENTRAL 0x02014b50u
#define Z_EOCD 0x06054b50u
#define Z_EOCD64 0x06064b50u
#define Z_LOC64 0x07064b50u
#define Z_MAX32 0xFFFFFFFFu
#define Z_DOSDATE 0x21 /* 1980-01-01: fixed, so output is reproducible */
#define CHUNK (1u << 18)

/* ======================================================================
 * Writing
 * ====================================================================== */

typedef struct zentry {
  const char *name;
  uint64_t off, csize, usize;
  uint32_t crc;
  unsigned method;
} zentry;

typedef struct zwriter {
  FILE *f;
  const char *path;
  spc_error *e;
  bool deflate;
  int n;
  zentry ent[5];
  unsigned char buf[CHUNK];   /* deflate output */
  double ones[CHUNK / 8];     /* data of a pattern tensor */
} zwriter;

/* An entry's content: a .npy header, then nbytes of data (or of 1.0s). */
typedef struct zsrc {
  const unsigned char *hdr;
  size_t hlen;
  const void *data;
  uint64_t nbytes;
  bool ones;
} zsrc;

static spc_status zw_put(zwriter *w, const void *p, size_t n, const char *key) {
  if (n && fwrite(p, 1, n, w->f) != n)
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, key, "write failed: %s",
                       strerror(errno));
  return SPC_OK;
}

/* Piece of the data at offset off (at most CHUNK bytes for ones). */
static size_t src_piece(const zsrc *s, uint64_t off, const unsigned char **p,
                        const unsigned char *ones) {
  uint64_t left = s->nbytes - off, lim = s->ones ? CHUNK : (1u << 30);
  *p = s->ones ? ones : (const unsigned char *)s->data + off;
  return (size_t)(left < lim ? left : lim);
}

static uint32_t src_crc(const zsrc *s, const unsigned char *ones) {
  uLong c = crc32_z(0, s->hdr, s->hlen);
  const unsigned char *p;
  for (uint64_t off = 0; off < s->nbytes;) {
    size_t k = src_piece(s, off, &p, ones);
    c = crc32_z(c, p, k);
    off += k;
  }
  return (uint32_t)c;
}

/* Local header; sizes are final for stored entries, patched for deflated. */
static spc_status zw_local(zwriter *w, const zentry *z, bool z64) {
  unsigned char h[30 + 32 + 20];
  size_t nl = strlen(z->name);
  put32(h, Z_LOCAL);
  put16(h + 4, z64 ? 45 : z->method ? 20 : 10);
  put16(h + 6, 0);
  put16(h + 8, z->method);
  put16(h + 10, 0);
  put16(h + 12, Z_DOSDATE);
  put32(h + 14, z->crc);
  put32(h + 18, z64 ? Z_MAX32 : (uint32_t)z->csize);
  put32(h + 22, z64 ? Z_MAX32 : (uint32_t)z->usize);
  put16(h + 26, (unsigned)nl);
  put16(h + 28, z64 ? 20 : 0);
  memcpy(h + 30, z->name, nl);
  if (z64) {
    put16(h + 30 + nl, 1);
    put16(h + 32 + nl, 16);
    put64(h + 34 + nl, z->usize);
    put64(h + 42 + nl, z->csize);
  }
  return zw_put(w, h, 30 + nl + (z64 ? 20 : 0), z->name);
}

static spc_status zw_deflate(zwriter *w, zentry *z, const zsrc *s,
                             const unsigned char *ones) {
  z_stream zs;
  spc_status st = SPC_OK;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return spc_cnt_err(w->e, SPC_ERR_NOMEM, w->path, z->name, "deflateInit failed");
  uint64_t off = 0;
  bool hdr_done = false;
  int flush = Z_NO_FLUSH, r = Z_OK;
  z->csize = 0;
  while (!st && r != Z_STREAM_END) {
    if (zs.avail_in == 0 && flush == Z_NO_FLUSH) {
      const unsigned char *p;
      size_t k;
      if (!hdr_done) {
        p = s->hdr;
        k = s->hlen;
        hdr_done = true;
      } else {
        k = src_piece(s, off, &p, ones);
        off += k;
      }
      zs.next_in = (unsigned char *)p;
      zs.avail_in = (uInt)k;
      if (hdr_done && off == s->nbytes) flush = Z_FINISH;
    }
    zs.next_out = w->buf;
    zs.avail_out = CHUNK;
    r = deflate(&zs, flush);
    if (r == Z_STREAM_ERROR) {
      st = spc_cnt_err(w->e, SPC_ERR_INTERNAL, w->path, z->name, "deflate failed");
      break;
    }
    size_t got = CHUNK - zs.avail_out;
    z->csize += got;
    st = zw_put(w, w->buf, got, z->name);
  }
  deflateEnd(&zs);
  return st;
}

/* Append one entry. */
static spc_status zw_entry(zwriter *w, const char *name, const zsrc *s,
                           const unsigned char *ones) {
  zentry *z = &w->ent[w->n++];
  spc_status st;
  z->name = name;
  z->usize = s->hlen + s->nbytes;
  z->method = w->deflate ? 8 : 0;
  z->crc = src_crc(s, ones);
  z->csize = z->usize;
  long long o = ftello(w->f);
  if (o < 0)
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, name, "ftello: %s", strerror(errno));
  z->off = (uint64_t)o;
  bool z64 = spc_npz_force_zip64 || z->usize >= Z_MAX32 ||
             (w->deflate && deflateBound(NULL, (uLong)z->usize) >= Z_MAX32);
  if ((st = zw_local(w, z, z64))) return st;
  if (!w->deflate) {
    const unsigned char *p;
    if ((st = zw_put(w, s->hdr, s->hlen, name))) return st;
    for (uint64_t off = 0; off < s->nbytes;) {
      size_t k = src_piece(s, off, &p, ones);
      if ((st = zw_put(w, p, k, name))) return st;
      off += k;
    }
    return SPC_OK;
  }
  if ((st = zw_deflate(w, z, s, ones))) return st;
  /* patch the compressed size into the local header */
  unsigned char b[8];
  long long end = ftello(w->f);
  size_t at = z64 ? 30 + strlen(name) + 12 : 18;
  if (end < 0 || fseeko(w->f, (off_t)(z->off + at), SEEK_SET))
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, name, "seek: %s", strerror(errno));
  if (z64) put64(b, z->csize);
  else put32(b, (uint32_t)z->csize);
  if ((st = zw_put(w, b, z64 ? 8 : 4, name))) return st;
  if (fseeko(w->f, (off_t)end, SEEK_SET))
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, name, "seek: %s", strerror(errno));
  return SPC_OK;
}

/* Central directory and end records. */
static spc_status zw_finish(zwriter *w) {
  spc_status st;
  bool f64 = spc_npz_force_zip64;
  long long o = ftello(w->f);
  if (o < 0) return spc_cnt_err(w->e, SPC_ERR_IO, w->path, NULL, "ftello: %s", strerror(errno));
  uint64_t cd_off = (uint64_t)o;
  for (int i = 0; i < w->n; i++) {
    const zentry *z = &w->ent[i];
    unsigned char h[46 + 32 + 28], *x;
    size_t nl = strlen(z->name), xl = 0;
    bool bu = f64 || z->usize >= Z_MAX32, bc = f64 || z->csize >= Z_MAX32,
         bo = f64 || z->off >= Z_MAX32;
    bool z64 = bu || bc || bo;
    put32(h, Z_CENTRAL);
    put16(h + 4, 3u << 8 | (z64 ? 45 : 20));
    put16(h + 6, z64 ? 45 : z->method ? 20 : 10);
    put16(h + 8, 0);
    put16(h + 10, z->method);
    put16(h + 12, 0);
    put16(h + 14, Z_DOSDATE);
    put32(h + 16, z->crc);
    put32(h + 20, bc ? Z_MAX32 : (uint32_t)z->csize);
    put32(h + 24, bu ? Z_MAX32 : (uint32_t)z->usize);
    put16(h + 28, (unsigned)nl);
    put16(h + 32, 0);
    put16(h + 34, 0);
    put16(h + 36, 0);
    put32(h + 38, 0100644u << 16);
    put32(h + 42, bo ? Z_MAX32 : (uint32_t)z->off);
    memcpy(h + 46, z->name, nl);
    x = h + 46 + nl;
    if (z64) {
      xl = 4;
      if (bu) put64(x + xl, z->usize), xl += 8;
      if (bc) put64(x + xl, z->csize), xl += 8;
      if (bo) put64(x + xl, z->off), xl += 8;
      put16(x, 1);
      put16(x + 2, (unsigned)(xl - 4));
    }
    put16(h + 30, (unsigned)xl);
    if ((st = zw_put(w, h, 46 + nl + xl, z->name))) return st;
  }
  if ((o = ftello(w->f)) < 0)
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, NULL, "ftello: %s", strerror(errno));
  uint64_t cd_end = (uint64_t)o, cd_size = cd_end - cd_off;
  bool z64 = f64 || cd_off >= Z_MAX32 || cd_size >= Z_MAX32;
  unsigned char r[56 + 20 + 22], *p = r;
  if (z64) {
    put32(p, Z_EOCD64);
    put64(p + 4, 44);
    put16(p + 12, 3u << 8 | 45);
    put16(p + 14, 45);
    put32(p + 16, 0);
    put32(p + 20, 0);
    put64(p + 24, (uint64_t)w->n);
    put64(p + 32, (uint64_t)w->n);
    put64(p + 40, cd_size);
    put64(p + 48, cd_off);
    p += 56;
    put32(p, Z_LOC64);
    put32(p + 4, 0);
    put64(p + 8, cd_end);
    put32(p + 16, 1);
    p += 20;
  }
  put32(p, Z_EOCD);
  put16(p + 4, 0);
  put16(p + 6, 0);
  put16(p + 8, (unsigned)w->n);
  put16(p + 10, (unsigned)w->n);
  put32(p + 12, z64 ? Z_MAX32 : (uint32_t)cd_size);
  put32(p + 16, z64 ? Z_MAX32 : (uint32_t)cd_off);
  put16(p + 20, 0);
  p += 22;
  return zw_put(w, r, (size_t)(p - r), NULL);
}

/* A .npy (version 1.0) header for a 1-d array of n (n < 0: 0-d) elements;
 * padded so the data starts at a multiple of 64 bytes.  buf >= 128. */
static size_t npy_header(unsigned char *buf, const char *descr, int64_t n) {
  char dict[112], shape[32];
  if (n < 0) snprintf(shape, sizeof shape, "()");
  else snprintf(shape, sizeof shape, "(%lld,)", (long long)n);
  int k = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   descr, shape);
  size_t total = (10 + (size_t)k + 1 + 63) / 64 * 64;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  put16(buf + 8, (unsigned)(total - 10));
  memcpy(buf + 10, dict, (size_t)k);
  memset(buf + 10 + k, ' ', total - 10 - (size_t)k - 1);
  buf[total - 1] = '\n';
  return total;
}

static const char *npy_descr(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return "<i8";
  case SPC_U64: return "<u8";
  case SPC_F32: return "<f4";
  case SPC_C128: return "<c16";
  default: return "<f8"; /* float64, and pattern as 1.0s */
  }
}

enum { NPZ_COO, NPZ_CSR, NPZ_CSC };

/* The scipy layout t is stored in as is, or -1. */
static int npz_kind(const spc_tensor *t) {
  if (t->order != 2 || t->nlevels != 2) return -1;
  const spc_level *a = &t->lv[0], *b = &t->lv[1];
  if (a->fmt == &spc_level_compressed && b->fmt == &spc_level_singleton &&
      a->dim != b->dim)
    return NPZ_COO;
  if (a->fmt == &spc_level_dense && b->fmt == &spc_level_compressed)
    return a->dim == 0 && b->dim == 1 ? NPZ_CSR : a->dim == 1 && b->dim == 0 ? NPZ_CSC : -1;
  return -1;
}

static zsrc arr_src(unsigned char *hdr, const spc_array *a) {
  size_t w = a->type == SPC_IDX32 ? 4 : 8;
  zsrc s = {hdr, npy_header(hdr, w == 4 ? "<i4" : "<i8", a->len), a->data,
            (uint64_t)a->len * w, false};
  return s;
}

static spc_status npz_emit(zwriter *w, const spc_tensor *m, int kind) {
  static const char *const names[3][2] = {{"row.npy", "col.npy"},
                                          {"indices.npy", "indptr.npy"},
                                          {"indices.npy", "indptr.npy"}};
  unsigned char h[5][128];
  unsigned char fmt[12] = {0}, *ones = (unsigned char *)w->ones;
  int64_t shape[2] = {m->dims[0], m->dims[1]};
  int64_t nnz = spc_tensor_nstored(m);
  const char *kname = kind == NPZ_COO ? "coo" : kind == NPZ_CSR ? "csr" : "csc";
  zsrc s[5];
  for (int i = 0; i < 3; i++) fmt[4 * i] = (unsigned char)kname[i];
  if (kind == NPZ_COO) {
    int r = m->lv[0].dim == 0 ? 0 : 1;
    s[0] = arr_src(h[0], spc_level_array_c(&m->lv[r], "crd"));
    s[1] = arr_src(h[1], spc_level_array_c(&m->lv[1 - r], "crd"));
  } else {
    s[0] = arr_src(h[0], spc_level_array_c(&m->lv[1], "crd"));
    s[1] = arr_src(h[1], spc_level_array_c(&m->lv[1], "pos"));
  }
  s[2] = (zsrc){h[2], npy_header(h[2], "<U3", -1), fmt, 12, false};
  s[3] = (zsrc){h[3], npy_header(h[3], "<i8", 2), shape, 16, false};
  s[4] = (zsrc){h[4], npy_header(h[4], npy_descr(m->vt), nnz), m->val,
                (uint64_t)nnz * (m->vt == SPC_PATTERN ? 8 : spc_vtype_size(m->vt)),
                m->vt == SPC_PATTERN};
  if (m->vt == SPC_PATTERN)
    for (size_t i = 0; i < CHUNK / 8; i++) w->ones[i] = 1.0;
  const char *nm[5] = {names[kind][0], names[kind][1], "format.npy", "shape.npy",
                       "data.npy"};
  spc_status st = SPC_OK;
  for (int i = 0; i < 5 && !st; i++) st = zw_entry(w, nm[i], &s[i], ones);
  return st ? st : zw_finish(w);
}

spc_status spc_npz_write(const spc_tensor *t, const char *path,
                         const spc_write_opts *o, spc_error *e) {
  spc_tensor *own = NULL;
  zwriter *w = NULL;
  spc_status s = SPC_OK;
  if (!t || !path)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no tensor or no path");
  if (t->order != 2)
    return spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, NULL,
                       "npz holds matrices (order 2); this tensor has order %d",
                       t->order);
  const spc_tensor *m = t;
  if (t->sym != SPC_GENERAL) { /* scipy has no symmetric storage */
    if ((s = spc_tensor_expand(t, &own, e))) goto done;
    m = own;
  }
  int kind = npz_kind(m);
  if (kind < 0) {
    spc_tensor *c = NULL;
    if ((s = spc_tensor_to_coo(m, all_dense(m), &c, e))) goto done;
    spc_tensor_free(&own);
    m = own = c;
    kind = NPZ_COO;
  }
  if (!(w = spc_calloc(1, sizeof *w))) {
    s = spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
    goto done;
  }
  w->path = path;
  w->e = e;
  w->deflate = o && o->gzip > 0;
  if (!(w->f = fopen(path, "wb"))) {
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot create: %s", strerror(errno));
    goto done;
  }
  s = npz_emit(w, m, kind);
done:
  if (w && w->f && fclose(w->f) && !s)
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "close failed: %s", strerror(errno));
  spc_free(w);
  spc_tensor_free(&own);
  if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  return s;
}

/* ======================================================================
 * Reading
 * ====================================================================== */

#define NPZ_MAX_ENTRIES 64

typedef struct zdirent {
  char name[64];
  unsigned method, flags;
  uint32_t crc;
  uint64_t csize, usize, off;
} zdirent;

typedef struct zfile {
  FILE *f;
  const char *path;
  spc_error *e;
  uint64_t size;
  int n;
  zdirent ent[NPZ_MAX_ENTRIES];
  unsigned char in[CHUNK];  /* compressed input */
  unsigned char tmp[CHUNK]; /* elements awaiting conversion */
} zfile;

/* A reader of one entry's uncompressed bytes, checking size and crc32. */
typedef struct zr {
  zfile *zf;
  const zdirent *d;
  uint64_t cleft; /* compressed bytes not yet taken from the file */
  uint64_t done;  /* uncompressed bytes delivered */
  uLong crc;
  bool zinit;
  z_stream zs;
} zr;

static spc_status zbad(zfile *z, const char *key, const char *what) {
  return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, key, "not a valid zip file: %s",
                     what);
}

static spc_status zf_pread(zfile *z, uint64_t off, void *dst, size_t n,
                           const char *key) {
  if (off > z->size || n > z->size - off)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, key,
                       "truncated: %zu bytes at offset %llu pass the end of "
                       "the file", n, (unsigned long long)off);
  if (fseeko(z->f, (off_t)off, SEEK_SET) || fread(dst, 1, n, z->f) != n)
    return spc_cnt_err(z->e, SPC_ERR_IO, z->path, key, "read failed: %s",
                       ferror(z->f) ? strerror(errno) : "unexpected end of file");
  return SPC_OK;
}

/* Parse one central directory record at cd[*p]. */
static spc_status zf_dirent(zfile *z, const unsigned char *cd, uint64_t cdsize,
                            uint64_t *p, zdirent *d, bool *keep) {
  const unsigned char *h = cd + *p;
  if (cdsize - *p < 46 || get32(h) != Z_CENTRAL) return zbad(z, NULL, "bad central directory");
  unsigned nl = get16(h + 28), xl = get16(h + 30), cl = get16(h + 32);
  if (cdsize - *p < 46ull + nl + xl + cl) return zbad(z, NULL, "bad central directory");
  d->flags = get16(h + 8);
  d->method = get16(h + 10);
  d->crc = get32(h + 16);
  d->csize = get32(h + 20);
  d->usize = get32(h + 24);
  d->off = get32(h + 42);
  *keep = nl < sizeof d->name;
  if (*keep) {
    memcpy(d->name, h + 46, nl);
    d->name[nl] = 0;
  }
  for (const unsigned char *x = h + 46 + nl, *xe = x + xl; xe - x >= 4;) {
    unsigned id = get16(x), len = get16(x + 2);
    const unsigned char *v = x + 4;
    if ((size_t)(xe - v) < len) return zbad(z, NULL, "bad extra field");
    if (id == 1) { /* ZIP64: the 32-bit fields that are all ones, in order */
      uint64_t *f[3] = {&d->usize, &d->csize, &d->off};
      unsigned q = 0;
      for (int i = 0; i < 3; i++) {
        if (*f[i] != Z_MAX32) continue;
        if (len - q < 8) return zbad(z, NULL, "short ZIP64 extra field");
        *f[i] = get64(v + q);
        q += 8;
      }
    }
    x = v + len;
  }
  *p += 46ull + nl + xl + cl;
  return SPC_OK;
}

/* Read the end records and the central directory. */
static spc_status zf_open(zfile *z) {
  unsigned char *buf = NULL, *cd = NULL, loc[20], e64[56];
  spc_status s = SPC_OK;
  long long sz;
  if (fseeko(z->f, 0, SEEK_END) || (sz = ftello(z->f)) < 0)
    return spc_cnt_err(z->e, SPC_ERR_IO, z->path, NULL, "cannot seek: %s", strerror(errno));
  z->size = (uint64_t)sz;
  size_t tail = z->size < 65557 ? (size_t)z->size : 65557;
  if (tail < 22) return zbad(z, NULL, "too short");
  if (!(buf = spc_malloc(tail))) return spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, NULL, "out of memory");
  if ((s = zf_pread(z, z->size - tail, buf, tail, NULL))) goto done;
  long i = (long)tail - 22;
  while (i >= 0 && !(get32(buf + i) == Z_EOCD && i + 22 + get16(buf + i + 20) <= (long)tail)) i--;
  if (i < 0) {
    s = zbad(z, NULL, "no end of central directory record");
    goto done;
  }
  uint64_t eocd = z->size - tail + (uint64_t)i, nent = get16(buf + i + 10),
           cdsize = get32(buf + i + 12), cdoff = get32(buf + i + 16), limit = eocd;
  if (eocd >= 20) {
    if ((s = zf_pread(z, eocd - 20, loc, 20, NULL))) goto done;
    if (get32(loc) == Z_LOC64) {
      uint64_t o64 = get64(loc + 8);
      if ((s = zf_pread(z, o64, e64, 56, NULL))) goto done;
      if (get32(e64) != Z_EOCD64 || o64 > eocd - 20) {
        s = zbad(z, NULL, "bad ZIP64 end record");
        goto done;
      }
      nent = get64(e64 + 32);
      cdsize = get64(e64 + 40);
      cdoff = get64(e64 + 48);
      limit = o64;
    }
  }
  if (cdoff > limit || cdsize > limit - cdoff || nent > cdsize / 46 + 1) {
    s = zbad(z, NULL, "central directory outside the file");
    goto done;
  }
  if (!(cd = spc_malloc((size_t)cdsize + 1))) {
    s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, NULL, "out of memory");
    goto done;
  }
  if ((s = zf_pread(z, cdoff, cd, (size_t)cdsize, NULL))) goto done;
  uint64_t p = 0;
  for (uint64_t k = 0; k < nent && !s; k++) {
    zdirent d;
    bool keep = false;
    if ((s = zf_dirent(z, cd, cdsize, &p, &d, &keep)) || !keep) continue;
    for (int j = 0; j < z->n && !s; j++)
      if (!strcmp(z->ent[j].name, d.name)) s = zbad(z, d.name, "entry repeated");
    if (!s && z->n == NPZ_MAX_ENTRIES) s = zbad(z, NULL, "too many entries for an npz");
    if (!s) z->ent[z->n++] = d;
  }
done:
  spc_free(buf);
  spc_free(cd);
  return s;
}

static spc_status zr_open(zfile *z, const char *name, zr *r) {
  unsigned char h[30];
  spc_status s;
  memset(r, 0, sizeof *r);
  r->zf = z;
  for (int i = 0; i < z->n && !r->d; i++)
    if (!strcmp(z->ent[i].name, name)) r->d = &z->ent[i];
  const zdirent *d = r->d;
  if (!d)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name,
                       "not a scipy.sparse npz: no %s in the archive", name);
  if (d->flags & 1)
    return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, name, "encrypted entry");
  if (d->method != 0 && d->method != 8)
    return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, name,
                       "compression method %u (only stored and deflated)", d->method);
  if (d->method == 0 && d->csize != d->usize)
    return zbad(z, name, "stored entry with different sizes");
  if (d->method == 8 && d->usize / 1032 > d->csize + 1)
    return zbad(z, name, "inflated size beyond what deflate can produce");
  if ((s = zf_pread(z, d->off, h, 30, name))) return s;
  if (get32(h) != Z_LOCAL) return zbad(z, name, "bad local header");
  uint64_t data = d->off + 30 + get16(h + 26) + get16(h + 28);
  if (data > z->size || d->csize > z->size - data)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name,
                       "truncated: the entry's data pass the end of the file");
  if (fseeko(z->f, (off_t)data, SEEK_SET))
    return spc_cnt_err(z->e, SPC_ERR_IO, z->path, name, "seek: %s", strerror(errno));
  r->cleft = d->csize;
  if (d->method == 8) {
    if (inflateInit2(&r->zs, -MAX_WBITS) != Z_OK)
      return spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, name, "inflateInit failed");
    r->zinit = true;
  }
  return SPC_OK;
}

/* Refill the inflate input; false at the end of the entry's data. */
static spc_status zr_fill(zr *r) {
  zfile *z = r->zf;
  size_t k = r->cleft < CHUNK ? (size_t)r->cleft : CHUNK;
  if (fread(z->in, 1, k, z->f) != k)
    return spc_cnt_err(z->e, SPC_ERR_IO, z->path, r->d->name, "read failed");
  r->cleft -= k;
  r->zs.next_in = z->in;
  r->zs.avail_in = (uInt)k;
  return SPC_OK;
}

/* Exactly n uncompressed bytes into dst. */
static spc_status zr_read(zr *r, void *dst, uint64_t n) {
  zfile *z = r->zf;
  const char *nm = r->d->name;
  spc_status s;
  if (n > r->d->usize - r->done)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm,
                       "entry ends before the data its header describes");
  unsigned char *p = dst;
  for (uint64_t got = 0; got < n;) {
    size_t k = n - got < (1u << 30) ? (size_t)(n - got) : (1u << 30);
    if (!r->zinit) {
      if (fread(p + got, 1, k, z->f) != k)
        return spc_cnt_err(z->e, SPC_ERR_IO, z->path, nm, "read failed");
      r->cleft -= k;
    } else {
      r->zs.next_out = p + got;
      r->zs.avail_out = (uInt)k;
      while (r->zs.avail_out) {
        if (!r->zs.avail_in && r->cleft && (s = zr_fill(r))) return s;
        int st = inflate(&r->zs, Z_NO_FLUSH);
        if (st == Z_STREAM_END && r->zs.avail_out)
          return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm,
                             "deflate stream ends before the data its header describes");
        if (st != Z_OK && st != Z_STREAM_END && !(st == Z_BUF_ERROR && r->cleft))
          return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm, "corrupt deflate data%s%s",
                             r->zs.msg ? ": " : "", r->zs.msg ? r->zs.msg : "");
        if (st == Z_STREAM_END) break;
      }
    }
    r->crc = crc32_z(r->crc, p + got, k);
    got += k;
  }
  r->done += n;
  return SPC_OK;
}

/* Check the entry was consumed exactly and its crc32; release. */
static spc_status zr_close(zr *r, spc_status s) {
  zfile *z = r->zf;
  const char *nm = r->d ? r->d->name : NULL;
  if (!s && r->done != r->d->usize)
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm,
                    "%llu bytes of the entry follow the data its header describes",
                    (unsigned long long)(r->d->usize - r->done));
  if (!s && r->zinit) { /* the stream must end here */
    unsigned char one;
    int st = Z_OK;
    while (!s && st == Z_OK) {
      if (!r->zs.avail_in && r->cleft && (s = zr_fill(r))) break;
      r->zs.next_out = &one;
      r->zs.avail_out = 1;
      st = inflate(&r->zs, Z_NO_FLUSH);
      if (r->zs.avail_out == 0 || (st != Z_OK && st != Z_STREAM_END) ||
          (st == Z_OK && !r->zs.avail_in && !r->cleft))
        s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm, "corrupt deflate data");
    }
  }
  if (!s && (uint32_t)r->crc != r->d->crc)
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, nm,
                    "crc32 mismatch: the entry is corrupt");
  if (r->zinit) inflateEnd(&r->zs);
  r->zinit = false;
  return s;
}

/* ---- .npy headers ------------------------------------------------------ */

typedef struct npy {
  char kind; /* b i u f c U S */
  int isz;   /* bytes per element */
  int ndim;
  int64_t count;
  uint64_t bytes;
} npy;

typedef struct cur { const char *p, *end; } cur;

static bool lit(cur *c, char ch) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

static bool pystr(cur *c, char *out, size_t n) {
  char q = lit(c, '\'') ? '\'' : lit(c, '"') ? '"' : 0;
  size_t k = 0;
  if (!q) return false;
  while (c->p < c->end && *c->p != q && *c->p != '\\' && k + 1 < n) out[k++] = *c->p++;
  out[k] = 0;
  return c->p < c->end && *c->p++ == q;
}

static bool pyword(cur *c, const char *w) {
  size_t n = strlen(w);
  lit(c, ' ');
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n)) return false;
  c->p += n;
  return true;
}

static bool pyint(cur *c, int64_t *v) {
  lit(c, ' ');
  const char *s = c->p;
  *v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    if (*v > (INT64_MAX - 9) / 10) return false;
    *v = *v * 10 + (*c->p++ - '0');
  }
  if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 long */
  return c->p > s;
}

/* "<f8", "|b1", "<U3": little-endian (or byte-order free) only. */
static int npy_descr_parse(const char *d, npy *h) {
  char bo = *d;
  if (bo == '<' || bo == '|' || bo == '=' || bo == '>') d++;
  if (!*d || !strchr("biufcUS", *d)) return -1;
  h->kind = *d++;
  char *end;
  long n = strtol(d, &end, 10);
  if (end == d || *end || n < 1 || n > 1 << 20) return -1;
  h->isz = (int)(h->kind == 'U' ? 4 * n : n);
  if (bo == '>' && h->isz > 1 && h->kind != 'S') return -2;
  return 0;
}

static spc_status npy_dict(zfile *z, const char *key, const char *s, size_t n,
                           npy *h) {
  cur c = {s, s + n};
  char k[32], v[32];
  int64_t shape[8];
  int have = 0;
  bool fortran = false;
  if (!lit(&c, '{')) goto bad;
  while (!lit(&c, '}')) {
    if (!pystr(&c, k, sizeof k) || !lit(&c, ':')) goto bad;
    if (!strcmp(k, "descr")) {
      if (!pystr(&c, v, sizeof v)) goto bad;
      int r = npy_descr_parse(v, h);
      if (r == -2)
        return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, key,
                           "big-endian array ('%s')", v);
      if (r) return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, key,
                                "array type '%s' is not supported", v);
      have |= 1;
    } else if (!strcmp(k, "fortran_order")) {
      if (pyword(&c, "True")) fortran = true;
      else if (!pyword(&c, "False")) goto bad;
      have |= 2;
    } else if (!strcmp(k, "shape")) {
      if (!lit(&c, '(')) goto bad;
      h->ndim = 0;
      while (!lit(&c, ')')) {
        if (h->ndim == 8 || !pyint(&c, &shape[h->ndim++])) goto bad;
        if (!lit(&c, ',')) {
          if (!lit(&c, ')')) goto bad;
          break;
        }
      }
      have |= 4;
    } else {
      goto bad;
    }
    if (!lit(&c, ',')) {
      if (!lit(&c, '}')) goto bad;
      break;
    }
  }
  if (have != 7) goto bad;
  if (h->ndim > 1)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, key,
                       "a %d-dimensional array where a vector belongs%s", h->ndim,
                       fortran ? " (Fortran order)" : "");
  h->count = 1;
  for (int i = 0; i < h->ndim; i++) {
    if (shape[i] && h->count > INT64_MAX / shape[i]) goto big;
    h->count *= shape[i];
  }
  if (h->count > INT64_MAX / h->isz) goto big;
  h->bytes = (uint64_t)h->count * (uint64_t)h->isz;
  return SPC_OK;
big:
  return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, key, "array size overflows");
bad:
  return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, key, "malformed .npy header");
}

/* Open entry name and parse its .npy header; r is then at the data. */
static spc_status npy_open(zfile *z, const char *name, zr *r, npy *h) {
  unsigned char pre[12];
  char *text = NULL;
  spc_status s;
  memset(h, 0, sizeof *h);
  if ((s = zr_open(z, name, r))) return s;
  if ((s = zr_read(r, pre, 8))) return s;
  if (memcmp(pre, "\x93NUMPY", 6))
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "not a .npy array");
  if (pre[6] < 1 || pre[6] > 3)
    return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, name,
                       ".npy version %d", pre[6]);
  int wide = pre[6] > 1;
  if ((s = zr_read(r, pre + 8, wide ? 4 : 2))) return s;
  uint32_t hlen = wide ? get32(pre + 8) : get16(pre + 8);
  if (hlen > (1u << 20))
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "header of %u bytes", hlen);
  if (!(text = spc_malloc(hlen + 1u)))
    return spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, name, "out of memory");
  if (!(s = zr_read(r, text, hlen))) s = npy_dict(z, name, text, hlen, h);
  spc_free(text);
  if (s) return s;
  uint64_t left = r->d->usize - r->done;
  if (left != h->bytes)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name,
                       "the header describes %lld elements (%llu bytes) but the "
                       "entry holds %llu bytes of data", (long long)h->count,
                       (unsigned long long)h->bytes, (unsigned long long)left);
  return SPC_OK;
}

static bool is_int(const npy *h) {
  return (h->kind == 'i' || h->kind == 'u' || h->kind == 'b') &&
         (h->isz == 1 || h->isz == 2 || h->isz == 4 || h->isz == 8);
}

/* Read the data of r (h->count elements) converted: integers to int64,
 * complex64 to complex128. */
static spc_status read_conv(zr *r, const npy *h, void *dst) {
  zfile *z = r->zf;
  size_t per = CHUNK / (size_t)h->isz;
  spc_status s;
  for (int64_t i = 0; i < h->count;) {
    size_t k = (uint64_t)(h->count - i) < per ? (size_t)(h->count - i) : per;
    if ((s = zr_read(r, z->tmp, (uint64_t)k * (uint64_t)h->isz))) return s;
    const unsigned char *b = z->tmp;
    if (h->kind == 'c') {
      for (size_t j = 0; j < 2 * k; j++) {
        float f;
        memcpy(&f, b + 4 * j, 4);
        ((double *)dst)[2 * i + (int64_t)j] = f;
      }
    } else {
      for (size_t j = 0; j < k; j++, b += h->isz) {
        int64_t v;
        switch (h->isz) {
        case 1: v = h->kind == 'i' ? (int8_t)b[0] : b[0]; break;
        case 2: v = h->kind == 'i' ? (int16_t)get16(b) : (int64_t)get16(b); break;
        case 4: v = h->kind == 'i' ? (int32_t)get32(b) : (int64_t)get32(b); break;
        default:
          if (h->kind == 'u' && get64(b) > (uint64_t)INT64_MAX)
            return spc_cnt_err(z->e, SPC_ERR_OVERFLOW, z->path, r->d->name,
                               "element %lld does not fit int64", (long long)(i + (int64_t)j));
          v = (int64_t)get64(b);
        }
        ((int64_t *)dst)[i + (int64_t)j] = v;
      }
    }
    i += (int64_t)k;
  }
  return SPC_OK;
}

/* Read an integer vector of `expect` elements into a new level array. */
static spc_status read_index(zfile *z, const char *name, spc_level *lv,
                             const char *aname, int64_t expect) {
  zr r;
  npy h;
  spc_status s = npy_open(z, name, &r, &h);
  if (!s && (!is_int(&h) || h.kind == 'b' || h.ndim != 1))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "not an integer vector");
  if (!s && h.count != expect)
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name,
                    "%lld elements, expected %lld", (long long)h.count,
                    (long long)expect);
  bool direct = h.kind == 'i' && (h.isz == 4 || h.isz == 8);
  if (!s && (s = spc_level_add_array(lv, aname, direct && h.isz == 4 ? SPC_IDX32 : SPC_IDX64,
                                     expect, z->e)))
    spc_cnt_err(z->e, s, z->path, name, "out of memory");
  if (!s) {
    void *dst = lv->arr[lv->narr - 1].data;
    s = direct ? zr_read(&r, dst, h.bytes) : read_conv(&r, &h, dst);
  }
  return zr_close(&r, s);
}

/* Value type for a data dtype, and whether it loads without conversion. */
static int data_vtype(const npy *h, spc_vtype *vt, bool *direct) {
  *direct = true;
  if (h->kind == 'f' && h->isz == 8) *vt = SPC_F64;
  else if (h->kind == 'f' && h->isz == 4) *vt = SPC_F32;
  else if (h->kind == 'c' && h->isz == 16) *vt = SPC_C128;
  else if (h->kind == 'u' && h->isz == 8) *vt = SPC_U64;
  else if (h->kind == 'c' && h->isz == 8) *vt = SPC_C128, *direct = false;
  else if (is_int(h)) *vt = SPC_I64, *direct = h->kind == 'i' && h->isz == 8;
  else return -1;
  return 0;
}

/* The 0-d string array format.npy ("coo", "csr", ...). */
static spc_status read_format(zfile *z, char *out, size_t n) {
  zr r;
  npy h;
  unsigned char b[64];
  spc_status s = npy_open(z, "format.npy", &r, &h);
  if (!s && ((h.kind != 'U' && h.kind != 'S') || h.count != 1 || h.bytes > sizeof b))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "format.npy", "not a short string");
  if (!s) s = zr_read(&r, b, h.bytes);
  s = zr_close(&r, s);
  if (s) return s;
  size_t k = 0, step = h.kind == 'U' ? 4 : 1;
  for (size_t i = 0; i < h.bytes && b[i] && k + 1 < n; i += step) {
    if (b[i] > 127 || (step == 4 && (b[i + 1] || b[i + 2] || b[i + 3])))
      return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "format.npy", "not an ASCII string");
    out[k++] = (char)b[i];
  }
  out[k] = 0;
  return SPC_OK;
}

static spc_status read_shape(zfile *z, int64_t *dims) {
  zr r;
  npy h;
  spc_status s = npy_open(z, "shape.npy", &r, &h);
  if (!s && (!is_int(&h) || h.count != 2))
    s = spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "shape.npy", "not 2 integers");
  if (!s) s = read_conv(&r, &h, dims);
  if ((s = zr_close(&r, s))) return s;
  if (dims[0] < 0 || dims[1] < 0)
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, "shape.npy", "negative dimension");
  return SPC_OK;
}

/* Values: data.npy into a new value array of t (vt chosen from the dtype). */
static spc_status read_data(zfile *z, const int64_t *dims, const char *fmt,
                            spc_tensor **out) {
  zr r;
  npy h;
  spc_vtype vt = SPC_F64;
  bool direct = true;
  spc_status s = npy_open(z, "data.npy", &r, &h);
  if (!s && (h.ndim != 1 || data_vtype(&h, &vt, &direct)))
    s = spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, "data.npy",
                    "values of numpy kind '%c%d' are not supported", h.kind, h.isz);
  spc_tensor *t = NULL;
  if (!s && !(t = spc_tensor_alloc(2, dims, vt)))
    s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, NULL, "out of memory");
  if (!s) {
    t->format = fmt;
    t->nval = h.count;
    if (!(t->val = spc_malloc_n(h.count, spc_vtype_size(vt))))
      s = spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, "data.npy", "out of memory");
    t->val_owned = t->val != NULL;
  }
  if (!s) s = direct ? zr_read(&r, t->val, h.bytes) : read_conv(&r, &h, t->val);
  s = zr_close(&r, s);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}

/* Levels of a coo / csr / csc tensor whose values are read. */
static spc_status read_levels(zfile *z, spc_tensor *t, const char *fmt) {
  int64_t nnz = t->nval;
  spc_status s;
  t->nlevels = 2;
  if (!strcmp(fmt, "coo")) {
    spc_level *a = &t->lv[0], *b = &t->lv[1];
    *a = (spc_level){.fmt = &spc_level_compressed, .dim = 0, .size = t->dims[0]};
    *b = (spc_level){.fmt = &spc_level_singleton, .dim = 1, .size = t->dims[1]};
    if ((s = spc_level_add_array(a, "pos", spc_itype_for(nnz), 2, z->e)))
      return spc_cnt_err(z->e, s, z->path, NULL, "out of memory");
    spc_arr_set(&a->arr[0], 0, 0);
    spc_arr_set(&a->arr[0], 1, nnz);
    if ((s = read_index(z, "row.npy", a, "crd", nnz))) return s;
    return read_index(z, "col.npy", b, "crd", nnz);
  }
  int outer = fmt[2] == 'r' ? 0 : 1; /* csr: rows outside */
  spc_level *a = &t->lv[0], *b = &t->lv[1];
  *a = (spc_level){.fmt = &spc_level_dense, .dim = outer, .size = t->dims[outer]};
  *b = (spc_level){.fmt = &spc_level_compressed, .dim = 1 - outer,
                   .size = t->dims[1 - outer]};
  if ((s = read_index(z, "indptr.npy", b, "pos", t->dims[outer] + 1))) return s;
  return read_index(z, "indices.npy", b, "crd", nnz);
}

spc_status spc_npz_read(const char *path, const spc_read_opts *o,
                        spc_tensor **out, spc_error *e) {
  zfile *z = NULL;
  spc_tensor *t = NULL;
  spc_status s = SPC_OK;
  char fmt[16];
  int64_t dims[2];
  if (!out || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no output or no path");
  *out = NULL;
  if (!(z = spc_calloc(1, sizeof *z)))
    return spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
  z->path = path;
  z->e = e;
  if (!(z->f = fopen(path, "rb"))) {
    s = spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
    goto done;
  }
  if ((s = zf_open(z)) || (s = read_format(z, fmt, sizeof fmt))) goto done;
  static const char *const kinds[] = {"coo", "csr", "csc"};
  const char *kind = NULL;
  for (int i = 0; i < 3; i++)
    if (!strcmp(fmt, kinds[i])) kind = kinds[i];
  if (!kind) {
    s = spc_cnt_err(e, SPC_ERR_UNSUPPORTED, path, "format.npy",
                    "npz format '%s' is not supported (coo, csr, csc)", fmt);
    goto done;
  }
  if ((s = read_shape(z, dims)) || (s = read_data(z, dims, kind, &t)) ||
      (s = read_levels(z, t, kind)) || (s = spc_cnt_validate(t, path, e)))
    goto done;
  s = spc_cnt_finish(&t, path, o, e);
done:
  if (z->f) fclose(z->f);
  spc_free(z);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}
