"""Two builds of colflow side by side: are their outputs byte-identical, and is either faster?

    python3 bench/compare_builds.py OLD_COLFLOW NEW_COLFLOW [--data DIR] [--rounds N] [--work DIR]
    bench/compare_builds.sh REV [--rounds N]    builds git revision REV and this tree
                                                (release), then runs this script on them

A refactoring that promises "behaviour does not change" is checked here: every analysis and the
exporter run with both programs on the same inputs (real PLINK datasets), and every output file
must be equal byte for byte. Stores themselves differ by their random store id, so each program
makes its own store and what is compared is what comes out of it (exports included). A job the
old build refuses (a command or option it predates) is skipped and named; the new build must run
every job.

Both run on each vector path of colflow's that the CPU has (COLFLOW_SIMD; --simd for one).
Timing: the main workloads (a streaming pass of each codec, stats, assoc, pca, lasso, bayesr),
one process per run, old and new alternating within each round (old new, then new old, ...),
median seconds per program and the median of the round-by-round ratios new/old. These VMs drift
by a quarter from minute to minute, which is why the two are never timed in separate blocks.
Exit status 1 when an output differs; timing only reports.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

from harness.machine import VECTOR_PATHS, vector_paths


def run(program: str, args: list[str], cwd: str) -> float:
    """Runs `program args` in cwd, quietly; returns wall seconds; raises on failure."""
    start = time.perf_counter()
    proc = subprocess.run([program, *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{program} {' '.join(args)} exited with {proc.returncode}:\n"
                           f"{proc.stderr[-2000:]}")
    return seconds


def write_inputs(data: str, work: str) -> dict[str, str]:
    """Phenotype and covariate files on uk10k's samples (a fixed seed: the same for both)."""
    fam = os.path.join(data, "uk10k", "uk10k_chr1_1mb.fam")
    samples = [line.split()[:2] for line in open(fam)]
    rng = random.Random(7)
    covar = os.path.join(work, "uk10k.covar")
    with open(covar, "w") as f:
        f.write("#FID IID AGE SEX\n")
        for fid, iid in samples:
            age = "NA" if rng.random() < 0.02 else f"{rng.uniform(20, 70):.1f}"
            f.write(f"{fid} {iid} {age} {rng.randint(1, 2)}\n")
    pheno = os.path.join(work, "uk10k.pheno")
    phen = {tuple(l.split()[:2]): l.split()[2] for l in open(os.path.join(data, "uk10k", "test.phen"))}
    with open(pheno, "w") as f:
        f.write("#FID IID TRAIT NOISE\n")
        for fid, iid in samples:
            noise = "-9" if rng.random() < 0.05 else f"{rng.gauss(0, 1):.6f}"
            f.write(f"{fid} {iid} {phen.get((fid, iid), 'NA')} {noise}\n")
    return {"pheno": pheno, "covar": covar, **write_hapmap3_traits(data, work, rng),
            "score": write_score_file(data, work, rng)}


def write_hapmap3_traits(data: str, work: str, rng: random.Random) -> dict[str, str]:
    """A quantitative and a case/control trait and one covariate on HapMap3's samples (its 22
    chromosomes are what whole-genome regression leaves out one at a time)."""
    samples = [line.split()[:2] for line in open(os.path.join(data, "hapmap3", "HapMap3.fam"))]
    paths = {"hm3_pheno": os.path.join(work, "hapmap3.pheno"),
             "hm3_covar": os.path.join(work, "hapmap3.covar")}
    with open(paths["hm3_pheno"], "w") as pheno, open(paths["hm3_covar"], "w") as covar:
        pheno.write("FID IID Y CC\n")
        covar.write("FID IID AGE\n")
        for fid, iid in samples:
            y = "NA" if rng.random() < 0.03 else f"{rng.gauss(0, 1):.6f}"
            pheno.write(f"{fid} {iid} {y} {rng.choice(['1', '1', '2', 'NA'])}\n")
            covar.write(f"{fid} {iid} {rng.uniform(20, 70):.1f}\n")
    return paths


def write_score_file(data: str, work: str, rng: random.Random) -> str:
    """plink2 --score's file over a third of uk10k's variants, either allele, two weights."""
    path = os.path.join(work, "uk10k.score")
    with open(path, "w") as f:
        for line in list(open(os.path.join(data, "uk10k", "uk10k_chr1_1mb.bim")))[::3]:
            fields = line.split()
            allele = fields[4] if rng.random() < 0.5 else fields[5]
            f.write(f"{fields[1]}\t{allele}\t{rng.gauss(0, 0.1):.5f}\t{rng.gauss(0, 1):.5f}\n")
    return path


