/* assemble_api.c -- the public face of the conversion engine (spconv.h):
 * spc_convert_to by format name or YAML path, the list of built-in
 * formats, and the table that lets the generic tensor operations read a
 * converted tensor (spc_tensor_ext). */
#include "assemble_internal.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- the built-in registry, built once -------------------------------------- */

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static spc_specs *builtin;
static spc_status builtin_status;
static spc_error builtin_err;

static void build_builtin(void) {
  builtin_status = spc_specs_builtin(&builtin, &builtin_err);
}

spc_status asm_builtin_specs(const spc_specs **out, spc_error *e) {
  pthread_once(&builtin_once, build_builtin);
  *out = builtin;
  if (builtin_status && e) *e = builtin_err;
  return builtin_status;
}

/* ---- the extension table of converted tensors -------------------------------- */

static void conv_destroy(spc_tensor *t) {
  conv_info *I = &((conv_tensor *)(void *)t)->info;
  spc_specs_free(&I->own);
}

static spc_status conv_to_coo(const spc_tensor *t, spc_tensor **out,
                              spc_error *e) {
  return spc_convert_to_coo_ex(t, NULL, out, e);
}

static const char *conv_level_name(const spc_tensor *t, int l) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  return I->lv[l]->lf->name;
}

/* new_result gives every level a native table when each stores one
 * canonical index as it is (CSR, CSC, COO, DCSR, DCSC, CSF, a user's
 * spec of such levels); a format whose zeros are padding (fill: zero)
 * has to_coo drop them, which a walk would not */
static bool conv_walk(const spc_tensor *t) {
  const conv_info *I = &((const conv_tensor *)(const void *)t)->info;
  if (I->fmt->fill_zero || t->nlevels < 1) return false;
  for (int l = 0; l < t->nlevels; l++)
    if (!t->lv[l].fmt || t->lv[l].dim < 0 || t->lv[l].dim >= t->order) return false;
  return true;
}

const spc_tensor_ext asm_conv_ext = {conv_destroy, conv_to_coo,     conv_level_name,
                                     conv_walk,    asm_src_top_range, asm_read_part};

/* ---- formats by name ------------------------------------------------------------ */

int spc_format_count(void) {
  const spc_specs *r;
  return asm_builtin_specs(&r, NULL) ? 0 : spc_specs_nformats(r);
}

static const spc_format_spec *format_at(int k) {
  const spc_specs *r;
  if (asm_builtin_specs(&r, NULL) || k < 0 || k >= spc_specs_nformats(r)) return NULL;
  return spc_specs_format_at(r, k);
}

const char *spc_format_name(int k) {
  const spc_format_spec *f = format_at(k);
  return f ? f->name : NULL;
}
int spc_format_order(int k) {
  const spc_format_spec *f = format_at(k);
  return f ? f->order : -1;
}
const char *spc_format_description(int k) {
  const spc_format_spec *f = format_at(k);
  return f ? (f->description ? f->description : "") : NULL;
}

const char *spc_format_yaml(const char *name) {
  const spc_specs *r;
  if (!name || asm_builtin_specs(&r, NULL)) return NULL;
  if (!strncmp(name, "level:", 6)) { /* a level format of the same name as a tensor format */
    const spc_level_spec *l = spc_specs_level(r, name + 6);
    return l ? l->yaml : NULL;
  }
  const spc_format_spec *f = spc_specs_format(r, name);
  if (f) return f->yaml;
  const spc_level_spec *l = spc_specs_level(r, name);
  return l ? l->yaml : NULL;
}

void spc_convert_opts_init(spc_convert_opts *o) {
  memset(o, 0, sizeof *o);
  o->dup = SPC_DUP_SUM;
}

static bool is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && !strcasecmp(s + n - 5, ".yaml")) ||
         (n > 4 && !strcasecmp(s + n - 4, ".yml"));
}

