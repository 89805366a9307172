# peers_env.sh -- sourced by the run_*.sh scripts: the newer SciPy of
# bench/setup_peers.sh's venv (PEERS_DIR, default bench/out/peers).
# new_scipy sets py_new (its python) and scipy_new (the tool name,
# scipy-MAJOR.MINOR), both empty and status 1 when the venv is not there.
new_scipy() {
  PEERS_DIR=${PEERS_DIR:-$here/out/peers}
  py_new="" scipy_new=""
  local v
  [ -x "$PEERS_DIR/bin/python" ] &&
    v=$("$PEERS_DIR/bin/python" -c 'import scipy.sparse, scipy; print(".".join(scipy.__version__.split(".")[:2]))' 2>/dev/null) ||
    return 1
  py_new=$PEERS_DIR/bin/python scipy_new=scipy-$v
}
