"""The generated section of docs/PERFORMANCE.md, made from a results file: what was measured
where, the goals with their verdicts, and the tables behind them. The section runs from the
'## Latest full run' heading to the next '## ' heading (or the end of the page) and is replaced
whole; the rest of the page is written by hand."""
from __future__ import annotations

import os

from .measure import BASELINE, LIBZ

SECTION = "## Latest full run"


def find(rows, suite=None, data=None, task=None, contender=None, kind="measure"):
    for r in rows:
        if (r["kind"] == kind and (suite is None or r["suite"] == suite)
                and (data is None or r["data"] == data) and (task is None or r["task"] == task)
                and (contender is None or r["contender"] == contender)):
            yield r


def one(rows, **keys):
    return next(find(rows, **keys), None)


def ratio(rows, data, task, contender, versus):
    for r in find(rows, data=data, task=task, contender=contender, kind="ratio"):
        if r["versus"] == versus:
            return r["ratio"]
    return None


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1e3:.3g} ms"


def mb(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} MB"


def num(value: float | None, digits=3) -> str:
    return "–" if value is None else f"{value:.{digits}g}"


def table(head: list[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(row) + " |" for row in body), ""]


class Goals:
    """Each goal: what it asks, what was measured, and whether it holds."""

    def __init__(self):
        self.lines: list[tuple[str, str, bool]] = []

    def add(self, goal: str, measured: str, holds: bool) -> None:
        self.lines.append((goal, measured, holds))

    def table(self) -> list[str]:
        return table(["goal", "measured", "holds"],
                     [[g, m, "yes" if h else "**no**"] for g, m, h in self.lines])


def codec_goals(rows, goals: Goals) -> None:
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="codecs")):
        group = list(find(rows, suite="codecs", data=data))
        blosc2 = [r for r in group if r["contender"].startswith("blosc2")]
        colflow = [r for r in group if r["contender"].startswith("colflow")]
        if not blosc2 or not colflow:
            continue
        smallest = max(blosc2, key=lambda r: r["compression"])
        fastest = max(blosc2, key=lambda r: r["gb_per_s"])
        versus = (f"Blosc2 best ratio {smallest['compression']:.1f} ({smallest['contender'][7:]}), "
                  f"best speed {fastest['gb_per_s']:.2f} GB/s ({fastest['contender'][7:]})")
        if "genotype" in data or not data.startswith("dense"):
            for r in colflow:
                if r["contender"] in ("colflow genotype", "colflow genotype-zstd"):
                    goals.add(f"{data}: {r['contender'][8:]} codec smaller and faster than the best Blosc2 setting",
                              f"ratio {r['compression']:.1f}, {r['gb_per_s']:.2f} GB/s; {versus}",
                              r["compression"] > smallest["compression"] and r["gb_per_s"] > fastest["gb_per_s"])
        else:
            best_ratio = max(colflow, key=lambda r: r["compression"])
            best_speed = max(colflow, key=lambda r: r["gb_per_s"])
            goals.add(f"{data}: colflow's best within 10% of Blosc2's best ratio and speed",
                      f"colflow ratio {best_ratio['compression']:.2f} ({best_ratio['contender'][8:]}), "
                      f"{best_speed['gb_per_s']:.2f} GB/s ({best_speed['contender'][8:]}); {versus}",
                      best_ratio["compression"] >= 0.9 * smallest["compression"]
                      and best_speed["gb_per_s"] >= 0.9 * fastest["gb_per_s"])


def zlib_goals(rows, goals: Goals) -> None:
    """libdeflate against zlib's own inflate on the same data, in the same rounds."""
    for r in find(rows, suite="codecs", kind="ratio"):
        if r["versus"].endswith(LIBZ):
            goals.add(f"{r['data']}: {r['contender'].removeprefix('colflow ')} decodes ≥ 3x faster "
                      "with libdeflate than with zlib", f"{1 / r['ratio']:.2f}x", 1 / r["ratio"] >= 3)
    for r in find(rows, suite="models", kind="ratio"):
        if r["versus"] == "colflow float64 zlib-6 pipelined" + LIBZ:
            after = one(rows, data=r["data"], task=r["task"], contender=r["contender"])
            before = one(rows, data=r["data"], task=r["task"], contender=r["versus"])
            busy = (f", compute busy {before['busy'] * 100:.0f}% -> {after['busy'] * 100:.0f}%"
                    if after and before and after["busy"] is not None and before["busy"] is not None else "")
            goals.add(f"{r['data']}: BayesR on a zlib-6 float64 store faster with libdeflate than with zlib",
                      f"{1 / r['ratio']:.2f}x{busy}", r["ratio"] < 1)


def streaming_goals(rows, goals: Goals, threads: int) -> None:
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="streaming")):
        for store in ("float64 zstd-3", "float64 zlib-6"):
            task = f"pass over {store} store"
            r = ratio(rows, data, task, f"pipelined {threads}t", "sequential 1t")
            if r is not None:
                goals.add(f"{data}, {store} store: pipelined ≥ 1.7x faster than sequential",
                          f"{1 / r:.2f}x", 1 / r >= 1.7)
        r = ratio(rows, data, "pass over genotype store", f"pipelined {threads}t", f"ram {threads}t")
        if r is not None:
            goals.add(f"{data}, genotype store: pipelined pass no slower than in RAM as float64",
                      f"pipelined / RAM {r:.2f}", r <= 1.0)