spc_status asm_resolve_format(const char *format, const spc_convert_opts *o,
                              const spc_specs **reg, spc_specs **own,
                              const spc_format_spec **fmt, spc_error *e) {
  *own = NULL;
  *fmt = NULL;
  spc_status s = asm_builtin_specs(reg, e);
  if (s) return s;
  if (!format || !*format)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no target format given");
  if (!is_path(format) && !(o && o->nspec_files)) {
    if (!(*fmt = spc_specs_format(*reg, format))) {
      const char *near = spc_specs_format_near(*reg, format);
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "unknown format '%s' (%s%s%ssee `spconv formats`; a YAML spec "
                     "is given by its path)", format, near ? "did you mean '" : "",
                     near ? near : "", near ? "'? " : "");
    }
    return SPC_OK;
  }
  /* a user's spec: a registry of its own, owned by the result */
  if ((s = spc_specs_builtin(own, e))) return s;
  for (int i = 0; o && i < o->nspec_files && !s; i++)
    s = spc_specs_add_file(*own, o->spec_files[i], NULL, e);
  const char *name = format;
  if (!s && is_path(format)) s = spc_specs_add_file(*own, format, &name, e);
  if (!s && !(*fmt = spc_specs_format(*own, name)))
    s = spc_err(e, SPC_ERR_ARG, format, 0, 0,
                is_path(format) ? "not a tensor format (a level format?)"
                                : "unknown format '%s'", format);
  if (s) spc_specs_free(own);
  *reg = *own;
  return s;
}

int asm_opts_params(const spc_convert_opts *o, spc_remap_param *ps) {
  int np = !o ? 0 : o->nparams < SPC_MAX_PARAMS ? o->nparams : SPC_MAX_PARAMS;
  for (int i = 0; i < np; i++) ps[i] = (spc_remap_param){o->param_names[i], o->param_values[i]};
  return np;
}

/* A converted result owns the registry its (user) spec lives in. */
static spc_status own_result(spc_status s, spc_tensor **out, spc_specs *own) {
  if (!s) ((conv_tensor *)(void *)*out)->info.own = own;
  else spc_specs_free(&own);
  return s;
}

/* A result in a user's level (not a built-in one) must read back as what
 * was written: its components, read through the level's own functions,
 * convert to the same arrays (the check every .bsp.h5 read makes).  A
 * level whose write and read functions disagree (positions yielded where
 * begin/end do not look) gave a result whose file no command could open,
 * and a Matrix Market file of other entries; now refused, naming it. */
static spc_status user_levels_read_back(const spc_format_spec *fmt, spc_tensor **out, spc_error *e) {
  const spc_level_spec *user = NULL;
  for (int l = 0; l < fmt->nlevels && !user; l++)
    if (fmt->lv[l].lf && !spc_level_spec_builtin(fmt->lv[l].lf)) user = fmt->lv[l].lf;
  if (!user) return SPC_OK;
  spc_tensor *coo = NULL;
  spc_status s = spc_tensor_to_coo(*out, 0, &coo, e);
  if (!s) s = spc_conv_check_consistent(*out, coo, e);
  spc_tensor_free(&coo);
  if (s && s != SPC_ERR_NOMEM) {
    char m[400];
    snprintf(m, sizeof m, "%.399s", e ? e->msg : "");
    s = spc_err(e, SPC_ERR_SPEC, user->file, 0, 0,
                "level %s (of format %s) does not read back what it wrote: %s", user->name, fmt->name, m);
  }
  if (s) spc_tensor_free(out);
  return s;
}

/* Convert (bytes NULL) or measure: the format resolved, the options'
 * parameters passed on. */
static spc_status convert_or_size_1(const spc_tensor *src, spc_tensor *eat, const char *format,
                                    const spc_convert_opts *o, spc_tensor **out, int64_t *bytes,
                                    spc_error *e) {
  const spc_specs *reg;
  spc_specs *own;
  const spc_format_spec *fmt;
  spc_status s = asm_resolve_format(format, o, &reg, &own, &fmt, e);
  if (s) return s;
  spc_remap_param ps[SPC_MAX_PARAMS];
  int np = asm_opts_params(o, ps);
  if (bytes) {
    s = asm_convert_size(src, reg, fmt, ps, np, o->dup, o, bytes, e);
    spc_specs_free(&own);
    return s;
  }
  s = eat ? asm_convert_eat(eat, reg, fmt, ps, np, o->dup, o, out, e)
          : spc_convert_ex(src, reg, fmt, ps, np, o->dup, o, out, e);
  s = own_result(s, out, own);
  if (!s && !o->no_read_back) s = user_levels_read_back(fmt, out, e);
  return s;
}

/* A pattern summed (the default) whose coordinates repeat converts as
 * int64 counts, as SciPy reads it (every component 1, duplicates summed):
 * converted first with duplicates refused, so a pattern without them stays
 * a pattern at no cost, and only a refused duplicate converts the counts. */
