#!/usr/bin/env python3
"""peer_scipy_conv.py -- SciPy conversions: a peer of conv_bench.

  peer_scipy_conv.py [-r R] [-b SEC] [-x CONV,...] [-p PADMAX] FILE.mtx...

  coo_csr   coo_matrix.tocsr()          (sums duplicates; rows sorted)
  csr_csc   csr_matrix.tocsc()
  csr_dia   csr_matrix.todia()          (through COO, as SciPy does it)
  coo_bcsr  coo_matrix.tobsr(blocksize=(4, 4))   (through CSR)
  csc_dia   csc_matrix.todia()
No ELL and no CSF in SciPy.  The input is a general COO with int32 indices
(when they fit) and float64 values, loaded untimed: from CONV_CACHE/BASENAME.coo
when that exists (written by `conv_bench -w`; layout in conv_peer.h), else with
fast_matrix_market or scipy.io.mmread.  Sources of the CSR/CSC conversions are
made untimed.  Only the conversion call is timed (garbage collection off);
SciPy is single-threaded.  Padded formats are skipped as by conv_bench
(padded size over PADMAX x nnz; DIA: ndiag x ncols, BCSR: 16 per 4 x 4 block).
Output lines as the other peers (conv_peer.h):
  scipy CONV SECONDS NNZ FILE method=M cpu=CPU sorted=1
"""
import gc
import os
import sys
import time

# the tool column: "scipy", or another name for another SciPy (the run
# scripts give the venv of bench/setup_peers.sh SCIPY_TOOL=scipy-MAJOR.MINOR)
TOOL = os.environ.get("SCIPY_TOOL") or "scipy"


def load(path):
    import numpy as np
    import scipy.sparse as sp
    cache = os.environ.get("CONV_CACHE")
    cp = os.path.join(cache, os.path.basename(path) + ".coo") if cache else None
    if cp and os.path.exists(cp):
        with open(cp, "rb") as f:
            if f.read(8) != b"SPCCOO1\n":
                raise ValueError("bad cache " + cp)
            m, n, nnz, w = (int(x) for x in np.fromfile(f, dtype="<i8", count=4))
            it = "<i4" if w == 4 else "<i8"
            row = np.fromfile(f, dtype=it, count=nnz)
            col = np.fromfile(f, dtype=it, count=nnz)
            val = np.fromfile(f, dtype="<f8", count=nnz)
        a = sp.coo_matrix((val, (row, col)), shape=(m, n))
    else:
        try:
            import fast_matrix_market as fmm
            a = fmm.mmread(path)
        except ImportError:
            import scipy.io
            a = scipy.io.mmread(path)
        a = sp.coo_matrix(a)
        a.data = a.data.astype(np.float64)
    if max(a.shape) < 2**31 and a.nnz < 2**31:
        a.row = a.row.astype(np.int32)
        a.col = a.col.astype(np.int32)
    return a


def padded(kind, a):
    import numpy as np
    r, c = a.row.astype(np.int64), a.col.astype(np.int64)
    if kind == "dia":
        return len(np.unique(c - r)) * a.shape[1]
    nbc = (a.shape[1] + 3) // 4
    return len(np.unique(r // 4 * nbc + c // 4)) * 16


CONVS = [  # name, source, call, padding kind
    ("coo_csr", "coo", lambda s: s.tocsr(), None),
    ("csr_csc", "csr", lambda s: s.tocsc(), None),
    ("csr_dia", "csr", lambda s: s.todia(), "dia"),
    ("coo_bcsr", "coo", lambda s: s.tobsr(blocksize=(4, 4)), "bcsr"),
    ("csc_dia", "csc", lambda s: s.todia(), "dia"),
]
METHOD = {"coo_csr": "tocsr", "csr_csc": "tocsc", "csr_dia": "todia",
          "coo_bcsr": "tobsr(4,4)", "csc_dia": "todia"}


def main(argv):
    reps, budget, only, padmax, files = 3, 10.0, None, 4.0, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "-r": reps = max(1, int(args.pop(0)))
        elif a == "-b": budget = float(args.pop(0))
        elif a == "-x": only = set(args.pop(0).split(","))
        elif a == "-p": padmax = float(args.pop(0))
        elif a.startswith("-"):
            sys.stderr.write(__doc__)
            return 2
        else: files.append(a)
    try:
        import numpy  # noqa: F401
        import scipy.sparse  # noqa: F401
    except ImportError as e:
        print("skip\t" + TOOL + "\t*\t-\t(not installed: %s)" % e)
        return 0
    fails = 0
    for path in files:
        try:
            coo = load(path)
        except Exception as e:
            print("error\t" + TOOL + "\tread\t%s\t(%s)" % (path, str(e).splitlines()[0][:100]))
            fails += 1
            continue
        srcs, pads = {"coo": coo}, {}
        for name, src, call, pad in CONVS:
            if only and name not in only:
                continue
            if name == "coo_bcsr" and (coo.shape[0] % 4 or coo.shape[1] % 4):
                print("skip\t" + TOOL + "\t%s\t%s\t(shape %dx%d not a multiple of the 4x4 "
                      "blocks: SciPy refuses)" % (name, path, coo.shape[0], coo.shape[1]),
                      flush=True)
                continue
            if pad:
                if pad not in pads:
                    pads[pad] = padded(pad, coo)
                ps = pads[pad]
                if ps > padmax * coo.nnz:
                    print("skip\t" + TOOL + "\t%s\t%s\t(padded size %.1fx nnz)"
                          % (name, path, ps / max(coo.nnz, 1)), flush=True)
                    continue
            try:
                if src not in srcs:
                    srcs[src] = coo.tocsr() if src == "csr" else coo.tocsc()
                s = srcs[src]
                best, best_cpu, spent, r = float("inf"), float("inf"), 0.0, 0
                while r < reps and (r == 0 or spent < budget):
                    gc.disable()
                    c0, t0 = time.process_time(), time.perf_counter()
                    out = call(s)
                    dt, dc = time.perf_counter() - t0, time.process_time() - c0
                    gc.enable()
                    del out
                    r += 1
                    spent += dt
                    best, best_cpu = min(best, dt), min(best_cpu, dc)
            except Exception as e:
                gc.enable()
                print("error\t" + TOOL + "\t%s\t%s\t(%s)" % (name, path, str(e).splitlines()[0][:100]))
                fails += 1
                continue
            print(TOOL + "\t%s\t%.9f\t%d\t%s\tmethod=%s\tcpu=%.6f\tsorted=1"
                  % (name, best, coo.nnz, path, METHOD[name], best_cpu), flush=True)
        del srcs, coo
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
