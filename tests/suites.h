/* suites.h -- the Check suites linked into build/run_tests, one per stage
 * (tests/test_main.c runs them all). */
#ifndef SPC_SUITES_H
#define SPC_SUITES_H

#include <check.h>

Suite *suite_core(void);       /* tests/test_core.c: tensors, check, iter, coo ops */
Suite *suite_io(void);         /* tests/test_io*.c: readers, writers, shared data */
Suite *suite_cli(void);        /* tests/test_cli.c: bin/spconv end to end */
Suite *suite_containers(void); /* tests/test_containers.c: .bsp.h5 and .npz */
Suite *suite_num(void);        /* tests/test_num.c: number parsing / formatting */
Suite *suite_lang(void);       /* tests/test_lang.c: expression language, remapping */
Suite *suite_ir(void);         /* tests/test_ir.c: the IR */
Suite *suite_query(void);      /* tests/test_query.c: attribute queries */
Suite *suite_spec(void);       /* tests/test_spec.c: format specs (YAML) */
Suite *suite_gz(void);         /* tests/test_io_gz.c: gzip parsed while inflating */
Suite *suite_assemble(void);   /* tests/test_assemble.c: conversion engine, generic path */
Suite *suite_specs_diff(void); /* tests/test_specs_diff.c: built-in specs, interpreter = compiled C */
Suite *suite_convert(void);    /* tests/test_convert.c: spc_convert_to end to end, engines, user specs */
Suite *suite_gen(void);        /* tests/test_gen.c: spconv gen, generated C = library */
Suite *suite_spw(void);        /* tests/test_spw.c: sparse workspace, conversion through it */
Suite *suite_kernels(void);    /* tests/test_kernels.c: spmv / spgemm vs plain-C references, engines, CLI */
Suite *suite_cuda(void);       /* tests/test_cuda_emit.c: CUDA emitter, schedules interpreted, nvcc */
Suite *suite_spmv_sched(void); /* tests/test_spmv_sched.c: SpMV schedules x formats x threads, engines, CLI */
Suite *suite_threads(void);    /* tests/test_threads.c: the library from several threads at once */
Suite *suite_spgemm(void);     /* tests/test_spgemm.c: spgemm loop orders, workspaces, cost model, explain */

#endif
