/* test_specs_diff.c -- suite_specs_diff: every remapping and every level
 * query of the built-in format specs, run by the interpreter (ir_run) and
 * as emitted C compiled by the system `cc`, on every shared matrix and
 * tensor (../shared/data or $SPC_DATA) plus a few made here.  Both paths
 * must agree bit for bit (status, FAIL message, every OUT argument), and
 * the results must match plain C:
 *
 *   remapping   the engine's remap function (counters, lets, parameters,
 *               the stable sort of the components by level coordinates):
 *               level coordinates against identity / transpose / diagonal
 *               / ELL slot / 4x4 block / Morton code computed here, the
 *               counter maxima, the permutation (a stable sort);
 *   requires    sky's j <= i, morton's 32-bit bounds: the first entry
 *               that breaks one, and its message;
 *   level query lowered as the engine does, per parent position (`[*]`)
 *               or per coordinate (`[c]`) over the components new at the
 *               level: nnz per row and column, nonempty rows / columns /
 *               diagonals, row extents (sky), blocks per block row (BCSR),
 *               fibers per fiber (CSF), components (COO, Morton);
 *   query text  the same query in the query language over the remapped
 *               coordinates (spc_query_plan), checked group by group
 *               against the level query; plus ELL's row widths.
 *
 * Every function takes the data as arguments (extents of the largest data
 * set of its order are baked in), so each is compiled once: all go into
 * two C files, compiled by two cc runs side by side.  Besides the files as
 * read (32-bit coordinates), a few come again with 64-bit coordinates. */
#include "spc_query.h"
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- data sets ------------------------------------------------------------ */

typedef struct dset {
  char name[96];
  spc_tensor *t; /* sorted, unique COO */
  int order;
  int64_t dims[SPC_MAX_ORDER], n;
  ir_ty crd_ty[SPC_MAX_ORDER];
  const void *crd[SPC_MAX_ORDER];
  int64_t *x[SPC_MAX_ORDER]; /* coordinates as int64 */
  /* order 2, plain C: per row / column counts, row extents, diagonals */
  int64_t *rowcnt, *colcnt, *rowmin, *rowmax;
  bool *diag; /* j - i + m - 1 */
} dset;

typedef int (*entry_fn)(ir_arg *args, char *err, size_t err_len);

/* A function to run both ways; f NULL: the planner refused it. */
typedef struct jfn {
  char *key;
  ir_func *f;
  entry_fn fn;
  spc_query *q; /* level query or query text */
  spc_remap *r; /* query text: its remapping */
  spc_query_layout lay;
  bool per_parent;
} jfn;

#define MAXFN 1024
#define NPART 2 /* C files compiled side by side */
#define NARGS 64 /* room for any function's arguments */

/* One format at one order, its remapping parsed with default parameters. */
typedef struct fctx {
  const spc_format_spec *fmt;
  int order, L, nparams;
  spc_remap *r;
  spc_remap_param ps[SPC_SPEC_MAX];
  const spc_format_level *lv[SPC_MAX_ORDER];
  int64_t runs; /* data sets run */
  int64_t qruns[SPC_MAX_ORDER][SPC_SPEC_MAX];
} fctx;

static struct {
  dset *d;
  int nd, capd;
  int64_t cap_dims[SPC_MAX_ORDER + 1][SPC_MAX_ORDER], cap_n[SPC_MAX_ORDER + 1];
  jfn *fn; /* MAXFN */
  int nfn;
  void *so[NPART];
  char *dir;
  int64_t runs, same, model, cross, planskip;
} W;

static void add_set(const char *name, spc_tensor *t) {
  spc_tensor *g = NULL, *c = NULL;
  spc_error e;
  if (spc_tensor_symmetry(t) != SPC_GENERAL) {
    tu_assert_ok(spc_tensor_expand(t, &g, &e), &e);
    spc_tensor_free(&t);
    t = g;
  }
  tu_assert_ok(spc_tensor_combine(t, SPC_DUP_SUM, &c, &e), &e);
  spc_tensor_free(&t);
  if (W.nd + 2 > W.capd) {
    W.capd = W.capd ? 2 * W.capd : 64;
    W.d = realloc(W.d, (size_t)W.capd * sizeof *W.d);
    ck_assert_ptr_nonnull(W.d);
  }
  dset *d = &W.d[W.nd++];
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s", name);
  d->t = c;
  d->order = spc_tensor_order(c);
  d->n = spc_tensor_nstored(c);
  ck_assert_int_le(d->order, SPC_MAX_ORDER);
  for (int l = 0; l < d->order; l++) {
    spc_itype ty;
    int64_t len;
    ck_assert_int_eq(spc_tensor_level_array(c, l, "crd", &d->crd[l], &ty, &len), SPC_OK);
    ck_assert_int_eq(len, d->n);
    d->dims[l] = spc_tensor_dim(c, l);
    d->crd_ty[l] = ty == SPC_IDX32 ? IR_I32 : IR_I64;
    d->x[l] = malloc((size_t)(d->n ? d->n : 1) * sizeof(int64_t));
    for (int64_t k = 0; k < d->n; k++)
      d->x[l][k] = ty == SPC_IDX32 ? ((const int32_t *)d->crd[l])[k]
                                   : ((const int64_t *)d->crd[l])[k];
    if (d->dims[l] > W.cap_dims[d->order][l]) W.cap_dims[d->order][l] = d->dims[l];
  }
  if (d->n > W.cap_n[d->order]) W.cap_n[d->order] = d->n;
}

/* A twin of the last set whose coordinates come as int64 arrays (the
 * readers pick 32 bits for everything here). */
static void add_wide_twin(void) {
  const dset *d = &W.d[W.nd - 1];
  ck_assert_int_lt(W.nd, W.capd);
  dset *w = &W.d[W.nd++];
  *w = *d;
  w->t = NULL;
  snprintf(w->name, sizeof w->name, "%.80s (int64)", d->name);
  for (int l = 0; l < d->order; l++) {
    w->x[l] = malloc((size_t)(d->n ? d->n : 1) * sizeof(int64_t));
    memcpy(w->x[l], d->x[l], (size_t)d->n * sizeof(int64_t));
    w->crd[l] = w->x[l];
    w->crd_ty[l] = IR_I64;
  }
}

/* An order-N pattern COO from coordinates (any order, duplicates kept). */
static void add_made(const char *name, int order, const int64_t *dims, int n,
                     const int64_t *x) {
  spc_tensor *t = NULL;
  spc_error e;
  tu_assert_ok(spc_tensor_create_coo(order, dims, n, SPC_PATTERN, &t, &e), &e);
  for (int l = 0; l < order; l++) {
    spc_itype ty;
    ck_assert_int_eq(spc_tensor_level_array(t, l, "crd", NULL, &ty, NULL), SPC_OK);
    void *p = spc_tensor_level_array_mut(t, l, "crd");
    for (int k = 0; k < n; k++) {
      if (ty == SPC_IDX32) ((int32_t *)p)[k] = (int32_t)x[k * order + l];
      else ((int64_t *)p)[k] = x[k * order + l];
    }
  }
  add_set(name, t);
  add_wide_twin();
}

