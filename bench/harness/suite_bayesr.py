"""BayesR against GCTB and BayesRRcmd (../shared/peers: built from their public sources), same
data, same chain settings, each with the threads it can use:

  colflow bayesr                  --threads T (a genotype store, --mode auto)
  GCTB --bayes R                  GCTB's documented 4-component mixture
                                  (--gamma 0,0.01,0.1,1 --pi 0.95,0.03,0.01,0.01); its sampler
                                  is single-threaded
  BayesRRcmd ppbayes              --thread-spawned T --marker-cache (markers held in memory)

on uk10k and on the scaling suite's simulation (100,000 x 6,000; 20,000 x 1,000 in the quick
run). Seconds per iteration of the chain alone: colflow's and BayesRRcmd's own timing lines;
GCTB prints none, so its figure is the difference of a chain of 2N iterations and one of N,
divided by N (loading and output cancel out). Each contender also records the posterior mean
h² of its chain of 2N iterations (column h2): GCTB's hsq, and for BayesRRcmd, which prints
none, var(g) / (var(g) + sigmaE) of each sample it keeps after the burn-in, g = Zβ its genetic
values (Z the standardised genotypes), as GCTB and colflow define h². Skipped, saying why, where
the peers are absent or do not run.
"""
from __future__ import annotations

import csv
import os
import re
import statistics

import numpy as np

from .context import Context
from .data import Dataset
from .measure import CommandFailed, Comparison, Run, log, timed

GAMMA, PI = "0,0.01,0.1,1", "0.95,0.03,0.01,0.01"
# Iterations N per data set: chains of 2N (N/2 burn-in); GCTB also runs one of N, whose
# difference must outweigh the noise of GCTB's loading the .bed (seconds at 100,000 samples).
FULL_ITERATIONS = {"uk10k": 200, "scaling": 100}
QUICK_ITERATIONS = {"uk10k": 40, "scaling": 10}


def peer(ctx: Context, name: str) -> str | None:
    path = os.path.normpath(os.path.join(ctx.root, "..", "shared", "peers", "bin", name))
    if not os.access(path, os.X_OK):
        log(f"bayesr: {name} skipped: it is not at {path}")
        return None
    try:
        timed([path], ctx.ws.dir)
    except CommandFailed as e:
        # Both print a banner and exit 0 without arguments; anything else is a broken build
        # or missing libraries (../shared/peers/install-runtime.sh installs them).
        if "error while loading shared libraries" in str(e):
            log(f"bayesr: {name} skipped: it does not start ({str(e).splitlines()[-1]}); "
                "run ../shared/peers/install-runtime.sh")
            return None
    return path


