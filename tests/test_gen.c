/* test_gen.c -- suite_gen: `spconv gen` (spc_gen_source), the standalone
 * C99 converters.  For a set of (FROM, TO) pairs over the built-in order-2
 * formats (every TO from coo, every FROM to csr, a few cross pairs, bcsr
 * with parameters) and user YAML formats, and pairs of the formats of any
 * order for vectors and tensors of order 3 to 5 (`--order`, on the shared FROSTT
 * tensors and hand-made ones), the generated file is compiled
 * by the system cc (-Werror) into a shared object and loaded; on shared
 * and hand-made matrices the input is built by the library
 * (spc_convert_to(M, FROM)), its level arrays widened to int64 into a
 * spconv_tensor, and the generated converter's output must equal the
 * library's spc_convert_to(M, TO): every level array element by element,
 * the values bit for bit, the level extents (lo, N) those of
 * spc_conv_describe.  Where the library refuses TO (explicit zeros into a
 * fill: zero format, `requires` not met, no finite level range), the
 * generated converter must refuse as well: -3, with a message saying
 * "cannot" where the library's does.  Matrices with dimensions past 2^30
 * go only to pairs without dense levels (the generated code has no size
 * limit).  One generated file is also compiled alone with plain
 * -Wall -Wextra -pedantic.
 *
 * All files are written and compiled once, two cc at a time, by the
 * tcase's unchecked fixture (in the runner process); each pair is one
 * test of a loop test.  Mismatches are printed one a line ("gen: MISMATCH
 * ...") and fail the pair's test at its end. */
#include "spc_assemble.h"
#include "suites.h"
#include "testutil.h"
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the generated files' tensor (as the driver in every file has it) ---- */
typedef struct spconv_tensor {
  int order;
  int64_t dims[16];
  int nlevels;
  int64_t lo[16], N[16];
  int narrays;
  int64_t *arrays[64];
  int64_t lens[64];
  void *vals;
  int64_t nvals;
} spconv_tensor;
typedef int (*gen_conv_fn)(const spconv_tensor *in, spconv_tensor *out,
                           char *err, size_t err_len);
typedef void (*gen_free_fn)(spconv_tensor *t);

/* ---- the pairs ------------------------------------------------------------ */
enum { U_NONE = 0, U_UCSR, U_ELLC }; /* user formats (written by the fixture) */

typedef struct gpair {
  const char *from, *to; /* built-in names, or NULL with ufrom / uto */
  int ufrom, uto;
  int np; /* parameters of TO */
  int order; /* 0: order 2 (matrices); else tensors of this order */
  const char *pn[2];
  int64_t pv[2];
  const char *label; /* file stem, unique */
} gpair;

static const char *const order2[] = {"coo",  "csr", "csc",    "dcsr",
                                     "dcsc", "dia", "ell",    "bcsr",
                                     "sky",  "morton", "dense", "csf"};
#define NORDER2 12

#define MAXPAIRS 56
static gpair pairs[MAXPAIRS];
static int npairs;

static void add_pair(const char *from, int uf, const char *to, int ut, int np,
                     const char *n0, int64_t v0, const char *n1, int64_t v1) {
  static char labels[MAXPAIRS][64];
  gpair *p = &pairs[npairs];
  *p = (gpair){.from = from, .to = to, .ufrom = uf, .uto = ut, .np = np,
               .pn = {n0, n1}, .pv = {v0, v1}};
  static const char *const uname[] = {"", "ucsr", "ellc"};
  snprintf(labels[npairs], sizeof labels[0], "%s_to_%s%s",
           uf ? uname[uf] : from, ut ? uname[ut] : to, np ? "_p" : "");
  p->label = labels[npairs];
  npairs++;
}

/* FROM to TO for tensors of the given order (gen --order). */
static void add_tpair(const char *from, const char *to, int order) {
  static char labels[MAXPAIRS][64];
  gpair *p = &pairs[npairs];
  *p = (gpair){.from = from, .to = to, .order = order};
  snprintf(labels[npairs], sizeof labels[0], "%s_to_%s_o%d", from, to, order);
  p->label = labels[npairs];
  npairs++;
}

static void make_pairs(void) {
  if (npairs) return;
  for (int k = 0; k < NORDER2; k++) add_pair("coo", 0, order2[k], 0, 0, 0, 0, 0, 0);
  for (int k = 1; k < NORDER2; k++) add_pair(order2[k], 0, "csr", 0, 0, 0, 0, 0, 0);
  add_pair("dia", 0, "ell", 0, 0, 0, 0, 0, 0);
  add_pair("bcsr", 0, "csc", 0, 0, 0, 0, 0, 0);
  add_pair("ell", 0, "sky", 0, 0, 0, 0, 0, 0);
  add_pair("csc", 0, "dia", 0, 0, 0, 0, 0, 0);
  add_pair("morton", 0, "dcsc", 0, 0, 0, 0, 0, 0);
  /* TO's parameters (--param M=3 --param N=2) */
  add_pair("coo", 0, "bcsr", 0, 2, "M", 3, "N", 2);
  /* user formats: CSR with `requires: i <= j`, column ELL (a counter) */
  add_pair("coo", 0, NULL, U_UCSR, 0, 0, 0, 0, 0);
  add_pair("coo", 0, NULL, U_ELLC, 0, 0, 0, 0, 0);
  add_pair(NULL, U_ELLC, NULL, U_UCSR, 0, 0, 0, 0, 0);
  add_pair(NULL, U_UCSR, "csr", 0, 0, 0, 0, 0, 0);
  /* tensors: the formats of any order, at orders 3, 4 and 5 */
  add_tpair("coo", "csf", 3);
  add_tpair("csf", "coo", 3);
  add_tpair("coo", "dense", 3);
  add_tpair("dense", "csf", 3);
  add_tpair("csf", "csf", 4);
  add_tpair("coo", "csf", 5);
  add_tpair("coo", "csf", 1);
  add_tpair("csf", "dense", 1);
}