def output_jobs(data: str, inputs: dict[str, str]) -> list[tuple[str, list[str]]]:
    """(name, arguments) of every command whose outputs are compared; paths are relative to the
    program's own working directory, where its stores are."""
    uk10k = os.path.join(data, "uk10k", "uk10k_chr1_1mb")
    hapmap3 = os.path.join(data, "hapmap3", "HapMap3")
    return [
        ("simulate", ["simulate", "--samples", "600", "--variants", "2000", "--causal", "20",
                      "--h2", "0.4", "--seed", "3", "--out", "sim"]),
        ("preprocess uk10k", ["preprocess", "--bed", uk10k, "--out", "uk10k.cf", "--quiet"]),
        ("preprocess hapmap3", ["preprocess", "--bed", hapmap3, "--out", "hapmap3.cf", "--quiet"]),
        ("preprocess hapmap3 zstd", ["preprocess", "--bed", hapmap3, "--codec", "zstd",
                                     "--out", "hapmap3-zstd.cf", "--quiet"]),
        ("stats", ["stats", "hapmap3.cf", "--out", "hapmap3.stats.tsv", "--quiet"]),
        ("stats zstd", ["stats", "hapmap3-zstd.cf", "--out", "hapmap3-zstd.stats.tsv", "--quiet"]),
        ("assoc", ["assoc", "uk10k.cf", "--pheno", inputs["pheno"], "--covar", inputs["covar"],
                   "--out", "uk10k", "--quiet"]),
        ("pca", ["pca", "hapmap3.cf", "--k", "5", "--out", "hapmap3.pca", "--quiet"]),
        ("ridge", ["ridge", "uk10k.cf", "--pheno", inputs["pheno"], "--nlambda", "5",
                   "--out", "uk10k.ridge", "--quiet"]),
        ("lasso", ["lasso", "uk10k.cf", "--pheno", inputs["pheno"], "--nlambda", "4",
                   "--lambda-min-ratio", "0.3", "--out", "uk10k.lasso", "--predict", "uk10k.cf", "--quiet"]),
        ("enet", ["enet", "uk10k.cf", "--pheno", inputs["pheno"], "--nlambda", "4",
                  "--lambda-min-ratio", "0.3", "--alpha", "0.3", "--out", "uk10k.enet", "--quiet"]),
        ("bayesr", ["bayesr", "uk10k.cf", "--pheno", inputs["pheno"], "--iterations", "40",
                    "--burnin", "10", "--seed", "3", "--out", "uk10k.bayesr", "--quiet"]),
        ("score", ["score", "uk10k.cf", "--score", inputs["score"], "1", "2", "3",
                   "--score-col-nums", "3-4", "--out", "uk10k", "--quiet"]),
        ("ld table", ["ld", "hapmap3.cf", "--r2", "--ld-window", "20", "--ld-window-r2", "0",
                      "--out", "hapmap3", "--quiet"]),
        ("ld band", ["ld", "hapmap3.cf", "--r", "band", "--out", "hapmap3.band", "--quiet"]),
        ("grm", ["grm", "hapmap3.cf", "--make-grm-bin", "--out", "hapmap3", "--quiet"]),
        ("wgr", ["wgr", "hapmap3.cf", "--pheno", inputs["hm3_pheno"], "--covar",
                 inputs["hm3_covar"], "--block-size", "500", "--out", "hm3", "--quiet"]),
        ("assoc --loco", ["assoc", "hapmap3.cf", "--pheno", inputs["hm3_pheno"], "--covar",
                          inputs["hm3_covar"], "--loco", "hm3_pred.list", "--out", "hm3.loco",
                          "--quiet"]),
        ("assoc --score-test", ["assoc", "hapmap3.cf", "--pheno", inputs["hm3_pheno"],
                                "--pheno-name", "CC", "--covar", inputs["hm3_covar"], "--loco",
                                "hm3_pred.list", "--score-test", "--out", "hm3.score-test",
                                "--quiet"]),
        ("export bed", ["export", "hapmap3.cf", "--bed", "hapmap3-export", "--quiet"]),
        ("export npy", ["export", "uk10k.cf", "--npy", "uk10k.npy", "--quiet"]),
        ("export npy zstd", ["export", "hapmap3-zstd.cf", "--npy", "hapmap3-zstd.npy", "--quiet"]),
    ]


def first_error_line(refusal: str) -> str:
    """The first line of what the program wrote to stderr (after run()'s own heading line)."""
    lines = [line for line in refusal.splitlines()[1:] if line.strip()]
    return lines[0] if lines else ""


def same_output(path_old: str, path_new: str, dirs: dict[str, str]) -> bool:
    """Byte equality, except that a prediction list names files by absolute path: there each
    build's own folder is taken out first."""
    if not path_old.endswith("_pred.list"):
        return filecmp.cmp(path_old, path_new, shallow=False)
    texts = [open(p).read().replace(dirs[who], "DIR")
             for p, who in ((path_old, "old"), (path_new, "new"))]
    return texts[0] == texts[1]


