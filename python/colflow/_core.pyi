# Stubs of the extension colflow._core (python/src/core.cpp). Users call the Python API of
# colflow/__init__.py, which resolves indices and checks arguments before calling these.
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

library_version: str

class Store:
    def __init__(self, path: str) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def num_columns(self) -> int: ...
    @property
    def value_type(self) -> str: ...
    def samples(self) -> dict[str, list[str]]: ...
    def columns(self) -> dict[str, list[str]]: ...
    def info(self) -> dict[str, Any]: ...
    def read_into(
        self,
        rows: npt.NDArray[np.int64],
        cols: npt.NDArray[np.int64],
        out: npt.NDArray[np.float32] | npt.NDArray[np.float64] | npt.NDArray[np.int8],
        standardize: bool,
        threads: int,
    ) -> None: ...

class BlockStream:
    def __init__(
        self,
        store: Store,
        rows: npt.NDArray[np.int64],
        cols: npt.NDArray[np.int64],
        float64: bool,
        standardize: bool,
        block_columns: int,
        prefetch: int,
        threads: int,
    ) -> None: ...
    def next(self) -> npt.NDArray[np.float32] | npt.NDArray[np.float64] | None: ...
    def close(self) -> None: ...
    def memory(self) -> dict[str, int]: ...

# progress: None or progress(label, done, total, unit), called on the calling thread while the
# work runs on a thread of its own; Ctrl-C (KeyboardInterrupt) stops the work.
Progress = Callable[[str, int, int, str], None] | None

def stats(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    threads: int,
    progress: Progress,
) -> dict[str, npt.NDArray[Any]]: ...
def clump(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    paths: list[str],
    ids: list[list[str]],
    p_values: list[list[float]],
    id_fields: list[str],
    p_fields: list[str],
    p1: float,
    p2: float,
    r2: float,
    kb: float,
    allow_overlap: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def qc(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    mind: float | None,
    geno: float | None,
    hwe: float | None,
    hwe_midp: bool,
    hwe_keep_fewhet: bool,
    min_maf: float | None,
    max_maf: float | None,
    min_mac: float | None,
    max_mac: float | None,
    nonfounders: bool,
    sex: list[str] | None,
    hard_call_threshold: float,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def hardy(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    sex: list[str] | None,
    hard_call_threshold: float,
    threads: int,
    progress: Progress,
) -> dict[str, npt.NDArray[Any]]: ...
def king(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    table_filter: float | None,
    cutoff: float | None,
    memory_limit: int,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def assoc(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    pheno: npt.NDArray[np.float64],
    names: list[str],
    covar: npt.NDArray[np.float64] | None,
    covar_names: list[str],
    kinds: list[str],
    zero_one: bool,
    firth: str,
    sex: list[str] | None,
    quantile: bool,
    covar_standardize: bool,
    threads: int,
    progress: Progress,
) -> list[dict[str, Any]]: ...
def pca(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    k: int,
    oversampling: int,
    power_iterations: int,
    scaling: str,
    seed: int,
    loadings: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def penalized(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    pheno: npt.NDArray[np.float64],
    alpha: float,
    lambdas: list[float],
    n_lambda: int,
    lambda_min_ratio: float,
    tolerance: float,
    max_sweeps: int,
    all_coefficients: bool,
    target: Store | None,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def bayesr(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    pheno: npt.NDArray[np.float64],
    iterations: int,
    burnin: int,
    thin: int,
    seed: int,
    mixture: list[float],
    dirichlet_prior: float,
    g_df: float,
    g_scale: float,
    e_df: float,
    e_scale: float,
    checkpoint: str,
    checkpoint_every: int,
    resume: bool,
    mode: str,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def sbayesr(
    gwas: str,
    ldm: str,
    iterations: int,
    burnin: int,
    seed: int,
    gamma: list[float],
    pi: list[float],
    ld_window: int,
    ld_window_kb: float,
    checkpoint: str,
    checkpoint_every: int,
    resume: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def ld_store(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    out: str,
    kind: str,
    window: int,
    window_kb: float,
    window_cm: float,
    chisq: float,
    min_r2: float,
    codec: str,
    level: int,
    shuffle: bool,
    gctb: bool,
    overwrite: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def input_format(path: str) -> str: ...
def preprocess_files(
    format: str,
    paths: list[str],
    bim: str,
    fam: str,
    sample: str,
    ref_first: bool,
    dosage: str | None,
    split_multiallelic: bool,
    half_call: str,
    csv_header: str,
    csv_ids: str,
    out: str,
    codec: str | None,
    level: int | None,
    dtype: str | None,
    hard_call_threshold: float | None,
    shuffle: bool | None,
    standardize: bool | None,
    sex: str,
    force: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def preprocess_array(
    matrix: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    samples: list[list[str]] | None,
    column_ids: list[str] | None,
    out: str,
    codec: str | None,
    level: int | None,
    dtype: str | None,
    hard_call_threshold: float | None,
    shuffle: bool | None,
    standardize: bool | None,
    sex: str,
    force: bool,
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
def wgr(
    store: Store,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    pheno: npt.NDArray[np.float64],
    names: list[str],
    covar: npt.NDArray[np.float64] | None,
    covar_names: list[str],
    block_size: int,
    folds: int,
    level0: int,
    level1: int,
    case_control: list[bool],
    threads: int,
    progress: Progress,
) -> dict[str, Any]: ...
