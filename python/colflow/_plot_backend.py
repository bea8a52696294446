"""matplotlib for ``colflow.plot``, imported only when a picture is drawn: the package and its
diagnostics work without it (``pip install ./python[plot]`` adds it)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["finish", "new_figure", "save"]


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "colflow.plot draws with matplotlib, which is not installed: pip install "
            "matplotlib (or the package's extra, pip install './python[plot]')") from e
    return Figure


def new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure of that size in inches, not attached to pyplot: no window, no global
    state, safe to make from any thread."""
    return _figure_class()(figsize=(width, height), layout="constrained")


def save(figure: Any, out: str | os.PathLike[str] | None) -> None:
    """Writes the figure to ``out`` when given, in the format of its suffix (.png, .svg, .pdf),
    under a temporary name renamed when complete (docs/DESIGN.md §3)."""
    if out is None:
        return
    path = os.fspath(out)
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ValueError(f"{path}: the picture's format comes from the suffix: .png, .svg or "
                         ".pdf")
    staged = f"{path}.tmp-{os.getpid()}"
    try:
        figure.savefig(staged, format=suffix, dpi=120)
        os.replace(staged, path)
    finally:
        if os.path.exists(staged):
            os.remove(staged)


def finish(figure: Any, out: str | os.PathLike[str] | None, title: str | None = None,
           axes: Any = None) -> Any:
    """The ending of every picture: the title over ``axes`` when given (a picture of one
    panel), else over the whole figure; the figure written to ``out`` (save); the figure."""
    if title:
        if axes is not None:
            axes.set_title(title)
        else:
            figure.suptitle(title)
    save(figure, out)
    return figure
