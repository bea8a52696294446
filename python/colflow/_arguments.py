"""The arguments the analyses share, converted to what the extension takes.

Sample and column selections become int64 arrays of store positions (each position once, in
store order, for the forms by name), phenotype and covariate tables become float64 arrays of
one row per store sample (NaN missing), sexes become one code per store sample. The forms
accepted are those of docs/PYTHON.md; anything else raises TypeError, ValueError or KeyError
naming the argument.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
import pandas as pd

from ._extension import _core
from ._store import Store

__all__ = [
    "as_store",
    "column_fields",
    "is_path",
    "one_phenotype",
    "sample_table",
    "selected_columns",
    "selected_rows",
    "sex_codes",
]


def is_path(value: Any) -> bool:
    """Whether an argument names a file (str or os.PathLike) rather than giving values."""
    return isinstance(value, (str, os.PathLike))


def as_store(store: Store | str | os.PathLike[str]) -> Store:
    """The store itself, or the store the path names, opened."""
    return store if isinstance(store, Store) else Store(store)


# -- selections ---------------------------------------------------------------------------------


def selected_rows(store: Store, keep: Any) -> np.ndarray:
    """keep: None (every sample), a path to a sample list read as the command's --keep, IIDs
    (strings: a pandas Index or a list), or a row index of Store.read (integers, a slice,
    booleans)."""
    if keep is None:
        return store._resolve((None, [0]))[0]
    if is_path(keep):
        return _core.keep_rows(store._core, os.fspath(keep))
    by_iid = _positions_of_names(keep, store.samples.iid, "samples")
    return by_iid if by_iid is not None else store._resolve((keep, [0]))[0]


def selected_columns(store: Store, columns: Any) -> np.ndarray:
    """columns: None (all), variant IDs (strings), or a column index of Store.read."""
    if columns is not None:
        by_id = _positions_of_names(columns, store.columns.id, "columns")
        if by_id is not None:
            return by_id
    return store._resolve((None, columns))[1]


def _positions_of_names(selection: Any, names: pd.Series, what: str) -> Optional[np.ndarray]:
    # The positions of `names` that a selection of strings (a pandas Index or Series, a list, an
    # array) lists, in store order; None when the selection is not one of names. KeyError for a
    # name the store lacks.
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


def column_fields(store: Store, columns: np.ndarray) -> dict[str, Any]:
    """The leading fields of the command's per-column tables for these store positions:
    ``#CHR POS ID A1 A2`` (POS a number, NaN where the store's is not one)."""
    c = store.columns.iloc[columns]
    return {
        "#CHR": c.chrom.to_numpy(),
        "POS": pd.to_numeric(c.pos, errors="coerce").to_numpy(),
        "ID": c.id.to_numpy(),
        "A1": c.a1.to_numpy(),
        "A2": c.a2.to_numpy(),
    }


# -- phenotypes and covariates ------------------------------------------------------------------

_TABLE_FORMS = (
    "a pandas DataFrame or Series indexed by IID, a numpy array with one row per sample, or "
    "the path of a PLINK phenotype file (str or os.PathLike)"
)


def sample_table(store: Store, values: Any, default_name: str) -> tuple[np.ndarray, list[str]]:
    """Store rows x variables of float64 in order "F" (NaN missing) and the variables' names.

    A Series or DataFrame is matched by IID (samples it lacks are missing, samples the store
    lacks ignored, as for the command's files); a numpy array (or list) has one row per store
    sample, its columns named ``default_name``1, ...; a path is read by the library as the
    command reads --pheno and --covar. -9 is missing, as in the command's files.
    """
    what = "pheno" if default_name == "PHENO" else "covar"
    if is_path(values):
        r = _core.read_table(store._core, os.fspath(values), default_name)
        table = np.asarray(r["values"]).reshape((len(r["names"]), store.shape[0])).T
        return np.asfortranarray(table), list(r["names"])
    if not isinstance(values, (pd.Series, pd.DataFrame, np.ndarray, list, tuple)):
        raise TypeError(f"{what} must be {_TABLE_FORMS}; got {type(values).__name__}")
    if isinstance(values, pd.Series):
        values = values.to_frame(values.name if values.name is not None else f"{default_name}1")
    if isinstance(values, pd.DataFrame):
        table, names = _table_by_iid(store, values)
    else:
        table, names = _table_by_row(values, store.shape[0], what, default_name)
    if len(names) == 0:
        raise ValueError(f"no {default_name.lower()} column given")
    table = np.where(table == -9, np.nan, table)
    return np.asfortranarray(table), names


