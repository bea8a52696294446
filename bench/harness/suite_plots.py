"""The pictures of `colflow-plot` on inputs of the sizes a study makes (issue 55: each picture
from a file of a million rows in under 10 s), timed from the shell as a user runs them:

  manhattan, qq   an association table of 1,000,000 rows in colflow assoc's columns (20,000
                  with --quick): 22 chromosomes, uniform p-values with 10 loci reaching 1e-12
                  to 1e-40
  trace           a bayesr trace of 10,000 iterations (2,000)
  pcs             an eigenvec of 100,000 samples and 10 PCs (5,000), coloured by a population
                  column of a samples file
  ld              the 300 variants drawn from a banded LD matrix of 2,000 variants (500)

The inputs are written once with numpy (seeds 1-4) into the workspace. Each run is one process of
the package's `colflow-plot` (build/pyvenv, built from this checkout) writing a PNG: wall time
and peak RSS, interpreter start and imports included. Goal: under 10 s each.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from .context import Context
from .measure import Comparison, log, timed
from .suite_python import package_python

GOAL_SECONDS = 10.0
ASSOC_HEADER = "#CHR\tPOS\tID\tA1\tA2\tN_OBS\tBETA\tSE\tT_STAT\tP\tNOTE"


def write_assoc(path: str, rows: int, rng: np.random.Generator) -> None:
    """colflow assoc's table: chromosomes 1-22 in order with rows in proportion to a
    chromosome's length, positions increasing within each, uniform p-values but ten loci of
    50 variants each whose p falls to 10^-12 .. 10^-40 at their peak."""
    lengths = 250 - 8 * np.arange(22)
    chrom = np.repeat(np.arange(1, 23), np.diff(np.round(np.concatenate(
        [[0], np.cumsum(lengths)]) / lengths.sum() * rows).astype(np.int64)))
    pos = np.concatenate([np.sort(rng.choice(length * 1_000_000, np.count_nonzero(chrom == c),
                                             replace=False)) + 1
                          for c, length in zip(range(1, 23), lengths)])
    p = rng.uniform(size=rows)
    for k, peak in enumerate(rng.choice(rows - 50, 10, replace=False)):
        depth = np.linspace(12 + 28 * k / 9, 1, 25)
        p[peak:peak + 50] = 10.0 ** -np.concatenate([depth[::-1], depth])
    beta = rng.normal(0, 0.05, rows)
    se = np.full(rows, 0.02)
    with open(path + ".tmp", "w") as out:
        out.write(ASSOC_HEADER + "\n")
        np.savetxt(out, np.column_stack([chrom, pos, np.arange(rows), beta, se, beta / se, p]),
                   fmt="%d\t%d\trs%d\tA\tG\t10000\t%.6g\t%.6g\t%.6g\t%.6g\t.")
    os.replace(path + ".tmp", path)


def write_trace(path: str, iterations: int, rng: np.random.Generator) -> None:
    """A bayesr trace: ITER MU SIGMA2_G SIGMA2_E H2 VAR_G NONZERO PI_0..PI_3 of a chain that
    mixes (an AR(1) around h² 0.5)."""
    h2 = np.empty(iterations)
    h2[0] = 0.1
    noise = rng.normal(0, 0.02, iterations)
    for i in range(1, iterations):
        h2[i] = 0.5 + 0.8 * (h2[i - 1] - 0.5) + noise[i]
    nonzero = np.round(400 + 50 * np.sin(np.arange(iterations) / 200) + rng.normal(0, 10,
                                                                                    iterations))
    pi = rng.dirichlet([90, 6, 3, 1], iterations)
    table = np.column_stack([np.arange(1, iterations + 1), rng.normal(0, 0.01, iterations), h2,
                             1 - h2, h2, h2, nonzero, pi])
    np.savetxt(path, table, delimiter="\t", fmt=["%d"] + ["%.6g"] * 5 + ["%d"] + ["%.6g"] * 4,
               header="ITER\tMU\tSIGMA2_G\tSIGMA2_E\tH2\tVAR_G\tNONZERO\tPI_0\tPI_1\tPI_2\tPI_3",
               comments="")


def write_eigenvectors(path: str, samples_path: str, samples: int,
                       rng: np.random.Generator) -> None:
    """colflow pca's PREFIX.eigenvec (#FID IID PC1..PC10) of three populations, and a samples
    file (IID POP) naming each sample's."""
    population = rng.integers(0, 3, samples)
    centres = rng.normal(0, 0.01, (3, 10))
    pcs = centres[population] + rng.normal(0, 0.002, (samples, 10))
    ids = np.char.add("s", np.arange(samples).astype(str))
    np.savetxt(path, np.column_stack([ids, ids, pcs.astype(str)]), fmt="%s", delimiter="\t",
               header="#FID\tIID\t" + "\t".join(f"PC{k}" for k in range(1, 11)), comments="")
    names = np.array(["AFR", "EAS", "EUR"])[population]
    np.savetxt(samples_path, np.column_stack([ids, names]), fmt="%s", header="IID POP",
               comments="")


