/* spw.h -- the sparse workspace (DESIGN.md section 5): points in any order,
 * with duplicates, become a sorted, duplicate-free stream of level
 * coordinate tuples for the ordinary assembly path.
 *
 *   Acc   a fixed-capacity accumulator: SPW_HASH (open addressing keyed by
 *         the whole tuple, duplicates combined on insert) or SPW_LIST
 *         (append; duplicates combined when the list is sorted), or
 *         SPW_BUCKET (the list, grown while the budget holds every point;
 *         its flush counts level 0 and sorts each segment: below);
 *   flush when Acc is full: sort (ascending or descending tuples),
 *         combine, and push the result as a sorted run (spw_sort.c: an
 *         LSD radix sort of the tuples packed into 64-bit keys with the
 *         arrival index, where every level's range in Acc fits; else a
 *         stable sort of positions);
 *   runs  merged geometrically (the two newest while the newer is at least
 *         half the older), so every point takes part in O(log n) merges:
 *         O(n log n) in all at any capacity; when the runs in memory pass
 *         the memory budget the oldest go to temporary files (two runs in
 *         memory merge in place, the older's arrays grown: spw_merge.c);
 *   pack  a k-way merge of every run (memory and files) into the result
 *         arrays, temporary files removed on success and failure (and on
 *         interrupt, through spw_cleanup_files from a signal handler); in
 *         memory, the newest two runs are folded (not combined) until two
 *         remain, then one combining merge of the two -- the order and the
 *         combines of the k-way merge.  Heads compare as packed keys where
 *         the runs' ranges fit in 64 bits, else tuple by tuple.
 *
 * Duplicates combine by a spc_dup policy in arrival order (runs are
 * chronological and merges prefer the older run), exactly as a serial pass
 * over the input does: first, last, min, max, error and integer sums
 * whatever the grouping; float sums (f32, f64, c128) left to right,
 * ((a + b) + c) + d bit for bit.  For these a run holds a combined value
 * only where it is the serial prefix sum: in the oldest run (the first
 * flush, combined in Acc -- the hash adds on insert while no run exists --
 * and its merges with the next run, adding left to right); every later
 * Acc (the hash then appends, as the list) and every other run keep a
 * tuple's duplicates apart in arrival order, and the pack (or stream)
 * adds them to the oldest run's sums left to right.  So float-sum
 * workspaces keep more entries in later fillings and runs. */
#ifndef SPC_SPW_H
#define SPC_SPW_H

#include "spc_impl.h"

/* SPW_BUCKET: the list, but Acc grows (no flush) while every point held
 * so far, with the scratch of a bucket sort, fits the memory budget; its
 * flush then counts the outer level (level 0) when that level's range is
 * at most SPW_BUCKET_RANGE(n) -- one counting pass, a stable scatter into
 * segments, a sort of each segment by the inner levels (insertion sort
 * when short, radix when long), duplicates combined in arrival order
 * (spw_sort.c, sort_bucket) -- else sorts as the list does.  Past the
 * budget it flushes what it holds as one run and goes on as the list
 * (Acc back to the list's capacity, runs merged and spilled).  The
 * default of the library (assemble's SPC_SPW_NONE). */
typedef enum spw_kind { SPW_HASH = 0, SPW_LIST = 1, SPW_BUCKET = 2 } spw_kind;

/* The outer ranges a bucket flush of n points counts (else it sorts as
 * the list does): it visits every coordinate of the range, so at most 2
 * a point (and a small floor). */
#define SPW_BUCKET_RANGE(n) (2 * (n) + 4096)

/* Bytes a bucket workspace reserves per point held: Acc (L coordinates
 * and a value), the flush's run (as much; its step-1 records live in the
 * run's arrays, 12 bytes a point in its values for 8-byte values, or a
 * scratch of keys where the caller's columns are taken) and scratch (a
 * group's records, a segment's keys), with room to spare. */
#define SPW_BUCKET_PER(rec) (2 * (rec) + 32)

/* The Acc capacity when none is given: mem / 2 / (bytes per point), at
 * most this many points.  Chosen from bench/run_spw.sh (bench/README.md,
 * "The sparse workspace benchmark"): 2^18 points were as fast as 2^22 on
 * 0.1 M to 2 M points and faster on 16 M (fewer cache misses per flush,
 * more merges, still O(n log n)), with a 6 MB instead of a 96 MB Acc (L = 2,
 * float64; a hash also clears its 2 x capacity slots at every flush). */
#define SPW_DEFAULT_ACC ((int64_t)1 << 18)

/* The workspace kind of spc_convert_opts.spw: SPC_SPW_HASH the hash,
 * SPC_SPW_LIST the list, else (SPC_SPW_NONE, SPC_SPW_BUCKET) the bucket:
 * the default, chosen from bench/run_spw.sh (bench/README.md, "Bucket
 * then sort segments"). */
