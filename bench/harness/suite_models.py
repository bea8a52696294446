"""Penalised regression and BayesR.

Lasso and elastic net (alpha 0.5): colflow on the first columns of the main simulation
(`--extract`, streaming its store) against scikit-learn's lasso_path / enet_path on the same
standardised matrix in memory (`colflow export --npy`) for the same 20 lambdas from lambda_max
down to 0.05 lambda_max, tolerance 1e-7. scikit-learn's time is the fit alone (its process
loads the matrix first); colflow's is its whole run. The two stop on different criteria
(largest coefficient change vs duality gap), so the ratio is indicative; the tests show the
coefficients agree to 1e-5 when both run to tight tolerances. The full-store path has no peer
that could hold the matrix; it is reported alone.

BayesR: seconds per iteration of the same sampler reading a genotype store (--mode auto:
sequential for an uncompressed genotype store, nothing to decode; pipelined), the standardised
matrix decoded once into RAM as doubles (in-memory), and a zlib-6 float64 store of the
standardised values (the original BayesRRcmd design, reproduced as a baseline), written and
read by libdeflate, and its "(libz)" twin written and read by zlib's own deflate/inflate
(COLFLOW_ZLIB_IMPL=zlib, colflow before libdeflate) in the same rounds. GCTB and BayesRRcmd,
built from their sources in ../shared/peers, are measured by the bayesr suite (suite_bayesr.py).
"""
from __future__ import annotations

import os
import re
from typing import Callable

from .context import Context
from .data import Dataset, first_columns
from .measure import LIBZ, Comparison, Run, libz_env, log, timed, timed_reporting

NLAMBDA, LAMBDA_MIN_RATIO = "20", "0.05"


def path_comparison(ctx: Context, command: str, alpha: str, l1_ratio: str, store: str,
                    subset: Dataset, npy: str, extract: str) -> Comparison:
    data, out = ctx.main, ctx.ws.path("out")
    cmd = [ctx.colflow, command, store, "--quiet", "--threads", str(ctx.threads), "--pheno", data.pheno,
           "--extract", extract, "--nlambda", NLAMBDA, "--lambda-min-ratio", LAMBDA_MIN_RATIO,
           "--digits", "17", *alpha.split(), "--out", f"{out}/{command}"]
    timed(cmd, ctx.ws.dir)  # the lambdas both tools use
    lambdas = f"{out}/{command}.lambdas.tsv"
    os.replace(f"{out}/{command}.path.tsv", lambdas)
    cmp = Comparison("models", f"{data.name}, first {subset.variants} columns",
                     f"{command} path, {NLAMBDA} lambdas")
    cmp.add(f"colflow {command}", lambda: timed(cmd, ctx.ws.dir), threads=ctx.threads)
    peer = ctx.peer("sklearn-path", npy, data.pheno, lambdas, l1_ratio)
    peer_name = f"scikit-learn {'lasso_path' if l1_ratio == '1' else 'enet_path'}"
    cmp.add(peer_name, lambda: timed_reporting(peer, ctx.peer_cwd), threads=1)
    cmp.ratio(f"colflow {command}", peer_name)
    return cmp


def full_path(ctx: Context, store: str) -> Comparison:
    data = ctx.main
    cmd = [ctx.colflow, "lasso", store, "--quiet", "--threads", str(ctx.threads), "--pheno", data.pheno,
           "--nlambda", NLAMBDA, "--lambda-min-ratio", LAMBDA_MIN_RATIO, "--out", ctx.ws.path("out/full")]
    cmp = Comparison("models", data.name, f"lasso path, {NLAMBDA} lambdas, all columns")
    cmp.add("colflow lasso", lambda: timed(cmd, ctx.ws.dir), threads=ctx.threads)
    return cmp


