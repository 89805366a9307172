/* conv_bench.c -- time spconv's format conversions in process (issue 4).
 *
 *   conv_bench [-r R] [-b SEC] [-e ENGINE] [-x CONV,...] [-p PADMAX]
 *              [-w CACHEDIR] FILE...
 *   conv_bench --bw MIB [-r R]
 * CONV_BENCH_PLAN=sort in the environment: the sort path (--plan=sort);
 * =rows, =radix: the counting plan's bucketing of a source out of order;
 * =inplace, =partition, =scatter: a source read through its levels in
 * another order (CSR to CSC) placed so.
 *
 * For every FILE (Matrix Market: the matrix conversions; FROSTT .tns of
 * order 3: the tensor conversions) it reads the file with spc_read
 * (symmetric storage expanded, values as double), prepares each
 * conversion's source untimed (a COO as read, or a CSR / CSC / CSF made from
 * it by spc_convert), then times spc_convert_ex alone, up to R times
 * (default 3) or until SEC seconds (default 10) have gone on that
 * conversion, and keeps the best wall time.  Freeing the result is not
 * timed.  The conversions, named alike in every peer program:
 *
 *   coo_csr   COO (file order: sorted or shuffled) -> CSR
 *   csr_csc   CSR -> CSC                         (the CSR is the source)
 *   csr_dia   CSR -> DIA                          (SciPy's layout)
 *   csr_ell   CSR -> ELL
 *   coo_bcsr  COO -> BCSR with 4 x 4 blocks
 *   csc_dia   CSC -> DIA
 *   coo_csf   order-3 COO -> CSF (levels i, j, k)
 *   coo_dcsr  COO (file order) -> DCSR (no peer)
 *   coo_coo   COO (file order) -> COO, sorted (no peer)
 *   csf_mode  CSF (i, j, k) -> CSF (k, i, j): mode reordering, through the
 *             format csf_kij registered here (order 3, remap
 *             (i, j, k) -> (k, i, j), three compressed levels)
 *
 * Padded formats (DIA, ELL, BCSR) are skipped, by every tool alike, when
 * their padded size would exceed PADMAX (default 4) times nnz: DIA holds
 * ndiag x ncols values, ELL nrows x (longest row), BCSR 16 per 4 x 4 block.
 *
 * Output, one tab-separated line per file and conversion:
 *   spconv CONV SECONDS NNZ FILE bytes=B cpu=CPU engine=E
 * NNZ: stored entries of the source (after expansion); SECONDS / NNZ is the
 * ns per nonzero.  B is the bytes-that-must-move model below.  Lines
 *   skip spconv CONV FILE (why)      error spconv CONV FILE (message)
 * report conversions not timed.  --bw prints
 *   memcpy copy SECONDS BYTES - GB/s=G
 * with BYTES = 2 x MIB MiB (memcpy reads and writes each byte once).
 *
 * -w CACHEDIR writes, for each matrix file, CACHEDIR/BASENAME.coo: the COO
 * as read (expanded), which the peer programs load instead of parsing the
 * text again (bench/conv_peer.h describes the layout).
 *
 * ---- bytes that must move ---------------------------------------------------
 * A lower bound on memory traffic: every array of the source read once and
 * every array of the result written once, plus the passes no algorithm can
 * avoid (a counting pass before a scatter).  Array sizes are counted with
 * canonical widths, the same for every tool: 4-byte indices when every
 * dimension and the number of stored entries are below 2^31 (8-byte
 * otherwise), 8-byte values; the arrays' lengths are those of spconv's
 * source and result (padding included: DIA's and ELL's padded values and
 * BCSR's zero-filled blocks must be written).  Extra passes:
 *
 *   coo_csr   sorted input: none (the row pointers follow in one pass);
 *             unsorted: the row indices once more (count rows, then scatter)
 *   csr_csc   the column indices once more (count columns, then scatter)
 *   csr_dia   the source's pos and crd once more (find the occupied
 *   csc_dia   diagonals before placing values)
 *   csr_ell   none (the longest row comes from pos)
 *   coo_bcsr  both coordinate arrays once more (count blocks per block row)
 *   coo_csf   none for sorted input (every level in one pass), otherwise
 *             every coordinate array once more
 *   csf_mode  the crd of the k level once more (count the new top level)
 *
 * The bound's time is B / (copy bandwidth), the bandwidth from --bw: a
 * conversion cannot beat a memcpy of the bytes it must move.  It ignores
 * that scatters touch whole cache lines and that fresh output pages fault
 * in, so a ratio to it of 1.5-2 is good, and of 1 unreachable. */
