/* fuzz_npz.c -- libFuzzer target: the input written to a file named
 * "in.npz" and read with spc_read (the content decides the kind); a
 * tensor that is read must pass fuzz_check_tensor, a failure must be a
 * clean error. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = fuzz_path("in.npz");
  fuzz_write_file(p, data, size);
  spc_read_opts o = fuzz_read_opts(0);
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_read(p, &o, &t, &e);
  if (s == SPC_OK) fuzz_check_tensor(t);
  else fuzz_check_failure(s, t, &e);
  spc_tensor_free(&t);
  return 0;
}
