/* ir_rt.h -- the IR runtime: the arithmetic and builtins whose exact
 * semantics the interpreter (ir/ir_interp.c) and emitted C share.
 *
 * This one file is both compiled into the library and embedded verbatim in
 * every generated C file (ir/ir_rt_text.c, made by ir/gen_rt_text.sh), so
 * the two paths run the very same definitions: integer wrap-around through
 * unsigned casts, truncating division with INT_MIN / -1 wrapping, min/max
 * and their NaN behaviour, saturating float-to-integer conversion, complex
 * multiplication and division, and the builtins (fill, prefix_sum, shift,
 * copy, sort_perm, spmv_lanes, spmv_lanes_same).  Plain C99 (spmv_lanes pairs
 * its lanes with GNU C's vector extensions where the compiler has them); every
 * function is static inline (SPC_RT_FN); only sort_perm allocates (working
 * memory, freed before it returns). */
#ifndef SPC_IR_RT_H
#define SPC_IR_RT_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* No contraction of a * b + c into a fused multiply-add: every operation
 * rounds, whatever -march or -std says.  GCC 12 also fuses the complex
 * product through its SLP vectorizer even with -ffp-contract=off, hence
 * no-tree-slp-vectorize (loops still vectorize). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off", "no-tree-slp-vectorize")
#else
#pragma STDC FP_CONTRACT OFF
#endif

/* Threads for the builtins that split work (sort_perm's radix passes):
 * with OpenMP, up to 64 for inputs of 2^16 elements and more; without,
 * one.  Results do not depend on the count. */
#ifdef _OPENMP
#include <omp.h>
#define SPC_RT_NTHREADS(nt, n)                                                           \
  do {                                                                                   \
    (nt) = (n) >= 65536 ? omp_get_max_threads() : 1;                                     \
    if ((nt) > 64) (nt) = 64;                                                            \
    if ((nt) < 1) (nt) = 1;                                                              \
  } while (0)
#define SPC_RT_PRAGMA(x) _Pragma(#x)
#define SPC_RT_PARALLEL(nt) SPC_RT_PRAGMA(omp parallel num_threads(nt))
#define SPC_RT_THREAD() omp_get_thread_num()
#else
#define SPC_RT_NTHREADS(nt, n) ((void)(n), (nt) = 1)
#define SPC_RT_PARALLEL(nt)
#define SPC_RT_THREAD() 0
#endif

/* Every helper: static inline, and not worth a warning when unused (the
 * CUDA emitter defines it first: __host__ __device__ as well). */
#ifndef SPC_RT_FN
#if defined(__GNUC__)
#define SPC_RT_FN static inline __attribute__((unused))
#else
#define SPC_RT_FN static inline
#endif
#endif

/* Type codes (equal to ir_ty: bool, i32, i64, u64, f32, f64, c128). */
enum {
  SPC_RT_BOOL,
  SPC_RT_I32,
  SPC_RT_I64,
  SPC_RT_U64,
  SPC_RT_F32,
  SPC_RT_F64,
  SPC_RT_C128
};

/* ---- signed integers: two's complement wrap-around ------------------------
 * Shifts need 0 <= k < width; division needs b != 0 (the interpreter checks,
 * generated code assumes).  a / -1 wraps (INT_MIN / -1 == INT_MIN). */
#define SPC_RT_SIGNED(S, T, U)                                                           \
  SPC_RT_FN T spc_add_##S(T a, T b) { return (T)((U)a + (U)b); }                         \
  SPC_RT_FN T spc_sub_##S(T a, T b) { return (T)((U)a - (U)b); }                         \
  SPC_RT_FN T spc_mul_##S(T a, T b) { return (T)((U)a * (U)b); }                         \
  SPC_RT_FN T spc_neg_##S(T a) { return (T)((U)0 - (U)a); }                              \
  SPC_RT_FN T spc_div_##S(T a, T b) { return b == -1 ? spc_neg_##S(a) : a / b; }         \
  SPC_RT_FN T spc_rem_##S(T a, T b) { return b == -1 ? 0 : a % b; }                      \
  SPC_RT_FN T spc_shl_##S(T a, int64_t k) { return (T)((U)a << k); }                     \
  SPC_RT_FN T spc_shr_##S(T a, int64_t k) {                                              \
    return a < 0 ? (T) ~(T)(~a >> k) : (T)(a >> k);                                      \
  }                                                                                      \
  SPC_RT_FN T spc_abs_##S(T a) { return a < 0 ? spc_neg_##S(a) : a; }
