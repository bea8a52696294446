"""Timing contenders side by side: one process per run, contenders alternating round by round.

The machines we run on are shared virtual machines whose speed drifts by up to 2x within
minutes. Measuring contender A for a minute and then B for a minute would let that drift decide
the result, so every Comparison runs its contenders in rounds (A B C, then C B A, ...), keeps
every run, and reports per contender the median, and per declared pair the median of the
round-by-round ratios: both sides of a ratio were measured within the same round.
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable


@dataclasses.dataclass
class Run:
    """One measured run. `seconds` is what the comparison is about (wall time of the process,
    or the time a tool reports for the measured part); the other fields are optional."""
    seconds: float
    peak_rss_mb: float
    gb_per_s: float | None = None      # decoded float64 bytes per second
    busy: float | None = None          # compute-busy fraction of a streaming pass
    compression: float | None = None   # float64 bytes over compressed bytes (peers report it)
    h2: float | None = None            # a Bayesian model's posterior mean heritability
    peak_anon_mb: float | None = None  # anonymous memory only (heap, stacks), when sampled
    stdout: str = ""
    stderr: str = ""


# colflow with zlib's own deflate/inflate instead of libdeflate for zlib frames (the reference
# implementation, colflow before libdeflate): contenders named "... (libz)" run with it, beside
# the default ones in the same rounds.
LIBZ = " (libz)"


def libz_env() -> dict:
    return {**os.environ, "COLFLOW_ZLIB_IMPL": "zlib"}


# An earlier build of colflow (bench/run.sh --baseline-colflow): contenders named "baseline
# colflow, ..." run it, beside this build's in the same rounds.
BASELINE = "baseline colflow"


class CommandFailed(RuntimeError):
    pass


def settle_in_page_cache(*paths: str) -> None:
    """Drops the files (a store's too) from the page cache and reads each once in order, so that
    every contender starts from the state a file read from disk leaves: its pages cached in the
    large pieces the kernel's read-ahead allocates. What earlier runs left varies (a shuffled
    pass that prefetched frame by frame caches a page at a time), and a reader that maps its
    input pays a fault per cached piece (docs/PERFORMANCE.md, quality control)."""
    files = []
    for path in paths:
        files += [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs] \
            if os.path.isdir(path) else [path]
    os.sync()
    for name in files:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            while os.read(fd, 1 << 24):
                pass
        finally:
            os.close(fd)


def timed(cmd: list[str], cwd: str, env: dict | None = None) -> Run:
    """Runs cmd under /usr/bin/time: wall seconds (timed here, to the microsecond) and peak
    resident set size of the process (for a process that maps a store, the RSS includes the
    mapped pages it touched)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, *cmd], cwd=cwd,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise CommandFailed(f"{' '.join(cmd)} (in {cwd}) exited with {proc.returncode}:\n"
                                f"{proc.stderr[-3000:]}")
        kb = t.read().split()[-1]
    return Run(seconds, int(kb) / 1024, stdout=proc.stdout, stderr=proc.stderr)


def timed_reporting(cmd: list[str], cwd: str, env: dict | None = None) -> Run:
    """A peer measured in its own process that prints one JSON object with 'seconds' (the timed
    part only: no interpreter start, no data loading) and optionally 'gb_per_s'."""
    run = timed(cmd, cwd, env)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    run.seconds = report["seconds"]
    run.gb_per_s = report.get("gb_per_s")
    run.compression = report.get("compression")
    return run


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


@dataclasses.dataclass
class Contender:
    name: str
    measure: Callable[[], Run]
    threads: int | None = None
    compression: float | None = None   # float64 bytes over stored bytes, when it applies
    runs: list[Run] = dataclasses.field(default_factory=list)


