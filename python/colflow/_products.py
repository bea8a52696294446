"""Products of the genotype matrix: polygenic scores, LD and relationship matrices, principal
components.

The commands ``colflow score``, ``colflow ld``, ``colflow grm`` and ``colflow pca`` as functions
returning pandas DataFrames, numpy arrays and scipy.sparse matrices (docs/PYTHON.md).
"""

from __future__ import annotations

import dataclasses
import operator
import os
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, column_fields, selected_columns, selected_rows
from ._checks import thread_count
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["GRM", "LDStore", "PCA", "grm", "ld", "ld_matrix", "ld_store", "pca",
           "score"]

_SCALINGS = {None: "none", "center": "center", "variance-standardize": "variance-standardize"}


def _selection(store: Store, keep: Any, columns: Any) -> tuple[np.ndarray, np.ndarray]:
    return selected_rows(store, keep), selected_columns(store, columns)


def _score_weights(weights: pd.DataFrame) -> tuple[list[str], list[str], np.ndarray, list[str]]:
    # ID, allele and one float64 column per score: the first two columns and the rest.
    if weights.shape[1] < 3:
        raise ValueError("score weights need a variant ID, an allele and at least one weight "
                         f"column; got columns {list(weights.columns)}")
    ids = weights.iloc[:, 0].astype(str).tolist()
    alleles = weights.iloc[:, 1].astype(str).tolist()
    values = weights.iloc[:, 2:].apply(pd.to_numeric, errors="raise").to_numpy(np.float64)
    return ids, alleles, np.ascontiguousarray(values), [str(c) for c in weights.columns[2:]]