static void load_sets(void) {
  static const int64_t m1[] = {5, 0, 0, 0, 0, 8, 2, 3, 2, 4, 2, 5, 2, 6, 2, 7, 3, 2,
                               5, 8, 0, 8, 4, 1, 2, 3, 1, 0, 3, 3, 5, 5, 4, 4, 0, 1};
  static const int64_t m2[] = {0, 0};
  static const int64_t m3[] = {39, 2, 0, 1, 17, 0, 17, 1, 17, 2, 38, 2, 3, 0, 3, 1};
  static const int64_t t3[] = {2, 3, 4, 0, 0, 0, 2, 3, 0, 1, 1, 1, 2, 0, 4,
                               0, 0, 3, 2, 3, 4, 1, 2, 2};
  static const int64_t t4[] = {1, 2, 1, 3, 0, 0, 0, 0, 1, 2, 0, 3, 1, 0, 1, 0, 0, 2, 1, 1};
  add_made("made 6x9", 2, (int64_t[]){6, 9}, 18, m1);
  add_made("made 4x3 empty", 2, (int64_t[]){4, 3}, 0, NULL);
  add_made("made 1x1", 2, (int64_t[]){1, 1}, 1, m2);
  add_made("made 40x3", 2, (int64_t[]){40, 3}, 8, m3);
  add_made("made 3x4x5", 3, (int64_t[]){3, 4, 5}, 8, t3);
  add_made("made 2x3x2x4", 4, (int64_t[]){2, 3, 2, 4}, 5, t4);
  const char *data = tu_data_dir();
  if (!data) return;
  static const char *const kinds[][2] = {{"matrices", ".mtx"}, {"tensors", ".tns"}};
  for (int k = 0; k < 2; k++) {
    char dir[4200];
    int n = 0;
    snprintf(dir, sizeof dir, "%s/%s", data, kinds[k][0]);
    char **names = tu_list_files(dir, kinds[k][1], &n);
    for (int i = 0; names && i < n; i++) {
      char *path = tu_path(dir, names[i]);
      add_set(names[i], tu_read_ok(path, 1, SPC_VTYPE_AUTO));
      if (!strcmp(names[i], "west0479.mtx") || !strcmp(names[i], "small4.tns")) add_wide_twin();
      free(path);
    }
    tu_free_list(names);
  }
}

/* Plain C statistics of a matrix. */
static void matrix_stats(dset *d) {
  int64_t m = d->dims[0], nc = d->dims[1];
  d->rowcnt = calloc((size_t)m + 1, 8);
  d->colcnt = calloc((size_t)nc + 1, 8);
  d->rowmin = calloc((size_t)m + 1, 8);
  d->rowmax = calloc((size_t)m + 1, 8);
  d->diag = calloc((size_t)(m + nc + 1), 1);
  for (int64_t t = 0; t < d->n; t++) {
    int64_t i = d->x[0][t], j = d->x[1][t];
    if (!d->rowcnt[i] || j < d->rowmin[i]) d->rowmin[i] = j;
    if (!d->rowcnt[i] || j > d->rowmax[i]) d->rowmax[i] = j;
    d->rowcnt[i]++;
    d->colcnt[j]++;
    d->diag[j - i + m - 1] = true;
  }
}

static void free_sets(void) {
  for (int k = 0; k < W.nd; k++) {
    dset *d = &W.d[k];
    spc_tensor_free(&d->t);
    for (int l = 0; l < d->order; l++) free(d->x[l]);
    free(d->rowcnt);
    free(d->colcnt);
    free(d->rowmin);
    free(d->rowmax);
    free(d->diag);
  }
  free(W.d);
}

/* ---- the functions and their one compilation ------------------------------ */

static jfn *jget(const char *key) {
  for (int k = 0; k < W.nfn; k++)
    if (!strcmp(W.fn[k].key, key)) return &W.fn[k];
  return NULL;
}

static jfn *jput(const char *key, ir_func *f) {
  if (!W.fn) W.fn = calloc(MAXFN, sizeof *W.fn); /* fixed: pointers stay valid */
  ck_assert_msg(W.fn && W.nfn < MAXFN, "more than %d functions", MAXFN);
  jfn *j = &W.fn[W.nfn++];
  memset(j, 0, sizeof *j);
  j->key = strdup(key);
  j->f = f;
  if (f) {
    ck_assert_int_le(ir_nparams(f), NARGS);
    spc_error e;
    ck_assert_msg(ir_func_ok(f), "%s: the builder broke the function", key);
    tu_assert_ok(ir_verify(f, &e), &e);
  }
  return j;
}

/* A name for the next function; also what the compiled one is called. */
static void next_name(char *b, size_t n) { snprintf(b, n, "sd_f%d", W.nfn); }

#if defined(__SANITIZE_ADDRESS__)
#define CC_SAN " -fsanitize=address,undefined -fno-sanitize-recover=all"
#else
#define CC_SAN ""
#endif
#define CC_FLAGS                                                                  \
  "-std=c99 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes " \
  "-Wpointer-arith -Wformat=2 -Werror -ffp-contract=off" CC_SAN

/* Every function into one of NPART C files (the planner's are all called
 * spc_query: macros rename them), compiled side by side, then loaded.
 * false without a compiler. */
static bool compile_all(void) {
  const char *cc = getenv("SPC_IR_CC") && *getenv("SPC_IR_CC") ? getenv("SPC_IR_CC") : "cc";
  char cmd[16384], *c[NPART], *so[NPART], *log[NPART], base[32];
  snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cc);
  if (system(cmd) != 0) {
    printf("skipped: emitted C (no C compiler); interpreter checked alone\n");
    return false;
  }
  W.dir = tu_mkdtemp();
  size_t k = 0;
  for (int part = 0; part < NPART; part++) {
    spc_str src = {0};
    spc_error e;
    bool prelude = true;
    for (int i = part; i < W.nfn; i += NPART) {
      if (!W.fn[i].f) continue;
      const char *nm = ir_func_name(W.fn[i].f);
      char want[32];
      snprintf(want, sizeof want, "sd_f%d", i);
      bool rename = strcmp(nm, want) != 0;
      if (rename) spc_str_addf(&src, "#define %s %s\n#define %s_entry %s_entry\n", nm, want, nm, want);
      ir_emit_opts o = {.prelude = prelude, .entry = true, .comment = W.fn[i].key};
      tu_assert_ok(ir_emit_c(W.fn[i].f, &o, &src, &e), &e);
      if (rename) spc_str_addf(&src, "#undef %s\n#undef %s_entry\n", nm, nm);
      prelude = false;
    }
    ck_assert(!src.failed);
    snprintf(base, sizeof base, "specs%d.c", part);
    c[part] = tu_path(W.dir, base);
    snprintf(base, sizeof base, "specs%d.so", part);
    so[part] = tu_path(W.dir, base);
    snprintf(base, sizeof base, "cc%d.log", part);
    log[part] = tu_path(W.dir, base);
    ck_assert_int_eq(tu_write_file(c[part], src.s ? src.s : "", src.len), 0);
    spc_str_free(&src);
    k += (size_t)snprintf(cmd + k, sizeof cmd - k,
                          "%s " CC_FLAGS " -shared -fPIC -o '%s' '%s' -lm >'%s' 2>&1 & p%d=$!; ",
                          cc, so[part], c[part], log[part], part);
  }
  for (int part = 0; part < NPART; part++)
    k += (size_t)snprintf(cmd + k, sizeof cmd - k, "wait $p%d || exit 1; ", part);
  ck_assert(k < sizeof cmd);
  if (system(cmd) != 0)
    for (int part = 0; part < NPART; part++) {
      char *msg = tu_read_file(log[part], NULL);
      ck_assert_msg(!msg || !*msg, "cc failed on the emitted C (%s): %.1500s", c[part], msg);
      free(msg);
    }
  for (int part = 0; part < NPART; part++) {
    W.so[part] = dlopen(so[part], RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(W.so[part] != NULL, "dlopen: %s", dlerror());
    for (int i = part; i < W.nfn; i += NPART) {
      if (!W.fn[i].f) continue;
      char sym[48];
      snprintf(sym, sizeof sym, "sd_f%d_entry", i);
      *(void **)&W.fn[i].fn = dlsym(W.so[part], sym);
      ck_assert_msg(W.fn[i].fn != NULL, "dlsym %s: %s", sym, dlerror());
    }
    free(c[part]);
    free(so[part]);
    free(log[part]);
  }
  return true;
}

/* Run j with the IN arguments of in, interpreted into ai and compiled into
 * ac; both must give the same status, message and non-IN arguments. */
