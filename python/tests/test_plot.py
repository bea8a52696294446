"""colflow.plot and the chain diagnostics: the data each picture draws (positions, colours,
λ, band limits, titles), not its pixels; the diagnostics against direct computations of their
definitions and against what they must find on known chains; bad tables; colflow-plot.

The picture tests skip without matplotlib; the diagnostics and table tests run without it.
"""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pandas as pd
import pytest

import colflow
from colflow import plot

needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="matplotlib is not installed (the plot extra)")


def ar1(n: int, rho: float, seed: int, mean: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n)
    x = np.empty(n)
    x[0] = e[0] / np.sqrt(1 - rho * rho)
    for t in range(1, n):
        x[t] = rho * x[t - 1] + e[t]
    return x + mean


# -- direct computations of the documented definitions (loops, no FFT) ----------------------


def direct_tau(x: np.ndarray) -> float:
    n = x.size
    d = x - x.mean()
    gamma0 = d @ d / n
    total, previous = 0.0, np.inf
    for m in range(n // 2):
        pair = sum(d[: n - k] @ d[k:] / n for k in (2 * m, 2 * m + 1)) / gamma0
        if pair <= 0:
            break
        previous = min(pair, previous)
        total += previous
    return max(2 * total - 1, 1 / np.log10(n))


def direct_geweke(x: np.ndarray) -> float:
    n = x.size
    a, b = x[: n // 10], x[n - n // 2:]
    spectral = [np.var(part) * direct_tau(part) / part.size for part in (a, b)]
    return (a.mean() - b.mean()) / np.sqrt(sum(spectral))


def direct_rhat(chains: list[np.ndarray]) -> float:
    length = min(c.size for c in chains)
    n = length // 2
    halves = [h for c in chains for h in (c[:n], c[length - n:length])]  # odd: middle out
    m = len(halves)
    means = np.array([h.mean() for h in halves])
    w = np.mean([np.sum((h - h.mean()) ** 2) / (n - 1) for h in halves])
    b = n * np.sum((means - means.mean()) ** 2) / (m - 1)
    return np.sqrt(((n - 1) / n * w + b / n) / w)


# -- diagnostics ----------------------------------------------------------------------------


def test_ess_of_an_ar1_chain_is_near_its_theoretical_value():
    rho, n = 0.8, 40_000
    x = ar1(n, rho, seed=3)
    expected = n * (1 - rho) / (1 + rho)
    ess = colflow.effective_sample_size(x)
    assert ess == pytest.approx(expected, rel=0.12)
    # Independent draws: about n; the definition computed directly agrees to rounding.
    white = np.random.default_rng(4).normal(size=5000)
    assert colflow.effective_sample_size(white) == pytest.approx(5000, rel=0.15)
    short = x[:3000]
    assert plot.autocorrelation_time(short) == pytest.approx(direct_tau(short), rel=1e-10)


def test_geweke_z_finds_a_drifting_start_and_agrees_with_its_definition():
    stationary = ar1(5000, 0.5, seed=5)
    assert abs(colflow.geweke_z(stationary)) < 3
    drifting = stationary.copy()
    drifting[:500] += 2.0  # the first 10 % far from the rest: not converged
    assert abs(colflow.geweke_z(drifting)) > 5
    for x in (stationary[:2000], drifting[:2000]):
        assert colflow.geweke_z(x) == pytest.approx(direct_geweke(x), rel=1e-9)


def test_split_rhat_separates_mixed_from_unmixed_chains():
    mixed = [ar1(4000, 0.7, seed=s) for s in range(4)]
    assert colflow.split_rhat(mixed) < 1.01
    apart = [ar1(4000, 0.7, seed=s, mean=s) for s in range(4)]  # four different places
    assert colflow.split_rhat(apart) > 1.1
    trending = [np.linspace(0, 5, 4000) + ar1(4000, 0.7, seed=9)]  # one chain, still moving
    assert colflow.split_rhat(trending) > 1.1
    for chains in (mixed, apart, [c[:1001] for c in mixed]):
        assert colflow.split_rhat(chains) == pytest.approx(direct_rhat(chains), rel=1e-12)


def test_diagnostics_of_constant_or_short_chains_are_nan_and_bad_chains_raise():
    assert np.isnan(colflow.effective_sample_size(np.ones(100)))
    assert np.isnan(colflow.effective_sample_size([1.0, 2.0, 3.0]))
    assert np.isnan(colflow.geweke_z(np.arange(19.0)))
    with pytest.raises(ValueError, match="draw 2 is nan"):
        colflow.effective_sample_size([1.0, 2.0, np.nan, 3.0])
    with pytest.raises(ValueError, match="one chain"):
        colflow.geweke_z(np.ones((3, 30)))


# -- tables -----------------------------------------------------------------------------------


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


SCAN = pd.DataFrame({
    "#CHROM": ["2", "1", "X", "1", "2", "X", "1"],
    "POS": [250, 100, 20, 300, 50, 10, 200],
    "ID": ["b2", "a1", "x2", "a3", "b1", "x1", "a2"],
    "P": [0.5, 1e-9, 0.02, 0.3, 1e-3, 0.9, 1e-12],
})


def test_association_tables_of_plink2_and_regenie_are_recognised(tmp_path):
    glm = write(tmp_path / "scan.PHENO1.glm.linear",
                "#CHROM\tPOS\tID\tREF\tALT\tA1\tTEST\tOBS_CT\tBETA\tSE\tT_STAT\tP\tERRCODE\n"
                "1\t10\trs1\tA\tG\tG\tADD\t50\t0.1\t0.1\t1\t0.25\t.\n"
                "1\t10\trs1\tA\tG\tG\tCOVAR1\t50\t0.1\t0.1\t1\t0.5\t.\n"
                "chr2\t20\trs2\tA\tG\tG\tADD\t50\tNA\tNA\tNA\tNA\t.\n"
                "X\t30\trs3\tA\tG\tG\tADD\t50\t0.1\t0.1\t1\t1e-3\t.\n")
    table = plot.read_association(glm)
    assert table["ID"].tolist() == ["rs1", "rs3"]  # COVAR1 and the NA p-value left out
    assert table["CHROM"].tolist() == [1, 23] and table["P"].tolist() == [0.25, 1e-3]
    regenie = write(tmp_path / "step2_Y1.regenie",
                    "CHROM GENPOS ID ALLELE0 ALLELE1 A1FREQ N TEST BETA SE CHISQ LOG10P EXTRA\n"
                    "1 10 rs1 A G 0.1 50 ADD 0.1 0.1 4 2 NA\n"
                    "MT 99 rs9 A G 0.1 50 ADD 0.1 0.1 4 0.5 NA\n")
    table = plot.read_association(regenie)
    assert table["CHROM"].tolist() == [1, 26]
    assert table["P"].to_numpy() == pytest.approx([1e-2, 10 ** -0.5])


@pytest.mark.parametrize("text, message", [
    ("#CHROM\tPOS\tID\tBETA\n1\t10\trs1\t0.5\n",
     "no P column .*; the header has #CHROM, POS, ID, BETA$"),
    ("#CHROM\tID\tP\n1\trs1\t0.5\n", "no position column"),
    ("POS\tID\tP\n10\trs1\t0.5\n", "no chromosome column"),
    ("#CHROM\tPOS\tID\tP\n", "no rows under the header"),
    ("", "empty file"),
    ("#CHROM\tPOS\tID\tP\n1\t10\trs1\t0.5\nChr01K\t20\trs2\t0.5\n",
     "line 3: unknown chromosome code 'Chr01K' in column #CHROM"),
    ("#CHROM\tPOS\tID\tP\n1\t10\trs1\t0.5\n1\t20\trs2\tsmall\n",
     "line 3: column P: 'small' is not a number"),
    ("#CHROM\tPOS\tID\tP\n1\t10\trs1\t1.5\n", "line 2: p-value 1.5 is outside"),
])
def test_bad_association_tables_are_refused_by_column_or_line(tmp_path, text, message):
    path = write(tmp_path / "bad.tsv", text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        plot.read_association(path)
    assert str(path) in str(e.value)


# -- pictures ---------------------------------------------------------------------------------


@needs_matplotlib
def test_manhattan_draws_chromosomes_in_order_with_alternating_colours():
    from matplotlib.colors import to_rgba

    fig = plot.manhattan(SCAN, thin=False)
    ax = fig.axes[0]
    collections = ax.collections
    assert [c.get_label() for c in collections] == ["1", "2", "X"]
    # Spans 200, 200 and 10; a gap of 1 % of their sum (4.1) between chromosomes.
    gap = 4.1
    expected_x = {"1": [0, 100, 200], "2": [200 + gap, 400 + gap],
                  "X": [400 + 2 * gap, 410 + 2 * gap]}
    for k, c in enumerate(collections):
        x, y = np.asarray(c.get_offsets()).T
        order = np.argsort(x)
        assert x[order] == pytest.approx(expected_x[c.get_label()])
        rows = SCAN[SCAN["#CHROM"] == c.get_label()].sort_values("POS")
        assert y[order] == pytest.approx(-np.log10(rows["P"].to_numpy()))
        assert tuple(c.get_facecolors()[0]) == pytest.approx(to_rgba(plot.COLOURS[k % 2]))
    lines = {line.get_gid(): line.get_ydata()[0] for line in ax.lines}
    assert lines["genome-wide"] == pytest.approx(-np.log10(5e-8))
    assert lines["suggestive"] == pytest.approx(5.0)
    # Two hits on chromosome 1, 100 bp apart: one locus within the 500 kb window, two with 50.
    assert [t.get_text() for t in ax.texts] == ["a2"]
    fig = plot.manhattan(SCAN, thin=False, label_window=50)
    assert [t.get_text() for t in fig.axes[0].texts] == ["a2", "a1"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "X"]


@needs_matplotlib
def test_manhattan_thins_only_points_below_the_suggestive_line():
    rng = np.random.default_rng(7)
    n = 200_000
    table = pd.DataFrame({"#CHROM": rng.integers(1, 23, n).astype(str),
                          "POS": rng.integers(1, 10**8, n), "ID": "v",
                          "P": np.concatenate([rng.uniform(size=n - 30),
                                               10 ** -rng.uniform(5.5, 20, 30)])})
    fig = plot.manhattan(table)
    drawn = np.concatenate([np.asarray(c.get_offsets()) for c in fig.axes[0].collections])
    assert len(drawn) < n / 2
    # Every point beyond the suggestive line: the 30 hits and the uniform p-values under 1e-5.
    assert np.sum(drawn[:, 1] > 5) == np.sum(table["P"] < 1e-5) >= 30
    x, _ = plot.manhattan_positions(plot.read_association(table))
    points = set(zip(x.round(6), (-np.log10(table["P"].to_numpy())).round(6)))
    assert all((round(a, 6), round(b, 6)) in points for a, b in drawn[:1000])


@needs_matplotlib
def test_qq_thins_to_the_first_point_of_each_cell_under_expected_2():
    rng = np.random.default_rng(5)
    n = 50_000
    p = np.sort(rng.uniform(size=n) ** 1.1)
    table = pd.DataFrame({"CHR": "1", "BP": np.arange(n) + 1, "SNP": "v", "P": p})
    drawn = np.asarray(plot.qq(table).axes[0].collections[-1].get_offsets())
    expected = -np.log10(np.arange(1, n + 1) / (n + 1))
    observed = -np.log10(p)
    # The rule, point by point: the first (lowest rank) of each 0.01 cell, all from 2 up.
    first: dict = {}
    for k in range(n):
        cell = (np.floor(expected[k] / 0.01), np.floor(observed[k] / 0.01))
        if expected[k] >= 2 or cell not in first:
            first[cell if expected[k] < 2 else k] = k
    kept = sorted(first.values())
    assert len(drawn) == len(kept) < n / 10
    np.testing.assert_array_equal(drawn, np.column_stack([expected[kept], observed[kept]]))


@needs_matplotlib
def test_qq_prints_lambda_and_draws_the_beta_band():
    from scipy.stats import beta, chi2

    rng = np.random.default_rng(11)
    n = 4001
    # χ² statistics inflated by 1.15: λ about 1.15.
    p = chi2.sf(1.15 * chi2.isf(rng.uniform(size=n), 1), 1)
    table = pd.DataFrame({"CHR": "1", "BP": np.arange(n) + 1, "SNP": "v", "P": p})
    direct = np.median(chi2.isf(p, 1)) / chi2.ppf(0.5, 1)
    assert plot.genomic_control_lambda(p) == pytest.approx(direct, rel=1e-10)
    assert direct == pytest.approx(1.15, abs=0.08)
    even = p[:4000]
    assert plot.genomic_control_lambda(even) == pytest.approx(
        np.median(chi2.isf(even, 1)) / chi2.ppf(0.5, 1), rel=1e-10)
    fig = plot.qq(table)
    ax = fig.axes[0]
    (text,) = [t.get_text() for t in ax.texts if t.get_gid() == "lambda"]
    assert text == f"λ = {direct:.4f}"
    lines = {line.get_gid(): line for line in ax.lines}
    x = lines["band-upper"].get_xdata()
    ranks = np.round((n + 1) * 10 ** -x).astype(int)
    assert ranks[0] == 1 and ranks[-1] == n
    assert lines["band-upper"].get_ydata() == pytest.approx(
        -np.log10(beta.ppf(0.025, ranks, n + 1 - ranks)), rel=1e-6)
    assert lines["band-lower"].get_ydata() == pytest.approx(
        -np.log10(beta.ppf(0.975, ranks, n + 1 - ranks)), rel=1e-6)
    (points,) = ax.collections[1:]
    expected, observed = np.asarray(points.get_offsets()).T
    assert observed.max() == pytest.approx(-np.log10(p.min()))
    assert expected.max() == pytest.approx(-np.log10(1 / (n + 1)))


def trace_frame(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    h2 = 0.3 + 0.02 * ar1(n, 0.6, seed) + shift
    return pd.DataFrame({"ITER": np.arange(1, n + 1), "MU": 0.0, "SIGMA2_G": h2 * 1.1,
                         "SIGMA2_E": 1 - h2, "H2": h2, "VAR_G": h2,
                         "NONZERO": np.round(50 + 5 * ar1(n, 0.3, seed + 1)), "PI_0": 0.9})


@needs_matplotlib
def test_trace_shades_the_burn_in_and_titles_each_panel_with_its_diagnostics(tmp_path):
    frame = trace_frame(600, seed=1)
    path = tmp_path / "fit.trace.tsv"
    frame.to_csv(path, sep="\t", index=False)
    fig = plot.trace(path, burnin=100)
    assert len(fig.axes) == 4
    kept = frame[frame.ITER > 100]
    for ax, column in zip(fig.axes, plot.TRACE_COLUMNS):
        (line,) = [line for line in ax.lines if line.get_gid() == column]
        assert line.get_ydata() == pytest.approx(frame[column].to_numpy())
        (span,) = [p for p in ax.patches if p.get_gid() == "burn-in"]
        assert span.get_x() == 1 and span.get_x() + span.get_width() == 100
        x = kept[column].to_numpy()
        ess, z = colflow.effective_sample_size(x), colflow.geweke_z(x)
        assert f"ESS {ess:.0f}, Geweke z {z:.2f}" in ax.get_title(loc="left")
    with pytest.raises(ValueError, match="no iteration after the burn-in"):
        plot.trace(frame, burnin=600)
    with pytest.raises(ValueError, match="no H2 column"):
        plot.trace(frame.drop(columns="H2"))


@needs_matplotlib
def test_rhat_titles_each_panel_with_the_chains_split_rhat():
    chains = [trace_frame(500, seed=s) for s in (1, 2, 3)]
    fig = plot.rhat(chains, burnin=100)
    values = [c[c.ITER > 100]["H2"].to_numpy() for c in chains]
    assert f"split R-hat {direct_rhat(values):.3f}" in fig.axes[0].get_title(loc="left")
    assert len([line for line in fig.axes[0].lines]) == 3
    apart = [trace_frame(500, seed=1), trace_frame(500, seed=2, shift=0.2)]
    title = plot.rhat(apart, burnin=100).axes[0].get_title(loc="left")
    assert float(title.split("R-hat ")[1].split()[0]) > 1.1


@needs_matplotlib
def test_pcs_colours_samples_by_a_column_of_another_table(tmp_path):
    vec = tmp_path / "pca.eigenvec"
    write(vec, "#FID\tIID\tPC1\tPC2\tPC3\n" + "".join(
        f"f{i}\ts{i}\t{i * 0.1}\t{-i * 0.2}\t{i}\n" for i in range(6)))
    pops = write(tmp_path / "pop.txt", "IID POP\n" + "".join(
        f"s{i} {'YRI' if i % 3 == 0 else 'CEU'}\n" for i in range(6)))
    fig = plot.pcs(vec, color_by="POP", samples=pops, pairs=[(1, 2), (3, 4)])
    assert len(fig.axes) == 1  # PC4 absent: its pair is left out
    groups = {c.get_label(): np.asarray(c.get_offsets()) for c in fig.axes[0].collections}
    assert sorted(groups) == ["CEU", "YRI"]
    assert groups["YRI"] == pytest.approx(np.array([[0.0, 0.0], [0.3, -0.6]]))
    with pytest.raises(ValueError, match="no column 'SUPERPOP'"):
        plot.pcs(vec, color_by="SUPERPOP", samples=pops)


def write_band(path, matrix: np.ndarray, ends: list[int]) -> None:
    values = np.concatenate([matrix[i, i:e] for i, e in enumerate(ends)]).astype("<f4")
    path.write_bytes(b"CFLDBAND" + struct.pack("<IIQQII", 1, 4, len(ends), values.size, 1, 0)
                     + np.asarray(ends, "<u8").tobytes() + values.tobytes())


@needs_matplotlib
def test_ld_draws_a_band_as_a_square_with_blanks_outside(tmp_path):
    r2 = np.array([[1.0, 0.5, 0.25, 0.0], [0.5, 1.0, 0.75, 0.5], [0.25, 0.75, 1.0, 0.125],
                   [0.0, 0.5, 0.125, 1.0]])
    band = tmp_path / "region.ldband"
    write_band(band, r2, [3, 4, 4, 4])  # row 0 stops before variant 3
    matrix = plot.read_ld(band)
    expected = r2.copy()
    expected[0, 3] = expected[3, 0] = np.nan
    np.testing.assert_array_equal(matrix, expected)
    fig = plot.ld(band, start=1, count=2)
    image = fig.axes[0].images[0].get_array()
    np.testing.assert_array_equal(np.ma.filled(image, np.nan), expected[1:3, 1:3])
    (band.parent / "cut.ldband").write_bytes(band.read_bytes()[:-4])
    with pytest.raises(ValueError, match="bytes, expected"):
        plot.read_ld(band.parent / "cut.ldband")
    text = write(tmp_path / "r.ld", "1 0.5\n0.5\n")
    with pytest.raises(ValueError, match="line 2: 1 values, expected 2"):
        plot.read_ld(text)


@needs_matplotlib
def test_colflow_plot_command_writes_png_and_svg_and_reports_bad_input(tmp_path, capsys):
    from colflow._plot_cli import main

    scan = tmp_path / "scan.tsv"
    SCAN.to_csv(scan, sep="\t", index=False)
    assert main(["manhattan", str(scan), "--out", str(tmp_path / "m.png")]) == 0
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["qq", str(scan), "--out", str(tmp_path / "q.svg"), "--title", "scan"]) == 0
    assert b"<svg" in (tmp_path / "q.svg").read_bytes()[:400]
    # The functions' options, from the shell too.
    assert main(["qq", str(scan), "--level", "0.9", "--no-thin", "--out",
                 str(tmp_path / "q9.png")]) == 0
    assert main(["manhattan", str(scan), "--label-window", "100000", "--out",
                 str(tmp_path / "m1.png")]) == 0
    bad = write(tmp_path / "bad.tsv", "#CHROM\tPOS\tID\n1\t1\tv\n")
    assert main(["qq", str(bad), "--out", str(tmp_path / "bad.png")]) == 1
    assert "no P column" in capsys.readouterr().err
    assert not (tmp_path / "bad.png").exists()
    with pytest.raises(SystemExit) as e:
        main(["manhattan", "--help"])
    assert e.value.code == 0
