#!/bin/bash
# run_conv.sh -- format conversion speed: spconv against its peers, measured
# in one run on the same inputs, printed as one table (issue 4).
#
#   bench/run_conv.sh [FILE...]        (make -C bench run-conv)
#   bench/run_conv.sh --table          the table again from the last raw lines
#
# With no FILE it generates (once) the inputs below into OUT/conv/ and adds
# the NSHARED biggest shared matrices.  Every tool times only the
# conversion, in process (conv_bench.c, conv_peer.h, peer_scipy_conv.py).
# Environment:
#   ENGINES="generic auto"  spconv engines to time, one column each
#                (generic, factory, jit, auto = factory where the library
#                has the routine, else jit; a build without the engine
#                option takes generic only)
#   R=3          runs per tool, conversion and file (the best counts)
#   BUDGET=10    stop repeating once a tool spent this many seconds on one
#                conversion of one file
#   PADMAX=4     skip DIA / ELL / BCSR whose padded size exceeds PADMAX x nnz
#   MID=17       R-MAT scale of the mid-size graph (edge factor 16: 1.9 M nnz)
#   BIG=22       R-MAT scale of the large graph (62 M nnz, arrays of a few
#                GB: beyond the last-level cache); BIG=0 leaves it out
#   STENCIL=44   grid side of the 27-point stencil (2.2 M nnz; DIA/ELL/BCSR)
#   TNNZ=2000000 entries of the order-3 tensor (2000^3, uniform; CSF)
#   NSHARED=4    how many of the biggest shared matrices ($SPC_DATA/matrices)
#   BW_MIB=1024  memcpy size for the copy bandwidth
#   OUT=bench/out  inputs go to OUT/conv, the peers' COO cache to
#                OUT/conv/cache, spconv's JIT cache to OUT/conv/jit (emptied
#                first), raw lines to OUT/conv_results.tsv
#   SPC_DATA     the shared data folder (default ../shared/data from the repo)
#   PYTHON       a python3 with scipy (default: the first that imports it)
#   PEERS_DIR    the venv of bench/setup_peers.sh (default bench/out/peers):
#                its newer SciPy is one more peer column, scipy-MAJOR.MINOR
#                (Debian's stays in the column scipy); the MKL peer
#                (build/peer_mkl) is built from it by make -C bench
#   THREADS=1    OMP_NUM_THREADS for every tool (1: the single-threaded
#                comparison; 2: spconv's threaded counting plan against the
#                peers that thread, GraphBLAS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
B=$here/build
OUT=${OUT:-$here/out}
IN=$OUT/conv
CACHE=$IN/cache
ENGINES=${ENGINES:-generic auto}
R=${R:-3}
BUDGET=${BUDGET:-10}
PADMAX=${PADMAX:-4}
MID=${MID:-17}
BIG=${BIG:-22}
STENCIL=${STENCIL:-44}
TNNZ=${TNNZ:-2000000}
NSHARED=${NSHARED:-4}
BW_MIB=${BW_MIB:-1024}
DATA=${SPC_DATA:-$root/../shared/data}
[ -d "$DATA" ] && DATA=$(cd "$DATA" && pwd)
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
THREADS=${THREADS:-1}
export OMP_NUM_THREADS=$THREADS
# A JIT cache of our own, emptied before a measurement: routines are compiled
# by the library under test (the cache key does not cover the library's
# runtime helpers, so an older cache can hold older code).  The compile
# falls in a routine's first run; the best of R runs leaves it out.
export SPCONV_JIT_DIR=$IN/jit
mkdir -p "$IN" "$CACHE"

for p in gen conv_bench; do
  [ -x "$B/$p" ] || { echo "run_conv: $B/$p missing: run 'make -C bench'" >&2; exit 1; }
done
# engines this build of conv_bench takes
engs=""
for e in $ENGINES; do
  if "$B/conv_bench" -e "$e" -x none /dev/null 2>&1 | grep -q "unknown or not in this build"; then
    echo "run_conv: engine $e not in this build: left out" >&2
  else
    engs="$engs $e"
  fi
done
[ -n "$engs" ] || engs=" generic"

# ---- inputs ------------------------------------------------------------------
mk() { # NAME GEN-ARGS...: generate IN/NAME unless present (atomically)
  local name=$1; shift
  [ -s "$IN/$name" ] && return 0
  echo "generating $name: gen $*" >&2
  "$B/gen" "$@" -o "$IN/.$name.tmp" && mv "$IN/.$name.tmp" "$IN/$name"
}
res=$OUT/conv_results.tsv
table_only=0
if [ "${1:-}" = "--table" ]; then
  table_only=1
  shift
  [ -s "$res" ] || { echo "run_conv: no $res yet" >&2; exit 1; }
  engs=$(awk -F'\t' '$1 == "engines" { print $2 }' "$res")
  mapfile -t files < <(awk -F'\t' '$1 == "file" { print $2 }' "$res")
