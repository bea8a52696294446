"""What the whole-genome regression suites (test_wgr*.py) compare colflow with: a numpy
implementation of regenie's step 1 (ridge level 0, ridge or logistic level 1, K folds or
leave-one-out), the .loco files, and regenie itself where ../shared/peers has it."""
from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd

from conftest import REPOSITORY

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


def run_regenie(*args, cwd) -> None:
    done = subprocess.run([str(REGENIE), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
