"""Calibration of whole-genome regression: on HapMap3's populations with simulated offspring,
a polygenic trait with an ancestry shift inflates plain least squares; `wgr` with
`assoc --loco` must bring the null columns' genomic-control lambda near 1, as regenie does."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from bed_reader import to_bed
from scipy import stats

import colflow

from conftest import REPOSITORY, read_tsv

REGENIE = REPOSITORY.parent / "shared" / "peers" / "bin" / "regenie"
OFFSPRING = 400
CAUSAL_CHROMOSOMES = range(1, 12)  # the causal columns; 12-22 hold the null ones


def offspring(x: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Children of parents adjacent in `order` (one ancestry): each parent passes one allele,
    a heterozygous call either allele with probability 1/2."""
    children = []
    for i in rng.integers(0, len(x) - 1, OFFSPRING):
        gametes = [np.where(p == 1, rng.integers(0, 2, p.size), p / 2) for p in x[order[i:i + 2]]]
        children.append(gametes[0] + gametes[1])
    return np.array(children)


@pytest.fixture(scope="module")
def cohort(tmp_path_factory, make_store):
    path = tmp_path_factory.mktemp("calibration")
    with colflow.open(make_store("hapmap3/HapMap3")) as s:
        x, columns, samples = s.read(dtype=np.float64), s.columns, s.samples
    chrom = pd.to_numeric(columns.chrom, errors="coerce").to_numpy()
    autosomal = (chrom >= 1) & (chrom <= 22)
    x, columns, chrom = x[:, autosomal], columns[autosomal], chrom[autosomal].astype(int)
    rng = np.random.default_rng(11)
    mean = np.nanmean(x, axis=0)
    sd = np.nanstd(x, axis=0)
    sd[sd == 0] = 1
    z = (np.where(np.isnan(x), mean, x) - mean) / sd
    pc1 = np.linalg.svd(z, full_matrices=False)[2][0]  # the founders' first axis
    x = np.vstack([x, offspring(x, np.argsort(z @ pc1), rng)])
    ids = [*samples.iid, *(f"kid{k}" for k in range(OFFSPRING))]
    fids = [*samples.fid, *(f"K{k}" for k in range(OFFSPRING))]
    to_bed(str(path / "cohort.bed"), x.astype(np.float32), count_A1=True, properties={
        "fid": fids, "iid": ids, "chromosome": chrom.astype(str), "sid": columns.id.to_numpy(),
        "bp_position": columns.pos.astype(int).to_numpy(), "allele_1": columns.a1.to_numpy(),
        "allele_2": columns.a2.to_numpy()})
    store = path / "cohort.cf"
    colflow.preprocess(str(path / "cohort"), store)

    z = (np.where(np.isnan(x), mean, x) - mean) / sd
    shift = z @ pc1
    shift = (shift - shift.mean()) / shift.std()
    candidates = np.flatnonzero(np.isin(chrom, CAUSAL_CHROMOSOMES) & (np.nanstd(x, axis=0) > 0))
    causal = rng.choice(candidates, 300, replace=False)
    genetic = z[:, causal] @ rng.normal(size=causal.size)
    genetic *= np.sqrt(0.4) / genetic.std()
    y = genetic + 0.5 * shift + rng.normal(scale=np.sqrt(0.6), size=len(x))
    pd.DataFrame({"FID": fids, "IID": ids, "Y": y}).to_csv(path / "pheno.txt", sep=" ",
                                                            index=False)
    return dict(path=path, store=store, causal=set(columns.id.to_numpy()[causal]),
                null=set(columns.id.to_numpy()[chrom >= 12]))


def summary(ids, chi2, cohort) -> tuple[float, float]:
    """Genomic-control lambda of the null chromosomes' columns; mean chi2 of the causal ones."""
    null = np.array([i in cohort["null"] for i in ids])
    causal = np.array([i in cohort["causal"] for i in ids])
    return np.median(chi2[null]) / stats.chi2.ppf(0.5, 1), chi2[causal].mean()


def colflow_chi2(path, cohort):
    t = read_tsv(path)
    t = t[t.T_STAT.notna()]
    return summary(t.ID.to_numpy(), t.T_STAT.to_numpy() ** 2, cohort)


def test_loco_removes_the_inflation_of_structure_and_relatives(cohort, colflow_cli):
    path, store = cohort["path"], cohort["store"]
    pheno = path / "pheno.txt"
    colflow_cli("assoc", store, "--pheno", pheno, "--out", path / "plain")
    # HapMap3's chromosomes have 200-1,200 columns here: fewer than regenie's default block of
    # 1,000 on most, each fitted as one smaller block (as regenie) without a flag.
    colflow_cli("wgr", store, "--pheno", pheno, "--out", path / "step1")
    colflow_cli("assoc", store, "--pheno", pheno, "--loco", path / "step1_pred.list", "--out",
                path / "loco")
    plain, _ = colflow_chi2(path / "plain.Y.assoc.tsv", cohort)
    loco, causal = colflow_chi2(path / "loco.Y.assoc.tsv", cohort)
    print(f"lambda plain {plain:.3f}, --loco {loco:.3f}; causal mean chi2 {causal:.3f}")
    assert plain > 3
    assert 0.95 <= loco <= 1.05
    assert causal > 1.5
    cohort["colflow"] = (loco, causal)


def test_lambda_and_causal_chi2_are_regenies(cohort):
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    if "colflow" not in cohort:
        pytest.skip("needs test_loco_removes_the_inflation_of_structure_and_relatives")
    path = cohort["path"]
    for step in (["--step", "1", "--out", "r1"],
                 ["--step", "2", "--pred", "r1_pred.list", "--out", "r2"]):
        done = subprocess.run([str(REGENIE), "--bed", "cohort", "--phenoFile", "pheno.txt", "--qt",
                               "--bsize", "1000", "--threads", "2", *step], cwd=path,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:]
    t = pd.read_csv(path / "r2_Y.regenie", sep=" ")
    loco, causal = summary(t.ID.to_numpy(), t.CHISQ.to_numpy(), cohort)
    print(f"regenie: lambda {loco:.3f}; causal mean chi2 {causal:.3f}")
    assert abs(loco - cohort["colflow"][0]) < 0.02
    assert abs(causal - cohort["colflow"][1]) < 0.05 * causal
