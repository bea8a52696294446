"""Store size and decode speed, one thread: colflow's codecs against python-blosc2 (LZ4 and
ZSTD, each with no filter, byte shuffle and bit shuffle, at levels 1 and 5, or 5 in a quick
run) on the same columns, and against bed-reader decoding the .bed into float64.

Genotype data: the standardised genotype columns (what every analysis reads; colflow's
genotype codec keeps the 2-bit codes and decodes through a per-column table). Blosc2 gets the
very same float64 values (`colflow export --npy`), one chunk per column, the granularity a
column store needs. Dense data: standard normal float64 at full precision (noise: nothing to
find) and rounded to 3 significant digits (measured quantities).

colflow's figure is a sequential one-thread `colflow bench --kernel none` pass over the mapped
store: every column decoded into the stream's buffer (genotypes to standardised values, dense
stores to their stored values), nothing computed; Blosc2's is its decode loop alone.

zlib stores are written and read by libdeflate; each has a "(libz)" twin written and read by
zlib's own deflate/inflate (COLFLOW_ZLIB_IMPL=zlib: colflow before libdeflate), measured in the
same rounds, with the ratio of the two.
"""
from __future__ import annotations

import json
import os

import numpy as np

from . import data as datasets
from .context import Context
from .measure import LIBZ, Comparison, Run, libz_env, log, timed, timed_reporting

GENOTYPE_STORES = [("genotype", ["--codec", "genotype"]),
                   ("genotype-zstd", ["--codec", "genotype-zstd"]),
                   ("float64 lz4-1", ["--codec", "lz4"]),
                   ("float64 zstd-3", ["--codec", "zstd"]),
                   ("float64 zlib-6", ["--codec", "zlib", "--level", "6"]),
                   ("float64 zlib-6" + LIBZ, ["--codec", "zlib", "--level", "6"])]
DENSE_STORES = [("lz4-1", ["--codec", "lz4"]), ("lz4-1 shuffle", ["--codec", "lz4", "--shuffle"]),
                ("zstd-3", ["--codec", "zstd"]), ("zstd-3 shuffle", ["--codec", "zstd", "--shuffle"]),
                ("zstd-9 shuffle", ["--codec", "zstd", "--level", "9", "--shuffle"]),
                ("zlib-6 shuffle", ["--codec", "zlib", "--level", "6", "--shuffle"]),
                ("zlib-6 shuffle" + LIBZ, ["--codec", "zlib", "--level", "6", "--shuffle"])]


def env_of(label: str) -> dict | None:
    """The environment of colflow for a contender: zlib's inflate/deflate for "(libz)" ones."""
    return libz_env() if label.endswith(LIBZ) else None


def colflow_decode(ctx: Context, store: str, values: str, env: dict | None = None) -> Run:
    run = timed([ctx.colflow, "bench", store, "--mode", "sequential", "--threads", "1",
                 "--kernel", "none", "--values", values, "--passes", str(ctx.scale.passes), "--json"],
                ctx.ws.dir, env)
    (row,) = json.loads(run.stdout)
    run.seconds, run.gb_per_s = row["seconds_per_pass"], row["decoded_gb_per_s"]
    return run


def add_blosc2(ctx: Context, cmp: Comparison, npy: str) -> None:
    for codec, filt, level in [(codec, filt, level) for codec in ("LZ4", "ZSTD")
                               for filt in ("NOFILTER", "SHUFFLE", "BITSHUFFLE") for level in ctx.scale.blosc2_levels]:
        cmd = ctx.peer("blosc2-decode", npy, codec, filt, str(level), str(ctx.scale.passes))
        cmp.add(f"blosc2 {codec.lower()}-{level} {filt.lower()}",
                lambda cmd=cmd: timed_reporting(cmd, ctx.peer_cwd), threads=1)


def add_colflow(ctx: Context, cmp: Comparison, float64_bytes: int, stores, values: str) -> None:
    for label, store in stores:
        cmp.add(f"colflow {label}",
                lambda store=store, env=env_of(label): colflow_decode(ctx, store, values, env),
                threads=1, compression=float64_bytes / datasets.store_bytes(store))
    for label, _ in stores:
        if label.endswith(LIBZ):
            cmp.ratio(f"colflow {label.removesuffix(LIBZ)}", f"colflow {label}")


def blosc2_compressions(cmp: Comparison) -> None:
    """Blosc2's ratio is measured by its process: carry it from the runs to the contender."""
    for c in cmp.contenders.values():
        if c.name.startswith("blosc2") and c.runs:
            c.compression = c.runs[-1].compression


def genotype_comparison(ctx: Context, data: datasets.Dataset) -> Comparison:
    stores = [(label, ctx.ws.store(data, datasets.slug(label), *options, env=env_of(label)))
              for label, options in GENOTYPE_STORES]
    npy = ctx.ws.path(os.path.basename(data.prefix) + ".std.npy")
    if not (os.path.exists(npy) and os.path.getmtime(npy) > os.path.getmtime(stores[0][1])):
        ctx.ws.run("export", "--quiet", "--force", stores[0][1], "--npy", npy)
    cmp = Comparison("codecs", data.name, "decode standardised genotypes, one thread")
    add_colflow(ctx, cmp, data.float64_bytes, stores, "standardized")
    add_blosc2(ctx, cmp, npy)
    cmp.add("bed-reader .bed to float64",
            lambda: timed_reporting(ctx.peer("bed-reader", data.bed, "1"), ctx.peer_cwd),
            threads=1, compression=data.float64_bytes / os.path.getsize(data.bed))
    return cmp


def dense_npy(ctx: Context, kind: str) -> str:
    samples, columns = ctx.scale.dense
    npy = ctx.ws.path(f"dense-{kind}-{samples}x{columns}.npy")
    if not os.path.exists(npy):
        values = np.random.default_rng(11).standard_normal((samples, columns))
        if kind == "3digits":
            exponent = np.floor(np.log10(np.abs(values))) - 2
            values = np.round(values / 10.0**exponent) * 10.0**exponent
        np.save(npy + ".tmp.npy", np.asfortranarray(values))
        os.replace(npy + ".tmp.npy", npy)
    return npy


def dense_comparison(ctx: Context, kind: str, title: str) -> Comparison:
    npy = dense_npy(ctx, kind)
    samples, columns = ctx.scale.dense
    stores = [(label, ctx.ws.preprocess(npy[:-4] + "-" + datasets.slug(label) + ".cf", npy,
                                        "--npy", npy, *options, env=env_of(label)))
              for label, options in DENSE_STORES]
    cmp = Comparison("codecs", f"{title} {samples}x{columns}", "decode dense float64, one thread")
    add_colflow(ctx, cmp, 8 * samples * columns, stores, "stored")
    add_blosc2(ctx, cmp, npy)
    return cmp


def run(ctx: Context) -> list[Comparison]:
    sets = [datasets.first_columns(ctx.ws, ctx.main, ctx.scale.codec_columns)]
    if ctx.uk10k and not ctx.scale.quick:
        sets.append(ctx.uk10k)
    comparisons = [genotype_comparison(ctx, d) for d in sets]
    comparisons += [dense_comparison(ctx, "normal", "dense normal"),
                    dense_comparison(ctx, "3digits", "dense 3 significant digits")]
    for cmp in comparisons:
        cmp.run(ctx.scale.rounds, log)
        blosc2_compressions(cmp)
        fastest_blosc2 = min((c for c in cmp.contenders if c.startswith("blosc2")),
                             key=cmp.median_seconds)
        for c in cmp.contenders:
            if c.startswith("colflow"):
                cmp.ratio(c, fastest_blosc2)
    return comparisons