def compare_outputs(old: str, new: str, data: str, work: str) -> bool:
    dirs = {"old": os.path.join(work, "old"), "new": os.path.join(work, "new")}
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    inputs = write_inputs(data, work)
    for name, args in output_jobs(data, inputs):
        try:
            run(old, args, dirs["old"])
        except RuntimeError as refusal:  # a command or option newer than the old build
            print(f"skipped    {name}: the old build refused it: {first_error_line(str(refusal))}")
            continue
        run(new, args, dirs["new"])
        print(f"ran {name}", file=sys.stderr)
    same = True
    compared = 0
    for entry in sorted(os.listdir(dirs["old"])):
        path_old, path_new = os.path.join(dirs["old"], entry), os.path.join(dirs["new"], entry)
        if os.path.isdir(path_old):
            continue  # a store: its store id is random; its exports are compared instead
        if not os.path.exists(path_new):
            print(f"DIFFERENT  {entry}: only the old build wrote it")
            same = False
            continue
        equal = same_output(path_old, path_new, dirs)
        compared += 1
        print(f"{'identical' if equal else 'DIFFERENT'}  {entry}")
        same &= equal
    for entry in sorted(set(os.listdir(dirs["new"])) - set(os.listdir(dirs["old"]))):
        print(f"DIFFERENT  {entry}: only the new build wrote it")
        same = False
    print(f"{compared} output files compared: {'all identical' if same else 'some differ'}")
    return same


def timing_jobs(inputs: dict[str, str]) -> list[tuple[str, list[str]]]:
    return [
        ("bench pass, genotype store", ["bench", "uk10k.cf", "--mode", "pipelined",
                                        "--passes", "20"]),
        ("bench pass, zstd store", ["bench", "hapmap3-zstd.cf", "--mode", "pipelined",
                                    "--passes", "5"]),
        ("stats", ["stats", "hapmap3-zstd.cf", "--out", "t.stats.tsv", "--quiet"]),
        ("assoc", ["assoc", "uk10k.cf", "--pheno", inputs["pheno"], "--covar", inputs["covar"],
                   "--out", "t", "--quiet"]),
        ("pca k=10", ["pca", "hapmap3.cf", "--k", "10", "--out", "t.pca", "--quiet"]),
        ("lasso 3 lambdas", ["lasso", "uk10k.cf", "--pheno", inputs["pheno"], "--nlambda", "3",
                             "--lambda-min-ratio", "0.3",
                              "--out", "t.lasso", "--quiet"]),
        ("bayesr 40 iterations", ["bayesr", "uk10k.cf", "--pheno", inputs["pheno"],
                                   "--iterations", "40", "--burnin", "10",
                                   "--out", "t.bayesr", "--quiet"]),
    ]


def compare_timing(old: str, new: str, work: str, rounds: int) -> None:
    inputs = {"pheno": os.path.join(work, "uk10k.pheno"), "covar": os.path.join(work, "uk10k.covar")}
    print(f"\n{'workload':<28} {'old s':>8} {'new s':>8} {'new/old':>8}   ({rounds} rounds, alternating)")
    for name, args in timing_jobs(inputs):
        seconds = {"old": [], "new": []}
        ratios = []
        run(old, args, os.path.join(work, "old"))  # warm the page cache for both
        for r in range(rounds):
            order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
            this_round = {}
            for who in order:
                program = old if who == "old" else new
                this_round[who] = run(program, args, os.path.join(work, who))
                seconds[who].append(this_round[who])
            ratios.append(this_round["new"] / this_round["old"])
        print(f"{name:<28} {statistics.median(seconds['old']):8.3f} "
              f"{statistics.median(seconds['new']):8.3f} {statistics.median(ratios):8.3f}")


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the colflow program of the reference build")
    parser.add_argument("new", help="the colflow program of the build under test")
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"),
                        help="the folder of the shared test datasets (uk10k/, hapmap3/)")
    parser.add_argument("--work", default=os.path.join(here, "..", "build", "compare-builds"),
                        help="scratch folder (replaced)")
    parser.add_argument("--rounds", type=int, default=6, help="timing rounds (0: no timing)")
    parser.add_argument("--simd", choices=["all", *VECTOR_PATHS], default="all",
                        help="the vector path both builds run on (COLFLOW_SIMD); all: each one "
                        "this CPU has, widest first (default)")
    a = parser.parse_args()
    old, new = os.path.abspath(a.old), os.path.abspath(a.new)
    data = os.path.abspath(a.data)
    if not os.path.isdir(os.path.join(data, "uk10k")):
        print(f"compare_builds: no shared datasets in {data} (--data)", file=sys.stderr)
        return 2
    same = True
    # Each path in turn, outputs and timings: a change that speeds one path and slows another
    # shows up in the other's rows.
    for path in vector_paths() if a.simd == "all" else [a.simd]:
        os.environ["COLFLOW_SIMD"] = path
        print(f"\n== COLFLOW_SIMD={path}")
        work = os.path.join(os.path.abspath(a.work), path)
        os.makedirs(work, exist_ok=True)
        same = compare_outputs(old, new, data, work) and same
        if a.rounds > 0:
            compare_timing(old, new, work, a.rounds)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
