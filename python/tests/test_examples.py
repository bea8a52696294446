"""The examples run as scripts on the shared data and print what their comments claim:
examples/python/quickstart.py, and examples/gwas_study/run.sh with the colflow command."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import DATA_DIR, REPOSITORY, dataset

QUICKSTART = REPOSITORY / "examples" / "python" / "quickstart.py"


def test_quickstart_runs(tmp_path):
    dataset("uk10k/uk10k_chr1_1mb")  # skips without the shared data
    done = subprocess.run([sys.executable, str(QUICKSTART), str(DATA_DIR)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "3642 samples x 6717 variants" in out
    assert "<colflow.Store 'uk10k.cf': 3642 x 6717 genotype>" in out
    assert "z'z of a column = N - 1: 1819.99999" in out
    assert "A1_FREQ" in out and "P < 5e-8" in out and "LAMBDA" in out
    h2 = float(out.split("posterior h2 ")[1].split()[0])
    assert 0.4 < h2 < 0.6  # test.phen was simulated with h2 0.5 (docs/ANALYSES.md)
    causal = int(out.split("of the 10 highest PIPs")[0].split()[-1])
    assert causal >= 7
    assert (tmp_path / "uk10k.cf").is_dir()


GWAS_STUDY = REPOSITORY / "examples" / "gwas_study" / "run.sh"


def test_gwas_study_runs_from_qc_to_loci(tmp_path, colflow_binary):
    # regenie's recipe with colflow alone, on HapMap3 with the trait the script simulates.
    prefix = dataset("hapmap3/HapMap3")
    done = subprocess.run(["bash", str(GWAS_STUDY), prefix, str(tmp_path / "study")],
                          env={**os.environ, "COLFLOW": colflow_binary},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout

    def number(pattern: str) -> int:
        found = re.search(pattern, out)
        assert found, f"{pattern!r} not in the output:\n{out}"
        return int(found.group(1))

    passing = number(r"(\d+) variants and 957 samples pass")
    assert 13_000 < passing < 14_389  # --maf/--mac remove the rarest
    assert number(r"(\d+) samples removed as relatives") > 0
    loci = number(r"(\d+) independent loci")
    causal = number(r"(\d+) of the index variants are causal")
    assert loci >= 5 and causal >= loci - 1  # 9 causal variants on separate chromosomes
    for name in ("qc_pass.snplist", "qc_pass.id", "step1.prune.in", "step1_pred.list",
                 "related.king.cutoff.out.id", "loci.clumped"):
        assert (tmp_path / "study" / name).is_file(), name