def colflow_chain(ctx: Context, store: str, data: Dataset, iterations: int) -> Run:
    run = timed([ctx.colflow, "bayesr", store, "--pheno", data.pheno, "--iterations", str(2 * iterations),
                 "--burnin", str(iterations // 2), "--threads", str(ctx.threads),
                 "--checkpoint-every", "0", "--seed", "7", "--out", ctx.ws.path("out/bayesr-colflow")],
                ctx.ws.dir)
    timing = re.search(r"([0-9.]+) ms per iteration", run.stderr)
    h2 = re.search(r"posterior mean h2 ([0-9.]+)", run.stderr)
    if not timing or not h2:
        raise RuntimeError(f"bayesr printed no timing or h2 line:\n{run.stderr}")
    run.seconds, run.h2 = float(timing.group(1)) / 1e3, float(h2.group(1))
    return run


def gctb_chain(ctx: Context, gctb: str, data: Dataset, iterations: int) -> Run:
    def chain(length: int) -> Run:
        out = ctx.ws.path(f"out/bayesr-gctb-{length}")
        return timed([gctb, "--bfile", data.prefix, "--pheno", data.pheno, "--bayes", "R",
                      "--gamma", GAMMA, "--pi", PI, "--chain-length", str(length),
                      "--burn-in", str(iterations // 2), "--seed", "7", "--thread", str(ctx.threads),
                      "--out", out], ctx.ws.dir)
    short, long = chain(iterations), chain(2 * iterations)
    # Where noise hides the difference (short chains on a fast machine), the chain of 2N's
    # time over 2N: an upper bound, loading included, never 0.
    difference = long.seconds - short.seconds
    long.seconds = difference / iterations if difference > 0 else long.seconds / (2 * iterations)
    for line in open(ctx.ws.path(f"out/bayesr-gctb-{2 * iterations}.parRes")):
        fields = line.split()
        if fields and fields[0] == "hsq":
            long.h2 = float(fields[1])
    return long


def brr_chain(ctx: Context, brr: str, prepared: str, data: Dataset, iterations: int) -> Run:
    samples = ctx.ws.path("out/bayesr-brr.csv")
    run = timed([brr, "--analysis-type", "ppbayes", "--data-file", prepared + ".bed",
                 "--pheno", data.pheno, "--chain-length", str(2 * iterations),
                 "--burn-in", str(iterations // 2), "--thin", "1", "--mcmc-samples", samples,
                 "--thread-spawned", str(ctx.threads), "--seed", "7", "--marker-cache"], ctx.ws.dir)
    m = re.search(r"mean iteration duration: ([0-9.eE+-]+)s", run.stdout + run.stderr)
    if not m:
        raise RuntimeError(f"BayesRRcmd printed no iteration duration:\n{run.stdout[-2000:]}")
    run.seconds = float(m.group(1))
    run.h2 = genetic_values_h2(data, samples)
    return run


def standardised_columns(data: Dataset, first: int, last: int) -> np.ndarray:
    """Columns [first, last) of the .bed as a samples x columns float64 array: A1 counts
    centred and scaled to SD 1 (n - 1 divisor), a missing call 0 (the column's mean)."""
    per_column = (data.samples + 3) // 4
    raw = np.fromfile(data.bed, dtype=np.uint8, count=(last - first) * per_column,
                      offset=3 + first * per_column).reshape(last - first, per_column)
    codes = np.stack([(raw >> (2 * k)) & 3 for k in range(4)], axis=2).reshape(last - first, -1)
    x = np.array([2.0, np.nan, 1.0, 0.0])[codes[:, :data.samples]]
    x -= np.nanmean(x, axis=1, keepdims=True)
    x[np.isnan(x)] = 0.0
    sd = np.sqrt((x * x).sum(axis=1, keepdims=True) / (data.samples - 1))
    return (x / np.where(sd > 0, sd, 1.0)).T


def genetic_values_h2(data: Dataset, samples_csv: str) -> float | None:
    """Posterior mean of var(g) / (var(g) + sigmaE) over BayesRRcmd's kept samples, g = Zβ."""
    with open(samples_csv) as f:
        reader = csv.reader(f, skipinitialspace=True)
        header = next(reader)
        rows = [list(map(float, row)) for row in reader if row]
    if not rows:
        return None
    table = np.array(rows)
    betas = table[:, [i for i, h in enumerate(header) if h.startswith("beta[")]].T
    g = np.zeros((data.samples, betas.shape[1]))
    for first in range(0, betas.shape[0], 512):
        last = min(first + 512, betas.shape[0])
        g += standardised_columns(data, first, last) @ betas[first:last]
    var_g = g.var(axis=0, ddof=1)
    return float(np.mean(var_g / (var_g + table[:, header.index("sigmaE")])))


def brr_input(ctx: Context, brr: str, data: Dataset) -> str:
    """BayesRRcmd's preprocessed copy of the .bed (it writes PREFIX.ppbed beside the .bed, so
    the PLINK files are linked into the workspace first), made once per data set."""
    prefix = ctx.ws.path("brr-" + os.path.basename(data.prefix))
    for ext in ("bed", "bim", "fam"):
        if not os.path.exists(f"{prefix}.{ext}"):
            os.symlink(os.path.abspath(f"{data.prefix}.{ext}"), f"{prefix}.{ext}")
    if not (os.path.exists(prefix + ".ppbed") and
            os.path.getmtime(prefix + ".ppbed") > os.path.getmtime(data.bed)):
        timed([brr, "--preprocess", "--data-file", prefix + ".bed", "--pheno", data.pheno,
               "--thread-spawned", "1"], ctx.ws.dir)
    return prefix


def comparison(ctx: Context, data: Dataset, iterations: int, gctb: str | None,
               brr: str | None) -> Comparison:
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    cmp = Comparison("bayesr", data.name, f"bayesr, seconds per iteration (chains of {2 * iterations})")
    cmp.add("colflow bayesr", lambda: colflow_chain(ctx, store, data, iterations), threads=ctx.threads)
    if gctb:
        cmp.add("GCTB --bayes R", lambda: gctb_chain(ctx, gctb, data, iterations), threads=1)
        cmp.ratio("colflow bayesr", "GCTB --bayes R")
    if brr:
        prepared = brr_input(ctx, brr, data)
        cmp.add("BayesRRcmd ppbayes --marker-cache",
                lambda: brr_chain(ctx, brr, prepared, data, iterations), threads=ctx.threads)
        cmp.ratio("colflow bayesr", "BayesRRcmd ppbayes --marker-cache")
    return cmp


def run(ctx: Context) -> list[Comparison]:
    gctb, brr = peer(ctx, "gctb"), peer(ctx, "brr")
    if gctb is None and brr is None:
        log("bayesr: skipped: neither GCTB nor BayesRRcmd runs here")
        return []
    os.makedirs(ctx.ws.path("out"), exist_ok=True)
    iterations = QUICK_ITERATIONS if ctx.scale.quick else FULL_ITERATIONS
    sets = [(ctx.uk10k, iterations["uk10k"])] if ctx.uk10k else []
    sets.append((ctx.ws.simulate(*ctx.scale.scaling), iterations["scaling"]))
    comparisons = [comparison(ctx, data, n, gctb, brr) for data, n in sets]
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
        for c in cmp.contenders.values():
            h2 = [r.h2 for r in c.runs if r.h2 is not None]
            if h2:
                log(f"  {cmp.data} | {c.name}: h2 {statistics.median(h2):.4f}")
    return comparisons
