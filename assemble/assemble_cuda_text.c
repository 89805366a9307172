/* assemble_cuda_text.c -- spc_gen_cuda_source: one .cu file holding a
 * matrix format's SpMV or SpGEMM kernels.  The device functions are the IR
 * routines of assemble_cuda.c emitted by the C emitter in its CUDA mode
 * (ir_emit_cuda.c); around them this file writes the __global__ kernels
 * (the schedules) and one extern "C" table with a host launcher, which a
 * host program (cuda/spconv_cuda_test.cu) calls with device pointers.
 *
 * SpMV schedules (spc_cu_spmv_kernels.run, schedule 0, 1, 2):
 *   0 thread per row: one thread per top-level position;
 *   1 lanes per row: a group of L lanes per top-level position (L a power
 *     of two up to 32, the least at or above a quarter of the mean level-1
 *     positions per top position) strides its level-1 positions; shuffles
 *     within the group sum them (row mode), or each lane adds atomically;
 *   2 position split: the level-1 positions in equal windows, one per
 *     thread, each finding its first and last top position by binary
 *     search over the level's begin and end; rows crossing a window's
 *     border are added with atomicAdd;
 *   3 position split by warps: windows of SPC_CU_WSPLIT_W level-1 positions,
 *     one per warp; the warp's lanes form groups of L (as schedule 1 picks
 *     L, from the window's positions per top position), each group takes a
 *     top position reaching into the window, its lanes striding its
 *     positions there; a group's sum is added to y atomically;
 *   SPC_CU_AUTO (-1): one of them by spc_cu_auto, from the matrix's bounds
 *     and (prepared) its widest top position.
 * prepare: the bounds (and the widest top position) found once and kept in
 * the spc_cu_mat, so that each run launches at once.
 * SpGEMM: upper bounds, exclusive scan (CUB), symbolic pass into per-row
 * hash tables in global memory, scan, numeric pass; one top position of A
 * per thread, or per nl lanes each taking every nl-th of the row's
 * entries of A (few rows of many products), the row's runs then merged by
 * CUB's segmented sort and a pass adding repeated columns. */
