# colflow from Python, quick start: convert a PLINK fileset into a store, read it, stream it,
# and run the command's analyses into pandas DataFrames.
#
#     python examples/python/quickstart.py [DATA_DIR]
#
# DATA_DIR holds the shared test data (default: ../shared/data beside the repository, or
# COLFLOW_SHARED_DATA): the UK10K genotypes uk10k/uk10k_chr1_1mb.{bed,bim,fam} and test.phen, a
# phenotype simulated on them from the 100 causal variants of causal.snplist. The store is
# written to the current directory. The cells (`# %%`) run one by one in VS Code, Spyder or
# Jupyter (jupytext), or all at once as a script (a few seconds).

# %% Setup
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import colflow

repository = Path(__file__).resolve().parents[2] if "__file__" in globals() else Path.cwd()
data = Path(sys.argv[1] if len(sys.argv) > 1 and Path(sys.argv[1]).is_dir() else
            os.environ.get("COLFLOW_SHARED_DATA", repository.parent / "shared" / "data"))
uk10k = data / "uk10k"
print("colflow", colflow.__version__, "data in", data)

# %% Preprocess: PLINK .bed/.bim/.fam -> a compressed column store (`colflow preprocess`)
counts = colflow.preprocess(uk10k / "uk10k_chr1_1mb", "uk10k.cf", force=True)
print(f"{counts['rows']} samples x {counts['columns']} variants: "
      f"{counts['input_bytes'] / 2**20:.1f} MiB of codes in {counts['frame_bytes'] / 2**20:.1f} MiB")

# %% Open: samples and columns are DataFrames of the .fam and .bim fields
store = colflow.open("uk10k.cf")
print(store)
print(store.samples.head(3))
print(store.columns.head(3))
print({k: store.info()[k] for k in ("value_type", "codecs", "compression_ratio")})

# %% Read: bed-reader's index forms; A1 counts, NaN missing; standardised on request
x = store.read(np.s_[:5, :8], dtype=np.float64)
print(x)
z = store.read(np.s_[::2, -1000:], dtype=np.float64, standardize=True)
print(z.shape, "z'z of a column = N - 1:", z[:, 0] @ z[:, 0])

# %% Stream: blocks of columns decoded ahead by the library's flow graph, bounded memory
sum_of_squares = 0.0
with store.stream(block_columns=512, standardize=True) as blocks:
    for block in blocks:  # float32 (samples, <= 512), order "F"
        sum_of_squares += float(np.einsum("ij,ij->", block, block, dtype=np.float64))
print("trace of ZZ' / M:", sum_of_squares / store.shape[1])

# %% Stats: `colflow stats` as a DataFrame
stats = colflow.stats(store)
print(stats.describe().loc[["mean", "min", "max"], ["A1_FREQ", "F_MISS", "SD"]])

# %% A phenotype: a Series indexed by IID (numpy arrays of one value per sample work too)
phen = pd.read_csv(uk10k / "test.phen", sep=r"\s+", header=None, dtype={1: str})
y = pd.Series(phen[2].to_numpy(), index=phen[1].to_numpy(), name="trait")
causal = set(pd.read_csv(uk10k / "causal.snplist", header=None)[0])
print(y.describe())

# %% Assoc: `colflow assoc`, one DataFrame per phenotype
gwas = colflow.assoc(store, y)["trait"]
print(gwas.nsmallest(5, "P")[["ID", "A1", "BETA", "SE", "P"]])
hits = gwas[gwas.P < 5e-8]
print(f"{len(hits)} variants at P < 5e-8, {hits.ID.isin(causal).sum()} of the 100 causal ones")

# %% Lasso: `colflow lasso`, the top of a path (progress=True shows a bar with tqdm)
fit = colflow.lasso(store, y, nlambda=8, lambda_min_ratio=0.2, progress=True)
print(fit.path[["LAMBDA", "NONZERO", "R2"]])
last = fit.coefficients[fit.coefficients.LAMBDA == fit.path.LAMBDA.iloc[-1]]
print(f"at the last lambda {len(last)} non-zero, {last.ID.isin(causal).sum()} of them causal")

# %% BayesR: `colflow bayesr`, a short chain (the command's default is 1,000 iterations)
chain = colflow.bayesr(store, y, iterations=100, burnin=40, seed=1, progress=True)
print(f"posterior h2 {chain.h2_mean:.3f} (sd {chain.h2_sd:.3f}), "
      f"{chain.nonzero_mean:.0f} non-zero effects, {chain.seconds:.2f} s")
best = chain.effects.nlargest(10, "PIP")
print(best[["ID", "PIP", "BETA_PER_UNIT"]])
print(f"{best.ID.isin(causal).sum()} of the 10 highest PIPs are causal variants")

# %% Done
store.close()