def analysis_goals(rows, goals: Goals) -> None:
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="analyses")):
        r = ratio(rows, data, "assoc, 1 phenotype", "colflow assoc", "plink2 --glm")
        if r is not None:
            goals.add(f"{data}: assoc time ≤ 0.5x plink2 --glm", f"{r:.3f}x", r <= 0.5)
        r = ratio(rows, data, "assoc, case/control", "colflow assoc", "plink2 --glm")
        if r is not None:
            goals.add(f"{data}: case/control assoc time ≤ 0.5x plink2 --glm firth-fallback",
                      f"{r:.3f}x", r <= 0.5)
        for n in (2, 10):
            r = ratio(rows, data, f"assoc, case/control, {n} covariates", "colflow assoc",
                      "plink2 --glm")
            if r is not None:
                goals.add(f"{data}: case/control assoc with {n} covariates ≤ 0.5x plink2 --glm "
                          "firth-fallback", f"{r:.3f}x", r <= 0.5)
        r = ratio(rows, data, "pca, 10 components", "colflow pca", "plink2 --pca approx")
        if r is not None:
            goals.add(f"{data}: pca ≥ 10x faster than plink2 --pca approx", f"{1 / r:.1f}x", 1 / r >= 10)
        one_ = one(rows, data=data, task="assoc, 1 phenotype", contender="colflow assoc")
        ten = one(rows, data=data, task="assoc, 10 phenotypes", contender="colflow assoc")
        if one_ and ten:
            goals.add(f"{data}: assoc with 10 phenotypes < 2x the time of one",
                      f"{ten['seconds'] / one_['seconds']:.2f}x", ten["seconds"] < 2 * one_["seconds"])
    for r in find(rows, suite="analyses", kind="ratio"):
        if r["contender"].startswith("colflow preprocess float64 zstd-3") and r["versus"].endswith("1 thread"):
            goals.add(f"{r['data']}: preprocess to zstd float64 with 2 threads ≥ 1.8x faster than 1",
                      f"{1 / r['ratio']:.2f}x", 1 / r["ratio"] >= 1.8)
    for r in find(rows, suite="models", kind="ratio"):
        if r["versus"].startswith("scikit-learn"):
            goals.add(f"{r['data']}: {r['task'].split()[0]} path faster than {r['versus']}",
                      f"{r['ratio']:.2f}x its time", r["ratio"] < 1)
        elif r["versus"] == "colflow genotype in-memory":
            goals.add(f"{r['data']}: BayesR on the genotype store no slower than on the matrix in RAM",
                      f"{r['ratio']:.2f}x", r["ratio"] <= 1)
        elif r["versus"] == "colflow float64 zlib-6 pipelined":
            goals.add(f"{r['data']}: BayesR ≥ 2x faster than on a zlib-6 float64 store",
                      f"{1 / r['ratio']:.1f}x", 1 / r["ratio"] >= 2)


def bayesr_goals(rows, goals: Goals) -> None:
    """BayesR per iteration at most 0.33x GCTB's and 0.1x BayesRRcmd's time, and the three
    chains' posterior mean h² within 0.02 of each other."""
    bounds = {"GCTB --bayes R": 0.33, "BayesRRcmd ppbayes --marker-cache": 0.1}
    for r in find(rows, suite="bayesr", kind="ratio"):
        bound = bounds.get(r["versus"])
        if bound is not None:
            goals.add(f"{r['data']}: BayesR per iteration ≤ {bound}x {r['versus']}",
                      f"{r['ratio']:.2f}x", r["ratio"] <= bound)
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="bayesr")):
        h2 = {r["contender"]: r["h2"] for r in find(rows, suite="bayesr", data=data, kind="measure")
              if r["h2"] is not None}
        if len(h2) > 1:
            spread = max(h2.values()) - min(h2.values())
            goals.add(f"{data}: BayesR's posterior mean h² within 0.02 of GCTB's and BayesRRcmd's",
                      ", ".join(f"{v:.3f}" for v in h2.values()), spread <= 0.02)


def sbayesr_goals(rows, goals: Goals) -> None:
    """SBayesR per iteration at most 0.33x GCTB's time, the LD build at most 0.5x GCTB's
    --make-full-ldm, the LD store at most 0.5x the bytes of GCTB's .bin, and h² within 0.02."""
    for r in find(rows, suite="sbayesr", kind="ratio"):
        what = r["contender"].removeprefix("colflow ")
        bound = 0.33 if r["task"].startswith("sbayesr") else 0.5
        goals.add(f"{r['data']}: {what} ≤ {bound}x {r['versus']}'s time", f"{r['ratio']:.2f}x",
                  r["ratio"] <= bound)
    for r in find(rows, suite="sbayesr", kind="measure"):
        if r["contender"].startswith("colflow ld") and r["compression"]:
            goals.add(f"{r['data']}: {r['contender'].removeprefix('colflow ')}: store ≤ 0.5x the "
                      "bytes of GCTB's .bin", f"{1 / r['compression']:.2f}x",
                      r["compression"] >= 2)
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="sbayesr")):
        h2 = {r["contender"]: r["h2"] for r in find(rows, suite="sbayesr", data=data, kind="measure")
              if r["h2"] is not None}
        if len(h2) > 1:
            goals.add(f"{data}: SBayesR's posterior mean h² within 0.02 of GCTB's (every LD source)",
                      ", ".join(f"{v:.3f}" for v in h2.values()),
                      max(h2.values()) - min(h2.values()) <= 0.02)


