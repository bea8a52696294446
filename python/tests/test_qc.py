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


def king_counts(values: np.ndarray) -> dict[str, np.ndarray]:
    """The KING pair counts of every pair of samples (rows) over the variants both have called,
    as matrices [i, j]: straight products of indicator matrices."""
    hom0, het, hom2 = ((values == v).astype(np.int64) for v in (0, 1, 2))
    hom = hom0 + hom2
    return {"hethet": het @ het.T, "ibs0": hom0 @ hom2.T + hom2 @ hom0.T,
            "het_hom": het @ hom.T, "hom_het": hom @ het.T,
            "nsnp": (het + hom) @ (het + hom).T}


def test_king_equals_straight_counts_and_the_command(make_store, colflow_cli, tmp_path):
    name = "bed-reader/some_missing"  # 100 samples, autosomes only, missing calls
    path = make_store(name)
    got = colflow.king(path, cutoff=0.02, num_threads=2)
    values = open_bed(dataset(name) + ".bed").read(dtype=np.float64)
    c = king_counts(values)
    n = values.shape[0]
    i, j = np.tril_indices(n, -1)
    order = np.lexsort((j, i))  # the table's order: IID1 = 1..n-1, IID2 = 0..IID1-1
    i, j = i[order], j[order]
    table = got.table
    assert len(table) == n * (n - 1) // 2
    np.testing.assert_array_equal(table["NSNP"], c["nsnp"][i, j])
    np.testing.assert_array_equal(table["HETHET"], c["hethet"][i, j] / c["nsnp"][i, j])
    np.testing.assert_array_equal(table["HET1_HOM2"], c["het_hom"][i, j])
    np.testing.assert_array_equal(table["HET2_HOM1"], c["hom_het"][i, j])
    ibs0, hh = c["ibs0"][i, j], c["hethet"][i, j]
    with np.errstate(divide="ignore", invalid="ignore"):  # pairs without a het: -inf, NaN
        expected = 0.5 - (4 * ibs0 + c["het_hom"][i, j] + c["hom_het"][i, j]) / (
            4 * (hh + np.minimum(c["het_hom"][i, j], c["hom_het"][i, j])))
    np.testing.assert_allclose(table["KINSHIP"], expected, rtol=1e-12)
    # The command's files: the same pairs, the same removals.
    colflow_cli("king", path, "--make-king-table", "--king-table-filter", "0.02",
                "--king-cutoff", "0.02", "--out", tmp_path / "k")
    kin0 = pd.read_csv(tmp_path / "k.kin0", sep="\t", dtype={"#FID1": str, "IID1": str})
    filtered = colflow.king(path, table_filter=0.02).table
    assert 0 < len(filtered) < len(table)
    assert (filtered["IID1"].to_numpy() == kin0["IID1"].to_numpy()).all()
    np.testing.assert_array_equal(filtered["KINSHIP"], kin0["KINSHIP"])
    out_id = pd.read_csv(tmp_path / "k.king.cutoff.out.id", sep="\t", dtype=str)
    in_id = pd.read_csv(tmp_path / "k.king.cutoff.in.id", sep="\t", dtype=str)
    assert got.removed["IID"].tolist() == out_id["IID"].tolist() and len(out_id) > 0
    assert got.kept["IID"].tolist() == in_id["IID"].tolist()
    assert colflow.king(path).removed is None


def test_king_refuses_bad_thresholds_and_a_dense_store(make_store, tmp_path):
    path = make_store("bed-reader/some_missing")
    with pytest.raises(ValueError, match="cutoff"):
        colflow.king(path, cutoff=0.5)
    with pytest.raises(ValueError, match="table_filter"):
        colflow.king(path, table_filter=0.6)
    dense = tmp_path / "dense.cf"
    colflow.preprocess(np.random.default_rng(2).random((6, 4)), dense)
    with pytest.raises(colflow.InvalidArgumentError, match="genotype"):
        colflow.king(dense)


