"""Pictures of samples and of LD: principal-component pairs coloured by a sample column, and
the heat map of an LD matrix over a region (docs/PYTHON.md, "Pictures")."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._plot_backend import finish, new_figure
from ._plot_tables import read_eigenvectors, read_ld

__all__ = ["ld", "pcs"]


def _samples_table(samples: Any) -> pd.DataFrame:
    # A table of sample attributes: a DataFrame, or a whitespace-separated file with a header
    # (a .psam, a phenotype or population file) keyed by IID.
    if isinstance(samples, pd.DataFrame):
        frame = samples
    else:
        frame = pd.read_csv(samples, sep=r"\s+", dtype=str, keep_default_na=False)
    frame = frame.rename(columns={"#FID": "FID", "#IID": "IID"})
    if "IID" not in frame.columns:
        raise ValueError(f"{samples if not isinstance(samples, pd.DataFrame) else 'samples'}: "
                         "no IID column to match the samples by")
    return frame


def pcs(source: Any, *, color_by: str | None = None, samples: Any = None,
        pairs: Sequence[tuple[int, int]] = ((1, 2), (3, 4)), title: str | None = None,
        out: str | os.PathLike[str] | None = None, height: float = 4.5) -> Any:
    """Principal-component pairs of ``colflow pca``'s PREFIX.eigenvec (or plink2's, or a
    DataFrame with IID PC1 ...) and returns the Figure: one panel per pair (PC numbers, pairs
    beyond the table's PCs left out), coloured by the column ``color_by`` of the table or of
    ``samples`` (a DataFrame or file with IID, matched by IID): a collection per group
    (label: the group) for text, a colour scale for numbers."""
    table = read_eigenvectors(source)
    if samples is not None:
        extra = _samples_table(samples)
        table = table.merge(extra.drop(columns=[c for c in extra.columns if c in table.columns
                                                and c != "IID"]), on="IID", how="left")
    if color_by is not None and color_by not in table.columns:
        raise ValueError(f"color_by: no column {color_by!r} among {', '.join(table.columns)}")
    drawn = [(a, b) for a, b in pairs if f"PC{a}" in table.columns and f"PC{b}" in table.columns]
    if not drawn:
        raise ValueError(f"pcs: none of the pairs {list(pairs)} is in the table")
    fig = new_figure(height * len(drawn) + (1.5 if color_by else 0), height)
    axes = fig.subplots(1, len(drawn), squeeze=False)[0]
    groups = None
    if color_by is not None:
        values = table[color_by]
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            groups = None
            colours = numeric.to_numpy()
        else:
            groups = values.fillna("NA").astype(str).to_numpy()
    for ax, (a, b) in zip(axes, drawn):
        x, y = table[f"PC{a}"].to_numpy(), table[f"PC{b}"].to_numpy()
        if color_by is None:
            ax.scatter(x, y, s=8, linewidths=0, color="#1f4e79")
        elif groups is None:
            points = ax.scatter(x, y, s=8, linewidths=0, c=colours, cmap="viridis")
            fig.colorbar(points, ax=ax, label=color_by)
        else:
            for name in sorted(set(groups)):
                rows = groups == name
                ax.scatter(x[rows], y[rows], s=8, linewidths=0, label=name)
        ax.set_xlabel(f"PC{a}")
        ax.set_ylabel(f"PC{b}")
    if groups is not None:
        axes[-1].legend(title=color_by, fontsize=7, markerscale=2, loc="center left",
                        bbox_to_anchor=(1.0, 0.5))
    return finish(fig, out, title)


def ld(source: Any, *, start: int = 0, count: int | None = 300, ids: Sequence[str] | None = None,
       title: str | None = None, out: str | os.PathLike[str] | None = None,
       size: float = 6) -> Any:
    """The heat map of an LD matrix (an array, ``colflow ld``'s .ldband, its .ld.bin or text
    ``square`` .ld) over ``count`` variants from index ``start`` (a region: the whole matrix
    with ``count=None``) and returns the Figure. r² from 0 to 1, r from -1 to 1 (a matrix with
    a negative entry); NaN (outside a band, constant variants) blank. ``ids`` names the rows
    on the axes when given for the region."""
    matrix = read_ld(source)
    n = matrix.shape[0]
    if not 0 <= start < n:
        raise ValueError(f"ld: start {start} is outside the matrix's {n} variants")
    stop = n if count is None else min(n, start + int(count))
    region = matrix[start:stop, start:stop]
    signed = bool(np.nanmin(region) < 0) if np.isfinite(region).any() else False
    fig = new_figure(size + 1, size)
    ax = fig.add_subplot()
    image = ax.imshow(region, cmap="RdBu_r" if signed else "Reds", vmin=-1 if signed else 0,
                      vmax=1, interpolation="nearest",
                      extent=(start - 0.5, stop - 0.5, stop - 0.5, start - 0.5))
    fig.colorbar(image, ax=ax, label="r" if signed else "r²", shrink=0.8)
    if ids is not None and len(ids) == stop - start and stop - start <= 40:
        ax.set_xticks(range(start, stop), list(ids), rotation=90, fontsize=6)
        ax.set_yticks(range(start, stop), list(ids), fontsize=6)
    else:
        ax.set_xlabel("variant")
        ax.set_ylabel("variant")
    return finish(fig, out, title, ax)
