/* test_spw.c -- suite_spw: the sparse workspace (spw/spw.h) and its use
 * in conversion (spc_convert_opts spw / acc / mem, CLI --spw --acc --mem).
 *
 *   unit       spw_create / push / pack on generated point streams (many
 *              duplicates, random order, fixed seed; coordinates negative,
 *              positive and at the int64 extremes): hash and list x Acc
 *              capacity 1, 2, 3, the number of distinct tuples, n, more
 *              than n x ascending / descending x every dup policy x L = 1,
 *              2, 3 x f64, i64, c128, pattern, pushed in ragged chunks.
 *              The pack equals a serial reference computed here (stable
 *              sort by tuple, then combine in arrival order: first keeps
 *              the earliest, last the latest, sum left to right, min/max
 *              replace only on strict < / >), compared bit for bit;
 *              --dup=error fails naming a tuple that occurs twice and
 *              passes on a duplicate-free stream; a packed workspace is
 *              empty and reusable; n = 0 and n = 1; L outside 1..16;
 *              NULL values for a valued type (zeros);
 *   spill      mem = 1 KiB with tmpdir a fresh folder: runs spilled (files
 *              seen there before pack), result = reference, folder empty
 *              after pack and after spw_free; also after a failing run
 *              (dup=error met after spilling), an unusable tmpdir
 *              (SPC_ERR_IO), $TMPDIR when tmpdir is NULL, and
 *              spw_cleanup_files (files of two live workspaces); every
 *              allocation failing in turn while spilling (SPC_ERR_NOMEM,
 *              no file left, then the reference);
 *   convert    every shared matrix (read with expand) to csc, csr, coo,
 *              dia, dcsr through the workspace (hash / list, acc 1, 3 up to
 *              6000 components, acc 2n+1; bucket, bucket acc 3; a tiny
 *              mem, hash / list / bucket by turns;
 *              one of these by turns above 50000 components; max_positions
 *              2^21) = the same conversion without it (spw NONE): level
 *              arrays and values bit for bit, refusals with the same
 *              status and message, $TMPDIR left empty; hand-made matrices
 *              with duplicates under every dup policy; the plan's sort by
 *              the bucket flush (2^16 components or more, out of order,
 *              short rows) = --plan=sort bit for bit, and not taken on
 *              long rows; csf and a mode
 *              reordering (a user order-3 format, remap (i,j,k) ->
 *              (k,i,j), since csf takes no mode order through the API)
 *              on the shared tensors;
 *   bucket     the bucket kind (SPW_BUCKET) against the reference on
 *              shuffled streams with duplicates: short and long segments
 *              (and both in one group), L = 1..3, negative coordinates,
 *              inner levels of 45 bits (keys past 32 bits in a group),
 *              every value type and dup policy, inexact float sums,
 *              ascending / descending, pushed in chunks and by
 *              spw_push_pack (reading the columns, or taking copies of
 *              them: written over or freed, ASan sees); bucketed (spw_stats.bucketed) where level 0
 *              can be counted, not where it is too wide or does not pack;
 *              Acc grown past 2^18 points (one flush), given up past a
 *              budget (flushes, merges) and spilled at 1 MiB;
 *   cli        --spw=hash --acc=3 to .bsp.h5, `spconv cat` back to .mtx:
 *              the file's components, and the arrays of the run without
 *              --spw; bad --spw / --acc / --mem exit 1 with a message
 *              naming the option and write nothing; --spw=bucket -v: one
 *              flush, the same arrays; --mem=4K leaves
 *              $TMPDIR empty (and equals the run without it), fails with
 *              exit 3 when $TMPDIR does not exist (so it does spill), and
 *              leaves $TMPDIR empty when the run fails on --dup=error;
 *   order      float sums of duplicates in different flushes equal the
 *              serial left-to-right sum bit for bit (hash and list, acc
 *              1, 8, 64, ascending and descending; runs spilled with mem
 *              1 KiB, the tmpdir left empty; and through spc_convert_to against the conversion without
 *              the workspace); spw_get_stats gives the last pack's
 *              statistics (the same points packed twice: the same
 *              flushes and merges).
 *
 * SPW_TIMING=1 prints the time of every workspace conversion (and every
 * shared matrix) to stderr. */
#include "spw.h"
#include "suites.h"
#include "testutil.h"
#include <errno.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- random numbers and streams ------------------------------------------------ */

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s; }
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A stream of n points: coordinates c[l][t], values v (n * W bytes). */
typedef struct stream {
  int L;
  spc_vtype vt;
  size_t W;
  int64_t n;
  int64_t *c[SPC_MAX_ORDER];
  unsigned char *v;
} stream;

enum { S_DUPS, S_DISTINCT, S_WIDE }; /* coordinate kinds */
enum { V_EXACT, V_INEXACT };         /* value kinds */

static const char *vt_label(spc_vtype vt) { return spc_vtype_name(vt); }

static void stream_free(stream *s) {
  for (int l = 0; l < SPC_MAX_ORDER; l++)
    free(s->c[l]), s->c[l] = NULL;
  free(s->v);
  s->v = NULL;
}

/* A double whose sums over a stream are exact (multiples of 1/8, small),
 * or +-0 now and then (ties for min / max); V_INEXACT: any double in
 * (-1, 1), whose sums round. */
static double rnd_f64(int vk) {
  if (vk == V_INEXACT)
    return ((double)(rnd() >> 11) / 9007199254740992.0) * 2 - 1;
  uint64_t r = rnd();
  if (r % 6 == 0)
    return (r >> 8) & 1 ? -0.0 : 0.0;
  return (double)((int64_t)((r >> 8) % 4001) - 2000) / 8.0;
}

static void fill_value(const stream *s, int64_t t, int vk) {
  unsigned char *p = s->v + t * (int64_t)s->W;
  if (s->vt == SPC_F64) {
    double d = rnd_f64(vk);
    memcpy(p, &d, 8);
  } else if (s->vt == SPC_I64) {
    int64_t x = (int64_t)rnd(); /* sums wrap */
    if (rnd() % 4 == 0)
      x %= 5; /* ties */
    memcpy(p, &x, 8);
  } else if (s->vt == SPC_C128) {
    double d[2] = {rnd_f64(vk), rnd_f64(vk)};
    if (rnd() % 3 == 0)
      d[0] = 1.5; /* ties of the real part */
    memcpy(p, d, 16);
  }
}

static const int64_t wide_pool[] = {INT64_MIN, INT64_MIN + 1,    -(INT64_C(1) << 40), -1,       0, 1,
                                    3,         INT64_C(1) << 33, INT64_MAX - 1,       INT64_MAX};
#define NWIDE ((int)(sizeof wide_pool / sizeof wide_pool[0]))

/* P per level such that P^L is about `cells`. */
static int64_t per_level(double cells, int L) {
  int64_t P = 1;
  while (1) {
    double c = 1;
    for (int l = 0; l < L; l++)
      c *= (double)(P + 1);
    if (c > cells)
      break;
    P++;
  }
  return P < 2 ? 2 : P;
}

static int64_t pool_coord(int64_t k) { return (k * 37) % 101 - 50 + (k / 101) * 1000; }

static stream make_stream(int L, spc_vtype vt, int64_t n, int ck, int vk, uint64_t seed) {
  stream s;
  memset(&s, 0, sizeof s);
  rng_seed(seed);
  s.L = L;
  s.vt = vt;
  s.W = spc_vtype_size(vt);
  s.n = n;
  for (int l = 0; l < L; l++)
    s.c[l] = malloc((size_t)(n ? n : 1) * 8);
  s.v = malloc((size_t)(n ? n : 1) * (s.W ? s.W : 1));
  if (ck == S_DISTINCT) {
    int64_t P = 1, cells = 1;
    while (cells < n + n / 2 + 1) { /* P^L >= 1.5 n */
      P++;
      cells = 1;
      for (int l = 0; l < L; l++)
        cells *= P;
    }
    int64_t *ids = malloc((size_t)cells * 8);
    for (int64_t i = 0; i < cells; i++)
      ids[i] = i;
    for (int64_t i = cells - 1; i > 0; i--) { /* Fisher-Yates */
      int64_t j = (int64_t)(rnd() % (uint64_t)(i + 1)), x = ids[i];
      ids[i] = ids[j];
      ids[j] = x;
    }
    for (int64_t t = 0; t < n; t++) {
      int64_t id = ids[t];
      for (int l = L - 1; l >= 0; l--) {
        s.c[l][t] = pool_coord(id % P);
        id /= P;
      }
    }
    free(ids);
  } else {
    int64_t P = ck == S_WIDE ? NWIDE : per_level((double)n / 4, L);
    for (int64_t t = 0; t < n; t++)
      for (int l = 0; l < L; l++) {
        int64_t k = (int64_t)(rnd() % (uint64_t)P);
        s.c[l][t] = ck == S_WIDE ? wide_pool[k] : pool_coord(k);
      }
  }
  for (int64_t t = 0; t < n; t++)
    fill_value(&s, t, vk);
  return s;
}

/* ---- the serial reference ------------------------------------------------------- */

static const stream *g_cmp_stream;
static bool g_cmp_desc;

static int tuple_cmp(const stream *s, int64_t a, int64_t b) {
  for (int l = 0; l < s->L; l++)
    if (s->c[l][a] != s->c[l][b])
      return s->c[l][a] < s->c[l][b] ? -1 : 1;
  return 0;
}

static int ref_qcmp(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c = tuple_cmp(g_cmp_stream, a, b);
  if (g_cmp_desc)
    c = -c;
  if (c)
    return c;
  return a < b ? -1 : a > b; /* stable: arrival order */
}

static int c128_cmp(const double *a, const double *b) {
  if (a[0] != b[0])
    return a[0] < b[0] ? -1 : 1;
  if (a[1] != b[1])
    return a[1] < b[1] ? -1 : 1;
  return 0;
}

/* dst = dst (earlier) combined with src (later), written out here. */
static void ref_combine(spc_vtype vt, spc_dup dup, unsigned char *dst, const unsigned char *src) {
  if (vt == SPC_PATTERN || dup == SPC_DUP_FIRST)
    return;
  if (dup == SPC_DUP_LAST) {
    memcpy(dst, src, spc_vtype_size(vt));
    return;
  }
  if (vt == SPC_I64) {
    int64_t d, s;
    memcpy(&d, dst, 8);
    memcpy(&s, src, 8);
    if (dup == SPC_DUP_SUM)
      d = (int64_t)((uint64_t)d + (uint64_t)s);
    else if ((dup == SPC_DUP_MIN && s < d) || (dup == SPC_DUP_MAX && s > d))
      d = s;
    memcpy(dst, &d, 8);
  } else if (vt == SPC_F64) {
    double d, s;
    memcpy(&d, dst, 8);
    memcpy(&s, src, 8);
    if (dup == SPC_DUP_SUM)
      d = d + s;
    else if ((dup == SPC_DUP_MIN && s < d) || (dup == SPC_DUP_MAX && s > d))
      d = s;
    memcpy(dst, &d, 8);
  } else if (vt == SPC_C128) {
    double d[2], s[2];
    memcpy(d, dst, 16);
    memcpy(s, src, 16);
    if (dup == SPC_DUP_SUM)
      d[0] = d[0] + s[0], d[1] = d[1] + s[1];
    else if ((dup == SPC_DUP_MIN && c128_cmp(s, d) < 0) || (dup == SPC_DUP_MAX && c128_cmp(s, d) > 0))
      memcpy(d, s, 16);
    memcpy(dst, d, 16);
  }
}

/* Sorted, combined: returns the number of duplicates met (combined away). */
static int64_t reference(const stream *s, bool desc, spc_dup dup, stream *out) {
  memset(out, 0, sizeof *out);
  out->L = s->L;
  out->vt = s->vt;
  out->W = s->W;
  int64_t n = s->n, *idx = malloc((size_t)(n ? n : 1) * 8);
  for (int64_t t = 0; t < n; t++)
    idx[t] = t;
  g_cmp_stream = s;
  g_cmp_desc = desc;
  qsort(idx, (size_t)n, 8, ref_qcmp);
  for (int l = 0; l < s->L; l++)
    out->c[l] = malloc((size_t)(n ? n : 1) * 8);
  out->v = malloc((size_t)(n ? n : 1) * (s->W ? s->W : 1));
  int64_t m = 0, dups = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t t = idx[k];
    if (m > 0 && tuple_cmp(s, idx[k - 1], t) == 0) {
      dups++;
      if (s->W)
        ref_combine(s->vt, dup, out->v + (m - 1) * (int64_t)s->W, s->v + t * (int64_t)s->W);
      continue;
    }
    for (int l = 0; l < s->L; l++)
      out->c[l][m] = s->c[l][t];
    if (s->W)
      memcpy(out->v + m * (int64_t)s->W, s->v + t * (int64_t)s->W, s->W);
    m++;
  }
  out->n = m;
  free(idx);
  return dups;
}

