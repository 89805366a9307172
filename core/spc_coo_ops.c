/* spc_coo_ops.c -- whole-tensor operations producing a new COO: copy out of
 * any format, symmetric expansion, sort + combine of duplicates. */
#include "spc_impl.h"
#include <string.h>

/* Store component k of COO tensor c. */
static void coo_put(spc_tensor *c, int64_t k, const int64_t *x, const void *v) {
  for (int l = 0; l < c->order; l++)
    spc_arr_set(&c->lv[l].arr[l == 0 ? 1 : 0], k, x[l]);
  if (v && c->vt != SPC_PATTERN) {
    size_t w = spc_vtype_size(c->vt);
    memcpy((char *)c->val + k * (int64_t)w, v, w);
  }
}

static const spc_array *coo_crd(const spc_tensor *c, int l) {
  return &c->lv[l].arr[l == 0 ? 1 : 0];
}

bool spc_native_dense(const spc_tensor *t) {
  if (t->ext || t->nlevels < 1) return false;
  for (int l = 0; l < t->nlevels; l++)
    if (t->lv[l].fmt != &spc_level_dense) return false;
  return true;
}

/* A result of t's: its values boolean where t's are (spc_tensor_boolean). */
static spc_status keep_bool(spc_status s, const spc_tensor *t, spc_tensor **out) {
  if (!s && *out) (*out)->boolean = t->boolean && (*out)->vt == SPC_I64;
  return s;
}

static spc_status to_coo(const spc_tensor *t, int drop_zeros, spc_tensor **out, spc_error *e) {
  spc_iter *it = NULL;
  spc_tensor *c = NULL;
  int64_t x[SPC_MAX_ORDER], n = 0;
  const void *v;
  *out = NULL;
  bool dense = spc_native_dense(t);
  if (t->ext && !drop_zeros) /* read through the spec's level functions: a COO already */
    return t->ext->to_coo(t, out, e);
  spc_status s = spc_iter_create(t, &it, e);
  if (s) return s;
  while (spc_iter_next(it, x, &v))
    n += !(drop_zeros && v && spc_val_is_zero(t->vt, v));
  spc_iter_free(&it);
  if ((s = spc_coo_alloc(t->order, t->dims, n, t->vt, &c, e))) return s;
  if ((s = spc_iter_create(t, &it, e))) goto fail;
  n = 0;
  while (spc_iter_next(it, x, &v))
    if (!(drop_zeros && v && spc_val_is_zero(t->vt, v))) coo_put(c, n++, x, v);
  spc_iter_free(&it);
  /* a dense tensor holds every entry: its symmetry is only a note */
  c->sym = dense ? SPC_GENERAL : t->sym;
  *out = c;
  return SPC_OK;
fail:
  spc_tensor_free(&c);
  return s;
}

spc_status spc_tensor_to_coo(const spc_tensor *t, int drop_zeros,
                             spc_tensor **out, spc_error *e) {
  return keep_bool(to_coo(t, drop_zeros, out, e), t, out);
}

static bool plain_coo(const spc_tensor *t, const spc_array **crd);

/* v -> value of the mirrored entry under symmetry sym. */
static void mirror_value(spc_vtype vt, spc_symmetry sym, const void *v,
                         unsigned char *out);
void spc_mirror_value(spc_vtype vt, spc_symmetry sym, const void *v, unsigned char *out) {
  mirror_value(vt, sym, v, out);
}
static void mirror_value(spc_vtype vt, spc_symmetry sym, const void *v,
                         unsigned char *out) {
  size_t w = spc_vtype_size(vt);
  if (v) memcpy(out, v, w);
  if (sym == SPC_SKEW) {
    switch (vt) {
    case SPC_I64: *(int64_t *)out = (int64_t)(0 - (uint64_t) * (int64_t *)out); break;
    case SPC_F32: *(float *)out = -*(float *)out; break;
    case SPC_F64: *(double *)out = -*(double *)out; break;
    case SPC_C128:
      ((double *)out)[0] = -((double *)out)[0];
      ((double *)out)[1] = -((double *)out)[1];
      break;
    default: break;
    }
  } else if (sym == SPC_HERMITIAN && vt == SPC_C128) {
    ((double *)out)[1] = -((double *)out)[1];
  }
}

/* spc_tensor_expand of a plain COO (what the readers make): the same
 * components in the same order as through the iterator, from the arrays
 * directly (R-MAT 2^20 stored lower, 15.7 M entries: the iterator's three
 * passes took about 0.5 s of a 1.8 s conversion). */