#include "assemble_cuda.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cu_types[] =
    "#ifndef SPC_CU_TYPES\n"
    "#define SPC_CU_TYPES\n"
    "#include <cuda_runtime.h>\n"
    "#include <cub/device/device_scan.cuh>\n"
    "#include <cub/device/device_segmented_sort.cuh>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "/* A matrix on the device: its level arrays as int64 in the order of the\n"
    " * kernels' `arrays` table (\"LEVEL:NAME\"), values as double, and ext =\n"
    " * {lo, N} of every level (spconv's level extents). */\n"
    "typedef struct spc_cu_mat {\n"
    "  const int64_t *arr[16];\n"
    "  int64_t len[16];\n"
    "  const double *vals;\n"
    "  int64_t nvals;\n"
    "  const int64_t *ext;\n"
    "  int64_t next;\n"
    "  /* SpMV: the top level's positions [bounds[0], bounds[1]) and the level-1\n"
    "   * positions under them [bounds[2], bounds[3]), known on the host once the\n"
    "   * kernels' `prepare` has set them (bounds_set 1): each call then launches\n"
    "   * at once.  With bounds_set 0 (a zeroed struct) every call finds them\n"
    "   * on the device first: a one-thread kernel and a copy back. */\n"
    "  int64_t bounds[4];\n"
    "  int bounds_set;\n"
    "  /* with the bounds: the most level-1 positions under one top position\n"
    "   * (the automatic schedule reads it) */\n"
    "  int64_t widest;\n"
    "} spc_cu_mat;\n"
    "/* y += A x on the device (schedule 0 thread, 1 lanes, 2 position split,\n"
    " * 3 position split by warps, SPC_CU_AUTO chosen by spc_cu_auto);\n"
    " * returns a cudaError_t. */\n"
    "#define SPC_CU_AUTO (-1)\n"
    "typedef struct spc_cu_spmv_kernels {\n"
    "  const char *format;\n"
    "  int narrays;\n"
    "  const char *arrays[16];\n"
    "  int (*run)(int schedule, const spc_cu_mat *A, const double *x, int64_t nx,\n"
    "             double *y, int64_t ny);\n"
    "  /* A's bounds computed once on the device and kept in A (bounds_set = 1):\n"
    "   * call again after changing A's arrays */\n"
    "  int (*prepare)(spc_cu_mat *A);\n"
    "} spc_cu_spmv_kernels;\n"
    "/* C = A B in level space: cpos (nrows + 1, device memory the caller\n"
    " * gives) and *ccrd, *cval (cudaMalloc'ed, the caller frees). */\n"
    "typedef struct spc_cu_spgemm_kernels {\n"
    "  const char *format;\n"
    "  int transposed; /* level space is the transpose: C' = A' B' */\n"
    "  int narrays;\n"
    "  const char *arrays[16];\n"
    "  int (*run)(const spc_cu_mat *A, const spc_cu_mat *B, int64_t nrows, int64_t *cpos,\n"
    "             int64_t **ccrd, double **cval, int64_t *nnz);\n"
    "} spc_cu_spgemm_kernels;\n"
    "/* threads per block for n threads: 256, halved (down to a warp) while the\n"
    " * grid would give fewer than two blocks to each multiprocessor, so a\n"
    " * kernel of few rows spreads over the GPU instead of crowding a few SMs */\n"
    "static int spc_cu_block(int64_t n) {\n"
    "  static const int sms = [] {\n"
    "    int d = 0, m = 0;\n"
    "    if (cudaGetDevice(&d) != cudaSuccess ||\n"
    "        cudaDeviceGetAttribute(&m, cudaDevAttrMultiProcessorCount, d) != cudaSuccess || m < 1)\n"
    "      m = 1;\n"
    "    return m;\n"
    "  }();\n"
    "  int b = 256;\n"
    "  while (b > 32 && n < (int64_t)b * 2 * sms) b /= 2;\n"
    "  return b;\n"
    "}\n"
    "/* SPC_CU_AUTO's schedule for n top positions over P level-1 positions\n"
    " * and nv values, the widest top position holding `widest` level-1\n"
    " * positions (-1: not known, an unprepared matrix): 3, the split by\n"
    " * warps, where the mean is over 256 (few long top positions: dia, ell)\n"
    " * or one top position holds 1024 or more and over 16 means (skewed rows:\n"
    " * R-MAT, arrow); 1, lanes, from 32 values a top position (bcsr's blocks\n"
    " * count whole); else 0, thread.  Measured on an H200 (bench/README.md\n"
    " * \"GPU\"). */\n"
    "static int spc_cu_auto(int64_t n, int64_t P, int64_t nv, int64_t widest) {\n"
    "  double mean = n > 0 ? (double)P / (double)n : 0, work = n > 0 ? (double)nv / (double)n : 0;\n"
    "  if (mean > 256 || (widest >= 1024 && (double)widest > 16 * mean)) return 3;\n"
    "  return work >= 32 ? 1 : 0;\n"
    "}\n"
    "/* schedule 3's window: level-1 positions per warp */\n"
    "#define SPC_CU_WSPLIT_W 1024\n"
    "/* SpGEMM with nl lanes per row (spgemm_run): out[r] = in[r nl], r in [0, n] */\n"
    "static __global__ void spc_cu_pick(const int64_t *in, int64_t nl, int64_t *out, int64_t n) {\n"
    "  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r <= n) out[r] = in[r * nl];\n"
    "}\n"
    "/* the runs of entries [0, nt) sorted by column within rows (row r:\n"
    " * [ro[r], ro[r+1])): h[i] = 1 where a run of one column starts (h[nt] = 0) */\n"
    "static __global__ void spc_cu_heads(const int64_t *c, int64_t nt, int64_t *h) {\n"
    "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i <= nt) h[i] = i < nt && (i == 0 || c[i] != c[i - 1]);\n"
    "}\n"
    "static __global__ void spc_cu_row_heads(const int64_t *ro, int64_t n, int64_t *h) {\n"
    "  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r < n && ro[r] < ro[r + 1]) h[ro[r]] = 1;\n"
    "}\n"
    "/* each run's values added in their order, written at x[i] (the heads'\n"
    " * exclusive sum) */\n"
    "static __global__ void spc_cu_runs_sum(const int64_t *c, const double *v, const int64_t *h,\n"
    "                                       const int64_t *x, int64_t nt, int64_t *cc, double *cv) {\n"
    "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= nt || !h[i]) return;\n"
    "  double a = v[i];\n"
    "  for (int64_t k = i + 1; k < nt && !h[k]; k++) a += v[k];\n"
    "  cc[x[i]] = c[i];\n"
    "  cv[x[i]] = a;\n"
    "}\n"
    "/* cpos[r] = x[ro[r]], r in [0, n] */\n"
    "static __global__ void spc_cu_row_starts(const int64_t *ro, const int64_t *x, int64_t *cpos, int64_t n) {\n"
    "  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (r <= n) cpos[r] = x[ro[r]];\n"
    "}\n"
    "#define SPC_CU_CHECK(x)                                                     \\\n"
    "  do {                                                                      \\\n"
    "    cudaError_t spc_cu_e = (x);                                             \\\n"
    "    if (spc_cu_e != cudaSuccess) return (int)spc_cu_e;                      \\\n"
    "  } while (0)\n"
    "#endif\n\n";

typedef struct cu_text {
  cu_build C;
  spc_str *o;
  const char *fn; /* the format's name as an identifier */
  int narr;
} cu_text;

static spc_status emit_dev(cu_text *T, const char *atomic, spc_error *e) {
  ir_emit_opts eo = {.qualifier = "static __device__ ", .atomic_array = atomic};
  spc_status s = ir_emit_cuda_check(T->C.f, e);
  return s ? s : ir_emit_c(T->C.f, &eo, T->o, e);
}

/* The table's array names, and SPC_CU_<F>_ARGS(M): a matrix's arrays as
 * the device functions' arguments. */
static void arrays(cu_text *T, const char *kind) {
  const conv_info *I = &T->C.I;
  spc_str *o = T->o;
  spc_str_addf(o, "#define SPC_CU_%s_%s_ARGS(M) ", T->fn, kind);
  int k = 0;
  for (int l = 0; l < I->nlevels; l++)
    for (int a = 0; a < I->lv[l]->lf->narrays; a++, k++) spc_str_addf(o, "(M).arr[%d], (M).len[%d], ", k, k);
  spc_str_addf(o, "(M).vals, (M).nvals, (M).ext, (M).next\n");
  T->narr = k;
}

static void table_arrays(cu_text *T) {
  const conv_info *I = &T->C.I;
  spc_str_addf(T->o, "    %d,\n    {", T->narr);
  for (int l = 0; l < I->nlevels; l++)
    for (int a = 0; a < I->lv[l]->lf->narrays; a++)
      spc_str_addf(T->o, "\"%d:%s\", ", l, I->lv[l]->lf->arrays[a].name);
  spc_str_addf(T->o, "NULL},\n");
}

