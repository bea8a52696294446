#!/usr/bin/env bash
# Preprocessing speed, size and memory per codec, with 1 and 2 threads, side by side in one run.
#
#   bench/preprocess_bench.sh [SAMPLES VARIANTS]     (default 10000 50000)
#
# Builds the release preset, simulates the data with `colflow simulate`, then runs
# `colflow preprocess` for each codec and thread count (alternating, 3 runs each, median),
# and prints: seconds, MB/s of .bed input, store size relative to the .bed, peak RSS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-10000}
variants=${2:-50000}
runs=${RUNS:-3}

cmake --preset release >/dev/null && cmake --build --preset release --target colflow_cli >/dev/null
colflow=$PWD/build/release/cli/colflow
work=$PWD/build/bench-preprocess
mkdir -p "$work" && cd "$work"
[[ -f sim.bed && $(stat -c %s sim.bed) -eq $((3 + variants * ((samples + 3) / 4))) ]] ||
  "$colflow" simulate --quiet --samples "$samples" --variants "$variants" --seed 1 --out sim
bed_bytes=$(stat -c %s sim.bed)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "data: colflow simulate --samples $samples --variants $variants (.bed $bed_bytes bytes)"
printf '%-14s %7s %9s %10s %10s %11s\n' codec threads seconds "MB/s .bed" "size/.bed" "peak RSS"
for codec in genotype genotype-zstd auto zstd lz4 zlib; do
  for threads in 1 2; do
    times=()
    for ((r = 0; r < runs; r++)); do
      /usr/bin/time -f '%e %M' -o time.txt "$colflow" preprocess --quiet --force --codec "$codec" \
        --threads "$threads" --bed sim --out "s-$codec.cf"
      times+=("$(cat time.txt)")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
    seconds=${median% *}
    rss_kb=${median#* }
    store_bytes=$(du -sb "s-$codec.cf" | cut -f1)
    awk -v c="$codec" -v t="$threads" -v s="$seconds" -v b="$bed_bytes" -v z="$store_bytes" \
      -v m="$rss_kb" 'BEGIN { printf "%-14s %7d %9.2f %10.0f %10.3f %8.0f MB\n", c, t, s,
        b / s / 1e6, z / b, m / 1024 }'
  done
done
