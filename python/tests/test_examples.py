"""examples/python/quickstart.py runs as a script on the shared data and prints what its
comments claim."""

from __future__ import annotations

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
