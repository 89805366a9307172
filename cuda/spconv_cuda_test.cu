/* spconv_cuda_test.cu -- the host driver of `make cuda` / `make cuda-test`
 * (README "CUDA"): for every matrix file given, every format's emitted
 * SpMV kernels (four schedules and the automatic one, each with its bounds found per call and
 * prepared once) and SpGEMM kernels run on the GPU and are
 * compared with the CPU kernels of libspconv (spc_spmv, spc_spgemm):
 *   SpMV   |y_gpu - y_cpu| <= 1e-12 * sum_j |a_ij x_j| for every row;
 *   SpGEMM C = A A (square matrices): row pointers and columns exact,
 *          values within 1e-12 of (|A| |A|)_ij.
 * Exit status 0 when all agree, 1 on a mismatch, 2 on an error.  With no
 * CUDA device it says "no CUDA device: GPU comparison skipped" and exits 0.
 * build/cuda/spc_cu_types.h (the kernels' tables, cut from an emitted
 * file) and build/cuda/registry.h (the formats built) come from `make
 * cuda`. */
#define CU_PROG "spconv_cuda_test"
#include "cu_host.cuh"
#include <math.h>
#include <algorithm>

static int failures;

/* GPU and CPU agree: within 1e-12 of the sum of |terms|, or the same
 * value (an infinite sum on both sides; NaN on both) */
static bool same(double gpu, double cpu, double absum) {
  return gpu == cpu || (isnan(gpu) && isnan(cpu)) || fabs(gpu - cpu) <= 1e-12 * absum;
}

static void spmv_all(const char *path, const spc_tensor *A) {
  int64_t nr = spc_tensor_dim(A, 0), nc = spc_tensor_dim(A, 1);
  std::vector<double> x(nc + 1), ax(nc + 1), ref(nr + 1), y(nr + 1), absrow(nr + 1);
  for (int64_t j = 0; j < nc; j++) x[j] = ((j * 37) % 19) / 7.0 - 1.25, ax[j] = fabs(x[j]);
  double *dx = NULL, *dy = NULL;
  CU(cudaMalloc(&dx, (size_t)(nc + 1) * sizeof *dx));
  CU(cudaMalloc(&dy, (size_t)(nr + 1) * sizeof *dy));
  CU(cudaMemcpy(dx, x.data(), (size_t)nc * sizeof *dx, cudaMemcpyHostToDevice));
  for (int k = 0; spmv_tables[k]; k++) {
    const spc_cu_spmv_kernels *K = spmv_tables[k];
    spc_tensor *B = convert(A, K->format);
    if (!B) continue;
    spc_error e;
    spc_error_clear(&e);
    spc_cu_operand o, ao;
    std::fill(ref.begin(), ref.end(), 0.0);
    std::fill(absrow.begin(), absrow.end(), 0.0);
    if (spc_spmv(B, 0, x.data(), ref.data(), NULL, &e) || spc_cu_operand_of(B, &o, &e) ||
        spc_cu_operand_of(B, &ao, &e)) {
      fprintf(stderr, "spconv_cuda_test: %s %s: %s\n", path, K->format, e.msg);
      exit(2);
    }
    for (int64_t q = 0; q < ao.nvals; q++) ao.vals[q] = fabs(ao.vals[q]);
    if (o.narr != K->narrays) {
      fprintf(stderr, "spconv_cuda_test: %s: %d arrays, kernels take %d\n", K->format, o.narr, K->narrays);
      exit(2);
    }
    dev_mat d(o), ad(ao);
    double *dax = NULL;
    CU(cudaMalloc(&dax, (size_t)(nc + 1) * sizeof *dax));
    CU(cudaMemcpy(dax, ax.data(), (size_t)nc * sizeof *dax, cudaMemcpyHostToDevice));
    CU(cudaMemset(dy, 0, (size_t)(nr + 1) * sizeof *dy));
    CU((cudaError_t)K->run(0, &ad.m, dax, nc, dy, nr)); /* sum |a x| per row */
    CU(cudaMemcpy(absrow.data(), dy, (size_t)nr * sizeof *dy, cudaMemcpyDeviceToHost));
    cudaFree(dax);
    static const char *const name[] = {"thread", "warp", "split", "wsplit", "auto"};
    spc_cu_mat pm = d.m; /* prepared: the bounds kept on the host */
    CU((cudaError_t)K->prepare(&pm));
    for (int s = 0; s < 10; s++) { /* each schedule with bounds per call, then prepared */
      CU(cudaMemset(dy, 0, (size_t)(nr + 1) * sizeof *dy));
      int sc = s % 5 == 4 ? SPC_CU_AUTO : s % 5;
      CU((cudaError_t)K->run(sc, s < 5 ? &d.m : &pm, dx, nc, dy, nr));
      CU(cudaMemcpy(y.data(), dy, (size_t)nr * sizeof *dy, cudaMemcpyDeviceToHost));
      int64_t bad = 0;
      for (int64_t r = 0; r < nr; r++)
        if (!same(y[r], ref[r], absrow[r])) {
          if (!bad)
            fprintf(stderr, "  %s %s %s%s row %lld: gpu %.17g cpu %.17g\n", path, K->format, name[s % 5],
                    s < 5 ? "" : " prepared", (long long)r, y[r], ref[r]);
          bad++;
        }
      printf("  spmv   %-6s %-6s %-8s %s\n", K->format, name[s % 5], s < 5 ? "" : "prepared", bad ? "MISMATCH" : "ok");
      failures += bad != 0;
    }
    spc_cu_operand_free(&o);
    spc_cu_operand_free(&ao);
    spc_tensor_free(&B);
  }
  cudaFree(dx);
  cudaFree(dy);
}

