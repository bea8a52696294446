"""A store larger than memory (bench/run.sh --only scale; not part of a run of every suite).

A simulation of Scale.large_store samples x columns (200,000 x 200,000 by default: 10 GB of
codes; `--scale-size NxM` for another), no missing calls, as a genotype store (codes as they
are) and a genotype-zstd store; its .bed is removed once both stores exist. On each store:

  stream   colflow bench --mode pipelined --passes 1 (dot-axpy over every column)
  stats    colflow stats --remove (one sample): over every sample the store's own per-column
           statistics answer without a pass; a subset of samples makes it read every column
  assoc    colflow assoc, 1 phenotype
  lasso    colflow lasso, 8 lambdas down to 0.2 lambda_max (its full passes counted)
  bayesr   colflow bayesr, 5 iterations after 1 of burn-in (seconds per iteration as it reports)

each one run twice per round, alternating: "in cache" (the store read once just before, so
every page is in the page cache) and "memory-limited" (a memory cgroup of Scale.memory_limit_mib
that charges the page cache, with the store's pages dropped from the cache first, so every
byte comes from the disk through a cache far smaller than the store). Each row gives the time,
the store bytes read per second (gb_per_s: stored, not decoded, bytes, times the passes), the
compute-busy fraction where colflow reports one, and peak_anon_mb: the anonymous memory
(heap, stacks; sampled from /proc) that the design bounds; peak_rss_mb also counts the mapped
store pages the process touched. Ratios: memory-limited / in cache per store, and zstd /
genotype in each setting.

The time per sample-column comes from the same tasks on the scaling suite's 100,000 x 6,000
simulation, run in the same rounds in cache: a comparison per task in nanoseconds per
sample-column (its seconds column), ratio large / small.

The memory-limited runs need a writable memory cgroup (v1, or v2 with the memory controller):
root on most machines. Without one they are skipped, saying why, and the rest still runs.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time

from .context import Context
from .data import Dataset, store_bytes
from .measure import CommandFailed, Comparison, Run, log
from .suite_models import bayesr_iteration
from .suite_scaling import LAMBDA_MIN_RATIO, NLAMBDA, lasso_passes

SEED = 11
ITERATIONS = 5
CACHED, LIMITED = "in cache", "memory-limited"


# --- Running one process: wall time, peak memory, optionally inside a memory cgroup ----------

def status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_sampled(cmd: list[str], cwd: str, cgroup_procs: str | None = None) -> Run:
    """Runs cmd, sampling its /proc status every 20 ms for the peak resident (VmHWM) and
    anonymous (RssAnon) memory; inside the cgroup whose cgroup.procs file is given."""
    def enter_cgroup():
        with open(cgroup_procs, "w") as f:
            f.write(str(os.getpid()))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=enter_cgroup if cgroup_procs else None)
    peaks = {"VmHWM": 0, "RssAnon": 0}

    def sample():
        while proc.poll() is None:
            for field in peaks:
                peaks[field] = max(peaks[field], status_kb(proc.pid, field))
            time.sleep(0.02)
    sampler = threading.Thread(target=sample)
    sampler.start()
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - start
    sampler.join()
    if proc.returncode != 0:
        raise CommandFailed(f"{' '.join(cmd)} exited with {proc.returncode}:\n{stderr[-3000:]}")
    run = Run(seconds, peaks["VmHWM"] / 1024, stdout=stdout, stderr=stderr)
    run.peak_anon_mb = peaks["RssAnon"] / 1024
    return run


class MemoryCgroup:
    """A memory cgroup of `limit` bytes that charges the page cache (v1: a child of this
    process's memory cgroup; v2: a child of the hierarchy's root, which may hold both processes
    and children), created per run and removed after it. `why_not` says why none can be made."""

    def __init__(self, limit: int):
        self.limit, self.parent, self.version, self.why_not = limit, None, 0, ""
        mounts = [line.split() for line in open("/proc/self/mounts")]
        v1 = next((m[1] for m in mounts if m[2] == "cgroup" and "memory" in m[3].split(",")), None)
        v2 = next((m[1] for m in mounts if m[2] == "cgroup2"), None)
        own = re.search(r"^\d+:memory:(.*)$", open("/proc/self/cgroup").read(), re.M)
        if v1 and own:
            self.parent, self.version = v1 + own.group(1), 1
        elif v2 and "memory" in open(os.path.join(v2, "cgroup.controllers")).read().split():
            self.parent, self.version = v2, 2
        if self.parent and not os.access(self.parent, os.W_OK):
            self.parent = None
        if not self.parent:
            self.why_not = "no writable memory cgroup (v1, or v2 with the memory controller)"

    def run(self, cmd: list[str], cwd: str) -> Run:
        path = os.path.join(self.parent, f"colflow-scale-{os.getpid()}")
        os.mkdir(path)
        try:
            limit_file = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(self.limit))
            swap_file = "memory.memsw.limit_in_bytes" if self.version == 1 else "memory.swap.max"
            try:
                with open(os.path.join(path, swap_file), "w") as f:
                    f.write(str(self.limit) if self.version == 1 else "0")
            except OSError:
                pass  # no swap accounting: the machine has no swap to count either
            run = run_sampled(cmd, cwd, os.path.join(path, "cgroup.procs"))
            peak_file = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
            if os.path.exists(os.path.join(path, peak_file)):
                peak = int(open(os.path.join(path, peak_file)).read())
                if peak > self.limit:
                    raise RuntimeError(f"the cgroup used {peak} bytes, above its limit {self.limit}")
            return run
        finally:
            os.rmdir(path)


def drop_from_cache(store: str) -> None:
    """Writes back and drops the store's pages from the page cache (a page cached earlier stays
    charged to the cgroup that read it first, and would be read from memory)."""
    os.sync()
    for name in os.listdir(store):
        fd = os.open(os.path.join(store, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def read_into_cache(store: str) -> None:
    for name in os.listdir(store):
        with open(os.path.join(store, name), "rb", buffering=0) as f:
            while f.read(1 << 23):
                pass


# --- The tasks ----------------------------------------------------------------------------------

class Task:
    """One analysis on one store: its command, and what a finished run tells (passes over the
    store, time per iteration)."""

    def __init__(self, ctx: Context, name: str, store: str, data: Dataset):
        self.ctx, self.name, self.store, self.data = ctx, name, store, data
        self.out = ctx.ws.path(f"out/scale-{name}-{os.path.basename(store)}")
        self.bytes = store_bytes(store)

    def command(self) -> list[str]:
        c, t = self.ctx.colflow, str(self.ctx.threads)
        common = ["--quiet", "--threads", t]
        return {
            "stream": [c, "bench", self.store, "--mode", "pipelined", "--passes", "1", "--warmup", "0",
                       "--threads", t, "--json"],
            "stats": [c, "stats", self.store, *common, "--remove", self.first_sample(), "--out",
                      self.out + ".tsv"],
            "assoc": [c, "assoc", self.store, *common, "--pheno", self.data.pheno, "--out", self.out],
            "lasso": [c, "lasso", self.store, *common, "--pheno", self.data.pheno, "--nlambda", NLAMBDA,
                      "--lambda-min-ratio", LAMBDA_MIN_RATIO, "--out", self.out],
        }[self.name]

    def first_sample(self) -> str:
        """A file naming the data's first sample (FID IID)."""
        path = self.ctx.ws.path(f"out/scale-first-sample-{os.path.basename(self.data.prefix)}.txt")
        with open(self.data.prefix + ".fam") as fam, open(path, "w") as out:
            out.write(" ".join(fam.readline().split()[:2]) + "\n")
        return path

    def measure(self, runner) -> Run:
        if self.name == "bayesr":  # seconds per iteration: one pass
            run = bayesr_iteration(self.ctx, self.store, self.data.pheno, ITERATIONS, "auto", runner=runner)
        else:
            run = runner(self.command(), self.ctx.ws.dir)
        passes = 1
        if self.name == "lasso":
            passes = lasso_passes(self.out + ".path.tsv")[1]
        elif self.name == "stream":
            run.busy = json.loads(run.stdout)[0]["compute_busy_fraction"]
        run.gb_per_s = self.bytes * passes / run.seconds / 1e9
        return run

    def cached(self) -> Run:
        read_into_cache(self.store)
        return self.measure(run_sampled)

    def limited(self, cgroup: MemoryCgroup) -> Run:
        drop_from_cache(self.store)
        return self.measure(cgroup.run)

    def per_sample_column(self) -> Run:
        """In cache, with seconds as nanoseconds per sample-column."""
        run = self.cached()
        run.seconds *= 1e9 / (self.data.samples * self.data.variants)
        return run


