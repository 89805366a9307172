/* assemble_engine.c -- one IR routine, three ways to run it (DESIGN.md
 * section 4):
 *
 *   generic  ir_run, the interpreter;
 *   factory  the same routine emitted as C at build time (tools/factory_gen.c
 *            over every built-in format) and compiled into the library;
 *   jit      emitted at run time, compiled by the system C compiler into a
 *            shared object, loaded, and cached on disk.
 *
 * A routine is known by a 128-bit hash of its emitted C text (under a fixed
 * name) and the compiler flags: the text is a function of the specs, the
 * types and the parameters the routine was built from, so equal keys mean
 * equal code.  The factory table and the JIT cache are looked up by it.
 * Compiled routines are called through NAME_entry with ir_run's argument
 * array, so every engine sees the same arguments; the interpreter and the
 * emitted C agree bit for bit (ir/README.md), so the engines do too. */
#include "assemble_internal.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Flags the JIT compiles with; part of the key.  -ffp-contract=off keeps
 * a*b+c two roundings, as the interpreter does. */
#define JIT_FLAGS "-std=c99 -O2 -fPIC -shared -ffp-contract=off -fno-strict-aliasing -DSPC_GEN_HUGEPAGES"

const char *spc_engine_name(spc_engine g) {
  switch (g) {
  case SPC_ENGINE_AUTO: return "auto";
  case SPC_ENGINE_GENERIC: return "generic";
  case SPC_ENGINE_FACTORY: return "factory";
  case SPC_ENGINE_JIT: return "jit";
  }
  return "?";
}

int spc_engine_parse(const char *name, spc_engine *g) {
  static const spc_engine all[] = {SPC_ENGINE_AUTO, SPC_ENGINE_GENERIC,
                                   SPC_ENGINE_FACTORY, SPC_ENGINE_JIT};
  for (int i = 0; i < 4; i++)
    if (name && !strcmp(name, spc_engine_name(all[i]))) return (*g = all[i]), 0;
  return -1;
}

/* ---- keys ------------------------------------------------------------------ */

static uint64_t fnv1a(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return h;
}

void asm_key_of(const char *text, size_t n, asm_key *k) {
  /* the runtime every emitted file starts with is part of the code: a
   * changed ir_rt.h (or prelude) must not find routines built with the
   * old one */
  static _Atomic uint64_t rt_hash;
  uint64_t rh = rt_hash;
  if (!rh) {
    spc_str pre = {0};
    ir_emit_c_prelude(&pre);
    rh = fnv1a(pre.s ? pre.s : "", pre.len, 0x84222325cbf29ce4ULL) | 1;
    spc_str_free(&pre);
    rt_hash = rh;
  }
  /* two chains over the text's 8-byte words (the last one padded and
   * marked with its length): a multiply-rotate and a splitmix chain --
   * a byte at a time these were a seventh of a small conversion's time */
  uint64_t a = 0xcbf29ce484222325ULL ^ rh, b = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = 0;
    size_t m = n - i < 8 ? n - i : 8;
    memcpy(&w, text + i, m);
    if (m < 8) w ^= (uint64_t)(m + 1) << 59;
    a = (a ^ w) * 0x100000001b3ULL;
    a = (a << 29) | (a >> 35);
    b = spc_mix64(b ^ w) + i;
  }
  a = fnv1a(JIT_FLAGS, sizeof JIT_FLAGS - 1, a ^ n);
  k->hi = spc_mix64(a);
  k->lo = spc_mix64(b ^ a);
  snprintf(k->hex, sizeof k->hex, "%016llx%016llx", (unsigned long long)k->hi,
           (unsigned long long)k->lo);
}