static const char ucsr_yaml[] =
    "format: ucsr\n"
    "description: upper triangular compressed sparse row\n"
    "order: 2\n"
    "remap: (i, j) -> (i, j)\n"
    "levels: [dense, compressed]\n"
    "requires:\n"
    "  - i <= j\n";
static const char ellc_yaml[] =
    "format: ellc\n"
    "description: column ELLPACK, the k-th entry of every column in slice k\n"
    "order: 2\n"
    "remap: (i, j) -> (#j as k, j, i)\n"
    "levels: [dense, dense, singleton]\n"
    "fill: zero\n";

/* ---- fixture state (set in the runner process, inherited by the tests) ---- */
static char *gdir;                       /* scratch folder of the tcase */
static char *upath[3];                   /* user spec paths */
static int have_cc = -1;                 /* 1 yes, 0 no compiler */
static char gen_err[MAXPAIRS][600];      /* spc_gen_source failures */
static int pedantic_rc = -1;             /* the -pedantic -c compile */
static double compile_s;                 /* wall time of all compiles */

static const char *cc_cmd(void) {
  const char *c = getenv("CC");
  return c && *c ? c : "cc";
}

static const char *fmt_of(const char *name, int u) { return u ? upath[u] : name; }

static void opts_for(const gpair *p, int to_side, spc_convert_opts *o) {
  spc_convert_opts_init(o);
  o->order = p->order;
  o->no_jit = 1; /* factory for built-ins, interpreter for user specs */
  if (to_side)
    for (int k = 0; k < p->np; k++) {
      o->param_names[o->nparams] = p->pn[k];
      o->param_values[o->nparams++] = p->pv[k];
    }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The fixture runs in the runner process, where Check's assertions cannot
 * report: it uses none (problems are left for the tests to find). */
static char *write_in(const char *dir, const char *name, const char *text) {
  char *p = tu_path(dir, name);
  if (tu_write_str(p, text)) fprintf(stderr, "gen: cannot write %s\n", p);
  return p;
}

/* Write every pair's file and compile them all, two at a time. */
static void gen_setup(void) {
  make_pairs();
  const char *t = getenv("TMPDIR");
  gdir = tu_path(t && *t ? t : "/tmp", "spconv_gen.XXXXXX");
  if (!mkdtemp(gdir)) {
    fprintf(stderr, "gen: mkdtemp %s failed\n", gdir);
    have_cc = 0;
    return;
  }
  upath[U_UCSR] = write_in(gdir, "ucsr.yaml", ucsr_yaml);
  upath[U_ELLC] = write_in(gdir, "ellc.yaml", ellc_yaml);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cc_cmd());
  have_cc = system(cmd) == 0;
  for (int i = 0; i < npairs; i++) {
    const gpair *p = &pairs[i];
    spc_convert_opts o;
    opts_for(p, 1, &o);
    char *text = NULL, name[128];
    spc_error e;
    spc_status st = spc_gen_source(fmt_of(p->from, p->ufrom), fmt_of(p->to, p->uto),
                                   SPC_F64, &o, &text, &e);
    gen_err[i][0] = 0;
    if (st != SPC_OK) {
      char b[1200];
      snprintf(gen_err[i], sizeof gen_err[i], "spc_gen_source: %s: %s",
               spc_status_name(st), spc_error_string(&e, b, sizeof b));
      continue;
    }
    snprintf(name, sizeof name, "%s.c", p->label);
    char *path = write_in(gdir, name, text);
    free(path);
    free(text);
  }
  if (!have_cc) return;
  double t0 = now_s();
  fflush(NULL);
  /* one shared object per file; cc's output in NAME.log */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && ls *.c | xargs -r -P2 -n1 sh -c '%s -std=c99 -O2 -Wall -Wextra "
           "-Werror -fPIC -shared -o \"${1%%.c}.so\" \"$1\" -lm >\"${1%%.c}.log\" 2>&1' sh; "
           "%s -std=c99 -O2 -Wall -Wextra -pedantic -c -o dia_to_csr.o dia_to_csr.c "
           ">pedantic.log 2>&1; "
           /* clang's warnings too (constant operands of &&, ...), where installed */
           "if command -v clang >/dev/null 2>&1; then "
           "clang -std=c99 -O2 -Wall -Wextra -Werror -c -o clang1.o dia_to_csr.c >clang.log 2>&1 && "
           "clang -std=c99 -O2 -Wall -Wextra -Werror -DSPC_GEN_HUGEPAGES -c -o clang2.o coo_to_csr.c "
           ">>clang.log 2>&1; echo $? >clang.rc; fi",
           gdir, cc_cmd(), cc_cmd());
  int rc = system(cmd);
  pedantic_rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  compile_s = now_s() - t0;
}

static void gen_teardown(void) {
  if (gdir && !getenv("SPC_GEN_KEEP")) tu_rmtree(gdir);
  else if (gdir) printf("gen: generated files kept in %s\n", gdir);
  free(gdir);
  gdir = NULL;
  for (int u = 1; u < 3; u++) free(upath[u]), upath[u] = NULL;
}

