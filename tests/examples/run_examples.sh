#!/usr/bin/env bash
# Examples test: installs a configured and built colflow into a scratch prefix, configures and
# builds each example of examples/ against that prefix only (find_package(colflow CONFIG)),
# makes a small genotype store with the installed colflow command, runs every example on it
# and checks its output. analysis_outputs must write the same files as the colflow command, byte
# for byte.
#
#   run_examples.sh SOURCE_DIR BUILD_DIR WORK_DIR [CXX_FLAGS]
#
# SOURCE_DIR  the colflow source tree (examples are taken from SOURCE_DIR/examples)
# BUILD_DIR   a built colflow build tree, with the colflow command; its compiler, generator and
#             build type are reused
# WORK_DIR    scratch space: WORK_DIR/prefix, WORK_DIR/build-* and WORK_DIR/data are recreated
# CXX_FLAGS   see tests/support/installed_colflow.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/installed_colflow.sh"
installed_colflow_setup "examples test" "$@"

examples=(read_store column_sums iterative_residuals analysis_outputs)
# mpi_chain needs colflow built with MPI (the installed colflow::mpi) and a launcher.
with_mpi=0
if [[ -f "$prefix/include/colflow/mpi/mpi_session.hpp" ]] && command -v mpirun > /dev/null; then
  with_mpi=1
  examples+=(mpi_chain)
fi
data="$work_dir/data"
# Start clean: a stale build or store must never make this test pass.
rm -rf -- "$data"
mkdir -p "$data"
colflow="$prefix/bin/colflow"
[[ -x "$colflow" ]] || fail "the install under $prefix has no bin/colflow"

for example in "${examples[@]}"; do
  step "configure and build $example (flags: ${cxx_flags:-none})"
  [[ -f "$source_dir/examples/$example/CMakeLists.txt" ]] ||
    fail "$source_dir/examples/$example has no CMakeLists.txt"
  configure_against_prefix "$source_dir/examples/$example" "$work_dir/build-$example"
  # The example must have found this install, not some other colflow.
  found=$(sed -n 's/^colflow_DIR:[A-Z]*=//p' "$work_dir/build-$example/CMakeCache.txt")
  [[ "$(cd "$found" && pwd -P)/" == "$(cd "$prefix" && pwd -P)/"* ]] ||
    fail "$example found colflow in $found, not under $prefix"
  cmake --build "$work_dir/build-$example" > "$work_dir/build-$example.log" ||
    { cat "$work_dir/build-$example.log"; fail "building $example"; }
done

# A small PLINK fileset: 1001 samples (not a multiple of 4) x 200 variants.
samples=1001 variants=200
step "simulate $samples samples x $variants variants"
"$colflow" simulate --samples $samples --variants $variants --seed 7 --quiet --out "$data/sim"

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

run read_store "$data/sim.cf"
expect_line read_store "^$samples rows x $variants columns \(genotype\)$"
expect_line read_store "	z'z $((samples - 1))\.0$"

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

# The library's result writers give the command's files, byte for byte.
library="$work_dir/outputs-library" command="$work_dir/outputs-command"
rm -rf -- "$library" "$command"
mkdir -p "$library" "$command"
run analysis_outputs "$data/sim.cf" "$data/sim.phen" "$library/sim"
expect_line analysis_outputs "^bayesr: posterior mean h2 [0-9.]+ \(sd [0-9.]+\), [0-9.]+ non-zero effects, over 20 kept iterations$"
step "the same analyses with the colflow command"
"$colflow" stats "$data/sim.cf" --quiet --out "$command/sim.stats.tsv"
"$colflow" assoc "$data/sim.cf" --quiet --pheno "$data/sim.phen" --out "$command/sim"
"$colflow" pca "$data/sim.cf" --quiet --k 5 --out "$command/sim.pca"
"$colflow" lasso "$data/sim.cf" --quiet --pheno "$data/sim.phen" --nlambda 10 --out "$command/sim.lasso"
"$colflow" bayesr "$data/sim.cf" --quiet --pheno "$data/sim.phen" --iterations 30 --burnin 10 \
  --out "$command/sim.bayesr"
step "compare the files of analysis_outputs and colflow"
compared=0
for file in "$command"/*; do
  name=$(basename "$file")
  [[ -f "$library/$name" ]] || fail "analysis_outputs did not write $name"
  cmp -- "$file" "$library/$name" || fail "$name differs between colflow and analysis_outputs"
  compared=$((compared + 1))
done
[[ $(find "$library" -type f | wc -l) -eq $compared ]] ||
  fail "analysis_outputs wrote files that colflow did not"
# stats 1, assoc 1 per phenotype, pca 2, lasso 2, bayesr 4 (with the checkpoint)
[[ $compared -ge 10 ]] || fail "only $compared files compared"
echo "$compared files identical"

if ((with_mpi)); then
  # Open MPI as root; in a sanitised build, its own allocations are suppressed by library
  # (tests/mpi/lsan.supp), the plugins kept loaded so that the suppressions can name them.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_mca_base_component_disable_dlclose=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export LSAN_OPTIONS="suppressions=$source_dir/tests/mpi/lsan.supp:print_suppressions=0"
  export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  run mpi_chain "$data/sim.cf" "$data/sim.phen" "$work_dir/chain-1"
  expect_line mpi_chain "^1 rank\(s\): posterior mean h2 [0-9.]+ over 20 kept iterations"
  step "run mpi_chain on 2 ranks"
  output=$(mpirun -np 2 -x LSAN_OPTIONS -x ASAN_OPTIONS "$work_dir/build-mpi_chain/mpi_chain" \
    "$data/sim.cf" "$data/sim.phen" "$work_dir/chain-2" 2>&1) || fail "mpi_chain on 2 ranks: $output"
  echo "$output"
  expect_line mpi_chain "^2 rank\(s\): posterior mean h2 [0-9.]+ over 20 kept iterations"
  for f in trace.tsv effects.tsv summary.tsv; do
    cmp -- "$work_dir/chain-1.$f" "$work_dir/chain-2.$f" ||
      fail "mpi_chain: $f on 2 ranks differs from one process's"
  done
  echo "mpi_chain: the chain on 2 ranks is the single process's"
fi

step "passed"
