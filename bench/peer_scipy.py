#!/usr/bin/env python3
"""peer_scipy.py -- time Python Matrix Market readers: a peer of read_bench.

  peer_scipy.py scipy|fmm [-t T] [-r R] [-b SEC] [--write DIR] FILE...

scipy: scipy.io.mmread (single-threaded; SciPy 1.10 parses in Python/NumPy).
fmm:   fast_matrix_market.mmread with parallelism=T.
Both return a scipy.sparse.coo_matrix.  Only the call is timed (imports,
interpreter start-up and a first warm-up call on a tiny matrix are not).  Same output line as read_bench:
  TOOL THREADS SECONDS NNZ FILE TEXT_BYTES MB/s cpu=CPU_SECONDS
(CPU_SECONDS: the least process CPU time of the runs, all threads.)
A reader that is not importable prints "skip TOOL (not installed)".

--write DIR times the writers instead, as read_bench --write does: each
file read once (untimed, by fast_matrix_market where it imports), then
scipy.io.mmwrite / fast_matrix_market.mmwrite(parallelism=T) into
DIR/NAME.TOOL.mtx, and into DIR/NAME.TOOL.mtx.gz through Python's gzip
module (zlib level 6, one thread: neither writes gzip itself); tools
TOOL-write and TOOL-write-gz, TEXT_BYTES the plain output's size.
"""
import gzip
import sys
import time


def text_bytes(path):
    """Uncompressed size; also warms the page cache."""
    opener = gzip.open if path.endswith(".gz") else open
    n = 0
    with opener(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                return n
            n += len(b)


def write_mode(tool, threads, reps, budget, wdir, files):
    import os
    import scipy.io
    try:
        if tool == "scipy":
            write = lambda p, a: scipy.io.mmwrite(p, a)
        else:
            import fast_matrix_market as fmm
            write = lambda p, a: fmm.mmwrite(p, a, parallelism=threads)
    except ImportError as e:
        print("skip %s-write (not installed: %s)" % (tool, e))
        return 0
    try:
        import fast_matrix_market as fmm
        read = lambda p: fmm.mmread(p, parallelism=2)
    except ImportError:
        read = scipy.io.mmread
    fails = 0
    for path in files:
        a = read(path)
        base = os.path.basename(path).split(".")[0]
        out = os.path.join(wdir, "%s.%s.mtx" % (base, tool))
        for gz in (False, True):
            best, best_cpu, spent = float("inf"), float("inf"), 0.0
            for r in range(reps):
                if r and spent >= budget:
                    break
                c0, t0 = time.process_time(), time.perf_counter()
                if gz:
                    with gzip.open(out + ".gz", "wb", compresslevel=6) as f:
                        write(f, a)
                else:
                    write(out, a)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                spent += dt
                best = min(best, dt)
                best_cpu = min(best_cpu, dc)
            nbytes = os.path.getsize(out)
            print("%s-write%s\t%d\t%.6f\t%d\t%s\t%d\t%.1f\tcpu=%.3f" % (tool, "-gz" if gz else "",
                  threads if tool == "fmm" else 1, best, a.nnz, path, nbytes, nbytes / 1e6 / best, best_cpu),
                  flush=True)
    return 1 if fails else 0


def main(argv):
    if not argv or argv[0] not in ("scipy", "fmm"):
        sys.stderr.write(__doc__)
        return 2
    tool, args = argv[0], argv[1:]
    threads, reps, budget, files, wdir = 1, 3, 20.0, [], None
    while args:
        a = args.pop(0)
        if a == "-t": threads = int(args.pop(0))
        elif a == "--write": wdir = args.pop(0)
        elif a == "-r": reps = int(args.pop(0))
        elif a == "-b": budget = float(args.pop(0))
        else: files.append(a)
    if wdir:
        return write_mode(tool, threads, reps, budget, wdir, files)
    try:
        if tool == "scipy":
            import scipy.io
            read = scipy.io.mmread
        else:
            import fast_matrix_market as fmm
            read = lambda p: fmm.mmread(p, parallelism=threads)
    except ImportError as e:
        print("skip %s (not installed: %s)" % (tool, e))
        return 0
    # Warm-up on a tiny matrix: the first call imports scipy.sparse and starts
    # thread pools, start-up cost that is not the parse.
    import io
    tiny = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 0.5\n"
    if tool == "scipy":
        read(io.BytesIO(tiny))
    else:
        fmm.mmread(io.BytesIO(tiny), parallelism=threads)
    fails = 0
    for path in files:
        nbytes = text_bytes(path)
        best, best_cpu, spent = float("inf"), float("inf"), 0.0
        try:
            for r in range(reps):
                if r and spent >= budget:
                    break
                c0, t0 = time.process_time(), time.perf_counter()
                a = read(path)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                nnz = a.nnz
                del a
                spent += dt
                best = min(best, dt)
                best_cpu = min(best_cpu, dc)
        except Exception as e:  # a reader that rejects a file is reported
            print("error %s %s (%s)" % (tool, path, str(e).splitlines()[0][:100]))
            fails += 1
            continue
        print("%s\t%d\t%.6f\t%d\t%s\t%d\t%.1f\tcpu=%.3f" % (tool, threads if tool == "fmm" else 1,
              best, nnz, path, nbytes, nbytes / 1e6 / best, best_cpu), flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