static spc_status convert_or_size(const spc_tensor *src, const char *format,
                                  const spc_convert_opts *o, spc_tensor **out, int64_t *bytes,
                                  spc_error *e) {
  spc_convert_opts dflt;
  if (!src) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no tensor");
  if (!o) {
    spc_convert_opts_init(&dflt);
    o = &dflt;
  }
  if (spc_tensor_vtype(src) != SPC_PATTERN || o->dup != SPC_DUP_SUM)
    return convert_or_size_1(src, NULL, format, o, out, bytes, e);
  spc_convert_opts o1 = *o;
  o1.dup = SPC_DUP_ERROR;
  spc_error le;
  spc_error_clear(&le);
  spc_status s = convert_or_size_1(src, NULL, format, &o1, out, bytes, &le);
  if (!spc_err_is_dup(s, &le)) {
    if (s && e) *e = le;
    return s;
  }
  spc_tensor *ones = NULL;
  if ((s = spc_tensor_pattern_counts(src, &ones, e))) return s;
  s = convert_or_size_1(ones, NULL, format, o, out, bytes, e);
  spc_tensor_free(&ones);
  return s;
}

spc_status spc_convert_to(const spc_tensor *src, const char *format,
                          const spc_convert_opts *o, spc_tensor **out,
                          spc_error *e) {
  if (!out) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no output");
  *out = NULL;
  return convert_or_size(src, format, o, out, NULL, e);
}

spc_status asm_convert_to_eat(spc_tensor **src, const char *format,
                              const spc_convert_opts *o, spc_tensor **out, spc_error *e) {
  spc_convert_opts dflt;
  spc_status s;
  if (!out || !src || !*src) {
    if (src) spc_tensor_free(src);
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no tensor or no output");
  }
  *out = NULL;
  if (!o) {
    spc_convert_opts_init(&dflt);
    o = &dflt;
  }
  /* a pattern summed may convert twice (refused duplicates, then counts):
   * from the source kept whole */
  if (spc_tensor_vtype(*src) == SPC_PATTERN && o->dup == SPC_DUP_SUM)
    s = convert_or_size(*src, format, o, out, NULL, e);
  else
    s = convert_or_size_1(*src, *src, format, o, out, NULL, e);
  spc_tensor_free(src);
  return s;
}

spc_status asm_convert_stream_to(spc_tensor *shell, asm_stream *S, const char *format,
                                 const spc_convert_opts *o, spc_tensor **out, spc_error *e) {
  spc_convert_opts dflt;
  if (!out || !shell || !S || !S->w) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no stream or no output");
  *out = NULL;
  if (!o) {
    spc_convert_opts_init(&dflt);
    o = &dflt;
  }
  if (spc_tensor_vtype(shell) == SPC_PATTERN && o->dup == SPC_DUP_SUM) return SPC_NOT_HANDLED;
  const spc_specs *reg;
  spc_specs *own;
  const spc_format_spec *fmt;
  spc_status s = asm_resolve_format(format, o, &reg, &own, &fmt, e);
  if (s) return s;
  spc_remap_param ps[SPC_MAX_PARAMS];
  int np = asm_opts_params(o, ps);
  s = asm_convert_stream(shell, S, reg, fmt, ps, np, o->dup, o, out, e);
  return own_result(s, out, own);
}

/* Exact bytes in FORMAT, from the target levels' queries and init
 * functions without placing the components (asm_convert_size): exact for
 * any spec, user specs included. */
spc_status spc_convert_size(const spc_tensor *src, const char *format,
                            const spc_convert_opts *o, int64_t *bytes,
                            spc_error *e) {
  if (!bytes) return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no output");
  *bytes = 0;
  return convert_or_size(src, format, o, NULL, bytes, e);
}

/* The remapping of fmt for a tensor of this order: the spec's, or, for a
 * format without one, the mode order `modes` (NULL: identity) written as
 * "(x0, x1, ...) -> (x<m0>, x<m1>, ...)" into buf (which must outlive *r:
 * the remapping borrows its text). */
/* The parsed remappings, by their text (with its file and place, named in
 * messages), order and parameter values -- of any registry's formats: a
 * parse costs a few microseconds (about a sixth of a small SpGEMM's time,
 * a seventh of a small conversion's), paid on every conversion before.
 * The remapping borrows its text, so the cache parses its own copy: a
 * user's registry may be freed while the entry lives.  Read-only once
 * parsed, so shared between threads; kept for the process's life (once
 * full, later remappings are parsed each time). */
enum { REMAP_CACHE = 64 };
static struct rcache {
  char *text, *file; /* the cache's copies */
  int64_t line, col, indent;
  int order, nps;
  spc_remap_param ps[SPC_MAX_PARAMS];
  spc_remap *r;
} rcache[REMAP_CACHE];
static int nrcache;
static long nparsed; /* under rcache_mu */
static pthread_mutex_t rcache_mu = PTHREAD_MUTEX_INITIALIZER;

