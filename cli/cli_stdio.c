/* cli_stdio.c -- "-" as a file name: standard input or standard output.
 *
 * Input: every reader may look at a file more than once (the kind from its
 * first bytes, then the text; a large file is read twice, to count and to
 * place).  Standard input redirected from a regular file (`< A.mtx`, at its
 * start) is read as that file, by its own name; anything else (a pipe) is
 * first copied whole to a temporary file (in $TMPDIR, else /tmp) and that
 * file is read.  The copy's name ends as its first bytes say (.mtx, .tns,
 * either with .gz when gzip -- the inflated start tells which --, .bsp.h5,
 * .npz), so what goes by the name (a FROSTT file's duplicates summed in
 * file order) goes as for a named file.  A second "-" on the same command
 * line reads the same file.  A terminal is refused: a tensor is piped in.
 *
 * Output: the result is written to a temporary file first -- Matrix Market
 * for a matrix, FROSTT for any other order, gzip with --gzip -- and copied
 * to standard output only when it is complete: a failure writes nothing.
 *
 * Messages and the readers' notes name the input "<stdin>".  The copy, the
 * output's temporary file, a command's own (cli_note_temp: spmv's y) and
 * the library's (spc_cleanup_temp_files) are
 * removed at exit and on SIGINT, SIGTERM, SIGHUP and SIGPIPE -- each signal
 * only where it is not ignored (nohup, a shell's background job). */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define STDIN_NAME "<stdin>"

static char g_in[4096];  /* the file read for standard input, "" until known */
static bool g_spooled;   /* g_in is our copy (removed at exit) */
static char g_out[4096]; /* the result on its way to standard output */
static char g_tmp[4200]; /* a command's own temporary output (cli_note_temp) */

static void cli_stdio_cleanup(void) { /* async-signal-safe: unlink only */
  if (g_in[0] && g_spooled) unlink(g_in);
  if (g_out[0]) unlink(g_out);
  if (g_tmp[0]) unlink(g_tmp);
}

void cli_note_temp(const char *path) {
  if (!path || strlen(path) >= sizeof g_tmp) {
    g_tmp[0] = 0;
    return;
  }
  g_tmp[0] = 0; /* never a half-copied name for a signal to see */
  memcpy(g_tmp + 1, path + 1, strlen(path));
  g_tmp[0] = path[0];
}

/* A command's own text output (spmv's y, gen's C): a temporary beside
 * path renamed onto it at cli_out_close, or path itself where it is a
 * node that is not a regular file (a device such as /dev/null, a FIFO:
 * a rename would replace the node with a file). */
FILE *cli_out_open(const char *path, char *tmp, size_t n) {
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
    tmp[0] = 0;
    return fopen(path, "wb");
  }
  if ((size_t)snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid()) >= n) return NULL;
  cli_note_temp(tmp);
  FILE *f = fopen(tmp, "wb");
  if (!f) cli_note_temp(NULL);
  return f;
}

/* Close f; bad: the writing failed.  0 when path now holds the output,
 * else -1 (the temporary removed, path as it was). */
int cli_out_close(FILE *f, const char *path, const char *tmp, bool bad) {
  if (fclose(f)) bad = true;
  if (tmp[0] && (bad || rename(tmp, path))) {
    remove(tmp);
    bad = true;
  }
  if (tmp[0]) cli_note_temp(NULL);
  return bad ? -1 : 0;
}

static void on_exit_cleanup(void) {
  cli_stdio_cleanup();
  g_in[0] = g_out[0] = g_tmp[0] = 0;
}

static void on_signal(int sig) {
  spc_cleanup_temp_files();
  cli_stdio_cleanup();
  signal(sig, SIG_DFL);
  raise(sig);
}

void cli_catch_signals(void) {
  static bool done;
  if (done) return;
  done = true;
  atexit(on_exit_cleanup);
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) || old.sa_handler == SIG_IGN) continue; /* nohup */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
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

/* Everything left on descriptor from copied to descriptor to through buf
 * (cap bytes); false with *err (errno) on a failed read or write. */
static bool copy_rest(int from, int to, char *buf, size_t cap, int *err) {
  for (;;) {
    ssize_t r = read(from, buf, cap);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return true;
    if (r < 0 || !write_all(to, buf, (size_t)r)) {
      *err = errno;
      return false;
    }
  }
}

/* Whether gzip data h[0..n) inflates to a Matrix Market start. */
static bool gz_is_mtx(const unsigned char *h, size_t n) {
  unsigned char out[16];
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return false;
  z.next_in = (unsigned char *)h;
  z.avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
  z.next_out = out;
  z.avail_out = sizeof out;
  int r = Z_OK;
  while (z.avail_out && (r == Z_OK) && z.avail_in) r = inflate(&z, Z_NO_FLUSH);
  size_t got = sizeof out - z.avail_out;
  inflateEnd(&z);
  return got >= 14 && !strncasecmp((const char *)out, "%%matrixmarket", 14);
}

