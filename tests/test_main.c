/* test_main.c -- the single test runner: every suite of suites.h, forked
 * per test (CK_FORK default), Check's summary line on stdout.  The usual
 * Check variables select part of the run (CK_RUN_SUITE, CK_RUN_CASE) or
 * scale timeouts (CK_TIMEOUT_MULTIPLIER).  Exit status: 0 when every test
 * passed. */
#include "suites.h"
#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  /* Check's 4 s default is short for sanitizer builds on a busy machine;
   * tcases that walk the shared data set longer limits themselves */
  setenv("CK_DEFAULT_TIMEOUT", "60", 0);
  /* every routine the conversion engine finds in its cache is built again
   * and compared (its key must name everything the routine depends on);
   * the CLI tests' runs of bin/spconv inherit it */
  setenv("SPC_ROUTINE_CHECK", "1", 0);
  tu_tmp_root_init();
  (void)tu_data_dir(); /* prints the skip note once when there is no data */
  SRunner *sr = srunner_create(suite_core());
  srunner_add_suite(sr, suite_io());
  srunner_add_suite(sr, suite_cli());
  srunner_add_suite(sr, suite_containers());
  srunner_add_suite(sr, suite_num());
  srunner_add_suite(sr, suite_lang());
  srunner_add_suite(sr, suite_ir());
  srunner_add_suite(sr, suite_query());
  srunner_add_suite(sr, suite_spec());
  srunner_add_suite(sr, suite_gz());
  srunner_add_suite(sr, suite_assemble());
  srunner_add_suite(sr, suite_specs_diff());
  srunner_add_suite(sr, suite_convert());
  srunner_add_suite(sr, suite_gen());
  srunner_add_suite(sr, suite_spw());
  srunner_add_suite(sr, suite_kernels());
  srunner_add_suite(sr, suite_cuda());
  srunner_add_suite(sr, suite_spmv_sched());
  srunner_add_suite(sr, suite_spgemm());
  srunner_add_suite(sr, suite_threads());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tu_tmp_root_cleanup();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
