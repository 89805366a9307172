#!/bin/bash
# run_spw.sh -- the sparse workspace benchmark (issue 5): hash against list
# at several Acc capacities, the workspace against the plain sorting path,
# spconv against the peers' builders on input with duplicates, and an
# out-of-core conversion of a Matrix Market file of several GB.  Every
# configuration runs as its own process under /usr/bin/time -v, so each has
# its peak resident size.  One table at the end (also: --table).
#
#   bench/run_spw.sh            (make -C bench run-spw)
#   bench/run_spw.sh --table    the tables again from the last raw lines
#
# Inputs, generated once into OUT/ (bench/gen):
#   dups<PTS>.mtx   gen uniform, 1000000 x 1000000, 3/4 PTS distinct entries
#                   and PTS/4 duplicates of random ones, shuffled
#   t3dups<PTS>.tns gen tensor3 2000^3, the same counts, shuffled
#   dups<BIGPTS>.mtx  the same at BIGPTS points (fewer configurations)
#   big.mtx         gen uniform 20000000^2, 3/4 OOC_PTS distinct, OOC_PTS/4
#                   duplicates, shuffled (100 M lines: 3.5 GB of text)
# and the SHARED files under $SPC_DATA.
# Environment:
#   R=3 BUDGET=5   runs per configuration (best counts), seconds per one
#   PTS=2000000    points of the generated inputs
#   BIGPTS=16000000  points of the larger matrix (0: leave it out)
#   CONFIGS        spw_bench configurations for the PTS and shared inputs
#   BIGCONFIGS     ... for the BIGPTS input
#   BIGCONVS=coo_csr  its conversions (csr_csc too: "coo_csr csr_csc")
#   OOC_PTS=100000000  lines of big.mtx (0: no out-of-core run)
#   MEM=256M       the --mem budget of the out-of-core run
#   OOC_EXTRA      more out-of-core runs, one per word: options added to
#                  --mem=MEM (e.g. "--spw=hash --acc=4194304"; "," for spaces)
#   KEEP=0         1: keep big.mtx and the out-of-core outputs
#   INPROC=1       0: only the out-of-core part (the in-process raw lines of
#                  the last run are kept for the table)
#   OUT=bench/out/spw   inputs, the peers' COO cache, temporary files
#   SPC_DATA       the shared data folder (default ../shared/data)
#   PYTHON         a python3 with scipy and h5py (default /usr/bin/python3)
# OMP_NUM_THREADS=1 for the in-process timings (single-threaded, as the
# peers); the out-of-core pair runs with the default threads, both alike.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
B=$here/build
OUT=${OUT:-$here/out/spw}
R=${R:-3}
BUDGET=${BUDGET:-5}
PTS=${PTS:-2000000}
BIGPTS=${BIGPTS:-16000000}
OOC_PTS=${OOC_PTS:-100000000}
MEM=${MEM:-256M}
OOC_EXTRA=${OOC_EXTRA:-}
KEEP=${KEEP:-0}
INPROC=${INPROC:-1}
CONFIGS=${CONFIGS:-load sort hash:1K hash:16K hash:256K hash:4M hash:all list:1K list:16K list:256K list:4M list:all hash list bucket}
BIGCONFIGS=${BIGCONFIGS:-load sort hash:16K hash:256K hash:4M hash:all list:16K list:256K list:4M list:all hash list bucket}
BIGCONVS=${BIGCONVS:-coo_csr}
DATA=${SPC_DATA:-$root/../shared/data}
[ -d "$DATA" ] && DATA=$(cd "$DATA" && pwd)
SHARED=${SHARED:-matrices/Groebner_id2003_aug.mtx matrices/bayer10.mtx tensors/med.tns}
PYTHON=${PYTHON:-/usr/bin/python3}
TIMEV=/usr/bin/time
RAW=$OUT/spw_results.tsv
OOCRAW=$OUT/ooc_results.tsv
CACHE=$OUT/cache
mkdir -p "$OUT" "$CACHE" "$OUT/tmp"
export SPCONV_JIT_DIR=$OUT/jit

