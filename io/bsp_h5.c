/* bsp_h5.c -- HDF5 plumbing for binsparse containers: quiet error
 * handling, and writing / reading datasets and root attributes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bsp_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * HDF5 plumbing
 * ====================================================================== */

void spc_hdf5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* A libhdf5 built without --enable-threadsafe must not be entered by two
 * threads at once (nor its process-wide error-printing setting saved and
 * restored by two): where the library says it is not threadsafe, every
 * .bsp.h5 read or write holds this lock from spc_cnt_h5_quiet to
 * spc_cnt_h5_restore, where all its HDF5 calls are. */
static pthread_mutex_t h5_mu = PTHREAD_MUTEX_INITIALIZER;

/* HDF5 prints its error stack by default: off for the duration of a call
 * into this file, then restored. */
void spc_cnt_h5_quiet(h5c *c) {
  hbool_t ts = false;
  c->locked = H5is_library_threadsafe(&ts) < 0 || !ts;
  if (c->locked) pthread_mutex_lock(&h5_mu);
  spc_spawn_guard_shared(); /* the file's flock must not leak into a JIT compile */
  c->old_fn = NULL;
  c->old_data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &c->old_fn, &c->old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void spc_cnt_h5_restore(h5c *c) {
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, c->old_fn, c->old_data);
  spc_spawn_guard_release();
  if (c->locked) pthread_mutex_unlock(&h5_mu);
  c->locked = false;
}

static herr_t h5_walk(unsigned n, const H5E_error2_t *d, void *data) {
  if (n == 0 && d->desc) snprintf(data, 160, "%s", d->desc);
  return 0;
}

static herr_t h5_os_walk(unsigned n, const H5E_error2_t *d, void *data) {
  /* the innermost step: outer ones wrap any cause in "read failed" */
  if (n == 0 && (d->min_num == H5E_CANTLOCKFILE || d->min_num == H5E_SYSERRSTR ||
                 d->min_num == H5E_READERROR || d->min_num == H5E_CANTALLOC))
    *(bool *)data = true;
  return 0;
}

/* The code for HDF5's error stack now: SPC_ERR_IO where its innermost step is
 * the system's (a lock held, a read refused, memory), else SPC_ERR_INPUT:
 * the file's contents (a truncated or corrupt file). */
spc_status spc_cnt_h5_cause(void) {
  bool os = false;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_os_walk, &os);
  return os ? SPC_ERR_IO : SPC_ERR_INPUT;
}

/* Fail naming key, with HDF5's innermost message appended. */
spc_status spc_cnt_h5_fail(h5c *c, spc_status code, const char *key,
                          const char *what) {
  char h[160] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, h);
  H5Eclear2(H5E_DEFAULT);
  return spc_cnt_err(c->e, code, c->path, key, "%s%s%s", what, h[0] ? ": " : "", h);
}

spc_status spc_cnt_nomem(h5c *c) {
  return spc_cnt_err(c->e, SPC_ERR_NOMEM, c->path, NULL, "out of memory");
}

/* Dataset name: letters, digits and '_' (no path separators). */
bool spc_cnt_dset_name_ok(const char *s) {
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
/* Elements [0, n) of dataset d written step at a time (whole chunks) from
 * data (memory type mtype), or uint8 ones when data is NULL; an array in a
 * temporary file (spc_map) has its pages given back after each step, so
 * writing it costs the process one step of memory. */
static spc_status wr_steps(h5c *c, hid_t d, hid_t mtype, int64_t n, const void *data,
                           hsize_t step, const char *name) {
  size_t w = data ? H5Tget_size(mtype) : 1;
  unsigned char *ones = data ? NULL : spc_malloc((size_t)step);
  hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
  spc_status s = SPC_OK;
  if (!data && !ones) return spc_cnt_nomem(c);
  if (ones) memset(ones, 1, (size_t)step);
  if (!w || (fs = H5Dget_space(d)) < 0) s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot write");
  for (hsize_t off = 0; !s && off < (hsize_t)n; off += step) {
    hsize_t cnt = (hsize_t)n - off < step ? (hsize_t)n - off : step;
    const void *from = data ? (const void *)((const char *)data + off * w) : (const void *)ones;
    if ((ms = H5Screate_simple(1, &cnt, NULL)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL) < 0 ||
        H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, from) < 0)
      s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot write dataset");
    H5CLOSE(H5Sclose, ms);
    if (data) spc_map_drop(data);
  }
  H5CLOSE(H5Sclose, fs);
  spc_free(ones);
  return s;
}

/* A 1-d dataset of n elements: file type ftype, memory type mtype, from
 * data (NULL: uint8 ones).  Chunked with Fletcher32 when non-empty. */