static void spmv_kernels(cu_text *T) {
  const char *F = T->fn;
  spc_str *o = T->o;
  bool row = T->C.rowmode;
  /* the position splits (2, 3) find a window's top positions by binary
   * searches over level 1's begin and end: they need its segments in the
   * top positions' order, which every built-in level keeps and a user's
   * level need not (on the CPU, segs_in_order checks each matrix): for a
   * user's level they run as schedule 1 */
  const spc_format_spec *fs = T->C.I.fmt;
  const char *unsplit =
      fs->nlevels > 1 && !spc_level_spec_builtin(fs->lv[1].lf)
          ? "  /* level 1 is a user's level: its segments need not lie in the top positions'\n"
            "   * order, which the position splits' binary searches need: schedule 1 instead */\n"
            "  if (schedule == 2 || schedule == 3) schedule = 1;\n"
          : "";
  spc_str_addf(o,
               "\n/* the top level's positions [b[0], b[1]) and the level-1 positions\n"
               " * under them [b[2], b[3]) */\n"
               "static __device__ void spc_cu_%s_bounds_of(spc_cu_mat A, int64_t *b) {\n"
               "  int64_t x = 0;\n"
               "  spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 0, 0, &b[0], &b[1], NULL, 0);\n"
               "  b[2] = b[3] = 0;\n"
               "  if (b[0] < b[1]) {\n"
               "    spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 1, b[0], &b[2], &x, NULL, 0);\n"
               "    spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 1, b[1] - 1, &x, &b[3], NULL, 0);\n"
               "  }\n"
               "}\n"
               "__global__ void spc_cu_%s_bounds(spc_cu_mat A, int64_t *b) { spc_cu_%s_bounds_of(A, b); }\n\n",
               F, F, F, F, F, F, F, F, F);
  spc_str_addf(o,
               "/* schedule 0: one thread per top-level position */\n"
               "__global__ void spc_cu_%s_spmv_thread(spc_cu_mat A, int64_t b0, int64_t e0,\n"
               "                                      const double *x, int64_t nx, double *y, int64_t ny) {\n"
               "  int64_t q = b0 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (q >= e0) return;\n"
               "  double acc = 0;\n"
               "  int64_t yrow = 0;\n"
               "  bool hit = false;\n"
               "  spc_cu_%s_spmv(SPC_CU_%s_SPMV_ARGS(A), x, nx, y, ny, y, ny, q, q + 1, INT64_MIN,\n"
               "                 INT64_MAX, 0, 1, true, &acc, &yrow, &hit, NULL, 0);\n"
               "}\n\n",
               F, F, F);
  spc_str_addf(o,
               "/* schedule 1: a group of L lanes per top-level position (L a power of\n"
               " * two, at most a warp: the launcher picks the least L at or above a\n"
               " * quarter of the mean level-1 positions per top position); lanes\n"
               " * stride its level-1 positions */\n"
               "__global__ void spc_cu_%s_spmv_warp(spc_cu_mat A, int64_t b0, int64_t e0, int L,\n"
               "                                    const double *x, int64_t nx, double *y, int64_t ny) {\n"
               "  int64_t q = b0 + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / L;\n"
               "  int lane = threadIdx.x & (L - 1);\n"
               "  double acc = 0;\n"
               "  int64_t yrow = 0;\n"
               "  bool hit = false;\n"
               "  if (q < e0) /* past the end, lanes still take part in the shuffles */\n"
               "    spc_cu_%s_spmv(SPC_CU_%s_SPMV_ARGS(A), x, nx, y, ny, y, ny, q, q + 1, INT64_MIN,\n"
               "                   INT64_MAX, lane, L, false, &acc, &yrow, &hit, NULL, 0);\n",
               F, F, F);
  if (row)
    spc_str_addf(o, "  for (int d = L / 2; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d, L);\n"
                    "  if (lane == 0 && hit) y[yrow] += acc;\n");
  else
    spc_str_addf(o, "  (void)acc;\n  (void)yrow;\n  (void)hit;\n");
  spc_str_addf(o, "}\n\n");
  spc_str_addf(o,
               "/* the top positions reaching into the level-1 window [p0, p1): [*qa, *qe),\n"
               " * by two binary searches over the level's begin and end (schedules 2, 3) */\n"
               "static __device__ void spc_cu_%s_window(const spc_cu_mat &A, int64_t b0, int64_t e0, int64_t p0,\n"
               "                                        int64_t p1, int64_t *qa, int64_t *qe) {\n"
               "  int64_t lo = b0, hi = e0, mb = 0, me = 0;\n"
               "  while (lo < hi) { /* the first top position ending after p0 */\n"
               "    int64_t m = lo + (hi - lo) / 2;\n"
               "    spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 1, m, &mb, &me, NULL, 0);\n"
               "    if (me <= p0) lo = m + 1; else hi = m;\n"
               "  }\n"
               "  *qa = lo;\n"
               "  hi = e0;\n"
               "  while (lo < hi) { /* the first top position beginning at p1 or later */\n"
               "    int64_t m = lo + (hi - lo) / 2;\n"
               "    spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 1, m, &mb, &me, NULL, 0);\n"
               "    if (mb < p1) lo = m + 1; else hi = m;\n"
               "  }\n"
               "  *qe = lo;\n"
               "}\n\n",
               F, F, F, F, F);
  spc_str_addf(o,
               "/* schedule 2: thread t takes the level-1 positions [p0, p1), the t-th\n"
               " * of nt equal windows of [b[2], b[3]) */\n"
               "__global__ void spc_cu_%s_spmv_split(spc_cu_mat A, int64_t b0, int64_t e0, int64_t b2,\n"
               "                                     int64_t b3, int64_t nt, const double *x, int64_t nx,\n"
               "                                     double *y, int64_t ny) {\n"
               "  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (t >= nt) return;\n"
               "  int64_t P = b3 - b2;\n"
               "  int64_t chunk = (P + nt - 1) / nt;\n"
               "  int64_t p0 = b2 + (t * chunk < P ? t * chunk : P);\n"
               "  int64_t p1 = b2 + ((t + 1) * chunk < P ? (t + 1) * chunk : P);\n"
               "  if (p0 >= p1) return;\n"
               "  int64_t qa, lo;\n"
               "  spc_cu_%s_window(A, b0, e0, p0, p1, &qa, &lo);\n"
               "  double acc = 0;\n"
               "  int64_t yrow = 0;\n"
               "  bool hit = false;\n"
               "  spc_cu_%s_spmv(SPC_CU_%s_SPMV_ARGS(A), x, nx, y, ny, y, ny, qa, lo, p0, p1, 0, 1,\n"
               "                 true, &acc, &yrow, &hit, NULL, 0);\n"
               "}\n\n",
               F, F, F, F);
  spc_str_addf(o,
               "/* schedule 3: position split by warps: warp w takes the level-1\n"
               " * positions [p0, p1), the w-th window of W of [b2, b3), and the top\n"
               " * positions reaching into it.  Its lanes form groups of L (a power of\n"
               " * two, the least at or above a quarter of the window's positions per top\n"
               " * position), each group one top position at a time, its lanes striding\n"
               " * the position's level-1 positions in the window (adjacent lanes read\n"
               " * adjacent entries); a group's lane 0 adds its sum to y atomically, as a\n"
               " * row crossing a window's border is shared */\n"
               "__global__ void spc_cu_%s_spmv_wsplit(spc_cu_mat A, int64_t b0, int64_t e0, int64_t b2,\n"
               "                                      int64_t b3, int64_t W, const double *x, int64_t nx,\n"
               "                                      double *y, int64_t ny) {\n"
               "  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;\n"
               "  int lane = threadIdx.x & 31;\n"
               "  int64_t p0 = b2 + w * W;\n"
               "  if (p0 >= b3) return; /* the whole warp: blocks are whole warps */\n"
               "  int64_t p1 = p0 + W < b3 ? p0 + W : b3;\n"
               "  int64_t qa, lo;\n"
               "  spc_cu_%s_window(A, b0, e0, p0, p1, &qa, &lo);\n"
               "  int L = 1;\n"
               "  while (L < 32 && 4 * L * (lo - qa) < p1 - p0) L *= 2;\n"
               "  int g = lane / L, sub = lane & (L - 1), ng = 32 / L;\n"
               "  for (int64_t base = qa; base < lo; base += ng) { /* the same trips for the warp */\n"
               "    int64_t q = base + g;\n"
               "    double acc = 0;\n"
               "    int64_t yrow = 0;\n"
               "    bool hit = false;\n"
               "    if (q < lo)\n"
               "      spc_cu_%s_spmv(SPC_CU_%s_SPMV_ARGS(A), x, nx, y, ny, y, ny, q, q + 1, p0, p1, sub, L,\n"
               "                     false, &acc, &yrow, &hit, NULL, 0);\n",
               F, F, F, F);
  if (row)
    spc_str_addf(o, "    for (int d = L / 2; d > 0; d /= 2) acc += __shfl_down_sync(0xffffffffu, acc, d, L);\n"
                    "    if (sub == 0 && hit) atomicAdd(&y[yrow], acc);\n");
  else
    spc_str_addf(o, "    (void)acc;\n    (void)yrow;\n    (void)hit;\n");
  spc_str_addf(o, "  }\n}\n\n");
  spc_str_addf(o,
               "/* A's bounds into b (host memory), through a device buffer kept per host\n"
               " * thread and device (a cudaMalloc and a cudaFree per call cost more than a\n"
               " * small SpMV) */\n"
               "static int spc_cu_%s_bounds_host(const spc_cu_mat *A, int64_t b[4]) {\n"
               "  static thread_local int64_t *bdk = NULL;\n"
               "  static thread_local int bdev = -1;\n"
               "  int dev = 0;\n"
               "  SPC_CU_CHECK(cudaGetDevice(&dev));\n"
               "  if (!bdk || bdev != dev) {\n"
               "    int64_t *bd = NULL;\n"
               "    SPC_CU_CHECK(cudaMalloc(&bd, 4 * sizeof *bd));\n"
               "    bdk = bd;\n"
               "    bdev = dev;\n"
               "  }\n"
               "  spc_cu_%s_bounds<<<1, 1>>>(*A, bdk);\n"
               "  return (int)cudaMemcpy(b, bdk, 4 * sizeof *b, cudaMemcpyDeviceToHost);\n"
               "}\n\n"
               "/* *w = max(*w, the level-1 positions under each top position in [b0, e0)):\n"
               " * a grid-stride loop, a warp's maximum by shuffles, one atomicMax a warp */\n"
               "__global__ void spc_cu_%s_widest(spc_cu_mat A, int64_t b0, int64_t e0, unsigned long long *w) {\n"
               "  unsigned long long m = 0;\n"
               "  int64_t step = (int64_t)gridDim.x * blockDim.x;\n"
               "  for (int64_t q = b0 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < e0; q += step) {\n"
               "    int64_t pb = 0, pe = 0;\n"
               "    spc_cu_%s_range(SPC_CU_%s_SPMV_ARGS(A), 1, q, &pb, &pe, NULL, 0);\n"
               "    if (pe > pb && (unsigned long long)(pe - pb) > m) m = (unsigned long long)(pe - pb);\n"
               "  }\n"
               "  for (int d = 16; d > 0; d /= 2) {\n"
               "    unsigned long long o = __shfl_xor_sync(0xffffffffu, m, d);\n"
               "    if (o > m) m = o;\n"
               "  }\n"
               "  if ((threadIdx.x & 31) == 0) atomicMax(w, m);\n"
               "}\n\n"
               "static int spc_cu_%s_spmv_prepare(spc_cu_mat *A) {\n"
               "  int64_t b[4];\n"
               "  int st = spc_cu_%s_bounds_host(A, b);\n"
               "  if (st) return st;\n"
               "  unsigned long long wd = 0, *dw = NULL;\n"
               "  if (b[1] > b[0]) {\n"
               "    SPC_CU_CHECK(cudaMalloc(&dw, sizeof *dw));\n"
               "    cudaError_t ce = cudaMemset(dw, 0, sizeof *dw);\n"
               "    int64_t n = b[1] - b[0], nb = (n + 255) / 256;\n"
               "    if (nb > 4096) nb = 4096;\n"
               "    if (ce == cudaSuccess) {\n"
               "      spc_cu_%s_widest<<<(unsigned)nb, 256>>>(*A, b[0], b[1], dw);\n"
               "      ce = cudaGetLastError();\n"
               "    }\n"
               "    if (ce == cudaSuccess) ce = cudaMemcpy(&wd, dw, sizeof wd, cudaMemcpyDeviceToHost);\n"
               "    cudaFree(dw);\n"
               "    SPC_CU_CHECK(ce);\n"
               "  }\n"
               "  memcpy(A->bounds, b, sizeof b);\n"
               "  A->widest = (int64_t)wd;\n"
               "  A->bounds_set = 1;\n"
               "  return 0;\n"
               "}\n\n"
               "static int spc_cu_%s_spmv_run(int schedule, const spc_cu_mat *A, const double *x,\n"
               "                              int64_t nx, double *y, int64_t ny) {\n"
               "  int64_t b[4] = {0, 0, 0, 0};\n"
               "  int st = 0;\n"
               "  if (A->bounds_set)\n"
               "    memcpy(b, A->bounds, sizeof b);\n"
               "  else\n"
               "    st = spc_cu_%s_bounds_host(A, b);\n"
               "  int64_t n = b[1] - b[0], P = b[3] - b[2];\n"
               "  if (schedule == SPC_CU_AUTO) schedule = spc_cu_auto(n, P, A->nvals, A->bounds_set ? A->widest : -1);\n"
               "%s"
               "  if (st == 0 && n > 0) {\n"
               "    if (schedule == 0) {\n"
               "      int bs = spc_cu_block(n);\n"
               "      spc_cu_%s_spmv_thread<<<(unsigned)((n + bs - 1) / bs), bs>>>(*A, b[0], b[1], x, nx, y, ny);\n"
               "    } else if (schedule == 1) {\n"
               "      int L = 1; /* each lane about four positions */\n"
               "      while (L < 32 && 4 * L * n < P) L *= 2;\n"
               "      int bs = spc_cu_block(L * n); /* a multiple of L: both powers of two, L <= 32 */\n"
               "      spc_cu_%s_spmv_warp<<<(unsigned)((L * n + bs - 1) / bs), bs>>>(*A, b[0], b[1], L, x, nx, y, ny);\n"
               "    } else if (schedule == 2) {\n"
               "      int64_t nt = P / 64 + 1;\n"
               "      if (nt > (1 << 20)) nt = 1 << 20;\n"
               "      int bs = spc_cu_block(nt);\n"
               "      spc_cu_%s_spmv_split<<<(unsigned)((nt + bs - 1) / bs), bs>>>(*A, b[0], b[1], b[2], b[3], nt,\n"
               "                                                                   x, nx, y, ny);\n"
               "    } else if (schedule == 3) {\n"
               "      int64_t W = SPC_CU_WSPLIT_W, nw = (P + W - 1) / W;\n"
               "      if (nw > 0) {\n"
               "        int bs = spc_cu_block(32 * nw); /* whole warps */\n"
               "        spc_cu_%s_spmv_wsplit<<<(unsigned)((32 * nw + bs - 1) / bs), bs>>>(*A, b[0], b[1], b[2], b[3],\n"
               "                                                                        W, x, nx, y, ny);\n"
               "      }\n"
               "    } else {\n"
               "      return (int)cudaErrorInvalidValue;\n"
               "    }\n"
               "    cudaError_t ce = cudaGetLastError();\n"
               "    if (ce == cudaSuccess) ce = cudaDeviceSynchronize();\n"
               "    st = (int)ce;\n"
               "  }\n"
               "  return st;\n"
               "}\n\n"
               "extern \"C\" const spc_cu_spmv_kernels spc_cu_spmv_%s = {\n    \"%s\",\n",
               F, F, F, F, F, F, F, F, F, F, unsplit, F, F, F, F, F, T->C.I.fmt->name);
  table_arrays(T);
  spc_str_addf(o, "    spc_cu_%s_spmv_run,\n    spc_cu_%s_spmv_prepare};\n", F, F);
}