/* ---- the matrices ---------------------------------------------------------- */
/* Shared files (real general first), read with expand=1 as float64. */
static const char *const files[] = {
    "west0067.mtx", "west0067_jumbled.mtx", "cage5.mtx", "impcol_a.mtx",
    "lp_afiro.mtx", "bfwa62.mtx", "ldbc-directed-example.mtx", "two.mtx",
    "empty.mtx", "full.mtx", "pts5ldd03.mtx", "olm500.mtx", "west0479.mtx",
    "matrix_fp32.mtx", "one.mtx",
    /* integer / pattern */
    "cover.mtx", "msf1.mtx", "sample.mtx", "ash219.mtx", "Ragusa16_pattern.mtx",
    /* symmetric storage, expanded */
    "LFAT5.mtx", "LFAT5_hypersparse.mtx", "GD97_b.mtx", "skew_fp64.mtx",
    "karate.mtx", "tree-example.mtx"};
#define NFILES ((int)(sizeof files / sizeof files[0]))

typedef struct gmat {
  const char *name;
  char path[1200]; /* "" for hand-made ones */
  spc_tensor *t;
  bool huge; /* dimensions past 2^30: only for formats with no dense level */
} gmat;

/* Shared FROSTT tensors (order 3 to 5), read as float64. */
static const char *const tfiles[] = {"small.tns", "small4.tns", "med.tns", "med4.tns",
                                     "med5.tns"};
#define NTFILES ((int)(sizeof tfiles / sizeof tfiles[0]))

static gmat mats[NFILES + 12 + NTFILES + 9];
static int nmats;

static spc_tensor *tcoo_of(int order, const int64_t *dims, int n, const int64_t *idx,
                           const double *v);
/* An order-2 COO (below); NULL when the library fails. */
static spc_tensor *coo_of(int64_t rows, int64_t cols, int n, const int64_t *ij,
                          const double *v) {
  int64_t dims[2] = {rows, cols};
  return tcoo_of(2, dims, n, ij, v);
}

/* The lower triangle (j <= i) of an order-2 f64 tensor, as a new COO. */
static spc_tensor *tril_of(const spc_tensor *t) {
  int64_t n = spc_tensor_nstored(t), m = 0;
  int64_t *ij = malloc((size_t)(2 * n + 2) * sizeof *ij);
  double *v = malloc((size_t)(n + 1) * sizeof *v);
  spc_iter *it = NULL;
  spc_error e;
  int64_t c[2];
  const void *pv;
  if (spc_iter_create(t, &it, &e) != SPC_OK) {
    fprintf(stderr, "gen: spc_iter_create: %s\n", e.msg);
    it = NULL;
  }
  while (it && spc_iter_next(it, c, &pv))
    if (c[1] <= c[0]) {
      ij[2 * m] = c[0], ij[2 * m + 1] = c[1];
      memcpy(&v[m++], pv, sizeof(double));
    }
  spc_iter_free(&it);
  spc_tensor *r = coo_of(spc_tensor_dim(t, 0), spc_tensor_dim(t, 1), (int)m, ij, v);
  free(ij);
  free(v);
  return r;
}

/* An order-N f64 COO of n components (idx: n tuples of N); NULL when the
 * library fails (reported on stderr). */
static spc_tensor *tcoo_of(int order, const int64_t *dims, int n, const int64_t *idx,
                           const double *v) {
  spc_tensor *t = NULL;
  spc_error e;
  if (spc_tensor_create_coo(order, dims, n, SPC_F64, &t, &e) != SPC_OK) {
    fprintf(stderr, "gen: spc_tensor_create_coo: %s\n", e.msg);
    return NULL;
  }
  for (int l = 0; l < order; l++) {
    spc_itype ty = SPC_IDX64;
    spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL);
    void *p = spc_tensor_level_array_mut(t, l, "crd");
    for (int k = 0; k < n; k++) {
      if (ty == SPC_IDX32) ((int32_t *)p)[k] = (int32_t)idx[order * k + l];
      else ((int64_t *)p)[k] = idx[order * k + l];
    }
  }
  if (n) memcpy(spc_tensor_values_mut(t), v, (size_t)n * sizeof *v);
  return t;
}

/* Huge: a dimension past 2^30, or (order 3 and more) more than 2^26
 * positions in all -- only for pairs without dense levels. */
static bool is_huge(const spc_tensor *t) {
  double all = 1;
  bool big = false;
  for (int d = 0; d < spc_tensor_order(t); d++) {
    big |= spc_tensor_dim(t, d) > ((int64_t)1 << 30);
    all *= (double)spc_tensor_dim(t, d);
  }
  return big || (spc_tensor_order(t) > 2 && all > (double)((int64_t)1 << 26));
}

static void add_mat(const char *name, spc_tensor *t) {
  if (!t) return;
  ck_assert_msg(nmats < (int)(sizeof mats / sizeof mats[0]), "gen: room for %d matrices", nmats);
  mats[nmats].name = name;
  mats[nmats].path[0] = 0;
  mats[nmats].huge = is_huge(t);
  mats[nmats++].t = t;
}

/* Pairs that may see huge dimensions: neither side has a dense level or a
 * counter over a dimension (the generated code has no size limit, it
 * would allocate and fill such levels). */
static bool no_dense(const char *f) {
  static const char *const ok[] = {"coo", "dcsr", "dcsc", "morton", "csf"};
  for (int k = 0; f && k < 5; k++)
    if (!strcmp(f, ok[k])) return true;
  return false;
}
static bool huge_ok(const gpair *p) { return no_dense(p->from) && no_dense(p->to); }

