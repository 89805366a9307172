/* cmd_info.c -- `spconv info FILE`: what a file holds and how it is stored. */
#include "cli.h"
#include <stdio.h>
#include <string.h>

static const char *width(spc_itype t) { return t == SPC_IDX32 ? "int32" : "int64"; }

void cli_print_info(const char *label, const char *name, const spc_tensor *t) {
  int order = spc_tensor_order(t);
  printf("%-13s%s\n", label, name);
  printf("order:       %d\n", order);
  printf("dimensions:  ");
  for (int d = 0; d < order; d++)
    printf("%s%lld", d ? " x " : "", (long long)spc_tensor_dim(t, d));
  printf("\nstored:      %lld\n", (long long)spc_tensor_nstored(t));
  printf("value type:  %s%s\n", spc_vtype_name(spc_tensor_vtype(t)),
         spc_tensor_boolean(t) ? " (booleans 0 / 1: duplicates combine by OR)" : "");
  printf("symmetry:    %s\n", spc_symmetry_name(spc_tensor_symmetry(t)));
  printf("format:      %s\n", spc_tensor_format(t));
  printf("levels:     ");
  for (int l = 0; l < spc_tensor_nlevels(t); l++) {
    int d = spc_tensor_level_dim(t, l);
    printf(" %s%s(", l ? "| " : "", spc_tensor_level_format(t, l));
    if (d >= 0) printf("dim %d", d);
    else printf("computed");
    for (int a = 0; a < spc_tensor_level_narrays(t, l); a++) {
      const char *an = spc_tensor_level_array_name(t, l, a);
      spc_itype ty;
      int64_t len;
      if (!spc_tensor_level_array(t, l, an, NULL, &ty, &len))
        printf(", %s %s[%lld]", an, width(ty), (long long)len);
    }
    printf(")");
  }
  printf("\nbytes:       %lld\n", (long long)spc_tensor_bytes(t));
}

int cmd_info(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "info");
  if (np < 0) return EXIT_USAGE;
  if (np != 1) return cli_usage_error("info", "expected one input file");
  cli_inputs(pos, 0, 1);
  spc_read_opts r;
  cli_read_opts(&o, &r);
  spc_tensor *t = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &r, &t, &e);
  if (s) return cli_fail(s, &e);
  cli_print_info("file:", cli_name(pos[0]), t);
  spc_tensor_free(&t);
  return EXIT_OK;
}