/* ---- running the workspace ----------------------------------------------------- */

static const char *dup_names[] = {"sum", "first", "last", "min", "max", "error"};
static const char *kind_names[] = {"hash", "list", "bucket"};

typedef struct cfg {
  spw_kind kind;
  int64_t acc, mem;
  bool desc;
  spc_dup dup;
  const char *tmpdir;
  int pp;          /* spw_push_pack of the whole stream, not push_all + pack:
                      1 reading the stream, 2 taking copies of its columns */
  int want_bucket; /* 1: every flush bucketed, -1: none, 0: not checked */
} cfg;

static void cfg_text(const cfg *c, const stream *s, char *b, size_t n) {
  snprintf(b, n, "kind=%s%s acc=%lld mem=%lld %s dup=%s L=%d vt=%s n=%lld", kind_names[c->kind],
           c->pp == 2 ? " (push_pack, taken)" : c->pp ? " (push_pack)" : "", (long long)c->acc, (long long)c->mem,
           c->desc ? "descending" : "ascending", dup_names[c->dup], s->L, vt_label(s->vt), (long long)s->n);
}

/* The packed result, owned here (malloc'ed copies). */
typedef struct packed {
  spc_status st;
  spc_error e;
  stream r;
  spw_stats stats;
} packed;

/* Push s in ragged chunks (1, 2, 5, 17, 64, 257, ...), then pack. */
static spc_status push_all(spw *w, const stream *s, spc_error *e) {
  static const int64_t chunks[] = {1, 2, 5, 17, 64, 257, 3, 1000};
  int64_t t0 = 0;
  for (int k = 0; t0 < s->n; k = (k + 1) % 8) {
    int64_t m = chunks[k] < s->n - t0 ? chunks[k] : s->n - t0;
    const int64_t *cols[SPC_MAX_ORDER];
    for (int l = 0; l < s->L; l++)
      cols[l] = s->c[l] + t0;
    spc_status st = spw_push(w, m, cols, s->W ? s->v + t0 * (int64_t)s->W : NULL, e);
    if (st)
      return st;
    t0 += m;
  }
  return SPC_OK;
}

static void take_pack(spw *w, const stream *s, packed *p) {
  int64_t *cols[SPC_MAX_ORDER] = {0};
  void *vals = NULL;
  int64_t n = -1;
  memset(&p->r, 0, sizeof p->r);
  p->r.L = s->L;
  p->r.vt = s->vt;
  p->r.W = s->W;
  p->st = spw_pack(w, &n, cols, &vals, &p->e);
  spw_get_stats(w, &p->stats);
  if (p->st) {
    for (int l = 0; l < s->L; l++)
      tu_check(cols[l] == NULL, "failed pack left cols[%d]", l);
    tu_check(vals == NULL, "failed pack left values");
    return;
  }
  tu_check(n >= 0, "pack: n = %lld", (long long)n);
  p->r.n = n;
  for (int l = 0; l < s->L; l++) {
    tu_check(cols[l] != NULL, "pack: cols[%d] NULL", l);
    p->r.c[l] = malloc((size_t)(n ? n : 1) * 8);
    if (n)
      memcpy(p->r.c[l], cols[l], (size_t)n * 8);
    spc_free(cols[l]);
  }
  p->r.v = malloc((size_t)(n ? n : 1) * (s->W ? s->W : 1));
  if (s->W) {
    tu_check(vals != NULL || n == 0, "pack: values NULL");
    if (n)
      memcpy(p->r.v, vals, (size_t)n * s->W);
  }
  spc_free(vals);
}

/* Create, push, pack, (not free).  Returns the workspace (NULL if create failed). */
static spw *run_spw(const cfg *c, const stream *s, packed *p) {
  spw_opts o = {.kind = c->kind,
                .acc = c->acc,
                .mem = c->mem,
                .descending = c->desc,
                .dup = c->dup,
                .tmpdir = c->tmpdir};
  spw *w = NULL;
  memset(p, 0, sizeof *p);
  p->st = spw_create(s->L, s->vt, &o, &w, &p->e);
  if (p->st)
    return NULL;
  if (c->pp) { /* the whole stream at once, packed */
    int64_t *cols[SPC_MAX_ORDER] = {0};
    const int64_t *in[SPC_MAX_ORDER];
    void *vals = NULL;
    int64_t n = -1;
    for (int l = 0; l < s->L; l++) {
      in[l] = s->c[l];
      if (c->pp == 2) { /* the workspace's to write over or free */
        int64_t *t = spc_malloc_n(s->n ? s->n : 1, 8);
        tu_check(t != NULL, "no memory for a copy of the stream");
        memcpy(t, s->c[l], (size_t)s->n * 8);
        in[l] = t;
      }
    }
    p->st = spw_push_pack(w, s->n, in, s->W ? s->v : NULL, c->pp == 2, &n, cols, &vals, &p->e);
    spw_get_stats(w, &p->stats);
    memset(&p->r, 0, sizeof p->r);
    p->r.L = s->L, p->r.vt = s->vt, p->r.W = s->W;
    if (p->st)
      return w;
    p->r.n = n;
    for (int l = 0; l < s->L; l++) {
      p->r.c[l] = malloc((size_t)(n ? n : 1) * 8);
      if (n)
        memcpy(p->r.c[l], cols[l], (size_t)n * 8);
      spc_free(cols[l]);
    }
    p->r.v = malloc((size_t)(n ? n : 1) * (s->W ? s->W : 1));
    if (s->W && n)
      memcpy(p->r.v, vals, (size_t)n * s->W);
    spc_free(vals);
    return w;
  }
  p->st = push_all(w, s, &p->e);
  if (p->st) {
    spw_get_stats(w, &p->stats);
    return w;
  }
  take_pack(w, s, p);
  return w;
}

/* 0 when got equals want; else why names the first difference. */
static int stream_diff(const stream *got, const stream *want, char *why, size_t n) {
  if (got->n != want->n) {
    snprintf(why, n, "%lld tuples, want %lld", (long long)got->n, (long long)want->n);
    return 1;
  }
  for (int64_t t = 0; t < want->n; t++) {
    for (int l = 0; l < want->L; l++)
      if (got->c[l][t] != want->c[l][t]) {
        snprintf(why, n, "tuple %lld level %d: %lld, want %lld", (long long)t, l, (long long)got->c[l][t],
                 (long long)want->c[l][t]);
        return 1;
      }
    if (want->W && memcmp(got->v + t * (int64_t)want->W, want->v + t * (int64_t)want->W, want->W)) {
      double a[2] = {0, 0}, b[2] = {0, 0};
      long long ia = 0, ib = 0;
      memcpy(want->vt == SPC_I64 ? (void *)&ia : (void *)a, got->v + t * (int64_t)want->W, want->W);
      memcpy(want->vt == SPC_I64 ? (void *)&ib : (void *)b, want->v + t * (int64_t)want->W, want->W);
      if (want->vt == SPC_I64)
        snprintf(why, n, "tuple %lld: value %lld, want %lld", (long long)t, ia, ib);
      else
        snprintf(why, n, "tuple %lld: value %a%+a, want %a%+a", (long long)t, a[0], a[1], b[0], b[1]);
      return 1;
    }
  }
  return 0;
}

/* The tuple named in a --dup=error message occurs at least twice in s. */
static void check_dup_message(const stream *s, const spc_error *e, const char *what) {
  tu_check(strstr(e->msg, "--dup=error") != NULL, "%s: message '%s'", what, e->msg);
  const char *p = strchr(e->msg, '(');
  tu_check(p != NULL, "%s: no tuple in '%s'", what, e->msg);
  int64_t x[SPC_MAX_ORDER];
  p++;
  for (int l = 0; l < s->L; l++) {
    char *end;
    errno = 0;
    x[l] = strtoll(p, &end, 10);
    tu_check(end != p && errno == 0, "%s: tuple in '%s'", what, e->msg);
    p = end;
    if (l + 1 < s->L) {
      tu_check(p[0] == ',' && p[1] == ' ', "%s: tuple in '%s'", what, e->msg);
      p += 2;
    }
  }
  tu_check(*p == ')', "%s: tuple in '%s' has more than %d coordinates", what, e->msg, s->L);
  int64_t seen = 0;
  for (int64_t t = 0; t < s->n; t++) {
    bool eq = true;
    for (int l = 0; l < s->L && eq; l++)
      eq = s->c[l][t] == x[l];
    seen += eq;
  }
  tu_check(seen >= 2, "%s: '%s' names a tuple that occurs %lld time(s)", what, e->msg, (long long)seen);
}

static long g_checks; /* configurations checked, for the summary */

/* One configuration on one stream: the pack equals the reference, or
 * --dup=error fails exactly when the stream has duplicates. */
static void check_cfg(const cfg *c, const stream *s) {
  char what[256], why[512];
  cfg_text(c, s, what, sizeof what);
  stream ref;
  int64_t dups = reference(s, c->desc, c->dup, &ref);
  packed p;
  spw *w = run_spw(c, s, &p);
  tu_check(w != NULL, "%s: spw_create: %s", what, p.e.msg);
  if (c->dup == SPC_DUP_ERROR && dups) {
    tu_check(p.st == SPC_ERR_INPUT, "%s: status %s, want SPC_ERR_INPUT (%lld duplicates)", what,
             spc_status_name(p.st), (long long)dups);
    check_dup_message(s, &p.e, what);
  } else {
    tu_check(p.st == SPC_OK, "%s: %s: %s", what, spc_status_name(p.st), p.e.msg);
    tu_check(!stream_diff(&p.r, &ref, why, sizeof why), "%s: %s", what, why);
    int64_t cap = c->acc;
    tu_check(cap <= 0 || s->n == 0 || p.stats.flushes >= 1, "%s: no flush", what);
    tu_check(cap <= 0 || c->kind != SPW_LIST || p.stats.flushes >= (s->n + cap - 1) / cap,
             "%s: %lld flushes for %lld points in a list of %lld", what, (long long)p.stats.flushes,
             (long long)s->n, (long long)cap);
    tu_check(c->want_bucket != 1 || (p.stats.flushes >= 1 && p.stats.bucketed == p.stats.flushes),
             "%s: %lld of %lld flushes bucketed, want all", what, (long long)p.stats.bucketed,
             (long long)p.stats.flushes);
    tu_check(c->want_bucket != -1 || p.stats.bucketed == 0, "%s: %lld flushes bucketed, want none",
             what, (long long)p.stats.bucketed);
    tu_check(c->kind == SPW_BUCKET || p.stats.bucketed == 0, "%s: bucketed without the bucket kind",
             what);
  }
  stream_free(&p.r);
  stream_free(&ref);
  spw_free(&w);
  tu_check(w == NULL, "spw_free did not clear the handle");
  g_checks++;
}

static int64_t count_distinct(const stream *s) {
  stream ref;
  reference(s, false, SPC_DUP_FIRST, &ref);
  int64_t m = ref.n;
  stream_free(&ref);
  return m;
}

/* ---- unit tests ----------------------------------------------------------------- */

static const spc_vtype vts[] = {SPC_F64, SPC_I64, SPC_C128, SPC_PATTERN};