def test_qc_lists_equal_numpy_and_the_command(make_store, colflow_cli, tmp_path):
    name = "bed-reader/some_missing"  # 100 x 100, 12-35% missing calls, autosomes, no parents
    path = make_store(name)
    got = colflow.qc(path, geno=0.22, maf=0.01)
    values = open_bed(dataset(name) + ".bed").read(dtype=np.float64)
    # --geno over every sample, then --maf over the variants it left (every sample a founder).
    missing = np.isnan(values).mean(axis=0)
    called = ~np.isnan(values)
    a1 = np.nansum(values, axis=0) / (2 * called.sum(axis=0))
    maf = np.minimum(a1, 1 - a1)
    geno_pass = missing <= 0.22
    passing = geno_pass & (maf >= 0.01)
    ids = pd.read_csv(dataset(name) + ".bim", sep="\t", header=None)[1].astype(str)
    assert got.variants["ID"].tolist() == ids[passing].tolist()
    assert got.removed == {"mind": 0, "geno": int((~geno_pass).sum()), "hwe": 0,
                           "allele_frequency": int((geno_pass & ~passing).sum())}
    assert 0 < got.removed["geno"] and 0 < got.removed["allele_frequency"]
    assert len(got.samples) == 100
    # regenie's recipe against the command's files.
    recipe = dict(maf=0.01, mac=2, geno=0.25, hwe=1e-3, mind=0.25)
    both = colflow.qc(path, **recipe)
    flags = [f for k, v in recipe.items() for f in (f"--{k}", v)]
    colflow_cli("qc", path, *flags, "--write-snplist", "--write-samples", "--out", tmp_path / "q")
    snplist = (tmp_path / "q.snplist").read_text().split()
    assert both.variants["ID"].tolist() == snplist
    samples = pd.read_csv(tmp_path / "q.id", sep="\t", dtype=str)
    assert both.samples["IID"].tolist() == samples["IID"].tolist()
    assert len(samples) < 100 and len(snplist) < 100  # --mind and the column filters both bite
    assert any("removed due to" in line for line in both.log)


def test_qc_refuses_a_threshold_out_of_range_by_its_flag(make_store):
    path = make_store("bed-reader/some_missing")
    with pytest.raises(colflow.InvalidArgumentError, match="--maf"):
        colflow.qc(path, maf=2)
    with pytest.raises(colflow.InvalidArgumentError, match="--geno"):
        colflow.qc(path, geno=-0.1)


def read_clumped(path) -> pd.DataFrame:
    """PLINK 1.9's .clumped: whitespace columns, blank lines at the end."""
    return pd.read_csv(path, sep=r"\s+", dtype={"SNP": str, "SP2": str})


def test_clump_of_a_dataframe_and_of_its_file_equal_the_command(make_store, colflow_cli,
                                                                 tmp_path):
    path = make_store("uk10k/uk10k_chr1_1mb")
    scan = colflow.assoc(path, dataset("uk10k/test.phen"))
    table = next(iter(scan.values()))
    options = dict(p1=1e-6, p2=1e-3, r2=0.3, kb=200)
    got = colflow.clump(path, table, **options)
    assert len(got) >= 2 and (got["P"] <= 1e-6).all()
    table_file = tmp_path / "scan.tsv"
    table.to_csv(table_file, sep="\t", index=False, na_rep="NA")
    from_file = colflow.clump(path, table_file, **options)
    pd.testing.assert_frame_equal(got, from_file, check_exact=True)
    colflow_cli("clump", path, "--clump", table_file, "--clump-p1", 1e-6, "--clump-p2", 1e-3,
                "--clump-r2", 0.3, "--clump-kb", 200, "--out", tmp_path / "c")
    expected = read_clumped(tmp_path / "c.clumped")
    assert got["SNP"].tolist() == expected["SNP"].tolist()
    for name in ("BP", "TOTAL", "NSIG", "S05", "S01", "S001", "S0001"):
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
    np.testing.assert_allclose(got["P"], expected["P"], rtol=5e-3)
    assert [",".join(m) or "NONE" for m in got["SP2"]] == expected["SP2"].tolist()
    # Two tables: the second's entries carry F = 2.
    both = colflow.clump(path, [table, table_file], **options)
    assert any(m.endswith("(2)") for members in both["SP2"] for m in members)


def test_clump_refuses_bad_options_and_tables(make_store):
    path = make_store("uk10k/uk10k_chr1_1mb")
    good = pd.DataFrame({"ID": ["a"], "P": [0.5]})
    with pytest.raises(colflow.InvalidArgumentError, match="--clump-r2"):
        colflow.clump(path, good, r2=1.5)
    with pytest.raises(ValueError, match="P-value column"):
        colflow.clump(path, pd.DataFrame({"ID": ["a"], "PVAL": [0.5]}))
    with pytest.raises(ValueError, match="outside"):
        colflow.clump(path, pd.DataFrame({"ID": ["a"], "P": [1.5]}))
