/* io_bsp.c -- binsparse v0.1 containers in HDF5 (.bsp.h5).
 *
 * Write: the root attribute "binsparse" holds {"binsparse": {version,
 * format, shape, number_of_stored_values, data_types[, structure]}}; the
 * root datasets are named as the spec names them: COO/COOC (indices_0,
 * indices_1, values), CSR/CSC (pointers_to_1, indices_1, values),
 * DCSR/DCSC (indices_0, pointers_to_1, indices_1, values).  Any other stack
 * of dense, compressed and singleton levels without a coordinate remapping
 * (order-N COO, CSF, ...) is a binsparse custom format: nested {"level":
 * "dense"|"sparse", "rank": r, "subformat": ...} dicts ending in
 * {"level": "element"}, a compressed level with the singletons below it
 * being one sparse level of rank 1 + #singletons, and "swizzle" (in the
 * outermost format dict) giving the dimension of each level when they are
 * not in order.  Index datasets keep our width (int32 / int64).  Values:
 * int64, uint64, float32, float64; complex128 as the compound {r, i} that
 * h5py reads as complex128 ("complex[float64]"); pattern as a full uint8
 * array of ones typed "bint8" (the spec's boolean), with "value_type":
 * "pattern" in our own attribute so we read it back as pattern.  Dense
 * tensors are written as COO without their explicit zeros.
 *
 * The root attribute "spconv" (JSON) records our format name, value type,
 * symmetry and, per level, the level format, dim, size and the dataset of
 * each level array.  Formats binsparse cannot express (level formats other
 * than dense / compressed / singleton, or formats with a remapping) are
 * written with it alone: datasets "level<L>_<name>" and "values".  The root
 * attribute "spconv_spec" is reserved for the format's YAML spec.
 *
 * Every non-empty dataset is chunked (up to 2^20 elements) with HDF5's
 * Fletcher32 checksum, so corrupt data fails on read.  Reads go straight
 * into the tensor's arrays (H5Dread with our width as the memory type),
 * then the structure is validated before anything iterates it.  HDF5's
 * automatic error printing is off during our calls; its innermost message
 * is appended to ours. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spc_containers.h"
#include <hdf5.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BSP_VERSION "0.1"
#define BSP_CHUNK ((hsize_t)1 << 20) /* elements per chunk, at most */
#define DSET_MAX 64                  /* dataset names, with the NUL */

/* ======================================================================
 * JSON: a growing output buffer and a small DOM parser
 * ====================================================================== */

typedef struct jb {
  char *s;
  size_t n, cap;
  bool oom;
} jb;

static void jb_add(jb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_add(jb *b, const char *fmt, ...) {
  while (!b->oom) {
    size_t room = b->cap - b->n;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) break;
    if (b->s && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + (size_t)k + 1) nc *= 2;
    char *p = spc_realloc(b->s, nc);
    if (!p) break;
    b->s = p;
    b->cap = nc;
  }
  b->oom = true;
}

/* A JSON string literal. */
static void jb_str(jb *b, const char *s) {
  jb_add(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') jb_add(b, "\\%c", c);
    else if (c < 0x20) jb_add(b, "\\u%04x", c);
    else jb_add(b, "%c", c);
  }
  jb_add(b, "\"");
}

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
  int type;
  bool b, isint;
  int64_t i;
  double d;
  char *s;   /* J_STR */
  char *key; /* member name inside an object */
  struct jv *kid, *next;
} jv;

typedef struct jp {
  const char *p, *end;
  int depth;
  bool oom;
} jp;

static void jv_free(jv *v) {
  while (v) {
    jv *n = v->next;
    jv_free(v->kid);
    spc_free(v->s);
    spc_free(v->key);
    spc_free(v);
    v = n;
  }
}

static void jws(jp *p) {
  while (p->p < p->end && (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r'))
    p->p++;
}

static bool jat(jp *p, char c) { return p->p < p->end && *p->p == c; }

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool j4hex(jp *p, unsigned *u) {
  *u = 0;
  for (int i = 0; i < 4; i++) {
    int h = p->p < p->end ? hexval(*p->p) : -1;
    if (h < 0) return false;
    *u = *u << 4 | (unsigned)h;
    p->p++;
  }
  return true;
}

static void jb_utf8(jb *b, unsigned u) {
  if (u < 0x80) jb_add(b, "%c", (char)u);
  else if (u < 0x800) jb_add(b, "%c%c", (char)(0xC0 | u >> 6), (char)(0x80 | (u & 63)));
  else if (u < 0x10000)
    jb_add(b, "%c%c%c", (char)(0xE0 | u >> 12), (char)(0x80 | (u >> 6 & 63)),
           (char)(0x80 | (u & 63)));
  else
    jb_add(b, "%c%c%c%c", (char)(0xF0 | u >> 18), (char)(0x80 | (u >> 12 & 63)),
           (char)(0x80 | (u >> 6 & 63)), (char)(0x80 | (u & 63)));
}

/* A string at p (on its opening quote); NULL when malformed or no memory. */
static char *jstr(jp *p) {
  jb b = {0};
  p->p++;
  jb_add(&b, "%s", "");
  while (!b.oom && p->p < p->end && *p->p != '"') {
    unsigned char c = (unsigned char)*p->p++;
    unsigned u, lo;
    if (c < 0x20) goto bad;
    if (c != '\\') {
      jb_add(&b, "%c", c);
      continue;
    }
    if (p->p >= p->end) goto bad;
    switch (c = (unsigned char)*p->p++) {
    case '"': case '\\': case '/': jb_add(&b, "%c", c); break;
    case 'b': jb_add(&b, "\b"); break;
    case 'f': jb_add(&b, "\f"); break;
    case 'n': jb_add(&b, "\n"); break;
    case 'r': jb_add(&b, "\r"); break;
    case 't': jb_add(&b, "\t"); break;
    case 'u':
      if (!j4hex(p, &u) || !u) goto bad;
      if (u >= 0xD800 && u < 0xDC00 && p->end - p->p >= 6 && p->p[0] == '\\' &&
          p->p[1] == 'u') {
        p->p += 2;
        if (!j4hex(p, &lo) || lo < 0xDC00 || lo >= 0xE000) goto bad;
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      }
      jb_utf8(&b, u);
      break;
    default: goto bad;
    }
  }
  if (b.oom || !jat(p, '"')) goto bad;
  p->p++;
  return b.s;
bad:
  p->oom |= b.oom;
  spc_free(b.s);
  return NULL;
}

static bool jword(jp *p, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(p->end - p->p) < n || memcmp(p->p, w, n)) return false;
  p->p += n;
  return true;
}

static bool jnum(jp *p, jv *v) {
  const char *s = p->p;
  bool neg = jat(p, '-');
  uint64_t m = 0;
  v->isint = true;
  if (neg) p->p++;
  if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
  while (p->p < p->end && *p->p >= '0' && *p->p <= '9') {
    unsigned dgt = (unsigned)(*p->p++ - '0');
    if (m > (UINT64_MAX - dgt) / 10) v->isint = false;
    else m = m * 10 + dgt;
  }
  if (jat(p, '.')) {
    v->isint = false;
    p->p++;
    if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
    while (p->p < p->end && *p->p >= '0' && *p->p <= '9') p->p++;
  }
  if (jat(p, 'e') || jat(p, 'E')) {
    v->isint = false;
    p->p++;
    if (jat(p, '+') || jat(p, '-')) p->p++;
    if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
    while (p->p < p->end && *p->p >= '0' && *p->p <= '9') p->p++;
  }
  if (v->isint && m > (uint64_t)INT64_MAX + neg) v->isint = false;
  if (v->isint) v->i = neg ? (int64_t)(0 - m) : (int64_t)m;
  v->d = strtod(s, NULL); /* the text is NUL-terminated past p->end */
  v->type = J_NUM;
  return true;
}

static jv *jval(jp *p) {
  jws(p);
  if (p->p >= p->end || p->depth >= 64) return NULL;
  jv *v = spc_calloc(1, sizeof *v);
  if (!v) {
    p->oom = true;
    return NULL;
  }
  p->depth++;
  char c = *p->p;
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    jv **tail = &v->kid;
    v->type = c == '{' ? J_OBJ : J_ARR;
    p->p++;
    jws(p);
    if (jat(p, close)) p->p++;
    else
      for (;;) {
        char *key = NULL;
        if (v->type == J_OBJ) {
          jws(p);
          if (!jat(p, '"') || !(key = jstr(p))) goto bad;
          jws(p);
          if (!jat(p, ':')) {
            spc_free(key);
            goto bad;
          }
          p->p++;
        }
        jv *k = jval(p);
        if (!k) {
          spc_free(key);
          goto bad;
        }
        k->key = key;
        *tail = k;
        tail = &k->next;
        jws(p);
        if (jat(p, ',')) {
          p->p++;
          continue;
        }
        if (!jat(p, close)) goto bad;
        p->p++;
        break;
      }
  } else if (c == '"') {
    v->type = J_STR;
    if (!(v->s = jstr(p))) goto bad;
  } else if (jword(p, "true") || jword(p, "false")) {
    v->type = J_BOOL;
    v->b = p->p[-1] == 'e' && p->p[-2] == 'u';
  } else if (jword(p, "null")) {
    v->type = J_NULL;
  } else if (!jnum(p, v)) {
    goto bad;
  }
  p->depth--;
  return v;
bad:
  jv_free(v);
  return NULL;
}

