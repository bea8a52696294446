"""Progress reports of the long calls: what the extension calls while the library works.

The extension calls a reporter with ``(label, done, total, unit)`` on the calling thread, from
its wait loop (docs/PYTHON.md, "Ctrl-C and progress"); an exception the reporter raises stops
the call as Ctrl-C does and is raised by it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Optional


class ProgressBars:
    """A tqdm bar per pass or loop a call reports: a new label closes the bar and opens another."""

    def __init__(self, tqdm: Any, name: str) -> None:
        self._tqdm, self._name = tqdm, name
        self._bar: Any = None
        self._label: str | None = None

    def __call__(self, label: str, done: int, total: int, unit: str) -> None:
        if self._bar is None or label != self._label:
            self.close()
            self._label = label
            self._bar = self._tqdm(total=total, desc=f"colflow {self._name}: {label}",
                                   unit=unit.rstrip("s"), leave=False)
        if self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextlib.contextmanager
def reporter(progress: Any, name: str) -> Iterator[Optional[Callable[..., None]]]:
    """What the extension reports to during the ``with`` block: nothing (None) for False or
    None, the caller's function, or tqdm bars for True (nothing without tqdm), closed on exit.
    Raises TypeError for anything else."""
    if progress is None or progress is False:
        yield None
    elif progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            yield None
            return
        bars = ProgressBars(tqdm, name)
        try:
            yield bars
        finally:
            bars.close()
    elif callable(progress):
        yield progress
    else:
        raise TypeError(f"progress is True, False or a function, not {progress!r}")
