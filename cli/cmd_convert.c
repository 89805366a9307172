/* cmd_convert.c -- `spconv IN --to=FMT [-o OUT]` (also `spconv convert`),
 * `spconv formats [show NAME]` and `spconv sizes FILE`. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cmd_convert(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "convert");
  if (np < 0) return EXIT_USAGE;
  if (np != 1 || !o.to) return cli_usage_error("convert", "expected IN --to=FORMAT [-o OUT]");
  if (cli_out_name("convert", o.out)) return EXIT_USAGE;
  cli_inputs(pos, 0, 1);
  spc_read_opts r;
  spc_write_opts w;
  spc_convert_opts c;
  spc_convert_info info;
  cli_read_opts(&o, &r);
  cli_write_opts(&o, &w);
  cli_convert_opts(&o, &c);
  memset(&info, 0, sizeof info);
  c.info = &info;
  spc_tensor *t = NULL, *x = NULL;
  spc_error e;
  spc_error_clear(&e);
  double t0 = now();
  spc_status s = SPC_OK;
  if (spc_convert_file_streams(pos[0], &c)) { /* the file never held whole, if it can */
    s = spc_convert_file(pos[0], o.to, &r, &c, &x, &e);
    if (!s) cli_notice(&r);
    /* SciPy's order sorts each row whole: a stream adds in the file's */
    if (!s && o.have_dup_order && !o.dup_file_order && c.dup == SPC_DUP_SUM && !o.quiet)
      fprintf(stderr,
              "spconv: %s: --dup-order=scipy not applied: a file converted as a stream (--mem, or "
              "past memory) adds its duplicates in the file's order\n",
              cli_name(pos[0]));
    if (!s && o.verbose)
      fprintf(stderr, "spconv: %s converted to %s in %.3f s; plan: %s\n", cli_name(pos[0]),
              spc_tensor_format(x), now() - t0, info.plan[0] ? info.plan : "-");
    if (!s && o.verbose && strstr(info.plan, "sparse workspace"))
      fprintf(stderr,
              "spconv: sparse workspace: %lld flushes, %lld merges, %lld runs spilled (%lld "
              "bytes), peak %lld bytes of runs in memory\n",
              (long long)info.spw.flushes, (long long)info.spw.merges,
              (long long)info.spw.spilled_runs, (long long)info.spw.spilled_bytes,
              (long long)info.spw.peak_bytes);
    if (!s && o.verbose && info.mapped_arrays)
      fprintf(stderr,
              "spconv: output: %d array%s (%lld bytes) in temporary files, not in memory "
              "(past a quarter of --mem)\n",
              info.mapped_arrays, info.mapped_arrays == 1 ? "" : "s", (long long)info.mapped_bytes);
    goto write;
  }
  s = cli_read(pos[0], &r, &t, &e);
  /* a matrix's duplicates summed as SciPy sums them (--dup-order=scipy) */
  int moved = 0;
  if (!s) s = cli_dup_order(&o, c.dup, pos[0], &t, &moved, &e);
  double t1 = now();
  if (!s && o.verbose && moved)
    fprintf(stderr, "spconv: %d runs of duplicates put in SciPy's order (--dup-order)\n", moved);
  if (!s) {
    s = spc_convert_to(t, o.to, &c, &x, &e);
    if (s && !e.file[0]) snprintf(e.file, sizeof e.file, "%s", pos[0]);
  }
  double t2 = now();
  if (!s && info.notice[0]) cli_names_in(info.notice, sizeof info.notice);
  if (!s && info.notice[0] && !o.quiet) fprintf(stderr, "spconv: %s\n", info.notice);
  char eng[160];
  if (info.routines + info.routines_cached == 0) /* the mirror: arrays moved, no routine */
    snprintf(eng, sizeof eng, "no routine ran (the plan moves the arrays itself)");
  else
    snprintf(eng, sizeof eng, "%d routines (%d built earlier), engine %s (%d compiled now)",
             info.routines, info.routines_cached, spc_engine_name(info.used), info.jit_compiled);
  if (!s && o.verbose)
    fprintf(stderr,
            "spconv: read %s (%lld stored, %lld bytes as %s) in %.3f s\n"
            "spconv: source: the components held in memory; plan: %s (duplicates: %s)\n"
            "spconv: converted to %s in %.3f s: %s\n",
            cli_name(pos[0]), (long long)spc_tensor_nstored(t), (long long)spc_tensor_bytes(t),
            spc_tensor_format(t), t1 - t0, info.plan[0] ? info.plan : "-", spc_dup_name(c.dup),
            spc_tensor_format(x), t2 - t1, eng);
  if (!s && o.verbose && !spc_hugepages_on())
    fprintf(stderr, "spconv: huge pages: not advised (%s)\n",
            spc_free_page_reporting(NULL) ? "free page reporting: fresh huge pages fault slowly here"
                                          : "SPCONV_HUGEPAGES=0");
  if (!s && o.verbose && (c.spw || c.mem))
    fprintf(stderr,
            "spconv: sparse workspace (%s, accumulator %lld points%s): %lld flushes, %lld "
            "merges, %lld runs spilled (%lld bytes), peak %lld bytes of runs in memory\n",
            c.spw == SPC_SPW_HASH ? "hash" : c.spw == SPC_SPW_LIST ? "list" : "bucket",
            (long long)c.acc,
            c.acc ? "" : " from --mem", (long long)info.spw.flushes, (long long)info.spw.merges,
            (long long)info.spw.spilled_runs, (long long)info.spw.spilled_bytes,
            (long long)info.spw.peak_bytes);
  spc_tensor_free(&t);
write:
  if (!s && o.out) s = cli_write(x, o.out, &w, &e);
  else if (!s) cli_print_info("converted:", cli_name(pos[0]), x);
  spc_tensor_free(&x);
  return s ? cli_fail(s, &e) : EXIT_OK;
}

