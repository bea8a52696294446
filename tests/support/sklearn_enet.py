"""Fits scikit-learn's ElasticNet for the penalized-regression tests.

    python sklearn_enet.py Z.bin ROWS COLS y.bin ALPHA LAMBDA[,LAMBDA...] OUT.tsv

Z.bin holds the standardised matrix (ROWS samples x COLS columns) as column-major
little-endian float64, y.bin the phenotype. For each lambda, fits
ElasticNet(alpha=lambda, l1_ratio=ALPHA) with an intercept and a tight tolerance, and writes
"lambda<TAB>column<TAB>coefficient" for every coefficient.
"""
import sys

import numpy as np
from sklearn.linear_model import ElasticNet


def main():
    rows, cols = int(sys.argv[2]), int(sys.argv[3])
    z = np.fromfile(sys.argv[1], dtype="<f8").reshape((cols, rows)).T
    y = np.fromfile(sys.argv[4], dtype="<f8")
    alpha = float(sys.argv[5])
    lambdas = [float(x) for x in sys.argv[6].split(",")]
    with open(sys.argv[7], "w") as out:
        for lam in lambdas:
            model = ElasticNet(alpha=lam, l1_ratio=alpha, fit_intercept=True, tol=1e-12,
                               max_iter=1000000, selection="cyclic")
            model.fit(z, y)
            for j, b in enumerate(model.coef_):
                out.write(f"{lam!r}\t{j}\t{float(b)!r}\n")


if __name__ == "__main__":
    main()
