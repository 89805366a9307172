/* spec_api.c -- the public entry points for format specs (spconv.h). */
#include "spec.h"
#include <stdio.h>

spc_status spc_spec_check_file(const char *path, char *name, size_t name_len,
                               spc_error *e) {
  return spc_spec_check_file_with(path, NULL, 0, name, name_len, e);
}

spc_status spc_spec_check_file_with(const char *path, const char *const *level_files,
                                    int nlevel_files, char *name, size_t name_len,
                                    spc_error *e) {
  spc_specs *r = NULL;
  const char *n = NULL;
  if (name && name_len) name[0] = 0;
  if (nlevel_files > 0 && !level_files)
    return spc_err(e, SPC_ERR_ARG, NULL, 0, 0, "no level files given");
  spc_status s = spc_specs_builtin(&r, e);
  for (int k = 0; k < nlevel_files && !s; k++) s = spc_specs_add_file(r, level_files[k], NULL, e);
  if (!s) s = spc_specs_add_file(r, path, &n, e);
  if (!s && name && name_len) snprintf(name, name_len, "%s", n);
  spc_specs_free(&r);
  return s;
}
