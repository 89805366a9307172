/* test_cli.c -- suite_cli: bin/spconv end to end ($SPCONV): help and
 * version, usage errors (exit 1), info fields, cat to every extension,
 * malformed input (exit 2, one line naming file and line, no output),
 * missing input (exit 3), duplicates, and SciPy's view of what cat wrote
 * (the acceptance oracle) when SciPy is installed. */
#include "suites.h"
#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

#define assert_has(hay, needle)                                              \
  ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in:\n%s", (needle), (hay))

/* ---- help, version, usage errors ------------------------------------------ */

START_TEST(test_help_version) {
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "--help"), 0);
  assert_has(r.out, "usage: spconv COMMAND");
  assert_has(r.out, "cat");
  assert_has(r.out, "info");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "--version"), 0);
  ck_assert_str_eq(r.out, "spconv " SPCONV_VERSION "\n");
  tu_run_free(&r);
  const char *cmds[] = {"cat --help", "cat -h", "info --help", "help cat", "cat x -o y --help"};
  for (int i = 0; i < 5; i++) {
    ck_assert_msg(tu_run(&r, "%s", cmds[i]) == 0, "%s: exit %d", cmds[i], r.status);
    assert_has(r.out, "usage: spconv ");
    ck_assert_str_eq(r.err, "");
    tu_run_free(&r);
  }
}
END_TEST

/* check-spec: a level spec, a tensor spec over a user level with --spec
 * (refused without it), a bad query named by line and column. */
START_TEST(test_check_spec) {
  char *dir = tu_mkdtemp();
  char *lv = tu_file(dir, "xcomp.yaml",
                     "level: xcomp\nproperties: [ordered, unique, compact]\narrays: {ptr: index, idx: coord}\n"
                     "read:\n  begin: ptr[p]\n  end: ptr[p + 1]\n  access: idx[q]\n  size: ptr[np]\n"
                     "write:\n  queries:\n    - select [*] -> count(c) as nnz\n"
                     "  init: |\n    ptr = alloc(index, np + 1)\n    for x in 0 .. np { ptr[x + 1] = nnz[x] }\n"
                     "    prefix_sum(ptr, 0, np + 1)\n    idx = alloc(coord, ptr[np])\n"
                     "  yield_pos: |\n    r = ptr[p]\n    ptr[p] += 1\n    return r\n"
                     "  insert_coord: idx[q] = c\n  finalize: shift(ptr, 0, np, 0)\n");
  char *fm = tu_file(dir, "xcsr.yaml", "format: xcsr\norder: 2\nlevels: [dense, xcomp]\n");
  char *bad = tu_file(dir, "bad.yaml",
                      "level: bad\narrays: {pos: index, crd: coord}\n"
                      "read:\n  begin: pos[p]\n  end: pos[p + 1]\n  access: crd[q]\n  size: pos[np]\n"
                      "write:\n  queries:\n    - select [*] -> count(x) as nnz\n  yield_pos: return p\n");
  tu_run_result r;
  /* a directory is no spec: an i/o error (it read as an empty document) */
  ck_assert_int_eq(tu_run(&r, "check-spec %s", dir), 3);
  assert_has(r.err, "the spec is not a regular file");
  tu_run_free(&r);
  ck_assert_msg(tu_run(&r, "check-spec %s", lv) == 0, "level: exit %d: %s", r.status, r.err);
  assert_has(r.out, "ok (xcomp)");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "check-spec %s", fm), 2);
  assert_has(r.err, "unknown level format 'xcomp'");
  tu_run_free(&r);
  ck_assert_msg(tu_run(&r, "check-spec %s --spec %s", fm, lv) == 0, "with --spec: exit %d: %s", r.status, r.err);
  assert_has(r.out, "ok (xcsr)");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "check-spec %s", bad), 2);
  assert_has(r.err, "bad.yaml:10:27: a level's query aggregates its coordinate c alone, not 'x'");
  tu_run_free(&r);
  free(lv);
  free(fm);
  free(bad);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* args with @IN and @DIR replaced by in and dir. */
static void expand_args(const char *tmpl, const char *in, const char *dir, char *args, size_t n) {
  size_t k = 0;
  for (const char *t = tmpl; *t && k + 512 < n;) {
    const char *rep = !strncmp(t, "@IN", 3) ? in : !strncmp(t, "@DIR", 4) ? dir : NULL;
    if (rep) {
      k += (size_t)snprintf(args + k, n - k, "%s", rep);
      t += rep == in ? 3 : 4;
    } else {
      args[k++] = *t++;
    }
  }
  args[k] = 0;
}