SPC_RT_SIGNED(i32, int32_t, uint32_t)
SPC_RT_SIGNED(i64, int64_t, uint64_t)
#undef SPC_RT_SIGNED

/* ---- min and max: min(a, b) = b < a ? b : a, max(a, b) = a < b ? b : a ----
 * So a NaN in a is returned as is, a NaN in b is ignored; min(-0, +0) is a. */
#define SPC_RT_MINMAX(S, T)                                                              \
  SPC_RT_FN T spc_min_##S(T a, T b) { return b < a ? b : a; }                            \
  SPC_RT_FN T spc_max_##S(T a, T b) { return a < b ? b : a; }
SPC_RT_MINMAX(i32, int32_t)
SPC_RT_MINMAX(i64, int64_t)
SPC_RT_MINMAX(u64, uint64_t)
SPC_RT_MINMAX(f32, float)
SPC_RT_MINMAX(f64, double)
#undef SPC_RT_MINMAX

/* ---- float to integer: truncation toward zero, saturating; NaN gives 0 --- */
SPC_RT_FN int32_t spc_f64_to_i32(double x) {
  if (x != x) return 0;
  if (x <= -2147483649.0) return INT32_MIN;
  if (x >= 2147483648.0) return INT32_MAX;
  return (int32_t)x;
}
SPC_RT_FN int64_t spc_f64_to_i64(double x) {
  if (x != x) return 0;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)x;
}
SPC_RT_FN uint64_t spc_f64_to_u64(double x) {
  if (x != x || x <= -1.0) return 0;
  if (x >= 18446744073709551616.0) return UINT64_MAX;
  return (uint64_t)x;
}

/* ---- complex numbers: (re, im) pairs, formulas written out --------------- */
typedef struct spc_c128 {
  double re, im;
} spc_c128;

