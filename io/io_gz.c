/* io_gz.c -- gzip-compressed Matrix Market coordinate and FROSTT text
 * parsed while it is inflated.  Thread 0 inflates into one reserved
 * address range (it never moves, so readers need no lock on the data); the
 * other threads take pieces of complete lines as they appear and parse each
 * into a COO of its own; when all is inflated thread 0 parses too.  The
 * pieces are then joined in file order.  Inflation (zlib, one stream) is
 * the bound: parsing runs in its shadow. */
#include "spc_io.h"
#include "spc_num.h"
#include <omp.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define PIECE ((size_t)4 << 20) /* bytes of text per piece */
#define HEAD ((size_t)1 << 20)  /* inflated before the header is read */

typedef struct piece {
  spc_text_chunk c;
  spc_tensor *t;
  size_t start;
} piece;

typedef struct gzp {
  const unsigned char *src; /* compressed file (mapped) */
  size_t srclen, srcpos;
  z_stream z;
  char *buf; /* reserved output range */
  size_t cap;
  _Atomic size_t produced;
  _Atomic int state; /* 0 inflating, 1 done, -1 corrupt, -2 out of room, -3 cut short */
  omp_lock_t lock;
  size_t next;       /* start of the next unclaimed piece (under lock) */
  piece **ps;        /* claimed pieces in file order (under lock) */
  int np, capps;
  bool nomem;
  const spc_text_job *job;
} gzp;

/* Inflate up to `want` more bytes (all when want == 0). */
static void inflate_some(gzp *g, size_t want) {
  size_t goal = want ? atomic_load(&g->produced) + want : SIZE_MAX;
  while (atomic_load(&g->state) == 0) {
    size_t have = atomic_load(&g->produced);
    if (have >= goal) return;
    if (have >= g->cap) { atomic_store(&g->state, -2); return; }
    size_t room = g->cap - have < (1u << 20) ? g->cap - have : (1u << 20);
    size_t in = g->srclen - g->srcpos < (1u << 30) ? g->srclen - g->srcpos : (1u << 30);
    g->z.next_in = (unsigned char *)g->src + g->srcpos;
    g->z.avail_in = (uInt)in;
    g->z.next_out = (unsigned char *)g->buf + have;
    g->z.avail_out = (uInt)room;
    int r = inflate(&g->z, Z_NO_FLUSH);
    g->srcpos += in - g->z.avail_in;
    atomic_store(&g->produced, have + (room - g->z.avail_out));
    if (r == Z_STREAM_END) {
      while (g->srcpos < g->srclen && g->src[g->srcpos] == 0) g->srcpos++;
      if (g->srcpos >= g->srclen) { atomic_store(&g->state, 1); return; }
      inflateReset(&g->z); /* another member follows */
    } else if (r != Z_OK && !(r == Z_BUF_ERROR && g->srcpos < g->srclen)) {
      /* the input used up inside the stream: cut short */
      atomic_store(&g->state, r == Z_BUF_ERROR ? -3 : -1);
      return;
    }
  }
}

/* Claim the next piece of complete lines, or say why not: 1 claimed,
 * 0 wait, -1 nothing left. */
static int claim(gzp *g, piece **out) {
  int r = 0;
  omp_set_lock(&g->lock);
  int st = atomic_load(&g->state);
  size_t have = atomic_load(&g->produced), s = g->next, e = 0;
  if (st < 0 || g->nomem) r = -1;
  else if (have - s >= PIECE) {
    const char *nl = memchr(g->buf + s + PIECE - 1, '\n', have - s - PIECE + 1);
    if (nl) e = (size_t)(nl - g->buf) + 1;
  }
  if (!r && !e && st == 1) {
    if (s < have) e = have;
    else r = -1;
  }
  if (!r && e) {
    piece *p = spc_calloc(1, sizeof *p);
    if (p && g->np == g->capps) {
      int nc = g->capps ? 2 * g->capps : 64;
      piece **q = spc_realloc(g->ps, (size_t)nc * sizeof *q);
      if (q) { g->ps = q; g->capps = nc; }
    }
    if (!p || g->np == g->capps) {
      spc_free(p);
      g->nomem = true;
      r = -1;
    } else {
      p->start = s;
      p->c.b = g->buf + s;
      p->c.e = g->buf + e;
      g->ps[g->np++] = p;
      g->next = e;
      *out = p;
      r = 1;
    }
  }
  omp_unset_lock(&g->lock);
  return r;
}

