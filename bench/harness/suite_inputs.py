"""Import of BGEN, VCF and PLINK 2 files: `colflow preprocess` against `plink2 --make-pgen` and
`plink2 --make-bed` on the same file, same threads, wall time and peak RSS of each process:

  import BGEN 1.2 dosages    dosages (below) as BGEN 1.2, 8 bits (`--export bgen-1.2 bits=8`,
                             the UK Biobank layout), with its .sample
  import BGEN 1.3 dosages    the same as BGEN 1.3 (`--export bgen-1.3`: zstd, 16 bits)
  import VCF DS dosages      the same as a bgzipped VCF with DS (`vcf-dosage=DS-force`);
                             colflow `--vcf --dosage DS`, plink2 `--vcf dosage=DS`
  import VCF GT hard calls   the main simulation's .bed as a bgzipped VCF (`--export vcf bgz`)
  import BGEN hard calls     the main simulation's .bed as BGEN 1.2, 8 bits; colflow
                             `--codec genotype`
  import .pgen dosages       the dosages' .pgen as plink2 wrote it; colflow `--pfile`
  import .pgen hard calls    the main simulation's .bed as a .pgen (`--make-pgen`); colflow
                             `--pfile`

The .pgen imports have a third plink2 contender, `--export bgen-1.2` (16 bits, its default):
plink2's own conversion of a .pgen into another file that keeps the dosages, as colflow's
dosage store does (--make-bed keeps hard calls only).

Dosages: `plink2 --dummy N M 0.01 dosage-freq=0.3 acgt --seed 1 --make-pgen`, N x M the main
simulation's shape (plink2 2.00a3.5 makes a quarter of the dosages non-integer and a sixth
missing, 37% of the hard calls missing). colflow writes a dosage store
(codec dosage-zstd at level 3, its default for dosage input: the split layout of
docs/FORMAT.md §7.4.1, whole copies as 2-bit codes and the other values apart) of dosages and a genotype
store of hard calls; plink2 --make-pgen keeps the dosages, --make-bed hard calls. plink2 reads
a BGEN with `ref-last` (the first allele counted, as plink2 exports and colflow reads by
default). The compression of a measure row is that of its output: float64 bytes (8 N M) over
the bytes of the store's files, of .pgen + .pvar + .psam or of .bed + .bim + .fam.

And the sizes of the dosage data, untimed: rows of kind 'size' whose compression is float64
bytes over the bytes of a file (so bytes = 8 N M / compression), and 'ratio' rows of the
default dosage store's bytes over each other's (below 1: the store is smaller). Sized: the
dosage store made from the BGEN 1.2 file (every file of the store directory) with its default
codec, with dosage-zstd-9, and with zstd-3 (shuffled and not) and lz4-1 on the 16-bit values
(`--no-split`); the BGEN 1.2 and 1.3 files (the .bgen
alone: it holds the variants' IDs and positions); the bgzipped VCF; and plink2's .pgen made
from the BGEN 1.2 file, with its .pvar and .psam (the store holds its variant and sample
tables too).

The inputs are made once per workspace with plink2 and kept while they are newer than what
they were made from. A colflow without `preprocess --vcf` (or `--dosage`, or `--pfile`) has the VCF
(or .pgen) comparisons left out, with a note in the log.
"""
from __future__ import annotations

import os
import subprocess

from .context import Context
from .data import Dataset, store_bytes
from .measure import Comparison, log, timed

COLFLOW, PGEN, BED = "colflow preprocess", "plink2 --make-pgen", "plink2 --make-bed"
EXPORT_BGEN = "plink2 --export bgen-1.2"
SIZES = "size on disk"
STORE = "colflow dosage store, dosage-zstd-3"
# Other codecs of the dosage store, for the record: label, preprocess options.
OTHER_STORES = [("colflow dosage store, dosage-zstd-9", ["--codec", "zstd", "--level", "9"]),
                ("colflow dosage store, zstd-3 shuffled", ["--no-split"]),
                ("colflow dosage store, lz4-1 shuffled", ["--codec", "lz4"]),
                ("colflow dosage store, zstd-3 not shuffled", ["--no-split", "--no-shuffle"])]
BGEN12, BGEN13 = "BGEN 1.2, 8 bits", "BGEN 1.3, 16 bits (zstd)"
VCF_DS, PGEN_FILES = "VCF with DS, bgzipped", "plink2 .pgen + .pvar + .psam"


