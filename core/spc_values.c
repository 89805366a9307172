/* spc_values.c -- operations on single values of any value type. */
#include "spc_impl.h"
#include <string.h>

bool spc_val_is_zero(spc_vtype vt, const void *v) {
  switch (vt) {
  case SPC_I64: return *(const int64_t *)v == 0;
  case SPC_U64: return *(const uint64_t *)v == 0;
  case SPC_F32: return *(const float *)v == 0;
  case SPC_F64: return *(const double *)v == 0;
  case SPC_C128: return ((const double *)v)[0] == 0 && ((const double *)v)[1] == 0;
  default: return false;
  }
}

/* Complex values order lexicographically (real part, then imaginary). */
static int cmp_c128(const double *a, const double *b) {
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

#define COMBINE_SCALAR(T)                                \
  do {                                                   \
    T *d = dst;                                          \
    const T *s = src;                                    \
    if (pol == SPC_DUP_SUM) *d = (T)(*d + *s);           \
    else if (pol == SPC_DUP_LAST) *d = *s;               \
    else if (pol == SPC_DUP_MIN && *s < *d) *d = *s;     \
    else if (pol == SPC_DUP_MAX && *s > *d) *d = *s;     \
  } while (0)

/* dst = combine(dst, src): dst holds the earlier entry. */
void spc_val_combine(spc_vtype vt, spc_dup pol, void *dst, const void *src) {
  switch (vt) {
  case SPC_I64: /* wrap-around sum, as in two's complement hardware */
    if (pol == SPC_DUP_SUM) {
      *(int64_t *)dst = (int64_t)((uint64_t) * (int64_t *)dst +
                                  (uint64_t) * (const int64_t *)src);
      return;
    }
    COMBINE_SCALAR(int64_t);
    return;
  case SPC_U64: COMBINE_SCALAR(uint64_t); return;
  case SPC_F32: COMBINE_SCALAR(float); return;
  case SPC_F64: COMBINE_SCALAR(double); return;
  case SPC_C128: {
    double *d = dst;
    const double *s = src;
    if (pol == SPC_DUP_SUM) {
      d[0] += s[0];
      d[1] += s[1];
    } else if (pol == SPC_DUP_LAST ||
               (pol == SPC_DUP_MIN && cmp_c128(s, d) < 0) ||
               (pol == SPC_DUP_MAX && cmp_c128(s, d) > 0)) {
      memcpy(d, s, 16);
    }
    return;
  }
  default: return;
  }
}
