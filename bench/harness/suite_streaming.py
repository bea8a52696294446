"""Streaming passes (`colflow bench`, kernel dot-axpy: z.r then r -= c z, the inner step of
BayesR and coordinate descent) per codec: pipelined (the flow graph) with 1 and 2 threads,
sequential (decode then compute on one thread) and in RAM (the whole matrix decoded into memory
first, then passes over it), with the compute-busy fraction and peak memory of each.

The large simulation does not fit in memory as float64, so it has no in-RAM contender: that is
the case colflow exists for.

The zlib-6 store (written and read by libdeflate) has "(libz)" contenders in the same rounds: a
twin store written and read by zlib's own deflate/inflate (COLFLOW_ZLIB_IMPL=zlib, colflow
before libdeflate), pipelined and sequential, with the ratios of the two.
"""
from __future__ import annotations

import json

from .context import Context
from .data import Dataset
from .measure import LIBZ, Comparison, Run, libz_env, log, timed

STORES = [("genotype", ["--codec", "genotype"]),
          ("genotype-zstd", ["--codec", "genotype-zstd"]),
          ("float64 lz4-1", ["--codec", "lz4"]),
          ("float64 zstd-3", ["--codec", "zstd"]),
          ("float64 zlib-6", ["--codec", "zlib", "--level", "6"])]
LARGE_STORES = [STORES[0], STORES[3]]


def bench_pass(ctx: Context, store: str, mode: str, threads: int, passes: int, warmup: int,
               env: dict | None = None) -> Run:
    run = timed([ctx.colflow, "bench", store, "--mode", mode, "--threads", str(threads),
                 "--kernel", "dot-axpy", "--passes", str(passes), "--warmup", str(warmup), "--json"],
                ctx.ws.dir, env)
    (row,) = json.loads(run.stdout)
    run.seconds, run.gb_per_s = row["seconds_per_pass"], row["decoded_gb_per_s"]
    run.busy = row["compute_busy_fraction"]
    return run


def store_comparison(ctx: Context, data: Dataset, label: str, options: list[str],
                     with_ram: bool, passes: int, warmup: int) -> Comparison:
    store = ctx.ws.store(data, label.replace(" ", "-"), *options)
    cmp = Comparison("streaming", data.name, f"pass over {label} store")
    two = ctx.threads
    modes = [("pipelined", 1), ("pipelined", two), ("sequential", 1)] + ([("ram", two)] if with_ram else [])
    for mode, threads in modes:
        cmp.add(f"{mode} {threads}t", lambda m=mode, t=threads: bench_pass(ctx, store, m, t, passes, warmup),
                threads=threads)
    cmp.ratio(f"pipelined {two}t", "sequential 1t")
    cmp.ratio(f"pipelined {two}t", "pipelined 1t")
    if with_ram:
        cmp.ratio(f"pipelined {two}t", f"ram {two}t")
    if "zlib" in options:
        libz = ctx.ws.store(data, label.replace(" ", "-") + "-libz", *options, env=libz_env())
        for mode, threads in [("pipelined", two), ("sequential", 1)]:
            name = f"{mode} {threads}t"
            cmp.add(name + LIBZ, lambda m=mode, t=threads: bench_pass(ctx, libz, m, t, passes, warmup,
                                                                     libz_env()), threads=threads)
            cmp.ratio(name, name + LIBZ)
        cmp.ratio(f"pipelined {two}t{LIBZ}", f"sequential 1t{LIBZ}")
    return cmp


def run(ctx: Context) -> list[Comparison]:
    comparisons = []
    for data in [ctx.main] + ([ctx.uk10k] if ctx.uk10k else []):
        comparisons += [store_comparison(ctx, data, label, options, True, ctx.scale.passes, 1)
                        for label, options in STORES]
    large = ctx.ws.simulate(*ctx.scale.large)
    # One cold pass each: the first touch of the mapping is part of streaming a large store.
    comparisons += [store_comparison(ctx, large, label, options, False, 1, 0)
                    for label, options in LARGE_STORES]
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
    return comparisons