#include "spconv.h"
#include "spc_impl.h"
#include "spc_assemble.h"
#include "spec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The engine (generic = IR interpreter, factory / jit = compiled, auto) is
 * spc_convert_opts.engine; bench/Makefile defines CONV_BENCH_ENGINE=1 when
 * include/spconv.h has that field.  Without it only the generic path runs. */
#ifndef CONV_BENCH_ENGINE
#define CONV_BENCH_ENGINE 0
#endif

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

typedef enum { SRC_COO, SRC_CSR, SRC_CSC, SRC_CSF } src_kind;
typedef enum { X_NONE, X_ROWS_IF_UNSORTED, X_CRD1, X_POSCRD, X_ALLCRD,
               X_ALLCRD_IF_UNSORTED, X_CRD_K } extra_kind;
typedef enum { PAD_NONE, PAD_DIA, PAD_ELL, PAD_BCSR } pad_kind;

typedef struct conv_def {
  const char *name;
  int order;
  src_kind src;
  const char *dst;
  int nparams;
  spc_remap_param params[2];
  extra_kind extra;
  pad_kind pad;
} conv_def;

static const conv_def CONVS[] = {
    {"coo_csr", 2, SRC_COO, "csr", 0, {{0}}, X_ROWS_IF_UNSORTED, PAD_NONE},
    {"csr_csc", 2, SRC_CSR, "csc", 0, {{0}}, X_CRD1, PAD_NONE},
    {"csr_dia", 2, SRC_CSR, "dia", 0, {{0}}, X_POSCRD, PAD_DIA},
    {"csr_ell", 2, SRC_CSR, "ell", 0, {{0}}, X_NONE, PAD_ELL},
    {"coo_bcsr", 2, SRC_COO, "bcsr", 2, {{"M", 4}, {"N", 4}}, X_ALLCRD, PAD_BCSR},
    {"csc_dia", 2, SRC_CSC, "dia", 0, {{0}}, X_POSCRD, PAD_DIA},
    {"coo_csf", 3, SRC_COO, "csf", 0, {{0}}, X_ALLCRD_IF_UNSORTED, PAD_NONE},
    {"coo_dcsr", 2, SRC_COO, "dcsr", 0, {{0}}, X_ROWS_IF_UNSORTED, PAD_NONE},
    {"coo_coo", 2, SRC_COO, "coo", 0, {{0}}, X_ROWS_IF_UNSORTED, PAD_NONE},
    {"csf_mode", 3, SRC_CSF, "csf_kij", 0, {{0}}, X_CRD_K, PAD_NONE},
};
#define NCONVS (int)(sizeof CONVS / sizeof CONVS[0])

static const char CSF_KIJ_YAML[] =
    "format: csf_kij\n"
    "description: CSF of an order-3 tensor with mode order (k, i, j) (bench)\n"
    "order: 3\n"
    "remap: (i, j, k) -> (k, i, j)\n"
    "levels: [compressed, compressed, compressed]\n";

typedef struct run_opts {
  int reps;
  double budget, padmax;
  const char *engine, *only, *cache;
} run_opts;

static void die_err(const char *what, const spc_error *e) {
  char buf[1200];
  fprintf(stderr, "conv_bench: %s: %s\n", what, spc_error_string(e, buf, sizeof buf));
  exit(1);
}