SPC_RT_FN spc_c128 spc_c128_make(double re, double im) {
  spc_c128 z;
  z.re = re;
  z.im = im;
  return z;
}
SPC_RT_FN spc_c128 spc_c128_add(spc_c128 a, spc_c128 b) {
  return spc_c128_make(a.re + b.re, a.im + b.im);
}
SPC_RT_FN spc_c128 spc_c128_sub(spc_c128 a, spc_c128 b) {
  return spc_c128_make(a.re - b.re, a.im - b.im);
}
SPC_RT_FN spc_c128 spc_c128_mul(spc_c128 a, spc_c128 b) {
  double re = a.re * b.re - a.im * b.im;
  double im = a.re * b.im + a.im * b.re;
  return spc_c128_make(re, im);
}
/* Smith's algorithm: scale by the larger component of b. */
SPC_RT_FN spc_c128 spc_c128_div(spc_c128 a, spc_c128 b) {
  if (fabs(b.re) >= fabs(b.im)) {
    double r = b.im / b.re, d = b.re + b.im * r;
    return spc_c128_make((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  } else {
    double r = b.re / b.im, d = b.re * r + b.im;
    return spc_c128_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
  }
}
SPC_RT_FN spc_c128 spc_c128_neg(spc_c128 a) { return spc_c128_make(-a.re, -a.im); }
SPC_RT_FN bool spc_c128_eq(spc_c128 a, spc_c128 b) {
  return a.re == b.re && a.im == b.im;
}
SPC_RT_FN bool spc_c128_nz(spc_c128 a) { return a.re != 0 || a.im != 0; }

/* ---- checks (the routines of a user's level functions) ------------------- */
/* The first failure of a checked routine: an index out of bounds (n >= 0:
 * index i, length n, array a), an integer division by zero (n == -1, a the
 * message) or a shift count out of range (n == -2, count i).  The
 * statement's end tests a and fails with the interpreter's message. */
typedef struct spc_rt_fault {
  int64_t i, n;
  const char *a;
} spc_rt_fault;
SPC_RT_FN void spc_rt_note(spc_rt_fault *f, int64_t i, int64_t n, const char *a) {
  if (!f->a) {
    f->i = i;
    f->n = n;
    f->a = a;
  }
}
/* a[i], or 0 with the failure noted: the index evaluated once */
#define SPC_RT_AT(S, T)                                                                   \
  SPC_RT_FN T spc_rt_get_##S(const T *a, int64_t i, int64_t n, const char *nm,            \
                             spc_rt_fault *f) {                                           \
    if ((uint64_t)i < (uint64_t)n) return a[i];                                           \
    spc_rt_note(f, i, n, nm);                                                             \
    return (T){0};                                                                        \
  }
SPC_RT_AT(bool, bool)
SPC_RT_AT(i32, int32_t)
SPC_RT_AT(i64, int64_t)
SPC_RT_AT(u64, uint64_t)
SPC_RT_AT(f32, float)
SPC_RT_AT(f64, double)
SPC_RT_AT(c128, spc_c128)
#undef SPC_RT_AT
/* Whether an integer divisor is not 0 / a shift count is in [0, w). */
SPC_RT_FN bool spc_rt_divisor(int64_t b, spc_rt_fault *f) {
  if (b != 0) return true;
  spc_rt_note(f, 0, -1, "integer division by zero");
  return false;
}
SPC_RT_FN bool spc_rt_count(int64_t k, int64_t w, spc_rt_fault *f) {
  if (k >= 0 && k < w) return true;
  spc_rt_note(f, k, -2, "shift count");
  return false;
}

/* ---- builtins on arrays (ranges are valid: the interpreter checks) ------- */
SPC_RT_FN int32_t spc_wadd_i32(int32_t a, int32_t b) { return spc_add_i32(a, b); }
SPC_RT_FN int64_t spc_wadd_i64(int64_t a, int64_t b) { return spc_add_i64(a, b); }
SPC_RT_FN uint64_t spc_wadd_u64(uint64_t a, uint64_t b) { return a + b; }
SPC_RT_FN float spc_wadd_f32(float a, float b) { return a + b; }
SPC_RT_FN double spc_wadd_f64(double a, double b) { return a + b; }
SPC_RT_FN bool spc_wadd_bool(bool a, bool b) { return a || b; }
SPC_RT_FN spc_c128 spc_wadd_c128(spc_c128 a, spc_c128 b) { return spc_c128_add(a, b); }

/* fill: a[lo..hi) = v.  prefix_sum: a[k] = a[k-1] + a[k] for k in
 * (lo, hi).  shift: a[lo+1..hi] = old a[lo..hi), a[lo] = v.  copy:
 * d[dlo..dlo+n) = s[slo..slo+n) (the ranges may overlap). */
#define SPC_RT_ARRAY(S, T)                                                               \
  SPC_RT_FN void spc_fill_##S(T *a, int64_t lo, int64_t hi, T v) {                       \
    for (int64_t k = lo; k < hi; k++) a[k] = v;                                          \
  }                                                                                      \
  SPC_RT_FN void spc_prefix_sum_##S(T *a, int64_t lo, int64_t hi) {                      \
    for (int64_t k = lo + 1; k < hi; k++) a[k] = spc_wadd_##S(a[k - 1], a[k]);           \
  }                                                                                      \
  SPC_RT_FN void spc_shift_##S(T *a, int64_t lo, int64_t hi, T v) {                      \
    if (hi > lo) memmove(a + lo + 1, a + lo, (size_t)(hi - lo) * sizeof *a);             \
    a[lo] = v;                                                                           \
  }                                                                                      \
  SPC_RT_FN void spc_copy_##S(T *d, int64_t dlo, const T *s, int64_t slo, int64_t n) {   \
    if (n > 0) memmove(d + dlo, s + slo, (size_t)n * sizeof *d);                         \
  }
