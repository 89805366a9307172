#!/bin/bash
# run_read.sh -- Matrix Market read throughput: spconv against its peers,
# measured in one run on the same files, printed as one table.
#
#   bench/run_read.sh [FILE...]        (make -C bench run-read)
#
# With no FILE it generates (once) the inputs below into bench/out/, adds gzip
# copies, and adds the shared matrices of at least 1 MB.  Environment:
#   R=2         runs per reader, file and round (the best of all counts)
#   ROUNDS=2    rounds of the fast readers (spconv, fast_matrix_market),
#               taking turns; the slow peers run one round
#   BUDGET=6    stop repeating once a reader has spent this many seconds on
#               a file (so slow peers run once or twice)
#   SCALE=19    R-MAT scale of the generated graph (edge factor 16)
#   STENCIL=64  grid side of the 27-point stencil
#   UNNZ=8000000  entries of the shuffled uniform random 10^6 x 10^6 matrix
#   OUT=bench/out  where inputs and raw results go
#   SPC_DATA    the shared data folder (default ../shared/data from the repo)
#   PYTHON      a python3 with scipy (default: the first that imports it)
# Raw lines go to bench/out/read_results.tsv; the table to standard output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
B=$here/build
OUT=${OUT:-$here/out}
R=${R:-2}
ROUNDS=${ROUNDS:-2}
BUDGET=${BUDGET:-6}
SCALE=${SCALE:-19}
STENCIL=${STENCIL:-64}
UNNZ=${UNNZ:-8000000}
DATA=${SPC_DATA:-$root/../shared/data}
[ -d "$DATA" ] && DATA=$(cd "$DATA" && pwd)
mkdir -p "$OUT"

for p in gen read_bench; do
  [ -x "$B/$p" ] || { echo "run_read: $B/$p missing: run 'make -C bench'" >&2; exit 1; }
done

# ---- inputs ------------------------------------------------------------------
# mk NAME GEN-ARGS...: generate OUT/NAME unless present (atomically).
mk() {
  local name=$1; shift
  [ -s "$OUT/$name" ] && return 0
  echo "generating $name: gen $*" >&2
  "$B/gen" "$@" -o "$OUT/.$name.tmp" && mv "$OUT/.$name.tmp" "$OUT/$name"
}
gz() {
  [ -s "$1.gz" ] && return 0
  echo "compressing $(basename "$1") (gzip -k -6)" >&2
  gzip -c -6 "$1" > "$1.gz.tmp" && mv "$1.gz.tmp" "$1.gz"
}

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mk "rmat$SCALE.mtx" rmat --scale "$SCALE" --ef 16
  mk "stencil27_$STENCIL.mtx" stencil27 --n "$STENCIL"
  mk "uniform_shuf.mtx" uniform --m 1000000 --n 1000000 --nnz "$UNNZ" --shuffle
  mk "rmat${SCALE}_pattern.mtx" rmat --scale "$SCALE" --ef 16 --field pattern
  gz "$OUT/rmat$SCALE.mtx"
  gz "$OUT/stencil27_$STENCIL.mtx"
  files=("$OUT/rmat$SCALE.mtx" "$OUT/stencil27_$STENCIL.mtx"
         "$OUT/uniform_shuf.mtx" "$OUT/rmat${SCALE}_pattern.mtx"
         "$OUT/rmat$SCALE.mtx.gz" "$OUT/stencil27_$STENCIL.mtx.gz")
  if [ -d "$DATA/matrices" ]; then
    while read -r f; do files+=("$f"); done < <(
      find "$DATA/matrices" -maxdepth 1 -name '*.mtx' -size +999999c | sort)
  else
    echo "run_read: no shared matrices under $DATA (set SPC_DATA)" >&2
  fi
fi

# ---- readers -----------------------------------------------------------------
py=${PYTHON:-}
if [ -z "$py" ]; then
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import scipy.io' 2>/dev/null; then py=$p; break; fi
  done
fi
have_scipy=0; have_fmm=0
[ -n "$py" ] && have_scipy=1
for p in $py python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import fast_matrix_market, scipy' 2>/dev/null; then
    have_fmm=1; fmm_py=$p; break
  fi
done

res=$OUT/read_results.tsv
: > "$res"
run() { # tool-label command...: keep result lines, show the rest
  "$@" 2>&1 | while IFS= read -r line; do
    case "$line" in
      *$'\t'*) printf '%s\n' "$line" >> "$res" ;;
      *) echo "  $line" >&2 ;;
    esac
  done
}
opt=(-r "$R" -b "$BUDGET")
nproc_=$(nproc 2>/dev/null || echo "?")
load() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?"; }
load0=$(load)
echo "machine: $(uname -m), $nproc_ cores; R=$R ROUNDS=$ROUNDS BUDGET=${BUDGET}s; load average $load0" >&2
for f in "${files[@]}"; do
  [ -r "$f" ] || { echo "run_read: skipping unreadable $f" >&2; continue; }
  echo "reading $(basename "$f") ($(du -h "$f" | cut -f1))" >&2
  cat "$f" > /dev/null
  # The fast readers take turns, ROUNDS times, so that each sees the quiet
  # and the busy moments of a shared machine alike; the best run counts.
  for ((round = 0; round < ROUNDS; round++)); do
    run "$B/read_bench" "${opt[@]}" -t 1,2 "$f"
    case "$f" in *.gz) run "$B/read_bench" --zlib "${opt[@]}" "$f" ;; esac
    if [ $have_fmm = 1 ]; then
      run "$fmm_py" "$here/peer_scipy.py" fmm -t 1 "${opt[@]}" "$f"
      run "$fmm_py" "$here/peer_scipy.py" fmm -t 2 "${opt[@]}" "$f"
    fi
  done
  [ -x "$B/peer_cholmod" ] && run "$B/peer_cholmod" "${opt[@]}" "$f"
  [ -x "$B/peer_eigen" ] && run "$B/peer_eigen" "${opt[@]}" "$f"
  [ $have_scipy = 1 ] && run "$py" "$here/peer_scipy.py" scipy "${opt[@]}" "$f"
