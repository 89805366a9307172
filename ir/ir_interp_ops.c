/* ir_interp_ops.c -- the interpreter's out-of-line operations: error
 * messages, the casts its fast opcodes do not cover, the builtins (ranges
 * and sort keys checked before the runtime's ir_rt.h versions run) and
 * FAIL's message formatting. */
#include "ir_bc.h"
#include "ir_rt.h"
#include <stdio.h>
#include <string.h>

static spc_c128 cx(const ir_val *v) { return spc_c128_make(v->c128[0], v->c128[1]); }

const char *bc_arr_name(const bc_prog *p, int a) {
  return p->f->vars[p->arr_var[a]].name;
}
static ir_ty arr_ty(const bc_prog *p, int a) { return p->f->vars[p->arr_var[a]].ty; }

spc_status bc_error(const bc_prog *p, const bc_ins *ip, spc_error *e, spc_status code,
                    const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  spc_str st = {0};
  ir_fmt_stmt_head(&st, p->f, p->where[ip - p->code]);
  spc_err(e, code, NULL, 0, 0, "ir_run: function %s: %s in `%.200s`", p->f->name, what,
          st.s && !st.failed ? st.s : "?");
  spc_str_free(&st);
  return code;
}

/* ---- value conversion (casts the fast opcodes do not cover) -------------- */

void bc_convert(ir_val *d, const ir_val *s, ir_ty from, ir_ty to) {
  ir_val r = {0};
  if (from == IR_F32 || from == IR_F64 || from == IR_C128) {
    double x = from == IR_F32 ? (double)s->f32 : from == IR_F64 ? s->f64 : s->c128[0];
    switch (to) {
    case IR_BOOL:
      r.b = from == IR_C128 ? s->c128[0] != 0 || s->c128[1] != 0 : x != 0;
      break;
    case IR_I32: r.i32 = spc_f64_to_i32(x); break;
    case IR_I64: r.i64 = spc_f64_to_i64(x); break;
    case IR_U64: r.u64 = spc_f64_to_u64(x); break;
    case IR_F32: r.f32 = from == IR_F32 ? s->f32 : (float)x; break;
    case IR_F64: r.f64 = x; break;
    default:
      r.c128[0] = x;
      r.c128[1] = from == IR_C128 ? s->c128[1] : 0.0;
      break;
    }
  } else if (from == IR_U64) {
    uint64_t x = s->u64;
    switch (to) {
    case IR_BOOL: r.b = x != 0; break;
    case IR_I32: r.i32 = (int32_t)x; break;
    case IR_F32: r.f32 = (float)x; break;
    case IR_F64: r.f64 = (double)x; break;
    case IR_C128: r.c128[0] = (double)x; break;
    default: r.u64 = x; break;
    }
  } else { /* bool, i32, i64 */
    int64_t x = from == IR_BOOL ? (int64_t)s->b : from == IR_I32 ? s->i32 : s->i64;
    switch (to) {
    case IR_BOOL: r.b = x != 0; break;
    case IR_I32: r.i32 = (int32_t)x; break;
    case IR_F32: r.f32 = (float)x; break;
    case IR_F64: r.f64 = (double)x; break;
    case IR_C128: r.c128[0] = (double)x; break;
    default: r.i64 = x; break;
    }
  }
  *d = r;
}

/* ---- builtins ------------------------------------------------------------ */

static spc_status range_error(const bc_prog *p, const bc_ins *ip, spc_error *e,
                              const char *what, int a, int64_t lo, int64_t n,
                              int64_t len) {
  return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                  "%s range [%lld, %lld + %lld) out of bounds for %s (length %lld)", what,
                  (long long)lo, (long long)lo, (long long)n, bc_arr_name(p, a),
                  (long long)len);
}

/* 0 <= lo <= hi <= len, reported as a range error of builtin what. */
static bool in_range(int64_t lo, int64_t hi, int64_t len) {
  return lo >= 0 && lo <= hi && hi <= len;
}

