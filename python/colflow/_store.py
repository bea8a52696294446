"""Open stores and their reads: ``Store``, ``BlockStream`` and ``open``.

Indices are resolved by numpy on the ranges of rows and columns, as bed-reader resolves them,
so index forms and their errors are numpy's; the decoding is the library's (docs/PYTHON.md).
"""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np
import pandas as pd

from ._checks import thread_count
from ._extension import _core

__all__ = ["BlockStream", "Store", "open"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8))


def _fix_up_index(index: Any) -> Any:
    # bed-reader's rules: None selects everything, an integer selects one (and keeps the axis).
    if index is None:
        return slice(None)
    try:
        return [index.__index__()]
    except (AttributeError, TypeError):
        return index


class Store:
    """An open colflow store (a directory written by ``colflow preprocess``).

    Rows are samples and columns are variants (or the columns of a dense matrix). A store is
    read-only; close it with ``close()`` or use it as a context manager. Its methods may be
    called from several threads at once.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._core = _core.Store(os.fspath(path))
        self._samples: pd.DataFrame | None = None
        self._columns: pd.DataFrame | None = None
        self._row_range: np.ndarray | None = None
        self._col_range: np.ndarray | None = None

    # -- the store as a whole -----------------------------------------------------------------

    @property
    def path(self) -> str:
        """The store directory, as given to ``open``."""
        return self._core.path

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns): samples by variants."""
        return (self._core.rows, self._core.num_columns)

    @property
    def value_type(self) -> str:
        """What the columns hold: ``"genotype"``, ``"dosage"``, ``"float32"`` or ``"float64"``."""
        return self._core.value_type

    @property
    def samples(self) -> pd.DataFrame:
        """The samples (rows): the six .fam fields ``fid``, ``iid``, ``father``, ``mother``,
        ``sex``, ``phenotype``, as strings kept verbatim from the input."""
        if self._samples is None:
            self._samples = pd.DataFrame(self._core.samples())
        return self._samples

    @property
    def columns(self) -> pd.DataFrame:
        """The columns: the six .bim fields ``chrom``, ``id``, ``cm``, ``pos``, ``a1``, ``a2``,
        as strings kept verbatim (a dense store fills ``id`` only). Values count ``a1``."""
        if self._columns is None:
            self._columns = pd.DataFrame(self._core.columns())
        return self._columns

    def info(self) -> dict[str, Any]:
        """Shape, sizes, codecs and source: the object ``colflow info --json`` prints."""
        return self._core.info()

    @property
    def closed(self) -> bool:
        return self._core.closed

    def close(self) -> None:
        """Releases the store's mapping and files; later reads raise ValueError. A read in
        progress in another thread finishes first."""
        self._core.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return f"<colflow.Store {self.path!r} (closed)>"
        rows, cols = self.shape
        return f"<colflow.Store {self.path!r}: {rows} x {cols} {self.value_type}>"

    # -- reads --------------------------------------------------------------------------------

    def _resolve(self, index: Any) -> tuple[np.ndarray, np.ndarray]:
        # Indices are resolved by numpy on the ranges of rows and columns, as bed-reader does:
        # every index form numpy accepts, and its IndexError for anything out of range. The
        # analyses' selections by index resolve here too (_arguments), so they accept the same.
        if not isinstance(index, tuple):
            index = (None, index)
        if len(index) != 2:
            raise IndexError(
                f"an index of a store has two parts (rows, columns), not {len(index)}"
            )
        rows, cols = self.shape
        if self._row_range is None:
            self._row_range = np.arange(rows, dtype=np.int64)
        if self._col_range is None:
            self._col_range = np.arange(cols, dtype=np.int64)
        resolved = []
        for part, whole, axis in zip(index, (self._row_range, self._col_range), ("row", "column")):
            selected = np.ascontiguousarray(whole[_fix_up_index(part)], dtype=np.int64)
            if selected.ndim != 1:
                raise IndexError(f"the {axis} index must select along one dimension")
            resolved.append(selected)
        return resolved[0], resolved[1]

    def read(
        self,
        index: Any = None,
        dtype: Any = np.float32,
        standardize: bool = False,
        order: str = "F",
        num_threads: int | None = None,
    ) -> np.ndarray:
        """Reads the selected cells into a new 2-D numpy array (rows = samples).

        ``index`` selects as in ``bed_reader.open_bed.read``: None for everything; a tuple
        ``(rows, columns)`` such as ``np.s_[0:10, ::-2]``; anything else selects columns. Each
        part is an integer, a slice (any step), a list or array of integers (negative ones
        count from the end, repeats allowed) or of booleans (one per row or column).

        ``dtype`` float32 (default), float64 or int8. Values are the stored ones: for a
        genotype store the count of the A1 allele (0, 1, 2), missing calls NaN, or -127 in
        int8 (a genotype store only). With ``standardize=True`` (float dtypes), each column
        is standardised as in docs/DESIGN.md §2: (x - mean) / SD with missing calls 0 and
        constant columns all 0, the mean and SD taken over the selected rows (each row once,
        however often it is selected); with every row selected these are the store's
        statistics. ``order`` "F" (default; each column decodes straight into the array when
        every row is read in order) or "C".

        The decoding runs on ``num_threads`` threads (default: every core) without holding
        the GIL. Raises IndexError for an index out of range or of the wrong length,
        TypeError or ValueError for a bad dtype, order or index type, and colflow.Error
        (FormatError for a damaged store) when the store cannot be decoded.
        """
        dtype = np.dtype(dtype)
        if dtype not in _DTYPES:
            raise ValueError(f"dtype '{dtype}' not known, only 'int8', 'float32' and 'float64'")
        if order not in ("F", "C"):
            raise ValueError(f"order '{order}' not known, only 'F' and 'C'")
        if dtype == np.int8:
            if standardize:
                raise ValueError("standardised values need a float dtype, not int8")
            if self.value_type != "genotype":
                raise ValueError(
                    f"int8 holds genotype counts; this store holds {self.value_type} values"
                )
        threads = thread_count(num_threads)
        rows, cols = self._resolve(index)
        out = np.empty((rows.size, cols.size), dtype=dtype, order=order)
        self._core.read_into(rows, cols, out, bool(standardize), threads)
        return out

    def stream(
        self,
        columns: Any = None,
        block_columns: int = 64,
        dtype: Any = np.float32,
        standardize: bool = False,
        rows: Any = None,
        prefetch: int = 2,
        num_threads: int | None = None,
    ) -> BlockStream:
        """Streams the selected columns in blocks: ``for block in store.stream(...)``.

        ``columns`` and ``rows`` select as the two parts of ``read``'s index (None: all;
        any order, repeats allowed). Blocks are arrays of ``dtype`` (float32 or float64) in
        order "F" with every selected row and up to ``block_columns`` columns, in the order of
        ``columns``: concatenated along axis 1 they equal
        ``read(np.s_[rows, columns], dtype=dtype, standardize=standardize)``, including the
        statistics of a row subset for ``standardize=True``.

        The engine decodes ahead in parallel on ``num_threads`` threads (default: every core)
        while Python works on a block; at most ``prefetch`` full blocks wait for Python, so
        memory stays bounded whatever the number of columns. Errors of the store (a damaged
        frame: FormatError) are raised by the iteration that reaches them, after the blocks
        before them. Returns a BlockStream (an iterator, and a context manager that stops
        the stream on exit).
        """
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype '{dtype}' not known for a stream, only 'float32' and 'float64'")
        block_columns = operator.index(block_columns)
        prefetch = operator.index(prefetch)
        if block_columns < 1:
            raise ValueError(f"block_columns must be at least 1, not {block_columns}")
        if prefetch < 1:
            raise ValueError(f"prefetch must be at least 1, not {prefetch}")
        threads = thread_count(num_threads)
        row_index, col_index = self._resolve((rows, columns))
        return BlockStream(
            _core.BlockStream(
                self._core,
                row_index,
                col_index,
                dtype == np.float64,
                bool(standardize),
                block_columns,
                prefetch,
                threads,
            )
        )