static void load_matrices(void) {
  if (nmats) return;
  const char *dd = tu_data_dir();
  if (dd)
    for (int k = 0; k < NFILES; k++) {
      gmat *g = &mats[nmats];
      snprintf(g->path, sizeof g->path, "%s/matrices/%s", dd, files[k]);
      spc_read_opts ro;
      spc_read_opts_init(&ro);
      ro.expand = 1;
      ro.vtype = SPC_F64;
      spc_error e;
      g->t = NULL;
      if (spc_read(g->path, &ro, &g->t, &e) != SPC_OK) {
        char b[1200];
        printf("gen: %s not read (%s); left out\n", files[k],
               spc_error_string(&e, b, sizeof b));
        continue;
      }
      g->name = files[k];
      nmats++;
    }
  if (dd) /* tensors */
    for (int k = 0; k < NTFILES; k++) {
      gmat *g = &mats[nmats];
      snprintf(g->path, sizeof g->path, "%s/tensors/%s", dd, tfiles[k]);
      spc_read_opts ro;
      spc_read_opts_init(&ro);
      ro.vtype = SPC_F64;
      spc_error e;
      g->t = NULL;
      if (spc_read(g->path, &ro, &g->t, &e) != SPC_OK) {
        char b[1200];
        printf("gen: %s not read (%s); left out\n", tfiles[k], spc_error_string(&e, b, sizeof b));
        continue;
      }
      g->name = tfiles[k];
      g->huge = is_huge(g->t);
      nmats++;
    }
  /* Order-3 tensors by hand: duplicates (summed), NaN, -0, an empty mode
   * value range, one component, no components, a zero extent, huge modes */
  {
    static const int64_t d1[] = {3, 4, 5};
    static const int64_t x1[] = {2, 3, 4, 0, 0, 0, 2, 3, 4, 1, 0, 2, 0, 3, 0, 1, 0, 1, 2, 0, 4};
    const double v1[] = {1.5, -0.0, 2.5, NAN, 4, 0.25, -8};
    add_mat("hand3:dups", tcoo_of(3, d1, 7, x1, v1));
    static const int64_t d2[] = {1, 1, 1}, x2[] = {0, 0, 0};
    const double v2[] = {7};
    add_mat("hand3:one", tcoo_of(3, d2, 1, x2, v2));
    static const int64_t d3[] = {4, 2, 6};
    add_mat("hand3:none", tcoo_of(3, d3, 0, NULL, NULL));
    static const int64_t d4[] = {3, 0, 2};
    add_mat("hand3:3x0x2", tcoo_of(3, d4, 0, NULL, NULL));
    const int64_t G = (int64_t)1 << 31;
    const int64_t d5[] = {G, 3, G}, x5[] = {G - 1, 2, 0, 0, 0, G - 1, 12345, 1, G / 2};
    const double v5[] = {1, 2, 3};
    add_mat("hand3:huge", tcoo_of(3, d5, 3, x5, v5));
    /* vectors: repeats, an explicit zero; empty; of length 0 */
    static const int64_t d6[] = {7}, x6[] = {5, 0, 5, 3, 6};
    const double v6[] = {1, 2, 3, -0.0, INFINITY};
    add_mat("hand1:vec", tcoo_of(1, d6, 5, x6, v6));
    static const int64_t d7[] = {9}, d8[] = {0};
    add_mat("hand1:none", tcoo_of(1, d7, 0, NULL, NULL));
    add_mat("hand1:len0", tcoo_of(1, d8, 0, NULL, NULL));
  }
  /* Lower triangular, rectangular, with NaN, infinities, a subnormal,
   * duplicates summed, empty rows and columns. */
  static const int64_t ij1[] = {0, 0, 2, 1, 2, 0, 2, 1, 4, 4, 4, 0, 5, 2, 6, 3, 6, 0, 3, 3};
  const double v1[] = {1.5, 2.5, NAN, 0.25, -INFINITY, 4.9e-324, 1e300, INFINITY, -7, 3};
  add_mat("hand:lower_special", coo_of(7, 5, 10, ij1, v1));
  /* Negative zero (an explicit zero) among general entries. */
  static const int64_t ij2[] = {0, 3, 1, 1, 3, 0, 2, 2, 0, 0};
  const double v2[] = {1, -0.0, 2, 3, -4};
  add_mat("hand:negzero", coo_of(4, 4, 5, ij2, v2));
  /* A single entry at the far corner of a wide matrix. */
  static const int64_t ij3[] = {2, 40};
  const double v3[] = {6};
  add_mat("hand:corner", coo_of(3, 41, 1, ij3, v3));
  /* Empty dimensions: no rows, no columns (one row pointer, no slots) */
  add_mat("hand:0x4", coo_of(0, 4, 0, NULL, NULL));
  add_mat("hand:5x0", coo_of(5, 0, 0, NULL, NULL));
  /* Hypersparse with huge dimensions (corners and the middle): 2^31 x 2^31
   * (the Morton code still fits: [0, 2^62 - 1]), and 3e9 x 2^31. */
  {
    const int64_t G = (int64_t)1 << 31, H = 3000000000;
    const int64_t ij4[] = {0, 0, G - 1, G - 1, G - 1, 0, 12345, G / 2 + 7};
    const int64_t ij5[] = {0, 0, H - 1, G - 1, H - 1, 0, 12345, G / 2 + 7};
    const double v4[] = {1, 2, 3, 4};
    add_mat("hand:huge_2^31", coo_of(G, G, 4, ij4, v4));
    add_mat("hand:huge_3e9", coo_of(H, G, 4, ij5, v4));
  }
  /* Lower triangles of shared matrices: sky holds them. */
  for (int k = 0; k < nmats; k++)
    if (mats[k].path[0] && (!strcmp(mats[k].name, "west0067.mtx") ||
                            !strcmp(mats[k].name, "LFAT5.mtx") ||
                            !strcmp(mats[k].name, "ash219.mtx"))) {
      static char nm[3][64];
      static int q;
      snprintf(nm[q], sizeof nm[q], "tril:%s", mats[k].name);
      spc_tensor *lt = tril_of(mats[k].t);
      add_mat(nm[q++], lt);
    }
}

