/* cli_stdio.c -- "-" as a file name: standard input or standard output.
 *
 * Input: every reader may look at a file more than once (the kind from its
 * first bytes, then the text; a large file is read twice, to count and to
 * place), so standard input is first copied whole to a temporary file (in
 * $TMPDIR, else /tmp) and that file is read.  Its name ends as the first
 * bytes say (.mtx, .bsp.h5, .npz, .gz, else .tns), so what goes by the name
 * (a FROSTT file's duplicates kept in file order) goes as it would for a
 * named file.  A second "-" on the same command line reads the same copy.
 *
 * Output: the result is written to a temporary file first -- Matrix Market
 * for a matrix, FROSTT for any other order, gzip with --gzip -- and copied
 * to standard output only when it is complete: a failure writes nothing.
 *
 * Messages name the copy "<stdin>".  The temporary files are removed at
 * exit and on SIGINT, SIGTERM, SIGHUP and SIGPIPE. */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void spw_cleanup_files(void); /* the workspace's temporary files */

#define STDIN_NAME "<stdin>"

static char g_in[4096];  /* the copy of standard input, "" until made */
static char g_out[4096]; /* the result on its way to standard output */

void cli_stdio_cleanup(void) { /* async-signal-safe: unlink only */
  if (g_in[0]) unlink(g_in);
  if (g_out[0]) unlink(g_out);
}

static void on_exit_cleanup(void) {
  cli_stdio_cleanup();
  g_in[0] = g_out[0] = 0;
}

static void on_signal(int sig) {
  spw_cleanup_files();
  cli_stdio_cleanup();
  signal(sig, SIG_DFL);
  raise(sig);
}

void cli_catch_signals(void) {
  static bool done;
  if (done) return;
  done = true;
  atexit(on_exit_cleanup);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGHUP, on_signal);
  signal(SIGPIPE, on_signal);
}

static spc_status fail(spc_error *e, spc_status s, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static spc_status fail(spc_error *e, spc_status s, const char *file, const char *fmt, ...) {
  if (!e) return s;
  spc_error_clear(e);
  e->code = s;
  snprintf(e->file, sizeof e->file, "%s", file);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return s;
}

/* A temporary file "spconv-WHAT-XXXXXX" + suffix in $TMPDIR (else /tmp):
 * its descriptor, the name in path; -1 with errno on failure. */
static int make_temp(char *path, size_t n, const char *what, const char *suffix) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  int len = snprintf(path, n, "%s/spconv-%s-XXXXXX%s", dir, what, suffix);
  if (len < 0 || (size_t)len >= n) {
    path[0] = 0;
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkstemps(path, (int)strlen(suffix));
  if (fd < 0) path[0] = 0;
  return fd;
}

static bool write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* The suffix the first bytes call for (see the top of the file). */
static const char *suffix_of(const unsigned char *h, size_t n) {
  static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) return ".gz";
  if (n >= 8 && !memcmp(h, hdf5, 8)) return ".bsp.h5";
  if (n >= 4 && !memcmp(h, "PK\003\004", 4)) return ".npz";
  if (n >= 14 && !strncasecmp((const char *)h, "%%matrixmarket", 14)) return ".mtx";
  return ".tns";
}

static spc_status spool_fail(spc_error *e, const char *what, int err) {
  if (g_in[0]) unlink(g_in);
  g_in[0] = 0;
  return fail(e, SPC_ERR_IO, STDIN_NAME, "%s: %s", what, strerror(err));
}

spc_status cli_stdin_path(const char **path, spc_error *e) {
  if (g_in[0]) {
    *path = g_in;
    return SPC_OK;
  }
  cli_catch_signals();
  enum { CHUNK = 1 << 20 };
  char *buf = malloc(CHUNK);
  if (!buf) return fail(e, SPC_ERR_NOMEM, STDIN_NAME, "%s", "out of memory");
  size_t have = 0; /* the first bytes, for the suffix */
  while (have < 16) {
    ssize_t r = read(0, buf + have, CHUNK - have);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      free(buf);
      return spool_fail(e, "cannot read", err);
    }
    if (r == 0) break;
    have += (size_t)r;
  }
  if (!have) {
    free(buf);
    return fail(e, SPC_ERR_INPUT, STDIN_NAME, "%s", "empty input (nothing on standard input)");
  }
  int fd = make_temp(g_in, sizeof g_in, "stdin", suffix_of((unsigned char *)buf, have));
  if (fd < 0) {
    int err = errno;
    free(buf);
    return spool_fail(e, "cannot make a temporary copy (TMPDIR)", err);
  }
  bool ok = write_all(fd, buf, have);
  while (ok) {
    ssize_t r = read(0, buf, CHUNK);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      close(fd);
      free(buf);
      return spool_fail(e, "cannot read", err);
    }
    if (r == 0) break;
    ok = write_all(fd, buf, (size_t)r);
  }
  int err = errno;
  free(buf);
  if (close(fd) && ok) ok = false, err = errno;
  if (!ok) return spool_fail(e, "cannot copy to a temporary file (TMPDIR)", err);
  *path = g_in;
  return SPC_OK;
}

const char *cli_name(const char *path) {
  return path && g_in[0] && !strcmp(path, g_in) ? STDIN_NAME : path;
}

void cli_error_names(spc_error *e) {
  if (e && g_in[0] && !strcmp(e->file, g_in)) snprintf(e->file, sizeof e->file, "%s", STDIN_NAME);
}

spc_status cli_write(const spc_tensor *t, const char *path, const spc_write_opts *w,
                     spc_error *e) {
  if (strcmp(path, "-")) return spc_write(t, path, w, e);
  cli_catch_signals();
  bool gz = w && w->gzip == 1;
  const char *suffix = spc_tensor_order(t) == 2 ? (gz ? ".mtx.gz" : ".mtx")
                                                : (gz ? ".tns.gz" : ".tns");
  int fd = make_temp(g_out, sizeof g_out, "stdout", suffix);
  if (fd < 0)
    return fail(e, SPC_ERR_IO, "<stdout>", "cannot make a temporary file (TMPDIR): %s",
                   strerror(errno));
  close(fd);
  spc_status s = spc_write(t, g_out, w, e);
  if (s) {
    if (!strcmp(e->file, g_out)) snprintf(e->file, sizeof e->file, "<stdout>");
    unlink(g_out);
    g_out[0] = 0;
    return s;
  }
  fd = open(g_out, O_RDONLY);
  bool ok = fd >= 0;
  int err = errno;
  enum { CHUNK = 1 << 20 };
  char *buf = ok ? malloc(CHUNK) : NULL;
  if (ok && !buf) ok = false, err = ENOMEM;
  while (ok) {
    ssize_t r = read(fd, buf, CHUNK);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r < 0) ok = false, err = errno;
      break;
    }
    if (!write_all(1, buf, (size_t)r)) ok = false, err = errno;
  }
  free(buf);
  if (fd >= 0) close(fd);
  unlink(g_out);
  g_out[0] = 0;
  if (!ok) return fail(e, SPC_ERR_IO, "<stdout>", "write failed: %s", strerror(err));
  return SPC_OK;
}
