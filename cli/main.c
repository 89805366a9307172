/* main.c -- the spconv command: a table of subcommands. */
#include "cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMON \
  "  -q, --quiet        no progress display\n" \
  "  --threads N        threads for parsing and writing (default: all)\n" \
  "  --type T           value type: pattern int64 uint64 float32 float64 complex128\n" \
  "  --expand           expand symmetric/skew/hermitian storage to general\n" \
  "  --dims A,B,...     FROSTT dimensions (default: inferred)\n"

const cli_cmd cli_commands[] = {
    {"info", cmd_info, "Print order, dimensions, stored entries, value type, symmetry,\n"
     "format, levels with index widths, and bytes in memory.\n\n" COMMON,
     "spconv info FILE [options]"},
    {"cat", cmd_cat, "Rewrite IN in the file format named by OUT's extension:\n"
     ".mtx, .tns (either with .gz), .bsp.h5 (binsparse HDF5), .npz (SciPy).\n"
     "Output is written to a temporary name and renamed when complete.\n\n" COMMON
     "  --dup=P            combine duplicates: sum first last min max error\n"
     "  --dup-order=O      with --dup=sum: scipy (default: SciPy's order, bit for\n"
     "                     bit its sums) or file (the file's order)\n"
     "  --keep-symmetry    keep symmetric storage in .bsp.h5 (binsparse 'structure')\n"
     "  --gzip             compress text output even without .gz\n",
     "spconv cat IN -o OUT [options]"},
    {"query", cmd_query, "Evaluate an attribute query over FILE's components (symmetric storage\n"
     "expanded), e.g. 'select [i] -> count(j) as nnz' or, with --remap\n"
     "'(i,j) -> (j - i as d, i, j)', 'select [d] -> id() as used'.  Prints a\n"
     "summary of each result (groups, nonempty, min, max, mean, histogram).\n\n" COMMON
     "  --remap R          coordinate remapping applied before grouping\n"
     "  --param NAME=V     a parameter of the remapping (block sizes, ...)\n"
     "  --all              every value: one 'group<TAB>value...' line per group\n"
     "  --nonempty         with --all: only nonempty groups\n",
     "spconv query FILE QUERY [--remap R] [--param N=V] [--all]"},
    {"convert", cmd_convert, "Convert IN to FORMAT: a built-in format (`spconv formats`) or the path\n"
     "of a YAML tensor-format spec.  `spconv IN --to=FORMAT` is the same command.\n"
     "OUT's extension picks the container: .bsp.h5 keeps the format (its spec is\n"
     "stored with it); .mtx/.tns list the stored components; .npz for csr/csc/coo.\n"
     "Without -o, prints what the result holds.\n\n" COMMON
     "  --to FORMAT        target format name or spec.yaml\n"
     "  --param NAME=V     a format parameter (e.g. --param M=8 --param N=8 for bcsr)\n"
     "  --spec FILE        a YAML level format a user's format needs (repeatable)\n"
     "  --modes=2,0,1      mode order for formats without a remapping (csf, coo, dense)\n"
     "  --dup=P            combine duplicates: sum (default) first last min max error\n"
     "  --dup-order=O      the order a matrix's duplicates are summed in: scipy\n"
     "                     (default: SciPy's, bit for bit; a row's runs of 3 or more\n"
     "                     in rows over 16 entries differ from the file's) or file;\n"
     "                     a stream (--mem) adds in the file's order\n"
     "  --engine E         auto (factory, else JIT, else generic), generic, factory, jit\n"
     "  --no-jit           never compile at run time\n"
     "  --plan=auto|sort|rows|radix|inplace|partition|scatter  auto: count and place\n"
     "                     without sorting where\n"
     "                     the target's levels allow it (-v says which plan ran);\n"
     "                     sort: always sort; rows, radix: count and place, a source\n"
     "                     out of order first bucketed by rows and sorted in cache\n"
     "                     (auto's choice from 2^20 components), or radix-sorted by\n"
     "                     the child coordinate (auto's below)\n"
     "                     inplace, partition, scatter: a source read through its\n"
     "                     levels in another order (CSR to CSC) placed through\n"
     "                     about 256 buckets of columns copied into the result's\n"
     "                     own arrays (auto's choice past the L2), through a COO\n"
     "                     copy in cache-sized buckets, or straight\n"
     "  --spw=hash|list|bucket  order the components in the sparse workspace (Acc as\n"
     "                     a hash table or a list, flushed as sorted runs merged\n"
     "                     k-way; bucket: held whole while --mem allows, counted by\n"
     "                     the outer level, segments sorted; default with --acc:\n"
     "                     list, with --mem alone: bucket)\n"
     "  --acc=N            workspace accumulator capacity in points (default: from\n"
     "                     --mem, at most 262144)\n"
     "  --mem=SIZE         workspace memory (e.g. 256M); runs past it spill to $TMPDIR\n"
     "  -v, --verbose      say how the conversion ran (engine, routines, times)\n",
     "spconv convert IN --to=FORMAT [-o OUT] [options]"},
    {"formats", cmd_formats, "List the built-in tensor formats, one per line, name first; with\n"
     "`show NAME`, print the YAML spec of a tensor or level format.\n",
     "spconv formats [show NAME]"},
    {"sizes", cmd_sizes, "For every built-in format, the exact bytes FILE would take in it (level\n"
     "arrays and values), from attribute queries, without converting; with --to,\n"
     "for that format only (a built-in name or a YAML file), whose refusal is an error.\n\n" COMMON
     "  --to FMT           one format (built-in or YAML)\n"
     "  --spec FILE        a level or tensor format YAML the --to format uses\n"
     "  --param NAME=V     format parameters\n",
     "spconv sizes FILE [--to=FMT]"},
    {"gen", cmd_gen, "Write a standalone C99 file converting format A to format B (built-in\n"
     "names or YAML spec paths): the routines the engines run, emitted from the\n"
     "same IR, and a driver; no spconv header or library needed (README).\n\n"
     "  --from A, --to B   source and target formats\n"
     "  --type T           value type (default float64)\n"
     "  --param NAME=V     parameters of B\n"
     "  --order N          tensor order where both formats take any order (coo,\n"
     "                     csf, dense, a YAML format without order:; default 2)\n"
     "  --spec FILE        a YAML level format a user's format needs (repeatable)\n"
     "  -o FILE            output (default: standard output)\n"
     "With --cuda: a .cu file of CUDA kernels instead (only text: no CUDA needed).\n"
     "  --kernel=K         spmv (thread per row, warp per row, position split) or\n"
     "                     spgemm (Gustavson, hash per row, two passes)\n"
     "  --format=F         the matrix format the kernels read (name or YAML path)\n",
     "spconv gen --from=A --to=B [-o conv.c]\n"
     "       spconv gen --cuda --kernel=spmv|spgemm --format=F [-o kernels.cu]"},
    {"spmv", cmd_spmv, "y = A x (--transpose: A^T x) with x from X (a Matrix Market array) or all\n"
     "ones; y written as a Matrix Market array to -o Y (default: standard output;\n"
     "Y.mtx.gz: gzip-compressed).\n"
     "The kernel is generated from A's format (its read-side level functions): A may\n"
     "be any readable file; one not in a spec format is converted to --to (csr).\n\n" COMMON
     "  --to FORMAT        the format the kernel runs in when A is not one (csr)\n"
     "  --param NAME=V     a parameter of that format (e.g. bcsr's M and N)\n"
     "  --spec FILE        a YAML level format a user's format needs (repeatable)\n"
     "  --transpose        y = A^T x\n"
     "  --repeat R         run R times, report the best time\n"
     "  --schedule S       rows (top level split evenly), positions (the level below\n"
     "                     split into equal chunks of positions), lanes (rows, each\n"
     "                     row in four partial sums: faster, not SciPy's order),\n"
     "                     auto (default: rows; whole rows balanced by entries when\n"
     "                     equal rows are unbalanced: never a row split)\n"
     "  --engine E         auto, generic, factory, jit\n"
     "  --no-jit           never compile at run time\n"
     "  -v, --verbose      time, throughput and the schedule that ran\n",
     "spconv spmv A [X] [-o Y] [--transpose] [--threads N] [--repeat R] [--schedule S]"},
    {"spgemm", cmd_spgemm, "C = A B in a loop order chosen by a cost model (`spconv explain spgemm A B`)\n"
     "or by --algo; two phases, rows over threads.  C's extension picks the\n"
     "container, --to its format (default csr).\n\n" COMMON
     "  --to FORMAT        format of C\n"
     "  --param NAME=V     a parameter of that format (e.g. bcsr's M and N)\n"
     "  --spec FILE        a YAML level format a user's format needs (repeatable)\n"
     "  --algo=A           auto (default), gustavson (i,k,j), inner (i,j,k: B as csc),\n"
     "                     outer (k,i,j: A as csc, the sparse workspace)\n"
     "  --workspace=W      gustavson's row workspace: auto (default), dense, hash,\n"
     "                     bitmap (rows as the OR of B's row bitmaps: dense and\n"
     "                     auto take it where B's rows are dense in their spans)\n"
     "  --unsorted         gustavson into csr: each row's columns in the order found\n"
     "                     (as SciPy and CXSparse leave them; the values are the same)\n"
     "  --engine E         auto, generic, factory, jit (the conversions and routines)\n"
     "  --no-jit           never compile at run time\n"
     "  -v, --verbose      algorithm and time\n",
     "spconv spgemm A B -o C [--to FMT] [--algo A] [--workspace W] [--unsorted] [--threads N]"},
    {"explain", cmd_explain, "Explain how `spconv spgemm A B` would run: each loop order's work as a set\n"
     "expression over the operands' nonzeros, the conversions it needs, the\n"
     "estimates from row and column counts, the candidates dropped because their\n"
     "work contains another's, and the choice.\n\n" COMMON
     "  --algo=A           report A as the choice (the model is printed all the same)\n"
     "  --workspace=W      gustavson's workspace: auto, dense, hash, bitmap\n",
     "spconv explain spgemm A B [--threads N] [--algo A] [--workspace W]"},
    {"check-spec", cmd_check_spec, "Load a level-format or tensor-format spec written in YAML and check\n"
     "every level function, query and remapping in it (docs/formats.md).\n\n"
     "  --spec LEVEL.yaml  a user's level format the spec's levels name (repeatable)\n",
     "spconv check-spec FILE.yaml [--spec LEVEL.yaml ...]"},
    {NULL, NULL, NULL, NULL}};

