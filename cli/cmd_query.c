/* cmd_query.c -- `spconv query FILE QUERY`: evaluate an attribute query and
 * print a summary of each result, or every value with --all. */
#include "cli.h"
#include <inttypes.h>
#include <stdio.h>

static void print_all(const spc_query_results *r, bool nonempty) {
  int ng = spc_query_groups(r, NULL, NULL, NULL), na = spc_query_count(r);
  int64_t lo[SPC_MAX_ORDER], ext[SPC_MAX_ORDER], n = spc_query_ngroups(r);
  spc_query_groups(r, lo, ext, NULL);
  for (int64_t g = 0; g < n; g++) {
    if (nonempty && !spc_query_nonempty_group(r, 0, g)) continue;
    int64_t c[SPC_MAX_ORDER], x = g;
    for (int k = ng - 1; k >= 0; k--) {
      c[k] = lo[k] + x % ext[k];
      x /= ext[k];
    }
    for (int k = 0; k < ng; k++) printf("%s%" PRId64, k ? "," : "", c[k]);
    for (int a = 0; a < na; a++) printf("\t%" PRId64, spc_query_values(r, a)[g]);
    putchar('\n');
  }
}

/* Summary of aggregate a: groups, nonempty groups, min/max/mean over the
 * nonempty ones, and a log2 histogram of the values. */
static void print_summary(const spc_query_results *r, int a) {
  const int64_t *v = spc_query_values(r, a);
  int64_t n = spc_query_ngroups(r), ne = 0, mn = INT64_MAX, mx = INT64_MIN;
  int64_t hist[66] = {0};
  double sum = 0;
  for (int64_t g = 0; g < n; g++) {
    if (!spc_query_nonempty_group(r, a, g)) continue;
    ne++;
    sum += (double)v[g];
    if (v[g] < mn) mn = v[g];
    if (v[g] > mx) mx = v[g];
    int b = v[g] <= 0 ? 0 : 1;
    for (uint64_t u = (uint64_t)(v[g] > 0 ? v[g] : 0); u > 1; u >>= 1) b++;
    hist[b]++;
  }
  printf("%s:\n  groups:    %" PRId64 " (%" PRId64 " nonempty)\n", spc_query_name(r, a), n, ne);
  if (!ne) return;
  printf("  min:       %" PRId64 "\n  max:       %" PRId64 "\n  mean:      %.6g\n", mn, mx,
         sum / (double)ne);
  printf("  histogram:\n");
  for (int b = 0; b < 66; b++) {
    if (!hist[b]) continue;
    int64_t l = b == 0 ? INT64_MIN : (int64_t)1 << (b - 1);
    if (b == 0) printf("    %20s  %" PRId64 "\n", "<= 0", hist[b]);
    else printf("    %9" PRId64 " .. %-8" PRId64 " %" PRId64 "\n", l,
                b >= 63 ? INT64_MAX : ((int64_t)1 << b) - 1, hist[b]);
  }
}

int cmd_query(int argc, char **argv) {
  cli_opts o;
  const char *pos[2];
  int np = cli_parse(argc, argv, &o, pos, 2, "query");
  if (np < 0) return EXIT_USAGE;
  if (np != 2) return cli_usage_error("query", "expected FILE and QUERY");
  cli_inputs(pos, 0, 1);
  spc_read_opts ro;
  cli_read_opts(&o, &ro);
  spc_tensor *t = NULL;
  spc_query_results *r = NULL;
  spc_error e;
  spc_error_clear(&e);
  spc_status s = cli_read(pos[0], &ro, &t, &e);
  if (!s)
    s = spc_tensor_query(t, pos[1], o.remap, o.param_names, o.param_values,
                         o.nparams, &r, &e);
  spc_tensor_free(&t);
  if (s) return cli_fail(s, &e);
  if (o.all) print_all(r, o.nonempty);
  else
    for (int a = 0; a < spc_query_count(r); a++) print_summary(r, a);
  spc_query_results_free(&r);
  return EXIT_OK;
}
