#!/usr/bin/env bash
# The benchmark harness: colflow against plink2, plink1.9, Blosc2, bed-reader, scikit-learn,
# regenie, GCTB (BayesR and SBayesR) and BayesRRcmd (the last three from ../shared/peers), side by side on the same
# data in one run (bench/harness/, `bench/run.sh --help`).
#
#   bench/run.sh --quick          every comparison on small data, 2 rounds (a few minutes)
#   bench/run.sh                  the full run (under an hour on 2 cores per vector path);
#                                 regenerates the generated section of docs/PERFORMANCE.md
#   bench/run.sh --simd avx2      on one vector path of colflow's (COLFLOW_SIMD: avx512, avx2,
#                                 portable); by default each path the CPU has, widest first
#   bench/run.sh --only codecs,streaming,analyses,products,qc,models,scaling,inputs,python,wgr,bayesr,sbayesr,plots
#   bench/run.sh --only scaling --baseline-colflow "$(bench/compare_builds.sh REV --build-only)"
#                                 1 against 2 threads; uk10k BayesR of this build against REV's
#   bench/run.sh --only scale [--scale-size 200000x200000] [--scale-memory 2048]
#                                 a store larger than memory, in the page cache and under a
#                                 memory limit (half an hour, 15 GB of disk; only when named)
#   bench/run.sh --report bench/results/FILE.tsv [--page]     plots and page from a results file
#
# Installs what it needs first: Debian packages (scripts/install-deps.sh, plink2 and plink1.9
# among them) and numpy, scikit-learn, bed-reader, blosc2 and matplotlib from PyPI into
# bench/.venv; builds the release colflow (and the python suite the Python package, into
# build/pyvenv with bed-reader beside it, through scripts/python-test.sh --build-only; the plots
# suite runs its colflow-plot). Results:
# bench/results/<date>-<machine>[-SUITES][-quick]-<path>.tsv, one per vector path, with its
# plots in the directory of the same name; scratch data under build/bench-full or
# build/bench-quick.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh >&2
# The libraries of the peers built from source (regenie, GCTB, BayesRRcmd), when ../shared/peers
# is there.
peers=../shared/peers/install-runtime.sh
[[ ! -f $peers ]] || bash "$peers" >&2
COLFLOW_VENV=bench/.venv bash scripts/python-env.sh numpy scikit-learn bed-reader blosc2 matplotlib >&2
# COLFLOW_CLI: a Release command built already (the CI's, .ci/run), instead of the release preset's.
if [[ -n ${COLFLOW_CLI:-} ]]; then
  set -- --colflow "$(realpath "$COLFLOW_CLI")" "$@"
else
  cmake --preset release >/dev/null
  cmake --build --preset release --target colflow_cli >&2
fi
cd bench
exec .venv/bin/python -m harness "$@"