static void spgemm_kernels(cu_text *T) {
  const char *F = T->fn;
  spc_str *o = T->o;
  static const char *const pass[] = {"ub", "sym", "num"};
  for (int k = 0; k < 3; k++) {
    spc_str_addf(o,
                 "\n/* nl threads (lanes) per top position of A */\n"
                 "__global__ void spc_cu_%s_spgemm_%s_k(spc_cu_mat A, spc_cu_mat B, int64_t b0, int64_t e0,\n"
                 "                                       int64_t nl, int64_t *w0, int64_t n0, int64_t *w1,\n"
                 "                                       int64_t n1, double *hv, int64_t nh, int64_t *cpos,\n"
                 "                                       int64_t ncp, int64_t *ccrd, double *cval, int64_t nc) {\n"
                 "  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  int64_t q = b0 + t / nl, lane = t %% nl;\n"
                 "  if (q >= e0) return;\n",
                 F, pass[k]);
    if (k == 0)
      spc_str_addf(o, "  (void)w1, (void)n1, (void)hv, (void)nh, (void)cpos, (void)ncp, (void)ccrd, (void)cval, (void)nc;\n"
                      "  spc_cu_%s_spgemm_ub(SPC_CU_%s_A_ARGS(A), SPC_CU_%s_A_ARGS(B), q, lane, nl, w0, n0, NULL, 0);\n",
                   F, F, F);
    else if (k == 1)
      spc_str_addf(o, "  (void)hv, (void)nh, (void)cpos, (void)ncp, (void)ccrd, (void)cval, (void)nc;\n"
                      "  spc_cu_%s_spgemm_sym(SPC_CU_%s_A_ARGS(A), SPC_CU_%s_A_ARGS(B), q, lane, nl, w0, n0, w1,\n"
                      "                       n1, cpos, ncp, NULL, 0);\n",
                   F, F, F);
    else
      spc_str_addf(o, "  spc_cu_%s_spgemm_num(SPC_CU_%s_A_ARGS(A), SPC_CU_%s_A_ARGS(B), q, lane, nl, w0, n0, w1,\n"
                      "                       n1, hv, nh, cpos, ncp, ccrd, nc, cval, nc, NULL, 0);\n",
                   F, F, F);
    spc_str_addf(o, "}\n");
  }
  spc_str_addf(o,
               "\n__global__ void spc_cu_%s_top(spc_cu_mat A, int64_t *b) {\n"
               "  spc_cu_%s_grange(SPC_CU_%s_A_ARGS(A), 0, 0, &b[0], &b[1], NULL, 0);\n"
               "}\n\n"
               "/* in[0..n) -> out[0..n]: exclusive sum, out[n] the total (host copy) */\n"
               "static int spc_cu_%s_scan(const int64_t *in, int64_t *out, int64_t n, int64_t *total) {\n"
               "  void *tmp = NULL;\n"
               "  size_t bytes = 0;\n"
               "  SPC_CU_CHECK(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n + 1));\n"
               "  SPC_CU_CHECK(cudaMalloc(&tmp, bytes ? bytes : 1));\n"
               "  cudaError_t st = cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n + 1);\n"
               "  cudaFree(tmp);\n"
               "  SPC_CU_CHECK(st);\n"
               "  return (int)cudaMemcpy(total, out + n, sizeof *total, cudaMemcpyDeviceToHost);\n"
               "}\n\n",
               F, F, F, F);
  spc_str_addf(o,
               "/* The passes with nl lanes per row: one lane where the rows are enough\n"
               " * to fill the GPU (2^15 or more) or have fewer than 256 products on\n"
               " * average (counted by a first one-lane bounds pass); else lanes (a power\n"
               " * of two up to a warp) while the threads stay under 2^17, the rows' lane\n"
               " * slots under 2^22, and each lane has 32 products or more on average.\n"
               " * With lanes, a row's lanes leave nl sorted runs whose columns may\n"
               " * repeat: a stable segmented sort per row, then the repeats added in\n"
               " * lane order (spc_cu_heads .. spc_cu_row_starts: entry-parallel).  The environment's\n"
               " * SPC_CU_SPGEMM_LANES (1..32) sets nl, for tests. */\n"
               "static int spc_cu_%s_spgemm_run(const spc_cu_mat *A, const spc_cu_mat *B, int64_t nrows,\n"
               "                                int64_t *cpos, int64_t **ccrd, double **cval, int64_t *nnz) {\n"
               "  int64_t *bd = NULL, *ub = NULL, *off = NULL, *keys = NULL, *cnt = NULL, *cps = NULL, b[2], total = 0;\n"
               "  int64_t *ro = NULL, *c1 = NULL, *c2 = NULL, nt = 0;\n"
               "  double *hv = NULL, *v1 = NULL, *v2 = NULL;\n"
               "  void *tmp = NULL;\n"
               "  *ccrd = NULL;\n"
               "  *cval = NULL;\n"
               "  *nnz = 0;\n"
               "  cudaError_t st = cudaMalloc(&bd, 2 * sizeof *bd);\n"
               "  if (!st) spc_cu_%s_top<<<1, 1>>>(*A, bd);\n"
               "  if (!st) st = cudaMemcpy(b, bd, sizeof b, cudaMemcpyDeviceToHost);\n"
               "  int64_t n = st ? 0 : b[1] - b[0], nl = 1;\n"
               "  int bs = spc_cu_block(n);\n"
               "  unsigned g = (unsigned)((n + bs - 1) / bs + 1);\n"
               "  size_t rb = (size_t)(nrows + 1) * sizeof(int64_t);\n"
               "  if (!st) st = cudaMalloc(&ub, rb);\n"
               "  if (!st) st = cudaMalloc(&off, rb);\n"
               "  if (!st) st = cudaMemset(ub, 0, rb);\n"
               "  if (!st) spc_cu_%s_spgemm_ub_k<<<g, bs>>>(*A, *B, b[0], b[1], 1, ub, nrows + 1, NULL, 0,\n"
               "                                         NULL, 0, NULL, 0, NULL, NULL, 0);\n"
               "  if (!st) st = cudaGetLastError();\n"
               "  if (!st) st = (cudaError_t)spc_cu_%s_scan(ub, off, nrows, &total);\n"
               "  if (!st && n > 0 && n < ((int64_t)1 << 15) && total / n >= 256)\n"
               "    while (nl < 32 && n * nl < ((int64_t)1 << 17) && 32 * nl < total / n &&\n"
               "           nrows * nl < ((int64_t)1 << 22)) /* hypersparse: nrows >> n */\n"
               "      nl *= 2;\n"
               "  const char *force = getenv(\"SPC_CU_SPGEMM_LANES\"); /* tests: 1 2 4 .. 32 */\n"
               "  if (force && atoi(force) >= 1 && atoi(force) <= 32) nl = atoi(force);\n"
               "  int64_t ns = nrows * nl;\n"
               "  size_t sb = (size_t)(ns + 1) * sizeof(int64_t);\n"
               "  if (!st && nl > 1) { /* the lanes' own bounds */\n"
               "    cudaFree(ub);\n"
               "    cudaFree(off);\n"
               "    ub = off = NULL;\n"
               "    bs = spc_cu_block(n * nl);\n"
               "    g = (unsigned)((n * nl + bs - 1) / bs + 1);\n"
               "    st = cudaMalloc(&ub, sb);\n"
               "    if (!st) st = cudaMalloc(&off, sb);\n"
               "    if (!st) st = cudaMemset(ub, 0, sb);\n"
               "    if (!st) spc_cu_%s_spgemm_ub_k<<<g, bs>>>(*A, *B, b[0], b[1], nl, ub, ns + 1, NULL, 0,\n"
               "                                           NULL, 0, NULL, 0, NULL, NULL, 0);\n"
               "    if (!st) st = cudaGetLastError();\n"
               "    if (!st) st = (cudaError_t)spc_cu_%s_scan(ub, off, ns, &total);\n"
               "  }\n"
               "  if (!st) st = cudaMalloc(&cnt, sb);\n"
               "  if (!st) st = cudaMemset(cnt, 0, sb);\n"
               "  if (!st) st = cudaMalloc(&keys, (size_t)(total ? total : 1) * sizeof *keys);\n"
               "  if (!st) st = cudaMalloc(&hv, (size_t)(total ? total : 1) * sizeof *hv);\n"
               "  if (!st) st = cudaMemset(keys, 0xff, (size_t)total * sizeof *keys); /* -1: empty */\n"
               "  if (!st) spc_cu_%s_spgemm_sym_k<<<g, bs>>>(*A, *B, b[0], b[1], nl, off, ns + 1, keys, total,\n"
               "                                          NULL, 0, cnt, ns + 1, NULL, NULL, 0);\n"
               "  if (!st) st = cudaGetLastError();\n"
               "  if (!st && nl > 1) st = cudaMalloc(&cps, sb);\n"
               "  if (!st) st = (cudaError_t)spc_cu_%s_scan(cnt, nl > 1 ? cps : cpos, ns, &nt);\n"
               "  if (!st) st = cudaMalloc(&c1, (size_t)(nt ? nt : 1) * sizeof *c1);\n"
               "  if (!st) st = cudaMalloc(&v1, (size_t)(nt ? nt : 1) * sizeof *v1);\n"
               "  if (!st) st = cudaMemset(keys, 0xff, (size_t)total * sizeof *keys);\n"
               "  if (!st) spc_cu_%s_spgemm_num_k<<<g, bs>>>(*A, *B, b[0], b[1], nl, off, ns + 1, keys, total,\n"
               "                                          hv, total, nl > 1 ? cps : cpos, ns + 1, c1, v1, nt);\n"
               "  if (!st) st = cudaGetLastError();\n"
               "  if (!st && nl == 1) {\n"
               "    *nnz = nt;\n"
               "    *ccrd = c1;\n"
               "    *cval = v1;\n"
               "    c1 = NULL;\n"
               "    v1 = NULL;\n"
               "  } else if (!st) { /* each row's nl sorted runs into one */\n"
               "    size_t bytes = 0;\n"
               "    unsigned gr = (unsigned)((nrows + 256) / 256);\n"
               "    st = cudaMalloc(&ro, rb);\n"
               "    if (!st) spc_cu_pick<<<gr, 256>>>(cps, nl, ro, nrows);\n"
               "    if (!st) st = cudaGetLastError();\n"
               "    if (!st) st = cudaMalloc(&c2, (size_t)(nt ? nt : 1) * sizeof *c2);\n"
               "    if (!st) st = cudaMalloc(&v2, (size_t)(nt ? nt : 1) * sizeof *v2);\n"
               "    if (!st) st = cub::DeviceSegmentedSort::StableSortPairs(tmp, bytes, c1, c2, v1, v2, nt, nrows,\n"
               "                                                           ro, ro + 1);\n"
               "    if (!st) st = cudaMalloc(&tmp, bytes ? bytes : 1);\n"
               "    if (!st) st = cub::DeviceSegmentedSort::StableSortPairs(tmp, bytes, c1, c2, v1, v2, nt, nrows,\n"
               "                                                           ro, ro + 1);\n"
               "    /* the runs of one column: heads, their exclusive sum, sums */\n"
               "    int64_t *h = NULL, *x = NULL;\n"
               "    unsigned ge = (unsigned)((nt + 256) / 256);\n"
               "    if (!st) st = cudaMalloc(&h, (size_t)(nt + 1) * sizeof *h);\n"
               "    if (!st) st = cudaMalloc(&x, (size_t)(nt + 1) * sizeof *x);\n"
               "    if (!st) spc_cu_heads<<<ge, 256>>>(c2, nt, h);\n"
               "    if (!st) spc_cu_row_heads<<<gr, 256>>>(ro, nrows, h);\n"
               "    if (!st) st = cudaGetLastError();\n"
               "    if (!st) st = (cudaError_t)spc_cu_%s_scan(h, x, nt, nnz);\n"
               "    if (!st) st = cudaMalloc(ccrd, (size_t)(*nnz ? *nnz : 1) * sizeof **ccrd);\n"
               "    if (!st) st = cudaMalloc(cval, (size_t)(*nnz ? *nnz : 1) * sizeof **cval);\n"
               "    if (!st) spc_cu_runs_sum<<<ge, 256>>>(c2, v2, h, x, nt, *ccrd, *cval);\n"
               "    if (!st) spc_cu_row_starts<<<gr, 256>>>(ro, x, cpos, nrows);\n"
               "    if (!st) st = cudaGetLastError();\n"
               "    if (!st) st = cudaDeviceSynchronize();\n"
               "    cudaFree(h);\n"
               "    cudaFree(x);\n"
               "  }\n"
               "  if (!st) st = cudaDeviceSynchronize();\n"
               "  cudaFree(bd);\n"
               "  cudaFree(ub);\n"
               "  cudaFree(off);\n"
               "  cudaFree(cnt);\n"
               "  cudaFree(cps);\n"
               "  cudaFree(keys);\n"
               "  cudaFree(hv);\n"
               "  cudaFree(ro);\n"
               "  cudaFree(c1);\n"
               "  cudaFree(v1);\n"
               "  cudaFree(c2);\n"
               "  cudaFree(v2);\n"
               "  cudaFree(tmp);\n"
               "  if (st) {\n"
               "    cudaFree(*ccrd);\n"
               "    cudaFree(*cval);\n"
               "    *ccrd = NULL;\n"
               "    *cval = NULL;\n"
               "  }\n"
               "  return (int)st;\n"
               "}\n\n"
               "extern \"C\" const spc_cu_spgemm_kernels spc_cu_spgemm_%s = {\n    \"%s\",\n    %d,\n",
               F, F, F, F, F, F, F, F, F, F, F, T->C.I.fmt->name, T->C.iv[0].a != 0);
  table_arrays(T);
  spc_str_addf(o, "    spc_cu_%s_spgemm_run};\n", F);
}

