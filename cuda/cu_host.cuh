/* cu_host.cuh -- what the host drivers cuda/spconv_cuda_test.cu (GPU
 * against CPU) and cuda/spconv_cuda_bench.cu (GPU against cuSPARSE) share:
 * the kernels' tables of build/cuda/registry.h, the CUDA error check, a
 * converted matrix's arrays on the device, conversion and reading with
 * their messages.  Define CU_PROG (the program's name) before including. */
#ifndef CU_HOST_CUH
#define CU_HOST_CUH
#include "spc_cu_types.h"
#include "spc_cuda_host.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define SPC_CU_SPMV(f) extern "C" const spc_cu_spmv_kernels spc_cu_spmv_##f;
#define SPC_CU_SPGEMM(f) extern "C" const spc_cu_spgemm_kernels spc_cu_spgemm_##f;
#include "registry.h"
#undef SPC_CU_SPMV
#undef SPC_CU_SPGEMM
#define SPC_CU_SPMV(f) &spc_cu_spmv_##f,
#define SPC_CU_SPGEMM(f)
static const spc_cu_spmv_kernels *const spmv_tables[] = {
#include "registry.h"
    NULL};
#undef SPC_CU_SPMV
#undef SPC_CU_SPGEMM
#define SPC_CU_SPMV(f)
#define SPC_CU_SPGEMM(f) &spc_cu_spgemm_##f,
static const spc_cu_spgemm_kernels *const spgemm_tables[] = {
#include "registry.h"
    NULL};
#undef SPC_CU_SPMV
#undef SPC_CU_SPGEMM

/* a CUDA call that must succeed: its error ends the program (exit 2) */
#define CU(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (cudaError_t)(x);                                                   \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, CU_PROG ": %s: %s\n", #x, cudaGetErrorString(e_));                 \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)

template <class T> static T *dev_copy(const T *h, int64_t n) {
  T *p = NULL;
  CU(cudaMalloc(&p, (size_t)(n ? n : 1) * sizeof *p));
  if (n) CU(cudaMemcpy(p, h, (size_t)n * sizeof *p, cudaMemcpyHostToDevice));
  return p;
}

/* a converted matrix's arrays on the device, freed with it */
struct dev_mat {
  spc_cu_mat m;
  std::vector<void *> owned;
  int64_t bytes = 0; /* arrays and values */
  explicit dev_mat(const spc_cu_operand &o) {
    memset(&m, 0, sizeof m);
    for (int k = 0; k < o.narr; k++) {
      m.arr[k] = keep(dev_copy(o.arr[k], o.len[k]));
      m.len[k] = o.len[k];
      bytes += o.len[k] * 8;
    }
    m.vals = keep(dev_copy(o.vals, o.nvals));
    m.nvals = o.nvals;
    bytes += o.nvals * 8;
    m.ext = keep(dev_copy(o.ext, o.next));
    m.next = o.next;
  }
  template <class T> T *keep(T *p) {
    owned.push_back((void *)p);
    return p;
  }
  dev_mat(const dev_mat &) = delete;
  dev_mat &operator=(const dev_mat &) = delete;
  ~dev_mat() {
    for (void *p : owned) cudaFree(p);
  }
};

/* A in format f, or NULL with "f skipped: why" printed */
static spc_tensor *convert(const spc_tensor *A, const char *f) {
  spc_tensor *B = NULL;
  spc_error e;
  spc_error_clear(&e);
  if (spc_convert_to(A, f, NULL, &B, &e)) {
    printf("  %-22s skipped: %s\n", f, e.msg);
    return NULL;
  }
  return B;
}

/* the matrix at path, symmetry expanded, values as double; NULL with a
 * line printed for complex values (the kernels take real ones); another
 * error ends the program (exit 2) */
static spc_tensor *read_real(const char *path) {
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.expand = 1;
  ro.vtype = SPC_F64;
  spc_tensor *A = NULL;
  spc_error e;
  spc_error_clear(&e);
  if (!spc_read(path, &ro, &A, &e)) return A;
  spc_read_opts_init(&ro);
  spc_error e2;
  spc_error_clear(&e2);
  if (!spc_read(path, &ro, &A, &e2) && spc_tensor_vtype(A) == SPC_C128) {
    printf("%s: complex values: skipped (the CUDA kernels take real values)\n", path);
    spc_tensor_free(&A);
    return NULL;
  }
  spc_tensor_free(&A);
  fprintf(stderr, CU_PROG ": %s: %s\n", path, e.msg);
  exit(2);
}

/* 1 when a CUDA device is there, else 0 with "no CUDA device: WHAT
 * skipped" printed */
static int cuda_device(const char *what) {
  int ndev = 0;
  cudaError_t st = cudaGetDeviceCount(&ndev);
  if (st == cudaSuccess && ndev > 0) return 1;
  printf("no CUDA device: %s skipped (%s)\n", what, st != cudaSuccess ? cudaGetErrorString(st) : "0 devices");
  return 0;
}
#endif
