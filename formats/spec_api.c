/* spec_api.c -- the public entry points for format specs (spconv.h). */
#include "spec.h"
#include <stdio.h>

spc_status spc_spec_check_file(const char *path, char *name, size_t name_len,
                               spc_error *e) {
  spc_specs *r = NULL;
  const char *n = NULL;
  if (name && name_len) name[0] = 0;
  spc_status s = spc_specs_builtin(&r, e);
  if (!s) s = spc_specs_add_file(r, path, &n, e);
  if (!s && name && name_len) snprintf(name, name_len, "%s", n);
  spc_specs_free(&r);
  return s;
}