SPC_RT_ARRAY(bool, bool)
SPC_RT_ARRAY(i32, int32_t)
SPC_RT_ARRAY(i64, int64_t)
SPC_RT_ARRAY(u64, uint64_t)
SPC_RT_ARRAY(f32, float)
SPC_RT_ARRAY(f64, double)
SPC_RT_ARRAY(c128, spc_c128)
#undef SPC_RT_ARRAY

/* spmv_lanes: y[yl] = y[yl] + ((l0 + l1) + (l2 + l3)), lane k the sum of
 * vals[q] * x[crd[q]] over the k-th of each four positions q of [bg, en)
 * from bg, the last (en - bg) % 4 into lane 0, every lane from 0.0 -- the
 * SpMV lanes schedule's innermost loop where the level's coordinate is
 * crd[q] (assemble_read.c).  With GNU C's vector extensions the four lanes
 * are two pairs (two values and four coordinates a load, one add and one
 * multiply a pair): the very operations in the very order, so the same
 * bits as the scalar loop. */
#if defined(__GNUC__) && !defined(__CUDACC__)
typedef double spc_rt_v2d __attribute__((vector_size(16)));
typedef long long spc_rt_v2i __attribute__((vector_size(16)));
/* the lanes over [bg, en) four positions at a time, TRACK run on each
 * four's products pa (lanes 0, 1) and pb (2, 3); q left at the rest */
#define SPC_RT_LANES_LOOP(T, TRACK)                                                      \
  spc_rt_v2d a = {0.0, 0.0}, b = {0.0, 0.0};                                             \
  int64_t q = bg;                                                                        \
  for (; q + 3 < en; q += 4) {                                                           \
    T c[4];                                                                              \
    spc_rt_v2d va, vb;                                                                   \
    memcpy(c, crd + q, sizeof c);                                                        \
    memcpy(&va, vals + q, sizeof va);                                                    \
    memcpy(&vb, vals + q + 2, sizeof vb);                                                \
    spc_rt_v2d xa = {x[c[0]], x[c[1]]}, xb = {x[c[2]], x[c[3]]};                         \
    spc_rt_v2d pa = va * xa, pb = vb * xb;                                               \
    a = a + pa;                                                                          \
    b = b + pb;                                                                          \
    TRACK                                                                                \
  }                                                                                      \
  double l0 = a[0], l1 = a[1], l2 = b[0], l3 = b[1];
#else
/* the same with four scalar lanes: TRACK sees the products p[0..3] */
#define SPC_RT_LANES_LOOP(T, TRACK)                                                      \
  double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0;                                         \
  int64_t q = bg;                                                                        \
  for (; q + 3 < en; q += 4) {                                                           \
    double p[4];                                                                         \
    for (int k = 0; k < 4; k++) p[k] = vals[q + k] * x[crd[q + k]];                      \
    l0 = l0 + p[0];                                                                      \
    l1 = l1 + p[1];                                                                      \
    l2 = l2 + p[2];                                                                      \
    l3 = l3 + p[3];                                                                      \
    TRACK                                                                                \
  }
#endif
#define SPC_RT_LANES_BODY(T) SPC_RT_LANES_LOOP(T, )
#define SPC_RT_LANES(S, T)                                                               \
  SPC_RT_FN void spc_spmv_lanes_##S(double *y, const T *crd, const double *vals,         \
                                    const double *x, int64_t yl, int64_t bg, int64_t en) { \
    SPC_RT_LANES_BODY(T)                                                                 \
    for (; q < en; q++) l0 = l0 + vals[q] * x[crd[q]];                                   \
    y[yl] = y[yl] + ((l0 + l1) + (l2 + l3));                                             \
  }
SPC_RT_LANES(i32, int32_t)
SPC_RT_LANES(i64, int64_t)
#undef SPC_RT_LANES
#undef SPC_RT_LANES_BODY