table() {
  "$PYTHON" - "$RAW" "$OOCRAW" <<'EOF'
import sys, math, os, collections
raw, oocraw = sys.argv[1], sys.argv[2]
rows = collections.OrderedDict()   # (file, conv) -> list of dicts
peers = collections.defaultdict(list)
notes = []
for line in (open(raw) if os.path.exists(raw) else []):  # INPROC=0: none
    f = line.rstrip("\n").split("\t")
    if f[0] in ("skip", "error"):
        notes.append(" ".join(f)); continue
    kv = dict(x.split("=", 1) for x in f if "=" in x)
    if f[0] == "spw":
        d = dict(conv=f[1], cfg=f[2], t=float(f[3]), n=int(f[4]), file=os.path.basename(f[5]), **kv)
        rows.setdefault((d["file"], d["conv"]), []).append(d)
    else:  # a peer line: TOOL CONV SECONDS NNZ FILE method= cpu= sorted= rss_kb=
        d = dict(tool=f[0], conv=f[1], t=float(f[2]), n=int(f[3]), file=os.path.basename(f[4]), **kv)
        peers[(d["file"], d["conv"])].append(d)
def mb(kb): return "%.0f" % (int(kb) / 1024.0)
ratios = collections.defaultdict(list)   # cfg -> cpu time / best workspace cpu time
vs_sort = collections.defaultdict(list)
for (file, conv), L in rows.items():
    load = next((d for d in L if d["cfg"] == "load"), None)
    timed = [d for d in L if d["cfg"] != "load"]
    if not timed: continue
    srt = next((d for d in timed if d["cfg"] == "sort"), None)
    ws = [d for d in timed if d["cfg"] != "sort"]
    bestws = min((float(d["cpu"]) for d in ws), default=None)
    P = [p for p in peers.get((file, conv), []) if p["tool"] != "spw"]
    fp = min(P, key=lambda p: float(p["cpu"])) if P else None
    chks = set(d.get("chk") for d in timed)
    n = timed[0]["n"]
    print("\n%s  %s  (%d input points, %s stored; result fingerprint %s)" % (
        file, conv, n, timed[0].get("out", "?"),
        "agrees in every configuration" if len(chks) == 1 else "DIFFERS: " + ", ".join(sorted(chks))))
    hdr = "| config | wall ns/pt | cpu ns/pt | peak RSS MB | over load MB | flushes | merges | sort/this (cpu) |"
    if fp: hdr += " peer/this (cpu) |"
    print(hdr); print("|" + " --- |" * (hdr.count("|") - 1))
    for d in timed + [dict(p, cfg="%s %s" % (p["tool"], p.get("method", ""))) for p in P]:
        cpu = float(d["cpu"])
        r = "| %s | %.0f | %.0f | %s | %s | %s | %s | %s |" % (
            d["cfg"], d["t"] / n * 1e9, cpu / n * 1e9, mb(d["rss_kb"]),
            mb(int(d["rss_kb"]) - int(load["rss_kb"])) if load and "tool" not in d else "",
            d.get("flushes", ""), d.get("merges", ""),
            "%.2f" % (float(srt["cpu"]) / cpu) if srt else "")
        if fp: r += " %.2f |" % (float(fp["cpu"]) / cpu)
        print(r)
        if "tool" not in d and d["cfg"] != "sort":
            ratios[d["cfg"]].append(cpu / bestws)
            if srt: vs_sort[d["cfg"]].append(cpu / float(srt["cpu"]))
    if fp:
        print("fastest peer (cpu): %s %s, %.0f ns/pt" % (fp["tool"], fp.get("method", ""), float(fp["cpu"]) / n * 1e9))
def gm(v): return math.exp(sum(math.log(x) for x in v) / len(v))
if ratios:
    print("\nWorkspace configurations over every (file, conversion): geometric mean of")
    print("cpu time / the best workspace configuration's, and / the plain sort path's")
    print("| config | cases | / best workspace | / sort |")
    print("| --- | --- | --- | --- |")
    for c, v in sorted(ratios.items(), key=lambda kv: gm(kv[1])):
        print("| %s | %d | %.2f | %s |" % (c, len(v), gm(v), "%.2f" % gm(vs_sort[c]) if vs_sort[c] else ""))
if os.path.exists(oocraw):
    print("\nOut of core (spconv FILE --to=csr -o OUT.bsp.h5, /usr/bin/time -v):")
    print("| run | wall s | user s | sys s | peak RSS MB | input MB |")
    print("| --- | --- | --- | --- | --- | --- |")
    res, later = {}, []
    for line in open(oocraw):
        f = line.rstrip("\n").split("\t")
        if f[0] == "ooc":
            kv = dict(x.split("=", 1) for x in f[2:])
            res[f[1]] = kv
            print("| %s | %s | %s | %s | %s | %s |" % (f[1], kv["wall"], kv["user"], kv["sys"], mb(kv["rss_kb"]), "%.0f" % (int(kv["input_bytes"]) / 2**20)))
        else:
            later.append(" ".join(f))
    print("\n".join(later))
    if "memory" in res and len(res) > 1:
        for k, kv in res.items():
            if k != "memory":
                print("%s / memory: wall %.2fx, peak RSS %.2fx" % (k, float(kv["wall"]) / float(res["memory"]["wall"]), int(kv["rss_kb"]) / int(res["memory"]["rss_kb"])))
for x in notes: print(x)
EOF
}

