/* test_ir.c -- suite_ir: the IR (ir/).  Every program built here runs twice:
 * through the interpreter (ir_run) and as emitted C compiled by the system
 * `cc` into a shared object and loaded (the JIT path); both must agree bit
 * for bit on status, FAIL message and every INOUT / OUT argument.  Also:
 * type promotion, the interpreter's run-time errors, ir_verify's
 * rejections, the listing, the allocation-failure walk, and (with
 * SPC_IR_BENCH set) a micro-benchmark. */
#include "ir_internal.h"
#include "suites.h"
#include "testutil.h"
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- building helpers ---------------------------------------------------- */

#define B(op, x, y) ir_bin(f, IR_##op, (x), (y))
#define U(op, x) ir_un(f, IR_##op, (x))
#define R(v) ir_ref(f, (v))
#define K(n) ir_int(f, (n))
#define LD(a, i) ir_load(f, (a), (i))
#define ADD(blk, s) ir_add(f, (blk), (s))
#define TOP(s) ir_add(f, ir_func_body(f), (s))

static ir_expr *kt(ir_func *f, ir_ty t, ir_val v) { return ir_const(f, t, v); }

/* ---- the compiled path --------------------------------------------------- */

typedef int (*entry_fn)(ir_arg *args, char *err, size_t err_len);

typedef struct jit {
  void *so;
  entry_fn fn;
  char *dir;
} jit;

/* The compiler: $SPC_IR_CC, else cc. */
static const char *cc(void) {
  const char *c = getenv("SPC_IR_CC");
  return c && *c ? c : "cc";
}

static bool have_cc(void) {
  static int state;
  if (!state) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cc());
    state = system(cmd) == 0 ? 1 : -1;
    if (state < 0) printf("skipped: no C compiler, emitted C is not run\n");
  }
  return state > 0;
}

/* Warnings are errors; under `make asan` the emitted code is sanitized too. */
#if defined(__SANITIZE_ADDRESS__)
#define CC_SAN " -fsanitize=address,undefined -fno-sanitize-recover=all"
#else
#define CC_SAN ""
#endif
#define CC_FLAGS                                                                         \
  "-std=c99 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes "        \
  "-Wpointer-arith -Wformat=2 -Werror -ffp-contract=off" CC_SAN

static const ir_func *compiling; /* listed when cc fails */

/* Compile src (a whole file) into DIR/f.so and load it. */
static void *compile_so(const char *src, char **dir) {
  *dir = tu_mkdtemp();
  char *c = tu_path(*dir, "f.c"), *so = tu_path(*dir, "f.so"),
       *log = tu_path(*dir, "cc.log");
  ck_assert_int_eq(tu_write_str(c, src), 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s " CC_FLAGS " -shared -fPIC -o '%s' '%s' -lm >'%s' 2>&1",
           cc(), so, c, log);
  if (system(cmd) != 0) {
    char *msg = tu_read_file(log, NULL);
    spc_str l = {0};
    if (compiling) ir_print(compiling, &l);
    fprintf(stderr, "---- IR ----\n%s---- emitted C ----\n%s\n---- cc ----\n%s\n",
            l.s ? l.s : "", src, msg ? msg : "");
    spc_str_free(&l);
    ck_abort_msg("cc failed on the emitted C: %.900s", msg ? msg : "");
  }
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen: %s", dlerror());
  free(c);
  free(so);
  free(log);
  return h;
}

static char *emit(const ir_func *f, const ir_emit_opts *o) {
  spc_str s = {0};
  spc_error e;
  tu_assert_ok(ir_emit_c(f, o, &s, &e), &e);
  char *copy = strdup(s.s);
  spc_str_free(&s);
  return copy;
}

static bool jit_open(jit *j, const ir_func *f) {
  memset(j, 0, sizeof *j);
  if (!have_cc()) return false;
  ir_emit_opts o = {.prelude = true, .entry = true};
  char *src = emit(f, &o);
  compiling = f;
  j->so = compile_so(src, &j->dir);
  compiling = NULL;
  free(src);
  char sym[300];
  snprintf(sym, sizeof sym, "%s_entry", ir_func_name(f));
  *(void **)&j->fn = dlsym(j->so, sym);
  ck_assert_msg(j->fn != NULL, "dlsym %s: %s", sym, dlerror());
  return true;
}

static void jit_close(jit *j) {
  if (j->so) dlclose(j->so);
  if (j->dir) tu_rmtree(j->dir);
  free(j->dir);
  memset(j, 0, sizeof *j);
}

/* ---- arguments ----------------------------------------------------------- */

static const ir_var_info *param(const ir_func *f, int k) {
  return ir_var_get(f, ir_param_var(f, k));
}

/* A deep copy of args (arrays the callee reads or modifies). */
static void args_copy(const ir_func *f, const ir_arg *in, ir_arg *out) {
  for (int k = 0; k < ir_nparams(f); k++) {
    const ir_var_info *vi = param(f, k);
    out[k] = in[k];
    if (vi->array && vi->dir == IR_OUT) {
      out[k].data = NULL;
      out[k].len = 0;
    } else if (vi->array && in[k].len > 0) {
      size_t n = (size_t)in[k].len * ir_ty_size(vi->ty);
      out[k].data = malloc(n);
      memcpy(out[k].data, in[k].data, n);
    }
  }
}

static void args_free(const ir_func *f, ir_arg *a) {
  for (int k = 0; k < ir_nparams(f); k++)
    if (param(f, k)->array) {
      free(a[k].data);
      a[k].data = NULL;
    }
}

static uint64_t hi_bits(const ir_val *v) {
  uint64_t b;
  memcpy(&b, &v->c128[1], 8);
  return b;
}

/* On a mismatch: the listing and the scalar inputs, to stderr. */
static void dump(const ir_func *f, const ir_arg *in) {
  spc_str s = {0};
  ir_print(f, &s);
  fprintf(stderr, "%s", s.s ? s.s : "");
  spc_str_free(&s);
  for (int k = 0; k < ir_nparams(f); k++)
    if (!param(f, k)->array && param(f, k)->dir != IR_OUT)
      fprintf(stderr, "  %s = %016llx %016llx\n", param(f, k)->name,
              (unsigned long long)in[k].s.u64,
              (unsigned long long)(param(f, k)->ty == IR_C128 ? hi_bits(&in[k].s) : 0));
}

/* Bit-for-bit equality of one value of type t, except that any NaN equals
 * any NaN: IEEE 754 leaves the sign and payload of a NaN result open, and
 * compilers use that (x + -y becomes x - y). */
static bool same_bits(ir_ty t, const void *x, const void *y) {
  if (t == IR_F32) {
    float a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, 4);
  }
  if (t == IR_F64 || t == IR_C128) {
    for (int k = 0; k < (t == IR_C128 ? 2 : 1); k++) {
      double a, b;
      memcpy(&a, (const char *)x + 8 * k, 8);
      memcpy(&b, (const char *)y + 8 * k, 8);
      if (!(isnan(a) && isnan(b)) && memcmp(&a, &b, 8)) return false;
    }
    return true;
  }
  return !memcmp(x, y, ir_ty_size(t));
}

/* Bit-for-bit equality of every INOUT and OUT argument. */
static void args_same(const ir_func *f, const ir_arg *in, const ir_arg *a,
                      const ir_arg *b) {
  for (int k = 0; k < ir_nparams(f); k++) {
    const ir_var_info *vi = param(f, k);
    size_t size = ir_ty_size(vi->ty);
    if (vi->dir == IR_IN) continue;
    if (!vi->array) {
      uint64_t x[2] = {0, 0}, y[2] = {0, 0};
      memcpy(x, &a[k].s, size);
      memcpy(y, &b[k].s, size);
      bool ok = same_bits(vi->ty, x, y);
      if (!ok) dump(f, in);
      ck_assert_msg(
          ok, "%s: %s differs: interpreter %016llx %016llx, compiled %016llx %016llx",
          ir_func_name(f), vi->name, (unsigned long long)x[0], (unsigned long long)x[1],
          (unsigned long long)y[0], (unsigned long long)y[1]);
      continue;
    }
    ck_assert_msg(a[k].len == b[k].len, "%s: length of %s: %lld vs %lld", ir_func_name(f),
                  vi->name, (long long)a[k].len, (long long)b[k].len);
    ck_assert_msg((a[k].data == NULL) == (b[k].data == NULL) || vi->dir != IR_OUT,
                  "%s: %s is NULL on one side only", ir_func_name(f), vi->name);
    for (int64_t i = 0; i < a[k].len; i++)
      ck_assert_msg(
          same_bits(vi->ty, (char *)a[k].data + i * size, (char *)b[k].data + i * size),
          "%s: %s[%lld] differs", ir_func_name(f), vi->name, (long long)i);
  }
}

/* A function with its compiled twin. */
typedef struct tcase {
  ir_func *f;
  jit j;
  bool compiled;
} tcase;

static void tc_open(tcase *t, ir_func *f) {
  spc_error e;
  t->f = f;
  tu_assert_ok(ir_verify(f, &e), &e);
  t->compiled = jit_open(&t->j, f);
}

static void tc_close(tcase *t) {
  jit_close(&t->j);
  ir_func_free(&t->f);
}

/* Run with args on both paths and compare; the interpreter's arguments end
 * in res (free with args_free), its error in e.  Returns its status. */
#define MAXP 96 /* parameters of the biggest test function */

static spc_status tc_run(tcase *t, const ir_arg *args, ir_arg *res, spc_error *e) {
  ir_arg mine[MAXP], theirs[MAXP];
  int np = ir_nparams(t->f);
  ck_assert_int_le(np, MAXP);
  args_copy(t->f, args, mine);
  spc_error_clear(e);
  spc_status st = ir_run(t->f, mine, e);
  if (t->compiled) {
    char err[512] = "";
    args_copy(t->f, args, theirs);
    int st2 = t->j.fn(theirs, err, sizeof err);
    ck_assert_msg(st2 == (int)st, "%s: interpreter %d (%s), compiled %d (%s)",
                  ir_func_name(t->f), st, e->msg, st2, err);
    if (st != SPC_OK) ck_assert_str_eq(err, e->msg);
    args_same(t->f, args, mine, theirs);
    args_free(t->f, theirs);
  }
  memcpy(res, mine, (size_t)np * sizeof *res);
  return st;
}

/* tc_run that must succeed; frees the results unless res is kept. */
static void tc_ok(tcase *t, const ir_arg *args, ir_arg *res) {
  spc_error e;
  ir_arg tmp[MAXP];
  tu_assert_ok(tc_run(t, args, res ? res : tmp, &e), &e);
  if (!res) args_free(t->f, tmp);
}

/* ---- interesting values -------------------------------------------------- */

static const int32_t vi32[] = {0,  1,         -1,        2,         -7,
                               13, INT32_MAX, INT32_MIN, 123456789, -65536};
static const int64_t vi64[] = {
    0, 1, -1, -7, 13, INT64_MAX, INT64_MIN, 1LL << 40, -(1LL << 33) + 5, 3000000000LL};
static const uint64_t vu64[] = {
    0,          1,  2, 7, UINT64_MAX, 1ULL << 63, 12345678901234567ULL, UINT64_MAX - 6,
    1ULL << 32, 255};
static const double vf64[] = {
    0.0,       -0.0, 1.5, -2.25,  1e300, -1e-300, INFINITY,
    -INFINITY, NAN,  0.1, 5e-324, 3.0,   -7.75,   4503599627370497.0};
static const float vf32[] = {0.0f,      -0.0f, 1.5f, -2.25f, 1e30f, -1e-30f, INFINITY,
                             -INFINITY, NAN,   0.1f, 1e-45f, 3.0f,  3.4e38f, -7.75f};
#define NV(a) ((int)(sizeof a / sizeof a[0]))

static int nvals(ir_ty t) {
  switch (t) {
  case IR_BOOL: return 2;
  case IR_I32: return NV(vi32);
  case IR_I64: return NV(vi64);
  case IR_U64: return NV(vu64);
  case IR_F32: return NV(vf32);
  default: return NV(vf64);
  }
}

static ir_val val(ir_ty t, int k) {
  ir_val v;
  memset(&v, 0, sizeof v);
  switch (t) {
  case IR_BOOL: v.b = k & 1; break;
  case IR_I32: v.i32 = vi32[k]; break;
  case IR_I64: v.i64 = vi64[k]; break;
  case IR_U64: v.u64 = vu64[k]; break;
  case IR_F32: v.f32 = vf32[k]; break;
  case IR_F64: v.f64 = vf64[k]; break;
  default:
    v.c128[0] = vf64[k];
    v.c128[1] = vf64[(k * 5 + 3) % NV(vf64)];
    break;
  }
  return v;
}

/* ---- every operator on every type ---------------------------------------- */

static const ir_ty all_ty[] = {IR_BOOL, IR_I32, IR_I64, IR_U64, IR_F32, IR_F64, IR_C128};

/* ops_T(in a: T, in b: T, out one output per operator that applies).
 * Integer / and % are guarded: b != 0 ? a / b : a. */
