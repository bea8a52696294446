"""SBayesR and the LD store it reads: ``colflow.sbayesr`` equals the ``colflow sbayesr``
command's PREFIX.parRes and PREFIX.snpRes on the same inputs, its checkpoint is the command's
and resumes to the uninterrupted chain, and ``colflow.ld_store`` writes what ``colflow ld
--make-ldm`` writes, which both read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import colflow

VARIANTS = 200  # the first variants of uk10k not constant over its samples


@pytest.fixture(scope="module")
def gwas_inputs(make_store, tmp_path_factory):
    """uk10k's store, the columns used, and summary statistics (.ma) of a phenotype simulated on
    them (10 causal variants), computed here by least squares."""
    store = make_store("uk10k/uk10k_chr1_1mb")
    d = tmp_path_factory.mktemp("sbayesr")
    with colflow.open(store) as s:
        x = s.read(np.s_[:, :5 * VARIANTS], dtype=np.float64)
        columns = s.columns.iloc[:5 * VARIANTS]
    # Common variants only: the LD of a variant constant over the samples is undefined.
    freq = x.mean(axis=0) / 2
    used = np.flatnonzero((freq > 0.02) & (freq < 0.98))[:VARIANTS]
    x, columns, freq = x[:, used], columns.iloc[used], freq[used]
    rng = np.random.default_rng(5)
    y = x[:, ::20] @ rng.normal(0, 0.3, x[:, ::20].shape[1]) + rng.normal(0, 1, len(x))
    xc, yc = x - x.mean(axis=0), y - y.mean()
    sxx = (xc * xc).sum(axis=0)
    b = xc.T @ yc / sxx
    n = len(y)
    se = np.sqrt(((yc @ yc) - b * (xc.T @ yc)) / (n - 2) / sxx)
    ma = d / "trait.ma"
    pd.DataFrame({"SNP": columns.id.to_numpy(), "A1": columns.a1.to_numpy(),
                  "A2": columns.a2.to_numpy(), "freq": freq, "b": b, "se": se, "p": 0.5,
                  "N": n}).to_csv(ma, sep=" ", index=False, float_format="%.17g")
    return {"store": store, "columns": used, "ma": ma, "dir": d}


def read_gctb(path) -> pd.DataFrame:
    """A GCTB table (.parRes, .snpRes): whitespace-separated, names and alleles as text."""
    return pd.read_csv(path, sep=r"\s+", dtype={"Name": str, "Chrom": str, "A1": str, "A2": str})


def assert_same_gctb_table(got: pd.DataFrame, path) -> None:
    """The command's table: the same names and text, the numbers to the decimals it prints
    (6, and 8 for PIP)."""
    expected = read_gctb(path)
    assert list(got.columns) == list(expected.columns)
    assert list(got.index.astype(str)) == list(expected.index.astype(str))
    for name in expected.columns:
        if not pd.api.types.is_numeric_dtype(expected[name]):
            assert (got[name].astype(str).to_numpy() == expected[name].to_numpy()).all(), name
        else:
            np.testing.assert_allclose(got[name].to_numpy(dtype=np.float64),
                                       expected[name].to_numpy(dtype=np.float64), rtol=0,
                                       atol=5.000001e-7, err_msg=name)


def run_command(binary, *args) -> str:
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, f"colflow {' '.join(map(str, args))}: {done.stderr}"
    return done.stderr


def test_ld_store_is_the_commands_and_sbayesr_equals_the_command(gwas_inputs, colflow_binary):
    i = gwas_inputs
    d = i["dir"]
    lds = colflow.ld_store(i["store"], d / "py.ld", kind="full", gctb=True,
                           columns=i["columns"], num_threads=2)
    assert (lds.kind, lds.variants, lds.values) == ("full", VARIANTS, VARIANTS * VARIANTS)
    assert lds.store_bytes > 0 and len(lds.gctb_files) == 2
    # The command's LD store of the same columns, from their IDs.
    extract = d / "used.snplist"
    with colflow.open(i["store"]) as s:
        extract.write_text("\n".join(s.columns.id.iloc[i["columns"]]) + "\n")
    run_command(colflow_binary, "ld", i["store"], "--extract", extract, "--make-ldm", "full",
                "--ldm-gctb", "--quiet", "--out", d / "cli.ld")
    for name in ("ld.ldm.full.bin", "ld.ldm.full.info"):
        assert (d / f"py.{name}").read_bytes() == (d / f"cli.{name}").read_bytes(), name
    with pytest.raises(colflow.AlreadyExistsError):
        colflow.ld_store(i["store"], d / "py.ld", kind="full", columns=i["columns"])

    options = dict(iterations=30, burnin=10, seed=3, checkpoint_every=7)
    fit = colflow.sbayesr(i["ma"], lds.path, checkpoint=d / "py.checkpoint", num_threads=2,
                          **options)
    prefix = d / "cli"
    run_command(colflow_binary, "sbayesr", "--gwas", i["ma"], "--ldm", d / "cli.ld",
                "--iterations", 30, "--burnin", 10, "--seed", 3, "--checkpoint-every", 7,
                "--quiet", "--out", prefix)
    assert_same_gctb_table(fit.parameters, f"{prefix}.parRes")
    assert_same_gctb_table(fit.effects, f"{prefix}.snpRes")
    assert fit.matched == VARIANTS and fit.flipped == 0 and fit.iterations_run == 30
    assert len(fit.h2_trace) == 30
    assert fit.h2 == pytest.approx(fit.h2_trace[10:].mean(), rel=1e-12)
    # The checkpoint is the command's, byte for byte (the same data, settings and chain).
    assert (d / "py.checkpoint").read_bytes() == (d / "cli.checkpoint").read_bytes()

    # Stopped at 12 and resumed to 30: the uninterrupted chain; GCTB's files give it too.
    colflow.sbayesr(i["ma"], lds.path, checkpoint=d / "part.checkpoint",
                    **{**options, "iterations": 12})
    resumed = colflow.sbayesr(i["ma"], lds.path, checkpoint=d / "part.checkpoint", resume=True,
                              **options)
    assert resumed.resumed_from == 12 and resumed.iterations_run == 18
    pd.testing.assert_frame_equal(resumed.parameters, fit.parameters)
    pd.testing.assert_frame_equal(resumed.effects, fit.effects)
    gctb = colflow.sbayesr(i["ma"], d / "py.ld.ldm.full", **options)
    pd.testing.assert_frame_equal(gctb.effects, fit.effects)

    # Another seed's run refuses the checkpoint, naming it.
    with pytest.raises(colflow.InvalidArgumentError, match="py.checkpoint: the checkpoint "
                       "belongs to another run"):
        colflow.sbayesr(i["ma"], lds.path, checkpoint=d / "py.checkpoint", resume=True,
                        **{**options, "seed": 4})
    with pytest.raises(ValueError, match="resume=True needs the checkpoint"):
        colflow.sbayesr(i["ma"], lds.path, resume=True, **options)


def test_ld_store_refuses_bad_options(gwas_inputs, tmp_path):
    i = gwas_inputs
    with pytest.raises(ValueError, match="kind must be"):
        colflow.ld_store(i["store"], tmp_path / "x", kind="square", columns=i["columns"])
    with pytest.raises(ValueError, match="apply to kind='sparse'"):
        colflow.ld_store(i["store"], tmp_path / "x", kind="full", chisq=5, columns=i["columns"])
    sparse = colflow.ld_store(i["store"], tmp_path / "s", kind="sparse", chisq=5,
                              columns=i["columns"])
    assert sparse.variants == VARIANTS and sparse.values < VARIANTS * VARIANTS
    assert not Path(tmp_path / "x").exists()
    with pytest.raises(colflow.InvalidArgumentError, match="--ldm-bits"):
        colflow.ld_store(i["store"], tmp_path / "x", value_bits=8, columns=i["columns"])
    with pytest.raises(colflow.InvalidArgumentError, match="--shuffle: --ldm-bits 16"):
        colflow.ld_store(i["store"], tmp_path / "x", value_bits=16, shuffle=True,
                         columns=i["columns"])
    assert not Path(tmp_path / "x").exists()


def test_sixteen_bit_ld_store_is_the_commands_and_its_values_are_on_the_grid(
        gwas_inputs, colflow_binary):
    i = gwas_inputs
    d = i["dir"]
    exact = colflow.ld_store(i["store"], d / "exact.ld", columns=i["columns"])
    half = colflow.ld_store(i["store"], d / "half.ld", value_bits=16, columns=i["columns"])
    assert half.store_bytes < exact.store_bytes * 0.7
    extract = d / "used16.snplist"
    with colflow.open(i["store"]) as s:
        extract.write_text("\n".join(s.columns.id.iloc[i["columns"]]) + "\n")
    run_command(colflow_binary, "ld", i["store"], "--extract", extract, "--make-ldm", "full",
                "--ldm-bits", 16, "--quiet", "--out", d / "half-cli.ld")
    # The same values as the command's, each r of the float32 store within half a step of
    # 2^-14 (its own float32 rounding aside), and on the grid.
    with colflow.open(d / "half.ld") as h, colflow.open(d / "half-cli.ld") as c, \
            colflow.open(d / "exact.ld") as e:
        assert h.info()["format_version"] == "1.4" and e.info()["format_version"] == "1.3"
        assert h.info()["codecs"] == {"fixed16-zstd": VARIANTS}
        hv, cv, ev = h.read(), c.read(), e.read()
    np.testing.assert_array_equal(hv, cv)
    assert np.abs(hv - ev).max() <= 0.5 / 16384 + 1e-7
    np.testing.assert_array_equal(hv * 16384, np.rint(hv * 16384))
