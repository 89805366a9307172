/* fuzz_common.h -- shared by the libFuzzer targets: a private scratch
 * folder, and the checks every successfully read tensor must pass
 * (validator, write, read back, same components).  A violated property
 * aborts, which libFuzzer reports as a crash with the input saved. */
#ifndef SPC_FUZZ_COMMON_H
#define SPC_FUZZ_COMMON_H

#include "spconv.h"
#include <stddef.h>
#include <stdint.h>

/* Folder for this process's temporary files (created on first use). */
const char *fuzz_dir(void);
/* "fuzz_dir()/name" in a static buffer. */
const char *fuzz_path(const char *name);
/* Write data to path; aborts on failure (the disk, not the library). */
void fuzz_write_file(const char *path, const uint8_t *data, size_t size);
/* Read options used by every target: one thread, given expand. */
spc_read_opts fuzz_read_opts(int expand);
/* What a failed read must look like: negative status, *out NULL, a code
 * in the record equal to the status. */
void fuzz_check_failure(spc_status s, const spc_tensor *t, const spc_error *e);
/* Properties of a tensor a reader returned: spc_tensor_check passes; it
 * writes to .mtx (order <= 2) or .tns (real values), and reading that
 * back gives the same components. */
void fuzz_check_tensor(const spc_tensor *t);

#endif
