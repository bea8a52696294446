#!/usr/bin/env bash
# Streaming passes per codec: pipelined (flow graph) vs sequential vs in-RAM, side by side.
#
#   bench/stream_bench.sh [SAMPLES VARIANTS]     (default 10000 50000; also ../shared/data/uk10k)
#
# Prints, per store and mode, seconds per pass (median of 5), decoded GB/s, compute-busy
# fraction, peak RSS and peak anonymous memory (without the mapped file's page cache), and the
# ratios pipelined/sequential and pipelined/ram.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-10000}
variants=${2:-50000}
passes=${PASSES:-5}
kernel=${KERNEL:-dot-axpy}

cmake --preset release >/dev/null && cmake --build --preset release --target colflow_cli >/dev/null
colflow=$PWD/build/release/cli/colflow
shared=$PWD/../shared/data
work=$PWD/build/bench-stream
mkdir -p "$work" && cd "$work"
[[ -f sim.bed && $(stat -c %s sim.bed) -eq $((3 + variants * ((samples + 3) / 4))) ]] ||
  "$colflow" simulate --quiet --samples "$samples" --variants "$variants" --seed 1 --out sim

inputs=(sim)
[[ -f $shared/uk10k/uk10k_chr1_1mb.bed ]] && inputs+=("$shared/uk10k/uk10k_chr1_1mb")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "kernel: $kernel, $passes passes per mode"
printf '%-22s %-11s %9s %9s %6s %10s %10s\n' store mode s/pass GB/s busy "peak RSS" "peak anon"
for input in "${inputs[@]}"; do
  name=$(basename "$input")
  for codec in genotype zstd zlib lz4; do
    store="$name-$codec.cf"
    [[ -d $store ]] || "$colflow" preprocess --quiet --codec "$codec" --bed "$input" --out "$store"
    "$colflow" bench "$store" --passes "$passes" --kernel "$kernel" --json > bench.json
    python3 - "$store" bench.json <<'PY'
import json, sys
rows = {r["mode"]: r for r in json.load(open(sys.argv[2]))}
for mode, r in rows.items():
    print(f'{sys.argv[1]:<22} {mode:<11} {r["seconds_per_pass"]:9.4f} {r["decoded_gb_per_s"]:9.2f} '
          f'{r["compute_busy_fraction"]:6.2f} {r["peak_rss_bytes"]/1e6:7.1f} MB {r["peak_anon_bytes"]/1e6:7.1f} MB')
p, s, m = (rows[k]["seconds_per_pass"] for k in ("pipelined", "sequential", "ram"))
print(f'{sys.argv[1]:<22} ratios      sequential/pipelined {s/p:.2f}x   pipelined/ram {p/m:.2f}')
PY
  done
done