TASKS = {"stream": "one pipelined pass (colflow bench)", "stats": "stats", "assoc": "assoc, 1 phenotype",
         "lasso": f"lasso path, {NLAMBDA} lambdas", "bayesr": f"bayesr, seconds per iteration ({ITERATIONS})"}


def make_stores(ctx: Context, samples: int, columns: int) -> tuple[Dataset, dict[str, str]]:
    """The simulation's genotype and genotype-zstd stores; the .bed goes once both exist."""
    prefix = ctx.ws.path(f"scale{samples}x{columns}")
    stores = {label: f"{prefix}-{label}.cf" for label in ("genotype", "genotype-zstd")}
    data = Dataset(f"sim {samples}x{columns}", prefix, prefix + ".phen", samples, columns)
    if not all(os.path.exists(os.path.join(s, "manifest.json")) for s in stores.values()):
        log(f"data: colflow simulate --samples {samples} --variants {columns} (scale suite)")
        ctx.ws.run("simulate", "--quiet", "--samples", str(samples), "--variants", str(columns),
                   "--missing", "0", "--seed", str(SEED), "--out", prefix)
        for label, store in stores.items():
            log(f"data: colflow preprocess --codec {label} -> {os.path.basename(store)}")
            ctx.ws.run("preprocess", "--quiet", "--force", "--bed", prefix, "--codec", label, "--out", store)
        os.remove(prefix + ".bed")
    return data, stores