static bool selected(const run_opts *o, const char *name) {
  if (!o->only) return true;
  size_t n = strlen(name);
  for (const char *p = o->only; *p;) {
    const char *c = strchr(p, ',');
    size_t m = c ? (size_t)(c - p) : strlen(p);
    if (m == n && !strncmp(p, name, n)) return true;
    if (!c) break;
    p = c + 1;
  }
  return false;
}

/* ---- the model ------------------------------------------------------------ */

static int64_t arr_len(const spc_tensor *t, int l, const char *name) {
  const spc_array *a = spc_level_array_c(&t->lv[l], name);
  return a ? a->len : 0;
}

/* Bytes of every level array and the values, at canonical widths. */
static double tensor_bytes(const spc_tensor *t, int wi) {
  double b = 0;
  for (int l = 0; l < t->nlevels; l++)
    for (int k = 0; k < t->lv[l].narr; k++) b += (double)t->lv[l].arr[k].len * wi;
  if (t->vt != SPC_PATTERN) b += (double)t->nval * 8;
  return b;
}

/* Is the COO t sorted lexicographically (dimension order)? */
static bool coo_sorted(const spc_tensor *t) {
  int64_t n = spc_tensor_nstored(t);
  const spc_array *c[SPC_MAX_ORDER];
  for (int l = 0; l < t->nlevels; l++) c[l] = spc_level_array_c(&t->lv[l], "crd");
  for (int64_t q = 1; q < n; q++)
    for (int l = 0; l < t->nlevels; l++) {
      int64_t a = spc_arr_get(c[l], q - 1), b = spc_arr_get(c[l], q);
      if (a < b) break;
      if (a > b) return false;
    }
  return true;
}

static double extra_bytes(const conv_def *cv, const spc_tensor *src, int wi,
                          bool sorted) {
  switch (cv->extra) {
  case X_NONE: return 0;
  case X_ROWS_IF_UNSORTED: return sorted ? 0 : (double)arr_len(src, 0, "crd") * wi;
  case X_CRD1: return (double)arr_len(src, 1, "crd") * wi;
  case X_POSCRD: return (double)(arr_len(src, 1, "pos") + arr_len(src, 1, "crd")) * wi;
  case X_ALLCRD_IF_UNSORTED:
    if (sorted) return 0;
    /* fall through */
  case X_ALLCRD: {
    double b = 0;
    for (int l = 0; l < src->nlevels; l++) b += (double)arr_len(src, l, "crd") * wi;
    return b;
  }
  case X_CRD_K: return (double)arr_len(src, src->nlevels - 1, "crd") * wi;
  }
  return 0;
}

/* Padded size of DIA / ELL / BCSR for the COO t (matrix), in values. */
static double padded_size(pad_kind k, const spc_tensor *t) {
  int64_t n = spc_tensor_nstored(t), m = t->dims[0], nc = t->dims[1];
  const spc_array *ri = spc_level_array_c(&t->lv[0], "crd");
  const spc_array *ci = spc_level_array_c(&t->lv[1], "crd");
  double r = 0;
  if (k == PAD_DIA) {
    unsigned char *used = calloc((size_t)(m + nc), 1);
    int64_t nd = 0;
    for (int64_t q = 0; q < n; q++) {
      int64_t d = spc_arr_get(ci, q) - spc_arr_get(ri, q) + m;
      nd += !used[d];
      used[d] = 1;
    }
    free(used);
    r = (double)nd * (double)nc;
  } else if (k == PAD_ELL) {
    int64_t *cnt = calloc((size_t)m + 1, sizeof *cnt), K = 0;
    for (int64_t q = 0; q < n; q++) {
      int64_t c = ++cnt[spc_arr_get(ri, q)];
      if (c > K) K = c;
    }
    free(cnt);
    r = (double)K * (double)m;
  } else if (k == PAD_BCSR) { /* distinct (i/4, j/4): sort the block keys */
    int64_t nbc = (nc + 3) / 4, nb = 0;
    int64_t *key = malloc((size_t)(n ? n : 1) * sizeof *key);
    for (int64_t q = 0; q < n; q++)
      key[q] = spc_arr_get(ri, q) / 4 * nbc + spc_arr_get(ci, q) / 4;
    /* counting sort by block row, then dedupe per block row with a mark */
    int64_t nbr = (m + 3) / 4;
    int64_t *mark = malloc((size_t)(nbc ? nbc : 1) * sizeof *mark);
    int64_t *start = calloc((size_t)nbr + 1, sizeof *start);
    int64_t *ord = malloc((size_t)(n ? n : 1) * sizeof *ord);
    for (int64_t b = 0; b < nbc; b++) mark[b] = -1;
    for (int64_t q = 0; q < n; q++) start[key[q] / nbc + 1]++;
    for (int64_t b = 0; b < nbr; b++) start[b + 1] += start[b];
    for (int64_t q = 0; q < n; q++) ord[start[key[q] / nbc]++] = key[q];
    for (int64_t q = 0; q < n; q++) {
      int64_t br = ord[q] / nbc, bc = ord[q] % nbc;
      if (mark[bc] != br) { mark[bc] = br; nb++; }
    }
    free(key); free(mark); free(start); free(ord);
    r = (double)nb * 16;
  }
  return r;
}

