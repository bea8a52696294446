#!/usr/bin/env python3
"""The demo's summaries and its results page (scripts/demo.sh). Python 3 standard library only.

    demo_report.py record STEPS TITLE COMMANDS SECONDS FINDING [FILE]   a step into STEPS
    demo_report.py page STEPS OUT.html                                  the results page
    demo_report.py lambda TABLE             genomic-control lambda of an association table
    demo_report.py hits TABLE CAUSAL P      variants below P, and how many are causal
    demo_report.py loci CLUMPED CAUSAL      clumps, and how many index variants are causal
    demo_report.py pc-populations EIGENVEC FAM   how PC1 separates the FID populations
    demo_report.py grm-summary REL_BIN N PAIRS   the GRM's diagonal and parent-offspring entries
    demo_report.py bayesr EFFECTS TRACE BURNIN CAUSAL H2   h2 against the truth, top PIPs
    demo_report.py correlation SSCORE_A SSCORE_B      correlation of the last columns
    demo_report.py lasso PATH               the path's size
    demo_report.py ma ASSOC STATS OUT.ma [MIN_MAF]   GCTB's .ma from a scan and stats
    demo_report.py hsq PARRES               h2 from SBayesR's .parRes
    demo_report.py flip-byte FILE           damages one byte in the middle of FILE

STEPS is a tab-separated file, one step per line: title, commands (joined by newlines, escaped
as \\n), seconds, finding, the files the page shows (comma-separated: a table's head, or a
picture).
"""

import array
import html
import math
import os
import statistics
import sys
from pathlib import Path

CHI2_1_MEDIAN = 0.454936423119572  # median of the chi-square distribution with 1 df


def read_table(path):
    """(header, rows) of a whitespace-separated table: "# key value" and "##" lines are comments,
    the first other line is the header (PLINK's leading '#' dropped)."""
    rows = [line.split() for line in Path(path).read_text().splitlines()
            if line.strip() and not line.startswith(("# ", "##"))]
    if not rows:
        sys.exit(f"demo_report: {path} holds no table")
    rows[0][0] = rows[0][0].lstrip("#")
    return rows[0], rows[1:]


def column(header, name, path):
    if name not in header:
        sys.exit(f"demo_report: {path} has no column {name} (columns: {' '.join(header)})")
    return header.index(name)


def p_values(path):
    header, rows = read_table(path)
    p = column(header, "P", path)
    ident = column(header, "ID", path)
    return [(r[ident], float(r[p])) for r in rows if r[p] not in ("NA", "nan")]


def chi2_1_quantile_of_p(p):
    """The 1-df chi-square statistic whose upper tail is p (inverse of erfc)."""
    lo, hi = 0.0, 1.0
    while math.erfc(math.sqrt(hi / 2)) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erfc(math.sqrt(mid / 2)) > p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def genomic_lambda(path):
    median_p = statistics.median(p for _, p in p_values(path))
    return chi2_1_quantile_of_p(median_p) / CHI2_1_MEDIAN


def causal_set(path):
    return set(Path(path).read_text().split())


def cmd_lambda(table):
    print(f"{genomic_lambda(table):.3f}")


def cmd_hits(table, causal, threshold):
    hits = [i for i, p in p_values(table) if p < float(threshold)]
    true = len(set(hits) & causal_set(causal))
    print(f"{len(hits)} variants at P < {threshold}, {true} of them causal")


def cmd_loci(clumped, causal):
    if not Path(clumped).exists():
        print("no variant reached the index threshold: no locus")
        return
    header, rows = read_table(clumped)
    snp = column(header, "SNP", clumped)
    index = [r[snp] for r in rows]
    true = len(set(index) & causal_set(causal))
    print(f"{len(index)} loci; {true} of their index variants are causal")


def cmd_pc_populations(eigenvec, fam):
    population = {}
    for line in Path(fam).read_text().splitlines():
        fid, iid = line.split()[:2]
        population[iid] = fid
    header, rows = read_table(eigenvec)
    iid = 1 if header[0] == "FID" else 0
    pc1 = [(population.get(r[iid], "?"), float(r[iid + 1])) for r in rows]
    groups = sorted({p for p, _ in pc1})
    means = {g: statistics.fmean(v for p, v in pc1 if p == g) for g in groups}
    # A sample is placed right when its PC1 is nearer its own population's mean than any other.
    right = sum(min(groups, key=lambda g: abs(v - means[g])) == p for p, v in pc1)
    text = ", ".join(f"{g} {means[g]:+.3f}" for g in groups)
    print(f"PC1 means by population {text}: PC1 alone places {right} of {len(pc1)} samples "
          "in their population")


def cmd_grm_summary(rel_bin, n, pairs):
    n, pairs = int(n), int(pairs)
    values = array.array("f")
    with open(rel_bin, "rb") as f:
        values.frombytes(f.read())
    if len(values) != n * n:
        sys.exit(f"demo_report: {rel_bin} holds {len(values)} values, not {n} x {n}")
    diagonal = statistics.fmean(values[i * n + i] for i in range(n))
    parent_offspring = statistics.fmean(values[(4 * b) * n + 4 * b + 1] for b in range(pairs))
    print(f"mean diagonal {diagonal:.3f}; the simulated parent-offspring pairs "
          f"{parent_offspring:.3f} (expected 0.5)")


