"""Whole-genome regression against regenie (../shared/peers/bin/regenie) on the same .bed, same
threads:

  step 1, 1 trait       colflow wgr  vs  regenie --step 1 --qt --bsize 1000
  step 1, 4 traits      the same with four traits fitted together
  step 2, 1 trait       colflow assoc --loco  vs  regenie --step 2 --qt --bsize 400, each on its
                        own step 1's predictions
  step 1, case/control  colflow wgr --binary  vs  regenie --step 1 --bt
  step 2, case/control  colflow assoc --loco (fitted Wald test)  vs  regenie --step 2 --bt
  step 2, case/control, score test
                        colflow assoc --loco --score-test  vs  the same regenie (its test)

The main simulation's variants are spread evenly over chromosomes 1-22 (a copy of its .bim; the
.bed and .fam are linked), so that each chromosome has blocks and LOCO predictions of its own.
The traits are the simulation's phenotype and three more made from it with noise, seed 3, with
two normal covariates. Wall time and peak RSS of each process. The suite is skipped, saying
why, when regenie is absent or does not run.
"""
from __future__ import annotations

import dataclasses
import os
import random
import subprocess

from .context import Context
from .data import Dataset
from .measure import Comparison, log, timed


def regenie_path(ctx: Context) -> str | None:
    path = os.path.join(ctx.root, "..", "shared", "peers", "bin", "regenie")
    if not os.access(path, os.X_OK):
        log(f"wgr: skipped: regenie is not at {os.path.normpath(path)}")
        return None
    done = subprocess.run([path, "--version"], capture_output=True, text=True)
    if done.returncode != 0:
        log(f"wgr: skipped: {path} does not run ({done.stderr.strip()[:200]}); "
            "run ../shared/peers/install-runtime.sh")
        return None
    return path


