/* fuzz_spec.c -- libFuzzer target: the input as a YAML format spec (level
 * or tensor format) loaded into a registry of the built-in specs.  A spec
 * either loads or fails with SPC_ERR_SPEC/NOMEM and a message; a loaded
 * tensor format must be found again by its name. */
#include "fuzz_common.h"
#include "spec.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static spc_specs *registry(void) {
  static spc_specs *r;
  if (!r) {
    spc_error e;
    if (spc_specs_builtin(&r, &e) != SPC_OK) abort();
  }
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the built-ins loaded once; each input added to them and taken out
   * again (loading them per input made this target 40 times slower) */
  spc_specs *r = registry();
  int nl, nf;
  spc_specs_counts(r, &nl, &nf);
  spc_error e;
  const char *name = NULL;
  spc_error_clear(&e);
  spc_status s = spc_specs_add(r, "fuzz.yaml", (const char *)data, size, &name, &e);
  if (s == SPC_OK) {
    if (!name || !(spc_specs_format(r, name) || spc_specs_level(r, name))) abort();
  } else if ((s != SPC_ERR_SPEC && s != SPC_ERR_NOMEM) || e.code != s || !e.msg[0]) {
    abort();
  }
  spc_specs_truncate(r, nl, nf);
  int nl2, nf2;
  spc_specs_counts(r, &nl2, &nf2);
  if (nl2 != nl || nf2 != nf) abort();
  return 0;
}
