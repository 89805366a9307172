/* spec_registry.c -- the set of known level and tensor formats: the
 * built-in specs (embedded at build time) and those loaded from files. */
#include "spec.h"
#include "spec_yaml.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct spc_specs {
  spc_level_spec **levels;
  int nlevels, caplevels;
  spc_format_spec **formats;
  int nformats, capformats;
};

void spc_specs_free(spc_specs **p) {
  if (!p || !*p) return;
  spc_specs *r = *p;
  for (int i = 0; i < r->nlevels; i++) spc_level_spec_free(&r->levels[i]);
  for (int i = 0; i < r->nformats; i++) spc_format_spec_free(&r->formats[i]);
  spc_free(r->levels);
  spc_free(r->formats);
  spc_free(r);
  *p = NULL;
}

void spc_specs_counts(const spc_specs *r, int *nlevels, int *nformats) {
  *nlevels = r->nlevels;
  *nformats = r->nformats;
}

void spc_specs_truncate(spc_specs *r, int nlevels, int nformats) {
  while (r->nformats > nformats && r->nformats > 0) spc_format_spec_free(&r->formats[--r->nformats]);
  while (r->nlevels > nlevels && r->nlevels > 0) spc_level_spec_free(&r->levels[--r->nlevels]);
}

const spc_level_spec *spc_specs_level(const spc_specs *r, const char *name) {
  for (int i = r->nlevels - 1; i >= 0; i--)
    if (!strcmp(r->levels[i]->name, name)) return r->levels[i];
  return NULL;
}

/* Other tools' names of formats spconv ships under its own: SciPy's "bsr"
 * is bcsr, "ellpack" ell.  A format of the alias's own name comes first. */
static const char *const alias_of[][2] = {{"bsr", "bcsr"}, {"ellpack", "ell"}};

const spc_format_spec *spc_specs_format(const spc_specs *r, const char *name) {
  for (int i = r->nformats - 1; i >= 0; i--)
    if (!strcasecmp(r->formats[i]->name, name)) return r->formats[i];
  for (size_t a = 0; a < sizeof alias_of / sizeof alias_of[0]; a++)
    if (!strcasecmp(name, alias_of[a][0])) return spc_specs_format(r, alias_of[a][1]);
  return NULL;
}

/* Levenshtein distance of a and b (case ignored), capped at cap + 1. */
static int distance(const char *a, const char *b, int cap) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 63 || m > 63) return cap + 1;
  int row[64];
  for (size_t j = 0; j <= m; j++) row[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    int diag = row[0], best = row[0] = (int)i;
    for (size_t j = 1; j <= m; j++) {
      int up = row[j];
      int sub = diag + ((a[i - 1] | 32) != (b[j - 1] | 32));
      int v = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
      row[j] = v < sub ? v : sub;
      diag = up;
      if (row[j] < best) best = row[j];
    }
    if (best > cap) return cap + 1;
  }
  return row[m];
}

const char *spc_specs_format_near(const spc_specs *r, const char *name) {
  const char *best = NULL;
  int bd = 3; /* at most two edits, and fewer than the name's length */
  for (int i = 0; i < r->nformats; i++) {
    int d = distance(name, r->formats[i]->name, 2);
    if (d < bd && d < (int)strlen(name)) bd = d, best = r->formats[i]->name;
  }
  return best;
}

int spc_specs_nformats(const spc_specs *r) { return r->nformats; }
const spc_format_spec *spc_specs_format_at(const spc_specs *r, int k) { return r->formats[k]; }
int spc_specs_nlevels(const spc_specs *r) { return r->nlevels; }
const spc_level_spec *spc_specs_level_at(const spc_specs *r, int k) { return r->levels[k]; }

static bool grow(void **arr, int *cap, int n, size_t size) {
  if (n < *cap) return true;
  int nc = *cap ? *cap * 2 : 16;
  void *p = spc_realloc(*arr, (size_t)nc * size);
  if (!p) return false;
  *arr = p;
  *cap = nc;
  return true;
}

/* Two FNV-1a lanes of different seeds, each finished by a splitmix step. */
static void text_hash(uint64_t h[2], const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h[0] = (h[0] ^ b[i]) * 0x100000001b3ULL;
    h[1] = (h[1] ^ b[i]) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  }
  for (int k = 0; k < 2; k++) {
    uint64_t x = h[k] + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    h[k] = x ^ (x >> 31);
  }
}

static void spec_hash(uint64_t h[2], const char *file, const char *text, size_t len) {
  h[0] = 0xcbf29ce484222325ULL, h[1] = 0x84222325cbf29ce4ULL;
  text_hash(h, file ? file : "", file ? strlen(file) + 1 : 1);
  text_hash(h, text, len);
}