class BlockStream:
    """The blocks of ``Store.stream``: an iterator of numpy arrays, decoded ahead by the engine.

    Each block is a new float32 or float64 array in order "F", of shape (rows, k) with k at
    most ``block_columns`` (only the last block is narrower), holding the next k selected
    columns in the order asked for. A thread of the extension runs the library's flow graph
    (column_stream) and fills blocks without the GIL while Python works on the previous ones;
    at most ``prefetch`` full blocks wait, after which decoding pauses until Python takes
    one. ``close()`` (also on leaving a ``with`` block, or when the iterator is dropped, e.g.
    on ``break`` out of a ``for`` loop) stops the pass at its next column and waits for it.
    """

    def __init__(self, core: Any) -> None:
        self._core = core

    def __iter__(self) -> BlockStream:
        return self

    def __next__(self) -> np.ndarray:
        block = self._core.next()
        if block is None:
            raise StopIteration
        return block

    def close(self) -> None:
        """Stops the stream and releases its blocks; later iteration ends at once."""
        self._core.close()

    def __enter__(self) -> BlockStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def memory(self) -> dict[str, int]:
        """What the bound on memory looked like so far: ``prefetch``, ``peak_queued`` (the
        most full blocks that ever waited for Python, at most ``prefetch``), ``blocks_made``,
        and the engine's ``in_flight`` depth and ``peak_buffers_in_use`` (at most
        ``in_flight``; known once the pass has ended)."""
        return self._core.memory()


def open(path: str | os.PathLike[str]) -> Store:  # noqa: A001 - the module's verb, as io.open
    """Opens the store directory ``path``, validating its headers and index.

    Raises NotFoundError when it does not exist and FormatError when it is not a store or is
    damaged, with the library's message naming the file and the problem.
    """
    return Store(path)
