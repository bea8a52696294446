"""The benchmark harness: colflow against the tools users would pick instead, side by side.

  python -m harness [--quick] [--only SUITE,...] [--simd PATH] [--rounds N] [--threads N]
                    [--page] [--baseline-colflow PROGRAM] [--scale-size NxM] [--scale-memory MIB]
  python -m harness --report RESULTS.tsv [--page]     (plots and the page from a results file)

bench/run.sh installs the peers, builds colflow and calls this from bench/. The suites run once
per vector path of colflow's that the CPU has (AVX-512 and AVX2 on an AVX-512 machine), or on
the one --simd names (COLFLOW_SIMD for every colflow process); the peers are the same programs
on each. Writes bench/results/<date>-<machine>[-SUITES][-quick]-<path>.tsv per path and its
plots (<same name>/*.png); a full run (or --page) regenerates the generated section of
docs/PERFORMANCE.md from them, the goals of every path side by side.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import sys
import time

from . import machine, performance_page, plots
from . import (suite_analyses, suite_bayesr, suite_codecs, suite_inputs, suite_models, suite_plots,
               suite_products, suite_python, suite_qc, suite_sbayesr, suite_scale, suite_scaling,
               suite_streaming, suite_wgr)
from .context import FULL, QUICK, Context
from .data import Workspace, shared_uk10k
from .measure import log, read_tsv, write_tsv

SUITES = {"codecs": suite_codecs, "streaming": suite_streaming, "analyses": suite_analyses,
          "products": suite_products, "qc": suite_qc, "models": suite_models, "scaling": suite_scaling,
          "inputs": suite_inputs, "python": suite_python, "wgr": suite_wgr, "bayesr": suite_bayesr,
          "sbayesr": suite_sbayesr, "plots": suite_plots}
# Run only when asked for by name: half an hour and 15 GB of disk at its full size.
ON_REQUEST = {"scale": suite_scale}
DEFAULT = ",".join(SUITES)


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench/run.sh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small data, 2 rounds: every comparison in a few minutes")
    parser.add_argument("--only", default=DEFAULT,
                        help=f"comma-separated suites to run (default: all of {', '.join(SUITES)}; "
                        f"{', '.join(ON_REQUEST)} only when named)")
    parser.add_argument("--simd", choices=["all", *machine.VECTOR_PATHS], default="all",
                        help="the vector path colflow runs on (COLFLOW_SIMD); all: each one this "
                        "CPU has, widest first (default)")
    parser.add_argument("--rounds", type=int, help="alternating rounds per comparison")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for every tool")
    parser.add_argument("--page", action="store_true",
                        help="regenerate docs/PERFORMANCE.md's generated section (a full run "
                        "always does)")
    parser.add_argument("--report", metavar="TSV", help="only make the plots (and with --page "
                        "the page's section) from an existing results file")
    parser.add_argument("--colflow", default="build/release/cli/colflow")
    parser.add_argument("--baseline-colflow", metavar="PROGRAM",
                        help="an earlier build of colflow, from the repository's top like --colflow "
                        "(`bench/compare_builds.sh REV --build-only` makes one and prints its path): "
                        "the scaling suite times its uk10k BayesR iterations in the same rounds as "
                        "this build's")
    parser.add_argument("--scale-size", metavar="NxM",
                        help="samples x columns of the scale suite's store (default 200000x200000; "
                        "40000x40000 with --quick)")
    parser.add_argument("--scale-memory", metavar="MIB", type=int,
                        help="the scale suite's memory limit in MiB (default 2048; 160 with --quick)")
    args = parser.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

    if args.report:
        # bench/run.sh runs this from bench/: a path from the repository's top works too.
        results = args.report if os.path.exists(args.report) else os.path.join(root, args.report)
        report(root, results, args.page)
        return 0

    suites = [s for s in args.only.split(",") if s]
    unknown = [s for s in suites if s not in SUITES and s not in ON_REQUEST]
    if unknown:
        parser.error(f"unknown suite {', '.join(unknown)}; the suites are "
                     f"{', '.join([*SUITES, *ON_REQUEST])}")
    scale = QUICK if args.quick else FULL
    if args.rounds:
        scale = dataclasses.replace(scale, rounds=args.rounds)
    if args.scale_size:
        size = args.scale_size.lower().split("x")
        if len(size) != 2 or not all(part.isdigit() and int(part) > 0 for part in size):
            parser.error(f"--scale-size {args.scale_size}: expected SAMPLESxCOLUMNS, e.g. 200000x200000")
        scale = dataclasses.replace(scale, large_store=(int(size[0]), int(size[1])))
    if args.scale_memory:
        scale = dataclasses.replace(scale, memory_limit_mib=args.scale_memory)
    colflow = os.path.join(root, args.colflow)
    ws = Workspace(root, colflow, os.path.join(root, "build", "bench-quick" if args.quick else "bench-full"))
    baseline = os.path.join(root, args.baseline_colflow) if args.baseline_colflow else None
    if baseline and not os.access(baseline, os.X_OK):
        parser.error(f"--baseline-colflow {args.baseline_colflow}: not an executable program")
    ctx = Context(root, ws, scale, args.threads, ws.simulate(*scale.main), shared_uk10k(root), baseline)
    paths = machine.vector_paths() if args.simd == "all" else [args.simd]
    if not paths:
        parser.error("this CPU has neither AVX2 with FMA nor AVX-512: name --simd portable")
    results = [run_path(root, args, ctx, suites, colflow, baseline, path) for path in paths]
    figures = [report(root, r, False) for r in results]
    if args.page or (not args.quick and args.only == DEFAULT):
        update_page(root, results, figures[0])
    return 0


def run_path(root: str, args, ctx: Context, suites: list[str], colflow: str, baseline: str | None,
             path: str) -> str:
    """Every suite with COLFLOW_SIMD=path for colflow; returns the results file written."""
    os.environ["COLFLOW_SIMD"] = path
    scale = ctx.scale
    started = time.time()
    header = machine.describe(root, colflow, machine.build_dir_of(colflow))
    header += [f"date: {datetime.date.today().isoformat()}",
               f"command: bench/run.sh{' --quick' if args.quick else ''}"
               f"{'' if args.only == DEFAULT else ' --only ' + args.only}"
               f"{' --scale-size ' + args.scale_size if args.scale_size else ''}"
               f"{' --scale-memory ' + str(args.scale_memory) if args.scale_memory else ''}"
               f"{' --baseline-colflow ' + os.path.relpath(baseline, root) if baseline else ''}"
               f" --simd {path}",
               f"vector path: {path}", f"threads: {args.threads}", f"rounds: {scale.rounds}"]
    for line in header:
        log(line)
    rows = []
    for name in suites:
        log(f"\n== {name}")
        for cmp in {**SUITES, **ON_REQUEST}[name].run(ctx):
            rows += cmp.rows()
    header.append(f"minutes: {(time.time() - started) / 60:.1f}")

    # A run of some suites only is named after them, so that it never replaces the day's full run.
    partial = "" if args.only == DEFAULT else "-" + "-".join(suites)
    name = (f"{datetime.date.today().isoformat()}-{machine.machine_id()}{partial}"
            f"{'-quick' if args.quick else ''}-{path}")
    results = os.path.join(root, "bench", "results", name + ".tsv")
    os.makedirs(os.path.dirname(results), exist_ok=True)
    write_tsv(results, rows, header)
    log(f"\nwrote {os.path.relpath(results, root)} ({len(rows)} rows) in {header[-1]}")
    return results


def report(root: str, results: str, page: bool) -> list[str]:
    """Plots and the goals' summary of one results file (and with `page` the page's section
    from it alone); returns the plots' paths."""
    header, rows = read_tsv(results)
    figures = plots.make_all(results, header, rows)
    for f in figures:
        log(f"wrote {os.path.relpath(f, root)}")
    log(f"goals on the {header.get('vector path', '?')} path:")
    print(performance_page.summary(header, rows))
    if page:
        update_page(root, [results], figures)
    return figures


def update_page(root: str, results: list[str], figures: list[str]) -> None:
    """The generated section of docs/PERFORMANCE.md from the first (widest) path's results and
    its plots (`figures`), with the goals of every path side by side."""
    runs = [(r, *read_tsv(r)) for r in results]
    first, header, rows = runs[0]
    performance_page.update(os.path.join(root, "docs", "PERFORMANCE.md"), first, header, rows,
                            figures, [(h.get("vector path", "?"), h, r) for _, h, r in runs])
    log("updated the generated section of docs/PERFORMANCE.md")


if __name__ == "__main__":
    sys.exit(main())