def product_goals(rows, goals: Goals) -> None:
    """Every product (score, LD, GRM) at most half PLINK's time on the same data and threads."""
    for r in find(rows, suite="products", kind="ratio"):
        goals.add(f"{r['data']}: {r['task'].split(' (')[0]} ≤ 0.5x {r['versus']}",
                  f"{r['ratio']:.3f}x", r["ratio"] <= 0.5)


def scaling_goals(rows, goals: Goals) -> None:
    for r in find(rows, suite="scaling", kind="ratio"):
        if r["versus"].startswith(BASELINE) and not r["contender"].startswith(BASELINE):
            # Two copies of one build differ by up to a few percent over a few rounds here.
            goals.add(f"{r['data']}: BayesR with {r['contender'].split(', ')[1]} no slower than the "
                      "baseline build (within 5%)", f"{r['ratio']:.2f}x its time", r["ratio"] <= 1.05)
        elif r["task"].startswith("assoc"):
            goals.add(f"{r['data']}: assoc with 10 phenotypes at most 1.5x the time of one "
                      f"({r['task'].split(', ')[-1]})", f"{r['ratio']:.2f}x", r["ratio"] <= 1.5)
        elif (r["contender"] == "colflow, 1 thread" and r["data"].startswith("sim")
              and "genotype store" in r["data"]):
            # The multi-core target: the iterative analyses on a many-sample genotype store.
            what = "BayesR iteration" if r["task"].startswith("bayesr") else "lasso path"
            goals.add(f"{r['data']}: {what} at {r['versus'].split(', ')[1]} at least 1.7x faster "
                      "than at 1", f"{r['ratio']:.2f}x", r["ratio"] >= 1.7)


def input_goals(rows, goals: Goals) -> None:
    """Import of a BGEN, VCF or .pgen against plink2 --make-pgen on the same file; of a .pgen at
    most 0.5x plink2's time for the same job (--export bgen-1.2 keeps the dosages as the store does,
    --make-bed the hard calls); the dosage store's size against the BGEN 1.2 8-bit file and the
    .pgen."""
    for r in find(rows, suite="inputs", kind="ratio"):
        pgen_input = r["task"].startswith("import .pgen")
        if r["versus"] == "plink2 --make-pgen":
            goals.add(f"{r['data']}: {r['task']} faster than plink2 --make-pgen",
                      f"{r['ratio']:.2f}x its time", r["ratio"] < 1)
        elif pgen_input and (r["versus"] == "plink2 --export bgen-1.2" or
                             (r["versus"] == "plink2 --make-bed" and "hard calls" in r["task"])):
            goals.add(f"{r['data']}: {r['task']} at most 0.5x {r['versus']}",
                      f"{r['ratio']:.2f}x its time", r["ratio"] <= 0.5)
        elif r["versus"] in ("BGEN 1.2, 8 bits", "plink2 .pgen + .pvar + .psam"):
            goals.add(f"{r['data']}: dosage store smaller than the {r['versus']}",
                      f"{r['ratio']:.2f}x its size", r["ratio"] < 1)


def python_goals(rows, goals: Goals) -> None:
    """The Python package's read of a whole genotype store into float32 against bed-reader's
    read of the .bed: at least 2x faster."""
    for r in find(rows, suite="python", kind="ratio"):
        if r["task"] == "read into numpy float32":
            goals.add(f"{r['data']}: Python read into float32 at least 2x faster than bed-reader",
                      f"{1 / r['ratio']:.2f}x faster", r["ratio"] <= 0.5)


def qc_goals(rows, goals: Goals) -> None:
    """Every quality-control step at most half PLINK's time on the same data and threads."""
    for r in find(rows, suite="qc", kind="ratio"):
        goals.add(f"{r['data']}: {r['task'].split(' (')[0]} ≤ 0.5x {r['versus']}",
                  f"{r['ratio']:.3f}x", r["ratio"] <= 0.5)


def plot_goals(rows, goals: Goals) -> None:
    """Each picture of colflow-plot from its input (an association table of a million rows
    for the Manhattan and QQ plots) in under 10 s, the whole process timed."""
    for r in find(rows, suite="plots"):
        goals.add(f"{r['task']}: colflow-plot under 10 s", seconds(r["seconds"]),
                  r["seconds"] < 10)


