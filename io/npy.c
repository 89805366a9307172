/* npy.c -- .npy arrays inside an npz: writing headers, parsing and
 * checking them, converting element data on read. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "npz_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing .npy headers ---------------------------------------------- */

/* A .npy (version 1.0) header for a 1-d array of n (n < 0: 0-d) elements;
 * padded so the data starts at a multiple of 64 bytes.  buf >= 128. */
size_t spc_cnt_npy_header(unsigned char *buf, const char *descr, int64_t n) {
  return n < 0 ? spc_cnt_npy_header_nd(buf, descr, 0, NULL) : spc_cnt_npy_header_nd(buf, descr, 1, &n);
}

size_t spc_cnt_npy_header_nd(unsigned char *buf, const char *descr, int ndim,
                             const int64_t *dims) {
  char dict[112], shape[72];
  int m = snprintf(shape, sizeof shape, "(");
  for (int d = 0; d < ndim && d < 3; d++)
    m += snprintf(shape + m, sizeof shape - (size_t)m, d ? " %lld," : "%lld,", (long long)dims[d]);
  if (ndim > 1) m--; /* (a,) for one dimension, (a, b) for more */
  snprintf(shape + m, sizeof shape - (size_t)m, ")");
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

const char *spc_cnt_npy_descr(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return "<i8";
  case SPC_U64: return "<u8";
  case SPC_F32: return "<f4";
  case SPC_C128: return "<c16";
  default: return "<f8"; /* float64, and pattern as 1.0s */
  }
}

/* ---- reading .npy headers ---------------------------------------------- */

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
  if (h->ndim > 1 && fortran)
    return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, key,
                       "a %d-dimensional array in Fortran order", h->ndim);
  h->count = 1;
  for (int i = 0; i < h->ndim; i++) {
    if (shape[i] < 0) goto bad;
    h->shape[i] = shape[i];
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
spc_status spc_cnt_npy_open(zfile *z, const char *name, zr *r, npy *h) {
  unsigned char pre[12];
  char *text = NULL;
  spc_status s;
  memset(h, 0, sizeof *h);
  if ((s = spc_cnt_zr_open(z, name, r))) return s;
  if ((s = spc_cnt_zr_read(r, pre, 8))) return s;
  if (memcmp(pre, "\x93NUMPY", 6))
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "not a .npy array");
  if (pre[6] < 1 || pre[6] > 3)
    return spc_cnt_err(z->e, SPC_ERR_UNSUPPORTED, z->path, name,
                       ".npy version %d", pre[6]);
  int wide = pre[6] > 1;
  if ((s = spc_cnt_zr_read(r, pre + 8, wide ? 4 : 2))) return s;
  uint32_t hlen = wide ? get32(pre + 8) : get16(pre + 8);
  if (hlen > (1u << 20))
    return spc_cnt_err(z->e, SPC_ERR_INPUT, z->path, name, "header of %u bytes", hlen);
  if (!(text = spc_malloc(hlen + 1u)))
    return spc_cnt_err(z->e, SPC_ERR_NOMEM, z->path, name, "out of memory");
  if (!(s = spc_cnt_zr_read(r, text, hlen))) s = npy_dict(z, name, text, hlen, h);
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

bool spc_cnt_is_int(const npy *h) {
  return (h->kind == 'i' || h->kind == 'u' || h->kind == 'b') &&
         (h->isz == 1 || h->isz == 2 || h->isz == 4 || h->isz == 8);
}

/* Read the data of r (h->count elements) converted: integers to int64,
 * complex64 to complex128. */
spc_status spc_cnt_read_conv(zr *r, const npy *h, void *dst) {
  zfile *z = r->zf;
  size_t per = CHUNK / (size_t)h->isz;
  spc_status s;
  for (int64_t i = 0; i < h->count;) {
    size_t k = (uint64_t)(h->count - i) < per ? (size_t)(h->count - i) : per;
    if ((s = spc_cnt_zr_read(r, z->tmp, (uint64_t)k * (uint64_t)h->isz))) return s;
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
        case 1: v = h->kind == 'i' ? (int8_t)b[0] : h->kind == 'b' ? b[0] != 0 : b[0]; break;
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