static spc_status run2(const jfn *j, const ir_arg *in, ir_arg *ai, ir_arg *ac,
                       char *msg, size_t msgn, const char *what) {
  int np = ir_nparams(j->f);
  memcpy(ai, in, (size_t)np * sizeof *in);
  memcpy(ac, in, (size_t)np * sizeof *in);
  spc_error e;
  spc_error_clear(&e);
  spc_status si = ir_run(j->f, ai, &e);
  snprintf(msg, msgn, "%s", si ? e.msg : "");
  W.runs++;
  if (!j->fn) return si;
  char err[600] = "";
  int sc = j->fn(ac, err, sizeof err);
  tu_check(sc == (int)si, "%s: interpreter %s (%s), compiled %d (%s)", what,
           spc_status_name(si), e.msg, sc, err);
  tu_check(si == SPC_OK || !strcmp(e.msg, err),
           "%s: messages differ: interpreter '%s', compiled '%s'", what, e.msg, err);
  for (int k = 0; k < np; k++) {
    const ir_var_info *vi = ir_var_get(j->f, ir_param_var(j->f, k));
    if (vi->dir == IR_IN) continue;
    size_t w = ir_ty_size(vi->ty);
    if (!vi->array) {
      tu_check(!memcmp(&ai[k].s, &ac[k].s, w), "%s: %s differs: interpreter %lld, compiled %lld",
               what, vi->name, (long long)ai[k].s.i64, (long long)ac[k].s.i64);
      W.same++;
      continue;
    }
    tu_check(ai[k].len == ac[k].len, "%s: %s has %lld entries interpreted, %lld compiled",
             what, vi->name, (long long)ai[k].len, (long long)ac[k].len);
    const char *a = ai[k].data, *b = ac[k].data;
    if (ai[k].len > 0 && memcmp(a, b, w * (size_t)ai[k].len)) {
      int64_t i = 0;
      while (!memcmp(a + i * (int64_t)w, b + i * (int64_t)w, w)) i++;
      ck_abort_msg("%s: %s[%lld] differs: interpreter %lld, compiled %lld", what, vi->name,
                   (long long)i, (long long)((const int64_t *)(const void *)a)[i],
                   (long long)((const int64_t *)(const void *)b)[i]);
    }
    W.same += ai[k].len;
  }
  return si;
}

static void free_outs(const jfn *j, ir_arg *ai, ir_arg *ac) {
  for (int k = 0; k < ir_nparams(j->f); k++) {
    const ir_var_info *vi = ir_var_get(j->f, ir_param_var(j->f, k));
    if (!vi->array || vi->dir != IR_OUT) continue;
    spc_free(ai[k].data);
    free(ac[k].data);
    ai[k].data = ac[k].data = NULL;
  }
}

/* ---- the remapping (as the engine's remap function) ----------------------- */

static void types_key(const dset *d, char *b, size_t n) {
  size_t k = 0;
  for (int l = 0; l < d->order && k < n; l++)
    k += (size_t)snprintf(b + k, n - k, "%s", d->crd_ty[l] == IR_I32 ? "4" : "8");
}

/* remap(crd0.., n, lc0.., perm, cmax0..): the level coordinates of every
 * component, the stable order by them, each counter's maximum. */
static ir_func *build_remap(const fctx *F, const dset *d) {
  char name[32];
  next_name(name, sizeof name);
  ir_func *f = ir_func_new(name);
  const spc_remap *r = F->r;
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER], lout[SPC_MAX_ORDER], cmax[SPC_MAX_ORDER], cv[SPC_MAX_ORDER];
  spc_counter_ir ctr[SPC_MAX_ORDER];
  ir_expr *src[SPC_MAX_ORDER], *outs[SPC_MAX_ORDER];
  spc_error e;
  for (int k = 0; k < F->order; k++) {
    snprintf(name, sizeof name, "crd%d", k);
    crd[k] = ir_param(f, name, d->crd_ty[k], true, IR_IN);
  }
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  for (int l = 0; l < F->L; l++) {
    snprintf(name, sizeof name, "lc%d", l);
    lout[l] = ir_param(f, name, IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, lout[l], ir_ref(f, n), false));
  }
  ir_var perm = ir_param(f, "perm", IR_I64, true, IR_OUT);
  for (int c = 0; c < r->ncounters; c++) {
    snprintf(name, sizeof name, "cmax%d", c);
    cmax[c] = ir_param(f, name, IR_I64, false, IR_OUT);
    tu_assert_ok(spc_counter_begin(r, c, SPC_COUNTER_DENSE, W.cap_dims[F->order],
                                   (int64_t)1 << 28, f, body, &ctr[c], NULL, &e), &e);
  }
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
  for (int k = 0; k < F->order; k++) {
    ir_var x = lang_fresh_local(f, r->in_names[k], IR_I64, false);
    ir_add(f, lb, ir_assign(f, x, ir_cast(f, IR_I64, ir_load(f, crd[k], ir_ref(f, t)))));
    src[k] = ir_ref(f, x);
  }
  for (int c = 0; c < r->ncounters; c++) {
    spc_counter_step(&ctr[c], f, lb, src);
    cv[c] = ctr[c].value;
    ir_add(f, lb, ir_assign(f, cmax[c], ir_bin(f, IR_MAX, ir_ref(f, cmax[c]), ir_ref(f, cv[c]))));
  }
  tu_assert_ok(spc_remap_lower(r, f, lb, src, cv, outs, &e), &e);
  for (int l = 0; l < F->L; l++)
    ir_add(f, lb, ir_store(f, lout[l], ir_ref(f, t), ir_cast(f, IR_I64, outs[l])));
  for (int c = 0; c < r->ncounters; c++) spc_counter_end(&ctr[c], f, body);
  ir_add(f, body, ir_alloc(f, perm, ir_ref(f, n), false));
  ir_stmt *pl = ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL));
  ir_add(f, ir_body(pl), ir_store(f, perm, ir_ref(f, t), ir_ref(f, t)));
  ir_var keys[SPC_MAX_ORDER + 1];
  keys[0] = perm;
  for (int l = 0; l < F->L; l++) keys[l + 1] = lout[l];
  ir_expr *na = ir_ref(f, n);
  ir_add(f, body, ir_call(f, IR_SORT_PERM, keys, F->L + 1, &na, 1));
  return f;
}

static uint64_t morton(uint64_t i, uint64_t j) {
  uint64_t z = 0;
  for (int b = 0; b < 32; b++) z |= ((i >> b & 1) << (2 * b + 1)) | ((j >> b & 1) << (2 * b));
  return z;
}

static int64_t param(const fctx *F, const char *name) {
  for (int k = 0; k < F->nparams; k++)
    if (!strcmp(F->ps[k].name, name)) return F->ps[k].value;
  ck_abort_msg("format %s has no parameter %s", F->fmt->name, name);
  return 0;
}

/* Plain C: level coordinate l of component t. */
static int64_t model_lc(const fctx *F, const dset *d, int l, int64_t t, int64_t slot) {
  const char *f = F->fmt->name;
  int64_t i = d->x[0][t], j = d->order > 1 ? d->x[1][t] : 0;
  if (!strcmp(f, "coo") || !strcmp(f, "csf") || !strcmp(f, "dense") || !strcmp(f, "csr") ||
      !strcmp(f, "dcsr") || !strcmp(f, "sky"))
    return d->x[l][t];
  if (!strcmp(f, "csc") || !strcmp(f, "dcsc")) return l ? i : j;
  if (!strcmp(f, "dia")) return l == 0 ? j - i : l == 1 ? j : i;
  if (!strcmp(f, "ell")) return l == 0 ? slot : l == 1 ? i : j;
  if (!strcmp(f, "bcsr")) {
    int64_t M = param(F, "M"), N = param(F, "N");
    return l == 0 ? i / M : l == 1 ? j / N : l == 2 ? i % M : j % N;
  }
  if (!strcmp(f, "morton")) return l ? d->x[l - 1][t] : (int64_t)morton((uint64_t)i, (uint64_t)j);
  ck_abort_msg("no plain-C model of format %s's remapping", f);
  return 0;
}

