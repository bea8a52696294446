"""Fixtures of the package's tests: the shared PLINK datasets (../shared/data beside the
repository, as for the C++ tests) converted once per session into stores."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# The references' linear algebra on one thread: OpenBLAS's threads spin against the colflow
# processes the tests start (a 300 x 300 solve took 0.1 s instead of 1 ms on 2 busy cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pandas as pd
import pytest

import colflow

REPOSITORY = Path(__file__).resolve().parents[2]

# ../shared/data beside the repository (python/tests -> repository -> its parent), or
# COLFLOW_SHARED_DATA.
DATA_DIR = Path(
    os.environ.get("COLFLOW_SHARED_DATA", REPOSITORY.parent / "shared" / "data")
)

# The datasets of tests/support/shared_data.cpp all_datasets(): PLINK prefixes under DATA_DIR.
DATASETS = [
    "bed-reader/small",
    "bed-reader/some_missing",
    "bed-reader/plink_sim_10s_100v_10pmiss",
    "bed-reader/toydata.5chrom",
    "bed-reader/sparse",
    "hapmap-yri/plinkhapmap",
    "hapmap3/HapMap3",
    "switchgrass/example",
    "uk10k/uk10k_chr1_1mb",
]


def dataset(name: str) -> str:
    """The PLINK prefix of a shared dataset; skips the test when the data is absent."""
    if not (DATA_DIR / "bed-reader").is_dir():
        pytest.skip(f"the shared test data is not at {DATA_DIR} (set COLFLOW_SHARED_DATA)")
    return str(DATA_DIR / name)


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stores")


@pytest.fixture(scope="session")
def make_store(store_dir: Path):
    """make_store(name, **preprocess options) -> the path of the dataset's store, converted once
    per session and set of options (the command's default: the genotype codec)."""
    made: dict[tuple, str] = {}

    def make(name: str, **options) -> str:
        key = (name, tuple(sorted(options.items())))
        if key not in made:
            out = store_dir / f"{name.replace('/', '_')}-{len(made)}.cf"
            colflow.preprocess(dataset(name), out, **options)
            made[key] = str(out)
        return made[key]

    return make


# Where the `colflow` command is: COLFLOW_CLI (scripts/test.sh sets it to its preset's), else
# the build of scripts/python-test.sh (build/release), else another preset's.
CLI_CANDIDATES = [
    REPOSITORY / "build" / preset / "cli" / "colflow" for preset in ("release", "ci", "dev")
]


@pytest.fixture(scope="session")
def colflow_binary() -> str:
    """The path of the `colflow` command; skips the test when it is not built."""
    given = os.environ.get("COLFLOW_CLI")
    found = [Path(given)] if given else [c for c in CLI_CANDIDATES if c.is_file()]
    if not found:
        pytest.skip("the colflow command is not built (scripts/python-test.sh builds it; "
                    "or set COLFLOW_CLI)")
    return str(found[0])


@pytest.fixture(scope="session")
def colflow_cli(colflow_binary):
    """colflow_cli(*args) runs the `colflow` command with `--quiet --digits 17` after the
    arguments (every number printed to round-trip) and returns its stderr; fails on an error."""
    binary = colflow_binary

    def run(*args: object) -> str:
        done = subprocess.run([binary, *map(str, args), "--quiet", "--digits", "17"],
                              capture_output=True, text=True)
        assert done.returncode == 0, f"colflow {' '.join(map(str, args))}: {done.stderr}"
        return done.stderr

    return run


TEXT_FIELDS = ("#CHR", "ID", "A1", "A2", "#FID", "IID")


def read_tsv(path) -> pd.DataFrame:
    """A table the command wrote: NA as NaN, "." and the ID fields as text."""
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=["NA"],
                       dtype=dict.fromkeys(TEXT_FIELDS, str))


def assert_same_table(got: pd.DataFrame, file) -> None:
    """The command's table, column for column: the same names, the same text, and the same
    numbers (17 significant digits round-trip binary64 exactly)."""
    expected = read_tsv(file)
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for name in expected.columns:
        if expected[name].dtype == object:
            assert (got[name].to_numpy() == expected[name].to_numpy()).all(), name
        else:
            np.testing.assert_array_equal(got[name].to_numpy(), expected[name].to_numpy(),
                                          err_msg=name)


# ---- The whole-genome regression suites (test_wgr*.py): toydata.5chrom, its traits and
# covariates, and a case/control trait with LOCO offsets, made once per module.

DATA = "bed-reader/toydata.5chrom"  # 500 samples, 10,000 variants on chromosomes 1-5


def write_loco(path, keys, values) -> None:
    """A .loco file: FID_IID header, then chromosomes 1-23 (values: 23 x samples)."""
    lines = [" ".join(["FID_IID", *keys])]
    lines += [" ".join([str(c + 1), *(f"{v:.17g}" for v in values[c])]) for c in range(23)]
    Path(path).write_text("\n".join(lines) + "\n")


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