static spc_status gen_spmv(cu_text *T, spc_error *e) {
  char name[160];
  snprintf(name, sizeof name, "spc_cu_%s_spmv", T->fn);
  spc_status s = cu_build_init(&T->C, T->C.I.fmt, name, e);
  if (!s) s = cu_build_spmv(&T->C, e);
  if (!s) arrays(T, "SPMV");
  if (!s) s = emit_dev(T, "ya", e);
  snprintf(name, sizeof name, "spc_cu_%s_range", T->fn);
  if (!s) s = cu_build_next(&T->C, name, e);
  if (!s) s = cu_build_range(&T->C, e);
  if (!s) s = emit_dev(T, NULL, e);
  if (!s) spmv_kernels(T);
  return s;
}

static spc_status gen_spgemm(cu_text *T, spc_error *e) {
  static const char *const pass[] = {"ub", "sym", "num"};
  char name[160];
  snprintf(name, sizeof name, "spc_cu_%s_grange", T->fn);
  spc_status s = cu_build_init(&T->C, T->C.I.fmt, name, e);
  if (!s && !cu_spgemm_ok(&T->C))
    s = spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                "CUDA SpGEMM needs a format of two levels whose top level is unique and "
                "can locate (csr, csc, dcsr, dcsc, csf, sky, dense); %s is not one",
                T->C.I.fmt->name);
  if (!s) s = cu_build_range(&T->C, e);
  if (!s) arrays(T, "A");
  if (!s) s = emit_dev(T, NULL, e);
  for (int k = 0; k < 3 && !s; k++) {
    snprintf(name, sizeof name, "spc_cu_%s_spgemm_%s", T->fn, pass[k]);
    s = cu_build_next(&T->C, name, e);
    if (!s) s = cu_build_spgemm(&T->C, k, e);
    if (!s) s = emit_dev(T, NULL, e);
  }
  if (!s) spgemm_kernels(T);
  return s;
}

