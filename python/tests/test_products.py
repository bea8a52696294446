"""colflow.score, ld, ld_matrix and grm against numpy on the same store's values, and the file
forms against the DataFrame forms."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

import colflow
from conftest import dataset

DATA = "bed-reader/plink_sim_10s_100v_10pmiss"  # 10 samples, 100 variants, 10% missing


def dosages(store: colflow.Store) -> np.ndarray:
    return store.read(dtype=np.float64)  # A1 dosages, NaN missing


def test_score_equals_numpy_and_the_file_form(make_store, tmp_path):
    with colflow.open(make_store("hapmap3/HapMap3")) as store:
        cols = store.columns.iloc[:300]
        x = store.read(np.s_[:, :300], dtype=np.float64)
        rng = np.random.default_rng(4)
        w = rng.normal(size=(300, 2))
        # Every third entry names A2: its dosage is 2 - d.
        flip = np.arange(300) % 3 == 0
        alleles = np.where(flip, cols.a2.to_numpy(), cols.a1.to_numpy())
        weights = pd.DataFrame({"ID": cols.id.to_numpy(), "A": alleles, "S1": w[:, 0],
                                "S2": w[:, 1]})
        got = colflow.score(store, weights)
        named = np.where(flip, 2 - x, x)
        f = np.nanmean(named, axis=0) / 2  # the named allele's frequency
        imputed = np.where(np.isnan(named), 2 * f, named)
        np.testing.assert_allclose(got[["S1_SUM", "S2_SUM"]].to_numpy(), imputed @ w,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["S1_AVG"], (imputed @ w[:, 0]) / 600, rtol=1e-12)
        assert (got["ALLELE_CT"] == 2 * (~np.isnan(x)).sum(axis=1)).all()
        assert got.attrs["entries_used"] == 300 and got.attrs["columns_used"] == 300
        # The same weights from a file, plink2's positional form with a header line.
        path = tmp_path / "w.txt"
        weights.to_csv(path, sep="\t", index=False)
        from_file = colflow.score(store.path, path, score_cols=[3, 4], header="read")
        pd.testing.assert_frame_equal(from_file, got)
        # Centered, without imputation: the command's modifiers.
        centered = colflow.score(store, weights, scaling="center")
        np.testing.assert_allclose(centered["S1_SUM"],
                                   np.nan_to_num(named - 2 * f) @ w[:, 0], rtol=1e-10,
                                   atol=1e-10)
        plain = colflow.score(store, weights, mean_impute=False)
        np.testing.assert_allclose(plain["S2_SUM"], np.nan_to_num(named) @ w[:, 1], rtol=1e-10,
                                   atol=1e-10)
        with pytest.raises(TypeError, match="weights must be"):
            colflow.score(store, {"ID": 1})
        with pytest.raises(ValueError, match="scaling"):
            colflow.score(store, weights, scaling="zscore")


def pairwise_r(x: np.ndarray, a: int, b: int) -> float:
    both = ~np.isnan(x[:, a]) & ~np.isnan(x[:, b])
    return float(np.corrcoef(x[both, a], x[both, b])[0, 1])


def test_ld_table_and_matrices_equal_numpy(make_store):
    with colflow.open(make_store("hapmap3/HapMap3")) as store:
        x = store.read(np.s_[:, :200], dtype=np.float64)
        table = colflow.ld(store, columns=np.s_[:200], min_r2=0, window=5)
        ids = store.columns.id.to_numpy()
        position = {v: k for k, v in enumerate(ids[:200])}
        assert list(table.columns) == ["CHR_A", "BP_A", "SNP_A", "CHR_B", "BP_B", "SNP_B", "R2"]
        assert len(table) > 100
        for row in table.head(50).itertuples():
            a, b = position[row.SNP_A], position[row.SNP_B]
            assert 0 < b - a <= 4
            np.testing.assert_allclose(row.R2, pairwise_r(x, a, b) ** 2, rtol=1e-9)
        square = colflow.ld_matrix(store, columns=np.s_[:60])
        assert square.shape == (60, 60)
        for a, b in [(0, 1), (3, 40), (59, 2)]:
            np.testing.assert_allclose(square[a, b], pairwise_r(x, a, b), rtol=1e-9)
        np.testing.assert_array_equal(square, square.T)
        band = colflow.ld_matrix(store, columns=np.s_[:60], band=True, window=4)
        assert isinstance(band, scipy.sparse.csr_matrix)
        dense = band.toarray()
        near = np.abs(np.subtract.outer(np.arange(60), np.arange(60))) <= 3
        # The band holds the pairs of the window on one chromosome, each equal to the square.
        np.testing.assert_array_equal(dense[near & (dense != 0)], square[near & (dense != 0)])
        assert (dense[~near] == 0).all()


def test_ld_window_cm_follows_the_genetic_map(tmp_path):
    # HapMap3 with a map of 0.01 cM per variant: on the first 300 variants (chromosome 1) a
    # 0.035 cM window holds the next three, whatever their base pairs.
    source = Path(dataset("hapmap3/HapMap3"))
    bim = pd.read_csv(f"{source}.bim", sep="\t", header=None)
    bim[2] = np.arange(1, len(bim) + 1) * 0.01
    bim.to_csv(tmp_path / "mapped.bim", sep="\t", header=False, index=False)
    store_path = tmp_path / "mapped.cf"
    colflow.preprocess(f"{source}.bed", store_path, bim=tmp_path / "mapped.bim",
                       fam=f"{source}.fam")
    with colflow.open(store_path) as store:
        first = np.s_[:300]
        table = colflow.ld(store, columns=first, window=100, window_cm=0.035, min_r2=0)
        ids = {v: k for k, v in enumerate(store.columns.id)}
        gaps = np.array([ids[b] - ids[a] for a, b in zip(table.SNP_A, table.SNP_B)])
        assert set(gaps) == {1, 2, 3}
        assert len(table) == 3 * 300 - 6  # the last three rows have fewer pairs
        band = colflow.ld_matrix(store, columns=first, band=True, window=100, window_cm=0.035)
        assert band.nnz == 300 + 2 * len(table)
        with pytest.raises(ValueError, match="window_cm"):
            colflow.ld(store, columns=first, window_cm=0)


def test_grm_equals_the_definition(make_store):
    with colflow.open(make_store(DATA)) as store:
        x = dosages(store)
        g = colflow.grm(store)
    p = np.nanmean(x, axis=0) / 2
    keep = 2 * p * (1 - p) > 1e-12
    z = (x[:, keep] - 2 * p[keep]) / np.sqrt(2 * p[keep] * (1 - p[keep]))
    z = np.nan_to_num(z)
    # The divisor counts every variant called in both samples, monomorphic ones too (as PLINK).
    both = (~np.isnan(x)).astype(float)
    expected = (z @ z.T) / (both @ both.T)
    np.testing.assert_allclose(g.matrix, expected, rtol=1e-12)
    np.testing.assert_array_equal(g.matrix, g.matrix.T)
    np.testing.assert_array_equal(g.variants, both @ both.T)
    assert list(g.samples.columns) == ["#FID", "IID"] and len(g.samples) == x.shape[0]
    assert g.variants_used == x.shape[1]
    cov = colflow.grm(store.path, cov=True, meanimpute=True)
    c = np.nan_to_num(x - 2 * p)
    np.testing.assert_allclose(cov.matrix, c @ c.T / x.shape[1], rtol=1e-12, atol=1e-14)