START_TEST(test_unit_matrix) {
  /* every kind x capacity x order x dup policy x L x value type */
  long before = g_checks;
  for (int L = 1; L <= 3; L++)
    for (int iv = 0; iv < 4; iv++) {
      int64_t n = 240 + 50 * L;
      stream s = make_stream(L, vts[iv], n, S_DUPS, V_EXACT, 1000 + 10 * (uint64_t)L + (uint64_t)iv);
      stream d = make_stream(L, vts[iv], n, S_DISTINCT, V_EXACT, 2000 + 10 * (uint64_t)L + (uint64_t)iv);
      int64_t nd = count_distinct(&s);
      ck_assert_msg(nd < n / 2, "L=%d: stream has %lld distinct of %lld", L, (long long)nd, (long long)n);
      ck_assert_int_eq(count_distinct(&d), n);
      const int64_t caps[] = {1, 2, 3, nd, n, n + 7};
      for (int kind = 0; kind < 3; kind++)
        for (int ic = 0; ic < 6; ic++)
          for (int desc = 0; desc < 2; desc++)
            for (int dup = 0; dup < 6; dup++) {
              cfg c = {.kind = (spw_kind)kind, .acc = caps[ic], .desc = desc, .dup = (spc_dup)dup};
              check_cfg(&c, &s);
              if (dup == SPC_DUP_ERROR || dup == SPC_DUP_LAST)
                check_cfg(&c, &d);
            }
      stream_free(&s);
      stream_free(&d);
    }
  ck_assert_int_eq(g_checks - before, 3 * 4 * 3 * 6 * 2 * (6 + 2));
}
END_TEST

START_TEST(test_unit_wide) {
  /* coordinates at the int64 extremes (descending stores ~x), larger
   * streams, Acc capacity from mem only */
  for (int L = 1; L <= 3; L++)
    for (int iv = 0; iv < 4; iv++) {
      stream s = make_stream(L, vts[iv], 400, S_WIDE, V_EXACT, 3000 + 10 * (uint64_t)L + (uint64_t)iv);
      for (int kind = 0; kind < 3; kind++)
        for (int desc = 0; desc < 2; desc++)
          for (int dup = 0; dup < 6; dup++) {
            const int64_t caps[] = {1, 3, 1000};
            for (int ic = 0; ic < 3; ic++) {
              cfg c = {.kind = (spw_kind)kind, .acc = caps[ic], .desc = desc, .dup = (spc_dup)dup};
              check_cfg(&c, &s);
            }
          }
      stream_free(&s);
    }
  /* 40000 points, about 10000 distinct, capacities 1 and 37 and from mem */
  stream s = make_stream(2, SPC_F64, 40000, S_DUPS, V_EXACT, 4242);
  for (int kind = 0; kind < 3; kind++)
    for (int dup = 0; dup < 3; dup++) {
      const int64_t caps[] = {1, 37, 0};
      for (int ic = 0; ic < 3; ic++) {
        cfg c = {.kind = (spw_kind)kind, .acc = caps[ic], .desc = dup == 2, .dup = (spc_dup)dup};
        check_cfg(&c, &s);
      }
    }
  stream_free(&s);
}
END_TEST

