"""Quality control: ``hardy``, the command ``colflow hardy`` (plink2's ``--hardy``) as a pandas
DataFrame with plink2's column names and full binary64 numbers (docs/PYTHON.md)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, selected_columns, selected_rows, sex_codes
from ._checks import thread_count
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["hardy"]


def hardy(
    store: Store | str | os.PathLike[str],
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    *,
    sex: Any = None,
    hard_call_threshold: float = 0.1,
    progress: Any = False,
) -> pd.DataFrame:
    """Hardy-Weinberg equilibrium per column: ``colflow hardy`` as one DataFrame.

    ``keep`` and ``columns`` select samples and columns as in ``stats``, ``sex`` replaces the
    store's sexes as in ``assoc``; ``hard_call_threshold`` is the command's
    ``--hard-call-threshold`` for dosage stores (a dosage within it of 0, 1 or 2 makes the call).

    One row per selected column, in the store's order, with plink2's names and alleles (A1 the
    .bim's sixth column, AX its fifth, as plink2 names a .bed's alleles): ``#CHROM ID A1 AX
    HOM_A1_CT HET_A1_CT TWO_AX_CT MALE_A1_CT MALE_AX_CT O(HET_A1) E(HET_A1) P MIDP``. On X the
    three genotype counts are the females' and MALE_A1_CT, MALE_AX_CT the males' haploid calls
    (the columns of plink2's ``.hardy.x``, tested as plink2 does); elsewhere the males' counts
    are 0. P and MIDP (the exact test and its mid-p form, both computed) are NaN where no test
    is made: on Y and MT, and on X without a selected sample of known sex. The command's
    ``.hardy`` holds the tested rows not on X, its ``.hardy.x`` those on X.
    ``progress`` and Ctrl-C as in ``stats``.
    """
    store = as_store(store)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    sexes = None if sex is None else sex_codes(store, sex)
    with reporter(progress, "hardy") as report:
        r = _core.hardy(
            store._core,
            rows,
            cols,
            sexes,
            float(hard_call_threshold),
            thread_count(num_threads),
            report,
        )
    return pd.DataFrame(_hardy_fields(store, r))


def _hardy_fields(store: Store, r: dict[str, Any]) -> dict[str, Any]:
    # plink2's A1 is the store's A2, so its HOM_A1_CT is the store's two copies of A2.
    c = store.columns.iloc[r["column"]]
    hom_a1 = r["hom_a2"].astype(np.int64)
    het = r["het"].astype(np.int64)
    two_ax = r["hom_a1"].astype(np.int64)
    calls = hom_a1 + het + two_ax
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = (2 * hom_a1 + het) / (2 * calls)
        observed = np.where(calls > 0, het / calls, np.nan)
        expected = np.where(calls > 0, 2 * freq * (1 - freq), np.nan)
    return {
        "#CHROM": c.chrom.to_numpy(),
        "ID": c.id.to_numpy(),
        "A1": c.a2.to_numpy(),
        "AX": c.a1.to_numpy(),
        "HOM_A1_CT": hom_a1,
        "HET_A1_CT": het,
        "TWO_AX_CT": two_ax,
        "MALE_A1_CT": r["male_a2"].astype(np.int64),
        "MALE_AX_CT": r["male_a1"].astype(np.int64),
        "O(HET_A1)": observed,
        "E(HET_A1)": expected,
        "P": r["p"],
        "MIDP": r["midp"],
    }