static void mats_setup(void) {
  gen_setup();
  load_matrices();
}

static void mats_teardown(void) {
  for (int k = 0; k < nmats; k++) spc_tensor_free(&mats[k].t);
  nmats = 0;
  gen_teardown();
}

/* ---- comparing one run ----------------------------------------------------- */
typedef struct gstats {
  int runs, ok, refused_both, input_refused, checks, mismatches;
  int raw; /* runs given a COO with its duplicates (use_raw_coo) */
  char first[1024];
} gstats;

static void mismatch(gstats *s, const gpair *p, const gmat *m, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void mismatch(gstats *s, const gpair *p, const gmat *m, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("gen: MISMATCH %s on %s: %s\n", p->label, m->name, msg);
  fflush(stdout); /* a failing test's child does not flush */
  if (!s->mismatches++)
    snprintf(s->first, sizeof s->first, "%s on %s: %s", p->label, m->name, msg);
}

/* Parse "level<L>_<name>". */
static bool split_name(const char *s, int *l, const char **name) {
  char *end;
  if (strncmp(s, "level", 5)) return false;
  long v = strtol(s + 5, &end, 10);
  if (end == s + 5 || *end != '_') return false;
  *l = (int)v;
  *name = end + 1;
  return true;
}

static int64_t elem(const void *d, spc_itype ty, int64_t k) {
  return ty == SPC_IDX32 ? ((const int32_t *)d)[k] : ((const int64_t *)d)[k];
}

static int total_arrays(const spc_tensor *t) {
  int n = 0;
  for (int l = 0; l < spc_tensor_nlevels(t); l++) n += spc_tensor_level_narrays(t, l);
  return n;
}

static int count_names(const char *const *names) {
  int n = 0;
  while (names[n]) n++;
  return n;
}

/* A new int64 copy of len elements of d (width ty). */
static int64_t *widened(const void *d, spc_itype ty, int64_t len) {
  int64_t *w = malloc((size_t)(len ? len : 1) * sizeof *w);
  for (int64_t i = 0; i < len; i++) w[i] = elem(d, ty, i);
  return w;
}

/* Fill in from the library tensor a (format FROM) by the generated names;
 * false (with a mismatch) when they do not match a's arrays. */
static bool build_input(gstats *s, const gpair *p, const gmat *m,
                        const spc_tensor *a, const char *const *names,
                        spconv_tensor *in) {
  memset(in, 0, sizeof *in);
  in->order = spc_tensor_order(a);
  for (int d = 0; d < in->order; d++) in->dims[d] = spc_tensor_dim(a, d);
  in->nlevels = spc_tensor_nlevels(a);
  spc_conv_desc desc;
  if (!spc_conv_describe(a, &desc)) {
    mismatch(s, p, m, "library tensor of %s not described", spc_tensor_format(a));
    return false;
  }
  for (int l = 0; l < in->nlevels; l++) in->lo[l] = desc.lo[l], in->N[l] = desc.N[l];
  int n = count_names(names);
  s->checks++;
  if (n != total_arrays(a)) {
    mismatch(s, p, m, "from_arrays names %d arrays, the library's %s has %d", n,
             spc_tensor_format(a), total_arrays(a));
    return false;
  }
  for (int k = 0; k < n; k++) {
    int l;
    const char *nm;
    const void *d;
    spc_itype ty;
    int64_t len;
    s->checks++;
    if (!split_name(names[k], &l, &nm) || l < 0 || l >= in->nlevels ||
        spc_tensor_level_array(a, l, nm, &d, &ty, &len) != SPC_OK) {
      mismatch(s, p, m, "from_arrays[%d] = %s: no such array in the library's %s", k,
               names[k], spc_tensor_format(a));
      for (int q = 0; q < k; q++) free(in->arrays[q]);
      in->narrays = 0;
      return false;
    }
    in->arrays[k] = widened(d, ty, len);
    in->lens[k] = len;
    in->narrays = k + 1;
  }
  int64_t nv = 0;
  in->vals = (void *)spc_tensor_values(a, &nv);
  in->nvals = nv;
  return true;
}

/* The COO as made, duplicates and all, in place of the library's combined
 * one (in, built from it): the generated converter sums them itself, as its
 * header says (before a counter numbers them too).  Only for a coo source
 * whose duplicates the library combined: an f64 general COO carrying the
 * same arrays. */
static bool use_raw_coo(const gpair *p, const gmat *m, const spc_tensor *a,
                        const char *const *names, spconv_tensor *in) {
  const spc_tensor *r = m->t;
  if (!p->from || strcmp(p->from, "coo") || p->ufrom || strcmp(spc_tensor_format(r), "coo") ||
      spc_tensor_symmetry(r) != SPC_GENERAL || spc_tensor_vtype(r) != SPC_F64 ||
      spc_tensor_nstored(r) == spc_tensor_nstored(a))
    return false;
  int n = count_names(names);
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < n; k++) {
      int l;
      const char *nm;
      const void *d;
      spc_itype ty;
      int64_t len;
      if (!split_name(names[k], &l, &nm) || spc_tensor_level_array(r, l, nm, &d, &ty, &len))
        return false;
      if (!pass) continue;
      free(in->arrays[k]);
      in->arrays[k] = widened(d, ty, len);
      in->lens[k] = len;
    }
  int64_t nv = 0;
  in->vals = (void *)spc_tensor_values(r, &nv);
  in->nvals = nv;
  return true;
}

