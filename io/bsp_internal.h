/* bsp_internal.h -- binsparse v0.1 containers in HDF5 (.bsp.h5): private to
 * the pieces (bsp_h5.c, bsp_plan.c, bsp_write.c, bsp_read_plan.c,
 * bsp_read.c; JSON in cnt_json.c).  Not installed.
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
#ifndef BSP_INTERNAL_H
#define BSP_INTERNAL_H

#include "cnt_internal.h"
#include <hdf5.h>

#define BSP_VERSION "0.1"
#define BSP_CHUNK ((hsize_t)1 << 20) /* elements per chunk, at most */
#define DSET_MAX 64                  /* dataset names, with the NUL */

/* ---- bsp_h5.c: HDF5 plumbing ------------------------------------------- */

typedef struct h5c {
  const char *path;
  spc_error *e;
  hid_t f;
  bool compress;
  H5E_auto2_t old_fn;
  void *old_data;
  bool locked; /* holds the library's HDF5 lock (a libhdf5 not threadsafe) */
  bool no_jit; /* spc_read_opts.no_jit */
} h5c;

/* HDF5 prints its error stack by default: off for the duration of a call
 * into these files, then restored. */
SPC_INTERNAL void spc_cnt_h5_quiet(h5c *c);
SPC_INTERNAL void spc_cnt_h5_restore(h5c *c);
/* SPC_ERR_IO where HDF5's innermost error is the system's (a lock, a
 * read, memory), else SPC_ERR_INPUT (the file's contents). */
SPC_INTERNAL spc_status spc_cnt_h5_cause(void);
/* Fail naming key, with HDF5's innermost message appended. */
SPC_INTERNAL spc_status spc_cnt_h5_fail(h5c *c, spc_status code, const char *key,
                                const char *what);
SPC_INTERNAL spc_status spc_cnt_nomem(h5c *c);

#define H5CLOSE(fn, id) \
  do {                  \
    if ((id) >= 0) fn(id); \
    (id) = H5I_INVALID_HID; \
  } while (0)

/* Dataset name: letters, digits and '_' (no path separators). */
SPC_INTERNAL bool spc_cnt_dset_name_ok(const char *s);
/* A 1-d dataset of n elements: file type ftype, memory type mtype, from
 * data (NULL: uint8 ones).  Chunked with Fletcher32 when non-empty. */
SPC_INTERNAL spc_status spc_cnt_wr_dset(h5c *c, const char *name, hid_t ftype, hid_t mtype,
                                int64_t n, const void *data);
/* A scalar UTF-8 string attribute on the root. */
SPC_INTERNAL spc_status spc_cnt_wr_attr(h5c *c, const char *name, const char *text);
/* Root attribute name parsed as JSON; *out = NULL when absent. */
SPC_INTERNAL spc_status spc_cnt_rd_json_attr(h5c *c, const char *name, jv **out);

/* Scan root attributes for JSON with a top-level "binsparse" key. */
typedef struct scan { h5c *c; jv *found; spc_status s; } scan;
SPC_INTERNAL herr_t spc_cnt_scan_attr(hid_t loc, const char *name, const H5A_info_t *info,
                              void *data);

/* Open a 1-d dataset and get its length. */
SPC_INTERNAL spc_status spc_cnt_ds_open(h5c *c, const char *name, hid_t *d, int64_t *n);
SPC_INTERNAL spc_status spc_cnt_ds_len(h5c *c, const char *name, int64_t *n);
/* Integer dataset name -> a new array `aname` of lv, 32-bit when the file's
 * type fits, else 64-bit; unsigned 64-bit values are checked. */
SPC_INTERNAL spc_status spc_cnt_rd_index(h5c *c, const char *name, spc_level *lv,
                                 const char *aname);

/* ---- bsp_plan.c: levels, and the dataset holding each level array ----- */

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
  bool boolean; /* values are booleans: binsparse's bint8 (spc_tensor_boolean) */
  bool have_nsv;
  int64_t nsv;          /* number_of_stored_values */
} plan;

SPC_INTERNAL const spc_level_format *spc_cnt_level_format_find(const char *name);
/* A format name that lives as long as the process (tensors hold static
 * names): the built-in names, or a copy kept in a small pool. */
SPC_INTERNAL const char *spc_cnt_format_intern(const char *name);
SPC_INTERNAL int spc_cnt_array_index(const spc_level_format *f, const char *name);
/* Binsparse dataset names of level l's arrays: pointers_to_l (none at the
 * root) and indices_l. */
SPC_INTERNAL void spc_cnt_bsp_dset_names(plevel *q, int l);
SPC_INTERNAL spc_status spc_cnt_plan_from_tensor(const spc_tensor *t, plan *p);
/* binsparse "structure" names by [symmetry][tri] */
SPC_INTERNAL extern const char *const spc_cnt_structure_names[4][3];
/* The "binsparse" and "spconv" root attributes of plan p. */
SPC_INTERNAL void spc_cnt_jb_binsparse(jb *b, const plan *p, const spc_tensor *t, int64_t nsv);
SPC_INTERNAL void spc_cnt_jb_spconv(jb *b, const plan *p, int64_t nsv);

/* ---- bsp_read_plan.c: the plan of a file, from its descriptors -------- */

SPC_INTERNAL spc_status spc_cnt_plan_from_bsp(h5c *c, const jv *b, plan *p);
/* Our own attribute, where it agrees with the binsparse levels: the
 * format name and pattern values. */
SPC_INTERNAL void spc_cnt_plan_overlay(plan *p, const jv *sp);
/* Formats binsparse cannot describe: everything from our attribute. */
SPC_INTERNAL spc_status spc_cnt_plan_from_spconv(h5c *c, const jv *sp, plan *p);

/* ---- values (bsp_write.c, bsp_read.c) ---------------------------------- */
SPC_INTERNAL spc_status spc_cnt_wr_values(h5c *c, const spc_tensor *t, int64_t n);
/* The values dataset: *n values of type *vt (p->pattern: none needed). */
SPC_INTERNAL spc_status spc_cnt_rd_values(h5c *c, const plan *p, void **val,
                                          int64_t *n, spc_vtype *vt);

/* ---- bsp_conv.c: tensors in formats given by YAML specs ----------------
 * Written with the attribute "spconv_format" (JSON: format name, shape,
 * value/index/coordinate types, parameters, per level its level format,
 * extent [lo, lo+N) and arrays, and the YAML text of the format and of
 * its level formats), datasets "level<L>_<array>" and "values".  Read
 * back by rebuilding the format from the stored YAML (the built-in spec
 * when the text is equal), then checked by reading every component back
 * through the bounds-checked interpreter. */
SPC_INTERNAL bool spc_cnt_bsp_is_conv(const spc_tensor *t);
SPC_INTERNAL spc_status spc_cnt_bsp_write_conv(h5c *c, const spc_tensor *t);
/* *found: the file has "spconv_format" (then *out is its tensor). */
SPC_INTERNAL spc_status spc_cnt_bsp_read_conv(h5c *c, bool *found, spc_tensor **out);

/* Values read from binsparse's bint8 (as int64): marked boolean, any
 * byte but 0 taken as true (1). */
static inline void bsp_booleans(spc_tensor *t) {
  t->boolean = true;
  for (int64_t k = 0; k < t->nval; k++) ((int64_t *)t->val)[k] = ((int64_t *)t->val)[k] != 0;
}

#endif
