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


def is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def selected_rows(store: Store, keep: Any) -> np.ndarray:
    # keep: None (every sample), a path to a sample list read as the command's --keep, IIDs
    # (strings: a pandas Index or a list), or a row index of Store.read (integers, a slice,
    # booleans).
    if keep is None:
        return store._resolve((None, [0]))[0]
    if is_path(keep):
        return _core.keep_rows(store._core, os.fspath(keep))
    by_iid = _positions_of_names(keep, store.samples.iid, "samples")
    return by_iid if by_iid is not None else store._resolve((keep, [0]))[0]


def selected_columns(store: Store, columns: Any) -> np.ndarray:
    # columns: None (all), variant IDs (strings), or a column index of Store.read.
    if columns is not None:
        by_id = _positions_of_names(columns, store.columns.id, "columns")
        if by_id is not None:
            return by_id
    return store._resolve((None, columns))[1]


def as_store(store: Store | str | os.PathLike[str]) -> Store:
    return store if isinstance(store, Store) else Store(store)


def column_fields(store: Store, columns: np.ndarray) -> dict[str, Any]:
    c = store.columns.iloc[columns]
    return {
        "#CHR": c.chrom.to_numpy(),
        "POS": pd.to_numeric(c.pos, errors="coerce").to_numpy(),
        "ID": c.id.to_numpy(),
        "A1": c.a1.to_numpy(),
        "A2": c.a2.to_numpy(),
    }


_TABLE_FORMS = (
    "a pandas DataFrame or Series indexed by IID, a numpy array with one row per sample, or "
    "the path of a PLINK phenotype file (str or os.PathLike)"
)


def sample_table(store: Store, values: Any, default_name: str) -> tuple[np.ndarray, list[str]]:
    # Store rows x variables of float64 (NaN missing), matched by IID for pandas objects: a
    # Series or DataFrame indexed by IID (samples it lacks are missing, samples the store lacks
    # ignored, as for the command's files); a numpy array has one row per store sample; a path
    # is read by the library as the command reads --pheno and --covar.
    n = store.shape[0]
    what = "pheno" if default_name == "PHENO" else "covar"
    if is_path(values):
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


def sex_codes(store: Store, sex: Any) -> list[str]:
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
    if is_path(sex):
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


def one_phenotype(store: Store, pheno: Any, pheno_name: str | None) -> tuple[np.ndarray, str]:
    # The one phenotype a fit takes, as assoc reads its table: the column named pheno_name, or
    # the first (the command's --pheno-name); one float64 value per store row, NaN missing.
    values, names = sample_table(store, pheno, "PHENO")
    if pheno_name is None:
        column = 0
    elif str(pheno_name) in names:
        column = names.index(str(pheno_name))
    else:
        raise KeyError(f"phenotype {pheno_name!r} not given; the phenotypes are {names}")
    return np.ascontiguousarray(values[:, column]), names[column]
