"""colflow assoc --loco (regenie's step 2) against numpy: least squares on the adjusted trait,
logistic regression with the LOCO offset, regenie's score test, chromosome 23 and sex on X, and
predictions fitted under the other model refused."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import colflow

from conftest import read_tsv, write_loco
from wgr_reference import read_loco


def test_assoc_loco_equals_least_squares_on_the_adjusted_trait(toy, colflow_cli):
    prefix = toy["path"] / "step1"
    if not Path(f"{prefix}_pred.list").exists():
        colflow_cli("wgr", toy["store"], "--pheno", toy["path"] / "pheno.txt", "--covar",
                    toy["path"] / "covar.txt", "--block-size", 300, "--out", prefix)
    out = toy["path"] / "step2"
    colflow_cli("assoc", toy["store"], "--pheno", toy["path"] / "pheno.txt", "--covar",
                toy["path"] / "covar.txt", "--loco", f"{prefix}_pred.list", "--out", out)
    keys = list(toy["keys"])
    for p in range(2):
        loco = read_loco(f"{prefix}_{p + 1}.loco").reindex(columns=keys).to_numpy()
        y, covar, x = toy["y"][:, p], toy["covar"], toy["x"]
        use = ~np.isnan(y) & ~np.isnan(covar).any(axis=1) & ~np.isnan(loco[0])
        design = np.column_stack([np.ones(use.sum()), covar[use]])
        fitted = design @ np.linalg.lstsq(design, y[use], rcond=None)[0]
        scale = np.linalg.norm(y[use] - fitted) / np.sqrt(use.sum() - 3)
        table = read_tsv(f"{out}.T{p + 1}.assoc.tsv")
        for j in (0, 2841, 6463, 9999):  # a column of chromosomes 1, 2, 3 and 5
            c = toy["chrom"][j]
            rows = use & ~np.isnan(x[:, j])
            a = np.column_stack([np.ones(rows.sum()), covar[rows], x[rows, j]])
            target = y[rows] - scale * loco[c - 1, rows]
            coef, residual = np.linalg.lstsq(a, target, rcond=None)[:2]
            df = rows.sum() - 4
            se = np.sqrt(residual[0] / df * np.linalg.inv(a.T @ a)[3, 3])
            line = table.iloc[j]
            np.testing.assert_allclose([line.BETA, line.SE], [coef[3], se], rtol=1e-8)
            np.testing.assert_allclose(line.P, 2 * stats.t.sf(abs(coef[3] / se), df), rtol=1e-6)


def logistic_with_offset(a, y, offset):
    """Maximum likelihood by Newton's method: coefficients and their covariance."""
    beta = np.zeros(a.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a @ beta + offset)))
        information = a.T @ (a * (p * (1 - p))[:, None])
        step = np.linalg.solve(information, a.T @ (y - p))
        beta += step
        if np.abs(step).max() < 1e-13:
            break
    return beta, np.linalg.inv(information)


def test_assoc_loco_case_control_is_logistic_with_the_offset(toy, case_control, colflow_cli):
    out = toy["path"] / "binary"
    colflow_cli("assoc", toy["store"], "--pheno", case_control["pheno"], "--binary", "--1",
                "--covar", toy["path"] / "covar.txt", "--loco", case_control["pred"], "--beta",
                "--out", out)
    table = read_tsv(f"{out}.B.logistic.tsv")
    y, loco, covar, x = case_control["y"], case_control["loco"], toy["covar"], toy["x"]
    use = ~np.isnan(y) & ~np.isnan(covar).any(axis=1) & ~np.isnan(loco[0])
    for j in (0, 2841, 6463, 9999):  # a column of chromosomes 1, 2, 3 and 5
        rows = use & ~np.isnan(x[:, j])
        a = np.column_stack([np.ones(rows.sum()), x[rows, j], covar[rows]])
        beta, covariance = logistic_with_offset(a, y[rows], loco[toy["chrom"][j] - 1, rows])
        line = table.iloc[j]
        assert line.N_OBS == rows.sum() and line["FIRTH?"] == "N"
        np.testing.assert_allclose([line.BETA, line.SE], [beta[1], np.sqrt(covariance[1, 1])],
                                   rtol=1e-7)
    # Without the offset the same column's fit differs: the offset is used.
    colflow_cli("assoc", toy["store"], "--pheno", case_control["pheno"], "--binary", "--1",
                "--covar", toy["path"] / "covar.txt", "--beta", "--out", out)
    assert not np.allclose(read_tsv(f"{out}.B.logistic.tsv").BETA, table.BETA)