/* Compare the generated output with the library's tensor b. */
static void compare_output(gstats *s, const gpair *p, const gmat *m,
                           const spconv_tensor *out, const spc_tensor *b,
                           const char *const *names) {
  int before = s->mismatches;
  s->checks++;
  if (out->order != spc_tensor_order(b) || out->nlevels != spc_tensor_nlevels(b)) {
    mismatch(s, p, m, "order/levels %d/%d, library %d/%d", out->order, out->nlevels,
             spc_tensor_order(b), spc_tensor_nlevels(b));
    return;
  }
  for (int d = 0; d < out->order; d++) {
    s->checks++;
    if (out->dims[d] != spc_tensor_dim(b, d))
      mismatch(s, p, m, "dims[%d] %lld, library %lld", d, (long long)out->dims[d],
               (long long)spc_tensor_dim(b, d));
  }
  spc_conv_desc desc;
  ck_assert(spc_conv_describe(b, &desc));
  for (int l = 0; l < out->nlevels; l++) {
    s->checks++;
    if (out->lo[l] != desc.lo[l] || out->N[l] != desc.N[l])
      mismatch(s, p, m, "level %d extent lo=%lld N=%lld, library lo=%lld N=%lld", l,
               (long long)out->lo[l], (long long)out->N[l], (long long)desc.lo[l],
               (long long)desc.N[l]);
  }
  int n = count_names(names);
  s->checks++;
  if (n != out->narrays || n != total_arrays(b)) {
    mismatch(s, p, m, "arrays: to_arrays names %d, generated %d, library %d", n,
             out->narrays, total_arrays(b));
    return;
  }
  /* the library's arrays in level order, k by k, against the names */
  int k = 0;
  for (int l = 0; l < spc_tensor_nlevels(b); l++)
    for (int q = 0; q < spc_tensor_level_narrays(b, l); q++, k++) {
      char want[160];
      snprintf(want, sizeof want, "level%d_%s", l, spc_tensor_level_array_name(b, l, q));
      s->checks++;
      if (strcmp(want, names[k]))
        mismatch(s, p, m, "to_arrays[%d] = %s, the library's array %d is %s", k,
                 names[k], k, want);
    }
  for (k = 0; k < n; k++) {
    int l;
    const char *nm;
    const void *d;
    spc_itype ty;
    int64_t len;
    s->checks++;
    if (!split_name(names[k], &l, &nm) ||
        spc_tensor_level_array(b, l, nm, &d, &ty, &len) != SPC_OK) {
      mismatch(s, p, m, "to_arrays[%d] = %s: no such array in the library's tensor", k,
               names[k]);
      continue;
    }
    s->checks++;
    if (len != out->lens[k]) {
      mismatch(s, p, m, "%s: length %lld, library %lld", names[k],
               (long long)out->lens[k], (long long)len);
      continue;
    }
    for (int64_t i = 0; i < len; i++)
      if (out->arrays[k][i] != elem(d, ty, i)) {
        mismatch(s, p, m, "%s[%lld] = %lld, library %lld", names[k], (long long)i,
                 (long long)out->arrays[k][i], (long long)elem(d, ty, i));
        break;
      }
  }
  int64_t nv = 0;
  const void *v = spc_tensor_values(b, &nv);
  s->checks++;
  if (nv != out->nvals) {
    mismatch(s, p, m, "nvals %lld, library %lld", (long long)out->nvals, (long long)nv);
  } else if (nv && memcmp(out->vals, v, (size_t)nv * sizeof(double))) {
    int64_t i = 0;
    while (!memcmp((const double *)out->vals + i, (const double *)v + i, sizeof(double)))
      i++;
    mismatch(s, p, m, "vals[%lld] = %a, library %a", (long long)i,
             ((const double *)out->vals)[i], ((const double *)v)[i]);
  }
  if (s->mismatches == before) s->ok++;
}

/* One pair on one matrix. */
static void run_one(gstats *s, const gpair *p, const gmat *m, gen_conv_fn fn,
                    gen_free_fn ffree, const char *const *from_names,
                    const char *const *to_names) {
  spc_convert_opts oa, ob;
  opts_for(p, 0, &oa);
  opts_for(p, 1, &ob);
  spc_tensor *a = NULL, *b = NULL;
  spc_error e;
  char eb[1200];
  spc_status sa = spc_convert_to(m->t, fmt_of(p->from, p->ufrom), &oa, &a, &e);
  if (sa == SPC_ERR_UNSUPPORTED) { /* the input cannot be made: nothing to convert */
    s->input_refused++;
    return;
  }
  ck_assert_msg(sa == SPC_OK, "%s: library -> %s: %s", m->name, p->label,
                spc_error_string(&e, eb, sizeof eb));
  spc_status sb = spc_convert_to(m->t, fmt_of(p->to, p->uto), &ob, &b, &e);
  char libmsg[600] = "";
  if (sb != SPC_OK) spc_error_string(&e, libmsg, sizeof libmsg);
  ck_assert_msg(sb == SPC_OK || sb == SPC_ERR_UNSUPPORTED, "%s: library -> %s: %s",
                m->name, p->label, libmsg);
  s->runs++;
  spconv_tensor in, out;
  if (!build_input(s, p, m, a, from_names, &in)) goto done;
  s->raw += use_raw_coo(p, m, a, from_names, &in);
  char err[512] = "";
  int rc = fn(&in, &out, err, sizeof err);
  s->checks++;
  if (sb == SPC_ERR_UNSUPPORTED) {
    if (rc == 0) {
      mismatch(s, p, m, "generated converter succeeded (level 0 lo=%lld N=%lld), library "
               "refused: %s", (long long)out.lo[0], (long long)out.N[0], libmsg);
      ffree(&out);
    } else if (rc != -3 || (strstr(libmsg, "cannot") && !strstr(err, "cannot"))) {
      /* -3: "the target cannot hold the tensor"; the message says "cannot"
       * where the library's does (not "no finite range", see the report) */
      mismatch(s, p, m, "generated refusal %d: \"%s\" (library: %s)", rc, err, libmsg);
    } else {
      s->refused_both++;
      if (getenv("SPC_GEN_VERBOSE"))
        printf("gen: %s on %s refused: generated \"%s\", library \"%s\"\n", p->label,
               m->name, err, libmsg);
    }
  } else if (rc != 0) {
    mismatch(s, p, m, "generated converter failed (%d): %s", rc, err);
  } else {
    compare_output(s, p, m, &out, b, to_names);
    ffree(&out);
  }
  for (int k = 0; k < in.narrays; k++) free(in.arrays[k]);
done:
  spc_tensor_free(&a);
  spc_tensor_free(&b);
}

