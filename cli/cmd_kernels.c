/* cmd_kernels.c -- `spconv spmv A [X] [-o Y]`, `spconv spgemm A B -o C` and
 * `spconv explain spgemm A B`. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <zlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void kernel_opts(const cli_opts *o, spc_kernel_opts *k) {
  memset(k, 0, sizeof *k);
  k->engine = o->engine;
  k->no_jit = o->no_jit;
  k->threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (k->threads < 1) k->threads = 1;
  k->format = o->to;
  k->schedule = o->schedule;
  k->algo = o->algo;
  k->workspace = o->workspace;
  k->unsorted = o->unsorted;
}

/* x from a Matrix Market array (or any readable vector): n values as
 * double, or (re, im) pairs when cplx. */
static int read_x(const char *path, const cli_opts *o, int64_t n, bool cplx, double *x) {
  spc_read_opts r;
  cli_read_opts(o, &r);
  r.expand = 1;
  spc_tensor *t = NULL, *c = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(path, &r, &t, &e);
  if (!s) s = spc_tensor_to_coo(t, 0, &c, &e);
  if (s) {
    spc_tensor_free(&t);
    return cli_fail(s, &e);
  }
  /* a vector: order 1, or a matrix of one column or one row (or none) */
  int ord = spc_tensor_order(t);
  if (ord > 2 || (ord == 2 && spc_tensor_dim(t, 0) > 1 && spc_tensor_dim(t, 1) > 1)) {
    char shape[200];
    int k = snprintf(shape, sizeof shape, "%lld", (long long)spc_tensor_dim(t, 0));
    for (int d = 1; d < ord && k < (int)sizeof shape - 24; d++)
      k += snprintf(shape + k, sizeof shape - (size_t)k, " x %lld", (long long)spc_tensor_dim(t, d));
    fprintf(stderr, "spconv: %s: x must be a vector (an n x 1 or 1 x n array, or of order 1), "
                    "not %s\n", cli_name(path), shape);
    spc_tensor_free(&t);
    spc_tensor_free(&c);
    return EXIT_INPUT;
  }
  int64_t len = spc_tensor_dim(t, 0) * (ord == 2 ? spc_tensor_dim(t, 1) : 1);
  if (len != n) {
    fprintf(stderr, "spconv: %s: x has %lld entries, the matrix needs %lld\n", cli_name(path),
            (long long)len, (long long)n);
    spc_tensor_free(&t);
    spc_tensor_free(&c);
    return EXIT_INPUT;
  }
  memset(x, 0, (size_t)n * (cplx ? 16 : 8));
  spc_iter *it = NULL;
  int64_t k[SPC_MAX_ORDER];
  const void *v;
  spc_vtype vt = spc_tensor_vtype(c);
  int64_t rows = spc_tensor_dim(c, 0);
  if (vt == SPC_C128 && !cplx) {
    fprintf(stderr, "spconv: %s: x is complex but the matrix is real (convert the matrix "
                    "with --type=complex128)\n", cli_name(path));
    spc_tensor_free(&t);
    spc_tensor_free(&c);
    return EXIT_UNSUPP;
  }
  if (spc_iter_create(c, &it, &e)) return cli_fail(SPC_ERR_NOMEM, &e);
  while (spc_iter_next(it, k, &v)) {
    int64_t i = spc_tensor_order(c) == 2 ? k[1] * rows + k[0] : k[0];
    double re = 1, im = 0;
    switch (vt) {
    case SPC_I64: re = (double)*(const int64_t *)v; break;
    case SPC_U64: re = (double)*(const uint64_t *)v; break;
    case SPC_F32: re = *(const float *)v; break;
    case SPC_F64: re = *(const double *)v; break;
    case SPC_C128: re = ((const double *)v)[0], im = ((const double *)v)[1]; break;
    default: break;
    }
    if (cplx) x[2 * i] += re, x[2 * i + 1] += im;
    else x[i] += re;
  }
  spc_iter_free(&it);
  spc_tensor_free(&t);
  spc_tensor_free(&c);
  return EXIT_OK;
}

/* y as a Matrix Market array (n x 1), written to a temporary name then
 * renamed.  An empty y (a matrix of no rows) is written 0 x 0: SciPy's
 * mmread (1.10) refuses a 0 x 1 array -- its own mmwrite's output -- and
 * reads 0 x 0 as the empty array it is. */
