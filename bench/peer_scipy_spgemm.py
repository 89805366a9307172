#!/usr/bin/env python3
"""peer_scipy_spgemm.py -- SciPy sparse product: a peer of spgemm_bench.

    peer_scipy_spgemm.py [-r R] [-b SEC] FILE.mtx...

Loads each file as peer_scipy_conv.py does (the COO cache when CONV_CACHE
names it), makes A and B (A when square, A^T otherwise) as CSR untimed,
and times A @ B (SciPy's csr_matmat: Gustavson, two passes, one thread).
Output lines as spgemm_peer.h: TOOL spgemm SECONDS NNZ(C) FILE unsorted_rows=N
(C's rows whose columns SciPy leaves out of order, counted untimed)."""
import os
import sys
import time

import numpy as np

# wall time, or the thread's CPU time with BENCH_CLOCK=thread (as the C programs)
clock = time.thread_time if os.environ.get("BENCH_CLOCK") == "thread" else time.perf_counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_scipy_conv import TOOL, load  # noqa: E402


def main(argv):
    reps, budget, files = 3, 10.0, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "-r":
            reps = int(args.pop(0))
        elif a == "-b":
            budget = float(args.pop(0))
        else:
            files.append(a)
    for path in files:
        try:
            a = load(path)
        except Exception as e:  # noqa: BLE001
            print("skip\t" + TOOL + "\tspgemm\t%s\t(%s)" % (path, e))
            continue
        A = a.tocsr()
        B = A if a.shape[0] == a.shape[1] else a.T.tocsr()
        best, spent, r, nnz, unsorted = 1e30, 0.0, 0, 0, 0
        while r < reps and (r == 0 or spent < budget):
            t0 = clock()
            C = A @ B
            dt = clock() - t0
            r, spent, best, nnz = r + 1, spent + dt, min(best, dt), C.nnz
            if r == 1:  # rows whose columns SciPy leaves out of order (untimed)
                ind, ptr = C.indices, C.indptr
                down = np.flatnonzero(ind[1:] < ind[:-1]) + 1  # positions below the one before
                row = np.searchsorted(ptr, down, side="right") - 1
                unsorted = len(np.unique(row[down > ptr[row]]))
            del C
        print(TOOL + "\tspgemm\t%.9f\t%d\t%s\tunsorted_rows=%d" % (best, nnz, path, unsorted), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
