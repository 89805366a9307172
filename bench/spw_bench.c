/* spw_bench.c -- time the sparse workspace (issue 5) in process.
 *
 *   spw_bench [-r R] [-b SEC] [-e ENGINE] [-c CONFIG,...] [-x CONV,...]
 *             [-w CACHEDIR] FILE...
 *
 * For every FILE (Matrix Market: coo_csr and csr_csc; FROSTT .tns of order
 * 3: coo_csf and csf_mode) it reads the file with spc_read (symmetric
 * storage expanded, values as double, duplicates kept), prepares each
 * conversion's source untimed, then times spc_convert_ex alone under each
 * CONFIG, up to R times (default 3) or until SEC seconds (default 5) went
 * on it, and keeps the best wall time (and the best CPU time).
 *
 * Conversions (the source's stored points are "input points"):
 *   coo_csr   COO as read (file order, duplicates kept) -> CSR
 *   csr_csc   CSR (made from the COO, duplicates summed) -> CSC
 *   coo_csf   order-3 COO as read -> CSF (levels i, j, k)
 *   csf_mode  CSF (i, j, k) -> CSF with modes 2,0,1 (levels k, i, j):
 *             spc_convert_opts.nmodes / modes, as `--modes=2,0,1`
 *
 * Configurations (-c, default: all of them in this order):
 *   sort        no workspace options: the plain path (one sort, or the
 *               counting sort / scatter, of all the components)
 *   hash:CAP    spc_convert_opts.spw = SPC_SPW_HASH, acc = CAP
 *   list:CAP    spc_convert_opts.spw = SPC_SPW_LIST, acc = CAP
 *   hash, list  the workspace with acc = 0 (the library's default capacity)
 *   bucket      spc_convert_opts.spw = SPC_SPW_BUCKET, acc = 0: the
 *               library's default workspace (what --mem alone runs);
 *               bucket:CAP is the list's flushes with the bucket sort
 *   load        nothing is converted (for the peak memory of the input)
 * CAP: a count with an optional K (2^10) or M (2^20) suffix, or "all" (the
 * source's stored points: one flush).  mem stays 0 (1/4 of RAM: no spill).
 *
 * Output, one tab-separated line per file, conversion and configuration:
 *   spw CONV CONFIG SECONDS NPTS FILE cpu=CPU out=NOUT chk=HEX vsum=V
 *       flushes=F merges=M spilled=S peak_bytes=P
 * NPTS: stored points of the source; SECONDS / NPTS is the ns per input
 * point.  NOUT, CHK (a hash of every level array of the result, in order)
 * and VSUM (the sum of the result's values; every configuration sums
 * duplicates left to right in arrival order) must agree between
 * configurations.  flushes..peak_bytes are the
 * workspace's statistics (0 for sort).  Lines
 *   skip spw CONV FILE (why)     error spw CONV CONFIG FILE (message)
 * report what was not timed.
 *
 * -w CACHEDIR writes, for each matrix file, CACHEDIR/BASENAME.coo: the COO
 * as read, duplicates kept (layout in conv_peer.h), which the peers of
 * conv_bench load with CONV_CACHE=CACHEDIR. */
#include "spconv.h"
#include "spc_impl.h"
#include "spc_assemble.h"
#include "spec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

typedef struct conv_def {
  const char *name;
  int order;
  const char *src; /* "coo" (as read), "csr", "csf" */
  const char *dst;
  int nmodes;
  int modes[3];
} conv_def;

static const conv_def CONVS[] = {
    {"coo_csr", 2, "coo", "csr", 0, {0}},
    {"csr_csc", 2, "csr", "csc", 0, {0}},
    {"coo_csf", 3, "coo", "csf", 0, {0}},
    {"csf_mode", 3, "csf", "csf", 3, {2, 0, 1}},
};
#define NCONVS (int)(sizeof CONVS / sizeof CONVS[0])

static const char *DEFAULT_CONFIGS =
    "sort,hash:1K,hash:16K,hash:256K,hash:4M,hash:all,"
    "list:1K,list:16K,list:256K,list:4M,list:all,hash,list,bucket";

typedef struct run_opts {
  int reps;
  double budget;
  const char *engine, *only, *configs, *cache;
} run_opts;

static void die_err(const char *what, const spc_error *e) {
  char buf[1200];
  fprintf(stderr, "spw_bench: %s: %s\n", what, spc_error_string(e, buf, sizeof buf));
  exit(1);
}

static bool in_list(const char *list, const char *name) {
  if (!list) return true;
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *c = strchr(p, ',');
    size_t m = c ? (size_t)(c - p) : strlen(p);
    if (m == n && !strncmp(p, name, n)) return true;
    if (!c) break;
    p = c + 1;
  }
  return false;
}