START_TEST(test_unit_edges) {
  spc_error e;
  spw *w = NULL;
  spw_opts o = {.kind = SPW_HASH};
  /* L outside 1..SPC_MAX_ORDER */
  ck_assert_int_eq(spw_create(0, SPC_F64, &o, &w, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(w);
  ck_assert_int_eq(spw_create(SPC_MAX_ORDER + 1, SPC_F64, &o, &w, &e), SPC_ERR_ARG);
  ck_assert_ptr_null(w);
  spw_free(&w);
  spw_free(NULL);
  char *dir = tu_mkdtemp();
  for (int L = 1; L <= 3; L++)
    for (int iv = 0; iv < 4; iv++)
      for (int kind = 0; kind < 3; kind++)
        for (int desc = 0; desc < 2; desc++)
          for (int tiny = 0; tiny < 2; tiny++) {
            cfg c = {.kind = (spw_kind)kind,
                     .desc = desc,
                     .dup = SPC_DUP_ERROR,
                     .mem = tiny ? 1024 : 0,
                     .acc = tiny ? 0 : 5,
                     .tmpdir = dir};
            /* n = 0: created and packed; pushed nothing; pushed 0 points */
            stream z = make_stream(L, vts[iv], 0, S_DUPS, V_EXACT, 1);
            check_cfg(&c, &z);
            packed p;
            spw *x = run_spw(&c, &z, &p);
            ck_assert_int_eq(p.st, SPC_OK);
            ck_assert_int_eq(p.r.n, 0);
            stream_free(&p.r);
            const int64_t *cols[SPC_MAX_ORDER] = {0};
            ck_assert_int_eq(spw_push(x, 0, cols, NULL, &e), SPC_OK);
            take_pack(x, &z, &p);
            ck_assert_int_eq(p.st, SPC_OK);
            ck_assert_int_eq(p.r.n, 0);
            stream_free(&p.r);
            spw_free(&x);
            stream_free(&z);
            /* n = 1, every policy */
            stream one = make_stream(L, vts[iv], 1, S_WIDE, V_EXACT, 7 + (uint64_t)L);
            for (int dup = 0; dup < 6; dup++) {
              c.dup = (spc_dup)dup;
              check_cfg(&c, &one);
            }
            stream_free(&one);
            ck_assert_int_eq(tu_count_dir(dir), 0);
          }
  /* values NULL for a valued type: zeros */
  {
    stream s = make_stream(2, SPC_C128, 50, S_DUPS, V_EXACT, 99);
    memset(s.v, 0, 50 * 16);
    stream ref;
    reference(&s, false, SPC_DUP_SUM, &ref);
    spw_opts oo = {.kind = SPW_LIST, .acc = 4};
    tu_assert_ok(spw_create(2, SPC_C128, &oo, &w, &e), &e);
    const int64_t *cols[2] = {s.c[0], s.c[1]};
    tu_assert_ok(spw_push(w, 50, cols, NULL, &e), &e);
    packed p;
    take_pack(w, &s, &p);
    tu_assert_ok(p.st, &p.e);
    char why[256];
    ck_assert_msg(!stream_diff(&p.r, &ref, why, sizeof why), "NULL values: %s", why);
    stream_free(&p.r);
    stream_free(&ref);
    stream_free(&s);
    spw_free(&w);
  }
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_unit_default_acc) {
  /* acc = 0: the capacity is mem / 2 / (bytes per point), at most
   * SPW_DEFAULT_ACC (chosen from bench/run_spw.sh): with a large mem, the
   * Acc fills at SPW_DEFAULT_ACC distinct points, so one more point makes
   * a second flush (the pack's); with mem = 1 MiB (L = 1, float64: 16
   * bytes a point in a list, 32 in a hash) it fills at 32768 / 16384. */
  for (int kind = 0; kind < 2; kind++)
    for (int small = 0; small < 2; small++) {
      int64_t per = kind == SPW_HASH ? 32 : 16, mem = small ? (int64_t)1 << 20 : (int64_t)1 << 30;
      int64_t cap = small ? mem / 2 / per : SPW_DEFAULT_ACC;
      spw_opts o = {.kind = (spw_kind)kind, .acc = 0, .mem = mem, .dup = SPC_DUP_SUM};
      spw *w = NULL;
      spc_error e;
      tu_assert_ok(spw_create(1, SPC_F64, &o, &w, &e), &e);
      for (int64_t extra = 0; extra < 2; extra++) {
        /* cap + extra distinct points, descending (every flush sorts) */
        int64_t n = cap + extra, *c = malloc((size_t)n * sizeof *c);
        double *v = malloc((size_t)n * sizeof *v);
        for (int64_t i = 0; i < n; i++) c[i] = n - i, v[i] = (double)i;
        const int64_t *cols[1] = {c};
        spw_stats st1;
        tu_assert_ok(spw_push(w, n, cols, v, &e), &e);
        int64_t m = 0, *oc[1] = {NULL};
        void *ov = NULL;
        tu_assert_ok(spw_pack(w, &m, oc, &ov, &e), &e);
        spw_get_stats(w, &st1);
        ck_assert_int_eq(m, n);
        ck_assert_int_eq(oc[0][0], 1);
        ck_assert_int_eq(oc[0][n - 1], n);
        ck_assert(((double *)ov)[0] == (double)(n - 1));
        /* the statistics of this pack only (the workspace packed before) */
        ck_assert_msg(st1.flushes == 1 + extra, "%s mem=%lld, %lld points: %lld flushes, want %lld",
                      kind_names[kind], (long long)mem, (long long)n, (long long)st1.flushes,
                      (long long)(1 + extra));
        spc_free(oc[0]);
        spc_free(ov);
        free(c);
        free(v);
      }
      spw_free(&w);
    }
}
END_TEST

START_TEST(test_unit_reuse) {
  /* "The workspace is empty afterwards": pack, push a second stream,
   * pack again: only the second stream; a third pack is empty */
  for (int kind = 0; kind < 2; kind++)
    for (int ic = 0; ic < 3; ic++) {
      const int64_t caps[] = {1, 3, 5000};
      stream a = make_stream(2, SPC_F64, 300, S_DUPS, V_EXACT, 51),
             b = make_stream(2, SPC_F64, 200, S_DUPS, V_EXACT, 52);
      stream ra, rb;
      reference(&a, true, SPC_DUP_LAST, &ra);
      reference(&b, true, SPC_DUP_LAST, &rb);
      spw_opts o = {.kind = (spw_kind)kind, .acc = caps[ic], .descending = true, .dup = SPC_DUP_LAST};
      spw *w = NULL;
      spc_error e;
      tu_assert_ok(spw_create(2, SPC_F64, &o, &w, &e), &e);
      packed p;
      char why[256];
      tu_assert_ok(push_all(w, &a, &e), &e);
      take_pack(w, &a, &p);
      tu_assert_ok(p.st, &p.e);
      ck_assert_msg(!stream_diff(&p.r, &ra, why, sizeof why), "first pack: %s", why);
      stream_free(&p.r);
      tu_assert_ok(push_all(w, &b, &e), &e);
      take_pack(w, &b, &p);
      tu_assert_ok(p.st, &p.e);
      ck_assert_msg(!stream_diff(&p.r, &rb, why, sizeof why), "%s acc=%lld second pack: %s", kind_names[kind],
                    (long long)caps[ic], why);
      stream_free(&p.r);
      take_pack(w, &b, &p);
      tu_assert_ok(p.st, &p.e);
      ck_assert_int_eq(p.r.n, 0);
      stream_free(&p.r);
      spw_free(&w);
      stream_free(&a);
      stream_free(&b);
      stream_free(&ra);
      stream_free(&rb);
    }
}
END_TEST

/* ---- bucket then sort segments (SPW_BUCKET) --------------------------------------- */

/* n points in random order, level 0 in [r0, r0 + rows), the other levels
 * in [0, cols); a quarter repeat the tuple of a random earlier point. */
static stream grid_stream(int L, spc_vtype vt, int64_t n, int64_t r0, int64_t rows, int64_t cols, int vk,
                          uint64_t seed) {
  stream s;
  memset(&s, 0, sizeof s);
  rng_seed(seed);
  s.L = L;
  s.vt = vt;
  s.W = spc_vtype_size(vt);
  s.n = n;
  for (int l = 0; l < L; l++)
    s.c[l] = malloc((size_t)(n ? n : 1) * 8);
  s.v = malloc((size_t)(n ? n : 1) * (s.W ? s.W : 1));
  for (int64_t t = 0; t < n; t++) {
    int64_t from = t > 0 && rnd() % 4 == 0 ? (int64_t)(rnd() % (uint64_t)t) : -1;
    for (int l = 0; l < L; l++)
      s.c[l][t] = from >= 0 ? s.c[l][from] : l == 0 ? r0 + (int64_t)(rnd() % (uint64_t)rows) : (int64_t)(rnd() % (uint64_t)cols);
    fill_value(&s, t, vk);
  }
  return s;
}

/* The bucket kind against the serial reference: segments short
 * (insertion sort) and long (radix), L = 1, 2, 3, negative level-0
 * coordinates, every value type and dup policy, inexact float sums,
 * ascending and descending, pushed in ragged chunks (Acc) and at once
 * (spw_push_pack, read in place); bucketed where level 0's range is
 * countable, and not (the list's sort, the same result) where it is
 * too wide or the tuples do not pack. */
START_TEST(test_bucket_unit) {
  typedef struct shape {
    int L;
    int64_t n, r0, rows, cols;
    int bucket; /* want_bucket, ascending (descending: the same ranges) */
    const char *what;
  } shape;
  static const shape shapes[] = {
      {2, 20000, 0, 10000, 100000, 1, "short segments"},
      {2, 20000, -3, 5, 3000, 1, "long segments"},
      /* 20 a row: groups of two rows, most short, some past BUCKET_SHORT */
      {2, 20000, -7, 1000, 5000, 1, "short and long segments in a group"},
      {3, 12000, -500, 3000, 40, 1, "L=3"},
      {1, 9000, 7, 3000, 1, 1, "L=1"},
      {2, 5000, 0, 1000000, 50, -1, "level 0 too wide to count"},
      /* 14 + 45 bits of tuple and 15 of index: no packed radix flush; the
       * bucket needs only the inner 45 with the index */
      {2, 20000, 0, 10000, INT64_C(1) << 45, 1, "inner levels wide"},
  };
  long before = g_checks;
  for (int k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++) {
    const shape *sh = &shapes[k];
    for (int iv = 0; iv < 4; iv++) {
      stream s = grid_stream(sh->L, vts[iv], sh->n, sh->r0, sh->rows, sh->cols, V_INEXACT,
                             7000 + 10 * (uint64_t)k + (uint64_t)iv);
      for (int pp = 0; pp < 3; pp++)
        for (int desc = 0; desc < 2; desc++)
          for (int dup = 0; dup < 6; dup++) {
            cfg c = {.kind = SPW_BUCKET, .desc = desc, .dup = (spc_dup)dup, .pp = pp, .want_bucket = sh->bucket};
            check_cfg(&c, &s);
            if (iv == 0 && dup == 0) { /* flushes of 1000 points: bucketed where 1000 count the range */
              cfg a = {.kind = SPW_BUCKET, .acc = 1000, .desc = desc, .dup = SPC_DUP_SUM, .pp = pp,
                       .want_bucket = sh->rows <= 2 * 1000 + 4096 ? 1 : -1};
              check_cfg(&a, &s);
            }
          }
      stream_free(&s);
    }
  }
  /* coordinates at the int64 extremes: no packing, the list's sort */
  stream x = make_stream(2, SPC_F64, 400, S_WIDE, V_INEXACT, 7100);
  for (int pp = 0; pp < 3; pp++)
    for (int dup = 0; dup < 6; dup++) {
      cfg c = {.kind = SPW_BUCKET, .dup = (spc_dup)dup, .pp = pp, .want_bucket = -1};
      check_cfg(&c, &x);
    }
  stream_free(&x);
  ck_assert_int_eq(g_checks - before, 7 * 4 * 3 * 2 * 6 + 7 * 3 * 2 + 3 * 6);
}
END_TEST

/* The bucket flush on threads (bucket_parallel: the points counted and
 * scattered by slices, the groups' sort in ranges, each range's output
 * moved down after) = the flush on one thread, bit for bit: 300000 points
 * (2^17 or more: threaded), 2 and 3 threads (spw_stats.bucket_threads),
 * short and long segments, few groups, L = 1..3, 64-bit keys (inner
 * levels of 45 bits), float64 (12-byte records) and pattern (32-bit keys
 * apart from the columns) under every dup policy and both orders, the
 * other value types summed; pushed in chunks (Acc's flush), read in
 * place and taken; --dup=error's message naming the same (first)
 * duplicate; and the reference once a shape.  Inside a caller's active
 * parallel region the flush takes one thread. */
START_TEST(test_bucket_threads) {
#ifdef _OPENMP
  typedef struct shape {
    int L;
    int64_t n, r0, rows, cols;
  } shape;
  static const shape shapes[] = {
      {2, 300000, 0, 100000, 100000},          /* short segments, 512 groups */
      {2, 300000, -3, 40, 3000},               /* long segments, 64 groups of one row */
      {3, 300000, -500, 3000, 40},             /* L = 3 */
      {1, 300000, 7, 100000, 1},               /* L = 1 */
      {2, 300000, 0, 100000, INT64_C(1) << 45}, /* keys past 32 bits in a group */
  };
  const int saved = omp_get_max_threads();
  long before = g_checks, compared = 0;
  for (int k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++) {
    const shape *sh = &shapes[k];
    for (int iv = 0; iv < 4; iv++) {
      stream s = grid_stream(sh->L, vts[iv], sh->n, sh->r0, sh->rows, sh->cols, V_INEXACT,
                             7300 + 10 * (uint64_t)k + (uint64_t)iv);
      const bool all = vts[iv] == SPC_F64 || vts[iv] == SPC_PATTERN;
      for (int dup = 0; dup < (all ? 6 : 1); dup++) {
        cfg c = {.kind = SPW_BUCKET, .desc = dup % 2, .dup = (spc_dup)dup, .pp = (k + iv + dup) % 3,
                 .want_bucket = 1};
        char what[256], why[512];
        cfg_text(&c, &s, what, sizeof what);
        packed one, many;
        omp_set_num_threads(1);
        spw *w1 = run_spw(&c, &s, &one);
        tu_check(w1 && one.stats.bucket_threads <= 1, "%s: one thread: %lld threads", what,
                 (long long)one.stats.bucket_threads);
        for (int h = 2; h <= 3; h++) {
          omp_set_num_threads(h);
          spw *wh = run_spw(&c, &s, &many);
          tu_check(wh && many.st == one.st, "%s, %d threads: status %s, one thread %s", what, h,
                   spc_status_name(many.st), spc_status_name(one.st));
          if (one.st) {
            tu_check(strcmp(many.e.msg, one.e.msg) == 0, "%s, %d threads: '%s', one thread '%s'",
                     what, h, many.e.msg, one.e.msg);
          } else {
            tu_check(many.stats.bucket_threads == h, "%s: %d threads asked, the flush ran on %lld",
                     what, h, (long long)many.stats.bucket_threads);
            tu_check(!stream_diff(&many.r, &one.r, why, sizeof why), "%s, %d threads: %s", what, h,
                     why);
          }
          compared++;
          stream_free(&many.r);
          spw_free(&wh);
        }
        stream_free(&one.r);
        spw_free(&w1);
        if (dup == 0 && iv == 0) { /* against the reference, on 3 threads */
          check_cfg(&c, &s);
        }
        omp_set_num_threads(saved);
      }
      stream_free(&s);
    }
  }
  ck_assert_int_eq(g_checks - before, 5);
  ck_assert_int_eq(compared, 5 * (2 * 6 + 2) * 2);
  /* inside an active parallel region (a builder per thread): one thread,
   * the same result */
  stream s = grid_stream(2, SPC_F64, 300000, 0, 100000, 100000, V_INEXACT, 7399);
  cfg c = {.kind = SPW_BUCKET, .pp = 1, .want_bucket = 1};
  packed one, in;
  char why[512];
  omp_set_num_threads(1);
  spw *w1 = run_spw(&c, &s, &one), *wi = NULL;
  omp_set_num_threads(2);
  int active = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    active = omp_in_parallel();
    wi = run_spw(&c, &s, &in);
  }
  omp_set_num_threads(saved);
  tu_check(w1 && wi && one.st == SPC_OK && in.st == SPC_OK, "in a parallel region: %s", in.e.msg);
  tu_check(!active || in.stats.bucket_threads <= 1, "in a parallel region: the flush ran on %lld threads",
           (long long)in.stats.bucket_threads);
  tu_check(!stream_diff(&in.r, &one.r, why, sizeof why), "in a parallel region: %s", why);
  stream_free(&one.r), stream_free(&in.r), stream_free(&s);
  spw_free(&w1), spw_free(&wi);
#endif
}
END_TEST

/* Acc of a bucket workspace grows past the list's capacity (2^18) while
 * the budget holds the points (one flush, bucketed); past the budget it
 * flushes what it holds and goes on as the list (more flushes, merges;
 * with 1 MiB, runs spilled and the files removed); the result is the
 * serial reference's every time, float sums bit for bit. */
START_TEST(test_bucket_grow) {
  const int64_t n = 3 * SPW_DEFAULT_ACC / 2 + 1234;
  stream s = grid_stream(2, SPC_F64, n, 0, n / 2, n, V_INEXACT, 7200);
  char *dir = tu_mkdtemp();
  for (int dup = 0; dup < 4; dup += 3) { /* sum, min */
    /* room for every point: one flush */
    cfg a = {.kind = SPW_BUCKET, .dup = (spc_dup)dup, .want_bucket = 1};
    check_cfg(&a, &s);
    packed p;
    spw *w = run_spw(&a, &s, &p);
    tu_assert_ok(p.st, &p.e);
    ck_assert_int_eq(p.stats.flushes, 1);
    ck_assert_int_eq(p.stats.merges, 0);
    stream_free(&p.r);
    spw_free(&w);
    /* room for about 0.8 n: Acc grown, then given up */
    int64_t mem = n * 8 / 10 * SPW_BUCKET_PER(24);
    cfg b = {.kind = SPW_BUCKET, .mem = mem, .dup = (spc_dup)dup, .tmpdir = dir};
    check_cfg(&b, &s);
    w = run_spw(&b, &s, &p);
    tu_assert_ok(p.st, &p.e);
    ck_assert_msg(p.stats.flushes >= 2 && p.stats.merges >= 1 && p.stats.bucketed >= 1,
                  "mem %lld: %lld flushes, %lld merges, %lld bucketed", (long long)mem,
                  (long long)p.stats.flushes, (long long)p.stats.merges, (long long)p.stats.bucketed);
    stream_free(&p.r);
    spw_free(&w);
    /* spw_push_pack past the budget: the same */
    for (b.pp = 1; b.pp <= 2; b.pp++) /* read, taken */
      check_cfg(&b, &s);
    /* 1 MiB: the list's flushes, spilled */
    cfg c = {.kind = SPW_BUCKET, .mem = 1 << 20, .dup = (spc_dup)dup, .tmpdir = dir};
    w = run_spw(&c, &s, &p);
    tu_assert_ok(p.st, &p.e);
    ck_assert_int_gt(p.stats.spilled_runs, 0);
    stream_free(&p.r);
    spw_free(&w);
    check_cfg(&c, &s);
    ck_assert_int_eq(tu_count_dir(dir), 0);
  }
  tu_rmtree(dir);
  free(dir);
  stream_free(&s);
}
END_TEST

/* ---- spill ---------------------------------------------------------------------- */

START_TEST(test_spill) {
  char *dir = tu_mkdtemp();
  int spilled_cfgs = 0;
  for (int L = 1; L <= 3; L++)
    for (int iv = 0; iv < 4; iv++) {
      if (L != 2 && vts[iv] != SPC_F64)
        continue;
      stream s = make_stream(L, vts[iv], 1500, S_DUPS, V_EXACT, 5000 + 10 * (uint64_t)L + (uint64_t)iv);
      for (int kind = 0; kind < 3; kind++)
        for (int desc = 0; desc < 2; desc++)
          for (int dup = 0; dup < 5; dup++) {
            cfg c = {.kind = (spw_kind)kind, .mem = 1024, .desc = desc, .dup = (spc_dup)dup, .tmpdir = dir};
            char what[256], why[512];
            cfg_text(&c, &s, what, sizeof what);
            stream ref;
            reference(&s, c.desc, c.dup, &ref);
            spw_opts o = {.kind = c.kind, .mem = c.mem, .descending = c.desc, .dup = c.dup, .tmpdir = dir};
            spw *w = NULL;
            spc_error e;
            tu_assert_ok(spw_create(L, s.vt, &o, &w, &e), &e);
            tu_assert_ok(push_all(w, &s, &e), &e);
            spw_stats st;
            spw_get_stats(w, &st);
            int files = tu_count_dir(dir);
            ck_assert_msg(st.spilled_runs > 0 && st.spilled_bytes > 0, "%s: nothing spilled", what);
            ck_assert_msg(files > 0, "%s: %lld runs spilled, no file in tmpdir", what,
                          (long long)st.spilled_runs);
            packed p;
            take_pack(w, &s, &p);
            tu_assert_ok(p.st, &p.e);
            ck_assert_msg(!stream_diff(&p.r, &ref, why, sizeof why), "%s: %s", what, why);
            ck_assert_msg(tu_count_dir(dir) == 0, "%s: %d file(s) left after pack", what, tu_count_dir(dir));
            ck_assert_msg(p.stats.peak_bytes <= 1024, "%s: peak %lld bytes of runs in memory over 1 KiB",
                          what, (long long)p.stats.peak_bytes);
            spw_free(&w);
            ck_assert_int_eq(tu_count_dir(dir), 0);
            stream_free(&p.r);
            stream_free(&ref);
            spilled_cfgs++;
          }
      stream_free(&s);
    }
  ck_assert_int_eq(spilled_cfgs, (1 + 4 + 1) * 3 * 2 * 5);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* A duplicate-free stream of n points whose last point repeats point k. */
static stream late_dup_stream(int L, spc_vtype vt, int64_t n, int64_t k, uint64_t seed) {
  stream s = make_stream(L, vt, n, S_DISTINCT, V_EXACT, seed);
  for (int l = 0; l < L; l++)
    s.c[l][n - 1] = s.c[l][k];
  return s;
}

START_TEST(test_spill_failures) {
  char *dir = tu_mkdtemp();
  char what[256];
  /* dup=error met after spilling: the error names the tuple; every file
   * is gone after the failing call (pack) or after spw_free (push) */
  for (int kind = 0; kind < 2; kind++)
    for (int desc = 0; desc < 2; desc++)
      for (int iv = 0; iv < 2; iv++) {
        stream s = late_dup_stream(2, iv ? SPC_PATTERN : SPC_F64, 2000, 3, 77);
        snprintf(what, sizeof what, "late duplicate, %s %s %s", kind_names[kind],
                 desc ? "descending" : "ascending", vt_label(s.vt));
        spw_opts o = {
            .kind = (spw_kind)kind, .mem = 1024, .descending = desc, .dup = SPC_DUP_ERROR, .tmpdir = dir};
        spw *w = NULL;
        spc_error e;
        spc_error_clear(&e);
        tu_assert_ok(spw_create(2, s.vt, &o, &w, &e), &e);
        /* everything but the duplicate: spilled, no error */
        s.n--;
        tu_assert_ok(push_all(w, &s, &e), &e);
        s.n++;
        spw_stats st;
        spw_get_stats(w, &st);
        ck_assert_msg(st.spilled_runs > 0, "%s: nothing spilled", what);
        ck_assert_int_gt(tu_count_dir(dir), 0);
        const int64_t *cols[2] = {s.c[0] + s.n - 1, s.c[1] + s.n - 1};
        spc_status r = spw_push(w, 1, cols, s.W ? s.v + (s.n - 1) * 8 : NULL, &e);
        if (r == SPC_OK) {
          int64_t n, *pc[2];
          void *pv;
          r = spw_pack(w, &n, pc, &pv, &e);
          ck_assert_msg(r == SPC_ERR_INPUT, "%s: pack gave %s", what, spc_status_name(r));
          ck_assert_msg(tu_count_dir(dir) == 0, "%s: %d file(s) left after the failing pack", what,
                        tu_count_dir(dir));
        } else {
          ck_assert_msg(r == SPC_ERR_INPUT, "%s: push gave %s: %s", what, spc_status_name(r), e.msg);
        }
        char want[128];
        snprintf(want, sizeof want, "(%lld, %lld)", (long long)s.c[0][3], (long long)s.c[1][3]);
        ck_assert_msg(strstr(e.msg, want) != NULL, "%s: '%s' does not name %s", what, e.msg, want);
        spw_free(&w);
        ck_assert_msg(tu_count_dir(dir) == 0, "%s: %d file(s) left after spw_free", what, tu_count_dir(dir));
        stream_free(&s);
      }
  /* a tmpdir that cannot hold files: SPC_ERR_IO naming the workspace */
  {
    char *bad = tu_path(dir, "no/such/dir");
    stream s = make_stream(2, SPC_F64, 2000, S_DUPS, V_EXACT, 78);
    for (int kind = 0; kind < 2; kind++) {
      spw_opts o = {.kind = (spw_kind)kind, .mem = 1024, .tmpdir = bad};
      spw *w = NULL;
      spc_error e;
      spc_error_clear(&e);
      tu_assert_ok(spw_create(2, s.vt, &o, &w, &e), &e);
      spc_status r = push_all(w, &s, &e);
      if (r == SPC_OK) {
        packed p;
        take_pack(w, &s, &p);
        r = p.st;
        e = p.e;
        stream_free(&p.r);
      }
      ck_assert_msg(r == SPC_ERR_IO, "%s: unusable tmpdir gave %s", kind_names[kind], spc_status_name(r));
      ck_assert_msg(strstr(e.msg, "workspace") != NULL, "message '%s'", e.msg);
      spw_free(&w);
    }
    stream_free(&s);
    free(bad);
  }
  /* tmpdir NULL: $TMPDIR */
  {
    char *env = tu_path(dir, "env");
    ck_assert_int_eq(mkdir(env, 0700), 0);
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", env, 1);
    stream s = make_stream(2, SPC_F64, 1500, S_DUPS, V_EXACT, 79), ref;
    reference(&s, false, SPC_DUP_SUM, &ref);
    spw_opts o = {.kind = SPW_HASH, .mem = 1024};
    spw *w = NULL;
    spc_error e;
    tu_assert_ok(spw_create(2, s.vt, &o, &w, &e), &e);
    tu_assert_ok(push_all(w, &s, &e), &e);
    ck_assert_msg(tu_count_dir(env) > 0, "tmpdir NULL: no spilled run in $TMPDIR");
    packed p;
    take_pack(w, &s, &p);
    tu_assert_ok(p.st, &p.e);
    char why[256];
    ck_assert_msg(!stream_diff(&p.r, &ref, why, sizeof why), "$TMPDIR: %s", why);
    ck_assert_int_eq(tu_count_dir(env), 0);
    spw_free(&w);
    stream_free(&p.r);
    stream_free(&ref);
    stream_free(&s);
    if (old)
      setenv("TMPDIR", old, 1), free(old);
    else
      unsetenv("TMPDIR");
    ck_assert_int_eq(rmdir(env), 0);
    free(env);
  }
  /* spw_cleanup_files (the signal handler's call): every file of every
   * live workspace goes; the workspace then fails cleanly */
  {
    stream s = make_stream(2, SPC_I64, 1500, S_DUPS, V_EXACT, 80);
    spw_opts o = {.kind = SPW_LIST, .mem = 1024, .tmpdir = dir};
    spw *w1 = NULL, *w2 = NULL;
    spc_error e;
    tu_assert_ok(spw_create(2, s.vt, &o, &w1, &e), &e);
    tu_assert_ok(spw_create(2, s.vt, &o, &w2, &e), &e);
    tu_assert_ok(push_all(w1, &s, &e), &e);
    tu_assert_ok(push_all(w2, &s, &e), &e);
    ck_assert_int_gt(tu_count_dir(dir), 1);
    spw_cleanup_files();
    ck_assert_msg(tu_count_dir(dir) == 0, "%d file(s) left by spw_cleanup_files", tu_count_dir(dir));
    packed p;
    take_pack(w1, &s, &p);
    ck_assert_msg(p.st == SPC_ERR_IO, "pack after cleanup: %s", spc_status_name(p.st));
    spw_free(&w1);
    spw_free(&w2);
    ck_assert_int_eq(tu_count_dir(dir), 0);
    stream_free(&s);
  }
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* Every allocation of a spilling run failing in turn: SPC_ERR_NOMEM (or
 * success past the last), no crash, no file left.  A regression check:
 * before the radix flush (spw_sort.c) flush() freed an uninitialised run
 * when perm or scr failed, and merge() read an uninitialised sink and run
 * when its cursors' allocation failed (SIGSEGV / double free).
 * Reproducer then: spw_create(2, SPC_F64, {SPW_LIST, mem 1024}),
 * spc_alloc_fail_at(5), spw_push 300 points with repeats. */
START_TEST(test_spill_nomem) {
  char *dir = tu_mkdtemp();
  stream s = make_stream(2, SPC_F64, 300, S_DUPS, V_EXACT, 81), ref;
  reference(&s, false, SPC_DUP_SUM, &ref);
  for (int kind = 0; kind < 2; kind++) {
    int64_t k = 1;
    for (;; k++) {
      spw_opts o = {.kind = (spw_kind)kind, .mem = 1024, .tmpdir = dir};
      spw *w = NULL;
      spc_error e;
      spc_alloc_fail_at(k);
      spc_status r = spw_create(2, s.vt, &o, &w, &e);
      packed p;
      memset(&p, 0, sizeof p);
      if (!r)
        r = push_all(w, &s, &e);
      if (!r) {
        take_pack(w, &s, &p);
        r = p.st;
        e = p.e;
      }
      spc_alloc_fail_at(0);
      spw_free(&w);
      ck_assert_msg(tu_count_dir(dir) == 0, "%s, allocation %lld failing: %d file(s) left", kind_names[kind],
                    (long long)k, tu_count_dir(dir));
      if (r == SPC_OK) {
        char why[256];
        ck_assert_msg(!stream_diff(&p.r, &ref, why, sizeof why), "%s", why);
        stream_free(&p.r);
        break;
      }
      ck_assert_msg(r == SPC_ERR_NOMEM, "%s, allocation %lld failing: %s: %s", kind_names[kind], (long long)k,
                    spc_status_name(r), e.msg);
    }
    ck_assert_int_gt(k, 10);
  }
  stream_free(&s);
  stream_free(&ref);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- conversion ----------------------------------------------------------------- */

/* 0 when a and b have the same format, dims, levels, arrays (type, length,
 * bytes) and values (bytes). */
static int arrays_diff(const spc_tensor *a, const spc_tensor *b, char *why, size_t n) {
  if (strcmp(spc_tensor_format(a), spc_tensor_format(b))) {
    snprintf(why, n, "format %s != %s", spc_tensor_format(a), spc_tensor_format(b));
    return 1;
  }
  int order = spc_tensor_order(a), nl = spc_tensor_nlevels(a);
  if (order != spc_tensor_order(b) || nl != spc_tensor_nlevels(b)) {
    snprintf(why, n, "order/levels %d/%d != %d/%d", order, nl, spc_tensor_order(b), spc_tensor_nlevels(b));
    return 1;
  }
  for (int d = 0; d < order; d++)
    if (spc_tensor_dim(a, d) != spc_tensor_dim(b, d)) {
      snprintf(why, n, "dim %d", d);
      return 1;
    }
  for (int l = 0; l < nl; l++) {
    int na = spc_tensor_level_narrays(a, l);
    if (strcmp(spc_tensor_level_format(a, l), spc_tensor_level_format(b, l)) ||
        na != spc_tensor_level_narrays(b, l) || spc_tensor_level_dim(a, l) != spc_tensor_level_dim(b, l)) {
      snprintf(why, n, "level %d: %s with %d arrays != %s with %d", l, spc_tensor_level_format(a, l), na,
               spc_tensor_level_format(b, l), spc_tensor_level_narrays(b, l));
      return 1;
    }
    for (int k = 0; k < na; k++) {
      const char *name = spc_tensor_level_array_name(a, l, k);
      if (strcmp(name, spc_tensor_level_array_name(b, l, k))) {
        snprintf(why, n, "level %d array %d: %s != %s", l, k, name, spc_tensor_level_array_name(b, l, k));
        return 1;
      }
      const void *da, *db;
      spc_itype ta, tb;
      int64_t la, lb;
      if (spc_tensor_level_array(a, l, name, &da, &ta, &la) ||
          spc_tensor_level_array(b, l, name, &db, &tb, &lb)) {
        snprintf(why, n, "level %d array %s missing", l, name);
        return 1;
      }
      if (ta != tb || la != lb) {
        snprintf(why, n, "level %d %s: int%d[%lld] != int%d[%lld]", l, name, (int)ta, (long long)la, (int)tb,
                 (long long)lb);
        return 1;
      }
      size_t w = ta == SPC_IDX32 ? 4 : 8;
      if (la && memcmp(da, db, (size_t)la * w)) {
        int64_t i = 0;
        while (!memcmp((const char *)da + i * (int64_t)w, (const char *)db + i * (int64_t)w, w))
          i++;
        snprintf(why, n, "level %d %s differs first at [%lld]", l, name, (long long)i);
        return 1;
      }
    }
  }
  if (spc_tensor_vtype(a) != spc_tensor_vtype(b)) {
    snprintf(why, n, "value type %s != %s", spc_vtype_name(spc_tensor_vtype(a)),
             spc_vtype_name(spc_tensor_vtype(b)));
    return 1;
  }
  int64_t nva = 0, nvb = 0;
  const void *va = spc_tensor_values(a, &nva), *vb = spc_tensor_values(b, &nvb);
  size_t w = spc_vtype_size(spc_tensor_vtype(a));
  if (nva != nvb) {
    snprintf(why, n, "%lld values != %lld", (long long)nva, (long long)nvb);
    return 1;
  }
  if (w && nva && memcmp(va, vb, (size_t)nva * w)) {
    int64_t i = 0;
    while (!memcmp((const char *)va + i * (int64_t)w, (const char *)vb + i * (int64_t)w, w))
      i++;
    double x = 0, y = 0;
    if (spc_tensor_vtype(a) != SPC_I64) {
      memcpy(&x, (const char *)va + i * (int64_t)w, 8);
      memcpy(&y, (const char *)vb + i * (int64_t)w, 8);
    }
    snprintf(why, n, "values differ first at [%lld] (%a != %a)", (long long)i, x, y);
    return 1;
  }
  return 0;
}

typedef struct conv_res {
  spc_status s;
  spc_tensor *x;
  spc_error e;
  spc_convert_info info;
} conv_res;

#define CONV_LIMIT ((int64_t)1 << 21) /* max_positions: DIA of the larger matrices refused */

static void convert(const spc_tensor *t, const char *fmt, int kind, int64_t acc, int64_t mem, spc_dup dup,
                    conv_res *r) {
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  memset(&r->info, 0, sizeof r->info);
  o.no_jit = 1; /* factory for the built-ins, the interpreter for user formats */
  o.max_positions = CONV_LIMIT;
  o.dup = dup;
  o.spw = kind;
  o.acc = acc;
  o.mem = mem;
  o.info = &r->info;
  r->x = NULL;
  spc_error_clear(&r->e);
  r->s = spc_convert_to(t, fmt, &o, &r->x, &r->e);
}

typedef struct variant {
  int spw;
  int64_t acc, mem;
  const char *label;
} variant;

enum { TINY_SMALL = 4096 };

static const variant variants[] = {
    {SPC_SPW_HASH, 1, 0, "hash acc=1"},     {SPC_SPW_HASH, 3, 0, "hash acc=3"},
    {SPC_SPW_HASH, -1, 0, "hash acc=2n+1"}, {SPC_SPW_LIST, 1, 0, "list acc=1"},
    {SPC_SPW_LIST, 3, 0, "list acc=3"},     {SPC_SPW_LIST, -1, 0, "list acc=2n+1"},
    {SPC_SPW_HASH, 0, -1, "hash mem=tiny"}, {SPC_SPW_LIST, 0, -1, "list mem=tiny"},
    {SPC_SPW_NONE, 0, -1, "none mem=tiny"}, {SPC_SPW_BUCKET, 0, 0, "bucket"},
    {SPC_SPW_BUCKET, 3, 0, "bucket acc=3"}, {SPC_SPW_BUCKET, 0, -1, "bucket mem=tiny"},
};
#define NVARIANT ((int)(sizeof variants / sizeof variants[0]))

static double tnow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct conv_tally {
  long same, refused, spilled;
} conv_tally;

/* fmt of t through every variant (acc 1 and 3 only when small) = without
 * the workspace; $TMPDIR (tmp) empty after each. */
static void check_conversion(const spc_tensor *t, const char *fmt, int which, spc_dup dup, const char *name,
                             const char *tmp, bool small_acc, conv_tally *tally) {
  conv_res base, r;
  convert(t, fmt, SPC_SPW_NONE, 0, 0, dup, &base);
  int64_t nnz = spc_tensor_nstored(t);
  /* the largest inputs (over 50000 components) take one variant each,
   * in turn: large acc hash, large acc list, tiny hash, tiny list, none,
   * bucket, tiny bucket */
  static const int big_turn[] = {2, 5, 6, 7, 8, 9, 11};
  bool big = nnz > 50000;
  static const int tiny_turn[] = {SPC_SPW_HASH, SPC_SPW_LIST, SPC_SPW_BUCKET};
  for (int k = 0; k < NVARIANT; k++) {
    const variant *v = &variants[k];
    if (big) {
      if (k != big_turn[which % 7])
        continue;
    } else if (!small_acc && v->acc > 0 && v->acc < 100) {
      continue;
    } else if (v->mem < 0 && v->spw != tiny_turn[which % 3] && (v->spw || which != 1)) {
      continue; /* one tiny budget a conversion: hash, list or bucket by turns, none on the second */
    }
    /* tiny: 4 KiB, or 4 bytes a component on larger inputs (a few dozen
     * spilled runs, not thousands: Acc and every run in memory take 24 to
     * 48 bytes a component); large: more than the input */
    int64_t mem = v->mem < 0 ? (4 * nnz > TINY_SMALL ? 4 * nnz : TINY_SMALL) : v->mem;
    int64_t acc = v->acc < 0 ? 2 * nnz + 1 : v->acc;
    char what[512], why[512];
    snprintf(what, sizeof what, "%s -> %s dup=%s, %s (acc %lld, mem %lld)", name, fmt, dup_names[dup],
             v->label, (long long)acc, (long long)mem);
    double tq0 = tnow();
    convert(t, fmt, v->spw, acc, mem, dup, &r);
    if (getenv("SPW_TIMING"))
      fprintf(stderr, "T %.4f %s\n", tnow() - tq0, what);
    ck_assert_msg(tu_count_dir(tmp) == 0, "%s: %d file(s) left in $TMPDIR", what, tu_count_dir(tmp));
    if (base.s == SPC_OK) {
      ck_assert_msg(r.s == SPC_OK, "%s: %s: %s (without the workspace: ok)", what, spc_status_name(r.s),
                    r.e.msg);
      ck_assert_msg(!arrays_diff(r.x, base.x, why, sizeof why), "%s: %s", what, why);
      tally->same++;
      if (v->mem < 0 && r.info.spw.spilled_runs > 0)
        tally->spilled++;
      if (v->mem < 0 && nnz >= 1000)
        ck_assert_msg(r.info.spw.spilled_runs > 0, "%s: %lld components, nothing spilled", what,
                      (long long)nnz);
      if (v->acc == 1)
        ck_assert_msg(r.info.spw.flushes >= 1 || nnz == 0, "%s: %lld flushes", what,
                      (long long)r.info.spw.flushes);
    } else {
      ck_assert_msg(r.s == base.s, "%s: %s: %s; without the workspace: %s: %s", what, spc_status_name(r.s),
                    r.e.msg, spc_status_name(base.s), base.e.msg);
      if (base.s == SPC_ERR_INPUT && dup == SPC_DUP_ERROR)
        ck_assert_msg(strstr(r.e.msg, "--dup=error") && strstr(r.e.msg, fmt), "%s: message '%s'", what,
                      r.e.msg);
      else
        ck_assert_msg(!strcmp(r.e.msg, base.e.msg), "%s: refused with '%s'; without the workspace '%s'", what,
                      r.e.msg, base.e.msg);
      ck_assert_ptr_null(r.x);
      tally->refused++;
    }
    spc_tensor_free(&r.x);
  }
  spc_tensor_free(&base.x);
}

static char *g_tmp_old;
static char *set_tmpdir(void) {
  char *d = tu_mkdtemp();
  const char *o = getenv("TMPDIR");
  g_tmp_old = o ? strdup(o) : NULL;
  setenv("TMPDIR", d, 1);
  return d;
}
static void restore_tmpdir(char *d) {
  if (g_tmp_old)
    setenv("TMPDIR", g_tmp_old, 1);
  else
    unsetenv("TMPDIR");
  free(g_tmp_old);
  g_tmp_old = NULL;
  tu_rmtree(d);
  free(d);
}

static const char *conv_fmts[] = {"csc", "csr", "coo", "dia", "dcsr"};

START_TEST(test_convert_shared) {
  const char *dd = tu_data_dir();
  if (!dd)
    return;
  char mdir[2048];
  snprintf(mdir, sizeof mdir, "%s/matrices", dd);
  int nf = 0;
  char **files = tu_list_files(mdir, ".mtx", &nf);
  ck_assert_int_gt(nf, 0);
  char *tmp = set_tmpdir();
  conv_tally tally = {0, 0, 0};
  for (int k = 0; k < nf; k++) {
    char *path = tu_path(mdir, files[k]);
    double tm0 = tnow();
    spc_tensor *t = tu_read_ok(path, 1, SPC_VTYPE_AUTO);
    bool small = spc_tensor_nstored(t) <= 6000;
    if (getenv("SPW_TIMING"))
      fprintf(stderr, "R %.4f %s %lld\n", tnow() - tm0, files[k], (long long)spc_tensor_nstored(t));
    for (int f = 0; f < 5; f++)
      check_conversion(t, conv_fmts[f], f, SPC_DUP_SUM, files[k], tmp, small, &tally);
    spc_tensor_free(&t);
    free(path);
    if (getenv("SPW_TIMING"))
      fprintf(stderr, "M %.4f %s\n", tnow() - tm0, files[k]);
  }
  printf("spw: %d shared matrices: %ld conversions equal, %ld refused alike, %ld spilled\n", nf, tally.same,
         tally.refused, tally.spilled);
  ck_assert_int_gt(tally.spilled, 0);
  tu_free_list(files);
  restore_tmpdir(tmp);
}
END_TEST

/* A rows x cols matrix of n entries, unsorted, with duplicates. */
static spc_tensor *dup_matrix(int64_t rows, int64_t cols, int64_t n, spc_vtype vt, int vk, uint64_t seed) {
  int64_t dims[2] = {rows, cols};
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(2, dims, n, vt, &t, &e), &e);
  rng_seed(seed);
  spc_itype ty;
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "crd", NULL, &ty, NULL), SPC_OK);
  void *p0 = spc_tensor_level_array_mut(t, 0, "crd"), *p1 = spc_tensor_level_array_mut(t, 1, "crd");
  stream s;
  memset(&s, 0, sizeof s);
  s.vt = vt;
  s.W = spc_vtype_size(vt);
  s.v = spc_tensor_values_mut(t);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = (int64_t)(rnd() % (uint64_t)rows), j = (int64_t)(rnd() % (uint64_t)cols);
    if (ty == SPC_IDX32)
      ((int32_t *)p0)[k] = (int32_t)i, ((int32_t *)p1)[k] = (int32_t)j;
    else
      ((int64_t *)p0)[k] = i, ((int64_t *)p1)[k] = j;
    if (s.W)
      fill_value(&s, k, vk);
  }
  return t;
}

