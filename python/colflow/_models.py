"""Fits of a phenotype on every selected column at once: the penalised regressions ``lasso``,
``ridge`` and ``enet`` and the Gibbs sampler ``bayesr``, and ``sbayesr`` from summary
statistics: the commands of the same names with the command's result files as pandas
DataFrames (docs/PYTHON.md).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._arguments import as_store, one_phenotype, selected_columns, selected_rows
from ._checks import float_in_range, int_at_least, prior_pair, thread_count
from ._extension import _core
from ._progress import reporter
from ._store import Store

__all__ = ["BayesR", "Penalized", "SBayesR", "bayesr", "enet", "lasso", "ridge",
           "sbayesr"]

# -- penalised regression -----------------------------------------------------------------------


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
    # What lasso, ridge and enet share: the options checked, the path run, its tables built.
    # The RuntimeWarning for λ values stopped at max_sweeps points at the caller of lasso,
    # ridge or enet (stacklevel 3: this function is called by them only).
    store = as_store(store)
    alpha = float_in_range("alpha", alpha, low=0.0, high=1.0)
    path = _lambda_values(lambdas)
    nlambda = int_at_least("nlambda", nlambda, 1)
    ratio = 0.0 if lambda_min_ratio is None else float_in_range(
        "lambda_min_ratio", lambda_min_ratio, low=0.0, low_open=True, high=1.0)
    tol = float_in_range("tol", tol, low=0.0, low_open=True)
    max_sweeps = int_at_least("max_sweeps", max_sweeps, 1)
    target = None if predict is None else as_store(predict)
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    y, name = one_phenotype(store, pheno, pheno_name)
    with reporter(progress, "ridge" if ridge else "lasso" if alpha == 1 else "enet") as report:
        r = _core.penalized(
            store._core, rows, cols, y, alpha, path, nlambda, ratio, tol, max_sweeps, ridge,
            None if target is None else target._core, thread_count(num_threads), report,
        )
    result = Penalized(_coefficients(store, r), _path_frame(r), _beta(store, r),
                       None if target is None else _predictions(target, r), name, r["samples"],
                       r["intercept"], r["lambda_max"], r["target_missing"])
    unconverged = int((r["converged"] == 0).sum())
    if unconverged:
        warnings.warn(f"{unconverged} lambda value(s) stopped at max_sweeps before converging",
                      RuntimeWarning, stacklevel=3)
    return result


def _lambda_values(lambdas: Any) -> list[float]:
    # The λ values given, each a positive finite number; [] (a path down from λ_max) for None.
    if lambdas is None:
        return []
    path = [float(v) for v in np.atleast_1d(np.asarray(lambdas, dtype=np.float64))]
    if not path or not all(np.isfinite(v) and v > 0 for v in path):
        raise ValueError(f"lambdas must be positive numbers, not {lambdas!r}")
    return path


def _coefficients(store: Store, r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.coef.tsv: the extension's (step, column, beta) entries in its order.
    ids = store.columns.id.to_numpy()
    a1 = store.columns.a1.to_numpy()
    return pd.DataFrame({
        "LAMBDA": r["lambda"][r["coef_step"]],
        "ID": ids[r["coef_column"]],
        "A1": a1[r["coef_column"]],
        "BETA": r["coef_beta"],
        "BETA_PER_UNIT": r["coef_per_unit"],
    })


def _path_frame(r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.path.tsv: one row per λ, the counts as int64.
    return pd.DataFrame({
        "LAMBDA": r["lambda"],
        "NONZERO": r["nonzero"].astype(np.int64),
        "R2": r["r2"],
        "OBJECTIVE": r["objective"],
        "SWEEPS": r["sweeps"].astype(np.int64),
        "FULL_PASSES": r["full_passes"].astype(np.int64),
        "CONVERGED": r["converged"].astype(np.int64),
    })


def _beta(store: Store, r: dict[str, Any]) -> pd.DataFrame:
    # Every coefficient: the fitted columns (r["column"], increasing) x λ, zero where the
    # extension listed no entry.
    lam = r["lambda"]
    position = np.searchsorted(r["column"], r["coef_column"])
    dense = np.zeros((len(r["column"]), len(lam)))
    dense[position, r["coef_step"]] = r["coef_beta"]
    ids = store.columns.id.to_numpy()
    return pd.DataFrame(dense, index=pd.Index(ids[r["column"]], name="ID"), columns=lam)


def _predictions(target: Store, r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.pred.tsv: one row per sample of the other store, a column per λ (6 digits).
    samples = target.samples
    return pd.DataFrame(
        {"#FID": samples.fid.to_numpy(), "IID": samples.iid.to_numpy()}
        | {f"LAMBDA={v:.6g}": r["predictions"][:, k] for k, v in enumerate(r["lambda"])}
    )


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


# -- BayesR ---------------------------------------------------------------------------------------


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
    #: Effective sample size and Geweke's z of h² over the kept iterations after the burn-in,
    #: as the command logs them (colflow.effective_sample_size and colflow.geweke_z of
    #: ``trace.H2`` after the burn-in; NaN for too short a chain).
    h2_ess: float
    h2_geweke_z: float
    #: ``PARAMETER MEAN SD ESS GEWEKE_Z KEPT`` for H2, SIGMA2_G, SIGMA2_E and NONZERO over the
    #: kept iterations after the burn-in (PREFIX.summary.tsv; colflow.plot.chain_summary's
    #: definitions).
    summary: pd.DataFrame


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
    store = as_store(store)
    if mode not in ("auto", "pipelined", "sequential", "in-memory"):
        raise ValueError(
            f"mode '{mode}' not known, only 'auto', 'pipelined', 'sequential' and 'in-memory'")
    iterations = int_at_least("iterations", iterations, 1)
    burnin = int_at_least("burnin", burnin, 0)
    thin = int_at_least("thin", thin, 1)
    seed = int_at_least("seed", seed, 0)
    checkpoint_every = int_at_least("checkpoint_every", checkpoint_every, 0)
    gamma = [float(v) for v in np.atleast_1d(np.asarray(mixture, dtype=np.float64))]
    g_df, g_scale = prior_pair("sigma2_g_prior", sigma2_g_prior)
    e_df, e_scale = prior_pair("sigma2_e_prior", sigma2_e_prior)
    if resume and checkpoint is None:
        raise ValueError("resume=True needs the checkpoint to resume")
    rows = selected_rows(store, keep)
    cols = selected_columns(store, columns)
    y, name = one_phenotype(store, pheno, pheno_name)
    with reporter(progress, "bayesr") as report:
        r = _core.bayesr(
            store._core, rows, cols, y, iterations, burnin, thin, seed, gamma,
            float(dirichlet_prior), g_df, g_scale, e_df, e_scale,
            "" if checkpoint is None else os.fspath(checkpoint), checkpoint_every,
            bool(resume), mode, thread_count(num_threads), report,
        )
    return BayesR(_trace(r), _effects(store, r), name, r["samples"], r["h2_mean"], r["h2_sd"],
                  r["nonzero_mean"], r["posterior_samples"], r["resumed_from"],
                  r["iterations_run"], r["mode"], r["seconds"], r["compute_busy_seconds"],
                  r["h2_ess"], r["h2_geweke_z"], _summary(r))


def _summary(r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.summary.tsv: a row per quantity, every one over the same kept iterations.
    table = pd.DataFrame(r["summary"], columns=["PARAMETER", "MEAN", "SD", "ESS", "GEWEKE_Z"])
    table["KEPT"] = np.int64(r["kept"])
    return table


def _trace(r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.trace.tsv: one row per kept iteration, a PI_k column per mixture class.
    pi = r["pi"]
    return pd.DataFrame(
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


def _effects(store: Store, r: dict[str, Any]) -> pd.DataFrame:
    # PREFIX.effects.tsv: one row per fitted column, in the extension's order.
    c = store.columns.iloc[r["column"]]
    return pd.DataFrame({
        "ID": c.id.to_numpy(),
        "A1": c.a1.to_numpy(),
        "PIP": r["pip"],
        "BETA": r["beta"],
        "BETA_SD": r["beta_sd"],
        "BETA_PER_UNIT": r["beta_per_unit"],
        "BETA_PER_UNIT_SD": r["beta_per_unit_sd"],
    })


# -- SBayesR ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SBayesR:
    """The result of ``sbayesr``: what ``colflow sbayesr`` writes, and the chain's figures."""

    #: PREFIX.parRes: ``Mean`` and ``SD`` over the iterations after the burn-in, indexed by
    #: parameter: NumSnp1..K (variants per class), SigmaSq (σ²_β), ResVar, GenVar, hsq.
    parameters: pd.DataFrame
    #: PREFIX.snpRes: ``Id Name Chrom Position A1 A2 A1Frq A1Effect SE PIP LastSampleEff`` per
    #: variant of the summary statistics matched to the LD reference, effects per A1 allele.
    effects: pd.DataFrame
    #: h² of every iteration, the burn-in included.
    h2_trace: np.ndarray
    #: The posterior mean of h² (``parameters.loc["hsq", "Mean"]``).
    h2: float
    #: σ²_y, the phenotypic variance the statistics imply, and n, the median N.
    phenotype_variance: float
    sample_size: float
    #: Variants of the GWAS file; matched to the reference (of them flipped); dropped for
    #: other alleles; absent from the reference.
    gwas_variants: int
    matched: int
    flipped: int
    allele_mismatch: int
    absent: int
    #: The checkpoint's iteration when resumed (else 0), and this call's iterations.
    resumed_from: int
    iterations_run: int