def goals_of(header, rows) -> Goals:
    goals = Goals()
    codec_goals(rows, goals)
    zlib_goals(rows, goals)
    streaming_goals(rows, goals, int(header.get("threads", "2")))
    analysis_goals(rows, goals)
    product_goals(rows, goals)
    qc_goals(rows, goals)
    scaling_goals(rows, goals)
    input_goals(rows, goals)
    python_goals(rows, goals)
    bayesr_goals(rows, goals)
    sbayesr_goals(rows, goals)
    plot_goals(rows, goals)
    return goals


def codec_tables(rows) -> list[str]:
    out = []
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="codecs")):
        group = list(find(rows, suite="codecs", data=data))
        blosc2 = [r for r in group if r["contender"].startswith("blosc2")]
        shown = [r for r in group if not r["contender"].startswith("blosc2")]
        if blosc2:
            picks = {max(blosc2, key=lambda r: r["compression"])["contender"],
                     max(blosc2, key=lambda r: r["gb_per_s"])["contender"]}
            shown += [r for r in blosc2 if r["contender"] in picks]
        shown.sort(key=lambda r: -r["gb_per_s"])
        out += [f"*{data}* ({len(blosc2)} Blosc2 settings tried; the smallest and the fastest shown):", ""]
        out += table(["contender", "ratio vs float64", "decode GB/s", "peak RSS"],
                     [[r["contender"], f"{r['compression']:.1f}", f"{r['gb_per_s']:.2f}", mb(r["peak_rss_mb"])]
                      for r in shown])
    return out


def streaming_table(rows, threads: int) -> list[str]:
    body = []
    for r0 in find(rows, suite="streaming", contender=f"pipelined {threads}t"):
        # zlib stores have "(libz)" contenders, zlib's inflate in the same rounds: a row each.
        for suffix in ("", LIBZ):
            data, task = r0["data"], r0["task"]
            r = one(rows, data=data, task=task, contender=f"pipelined {threads}t{suffix}")
            if r is None:
                continue
            names = {m: m + suffix for m in ("pipelined 1t", f"pipelined {threads}t", "sequential 1t",
                                             f"ram {threads}t")}
            cells = {m: one(rows, data=data, task=task, contender=n) for m, n in names.items()}
            p_s = ratio(rows, data, task, names[f"pipelined {threads}t"], names["sequential 1t"])
            p_1 = ratio(rows, data, task, names[f"pipelined {threads}t"], names["pipelined 1t"])
            p_r = ratio(rows, data, task, names[f"pipelined {threads}t"], names[f"ram {threads}t"])
            ram = cells[f"ram {threads}t"]
            store = task.removeprefix("pass over ").removesuffix(" store") + suffix
            body.append([data, store,
                         seconds(cells["pipelined 1t"]["seconds"] if cells["pipelined 1t"] else None),
                         seconds(r["seconds"]), f"{r['busy'] * 100:.0f}%",
                         seconds(cells["sequential 1t"]["seconds"] if cells["sequential 1t"] else None),
                         seconds(ram["seconds"]) if ram else ("does not fit" if not suffix else "–"),
                         f"{1 / p_s:.2f}x" if p_s else "–", f"{1 / p_1:.2f}x" if p_1 else "–",
                         num(p_r) if p_r else "–", mb(r["peak_rss_mb"]), mb(ram["peak_rss_mb"]) if ram else "–"])
    return table(["data", "store", "pipelined 1 thread", f"pipelined {threads} threads", "busy",
                  "sequential", "in RAM", "speed-up vs sequential", f"{threads} vs 1 thread",
                  "pipelined / RAM", "peak RSS", "peak RSS in RAM"], body)


def scaling_tables(rows, threads: int) -> list[str]:
    """Per store: BayesR and the lasso path at 1 and N threads with the paired speed-up; the
    baseline build's BayesR beside this one's; assoc with 10 phenotypes against 1."""
    many = max(2, threads)
    one_, all_ = "colflow, 1 thread", f"colflow, {many} threads"

    def task(data, prefix):
        return next((r["task"] for r in find(rows, suite="scaling", data=data) if r["task"].startswith(prefix)),
                    None)

    def cells(data, prefix):
        t = task(data, prefix)
        a, b = one(rows, data=data, task=t, contender=one_), one(rows, data=data, task=t, contender=all_)
        speedup = ratio(rows, data, t, one_, all_)
        return [seconds(a["seconds"]) if a else "–", seconds(b["seconds"]) if b else "–",
                f"{speedup:.2f}x" if speedup else "–"]

    body, versus, assoc = [], [], []
    for data in dict.fromkeys(r["data"] for r in find(rows, suite="scaling")):
        lasso = task(data, "lasso")
        if task(data, "bayesr") or lasso:
            body.append([data, *cells(data, "bayesr"), *cells(data, "lasso"),
                         lasso[lasso.index("(") + 1:-1] if lasso and "(" in lasso else "–"])
        t = task(data, "bayesr")
        for threads_ in (1, many):
            name = one_ if threads_ == 1 else all_
            base = one(rows, data=data, task=t, contender=f"{BASELINE}, {name.split(', ')[1]}")
            this = one(rows, data=data, task=t, contender=name)
            if base and this:
                r = ratio(rows, data, t, name, base["contender"])
                versus.append([data, str(threads_), seconds(this["seconds"]), seconds(base["seconds"]),
                               num(r) if r else "–"])
        t = task(data, "assoc")
        if t:
            a = one(rows, data=data, task=t, contender="colflow assoc, 1 phenotype")
            b = one(rows, data=data, task=t, contender="colflow assoc, 10 phenotypes")
            r = ratio(rows, data, t, "colflow assoc, 10 phenotypes", "colflow assoc, 1 phenotype")
            assoc.append([data, str(a["threads"] if a else many), seconds(a["seconds"]) if a else "–",
                          seconds(b["seconds"]) if b else "–", f"{r:.2f}x" if r else "–"])
    out = table(["data", "BayesR per iteration, 1 thread", f"BayesR, {many} threads", "BayesR speed-up",
                 "lasso path, 1 thread", f"lasso, {many} threads", "lasso speed-up", "lasso path's passes"],
                body)
    if versus:
        out += ["BayesR per iteration, this build against the baseline build (`--baseline-colflow`), "
                "in the same rounds:", ""]
        out += table(["data", "threads", "this build", "baseline build", "this / baseline"], versus)
    if assoc:
        out += ["assoc on the simulation's genotype store, 1 phenotype against 10 (the phenotype plus "
                "independent noise), in the same rounds:", ""]
        out += table(["data", "threads", "assoc, 1 phenotype", "10 phenotypes", "10 / 1"], assoc)
    return out


