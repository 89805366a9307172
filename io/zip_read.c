/* zip_read.c -- reading a zip archive: the central directory (ZIP64
 * included), and each entry's bytes checked against size and crc32. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "npz_internal.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ======================================================================
 * Reading
 * ====================================================================== */

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
spc_status spc_cnt_zf_open(zfile *z) {
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

spc_status spc_cnt_zr_open(zfile *z, const char *name, zr *r) {
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
spc_status spc_cnt_zr_read(zr *r, void *dst, uint64_t n) {
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
spc_status spc_cnt_zr_close(zr *r, spc_status s) {
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
