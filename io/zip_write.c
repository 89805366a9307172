/* zip_write.c -- writing a zip archive: stored or deflated entries, ZIP64
 * records where sizes or offsets reach 4 GiB. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "npz_internal.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

int spc_npz_force_zip64 = 0;

/* ======================================================================
 * Writing
 * ====================================================================== */

static spc_status zw_put(zwriter *w, const void *p, size_t n, const char *key) {
  if (n && fwrite(p, 1, n, w->f) != n)
    return spc_cnt_err(w->e, SPC_ERR_IO, w->path, key, "write failed: %s",
                       strerror(errno));
  return SPC_OK;
}

/* Piece of the data at offset off (at most CHUNK bytes for ones; 4 MiB
 * of an array in a temporary file, whose pages piece_done gives back). */
static size_t src_piece(const zsrc *s, uint64_t off, const unsigned char **p,
                        const unsigned char *ones) {
  uint64_t left = s->nbytes - off;
  uint64_t lim = s->ones ? CHUNK : spc_map_owns(s->data) ? (4u << 20) : (1u << 30);
  *p = s->ones ? ones : (const unsigned char *)s->data + off;
  return (size_t)(left < lim ? left : lim);
}

static void piece_done(const zsrc *s) {
  if (!s->ones) spc_map_drop(s->data);
}

static uint32_t src_crc(const zsrc *s, const unsigned char *ones) {
  uLong c = crc32_z(0, s->hdr, s->hlen);
  const unsigned char *p;
  for (uint64_t off = 0; off < s->nbytes;) {
    size_t k = src_piece(s, off, &p, ones);
    c = crc32_z(c, p, k);
    piece_done(s);
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
        if (off) piece_done(s); /* deflate took the last piece whole */
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
  if (s->nbytes) piece_done(s);
  return st;
}

/* Append one entry. */
spc_status spc_cnt_zw_entry(zwriter *w, const char *name, const zsrc *s,
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
      piece_done(s);
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
spc_status spc_cnt_zw_finish(zwriter *w) {
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
