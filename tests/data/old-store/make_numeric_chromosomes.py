#!/usr/bin/env python3
"""Regenerates numeric_chromosomes.bed/.bim/.fam, the input of the old golden store (needs numpy).

Run from anywhere:  python3 tests/data/old-store/make_numeric_chromosomes.py
50 samples (not a multiple of 4: the last byte of each variant is padded) of the sexes 1, 2,
1, 2, 0 in turn (20 males, 20 females, 10 of unknown sex), and 16 variants with the chromosome
codes PLINK 1 writes: 3 on 1, 5 on 23 (X), 3 on 24 (Y), 2 on 25 (XY), 3 on 26 (MT). Calls are
drawn at a random A1 frequency, heterozygous ones for males on X and Y too, about 10% missing.
The store numeric_chromosomes-77f7e1c.cf was written from them by the code of commit 77f7e1c
(README.md); changing these files means writing that store again with that code.
"""
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
prefix = os.path.join(here, "numeric_chromosomes")
rng = np.random.default_rng(20261122)

samples = 50
sexes = ["1", "2", "1", "2", "0"] * (samples // 5)
chromosomes = ["1"] * 3 + ["23"] * 5 + ["24"] * 3 + ["25"] * 2 + ["26"] * 3

with open(prefix + ".fam", "w") as fam:
    for i, sex in enumerate(sexes):
        fam.write(f"fam{i + 1} s{i + 1} 0 0 {sex} -9\n")

# .bed codes: 0b00 two copies of A1, 0b10 heterozygous, 0b11 two copies of A2, 0b01 missing.
code_of_a1_count = np.array([0b11, 0b10, 0b00], dtype=np.uint8)
alleles = "ACGT"
with open(prefix + ".bim", "w") as bim, open(prefix + ".bed", "wb") as bed:
    bed.write(bytes([0x6C, 0x1B, 0x01]))
    for j, chrom in enumerate(chromosomes):
        p = rng.uniform(0.15, 0.85)
        codes = code_of_a1_count[rng.binomial(2, p, size=samples)]
        codes[rng.random(samples) < 0.1] = 0b01
        padded = np.zeros(-(-samples // 4) * 4, dtype=np.uint8)
        padded[:samples] = codes
        quads = padded.reshape(-1, 4)
        bed.write((quads[:, 0] | quads[:, 1] << 2 | quads[:, 2] << 4 | quads[:, 3] << 6)
                  .astype(np.uint8).tobytes())
        a1, a2 = rng.choice(4, size=2, replace=False)
        bim.write(f"{chrom}\trs{j + 1}\t0\t{10000 * (j + 1)}\t{alleles[a1]}\t{alleles[a2]}\n")