/* A configuration: kind (SPC_SPW_*, or -1 for load) and acc (-1: all). */
static int parse_config(const char *c, int *kind, int64_t *acc) {
  *acc = 0;
  if (!strcmp(c, "sort")) { *kind = SPC_SPW_NONE; return 0; }
  if (!strcmp(c, "load")) { *kind = -1; return 0; }
  if (!strncmp(c, "hash", 4)) *kind = SPC_SPW_HASH;
  else if (!strncmp(c, "list", 4)) *kind = SPC_SPW_LIST;
  else if (!strncmp(c, "bucket", 6)) { *kind = SPC_SPW_BUCKET; c += 2; }
  else return -1;
  c += 4;
  if (!*c) return 0;
  if (*c++ != ':') return -1;
  if (!strcmp(c, "all")) { *acc = -1; return 0; }
  char *end;
  long long v = strtoll(c, &end, 10);
  if (end == c || v < 1) return -1;
  if (*end == 'K' || *end == 'k') v <<= 10, end++;
  else if (*end == 'M' || *end == 'm') v <<= 20, end++;
  if (*end) return -1;
  *acc = v;
  return 0;
}

/* ---- the result's fingerprint --------------------------------------------- */

static void fingerprint(const spc_tensor *t, uint64_t *chk, double *vsum) {
  uint64_t h = 1469598103934665603ULL;
  for (int l = 0; l < t->nlevels; l++)
    for (int k = 0; k < t->lv[l].narr; k++) {
      const spc_array *a = &t->lv[l].arr[k];
      for (int64_t q = 0; q < a->len; q++) {
        h ^= (uint64_t)spc_arr_get(a, q);
        h *= 1099511628211ULL;
      }
    }
  double s = 0;
  if (t->vt == SPC_F64)
    for (int64_t q = 0; q < t->nval; q++) s += ((const double *)t->val)[q];
  *chk = h;
  *vsum = s;
}

/* ---- the cache for the peers (conv_peer.h's layout) ----------------------- */

static void write_cache(const char *dir, const char *path, const spc_tensor *t) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char out[4096], tmp[4200];
  snprintf(out, sizeof out, "%s/%s.coo", dir, base);
  snprintf(tmp, sizeof tmp, "%s.tmp", out);
  FILE *f = fopen(tmp, "wb");
  if (!f) { fprintf(stderr, "spw_bench: cannot write %s\n", tmp); exit(1); }
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
  } else {
    double one = 1;
    for (int64_t q = 0; q < n; q++) fwrite(&one, 8, 1, f);
  }
  if (fclose(f) || rename(tmp, out)) {
    fprintf(stderr, "spw_bench: cannot write %s\n", out);
    exit(1);
  }
}

/* ---- timing --------------------------------------------------------------- */

static void time_config(const conv_def *cv, const char *cfg, const spc_tensor *src,
                        const spc_specs *S, const spc_format_spec *fs,
                        const run_opts *o, const char *path, int *fails) {
  int kind;
  int64_t acc;
  char buf[1200];
  if (parse_config(cfg, &kind, &acc)) {
    fprintf(stderr, "spw_bench: bad configuration '%s'\n", cfg);
    exit(2);
  }
  int64_t npts = spc_tensor_nstored(src);
  if (kind < 0) {
    printf("spw\t%s\tload\t0\t%lld\t%s\n", cv->name, (long long)npts, path);
    return;
  }
  spc_convert_info info;
  spc_convert_opts co;
  spc_convert_opts_init(&co);
  if (o->engine && spc_engine_parse(o->engine, &co.engine)) {
    fprintf(stderr, "spw_bench: unknown engine '%s'\n", o->engine);
    exit(2);
  }
  co.spw = kind;
  co.acc = acc < 0 ? (npts > 0 ? npts : 1) : acc;
  co.nmodes = cv->nmodes;
  for (int k = 0; k < cv->nmodes; k++) co.modes[k] = cv->modes[k];
  co.info = &info;
  double best = 1e30, best_cpu = 1e30, spent = 0, vsum = 0;
  uint64_t chk = 0;
  int64_t nout = 0;
  spc_error e;
  spc_error_clear(&e);
  spc_status st = SPC_OK;
  for (int r = 0; r < o->reps && (r == 0 || spent < o->budget); r++) {
    spc_tensor *out = NULL;
    memset(&info, 0, sizeof info);
    double c0 = cpu_now(), t0 = now();
    st = spc_convert_ex(src, S, fs, NULL, 0, SPC_DUP_SUM, &co, &out, &e);
    double dt = now() - t0, dc = cpu_now() - c0;
    if (st) break;
    if (r == 0) {
      fingerprint(out, &chk, &vsum);
      nout = spc_tensor_nstored(out);
    }
    spc_tensor_free(&out);
    spent += dt;
    if (dt < best) best = dt;
    if (dc < best_cpu) best_cpu = dc;
  }
  if (st) {
    printf("error\tspw\t%s\t%s\t%s\t(%s)\n", cv->name, cfg, path,
           spc_error_string(&e, buf, sizeof buf));
    ++*fails;
    return;
  }
  printf("spw\t%s\t%s\t%.6f\t%lld\t%s\tcpu=%.6f\tout=%lld\tchk=%016llx\tvsum=%.15g"
         "\tflushes=%lld\tmerges=%lld\tspilled=%lld\tpeak_bytes=%lld\n",
         cv->name, cfg, best, (long long)npts, path, best_cpu, (long long)nout,
         (unsigned long long)chk, vsum, (long long)info.spw.flushes,
         (long long)info.spw.merges, (long long)info.spw.spilled_runs,
         (long long)info.spw.peak_bytes);
  fflush(stdout);
}

