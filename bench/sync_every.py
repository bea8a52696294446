#!/usr/bin/env python3
"""BayesR's --sync-every K (hydra's scheme) against the exact chain on uk10k, on MPI ranks.

    python3 bench/sync_every.py build/release/cli/colflow [--ranks 2] [--k 1,10,100,1000]
                                [--iterations 1000] [--burnin 200] [--data ../shared/data/uk10k]

Runs the exact chain (one process), a second exact chain with another seed (how far two exact
chains fall apart by Monte Carlo noise alone), and `mpirun -np R colflow bayesr --sync-every K`
for each K. Prints per chain: posterior mean h2 and its difference from the exact chain's, how
many of the exact chain's 10 highest-PIP variants are among its own 10 highest (PIP first, then
|posterior mean effect|: uk10k has more than ten variants at PIP 1), and seconds per iteration.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    m = re.search(r"([0-9.]+) ms per iteration", out.stderr)
    return float(m.group(1)) / 1e3 if m else float("nan")


def summary(prefix, burnin):
    with open(prefix + ".trace.tsv") as f:
        h2 = [float(r["H2"]) for r in csv.DictReader(f, delimiter="\t") if int(r["ITER"]) > burnin]
    with open(prefix + ".effects.tsv") as f:
        effects = list(csv.DictReader(f, delimiter="\t"))
    top = sorted(effects, key=lambda r: (-float(r["PIP"]), -abs(float(r["BETA"]))))[:10]
    return sum(h2) / len(h2), {r["ID"] for r in top}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("colflow")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--k", default="1,10,100,1000")
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--burnin", type=int, default=200)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data", "uk10k"))
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "uk10k.cf")
        subprocess.run([a.colflow, "preprocess", "--quiet", "--bed",
                        os.path.join(a.data, "uk10k_chr1_1mb"), "--out", store], check=True)
        chain = [a.colflow, "bayesr", store, "--pheno", os.path.join(a.data, "test.phen"),
                 "--iterations", str(a.iterations), "--burnin", str(a.burnin), "--threads", "1"]
        rows = []
        for name, cmd in [("exact, 1 process", chain + ["--out", f"{d}/exact"]),
                          ("exact, seed 2", chain + ["--seed", "2", "--out", f"{d}/seed2"])] + [
                (f"--sync-every {k}, {a.ranks} ranks",
                 ["mpirun", "-np", str(a.ranks), "--oversubscribe"] + chain +
                 ["--sync-every", k, "--out", f"{d}/k{k}"]) for k in a.k.split(",")]:
            seconds = run(cmd, env)
            rows.append((name, cmd[cmd.index("--out") + 1], seconds))
        h2_exact, top_exact = summary(rows[0][1], a.burnin)
        print("chain\th2\th2 - exact\ttop-10 shared\ts per iteration")
        for name, prefix, seconds in rows:
            h2, top = summary(prefix, a.burnin)
            print(f"{name}\t{h2:.4f}\t{h2 - h2_exact:+.4f}\t{len(top & top_exact)}/10\t{seconds:.4f}")


if __name__ == "__main__":
    main()
