#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) and runs each for a
# while, starting from the committed seed corpus.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]      (default 600 s; all of: store plink pgen bgen vcf npy csv phenotype)
#
# Each target runs in build/fuzz/run-TARGET/ with its own working corpus (the seeds plus what
# the fuzzer finds). At the end a line per target gives the executions, executions per second
# and the outcome. An input that crashes or trips a sanitizer is copied into
# tests/fuzz/corpus/TARGET/ as a regression file (the normal test run replays it) and the
# script exits non-zero.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(store plink pgen bgen vcf npy csv phenotype)

bash scripts/install-deps.sh
if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz: installing clang and libFuzzer (Debian packages)"
  apt-get install -y -q clang libclang-rt-14-dev >/dev/null
fi
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOLFLOW_FUZZ=ON -DCOLFLOW_BUILD_TESTS=OFF -DCOLFLOW_BUILD_BENCH=OFF -DCOLFLOW_INSTALL=OFF >/dev/null
cmake --build build/fuzz --target "${targets[@]/%/_fuzz}"

status=0
summary=()
for t in "${targets[@]}"; do
  run=build/fuzz/run-$t
  rm -rf "$run" && mkdir -p "$run/corpus" "$run/artifacts"
  echo "fuzz: $t for $seconds s"
  set +e
  "build/fuzz/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
    -timeout=20 -print_final_stats=1 -artifact_prefix="$run/artifacts/" \
    "$run/corpus" "tests/fuzz/corpus/$t" > "$run/log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$run/log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$run/log" | grep -o '[0-9]*$' || echo 0)
  outcome="no crash, leak or sanitizer report"
  if [[ $rc -ne 0 ]] || compgen -G "$run/artifacts/*" >/dev/null; then
    status=1
    outcome="FAILED (exit $rc): see $run/log"
    for f in "$run"/artifacts/*; do
      [[ -f $f ]] || continue
      cp "$f" "tests/fuzz/corpus/$t/regression-$(basename "$f")"
      outcome+="; kept tests/fuzz/corpus/$t/regression-$(basename "$f")"
    done
  fi
  summary+=("$(printf '%-10s %8s s %12s executions %8s exec/s   %s' "$t" "$seconds" "$execs" "$rate" "$outcome")")
done
printf '%s\n' "fuzz: summary" "${summary[@]}"
exit $status
