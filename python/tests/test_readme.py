"""The example of python/README.md runs, and prints what it claims."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from conftest import DATA_DIR, dataset

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path):
    dataset("hapmap3/HapMap3")  # skips without the shared data
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert len(code.strip().splitlines()) == 5
    code = code.replace("../shared/data", str(DATA_DIR))
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)  # the example writes hapmap3.cf where it runs
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), {})
    finally:
        os.chdir(cwd)
    # Every other of 957 samples, the last 1,000 variants, standardised over those 479: zᵀz = N - 1.
    assert out.getvalue().startswith("(957, 14389) (479, 1000) rs4970383 ")
    assert abs(float(out.getvalue().split()[-1]) - 478) < 1e-9


def test_readme_streaming_and_analyses_example_runs(tmp_path):
    dataset("hapmap3/HapMap3")
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 2
    code = "\n".join(blocks).replace("../shared/data", str(DATA_DIR))
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), {})
    finally:
        os.chdir(cwd)
    text = out.getvalue()
    assert "(957, 256) [" in text
    assert "A1_FREQ" in text and "T_STAT" in text and "rs4970383" in text