static spc_status expand_plain(const spc_tensor *t, const spc_array **crd,
                               spc_tensor **out, spc_error *e) {
  const spc_array *pos = spc_level_array_c(&t->lv[0], "pos");
  int64_t n = spc_arr_get(pos, 1), off = 0;
  const spc_array *a = crd[0], *b = crd[1];
  if (a->type == SPC_IDX32 && b->type == SPC_IDX32) {
    const int32_t *p = a->data, *q = b->data;
    for (int64_t k = 0; k < n; k++) off += p[k] != q[k];
  } else {
    for (int64_t k = 0; k < n; k++) off += spc_arr_get(a, k) != spc_arr_get(b, k);
  }
  spc_tensor *c = NULL;
  spc_status s = spc_coo_alloc(2, t->dims, n + off, t->vt, &c, e);
  if (s) return s;
  spc_array *ca = &c->lv[0].arr[1], *cb = &c->lv[1].arr[0];
  size_t w = t->vt == SPC_PATTERN ? 0 : spc_vtype_size(t->vt);
  /* the stored components as they are */
  if (!n) {
    /* nothing to copy (and no arrays to hand memcpy) */
  } else if (ca->type == a->type && cb->type == b->type) {
    memcpy(ca->data, a->data, (size_t)n * (a->type == SPC_IDX32 ? 4 : 8));
    memcpy(cb->data, b->data, (size_t)n * (b->type == SPC_IDX32 ? 4 : 8));
  } else {
    for (int64_t k = 0; k < n; k++) {
      spc_arr_set(ca, k, spc_arr_get(a, k));
      spc_arr_set(cb, k, spc_arr_get(b, k));
    }
  }
  if (w && n) memcpy(c->val, t->val, (size_t)n * w);
  /* then the mirrors of the off-diagonal ones, in the same order */
  int64_t j = n;
  const unsigned char *tv = t->val;
  unsigned char *cv = c->val, mv[16];
  for (int64_t k = 0; k < n; k++) {
    int64_t x0 = spc_arr_get(a, k), x1 = spc_arr_get(b, k);
    if (x0 == x1) continue;
    spc_arr_set(ca, j, x1);
    spc_arr_set(cb, j, x0);
    if (w) {
      mirror_value(t->vt, t->sym, tv + k * (int64_t)w, mv);
      memcpy(cv + j * (int64_t)w, mv, w);
    }
    j++;
  }
  *out = c;
  return SPC_OK;
}

static spc_status expand(const spc_tensor *t, spc_tensor **out, spc_error *e) {
  spc_iter *it = NULL;
  spc_tensor *c = NULL;
  int64_t x[SPC_MAX_ORDER], n = 0;
  const void *v;
  unsigned char mv[16];
  *out = NULL;
  /* a dense layout's zeros are its padding, not components (as a
   * conversion and SciPy's mmread of an array file take them): dropped --
   * a symmetric array file holds both triangles already */
  if (spc_native_dense(t)) return spc_tensor_to_coo(t, 1, out, e);
  if (t->sym == SPC_GENERAL) return spc_tensor_to_coo(t, 0, out, e);
  if (t->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "symmetry needs order 2");
  if (t->sym == SPC_SKEW && (t->vt == SPC_U64 || t->vt == SPC_PATTERN))
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "skew-symmetric expansion of %s values", spc_vtype_name(t->vt));
  const spc_array *crd[2];
  if (plain_coo(t, crd)) return expand_plain(t, crd, out, e);
  spc_status s = spc_iter_create(t, &it, e);
  if (s) return s;
  while (spc_iter_next(it, x, &v)) n += 1 + (x[0] != x[1]);
  spc_iter_free(&it);
  if ((s = spc_coo_alloc(2, t->dims, n, t->vt, &c, e))) return s;
  /* the stored entries in their order, then their mirrors in the same
   * order: the layout of SciPy's mmread, so a file written from the
   * expansion with duplicates kept (cat to .npz) hands a reader that sums
   * duplicates with an unstable sort (SciPy) the same sequence, and the
   * same sums, as the original file */
  n = 0;
  for (int pass = 0; pass < 2; pass++) {
    if ((s = spc_iter_create(t, &it, e))) goto fail;
    while (spc_iter_next(it, x, &v)) {
      if (!pass) {
        coo_put(c, n++, x, v);
      } else if (x[0] != x[1]) {
        int64_t y[2] = {x[1], x[0]};
        mirror_value(t->vt, t->sym, v, mv);
        coo_put(c, n++, y, mv);
      }
    }
    spc_iter_free(&it);
  }
  *out = c;
  return SPC_OK;