def bayesr_iteration(ctx: Context, store: str, pheno: str, iterations: int, mode: str,
                     env: dict | None = None, threads: int | None = None,
                     colflow: str | None = None, runner: Callable | None = None) -> Run:
    """Seconds per iteration as bayesr reports them (the chain alone: no start-up, no output),
    with ctx's threads and program unless others are given; runner(cmd, cwd) runs the process
    in place of measure.timed."""
    cmd = [colflow or ctx.colflow, "bayesr", store, "--pheno", pheno, "--iterations", str(iterations),
           "--burnin", "1", "--threads", str(threads or ctx.threads), "--checkpoint-every", "0",
           "--mode", mode, "--out", ctx.ws.path("out/chain")]
    run = runner(cmd, ctx.ws.dir) if runner else timed(cmd, ctx.ws.dir, env)
    m = re.search(r"([0-9.]+) ms per iteration, compute busy ([0-9]+)%", run.stderr)
    if not m:
        raise RuntimeError(f"bayesr printed no timing line:\n{run.stderr}")
    run.seconds, run.busy = float(m.group(1)) / 1e3, float(m.group(2)) / 100
    return run


def bayesr_comparison(ctx: Context, data: Dataset, iterations: int) -> Comparison:
    genotype = ctx.ws.store(data, "genotype", "--codec", "genotype")
    zlib = ctx.ws.store(data, "float64-zlib-6", "--codec", "zlib", "--level", "6")
    libz = ctx.ws.store(data, "float64-zlib-6-libz", "--codec", "zlib", "--level", "6", env=libz_env())
    cmp = Comparison("models", data.name, f"bayesr, seconds per iteration ({iterations} per run)")
    for name, store, mode, env in [("colflow genotype auto", genotype, "auto", None),
                                   ("colflow genotype pipelined", genotype, "pipelined", None),
                                   ("colflow genotype in-memory", genotype, "in-memory", None),
                                   ("colflow float64 zlib-6 pipelined", zlib, "pipelined", None),
                                   ("colflow float64 zlib-6 sequential", zlib, "sequential", None),
                                   ("colflow float64 zlib-6 pipelined" + LIBZ, libz, "pipelined", libz_env()),
                                   ("colflow float64 zlib-6 sequential" + LIBZ, libz, "sequential", libz_env())]:
        cmp.add(name, lambda s=store, m=mode, e=env: bayesr_iteration(ctx, s, data.pheno, iterations, m, e),
                threads=ctx.threads)
    for other in ("genotype pipelined", "genotype in-memory", "float64 zlib-6 pipelined"):
        cmp.ratio("colflow genotype auto", f"colflow {other}")
    for mode in ("pipelined", "sequential"):
        cmp.ratio(f"colflow float64 zlib-6 {mode}", f"colflow float64 zlib-6 {mode}{LIBZ}")
    return cmp


def run(ctx: Context) -> list[Comparison]:
    store = ctx.ws.store(ctx.main, "genotype", "--codec", "genotype")
    subset = first_columns(ctx.ws, ctx.main, ctx.scale.subset_columns)
    subset_store = ctx.ws.store(subset, "genotype", "--codec", "genotype")
    npy = ctx.ws.path(os.path.basename(subset.prefix) + ".std.npy")
    if not (os.path.exists(npy) and os.path.getmtime(npy) > os.path.getmtime(subset_store)):
        ctx.ws.run("export", "--quiet", "--force", subset_store, "--npy", npy)
    extract = ctx.ws.path(os.path.basename(subset.prefix) + ".ids")
    with open(subset.prefix + ".bim") as bim, open(extract, "w") as out:
        out.writelines(line.split()[1] + "\n" for line in bim)
    os.makedirs(ctx.ws.path("out"), exist_ok=True)
    comparisons = [path_comparison(ctx, "lasso", "", "1", store, subset, npy, extract),
                   path_comparison(ctx, "enet", "--alpha 0.5", "0.5", store, subset, npy, extract),
                   full_path(ctx, store)]
    iterations = ctx.scale.bayesr_iterations
    if ctx.uk10k:
        comparisons.append(bayesr_comparison(ctx, ctx.uk10k, iterations["uk10k"]))
    comparisons.append(bayesr_comparison(ctx, ctx.main, iterations["sim"]))
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
    return comparisons
