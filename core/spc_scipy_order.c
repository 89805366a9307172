/* spc_scipy_order.c -- the order SciPy sums a matrix's duplicate entries in.
 *
 * SciPy's csr_matrix(coo) (coo_tocsr, then sum_duplicates) places each
 * row's entries in the order they are stored, sorts the row by column with
 * std::sort (csr_sort_indices: pairs of column and value, compared by the
 * column alone) and adds each run of equal columns left to right.
 * std::sort is not stable: libstdc++'s introsort partitions rows of more
 * than 16 entries, so three or more duplicates of one coordinate in such
 * a row are added in an order other than the file's -- and floating-point
 * addition is not associative, so the sum's last bits differ.  (Two
 * duplicates add the same either way; rows of up to 16 entries are
 * insertion-sorted, which is stable.)
 *
 * spconv's conversions add a coordinate's duplicates in storage order
 * (stable) -- as SciPy does too where every row, in file order, has its
 * columns non-decreasing: it sorts no row then (sum_duplicates sorts only
 * where csr_has_sorted_indices says no).  spc_coo_scipy_dup_order moves
 * the values of each such run within its own positions so that adding
 * them in storage order adds them in SciPy's order: libstdc++'s std::sort (GCC 4.9 onwards, unchanged
 * since) replayed on the row's columns. Coordinates do not move. */
#include "spc_impl.h"
#include <stdlib.h>
#include <string.h>

typedef struct cp {
  int64_t col, pos;
} cp;

#define LESS(a, b) ((a).col < (b).col)

enum { S_THRESHOLD = 16 };

static void swap_cp(cp *a, cp *b) {
  cp t = *a;
  *a = *b;
  *b = t;
}

static void move_median_to_first(cp *result, cp *a, cp *b, cp *c) {
  if (LESS(*a, *b)) {
    if (LESS(*b, *c)) swap_cp(result, b);
    else if (LESS(*a, *c)) swap_cp(result, c);
    else swap_cp(result, a);
  } else if (LESS(*a, *c)) {
    swap_cp(result, a);
  } else if (LESS(*b, *c)) {
    swap_cp(result, c);
  } else {
    swap_cp(result, b);
  }
}

static cp *unguarded_partition(cp *first, cp *last, const cp *pivot) {
  for (;;) {
    while (LESS(*first, *pivot)) ++first;
    --last;
    while (LESS(*pivot, *last)) --last;
    if (!(first < last)) return first;
    swap_cp(first, last);
    ++first;
  }
}

static void push_heap(cp *first, ptrdiff_t hole, ptrdiff_t top, cp value) {
  ptrdiff_t parent = (hole - 1) / 2;
  while (hole > top && LESS(first[parent], value)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = value;
}

static void adjust_heap(cp *first, ptrdiff_t hole, ptrdiff_t len, cp value) {
  const ptrdiff_t top = hole;
  ptrdiff_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (LESS(first[child], first[child - 1])) child--;
    first[hole] = first[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    first[hole] = first[child - 1];
    hole = child - 1;
  }
  push_heap(first, hole, top, value);
}

/* __partial_sort(first, last, last): make_heap, then sort_heap */
static void heap_sort(cp *first, cp *last) {
  ptrdiff_t len = last - first;
  if (len >= 2)
    for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
      adjust_heap(first, parent, len, first[parent]);
      if (parent == 0) break;
    }
  while (last - first > 1) {
    --last;
    cp value = *last;
    *last = *first;
    adjust_heap(first, 0, last - first, value);
  }
}

static void introsort_loop(cp *first, cp *last, int64_t depth) {
  while (last - first > S_THRESHOLD) {
    if (depth == 0) {
      heap_sort(first, last);
      return;
    }
    --depth;
    cp *mid = first + (last - first) / 2;
    move_median_to_first(first, first + 1, mid, last - 1);
    cp *cut = unguarded_partition(first + 1, last, first);
    introsort_loop(cut, last, depth);
    last = cut;
  }
}

static void unguarded_linear_insert(cp *last) {
  cp val = *last, *next = last - 1;
  while (LESS(val, *next)) {
    *last = *next;
    last = next;
    --next;
  }
  *last = val;
}

static void insertion_sort(cp *first, cp *last) {
  if (first == last) return;
  for (cp *i = first + 1; i != last; ++i) {
    if (LESS(*i, *first)) {
      cp val = *i;
      memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
      *first = val;
    } else {
      unguarded_linear_insert(i);
    }
  }
}

