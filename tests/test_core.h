/* test_core.h -- the parts of suite_core (tests/test_core*.c) and the
 * helpers they share. */
#ifndef SPC_TEST_CORE_H
#define SPC_TEST_CORE_H

#include "testutil.h"

/* Store coordinate v at component k of level l's crd (any width). */
void core_set_crd(spc_tensor *t, int l, int64_t k, int64_t v);
/* A COO tensor of n components: x holds n*order coordinates (0-based),
 * vals n values of type vt (NULL for pattern). */
spc_tensor *core_make_coo(int order, const int64_t *dims, int64_t n,
                          spc_vtype vt, const int64_t *x, const void *vals);
/* The next component of it must be (x0, x1) with double value v. */
void core_expect_next_f64(spc_iter *it, int64_t x0, int64_t x1, double v);

/* test_core_ops.c: symmetric expansion, duplicate combination. */
void core_add_ops_tcases(Suite *s);
/* test_core_alloc.c: every allocation of read, combine, expand and write
 * made to fail in turn. */
void core_add_alloc_tcases(Suite *s);

#endif