/* Parse NUL-terminated text; NULL when it is not one JSON value (*oom:
 * because memory ran out). */
static jv *json_parse(const char *s, bool *oom) {
  jp p = {s, s + strlen(s), 0, false};
  jv *v = jval(&p);
  jws(&p);
  if (v && p.p != p.end) {
    jv_free(v);
    v = NULL;
  }
  *oom = p.oom;
  return v;
}

static const jv *jget(const jv *o, const char *key) {
  if (!o || o->type != J_OBJ) return NULL;
  for (const jv *k = o->kid; k; k = k->next)
    if (!strcmp(k->key, key)) return k;
  return NULL;
}

static const char *jgets(const jv *o, const char *key) {
  const jv *v = jget(o, key);
  return v && v->type == J_STR ? v->s : NULL;
}

static bool jgeti(const jv *o, const char *key, int64_t *x) {
  const jv *v = jget(o, key);
  if (!v || v->type != J_NUM || !v->isint) return false;
  *x = v->i;
  return true;
}

static int jlen(const jv *a) {
  int n = 0;
  for (const jv *k = a && a->type == J_ARR ? a->kid : NULL; k; k = k->next) n++;
  return n;
}

/* ======================================================================
 * HDF5 plumbing
 * ====================================================================== */

typedef struct h5c {
  const char *path;
  spc_error *e;
  hid_t f;
  bool compress;
  H5E_auto2_t old_fn;
  void *old_data;
} h5c;

/* HDF5 prints its error stack by default: off for the duration of a call
 * into this file, then restored. */
static void h5_quiet(h5c *c) {
  c->old_fn = NULL;
  c->old_data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &c->old_fn, &c->old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5_restore(h5c *c) {
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, c->old_fn, c->old_data);
}

static herr_t h5_walk(unsigned n, const H5E_error2_t *d, void *data) {
  if (n == 0 && d->desc) snprintf(data, 160, "%s", d->desc);
  return 0;
}

/* Fail naming key, with HDF5's innermost message appended. */
static spc_status h5_fail(h5c *c, spc_status code, const char *key,
                          const char *what) {
  char h[160] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, h);
  H5Eclear2(H5E_DEFAULT);
  return spc_cnt_err(c->e, code, c->path, key, "%s%s%s", what, h[0] ? ": " : "", h);
}

static spc_status nomem(h5c *c) {
  return spc_cnt_err(c->e, SPC_ERR_NOMEM, c->path, NULL, "out of memory");
}

#define H5CLOSE(fn, id) \
  do {                  \
    if ((id) >= 0) fn(id); \
    (id) = H5I_INVALID_HID; \
  } while (0)

/* Dataset name: letters, digits and '_' (no path separators). */
static bool dset_name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || n >= DSET_MAX) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* ---- writing ------------------------------------------------------------ */

/* n uint8 ones, written a chunk at a time. */
static spc_status wr_ones(h5c *c, hid_t d, int64_t n, const char *name) {
  hsize_t k = (hsize_t)n < BSP_CHUNK ? (hsize_t)n : BSP_CHUNK;
  unsigned char *ones = spc_malloc((size_t)k);
  hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
  spc_status s = SPC_OK;
  if (!ones) return nomem(c);
  memset(ones, 1, (size_t)k);
  if ((fs = H5Dget_space(d)) < 0) s = h5_fail(c, SPC_ERR_IO, name, "cannot write");
  for (hsize_t off = 0; !s && off < (hsize_t)n; off += k) {
    hsize_t cnt = (hsize_t)n - off < k ? (hsize_t)n - off : k;
    if ((ms = H5Screate_simple(1, &cnt, NULL)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL) < 0 ||
        H5Dwrite(d, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, ones) < 0)
      s = h5_fail(c, SPC_ERR_IO, name, "cannot write");
    H5CLOSE(H5Sclose, ms);
  }
  H5CLOSE(H5Sclose, fs);
  spc_free(ones);
  return s;
}

/* A 1-d dataset of n elements: file type ftype, memory type mtype, from
 * data (NULL: uint8 ones).  Chunked with Fletcher32 when non-empty. */