START_TEST(test_convert_dups) {
  /* duplicates of the source, combined by every policy, in arrival order */
  char *tmp = set_tmpdir();
  conv_tally tally = {0, 0, 0};
  for (int iv = 0; iv < 4; iv++) {
    spc_tensor *t = dup_matrix(23, 17, 1200, vts[iv], V_EXACT, 600 + (uint64_t)iv);
    char name[64];
    snprintf(name, sizeof name, "23x17 with duplicates (%s)", vt_label(vts[iv]));
    for (int f = 0; f < 5; f++)
      for (int dup = 0; dup < 6; dup++)
        check_conversion(t, conv_fmts[f], f + dup, (spc_dup)dup, name, tmp, true, &tally);
    spc_tensor_free(&t);
  }
  /* no duplicates under dup=error: the same arrays */
  {
    spc_tensor *t = dup_matrix(3000, 2000, 50, SPC_F64, V_INEXACT, 601);
    for (int f = 0; f < 5; f++)
      check_conversion(t, conv_fmts[f], f, SPC_DUP_ERROR, "sparse 3000x2000", tmp, true, &tally);
    spc_tensor_free(&t);
  }
  printf("spw: duplicates: %ld conversions equal, %ld refused alike\n", tally.same, tally.refused);
  ck_assert_int_gt(tally.refused, 0);
  restore_tmpdir(tmp);
}
END_TEST