/* The suffix the first bytes call for (see the top of the file). */
static const char *suffix_of(const unsigned char *h, size_t n) {
  static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) return gz_is_mtx(h, n) ? ".mtx.gz" : ".tns.gz";
  if (n >= 8 && !memcmp(h, hdf5, 8)) return ".bsp.h5";
  if (n >= 4 && !memcmp(h, "PK\003\004", 4)) return ".npz";
  if (n >= 14 && !strncasecmp((const char *)h, "%%matrixmarket", 14)) return ".mtx";
  return ".tns";
}

/* Standard input redirected from a regular file, at its start: that
 * file's name (the same file, not one renamed over it), else false. */
static bool stdin_file(char *path, size_t n) {
  struct stat s0, s1;
  if (fstat(0, &s0) || !S_ISREG(s0.st_mode) || lseek(0, 0, SEEK_CUR) != 0) return false;
  ssize_t k = readlink("/proc/self/fd/0", path, n - 1);
  if (k <= 0 || (size_t)k >= n - 1) return false;
  path[k] = 0;
  return path[0] == '/' && !stat(path, &s1) && s1.st_dev == s0.st_dev && s1.st_ino == s0.st_ino;
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
  if (stdin_file(g_in, sizeof g_in)) { /* `< FILE`: read in place */
    struct stat st;
    if (!fstat(0, &st) && st.st_size == 0) { /* as an empty pipe */
      g_in[0] = 0;
      return fail(e, SPC_ERR_INPUT, STDIN_NAME, "%s", "empty input (nothing on standard input)");
    }
    g_spooled = false;
    *path = g_in;
    return SPC_OK;
  }
  g_in[0] = 0;
  if (isatty(0))
    return fail(e, SPC_ERR_ARG, STDIN_NAME, "%s",
                "is a terminal: pipe a tensor in, or redirect a file (< A.mtx)");
  enum { CHUNK = 1 << 20 };
  char *buf = malloc(CHUNK);
  if (!buf) return fail(e, SPC_ERR_NOMEM, STDIN_NAME, "%s", "out of memory");
  size_t have = 0; /* the first bytes, for the suffix (gzip: enough to inflate 16) */
  while (have < 4096) {
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
  g_spooled = true;
  int fd = make_temp(g_in, sizeof g_in, "stdin", suffix_of((unsigned char *)buf, have));
  if (fd < 0) {
    int err = errno;
    free(buf);
    return spool_fail(e, "cannot make a temporary copy (TMPDIR)", err);
  }
  int err = 0;
  bool ok = write_all(fd, buf, have) || ((err = errno), false);
  ok = ok && copy_rest(0, fd, buf, CHUNK, &err);
  free(buf);
  if (close(fd) && ok) ok = false, err = errno;
  if (!ok) return spool_fail(e, "cannot copy standard input to a temporary file (TMPDIR)", err);
  *path = g_in;
  return SPC_OK;
}

const char *cli_name(const char *path) {
  return path && g_in[0] && !strcmp(path, g_in) ? STDIN_NAME : path;
}

void cli_error_names(spc_error *e) {
  if (e && g_in[0] && !strcmp(e->file, g_in)) snprintf(e->file, sizeof e->file, "%s", STDIN_NAME);
}

void cli_names_in(char *text, size_t n) {
  size_t k = strlen(g_in);
  if (!k || !n || !strstr(text, g_in)) return;
  char out[2048];
  size_t o = 0;
  for (const char *p = text; *p && o + 1 < sizeof out;) {
    if (!strncmp(p, g_in, k)) {
      o += (size_t)snprintf(out + o, sizeof out - o, "%s", STDIN_NAME);
      if (o >= sizeof out) o = sizeof out - 1;
      p += k;
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = 0;
  snprintf(text, n, "%s", out);
}

spc_status cli_write(const spc_tensor *t, const char *path, const spc_write_opts *w,
                     spc_error *e) {
  if (strcmp(path, "-")) return spc_write(t, path, w, e);
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
    if (e && !strcmp(e->file, g_out)) { /* the temporary file's failure (TMPDIR full?) */
      char msg[sizeof e->msg];
      snprintf(msg, sizeof msg, "%s", e->msg);
      snprintf(e->file, sizeof e->file, "<stdout>");
      snprintf(e->msg, sizeof e->msg, "its temporary file %.200s: %.280s", g_out, msg);
    }
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
  ok = ok && copy_rest(fd, 1, buf, CHUNK, &err);
  free(buf);
  if (fd >= 0) close(fd);
  unlink(g_out);
  g_out[0] = 0;
  if (!ok) return fail(e, SPC_ERR_IO, "<stdout>", "write failed: %s", strerror(err));
  return SPC_OK;
}