def reference_score(a, y, offset, g):
    """regenie's score test at the fit of y on the design a with the offset: BETA, SE, Z of the
    column g, a missing call the mean of the others."""
    beta, _ = logistic_with_offset(a, y, offset)
    p = 1 / (1 + np.exp(-(a @ beta + offset)))
    w = p * (1 - p)
    g = np.where(np.isnan(g), np.nanmean(g), g)
    g_resid = g - a @ np.linalg.solve(a.T @ (a * w[:, None]), a.T @ (w * g))
    score, variance = g_resid @ (y - p), g_resid @ (w * g_resid)
    return [score / variance, variance ** -0.5, score / variance ** 0.5]


def test_score_test_is_the_score_at_the_fit_without_the_column(toy, case_control, colflow_cli,
                                                               make_store, tmp_path):
    """--score-test (regenie's step 2): U = g'(y - p) and its variance at the null model with
    the LOCO offset, the column less its weighted projection on the covariates."""
    out = toy["path"] / "score"
    colflow_cli("assoc", toy["store"], "--pheno", case_control["pheno"], "--binary", "--1",
                "--covar", toy["path"] / "covar.txt", "--loco", case_control["pred"], "--beta",
                "--score-test", "--out", out)
    table = read_tsv(f"{out}.B.logistic.tsv")
    y, loco, covar, x = case_control["y"], case_control["loco"], toy["covar"], toy["x"]
    use = ~np.isnan(y) & ~np.isnan(covar).any(axis=1) & ~np.isnan(loco[0])
    a = np.column_stack([np.ones(use.sum()), covar[use]])
    for j in (0, 2841, 6463, 9999):
        line = table.iloc[j]
        assert line.N_OBS == use.sum() and line["FIRTH?"] == "N"
        np.testing.assert_allclose(
            [line.BETA, line.SE, line.Z_STAT],
            reference_score(a, y[use], loco[toy["chrom"][j] - 1, use], x[use, j]), rtol=1e-7)
    # HapMap3's missing calls take the column's mean; N_OBS counts the calls.
    store = make_store("hapmap3/HapMap3")
    with colflow.open(store) as s:
        samples = s.samples
        x = s.read(np.s_[:, :400], dtype=np.float64)
        ids = s.columns.id.to_numpy()[:400]
    n, rng = len(samples), np.random.default_rng(5)
    status = (rng.random(n) < 0.3).astype(float)
    offsets = rng.normal(scale=0.5, size=(23, n))
    write_loco(tmp_path / "b.loco", (samples.fid + "_" + samples.iid).to_numpy(), offsets)
    (tmp_path / "pred.list").write_text(f"B {tmp_path / 'b.loco'}\n")
    pd.DataFrame({"FID": samples.fid, "IID": samples.iid, "B": status}).to_csv(
        tmp_path / "pheno.txt", sep=" ", index=False)
    (tmp_path / "ids.txt").write_text("".join(f"{i}\n" for i in ids))
    colflow_cli("assoc", store, "--pheno", tmp_path / "pheno.txt", "--binary", "--1", "--beta",
                "--extract", tmp_path / "ids.txt", "--loco", tmp_path / "pred.list",
                "--score-test", "--out", tmp_path / "hm")
    table = read_tsv(tmp_path / "hm.B.logistic.tsv").set_index("ID")
    missing = np.flatnonzero(np.isnan(x).any(axis=0) & (np.nanstd(x, axis=0) > 0))[:3]
    assert len(missing) == 3
    for j in missing:
        line = table.loc[ids[j]]
        assert line.N_OBS == (~np.isnan(x[:, j])).sum()
        np.testing.assert_allclose([line.BETA, line.SE, line.Z_STAT],
                                   reference_score(np.ones((n, 1)), status, offsets[0], x[:, j]),
                                   rtol=1e-7)
    # The Python call (no offsets there) gives the command's numbers.
    colflow_cli("assoc", store, "--pheno", tmp_path / "pheno.txt", "--binary", "--1", "--beta",
                "--extract", tmp_path / "ids.txt", "--score-test", "--out", tmp_path / "plain")
    got = colflow.assoc(store, pd.Series(status, index=samples.iid, name="B"), binary=True,
                        zero_one=True, score_test=True, odds_ratio=False, columns=np.arange(400))
    expected = read_tsv(tmp_path / "plain.B.logistic.tsv")
    np.testing.assert_array_equal(got["B"].BETA.to_numpy(), expected.BETA.to_numpy())
    np.testing.assert_array_equal(got["B"].SE.to_numpy(), expected.SE.to_numpy())


