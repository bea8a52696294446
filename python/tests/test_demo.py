"""scripts/demo.sh: the study it walks on small simulated data, and its results page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from conftest import REPOSITORY

DEMO = REPOSITORY / "scripts" / "demo.sh"
STEPS = 16  # the `begin` lines of the demo, the pictures' left out
# The package's console scripts (colflow-plot) beside this Python, as a user's installed package.
PATH = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
PICTURES = shutil.which("colflow-plot", path=PATH) is not None


class Page(HTMLParser):
    """The page's sections, findings and images, and whether its tags nest."""

    def __init__(self):
        super().__init__()
        self.open, self.sections, self.findings, self.images = [], [], [], []
        self.in_finding = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in ("meta", "img", "br"):
            self.open.append(tag)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        if tag == "img":
            self.images.append(attrs.get("src"))
        self.in_finding = tag == "p" and attrs.get("class") == "finding"

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()
        self.in_finding = False

    def handle_data(self, data):
        if self.in_finding:
            self.findings.append(data)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, colflow_binary):
    work = tmp_path_factory.mktemp("demo") / "demo"
    done = subprocess.run(["bash", str(DEMO)],
                          env={**os.environ, "COLFLOW": colflow_binary, "DEMO_DIR": str(work),
                               "SAMPLES": "400", "VARIANTS": "2000", "PATH": PATH},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return work, done.stdout


def test_demo_finds_what_the_simulation_planted(demo):
    work, out = demo
    findings = re.findall(r"^-> (.*) \(\d+ s\)$", out, re.MULTILINE)
    assert len(findings) == STEPS + PICTURES, out
    # KING finds the 40 hidden parent-offspring pairs, and the GRM puts them near 0.5.
    assert re.search(r"^-> 40 first-degree pairs found", out, re.MULTILINE), out
    po = float(re.search(r"parent-offspring pairs ([0-9.]+)", out).group(1))
    assert 0.4 < po < 0.6
    # Structure inflates the plain scan; LOCO predictions bring lambda back near 1.
    before = float(re.search(r"lambda ([0-9.]+) before", out).group(1))
    after = float(re.search(r"before, ([0-9.]+) with LOCO", out).group(1))
    assert before > 1.1 and after < before
    assert "roundtrip.bed is byte-identical" in out
    assert (work / "index.html").is_file()


def test_demo_page_holds_every_step(demo):
    work, out = demo
    page = Page()
    page.feed((work / "index.html").read_text(encoding="utf-8"))
    assert page.open == [], f"unclosed tags {page.open}"
    assert page.sections == [f"step{k}" for k in range(1, STEPS + PICTURES + 1)]
    assert len(page.findings) == STEPS + PICTURES and all(f.strip() for f in page.findings)
    assert len(page.images) == (5 if PICTURES else 0)
    for image in page.images:
        assert (work / image).stat().st_size > 1000, image


def test_demo_page_opens_in_a_headless_browser(demo):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium (scripts/install-deps.sh installs it)")
    work, _ = demo
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--dump-dom",
                           (work / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    # The DOM the browser built holds every step, and its console reported no error.
    assert done.stdout.count("<section") == STEPS + PICTURES, done.stdout[:2000]
    console_errors = [l for l in done.stderr.splitlines()
                      if "CONSOLE" in l and ("Uncaught" in l or "ERROR" in l)]
    assert not console_errors, console_errors
