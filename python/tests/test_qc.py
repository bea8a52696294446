"""Quality control from Python: ``colflow.hardy`` against an exact test written here from its
definition, against bed-reader's values, and against the command's ``.hardy`` and ``.hardy.x``."""

from __future__ import annotations

from math import lgamma

import numpy as np
import pandas as pd
import pytest
from bed_reader import open_bed
from conftest import dataset, read_tsv

import colflow


def exact_hwe(hom1: int, het: int, hom2: int) -> tuple[float, float]:
    """Wigginton et al.'s exact test by enumeration: P (the probability of every table at most
    as likely as the observed one) and its mid-p form (Graffelman & Moreno: the tables as likely
    as the observed one, ties included, count half)."""
    n = hom1 + het + hom2
    rare = min(2 * hom1 + het, 2 * hom2 + het)
    if n == 0:
        return 1.0, 0.5

    def log_weight(h: int) -> float:
        # P(h heterozygotes | n, rare copies), up to a constant.
        r = (rare - h) // 2
        c = n - h - r
        return h * np.log(2) - lgamma(h + 1) - lgamma(r + 1) - lgamma(c + 1)

    hets = range(rare % 2, rare + 1, 2)
    logs = np.array([log_weight(h) for h in hets])
    weights = np.exp(logs - logs.max())
    total = weights.sum()
    observed = weights[list(hets).index(het)]
    tied = np.abs(weights - observed) <= observed * 1e-7
    at_most = weights[weights <= observed * (1 + 1e-7)].sum()
    p = min(1.0, at_most / total)
    return p, min(1.0, (at_most - weights[tied].sum() / 2) / total)


@pytest.mark.parametrize("name", ["bed-reader/some_missing", "hapmap-yri/plinkhapmap"])
def test_hardy_counts_and_tests_equal_a_direct_computation(name, make_store):
    path = make_store(name)
    everything = colflow.hardy(path)
    values = open_bed(dataset(name) + ".bed").read(dtype=np.float64)  # counts of the .bim's A1
    assert len(everything) == values.shape[1]
    # hapmap-yri's chromosome 23 is X, and no sample has a known sex: plink2 tests none of it.
    on_x = (everything["#CHROM"] == "X").to_numpy()
    assert everything["P"][on_x].isna().all()
    got, values = everything[~on_x], values[:, ~on_x]
    # plink2's A1 is the .bim's sixth column: HOM_A1_CT counts zero copies of the fifth.
    np.testing.assert_array_equal(got["HOM_A1_CT"], (values == 0).sum(axis=0))
    np.testing.assert_array_equal(got["HET_A1_CT"], (values == 1).sum(axis=0))
    np.testing.assert_array_equal(got["TWO_AX_CT"], (values == 2).sum(axis=0))
    expected = np.array([exact_hwe(*row) for row in
                         got[["HOM_A1_CT", "HET_A1_CT", "TWO_AX_CT"]].to_numpy()])
    np.testing.assert_allclose(got["P"], expected[:, 0], rtol=1e-9)
    np.testing.assert_allclose(got["MIDP"], expected[:, 1], rtol=1e-9, atol=1e-300)
    assert (got["P"] < 0.05).any() and (got["P"] > 0.5).any()  # both tails are exercised


def test_hardy_equals_the_command_on_and_off_x(tmp_path, colflow_cli):
    # 7 samples (4 males, 3 females) on two autosomal variants and three on X.
    prefix = tmp_path / "sexed"
    codes = np.array([[0, 2, 1, 1, 0, 2, 3],   # .bed codes: 0 hom A1, 2 het, 3 hom A2, 1 NA
                      [2, 2, 2, 0, 3, 3, 0],
                      [0, 3, 0, 3, 2, 2, 0],
                      [3, 3, 0, 0, 2, 3, 3],
                      [2, 0, 3, 0, 0, 2, 2]])
    with open(prefix.with_suffix(".bed"), "wb") as bed:
        bed.write(bytes([0x6C, 0x1B, 0x01]))
        for row in codes:
            padded = list(row) + [0] * (-len(row) % 4)
            bed.write(bytes(sum(c << (2 * k) for k, c in enumerate(padded[i:i + 4]))
                            for i in range(0, len(padded), 4)))
    chroms = ["1", "2", "X", "X", "X"]
    prefix.with_suffix(".bim").write_text("".join(
        f"{c}\tv{j}\t0\t{100 * (j + 1)}\tA\tG\n" for j, c in enumerate(chroms)))
    prefix.with_suffix(".fam").write_text("".join(
        f"f{i} s{i} 0 0 {1 if i < 4 else 2} -9\n" for i in range(7)))
    store = tmp_path / "sexed.cf"
    colflow.preprocess(str(prefix), store)
    got = colflow.hardy(store)
    colflow_cli("hardy", store, "--out", tmp_path / "out")
    for file, rows, female in ((".hardy", [0, 1], False), (".hardy.x", [2, 3, 4], True)):
        expected = read_tsv(tmp_path / f"out{file}")
        part = got.iloc[rows].reset_index(drop=True)
        assert (part["ID"].to_numpy() == expected["ID"].to_numpy()).all()
        assert (part["A1"].to_numpy() == expected["A1"].to_numpy()).all()
        prefix_ = "FEMALE_" if female else ""
        for name in ("HOM_A1_CT", "HET_A1_CT", "TWO_AX_CT"):
            np.testing.assert_array_equal(part[name], expected[prefix_ + name], err_msg=name)
        het = f"O({prefix_}HET_A1)"
        np.testing.assert_array_equal(part["O(HET_A1)"], expected[het])
        np.testing.assert_array_equal(part["E(HET_A1)"], expected[f"E({prefix_}HET_A1)"])
        np.testing.assert_array_equal(part["P"], expected["P"])
        if female:
            np.testing.assert_array_equal(part["MALE_A1_CT"], expected["MALE_A1_CT"])
            np.testing.assert_array_equal(part["MALE_AX_CT"], expected["MALE_AX_CT"])
        else:
            assert (part["MALE_A1_CT"] == 0).all() and (part["MALE_AX_CT"] == 0).all()
    # Treating every sample as female makes X diploid: the males' counts move to the genotypes.
    all_female = colflow.hardy(store, sex=pd.Series(["F"] * 7, index=[f"s{i}" for i in range(7)]))
    assert (all_female["MALE_A1_CT"] == 0).all()
    assert (all_female[["HOM_A1_CT", "HET_A1_CT", "TWO_AX_CT"]].sum(axis=1).iloc[2:] >
            got[["HOM_A1_CT", "HET_A1_CT", "TWO_AX_CT"]].sum(axis=1).iloc[2:]).all()


def test_hardy_refuses_a_dense_store_and_a_bad_threshold(tmp_path, make_store):
    dense = tmp_path / "dense.cf"
    colflow.preprocess(np.random.default_rng(1).random((5, 3)), dense)
    with pytest.raises(colflow.InvalidArgumentError):
        colflow.hardy(dense)
    with pytest.raises(colflow.InvalidArgumentError, match="0.5|threshold"):
        colflow.hardy(make_store("bed-reader/some_missing"), hard_call_threshold=0.7)