spc_status spc_specs_add(spc_specs *r, const char *file, const char *text,
                         size_t len, const char **name, spc_error *e) {
  spc_ynode *root = NULL;
  spc_status s = spc_yaml_load(file, text, len, &root, e);
  if (s) return s;
  char *copy = spc_malloc(len + 1);
  if (!copy) { s = SPC_NOMEM(e); goto done; }
  memcpy(copy, text, len);
  copy[len] = 0;
  if (spc_ymap_get(root, "level")) {
    spc_level_spec *ls = NULL;
    if (!grow((void **)&r->levels, &r->caplevels, r->nlevels, sizeof *r->levels)) s = SPC_NOMEM(e);
    else if (!(s = spc_level_spec_parse(file, root, &ls, e))) {
      ls->yaml = copy;
      copy = NULL;
      spec_hash(ls->hash, file, text, len);
      r->levels[r->nlevels++] = ls;
      if (name) *name = ls->name;
    }
  } else if (spc_ymap_get(root, "format")) {
    spc_format_spec *fs = NULL;
    if (!grow((void **)&r->formats, &r->capformats, r->nformats, sizeof *r->formats)) s = SPC_NOMEM(e);
    else if (!(s = spc_format_spec_parse(file, root, r, &fs, e))) {
      fs->yaml = copy;
      copy = NULL;
      spec_hash(fs->hash, file, text, len);
      for (int l = 0; l < fs->nlevels; l++) /* the levels it names, as found here */
        if (fs->lv[l].lf) text_hash(fs->hash, fs->lv[l].lf->hash, sizeof fs->lv[l].lf->hash);
      r->formats[r->nformats++] = fs;
      if (name) *name = fs->name;
    }
  } else {
    s = spc_yerr(e, SPC_ERR_SPEC, file, root, NULL,
                 "expected a level format (key 'level') or a tensor format (key 'format')");
  }
done:
  spc_free(copy);
  spc_ynode_free(&root);
  return s;
}

spc_status spc_specs_add_file(spc_specs *r, const char *path, const char **name,
                              spc_error *e) {
  /* a directory opens (and reads as nothing), a FIFO would wait */
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return spc_err(e, SPC_ERR_IO, path, 0, 0, "the spec is not a regular file");
  FILE *f = fopen(path, "rb");
  if (!f) return spc_err(e, SPC_ERR_IO, path, 0, 0, "cannot open the spec: %s", strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  spc_status s = SPC_OK;
  for (;;) {
    if (len + 4096 > cap) {
      char *p = spc_realloc(buf, cap = cap * 2 + 8192);
      if (!p) { s = SPC_NOMEM(e); break; }
      buf = p;
    }
    size_t k = fread(buf + len, 1, cap - len, f);
    len += k;
    if (!k) break;
    if (len > (64u << 20)) { s = spc_err(e, SPC_ERR_SPEC, path, 0, 0, "spec larger than 64 MB"); break; }
  }
  fclose(f);
  if (!s) s = spc_specs_add(r, path, buf, len, name, e);
  spc_free(buf);
  return s;
}

bool spc_level_spec_builtin(const spc_level_spec *ls) {
  if (!ls || (!ls->hash[0] && !ls->hash[1])) return false;
  for (int i = 0; i < spc_nbuiltin_specs; i++) {
    if (!strstr(spc_builtin_specs[i].file, "levels/")) continue;
    uint64_t h[2];
    spec_hash(h, spc_builtin_specs[i].file, spc_builtin_specs[i].text, strlen(spc_builtin_specs[i].text));
    if (h[0] == ls->hash[0] && h[1] == ls->hash[1]) return true;
  }
  return false;
}

spc_status spc_specs_builtin(spc_specs **out, spc_error *e) {
  spc_specs *r = spc_calloc(1, sizeof *r);
  *out = NULL;
  if (!r) return SPC_NOMEM(e);
  spc_status s = SPC_OK;
  /* levels first: the tensor formats refer to them */
  for (int pass = 0; pass < 2 && !s; pass++)
    for (int i = 0; i < spc_nbuiltin_specs && !s; i++) {
      bool is_level = strstr(spc_builtin_specs[i].file, "levels/") != NULL;
      if (is_level == (pass == 0))
        s = spc_specs_add(r, spc_builtin_specs[i].file, spc_builtin_specs[i].text,
                          strlen(spc_builtin_specs[i].text), NULL, e);
    }
  if (s) spc_specs_free(&r);
  *out = r;
  return s;
}