def float64_mb(data: str) -> float:
    """8 N M bytes in MB, from a data set named "... NxM"."""
    samples, variants = data.split()[-1].split("x")
    return 8 * int(samples) * int(variants) / 1e6


def input_tables(rows) -> list[str]:
    """Per import: colflow preprocess, plink2 --make-pgen and --make-bed (and --export bgen-1.2
    for a .pgen) with the paired ratios and the sizes of what each wrote; then the sizes of the
    dosage data."""
    colflow, pgen, bed = "colflow preprocess", "plink2 --make-pgen", "plink2 --make-bed"
    export = "plink2 --export bgen-1.2"
    body, sizes = [], []
    for r in find(rows, suite="inputs", contender=colflow):
        data, task = r["data"], r["task"]
        p, b = one(rows, data=data, task=task, contender=pgen), one(rows, data=data, task=task, contender=bed)
        e = one(rows, data=data, task=task, contender=export)
        to = [ratio(rows, data, task, colflow, other) for other in (pgen, bed, export)]
        written = " / ".join("–" if x is None or x["compression"] is None
                             else f"{float64_mb(data) / x['compression']:.1f}" for x in (r, p, b))
        body.append([data, task.removeprefix("import "), seconds(r["seconds"]),
                     *(seconds(x["seconds"]) if x else "–" for x in (p, b, e)),
                     *(f"{x:.2f}x" if x else "–" for x in to), written,
                     mb(r["peak_rss_mb"]), mb(p["peak_rss_mb"]) if p else "–"])
    for r in find(rows, suite="inputs", kind="size"):
        versus = ratio(rows, r["data"], r["task"], "colflow dosage store, dosage-zstd-3", r["contender"])
        sizes.append([r["data"], r["contender"], f"{float64_mb(r['data']) / r['compression']:.1f}",
                      f"{64 / r['compression']:.2f}", f"{versus:.2f}x" if versus else "–"])
    out = table(["data", "input", colflow, pgen, bed, export, "colflow / --make-pgen",
                 "colflow / --make-bed", "colflow / --export bgen-1.2",
                 "written, MB (colflow / .pgen / .bed)", "peak RSS colflow", "peak RSS --make-pgen"], body)
    if sizes:
        out += ["The dosage data on disk (the default store is the one the imports make; the other "
                "codecs for the record):", ""]
        out += table(["data", "file", "MB", "bits per dosage", "default store / this"], sizes)
    return out


def throughput_table(rows, suite: str = "products") -> list[str]:
    """Sample-pairs per second of each contender of the suite's pair products (the LD matrix,
    the GRM, KING's table), and the share of the machine's bound (kind "peak") it reaches."""
    body = []
    for r in find(rows, suite=suite):
        peak = next(find(rows, suite=suite, data=r["data"], task=r["task"], kind="peak"), None)
        if r["pairs_per_s"] is None or peak is None:
            continue
        body.append([r["data"], r["task"], r["contender"], f"{r['pairs_per_s'] / 1e9:.3g}",
                     f"{peak['pairs_per_s'] / 1e9:.3g}", f"{100 * r['pairs_per_s'] / peak['pairs_per_s']:.1f}%",
                     peak["contender"]])
    return table(["data", "task", "contender", "10⁹ sample-pairs/s", "bound, 10⁹/s", "of bound", "bound"],
                 body) if body else []