/* spmv_lanes_same: spmv_lanes's four lanes where they cannot move the sum
 * by more than 5.7e-13 of it, else the rows schedule's sum left to right:
 * y[yl] = ((y[yl] + p_bg) + p_bg+1) + ...  (p_q = vals[q] * x[crd[q]]).
 * The lanes' sum s is kept where en - bg <= 4096, the sign bit of every
 * product and of y[yl] is 0 (all nonnegative, -0.0 not) and s <= DBL_MAX
 * / 4 (not NaN): both sums then add the same n + 1 nonnegative terms,
 * each within gamma_h S of their exact sum S, h the height of its tree of
 * additions (Higham, Accuracy and Stability of Numerical Algorithms, 4.2;
 * an addition into a subnormal is exact; the bound on s keeps the ordered
 * sum from overflowing): n for the ordered sum, at most n / 4 + 6 for the
 * lanes', so within (n + n / 4 + 6) u / (1 - n u) of each other, u =
 * 2^-53: 5.7e-13 at n = 4096.  The ordered sum is a function of its own,
 * out of the lanes' way (it runs only where a row fails). */
#define SPC_RT_SAME_MAX 4096
#if defined(__GNUC__) && !defined(__CUDACC__)
#define SPC_RT_ORDERED_FN static __attribute__((unused, noinline, cold))
#define SPC_RT_SAME_BODY(T)                                                              \
  spc_rt_v2i so = {0, 0};                                                                \
  SPC_RT_LANES_LOOP(T, so = so | ((spc_rt_v2i)pa | (spc_rt_v2i)pb);)                     \
  int neg = (so[0] | so[1]) < 0;
#else
#define SPC_RT_ORDERED_FN SPC_RT_FN
#define SPC_RT_SAME_BODY(T)                                                              \
  int neg = 0;                                                                           \
  SPC_RT_LANES_LOOP(T, neg |= (signbit(p[0]) != 0) | (signbit(p[1]) != 0) |             \
                           (signbit(p[2]) != 0) | (signbit(p[3]) != 0);)
#endif
#define SPC_RT_SAME(S, T)                                                                \
  SPC_RT_ORDERED_FN double spc_rt_ordered_##S(double s, const T *crd, const double *vals,   \
                                               const double *x, int64_t bg, int64_t en) {    \
    for (int64_t q = bg; q < en; q++) s = s + vals[q] * x[crd[q]];                       \
    return s;                                                                            \
  }                                                                                      \
  SPC_RT_FN void spc_spmv_lanes_same_##S(double *y, const T *crd, const double *vals,    \
                                         const double *x, int64_t yl, int64_t bg,        \
                                         int64_t en) {                                   \
    if (en - bg > SPC_RT_SAME_MAX) { /* too long for the bound: in order at once */       \
      y[yl] = spc_rt_ordered_##S(y[yl], crd, vals, x, bg, en);                           \
      return;                                                                            \
    }                                                                                    \
    SPC_RT_SAME_BODY(T)                                                                  \
    for (; q < en; q++) {                                                                \
      double p = vals[q] * x[crd[q]];                                                    \
      l0 = l0 + p;                                                                       \
      neg |= signbit(p) != 0;                                                            \
    }                                                                                    \
    double y0 = y[yl], s = y0 + ((l0 + l1) + (l2 + l3));                                 \
    if (!neg && !signbit(y0) && s <= DBL_MAX / 4)                                        \
      y[yl] = s;                                                                         \
    else                                                                                 \
      y[yl] = spc_rt_ordered_##S(y0, crd, vals, x, bg, en);                              \
  }
SPC_RT_SAME(i32, int32_t)
SPC_RT_SAME(i64, int64_t)
#undef SPC_RT_SAME
#undef SPC_RT_SAME_BODY
#undef SPC_RT_ORDERED_FN
#undef SPC_RT_LANES_LOOP