/* ---- the cache for the peers ---------------------------------------------- */

static void write_cache(const char *dir, const char *path, const spc_tensor *t) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char out[4096], tmp[4200];
  snprintf(out, sizeof out, "%s/%s.coo", dir, base);
  snprintf(tmp, sizeof tmp, "%s.tmp", out);
  FILE *f = fopen(tmp, "wb");
  if (!f) { fprintf(stderr, "conv_bench: cannot write %s\n", tmp); exit(1); }
  int64_t n = spc_tensor_nstored(t);
  int64_t hdr[4] = {t->dims[0], t->dims[1], n,
                    t->dims[0] <= INT32_MAX && t->dims[1] <= INT32_MAX ? 4 : 8};
  fwrite("SPCCOO1\n", 1, 8, f);
  fwrite(hdr, sizeof hdr, 1, f);
  enum { CH = 1 << 16 };
  static int64_t b64[CH];
  static int32_t b32[CH];
  for (int l = 0; l < 2; l++) {
    const spc_array *a = spc_level_array_c(&t->lv[l], "crd");
    for (int64_t q = 0; q < n; q += CH) {
      int64_t m = n - q < CH ? n - q : CH;
      for (int64_t k = 0; k < m; k++) {
        int64_t v = spc_arr_get(a, q + k);
        if (hdr[3] == 4) b32[k] = (int32_t)v; else b64[k] = v;
      }
      fwrite(hdr[3] == 4 ? (void *)b32 : (void *)b64, (size_t)hdr[3], (size_t)m, f);
    }
  }
  if (t->vt == SPC_F64) {
    fwrite(t->val, 8, (size_t)n, f);
  } else { /* pattern read as ones */
    double one = 1;
    for (int64_t q = 0; q < n; q++) fwrite(&one, 8, 1, f);
  }
  if (fclose(f) || rename(tmp, out)) {
    fprintf(stderr, "conv_bench: cannot write %s\n", out);
    exit(1);
  }
}

/* ---- timing --------------------------------------------------------------- */

/* The engine: -e NAME sets spc_convert_opts.engine (auto, generic,
 * factory, jit) where the library has it; info says which engine ran. */
static int set_engine(spc_convert_opts *co, const char *engine) {
#if CONV_BENCH_ENGINE
  static spc_convert_info info;
  spc_engine g;
  spc_convert_opts_init(co);
  if (spc_engine_parse(engine ? engine : "generic", &g)) return -1;
  co->engine = g;
  co->info = &info;
  /* CONV_BENCH_PLAN=sort: the sort path (spconv --plan=sort), to time the
   * plans against each other */
  const char *plan = getenv("CONV_BENCH_PLAN");
  if (plan && !strcmp(plan, "sort")) co->plan = SPC_PLAN_SORT;
  if (plan && !strcmp(plan, "rows")) co->plan = SPC_PLAN_ROWS;
  if (plan && !strcmp(plan, "radix")) co->plan = SPC_PLAN_RADIX;
  if (plan && !strcmp(plan, "inplace")) co->plan = SPC_PLAN_INPLACE;
  if (plan && !strcmp(plan, "partition")) co->plan = SPC_PLAN_PARTITION;
  if (plan && !strcmp(plan, "scatter")) co->plan = SPC_PLAN_SCATTER;
  return 0;
#else
  (void)co;
  return engine && strcmp(engine, "generic") ? -1 : 0;
#endif
}