def peer_table(rows, suites) -> list[str]:
    body = []
    shown = [r for r in rows if r["kind"] == "measure" and r["suite"] in suites]
    with_busy = any(r["busy"] is not None for r in shown)
    with_h2 = any(r.get("h2") is not None for r in shown)
    for r in shown:
        lead = next((x for x in find(rows, data=r["data"], task=r["task"], kind="ratio")
                     if x["versus"] == r["contender"]), None)
        first = next(find(rows, data=r["data"], task=r["task"]))["contender"]
        ratio_cell = "" if lead is None else f"{lead['ratio']:.3f}" + (
            "" if lead["contender"] == first else f" ({lead['contender'].removeprefix('colflow ')} / this)")
        body.append([r["data"], r["task"], r["contender"], seconds(r["seconds"]),
                     f"{r['seconds_min']:.3g}–{r['seconds_max']:.3g}", ratio_cell, mb(r["peak_rss_mb"])]
                    + ([f"{r['busy'] * 100:.0f}%" if r["busy"] is not None else ""] if with_busy else [])
                    + ([f"{r['h2']:.3f}" if r.get("h2") is not None else ""] if with_h2 else []))
    return table(["data", "task", "contender", "median", "range (s)", "first row / this", "peak RSS"]
                 + (["compute busy"] if with_busy else []) + (["h²"] if with_h2 else []), body)


