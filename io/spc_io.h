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
  bool gz;  /* gzip: the bytes deflated in chunks on threads (io_buf.c) */
  int threads; /* 0: OpenMP's count (set after spc_out_open) */
  unsigned char *in; /* gzip: input not deflated yet (inlen of incap) */
  size_t inlen, incap;
  unsigned char dict[32768]; /* the last 32 KiB deflated: the next chunk's window */
  size_t dictlen;
  unsigned long crc; /* of everything deflated */
  uint64_t isize;
  char tmp[4096];
  char final[4096];
  spc_status st;
} spc_out;

/* A fresh temporary name beside path ("dir/.name.XXXXXX"), created empty. */
/* Removes the temporary files of the outputs being written (async-signal
 * safe; spc_cleanup_temp_files). */
SPC_INTERNAL void spc_io_cleanup_outputs(void);
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
  bool from0;             /* with infer_dims, the file read whole: a mode with
                             an index 0 counts from 0 (spc_text_zero_based);
                             read in blocks (io_stream.c) an index 0 is
                             refused, the whole file not seen */
  bool lax;               /* Matrix Market as SciPy reads it: text after a
                             real, integer or pattern entry's last field is
                             ignored; a complex value of one number has
                             imaginary part 0 */
  int64_t dims[SPC_MAX_ORDER];
  spc_vtype vt;           /* value type to store */
  int64_t expect;         /* entries announced by a header, -1 if none */
  const char *kind;       /* "Matrix Market", "FROSTT" */
  int threads;
  spc_progress_fn progress;
  void *progress_ctx;
} spc_text_job;

/* A piece of the entry lines, parsed by one thread. */
typedef struct spc_text_chunk {
  const char *b, *e;
  int64_t nlines, nent;  /* counted by spc_text_count */
  int64_t line0, k0;     /* first line number, first entry index */
  int64_t maxc[SPC_MAX_ORDER]; /* largest 0-based coordinate seen */
  bool zero[SPC_MAX_ORDER]; /* FROSTT: an index 0 seen (its coordinate -1 until
                               spc_text_zero_based shifts the dimension) */
  bool need_u64;         /* an integer above INT64_MAX was seen */
  spc_status st;         /* first error in this chunk */
  int64_t eline, ecol;
  char emsg[256];
} spc_text_chunk;
/* Count the lines and entries of c. */
SPC_INTERNAL void spc_text_count(spc_text_chunk *c, char comment);
/* FROSTT with inferred dimensions: each dimension of t in which a chunk saw
 * an index 0 (zero[d] of cs[0..nch)) counts from 0 -- SPLATT's reading,
 * mode by mode: its coordinates (parsed as index - 1) shifted up by one,
 * maxc[d] of the chunks too, and the dimension's bit set in
 * t->zero_based.  Before the dimensions are set from maxc. */
SPC_INTERNAL void spc_text_zero_based(spc_tensor *t, spc_text_chunk *const *cs, int nch);
/* The coordinates of t's COO dimensions in mask shifted up by one and
 * their bits set in t->zero_based. */
SPC_INTERNAL void spc_text_shift_modes(spc_tensor *t, unsigned mask);
/* The line number of entry k (0-based: blank and comment lines are not
 * entries) of the lines [body, end), body[0] on line first_line; 0 when
 * there are not that many entries.  For messages: it reads the lines. */
SPC_INTERNAL int64_t spc_text_entry_line(const char *body, const char *end,
                                         int64_t first_line, char comment, int64_t k);
/* Parse the entries of c into t's COO arrays from position c->k0; the
 * first error is recorded in c (st, eline, ecol, emsg). */
SPC_INTERNAL void spc_text_parse_chunk(const spc_text_job *j,
                                       spc_text_chunk *c, spc_tensor *t);
/* Narrow 64-bit coordinate arrays to 32 bits where the dimension allows. */
SPC_INTERNAL spc_status spc_text_narrow(spc_tensor *t, spc_error *e);

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

/* Matrix Market header (banner, comments, size line) of data: the entry
 * job (without body/end), where the body starts, and what the finish needs. */
typedef struct spc_mtx_info {
  spc_text_job job;
  size_t body;      /* offset of the first entry line */
  bool array, pattern, h_vector;
  bool rect_sym;    /* a symmetric kind, not square: always expanded, each
                       mirror checked to fall inside (SciPy reads it so) */
  int h_field;
  bool h_floats;
  spc_symmetry sym;
} spc_mtx_info;
/* Dimensions the caller gave (o->ndims, for FROSTT) against a file that
 * states its own: equal, or SPC_ERR_ARG naming both (none given: ok). */
SPC_INTERNAL spc_status spc_dims_given(const char *path, const spc_read_opts *o, int order,
                                       const int64_t *dims, spc_error *e);
SPC_INTERNAL spc_status spc_mtx_header(const char *path, const char *data,
                                       size_t len, const spc_read_opts *o,
                                       spc_mtx_info *mi, spc_error *e);
/* After the entries of a coordinate file are parsed into *t (status s):
 * record the symmetry, fill pattern values, expand on request; on error
 * free *t and make sure the error names path. */
SPC_INTERNAL spc_status spc_mtx_finish(const char *path, const spc_mtx_info *mi,
                                       const spc_read_opts *o, spc_tensor **t,
                                       spc_status s, spc_error *e);
/* Read a gzip-compressed Matrix Market coordinate or FROSTT file while
 * inflating it (one thread inflates, the others parse behind it).
 * SPC_NOT_HANDLED when this path does not apply (one thread, array files,
 * values needing uint64, ...): the caller inflates first instead. */
SPC_INTERNAL spc_status spc_gz_text_read(const char *path,
                                         const spc_read_opts *o,
                                         spc_tensor **out, spc_error *e);

/* FROSTT: the number of fields of the first entry line of [p, end) (0 when
 * there is none), its line number and where that line ends (end when it
 * runs to the end of the range). */
SPC_INTERNAL int spc_tns_first_fields(const char *p, const char *end,
                                      int64_t *line, const char **line_end);

/* ---- the containers ----------------------------------------------------- */
SPC_INTERNAL spc_status spc_mtx_read(const char *path, const spc_buf *b,
                                     const spc_read_opts *o, spc_tensor **out,
                                     spc_error *e);
/* o->notice (where given) says which dimensions of t a FROSTT file counted
 * from 0, if any. */
SPC_INTERNAL void spc_tns_note(const char *path, const spc_tensor *t, const spc_read_opts *o);
SPC_INTERNAL spc_status spc_tns_read(const char *path, const spc_buf *b,
                                     const spc_read_opts *o, spc_tensor **out,
                                     spc_error *e);
SPC_INTERNAL spc_status spc_mtx_write(const spc_tensor *t, spc_out *o,
                                      const spc_write_opts *wo, spc_error *e);
/* A tensor's components as text lines through spc_iter, formatted in
 * blocks on threads: Matrix Market's size line and lines (mm), or
 * FROSTT's (io_mtx_write.c). */
SPC_INTERNAL spc_status spc_text_write_walk(const spc_tensor *t, spc_out *o,
                                            const spc_write_opts *wo, bool mm,
                                            spc_error *e);
SPC_INTERNAL spc_status spc_tns_write(const spc_tensor *t, spc_out *o,
                                      const spc_write_opts *wo, spc_error *e);

#endif
