/* testutil.c -- helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* ---- shared data -------------------------------------------------------- */

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tu_data_dir(void) {
  static char dir[4096];
  static int state; /* 0 unknown, 1 found, -1 absent */
  if (state == 0) {
    const char *env = getenv("SPC_DATA");
    snprintf(dir, sizeof dir, "%s", env && *env ? env : "../shared/data");
    char m[4200];
    snprintf(m, sizeof m, "%s/matrices", dir);
    state = is_dir(m) ? 1 : -1;
    if (state < 0) printf("skipped: no shared data (looked in %s)\n", dir);
  }
  return state > 0 ? dir : NULL;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list_files(const char *dir, const char *suffix, int *n) {
  DIR *d = opendir(dir);
  int cap = 16, k = 0;
  char **v = calloc((size_t)cap + 1, sizeof *v);
  *n = 0;
  if (!d || !v) {
    if (d) closedir(d);
    return v;
  }
  struct dirent *ent;
  size_t sl = strlen(suffix);
  while ((ent = readdir(d)) != NULL) {
    size_t l = strlen(ent->d_name);
    if (ent->d_name[0] == '.' || l < sl || strcmp(ent->d_name + l - sl, suffix))
      continue;
    char *p = tu_path(dir, ent->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(p);
      continue;
    }
    free(p);
    if (k == cap) {
      cap *= 2;
      v = realloc(v, ((size_t)cap + 1) * sizeof *v);
    }
    v[k++] = strdup(ent->d_name);
  }
  closedir(d);
  v[k] = NULL;
  qsort(v, (size_t)k, sizeof *v, cmp_str);
  *n = k;
  return v;
}

void tu_free_list(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

/* ---- temporary files ---------------------------------------------------- */

static char tmp_root[4096];

void tu_tmp_root_init(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tmp_root, sizeof tmp_root, "%s/spconv_tests.XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmp_root)) {
    perror("mkdtemp");
    exit(2);
  }
}

void tu_tmp_root_cleanup(void) {
  if (tmp_root[0]) tu_rmtree(tmp_root);
  tmp_root[0] = 0;
}

char *tu_mkdtemp(void) {
  char *p = tu_path(tmp_root[0] ? tmp_root : "/tmp", "t.XXXXXX");
  ck_assert_msg(mkdtemp(p) != NULL, "mkdtemp: %s", strerror(errno));
  return p;
}

char *tu_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

void tu_rmtree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
      if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
      char *p = tu_path(dir, ent->d_name);
      struct stat st;
      if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) tu_rmtree(p);
      else unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

int tu_count_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL)
    n += strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..");
  closedir(d);
  return n;
}

/* ---- files -------------------------------------------------------------- */

char *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap);
  for (;;) {
    if (n + 1 >= cap) b = realloc(b, cap *= 2);
    size_t k = fread(b + n, 1, cap - 1 - n, f);
    if (!k) break;
    n += k;
  }
  fclose(f);
  b[n] = 0;
  if (len) *len = n;
  return b;
}

int tu_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t k = len ? fwrite(data, 1, len, f) : 0;
  return (fclose(f) == 0 && k == len) ? 0 : -1;
}

int tu_write_str(const char *path, const char *text) {
  return tu_write_file(path, text, strlen(text));
}

bool tu_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

unsigned char *tu_gzip(const void *data, size_t len, size_t *outlen) {
  z_stream z;
  memset(&z, 0, sizeof z);
  ck_assert(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY) == Z_OK);
  size_t cap = deflateBound(&z, (uLong)len) + 64;
  unsigned char *out = malloc(cap);
  z.next_in = (unsigned char *)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  ck_assert(deflate(&z, Z_FINISH) == Z_STREAM_END);
  *outlen = cap - z.avail_out;
  deflateEnd(&z);
  return out;
}

char *tu_file(const char *dir, const char *name, const char *text) {
  char *p = tu_path(dir, name);
  ck_assert_msg(tu_write_str(p, text) == 0, "cannot write %s", p);
  return p;
}

/* ---- the command line --------------------------------------------------- */