static spc_status wr_dset(h5c *c, const char *name, hid_t ftype, hid_t mtype,
                          int64_t n, const void *data) {
  hid_t sp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, d = H5I_INVALID_HID;
  /* chunks of at most BSP_CHUNK elements, evened out so the last one is
   * nearly full (HDF5 stores an edge chunk at full size) */
  hsize_t dims = (hsize_t)n, nch = (dims + BSP_CHUNK - 1) / BSP_CHUNK;
  hsize_t ch = nch ? (dims + nch - 1) / nch : 0;
  spc_status s = SPC_OK;
  if ((sp = H5Screate_simple(1, &dims, NULL)) < 0 ||
      (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0) {
    s = h5_fail(c, SPC_ERR_IO, name, "cannot create dataset");
    goto done;
  }
  if (n > 0 && (H5Pset_chunk(dcpl, 1, &ch) < 0 ||
                (c->compress && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0)) ||
                H5Pset_fletcher32(dcpl) < 0)) {
    s = h5_fail(c, SPC_ERR_IO, name, "cannot set dataset filters");
    goto done;
  }
  if ((d = H5Dcreate2(c->f, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0) {
    s = h5_fail(c, SPC_ERR_IO, name, "cannot create dataset");
    goto done;
  }
  if (n > 0) {
    if (!data) s = wr_ones(c, d, n, name);
    else if (H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      s = h5_fail(c, SPC_ERR_IO, name, "cannot write dataset");
  }
done:
  H5CLOSE(H5Dclose, d);
  H5CLOSE(H5Pclose, dcpl);
  H5CLOSE(H5Sclose, sp);
  return s;
}

/* A scalar UTF-8 string attribute on the root. */
static spc_status wr_attr(h5c *c, const char *name, const char *text) {
  hid_t ty = H5I_INVALID_HID, sp = H5I_INVALID_HID, a = H5I_INVALID_HID;
  spc_status s = SPC_OK;
  if ((ty = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(ty, strlen(text) + 1) < 0 ||
      H5Tset_strpad(ty, H5T_STR_NULLTERM) < 0 || H5Tset_cset(ty, H5T_CSET_UTF8) < 0 ||
      (sp = H5Screate(H5S_SCALAR)) < 0 ||
      (a = H5Acreate2(c->f, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      H5Awrite(a, ty, text) < 0)
    s = h5_fail(c, SPC_ERR_IO, name, "cannot write attribute");
  H5CLOSE(H5Aclose, a);
  H5CLOSE(H5Sclose, sp);
  H5CLOSE(H5Tclose, ty);
  return s;
}

/* ---- reading ------------------------------------------------------------ */

/* The text of a scalar string attribute (fixed or variable length), owned
 * by the caller; *out = NULL when a is not a string. */
static spc_status rd_attr_text(h5c *c, hid_t a, const char *name, char **out) {
  hid_t ft = H5I_INVALID_HID, mt = H5I_INVALID_HID, sp = H5I_INVALID_HID;
  spc_status s = SPC_OK;
  *out = NULL;
  if ((ft = H5Aget_type(a)) < 0 || (sp = H5Aget_space(a)) < 0) {
    s = h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
    goto done;
  }
  if (H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) goto done;
  if (H5Tis_variable_str(ft) > 0) {
    char *v = NULL;
    if ((mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
        H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || H5Aread(a, mt, &v) < 0) {
      s = h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
      goto done;
    }
    size_t n = v ? strlen(v) : 0;
    if ((*out = spc_malloc(n + 1))) {
      memcpy(*out, v ? v : "", n);
      (*out)[n] = 0;
    }
    H5free_memory(v);
  } else {
    size_t n = H5Tget_size(ft);
    if (!n || n > ((size_t)1 << 30)) {
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "bad string attribute");
      goto done;
    }
    if ((*out = spc_malloc(n + 1))) {
      if (H5Aread(a, ft, *out) < 0) {
        s = h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
        spc_free(*out);
        *out = NULL;
        goto done;
      }
      (*out)[n] = 0;
    }
  }
  if (!*out) s = nomem(c);
done:
  H5CLOSE(H5Tclose, mt);
  H5CLOSE(H5Tclose, ft);
  H5CLOSE(H5Sclose, sp);
  return s;
}

/* Root attribute name parsed as JSON; *out = NULL when absent. */
static spc_status rd_json_attr(h5c *c, const char *name, jv **out) {
  char *text = NULL;
  hid_t a;
  spc_status s = SPC_OK;
  *out = NULL;
  htri_t ex = H5Aexists(c->f, name);
  if (ex < 0) return h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
  if (!ex) return SPC_OK;
  if ((a = H5Aopen(c->f, name, H5P_DEFAULT)) < 0)
    return h5_fail(c, SPC_ERR_INPUT, name, "cannot open attribute");
  bool oom = false;
  s = rd_attr_text(c, a, name, &text);
  H5Aclose(a);
  if (s) return s;
  if (!text || !(*out = json_parse(text, &oom)))
    s = oom ? nomem(c)
            : spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "attribute is not JSON text");
  spc_free(text);
  return s;
}

/* Scan root attributes for JSON with a top-level "binsparse" key. */
typedef struct scan { h5c *c; jv *found; spc_status s; } scan;

static herr_t scan_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  scan *sc = data;
  char *text = NULL;
  jv *v = NULL;
  (void)info;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return 0;
  sc->s = rd_attr_text(sc->c, a, name, &text);
  H5Aclose(a);
  if (sc->s == SPC_ERR_NOMEM) return -1;
  sc->s = SPC_OK;
  bool oom = false;
  if (text && (v = json_parse(text, &oom)) && jget(v, "binsparse")) {
    sc->found = v;
    v = NULL;
  }
  jv_free(v);
  spc_free(text);
  if (oom) {
    sc->s = nomem(sc->c);
    return -1;
  }
  return sc->found ? 1 : 0;
}

/* Open a 1-d dataset and get its length. */
static spc_status ds_open(h5c *c, const char *name, hid_t *d, int64_t *n) {
  hid_t sp = H5I_INVALID_HID;
  hsize_t dims[1];
  *d = H5I_INVALID_HID;
  htri_t ex = H5Lexists(c->f, name, H5P_DEFAULT);
  if (ex <= 0)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "dataset %s is missing", name);
  if ((*d = H5Dopen2(c->f, name, H5P_DEFAULT)) < 0)
    return h5_fail(c, SPC_ERR_INPUT, name, "cannot open dataset");
  if ((sp = H5Dget_space(*d)) < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
      H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || dims[0] > (hsize_t)INT64_MAX) {
    H5CLOSE(H5Sclose, sp);
    H5CLOSE(H5Dclose, *d);
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name,
                       "dataset %s is not a one-dimensional array", name);
  }
  H5Sclose(sp);
  *n = (int64_t)dims[0];
  return SPC_OK;
}

static spc_status ds_len(h5c *c, const char *name, int64_t *n) {
  hid_t d;
  spc_status s = ds_open(c, name, &d, n);
  H5CLOSE(H5Dclose, d);
  return s;
}

/* Integer dataset name -> a new array `aname` of lv, 32-bit when the file's
 * type fits, else 64-bit; unsigned 64-bit values are checked. */
static spc_status rd_index(h5c *c, const char *name, spc_level *lv, const char *aname) {
  hid_t d, ft = H5I_INVALID_HID;
  int64_t n;
  spc_status s = ds_open(c, name, &d, &n);
  if (s) return s;
  if ((ft = H5Dget_type(d)) < 0 || H5Tget_class(ft) != H5T_INTEGER) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "dataset %s is not integer", name);
    goto done;
  }
  size_t sz = H5Tget_size(ft);
  bool sgn = H5Tget_sign(ft) == H5T_SGN_2;
  bool narrow = sgn ? sz <= 4 : sz <= 2, u64 = !sgn && sz > 4;
  if ((s = spc_level_add_array(lv, aname, narrow ? SPC_IDX32 : SPC_IDX64, n, c->e))) {
    s = nomem(c);
    goto done;
  }
  spc_array *a = &lv->arr[lv->narr - 1];
  hid_t mt = narrow ? H5T_NATIVE_INT32 : u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
  if (n > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, a->data) < 0) {
    s = h5_fail(c, SPC_ERR_INPUT, name, "cannot read dataset (corrupt or truncated file)");
    goto done;
  }
  for (int64_t i = 0; u64 && i < n; i++)
    if (((const int64_t *)a->data)[i] < 0) {
      s = spc_cnt_err(c->e, SPC_ERR_OVERFLOW, c->path, name,
                      "element %lld exceeds the int64 range", (long long)i);
      goto done;
    }
done:
  H5CLOSE(H5Tclose, ft);
  H5CLOSE(H5Dclose, d);
  return s;
}

/* ======================================================================
 * The plan: levels, and the dataset holding each level array
 * ====================================================================== */

typedef struct plevel {
  const spc_level_format *fmt;
  int dim;
  int64_t size;
  /* dataset of fmt->arrays[i]; "" for a root compressed level's pos,
   * which binsparse omits (it is {0, length of crd}) */
  char dset[SPC_LEVEL_MAX_ARRAYS][DSET_MAX];
} plevel;