def score(
    store: Store | str | os.PathLike[str],
    weights: Any,
    *,
    id_col: int = 1,
    allele_col: int = 2,
    score_cols: Any = None,
    header: bool | str = False,
    keep: Any = None,
    columns: Any = None,
    mean_impute: bool = True,
    scaling: str | None = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> pd.DataFrame:
    """Polygenic scores: ``colflow score``, plink2's ``--score``, as a DataFrame.

    ``weights`` is a score file's path, read as ``--score FILE id_col allele_col score_cols``
    reads it (1-based columns; ``score_cols`` one number or a list, default the column after
    the allele; ``header=True`` skips a first line, ``header="read"`` takes the scores' names
    from it; colflow's ``bayesr`` .effects.tsv and ``lasso``/``ridge``/``enet`` .coef.tsv and
    PGS Catalog files are recognised by their headers), or a DataFrame whose first two columns
    are the variant ID and the named allele and whose other columns are weights, one score
    each. Variants match by ID, then allele: the store's A1, or A2 with the dosage counted as
    2 − d; entries the selected columns lack, or with another allele, are skipped and counted
    in ``attrs``. Missing calls add 2f (f the named allele's frequency over the selected
    samples) unless ``mean_impute=False`` (plink2's ``no-mean-imputation``); ``scaling`` is
    None, "center" or "variance-standardize" (plink2's modifiers). ``keep`` and ``columns``
    select as in ``stats``.

    Returns one row per selected sample: ``#FID IID ALLELE_CT DENOM NAMED_ALLELE_DOSAGE_SUM``
    and, per score, ``NAME_AVG`` (sum / DENOM, as the .sscore file's default) and ``NAME_SUM``,
    full binary64. ``attrs``: ``format`` (what was read), ``entries_used``, ``missing_ids``,
    ``allele_mismatches`` and ``columns_used``.
    """
    store = as_store(store)
    rows, cols = _selection(store, keep, columns)
    scale = _SCALINGS.get(scaling)
    if scale is None:
        raise ValueError(f"scaling must be None, 'center' or 'variance-standardize', not {scaling!r}")
    threads = thread_count(num_threads)
    with reporter(progress, "score") as report:
        if isinstance(weights, (str, os.PathLike)):
            picked = [] if score_cols is None else (
                [int(score_cols)] if np.isscalar(score_cols) else [int(c) for c in score_cols])
            head = "read" if header == "read" else "skip" if header else "none"
            r = _core.score_from_file(store._core, rows, cols, os.fspath(weights), int(id_col),
                                      int(allele_col), picked, head, scale, not mean_impute,
                                      threads, report)
        elif isinstance(weights, pd.DataFrame):
            ids, alleles, values, names = _score_weights(weights)
            r = _core.score_from_table(store._core, rows, cols, ids, alleles, values, names,
                                       scale, not mean_impute, threads, report)
        else:
            raise TypeError("weights must be a score file's path (str or os.PathLike) or a "
                            f"DataFrame of ID, allele and weights; got {type(weights).__name__}")
    return _score_frame(store, r)


def _score_frame(store: Store, r: dict[str, Any]) -> pd.DataFrame:
    # The .sscore columns per selected sample, NAME_AVG NaN where DENOM is 0; attrs the counts
    # of the weights read and used.
    names = list(r["names"])
    sums = np.asarray(r["sums"]).reshape(len(r["rows"]), len(names))
    denominators = np.asarray(r["denominators"]).astype(np.int64)
    samples = store.samples.iloc[r["rows"]]
    frame = {
        "#FID": samples.fid.to_numpy(),
        "IID": samples.iid.to_numpy(),
        "ALLELE_CT": np.asarray(r["allele_counts"]).astype(np.int64),
        "DENOM": denominators,
        "NAMED_ALLELE_DOSAGE_SUM": r["dosage_sums"],
    }
    with np.errstate(invalid="ignore", divide="ignore"):
        for k, name in enumerate(names):
            frame[f"{name}_AVG"] = np.where(denominators > 0, sums[:, k] / denominators, np.nan)
        for k, name in enumerate(names):
            frame[f"{name}_SUM"] = sums[:, k]
    out = pd.DataFrame(frame)
    out.attrs.update(format=r["format"], entries_used=int(r["entries_used"]),
                     missing_ids=int(r["missing_ids"]),
                     allele_mismatches=int(r["allele_mismatches"]),
                     columns_used=int(len(r["columns"])))
    return out


def _window_cm(window_cm: float | None) -> float:
    """``window_cm`` for the core: 0 stands for none (the kb window); a given one must be > 0."""
    if window_cm is None:
        return 0.0
    if not float(window_cm) > 0:
        raise ValueError(f"window_cm: must be a positive distance in cM, not {window_cm}")
    return float(window_cm)


def ld(
    store: Store | str | os.PathLike[str],
    *,
    r2: bool = True,
    window: int = 10,
    window_kb: float = 1000,
    window_cm: float | None = None,
    min_r2: float = 0.2,
    inter_chr: bool = False,
    with_freqs: bool = False,
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> pd.DataFrame:
    """LD between variants: ``colflow ld --r2`` (or ``--r`` with ``r2=False``), PLINK 1.9's
    table, as a DataFrame.

    The pairs on one chromosome at most ``window`` − 1 selected variants and ``window_kb`` kb
    apart (``--ld-window``, ``--ld-window-kb``; or ``window_cm`` cM on the store's genetic map,
    ``--ld-window-cm``, in place of ``window_kb``) with r² ≥ ``min_r2`` (``--ld-window-r2``; 0
    lists every pair of the window); ``inter_chr=True`` every pair, filtered by ``min_r2``
    alone. r is the correlation of the A1 dosages over the samples called in both, exact on a
    genotype store. Columns ``CHR_A BP_A SNP_A CHR_B BP_B SNP_B`` and ``R2`` or ``R``, with
    ``MAF_A``/``MAF_B`` (the A1 frequencies) when ``with_freqs``.
    """
    store = as_store(store)
    rows, cols = _selection(store, keep, columns)
    with reporter(progress, "ld") as report:
        r = _core.ld(store._core, rows, cols, r2, "table", inter_chr, int(window),
                     float(window_kb), _window_cm(window_cm), float(min_r2), with_freqs,
                     thread_count(num_threads), report)
    selected = np.asarray(r["columns"])
    a, b = selected[np.asarray(r["a"], dtype=np.int64)], selected[np.asarray(r["b"], dtype=np.int64)]
    fa, fb = column_fields(store, a), column_fields(store, b)
    frame = {"CHR_A": fa["#CHR"], "BP_A": fa["POS"], "SNP_A": fa["ID"]}
    if with_freqs:
        freq = np.asarray(r["a1_freq"])
        frame["MAF_A"] = freq[np.asarray(r["a"], dtype=np.int64)]
    frame.update({"CHR_B": fb["#CHR"], "BP_B": fb["POS"], "SNP_B": fb["ID"]})
    if with_freqs:
        frame["MAF_B"] = freq[np.asarray(r["b"], dtype=np.int64)]
    frame["R2" if r2 else "R"] = r["r2"] if r2 else r["r"]
    return pd.DataFrame(frame)


def ld_matrix(
    store: Store | str | os.PathLike[str],
    *,
    r2: bool = False,
    band: bool = False,
    window: int = 10,
    window_kb: float = 1000,
    window_cm: float | None = None,
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> Any:
    """The LD matrix of the selected columns, r (or r² with ``r2=True``).

    By default every pair: a dense numpy array (``--r square``; the diagonal 1, NaN where a
    variant is constant over the samples with a call). ``band=True``: only the pairs within
    ``window``/``window_kb`` (or ``window_cm``: the table's window, no threshold), as a symmetric
    ``scipy.sparse.csr_matrix``, the matrix summary-statistics methods take (``--r band``,
    docs/FORMAT.md). Needs scipy for ``band=True``.
    """
    store = as_store(store)
    rows, cols = _selection(store, keep, columns)
    shape = "band" if band else "square"
    with reporter(progress, "ld") as report:
        r = _core.ld(store._core, rows, cols, r2, shape, False, int(window), float(window_kb),
                     _window_cm(window_cm), 0.0, False, thread_count(num_threads), report)
    m = len(r["columns"])
    values = np.asarray(r["matrix"])
    if not band:
        return values.reshape(m, m)
    return _symmetric_band(values, np.asarray(r["band_end"], dtype=np.int64))



@dataclasses.dataclass(frozen=True)
class LDStore:
    """What ``ld_store`` wrote: ``colflow ld --make-ldm``'s figures."""

    #: The LD store (a directory), which ``sbayesr``'s ``ldm`` and ``colflow sbayesr --ldm`` read.
    path: str
    #: "full", "band" or "sparse".
    kind: str
    #: Variants (columns of the matrix).
    variants: int
    #: Samples the LD comes from.
    samples: int
    #: Values held (GCTB's sum of WindSize).
    values: int
    #: Bytes of the LD store's files.
    store_bytes: int
    #: With ``gctb=True``: GCTB's ``PREFIX.ldm.KIND.info`` and ``.bin``; else empty.
    gctb_files: tuple[str, ...]


def ld_store(
    store: Store | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    kind: str = "full",
    window: int = 10,
    window_kb: float = 1000,
    window_cm: float | None = None,
    chisq: float | None = None,
    min_r2: float | None = None,
    codec: str = "zstd",
    level: int | None = None,
    shuffle: bool = False,
    value_bits: int = 32,
    gctb: bool = False,
    overwrite: bool = False,
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> LDStore:
    """The LD matrix of the selected columns written as an LD store at ``out``: ``colflow ld
    STORE --make-ldm KIND --out OUT`` (docs/ANALYSES.md), the LD reference of ``sbayesr``.

    ``kind``: "full" (every pair), "band" (the pairs within ``window`` variants and
    ``window_kb`` kb, or ``window_cm`` cM, on one chromosome: ``--ld-window``,
    ``--ld-window-kb``, ``--ld-window-cm``) or "sparse" (the pairs with r² · N ≥ ``chisq``,
    default 10, or with r² ≥ ``min_r2``; the diagonal always). ``codec``, ``level`` (None: the
    codec's default) and ``shuffle`` are the store's frames (``--codec``, ``--level``,
    ``--shuffle``); ``value_bits=16`` rounds each r to a multiple of 2^-14 (at most 3.1e-5 off)
    and stores it in 16 bits, about half the bytes, which ``sbayesr`` streams at half the cost
    (``--ldm-bits 16``; zstd alone, unshuffled); ``gctb=True`` also writes GCTB's ``OUT.ldm.KIND.info`` and ``.bin``
    (``--ldm-gctb``); ``overwrite=True`` replaces an existing LD store (``--force``).
    Raises InvalidArgumentError for a variant constant over the selected samples and
    AlreadyExistsError for an existing ``out`` without ``overwrite``.
    """
    store = as_store(store)
    if kind not in ("full", "band", "sparse"):
        raise ValueError(f"kind must be 'full', 'band' or 'sparse', not {kind!r}")
    if kind != "sparse" and (chisq is not None or min_r2 is not None):
        raise ValueError(f"chisq and min_r2 apply to kind='sparse', not {kind!r}")
    if chisq is not None and min_r2 is not None:
        raise ValueError("give chisq or min_r2, not both")
    rows, cols = _selection(store, keep, columns)
    out = os.fspath(out)
    with reporter(progress, "ld") as report:
        r = _core.ld_store(store._core, rows, cols, out, kind, operator.index(window),
                           float(window_kb), _window_cm(window_cm),
                           10.0 if chisq is None else float(chisq),
                           None if min_r2 is None else float(min_r2), codec,
                           0 if level is None else operator.index(level), bool(shuffle),
                           operator.index(value_bits), bool(gctb), bool(overwrite), thread_count(num_threads), report)
    return LDStore(out, kind, r["variants"], r["samples"], r["values"], r["store_bytes"],
                   tuple(r["gctb_files"]))


def _symmetric_band(values: np.ndarray, ends: np.ndarray) -> Any:
    # The extension's band: row i holds the pairs (i, i..ends[i]-1), diagonal included, row after
    # row in `values`; mirrored below the diagonal into one m x m csr_matrix.
    import scipy.sparse  # only this form needs it

    m = len(ends)
    starts = np.arange(m, dtype=np.int64)
    counts = ends - starts
    row = np.repeat(starts, counts)
    col = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if m else row
    upper = scipy.sparse.coo_matrix((values, (row, col)), shape=(m, m))
    off = row != col
    lower = scipy.sparse.coo_matrix((values[off], (col[off], row[off])), shape=(m, m))
    return (upper + lower).tocsr()


@dataclasses.dataclass(frozen=True)
class GRM:
    """A relationship matrix: ``matrix`` (samples x samples, numpy), ``variants`` (per entry,
    the variants it was divided by), ``samples`` (``#FID IID`` of its rows) and
    ``variants_used`` (autosomal variants in the sums)."""

    matrix: np.ndarray
    variants: np.ndarray
    samples: pd.DataFrame
    variants_used: int


def grm(
    store: Store | str | os.PathLike[str],
    *,
    cov: bool = False,
    meanimpute: bool = False,
    keep: Any = None,
    columns: Any = None,
    num_threads: int | None = None,
    progress: Any = False,
) -> GRM:
    """The genomic relationship matrix: ``colflow grm --make-rel`` (plink2), as numpy.

    Entry (i, j): the sum over the selected autosomal variants of z_i z_j, z = (x − 2p) /
    sqrt(2p(1 − p)) (``cov=True``: x − 2p), missing calls 0, divided by the variants where both
    samples have a call (``meanimpute=True``: by all of them); p over the selected samples. The
    same bits as the command's matrix at any thread count.
    """
    store = as_store(store)
    rows, cols = _selection(store, keep, columns)
    with reporter(progress, "grm") as report:
        r = _core.grm(store._core, rows, cols, cov, meanimpute, thread_count(num_threads),
                      report)
    n = len(r["rows"])
    samples = store.samples.iloc[r["rows"]]
    ids = pd.DataFrame({"#FID": samples.fid.to_numpy(), "IID": samples.iid.to_numpy()})
    return GRM(np.asarray(r["values"]).reshape(n, n, order="F"),
               np.asarray(r["variants"]).reshape(n, n, order="F"), ids, int(r["variants_used"]))


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
    #: Per component, ‖ZZᵀu − λu‖/λ: an eigenvalue of ZZᵀ lies within this fraction of λ.
    #: Components in the bulk of the spectrum converge slowly and show large ones (raise
    #: power_iterations or oversampling); ``colflow pca`` names those above 1%.
    residuals: np.ndarray


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
    store = as_store(store)
    for name, value in (("k", k), ("oversampling", oversampling),
                        ("power_iterations", power_iterations), ("seed", seed)):
        if operator.index(value) < 0:
            raise ValueError(f"{name} must not be negative, not {value}")
    rows, cols = _selection(store, keep, columns)
    with reporter(progress, "pca") as report:
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
            thread_count(num_threads),
            report,
        )
    pcs = [f"PC{i + 1}" for i in range(len(r["eigenvalues"]))]
    samples = store.samples.iloc[r["rows"]]
    eigenvectors = pd.DataFrame(
        {"#FID": samples.fid.to_numpy(), "IID": samples.iid.to_numpy()}
        | dict(zip(pcs, r["eigenvectors"].T))
    )
    return PCA(r["eigenvalues"], eigenvectors, _pca_loadings(store, r, pcs), r["columns_used"],
               r["passes"], r["residuals"])


def _pca_loadings(store: Store, r: dict[str, Any], pcs: list[str]) -> pd.DataFrame | None:
    # ``#CHR ID A1 A2 PC1..PCk`` per selected column when the extension computed loadings.
    if r["loadings"] is None:
        return None
    c = store.columns.iloc[r["column"]]
    return pd.DataFrame(
        {"#CHR": c.chrom.to_numpy(), "ID": c.id.to_numpy(), "A1": c.a1.to_numpy(),
         "A2": c.a2.to_numpy()}
        | dict(zip(pcs, r["loadings"].T))
    )
