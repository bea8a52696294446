"""Whole-genome regression: ``colflow wgr`` (regenie's step 1) as a function.

The predictions are those of the command's ``.loco`` files, with every digit.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, sample_table, selected_columns, selected_rows
from ._checks import thread_count
from ._errors import InvalidArgumentError
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["WGR", "wgr"]


@dataclasses.dataclass
class WGR:
    """Step 1 of whole-genome regression.

    loco: per trait, a DataFrame of the samples used (index: IID) by chromosomes 1-23
        (columns): the prediction of the trait without that chromosome, on the scale of the
        covariate-adjusted trait scaled to ||y||^2 = n - covariates (X is 23), or in log odds
        without the covariates' fit for a case/control trait;
    level1: per trait and level-1 shrinkage (TRAIT, TAU, CV_LOSS, CHOSEN), as PREFIX.wgr.tsv:
        the loss is the mean squared error, or the -log-likelihood per sample (case/control);
    leave_one_out: whether the fits were validated by leave-one-out rather than by folds.
    """
    loco: dict[str, pd.DataFrame]
    level1: pd.DataFrame
    columns_used: int
    blocks: int
    leave_one_out: bool


def wgr(
    store: Store | str | os.PathLike[str],
    pheno: Any,
    covar: Any = None,
    *,
    block_size: int = 1000,
    allow_short_chromosomes: bool = False,
    folds: int | None = None,
    loocv: bool = False,
    l1_full: bool = False,
    l0: int = 5,
    l1: int = 5,
    binary: Any = (),
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> WGR:
    """Whole-genome regression with LOCO predictions: ``colflow wgr`` (docs/ANALYSES.md).

    ``pheno`` and ``covar`` take the forms of ``assoc`` (DataFrames indexed by IID, numpy
    arrays of one row per sample, or the paths of PLINK-style files). The traits named in
    ``binary`` are case/control, coded 0 control and 1 case (the command's ``--binary --1``);
    the others are quantitative. ``block_size``, ``folds``, ``loocv``, ``l1_full``, ``l0``
    and ``l1`` are the command's ``--block-size``, ``--folds``, ``--loocv``, ``--l1-full``,
    ``--l0`` and ``--l1``; ``allow_short_chromosomes`` is accepted and changes nothing (a
    chromosome shorter than one block is one smaller block, as in regenie). Without ``folds`` or ``loocv``, 5 folds, or leave-one-out for a case/control
    trait on fewer than 5,000 samples (regenie's rule). The same bits as the command at any
    thread count. Raises InvalidArgumentError as the command does.
    """
    store = as_store(store)
    values, names = sample_table(store, pheno, "PHENO")
    covar_values, covar_names = (None, [])
    if covar is not None:
        covar_values, covar_names = sample_table(store, covar, "COVAR")
    binary = {binary} if isinstance(binary, str) else set(binary)
    if binary - set(names):
        raise InvalidArgumentError(f"binary: no trait named {sorted(binary - set(names))[0]}")
    if loocv and folds is not None:
        raise InvalidArgumentError("loocv and folds cannot both apply")
    if l1_full and not loocv:
        raise InvalidArgumentError("l1_full needs loocv")
    rows, cols = selected_rows(store, keep), selected_columns(store, columns)
    with reporter(progress, "wgr") as report:
        r = _core.wgr(store._core, rows, cols, values, names, covar_values, covar_names,
                      block_size, allow_short_chromosomes, folds, loocv, l1_full, l0, l1,
                      [n in binary for n in names], thread_count(num_threads), report)
    return _wgr_result(store, r, names)


def _wgr_result(store: Store, r: dict[str, Any], names: list[str]) -> WGR:
    # Per trait, in the order given: its LOCO frame (samples used x chromosomes 1-23) and its
    # rows of the level-1 table.
    iids = store.samples.iid.to_numpy()[np.asarray(r["rows"])]
    chromosomes = list(range(1, 24))
    loco = {}
    level1 = []
    for p, name in enumerate(names):
        m = np.asarray(r["loco"][p]).reshape(23, len(iids), order="F")
        loco[name] = pd.DataFrame(m.T, index=pd.Index(iids, name="IID"), columns=chromosomes)
        tau, loss = np.asarray(r["tau"][p]), np.asarray(r["loss"][p])
        level1.append(pd.DataFrame({"TRAIT": name, "TAU": tau, "CV_LOSS": loss,
                                    "CHOSEN": np.arange(len(tau)) == r["chosen"][p]}))
    return WGR(loco, pd.concat(level1, ignore_index=True), int(r["columns_used"]),
               int(r["blocks"]), bool(r["leave_one_out"]))
