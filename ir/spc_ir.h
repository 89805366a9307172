/* spc_ir.h -- the IR every spconv routine lowers to (DESIGN.md section 4).
 *
 * A small imperative IR: typed scalars and arrays, expressions, statements
 * (assign, store, for, while, if, allocate, free, a few builtins), and
 * functions with parameters.  One IR, three ways to run it:
 *   - ir_run:     the interpreter (the generic path, and the reference),
 *   - ir_emit_c:  C source (factory routines, `spconv gen`, the JIT),
 *   - later a CUDA emitter.
 * The interpreter and compiled emitted C give identical results for every
 * construct (tests check it bit for bit; the one freedom left is the sign
 * and payload of a NaN result, which IEEE 754 leaves open and compilers
 * use, e.g. turning x + -y into x - y).
 *
 * Memory: every node belongs to its ir_func (an arena); ir_func_free
 * releases all.  Builders never fail half-way: on allocation failure the
 * function is marked broken (ir_func_ok() returns false) and later builder
 * calls return a placeholder, so callers check once at the end.  A misuse
 * (an operator on types it does not apply to, a scalar where an array is
 * needed, a store to an IN array, a bad FAIL message...) marks it broken
 * the same way, with a message ir_verify reports (SPC_ERR_INTERNAL).
 *
 * Semantics (both paths):
 *   - Integer arithmetic is two's complement on the operand width (I32 or
 *     I64/U64); the builder promotes mixed operands (BOOL < I32 < I64 < U64
 *     < F32 < F64 < C128).  Division and remainder truncate toward zero (as
 *     C); division by zero, shifts by >= width or < 0 are errors reported by
 *     the interpreter and must not be generated (ir_verify cannot see them).
 *     INT_MIN / -1 wraps to INT_MIN (and INT_MIN % -1 is 0).
 *   - Arithmetic, min/max and bitwise operators work on at least I32 (a
 *     BOOL operand is promoted, as in C); bitwise operators and shifts only
 *     on integers; a shift has the type of its (promoted) left operand.
 *     REM on floats is fmod; min(a, b) = b < a ? b : a and max(a, b) =
 *     a < b ? b : a (a NaN in a is returned, one in b ignored); C128 has +
 *     - * / (written-out formulas, Smith's division), unary -, == and !=.
 *   - F32 arithmetic rounds every operation to float; nothing is contracted
 *     into a fused multiply-add.
 *   - Casts: float to integer truncates toward zero and saturates at the
 *     target's limits (NaN gives 0); to BOOL is != 0; C128 to a real type
 *     takes the real part.
 *   - Comparisons and logical operators yield BOOL; && and || short-circuit;
 *     ?: evaluates only the side it picks.
 *   - Statements convert their operands as C assignment does: to the
 *     variable's (element) type; indices, lengths and builtin ranges to I64;
 *     for bounds to the loop variable's type; conditions to BOOL.
 *   - Every variable is function-scoped and starts at zero (arrays: NULL,
 *     length 0).  Loads and stores are bounds-checked by the interpreter.
 *   - A FOR loop evaluates lo and hi (once), then runs var = lo, lo+1, ...,
 *     hi-1; the variable keeps its value after the loop (lo when the range
 *     is empty).
 *   - ALLOC of an array that holds one frees the old one; allocation
 *     failure returns SPC_ERR_NOMEM; a negative length is an error.
 */
#ifndef SPC_IR_H
#define SPC_IR_H

#include "spc_impl.h"

/* ---- types ---------------------------------------------------------------- */
typedef enum ir_ty {
  IR_BOOL = 0,
  IR_I32,
  IR_I64,
  IR_U64,
  IR_F32,
  IR_F64,
  IR_C128,
  IR_NTYPES
} ir_ty;

SPC_INTERNAL const char *ir_ty_name(ir_ty t); /* "bool", "int32_t", ... */
SPC_INTERNAL size_t ir_ty_size(ir_ty t);

/* A scalar value of any type. */
typedef union ir_val {
  bool b;
  int32_t i32;
  int64_t i64;
  uint64_t u64;
  float f32;
  double f64;
  double c128[2];
} ir_val;

/* ---- variables ------------------------------------------------------------ */
typedef int ir_var; /* index into the function's variable table; -1 none */