static ir_func *build_ops(ir_ty t) {
  char name[32];
  snprintf(name, sizeof name, "ops_%s", ir_ty_name(t));
  for (char *p = name; *p; p++)
    if (*p == ' ') *p = '_';
  ir_func *f = ir_func_new(name);
  ir_var a = ir_param(f, "a", t, false, IR_IN), b = ir_param(f, "b", t, false, IR_IN);
  int n = 0;
  for (ir_op op = IR_ADD; op <= IR_ABS; op++) {
    bool intop = op == IR_SHL || op == IR_SHR || op == IR_BAND || op == IR_BOR ||
                 op == IR_BXOR || op == IR_BNOT;
    if (intop && !(t == IR_BOOL || t == IR_I32 || t == IR_I64 || t == IR_U64)) continue;
    if (t == IR_C128 && (op == IR_REM || op == IR_MIN || op == IR_MAX || op == IR_ABS ||
                         (op >= IR_LT && op <= IR_GE)))
      continue;
    ir_expr *x = R(a), *y = R(b), *e;
    if (op == IR_SHL || op == IR_SHR) { /* count masked into range */
      int w = t == IR_I64 || t == IR_U64 ? 63 : 31;
      y = B(BAND, y, ir_cast(f, t == IR_BOOL ? IR_I32 : t, K(w)));
    }
    bool guard =
        (op == IR_DIV || op == IR_REM) && t != IR_F32 && t != IR_F64 && t != IR_C128;
    if (op >= IR_NEG)
      e = ir_un(f, op, x);
    else if (guard)
      e = ir_select(f, B(NE, y, ir_cast(f, t, K(0))), ir_bin(f, op, x, y), x);
    else
      e = ir_bin(f, op, x, y);
    char on[32];
    snprintf(on, sizeof on, "o%d", n++);
    ir_var o = ir_param(f, on, e->ty, false, IR_OUT);
    TOP(ir_assign(f, o, e));
  }
  ck_assert_msg(ir_func_ok(f), "%s", name);
  return f;
}

START_TEST(test_ops_every_type) {
  for (size_t ti = 0; ti < sizeof all_ty / sizeof all_ty[0]; ti++) {
    ir_ty t = all_ty[ti];
    tcase tc;
    tc_open(&tc, build_ops(t));
    for (int i = 0; i < nvals(t); i++)
      for (int k = 0; k < nvals(t); k++) {
        ir_arg args[40];
        memset(args, 0, sizeof args);
        args[0].s = val(t, i);
        args[1].s = val(t, k);
        tc_ok(&tc, args, NULL);
      }
    tc_close(&tc);
  }
}
END_TEST

/* Known answers: wrap-around, I32 promotion, truncating division, min/max
 * NaN rule, complex formulas. */
START_TEST(test_arith_values) {
  ir_func *f = ir_func_new("vals");
  ir_var a32 = ir_param(f, "a32", IR_I32, false, IR_IN);
  ir_var b = ir_param(f, "flag", IR_BOOL, false, IR_IN);
  ir_var a64 = ir_param(f, "a64", IR_I64, false, IR_IN);
  ir_var x = ir_param(f, "x", IR_F64, false, IR_IN);
  ir_var z = ir_param(f, "z", IR_C128, false, IR_IN);
  ir_expr *e1 =
      B(ADD, R(a32), ir_const(f, IR_I32, (ir_val){.i32 = 1})); /* wraps in I32 */
  ir_expr *e2 = B(ADD, R(a32), K(1));                          /* I64: no wrap */
  ir_expr *e3 = B(ADD, R(b), R(b));                            /* bool+bool: I32 */
  ir_expr *e4 = B(DIV, U(NEG, R(a64)), K(2));                  /* truncation */
  ir_expr *e5 = B(REM, U(NEG, R(a64)), K(2));
  ir_expr *e6 = B(MIN, R(x), ir_f64(f, 1.0)); /* NaN in a: a */
  ir_expr *e7 = B(MIN, ir_f64(f, 1.0), R(x)); /* NaN in b: a */
  ir_expr *e8 = B(MUL, R(z), R(z));
  ir_expr *e9 = B(DIV, ir_const(f, IR_C128, (ir_val){.c128 = {1, 0}}), R(z));
  ck_assert_int_eq(e1->ty, IR_I32);
  ck_assert_int_eq(e2->ty, IR_I64);
  ck_assert_int_eq(e3->ty, IR_I32);
  ck_assert_int_eq(B(LT, R(a32), R(x))->ty, IR_BOOL);
  ck_assert_int_eq(B(SHL, R(a32), K(3))->ty, IR_I32); /* shift: left type */
  ck_assert_int_eq(B(ADD, R(a64), ir_const(f, IR_U64, (ir_val){.u64 = 1}))->ty, IR_U64);
  ck_assert_int_eq(ir_select(f, R(b), R(a32), R(x))->ty, IR_F64);
  ir_expr *es[] = {e1, e2, e3, e4, e5, e6, e7, e8, e9};
  for (int k = 0; k < 9; k++) {
    char on[32];
    snprintf(on, sizeof on, "r%d", k);
    TOP(ir_assign(f, ir_param(f, on, es[k]->ty, false, IR_OUT), es[k]));
  }
  tcase tc;
  tc_open(&tc, f);
  ir_arg args[14] = {{.s.i32 = INT32_MAX},
                     {.s.b = true},
                     {.s.i64 = 7},
                     {.s.f64 = NAN},
                     {.s.c128 = {3, 4}}};
  ir_arg r[14];
  tc_ok(&tc, args, r);
  ck_assert_int_eq(r[5].s.i32, INT32_MIN);
  ck_assert_int_eq(r[6].s.i64, (int64_t)INT32_MAX + 1);
  ck_assert_int_eq(r[7].s.i32, 2);
  ck_assert_int_eq(r[8].s.i64, -3);
  ck_assert_int_eq(r[9].s.i64, -1);
  ck_assert(isnan(r[10].s.f64));
  ck_assert(r[11].s.f64 == 1.0);
  ck_assert(r[12].s.c128[0] == -7 && r[12].s.c128[1] == 24);
  ck_assert(r[13].s.c128[0] == 0.12 && r[13].s.c128[1] == -0.16);
  args[0].s.i32 = INT32_MIN; /* INT_MIN / -1 wraps, INT_MIN % -1 is 0 */
  args[2].s.i64 = INT64_MIN;
  tc_ok(&tc, args, r);
  ck_assert_int_eq(r[5].s.i32, INT32_MIN + 1);
  tc_close(&tc);

  /* INT_MIN / -1 and % -1 */
  f = ir_func_new("wrapdiv");
  ir_var p = ir_param(f, "p", IR_I64, false, IR_IN),
         q = ir_param(f, "q", IR_I64, false, IR_IN);
  ir_var d = ir_param(f, "d", IR_I64, false, IR_OUT),
         m = ir_param(f, "m", IR_I64, false, IR_OUT);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_OUT),
         s = ir_param(f, "s", IR_I64, false, IR_OUT);
  TOP(ir_assign(f, d, B(DIV, R(p), R(q))));
  TOP(ir_assign(f, m, B(REM, R(p), R(q))));
  TOP(ir_assign(f, n, U(ABS, R(p))));
  TOP(ir_assign(f, s, B(SHR, R(p), K(60))));
  tc_open(&tc, f);
  ir_arg w[6] = {{.s.i64 = INT64_MIN}, {.s.i64 = -1}};
  tc_ok(&tc, w, r);
  ck_assert(r[2].s.i64 == INT64_MIN && r[3].s.i64 == 0 && r[4].s.i64 == INT64_MIN);
  ck_assert_int_eq(r[5].s.i64, -8); /* arithmetic shift */
  tc_close(&tc);

  /* a constant divisor other than 0 and -1 (seen through casts) is C's / and
   * %, the helper's semantics, so the compiler sees it (BCSR's i / 4 was a
   * 64-bit idiv); -1 keeps the helper (INT_MIN / -1 wraps) */
  f = ir_func_new("cdiv");
  p = ir_param(f, "p", IR_I64, false, IR_IN);
  ir_var p32 = ir_param(f, "p32", IR_I32, false, IR_IN);
  ir_var o[6];
  for (int k = 0; k < 6; k++) {
    char on[16];
    snprintf(on, sizeof on, "o%d", k);
    o[k] = ir_param(f, on, k < 4 ? IR_I64 : IR_I32, false, IR_OUT);
  }
  ir_expr *four = ir_cast(f, IR_I64, ir_const(f, IR_I32, (ir_val){.i32 = 4}));
  TOP(ir_assign(f, o[0], B(DIV, R(p), four)));
  TOP(ir_assign(f, o[1],
                B(REM, R(p), ir_cast(f, IR_I64, ir_const(f, IR_I32, (ir_val){.i32 = 4})))));
  TOP(ir_assign(f, o[2], B(DIV, R(p), ir_const(f, IR_I64, (ir_val){.i64 = -3}))));
  TOP(ir_assign(f, o[3], B(DIV, R(p), ir_const(f, IR_I64, (ir_val){.i64 = -1}))));
  TOP(ir_assign(f, o[4], B(REM, R(p32), ir_const(f, IR_I32, (ir_val){.i32 = 7}))));
  TOP(ir_assign(f, o[5], B(DIV, R(p32), ir_const(f, IR_I32, (ir_val){.i32 = -1}))));
  char *src = emit(f, NULL);
  ck_assert_msg(strstr(src, "o0 = p / (int64_t)4;") &&
                    strstr(src, "o1 = p % (int64_t)4;") && strstr(src, "p / -3") &&
                    strstr(src, "o4 = p32 % 7;") && strstr(src, "spc_div_i64(p, -1)") &&
                    strstr(src, "spc_div_i32(p32, -1)"),
                "%s", src);
  free(src);
  tc_open(&tc, f);
  static const int64_t pv[] = {-9, -8, -1, 0, 7, INT64_MIN, INT64_MAX};
  for (int k = 0; k < 7; k++) {
    ir_arg cw[8] = {{.s.i64 = pv[k]}, {.s.i32 = (int32_t)(pv[k] > INT32_MAX   ? INT32_MAX
                                                          : pv[k] < INT32_MIN ? INT32_MIN
                                                                              : pv[k])}};
    tc_ok(&tc, cw, r);
    ck_assert_int_eq(r[2].s.i64, pv[k] / 4);
    ck_assert_int_eq(r[3].s.i64, pv[k] % 4);
    ck_assert_int_eq(r[4].s.i64, pv[k] / -3);
    ck_assert_int_eq(r[5].s.i64, pv[k] == INT64_MIN ? INT64_MIN : -pv[k]);
    ck_assert_int_eq(r[6].s.i32, cw[1].s.i32 % 7);
  }
  tc_close(&tc);
}
END_TEST

/* ---- casts --------------------------------------------------------------- */

START_TEST(test_casts) {
  ir_func *f = ir_func_new("casts");
  ir_var src[IR_NTYPES];
  for (int t = 0; t < IR_NTYPES; t++) {
    char n[32];
    snprintf(n, sizeof n, "s%d", t);
    src[t] = ir_param(f, n, (ir_ty)t, false, IR_IN);
  }
  for (int from = 0; from < IR_NTYPES; from++)
    for (int to = 0; to < IR_NTYPES; to++) {
      char n[32];
      snprintf(n, sizeof n, "c%d_%d", from, to);
      ir_expr *c = ir_cast(f, (ir_ty)to, R(src[from]));
      ck_assert_int_eq(c->ty, to);
      TOP(ir_assign(f, ir_param(f, n, (ir_ty)to, false, IR_OUT), c));
    }
  tcase tc;
  tc_open(&tc, f);
  for (int k = 0; k < 14; k++) {
    ir_arg args[IR_NTYPES + IR_NTYPES * IR_NTYPES];
    memset(args, 0, sizeof args);
    for (int t = 0; t < IR_NTYPES; t++) args[t].s = val((ir_ty)t, k % nvals((ir_ty)t));
    tc_ok(&tc, args, NULL);
  }
  /* float -> int truncates toward zero within range; saturates; NaN is 0 */
  ir_arg args[IR_NTYPES + IR_NTYPES * IR_NTYPES], r[IR_NTYPES + IR_NTYPES * IR_NTYPES];
  double in[] = {3.99, -3.99, 2147483647.5, -2147483648.9, 1e19, -1e30, NAN, 9.2e18};
  int64_t want32[] = {3, -3, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0, INT32_MAX};
  int64_t want64[] = {3,         -3,        2147483647, -2147483648LL,
                      INT64_MAX, INT64_MIN, 0,          9200000000000000000LL};
  uint64_t wantu[] = {
      3, 0, 2147483647, 0, 10000000000000000000ULL, 0, 0, 9200000000000000000ULL};
  for (int k = 0; k < 8; k++) {
    memset(args, 0, sizeof args);
    args[IR_F64].s.f64 = in[k];
    tc_ok(&tc, args, r);
    int base = IR_NTYPES + IR_F64 * IR_NTYPES;
    ck_assert_int_eq(r[base + IR_I32].s.i32, want32[k]);
    ck_assert_int_eq(r[base + IR_I64].s.i64, want64[k]);
    ck_assert_msg(r[base + IR_U64].s.u64 == wantu[k], "u64 of %g", in[k]);
    ck_assert_int_eq(r[base + IR_BOOL].s.b, in[k] != 0);
  }
  tc_close(&tc);
}
END_TEST

/* ---- random expressions: the emitter's parentheses and helpers ----------- */

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static bool has_var(const ir_expr *e) {
  if (!e) return false;
  if (e->kind == IR_E_VAR) return true;
  return has_var(e->a) || has_var(e->b) || has_var(e->c);
}

/* A random expression of about depth d over the scalars vars[0..nv);
 * never an error (integer / and % guarded, shift counts masked); with
 * need_var it reads a variable: no operator gets only constants, which
 * a compiler would fold (and fold NaNs with other payloads). */
static ir_var rarr[IR_NTYPES]; /* IN arrays of 4 elements, one per type */

