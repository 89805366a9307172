/* cmd_check_spec.c -- `spconv check-spec FILE.yaml`: validate a user's
 * format spec (YAML) and say what it defines. */
#include "cli.h"
#include <stdio.h>

int cmd_check_spec(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "check-spec");
  if (np < 0) return EXIT_USAGE;
  if (np != 1) return cli_usage_error("check-spec", "expected one YAML file");
  cli_inputs(pos, 0, 1);
  char name[128];
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_spec_check_file_with(pos[0], o.specs, o.nspecs, name, sizeof name, &e);
  if (s) return cli_fail(s, &e);
  printf("%s: ok (%s)\n", cli_name(pos[0]), name);
  return EXIT_OK;
}
