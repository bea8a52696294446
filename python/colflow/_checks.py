"""Range checks of the numeric arguments passed on to the library.

Each returns the value as the type the extension takes, or raises ValueError naming the
argument and the value (TypeError, or the ValueError of ``int``/``float``, for a value that is
not a number at all).
"""

from __future__ import annotations

import operator
from typing import Any


def thread_count(num_threads: int | None) -> int:
    """The extension's thread count: 0 (every core) for None, else a number at least 1."""
    if num_threads is None:
        return 0
    num_threads = int(num_threads)
    if num_threads < 1:
        raise ValueError(f"num_threads must be at least 1, not {num_threads}")
    return num_threads


def float_in_range(name: str, value: Any, *, low: float, low_open: bool = False,
                   high: float | None = None) -> float:
    """``value`` as a float in [low, high] (low excluded with ``low_open``; no upper bound
    without ``high``)."""
    value = float(value)
    if not (value > low if low_open else value >= low) or (high is not None and value > high):
        bound = f"{'above' if low_open else 'at least'} {low}" + (
            f" and at most {high}" if high is not None else "")
        raise ValueError(f"{name} must be {bound}, not {value}")
    return value


def int_at_least(name: str, value: Any, low: int) -> int:
    """``value`` as an int (anything with ``__index__``, not a float) at least ``low``."""
    value = operator.index(value)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, not {value}")
    return value


def prior_pair(name: str, value: Any) -> tuple[float, float]:
    """A (df, scale) prior: exactly two numbers, as floats."""
    pair = tuple(float(v) for v in value)
    if len(pair) != 2:
        raise ValueError(f"{name} is (df, scale), not {value!r}")
    return pair  # type: ignore[return-value]
