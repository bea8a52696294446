"""Products of the genotype matrix against PLINK on the same .bed, same threads:

  score, 1 column     plink2 --score FILE 1 2 3 header
  score, 10 columns   the same with --score-col-nums 3-12 (all scores in one pass each)
  ld, table           plink1.9 --r2 (its default window: 10 variants, 1000 kb, r2 >= 0.2)
  ld, square bin4     plink1.9 --r2 square bin4 on the first columns (every pair)
  grm, make-rel       plink2 --make-rel square bin4 on the first columns
  grm, make-grm-bin   plink1.9 --make-grm-bin on the first columns

Wall time and peak RSS of each process. For the square LD matrix and the GRM the suite also
records the throughput of each contender in sample-pairs per second (kind "measure", column
pairs_per_s: distinct entries x the samples or variants each sums over, divided by the median
time), and a row per bound (kind "peak") of this machine: the integer peak of the LD kernel's
nine AND + POPCNT + ADD a word pair and the FMA peak of the GRM's one multiply-add a sample pair
and variant, from the clock in /proc/cpuinfo and the widest vector unit its flags list.
"""
from __future__ import annotations

import os
import random

from .context import Context
from .data import Dataset, first_columns
from .measure import Comparison, log, timed


def weights_file(ctx: Context, data: Dataset, columns: int) -> str:
    """ID A1 W1..W<columns> with a header, one line per variant: normal weights, seed 5."""
    path = ctx.ws.path(f"{os.path.basename(data.prefix)}.weights{columns}")
    if not (os.path.exists(path) and os.path.getmtime(path) > os.path.getmtime(data.prefix + ".bim")):
        rng = random.Random(5)
        with open(data.prefix + ".bim") as bim, open(path + ".tmp", "w") as out:
            out.write("ID\tA1\t" + "\t".join(f"W{i + 1}" for i in range(columns)) + "\n")
            for line in bim:
                fields = line.split()
                out.write(f"{fields[1]}\t{fields[4]}\t"
                          + "\t".join(f"{rng.gauss(0, 0.01):.6g}" for _ in range(columns)) + "\n")
        os.replace(path + ".tmp", path)
    return path


def cpu_clock_hz() -> float:
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return 0.0


def cpu_flags() -> set[str]:
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":")[1].split())
    return set()


def peaks(threads: int) -> dict[str, tuple[str, float]]:
    """The machine's bounds in sample-pairs per second for the LD kernel and the GRM.

    LD (genotype_products.hpp): a pair of 64-bit plane words covers 64 samples with nine AND,
    nine POPCNT and nine ADD; with VPOPCNTDQ a 512-bit vector holds 8 words and two vector
    ports issue per cycle, else scalar POPCNT (one a cycle) with the AND and ADD beside it.
    GRM: one multiply-add per sample pair and variant, in binary32 for the binary32 outputs
    timed here (colflow's default for them), two FMA ports of 16 (AVX-512) or 8 (AVX2) lanes.
    Some CPUs issue one 512-bit FMA per cycle (AMD Zen 4 splits it in two): half this bound.
    KING (kernels/king_counts_internal.hpp), in sample pairs x variants, on the path this run
    measures (COLFLOW_SIMD): AVX2 takes 18 vector operations a step of 256 variants (four to
    combine the planes, two nibble-table population counts and their sums of seven each) on the
    three or four vector ports of current x86 cores, four here, so an upper bound; AVX-512 with
    VPOPCNTDQ takes 7 a step of 512 (two AND, a ternary logic, two population counts, two
    sums) on two 512-bit ports."""
    hz, flags = cpu_clock_hz(), cpu_flags()
    if "avx512_vpopcntdq" in flags:
        integer = threads * hz * 2 * 512 / 27
        integer_how = "2 ports x 512 bits / 27 vector ops"
    else:
        integer = threads * hz * 64 / 9
        integer_how = "1 POPCNT/cycle x 64 bits / 9 popcounts"
    lanes = 16 if "avx512f" in flags else 8 if "fma" in flags else 1
    fma = threads * hz * 2 * lanes
    if os.environ.get("COLFLOW_SIMD", "avx512") == "avx512" and "avx512_vpopcntdq" in flags:
        king, king_how = threads * hz * 2 * 512 / 7, "2 ports x 512 bits / 7 vector ops"
    else:
        king, king_how = threads * hz * 4 * 256 / 18, "4 ports x 256 bits / 18 vector ops"
    clock = f"{threads} cores x {hz / 1e9:.2f} GHz"
    return {"ld": (f"integer peak: {clock} x {integer_how}", integer),
            "grm": (f"FMA peak: {clock} x 2 FMA x {lanes} floats", fma),
            "king": (f"integer peak: {clock} x {king_how}", king)}