def section(results: str, header: dict, rows: list[dict], figures: list[str], base: str) -> str:
    """The section's text; links are relative to `base`, the folder of the page."""
    rel = os.path.relpath(results, base)
    threads = int(header.get("threads", "2"))
    lines = [SECTION, "",
             f"<!-- Generated by bench/run.sh from {rel}; edit bench/harness/performance_page.py, not this section. -->",
             "",
             f"Measured by `{header.get('command', 'bench/run.sh')}` on {header.get('date', '?')} "
             f"({header.get('minutes', '?')} minutes), on {header.get('machine', '?')}; "
             f"{header.get('compiler', '?')}; {header.get('build', '?')}. Peers: {header.get('plink2', '?')}, "
             f"{header.get('plink1.9', '?')}; Python {header.get('python', '?')}. Every tool ran with "
             f"{threads} threads unless a row says otherwise. All results: [{os.path.basename(rel)}]({rel}).",
             "",
             f"Method: each comparison runs its contenders in {header.get('rounds', '?')} alternating rounds "
             "(A B C, then C B A), so that a machine whose speed drifts favours no side (these shared "
             "virtual machines drift by up to 2x within minutes). Tables give medians; a ratio is the "
             "median of the round-by-round ratios (below 1: colflow takes less time). Peak RSS is the "
             "process's maximum resident set from `/usr/bin/time`; for colflow it includes the page "
             "cache of the mapped store. Data: `colflow simulate` (1% missing calls, seed 1) and uk10k "
             "from `../shared/data` (3,642 x 6,717, real LD).", ""]
    lines += ["### Goals", ""] + goals_of(header, rows).table()
    lines += ["Why goals can miss on this machine (the tables below carry the figures):", "",
              "- The plain genotype codec stores 2 bits per call whatever the allele frequency, so "
              "an entropy coder goes below it on rare variants (Blosc2's zstd on the standardised "
              "doubles, which repeat few values); zstd on the codes (`genotype-zstd`) is the "
              "genotype codec's setting for size, and keeps the speed lead.",
              "- A decode-bound pass on 2 vCPUs can gain at most what a second thread gives: "
              "compare the pipelined speed-up over sequential with the '2 vs 1 thread' column.",
              "- `assoc` reads no values (it works on the 2-bit codes), so what each added phenotype "
              "costs is its products with every column, its share of the phenotype file and its "
              "table: the products run at the FMA units' peak (two phenotypes per instruction with "
              "AVX-512), the file is read across threads and the tables are written and synced "
              "together; [SCALING.md](SCALING.md), \"Several phenotypes in one scan\", "
              "breaks a 10-phenotype scan down by phase.", ""]

    def figure(name: str) -> list[str]:
        return [f"![{name}]({os.path.relpath(f, base)})" for f in figures
                if os.path.basename(f) == name + ".png"] + [""]

    lines += ["### Store size and decode speed (`bench/run.sh --only codecs`)", ""] + figure("codecs") + [
              "One thread. colflow: a sequential `colflow bench --kernel none` pass over the mapped "
              "store (every column decoded, nothing computed); Blosc2: its decode loop alone, one chunk "
              "per column into a reused buffer; bed-reader: `read(dtype='float64')` of the .bed. "
              "Ratio: float64 bytes over stored bytes (a store's index and text files included). "
              "zlib stores are written and decoded by libdeflate; \"(libz)\" rows are the same data "
              "written and decoded by zlib (`COLFLOW_ZLIB_IMPL=zlib`, colflow before libdeflate), "
              "measured in the same rounds.", ""]
    lines += codec_tables(rows)
    lines += ["### Streaming passes (`bench/run.sh --only streaming`)", ""] + figure("streaming") + [
              "`colflow bench`, dot-axpy kernel (z·r then r −= c z, the inner step of BayesR and "
              "coordinate descent), one untimed warm-up pass then timed passes; busy is the compute "
              "stage's share of the pipelined pass (near 100%: decoding keeps up). 'In RAM' decodes "
              "the whole matrix into memory first and times passes over it; the large simulation "
              "does not fit in memory as float64.", ""]
    lines += streaming_table(rows, threads)
    lines += ["### Analyses against PLINK (`bench/run.sh --only analyses`)", ""] + figure("analyses") + [
              "colflow reads its genotype store, PLINK the .bed it was made from; wall time of each "
              "process. `preprocess` against `--make-bed` is a reference for I/O speed: each reads the "
              ".bed and writes a file set of about its size.", ""]
    lines += peer_table(rows, ("analyses",))
    if any(find(rows, suite="products")):
        lines += ["### Scores, LD and relationship matrices (`bench/run.sh --only products`)", "",
                  "colflow's `score`, `ld` and `grm` on its genotype store against plink2 `--score` "
                  "and `--make-rel`, PLINK 1.9 `--r2` and `--make-grm-bin` on the .bed it was made from, "
                  "same flags; wall time of each process. The square LD matrix and the GRM run on the "
                  "first columns of the main simulation.", ""]
        lines += peer_table(rows, ("products",))
        lines += ["Throughput: distinct entries times what each sums over (LD: column pairs x "
                  "samples; GRM: sample pairs x variants) per second of the whole run, beside the "
                  "machine's bound for the kernel: LD's nine AND + POPCNT + ADD per pair of 64-sample "
                  "words, the GRM's one double multiply-add per sample pair and variant.", ""]
        lines += throughput_table(rows)
    if any(find(rows, suite="qc")):
        lines += ["### Quality control against PLINK (`bench/run.sh --only qc`)", "",
                  "colflow's `hardy`, `qc` (regenie's filter recipe), `ld --indep-pairwise`, `king` "
                  "and `clump` on its genotype store against plink2's `--hardy`, filters, "
                  "`--indep-pairwise`, `--make-king-table`, `--king-cutoff` and PLINK 1.9's `--clump` "
                  "(of plink2 `--glm`'s table) on the .bed it was made from, same flags; wall time of "
                  "each process. KING runs on the first columns of the main simulation.", ""]
        lines += peer_table(rows, ("qc",))
        lines += ["KING's throughput: sample pairs x variants per second, beside the integer bound "
                  "of the LD kernel (AND, POPCNT and ADD over words of 64 samples), which KING's "
                  "counts share.", ""]
        lines += throughput_table(rows, "qc")
    lines += ["### Penalised regression and BayesR (`bench/run.sh --only models`)", "",
              "Lasso/elastic net: colflow's whole run streaming its store (`--extract` of the first "
              "columns) against scikit-learn's fit alone on the same standardised matrix in memory, "
              "same 20 lambdas, tolerance 1e-7 (stopping rules differ, so the ratio is indicative). "
              "BayesR: seconds per iteration of the same sampler on a genotype store (`--mode auto`, "
              "pipelined), the standardised matrix in RAM (in-memory), and a zlib-6 float64 store, "
              "decoded by libdeflate and, as \"(libz)\", by zlib's inflate (`COLFLOW_ZLIB_IMPL=zlib`, "
              "colflow before libdeflate) in the same rounds.", ""]
    lines += peer_table(rows, ("models",))
    if any(find(rows, suite="bayesr")):
        lines += ["### BayesR against GCTB and BayesRRcmd (`bench/run.sh --only bayesr`)", "",
                  "The peers built from their public sources (`../shared/peers`), same data and "
                  "chains: colflow `bayesr` on a genotype store, GCTB 2.05 `--bayes R` with its "
                  "documented 4-component mixture (its sampler is single-threaded), BayesRRcmd "
                  "`ppbayes` with its marker cache. Seconds per iteration of the chain alone (GCTB: "
                  "the difference of chains of 2N and N iterations, over N); h² is each chain's "
                  "posterior mean.", ""]
        lines += peer_table(rows, ("bayesr",))
    if any(find(rows, suite="sbayesr")):
        lines += ["### SBayesR against GCTB (`bench/run.sh --only sbayesr`)", "",
                  "GCTB 2.05 built from its public source (`../shared/peers`), on a slice of uk10k "
                  "(MAF ≥ 0.01) and summary statistics of its test phenotype: the full LD matrix "
                  "(colflow's LD store against GCTB's `.ldm.full`; their bytes in the results "
                  "file's `compression` column, GCTB's `.bin` over the contender's), then the "
                  "chains on the same `.ma` (seconds per iteration: the difference of chains of 2N "
                  "and N iterations, over N; h² is the posterior mean hsq).", ""]
        lines += peer_table(rows, ("sbayesr",))
    if any(find(rows, suite="scaling")):
        lines += ["### Scaling with threads (`bench/run.sh --only scaling`)", "",
                  "Each analysis at `--threads 1` and at "
                  f"`--threads {max(2, threads)}`, alternating in the same rounds; a speed-up is the "
                  "median of the round-by-round ratios 1-thread time / "
                  f"{max(2, threads)}-thread time. BayesR: seconds per iteration as it reports them, "
                  "`--mode auto` (sequential on an uncompressed genotype store, where nothing needs "
                  "decoding; pipelined on the zstd float64 store). Lasso: wall time of a path of 8 "
                  "lambdas down to 0.2 lambda_max; its sweeps cover the working set only, its full "
                  "passes (KKT checks and the statistics pass) every column. Data: a simulation with "
                  "many samples (`colflow simulate --seed 5`, no missing calls) as a genotype store "
                  "and as a zstd-3 store of standardised float64, and uk10k.", ""]
        lines += scaling_tables(rows, threads)
    if any(find(rows, suite="inputs")):
        lines += ["### Import of BGEN, VCF and .pgen (`bench/run.sh --only inputs`)", "",
                  "`colflow preprocess` against `plink2 --make-pgen` and `plink2 --make-bed` on the same "
                  "file, wall time of each process. Dosages: `plink2 --dummy N M 0.01 dosage-freq=0.3 acgt "
                  "--seed 1` (a quarter of the dosages non-integer, a sixth missing) exported as BGEN 1.2 "
                  "with 8 bits (the UK Biobank layout), as BGEN 1.3 (zstd, 16 bits) and as a bgzipped VCF "
                  "with DS; colflow writes a dosage store (codec dosage-zstd: whole copies as 2-bit "
                  "codes, the other dosages apart, zstd-3), plink2 a "
                  ".pgen with the dosages or a .bed of hard calls. Hard calls: the main simulation's .bed "
                  "exported as a bgzipped VCF, as BGEN 1.2 (8 bits) and as a .pgen; colflow writes a genotype store. "
                  "A .pgen is also converted by `plink2 --export bgen-1.2` (16 bits), plink2's own way "
                  "to another file that keeps the dosages. plink2 reads a BGEN with `ref-last`. Sizes count every file of a store, the .bgen alone "
                  "(it holds the variants' IDs and positions), and the .pgen with its .pvar and .psam.", ""]
        lines += input_tables(rows)
    if any(find(rows, suite="python")):
        lines += ["### The Python package against bed-reader (`bench/run.sh --only python`)", "",
                  "In the same interpreter (the package built by `scripts/python-test.sh`, bed-reader "
                  "beside it), seconds of the timed call only: `colflow.open(store).read(dtype=...)` "
                  "of the genotype store against `bed_reader.open_bed(bed).read(dtype=...)` of the "
                  ".bed it was made from, both into a new array in order F; and every column "
                  "through a numpy function 1,000 columns at a time (missing values to 0, then the "
                  "block's product with a vector): `store.stream()` against bed-reader reading the "
                  "same column ranges in turn, numpy's BLAS on one thread. Both libraries read "
                  "with 2 threads and must agree on a checksum of what they read. Peak RSS counts "
                  "the touched pages of colflow's mapped store and the pandas it imports.", ""]
        lines += peer_table(rows, ("python",))
    if any(find(rows, suite="plots")):
        lines += ["### Pictures (`bench/run.sh --only plots`)", "",
                  "`colflow-plot` of the package built by `scripts/python-test.sh`, one process per "
                  "picture writing a PNG, as a user runs it (interpreter start and imports "
                  "included), on inputs written with numpy: an association table in colflow "
                  "assoc's columns, a bayesr trace, an eigenvec of three populations coloured by a "
                  "samples file, and 300 variants of a banded LD matrix.", ""]
        lines += peer_table(rows, ("plots",))
    return "\n".join(lines) + "\n"