static int write_y(const char *path, const double *y, int64_t n, bool cplx) {
  char tmp[4200] = "";
  FILE *f = path ? cli_out_open(path, tmp, sizeof tmp) : stdout;
  if (!f) {
    fprintf(stderr, "spconv: %s: cannot write\n", path);
    return EXIT_IO;
  }
  /* NAME.gz: the same text gzip-compressed, through a second descriptor
   * of the temporary (closed before it is renamed) */
  int gfd = path && cli_gz_name(path) ? dup(fileno(f)) : -1;
  gzFile gz = gfd >= 0 ? gzdopen(gfd, "wb") : NULL;
  if (gfd >= 0 && !gz) close(gfd);
  int bad = path && cli_gz_name(path) && !gz;
#define YPRINT(...) ((gz ? gzprintf(gz, __VA_ARGS__) : fprintf(f, __VA_ARGS__)) < 0)
  bad = bad || YPRINT("%%%%MatrixMarket matrix array %s general\n%lld %d\n",
                      cplx ? "complex" : "real", (long long)n, n > 0);
  for (int64_t i = 0; i < n && !bad; i++)
    bad = cplx ? YPRINT("%.17g %.17g\n", y[2 * i], y[2 * i + 1]) : YPRINT("%.17g\n", y[i]);
#undef YPRINT
  if (gz && gzclose(gz) != Z_OK) bad = 1;
  if (!path && (fflush(f) || ferror(f))) bad = 1;
  if (!path && bad) {
    fprintf(stderr, "spconv: <stdout>: write failed\n");
    return EXIT_IO;
  }
  if (path && cli_out_close(f, path, tmp, bad)) {
    fprintf(stderr, "spconv: %s: cannot write\n", path);
    return EXIT_IO;
  }
  return EXIT_OK;
}

/* x and y of 4 MiB or more: 2 MiB-aligned and advised to transparent huge
 * pages (THP "madvise" mode, as on Debian; the library's own arrays are,
 * core/spc_alloc.c), as NumPy allocates SciPy's: the random gathers of a
 * large x then miss the TLB far less (a 2 M x 2 M uniform matrix, 20 M
 * entries: 10-20% faster, bench/README.md).  Only a hint, and not given
 * where spc_hugepages_on() says no (SPCONV_HUGEPAGES=0, which the command
 * sets itself under free page reporting: README "Memory"). */
static double *vec_alloc(size_t n) {
  void *p = NULL;
  if (n < ((size_t)4 << 20) || !spc_hugepages_on()) return malloc(n);
  if (posix_memalign(&p, (size_t)2 << 20, n)) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

int cmd_spmv(int argc, char **argv) {
  cli_opts o;
  const char *pos[2];
  int np = cli_parse(argc, argv, &o, pos, 2, "spmv");
  if (np < 0) return EXIT_USAGE;
  if (np < 1) return cli_usage_error("spmv", "expected A [X] [-o Y]");
  if (o.out && strcmp(o.out, "-")) { /* Y is Matrix Market text, gzip by the name */
    spc_file_kind yk = spc_file_kind_from_name(o.out);
    if (yk != SPC_FILE_MTX && yk != SPC_FILE_UNKNOWN)
      return cli_usage_error("spmv", "Y is written as Matrix Market: name it .mtx or .mtx.gz, not %s",
                             o.out);
  }
  cli_inputs(pos, 0, np);
  spc_read_opts r;
  cli_read_opts(&o, &r);
  r.expand = 1;
  spc_kernel_opts k;
  kernel_opts(&o, &k);
  spc_kernel_info info;
  memset(&info, 0, sizeof info);
  k.info = &info;
  spc_tensor *A = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &r, &A, &e);
  if (!s) s = cli_dup_order(&o, SPC_DUP_SUM, pos[0], &A, NULL, &e); /* summed as SciPy sums */
  if (s) {
    spc_tensor_free(&A);
    return cli_fail(s, &e);
  }
  if (spc_tensor_order(A) != 2) {
    spc_tensor_free(&A);
    fprintf(stderr, "spconv: %s: spmv needs a matrix (order 2)\n", cli_name(pos[0]));
    return EXIT_UNSUPP;
  }
  /* into the kernel's format once, outside the timed runs: --to, else csr
   * for a COO, else A's own format where it is a built-in one; a user's
   * format read from its container (which carries its spec) runs as read:
   * its name alone names no spec to convert to */
  const char *own = spc_tensor_format(A);
  if (o.to || !strcmp(own, "coo") || spc_format_yaml(own)) {
    spc_convert_opts c;
    cli_convert_opts(&o, &c);
    spc_tensor *X = NULL;
    s = spc_convert_to(A, o.to ? o.to : (strcmp(own, "coo") ? own : "csr"), &c, &X, &e);
    spc_tensor_free(&A);
    if (s && !e.file[0]) snprintf(e.file, sizeof e.file, "%s", pos[0]); /* which input */
    if (s) return cli_fail(s, &e);
    A = X;
    /* A is in the kernel's format now: --to named as a YAML path would
     * not match its format's name, and spc_spmv would convert it again
     * (without the --spec files the path needs) */
    k.format = NULL;
  }
  bool cplx = spc_tensor_vtype(A) == SPC_C128;
  int64_t nx = spc_tensor_dim(A, o.transpose ? 0 : 1), ny = spc_tensor_dim(A, o.transpose ? 1 : 0);
  /* a length past what a size_t holds in bytes is out of memory too (not
   * a product that wraps round to a small allocation) */
  const size_t w = cplx ? 16 : 8;
  double *x = (uint64_t)nx <= SIZE_MAX / w ? vec_alloc((size_t)(nx ? nx : 1) * w) : NULL;
  double *y = x && (uint64_t)ny <= SIZE_MAX / w ? vec_alloc((size_t)(ny ? ny : 1) * w) : NULL;
  int rc = x && y ? EXIT_OK : EXIT_NOMEM;
  if (rc) /* the dense vectors: x of A's columns, y of its rows (or the transpose's) */
    fprintf(stderr, "spconv: %s: spmv: out of memory for the dense vector %s of %lld entries (%.3g GB)\n",
            cli_name(pos[0]), !x ? "x" : "y", (long long)(!x ? nx : ny),
            (double)(!x ? nx : ny) * (double)w / 1e9);
  if (!rc && np == 2) rc = read_x(pos[1], &o, nx, cplx, x);
  else if (!rc)
    for (int64_t i = 0; i < nx; i++) {
      if (cplx) x[2 * i] = 1, x[2 * i + 1] = 0;
      else x[i] = 1;
    }
  int repeat = o.repeat > 0 ? o.repeat : 1;
  double best = 1e300;
  for (int it = 0; !rc && it < repeat; it++) {
    double t0 = now();
    s = spc_spmv(A, o.transpose, x, y, &k, &e);
    double dt = now() - t0;
    if (s) rc = cli_fail(s, &e);
    if (dt < best) best = dt;
  }
  if (!rc && (o.verbose || repeat > 1))
    fprintf(stderr, "spconv: spmv %s: %lld stored, best of %d: %.6f s (%.2f ns per nonzero, %d threads, "
                    "schedule %s%s)\n",
            cli_name(pos[0]), (long long)spc_tensor_nstored(A), repeat, best,
            1e9 * best / (double)(spc_tensor_nstored(A) ? spc_tensor_nstored(A) : 1), info.threads,
            spc_schedule_name(info.used), info.paired ? ", two rows at a time" : "");
  if (!rc && o.verbose && info.note[0]) fprintf(stderr, "spconv: spmv: %s\n", info.note);
  if (!rc) rc = write_y(o.out && strcmp(o.out, "-") ? o.out : NULL, y, ny, cplx); /* "-": standard output */
  free(x);
  free(y);
  spc_tensor_free(&A);
  return rc;
}

