"""Scans of the columns one at a time: ``stats`` and ``assoc``, the commands ``colflow stats``
and ``colflow assoc`` as pandas DataFrames with the command's column names and full binary64
numbers (docs/PYTHON.md)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, column_fields, sample_table, selected_columns, selected_rows
from ._arguments import sex_codes
from ._checks import thread_count
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["assoc", "stats"]


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
    store = as_store(store)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    with reporter(progress, "stats") as report:
        r = _core.stats(store._core, rows, cols, thread_count(num_threads), report)
    return pd.DataFrame(_stats_fields(store, r))


def _stats_fields(store: Store, r: dict[str, Any]) -> dict[str, Any]:
    # The command's columns for the store's kind, one row per column the extension reports.
    observed = r["observed"].astype(np.int64)
    missing = r["missing"].astype(np.int64)
    ids = store.columns.id.iloc[r["column"]].to_numpy()
    if store.value_type in ("float32", "float64"):
        return {
            "ID": ids,
            "OBS_CT": observed,
            "MISSING_CT": missing,
            "MEAN": r["mean"],
            "SD": r["sd"],
            "MIN": r["min"],
            "MAX": r["max"],
        }
    total = observed + missing
    with np.errstate(invalid="ignore", divide="ignore"):
        f_miss = np.where(total > 0, missing / np.maximum(total, 1), np.nan)
    fields = column_fields(store, r["column"])
    return {
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
    store = as_store(store)
    if firth not in ("fallback", "always", "never"):
        raise ValueError(f"firth '{firth}' not known, only 'fallback', 'always' and 'never'")
    if score_test and firth != "fallback":
        raise ValueError("firth applies to the fitted Wald test; score_test fits no column")
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    values, names = sample_table(store, pheno, "PHENO")
    if len(set(names)) != len(names):
        raise ValueError("phenotype names must be distinct")
    covar_values, covar_names = (None, [])
    if covar is not None:
        covar_values, covar_names = sample_table(store, covar, "COVAR")
    elif covar_variance_standardize:
        raise ValueError("covar_variance_standardize needs covariates (covar)")
    sexes = None if sex is None else sex_codes(store, sex)
    kinds = _test_kinds(binary, names)
    with reporter(progress, "assoc") as report:
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
            sexes,
            bool(quantile_normalize),
            bool(covar_variance_standardize),
            thread_count(num_threads),
            report,
        )
    frames = {r["name"]: _assoc_frame(store, r, odds_ratio) for r in results}
    return {n: frames[n] for n in names}


def _test_kinds(binary: bool | list[str] | None, names: list[str]) -> list[str]:
    # Per phenotype, what the extension is told: "auto" (case/control when the values are PLINK
    # codes, as the command decides), or "binary" or "quantitative" as forced.
    if binary is None:
        return ["auto"] * len(names)
    if binary is True or binary is False:
        return ["binary" if binary else "quantitative"] * len(names)
    listed = [str(b) for b in binary]
    unknown = set(listed) - set(names)
    if unknown:
        raise ValueError(f"binary names phenotypes that are not given: {sorted(unknown)}")
    return ["binary" if n in listed else "quantitative" for n in names]


def _assoc_frame(store: Store, r: dict[str, Any], odds_ratio: bool) -> pd.DataFrame:
    # One phenotype's table with the command's columns for its model; attrs hold the model
    # ("linear" or "logistic") and the samples used.
    fields = column_fields(store, r["column"])
    frame: dict[str, Any] = {k: fields[k] for k in ("#CHR", "POS", "ID", "A1", "A2")}
    if r["model"] == "linear":
        frame.update({
            "N_OBS": r["n_obs"].astype(np.int64),
            "BETA": r["beta"],
            "SE": r["se"],
            "T_STAT": r["stat"],
        })
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
    return df