fail:
  spc_tensor_free(&c);
  return s;
}

spc_status spc_tensor_expand(const spc_tensor *t, spc_tensor **out, spc_error *e) {
  return keep_bool(expand(t, out, e), t, out);
}

/* ---- sort + combine ---------------------------------------------------- */

/* t's coordinate arrays when t is a plain COO (level l compressed or
 * singleton on dimension l, pos from 0): read in place, no copy. */
static bool plain_coo(const spc_tensor *t, const spc_array **crd) {
  if (t->ext || t->order < 1 || t->nlevels != t->order ||
      t->lv[0].fmt != &spc_level_compressed)
    return false;
  const spc_array *pos = spc_level_array_c(&t->lv[0], "pos");
  if (!pos || pos->len < 2 || spc_arr_get(pos, 0) != 0) return false;
  for (int l = 0; l < t->order; l++) {
    if (t->lv[l].dim != l || (l && t->lv[l].fmt != &spc_level_singleton)) return false;
    if (!(crd[l] = spc_level_array_c(&t->lv[l], "crd"))) return false;
  }
  return true;
}

static int cmp_entries(const spc_array *const *crd, int order, int64_t a, int64_t b) {
  for (int l = 0; l < order; l++) {
    int64_t x = spc_arr_get(crd[l], a), y = spc_arr_get(crd[l], b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Stable merge sort of the permutation p[0..n) by coordinates; tmp is n.
 * Returns the array holding the result (p or tmp). */
static int64_t *merge_sort(const spc_array *const *crd, int order, int64_t *p, int64_t *tmp,
                           int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n;
      int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = cmp_entries(crd, order, p[j], p[i]) < 0 ? p[j++] : p[i++];
      while (i < mid) tmp[k++] = p[i++];
      while (j < hi) tmp[k++] = p[j++];
    }
    int64_t *x = p;
    p = tmp;
    tmp = x;
  }
  return p;
}

/* The packed key of radix_perm: dimension l's coordinate at bit sh[l],
 * bits[l] bits wide (the last dimension lowest); the total width (over
 * 64: no key). */
static int key_shifts(int order, const int64_t *dims, int *sh, int *bits) {
  int tot = 0;
  for (int l = order - 1; l >= 0; l--) {
    uint64_t d = dims[l] > 1 ? (uint64_t)(dims[l] - 1) : 0;
    int b = d ? 64 - __builtin_clzll(d) : 0;
    sh[l] = tot;
    if (bits) bits[l] = b;
    tot += b;
    if (tot > 64) return tot;
  }
  return tot;
}

/* The permutation sorting the components by their coordinates, stable,
 * as merge_sort's, by an LSD radix sort of packed keys where the
 * coordinates fit 64 bits together (each level's bits from its dimension):
 * spc_radix_keys (one pass by the top digit, then cache-sized buckets;
 * 11-bit digits over all of memory here before: 70% of the combining of a
 * 12 M-entry ELL read back).  The merge sort with
 * its generic compare took 41% of a shuffled 33 M-entry R-MAT into ELL
 * (whose counter needs the duplicates combined first): 20 s.  Returns the
 * permutation (p or its scratch), NULL when the keys don't fit (*nomem
 * false) or memory ran out (*nomem true); *keys the sorted keys. */
static int64_t *radix_perm(const spc_array *const *crd, int order, const int64_t *dims,
                           int64_t *p, int64_t *tmp, int64_t n, uint64_t **keys, bool *nomem) {
  int sh[SPC_MAX_ORDER], tot = key_shifts(order, dims, sh, NULL);
  *keys = NULL;
  *nomem = false;
  if (tot > 64) return NULL;
  uint64_t *k = spc_calloc(n ? (size_t)n : 1, sizeof *k), *k2 = spc_malloc_n(n, sizeof *k2);
  if (!k || !k2) {
    spc_free(k);
    spc_free(k2);
    *nomem = true;
    return NULL;
  }
  bool out = false; /* a coordinate not this tensor's: the compare sorts it */
  for (int l = 0; l < order && !out; l++) {
    const uint64_t d = (uint64_t)dims[l];
    const int b = sh[l];
    if (crd[l]->type == SPC_IDX32) {
      const int32_t *x = crd[l]->data;
      for (int64_t i = 0; i < n; i++) {
        uint64_t c = (uint64_t)(int64_t)x[i];
        out |= c >= d;
        k[i] |= c << b;
      }
    } else {
      for (int64_t i = 0; i < n; i++) {
        uint64_t c = (uint64_t)spc_arr_get(crd[l], i);
        out |= c >= d;
        k[i] |= c << b;
      }
    }
  }
  if (out) {
    spc_free(k);
    spc_free(k2);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) p[i] = i;
  int where = spc_radix_keys(k, p, k2, tmp, 8, n, 0, tot);
  if (where < 0) {
    spc_free(k);
    spc_free(k2);
    *nomem = true;
    return NULL;
  }
  if (where == 1) {
    spc_free(k);
    *keys = k2;
    return tmp;
  }
  spc_free(k2);
  *keys = k;
  return p;
}

/* Array src into dst (same length; widths may differ). */
static void copy_arr(spc_array *dst, const spc_array *src, int64_t n) {
  if (dst->type == src->type) {
    memcpy(dst->data, src->data, (size_t)n * (src->type == SPC_IDX32 ? 4 : 8));
    return;
  }
  for (int64_t k = 0; k < n; k++) spc_arr_set(dst, k, spc_arr_get(src, k));
}

/* Two index arrays of one width: whether (r, c) strictly increase. */
#define SPC_INCREASING2(T)                                                   \
  do {                                                                       \
    const T *r = a->data, *c = b->data;                                      \
    for (int64_t k = 1; k < n; k++)                                          \
      if (r[k - 1] > r[k] || (r[k - 1] == r[k] && c[k - 1] >= c[k])) return false; \
    return true;                                                             \
  } while (0)

/* a plain loop where the widths agree (the generic compare cost 6% of CSR
 * to ELL) */
bool spc_pairs_increasing(const spc_array *a, const spc_array *b, int64_t n) {
  if (a->type == b->type) {
    if (a->type == SPC_IDX64) SPC_INCREASING2(int64_t);
    else SPC_INCREASING2(int32_t);
  }
  for (int64_t k = 1; k < n; k++) {
    int64_t x = spc_arr_get(a, k - 1), y = spc_arr_get(a, k);
    if (x > y || (x == y && spc_arr_get(b, k - 1) >= spc_arr_get(b, k))) return false;
  }
  return true;
}
#undef SPC_INCREASING2

bool spc_coo_is_combined(const spc_tensor *t) {
  const spc_array *crd[SPC_MAX_ORDER];
  if (!plain_coo(t, crd)) return false;
  int64_t n = spc_tensor_nstored(t);
  if (t->order == 2) return spc_pairs_increasing(crd[0], crd[1], n);
  for (int64_t k = 1; k < n; k++)
    if (cmp_entries(crd, t->order, k - 1, k) >= 0) return false;
  return true;
}

bool spc_coo_groups_increasing(const spc_tensor *t, int g) {
  const spc_array *crd[SPC_MAX_ORDER];
  if (!plain_coo(t, crd) || g < 0 || g >= t->order) return false;
  int64_t n = spc_tensor_nstored(t), m = t->dims[g];
  if (m > (2 * n > ((int64_t)1 << 20) ? 2 * n : ((int64_t)1 << 20))) return false;
  int64_t *last = spc_malloc_n(m ? m : 1, sizeof *last); /* a group's last component, -1 */
  if (!last) return false;
  memset(last, 0xff, (size_t)(m ? m : 1) * sizeof *last);
  bool ok = true;
  for (int64_t k = 0; k < n && ok; k++) {
    int64_t c = spc_arr_get(crd[g], k);
    if (c < 0 || c >= m) ok = false;
    else if (last[c] >= 0 && cmp_entries(crd, t->order, last[c], k) >= 0) ok = false;
    else last[c] = k;
  }
  spc_free(last);
  return ok;
}

/* combine's placing of radix_perm's result: equal keys are one
 * coordinate, so each run's values are combined in the sorted (stable)
 * order and the kept keys, compacted to the front, decode into the
 * coordinate arrays level by level -- typed loops, no gather of the
 * source's coordinates (a 12 M-entry ELL read back, whose check combines
 * its components: the generic get / set per component was a quarter of
 * the time). */
static spc_status put_sorted_keys(const spc_tensor *in, spc_tensor *c, uint64_t *keys,
                                  const int64_t *perm, int64_t n, spc_dup pol, int64_t *nout,
                                  spc_error *e) {
  int sh[SPC_MAX_ORDER], bits[SPC_MAX_ORDER], order = in->order;
  key_shifts(order, in->dims, sh, bits);
  size_t w = spc_vtype_size(in->vt);
  const char *iv = in->val;
  char *cv = c->val;
  int64_t m = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t pk = perm[k];
    if (m > 0 && keys[k] == keys[m - 1]) {
      if (pol == SPC_DUP_ERROR) {
        int64_t x[2] = {0, 0};
        for (int l = 0; l < order && l < 2; l++)
          x[l] = bits[l] ? (int64_t)((keys[k] >> sh[l]) & ((UINT64_C(1) << bits[l]) - 1)) : 0;
        return spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                       "duplicate entry at (%lld, %lld%s) and --dup=error", (long long)x[0] + 1,
                       (long long)(order > 1 ? x[1] + 1 : 0), order > 2 ? ", ..." : "");
      }
      if (w) spc_val_combine(in->vt, pol, cv + (m - 1) * (int64_t)w, iv + pk * (int64_t)w);
      continue;
    }
    keys[m] = keys[k];
    if (w == 8) memcpy(cv + m * 8, iv + pk * 8, 8);
    else if (w) memcpy(cv + m * (int64_t)w, iv + pk * (int64_t)w, w);
    m++;
  }
  for (int l = 0; l < order; l++) {
    spc_array *a = &c->lv[l].arr[l == 0 ? 1 : 0];
    const int b = sh[l];
    const uint64_t mask = bits[l] ? (UINT64_C(1) << bits[l]) - 1 : 0;
    if (a->type == SPC_IDX32) {
      int32_t *d = a->data;
      for (int64_t k = 0; k < m; k++) d[k] = (int32_t)((keys[k] >> b) & mask);
    } else if (a->type == SPC_IDX64) {
      int64_t *d = a->data;
      for (int64_t k = 0; k < m; k++) d[k] = (int64_t)((keys[k] >> b) & mask);
    } else {
      for (int64_t k = 0; k < m; k++) spc_arr_set(a, k, (int64_t)((keys[k] >> b) & mask));
    }
  }
  *nout = m;
  return SPC_OK;
}

