"""colflow: compressed column stores of genotype matrices, read from Python.

    >>> import colflow
    >>> colflow.preprocess("data/example", "example.cf")   # a PLINK .bed/.bim/.fam prefix
    >>> colflow.preprocess(["chr1.bgen", "chr2.bgen"], "bgen.cf", sample="all.sample")
    >>> colflow.preprocess(np.random.rand(100, 20), "dense.cf")   # a float matrix
    >>> with colflow.open("example.cf") as store:
    ...     x = store.read(np.s_[:100, ::2], dtype=np.float64)

``Store.read`` follows ``bed_reader.open_bed(...).read()``: the same index forms, values (the
count of the A1 allele), missing values (NaN, or -127 in int8), orders and errors, so that code
written for a .bed reads a store unchanged. ``Store.stream`` yields blocks of columns decoded
ahead by the library's flow graph; ``stats``, ``assoc``, ``pca``, ``lasso``, ``ridge``, ``enet``
and ``bayesr`` run the command's analyses into pandas DataFrames and numpy arrays
(docs/PYTHON.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Optional

import numpy as np
import pandas as pd

from . import _core
from ._errors import AlreadyExistsError, Error, FormatError, InvalidArgumentError, NotFoundError

__all__ = [
    "AlreadyExistsError",
    "BayesR",
    "BlockStream",
    "Error",
    "FormatError",
    "GRM",
    "InvalidArgumentError",
    "NotFoundError",
    "Store",
    "PCA",
    "Penalized",
    "assoc",
    "bayesr",
    "enet",
    "grm",
    "lasso",
    "ld",
    "ld_matrix",
    "open",
    "pca",
    "preprocess",
    "ridge",
    "score",
    "stats",
    "WGR",
    "wgr",
]

__version__: str = _core.library_version

# COLFLOW_SIMD (portable, avx2, avx512) caps the vector code for the process: a value that names
# no path, or one this CPU lacks, fails the import rather than a later call.
_core.check_vector_path()

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8))


def _threads(num_threads: int | None) -> int:
    if num_threads is None:
        return 0
    num_threads = int(num_threads)
    if num_threads < 1:
        raise ValueError(f"num_threads must be at least 1, not {num_threads}")
    return num_threads


class _ProgressBars:
    # A tqdm bar per pass or loop a call reports: a new label closes the bar and opens another.
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
def _progress(progress: Any, name: str) -> Iterator[Optional[Callable[..., None]]]:
    # What the extension calls with (label, done, total, unit) while a long call runs: nothing
    # (False or None), the caller's function, or tqdm bars (True; nothing without tqdm).
    if progress is None or progress is False:
        yield None
    elif progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            yield None
            return
        bars = _ProgressBars(tqdm, name)
        try:
            yield bars
        finally:
            bars.close()
    elif callable(progress):
        yield progress
    else:
        raise TypeError(f"progress is True, False or a function, not {progress!r}")


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
        # every index form numpy accepts, and its IndexError for anything out of range.
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
        threads = _threads(num_threads)
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
        threads = _threads(num_threads)
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


_FORMATS = ("bed", "bgen", "vcf", "npy", "csv", "array", "inputs")
_SAMPLE_FIELDS = ("fid", "iid", "father", "mother", "sex", "phenotype")


def _input_format(source: Any) -> str:
    # The format of a source by its type or (the library's rule, that of the command's --inputs
    # list) the ending of its paths: .bgen, .vcf/.vcf.gz/.vcf.bgz/.bcf, .npy, .csv/.tsv, else a
    # PLINK prefix.
    if isinstance(source, np.ndarray):
        return "array"
    found = {_core.input_format(os.fspath(p)) for p in source}
    if len(found) > 1:
        raise ValueError(f"the inputs of one store must be of one format, not {sorted(found)}")
    name = found.pop()
    return "bed" if name == "plink" else name


def _array_samples(samples: Any, rows: int) -> Optional[list[list[str]]]:
    # Sample IDs (FID = IID) or a DataFrame of Store.samples' fields, as 6 fields per row.
    if samples is None:
        return None
    if isinstance(samples, pd.DataFrame):
        if "iid" not in samples.columns:
            raise ValueError("a DataFrame of samples has an 'iid' column (and fid, father, "
                             "mother, sex, phenotype, as Store.samples)")
        unknown = set(samples.columns) - set(_SAMPLE_FIELDS)
        if unknown:
            raise ValueError(f"unknown sample fields {sorted(unknown)}: {_SAMPLE_FIELDS}")
        iid = samples["iid"].astype(str)
        default = {"fid": iid, "father": "0", "mother": "0", "sex": "0", "phenotype": "-9"}
        fields = [samples[f].astype(str) if f in samples.columns else default.get(f, iid)
                  for f in _SAMPLE_FIELDS]
        table = pd.DataFrame(dict(zip(_SAMPLE_FIELDS, fields)), index=samples.index)
        rows_out = table.to_numpy().tolist()
    else:
        if isinstance(samples, (str, bytes)):
            raise TypeError("samples is a sequence of IIDs or a DataFrame, not a string")
        rows_out = [[str(i), str(i), "0", "0", "0", "-9"] for i in samples]
    if len(rows_out) != rows:
        raise ValueError(f"{len(rows_out)} samples for an array of {rows} rows")
    return rows_out


def _array_columns(columns: Any, count: int) -> Optional[list[str]]:
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)):
        raise TypeError("columns is a sequence of names, not a string")
    names = [str(c) for c in columns]
    if len(names) != count:
        raise ValueError(f"{len(names)} column names for an array of {count} columns")
    return names


def preprocess(
    source: Any,
    out: str | os.PathLike[str],
    *,
    format: Optional[str] = None,
    bim: str | os.PathLike[str] | None = None,
    fam: str | os.PathLike[str] | None = None,
    sample: str | os.PathLike[str] | None = None,
    ref_first: bool = False,
    dosage: Optional[str] = None,
    split_multiallelic: bool = False,
    half_call: str = "error",
    csv_header: str = "auto",
    csv_ids: str = "auto",
    samples: Any = None,
    columns: Any = None,
    codec: Optional[str] = None,
    level: int | None = None,
    dtype: Optional[str] = None,
    hard_call_threshold: float | None = None,
    shuffle: Optional[bool] = None,
    standardize: Optional[bool] = None,
    sex: str | os.PathLike[str] | None = None,
    force: bool = False,
    num_threads: int | None = None,
    progress: Any = False,
) -> dict[str, Any]:
    """Converts inputs into a store: ``colflow preprocess ... --out OUT``.

    ``source`` is a path or a list of paths (several inputs of one format, e.g. per-chromosome
    files of the same samples, make one store, their columns in the order given), or a numpy
    array. ``format`` is the command's input option, inferred when None from the type (an
    array) or the paths' endings (.bgen; .vcf, .vcf.gz, .vcf.bgz, .bcf; .npy; .csv, .tsv;
    anything else a PLINK prefix):

    - ``"bed"``: PLINK 1 filesets by prefix (``--bed``; a trailing ".bed" is allowed), or one
      .bed with ``bim=`` and ``fam=`` (``--bed-file --bim --fam``);
    - ``"bgen"``: BGEN files (``--bgen``) with ``sample=`` (``--sample``, an Oxford .sample)
      and ``ref_first=`` (``--ref-first``): a dosage store by default;
    - ``"vcf"``: VCF or BCF files (``--vcf``), GT hard calls, or dosages with ``dosage="DS"``
      or ``"GP"`` (``--dosage``); ``split_multiallelic=`` and ``half_call=`` ("error",
      "missing", "haploid", "reference") are ``--split-multiallelic`` and ``--vcf-half-call``;
    - ``"npy"``: a .npy file (``--npy``); ``"csv"``: CSV or TSV text (``--csv``) with
      ``csv_header=`` and ``csv_ids=`` ("auto", "yes", "no");
    - ``"inputs"``: a file listing the inputs (``--inputs``);
    - ``"array"``: a 2-D float32 or float64 array, samples in rows (1-D: one column), read in
      place while the conversion runs (no file is written), as the command converts it saved
      with ``numpy.save``; ``samples=`` names the rows (a sequence of IIDs, FID = IID, or a
      DataFrame with Store.samples' fields, ``iid`` at least) and ``columns=`` the columns
      (default: row1.., col1..).

    The conversion options are the command's, None taking its default for the input:
    ``codec`` (genotype for genotype input, zstd otherwise), ``level``, ``dtype`` ("f64" or
    "f32"; for dosage input a float store instead of a dosage store), ``hard_call_threshold``
    (dosage input: hard calls), ``shuffle`` (``--shuffle``/``--no-shuffle``), ``standardize``
    (``--standardize``/``--no-standardize``; by default genotype and dosage input is
    standardised in a float store, dense input is not), ``sex`` (``--sex FILE``), ``force``
    (``--force``). Returns the conversion's counts (rows, columns, input and frame bytes,
    seconds), the input's kind ("genotype", "dosage" or "float64") and the codec used.

    Raises NotFoundError (a missing file), FormatError (a malformed input, naming the file),
    AlreadyExistsError, InvalidArgumentError (options that do not fit the input), ValueError
    (an unknown format or option value, options of another format) and TypeError (an array
    other than float32/float64). ``progress=True`` shows a tqdm bar (if tqdm is installed), or
    give a function ``(label, done, total, unit)``; Ctrl-C stops the call, removes the partial
    store and raises KeyboardInterrupt (docs/PYTHON.md, "Ctrl-C and progress").
    """
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    elif isinstance(source, (list, tuple)):
        if not source:
            raise ValueError("no input: source is an empty list")
    elif not isinstance(source, np.ndarray):
        raise TypeError(f"source is a path, a list of paths or a numpy array, not "
                        f"{type(source).__name__}")
    if format is None:
        format = _input_format(source)
    elif format not in _FORMATS:
        raise ValueError(f"unknown format {format!r}: one of {', '.join(_FORMATS)}")
    if (format == "array") != isinstance(source, np.ndarray):
        raise TypeError(f"format {format!r} takes "
                        f"{'a numpy array' if format == 'array' else 'paths'}, not "
                        f"{type(source).__name__}")
    if format != "array" and (samples is not None or columns is not None):
        raise ValueError("samples and columns name the rows and columns of an array")
    common = dict(
        codec=codec,
        level=level,
        dtype=dtype,
        hard_call_threshold=None if hard_call_threshold is None else float(hard_call_threshold),
        shuffle=None if shuffle is None else bool(shuffle),
        standardize=None if standardize is None else bool(standardize),
        sex="" if sex is None else os.fspath(sex),
        force=bool(force),
        threads=_threads(num_threads),
    )
    if format == "array":
        given = dict(bim=bim, fam=fam, sample=sample, dosage=dosage)
        flags = dict(ref_first=ref_first, split_multiallelic=split_multiallelic,
                     half_call=half_call != "error", csv_header=csv_header != "auto",
                     csv_ids=csv_ids != "auto")
        other = [k for k, v in given.items() if v is not None] + [k for k, v in flags.items() if v]
        if other:
            raise ValueError(f"{', '.join(other)}: options of file inputs, not of an array")
        matrix = source
        if matrix.dtype.kind != "f" or matrix.dtype.itemsize not in (4, 8):
            raise TypeError(f"the array holds float32 or float64 values, not {matrix.dtype}")
        if matrix.ndim == 1:
            matrix = matrix[:, np.newaxis]
        if matrix.ndim != 2:
            raise ValueError(f"the array is 2-D (samples, columns) or 1-D, not {matrix.ndim}-D")
        if not matrix.dtype.isnative:
            matrix = matrix.astype(matrix.dtype.newbyteorder("="))
        with _progress(progress, "preprocess") as report:
            return _core.preprocess_array(
                matrix, _array_samples(samples, matrix.shape[0]),
                _array_columns(columns, matrix.shape[1]), os.fspath(out), progress=report,
                **common)
    with _progress(progress, "preprocess") as report:
        return _core.preprocess_files(
            "plink" if format == "bed" else format,
            [os.fspath(p) for p in source],
            "" if bim is None else os.fspath(bim),
            "" if fam is None else os.fspath(fam),
            "" if sample is None else os.fspath(sample),
            bool(ref_first),
            dosage,
            bool(split_multiallelic),
            half_call,
            csv_header,
            csv_ids,
            os.fspath(out),
            progress=report,
            **common,
        )


# -- analyses ------------------------------------------------------------------------------------


def _positions_of_names(selection: Any, names: pd.Series, what: str) -> Optional[np.ndarray]:
    # The positions of `names` that a selection of strings (a pandas Index or Series, a list, an
    # array) lists, in store order; None when the selection is not one of names.
    values = selection.to_numpy() if isinstance(selection, (pd.Index, pd.Series)) else selection
    if not isinstance(values, (list, tuple, np.ndarray)) or len(values) == 0:
        return None
    array = np.asarray(values)
    if array.dtype.kind not in "OUS":
        return None
    wanted = set(map(str, array))
    unknown = wanted - set(names)
    if unknown:
        raise KeyError(f"{what} not in the store: {sorted(unknown)[:5]}")
    return np.flatnonzero(names.isin(wanted).to_numpy()).astype(np.int64)


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _selected_rows(store: Store, keep: Any) -> np.ndarray:
    # keep: None (every sample), a path to a sample list read as the command's --keep, IIDs
    # (strings: a pandas Index or a list), or a row index of Store.read (integers, a slice,
    # booleans).
    if keep is None:
        return store._resolve((None, [0]))[0]
    if _is_path(keep):
        return _core.keep_rows(store._core, os.fspath(keep))
    by_iid = _positions_of_names(keep, store.samples.iid, "samples")
    return by_iid if by_iid is not None else store._resolve((keep, [0]))[0]


def _selected_columns(store: Store, columns: Any) -> np.ndarray:
    # columns: None (all), variant IDs (strings), or a column index of Store.read.
    if columns is not None:
        by_id = _positions_of_names(columns, store.columns.id, "columns")
        if by_id is not None:
            return by_id
    return store._resolve((None, columns))[1]


def _as_store(store: Store | str | os.PathLike[str]) -> Store:
    return store if isinstance(store, Store) else Store(store)


def _column_fields(store: Store, columns: np.ndarray) -> dict[str, Any]:
    c = store.columns.iloc[columns]
    return {
        "#CHR": c.chrom.to_numpy(),
        "POS": pd.to_numeric(c.pos, errors="coerce").to_numpy(),
        "ID": c.id.to_numpy(),
        "A1": c.a1.to_numpy(),
        "A2": c.a2.to_numpy(),
    }


def stats(
    store: Store | str | os.PathLike[str],
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    *,
    progress: Any = False,
) -> pd.DataFrame:
    """Per-column statistics of the selected samples: ``colflow stats`` as a DataFrame.

    ``store`` is an open Store or a path. ``keep`` selects samples: None (all), the path of a
    sample list (read as ``--keep``: FID IID per line, a .fam works, one field is an IID), IIDs
    (a list or pandas Index of strings) or a row index of ``Store.read`` (integers, slice,
    booleans);
    ``columns`` selects columns the same way, by variant ID or index. Each selected sample and
    column counts once, and rows come in the store's column order, as the command's.

    The columns are the command's TSV header, so ``pd.read_csv(file, sep="\t")`` of its output
    has the same names: genotype and dosage stores ``#CHR ID POS A1 A2 OBS_CT MISSING_CT
    F_MISS A1_FREQ MEAN SD``, dense stores ``ID OBS_CT MISSING_CT MEAN SD MIN MAX``. Numbers are
    full binary64 values (the file rounds them to its ``--digits``); NA is NaN. Sex
    chromosomes follow PLINK 2's ploidy rules with the store's sexes (docs/ANALYSES.md).
    ``progress=True`` shows a tqdm bar per pass (if tqdm is installed), or give a function
    ``(label, done, total, unit)``; Ctrl-C stops the call and raises KeyboardInterrupt
    (docs/PYTHON.md, "Ctrl-C and progress").
    """
    store = _as_store(store)
    rows = _selected_rows(store, keep)
    cols = _selected_columns(store, columns)
    with _progress(progress, "stats") as report:
        r = _core.stats(store._core, rows, cols, _threads(num_threads), report)
    observed = r["observed"].astype(np.int64)
    missing = r["missing"].astype(np.int64)
    total = observed + missing
    with np.errstate(invalid="ignore", divide="ignore"):
        f_miss = np.where(total > 0, missing / np.maximum(total, 1), np.nan)
    ids = store.columns.id.iloc[r["column"]].to_numpy()
    if store.value_type in ("float32", "float64"):
        frame = {
            "ID": ids,
            "OBS_CT": observed,
            "MISSING_CT": missing,
            "MEAN": r["mean"],
            "SD": r["sd"],
            "MIN": r["min"],
            "MAX": r["max"],
        }
    else:
        fields = _column_fields(store, r["column"])
        frame = {
            "#CHR": fields["#CHR"],
            "ID": ids,
            "POS": fields["POS"],
            "A1": fields["A1"],
            "A2": fields["A2"],
            "OBS_CT": observed,
            "MISSING_CT": missing,
            "F_MISS": f_miss,
            "A1_FREQ": r["a1_freq"],
            "MEAN": r["mean"],
            "SD": r["sd"],
        }
    return pd.DataFrame(frame)


_TABLE_FORMS = (
    "a pandas DataFrame or Series indexed by IID, a numpy array with one row per sample, or "
    "the path of a PLINK phenotype file (str or os.PathLike)"
)


def _table(store: Store, values: Any, default_name: str) -> tuple[np.ndarray, list[str]]:
    # Store rows x variables of float64 (NaN missing), matched by IID for pandas objects: a
    # Series or DataFrame indexed by IID (samples it lacks are missing, samples the store lacks
    # ignored, as for the command's files); a numpy array has one row per store sample; a path
    # is read by the library as the command reads --pheno and --covar.
    n = store.shape[0]
    what = "pheno" if default_name == "PHENO" else "covar"
    if _is_path(values):
        r = _core.read_table(store._core, os.fspath(values), default_name)
        table = np.asarray(r["values"]).reshape((len(r["names"]), n)).T
        return np.asfortranarray(table), list(r["names"])
    if not isinstance(values, (pd.Series, pd.DataFrame, np.ndarray, list, tuple)):
        raise TypeError(f"{what} must be {_TABLE_FORMS}; got {type(values).__name__}")
    if isinstance(values, pd.Series):
        values = values.to_frame(values.name if values.name is not None else f"{default_name}1")
    if isinstance(values, pd.DataFrame):
        if not values.index.is_unique:
            raise ValueError("the phenotype or covariate index lists a sample twice")
        names = [str(c) for c in values.columns]
        # IIDs are strings in the store: an index of integers matches their text.
        values = values.set_axis(values.index.map(str), axis=0)
        if not values.index.is_unique:
            raise ValueError("the phenotype or covariate index lists a sample twice")
        aligned = values.reindex(store.samples.iid.to_numpy())
        table = aligned.apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64)
    else:
        try:
            table = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what} must be {_TABLE_FORMS}: {e}") from None
        if table.ndim == 1:
            table = table[:, None]
        if table.ndim != 2 or table.shape[0] != n:
            raise ValueError(
                f"a numpy phenotype or covariate table needs one row per sample ({n}), "
                f"not shape {table.shape}"
            )
        names = [f"{default_name}{i + 1}" for i in range(table.shape[1])]
    if len(names) == 0:
        raise ValueError(f"no {default_name.lower()} column given")
    # PLINK's missing code -9, as in the command's files.
    table = np.where(table == -9, np.nan, table)
    return np.asfortranarray(table), names


def _sex_codes(store: Store, sex: Any) -> list[str]:
    # One code per store sample for the extension, "" where the store's sex stays: a Series
    # indexed by IID (store samples it lacks keep theirs, others ignored) or one value per store
    # sample. Numbers and strings are read as plink2 --update-sex reads a SEX field, by their
    # first character (1/M male, 2/F female, 0/N/U unknown); NaN and None are unknown.
    def code(value: Any) -> str:
        if value is None or value is pd.NA or (
            isinstance(value, (float, np.floating)) and np.isnan(value)
        ):
            return "0"
        if isinstance(value, (bool, np.bool_)):
            raise ValueError(f"a sex is a code (1/M male, 2/F female, 0/NA unknown), not {value}")
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        return str(value) or "0"

    iids = store.samples.iid.to_numpy()
    if _is_path(sex):
        return list(_core.read_sexes(store._core, os.fspath(sex)))
    if isinstance(sex, pd.Series):
        index = sex.index.map(str)
        if not index.is_unique:
            raise ValueError("the sex index lists a sample twice")
        by_iid = dict(zip(index, sex.to_numpy()))
        return [code(by_iid[i]) if i in by_iid else "" for i in iids]
    values = np.asarray(sex, dtype=object)
    if values.ndim != 1 or values.shape[0] != len(iids):
        raise ValueError(
            f"a numpy sex array needs one value per sample ({len(iids)}), not shape {values.shape}"
        )
    return [code(v) for v in values]


def assoc(
    store: Store | str | os.PathLike[str],
    pheno: Any,
    covar: Any = None,
    *,
    keep: Any = None,
    columns: Any = None,
    binary: bool | list[str] | None = None,
    zero_one: bool = False,
    firth: str = "fallback",
    score_test: bool = False,
    odds_ratio: bool = True,
    sex: Any = None,
    quantile_normalize: bool = False,
    covar_variance_standardize: bool = False,
    num_threads: int | None = None,
    progress: Any = False,
) -> dict[str, pd.DataFrame]:
    """Association scans: ``colflow assoc``, one DataFrame per phenotype (a dict by name).

    ``pheno`` and ``covar`` are a pandas DataFrame or Series indexed by IID (store samples it
    lacks are missing, others ignored), a numpy array with one row per store sample (columns
    named PHENO1, ... and COVAR1, ...), or the path of a phenotype file, read as the command
    reads ``--pheno`` and ``--covar`` (every PLINK 2 form: docs/ANALYSES.md); NaN and -9 are
    missing, and anything else raises TypeError. ``keep`` and ``columns`` select as in
    ``stats``. Each phenotype is tested as the command does: case/control when its
    values on the selected samples are all PLINK codes (1 control, 2 case, 0 missing; 0 and 1
    with ``zero_one=True``), else quantitative; ``binary`` True or False forces every one, a
    list of names the named ones to case/control (the rest quantitative).

    Quantitative traits: least squares, columns ``#CHR POS ID A1 A2 N_OBS BETA SE T_STAT P
    NOTE``. Case/control: logistic regression (Firth's as ``firth`` says: fallback, always,
    never), columns ``#CHR POS ID A1 A2 FIRTH? N_OBS OR LOG(OR)_SE Z_STAT P NOTE`` (``BETA SE``
    in place of ``OR LOG(OR)_SE`` with ``odds_ratio=False``); ``score_test=True`` takes
    regenie's score test at the fit without the column instead of fitting it (``--score-test``;
    not with ``firth``). Estimates the test lacks are
    NaN, with NOTE CONST_COLUMN, TOO_FEW_SAMPLES, COLLINEAR or NOT_CONVERGED ("." otherwise).
    ``quantile_normalize=True`` replaces each quantitative phenotype by its rank-based inverse
    normal transform over the selected samples with a value (``--pheno-quantile-normalize``);
    ``covar_variance_standardize=True`` centres each covariate and scales it to variance 1 over
    them (``--covar-variance-standardize``). Sex chromosomes as PLINK 2 --glm, with the store's
    sexes, or ``sex``: the path of a sex file (``--sex FILE``), a Series indexed by IID (store
    samples it lacks keep the store's sex) or one value per store sample, each 1 or "M" male, 2 or "F" female, 0,
    NaN or "NA" unknown (a SEX field of plink2 --update-sex, read by its first character).
    Numbers are full binary64. Raises InvalidArgumentError when a phenotype has no usable
    sample, the covariates are collinear or a covariate to standardise is constant,
    ValueError for a bad table, sex or option.
    ``progress=True`` shows a tqdm bar per pass (if tqdm is installed), or give a function
    ``(label, done, total, unit)``; Ctrl-C stops the call and raises KeyboardInterrupt
    (docs/PYTHON.md, "Ctrl-C and progress").
    """
    store = _as_store(store)
    if firth not in ("fallback", "always", "never"):
        raise ValueError(f"firth '{firth}' not known, only 'fallback', 'always' and 'never'")
    if score_test and firth != "fallback":
        raise ValueError("firth applies to the fitted Wald test; score_test fits no column")
    rows = _selected_rows(store, keep)
    cols = _selected_columns(store, columns)
    values, names = _table(store, pheno, "PHENO")
    if len(set(names)) != len(names):
        raise ValueError("phenotype names must be distinct")
    covar_values, covar_names = (None, [])
    if covar is not None:
        covar_values, covar_names = _table(store, covar, "COVAR")
    elif covar_variance_standardize:
        raise ValueError("covar_variance_standardize needs covariates (covar)")
    sex_codes = None if sex is None else _sex_codes(store, sex)
    if binary is None:
        kinds = ["auto"] * len(names)
    elif binary is True or binary is False:
        kinds = ["binary" if binary else "quantitative"] * len(names)
    else:
        listed = [str(b) for b in binary]
        unknown = set(listed) - set(names)
        if unknown:
            raise ValueError(f"binary names phenotypes that are not given: {sorted(unknown)}")
        kinds = ["binary" if n in listed else "quantitative" for n in names]
    with _progress(progress, "assoc") as report:
        results = _core.assoc(
            store._core,
            rows,
            cols,
            values,
            names,
            covar_values,
            covar_names,
            kinds,
            bool(zero_one),
            firth,
            bool(score_test),
            sex_codes,
            bool(quantile_normalize),
            bool(covar_variance_standardize),
            _threads(num_threads),
            report,
        )
    out: dict[str, pd.DataFrame] = {}
    for r in results:
        fields = _column_fields(store, r["column"])
        frame: dict[str, Any] = {k: fields[k] for k in ("#CHR", "POS", "ID", "A1", "A2")}
        if r["model"] == "linear":
            frame.update(
                {
                    "N_OBS": r["n_obs"].astype(np.int64),
                    "BETA": r["beta"],
                    "SE": r["se"],
                    "T_STAT": r["stat"],
                }
            )
        else:
            frame["FIRTH?"] = np.where(r["firth"] != 0, "Y", "N")
            frame["N_OBS"] = r["n_obs"].astype(np.int64)
            if odds_ratio:
                frame["OR"] = r["odds_ratio"]
                frame["LOG(OR)_SE"] = r["se"]
            else:
                frame["BETA"] = r["beta"]
                frame["SE"] = r["se"]
            frame["Z_STAT"] = r["stat"]
        frame["P"] = r["p"]
        frame["NOTE"] = r["note"]
        df = pd.DataFrame(frame)
        df.attrs["model"] = r["model"]
        df.attrs["samples_used"] = r["samples_used"]
        out[r["name"]] = df
    return {n: out[n] for n in names}


@dataclasses.dataclass(frozen=True)
class PCA:
    """The result of ``pca``: what ``colflow pca`` writes, as numpy and pandas."""

    #: k eigenvalues of ZZᵀ/M, decreasing (PREFIX.eigenval).
    eigenvalues: np.ndarray
    #: ``#FID IID PC1..PCk``, one row per selected sample: unit-length eigenvectors, each
    #: with its largest entry positive (PREFIX.eigenvec).
    eigenvectors: pd.DataFrame
    #: ``#CHR ID A1 A2 PC1..PCk``, one row per selected column (PREFIX.loadings.tsv), or
    #: None unless asked for.
    loadings: pd.DataFrame | None
    #: M: the selected columns that are not constant.
    columns_used: int
    #: Streaming passes over the data.
    passes: int


def pca(
    store: Store | str | os.PathLike[str],
    k: int = 10,
    *,
    keep: Any = None,
    columns: Any = None,
    oversampling: int = 10,
    power_iterations: int = 4,
    scaling: str = "standardized",
    seed: int = 1,
    loadings: bool = False,
    num_threads: int | None = None,
    progress: Any = False,
) -> PCA:
    """Principal components: ``colflow pca``, by the library's randomised SVD.

    The top ``k`` eigenpairs of ZZᵀ/M, Z the selected samples' standardised columns
    (``scaling="standardized"``: docs/DESIGN.md §2 over the selected samples; ``"hwe"``: PLINK 2's
    (x − 2p) / sqrt(2p(1 − p)), genotype stores), M the columns that are not constant.
    ``oversampling``, ``power_iterations`` and ``seed`` are the command's options of the same
    names (the result depends on the seed only through rounding). ``keep`` and ``columns``
    select as in ``stats``. Raises InvalidArgumentError for k = 0 or k above the samples or
    columns.
    ``progress=True`` shows a tqdm bar per pass (if tqdm is installed), or give a function
    ``(label, done, total, unit)``; Ctrl-C stops the call and raises KeyboardInterrupt
    (docs/PYTHON.md, "Ctrl-C and progress").
    """
    store = _as_store(store)
    for name, value in (("k", k), ("oversampling", oversampling),
                        ("power_iterations", power_iterations), ("seed", seed)):
        if operator.index(value) < 0:
            raise ValueError(f"{name} must not be negative, not {value}")
    rows = _selected_rows(store, keep)
    cols = _selected_columns(store, columns)
    with _progress(progress, "pca") as report:
        r = _core.pca(
            store._core,
            rows,
            cols,
            operator.index(k),
            operator.index(oversampling),
            operator.index(power_iterations),
            scaling,
            operator.index(seed),
            bool(loadings),
            _threads(num_threads),
            report,
        )
    pcs = [f"PC{i + 1}" for i in range(len(r["eigenvalues"]))]
    samples = store.samples.iloc[r["rows"]]
    eigenvectors = pd.DataFrame(
        {"#FID": samples.fid.to_numpy(), "IID": samples.iid.to_numpy()}
        | dict(zip(pcs, r["eigenvectors"].T))
    )
    loading_frame = None
    if r["loadings"] is not None:
        c = store.columns.iloc[r["column"]]
        loading_frame = pd.DataFrame(
            {"#CHR": c.chrom.to_numpy(), "ID": c.id.to_numpy(), "A1": c.a1.to_numpy(),
             "A2": c.a2.to_numpy()}
            | dict(zip(pcs, r["loadings"].T))
        )
    return PCA(r["eigenvalues"], eigenvectors, loading_frame, r["columns_used"], r["passes"])


# -- penalised regression and BayesR ------------------------------------------------------------


def _phenotype(store: Store, pheno: Any, pheno_name: str | None) -> tuple[np.ndarray, str]:
    # The one phenotype a fit takes, as assoc reads its table: the column named pheno_name, or
    # the first (the command's --pheno-name); one float64 value per store row, NaN missing.
    values, names = _table(store, pheno, "PHENO")
    if pheno_name is None:
        column = 0
    elif str(pheno_name) in names:
        column = names.index(str(pheno_name))
    else:
        raise KeyError(f"phenotype {pheno_name!r} not given; the phenotypes are {names}")
    return np.ascontiguousarray(values[:, column]), names[column]


def _number(name: str, value: Any, *, low: float, low_open: bool = False,
            high: float | None = None) -> float:
    value = float(value)
    if not (value > low if low_open else value >= low) or (high is not None and value > high):
        bound = f"{'above' if low_open else 'at least'} {low}" + (
            f" and at most {high}" if high is not None else "")
        raise ValueError(f"{name} must be {bound}, not {value}")
    return value


def _count(name: str, value: Any, low: int) -> int:
    value = operator.index(value)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, not {value}")
    return value


@dataclasses.dataclass(frozen=True)
class Penalized:
    """The result of ``lasso``, ``ridge`` and ``enet``: what ``colflow lasso|ridge|enet`` writes."""

    #: ``LAMBDA ID A1 BETA BETA_PER_UNIT``: per λ of the path (in path order), the non-zero
    #: coefficients (every coefficient for ``ridge``) in column order; BETA on the standardised
    #: scale, BETA_PER_UNIT per A1 allele (per unit of a dense column) (PREFIX.coef.tsv).
    coefficients: pd.DataFrame
    #: ``LAMBDA NONZERO R2 OBJECTIVE SWEEPS FULL_PASSES CONVERGED`` per λ (PREFIX.path.tsv);
    #: CONVERGED is 1 or 0.
    path: pd.DataFrame
    #: Selected columns x λ values: every coefficient on the standardised scale, indexed by ID.
    beta: pd.DataFrame
    #: With ``predict=``: ``#FID IID LAMBDA=<λ>...``, one row per sample of the other store
    #: (PREFIX.pred.tsv, the λ in the names with 6 significant digits); else None.
    predictions: pd.DataFrame | None
    #: The phenotype fitted.
    phenotype: str
    #: n: selected samples with a phenotype value.
    samples: int
    #: b0: the phenotype's mean over them.
    intercept: float
    #: The smallest λ at which every coefficient is zero (for ridge, that of α = 0.001).
    lambda_max: float
    #: With ``predict=``: fitted columns the other store lacks (they contribute nothing).
    predict_missing: int


def _penalized(store: Any, pheno: Any, alpha: float, ridge: bool, *, pheno_name: str | None,
               keep: Any, columns: Any, lambdas: Any, nlambda: int,
               lambda_min_ratio: float | None, tol: float, max_sweeps: int, predict: Any,
               num_threads: int | None, progress: Any) -> Penalized:
    store = _as_store(store)
    alpha = _number("alpha", alpha, low=0.0, high=1.0)
    if lambdas is None:
        path: list[float] = []
    else:
        path = [float(v) for v in np.atleast_1d(np.asarray(lambdas, dtype=np.float64))]
        if not path or not all(np.isfinite(v) and v > 0 for v in path):
            raise ValueError(f"lambdas must be positive numbers, not {lambdas!r}")
    nlambda = _count("nlambda", nlambda, 1)
    ratio = 0.0 if lambda_min_ratio is None else _number(
        "lambda_min_ratio", lambda_min_ratio, low=0.0, low_open=True, high=1.0)
    tol = _number("tol", tol, low=0.0, low_open=True)
    max_sweeps = _count("max_sweeps", max_sweeps, 1)
    target = None if predict is None else _as_store(predict)
    rows = _selected_rows(store, keep)
    cols = _selected_columns(store, columns)
    y, name = _phenotype(store, pheno, pheno_name)
    with _progress(progress, "ridge" if ridge else "lasso" if alpha == 1 else "enet") as report:
        r = _core.penalized(
            store._core, rows, cols, y, alpha, path, nlambda, ratio, tol, max_sweeps, ridge,
            None if target is None else target._core, _threads(num_threads), report,
        )
    lam = r["lambda"]
    ids = store.columns.id.to_numpy()
    a1 = store.columns.a1.to_numpy()
    coefficients = pd.DataFrame({
        "LAMBDA": lam[r["coef_step"]],
        "ID": ids[r["coef_column"]],
        "A1": a1[r["coef_column"]],
        "BETA": r["coef_beta"],
        "BETA_PER_UNIT": r["coef_per_unit"],
    })
    path_frame = pd.DataFrame({
        "LAMBDA": lam,
        "NONZERO": r["nonzero"].astype(np.int64),
        "R2": r["r2"],
        "OBJECTIVE": r["objective"],
        "SWEEPS": r["sweeps"].astype(np.int64),
        "FULL_PASSES": r["full_passes"].astype(np.int64),
        "CONVERGED": r["converged"].astype(np.int64),
    })
    position = np.searchsorted(r["column"], r["coef_column"])
    dense = np.zeros((len(r["column"]), len(lam)))
    dense[position, r["coef_step"]] = r["coef_beta"]
    beta = pd.DataFrame(dense, index=pd.Index(ids[r["column"]], name="ID"), columns=lam)
    predictions = None
    if target is not None:
        samples = target.samples
        predictions = pd.DataFrame(
            {"#FID": samples.fid.to_numpy(), "IID": samples.iid.to_numpy()}
            | {f"LAMBDA={v:.6g}": r["predictions"][:, k] for k, v in enumerate(lam)}
        )
    unconverged = int((r["converged"] == 0).sum())
    if unconverged:
        warnings.warn(f"{unconverged} lambda value(s) stopped at max_sweeps before converging",
                      RuntimeWarning, stacklevel=3)
    return Penalized(coefficients, path_frame, beta, predictions, name, r["samples"],
                     r["intercept"], r["lambda_max"], r["target_missing"])


_PENALIZED_DOC = """{summary}

    Minimises 1/(2n) ‖y − b0 − Zb‖² + λ (α ‖b‖₁ + (1 − α)/2 ‖b‖²) over the selected columns Z
    standardised over the n selected samples with a phenotype (docs/DESIGN.md §2), b0 the
    phenotype's mean: scikit-learn's ``ElasticNet(alpha=λ, l1_ratio=α)`` objective, by the
    library's coordinate descent with warm starts, the strong rule and KKT checks.

    ``pheno`` is given as for ``assoc`` (a Series or DataFrame indexed by IID, or a numpy array
    with one value per store sample; NaN and -9 missing); a table's column ``pheno_name``, or
    its first, is fitted. ``keep`` and ``columns`` select as in ``stats``. The options are the
    command's: ``lambdas`` a λ or a list of them instead of a path (``--lambda``), else
    ``nlambda`` values log-spaced from λ_max down to ``lambda_min_ratio`` · λ_max (None: 1e-4
    with more samples than columns, 1e-2 otherwise); a λ is converged when no coefficient
    moves more than ``tol`` in a sweep, and gives up after ``max_sweeps`` sweeps (with a
    RuntimeWarning, as the command's warning). ``predict`` (a Store or path) also predicts the
    samples of another store (columns matched by ID, A1/A2 swaps handled): ``--predict``.

    Returns a ``Penalized`` whose ``coefficients`` and ``path`` are the command's
    PREFIX.coef.tsv and PREFIX.path.tsv as DataFrames (full binary64 numbers). Runs with the
    GIL released on ``num_threads`` threads. Raises InvalidArgumentError for fewer than 2
    samples with a value or a constant phenotype, ValueError for a bad option, KeyError for an
    unknown ``pheno_name``. ``progress=True`` shows tqdm bars for the statistics pass and the
    path (if tqdm is installed), or give a function ``(label, done, total, unit)``; Ctrl-C stops
    the call and raises KeyboardInterrupt (docs/PYTHON.md, "Ctrl-C and progress").
    """


def lasso(store: Store | str | os.PathLike[str], pheno: Any, *, pheno_name: str | None = None,
          keep: Any = None, columns: Any = None, lambdas: Any = None, nlambda: int = 100,
          lambda_min_ratio: float | None = None, tol: float = 1e-7, max_sweeps: int = 100000,
          predict: Store | str | os.PathLike[str] | None = None,
          num_threads: int | None = None, progress: Any = False) -> Penalized:
    return _penalized(store, pheno, 1.0, False, pheno_name=pheno_name, keep=keep,
                      columns=columns, lambdas=lambdas, nlambda=nlambda,
                      lambda_min_ratio=lambda_min_ratio, tol=tol, max_sweeps=max_sweeps,
                      predict=predict, num_threads=num_threads, progress=progress)


def ridge(store: Store | str | os.PathLike[str], pheno: Any, *, pheno_name: str | None = None,
          keep: Any = None, columns: Any = None, lambdas: Any = None, nlambda: int = 100,
          lambda_min_ratio: float | None = None, tol: float = 1e-7, max_sweeps: int = 100000,
          predict: Store | str | os.PathLike[str] | None = None,
          num_threads: int | None = None, progress: Any = False) -> Penalized:
    return _penalized(store, pheno, 0.0, True, pheno_name=pheno_name, keep=keep,
                      columns=columns, lambdas=lambdas, nlambda=nlambda,
                      lambda_min_ratio=lambda_min_ratio, tol=tol, max_sweeps=max_sweeps,
                      predict=predict, num_threads=num_threads, progress=progress)


def enet(store: Store | str | os.PathLike[str], pheno: Any, *, alpha: float = 0.5,
         pheno_name: str | None = None, keep: Any = None, columns: Any = None,
         lambdas: Any = None, nlambda: int = 100, lambda_min_ratio: float | None = None,
         tol: float = 1e-7, max_sweeps: int = 100000,
         predict: Store | str | os.PathLike[str] | None = None,
         num_threads: int | None = None, progress: Any = False) -> Penalized:
    return _penalized(store, pheno, alpha, False, pheno_name=pheno_name, keep=keep,
                      columns=columns, lambdas=lambdas, nlambda=nlambda,
                      lambda_min_ratio=lambda_min_ratio, tol=tol, max_sweeps=max_sweeps,
                      predict=predict, num_threads=num_threads, progress=progress)


lasso.__doc__ = _PENALIZED_DOC.format(
    summary="The lasso path (α = 1): ``colflow lasso``; coefficients lists the non-zero ones.")
ridge.__doc__ = _PENALIZED_DOC.format(
    summary="The ridge path (α = 0): ``colflow ridge``; coefficients lists every coefficient.")
enet.__doc__ = _PENALIZED_DOC.format(
    summary="The elastic-net path (α = ``alpha``, default 0.5, in [0, 1]): ``colflow enet``.")


@dataclasses.dataclass(frozen=True)
class BayesR:
    """The result of ``bayesr``: what ``colflow bayesr`` writes and logs."""

    #: ``ITER MU SIGMA2_G SIGMA2_E H2 VAR_G NONZERO PI_0..PI_K``, every kept (thinned)
    #: iteration, burn-in included (PREFIX.trace.tsv).
    trace: pd.DataFrame
    #: ``ID A1 PIP BETA BETA_SD BETA_PER_UNIT BETA_PER_UNIT_SD`` per selected column: posterior
    #: inclusion probability, mean and SD of the effect on the standardised scale and per A1
    #: allele in phenotype units (PREFIX.effects.tsv).
    effects: pd.DataFrame
    #: The phenotype fitted.
    phenotype: str
    #: n: selected samples with a phenotype value.
    samples: int
    #: Posterior mean and SD of h² and mean number of non-zero effects over the kept
    #: iterations after the burn-in (NaN without any), as the command logs them.
    h2_mean: float
    h2_sd: float
    nonzero_mean: float
    #: Kept iterations after the burn-in.
    posterior_samples: int
    #: The checkpoint's iteration when resumed, else 0; the iterations this call ran.
    resumed_from: int
    iterations_run: int
    #: How the iterations ran: "pipelined", "sequential" or "in-memory".
    mode: str
    #: Wall and compute-busy seconds of this call's iterations.
    seconds: float
    compute_busy_seconds: float


def _pair(name: str, value: Any) -> tuple[float, float]:
    pair = tuple(float(v) for v in value)
    if len(pair) != 2:
        raise ValueError(f"{name} is (df, scale), not {value!r}")
    return pair  # type: ignore[return-value]


def bayesr(
    store: Store | str | os.PathLike[str],
    pheno: Any,
    *,
    pheno_name: str | None = None,
    keep: Any = None,
    columns: Any = None,
    iterations: int = 1000,
    burnin: int = 200,
    thin: int = 1,
    seed: int = 1,
    mixture: Any = (1e-4, 1e-3, 1e-2),
    dirichlet_prior: float = 1.0,
    sigma2_g_prior: Any = (1e-4, 1e-4),
    sigma2_e_prior: Any = (1e-4, 1e-4),
    checkpoint: str | os.PathLike[str] | None = None,
    checkpoint_every: int = 100,
    resume: bool = False,
    mode: str = "auto",
    num_threads: int | None = None,
    progress: Any = False,
) -> BayesR:
    """BayesR, a Gibbs sampler of y = μ + Zβ + e: ``colflow bayesr``.

    Z holds the selected columns standardised over the n selected samples with a phenotype
    and y the phenotype standardised over them; each effect is zero or N(0, γ_k σ²_G) with
    mixture weights π (docs/ANALYSES.md). ``pheno``, ``pheno_name``, ``keep`` and ``columns`` as
    for ``lasso``. The options are the command's of the same names: ``iterations`` (the
    chain's length, a resumed chain included), ``burnin`` (shorter than the chain), ``thin``,
    ``seed`` (the same seed gives the same chain whatever the threads and mode),
    ``mixture`` (γ, increasing), ``dirichlet_prior``, ``sigma2_g_prior`` and
    ``sigma2_e_prior`` ((df, scale) pairs), ``mode`` ("auto", "pipelined", "sequential",
    "in-memory"). ``checkpoint`` is a file to save the chain to every ``checkpoint_every``
    iterations and after the last (the command's PREFIX.checkpoint; None, the default: no
    checkpoint), and ``resume=True`` continues the chain it holds.

    Returns a ``BayesR`` whose ``trace`` and ``effects`` are the command's PREFIX.trace.tsv
    and PREFIX.effects.tsv as DataFrames (full binary64 numbers). Runs with the GIL released
    on ``num_threads`` threads. Raises InvalidArgumentError for bad options, fewer than 3
    samples with a value or a constant phenotype; a damaged or foreign checkpoint raises
    colflow.Error (FormatError, NotFoundError or InvalidArgumentError).
    ``progress=True`` shows a tqdm bar per pass (if tqdm is installed), or give a function
    ``(label, done, total, unit)``; Ctrl-C stops the call and raises KeyboardInterrupt
    (docs/PYTHON.md, "Ctrl-C and progress").
    """
    store = _as_store(store)
    if mode not in ("auto", "pipelined", "sequential", "in-memory"):
        raise ValueError(
            f"mode '{mode}' not known, only 'auto', 'pipelined', 'sequential' and 'in-memory'")
    iterations = _count("iterations", iterations, 1)
    burnin = _count("burnin", burnin, 0)
    thin = _count("thin", thin, 1)
    seed = _count("seed", seed, 0)
    checkpoint_every = _count("checkpoint_every", checkpoint_every, 0)
    gamma = [float(v) for v in np.atleast_1d(np.asarray(mixture, dtype=np.float64))]
    g_df, g_scale = _pair("sigma2_g_prior", sigma2_g_prior)
    e_df, e_scale = _pair("sigma2_e_prior", sigma2_e_prior)
    if resume and checkpoint is None:
        raise ValueError("resume=True needs the checkpoint to resume")
    rows = _selected_rows(store, keep)
    cols = _selected_columns(store, columns)
    y, name = _phenotype(store, pheno, pheno_name)
    with _progress(progress, "bayesr") as report:
        r = _core.bayesr(
            store._core, rows, cols, y, iterations, burnin, thin, seed, gamma,
            float(dirichlet_prior), g_df, g_scale, e_df, e_scale,
            "" if checkpoint is None else os.fspath(checkpoint), checkpoint_every,
            bool(resume), mode, _threads(num_threads), report,
        )
    pi = r["pi"]
    trace = pd.DataFrame(
        {
            "ITER": r["iteration"].astype(np.int64),
            "MU": r["mu"],
            "SIGMA2_G": r["sigma2_g"],
            "SIGMA2_E": r["sigma2_e"],
            "H2": r["h2"],
            "VAR_G": r["var_g"],
            "NONZERO": r["nonzero"].astype(np.int64),
        }
        | {f"PI_{k}": pi[:, k] for k in range(pi.shape[1])}
    )
    c = store.columns.iloc[r["column"]]
    effects = pd.DataFrame({
        "ID": c.id.to_numpy(),
        "A1": c.a1.to_numpy(),
        "PIP": r["pip"],
        "BETA": r["beta"],
        "BETA_SD": r["beta_sd"],
        "BETA_PER_UNIT": r["beta_per_unit"],
        "BETA_PER_UNIT_SD": r["beta_per_unit_sd"],
    })
    return BayesR(trace, effects, name, r["samples"], r["h2_mean"], r["h2_sd"],
                  r["nonzero_mean"], r["posterior_samples"], r["resumed_from"],
                  r["iterations_run"], r["mode"], r["seconds"], r["compute_busy_seconds"])


# The products of the genotype matrix live in their own module, which uses the helpers above.
from ._products import GRM, grm, ld, ld_matrix, score  # noqa: E402
from ._wgr import WGR, wgr  # noqa: E402