/* ---- sort_perm ------------------------------------------------------------
 * Stable sort of perm[0..n) (positions, int32_t or int64_t) by the keys
 * key[0][perm[.]], key[1][perm[.]], ... compared with < (a NaN key compares
 * equal to everything); scratch holds n positions. */
typedef struct spc_rt_key {
  const void *p;
  int ty; /* SPC_RT_* */
} spc_rt_key;

SPC_RT_FN int spc_rt_key_cmp(const spc_rt_key *k, int64_t x, int64_t y) {
#define SPC_RT_CMP(T)                                                                    \
  {                                                                                      \
    T a = ((const T *)k->p)[x], b = ((const T *)k->p)[y];                                \
    return a < b ? -1 : b < a ? 1 : 0;                                                   \
  }
  switch (k->ty) {
  case SPC_RT_BOOL: SPC_RT_CMP(bool)
  case SPC_RT_I32: SPC_RT_CMP(int32_t)
  case SPC_RT_I64: SPC_RT_CMP(int64_t)
  case SPC_RT_U64: SPC_RT_CMP(uint64_t)
  case SPC_RT_F32: SPC_RT_CMP(float)
  default: SPC_RT_CMP(double)
  }
#undef SPC_RT_CMP
}

SPC_RT_FN int spc_rt_perm_cmp(const spc_rt_key *key, int nkeys, int64_t x, int64_t y) {
  for (int j = 0; j < nkeys; j++) {
    int c = spc_rt_key_cmp(&key[j], x, y);
    if (c) return c;
  }
  return 0;
}

/* Integer key j of position x, as an unsigned offset from lo. */
SPC_RT_FN uint64_t spc_rt_key_u(const spc_rt_key *k, int64_t x, int64_t lo) {
  switch (k->ty) {
  case SPC_RT_BOOL: return (uint64_t)((const bool *)k->p)[x] - (uint64_t)lo;
  case SPC_RT_I32: return (uint64_t)((int64_t)((const int32_t *)k->p)[x]) - (uint64_t)lo;
  case SPC_RT_I64: return (uint64_t)((const int64_t *)k->p)[x] - (uint64_t)lo;
  default: return ((const uint64_t *)k->p)[x] - (uint64_t)lo; /* U64: lo is 0 */
  }
}

/* Keys j0 .. j1-1 of position x in one word, key j0 highest: each less its
 * lo, shifted by the bits (sh) of the keys after it. */
SPC_RT_FN uint64_t spc_rt_key_pack(const spc_rt_key *key, int j0, int j1, const int *sh,
                                   const int64_t *lo, int64_t x) {
  uint64_t c = 0;
  for (int j = j0; j < j1; j++)
    c = (sh[j] >= 64 ? 0 : c << sh[j]) | spc_rt_key_u(&key[j], x, lo[j]);
  return c;
}

/* LSD radix sort of (key, position) pairs by the low `bits` bits of key,
 * 11 bits a pass, skipping passes whose digit is constant.  Stable.  k/p
 * hold the input, k2/p2 are scratch; returns where the result is (0: k/p,
 * 1: k2/p2), or -1 when working memory ran out.  With OpenMP, each thread
 * counts and scatters its own contiguous block, at offsets that follow the
 * blocks before it: the same result as one thread. */
