/* npz_internal.h -- scipy.sparse .npz files (a zip of .npy arrays): private
 * to the pieces (zip_write.c, zip_read.c, npy.c, npz_write.c, npz_read.c).
 * Not installed.  The helpers both binary containers share (error records
 * with a key, validation of a tensor assembled from a file, the read
 * options) are in cnt_common.c and cnt_finish.c.
 *
 * Layout written (as scipy.sparse.save_npz): coo -> row, col, data, shape,
 * format; csr / csc -> indices, indptr, data, shape, format.  `format` is a
 * 0-d '<U3' array, `shape` a 1-d '<i8' array of 2.  Index arrays keep their
 * 32/64-bit width ('<i4' / '<i8').  Entries are stored, or deflated when
 * o->gzip > 0; ZIP64 records are written where a size or offset reaches
 * 4 GiB.  The host must be little-endian (checked at compile time). */
#ifndef NPZ_INTERNAL_H
#define NPZ_INTERNAL_H

#include "cnt_internal.h"
#include <stdio.h>
#include <zlib.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the npz code moves host arrays as little-endian .npy data"
#endif

/* ======================================================================
 * Little-endian fields
 * ====================================================================== */

static inline void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static inline void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline unsigned get16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static inline uint32_t get32(const unsigned char *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p) {
  return get32(p) | (uint64_t)get32(p + 4) << 32;
}

#define Z_LOCAL 0x04034b50u
#define Z_CENTRAL 0x02014b50u
#define Z_EOCD 0x06054b50u
#define Z_EOCD64 0x06064b50u
#define Z_LOC64 0x07064b50u
#define Z_MAX32 0xFFFFFFFFu
#define Z_DOSDATE 0x21 /* 1980-01-01: fixed, so output is reproducible */
#define CHUNK (1u << 18)

/* ---- zip_write.c ------------------------------------------------------- */

typedef struct zentry {
  const char *name;
  uint64_t off, csize, usize;
  uint32_t crc;
  unsigned method;
} zentry;

typedef struct zwriter {
  FILE *f;
  const char *path;
  spc_error *e;
  bool deflate;
  int n;
  zentry ent[5];
  unsigned char buf[CHUNK];   /* deflate output */
  double ones[CHUNK / 8];     /* data of a pattern tensor */
} zwriter;

/* An entry's content: a .npy header, then nbytes of data (or of 1.0s). */
typedef struct zsrc {
  const unsigned char *hdr;
  size_t hlen;
  const void *data;
  uint64_t nbytes;
  bool ones;
} zsrc;

/* Append one entry. */
SPC_INTERNAL spc_status spc_cnt_zw_entry(zwriter *w, const char *name, const zsrc *s,
                                 const unsigned char *ones);
/* Central directory and end records. */
SPC_INTERNAL spc_status spc_cnt_zw_finish(zwriter *w);

/* ---- zip_read.c -------------------------------------------------------- */

#define NPZ_MAX_ENTRIES 64

typedef struct zdirent {
  char name[64];
  unsigned method, flags;
  uint32_t crc;
  uint64_t csize, usize, off;
} zdirent;

typedef struct zfile {
  FILE *f;
  const char *path;
  spc_error *e;
  uint64_t size;
  int n;
  zdirent ent[NPZ_MAX_ENTRIES];
  unsigned char in[CHUNK];  /* compressed input */
  unsigned char tmp[CHUNK]; /* elements awaiting conversion */
} zfile;

/* A reader of one entry's uncompressed bytes, checking size and crc32. */
typedef struct zr {
  zfile *zf;
  const zdirent *d;
  uint64_t cleft; /* compressed bytes not yet taken from the file */
  uint64_t done;  /* uncompressed bytes delivered */
  uLong crc;
  bool zinit;
  z_stream zs;
} zr;

/* Read the end records and the central directory. */
SPC_INTERNAL spc_status spc_cnt_zf_open(zfile *z);
SPC_INTERNAL spc_status spc_cnt_zr_open(zfile *z, const char *name, zr *r);
/* Exactly n uncompressed bytes into dst. */
SPC_INTERNAL spc_status spc_cnt_zr_read(zr *r, void *dst, uint64_t n);
/* Check the entry was consumed exactly and its crc32; release. */
SPC_INTERNAL spc_status spc_cnt_zr_close(zr *r, spc_status s);

/* ---- npy.c ------------------------------------------------------------- */

/* A .npy (version 1.0) header for a 1-d array of n (n < 0: 0-d) elements;
 * padded so the data starts at a multiple of 64 bytes.  buf >= 128. */
SPC_INTERNAL size_t spc_cnt_npy_header(unsigned char *buf, const char *descr, int64_t n);
/* The same for an array of ndim (1-3) dimensions, C order. */
SPC_INTERNAL size_t spc_cnt_npy_header_nd(unsigned char *buf, const char *descr, int ndim,
                                          const int64_t *shape);
SPC_INTERNAL const char *spc_cnt_npy_descr(spc_vtype vt);

typedef struct npy {
  char kind; /* b i u f c U S */
  int isz;   /* bytes per element */
  int ndim;  /* C order (a Fortran-order array of more than one dimension is refused) */
  int64_t shape[8];
  int64_t count;
  uint64_t bytes;
} npy;

/* Open entry name and parse its .npy header; r is then at the data. */
SPC_INTERNAL spc_status spc_cnt_npy_open(zfile *z, const char *name, zr *r, npy *h);
SPC_INTERNAL bool spc_cnt_is_int(const npy *h);
/* Read the data of r (h->count elements) converted: integers to int64,
 * complex64 to complex128. */
SPC_INTERNAL spc_status spc_cnt_read_conv(zr *r, const npy *h, void *dst);

#endif
