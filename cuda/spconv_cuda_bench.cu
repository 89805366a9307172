/* spconv_cuda_bench.cu -- the GPU benchmark of `make cuda-bench` (README
 * "CUDA", bench/README.md "GPU"): the emitted CUDA kernels against
 * cuSPARSE on the same matrices in the same run.
 *
 *   spconv_cuda_bench [--reps R] [--formats csr,coo,...] [--spgemm-max-flops N] FILE...
 *
 * For every file (Matrix Market or any container spc_read takes; symmetric
 * files expanded, values as double):
 *   SpMV y += A x: every format given that the matrix converts to, each
 *     schedule (thread, warp, split, wsplit, auto), and cuSPARSE's CSR SpMV with 64-bit
 *     and with 32-bit indices (CUSPARSE_SPMV_ALG_DEFAULT and CSR_ALG2).
 *     Time per call: the median of R calls (3 when a call takes over 50 ms)
 *     after two warm-ups, each call
 *     what a user pays (spconv's matrix prepared once, outside the timing,
 *     as cuSPARSE's descriptor is made once: its bounds kept on the host, so
 *     a call launches and synchronizes; the same call with the bounds found
 *     per call, a small kernel and a copy back, is printed after it;
 *     cuSPARSE's call is followed by a synchronize; cuSPARSE's buffer is
 *     allocated once, outside the timing).  GB/s counts the bytes
 *     that must move: the format's arrays and values, x once, y read and
 *     written.  The ratio is the fastest cuSPARSE time / ours (above 1:
 *     ours is faster).  Every result is checked against the CPU's spc_spmv
 *     (|y_gpu - y_cpu| <= 1e-12 * sum |a x| per row).
 *   SpGEMM C = A A (square, at most 2e9 multiplies): the csr kernel against
 *     cusparseSpGEMM (32-bit indices, its only index type), each timed end
 *     to end with every allocation (median of R/4+1 calls); nnz(C) and
 *     C's structure compared with each other.
 * The device-to-device copy bandwidth (cudaMemcpy of 1 GiB, read + write)
 * is printed first: SpMV's GB/s is compared with it. */
#define CU_PROG "spconv_cuda_bench"
#include "cu_host.cuh"
#include <cusparse.h>
#include <math.h>
#include <algorithm>
#include <chrono>
#include <string>

#define CS(x)                                                                            \
  do {                                                                                   \
    cusparseStatus_t s_ = (x);                                                           \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "spconv_cuda_bench: %s: %s\n", #x, cusparseGetErrorString(s_));    \
      exit(2);                                                                           \
    }                                                                                    \
  } while (0)

static int reps = 20;
static double max_flops = 2e9; /* SpGEMM skipped above (--spgemm-max-flops) */
static int failures;

