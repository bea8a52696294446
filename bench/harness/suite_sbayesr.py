"""SBayesR against GCTB 2.05's --sbayes R (../shared/peers), bench/sbayesr_gctb.sh as a suite:
a slice of uk10k (variants FIRST..LAST of the .bim with MAF >= 0.01, cut by plink2), summary
statistics of its test phenotype from `colflow assoc` and `colflow stats`, then

  LD matrix (full)        colflow ld --make-ldm full        GCTB --make-full-ldm
                          (float32, and --ldm-bits 16)
  chain                   colflow sbayesr --ldm STORE       GCTB --sbayes R --ldm P.ldm.full
                          (the LD store's columns read when
                          an effect changes, then kept; of
                          float32 and of 16-bit values),
                          and --ldm GENOTYPES (the LD
                          computed once, in memory)

on the same .ma, with GCTB's default mixture. The LD rows' `compression` is the bytes of GCTB's
.bin over the contender's (the LD store's files for colflow); the chains' seconds are per
iteration, the difference of a chain of 2N iterations and one of N divided by N (loading and
output cancel out), and `h2` the posterior mean hsq of the chain of 2N. Skipped, saying why,
without GCTB, uk10k or plink2.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from .context import Context
from .data import store_bytes
from .measure import Comparison, Run, log, timed

# Variants of the .bim cut (before the MAF filter: about a third of uk10k's remain) and
# iterations N per run.
FULL_SLICE, QUICK_SLICE = (1, 6000), (2001, 3100)
FULL_ITERATIONS, QUICK_ITERATIONS = 1000, 200


def gctb_program(ctx: Context) -> str | None:
    path = os.path.normpath(os.path.join(ctx.root, "..", "shared", "peers", "bin", "gctb"))
    if not os.access(path, os.X_OK):
        log(f"sbayesr: skipped: GCTB is not at {path}")
        return None
    banner = subprocess.run([path], capture_output=True, text=True)
    if "GCTB" not in banner.stdout + banner.stderr:
        log(f"sbayesr: skipped: GCTB does not start ({(banner.stderr or banner.stdout)[-300:]}); "
            "run ../shared/peers/install-runtime.sh")
        return None
    return path


def summary_statistics(ctx: Context, prefix: str, store: str) -> str:
    """GCTB's .ma of the slice: `colflow assoc` on the test phenotype, the A1 frequencies of
    `colflow stats`."""
    ctx.ws.run("stats", store, "--quiet", "--out", prefix + ".stats.tsv")
    ctx.ws.run("assoc", store, "--pheno", ctx.uk10k.pheno, "--quiet", "--out", prefix + ".gwas")

    def table(path: str) -> list[dict]:
        with open(path) as f:
            rows = [line.split() for line in f if line.strip()]
        return [dict(zip(rows[0], r)) for r in rows[1:]]

    freq = {r["ID"]: r["A1_FREQ"] for r in table(prefix + ".stats.tsv")}
    with open(prefix + ".ma", "w") as out:
        out.write("SNP A1 A2 freq b se p N\n")
        for r in table(prefix + ".gwas.PHENO1.assoc.tsv"):
            out.write(f"{r['ID']} {r['A1']} {r['A2']} {freq[r['ID']]} {r['BETA']} {r['SE']} "
                      f"{r['P']} {r['N_OBS']}\n")
    return prefix + ".ma"


def hsq(par_res: str) -> float | None:
    with open(par_res) as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == "hsq":
                return float(fields[1])
    return None


def per_iteration(chain, iterations: int) -> Run:
    """The chain of 2N iterations, its seconds replaced by (time(2N) - time(N)) / N (by
    time(2N) / 2N where noise makes the difference vanish)."""
    short, long = chain(iterations), chain(2 * iterations)
    difference = long.seconds - short.seconds
    long.seconds = difference / iterations if difference > 0 else long.seconds / (2 * iterations)
    return long


def run(ctx: Context) -> list[Comparison]:
    gctb = gctb_program(ctx)
    if gctb is None:
        return []
    if ctx.uk10k is None:
        log("sbayesr: skipped: no uk10k in ../shared/data")
        return []
    if shutil.which("plink2") is None:
        log("sbayesr: skipped: no plink2 to cut the slice")
        return []
    first, last = QUICK_SLICE if ctx.scale.quick else FULL_SLICE
    iterations = QUICK_ITERATIONS if ctx.scale.quick else FULL_ITERATIONS
    os.makedirs(ctx.ws.path("out"), exist_ok=True)
    prefix = ctx.ws.path(f"sbayesr-slice{first}-{last}")
    with open(ctx.uk10k.prefix + ".bim") as f:
        ids = [line.split()[1] for k, line in enumerate(f, 1) if first <= k <= last]
    with open(prefix + ".range", "w") as f:
        f.write("\n".join(ids) + "\n")
    timed(["plink2", "--bfile", ctx.uk10k.prefix, "--extract", prefix + ".range", "--maf", "0.01",
           "--make-bed", "--out", prefix, "--threads", "1"], ctx.ws.dir)
    store = ctx.ws.preprocess(prefix + ".cf", prefix + ".bed", "--bed", prefix)
    ma = summary_statistics(ctx, prefix, store)
    with open(prefix + ".bim") as f:
        variants = sum(1 for line in f if line.strip())
    data = f"uk10k, {variants} variants"
    log(f"sbayesr: {data}, chains of {iterations} and {2 * iterations} iterations")

    ld_store, gctb_ld = ctx.ws.path("out/sbayesr-colflow.ld"), ctx.ws.path("out/sbayesr-gctb")
    ld16_store = ctx.ws.path("out/sbayesr-colflow-16.ld")
    gctb_bin = gctb_ld + ".ldm.full.bin"

    def colflow_ld(bits: int = 32) -> Run:
        return timed([ctx.colflow, "ld", store, "--make-ldm", "full", "--ldm-bits", str(bits),
                      "--force", "--quiet", "--threads", str(ctx.threads), "--out",
                      ld16_store if bits == 16 else ld_store], ctx.ws.dir)

    def gctb_make_ld() -> Run:
        return timed([gctb, "--bfile", prefix, "--make-full-ldm", "--out", gctb_ld], ctx.ws.dir)

    ld = Comparison("sbayesr", data, "LD matrix (full), seconds; compression: GCTB .bin bytes "
                    "over the contender's")
    ld16 = "colflow ld --make-ldm full --ldm-bits 16"
    ld.add("colflow ld --make-ldm full", colflow_ld, threads=ctx.threads)
    ld.add(ld16, lambda: colflow_ld(16), threads=ctx.threads)
    ld.add("GCTB --make-full-ldm", gctb_make_ld, threads=1, compression=1.0)
    ld.ratio("colflow ld --make-ldm full", "GCTB --make-full-ldm")
    ld.ratio(ld16, "GCTB --make-full-ldm")
    ld.run(ctx.scale.rounds, log)
    ld.contenders["colflow ld --make-ldm full"].compression = (
        os.path.getsize(gctb_bin) / store_bytes(ld_store))
    ld.contenders[ld16].compression = os.path.getsize(gctb_bin) / store_bytes(ld16_store)
    log(f"  {data} | LD bytes: colflow store {store_bytes(ld_store)}, 16-bit store "
        f"{store_bytes(ld16_store)}, GCTB .bin {os.path.getsize(gctb_bin)}")

    def colflow_chain(length: int, in_memory: bool = False, bits: int = 32) -> Run:
        out = ctx.ws.path(f"out/sbayesr-colflow-{'memory-' if in_memory else ''}{bits}-{length}")
        # In memory: every pair of the slice, as the full LD store holds them.
        ldm = [store, "--ld-window", str(variants), "--ld-window-kb", "1000000"] if in_memory \
            else [ld16_store if bits == 16 else ld_store]
        r = timed([ctx.colflow, "sbayesr", "--gwas", ma, "--ldm", *ldm, "--iterations",
                   str(length), "--burnin", str(iterations // 2), "--seed", "7",
                   "--checkpoint-every", "0", "--threads", str(ctx.threads), "--quiet",
                   "--out", out], ctx.ws.dir)
        r.h2 = hsq(out + ".parRes")
        return r

    def gctb_chain(length: int) -> Run:
        out = ctx.ws.path(f"out/sbayesr-gctb-{length}")
        r = timed([gctb, "--sbayes", "R", "--ldm", gctb_ld + ".ldm.full", "--gwas-summary", ma,
                   "--chain-length", str(length), "--burn-in", str(iterations // 2), "--seed",
                   "7", "--out", out], ctx.ws.dir)
        r.h2 = hsq(out + ".parRes")
        return r

    chain = Comparison("sbayesr", data, f"sbayesr, seconds per iteration (chains of "
                       f"{2 * iterations}; h2: posterior mean hsq)")
    chain16 = "colflow sbayesr --ldm STORE (16-bit values)"
    chain.add("colflow sbayesr --ldm STORE", lambda: per_iteration(colflow_chain, iterations),
              threads=ctx.threads)
    chain.add(chain16, lambda: per_iteration(lambda n: colflow_chain(n, bits=16), iterations),
              threads=ctx.threads)
    chain.add("colflow sbayesr --ldm GENOTYPES (LD in memory)",
              lambda: per_iteration(lambda n: colflow_chain(n, True), iterations),
              threads=ctx.threads)
    chain.add("GCTB --sbayes R", lambda: per_iteration(gctb_chain, iterations), threads=1)
    chain.ratio("colflow sbayesr --ldm STORE", "GCTB --sbayes R")
    chain.ratio(chain16, "GCTB --sbayes R")
    chain.ratio("colflow sbayesr --ldm GENOTYPES (LD in memory)", "GCTB --sbayes R")
    chain.run(ctx.scale.rounds, log)
    for c in chain.contenders.values():
        h2 = [r.h2 for r in c.runs if r.h2 is not None]
        if h2:
            log(f"  {data} | {c.name}: h2 {h2[-1]:.4f}")
    return [ld, chain]