def write_band(path: str, variants: int, width: int, rng: np.random.Generator) -> None:
    """colflow ld's banded matrix (docs/FORMAT.md Appendix B), float32, each variant's row from
    itself to `width` variants on, r² decaying with distance."""
    ends = np.minimum(np.arange(variants) + width, variants)
    values = np.concatenate([np.exp(-np.arange(e - i) / 40) * rng.uniform(0.3, 1, e - i)
                             for i, e in enumerate(ends)])
    values[np.concatenate([[0], np.cumsum(ends - np.arange(variants))[:-1]])] = 1.0
    with open(path, "wb") as out:
        out.write(b"CFLDBAND" + struct.pack("<IIQQII", 1, 4, variants, values.size, 1, 0))
        out.write(ends.astype("<u8").tobytes() + values.astype("<f4").tobytes())


def inputs(ctx: Context) -> dict[str, list[str]]:
    """The arguments of each picture's command, its inputs written first (once per size)."""
    quick = ctx.scale.quick
    rows, iterations, samples, variants = ((20_000, 2_000, 5_000, 500) if quick
                                           else (1_000_000, 10_000, 100_000, 2_000))
    folder = ctx.ws.path("plots")
    os.makedirs(folder, exist_ok=True)
    table = os.path.join(folder, f"scan-{rows}.assoc.tsv")
    chain = os.path.join(folder, f"chain-{iterations}.trace.tsv")
    vec = os.path.join(folder, f"pca-{samples}.eigenvec")
    pops = os.path.join(folder, f"pca-{samples}.pop.txt")
    band = os.path.join(folder, f"region-{variants}.ldband")
    # A seed per input: each file is the same whichever others a previous run left.
    for seed, path, write in (
            (1, table, lambda rng: write_assoc(table, rows, rng)),
            (2, chain, lambda rng: write_trace(chain, iterations, rng)),
            (3, vec, lambda rng: write_eigenvectors(vec, pops, samples, rng)),
            (4, band, lambda rng: write_band(band, variants, 400, rng))):
        if not os.path.exists(path):
            log(f"plots: writing {os.path.basename(path)}")
            write(np.random.default_rng(seed))
    return {f"manhattan, {rows:,} rows": ["manhattan", table],
            f"qq, {rows:,} rows": ["qq", table],
            f"trace, {iterations:,} iterations": ["trace", chain],
            f"pcs, {samples:,} samples": ["pcs", vec, "--color-by", "POP", "--samples", pops],
            f"ld, 300 of {variants:,} variants": ["ld", band, "--start", "100", "--count", "300"]}


def run(ctx: Context) -> list[Comparison]:
    python = package_python(ctx)
    program = os.path.join(os.path.dirname(python), "colflow-plot")
    folder = ctx.ws.path("plots")
    comparisons = []
    for task, args in inputs(ctx).items():
        out = os.path.join(folder, args[0] + ".png")
        cmp = Comparison("plots", "synthetic", task)
        cmp.add("colflow-plot", lambda args=args, out=out: timed([program, *args, "--out", out],
                                                                 folder))
        cmp.run(ctx.scale.rounds, log)
        comparisons.append(cmp)
    return comparisons