/* A source whose entries come strictly increasing already (a converted CSR
 * read back, a file in row order) is copied as it is: one pass to see. */
static spc_status combine(const spc_tensor *t, spc_dup pol, spc_tensor **out, spc_error *e) {
  spc_tensor *own = NULL, *c = NULL;
  const spc_tensor *in = t;
  const spc_array *crd[SPC_MAX_ORDER];
  int64_t *p = NULL, *tmp = NULL, *perm = NULL, x[SPC_MAX_ORDER], n;
  uint64_t *keys = NULL; /* radix_perm's sorted keys: equal ones, equal tuples */
  spc_status s = SPC_OK;
  *out = NULL;
  if (plain_coo(t, crd)) {
    n = spc_tensor_nstored(t);
  } else {
    if ((s = spc_tensor_to_coo(t, 0, &own, e))) return s;
    in = own;
    for (int l = 0; l < in->order; l++) crd[l] = coo_crd(in, l);
    n = in->nval ? in->nval : spc_tensor_nstored(in);
  }
  int order = in->order;
  size_t w = spc_vtype_size(in->vt);
  /* in order already (strictly: nothing to combine), in order with equal
   * neighbours, or to sort */
  int64_t k0 = 1;
  bool equal = false;
  for (; k0 < n; k0++) {
    int c0 = cmp_entries(crd, order, k0 - 1, k0);
    if (c0 > 0) break;
    equal |= c0 == 0;
  }
  if (k0 < n) {
    p = spc_malloc_n(n, sizeof *p);
    tmp = spc_malloc_n(n, sizeof *tmp);
    if (!p || !tmp) { s = SPC_NOMEM(e); goto done; }
    bool nomem;
    perm = radix_perm(crd, order, in->dims, p, tmp, n, &keys, &nomem);
    if (nomem) { s = SPC_NOMEM(e); goto done; }
    if (!perm) {
      for (int64_t k = 0; k < n; k++) p[k] = k;
      perm = merge_sort(crd, order, p, tmp, n);
    }
  }
  if ((s = spc_coo_alloc(order, in->dims, n, in->vt, &c, e))) goto done;
  int64_t m = 0;
  if (keys) { /* sorted by radix_perm: the keys hold the coordinates */
    if ((s = put_sorted_keys(in, c, keys, perm, n, pol, &m, e))) goto done;
    perm = NULL;
    equal = false; /* placed: the loop below has nothing to do */
  }
  if (!perm && !equal && !keys) {
    for (int l = 0; l < order; l++) copy_arr(&c->lv[l].arr[l == 0 ? 1 : 0], crd[l], n);
    if (w && n) memcpy(c->val, in->val, (size_t)n * w);
    m = n;
  }
  for (int64_t k = 0; k < n && (perm || equal); k++) {
    int64_t pk = perm ? perm[k] : k;
    if (k > 0 && (keys ? keys[k - 1] == keys[k]
                       : cmp_entries(crd, order, perm ? perm[k - 1] : k - 1, pk) == 0)) {
      if (pol == SPC_DUP_ERROR) {
        for (int l = 0; l < order; l++) x[l] = spc_arr_get(crd[l], pk) + 1;
        s = spc_err(e, SPC_ERR_INPUT, NULL, 0, 0,
                    "duplicate entry at (%lld, %lld%s) and --dup=error",
                    (long long)x[0], (long long)(order > 1 ? x[1] : 0),
                    order > 2 ? ", ..." : "");
        goto done;
      }
      if (w) spc_val_combine(in->vt, pol, (char *)c->val + (m - 1) * (int64_t)w,
                             (const char *)in->val + pk * (int64_t)w);
      continue;
    }
    for (int l = 0; l < order; l++) x[l] = spc_arr_get(crd[l], pk);
    coo_put(c, m++, x, w ? (const char *)in->val + pk * (int64_t)w : NULL);
  }
  spc_coo_truncate(c, m);
  c->sym = in->sym;
  c->zero_based = in->zero_based;
  c->lv[0].props |= SPC_LP_ORDERED;
  for (int l = 1; l < c->order; l++) c->lv[l].props |= SPC_LP_ORDERED;
  if (c->order >= 1) c->lv[c->order - 1].props |= SPC_LP_UNIQUE;
  *out = c;
  c = NULL;
done:
  spc_free(p);
  spc_free(tmp);
  spc_free(keys);
  spc_tensor_free(&own);
  spc_tensor_free(&c);
  return s;
}