typedef struct plan {
  int order, nlevels;
  int64_t dims[SPC_MAX_ORDER];
  plevel lv[SPC_MAX_ORDER];
  const char *format;   /* our format name */
  bool bsp;             /* binsparse can describe it */
  spc_vtype vt;         /* write: the tensor's; read: from spconv */
  spc_symmetry sym;
  int tri;              /* structure: 1 lower, 2 upper triangle stored */
  bool pattern, iso, cpairs; /* read: values modifiers */
  bool have_nsv;
  int64_t nsv;          /* number_of_stored_values */
} plan;

/* Formats made of plain level stacks, no coordinate remapping: the ones
 * binsparse may describe.  "levels" names other such stacks read back. */
static const char *const plain_formats[] = {"coo", "csr",  "csc",    "dcsr",
                                            "dcsc", "csf", "dense", "levels"};

static const spc_level_format *const level_formats[] = {
    &spc_level_dense, &spc_level_compressed, &spc_level_singleton};

static const spc_level_format *level_format_find(const char *name) {
  for (size_t i = 0; i < sizeof level_formats / sizeof *level_formats; i++)
    if (!strcmp(level_formats[i]->name, name)) return level_formats[i];
  return NULL;
}

/* A format name that lives as long as the process (tensors hold static
 * names): the built-in names, or a copy kept in a small pool. */
static const char *format_intern(const char *name) {
  static char pool[32][32];
  static int n;
  for (size_t i = 0; i < sizeof plain_formats / sizeof *plain_formats; i++)
    if (!strcmp(plain_formats[i], name)) return plain_formats[i];
  for (int i = 0; i < n; i++)
    if (!strcmp(pool[i], name)) return pool[i];
  if (n == 32 || strlen(name) >= sizeof pool[0]) return NULL;
  snprintf(pool[n], sizeof pool[n], "%s", name);
  return pool[n++];
}

static int array_index(const spc_level_format *f, const char *name) {
  for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++)
    if (!strcmp(f->arrays[i], name)) return i;
  return -1;
}

/* Binsparse dataset names of level l's arrays: pointers_to_l (none at the
 * root) and indices_l. */
static void bsp_dset_names(plevel *q, int l) {
  int pos = array_index(q->fmt, "pos"), crd = array_index(q->fmt, "crd");
  memset(q->dset, 0, sizeof q->dset);
  if (pos >= 0 && l) snprintf(q->dset[pos], DSET_MAX, "pointers_to_%d", l);
  if (crd >= 0) snprintf(q->dset[crd], DSET_MAX, "indices_%d", l);
}

/* Binsparse names for t's level arrays; false when binsparse cannot
 * describe t. */
static bool plan_bsp_names(const spc_tensor *t, plan *p) {
  bool plain = false;
  unsigned seen = 0;
  for (size_t i = 0; i < sizeof plain_formats / sizeof *plain_formats; i++)
    plain |= !strcmp(t->format, plain_formats[i]);
  if (!plain || t->nlevels != t->order) return false;
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level *lv = &t->lv[l];
    plevel *q = &p->lv[l];
    if (lv->dim < 0 || lv->dim >= t->order || (seen >> lv->dim & 1) ||
        lv->size != t->dims[lv->dim])
      return false;
    seen |= 1u << lv->dim;
    if (lv->fmt == &spc_level_singleton && (!l || t->lv[l - 1].fmt == &spc_level_dense))
      return false;
    if (lv->fmt != &spc_level_dense && lv->fmt != &spc_level_compressed &&
        lv->fmt != &spc_level_singleton)
      return false;
    bsp_dset_names(q, l);
  }
  return true;
}

static spc_status plan_from_tensor(const spc_tensor *t, plan *p) {
  memset(p, 0, sizeof *p);
  p->order = t->order;
  p->nlevels = t->nlevels;
  memcpy(p->dims, t->dims, sizeof p->dims);
  p->format = t->format;
  p->vt = t->vt;
  p->sym = t->sym;
  for (int l = 0; l < t->nlevels; l++) {
    p->lv[l].fmt = t->lv[l].fmt;
    p->lv[l].dim = t->lv[l].dim;
    p->lv[l].size = t->lv[l].size;
  }
  p->bsp = plan_bsp_names(t, p);
  if (p->bsp) return SPC_OK;
  for (int l = 0; l < t->nlevels; l++) {
    const spc_level_format *f = t->lv[l].fmt;
    memset(p->lv[l].dset, 0, sizeof p->lv[l].dset);
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++)
      snprintf(p->lv[l].dset[i], DSET_MAX, "level%d_%s", l, f->arrays[i]);
  }
  return SPC_OK;
}

/* The spec's name for an order-2 layout, or NULL for a custom format. */
static const char *bsp_predefined(const plan *p) {
  if (p->order != 2) return NULL;
  const spc_level_format *a = p->lv[0].fmt, *b = p->lv[1].fmt;
  bool rows = p->lv[0].dim == 0;
  if (a == &spc_level_compressed && b == &spc_level_singleton) return rows ? "COO" : "COOC";
  if (a == &spc_level_dense && b == &spc_level_compressed) return rows ? "CSR" : "CSC";
  if (a == &spc_level_compressed && b == &spc_level_compressed) return rows ? "DCSR" : "DCSC";
  return NULL;
}

static const char *vt_bsp_name(spc_vtype vt) {
  switch (vt) {
  case SPC_I64: return "int64";
  case SPC_U64: return "uint64";
  case SPC_F32: return "float32";
  case SPC_F64: return "float64";
  case SPC_C128: return "complex[float64]";
  default: return "bint8";
  }
}

static const char *const structure_names[4][3] = {
    {NULL, NULL, NULL},
    {NULL, "symmetric_lower", "symmetric_upper"},
    {NULL, "skew_symmetric_lower", "skew_symmetric_upper"},
    {NULL, "hermitian_lower", "hermitian_upper"}};

/* The "format" value of a custom binsparse format. */
static void jb_custom_format(jb *b, const plan *p) {
  int open = 0;
  bool ident = true;
  for (int l = 0; l < p->nlevels; l++) ident &= p->lv[l].dim == l;
  for (int l = 0; l < p->nlevels;) {
    int r = 1;
    jb_add(b, "{");
    if (!l && !ident) {
      jb_add(b, "\"swizzle\": [");
      for (int k = 0; k < p->nlevels; k++) jb_add(b, "%s%d", k ? ", " : "", p->lv[k].dim);
      jb_add(b, "], ");
    }
    if (p->lv[l].fmt == &spc_level_dense) {
      jb_add(b, "\"level\": \"dense\", ");
    } else {
      while (l + r < p->nlevels && p->lv[l + r].fmt == &spc_level_singleton) r++;
      jb_add(b, "\"level\": \"sparse\", ");
    }
    jb_add(b, "\"rank\": %d, \"subformat\": ", r);
    l += r;
    open++;
  }
  jb_add(b, "{\"level\": \"element\"}");
  while (open--) jb_add(b, "}");
}

static void jb_shape(jb *b, const plan *p) {
  jb_add(b, "[");
  for (int d = 0; d < p->order; d++) jb_add(b, "%s%lld", d ? ", " : "", (long long)p->dims[d]);
  jb_add(b, "]");
}

/* Index width of each written array, from the tensor. */
static const char *width_name(const spc_tensor *t, int l, int i) {
  const spc_array *a = spc_level_array_c(&t->lv[l], t->lv[l].fmt->arrays[i]);
  return a && a->type == SPC_IDX32 ? "int32" : "int64";
}