/* " used=ENGINE jit_compiled=N" after a conversion, where known. */
static const char *engine_used(const spc_convert_opts *co, char *b, size_t n) {
#if CONV_BENCH_ENGINE
  if (co->info) {
    snprintf(b, n, "\tused=%s\tjit_compiled=%d", spc_engine_name(co->info->used),
             co->info->jit_compiled);
    if (getenv("CONV_BENCH_SHOWPLAN")) /* the plan the library reported, on stderr */
      fprintf(stderr, "# plan: %s\n", co->info->plan);
    return b;
  }
#else
  (void)co;
#endif
  snprintf(b, n, "\tused=generic");
  return b;
}

static int bench_file(const char *path, const spc_specs *S, const run_opts *o,
                      spc_convert_opts *co) {
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.expand = 1;
  ro.vtype = SPC_F64;
  spc_tensor *coo = NULL;
  spc_error e;
  spc_error_clear(&e);
  if (spc_read(path, &ro, &coo, &e)) {
    char buf[1200];
    printf("error\tspconv\tread\t%s\t(%s)\n", path, spc_error_string(&e, buf, sizeof buf));
    return 1;
  }
  int fails = 0, order = coo->order;
  int64_t nnz = spc_tensor_nstored(coo);
  if (o->cache && order == 2) write_cache(o->cache, path, coo);
  bool big = nnz > INT32_MAX;
  for (int d = 0; d < order; d++) big |= coo->dims[d] > INT32_MAX;
  int wi = big ? 8 : 4;
  bool sorted = coo_sorted(coo);
  spc_tensor *srcs[4] = {coo, NULL, NULL, NULL};
  static const char *src_fmt[4] = {"coo", "csr", "csc", "csf"};
  for (int c = 0; c < NCONVS; c++) {
    const conv_def *cv = &CONVS[c];
    char buf[1200];
    if (cv->order != order || !selected(o, cv->name)) continue;
    if (cv->pad != PAD_NONE) {
      double ps = padded_size(cv->pad, coo);
      if (ps > o->padmax * (double)nnz) {
        printf("skip\tspconv\t%s\t%s\t(padded size %.1fx nnz)\n", cv->name, path,
               ps / (double)(nnz ? nnz : 1));
        continue;
      }
    }
    const spc_format_spec *fs = spc_specs_format(S, cv->dst);
    if (!srcs[cv->src]) {
      if (spc_convert(coo, S, spc_specs_format(S, src_fmt[cv->src]), NULL, 0,
                      SPC_DUP_SUM, &srcs[cv->src], &e)) {
        printf("error\tspconv\t%s\t%s\t(making the %s source: %s)\n", cv->name, path,
               src_fmt[cv->src], spc_error_string(&e, buf, sizeof buf));
        fails++;
        continue;
      }
    }
    const spc_tensor *src = srcs[cv->src];
    double best = 1e30, best_cpu = 1e30, spent = 0, bytes = 0;
    char used[128] = "";
    spc_status st = SPC_OK;
    for (int r = 0; r < o->reps && (r == 0 || spent < o->budget); r++) {
      spc_tensor *out = NULL;
      double c0 = cpu_now(), t0 = now();
      st = spc_convert_ex(src, S, fs, cv->params, cv->nparams, SPC_DUP_SUM, co, &out, &e);
      double dt = now() - t0, dc = cpu_now() - c0;
      if (st) break;
      if (r == 0)
        bytes = tensor_bytes(src, wi) + tensor_bytes(out, wi) + extra_bytes(cv, src, wi, sorted);
      spc_tensor_free(&out);
      spent += dt;
      if (dt < best) engine_used(co, used, sizeof used);
      if (dt < best) best = dt;
      if (dc < best_cpu) best_cpu = dc;
    }
    if (st) {
      printf("error\tspconv\t%s\t%s\t(%s)\n", cv->name, path, spc_error_string(&e, buf, sizeof buf));
      fails++;
      continue;
    }
    printf("spconv\t%s\t%.9f\t%lld\t%s\tbytes=%.0f\tcpu=%.9f\tengine=%s%s\n", cv->name, best,
           (long long)nnz, path, bytes, best_cpu, o->engine ? o->engine : "generic", used);
    fflush(stdout);
  }
  for (int k = 0; k < 4; k++) spc_tensor_free(&srcs[k]);
  return fails;
}