typedef enum ir_dir {
  IR_LOCAL = 0, /* not a parameter */
  IR_IN,        /* scalar: by value; array: read-only (const T *, len) */
  IR_INOUT,     /* array modified in place (T *, len); scalar: T * */
  IR_OUT,       /* array allocated by the function (T **, int64_t *len);
                   scalar: T * */
  IR_GIVE       /* array only: handed over by the caller (T **, int64_t *len),
                   owned by the function from the call on (read, written,
                   moved or freed like a local); what it holds at the return,
                   NULL when moved or freed, goes back to the caller, who owns
                   it again -- on failure too */
} ir_dir;

typedef struct ir_var_info {
  const char *name; /* unique within the function; a valid C identifier */
  ir_ty ty;         /* scalar type, or element type of an array */
  bool array;
  ir_dir dir;
  int param;        /* parameter position, -1 for locals */
} ir_var_info;

/* ---- expressions ---------------------------------------------------------- */
typedef enum ir_op {
  /* binary */
  IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_REM,
  IR_SHL, IR_SHR, IR_BAND, IR_BOR, IR_BXOR,
  IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE,
  IR_LAND, IR_LOR,
  IR_MIN, IR_MAX,
  /* unary */
  IR_NEG, IR_NOT, IR_BNOT, IR_ABS
} ir_op;

typedef enum ir_expr_kind {
  IR_E_CONST,  /* v */
  IR_E_VAR,    /* var (scalar) */
  IR_E_LOAD,   /* var[a] (array element) */
  IR_E_LEN,    /* length of array var, I64 */
  IR_E_BIN,    /* op(a, b) */
  IR_E_UN,     /* op(a) */
  IR_E_CAST,   /* (ty) a */
  IR_E_SELECT  /* c ? a : b (both sides may be evaluated: no effects) */
} ir_expr_kind;

typedef struct ir_expr ir_expr;
struct ir_expr {
  ir_expr_kind kind;
  ir_ty ty; /* result type */
  ir_op op;
  ir_var var;
  ir_val v;
  ir_expr *a, *b, *c;
};

/* ---- statements ----------------------------------------------------------- */
typedef enum ir_builtin {
  IR_FILL,       /* fill(arr, lo, hi, value): arr[lo..hi) = value */
  IR_PREFIX_SUM, /* prefix_sum(arr, lo, hi): inclusive scan of arr[lo..hi) */
  IR_SHIFT,      /* shift(arr, lo, hi, value): arr[lo+1..hi] = old arr[lo..hi),
                    arr[lo] = value (needs hi < len) */
  IR_COPY,       /* copy(dst, dlo, src, slo, n) */
  IR_SORT_PERM,  /* sort_perm(perm, n, key1, key2, ...): stable sort of
                    perm[0..n) (positions) lexicographically by keyK[perm[.]] */
  IR_MOVE,       /* move(dst, src): free dst; dst takes src's data and length;
                    src is left empty (both owned: local or OUT, one type) */
  IR_SPMV_LANES, /* spmv_lanes(y, crd, vals, x; yl, bg, en): y[yl] += the
                    lanes schedule's sum of vals[q] * x[crd[q]] over q in
                    [bg, en) (four partial sums: ir_rt.h spc_spmv_lanes) */
  IR_SPMV_LANES_SAME, /* spmv_lanes_same(y, crd, vals, x; yl, bg, en): as
                         spmv_lanes where every product has one sign (the
                         sum then within 5.7e-13 of the ordered one), else
                         the ordered sum (ir_rt.h spc_spmv_lanes_same) */
  IR_NBUILTINS
} ir_builtin;

typedef enum ir_stmt_kind {
  IR_S_BLOCK,   /* body: kids[0..nkids) */
  IR_S_ASSIGN,  /* var = a */
  IR_S_STORE,   /* var[a] = b */
  IR_S_FOR,     /* for var in a .. b: kids[0] */
  IR_S_WHILE,   /* while a: kids[0] */
  IR_S_IF,      /* if a: kids[0] else kids[1] (kids[1] may be NULL) */
  IR_S_ALLOC,   /* var = new ty[a] (zeroed when zero) */
  IR_S_FREE,    /* free var (no-op when NULL) */
  IR_S_BUILTIN, /* builtin(args[0..nargs), arrays vars[0..nvars)) */
  IR_S_FAIL,    /* return status code (< 0) with message msg: a format
                   whose only conversions are %% and one %lld per arg */
  IR_S_BREAK    /* leave the innermost loop */
} ir_stmt_kind;

