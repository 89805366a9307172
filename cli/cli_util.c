/* cli_util.c -- option parsing, progress display and error reporting. */
#include "cli.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- progress on stderr: only on a terminal, only after a second ------- */
typedef struct progress {
  struct timespec t0;
  bool shown;
} progress;

static double since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static progress g_progress;

static void show_progress(void *ctx, const char *what, double done) {
  progress *p = ctx;
  if (done >= 1.0) {
    if (p->shown) fprintf(stderr, "\r%-40s\r", "");
    p->shown = false;
    return;
  }
  if (since(&p->t0) < 1.0) return;
  fprintf(stderr, "\rspconv: %s %5.1f%%", what, 100.0 * done);
  p->shown = true;
}

/* the reader's notes (spc_read_opts.notice), shown unless --quiet */
static char g_notice[512];
static bool g_quiet;

void cli_read_opts(const cli_opts *o, spc_read_opts *r) {
  spc_read_opts_init(r);
  r->notice = g_notice;
  r->notice_len = sizeof g_notice;
  g_quiet = o->quiet;
  r->expand = o->expand;
  r->vtype = o->vtype;
  r->threads = o->threads;
  r->ndims = o->ndims;
  memcpy(r->dims, o->dims, sizeof r->dims);
  r->no_jit = o->no_jit;
  if (!o->quiet && isatty(2)) {
    clock_gettime(CLOCK_MONOTONIC, &g_progress.t0);
    r->progress = show_progress;
    r->progress_ctx = &g_progress;
  }
}

void cli_write_opts(const cli_opts *o, spc_write_opts *w) {
  spc_write_opts_init(w);
  w->gzip = o->gzip;
  w->keep_symmetry = o->keep_symmetry;
  w->threads = o->threads;
  if (!o->quiet && isatty(2)) {
    clock_gettime(CLOCK_MONOTONIC, &g_progress.t0);
    w->progress = show_progress;
    w->progress_ctx = &g_progress;
  }
}

int cli_fail(spc_status s, const spc_error *err) {
  char buf[1200];
  spc_error named; /* the copy of standard input named "<stdin>" */
  const spc_error *e = err;
  if (err) {
    named = *err;
    cli_error_names(&named);
    e = &named;
  }
  if (g_progress.shown) fprintf(stderr, "\n");
  if (s && (!e || !e->msg[0])) /* a status with no record: its name, not the record's "ok" */
    fprintf(stderr, "spconv: %s%s%s (no further detail: please report it)\n", e && e->file[0] ? e->file : "",
            e && e->file[0] ? ": " : "", spc_status_name(s));
  else
    fprintf(stderr, "spconv: %s\n", spc_error_string(e, buf, sizeof buf));
  switch (s) {
  case SPC_OK: return EXIT_OK;
  case SPC_ERR_INPUT: case SPC_ERR_SPEC: case SPC_ERR_OVERFLOW: return EXIT_INPUT;
  case SPC_ERR_IO: return EXIT_IO;
  case SPC_ERR_NOMEM: return EXIT_NOMEM;
  case SPC_ERR_UNSUPPORTED: return EXIT_UNSUPP;
  case SPC_ERR_ARG: return EXIT_USAGE;
  default: return EXIT_INTERNAL;
  }
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "spconv %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(try 'spconv %s --help')\n", cmd);
  return EXIT_USAGE;
}

static int parse_dims(const char *s, cli_opts *o) {
  o->ndims = 0;
  while (*s) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10); /* past int64: refused, not clamped */
    if (end == s || v < 0 || errno == ERANGE || o->ndims >= SPC_MAX_ORDER) return -1;
    o->dims[o->ndims++] = v;
    s = end;
    if (*s == ',' || *s == 'x') s++;
    else if (*s) return -1;
  }
  return o->ndims ? 0 : -1;
}

/* Whether option name (e.g. "--to") applies to command cmd: it must be
 * written in the command's help or usage text (so every option a command
 * takes is documented there, and one it does not take is refused instead
 * of being ignored).  --output is -o's long form. */
