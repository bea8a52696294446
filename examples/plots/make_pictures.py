# The pictures of docs/PYTHON.md ("Pictures"), made with colflow.plot from the shared data:
# a scan of HapMap3 (a trait simulated here from 10 causal variants) as a Manhattan and a QQ
# plot, its principal components, two BayesR chains of the UK10K trait (the trace of one, the
# split R-hat of both) and the LD of the first 150 UK10K variants.
#
#     python examples/plots/make_pictures.py [DATA_DIR] [OUT_DIR]
#
# DATA_DIR holds the shared test data (default: ../shared/data beside the repository, or
# COLFLOW_SHARED_DATA); the stores and tables go to the current directory, the pictures to
# OUT_DIR (default: the current directory) as PNG. Needs matplotlib (pip install
# './python[plot]'). About a minute on 2 cores, most of it the chains.

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import colflow
from colflow import plot

repository = Path(__file__).resolve().parents[2]
data = Path(sys.argv[1] if len(sys.argv) > 1 else
            os.environ.get("COLFLOW_SHARED_DATA", repository.parent / "shared" / "data"))
out = Path(sys.argv[2] if len(sys.argv) > 2 else ".")
out.mkdir(parents=True, exist_ok=True)

# A scan of HapMap3 (957 samples, chromosomes 1-22, X, XY, MT): y = Zβ + e with 10 causal
# autosomal variants of equal effect and h² = 0.5, the same every run (seed 2).
colflow.preprocess(data / "hapmap3" / "HapMap3", "hapmap3.cf", force=True)
with colflow.open("hapmap3.cf") as store:
    rng = np.random.default_rng(2)
    autosomal = np.flatnonzero(store.columns.chrom.isin(
        [str(c) for c in range(1, 23)]).to_numpy())
    causal = np.sort(rng.choice(autosomal, 10, replace=False))
    z = np.nan_to_num(store.read(np.s_[:, causal], dtype=np.float64, standardize=True))
    genetic = z.sum(axis=1)
    y = genetic / genetic.std() + rng.normal(size=len(genetic))
    trait = pd.Series(y, index=store.samples.iid, name="trait")
    scan = colflow.assoc(store, trait)["trait"]
    scan.to_csv("hapmap3.trait.assoc.tsv", sep="\t", index=False)
    print(f"HapMap3 scan: {len(scan)} variants, {int((scan.P < 5e-8).sum())} under 5e-8, "
          f"lambda {plot.genomic_control_lambda(scan.P):.3f}")
    plot.manhattan(scan, title="HapMap3, a trait of 10 causal variants",
                   out=out / "manhattan.png", width=10, height=3.6)
    plot.qq(scan, title="HapMap3 scan", out=out / "qq.png", width=4, height=4)
    pcs = colflow.pca(store, k=4)
    samples = pd.DataFrame({"IID": store.samples.iid, "trait": y})
    plot.pcs(pcs.eigenvectors, color_by="trait", samples=samples,
             title="HapMap3: principal components", out=out / "pcs.png", height=3.6)

# BayesR on UK10K chr1:1-2 Mb and its simulated trait (h² 0.5): two chains, seeds 1 and 2.
uk10k = data / "uk10k"
colflow.preprocess(uk10k / "uk10k_chr1_1mb", "uk10k.cf", force=True)
phen = pd.read_csv(uk10k / "test.phen", sep=r"\s+", header=None)
pheno = pd.Series(phen[2].to_numpy(), index=phen[1].astype(str).to_numpy(), name="trait")
chains = [colflow.bayesr("uk10k.cf", pheno, iterations=600, burnin=150, seed=seed)
          for seed in (1, 2)]
for seed, fit in zip((1, 2), chains):
    fit.trace.to_csv(f"uk10k.seed{seed}.trace.tsv", sep="\t", index=False)
    print(f"BayesR seed {seed}: h2 {fit.h2_mean:.3f} (sd {fit.h2_sd:.3f}), ESS of h2 "
          f"{fit.h2_ess:.0f}, Geweke z {fit.h2_geweke_z:.2f}")
plot.trace(chains[0], burnin=150, title="UK10K BayesR, seed 1", out=out / "trace.png",
           width=8, height=6)
plot.rhat(chains, burnin=150, title="UK10K BayesR, seeds 1 and 2", out=out / "rhat.png",
          width=8, height=6)

# LD (r²) of the first 150 UK10K variants.
ld = colflow.ld_matrix("uk10k.cf", r2=True, columns=np.s_[:150])
plot.ld(ld, count=None, title="UK10K chr1, first 150 variants: r²", out=out / "ld.png",
        size=4.5)
for name in ("manhattan", "qq", "pcs", "trace", "rhat", "ld"):
    print(f"{out / (name + '.png')}: {(out / (name + '.png')).stat().st_size // 1024} KiB")