def cmd_bayesr(effects, trace, burnin, causal, h2_truth):
    header, rows = read_table(effects)
    ident, pip = column(header, "ID", effects), column(header, "PIP", effects)
    top = sorted(rows, key=lambda r: -float(r[pip]))[:20]
    true = len({r[ident] for r in top} & causal_set(causal))
    t_header, t_rows = read_table(trace)
    it, h2 = column(t_header, "ITER", trace), column(t_header, "H2", trace)
    kept = [float(r[h2]) for r in t_rows if int(r[it]) > int(burnin)]
    print(f"posterior mean h2 {statistics.fmean(kept):.3f} over {len(kept)} iterations "
          f"(simulated genetic share {float(h2_truth):.3f}; the markers also take up the "
          f"population shift); {true} of the 20 highest inclusion "
          "probabilities are causal")


def last_column(path):
    header, rows = read_table(path)
    ids = column(header, "IID", path)
    return {r[ids]: float(r[-1]) for r in rows}


def cmd_correlation(a, b):
    x, y = last_column(a), last_column(b)
    shared = sorted(set(x) & set(y))
    print(f"{statistics.correlation([x[i] for i in shared], [y[i] for i in shared]):.3f}")


def cmd_ma(assoc, stats, out, min_maf="0"):
    """GCTB's .ma (SNP A1 A2 freq b se p N) from an association table and colflow stats, the
    variants of minor allele frequency at least min_maf."""
    s_header, s_rows = read_table(stats)
    s_id, s_freq = column(s_header, "ID", stats), column(s_header, "A1_FREQ", stats)
    freq = {r[s_id]: r[s_freq] for r in s_rows}
    header, rows = read_table(assoc)
    pick = [column(header, name, assoc) for name in ("ID", "A1", "A2", "BETA", "SE", "P", "N_OBS")]
    lines = ["SNP A1 A2 freq b se p N"]
    for r in rows:
        ident, a1, a2, b, se, p, n = (r[k] for k in pick)
        maf = min(float(freq[ident]), 1 - float(freq[ident]))
        if "NA" not in (b, se, p) and maf >= float(min_maf):
            lines.append(f"{ident} {a1} {a2} {freq[ident]} {b} {se} {p} {n}")
    Path(out).write_text("\n".join(lines) + "\n")


def cmd_hsq(par_res):
    header, rows = read_table(par_res)
    hsq = next((r for r in rows if r[0] == "hsq"), None)
    if hsq is None:
        sys.exit(f"demo_report: {par_res} has no hsq row")
    print(f"{float(hsq[1]):.3f} (sd {float(hsq[2]):.3f})")


def cmd_lasso(path):
    header, rows = read_table(path)
    print(f"{len(rows)} penalties; the last keeps {rows[-1][column(header, 'NONZERO', path)]} "
          "variants" if "NONZERO" in header else f"{len(rows)} penalties on the path")


def cmd_flip_byte(path):
    with open(path, "r+b") as f:
        f.seek(0, os.SEEK_END)
        middle = f.tell() // 2
        f.seek(middle)
        byte = f.read(1)[0]
        f.seek(middle)
        f.write(bytes([byte ^ 0xFF]))


def cmd_record(steps, title, commands, seconds, finding, shown=""):
    commands_text = Path(commands).read_text().strip().replace("\n", "\\n")
    fields = [title, commands_text, seconds, finding, shown]
    with open(steps, "a", encoding="utf-8") as f:
        f.write("\t".join(x.replace("\t", " ") for x in fields) + "\n")


def head(path, lines=8, width=160):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = [next(f, "").rstrip("\n")[:width] for _ in range(lines)]
    except OSError:
        return ""
    return "\n".join(t for t in text if t)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>colflow demo: a study on simulated data</title>
<style>
body {{ font-family: sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }}
pre {{ background: #f4f4f4; padding: 0.5rem; overflow-x: auto; }}
.finding {{ font-weight: bold; }}
.time {{ color: #666; }}
img {{ max-width: 100%; }}
</style>
</head>
<body>
<h1>colflow demo: a study on simulated data</h1>
<p>{count} steps in {total} s. Each shows the commands as typed, what it found, and the head
of its main output (files in this folder).</p>
{sections}
</body>
</html>
"""

SECTION = """<section id="step{number}">
<h2>{number}. {title} <span class="time">({seconds} s)</span></h2>
<pre>{commands}</pre>
<p class="finding">{finding}</p>
{shown}</section>
"""


def cmd_page(steps, out):
    sections, total = [], 0
    lines = Path(steps).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        title, commands, seconds, finding, shown = line.split("\t")
        total += int(seconds)
        shown_html = ""
        for name in filter(None, shown.split(",")):
            if name.endswith((".png", ".svg")):
                shown_html += f'<img src="{html.escape(name)}" alt="{html.escape(name)}">\n'
            else:
                shown_html += (f"<p>{html.escape(name)}:</p>\n"
                               f"<pre>{html.escape(head(name))}</pre>\n")
        sections.append(SECTION.format(
            number=number, title=html.escape(title), seconds=seconds,
            commands=html.escape(commands.replace("\\n", "\n")),
            finding=html.escape(finding), shown=shown_html))
    page = PAGE.format(count=len(lines), total=total, sections="".join(sections))
    staged = Path(out).with_name(f".{Path(out).name}.tmp")
    staged.write_text(page, encoding="utf-8")
    staged.replace(out)


COMMANDS = {
    "record": cmd_record, "page": cmd_page, "lambda": cmd_lambda, "hits": cmd_hits,
    "loci": cmd_loci, "pc-populations": cmd_pc_populations, "grm-summary": cmd_grm_summary,
    "bayesr": cmd_bayesr, "correlation": cmd_correlation, "lasso": cmd_lasso,
    "flip-byte": cmd_flip_byte, "ma": cmd_ma, "hsq": cmd_hsq,
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
