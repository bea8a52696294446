"""colflow.lasso, ridge, enet and bayesr against the files of the `colflow` command run on the
same store with the same options (printed with 17 digits, so every number round-trips), and
their bad arguments."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest
from conftest import assert_same_table, dataset, read_tsv

import colflow
from colflow import plot

UK10K = "uk10k/uk10k_chr1_1mb"


@pytest.fixture(scope="module")
def fit_inputs(make_store, tmp_path_factory):
    """The uk10k store, its test.phen with some values missing (a Series by IID), every third
    sample and 300 columns, and the same as the command's --pheno, --keep and --extract files."""
    path = make_store(UK10K)
    files = tmp_path_factory.mktemp("fit-inputs")
    phen = pd.read_csv(dataset(UK10K).rsplit("/", 1)[0] + "/test.phen", sep=r"\s+", header=None,
                       dtype={0: str, 1: str})
    values = phen[2].to_numpy().copy()
    values[::17] = np.nan
    pheno = pd.Series(values, index=phen[1].to_numpy(), name="trait")
    with colflow.open(path) as store:
        samples = store.samples.iloc[::3]
        ids = store.columns.id.to_numpy()[100:400]
    with open(files / "pheno.txt", "w") as f:
        f.write("#FID IID trait\n")
        for fid, iid, v in zip(phen[0], phen[1], values):
            f.write(f"{fid} {iid} {'NA' if np.isnan(v) else repr(float(v))}\n")
    (files / "keep.txt").write_text(
        "".join(f"{fid} {iid}\n" for fid, iid in zip(samples.fid, samples.iid)))
    (files / "extract.txt").write_text("".join(f"{i}\n" for i in ids))
    return {
        "store": path,
        "pheno": pheno,
        "keep": pd.Index(samples.iid.to_numpy()),
        "columns": list(ids),
        "flags": ["--pheno", files / "pheno.txt", "--keep", files / "keep.txt", "--extract",
                  files / "extract.txt", "--threads", 2],
    }


@pytest.mark.parametrize(
    "kind, options, flags",
    [
        ("lasso", {"nlambda": 6, "lambda_min_ratio": 0.05}, ["--nlambda", 6, "--lambda-min-ratio", 0.05]),
        ("ridge", {"nlambda": 3, "lambda_min_ratio": 0.1}, ["--nlambda", 3, "--lambda-min-ratio", 0.1]),
        ("enet", {"alpha": 0.3, "lambdas": 0.2, "tol": 1e-6}, ["--alpha", 0.3, "--lambda", 0.2, "--tol", 1e-6]),
    ],
)  # fmt: skip
def test_penalized_equals_the_command(kind, options, flags, fit_inputs, colflow_cli, tmp_path):
    i = fit_inputs
    fit = getattr(colflow, kind)(i["store"], i["pheno"], keep=i["keep"], columns=i["columns"],
                                 predict=i["store"], num_threads=2, **options)
    prefix = tmp_path / kind
    colflow_cli(kind, i["store"], *i["flags"], *flags, "--out", prefix, "--predict", i["store"])
    assert_same_table(fit.coefficients, f"{prefix}.coef.tsv")
    assert_same_table(fit.path, f"{prefix}.path.tsv")
    # Column names with the command's default 6 digits; the values with its 17.
    predictions = read_tsv(f"{prefix}.pred.tsv")
    assert len(fit.predictions.columns) == len(predictions.columns)
    np.testing.assert_array_equal(fit.predictions.iloc[:, 2:].to_numpy(),
                                  predictions.iloc[:, 2:].to_numpy())
    assert list(fit.predictions.columns[2:]) == [f"LAMBDA={v:.6g}" for v in fit.path.LAMBDA]
    # The selection: every third sample with a value, the 300 columns.
    assert fit.samples == int(i["pheno"].reindex(i["keep"]).notna().sum())
    assert fit.phenotype == "trait"
    assert list(fit.beta.index) == i["columns"]
    assert fit.predict_missing == 0
    if kind == "ridge":
        assert len(fit.coefficients) == 300 * len(fit.path)
    nonzero = (fit.beta.to_numpy() != 0).sum(0)
    np.testing.assert_array_equal(nonzero, fit.path.NONZERO)
    assert fit.path.CONVERGED.all()