static int bench_file(const char *path, const spc_specs *S, const run_opts *o) {
  spc_read_opts ro;
  spc_read_opts_init(&ro);
  ro.expand = 1;
  ro.vtype = SPC_F64;
  spc_tensor *coo = NULL;
  spc_error e;
  spc_error_clear(&e);
  char buf[1200];
  if (spc_read(path, &ro, &coo, &e)) {
    printf("error\tspw\tread\t-\t%s\t(%s)\n", path, spc_error_string(&e, buf, sizeof buf));
    return 1;
  }
  int fails = 0;
  if (o->cache && coo->order == 2) write_cache(o->cache, path, coo);
  for (int c = 0; c < NCONVS; c++) {
    const conv_def *cv = &CONVS[c];
    if (cv->order != coo->order || !in_list(o->only, cv->name)) continue;
    spc_tensor *made = NULL;
    if (strcmp(cv->src, "coo") &&
        spc_convert(coo, S, spc_specs_format(S, cv->src), NULL, 0, SPC_DUP_SUM, &made, &e)) {
      printf("error\tspw\t%s\t-\t%s\t(making the %s source: %s)\n", cv->name, path, cv->src,
             spc_error_string(&e, buf, sizeof buf));
      fails++;
      continue;
    }
    const spc_tensor *src = made ? made : coo;
    const spc_format_spec *fs = spc_specs_format(S, cv->dst);
    const char *cfgs = o->configs ? o->configs : DEFAULT_CONFIGS;
    char one[64];
    for (const char *p = cfgs; *p;) {
      const char *q = strchr(p, ',');
      size_t m = q ? (size_t)(q - p) : strlen(p);
      if (m >= sizeof one) m = sizeof one - 1;
      memcpy(one, p, m);
      one[m] = 0;
      if (m) time_config(cv, one, src, S, fs, o, path, &fails);
      if (!q) break;
      p = q + 1;
    }
    spc_tensor_free(&made);
  }
  spc_tensor_free(&coo);
  return fails;
}

static void usage(void) {
  fprintf(stderr,
          "usage: spw_bench [-r R] [-b SEC] [-e ENGINE] [-c CONFIG,...] [-x CONV,...]\n"
          "                 [-w CACHEDIR] FILE...\n"
          "configurations: sort, load, hash, list, hash:CAP, list:CAP (CAP: N, NK, NM, all)\n"
          "conversions:");
  for (int c = 0; c < NCONVS; c++) fprintf(stderr, " %s", CONVS[c].name);
  fprintf(stderr, "\n");
  exit(2);
}

int main(int argc, char **argv) {
  run_opts o = {.reps = 3, .budget = 5};
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) usage();
    if (!strcmp(a, "-r")) o.reps = atoi(argv[++i]);
    else if (!strcmp(a, "-b")) o.budget = atof(argv[++i]);
    else if (!strcmp(a, "-e")) o.engine = argv[++i];
    else if (!strcmp(a, "-c")) o.configs = argv[++i];
    else if (!strcmp(a, "-x")) o.only = argv[++i];
    else if (!strcmp(a, "-w")) o.cache = argv[++i];
    else usage();
  }
  if (o.reps < 1) o.reps = 1;
  if (i == argc) usage();
  spc_specs *S = NULL;
  spc_error e;
  spc_error_clear(&e);
  if (spc_specs_builtin(&S, &e)) die_err("built-in specs", &e);
  int fails = 0;
  for (; i < argc; i++) fails += bench_file(argv[i], S, &o);
  spc_specs_free(&S);
  return fails ? 1 : 0;
}