def _table_by_iid(store: Store, values: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    # The frame's rows in store order by IID; an index of integers matches the IIDs' text.
    if not values.index.is_unique:
        raise ValueError("the phenotype or covariate index lists a sample twice")
    names = [str(c) for c in values.columns]
    values = values.set_axis(values.index.map(str), axis=0)
    if not values.index.is_unique:
        raise ValueError("the phenotype or covariate index lists a sample twice")
    aligned = values.reindex(store.samples.iid.to_numpy())
    return aligned.apply(pd.to_numeric, errors="raise").to_numpy(dtype=np.float64), names


def _table_by_row(values: Any, n: int, what: str,
                  default_name: str) -> tuple[np.ndarray, list[str]]:
    # One row per store sample, as given; a 1-D array is one variable.
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
    return table, [f"{default_name}{i + 1}" for i in range(table.shape[1])]


def one_phenotype(store: Store, pheno: Any, pheno_name: str | None) -> tuple[np.ndarray, str]:
    """The one phenotype a fit takes, read as ``sample_table`` reads it: the column named
    ``pheno_name``, or the first (the command's --pheno-name), as one contiguous float64 value
    per store row (NaN missing), and its name. KeyError for a name not given."""
    values, names = sample_table(store, pheno, "PHENO")
    if pheno_name is None:
        column = 0
    elif str(pheno_name) in names:
        column = names.index(str(pheno_name))
    else:
        raise KeyError(f"phenotype {pheno_name!r} not given; the phenotypes are {names}")
    return np.ascontiguousarray(values[:, column]), names[column]


# -- sexes --------------------------------------------------------------------------------------


def sex_codes(store: Store, sex: Any) -> list[str]:
    """One code per store sample for the extension, "" where the store's sex stays.

    ``sex`` is a sex file's path (read by the library as --sex FILE), a Series indexed by IID
    (store samples it lacks keep theirs, others are ignored) or one value per store sample.
    Numbers and strings are read as plink2 --update-sex reads a SEX field, by their first
    character (1/M male, 2/F female, 0/N/U unknown); NaN and None are unknown.
    """
    iids = store.samples.iid.to_numpy()
    if is_path(sex):
        return list(_core.read_sexes(store._core, os.fspath(sex)))
    if isinstance(sex, pd.Series):
        index = sex.index.map(str)
        if not index.is_unique:
            raise ValueError("the sex index lists a sample twice")
        by_iid = dict(zip(index, sex.to_numpy()))
        return [_sex_code(by_iid[i]) if i in by_iid else "" for i in iids]
    values = np.asarray(sex, dtype=object)
    if values.ndim != 1 or values.shape[0] != len(iids):
        raise ValueError(
            f"a numpy sex array needs one value per sample ({len(iids)}), not shape {values.shape}"
        )
    return [_sex_code(v) for v in values]


def _sex_code(value: Any) -> str:
    # The text the extension reads a sex from: "0" (unknown) for None, NA, NaN and "", an
    # integral float without its ".0" (2.0 is "2"), anything else as str() writes it. A boolean
    # raises ValueError.
    if value is None or value is pd.NA or (
        isinstance(value, (float, np.floating)) and np.isnan(value)
    ):
        return "0"
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"a sex is a code (1/M male, 2/F female, 0/NA unknown), not {value}")
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    return str(value) or "0"