static void jb_binsparse(jb *b, const plan *p, const spc_tensor *t, int64_t nsv) {
  const char *pre = bsp_predefined(p);
  jb_add(b, "{\"binsparse\": {\"version\": \"" BSP_VERSION "\", \"format\": ");
  if (pre) jb_str(b, pre);
  else jb_custom_format(b, p);
  jb_add(b, ", \"shape\": ");
  jb_shape(b, p);
  jb_add(b, ", \"number_of_stored_values\": %lld, \"data_types\": {", (long long)nsv);
  for (int l = 0; l < p->nlevels; l++)
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS; i++)
      if (p->lv[l].dset[i][0]) {
        jb_str(b, p->lv[l].dset[i]);
        jb_add(b, ": \"%s\", ", width_name(t, l, i));
      }
  jb_add(b, "\"values\": \"%s\"}", vt_bsp_name(p->vt));
  if (p->sym != SPC_GENERAL) jb_add(b, ", \"structure\": \"%s\"", structure_names[p->sym][p->tri]);
  jb_add(b, "}}");
}

static void jb_spconv(jb *b, const plan *p, int64_t nsv) {
  jb_add(b, "{\"format\": ");
  jb_str(b, p->format);
  jb_add(b, ", \"version\": \"" SPCONV_VERSION "\", \"order\": %d, \"shape\": ", p->order);
  jb_shape(b, p);
  jb_add(b, ", \"value_type\": \"%s\", \"symmetry\": \"%s\", "
            "\"number_of_stored_values\": %lld, \"levels\": [",
         spc_vtype_name(p->vt), spc_symmetry_name(p->sym), (long long)nsv);
  for (int l = 0; l < p->nlevels; l++) {
    const spc_level_format *f = p->lv[l].fmt;
    jb_add(b, "%s{\"level_format\": ", l ? ", " : "");
    jb_str(b, f->name);
    jb_add(b, ", \"dim\": %d, \"size\": %lld, \"arrays\": {", p->lv[l].dim,
           (long long)p->lv[l].size);
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i]; i++) {
      jb_add(b, "%s", i ? ", " : "");
      jb_str(b, f->arrays[i]);
      jb_add(b, ": ");
      jb_str(b, p->lv[l].dset[i]);
    }
    jb_add(b, "}}");
  }
  jb_add(b, "]}");
}

/* ======================================================================
 * Writing
 * ====================================================================== */

/* Which triangle an order-2 tensor stores: 1 lower (i >= j), 2 upper,
 * 0 both (no binsparse structure fits); a diagonal counts as lower. */
static spc_status stored_triangle(const spc_tensor *t, int *tri, spc_error *e) {
  spc_iter *it = NULL;
  int64_t x[SPC_MAX_ORDER];
  bool lower = false, upper = false;
  spc_status s = spc_iter_create(t, &it, e);
  if (s) return s;
  while (spc_iter_next(it, x, NULL) && !(lower && upper)) {
    lower |= x[0] > x[1];
    upper |= x[0] < x[1];
  }
  spc_iter_free(&it);
  *tri = lower && upper ? 0 : upper ? 2 : 1;
  return SPC_OK;
}

static hid_t index_ftype(const spc_array *a) {
  return a->type == SPC_IDX32 ? H5T_STD_I32LE : H5T_STD_I64LE;
}
static hid_t index_mtype(const spc_array *a) {
  return a->type == SPC_IDX32 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64;
}

/* Compound {r, i} of doubles: file (little-endian) or memory type. */
static hid_t complex_type(bool file) {
  hid_t c = H5Tcreate(H5T_COMPOUND, 16);
  hid_t d = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
  if (c >= 0 && (H5Tinsert(c, "r", 0, d) < 0 || H5Tinsert(c, "i", 8, d) < 0)) {
    H5Tclose(c);
    c = H5I_INVALID_HID;
  }
  return c;
}

static spc_status wr_values(h5c *c, const spc_tensor *t, int64_t n) {
  hid_t ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
  spc_status s;
  switch (t->vt) {
  case SPC_I64: return wr_dset(c, "values", H5T_STD_I64LE, H5T_NATIVE_INT64, n, t->val);
  case SPC_U64: return wr_dset(c, "values", H5T_STD_U64LE, H5T_NATIVE_UINT64, n, t->val);
  case SPC_F32: return wr_dset(c, "values", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, n, t->val);
  case SPC_F64: return wr_dset(c, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, t->val);
  case SPC_C128:
    if ((ft = complex_type(true)) < 0 || (mt = complex_type(false)) < 0)
      s = h5_fail(c, SPC_ERR_IO, "values", "cannot make the complex type");
    else
      s = wr_dset(c, "values", ft, mt, n, t->val);
    H5CLOSE(H5Tclose, ft);
    H5CLOSE(H5Tclose, mt);
    return s;
  default: return wr_dset(c, "values", H5T_STD_U8LE, H5T_NATIVE_UINT8, n, NULL);
  }
}

static spc_status wr_levels(h5c *c, const spc_tensor *t, const plan *p) {
  spc_status s = SPC_OK;
  for (int l = 0; l < t->nlevels && !s; l++) {
    const spc_level_format *f = t->lv[l].fmt;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && f->arrays[i] && !s; i++) {
      const spc_array *a = spc_level_array_c(&t->lv[l], f->arrays[i]);
      if (!a)
        return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, NULL,
                           "level %d has no %s array", l, f->arrays[i]);
      if (!p->lv[l].dset[i][0]) { /* omitted root pos: must be {0, n} */
        if (a->len != 2 || spc_arr_get(a, 0) != 0)
          return spc_cnt_err(c->e, SPC_ERR_INTERNAL, c->path, NULL,
                             "root pos of level %d is not {0, n}", l);
        continue;
      }
      s = wr_dset(c, p->lv[l].dset[i], index_ftype(a), index_mtype(a), a->len, a->data);
    }
  }
  return s;
}

static spc_status bsp_emit(h5c *c, const spc_tensor *t, const plan *p,
                           const spc_write_opts *o) {
  jb b = {0}, sb = {0};
  int64_t n = spc_tensor_nstored(t);
  spc_status s = wr_levels(c, t, p);
  if (!s && o && o->progress) o->progress(o->progress_ctx, "write", 0.5);
  if (!s) s = wr_values(c, t, n);
  if (!s && p->bsp) jb_binsparse(&b, p, t, n);
  if (!s) jb_spconv(&sb, p, n);
  if (!s && (b.oom || sb.oom)) s = nomem(c);
  if (!s && p->bsp) s = wr_attr(c, "binsparse", b.s);
  if (!s) s = wr_attr(c, "spconv", sb.s);
  if (!s) s = wr_attr(c, "spconv_spec", "");
  spc_free(b.s);
  spc_free(sb.s);
  return s;
}

/* The tensor to write: dense converted to COO without zeros, symmetric
 * storage expanded unless kept (which needs one whole triangle). */
static spc_status write_form(const spc_tensor *t, const spc_write_opts *o,
                             spc_tensor **own, int *tri, spc_error *e) {
  spc_status s;
  bool dense = true;
  *tri = 0;
  for (int l = 0; l < t->nlevels; l++) dense &= t->lv[l].fmt == &spc_level_dense;
  if (dense) {
    if ((s = spc_tensor_to_coo(t, 1, own, e))) return s;
    t = *own;
  }
  if (t->sym == SPC_GENERAL) return SPC_OK;
  if (o && o->keep_symmetry && t->order == 2 && (s = stored_triangle(t, tri, e)))
    return s;
  if (!*tri) {
    spc_tensor *x = NULL;
    if ((s = spc_tensor_expand(t, &x, e))) return s;
    spc_tensor_free(own);
    *own = x;
  }
  return SPC_OK;
}