done

# ---- the tables --------------------------------------------------------------
load1=$(load)
missing=""
[ $have_scipy = 1 ] || missing="$missing scipy"
[ $have_fmm = 1 ] || missing="$missing fast_matrix_market"
[ -x "$B/peer_cholmod" ] || missing="$missing cholmod"
[ -x "$B/peer_eigen" ] || missing="$missing eigen"
# table wall|cpu: MB/s of text per file and reader from the raw lines.
table() {
  awk -F'\t' -v metric="$1" -v files="$(printf '%s\n' "${files[@]}")" '
  BEGIN { nf = split(files, order, "\n") }
  { f = $5; k = $1 "/" $2; t = $3
    if (metric == "cpu") { if ($2 != 1 || $8 !~ /^cpu=/) next; t = substr($8, 5) }
    if (!((f, k) in sec) || t < sec[f, k]) sec[f, k] = t
    if ($6 > bytes[f]) bytes[f] = $6 }
  function mbps(f, k) { return ((f, k) in sec) && sec[f, k] > 0 ? bytes[f] / 1e6 / sec[f, k] : -1 }
  function cell(v) { return v < 0 ? "-" : sprintf("%.0f", v) }
  function ratio(a, b) { return a < 0 || b <= 0 ? "-" : sprintf("%.2f", a / b) }
  END {
    if (metric == "cpu")
      printf "%-24s %7s %7s %7s %7s %7s %7s %7s %7s\n", "file", "MB", "spc1T",
        "fmm1T", "cholmod", "eigen", "scipy", "zlib", "1T/peer"
    else
      printf "%-24s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "file",
        "MB", "spc1T", "spc2T", "fmm1T", "fmm2T", "cholmod", "eigen", "scipy",
        "zlib", "1T/peer", "2T/peer", "2T/1T"
    np = split("fmm/1 cholmod/1 eigen/1 scipy/1", one, " ")
    for (i = 1; i <= nf; i++) {
      f = order[i]; if (f == "" || !(f in bytes)) continue
      n = f; sub(/.*\//, "", n)
      s1 = mbps(f, "spconv/1"); s2 = mbps(f, "spconv/2")
      p1 = -1
      for (j = 1; j <= np; j++) { v = mbps(f, one[j]); if (v > p1) p1 = v }
      pa = p1; v = mbps(f, "fmm/2"); if (v > pa) pa = v
      if (metric == "cpu")
        printf "%-24s %7.1f %7s %7s %7s %7s %7s %7s %7s\n", substr(n, 1, 24),
          bytes[f] / 1e6, cell(s1), cell(mbps(f, "fmm/1")),
          cell(mbps(f, "cholmod/1")), cell(mbps(f, "eigen/1")),
          cell(mbps(f, "scipy/1")), cell(mbps(f, "zlib/1")), ratio(s1, p1)
      else
        printf "%-24s %7.1f %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n",
          substr(n, 1, 24), bytes[f] / 1e6, cell(s1), cell(s2),
          cell(mbps(f, "fmm/1")), cell(mbps(f, "fmm/2")),
          cell(mbps(f, "cholmod/1")), cell(mbps(f, "eigen/1")),
          cell(mbps(f, "scipy/1")), cell(mbps(f, "zlib/1")),
          ratio(s1, p1), ratio(s2, pa), ratio(s2, s1)
    }
  }' "$res"
}
echo
echo "Matrix Market read throughput: MB/s of text (1 MB = 1e6 bytes; .gz rows: of"
echo "the inflated text), best of $R runs x $ROUNDS rounds (slow peers: $R runs, within"
echo "${BUDGET}s), $nproc_ cores."
echo "1T/peer = spconv 1 thread / fastest 1-thread peer; 2T/peer = spconv 2 threads"
echo "/ fastest peer at any thread count; 2T/1T = spconv's own speed-up."
[ -n "$missing" ] && echo "skipped (not installed):$missing"
echo "1-minute load average: $load0 before, $load1 after."
echo
echo "Wall clock:"
table wall
echo
echo "Single-thread CPU time (text bytes / process CPU seconds; steadier than wall"
echo "clock when other work shares the machine):"
table cpu
echo
# Readers that store a different number of entries than spconv: expected for
# symmetric files (SciPy and fast_matrix_market expand them), a bug otherwise.
awk -F'\t' '$1 == "spconv" { n[$5] = $4 } $1 != "spconv" && $1 != "zlib" { o[$5, $1] = $4 }
  END { for (k in o) { split(k, a, SUBSEP); if ((a[1] in n) && n[a[1]] != o[k])
          printf "nnz differs: %s: spconv %s, %s %s\n", a[1], n[a[1]], a[2], o[k] } }' "$res" | sort -u
echo "(raw lines: $res)"