/* ---- the tests --------------------------------------------------------------- */
static void *sym(void *h, const char *label, const char *what) {
  char name[200];
  snprintf(name, sizeof name, "spconv_%s%s", label, what);
  void *f = dlsym(h, name);
  ck_assert_msg(f != NULL, "dlsym %s: %s", name, dlerror());
  return f;
}

START_TEST(test_gen_pair) {
  const gpair *p = &pairs[_i];
  ck_assert_msg(!gen_err[_i][0], "%s: %s", p->label, gen_err[_i]);
  if (!have_cc) {
    if (_i == 0) printf("skipped: gen (no C compiler, generated files not run)\n");
    return;
  }
  char nm[200];
  snprintf(nm, sizeof nm, "%s.so", p->label);
  char *so = tu_path(gdir, nm);
  if (!tu_exists(so)) {
    snprintf(nm, sizeof nm, "%s.log", p->label);
    char *lp = tu_path(gdir, nm), *log = tu_read_file(lp, NULL);
    ck_abort_msg("cc failed on %s.c: %.1500s", p->label, log ? log : "(no log)");
  }
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen %s: %s", so, dlerror());
  /* the symbols are named after the formats' names (a spec's `format:`) */
  static const char *const uname[] = {"", "ucsr", "ellc"};
  char stem[128];
  snprintf(stem, sizeof stem, "%s_to_%s", p->ufrom ? uname[p->ufrom] : p->from,
           p->uto ? uname[p->uto] : p->to);
  gen_conv_fn fn;
  gen_free_fn ffree;
  *(void **)&fn = sym(h, stem, "");
  *(void **)&ffree = sym(h, stem, "_free");
  const char *const *from_names = sym(h, stem, "_from_arrays");
  const char *const *to_names = sym(h, stem, "_to_arrays");
  gstats s;
  memset(&s, 0, sizeof s);
  double t0 = now_s();
  int skipped_huge = 0;
  for (int k = 0; k < nmats; k++) {
    if (spc_tensor_order(mats[k].t) != (p->order ? p->order : 2)) continue;
    if (mats[k].huge && !huge_ok(p)) {
      skipped_huge++;
      continue;
    }
    run_one(&s, p, &mats[k], fn, ffree, from_names, to_names);
  }
  if (skipped_huge && _i == 0)
    printf("gen: %d huge matrices only for pairs without dense levels\n", skipped_huge);
  printf("gen: %-18s %2d matrices: ok %2d, refused by both %2d, input refused %2d, "
         "%5d checks, %d mismatches (%.2f s)\n",
         p->label, s.runs, s.ok, s.refused_both, s.input_refused, s.checks,
         s.mismatches, now_s() - t0);
  if (s.raw) printf("gen: %-18s %2d of them given the COO with its duplicates\n", p->label, s.raw);
  fflush(stdout);
  dlclose(h);
  free(so);
  ck_assert_msg(s.mismatches == 0, "%d mismatches; first: %s", s.mismatches, s.first);
}
END_TEST

START_TEST(test_gen_pedantic) {
  if (!have_cc) return;
  char *lp = tu_path(gdir, "pedantic.log"), *log = tu_read_file(lp, NULL);
  printf("gen: %d files compiled in %.2f s wall (2 at a time)\n", npairs, compile_s);
  ck_assert_msg(pedantic_rc == 0, "cc -std=c99 -Wall -Wextra -pedantic -c dia_to_csr.c: %s",
                log ? log : "");
  if (log && *log) printf("gen: -pedantic warnings on dia_to_csr.c:\n%s", log);
  free(log);
  free(lp);
  char *rp = tu_path(gdir, "clang.rc"), *rc = tu_read_file(rp, NULL);
  if (rc) { /* clang -Wall -Wextra -Werror on two files */
    char *cp = tu_path(gdir, "clang.log"), *clog = tu_read_file(cp, NULL);
    ck_assert_msg(atoi(rc) == 0, "clang -Wall -Wextra -Werror: %.1500s", clog ? clog : "");
    free(clog);
    free(cp);
  }
  free(rc);
  free(rp);
}
END_TEST