/* Operands that cannot be multiplied: of shapes that do not match,
 * inconsistent inputs (exit 2, as x of the wrong length for spmv), both
 * files named; a tensor of another order, unsupported (exit 5, as spmv's
 * A). The library's own checks (SPC_ERR_ARG: a caller's arguments) stay
 * for its callers. */
static spc_status operands(const char *pa, const char *pb, const spc_tensor *A, const spc_tensor *B,
                           spc_error *e) {
  const char *p = spc_tensor_order(A) != 2 ? pa : spc_tensor_order(B) != 2 ? pb : NULL;
  spc_error_clear(e);
  if (p) {
    snprintf(e->file, sizeof e->file, "%s", cli_name(p));
    snprintf(e->msg, sizeof e->msg, "spgemm needs a matrix (order 2), not one of order %d",
             spc_tensor_order(p == pa ? A : B));
    return e->code = SPC_ERR_UNSUPPORTED; /* as spmv's A */
  } else if (spc_tensor_dim(A, 1) != spc_tensor_dim(B, 0)) {
    snprintf(e->file, sizeof e->file, "%s x %s", cli_name(pa), cli_name(pb));
    snprintf(e->msg, sizeof e->msg, "cannot multiply a %lld x %lld matrix by a %lld x %lld one",
             (long long)spc_tensor_dim(A, 0), (long long)spc_tensor_dim(A, 1), (long long)spc_tensor_dim(B, 0),
             (long long)spc_tensor_dim(B, 1));
  } else {
    return SPC_OK;
  }
  return e->code = SPC_ERR_INPUT;
}

/* --workspace names Gustavson's workspace: with another loop order it
 * would be ignored, so it is refused */
static int algo_workspace(const char *cmd, const cli_opts *o) {
  if (o->workspace == SPC_SPGEMM_WS_AUTO || (o->algo != SPC_SPGEMM_INNER && o->algo != SPC_SPGEMM_OUTER)) return 0;
  return cli_usage_error(cmd, "--workspace is Gustavson's (--algo=gustavson or auto), not --algo=%s's",
                         spc_spgemm_algo_name(o->algo));
}