static int cmp_tuple(int64_t *const *lc, int L, int64_t a, int64_t b) {
  for (int l = 0; l < L; l++)
    if (lc[l][a] != lc[l][b]) return lc[l][a] < lc[l][b] ? -1 : 1;
  return 0;
}

static void check_remap(const fctx *F, const dset *d, const ir_arg *a) {
  int p0 = F->order + 1;
  int64_t *lc[SPC_MAX_ORDER], n = d->n, *slot = calloc((size_t)d->dims[0] + 1, 8), smax = 0;
  const char *f = F->fmt->name;
  ck_assert_int_eq(F->L, !strcmp(f, "bcsr") ? 4 : !strcmp(f, "dia") || !strcmp(f, "ell") || !strcmp(f, "morton") ? 3 : F->order);
  for (int l = 0; l < F->L; l++) {
    lc[l] = a[p0 + l].data;
    ck_assert_int_eq(a[p0 + l].len, n);
  }
  for (int64_t t = 0; t < n; t++) {
    int64_t s = slot[d->x[0][t]]++;
    smax = s > smax ? s : smax;
    for (int l = 0; l < F->L; l++)
      tu_check(lc[l][t] == model_lc(F, d, l, t, s), "%s on %s: entry %lld level %d: %lld, plain C %lld",
               f, d->name, (long long)t, l, (long long)lc[l][t], (long long)model_lc(F, d, l, t, s));
  }
  W.model += n * F->L;
  if (F->r->ncounters) {
    ck_assert_int_eq(F->r->ncounters, 1);
    ck_assert_msg(a[p0 + F->L + 1].s.i64 == smax, "%s on %s: counter max %lld, plain C %lld", f,
                  d->name, (long long)a[p0 + F->L + 1].s.i64, (long long)smax);
    W.model++;
  }
  /* perm: a permutation, stably sorted by the level coordinates */
  const int64_t *perm = a[p0 + F->L].data;
  char *seen = calloc((size_t)n + 1, 1);
  for (int64_t t = 0; t < n; t++) {
    tu_check(perm[t] >= 0 && perm[t] < n && !seen[perm[t]], "%s on %s: perm[%lld] = %lld", f,
             d->name, (long long)t, (long long)perm[t]);
    seen[perm[t]] = 1;
    if (t) {
      int c = cmp_tuple(lc, F->L, perm[t - 1], perm[t]);
      tu_check(c < 0 || (c == 0 && perm[t - 1] < perm[t]), "%s on %s: not a stable sort at %lld",
               f, d->name, (long long)t);
    }
  }
  W.model += n;
  free(seen);
  free(slot);
}

/* ---- requires --------------------------------------------------------------- */

typedef struct rq_ctx {
  const fctx *F;
  ir_var x[SPC_MAX_ORDER];
} rq_ctx;

static bool rq_resolve(void *ctx, const char *name, lang_sym *s) {
  const rq_ctx *q = ctx;
  for (int k = 0; k < q->F->order; k++)
    if (!strcmp(name, q->F->r->in_names[k])) {
      s->kind = LANG_SYM_INDEX;
      s->type = (lang_type){.ty = IR_I64, .sym = LT_COORD};
      s->readonly = true;
      s->var = q->x[k];
      return true;
    }
  for (int k = 0; k < q->F->nparams; k++)
    if (!strcmp(name, q->F->ps[k].name)) {
      s->kind = LANG_SYM_CONST;
      s->type = (lang_type){.ty = IR_I64, .lit = true};
      s->value = q->F->ps[k].value;
      return true;
    }
  return false;
}

/* The text as it appears in messages: newlines as spaces. */
static void flat(const char *text, char *b, size_t n) {
  size_t k = 0;
  for (; *text && k + 1 < n; text++) b[k++] = *text == '\n' ? ' ' : *text;
  while (k && b[k - 1] == ' ') k--;
  b[k] = 0;
}

/* requires(crd0.., n): FAIL "cannot hold entry (i+1, j+1): requires TEXT"
 * at the first entry breaking one condition, as the engine's check. */
static ir_func *build_requires(const fctx *F, const dset *d) {
  char name[32], msg[600], txt[400];
  next_name(name, sizeof name);
  ir_func *f = ir_func_new(name);
  ir_stmt *body = ir_func_body(f);
  ir_var crd[SPC_MAX_ORDER];
  rq_ctx rq = {.F = F};
  spc_error e;
  for (int k = 0; k < F->order; k++) {
    snprintf(name, sizeof name, "crd%d", k);
    crd[k] = ir_param(f, name, d->crd_ty[k], true, IR_IN);
  }
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var t = lang_fresh_local(f, "t", IR_I64, false);
  ir_stmt *lb = ir_body(ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL)));
  ir_expr *args[SPC_MAX_ORDER];
  for (int k = 0; k < F->order; k++) {
    rq.x[k] = lang_fresh_local(f, F->r->in_names[k], IR_I64, false);
    ir_add(f, lb, ir_assign(f, rq.x[k], ir_cast(f, IR_I64, ir_load(f, crd[k], ir_ref(f, t)))));
    args[k] = ir_bin(f, IR_ADD, ir_ref(f, rq.x[k]), ir_int(f, 1));
  }
  lang_env env = {.resolve = rq_resolve, .ctx = &rq};
  for (int i = 0; i < F->fmt->nrequires; i++) {
    lang_ast *ast = NULL;
    tu_assert_ok(lang_parse_expr(&F->fmt->requires[i].at, &ast, &e), &e);
    tu_assert_ok(lang_check_expr(ast, ast->root, &env, &e), &e);
    ir_expr *cond = lang_lower_expr(f, ast->root, &env, &e);
    ck_assert_msg(cond != NULL, "%s: %s", F->fmt->name, e.msg);
    flat(F->fmt->requires[i].text, txt, sizeof txt);
    ck_assert_ptr_null(strchr(txt, '%'));
    snprintf(msg, sizeof msg, "cannot hold entry (%%lld, %%lld): requires %s", txt);
    ir_stmt *iff = ir_add(f, lb, ir_if(f, ir_un(f, IR_NOT, cond), NULL, NULL));
    ir_add(f, ir_then(iff), ir_fail(f, SPC_ERR_UNSUPPORTED, msg, args, F->order));
    lang_ast_free(&ast);
  }
  return f;
}

/* Plain C: whether entry t satisfies requires text. */
static bool model_requires(const char *text, const dset *d, int64_t t) {
  char b[400];
  flat(text, b, sizeof b);
  uint64_t i = (uint64_t)d->x[0][t], j = (uint64_t)d->x[1][t];
  if (!strcmp(b, "j <= i")) return j <= i;
  if (!strcmp(b, "i < 0x100000000")) return i < (uint64_t)1 << 32;
  if (!strcmp(b, "j < 0x100000000")) return j < (uint64_t)1 << 32;
  ck_abort_msg("no plain-C model of requires '%s'", b);
  return false;
}

static void check_requires(const fctx *F, const dset *d, spc_status st, const char *msg) {
  char want[700] = "", b[400];
  for (int64_t t = 0; t < d->n && !*want; t++)
    for (int i = 0; i < F->fmt->nrequires && !*want; i++)
      if (!model_requires(F->fmt->requires[i].text, d, t)) {
        flat(F->fmt->requires[i].text, b, sizeof b);
        snprintf(want, sizeof want, "cannot hold entry (%lld, %lld): requires %s",
                 (long long)d->x[0][t] + 1, (long long)d->x[1][t] + 1, b);
      }
  ck_assert_msg(st == (*want ? SPC_ERR_UNSUPPORTED : SPC_OK), "%s on %s: requires gave %s (%s)",
                F->fmt->name, d->name, spc_status_name(st), msg);
  ck_assert_msg(!strcmp(msg, want), "%s on %s: '%s', plain C '%s'", F->fmt->name, d->name, msg, want);
  W.model++;
}

