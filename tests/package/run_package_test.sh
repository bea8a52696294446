#!/usr/bin/env bash
# Packaging test: installs a configured and built colflow into a scratch prefix, then
# configures, builds and runs tests/package/consumer against that prefix only.
#
#   run_package_test.sh SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]
#
# SOURCE_DIR  the colflow source tree (the consumer is taken from tests/package/consumer)
# BUILD_DIR   a built colflow build tree; its compiler, generator and build type are reused
# WORK_DIR    scratch space: WORK_DIR/prefix and WORK_DIR/consumer-build are recreated
# CXX_FLAGS   flags the consumer must share with the library, e.g. the sanitizer flags of a
#             sanitized build (an ASan-instrumented static library only links with -fsanitize).
#             Default: the sanitizer flags when BUILD_DIR has COLFLOW_SANITIZE=ON, else none.
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: $0 SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]" >&2
  exit 2
fi
source_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
work_dir=$3

step() { echo "== package test: $*"; }
fail() { echo "package test FAILED: $*" >&2; exit 1; }
trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

cache="$build_dir/CMakeCache.txt"
[[ -f "$cache" ]] || fail "$build_dir is not a configured CMake build tree (no CMakeCache.txt)"
[[ -f "$source_dir/tests/package/consumer/CMakeLists.txt" ]] ||
  fail "$source_dir does not contain tests/package/consumer"

# Value of a cache entry NAME:TYPE=VALUE, or empty.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1; }

cxx_compiler=$(cache_value CMAKE_CXX_COMPILER)
generator=$(cache_value CMAKE_GENERATOR)
build_type=$(cache_value CMAKE_BUILD_TYPE)
if [[ $# -ge 4 ]]; then
  cxx_flags=$4
elif [[ $(cache_value COLFLOW_SANITIZE) =~ ^(ON|TRUE|YES|1)$ ]]; then
  # The same as COLFLOW_SANITIZE_FLAGS in the top-level CMakeLists.txt.
  cxx_flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer"
  cxx_flags+=" -fno-sanitize-recover=all"
else
  cxx_flags=""
fi

mkdir -p "$work_dir"
work_dir=$(cd "$work_dir" && pwd)
prefix="$work_dir/prefix"
consumer_build="$work_dir/consumer-build"
# Start clean: a stale install or cache must never make this test pass.
rm -rf -- "$prefix" "$consumer_build"

step "install $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix"
[[ -n $(find "$prefix" -path '*/cmake/colflow/colflowConfig.cmake' -print -quit) ]] ||
  fail "the install under $prefix has no cmake/colflow/colflowConfig.cmake"

step "configure the consumer (flags: ${cxx_flags:-none})"
configure=(cmake -S "$source_dir/tests/package/consumer" -B "$consumer_build"
           -DCMAKE_PREFIX_PATH="$prefix"
           -DCOLFLOW_EXPECTED_PREFIX="$prefix"
           -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
           -DCMAKE_CXX_FLAGS="$cxx_flags")
[[ -n "$generator" ]] && configure+=(-G "$generator")
[[ -n "$cxx_compiler" ]] && configure+=(-DCMAKE_CXX_COMPILER="$cxx_compiler")
[[ -n "$build_type" ]] && configure+=(-DCMAKE_BUILD_TYPE="$build_type")
"${configure[@]}"

step "build the consumer"
cmake --build "$consumer_build"

step "run the consumer"
"$consumer_build/consumer"

step "passed"