static inline spw_kind spw_kind_of(int spc_spw) {
  return spc_spw == SPC_SPW_HASH ? SPW_HASH : spc_spw == SPC_SPW_LIST ? SPW_LIST : SPW_BUCKET;
}

typedef struct spw_opts {
  spw_kind kind;
  int64_t acc;        /* Acc capacity in points; 0: from mem, at most
                         SPW_DEFAULT_ACC (a bucket workspace: grows
                         within mem; given: never grows) */
  int64_t mem;        /* bytes for Acc and runs in memory; 0: 1/4 of RAM */
  bool descending;    /* tuples in descending order */
  spc_dup dup;
  const char *tmpdir; /* NULL: $TMPDIR or /tmp */
} spw_opts;

typedef struct spw spw;

/* A workspace for tuples of L int64 coordinates and values of type vt. */
SPC_INTERNAL spc_status spw_create(int L, spc_vtype vt, const spw_opts *o,
                                   spw **out, spc_error *e);
/* Insert n points: coordinate l of point t is cols[l][t]; values (n of
 * them, vt's width) may be NULL for pattern. */
SPC_INTERNAL spc_status spw_push(spw *w, int64_t n, const int64_t *const *cols,
                                 const void *vals, spc_error *e);
/* The points so far, sorted and combined: *n tuples in cols[l] (spc_malloc,
 * owned by the caller) and values.  The workspace is empty afterwards. */
SPC_INTERNAL spc_status spw_pack(spw *w, int64_t *n, int64_t **cols,
                                 void **vals, spc_error *e);
/* The bucket flush alone: an empty bucket workspace (no acc given,
 * ascending) whose budget holds the n > 0 points sorts them where they
 * are, combined, into *nout tuples in out / vout (as spw_pack does);
 * SPC_NOT_HANDLED, nothing done, where that does not apply (spw_sort_cols
 * says when).  take: cols[0..L) are the caller's arrays of n (spc_malloc,
 * not const), the workspace's on every status but SPC_NOT_HANDLED: it
 * writes the result over them (out[l] is then cols[l]) or frees them --
 * the caller frees them only on SPC_NOT_HANDLED. */
SPC_INTERNAL spc_status spw_bucket_pack(spw *w, int64_t n, const int64_t *const *cols,
                                        const void *vals, bool take, int64_t *nout,
                                        int64_t **out, void **vout, spc_error *e);
/* spw_push of the n points, then spw_pack; a bucket workspace (kind
 * SPW_BUCKET, no acc given, ascending) that is empty and whose budget
 * holds the n points sorts them where they are (no copy into Acc) when
 * the bucket flush applies to them.  The same result either way.  take:
 * cols[0..L) are the workspace's on every status (spw_bucket_pack's, or
 * freed once pushed). */
SPC_INTERNAL spc_status spw_push_pack(spw *w, int64_t n, const int64_t *const *cols,
                                      const void *vals, bool take, int64_t *nout,
                                      int64_t **out, void **vout, spc_error *e);
/* The same sorted, combined stream without holding it: delivered to cb in
 * chunks of at most `chunk` tuples (cols[l][0..n), values), the runs kept,
 * so it can be streamed again (the same tuples, the same values); spw_pack
 * or spw_free afterwards.  A non-zero status from cb stops it. */
typedef spc_status (*spw_chunk_fn)(void *ctx, int64_t n, int64_t *const *cols, const void *vals,
                                   spc_error *e);
SPC_INTERNAL spc_status spw_stream(spw *w, int64_t chunk, spw_chunk_fn cb, void *ctx,
                                   spc_error *e);
/* Acc flushed into a run and, grown past the list's capacity (a bucket),
 * shrunk back to it: what spw_stream does first.  Then spw_mem_held says
 * what the workspace holds in memory (its runs, Acc and hash slots). */
SPC_INTERNAL spc_status spw_settle(spw *w, spc_error *e);
SPC_INTERNAL int64_t spw_mem_held(const spw *w);
SPC_INTERNAL void spw_free(spw **w);

/* Statistics of the last pack (for --verbose and the benchmark): from
 * the first push after the previous pack (or spw_create) to the end of
 * the last spw_pack; before that pack, of the pushes (and streams) so
 * far.  Reset when a push, stream or pack follows a pack. */
typedef struct spw_stats {
  int64_t flushes, merges, spilled_runs, spilled_bytes, peak_bytes;
  int64_t bucketed;       /* flushes sorted by bucket then segments */
  int64_t bucket_threads; /* the most threads a bucket flush ran on */
} spw_stats;
SPC_INTERNAL void spw_get_stats(const spw *w, spw_stats *s);

/* Remove every temporary file of every live workspace (async-signal-safe:
 * unlink only). */
SPC_API void spw_cleanup_files(void);

#endif