/* ---- level queries (as the engine lowers them) ------------------------------ */

/* lq(pp, isnew, crd, n, np, N, lo, o_<agg>.., [present]): the aggregates
 * of the components new at the level (isnew), per parent position pp
 * (`[*]`, np groups) or per coordinate crd - lo (`[c]`, N groups). */
static ir_func *build_levelq(const spc_level_spec *ls, int k, spc_query **qp, bool *per_parent) {
  char name[64];
  spc_error e;
  lang_src src = ls->queries[k].at;
  char *txt = strdup(ls->queries[k].text), *star = strstr(txt, "[*]");
  if (star) star[1] = ' ';
  src.text = txt;
  tu_assert_ok(spc_query_parse(&src, qp, &e), &e);
  free(txt);
  const spc_query *q = *qp;
  *per_parent = star != NULL;
  ck_assert_msg(star || (q->ngroup == 1 && !strcmp(q->group[0], "c")),
                "level %s: query %d groups by neither [*] nor [c]", ls->name, k);
  next_name(name, sizeof name);
  ir_func *f = ir_func_new(name);
  ir_stmt *body = ir_func_body(f);
  ir_var pp = ir_param(f, "pp", IR_I64, true, IR_IN);
  ir_var isnew = ir_param(f, "isnew", IR_I64, true, IR_IN);
  ir_var crd = ir_param(f, "crd", IR_I64, true, IR_IN);
  ir_var n = ir_param(f, "n", IR_I64, false, IR_IN);
  ir_var np = ir_param(f, "np", IR_I64, false, IR_IN);
  ir_var N = ir_param(f, "N", IR_I64, false, IR_IN);
  ir_var lo = ir_param(f, "lo", IR_I64, false, IR_IN);
  ir_var out[SPC_SPEC_MAX], present = -1;
  ck_assert_int_le(q->nagg, SPC_SPEC_MAX);
  bool minmax = false;
  for (int a = 0; a < q->nagg; a++) minmax |= q->aggs[a].kind == SPC_AGG_MIN || q->aggs[a].kind == SPC_AGG_MAX;
  ir_expr *G = ir_ref(f, *per_parent ? np : N);
  for (int a = 0; a < q->nagg; a++) {
    const spc_query_agg *A = &q->aggs[a];
    ck_assert_msg(A->nargs == 0 || (A->nargs == 1 && !strcmp(A->args[0], "c")),
                  "level %s: aggregate %s takes more than c", ls->name, A->name);
    snprintf(name, sizeof name, "o_%s", A->name);
    out[a] = ir_param(f, name, IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, out[a], G, true));
  }
  if (minmax) {
    present = ir_param(f, "present", IR_I64, true, IR_OUT);
    ir_add(f, body, ir_alloc(f, present, G, true));
  }
  ir_var t = lang_fresh_local(f, "qt", IR_I64, false), g = lang_fresh_local(f, "qg", IR_I64, false);
  ir_var cv = lang_fresh_local(f, "qc", IR_I64, false);
  ir_stmt *loop = ir_add(f, body, ir_for(f, t, ir_int(f, 0), ir_ref(f, n), NULL));
  ir_stmt *iff = ir_add(f, ir_body(loop), ir_if(f, ir_bin(f, IR_NE, ir_load(f, isnew, ir_ref(f, t)), ir_int(f, 0)), NULL, NULL));
  ir_stmt *tb = ir_then(iff);
  ir_add(f, tb, ir_assign(f, cv, ir_load(f, crd, ir_ref(f, t))));
  ir_add(f, tb, ir_assign(f, g, *per_parent ? ir_load(f, pp, ir_ref(f, t))
                                              : ir_bin(f, IR_SUB, ir_ref(f, cv), ir_ref(f, lo))));
  for (int a = 0; a < q->nagg; a++) {
    ir_expr *cur = ir_load(f, out[a], ir_ref(f, g));
    switch (q->aggs[a].kind) {
    case SPC_AGG_COUNT:
      ir_add(f, tb, ir_store(f, out[a], ir_ref(f, g), ir_bin(f, IR_ADD, cur, ir_int(f, 1))));
      break;
    case SPC_AGG_ID: ir_add(f, tb, ir_store(f, out[a], ir_ref(f, g), ir_int(f, 1))); break;
    default: {
      ir_expr *seen = ir_bin(f, IR_NE, ir_load(f, present, ir_ref(f, g)), ir_int(f, 0));
      ir_expr *m = ir_bin(f, q->aggs[a].kind == SPC_AGG_MIN ? IR_MIN : IR_MAX, cur, ir_ref(f, cv));
      ir_add(f, tb, ir_store(f, out[a], ir_ref(f, g), ir_select(f, seen, m, ir_ref(f, cv))));
    }
    }
  }
  if (minmax) ir_add(f, tb, ir_store(f, present, ir_ref(f, g), ir_int(f, 1)));
  return f;
}

/* The components in level order, equal level tuples combined, the "new
 * prefix" flags per level and the level extents (as the engine). */
typedef struct lvdata {
  int64_t m;
  int64_t *lc[SPC_MAX_ORDER], *isnew[SPC_MAX_ORDER];
  int64_t lo[SPC_MAX_ORDER], N[SPC_MAX_ORDER];
  bool bounded[SPC_MAX_ORDER];
} lvdata;

static void level_order(const fctx *F, const dset *d, const ir_arg *a, lvdata *V) {
  int p0 = F->order + 1, L = F->L;
  const int64_t *perm = a[p0 + L].data;
  int64_t n = d->n, m = 0, cmax[SPC_MAX_ORDER];
  memset(V, 0, sizeof *V);
  for (int l = 0; l < L; l++) {
    V->lc[l] = malloc((size_t)(n ? n : 1) * 8);
    V->isnew[l] = malloc((size_t)(n ? n : 1) * 8);
  }
  for (int64_t t = 0; t < n; t++) {
    for (int l = 0; l < L; l++) V->lc[l][m] = ((const int64_t *)a[p0 + l].data)[perm[t]];
    if (!m || cmp_tuple(V->lc, L, m - 1, m)) m++;
  }
  V->m = m;
  for (int l = 0; l < L; l++)
    for (int64_t t = 0; t < m; t++)
      V->isnew[l][t] = t == 0 || !F->lv[l]->unique || (l > 0 && V->isnew[l - 1][t]) ||
                       V->lc[l][t] != V->lc[l][t - 1];
  lang_ival iv[SPC_MAX_ORDER];
  spc_error e;
  for (int c = 0; c < F->r->ncounters; c++) cmax[c] = a[p0 + L + 1 + c].s.i64;
  tu_assert_ok(spc_remap_bounds(F->r, d->dims, cmax, iv, &e), &e);
  for (int l = 0; l < L; l++) {
    int64_t ext = 0;
    V->bounded[l] = iv[l].bounded && !__builtin_sub_overflow(iv[l].hi, iv[l].lo, &ext) && ext < INT64_MAX;
    V->lo[l] = iv[l].lo;
    V->N[l] = V->bounded[l] ? ext + 1 : 0;
  }
}

static void free_lvdata(lvdata *V) {
  for (int l = 0; l < SPC_MAX_ORDER; l++) {
    free(V->lc[l]);
    free(V->isnew[l]);
  }
}

/* Plain C: level l's parent position of every component, *np of them. */
static int64_t *parent_pos(const fctx *F, const lvdata *V, int l, int64_t *np) {
  int64_t *p = calloc((size_t)V->m + 1, 8), cnt = 1;
  for (int k = 0; k < l; k++) {
    const char *nm = F->lv[k]->lf->name;
    if (!strcmp(nm, "dense")) {
      ck_assert(V->bounded[k]);
      for (int64_t t = 0; t < V->m; t++) p[t] = p[t] * V->N[k] + V->lc[k][t] - V->lo[k];
      ck_assert(!__builtin_mul_overflow(cnt, V->N[k], &cnt));
    } else if (!strcmp(nm, "compressed")) {
      int64_t q = -1;
      for (int64_t t = 0; t < V->m; t++) p[t] = q += V->isnew[k][t] != 0;
      cnt = q + 1;
    } else {
      ck_abort_msg("no plain-C model of the positions of a %s level", nm);
    }
  }
  *np = cnt;
  return p;
}