START_TEST(test_usage_errors) {
  char *dir = tu_mkdtemp(), *in = tu_file(dir, "in.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n");
  const char *bad[] = {"", "frobnicate", "cat @IN -o @DIR/o.mtx --bogus", "info --bogus @IN",
                       "cat @IN", "cat @IN -o @DIR/o.mtx --threads=0",
                       "cat @IN -o @DIR/o.mtx --dup=average", "cat @IN -o @DIR/o.mtx --type=quaternion",
                       "info @IN @IN", "cat @IN -o", "cat @IN -o @DIR/o.mtx --dims=3,x",
                       "cat @IN -o @DIR/o.mtx --dup=sum --dup-order=random",
                       /* a count past int64 is a usage error (it was "out of memory", exit 4) */
                       "@IN --to=csr -o @DIR/o.mtx --spw=hash --acc=99999999999999999999",
                       "@IN --to=csr -o @DIR/o.mtx --mem=1X",
                       /* a size in decimal digits (strtod took 0x10, 1e3) */
                       "@IN --to=csr -o @DIR/o.mtx --mem=0x10M", "@IN --to=csr -o @DIR/o.mtx --mem=1e3M",
                       "@IN --to=csr -o @DIR/o.mtx --mem=.", "@IN --to=csr -o @DIR/o.mtx --mem=-1M",
                       /* Gustavson's workspace with another loop order (it was ignored) */
                       "spgemm @IN @IN -o @DIR/c.mtx --algo=inner --workspace=hash",
                       "explain spgemm @IN @IN --algo=outer --workspace=dense",
                       /* output names: unknown, a binary container gzip'ed */
                       "cat @IN -o @DIR/o.txt", "@IN --to=csr -o @DIR/o.bsp.h5.gz",
                       "spgemm @IN @IN -o @DIR/c.npz.gz",
                       /* numbers past int64: refused (they were clamped to 2^63 - 1) */
                       "info @IN --dims=99999999999999999999,1",
                       "@IN --to=bcsr -o @DIR/o.mtx --param M=99999999999999999999",
                       /* one gen form's options given to the other: refused, not ignored */
                       "gen --cuda --kernel=spmv --format=bcsr --param M=3 -o @DIR/k.cu",
                       "gen --cuda --kernel=spmv --format=csr --type=float32 -o @DIR/k.cu",
                       "gen --from=coo --to=csr --kernel=spmv -o @DIR/k.c",
                       /* an empty value: said so (gen --from= said "no target format") */
                       "gen --from= --to=csr -o @DIR/k.c", "cat @IN -o ''", "info ''",
                       "help nosuchcommand"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tu_run_result r;
    char args[1024];
    expand_args(bad[i], in, dir, args, sizeof args);
    ck_assert_msg(tu_run(&r, "%s", args) == 1, "'%s': exit %d", args, r.status);
    if (i > 0 && i + 1 < sizeof bad / sizeof bad[0]) ck_assert_msg(r.err[0], "'%s': nothing on stderr", args);
    ck_assert_msg(tu_count_dir(dir) == 1, "'%s' wrote a file", args);
    tu_run_free(&r);
  }
  tu_run_result r;
  tu_run(&r, "frobnicate");
  assert_has(r.err, "frobnicate");
  tu_run_free(&r);
  /* a bad output name is refused before standard input is read: not
   * waiting for a pipe that has not written yet (it read and spooled it) */
  {
    /* a writer that holds the pipe open for 3 s and writes nothing: an
     * early refusal exits 1, a read of the pipe is killed at 2 s (124) */
    char cmd[2048];
    const char *bin = getenv("SPCONV");
    snprintf(cmd, sizeof cmd, "{ sleep 3 & } | timeout 2 %s - --to=csr -o %s/o.txt 2>/dev/null",
             bin && *bin ? bin : "bin/spconv", dir);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit %d: the pipe was waited for",
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  /* sizes up to terabytes: --mem=1T as --mem=1024G */
  for (int i = 0; i < 2; i++) {
    char args[1024];
    expand_args(i ? "@IN --to=csr -o @DIR/o.mtx --mem=1T" : "@IN --to=csr -o @DIR/o.mtx --mem=1024G", in, dir,
                args, sizeof args);
    ck_assert_msg(tu_run(&r, "%s", args) == 0, "'%s': exit %d: %s", args, r.status, r.err);
    tu_run_free(&r);
  }
  char *o = tu_path(dir, "o.mtx");
  unlink(o);
  free(o);
  /* an option another command takes is refused here, not ignored: each
   * command takes the options its help text lists */
  const char *foreign[][2] = {{"info @IN --to=csr", "--to"},
                              {"cat @IN -o @DIR/o.mtx --algo=inner", "--algo"},
                              {"query @IN 'select [i] -> count(j) as n' --spw=hash", "--spw"},
                              {"spmv @IN -o @DIR/y.mtx --mem=10M", "--mem"},
                              {"@IN --to=csr -o @DIR/o.bsp.h5 --transpose", "--transpose"},
                              {"sizes @IN --schedule=rows", "--schedule"},
                              {"gen --from=coo --to=csr --all", "--all"},
                              {"@IN --to=csf -o @DIR/o.bsp.h5 --order=3", "--order"}};
  for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
    char args[1024];
    expand_args(foreign[i][0], in, dir, args, sizeof args);
    ck_assert_msg(tu_run(&r, "%s", args) == 1, "'%s': exit %d", args, r.status);
    char want[96];
    snprintf(want, sizeof want, "option %s does not apply to this command", foreign[i][1]);
    assert_has(r.err, want);
    ck_assert_msg(tu_count_dir(dir) == 1, "'%s' wrote a file", args);
    tu_run_free(&r);
  }
  /* gen --order N: the driver's order; a bad order is a usage error, a
   * format of another order a clear refusal; nothing written either way */
  ck_assert_int_eq(tu_run(&r, "gen --from=coo --to=csf --order 3 -o %s/g.c", dir), 0);
  tu_run_free(&r);
  char *gp = tu_path(dir, "g.c"), *gt = tu_read_file(gp, NULL);
  ck_assert_ptr_nonnull(gt);
  assert_has(gt, "#define SPCONV_ORDER 3\n");
  free(gt);
  unlink(gp);
  ck_assert_int_eq(tu_run(&r, "gen --from=coo --to=csf --order 0 -o %s/g.c", dir), 1);
  assert_has(r.err, "--order takes a tensor order from 1 to 16");
  tu_run_free(&r);
  ck_assert_int_ne(tu_run(&r, "gen --from=csr --to=csf --order 3 -o %s/g.c", dir), 0);
  assert_has(r.err, "format csr holds tensors of order 2, not 3");
  ck_assert_msg(!tu_exists(gp), "a refused gen wrote %s", gp);
  tu_run_free(&r);
  free(gp);
  /* and the ones it lists are taken: spgemm --no-jit, spmv --engine */
  ck_assert_int_eq(tu_run(&r, "spmv %s --engine=generic --no-jit -o %s/y.mtx", in, dir), 0);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "spgemm %s %s --no-jit -o %s/c.mtx", in, in, dir), 0);
  tu_run_free(&r);
  tu_rmtree(dir);
  free(in);
  free(dir);
}
END_TEST

/* ---- info -------------------------------------------------------------------- */

static const char gen_mtx[] =
    "%%MatrixMarket matrix coordinate real symmetric\n% generated\n"
    "4 4 5\n1 1 1.5\n2 1 -2\n4 3 0.25\n3 3 7\n4 1 1e-3\n";

