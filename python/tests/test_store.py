"""Stores as objects: shape, samples and columns against the .fam/.bim and bed-reader, info()
against `colflow info --json`'s keys, closing, and the exceptions of missing, malformed and
damaged inputs and stores."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from bed_reader import open_bed
from conftest import DATASETS, dataset

import colflow

# How the importers store chromosome codes (docs/DESIGN.md §2, as PLINK 2 writes them).
PLINK2_CHROMOSOMES = {"23": "X", "24": "Y", "25": "XY", "26": "MT", "M": "MT"}


def fields(path: str) -> list[list[str]]:
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


@pytest.mark.parametrize("name", DATASETS)
def test_samples_and_columns_are_the_fam_and_bim(name, make_store):
    prefix = dataset(name)
    with colflow.open(make_store(name)) as store:
        fam, bim = fields(prefix + ".fam"), fields(prefix + ".bim")
        assert store.shape == (len(fam), len(bim))
        samples, columns = store.samples, store.columns
        assert list(samples.columns) == ["fid", "iid", "father", "mother", "sex", "phenotype"]
        assert list(columns.columns) == ["chrom", "id", "cm", "pos", "a1", "a2"]
        assert samples.values.tolist() == fam
        expected = [[PLINK2_CHROMOSOMES.get(b[0], b[0])] + b[1:] for b in bim]
        assert columns.values.tolist() == expected
        bed = open_bed(prefix + ".bed")
        np.testing.assert_array_equal(samples.iid.to_numpy(), bed.iid)
        np.testing.assert_array_equal(columns.id.to_numpy(), bed.sid)
        np.testing.assert_array_equal(columns.a1.to_numpy(), bed.allele_1)
        np.testing.assert_array_equal(columns.pos.astype(int).to_numpy(), bed.bp_position)


def test_info_has_the_keys_and_values_of_the_command(make_store):
    path = make_store("bed-reader/some_missing")
    with colflow.open(path) as store:
        info = store.info()
    # The keys `colflow info --json` prints, in its order (cli/cmd_info.cpp).
    assert list(info) == [
        "path", "format_version", "store_id", "rows", "columns", "value_type", "codecs",
        "data_bytes", "index_bytes", "decoded_bytes", "float64_bytes", "compression_ratio",
        "ratio_vs_float64", "source",
    ]  # fmt: skip
    assert info["path"] == path
    assert (info["rows"], info["columns"]) == (100, 100)
    assert info["value_type"] == "genotype"
    assert info["codecs"] == {"none": 100}
    assert info["decoded_bytes"] == 100 * 25  # ceil(100 / 4) bytes of codes per column
    assert info["float64_bytes"] == 100 * 100 * 8
    assert info["data_bytes"] <= os.path.getsize(os.path.join(path, "columns.dat"))
    assert info["compression_ratio"] == pytest.approx(info["decoded_bytes"] / info["data_bytes"])
    assert len(info["store_id"]) == 32
    assert info["source"].startswith("PLINK .bed ")


def test_context_manager_and_close(make_store):
    path = make_store("bed-reader/small")
    with colflow.open(path) as store:
        assert not store.closed
        assert repr(store).endswith(": 3 x 4 genotype>")
    assert store.closed
    assert "closed" in repr(store)
    for use in (store.read, store.info, lambda: store.shape):
        with pytest.raises(ValueError, match="closed"):
            use()
    store.close()  # closing twice is harmless


def test_preprocess_options_and_result(store_dir):
    out = store_dir / "options.cf"
    result = colflow.preprocess(dataset("bed-reader/small"), out, codec="genotype-zstd")
    assert (result["rows"], result["columns"]) == (3, 4)
    with colflow.open(out) as store:
        assert store.info()["codecs"] == {"zstd": 4}
    with pytest.raises(colflow.AlreadyExistsError, match="already exists"):
        colflow.preprocess(dataset("bed-reader/small"), out)
    colflow.preprocess(dataset("bed-reader/small") + ".bed", out, force=True)
    with pytest.raises(ValueError, match="unknown codec"):
        colflow.preprocess(dataset("bed-reader/small"), out, codec="brotli", force=True)
    with pytest.raises(colflow.InvalidArgumentError):
        colflow.preprocess(dataset("bed-reader/small"), out, codec="zstd", level=99, force=True)


# -- missing and malformed inputs -------------------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("badfile", "not a PLINK .bed file"),
        ("small_too_short", "expected 7 bytes for 3 samples x 4 variants, found 6"),
        ("smallmodebad", "unknown mode byte"),
        ("empty", "empty.bed"),
    ],
)
def test_malformed_plink_input_is_a_format_error(name, message, store_dir):
    with pytest.raises(colflow.FormatError, match=message) as e:
        colflow.preprocess(dataset("bed-reader/" + name), store_dir / "never.cf")
    assert e.value.kind == "bad_input"
    assert not (store_dir / "never.cf").exists()


def test_missing_input_and_store_are_not_found(store_dir):
    with pytest.raises(colflow.NotFoundError, match="missing .bed file") as e:
        colflow.preprocess(str(store_dir / "nothing"), store_dir / "never.cf")
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(colflow.NotFoundError, match="no store at") as e:
        colflow.open(store_dir / "nothing.cf")
    assert e.value.kind == "not_found"


def damaged_copy(src: str, dst) -> str:
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return str(dst)


def test_truncated_data_file_is_refused_at_open(make_store, store_dir):
    path = damaged_copy(make_store("bed-reader/some_missing"), store_dir / "truncated.cf")
    data = os.path.join(path, "columns.dat")
    os.truncate(data, os.path.getsize(data) - 10)
    with pytest.raises(colflow.FormatError) as e:
        colflow.open(path)
    assert e.value.kind == "corrupt_index"
    # The library's message: the entry, what is wrong and the file.
    assert str(e.value).startswith("corrupt index: entry 99: ")
    assert str(e.value).endswith("(" + os.path.join(path, "columns.idx") + ")")
    assert isinstance(e.value, colflow.Error)


def test_corrupt_frame_fails_the_read_naming_the_column(make_store, store_dir):
    path = damaged_copy(
        make_store("bed-reader/some_missing", codec="genotype-zstd"), store_dir / "corrupt.cf"
    )
    data = os.path.join(path, "columns.dat")
    with open(data, "r+b") as f:
        body = bytearray(f.read())
        for i in range(len(body) // 2, len(body), 5):  # the frames of the later columns
            body[i] ^= 0x5A
        f.seek(0)
        f.write(body)
    with colflow.open(path) as store:
        store.read(np.s_[:, :5])  # the first columns are intact
        with pytest.raises(colflow.FormatError, match=r"^column \d+: zstd frame: ") as e:
            store.read(dtype=np.float64)
        assert e.value.kind == "corrupt_frame"
        assert str(e.value).endswith("(" + data + ")")


def test_not_a_store(store_dir):
    path = store_dir / "not_a_store.cf"
    path.mkdir(exist_ok=True)
    (path / "columns.idx").write_bytes(b"this is not an index, it is text" * 4)
    (path / "columns.dat").write_bytes(b"")
    with pytest.raises(colflow.FormatError) as e:
        colflow.open(path)
    assert e.value.kind in {"bad_magic", "corrupt_header"}
