"""colflow wgr (regenie's step 1) against a numpy implementation of the same algorithm:
quantitative and case/control traits, K folds and leave-one-out, traits missing different
samples; the Python call equal to the command, predictors spilled to disk, bad inputs."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import colflow

from conftest import DATA, dataset, read_tsv
from wgr_reference import (REGENIE, read_loco, reference_wgr, reference_wgr_case_control,
                           reference_wgr_case_control_loo, reference_wgr_case_control_masked,
                           reference_wgr_loo, ridge_leave_one_out, run_regenie)


def test_loco_predictions_equal_numpy(toy, colflow_cli):
    out = toy["path"] / "step1"
    colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "pheno.txt", "--covar",
                toy["path"] / "covar.txt", "--block-size", 300, "--out", out)
    used = ~np.isnan(toy["covar"]).any(axis=1)
    x, y = toy["x"][used], toy["y"][used]
    y = np.where(np.isnan(y), np.nanmean(y, axis=0), y)  # several traits: the mean
    expected = reference_wgr(x, y, toy["covar"][used], toy["chrom"], block=300)
    summary = read_tsv(f"{out}.wgr.tsv")
    for p, (loco, best, errors) in enumerate(expected):
        got = read_loco(f"{out}_{p + 1}.loco")
        assert list(got.index) == list(range(1, 24))
        assert list(got.columns) == list(toy["keys"][used])
        np.testing.assert_allclose(got.to_numpy(), loco, rtol=1e-8, atol=1e-8 * np.abs(loco).max())
        rows = summary[summary.TRAIT == f"T{p + 1}"]
        np.testing.assert_allclose(rows.CV_LOSS, errors, rtol=1e-8)
        assert rows.CHOSEN.tolist() == [int(j == best) for j in range(5)]
    listed = (toy["path"] / "step1_pred.list").read_text().split()
    assert listed[0] == "T1" and Path(listed[1]).is_absolute()


def test_case_control_loco_predictions_equal_numpy(toy, case_control, colflow_cli):
    """Level 1 by ridge logistic regression with the covariates' offset (regenie's --bt)."""
    pheno = pd.read_csv(case_control["pheno"], sep=" ").dropna()
    path = toy["path"] / "cases_only.txt"
    pheno.to_csv(path, sep=" ", index=False)
    out = toy["path"] / "bt1"
    # Five folds, given: below 5,000 samples leave-one-out would be chosen otherwise.
    colflow_cli("wgr", toy["store"], "--pheno", path, "--binary", "--1", "--covar",
                toy["path"] / "covar.txt", "--block-size", 300, "--folds", 5, "--out", out)
    used = ~np.isnan(toy["covar"]).any(axis=1) & ~np.isnan(case_control["y"])
    loco, best, loss = reference_wgr_case_control(
        toy["x"][used], case_control["y"][used], toy["covar"][used], toy["chrom"], block=300)
    got = read_loco(f"{out}_1.loco")
    assert list(got.columns) == list(toy["keys"][used])
    np.testing.assert_allclose(got.to_numpy(), loco, rtol=1e-8, atol=1e-8 * np.abs(loco).max())
    summary = read_tsv(f"{out}.wgr.tsv")
    np.testing.assert_allclose(summary.CV_LOSS, loss, rtol=1e-8)
    assert summary.CHOSEN.tolist() == [int(j == best) for j in range(5)]
    # Python, with the same bits.
    got = colflow.wgr(toy["store"], path, toy["path"] / "covar.txt", block_size=300,
                      folds=5, binary=["B"], num_threads=1)
    np.testing.assert_array_equal(got.loco["B"].to_numpy(), read_loco(f"{out}_1.loco").to_numpy().T)
    with pytest.raises(colflow.InvalidArgumentError, match="no trait named"):
        colflow.wgr(toy["store"], path, binary=["A"])
    # 1/2 coding is the command's default (detected as case/control) and not Python's 0/1.
    pheno.assign(B=pheno.B + 1).to_csv(toy["path"] / "cases12.txt", sep=" ", index=False)
    with pytest.raises(colflow.InvalidArgumentError, match="other than case or control"):
        colflow.wgr(toy["store"], toy["path"] / "cases12.txt", binary="B")
    colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "cases12.txt", "--covar",
                toy["path"] / "covar.txt", "--block-size", 300, "--cv", 5, "--out",
                toy["path"] / "bt12")
    assert (toy["path"] / "bt12_1.loco").read_text() == Path(f"{out}_1.loco").read_text()


def test_leave_one_out_equals_numpy(toy, case_control, colflow_cli):
    """--loocv (regenie's): every level's held-out predictions from the fits without the
    sample; chosen by itself for a case/control trait below 5,000 samples."""
    out = toy["path"] / "loo"
    colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "pheno.txt", "--covar",
                toy["path"] / "covar.txt", "--block-size", 300, "--loocv", "--out", out)
    used = ~np.isnan(toy["covar"]).any(axis=1)
    x, y = toy["x"][used], toy["y"][used]
    y = np.where(np.isnan(y), np.nanmean(y, axis=0), y)
    expected = reference_wgr_loo(x, y, toy["covar"][used], toy["chrom"], block=300)
    summary = read_tsv(f"{out}.wgr.tsv")
    for p, (loco, best, errors, w, yp, taus) in enumerate(expected):
        got = read_loco(f"{out}_{p + 1}.loco").to_numpy()
        np.testing.assert_allclose(got, loco, rtol=1e-8, atol=1e-8 * np.abs(loco).max())
        rows = summary[summary.TRAIT == f"T{p + 1}"]
        np.testing.assert_allclose(rows.CV_LOSS, errors, rtol=1e-8)
        assert rows.CHOSEN.tolist() == [int(j == best) for j in range(5)]
    # The reference's formula is leave-one-out: two samples refitted without them.
    for i in (0, 77):
        keep = np.arange(len(w)) != i
        beta = np.linalg.solve(w[keep].T @ w[keep] + taus[0] * np.eye(w.shape[1]),
                               w[keep].T @ yp[keep])
        held = ridge_leave_one_out(w, yp[:, None], taus[0])[i, 0]
        np.testing.assert_allclose(held, w[i] @ beta, rtol=1e-10)

    pheno = pd.read_csv(case_control["pheno"], sep=" ").dropna()
    pheno.to_csv(toy["path"] / "loo_cases.txt", sep=" ", index=False)
    colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "loo_cases.txt", "--binary", "--1",
                "--covar", toy["path"] / "covar.txt", "--block-size", 300, "--out", out)
    used = ~np.isnan(toy["covar"]).any(axis=1) & ~np.isnan(case_control["y"])
    loco, best, loss, full_fit = reference_wgr_case_control_loo(
        toy["x"][used], case_control["y"][used], toy["covar"][used], toy["chrom"], block=300)
    got = read_loco(f"{out}_1.loco").to_numpy()
    np.testing.assert_allclose(got, loco, rtol=1e-8, atol=1e-8 * np.abs(loco).max())
    summary = read_tsv(f"{out}.wgr.tsv")
    np.testing.assert_allclose(summary.CV_LOSS, loss, rtol=1e-8)
    assert summary.CHOSEN.tolist() == [int(j == best) for j in range(5)]
    # Python, with the same bits; l1_full takes the full fit's coefficients for every sample.
    fit = colflow.wgr(toy["store"], toy["path"] / "loo_cases.txt", toy["path"] / "covar.txt",
                      block_size=300, binary="B", num_threads=1)
    assert fit.leave_one_out
    np.testing.assert_array_equal(fit.loco["B"].to_numpy().T, got)
    full = colflow.wgr(toy["store"], toy["path"] / "loo_cases.txt", toy["path"] / "covar.txt",
                       block_size=300, binary="B", loocv=True, l1_full=True)
    np.testing.assert_array_equal(full.level1.CV_LOSS, fit.level1.CV_LOSS)
    np.testing.assert_allclose(full.loco["B"].to_numpy().T, full_fit, rtol=1e-8,
                               atol=1e-8 * np.abs(full_fit).max())
    with pytest.raises(colflow.InvalidArgumentError, match="l1_full needs loocv"):
        colflow.wgr(toy["store"], toy["path"] / "loo_cases.txt", binary="B", l1_full=True)


def test_case_control_traits_missing_different_samples(toy, colflow_cli, tmp_path):
    """Two case/control traits missing different samples: each trait's scale, fits and loss
    leave its own missing samples out and their predictions are NA (regenie's masks), with K
    folds and with leave-one-out; as numpy, and as regenie."""
    rng = np.random.default_rng(11)
    n = len(toy["x"])
    status = (rng.random((n, 2)) < 1 / (1 + np.exp(-(toy["y"][:, [0]] - 0.5)))).astype(float)
    status[rng.choice(n, 30, replace=False), 0] = np.nan
    status[rng.choice(n, 45, replace=False), 1] = np.nan
    ids = pd.read_csv(toy["path"] / "pheno.txt", sep=" ")[["FID", "IID"]]
    ids.assign(B1=status[:, 0], B2=status[:, 1]).to_csv(tmp_path / "cases.txt", sep=" ",
                                                         index=False, na_rep="NA")
    shutil.copy(toy["path"] / "covar.txt", tmp_path / "covar.txt")
    used = ~np.isnan(toy["covar"]).any(axis=1) & ~np.isnan(status).all(axis=1)
    for folds in (5, None):  # None: leave-one-out, chosen by itself below 5,000 samples
        out = tmp_path / f"cf{folds or ''}"
        colflow_cli("wgr", toy["store"], "--pheno", tmp_path / "cases.txt", "--binary", "--1",
                    "--covar", tmp_path / "covar.txt", "--block-size", 300,
                    *(["--folds", folds] if folds else []), "--out", out)
        expected = reference_wgr_case_control_masked(toy["x"][used], status[used],
                                                     toy["covar"][used], toy["chrom"], 300, folds)
        summary = read_tsv(f"{out}.wgr.tsv")
        for p, (loco, best, loss) in enumerate(expected):
            got = read_loco(f"{out}_{p + 1}.loco").to_numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(loco))
            np.testing.assert_allclose(got, loco, rtol=1e-8, atol=1e-8 * np.nanmax(np.abs(loco)))
            rows = summary[summary.TRAIT == f"B{p + 1}"]
            np.testing.assert_allclose(rows.CV_LOSS, loss, rtol=1e-8)
            assert rows.CHOSEN.tolist() == [int(j == best) for j in range(5)]
            assert rows.VALUES.iloc[0] == (~np.isnan(status[used, p])).sum()
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        return
    run_regenie("--step", 1, "--bed", dataset(DATA), "--phenoFile", "cases.txt", "--covarFile",
                "covar.txt", "--bt", "--bsize", 300, "--out", "rg", cwd=tmp_path)
    for p in (1, 2):
        ours, theirs = read_loco(tmp_path / f"cf_{p}.loco"), read_loco(tmp_path / f"rg_{p}.loco")
        theirs = theirs[ours.columns].to_numpy()
        np.testing.assert_array_equal(np.isnan(ours.to_numpy()), np.isnan(theirs))
        np.testing.assert_allclose(ours.to_numpy(), theirs, rtol=1e-5, atol=1e-9)


def test_spilled_predictors_give_the_same_bits_and_leave_nothing(toy, colflow_binary, tmp_path):
    # Eight traits: their predictors outweigh the rest of the run's memory.
    pheno = pd.read_csv(toy["path"] / "pheno.txt", sep=" ")
    rng = np.random.default_rng(2)
    for t in range(3, 9):
        pheno[f"T{t}"] = pheno.T1 + rng.normal(size=len(pheno))
    pheno.to_csv(tmp_path / "traits.txt", sep=" ", index=False, na_rep="NA")

    def run(*extra):
        args = [colflow_binary, "wgr", toy["store"], "--pheno", tmp_path / "traits.txt",
                "--covar", toy["path"] / "covar.txt", "--block-size", 300, "--digits", 17]
        done = subprocess.run([*map(str, args), *map(str, extra)], capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        return done.stderr

    run("--out", tmp_path / "memory")
    log = run("--lowmem", "--out", tmp_path / "spill")
    assert "spilled to disk" in log
    # Too little memory for every trait's predictors at once: spilled without being asked.
    log = run("--memory", 10, "--threads", 2, "--out", tmp_path / "auto")
    assert "would not fit in memory" in log
    for p in range(1, 9):
        memory = (tmp_path / f"memory_{p}.loco").read_text()
        assert (tmp_path / f"spill_{p}.loco").read_text() == memory
        assert (tmp_path / f"auto_{p}.loco").read_text() == memory
    assert sorted(f.name for f in tmp_path.iterdir() if f.name.startswith(".")) == []


def test_bad_inputs_are_refused_and_write_nothing(toy, colflow_binary, tmp_path):
    def refused(*args, message):
        done = subprocess.run([colflow_binary, *map(str, args)], capture_output=True, text=True)
        assert done.returncode != 0 and message in done.stderr, done.stderr
        assert not list(tmp_path.glob("out*"))

    pheno, store = toy["path"] / "pheno.txt", toy["store"]
    few = pd.read_csv(pheno, sep=" ")
    few.loc[5:, "T1"] = np.nan
    few[["FID", "IID", "T1"]].to_csv(tmp_path / "few.txt", sep=" ", index=False, na_rep="NA")
    refused("wgr", store, "--pheno", tmp_path / "few.txt", "--block-size", 300, "--out",
            tmp_path / "out", message="too few")
    refused("wgr", store, "--pheno", pheno, "--folds", 1, "--out", tmp_path / "out",
            message="--folds")
    refused("wgr", store, "--pheno", pheno, "--folds", 5, "--loocv", "--out", tmp_path / "out",
            message="--loocv and --folds cannot both apply")
    refused("wgr", store, "--pheno", pheno, "--l1-full", "--out", tmp_path / "out",
            message="--l1-full needs --loocv")
    refused("assoc", store, "--pheno", pheno, "--binary", "--score-test", "--firth", "always",
            "--out", tmp_path / "out", message="--score-test fits no column")
    loco = tmp_path / "bad.loco"
    lines = (toy["path"] / "step1_1.loco").read_text().splitlines() if (
        toy["path"] / "step1_1.loco").exists() else None
    if lines is None:
        pytest.skip("needs the predictions of test_loco_predictions_equal_numpy")
    loco.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # chromosome 1 missing
    (tmp_path / "bad_pred.list").write_text(f"T1 {loco}\nT2 {loco}\n")
    refused("assoc", store, "--pheno", pheno, "--loco", tmp_path / "bad_pred.list", "--out",
            tmp_path / "out", message="expected the line of chromosome 1")
    strangers = [lines[0].split()[0]] + [f"x_{i}" for i in range(len(lines[0].split()) - 1)]
    loco.write_text("\n".join([" ".join(strangers), *lines[1:]]) + "\n")
    refused("assoc", store, "--pheno", pheno, "--loco", tmp_path / "bad_pred.list", "--out",
            tmp_path / "out", message="no sample of the store")


def test_python_wgr_equals_the_command(toy, colflow_cli):
    prefix = toy["path"] / "step1"
    if not Path(f"{prefix}_pred.list").exists():
        colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "pheno.txt", "--covar",
                    toy["path"] / "covar.txt", "--block-size", 300, "--out", prefix)
    got = colflow.wgr(toy["store"], toy["path"] / "pheno.txt", toy["path"] / "covar.txt",
                      block_size=300, num_threads=1)
    assert list(got.loco) == ["T1", "T2"] and got.columns_used == 10_000
    for p, name in enumerate(got.loco):
        command = read_loco(f"{prefix}_{p + 1}.loco")
        np.testing.assert_array_equal(got.loco[name].to_numpy(), command.to_numpy().T)
        assert list(got.loco[name].columns) == list(range(1, 24))
    summary = read_tsv(f"{prefix}.wgr.tsv")
    np.testing.assert_array_equal(got.level1.CV_LOSS, summary.CV_LOSS)
    assert got.level1.CHOSEN.astype(int).tolist() == summary.CHOSEN.tolist()