START_TEST(test_info_fields) {
  char *dir = tu_mkdtemp(), *in = tu_file(dir, "g.mtx", gen_mtx);
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "info %s", in), 0);
  assert_has(r.out, "order:       2\n");
  assert_has(r.out, "dimensions:  4 x 4\n");
  assert_has(r.out, "stored:      5\n");
  assert_has(r.out, "value type:  float64\n");
  assert_has(r.out, "symmetry:    symmetric\n");
  assert_has(r.out, "format:      coo\n");
  assert_has(r.out, "levels:");
  assert_has(r.out, "compressed");
  assert_has(r.out, "singleton");
  assert_has(r.out, "bytes:");
  ck_assert_str_eq(r.err, "");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info --expand %s", in), 0);
  assert_has(r.out, "stored:      8\n");
  assert_has(r.out, "symmetry:    general\n");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info --type=float32 %s", in), 0);
  assert_has(r.out, "value type:  float32\n");
  tu_run_free(&r);
  char *tns = tu_file(dir, "g.tns", "1 2 3 1.0\n2 1 1 2.0\n");
  ck_assert_int_eq(tu_run(&r, "info %s", tns), 0);
  assert_has(r.out, "order:       3\n");
  assert_has(r.out, "dimensions:  2 x 2 x 3\n");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info --dims=5,6,7 %s", tns), 0);
  assert_has(r.out, "dimensions:  5 x 6 x 7\n");
  tu_run_free(&r);
  tu_rmtree(dir);
  free(in);
  free(tns);
  free(dir);
}
END_TEST

START_TEST(test_info_shared) {
  const char *data = tu_data_dir();
  static const struct {
    const char *file, *opts, *want[4];
  } cs[] = {{"matrices/west0067.mtx", "", {"dimensions:  67 x 67\n", "stored:      294\n",
                                           "value type:  float64\n", "symmetry:    general\n"}},
            {"matrices/bcspwr01.mtx", "--expand", {"dimensions:  39 x 39\n", "stored:      131\n",
                                                   "value type:  pattern\n", "symmetry:    general\n"}},
            {"matrices/c.mtx", "", {"dimensions:  3 x 3\n", "stored:      5\n",
                                    "value type:  complex128\n", "symmetry:    hermitian\n"}},
            {"tensors/small4.tns", "", {"order:       4\n", "dimensions:  2 x 2 x 3 x 3\n",
                                        "stored:      8\n", "value type:  float64\n"}}};
  char *p = tu_path(data, cs[_i].file);
  tu_run_result r;
  ck_assert_msg(tu_run(&r, "info %s %s", cs[_i].opts, p) == 0, "%s: %s", p, r.err);
  for (int k = 0; k < 4; k++) assert_has(r.out, cs[_i].want[k]);
  tu_run_free(&r);
  free(p);
}
END_TEST

/* ---- cat ----------------------------------------------------------------------- */

static const char *const exts[] = {"mtx", "mtx.gz", "tns", "tns.gz", "bsp.h5", "npz"};

START_TEST(test_cat_each_extension) {
  char *dir = tu_mkdtemp(), *in = tu_file(dir, "in.mtx", gen_mtx);
  for (int i = 0; i < 6; i++) {
    char name[64];
    snprintf(name, sizeof name, "out.%s", exts[i]);
    char *out = tu_path(dir, name);
    tu_run_result r;
    ck_assert_msg(tu_run(&r, "cat %s -o %s", in, out) == 0, "cat -> %s: exit %d: %s", name,
                  r.status, r.err);
    ck_assert_str_eq(r.err, "");
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_dir(dir), 2); /* no temporary left */
    ck_assert_msg(tu_run(&r, "info %s", out) == 0, "info %s: %s", name, r.err);
    assert_has(r.out, "dimensions:  4 x 4\n");
    /* .mtx keeps the symmetric storage, the others hold it expanded */
    assert_has(r.out, i < 2 ? "stored:      5\n" : "stored:      8\n");
    tu_run_free(&r);
    /* same components as the library reads from the input */
    spc_tensor *a = tu_read_ok(in, 1, SPC_VTYPE_AUTO), *b = tu_read_ok(out, 1, SPC_VTYPE_AUTO);
    tu_assert_same_tensor(a, b, 0, name);
    spc_tensor_free(&a);
    spc_tensor_free(&b);
    unlink(out);
    free(out);
  }
  /* --gzip compresses a name without .gz */
  char *out = tu_path(dir, "forced.mtx");
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "cat --gzip %s -o %s", in, out), 0);
  tu_run_free(&r);
  size_t n;
  char *bytes = tu_read_file(out, &n);
  ck_assert(n > 2 && (unsigned char)bytes[0] == 0x1f && (unsigned char)bytes[1] == 0x8b);
  free(bytes);
  free(out);
  tu_rmtree(dir);
  free(in);
  free(dir);
}
END_TEST

/* A format stored column first (--modes=1,0) written to every container
 * lists each component as (row, column): a COO's Matrix Market file had
 * its coordinates swapped under the original header. */
START_TEST(test_modes_written) {
  char *dir = tu_mkdtemp(),
       *in = tu_file(dir, "r.mtx",
                     "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 3 5\n2 1 7\n2 3 -1\n");
  static const char *const fmts[] = {"coo", "csf", "dense"};
  spc_tensor *a = tu_read_ok(in, 1, SPC_VTYPE_AUTO);
  for (int f = 0; f < 3; f++)
    for (int i = 0; i < 6; i++) {
      char name[64];
      snprintf(name, sizeof name, "o.%s", exts[i]);
      char *out = tu_path(dir, name);
      tu_run_result r;
      ck_assert_msg(tu_run(&r, "%s --to=%s --modes=1,0 -o %s", in, fmts[f], out) == 0,
                    "%s -> %s: exit %d: %s", fmts[f], name, r.status, r.err);
      tu_run_free(&r);
      spc_tensor *b = tu_read_ok(out, 1, SPC_VTYPE_AUTO);
      tu_assert_same_tensor(a, b, 0, name);
      spc_tensor_free(&b);
      unlink(out);
      free(out);
    }
  spc_tensor_free(&a);
  tu_rmtree(dir);
  free(in);
  free(dir);
}
END_TEST

/* ---- the huge-page hint: SPCONV_HUGEPAGES, said by --verbose -------------- */