if [ "${1:-}" = "--table" ]; then table; exit 0; fi

# ---- peak resident size of one command: run CMD under time -v, print its
# stdout lines with rss_kb appended to the raw file.
TV=$OUT/tmp/timev.txt
measured() {
  local outf=$OUT/tmp/stdout.txt
  "$TIMEV" -v -o "$TV" "$@" > "$outf" 2> "$OUT/tmp/stderr.txt"
  local rc=$?
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$TV")
  if [ $rc -ne 0 ] && ! grep -q . "$outf"; then
    printf 'error\t%s\t(exit %d: %s)\n' "$*" $rc "$(tail -1 "$OUT/tmp/stderr.txt")" >> "$RAW"
  fi
  awk -v r="$rss" 'BEGIN{OFS="\t"} $1 == "skip" || $1 == "error" {print; next} {print $0 "\trss_kb=" r}' "$outf" | tee -a "$RAW"
}

# ---- inputs
gen_once() { # FILE ARGS...
  local f=$1; shift
  local t=${f%.*}.tmp.${f##*.} # gen takes the container from the name
  [ -s "$f" ] || { echo "generating $f" >&2; "$B/gen" "$@" -o "$t" && mv "$t" "$f"; }
}
dist=$((PTS * 3 / 4))
gen_once "$OUT/dups$PTS.mtx" uniform --n 1000000 --nnz $dist --dups 0.3333333334 --shuffle
gen_once "$OUT/t3dups$PTS.tns" tensor3 --dims 2000,2000,2000 --nnz $dist --dups 0.3333333334 --shuffle
[ "$BIGPTS" -gt 0 ] && gen_once "$OUT/dups$BIGPTS.mtx" uniform --n 4000000 --nnz $((BIGPTS * 3 / 4)) \
  --dups 0.3333333334 --shuffle

[ "$INPROC" = 0 ] || : > "$RAW"
start=$(date +%s)
echo "# run_spw.sh $(date -u '+%F %T') UTC, $(getconf _NPROCESSORS_ONLN) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), R=$R BUDGET=$BUDGET" >&2
export OMP_NUM_THREADS=1
rm -rf "$SPCONV_JIT_DIR"

convs_of() { case $1 in *.tns) echo "coo_csf csf_mode" ;; *) echo "coo_csr csr_csc" ;; esac; }
# the venv of bench/setup_peers.sh: a newer SciPy, tool scipy-MAJOR.MINOR
. "$here/peers_env.sh"
new_scipy || echo "scipy-new: not installed (bench/setup_peers.sh)" >&2
bench_file() { # FILE CONFIGS [CONVS]
  local f=$1 cfgs=$2 convs=${3:-$(convs_of "$1")}
  for cv in $convs; do
    for c in $cfgs; do measured "$B/spw_bench" -r "$R" -b "$BUDGET" -x "$cv" -c "$c" "$f"; done
  done
  case $f in *.mtx)
    "$B/spw_bench" -r 1 -x coo_csr -c load -w "$CACHE" "$f" > /dev/null
    for p in peer_graphblas peer_eigen_conv; do
      if [ -x "$B/$p" ]; then
        CONV_CACHE=$CACHE measured "$B/$p" -r "$R" -b "$BUDGET" -x coo_csr "$f"
      else
        printf 'skip\t%s\tcoo_csr\t%s\t(not built: not installed)\n' "$p" "$f" | tee -a "$RAW"
      fi
    done
    CONV_CACHE=$CACHE measured "$PYTHON" "$here/peer_scipy_conv.py" -r "$R" -b "$BUDGET" -x coo_csr "$f"
    # the newer SciPy of bench/setup_peers.sh's venv, a peer of its own
    [ -n "$py_new" ] && CONV_CACHE=$CACHE SCIPY_TOOL=$scipy_new \
      measured "$py_new" "$here/peer_scipy_conv.py" -r "$R" -b "$BUDGET" -x coo_csr "$f"
  esac
}
if [ "$INPROC" != 0 ]; then
  files="$OUT/dups$PTS.mtx $OUT/t3dups$PTS.tns"
  for s in $SHARED; do [ -f "$DATA/$s" ] && files="$files $DATA/$s"; done
  for f in $files; do bench_file "$f" "$CONFIGS"; done
  [ "$BIGPTS" -gt 0 ] && bench_file "$OUT/dups$BIGPTS.mtx" "$BIGCONFIGS" "$BIGCONVS"
  echo "# in-process part: $(( $(date +%s) - start )) s" >&2