spc_status asm_emit_keyed(const ir_func *f, const char *name, bool prelude,
                          spc_str *out, asm_key *k, spc_error *e) {
  /* the key: the text under the fixed name "spc_k" (f is not renamed:
   * it may be shared, run by other threads) */
  spc_str t = {0};
  ir_emit_opts o = {.prelude = false, .static_fn = true, .entry = true, .name = "spc_k"};
  spc_status s = ir_emit_c(f, &o, &t, e);
  if (!s && t.failed) s = SPC_NOMEM(e);
  if (!s) asm_key_of(t.s, t.len, k);
  spc_str_free(&t);
  if (!s && out) {
    char nm[64];
    snprintf(nm, sizeof nm, "%s%s", name ? name : "spc_f_", name ? "" : k->hex);
    o.prelude = prelude;
    o.name = nm;
    s = ir_emit_c(f, &o, out, e);
  }
  return s;
}

/* ---- the JIT ------------------------------------------------------------------- */

typedef int (*entry_fn)(ir_arg *args, char *err, size_t err_len);

/* Loaded objects, kept for the life of the process. */
typedef struct jit_slot {
  asm_key k;
  entry_fn fn;
} jit_slot;
static pthread_mutex_t jit_mu = PTHREAD_MUTEX_INITIALIZER;
static jit_slot *jit_slots;
static int jit_n, jit_cap;

static entry_fn jit_cached(const asm_key *k) {
  entry_fn fn = NULL;
  pthread_mutex_lock(&jit_mu);
  for (int i = 0; i < jit_n && !fn; i++)
    if (jit_slots[i].k.hi == k->hi && jit_slots[i].k.lo == k->lo) fn = jit_slots[i].fn;
  pthread_mutex_unlock(&jit_mu);
  return fn;
}

static void jit_remember(const asm_key *k, entry_fn fn) {
  pthread_mutex_lock(&jit_mu);
  if (jit_n == jit_cap) {
    int nc = jit_cap ? 2 * jit_cap : 16;
    jit_slot *p = realloc(jit_slots, (size_t)nc * sizeof *p);
    if (p) { jit_slots = p; jit_cap = nc; }
  }
  if (jit_n < jit_cap) jit_slots[jit_n++] = (jit_slot){*k, fn};
  pthread_mutex_unlock(&jit_mu);
}

static int mkdir_p(const char *path) {
  char b[4096];
  snprintf(b, sizeof b, "%s", path);
  for (char *p = b + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(b, 0755) && errno != EEXIST) return -1;
      *p = '/';
    }
  return mkdir(b, 0755) && errno != EEXIST ? -1 : 0;
}

static bool jit_dir(const spc_convert_opts *o, char *b, size_t n) {
  const char *d = o && o->jit_dir ? o->jit_dir : getenv("SPCONV_JIT_DIR");
  if (d && *d) return (size_t)snprintf(b, n, "%s", d) < n;
  const char *x = getenv("XDG_CACHE_HOME");
  if (x && *x) return (size_t)snprintf(b, n, "%s/spconv/jit", x) < n;
  const char *h = getenv("HOME");
  if (h && *h) return (size_t)snprintf(b, n, "%s/.cache/spconv/jit", h) < n;
  return false;
}

static const char *jit_cc(void) {
  const char *c = getenv("SPCONV_CC");
  return c && *c ? c : "cc";
}

/* sh -c cmd, like system(), but the child inherits no descriptor past
 * stderr: system() hands the compiler every descriptor open in the
 * process -- other threads' files too, a .bsp.h5 among them, whose HDF5
 * flock then outlives the thread's H5Fclose for as long as the compiler
 * runs (the thread's next open of the file fails "unable to lock file").
 * Returns the exit status, -1 when it could not run or was killed. */
