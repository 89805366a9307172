/* spc_error.c -- error records and names of enumerations. */
#include "spc_impl.h"
#include <stdio.h>
#include <string.h>

spc_status spc_err(spc_error *e, spc_status code, const char *file,
                   int64_t line, int64_t col, const char *fmt, ...) {
  if (!e) return code;
  e->code = code;
  e->line = line;
  e->col = col;
  e->key[0] = 0;
  if (file) snprintf(e->file, sizeof e->file, "%s", file);
  else e->file[0] = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return code;
}

/* The fields, not the struct's 1.2 KB: a small conversion clears a dozen
 * scratch errors (2% of its time as a memset). */
void spc_error_clear(spc_error *e) {
  if (!e) return;
  e->code = SPC_OK;
  e->file[0] = 0;
  e->line = 0;
  e->col = 0;
  e->key[0] = 0;
  e->msg[0] = 0;
}

const char *spc_error_string(const spc_error *e, char *buf, size_t n) {
  if (!n) return buf;
  if (!e) {
    snprintf(buf, n, "no error");
    return buf;
  }
  size_t k = 0;
#define PUT(...) \
  k += (size_t)snprintf(buf + (k < n ? k : n - 1), k < n ? n - k : 1, __VA_ARGS__)
  if (e->file[0]) PUT("%s:", e->file);
  if (e->line > 0) PUT("%lld:", (long long)e->line);
  if (e->line > 0 && e->col > 0) PUT("%lld:", (long long)e->col);
  if (e->key[0]) PUT(" %s:", e->key);
  if (k) PUT(" ");
  PUT("%s", e->msg[0] ? e->msg : spc_status_name(e->code));
#undef PUT
  return buf;
}

const char *spc_status_name(spc_status s) {
  switch (s) {
  case SPC_OK: return "ok";
  case SPC_NOT_HANDLED: return "not handled";
  case SPC_ERR_INPUT: return "invalid input";
  case SPC_ERR_SPEC: return "invalid spec";
  case SPC_ERR_UNSUPPORTED: return "unsupported";
  case SPC_ERR_NOMEM: return "out of memory";
  case SPC_ERR_IO: return "i/o error";
  case SPC_ERR_OVERFLOW: return "overflow";
  case SPC_ERR_ARG: return "invalid argument";
  case SPC_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

static const char *const vtype_names[] = {"pattern", "int64", "uint64",
                                          "float32", "float64", "complex128"};

const char *spc_vtype_name(spc_vtype t) {
  return (t >= SPC_PATTERN && t <= SPC_C128) ? vtype_names[t] : "auto";
}

int spc_vtype_parse(const char *name, spc_vtype *t) {
  static const struct { const char *n; spc_vtype t; } alias[] = {
      {"pattern", SPC_PATTERN}, {"int64", SPC_I64},   {"i64", SPC_I64},
      {"integer", SPC_I64},     {"uint64", SPC_U64},  {"u64", SPC_U64},
      {"float32", SPC_F32},     {"f32", SPC_F32},     {"float", SPC_F32},
      {"float64", SPC_F64},     {"f64", SPC_F64},     {"double", SPC_F64},
      {"real", SPC_F64},        {"complex128", SPC_C128}, {"c128", SPC_C128},
      {"complex", SPC_C128},    {"auto", SPC_VTYPE_AUTO}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (!strcmp(name, alias[i].n)) {
      *t = alias[i].t;
      return 0;
    }
  return -1;
}

size_t spc_vtype_size(spc_vtype t) {
  switch (t) {
  case SPC_I64: case SPC_U64: case SPC_F64: return 8;
  case SPC_F32: return 4;
  case SPC_C128: return 16;
  default: return 0;
  }
}

const char *spc_symmetry_name(spc_symmetry s) {
  static const char *const n[] = {"general", "symmetric", "skew-symmetric",
                                  "hermitian"};
  return (s >= SPC_GENERAL && s <= SPC_HERMITIAN) ? n[s] : "?";
}

static const char *const dup_names[] = {"sum", "first", "last",
                                        "min", "max", "error"};

const char *spc_dup_name(spc_dup d) {
  return (d >= SPC_DUP_SUM && d <= SPC_DUP_ERROR) ? dup_names[d] : "?";
}

int spc_dup_parse(const char *name, spc_dup *d) {
  for (int i = 0; i <= SPC_DUP_ERROR; i++)
    if (!strcmp(name, dup_names[i])) {
      *d = (spc_dup)i;
      return 0;
    }
  return -1;
}
