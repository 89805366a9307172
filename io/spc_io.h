/* spc_io.h -- internal I/O plumbing: input buffers (mmap or inflated gzip),
 * atomic output files, and the readers and writers of each container. */
#ifndef SPC_IO_H
#define SPC_IO_H

#include "spc_impl.h"
#include <stdio.h>

/* ---- input: the whole file as one read-only byte range ------------------ */
typedef struct spc_buf {
  const char *data;
  size_t len;
  void *map;      /* mmap'ed region, or NULL */
  size_t maplen;
  char *owned;    /* heap copy (inflated gzip), or NULL */
  bool gz;        /* the file was gzip-compressed */
} spc_buf;

/* Open path: mmap a plain file, inflate a gzip file (any number of
 * members) into memory.  Errors name the file. */
SPC_INTERNAL spc_status spc_buf_open(const char *path, spc_buf *b,
                                     spc_error *e);
SPC_INTERNAL void spc_buf_close(spc_buf *b);
/* First bytes of a file (up to n) without reading it all; returns count. */
SPC_INTERNAL size_t spc_peek(const char *path, unsigned char *dst, size_t n);

/* ---- output: temporary file renamed into place on commit ---------------- */
typedef struct spc_out {
  FILE *f;
  void *gz; /* gzFile when compressing */
  char tmp[4096];
  char final[4096];
  spc_status st;
} spc_out;

/* A fresh temporary name beside path ("dir/.name.XXXXXX"), created empty. */
SPC_INTERNAL spc_status spc_tmpname(const char *path, char *tmp, size_t n,
                                    spc_error *e);
/* Rename tmp to path (or remove tmp when st != SPC_OK). */
SPC_INTERNAL spc_status spc_commit_tmp(const char *tmp, const char *path,
                                       spc_status st, spc_error *e);
SPC_INTERNAL spc_status spc_out_open(spc_out *o, const char *path, int gzip,
                                     spc_error *e);
SPC_INTERNAL spc_status spc_out_write(spc_out *o, const void *p, size_t n,
                                      spc_error *e);
/* Finish: on st == SPC_OK flush and rename, else remove the temporary. */
SPC_INTERNAL spc_status spc_out_close(spc_out *o, spc_status st, spc_error *e);

/* ---- text body parsing, shared by Matrix Market and FROSTT ------------- */
typedef struct spc_text_job {
  const char *path;       /* for messages */
  const char *body, *end; /* the entry lines */
  int64_t first_line;     /* line number of body[0] */
  char comment;           /* '%' or '#' */
  int order;              /* index tokens per line */
  int ntok;               /* value tokens per line in the file (0, 1, 2) */
  bool infer_dims;        /* FROSTT without given dims */
  int64_t dims[SPC_MAX_ORDER];
  spc_vtype vt;           /* value type to store */
  int64_t expect;         /* entries announced by a header, -1 if none */
  const char *kind;       /* "Matrix Market", "FROSTT" */
  int threads;
  spc_progress_fn progress;
  void *progress_ctx;
} spc_text_job;

/* Parse the entry lines of job into a new COO tensor. */
SPC_INTERNAL spc_status spc_text_parse(const spc_text_job *job,
                                       spc_tensor **out, spc_error *e);

/* Shortest round-trip text of one value ("re im" for complex, "1" for
 * pattern); buf holds at least 80 bytes.  Returns the length. */
SPC_INTERNAL int spc_format_value(spc_vtype vt, const void *v, char *buf);

/* Parse Matrix Market or FROSTT text held in memory (name for messages and
 * for the kind when the content does not tell).  Used by fuzz targets. */
SPC_API spc_status spc_read_text(const char *name, const char *data,
                                 size_t len, const spc_read_opts *o,
                                 spc_tensor **out, spc_error *e);

/* ---- the containers ----------------------------------------------------- */
SPC_INTERNAL spc_status spc_mtx_read(const char *path, const spc_buf *b,
                                     const spc_read_opts *o, spc_tensor **out,
                                     spc_error *e);
SPC_INTERNAL spc_status spc_tns_read(const char *path, const spc_buf *b,
                                     const spc_read_opts *o, spc_tensor **out,
                                     spc_error *e);
SPC_INTERNAL spc_status spc_mtx_write(const spc_tensor *t, spc_out *o,
                                      const spc_write_opts *wo, spc_error *e);
SPC_INTERNAL spc_status spc_tns_write(const spc_tensor *t, spc_out *o,
                                      const spc_write_opts *wo, spc_error *e);

#endif
