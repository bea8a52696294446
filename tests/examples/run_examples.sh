#!/usr/bin/env bash
# Examples test: installs a configured and built colflow into a scratch prefix, configures and
# builds each example of examples/ against that prefix only (find_package(colflow CONFIG)),
# makes a small genotype store with the installed colflow command, runs every example on it
# and checks its output.
#
#   run_examples.sh SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]
#
# SOURCE_DIR  the colflow source tree (examples are taken from SOURCE_DIR/examples)
# BUILD_DIR   a built colflow build tree, with the colflow command; its compiler, generator and
#             build type are reused
# WORK_DIR    scratch space: WORK_DIR/prefix, WORK_DIR/build-* and WORK_DIR/data are recreated
# CXX_FLAGS   flags the examples must share with the library, e.g. the sanitizer flags of a
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

step() { echo "== examples test: $*"; }
fail() { echo "examples test FAILED: $*" >&2; exit 1; }
trap 'fail "command failed (line $LINENO): $BASH_COMMAND"' ERR

cache="$build_dir/CMakeCache.txt"
[[ -f "$cache" ]] || fail "$build_dir is not a configured CMake build tree (no CMakeCache.txt)"

# Value of a cache entry NAME:TYPE=VALUE, or empty.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1; }

cxx_compiler=$(cache_value CMAKE_CXX_COMPILER)
generator=$(cache_value CMAKE_GENERATOR)
build_type=$(cache_value CMAKE_BUILD_TYPE)
if [[ $# -ge 4 ]]; then
  cxx_flags=$4
elif [[ $(cache_value COLFLOW_SANITIZE) =~ ^(ON|TRUE|YES|1)$ ]]; then
  cxx_flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer -fno-sanitize-recover=all"
else
  cxx_flags=""
fi

examples=(column_sums iterative_residuals)

mkdir -p "$work_dir"
work_dir=$(cd "$work_dir" && pwd)
prefix="$work_dir/prefix"
data="$work_dir/data"
# Start clean: a stale install, build or store must never make this test pass.
rm -rf -- "$prefix" "$data" "${examples[@]/#/$work_dir/build-}"
mkdir -p "$data"

step "install $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix" > "$work_dir/install.log"
[[ -n $(find "$prefix" -path '*/cmake/colflow/colflowConfig.cmake' -print -quit) ]] ||
  fail "the install under $prefix has no cmake/colflow/colflowConfig.cmake"
colflow="$prefix/bin/colflow"
[[ -x "$colflow" ]] || fail "the install under $prefix has no bin/colflow"

for example in "${examples[@]}"; do
  step "configure and build $example (flags: ${cxx_flags:-none})"
  [[ -f "$source_dir/examples/$example/CMakeLists.txt" ]] ||
    fail "$source_dir/examples/$example has no CMakeLists.txt"
  configure=(cmake -S "$source_dir/examples/$example" -B "$work_dir/build-$example"
             -DCMAKE_PREFIX_PATH="$prefix"
             -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
             -DCMAKE_CXX_FLAGS="$cxx_flags")
  [[ -n "$generator" ]] && configure+=(-G "$generator")
  [[ -n "$cxx_compiler" ]] && configure+=(-DCMAKE_CXX_COMPILER="$cxx_compiler")
  [[ -n "$build_type" ]] && configure+=(-DCMAKE_BUILD_TYPE="$build_type")
  "${configure[@]}" > "$work_dir/configure-$example.log" ||
    { cat "$work_dir/configure-$example.log"; fail "configuring $example"; }
  # The example must have found this install, not some other colflow.
  found=$(sed -n 's/^colflow_DIR:[A-Z]*=//p' "$work_dir/build-$example/CMakeCache.txt")
  [[ "$(cd "$found" && pwd -P)/" == "$(cd "$prefix" && pwd -P)/"* ]] ||
    fail "$example found colflow in $found, not under $prefix"
  cmake --build "$work_dir/build-$example" > "$work_dir/build-$example.log" ||
    { cat "$work_dir/build-$example.log"; fail "building $example"; }
done

# A small PLINK fileset: 1001 samples (not a multiple of 4) x 200 variants, SNP-major.
# With `colflow simulate` when this build has it, else written here: a deterministic
# generator (awk's srand/rand) with a spread of allele frequencies and a few missing calls.
samples=1001 variants=200
if "$colflow" --help | grep -Eq '^ +simulate +'; then
  step "simulate $samples samples x $variants variants"
  "$colflow" simulate --samples $samples --variants $variants --seed 7 --quiet --out "$data/sim"
else
  step "write $samples samples x $variants variants as PLINK .bed/.bim/.fam"
  LC_ALL=C awk -v n=$samples -v m=$variants 'BEGIN {
    srand(7)
    printf "%c%c%c", 108, 27, 1                       # magic 0x6c 0x1b, SNP-major
    for (j = 0; j < m; j++) {
      p = 0.02 + 0.48 * rand()                         # A1 frequency
      byte = 0; k = 0
      for (i = 0; i < n; i++) {
        if (rand() < 0.02) code = 1                      # missing
        else { a = (rand() < p) + (rand() < p); code = (a == 2 ? 0 : (a == 1 ? 2 : 3)) }
        byte += code * 4 ^ k
        if (++k == 4 || i == n - 1) { printf "%c", byte; byte = 0; k = 0 }
      }
    }
  }' > "$data/sim.bed"
  awk -v m=$variants 'BEGIN { for (j = 1; j <= m; j++) printf "1\tsnp%d\t0\t%d\tA\tG\n", j, 1000 * j }' \
    > "$data/sim.bim"
  awk -v n=$samples 'BEGIN { for (i = 1; i <= n; i++) printf "s%d s%d 0 0 0 -9\n", i, i }' \
    > "$data/sim.fam"
  expected_bytes=$((3 + variants * ((samples + 3) / 4)))
  [[ $(wc -c < "$data/sim.bed") -eq $expected_bytes ]] ||
    fail "the generated .bed has $(wc -c < "$data/sim.bed") bytes, not $expected_bytes"
fi

step "preprocess into a store"
"$colflow" preprocess --bed "$data/sim" --out "$data/sim.cf" --quiet
"$colflow" verify "$data/sim.cf" > /dev/null

# Runs an example, shows its output, checks its exit status; the output is left in $output.
run() {
  local name=$1
  shift
  step "run $name $*"
  local status=0
  output=$("$work_dir/build-$name/$name" "$@" 2>&1) || status=$?
  echo "$output"
  [[ $status -eq 0 ]] || fail "$name exited with status $status"
}

# Fails unless the output has a line matching the extended regular expression $2.
expect_line() {
  grep -Eq -- "$2" <<< "$output" || fail "$1: no line matching '$2' in its output"
}

run column_sums "$data/sim.cf"
expect_line column_sums "^$samples rows x $variants columns \(genotype\)$"
# Standardised values: z'z = N - 1 for a polymorphic column.
expect_line column_sums "^snp[0-9]+	z'z $((samples - 1))\.0$"
expect_line column_sums "^pass: $variants columns in [0-9.]+ s, compute busy [0-9]+%"
run column_sums "$data/sim.cf" 1  # the smallest in-flight depth gives the same figures
expect_line column_sums "^pass: $variants columns in .*, 1 in flight x "

passes=10
run iterative_residuals "$data/sim.cf" $passes 10 1
[[ $(grep -Ec '^pass +[0-9]+  RSS' <<< "$output") -eq $passes ]] ||
  fail "iterative_residuals: not $passes pass lines"
# Coordinate descent: the objective never goes up, and the residual shrinks overall.
awk '
  /^start/ { rss0 = $3 }
  /^pass/ { if (n++ && $6 > obj + 1e-9) bad = 1; obj = $6; rss = $4 }
  END { exit !(n > 0 && !bad && rss < rss0) }' <<< "$output" ||
  fail "iterative_residuals: the objective went up, or the RSS did not go down"
expect_line iterative_residuals "^largest effect: column 0 \(snp1\)"
# The same seed gives the same numbers, whatever the scheduling.
first=$(grep -E '^pass' <<< "$output" | sed 's/ *(.*//')
run iterative_residuals "$data/sim.cf" $passes 10 1
second=$(grep -E '^pass' <<< "$output" | sed 's/ *(.*//')
[[ "$first" == "$second" ]] || fail "iterative_residuals: two runs with seed 1 differ"

step "passed"