static spc_status sort_perm(const bc_prog *p, const bc_ins *ip, const int32_t *arr,
                            int nkeys, int64_t n, bc_arr *A, spc_error *e) {
  bc_arr *perm = &A[arr[0]];
  bool p64 = arr_ty(p, arr[0]) == IR_I64;
  if (n < 0 || n > perm->len)
    return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                    "sort_perm: n = %lld out of "
                    "bounds for %s (length %lld)",
                    (long long)n, bc_arr_name(p, arr[0]), (long long)perm->len);
  for (int64_t k = 0; k < n; k++) {
    int64_t v = p64 ? ((int64_t *)perm->data)[k] : ((int32_t *)perm->data)[k];
    for (int j = 1; j <= nkeys; j++)
      if (v < 0 || v >= A[arr[j]].len)
        return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                        "sort_perm: %s[%lld] = %lld "
                        "out of bounds for key %s (length %lld)",
                        bc_arr_name(p, arr[0]), (long long)k, (long long)v,
                        bc_arr_name(p, arr[j]), (long long)A[arr[j]].len);
  }
  if (n < 2) return SPC_OK;
  spc_rt_key *key = spc_malloc_n(nkeys, sizeof *key);
  void *scratch = spc_malloc_n(n, p64 ? 8 : 4);
  if (!key || !scratch) {
    spc_free(key);
    spc_free(scratch);
    return SPC_NOMEM(e);
  }
  for (int j = 0; j < nkeys; j++)
    key[j] = (spc_rt_key){A[arr[j + 1]].data, (int)arr_ty(p, arr[j + 1])};
  if (p64)
    spc_sort_perm_i64(perm->data, n, key, nkeys, scratch);
  else
    spc_sort_perm_i32(perm->data, n, key, nkeys, scratch);
  spc_free(key);
  spc_free(scratch);
  return SPC_OK;
}

/* spmv_lanes and spmv_lanes_same (same) (y, crd, vals, x; yl, bg, en)
 * with the loads' checks first: y[yl], crd and vals over [bg, en), x at
 * each coordinate. */
static spc_status spmv_lanes(const bc_prog *p, const bc_ins *ip, bool same, const int32_t *arr,
                             int64_t yl, int64_t bg, int64_t en, bc_arr *A, spc_error *e) {
  const bc_arr *y = &A[arr[0]], *crd = &A[arr[1]], *vals = &A[arr[2]], *x = &A[arr[3]];
  bool c64 = arr_ty(p, arr[1]) == IR_I64;
  const char *bn = same ? "spmv_lanes_same" : "spmv_lanes";
  char pre[24];
  snprintf(pre, sizeof pre, "%s:", bn);
  if (yl < 0 || yl >= y->len)
    return bc_error(p, ip, e, SPC_ERR_INTERNAL, "%s: index %lld out of bounds for %s (length %lld)", bn,
                    (long long)yl, bc_arr_name(p, arr[0]), (long long)y->len);
  /* an empty range still writes y[yl] + 0.0 (a -0.0 becomes 0.0) */
  if (bg < en && !in_range(bg, en, crd->len)) return range_error(p, ip, e, pre, arr[1], bg, en - bg, crd->len);
  if (bg < en && !in_range(bg, en, vals->len)) return range_error(p, ip, e, pre, arr[2], bg, en - bg, vals->len);
  for (int64_t q = bg; q < en; q++) {
    int64_t c = c64 ? ((const int64_t *)crd->data)[q] : ((const int32_t *)crd->data)[q];
    if (c < 0 || c >= x->len)
      return bc_error(p, ip, e, SPC_ERR_INTERNAL, "%s: %s[%lld] = %lld out of bounds for %s (length %lld)",
                      bn, bc_arr_name(p, arr[1]), (long long)q, (long long)c, bc_arr_name(p, arr[3]),
                      (long long)x->len);
  }
  if (same && c64)
    spc_spmv_lanes_same_i64(y->data, crd->data, vals->data, x->data, yl, bg, en);
  else if (same)
    spc_spmv_lanes_same_i32(y->data, crd->data, vals->data, x->data, yl, bg, en);
  else if (c64)
    spc_spmv_lanes_i64(y->data, crd->data, vals->data, x->data, yl, bg, en);
  else
    spc_spmv_lanes_i32(y->data, crd->data, vals->data, x->data, yl, bg, en);
  return SPC_OK;
}

/* The runtime's stable sort_perm for C callers: int64 keys, top first. */
void ir_sort_perm_i64(int64_t *perm, int64_t n, int64_t *const *keys, int nkeys,
                      int64_t *scratch) {
  spc_rt_key key[64];
  if (nkeys > 64) nkeys = 64;
  for (int j = 0; j < nkeys; j++) key[j] = (spc_rt_key){keys[j], SPC_RT_I64};
  spc_sort_perm_i64(perm, n, key, nkeys, scratch);
}

#define BY_TYPE(t, FN, ...)                                                              \
  switch (t) {                                                                           \
  case IR_BOOL: FN(bool, __VA_ARGS__) break;                                             \
  case IR_I32: FN(i32, __VA_ARGS__) break;                                               \
  case IR_I64: FN(i64, __VA_ARGS__) break;                                               \
  case IR_U64: FN(u64, __VA_ARGS__) break;                                               \
  case IR_F32: FN(f32, __VA_ARGS__) break;                                               \
  case IR_F64: FN(f64, __VA_ARGS__) break;                                               \
  default: FN(c128, __VA_ARGS__) break;                                                  \
  }