/* Plain C: fibers of csf (dimension order) level l per parent fiber. */
static int64_t *fibers(const dset *d, int l, int64_t *G) {
  int64_t *c = calloc((size_t)d->n + 1, 8), p = -1;
  for (int64_t t = 0; t < d->n; t++) {
    bool parent = t == 0, self;
    for (int k = 0; k < l && !parent; k++) parent = d->x[k][t] != d->x[k][t - 1];
    self = parent || d->x[l][t] != d->x[l][t - 1];
    p += parent;
    c[p] += self;
  }
  *G = d->n ? p + 1 : l == 0;
  return c;
}

/* Plain C: what aggregate agg of format F's level l should hold, per
 * engine group (parent position or coordinate - lo); *G groups. */
static int64_t *model_query(const fctx *F, const dset *d, int l, const spc_query_agg *A, int64_t *G) {
  const char *f = F->fmt->name, *a = A->name;
  int64_t m = d->dims[0], nc = d->order > 1 ? d->dims[1] : 0, *v = NULL;
  bool cnt = A->kind == SPC_AGG_COUNT;
  if (((!strcmp(f, "coo") || !strcmp(f, "morton")) && l == 0 && cnt)) {
    *G = 1;
    v = calloc(1, 8);
    v[0] = d->n;
  } else if ((!strcmp(f, "csr") || !strcmp(f, "sky")) && l == 1) {
    *G = m;
    v = calloc((size_t)m + 1, 8);
    for (int64_t i = 0; i < m; i++)
      v[i] = cnt ? d->rowcnt[i] : !strcmp(a, "cmin") ? d->rowmin[i] : !strcmp(a, "cmax") ? d->rowmax[i] : -1;
  } else if (!strcmp(f, "csc") && l == 1 && cnt) {
    *G = nc;
    v = calloc((size_t)nc + 1, 8);
    memcpy(v, d->colcnt, (size_t)nc * 8);
  } else if ((!strcmp(f, "dcsr") || !strcmp(f, "csf")) && cnt) {
    v = fibers(d, l, G);
  } else if (!strcmp(f, "dcsc") && cnt) {
    v = calloc((size_t)nc + 1, 8);
    *G = l == 0;
    for (int64_t j = 0; j < nc; j++)
      if (d->colcnt[j]) {
        if (l == 0) v[0]++;
        else v[(*G)++] = d->colcnt[j];
      }
  } else if (!strcmp(f, "bcsr") && l == 1 && cnt) {
    int64_t M = param(F, "M"), N = param(F, "N");
    *G = m ? (m - 1) / M + 1 : 0;
    v = calloc((size_t)*G + 1, 8);
    int64_t *stamp = calloc((size_t)(nc / N + 2), 8);
    for (int64_t t = 0; t < d->n; t++) { /* rows sorted: a block row is contiguous */
      int64_t bi = d->x[0][t] / M, bj = d->x[1][t] / N;
      if (stamp[bj] != bi + 1) stamp[bj] = bi + 1, v[bi]++;
    }
    free(stamp);
  } else if (!strcmp(f, "dia") && l == 0 && A->kind == SPC_AGG_ID) {
    *G = m + nc - 1;
    v = calloc((size_t)(m + nc), 8);
    for (int64_t k = 0; k < m + nc - 1; k++) v[k] = d->diag[k];
  }
  ck_assert_msg(v != NULL, "no plain-C model of format %s level %d %s", f, l, a);
  for (int64_t k = 0; k < *G; k++) /* -1: an aggregate the model does not know */
    ck_assert_msg(v[k] >= 0, "no plain-C model of format %s level %d %s", f, l, a);
  return v;
}

/* Run level l's query k of F in its context; check against plain C.  The
 * results (and their group count) stay in ai for the query-text check. */
static void run_levelq(const fctx *F, const dset *d, const lvdata *V, int l, int k,
                       const jfn *j, ir_arg *ai, ir_arg *ac, int64_t **pp_out) {
  int64_t np, *pp = parent_pos(F, V, l, &np);
  char what[300], msg[600];
  snprintf(what, sizeof what, "%s on %s: level %d query '%s'", F->fmt->name, d->name, l,
           F->lv[l]->lf->queries[k].text);
  ck_assert_msg(j->per_parent || V->bounded[l], "%s: no finite extent", what);
  ir_arg in[NARGS];
  memset(in, 0, sizeof in);
  in[0] = (ir_arg){.data = pp, .len = V->m};
  in[1] = (ir_arg){.data = V->isnew[l], .len = V->m};
  in[2] = (ir_arg){.data = V->lc[l], .len = V->m};
  in[3].s.i64 = V->m;
  in[4].s.i64 = np;
  in[5].s.i64 = V->N[l];
  in[6].s.i64 = V->lo[l];
  tu_check(run2(j, in, ai, ac, msg, sizeof msg, what) == SPC_OK, "%s: %s", what, msg);
  int64_t G = j->per_parent ? np : V->N[l];
  bool minmax = false;
  for (int a = 0; a < j->q->nagg; a++) {
    const spc_query_agg *A = &j->q->aggs[a];
    int64_t mg, *want = model_query(F, d, l, A, &mg);
    const int64_t *got = ai[7 + a].data;
    ck_assert_msg(ai[7 + a].len == G && G == mg, "%s: %s has %lld groups, plain C %lld", what,
                  A->name, (long long)ai[7 + a].len, (long long)mg);
    for (int64_t g = 0; g < G; g++)
      tu_check(got[g] == want[g], "%s: %s[%lld] = %lld, plain C %lld", what, A->name, (long long)g,
               (long long)got[g], (long long)want[g]);
    W.model += G;
    minmax |= A->kind == SPC_AGG_MIN || A->kind == SPC_AGG_MAX;
    free(want);
  }
  if (minmax && !strcmp(F->fmt->name, "sky")) { /* present: nonempty rows */
    const int64_t *pr = ai[7 + j->q->nagg].data;
    for (int64_t g = 0; g < G; g++)
      tu_check(pr[g] == (d->rowcnt[g] > 0), "%s: present[%lld]", what, (long long)g);
    W.model += G;
  }
  *pp_out = pp;
}

/* ---- the same queries as query text over the remapped coordinates ---------- */

/* "select [parents or c] -> agg(level names) as name, ..." */
static void query_text(const fctx *F, int l, const jfn *lq, char *b, size_t n) {
  const spc_remap *r = F->r;
  size_t k = (size_t)snprintf(b, n, "select [");
  if (lq->per_parent)
    for (int p = 0; p < l; p++) k += (size_t)snprintf(b + k, n - k, "%s%s", p ? ", " : "", r->out_names[p]);
  else
    k += (size_t)snprintf(b + k, n - k, "%s", r->out_names[l]);
  k += (size_t)snprintf(b + k, n - k, "] ->");
  static const char *const agg[] = {"count", "min", "max", "id"};
  for (int a = 0; a < lq->q->nagg; a++) {
    const spc_query_agg *A = &lq->q->aggs[a];
    k += (size_t)snprintf(b + k, n - k, "%s %s(", a ? "," : "", agg[A->kind]);
    /* a level that is not unique counts its components: whole tuples */
    int hi = A->nargs == 0 ? l : A->kind == SPC_AGG_COUNT && !F->lv[l]->unique ? F->L : l + 1;
    for (int o = l; o < hi; o++) k += (size_t)snprintf(b + k, n - k, "%s%s", o > l ? ", " : "", r->out_names[o]);
    k += (size_t)snprintf(b + k, n - k, ") as %s", A->name);
  }
  ck_assert_msg(k < n, "query text too long");
}