START_TEST(test_hugepages_env) {
  char *dir = tu_mkdtemp(), *in = tu_file(dir, "in.mtx", gen_mtx), *out = tu_path(dir, "o.mtx");
  char *old = getenv("SPCONV_HUGEPAGES") ? strdup(getenv("SPCONV_HUGEPAGES")) : NULL;
  const char *vals[] = {"0", "1"};
  for (int k = 0; k < 2; k++) {
    setenv("SPCONV_HUGEPAGES", vals[k], 1);
    tu_run_result r;
    ck_assert_msg(tu_run(&r, "%s --to=csr -o %s -v", in, out) == 0, "exit %d: %s", r.status, r.err);
    /* the user's setting wins over the machine's default */
    ck_assert_msg((strstr(r.err, "huge pages: not advised") != NULL) == (k == 0), "%s: %s",
                  vals[k], r.err);
    tu_run_free(&r);
  }
  if (old) setenv("SPCONV_HUGEPAGES", old, 1);
  else unsetenv("SPCONV_HUGEPAGES");
  free(old);
  tu_rmtree(dir);
  free(in);
  free(out);
  free(dir);
}
END_TEST

/* cat of the file name (len bytes of text) with opts: exit 2, msg on
 * stderr, no output written */
static void refused_input(const char *dir, const char *name, const char *text, size_t len,
                          const char *opts, const char *msg) {
  char *in = tu_path(dir, name), *out = tu_path(dir, "refused.out.mtx");
  tu_write_file(in, text, len);
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "cat %s %s -o %s", in, opts, out), 2);
  assert_has(r.err, msg);
  ck_assert(!tu_exists(out));
  tu_run_free(&r);
  unlink(in);
  free(in), free(out);
}

START_TEST(test_cat_bad_input) {
  char *dir = tu_mkdtemp();
  char *in = tu_file(dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                     "3 3 2\n1 1 1.0\n4 1 2.0\n");
  char *out = tu_path(dir, "out.mtx");
  for (int existing = 0; existing < 2; existing++) {
    if (existing) ck_assert_int_eq(tu_write_str(out, "keep me\n"), 0);
    tu_run_result r;
    ck_assert_msg(tu_run(&r, "cat %s -o %s", in, out) == 2, "exit %d", r.status);
    ck_assert_msg(count_lines(r.err) == 1, "stderr is not one line:\n%s", r.err);
    assert_has(r.err, in);
    assert_has(r.err, ":4:");
    ck_assert_int_eq(tu_count_dir(dir), 1 + existing);
    if (existing) {
      char *now = tu_read_file(out, NULL);
      ck_assert_str_eq(now, "keep me\n");
      free(now);
    }
    tu_run_free(&r);
  }
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "info %s", in), 2);
  ck_assert_int_eq(count_lines(r.err), 1);
  ck_assert_str_eq(r.out, "");
  tu_run_free(&r);
  /* a NUL byte in the banner: refused where it stands (the words after
   * it were dropped: a pattern file read as "coordinate pattern"); a
   * negative value asked as uint64: said so (not "other values need
   * uint64") */
  static const char nb[] = "%%MatrixMarket matrix coordinate pattern\0real general\n3 3 1\n1 1\n";
  static const char ng[] = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -1\n2 2 3\n";
  refused_input(dir, "nul.mtx", nb, sizeof nb - 1, "", "nul.mtx:1:41: banner: a NUL byte");
  refused_input(dir, "neg.mtx", ng, sizeof ng - 1, "--type=uint64",
                "neg.mtx:3:5: negative integer value: the values are read as uint64");
  /* complex to FROSTT: unsupported (5), nothing written */
  char *c = tu_file(dir, "c.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n");
  char *ct = tu_path(dir, "c.tns");
  ck_assert_int_eq(tu_run(&r, "cat %s -o %s", c, ct), 5);
  ck_assert(!tu_exists(ct));
  tu_run_free(&r);
  /* a .bsp.h5 whose metadata is corrupt (a checksum): one line, none of
   * HDF5's own stack at exit ("infinite loop closing library") */
  char *h = tu_path(dir, "h.bsp.h5");
  ck_assert_int_eq(tu_run(&r, "%s --to=csr -o %s", c, h), 0);
  tu_run_free(&r);
  size_t hn;
  unsigned char *hb = (unsigned char *)tu_read_file(h, &hn);
  ck_assert(hn > 200);
  hb[138] ^= 0xC0;
  tu_write_file(h, hb, hn);
  ck_assert_int_eq(tu_run(&r, "info %s", h), 2);
  ck_assert_msg(count_lines(r.err) == 1, "stderr is not one line:\n%s", r.err);
  tu_run_free(&r);
  free(hb), free(h);
  tu_rmtree(dir);
  free(in), free(out), free(c), free(ct), free(dir);
}
END_TEST

START_TEST(test_cat_missing_input) {
  char *dir = tu_mkdtemp(), *in = tu_path(dir, "absent.mtx"), *out = tu_path(dir, "o.mtx");
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "cat %s -o %s", in, out), 3);
  ck_assert_int_eq(count_lines(r.err), 1);
  assert_has(r.err, in);
  ck_assert_int_eq(tu_count_dir(dir), 0);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info %s", in), 3);
  tu_run_free(&r);
  /* output folder missing: an i/o error too */
  char *src = tu_file(dir, "s.mtx", gen_mtx), *nowhere = tu_path(dir, "no/dir/o.mtx");
  ck_assert_int_eq(tu_run(&r, "cat %s -o %s", src, nowhere), 3);
  tu_run_free(&r);
  tu_rmtree(dir);
  free(in), free(out), free(src), free(nowhere), free(dir);
}
END_TEST

/* "--" ends the options: a file whose name starts with '-' (run in its
 * folder, the binary by its absolute path) */
START_TEST(test_end_of_options) {
  char *dir = tu_mkdtemp();
  free(tu_file(dir, "-a.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.5\n2 3 -2\n"));
  const char *b = getenv("SPCONV");
  char *bin = realpath(b && *b ? b : "bin/spconv", NULL), cwd[4096];
  ck_assert(bin != NULL && getcwd(cwd, sizeof cwd) != NULL);
  setenv("SPCONV", bin, 1);
  ck_assert_int_eq(chdir(dir), 0);
  tu_run_result r;
  /* without "--" the name is an unknown option */
  ck_assert_int_eq(tu_run(&r, "cat -a.mtx -o o.mtx"), 1);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "cat -o o.mtx -- -a.mtx"), 0);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info -- o.mtx"), 0);
  assert_has(r.out, "stored:      2\n");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "convert --to=csc -o -c.bsp.h5 -- -a.mtx"), 0);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "spmv -o y.mtx -- -c.bsp.h5"), 0);
  tu_run_free(&r);
  char *y = tu_read_file("y.mtx", NULL);
  assert_has(y ? y : "", "\n1.5\n-2\n");
  free(y);
  /* after "--" an option's name is an argument; a second "--" too */
  ck_assert_int_eq(tu_run(&r, "info -- -a.mtx --verbose"), 1);
  assert_has(r.err, "unexpected argument '--verbose'");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info -- --help"), 3);
  tu_run_free(&r);
  ck_assert_int_eq(chdir(cwd), 0);
  setenv("SPCONV", b ? b : "", 1);
  tu_rmtree(dir);
  free(bin), free(dir);
}
END_TEST

