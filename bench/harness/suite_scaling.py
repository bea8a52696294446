"""Scaling with threads: the same analysis at --threads 1 and --threads N (N: --threads of the
run, at least 2), the two alternating in the same rounds, with the paired ratio 1-thread time /
N-thread time (the speed-up) per data set:

  bayesr   seconds per iteration as bayesr reports them (the chain alone), --mode auto
  lasso    seconds per path: 8 lambdas from lambda_max down to 0.2 lambda_max (uk10k's LD makes
           coordinate descent slow further down: 4,600 sweeps at 0.05), the run's wall time.
           Sweeps go over the working set only (tens of columns here) while each lambda's KKT
           check and the statistics pass read every column, so a time per sweep would mix the
           two; the task names the path's sweeps and full passes instead (the same at any thread
           count: one untimed run first counts them, and warms the page cache)

on three stores: a simulation of many samples and few variants (`colflow simulate --seed 5`,
no missing calls; 100,000 x 6,000, about 150 MB of codes) as a genotype store (uncompressed
codes: --mode auto reads it sequentially, there is nothing to decode), the same simulation as
a zstd-3 store of standardised float64 (decoding is most of the work: the pipelined case),
and uk10k as a genotype store (real LD, few samples). And assoc on the simulation at N
threads with 1 phenotype against 10 (suite_analyses' ten_phenotypes: the phenotype plus
independent noise), wall time and the paired ratio 10 / 1.

--baseline-colflow PROGRAM (an earlier build, e.g. from `bench/compare_builds.sh REV
--build-only`) adds that program's uk10k BayesR iterations at 1 and N threads to the same
rounds, with the ratios this build / baseline: a change to the compute must not make uk10k
slower than the build before it, measured side by side.
"""
from __future__ import annotations

import csv
import os

from .context import Context
from .data import Dataset
from .measure import BASELINE, Comparison, Run, log, timed
from .suite_analyses import ten_phenotypes
from .suite_models import bayesr_iteration

NLAMBDA, LAMBDA_MIN_RATIO = "8", "0.2"
SEED = 5


def threads_name(threads: int, program: str = "colflow") -> str:
    return f"{program}, {threads} thread{'s' if threads > 1 else ''}"


def bayesr_comparison(ctx: Context, data: Dataset, label: str, store: str, iterations: int,
                      many: int, baseline: str | None) -> Comparison:
    cmp = Comparison("scaling", f"{data.name}, {label} store",
                     f"bayesr, seconds per iteration ({iterations} per run)")
    programs = [("colflow", ctx.colflow)] + ([(BASELINE, baseline)] if baseline else [])
    for program, path in programs:
        for threads in (1, many):
            cmp.add(threads_name(threads, program),
                    lambda t=threads, p=path: bayesr_iteration(ctx, store, data.pheno, iterations, "auto",
                                                               threads=t, colflow=p), threads=threads)
    cmp.ratio(threads_name(1), threads_name(many))
    if baseline:
        cmp.ratio(threads_name(1, BASELINE), threads_name(many, BASELINE))
        for threads in (1, many):
            cmp.ratio(threads_name(threads), threads_name(threads, BASELINE))
    return cmp


def lasso_passes(path_tsv: str) -> tuple[int, int]:
    """Working-set sweeps and passes over every column (KKT checks, plus the statistics pass)
    of a lasso path, from its PREFIX.path.tsv."""
    with open(path_tsv) as f:
        steps = list(csv.DictReader(f, delimiter="\t"))
    return sum(int(s["SWEEPS"]) for s in steps), 1 + sum(int(s["FULL_PASSES"]) for s in steps)


def lasso_comparison(ctx: Context, data: Dataset, label: str, store: str, many: int) -> Comparison:
    out = ctx.ws.path("out/scaling-lasso")

    def cmd(threads: int) -> list[str]:
        return [ctx.colflow, "lasso", store, "--quiet", "--threads", str(threads), "--pheno", data.pheno,
                "--nlambda", NLAMBDA, "--lambda-min-ratio", LAMBDA_MIN_RATIO, "--out", out]

    timed(cmd(many), ctx.ws.dir)
    passes = lasso_passes(out + ".path.tsv")

    def measure(threads: int) -> Run:
        run = timed(cmd(threads), ctx.ws.dir)
        if lasso_passes(out + ".path.tsv") != passes:
            raise RuntimeError(f"lasso on {store} took other steps with --threads {threads}")
        return run

    cmp = Comparison("scaling", f"{data.name}, {label} store",
                     f"lasso path, {NLAMBDA} lambdas ({passes[0]} sweeps, {passes[1]} full passes)")
    for threads in (1, many):
        cmp.add(threads_name(threads), lambda t=threads: measure(t), threads=threads)
    cmp.ratio(threads_name(1), threads_name(many))
    return cmp


def assoc_comparison(ctx: Context, data: Dataset, store: str, many: int) -> Comparison:
    out = ctx.ws.path("out")
    pheno10 = ten_phenotypes(ctx, data)
    cmp = Comparison("scaling", f"{data.name}, genotype store", f"assoc, 1 and 10 phenotypes, {many} threads")
    for name, pheno, prefix in [("colflow assoc, 1 phenotype", data.pheno, "scaling-assoc1"),
                                ("colflow assoc, 10 phenotypes", pheno10, "scaling-assoc10")]:
        cmd = [ctx.colflow, "assoc", store, "--quiet", "--threads", str(many), "--pheno", pheno,
               "--out", f"{out}/{prefix}"]
        cmp.add(name, lambda c=cmd: timed(c, ctx.ws.dir), threads=many)
    cmp.ratio("colflow assoc, 10 phenotypes", "colflow assoc, 1 phenotype")
    return cmp


def run(ctx: Context) -> list[Comparison]:
    many = max(2, ctx.threads)
    sim = ctx.ws.simulate(*ctx.scale.scaling, seed=SEED, missing=0)
    os.makedirs(ctx.ws.path("out"), exist_ok=True)
    stores = [(sim, "genotype", ctx.ws.store(sim, "genotype", "--codec", "genotype"), "sim"),
              (sim, "float64 zstd-3", ctx.ws.store(sim, "float64-zstd-3", "--codec", "zstd"), "sim")]
    if ctx.uk10k:
        stores.insert(1, (ctx.uk10k, "genotype", ctx.ws.store(ctx.uk10k, "genotype", "--codec", "genotype"),
                          "uk10k"))
    elif ctx.baseline:
        log("scaling: no uk10k data, so no comparison with the baseline build")
    comparisons = []
    for data, label, store, key in stores:
        comparisons.append(bayesr_comparison(ctx, data, label, store, ctx.scale.bayesr_iterations[key],
                                             many, ctx.baseline if data is ctx.uk10k else None))
        comparisons.append(lasso_comparison(ctx, data, label, store, many))
    comparisons.append(assoc_comparison(ctx, sim, stores[0][2], many))
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
    return comparisons