def sbayesr(
    gwas: str | os.PathLike[str],
    ldm: str | os.PathLike[str],
    *,
    iterations: int = 1000,
    burnin: int = 200,
    seed: int = 1,
    gamma: Any = None,
    pi: Any = None,
    hsq: float | None = None,
    ld_window: int = 1000,
    ld_window_kb: float = 1000,
    checkpoint: str | os.PathLike[str] | None = None,
    checkpoint_every: int = 100,
    resume: bool = False,
    num_threads: int | None = None,
    progress: Any = False,
) -> SBayesR:
    """SBayesR from GWAS summary statistics and an LD reference: ``colflow sbayesr``.

    ``gwas`` is GCTB's .ma file (``SNP A1 A2 freq b se p N``); ``ldm`` the LD reference: an LD
    store (``ld_store``, ``colflow ld --make-ldm``), GCTB's ``.ldm.full``/``.band``/``.sparse``,
    colflow's ``.ldband``, or a genotype or dosage store whose LD is computed in memory in windows
    of ``ld_window`` variants and ``ld_window_kb`` kb. The options are the command's of the same
    names: ``iterations`` (the chain's length, a resumed chain included), ``burnin`` (shorter
    than the chain), ``seed``, ``gamma`` (class variances as multiples of σ²_β, the zero class
    first; None: GCTB's 0, 0.001, 0.01, 0.1, 1), ``pi`` (starting weights, one per class;
    None: GCTB's 0.95, 0.02, 0.01, 0.01, 0.01) and ``hsq`` (the starting h², ``--hsq``; None:
    GCTB's 0.1). ``checkpoint`` is a file to save the chain to every
    ``checkpoint_every`` iterations and after the last (the command's PREFIX.checkpoint; None:
    no checkpoint), and ``resume=True`` continues the chain it holds, to the same result as an
    uninterrupted chain.

    Returns an ``SBayesR`` whose ``parameters`` and ``effects`` are the command's PREFIX.parRes
    and PREFIX.snpRes as DataFrames (full binary64 numbers where the files print 6 or 8
    decimals). Runs with the GIL released on ``num_threads`` threads. Raises
    InvalidArgumentError for bad options, FormatError for a bad .ma file or a chain whose
    residual variance turns negative; a damaged or foreign checkpoint raises colflow.Error.
    ``progress=True`` shows a tqdm bar (if tqdm is installed), or give a function
    ``(label, done, total, unit)``.
    """
    iterations = int_at_least("iterations", iterations, 1)
    burnin = int_at_least("burnin", burnin, 0)
    seed = int_at_least("seed", seed, 0)
    checkpoint_every = int_at_least("checkpoint_every", checkpoint_every, 0)
    ld_window = int_at_least("ld_window", ld_window, 1)
    ld_window_kb = float_in_range("ld_window_kb", ld_window_kb, low=0, low_open=True)
    gammas = [] if gamma is None else [float(v) for v in np.atleast_1d(np.asarray(gamma, float))]
    weights = [] if pi is None else [float(v) for v in np.atleast_1d(np.asarray(pi, float))]
    if resume and checkpoint is None:
        raise ValueError("resume=True needs the checkpoint to resume")
    with reporter(progress, "sbayesr") as report:
        r = _core.sbayesr(
            os.fspath(gwas), os.fspath(ldm), iterations, burnin, seed, gammas, weights,
            None if hsq is None else float(hsq), ld_window, ld_window_kb, "" if checkpoint is None else os.fspath(checkpoint),
            checkpoint_every, bool(resume), thread_count(num_threads), report,
        )
    parameters = pd.DataFrame({"Mean": r["mean"], "SD": r["sd"]},
                              index=pd.Index(r["parameter"], name=None))
    effects = pd.DataFrame({
        "Id": np.arange(1, len(r["name"]) + 1, dtype=np.int64),
        "Name": r["name"],
        "Chrom": r["chrom"],
        "Position": np.asarray(r["position"], dtype=np.int64),
        "A1": r["a1"],
        "A2": r["a2"],
        "A1Frq": r["a1_freq"],
        "A1Effect": r["a1_effect"],
        "SE": r["se"],
        "PIP": r["pip"],
        "LastSampleEff": r["last_sample_effect"],
    })
    h2 = float(parameters.loc["hsq", "Mean"])
    return SBayesR(parameters, effects, np.asarray(r["h2_trace"]), h2, r["phenotype_variance"],
                   r["sample_size"], r["gwas_variants"], r["matched"], r["flipped"],
                   r["allele_mismatch"], r["absent"], r["resumed_from"], r["iterations_run"])
