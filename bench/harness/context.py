"""What every suite needs: the workspace, the scale of the run, and how to call the peers."""
from __future__ import annotations

import dataclasses
import os
import sys

from .data import Dataset, Workspace


@dataclasses.dataclass
class Scale:
    """Sizes of a run: --quick keeps every comparison but shrinks the data and the repeats."""
    quick: bool
    rounds: int                 # alternating rounds per comparison
    main: tuple[int, int]       # samples x variants of the main simulation
    large: tuple[int, int]      # a simulation that does not fit in the page cache as float64
    codec_columns: int          # columns of the main simulation the codec comparison uses
    dense: tuple[int, int]      # the dense float matrices
    subset_columns: int         # columns given to scikit-learn (a matrix in memory)
    passes: int                 # timed passes per `colflow bench` run (after one warm-up pass)
    blosc2_levels: tuple        # Blosc2 levels tried with each codec and filter (its level 9
                                # is zstd 22: minutes to compress the codec data, per run)
    bayesr_iterations: dict     # data set name -> iterations per run
    scaling: tuple[int, int]    # samples x variants of the simulation of the scaling suite
    large_store: tuple[int, int]  # samples x columns of the scale suite's store
    memory_limit_mib: int       # the scale suite's memory limit, well below that store


FULL = Scale(quick=False, rounds=3, main=(10_000, 50_000), large=(20_000, 150_000),
             codec_columns=2_000, dense=(10_000, 1_000), subset_columns=5_000, passes=3,
             blosc2_levels=(1, 5),
             bayesr_iterations={"uk10k": 100, "sim": 5}, scaling=(100_000, 6_000),
             large_store=(200_000, 200_000), memory_limit_mib=2048)
QUICK = Scale(quick=True, rounds=2, main=(2_000, 10_000), large=(4_000, 40_000),
              codec_columns=2_000, dense=(2_000, 1_000), subset_columns=1_000, passes=2,
              blosc2_levels=(5,),
              bayesr_iterations={"uk10k": 20, "sim": 5}, scaling=(20_000, 1_000),
              large_store=(40_000, 40_000), memory_limit_mib=160)


@dataclasses.dataclass
class Context:
    root: str                   # the repository
    ws: Workspace
    scale: Scale
    threads: int
    main: Dataset
    uk10k: Dataset | None
    baseline: str | None = None  # another colflow program (an earlier build) to compare with

    @property
    def colflow(self) -> str:
        return self.ws.colflow

    def peer(self, *args: str) -> list[str]:
        """The command that runs one measurement of harness.peers in its own process."""
        return [sys.executable, "-m", "harness.peers", *args]

    @property
    def peer_cwd(self) -> str:
        return os.path.join(self.root, "bench")