spc_status spc_gen_cuda_source(const char *format, const char *kernel,
                               const spc_convert_opts *o, char **text, spc_error *e) {
  const spc_specs *reg;
  spc_specs *own = NULL;
  const spc_format_spec *fmt = NULL;
  spc_str out = {0};
  char fn[96];
  *text = NULL;
  bool spmv = kernel && !strcmp(kernel, "spmv"), spgemm = kernel && !strcmp(kernel, "spgemm");
  if (!spmv && !spgemm)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "CUDA kernel '%s': expected spmv or spgemm",
                   kernel ? kernel : "(none)");
  spc_status s = asm_resolve_format(format, o, &reg, &own, &fmt, e);
  if (s) return s;
  snprintf(fn, sizeof fn, "%s", fmt->name);
  for (char *p = fn; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
  cu_text T = {.o = &out, .fn = fn};
  T.C.I.fmt = fmt;
  spc_str_addf(&out,
               "/* %s_%s.cu -- CUDA %s kernels for matrix format %s, values double.\n"
               " * Generated by `spconv gen --cuda --kernel=%s --format=%s` (spconv %s)\n"
               " * from the format's read-side level functions, through the IR the CPU\n"
               " * kernels run.  Compile: nvcc -c --fmad=false -arch=sm_80 %s_%s.cu\n"
               " * Entry point: the extern \"C\" table spc_cu_%s_%s at the end. */\n",
               fn, kernel, kernel, fmt->name, kernel, format, SPCONV_VERSION, fn, kernel,
               kernel, fn);
  ir_emit_cuda_prelude(&out);
  spc_str_add(&out, cu_types, sizeof cu_types - 1);
  s = spmv ? gen_spmv(&T, e) : gen_spgemm(&T, e);
  cu_build_free(&T.C);
  spc_specs_free(&own);
  if (!s && out.failed) s = SPC_NOMEM(e);
  if (!s && !(*text = malloc(out.len + 1))) s = SPC_NOMEM(e);
  if (!s) memcpy(*text, out.s, out.len + 1);
  spc_str_free(&out);
  return s;
}
