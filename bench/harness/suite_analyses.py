"""colflow's analyses against PLINK 2 and PLINK 1.9 on the same .bed, same threads:

  stats               plink2 --freq --missing          plink1.9 --freq --missing
  assoc, 1 phenotype  plink2 --glm allow-no-covars     plink1.9 --assoc (quantitative: Wald t)
  assoc, 10 phenos    the same with 10 phenotype columns (plink1.9: --all-pheno)
  assoc, case/control plink2 --glm allow-no-covars firth-fallback (the phenotype's top 30% cases)
  the same with 2 covariates, and with 10 (hide-covar); also on uk10k (its phenotype's top
                      30%) when ../shared/data has it
  pca --k 10          plink2 --pca 10 approx
  preprocess          plink2 --make-bed, plink1.9 --make-bed (a reference for I/O speed: each
                      reads the .bed and writes a file set of about its size); colflow's
                      genotype codecs, and zstd on standardised float64 with 1 and all threads

Wall time and peak RSS of each process; colflow's RSS includes the page cache of the store it
maps. colflow reads its genotype store, PLINK the .bed it was made from.
"""
from __future__ import annotations

import os
import random

from .context import Context
from .data import Dataset
from .measure import Comparison, log, timed


def ten_phenotypes(ctx: Context, data: Dataset) -> str:
    """The simulated phenotype plus independent noise, 10 columns with a header."""
    path = ctx.ws.path(os.path.basename(data.prefix) + ".pheno10")
    if not (os.path.exists(path) and os.path.getmtime(path) > os.path.getmtime(data.pheno)):
        rng = random.Random(7)
        with open(data.pheno) as f, open(path + ".tmp", "w") as out:
            out.write("#FID IID " + " ".join(f"P{i}" for i in range(10)) + "\n")
            for line in f:
                fid, iid, y = line.split()
                out.write(f"{fid} {iid} " + " ".join(f"{float(y) + rng.gauss(0, 3):.6f}"
                                                     for _ in range(10)) + "\n")
        os.replace(path + ".tmp", path)
    return path


def case_control(ctx: Context, data: Dataset) -> tuple[str, str, str]:
    """A case/control phenotype (the simulated phenotype's top 30% are cases, PLINK's 1/2 codes),
    2 covariates (one normal, one 0/1), and 10 (those and 8 more normal ones), with headers."""
    name = os.path.basename(data.prefix)
    pheno, covar = ctx.ws.path(name + ".cc"), ctx.ws.path(name + ".covar")
    covar10 = ctx.ws.path(name + ".covar10")
    if not (os.path.exists(covar10) and os.path.getmtime(covar10) > os.path.getmtime(data.pheno)):
        with open(data.pheno) as f:
            rows = [line.split() for line in f]
        cut = sorted(float(y) for _, _, y in rows)[int(0.7 * len(rows))]
        rng, more = random.Random(11), random.Random(13)
        with open(pheno + ".tmp", "w") as p, open(covar + ".tmp", "w") as c, \
                open(covar10 + ".tmp", "w") as c10:
            p.write("#FID IID CC\n")
            c.write("#FID IID C1 C2\n")
            c10.write("#FID IID " + " ".join(f"C{i}" for i in range(1, 11)) + "\n")
            for fid, iid, y in rows:
                p.write(f"{fid} {iid} {2 if float(y) >= cut else 1}\n")
                two = f"{rng.gauss(0, 1):.6f} {rng.randint(0, 1)}"
                c.write(f"{fid} {iid} {two}\n")
                c10.write(f"{fid} {iid} {two} " +
                          " ".join(f"{more.gauss(0, 1):.6f}" for _ in range(8)) + "\n")
        os.replace(pheno + ".tmp", pheno)
        os.replace(covar + ".tmp", covar)
        os.replace(covar10 + ".tmp", covar10)
    return pheno, covar, covar10