#define SPC_RT_RADIX(S, T)                                                               \
  SPC_RT_FN int spc_rt_radix_##S(uint64_t *k, T *p, uint64_t *k2, T *p2, int64_t n,      \
                                 int bits) {                                             \
    int nt = 1;                                                                          \
    SPC_RT_NTHREADS(nt, n);                                                              \
    int64_t(*cnt)[2048] = (int64_t(*)[2048])malloc((size_t)nt * sizeof *cnt);            \
    if (!cnt) return -1;                                                                 \
    int where = 0;                                                                       \
    for (int sh = 0; sh < bits; sh += 11) {                                              \
      int single = 0;                                                                    \
      SPC_RT_PARALLEL(nt)                                                                \
      {                                                                                  \
        int t = SPC_RT_THREAD();                                                         \
        int64_t b0 = n * t / nt, b1 = n * (t + 1) / nt;                                  \
        int64_t *c = cnt[t];                                                             \
        memset(c, 0, sizeof cnt[0]);                                                     \
        for (int64_t i = b0; i < b1; i++) c[(k[i] >> sh) & 2047]++;                      \
      }                                                                                  \
      int64_t sum = 0;                                                                   \
      for (int b = 0; b < 2048; b++) {                                                   \
        int64_t tot = 0;                                                                 \
        for (int t = 0; t < nt; t++) {                                                   \
          int64_t c = cnt[t][b];                                                         \
          cnt[t][b] = sum + tot;                                                         \
          tot += c;                                                                      \
        }                                                                                \
        single |= tot == n;                                                              \
        sum += tot;                                                                      \
      }                                                                                  \
      if (single) continue;                                                              \
      SPC_RT_PARALLEL(nt)                                                                \
      {                                                                                  \
        int t = SPC_RT_THREAD();                                                         \
        int64_t b0 = n * t / nt, b1 = n * (t + 1) / nt;                                  \
        int64_t *c = cnt[t];                                                             \
        for (int64_t i = b0; i < b1; i++) {                                              \
          int64_t d = c[(k[i] >> sh) & 2047]++;                                          \
          k2[d] = k[i];                                                                  \
          p2[d] = p[i];                                                                  \
        }                                                                                \
      }                                                                                  \
      uint64_t *tk = k;                                                                  \
      k = k2;                                                                            \
      k2 = tk;                                                                           \
      T *tp = p;                                                                         \
      p = p2;                                                                            \
      p2 = tp;                                                                           \
      where ^= 1;                                                                        \
    }                                                                                    \
    free(cnt);                                                                           \
    return where;                                                                        \
  }
SPC_RT_RADIX(i32, int32_t)
SPC_RT_RADIX(i64, int64_t)
#undef SPC_RT_RADIX

/* Three strategies, the same stable order:
 *   - already in order (one pass of comparisons): nothing to do;
 *   - integer keys whose ranges (max - min) fit 64 bits together: one
 *     combined key per position, radix-sorted with the positions (working
 *     memory 2n keys, from malloc; when that fails, the merge sort);
 *   - integer keys of 65-128 bits together (none wider than 64): two such
 *     radix sorts, by the trailing keys and then the leading ones (stable,
 *     so the order is the same);
 *   - otherwise (float keys, wide ranges): bottom-up merge sort. */