static ir_expr *rexpr(ir_func *f, const ir_var *vars, int nv, int d, bool need_var) {
  if (d <= 0 || rnd() % 5 == 0) {
    if (rnd() % 3 == 0) { /* t_arr[i64(v) & 3] */
      ir_expr *i = B(BAND, ir_cast(f, IR_I64, R(vars[rnd() % (uint64_t)nv])), K(3));
      return LD(rarr[rnd() % 7], i);
    }
    if (!need_var && rnd() % 3 == 0) {
      ir_ty t = all_ty[rnd() % 7];
      ir_val v = val(t, (int)(rnd() % (uint64_t)nvals(t)));
      if ((t == IR_F32 && isnan(v.f32)) || (t == IR_F64 && isnan(v.f64)) ||
          (t == IR_C128 && (isnan(v.c128[0]) || isnan(v.c128[1]))))
        v = val(t, 2);
      return kt(f, t, v);
    }
    return R(vars[rnd() % (uint64_t)nv]);
  }
  switch (rnd() % 8) {
  case 0: return ir_cast(f, all_ty[rnd() % 7], rexpr(f, vars, nv, d - 1, need_var));
  case 1: {
    ir_expr *x = rexpr(f, vars, nv, d - 1, need_var);
    ir_op op = (ir_op)(IR_NEG + rnd() % 4);
    if (op == IR_BNOT && !(x->ty <= IR_U64)) op = IR_NEG;
    if (op == IR_ABS && x->ty == IR_C128) op = IR_NEG;
    return ir_un(f, op, x);
  }
  case 2:
    return ir_select(f, rexpr(f, vars, nv, d - 1, false),
                     rexpr(f, vars, nv, d - 1, need_var),
                     rexpr(f, vars, nv, d - 1, false));
  default: {
    ir_expr *x = rexpr(f, vars, nv, d - 1, false);
    ir_expr *y = rexpr(f, vars, nv, d - 1, !has_var(x));
    ir_op op = (ir_op)(rnd() % (IR_MAX + 1));
    bool ints = x->ty <= IR_U64 && y->ty <= IR_U64;
    ir_ty t = x->ty > y->ty ? x->ty : y->ty;
    if ((op >= IR_SHL && op <= IR_BXOR) && !ints) op = IR_ADD;
    if (t == IR_C128 &&
        (op == IR_REM || op == IR_MIN || op == IR_MAX || (op >= IR_LT && op <= IR_GE)))
      op = IR_SUB;
    if (op == IR_SHL || op == IR_SHR) {
      ir_ty lt = x->ty < IR_I32 ? IR_I32 : x->ty;
      return ir_bin(f, op, x, B(BAND, ir_cast(f, IR_I64, y), K(lt == IR_I32 ? 31 : 63)));
    }
    if ((op == IR_DIV || op == IR_REM) && t <= IR_U64) {
      ir_expr *nz = B(NE, y, ir_cast(f, y->ty, K(0)));
      return ir_select(f, nz, ir_bin(f, op, x, y), x);
    }
    return ir_bin(f, op, x, y);
  }
  }
}

/* SPC_IR_ROUNDS=n SPC_IR_SEED=s run more rounds, from another seed. */
START_TEST(test_random_expressions) {
  const char *env = getenv("SPC_IR_ROUNDS");
  int rounds = env && atoi(env) > 0 ? atoi(env) : 4;
  if ((env = getenv("SPC_IR_SEED")) && strtoull(env, NULL, 10))
    rng = strtoull(env, NULL, 10);
  for (int round = 0; round < rounds; round++) {
    ir_func *f = ir_func_new("rnd");
    ir_var vars[14];
    int nv = 0;
    for (int t = 0; t < IR_NTYPES; t++)
      for (int k = 0; k < 2; k++) {
        char n[32];
        snprintf(n, sizeof n, "%c%d", 'a' + t, k);
        vars[nv++] = ir_param(f, n, (ir_ty)t, false, IR_IN);
      }
    for (int t = 0; t < IR_NTYPES; t++) {
      char n[32];
      snprintf(n, sizeof n, "%s_arr", ir_ty_short((ir_ty)t));
      rarr[t] = ir_param(f, n, (ir_ty)t, true, IR_IN);
    }
    for (int k = 0; k < 18; k++) {
      char n[32];
      snprintf(n, sizeof n, "r%d", k);
      ir_expr *e = rexpr(f, vars, nv, 2 + k % 5, true);
      TOP(ir_assign(f, ir_param(f, n, e->ty, false, IR_OUT), e));
    }
    ck_assert(ir_func_ok(f));
    tcase tc;
    tc_open(&tc, f);
    for (int run = 0; run < 40; run++) {
      ir_arg args[48];
      unsigned char data[IR_NTYPES][64];
      memset(args, 0, sizeof args);
      for (int v = 0; v < nv; v++) {
        ir_ty t = (ir_ty)(v / 2);
        args[v].s = val(t, (int)(rnd() % (uint64_t)nvals(t)));
      }
      for (int t = 0; t < IR_NTYPES; t++) {
        size_t size = ir_ty_size((ir_ty)t);
        for (int k = 0; k < 4; k++) {
          ir_val x = val((ir_ty)t, (int)(rnd() % (uint64_t)nvals((ir_ty)t)));
          memcpy(data[t] + (size_t)k * size, &x, size);
        }
        args[nv + t] = (ir_arg){.data = data[t], .len = 4};
      }
      tc_ok(&tc, args, NULL);
    }
    tc_close(&tc);
  }
}
END_TEST

/* ---- loops and branches -------------------------------------------------- */

static ir_func *build_loops(void) {
  ir_func *f = ir_func_new("loops");
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var m = ir_param(f, "m", IR_I32, false, IR_IN);
  ir_var a = ir_param(f, "a", IR_I64, false, IR_OUT);
  ir_var b = ir_param(f, "b", IR_I64, false, IR_OUT);
  ir_var c = ir_param(f, "c", IR_I64, false, IR_OUT);
  ir_var d = ir_param(f, "d", IR_I64, false, IR_OUT);
  ir_var e = ir_param(f, "e", IR_I32, false, IR_OUT);
  ir_var g = ir_param(f, "g", IR_U64, false, IR_OUT);
  ir_var last = ir_param(f, "last", IR_I64, false, IR_OUT);
  ir_var h = ir_param(f, "h", IR_I64, false, IR_INOUT);
  ir_var i = ir_local(f, "i", IR_I64, false), j = ir_local(f, "j", IR_I64, false);
  ir_var k = ir_local(f, "k", IR_I32, false), u = ir_local(f, "u", IR_U64, false);
  ir_var lim = ir_local(f, "lim", IR_I64, false);
  /* empty ranges: the variable still takes lo */
  ir_stmt *l = TOP(ir_for(f, i, K(5), K(5), NULL));
  ADD(ir_body(l), ir_assign(f, a, B(ADD, R(a), K(1))));
  l = TOP(ir_for(f, i, K(7), K(3), NULL));
  ADD(ir_body(l), ir_assign(f, a, B(ADD, R(a), K(100))));
  TOP(ir_assign(f, a, B(ADD, R(a), R(i))));
  /* nested, the inner range depending on the outer variable */
  ir_stmt *outer = TOP(ir_for(f, i, K(0), R(n), NULL));
  ir_stmt *inner = ADD(ir_body(outer), ir_for(f, j, R(i), R(n), NULL));
  ADD(ir_body(inner), ir_assign(f, b, B(ADD, R(b), B(MUL, R(i), B(ADD, R(j), K(1))))));
  TOP(ir_assign(f, last, R(i)));
  /* the upper bound is evaluated once */
  TOP(ir_assign(f, lim, R(n)));
  l = TOP(ir_for(f, i, K(0), R(lim), NULL));
  ADD(ir_body(l), ir_assign(f, lim, B(SUB, R(lim), K(1))));
  ADD(ir_body(l), ir_assign(f, c, B(ADD, R(c), K(1))));
  /* the body moves the loop variable */
  l = TOP(ir_for(f, i, K(0), K(10), NULL));
  ADD(ir_body(l), ir_assign(f, i, B(ADD, R(i), K(2))));
  ADD(ir_body(l), ir_assign(f, c, B(ADD, R(c), B(MUL, R(i), K(1000)))));
  /* while with break */
  l = TOP(ir_while(f, ir_bool(f, true), NULL));
  ADD(ir_body(l), ir_assign(f, d, B(ADD, R(d), K(3))));
  ir_stmt *br = ADD(ir_body(l), ir_if(f, B(GT, R(d), K(20)), NULL, NULL));
  ADD(ir_then(br), ir_break(f));
  /* i32 loop with break, and with an i64 bound converted */
  l = TOP(ir_for(f, k, ir_const(f, IR_I32, (ir_val){.i32 = 0}), R(m), NULL));
  ADD(ir_body(l), ir_assign(f, e, B(ADD, R(e), R(k))));
  br = ADD(ir_body(l),
           ir_if(f, B(GT, R(e), ir_const(f, IR_I32, (ir_val){.i32 = 10})), NULL, NULL));
  ADD(ir_then(br), ir_break(f));
  /* u64 loop; break leaves only the inner loop */
  l = TOP(ir_for(f, u, ir_const(f, IR_U64, (ir_val){.u64 = 3}),
                 ir_const(f, IR_U64, (ir_val){.u64 = 10}), NULL));
  ADD(ir_body(l), ir_assign(f, g, B(ADD, R(g), R(u))));
  inner = ADD(ir_body(l), ir_while(f, B(LT, R(h), K(1000)), NULL));
  ADD(ir_body(inner), ir_assign(f, h, B(MUL, R(h), K(2))));
  ADD(ir_body(inner), ir_break(f));
  ck_assert(ir_func_ok(f));
  return f;
}

START_TEST(test_loops) {
  tcase tc;
  tc_open(&tc, build_loops());
  int64_t ns[] = {0, 1, 5, 9, -3};
  int32_t ms[] = {0, 3, 100, -5};
  for (int x = 0; x < 5; x++)
    for (int y = 0; y < 4; y++) {
      ir_arg args[10] = {{.s.i64 = ns[x]}, {.s.i32 = ms[y]}}, r[10];
      args[9].s.i64 = 1 + x;
      tc_ok(&tc, args, r);
      int64_t n = ns[x], b = 0;
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i; j < n; j++) b += i * (j + 1);
      ck_assert_int_eq(r[2].s.i64, 7); /* empty loops: i = 7 */
      ck_assert_int_eq(r[3].s.i64, b);
      ck_assert_int_eq(r[4].s.i64, (n > 0 ? n : 0) + 2000 + 5000 + 8000 + 11000);
      ck_assert_int_eq(r[5].s.i64, 21);
      ck_assert_int_eq(r[7].s.u64, 42);
      ck_assert_int_eq(r[8].s.i64, n > 0 ? n : 0);
      ck_assert_int_eq(r[9].s.i64, (1 + x) << 7);
    }
  tc_close(&tc);
}
END_TEST

START_TEST(test_branches) {
  ir_func *f = ir_func_new("branch");
  ir_var x = ir_param(f, "x", IR_I64, false, IR_IN);
  ir_var y = ir_param(f, "y", IR_I64, false, IR_OUT);
  ir_var z = ir_param(f, "z", IR_BOOL, false, IR_OUT);
  ir_stmt *s = TOP(ir_if(f, B(LT, R(x), K(0)), NULL, NULL));
  ADD(ir_then(s), ir_assign(f, y, K(-1)));
  ir_stmt *s2 = ADD(ir_else(f, s), ir_if(f, B(EQ, R(x), K(0)), NULL, NULL));
  ir_stmt *s3 = ADD(ir_else(f, s2), ir_if(f, B(LT, R(x), K(10)), NULL, NULL));
  ADD(ir_then(s3), ir_assign(f, y, K(1)));
  ADD(ir_else(f, s3), ir_assign(f, y, K(2)));
  s = TOP(ir_if(f, B(EQ, R(x), K(5)), NULL, NULL));
  ADD(ir_then(s), ir_assign(f, y, B(ADD, R(y), K(100))));
  /* && and || short-circuit: the right side would divide by zero */
  TOP(ir_assign(f, z, B(LOR, B(EQ, R(x), K(0)), B(GT, B(DIV, K(100), R(x)), K(7)))));
  TOP(ir_assign(f, z, B(LAND, R(z), B(NE, R(x), K(0)))));
  tcase tc;
  tc_open(&tc, f);
  int64_t xs[] = {-4, 0, 3, 5, 12};
  int64_t want[] = {-1, 0, 1, 101, 2};
  for (int k = 0; k < 5; k++) {
    ir_arg args[3] = {{.s.i64 = xs[k]}}, r[3];
    tc_ok(&tc, args, r);
    ck_assert_int_eq(r[1].s.i64, want[k]);
    ck_assert_int_eq(r[2].s.b, xs[k] != 0 && 100 / xs[k] > 7);
  }
  tc_close(&tc);
}
END_TEST

/* ir_prune_from: what only feeds dead assignments goes (the interpreter no
 * longer runs their out-of-range load); a variable an effect reads stays. */