static int run_sh(const char *cmd) {
  char *argv[] = {"sh", "-c", (char *)(uintptr_t)cmd, NULL};
  pid_t pid;
  int rc;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return -1;
  rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  /* posix_spawn returns once the child has exec'ed (closed them) */
  spc_spawn_guard_exclusive();
  if (!rc) rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
  spc_spawn_guard_release();
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return -1;
#else
  long maxfd = sysconf(_SC_OPEN_MAX);
  int ex[2]; /* closed by the child's exec: the descriptors are gone then */
  if (pipe2(ex, O_CLOEXEC)) return -1;
  spc_spawn_guard_exclusive();
  if ((pid = fork()) == 0) {
    for (long fd = 3; fd < (maxfd > 0 ? maxfd : 1024); fd++)
      if (fd != ex[1]) close((int)fd);
    execve("/bin/sh", argv, environ);
    _exit(127);
  }
  close(ex[1]);
  char b;
  while (pid > 0 && read(ex[0], &b, 1) < 0 && errno == EINTR) {}
  close(ex[0]);
  spc_spawn_guard_release();
  if (pid < 0) return -1;
#endif
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Is the compiler there at all?  Checked once per process. */
static _Atomic int cc_state; /* 0 unknown, 1 present, -1 absent */
static bool cc_present(void) {
  int st = atomic_load(&cc_state);
  if (st) return st > 0;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", jit_cc());
  int rc = run_sh(cmd);
  st = rc == 0 ? 1 : -1; /* racing first calls store the same answer */
  atomic_store(&cc_state, st);
  return st > 0;
}

static entry_fn jit_load(const char *so, const asm_key *k) {
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  char sym[64];
  snprintf(sym, sizeof sym, "spc_j_%s_entry", k->hex);
  entry_fn fn;
  *(void **)&fn = dlsym(h, sym);
  return fn;
}

/* The compiled routine for f (compiling it into the cache when absent);
 * NULL with *why set when the JIT cannot serve. */
static entry_fn jit_get(asm_engine *E, const ir_func *f, const asm_key *k0,
                        char *why, size_t nwhy, spc_error *e, spc_status *st) {
  entry_fn fn = jit_cached(k0);
  if (fn) return fn;
  char dir[4096], so[4200], src[4200], tmp[4300], log[4300], cmd[16384];
  if (!jit_dir(E->o, dir, sizeof dir)) {
    snprintf(why, nwhy, "no JIT cache directory (set SPCONV_JIT_DIR)");
    return NULL;
  }
  snprintf(so, sizeof so, "%s/%s.so", dir, k0->hex);
  if ((fn = jit_load(so, k0))) {
    jit_remember(k0, fn);
    return fn;
  }
  if (!cc_present()) {
    snprintf(why, nwhy, "no C compiler (%.300s) found", jit_cc());
    return NULL;
  }
  if (mkdir_p(dir)) {
    snprintf(why, nwhy, "cannot create the JIT cache %.300s: %.200s", dir, strerror(errno));
    return NULL;
  }
  spc_str t = {0};
  char name[64];
  asm_key k;
  snprintf(name, sizeof name, "spc_j_%s", k0->hex);
  *st = asm_emit_keyed(f, name, true, &t, &k, e);
  if (*st) { spc_str_free(&t); return NULL; }
  if (t.failed) { spc_str_free(&t); *st = SPC_NOMEM(e); return NULL; }
  /* private names, then rename: concurrent processes -- and threads of
   * this one compiling the same routine -- never see half a file */
  static _Atomic unsigned long jit_seq;
  unsigned long seq = atomic_fetch_add(&jit_seq, 1);
  snprintf(src, sizeof src, "%s/%s.%ld.%lu.c", dir, k0->hex, (long)getpid(), seq);
  snprintf(tmp, sizeof tmp, "%s/%s.%ld.%lu.so", dir, k0->hex, (long)getpid(), seq);
  snprintf(log, sizeof log, "%s/%s.%ld.%lu.log", dir, k0->hex, (long)getpid(), seq);
  FILE *fp = fopen(src, "wb");
  bool ok = fp && fwrite(t.s, 1, t.len, fp) == t.len;
  if (fp && fclose(fp)) ok = false;
  spc_str_free(&t);
  if (!ok) {
    snprintf(why, nwhy, "cannot write %.300s: %.200s", src, strerror(errno));
    unlink(src);
    return NULL;
  }
  snprintf(cmd, sizeof cmd, "%s " JIT_FLAGS " -o '%s' '%s' -lm >'%s' 2>&1", jit_cc(), tmp, src, log);
  int rc = run_sh(cmd);
  if (rc != 0) {
    char first[160] = "";
    FILE *lf = fopen(log, "r");
    if (lf) {
      if (!fgets(first, sizeof first, lf)) first[0] = 0;
      fclose(lf);
    }
    first[strcspn(first, "\n")] = 0;
    snprintf(why, nwhy, "the C compiler failed on %.300s: %.200s", src, first);
    unlink(tmp);
    unlink(log);
    return NULL;
  }
  unlink(src);
  unlink(log);
  if (rename(tmp, so)) {
    snprintf(why, nwhy, "cannot rename %.300s: %.200s", tmp, strerror(errno));
    unlink(tmp);
    return NULL;
  }
  if (!(fn = jit_load(so, k0))) {
    snprintf(why, nwhy, "cannot load %.300s: %.200s", so, dlerror());
    return NULL;
  }
  if (E->info) E->info->jit_compiled++;
  jit_remember(k0, fn);
  return fn;
}

/* ---- dispatch ------------------------------------------------------------------ */

static entry_fn factory_get(const asm_key *k) {
  for (int i = 0; i < spc_factory_n; i++)
    if (spc_factory_table[i].hi == k->hi && spc_factory_table[i].lo == k->lo)
      return (entry_fn)spc_factory_table[i].fn;
  return NULL;
}

/* The factory lookups made so far, keyed by the functions' structural
 * hashes (ir_func_hash): a routine built again finds its factory entry,
 * or that it has none, without emitting and hashing its C text (west0479
 * CSR to CSC 317 -> 183 us, COO to CSR 169 -> 98 us).  Open addressing, at most FC_MAX entries
 * (then lookups past them emit as before); one mutex. */
#define FC_CAP 8192
#define FC_MAX 4096
typedef struct fc_slot {
  uint64_t h[2];
  entry_fn fn; /* NULL: not in the factory */
  bool used;
} fc_slot;
static pthread_mutex_t fc_mu = PTHREAD_MUTEX_INITIALIZER;
static fc_slot *fc_tab;
static int fc_n;

static bool fc_get(const uint64_t h[2], entry_fn *fn) {
  bool hit = false;
  pthread_mutex_lock(&fc_mu);
  for (size_t i = h[0] & (FC_CAP - 1); fc_tab && fc_tab[i].used; i = (i + 1) & (FC_CAP - 1))
    if (fc_tab[i].h[0] == h[0] && fc_tab[i].h[1] == h[1]) {
      *fn = fc_tab[i].fn;
      hit = true;
      break;
    }
  pthread_mutex_unlock(&fc_mu);
  return hit;
}

static void fc_put(const uint64_t h[2], entry_fn fn) {
  pthread_mutex_lock(&fc_mu);
  if (!fc_tab) fc_tab = spc_calloc(FC_CAP, sizeof *fc_tab); /* kept for the process */
  if (fc_tab && fc_n < FC_MAX) {
    size_t i = h[0] & (FC_CAP - 1);
    while (fc_tab[i].used && !(fc_tab[i].h[0] == h[0] && fc_tab[i].h[1] == h[1]))
      i = (i + 1) & (FC_CAP - 1);
    if (!fc_tab[i].used) fc_n++;
    fc_tab[i] = (fc_slot){.h = {h[0], h[1]}, .fn = fn, .used = true};
  }
  pthread_mutex_unlock(&fc_mu);
}

/* The routine cache: open addressing, at most RC_MAX entries (a routine's
 * IR takes 16-64 KB: 8-32 MB at most), never freed (the functions are
 * shared); one mutex. */
#define RC_CAP 1024
#define RC_MAX 512
typedef struct rc_slot {
  uint64_t h[2];
  asm_rc_val v;
  bool used;
} rc_slot;
static pthread_mutex_t rc_mu = PTHREAD_MUTEX_INITIALIZER;
static rc_slot *rc_tab;
static int rc_n;

static rc_slot *rc_find(const uint64_t h[2]) { /* under rc_mu; rc_tab set */
  size_t i = h[0] & (RC_CAP - 1);
  while (rc_tab[i].used && !(rc_tab[i].h[0] == h[0] && rc_tab[i].h[1] == h[1]))
    i = (i + 1) & (RC_CAP - 1);
  return &rc_tab[i];
}

bool asm_rc_get(const uint64_t key[2], asm_rc_val *v) {
  bool hit = false;
  pthread_mutex_lock(&rc_mu);
  if (rc_tab) {
    rc_slot *sl = rc_find(key);
    if ((hit = sl->used)) *v = sl->v;
  }
  pthread_mutex_unlock(&rc_mu);
  return hit;
}

bool asm_rc_put(const uint64_t key[2], asm_rc_val *v) {
  bool kept = false;
  ir_func *mine = NULL;
  pthread_mutex_lock(&rc_mu);
  if (!rc_tab) rc_tab = spc_calloc(RC_CAP, sizeof *rc_tab); /* kept for the process */
  if (rc_tab) {
    rc_slot *sl = rc_find(key);
    if (sl->used) { /* another thread's first */
      mine = v->f;
      *v = sl->v;
      kept = true;
    } else if (rc_n < RC_MAX) {
      ir_func_share(v->f, !v->fn); /* bytecode where the interpreter runs it */
      *sl = (rc_slot){.h = {key[0], key[1]}, .v = *v, .used = true};
      rc_n++;
      kept = true;
    }
  }
  pthread_mutex_unlock(&rc_mu);
  ir_func_free(&mine);
  return kept;
}

void asm_rk_put(uint64_t k[2], uint64_t x) {
  k[0] = spc_mix64(k[0] ^ x);
  k[1] = spc_mix64(k[1] + x + 0x9e3779b97f4a7c15ULL);
}

void asm_rk_str(uint64_t k[2], const char *s) { asm_rk_put(k, s ? spc_name_hash(s) : 0x5a5a5a5aULL); }

/* A format by its content (spc_specs_add's hash) and a level of it by
 * its place there; false: no hash (a spec not loaded by a registry). */
bool asm_rk_fmt(uint64_t k[2], const spc_format_spec *f, const spc_format_level *const *lv, int nl) {
  if (!f || (!f->hash[0] && !f->hash[1])) return false;
  asm_rk_put(k, f->hash[0]);
  asm_rk_put(k, f->hash[1]);
  asm_rk_put(k, (uint64_t)nl);
  for (int l = 0; l < nl && l < SPC_MAX_ORDER; l++) {
    ptrdiff_t i = lv[l] - f->lv;
    if (i < 0 || i >= f->nlevels) return false;
    asm_rk_put(k, (uint64_t)i);
  }
  return true;
}

bool asm_rk_info(uint64_t k[2], const conv_info *I) {
  if (!asm_rk_fmt(k, I->fmt, I->lv, I->nlevels)) return false;
  asm_rk_put(k, (uint64_t)I->nparams);
  for (int p = 0; p < I->nparams && p < SPC_SPEC_MAX; p++) {
    asm_rk_str(k, I->params[p].name);
    asm_rk_put(k, (uint64_t)I->params[p].value);
  }
  asm_rk_put(k, ((uint64_t)I->index_ty << 8) ^ (uint64_t)I->coord_ty);
  asm_rk_put(k, (uint64_t)I->nmodes);
  for (int m = 0; m < I->nmodes && m < SPC_MAX_ORDER; m++) asm_rk_put(k, (uint64_t)I->modes[m]);
  asm_rk_str(k, I->remap_text);
  return true;
}

/* The mismatches SPC_ROUTINE_CHECK found in this process: a caller may
 * fall back quietly on the error (a probe's failure leaves the counting
 * plan to the sort), so the tests assert this count. */
static _Atomic long rc_bad;
bool asm_rc_mismatch(void) {
  rc_bad++;
  return true;
}
long asm_rc_mismatches(void) { return rc_bad; }

/* Read once (getenv on each of a small conversion's six or seven lookups
 * was 2% of it); asm_rc_recheck after changing the variable. */
static _Atomic int rc_check = -1;
bool asm_rc_checking(void) {
  int c = rc_check;
  if (c < 0) {
    const char *v = getenv("SPC_ROUTINE_CHECK");
    rc_check = c = v && *v && strcmp(v, "0");
  }
  return c;
}
void asm_rc_recheck(void) { rc_check = -1; }

/* SPC_ROUTINE_CHECK: routine `what` built again (w) equals the cache's (v):
 * the same IR hash, parameter numbers and findings. */
static spc_status rc_same(const asm_rc_val *v, const asm_rc_val *w, const char *what,
                          const char *fmt, spc_error *e) {
  uint64_t h1[2] = {0, 0}, h2[2] = {0, 0};
  if (v->f) ir_func_hash(v->f, h1);
  if (w->f) ir_func_hash(w->f, h2);
  if (!v->f == !w->f && h1[0] == h2[0] && h1[1] == h2[1] && !memcmp(v->aux, w->aux, sizeof v->aux) &&
      !memcmp(v->flags, w->flags, sizeof v->flags))
    return SPC_OK;
  asm_rc_mismatch();
  return spc_err(e, SPC_ERR_INTERNAL, NULL, 0, 0,
                 "routine cache: the %s routine of format %s built again differs from the "
                 "cached one (its key misses an input)", what, fmt);
}

spc_status asm_rc_routine(const uint64_t key[2], bool can, bool fac, const char *what,
                          const char *fmt, asm_rc_build_fn build, void *ctx, asm_rc_val *v,
                          bool *hit, bool *looked, spc_error *e) {
  memset(v, 0, sizeof *v);
  *hit = *looked = false;
  if (can && asm_rc_get(key, v)) {
    *hit = true;
    *looked = fac;
    if (!asm_rc_checking()) return SPC_OK;
    asm_rc_val w;
    memset(&w, 0, sizeof w);
    spc_status s = build(ctx, &w, e);
    if (!s) s = rc_same(v, &w, what, fmt, e);
    ir_func_free(&w.f);
    return s;
  }
  spc_status s = build(ctx, v, e);
  if (s) ir_func_free(&v->f);
  if (s || !can) return s;
  if (fac) {
    if ((s = asm_prepare_factory(v->f, &v->fn, e))) return s;
    *looked = true;
    if (!v->fn) return SPC_OK; /* not in the factory: built each time */
  }
  (void)asm_rc_put(key, v); /* kept (shared) or, the cache full, the caller's */
  return SPC_OK;
}

/* f's factory routine (NULL: none), its key computed only on a memo miss
 * (*k then set and *keyed true). */
static spc_status factory_of(const ir_func *f, entry_fn *fn, asm_key *k, bool *keyed,
                             spc_error *e) {
  uint64_t h[2];
  ir_func_hash(f, h);
  *keyed = false;
  if (fc_get(h, fn)) return SPC_OK;
  spc_status s = asm_emit_keyed(f, NULL, false, NULL, k, e);
  if (s) return s;
  *keyed = true;
  *fn = factory_get(k);
  fc_put(h, *fn);
  return SPC_OK;
}

static void note_used(asm_engine *E, spc_engine g) {
  if (!E->info) return;
  E->info->routines++;
  /* generic is the slowest, then jit, then factory */
  static const int rank[] = {0, 3, 1, 2};
  if (rank[g] > rank[E->info->used]) E->info->used = g;
}

static spc_status call_compiled(entry_fn fn, const ir_func *f, ir_arg *args,
                                spc_error *e) {
  char msg[512] = "";
  int rc = fn(args, msg, sizeof msg);
  if (rc == 0) return SPC_OK;
  spc_status s = (spc_status)rc;
  if (s >= 0 || s < SPC_ERR_INTERNAL) s = SPC_ERR_INTERNAL;
  if (!msg[0]) /* the compiled code says nothing more for these */
    snprintf(msg, sizeof msg, s == SPC_ERR_NOMEM ? "out of memory (in %s)" : "%s failed",
             ir_func_name((ir_func *)f));
  return spc_err(e, s, NULL, 0, 0, "%s", msg);
}

void asm_engine_init(asm_engine *E, const spc_convert_opts *o) {
  memset(E, 0, sizeof *E);
  E->o = o;
  E->want = o ? o->engine : SPC_ENGINE_AUTO;
  E->no_jit = o && o->no_jit;
  E->info = o ? o->info : NULL;
  if (E->info) memset(E->info, 0, sizeof *E->info);
}

/* Pick the engine for f once: *fn the compiled entry (NULL: interpret). */
spc_status asm_prepare(asm_engine *E, const ir_func *f, asm_entry *fn, spc_error *e) {
  *fn = NULL;
  if (!E || E->want == SPC_ENGINE_GENERIC) {
    if (E) note_used(E, SPC_ENGINE_GENERIC);
    return SPC_OK;
  }
  spc_status s = ir_verify(f, e); /* compiled code does not check bounds */
  if (s) return s;
  asm_key k;
  bool keyed = false;
  entry_fn got = NULL;
  if (E->want == SPC_ENGINE_AUTO || E->want == SPC_ENGINE_FACTORY) {
    if ((s = factory_of(f, &got, &k, &keyed, e))) return s;
  }
  if (!got && !keyed && (s = asm_emit_keyed(f, NULL, false, NULL, &k, e))) return s;
  if (got) {
    note_used(E, SPC_ENGINE_FACTORY);
    *fn = got;
    return SPC_OK;
  }
  if (E->want == SPC_ENGINE_FACTORY)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "cannot run %s on the factory: no factory routine for this "
                   "format, types and parameters (unsupported; use --engine=auto or jit)",
                   ir_func_name((ir_func *)f));
  char why[1024] = "";
  if (!E->no_jit) got = jit_get(E, f, &k, why, sizeof why, e, &s);
  if (s) return s;
  if (got) {
    note_used(E, SPC_ENGINE_JIT);
    *fn = got;
    return SPC_OK;
  }
  if (E->want == SPC_ENGINE_JIT)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0, "cannot compile at run time (JIT unavailable): %s",
                   why[0] ? why : "disabled by --no-jit");
  if (why[0] && E->info && !E->info->notice[0])
    snprintf(E->info->notice, sizeof E->info->notice,
             "JIT unavailable (%.200s): running the generic interpreter", why);
  note_used(E, SPC_ENGINE_GENERIC);
  return SPC_OK;
}