#define SPC_RT_SORT(S, T)                                                                \
  SPC_RT_FN void spc_sort_perm_##S(T *perm, int64_t n, const spc_rt_key *key, int nkeys, \
                                   T *scratch) {                                         \
    T *src = perm, *dst = scratch;                                                       \
    int64_t i0 = 1;                                                                      \
    int ints = 1, bits = 0, sh[64];                                                      \
    int64_t lo[64];                                                                      \
    while (i0 < n && spc_rt_perm_cmp(key, nkeys, src[i0 - 1], src[i0]) <= 0) i0++;       \
    if (i0 >= n) return;                                                                 \
    for (int j = 0; j < nkeys && ints; j++) {                                            \
      ints &= nkeys <= 64 && (key[j].ty == SPC_RT_BOOL || key[j].ty == SPC_RT_I32 ||     \
                              key[j].ty == SPC_RT_I64 || key[j].ty == SPC_RT_U64);       \
      if (!ints) break;                                                                  \
      uint64_t range = 0;                                                                \
      lo[j] = 0;                                                                         \
      if (key[j].ty != SPC_RT_U64) {                                                     \
        int64_t mn = INT64_MAX, mx = INT64_MIN;                                          \
        for (int64_t i = 0; i < n; i++) {                                                \
          int64_t v = (int64_t)spc_rt_key_u(&key[j], src[i], 0);                         \
          mn = v < mn ? v : mn;                                                          \
          mx = v > mx ? v : mx;                                                          \
        }                                                                                \
        lo[j] = mn;                                                                      \
        range = (uint64_t)mx - (uint64_t)mn;                                             \
      } else {                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                \
          uint64_t v = spc_rt_key_u(&key[j], src[i], 0);                                 \
          range = v > range ? v : range;                                                 \
        }                                                                                \
      }                                                                                  \
      int b = 0;                                                                         \
      while (b < 64 && (range >> b) != 0) b++;                                           \
      sh[j] = b;                                                                         \
      bits += b;                                                                         \
    }                                                                                    \
    uint64_t *ck = ints && bits <= 64 ? (uint64_t *)malloc((size_t)n * 16) : NULL;       \
    if (ck) {                                                                            \
      for (int64_t i = 0; i < n; i++) ck[i] = spc_rt_key_pack(key, 0, nkeys, sh, lo, src[i]); \
      int where = spc_rt_radix_##S(ck, src, ck + n, dst, n, bits);                       \
      free(ck);                                                                          \
      if (where >= 0) {                                                                  \
        if (where) memcpy(perm, dst, (size_t)n * sizeof *perm);                          \
        return;                                                                          \
      }                                                                                  \
    }                                                                                    \
    /* integer keys of more than 64 bits together, each at most 64 (Morton's   \
     * (z, i, j)): two stable radix sorts, by the trailing keys, then by the   \
     * leading ones; the same order as the comparisons below */                \
    int m = nkeys, lob = 0;                                                              \
    while (ints && bits > 64 && m > 0 && lob + sh[m - 1] <= 64) lob += sh[--m];          \
    uint64_t *c2 = ints && bits > 64 && m > 0 && bits - lob <= 64                        \
                       ? (uint64_t *)malloc((size_t)n * 16) : NULL;                      \
    if (c2) {                                                                            \
      for (int64_t i = 0; i < n; i++) c2[i] = spc_rt_key_pack(key, m, nkeys, sh, lo, src[i]); \
      int w1 = spc_rt_radix_##S(c2, src, c2 + n, dst, n, lob);                           \
      if (w1 >= 0) {                                                                     \
        T *p1 = w1 ? dst : src, *q1 = w1 ? src : dst;                                    \
        for (int64_t i = 0; i < n; i++) c2[i] = spc_rt_key_pack(key, 0, m, sh, lo, p1[i]); \
        int w2 = spc_rt_radix_##S(c2, p1, c2 + n, q1, n, bits - lob);                    \
        free(c2);                                                                        \
        if (w2 >= 0) {                                                                   \
          T *r = w2 ? q1 : p1;                                                           \
          if (r != perm) memcpy(perm, r, (size_t)n * sizeof *perm);                      \
          return;                                                                        \
        }                                                                                \
        src = p1; /* a permutation still: the merges below sort it */                    \
        dst = q1;                                                                        \
      } else {                                                                           \
        free(c2);                                                                        \
      }                                                                                  \
    }                                                                                    \
    for (int64_t w = 1; w < n; w *= 2) {                                                 \
      for (int64_t lo2 = 0; lo2 < n; lo2 += 2 * w) {                                     \
        int64_t mid = lo2 + w < n ? lo2 + w : n;                                         \
        int64_t hi = mid + w < n ? mid + w : n;                                          \
        int64_t i = lo2, j = mid, k = lo2;                                               \
        while (i < mid && j < hi)                                                        \
          dst[k++] = spc_rt_perm_cmp(key, nkeys, src[j], src[i]) < 0 ? src[j++] : src[i++]; \
        while (i < mid) dst[k++] = src[i++];                                             \
        while (j < hi) dst[k++] = src[j++];                                              \
      }                                                                                  \
      T *t = src;                                                                        \
      src = dst;                                                                         \
      dst = t;                                                                           \
    }                                                                                    \
    if (src != perm) memcpy(perm, src, (size_t)n * sizeof *perm);                        \
  }
SPC_RT_SORT(i32, int32_t)
SPC_RT_SORT(i64, int64_t)
#undef SPC_RT_SORT

#endif
