/* test_cuda_emit.c -- suite_cuda: the CUDA emitter (README "CUDA").
 *
 *   emit       spc_gen_cuda_source for every built-in format: SpMV for every
 *              matrix format (four __global__ schedules, atomicAdd where
 *              rows are shared, a warp shuffle in row mode), SpGEMM for the
 *              two-level formats whose top level locates, refusals
 *              (SPC_ERR_UNSUPPORTED / SPC_ERR_ARG) otherwise; `spconv gen
 *              --cuda` end to end and its usage errors;
 *   nvcc       when nvcc is on PATH (SPC_NVCC overrides; skipped with a
 *              message otherwise): every emitted kernel of every format in
 *              ONE file, compiled by one `nvcc -c`;
 *   schedules  the device routines each GPU thread runs, run by the IR
 *              interpreter in the order the kernels would (thread per
 *              row, groups of L lanes with the shuffle's reduction tree, position
 *              windows of several sizes with the binary searches, a warp per
 *              window with its groups of lanes), on
 *              data/sample.mtx, shared matrices and a made-up matrix with
 *              empty and long rows, against spc_spmv (1e-12 of the row's
 *              sum |a x|); SpGEMM's three passes with the scans between
 *              them against spc_spgemm (structure exact, values within
 *              1e-12 of sum |a b|); SpMV also for a user's YAML format
 *              (csr_desc: an offset level).  No GPU needed: what the GPU adds is
 *              only the launch, atomics and shuffles around these. */
#include "assemble_cuda.h"
#include "spc_cuda_host.h"
#include "suites.h"
#include "testutil.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const spgemm_formats[] = {"csr", "csc", "dcsr", "dcsc", "sky", "dense", "csf", NULL};

static bool is_spgemm_format(const char *f) {
  for (int k = 0; spgemm_formats[k]; k++)
    if (!strcmp(f, spgemm_formats[k])) return true;
  return false;
}

static char *gen(const char *fmt, const char *kernel, spc_status *st) {
  char *text = NULL;
  spc_error e;
  spc_error_clear(&e);
  *st = spc_gen_cuda_source(fmt, kernel, NULL, &text, &e);
  if (*st) ck_assert_ptr_null(text);
  return text;
}