static void parse_piece(gzp *g, piece *p) {
  const spc_text_job *j = g->job;
  int64_t dims[SPC_MAX_ORDER];
  spc_text_count(&p->c, j->comment);
  for (int d = 0; d < SPC_MAX_ORDER; d++) p->c.maxc[d] = -1;
  for (int d = 0; d < j->order; d++) dims[d] = j->infer_dims ? INT64_MAX : j->dims[d];
  p->c.line0 = 1; /* local numbering, shifted when the pieces are joined */
  if (spc_coo_alloc(j->order, dims, p->c.nent, j->vt, &p->t, NULL)) {
    g->nomem = true;
    return;
  }
  spc_text_parse_chunk(j, &p->c, p->t);
}

static void work(gzp *g) {
  for (;;) {
    piece *p = NULL;
    int r = claim(g, &p);
    if (r < 0) return;
    if (r > 0) { parse_piece(g, p); continue; }
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
}

/* Join the pieces in order into one COO (coordinates narrowed to the final
 * widths), or report the earliest error with its line in the file. */
static spc_status join(gzp *g, spc_tensor **out, spc_error *e) {
  const spc_text_job *j = g->job;
  int64_t n = 0, line = j->first_line, dims[SPC_MAX_ORDER];
  bool u64 = false;
  for (int k = 0; k < g->np; k++) {
    piece *p = g->ps[k];
    if (p->c.st)
      return spc_err(e, p->c.st, j->path, p->c.eline + line - 1, p->c.ecol, "%s", p->c.emsg);
    u64 |= p->c.need_u64;
    p->c.k0 = n;
    n += p->c.nent;
    line += p->c.nlines;
  }
  if (u64 && j->vt == SPC_I64) return SPC_NOT_HANDLED;
  if (j->expect >= 0 && n != j->expect)
    return spc_err(e, SPC_ERR_INPUT, j->path, line - 1, 0,
                   "the header announces %lld entries but the file has %s%lld",
                   (long long)j->expect, n > j->expect ? "more: " : "", (long long)n);
  unsigned zb = 0; /* FROSTT dimensions counted from 0 (spc_text_zero_based) */
  for (int d = 0; d < j->order; d++) {
    int64_t mx = -1;
    for (int k = 0; k < g->np; k++) {
      if (g->ps[k]->c.maxc[d] > mx) mx = g->ps[k]->c.maxc[d];
      if (j->infer_dims && g->ps[k]->c.zero[d]) zb |= 1u << d;
    }
    if (j->infer_dims && (zb >> d & 1) && mx == INT64_MAX - 1)
      return spc_err(e, SPC_ERR_OVERFLOW, j->path, 0, 0,
                     "mode %d counts from 0 and has index %lld: its dimension would pass 2^63 - 1",
                     d + 1, (long long)INT64_MAX);
    dims[d] = j->infer_dims ? mx + 1 + (zb >> d & 1) : j->dims[d];
  }
  spc_tensor *t = NULL;
  spc_status s = spc_coo_alloc(j->order, dims, n, j->vt, &t, e);
  if (s) return s;
  size_t w = spc_vtype_size(j->vt);
#pragma omp parallel for schedule(dynamic, 1)
  for (int k = 0; k < g->np; k++) {
    const piece *p = g->ps[k];
    for (int l = 0; l < j->order; l++) {
      const spc_array *a = &p->t->lv[l].arr[l == 0];
      spc_array *b = &t->lv[l].arr[l == 0];
      if (a->type == b->type)
        memcpy((char *)b->data + p->c.k0 * (a->type == SPC_IDX32 ? 4 : 8), a->data,
               (size_t)p->c.nent * (a->type == SPC_IDX32 ? 4 : 8));
      else if (a->type == SPC_IDX64) /* inferred dimensions: narrow */
        for (int64_t q = 0; q < p->c.nent; q++)
          ((int32_t *)b->data)[p->c.k0 + q] = (int32_t)((const int64_t *)a->data)[q];
      else
        for (int64_t q = 0; q < p->c.nent; q++) spc_arr_set(b, p->c.k0 + q, spc_arr_get(a, q));
    }
    if (w) memcpy((char *)t->val + p->c.k0 * (int64_t)w, p->t->val, (size_t)p->c.nent * w);
  }
  spc_text_shift_modes(t, zb);
  *out = t;
  return SPC_OK;
}

static spc_status run(gzp *g, const char *path, const spc_read_opts *o,
                      spc_tensor **out, spc_error *e) {
  spc_mtx_info mi;
  spc_text_job job;
  bool mtx;
  inflate_some(g, HEAD);
  size_t have = atomic_load(&g->produced);
  int st = atomic_load(&g->state);
  if (st < 0) return SPC_NOT_HANDLED;
  mtx = have >= 14 && !strncasecmp(g->buf, "%%MatrixMarket", 14);
  if (mtx) {
    spc_error tmp;
    if (spc_mtx_header(path, g->buf, have, o, &mi, &tmp) || mi.array ||
        mi.body > have || (st == 0 && g->buf[mi.body - 1] != '\n'))
      return SPC_NOT_HANDLED; /* the ordinary path reports any error */
    job = mi.job;
  } else {
    int64_t line;
    const char *le;
    int nf = spc_tns_first_fields(g->buf, g->buf + have, &line, &le);
    if ((st == 0 && le == g->buf + have) || nf < 2 || nf - 1 > SPC_MAX_ORDER || o->ndims || o->vtype == SPC_C128)
      return SPC_NOT_HANDLED;
    job = (spc_text_job){.path = path, .first_line = 1, .comment = '#',
                         .order = nf - 1, .ntok = 1, .infer_dims = true, .from0 = true,
                         .vt = o->vtype == SPC_VTYPE_AUTO ? SPC_F64 : o->vtype,
                         .expect = -1, .kind = "FROSTT"};
    mi.body = 0;
  }
  g->job = &job;
  g->next = mi.body;
#pragma omp parallel num_threads(o->threads > 0 ? o->threads : omp_get_max_threads())
  {
    if (omp_get_thread_num() == 0) {
      while (atomic_load(&g->state) == 0) {
        inflate_some(g, 8u << 20);
        if (o->progress)
          o->progress(o->progress_ctx, "inflate", (double)g->srcpos / (double)(g->srclen + 1));
      }
    }
    work(g);
  }
  if (g->nomem) return SPC_NOMEM(e);
  st = atomic_load(&g->state);
  if (st == -2) return SPC_NOT_HANDLED;
  if (st == -3) return spc_err(e, SPC_ERR_INPUT, path, 0, 0, "gzip data ends early (truncated file)");
  if (st == -1)
    return spc_err(e, SPC_ERR_INPUT, path, 0, 0, "corrupt gzip data: %s",
                   g->z.msg ? g->z.msg : "inflate failed");
  spc_tensor *t = NULL;
  spc_status s = join(g, &t, e);
  if (s == SPC_NOT_HANDLED) return s;
  if (mtx) return (s = spc_mtx_finish(path, &mi, o, &t, s, e)) ? s : (*out = t, SPC_OK);
  if (!s) spc_tns_note(path, t, o);
  *out = t;
  return s;
}

spc_status spc_gz_text_read(const char *path, const spc_read_opts *o,
                            spc_tensor **out, spc_error *e) {
  int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
  *out = NULL;
  if (nt < 2) return SPC_NOT_HANDLED;
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) || sb.st_size < 18) {
    if (fd >= 0) close(fd);
    return SPC_NOT_HANDLED;
  }
  gzp g = {.srclen = (size_t)sb.st_size};
  void *m = mmap(NULL, g.srclen, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return SPC_NOT_HANDLED;
  g.src = m;
  /* room for far more than text compresses to; pages are used as written */
  g.cap = g.srclen * 64 + (64u << 20);
  void *r = mmap(NULL, g.cap, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  spc_status s = SPC_NOT_HANDLED;
  if (r != MAP_FAILED && inflateInit2(&g.z, 16 + MAX_WBITS) == Z_OK) {
    g.buf = r;
    omp_init_lock(&g.lock);
    s = run(&g, path, o, out, e);
    omp_destroy_lock(&g.lock);
    inflateEnd(&g.z);
  }
  for (int k = 0; k < g.np; k++) {
    spc_tensor_free(&g.ps[k]->t);
    spc_free(g.ps[k]);
  }
  spc_free(g.ps);
  if (r != MAP_FAILED) munmap(r, g.cap);
  munmap(m, g.srclen);
  return s;
}