int cmd_formats(int argc, char **argv) {
  cli_opts o;
  const char *pos[2];
  int np = cli_parse(argc, argv, &o, pos, 2, "formats");
  if (np < 0) return EXIT_USAGE;
  if (np == 0) {
    for (int k = 0; k < spc_format_count(); k++) {
      int order = spc_format_order(k);
      char ord[16];
      snprintf(ord, sizeof ord, order ? "order %d" : "any order", order);
      printf("%-8s %-10s %s\n", spc_format_name(k), ord, spc_format_description(k));
    }
    return EXIT_OK;
  }
  if (np == 2 && !strcmp(pos[0], "show")) {
    const char *y = spc_format_yaml(pos[1]);
    if (!y) {
      fprintf(stderr, "spconv: unknown format '%s' (see `spconv formats`)\n", pos[1]);
      return EXIT_USAGE;
    }
    fputs(y, stdout);
    return EXIT_OK;
  }
  return cli_usage_error("formats", "expected no argument, or show NAME");
}

int cmd_sizes(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "sizes");
  if (np < 0) return EXIT_USAGE;
  if (np != 1) return cli_usage_error("sizes", "expected one input file");
  if (!o.to && (o.nparams || o.nspecs)) /* no built-in format takes every parameter */
    return cli_usage_error("sizes", "--param and --spec go with --to=FMT (the format they are for)");
  cli_inputs(pos, 0, 1);
  spc_read_opts r;
  spc_convert_opts c;
  cli_read_opts(&o, &r);
  cli_convert_opts(&o, &c);
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &r, &t, &e);
  if (s) return cli_fail(s, &e);
  /* --to=FMT: that format only (a built-in name or a YAML file) */
  int nf = o.to ? 1 : spc_format_count();
  if (o.to) { /* its refusal is this command's error */
    int64_t b = 0;
    spc_error_clear(&e);
    s = spc_convert_size(t, o.to, &c, &b, &e);
    if (s) {
      spc_tensor_free(&t);
      return cli_fail(s, &e);
    }
    printf("%-8s %16s  %s\n", "format", "bytes", "note");
    printf("%-8s %16lld\n", o.to, (long long)b);
    nf = 0;
  }
  /* the table printed once every row is known: an error prints none of it */
  char **rows = calloc((size_t)nf + 1, sizeof *rows);
  int k = 0;
  for (; rows && k < nf; k++) {
    int64_t b = 0;
    char line[1200];
    spc_error_clear(&e);
    s = spc_convert_size(t, spc_format_name(k), &c, &b, &e);
    if (!s) snprintf(line, sizeof line, "%-8s %16lld\n", spc_format_name(k), (long long)b);
    else if (s == SPC_ERR_UNSUPPORTED) snprintf(line, sizeof line, "%-8s %16s  %s\n", spc_format_name(k), "-", e.msg);
    else break;
    if (!(rows[k] = strdup(line))) break;
  }
  int rc = EXIT_OK;
  if (!rows || k < nf) {
    if (!rows || !s) s = SPC_ERR_NOMEM, snprintf(e.msg, sizeof e.msg, "out of memory");
    rc = cli_fail(s, &e);
  } else if (nf) {
    printf("%-8s %16s  %s\n", "format", "bytes", "note");
    for (k = 0; k < nf; k++) fputs(rows[k], stdout);
  }
  for (k = 0; rows && k < nf; k++) free(rows[k]);
  free(rows);
  spc_tensor_free(&t);
  return rc;
}

int cmd_gen(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "gen");
  if (np < 0) return EXIT_USAGE;
  if (np == 0 && o.cuda && (!o.kernel || !o.format || o.from || o.to))
    return cli_usage_error("gen", "expected --cuda --kernel=spmv|spgemm --format=F [-o kernels.cu]");
  if (np != 0 || (!o.cuda && (!o.from || !o.to)))
    return cli_usage_error("gen", "expected --from=A --to=B [-o conv.c]");
  /* what one form takes and the other does not: refused, not ignored */
  if (o.cuda && (o.vtype != SPC_VTYPE_AUTO || o.nparams || o.order))
    return cli_usage_error("gen", "--cuda takes --kernel and --format (the kernels read the format's "
                                  "arrays and values as they are): not --type, --param or --order");
  if (!o.cuda && (o.kernel || o.format))
    return cli_usage_error("gen", "--kernel and --format go with --cuda");
  spc_convert_opts c;
  cli_convert_opts(&o, &c);
  char *text = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_vtype vt = o.vtype == SPC_VTYPE_AUTO ? SPC_F64 : o.vtype;
  spc_status s = o.cuda ? spc_gen_cuda_source(o.format, o.kernel, &c, &text, &e)
                        : spc_gen_source(o.from, o.to, vt, &c, &text, &e);
  if (s) return cli_fail(s, &e);
  if (o.out && !strcmp(o.out, "-")) o.out = NULL; /* standard output */
  char tmp[4200] = "";
  FILE *f = o.out ? cli_out_open(o.out, tmp, sizeof tmp) : stdout;
  if (!f) {
    fprintf(stderr, "spconv: %s: cannot open for writing\n", o.out);
    free(text);
    return EXIT_IO;
  }
  size_t n = strlen(text);
  bool bad = fwrite(text, 1, n, f) != n;
  free(text);
  if (o.out) bad = cli_out_close(f, o.out, tmp, bad) != 0;
  else bad = fflush(f) || ferror(f) || bad;
  if (bad) {
    fprintf(stderr, "spconv: %s: write failed\n", o.out ? o.out : "stdout");
    return EXIT_IO;
  }
  return EXIT_OK;
}
