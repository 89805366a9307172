/* spc_cuda_host.h -- a converted matrix as the CUDA kernels of its format
 * take it (README "CUDA"): plain C, for the library, the tests and the
 * host driver cuda/spconv_cuda_test.cu (C++). */
#ifndef SPC_CUDA_HOST_H
#define SPC_CUDA_HOST_H

#include "spconv.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Level arrays in level order (the order of the kernels' `arrays` table),
 * widened to int64; values as double (1 for pattern); ext = {lo, N} of
 * every level.  Every array malloc'ed, freed by spc_cu_operand_free. */
typedef struct spc_cu_operand {
  int narr;
  int64_t *arr[16];
  int64_t len[16];
  double *vals;
  int64_t nvals;
  int64_t ext[16];
  int next;
} spc_cu_operand;

/* t: a matrix made by spc_convert (SPC_ERR_ARG otherwise), values not
 * complex (SPC_ERR_UNSUPPORTED). */
SPC_API spc_status spc_cu_operand_of(const spc_tensor *t, spc_cu_operand *m, spc_error *e);
SPC_API void spc_cu_operand_free(spc_cu_operand *m);

#ifdef __cplusplus
}
#endif
#endif