/* The plan without options sorts by the workspace's bucket flush where
 * the components are many (2^16 or more), out of order and at most 32 a
 * top-level coordinate: the same arrays, bit for bit (inexact float sums
 * left to right, every dup policy, every value type), as the packed sort
 * (--plan=sort), and -v's plan says which ran; 100 a row: the packed
 * sort; in order: the counting plan.  Into csr, repeated float64 and int64
 * values (and patterns summed) are combined by the counting plan: the
 * same arrays too. */
START_TEST(test_bucket_plan) {
  static const struct {
    int64_t rows, cols, n;
    bool bucket;
  } cases[] = {{20000, 50, 200000, true}, {1000, 500, 100000, false}};
  int bucketed = 0, ncounted = 0;
  for (int k = 0; k < 2; k++)
    for (int iv = 0; iv < 4; iv++) {
      spc_tensor *t = dup_matrix(cases[k].rows, cases[k].cols, cases[k].n, vts[iv], V_INEXACT, 800 + (uint64_t)iv);
      for (int dup = 0; dup < 6; dup++) {
        for (int f = 0; f < 2; f++) {
          const char *fmt = f ? "csr" : "coo";
          char what[200], why[512];
          snprintf(what, sizeof what, "%lld x %lld, %lld entries (%s) -> %s dup=%s", (long long)cases[k].rows,
                   (long long)cases[k].cols, (long long)cases[k].n, vt_label(vts[iv]), fmt, dup_names[dup]);
          spc_convert_opts o;
          spc_convert_info ia, is;
          spc_tensor *xa = NULL, *xs = NULL;
          spc_error ea, es;
          spc_convert_opts_init(&o);
          o.dup = (spc_dup)dup;
          o.info = &ia;
          spc_status sa = spc_convert_to(t, fmt, &o, &xa, &ea);
          o.plan = SPC_PLAN_SORT;
          o.info = &is;
          spc_status ss = spc_convert_to(t, fmt, &o, &xs, &es);
          ck_assert_msg(sa == ss, "%s: status %s, with --plan=sort %s", what, spc_status_name(sa),
                        spc_status_name(ss));
          /* into csr, float64 and int64 values (and a pattern summed into
           * int64 counts) have their repeats combined by the counting plan */
          bool counted = f == 1 && dup != SPC_DUP_ERROR &&
                         (vts[iv] == SPC_F64 || vts[iv] == SPC_I64 || (vts[iv] == SPC_PATTERN && dup == SPC_DUP_SUM));
          if (sa == SPC_OK && counted) {
            ck_assert_msg(!arrays_diff(xa, xs, why, sizeof why), "%s: %s", what, why);
            ck_assert_msg(strstr(ia.plan, "counting") == ia.plan, "%s: plan '%s'", what, ia.plan);
            ncounted++;
          } else if (sa == SPC_OK) {
            ck_assert_msg(!arrays_diff(xa, xs, why, sizeof why), "%s: %s", what, why);
            bool b = strstr(ia.plan, "buckets") != NULL;
            ck_assert_msg(b == cases[k].bucket, "%s: plan '%s'", what, ia.plan);
            ck_assert_msg(strstr(ia.plan, "sort") == ia.plan, "%s: plan '%s'", what, ia.plan);
            ck_assert_msg(strstr(is.plan, "buckets") == NULL, "%s: --plan=sort ran '%s'", what, is.plan);
            bucketed += b;
          } else {
            ck_assert_msg(dup == SPC_DUP_ERROR && sa == SPC_ERR_INPUT, "%s: %s: %s", what, spc_status_name(sa),
                          ea.msg);
            ck_assert_msg(strstr(ea.msg, "--dup=error") && strstr(ea.msg, fmt), "%s: '%s'", what, ea.msg);
          }
          spc_tensor_free(&xa);
          spc_tensor_free(&xs);
        }
      }
      spc_tensor_free(&t);
    }
  ck_assert_int_eq(bucketed, 4 * 5 * 2 - 11); /* less csr: 5 float64, 5 int64, 1 pattern summed */
  ck_assert_int_eq(ncounted, 2 * 11);
}
END_TEST