static void usage(FILE *f) {
  fprintf(f, "spconv %s -- convert and assemble sparse tensors\n\n"
             "usage: spconv COMMAND [options]\n\ncommands:\n", SPCONV_VERSION);
  for (const cli_cmd *c = cli_commands; c->name; c++)
    fprintf(f, "  %-11s %s\n", c->name, c->usage);
  fprintf(f, "\nconversion: spconv IN --to=FORMAT [-o OUT] [--mem=SIZE] [--spw=hash|list|bucket] [--acc=N]\n"
             "\nAn input file may be '-': standard input (a redirected file read in place, a\n"
             "pipe copied to $TMPDIR first: any kind, gzip too).  -o - writes the result to\n"
             "standard output once it is complete: Matrix Market for a matrix, FROSTT otherwise.\n"
             "\n'spconv COMMAND --help' describes a command.\n\n"
             "exit codes: 0 ok, 1 usage error, 2 malformed input, 3 i/o error,\n"
             "            4 out of memory, 5 unsupported, 6 internal error\n");
}

int main(int argc, char **argv) {
  /* One command allocates its arrays once: on a virtual machine whose
   * hypervisor takes free pages back, fresh huge pages fault several times
   * slower than 4 KiB pages (README "Memory"), so the hint is off there
   * unless the environment says otherwise. */
  if (!getenv("SPCONV_HUGEPAGES") && spc_free_page_reporting(NULL))
    setenv("SPCONV_HUGEPAGES", "0", 0);
  cli_catch_signals(); /* an interrupted command leaves no temporary file */
  spc_hdf5_quiet();    /* errors are one line: none of HDF5's own, at exit either */
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    if (argc > 2 && !strcmp(argv[1], "help")) return cli_help(argv[2]);
    usage(stdout);
    return EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("spconv %s\n", SPCONV_VERSION);
    return EXIT_OK;
  }
  for (const cli_cmd *c = cli_commands; c->name; c++) {
    if (strcmp(c->name, argv[1])) continue;
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
      if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return cli_help(c->name);
    return c->run(argc - 1, argv + 1);
  }
  /* `spconv IN --to=FMT ...` is `spconv convert IN --to=FMT ...` */
  if (argv[1][0] != '-' || !argv[1][1]) /* a file, or "-" (standard input) */
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
      if (!strncmp(argv[i], "--to", 4)) {
        for (int j = 2; j < argc && strcmp(argv[j], "--"); j++)
          if (!strcmp(argv[j], "--help") || !strcmp(argv[j], "-h")) return cli_help("convert");
        return cmd_convert(argc, argv);
      }
  fprintf(stderr, "spconv: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return EXIT_USAGE;
}
