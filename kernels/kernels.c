/* kernels.c -- SpMV on converted data (DESIGN.md section 6).
 *
 * SpMV runs the IR routine made from the matrix format's read-side level
 * functions (assemble_read.c, spc_conv_spmv): any format, built-in or a
 * user's YAML, on the generic, factory or JIT engine; a matrix that is
 * not in a spec format yet (a COO just read) is converted to CSR first.
 *
 * SpGEMM (the loop orders, the cost model) is in spgemm*.c. */
#include "spc_assemble.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static spc_status as_format(const spc_tensor *a, const char *fmt, const spc_convert_opts *o,
                            spc_tensor **own, const spc_tensor **use, spc_error *e) {
  *own = NULL;
  *use = a;
  if (spc_is_converted(a) && (!fmt || !strcmp(spc_tensor_format(a), fmt))) return SPC_OK;
  spc_status s = spc_convert_to(a, fmt ? fmt : "csr", o, own, e);
  if (!s) *use = *own;
  return s;
}

static const char *const sched_names[] = {"auto", "rows", "positions", "lanes"};

const char *spc_schedule_name(spc_schedule s) {
  return (unsigned)s < 4 ? sched_names[s] : "?";
}

int spc_schedule_parse(const char *name, spc_schedule *s) {
  for (int k = 0; name && k < 4; k++)
    if (!strcmp(name, sched_names[k])) return (*s = (spc_schedule)k), 0;
  return -1;
}

spc_status spc_spmv(const spc_tensor *A, int transpose, const void *x, void *y,
                    const spc_kernel_opts *ko, spc_error *e) {
  if (!A || !x || !y || A->order != 2)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv needs a matrix, x and y");
  spc_schedule sched = ko ? ko->schedule : SPC_SCHED_AUTO;
  if ((unsigned)sched > SPC_SCHED_LANES)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv: unknown schedule %d (auto, rows, positions, lanes)",
                   (int)sched);
  {
    size_t w = A->vt == SPC_C128 ? 16 : 8;
    const char *xb = x, *yb = y;
    const char *xe = xb + (size_t)A->dims[transpose ? 0 : 1] * w, *ye = yb + (size_t)A->dims[transpose ? 1 : 0] * w;
    if (xb < ye && yb < xe) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "spmv: x and y overlap");
  }
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  if (ko) o.engine = ko->engine, o.no_jit = ko->no_jit;
  spc_tensor *own = NULL;
  const spc_tensor *a = NULL;
  spc_status s = as_format(A, ko && ko->format ? ko->format : NULL, &o, &own, &a, e);
  if (!s) {
    int64_t ny = A->dims[transpose ? 1 : 0];
    size_t w = a->vt == SPC_C128 ? 16 : 8;
    memset(y, 0, (size_t)ny * w);
    s = spc_conv_spmv(a, transpose != 0, x, y, ko && ko->threads > 0 ? ko->threads : 1, sched,
                      ko ? ko->info : NULL, &o, e);
  }
  spc_tensor_free(&own);
  return s;
}