def run(ctx: Context) -> list[Comparison]:
    data, t = ctx.main, str(ctx.threads)
    quick = ctx.scale.quick
    out = ctx.ws.path("out")
    os.makedirs(out, exist_ok=True)
    store = ctx.ws.store(data, "genotype", "--codec", "genotype")
    square = first_columns(ctx.ws, data, 2_000 if quick else 5_000)
    square_store = ctx.ws.store(square, "genotype", "--codec", "genotype")
    grm_data = first_columns(ctx.ws, data, 2_000 if quick else 4_000)
    grm_store = ctx.ws.store(grm_data, "genotype", "--codec", "genotype")
    weights = weights_file(ctx, data, 10)

    def colflow(command, store_path, *args):
        return [ctx.colflow, command, store_path, "--quiet", "--threads", t, *args]

    def plink2(prefix, *args):
        return ["plink2", "--bfile", prefix, "--threads", t, "--silent", *args]

    def plink19(prefix, *args):
        return ["plink1.9", "--bfile", prefix, "--threads", t, "--silent", "--allow-no-sex", *args]

    comparisons = []

    bounds = peaks(ctx.threads)

    def compare(subject: Dataset, task, contenders, rounds=ctx.scale.rounds, work=None, peak=None):
        cmp = Comparison("products", subject.name, task)
        for name, cmd in contenders:
            cmp.add(name, lambda cmd=cmd: timed(cmd, ctx.ws.dir), threads=ctx.threads)
        cmp.ratio(contenders[0][0], contenders[1][0])
        cmp.throughput(work, *(peak or (None, None)))
        comparisons.append((cmp, rounds))

    # Distinct entries x what each sums over: LD pairs of columns over the samples, GRM pairs
    # of samples over the variants.
    ld_work = square.variants * (square.variants - 1) // 2 * square.samples
    grm_work = grm_data.samples * (grm_data.samples + 1) // 2 * grm_data.variants

    score = ["--score", weights, "1", "2", "3", "header"]
    scores = ["--score", weights, "1", "2", "header", "--score-col-nums", "3-12"]
    compare(data, "score, 1 column", [
        ("colflow score", colflow("score", store, *score, "--out", f"{out}/cs1")),
        ("plink2 --score", plink2(data.prefix, *score, "--out", f"{out}/ps1"))])
    compare(data, "score, 10 columns", [
        ("colflow score", colflow("score", store, *scores, "--out", f"{out}/cs10")),
        ("plink2 --score", plink2(data.prefix, *scores, "--out", f"{out}/ps10"))])
    compare(data, "ld, --r2 table (window 10 variants, 1000 kb, r2 >= 0.2)", [
        ("colflow ld", colflow("ld", store, "--r2", "--out", f"{out}/cl")),
        ("plink1.9 --r2", plink19(data.prefix, "--r2", "--out", f"{out}/pl"))])
    compare(square, "ld, --r2 square bin4 (every pair)", [
        ("colflow ld", colflow("ld", square_store, "--r2", "square", "bin4", "--out", f"{out}/cls")),
        ("plink1.9 --r2", plink19(square.prefix, "--r2", "square", "bin4", "--out", f"{out}/pls"))],
        work=ld_work, peak=bounds["ld"])
    grm_rounds = ctx.scale.rounds if quick else 2
    compare(grm_data, "grm, --make-rel square bin4", [
        ("colflow grm", colflow("grm", grm_store, "--make-rel", "square", "bin4", "--out", f"{out}/cr")),
        ("plink2 --make-rel", plink2(grm_data.prefix, "--make-rel", "square", "bin4",
                                     "--out", f"{out}/pr"))],
        rounds=grm_rounds, work=grm_work, peak=bounds["grm"])
    compare(grm_data, "grm, --make-grm-bin", [
        ("colflow grm", colflow("grm", grm_store, "--make-grm-bin", "--out", f"{out}/cg")),
        ("plink1.9 --make-grm-bin", plink19(grm_data.prefix, "--make-grm-bin", "--out", f"{out}/pg")),
        # The binary64 products PLINK computes, beside the default binary32 ones.
        ("colflow grm --precision double", colflow("grm", grm_store, "--make-grm-bin",
                                                   "--precision", "double", "--out", f"{out}/cgd"))],
        rounds=grm_rounds, work=grm_work, peak=bounds["grm"])
    for cmp, rounds in comparisons:
        cmp.run(rounds, log)
    return [cmp for cmp, _ in comparisons]
