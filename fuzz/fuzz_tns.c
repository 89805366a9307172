/* fuzz_tns.c -- libFuzzer target: the input as FROSTT text held in
 * memory (spc_read_text, named "fuzz.tns"; the content decides the kind),
 * read as stored and expanded.  A tensor that is read must pass
 * fuzz_check_tensor; a failure must be a clean error. */
#include "fuzz_common.h"
#include "spc_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int expand = 0; expand < 2; expand++) {
    spc_read_opts o = fuzz_read_opts(expand);
    spc_tensor *t = NULL;
    spc_error e;
    spc_error_clear(&e);
    spc_status s = spc_read_text("fuzz.tns", (const char *)data, size, &o, &t, &e);
    if (s == SPC_OK) fuzz_check_tensor(t);
    else fuzz_check_failure(s, t, &e);
    spc_tensor_free(&t);
  }
  return 0;
}
