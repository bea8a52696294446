"""Quality control: ``qc``, ``hardy`` and ``king``, the commands ``colflow qc`` (plink2's filters),
``colflow hardy`` (``--hardy``) and ``colflow king`` (``--make-king-table``, ``--king-cutoff``) as
pandas DataFrames with plink2's column names and full binary64 numbers (docs/PYTHON.md)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, selected_columns, selected_rows, sex_codes
from ._checks import thread_count
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["QC", "King", "clump", "hardy", "king", "qc"]


@dataclasses.dataclass
class QC:
    """What ``qc`` returns: the samples (``#FID IID``, plink2's ``--write-samples``) and the
    variants (``ID``, its ``--write-snplist``) that pass, in the store's order; ``removed``, how
    many each filter removed among those the earlier ones left (keys ``mind`` (samples),
    ``geno``, ``hwe``, ``allele_frequency`` (variants)); and plink2's log lines."""

    samples: pd.DataFrame
    variants: pd.DataFrame
    removed: dict[str, int]
    log: list[str]


def qc(
    store: Store | str | os.PathLike[str],
    keep: Any = None,
    columns: Any = None,
    *,
    maf: float | None = None,
    max_maf: float | None = None,
    mac: float | None = None,
    max_mac: float | None = None,
    geno: float | None = None,
    mind: float | None = None,
    hwe: float | None = None,
    hwe_midp: bool = False,
    hwe_keep_fewhet: bool = False,
    nonfounders: bool = False,
    sex: Any = None,
    hard_call_threshold: float = 0.1,
    num_threads: int | None = None,
    progress: Any = False,
) -> QC:
    """plink2's quality-control filters: ``colflow qc`` (docs/ANALYSES.md, "colflow qc").

    ``colflow.qc(store, maf=0.01, mac=100, geno=0.1, hwe=1e-15, mind=0.1)`` is regenie's recipe
    ``plink2 --maf 0.01 --mac 100 --geno 0.1 --hwe 1e-15 --mind 0.1 --write-snplist
    --write-samples``: ``mind`` first (a sample's largest missing fraction), then ``geno`` (a
    variant's), ``hwe`` (the exact test's P below it removes the variant; ``hwe_midp`` and
    ``hwe_keep_fewhet`` its modifiers), and ``maf``/``max_maf``/``mac``/``max_mac`` (the minor
    allele's frequency and count among the founders' alleles, every sample's with
    ``nonfounders``), each over what the earlier ones left, with plink2's rules for X, Y and
    MT. A filter left at None is not applied. ``keep`` and ``columns`` select first, as in
    ``stats``; ``sex`` as in ``assoc``; ``hard_call_threshold`` as in ``hardy``. Raises
    InvalidArgumentError naming the option (``--maf`` ...) for a threshold out of range, or
    naming the filter when no sample or variant is left. ``progress`` and Ctrl-C as in
    ``stats``.
    """
    store = as_store(store)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    sexes = None if sex is None else sex_codes(store, sex)

    def number(value: float | None) -> float | None:
        return None if value is None else float(value)

    with reporter(progress, "qc") as report:
        r = _core.qc(
            store._core,
            rows,
            cols,
            number(mind),
            number(geno),
            number(hwe),
            bool(hwe_midp),
            bool(hwe_keep_fewhet),
            number(maf),
            number(max_maf),
            number(mac),
            number(max_mac),
            bool(nonfounders),
            sexes,
            float(hard_call_threshold),
            thread_count(num_threads),
            report,
        )
    samples = store.samples.iloc[r["rows"]][["fid", "iid"]]
    samples = samples.rename(columns={"fid": "#FID", "iid": "IID"}).reset_index(drop=True)
    variants = pd.DataFrame({"ID": store.columns.id.iloc[r["columns"]].to_numpy()})
    removed = dict(zip(("mind", "geno", "hwe", "allele_frequency"), map(int, r["removed"])))
    return QC(samples, variants, removed, list(r["log"]))


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


@dataclasses.dataclass
class King:
    """What ``king`` returns. ``table``: one row per pair of selected samples (IID1 the later of
    the two in the store's order, as plink2's ``.kin0``), or per pair at or above
    ``table_filter``: ``#FID1 IID1 FID2 IID2 NSNP HETHET IBS0 HET1_HOM2 HET2_HOM1 KINSHIP``,
    HETHET and IBS0 as shares of NSNP (plink2's default), HET1_HOM2 and HET2_HOM1 as counts.
    ``removed`` and ``kept``: with a ``cutoff``, the samples (``#FID IID``) plink2's
    ``--king-cutoff`` removes and keeps (its ``.king.cutoff.out.id`` and ``.in.id``); else None."""

    table: pd.DataFrame
    removed: pd.DataFrame | None
    kept: pd.DataFrame | None


def king(
    store: Store | str | os.PathLike[str],
    keep: Any = None,
    columns: Any = None,
    *,
    table_filter: float | None = None,
    cutoff: float | None = None,
    memory_mib: int | None = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> King:
    """KING-robust kinship of every pair of selected samples: ``colflow king``.

    Over the selected autosomal variants both samples have called (X, Y and MT left out, as
    plink2): kinship = 1/2 - (4 IBS0 + HET1_HOM2 + HET2_HOM1) / (4 (HETHET + min(HET1_HOM2,
    HET2_HOM1))), near 0.5 for duplicates and 0.25 for first-degree relatives. ``keep`` and
    ``columns`` select as in ``stats``; ``table_filter`` (at most 0.5) keeps the pairs at or
    above it (``--king-table-filter``); ``cutoff`` (0 to below 0.5) removes one sample of each
    pair above it, greedily as plink2 (``--king-cutoff``). The pairs are counted in bands of
    samples within ``memory_mib`` MiB (default: half the memory available), one pass each.
    Genotype stores only. ``progress`` and Ctrl-C as in ``stats``.
    """
    store = as_store(store)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    if memory_mib is None:
        limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES") // 2
    elif int(memory_mib) >= 1:
        limit = int(memory_mib) << 20
    else:
        raise ValueError(f"memory_mib is a number of MiB of at least 1, not {memory_mib}")
    with reporter(progress, "king") as report:
        r = _core.king(
            store._core,
            rows,
            cols,
            None if table_filter is None else float(table_filter),
            None if cutoff is None else float(cutoff),
            limit,
            thread_count(num_threads),
            report,
        )
    samples = store.samples.iloc[r["rows"]].reset_index(drop=True)
    first, second = samples.iloc[r["first"]], samples.iloc[r["second"]]
    nsnp = r["nsnp"].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        table = pd.DataFrame({
            "#FID1": first.fid.to_numpy(),
            "IID1": first.iid.to_numpy(),
            "FID2": second.fid.to_numpy(),
            "IID2": second.iid.to_numpy(),
            "NSNP": nsnp,
            "HETHET": r["hethet"] / nsnp,
            "IBS0": r["ibs0"] / nsnp,
            "HET1_HOM2": r["het_hom"].astype(np.int64),
            "HET2_HOM1": r["hom_het"].astype(np.int64),
            "KINSHIP": r["kinship"],
        })
    if r["removed"] is None:
        return King(table, None, None)
    out = np.zeros(len(samples), dtype=bool)
    out[r["removed"]] = True
    ids = samples[["fid", "iid"]].rename(columns={"fid": "#FID", "iid": "IID"})
    return King(table, ids[out].reset_index(drop=True), ids[~out].reset_index(drop=True))


def clump(
    store: Store | str | os.PathLike[str],
    tables: Any,
    *,
    p1: float = 1e-4,
    p2: float = 0.01,
    r2: float = 0.5,
    kb: float = 250,
    allow_overlap: bool = False,
    id_field: str | list[str] | None = None,
    p_field: str | list[str] | None = None,
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> pd.DataFrame:
    """Association results turned into independent loci: ``colflow clump`` (PLINK 1.9's
    ``--clump``; docs/ANALYSES.md, "colflow clump").

    ``tables``: a table's path (colflow's ``assoc`` tables, plink2's ``.glm.*``, PLINK 1.9's
    ``.assoc``/``.qassoc``, regenie's ``.regenie``, found by their headers; ``id_field`` and
    ``p_field`` name other columns, as ``--clump-snp-field``/``--clump-field``), a DataFrame
    with those columns (e.g. one of ``assoc``'s; NaN P-values skipped), or a list of them (the
    F column numbers them from 1). Top variants have P ≤ ``p1``; each clump takes the variants
    on its chromosome less than ``kb`` kb away with r² > ``r2`` (PLINK 1.9's haplotype r² over
    the selected founders), listing those with P < ``p2``. ``keep`` and ``columns`` select as
    in ``stats``.

    One row per clump, as PLINK 1.9's ``.clumped``: ``CHR F SNP BP P TOTAL NSIG S05 S01 S001
    S0001 SP2``, CHR the store's chromosome code and SP2 a list of ``ID(F)`` strings. ``attrs``
    holds ``absent`` (the top variants the store lacks, with their P) and ``top_variants``.
    Raises InvalidArgumentError naming the option (``--clump-p1`` ...) out of range, a table
    without an ID or P column, or a P outside [0, 1].
    """
    store = as_store(store)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    given = tables if isinstance(tables, list) else [tables]
    if not given:
        raise ValueError("clump needs at least one table")
    id_fields = [id_field] if isinstance(id_field, str) else list(id_field or [])
    p_fields = [p_field] if isinstance(p_field, str) else list(p_field or [])
    paths, ids, p_values = [], [], []
    for table in given:
        if isinstance(table, pd.DataFrame):
            table_ids, table_p = _p_value_columns(table, id_fields, p_fields)
            paths.append("")
            ids.append(table_ids)
            p_values.append(table_p)
        else:
            paths.append(os.fspath(table))
            ids.append([])
            p_values.append([])
    with reporter(progress, "clump") as report:
        r = _core.clump(store._core, rows, cols, paths, ids, p_values, id_fields, p_fields,
                        float(p1), float(p2), float(r2), float(kb), bool(allow_overlap),
                        thread_count(num_threads), report)
    index = r["index"]
    c = store.columns.iloc[index]
    counts = r["counts"].reshape(-1, 5).astype(np.int64)
    frame = pd.DataFrame({
        "CHR": c.chrom.to_numpy(),
        "F": r["file"],
        "SNP": c.id.to_numpy(),
        "BP": pd.to_numeric(c.pos, errors="coerce").to_numpy(),
        "P": r["p"],
        "TOTAL": counts.sum(axis=1),
        "NSIG": counts[:, 0],
        "S05": counts[:, 1],
        "S01": counts[:, 2],
        "S001": counts[:, 3],
        "S0001": counts[:, 4],
        "SP2": [[f"{store.columns.id.iloc[k]}({f})" for k, f in listed]
                for listed in r["members"]],
    })
    frame.attrs["absent"] = pd.DataFrame(r["absent"], columns=["ID", "P"])
    frame.attrs["top_variants"] = int(r["top_variants"])
    return frame


def _p_value_columns(table: pd.DataFrame, id_fields: list[str],
                     p_fields: list[str]) -> tuple[list[str], list[float]]:
    # The library's rule for a file's header: the first name present of each list.
    def first(names: list[str], what: str) -> str:
        for name in names:
            if name in table.columns:
                return name
        raise ValueError(f"the table has no {what} column ({', '.join(names)})")

    id_name = first(id_fields or ["SNP", "ID"], "variant ID")
    p_name = first(p_fields or ["P", "LOG10P", "LOG10_P"], "P-value")
    p = pd.to_numeric(table[p_name], errors="raise").to_numpy(dtype=np.float64)
    if p_name in ("LOG10P", "LOG10_P"):
        p = 10.0 ** -p
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"the table's {p_name} column has a P-value outside [0, 1]")
    return table[id_name].astype(str).tolist(), p.tolist()
