#!/bin/bash
# rounds_spw.sh -- the workspace's kinds against the peers' builders,
# interleaved: ROUNDS rounds, each running every configuration and every
# peer once (R runs each, best kept) on FILE, so load from other users of
# the machine falls on all of them alike; then the best and the median
# CPU time per configuration over the rounds, in ns per input point.
#
#   bench/rounds_spw.sh FILE [CONV]      (CONV: coo_csr, the default)
# Environment: ROUNDS=5 R=3 CONFIGS="sort list hash bucket" PYTHON
# The peers (GraphBLAS, Eigen, SciPy) run on coo_csr only, from the COO
# cache spw_bench -w writes into bench/out/spw/cache.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=$here/build
f=$1
cv=${2:-coo_csr}
ROUNDS=${ROUNDS:-5}
R=${R:-3}
CONFIGS=${CONFIGS:-sort list hash bucket}
PYTHON=${PYTHON:-/usr/bin/python3}
CACHE=$here/out/spw/cache
mkdir -p "$CACHE"
export OMP_NUM_THREADS=1
raw=$(mktemp)
[ "$cv" = coo_csr ] && "$B/spw_bench" -r 1 -x coo_csr -c load -w "$CACHE" "$f" > /dev/null
echo "# rounds_spw.sh $(date -u '+%F %T') UTC, $f $cv, load at start $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
  for c in $CONFIGS; do
    "$B/spw_bench" -r "$R" -b 30 -x "$cv" -c "$c" "$f" | awk -v c="$c" '$1 == "spw" {
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^cpu=/) cpu = substr($i, 5)
        if ($i ~ /^chk=/) chk = substr($i, 5)
        if ($i ~ /^vsum=/) vs = substr($i, 6)
      }
      print c, cpu, $5, chk, vs }' >> "$raw"
  done
  if [ "$cv" = coo_csr ]; then
    for p in peer_graphblas peer_eigen_conv; do
      [ -x "$B/$p" ] && CONV_CACHE=$CACHE "$B/$p" -r "$R" -b 30 -x coo_csr "$f" |
        awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^cpu=/) cpu = substr($i, 5); print $1, cpu, $4, "-", "-" }' >> "$raw"
    done
    CONV_CACHE=$CACHE "$PYTHON" "$here/peer_scipy_conv.py" -r "$R" -b 30 -x coo_csr "$f" |
      awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^cpu=/) cpu = substr($i, 5); print $1, cpu, $4, "-", "-" }' >> "$raw"
  fi
  echo "# round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "# load at end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$PYTHON" - "$raw" <<'PY'
import sys, collections, statistics
runs = collections.OrderedDict(); n = {}; chk = collections.defaultdict(set)
for line in open(sys.argv[1]):
    c, cpu, pts, k, vs = line.split()
    runs.setdefault(c, []).append(float(cpu)); n[c] = int(pts)
    if k != "-": chk[k + " " + vs].add(c)
print("| config | rounds | best cpu ns/pt | median cpu ns/pt |")
print("| --- | --- | --- | --- |")
for c, v in runs.items():
    print("| %s | %d | %.0f | %.0f |" % (c, len(v), min(v) / n[c] * 1e9, statistics.median(v) / n[c] * 1e9))
print("results (level arrays hash, value sum):", "; ".join("%s: %s" % (k, ",".join(sorted(v))) for k, v in chk.items()))
PY
rm -f "$raw"
