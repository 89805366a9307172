/* mkseed.c -- builds seed inputs for the binary-container targets:
 * `mkseed IN OUT` reads IN and writes OUT (kind from OUT's extension).
 * Exit 0 on success, 1 otherwise (the seed is then skipped). */
#include "spconv.h"
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mkseed IN OUT\n");
    return 1;
  }
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_read(argv[1], NULL, &t, &e);
  if (!s) s = spc_write(t, argv[2], NULL, &e);
  spc_tensor_free(&t);
  if (s) {
    char buf[1400];
    fprintf(stderr, "mkseed: %s\n", spc_error_string(&e, buf, sizeof buf));
  }
  return s ? 1 : 0;
}
