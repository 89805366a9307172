/* ir_emit_cuda.c -- the CUDA side of the C emitter.
 *
 * CUDA device code is the emitted C99 with three overrides: the runtime
 * helpers are `static inline __host__ __device__` (SPC_RT_FN, defined
 * before ir_rt.h's text), a function is written `static __device__ int
 * NAME(...)` (ir_emit_opts.qualifier), and stores `y[i] = y[i] + e` to one
 * named array become atomicAdd(&y[i], e) (ir_emit_opts.atomic_array).
 * The __global__ kernels around these device functions are written by
 * assemble/assemble_cuda.c.  Device functions must not allocate, free,
 * fail or call a builtin: ir_emit_cuda_check refuses them, naming the
 * statement. */
#include "ir_emit.h"

static const char cuda_head[] =
    "/* CUDA: every runtime helper is host and device code; the runtime's\n"
    " * GCC pragma means nothing to nvcc (pass --fmad=false for the bits of\n"
    " * the CPU's unfused arithmetic). */\n"
    "#define SPC_RT_FN static inline __host__ __device__\n"
    "#pragma nv_diag_suppress 1675\n"
    "/* generated code declares every variable at the top, used or not */\n"
    "#pragma nv_diag_suppress 550\n"
    "#pragma nv_diag_suppress 177\n";

void ir_emit_cuda_prelude(spc_str *out) {
  spc_str_add(out, cuda_head, sizeof cuda_head - 1);
  emit_prelude(out);
}

static const ir_stmt *host_only(const ir_stmt *s) {
  if (!s) return NULL;
  if (s->kind == IR_S_ALLOC || s->kind == IR_S_FREE || s->kind == IR_S_FAIL ||
      s->kind == IR_S_BUILTIN)
    return s;
  for (int k = 0; k < s->nkids; k++) {
    const ir_stmt *h = host_only(s->kids[k]);
    if (h) return h;
  }
  return NULL;
}

spc_status ir_emit_cuda_check(const ir_func *f, spc_error *e) {
  const ir_stmt *h = host_only(f->body);
  if (!h) return SPC_OK;
  static const char *const what[] = {[IR_S_ALLOC] = "an allocation", [IR_S_FREE] = "a free",
                                     [IR_S_FAIL] = "a FAIL statement",
                                     [IR_S_BUILTIN] = "a builtin call"};
  return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                 "CUDA emitter: function %s has %s, which device code cannot run",
                 f->name, what[h->kind]);
}