/* The planned function of text over F's remapping: with the extents of the
 * largest data set of this order, else this one's, else NULL (too large
 * to hold densely). */
static const jfn *plan_fn(const fctx *F, const dset *d, const char *text, int pass) {
  char types[SPC_MAX_ORDER + 1], key[1200];
  types_key(d, types, sizeof types);
  for (int own = 0; own < 2; own++) {
    const int64_t *dims = own ? d->dims : W.cap_dims[F->order];
    size_t k = (size_t)snprintf(key, sizeof key, "plan %s | %s %s |", text, F->fmt->name, types);
    for (int l = 0; l < F->order; l++) k += (size_t)snprintf(key + k, sizeof key - k, " %lld", (long long)dims[l]);
    jfn *j = jget(key);
    if (!j) {
      ck_assert_msg(pass == 0, "%s: not planned", key);
      spc_query *q = NULL;
      spc_remap *r = NULL;
      spc_error e;
      lang_src qs = {.text = text};
      tu_assert_ok(spc_query_parse(&qs, &q, &e), &e);
      tu_assert_ok(F->fmt->remap.text ? spc_remap_parse(&F->fmt->remap.at, F->order, F->ps, F->nparams, &r, &e)
                                      : spc_remap_identity(F->order, &r, &e), &e);
      tu_assert_ok(spc_query_bind(q, r, &e), &e);
      spc_query_shape sh = {.order = F->order, .nnz = W.cap_n[F->order], .max_groups = (int64_t)1 << 24};
      for (int l = 0; l < F->order; l++) sh.dims[l] = dims[l], sh.crd_ty[l] = d->crd_ty[l];
      ir_func *f = NULL;
      spc_query_layout lay;
      spc_status st = spc_query_plan(q, r, &sh, &f, &lay, &e);
      ck_assert_msg(st == SPC_OK || (st == SPC_ERR_UNSUPPORTED && q->ngroup > 1), "%s: %s", key, e.msg);
      j = jput(key, f);
      j->q = q;
      j->r = r;
      j->lay = lay;
    }
    if (j->f) return j;
  }
  return NULL;
}

/* Group number of component t (level order) in a plan's layout. */
static int64_t plan_group(const jfn *p, const lvdata *V, int64_t t) {
  int64_t g = 0;
  for (int k = 0; k < p->q->ngroup; k++) g = g * p->lay.ext[k] + V->lc[p->q->group_out[k]][t] - p->lay.lo[k];
  return g;
}

/* The planned query against the level query's results ae: equal at every
 * group holding a new component of level l, zero at every other. */
static void cross_check(const fctx *F, const dset *d, const lvdata *V, int l, const jfn *lq,
                        const ir_arg *ae, const int64_t *pp, const jfn *p, const ir_arg *ap,
                        const char *text) {
  int na = lq->q->nagg, fo = p->lay.first_out;
  int64_t GE = ae[7].len, GP = p->lay.ngroups;
  char *hitE = calloc((size_t)GE + 1, 1), *hitP = calloc((size_t)GP + 1, 1);
  bool pres = p->lay.has_present;
  for (int64_t t = 0; t < V->m; t++) {
    if (!V->isnew[l][t]) continue;
    int64_t ge = lq->per_parent ? pp[t] : V->lc[l][t] - V->lo[l], gp = plan_group(p, V, t);
    tu_check(ge >= 0 && ge < GE && gp >= 0 && gp < GP, "%s on %s: '%s' group out of range", F->fmt->name, d->name, text);
    hitE[ge] = hitP[gp] = 1;
    for (int a = 0; a < na; a++) {
      int64_t e = ((const int64_t *)ae[7 + a].data)[ge], q = ((const int64_t *)ap[fo + a].data)[gp];
      tu_check(e == q, "%s on %s: '%s' %s: group %lld gives %lld, level query position %lld %lld",
               F->fmt->name, d->name, text, lq->q->aggs[a].name, (long long)gp, (long long)q,
               (long long)ge, (long long)e);
    }
    if (pres) tu_check(((const int64_t *)ap[p->lay.present_param].data)[gp] == 1, "%s on %s: '%s' present", F->fmt->name, d->name, text);
  }
  for (int a = 0; a < na; a++) {
    for (int64_t g = 0; g < GE; g++)
      tu_check(hitE[g] || ((const int64_t *)ae[7 + a].data)[g] == 0, "%s on %s: level query %s[%lld] of an empty group",
               F->fmt->name, d->name, lq->q->aggs[a].name, (long long)g);
    for (int64_t g = 0; g < GP; g++)
      tu_check(hitP[g] || ((const int64_t *)ap[fo + a].data)[g] == 0, "%s on %s: '%s' %s[%lld] of an empty group",
               F->fmt->name, d->name, text, lq->q->aggs[a].name, (long long)g);
  }
  for (int64_t g = 0; pres && g < GP; g++)
    tu_check(hitP[g] == ((const int64_t *)ap[p->lay.present_param].data)[g], "%s on %s: '%s' present[%lld]",
             F->fmt->name, d->name, text, (long long)g);
  W.cross += (GE + GP) * na;
  free(hitE);
  free(hitP);
}

static void run_plan(const jfn *p, const dset *d, ir_arg *ai, ir_arg *ac, const char *what) {
  ir_arg in[NARGS];
  char msg[600];
  memset(in, 0, sizeof in);
  for (int l = 0; l < d->order; l++) in[l] = (ir_arg){.data = (void *)d->crd[l], .len = d->n};
  in[d->order].s.i64 = d->n;
  tu_check(run2(p, in, ai, ac, msg, sizeof msg, what) == SPC_OK, "%s: %s", what, msg);
}

/* ELL: the widest row and every row's width, against plain C. */
static void check_ell(const fctx *F, const dset *d, int pass) {
  static const char *const q1 = "select [] -> max(k) as width", *const q2 = "select [i] -> max(k) as w, count(j) as len";
  const jfn *p1 = plan_fn(F, d, q1, pass), *p2 = plan_fn(F, d, q2, pass);
  ck_assert(p1 && p2);
  if (pass == 0) return;
  ir_arg ai[NARGS], ac[NARGS];
  char what[300];
  snprintf(what, sizeof what, "ell on %s: '%s'", d->name, q1);
  run_plan(p1, d, ai, ac, what);
  int64_t w = 0, m = d->dims[0];
  for (int64_t i = 0; i < m; i++) w = d->rowcnt[i] > w ? d->rowcnt[i] : w;
  const int64_t *width = ai[p1->lay.first_out].data, *pr = ai[p1->lay.present_param].data;
  ck_assert_msg(width[0] == (w ? w - 1 : 0) && pr[0] == (w > 0), "%s: %lld, plain C %lld", what,
                (long long)width[0], (long long)(w ? w - 1 : 0));
  W.model += 2;
  free_outs(p1, ai, ac);
  snprintf(what, sizeof what, "ell on %s: '%s'", d->name, q2);
  run_plan(p2, d, ai, ac, what);
  ck_assert_int_eq(p2->lay.lo[0], 0);
  const int64_t *rw = ai[p2->lay.first_out].data, *len = ai[p2->lay.first_out + 1].data;
  pr = ai[p2->lay.present_param].data;
  for (int64_t i = 0; i < p2->lay.ngroups; i++) {
    int64_t c = i < m ? d->rowcnt[i] : 0;
    tu_check(rw[i] == (c ? c - 1 : 0) && len[i] == c && pr[i] == (c > 0),
             "%s: row %lld: width %lld, length %lld, present %lld; plain C %lld entries", what,
             (long long)i, (long long)rw[i], (long long)len[i], (long long)pr[i], (long long)c);
  }
  W.model += 3 * p2->lay.ngroups;
  free_outs(p2, ai, ac);
}

/* ---- one format on one data set ----------------------------------------------- */

