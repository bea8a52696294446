#!/usr/bin/env python3
"""Regenerates the numpy-written inputs of tests/dense_reader_test.cpp (needs numpy).

Run from anywhere:  python3 tests/data/dense/make_dense_data.py
Each NAME.npy comes with NAME.expected.csv: the same values written by numpy.savetxt with 17
significant digits (nan for missing), so that the test can compare the two readers' output
bit for bit. The hand-written CSV files next to them (r_write_csv.csv, r_write_table.tsv,
pandas_to_csv.csv) mimic what R and pandas write and are not generated here.
"""
import os

import numpy as np
import numpy.lib.format as fmt

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240601)


def save(name, array, version=None):
    path = os.path.join(here, name + ".npy")
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            fmt.write_array(f, array, version=version)
    flat = array.reshape(array.shape[0], -1)
    np.savetxt(os.path.join(here, name + ".expected.csv"), flat.astype(np.float64),
               fmt="%.17g", delimiter=",")


# float64, C order, 9 samples x 4 variables, with missing values and extremes.
a = rng.normal(size=(9, 4))
a[2, 1] = np.nan
a[5, 3] = np.nan
a[0, 0] = -0.0
a[8, 2] = 1e-310  # subnormal
save("numpy_f8_c", a)

# float32, Fortran order, 6 x 5.
b = np.asfortranarray(rng.normal(size=(6, 5)).astype(np.float32))
b[4, 4] = np.nan
save("numpy_f4_fortran", b)

# float64 vector, written with a version 3.0 header.
save("numpy_f8_1d_v3", rng.normal(size=7), version=(3, 0))

# float64, Fortran order, written with a version 2.0 header.
save("numpy_f8_fortran_v2", np.asfortranarray(rng.normal(size=(3, 2))), version=(2, 0))