def on_22_chromosomes(ctx: Context, data: Dataset) -> Dataset:
    """A copy of `data` whose variants are spread evenly over chromosomes 1-22, in order."""
    prefix = ctx.ws.path(os.path.basename(data.prefix) + ".chr22")
    if not os.path.exists(prefix + ".bim"):
        for ext in (".bed", ".fam"):
            os.symlink(os.path.abspath(data.prefix + ext), prefix + ext)
        per = -(-data.variants // 22)
        with open(data.prefix + ".bim") as bim, open(prefix + ".bim.tmp", "w") as out:
            for i, line in enumerate(bim):
                out.write(f"{i // per + 1}\t" + line.split("\t", 1)[1])
        os.replace(prefix + ".bim.tmp", prefix + ".bim")
    return dataclasses.replace(data, name=data.name + ", 22 chromosomes", prefix=prefix)


def trait_files(ctx: Context, data: Dataset) -> tuple[str, str]:
    """pheno.txt (FID IID Y1..Y4, header) and covar.txt (FID IID C1 C2): Y1 the simulation's
    phenotype, Y2-Y4 it plus normal noise; seed 3."""
    pheno, covar = ctx.ws.path("wgr.pheno.txt"), ctx.ws.path("wgr.covar.txt")
    if not (os.path.exists(covar) and os.path.getmtime(covar) > os.path.getmtime(data.pheno)):
        rng = random.Random(3)
        lines = [line.split() for line in open(data.pheno)]
        sd = (sum(float(f[2]) ** 2 for f in lines) / len(lines)) ** 0.5
        with open(pheno, "w") as p, open(covar + ".tmp", "w") as c:
            p.write("FID IID Y1 Y2 Y3 Y4\n")
            c.write("FID IID C1 C2\n")
            for fid, iid, y in lines:
                noisy = [float(y) + rng.gauss(0, sd) for _ in range(3)]
                p.write(f"{fid} {iid} {y} " + " ".join(f"{v:.6g}" for v in noisy) + "\n")
                c.write(f"{fid} {iid} {rng.gauss(0, 1):.6g} {rng.gauss(0, 1):.6g}\n")
        os.replace(covar + ".tmp", covar)
    return pheno, covar


def case_control_file(ctx: Context, pheno: str) -> str:
    """cases.txt (FID IID B, 0 control, 1 case): Y1 above its 70th percentile."""
    cases = ctx.ws.path("wgr.cases.txt")
    if not (os.path.exists(cases) and os.path.getmtime(cases) > os.path.getmtime(pheno)):
        lines = [line.split() for line in open(pheno)][1:]
        values = sorted(float(f[2]) for f in lines)
        threshold = values[int(0.7 * len(values))]
        with open(cases + ".tmp", "w") as out:
            out.write("FID IID B\n")
            for f in lines:
                out.write(f"{f[0]} {f[1]} {int(float(f[2]) > threshold)}\n")
        os.replace(cases + ".tmp", cases)
    return cases


def run(ctx: Context) -> list[Comparison]:
    regenie = regenie_path(ctx)
    if regenie is None:
        return []
    data = on_22_chromosomes(ctx, ctx.main)
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    pheno, covar = trait_files(ctx, ctx.main)
    cases = case_control_file(ctx, pheno)
    out, t = ctx.ws.path("out"), str(ctx.threads)
    os.makedirs(out, exist_ok=True)

    def colflow(command, *args, traits=pheno):
        return [ctx.colflow, command, store, "--quiet", "--threads", t, "--pheno", traits,
                "--covar", covar, *args]

    def wgr(*args, traits=pheno):
        # --quick's chromosomes have fewer columns than a block: one block each, as regenie.
        return colflow("wgr", *args, traits=traits)

    def step(number, *args, traits=pheno, kind="--qt"):
        return [regenie, "--step", str(number), "--bed", data.prefix, "--phenoFile", traits,
                "--covarFile", covar, kind, "--threads", t, *args]

    comparisons = []

    def compare(task, contenders):
        cmp = Comparison("wgr", data.name, task)
        for name, cmd in contenders:
            cmp.add(name, lambda cmd=cmd: timed(cmd, ctx.ws.dir), threads=ctx.threads)
        cmp.ratio(contenders[0][0], contenders[1][0])
        comparisons.append(cmp)

    compare("step 1, 1 trait", [
        ("colflow wgr", wgr("--pheno-name", "Y1", "--out", f"{out}/c1")),
        ("regenie --step 1", step(1, "--phenoCol", "Y1", "--bsize", "1000", "--out", f"{out}/r1"))])
    compare("step 1, 4 traits", [
        ("colflow wgr", wgr("--out", f"{out}/c4")),
        ("regenie --step 1", step(1, "--bsize", "1000", "--out", f"{out}/r4"))])
    compare("step 2, 1 trait", [
        ("colflow assoc --loco", colflow("assoc", "--pheno-name", "Y1", "--loco",
                                         f"{out}/c1_pred.list", "--out", f"{out}/c2")),
        ("regenie --step 2", step(2, "--phenoCol", "Y1", "--bsize", "400", "--pred",
                                  f"{out}/r1_pred.list", "--out", f"{out}/r2"))])
    # Below 5,000 samples (the quick run) regenie's --bt takes leave-one-out cross-validation
    # where colflow keeps 5 folds: the same job, not the same arithmetic.
    compare("step 1, case/control", [
        ("colflow wgr", wgr("--binary", "--1", "--out", f"{out}/cb", traits=cases)),
        ("regenie --step 1", step(1, "--bsize", "1000", "--out", f"{out}/rb", traits=cases,
                                  kind="--bt"))])
    compare("step 2, case/control", [
        ("colflow assoc --loco", colflow("assoc", "--binary", "--1", "--loco",
                                         f"{out}/cb_pred.list", "--out", f"{out}/cb2",
                                         traits=cases)),
        ("regenie --step 2", step(2, "--bsize", "400", "--pred", f"{out}/rb_pred.list", "--out",
                                  f"{out}/rb2", traits=cases, kind="--bt"))])
    # regenie's own test: the score at the fit without the column.
    compare("step 2, case/control, score test", [
        ("colflow assoc --loco --score-test",
         colflow("assoc", "--binary", "--1", "--score-test", "--loco", f"{out}/cb_pred.list",
                 "--out", f"{out}/cs2", traits=cases)),
        ("regenie --step 2", step(2, "--bsize", "400", "--pred", f"{out}/rb_pred.list", "--out",
                                  f"{out}/rs2", traits=cases, kind="--bt"))])
    # A full-size step 1 of regenie takes minutes: one round each there (the ratio is still
    # measured side by side, on the same machine state).
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds if ctx.scale.quick or "step 2" in cmp.task else 1, log)
    return comparisons