/* The entry validates its input: wrong level or array counts give -1. */
START_TEST(test_gen_bad_input) {
  if (!have_cc) return;
  char *so = tu_path(gdir, "coo_to_csr.so");
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen %s: %s", so, dlerror());
  gen_conv_fn fn;
  *(void **)&fn = sym(h, "coo_to_csr", "");
  int64_t pos[] = {0, 1}, r[] = {0}, c[] = {0};
  double v[] = {1};
  spconv_tensor in = {.order = 2, .dims = {1, 1}, .nlevels = 2, .N = {1, 1},
                      .narrays = 2, .arrays = {pos, r, c}, .lens = {2, 1, 1},
                      .vals = v, .nvals = 1},
                out;
  char err[256] = "";
  ck_assert_int_eq(fn(&in, &out, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "input") != NULL, "%s", err);
  in.narrays = 3;
  in.order = 3;
  ck_assert_int_eq(fn(&in, &out, err, sizeof err), -1);
  dlclose(h);
  free(so);
}
END_TEST

/* SPCONV_MAX_POSITIONS bounds a counter's count array too (one entry a
 * row for ELL's #i): a tall matrix refused with -3 and the library's
 * words, not an allocation of every row's count; under it, converted. */
START_TEST(test_gen_counter_limit) {
  if (!have_cc) return;
  char cmd[4096], *so = tu_path(gdir, "ell_lim.so");
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s -std=c99 -O2 -Wall -Wextra -Werror -fPIC -shared "
           "-DSPCONV_MAX_POSITIONS=1000 -o ell_lim.so coo_to_ell.c -lm >ell_lim.log 2>&1",
           gdir, cc_cmd());
  ck_assert_int_eq(system(cmd), 0);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen %s: %s", so, dlerror());
  gen_conv_fn fn;
  gen_free_fn ffree;
  *(void **)&fn = sym(h, "coo_to_ell", "");
  *(void **)&ffree = sym(h, "coo_to_ell", "_free");
  int64_t pos[] = {0, 3}, r[] = {0, 0, 1500}, c[] = {0, 0, 1};
  double v[] = {1, 2, 3};
  spconv_tensor in = {.order = 2, .dims = {3000, 2}, .nlevels = 2, .N = {3000, 2},
                      .narrays = 3, .arrays = {pos, r, c}, .lens = {2, 3, 3},
                      .vals = v, .nvals = 3},
                out;
  char err[256] = "";
  ck_assert_int_eq(fn(&in, &out, err, sizeof err), -3);
  ck_assert_msg(strstr(err, "counter i needs a count array of more than 1000 entries") != NULL,
                "%s", err);
  in.dims[0] = in.N[0] = 1000;
  r[2] = 999;
  ck_assert_int_eq(fn(&in, &out, err, sizeof err), 0);
  ck_assert_int_eq(out.N[0], 1); /* one slot a row: (0, 0) twice is one entry */
  ffree(&out);
  dlclose(h);
  free(so);
}
END_TEST

/* Errors of spc_gen_source itself. */
START_TEST(test_gen_errors) {
  char *text = NULL;
  spc_error e;
  ck_assert_int_ne(spc_gen_source("coo", "nosuchformat", SPC_F64, NULL, &text, &e), SPC_OK);
  ck_assert_ptr_null(text);
  ck_assert_int_ne(spc_gen_source("nosuchformat", "csr", SPC_F64, NULL, &text, &e), SPC_OK);
  ck_assert_ptr_null(text);
  /* the same text every time: generation is deterministic */
  char *t1 = NULL, *t2 = NULL;
  tu_assert_ok(spc_gen_source("coo", "dia", SPC_F64, NULL, &t1, &e), &e);
  tu_assert_ok(spc_gen_source("coo", "dia", SPC_F64, NULL, &t2, &e), &e);
  ck_assert_str_eq(t1, t2);
  ck_assert_ptr_nonnull(strstr(t1, "int spconv_coo_to_dia("));
  ck_assert_ptr_null(strstr(t1, "spconv.h"));
  free(t1);
  free(t2);
  /* --order: only for formats of any order; --modes refused (a YAML remap) */
  spc_convert_opts o;
  spc_convert_opts_init(&o);
  o.order = 3;
  ck_assert_int_eq(spc_gen_source("coo", "csr", SPC_F64, &o, &text, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_ptr_null(text);
  ck_assert_msg(strstr(e.msg, "csr holds tensors of order 2, not 3") != NULL, "%s", e.msg);
  o.order = SPC_MAX_ORDER + 1;
  ck_assert_int_eq(spc_gen_source("coo", "csf", SPC_F64, &o, &text, &e), SPC_ERR_ARG);
  o.order = 3;
  tu_assert_ok(spc_gen_source("coo", "csf", SPC_F64, &o, &t1, &e), &e);
  ck_assert_ptr_nonnull(strstr(t1, "#define SPCONV_ORDER 3\n"));
  free(t1);
  o.nmodes = 3;
  o.modes[0] = 2, o.modes[1] = 0, o.modes[2] = 1;
  ck_assert_int_eq(spc_gen_source("coo", "csf", SPC_F64, &o, &text, &e), SPC_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(e.msg, "remap") != NULL, "%s", e.msg);
}
END_TEST

Suite *suite_gen(void) {
  make_pairs();
  Suite *s = suite_create("gen");
  TCase *tc = tcase_create("gen");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_unchecked_fixture(tc, mats_setup, mats_teardown);
  tcase_add_test(tc, test_gen_pedantic);
  tcase_add_test(tc, test_gen_bad_input);
  tcase_add_test(tc, test_gen_counter_limit);
  tcase_add_test(tc, test_gen_errors);
  tcase_add_loop_test(tc, test_gen_pair, 0, npairs);
  suite_add_tcase(s, tc);
  return s;
}