/* Mode order (k, i, j) of an order-3 tensor, one compressed level each. */
static const char kij_yaml[] = "format: csf_kij\n"
                               "description: CSF with the modes in order k, i, j (a mode reordering)\n"
                               "order: 3\n"
                               "remap: (i, j, k) -> (k, i, j)\n"
                               "levels: [compressed, compressed, compressed]\n";

START_TEST(test_convert_tensors) {
  const char *dd = tu_data_dir();
  if (!dd)
    return;
  char tdir[2048];
  snprintf(tdir, sizeof tdir, "%s/tensors", dd);
  int nf = 0;
  char **files = tu_list_files(tdir, ".tns", &nf);
  char *tmp = set_tmpdir(), *sd = tu_mkdtemp();
  char *kij = tu_file(sd, "csf_kij.yaml", kij_yaml);
  conv_tally tally = {0, 0, 0};
  int reordered = 0;
  for (int k = 0; k < nf; k++) {
    char *path = tu_path(tdir, files[k]);
    spc_tensor *t = tu_read_ok(path, 0, SPC_VTYPE_AUTO);
    bool small = spc_tensor_nstored(t) <= 6000;
    check_conversion(t, "csf", k, SPC_DUP_SUM, files[k], tmp, small, &tally);
    if (spc_tensor_order(t) == 3) {
      check_conversion(t, kij, k + 1, SPC_DUP_SUM, files[k], tmp, small, &tally);
      /* the reordering really reorders: level 0 holds mode k */
      conv_res r;
      convert(t, kij, SPC_SPW_LIST, 3, 0, SPC_DUP_SUM, &r);
      tu_assert_ok(r.s, &r.e);
      ck_assert_int_eq(spc_tensor_level_dim(r.x, 0), 2);
      spc_tensor_free(&r.x);
      reordered++;
    }
    spc_tensor_free(&t);
    free(path);
  }
  printf("spw: %d shared tensors (%d reordered k,i,j): %ld conversions equal, %ld refused alike\n", nf,
         reordered, tally.same, tally.refused);
  free(kij);
  tu_rmtree(sd);
  free(sd);
  tu_free_list(files);
  restore_tmpdir(tmp);
}
END_TEST

/* spw.h: duplicates combine as a serial pass over the input does.  For
 * floating-point sums that means left to right (((a + b) + c) + d), not
 * partial sums of the flushes added when runs merge ((a + b) + (c + d)):
 * with acc 1 every point is its own flush, inexact values (the other tests
 * use multiples of 1/8, whose sums are exact) show the last bits. */
START_TEST(test_sum_order) {
  stream s = make_stream(1, SPC_F64, 2048, S_DUPS, V_INEXACT, 4711); /* 500 tuples, random order */
  for (int kind = 0; kind < 3; kind++)
    for (int64_t acc = 1; acc <= 64; acc *= 8)
      for (int desc = 0; desc < 2; desc++) {
        cfg c = {.kind = (spw_kind)kind, .acc = acc, .desc = desc, .dup = SPC_DUP_SUM};
        check_cfg(&c, &s);
      }
  /* runs spilled to files (mem 1 KiB), their merges and the k-way pack */
  char *dir = tu_mkdtemp();
  for (int kind = 0; kind < 3; kind++) {
    cfg c = {.kind = (spw_kind)kind, .acc = 3, .mem = 1024, .dup = SPC_DUP_SUM, .tmpdir = dir};
    check_cfg(&c, &s);
    ck_assert_int_eq(tu_count_dir(dir), 0);
  }
  tu_rmtree(dir);
  free(dir);
  stream_free(&s);
}
END_TEST

/* The same through spc_convert_to: a 1 x 2 matrix of 64 entries in
 * random order, csr through the workspace (hash and list, acc 1, 3 and
 * more; a tiny mem) equals csr without it bit for bit (order_components
 * sums left to right). */
START_TEST(test_sum_order_convert) {
  char *tmp = set_tmpdir();
  spc_tensor *t = dup_matrix(1, 2, 64, SPC_F64, V_INEXACT, 4712);
  conv_tally tally = {0, 0, 0};
  check_conversion(t, "csr", 0, SPC_DUP_SUM, "1x2, 64 inexact terms", tmp, true, &tally);
  spc_tensor_free(&t);
  restore_tmpdir(tmp);
}
END_TEST

/* spw.h: spw_get_stats gives the statistics of the last pack (not the sum
 * over the workspace's life): pushing the same 10 points (list, acc 2) and
 * packing twice gives 5 flushes each time, and the same merges. */
START_TEST(test_stats_last_pack) {
  stream s = make_stream(1, SPC_PATTERN, 10, S_DUPS, V_EXACT, 12);
  spw_opts o = {.kind = SPW_LIST, .acc = 2};
  spw *w = NULL;
  spc_error e;
  tu_assert_ok(spw_create(1, SPC_PATTERN, &o, &w, &e), &e);
  packed p1, p2, p3;
  tu_assert_ok(push_all(w, &s, &e), &e);
  take_pack(w, &s, &p1);
  tu_assert_ok(push_all(w, &s, &e), &e);
  take_pack(w, &s, &p2);
  ck_assert_int_eq(p1.stats.flushes, 5);
  ck_assert_int_gt(p1.stats.merges, 0);
  ck_assert_msg(p2.stats.flushes == p1.stats.flushes && p2.stats.merges == p1.stats.merges,
                "second pack of the same points: %lld flushes, %lld merges; first: %lld, %lld",
                (long long)p2.stats.flushes, (long long)p2.stats.merges, (long long)p1.stats.flushes,
                (long long)p1.stats.merges);
  /* a pack with nothing pushed: no flush, no merge */
  take_pack(w, &s, &p3);
  tu_assert_ok(p3.st, &p3.e);
  ck_assert_int_eq(p3.r.n, 0);
  ck_assert_int_eq(p3.stats.flushes, 0);
  ck_assert_int_eq(p3.stats.merges, 0);
  stream_free(&p1.r);
  stream_free(&p2.r);
  stream_free(&p3.r);
  stream_free(&s);
  spw_free(&w);
}
END_TEST

/* ---- the command line -------------------------------------------------------------- */

static spc_tensor *read_ok(const char *path, int expand) { return tu_read_ok(path, expand, SPC_VTYPE_AUTO); }

