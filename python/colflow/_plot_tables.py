"""The tables ``colflow.plot`` draws, read and checked without matplotlib: association scans
(colflow's, plink2's ``.glm.*``, regenie's ``.regenie``, recognised by their headers), bayesr
traces, PCA eigenvectors and LD matrices (docs/PYTHON.md, "Pictures").

Bad input raises ValueError naming the file (or "table" for a DataFrame), the column or the
line, and the problem.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CHROMOSOME_NAMES", "chromosome_codes", "read_association", "read_eigenvectors",
           "read_ld", "read_trace"]

# Header names of each field, the first present wins: colflow's and plink2's #CHROM or #CHR,
# regenie's CHROM and GENPOS, PLINK 1.9's CHR, BP and SNP.
_CHROMOSOME = ("#CHROM", "#CHR", "CHROM", "CHR")
_POSITION = ("POS", "GENPOS", "BP")
_IDENTIFIER = ("ID", "SNP")
_P_VALUE = ("P",)
_LOG10_P = ("LOG10_P", "LOG10P")  # plink2 --glm log10, regenie: -log10(p)

#: Codes of the chromosomes after 1-22, in drawing order (PLINK's numbers 23-26 and names).
CHROMOSOME_NAMES = {23: "X", 24: "Y", 25: "XY", 26: "MT"}
_MISSING = ["NA", "nan", "NaN", "", "."]
_CODES = {**{str(c): c for c in range(1, 27)}, "X": 23, "Y": 24, "XY": 25, "PAR1": 25,
          "PAR2": 25, "MT": 26, "M": 26}


def _source_name(source: Any) -> str:
    return str(source) if isinstance(source, (str, os.PathLike)) else "table"


def _header(path: Any) -> tuple[list[str], str | None]:
    # The names of the header line and the separator: a tab when the header has one (colflow,
    # plink2), else any whitespace (regenie).
    with open(path, encoding="utf-8") as f:
        header = f.readline()
    if not header.strip():
        raise ValueError(f"{path}: empty file, expected a header line")
    sep = "\t" if "\t" in header else None
    return [n.strip() for n in header.split(sep)], sep


def _read_text_table(path: Any, usecols: list[str] | None = None) -> pd.DataFrame:
    # Only the columns in `usecols` when given: the C reader then converts no other field (a
    # million rows of colflow assoc's eleven columns parse in a third of the time of all).
    names, sep = _header(path)
    # Codes and names stay text (chromosome 01, an ID "NA"); numbers are parsed by the C reader,
    # and a column with anything else in it stays text for _numbers to name the bad line.
    text = {n: str for n in names if n in _CHROMOSOME + _IDENTIFIER + ("TEST", "IID", "FID",
                                                                      "#FID")
            and (usecols is None or n in usecols)}
    return pd.read_csv(path, sep="\t" if sep else r"\s+", dtype=text, usecols=usecols,
                       keep_default_na=False, na_values=_MISSING, engine="c")


def _as_frame(source: Any) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, (str, os.PathLike)):
        return _read_text_table(source)
    raise TypeError(f"expected a path or a pandas DataFrame, got {type(source).__name__}")


def _column(columns: list[str], names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in columns), None)


def _required(columns: list[str], names: tuple[str, ...], what: str, source: str) -> str:
    found = _column(columns, names)
    if found is None:
        raise ValueError(f"{source}: no {what} column (one of {', '.join(names)}); the header "
                         f"has {', '.join(map(str, columns))}")
    return found


def _line(row: int) -> int:
    # Line of the file holding data row `row` (the header is line 1).
    return row + 2


def chromosome_codes(values: Any, source: str = "table", column: str = "#CHROM") -> np.ndarray:
    """PLINK's chromosome numbers 1-26 for codes 1-22, X, Y, XY (PAR1, PAR2), MT (M) or their
    numbers, with or without a ``chr`` prefix, any case. Raises ValueError naming the line of
    the first unknown code."""
    # Each distinct code is looked up once (a hash of the column, not a sort of a million
    # strings), and only the distinct values become text: NA is a value of its own ("nan",
    # unknown), never dropped.
    inverse, unique = pd.factorize(pd.Series(values), use_na_sentinel=False)
    mapped = np.array([_CODES.get(str(u).upper().removeprefix("CHR"), 0) for u in unique],
                      dtype=np.int64)
    codes = mapped[inverse]
    if np.any(codes == 0):
        row = int(np.flatnonzero(codes == 0)[0])
        raise ValueError(f"{source}: line {_line(row)}: unknown chromosome code "
                         f"{pd.Series(values).iloc[row]!r} in column {column} (expected 1-26, "
                         "X, Y, XY, MT, optionally with a chr prefix)")
    return codes


def _numbers(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    # Numbers of a column; NA, nan and empty fields are NaN, anything else unreadable raises.
    raw = frame[column]
    if pd.api.types.is_numeric_dtype(raw.dtype):
        return raw.to_numpy(dtype=np.float64)
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    missing = raw.isna() | raw.astype(str).str.upper().isin([m.upper() for m in _MISSING])
    bad = np.isnan(values) & ~missing.to_numpy()
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{source}: line {_line(row)}: column {column}: {raw.iloc[row]!r} is "
                         "not a number")
    return values


def _association_fields(columns: list[str], name: str) -> tuple[str | None, ...]:
    # The header names read_association uses: chromosome, position, P, LOG10P (when there is
    # no P), ID and TEST, None for those absent. Raises without a chromosome, position or p.
    chrom = _required(columns, _CHROMOSOME, "chromosome", name)
    pos = _required(columns, _POSITION, "position", name)
    p_col = _column(columns, _P_VALUE)
    log_col = None if p_col is not None else _column(columns, _LOG10_P)
    if p_col is None and log_col is None:
        raise ValueError(f"{name}: no P column (P, or LOG10P / LOG10_P for -log10 p); the "
                         f"header has {', '.join(map(str, columns))}")
    return chrom, pos, p_col, log_col, _column(columns, _IDENTIFIER), _column(columns, ("TEST",))


def read_association(source: Any) -> pd.DataFrame:
    """An association table as columns CHROM (1-26), POS, ID and P, one row per test of an
    additive effect with a p-value (plink2's other TEST rows and NA p-values left out), in
    the table's order. Raises ValueError for a table without a chromosome, position or P
    (LOG10P) column, without any row, or with an unknown chromosome or an unreadable number
    (naming its line)."""
    name = _source_name(source)
    if isinstance(source, (str, os.PathLike)):
        fields = _association_fields(_header(source)[0], name)
        frame = _read_text_table(source, [f for f in fields if f is not None])
    else:
        frame = _as_frame(source)
        fields = _association_fields(list(frame.columns), name)
    if len(frame) == 0:
        raise ValueError(f"{name}: no rows under the header")
    chrom, pos, p_col, log_col, id_col, test = fields
    keep = np.ones(len(frame), dtype=bool)
    if test is not None:  # plink2 and regenie: one row per term; the variant's is ADD
        keep = (frame["TEST"].astype(str) == "ADD").to_numpy()
    p = _numbers(frame, p_col, name) if p_col else 10.0 ** -_numbers(frame, log_col, name)
    positions = _numbers(frame, pos, name)
    if np.any(np.isnan(positions[keep])):
        row = int(np.flatnonzero(np.isnan(positions) & keep)[0])
        raise ValueError(f"{name}: line {_line(row)}: column {pos}: no position")
    if np.any((p < 0) | (p > 1)):
        row = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise ValueError(f"{name}: line {_line(row)}: p-value {p[row]} is outside [0, 1]")
    codes = chromosome_codes(frame[chrom], name, chrom)
    keep = keep & ~np.isnan(p)
    ids = frame[id_col].to_numpy() if id_col else np.array([""] * len(frame), dtype=object)
    return pd.DataFrame({"CHROM": codes[keep], "POS": positions[keep].astype(np.int64),
                         "ID": ids[keep], "P": p[keep]})


def read_trace(source: Any) -> pd.DataFrame:
    """A bayesr trace (``PREFIX.trace.tsv``: ITER MU SIGMA2_G SIGMA2_E H2 VAR_G NONZERO
    PI_0..), a DataFrame of one, or a ``BayesR`` result (its ``trace``), with numeric
    columns. Raises ValueError without the columns ITER and H2 or without rows."""
    if hasattr(source, "trace") and isinstance(source.trace, pd.DataFrame):
        source = source.trace
    name = _source_name(source)
    frame = _as_frame(source)
    for needed in ("ITER", "H2"):
        if needed not in frame.columns:
            raise ValueError(f"{name}: no {needed} column: not a bayesr trace (ITER MU "
                             "SIGMA2_G SIGMA2_E H2 VAR_G NONZERO PI_0..)")
    if len(frame) == 0:
        raise ValueError(f"{name}: no rows under the header")
    return pd.DataFrame({c: _numbers(frame, c, name) for c in frame.columns})


def read_eigenvectors(source: Any) -> pd.DataFrame:
    """A PCA's sample table (``colflow pca``'s and plink2's ``.eigenvec``: #FID IID PC1 ..., or
    IID PC1 ...), with PC columns as numbers. Raises ValueError without IID or PC1 or rows."""
    name = _source_name(source)
    frame = _as_frame(source).rename(columns={"#FID": "FID", "#IID": "IID"})
    for needed in ("IID", "PC1"):
        if needed not in frame.columns:
            raise ValueError(f"{name}: no {needed} column: expected #FID IID PC1 PC2 ...")
    if len(frame) == 0:
        raise ValueError(f"{name}: no rows under the header")
    frame = frame.copy()
    for c in frame.columns:
        if str(c).startswith("PC") and str(c)[2:].isdigit():
            frame[c] = _numbers(frame, c, name)
    return frame


_BAND_MAGIC = b"CFLDBAND"


def _read_band(path: Path) -> np.ndarray:
    # colflow ld ... band (docs/FORMAT.md, "Banded LD matrix"), as a square matrix with NaN
    # outside the band.
    data = path.read_bytes()
    if len(data) < 40 or data[:8] != _BAND_MAGIC:
        raise ValueError(f"{path}: not a colflow banded LD matrix (no CFLDBAND header)")
    version, width, n, v = struct.unpack_from("<IIQQ", data, 8)
    if version != 1 or width not in (4, 8):
        raise ValueError(f"{path}: unsupported band version {version} or value width {width}")
    if len(data) != 40 + 8 * n + width * v:
        raise ValueError(f"{path}: {len(data)} bytes, expected {40 + 8 * n + width * v} for "
                         f"{n} variants and {v} values")
    ends = np.frombuffer(data, "<u8", n, 40).astype(np.int64)
    values = np.frombuffer(data, "<f4" if width == 4 else "<f8", v, 40 + 8 * n)
    matrix = np.full((n, n), np.nan)
    start = 0
    for i in range(n):
        row = values[start:start + ends[i] - i]
        matrix[i, i:ends[i]] = row
        matrix[i:ends[i], i] = row
        start += ends[i] - i
    return matrix


def read_ld(source: Any) -> np.ndarray:
    """An LD matrix as a square float array: an array, ``colflow ld``'s banded ``.ldband``
    (NaN outside the band), its or PLINK's ``.ld.bin`` (float64, or float32 for a ``.bin4``
    suffix), or a text ``square`` matrix. Raises ValueError for a matrix that is not square."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix == ".ldband":
            return _read_band(path)
        if path.suffix in (".bin", ".bin4"):
            raw = np.fromfile(path, np.float32 if path.name.endswith("bin4") else np.float64)
            n = int(round(np.sqrt(raw.size)))
            if n * n != raw.size:
                raise ValueError(f"{path}: {raw.size} values, not a square matrix")
            return raw.reshape(n, n).astype(np.float64)
        rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
        rows = [r for r in rows if r]
        for k, r in enumerate(rows):
            if len(r) != len(rows):
                raise ValueError(f"{path}: line {k + 1}: {len(r)} values, expected {len(rows)} "
                                 "(a square matrix: colflow ld --r2 square)")
        return np.array(rows, dtype=np.float64).reshape(len(rows), len(rows))
    matrix = np.asarray(source, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"an LD matrix must be square, got shape {matrix.shape}")
    return matrix
