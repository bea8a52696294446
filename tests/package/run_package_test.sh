#!/usr/bin/env bash
# Packaging test: installs a configured and built colflow into a scratch prefix, then
# configures, builds and runs tests/package/consumer against that prefix only.
#
#   run_package_test.sh SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]
#
# SOURCE_DIR  the colflow source tree (the consumer is taken from tests/package/consumer)
# BUILD_DIR   a built colflow build tree; its compiler, generator and build type are reused
# WORK_DIR    scratch space: WORK_DIR/prefix and WORK_DIR/consumer-build are recreated
# CXX_FLAGS   see tests/support/installed_colflow.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/installed_colflow.sh"
installed_colflow_setup "package test" "$@"
[[ -f "$source_dir/tests/package/consumer/CMakeLists.txt" ]] ||
  fail "$source_dir does not contain tests/package/consumer"

consumer_build="$work_dir/consumer-build"
step "configure the consumer (flags: ${cxx_flags:-none})"
configure_against_prefix "$source_dir/tests/package/consumer" "$consumer_build" \
  -DCOLFLOW_EXPECTED_PREFIX="$prefix"

step "build the consumer"
cmake --build "$consumer_build"

step "run the consumer"
"$consumer_build/consumer"

step "passed"