/* A pattern's components as a COO of int64 ones: summed, its duplicates
 * count how often a coordinate repeats. */
spc_status spc_tensor_pattern_counts(const spc_tensor *t, spc_tensor **out, spc_error *e) {
  spc_tensor *c = NULL;
  *out = NULL;
  if (t->vt != SPC_PATTERN)
    return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0, "pattern counts of a tensor with values");
  spc_status s = spc_tensor_to_coo(t, 0, &c, e);
  if (s) return s;
  int64_t n = spc_tensor_nstored(c);
  int64_t *v = spc_malloc_n(n ? n : 1, sizeof *v);
  if (!v) {
    spc_tensor_free(&c);
    return SPC_NOMEM(e);
  }
  for (int64_t k = 0; k < n; k++) v[k] = 1;
  c->vt = SPC_I64;
  c->val = v;
  c->nval = n;
  c->val_owned = true;
  *out = c;
  return SPC_OK;
}

bool spc_err_is_dup(spc_status s, const spc_error *e) {
  return s == SPC_ERR_INPUT && e && strstr(e->msg, "--dup=error");
}

/* A pattern (no values: every component 1) summed keeps SciPy's reading:
 * a coordinate stored k times becomes the int64 value k.  Tried with
 * duplicates refused, so a pattern without them stays a pattern. */
spc_status spc_tensor_combine(const spc_tensor *t, spc_dup pol, spc_tensor **out, spc_error *e) {
  if (!t || !out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no tensor or no output");
  /* booleans summed: OR, which on 0 / 1 is the maximum */
  if (spc_tensor_boolean(t) && pol == SPC_DUP_SUM) pol = SPC_DUP_MAX;
  if (t->vt != SPC_PATTERN || pol != SPC_DUP_SUM) return keep_bool(combine(t, pol, out, e), t, out);
  spc_error le;
  spc_error_clear(&le);
  spc_status s = combine(t, SPC_DUP_ERROR, out, &le);
  if (!spc_err_is_dup(s, &le)) {
    if (s && e) *e = le;
    return s;
  }
  spc_tensor *ones = NULL;
  if ((s = spc_tensor_pattern_counts(t, &ones, e))) return s;
  s = combine(ones, SPC_DUP_SUM, out, e);
  spc_tensor_free(&ones);
  return s;
}
