/* spc_containers.h -- binary containers: binsparse in HDF5 (.bsp.h5) and the
 * scipy.sparse.save_npz layout (.npz).
 *
 * Writers write t to exactly `path` (the caller picked a temporary name and
 * renames it on success; on failure nothing is removed here).  t is general
 * unless o->keep_symmetry; a symmetric t with keep_symmetry off is expanded
 * here.  Readers return a new tensor owned by the caller, validated
 * (spc_tensor_check) with its level properties (ordered, unique) computed
 * from the data.  Errors name the file (e->file) and, where one is at fault,
 * the dataset / attribute / zip entry (e->key).  Not thread-safe: libhdf5
 * (serial build) keeps global state. */
#ifndef SPC_CONTAINERS_H
#define SPC_CONTAINERS_H

#include "spc_impl.h"

/* ---- binsparse v0.1 in HDF5 (bsp_*.c) ----------------------------------
 * Root attribute "binsparse": the JSON descriptor {"binsparse": {...}}.
 * COO / COOC / CSR / CSC / DCSR / DCSC by name; any other stack of dense,
 * compressed and singleton levels as a binsparse custom format (nested
 * "level" dicts, "swizzle" for the level order); dense tensors as COO
 * without explicit zeros.  Root attribute "spconv": our own JSON (format
 * name, value type, symmetry, per level: level format, dim, size, arrays
 * and their datasets); formats binsparse cannot express are written with it
 * alone, as datasets "level<L>_<name>" + "values".  Root attribute
 * "spconv_spec": the format's YAML spec text (empty for now).  Every dataset
 * is chunked with the Fletcher32 checksum filter. */
SPC_INTERNAL spc_status spc_bsp_write(const spc_tensor *t, const char *path,
                                      const spc_write_opts *o, spc_error *e);
SPC_INTERNAL spc_status spc_bsp_read(const char *path, const spc_read_opts *o,
                                     spc_tensor **out, spc_error *e);

/* ---- scipy.sparse .npz (npz_*.c, zip_*.c, npy.c) -----------------------
 * A zip of .npy files: coo (row, col, data, shape, format) or csr / csc
 * (indices, indptr, data, shape, format).  Order 2 only.  Entries stored,
 * or deflated when o->gzip > 0; ZIP64 records where sizes or offsets pass
 * 4 GiB.  The reader takes stored and deflated entries, checks every crc32
 * and every .npy header against the zip directory. */
SPC_INTERNAL spc_status spc_npz_write(const spc_tensor *t, const char *path,
                                      const spc_write_opts *o, spc_error *e);
SPC_INTERNAL spc_status spc_npz_read(const char *path, const spc_read_opts *o,
                                     spc_tensor **out, spc_error *e);
/* Test hook: nonzero writes ZIP64 records for every entry, however small. */
SPC_INTERNAL extern int spc_npz_force_zip64;

/* ---- shared by both containers (cnt_common.c, cnt_finish.c) ------------
 * Fill e like spc_err, with e->key set to key (a dataset, attribute or zip
 * entry name; NULL clears it). */
SPC_INTERNAL spc_status spc_cnt_err(spc_error *e, spc_status code,
                                    const char *path, const char *key,
                                    const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Validate a tensor assembled from a file (array lengths, int64 overflow of
 * positions, then spc_tensor_check), then set the ORDERED / UNIQUE / LOCATE
 * properties of each compressed / singleton level from what the data
 * satisfies.  Errors are SPC_ERR_INPUT naming path. */
SPC_INTERNAL spc_status spc_cnt_validate(spc_tensor *t, const char *path,
                                         spc_error *e);
/* Apply the read options to a tensor just read: o->vtype (value cast) and
 * o->expand (symmetric storage to general).  May replace *t. */
SPC_INTERNAL spc_status spc_cnt_finish(spc_tensor **t, const char *path,
                                       const spc_read_opts *o, spc_error *e);

#endif