def test_assoc_loco_case_control_on_x_takes_chromosome_23_and_sex(make_store, colflow_cli,
                                                                 tmp_path):
    """Two case/control traits on HapMap3's X (sex a covariate, as plink2 --glm) and autosomes:
    each column's offset is its chromosome's row of its trait's predictions."""
    store = make_store("hapmap3/HapMap3")
    with colflow.open(store) as s:
        samples, chrom = s.samples, s.columns.chrom.to_numpy()
        cols = np.concatenate([np.flatnonzero(chrom == "X")[:4], np.flatnonzero(chrom == "3")[:4]])
        x = s.read(np.s_[:, cols], dtype=np.float64)
        ids = s.columns.id.to_numpy()[cols]
    n = len(samples)
    rng = np.random.default_rng(9)
    status = (rng.random((n, 2)) < 0.4).astype(float)
    keys = (samples.fid + "_" + samples.iid).to_numpy()
    loco = rng.normal(scale=0.5, size=(2, 23, n))
    for t in range(2):
        write_loco(tmp_path / f"b{t}.loco", keys, loco[t])
    (tmp_path / "pred.list").write_text(f"B1 {tmp_path / 'b0.loco'}\nB2 {tmp_path / 'b1.loco'}\n")
    pd.DataFrame({"FID": samples.fid, "IID": samples.iid, "B1": status[:, 0],
                  "B2": status[:, 1]}).to_csv(tmp_path / "pheno.txt", sep=" ", index=False)
    (tmp_path / "extract.txt").write_text("".join(f"{i}\n" for i in ids))
    colflow_cli("assoc", store, "--pheno", tmp_path / "pheno.txt", "--binary", "--1", "--beta",
                "--extract", tmp_path / "extract.txt", "--loco", tmp_path / "pred.list",
                "--out", tmp_path / "out")
    sex = pd.to_numeric(samples.sex, errors="coerce").to_numpy(dtype=float)
    for t in range(2):
        table = read_tsv(tmp_path / f"out.B{t + 1}.logistic.tsv").set_index("ID")
        for j, column in enumerate(ids):
            on_x = j < 4
            rows = ~np.isnan(x[:, j]) & (np.isin(sex, [1, 2]) if on_x else True)
            design = [np.ones(rows.sum()), x[rows, j]] + ([sex[rows]] if on_x else [])
            beta, covariance = logistic_with_offset(
                np.column_stack(design), status[rows, t], loco[t, 22 if on_x else 2, rows])
            np.testing.assert_allclose([table.BETA[column], table.SE[column]],
                                       [beta[1], np.sqrt(covariance[1, 1])], rtol=1e-6)


def test_assoc_refuses_predictions_fitted_under_the_other_model(toy, case_control, colflow_cli,
                                                                colflow_binary, tmp_path):
    """A case/control trait's step 1 fitted as quantitative is not on the log-odds scale of an
    offset: colflow wgr's summary records the model, and assoc --loco refuses the mismatch."""
    colflow_cli("wgr", toy["store"], "--pheno", case_control["pheno"], "--quantitative",
                "--block-size", 300, "--out", tmp_path / "qt")
    assert set(read_tsv(tmp_path / "qt.wgr.tsv").MODEL) == {"quantitative"}
    done = subprocess.run([colflow_binary, "assoc", toy["store"], "--pheno", case_control["pheno"],
                           "--binary", "--1", "--loco", tmp_path / "qt_pred.list", "--out",
                           tmp_path / "out"], capture_output=True, text=True)
    assert done.returncode != 0 and "B was fitted as quantitative" in done.stderr, done.stderr
    assert not list(tmp_path.glob("out*"))
    # The same predictions tested as quantitative are accepted.
    colflow_cli("assoc", toy["store"], "--pheno", case_control["pheno"], "--quantitative",
                "--loco", tmp_path / "qt_pred.list", "--out", tmp_path / "out")
