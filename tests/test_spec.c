/* test_spec.c -- format specs: the built-in specs load and check; a user's
 * formats written only as YAML load; every class of spec error names the
 * right line and column; the loader survives allocation failures. */
#include "spec.h"
#include "suites.h"
#include "testutil.h"
#include <string.h>

static spc_specs *builtin(void) {
  spc_specs *r = NULL;
  spc_error e;
  spc_status s = spc_specs_builtin(&r, &e);
  char b[1200];
  ck_assert_msg(s == SPC_OK, "%s", spc_error_string(&e, b, sizeof b));
  return r;
}

START_TEST(test_builtin_specs) {
  spc_specs *r = builtin();
  static const char *const formats[] = {"coo", "csr", "csc", "dcsr", "dcsc", "dia",
                                        "ell", "bcsr", "sky", "csf", "morton", "dense"};
  static const char *const levels[] = {"dense", "compressed", "singleton", "squeezed",
                                       "offset", "banded", "ragged"};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    ck_assert_msg(spc_specs_format(r, formats[i]), "no built-in format %s", formats[i]);
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    ck_assert_msg(spc_specs_level(r, levels[i]), "no built-in level %s", levels[i]);
  ck_assert_int_eq(spc_specs_nformats(r), 12);
  const spc_format_spec *b = spc_specs_format(r, "BCSR"); /* names ignore case */
  ck_assert_ptr_nonnull(b);
  ck_assert_int_eq(b->nparams, 2);
  ck_assert_str_eq(b->pnames[0], "M");
  ck_assert_int_eq(b->pdefaults[1], 4);
  ck_assert_int_eq(b->nlevels, 4);
  ck_assert(b->fill_zero);
  const spc_format_spec *coo = spc_specs_format(r, "coo");
  ck_assert_int_eq(coo->order, 0);
  ck_assert(!coo->lv[0].unique);
  ck_assert(coo->lv[1].repeat);
  const spc_format_spec *dia = spc_specs_format(r, "dia");
  ck_assert_str_eq(dia->lv[2].lf->name, "offset");
  ck_assert_str_eq(dia->lv[2].fn[SPC_LF_ACCESS].text, "j - d");
  const spc_level_spec *c = spc_specs_level(r, "compressed");
  ck_assert_int_eq(c->narrays, 2);
  ck_assert_str_eq(c->arrays[0].name, "pos");
  ck_assert(c->props & SPC_LP_ORDERED);
  ck_assert(!c->pads);
  ck_assert(spc_specs_level(r, "dense")->pads);
  spc_specs_free(&r);
  ck_assert_ptr_null(r);
}
END_TEST

/* Formats the project does not ship, written only as YAML. */
START_TEST(test_user_specs) {
  static const char *const ok[] = {
      "format: blocked_ell\norder: 2\nparams: {B: 2}\n"
      "remap: (i, j) -> (#i as k, i / B as bi, i % B as ii, j)\n"
      "levels: [dense, dense, dense, singleton]\nfill: zero\n",
      "format: rowperm_csr\ndescription: CSR with rows reversed\norder: 2\n"
      "remap: (i, j) -> (0 - i as r, j)\nlevels: [dense, compressed]\n",
      "level: bitmap\ndescription: a dense level that keeps a presence bit\n"
      "properties: [ordered, unique, full, compact, locate]\narrays: {bits: i32}\n"
      "read:\n  begin: p * N\n  end: p * N + N\n  access: q - p * N\n"
      "  valid: bits[q] != 0\n  size: np * N\n"
      "write:\n  init: bits = alloc(i32, np * N)\n  yield_pos: return p * N + c\n"
      "  insert_coord: bits[q] = 1\n",
  };
  spc_specs *r = builtin();
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    spc_error e;
    const char *name = NULL;
    char b[1200];
    spc_status s = spc_specs_add(r, "user.yaml", ok[i], strlen(ok[i]), &name, &e);
    ck_assert_msg(s == SPC_OK, "case %zu: %s", i, spc_error_string(&e, b, sizeof b));
    ck_assert_ptr_nonnull(name);
  }
  ck_assert_ptr_nonnull(spc_specs_format(r, "blocked_ell"));
  ck_assert_ptr_nonnull(spc_specs_level(r, "bitmap"));
  spc_specs_free(&r);
}
END_TEST

