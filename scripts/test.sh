#!/usr/bin/env bash
# Installs the dependencies, then configures, builds and tests colflow with a CMake preset;
# then builds the Python package (its own Release extension, into a virtual environment) and
# runs its pytest suite (scripts/python-test.sh).
#
#   scripts/test.sh            # preset "ci": RelWithDebInfo, ASan + UBSan, -Werror, benchmarks
#   scripts/test.sh dev        # or COLFLOW_PRESET=dev scripts/test.sh
#
# Works from any directory. Exits non-zero on the first failing step.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

preset=${1:-${COLFLOW_PRESET:-ci}}
jobs=$(nproc)

bash scripts/install-deps.sh
bash scripts/python-env.sh

echo "test: configure, build and test with preset '$preset' ($jobs jobs)"
# Free disk where the build and the tests' temporary stores go: a test that needs more than is
# left says so and is skipped, and this line tells a short run from a failed one.
df -h . "${TMPDIR:-/tmp}" | sed 's/^/test: /'
cmake --preset "$preset"
cmake --build --preset "$preset" -j"$jobs"
ctest --preset "$preset" --output-on-failure -j"$jobs"

# The Python tests compare with a Release command, as a user runs it, which scripts/python-test.sh
# builds in the package's own build tree (the library compiled once for both): the sanitised
# command of this preset was tested by ctest above, and would only make the Python suite slower.
# The CI's memory-limited pass and benchmark reuse it (.ci/run).
echo "test: the Python package"
bash scripts/python-test.sh