static int run_in(tu_run_result *r, const char *in, bool pipe, const char *fmt, va_list ap) {
  char args[8192], cmd[16384];
  vsnprintf(args, sizeof args, fmt, ap);
  const char *bin = getenv("SPCONV");
  if (!bin || !*bin) bin = "bin/spconv";
  char *dir = tu_mkdtemp();
  if (pipe)
    snprintf(cmd, sizeof cmd, "cat '%s' | %s %s >'%s/stdout' 2>'%s/stderr'", in, bin, args, dir, dir);
  else
    snprintf(cmd, sizeof cmd, "%s %s >'%s/stdout' 2>'%s/stderr' <'%s'",
             bin, args, dir, dir, in ? in : "/dev/null");
  fflush(NULL);
  int st = system(cmd);
  ck_assert_msg(st != -1, "system(%s) failed", cmd);
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  char *po = tu_path(dir, "stdout"), *pe = tu_path(dir, "stderr");
  r->out = tu_read_file(po, NULL);
  r->err = tu_read_file(pe, NULL);
  if (!r->out) r->out = strdup("");
  if (!r->err) r->err = strdup("");
  free(po);
  free(pe);
  tu_rmtree(dir);
  free(dir);
  return r->status;
}

int tu_run(tu_run_result *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = run_in(r, NULL, false, fmt, ap);
  va_end(ap);
  return st;
}

int tu_run_in(tu_run_result *r, const char *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = run_in(r, in, false, fmt, ap);
  va_end(ap);
  return st;
}

int tu_run_pipe(tu_run_result *r, const char *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = run_in(r, in, true, fmt, ap);
  va_end(ap);
  return st;
}

void tu_run_free(tu_run_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

const char *tu_python_with(const char *modules) {
  static const char *const cands[] = {"/usr/bin/python3", "python3", NULL};
  char imp[512], cmd[1024];
  snprintf(imp, sizeof imp, "import %s", modules);
  for (int i = 0; cands[i]; i++) {
    snprintf(cmd, sizeof cmd, "%s -c '%s' >/dev/null 2>&1", cands[i], imp);
    if (system(cmd) == 0) return cands[i];
  }
  return NULL;
}

/* ---- tensors ------------------------------------------------------------ */

bool tu_same_f64(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, 8);
  memcpy(&y, &b, 8);
  return x == y || (a != a && b != b);
}

bool tu_same_f32(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  return x == y || (a != a && b != b);
}

static bool is_one(spc_vtype vt, const void *v) {
  switch (vt) {
  case SPC_I64: return *(const int64_t *)v == 1;
  case SPC_U64: return *(const uint64_t *)v == 1;
  case SPC_F32: return *(const float *)v == 1.0f;
  case SPC_F64: return *(const double *)v == 1.0;
  case SPC_C128: return ((const double *)v)[0] == 1.0 && ((const double *)v)[1] == 0.0;
  default: return true;
  }
}

static bool same_value(spc_vtype vt, const void *a, const void *b) {
  switch (vt) {
  case SPC_PATTERN: return true;
  case SPC_F32: return tu_same_f32(*(const float *)a, *(const float *)b);
  case SPC_F64: return tu_same_f64(*(const double *)a, *(const double *)b);
  case SPC_C128:
    return tu_same_f64(((const double *)a)[0], ((const double *)b)[0]) &&
           tu_same_f64(((const double *)a)[1], ((const double *)b)[1]);
  default: return !memcmp(a, b, 8);
  }
}

static void value_text(spc_vtype vt, const void *v, char *buf, size_t n) {
  switch (vt) {
  case SPC_I64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)v); break;
  case SPC_U64: snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)v); break;
  case SPC_F32: snprintf(buf, n, "%a", (double)*(const float *)v); break;
  case SPC_F64: snprintf(buf, n, "%a", *(const double *)v); break;
  case SPC_C128:
    snprintf(buf, n, "%a%+aj", ((const double *)v)[0], ((const double *)v)[1]);
    break;
  default: snprintf(buf, n, "(pattern)"); break;
  }
}