typedef struct bad_spec {
  const char *what, *text;
  int64_t line, col; /* 0: any */
  const char *msg;   /* a substring of the message */
} bad_spec;

#define LVL "level: foo\narrays: {pos: index, crd: coord}\n"
#define RD "read:\n  begin: pos[p]\n  end: pos[p + 1]\n  access: crd[q]\n  size: pos[np]\n"

static const bad_spec bad_specs[] = {
    {"YAML syntax", "level: [a\n", 2, 1, "YAML"},
    {"neither kind", "name: x\n", 1, 1, "expected a level format"},
    {"unknown top key", LVL RD "writ:\n  yield_pos: return p\n", 8, 1, "unknown key 'writ'"},
    {"unknown read key", LVL "read:\n  begn: pos[p]\n", 4, 3, "unknown key 'begn'"},
    {"missing read", "level: foo\n", 1, 1, "missing"},
    {"missing yield_pos", LVL RD, 0, 0, "yield_pos"},
    {"bad property", "level: foo\nproperties: [sorted]\n" RD, 2, 14, "unknown property"},
    {"bad array type", "level: foo\narrays: {pos: integer}\n" RD, 2, 15, "expected a type"},
    /* array names become C identifiers of the emitted routines */
    {"array name not a name", "level: foo\narrays: {pos: index, crd: coord, my extra: index}\n" RD, 2, 34,
     "'my extra' is not a name"},
    {"array name a digit first", "level: foo\narrays: {pos: index, 2crd: coord}\n" RD, 2, 22, "'2crd' is not a name"},
    {"array name too long", "level: foo\narrays: {pos: index, crd: coord, "
     "a2345678901234567890123456789012345678901: index}\n" RD, 2, 34, "at most 40 bytes"},
    {"unknown name in expression", LVL RD "write:\n  yield_pos: return p + x\n", 9, 25, "unknown name 'x'"},
    {"syntax in a block", LVL RD "write:\n  yield_pos: |\n    r = pos[p\n    return r\n", 11, 5, "expected ']'"},
    {"array used as scalar", LVL "read:\n  begin: pos\n  end: pos[p + 1]\n  access: crd[q]\n  size: pos[np]\n"
     "write:\n  yield_pos: return p\n", 4, 10, "array"},
    {"valid not a condition", LVL RD "  valid: crd[q]\nwrite:\n  yield_pos: return p\n", 8, 10, "condition"},
    /* a level's query groups by [*] or [c] and aggregates c: `x` and `q`
     * were taken as c, or refused only when converting */
    {"query aggregates an unknown name", LVL RD "write:\n  queries:\n    - select [*] -> count(x) as nnz\n"
     "  yield_pos: return p\n", 10, 27, "aggregates its coordinate c alone, not 'x'"},
    {"query groups by a position", LVL RD "write:\n  queries:\n    - select [q] -> count(c) as nnz\n"
     "  yield_pos: return p\n", 10, 15, "groups by [*] (the parent position) or [c]"},
    {"query groups by two", LVL RD "write:\n  queries:\n    - select [c, p] -> count(c) as nnz\n"
     "  yield_pos: return p\n", 10, 0, "alone"},
    {"format: unknown level", "format: f\norder: 2\nlevels: [dense, compresed]\n", 3, 17, "unknown level format 'compresed'"},
    {"format: arity", "format: f\norder: 2\nremap: (i, j, k) -> (i, j, k)\nlevels: [dense, dense, dense]\n", 3, 0, ""},
    {"format: level count", "format: f\norder: 2\nremap: (i, j) -> (j - i as d, i, j)\nlevels: [dense, dense]\n",
     3, 8, "3 coordinates but there are 2 levels"},
    {"format: unknown name in remap", "format: f\norder: 2\nremap: (i, j) -> (i / B, j)\nlevels: [dense, dense]\n",
     3, 0, "B"},
    {"format: unused index", "format: f\norder: 2\nremap: (i, j) -> (i)\nlevels: [dense]\n", 3, 0, "j"},
    {"format: bad order", "format: f\norder: many\nlevels: [dense]\n", 2, 8, "expected 1.."},
    {"format: bad param", "format: f\norder: 2\nparams: {M: -1}\nlevels: [dense, dense]\n", 3, 13, "positive"},
    {"format: requires not a condition", "format: f\norder: 2\nlevels: [dense, dense]\nrequires: [i + j]\n",
     4, 14, "condition"},
    {"format: offset without access", "format: f\norder: 2\nlevels: [dense, offset]\n", 0, 0, "access"},
    {"format: unknown level key", "format: f\norder: 2\nlevels: [dense, {level: compressed, uniq: false}]\n",
     3, 37, "unknown key 'uniq'"},
    {"format: repeat not last", "format: f\norder: any\nlevels: [{level: dense, repeat: true}, compressed]\n",
     3, 10, "only the last level"},
    {"format: bad fill", "format: f\norder: 2\nlevels: [dense, dense]\nfill: one\n", 4, 7, "zero or none"},
    /* found by fuzz_spec: a list as a key reached strcmp as NULL */
    {"key not text", "format: f\norder: 2\nlevels: [dense, dense]\n? [a, b]\n: 3\n", 4, 3,
     "a key must be plain text"},
    /* a key twice: the first won unseen (libyaml keeps both) */
    {"key twice", "format: x\nformat: y\norder: 2\nlevels: [dense, compressed]\n", 2, 1,
     "key 'format' appears twice in this mapping (first at line 1)"},
    {"key twice, nested", "format: f\norder: 2\nlevels: [dense, {level: compressed, unique: true, unique: false}]\n",
     3, 51, "key 'unique' appears twice"},
    {"level function leaks before an unknown level",
     "format: f\norder: 2\nlevels:\n  - dense\n  - {level: otfesf, access: j - d}\n", 5, 0,
     "unknown level format 'otfesf'"},
};

