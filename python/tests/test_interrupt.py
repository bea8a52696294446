"""Ctrl-C and progress in long calls: SIGINT sent to the process during bayesr and lasso raises
KeyboardInterrupt within a column's time, through the library's stop request, leaving no
temporary file and later calls unaffected; progress callbacks and tqdm bars."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import types

import numpy as np
import pandas as pd
import pytest
from conftest import dataset

import colflow

UK10K = "uk10k/uk10k_chr1_1mb"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to the own process")


@pytest.fixture(autouse=True)
def sigint_raises_keyboard_interrupt():
    """A process started in the background by a non-interactive shell (`cmd &`) inherits SIGINT
    ignored, and Python then installs no handler for it: the signals these tests send would be
    lost and the chains run on. Python's own handler is installed for each test."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="module")
def uk10k(make_store):
    path = make_store(UK10K)
    phen = pd.read_csv(dataset(UK10K).rsplit("/", 1)[0] + "/test.phen", sep=r"\s+", header=None,
                       dtype={1: str})
    return path, pd.Series(phen[2].to_numpy(), index=phen[1].to_numpy(), name="y")


def interrupted_while_running(call) -> float:
    """Runs call(progress) with SIGINT sent to this process from another thread 50 ms after the
    call's first progress report, so that the signal lands while the library works; asserts it
    raised KeyboardInterrupt and returns how long after the signal it did. (A signal sent at a
    fixed time from the start can land, on a loaded machine, in Python code before the library
    is called, where a library that clears errors may swallow the KeyboardInterrupt.)"""
    sent: list[float] = []
    timers: list[threading.Timer] = []

    def kill():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    def progress(*report):
        if not timers:
            timers.append(threading.Timer(0.05, kill))
            timers[0].start()

    try:
        with pytest.raises(KeyboardInterrupt):
            call(progress)
    finally:
        for t in timers:
            t.cancel()
    assert sent, "the call ended before the signal"
    return time.monotonic() - sent[0]


def test_ctrl_c_stops_bayesr_leaving_a_resumable_checkpoint(uk10k, tmp_path):
    path, y = uk10k
    chain = dict(columns=np.s_[:1500], burnin=0, seed=3, num_threads=2)
    saved = dict(checkpoint=tmp_path / "chain", checkpoint_every=1)
    late = interrupted_while_running(
        lambda progress: colflow.bayesr(path, y, iterations=10**6, **chain, **saved,
                                        progress=progress))
    assert late < 2.0  # a column's time, with room for a loaded machine
    # The last complete checkpoint, and no temporary one beside it.
    assert os.listdir(tmp_path) == ["chain"]
    # The stop request is withdrawn: the chain resumes from its checkpoint (whose iteration the
    # library names when asked to stop before it), and equals a chain never interrupted.
    with pytest.raises(colflow.InvalidArgumentError, match="at iteration") as refused:
        colflow.bayesr(path, y, iterations=1, resume=True, **chain, **saved)
    at = int(str(refused.value).split("at iteration ")[1].split(",")[0])
    assert at >= 1
    resumed = colflow.bayesr(path, y, iterations=at + 3, resume=True, **chain, **saved)
    assert (resumed.resumed_from, resumed.iterations_run) == (at, 3)
    whole = colflow.bayesr(path, y, iterations=at + 3, **chain)
    pd.testing.assert_frame_equal(resumed.trace, whole.trace)
    pd.testing.assert_frame_equal(resumed.effects, whole.effects)


def test_ctrl_c_stops_an_in_memory_chain(uk10k):
    # No stream in its iterations: the chain checks the stop request once per iteration.
    path, y = uk10k
    late = interrupted_while_running(
        lambda progress: colflow.bayesr(path, y, iterations=10**6, burnin=0, mode="in-memory",
                                        num_threads=2, progress=progress))
    assert late < 2.0


def test_ctrl_c_stops_a_lasso_path(uk10k):
    path, y = uk10k
    late = interrupted_while_running(
        lambda progress: colflow.lasso(path, y, nlambda=1000, lambda_min_ratio=1e-6,
                                       num_threads=2, progress=progress))
    assert late < 2.0  # a column's time, with room for a loaded machine
    fit = colflow.lasso(path, y, columns=np.s_[:50], nlambda=2, lambda_min_ratio=0.5)
    assert len(fit.path) == 2


def test_progress_reports_and_errors(uk10k):
    path, y = uk10k
    calls = []
    fit = colflow.bayesr(path, y, columns=np.s_[:300], iterations=40, burnin=5,
                         progress=lambda *a: calls.append(a))
    assert fit.iterations_run == 40
    chain = [c for c in calls if c[0] == "chain"]
    assert chain and chain[-1] == ("chain", 40, 40, "iterations")
    assert all(c[3] == "iterations" for c in chain)
    assert [c[1] for c in chain] == sorted(c[1] for c in chain)
    calls.clear()
    colflow.stats(path, keep=np.s_[::2], progress=lambda *a: calls.append(a))
    assert calls[-1] == ("stats", 6717, 6717, "columns")

    # An exception from the callback stops the work as Ctrl-C does, and is raised.
    def fail(*args):
        raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        colflow.bayesr(path, y, iterations=10**6, burnin=5, progress=fail)
    assert colflow.bayesr(path, y, columns=np.s_[:50], iterations=3, burnin=1).iterations_run == 3
    with pytest.raises(TypeError, match="progress"):
        colflow.stats(path, progress="yes")


class FakeTqdm:
    """tqdm's interface as _ProgressBars uses it, recording the bars."""

    bars: list = []

    def __init__(self, total, desc, unit, leave):
        self.total, self.desc, self.unit, self.n, self.closed = total, desc, unit, 0, False
        FakeTqdm.bars.append(self)

    def update(self, k):
        self.n += k

    def close(self):
        self.closed = True


def test_progress_true_shows_tqdm_bars_or_nothing(uk10k, monkeypatch):
    path, y = uk10k
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=FakeTqdm))
    colflow.bayesr(path, y, columns=np.s_[:300], iterations=40, burnin=5, progress=True)
    assert FakeTqdm.bars and all(b.closed for b in FakeTqdm.bars)
    assert FakeTqdm.bars[-1].desc == "colflow bayesr: chain"
    assert (FakeTqdm.bars[-1].n, FakeTqdm.bars[-1].total) == (40, 40)
    assert FakeTqdm.bars[-1].unit == "iteration"
    # Without tqdm: no bar, no error.
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    assert colflow.stats(path, columns=np.s_[:10], progress=True).shape[0] == 10