def plink2_made(ctx: Context, out: str, suffixes: tuple, source: str | None, *args: str) -> str:
    """OUT + each suffix, written by `plink2 ARGS --out OUT` unless they all exist and are
    newer than source (or exist, without a source). plink2 writes to OUT.tmp first."""
    paths = [out + s for s in suffixes]
    if all(os.path.exists(p) and (source is None or os.path.getmtime(p) > os.path.getmtime(source))
           for p in paths):
        return out
    log(f"data: plink2 {' '.join(os.path.basename(a) for a in args)} -> {os.path.basename(out)}")
    subprocess.run(["plink2", *args, "--threads", str(ctx.threads), "--silent", "--out", out + ".tmp"],
                   cwd=ctx.ws.dir, check=True, stdout=subprocess.DEVNULL)
    for s in (*suffixes, ".log"):
        os.replace(out + ".tmp" + s, out + s)
    return out


def files_bytes(prefix: str, suffixes) -> int:
    return sum(os.path.getsize(prefix + s) for s in suffixes)


def colflow_has(ctx: Context, *flags: str) -> bool:
    """Whether `colflow preprocess` takes these options (its help names them)."""
    text = subprocess.run([ctx.colflow, "preprocess", "--help"], capture_output=True, text=True).stdout
    return all(f"{flag} " in text for flag in flags)


class Sizes:
    """Bytes of files holding one data set, untimed: a row of kind 'size' per file (compression:
    float64 bytes over its bytes) and a 'ratio' row per declared pair (bytes of a over b)."""

    def __init__(self, suite: str, data: str, task: str, float64_bytes: int):
        self.suite, self.data, self.task, self.float64_bytes = suite, data, task, float64_bytes
        self.bytes: dict[str, int] = {}
        self.pairs: list[tuple[str, str]] = []

    def add(self, name: str, nbytes: int) -> None:
        self.bytes[name] = nbytes
        log(f"  {self.data} | {self.task} | {name}: {nbytes / 1e6:.2f} MB")

    def ratio(self, a: str, b: str) -> None:
        self.pairs.append((a, b))

    def rows(self) -> list[dict]:
        base = {"suite": self.suite, "data": self.data, "task": self.task}
        rows = [{**base, "kind": "size", "contender": name, "compression": self.float64_bytes / n}
                for name, n in self.bytes.items()]
        rows += [{**base, "kind": "ratio", "contender": a, "versus": b,
                  "ratio": self.bytes[a] / self.bytes[b]}
                 for a, b in self.pairs if a in self.bytes and b in self.bytes]
        return rows