/* Scalar v of a slot as the C type of suffix S. */
#define VAL_bool(v) (v).b
#define VAL_i32(v) (v).i32
#define VAL_i64(v) (v).i64
#define VAL_u64(v) (v).u64
#define VAL_f32(v) (v).f32
#define VAL_f64(v) (v).f64
#define VAL_c128(v) cx(&(v))
#define CALL_FILL(S, d, lo, hi, v) spc_fill_##S(d, lo, hi, VAL_##S(v));
#define CALL_SHIFT(S, d, lo, hi, v) spc_shift_##S(d, lo, hi, VAL_##S(v));
#define CALL_PREFIX(S, d, lo, hi) spc_prefix_sum_##S(d, lo, hi);
#define CALL_COPY(S, d, dlo, s, slo, n) spc_copy_##S(d, dlo, s, slo, n);

spc_status bc_builtin(const bc_prog *p, const bc_ins *ip, ir_val *R, bc_arr *A,
                      spc_error *e) {
  const bc_aux *x = &p->aux[ip->c];
  const ir_stmt *s = x->s;
  const int32_t *arr = p->pool + x->at, *arg = arr + s->nvars;
  bc_arr *d = &A[arr[0]];
  if (s->builtin == IR_MOVE) { /* verified: both owned, one type */
    bc_arr *from = &A[arr[1]];
    spc_free(d->data);
    *d = *from;
    *from = (bc_arr){NULL, 0};
    return SPC_OK;
  }
  ir_ty t = arr_ty(p, arr[0]);
  int64_t a0 = R[arg[0]].i64, a1 = s->nargs > 1 ? R[arg[1]].i64 : 0;
  switch (s->builtin) {
  case IR_FILL:
  case IR_PREFIX_SUM:
    if (a0 >= a1) return SPC_OK;
    if (!in_range(a0, a1, d->len))
      return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                      "range [%lld, %lld) out of "
                      "bounds for %s (length %lld)",
                      (long long)a0, (long long)a1, bc_arr_name(p, arr[0]),
                      (long long)d->len);
    if (s->builtin == IR_FILL)
      BY_TYPE(t, CALL_FILL, d->data, a0, a1, R[arg[2]])
    else
      BY_TYPE(t, CALL_PREFIX, d->data, a0, a1)
    return SPC_OK;
  case IR_SHIFT:
    if (!in_range(a0, a1, d->len - 1))
      return bc_error(p, ip, e, SPC_ERR_INTERNAL,
                      "shift range [%lld, %lld] out "
                      "of bounds for %s (length %lld)",
                      (long long)a0, (long long)a1, bc_arr_name(p, arr[0]),
                      (long long)d->len);
    BY_TYPE(t, CALL_SHIFT, d->data, a0, a1, R[arg[2]])
    return SPC_OK;
  case IR_COPY: {
    const bc_arr *src = &A[arr[1]];
    int64_t n = R[arg[2]].i64;
    if (n < 0 || a0 < 0 || a0 > d->len - n)
      return range_error(p, ip, e, "copy: destination", arr[0], a0, n, d->len);
    if (a1 < 0 || a1 > src->len - n)
      return range_error(p, ip, e, "copy: source", arr[1], a1, n, src->len);
    BY_TYPE(t, CALL_COPY, d->data, a0, src->data, a1, n)
    return SPC_OK;
  }
  case IR_SORT_PERM: return sort_perm(p, ip, arr, s->nvars - 1, a0, A, e);
  case IR_SPMV_LANES: return spmv_lanes(p, ip, false, arr, a0, a1, R[arg[2]].i64, A, e);
  case IR_SPMV_LANES_SAME: return spmv_lanes(p, ip, true, arr, a0, a1, R[arg[2]].i64, A, e);
  default: return bc_error(p, ip, e, SPC_ERR_INTERNAL, "unknown builtin");
  }
}

/* FAIL: code, and msg with each %lld replaced by the next argument. */
spc_status bc_fail(const bc_prog *p, const bc_ins *ip, const ir_val *R, spc_error *e) {
  const bc_aux *x = &p->aux[ip->c];
  const ir_stmt *s = x->s;
  const int32_t *arg = p->pool + x->at;
  spc_str m = {0};
  int k = 0;
  for (const char *q = s->msg; *q; q++) {
    if (*q != '%') {
      spc_str_add(&m, q, 1);
    } else if (q[1] == '%') {
      spc_str_add(&m, "%", 1);
      q++;
    } else {
      spc_str_addf(&m, "%lld", (long long)R[arg[k++]].i64);
      q += 3;
    }
  }
  spc_err(e, s->code, NULL, 0, 0, "%s", m.s ? m.s : "");
  spc_str_free(&m);
  return s->code;
}

/* ---- the dispatch loop --------------------------------------------------- */