START_TEST(test_cat_duplicates) {
  char *dir = tu_mkdtemp();
  char *in = tu_file(dir, "d.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                   "3 3 4\n1 1 5\n2 2 1\n1 1 -7\n3 1 2\n");
  char *out = tu_path(dir, "o.mtx");
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "cat --dup=error %s -o %s", in, out), 2);
  ck_assert_int_eq(count_lines(r.err), 1);
  assert_has(r.err, in);
  assert_has(r.err, "(1, 1)");
  ck_assert(!tu_exists(out));
  tu_run_free(&r);
  /* a conversion names the repeated level coordinates (csr: (i, j) from
   * 0; dia: offset, column, row), with or without the workspace */
  static const char *const conv[][2] = {{"--to=csr", "level coordinates (0, 0)"},
                                        {"--to=csc --mem=1M", "level coordinates (0, 0)"},
                                        {"--to=dia", "level coordinates (0, 0, 0)"},
                                        {"--to=csc --spw=hash", "level coordinates (0, 0)"}};
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(tu_run(&r, "%s %s --dup=error -o %s", in, conv[k][0], out), 2);
    ck_assert_int_eq(count_lines(r.err), 1);
    assert_has(r.err, conv[k][1]);
    ck_assert(!tu_exists(out));
    tu_run_free(&r);
  }
  /* kept as stored without --dup */
  ck_assert_int_eq(tu_run(&r, "cat %s -o %s", in, out), 0);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info %s", out), 0);
  assert_has(r.out, "stored:      4\n");
  tu_run_free(&r);
  static const struct {
    const char *pol;
    int64_t v11;
  } cs[] = {{"sum", -2}, {"first", 5}, {"last", -7}, {"min", -7}, {"max", 5}};
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(tu_run(&r, "cat --dup=%s %s -o %s", cs[i].pol, in, out), 0);
    tu_run_free(&r);
    spc_tensor *t = tu_read_ok(out, 0, SPC_VTYPE_AUTO);
    ck_assert_int_eq(spc_tensor_nstored(t), 3);
    spc_iter *it = NULL;
    spc_error e;
    tu_assert_ok(spc_iter_create(t, &it, &e), &e);
    int64_t x[2];
    const void *v;
    ck_assert_int_eq(spc_iter_next(it, x, &v), 1); /* sorted: (0,0) first */
    ck_assert_int_eq(x[0], 0);
    ck_assert_int_eq(x[1], 0);
    ck_assert_msg(*(const int64_t *)v == cs[i].v11, "--dup=%s: %lld", cs[i].pol,
                  (long long)*(const int64_t *)v);
    spc_iter_free(&it);
    spc_tensor_free(&t);
  }
  /* a stream (--mem) adds duplicates in the file's order: asking for
   * SciPy's order there says it is not applied; not asking says nothing */
  ck_assert_int_eq(tu_run(&r, "%s --to=csr --mem=1M --dup-order=scipy -o %s", in, out), 0);
  assert_has(r.err, "--dup-order=scipy not applied: a file converted as a stream");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "%s --to=csr --mem=1M -o %s", in, out), 0);
  ck_assert_msg(!strstr(r.err, "not applied"), "%s", r.err);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "%s --to=csr --dup-order=scipy -o %s", in, out), 0);
  ck_assert_msg(!strstr(r.err, "not applied"), "%s", r.err);
  tu_run_free(&r);
  tu_rmtree(dir);
  free(in), free(out), free(dir);
}
END_TEST

/* ---- SciPy's view (acceptance oracle) -------------------------------------------- */

static const char *oracle_py;   /* python3 with scipy, numpy, h5py */
static char oracle_path[4200];

static const char *const oracle_files[] = {"west0067.mtx", "bcspwr01.mtx", "c.mtx",
                                           "full_symmetric.mtx"};

START_TEST(test_oracle) {
  const char *f = oracle_files[_i / 3];
  const char *ext = (const char *[]){"mtx", "bsp.h5", "npz"}[_i % 3];
  char *m = tu_path(tu_data_dir(), "matrices"), *src = tu_path(m, f);
  char *dir = tu_mkdtemp(), name[64];
  snprintf(name, sizeof name, "o.%s", ext);
  char *out = tu_path(dir, name);
  tu_run_result r;
  ck_assert_msg(tu_run(&r, "cat %s -o %s", src, out) == 0, "cat %s -> %s: %s", f, ext, r.err);
  tu_run_free(&r);
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "%s %s mtx %s %s >%s/oracle.txt 2>&1", oracle_py, oracle_path,
           src, out, dir);
  int st = system(cmd);
  char *log = tu_path(dir, "oracle.txt"), *text = tu_read_file(log, NULL);
  ck_assert_msg(st == 0, "oracle on %s -> %s: %s", f, ext, text ? text : "?");
  free(text), free(log), free(out), free(src), free(m);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(test_oracle_tns) {
  char *t = tu_path(tu_data_dir(), "tensors"), *src = tu_path(t, "small4.tns");
  char *dir = tu_mkdtemp(), *out = tu_path(dir, "o.tns");
  tu_run_result r;
  ck_assert_int_eq(tu_run(&r, "cat %s -o %s", src, out), 0);
  tu_run_free(&r);
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "%s %s tns %s %s >/dev/null 2>&1", oracle_py, oracle_path, src, out);
  ck_assert_int_eq(system(cmd), 0);
  free(t), free(src), free(out);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* Duplicates summed as SciPy sums them (--dup-order=scipy, the default):
 * the 4 x 8 matrix of test_scipy_dup_order (core), whose rows of over 16
 * entries SciPy sorts with std::sort, so 5 of its sums differ in the last
 * bits from the file order's; converted, and cat --dup=sum, equal to
 * SciPy's reading bit for bit. */