def run(ctx: Context) -> list:
    t = str(ctx.threads)
    main, (n, m) = ctx.main, ctx.scale.main
    out = ctx.ws.path("out")
    os.makedirs(out, exist_ok=True)

    # Hard calls: the main simulation as VCF and as BGEN 1.2.
    calls = ctx.ws.path(os.path.basename(main.prefix))
    calls_vcf = plink2_made(ctx, calls + "-gt", (".vcf.gz",), main.bed,
                            "--bfile", main.prefix, "--export", "vcf", "bgz") + ".vcf.gz"
    calls_bgen = plink2_made(ctx, calls + "-bgen12", (".bgen", ".sample"), main.bed,
                             "--bfile", main.prefix, "--export", "bgen-1.2", "bits=8")
    calls_pgen = plink2_made(ctx, calls + "-pgen", (".pgen", ".pvar", ".psam"), main.bed,
                             "--bfile", main.prefix, "--make-pgen")
    # Dosages: plink2 --dummy, as BGEN 1.2 8 bits, BGEN 1.3 and VCF with DS.
    dummy = plink2_made(ctx, ctx.ws.path(f"dosages{n}x{m}"), (".pgen", ".pvar", ".psam"), None,
                        "--dummy", str(n), str(m), "0.01", "dosage-freq=0.3", "acgt", "--seed", "1",
                        "--make-pgen")
    dosages = Dataset(f"dosages {n}x{m}", dummy, "", n, m)
    bgen12 = plink2_made(ctx, dummy + "-bgen12", (".bgen", ".sample"), dummy + ".pgen",
                         "--pfile", dummy, "--export", "bgen-1.2", "bits=8")
    bgen13 = plink2_made(ctx, dummy + "-bgen13", (".bgen", ".sample"), dummy + ".pgen",
                         "--pfile", dummy, "--export", "bgen-1.3")
    ds_vcf = plink2_made(ctx, dummy + "-ds", (".vcf.gz",), dummy + ".pgen",
                         "--pfile", dummy, "--export", "vcf", "bgz", "vcf-dosage=DS-force") + ".vcf.gz"

    comparisons = []

    def compare(data: Dataset, task: str, name: str, colflow: list[str], plink2: list[str],
                export_bgen: bool = False) -> None:
        """colflow preprocess COLFLOW against plink2 PLINK2 --make-pgen and --make-bed, and
        --export bgen-1.2 when `export_bgen`."""
        prefix = f"{out}/inputs-{name}"
        outputs = {COLFLOW: (prefix + ".cf", None), PGEN: (prefix, (".pgen", ".pvar", ".psam")),
                   BED: (prefix, (".bed", ".bim", ".fam"))}
        commands = {COLFLOW: [ctx.colflow, "preprocess", "--quiet", "--force", "--threads", t, *colflow,
                              "--out", prefix + ".cf"],
                    PGEN: ["plink2", *plink2, "--threads", t, "--silent", "--make-pgen", "--out", prefix],
                    BED: ["plink2", *plink2, "--threads", t, "--silent", "--make-bed", "--out", prefix]}
        if export_bgen:
            outputs[EXPORT_BGEN] = (prefix + "-export", (".bgen", ".sample"))
            commands[EXPORT_BGEN] = ["plink2", *plink2, "--threads", t, "--silent", "--export",
                                     "bgen-1.2", "--out", prefix + "-export"]
        cmp = Comparison("inputs", data.name, task)
        for contender, cmd in commands.items():
            cmp.add(contender, lambda cmd=cmd: timed(cmd, ctx.ws.dir), threads=ctx.threads)
        for other in commands:
            if other != COLFLOW:
                cmp.ratio(COLFLOW, other)
        comparisons.append((cmp, data, outputs))

    compare(dosages, "import BGEN 1.2 dosages", "bgen12",
            ["--bgen", bgen12 + ".bgen", "--sample", bgen12 + ".sample"],
            ["--bgen", bgen12 + ".bgen", "ref-last", "--sample", bgen12 + ".sample"])
    compare(dosages, "import BGEN 1.3 dosages", "bgen13",
            ["--bgen", bgen13 + ".bgen", "--sample", bgen13 + ".sample"],
            ["--bgen", bgen13 + ".bgen", "ref-last", "--sample", bgen13 + ".sample"])
    if colflow_has(ctx, "--vcf", "--dosage"):
        compare(dosages, "import VCF DS dosages", "vcf-ds",
                ["--vcf", ds_vcf, "--dosage", "DS"], ["--vcf", ds_vcf, "dosage=DS"])
    else:
        log("inputs: this colflow's preprocess has no --vcf/--dosage: VCF DS comparison left out")
    if colflow_has(ctx, "--vcf"):
        compare(main, "import VCF GT hard calls", "vcf-gt", ["--vcf", calls_vcf], ["--vcf", calls_vcf])
    else:
        log("inputs: this colflow's preprocess has no --vcf: VCF GT comparison left out")
    if colflow_has(ctx, "--pfile"):
        compare(dosages, "import .pgen dosages", "pgen-ds", ["--pfile", dummy], ["--pfile", dummy],
                export_bgen=True)
        compare(main, "import .pgen hard calls", "pgen-gt", ["--pfile", calls_pgen],
                ["--pfile", calls_pgen], export_bgen=True)
    else:
        log("inputs: this colflow's preprocess has no --pfile: .pgen comparisons left out")
    compare(main, "import BGEN hard calls", "bgen-gt",
            ["--bgen", calls_bgen + ".bgen", "--sample", calls_bgen + ".sample", "--codec", "genotype"],
            ["--bgen", calls_bgen + ".bgen", "ref-last", "--sample", calls_bgen + ".sample"])

    for cmp, data, outputs in comparisons:
        cmp.run(ctx.scale.rounds, log)
        # The size of what each wrote, as the codecs suite's compression.
        for contender, (path, suffixes) in outputs.items():
            written = store_bytes(path) if suffixes is None else files_bytes(path, suffixes)
            cmp.contenders[contender].compression = data.float64_bytes / written

    sizes = Sizes("inputs", dosages.name, SIZES, dosages.float64_bytes)
    source = ["--bgen", bgen12 + ".bgen", "--sample", bgen12 + ".sample"]
    sizes.add(STORE, store_bytes(ctx.ws.preprocess(dummy + "-bgen12.cf", bgen12 + ".bgen", *source)))
    for label, options in OTHER_STORES:
        store = ctx.ws.preprocess(f"{dummy}-bgen12-{label.split(', ')[1].replace(' ', '-')}.cf",
                                  bgen12 + ".bgen", *source, *options)
        sizes.add(label, store_bytes(store))
    sizes.add(BGEN12, os.path.getsize(bgen12 + ".bgen"))
    sizes.add(BGEN13, os.path.getsize(bgen13 + ".bgen"))
    sizes.add(VCF_DS, os.path.getsize(ds_vcf))
    sizes.add(PGEN_FILES, files_bytes(f"{out}/inputs-bgen12", (".pgen", ".pvar", ".psam")))
    for other in (BGEN12, BGEN13, VCF_DS, PGEN_FILES):
        sizes.ratio(STORE, other)
    return [cmp for cmp, _, _ in comparisons] + [sizes]
