"""colflow wgr (regenie's step 1) and assoc --loco (its step 2) against regenie itself, where
../shared/peers has it: .loco files of real data with missing calls, predictions read across
both ways, case/control step 2 (fitted and score tests), and leave-one-out above and below 5,000
samples. Against a numpy implementation of the same algorithm: test_wgr_step1.py and
test_wgr_step2.py."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bed_reader import to_bed

import colflow

from conftest import DATA, dataset, read_tsv
from wgr_reference import REGENIE, read_loco, run_regenie


def read_regenie(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=" ").set_index("ID")


def autosomes_only(prefix: str, out: Path, chromosomes=range(1, 23)) -> Path:
    """The variants of some of chromosomes 1-22 (all by default) of a PLINK fileset, as a new
    fileset (regenie refuses the codes 25 and 26 of XY and MT)."""
    bim = pd.read_csv(f"{prefix}.bim", sep=r"\s+", header=None, dtype={0: str})
    keep = bim[0].isin([str(c) for c in chromosomes]).to_numpy()
    samples = sum(1 for _ in open(f"{prefix}.fam"))
    width = (samples + 3) // 4
    raw = np.fromfile(f"{prefix}.bed", dtype=np.uint8)
    body = raw[3:].reshape(len(bim), width)[keep]
    Path(f"{out}.bed").write_bytes(raw[:3].tobytes() + body.tobytes())
    bim[keep].to_csv(f"{out}.bim", sep="\t", header=False, index=False)
    shutil.copy(f"{prefix}.fam", f"{out}.fam")
    return out


# HapMap3 on chromosome 1 (longer than regenie's 1,000-variant block) and four short ones: a
# fifth of its variants, the same cases as the whole genome at a fifth of the time.
@pytest.mark.parametrize("name, kept, chromosomes", [
    ("hapmap3/HapMap3", 800, (1, 19, 20, 21, 22)), ("bed-reader/some_missing", 0, range(1, 23))])
def test_loco_equals_regenies_on_real_data_with_missing_calls(name, kept, chromosomes, colflow_cli,
                                                              tmp_path):
    """regenie's step 1 and colflow wgr on real genotypes with their own missing calls, default
    blocks (chromosomes shorter than one block included) and folds or leave-one-out: the same
    .loco files to regenie's six printed digits, quantitative and case/control. HapMap3 runs
    on a --keep subset listed in shuffled order."""
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    prefix = autosomes_only(dataset(name), tmp_path / "geno", chromosomes)
    fam = pd.read_csv(f"{prefix}.fam", sep=r"\s+", header=None, dtype=str)
    body = np.fromfile(f"{prefix}.bed", dtype=np.uint8)[3:]
    codes = np.stack([(body >> shift) & 3 for shift in (0, 2, 4, 6)])
    assert (codes == 1).sum() > 100  # missing calls (padding is 00, never 01)
    rng = np.random.default_rng(23)
    trait = rng.normal(size=len(fam))
    pd.DataFrame({"FID": fam[0], "IID": fam[1], "Q": trait}).to_csv(
        tmp_path / "q.txt", sep=" ", index=False)
    pd.DataFrame({"FID": fam[0], "IID": fam[1], "B": (trait > 0.3).astype(int)}).to_csv(
        tmp_path / "b.txt", sep=" ", index=False)
    keep = []
    if kept:
        fam.iloc[rng.permutation(len(fam))[:kept], :2].to_csv(
            tmp_path / "keep.txt", sep=" ", header=False, index=False)
        keep = ["--keep", tmp_path / "keep.txt"]
    colflow.preprocess(str(prefix), tmp_path / "geno.cf")
    for kind, pheno in (("--qt", "q.txt"), ("--bt", "b.txt")):
        run_regenie("--step", 1, "--bed", prefix, "--phenoFile", pheno, kind, "--bsize", 1000,
                    *keep, "--out", "rg", cwd=tmp_path)
        colflow_cli("wgr", tmp_path / "geno.cf", "--pheno", tmp_path / pheno,
                    *(["--binary", "--1"] if kind == "--bt" else []), *keep,
                    "--out", tmp_path / "cf")
        ours, theirs = read_loco(tmp_path / "cf_1.loco"), read_loco(tmp_path / "rg_1.loco")
        assert sorted(ours.columns) == sorted(theirs.columns)
        assert len(ours.columns) == (kept or len(fam))
        np.testing.assert_allclose(ours[theirs.columns].to_numpy(), theirs.to_numpy(),
                                   rtol=1e-5, atol=1e-12, err_msg=f"{name} {kind}")


def test_regenie_reads_colflows_predictions_and_colflow_reads_regenies(toy, colflow_cli, tmp_path):
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    # Every sample analysed (no missing value), where regenie's step 1 and colflow's agree.
    pheno = pd.read_csv(toy["path"] / "pheno.txt", sep=" ")[["FID", "IID", "T1"]]
    pheno.to_csv(tmp_path / "pheno.txt", sep=" ", index=False)
    prefix = dataset(DATA)
    run_regenie("--step", 1, "--bed", prefix, "--phenoFile", "pheno.txt", "--qt", "--bsize", 300,
                "--out", "rg", cwd=tmp_path)
    colflow_cli("wgr", toy["store"], "--pheno", tmp_path / "pheno.txt", "--block-size", 300,
                "--out", tmp_path / "cf")
    ours, theirs = read_loco(tmp_path / "cf_1.loco"), read_loco(tmp_path / "rg_1.loco")
    theirs = theirs[ours.columns]
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=2e-5,
                               atol=2e-5 * np.abs(theirs.to_numpy()).max())
    # Leave-one-out (--loocv in both): the same to regenie's six digits.
    run_regenie("--step", 1, "--bed", prefix, "--phenoFile", "pheno.txt", "--qt", "--bsize", 300,
                "--loocv", "--out", "rg_loo", cwd=tmp_path)
    colflow_cli("wgr", toy["store"], "--pheno", tmp_path / "pheno.txt", "--block-size", 300,
                "--loocv", "--out", tmp_path / "cf_loo")
    ours, theirs = read_loco(tmp_path / "cf_loo_1.loco"), read_loco(tmp_path / "rg_loo_1.loco")
    np.testing.assert_allclose(ours.to_numpy(), theirs[ours.columns].to_numpy(), rtol=1e-5,
                               atol=1e-9)
    # Step 2 across: regenie on colflow's predictions, colflow on regenie's.
    run_regenie("--step", 2, "--bed", prefix, "--phenoFile", "pheno.txt", "--qt", "--bsize", 400,
                "--pred", "cf_pred.list", "--out", "rg2", cwd=tmp_path)
    colflow_cli("assoc", toy["store"], "--pheno", tmp_path / "pheno.txt", "--loco",
                tmp_path / "rg_pred.list", "--out", tmp_path / "cf2")
    regenie = read_regenie(tmp_path / "rg2_T1.regenie")
    ours = read_tsv(tmp_path / "cf2.T1.assoc.tsv").set_index("ID").loc[regenie.index]
    np.testing.assert_allclose(ours.BETA, regenie.BETA, rtol=0.02, atol=1e-3)
    # A t test of the fitted column (colflow) against a score test (regenie): close, not equal.
    np.testing.assert_allclose(-np.log10(ours.P), regenie.LOG10P, rtol=0.02, atol=0.02)


def test_regenie_case_control_predictions_serve_colflows_step_2(toy, case_control, colflow_cli,
                                                                tmp_path):
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    prefix = dataset(DATA)
    pheno = pd.read_csv(case_control["pheno"], sep=" ").dropna()
    pheno.to_csv(tmp_path / "cases.txt", sep=" ", index=False)
    run_regenie("--step", 1, "--bed", prefix, "--phenoFile", "cases.txt", "--bt", "--bsize", 300,
                "--out", "rg", cwd=tmp_path)
    # Below 5,000 samples both tools leave one out: the same predictions to regenie's digits.
    colflow_cli("wgr", toy["store"], "--pheno", tmp_path / "cases.txt", "--binary", "--1",
                "--block-size", 300, "--out", tmp_path / "cf")
    ours, theirs = read_loco(tmp_path / "cf_1.loco"), read_loco(tmp_path / "rg_1.loco")
    np.testing.assert_allclose(ours.to_numpy(), theirs[ours.columns].to_numpy(), rtol=1e-5,
                               atol=1e-9)
    run_regenie("--step", 2, "--bed", prefix, "--phenoFile", "cases.txt", "--bt", "--bsize", 400,
                "--pred", "rg_pred.list", "--out", "rg2", cwd=tmp_path)
    colflow_cli("assoc", toy["store"], "--pheno", tmp_path / "cases.txt", "--binary", "--1",
                "--loco", tmp_path / "rg_pred.list", "--beta", "--out", tmp_path / "cf2")
    regenie = read_regenie(tmp_path / "rg2_B.regenie")
    ours = read_tsv(tmp_path / "cf2.B.logistic.tsv").set_index("ID").loc[regenie.index]
    # A Wald test of the fitted column (colflow) against a score test and its one-step estimate
    # (regenie), both with the LOCO log odds as offset: close, not equal (apart at large effects).
    common = (regenie.A1FREQ > 0.05) & (regenie.A1FREQ < 0.95)
    log_p = -np.log10(ours.P[common])
    assert np.corrcoef(log_p, regenie.LOG10P[common])[0, 1] > 0.9999
    assert np.quantile(np.abs(log_p - regenie.LOG10P[common]), 0.99) < 0.03
    assert np.quantile(np.abs(ours.BETA[common] - regenie.BETA[common]), 0.99) < 0.02
    # With --score-test colflow's test is regenie's: equal to its six digits.
    colflow_cli("assoc", toy["store"], "--pheno", tmp_path / "cases.txt", "--binary", "--1",
                "--loco", tmp_path / "rg_pred.list", "--beta", "--score-test", "--out",
                tmp_path / "cs2")
    score = read_tsv(tmp_path / "cs2.B.logistic.tsv").set_index("ID").loc[regenie.index]
    assert (score.N_OBS == regenie.N).all()
    np.testing.assert_allclose(score[["BETA", "SE"]], regenie[["BETA", "SE"]], rtol=2e-5,
                               atol=2e-6)
    np.testing.assert_allclose(-np.log10(score.P), regenie.LOG10P, rtol=2e-5, atol=2e-6)


def test_case_control_step_1_equals_regenies(colflow_cli, tmp_path):
    """regenie switches to leave-one-out below 5,000 samples: 5,200 simulated ones here."""
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    rng = np.random.default_rng(5)
    n, m = 5200, 900
    freq = rng.uniform(0.05, 0.5, m)
    x = rng.binomial(2, freq, size=(n, m)).astype(np.float32)
    x[rng.random((n, m)) < 0.01] = np.nan
    genetic = np.nan_to_num(x - 2 * freq) @ (rng.normal(size=m) * (rng.random(m) < 0.2))
    covar = np.column_stack([rng.normal(size=n), rng.binomial(1, 0.5, n)])
    liability = genetic / genetic.std() + 0.3 * covar[:, 0] + rng.normal(size=n)
    status = (liability > np.quantile(liability, 0.7)).astype(int)
    ids = [f"I{i}" for i in range(n)]
    to_bed(str(tmp_path / "sim.bed"), x, count_A1=True, properties={
        "fid": ids, "iid": ids, "chromosome": np.repeat(["1", "2", "3"], m // 3),
        "sid": [f"rs{j}" for j in range(m)], "bp_position": np.arange(m) * 1000 + 1000})
    pd.DataFrame({"FID": ids, "IID": ids, "B": status}).to_csv(tmp_path / "pheno.txt", sep=" ",
                                                                index=False)
    pd.DataFrame({"FID": ids, "IID": ids, "C1": covar[:, 0], "C2": covar[:, 1]}).to_csv(
        tmp_path / "covar.txt", sep=" ", index=False)
    run_regenie("--step", 1, "--bed", "sim", "--phenoFile", "pheno.txt", "--covarFile",
                "covar.txt", "--bt", "--bsize", 100, "--out", "rg", cwd=tmp_path)
    store = tmp_path / "sim.cf"
    colflow.preprocess(str(tmp_path / "sim"), store)
    colflow_cli("wgr", store, "--pheno", tmp_path / "pheno.txt", "--covar", tmp_path / "covar.txt",
                "--binary", "--1", "--block-size", 100, "--out", tmp_path / "cf")
    ours, theirs = read_loco(tmp_path / "cf_1.loco"), read_loco(tmp_path / "rg_1.loco")
    # Equal to the six significant digits regenie prints.
    np.testing.assert_allclose(ours.to_numpy(), theirs[ours.columns].to_numpy(), rtol=5.01e-6,
                               atol=1e-9)
    # regenie's step 2 reads colflow's predictions.
    run_regenie("--step", 2, "--bed", "sim", "--phenoFile", "pheno.txt", "--covarFile",
                "covar.txt", "--bt", "--bsize", 400, "--pred", "cf_pred.list", "--out", "rg2",
                cwd=tmp_path)
    assert len(read_regenie(tmp_path / "rg2_B.regenie")) == m
