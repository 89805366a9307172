/* spw_impl.h -- what spw.c (Acc, flush, the interface) and spw_merge.c
 * (k-way merge of runs) share: the workspace, its runs, the packing of a
 * tuple into one 64-bit key, value copies and combines by width. */
#ifndef SPC_SPW_IMPL_H
#define SPC_SPW_IMPL_H

#include "spw.h"
#include <signal.h>
#include <string.h>

#define MAXL SPC_MAX_ORDER

/* A sorted run: in memory (columns c, values v) or spilled to path as
 * records (L int64, then W bytes).  lo / hi: every level's coordinate
 * range (stored form), when n > 0. */
typedef struct run {
  int64_t n;
  int64_t *c[MAXL];
  char *v;
  int64_t lo[MAXL], hi[MAXL];
  bool file;
  char path[512];
} run;

struct spw {
  int L;
  size_t W;
  spc_vtype vt;
  spw_opts o;
  int64_t cap;      /* Acc capacity */
  int64_t cap_list; /* the list's capacity (a bucket workspace goes back
                       to it past its budget) */
  int64_t mem;      /* the memory budget (resolved) */
  bool abandoned;   /* bucket: Acc outgrew the budget in this filling;
                       it goes on as the list until the pack */
  int64_t n;        /* points in Acc */
  int64_t *c[MAXL]; /* Acc columns (stored transformed: ~x when descending) */
  char *v;
  int64_t *slot;    /* hash: slot -> entry + 1 (0: empty) */
  int64_t nslot;
  run *runs;
  int nruns, caprun;
  int64_t mem_runs; /* bytes of runs in memory */
  int64_t budget_runs;
  spw_stats st;
  int files_made;
  uint64_t *sk, *tmp; /* the flush's keys and scratch (cap each), kept
                         between flushes; freed by the pack */
  int64_t *cnt;       /* the flush's radix counters */
  bool exact;       /* float sums: a run holds a combined value only where
                       it is the serial prefix sum, i.e. in the oldest run
                       (runs[0]: the first flush, then merges of runs[0]
                       with runs[1]); the Acc (hash or list) of every later
                       filling and every other run keep a tuple's
                       duplicates apart in arrival order, and the merges
                       into runs[0] and the pack add them left to right */
  bool packed;      /* a pack ended the last filling: st is reset when the
                       next one begins */
  /* the file a merge is writing (not yet among runs): removed too by
   * spw_cleanup_files; writing_on while it exists unregistered */
  char writing[512];
  volatile sig_atomic_t writing_on;
  struct spw *next_live;
};

/* Tuples with level l in [lo[l], lo[l] + 2^bits[l]) as one key:
 * sum of (x[l] - lo[l]) << sh[l], level 0 in the highest bits, so keys
 * order as the tuples do.  ok: the bits fit in 64. */
typedef struct spw_packing {
  bool ok;
  int L, bits;
  int64_t lo[MAXL];
  int sh[MAXL];
  uint64_t mask[MAXL];
} spw_packing;

SPC_INTERNAL void spw_packing_of(spw_packing *p, int L, const int64_t *lo, const int64_t *hi);

static inline uint64_t spw_key(const spw_packing *p, int64_t *const *c, int64_t i) {
  uint64_t k = 0;
  for (int l = 0; l < p->L; l++) k |= ((uint64_t)c[l][i] - (uint64_t)p->lo[l]) << p->sh[l];
  return k;
}

static inline int64_t spw_unkey(const spw_packing *p, int l, uint64_t k) {
  return (int64_t)((uint64_t)p->lo[l] + ((k >> p->sh[l]) & p->mask[l]));
}

/* d = s, W bytes (W <= 16): fixed-width moves for the usual widths. */
static inline void spw_val_copy(char *d, const char *s, size_t W) {
  switch (W) {
  case 0: break;
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  case 16: memcpy(d, s, 16); break;
  default: memcpy(d, s, W);
  }
}

/* d = combine(d, s) by the workspace's policy (d the earlier entry). */
static inline void spw_val_combine(const spw *w, char *d, const char *s) {
  if (w->o.dup == SPC_DUP_FIRST || !w->W) return;
  if (w->vt == SPC_F64 && w->o.dup == SPC_DUP_SUM) {
    double x, y;
    memcpy(&x, d, 8);
    memcpy(&y, s, 8);
    x = x + y;
    memcpy(d, &x, 8);
    return;
  }
  if (w->o.dup == SPC_DUP_LAST) {
    spw_val_copy(d, s, w->W);
    return;
  }
  spc_val_combine(w->vt, w->o.dup, d, s);
}

static inline int64_t spw_rec_bytes(const spw *w) { return (int64_t)w->L * 8 + (int64_t)w->W; }

/* Points to sort: n of them, coordinate l of point i at c[l][i] (stored
 * form), values v (W bytes each).  take: c[l] are the caller's arrays of
 * n (spc_malloc'ed, not const), given to the bucket flush: they become the
 * run's columns. */
typedef struct spw_pts {
  int64_t n;
  const int64_t *c[MAXL];
  const char *v;
  bool take;
} spw_pts;

/* Acc's w->n > 0 points, sorted and combined, into the run r (in memory,
 * with its ranges; freed by the caller on failure).  spw_sort.c. */
SPC_INTERNAL spc_status spw_sort_acc(spw *w, run *r, spc_error *e);
/* The same of P's n > 0 points (the caller's columns, read in place, or
 * taken: r's columns, freed with r) by the bucket flush only;
 * SPC_NOT_HANDLED (r empty, nothing taken) where that does not apply: not a bucket workspace, tuples that do not pack in 64 bits,
 * inner levels (1..) that do not pack with a point's index, or level 0's
 * range past SPW_BUCKET_RANGE(n). */
SPC_INTERNAL spc_status spw_sort_cols(spw *w, const spw_pts *P, run *r, spc_error *e);
SPC_INTERNAL spc_status spw_dup_error(spc_error *e, const spw *w, const int64_t *x);
SPC_INTERNAL void spw_run_free(run *r);

/* Merge runs rs[0..k) (chronological) into out, a run in memory or (file)
 * a temporary file; ties: the older run first.  Duplicates combine unless
 * the workspace is exact and rs is not w->runs (the oldest run first);
 * final: always combine.  cb: deliver the result
 * to cb in chunks of `chunk` tuples instead (out is scratch, freed). */
SPC_INTERNAL spc_status spw_merge(spw *w, run *rs, int k, run *out, bool file, bool final,
                                  spw_chunk_fn cb, void *ctx, int64_t chunk, spc_error *e);

/* Runs a (older) and b, both in memory, merged into a (b freed), when
 * their ranges pack into 64 bits; SPC_NOT_HANDLED otherwise.  Combined
 * unless the workspace is exact and a is not w->runs (the oldest); fold: never combined, nor counted (a
 * step of the final merge).  On an error a and b are left to be freed. */
SPC_INTERNAL spc_status spw_merge2_mem(spw *w, run *a, run *b, bool fold, spc_error *e);
/* The final merge of two runs in memory into out (new arrays), combining;
 * SPC_NOT_HANDLED where their ranges do not pack. */
SPC_INTERNAL spc_status spw_merge2_new(spw *w, run *a, run *b, run *out, spc_error *e);

#endif
