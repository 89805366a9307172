#!/usr/bin/python3
"""Load a matrix written by spconv with an independent reader and print
'ROWS COLS NNZ SUM_REAL SUM_IMAG FORMAT' (NNZ after summing duplicates;
FORMAT SciPy's as loaded, or the binsparse one).

  check_npz.py FILE.npz       scipy.sparse.load_npz
  check_npz.py FILE.bsp.h5    h5py: the binsparse descriptor (COO, COOC, CSR,
                              CSC, DCSR, DCSC) and its datasets
Exit status 1 with a one-line reason when the file cannot be read.
"""
import json
import sys

import numpy as np
import scipy.sparse as sp


def load_bsp(path):
    import h5py
    with h5py.File(path, "r") as f:
        desc = None
        for _, v in f.attrs.items():
            try:
                d = json.loads(v)
            except Exception:
                continue
            if isinstance(d, dict) and "binsparse" in d:
                desc = d["binsparse"]
        if desc is None:
            raise ValueError("no binsparse descriptor")
        fmt, shape = desc["format"], tuple(desc["shape"])
        vals = f["values"][()] if "values" in f else None
        if fmt in ("COO", "COOR", "COOC"):
            a, b = f["indices_0"][()], f["indices_1"][()]
            r, c = (a, b) if fmt != "COOC" else (b, a)
            v = vals if vals is not None else np.ones(len(r))
            return sp.coo_matrix((v, (r, c)), shape=shape)
        if fmt in ("CSR", "CSC"):
            p, i = f["pointers_to_1"][()], f["indices_1"][()]
            v = vals if vals is not None else np.ones(len(i))
            cls = sp.csr_matrix if fmt == "CSR" else sp.csc_matrix
            return cls((v, i, p), shape=shape)
        if fmt in ("DCSR", "DCSC"):
            i0, p, i1 = f["indices_0"][()], f["pointers_to_1"][()], f["indices_1"][()]
            outer = np.repeat(i0, np.diff(p))
            v = vals if vals is not None else np.ones(len(i1))
            rc = (outer, i1) if fmt == "DCSR" else (i1, outer)
            return sp.coo_matrix((v, rc), shape=shape)
        raise ValueError("binsparse format %r not handled here" % (fmt,))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0])
        return 2
    path = sys.argv[1]
    try:
        m = sp.load_npz(path) if path.endswith(".npz") else load_bsp(path)
    except Exception as exc:  # one line, for the C test to show
        print("cannot read %s: %s" % (path, exc))
        return 1
    c = sp.csr_matrix(m)
    c.sum_duplicates()
    s = complex(c.sum()) if c.nnz else 0j
    print("%d %d %d %.17g %.17g %s" % (c.shape[0], c.shape[1], c.nnz, s.real, s.imag, m.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