START_TEST(test_prune) {
  spc_error e;
  for (int live = 0; live < 4; live++) {
    ir_func *f = ir_func_new("prune");
    ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
    ir_var arr = ir_param(f, "arr", IR_I64, true, IR_INOUT);
    ir_var r = ir_param(f, "r", IR_I64, false, IR_OUT);
    ir_var a = ir_local(f, "a", IR_I64, false), b = ir_local(f, "b", IR_I64, false);
    ir_var c = ir_local(f, "c", IR_I64, false), d = ir_local(f, "d", IR_I64, false);
    ir_var i = ir_local(f, "i", IR_I64, false), acc = ir_local(f, "acc", IR_I64, false);
    TOP(ir_assign(f, a, B(ADD, R(n), K(1))));
    ir_stmt *loop = TOP(ir_for(f, i, K(0), R(n), NULL));
    ADD(ir_body(loop), ir_assign(f, b, B(MUL, R(a), R(i))));
    ADD(ir_body(loop), ir_assign(f, c, B(ADD, R(b), LD(arr, R(a))))); /* a = n + 1: past arr */
    ADD(ir_body(loop), ir_assign(f, acc, B(ADD, R(acc), R(i))));
    TOP(ir_assign(f, d, B(MUL, R(n), K(3))));
    if (live == 1) TOP(ir_assign(f, r, R(c))); /* a parameter reads it */
    else TOP(ir_assign(f, r, B(ADD, R(d), K(1))));
    if (live == 2) { /* a condition */
      ir_stmt *s = TOP(ir_if(f, B(GT, R(b), K(0)), NULL, NULL));
      ADD(ir_then(s), ir_assign(f, d, K(0)));
    }
    if (live == 3) TOP(ir_store(f, arr, B(SUB, R(a), R(n)), K(9))); /* an index */
    TOP(ir_store(f, arr, K(0), R(d)));
    tu_assert_ok(ir_verify(f, &e), &e);
    int64_t x[2] = {0, 0};
    ir_arg args[3] = {{.s.i64 = 5}, {.data = x, .len = 2}};
    spc_error_clear(&e);
    ck_assert_int_ne(ir_run(f, args, &e), SPC_OK); /* the load past arr */
    int kids = ir_func_body(f)->nkids;
    int got = ir_prune_from(f, &a, 1);
    ck_assert_int_eq(got, live ? 0 : 1);
    ck_assert_int_eq(ir_func_body(f)->nkids, live ? kids : kids - 1); /* a's assignment */
    ck_assert_int_eq(ir_body(loop)->nkids, live ? 3 : 1);           /* b's, c's; acc's kept */
    if (live) {
      ir_func_free(&f);
      continue;
    }
    ck_assert_int_eq(ir_prune_from(f, (ir_var[]){b, d}, 2), 0); /* d is stored */
    ck_assert_int_eq(ir_prune_from(f, (ir_var[]){b, i}, 2), 1); /* i only fed acc */
    ck_assert_int_eq(ir_body(loop)->nkids, 0);                /* acc's gone too */
    tcase tc;
    tc_open(&tc, f);
    ir_arg res[3];
    tc_ok(&tc, args, res); /* and the compiled twin agrees */
    ck_assert_int_eq(((const int64_t *)res[1].data)[0], 15);
    ck_assert_int_eq(res[2].s.i64, 16);
    args_free(tc.f, res);
    tc_close(&tc);
  }
}
END_TEST

/* A guarded load: only the taken side of ?: runs. */
START_TEST(test_select_guard) {
  ir_func *f = ir_func_new("guard");
  ir_var a = ir_param(f, "a", IR_F32, true, IR_IN);
  ir_var i = ir_param(f, "i", IR_I64, false, IR_IN);
  ir_var o = ir_param(f, "o", IR_F64, false, IR_OUT);
  TOP(ir_assign(f, o,
                ir_select(f, B(LT, R(i), ir_len(f, a)), LD(a, R(i)), ir_f64(f, -1))));
  tcase tc;
  tc_open(&tc, f);
  float data[3] = {1.25f, 2.5f, 3.75f};
  for (int k = 0; k < 5; k++) {
    ir_arg args[3] = {{.data = data, .len = 3}, {.s.i64 = k}}, r[3];
    tc_ok(&tc, args, r);
    ck_assert(r[2].s.f64 == (k < 3 ? data[k] : -1));
    args_free(tc.f, r);
  }
  tc_close(&tc);
}
END_TEST

/* ---- arrays -------------------------------------------------------------- */

START_TEST(test_arrays) {
  ir_func *f = ir_func_new("arrays");
  ir_var src = ir_param(f, "src", IR_F64, true, IR_IN);
  ir_var io = ir_param(f, "io", IR_I32, true, IR_INOUT);
  ir_var dst = ir_param(f, "dst", IR_F64, true, IR_OUT);
  ir_var cnt = ir_param(f, "cnt", IR_I64, true, IR_OUT);
  ir_var gone = ir_param(f, "gone", IR_U64, true, IR_OUT);
  ir_var flags = ir_param(f, "flags", IR_BOOL, true, IR_OUT);
  ir_var zs = ir_param(f, "zs", IR_C128, true, IR_OUT);
  ir_var nlen = ir_param(f, "nlen", IR_I64, false, IR_OUT);
  ir_var w = ir_local(f, "w", IR_F64, true), t = ir_local(f, "t", IR_I64, true);
  ir_var i = ir_local(f, "i", IR_I64, false);
  TOP(ir_alloc(f, dst, B(MUL, ir_len(f, src), K(2)), true));
  ir_stmt *l = TOP(ir_for(f, i, K(0), ir_len(f, src), NULL));
  ADD(ir_body(l), ir_store(f, dst, B(ADD, B(MUL, K(2), R(i)), K(1)), LD(src, R(i))));
  TOP(ir_alloc(f, w, K(3), false));
  TOP(ir_store(f, w, K(0), ir_f64(f, 1.5)));
  TOP(ir_alloc(f, w, B(ADD, ir_len(f, w), K(2)), true)); /* the old array is freed */
  TOP(ir_assign(f, nlen, B(MUL, ir_len(f, w), K(10))));
  TOP(ir_free(f, w));
  TOP(ir_free(f, w)); /* no-op */
  TOP(ir_assign(f, nlen, B(ADD, R(nlen), ir_len(f, w))));
  TOP(ir_alloc(f, cnt, K(4), false));
  TOP(ir_call(f, IR_FILL, (ir_var[]){cnt}, 1, (ir_expr *[]){K(0), K(4), K(7)}, 3));
  l = TOP(ir_for(f, i, K(0), ir_len(f, io), NULL));
  ADD(ir_body(l), ir_store(f, io, R(i), B(ADD, B(MUL, LD(io, R(i)), K(2)), K(1))));
  TOP(ir_alloc(f, t, K(0), false));
  TOP(ir_assign(f, nlen, B(ADD, R(nlen), ir_len(f, t))));
  TOP(ir_alloc(f, gone, K(5), true));
  TOP(ir_free(f, gone));
  TOP(ir_alloc(f, flags, K(3), true));
  TOP(ir_store(f, flags, K(1), ir_bool(f, true)));
  TOP(ir_alloc(f, zs, K(2), true));
  TOP(ir_store(f, zs, K(1), ir_cast(f, IR_C128, ir_len(f, src))));
  tcase tc;
  tc_open(&tc, f);
  double s[3] = {1, -2, 3.5};
  int32_t v[4] = {1, INT32_MAX, -5, 0};
  ir_arg args[8] = {{.data = s, .len = 3}, {.data = v, .len = 4}}, r[8];
  tc_ok(&tc, args, r);
  ck_assert_int_eq(r[2].len, 6);
  double *d = r[2].data;
  ck_assert(d[0] == 0 && d[1] == 1 && d[3] == -2 && d[5] == 3.5);
  ck_assert_int_eq(r[3].len, 4);
  ck_assert_int_eq(((int64_t *)r[3].data)[3], 7);
  int32_t *iov = r[1].data;
  ck_assert(iov[0] == 3 && iov[1] == -1 && iov[2] == -9 && iov[3] == 1);
  ck_assert(r[4].data == NULL && r[4].len == 0);
  ck_assert(((bool *)r[5].data)[1] && !((bool *)r[5].data)[0]);
  ck_assert_int_eq(r[7].s.i64, 50);
  args_free(f, r);
  /* empty input */
  args[0].len = 0;
  args[0].data = NULL;
  args[1].len = 0;
  args[1].data = NULL;
  tc_ok(&tc, args, NULL);
  tc_close(&tc);
}
END_TEST

/* ---- builtins ------------------------------------------------------------ */