static bool documented(const char *cmd, const char *name) {
  const cli_cmd *c = cli_commands;
  while (c->name && strcmp(c->name, cmd)) c++;
  if (!c->name) return true;
  if (!strcmp(name, "--output")) name = "-o";
  size_t n = strlen(name);
  const char *texts[2] = {c->summary, c->usage};
  for (int k = 0; k < 2; k++)
    for (const char *p = texts[k]; p && (p = strstr(p, name)); p += n) {
      char before = p == texts[k] ? ' ' : p[-1], after = p[n];
      if (strchr(" [,(\n", before) && (after == 0 || strchr(" =,]):\n", after))) return true;
    }
  return false;
}

int cli_parse(int argc, char **argv, cli_opts *o, const char **pos, int npos,
              const char *cmd) {
  memset(o, 0, sizeof *o);
  o->vtype = SPC_VTYPE_AUTO;
  o->gzip = -1;
  int np = 0;
  bool rest = false; /* past "--": every argument a file name or a query */
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (!rest && !strcmp(a, "--")) {
      rest = true;
      continue;
    }
    if (rest || a[0] != '-' || !a[1]) {
      if (np >= npos) { cli_usage_error(cmd, "unexpected argument '%s'", a); return -1; }
      if (!a[0]) { cli_usage_error(cmd, "an empty argument (a file name or a query is needed)"); return -1; }
      pos[np++] = a;
      continue;
    }
    char name[64];
    const char *val = NULL;
    const char *eq = strchr(a, '=');
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
    if (eq) val = eq + 1;
    static const char *const known[] = {
        "-o", "--output", "-q", "--quiet", "-v", "--verbose", "--threads", "--type", "--expand",
        "--dims", "--dup", "--dup-order", "--keep-symmetry", "--gzip", "--all", "--nonempty", "--remap",
        "--param", "--to", "--from", "--engine", "--no-jit", "--spec", "--modes", "--plan",
        "--spw", "--acc", "--mem", "--transpose", "--repeat", "--schedule", "--cuda",
        "--kernel", "--format", "--algo", "--workspace", "--unsorted", "--order", NULL};
    bool is_known = false;
    for (int k = 0; known[k] && !is_known; k++) is_known = !strcmp(known[k], name);
    if (is_known && !documented(cmd, name)) {
      cli_usage_error(cmd, "option %s does not apply to this command", name);
      return -1;
    }
    bool takes = !strcmp(name, "-o") || !strcmp(name, "--output") ||
                 !strcmp(name, "--threads") || !strcmp(name, "--type") ||
                 !strcmp(name, "--dup") || !strcmp(name, "--dup-order") || !strcmp(name, "--dims") ||
                 !strcmp(name, "--remap") || !strcmp(name, "--param") ||
                 !strcmp(name, "--to") || !strcmp(name, "--engine") ||
                 !strcmp(name, "--spec") || !strcmp(name, "--from") ||
                 !strcmp(name, "--spw") || !strcmp(name, "--plan") || !strcmp(name, "--acc") || !strcmp(name, "--mem") ||
                 !strcmp(name, "--repeat") || !strcmp(name, "--modes") ||
                 !strcmp(name, "--kernel") || !strcmp(name, "--format") || !strcmp(name, "--schedule") ||
                 !strcmp(name, "--algo") || !strcmp(name, "--workspace") ||
                 !strcmp(name, "--order");
    if (takes && !val) {
      if (i + 1 >= argc) { cli_usage_error(cmd, "%s needs a value", name); return -1; }
      val = argv[++i];
    }
    if (takes && !*val) { /* --to= , -o "": nothing names a format or a file */
      cli_usage_error(cmd, "%s needs a value (an empty one was given)", name);
      return -1;
    }
    if (is_known && !takes && val) {
      cli_usage_error(cmd, "%s takes no value (got '%s')", name, val);
      return -1;
    }
    if (!strcmp(name, "-o") || !strcmp(name, "--output")) o->out = val;
    else if (!strcmp(name, "--quiet") || !strcmp(name, "-q")) o->quiet = true;
    else if (!strcmp(name, "--expand")) o->expand = true;
    else if (!strcmp(name, "--keep-symmetry")) o->keep_symmetry = true;
    else if (!strcmp(name, "--gzip")) o->gzip = 1;
    else if (!strcmp(name, "--all")) o->all = true;
    else if (!strcmp(name, "--nonempty")) o->nonempty = true;
    else if (!strcmp(name, "--remap")) o->remap = val;
    else if (!strcmp(name, "--to")) o->to = val;
    else if (!strcmp(name, "--from")) o->from = val;
    else if (!strcmp(name, "--no-jit")) o->no_jit = true;
    else if (!strcmp(name, "--transpose")) o->transpose = true;
    else if (!strcmp(name, "--unsorted")) o->unsorted = true;
    else if (!strcmp(name, "--cuda")) o->cuda = true;
    else if (!strcmp(name, "--kernel")) o->kernel = val;
    else if (!strcmp(name, "--format")) o->format = val;
    else if (!strcmp(name, "--modes")) {
      const char *q = val;
      o->nmodes = 0;
      while (*q) {
        char *end;
        long v = strtol(q, &end, 10);
        if (end == q || v < 0 || v >= SPC_MAX_ORDER || o->nmodes >= SPC_MAX_ORDER) {
          cli_usage_error(cmd, "--modes takes a list of 0-based modes like 2,0,1");
          return -1;
        }
        o->modes[o->nmodes++] = (int)v;
        q = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') { cli_usage_error(cmd, "--modes takes a list like 2,0,1"); return -1; }
      }
    }
    else if (!strcmp(name, "--order")) {
      char *end;
      long v = strtol(val, &end, 10);
      if (end == val || *end || v < 1 || v > SPC_MAX_ORDER) {
        cli_usage_error(cmd, "--order takes a tensor order from 1 to %d", SPC_MAX_ORDER);
        return -1;
      }
      o->order = (int)v;
    }
    else if (!strcmp(name, "--repeat")) {
      char *end;
      long v = strtol(val, &end, 10);
      if (*end || v < 1 || v > 100000) { cli_usage_error(cmd, "--repeat takes a positive count"); return -1; }
      o->repeat = (int)v;
    }
    else if (!strcmp(name, "--plan")) {
      if (!strcmp(val, "auto")) o->plan = SPC_PLAN_AUTO;
      else if (!strcmp(val, "sort")) o->plan = SPC_PLAN_SORT;
      else if (!strcmp(val, "rows")) o->plan = SPC_PLAN_ROWS;
      else if (!strcmp(val, "radix")) o->plan = SPC_PLAN_RADIX;
      else if (!strcmp(val, "partition")) o->plan = SPC_PLAN_PARTITION;
      else if (!strcmp(val, "inplace")) o->plan = SPC_PLAN_INPLACE;
      else if (!strcmp(val, "scatter")) o->plan = SPC_PLAN_SCATTER;
      else { cli_usage_error(cmd, "--plan takes auto, sort, rows, radix, inplace, partition or scatter"); return -1; }
    }
    else if (!strcmp(name, "--schedule")) {
      if (spc_schedule_parse(val, &o->schedule)) {
        cli_usage_error(cmd, "unknown schedule '%s' (rows, positions, lanes, auto)", val);
        return -1;
      }
    }
    else if (!strcmp(name, "--algo")) {
      if (spc_spgemm_algo_parse(val, &o->algo)) {
        cli_usage_error(cmd, "unknown algorithm '%s' (auto, gustavson, inner, outer)", val);
        return -1;
      }
    } else if (!strcmp(name, "--workspace")) {
      if (spc_spgemm_workspace_parse(val, &o->workspace)) {
        cli_usage_error(cmd, "unknown workspace '%s' (auto, dense, hash, bitmap)", val);
        return -1;
      }
    }
    else if (!strcmp(name, "--spw")) {
      if (!strcmp(val, "hash")) o->spw = SPC_SPW_HASH;
      else if (!strcmp(val, "list")) o->spw = SPC_SPW_LIST;
      else if (!strcmp(val, "bucket")) o->spw = SPC_SPW_BUCKET;
      else { cli_usage_error(cmd, "--spw takes hash, list or bucket"); return -1; }
    } else if (!strcmp(name, "--acc")) {
      char *end;
      errno = 0;
      long long v = strtoll(val, &end, 10);
      if (*end || end == val || v < 1 || errno == ERANGE) {
        cli_usage_error(cmd, "--acc takes a positive count of points (at most %lld)", (long long)INT64_MAX);
        return -1;
      }
      o->acc = v;
    } else if (!strcmp(name, "--mem")) {
      char *end;
      /* digits and a decimal point only: strtod would take 0x10, 1e3, inf */
      size_t nd = strspn(val, "0123456789.");
      double v = nd ? strtod(val, &end) : 0;
      if (!nd || end != val + nd) end = (char *)(uintptr_t)val;
      double mul = 1;
      if (*end == 'k' || *end == 'K') mul = 1024.0, end++;
      else if (*end == 'm' || *end == 'M') mul = 1024.0 * 1024, end++;
      else if (*end == 'g' || *end == 'G') mul = 1024.0 * 1024 * 1024, end++;
      else if (*end == 't' || *end == 'T') mul = 1024.0 * 1024 * 1024 * 1024, end++;
      if (*end == 'B' || *end == 'b') end++;
      if (*end || end == val || !(v > 0) || v * mul > 9e18) {
        cli_usage_error(cmd, "--mem takes a size such as 256M, 2G or 1T");
        return -1;
      }
      o->mem = (int64_t)(v * mul);
    }
    else if (!strcmp(name, "--verbose") || !strcmp(name, "-v")) o->verbose = true;
    else if (!strcmp(name, "--engine")) {
      if (spc_engine_parse(val, &o->engine)) {
        cli_usage_error(cmd, "unknown engine '%s' (auto, generic, factory, jit)", val);
        return -1;
      }
    } else if (!strcmp(name, "--spec")) {
      if (o->nspecs >= 8) { cli_usage_error(cmd, "at most 8 --spec files"); return -1; }
      o->specs[o->nspecs++] = val;
    }
    else if (!strcmp(name, "--param")) {
      const char *q = strchr(val, '=');
      char *end;
      if (!q || q == val || q - val >= 64 || o->nparams >= SPC_MAX_PARAMS) {
        cli_usage_error(cmd, "--param takes NAME=VALUE (at most 8)");
        return -1;
      }
      errno = 0;
      long long v = strtoll(q + 1, &end, 10);
      if (*end || end == q + 1) { cli_usage_error(cmd, "--param %s: not an integer", val); return -1; }
      if (errno == ERANGE) { cli_usage_error(cmd, "--param %s: past 2^63 - 1", val); return -1; }
      snprintf(o->param_buf[o->nparams], 64, "%.*s", (int)(q - val), val);
      o->param_names[o->nparams] = o->param_buf[o->nparams];
      o->param_values[o->nparams++] = v;
    }
    else if (!strcmp(name, "--threads")) {
      char *end;
      long v = strtol(val, &end, 10);
      if (*end || v < 1 || v > 4096) { cli_usage_error(cmd, "--threads needs a positive count"); return -1; }
      o->threads = (int)v;
    } else if (!strcmp(name, "--type")) {
      if (spc_vtype_parse(val, &o->vtype)) {
        cli_usage_error(cmd, "unknown value type '%s' (pattern, int64, uint64, float32, float64, complex128)", val);
        return -1;
      }
    } else if (!strcmp(name, "--dup")) {
      if (spc_dup_parse(val, &o->dup)) {
        cli_usage_error(cmd, "unknown duplicate policy '%s' (sum, first, last, min, max, error)", val);
        return -1;
      }
      o->have_dup = true;
    } else if (!strcmp(name, "--dup-order")) {
      if (strcmp(val, "scipy") && strcmp(val, "file")) {
        cli_usage_error(cmd, "unknown duplicate order '%s' (scipy, file)", val);
        return -1;
      }
      o->dup_file_order = !strcmp(val, "file");
      o->have_dup_order = true;
    } else if (!strcmp(name, "--dims")) {
      if (parse_dims(val, o)) { cli_usage_error(cmd, "--dims takes sizes like 10,20,30"); return -1; }
    } else {
      cli_usage_error(cmd, "unknown option '%s'", a);
      return -1;
    }
  }
  return np;
}

