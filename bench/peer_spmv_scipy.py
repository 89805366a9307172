#!/usr/bin/env python3
"""peer_spmv_scipy.py -- SciPy y = A @ x with A a csr_matrix: a peer of
spmv_bench (the other peers' line format is in spmv_peer.h).

  peer_spmv_scipy.py [-r R] FILE...        (SPMV_THREADS=1,2)

A is loaded untimed as peer_scipy_conv.py loads it (CONV_CACHE/BASENAME.coo,
else the .mtx; int32 indices when they fit) and made a csr_matrix; x[j] =
1 + (j % 7) / 8.  Each timed run is `A @ x` (a new y each time, as SciPy
does it; garbage collection off), best of R.  SciPy's SpMV is
single-threaded: thread counts above 1 are skipped.
  scipy spmv SECONDS NNZ FILE method=csr_matrix@x threads=1 sum=S
"""
import gc
import os
import sys
import time

# wall time, or the thread's CPU time with BENCH_CLOCK=thread (as the C programs)
clock = time.thread_time if os.environ.get("BENCH_CLOCK") == "thread" else time.perf_counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_scipy_conv import TOOL, load  # noqa: E402


def main(argv):
    import numpy as np
    reps, i = 10, 1
    while i < len(argv) and argv[i].startswith("-") and i + 1 < len(argv):
        if argv[i] == "-r":
            reps = max(1, int(argv[i + 1]))
        i += 2
    threads = [int(t) for t in os.environ.get("SPMV_THREADS", "1,2").split(",") if t]
    for path in argv[i:]:
        try:
            a = load(path).tocsr()
        except Exception as e:  # noqa: BLE001
            print("error\t" + TOOL + "\tspmv\t%s\t(%s)" % (path, e))
            continue
        a.sum_duplicates()
        x = 1.0 + (np.arange(a.shape[1]) % 7) / 8.0
        for t in threads:
            if t != 1:
                print("skip\t" + TOOL + "\tspmv\t%s\t(single-threaded: %d threads)" % (path, t))
                continue
            gc.disable()
            best, y = 1e30, None
            for _ in range(reps):
                t0 = clock()
                y = a @ x
                best = min(best, clock() - t0)
            gc.enable()
            print(TOOL + "\tspmv\t%.9f\t%d\t%s\tmethod=csr_matrix@x\tthreads=1\tsum=%.10e"
                  % (best, a.nnz, path, float(np.sum(y))))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
