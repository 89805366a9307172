/* test_io.h -- the parts of suite_io (tests/test_io*.c). */
#ifndef SPC_TEST_IO_H
#define SPC_TEST_IO_H

#include "testutil.h"

/* test_io_data.c: every shared file read, the reference table, exact
 * rounding of every value token, round trips through every container.
 * Adds nothing (and prints the skip note) without shared data. */
void io_add_data_tcases(Suite *s);
/* test_io_text.c: Matrix Market and FROSTT variants that must be read. */
void io_add_text_tcases(Suite *s);
/* test_io_bad.c: malformed inputs (status, line, column) and failed writes. */
void io_add_bad_tcases(Suite *s);

/* Write text to a fresh file NAME in a new temporary folder and read it
 * with opts; returns the status, fills *t and e.  *dir receives the folder
 * (malloc'ed; remove with tu_rmtree) when dir is non-NULL. */
spc_status io_read_text(const char *name, const char *text,
                        const spc_read_opts *o, spc_tensor **t, spc_error *e,
                        char **dir);

/* Default read options that put the read's note in note (n bytes). */
static inline void io_opts_note(spc_read_opts *o, char *note, size_t n) {
  spc_read_opts_init(o);
  o->notice = note;
  o->notice_len = n;
}

#endif