spc_status spc_bsp_write(const spc_tensor *t, const char *path,
                         const spc_write_opts *o, spc_error *e) {
  h5c c = {.path = path, .e = e, .f = H5I_INVALID_HID};
  spc_tensor *own = NULL;
  hid_t fapl = H5I_INVALID_HID;
  plan *p = NULL;
  int tri = 0;
  if (!t || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no tensor or no path");
  if (t->nlevels < 1 || t->nlevels > SPC_MAX_ORDER)
    return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "tensor has %d levels", t->nlevels);
  spc_status s = write_form(t, o, &own, &tri, e);
  if (s) goto done;
  const spc_tensor *m = own ? own : t;
  if (!(p = spc_malloc(sizeof *p))) {
    s = spc_cnt_err(e, SPC_ERR_NOMEM, path, NULL, "out of memory");
    goto done;
  }
  plan_from_tensor(m, p);
  p->tri = tri;
  c.compress = o && o->gzip > 0;
  h5_quiet(&c);
  if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
      H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0
#if H5_VERSION_GE(1, 10, 7)
      || H5Pset_file_locking(fapl, 1, 1) < 0
#endif
  ) {
    s = h5_fail(&c, SPC_ERR_IO, NULL, "cannot set file properties");
  } else if ((c.f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
    s = h5_fail(&c, SPC_ERR_IO, NULL, "cannot create HDF5 file");
  } else {
    s = bsp_emit(&c, m, p, o);
    if (H5Fclose(c.f) < 0 && !s) s = h5_fail(&c, SPC_ERR_IO, NULL, "cannot close HDF5 file");
  }
  H5CLOSE(H5Pclose, fapl);
  h5_restore(&c);
done:
  spc_free(p);
  spc_tensor_free(&own);
  if (s && e && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  return s;
}

/* ======================================================================
 * Reading
 * ====================================================================== */

/* binsparse levels: kind 'd' (dense) or 's' (sparse) and rank */
typedef struct stack {
  int n;
  char kind[SPC_MAX_ORDER];
  int rank[SPC_MAX_ORDER];
} stack;

static const struct predef {
  const char *name, *kinds;
  int r0;    /* rank of the first level (the others: 1) */
  bool swap; /* swizzle [1, 0] */
} predefined[] = {{"COO", "s", 2, false},   {"COOR", "s", 2, false},
                  {"COOC", "s", 2, true},   {"CSR", "ds", 1, false},
                  {"CSC", "ds", 1, true},   {"DCSR", "ss", 1, false},
                  {"DCSC", "ss", 1, true},  {"DMAT", "dd", 1, false},
                  {"DMATR", "dd", 1, false}, {"DMATC", "dd", 1, true},
                  {"DVEC", "d", 1, false},  {"VEC", "s", 1, false}};

/* The level stack of a "format" value (a name or nested level dicts). */
static spc_status bsp_stack(h5c *c, const jv *fmt, stack *st, bool *swap,
                            bool *cplx, bool *iso) {
  memset(st, 0, sizeof *st);
  *swap = false;
  if (fmt && fmt->type == J_STR) {
    for (size_t i = 0; i < sizeof predefined / sizeof *predefined; i++) {
      const struct predef *d = &predefined[i];
      if (strcmp(d->name, fmt->s)) continue;
      st->n = (int)strlen(d->kinds);
      for (int k = 0; k < st->n; k++) {
        st->kind[k] = d->kinds[k];
        st->rank[k] = k ? 1 : d->r0;
      }
      *swap = d->swap;
      return SPC_OK;
    }
    return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                       "binsparse format '%s' is not supported", fmt->s);
  }
  for (const jv *cur = fmt; cur; cur = jget(cur, "subformat")) {
    const char *lvl = jgets(cur, "level");
    int64_t r = 0;
    if (cur->type != J_OBJ || !lvl) break;
    if (!strcmp(lvl, "element")) return SPC_OK;
    if (!strcmp(lvl, "complex")) *cplx = true;
    else if (!strcmp(lvl, "iso")) *iso = true;
    else if (!strcmp(lvl, "dense") || !strcmp(lvl, "sparse")) {
      if (!jgeti(cur, "rank", &r) || r < 1 || r > SPC_MAX_ORDER || st->n == SPC_MAX_ORDER)
        return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                           "format: bad rank of a %s level", lvl);
      st->kind[st->n] = lvl[0];
      st->rank[st->n++] = (int)r;
    } else {
      return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                         "binsparse level '%s' is not supported", lvl);
    }
  }
  return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                     "format: expected a format name or level dicts ending in "
                     "an element level");
}

static spc_status shape_from(h5c *c, const jv *shape, const char *key, plan *p) {
  int n = jlen(shape);
  if (n < 1 || n > SPC_MAX_ORDER)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, key,
                       "shape: expected 1 to %d dimensions", SPC_MAX_ORDER);
  p->order = n;
  int d = 0;
  for (const jv *k = shape->kid; k; k = k->next, d++) {
    if (k->type != J_NUM || !k->isint || k->i < 0)
      return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, key,
                         "shape: dimension %d is not a non-negative integer", d);
    p->dims[d] = k->i;
  }
  return SPC_OK;
}

/* Swizzle: the dimension of each level, a permutation. */
static spc_status swizzle_from(h5c *c, const jv *swz, bool swap, int *dimof, int order) {
  unsigned seen = 0;
  for (int l = 0; l < order; l++) dimof[l] = swap ? order - 1 - l : l;
  if (!swz) return SPC_OK;
  if (jlen(swz) != order) goto bad;
  int l = 0;
  for (const jv *k = swz->kid; k; k = k->next, l++) {
    if (k->type != J_NUM || !k->isint || k->i < 0 || k->i >= order || (seen >> k->i & 1))
      goto bad;
    seen |= 1u << k->i;
    dimof[l] = (int)k->i;
  }
  return SPC_OK;
bad:
  return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                     "swizzle is not a permutation of the %d dimensions", order);
}

/* Our name for a plain level stack read from another tool. */
static const char *stack_name(const plan *p) {
  const spc_level_format *a = p->lv[0].fmt;
  bool all_c = true, all_d = true, coo = a == &spc_level_compressed;
  for (int l = 0; l < p->nlevels; l++) {
    all_c &= p->lv[l].fmt == &spc_level_compressed;
    all_d &= p->lv[l].fmt == &spc_level_dense;
    if (l) coo &= p->lv[l].fmt == &spc_level_singleton;
  }
  if (coo) return "coo";
  if (all_d) return "dense";
  if (p->order == 2 && a == &spc_level_dense && p->lv[1].fmt == &spc_level_compressed)
    return p->lv[0].dim == 0 ? "csr" : "csc";
  if (p->order == 2 && all_c) return p->lv[0].dim == 0 ? "dcsr" : "dcsc";
  return all_c ? "csf" : "levels";
}

static spc_status structure_from(h5c *c, const char *s, plan *p) {
  for (int y = 1; y < 4; y++)
    for (int k = 1; k < 3; k++)
      if (!strcmp(s, structure_names[y][k])) {
        if (p->order != 2) break;
        p->sym = (spc_symmetry)y;
        p->tri = k;
        return SPC_OK;
      }
  return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "binsparse",
                     "structure '%s' is not supported for order %d", s, p->order);
}

/* A fill value other than zero has no place in our model. */
static spc_status check_fill(h5c *c) {
  hid_t d;
  int64_t n;
  double v = 0;
  spc_status s = ds_open(c, "fill_value", &d, &n);
  if (!s && (n != 1 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0 ||
             v != 0))
    s = spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "fill_value",
                    "fill values other than 0 are not supported");
  H5CLOSE(H5Dclose, d);
  return s;
}

