#!/bin/sh
# Checks for every system package spconv needs to build and test; on Debian
# as root installs the missing ones with apt-get, otherwise prints the exact
# command and fails.  Optional packages (SciPy for cross-checks) are
# installed when possible but never fail the build.
set -u
need=""
# pkg-config module : Debian package
for pair in yaml-0.1:libyaml-dev zlib:zlib1g-dev hdf5:libhdf5-dev check:check; do
  mod=${pair%%:*}; pkg=${pair#*:}
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$mod"; then
    need="$need $pkg"
  fi
done
command -v pkg-config >/dev/null 2>&1 || need="pkg-config $need"
opt=""
if command -v dpkg >/dev/null 2>&1; then
  for pkg in python3-scipy python3-numpy python3-h5py; do
    dpkg -s "$pkg" >/dev/null 2>&1 || opt="$opt $pkg"
  done
fi
[ -z "$need$opt" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "spconv: installing:$need$opt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  if [ -n "$need" ]; then
    apt-get install -y -qq $need >/dev/null || { echo "spconv: apt-get install$need failed" >&2; exit 1; }
  fi
  [ -n "$opt" ] && { apt-get install -y -qq $opt >/dev/null 2>&1 || echo "spconv: optional$opt not installed (SciPy cross-checks will be skipped)" >&2; }
  exit 0
fi
if [ -n "$need" ]; then
  echo "spconv: missing system packages:$need" >&2
  echo "run:  sudo apt-get install -y$need$opt" >&2
  exit 1
fi
echo "spconv: optional packages missing (SciPy cross-checks skipped):$opt" >&2
exit 0