bool cli_gz_name(const char *p) {
  size_t n = strlen(p);
  return n >= 3 && !strcasecmp(p + n - 3, ".gz");
}

int cli_out_name(const char *cmd, const char *out) {
  if (!out || !strcmp(out, "-")) return 0;
  spc_file_kind k = spc_file_kind_from_name(out);
  bool gz = cli_gz_name(out);
  if (k == SPC_FILE_UNKNOWN)
    return cli_usage_error(cmd, "%s: unknown output extension: use .mtx, .tns (either with .gz), "
                                ".bsp.h5 or .npz", out);
  if (gz && (k == SPC_FILE_BSP || k == SPC_FILE_NPZ))
    return cli_usage_error(cmd, "%s: .bsp.h5 and .npz files are not gzip-compressed (.mtx.gz and "
                                ".tns.gz are)", out);
  return 0;
}

void cli_inputs(const char **pos, int from, int to) {
  for (int i = from; i < to; i++) {
    if (strcmp(pos[i], "-")) continue;
    spc_error e;
    spc_error_clear(&e);
    spc_status s = cli_stdin_path(&pos[i], &e);
    if (s) exit(cli_fail(s, &e));
  }
}

spc_status cli_dup_order(const cli_opts *o, spc_dup dup, const char *path, spc_tensor **t,
                         int *moved, spc_error *e) {
  if (moved) *moved = 0;
  if (dup != SPC_DUP_SUM || o->dup_file_order || spc_file_kind_from_name(path) == SPC_FILE_TNS)
    return SPC_OK;
  spc_status s = spc_coo_scipy_dup_order(t, moved, e);
  if (s && !e->file[0]) snprintf(e->file, sizeof e->file, "%s", path);
  return s;
}