static int lg(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* std::sort(first, last) as libstdc++ does it */
static void stl_sort(cp *first, cp *last) {
  if (first == last) return;
  introsort_loop(first, last, (int64_t)lg(last - first) * 2);
  if (last - first > S_THRESHOLD) {
    insertion_sort(first, first + S_THRESHOLD);
    for (cp *i = first + S_THRESHOLD; i != last; ++i) unguarded_linear_insert(i);
  } else {
    insertion_sort(first, last);
  }
}

static int cmp_pos(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static int cmp_pair(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  for (int k = 0; k < 2; k++)
    if (a[k] != b[k]) return (a[k] > b[k]) - (a[k] < b[k]);
  return 0;
}

/* t a COO matrix as the readers make it (levels compressed, singleton in
 * dimension order) with float or complex values -- other sums are exact,
 * in any order: its row and column arrays */
static bool plain_matrix(const spc_tensor *t, const spc_array **r, const spc_array **c) {
  if (t->order != 2 || t->ext || t->nlevels != 2 || t->lv[0].fmt != &spc_level_compressed ||
      t->lv[1].fmt != &spc_level_singleton || t->lv[0].dim != 0 || t->lv[1].dim != 1)
    return false;
  if (t->vt != SPC_F32 && t->vt != SPC_F64 && t->vt != SPC_C128) return false;
  *r = spc_level_array_c(&t->lv[0], "crd");
  *c = spc_level_array_c(&t->lv[1], "crd");
  return *r && *c;
}

static spc_status dup_order(spc_tensor *t, int *moved, spc_error *e);

spc_status spc_coo_scipy_dup_order(spc_tensor **tp, int *moved, spc_error *e) {
  if (moved) *moved = 0;
  spc_tensor *t = tp ? *tp : NULL;
  if (!t || t->sym == SPC_GENERAL) return dup_order(t, moved, e);
  const spc_array *r, *c;
  if (!plain_matrix(t, &r, &c)) return SPC_OK;
  int64_t n = spc_tensor_nstored(t);
  if (n < 2 || spc_pairs_increasing(r, c, n) || spc_pairs_increasing(c, r, n)) return SPC_OK;
  spc_tensor *x = NULL;
  spc_status s = spc_tensor_expand(t, &x, e);
  if (s) return s;
  spc_tensor_free(tp);
  *tp = x;
  return dup_order(x, moved, e);
}

/* The positions grouped by row, each row in file order (coo_tocsr's
 * order): perm[rp[i] .. rp[i + 1]) for the k-th row met, *nr rows.  By
 * counting where the rows are few enough for an array of them, else by a
 * sort of (row, position). */
static spc_status rows_in_file_order(const spc_array *r, int64_t n, int64_t m, int64_t **perm,
                                     int64_t **rp, int64_t *nr, spc_error *e) {
  *perm = spc_malloc_n(n, sizeof **perm);
  if (!*perm) return SPC_NOMEM(e);
  if (m <= 2 * n + ((int64_t)1 << 20)) {
    int64_t *cnt = spc_calloc((size_t)m + 1, sizeof *cnt);
    if (!cnt) return SPC_NOMEM(e);
    for (int64_t k = 0; k < n; k++) cnt[spc_arr_get(r, k) + 1]++;
    int64_t rows = 0;
    for (int64_t i = 0; i < m; i++) rows += cnt[i + 1] > 0, cnt[i + 1] += cnt[i];
    for (int64_t k = 0; k < n; k++) (*perm)[cnt[spc_arr_get(r, k)]++] = k;
    /* cnt[i]: row i's end now; the nonempty rows' bounds */
    *rp = spc_malloc_n(rows + 1, sizeof **rp);
    if (!*rp) {
      spc_free(cnt);
      return SPC_NOMEM(e);
    }
    int64_t k = 0, at = 0;
    (*rp)[0] = 0;
    for (int64_t i = 0; i < m; i++)
      if (cnt[i] > at) (*rp)[++k] = at = cnt[i];
    *nr = rows;
    spc_free(cnt);
    return SPC_OK;
  }
  int64_t *x = spc_malloc_n(n, 2 * sizeof *x);
  if (!x) return SPC_NOMEM(e);
  for (int64_t k = 0; k < n; k++) x[2 * k] = spc_arr_get(r, k), x[2 * k + 1] = k;
  qsort(x, (size_t)n, 2 * sizeof *x, cmp_pair);
  int64_t rows = 0;
  for (int64_t k = 0; k < n; k++) rows += !k || x[2 * k] != x[2 * (k - 1)];
  *rp = spc_malloc_n(rows + 1, sizeof **rp);
  if (!*rp) {
    spc_free(x);
    return SPC_NOMEM(e);
  }
  int64_t q = 0;
  for (int64_t k = 0; k < n; k++) {
    if (!k || x[2 * k] != x[2 * (k - 1)]) (*rp)[q++] = k;
    (*perm)[k] = x[2 * k + 1];
  }
  (*rp)[rows] = n;
  *nr = rows;
  spc_free(x);
  return SPC_OK;
}

static spc_status dup_order(spc_tensor *t, int *moved, spc_error *e) {
  const spc_array *r, *c;
  if (!t || t->sym != SPC_GENERAL || !plain_matrix(t, &r, &c)) return SPC_OK;
  int64_t n = spc_tensor_nstored(t), ncol = t->dims[1];
  if (n < 3 || spc_pairs_increasing(r, c, n) || spc_pairs_increasing(c, r, n)) return SPC_OK;
  int64_t *perm = NULL, *rp = NULL, nr = 0;
  spc_status s = rows_in_file_order(r, n, t->dims[0], &perm, &rp, &nr, e);
  /* SciPy sorts the rows only where one of them, in file order, has a
   * column below the one before it (csr_has_sorted_indices): else it adds
   * in file order, as spconv does */
  bool sorts = false;
  for (int64_t i = 0; !s && i < nr && !sorts; i++)
    for (int64_t k = rp[i] + 1; k < rp[i + 1] && !sorts; k++)
      sorts = spc_arr_get(c, perm[k]) < spc_arr_get(c, perm[k - 1]);
  /* a row's columns seen three times: stamps by column where the columns
   * are few enough for an array of them (else every long row is sorted) */
  int64_t *stamp = NULL;
  unsigned char *seen = NULL;
  if (!s && sorts && ncol <= 2 * n + ((int64_t)1 << 20)) {
    stamp = spc_malloc_n(ncol ? ncol : 1, sizeof *stamp);
    seen = spc_malloc_n(ncol ? ncol : 1, 1);
    if (!stamp || !seen) s = SPC_NOMEM(e);
    for (int64_t j = 0; !s && j < ncol; j++) stamp[j] = -1;
  }
  size_t w = spc_vtype_size(t->vt);
  cp *row = NULL;
  int64_t *fp = NULL, cap = 0;
  unsigned char *tmp = NULL;
  for (int64_t i = 0; !s && sorts && i < nr; i++) {
    int64_t b = rp[i], len = rp[i + 1] - b;
    if (len <= S_THRESHOLD) continue; /* insertion-sorted: stable */
    if (stamp) {
      bool three = false;
      for (int64_t k = b; k < b + len && !three; k++) {
        int64_t j = spc_arr_get(c, perm[k]);
        if (stamp[j] != i) stamp[j] = i, seen[j] = 0;
        three = ++seen[j] >= 3;
      }
      if (!three) continue;
    }
    if (len > cap) {
      spc_free(row), spc_free(fp), spc_free(tmp);
      row = spc_malloc_n(len, sizeof *row);
      fp = spc_malloc_n(len, sizeof *fp);
      tmp = spc_malloc_n(len, w);
      cap = len;
      if (!row || !fp || !tmp) {
        s = SPC_NOMEM(e);
        break;
      }
    }
    /* the row as coo_tocsr leaves it (file order), sorted as std::sort does */
    for (int64_t k = 0; k < len; k++) row[k] = (cp){spc_arr_get(c, perm[b + k]), perm[b + k]};
    stl_sort(row, row + len);
    /* each run of three or more equal columns: its positions in file
     * order receive its values in std::sort's order */
    for (int64_t g = 0, ge; g < len; g = ge) {
      for (ge = g + 1; ge < len && row[ge].col == row[g].col; ge++) {
      }
      if (ge - g < 3) continue;
      for (int64_t k = g; k < ge; k++) fp[k - g] = row[k].pos;
      qsort(fp, (size_t)(ge - g), sizeof *fp, cmp_pos);
      bool same = true;
      for (int64_t k = g; k < ge; k++) {
        memcpy(tmp + (size_t)(k - g) * w, (const unsigned char *)t->val + (size_t)row[k].pos * w, w);
        same &= fp[k - g] == row[k].pos;
      }
      if (same) continue;
      for (int64_t k = 0; k < ge - g; k++)
        memcpy((unsigned char *)t->val + (size_t)fp[k] * w, tmp + (size_t)k * w, w);
      if (moved) (*moved)++;
    }
  }
  spc_free(row), spc_free(fp), spc_free(tmp), spc_free(stamp), spc_free(seen);
  spc_free(perm), spc_free(rp);
  return s;
}