int tu_combined_diff(const spc_tensor *a, const spc_tensor *b, int flags,
                     char *why, size_t n) {
  int order = spc_tensor_order(a);
  if (order != spc_tensor_order(b)) {
    snprintf(why, n, "order %d != %d", order, spc_tensor_order(b));
    return 1;
  }
  for (int d = 0; d < order; d++)
    if (spc_tensor_dim(a, d) != spc_tensor_dim(b, d)) {
      snprintf(why, n, "dimension %d: %lld != %lld", d,
               (long long)spc_tensor_dim(a, d), (long long)spc_tensor_dim(b, d));
      return 1;
    }
  spc_vtype va = spc_tensor_vtype(a), vb = spc_tensor_vtype(b);
  bool ones_a = false, ones_b = false;
  if (va != vb) {
    if ((flags & TU_PATTERN_AS_ONE) && va == SPC_PATTERN) ones_b = true;
    else if ((flags & TU_PATTERN_AS_ONE) && vb == SPC_PATTERN) ones_a = true;
    else {
      snprintf(why, n, "value type %s != %s", spc_vtype_name(va), spc_vtype_name(vb));
      return 1;
    }
  }
  int64_t na = spc_tensor_nstored(a), nb = spc_tensor_nstored(b);
  if (na != nb) {
    snprintf(why, n, "%lld components != %lld", (long long)na, (long long)nb);
    return 1;
  }
  spc_iter *ia = NULL, *ib = NULL;
  spc_error e;
  int rc = 0;
  if (spc_iter_create(a, &ia, &e) || spc_iter_create(b, &ib, &e)) {
    snprintf(why, n, "spc_iter_create failed: %s", e.msg);
    rc = 1;
    goto done;
  }
  int64_t xa[SPC_MAX_ORDER], xb[SPC_MAX_ORDER];
  const void *pa, *pb;
  for (int64_t k = 0; k < na; k++) {
    if (!spc_iter_next(ia, xa, &pa) || !spc_iter_next(ib, xb, &pb)) {
      snprintf(why, n, "iteration ended early at component %lld", (long long)k);
      rc = 1;
      goto done;
    }
    for (int d = 0; d < order; d++)
      if (xa[d] != xb[d]) {
        snprintf(why, n, "component %lld: coordinate %d is %lld != %lld",
                 (long long)k, d, (long long)xa[d], (long long)xb[d]);
        rc = 1;
        goto done;
      }
    bool ok = ones_a ? is_one(va, pa) : ones_b ? is_one(vb, pb) : same_value(va, pa, pb);
    if (!ok) {
      char ta[96] = "1", tb[96] = "1";
      if (va != SPC_PATTERN) value_text(va, pa, ta, sizeof ta);
      if (vb != SPC_PATTERN) value_text(vb, pb, tb, sizeof tb);
      snprintf(why, n, "component %lld at (%lld, %lld%s): value %s != %s",
               (long long)k, (long long)xa[0], (long long)(order > 1 ? xa[1] : 0),
               order > 2 ? ", ..." : "", ta, tb);
      rc = 1;
      goto done;
    }
  }
  if (spc_iter_next(ia, xa, &pa) || spc_iter_next(ib, xb, &pb)) {
    snprintf(why, n, "iteration yields more than nstored = %lld", (long long)na);
    rc = 1;
  }
done:
  spc_iter_free(&ia);
  spc_iter_free(&ib);
  return rc;
}

int tu_tensor_diff(const spc_tensor *a, const spc_tensor *b, int flags,
                   char *why, size_t n) {
  spc_tensor *ca = NULL, *cb = NULL;
  spc_error e;
  spc_error_clear(&e);
  snprintf(why, n, "same");
  int rc;
  if (spc_tensor_combine(a, SPC_DUP_SUM, &ca, &e) ||
      spc_tensor_combine(b, SPC_DUP_SUM, &cb, &e)) {
    snprintf(why, n, "spc_tensor_combine failed: %s", e.msg);
    rc = 1;
  } else {
    rc = tu_combined_diff(ca, cb, flags, why, n);
  }
  spc_tensor_free(&ca);
  spc_tensor_free(&cb);
  return rc;
}

spc_tensor *tu_read_ok(const char *path, int expand, spc_vtype vt) {
  spc_read_opts o;
  spc_read_opts_init(&o);
  o.expand = expand;
  o.vtype = vt;
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_read(path, &o, &t, &e);
  char b[1200];
  ck_assert_msg(s == SPC_OK && t, "spc_read %s: %s: %s", path, spc_status_name(s),
                spc_error_string(&e, b, sizeof b));
  return t;
}