START_TEST(test_builtins) {
  ir_func *f = ir_func_new("builtins");
  ir_var p64 = ir_param(f, "p64", IR_I64, true, IR_INOUT);
  ir_var p32 = ir_param(f, "p32", IR_I32, true, IR_INOUT);
  ir_var pf = ir_param(f, "pf", IR_F32, true, IR_INOUT);
  ir_var pd = ir_param(f, "pd", IR_F64, true, IR_INOUT);
  ir_var pc = ir_param(f, "pc", IR_C128, true, IR_INOUT);
  ir_var pu = ir_param(f, "pu", IR_U64, true, IR_INOUT);
  ir_var sh = ir_param(f, "sh", IR_I64, true, IR_OUT);
  ir_var cp = ir_param(f, "cp", IR_F64, true, IR_OUT);
  ir_var fl = ir_param(f, "fl", IR_BOOL, true, IR_OUT);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var arrs[] = {p64, p32, pf, pd, pc, pu};
  for (int k = 0; k < 6; k++)
    TOP(ir_call(f, IR_PREFIX_SUM, &arrs[k], 1, (ir_expr *[]){K(1), R(n)}, 2));
  TOP(ir_alloc(f, sh, K(6), false));
  TOP(ir_call(f, IR_FILL, (ir_var[]){sh}, 1, (ir_expr *[]){K(0), K(6), K(-3)}, 3));
  TOP(ir_store(f, sh, K(1), K(10)));
  TOP(ir_store(f, sh, K(2), K(20)));
  TOP(ir_call(f, IR_SHIFT, (ir_var[]){sh}, 1, (ir_expr *[]){K(1), K(4), K(99)}, 3));
  TOP(ir_call(f, IR_SHIFT, (ir_var[]){sh}, 1, (ir_expr *[]){K(5), K(5), K(55)}, 3));
  TOP(ir_alloc(f, cp, K(8), true));
  TOP(ir_call(f, IR_COPY, (ir_var[]){cp, pd}, 2, (ir_expr *[]){K(0), K(0), R(n)}, 3));
  TOP(ir_call(f, IR_COPY, (ir_var[]){cp, cp}, 2, (ir_expr *[]){K(1), K(0), K(5)}, 3));
  TOP(ir_call(f, IR_COPY, (ir_var[]){cp, cp}, 2, (ir_expr *[]){K(0), K(2), K(4)}, 3));
  TOP(ir_call(f, IR_COPY, (ir_var[]){cp, cp}, 2, (ir_expr *[]){K(8), K(3), K(0)}, 3));
  TOP(ir_alloc(f, fl, K(4), false));
  TOP(ir_call(f, IR_FILL, (ir_var[]){fl}, 1, (ir_expr *[]){K(0), K(4), ir_bool(f, false)},
              3));
  TOP(ir_call(f, IR_FILL, (ir_var[]){fl}, 1, (ir_expr *[]){K(2), K(4), K(1)}, 3));
  TOP(ir_call(f, IR_FILL, (ir_var[]){pf}, 1, (ir_expr *[]){K(3), K(2), ir_f64(f, 9)},
              3)); /* empty */
  tcase tc;
  tc_open(&tc, f);
  int64_t a64[6] = {5, INT64_MAX, 1, 2, 3, 4};
  int32_t a32[6] = {5, INT32_MAX, 1, 2, 3, 4};
  float af[6] = {0.1f, 0.2f, 0.3f, 1e8f, 1, -1e8f};
  double ad[6] = {0.1, 0.2, 0.3, 1e16, 1, -1e16};
  double ac[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  uint64_t au[6] = {1, UINT64_MAX, 3, 4, 5, 6};
  ir_arg args[10] = {{.data = a64, .len = 6}, {.data = a32, .len = 6},
                     {.data = af, .len = 6},  {.data = ad, .len = 6},
                     {.data = ac, .len = 6},  {.data = au, .len = 6}};
  args[9].s.i64 = 6;
  ir_arg r[10];
  tc_ok(&tc, args, r);
  int64_t *q = r[0].data;
  ck_assert(q[0] == 5 && q[1] == INT64_MAX && q[2] == INT64_MIN && q[5] == INT64_MIN + 9);
  ck_assert_int_eq(((int32_t *)r[1].data)[2], INT32_MIN);
  ck_assert(((double *)r[4].data)[4] == 8 && ((double *)r[4].data)[11] == 40);
  int64_t want_sh[6] = {-3, 99, 10, 20, -3, 55};
  for (int k = 0; k < 6; k++) ck_assert_int_eq(((int64_t *)r[6].data)[k], want_sh[k]);
  double *c = r[7].data;
  /* cp = pd[0..6) 0 0; copy(cp,1,cp,0,5); copy(cp,0,cp,2,4) */
  double e0[8];
  memcpy(e0, r[3].data, 6 * sizeof(double));
  e0[6] = e0[7] = 0;
  memmove(e0 + 1, e0, 5 * sizeof(double));
  memmove(e0, e0 + 2, 4 * sizeof(double));
  for (int k = 0; k < 8; k++) ck_assert(c[k] == e0[k]);
  bool *b = r[8].data;
  ck_assert(!b[0] && !b[1] && b[2] && b[3]);
  args_free(f, r);
  args[9].s.i64 = 0; /* empty ranges */
  tc_ok(&tc, args, NULL);
  tc_close(&tc);
}
END_TEST

/* move(dst, src): dst freed, then holding src's data and length; src
 * left empty; on the interpreter and compiled alike.  Refused: an array
 * the caller owns, two types, an array into itself. */
START_TEST(test_move) {
  ir_func *f = ir_func_new("mv");
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var a = ir_param(f, "a", IR_I32, true, IR_OUT);
  ir_var b = ir_param(f, "b", IR_I64, true, IR_OUT);
  ir_var tmp = ir_local(f, "tmp", IR_I32, true);
  ir_var i = ir_local(f, "i", IR_I64, false);
  TOP(ir_alloc(f, a, K(3), true)); /* freed by the move */
  TOP(ir_alloc(f, tmp, R(n), false));
  ir_stmt *l = TOP(ir_for(f, i, K(0), R(n), NULL));
  ADD(ir_body(l), ir_store(f, tmp, R(i), ir_cast(f, IR_I32, B(ADD, B(MUL, R(i), K(7)), K(1)))));
  TOP(ir_call(f, IR_MOVE, (ir_var[]){a, tmp}, 2, NULL, 0));
  TOP(ir_alloc(f, b, K(2), false));
  TOP(ir_store(f, b, K(0), ir_len(f, a)));
  TOP(ir_store(f, b, K(1), ir_len(f, tmp)));
  tcase tc;
  tc_open(&tc, f);
  for (int64_t m = 0; m < 6; m += 5) {
    ir_arg args[3], r[3];
    memset(args, 0, sizeof args);
    args[0].s.i64 = m;
    tc_ok(&tc, args, r);
    ck_assert_int_eq(r[1].len, m);
    for (int64_t k = 0; k < m; k++) ck_assert_int_eq(((int32_t *)r[1].data)[k], 7 * k + 1);
    ck_assert_int_eq(((int64_t *)r[2].data)[0], m);
    ck_assert_int_eq(((int64_t *)r[2].data)[1], 0);
    args_free(f, r);
  }
  spc_str o = {0};
  ck_assert_int_eq(ir_print(f, &o), SPC_OK);
  ck_assert_msg(strstr(o.s, "move(a, tmp)") != NULL, "%s", o.s);
  spc_str_free(&o);
  tc_close(&tc);
  static const char *const why[3] = {"move of src, a parameter the caller owns",
                                     "move from int32_t[] to int64_t[]", "move of w into itself"};
  for (int w = 0; w < 3; w++) {
    f = ir_func_new("mvbad");
    ir_var src = ir_param(f, "src", IR_I64, true, IR_IN);
    ir_var w64 = ir_local(f, "w", IR_I64, true), w32 = ir_local(f, "w32", IR_I32, true);
    TOP(ir_alloc(f, w64, K(1), true));
    TOP(ir_alloc(f, w32, K(1), true));
    ir_var pair[3][2] = {{w64, src}, {w64, w32}, {w64, w64}};
    TOP(ir_call(f, IR_MOVE, pair[w], 2, NULL, 0));
    spc_error e;
    spc_error_clear(&e);
    ck_assert_int_eq(ir_verify(f, &e), SPC_ERR_INTERNAL);
    ck_assert_msg(strstr(e.msg, why[w]) != NULL, "'%s' lacks '%s'", e.msg, why[w]);
    ir_func_free(&f);
  }
}
END_TEST

/* give: an array the caller hands over -- the function owns it (moves,
 * frees or writes it) and what it holds at the return goes back, on a
 * failure too; on the interpreter and compiled alike.  Mode 0 moves it
 * into an OUT array, 1 leaves it (its length read), 2 frees it, 3 writes
 * it and fails.  A scalar cannot be given. */
START_TEST(test_give) {
  ir_func *f = ir_func_new("gv");
  ir_var mode = ir_param(f, "mode", IR_I64, false, IR_IN);
  ir_var g = ir_param(f, "g", IR_I64, true, IR_GIVE);
  ir_var o = ir_param(f, "o", IR_I64, true, IR_OUT);
  ir_stmt *c0 = TOP(ir_if(f, B(EQ, R(mode), K(0)), NULL, NULL));
  ADD(ir_then(c0), ir_call(f, IR_MOVE, (ir_var[]){o, g}, 2, NULL, 0));
  ir_stmt *c1 = ADD(ir_else(f, c0), ir_if(f, B(EQ, R(mode), K(1)), NULL, NULL));
  ADD(ir_then(c1), ir_alloc(f, o, K(1), false));
  ADD(ir_then(c1), ir_store(f, o, K(0), ir_len(f, g)));
  ir_stmt *c2 = ADD(ir_else(f, c1), ir_if(f, B(EQ, R(mode), K(2)), NULL, NULL));
  ADD(ir_then(c2), ir_free(f, g));
  ADD(ir_else(f, c2), ir_store(f, g, K(0), K(42)));
  ADD(ir_else(f, c2), ir_fail(f, SPC_ERR_INPUT, "mode 3", NULL, 0));
  tcase tc;
  tc_open(&tc, f);
  for (int m = 0; m < 4; m++) {
    int64_t v[3] = {5, 6, 7};
    ir_arg args[3], r[3];
    memset(args, 0, sizeof args);
    args[0].s.i64 = m;
    args[1] = (ir_arg){.data = v, .len = 3};
    spc_error e;
    spc_status st = tc_run(&tc, args, r, &e); /* each side its own copy of v */
    ck_assert_int_eq(st, m == 3 ? SPC_ERR_INPUT : SPC_OK);
    if (m == 0) {
      ck_assert(r[1].data == NULL && r[1].len == 0);
      ck_assert(r[2].len == 3 && ((int64_t *)r[2].data)[2] == 7);
    } else if (m == 1) {
      ck_assert(r[1].len == 3 && ((int64_t *)r[1].data)[1] == 6);
      ck_assert(r[2].len == 1 && ((int64_t *)r[2].data)[0] == 3);
    } else if (m == 2) {
      ck_assert(r[1].data == NULL && r[1].len == 0);
    } else { /* failed: the array back, written; no OUT array */
      ck_assert(r[1].len == 3 && ((int64_t *)r[1].data)[0] == 42);
      ck_assert(r[2].data == NULL && r[2].len == 0);
    }
    args_free(f, r);
  }
  spc_str ps = {0};
  ck_assert_int_eq(ir_print(f, &ps), SPC_OK);
  ck_assert_msg(strstr(ps.s, "give g: i64[]") != NULL, "%s", ps.s);
  spc_str_free(&ps);
  tc_close(&tc);
  f = ir_func_new("gvbad");
  ck_assert_int_eq(ir_param(f, "x", IR_I64, false, IR_GIVE), -1);
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(ir_verify(f, &e), SPC_ERR_INTERNAL);
  ck_assert_msg(strstr(e.msg, "give is for arrays") != NULL, "%s", e.msg);
  ir_func_free(&f);
}
END_TEST

/* Reference: stable order of perm by keys (insertion sort). */
typedef struct keyset {
  const int64_t *k1;
  const double *k2;
  const int32_t *k3;
  int nkeys;
} keyset;

static int kcmp(const keyset *ks, int64_t x, int64_t y) {
  if (ks->k1[x] != ks->k1[y]) return ks->k1[x] < ks->k1[y] ? -1 : 1;
  if (ks->nkeys > 1 && ks->k2[x] != ks->k2[y]) return ks->k2[x] < ks->k2[y] ? -1 : 1;
  if (ks->nkeys > 2 && ks->k3[x] != ks->k3[y]) return ks->k3[x] < ks->k3[y] ? -1 : 1;
  return 0;
}

/* The expected result of sort_perm on a permutation that starts reversed:
 * positions sz-1 .. 0 inserted in turn (an insertion keeps equal keys in
 * the order they came), by cmp over ctx. */
static void ref_sorted(int64_t *want, int64_t sz, int (*cmp)(const void *, int64_t, int64_t),
                       const void *ctx) {
  int64_t m = 0;
  for (int64_t x = sz - 1; x >= 0; x--) {
    int64_t at = m;
    while (at > 0 && cmp(ctx, x, want[at - 1]) < 0) at--;
    memmove(want + at + 1, want + at, (size_t)(m - at) * sizeof *want);
    want[at] = x;
    m++;
  }
}
static int kcmp_v(const void *ks, int64_t x, int64_t y) { return kcmp(ks, x, y); }

START_TEST(test_sort_perm) {
  ir_func *f = ir_func_new("sortp");
  ir_var k1 = ir_param(f, "k1", IR_I64, true, IR_IN);
  ir_var k2 = ir_param(f, "k2", IR_F64, true, IR_IN);
  ir_var k3 = ir_param(f, "k3", IR_I32, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var p[3];
  p[0] = ir_param(f, "p1", IR_I64, true, IR_OUT);
  p[1] = ir_param(f, "p2", IR_I32, true, IR_OUT);
  p[2] = ir_param(f, "p3", IR_I64, true, IR_OUT);
  ir_var i = ir_local(f, "i", IR_I64, false);
  for (int k = 0; k < 3; k++) {
    TOP(ir_alloc(f, p[k], R(n), false));
    ir_stmt *l = TOP(ir_for(f, i, K(0), R(n), NULL)); /* perm starts reversed */
    ADD(ir_body(l), ir_store(f, p[k], R(i), B(SUB, B(SUB, R(n), K(1)), R(i))));
    ir_var arrs[4] = {p[k], k1, k2, k3};
    TOP(ir_call(f, IR_SORT_PERM, arrs, 2 + k, (ir_expr *[]){R(n)}, 1));
  }
  tcase tc;
  tc_open(&tc, f);
  enum { N = 300 };
  int64_t a1[N];
  double a2[N];
  int32_t a3[N];
  for (int64_t sz = 0; sz <= N; sz += sz < 5 ? 1 : 97) {
    for (int k = 0; k < N; k++) {
      a1[k] = (int64_t)(rnd() % 4);
      a2[k] = (double)(rnd() % 3) * 0.5;
      a3[k] = (int32_t)(rnd() % 3) - 1;
    }
    ir_arg args[7] = {{.data = a1, .len = N},
                      {.data = a2, .len = N},
                      {.data = a3, .len = N},
                      {.s.i64 = sz}},
           r[7];
    tc_ok(&tc, args, r);
    for (int nk = 1; nk <= 3; nk++) {
      keyset ks = {a1, a2, a3, nk};
      int64_t want[N];
      ref_sorted(want, sz, kcmp_v, &ks);
      for (int64_t x = 0; x < sz; x++) {
        int64_t got =
            nk == 2 ? ((int32_t *)r[3 + nk].data)[x] : ((int64_t *)r[3 + nk].data)[x];
        ck_assert_msg(got == want[x],
                      "%d keys, n %lld: position %lld: %lld, expected %lld", nk,
                      (long long)sz, (long long)x, (long long)got, (long long)want[x]);
      }
    }
    args_free(f, r);
  }
  tc_close(&tc);
}
END_TEST

/* spmv_lanes on int32 and int64 coordinates, ranges of 0 to 13 positions
 * (every remainder of four, the empty range that still writes y + 0.0):
 * the interpreter, the emitted C (GNU C's paired lanes) and the lanes
 * order written out here agree bit for bit; the interpreter refuses a
 * coordinate past x. */
static void expect_error(ir_func *f, ir_arg *args, spc_status code, const char *s1,
                         const char *s2);
static double lanes_ref(double y, const int64_t *c, const double *v, const double *x, int64_t bg,
                        int64_t en) {
  double l[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t q = bg;
  for (; q + 3 < en; q += 4)
    for (int k = 0; k < 4; k++) l[k] = l[k] + v[q + k] * x[c[q + k]];
  for (; q < en; q++) l[0] = l[0] + v[q] * x[c[q]];
  return y + ((l[0] + l[1]) + (l[2] + l[3]));
}

/* y[0] and y[1] = builtin b over [bg, en) of crd c32, then c64 */
static ir_func *lanes_func(const char *name, ir_builtin b) {
  ir_func *f = ir_func_new(name);
  ir_var y = ir_param(f, "y", IR_F64, true, IR_INOUT);
  ir_var c32 = ir_param(f, "c32", IR_I32, true, IR_IN);
  ir_var c64 = ir_param(f, "c64", IR_I64, true, IR_IN);
  ir_var v = ir_param(f, "v", IR_F64, true, IR_IN);
  ir_var x = ir_param(f, "x", IR_F64, true, IR_IN);
  ir_var bg = ir_param(f, "bg", IR_I64, false, IR_IN);
  ir_var en = ir_param(f, "en", IR_I64, false, IR_IN);
  TOP(ir_call(f, b, (ir_var[]){y, c32, v, x}, 4, (ir_expr *[]){K(0), R(bg), R(en)}, 3));
  TOP(ir_call(f, b, (ir_var[]){y, c64, v, x}, 4, (ir_expr *[]){K(1), R(bg), R(en)}, 3));
  return f;
}

/* lanes_func's routine run on [b, e) (y = ys) on both paths: r[0].data
 * holds the two results */
static void lanes_call(tcase *tc, double *ys, int32_t *a32, int64_t *a64, double *vals, int64_t n,
                       double *xs, int64_t nx, int64_t b, int64_t e, ir_arg *r) {
  ir_arg args[7] = {{.data = ys, .len = 2},  {.data = a32, .len = n}, {.data = a64, .len = n},
                    {.data = vals, .len = n}, {.data = xs, .len = nx}, {.s.i64 = b},
                    {.s.i64 = e}};
  tc_ok(tc, args, r);
}

START_TEST(test_spmv_lanes) {
  ir_func *f = lanes_func("lanes", IR_SPMV_LANES);
  tcase tc;
  tc_open(&tc, f);
  enum { N = 16, NX = 7 };
  int32_t a32[N];
  int64_t a64[N];
  double vals[N], xs[NX];
  long checked = 0;
  for (int round = 0; round < 40; round++) {
    for (int k = 0; k < N; k++) {
      a64[k] = (int64_t)(rnd() % NX);
      a32[k] = (int32_t)a64[k];
      vals[k] = ((double)(rnd() % 2001) - 1000.0) / 7.0 * (rnd() % 3 ? 1.0 : 1e-9);
    }
    for (int k = 0; k < NX; k++) xs[k] = ((double)(rnd() % 201) - 100.0) / 3.0;
    for (int64_t b = 0; b <= 2; b++)
      for (int64_t e = b; e <= b + 13 && e <= N; e++) {
        double ys[2] = {round % 2 ? -0.0 : 1.0 / 3.0, round % 3 ? 2.5 : -0.0};
        ir_arg r[7];
        lanes_call(&tc, ys, a32, a64, vals, N, xs, NX, b, e, r);
        const double *got = r[0].data;
        for (int k = 0; k < 2; k++) {
          double want = lanes_ref(ys[k], a64, vals, xs, b, e);
          ck_assert_msg(!memcmp(&got[k], &want, sizeof want), "[%lld, %lld) y[%d]: %a, expected %a",
                        (long long)b, (long long)e, k, got[k], want);
        }
        args_free(f, r);
        checked++;
      }
  }
  ck_assert_int_gt(checked, 1000);
  tc_close(&tc);
  /* a coordinate past x: refused, not read */
  f = lanes_func("lanes_oob", IR_SPMV_LANES);
  double ys[2] = {0, 0}, v3[3] = {1, 2, 3}, x2[2] = {1, 1};
  int32_t cbad[3] = {0, 1, 2};
  int64_t cok[3] = {0, 1, 1};
  ir_arg args[7] = {{.data = ys, .len = 2},  {.data = cbad, .len = 3}, {.data = cok, .len = 3},
                    {.data = v3, .len = 3}, {.data = x2, .len = 2},   {.s.i64 = 0},
                    {.s.i64 = 3}};
  expect_error(f, args, SPC_ERR_INTERNAL, "spmv_lanes: c32[2] = 2 out of bounds for x (length 2)", NULL);
  args[3].len = 2;
  expect_error(f, args, SPC_ERR_INTERNAL, "spmv_lanes: range [0, 0 + 3) out of bounds for v", NULL);
  ir_func_free(&f);
}
END_TEST

/* spmv_lanes_same: the lanes' sum (lanes_ref) where every product and
 * y's own value have sign bit 0, the range holds at most 4096 positions
 * and the sum is at most DBL_MAX / 4; else the products added to y left
 * to right.  Ranges of 0 to 13 positions and of 4095 to 4098, values of
 * one sign or mixed, -0.0 and NaN among them, y of either sign; the
 * interpreter and the emitted C agree with that rule bit for bit, and a
 * kept lanes' sum is within 5.7e-13 of the ordered one. */
static double ordered_ref(double y, const int64_t *c, const double *v, const double *x, int64_t bg,
                          int64_t en) {
  for (int64_t q = bg; q < en; q++) y = y + v[q] * x[c[q]];
  return y;
}

START_TEST(test_spmv_lanes_same) {
  ir_func *f = lanes_func("lanes_same", IR_SPMV_LANES_SAME);
  tcase tc;
  tc_open(&tc, f);
  enum { N = 4200, NX = 7 };
  int32_t *a32 = malloc(N * sizeof *a32);
  int64_t *a64 = malloc(N * sizeof *a64);
  double *vals = malloc(N * sizeof *vals), xs[NX];
  long kept = 0, ordered = 0;
  for (int round = 0; round < 48; round++) {
    int kind = round % 6; /* 0-2 nonnegative, 3 one negative value, 4 a -0.0, 5 a NaN */
    for (int k = 0; k < N; k++) {
      a64[k] = (int64_t)(rnd() % NX);
      a32[k] = (int32_t)a64[k];
      vals[k] = (double)(rnd() % 2001) / 7.0 * (rnd() % 3 ? 1.0 : 1e-9);
    }
    for (int k = 0; k < NX; k++) xs[k] = (double)(rnd() % 201) / 3.0 + (round % 7 == 6 ? 1e300 : 0.0);
    if (round % 12 == 1) /* both negative: products positive */
      for (int k = 0; k < N; k++) vals[k] = -vals[k];
    if (round % 12 == 1)
      for (int k = 0; k < NX; k++) xs[k] = -xs[k] - 1.0;
    int at = (int)(rnd() % 6);
    if (kind == 3) vals[at] = -vals[at] - 1.0;
    if (kind == 4) vals[at] = -0.0;
    if (kind == 5) vals[at] = NAN;
    static const int64_t lens[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 4095, 4096, 4097, 4098};
    for (int64_t b = 0; b <= 2; b++)
      for (int li = 0; li < 16; li++) {
        int64_t e = b + lens[li];
        double ys[2] = {round % 2 ? -0.0 : 1.0 / 3.0, round % 3 ? 2.5 : -1.5};
        ir_arg r[7];
        lanes_call(&tc, ys, a32, a64, vals, N, xs, NX, b, e, r);
        const double *got = r[0].data;
        for (int k = 0; k < 2; k++) {
          bool neg = signbit(ys[k]);
          for (int64_t q = b; q < e; q++) neg |= signbit(vals[q] * xs[a64[q]]) != 0;
          double lanes = lanes_ref(ys[k], a64, vals, xs, b, e), ord = ordered_ref(ys[k], a64, vals, xs, b, e);
          bool keep = !neg && lanes <= DBL_MAX / 4 && e - b <= 4096;
          double want = keep ? lanes : ord;
          ck_assert_msg(!memcmp(&got[k], &want, sizeof want), "round %d [%lld, %lld) y[%d]: %a, expected %a (%s)",
                        round, (long long)b, (long long)e, k, got[k], want, keep ? "lanes" : "ordered");
          if (keep) ck_assert_msg(fabs(lanes - ord) <= 5.7e-13 * fabs(ord), "%a vs %a", lanes, ord);
          kept += keep;
          ordered += !keep;
        }
        args_free(f, r);
      }
  }
  ck_assert_msg(kept > 600 && ordered > 600, "kept %ld, ordered %ld", kept, ordered);
  tc_close(&tc);
  free(a32);
  free(a64);
  free(vals);
  /* the loads' checks name the builtin */
  f = lanes_func("lanes_same_oob", IR_SPMV_LANES_SAME);
  double y1[2] = {0, 0}, v3[3] = {1, 2, 3}, x2[2] = {1, 1};
  int32_t cbad[3] = {0, 1, 2};
  int64_t cok[3] = {0, 1, 1};
  ir_arg args[7] = {{.data = y1, .len = 2},  {.data = cbad, .len = 3}, {.data = cok, .len = 3},
                    {.data = v3, .len = 3}, {.data = x2, .len = 2},   {.s.i64 = 0},
                    {.s.i64 = 3}};
  expect_error(f, args, SPC_ERR_INTERNAL, "spmv_lanes_same: c32[2] = 2 out of bounds for x (length 2)", NULL);
  ir_func_free(&f);
}
END_TEST

typedef struct wide_keys {
  const int64_t *k1, *k2;
  const int32_t *k3;
} wide_keys;
static int wcmp(const void *p, int64_t x, int64_t y) {
  const wide_keys *w = p;
  if (w->k1[x] != w->k1[y]) return w->k1[x] < w->k1[y] ? -1 : 1;
  if (w->k2[x] != w->k2[y]) return w->k2[x] < w->k2[y] ? -1 : 1;
  return w->k3[x] < w->k3[y] ? -1 : w->k3[x] > w->k3[y];
}

/* Integer keys whose ranges need more than 64 bits together: the runtime's
 * two radix sorts (trailing keys, then leading), or past 128 bits the merge
 * sort; the same stable order as comparisons, on the interpreter and the
 * emitted C. */
START_TEST(test_sort_perm_wide) {
  ir_func *f = ir_func_new("sortw");
  ir_var k1 = ir_param(f, "k1", IR_I64, true, IR_IN);
  ir_var k2 = ir_param(f, "k2", IR_I64, true, IR_IN);
  ir_var k3 = ir_param(f, "k3", IR_I32, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var p = ir_param(f, "p", IR_I64, true, IR_OUT);
  ir_var i = ir_local(f, "i", IR_I64, false);
  TOP(ir_alloc(f, p, R(n), false));
  ir_stmt *l = TOP(ir_for(f, i, K(0), R(n), NULL)); /* perm starts reversed */
  ADD(ir_body(l), ir_store(f, p, R(i), B(SUB, B(SUB, R(n), K(1)), R(i))));
  ir_var arrs[4] = {p, k1, k2, k3};
  TOP(ir_call(f, IR_SORT_PERM, arrs, 4, (ir_expr *[]){R(n)}, 1));
  tcase tc;
  tc_open(&tc, f);
  enum { N = 3000 };
  static int64_t a1[N], a2[N], want[N];
  static int32_t a3[N];
  /* bits of the three ranges: 50 + 41 + 21 (two radix sorts: 50 | 62), and
   * 62 + 62 + 31 (past 128: merges) */
  const int sh[2][3] = {{48, 40, 19}, {60, 60, 29}};
  for (int w = 0; w < 2; w++)
    for (int64_t sz = 0; sz <= N; sz += sz < 3 ? 1 : 997) {
      for (int k = 0; k < N; k++) { /* few distinct values: ties everywhere */
        a1[k] = (int64_t)(rnd() % 4) << sh[w][0];
        a2[k] = ((int64_t)(rnd() % 3) - 1) * ((int64_t)1 << sh[w][1]);
        a3[k] = (int32_t)(((int64_t)(rnd() % 3) - 1) * ((int64_t)1 << sh[w][2]));
      }
      ir_arg args[5] = {{.data = a1, .len = N}, {.data = a2, .len = N}, {.data = a3, .len = N},
                        {.s.i64 = sz}},
             r[5];
      tc_ok(&tc, args, r);
      const wide_keys wk = {a1, a2, a3};
      ref_sorted(want, sz, wcmp, &wk);
      for (int64_t x = 0; x < sz; x++)
        ck_assert_msg(((int64_t *)r[4].data)[x] == want[x], "shifts %d, n %lld: position %lld",
                      w, (long long)sz, (long long)x);
      args_free(f, r);
    }
  tc_close(&tc);
}
END_TEST

/* ---- FAIL ---------------------------------------------------------------- */

START_TEST(test_fail) {
  ir_func *f = ir_func_new("failer");
  ir_var x = ir_param(f, "x", IR_I64, false, IR_IN);
  ir_var o = ir_param(f, "o", IR_F64, true, IR_OUT);
  ir_var s = ir_param(f, "s", IR_I64, false, IR_OUT);
  ir_var io = ir_param(f, "io", IR_I32, false, IR_INOUT);
  ir_var w = ir_local(f, "w", IR_I64, true);
  TOP(ir_alloc(f, o, K(10), true));
  TOP(ir_alloc(f, w, K(5), true));
  TOP(ir_assign(f, s, K(1)));
  TOP(ir_assign(f, io, ir_const(f, IR_I32, (ir_val){.i32 = 77})));
  ir_stmt *c = TOP(ir_if(f, B(GT, R(x), K(3)), NULL, NULL));
  ADD(ir_then(c), ir_fail(f, SPC_ERR_INPUT, "x = %lld is above %lld, 100%% sure",
                          (ir_expr *[]){R(x), K(3)}, 2));
  c = TOP(ir_if(f, B(LT, R(x), K(0)), NULL, NULL));
  ADD(ir_then(c), ir_fail(f, SPC_ERR_SPEC, "negative", NULL, 0));
  TOP(ir_assign(f, s, K(2)));
  tcase tc;
  tc_open(&tc, f);
  ir_arg args[4] = {{.s.i64 = 5}, {0}, {.s.i64 = 0}, {.s.i32 = 1}}, r[4];
  spc_error e;
  ck_assert_int_eq(tc_run(&tc, args, r, &e), SPC_ERR_INPUT);
  ck_assert_str_eq(e.msg, "x = 5 is above 3, 100% sure");
  ck_assert(r[1].data == NULL && r[1].len == 0); /* OUT arrays freed (make asan) */
  ck_assert_int_eq(r[2].s.i64, 0);               /* nothing written back */
  ck_assert_int_eq(r[3].s.i32, 1);
  args[0].s.i64 = -1;
  ck_assert_int_eq(tc_run(&tc, args, r, &e), SPC_ERR_SPEC);
  ck_assert_str_eq(e.msg, "negative");
  args[0].s.i64 = 2;
  tc_ok(&tc, args, r);
  ck_assert(r[1].len == 10 && r[2].s.i64 == 2 && r[3].s.i32 == 77);
  args_free(f, r);
  tc_close(&tc);
}
END_TEST

/* ---- the interpreter's run-time errors ----------------------------------- */

/* Run f (interpreter only) and expect code with a message containing
 * each of the strings; OUT arrays come back NULL. */
static void expect_error(ir_func *f, ir_arg *args, spc_status code, const char *s1,
                         const char *s2) {
  spc_error e;
  spc_error_clear(&e);
  spc_status st = ir_run(f, args, &e);
  ck_assert_msg(st == code, "%s: status %d, expected %d (%s)", ir_func_name(f), st, code,
                e.msg);
  ck_assert_msg(strstr(e.msg, s1), "'%s' lacks '%s'", e.msg, s1);
  if (s2) ck_assert_msg(strstr(e.msg, s2), "'%s' lacks '%s'", e.msg, s2);
  for (int k = 0; k < ir_nparams(f); k++)
    if (param(f, k)->array && param(f, k)->dir == IR_OUT)
      ck_assert(args[k].data == NULL && args[k].len == 0);
}

START_TEST(test_run_errors) {
  /* out-of-bounds load, store; negative index */
  ir_func *f = ir_func_new("oob");
  ir_var a = ir_param(f, "a", IR_F64, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var j = ir_param(f, "j", IR_I64, false, IR_IN);
  ir_var o = ir_param(f, "o", IR_F64, true, IR_OUT);
  ir_var s = ir_param(f, "s", IR_F64, false, IR_OUT);
  ir_var i = ir_local(f, "i", IR_I64, false), w = ir_local(f, "w", IR_I32, true);
  TOP(ir_alloc(f, o, K(2), true));
  TOP(ir_alloc(f, w, K(2), true));
  ir_stmt *l = TOP(ir_for(f, i, K(0), R(n), NULL));
  ADD(ir_body(l), ir_assign(f, s, B(ADD, R(s), LD(a, R(i)))));
  ADD(ir_body(l), ir_store(f, o, B(SUB, R(j), K(1)), R(s)));
  double d[3] = {1, 2, 3};
  ir_arg args[5] = {{.data = d, .len = 3}, {.s.i64 = 4}, {.s.i64 = 1}};
  expect_error(f, args, SPC_ERR_INTERNAL,
               "function oob: index 3 out of bounds for a (length 3)",
               "in `s = s + a[i]`");
  args[1].s.i64 = 1;
  args[2].s.i64 = 0;
  expect_error(f, args, SPC_ERR_INTERNAL, "index -1 out of bounds for o (length 2)",
               "`o[j - 1] = s`");
  args[1].s.i64 = 3;
  args[0].data = NULL; /* the caller's mistake */
  expect_error(f, args, SPC_ERR_ARG, "array argument a", NULL);
  ir_func_free(&f);

  /* division by zero, shift counts, negative length */
  const ir_ty ity[] = {IR_I32, IR_I64, IR_U64};
  for (int t = 0; t < 3; t++)
    for (int op = 0; op < 4; op++) {
      f = ir_func_new("ierr");
      ir_var x = ir_param(f, "x", ity[t], false, IR_IN);
      ir_var y = ir_param(f, "y", ity[t], false, IR_IN);
      ir_var r = ir_param(f, "r", ity[t], false, IR_OUT);
      ir_op ops[] = {IR_DIV, IR_REM, IR_SHL, IR_SHR};
      TOP(ir_assign(f, r, ir_bin(f, ops[op], R(x), R(y))));
      ir_arg g[3];
      memset(g, 0, sizeof g);
      g[0].s.i64 = 5;
      if (op < 2) {
        expect_error(f, g, SPC_ERR_INTERNAL, "integer division by zero", "r = x ");
      } else {
        g[1].s.i64 = ity[t] == IR_I32 ? 32 : 64;
        if (ity[t] == IR_I32) g[1].s.i32 = 32;
        expect_error(f, g, SPC_ERR_INTERNAL, "shift count", "out of range");
        if (ity[t] != IR_U64) {
          memset(&g[1].s, 0, sizeof g[1].s);
          if (ity[t] == IR_I32)
            g[1].s.i32 = -1;
          else
            g[1].s.i64 = -1;
          expect_error(f, g, SPC_ERR_INTERNAL, "shift count -1", NULL);
        }
      }
      ir_func_free(&f);
    }
  f = ir_func_new("neg");
  ir_var m = ir_param(f, "m", IR_I64, false, IR_IN);
  ir_var out = ir_param(f, "out", IR_I64, true, IR_OUT);
  ir_var perm = ir_local(f, "perm", IR_I64, true);
  TOP(ir_alloc(f, out, K(4), true));
  TOP(ir_alloc(f, perm, K(3), true));
  ir_stmt *c = TOP(ir_if(f, B(EQ, R(m), K(0)), NULL, NULL));
  ADD(ir_then(c), ir_alloc(f, out, K(-2), false));
  c = TOP(ir_if(f, B(EQ, R(m), K(1)), NULL, NULL));
  ADD(ir_then(c),
      ir_call(f, IR_FILL, (ir_var[]){out}, 1, (ir_expr *[]){K(2), K(5), K(0)}, 3));
  c = TOP(ir_if(f, B(EQ, R(m), K(2)), NULL, NULL));
  ADD(ir_then(c),
      ir_call(f, IR_COPY, (ir_var[]){out, perm}, 2, (ir_expr *[]){K(0), K(1), K(3)}, 3));
  c = TOP(ir_if(f, B(EQ, R(m), K(3)), NULL, NULL));
  ADD(ir_then(c),
      ir_call(f, IR_SHIFT, (ir_var[]){out}, 1, (ir_expr *[]){K(0), K(4), K(0)}, 3));
  c = TOP(ir_if(f, B(EQ, R(m), K(4)), NULL, NULL));
  ADD(ir_then(c), ir_store(f, perm, K(1), K(7)));
  ADD(ir_then(c),
      ir_call(f, IR_SORT_PERM, (ir_var[]){perm, out}, 2, (ir_expr *[]){K(3)}, 1));
  c = TOP(ir_if(f, B(EQ, R(m), K(5)), NULL, NULL));
  ADD(ir_then(c),
      ir_call(f, IR_PREFIX_SUM, (ir_var[]){out}, 1, (ir_expr *[]){K(-1), K(2)}, 2));
  const char *want[] = {"negative length -2 for out",
                        "range [2, 5) out of bounds for out",
                        "copy: source range [1, 1 + 3)",
                        "shift range [0, 4] out of bounds",
                        "sort_perm: perm[1] = 7 out of bounds for key out (length 4)",
                        "range [-1, 2) out of bounds"};
  for (int k = 0; k < 6; k++) {
    ir_arg g[2] = {{.s.i64 = k}};
    expect_error(f, g, SPC_ERR_INTERNAL, want[k], "function neg");
  }
  ir_func_free(&f);
}
END_TEST

/* ---- ir_verify ----------------------------------------------------------- */

/* A well-formed function whose nodes the cases below break one at a time. */
typedef struct vfix {
  ir_func *f;
  ir_var in, out, sc, loc, fl;
  ir_stmt *assign, *store, *loop, *alloc, *call, *fail;
  ir_expr *load;
} vfix;

static void vfix_build(vfix *x) {
  ir_func *f = x->f = ir_func_new("vf");
  x->in = ir_param(f, "src", IR_F64, true, IR_IN);
  x->out = ir_param(f, "dst", IR_F64, true, IR_OUT);
  x->sc = ir_param(f, "n", IR_I64, false, IR_IN);
  x->loc = ir_local(f, "i", IR_I64, false);
  x->fl = ir_local(f, "t", IR_F64, false);
  x->alloc = TOP(ir_alloc(f, x->out, R(x->sc), true));
  x->loop = TOP(ir_for(f, x->loc, K(0), R(x->sc), NULL));
  x->load = LD(x->in, R(x->loc));
  x->assign = ADD(ir_body(x->loop), ir_assign(f, x->fl, B(MUL, x->load, ir_f64(f, 2))));
  x->store = ADD(ir_body(x->loop), ir_store(f, x->out, R(x->loc), R(x->fl)));
  x->call = TOP(ir_call(f, IR_FILL, (ir_var[]){x->out}, 1,
                        (ir_expr *[]){K(0), K(1), ir_f64(f, 0)}, 3));
  x->fail = TOP(ir_fail(f, SPC_ERR_INPUT, "bad %lld", (ir_expr *[]){R(x->sc)}, 1));
  spc_error e;
  tu_assert_ok(ir_verify(f, &e), &e);
}

static void expect_reject(vfix *x, const char *what, const char *s1, const char *s2) {
  spc_error e;
  spc_error_clear(&e);
  spc_status st = ir_verify(x->f, &e);
  ck_assert_msg(st == SPC_ERR_INTERNAL, "%s: accepted", what);
  ck_assert_msg(strstr(e.msg, "function vf"), "%s: '%s' names no function", what, e.msg);
  ck_assert_msg(strstr(e.msg, s1), "%s: '%s' lacks '%s'", what, e.msg, s1);
  if (s2) ck_assert_msg(strstr(e.msg, s2), "%s: '%s' lacks '%s'", what, e.msg, s2);
  ck_assert_int_ne(ir_run(x->f, NULL, &e), SPC_OK);
  spc_str s = {0};
  ck_assert_int_ne(ir_emit_c(x->f, NULL, &s, &e), SPC_OK);
  spc_str_free(&s);
  ir_func_free(&x->f);
}

START_TEST(test_verify_rejects) {
  vfix x;
  ir_func *f;
  vfix_build(&x);
  x.assign->a = ir_int(x.f, 3);
  expect_reject(&x, "assign type", "statement `t = 3`",
                "has type int64_t, expected double");
  vfix_build(&x);
  x.store->var = x.in;
  expect_reject(&x, "store to IN", "writes to src, an IN array", "src[i] = t");
  vfix_build(&x);
  x.load->var = x.sc;
  expect_reject(&x, "load from scalar", "n is a scalar, expected an array", NULL);
  vfix_build(&x);
  x.loop->var = x.fl;
  expect_reject(&x, "float loop variable", "loop variable t has type double",
                "for t in 0 .. n");
  vfix_build(&x);
  f = x.f;
  TOP(ir_break(f));
  expect_reject(&x, "break outside loop", "break outside a loop", NULL);
  vfix_build(&x);
  x.fail->msg = "bad %s";
  expect_reject(&x, "fail format", "only conversions allowed are %lld", NULL);
  vfix_build(&x);
  x.fail->code = SPC_OK;
  expect_reject(&x, "fail code", "status 0 is not an error", NULL);
  vfix_build(&x);
  x.store->b->var = 99;
  expect_reject(&x, "variable index", "variable 99 does not exist", NULL);
  vfix_build(&x);
  x.call->nargs = 2;
  expect_reject(&x, "builtin arity", "fill with 1 arrays and 2 scalars", NULL);
  vfix_build(&x);
  x.alloc->var = x.in;
  expect_reject(&x, "alloc of IN", "a parameter the caller owns",
                "src = new f64[n] zeroed");
  vfix_build(&x);
  x.assign->a->ty = IR_I64; /* a product of doubles typed as an integer */
  expect_reject(&x, "node type", "has type double, expected int64_t", NULL);
  vfix_build(&x);
  x.assign->a->op = IR_BAND;
  x.assign->a->ty = IR_F64;
  expect_reject(&x, "bitwise on double", "operator & on double", NULL);
  vfix_build(&x);
  x.assign->a->b = NULL;
  expect_reject(&x, "missing operand", "the right operand is missing",
                "t = src[i] * <null>");
  vfix_build(&x);
  x.assign->a->kind = (ir_expr_kind)42;
  expect_reject(&x, "bad kind", "invalid kind 42", NULL);
  vfix_build(&x);
  x.call->vars[0] = x.sc;
  expect_reject(&x, "builtin on scalar", "n is a scalar", NULL);
  vfix_build(&x);
  { /* expressions nested past the limit */
    f = x.f;
    ir_expr *deep = ir_f64(f, 1);
    for (int k = 0; k < 600; k++) deep = B(ADD, deep, ir_f64(f, 1));
    ADD(ir_body(x.loop), ir_assign(f, x.fl, deep));
  }
  expect_reject(&x, "depth", "nested deeper than", NULL);
  vfix_build(&x);
  ((ir_var_info *)ir_var_get(x.f, x.fl))->name = "i";
  expect_reject(&x, "duplicate name", "variable i declared twice", NULL);
  vfix_build(&x);
  ((ir_var_info *)ir_var_get(x.f, x.fl))->name = "2x";
  expect_reject(&x, "bad name", "'2x' is not a C identifier", NULL);

  /* builder misuse: recorded, the function is broken, verify reports it */
  vfix_build(&x);
  f = x.f;
  ir_expr *bad = B(SHL, ir_f64(f, 1), K(2));
  ck_assert_ptr_nonnull(bad); /* a placeholder */
  ck_assert(!ir_func_ok(f));
  TOP(ir_assign(f, x.fl, bad)); /* later calls are harmless */
  expect_reject(&x, "shift of double", "operator << does not apply to double and int64_t",
                NULL);
  vfix_build(&x);
  f = x.f;
  ir_local(f, "n", IR_I32, false);
  expect_reject(&x, "redeclared", "variable 'n' declared twice", NULL);
  vfix_build(&x);
  f = x.f;
  ir_call(f, IR_SORT_PERM, (ir_var[]){x.out}, 1, (ir_expr *[]){K(1)}, 1);
  expect_reject(&x, "sort_perm keys", "sort_perm: 1 arrays and 1 scalars", NULL);
  vfix_build(&x);
  f = x.f;
  ir_store(f, x.in, K(0), ir_f64(f, 1));
  expect_reject(&x, "store to IN (builder)", "src is an IN array", NULL);
  vfix_build(&x);
  f = x.f;
  ir_fail(f, SPC_ERR_INPUT, "%d", NULL, 0);
  expect_reject(&x, "fail format (builder)", "%lld", NULL);
  vfix_build(&x);
  f = x.f;
  ir_load(f, x.in, ir_f64(f, 0.5));
  expect_reject(&x, "float index", "expected an integer", NULL);
}
END_TEST

/* ---- the listing --------------------------------------------------------- */

START_TEST(test_print) {
  ir_func *f = ir_func_new("csr_count");
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var row = ir_param(f, "row", IR_I32, true, IR_IN);
  ir_var pos = ir_param(f, "pos", IR_I64, true, IR_OUT);
  ir_var x = ir_param(f, "x", IR_F32, false, IR_INOUT);
  ir_var i = ir_local(f, "i", IR_I64, false);
  ir_var u = ir_local(f, "u", IR_U64, false);
  TOP(ir_alloc(f, pos, B(ADD, R(n), K(1)), true));
  ir_stmt *l = TOP(ir_for(f, i, K(0), ir_len(f, row), NULL));
  ir_expr *at = B(ADD, LD(row, R(i)), K(1));
  ADD(ir_body(l), ir_store(f, pos, at, B(ADD, LD(pos, at), K(1))));
  TOP(ir_call(f, IR_PREFIX_SUM, (ir_var[]){pos}, 1,
              (ir_expr *[]){K(0), B(ADD, R(n), K(1))}, 2));
  ir_stmt *c = TOP(ir_if(f, B(LT, R(n), K(0)), NULL, NULL));
  ADD(ir_then(c), ir_fail(f, SPC_ERR_INPUT, "bad n %lld", (ir_expr *[]){R(n)}, 1));
  ir_stmt *c2 = ADD(ir_else(f, c), ir_if(f, B(EQ, R(n), K(0)), NULL, NULL));
  ADD(ir_then(c2), ir_store(f, pos, K(0), K(0)));
  ADD(ir_else(f, c2),
      ir_assign(f, x,
                B(MUL, B(ADD, R(x), ir_const(f, IR_F32, (ir_val){.f32 = 1.5f})),
                  U(NEG, R(x)))));
  l = TOP(ir_while(f, B(LAND, B(GT, R(i), K(0)), U(NOT, B(EQ, R(i), K(3)))), NULL));
  ADD(ir_body(l), ir_assign(f, i, B(SUB, R(i), B(SUB, K(1), R(n)))));
  ADD(ir_body(l), ir_assign(f, u,
                            ir_select(f, B(GE, R(x), ir_f64(f, 0)),
                                      ir_const(f, IR_U64, (ir_val){.u64 = 5}),
                                      U(ABS, B(MIN, R(i), R(n))))));
  ADD(ir_body(l), ir_break(f));
  spc_str s = {0};
  ck_assert_int_eq(ir_print(f, &s), SPC_OK);
  const char *want =
      "func csr_count(in n: i64, in row: i32[], out pos: i64[], inout x: f32) {\n"
      "  var i: i64\n"
      "  var u: u64\n"
      "  pos = new i64[n + 1] zeroed\n"
      "  for i in 0 .. len(row) {\n"
      "    pos[i64(row[i]) + 1] = pos[i64(row[i]) + 1] + 1\n"
      "  }\n"
      "  prefix_sum(pos, 0, n + 1)\n"
      "  if n < 0 {\n"
      "    fail(-1, \"bad n %lld\", n)\n"
      "  } else if n == 0 {\n"
      "    pos[0] = 0\n"
      "  } else {\n"
      "    x = (x + 1.5f) * -x\n"
      "  }\n"
      "  while i > 0 && !(i == 3) {\n"
      "    i = i - (1 - n)\n"
      "    u = f64(x) >= 0.0 ? 5u : u64(abs(min(i, n)))\n"
      "    break\n"
      "  }\n"
      "}\n";
  ck_assert_str_eq(s.s, want);
  spc_str_free(&s);
  ir_func_free(&f);
}
END_TEST

/* ---- allocation failures ------------------------------------------------- */

/* A function that allocates in every way: arena, locals, OUT arrays,
 * sort scratch; and its run on a few values. */
static ir_func *build_walk(void) {
  ir_func *f = ir_func_new("walk");
  ir_var keys = ir_param(f, "keys", IR_F64, true, IR_IN);
  ir_var perm = ir_param(f, "perm", IR_I64, true, IR_OUT);
  ir_var tot = ir_param(f, "tot", IR_F64, false, IR_OUT);
  ir_var w = ir_local(f, "w", IR_F64, true), i = ir_local(f, "i", IR_I64, false);
  TOP(ir_alloc(f, perm, ir_len(f, keys), false));
  TOP(ir_alloc(f, w, ir_len(f, keys), true));
  ir_stmt *l = TOP(ir_for(f, i, K(0), ir_len(f, keys), NULL));
  ADD(ir_body(l), ir_store(f, perm, R(i), R(i)));
  ADD(ir_body(l), ir_store(f, w, R(i), B(MUL, LD(keys, R(i)), LD(keys, R(i)))));
  ADD(ir_body(l), ir_assign(f, tot, B(ADD, R(tot), LD(w, R(i)))));
  TOP(ir_call(f, IR_SORT_PERM, (ir_var[]){perm, keys}, 2, (ir_expr *[]){ir_len(f, keys)},
              1));
  TOP(ir_free(f, w));
  TOP(ir_alloc(f, w, K(3), false));
  for (int k = 0; k < 200; k++) /* past one arena chunk */
    TOP(ir_assign(f, tot, B(ADD, R(tot), ir_f64(f, 0))));
  return f;
}

START_TEST(test_alloc_walk) {
  double keys[5] = {3, 1, 2, 1, 0};
  spc_error e;
  int64_t before = spc_alloc_count();
  ir_func *f = build_walk();
  ir_arg args[3] = {{.data = keys, .len = 5}};
  tu_assert_ok(ir_run(f, args, &e), &e);
  int64_t n = spc_alloc_count() - before;
  ck_assert_int_ge(n, 6);
  free(args[1].data);
  ir_func_free(&f);
  for (int64_t k = 1; k <= n + 1; k++) {
    spc_alloc_fail_at(k);
    f = build_walk();
    spc_status st = SPC_ERR_NOMEM;
    memset(args + 1, 0, 2 * sizeof *args);
    args[1].data = (void *)&st; /* must come back NULL */
    if (f) st = ir_run(f, args, &e);
    spc_alloc_fail_at(0);
    if (k <= n) {
      ck_assert_msg(st == SPC_ERR_NOMEM, "failing allocation %lld of %lld: status %d",
                    (long long)k, (long long)n, st);
      ck_assert(!f || ir_nparams(f) < 2 || args[1].data == NULL);
    } else {
      tu_assert_ok(st, &e);
      ck_assert(((int64_t *)args[1].data)[0] == 4 && args[2].s.f64 == 15);
      free(args[1].data);
    }
    ir_func_free(&f);
  }
  /* the printers: every failure is reported, nothing leaks */
  f = build_walk();
  for (int64_t k = 1;; k++) {
    spc_str s = {0};
    spc_alloc_fail_at(k);
    spc_status st = ir_emit_c(f, &(ir_emit_opts){.prelude = true, .entry = true}, &s, &e);
    spc_status st2 = st == SPC_OK ? ir_print(f, &s) : SPC_ERR_NOMEM;
    spc_alloc_fail_at(0);
    spc_str_free(&s);
    if (st == SPC_OK && st2 == SPC_OK) break;
    ck_assert_int_eq(st == SPC_OK ? st2 : st, SPC_ERR_NOMEM);
    ck_assert_int_lt(k, 1000);
  }
  ir_func_free(&f);
}
END_TEST

/* ---- the emitted C ------------------------------------------------------- */

static ir_func *build_sum(const char *name) {
  ir_func *f = ir_func_new(name);
  ir_var a = ir_param(f, "a", IR_F64, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var s = ir_param(f, "s", IR_F64, false, IR_OUT);
  ir_var i = ir_local(f, "i", IR_I64, false);
  ir_stmt *l = TOP(ir_for(f, i, K(0), R(n), NULL));
  ADD(ir_body(l), ir_assign(f, s, B(ADD, R(s), LD(a, R(i)))));
  return f;
}

START_TEST(test_emit_text) {
  /* readable: names, loops, the bound saved when the body may change it */
  ir_func *f = build_sum("sum");
  char *src = emit(f, NULL);
  ck_assert_msg(
      strstr(src, "int sum(const double *a, int64_t a_len, int64_t n, double *s_out, "
                  "char *err,\n"),
      "%s", src);
  ck_assert_msg(strstr(src, "  for (i = 0; i < n; i++) {\n    s = s + a[i];\n  }\n"),
                "%s", src);
  ck_assert_msg(!strstr(src, "#include"), "no prelude asked: %s", src);
  free(src);
  ir_func_free(&f);
  f = ir_func_new("csr");
  ir_var pos = ir_param(f, "pos", IR_I64, true, IR_IN);
  ir_var crd = ir_param(f, "crd", IR_I32, true, IR_INOUT);
  ir_var i = ir_local(f, "i", IR_I64, false), k = ir_local(f, "k", IR_I64, false);
  ir_var kw = ir_local(f, "int", IR_I64, false),
         st = ir_local(f, "status", IR_I32, false);
  ir_stmt *l = TOP(ir_for(f, i, K(0), B(SUB, ir_len(f, pos), K(1)), NULL));
  ir_stmt *l2 =
      ADD(ir_body(l), ir_for(f, k, LD(pos, R(i)), LD(pos, B(ADD, R(i), K(1))), NULL));
  ADD(ir_body(l2),
      ir_store(f, crd, R(k), B(ADD, LD(crd, R(k)), ir_cast(f, IR_I32, R(kw)))));
  ADD(ir_body(l2), ir_assign(f, st, ir_cast(f, IR_I32, R(kw))));
  src = emit(f, &(ir_emit_opts){.static_fn = true, .comment = "C = A' */ x"});
  ck_assert_msg(strstr(src, "/* C = A' * / x */\nSPC_GEN_BEGIN\nstatic int csr("), "%s",
                src);
  ck_assert_msg(strstr(src, "k_hi = pos[i + 1];\n"), "%s", src);
  ck_assert_msg(strstr(src, "for (k = pos[i]; k < k_hi; k++) {"), "%s", src);
  ck_assert_msg(strstr(src, "for (i = 0; i < i_hi; i++)") ||
                    strstr(src, "i_hi = spc_sub_i64(pos_len, 1);"),
                "%s", src);
  ck_assert_msg(strstr(src, "int64_t int_ = 0;") && strstr(src, "int32_t status = 0;") &&
                    strstr(src, "int status_ = 0;"),
                "%s", src);
  free(src);
  { /* a function named like a C keyword cannot be emitted */
    ir_func *g = ir_func_new("int");
    spc_str t = {0};
    spc_error e;
    ck_assert_int_eq(ir_emit_c(g, NULL, &t, &e), SPC_ERR_ARG);
    spc_str_free(&t);
    ir_func_free(&g);
  }
  /* compiles: two functions in one file, the second without prelude */
  if (have_cc()) {
    ir_func *g = build_sum("sum2");
    char *s1 = emit(g, &(ir_emit_opts){.prelude = true});
    char *s2 = emit(f, &(ir_emit_opts){.entry = true});
    size_t n1 = strlen(s1), n2 = strlen(s2);
    char *both = malloc(n1 + n2 + 1);
    memcpy(both, s1, n1);
    memcpy(both + n1, s2, n2 + 1);
    char *dir;
    void *so = compile_so(both, &dir);
    /* the documented signature, called directly */
    int (*fn)(const double *, int64_t, int64_t, double *, char *, size_t);
    *(void **)&fn = dlsym(so, "sum2");
    ck_assert_ptr_nonnull(fn);
    double a[4] = {1, 2, 3, 4.5}, s = -1;
    ck_assert_int_eq(fn(a, 4, 3, &s, NULL, 0), 0);
    ck_assert(s == 6);
    ck_assert_ptr_nonnull(dlsym(so, "csr_entry"));
    dlclose(so);
    tu_rmtree(dir);
    free(dir);
    free(both);
    free(s1);
    free(s2);
    ir_func_free(&g);
  }
  ir_func_free(&f);
}
END_TEST

/* The runtime embedded in generated C is ir/ir_rt.h verbatim. */
START_TEST(test_runtime_text) {
  size_t n;
  char *text = tu_read_file("ir/ir_rt.h", &n);
  if (!text) {
    printf("skipped: ir/ir_rt.h not found (tests run from the repository root)\n");
    return;
  }
  ck_assert_msg(!strcmp(text, ir_rt_text),
                "ir/ir_rt_text.c is stale: run sh ir/gen_rt_text.sh > ir/ir_rt_text.c");
  free(text);
}
END_TEST

/* ---- micro-benchmark (SPC_IR_BENCH=n: n iterations) ---------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

START_TEST(test_bench) {
  const char *env = getenv("SPC_IR_BENCH");
  if (!env || !*env) return;
  int64_t n = atoll(env) > 0 ? atoll(env) : 10000000;
  tcase tc;
  tc_open(&tc, build_sum("bench_sum"));
  double *a = malloc((size_t)n * sizeof *a);
  for (int64_t k = 0; k < n; k++) a[k] = (double)(k % 1000) * 0.25;
  ir_arg args[3] = {{.data = a, .len = n}, {.s.i64 = n}};
  spc_error e;
  double best_i = 1e30, best_c = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now_s();
    tu_assert_ok(ir_run(tc.f, args, &e), &e);
    double t1 = now_s();
    if (t1 - t0 < best_i) best_i = t1 - t0;
    if (tc.compiled) {
      t0 = now_s();
      ck_assert_int_eq(tc.j.fn(args, NULL, 0), 0);
      t1 = now_s();
      if (t1 - t0 < best_c) best_c = t1 - t0;
    }
  }
  printf("ir bench: for i in 0..n: s = s + a[i], n = %lld: interpreter %.2f ns/iteration",
         (long long)n, best_i / (double)n * 1e9);
  if (tc.compiled)
    printf(", compiled C %.2f ns/iteration (interpreter / compiled = %.1f)",
           best_c / (double)n * 1e9, best_i / best_c);
  printf("\n");
  free(a);
  tc_close(&tc);
}
END_TEST

Suite *suite_ir(void) {
  Suite *s = suite_create("ir");
  TCase *t = tcase_create("interp_vs_c");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, test_ops_every_type);
  tcase_add_test(t, test_arith_values);
  tcase_add_test(t, test_casts);
  tcase_add_test(t, test_random_expressions);
  tcase_add_test(t, test_loops);
  tcase_add_test(t, test_branches);
  tcase_add_test(t, test_prune);
  tcase_add_test(t, test_select_guard);
  tcase_add_test(t, test_arrays);
  tcase_add_test(t, test_builtins);
  tcase_add_test(t, test_move);
  tcase_add_test(t, test_give);
  tcase_add_test(t, test_sort_perm);
  tcase_add_test(t, test_sort_perm_wide);
  tcase_add_test(t, test_spmv_lanes);
  tcase_add_test(t, test_spmv_lanes_same);
  tcase_add_test(t, test_fail);
  suite_add_tcase(s, t);
  t = tcase_create("checks");
  tcase_add_test(t, test_run_errors);
  tcase_add_test(t, test_verify_rejects);
  tcase_add_test(t, test_print);
  tcase_add_test(t, test_alloc_walk);
  tcase_add_test(t, test_emit_text);
  tcase_add_test(t, test_runtime_text);
  suite_add_tcase(s, t);
  t = tcase_create("bench");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, test_bench);
  suite_add_tcase(s, t);
  return s;
}
