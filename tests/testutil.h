/* testutil.h -- helpers shared by the Check suites: shared data location,
 * temporary folders, whole-file I/O, running bin/spconv, and comparing
 * tensors component by component. */
#ifndef SPC_TESTUTIL_H
#define SPC_TESTUTIL_H

#include "spconv.h"
#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/* Per-test timeout for cases that walk the shared data (seconds). */
#define TU_SLOW_TIMEOUT 600

/* ---- shared data -------------------------------------------------------- */
/* $SPC_DATA, else ../shared/data (relative to the repository root, where
 * the tests run); NULL when neither holds a matrices/ folder.  The first
 * call that finds nothing prints "skipped: no shared data". */
const char *tu_data_dir(void);
/* Sorted names of the regular files in DIR ending with SUFFIX; the array
 * and its strings are malloc'ed, NULL-ended (free with tu_free_list). */
char **tu_list_files(const char *dir, const char *suffix, int *n);
void tu_free_list(char **list);

/* ---- temporary files ---------------------------------------------------- */
/* The run's scratch root (created by main, removed at the end). */
void tu_tmp_root_init(void);
void tu_tmp_root_cleanup(void);
/* A fresh empty folder under the scratch root (malloc'ed path). */
char *tu_mkdtemp(void);
/* "dir/name", malloc'ed. */
char *tu_path(const char *dir, const char *name);
/* Remove a folder and everything in it. */
void tu_rmtree(const char *dir);
/* Number of entries in a folder (excluding . and ..), -1 on error. */
int tu_count_dir(const char *dir);

/* ---- files -------------------------------------------------------------- */
/* Whole file, NUL-terminated, malloc'ed; NULL when unreadable. */
char *tu_read_file(const char *path, size_t *len);
/* Write (replace) a file; 0 on success. */
int tu_write_file(const char *path, const void *data, size_t len);
int tu_write_str(const char *path, const char *text);
bool tu_exists(const char *path);
/* gzip data into a new malloc'ed buffer (one member). */
unsigned char *tu_gzip(const void *data, size_t len, size_t *outlen);

/* ---- the command line --------------------------------------------------- */
typedef struct tu_run_result {
  int status; /* exit code; 128+signal when killed by a signal */
  char *out;  /* stdout, NUL-terminated */
  char *err;  /* stderr */
} tu_run_result;
/* Run "$SPCONV ARGS" (ARGS is shell text) capturing stdout and stderr. */
int tu_run(tu_run_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* tu_run with standard input redirected from the file in (NULL: /dev/null);
 * tu_run_pipe with it piped in (`cat in | spconv ...`). */
int tu_run_in(tu_run_result *r, const char *in, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tu_run_pipe(tu_run_result *r, const char *in, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tu_run_free(tu_run_result *r);
/* The python3 that runs "import MODULES" (e.g. "scipy, h5py"), or NULL. */
const char *tu_python_with(const char *modules);

/* ---- tensors ------------------------------------------------------------ */
enum {
  TU_PATTERN_AS_ONE = 1 /* a pattern tensor equals one holding only ones */
};
/* 0 when a and b hold the same components once each is combined with
 * SPC_DUP_SUM: same order and dims, same coordinates, values of the same
 * type and bit-identical (NaN equals NaN).  Otherwise nonzero and why
 * names the first difference. */
int tu_tensor_diff(const spc_tensor *a, const spc_tensor *b, int flags,
                   char *why, size_t n);
/* The same comparison for tensors already combined (sorted, unique). */
int tu_combined_diff(const spc_tensor *a, const spc_tensor *b, int flags,
                     char *why, size_t n);
#define tu_assert_same_tensor(a, b, flags, ...)                          \
  do {                                                                   \
    char tu_why_[512];                                                   \
    int tu_d_ = tu_tensor_diff((a), (b), (flags), tu_why_, sizeof tu_why_); \
    ck_assert_msg(tu_d_ == 0, "%s (%s)", tu_why_, __VA_ARGS__);           \
  } while (0)

/* Bits of a double / float (NaN-aware equality helpers). */
bool tu_same_f64(double a, double b);
bool tu_same_f32(float a, float b);

/* spc_read with opts built from (expand, vtype); asserts success. */
spc_tensor *tu_read_ok(const char *path, int expand, spc_vtype vt);
/* Write text to dir/name and return the path (malloc'ed). */
char *tu_file(const char *dir, const char *name, const char *text);

/* ck_assert_msg for hot loops: Check records every passing ck_assert (a
 * write to the parent in fork mode); this costs nothing when it holds. */
#define tu_check(expr, ...)                                              \
  do {                                                                   \
    if (!(expr)) ck_abort_msg(__VA_ARGS__);                              \
  } while (0)

/* Assert a Check condition about an spc call with the error string. */
#define tu_assert_ok(st, e)                                              \
  do {                                                                   \
    char tu_b_[1200];                                                    \
    spc_status tu_s_ = (st);                                             \
    ck_assert_msg(tu_s_ == SPC_OK, "%s: %s", spc_status_name(tu_s_),     \
                  spc_error_string((e), tu_b_, sizeof tu_b_));           \
  } while (0)

#endif
