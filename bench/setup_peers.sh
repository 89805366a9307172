#!/bin/bash
# setup_peers.sh -- newer peers from PyPI for the benchmarks: a Python venv
# under bench/out/peers (ignored by git) holding Intel MKL (mkl-devel, which
# pulls mkl, mkl-include, intel-openmp and tbb) and the newest SciPy and
# NumPy.  Not part of CI or `make test`: run it by hand, then `make -C bench`
# builds the MKL peers (peer_mkl_conv, peer_spmv_mkl, peer_spgemm_mkl) and
# the run scripts add the venv's SciPy as a column "scipy-VERSION".
#
#   bench/setup_peers.sh            create or update the venv, print versions
#   PEERS_DIR=DIR                   another place for the venv
#   PYBASE=python3.X                the Python the venv is made from
#
# Idempotent: an existing venv is reused and pip only installs what is
# missing or newer.  Exits 0 with a message when PyPI cannot be reached (the
# benchmarks then run with the Debian peers only).
set -u
here=$(cd "$(dirname "$0")" && pwd)
DIR=${PEERS_DIR:-$here/out/peers}
PKGS="mkl-devel scipy numpy"

base=${PYBASE:-}
if [ -z "$base" ]; then
  for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import venv, ensurepip' 2>/dev/null; then base=$p; break; fi
  done
fi
[ -n "$base" ] || { echo "setup_peers: no python3 with venv and ensurepip (apt-get install python3-venv)" >&2; exit 1; }

# PyPI reachable?  (pip's index, with the same certificates pip uses)
if ! "$base" - <<'EOF' 2>/dev/null; then
import sys, urllib.request
try:
    urllib.request.urlopen("https://pypi.org/simple/mkl-devel/", timeout=15).read(1)
except Exception:
    sys.exit(1)
EOF
  echo "setup_peers: PyPI (https://pypi.org) not reachable: nothing installed; the benchmarks use the Debian peers only"
  exit 0
fi

if [ ! -x "$DIR/bin/python" ]; then
  echo "setup_peers: creating the venv $DIR (from $base)"
  mkdir -p "$(dirname "$DIR")"
  "$base" -m venv "$DIR" || { echo "setup_peers: venv creation failed" >&2; exit 1; }
fi
py=$DIR/bin/python
echo "setup_peers: pip install --upgrade $PKGS"
if ! "$py" -m pip install --disable-pip-version-check --upgrade $PKGS; then
  echo "setup_peers: pip install failed (network?): the venv is left as it was" >&2
  exit 1
fi

echo
echo "setup_peers: installed in $DIR:"
"$py" -m pip list --disable-pip-version-check 2>/dev/null |
  grep -iE '^(mkl|mkl-devel|mkl-include|intel-openmp|tbb|scipy|numpy) ' | sed 's/^/  /'
"$py" -c 'import scipy, numpy; print("  scipy", scipy.__version__, "numpy", numpy.__version__, "import ok")'
if [ -e "$DIR/include/mkl_spblas.h" ]; then
  lib=$(ls "$DIR"/lib/libmkl_core.so* 2>/dev/null | head -n 1)
  echo "  MKL: $DIR/include/mkl_spblas.h, ${lib:-no libmkl_core.so under $DIR/lib}"
else
  echo "  MKL: mkl_spblas.h not found under $DIR/include" >&2
fi
echo "next: make -C bench   (builds the MKL peers from $DIR)"
