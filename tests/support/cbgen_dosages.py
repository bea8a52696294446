"""Dosages of a BGEN file read by cbgen (an independent reader from PyPI), for the tests that
compare colflow's BGEN reader with it.

    python cbgen_dosages.py FILE.bgen OUT.bin

Writes variants x samples float64 values (variant-major): the expected count of each
variant's first allele, 2·P(first/first) + P(first/second) over the probabilities' sum (plink2
normalises layout-1 probabilities the same way), NaN where missing. Unphased diploid data only.
"""
import os
import sys
import tempfile

import numpy as np
from cbgen import bgen_file, bgen_metafile


def main(path: str, out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        metafile = os.path.join(tmp, "x.metafile")
        with bgen_file(path) as bgen:
            bgen.create_metafile(metafile, verbose=False)
            rows = []
            with bgen_metafile(metafile) as mf:
                for k in range(mf.npartitions):
                    for offset in mf.read_partition(k).variants.offset:
                        g = bgen.read_genotype(offset)
                        if g.phased or np.any(g.ploidy != 2) or g.probability.shape[1] != 3:
                            sys.exit(f"{path}: only unphased diploid biallelic data is handled")
                        p = g.probability
                        dosage = (2 * p[:, 0] + p[:, 1]) / p.sum(axis=1)
                        dosage[g.missing] = np.nan
                        rows.append(dosage)
    np.asarray(rows, dtype="<f8").tofile(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