static double now(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F> static double median_time(int n, F f) {
  f();
  CU(cudaDeviceSynchronize());
  double t0 = now();
  f();
  CU(cudaDeviceSynchronize());
  if (now() - t0 > 0.05 && n > 3) n = 3; /* a slow schedule: three calls are enough */
  std::vector<double> t;
  for (int r = 0; r < n; r++) {
    double t0 = now();
    f();
    CU(cudaDeviceSynchronize());
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static double copy_bandwidth(void) {
  size_t n = (size_t)1 << 30;
  void *a = NULL, *b = NULL;
  CU(cudaMalloc(&a, n));
  CU(cudaMalloc(&b, n));
  CU(cudaMemset(a, 1, n));
  double t = median_time(10, [&] { CU(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice)); });
  cudaFree(a);
  cudaFree(b);
  return 2.0 * (double)n / t / 1e9;
}

/* |y - ref| <= 1e-12 * absrow per row; prints the first bad row */
static bool agrees(const char *what, const std::vector<double> &y, const std::vector<double> &ref,
                   const std::vector<double> &absrow) {
  for (size_t r = 0; r < ref.size(); r++)
    if (!(y[r] == ref[r] || fabs(y[r] - ref[r]) <= 1e-12 * absrow[r])) {
      printf("  %-22s MISMATCH row %zu: gpu %.17g cpu %.17g\n", what, r, y[r], ref[r]);
      failures++;
      return false;
    }
  return true;
}

struct csr_host {
  int64_t nr, nc, nnz;
  std::vector<int64_t> pos, crd;
  std::vector<double> val;
};

static void csr_of(const spc_tensor *A, csr_host &h) {
  spc_cu_operand o;
  spc_error e;
  spc_error_clear(&e);
  spc_tensor *B = convert(A, "csr");
  if (!B || spc_cu_operand_of(B, &o, &e)) {
    fprintf(stderr, "spconv_cuda_bench: csr: %s\n", e.msg);
    exit(2);
  }
  h.nr = spc_tensor_dim(A, 0);
  h.nc = spc_tensor_dim(A, 1);
  h.pos.assign(o.arr[0], o.arr[0] + o.len[0]);
  h.crd.assign(o.arr[1], o.arr[1] + o.len[1]);
  h.val.assign(o.vals, o.vals + o.nvals);
  h.nnz = (int64_t)h.crd.size();
  spc_cu_operand_free(&o);
  spc_tensor_free(&B);
}

static void report(const char *what, double t, double bytes, double nnz, double best_peer, double bw,
                   double t_unprepared = 0) {
  printf("  %-22s %10.1f us %7.3f ns/nnz %7.1f GB/s (%3.0f%% of copy)", what, t * 1e6, t * 1e9 / nnz,
         bytes / t / 1e9, 100 * bytes / t / 1e9 / bw);
  if (best_peer > 0) printf("  x%.2f", best_peer / t);
  if (t_unprepared > 0) printf("  (bounds per call: %.1f us)", t_unprepared * 1e6);
  printf("\n");
}

/* cuSPARSE CSR SpMV y += A x with index type it; returns the best time of
 * the two algorithms, and checks both */
static double cusparse_spmv(cusparseHandle_t hd, const csr_host &h, cusparseIndexType_t it,
                            const double *dx, double *dy, const std::vector<double> &ref,
                            const std::vector<double> &absrow, double bw, double *bytes_out) {
  int w = it == CUSPARSE_INDEX_64I ? 8 : 4;
  void *dpos, *dcrd;
  if (w == 8) {
    dpos = dev_copy(h.pos.data(), h.nr + 1);
    dcrd = dev_copy(h.crd.data(), h.nnz);
  } else {
    std::vector<int32_t> p(h.pos.begin(), h.pos.end()), c(h.crd.begin(), h.crd.end());
    dpos = dev_copy(p.data(), h.nr + 1);
    dcrd = dev_copy(c.data(), h.nnz);
  }
  double *dval = dev_copy(h.val.data(), h.nnz);
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  CS(cusparseCreateCsr(&A, h.nr, h.nc, h.nnz, dpos, dcrd, dval, it, it, CUSPARSE_INDEX_BASE_ZERO,
                       CUDA_R_64F));
  CS(cusparseCreateDnVec(&X, h.nc, (void *)dx, CUDA_R_64F));
  CS(cusparseCreateDnVec(&Y, h.nr, dy, CUDA_R_64F));
  double one = 1.0, best = 0;
  double bytes = (double)h.nnz * (8 + w) + (double)(h.nr + 1) * w + 8.0 * h.nc + 16.0 * h.nr;
  *bytes_out = bytes;
  static const cusparseSpMVAlg_t algs[] = {CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG2};
  static const char *const aname[] = {"default", "alg2"};
  std::vector<double> y(h.nr);
  for (int a = 0; a < 2; a++) {
    size_t bsz = 0;
    void *buf = NULL;
    CS(cusparseSpMV_bufferSize(hd, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &one, Y, CUDA_R_64F,
                               algs[a], &bsz));
    CU(cudaMalloc(&buf, bsz ? bsz : 1));
    CU(cudaMemset(dy, 0, (size_t)h.nr * 8));
    CS(cusparseSpMV(hd, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &one, Y, CUDA_R_64F, algs[a], buf));
    CU(cudaMemcpy(y.data(), dy, (size_t)h.nr * 8, cudaMemcpyDeviceToHost));
    char what[64];
    snprintf(what, sizeof what, "cusparse-i%d %s", 8 * w, aname[a]);
    agrees(what, y, ref, absrow);
    double t = median_time(reps, [&] {
      CS(cusparseSpMV(hd, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &one, Y, CUDA_R_64F, algs[a], buf));
    });
    report(what, t, bytes, (double)h.nnz, 0, bw);
    if (best == 0 || t < best) best = t;
    cudaFree(buf);
  }
  cusparseDestroySpMat(A);
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  cudaFree(dpos);
  cudaFree(dcrd);
  cudaFree(dval);
  return best;
}

static void spmv_bench(const spc_tensor *A, const csr_host &h, const std::vector<std::string> &formats,
                       cusparseHandle_t hd, double bw) {
  int64_t nr = h.nr, nc = h.nc;
  std::vector<double> x(nc + 1), ax(nc + 1), ref(nr, 0.0), absrow(nr, 0.0), y(nr);
  for (int64_t j = 0; j < nc; j++) x[j] = ((j * 37) % 19) / 7.0 - 1.25, ax[j] = fabs(x[j]);
  /* the CPU reference and each row's sum of |a x| */
  for (int64_t r = 0; r < nr; r++)
    for (int64_t q = h.pos[r]; q < h.pos[r + 1]; q++) absrow[r] += fabs(h.val[q]) * ax[h.crd[q]];
  {
    spc_error e;
    spc_error_clear(&e);
    if (spc_spmv(A, 0, x.data(), ref.data(), NULL, &e)) {
      fprintf(stderr, "spconv_cuda_bench: spc_spmv: %s\n", e.msg);
      exit(2);
    }
  }
  double *dx = dev_copy(x.data(), nc + 1), *dy = NULL;
  CU(cudaMalloc(&dy, (size_t)(nr + 1) * 8));
  double b64 = 0, b32 = 0;
  double t64 = cusparse_spmv(hd, h, CUSPARSE_INDEX_64I, dx, dy, ref, absrow, bw, &b64);
  double t32 = cusparse_spmv(hd, h, CUSPARSE_INDEX_32I, dx, dy, ref, absrow, bw, &b32);
  double peer = std::min(t64, t32);
  for (const std::string &f : formats) {
    const spc_cu_spmv_kernels *K = NULL;
    for (int k = 0; spmv_tables[k]; k++)
      if (f == spmv_tables[k]->format) K = spmv_tables[k];
    if (!K) {
      printf("  %-22s no CUDA kernels for this format\n", f.c_str());
      continue;
    }
    spc_tensor *B = convert(A, K->format);
    if (!B) continue;
    spc_cu_operand o;
    spc_error e;
    spc_error_clear(&e);
    if (spc_cu_operand_of(B, &o, &e)) {
      fprintf(stderr, "spconv_cuda_bench: %s: %s\n", K->format, e.msg);
      exit(2);
    }
    {
      dev_mat d(o);
      double bytes = (double)d.bytes + 8.0 * nc + 16.0 * nr;
      static const char *const sname[] = {"thread", "warp", "split", "wsplit", "auto"};
      for (int s5 = 0; s5 < 5; s5++) {
        int s = s5 < 4 ? s5 : SPC_CU_AUTO;
        CU(cudaMemset(dy, 0, (size_t)nr * 8));
        CU(K->run(s, &d.m, dx, nc, dy, nr));
        CU(cudaMemcpy(y.data(), dy, (size_t)nr * 8, cudaMemcpyDeviceToHost));
        char what[64];
        snprintf(what, sizeof what, "spconv %s %s", K->format, sname[s5]);
        agrees(what, y, ref, absrow);
        /* prepared (the bounds on the host, as cuSPARSE's descriptor holds
         * rows and nnz); bounds found per call for comparison */
        spc_cu_mat pm = d.m;
        CU(K->prepare(&pm));
        CU(cudaMemset(dy, 0, (size_t)nr * 8));
        CU(K->run(s, &pm, dx, nc, dy, nr));
        CU(cudaMemcpy(y.data(), dy, (size_t)nr * 8, cudaMemcpyDeviceToHost));
        agrees(what, y, ref, absrow);
        double t = median_time(reps, [&] { CU(K->run(s, &pm, dx, nc, dy, nr)); });
        double tb = median_time(reps, [&] { CU(K->run(s, &d.m, dx, nc, dy, nr)); });
        report(what, t, bytes, (double)h.nnz, peer, bw, tb);
        if (s == SPC_CU_AUTO) {
          int64_t n = pm.bounds[1] - pm.bounds[0], P = pm.bounds[3] - pm.bounds[2];
          printf("  %-22s %lld top positions, %.1f level-1 a position, the widest %lld: schedule %d\n", "",
                 (long long)n, n ? (double)P / (double)n : 0.0, (long long)pm.widest, spc_cu_auto(n, P, pm.nvals, pm.widest));
        }
      }
    }
    spc_cu_operand_free(&o);
    spc_tensor_free(&B);
  }
  cudaFree(dx);
  cudaFree(dy);
}

static void spgemm_bench(const spc_tensor *A, const csr_host &h, cusparseHandle_t hd) {
  if (h.nr != h.nc || h.nnz >= ((int64_t)1 << 31)) return;
  /* ours: the csr kernel, end to end */
  spc_cu_spgemm_kernels const *K = &spc_cu_spgemm_csr;
  spc_tensor *B = convert(A, "csr");
  spc_cu_operand o;
  spc_error e;
  spc_error_clear(&e);
  if (!B || spc_cu_operand_of(B, &o, &e)) {
    fprintf(stderr, "spconv_cuda_bench: spgemm csr: %s\n", e.msg);
    exit(2);
  }
  int64_t n = h.nr, nnz_ours = 0, flops = 0;
  for (int64_t r = 0; r < n; r++)
    for (int64_t q = h.pos[r]; q < h.pos[r + 1]; q++) flops += h.pos[h.crd[q] + 1] - h.pos[h.crd[q]];
  if ((double)flops > max_flops) {
    printf("  spgemm skipped: %lld multiplies (over --spgemm-max-flops %.3g)\n", (long long)flops, max_flops);
    spc_cu_operand_free(&o);
    spc_tensor_free(&B);
    return;
  }
  std::vector<int64_t> pos_ours(n + 1);
  double t_ours;
  {
    dev_mat d(o);
    int64_t *cpos = NULL;
    CU(cudaMalloc(&cpos, (size_t)(n + 1) * 8));
    auto run = [&] {
      int64_t *ccrd = NULL;
      double *cval = NULL;
      CU(K->run(&d.m, &d.m, n, cpos, &ccrd, &cval, &nnz_ours));
      cudaFree(ccrd);
      cudaFree(cval);
    };
    t_ours = median_time(reps / 4 + 1, run);
    CU(cudaMemcpy(pos_ours.data(), cpos, (size_t)(n + 1) * 8, cudaMemcpyDeviceToHost));
    cudaFree(cpos);
  }
  spc_cu_operand_free(&o);
  spc_tensor_free(&B);
  /* cuSPARSE, 32-bit indices */
  std::vector<int32_t> p32(h.pos.begin(), h.pos.end()), c32(h.crd.begin(), h.crd.end());
  int32_t *dpos = dev_copy(p32.data(), n + 1), *dcrd = dev_copy(c32.data(), h.nnz);
  double *dval = dev_copy(h.val.data(), h.nnz);
  int64_t nnz_cs = 0;
  std::vector<int32_t> pos_cs(n + 1);
  auto run_cs = [&] {
    cusparseSpMatDescr_t mA, mC;
    int32_t *cpos = NULL, *ccrd = NULL;
    double *cval = NULL;
    CU(cudaMalloc(&cpos, (size_t)(n + 1) * 4));
    CS(cusparseCreateCsr(&mA, n, n, h.nnz, dpos, dcrd, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CS(cusparseCreateCsr(&mC, n, n, 0, cpos, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    cusparseSpGEMMDescr_t sd;
    CS(cusparseSpGEMM_createDescr(&sd));
    double one = 1.0, zero = 0.0;
    size_t b1 = 0, b2 = 0;
    void *d1 = NULL, *d2 = NULL;
    cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    CS(cusparseSpGEMM_workEstimation(hd, op, op, &one, mA, mA, &zero, mC, CUDA_R_64F,
                                     CUSPARSE_SPGEMM_DEFAULT, sd, &b1, NULL));
    CU(cudaMalloc(&d1, b1 ? b1 : 1));
    CS(cusparseSpGEMM_workEstimation(hd, op, op, &one, mA, mA, &zero, mC, CUDA_R_64F,
                                     CUSPARSE_SPGEMM_DEFAULT, sd, &b1, d1));
    CS(cusparseSpGEMM_compute(hd, op, op, &one, mA, mA, &zero, mC, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sd,
                              &b2, NULL));
    CU(cudaMalloc(&d2, b2 ? b2 : 1));
    CS(cusparseSpGEMM_compute(hd, op, op, &one, mA, mA, &zero, mC, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sd,
                              &b2, d2));
    int64_t r1, c1, nz;
    CS(cusparseSpMatGetSize(mC, &r1, &c1, &nz));
    CU(cudaMalloc(&ccrd, (size_t)(nz ? nz : 1) * 4));
    CU(cudaMalloc(&cval, (size_t)(nz ? nz : 1) * 8));
    CS(cusparseCsrSetPointers(mC, cpos, ccrd, cval));
    CS(cusparseSpGEMM_copy(hd, op, op, &one, mA, mA, &zero, mC, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sd));
    CU(cudaDeviceSynchronize());
    nnz_cs = nz;
    CU(cudaMemcpy(pos_cs.data(), cpos, (size_t)(n + 1) * 4, cudaMemcpyDeviceToHost));
    cusparseSpGEMM_destroyDescr(sd);
    cusparseDestroySpMat(mA);
    cusparseDestroySpMat(mC);
    cudaFree(d1);
    cudaFree(d2);
    cudaFree(cpos);
    cudaFree(ccrd);
    cudaFree(cval);
  };
  double t_cs = median_time(reps / 4 + 1, run_cs);
  cudaFree(dpos);
  cudaFree(dcrd);
  cudaFree(dval);
  bool same = nnz_cs == nnz_ours;
  for (int64_t r = 0; r <= n && same; r++) same = pos_cs[r] == pos_ours[r];
  printf("  spgemm C = A A: %lld entries, %lld multiplies\n", (long long)nnz_ours, (long long)flops);
  printf("  %-22s %10.1f us %7.3f ns/flop\n", "cusparse-i32 spgemm", t_cs * 1e6, t_cs * 1e9 / (double)flops);
  printf("  %-22s %10.1f us %7.3f ns/flop  x%.2f%s\n", "spconv csr spgemm", t_ours * 1e6,
         t_ours * 1e9 / (double)flops, t_cs / t_ours, same ? "" : "  STRUCTURE DIFFERS from cuSPARSE's");
  failures += !same;
}

int main(int argc, char **argv) {
  std::vector<std::string> formats = {"csr", "coo", "ell", "dia", "bcsr", "csc"};
  std::vector<const char *> files;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--spgemm-max-flops") && a + 1 < argc)
      max_flops = atof(argv[++a]);
    else if (!strcmp(argv[a], "--formats") && a + 1 < argc) {
      formats.clear();
      std::string s = argv[++a];
      for (size_t b = 0, c; b <= s.size(); b = c + 1) {
        c = s.find(',', b);
        if (c == std::string::npos) c = s.size();
        if (c > b) formats.push_back(s.substr(b, c - b));
      }
    } else if (argv[a][0] == '-') {
      fprintf(stderr, "usage: spconv_cuda_bench [--reps R] [--formats F,...] [--spgemm-max-flops N] FILE...\n");
      return 2;
    } else
      files.push_back(argv[a]);
  }
  if (reps < 1) reps = 1;
  if (!cuda_device("GPU benchmark")) return 0;
  cudaDeviceProp prop;
  CU(cudaGetDeviceProperties(&prop, 0));
  double bw = copy_bandwidth();
  printf("device: %s, %d SMs; device-to-device copy %.0f GB/s (read + write); %d timed calls each\n",
         prop.name, prop.multiProcessorCount, bw, reps);
  cusparseHandle_t hd;
  CS(cusparseCreate(&hd));
  for (const char *path : files) {
    double t0 = now();
    spc_tensor *A = read_real(path);
    if (!A) continue;
    csr_host h;
    csr_of(A, h);
    printf("%s: %lld x %lld, %lld nonzeros (read in %.1f s)\n", path, (long long)h.nr, (long long)h.nc,
           (long long)h.nnz, now() - t0);
    spmv_bench(A, h, formats, hd, bw);
    spgemm_bench(A, h, hd);
    spc_tensor_free(&A);
    fflush(stdout);
  }
  cusparseDestroy(hd);
  printf("%s\n", failures ? "RESULTS DIFFER (above)" : "all results agree");
  return failures ? 1 : 0;
}
