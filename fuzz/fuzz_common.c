/* fuzz_common.c -- see fuzz_common.h. */
#include "fuzz_common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *fuzz_dir(void) {
  static char dir[256];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/spconv_fuzz.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) abort();
  }
  return dir;
}

const char *fuzz_path(const char *name) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
  return p;
}

void fuzz_write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f)) abort();
}

spc_read_opts fuzz_read_opts(int expand) {
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.threads = 1;
  o.expand = expand;
  return o;
}

void fuzz_check_failure(spc_status s, const spc_tensor *t, const spc_error *e) {
  if (s >= 0 || t != NULL || e->code != s) abort();
  /* the error record must be printable */
  char buf[1400];
  spc_error_string(e, buf, sizeof buf);
  if (!buf[0]) abort();
}

/* Same components (after combining duplicates with SUM), values bit for
 * bit, NaN equal to NaN. */
static int same_components(const spc_tensor *a, const spc_tensor *b) {
  spc_tensor *ca = NULL, *cb = NULL;
  spc_iter *ia = NULL, *ib = NULL;
  int same = 0;
  if (spc_tensor_combine(a, SPC_DUP_SUM, &ca, NULL) ||
      spc_tensor_combine(b, SPC_DUP_SUM, &cb, NULL))
    goto done;
  int order = spc_tensor_order(ca);
  if (order != spc_tensor_order(cb) || spc_tensor_nstored(ca) != spc_tensor_nstored(cb))
    goto done;
  for (int d = 0; d < order; d++)
    if (spc_tensor_dim(ca, d) != spc_tensor_dim(cb, d)) goto done;
  spc_vtype vt = spc_tensor_vtype(ca);
  if (vt != spc_tensor_vtype(cb)) goto done;
  if (spc_iter_create(ca, &ia, NULL) || spc_iter_create(cb, &ib, NULL)) goto done;
  int64_t xa[SPC_MAX_ORDER], xb[SPC_MAX_ORDER];
  const void *va, *vb;
  size_t w = spc_vtype_size(vt);
  while (spc_iter_next(ia, xa, &va)) {
    if (!spc_iter_next(ib, xb, &vb) || memcmp(xa, xb, (size_t)order * sizeof *xa)) goto done;
    if (w && memcmp(va, vb, w)) {
      /* NaN equals NaN, part by part */
      int nparts = vt == SPC_C128 ? 2 : 1;
      for (int k = 0; k < nparts; k++) {
        if (vt == SPC_F32) {
          float x = ((const float *)va)[k], y = ((const float *)vb)[k];
          if (!(x != x && y != y) && memcmp(&x, &y, 4)) goto done;
        } else if (vt == SPC_F64 || vt == SPC_C128) {
          double x = ((const double *)va)[k], y = ((const double *)vb)[k];
          if (!(x != x && y != y) && memcmp(&x, &y, 8)) goto done;
        } else {
          goto done;
        }
      }
    }
  }
  same = 1;
done:
  spc_iter_free(&ia);
  spc_iter_free(&ib);
  spc_tensor_free(&ca);
  spc_tensor_free(&cb);
  return same;
}

void fuzz_check_tensor(const spc_tensor *t) {
  spc_error e;
  spc_error_clear(&e);
  if (spc_tensor_check(t, &e) != SPC_OK) abort();
  int order = spc_tensor_order(t);
  spc_vtype vt = spc_tensor_vtype(t);
  const char *name = order <= 2 ? "out.mtx" : vt != SPC_C128 ? "out.tns" : NULL;
  if (!name) return;
  const char *p = fuzz_path(name);
  spc_status s = spc_write(t, p, NULL, &e);
  if (s == SPC_ERR_NOMEM) return;
  if (s != SPC_OK) abort(); /* a tensor that was read must be writable */
  spc_read_opts o = fuzz_read_opts(0);
  /* Matrix Market: the written type asked back (a "%%GraphBLAS type"
   * comment no longer picks float32 or uint64 by itself) */
  if (name[4] == 'm') o.vtype = vt;
  if (name[4] == 't') { /* FROSTT: give back the type and dimensions */
    o.vtype = vt == SPC_PATTERN ? SPC_VTYPE_AUTO : vt;
    o.ndims = order;
    for (int d = 0; d < order; d++) o.dims[d] = spc_tensor_dim(t, d);
  }
  spc_tensor *back = NULL;
  s = spc_read(p, &o, &back, &e);
  /* a FROSTT mode read from 0 (an index 0, dimensions inferred) is written
   * from 0 again, which given dimensions refuse: read it as it was read */
  if (s == SPC_ERR_INPUT && name[4] == 't') {
    o.ndims = 0;
    s = spc_read(p, &o, &back, &e);
  }
  if (s == SPC_ERR_NOMEM) return;
  if (s != SPC_OK) abort(); /* what we write we must read */
  /* pattern written to FROSTT comes back as ones: compare structure */
  if (vt == SPC_PATTERN && name[4] == 't') {
    if (spc_tensor_nstored(back) != spc_tensor_nstored(t)) abort();
  } else {
    spc_tensor *x = NULL;
    const spc_tensor *want = t;
    /* .tns holds symmetric storage expanded */
    if (name[4] == 't' && spc_tensor_symmetry(t) != SPC_GENERAL) {
      if (spc_tensor_expand(t, &x, NULL)) abort();
      want = x;
    }
    if (!same_components(want, back)) abort();
    spc_tensor_free(&x);
  }
  spc_tensor_free(&back);
  unlink(p);
}
