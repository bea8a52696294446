"""Conversion of inputs into stores: ``preprocess``, the command ``colflow preprocess``.

The library opens the inputs and converts them as the command does, so a store made here equals
the command's on the same input and options (docs/PYTHON.md, "preprocess"); this module checks
the arguments and turns a numpy array into what the library reads in place.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
import pandas as pd

from ._checks import thread_count
from ._extension import _core
from ._progress import reporter

__all__ = ["preprocess"]


_FORMATS = ("bed", "pgen", "bgen", "vcf", "npy", "csv", "array", "inputs")
_SAMPLE_FIELDS = ("fid", "iid", "father", "mother", "sex", "phenotype")


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
    array) or the paths' endings (.pgen; .bgen; .vcf, .vcf.gz, .vcf.bgz, .bcf; .npy; .csv, .tsv;
    anything else a PLINK prefix):

    - ``"bed"``: PLINK 1 filesets by prefix (``--bed``; a trailing ".bed" is allowed), or one
      .bed with ``bim=`` and ``fam=`` (``--bed-file --bim --fam``);
    - ``"pgen"``: PLINK 2 filesets (``--pfile``), by prefix or .pgen path (its .pvar or
      .pvar.zst and .psam beside it): hard calls, or ALT dosages when the .pgen holds dosages;
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
    source = _paths_or_array(source)
    format = _checked_format(source, format)
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
        threads=thread_count(num_threads),
    )
    if format == "array":
        _refuse_file_options(
            given=dict(bim=bim, fam=fam, sample=sample, dosage=dosage),
            changed=dict(ref_first=ref_first, split_multiallelic=split_multiallelic,
                         half_call=half_call != "error", csv_header=csv_header != "auto",
                         csv_ids=csv_ids != "auto"))
        matrix = _float_matrix(source)
        with reporter(progress, "preprocess") as report:
            return _core.preprocess_array(
                matrix, _array_samples(samples, matrix.shape[0]),
                _array_columns(columns, matrix.shape[1]), os.fspath(out), progress=report,
                **common)
    with reporter(progress, "preprocess") as report:
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


def _paths_or_array(source: Any) -> Any:
    # A path becomes a list of one; a list or tuple of paths must not be empty; an array is
    # returned as it is.
    if isinstance(source, (str, os.PathLike)):
        return [source]
    if isinstance(source, (list, tuple)):
        if not source:
            raise ValueError("no input: source is an empty list")
        return source
    if not isinstance(source, np.ndarray):
        raise TypeError(f"source is a path, a list of paths or a numpy array, not "
                        f"{type(source).__name__}")
    return source


def _checked_format(source: Any, given: Optional[str]) -> str:
    # The format given, or inferred when None; either way one that takes this kind of source.
    if given is None:
        given = _input_format(source)
    elif given not in _FORMATS:
        raise ValueError(f"unknown format {given!r}: one of {', '.join(_FORMATS)}")
    if (given == "array") != isinstance(source, np.ndarray):
        raise TypeError(f"format {given!r} takes "
                        f"{'a numpy array' if given == 'array' else 'paths'}, not "
                        f"{type(source).__name__}")
    return given


def _input_format(source: Any) -> str:
    # The format of a source by its type or (the library's rule, that of the command's --inputs
    # list) the ending of its paths: .pgen, .bgen, .vcf/.vcf.gz/.vcf.bgz/.bcf, .npy, .csv/.tsv, else a
    # PLINK prefix.
    if isinstance(source, np.ndarray):
        return "array"
    found = {_core.input_format(os.fspath(p)) for p in source}
    if len(found) > 1:
        raise ValueError(f"the inputs of one store must be of one format, not {sorted(found)}")
    name = found.pop()
    return "bed" if name == "plink" else name


def _refuse_file_options(given: dict[str, Any], changed: dict[str, bool]) -> None:
    # An array takes no option of file inputs: those given (not None) or changed from their
    # default are named, in this order, in the ValueError.
    other = [k for k, v in given.items() if v is not None] + [k for k, v in changed.items() if v]
    if other:
        raise ValueError(f"{', '.join(other)}: options of file inputs, not of an array")


def _float_matrix(array: np.ndarray) -> np.ndarray:
    # The array as the library reads it in place: float32 or float64, 2-D (1-D is one column),
    # in the machine's byte order (copied only when it is in the other order).
    if array.dtype.kind != "f" or array.dtype.itemsize not in (4, 8):
        raise TypeError(f"the array holds float32 or float64 values, not {array.dtype}")
    if array.ndim == 1:
        array = array[:, np.newaxis]
    if array.ndim != 2:
        raise ValueError(f"the array is 2-D (samples, columns) or 1-D, not {array.ndim}-D")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


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
    # One name per array column, as str(); None leaves the library's col1..colM.
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)):
        raise TypeError("columns is a sequence of names, not a string")
    names = [str(c) for c in columns]
    if len(names) != count:
        raise ValueError(f"{len(names)} column names for an array of {count} columns")
    return names