long asm_remap_parses(void) {
  pthread_mutex_lock(&rcache_mu);
  long n = nparsed;
  pthread_mutex_unlock(&rcache_mu);
  return n;
}

static bool str_same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool rcache_hit(const struct rcache *c, const lang_src *at, int order,
                       const spc_remap_param *ps, int nps) {
  if (c->order != order || c->nps != nps || c->line != at->line || c->col != at->col ||
      c->indent != at->indent || !str_same(c->text, at->text) || !str_same(c->file, at->file))
    return false;
  for (int k = 0; k < nps; k++)
    if (c->ps[k].value != ps[k].value || strcmp(c->ps[k].name, ps[k].name)) return false;
  return true;
}

static void rcache_clear(struct rcache *c) {
  spc_free(c->text), spc_free(c->file);
  for (int k = 0; k < c->nps; k++) spc_free((void *)c->ps[k].name);
  memset(c, 0, sizeof *c);
}

static spc_status remap_cached(const spc_format_spec *fmt, int order, const spc_remap_param *ps,
                               int nps, spc_remap **r, spc_error *e) {
  const lang_src *at = &fmt->remap.at;
  if (nps > SPC_MAX_PARAMS || !at->text) return spc_remap_parse(at, order, ps, nps, r, e);
  pthread_mutex_lock(&rcache_mu);
  for (int k = 0; k < nrcache; k++)
    if (rcache_hit(&rcache[k], at, order, ps, nps)) {
      *r = rcache[k].r;
      pthread_mutex_unlock(&rcache_mu);
      return SPC_OK;
    }
  spc_status s;
  struct rcache *c = nrcache < REMAP_CACHE ? &rcache[nrcache] : NULL;
  /* an unused entry is all zero: what a failed copy leaves, rcache_clear frees */
  bool ok = c && (c->text = spc_strdup(at->text)) && (!at->file || (c->file = spc_strdup(at->file)));
  if (c) c->nps = nps;
  for (int k = 0; ok && k < nps; k++)
    ok = (c->ps[k].name = spc_strdup(ps[k].name)) != NULL, c->ps[k].value = ps[k].value;
  if (ok) {
    lang_src src = *at;
    src.text = c->text, src.file = c->file;
    c->line = at->line, c->col = at->col, c->indent = at->indent, c->order = order;
    s = spc_remap_parse(&src, order, ps, nps, r, e);
    nparsed++;
    if (!s) {
      c->r = *r;
      (*r)->shared = true;
      nrcache++;
    } else {
      rcache_clear(c);
    }
  } else { /* full, or no memory for the copies: parsed uncached */
    if (c) rcache_clear(c);
    s = spc_remap_parse(at, order, ps, nps, r, e);
    nparsed++;
  }
  pthread_mutex_unlock(&rcache_mu);
  return s;
}

spc_status asm_remap(const spc_format_spec *fmt, int order, const spc_remap_param *ps,
                     int nps, const int *modes, int nmodes, char *buf, size_t nbuf,
                     spc_remap **r, spc_error *e) {
  if (!nmodes)
    return fmt->remap.text ? remap_cached(fmt, order, ps, nps, r, e)
                           : spc_remap_identity(order, r, e);
  if (fmt->remap.text)
    return spc_err(e, SPC_ERR_UNSUPPORTED, NULL, 0, 0,
                   "cannot apply a mode order to format %s: it has its own remapping", fmt->name);
  if (nmodes != order)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                   "--modes lists %d modes for a tensor of order %d", nmodes, order);
  unsigned seen = 0;
  for (int k = 0; k < nmodes; k++) {
    if (modes[k] < 0 || modes[k] >= order || (seen >> modes[k] & 1))
      return spc_err(e, SPC_ERR_ARG, NULL, 0, 0,
                     "--modes must be a permutation of 0 .. %d", order - 1);
    seen |= 1u << modes[k];
  }
  size_t k = (size_t)snprintf(buf, nbuf, "(");
  for (int d = 0; d < order && k < nbuf; d++) k += (size_t)snprintf(buf + k, nbuf - k, "%sx%d", d ? ", " : "", d);
  if (k < nbuf) k += (size_t)snprintf(buf + k, nbuf - k, ") -> (");
  for (int d = 0; d < order && k < nbuf; d++)
    k += (size_t)snprintf(buf + k, nbuf - k, "%sx%d", d ? ", " : "", modes[d]);
  if (k < nbuf) snprintf(buf + k, nbuf - k, ")");
  lang_src src = {.text = buf, .file = "--modes", .line = 1, .col = 1};
  return spc_remap_parse(&src, order, ps, nps, r, e);
}