def test_bayesr_equals_the_command(fit_inputs, colflow_cli, tmp_path):
    i = fit_inputs
    options = dict(iterations=30, burnin=10, thin=2, seed=7, mixture=[1e-3, 1e-2],
                   sigma2_e_prior=(2, 0.5), checkpoint=tmp_path / "py.checkpoint",
                   checkpoint_every=10)
    fit = colflow.bayesr(i["store"], i["pheno"], keep=i["keep"], columns=i["columns"],
                         num_threads=2, **options)
    prefix = tmp_path / "cli"
    colflow_cli("bayesr", i["store"], *i["flags"], "--iterations", 30, "--burnin", 10, "--thin", 2,
                "--seed", 7, "--mixture", "0.001,0.01", "--sigma2-e-prior", "2,0.5",
                "--checkpoint-every", 10, "--out", prefix)
    assert_same_table(fit.trace, f"{prefix}.trace.tsv")
    assert_same_table(fit.effects, f"{prefix}.effects.tsv")
    assert list(fit.trace.ITER) == list(range(2, 31, 2))
    kept = fit.trace[fit.trace.ITER > 10]
    assert fit.posterior_samples == len(kept)
    assert fit.h2_mean == pytest.approx(kept.H2.mean(), rel=1e-12)
    assert fit.h2_sd == pytest.approx(kept.H2.std(), rel=1e-9)
    assert fit.nonzero_mean == pytest.approx(kept.NONZERO.mean(), rel=1e-12)
    assert fit.iterations_run == 30 and fit.resumed_from == 0
    # The checkpoint is the command's, byte for byte.
    assert (tmp_path / "py.checkpoint").read_bytes() == (tmp_path / "cli.checkpoint").read_bytes()
    # The same chain whatever the mode and threads; resumed from the checkpoint, longer.
    again = colflow.bayesr(i["store"], i["pheno"], keep=i["keep"], columns=i["columns"],
                           num_threads=1, mode="pipelined", **options)
    pd.testing.assert_frame_equal(again.trace, fit.trace)
    longer = colflow.bayesr(i["store"], i["pheno"], keep=i["keep"], columns=i["columns"],
                            resume=True, **{**options, "iterations": 34})
    assert longer.resumed_from == 30 and longer.iterations_run == 4
    pd.testing.assert_frame_equal(longer.trace.iloc[:15], fit.trace)


