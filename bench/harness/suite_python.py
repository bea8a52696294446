"""The Python package against bed-reader, in the same interpreter (the environment that
scripts/python-test.sh builds the package into, bed-reader installed beside it):

  read            the whole genotype matrix into a new numpy array, float32 and float64, order
                  "F": colflow.open(store).read(dtype=...) on the genotype store against
                  bed_reader.open_bed(bed).read(dtype=...) on the .bed it was made from
  stream          every column through a numpy function, 1,000 columns at a time (missing
                  values 0, then the block's products with a fixed vector): store.stream()
                  against bed-reader reading the same column ranges one after another

Both inputs are read once first, so that the page cache holds them, and every contender runs
once untimed before the rounds (after a process that allocated gigabytes the next one spends
seconds in the kernel making huge pages again, whichever library it runs). Each run prints the
seconds of its timed part only (no interpreter start, no imports) and a checksum of what it read; the contenders of a comparison must agree on it, or the run stops.
Both libraries use --threads threads. numpy's BLAS runs on one thread (OPENBLAS_NUM_THREADS=1
and the like): its threads otherwise spin while they wait for work and take the cores from the
threads that read, which made repeated runs of either contender vary by 2x. Peak memory is the
process's: for colflow it includes the pages of the mapped store that the run touched and the
pandas that `import colflow` loads.
"""
from __future__ import annotations

import json
import os
import subprocess

from .context import Context
from .data import Dataset
from .measure import Comparison, Run, log, timed_reporting

BATCH = "1000"
ONE_BLAS_THREAD = {**os.environ, **{v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                     "MKL_NUM_THREADS")}}


def package_python(ctx: Context) -> str:
    """The interpreter of build/pyvenv with the package built from this checkout (a rebuild
    compiles only what changed since the last one)."""
    log("python: building the package (scripts/python-test.sh --build-only)")
    subprocess.run(["bash", "scripts/python-test.sh", "--build-only"], cwd=ctx.root, check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(ctx.root, "build", "pyvenv", "bin", "python3")


def checked(python: str, ctx: Context, task: list[str], agreed: dict) -> Run:
    """One run of a peers task in the package's interpreter; its checksum must be the one every
    other run of the same comparison reported."""
    run = timed_reporting([python, "-m", "harness.peers", *task], ctx.peer_cwd, ONE_BLAS_THREAD)
    checksum = json.loads(run.stdout.strip().splitlines()[-1])["checksum"]
    key = (task[0], task[3] if task[0] == "python-read" else "")
    if agreed.setdefault(key, checksum) != checksum:
        raise SystemExit(f"{' '.join(task)}: checksum {checksum}, another contender read "
                         f"{agreed[key]}: the libraries disagree on the values")
    return run


def warm(*paths: str) -> None:
    """Reads files (a store's too) once, so that the page cache holds both libraries' inputs
    and the first run of a comparison does not pay the disk for the other's benefit."""
    for path in paths:
        files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs] if os.path.isdir(path) else [path]
        for name in files:
            with open(name, "rb") as f:
                while f.read(1 << 24):
                    pass


def run(ctx: Context) -> list[Comparison]:
    python = package_python(ctx)
    data: Dataset = ctx.main
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    warm(store, data.bed)
    threads = str(ctx.threads)
    agreed: dict = {}
    comparisons = []
    for dtype in ("float32", "float64"):
        cmp = Comparison("python", data.name, f"read into numpy {dtype}")
        cmp.add("colflow read", lambda d=dtype: checked(python, ctx, ["python-read", "colflow", store, d,
                                                                      threads], agreed),
                threads=ctx.threads)
        cmp.add("bed-reader read", lambda d=dtype: checked(python, ctx, ["python-read", "bed-reader",
                                                                         data.bed, d, threads], agreed),
                threads=ctx.threads)
        cmp.ratio("colflow read", "bed-reader read")
        comparisons.append(cmp)
    cmp = Comparison("python", data.name, f"stream all columns, {BATCH} at a time, float32")
    cmp.add("colflow stream", lambda: checked(python, ctx, ["python-stream", "colflow", store, BATCH,
                                                            threads], agreed), threads=ctx.threads)
    cmp.add("bed-reader batches", lambda: checked(python, ctx, ["python-stream", "bed-reader", data.bed,
                                                                BATCH, threads], agreed),
            threads=ctx.threads)
    cmp.ratio("colflow stream", "bed-reader batches")
    comparisons.append(cmp)
    for c in comparisons:
        # One untimed run of each contender first: a process that follows one which allocated
        # gigabytes spends seconds in the kernel (up to 4.6 s of system time seen here, for
        # either library) while huge pages are made again; that belongs to neither library.
        for contender in c.contenders.values():
            contender.measure()
        c.run(ctx.scale.rounds, log)
    return comparisons
