/* cnt_json.c -- JSON for the containers' descriptors: a growing output
 * buffer and a small DOM parser (types in cnt_internal.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cnt_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * JSON: a growing output buffer and a small DOM parser
 * ====================================================================== */

void spc_cnt_jb_add(jb *b, const char *fmt, ...) {
  while (!b->oom) {
    size_t room = b->cap - b->n;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) break;
    if (b->s && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->n + (size_t)k + 1) nc *= 2;
    char *p = spc_realloc(b->s, nc);
    if (!p) break;
    b->s = p;
    b->cap = nc;
  }
  b->oom = true;
}

/* A JSON string literal. */
void spc_cnt_jb_str(jb *b, const char *s) {
  spc_cnt_jb_add(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') spc_cnt_jb_add(b, "\\%c", c);
    else if (c < 0x20) spc_cnt_jb_add(b, "\\u%04x", c);
    else spc_cnt_jb_add(b, "%c", c);
  }
  spc_cnt_jb_add(b, "\"");
}

typedef struct jp {
  const char *p, *end;
  int depth;
  bool oom;
} jp;

void spc_cnt_jv_free(jv *v) {
  while (v) {
    jv *n = v->next;
    spc_cnt_jv_free(v->kid);
    spc_free(v->s);
    spc_free(v->key);
    spc_free(v);
    v = n;
  }
}