typedef struct ir_stmt ir_stmt;
struct ir_stmt {
  ir_stmt_kind kind;
  ir_var var;
  ir_expr *a, *b;
  ir_stmt **kids;
  int nkids, capkids;
  bool zero;         /* ALLOC: zero-fill */
  ir_builtin builtin;
  ir_var *vars;      /* BUILTIN: array operands */
  int nvars;
  ir_expr **args;    /* BUILTIN / FAIL: scalar operands */
  int nargs;
  spc_status code;   /* FAIL */
  const char *msg;   /* FAIL */
};

/* ---- functions ------------------------------------------------------------ */
typedef struct ir_func ir_func;

/* The runtime's stable sort_perm (ir_rt.h) for C callers: perm (holding
 * 0..n-1 or any order to refine) sorted by int64 keys[0], then keys[1]..
 * (at most 64); scratch holds n positions. */
SPC_INTERNAL void ir_sort_perm_i64(int64_t *perm, int64_t n, int64_t *const *keys,
                                   int nkeys, int64_t *scratch);
SPC_INTERNAL ir_func *ir_func_new(const char *name);
SPC_INTERNAL void ir_func_free(ir_func **f);
SPC_INTERNAL bool ir_func_ok(const ir_func *f); /* not broken (see above) */
/* Why f is broken: SPC_ERR_NOMEM or SPC_ERR_INTERNAL (SPC_OK: it is not). */
SPC_INTERNAL spc_status ir_func_why(const ir_func *f);
SPC_INTERNAL const char *ir_func_name(const ir_func *f);
/* Rename f (the name its emitted C function gets); false on no memory. */
SPC_INTERNAL bool ir_func_set_name(ir_func *f, const char *name);
SPC_INTERNAL ir_stmt *ir_func_body(ir_func *f); /* the top-level block */
/* Promise that f's array parameters never overlap one another: the C
 * emitter declares them `restrict` (the interpreter ignores it). */
SPC_INTERNAL void ir_func_set_noalias(ir_func *f);
/* Emitted C of f checks every store's index against the array's length
 * (ir_internal.h: checked). */
SPC_INTERNAL void ir_func_set_checked(ir_func *f);
/* A 128-bit hash of everything f's emitted C depends on but its name
 * (ir_hash.c): equal hashes, the same text under one name. */
SPC_INTERNAL void ir_func_hash(const ir_func *f, uint64_t out[2]);
/* Drop dead definitions (ir_prune.c): when no effect of f -- a store, a
 * condition, a loop bound, an allocation, a builtin, a failure, a
 * parameter -- depends on any of vs[0..n), every assignment that reads
 * one of them (and, through further assignments, what those feed) is
 * removed and 1 returned; 0 when one is live (f unchanged), -1 on no
 * memory, a bad variable or a shared or broken f.  Flow-insensitive: a
 * variable read anywhere by an effect is live. */
SPC_INTERNAL int ir_prune_from(ir_func *f, const ir_var *vs, int n);
/* Make f read-only and kept for the process (the conversion engine's
 * routine cache): its hash is computed now and remembered (with bytecode:
 * also verified and compiled for ir_run once), and ir_func_free of it
 * only clears the caller's pointer.  It must not be changed after
 * (renamed, added to); any number of threads may run it. */
SPC_INTERNAL void ir_func_share(ir_func *f, bool bytecode);
SPC_INTERNAL bool ir_func_shared(const ir_func *f);

SPC_INTERNAL ir_var ir_param(ir_func *f, const char *name, ir_ty ty,
                             bool array, ir_dir dir);
SPC_INTERNAL ir_var ir_local(ir_func *f, const char *name, ir_ty ty,
                             bool array);