fi
[ $table_only = 1 ] || files=("$@")
if [ $table_only = 0 ] && [ ${#files[@]} -eq 0 ]; then
  if [ -d "$DATA/matrices" ]; then
    while read -r f; do files+=("$f"); done < <(
      ls -S "$DATA"/matrices/*.mtx 2>/dev/null | head -n "$NSHARED")
  else
    echo "run_conv: no shared matrices under $DATA (set SPC_DATA)" >&2
  fi
  mk "rmat$MID.mtx" rmat --scale "$MID" --ef 16
  mk "rmat${MID}_shuf.mtx" rmat --scale "$MID" --ef 16 --shuffle
  mk "stencil27_$STENCIL.mtx" stencil27 --n "$STENCIL"
  mk "tensor3_$TNNZ.tns" tensor3 --tns --dims 2000,2000,2000 --nnz "$TNNZ"
  files+=("$IN/rmat$MID.mtx" "$IN/rmat${MID}_shuf.mtx" "$IN/stencil27_$STENCIL.mtx"
          "$IN/tensor3_$TNNZ.tns")
  if [ "$BIG" -gt 0 ]; then
    # spconv's generic path holds about 130 bytes per entry at its peak
    need=$(( (16 << BIG) * 130 / 1000000000 + 2 ))
    avail=$(awk '/MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)
    if [ "$avail" -lt "$need" ]; then
      echo "run_conv: BIG=$BIG needs about $need GiB, $avail GiB available: left out" >&2
    else
      mk "rmat$BIG.mtx" rmat --scale "$BIG" --ef 16
      mk "rmat${BIG}_shuf.mtx" rmat --scale "$BIG" --ef 16 --shuffle
      files+=("$IN/rmat$BIG.mtx" "$IN/rmat${BIG}_shuf.mtx")
    fi
  fi
fi

# ---- tools -------------------------------------------------------------------
py=${PYTHON:-}
if [ -z "$py" ]; then
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import scipy.sparse' 2>/dev/null; then py=$p; break; fi
  done
fi
missing=""
[ -n "$py" ] || missing="$missing scipy"
[ -x "$B/peer_cxsparse" ] || missing="$missing cxsparse"
[ -x "$B/peer_graphblas" ] || missing="$missing graphblas"
[ -x "$B/peer_eigen_conv" ] || missing="$missing eigen"
# the venv of bench/setup_peers.sh: a newer SciPy, column scipy-MAJOR.MINOR
. "$here/peers_env.sh"
new_scipy || missing="$missing scipy-new: not installed (bench/setup_peers.sh);"
[ -x "$B/peer_mkl" ] || missing="$missing mkl: not installed (bench/setup_peers.sh);"
# TACO: no peer program yet; say whether it is there at all
if command -v taco >/dev/null || ldconfig -p 2>/dev/null | grep -q libtaco ||
   "${py:-python3}" -c 'import pytaco' 2>/dev/null; then
  missing="$missing taco(installed, no peer program yet)"
else
  missing="$missing taco"
fi

run() { # command...: keep result lines, show the rest
  "$@" 2>&1 | while IFS= read -r line; do
    case "$line" in
      spconv$'\t'*|scipy$'\t'*|scipy-*$'\t'*|cxsparse$'\t'*|graphblas$'\t'*|eigen$'\t'*|mkl$'\t'*|memcpy$'\t'*|skip$'\t'*|error$'\t'*)
        printf '%s\n' "$line" >> "$res"
        case "$line" in error*) echo "  $line" >&2 ;; esac ;;
      *) echo "  $line" >&2 ;;
    esac
  done
}
opt=(-r "$R" -b "$BUDGET" -p "$PADMAX")
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
if [ $table_only = 0 ]; then
load0=$(load)
rm -rf "$SPCONV_JIT_DIR" && mkdir -p "$SPCONV_JIT_DIR"
: > "$res"
printf 'library\t%s\n' "$(git -C "$root" describe --always --dirty 2>/dev/null || echo "?")" >> "$res"
printf 'engines\t%s\n' "$engs" >> "$res"
printf 'file\t%s\n' "${files[@]}" >> "$res"
printf 'missing\t%s\n' "$missing" >> "$res"
printf 'params\tR=%s BUDGET=%s PADMAX=%s cores=%s\n' "$R" "$BUDGET" "$PADMAX" "$ncpu" >> "$res"
printf 'load\tbefore\t%s\n' "$load0" >> "$res"
echo "machine: $ncpu cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); engines:$engs; R=$R BUDGET=${BUDGET}s; load $load0" >&2
run "$B/conv_bench" --bw "$BW_MIB" -r 5
export CONV_CACHE=$CACHE
for f in "${files[@]}"; do
  [ -r "$f" ] || { echo "run_conv: skipping unreadable $f" >&2; continue; }
  echo "converting $(basename "$f") ($(du -h "$f" | cut -f1))" >&2
  first=1
  for e in $engs; do
    if [ $first = 1 ]; then
      run "$B/conv_bench" "${opt[@]}" -e "$e" -w "$CACHE" "$f"; first=0
    else
      run "$B/conv_bench" "${opt[@]}" -e "$e" "$f"
    fi
  done
  case "$f" in *.tns) continue ;; esac # no peer does CSF
  [ -n "$py" ] && run "$py" "$here/peer_scipy_conv.py" "${opt[@]}" "$f"
  [ -n "$py_new" ] && SCIPY_TOOL=$scipy_new run "$py_new" "$here/peer_scipy_conv.py" "${opt[@]}" "$f"
  [ -x "$B/peer_cxsparse" ] && run "$B/peer_cxsparse" "${opt[@]}" "$f"
  [ -x "$B/peer_graphblas" ] && run "$B/peer_graphblas" "${opt[@]}" "$f"
  [ -x "$B/peer_eigen_conv" ] && run "$B/peer_eigen_conv" "${opt[@]}" "$f"
  [ -x "$B/peer_mkl" ] && run "$B/peer_mkl" "${opt[@]}" "$f"
done
run "$B/conv_bench" --bw "$BW_MIB" -r 5
printf 'load\tafter\t%s\n' "$(load)" >> "$res"
fi

# ---- the table ---------------------------------------------------------------
field() { awk -F'\t' -v k="$1" -v s="${2:-}" '$1 == k && (s == "" || $2 == s) { print $NF; exit }' "$res"; }
echo
echo "Format conversion, $THREADS thread(s): ns per nonzero, best of the runs"
echo "($(field params)), OMP_NUM_THREADS=$THREADS; library $(field library)."
echo "vs peer = fastest like-for-like peer's time / spconv's best time (above 1:"
echo "spconv faster; goal 1.5).  x bound = spconv's best time / the bandwidth"
echo "bound (bytes that must move / copy bandwidth; goal within 2 for coo_csr and"
echo "csr_csc on inputs beyond the last-level cache).  bound: that time in ns/nnz."
echo "Cells: pad = skipped, padded size over ${PADMAX}x nnz; err = refused or failed,"
echo "skip = not done (raw lines say why); - = the tool has no such conversion."
missing=$(field missing)
[ -n "$missing" ] && echo "Peers skipped:$missing"
echo "Load average (1, 5, 15 min): $(field load before) before, $(field load after) after."
table() { # wall|cpu
awk -F'\t' -v metric="$1" -v engs="$engs" -v files="$(printf '%s\n' "${files[@]}")" '
function kv(k,   i) { for (i = 6; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function base(p) { sub(/.*\//, "", p); sub(/\.(mtx|tns)$/, "", p); return p }
BEGIN {
  nf = split(files, order, "\n")
  nc = split("coo_csr csr_csc csr_dia csr_ell coo_bcsr csc_dia coo_csf csf_mode", convs, " ")
  ne = split(engs, eng, " ")
  np = split("scipy cxsparse graphblas eigen", peers, " ")
  for (p = 1; p <= np; p++) ispeer[peers[p]] = 1
}
# a peer not in the list above (the venv SciPy scipy-X.Y, mkl): one more column
function addpeer(t) { if (t != "spconv" && t != "memcpy" && !(t in ispeer)) { ispeer[t] = 1; peers[++np] = t } }
$1 == "engines" || $1 == "file" || $1 == "missing" || $1 == "params" || $1 == "load" || $1 == "library" { next }
$1 == "memcpy" { g = $4 / $3; if (g > bw) bw = g; next }
$1 == "skip" || $1 == "error" {
  addpeer($2)
  pad = $1 == "skip" && $5 ~ /padded/
  m = $1 == "error" ? "err" : pad ? "pad" : "skip"
  if ($2 == "spconv") { for (e = 1; e <= ne; e++) mark[$3, $4, "spc:" eng[e]] = m; mark[$3, $4, "spconv"] = m }
  else mark[$3, $4, $2] = m
  if (pad && $2 == "spconv") padded[$3, $4] = 1
  next
}
{
  c = $2; f = $5; t = $3 + 0
  addpeer($1)
  if (metric == "cpu") { t = kv("cpu") + 0; if (t <= 0) next } # below the resolution
  tool = $1
  if (tool == "spconv") {
    tool = "spc:" kv("engine")
    bytes[c, f] = kv("bytes")
    if (kv("engine") != "auto" && kv("used") != "" && kv("used") != kv("engine")) used[c, f, tool] = kv("used")
  } else if (kv("sorted") == "0") { # not like-for-like: a footnote
    if (!((c, f, tool) in unsorted) || t < unsorted[c, f, tool]) unsorted[c, f, tool] = t
    usmethod[c, f, tool] = kv("method")
    nnz[c, f] = $4; have[c, f] = 1
    next
  }
  if (!((c, f, tool) in sec) || t < sec[c, f, tool]) { sec[c, f, tool] = t; meth[c, f, tool] = kv("method") }
  nnz[c, f] = $4; have[c, f] = 1
}
function ns(c, f, tool) {
  if ((c, f, tool) in sec) return sprintf("%.1f", sec[c, f, tool] * 1e9 / nnz[c, f])
  if ((c, f, tool) in mark) return mark[c, f, tool]
  return "-"
}
END {
  if (metric != "cpu") printf "Copy bandwidth (memcpy, bytes read + written): %.2f GB/s\n", bw / 1e9
  printf "\n"
  printf "%-9s %-24s %7s", "convert", "input", "nnz"
  for (e = 1; e <= ne; e++) printf " %11s", substr("spc-" eng[e], 1, 11)
  for (p = 1; p <= np; p++) printf " %10s", peers[p]
  printf " %7s %8s %-11s %7s\n", "bound", "vs peer", "(fastest)", "x bound"
  for (k = 1; k <= nc; k++) for (i = 1; i <= nf; i++) {
    c = convs[k]; f = order[i]
    if (!((c, f) in have) && !((c, f, "spconv") in mark)) continue
    if ((c, f) in padded) { padl[c] = padl[c] " " base(f); continue }
    if (!((c, f) in nnz)) nnz[c, f] = 0
    printf "%-9s %-24s %7s", c, substr(base(f), 1, 24),
      (nnz[c, f] >= 1e6 ? sprintf("%.2fM", nnz[c, f] / 1e6) : nnz[c, f] > 0 ? sprintf("%.0fk", nnz[c, f] / 1e3) : "-")
    best = -1
    for (e = 1; e <= ne; e++) {
      tool = "spc:" eng[e]
      if ((c, f, tool) in used) nused++
      printf " %11s", ns(c, f, tool) (((c, f, tool) in used) ? "!" : "")
      if ((c, f, tool) in sec && (best < 0 || sec[c, f, tool] < best)) best = sec[c, f, tool]
    }
    pb = -1; pn = ""
    for (p = 1; p <= np; p++) {
      printf " %10s", ns(c, f, peers[p])
      if ((c, f, peers[p]) in sec && (pb < 0 || sec[c, f, peers[p]] < pb)) { pb = sec[c, f, peers[p]]; pn = peers[p] }
    }
    bt = bw > 0 && bytes[c, f] > 0 ? bytes[c, f] / bw : -1
    cb = (bt > 0 && nnz[c, f] > 0) ? sprintf("%.2f", bt * 1e9 / nnz[c, f]) : "-"
    cp = (pb > 0 && best > 0) ? sprintf("%.3f", pb / best) : "-"
    cx = (bt > 0 && best > 0) ? sprintf("%.1f", best / bt) : "-"
    printf " %7s %8s %-11s %7s\n", cb, cp, (pn == "" ? "" : "(" pn ")"), cx
    for (p = 1; p <= np; p++) if ((c, f, peers[p]) in unsorted)
      notes = notes sprintf("  %s on %s: %s %s alone %.1f ns/nnz, rows left unsorted (not like-for-like)\n",
        c, base(f), peers[p], usmethod[c, f, peers[p]], unsorted[c, f, peers[p]] * 1e9 / nnz[c, f])
  }
  if (metric == "cpu") { notes = "" }
  npad = 0
  for (k = 1; k <= nc && metric != "cpu"; k++) if (convs[k] in padl) {
    if (!npad++) printf "\nSkipped, padded size over the limit (every tool):\n"
    printf "  %s:%s\n", convs[k], padl[convs[k]]
  }
  if (notes != "") printf "\nNot in the table:\n%s", notes
  if (nused) printf "! = the engine asked for did not run every routine (raw line: used=)\n"
}' "$res"
}
table wall
echo
echo "Process CPU time instead of wall clock (steadier while other work shares the"
echo "machine: a descheduled process loses wall time, not CPU time):"
table cpu

echo "(raw lines: $res)"