int cmd_spgemm(int argc, char **argv) {
  cli_opts o;
  const char *pos[2];
  int np = cli_parse(argc, argv, &o, pos, 2, "spgemm");
  if (np < 0) return EXIT_USAGE;
  if (np != 2 || !o.out) return cli_usage_error("spgemm", "expected A B -o C");
  if (cli_out_name("spgemm", o.out) || algo_workspace("spgemm", &o)) return EXIT_USAGE;
  cli_inputs(pos, 0, 2);
  spc_read_opts r;
  spc_write_opts w;
  cli_read_opts(&o, &r);
  cli_write_opts(&o, &w);
  r.expand = 1;
  spc_kernel_opts k;
  kernel_opts(&o, &k);
  spc_kernel_info info;
  memset(&info, 0, sizeof info);
  k.info = &info;
  spc_tensor *A = NULL, *B = NULL, *C = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &r, &A, &e);
  if (!s) s = cli_read(pos[1], &r, &B, &e);
  /* the operands' duplicates summed as SciPy sums them */
  if (!s) s = operands(pos[0], pos[1], A, B, &e);
  if (!s) s = cli_dup_order(&o, SPC_DUP_SUM, pos[0], &A, NULL, &e);
  if (!s) s = cli_dup_order(&o, SPC_DUP_SUM, pos[1], &B, NULL, &e);
  double t0 = now();
  /* --spec or --param: the product as csr, converted to --to with them
   * (spc_spgemm's out_format is a name alone) */
  bool via = o.to && (o.nspecs || o.nparams);
  if (!s && (s = spc_spgemm(A, B, via ? "csr" : o.to, &k, &C, &e)) && !e.file[0]) /* which inputs */
    snprintf(e.file, sizeof e.file, "%s x %s", cli_name(pos[0]), cli_name(pos[1]));
  if (!s && via) {
    spc_convert_opts c;
    cli_convert_opts(&o, &c);
    spc_tensor *X = NULL;
    s = spc_convert_to(C, o.to, &c, &X, &e);
    spc_tensor_free(&C);
    C = X;
  }
  if (!s && o.verbose) {
    int algo = k.algo, ws = k.workspace;
    if (!algo || (algo == SPC_SPGEMM_GUSTAVSON && !ws)) spc_spgemm_explain(A, B, &k, &algo, &ws, NULL, NULL);
    fprintf(stderr, "spconv: spgemm (%s%s%s%s): %lld stored in C, %.3f s (%d threads)\n",
            spc_spgemm_algo_name(algo), k.algo ? "" : ", auto", algo == SPC_SPGEMM_GUSTAVSON ? ", workspace " : "",
            algo == SPC_SPGEMM_GUSTAVSON ? spc_spgemm_workspace_name(ws) : "", (long long)spc_tensor_nstored(C),
            now() - t0, k.threads);
    if (info.note[0]) fprintf(stderr, "spconv: spgemm: %s\n", info.note);
  }
  if (!s) s = cli_write(C, o.out, &w, &e);
  spc_tensor_free(&A);
  spc_tensor_free(&B);
  spc_tensor_free(&C);
  return s ? cli_fail(s, &e) : EXIT_OK;
}

/* `spconv explain spgemm A B`: the cost model's candidates and choice. */
int cmd_explain(int argc, char **argv) {
  cli_opts o;
  const char *pos[3];
  int np = cli_parse(argc, argv, &o, pos, 3, "explain");
  if (np < 0) return EXIT_USAGE;
  if (np < 1 || strcmp(pos[0], "spgemm"))
    return cli_usage_error("explain", "expected 'spgemm A B' (the only kernel explained so far)");
  if (np != 3) return cli_usage_error("explain", "expected spgemm A B");
  if (algo_workspace("explain", &o)) return EXIT_USAGE;
  cli_inputs(pos, 1, 3);
  spc_read_opts r;
  cli_read_opts(&o, &r);
  r.expand = 1;
  spc_kernel_opts k;
  kernel_opts(&o, &k);
  spc_tensor *A = NULL, *B = NULL;
  spc_error e;
  spc_error_clear(&e);
  char *text = NULL;
  spc_status s = cli_read(pos[1], &r, &A, &e);
  if (!s) s = cli_read(pos[2], &r, &B, &e);
  if (!s) s = operands(pos[1], pos[2], A, B, &e);
  if (!s) s = spc_spgemm_explain(A, B, &k, NULL, NULL, &text, &e);
  if (!s) fputs(text, stdout);
  free(text);
  spc_tensor_free(&A);
  spc_tensor_free(&B);
  return s ? cli_fail(s, &e) : EXIT_OK;
}
