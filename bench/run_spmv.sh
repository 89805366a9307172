#!/bin/bash
# run_spmv.sh -- SpMV speed: spconv's schedules against its peers and
# against the copy bandwidth, measured in one run on the same inputs,
# printed as one table (issue 6).
#
#   bench/run_spmv.sh [FILE...]        (make -C bench run-spmv)
#   bench/run_spmv.sh --table          the table again from the last raw lines
#
# With no FILE: the shared matrices named in SHARED, and two generated ones
# (spmv_bench -g, with a COO cache the peers load): `uniform` (M rows,
# NNZ entries, rows of 1..19 scaled) and `skewed` (the same with a third of
# the entries in 4 dense rows).  A peer's column shows its run with that
# many threads, or its single-threaded run marked (1 thr) when it has no
# other.  Every tool times y = A x in process, best
# of R (spmv_bench.c, spmv_peer.h, peer_spmv_*.c/.cpp/.py).  Environment:
#   R=10 (R_BIG=5 for the generated)  runs per tool, file and setting
#   ROUNDS=1     the whole measurement repeated, tools taking turns; the
#                table keeps each cell's best (a shared machine's load
#                moves single runs by 2x: a peer measured in a quiet
#                moment and spconv in a busy one says nothing)
#   BENCH_CLOCK=thread  the timed thread's CPU time instead of wall time
#                (one thread: THREADS=1)
#   THREADS=1,2  thread counts (SPMV_THREADS for the peers)
#   M=2000000 NNZ=20000000  the generated matrices (NNZ=0 leaves them out)
#   SHARED="bcsstk13.mtx bayer10.mtx Groebner_id2003_aug.mtx arrow.mtx"
#   BW_MIB=512   memcpy size for the copy bandwidth (per thread count)
#   OUT=bench/out  the cache goes to OUT/spmv/cache, raw lines to
#                OUT/spmv_results.tsv
#   SPC_DATA     the shared data folder (default ../shared/data from the repo)
#   PYTHON       a python3 with scipy (default: the first that imports it)
#   PEERS_DIR    the venv of bench/setup_peers.sh (default bench/out/peers):
#                its newer SciPy is one more column, scipy-MAJOR.MINOR
#                (Debian's stays in scipy).  MKL (build/peer_spmv_mkl, built
#                from it by make -C bench): two columns, mkl (mkl_sparse_d_mv
#                on the CSR handle) and mkl-opt (after mkl_sparse_optimize,
#                untimed)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
B=$here/build
OUT=${OUT:-$here/out}
IN=$OUT/spmv
CACHE=$IN/cache
R=${R:-10}
R_BIG=${R_BIG:-5}
ROUNDS=${ROUNDS:-1}
THREADS=${THREADS:-1,2}
M=${M:-2000000}
NNZ=${NNZ:-20000000}
BW_MIB=${BW_MIB:-512}
SHARED=${SHARED:-bcsstk13.mtx bayer10.mtx Groebner_id2003_aug.mtx arrow.mtx}
DATA=${SPC_DATA:-$root/../shared/data}
[ -d "$DATA" ] && DATA=$(cd "$DATA" && pwd)
RAW=$OUT/spmv_results.tsv
export SPMV_THREADS=$THREADS CONV_CACHE=$CACHE
mkdir -p "$IN" "$CACHE"

