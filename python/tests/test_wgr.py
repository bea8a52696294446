"""colflow wgr (regenie's step 1) and assoc --loco (its step 2) against a numpy implementation of
the same algorithm, and against regenie itself where ../shared/peers has it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bed_reader import to_bed
from scipy import stats

import colflow

from conftest import REPOSITORY, dataset, read_tsv

DATA = "bed-reader/toydata.5chrom"  # 500 samples, 10,000 variants on chromosomes 1-5
REGENIE = REPOSITORY.parent / "shared" / "peers" / "bin" / "regenie"


def grid(count: int) -> list[float]:
    return [0.01, *[i / (count - 1) for i in range(1, count - 1)], 0.99]


def adjust(v: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v less its projection on q's columns, scaled to ||v||^2 = n - c; and the scales."""
    v = v - q @ (q.T @ v)
    scale = np.linalg.norm(v, axis=0) / np.sqrt(len(v) - q.shape[1])
    return np.divide(v, scale, out=np.zeros_like(v), where=scale > 1e-6), scale


def ridge_folds(x: np.ndarray, y: np.ndarray, starts: list[int], shrinkage: float) -> np.ndarray:
    """Each fold's rows predicted by the ridge fit on the other folds."""
    out = np.empty((len(x), y.shape[1]))
    for k in range(len(starts) - 1):
        test = np.arange(starts[k], starts[k + 1])
        train = np.setdiff1d(np.arange(len(x)), test)
        a = x[train].T @ x[train] + shrinkage * np.eye(x.shape[1])
        out[test] = x[test] @ np.linalg.solve(a, x[train].T @ y[train])
    return out


def ridge_leave_one_out(x: np.ndarray, y: np.ndarray, shrinkage: float) -> np.ndarray:
    """Each row predicted by the ridge fit on all the other rows, from the fit on every row and
    the rows' leverages (exact for ridge regression)."""
    inverse = np.linalg.inv(x.T @ x + shrinkage * np.eye(x.shape[1]))
    leverage = ((x @ inverse) * x).sum(axis=1, keepdims=True)
    return (x @ (inverse @ (x.T @ y)) - leverage * y) / (1 - leverage)