START_TEST(test_emit) {
  int nspmv = 0, nspgemm = 0;
  for (int k = 0; k < spc_format_count(); k++) {
    const char *f = spc_format_name(k);
    int order = spc_format_order(k);
    spc_status s;
    char *t = gen(f, "spmv", &s);
    if (order != 0 && order != 2) {
      ck_assert_int_eq(s, SPC_ERR_UNSUPPORTED);
      continue;
    }
    ck_assert_msg(s == SPC_OK, "%s spmv: %d", f, s);
    char want[160];
    static const char *const sched[] = {"thread", "warp", "split", "wsplit"};
    for (int j = 0; j < 4; j++) {
      snprintf(want, sizeof want, "__global__ void spc_cu_%s_spmv_%s(", f, sched[j]);
      ck_assert_msg(strstr(t, want), "%s: no %s", f, want);
    }
    snprintf(want, sizeof want, "__global__ void spc_cu_%s_widest(", f); /* prepare's */
    ck_assert_msg(strstr(t, want), "%s: no %s", f, want);
    ck_assert_ptr_nonnull(strstr(t, "if (schedule == SPC_CU_AUTO) schedule = spc_cu_auto("));
    snprintf(want, sizeof want, "static __device__ int spc_cu_%s_spmv(", f);
    ck_assert_msg(strstr(t, want), "%s: no device routine", f);
    ck_assert_ptr_nonnull(strstr(t, "atomicAdd(&ya["));
    ck_assert_msg(!strstr(t, "schedule = 1;"), "%s: built-in levels keep the position splits", f);
    bool row = !strcmp(f, "csr") || !strcmp(f, "dcsr") || !strcmp(f, "dense") || !strcmp(f, "sky") ||
               !strcmp(f, "csf");
    ck_assert_msg((strstr(t, "__shfl_down_sync") != NULL) == row, "%s: shuffle iff row mode", f);
    free(t);
    nspmv++;
    t = gen(f, "spgemm", &s);
    if (is_spgemm_format(f)) {
      ck_assert_msg(s == SPC_OK, "%s spgemm: %d", f, s);
      ck_assert_ptr_nonnull(strstr(t, "cub::DeviceScan::ExclusiveSum"));
      snprintf(want, sizeof want, "extern \"C\" const spc_cu_spgemm_kernels spc_cu_spgemm_%s", f);
      ck_assert_ptr_nonnull(strstr(t, want));
      nspgemm++;
    } else {
      ck_assert_msg(s == SPC_ERR_UNSUPPORTED, "%s spgemm: %d", f, s);
    }
    free(t);
  }
  ck_assert_int_ge(nspmv, 11);
  ck_assert_int_eq(nspgemm, 7);
  spc_status s;
  ck_assert_ptr_null(gen("csr", "spmm", &s));
  ck_assert_int_eq(s, SPC_ERR_ARG);
  ck_assert_ptr_null(gen("nosuch", "spmv", &s));
  ck_assert_int_eq(s, SPC_ERR_ARG);
  /* the command line */
  char *dir = tu_mkdtemp(), *out = tu_path(dir, "k.cu");
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "gen --cuda --kernel=spmv --format=csc -o %s", out), 0);
  tu_run_free(&r);
  size_t n = 0;
  char *text = tu_read_file(out, &n);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(strstr(text, "spc_cu_spmv_csc"));
  free(text);
  /* a user's level under CSR's dense: the position splits need its segments
   * in the rows' order, which it need not keep -- schedule 1 instead; a
   * user's format over built-in levels keeps them */
  char *lv = tu_path(dir, "ucompressed.yaml"), *fm = tu_path(dir, "csr_u.yaml"),
       *fb = tu_path(dir, "csr_b.yaml");
  size_t cl = 0;
  char *comp = tu_read_file("formats/specs/levels/compressed.yaml", &cl);
  if (comp) { /* compressed's text, renamed ucompressed */
    char *u = strstr(comp, "\nlevel: compressed\n"), *copy = malloc(cl + 2);
    ck_assert_ptr_nonnull(u);
    *u = 0;
    snprintf(copy, cl + 2, "%s\nlevel: ucompressed\n%s", comp, u + strlen("\nlevel: compressed\n"));
    ck_assert_int_eq(tu_write_str(lv, copy), 0);
    free(copy);
    free(comp);
    ck_assert_int_eq(tu_write_str(fm, "format: csr_u\norder: 2\nlevels: [dense, ucompressed]\n"), 0);
    ck_assert_int_eq(tu_write_str(fb, "format: csr_b\norder: 2\nlevels: [dense, compressed]\n"), 0);
    ck_assert_int_eq(tu_run(&r, "gen --cuda --kernel=spmv --format=%s --spec %s -o %s", fm, lv, out), 0);
    tu_run_free(&r);
    text = tu_read_file(out, &n);
    ck_assert_msg(text && strstr(text, "if (schedule == 2 || schedule == 3) schedule = 1;"),
                  "csr over a user's level: the position splits still run");
    /* no store checks in device code (a user's level functions get them on
     * the CPU: they call snprintf, which nvcc refuses in device code) */
    ck_assert_msg(!strstr(text, "out of bounds for"), "csr over a user's level: a checked store in device code");
    free(text);
    ck_assert_int_eq(tu_run(&r, "gen --cuda --kernel=spmv --format=%s -o %s", fb, out), 0);
    tu_run_free(&r);
    text = tu_read_file(out, &n);
    ck_assert_msg(text && !strstr(text, "schedule = 1;"), "csr_b over built-in levels lost the position splits");
    free(text);
  } else {
    printf("cuda emit: user level skipped (formats/specs/levels/compressed.yaml not found: run from the "
           "repository root)\n");
  }
  free(lv);
  free(fm);
  free(fb);
  ck_assert_int_eq(tu_run(&r, "gen --cuda --kernel=spgemm --format=coo -o %s", out), 5);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "gen --cuda --format=csr"), 1);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "gen --cuda --kernel=nope --format=csr"), 1);
  tu_run_free(&r);
  free(out);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- nvcc ------------------------------------------------------------------ */