spc_status spc_cnt_wr_dset(h5c *c, const char *name, hid_t ftype, hid_t mtype,
                          int64_t n, const void *data) {
  hid_t sp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, d = H5I_INVALID_HID;
  /* chunks of at most BSP_CHUNK elements, evened out so the last one is
   * nearly full (HDF5 stores an edge chunk at full size) */
  hsize_t dims = (hsize_t)n, nch = (dims + BSP_CHUNK - 1) / BSP_CHUNK;
  hsize_t ch = nch ? (dims + nch - 1) / nch : 0;
  spc_status s = SPC_OK;
  if ((sp = H5Screate_simple(1, &dims, NULL)) < 0 ||
      (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0) {
    s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot create dataset");
    goto done;
  }
  if (n > 0 && (H5Pset_chunk(dcpl, 1, &ch) < 0 ||
                (c->compress && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0)) ||
                H5Pset_fletcher32(dcpl) < 0)) {
    s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot set dataset filters");
    goto done;
  }
  if ((d = H5Dcreate2(c->f, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0) {
    s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot create dataset");
    goto done;
  }
  if (n > 0) {
    size_t w = H5Tget_size(mtype);
    hsize_t per = w ? ((hsize_t)4 << 20) / w / ch : 1; /* chunks in 4 MiB */
    if (!data) s = wr_steps(c, d, H5T_NATIVE_UINT8, n, NULL, ch, name);
    else if (spc_map_owns(data)) s = wr_steps(c, d, mtype, n, data, ch * (per ? per : 1), name);
    else if (H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot write dataset");
  }
done:
  H5CLOSE(H5Dclose, d);
  H5CLOSE(H5Pclose, dcpl);
  H5CLOSE(H5Sclose, sp);
  return s;
}

/* A scalar UTF-8 string attribute on the root. */
spc_status spc_cnt_wr_attr(h5c *c, const char *name, const char *text) {
  hid_t ty = H5I_INVALID_HID, sp = H5I_INVALID_HID, a = H5I_INVALID_HID;
  spc_status s = SPC_OK;
  if ((ty = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(ty, strlen(text) + 1) < 0 ||
      H5Tset_strpad(ty, H5T_STR_NULLTERM) < 0 || H5Tset_cset(ty, H5T_CSET_UTF8) < 0 ||
      (sp = H5Screate(H5S_SCALAR)) < 0 ||
      (a = H5Acreate2(c->f, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      H5Awrite(a, ty, text) < 0)
    s = spc_cnt_h5_fail(c, SPC_ERR_IO, name, "cannot write attribute");
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
    s = spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
    goto done;
  }
  if (H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) goto done;
  if (H5Tis_variable_str(ft) > 0) {
    char *v = NULL;
    if ((mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
        H5Tset_cset(mt, H5Tget_cset(ft)) < 0 || H5Aread(a, mt, &v) < 0) {
      s = spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
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
        s = spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
        spc_free(*out);
        *out = NULL;
        goto done;
      }
      (*out)[n] = 0;
    }
  }
  if (!*out) s = spc_cnt_nomem(c);
done:
  H5CLOSE(H5Tclose, mt);
  H5CLOSE(H5Tclose, ft);
  H5CLOSE(H5Sclose, sp);
  return s;
}

/* Root attribute name parsed as JSON; *out = NULL when absent. */
spc_status spc_cnt_rd_json_attr(h5c *c, const char *name, jv **out) {
  char *text = NULL;
  hid_t a;
  spc_status s = SPC_OK;
  *out = NULL;
  htri_t ex = H5Aexists(c->f, name);
  if (ex < 0) return spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot read attribute");
  if (!ex) return SPC_OK;
  if ((a = H5Aopen(c->f, name, H5P_DEFAULT)) < 0)
    return spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot open attribute");
  bool oom = false;
  s = rd_attr_text(c, a, name, &text);
  H5Aclose(a);
  if (s) return s;
  if (!text || !(*out = spc_cnt_json_parse(text, &oom)))
    s = oom ? spc_cnt_nomem(c)
            : spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "attribute is not JSON text");
  spc_free(text);
  return s;
}

herr_t spc_cnt_scan_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
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
  if (text && (v = spc_cnt_json_parse(text, &oom)) && spc_cnt_jget(v, "binsparse")) {
    sc->found = v;
    v = NULL;
  }
  spc_cnt_jv_free(v);
  spc_free(text);
  if (oom) {
    sc->s = spc_cnt_nomem(sc->c);
    return -1;
  }
  return sc->found ? 1 : 0;
}

/* Open a 1-d dataset and get its length. */
spc_status spc_cnt_ds_open(h5c *c, const char *name, hid_t *d, int64_t *n) {
  hid_t sp = H5I_INVALID_HID;
  hsize_t dims[1];
  *d = H5I_INVALID_HID;
  htri_t ex = H5Lexists(c->f, name, H5P_DEFAULT);
  if (ex <= 0)
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "dataset %s is missing", name);
  if ((*d = H5Dopen2(c->f, name, H5P_DEFAULT)) < 0)
    return spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot open dataset");
  if ((sp = H5Dget_space(*d)) < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
      H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || dims[0] > (hsize_t)INT64_MAX) {
    H5CLOSE(H5Sclose, sp);
    H5CLOSE(H5Dclose, *d);
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name,
                       "dataset %s is not a one-dimensional array", name);
  }
  H5Sclose(sp);
  /* a corrupt chunk record can claim gigabytes that libhdf5 would
   * allocate: the stored bytes cannot exceed the file */
  hsize_t fsz = 0, stored = H5Dget_storage_size(*d);
  if (H5Fget_filesize(c->f, &fsz) >= 0 && stored > fsz) {
    H5CLOSE(H5Dclose, *d);
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name,
                       "dataset %s claims %llu stored bytes in a file of %llu", name,
                       (unsigned long long)stored, (unsigned long long)fsz);
  }
  /* filters that keep the size (shuffle; fletcher32 adds 4 bytes a chunk):
   * the stored bytes must hold every element, since libhdf5 copies a
   * chunk's whole size out of what the pipeline gave back without a check
   * (a fuzzed file: 67 bytes stored for 17 int32 and a checksum) */
  hid_t pl = H5Dget_create_plist(*d), ty = H5I_INVALID_HID;
  int nf = pl >= 0 ? H5Pget_nfilters(pl) : -1;
  bool sized = nf >= 0, f32 = false;
  for (int i = 0; sized && i < nf; i++) {
    unsigned fl = 0;
    size_t ne = 0;
    H5Z_filter_t id = H5Pget_filter2(pl, (unsigned)i, &fl, &ne, NULL, 0, NULL, NULL);
    f32 |= id == H5Z_FILTER_FLETCHER32;
    sized = id == H5Z_FILTER_SHUFFLE || id == H5Z_FILTER_FLETCHER32;
  }
  hsize_t cd = 0;
  if (sized && f32 && (H5Pget_layout(pl) != H5D_CHUNKED || H5Pget_chunk(pl, 1, &cd) != 1 || !cd))
    sized = false;
  H5CLOSE(H5Pclose, pl);
  size_t esz = sized && (ty = H5Dget_type(*d)) >= 0 ? H5Tget_size(ty) : 0;
  H5CLOSE(H5Tclose, ty);
  hsize_t extra = f32 && cd ? 4 * (dims[0] / cd + (dims[0] % cd != 0)) : 0;
  if (sized && (!esz || stored < extra || (stored - extra) / esz < dims[0])) {
    H5CLOSE(H5Dclose, *d);
    return spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name,
                       "dataset %s stores %llu bytes, short of its %llu elements", name,
                       (unsigned long long)stored, (unsigned long long)dims[0]);
  }
  *n = (int64_t)dims[0];
  return SPC_OK;
}