/* Copy bandwidth: memcpy of a MIB MiB buffer, best of reps; both buffers
 * touched first so no page faults are timed. */
static void copy_bw(int64_t mib, int reps) {
  size_t n = (size_t)mib << 20;
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b) { fprintf(stderr, "conv_bench: cannot allocate 2 x %lld MiB\n", (long long)mib); exit(1); }
  memset(a, 1, n);
  memset(b, 2, n);
  double best = 1e30;
  for (int r = 0; r < (reps < 3 ? 3 : reps); r++) {
    double t0 = now();
    memcpy(r & 1 ? a : b, r & 1 ? b : a, n);
    double dt = now() - t0;
    if (dt < best) best = dt;
  }
  volatile char sink = a[n / 2] + b[n / 3];
  (void)sink;
  printf("memcpy\tcopy\t%.6f\t%.0f\t-\tGB/s=%.2f\n", best, 2.0 * (double)n,
         2.0 * (double)n / best / 1e9);
  free(a);
  free(b);
}

static void usage(void) {
  fprintf(stderr,
          "usage: conv_bench [-r R] [-b SEC] [-e ENGINE] [-x CONV,...] [-p PADMAX]\n"
          "                  [-w CACHEDIR] FILE...\n"
          "       conv_bench --bw MIB [-r R]\n"
          "conversions:");
  for (int c = 0; c < NCONVS; c++) fprintf(stderr, " %s", CONVS[c].name);
  fprintf(stderr, "\nengines: generic%s\n", CONV_BENCH_ENGINE ? ", factory, jit, auto" : "");
  exit(2);
}

int main(int argc, char **argv) {
  run_opts o = {.reps = 3, .budget = 10, .padmax = 4};
  int64_t bw = 0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) usage();
    if (!strcmp(a, "-r")) o.reps = atoi(argv[++i]);
    else if (!strcmp(a, "-b")) o.budget = atof(argv[++i]);
    else if (!strcmp(a, "-e")) o.engine = argv[++i];
    else if (!strcmp(a, "-x")) o.only = argv[++i];
    else if (!strcmp(a, "-p")) o.padmax = atof(argv[++i]);
    else if (!strcmp(a, "-w")) o.cache = argv[++i];
    else if (!strcmp(a, "--bw")) bw = atoll(argv[++i]);
    else usage();
  }
  if (o.reps < 1) o.reps = 1;
  if (bw > 0) {
    copy_bw(bw, o.reps);
    if (i == argc) return 0;
  }
  if (i == argc) usage();
  spc_convert_opts co;
  memset(&co, 0, sizeof co);
  if (set_engine(&co, o.engine)) {
    fprintf(stderr, "conv_bench: engine '%s' unknown or not in this build\n", o.engine);
    return 2;
  }
  spc_specs *S = NULL;
  spc_error e;
  spc_error_clear(&e);
  const char *nm = NULL;
  if (spc_specs_builtin(&S, &e)) die_err("built-in specs", &e);
  if (spc_specs_add(S, "conv_bench:csf_kij", CSF_KIJ_YAML, sizeof CSF_KIJ_YAML - 1, &nm, &e))
    die_err("csf_kij spec", &e);
  int fails = 0;
  for (; i < argc; i++) fails += bench_file(argv[i], S, &o, &co);
  spc_specs_free(&S);
  return fails ? 1 : 0;
}