START_TEST(test_nvcc) {
#if defined(__SANITIZE_ADDRESS__)
  /* the same text as the plain run compiles: once is enough */
  fprintf(stderr, "cuda/nvcc: skipped under the sanitizers (the plain test run compiles it)\n");
  return;
#endif
  const char *nvcc = getenv("SPC_NVCC");
  if (!nvcc) nvcc = system("command -v nvcc >/dev/null 2>&1") == 0 ? "nvcc" : NULL;
  if (!nvcc) {
    fprintf(stderr, "cuda/nvcc: nvcc not found: compiling the emitted kernels skipped\n");
    return;
  }
  spc_str all = {0};
  for (int k = 0; k < spc_format_count(); k++) {
    const char *f = spc_format_name(k);
    if (spc_format_order(k) != 0 && spc_format_order(k) != 2) continue;
    for (int j = 0; j < 2; j++) {
      if (j && !is_spgemm_format(f)) continue;
      spc_status s;
      char *t = gen(f, j ? "spgemm" : "spmv", &s);
      ck_assert_int_eq(s, SPC_OK);
      spc_str_addf(&all, "%s\n", t);
      free(t);
    }
  }
  ck_assert(!all.failed);
  char *dir = tu_mkdtemp(), *src = tu_path(dir, "all.cu"), *obj = tu_path(dir, "all.o");
  ck_assert_int_eq(tu_write_str(src, all.s), 0);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s -c --fmad=false -arch=sm_80 -Werror all-warnings -o %s %s 2>&1", nvcc,
           obj, src);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char buf[4096], log[16384] = "";
  while (fgets(buf, sizeof buf, p))
    if (strlen(log) + strlen(buf) < sizeof log) strcat(log, buf);
  int rc = pclose(p);
  ck_assert_msg(rc == 0, "nvcc failed:\n%s", log);
  ck_assert(tu_exists(obj));
  spc_str_free(&all);
  free(src);
  free(obj);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- the schedules, interpreted -------------------------------------------- */

typedef struct routine {
  cu_build C;
  spc_specs *own; /* a user format's registry */
} routine;

static void routine_free(routine *R) {
  cu_build_free(&R->C);
  spc_specs_free(&R->own);
}

static void routine_make(routine *R, const char *fmt, int which) {
  const spc_specs *reg;
  const spc_format_spec *fs = NULL;
  spc_error e;
  spc_error_clear(&e);
  ck_assert_int_eq(asm_resolve_format(fmt, NULL, &reg, &R->own, &fs, &e), SPC_OK);
  spc_status s = cu_build_init(&R->C, fs, "r", &e);
  if (!s) s = which == 0 ? cu_build_spmv(&R->C, &e)
              : which == 1 ? cu_build_range(&R->C, &e)
                           : cu_build_spgemm(&R->C, which - 2, &e);
  ck_assert_msg(s == SPC_OK, "%s routine %d: %s", fmt, which, e.msg);
}

/* the operand's arguments into a; returns how many */
static int lead(ir_arg *a, const spc_cu_operand *m) {
  int k = 0;
  for (; k < m->narr; k++) a[k] = (ir_arg){.data = m->arr[k], .len = m->len[k]};
  a[k++] = (ir_arg){.data = m->vals, .len = m->nvals};
  a[k++] = (ir_arg){.data = (void *)m->ext, .len = m->next};
  return k;
}

static void call(routine *R, ir_arg *a) {
  spc_error e;
  spc_error_clear(&e);
  spc_status s = ir_run(R->C.f, a, &e);
  ck_assert_msg(s == SPC_OK, "%s: %s", ir_func_name(R->C.f), e.msg);
}

static void range(routine *R, const spc_cu_operand *m, int64_t lvl, int64_t q, int64_t *b, int64_t *en) {
  ir_arg a[40] = {{0}};
  int k = lead(a, m);
  a[k].s.i64 = lvl;
  a[k + 1].s.i64 = q;
  call(R, a);
  *b = a[k + 2].s.i64;
  *en = a[k + 3].s.i64;
}

/* the top positions reaching into the level-1 window [p0, p1): [*qa, *qe),
 * by the kernels' two binary searches */
