"""Quality control against PLINK on the same .bed, same threads (issue: a study without plink2
beside it):

  hardy            plink2 --hardy
  filters          plink2 --maf 0.01 --mac 100 --geno 0.1 --hwe 1e-15 --mind 0.1
                   --write-snplist --write-samples (regenie's recipe)
  indep-pairwise   plink2 --indep-pairwise 50 5 0.5
  king table       plink2 --make-king-table --king-table-filter 0.0442 on the first columns
                   (the pairs of third-degree relatives or closer: the table of every pair of
                   10,000 samples would be 50 million lines, a test of text output)
  king cutoff      plink2 --king-cutoff 0.0884 on the same columns
  clump            plink1.9 --clump of plink2 --glm's table (the Debian plink2 has no --clump)

Wall time and peak RSS of each process; for the KING table also its throughput in sample pairs
x variants per second beside the machine's integer bound for KING's two population counts a
pair (suite_products.peaks). Every input is first dropped from the page cache and read once in
order (measure.settle_in_page_cache), so that no contender inherits how earlier runs left it.
"""
from __future__ import annotations

import os
import subprocess

from .context import Context
from .data import Dataset, first_columns
from .measure import Comparison, log, settle_in_page_cache, timed
from .suite_products import peaks

RECIPE = ["--maf", "0.01", "--mac", "100", "--geno", "0.1", "--hwe", "1e-15", "--mind", "0.1"]


def assoc_table(ctx: Context, data: Dataset) -> str:
    """plink2 --glm's table of the dataset's phenotype (made once), the table both clump."""
    prefix = ctx.ws.path(f"{os.path.basename(data.prefix)}.qc-glm")
    table = prefix + ".PHENO1.glm.linear"
    if not os.path.exists(table):
        subprocess.run(["plink2", "--bfile", data.prefix, "--pheno", data.pheno, "--glm",
                        "allow-no-covars", "--threads", str(ctx.threads), "--silent",
                        "--out", prefix], check=True, cwd=ctx.ws.dir)
    return table


def run(ctx: Context) -> list[Comparison]:
    data, t = ctx.main, str(ctx.threads)
    out = ctx.ws.path("qc")
    os.makedirs(out, exist_ok=True)
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    king_data = first_columns(ctx.ws, data, 5_000 if ctx.scale.quick else 10_000)
    king_store = ctx.ws.store(king_data, "genotype", "--codec", "genotype")
    scan = assoc_table(ctx, data)
    settle_in_page_cache(store, king_store, scan,
                         *(d.prefix + ext for d in (data, king_data) for ext in (".bed", ".bim", ".fam")))

    def colflow(command, store_path, *args):
        return [ctx.colflow, command, store_path, "--quiet", "--threads", t, *args]

    def plink2(prefix, *args):
        return ["plink2", "--bfile", prefix, "--threads", t, "--silent", *args]

    def plink19(prefix, *args):
        return ["plink1.9", "--bfile", prefix, "--threads", t, "--silent", "--allow-no-sex", *args]

    comparisons = []

    def compare(task, contenders, work=None, peak=None):
        cmp = Comparison("qc", data.name, task)
        for name, cmd in contenders:
            cmp.add(name, lambda cmd=cmd: timed(cmd, ctx.ws.dir), threads=ctx.threads)
        cmp.ratio(contenders[0][0], contenders[1][0])
        cmp.throughput(work, *(peak or (None, None)))
        comparisons.append(cmp)

    compare("hardy", [
        ("colflow hardy", colflow("hardy", store, "--out", f"{out}/ch")),
        ("plink2 --hardy", plink2(data.prefix, "--hardy", "--out", f"{out}/ph"))])
    lists = ["--write-snplist", "--write-samples", "--no-id-header"]
    compare("filters, regenie's recipe", [
        ("colflow qc", colflow("qc", store, *RECIPE, *lists, "--out", f"{out}/cf")),
        ("plink2 filters", plink2(data.prefix, *RECIPE, *lists, "--out", f"{out}/pf"))])
    prune = ["--indep-pairwise", "50", "5", "0.5"]
    compare("indep-pairwise 50 5 0.5", [
        ("colflow ld", colflow("ld", store, *prune, "--out", f"{out}/cp")),
        ("plink2 --indep-pairwise", plink2(data.prefix, *prune, "--out", f"{out}/pp"))])
    king_work = data.samples * (data.samples - 1) // 2 * king_data.variants
    table = ["--make-king-table", "--king-table-filter", "0.0442"]
    compare(f"king table (filter 0.0442), first {king_data.variants} columns", [
        ("colflow king", colflow("king", king_store, *table, "--out", f"{out}/ck")),
        ("plink2 --make-king-table", plink2(king_data.prefix, *table, "--out", f"{out}/pk"))],
        work=king_work, peak=peaks(ctx.threads)["king"])
    compare(f"king cutoff 0.0884, first {king_data.variants} columns", [
        ("colflow king", colflow("king", king_store, "--king-cutoff", "0.0884",
                                 "--out", f"{out}/cc")),
        ("plink2 --king-cutoff", plink2(king_data.prefix, "--king-cutoff", "0.0884",
                                        "--out", f"{out}/pc"))])
    clump = ["--clump", scan, "--clump-snp-field", "ID", "--clump-p1", "1e-4"]
    compare("clump (p1 1e-4, p2 0.01, r2 0.5, 250 kb)", [
        ("colflow clump", colflow("clump", store, *clump, "--out", f"{out}/ccl")),
        ("plink1.9 --clump", plink19(data.prefix, *clump, "--out", f"{out}/pcl"))])
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
    return comparisons
