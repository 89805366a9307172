#!/bin/bash
# run_spgemm.sh -- SpGEMM speed: spconv's loop orders against its peers,
# measured in one run on the same inputs, printed as one table (issue 6).
#
#   bench/run_spgemm.sh [FILE...]      (make -C bench run-spgemm)
#   bench/run_spgemm.sh --table        the table again from the last raw lines
#
# The product is C = A A for a square A, C = A A^T otherwise, in every tool.
# With no FILE it takes a few shared matrices (SHARED) and generates (once)
# a larger input, a 7-point stencil on a GRID^3 grid (OUT/spgemm/).  Every
# tool times only the product, in process: spgemm_bench.c (each algorithm
# and auto, sorted and unsorted (--unsorted: rows in the order found, as
# CXSparse and SciPy leave them), the time covering spc_spgemm whole: operand conversions the loop
# order needs, both passes, the CSR result), peer_spgemm_cxsparse.c,
# peer_spgemm_graphblas.c, peer_spgemm_eigen.cpp, peer_scipy_spgemm.py.
# Peers not built or not importable are left out.
# Environment:
#   R=3 BUDGET=10   runs per tool and file (best counts), seconds before
#                   repeating stops
#   GRID=40         stencil7 grid side (64000 rows, 438400 nonzeros)
#   ROUNDS=1        the whole measurement repeated, tools taking turns; the
#                   table keeps each cell's best
#   BENCH_CLOCK=thread  the timed thread's CPU time instead of wall time
#   SHARED="bcsstk13.mtx cryg2500.mtx west0479.mtx lp_share1b.mtx Franz6_id1959_aug.mtx"
#   OUT=bench/out   inputs under OUT/spgemm, raw lines OUT/spgemm_results.tsv
#   SPC_DATA        the shared data folder (default ../shared/data)
#   PYTHON          a python3 with scipy
#   PEERS_DIR       the venv of bench/setup_peers.sh (default bench/out/peers):
#                   its newer SciPy is one more column, scipy-MAJOR.MINOR
#                   (Debian's stays in scipy); MKL's mkl_sparse_spmm
#                   (build/peer_spgemm_mkl, built from it) the column mkl
# OMP_NUM_THREADS=1 and spgemm_bench -t 1: single-threaded comparison.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
B=$here/build
OUT=${OUT:-$here/out}
IN=$OUT/spgemm
R=${R:-3}
BUDGET=${BUDGET:-10}
ROUNDS=${ROUNDS:-1}
GRID=${GRID:-40}
SHARED=${SHARED:-bcsstk13.mtx cryg2500.mtx west0479.mtx lp_share1b.mtx Franz6_id1959_aug.mtx}
DATA=${SPC_DATA:-$root/../shared/data}
res=$OUT/spgemm_results.tsv
export OMP_NUM_THREADS=1
mkdir -p "$IN"