static void window_rows(routine *Rg, const spc_cu_operand *m, int64_t b0, int64_t e0, int64_t p0, int64_t p1,
                        int64_t *qa, int64_t *qe) {
  int64_t lo = b0, hi = e0, mb, me;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    range(Rg, m, 1, mid, &mb, &me);
    if (me <= p0) lo = mid + 1;
    else hi = mid;
  }
  *qa = lo;
  for (hi = e0; lo < hi;) {
    int64_t mid = lo + (hi - lo) / 2;
    range(Rg, m, 1, mid, &mb, &me);
    if (mb < p1) lo = mid + 1;
    else hi = mid;
  }
  *qe = lo;
}

/* top position q's level-1 positions in [p0, p1) by a group of L lanes
 * (sc: the routine's scalar arguments); in row mode with sum, the group's
 * __shfl_down_sync tree of width L, lane 0 adding it to y */
static void group(routine *S, ir_arg *a, ir_arg *sc, int64_t q, int64_t p0, int64_t p1, int L, bool flush,
                  bool sum, double *y) {
  double acc[32] = {0};
  int64_t yrow = 0;
  bool hit = false;
  for (int lane = 0; lane < L; lane++) {
    sc[0].s.i64 = q, sc[1].s.i64 = q + 1, sc[2].s.i64 = p0, sc[3].s.i64 = p1;
    sc[4].s.i64 = lane, sc[5].s.i64 = L, sc[6].s.b = flush;
    call(S, a);
    acc[lane] = sc[7].s.f64;
    yrow = sc[8].s.i64;
    hit = sc[9].s.b;
  }
  if (!sum || !S->C.rowmode) return;
  for (int d = L / 2; d > 0; d /= 2) {
    double nw[32];
    for (int l = 0; l < L; l++) nw[l] = acc[l] + (l + d < L ? acc[l + d] : acc[l]);
    memcpy(acc, nw, sizeof acc);
  }
  if (hit) y[yrow] += acc[0];
}

/* y += A x the way schedule sched runs it (nt: threads of the position
 * split; positions per warp of the split by warps) */
static void spmv(routine *S, routine *Rg, const spc_cu_operand *m, int sched, int64_t nt,
                 const double *x, int64_t nx, double *y, int64_t ny, int *lanes_seen) {
  int64_t b0, e0, P0 = 0, P1 = 0, t;
  range(Rg, m, 0, 0, &b0, &e0);
  if (b0 < e0) {
    range(Rg, m, 1, b0, &P0, &t);
    range(Rg, m, 1, e0 - 1, &t, &P1);
  }
  ir_arg a[40] = {{0}};
  int k = lead(a, m);
  a[k] = (ir_arg){.data = (void *)x, .len = nx};
  a[k + 1] = a[k + 2] = (ir_arg){.data = y, .len = ny};
  ir_arg *sc = a + k + 3; /* q0 q1 p0 p1 lane nl flush acc yrow hit */
  if (sched == 2) {
    int64_t P = P1 - P0, chunk = (P + nt - 1) / nt;
    for (int64_t th = 0; th < nt; th++) {
      int64_t p0 = P0 + (th * chunk < P ? th * chunk : P), p1 = P0 + ((th + 1) * chunk < P ? (th + 1) * chunk : P);
      if (p0 >= p1) continue;
      int64_t qa, qe;
      window_rows(Rg, m, b0, e0, p0, p1, &qa, &qe);
      sc[0].s.i64 = qa, sc[1].s.i64 = qe, sc[2].s.i64 = p0, sc[3].s.i64 = p1;
      sc[4].s.i64 = 0, sc[5].s.i64 = 1, sc[6].s.b = true;
      call(S, a);
    }
    return;
  }
  if (sched == 3) { /* a warp per window of nt positions, groups of L lanes */
    for (int64_t p0 = P0; p0 < P1; p0 += nt) {
      int64_t p1 = p0 + nt < P1 ? p0 + nt : P1, qa, qe;
      window_rows(Rg, m, b0, e0, p0, p1, &qa, &qe);
      int L = 1;
      while (L < 32 && 4 * L * (qe - qa) < p1 - p0) L *= 2;
      for (int64_t q = qa; q < qe; q++) group(S, a, sc, q, p0, p1, L, false, true, y);
    }
    return;
  }
  /* schedule 1's group of L lanes, as its launcher picks L */
  int L = 1;
  while (sched == 1 && L < 32 && 4 * L * (e0 - b0) < P1 - P0) L *= 2;
  if (lanes_seen) *lanes_seen |= sched == 1 ? L : 0;
  for (int64_t q = b0; q < e0; q++) group(S, a, sc, q, INT64_MIN, INT64_MAX, L, !sched, sched == 1, y);
}

