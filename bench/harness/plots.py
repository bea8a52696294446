"""The figures of a results file, written beside it as PNG:

  codecs.png     decode speed against compression ratio, one panel per data set: colflow's
                 codecs, Blosc2's settings, bed-reader
  streaming.png  seconds per pass by store codec and mode, one panel per data set
  analyses.png   colflow against each peer, per task (log scale)
"""
from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

COLOURS = {"colflow": "#1f77b4", "blosc2": "#ff7f0e", "bed-reader": "#2ca02c", "plink2": "#d62728",
           "plink1.9": "#9467bd", "scikit-learn": "#8c564b"}


def tool(contender: str) -> str:
    return contender.split()[0]


def machine_label(header: dict) -> str:
    return ", ".join(header.get("machine", "unknown machine").split(", ")[:2])


def plain_log_axis(axis) -> None:
    """Log scale labelled 0.5, 1, 2, 10 ... rather than powers of ten, minor ticks unlabelled."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def measures(rows, suite):
    return [r for r in rows if r["kind"] == "measure" and r["suite"] == suite]


def by_data(rows):
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(r["data"], []).append(r)
    return groups


def panels(groups: dict, width: float):
    """One figure with a panel per data set, side by side."""
    fig, axes = plt.subplots(1, len(groups), figsize=(width * len(groups), 4.8), squeeze=False)
    return fig, zip(axes[0], groups.items()), axes[0][0]


def save(fig, title: str, header: dict, path: str) -> str:
    """The title names what is shown and where it was measured."""
    fig.suptitle(f"{title}\n{machine_label(header)}, {header.get('date', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def codecs_figure(header, rows, path) -> str | None:
    groups = by_data(measures(rows, "codecs"))
    if not groups:
        return None
    fig, each, first = panels(groups, 5.2)
    for ax, (data, group) in each:
        for r in group:
            t = tool(r["contender"])
            ax.scatter(r["compression"], r["gb_per_s"], color=COLOURS.get(t, "grey"),
                       marker="o" if t == "colflow" else "^" if t == "blosc2" else "s",
                       s=46, label=t, zorder=3)
            if t != "blosc2":
                ax.annotate(r["contender"].removeprefix("colflow "), (r["compression"], r["gb_per_s"]),
                            textcoords="offset points", xytext=(5, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_axis(ax.xaxis)
        plain_log_axis(ax.yaxis)
        ax.set_title(data, fontsize=9)
        ax.set_xlabel("compression ratio (float64 bytes / stored bytes)")
        ax.grid(True, which="both", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), fontsize=8, loc="lower left")
    first.set_ylabel("decode speed, GB/s of float64 (one thread)")
    return save(fig, "Decode speed vs compression ratio: colflow codecs, Blosc2 settings, bed-reader",
                header, path)


def streaming_figure(header, rows, path) -> str | None:
    groups = by_data(measures(rows, "streaming"))
    if not groups:
        return None
    fig, each, _ = panels(groups, 5.6)
    for ax, (data, group) in each:
        stores = list(dict.fromkeys(r["task"].removeprefix("pass over ").removesuffix(" store")
                                    for r in group))
        modes = list(dict.fromkeys(r["contender"] for r in group))
        width = 0.8 / len(modes)
        for m, mode in enumerate(modes):
            xs, ys = [], []
            for s, store in enumerate(stores):
                for r in group:
                    if r["contender"] == mode and r["task"] == f"pass over {store} store":
                        xs.append(s + (m - (len(modes) - 1) / 2) * width)
                        ys.append(r["seconds"])
            ax.bar(xs, ys, width, label=mode)
        ax.set_xticks(range(len(stores)), stores, rotation=25, ha="right", fontsize=8)
        ax.set_yscale("log")
        plain_log_axis(ax.yaxis)
        ax.set_ylabel("seconds per pass (dot-axpy kernel)")
        ax.set_title(data, fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8, title="mode, threads", title_fontsize=8)
    return save(fig, "Streaming passes per store codec and mode (colflow bench)", header, path)


def analyses_figure(header, rows, path) -> str | None:
    tasks = [r for r in rows if r["kind"] == "measure" and r["suite"] in ("analyses", "models")]
    if not tasks:
        return None
    labels, values, colours = [], [], []
    several = len({r["data"] for r in tasks}) > 1
    for r in tasks:
        task = r["task"].split(" (")[0]
        data = f" [{r['data'].split(',')[0]}]" if several else ""
        labels.append(f"{task}{data} | {r['contender']}")
        values.append(r["seconds"])
        colours.append(COLOURS.get(tool(r["contender"]), "grey"))
    fig, ax = plt.subplots(figsize=(11.5, 0.28 * len(labels) + 1.6))
    ax.barh(range(len(labels)), values, color=colours)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    plain_log_axis(ax.xaxis)
    ax.set_xlabel("seconds (wall time of the run; BayesR: per iteration; scikit-learn: the fit)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    present = [t for t in COLOURS if any(tool(r["contender"]) == t for r in tasks)]
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[t]) for t in present]
    ax.legend(handles, present, fontsize=8, loc="lower right")
    datasets = ", ".join(dict.fromkeys(r["data"].split(",")[0] for r in tasks))
    return save(fig, f"colflow and peers per analysis ({datasets})", header, path)


def make_all(results: str, header: dict, rows: list[dict]) -> list[str]:
    directory = results.removesuffix(".tsv")
    os.makedirs(directory, exist_ok=True)
    made = [codecs_figure(header, rows, os.path.join(directory, "codecs.png")),
            streaming_figure(header, rows, os.path.join(directory, "streaming.png")),
            analyses_figure(header, rows, os.path.join(directory, "analyses.png"))]
    return [m for m in made if m]