def reference_level0(x, y, covar, chrom, block, folds=5, observed=None):
    """regenie's level 0 on dense arrays: the standardised predictors (traits x n x C), the
    adjusted traits, the fold starts (None: leave-one-out), each predictor's chromosome and the
    covariates' basis. `observed` (n x traits) masks case/control statuses as regenie does:
    a missing one is 0, kept out of the projection and of its predictors' scaling."""
    n = len(x)
    q, _ = np.linalg.qr(np.column_stack([np.ones(n), covar]))
    g, _ = adjust(np.where(np.isnan(x), np.nanmean(x, axis=0), x), q)
    if observed is None:
        ys, _ = adjust(y, q)
        observed = np.ones(y.shape, dtype=bool)
    else:
        ys = y - (q @ (q.T @ y)) * observed
        ys = ys / (np.linalg.norm(ys, axis=0) / np.sqrt(observed.sum(axis=0) - q.shape[1]))
    starts = None if folds is None else [k * (n // folds) for k in range(folds)] + [n]
    blocks = []
    for c in range(1, 24):
        cols = np.flatnonzero(chrom == c)
        blocks += [(c, cols[i:i + block]) for i in range(0, len(cols), block)]
    lambdas = [x.shape[1] * (1 - h) / h for h in grid(5)]
    w = np.empty((y.shape[1], n, 5 * len(blocks)))
    for b, (_, cols) in enumerate(blocks):
        for j, lam in enumerate(lambdas):
            w[:, :, 5 * b + j] = (ridge_leave_one_out(g[:, cols], ys, lam) if starts is None
                                  else ridge_folds(g[:, cols], ys, starts, lam)).T
    for p in range(y.shape[1]):
        on = w[p][observed[:, p]]
        w[p] = (w[p] - on.mean(axis=0)) / on.std(axis=0, ddof=1)
    return w, ys, starts, np.repeat([c for c, _ in blocks], 5), q


def loco_of(w, betas, starts, chrom_of):
    """23 x n: each sample's fold fit over every chromosome but one."""
    pred = np.empty((len(w), 23))
    for k in range(len(starts) - 1):
        test = np.arange(starts[k], starts[k + 1])
        for c in range(1, 24):
            on = chrom_of == c
            pred[test, c - 1] = w[np.ix_(test, on)] @ betas[k][on]
    return (pred.sum(axis=1, keepdims=True) - pred).T


def reference_wgr(x, y, covar, chrom, block, folds=5):
    """regenie's step 1 on dense arrays: LOCO (23 x n per trait), chosen tau index, MSEs."""
    w, ys, starts, chrom_of, _ = reference_level0(x, y, covar, chrom, block, folds)
    n = len(x)
    taus = [w.shape[2] * (1 - h) / h for h in grid(5)]
    out = []
    for p in range(y.shape[1]):
        errors, fits = [], []
        for tau in taus:
            betas, sse = [], 0.0
            for k in range(folds):
                test = np.arange(starts[k], starts[k + 1])
                train = np.setdiff1d(np.arange(n), test)
                a = w[p, train].T @ w[p, train] + tau * np.eye(w.shape[2])
                betas.append(np.linalg.solve(a, w[p, train].T @ ys[train, p]))
                sse += ((ys[test, p] - w[p, test] @ betas[-1]) ** 2).sum()
            errors.append(sse / n)
            fits.append(betas)
        best = int(np.argmin(errors))
        out.append((loco_of(w[p], fits[best], starts, chrom_of), best, errors))
    return out


def probability(eta):
    """regenie's fitted probabilities, held off 0 and 1 beyond |eta| = 30."""
    tiny = 10 * np.finfo(float).eps
    p = 1 / (1 + np.exp(-np.clip(eta, -700, 700)))
    return np.where(eta > 30, 1 / (1 + tiny), np.where(eta < -30, tiny / (1 + tiny), p))


def reference_wgr_case_control(x, status, covar, chrom, block, folds=5):
    """regenie's step 1 with --bt and K folds for one 0/1 trait: LOCO (23 x n), the chosen
    tau's index and the held-out -log-likelihood per sample of each tau."""
    w, _, starts, chrom_of, q = reference_level0(x, status[:, None], covar, chrom, block, folds)
    return reference_level1_case_control(w[0], status, null_offset(q, status), starts, chrom_of)


def reference_level1_case_control(w, status, offset, starts, chrom_of):
    """Level 1 of a 0/1 trait over K folds (starts): ridge logistic regression on the
    predictors w with the covariates' offset."""
    n, folds = len(w), len(starts) - 1
    taus = [w.shape[1] * (1 - h) / h * 3 / np.pi ** 2 for h in grid(5)]
    betas = np.zeros((len(taus), folds, w.shape[1]))
    loss = np.zeros(len(taus))
    for k in range(folds):
        test = np.arange(starts[k], starts[k + 1])
        train = np.setdiff1d(np.arange(n), test)
        beta = np.zeros(w.shape[1])
        for t, tau in enumerate(taus):
            beta = penalised_logistic(w[train], status[train], offset[train], tau, beta)
            betas[t, k] = beta
            held = np.clip(probability(offset[test] + w[test] @ beta), 1e-5, 1 - 1e-5)
            loss[t] -= np.where(status[test] == 1, np.log(held), np.log(1 - held)).sum()
    loss /= n
    best = int(np.argmin(loss))
    return loco_of(w, betas[best], starts, chrom_of), best, loss


def null_offset(q, status):
    """The log odds of the status's logistic regression on the covariates' basis q."""
    offset = q @ np.zeros(q.shape[1])
    for _ in range(100):
        p = probability(offset)
        step = np.linalg.solve(q.T @ (q * (p * (1 - p))[:, None]), q.T @ (status - p))
        offset = offset + q @ step
        if np.abs(step).max() < 1e-14:
            break
    return offset


def penalised_logistic(x, y, offset, tau, beta):
    """regenie's ridge logistic regression by iteratively reweighted least squares from beta."""
    for _ in range(100):
        p = probability(offset + x @ beta)
        weight = p * (1 - p)
        a = x.T @ (x * weight[:, None]) + tau * np.eye(x.shape[1])
        beta = np.linalg.solve(a, x.T @ (weight * (x @ beta) + y - p))
        if np.abs(x.T @ (y - probability(offset + x @ beta)) - tau * beta).max() < 1e-4:
            return beta
    raise AssertionError("no convergence")


def loco_of_samples(w, betas, chrom_of):
    """23 x n: each sample's own coefficients (betas, n x C) over every chromosome but one."""
    pred = np.column_stack([(w[:, chrom_of == c] * betas[:, chrom_of == c]).sum(axis=1)
                            for c in range(1, 24)])
    return (pred.sum(axis=1, keepdims=True) - pred).T


def reference_wgr_loo(x, y, covar, chrom, block):
    """regenie's step 1 with --loocv (quantitative traits): as reference_wgr, each sample's
    level-1 coefficients those of the fit without it."""
    w, ys, _, chrom_of, _ = reference_level0(x, y, covar, chrom, block, folds=None)
    taus = [w.shape[2] * (1 - h) / h for h in grid(5)]
    out = []
    for p in range(y.shape[1]):
        yp = ys[:, [p]]
        errors = [((yp - ridge_leave_one_out(w[p], yp, tau)) ** 2).mean() for tau in taus]
        best = int(np.argmin(errors))
        inverse = np.linalg.inv(w[p].T @ w[p] + taus[best] * np.eye(w.shape[2]))
        beta = inverse @ (w[p].T @ yp[:, 0])
        q = w[p] @ inverse
        leverage = (q * w[p]).sum(axis=1)
        own = beta - q * ((yp[:, 0] - w[p] @ beta) / (1 - leverage))[:, None]
        out.append((loco_of_samples(w[p], own, chrom_of), best, errors, w[p], yp[:, 0], taus))
    return out


def reference_wgr_case_control_loo(x, status, covar, chrom, block):
    """regenie's step 1 with --bt --loocv for one 0/1 trait."""
    w, _, _, chrom_of, q = reference_level0(x, status[:, None], covar, chrom, block, folds=None)
    return reference_level1_case_control_loo(w[0], status, null_offset(q, status), chrom_of)


def reference_level1_case_control_loo(w, status, offset, chrom_of):
    """Level 1 of a 0/1 trait by leave-one-out: each tau's fit on every sample, each sample's
    coefficients one Newton step from it without the sample; LOCO from a fit started at zero,
    and with --l1-full from that fit's coefficients."""
    taus = [w.shape[1] * (1 - h) / h * 3 / np.pi ** 2 for h in grid(5)]

    def left_out(beta, tau):
        p = probability(offset + w @ beta)
        h = w.T @ (w * (p * (1 - p))[:, None]) + tau * np.eye(w.shape[1])
        q = np.linalg.solve(h, w.T).T
        v = p * (1 - p) * (q * w).sum(axis=1)
        return beta - q * ((status - p) / (1 - v))[:, None]

    beta, loss = np.zeros(w.shape[1]), []
    for tau in taus:
        beta = penalised_logistic(w, status, offset, tau, beta)
        held = np.clip(probability(offset + (w * left_out(beta, tau)).sum(axis=1)), 1e-5,
                       1 - 1e-5)
        loss.append(-np.where(status == 1, np.log(held), np.log(1 - held)).mean())
    best = int(np.argmin(loss))
    beta = penalised_logistic(w, status, offset, taus[best], np.zeros(w.shape[1]))
    full = loco_of_samples(w, np.tile(beta, (len(w), 1)), chrom_of)  # --l1-full
    return loco_of_samples(w, left_out(beta, taus[best]), chrom_of), best, loss, full


def reference_wgr_case_control_masked(x, status, covar, chrom, block, folds):
    """regenie's step 1 with --bt for several 0/1 traits (columns, NaN where missing), K folds
    or leave-one-out (folds None): each trait's level 1 on its own samples (its folds those
    samples of the K folds), its LOCO NaN for the others. Per trait: LOCO, best, losses."""
    observed = ~np.isnan(status)
    w, _, starts, chrom_of, q = reference_level0(x, np.where(observed, status, 0), covar, chrom,
                                                 block, folds, observed=observed)
    out = []
    for p in range(status.shape[1]):
        rows = np.flatnonzero(observed[:, p])
        y, wp = status[rows, p], w[p][rows]
        offset = null_offset(q[rows], y)
        if starts is None:
            loco, best, loss, _ = reference_level1_case_control_loo(wp, y, offset, chrom_of)
        else:
            own = list(np.searchsorted(rows, starts))
            loco, best, loss = reference_level1_case_control(wp, y, offset, own, chrom_of)
        full = np.full((23, len(x)), np.nan)
        full[:, rows] = loco
        out.append((full, best, loss))
    return out


def read_loco(path) -> pd.DataFrame:
    """A .loco file as chromosomes x samples (FID_IID columns)."""
    return pd.read_csv(path, sep=r"\s+", index_col=0, na_values=["NA"])


@pytest.fixture(scope="module")
def toy(tmp_path_factory, make_store):
    """The store, two traits (the second with missing values) and two covariates (one sample
    without them)."""
    path = tmp_path_factory.mktemp("wgr")
    store = make_store(DATA)
    with colflow.open(store) as s:
        x = s.read(dtype=np.float64)
        samples, columns = s.samples, s.columns
    rng = np.random.default_rng(7)
    n = len(x)
    covar = rng.normal(size=(n, 2))
    effects = rng.normal(size=x.shape[1]) * (rng.random(x.shape[1]) < 0.05)
    genetic = np.nan_to_num(x - np.nanmean(x, axis=0)) @ effects
    y = np.column_stack([genetic / genetic.std() + rng.normal(size=n) + covar[:, 0],
                         rng.normal(size=n) + 0.5 * covar[:, 1]])
    y[rng.choice(n, 25, replace=False), 1] = np.nan
    covar[3] = np.nan
    ids = samples[["fid", "iid"]].rename(columns={"fid": "FID", "iid": "IID"})
    pheno = pd.concat([ids, pd.DataFrame(y, columns=["T1", "T2"])], axis=1)
    cov = pd.concat([ids, pd.DataFrame(covar, columns=["C1", "C2"])], axis=1)
    pheno.to_csv(path / "pheno.txt", sep=" ", index=False, na_rep="NA")
    cov.to_csv(path / "covar.txt", sep=" ", index=False, na_rep="NA")
    chrom = columns.chrom.astype(int).to_numpy()
    return dict(path=path, store=store, x=x, y=y, covar=covar, chrom=chrom,
                keys=(samples.fid + "_" + samples.iid).to_numpy())


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


def run_regenie(*args, cwd) -> None:
    done = subprocess.run([str(REGENIE), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def read_regenie(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=" ").set_index("ID")


def autosomes_only(prefix: str, out: Path) -> Path:
    """The variants of chromosomes 1-22 of a PLINK fileset, as a new fileset (regenie refuses
    the codes 25 and 26 of XY and MT)."""
    bim = pd.read_csv(f"{prefix}.bim", sep=r"\s+", header=None, dtype={0: str})
    keep = bim[0].isin([str(c) for c in range(1, 23)]).to_numpy()
    samples = sum(1 for _ in open(f"{prefix}.fam"))
    width = (samples + 3) // 4
    raw = np.fromfile(f"{prefix}.bed", dtype=np.uint8)
    body = raw[3:].reshape(len(bim), width)[keep]
    Path(f"{out}.bed").write_bytes(raw[:3].tobytes() + body.tobytes())
    bim[keep].to_csv(f"{out}.bim", sep="\t", header=False, index=False)
    shutil.copy(f"{prefix}.fam", f"{out}.fam")
    return out


@pytest.mark.parametrize("name, kept", [("hapmap3/HapMap3", 800), ("bed-reader/some_missing", 0)])
def test_loco_equals_regenies_on_real_data_with_missing_calls(name, kept, colflow_cli, tmp_path):
    """regenie's step 1 and colflow wgr on real genotypes with their own missing calls, default
    blocks (chromosomes shorter than one block included) and folds or leave-one-out: the same
    .loco files to regenie's six printed digits, quantitative and case/control. HapMap3 runs
    on a --keep subset listed in shuffled order."""
    if not REGENIE.is_file() or shutil.which("ldd") is None:
        pytest.skip(f"regenie is not at {REGENIE}")
    prefix = autosomes_only(dataset(name), tmp_path / "geno")
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


def write_loco(path, keys, values) -> None:
    """A .loco file: FID_IID header, then chromosomes 1-23 (values: 23 x samples)."""
    lines = [" ".join(["FID_IID", *keys])]
    lines += [" ".join([str(c + 1), *(f"{v:.17g}" for v in values[c])]) for c in range(23)]
    Path(path).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def case_control(toy):
    """A case/control trait (0/1) made from T1's genetic part, and LOCO log odds per chromosome
    for every sample but the first ten."""
    rng = np.random.default_rng(3)
    n = len(toy["x"])
    y = (rng.random(n) < 1 / (1 + np.exp(-(toy["y"][:, 0] - 0.5)))).astype(float)
    y[[4, 9]] = np.nan
    ids = pd.read_csv(toy["path"] / "pheno.txt", sep=" ")[["FID", "IID"]]
    pheno = ids.assign(B=y)
    pheno.to_csv(toy["path"] / "cases.txt", sep=" ", index=False, na_rep="NA")
    loco = rng.normal(scale=0.5, size=(23, n))
    write_loco(toy["path"] / "cases_1.loco", toy["keys"][10:], loco[:, 10:])
    (toy["path"] / "cases_pred.list").write_text(f"B {toy['path'] / 'cases_1.loco'}\n")
    loco[:, :10] = np.nan
    return dict(y=y, loco=loco, pheno=toy["path"] / "cases.txt",
                pred=toy["path"] / "cases_pred.list")


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
