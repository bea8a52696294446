"""Pictures of bayesr chains: the trace of one chain with its diagnostics, and several chains
of different seeds with their split R-hat (docs/PYTHON.md, "Pictures")."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._diagnostics import effective_sample_size, geweke_z, split_rhat
from ._plot_backend import finish, new_figure
from ._plot_tables import read_trace

__all__ = ["TRACE_COLUMNS", "chain_summary", "rhat", "trace"]

#: The trace columns drawn, one panel each, when present.
TRACE_COLUMNS = ("H2", "SIGMA2_G", "SIGMA2_E", "NONZERO")


def _posterior(frame: pd.DataFrame, burnin: int) -> pd.DataFrame:
    kept = frame[frame["ITER"] > burnin]
    if len(kept) == 0:
        raise ValueError(f"no iteration after the burn-in ({burnin}); the trace ends at "
                         f"iteration {int(frame['ITER'].max())}")
    return kept


def chain_summary(source: Any, burnin: int = 200) -> pd.DataFrame:
    """Per drawn trace column: MEAN, SD, ESS and GEWEKE_Z over the iterations after ``burnin``
    (as ``colflow bayesr`` logs them for H2), indexed by column name."""
    frame = read_trace(source)
    kept = _posterior(frame, burnin)
    rows = {}
    for c in (c for c in TRACE_COLUMNS if c in kept.columns):
        x = kept[c].to_numpy()
        rows[c] = {"MEAN": x.mean(), "SD": x.std(ddof=1) if x.size > 1 else 0.0,
                   "ESS": effective_sample_size(x), "GEWEKE_Z": geweke_z(x)}
    return pd.DataFrame.from_dict(rows, orient="index")


def trace(source: Any, *, burnin: int = 200, title: str | None = None,
          out: str | os.PathLike[str] | None = None, width: float = 9, height: float = 7) -> Any:
    """The trace of a bayesr chain (PREFIX.trace.tsv, its DataFrame or a BayesR result) and
    returns the Figure: a panel per column of TRACE_COLUMNS against ITER, the iterations up to
    ``burnin`` shaded (gid "burn-in"), and each panel's title giving the ESS and Geweke's z of
    the iterations after it (chain_summary)."""
    frame = read_trace(source)
    summary = chain_summary(frame, burnin)
    fig = new_figure(width, height)
    columns = [c for c in TRACE_COLUMNS if c in frame.columns]
    axes = fig.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    iterations = frame["ITER"].to_numpy()
    for ax, c in zip(axes, columns):
        ax.plot(iterations, frame[c].to_numpy(), linewidth=0.6, color="#1f4e79", gid=c)
        ax.axvspan(iterations.min(), min(burnin, iterations.max()), color="#e0e0e0",
                   gid="burn-in")
        s = summary.loc[c]
        ax.set_title(f"{c}: mean {s.MEAN:.4g}, ESS {s.ESS:.0f}, Geweke z {s.GEWEKE_Z:.2f}",
                     fontsize=9, loc="left")
        ax.set_ylabel(c)
    axes[-1].set_xlabel("iteration")
    return finish(fig, out, title)


def rhat(sources: Sequence[Any], *, burnin: int = 200, title: str | None = None,
         out: str | os.PathLike[str] | None = None, width: float = 9,
         height: float = 7) -> Any:
    """Several chains of one model with different seeds (traces as trace() takes them) and
    returns the Figure: per column of TRACE_COLUMNS the chains' iterations after ``burnin``
    overlaid (one line per chain, gid "chain K"), the title giving their split R-hat."""
    frames = [read_trace(s) for s in sources]
    if len(frames) < 2:
        raise ValueError(f"rhat: {len(frames)} chain(s); R-hat compares at least 2")
    kept = [_posterior(f, burnin) for f in frames]
    columns = [c for c in TRACE_COLUMNS if all(c in f.columns for f in kept)]
    fig = new_figure(width, height)
    axes = fig.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for ax, c in zip(axes, columns):
        for k, f in enumerate(kept):
            ax.plot(f["ITER"].to_numpy(), f[c].to_numpy(), linewidth=0.6, alpha=0.8,
                    gid=f"chain {k}")
        value = split_rhat([f[c].to_numpy() for f in kept])
        ax.set_title(f"{c}: split R-hat {value:.3f} over {len(kept)} chains", fontsize=9,
                     loc="left")
        ax.set_ylabel(c)
    axes[-1].set_xlabel("iteration")
    return finish(fig, out, title)