table() {
  awk -F'\t' '
    function kv(s, k,   i, a) { for (i = 6; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    function base(p,   n, a) { n = split(p, a, "/"); return a[n] }
    function keep(a, k, v) { if (!(k in a) || v + 0 < a[k] + 0) a[k] = v }
    $1 == "copy" { t = kv("", "threads"); if (!(t in bw) || kv("", "GB/s") + 0 > bw[t] + 0) bw[t] = kv("", "GB/s"); next }
    $1 == "skip" || $1 == "error" { note[$1 " " $2 " " base($4)] = $5; next }
    NF >= 7 && $2 == "spmv" {
      f = base($5); t = kv("", "threads"); tool = $1
      if (!(f in seen)) { seen[f] = 1; files[++nf] = f }
      nnz[f] = $4; ts[t] = 1
      if (tool == "spconv") {
        m = kv("", "method"); sub("csr/", "", m)
        keep(sp, f SUBSEP t SUBSEP m, $3); bytes[f] = kv("", "bytes"); ran[f, t, m] = kv("", "ran")
        sum[f, "spconv"] = kv("", "sum")
      } else {
        keep(pt, f SUBSEP t SUBSEP tool, $3); sum[f, tool] = kv("", "sum")
        if (!(tool in tools)) { tools[tool] = 1; tl_order[++ntl] = tool }
      }
    }
    END {
      np = split("scipy cxsparse graphblas eigen", peers, " ")
      for (p = 1; p <= np; p++) ispeer[peers[p]] = 1
      for (i = 1; i <= ntl; i++) if (!(tl_order[i] in ispeer)) peers[++np] = tl_order[i] # scipy-X.Y, mkl, mkl-opt
      printf "| matrix | nnz | threads | copy GB/s | spconv rows | spconv positions | spconv auto |"
      for (p = 1; p <= np; p++) printf " %s |", peers[p]
      printf " auto vs fastest peer |\n|---|---|---|---|---|---|---|"
      for (p = 1; p <= np; p++) printf "---|"
      printf "---|\n"
      for (i = 1; i <= nf; i++) {
        f = files[i]
        for (t = 1; t <= 8; t++) {
          if (!(t in ts) || !((f, t, "rows") in sp)) continue
          printf "| %s | %d | %d | %s |", f, nnz[f], t, bw[t]
          for (s = 1; s <= 3; s++) {
            m = s == 1 ? "rows" : s == 2 ? "positions" : "auto"
            x = sp[f, t, m]
            printf " %.3f ms, %.2f GB/s%s |", 1e3 * x, bytes[f] / x * 1e-9, m == "auto" ? " (" ran[f, t, m] ")" : ""
          }
          best = 0; bt = ""
          for (p = 1; p <= np; p++) {
            x = ""; u = t
            if ((f, t, peers[p]) in pt) x = pt[f, t, peers[p]]
            else if ((f, 1, peers[p]) in pt) { x = pt[f, 1, peers[p]]; u = 1 }
            if (x == "") { printf " - |"; continue }
            printf " %.3f ms, %.2f GB/s%s |", 1e3 * x, bytes[f] / x * 1e-9, u != t ? " (1 thr)" : ""
            for (k = 1; k <= t; k++) if ((f, k, peers[p]) in pt && pt[f, k, peers[p]] < x) x = pt[f, k, peers[p]]
            if (best == 0 || x < best) { best = x; bt = peers[p] }
          }
          if (best > 0) printf " %.2fx (%s) |\n", best / sp[f, t, "auto"], bt
          else printf " - |\n"
        }
      }
      printf "\nGB/s: bytes that must move (4-byte pos and crd, 8-byte val, x, y) / time; copy: memcpy, read + write.\n"
      printf "auto vs fastest peer: the fastest peer time (with at most that many threads) / spconv auto time (> 1: spconv faster).\n"
      for (i = 1; i <= nf; i++) for (tl in tools) {
        f = files[i]
        if ((f, tl) in sum && (f, "spconv") in sum) {
          a = sum[f, tl] + 0; b = sum[f, "spconv"] + 0; d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b
          if (d > 1e-9 * s) printf "WARNING: %s: sum of y by %s (%s) differs from spconv (%s)\n", f, tl, sum[f, tl], sum[f, "spconv"]
        }
      }
      for (k in note) printf "%s: %s\n", k, note[k]
    }' "$RAW"
}

if [ "${1:-}" = "--table" ]; then table; exit 0; fi

. "$here/peers_env.sh"
new_scipy || echo "scipy-new: not installed (bench/setup_peers.sh)" >&2
[ -x "$B/peer_spmv_mkl" ] || echo "mkl: not installed (bench/setup_peers.sh)" >&2
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c "import scipy.sparse" 2>/dev/null; then PYTHON=$p; break; fi
  done
fi

files=()
if [ $# -gt 0 ]; then
  files=("$@")
else
  for f in $SHARED; do [ -f "$DATA/matrices/$f" ] && files+=("$DATA/matrices/$f"); done
fi
: > "$RAW"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for round in $(seq "$ROUNDS"); do
"$B/spmv_bench" --bw "$BW_MIB" -r 5 -t "$THREADS" | tee -a "$RAW" >&2
peers() {
  local r=$1; shift
  for p in cxsparse graphblas eigen; do
    if [ -x "$B/peer_spmv_$p" ]; then "$B/peer_spmv_$p" -r "$r" "$@"
    else for f in "$@"; do printf 'skip\t%s\tspmv\t%s\t(not installed)\n' "$p" "$f"; done; fi
  done
  if [ -n "$PYTHON" ]; then "$PYTHON" "$here/peer_spmv_scipy.py" -r "$r" "$@"
  else for f in "$@"; do printf 'skip\tscipy\tspmv\t%s\t(not installed)\n' "$f"; done; fi
  if [ -n "$py_new" ]; then SCIPY_TOOL=$scipy_new "$py_new" "$here/peer_spmv_scipy.py" -r "$r" "$@"
  else for f in "$@"; do printf 'skip\tscipy-new\tspmv\t%s\t(not installed: bench/setup_peers.sh)\n' "$f"; done; fi
  if [ -x "$B/peer_spmv_mkl" ]; then "$B/peer_spmv_mkl" -r "$r" "$@"
  else for f in "$@"; do printf 'skip\tmkl\tspmv\t%s\t(not installed: bench/setup_peers.sh)\n' "$f"; done; fi
}
if [ ${#files[@]} -gt 0 ]; then
  "$B/spmv_bench" -r "$R" -t "$THREADS" "${files[@]}" | tee -a "$RAW" >&2
  peers "$R" "${files[@]}" | tee -a "$RAW" >&2
fi
if [ $# -eq 0 ] && [ "$NNZ" -gt 0 ]; then
  for kind in uniform skewed; do
    name=$kind
    "$B/spmv_bench" -g "$kind:$M:$NNZ" -w "$CACHE" -r "$R_BIG" -t "$THREADS" "$name" | tee -a "$RAW" >&2
    peers "$R_BIG" "$IN/$name" | tee -a "$RAW" >&2
    rm -f "$CACHE/$name.coo"
  done
fi
done
echo "# end $(date -u '+%H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
table