SPC_INTERNAL int ir_nvars(const ir_func *f);
SPC_INTERNAL const ir_var_info *ir_var_get(const ir_func *f, ir_var v);
SPC_INTERNAL int ir_nparams(const ir_func *f);
SPC_INTERNAL ir_var ir_param_var(const ir_func *f, int k); /* k-th param */
SPC_INTERNAL ir_var ir_find_var(const ir_func *f, const char *name);
/* Whether name is a C identifier: [A-Za-z_][A-Za-z0-9_]*. */
SPC_INTERNAL bool ir_ident_ok(const char *name);

/* expressions (operands are promoted; see the header comment) */
SPC_INTERNAL ir_expr *ir_const(ir_func *f, ir_ty ty, ir_val v);
SPC_INTERNAL ir_expr *ir_int(ir_func *f, int64_t v);   /* I64 */
SPC_INTERNAL ir_expr *ir_f64(ir_func *f, double v);
SPC_INTERNAL ir_expr *ir_bool(ir_func *f, bool v);
SPC_INTERNAL ir_expr *ir_ref(ir_func *f, ir_var v);    /* scalar variable */
SPC_INTERNAL ir_expr *ir_load(ir_func *f, ir_var arr, ir_expr *idx);
SPC_INTERNAL ir_expr *ir_len(ir_func *f, ir_var arr);
SPC_INTERNAL ir_expr *ir_bin(ir_func *f, ir_op op, ir_expr *a, ir_expr *b);
SPC_INTERNAL ir_expr *ir_un(ir_func *f, ir_op op, ir_expr *a);
SPC_INTERNAL ir_expr *ir_cast(ir_func *f, ir_ty ty, ir_expr *a);
SPC_INTERNAL ir_expr *ir_select(ir_func *f, ir_expr *c, ir_expr *a,
                                ir_expr *b);

/* statements; ir_add appends s to block and returns s */
SPC_INTERNAL ir_stmt *ir_block(ir_func *f);
SPC_INTERNAL ir_stmt *ir_add(ir_func *f, ir_stmt *block, ir_stmt *s);
SPC_INTERNAL ir_stmt *ir_assign(ir_func *f, ir_var v, ir_expr *e);
SPC_INTERNAL ir_stmt *ir_store(ir_func *f, ir_var arr, ir_expr *idx,
                               ir_expr *e);
/* for v in lo .. hi: body (body is a block, created when NULL) */
SPC_INTERNAL ir_stmt *ir_for(ir_func *f, ir_var v, ir_expr *lo, ir_expr *hi,
                             ir_stmt *body);
SPC_INTERNAL ir_stmt *ir_while(ir_func *f, ir_expr *cond, ir_stmt *body);
SPC_INTERNAL ir_stmt *ir_if(ir_func *f, ir_expr *cond, ir_stmt *then,
                            ir_stmt *els);
SPC_INTERNAL ir_stmt *ir_alloc(ir_func *f, ir_var arr, ir_expr *len,
                               bool zero);
SPC_INTERNAL ir_stmt *ir_free(ir_func *f, ir_var arr);
SPC_INTERNAL ir_stmt *ir_call(ir_func *f, ir_builtin b, const ir_var *arrays,
                              int narrays, ir_expr *const *args, int nargs);
SPC_INTERNAL ir_stmt *ir_fail(ir_func *f, spc_status code, const char *msg,
                              ir_expr *const *args, int nargs);
SPC_INTERNAL ir_stmt *ir_break(ir_func *f);
/* The body of a FOR/WHILE, the branches of an IF. */
SPC_INTERNAL ir_stmt *ir_body(ir_stmt *loop);
SPC_INTERNAL ir_stmt *ir_then(ir_stmt *s);
SPC_INTERNAL ir_stmt *ir_else(ir_func *f, ir_stmt *s); /* created on demand */

/* ---- checking, printing, running, emitting -------------------------------- */

/* Types agree, variables exist and are used as declared (scalar/array),
 * IN arrays are never stored to, loop variables are integer scalars. */
SPC_INTERNAL spc_status ir_verify(const ir_func *f, spc_error *e);