def run(ctx: Context) -> list[Comparison]:
    data, t = ctx.main, str(ctx.threads)
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    out = ctx.ws.path("out")
    os.makedirs(out, exist_ok=True)
    plink2 = ["plink2", "--bfile", data.prefix, "--threads", t, "--silent"]
    plink19 = ["plink1.9", "--bfile", data.prefix, "--threads", t, "--silent", "--allow-no-sex"]
    pheno10 = ten_phenotypes(ctx, data)
    cc, covar, covar10 = case_control(ctx, data)

    def command(cmd):
        return lambda: timed(cmd, ctx.ws.dir)

    comparisons = []

    def compare(task, contenders, rounds=ctx.scale.rounds, on=data):
        cmp = Comparison("analyses", on.name, task)
        for name, cmd in contenders:
            cmp.add(name, command(cmd), threads=ctx.threads)
        for name, _ in contenders[1:]:
            if not name.startswith("colflow"):
                cmp.ratio(contenders[0][0], name)
        comparisons.append((cmp, rounds))
        return cmp

    compare("stats", [
        ("colflow stats", [ctx.colflow, "stats", store, "--quiet", "--threads", t, "--out", f"{out}/c"]),
        ("plink2 --freq --missing", plink2 + ["--freq", "--missing", "--out", f"{out}/p2"]),
        ("plink1.9 --freq --missing", plink19 + ["--freq", "--missing", "--out", f"{out}/p19"])])
    compare("assoc, 1 phenotype", [
        ("colflow assoc", [ctx.colflow, "assoc", store, "--quiet", "--threads", t, "--pheno", data.pheno,
                           "--out", f"{out}/c1"]),
        ("plink2 --glm", plink2 + ["--pheno", data.pheno, "--glm", "allow-no-covars", "--out", f"{out}/p2a"]),
        ("plink1.9 --assoc", plink19 + ["--pheno", data.pheno, "--assoc", "--out", f"{out}/p19a"])])
    compare("assoc, 10 phenotypes", [
        ("colflow assoc", [ctx.colflow, "assoc", store, "--quiet", "--threads", t, "--pheno", pheno10,
                           "--out", f"{out}/c10"]),
        ("plink2 --glm", plink2 + ["--pheno", pheno10, "--glm", "allow-no-covars", "--out", f"{out}/p2b"]),
        ("plink1.9 --assoc", plink19 + ["--pheno", pheno10, "--all-pheno", "--assoc", "--out", f"{out}/p19b"])])
    compare("assoc, case/control", [
        ("colflow assoc", [ctx.colflow, "assoc", store, "--quiet", "--threads", t, "--pheno", cc,
                           "--out", f"{out}/cl"]),
        ("plink2 --glm", plink2 + ["--pheno", cc, "--glm", "allow-no-covars", "firth-fallback",
                                   "--out", f"{out}/p2l"])])
    compare("assoc, case/control, 2 covariates", [
        ("colflow assoc", [ctx.colflow, "assoc", store, "--quiet", "--threads", t, "--pheno", cc,
                           "--covar", covar, "--out", f"{out}/clc"]),
        ("plink2 --glm", plink2 + ["--pheno", cc, "--covar", covar, "--glm", "hide-covar",
                                   "firth-fallback", "--out", f"{out}/p2lc"])])
    compare("assoc, case/control, 10 covariates", [
        ("colflow assoc", [ctx.colflow, "assoc", store, "--quiet", "--threads", t, "--pheno", cc,
                           "--covar", covar10, "--out", f"{out}/clc10"]),
        ("plink2 --glm", plink2 + ["--pheno", cc, "--covar", covar10, "--glm", "hide-covar",
                                   "firth-fallback", "--out", f"{out}/p2lc10"])])
    if ctx.uk10k:  # real LD and 3,642 samples: the per-column fit costs more than the products
        real = ctx.uk10k
        real_store = ctx.ws.store(real, "genotype", "--codec", "genotype")
        real_cc, real_covar, real_covar10 = case_control(ctx, real)
        for label, cov, tag in [("2 covariates", real_covar, "u2"), ("10 covariates", real_covar10, "u10")]:
            compare(f"assoc, case/control, {label}", [
                ("colflow assoc", [ctx.colflow, "assoc", real_store, "--quiet", "--threads", t, "--pheno",
                                   real_cc, "--covar", cov, "--out", f"{out}/c{tag}"]),
                ("plink2 --glm", ["plink2", "--bfile", real.prefix, "--threads", t, "--silent", "--pheno",
                                  real_cc, "--covar", cov, "--glm", "hide-covar", "firth-fallback", "--out",
                                  f"{out}/p{tag}"])], on=real)
    compare("pca, 10 components", [
        ("colflow pca", [ctx.colflow, "pca", store, "--quiet", "--threads", t, "--k", "10", "--out", f"{out}/cp"]),
        ("plink2 --pca approx", plink2 + ["--pca", "10", "approx", "--out", f"{out}/p2p"])],
        rounds=ctx.scale.rounds if ctx.scale.quick else 2)
    def preprocess(codec: str, threads: str, name: str) -> list[str]:
        return [ctx.colflow, "preprocess", "--quiet", "--force", "--threads", threads, "--codec", codec,
                "--bed", data.prefix, "--out", f"{out}/{name}.cf"]

    zstd_1, zstd_all = "colflow preprocess float64 zstd-3, 1 thread", f"colflow preprocess float64 zstd-3, {t} threads"
    compare("preprocess (.bed in, store or .bed out)", [
        ("colflow preprocess genotype", preprocess("genotype", t, "g")),
        ("colflow preprocess genotype-zstd", preprocess("genotype-zstd", t, "gz")),
        (zstd_1, preprocess("zstd", "1", "z1")),
        (zstd_all, preprocess("zstd", t, "z")),
        ("plink2 --make-bed", plink2 + ["--make-bed", "--out", f"{out}/p2m"]),
        ("plink1.9 --make-bed", plink19 + ["--make-bed", "--out", f"{out}/p19m"])]).ratio(zstd_all, zstd_1)
    for cmp, rounds in comparisons:
        cmp.run(rounds, log)
    return [cmp for cmp, _ in comparisons]
