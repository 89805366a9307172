/* cli.h -- shared pieces of the spconv command line (uses only the public
 * header). */
#ifndef SPC_CLI_H
#define SPC_CLI_H

#include "spconv.h"
#include <stdbool.h>
#include <stdio.h>

/* Exit codes (documented in README.md and `spconv --help`). */
enum {
  EXIT_OK = 0,
  EXIT_USAGE = 1,    /* bad command line */
  EXIT_INPUT = 2,    /* malformed input file or spec */
  EXIT_IO = 3,       /* cannot read or write a file */
  EXIT_NOMEM = 4,    /* out of memory */
  EXIT_UNSUPP = 5,   /* valid request not supported */
  EXIT_INTERNAL = 6  /* a bug: please report */
};

/* Options common to the subcommands. */
typedef struct cli_opts {
  const char *in, *out;
  bool quiet, expand, keep_symmetry, have_dup, have_dup_order;
  bool dup_file_order;        /* convert: --dup-order=file (default scipy) */
  int threads, gzip;
  spc_vtype vtype;
  spc_dup dup;
  int ndims;
  int64_t dims[SPC_MAX_ORDER];
  const char *remap;          /* query: --remap */
  bool all, nonempty;         /* query: --all, --nonempty */
  int nparams;                /* --param NAME=VALUE */
  const char *param_names[16];
  int64_t param_values[16];
  char param_buf[16][64];
  const char *to;             /* convert: --to */
  spc_engine engine;          /* convert: --engine */
  bool no_jit, verbose;       /* convert: --no-jit, --verbose */
  int nspecs;                 /* convert: --spec FILE (level formats) */
  const char *specs[8];
  const char *from;           /* gen: --from */
  int spw;                    /* convert: --spw=hash|list|bucket */
  int plan;                   /* convert: --plan=auto|sort */
  int64_t acc, mem;           /* convert: --acc=N, --mem=SIZE */
  bool transpose;             /* spmv: --transpose */
  bool unsorted;              /* spgemm: --unsorted */
  int nmodes, modes[SPC_MAX_ORDER]; /* convert: --modes=2,0,1 */
  int order;                  /* gen: --order N */
  int repeat;                 /* spmv: --repeat R */
  bool cuda;                  /* gen: --cuda */
  const char *kernel, *format; /* gen --cuda: --kernel, --format */
  spc_schedule schedule;      /* spmv: --schedule=rows|positions|auto */
  int algo, workspace;        /* spgemm: --algo, --workspace (0: auto) */
} cli_opts;

typedef struct cli_cmd {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
  const char *usage;
} cli_cmd;

/* Parse argv[1..] into o; positional arguments go to pos (up to npos).
 * Returns the number of positionals, or -1 after printing a usage error. */
int cli_parse(int argc, char **argv, cli_opts *o, const char **pos, int npos,
              const char *cmd);
/* Print "spconv: <error>" and return the exit code for s. */
int cli_fail(spc_status s, const spc_error *e);
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* OUT's name checked before any input is read (a pipe on standard input
 * is not waited for): a container the name picks; 0, or a usage error's
 * exit code.  NULL and "-" (standard output) pass. */
int cli_out_name(const char *cmd, const char *out);
/* NAME ends in .gz (any case) */
bool cli_gz_name(const char *p);
void cli_read_opts(const cli_opts *o, spc_read_opts *r);
/* The reader's note on stderr ("spconv: note: ..."), unless --quiet; then
 * cleared.  cli_read: spc_read, then the note of a file read. */
void cli_notice(const spc_read_opts *r);
spc_status cli_read(const char *path, const spc_read_opts *r, spc_tensor **t, spc_error *e);
void cli_write_opts(const cli_opts *o, spc_write_opts *w);
/* Print the usage of a command from the table. */
int cli_help(const char *name);

int cmd_info(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_check_spec(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_sizes(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_spmv(int argc, char **argv);
int cmd_spgemm(int argc, char **argv);
int cmd_explain(int argc, char **argv);
/* The `spconv info` summary of t. */
void cli_print_info(const char *label, const char *name, const spc_tensor *t);
/* A matrix's duplicates put in the order SciPy adds them (--dup-order=scipy,
 * the default) before they are summed (dup: the policy that will combine
 * them; only SPC_DUP_SUM moves anything), unless path is a FROSTT file
 * (added in its own order). *moved (may be NULL): the runs moved. */
spc_status cli_dup_order(const cli_opts *o, spc_dup dup, const char *path, spc_tensor **t,
                         int *moved, spc_error *e);
/* Conversion options from the command line. */
void cli_convert_opts(const cli_opts *o, spc_convert_opts *c);

/* "-" as a file (cli_stdio.c).  Input: the file standard input is
 * redirected from, else (a pipe) a temporary copy of it, read as the file
 * it is; its path in *path (commands call it through cli_inputs).  Names in
 * messages: cli_name gives "<stdin>" for that copy, any other path as it
 * is; cli_error_names does the same to an error's file.  Output: cli_write
 * is spc_write, but "-" writes Matrix Market (order 2) or FROSTT (any
 * other order; gzip with w->gzip == 1) to standard output once complete.
 * The temporary files go at exit and on SIGINT, SIGTERM, SIGHUP, SIGPIPE
 * where not ignored (cli_catch_signals, called first thing by main; it
 * also removes the library's: spc_cleanup_temp_files). */
spc_status cli_stdin_path(const char **path, spc_error *e);
/* pos[from..to) with each "-" replaced by cli_stdin_path's file, after a
 * command's usage checks (a usage error never waits for standard input);
 * a failure to read it ends the command (cli_fail's exit code). */
void cli_inputs(const char **pos, int from, int to);
const char *cli_name(const char *path);
void cli_error_names(spc_error *e);
/* text (of capacity n) with the path read for "-" written as "<stdin>" */
void cli_names_in(char *text, size_t n);
spc_status cli_write(const spc_tensor *t, const char *path, const spc_write_opts *w,
                     spc_error *e);
void cli_catch_signals(void);
/* path: a temporary file this command writes, removed on a signal and at
 * exit until cleared (NULL) once renamed or removed. */
void cli_note_temp(const char *path);
/* A command's own output file: written to a temporary renamed onto path
 * (or into path itself where it is a device or FIFO); cli_out_close
 * returns -1 when it failed, path then untouched. */
FILE *cli_out_open(const char *path, char *tmp, size_t n);
int cli_out_close(FILE *f, const char *path, const char *tmp, bool bad);

extern const cli_cmd cli_commands[];

#endif