spc_status asm_prepare_factory(const ir_func *f, asm_entry *fn, spc_error *e) {
  *fn = NULL;
  spc_status s = ir_verify(f, e);
  asm_key k;
  bool keyed;
  entry_fn got = NULL;
  if (!s) s = factory_of(f, &got, &k, &keyed, e);
  *fn = got;
  return s;
}

void asm_note_factory(asm_engine *E, int n) {
  for (int k = 0; k < n; k++) note_used(E, SPC_ENGINE_FACTORY);
}
void asm_note_generic(asm_engine *E) { note_used(E, SPC_ENGINE_GENERIC); }

/* Run f as prepared (thread-safe: f is only read). */
int asm_threads(int64_t n) {
#ifdef _OPENMP
  int nt = omp_get_max_threads();
  int64_t most = n >> 17;
  if (nt > 64) nt = 64;
  if (most < nt) nt = (int)most;
  return nt < 1 ? 1 : nt;
#else
  (void)n;
  return 1;
#endif
}

spc_status asm_call(asm_entry fn, const ir_func *f, ir_arg *args, spc_error *e) {
  return fn ? call_compiled((entry_fn)fn, f, args, e) : ir_run(f, args, e);
}

spc_status asm_run(asm_engine *E, const ir_func *f, ir_arg *args, spc_error *e) {
  asm_entry fn;
  spc_status s = asm_prepare(E, f, &fn, e);
  return s ? s : asm_call(fn, f, args, e);
}
