"""The data the benchmarks run on: simulations made with `colflow simulate`, the real sets of
../shared/data when they are there, and the stores made from them (remade when older than
their input)."""
from __future__ import annotations

import dataclasses
import os
import subprocess

from .measure import log


@dataclasses.dataclass
class Dataset:
    name: str          # as the results name it, e.g. "sim 10000x50000"
    prefix: str        # PLINK prefix (PREFIX.bed/.bim/.fam)
    pheno: str         # phenotype file (FID IID value)
    samples: int
    variants: int
    real: bool = False

    @property
    def bed(self) -> str:
        return self.prefix + ".bed"

    @property
    def float64_bytes(self) -> int:
        return 8 * self.samples * self.variants


def line_count(path: str) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


class Workspace:
    """A scratch directory under build/ with the colflow binary that made it."""

    def __init__(self, root: str, colflow: str, directory: str):
        self.root, self.colflow, self.dir = root, colflow, directory
        os.makedirs(directory, exist_ok=True)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def run(self, *args: str, env: dict | None = None) -> None:
        subprocess.run([self.colflow, *args], cwd=self.dir, check=True, env=env,
                       stdout=subprocess.DEVNULL)

    def simulate(self, samples: int, variants: int, seed: int = 1, missing: float = 0.01) -> Dataset:
        """colflow simulate (100 causal variants, h2 0.5) with 1% missing calls and seed 1 unless
        told otherwise; kept while its shape matches."""
        tag = "" if (seed, missing) == (1, 0.01) else f"-seed{seed}-missing{missing:g}"
        prefix = self.path(f"sim{samples}x{variants}{tag}")
        bed_bytes = 3 + variants * ((samples + 3) // 4)
        if not (os.path.exists(prefix + ".bed") and os.path.getsize(prefix + ".bed") == bed_bytes
                and os.path.exists(prefix + ".phen")):
            log(f"data: colflow simulate --samples {samples} --variants {variants} --seed {seed} "
                f"--missing {missing:g}")
            self.run("simulate", "--quiet", "--samples", str(samples), "--variants", str(variants),
                     "--missing", str(missing), "--seed", str(seed), "--out", prefix)
        return Dataset(f"sim {samples}x{variants}", prefix, prefix + ".phen", samples, variants)

    def preprocess(self, store: str, source: str, *options: str, env: dict | None = None) -> str:
        """`colflow preprocess OPTIONS --out STORE`, unless STORE is newer than its source file
        (env: the environment of colflow, e.g. measure.libz_env())."""
        if not (os.path.isdir(store) and os.path.getmtime(store) > os.path.getmtime(source)):
            log(f"data: colflow preprocess {' '.join(options)} -> {os.path.basename(store)}")
            self.run("preprocess", "--quiet", "--force", *options, "--out", store, env=env)
        return store

    def store(self, data: Dataset, label: str, *options: str, env: dict | None = None) -> str:
        """The store of `data` made with `colflow preprocess OPTIONS`, named by label."""
        return self.preprocess(self.path(f"{os.path.basename(data.prefix)}-{label}.cf"), data.bed,
                               "--bed", data.prefix, *options, env=env)


def slug(label: str) -> str:
    """A contender's label as part of a file name: "float64 zlib-6 (libz)" -> float64-zlib-6-libz."""
    return "-".join(label.replace("(", "").replace(")", "").split())


def shared_uk10k(root: str) -> Dataset | None:
    """uk10k chromosome 1 (first Mb) with its simulated phenotype, from ../shared/data."""
    base = os.path.join(root, "..", "shared", "data", "uk10k")
    prefix = os.path.join(base, "uk10k_chr1_1mb")
    if not os.path.exists(prefix + ".bed"):
        return None
    return Dataset("uk10k", os.path.normpath(prefix), os.path.normpath(base + "/test.phen"),
                   line_count(prefix + ".fam"), line_count(prefix + ".bim"), real=True)


def store_bytes(store: str) -> int:
    return sum(os.path.getsize(os.path.join(store, f)) for f in os.listdir(store))


def first_columns(ws: Workspace, data: Dataset, columns: int) -> Dataset:
    """A PLINK set of the first `columns` variants of `data` (SNP-major .bed: a prefix of the
    file), for the peers that need a matrix in memory."""
    columns = min(columns, data.variants)
    prefix = ws.path(f"{os.path.basename(data.prefix)}-first{columns}")
    if not (os.path.exists(prefix + ".bed") and os.path.getmtime(prefix + ".bed") > os.path.getmtime(data.bed)):
        column_bytes = (data.samples + 3) // 4
        with open(data.bed, "rb") as src, open(prefix + ".bed.tmp", "wb") as dst:
            dst.write(src.read(3 + columns * column_bytes))
        with open(data.prefix + ".bim") as src, open(prefix + ".bim", "w") as dst:
            dst.writelines(line for _, line in zip(range(columns), src))
        with open(data.prefix + ".fam") as src, open(prefix + ".fam", "w") as dst:
            dst.write(src.read())
        os.replace(prefix + ".bed.tmp", prefix + ".bed")
    return Dataset(f"{data.name}, first {columns} columns", prefix, data.pheno, data.samples,
                   columns, data.real)