START_TEST(test_cli_roundtrip) {
  const char *dd = tu_data_dir();
  char *dir = tu_mkdtemp();
  const char *names[] = {"west0067_jumbled.mtx", "GD99_cc.mtx",      "Ragusa16_pattern.mtx",
                         "skew_fp64.mtx",        "matrix_int64.mtx", "bcspwr06.mtx"};
  char *made = NULL;
  {
    /* a file with duplicates, unsorted */
    char *text = malloc(1 << 16);
    int m = snprintf(text, 1 << 16, "%%%%MatrixMarket matrix coordinate real general\n9 7 400\n");
    rng_seed(9);
    for (int k = 0; k < 400; k++)
      m += snprintf(text + m, (size_t)(1 << 16) - (size_t)m, "%d %d %d.25\n", (int)(rnd() % 9) + 1,
                    (int)(rnd() % 7) + 1, (int)(rnd() % 100) - 50);
    made = tu_file(dir, "dups.mtx", text);
    free(text);
  }
  int ran = 0;
  for (int k = -1; k < 6; k++) {
    char *src = k < 0 ? strdup(made) : NULL;
    if (k >= 0) {
      if (!dd)
        continue;
      char m[2048];
      snprintf(m, sizeof m, "%s/matrices/%s", dd, names[k]);
      src = strdup(m);
      if (!tu_exists(src)) {
        free(src);
        continue;
      }
    }
    char *out = tu_path(dir, "out.bsp.h5"), *back = tu_path(dir, "back.mtx"),
         *plain = tu_path(dir, "plain.bsp.h5");
    tu_run_result r;
    tu_run(&r, "'%s' --to=csc --spw=hash --acc=3 -o '%s'", src, out);
    ck_assert_msg(r.status == 0, "%s: exit %d: %s", src, r.status, r.err);
    tu_run_free(&r);
    tu_run(&r, "cat '%s' -o '%s'", out, back);
    ck_assert_msg(r.status == 0, "cat %s: exit %d: %s", out, r.status, r.err);
    tu_run_free(&r);
    tu_run(&r, "'%s' --to=csc -o '%s'", src, plain);
    ck_assert_msg(r.status == 0, "%s: exit %d: %s", src, r.status, r.err);
    tu_run_free(&r);
    spc_tensor *a = read_ok(src, 1), *b = read_ok(back, 1), *x = read_ok(out, 0), *y = read_ok(plain, 0);
    tu_assert_same_tensor(b, a, 0, src);
    char why[512];
    ck_assert_msg(!arrays_diff(x, y, why, sizeof why), "%s: --spw=hash --acc=3 against no workspace: %s", src,
                  why);
    ck_assert_str_eq(spc_tensor_format(x), "csc");
    spc_tensor_free(&a);
    spc_tensor_free(&b);
    spc_tensor_free(&x);
    spc_tensor_free(&y);
    unlink(out);
    unlink(back);
    unlink(plain);
    free(out);
    free(back);
    free(plain);
    free(src);
    ran++;
  }
  ck_assert_int_ge(ran, 1);
  free(made);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_cli_default_kind) {
  /* --acc without --spw: the workspace as a list (-v names it), the same
   * arrays as without the workspace (--mem alone leaves the plan to the
   * library: not checked here) */
  char *dir = tu_mkdtemp();
  char *src = tu_file(dir, "d.mtx", "%%MatrixMarket matrix coordinate real general\n4 5 7\n"
                                    "3 2 1.5\n1 5 2\n3 2 -4\n2 1 0.25\n4 4 8\n1 5 1\n2 2 3\n");
  char *out = tu_path(dir, "o.bsp.h5"), *plain = tu_path(dir, "p.bsp.h5");
  tu_run_result r;
  tu_run(&r, "'%s' --to=csc --acc=2 -v -o '%s'", src, out);
  ck_assert_msg(r.status == 0, "--acc=2: exit %d: %s", r.status, r.err);
  const char *p = strstr(r.err, "sparse workspace (list, accumulator 2 points)");
  ck_assert_msg(p != NULL, "--acc=2 without --spw: -v says '%s'", r.err);
  p = strstr(p, "): ");
  ck_assert_msg(p && atoll(p + 3) == 4, "--acc=2, 7 points: want 4 flushes: '%s'", r.err);
  tu_run_free(&r);
  tu_run(&r, "'%s' --to=csc -o '%s'", src, plain);
  ck_assert_int_eq(r.status, 0);
  tu_run_free(&r);
  spc_tensor *x = read_ok(out, 0), *y = read_ok(plain, 0);
  char why[512];
  ck_assert_msg(!arrays_diff(x, y, why, sizeof why), "--acc=2: %s", why);
  ck_assert_int_eq(spc_tensor_nstored(x), 5);
  spc_tensor_free(&x);
  /* --spw=bucket: one flush (every point held), the same arrays */
  tu_run(&r, "'%s' --to=csc --spw=bucket -v -o '%s'", src, out);
  ck_assert_msg(r.status == 0, "--spw=bucket: exit %d: %s", r.status, r.err);
  p = strstr(r.err, "sparse workspace (bucket, accumulator 0 points from --mem): 1 flushes, 0 merges");
  ck_assert_msg(p != NULL, "--spw=bucket: -v says '%s'", r.err);
  tu_run_free(&r);
  x = read_ok(out, 0);
  ck_assert_msg(!arrays_diff(x, y, why, sizeof why), "--spw=bucket: %s", why);
  spc_tensor_free(&x);
  spc_tensor_free(&y);
  free(src);
  free(out);
  free(plain);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_cli_bad_values) {
  char *dir = tu_mkdtemp();
  char *src = tu_file(dir, "a.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 2\n");
  char *out = tu_path(dir, "o.bsp.h5");
  static const struct {
    const char *arg, *opt;
  } bad[] = {{"--spw=tree", "--spw"}, {"--spw=", "--spw"},    {"--spw=HASH", "--spw"}, {"--acc=0", "--acc"},
             {"--acc=-3", "--acc"},   {"--acc=3x", "--acc"},  {"--acc=", "--acc"},     {"--mem=abc", "--mem"},
             {"--mem=0", "--mem"},    {"--mem=-4K", "--mem"}, {"--mem=4Q", "--mem"},   {"--mem=", "--mem"},
             {"--spw", "--spw"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    tu_run_result r;
    tu_run(&r, "'%s' --to=csc %s%s-o '%s'", src, bad[k].arg, !strcmp(bad[k].arg, "--spw") ? "" : " ", out);
    ck_assert_msg(r.status == 1, "%s: exit %d, want 1 (stderr: %s)", bad[k].arg, r.status, r.err);
    ck_assert_msg(strstr(r.err, bad[k].opt) != NULL, "%s: message '%s' does not name %s", bad[k].arg, r.err,
                  bad[k].opt);
    ck_assert_msg(!tu_exists(out), "%s: output written", bad[k].arg);
    tu_run_free(&r);
  }
  /* good values for comparison */
  const char *good[] = {"--spw=list --acc=1",  "--spw hash --acc 2", "--mem=4K",
                        "--mem=1M --spw=list", "--mem=100000",       "--mem=2kB"};
  for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
    tu_run_result r;
    tu_run(&r, "'%s' --to=csc %s -o '%s'", src, good[k], out);
    ck_assert_msg(r.status == 0, "%s: exit %d (stderr: %s)", good[k], r.status, r.err);
    ck_assert(tu_exists(out));
    unlink(out);
    tu_run_free(&r);
  }
  free(src);
  free(out);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_cli_tmpdir) {
  const char *dd = tu_data_dir();
  char *dir = tu_mkdtemp(), *tmp = tu_path(dir, "tmp");
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  char *src = NULL;
  if (dd) {
    char m[2048];
    snprintf(m, sizeof m, "%s/matrices/bcspwr06.mtx", dd);
    if (tu_exists(m))
      src = strdup(m);
  }
  if (!src) { /* a made one: 3000 entries */
    char *text = malloc(1 << 17);
    int m = snprintf(text, 1 << 17, "%%%%MatrixMarket matrix coordinate real general\n500 400 3000\n");
    rng_seed(10);
    for (int k = 0; k < 3000; k++)
      m += snprintf(text + m, (size_t)(1 << 17) - (size_t)m, "%d %d %d\n", (int)(rnd() % 500) + 1,
                    (int)(rnd() % 400) + 1, (int)(rnd() % 100));
    src = tu_file(dir, "m.mtx", text);
    free(text);
  }
  char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmp, 1);
  const char *fmts[] = {"csc", "csr", "dcsr"}, *spws[] = {"", "--spw=hash", "--spw=list"};
  char *out = tu_path(dir, "o.bsp.h5"), *plain = tu_path(dir, "p.bsp.h5");
  for (int f = 0; f < 3; f++)
    for (int k = 0; k < 3; k++) {
      tu_run_result r;
      tu_run(&r, "'%s' --to=%s %s --mem=4K -v -o '%s'", src, fmts[f], spws[k], out);
      ck_assert_msg(r.status == 0, "--to=%s %s --mem=4K: exit %d: %s", fmts[f], spws[k], r.status, r.err);
      const char *p = strstr(r.err, "runs spilled"); /* -v of the in-memory path */
      if (p) {
        while (p > r.err && p[-1] != ',')
          p--;
        long long spilled = atoll(p);
        ck_assert_msg(spilled > 0, "--to=%s %s --mem=4K: %lld runs spilled (%s)", fmts[f], spws[k], spilled,
                      r.err);
      }
      ck_assert_msg(tu_count_dir(tmp) == 0, "--to=%s %s --mem=4K: %d file(s) left in $TMPDIR", fmts[f],
                    spws[k], tu_count_dir(tmp));
      tu_run_free(&r);
      tu_run(&r, "'%s' --to=%s -o '%s'", src, fmts[f], plain);
      ck_assert_int_eq(r.status, 0);
      tu_run_free(&r);
      spc_tensor *x = read_ok(out, 0), *y = read_ok(plain, 0);
      char why[512];
      ck_assert_msg(!arrays_diff(x, y, why, sizeof why), "--to=%s %s --mem=4K: %s", fmts[f], spws[k], why);
      spc_tensor_free(&x);
      spc_tensor_free(&y);
      unlink(out);
      unlink(plain);
    }
  /* --mem=4K does spill: with $TMPDIR unusable the run fails (exit 3,
   * the workspace named) and writes nothing */
  {
    char *gone = tu_path(dir, "no/such/tmp");
    setenv("TMPDIR", gone, 1);
    for (int k = 0; k < 3; k++) {
      tu_run_result r;
      /* without --spw the counting path reads the (sorted) file twice
       * and needs no temporary file: --plan=sort keeps the workspace */
      tu_run(&r, "'%s' --to=csr %s --mem=4K %s -o '%s'", src, spws[k], k ? "" : "--plan=sort", out);
      ck_assert_msg(r.status == 3, "--mem=4K %s, $TMPDIR missing: exit %d, want 3 (%s)", spws[k], r.status,
                    r.err);
      ck_assert_msg(strstr(r.err, "workspace") != NULL, "--mem=4K, $TMPDIR missing: message '%s'", r.err);
      ck_assert(!tu_exists(out));
      tu_run_free(&r);
    }
    { /* ... the counting path spills nothing: it needs $TMPDIR only for
       * an output past a quarter of the budget, which goes to temporary
       * files (exit 3 without one, nothing written) */
      tu_run_result r;
      tu_run(&r, "'%s' --to=csr --mem=4K -v -o '%s'", src, out);
      ck_assert_msg(r.status == 3, "--mem=4K (counting), $TMPDIR missing: exit %d (%s)", r.status, r.err);
      ck_assert_msg(strstr(r.err, "cannot create a temporary file for the output") != NULL &&
                        strstr(r.err, "no/such/tmp") != NULL,
                    "--mem=4K (counting), $TMPDIR missing: message '%s'", r.err);
      ck_assert(!tu_exists(out));
      tu_run_free(&r);
      tu_run(&r, "'%s' --to=csr --mem=64M -v -o '%s'", src, out);
      ck_assert_msg(r.status == 0, "--mem=64M (counting), $TMPDIR missing: exit %d (%s)", r.status, r.err);
      ck_assert_msg(strstr(r.err, "plan: counting, the file read twice") != NULL &&
                        !strstr(r.err, "temporary files"),
                    "-v: '%s'", r.err);
      ck_assert(tu_exists(out));
      unlink(out);
      tu_run_free(&r);
    }
    setenv("TMPDIR", tmp, 1);
    free(gone);
  }
  /* a failing run after spilling: --dup=error on a late duplicate */
  {
    char *text = malloc(1 << 17);
    int m = snprintf(text, 1 << 17, "%%%%MatrixMarket matrix coordinate real general\n100 100 2001\n");
    for (int k = 0; k < 2000; k++)
      m += snprintf(text + m, (size_t)(1 << 17) - (size_t)m, "%d %d %d\n", (k * 7919) % 2000 % 100 + 1,
                    (k * 7919) % 2000 / 100 + 1, k);
    m += snprintf(text + m, (size_t)(1 << 17) - (size_t)m, "1 1 5\n");
    char *late = tu_file(dir, "late.mtx", text);
    free(text);
    for (int k = 1; k < 3; k++) {
      tu_run_result r;
      tu_run(&r, "'%s' --to=csr %s --mem=4K --dup=error -o '%s'", late, spws[k], out);
      ck_assert_msg(r.status == 2, "late duplicate, %s: exit %d, want 2: %s", spws[k], r.status, r.err);
      ck_assert_msg(strstr(r.err, "--dup=error") != NULL, "message: %s", r.err);
      ck_assert_msg(tu_count_dir(tmp) == 0, "late duplicate, %s: %d file(s) left in $TMPDIR", spws[k],
                    tu_count_dir(tmp));
      ck_assert(!tu_exists(out));
      tu_run_free(&r);
    }
    free(late);
  }
  if (old)
    setenv("TMPDIR", old, 1), free(old);
  else
    unsetenv("TMPDIR");
  free(out);
  free(plain);
  free(src);
  free(tmp);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

Suite *suite_spw(void) {
  Suite *s = suite_create("spw");
  TCase *tc = tcase_create("unit");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_unit_matrix);
  tcase_add_test(tc, test_unit_wide);
  tcase_add_test(tc, test_unit_edges);
  tcase_add_test(tc, test_unit_reuse);
  tcase_add_test(tc, test_unit_default_acc);
  tcase_add_test(tc, test_bucket_unit);
  tcase_add_test(tc, test_bucket_grow);
  suite_add_tcase(s, tc);
  tc = tcase_create("threads");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_bucket_threads);
  suite_add_tcase(s, tc);
  tc = tcase_create("spill");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_spill);
  tcase_add_test(tc, test_spill_failures);
  tcase_add_test(tc, test_spill_nomem);
  suite_add_tcase(s, tc);
  tc = tcase_create("convert");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_convert_shared);
  tcase_add_test(tc, test_convert_dups);
  tcase_add_test(tc, test_convert_tensors);
  tcase_add_test(tc, test_bucket_plan);
  suite_add_tcase(s, tc);
  tc = tcase_create("cli");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_cli_roundtrip);
  tcase_add_test(tc, test_cli_default_kind);
  tcase_add_test(tc, test_cli_bad_values);
  tcase_add_test(tc, test_cli_tmpdir);
  suite_add_tcase(s, tc);
  tc = tcase_create("order");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_sum_order);
  tcase_add_test(tc, test_sum_order_convert);
  tcase_add_test(tc, test_stats_last_pack);
  suite_add_tcase(s, tc);
  return s;
}
