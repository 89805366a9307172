/* gen_demo.c -- links a converter written by `spconv gen` (no spconv
 * library needed):
 *   spconv gen --from=coo --to=csr -o coo_to_csr.c
 *   cc -O2 -o gen_demo examples/gen_demo.c coo_to_csr.c
 *   ./gen_demo
 * Converts a 3 x 4 matrix with a duplicate entry from COO to CSR. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct spconv_tensor { /* as in the generated file */
  int order;
  int64_t dims[16];
  int nlevels;
  int64_t lo[16], N[16];
  int narrays;
  int64_t *arrays[64];
  int64_t lens[64];
  void *vals;
  int64_t nvals;
} spconv_tensor;
int spconv_coo_to_csr(const spconv_tensor *in, spconv_tensor *out, char *err, size_t err_len);
void spconv_coo_to_csr_free(spconv_tensor *t);

int main(void) {
  /* COO: level 0 compressed (pos = {0, n}, crd = rows), level 1 singleton (crd = columns) */
  int64_t pos[] = {0, 5}, rows[] = {2, 0, 1, 0, 2}, cols[] = {3, 1, 0, 1, 0};
  double vals[] = {5.0, 1.0, 2.0, 0.5, 4.0}; /* (0,1) appears twice: summed */
  spconv_tensor in = {.order = 2, .dims = {3, 4}, .nlevels = 2, .lo = {0, 0}, .N = {3, 4},
                      .narrays = 3, .arrays = {pos, rows, cols}, .lens = {2, 5, 5},
                      .vals = vals, .nvals = 5};
  spconv_tensor out;
  char err[256];
  if (spconv_coo_to_csr(&in, &out, err, sizeof err)) {
    fprintf(stderr, "conversion failed: %s\n", err);
    return 1;
  }
  /* CSR: level 0 dense (no arrays), level 1 compressed: pos, crd */
  const int64_t *rp = out.arrays[0], *ci = out.arrays[1];
  const double *v = out.vals;
  for (int64_t i = 0; i < 3; i++)
    for (int64_t p = rp[i]; p < rp[i + 1]; p++)
      printf("(%lld, %lld) = %g\n", (long long)i, (long long)ci[p], v[p]);
  spconv_coo_to_csr_free(&out);
  return 0;
}