static void check_pair(fctx *F, const dset *d, int pass) {
  char key[300], types[SPC_MAX_ORDER + 1], what[300], msg[600];
  types_key(d, types, sizeof types);
  snprintf(key, sizeof key, "remap %s %d %s", F->fmt->name, F->order, types);
  const jfn *jr = jget(key), *jq = NULL;
  if (!jr) jr = jput(key, build_remap(F, d));
  if (F->fmt->nrequires) {
    snprintf(key, sizeof key, "requires %s %s", F->fmt->name, types);
    if (!(jq = jget(key))) jq = jput(key, build_requires(F, d));
  }
  const jfn *lq[SPC_MAX_ORDER][SPC_SPEC_MAX] = {{0}}, *pq[SPC_MAX_ORDER][SPC_SPEC_MAX] = {{0}};
  char text[SPC_MAX_ORDER][SPC_SPEC_MAX][400];
  for (int l = 0; l < F->L; l++)
    for (int k = 0; k < F->lv[l]->lf->nqueries; k++) {
      snprintf(key, sizeof key, "level %s query %d", F->lv[l]->lf->name, k);
      jfn *j = jget(key);
      if (!j) {
        spc_query *q = NULL;
        bool per_parent = false;
        ir_func *f = build_levelq(F->lv[l]->lf, k, &q, &per_parent);
        j = jput(key, f);
        j->q = q;
        j->per_parent = per_parent;
      }
      lq[l][k] = j;
      query_text(F, l, j, text[l][k], sizeof text[l][k]);
      pq[l][k] = plan_fn(F, d, text[l][k], pass);
      W.planskip += pass && !pq[l][k];
    }
  if (!strcmp(F->fmt->name, "ell")) check_ell(F, d, pass);
  if (pass == 0) return;
  F->runs++;
  ir_arg in[NARGS], ai[NARGS], ac[NARGS];
  memset(in, 0, sizeof in);
  for (int l = 0; l < d->order; l++) in[l] = (ir_arg){.data = (void *)d->crd[l], .len = d->n};
  in[d->order].s.i64 = d->n;
  if (jq) {
    snprintf(what, sizeof what, "%s on %s: requires", F->fmt->name, d->name);
    spc_status st = run2(jq, in, ai, ac, msg, sizeof msg, what);
    check_requires(F, d, st, msg);
  }
  snprintf(what, sizeof what, "%s on %s: remapping", F->fmt->name, d->name);
  tu_check(run2(jr, in, ai, ac, msg, sizeof msg, what) == SPC_OK, "%s: %s", what, msg);
  check_remap(F, d, ai);
  lvdata V;
  level_order(F, d, ai, &V);
  free_outs(jr, ai, ac);
  for (int l = 0; l < F->L; l++)
    for (int k = 0; k < F->lv[l]->lf->nqueries; k++) {
      ir_arg ei[NARGS], ec[NARGS];
      ir_arg pi[NARGS], pc[NARGS];
      int64_t *pp = NULL;
      run_levelq(F, d, &V, l, k, lq[l][k], ei, ec, &pp);
      F->qruns[l][k]++;
      if (pq[l][k]) {
        snprintf(what, sizeof what, "%s on %s: '%s'", F->fmt->name, d->name, text[l][k]);
        run_plan(pq[l][k], d, pi, pc, what);
        cross_check(F, d, &V, l, lq[l][k], ei, pp, pq[l][k], pi, text[l][k]);
        free_outs(pq[l][k], pi, pc);
      }
      free_outs(lq[l][k], ei, ec);
      free(pp);
    }
  free_lvdata(&V);
}

/* ---- the test ----------------------------------------------------------------- */

START_TEST(test_specs_diff_all) {
  spc_specs *S = NULL;
  spc_error e;
  memset(&W, 0, sizeof W);
  load_sets();
  for (int k = 0; k < W.nd; k++)
    if (W.d[k].order == 2) matrix_stats(&W.d[k]);
  tu_assert_ok(spc_specs_builtin(&S, &e), &e);
  int nf = 0;
  fctx *F = calloc((size_t)spc_specs_nformats(S) * SPC_MAX_ORDER + 1, sizeof *F);
  for (int k = 0; k < spc_specs_nformats(S); k++) {
    const spc_format_spec *fmt = spc_specs_format_at(S, k);
    for (int order = 1; order <= SPC_MAX_ORDER; order++) {
      if (fmt->order && fmt->order != order) continue;
      bool any = false;
      for (int s = 0; s < W.nd; s++) any |= W.d[s].order == order;
      if (!any) continue;
      fctx *c = &F[nf++];
      c->fmt = fmt;
      c->order = order;
      c->nparams = fmt->nparams;
      for (int p = 0; p < fmt->nparams; p++) c->ps[p] = (spc_remap_param){fmt->pnames[p], fmt->pdefaults[p]};
      tu_assert_ok(fmt->remap.text ? spc_remap_parse(&fmt->remap.at, order, c->ps, c->nparams, &c->r, &e)
                                   : spc_remap_identity(order, &c->r, &e), &e);
      c->L = c->r->order_out;
      for (int l = 0; l < c->L; l++) c->lv[l] = &fmt->lv[l < fmt->nlevels ? l : fmt->nlevels - 1];
      if (!fmt->order && c->L < fmt->nlevels - 1)
        for (int l = 0; l < c->L; l++) c->lv[l] = &fmt->lv[l];
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) compile_all();
    for (int c = 0; c < nf; c++)
      for (int s = 0; s < W.nd; s++)
        if (W.d[s].order == F[c].order) check_pair(&F[c], &W.d[s], pass);
  }
  /* every format ran, every level query of every format ran */
  int nq = 0;
  for (int k = 0; k < spc_specs_nformats(S); k++) {
    const spc_format_spec *fmt = spc_specs_format_at(S, k);
    int64_t runs = 0;
    for (int c = 0; c < nf; c++) runs += F[c].fmt == fmt ? F[c].runs : 0;
    ck_assert_msg(runs > 0, "format %s was never run", fmt->name);
  }
  for (int c = 0; c < nf; c++)
    for (int l = 0; l < F[c].L; l++)
      for (int k = 0; k < F[c].lv[l]->lf->nqueries; k++) {
        ck_assert_msg(F[c].qruns[l][k] == F[c].runs, "%s level %d query %d ran %lld times of %lld",
                      F[c].fmt->name, l, k, (long long)F[c].qruns[l][k], (long long)F[c].runs);
        nq++;
      }
  ck_assert_int_gt(nq, 10);
  if (tu_data_dir()) ck_assert_int_gt(W.nd, 80);
  int ncomp = 0;
  for (int k = 0; k < W.nfn; k++) ncomp += W.fn[k].fn != NULL;
  printf("specs_diff: %d data sets, %d format/order pairs, %d level queries, %d functions "
         "(%d compiled), %lld runs; %lld values interpreter = compiled, %lld against plain C, "
         "%lld query text = level query; %lld query texts too large to plan\n",
         W.nd, nf, nq, W.nfn, ncomp, (long long)W.runs, (long long)W.same, (long long)W.model,
         (long long)W.cross, (long long)W.planskip);
  for (int c = 0; c < nf; c++) spc_remap_free(&F[c].r);
  free(F);
  for (int k = 0; k < W.nfn; k++) {
    ir_func_free(&W.fn[k].f);
    spc_query_free(&W.fn[k].q);
    spc_remap_free(&W.fn[k].r);
    free(W.fn[k].key);
  }
  free(W.fn);
  for (int p = 0; p < NPART; p++)
    if (W.so[p]) dlclose(W.so[p]);
  if (W.dir) tu_rmtree(W.dir);
  free(W.dir);
  free_sets();
  spc_specs_free(&S);
}
END_TEST

Suite *suite_specs_diff(void) {
  Suite *s = suite_create("specs_diff");
  TCase *tc = tcase_create("shared");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_specs_diff_all);
  suite_add_tcase(s, tc);
  return s;
}