static const char dups_mtx[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "4 8 78\n"
    "3 1 1.0\n"
    "4 1 1.0\n"
    "4 2 -114285.71428571428\n"
    "1 1 1.0\n"
    "4 1 12857142857.142857\n"
    "1 6 -114285.71428571428\n"
    "3 4 -114285.71428571428\n"
    "1 3 12857142857.142857\n"
    "1 8 -1428571428571428.5\n"
    "3 2 12857142857.142857\n"
    "2 1 1.0\n"
    "3 5 -1428571428571428.5\n"
    "1 5 1.5714285714285714\n"
    "4 2 -1428571428571428.5\n"
    "4 1 1.5714285714285714\n"
    "2 3 -114285.71428571428\n"
    "3 3 1.5714285714285714\n"
    "4 2 -171428.57142857145\n"
    "3 1 -171428.57142857145\n"
    "1 2 -171428.57142857145\n"
    "3 4 18571428571.428574\n"
    "1 7 18571428571.428574\n"
    "3 2 -2000000000000000.0\n"
    "1 4 -2000000000000000.0\n"
    "3 5 2.142857142857143\n"
    "4 1 18571428571.428574\n"
    "4 2 -2000000000000000.0\n"
    "3 3 -228571.42857142855\n"
    "1 1 2.142857142857143\n"
    "3 1 24285714285.714287\n"
    "2 2 12857142857.142857\n"
    "1 6 -228571.42857142855\n"
    "2 1 -1428571428571428.5\n"
    "1 3 24285714285.714287\n"
    "1 8 -2571428571428571.0\n"
    "4 1 2.142857142857143\n"
    "1 5 2.7142857142857144\n"
    "4 2 -228571.42857142855\n"
    "1 2 -285714.28571428574\n"
    "2 3 1.5714285714285714\n"
    "3 4 -2571428571428571.0\n"
    "1 7 30000000000.0\n"
    "2 2 -171428.57142857145\n"
    "1 4 -3142857142857143.0\n"
    "1 1 3.2857142857142856\n"
    "4 1 24285714285.714287\n"
    "2 1 18571428571.428574\n"
    "1 6 -342857.14285714284\n"
    "2 3 -2000000000000000.0\n"
    "3 2 2.7142857142857144\n"
    "4 2 -2571428571428571.0\n"
    "1 3 35714285714.28571\n"
    "3 5 -285714.28571428574\n"
    "3 3 30000000000.0\n"
    "4 1 2.7142857142857144\n"
    "1 8 -3714285714285714.5\n"
    "1 5 3.857142857142857\n"
    "4 2 -285714.28571428574\n"
    "3 1 -3142857142857143.0\n"
    "1 2 -400000.0\n"
    "4 1 30000000000.0\n"
    "3 4 3.2857142857142856\n"
    "1 7 41428571428.57143\n"
    "4 2 -3142857142857143.0\n"
    "3 2 -342857.14285714284\n"
    "4 1 3.2857142857142856\n"
    "1 4 -4285714285714285.5\n"
    "2 2 2.142857142857143\n"
    "2 1 -228571.42857142855\n"
    "1 1 4.428571428571429\n"
    "1 6 -457142.8571428571\n"
    "4 2 -342857.14285714284\n"
    "1 3 47142857142.85715\n"
    "3 5 35714285714.28571\n"
    "1 8 -4857142857142858.0\n"
    "3 3 -3714285714285714.5\n"
    "1 5 5.0\n"
    "1 2 -514285.7142857143\n";

START_TEST(test_oracle_dups) {
  char *dir = tu_mkdtemp(), *src = tu_file(dir, "d.mtx", dups_mtx), *out = tu_path(dir, "o.mtx");
  const char *how[] = {"--to=csr", "--to=csc", "--to=dia", "cat --dup=sum"};
  for (int k = 0; k < 4; k++) {
    tu_run_result r;
    int st0 = k < 3 ? tu_run(&r, "%s %s -o %s", src, how[k], out) : tu_run(&r, "%s %s -o %s", how[k], src, out);
    ck_assert_msg(st0 == 0, "%s: %s", how[k], r.err);
    tu_run_free(&r);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "%s %s mtx %s %s >%s/oracle.txt 2>&1", oracle_py, oracle_path, src,
             out, dir);
    int st = system(cmd);
    char *log = tu_path(dir, "oracle.txt"), *text = tu_read_file(log, NULL);
    ck_assert_msg(st == 0, "oracle on %s: %s", how[k], text ? text : "?");
    free(text), free(log);
  }
  free(src), free(out);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- "-": standard input and output ------------------------------------------ */

/* Every read and write of "-", standard input redirected from the file
 * (read in place) or piped (copied to $TMPDIR), gives what the named file
 * gives, byte for byte -- a gzip FROSTT file's duplicates summed in file
 * order as for a named one; bad or empty input is named "<stdin>" (also in
 * the readers' notes), exits 2 and writes nothing to standard output; no
 * temporary file is left afterwards. */
START_TEST(test_stdio) {
  char *dir = tu_mkdtemp(), *tmp = tu_path(dir, "tmp");
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  char *in = tu_file(dir, "g.mtx", gen_mtx);
  char *tns = tu_file(dir, "t.tns", "# a comment\n1 2 3 1.5\n2 1 1 -2\n1 2 3 0.5\n3 3 4 7\n");
  size_t tlen, zlen;
  char *ttext = tu_read_file(tns, &tlen);
  unsigned char *z = tu_gzip(ttext, tlen, &zlen);
  char *tgz = tu_path(dir, "t.tns.gz");
  FILE *f = fopen(tgz, "wb");
  ck_assert(f && fwrite(z, 1, zlen, f) == zlen && !fclose(f));
  char *bad = tu_file(dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n");
  char *empty = tu_file(dir, "empty", "");
  /* an order-2 FROSTT file whose duplicates' sum depends on their order:
   * 1e16 + 1 - 1e16 + 1 + 3 is 4 in file order, 5 in SciPy's (a row of
   * more than 16 entries: its sort is not stable), as a .mtx sums them */
  char *dtns = tu_file(dir, "d.tns", "1 2 1\n1 1 1e16\n1 3 1\n1 1 1\n1 4 1\n1 1 -1e16\n1 5 1\n"
                                     "1 1 1\n1 6 1\n1 1 3\n1 7 1\n1 8 1\n1 9 1\n1 10 1\n"
                                     "1 11 1\n1 12 1\n1 13 1\n1 14 1\n");
  size_t dlen, dzlen;
  char *dtext = tu_read_file(dtns, &dlen);
  unsigned char *dz = tu_gzip(dtext, dlen, &dzlen);
  char *dgz = tu_path(dir, "d.tns.gz");
  f = fopen(dgz, "wb");
  ck_assert(f && fwrite(dz, 1, dzlen, f) == dzlen && !fclose(f));
  char *zero = tu_file(dir, "z.tns", "0 0 1.5\n1 2 2\n");
  setenv("TMPDIR", tmp, 1);
  tu_run_result r, w;
  /* pairs: the named file's command (writing @DIR/want) and the same through "-"
   * (writing @DIR/got, or standard output when got is NULL) */
  static const struct { const char *named, *piped; int file; } cs[] = {
      {"cat @IN -o @DIR/want.mtx", "cat - -o @DIR/got.mtx", 0},
      {"cat @IN -o @DIR/want.npz", "cat - -o @DIR/got.npz", 0},
      {"@IN --to=csr -o @DIR/want.mtx", "- --to=csr -o -", 0},
      {"convert @IN --to=dia -o @DIR/want.mtx", "convert - --to=dia -o -", 0},
      {"cat @IN -o @DIR/want.tns", "cat - -o -", 1},
      {"cat @IN -o @DIR/want.tns", "cat - -o -", 2},
      {"@IN --to=csf -o @DIR/want.tns", "- --to=csf -o -", 2},
      {"spmv @IN -o @DIR/want.mtx", "spmv - -o -", 0},
      {"spgemm @IN @IN -o @DIR/want.mtx", "spgemm - - -o -", 0},
      {"@IN --to=csr -o @DIR/want.mtx", "- --to=csr -o -", 3},
      {"cat @IN --dup=sum -o @DIR/want.mtx", "cat - --dup=sum -o -", 3},
  };
  for (int via = 0; via < 2; via++) /* 0: redirected, 1: piped */
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    const char *src = cs[i].file == 0 ? in : cs[i].file == 1 ? tns : cs[i].file == 2 ? tgz : dgz;
    char named[1024];
    expand_args(cs[i].named, src, dir, named, sizeof named);
    ck_assert_msg(tu_run(&w, "%s", named) == 0, "%s: exit %d: %s", named, w.status, w.err);
    tu_run_free(&w);
    char *want_p = NULL, *got_p = NULL;
    const char *ext = strrchr(strstr(named, "want"), '.');
    char name[32];
    snprintf(name, sizeof name, "want%s", ext);
    want_p = tu_path(dir, name);
    size_t wl, gl;
    char *want = tu_read_file(want_p, &wl), *got;
    ck_assert_msg(want != NULL, "%s wrote nothing", named);
    if (cs[i].file == 3) assert_has(want, "\n1 1 4\n"); /* file order */
    if (strstr(cs[i].piped, "-o -")) {
      int st = via ? tu_run_pipe(&r, src, "%s", cs[i].piped) : tu_run_in(&r, src, "%s", cs[i].piped);
      ck_assert_msg(st == 0, "%s: exit %d: %s", cs[i].piped, r.status, r.err);
      got = r.out;
      gl = strlen(r.out);
    } else {
      char piped[1024];
      expand_args(cs[i].piped, src, dir, piped, sizeof piped);
      int st = via ? tu_run_pipe(&r, src, "%s", piped) : tu_run_in(&r, src, "%s", piped);
      ck_assert_msg(st == 0, "%s: exit %d: %s", piped, r.status, r.err);
      snprintf(name, sizeof name, "got%s", ext);
      got_p = tu_path(dir, name);
      got = tu_read_file(got_p, &gl);
      ck_assert_msg(got != NULL, "%s wrote nothing", piped);
    }
    ck_assert_msg(gl == wl && !memcmp(got, want, wl), "case %zu (%s): '%s' and '%s' differ:\n%s\n---\n%s", i,
                  via ? "piped" : "redirected", named, cs[i].piped, want, got);
    ck_assert_str_eq(r.err, "");
    if (got_p) free(got), remove(got_p);
    remove(want_p);
    free(want);
    free(want_p);
    free(got_p);
    tu_run_free(&r);
    ck_assert_msg(tu_count_dir(tmp) == 0, "case %zu left a temporary file", i);
  }
  /* what is read is named <stdin>, in the notes too */
  for (int piped = 0; piped < 2; piped++) {
    ck_assert_int_eq(piped ? tu_run_pipe(&r, in, "info -") : tu_run_in(&r, in, "info -"), 0);
    assert_has(r.out, "file:        <stdin>\n");
    assert_has(r.out, "dimensions:  4 x 4\n");
    tu_run_free(&r);
    ck_assert_int_eq(piped ? tu_run_pipe(&r, zero, "info -") : tu_run_in(&r, zero, "info -"), 0);
    assert_has(r.err, "spconv: note: <stdin>: the indices of modes 1, 2 start at 0");
    tu_run_free(&r);
    ck_assert_int_eq(piped ? tu_run_pipe(&r, bad, "- --to=csr -o -") : tu_run_in(&r, bad, "- --to=csr -o -"), 2);
    ck_assert_str_eq(r.out, "");
    assert_has(r.err, "<stdin>:4:1: row index 4 is outside 1..3");
    tu_run_free(&r);
  }
  ck_assert_int_eq(tu_run_in(&r, bad, "cat - -o %s/o.mtx", dir), 2);
  char *o = tu_path(dir, "o.mtx");
  ck_assert_msg(!tu_exists(o), "a failed read wrote o.mtx");
  free(o);
  tu_run_free(&r);
  ck_assert_int_eq(tu_run_pipe(&r, empty, "cat - -o -"), 2);
  ck_assert_str_eq(r.out, "");
  assert_has(r.err, "<stdin>: empty input (nothing on standard input)");
  tu_run_free(&r);
  /* redirected from an empty file: the same words (it said "not a Matrix
   * Market file"); the file named: "an empty file" */
  ck_assert_int_eq(tu_run_in(&r, empty, "cat - -o -"), 2);
  assert_has(r.err, "<stdin>: empty input (nothing on standard input)");
  tu_run_free(&r);
  ck_assert_int_eq(tu_run(&r, "info %s", empty), 2);
  assert_has(r.err, "empty: an empty file: expected Matrix Market, FROSTT");
  tu_run_free(&r);
  /* a conversion that fails writes nothing to standard output */
  ck_assert_int_eq(tu_run_in(&r, tns, "- --to=csr -o -"), 5);
  ck_assert_str_eq(r.out, "");
  tu_run_free(&r);
  ck_assert_msg(tu_count_dir(tmp) == 0, "a temporary file was left in %s", tmp);
  unsetenv("TMPDIR");
  free(ttext);
  free(z);
  free(tgz);
  free(tns);
  free(bad);
  free(empty);
  free(dtns);
  free(dtext);
  free(dz);
  free(dgz);
  free(zero);
  free(in);
  free(tmp);
  tu_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- outputs onto nodes that are not files -------------------------------- */

/* A child copying what the FIFO fifo delivers into out, until EOF. */
static pid_t fifo_reader(const char *fifo, const char *out) {
  pid_t p = fork();
  if (p == 0) {
    int in = open(fifo, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char b[4096];
    ssize_t k;
    while (in >= 0 && o >= 0 && (k = read(in, b, sizeof b)) > 0)
      if (write(o, b, (size_t)k) != k) break;
    _exit(0);
  }
  return p;
}

/* -o onto a FIFO (as onto /dev/null): every command writes into the node
 * and leaves it a FIFO -- a temporary renamed onto it replaced the node
 * with a file (and as root, /dev/null itself) -- and leaves no temporary
 * beside it. */
START_TEST(test_out_special) {
  char *dir = tu_mkdtemp(), *in = tu_file(dir, "i.mtx", gen_mtx);
  const struct {
    const char *args, *name, *head;
  } runs[] = {{"spmv @IN -o @OUT", "y.mtx", "%%MatrixMarket matrix array real general\n4 1\n"},
              {"spgemm @IN @IN -o @OUT", "c.mtx", "%%MatrixMarket matrix coordinate"},
              {"cat @IN -o @OUT", "a.mtx", "%%MatrixMarket matrix coordinate real symmetric"},
              {"@IN --to=csr -o @OUT", "b.bsp.h5", "\x89HDF\r\n\x1a\n"},
              {"@IN --to=csc -o @OUT", "d.npz", "PK"},
              {"gen --from=coo --to=csr -o @OUT", "g.c", "/* spconv_coo_to_csr.c"}};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char *fifo = tu_path(dir, runs[i].name), *got = tu_path(dir, "got");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    pid_t rd = fifo_reader(fifo, got);
    ck_assert_int_gt(rd, 0);
    char args[2048] = "", *a = args;
    for (const char *p = runs[i].args; *p && a < args + sizeof args - 1200;) {
      if (!strncmp(p, "@IN", 3)) a += sprintf(a, "%s", in), p += 3;
      else if (!strncmp(p, "@OUT", 4)) a += sprintf(a, "%s", fifo), p += 4;
      else *a++ = *p++;
    }
    *a = 0;
    tu_run_result r;
    int st = tu_run(&r, "%s", args);
    struct stat sb;
    bool still = stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode);
    if (!still) kill(rd, SIGKILL); /* its FIFO gone: it waits on nothing */
    waitpid(rd, NULL, 0);
    ck_assert_msg(st == 0, "'%s': exit %d: %s", args, st, r.err);
    ck_assert_msg(still, "'%s' replaced the FIFO", args);
    size_t n = 0;
    char *text = tu_read_file(got, &n);
    ck_assert_msg(text && n >= strlen(runs[i].head) && !memcmp(text, runs[i].head, strlen(runs[i].head)),
                  "'%s': the FIFO got %zu bytes not starting with the expected header", args, n);
    free(text);
    tu_run_free(&r);
    unlink(fifo);
    unlink(got);
    free(fifo);
    free(got);
    ck_assert_msg(tu_count_dir(dir) == 1, "'%s' left a file beside its output", args);
  }
  /* a FIFO as input: refused before anything opens it (a peek at its
   * content then the reader's own open waited forever: no writer here) */
  char *fin = tu_path(dir, "in.mtx");
  ck_assert_int_eq(mkfifo(fin, 0644), 0);
  const char *cmds[3] = {"info", "cat -o x.mtx", "--to=csr --mem=1k -o x.mtx"};
  for (int k = 0; k < 3; k++) {
    tu_run_result r;
    ck_assert_int_eq(tu_run(&r, "%s %s", k == 2 ? fin : cmds[k], k == 2 ? cmds[k] : fin), 3);
    assert_has(r.err, "in.mtx: not a regular file (a FIFO: give it as standard input, '-')");
    tu_run_free(&r);
  }
  ck_assert_int_eq(tu_count_dir(dir), 2);
  free(fin);
  tu_rmtree(dir);
  free(in);
  free(dir);
}
END_TEST

Suite *suite_cli(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_help_version);
  tcase_add_test(tc, test_usage_errors);
  tcase_add_test(tc, test_check_spec);
  tcase_add_test(tc, test_info_fields);
  tcase_add_test(tc, test_cat_each_extension);
  tcase_add_test(tc, test_modes_written);
  tcase_add_test(tc, test_cat_bad_input);
  tcase_add_test(tc, test_hugepages_env);
  tcase_add_test(tc, test_cat_missing_input);
  tcase_add_test(tc, test_cat_duplicates);
  tcase_add_test(tc, test_end_of_options);
  tcase_add_test(tc, test_stdio);
  tcase_add_test(tc, test_out_special);
  const char *data = tu_data_dir();
  if (data) tcase_add_loop_test(tc, test_info_shared, 0, 4);
  suite_add_tcase(s, tc);
  if (!data) return s;
  snprintf(oracle_path, sizeof oracle_path, "%s/../acceptance/oracle.py", data);
  oracle_py = tu_exists(oracle_path) ? tu_python_with("scipy, numpy, h5py") : NULL;
  if (!oracle_py) {
    printf("skipped: SciPy oracle (no %s or no python3 with scipy, numpy, h5py)\n", oracle_path);
    return s;
  }
  tc = tcase_create("oracle");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_oracle, 0, 3 * (int)(sizeof oracle_files / sizeof oracle_files[0]));
  tcase_add_test(tc, test_oracle_tns);
  tcase_add_test(tc, test_oracle_dups);
  suite_add_tcase(s, tc);
  return s;
}
