"""The command ``colflow-plot``: the pictures of ``colflow.plot`` from the shell.

    colflow-plot manhattan scan.assoc.tsv --out scan.png
    colflow-plot qq scan.assoc.tsv --out qq.svg
    colflow-plot trace fit.trace.tsv --burnin 200 --out trace.png
    colflow-plot rhat a.trace.tsv b.trace.tsv --out rhat.png
    colflow-plot pcs pca.eigenvec --color-by POP --samples pop.txt --out pcs.png
    colflow-plot ld region.ldband --start 0 --count 200 --out ld.png

Errors print one line on stderr and exit 1; --help exits 0.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import _plot_chain, _plot_matrix, _plot_scan

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="colflow-plot",
        description="Draw colflow's results (and plink2's, regenie's scans) as PNG, SVG or "
                    "PDF pictures; the format comes from --out's suffix.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=text, description=text)
        p.add_argument("--out", required=True, help="the picture: NAME.png, NAME.svg or NAME.pdf")
        p.add_argument("--title", help="a title over the picture")
        return p

    p = command("manhattan", "Manhattan plot of an association table (colflow assoc, plink2 "
                             ".glm.*, regenie .regenie)")
    p.add_argument("table")
    p.add_argument("--genome-wide", type=float, default=_plot_scan.GENOME_WIDE,
                   help="p of the genome-wide line (default 5e-8)")
    p.add_argument("--suggestive", type=float, default=_plot_scan.SUGGESTIVE,
                   help="p of the suggestive line (default 1e-5)")
    p.add_argument("--label-top", type=int, default=10,
                   help="label the N most significant loci (default 10)")
    p.add_argument("--label-window", type=int, default=500_000,
                   help="labelled loci at least this many base pairs apart (default 500000)")
    p.add_argument("--no-thin", action="store_true",
                   help="draw every point (default: thin the points less significant than "
                        "the suggestive line)")
    p = command("qq", "QQ plot of an association table's p-values with λ and a band of the "
                      "expected order statistics")
    p.add_argument("table")
    p.add_argument("--level", type=float, default=0.95,
                   help="the band's coverage, between 0 and 1 (default 0.95)")
    p.add_argument("--no-thin", action="store_true",
                   help="draw every point (default: thin the points along the diagonal)")
    p = command("trace", "trace of a bayesr chain (PREFIX.trace.tsv) with ESS and Geweke's z")
    p.add_argument("trace")
    p.add_argument("--burnin", type=int, default=200,
                   help="iterations shaded and left out of the diagnostics (default 200)")
    p = command("rhat", "several bayesr chains (different seeds) overlaid with their split "
                        "R-hat")
    p.add_argument("traces", nargs="+")
    p.add_argument("--burnin", type=int, default=200, help="iterations left out (default 200)")
    p = command("pcs", "principal-component pairs of colflow pca's PREFIX.eigenvec")
    p.add_argument("eigenvec")
    p.add_argument("--color-by", help="colour the samples by this column")
    p.add_argument("--samples", help="a table with IID and the --color-by column")
    p.add_argument("--pairs", default="1:2,3:4", help="PC pairs A:B,... (default 1:2,3:4)")
    p = command("ld", "heat map of an LD matrix (colflow ld ... band or square) over a region")
    p.add_argument("matrix")
    p.add_argument("--start", type=int, default=0, help="first variant (default 0)")
    p.add_argument("--count", type=int, default=300, help="variants drawn (default 300)")
    return parser


def _pairs(text: str) -> list[tuple[int, int]]:
    try:
        return [(int(a), int(b)) for a, b in (pair.split(":") for pair in text.split(","))]
    except ValueError:
        raise ValueError(f"--pairs: {text!r} is not a list of A:B numbers such as 1:2,3:4")


def _draw(a: argparse.Namespace) -> None:
    if a.command == "manhattan":
        _plot_scan.manhattan(a.table, title=a.title, genome_wide=a.genome_wide,
                             suggestive=a.suggestive, label_top=a.label_top,
                             label_window=a.label_window, thin=not a.no_thin, out=a.out)
    elif a.command == "qq":
        _plot_scan.qq(a.table, title=a.title, level=a.level, thin=not a.no_thin, out=a.out)
    elif a.command == "trace":
        _plot_chain.trace(a.trace, burnin=a.burnin, title=a.title, out=a.out)
    elif a.command == "rhat":
        _plot_chain.rhat(a.traces, burnin=a.burnin, title=a.title, out=a.out)
    elif a.command == "pcs":
        _plot_matrix.pcs(a.eigenvec, color_by=a.color_by, samples=a.samples,
                         pairs=_pairs(a.pairs), title=a.title, out=a.out)
    else:
        _plot_matrix.ld(a.matrix, start=a.start, count=a.count, title=a.title, out=a.out)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        _draw(arguments)
    except (ValueError, TypeError, OSError, ImportError) as e:
        print(f"colflow-plot {arguments.command}: {e}", file=sys.stderr)
        return 1
    print(f"colflow-plot: wrote {arguments.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