class Comparison:
    """Contenders of one task on one data set, measured in alternating rounds."""

    def __init__(self, suite: str, data: str, task: str):
        self.suite, self.data, self.task = suite, data, task
        self.contenders: dict[str, Contender] = {}
        self.pairs: list[tuple[str, str]] = []
        self.work: int | None = None
        self.peak: tuple[str, float] | None = None

    def add(self, name: str, measure: Callable[[], Run], threads: int | None = None,
            compression: float | None = None) -> None:
        self.contenders[name] = Contender(name, measure, threads, compression)

    def ratio(self, a: str, b: str) -> None:
        """Report time(a) / time(b), the median over rounds (below 1: a is faster)."""
        self.pairs.append((a, b))

    def throughput(self, work: int | None, peak_label: str | None = None,
                   peak_per_s: float | None = None) -> None:
        """Report work / median time per contender (column pairs_per_s: `work` is the units of
        one run, e.g. sample-pairs summed) and, when given, the machine's bound on that rate as a
        row of kind "peak" named peak_label."""
        self.work = work
        self.peak = (peak_label, peak_per_s) if peak_label else None

    def run(self, rounds: int, log=print) -> "Comparison":
        order = list(self.contenders.values())
        for r in range(rounds):
            for c in (order if r % 2 == 0 else order[::-1]):
                run = c.measure()
                c.runs.append(run)
                log(f"  {self.data} | {self.task} | {c.name}: {run.seconds:.4g} s, "
                    f"{run.peak_rss_mb:.0f} MB")
        return self

    def median_seconds(self, name: str) -> float:
        return median(r.seconds for r in self.contenders[name].runs)

    def paired_ratio(self, a: str, b: str) -> float:
        """The median over the rounds of a's time over b's; NaN when b never took any time."""
        ra, rb = self.contenders[a].runs, self.contenders[b].runs
        ratios = [x.seconds / y.seconds for x, y in zip(ra, rb) if y.seconds > 0]
        return statistics.median(ratios) if ratios else float("nan")

    def rows(self) -> list[dict]:
        base = {"suite": self.suite, "data": self.data, "task": self.task}
        rows = []
        for c in self.contenders.values():
            if not c.runs:
                continue
            rows.append({**base, "kind": "measure", "contender": c.name, "threads": c.threads,
                         "runs": len(c.runs), "seconds": median(r.seconds for r in c.runs),
                         "seconds_min": min(r.seconds for r in c.runs),
                         "seconds_max": max(r.seconds for r in c.runs),
                         "peak_rss_mb": median(r.peak_rss_mb for r in c.runs),
                         "gb_per_s": median(r.gb_per_s for r in c.runs),
                         "busy": median(r.busy for r in c.runs), "compression": c.compression,
                         "h2": median(r.h2 for r in c.runs),
                         "peak_anon_mb": median(r.peak_anon_mb for r in c.runs),
                         "pairs_per_s": self.work / median(r.seconds for r in c.runs)
                         if self.work else None})
        if self.peak and rows:
            rows.append({**base, "kind": "peak", "contender": self.peak[0], "pairs_per_s": self.peak[1]})
        for a, b in self.pairs:
            if self.contenders[a].runs and self.contenders[b].runs:
                rows.append({**base, "kind": "ratio", "contender": a, "versus": b,
                             "runs": len(self.contenders[a].runs), "ratio": self.paired_ratio(a, b)})
        return rows


COLUMNS = ["kind", "suite", "data", "task", "contender", "threads", "runs", "seconds",
           "seconds_min", "seconds_max", "peak_rss_mb", "gb_per_s", "compression", "busy",
           "versus", "ratio", "pairs_per_s", "h2", "peak_anon_mb"]


def format_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_tsv(path: str, rows: list[dict], header_lines: list[str]) -> None:
    """The results file: '# key: value' lines describing the machine and the run, then one row
    per contender (kind 'measure': medians) and per declared pair (kind 'ratio')."""
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        for line in header_lines:
            out.write(f"# {line}\n")
        out.write("\t".join(COLUMNS) + "\n")
        for row in rows:
            out.write("\t".join(format_cell(row.get(c)) for c in COLUMNS) + "\n")
    os.replace(tmp, path)


def read_tsv(path: str) -> tuple[dict[str, str], list[dict]]:
    header, rows, columns = {}, [], None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            header[key] = value
        elif columns is None:
            columns = line.split("\t")
        else:
            row = dict(zip(columns, line.split("\t")))
            for k in ("seconds", "seconds_min", "seconds_max", "peak_rss_mb", "gb_per_s",
                      "compression", "busy", "ratio", "pairs_per_s", "h2", "peak_anon_mb"):
                row[k] = float(row[k]) if row.get(k) else None
            for k in ("threads", "runs"):
                row[k] = int(row[k]) if row.get(k) else None
            rows.append(row)
    return header, rows


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