static spc_tensor *made_up(void) {
  /* 41 x 45: rows 0, 7 and 40 empty, row 3 with 44 entries (over a warp),
   * mixed signs */
  int64_t dims[2] = {41, 45}, n = 0;
  int64_t I[400], J[400];
  double V[400];
  for (int64_t i = 0; i < 41; i++)
    for (int64_t j = 0; j < 45; j++) {
      bool on = i == 3 ? j != 5 : (i != 0 && i != 7 && i != 40 && (i * 7 + j * 3) % 11 == 0);
      if (!on) continue;
      I[n] = i, J[n] = j, V[n] = (double)((i * 13 + j * 5) % 17) - 8.5;
      n++;
    }
  spc_tensor *t = NULL;
  spc_error e;
  ck_assert_int_eq(spc_tensor_create_coo(2, dims, n, SPC_F64, &t, &e), SPC_OK);
  int64_t *r = spc_tensor_level_array_mut(t, 0, "crd"), *c = spc_tensor_level_array_mut(t, 1, "crd");
  spc_itype it0, it1;
  const void *d;
  int64_t len;
  ck_assert_int_eq(spc_tensor_level_array(t, 0, "crd", &d, &it0, &len), SPC_OK);
  ck_assert_int_eq(spc_tensor_level_array(t, 1, "crd", &d, &it1, &len), SPC_OK);
  for (int64_t k = 0; k < n; k++) {
    if (it0 == SPC_IDX64) r[k] = I[k];
    else ((int32_t *)(void *)r)[k] = (int32_t)I[k];
    if (it1 == SPC_IDX64) c[k] = J[k];
    else ((int32_t *)(void *)c)[k] = (int32_t)J[k];
  }
  memcpy(spc_tensor_values_mut(t), V, (size_t)n * sizeof *V);
  return t;
}

static spc_tensor *read_mtx(const char *path) {
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.expand = 1;
  ro.vtype = SPC_F64;
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  ck_assert_msg(spc_read(path, &ro, &t, &e) == SPC_OK, "%s: %s", path, e.msg);
  return t;
}

/* the test matrices: made up, data/sample.mtx, shared ones (when there) */
static int matrices(spc_tensor **M) {
  static const char *const shared[] = {"A.mtx", "west0067.mtx", "can___24.mtx", "LFAT5_hypersparse.mtx"};
  int n = 0;
  M[n++] = made_up();
  M[n++] = read_mtx("data/sample.mtx");
  const char *dd = tu_data_dir();
  for (int k = 0; dd && k < 4; k++) {
    char p[4096];
    snprintf(p, sizeof p, "%s/matrices/%s", dd, shared[k]);
    if (tu_exists(p)) M[n++] = read_mtx(p);
  }
  return n;
}

static spc_tensor *convert(const spc_tensor *A, const char *f) {
  spc_tensor *B = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_convert_to(A, f, NULL, &B, &e);
  if (s) ck_assert_msg(s == SPC_ERR_UNSUPPORTED, "%s: %s", f, e.msg);
  return B;
}

/* a user's format (tests/test_convert.c): CSR with columns descending,
 * through an offset level */
static const char csr_desc_yaml[] = "format: csr_desc\n"
                                    "order: 2\n"
                                    "remap: (i, j) -> (i, 0 - j as nj, j)\n"
                                    "levels:\n"
                                    "  - dense\n"
                                    "  - compressed\n"
                                    "  - {level: offset, access: 0 - nj}\n";