spc_status spc_cnt_ds_len(h5c *c, const char *name, int64_t *n) {
  hid_t d;
  spc_status s = spc_cnt_ds_open(c, name, &d, n);
  H5CLOSE(H5Dclose, d);
  return s;
}

/* Integer dataset name -> a new array `aname` of lv, 32-bit when the file's
 * type fits, else 64-bit; unsigned 64-bit values are checked. */
spc_status spc_cnt_rd_index(h5c *c, const char *name, spc_level *lv, const char *aname) {
  hid_t d, ft = H5I_INVALID_HID;
  int64_t n;
  spc_status s = spc_cnt_ds_open(c, name, &d, &n);
  if (s) return s;
  if ((ft = H5Dget_type(d)) < 0 || H5Tget_class(ft) != H5T_INTEGER) {
    s = spc_cnt_err(c->e, SPC_ERR_INPUT, c->path, name, "dataset %s is not integer", name);
    goto done;
  }
  size_t sz = H5Tget_size(ft);
  bool sgn = H5Tget_sign(ft) == H5T_SGN_2;
  bool narrow = sgn ? sz <= 4 : sz <= 2, u64 = !sgn && sz > 4;
  if ((s = spc_level_add_array(lv, aname, narrow ? SPC_IDX32 : SPC_IDX64, n, c->e))) {
    s = spc_cnt_nomem(c);
    goto done;
  }
  spc_array *a = &lv->arr[lv->narr - 1];
  hid_t mt = narrow ? H5T_NATIVE_INT32 : u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
  if (n > 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, a->data) < 0) {
    s = spc_cnt_h5_fail(c, SPC_ERR_INPUT, name, "cannot read dataset (corrupt or truncated file)");
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
