"""Store.read against bed-reader on the .bed the store was made from: the same values, missing
values, index forms, dtypes, orders and errors; standardised reads against numpy's
standardisation of bed-reader's values by docs/DESIGN.md §2."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from bed_reader import open_bed
from conftest import DATASETS, dataset

import colflow

DTYPES = [np.int8, np.float32, np.float64]
ORDERS = ["F", "C"]

# Index forms as functions of the shape (n rows, m columns) and a seeded generator, so that one
# list serves every dataset. Large selections are kept to a few hundred cells per axis where
# the dataset is large, to keep the suite fast.
INDEX_FORMS = {
    "none": lambda n, m, g: None,
    "column int": lambda n, m, g: m // 2,
    "column negative int": lambda n, m, g: -1,
    "column numpy int": lambda n, m, g: np.int64(m - 1),
    "column list with repeats": lambda n, m, g: [0, m - 1, 0, m // 2],
    "column slice": lambda n, m, g: slice(m // 3, m // 3 + 50),
    "column slice step": lambda n, m, g: slice(1, None, max(1, m // 40)),
    "column slice negative step": lambda n, m, g: slice(None, None, -max(1, m // 30)),
    "column slice negative bounds": lambda n, m, g: slice(-7, -1),
    "column slice empty": lambda n, m, g: slice(5, 2),
    "rows and columns ints": lambda n, m, g: np.s_[n - 1, 0],
    "rows negative int": lambda n, m, g: np.s_[-1, : min(m, 40)],
    "row slice step": lambda n, m, g: np.s_[:: max(1, n // 30), : min(m, 20)],
    "row slice reversed": lambda n, m, g: np.s_[::-1, -min(m, 25) :],
    "row slice negative step": lambda n, m, g: np.s_[n - 1 : 0 : -3, 2 : min(m, 30)],
    "row int array": lambda n, m, g: np.s_[g.integers(0, n, 40), g.integers(0, m, 30)],
    "negative int arrays": lambda n, m, g: np.s_[g.integers(-n, n, 25), g.integers(-m, m, 25)],
    "int32 arrays": lambda n, m, g: np.s_[
        g.integers(0, n, 20).astype(np.int32), g.integers(0, m, 20).astype(np.int32)
    ],
    "int lists": lambda n, m, g: np.s_[[n - 1, 0, -2 % n], [-1, 0]],
    "bool arrays": lambda n, m, g: np.s_[g.random(n) < 0.3, g.random(m) < min(1, 30 / m)],
    "bool lists": lambda n, m, g: np.s_[
        [bool(b) for b in g.random(n) < 0.5], [j % 3 == 0 for j in range(m)]
    ],
    "range": lambda n, m, g: np.s_[range(0, n, 2), range(m - 1, max(-1, m - 40), -1)],
    "empty rows": lambda n, m, g: np.s_[[], : min(m, 10)],
    "empty bool columns": lambda n, m, g: np.s_[:, np.zeros(m, dtype=bool)],
    "empty both": lambda n, m, g: np.s_[n:, m:],
    "all rows permuted": lambda n, m, g: np.s_[g.permutation(n), g.integers(0, m, 10)],
    "rows repeated": lambda n, m, g: np.s_[[0, 0, n - 1, 0], : min(m, 8)],
}


@pytest.fixture(scope="module")
def beds():
    opened: dict[str, open_bed] = {}

    def get(name: str) -> open_bed:
        if name not in opened:
            opened[name] = open_bed(dataset(name) + ".bed")
        return opened[name]

    return get


@pytest.fixture(scope="module")
def stores(make_store):
    opened: dict[str, colflow.Store] = {}

    def get(name: str, **options) -> colflow.Store:
        key = name + repr(sorted(options.items()))
        if key not in opened:
            opened[key] = colflow.open(make_store(name, **options))
        return opened[key]

    yield get
    for s in opened.values():
        s.close()


def check_same(actual: np.ndarray, expected: np.ndarray, order: str) -> None:
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert actual.flags["F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"]
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("name", DATASETS)
def test_whole_store_equals_bed_reader(name, beds, stores):
    bed, store = beds(name), stores(name)
    assert store.shape == bed.shape
    for dtype in DTYPES:
        for order in ORDERS:
            check_same(
                store.read(dtype=dtype, order=order), bed.read(dtype=dtype, order=order), order
            )


# index=None is the whole store, compared by test_whole_store_equals_bed_reader.
@pytest.mark.parametrize("form", [f for f in INDEX_FORMS if f != "none"])
@pytest.mark.parametrize("name", DATASETS)
def test_index_forms_equal_bed_reader(name, form, beds, stores):
    bed, store = beds(name), stores(name)
    n, m = store.shape
    index = INDEX_FORMS[form](n, m, np.random.default_rng(len(form) * 1000 + n))
    for dtype in DTYPES:
        for order in ORDERS:
            check_same(
                store.read(index, dtype=dtype, order=order),
                bed.read(index, dtype=dtype, order=order),
                order,
            )


def test_defaults_are_bed_readers(beds, stores):
    store, bed = stores("bed-reader/some_missing"), beds("bed-reader/some_missing")
    check_same(store.read(), bed.read(), "F")
    assert store.read().dtype == np.float32


def test_values_count_a1_with_missing_as_nan(stores):
    # The reference values of the bed-reader files: A1 counted, NaN missing.
    expected = np.load(dataset("bed-reader/some_missing") + ".val.npy")
    assert np.isnan(expected).any()
    store = stores("bed-reader/some_missing")
    np.testing.assert_array_equal(store.read(dtype=np.float64), expected)
    int8 = store.read(dtype=np.int8)
    np.testing.assert_array_equal(int8 == -127, np.isnan(expected))
    np.testing.assert_array_equal(int8[~np.isnan(expected)], expected[~np.isnan(expected)])


# -- standardised reads -----------------------------------------------------------------------


def standardized_reference(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """docs/DESIGN.md §2 with numpy, for `values` (every store row, float64, NaN missing) read
    at `rows`: mean over the observed values of the distinct selected rows, SD over those N
    rows with the missing ones imputed by the mean, z = (x - mean) / SD, missing -> 0, and all
    zeros where the SD is 0."""
    used = values[np.unique(rows)]
    n = used.shape[0]
    observed = ~np.isnan(used)
    count = observed.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.nansum(used, axis=0) / np.maximum(count, 1), np.nan)
        squares = np.nansum((used - mean) ** 2, axis=0)
        sd = np.sqrt(squares / (n - 1)) if n > 1 else np.zeros(used.shape[1])
        z = (values[rows] - mean) / sd
    z[np.isnan(values[rows])] = 0
    z[:, ~(sd > 0)] = 0
    return z


STANDARDIZED_FORMS = [
    "none",
    "column slice step",
    "row slice step",
    "row slice reversed",
    "row int array",
    "negative int arrays",
    "bool arrays",
    "all rows permuted",
    "rows repeated",
    "empty rows",
]


@pytest.mark.parametrize("form", STANDARDIZED_FORMS)
@pytest.mark.parametrize("name", DATASETS)
def test_standardized_reads_follow_design(name, form, beds, stores):
    bed, store = beds(name), stores(name)
    n, m = store.shape
    index = INDEX_FORMS[form](n, m, np.random.default_rng(len(form) * 1000 + n))
    if not isinstance(index, tuple):
        index = (None, index)
    rows = np.arange(n)[slice(None) if index[0] is None else index[0]]
    cols = np.arange(m)[slice(None) if index[1] is None else index[1]]
    if form == "none" and n * m > 1_000_000:
        cols = cols[:: max(1, m // 500)]  # every row, a spread of columns
    values = bed.read(np.s_[:, cols], dtype=np.float64)
    expected = standardized_reference(values, rows)
    for order in ORDERS:
        z64 = store.read(np.s_[rows, cols], dtype=np.float64, standardize=True, order=order)
        np.testing.assert_allclose(z64, expected, rtol=1e-12, atol=1e-12)
        z32 = store.read(np.s_[rows, cols], dtype=np.float32, standardize=True, order=order)
        assert z32.dtype == np.float32
        np.testing.assert_allclose(z32, expected.astype(np.float32), rtol=2e-7, atol=1e-6)
    if rows.size > 1 and np.unique(rows).size == rows.size:
        # zᵀz = N - 1 for every column that is not constant over the selected rows.
        z = store.read(np.s_[rows, cols], dtype=np.float64, standardize=True)
        norms = (z**2).sum(axis=0)
        varying = norms > 0
        np.testing.assert_allclose(norms[varying], rows.size - 1, rtol=1e-9)


def test_standardized_whole_store_is_the_store_decode(stores):
    # Every row in order decodes through the store's own standardised decode (decode_as::
    # standardized), which must agree with the subset path on a permutation of all rows.
    store = stores("hapmap-yri/plinkhapmap")
    n, _ = store.shape
    whole = store.read(dtype=np.float64, standardize=True)
    perm = np.random.default_rng(1).permutation(n)
    np.testing.assert_array_equal(store.read(np.s_[perm, :], dtype=np.float64, standardize=True),
                                  whole[perm])


# -- float stores -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bed-reader/some_missing", "hapmap-yri/plinkhapmap"])
@pytest.mark.parametrize("dtype_option", ["f64", "f32"])
def test_float_stores_of_dosages(name, dtype_option, beds, stores):
    bed = beds(name)
    store = stores(name, codec="zstd", dtype=dtype_option, standardize=False)
    assert store.value_type == {"f64": "float64", "f32": "float32"}[dtype_option]
    n, m = store.shape
    g = np.random.default_rng(3)
    for index in [None, np.s_[::-2, g.integers(0, m, 30)], np.s_[g.random(n) < 0.5, 3:40:3]]:
        for dtype in [np.float32, np.float64]:
            for order in ORDERS:
                check_same(
                    store.read(index, dtype=dtype, order=order),
                    bed.read(index, dtype=dtype, order=order),
                    order,
                )
        if not isinstance(index, tuple):
            index = (slice(None), slice(None))
        rows, cols = np.arange(n)[index[0]], np.arange(m)[index[1]]
        expected = standardized_reference(bed.read(np.s_[:, cols], dtype=np.float64), rows)
        np.testing.assert_allclose(
            store.read(index, dtype=np.float64, standardize=True), expected, rtol=1e-6, atol=1e-6
        )
    with pytest.raises(ValueError, match="int8"):
        store.read(dtype=np.int8)


def test_store_of_standardized_floats(beds, stores):
    bed = beds("bed-reader/some_missing")
    store = stores("bed-reader/some_missing", codec="lz4")
    expected = standardized_reference(bed.read(dtype=np.float64), np.arange(bed.shape[0]))
    # Stored standardised: the stored values are the standardised ones.
    np.testing.assert_allclose(store.read(dtype=np.float64), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        store.read(dtype=np.float64, standardize=True), expected, rtol=1e-12, atol=1e-12
    )


# -- errors -----------------------------------------------------------------------------------

BAD_INDICES = {
    "row past the end": lambda n, m: np.s_[n, :],
    "column past the end": lambda n, m: np.s_[:, m],
    "negative column past the start": lambda n, m: -m - 1,
    "list with one past the end": lambda n, m: [0, m + 5],
    "short bool rows": lambda n, m: np.s_[[True] * (n - 1), :],
    "long bool columns": lambda n, m: np.s_[:, [False] * (m + 1)],
    "float": lambda n, m: 1.5,
    "float list": lambda n, m: np.s_[:, [0.5]],
    "string": lambda n, m: "a",
    "dict": lambda n, m: {1: 2},
    "one-part tuple": lambda n, m: (0,),
}


@pytest.mark.parametrize("bad", list(BAD_INDICES))
def test_bad_indices_raise_as_bed_reader(bad, beds, stores):
    bed, store = beds("bed-reader/small"), stores("bed-reader/small")
    index = BAD_INDICES[bad](*store.shape)
    with pytest.raises(Exception) as theirs:
        bed.read(index)
    with pytest.raises(type(theirs.value)) as ours:
        store.read(index)
    assert type(ours.value) is IndexError


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"dtype": "junk"}, TypeError),
        ({"dtype": np.int16}, ValueError),
        ({"dtype": "float16"}, ValueError),
        ({"order": "A"}, ValueError),
        ({"dtype": np.int8, "standardize": True}, ValueError),
        ({"num_threads": 0}, ValueError),
        ({"index": (0, 1, 2)}, IndexError),
        ({"index": np.array([[0, 1]])}, IndexError),
    ],
)
def test_bad_arguments(kwargs, error, stores):
    with pytest.raises(error):
        stores("bed-reader/small").read(**kwargs)


def test_threads_and_concurrent_reads(stores, beds):
    store, bed = stores("hapmap3/HapMap3"), beds("hapmap3/HapMap3")
    index = np.s_[::3, 1000:3000]
    expected = bed.read(index, dtype=np.float64)
    np.testing.assert_array_equal(store.read(index, dtype=np.float64, num_threads=1), expected)
    results: list[np.ndarray] = [None] * 4

    def work(k: int) -> None:
        results[k] = store.read(index, dtype=np.float64, order="CF"[k % 2])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, expected)
