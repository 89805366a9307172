/* cmd_cat.c -- `spconv cat IN -o OUT`: rewrite a tensor in the file format
 * named by OUT's extension.  Entries are kept as stored unless --dup asks
 * for duplicates to be combined (or --expand for symmetric storage). */
#include "cli.h"
#include <stdio.h>

int cmd_cat(int argc, char **argv) {
  cli_opts o;
  const char *pos[1];
  int np = cli_parse(argc, argv, &o, pos, 1, "cat");
  if (np < 0) return EXIT_USAGE;
  if (np != 1 || !o.out) return cli_usage_error("cat", "expected IN -o OUT");
  if (cli_out_name("cat", o.out)) return EXIT_USAGE;
  cli_inputs(pos, 0, 1);
  spc_read_opts r;
  spc_write_opts w;
  cli_read_opts(&o, &r);
  cli_write_opts(&o, &w);
  spc_tensor *t = NULL, *c = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &r, &t, &e);
  if (!s && o.have_dup) s = cli_dup_order(&o, o.dup, pos[0], &t, NULL, &e); /* summed as SciPy sums */
  if (!s && o.have_dup) {
    s = spc_tensor_combine(t, o.dup, &c, &e);
    if (!s) {
      spc_tensor_free(&t);
      t = c;
    } else if (!e.file[0]) {
      snprintf(e.file, sizeof e.file, "%s", pos[0]);
    }
  }
  if (!s) s = cli_write(t, o.out, &w, &e);
  spc_tensor_free(&t);
  return s ? cli_fail(s, &e) : EXIT_OK;
}