/* C = A A on the GPU into host vectors */
static void gpu_product(const spc_cu_spgemm_kernels *K, const spc_cu_operand &o, int64_t n,
                        std::vector<int64_t> &pos, std::vector<int64_t> &crd, std::vector<double> &val) {
  dev_mat d(o);
  int64_t *cpos = NULL, *ccrd = NULL, nnz = 0;
  double *cval = NULL;
  CU(cudaMalloc(&cpos, (size_t)(n + 1) * sizeof *cpos));
  CU((cudaError_t)K->run(&d.m, &d.m, n, cpos, &ccrd, &cval, &nnz));
  pos.resize(n + 1);
  crd.resize(nnz);
  val.resize(nnz);
  CU(cudaMemcpy(pos.data(), cpos, (size_t)(n + 1) * sizeof *cpos, cudaMemcpyDeviceToHost));
  if (nnz) {
    CU(cudaMemcpy(crd.data(), ccrd, (size_t)nnz * sizeof *ccrd, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(val.data(), cval, (size_t)nnz * sizeof *cval, cudaMemcpyDeviceToHost));
  }
  cudaFree(cpos);
  cudaFree(ccrd);
  cudaFree(cval);
}

static int64_t at(const spc_tensor *C, const char *name, int64_t i) {
  const void *p;
  spc_itype it;
  int64_t len;
  if (spc_tensor_level_array(C, 1, name, &p, &it, &len) || i >= len) return -1;
  return it == SPC_IDX64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static void spgemm_all(const char *path, const spc_tensor *A) {
  int64_t n = spc_tensor_dim(A, 0);
  if (n != spc_tensor_dim(A, 1) || n > 20000) return;
  for (int k = 0; spgemm_tables[k]; k++) {
    const spc_cu_spgemm_kernels *K = spgemm_tables[k];
    spc_tensor *B = convert(A, K->format), *C = NULL;
    if (!B) continue;
    spc_error e;
    spc_error_clear(&e);
    spc_cu_operand o, ao;
    if (spc_spgemm(B, B, K->transposed ? "csc" : "csr", NULL, &C, &e) || spc_cu_operand_of(B, &o, &e) ||
        spc_cu_operand_of(B, &ao, &e)) {
      fprintf(stderr, "spconv_cuda_test: %s %s: %s\n", path, K->format, e.msg);
      exit(2);
    }
    for (int64_t q = 0; q < ao.nvals; q++) ao.vals[q] = fabs(ao.vals[q]);
    std::vector<int64_t> pos, crd, apos, acrd;
    std::vector<double> val, aval;
    gpu_product(K, o, n, pos, crd, val);
    gpu_product(K, ao, n, apos, acrd, aval);
    int64_t nv = 0;
    const double *cv = (const double *)spc_tensor_values(C, &nv);
    bool bad = (int64_t)crd.size() != nv || apos != pos || acrd != crd;
    for (int64_t r = 0; r <= n && !bad; r++) bad = pos[r] != at(C, "pos", r);
    for (int64_t q = 0; q < nv && !bad; q++)
      bad = crd[q] != at(C, "crd", q) || !same(val[q], cv[q], aval[q]);
    printf("  spgemm %-6s %lld entries %s\n", K->format, (long long)nv, bad ? "MISMATCH" : "ok");
    if (bad) fprintf(stderr, "  %s %s: C = A A differs from the CPU's\n", path, K->format);
    failures += bad;
    spc_cu_operand_free(&o);
    spc_cu_operand_free(&ao);
    spc_tensor_free(&C);
    spc_tensor_free(&B);
  }
}

int main(int argc, char **argv) {
  if (!cuda_device("GPU comparison")) return 0;
  for (int a = 1; a < argc; a++) {
    spc_tensor *A = read_real(argv[a]);
    if (!A) continue;
    printf("%s: %lld x %lld, %lld stored\n", argv[a], (long long)spc_tensor_dim(A, 0),
           (long long)spc_tensor_dim(A, 1), (long long)spc_tensor_nstored(A));
    spmv_all(argv[a], A);
    spgemm_all(argv[a], A);
    spc_tensor_free(&A);
  }
  printf("%s\n", failures ? "GPU and CPU results DIFFER" : "GPU results match the CPU's");
  return failures ? 1 : 0;
}
