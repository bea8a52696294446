#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment and runs its pytest suite.
#
#   bash scripts/python-test.sh [PYTEST ARGS...]
#   bash scripts/python-test.sh --build-only      the environment, the package and the command
#                                                 (unless COLFLOW_CLI names one), no tests (the
#                                                 benchmark's Python suite uses them)
#   COLFLOW_PY_VENV=DIR   the environment (default build/pyvenv)
#   JOBS=N                parallel compile jobs (default: the cores, at most 4)
#   PYTEST_WORKERS=N      test processes (pytest-xdist; default: the cores, at most 4; 1: none)
#   COLFLOW_CLI=PATH      the `colflow` command the tests compare the analyses with (default:
#                         the one of the package's build tree, build/python/colflow/cli/colflow,
#                         built or brought up to date here: the library compiled once for both)
#
# pip builds its own Release extension (an ASan-built one cannot load into a stock Python), in
# build/python so that a second run recompiles only what changed. The suite reads the shared
# datasets of ../shared/data (COLFLOW_SHARED_DATA to point elsewhere) and skips without them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh >&2
venv=${COLFLOW_PY_VENV:-build/pyvenv}
# The Debian interpreter (python3-venv): a python3 earlier on PATH may lack the venv module.
[[ -x $venv/bin/python3 ]] || /usr/bin/python3 -m venv "$venv"
py=$venv/bin/python3
pip=("$py" -m pip --disable-pip-version-check)
# The build backend, the test peers and the plotting extra (colflow.plot), installed once; the package is built without build
# isolation from these, so that no run downloads them again.
needed=(scikit-build-core nanobind numpy pandas scipy pytest pytest-xdist bed-reader matplotlib)
if ! "$py" -c "import scikit_build_core, nanobind, numpy, pandas, scipy, pytest, xdist, bed_reader, matplotlib" 2>/dev/null; then
  echo "python-test: installing ${needed[*]} into $venv"
  "${pip[@]}" install --quiet "${needed[@]}"
fi
jobs=${JOBS:-$(nproc)}
((jobs > 4)) && jobs=4
echo "python-test: building the package (Release, $jobs jobs)"
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "${pip[@]}" install --quiet --no-build-isolation \
  --config-settings=build-dir=../build/python \
  --config-settings=cmake.define.COLFLOW_PYTHON_WITH_CLI=ON ./python
# The command whose output files the analyses' tests compare with: this checkout's, current,
# from the package's build tree (only the command's own sources compile here; the library is
# the extension's). The continuous integration's later steps run the same program.
if [[ -z ${COLFLOW_CLI:-} ]]; then
  echo "python-test: building the colflow command (build/python)"
  cmake --build build/python --target colflow_cli -j"$jobs"
  export COLFLOW_CLI=$PWD/build/python/colflow/cli/colflow
fi
[[ ${1:-} == --build-only ]] && exit 0
# From python/tests, so that `import colflow` is the installed package, not python/colflow.
cd python/tests
# Test files spread over processes (pytest-xdist), each file whole on one of them: a file's
# session and module fixtures (stores, the demo's study) are then made once, as in one process.
# Most of the suite's time is single-threaded (numpy, pandas, the peers, plotting).
workers=${PYTEST_WORKERS:-$jobs}
parallel=()
((workers > 1)) && parallel=(-n "$workers" --dist loadfile)
exec "../../$py" -m pytest -q "${parallel[@]}" "$@"