START_TEST(test_bad_specs) {
  const bad_spec *b = &bad_specs[_i];
  spc_specs *r = builtin();
  spc_error e;
  spc_error_clear(&e);
  spc_status s = spc_specs_add(r, "bad.yaml", b->text, strlen(b->text), NULL, &e);
  char buf[1200];
  spc_error_string(&e, buf, sizeof buf);
  ck_assert_msg(s == SPC_ERR_SPEC, "%s: status %d (%s)", b->what, s, buf);
  ck_assert_msg(!strcmp(e.file, "bad.yaml"), "%s: file '%s'", b->what, e.file);
  if (b->line) ck_assert_msg(e.line == b->line, "%s: line %lld, expected %lld (%s)", b->what,
                             (long long)e.line, (long long)b->line, buf);
  if (b->col) ck_assert_msg(e.col == b->col, "%s: column %lld, expected %lld (%s)", b->what,
                            (long long)e.col, (long long)b->col, buf);
  ck_assert_msg(strstr(buf, b->msg), "%s: message '%s' lacks '%s'", b->what, buf, b->msg);
  spc_specs_free(&r);
}
END_TEST

/* Loading the built-ins fails cleanly at every allocation. */
START_TEST(test_spec_alloc_failures) {
  for (int k = 1; k < 100000; k++) {
    spc_specs *r = NULL;
    spc_error e;
    spc_alloc_fail_at(k);
    spc_status s = spc_specs_builtin(&r, &e);
    spc_alloc_fail_at(0);
    if (s == SPC_OK) {
      spc_specs_free(&r);
      return;
    }
    ck_assert_msg(s == SPC_ERR_NOMEM, "allocation %d: status %d", k, s);
    ck_assert_ptr_null(r);
  }
  ck_abort_msg("never succeeded");
}
END_TEST

Suite *suite_spec(void) {
  Suite *s = suite_create("spec");
  TCase *tc = tcase_create("specs");
  tcase_set_timeout(tc, TU_SLOW_TIMEOUT);
  tcase_add_test(tc, test_builtin_specs);
  tcase_add_test(tc, test_user_specs);
  tcase_add_loop_test(tc, test_bad_specs, 0, (int)(sizeof bad_specs / sizeof bad_specs[0]));
  tcase_add_test(tc, test_spec_alloc_failures);
  suite_add_tcase(s, tc);
  return s;
}