def paths_table(paths: list[tuple[str, dict, list[dict]]]) -> list[str]:
    """Every goal on each vector path (name, results header, rows): one column per path, in
    the order given; a goal one path's run did not measure is left empty there."""
    measured = [{g: (m, h) for g, m, h in goals_of(header, rows).lines} for _, header, rows in paths]
    order = list(dict.fromkeys(g for goals in measured for g in goals))
    body = [[g] + [f"{goals[g][0]}{'' if goals[g][1] else ' **(missed)**'}" if g in goals else ""
                   for goals in measured] for g in order]
    return table(["goal"] + [f"`COLFLOW_SIMD={name}`" for name, _, _ in paths], body)


def update(page: str, results: str, header, rows, figures,
           paths: list[tuple[str, dict, list[dict]]] | None = None) -> None:
    """Replaces the generated section of `page` in place (written whole, then renamed); with
    `paths` (name, header, rows of each vector path's run), their goals side by side."""
    text = open(page).read()
    start = text.index(SECTION + "\n")
    end = text.find("\n## ", start + len(SECTION))
    end = len(text) if end < 0 else end + 1
    body = section(results, header, rows, figures, os.path.dirname(os.path.abspath(page)))
    if paths and len(paths) > 1:
        goals_at = body.index("### Goals\n")
        side = ["### Goals on each vector path", "",
                "The same suites run once per vector path of this CPU, the peers unchanged "
                "(they choose their own code); the tables after this one are of the first "
                "path's run.", ""] + paths_table(paths)
        body = body[:goals_at] + "\n".join(side) + "\n" + body[goals_at:]
    new = text[:start] + body + ("\n" + text[end:] if end < len(text) else "")
    with open(page + ".tmp", "w") as out:
        out.write(new)
    os.replace(page + ".tmp", page)


def summary(header, rows) -> str:
    goals = goals_of(header, rows)
    width = max((len(g) for g, _, _ in goals.lines), default=0)
    return "\n".join(f"{'holds' if h else 'MISSED':6}  {g:<{width}}  {m}" for g, m, h in goals.lines)