/* A growable string (used by the printers and emitters). */
typedef struct spc_str {
  char *s;
  size_t len, cap;
  bool failed; /* an allocation failed; s holds a prefix */
} spc_str;
SPC_INTERNAL void spc_str_addf(spc_str *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
SPC_INTERNAL void spc_str_add(spc_str *b, const char *s, size_t n);
SPC_INTERNAL void spc_str_free(spc_str *b);
/* FNV-1a of a NUL-terminated name, folded: the hash of the IR's and the
 * emitter's name indexes. */
SPC_INTERNAL uint64_t spc_name_hash(const char *s);
/* splitmix64's finaliser: the mixing step of the routines' keys and of
 * ir_func_hash. */
SPC_INTERNAL uint64_t spc_mix64(uint64_t x);

/* Human-readable listing of f, for debugging and tests. */
SPC_INTERNAL spc_status ir_print(const ir_func *f, spc_str *out);

/* Arguments of ir_run, one per parameter in order.  Arrays: data/len
 * (IN, INOUT: given by the caller; OUT: allocated by ir_run with
 * spc_malloc, owned by the caller afterwards).  Scalars: s (IN: given;
 * OUT/INOUT: written back). */
typedef struct ir_arg {
  void *data;
  int64_t len;
  ir_val s;
} ir_arg;

/* Interpret f (verified first).  On error every array the run allocated is
 * freed (OUT arrays included: their args become NULL, 0), no scalar is
 * written back, and e says what failed: FAIL statements their code and
 * formatted message (e->msg is exactly the text the emitted C writes to
 * err); run-time errors (bounds, division by zero, shift counts, negative
 * lengths, builtin ranges) SPC_ERR_INTERNAL naming the function and the
 * statement. */
SPC_INTERNAL spc_status ir_run(const ir_func *f, ir_arg *args, spc_error *e);

/* Emit f as one C99 function:
 *   int NAME(params...)   returns 0 or a negative spc_status code;
 * scalar IN `T x`, scalar OUT/INOUT `T *x`, array IN `const T *x, int64_t
 * x_len`, INOUT `T *x, int64_t x_len`, OUT `T **x, int64_t *x_len`
 * (allocated with SPC_GEN_MALLOC, default malloc), and last `char *err,
 * size_t err_len` (may be NULL) receiving a FAIL statement's formatted
 * message.  On a non-zero return every array the function allocated is
 * freed and OUT arrays are NULL.  With prelude, the
 * output starts with the includes and macros it needs (a standalone file);
 * without, it relies on an earlier function's prelude in the same file.
 * static_fn makes the function static.  Needs no spconv header.  Loads and
 * stores are not bounds-checked: run ir_run to find a function's errors. */
typedef struct ir_emit_opts {
  bool prelude;
  bool static_fn;
  const char *comment; /* put at the top of the function, may be NULL */
  bool entry; /* also emit `int NAME_entry(ir_arg *args, char *err, size_t
                 err_len)`: NAME called with ir_run's arguments (for a JIT
                 or tests that call any function the same way) */
  bool static_entry; /* ... and make it static (a standalone file) */
  /* CUDA (ir_emit_cuda.c): written before `int NAME(` instead of
   * "static " (e.g. "static __device__"), and the name of an array whose
   * stores `a[i] = a[i] + e` (i a variable) become atomicAdd(&a[i], e). */
  const char *qualifier;
  const char *atomic_array;
  /* the function's name in C instead of its own (NULL: its own): a
   * shared function (ir_func_share) is emitted under any name unchanged */
  const char *name;
} ir_emit_opts;
/* The prelude alone (includes, the runtime, macros): for a file whose
 * functions are all emitted without it. */
SPC_INTERNAL void ir_emit_c_prelude(spc_str *out);
SPC_INTERNAL spc_status ir_emit_c(const ir_func *f, const ir_emit_opts *o,
                                  spc_str *out, spc_error *e);
/* The prelude of a CUDA file (ir_emit_cuda.c): the C prelude with every
 * runtime helper __host__ __device__; functions for it are emitted by
 * ir_emit_c with qualifier "static __device__" and no ALLOC, FREE, FAIL
 * or builtin statement (ir_emit_cuda_check says which one it meets). */
SPC_INTERNAL void ir_emit_cuda_prelude(spc_str *out);
SPC_INTERNAL spc_status ir_emit_cuda_check(const ir_func *f, spc_error *e);

#endif
