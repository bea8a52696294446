"""Pictures of colflow's results, drawn with matplotlib (``pip install './python[plot]'``):

    >>> from colflow import plot
    >>> plot.manhattan("scan.assoc.tsv", out="scan.png")      # or plink2 .glm.*, .regenie
    >>> plot.qq("scan.assoc.tsv", out="qq.svg")
    >>> plot.trace("fit.trace.tsv", burnin=200, out="trace.png")
    >>> plot.rhat(["seed1.trace.tsv", "seed2.trace.tsv"], out="rhat.png")
    >>> plot.pcs("pca.eigenvec", color_by="POP", samples="populations.txt", out="pcs.png")
    >>> plot.ld("region.ldband", out="ld.png")

Each function takes a path or a DataFrame (an array for ``ld``), returns the matplotlib Figure
and writes it to ``out`` when given (.png, .svg or .pdf). matplotlib is imported when a picture
is drawn: importing this module, reading the tables and the chain diagnostics (``colflow.
effective_sample_size``, ``geweke_z``, ``split_rhat``) work without it. The command
``colflow-plot`` draws the same from the shell (docs/PYTHON.md, "Pictures").
"""

from __future__ import annotations

from ._diagnostics import autocorrelation_time, effective_sample_size, geweke_z, split_rhat
from ._plot_chain import TRACE_COLUMNS, chain_summary, rhat, trace
from ._plot_matrix import ld, pcs
from ._plot_scan import (COLOURS, GENOME_WIDE, SUGGESTIVE, genomic_control_lambda, manhattan,
                         manhattan_positions, qq, qq_band)
from ._plot_tables import read_association, read_eigenvectors, read_ld, read_trace

__all__ = [
    "COLOURS",
    "GENOME_WIDE",
    "SUGGESTIVE",
    "TRACE_COLUMNS",
    "autocorrelation_time",
    "chain_summary",
    "effective_sample_size",
    "genomic_control_lambda",
    "geweke_z",
    "ld",
    "manhattan",
    "manhattan_positions",
    "pcs",
    "qq",
    "qq_band",
    "read_association",
    "read_eigenvectors",
    "read_ld",
    "read_trace",
    "rhat",
    "split_rhat",
    "trace",
]