fi

# ---- out of core
if [ "$OOC_PTS" -gt 0 ]; then
  unset OMP_NUM_THREADS
  big=$OUT/big.mtx
  gen_once "$big" uniform --n 20000000 --nnz $((OOC_PTS * 3 / 4)) --dups 0.3333333334 --shuffle
  : > "$OOCRAW"
  insz=$(stat -c %s "$big")
  one() { # NAME OUTFILE ARGS...
    local name=$1 o=$2; shift 2
    rm -f "$o"
    TMPDIR=$OUT/tmp "$TIMEV" -v -o "$TV" "$root/bin/spconv" "$big" --to=csr -o "$o" "$@" -v 2> "$OUT/tmp/ooc_$name.err"
    local rc=$?
    awk -F': ' -v n="$name" -v rc=$rc -v sz="$insz" '
      /Elapsed \(wall clock\)/ { k = split($2, a, ":"); w = 0; for (i = 1; i <= k; i++) w = w * 60 + a[i] }
      /User time/ {u = $2} /System time/ {s = $2} /Maximum resident/ {r = $2}
      END { printf "ooc\t%s\twall=%.2f\tuser=%s\tsys=%s\trss_kb=%s\tinput_bytes=%s\trc=%s\n", n, w, u, s, r, sz, rc }' "$TV" | tee -a "$OOCRAW"
    grep -v '^\s*$' "$OUT/tmp/ooc_$name.err" | sed "s/^/note\t$name\t/" | tee -a "$OOCRAW"
  }
  # a digest of a CSR .bsp.h5: nnz, md5 of pointers and indices, md5 and sum of values
  digest() {
    "$PYTHON" - "$1" <<'EOF'
import sys, hashlib, h5py, numpy as np
h = h5py.File(sys.argv[1], "r")
p, i, v = (np.asarray(h[k]) for k in ("pointers_to_1", "indices_1", "values"))
print("nnz=%d\tstructure_md5=%s\tvalues_md5=%s\tvalues_sum=%.17g" % (
    len(i), hashlib.md5(p.astype(np.int64).tobytes() + i.astype(np.int64).tobytes()).hexdigest(),
    hashlib.md5(v.tobytes()).hexdigest(), float(np.sum(v))))
EOF
  }
  one memory "$OUT/big_mem.bsp.h5"
  dm=$(digest "$OUT/big_mem.bsp.h5"); printf 'digest\tmemory\t%s\n' "$dm" | tee -a "$OOCRAW"
  [ "$KEEP" = 1 ] || rm -f "$OUT/big_mem.bsp.h5"
  for x in "" $OOC_EXTRA; do
    x=${x//,/ }
    name="mem=$MEM${x:+ $x}"
    # shellcheck disable=SC2086
    one "$name" "$OUT/big_ooc.bsp.h5" --mem="$MEM" $x
    do_=$(digest "$OUT/big_ooc.bsp.h5"); printf 'digest\t%s\t%s\n' "$name" "$do_" | tee -a "$OOCRAW"
    [ "$KEEP" = 1 ] || rm -f "$OUT/big_ooc.bsp.h5"
    s1=$(echo "$dm" | cut -f1-2) s2=$(echo "$do_" | cut -f1-2)
    v1=$(echo "$dm" | cut -f3) v2=$(echo "$do_" | cut -f3)
    if [ "$s1" = "$s2" ]; then
      if [ "$v1" = "$v2" ]; then
        printf 'check\t%s: the same result as in memory (structure and values, bit for bit)\n' "$name" | tee -a "$OOCRAW"
      else
        printf 'check\t%s: the same structure; values differ in rounding (sums: %s / %s)\n' "$name" \
          "$(echo "$dm" | cut -f4)" "$(echo "$do_" | cut -f4)" | tee -a "$OOCRAW"
      fi
    else
      printf 'check\t%s: THE RESULTS DIFFER: %s / %s\n' "$name" "$s1" "$s2" | tee -a "$OOCRAW"
    fi
  done
  [ "$KEEP" = 1 ] || rm -f "$big"
fi
rm -rf "$OUT/tmp"/*
echo "# total: $(( $(date +%s) - start )) s" >&2
table