static void jws(jp *p) {
  while (p->p < p->end && (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r'))
    p->p++;
}

static bool jat(jp *p, char c) { return p->p < p->end && *p->p == c; }

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool j4hex(jp *p, unsigned *u) {
  *u = 0;
  for (int i = 0; i < 4; i++) {
    int h = p->p < p->end ? hexval(*p->p) : -1;
    if (h < 0) return false;
    *u = *u << 4 | (unsigned)h;
    p->p++;
  }
  return true;
}

static void jb_utf8(jb *b, unsigned u) {
  if (u < 0x80) spc_cnt_jb_add(b, "%c", (char)u);
  else if (u < 0x800) spc_cnt_jb_add(b, "%c%c", (char)(0xC0 | u >> 6), (char)(0x80 | (u & 63)));
  else if (u < 0x10000)
    spc_cnt_jb_add(b, "%c%c%c", (char)(0xE0 | u >> 12), (char)(0x80 | (u >> 6 & 63)),
           (char)(0x80 | (u & 63)));
  else
    spc_cnt_jb_add(b, "%c%c%c%c", (char)(0xF0 | u >> 18), (char)(0x80 | (u >> 12 & 63)),
           (char)(0x80 | (u >> 6 & 63)), (char)(0x80 | (u & 63)));
}

/* A string at p (on its opening quote); NULL when malformed or no memory. */
static char *jstr(jp *p) {
  jb b = {0};
  p->p++;
  spc_cnt_jb_add(&b, "%s", "");
  while (!b.oom && p->p < p->end && *p->p != '"') {
    unsigned char c = (unsigned char)*p->p++;
    unsigned u, lo;
    if (c < 0x20) goto bad;
    if (c != '\\') {
      spc_cnt_jb_add(&b, "%c", c);
      continue;
    }
    if (p->p >= p->end) goto bad;
    switch (c = (unsigned char)*p->p++) {
    case '"': case '\\': case '/': spc_cnt_jb_add(&b, "%c", c); break;
    case 'b': spc_cnt_jb_add(&b, "\b"); break;
    case 'f': spc_cnt_jb_add(&b, "\f"); break;
    case 'n': spc_cnt_jb_add(&b, "\n"); break;
    case 'r': spc_cnt_jb_add(&b, "\r"); break;
    case 't': spc_cnt_jb_add(&b, "\t"); break;
    case 'u':
      if (!j4hex(p, &u) || !u) goto bad;
      if (u >= 0xD800 && u < 0xDC00 && p->end - p->p >= 6 && p->p[0] == '\\' &&
          p->p[1] == 'u') {
        p->p += 2;
        if (!j4hex(p, &lo) || lo < 0xDC00 || lo >= 0xE000) goto bad;
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      }
      jb_utf8(&b, u);
      break;
    default: goto bad;
    }
  }
  if (b.oom || !jat(p, '"')) goto bad;
  p->p++;
  return b.s;
bad:
  p->oom |= b.oom;
  spc_free(b.s);
  return NULL;
}

static bool jword(jp *p, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(p->end - p->p) < n || memcmp(p->p, w, n)) return false;
  p->p += n;
  return true;
}

static bool jnum(jp *p, jv *v) {
  const char *s = p->p;
  bool neg = jat(p, '-');
  uint64_t m = 0;
  v->isint = true;
  if (neg) p->p++;
  if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
  while (p->p < p->end && *p->p >= '0' && *p->p <= '9') {
    unsigned dgt = (unsigned)(*p->p++ - '0');
    if (m > (UINT64_MAX - dgt) / 10) v->isint = false;
    else m = m * 10 + dgt;
  }
  if (jat(p, '.')) {
    v->isint = false;
    p->p++;
    if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
    while (p->p < p->end && *p->p >= '0' && *p->p <= '9') p->p++;
  }
  if (jat(p, 'e') || jat(p, 'E')) {
    v->isint = false;
    p->p++;
    if (jat(p, '+') || jat(p, '-')) p->p++;
    if (!(p->p < p->end && *p->p >= '0' && *p->p <= '9')) return false;
    while (p->p < p->end && *p->p >= '0' && *p->p <= '9') p->p++;
  }
  if (v->isint && m > (uint64_t)INT64_MAX + neg) v->isint = false;
  if (v->isint) v->i = neg ? (int64_t)(0 - m) : (int64_t)m;
  v->d = strtod(s, NULL); /* the text is NUL-terminated past p->end */
  v->type = J_NUM;
  return true;
}

static jv *jval(jp *p) {
  jws(p);
  if (p->p >= p->end || p->depth >= 64) return NULL;
  jv *v = spc_calloc(1, sizeof *v);
  if (!v) {
    p->oom = true;
    return NULL;
  }
  p->depth++;
  char c = *p->p;
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    jv **tail = &v->kid;
    v->type = c == '{' ? J_OBJ : J_ARR;
    p->p++;
    jws(p);
    if (jat(p, close)) p->p++;
    else
      for (;;) {
        char *key = NULL;
        if (v->type == J_OBJ) {
          jws(p);
          if (!jat(p, '"') || !(key = jstr(p))) goto bad;
          jws(p);
          if (!jat(p, ':')) {
            spc_free(key);
            goto bad;
          }
          p->p++;
        }
        jv *k = jval(p);
        if (!k) {
          spc_free(key);
          goto bad;
        }
        k->key = key;
        *tail = k;
        tail = &k->next;
        jws(p);
        if (jat(p, ',')) {
          p->p++;
          continue;
        }
        if (!jat(p, close)) goto bad;
        p->p++;
        break;
      }
  } else if (c == '"') {
    v->type = J_STR;
    if (!(v->s = jstr(p))) goto bad;
  } else if (jword(p, "true") || jword(p, "false")) {
    v->type = J_BOOL;
    v->b = p->p[-1] == 'e' && p->p[-2] == 'u';
  } else if (jword(p, "null")) {
    v->type = J_NULL;
  } else if (!jnum(p, v)) {
    goto bad;
  }
  p->depth--;
  return v;
bad:
  spc_cnt_jv_free(v);
  return NULL;
}

/* Parse NUL-terminated text; NULL when it is not one JSON value (*oom:
 * because memory ran out). */
jv *spc_cnt_json_parse(const char *s, bool *oom) {
  jp p = {s, s + strlen(s), 0, false};
  jv *v = jval(&p);
  jws(&p);
  if (v && p.p != p.end) {
    spc_cnt_jv_free(v);
    v = NULL;
  }
  *oom = p.oom;
  return v;
}

const jv *spc_cnt_jget(const jv *o, const char *key) {
  if (!o || o->type != J_OBJ) return NULL;
  for (const jv *k = o->kid; k; k = k->next)
    if (!strcmp(k->key, key)) return k;
  return NULL;
}

const char *spc_cnt_jgets(const jv *o, const char *key) {
  const jv *v = spc_cnt_jget(o, key);
  return v && v->type == J_STR ? v->s : NULL;
}

bool spc_cnt_jgeti(const jv *o, const char *key, int64_t *x) {
  const jv *v = spc_cnt_jget(o, key);
  if (!v || v->type != J_NUM || !v->isint) return false;
  *x = v->i;
  return true;
}

int spc_cnt_jlen(const jv *a) {
  int n = 0;
  for (const jv *k = a && a->type == J_ARR ? a->kid : NULL; k; k = k->next) n++;
  return n;
}
