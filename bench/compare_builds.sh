#!/usr/bin/env bash
# Builds git revision REV and the working tree (release preset, the colflow program only), then
# compares them with bench/compare_builds.py: byte-identical outputs of every analysis and the
# exporter on the shared datasets, and alternating timings of the main workloads.
#
#   bench/compare_builds.sh REV [--rounds N] [--data DIR]
#   bench/compare_builds.sh REV --build-only     only build REV: its program is copied to
#                                                build/colflow-<commit>, and that path printed
#                                                (e.g. for bench/run.sh --baseline-colflow)
#
# REV is built in a temporary git worktree under build/ (removed at the end).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ $# -lt 1 || $1 == -* ]]; then
  echo "usage: bench/compare_builds.sh REV [--rounds N] [--data DIR] | REV --build-only" >&2
  exit 2
fi
rev=$1
shift
build_only=0
if [[ ${1:-} == --build-only ]]; then
  build_only=1
  shift
fi
bash scripts/install-deps.sh >&2
old=build/compare-builds-old
rm -rf "$old"
git worktree prune
git worktree add --detach "$old" "$rev" >&2
trap 'git worktree remove --force "$old" >/dev/null 2>&1 || true' EXIT
cmake -S "$old" -B "$old/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLFLOW_BUILD_TESTS=OFF \
      -DCOLFLOW_BUILD_BENCH=OFF -DCOLFLOW_INSTALL=OFF >/dev/null
cmake --build "$old/build" --target colflow_cli -j"$(nproc)" >&2
if ((build_only)); then
  program=build/colflow-$(git rev-parse --short "$rev^{commit}")
  cp "$old/build/cli/colflow" "$program"
  echo "$program"
  exit 0
fi
cmake --preset release >/dev/null
cmake --build --preset release --target colflow_cli -j"$(nproc)" >&2
python3 bench/compare_builds.py "$old/build/cli/colflow" build/release/cli/colflow "$@"