START_TEST(test_schedules_spmv) {
  spc_tensor *M[8];
  int nm = matrices(M), runs = 0, widths = 0; /* widths: schedule 1's group sizes seen */
  char *dir = tu_mkdtemp(), *user = tu_path(dir, "csr_desc.yaml");
  ck_assert_int_eq(tu_write_str(user, csr_desc_yaml), 0);
  for (int k = 0; k <= spc_format_count(); k++) {
    const char *f = k < spc_format_count() ? spc_format_name(k) : user;
    if (k < spc_format_count() && spc_format_order(k) != 0 && spc_format_order(k) != 2) continue;
    routine S, Rg;
    memset(&S, 0, sizeof S);
    memset(&Rg, 0, sizeof Rg);
    routine_make(&S, f, 0);
    routine_make(&Rg, f, 1);
    for (int i = 0; i < nm; i++) {
      spc_tensor *A = convert(M[i], f);
      if (!A) continue;
      int64_t nr = spc_tensor_dim(A, 0), nc = spc_tensor_dim(A, 1);
      double *x = calloc((size_t)nc + 1, sizeof *x), *ax = calloc((size_t)nc + 1, sizeof *ax);
      double *ref = calloc((size_t)nr + 1, sizeof *ref), *y = calloc((size_t)nr + 1, sizeof *y);
      double *abs_y = calloc((size_t)nr + 1, sizeof *abs_y);
      for (int64_t j = 0; j < nc; j++) x[j] = ((j * 37) % 19) / 7.0 - 1.25, ax[j] = fabs(x[j]);
      spc_error e;
      spc_error_clear(&e);
      ck_assert_int_eq(spc_spmv(A, 0, x, ref, NULL, &e), SPC_OK);
      spc_cu_operand m, am;
      ck_assert_int_eq(spc_cu_operand_of(A, &m, &e), SPC_OK);
      ck_assert_int_eq(spc_cu_operand_of(A, &am, &e), SPC_OK);
      for (int64_t q = 0; q < am.nvals; q++) am.vals[q] = fabs(am.vals[q]);
      spmv(&S, &Rg, &am, 0, 1, ax, nc, abs_y, nr, NULL); /* sum |a x| per row */
      /* split: 1, 3 and 1000 threads; split by warps: windows of 64
       * positions (rows across windows' borders, groups of 1 to 32 lanes;
       * each interpreted lane is one ir_run: smaller windows cost minutes) */
      static const int64_t nts[3] = {1, 3, 1000};
      for (int sched = 0; sched < 4; sched++)
        for (int ti = 0; ti < (sched == 2 ? 3 : 1); ti++) {
          memset(y, 0, (size_t)nr * sizeof *y);
          int64_t nt = sched == 2 ? nts[ti] : sched == 3 ? 64 : 1;
          spmv(&S, &Rg, &m, sched, nt, x, nc, y, nr, &widths);
          for (int64_t r = 0; r < nr; r++)
            ck_assert_msg(fabs(y[r] - ref[r]) <= 1e-12 * abs_y[r], "%s matrix %d schedule %d (%lld threads or positions) row %lld: %.17g, want %.17g",
                          f, i, sched, (long long)nt, (long long)r, y[r], ref[r]);
          runs++;
        }
      spc_cu_operand_free(&m);
      spc_cu_operand_free(&am);
      free(x), free(ax), free(ref), free(y), free(abs_y);
      spc_tensor_free(&A);
    }
    routine_free(&S);
    routine_free(&Rg);
  }
  for (int i = 0; i < nm; i++) spc_tensor_free(&M[i]);
  ck_assert_int_ge(runs, 12 * 5 * 2);
  /* groups of a whole warp (dia, ell: few long top positions) and of
   * fewer lanes (short rows) were both run */
  ck_assert_msg((widths & 32) && __builtin_popcount((unsigned)widths) >= 3, "group widths seen: %#x", widths);
  free(user);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* C = A A through the three passes with nl lanes per row, the way the
 * kernels run them (each row's lanes in turn), then each row's runs
 * merged as the launcher does; cpos (one per row), ccrd, cval malloc'ed */
static int64_t spgemm(routine *P, routine *Rg, const spc_cu_operand *m, int64_t nrows, int64_t nl,
                      int64_t **cpos, int64_t **ccrd, double **cval) {
  int64_t b0, e0, ns = nrows * nl;
  range(Rg, m, 0, 0, &b0, &e0);
  int64_t *ub = calloc((size_t)ns + 1, sizeof *ub), *off = calloc((size_t)ns + 1, sizeof *off);
  int64_t *cnt = calloc((size_t)ns + 1, sizeof *cnt), *cps = calloc((size_t)ns + 1, sizeof *cps);
  ir_arg a[60] = {{0}};
  int k = lead(a, m);
  k += lead(a + k, m);
  a[k + 2].s.i64 = nl;
  for (int64_t q = b0; q < e0; q++)
    for (int64_t l = 0; l < nl; l++) {
      a[k].s.i64 = q;
      a[k + 1].s.i64 = l;
      a[k + 3] = (ir_arg){.data = ub, .len = ns + 1};
      call(&P[0], a);
    }
  for (int64_t r = 0; r < ns; r++) off[r + 1] = off[r] + ub[r];
  int64_t total = off[ns];
  int64_t *keys = malloc((size_t)(total + 1) * sizeof *keys);
  double *hv = calloc((size_t)total + 1, sizeof *hv);
  for (int64_t h = 0; h < total; h++) keys[h] = -1;
  for (int64_t q = b0; q < e0; q++)
    for (int64_t l = 0; l < nl; l++) {
      a[k].s.i64 = q;
      a[k + 1].s.i64 = l;
      a[k + 3] = (ir_arg){.data = off, .len = ns + 1};
      a[k + 4] = (ir_arg){.data = keys, .len = total};
      a[k + 5] = (ir_arg){.data = cnt, .len = ns + 1};
      call(&P[1], a);
    }
  for (int64_t r = 0; r < ns; r++) cps[r + 1] = cps[r] + cnt[r];
  int64_t nnz = cps[ns];
  *ccrd = calloc((size_t)nnz + 1, sizeof **ccrd);
  *cval = calloc((size_t)nnz + 1, sizeof **cval);
  for (int64_t h = 0; h < total; h++) keys[h] = -1;
  for (int64_t q = b0; q < e0; q++)
    for (int64_t l = 0; l < nl; l++) {
      a[k].s.i64 = q;
      a[k + 1].s.i64 = l;
      a[k + 3] = (ir_arg){.data = off, .len = ns + 1};
      a[k + 4] = (ir_arg){.data = keys, .len = total};
      a[k + 5] = (ir_arg){.data = hv, .len = total};
      a[k + 6] = (ir_arg){.data = cps, .len = ns + 1};
      a[k + 7] = (ir_arg){.data = *ccrd, .len = nnz};
      a[k + 8] = (ir_arg){.data = *cval, .len = nnz};
      call(&P[2], a);
    }
  /* each row's nl sorted runs: a stable sort by column, then repeated
   * columns added in lane order, as the launcher does with nl > 1 */
  *cpos = calloc((size_t)nrows + 1, sizeof **cpos);
  int64_t w = 0;
  for (int64_t r = 0; r < nrows; r++) {
    int64_t r0 = cps[r * nl], r1 = cps[(r + 1) * nl];
    for (int64_t i = r0 + 1; i < r1; i++) {
      int64_t c = (*ccrd)[i], t = i;
      double v = (*cval)[i];
      for (; t > r0 && (*ccrd)[t - 1] > c; t--) {
        (*ccrd)[t] = (*ccrd)[t - 1];
        (*cval)[t] = (*cval)[t - 1];
      }
      (*ccrd)[t] = c;
      (*cval)[t] = v;
    }
    (*cpos)[r] = w;
    for (int64_t i = r0; i < r1; i++) {
      if (i > r0 && (*ccrd)[i] == (*ccrd)[w - 1]) {
        ck_assert_int_gt(nl, 1); /* one lane: no repeats */
        (*cval)[w - 1] += (*cval)[i];
      } else {
        (*ccrd)[w] = (*ccrd)[i];
        (*cval)[w++] = (*cval)[i];
      }
    }
  }
  (*cpos)[nrows] = nnz = w;
  free(ub), free(off), free(cnt), free(cps), free(keys), free(hv);
  return nnz;
}

START_TEST(test_schedules_spgemm) {
  spc_tensor *M[8];
  int nm = matrices(M), runs = 0;
  for (int k = 0; spgemm_formats[k]; k++) {
    const char *f = spgemm_formats[k];
    bool trans = !strcmp(f, "csc") || !strcmp(f, "dcsc");
    routine P[3], Rg;
    memset(P, 0, sizeof P);
    memset(&Rg, 0, sizeof Rg);
    for (int j = 0; j < 3; j++) routine_make(&P[j], f, 2 + j);
    routine_make(&Rg, f, 1);
    for (int i = 0; i < nm; i++) {
      if (spc_tensor_dim(M[i], 0) != spc_tensor_dim(M[i], 1)) continue;
      spc_tensor *A = convert(M[i], f), *C = NULL;
      if (!A) continue;
      spc_error e;
      spc_error_clear(&e);
      ck_assert_int_eq(spc_spgemm(A, A, trans ? "csc" : "csr", NULL, &C, &e), SPC_OK);
      spc_cu_operand m, am;
      ck_assert_int_eq(spc_cu_operand_of(A, &m, &e), SPC_OK);
      ck_assert_int_eq(spc_cu_operand_of(A, &am, &e), SPC_OK);
      for (int64_t q = 0; q < am.nvals; q++) am.vals[q] = fabs(am.vals[q]);
      int64_t n = spc_tensor_dim(A, 0), *cpos, *ccrd, *apos, *acrd;
      double *cval, *aval;
      static const int64_t lanes[] = {1, 3, 4};
      for (int li = 0; li < 3; li++) {
        int64_t nl = lanes[li];
        int64_t nnz = spgemm(P, &Rg, &m, n, nl, &cpos, &ccrd, &cval);
        int64_t annz = spgemm(P, &Rg, &am, n, nl, &apos, &acrd, &aval);
        ck_assert_int_eq(annz, nnz);
        const void *d;
        spc_itype it;
        int64_t len, nv;
        ck_assert_int_eq(spc_tensor_level_array(C, 1, "pos", &d, &it, &len), SPC_OK);
        ck_assert_int_eq(len, n + 1);
        for (int64_t r = 0; r <= n; r++)
          ck_assert_int_eq(cpos[r], it == SPC_IDX64 ? ((const int64_t *)d)[r] : ((const int32_t *)d)[r]);
        ck_assert_int_eq(spc_tensor_level_array(C, 1, "crd", &d, &it, &len), SPC_OK);
        ck_assert_int_eq(len, nnz);
        const double *cv = spc_tensor_values(C, &nv);
        for (int64_t q = 0; q < nnz; q++) {
          ck_assert_int_eq(ccrd[q], it == SPC_IDX64 ? ((const int64_t *)d)[q] : ((const int32_t *)d)[q]);
          ck_assert_msg(fabs(cval[q] - cv[q]) <= 1e-12 * aval[q], "%s matrix %d lanes %lld entry %lld: %.17g want %.17g",
                        f, i, (long long)nl, (long long)q, cval[q], cv[q]);
        }
        runs++;
        free(cpos), free(ccrd), free(cval), free(apos), free(acrd), free(aval);
      }
      spc_cu_operand_free(&m);
      spc_cu_operand_free(&am);
      spc_tensor_free(&C);
      spc_tensor_free(&A);
    }
    for (int j = 0; j < 3; j++) routine_free(&P[j]);
    routine_free(&Rg);
  }
  for (int i = 0; i < nm; i++) spc_tensor_free(&M[i]);
  ck_assert_int_ge(runs, 10);
}
END_TEST

Suite *suite_cuda(void) {
  Suite *s = suite_create("cuda");
  TCase *tc = tcase_create("emit");
  tcase_add_test(tc, test_emit);
  suite_add_tcase(s, tc);
  tc = tcase_create("nvcc");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_nvcc);
  suite_add_tcase(s, tc);
  tc = tcase_create("schedules");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_schedules_spmv);
  tcase_add_test(tc, test_schedules_spgemm);
  suite_add_tcase(s, tc);
  return s;
}