static spc_status plan_from_bsp(h5c *c, const jv *b, plan *p) {
  stack st;
  bool swap, cplx = false, iso = false;
  int dimof[SPC_MAX_ORDER];
  const jv *fill = jget(b, "fill");
  const char *vty = jgets(jget(b, "data_types"), "values"), *str = jgets(b, "structure");
  spc_status s = shape_from(c, jget(b, "shape"), "binsparse", p);
  if (s || (s = bsp_stack(c, jget(b, "format"), &st, &swap, &cplx, &iso))) return s;
  const jv *swz = jget(jget(b, "format"), "swizzle");
  if ((s = swizzle_from(c, swz ? swz : jget(b, "swizzle"), swap, dimof, p->order))) return s;
  for (int k = 0, l = 0; k < st.n; k++) {
    if (l + st.rank[k] > p->order) break;
    for (int r = 0; r < st.rank[k]; r++, l++) {
      plevel *q = &p->lv[l];
      q->dim = dimof[l];
      q->size = p->dims[q->dim];
      q->fmt = st.kind[k] == 'd' ? &spc_level_dense
               : r == 0          ? &spc_level_compressed
                                 : &spc_level_singleton;
      bsp_dset_names(q, l);
    }
    p->nlevels = l;
  }
  int nl = 0;
  for (int k = 0; k < st.n; k++) nl += st.rank[k];
  if (nl != p->order)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                       "format describes %d dimensions but shape has %d", nl, p->order);
  for (; vty && (!strncmp(vty, "iso[", 4) || !strncmp(vty, "complex[", 8));
       vty = strchr(vty, '[') + 1) {
    if (vty[0] == 'i') iso = true;
    else cplx = true;
  }
  p->iso = iso;
  p->cpairs = cplx;
  p->have_nsv = jgeti(b, "number_of_stored_values", &p->nsv);
  p->format = stack_name(p);
  p->bsp = true;
  if (str && (s = structure_from(c, str, p))) return s;
  if (fill && fill->type == J_BOOL && fill->b && (s = check_fill(c))) return s;
  return SPC_OK;
}

static spc_status symmetry_from(const char *s, spc_symmetry *y) {
  for (int k = 0; k < 4 && s; k++)
    if (!strcmp(s, spc_symmetry_name((spc_symmetry)k))) {
      *y = (spc_symmetry)k;
      return SPC_OK;
    }
  return SPC_ERR_INPUT;
}

/* Our own attribute, where it agrees with the binsparse levels: the
 * format name and pattern values. */
static void plan_overlay(plan *p, const jv *sp) {
  const jv *lv = jget(sp, "levels"), *k;
  const char *name = jgets(sp, "format"), *vt = jgets(sp, "value_type");
  int l = 0;
  if (!name || jlen(lv) != p->nlevels) return;
  for (k = lv->kid; k; k = k->next, l++) {
    const char *f = jgets(k, "level_format");
    int64_t dim;
    if (!f || strcmp(f, p->lv[l].fmt->name) || !jgeti(k, "dim", &dim) || dim != p->lv[l].dim)
      return;
  }
  const char *in = format_intern(name);
  if (in) p->format = in;
  p->pattern = vt && !strcmp(vt, "pattern");
}

/* Formats binsparse cannot describe: everything from our attribute. */
static spc_status plan_from_spconv(h5c *c, const jv *sp, plan *p) {
  const jv *lvs = jget(sp, "levels");
  const char *name = jgets(sp, "format"), *vt = jgets(sp, "value_type");
  spc_status s = shape_from(c, jget(sp, "shape"), "spconv", p);
  if (s) return s;
  p->nlevels = jlen(lvs);
  if (p->nlevels < 1 || p->nlevels > SPC_MAX_ORDER || !name || !vt)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                       "expected format, value_type and 1 to %d levels", SPC_MAX_ORDER);
  int l = 0;
  for (const jv *k = lvs->kid; k; k = k->next, l++) {
    plevel *q = &p->lv[l];
    const char *f = jgets(k, "level_format");
    int64_t dim, size;
    const jv *arrs = jget(k, "arrays");
    if (!f || !jgeti(k, "dim", &dim) || !jgeti(k, "size", &size) || dim < 0 ||
        dim >= p->order || size < 0 || !arrs)
      return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                         "level %d: expected level_format, dim, size, arrays", l);
    if (!(q->fmt = level_format_find(f)))
      return spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "spconv",
                         "level format '%s' (level %d) is not known to this build", f, l);
    q->dim = (int)dim;
    q->size = size;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && q->fmt->arrays[i]; i++) {
      const char *ds = jgets(arrs, q->fmt->arrays[i]);
      bool implied = ds && !ds[0] && !l && q->fmt == &spc_level_compressed && !i;
      if (!ds || (!implied && !dset_name_ok(ds)))
        return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv",
                           "level %d: no valid dataset for array %s", l, q->fmt->arrays[i]);
      snprintf(q->dset[i], DSET_MAX, "%s", ds);
    }
  }
  if (symmetry_from(jgets(sp, "symmetry"), &p->sym))
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv", "bad symmetry");
  if (p->sym != SPC_GENERAL && p->order != 2)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "spconv", "symmetry needs order 2");
  p->format = format_intern(name);
  if (!p->format) p->format = "levels";
  p->pattern = !strcmp(vt, "pattern");
  return SPC_OK;
}

/* Memory type for a compound of two floats (names as in the file). */
static hid_t complex_mtype(hid_t ft) {
  hid_t mt = H5I_INVALID_HID;
  if (H5Tget_nmembers(ft) != 2 || H5Tget_member_class(ft, 0) != H5T_FLOAT ||
      H5Tget_member_class(ft, 1) != H5T_FLOAT)
    return mt;
  char *n0 = H5Tget_member_name(ft, 0), *n1 = H5Tget_member_name(ft, 1);
  if (n0 && n1 && (mt = H5Tcreate(H5T_COMPOUND, 16)) >= 0 &&
      (H5Tinsert(mt, n0, 0, H5T_NATIVE_DOUBLE) < 0 || H5Tinsert(mt, n1, 8, H5T_NATIVE_DOUBLE) < 0))
    H5CLOSE(H5Tclose, mt);
  H5free_memory(n0);
  H5free_memory(n1);
  return mt;
}

/* The values dataset into a new buffer: *n values of type *vt (pattern:
 * only its length, or -1 without one). */
static spc_status rd_values(h5c *c, const plan *p, void **val, int64_t *n, spc_vtype *vt) {
  hid_t d = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
  bool own_mt = false;
  int64_t len;
  spc_status s;
  *val = NULL;
  *n = -1;
  *vt = SPC_PATTERN;
  if (p->pattern && H5Lexists(c->f, "values", H5P_DEFAULT) <= 0) return SPC_OK;
  if ((s = ds_open(c, "values", &d, &len))) return s;
  *n = len;
  if (p->pattern) goto done;
  ft = H5Dget_type(d);
  H5T_class_t cls = ft < 0 ? H5T_NO_CLASS : H5Tget_class(ft);
  size_t sz = ft < 0 ? 0 : H5Tget_size(ft);
  if (cls == H5T_COMPOUND && (mt = complex_mtype(ft)) >= 0) {
    own_mt = true;
    *vt = SPC_C128;
  } else if (cls == H5T_FLOAT && p->cpairs) {
    if (len % 2) {
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "values",
                      "complex values as an odd number (%lld) of floats", (long long)len);
      goto done;
    }
    *n = len / 2;
    *vt = SPC_C128;
    mt = H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_FLOAT) {
    *vt = sz <= 4 ? SPC_F32 : SPC_F64;
    mt = sz <= 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_INTEGER && !p->cpairs) {
    bool u64 = H5Tget_sign(ft) == H5T_SGN_NONE && sz > 4;
    *vt = u64 ? SPC_U64 : SPC_I64;
    mt = u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
  } else {
    s = spc_cnt_err(c->e, SPC_ERR_UNSUPPORTED, c->path, "values",
                    "values of this HDF5 type (class %d) are not supported", (int)cls);
    goto done;
  }
  if (!(*val = spc_malloc_n(*n, spc_vtype_size(*vt)))) {
    s = nomem(c);
    goto done;
  }
  if (len > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, *val) < 0)
    s = h5_fail(c, SPC_ERR_INPUT, "values", "cannot read dataset (corrupt or truncated file)");
