"""colflow: compressed column stores of genotype matrices, read from Python.

    >>> import colflow
    >>> colflow.preprocess("data/example", "example.cf")   # a PLINK .bed/.bim/.fam prefix
    >>> colflow.preprocess(["chr1.bgen", "chr2.bgen"], "bgen.cf", sample="all.sample")
    >>> colflow.preprocess(np.random.rand(100, 20), "dense.cf")   # a float matrix
    >>> with colflow.open("example.cf") as store:
    ...     x = store.read(np.s_[:100, ::2], dtype=np.float64)

``Store.read`` follows ``bed_reader.open_bed(...).read()``: the same index forms, values (the
count of the A1 allele), missing values (NaN, or -127 in int8), orders and errors, so that code
written for a .bed reads a store unchanged. ``Store.stream`` yields blocks of columns decoded
ahead by the library's flow graph; ``stats``, ``hardy``, ``assoc``, ``pca``, ``lasso``, ``ridge``, ``enet``
``bayesr`` and ``sbayesr`` run the command's analyses into pandas DataFrames and numpy arrays
(docs/PYTHON.md).
"""

# The public names, each defined in the module of its concern (docs/PYTHON.md, "Modules"). A
# module imports only modules below it, never this package, so there is no import cycle and any
# of them can be imported first (tests/test_modules.py).
from ._extension import _core
from ._errors import AlreadyExistsError, Error, FormatError, InvalidArgumentError, NotFoundError
from ._store import BlockStream, Store, open
from ._preprocess import preprocess
from ._scans import assoc, stats
from ._qc import QC, King, clump, hardy, king, qc
from ._products import GRM, LDStore, PCA, grm, ld, ld_matrix, ld_store, pca, score
from ._models import BayesR, Penalized, SBayesR, bayesr, enet, lasso, ridge, sbayesr
from ._wgr import WGR, wgr
from ._diagnostics import effective_sample_size, geweke_z, split_rhat

__all__ = [
    "AlreadyExistsError",
    "BayesR",
    "BlockStream",
    "Error",
    "FormatError",
    "GRM",
    "InvalidArgumentError",
    "King",
    "LDStore",
    "NotFoundError",
    "Store",
    "PCA",
    "QC",
    "Penalized",
    "SBayesR",
    "assoc",
    "bayesr",
    "clump",
    "effective_sample_size",
    "enet",
    "geweke_z",
    "grm",
    "hardy",
    "king",
    "lasso",
    "ld",
    "ld_matrix",
    "ld_store",
    "open",
    "pca",
    "preprocess",
    "qc",
    "ridge",
    "sbayesr",
    "score",
    "split_rhat",
    "stats",
    "WGR",
    "wgr",
]

__version__: str = _core.library_version
