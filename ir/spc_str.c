/* spc_str.c -- a growable string for printers and emitters.  An allocation
 * failure sets b->failed and keeps the text written so far; later appends
 * are ignored, so callers check once at the end. */
#include "spc_ir.h"
#include <stdio.h>
#include <string.h>

static bool reserve(spc_str *b, size_t extra) {
  if (b->failed) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      b->failed = true;
      return false;
    }
    cap *= 2;
  }
  char *s = spc_realloc(b->s, cap);
  if (!s) {
    b->failed = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void spc_str_add(spc_str *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void spc_str_addf(spc_str *b, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    spc_str_add(b, small, (size_t)n);
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void spc_str_free(spc_str *b) {
  if (!b) return;
  spc_free(b->s);
  memset(b, 0, sizeof *b);
}

uint64_t spc_name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h ^ (h >> 29);
}

uint64_t spc_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
