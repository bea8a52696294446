"""colflow.stats and colflow.assoc against the same figures computed with numpy from
bed-reader's values (docs/ANALYSES.md's definitions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bed_reader import open_bed
from conftest import assert_same_table, dataset

import colflow

STATS_DATASETS = [
    "bed-reader/some_missing",
    "bed-reader/toydata.5chrom",
    "hapmap3/HapMap3",
    "uk10k/uk10k_chr1_1mb",
]


def bed_values(name: str) -> np.ndarray:
    with open_bed(dataset(name) + ".bed") as bed:
        return bed.read(dtype=np.float64)


def expected_stats(x: np.ndarray, chrom: np.ndarray, sex: np.ndarray) -> pd.DataFrame:
    """PLINK 2's counts by ploidy (stats.hpp): on X a male has one allele (a heterozygous
    call half an A1), on Y only males count, one allele each, on MT everyone has one; MEAN and
    SD are those of the stored dosages of every selected sample, SD over n - 1."""
    n = x.shape[0]
    observed = ~np.isnan(x)
    mean = np.nanmean(np.where(observed.any(0), x, 0), axis=0, where=observed)
    mean = np.where(observed.any(0), mean, np.nan)
    dev = np.where(observed, x - mean, 0.0)
    sd = np.sqrt((dev**2).sum(0) / (n - 1)) if n > 1 else np.zeros(x.shape[1])
    male = sex == "1"
    counted = np.ones(x.shape, bool)
    alleles = np.full(x.shape, 2.0)
    a1 = np.nan_to_num(x)
    for j, c in enumerate(chrom):
        if c in ("X", "23"):
            alleles[male, j] = 1.0
            a1[male, j] /= 2
        elif c in ("Y", "24"):
            counted[:, j] = male
            alleles[:, j] = 1.0
            a1[:, j] /= 2
        elif c in ("MT", "26"):
            alleles[:, j] = 1.0
            a1[:, j] /= 2
    use = observed & counted
    obs = use.sum(0)
    missing = (counted & ~observed).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = (a1 * use).sum(0) / (alleles * use).sum(0)
        f_miss = missing / (obs + missing)
    return pd.DataFrame(
        {"OBS_CT": obs, "MISSING_CT": missing, "F_MISS": f_miss, "A1_FREQ": freq, "MEAN": mean,
         "SD": sd}
    )


@pytest.mark.parametrize("name", STATS_DATASETS)
@pytest.mark.parametrize("keep", ["all", "every other", "iids"])
def test_stats_equal_numpy_on_bed_reader_values(name, keep, make_store):
    x = bed_values(name)
    with colflow.open(make_store(name)) as store:
        samples = store.samples
        if keep == "all":
            selector, rows = None, np.arange(x.shape[0])
        elif keep == "every other":
            selector, rows = np.s_[::2], np.arange(0, x.shape[0], 2)
        else:  # by IID, in any order: the store's order counts
            rows = np.arange(x.shape[0])[1::3]
            selector = pd.Index(samples.iid.to_numpy()[rows][::-1])
        got = colflow.stats(store, keep=selector)
        columns = store.columns
    expected = expected_stats(x[rows], columns.chrom.to_numpy(), samples.sex.to_numpy()[rows])
    assert list(got.columns) == [
        "#CHR", "ID", "POS", "A1", "A2", "OBS_CT", "MISSING_CT", "F_MISS", "A1_FREQ", "MEAN", "SD",
    ]
    assert (got["ID"].to_numpy() == columns.id.to_numpy()).all()
    assert (got["#CHR"].to_numpy() == columns.chrom.to_numpy()).all()
    assert (got["POS"].to_numpy() == columns.pos.astype(np.int64).to_numpy()).all()
    np.testing.assert_array_equal(got["OBS_CT"], expected["OBS_CT"])
    np.testing.assert_array_equal(got["MISSING_CT"], expected["MISSING_CT"])
    for field in ("F_MISS", "A1_FREQ", "MEAN", "SD"):
        np.testing.assert_allclose(got[field], expected[field], rtol=1e-12, atol=1e-14,
                                   err_msg=field)


def test_stats_of_a_column_selection_and_a_path(make_store):
    path = make_store("hapmap3/HapMap3")
    with colflow.open(path) as store:
        whole = colflow.stats(store)
        ids = store.columns.id.to_numpy()[[50, 7, 7, 300]]
    by_id = colflow.stats(path, columns=list(ids))
    by_index = colflow.stats(path, columns=[300, 7, 50])
    # Each column once, in the store's order.
    pd.testing.assert_frame_equal(by_id, whole.iloc[[7, 50, 300]].reset_index(drop=True))
    pd.testing.assert_frame_equal(by_index, by_id)
    with pytest.raises(KeyError):
        colflow.stats(path, columns=["no-such-variant"])
    with pytest.raises(IndexError):
        colflow.stats(path, keep=[10**6])


def test_stats_of_a_dense_store(make_store):
    name = "bed-reader/plink_sim_10s_100v_10pmiss"
    x = bed_values(name)
    got = colflow.stats(make_store(name, codec="zstd", standardize=False), keep=np.s_[1:])
    x = x[1:]
    assert list(got.columns) == ["ID", "OBS_CT", "MISSING_CT", "MEAN", "SD", "MIN", "MAX"]
    observed = ~np.isnan(x)
    mean = np.nanmean(x, axis=0)
    np.testing.assert_array_equal(got["OBS_CT"], observed.sum(0))
    np.testing.assert_array_equal(got["MISSING_CT"], (~observed).sum(0))
    np.testing.assert_allclose(got["MEAN"], mean, rtol=1e-12)
    sd = np.sqrt(np.nansum((x - mean) ** 2, axis=0) / (x.shape[0] - 1))
    np.testing.assert_allclose(got["SD"], sd, rtol=1e-12)
    np.testing.assert_array_equal(got["MIN"], np.nanmin(x, axis=0))
    np.testing.assert_array_equal(got["MAX"], np.nanmax(x, axis=0))


# -- assoc ---------------------------------------------------------------------------------------

ASSOC = "uk10k/uk10k_chr1_1mb"  # autosomal: no sex covariate or ploidy to model


def phenotypes(store, seed=5):
    rng = np.random.default_rng(seed)
    n = store.shape[0]
    g = store.read(np.s_[:, 3], dtype=np.float64)[:, 0]
    age = rng.normal(50, 10, n)
    y = 0.4 * np.nan_to_num(g) + 0.02 * age + rng.normal(size=n)
    y[rng.choice(n, n // 20, replace=False)] = np.nan
    p = 1 / (1 + np.exp(-(0.5 * np.nan_to_num(g) - 0.3 + 0.01 * (age - 50))))
    cc = np.where(rng.random(n) < p, 2.0, 1.0)
    cc[rng.choice(n, n // 25, replace=False)] = 0  # PLINK's missing code
    return y, cc, age


def linear_fit(y, g, covar):
    use = ~np.isnan(y) & ~np.isnan(g)
    design = np.column_stack([np.ones(use.sum()), g[use]] + [c[use] for c in covar])
    beta, *_ = np.linalg.lstsq(design, y[use], rcond=None)
    resid = y[use] - design @ beta
    dof = use.sum() - design.shape[1]
    cov = resid @ resid / dof * np.linalg.inv(design.T @ design)
    return use.sum(), beta[1], np.sqrt(cov[1, 1])


def logistic_fit(case, g, covar):
    use = ~np.isnan(case) & ~np.isnan(g)
    design = np.column_stack([np.ones(use.sum()), g[use]] + [c[use] for c in covar])
    y = case[use]
    beta = np.zeros(design.shape[1])
    for _ in range(100):  # Newton's method to convergence
        mu = 1 / (1 + np.exp(-design @ beta))
        info = design.T @ (design * (mu * (1 - mu))[:, None])
        step = np.linalg.solve(info, design.T @ (y - mu))
        beta += step
        if np.abs(step).max() < 1e-13:
            break
    mu = 1 / (1 + np.exp(-design @ beta))
    info = design.T @ (design * (mu * (1 - mu))[:, None])
    return use.sum(), beta[1], np.sqrt(np.linalg.inv(info)[1, 1])


def test_assoc_linear_and_logistic_equal_numpy_fits(make_store):
    with colflow.open(make_store(ASSOC)) as store:
        y, cc, age = phenotypes(store)
        iid = store.samples.iid.to_numpy()
        # A DataFrame indexed by IID, in another order, with a sample the store lacks.
        order = np.random.default_rng(0).permutation(len(iid))
        pheno = pd.DataFrame({"height": y[order], "disease": cc[order]}, index=iid[order])
        pheno.loc["not-in-store"] = [1.0, 2.0]
        covar = pd.Series(age, index=iid, name="age")
        cols = np.arange(0, min(store.shape[1], 400), 13)
        got = colflow.assoc(store, pheno, covar, columns=cols, odds_ratio=False)
        x = store.read(np.s_[:, cols], dtype=np.float64)
        columns = store.columns.iloc[cols]
    assert list(got) == ["height", "disease"]
    lin, log = got["height"], got["disease"]
    assert list(lin.columns) == [
        "#CHR", "POS", "ID", "A1", "A2", "N_OBS", "BETA", "SE", "T_STAT", "P", "NOTE"]
    assert list(log.columns) == [
        "#CHR", "POS", "ID", "A1", "A2", "FIRTH?", "N_OBS", "BETA", "SE", "Z_STAT", "P", "NOTE"]
    assert (lin["ID"].to_numpy() == columns.id.to_numpy()).all()
    case = np.where(cc == 0, np.nan, cc - 1)
    tested = 0
    for k in range(len(cols)):
        g = x[:, k]
        if lin["NOTE"][k] == ".":
            n_obs, beta, se = linear_fit(y, g, [age])
            assert lin["N_OBS"][k] == n_obs
            np.testing.assert_allclose([lin["BETA"][k], lin["SE"][k]], [beta, se], rtol=1e-8)
            np.testing.assert_allclose(lin["T_STAT"][k], beta / se, rtol=1e-8)
            assert 0 <= lin["P"][k] <= 1
            tested += 1
        else:
            assert np.isnan(lin["BETA"][k])
        if log["NOTE"][k] == "." and log["FIRTH?"][k] == "N":
            n_obs, beta, se = logistic_fit(case, g, [age])
            assert log["N_OBS"][k] == n_obs
            np.testing.assert_allclose([log["BETA"][k], log["SE"][k]], [beta, se], rtol=1e-6)
            np.testing.assert_allclose(log["Z_STAT"][k], beta / se, rtol=1e-6)
    assert tested >= 10


def test_assoc_inputs_and_detection(make_store):
    with colflow.open(make_store(ASSOC)) as store:
        y, cc, _ = phenotypes(store, seed=9)
        n = store.shape[0]
        by_array = colflow.assoc(store, np.column_stack([y, cc]), columns=np.s_[:40])
        assert list(by_array) == ["PHENO1", "PHENO2"]
        assert by_array["PHENO1"].attrs["model"] == "linear"
        assert by_array["PHENO2"].attrs["model"] == "logistic"
        assert by_array["PHENO2"].attrs["samples_used"] == int((cc != 0).sum())
        # The odds ratio is exp(BETA); 0/1 codes with zero_one; -9 is missing.
        beta = colflow.assoc(store, cc, columns=np.s_[:40], odds_ratio=False)["PHENO1"]
        np.testing.assert_allclose(by_array["PHENO2"]["OR"], np.exp(beta["BETA"]), rtol=1e-14)
        zero_one = np.where(cc == 0, -9, cc - 1)
        again = colflow.assoc(store, zero_one, columns=np.s_[:40], zero_one=True)["PHENO1"]
        pd.testing.assert_frame_equal(again, by_array["PHENO2"], check_like=False)
        # Forced models.
        forced = colflow.assoc(store, cc, columns=np.s_[:5], binary=False)["PHENO1"]
        assert forced.attrs["model"] == "linear"
        forced = colflow.assoc(
            store, pd.DataFrame({"a": cc}, index=store.samples.iid), columns=np.s_[:5],
            binary=["a"]
        )["a"]
        assert forced.attrs["model"] == "logistic"
        # A Series indexed by IID equals the numpy array.
        series = pd.Series(y, index=store.samples.iid, name="y")
        pd.testing.assert_frame_equal(
            colflow.assoc(store, series, columns=np.s_[:40])["y"], by_array["PHENO1"]
        )
        with pytest.raises(ValueError, match="one row per sample"):
            colflow.assoc(store, y[:-1])
        with pytest.raises(ValueError, match="firth"):
            colflow.assoc(store, y, firth="sometimes")
        with pytest.raises(colflow.InvalidArgumentError):
            colflow.assoc(store, np.full(n, np.nan))


def test_inputs_given_as_file_paths_equal_the_tables(make_store, tmp_path):
    """pheno=, covar=, keep= and sex= as paths (str and PathLike) read by the library's own
    readers: the same results as the DataFrame calls; anything else is a TypeError."""
    with colflow.open(make_store("hapmap3/HapMap3")) as store:
        y, cc, age = phenotypes(store, seed=11)
        samples = store.samples
        iid = samples.iid.to_numpy()
        n = store.shape[0]
        chrom = store.columns.chrom.to_numpy()
        cols = np.concatenate([np.flatnonzero(chrom == "X")[:20], np.arange(0, 400, 20)])
    with open(tmp_path / "pheno.txt", "w") as f:
        f.write("#FID IID y cc\n")
        for fid, i, a, b in zip(samples.fid, iid, y, cc):
            f.write(f"{fid} {i} {'NA' if np.isnan(a) else repr(float(a))} {b:g}\n")
    with open(tmp_path / "covar.txt", "w") as f:  # no header: PLINK 1's form
        f.write("".join(f"{a} {b} {float(c)!r}\n" for a, b, c in zip(samples.fid, iid, age)))
    kept = iid[::3]
    (tmp_path / "keep.txt").write_text("".join(f"{i}\n" for i in kept))
    sex = pd.Series(np.where(np.arange(n) % 2 == 0, "1", "2"), index=iid)
    (tmp_path / "sex.txt").write_text("#IID SEX\n" + "".join(f"{i} {c}\n" for i, c in sex.items()))

    tables = colflow.assoc(
        store.path,
        pd.DataFrame({"y": y, "cc": cc}, index=iid),
        pd.DataFrame({"COVAR1": age}, index=iid),
        keep=pd.Index(kept),
        columns=cols,
        sex=sex,
    )
    files = colflow.assoc(
        store.path,
        str(tmp_path / "pheno.txt"),
        tmp_path / "covar.txt",
        keep=tmp_path / "keep.txt",
        columns=cols,
        sex=str(tmp_path / "sex.txt"),
    )
    assert list(files) == ["y", "cc"]
    for name in files:
        pd.testing.assert_frame_equal(files[name], tables[name])
    lasso_files = colflow.lasso(store.path, tmp_path / "pheno.txt", keep=str(tmp_path / "keep.txt"),
                                columns=cols, nlambda=3)
    lasso_tables = colflow.lasso(store.path, pd.Series(y, index=iid, name="y"),
                                 keep=pd.Index(kept), columns=cols, nlambda=3)
    pd.testing.assert_frame_equal(lasso_files.coefficients, lasso_tables.coefficients)

    with pytest.raises(TypeError, match="pheno must be a pandas DataFrame or Series indexed by "
                       "IID, a numpy array with one row per sample, or the path of a PLINK "
                       "phenotype file"):
        colflow.assoc(store.path, {"y": y})
    with pytest.raises(TypeError, match="covar must be"):
        colflow.assoc(store.path, y, covar=42)
    with pytest.raises(colflow.NotFoundError, match="no-such.phen"):
        colflow.assoc(store.path, tmp_path / "no-such.phen")


# -- pca -----------------------------------------------------------------------------------------


def numpy_pca(z: np.ndarray, k: int):
    z = z[:, z.std(axis=0) > 0]  # constant columns are left out of M
    values, vectors = np.linalg.eigh(z @ z.T / z.shape[1])
    order = np.argsort(values)[::-1][:k]
    return values[order], vectors[:, order], z.shape[1]


def test_pca_is_exact_when_the_sketch_spans_the_samples(make_store):
    # 10 samples, k + oversampling = 13 directions: the randomised SVD is exact.
    with colflow.open(make_store("bed-reader/plink_sim_10s_100v_10pmiss")) as store:
        got = colflow.pca(store, 3, loadings=True)
        z = store.read(dtype=np.float64, standardize=True)
        iid = store.samples.iid.to_numpy()
    values, vectors, m = numpy_pca(z, 3)
    assert got.columns_used == m
    np.testing.assert_allclose(got.eigenvalues, values, rtol=1e-10)
    assert list(got.eigenvectors.columns) == ["#FID", "IID", "PC1", "PC2", "PC3"]
    assert (got.eigenvectors["IID"].to_numpy() == iid).all()
    u = got.eigenvectors[["PC1", "PC2", "PC3"]].to_numpy()
    np.testing.assert_allclose(np.abs(u.T @ vectors), np.eye(3), atol=1e-8)
    # The sign rule: each eigenvector's largest entry is positive.
    assert (u[np.abs(u).argmax(0), range(3)] > 0).all()
    # Loadings: Zᵀu / sqrt(eigenvalue · M).
    assert list(got.loadings.columns[:4]) == ["#CHR", "ID", "A1", "A2"]
    v = got.loadings[["PC1", "PC2", "PC3"]].to_numpy()
    np.testing.assert_allclose(v, z.T @ u / np.sqrt(got.eigenvalues * m), atol=1e-10)
    # The sketch spans the samples: each residual |ZZᵀu − λu|/λ is rounding alone.
    np.testing.assert_array_less(got.residuals, 1e-10)
    lam = got.eigenvalues * m
    np.testing.assert_allclose(np.linalg.norm(z @ (z.T @ u) - u * lam, axis=0) / lam,
                               got.residuals, atol=1e-10)


def test_pca_of_a_subset_finds_the_top_components(make_store):
    with colflow.open(make_store("hapmap3/HapMap3")) as store:
        got = colflow.pca(store, 2, keep=np.s_[::2], columns=np.s_[::10], power_iterations=8)
        z = store.read(np.s_[::2, ::10], dtype=np.float64, standardize=True)
    values, vectors, _ = numpy_pca(z, 2)
    assert len(got.eigenvectors) == z.shape[0]
    np.testing.assert_allclose(got.eigenvalues, values, rtol=1e-6)
    u = got.eigenvectors[["PC1", "PC2"]].to_numpy()
    np.testing.assert_allclose(np.abs(np.diag(u.T @ vectors)), 1, atol=1e-5)
    with pytest.raises(colflow.InvalidArgumentError):
        colflow.pca(store.path, 0)
    with pytest.raises(ValueError, match="scaling"):
        colflow.pca(store.path, 2, scaling="none")


# -- assoc's options, against the command ---------------------------------------------------------


def test_assoc_options_equal_the_command(make_store, colflow_cli, tmp_path):
    """sex=, quantile_normalize= and covar_variance_standardize= on HapMap3's X, XY and MT
    columns and some autosomes, against `colflow assoc --sex FILE
    --pheno-quantile-normalize --covar-variance-standardize` on the same store."""
    path = make_store("hapmap3/HapMap3")
    with colflow.open(path) as store:
        samples, chrom = store.samples, store.columns.chrom.to_numpy()
        n = store.shape[0]
        cols = np.concatenate([np.flatnonzero(np.isin(chrom, ["X", "XY", "MT"])),
                               np.arange(0, 2000, 50)])
        g = store.read(np.s_[:, cols[:1]], dtype=np.float64)[:, 0]
        ids = store.columns.id.to_numpy()[cols]
    rng = np.random.default_rng(3)
    age = rng.normal(50, 10, n)
    height = np.exp(0.3 * np.nan_to_num(g) + rng.normal(size=n))  # skewed: normalising matters
    height[rng.choice(n, 30, replace=False)] = np.nan
    cc = np.where(rng.random(n) < 0.4, 2.0, 1.0)
    iid = samples.iid.to_numpy()
    # New sexes for a third of the samples (some unknown), as numbers and as letters.
    changed = rng.choice(n, n // 3, replace=False)
    codes = rng.choice(["1", "2", "0"], size=changed.size, p=[0.45, 0.45, 0.1])
    sex = pd.Series(codes, index=iid[changed])
    letters = sex.map({"1": "M", "2": "F", "0": "NA"})
    with open(tmp_path / "sex.txt", "w") as f:
        f.write("#IID SEX\n" + "".join(f"{i} {c}\n" for i, c in sex.items()))
    with open(tmp_path / "pheno.txt", "w") as f:
        f.write("#FID IID height disease\n")
        for fid, i, h, c in zip(samples.fid, iid, height, cc):
            f.write(f"{fid} {i} {'NA' if np.isnan(h) else repr(float(h))} {c:g}\n")
    with open(tmp_path / "covar.txt", "w") as f:
        f.write("#FID IID age\n")
        f.write("".join(f"{a} {b} {float(c)!r}\n" for a, b, c in zip(samples.fid, iid, age)))
    (tmp_path / "extract.txt").write_text("".join(f"{i}\n" for i in ids))
    pheno = pd.DataFrame({"height": height, "disease": cc}, index=iid)
    covar = pd.Series(age, index=iid, name="age")
    got = colflow.assoc(path, pheno, covar, columns=list(ids), sex=letters,
                        quantile_normalize=True, covar_variance_standardize=True, num_threads=2)
    colflow_cli("assoc", path, "--pheno", tmp_path / "pheno.txt", "--covar", tmp_path / "covar.txt",
                "--extract", tmp_path / "extract.txt", "--sex", tmp_path / "sex.txt",
                "--pheno-quantile-normalize", "--covar-variance-standardize", "--threads", 2,
                "--out", tmp_path / "out")
    assert_same_table(got["height"], tmp_path / "out.height.assoc.tsv")
    assert_same_table(got["disease"], tmp_path / "out.disease.logistic.tsv")
    # The sexes count: on X the males' calls and the sex covariate change the tests.
    plain = colflow.assoc(path, pheno, covar, columns=list(ids), quantile_normalize=True,
                          covar_variance_standardize=True)
    on_x = got["height"]["#CHR"] == "X"
    assert on_x.sum() > 0
    assert not np.allclose(plain["height"]["BETA"][on_x], got["height"]["BETA"][on_x],
                           equal_nan=True)
    pd.testing.assert_frame_equal(plain["height"][~on_x & (got["height"]["#CHR"] != "Y")],
                                  got["height"][~on_x & (got["height"]["#CHR"] != "Y")])
    # The same sexes by number, and as an array of one value per store sample.
    by_number = colflow.assoc(path, pheno, covar, columns=list(ids), sex=sex.astype(int),
                              quantile_normalize=True, covar_variance_standardize=True)
    pd.testing.assert_frame_equal(by_number["height"], got["height"])
    array = pd.to_numeric(samples.sex, errors="coerce").to_numpy(dtype=np.float64)
    array[changed] = codes.astype(float)
    array[changed[codes == "0"]] = np.nan
    by_array = colflow.assoc(path, pheno, covar, columns=list(ids), sex=array,
                             quantile_normalize=True, covar_variance_standardize=True)
    pd.testing.assert_frame_equal(by_array["disease"], got["disease"])


def test_assoc_option_errors(make_store):
    path = make_store("hapmap3/HapMap3")
    with colflow.open(path) as store:
        n, iid = store.shape[0], store.samples.iid.to_numpy()
    y = np.random.default_rng(1).normal(size=n)
    few = {"columns": np.s_[:5]}
    with pytest.raises(ValueError, match="needs covariates"):
        colflow.assoc(path, y, covar_variance_standardize=True, **few)
    with pytest.raises(colflow.InvalidArgumentError, match="constant|COVAR1"):
        colflow.assoc(path, y, np.ones(n), covar_variance_standardize=True, **few)
    with pytest.raises(ValueError, match="not a sex code"):
        colflow.assoc(path, y, sex=pd.Series(["3"], index=iid[:1]), **few)
    with pytest.raises(ValueError, match="not a sex code"):
        colflow.assoc(path, y, sex=np.full(n, -9), **few)
    with pytest.raises(ValueError, match="one value per sample"):
        colflow.assoc(path, y, sex=np.ones(n - 1), **few)
    with pytest.raises(ValueError, match="twice"):
        colflow.assoc(path, y, sex=pd.Series([1, 2], index=[iid[0], iid[0]]), **few)