void cli_convert_opts(const cli_opts *o, spc_convert_opts *c) {
  spc_convert_opts_init(c);
  if (o->have_dup) c->dup = o->dup;
  c->engine = o->engine;
  c->no_jit = o->no_jit;
  /* --acc without --spw: the workspace as a list, the faster kind in
   * bench/run_spw.sh (bench/README.md).  --mem alone leaves spw unset: the
   * library then picks the plan (a streamed count where the file allows
   * it, else the workspace) */
  c->spw = o->spw ? o->spw : o->acc > 0 ? SPC_SPW_LIST : SPC_SPW_NONE;
  c->plan = o->plan;
  c->order = o->order;
  c->nmodes = o->nmodes;
  memcpy(c->modes, o->modes, sizeof c->modes);
  c->acc = o->acc;
  c->mem = o->mem;
  for (int i = 0; i < o->nparams && i < SPC_MAX_PARAMS; i++) {
    c->param_names[c->nparams] = o->param_names[i];
    c->param_values[c->nparams++] = o->param_values[i];
  }
  for (int i = 0; i < o->nspecs && i < SPC_MAX_PARAMS; i++) c->spec_files[c->nspec_files++] = o->specs[i];
}

int cli_help(const char *name) {
  for (const cli_cmd *c = cli_commands; c->name; c++)
    if (!strcmp(c->name, name)) {
      printf("usage: %s\n\n%s\n", c->usage, c->summary);
      return EXIT_OK;
    }
  return EXIT_USAGE;
}

void cli_notice(const spc_read_opts *r) {
  if (r->notice && r->notice[0]) cli_names_in(r->notice, r->notice_len);
  if (r->notice && r->notice[0] && !g_quiet) fprintf(stderr, "spconv: note: %s\n", r->notice);
  if (r->notice && r->notice_len) r->notice[0] = 0;
}

spc_status cli_read(const char *path, const spc_read_opts *r, spc_tensor **t, spc_error *e) {
  spc_status s = spc_read(path, r, t, e);
  if (!s) cli_notice(r);
  return s;
}
