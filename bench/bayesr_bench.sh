#!/usr/bin/env bash
# BayesR: seconds per iteration, side by side in one run, on uk10k (when ../shared/data is
# there) and on a simulation:
#   genotype store    pipelined | sequential | in-memory (the standardised matrix as doubles in RAM)
#   zlib-6 float64    pipelined | sequential (standardised doubles compressed with zlib level 6:
#                     the original BayesRRcmd design, reproduced through the same sampler)
# Contenders alternate, RUNS rounds; medians of ms per iteration, compute-busy fraction and
# peak RSS. The same seed runs the same chain in every mode (the in-memory arithmetic differs
# in the last bits).
#
#   bench/bayesr_bench.sh [SAMPLES VARIANTS]     (default 10000 50000)
#   RUNS=3 UK_ITERATIONS=200 SIM_ITERATIONS=5 THREADS=2
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-10000}
variants=${2:-50000}
runs=${RUNS:-3}
uk_iterations=${UK_ITERATIONS:-200}
sim_iterations=${SIM_ITERATIONS:-5}
threads=${THREADS:-2}
shared=$PWD/../shared/data/uk10k
source bench/common.sh
bench_setup bayesr "$samples" "$variants"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); --threads $threads"
stores() {  # NAME BED-PREFIX: the genotype and zlib-6 float64 stores of a data set (remade
            # when older than the .bed)
  [[ $1.cf -nt $2.bed ]] || "$colflow" preprocess --quiet --force --bed "$2" --out "$1.cf"
  [[ $1.zlib.cf -nt $2.bed ]] ||
    "$colflow" preprocess --quiet --force --bed "$2" --codec zlib --level 6 --out "$1.zlib.cf"
}
run() {  # DATA PHENO ITERATIONS STORE MODE -> one line "STORE MODE ms busy% MB"
  local log
  log=$( { /usr/bin/time -f "rss %M" "$colflow" bayesr "$4" --pheno "$2" --iterations "$3" --burnin 1 \
           --threads "$threads" --checkpoint-every 0 --mode "$5" --out chain; } 2>&1 )
  awk -v store="$4" -v mode="$5" '/ms per iteration/ {for (i = 1; i <= NF; ++i) {if ($i == "ms") ms = $(i - 1); if ($i == "busy") busy = $(i + 1)}}
       /^rss/ {rss = $2} END {printf "%s %s %s %s %.0f\n", store, mode, ms, busy, rss / 1000}' <<< "$log"
}
bench() {  # DATA BED-PREFIX PHENO ITERATIONS
  local data=$1 iterations=$4
  stores "$data" "$2"
  echo
  echo "$data: $(grep -c . "$2.fam") samples x $(grep -c . "$2.bim") columns, $iterations iterations per run, $runs runs"
  echo "  store sizes: genotype $(du -sh "$data.cf" | cut -f1), zlib-6 float64 $(du -sh "$data.zlib.cf" | cut -f1)"
  : > "$data.results"
  for ((r = 0; r < runs; ++r)); do
    for contender in "$data.cf pipelined" "$data.zlib.cf pipelined" "$data.cf sequential" \
                     "$data.zlib.cf sequential" "$data.cf in-memory"; do
      run "$data" "$3" "$iterations" $contender >> "$data.results"
    done
  done
  python3 - "$data" <<'PY'
import statistics, sys
data = sys.argv[1]
rows = {}
for line in open(f"{data}.results"):
    store, mode, ms, busy, rss = line.split()
    kind = "genotype" if store == f"{data}.cf" else "zlib-6 float64"
    rows.setdefault((kind, mode), []).append((float(ms), float(busy.rstrip("%")), float(rss)))
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in rows.items()}
print(f"  {'store':<16}{'mode':<12}{'ms/iteration':>14}{'compute busy':>14}{'peak RSS MB':>13}")
for (kind, mode), (ms, busy, rss) in med.items():
    print(f"  {kind:<16}{mode:<12}{ms:>14.2f}{busy:>13.0f}%{rss:>13.0f}")
g = med[("genotype", "pipelined")][0]
print(f"  genotype pipelined / in-memory: {g / med[('genotype', 'in-memory')][0]:.2f} (target <= 1)")
print(f"  zlib-6 float64 pipelined / genotype pipelined: {med[('zlib-6 float64', 'pipelined')][0] / g:.2f}x (target >= 2)")
print(f"  genotype: pipelined / sequential {g / med[('genotype', 'sequential')][0]:.2f}; "
      f"zlib-6: pipelined / sequential {med[('zlib-6 float64', 'pipelined')][0] / med[('zlib-6 float64', 'sequential')][0]:.2f}")
if data == "uk10k":
    print(f"  vs GCTB 2.05 (13.4 ms per iteration, 104 MB, measured by the issue on this kind of machine): "
          f"{g / 13.4:.2f}x its time")
PY
}
if [[ -f $shared/uk10k_chr1_1mb.bed ]]; then
  bench uk10k "$shared/uk10k_chr1_1mb" "$shared/test.phen" "$uk_iterations"
else
  echo "uk10k: ../shared/data not present, skipped"
fi
bench sim sim sim.phen "$sim_iterations"
