"""Store.stream: blocks decoded ahead by the engine, equal to Store.read, bounded, stoppable."""

from __future__ import annotations

import gc
import os
import threading
import time

import numpy as np
import pytest

import colflow
from test_store import damaged_copy

SELECTIONS = [
    (None, None),
    (np.s_[::-3], None),
    ([5, 0, 0, 99, -1], np.s_[3:40]),
    (np.s_[10:20], [2, 7, 2]),
    ("every third", np.s_[-5:]),  # a boolean mask of the columns
    ([], np.s_[:2]),
    (np.s_[::7], []),
]


def concatenated(stream, rows: int) -> np.ndarray:
    blocks = list(stream)
    if not blocks:
        return np.empty((rows, 0))
    return np.concatenate(blocks, axis=1)


@pytest.mark.parametrize("name", ["bed-reader/some_missing", "hapmap3/HapMap3"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("standardize", [False, True])
@pytest.mark.parametrize("block_columns", [1, 7, 64])
@pytest.mark.parametrize("selection", range(len(SELECTIONS)))
def test_blocks_equal_the_read(name, dtype, standardize, block_columns, selection, make_store):
    cols, rows = SELECTIONS[selection]
    with colflow.open(make_store(name)) as store:
        if isinstance(cols, str):
            cols = np.arange(store.shape[1]) % 3 == 0
        expected = store.read(np.s_[rows, cols], dtype=dtype, standardize=standardize)
        stream = store.stream(
            cols, block_columns=block_columns, dtype=dtype, standardize=standardize, rows=rows
        )
        blocks = list(stream)
    widths = [b.shape[1] for b in blocks]
    assert all(w == block_columns for w in widths[:-1])
    assert sum(widths) == expected.shape[1]
    for b in blocks:
        assert b.dtype == dtype and b.flags.f_contiguous and b.shape[0] == expected.shape[0]
    got = np.concatenate(blocks, axis=1) if blocks else np.empty(expected.shape, dtype)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("options", [{}, {"dtype": "f32"}, {"standardize": False}])
@pytest.mark.parametrize("standardize", [False, True])
def test_float_stores(options, standardize, make_store):
    path = make_store("bed-reader/plink_sim_10s_100v_10pmiss", codec="zstd", **options)
    with colflow.open(path) as store:
        for rows in (None, np.s_[1::2]):
            for dtype in (np.float32, np.float64):
                expected = store.read(np.s_[rows, ::-1], dtype=dtype, standardize=standardize)
                got = concatenated(
                    store.stream(np.s_[::-1], 9, dtype, standardize, rows), expected.shape[0]
                )
                np.testing.assert_array_equal(got, expected)


def test_early_break_and_consumer_error_stop_the_stream(make_store):
    with colflow.open(make_store("uk10k/uk10k_chr1_1mb")) as store:
        threads = threading.active_count()
        for _ in range(20):
            for block in store.stream(block_columns=4):
                break
        with pytest.raises(RuntimeError, match="consumer"):
            for block in store.stream(block_columns=4):
                raise RuntimeError("consumer")
        stream = store.stream(block_columns=4)
        first = next(stream)
        stream.close()
        assert list(stream) == []  # a closed stream ends at once
        with store.stream(block_columns=4) as s:
            next(s)
        del block, first, s, stream
        gc.collect()
        # Every producer thread has been joined.
        assert threading.active_count() == threads


def test_memory_is_bounded_by_prefetch(make_store):
    with colflow.open(make_store("uk10k/uk10k_chr1_1mb")) as store:
        m = store.shape[1]
        stream = store.stream(block_columns=2, prefetch=3)
        got = 0
        for block in stream:
            if got < 5:
                time.sleep(0.05)  # a slow consumer: the engine runs ahead and must wait
            got += block.shape[1]
        memory = stream.memory()
    assert got == m
    assert memory["prefetch"] == 3
    assert memory["peak_queued"] == 3  # reached, never passed
    assert memory["blocks_made"] == (m + 1) // 2
    assert 1 <= memory["peak_buffers_in_use"] <= memory["in_flight"]


def test_decoding_overlaps_python_work(make_store):
    # While Python holds a block (GIL released in C++ waits), the next ones are decoded.
    with colflow.open(make_store("hapmap3/HapMap3")) as store:
        stream = store.stream(block_columns=8, prefetch=4)
        next(stream)
        time.sleep(0.2)
        assert stream.memory()["peak_queued"] == 4
        stream.close()


def test_arguments(make_store):
    with colflow.open(make_store("bed-reader/small")) as store:
        with pytest.raises(ValueError, match="dtype"):
            store.stream(dtype=np.int8)
        with pytest.raises(ValueError, match="block_columns"):
            store.stream(block_columns=0)
        with pytest.raises(ValueError, match="prefetch"):
            store.stream(prefetch=0)
        with pytest.raises(TypeError):
            store.stream(block_columns=2.5)
        with pytest.raises(IndexError):
            store.stream([0, 99])
        with pytest.raises(IndexError):
            store.stream(rows=[-100])
        stream = store.stream()
    # The stream keeps the store it reads alive after close().
    assert np.concatenate(list(stream), axis=1).shape == (3, 4)


def test_damaged_store_raises_from_the_iterator(make_store, store_dir):
    path = damaged_copy(
        make_store("bed-reader/some_missing", codec="genotype-zstd"), store_dir / "corrupt-s.cf"
    )
    data = os.path.join(path, "columns.dat")
    with open(data, "r+b") as f:
        body = bytearray(f.read())
        for i in range(len(body) // 2, len(body), 5):
            body[i] ^= 0x5A
        f.seek(0)
        f.write(body)
    with colflow.open(path) as store:
        stream = store.stream(block_columns=5)
        assert next(stream).shape == (store.shape[0], 5)  # the first columns are intact
        with pytest.raises(colflow.FormatError, match=r"column \d+: zstd frame: ") as e:
            for _ in stream:
                pass
        assert e.value.kind == "corrupt_frame"
        assert list(stream) == []