def test_bayesr_chain_diagnostics_equal_pythons_and_are_logged_and_written(
        fit_inputs, colflow_binary, tmp_path):
    # The library's ESS and Geweke's z of h² (chain_diagnostics.hpp) against the Python
    # package's numpy implementation of the same definitions, over the kept iterations; the
    # command logs the same figures, and its PREFIX.summary.tsv holds for every trace quantity
    # what colflow.plot.chain_summary computes from its trace.
    i = fit_inputs
    options = {"iterations": 160, "burnin": 40, "seed": 3}
    fit = colflow.bayesr(i["store"], i["pheno"], keep=i["keep"], columns=i["columns"],
                         num_threads=2, **options)
    h2 = fit.trace[fit.trace.ITER > 40].H2.to_numpy()
    assert fit.h2_ess == pytest.approx(colflow.effective_sample_size(h2), rel=1e-9)
    assert fit.h2_geweke_z == pytest.approx(colflow.geweke_z(h2), rel=1e-9, abs=1e-12)
    assert 1 < fit.h2_ess < 200
    done = subprocess.run(
        [colflow_binary, "bayesr", i["store"], *map(str, i["flags"]), "--iterations", "160",
         "--burnin", "40", "--seed", "3", "--digits", "17", "--out", str(tmp_path / "log")],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (f"h2 chain diagnostics: effective sample size {fit.h2_ess:.1f}, Geweke z "
            f"{fit.h2_geweke_z:.2f}") in done.stderr
    written = read_tsv(tmp_path / "log.summary.tsv").set_index("PARAMETER")
    expected = plot.chain_summary(tmp_path / "log.trace.tsv", burnin=40)
    assert list(written.index) == list(expected.index) == list(plot.TRACE_COLUMNS)
    assert (written.KEPT == 120).all()
    for column in expected.columns:
        np.testing.assert_allclose(written[column], expected[column], rtol=1e-9, atol=1e-12,
                                   err_msg=column)
    # The result's summary is the file's table (17 digits printed: equal to the last bit).
    pd.testing.assert_frame_equal(fit.summary.set_index("PARAMETER"), written,
                                  check_exact=False, rtol=1e-15, atol=0)


def test_phenotype_forms(fit_inputs):
    i = fit_inputs
    path = {"columns": np.s_[:60], "nlambda": 3, "lambda_min_ratio": 0.1}
    with colflow.open(i["store"]) as store:
        by_iid = colflow.lasso(store, i["pheno"], **path)
        array = i["pheno"].reindex(store.samples.iid).to_numpy()
        # A numpy array per store sample, -9 missing as NaN; a DataFrame's named column.
        by_array = colflow.lasso(store, np.where(np.isnan(array), -9, array), **path)
        frame = pd.DataFrame({"other": 1.0, "trait": i["pheno"]})
        by_name = colflow.lasso(store, frame, pheno_name="trait", **path)
    pd.testing.assert_frame_equal(by_iid.path, by_array.path)
    pd.testing.assert_frame_equal(by_iid.coefficients, by_name.coefficients)
    assert by_array.phenotype == "PHENO1" and by_name.phenotype == "trait"


def test_bad_arguments(fit_inputs):
    i = fit_inputs
    store, y = i["store"], i["pheno"]
    few = {"columns": np.s_[:20]}
    for call, error in [
        (lambda: colflow.enet(store, y, alpha=1.5, **few), ValueError),
        (lambda: colflow.lasso(store, y, lambdas=[0.1, -1], **few), ValueError),
        (lambda: colflow.lasso(store, y, nlambda=0, **few), ValueError),
        (lambda: colflow.lasso(store, y, lambda_min_ratio=0, **few), ValueError),
        (lambda: colflow.ridge(store, y, tol=0, **few), ValueError),
        (lambda: colflow.lasso(store, y, nlambda=2.5, **few), TypeError),
        (lambda: colflow.lasso(store, y, pheno_name="height", **few), KeyError),
        (lambda: colflow.lasso(store, y.to_numpy()[:-1], **few), ValueError),
        (lambda: colflow.lasso(store, y, columns=["no-such-variant"]), KeyError),
        (lambda: colflow.lasso(store, pd.Series(1.0, index=y.index), **few),
         colflow.InvalidArgumentError),  # a constant phenotype
        (lambda: colflow.bayesr(store, y, iterations=10, burnin=10, **few),
         colflow.InvalidArgumentError),
        (lambda: colflow.bayesr(store, y, mixture=[0.01, 0.001], **few),
         colflow.InvalidArgumentError),
        (lambda: colflow.bayesr(store, y, mode="fast", **few), ValueError),
        (lambda: colflow.bayesr(store, y, sigma2_g_prior=(1, 2, 3), **few), ValueError),
        (lambda: colflow.bayesr(store, y, iterations=0, **few), ValueError),
        (lambda: colflow.bayesr(store, y, resume=True, **few), ValueError),
        (lambda: colflow.bayesr(store, y, checkpoint="/no/such/dir/x", resume=True, **few),
         colflow.NotFoundError),
        (lambda: colflow.bayesr(store, y, keep=[10**6], **few), IndexError),
    ]:
        with pytest.raises(error):
            call()
    with pytest.warns(RuntimeWarning, match="max_sweeps"):
        fit = colflow.lasso(store, y, nlambda=3, lambda_min_ratio=0.01, max_sweeps=1, **few)
    assert not fit.path.CONVERGED.all()
