"""Pictures of an association scan: the Manhattan plot and the QQ plot with the genomic-control
λ (docs/PYTHON.md, "Pictures")."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ._plot_backend import finish, new_figure
from ._plot_tables import CHROMOSOME_NAMES, read_association

__all__ = ["COLOURS", "GENOME_WIDE", "SUGGESTIVE", "genomic_control_lambda", "manhattan",
           "manhattan_positions", "qq", "qq_band"]

#: The conventional thresholds of a genome-wide scan, drawn as horizontal lines.
GENOME_WIDE = 5e-8
SUGGESTIVE = 1e-5
#: The two colours chromosomes alternate between (in chromosome order), and the labels'.
COLOURS = ("#1f4e79", "#7fa7cf")
#: The median of the χ² distribution with one degree of freedom, λ's denominator.
CHI2_1_MEDIAN = 0.45493642311957283


def _chromosome_label(code: int) -> str:
    return CHROMOSOME_NAMES.get(int(code), str(int(code)))


def manhattan_positions(table: pd.DataFrame) -> tuple[np.ndarray, dict[int, tuple[float, float]]]:
    """The x of each row of a read_association() table and each chromosome's span: chromosomes
    side by side in code order (1-22, X, Y, XY, MT), each from its smallest to its largest
    position, a gap of 1 % of the summed spans (at least 1) between them."""
    chrom = table["CHROM"].to_numpy()
    pos = table["POS"].to_numpy(dtype=np.float64)
    codes = np.unique(chrom)
    lows = {c: float(pos[chrom == c].min()) for c in codes}
    highs = {c: float(pos[chrom == c].max()) for c in codes}
    gap = max(1.0, 0.01 * sum(highs[c] - lows[c] for c in codes))
    offsets, spans, start = {}, {}, 0.0
    for c in codes:
        offsets[c] = start - lows[c]
        spans[int(c)] = (start, start + highs[c] - lows[c])
        start += highs[c] - lows[c] + gap
    shift = np.zeros(codes.max() + 1)
    for c in codes:
        shift[c] = offsets[c]
    return pos + shift[chrom], spans


def _thinned(x: np.ndarray, y: np.ndarray, keep_above: float, x_bins: int = 1500,
             y_step: float = 0.05) -> np.ndarray:
    # Indices drawn: every point at or above keep_above (-log10 p), below it the first point of
    # each cell of a grid of x_bins across and y_step high, finer than the picture's pixels.
    low = np.flatnonzero(y < keep_above)
    span = max(float(np.ptp(x)), 1.0)
    cell = (np.floor((x[low] - x.min()) / span * (x_bins - 1)).astype(np.int64) * 100000
            + np.floor(y[low] / y_step).astype(np.int64))
    _, first = np.unique(cell, return_index=True)
    return np.sort(np.concatenate([low[first], np.flatnonzero(y >= keep_above)]))


def _top_loci(table: pd.DataFrame, threshold: float, window: int, count: int) -> list[int]:
    # Rows of the most significant variants below the threshold, each the best within `window`
    # base pairs on its chromosome of those not yet covered, most significant first.
    candidates = np.flatnonzero(table["P"].to_numpy() < threshold)
    order = candidates[np.argsort(table["P"].to_numpy()[candidates], kind="stable")]
    chrom, pos = table["CHROM"].to_numpy(), table["POS"].to_numpy()
    chosen: list[int] = []
    for i in order:
        if len(chosen) == count:
            break
        if all(chrom[j] != chrom[i] or abs(pos[j] - pos[i]) > window for j in chosen):
            chosen.append(int(i))
    return chosen


def _minus_log10(p: np.ndarray) -> np.ndarray:
    # p = 0 (underflow in the scan) is drawn at the smallest positive double's height.
    return -np.log10(np.maximum(p, np.finfo(np.float64).tiny))


def manhattan(source: Any, *, title: str | None = None, genome_wide: float = GENOME_WIDE,
              suggestive: float = SUGGESTIVE, label_top: int = 10, label_window: int = 500_000,
              thin: bool = True, out: str | os.PathLike[str] | None = None,
              width: float = 12, height: float = 4.5) -> Any:
    """The Manhattan plot of an association table (a path or a DataFrame: colflow assoc's,
    plink2's .glm.*, regenie's .regenie) and returns the matplotlib Figure.

    One scatter collection per chromosome (label: its name), chromosomes in order 1-22, X, Y,
    XY, MT with alternating colours (COLOURS); x from manhattan_positions(), y = -log10 p.
    Lines at ``genome_wide`` and ``suggestive`` (gid "genome-wide", "suggestive"). The
    ``label_top`` most significant loci under ``genome_wide``, at least ``label_window`` base
    pairs apart, are labelled with their ID. With ``thin``, points less significant than
    ``suggestive`` are drawn one per cell of a grid 1500 cells across and 0.05 (-log10 p)
    high (the first row of each cell), every point at or beyond it; the points are rasterized
    in an SVG or PDF. Written to ``out`` when given (.png, .svg, .pdf).
    """
    table = read_association(source)
    x, spans = manhattan_positions(table)
    y = _minus_log10(table["P"].to_numpy())
    drawn = _thinned(x, y, -np.log10(suggestive)) if thin else np.arange(len(table))
    fig = new_figure(width, height)
    ax = fig.add_subplot()
    chrom = table["CHROM"].to_numpy()
    for k, code in enumerate(sorted(spans)):
        rows = drawn[chrom[drawn] == code]
        ax.scatter(x[rows], y[rows], s=4, color=COLOURS[k % 2], linewidths=0,
                   label=_chromosome_label(code), rasterized=True)
    for level, gid, style in ((genome_wide, "genome-wide", "-"), (suggestive, "suggestive", "--")):
        ax.axhline(-np.log10(level), color="#b03030", linestyle=style, linewidth=0.8, gid=gid)
    for i in _top_loci(table, genome_wide, label_window, label_top):
        ax.annotate(str(table["ID"].iat[i]), (x[i], y[i]), xytext=(3, 3),
                    textcoords="offset points", fontsize=7)
    ax.set_xticks([(a + b) / 2 for a, b in spans.values()],
                  [_chromosome_label(c) for c in spans])
    ax.set_xlim(-0.005 * x.max(), max(x.max() * 1.005, 1))
    ax.set_ylim(0, max(float(y.max()), -np.log10(genome_wide)) * 1.08)
    ax.set_xlabel("chromosome")
    ax.set_ylabel("-log10 p")
    return finish(fig, out, title, ax)


def genomic_control_lambda(p: Any) -> float:
    """λ: the median of the χ²₁ statistics of the p-values (NaN left out) over CHI2_1_MEDIAN.
    The statistic falls as p rises, so the median statistic is that of the median p (the mean
    of the two middle ones' statistics for an even count): two inversions, not a million."""
    values = np.asarray(p, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise ValueError("genomic_control_lambda: no p-values")
    n = values.size
    return _median_lambda(np.partition(values, [(n - 1) // 2, n // 2]))


def _median_lambda(p: np.ndarray) -> float:
    # λ of p-values whose two middle ranks are in place (sorted, or partitioned there).
    from scipy.special import chdtri

    n = p.size
    return float(np.mean(chdtri(1, p[[(n - 1) // 2, n // 2]])) / CHI2_1_MEDIAN)


def qq_band(n: int, ranks: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` band of the k-th smallest of n uniform p-values (k = ``ranks``, 1-based):
    the quantiles (1 ∓ level)/2 of Beta(k, n + 1 - k), as -log10 (upper, lower)."""
    from scipy.special import betaincinv

    k = np.asarray(ranks, dtype=np.float64)
    tail = (1 - level) / 2
    return (-np.log10(betaincinv(k, n + 1 - k, tail)),
            -np.log10(betaincinv(k, n + 1 - k, 1 - tail)))


def _qq_thinned(expected: np.ndarray, observed: np.ndarray) -> np.ndarray:
    # Indices drawn: every point whose expected -log10 p is 2 or more, below it the first point
    # of each 0.01 x 0.01 cell. Both coordinates fall as the rank rises (p is sorted), so the
    # points of a cell are consecutive: the first of each run, no sort.
    high = np.count_nonzero(expected >= 2)  # the first ranks
    cell = np.floor(expected[high:] / 0.01) * 1e6 + np.floor(observed[high:] / 0.01)
    changes = np.flatnonzero(cell[1:] != cell[:-1]) + 1
    return np.concatenate([np.arange(high + (high < expected.size)), high + changes])


def qq(source: Any, *, title: str | None = None, level: float = 0.95, thin: bool = True,
       out: str | os.PathLike[str] | None = None, width: float = 5, height: float = 5) -> Any:
    """The QQ plot of an association table's p-values (as manhattan() reads them) and returns
    the Figure: observed -log10 p against the expected -log10(k / (n + 1)) of the k-th
    smallest, the ``level`` band from the Beta order statistics (qq_band; lines with gid
    "band-upper" and "band-lower", filled between), the diagonal, and λ
    (genomic_control_lambda) printed in the corner. With ``thin``, points whose expected
    -log10 p is under 2 are drawn one per 0.01 x 0.01 cell."""
    table = read_association(source)
    p = np.sort(table["P"].to_numpy())
    n = p.size
    expected = -np.log10(np.arange(1, n + 1) / (n + 1))
    observed = _minus_log10(p)
    drawn = _qq_thinned(expected, observed) if thin else np.arange(n)
    # The band at up to 400 ranks spaced evenly in -log10, the smallest p's rank included.
    ranks = np.unique(np.round(np.logspace(0, np.log10(n), 400)).astype(np.int64))
    upper, lower = qq_band(n, ranks, level)
    band_x = -np.log10(ranks / (n + 1))
    fig = new_figure(width, height)
    ax = fig.add_subplot()
    ax.fill_between(band_x, lower, upper, color="#d9d9d9", linewidth=0)
    ax.plot(band_x, upper, color="#a0a0a0", linewidth=0.6, gid="band-upper")
    ax.plot(band_x, lower, color="#a0a0a0", linewidth=0.6, gid="band-lower")
    top = float(expected[0])
    ax.plot([0, top], [0, top], color="#b03030", linewidth=0.8, gid="diagonal")
    ax.scatter(expected[drawn], observed[drawn], s=5, color=COLOURS[0], linewidths=0,
               rasterized=True, label="p-values")
    lam = _median_lambda(p)
    ax.text(0.04, 0.94, f"λ = {lam:.4f}", transform=ax.transAxes, gid="lambda")
    ax.set_xlabel("expected -log10 p")
    ax.set_ylabel("observed -log10 p")
    return finish(fig, out, title, ax)