def run(ctx: Context) -> list[Comparison]:
    samples, columns = ctx.scale.large_store
    os.makedirs(ctx.ws.path("out"), exist_ok=True)
    data, stores = make_stores(ctx, samples, columns)
    small = ctx.ws.simulate(*ctx.scale.scaling, seed=SEED, missing=0)
    small_store = ctx.ws.store(small, "genotype", "--codec", "genotype")
    cgroup = MemoryCgroup(ctx.scale.memory_limit_mib << 20)
    if cgroup.why_not:
        log(f"scale: memory-limited runs skipped: {cgroup.why_not}")
    log(f"scale: stores {', '.join(f'{k} {store_bytes(s) / 1e9:.2f} GB' for k, s in stores.items())}; "
        f"memory limit {ctx.scale.memory_limit_mib} MiB")
    comparisons = []
    for name, label in TASKS.items():
        cmp = Comparison("scale", data.name, label)
        for codec, store in stores.items():
            task = Task(ctx, name, store, data)
            cmp.add(f"{codec}, {CACHED}", task.cached, threads=ctx.threads)
            if not cgroup.why_not:
                cmp.add(f"{codec}, {LIMITED}", lambda t=task: t.limited(cgroup), threads=ctx.threads)
                cmp.ratio(f"{codec}, {LIMITED}", f"{codec}, {CACHED}")
        for setting in [CACHED] + ([LIMITED] if not cgroup.why_not else []):
            cmp.ratio(f"genotype-zstd, {setting}", f"genotype, {setting}")
        per = Comparison("scale", f"{data.name} against {small.name}", f"{label}: ns per sample-column")
        per.add(data.name, Task(ctx, name, stores["genotype"], data).per_sample_column, threads=ctx.threads)
        per.add(small.name, Task(ctx, name, small_store, small).per_sample_column, threads=ctx.threads)
        per.ratio(data.name, small.name)
        comparisons += [cmp.run(ctx.scale.rounds, log), per.run(ctx.scale.rounds, log)]
    return comparisons