if [ "${1:-}" != "--table" ]; then
  files=("$@")
  if [ ${#files[@]} -eq 0 ]; then
    for f in $SHARED; do [ -f "$DATA/matrices/$f" ] && files+=("$DATA/matrices/$f"); done
    g=$IN/stencil7_$GRID.mtx
    [ -s "$g" ] || "$B/gen" stencil7 --n "$GRID" -o "$g"
    files+=("$g")
  fi
  py=${PYTHON:-}
  if [ -z "$py" ]; then
    for p in /usr/bin/python3 python3; do
      if "$p" -c "import scipy" 2>/dev/null; then py=$p; break; fi
    done
  fi
  . "$here/peers_env.sh"
  new_scipy || echo "scipy-new: not installed (bench/setup_peers.sh)" >&2
  [ -x "$B/peer_spgemm_mkl" ] || echo "mkl: not installed (bench/setup_peers.sh)" >&2
  : > "$res"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for round in $(seq "$ROUNDS"); do
    "$B/spgemm_bench" -r "$R" -b "$BUDGET" -t 1 "${files[@]}" >> "$res"
    for p in peer_spgemm_cxsparse peer_spgemm_graphblas peer_spgemm_eigen peer_spgemm_mkl; do
      [ -x "$B/$p" ] && "$B/$p" -r "$R" -b "$BUDGET" "${files[@]}" >> "$res"
    done
    [ -n "$py" ] && "$py" "$here/peer_scipy_spgemm.py" -r "$R" -b "$BUDGET" "${files[@]}" >> "$res"
    [ -n "$py_new" ] && SCIPY_TOOL=$scipy_new "$py_new" "$here/peer_scipy_spgemm.py" -r "$R" -b "$BUDGET" "${files[@]}" >> "$res"
  done
  echo "# end $(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi

# the table: per file, each tool's seconds; spconv's with the ratio to the
# fastest like peer (lower is better): its sorted products to the fastest
# peer whose C has every row's columns ascending (unsorted_rows=0 on its
# line; GraphBLAS, which prints none, materializes sorted rows), the
# --unsorted one to the fastest peer of all (CXSparse, SciPy and MKL leave
# rows out of order); auto with the algorithm it chose and its ratio to the
# best spconv algorithm
awk -F'\t' '
  function keep(k, v) { if (!(k in t) || t[k] == "-" || v + 0 < t[k] + 0) t[k] = v }
  $1 == "spconv" { f = $5; n = split(f, p, "/"); b = p[n]; files[b] = 1; keep(b SUBSEP $2, $3); nnz[b] = $4;
                   if ($6 ~ /^chose=/) chose[b] = substr($6, 7); next }
  $1 == "skip" || $1 == "error" { n = split($4, p, "/"); if ($2 == "spconv") t[p[n], $3] = "-"; next }
  $2 == "spgemm" { if (!($1 in seentool)) { seentool[$1] = 1; tools[++ntools] = $1 }
                   n = split($5, p, "/"); b = p[n]; keep(b SUBSEP $1, $3); if (!(b in best) || $3 < best[b]) { best[b] = $3; who[b] = $1 }
                   sorted = !($6 ~ /^unsorted_rows=/) || substr($6, 15) + 0 == 0
                   if (!sorted) unsorted_tool[$1] = 1
                   if (sorted && (!(b in sbest) || $3 < sbest[b])) { sbest[b] = $3; swho[b] = $1 } }
  END {
    na = split("gustavson_dense gustavson_hash gustavson_bitmap inner outer auto unsorted_auto", al, " ")
    np = split("cxsparse graphblas eigen scipy", pe, " ")
    for (k = 1; k <= np; k++) ispe[pe[k]] = 1
    for (k = 1; k <= ntools; k++) if (!(tools[k] in ispe)) pe[++np] = tools[k] # scipy-X.Y, mkl
    printf "%-24s %10s", "file", "nnz(C)"
    for (k = 1; k <= np; k++) printf " %10s", pe[k]
    for (k = 1; k <= na; k++) printf " %17s", al[k]
    printf "  %-16s %-14s %s\n", "auto chose", "auto/best algo", "fastest (sorted) peer"
    for (b in files) {
      printf "%-24s %10d", b, nnz[b]
      for (k = 1; k <= np; k++) printf " %10s", ((b, pe[k]) in t) ? sprintf("%.4f", t[b, pe[k]]) : "-"
      bal = 1e30
      for (k = 1; k <= 5; k++) if (((b, al[k]) in t) && t[b, al[k]] != "-" && t[b, al[k]] + 0 < bal) bal = t[b, al[k]] + 0
      for (k = 1; k <= na; k++) {
        v = ((b, al[k]) in t) ? t[b, al[k]] : "-"
        ref = al[k] == "unsorted_auto" ? best[b] : sbest[b]
        if (v == "-") printf " %17s", "-"
        else if (ref > 0) printf " %8.4f (%5.2fx)", v, v / ref
        else printf " %17.4f", v
      }
      printf "  %-16s %-14s %s (%s)\n", chose[b], sprintf("%.2fx", (bal < 1e30 && ((b, "auto") in t)) ? t[b, "auto"] / bal : 0),
             who[b], swho[b]
    }
    un = ""
    for (k = 1; k <= ntools; k++) if (tools[k] in unsorted_tool) un = un (un == "" ? "" : ", ") tools[k]
    printf "\nseconds, best of R runs (of every round), one thread; (x) = spconv time / the fastest peer\n"
    printf "whose rows come out sorted (every algorithm but unsorted_auto) or / the fastest peer of all\n"
    printf "(unsorted_auto); rows left out of order by: %s\n", un == "" ? "none" : un
  }' "$res"
