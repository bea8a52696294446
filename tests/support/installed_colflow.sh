# Shared by the tests that build outside projects against an installed colflow
# (tests/package/run_package_test.sh, tests/examples/run_examples.sh). Source it, then call
#
#   installed_colflow_setup "TEST NAME" SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]
#
# which installs BUILD_DIR into WORK_DIR/prefix (recreated) and sets source_dir, build_dir,
# work_dir, prefix and cxx_flags; and
#
#   configure_against_prefix SOURCE BUILD [CMAKE ARGS...]
#
# which configures SOURCE into BUILD with the library's compiler, generator, build type and
# flags, finding colflow under the prefix only.
#
# CXX_FLAGS: flags the outside project must share with the library, e.g. the sanitizer flags
# of a sanitized build (an ASan-instrumented static library only links with -fsanitize).
# Default: the sanitizer flags when BUILD_DIR has COLFLOW_SANITIZE=ON or
# COLFLOW_SANITIZE_THREAD=ON, else none.

installed_colflow_setup() {
  local name=$1
  shift
  if [[ $# -lt 3 || $# -gt 4 ]]; then
    echo "usage: $0 SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]" >&2
    exit 2
  fi
  test_name=$name
  step() { echo "== $test_name: $*"; }
  fail() { echo "$test_name FAILED: $*" >&2; exit 1; }
  trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

  source_dir=$(cd "$1" && pwd)
  build_dir=$(cd "$2" && pwd)
  mkdir -p "$3"
  work_dir=$(cd "$3" && pwd)
  cache="$build_dir/CMakeCache.txt"
  [[ -f "$cache" ]] || fail "$build_dir is not a configured CMake build tree (no CMakeCache.txt)"

  cxx_compiler=$(cache_value CMAKE_CXX_COMPILER)
  generator=$(cache_value CMAKE_GENERATOR)
  build_type=$(cache_value CMAKE_BUILD_TYPE)
  if [[ $# -ge 4 ]]; then
    cxx_flags=$4
  elif [[ $(cache_value COLFLOW_SANITIZE) =~ ^(ON|TRUE|YES|1)$ ]]; then
    # The same as COLFLOW_SANITIZE_FLAGS in the top-level CMakeLists.txt.
    cxx_flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer"
    cxx_flags+=" -fno-sanitize-recover=all"
  elif [[ $(cache_value COLFLOW_SANITIZE_THREAD) =~ ^(ON|TRUE|YES|1)$ ]]; then
    cxx_flags="-fsanitize=thread -fno-omit-frame-pointer"
  else
    cxx_flags=""
  fi

  prefix="$work_dir/prefix"
  # Start clean: a stale install must never make a test pass.
  rm -rf -- "$prefix"
  step "install $build_dir into $prefix"
  cmake --install "$build_dir" --prefix "$prefix" > "$work_dir/install.log"
  [[ -n $(find "$prefix" -path '*/cmake/colflow/colflowConfig.cmake' -print -quit) ]] ||
    fail "the install under $prefix has no cmake/colflow/colflowConfig.cmake"
}

# Value of a cache entry NAME:TYPE=VALUE of the library's build, or empty.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1; }

configure_against_prefix() {
  local source=$1 build=$2
  shift 2
  rm -rf -- "$build"
  local configure=(cmake -S "$source" -B "$build"
                   -DCMAKE_PREFIX_PATH="$prefix"
                   -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                   -DCMAKE_CXX_FLAGS="$cxx_flags" "$@")
  [[ -n "$generator" ]] && configure+=(-G "$generator")
  [[ -n "$cxx_compiler" ]] && configure+=(-DCMAKE_CXX_COMPILER="$cxx_compiler")
  [[ -n "$build_type" ]] && configure+=(-DCMAKE_BUILD_TYPE="$build_type")
  "${configure[@]}" > "$build.configure.log" ||
    { cat "$build.configure.log"; fail "configuring $source"; }
}