done:
  if (own_mt) H5CLOSE(H5Tclose, mt);
  H5CLOSE(H5Tclose, ft);
  H5CLOSE(H5Dclose, d);
  return s;
}

static spc_status rd_levels(h5c *c, const plan *p, spc_tensor *t) {
  spc_status s = SPC_OK;
  for (int l = 0; l < p->nlevels && !s; l++) {
    const plevel *q = &p->lv[l];
    spc_level *lv = &t->lv[l];
    lv->fmt = q->fmt;
    lv->props = q->fmt->props;
    lv->dim = q->dim;
    lv->size = q->size;
    t->nlevels = l + 1;
    for (int i = 0; i < SPC_LEVEL_MAX_ARRAYS && q->fmt->arrays[i] && !s; i++) {
      const char *an = q->fmt->arrays[i];
      int64_t n;
      if (q->dset[i][0]) {
        s = rd_index(c, q->dset[i], lv, an);
      } else if (!(s = ds_len(c, q->dset[array_index(q->fmt, "crd")], &n))) {
        if ((s = spc_level_add_array(lv, an, spc_itype_for(n), 2, c->e))) return nomem(c);
        spc_arr_set(&lv->arr[lv->narr - 1], 0, 0);
        spc_arr_set(&lv->arr[lv->narr - 1], 1, n);
      }
    }
  }
  return s;
}

/* Entries of a binsparse "structure" must lie in its triangle. */
static spc_status check_triangle(h5c *c, const spc_tensor *t, int tri) {
  spc_iter *it = NULL;
  int64_t x[SPC_MAX_ORDER];
  spc_status s = spc_iter_create(t, &it, c->e);
  while (!s && spc_iter_next(it, x, NULL))
    if (tri == 1 ? x[0] < x[1] : x[0] > x[1])
      s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                      "entry (%lld, %lld) lies outside the %s triangle the "
                      "structure key declares", (long long)x[0], (long long)x[1],
                      tri == 1 ? "lower" : "upper");
  spc_iter_free(&it);
  return s;
}

/* The tensor of plan p, validated. */
static spc_status build(h5c *c, const plan *p, spc_tensor **out) {
  void *val = NULL;
  int64_t nval;
  spc_vtype vt;
  spc_status s;
  spc_tensor *t = spc_tensor_alloc(p->order, p->dims, SPC_PATTERN);
  *out = NULL;
  if (!t) return nomem(c);
  t->format = p->format;
  t->sym = p->sym;
  if ((s = rd_levels(c, p, t)) || (s = rd_values(c, p, &val, &nval, &vt)) ||
      (s = spc_cnt_validate(t, c->path, c->e)))
    goto fail;
  int64_t np = spc_tensor_nstored(t);
  if (p->have_nsv && p->nsv != np) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                    "number_of_stored_values is %lld but the arrays hold %lld",
                    (long long)p->nsv, (long long)np);
    goto fail;
  }
  if (p->iso && nval == 1 && vt != SPC_PATTERN && np != 1) { /* one value for all */
    size_t w = spc_vtype_size(vt);
    void *all = spc_malloc_n(np, w);
    if (!all) {
      s = nomem(c);
      goto fail;
    }
    for (int64_t k = 0; k < np; k++) memcpy((char *)all + k * (int64_t)w, val, w);
    spc_free(val);
    val = all;
    nval = np;
  }
  if (nval != np && !(vt == SPC_PATTERN && nval < 0)) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "values",
                    "%lld values for %lld stored components", (long long)nval, (long long)np);
    goto fail;
  }
  t->vt = vt;
  t->val = val;
  t->val_owned = val != NULL;
  t->nval = np;
  val = NULL;
  if (p->bsp && p->sym != SPC_GENERAL && (s = check_triangle(c, t, p->tri))) goto fail;
  *out = t;
  return SPC_OK;
fail:
  spc_free(val);
  spc_tensor_free(&t);
  return s;
}

/* Descriptors: the "binsparse" attribute (else any root attribute holding
 * JSON with a "binsparse" key) and ours. */
static spc_status read_descriptors(h5c *c, jv **bj, jv **sj) {
  spc_status s = rd_json_attr(c, "binsparse", bj);
  if (!s && !*bj) {
    scan sc = {c, NULL, SPC_OK};
    hsize_t idx = 0;
    if (H5Aiterate2(c->f, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, scan_attr, &sc) < 0)
      s = sc.s ? sc.s : h5_fail(c, SPC_ERR_INPUT, NULL, "cannot list attributes");
    *bj = sc.found;
  }
  if (!s) s = rd_json_attr(c, "spconv", sj);
  return s;
}

static spc_status bsp_load(h5c *c, spc_tensor **out) {
  jv *bj = NULL, *sj = NULL;
  plan *p = spc_calloc(1, sizeof *p);
  spc_status s = p ? read_descriptors(c, &bj, &sj) : nomem(c);
  if (s) goto done;
  const jv *b = jget(bj, "binsparse");
  if (!b && jget(bj, "format")) b = bj; /* the inner dict alone */
  if (b) {
    if (!(s = plan_from_bsp(c, b, p)) && sj) plan_overlay(p, sj);
  } else if (sj) {
    s = plan_from_spconv(c, sj, p);
  } else {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, "binsparse",
                    "no binsparse descriptor (root attribute \"binsparse\")");
  }
  if (!s) s = build(c, p, out);
done:
  jv_free(bj);
  jv_free(sj);
  spc_free(p);
  return s;
}

spc_status spc_bsp_read(const char *path, const spc_read_opts *o,
                        spc_tensor **out, spc_error *e) {
  h5c c = {.path = path, .e = e, .f = H5I_INVALID_HID};
  hid_t fapl = H5I_INVALID_HID;
  spc_tensor *t = NULL;
  spc_status s = SPC_OK;
  if (!out || !path) return spc_cnt_err(e, SPC_ERR_ARG, path, NULL, "no output or no path");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return spc_cnt_err(e, SPC_ERR_IO, path, NULL, "cannot open: %s", strerror(errno));
  fclose(f);
  h5_quiet(&c);
  if (H5Fis_hdf5(path) <= 0) {
    s = spc_cnt_err(e, SPC_ERR_INPUT, path, NULL, "not an HDF5 file");
  } else if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
             H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0
#if H5_VERSION_GE(1, 10, 7)
             || H5Pset_file_locking(fapl, 1, 1) < 0
#endif
  ) {
    s = h5_fail(&c, SPC_ERR_IO, NULL, "cannot set file properties");
  } else if ((c.f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
    s = h5_fail(&c, SPC_ERR_IO, NULL, "cannot open HDF5 file");
  } else {
    s = bsp_load(&c, &t);
    H5Fclose(c.f);
  }
  H5CLOSE(H5Pclose, fapl);
  h5_restore(&c);
  if (!s) s = spc_cnt_finish(&t, path, o, e);
  if (s) spc_tensor_free(&t);
  *out = t;
  return s;
}
