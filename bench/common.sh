# Pieces the analysis benchmarks share; source it from the repository root.
#
#   bench_setup NAME SAMPLES VARIANTS
#
# Builds the release colflow (sets $colflow), enters build/bench-NAME, and makes there the
# simulated data the benchmarks run on (sim.bed/.bim/.fam/.phen with 1% missing calls, seed 1)
# and its genotype store sim.cf, unless they already exist with that shape.
bench_setup() {
  local name=$1 samples=$2 variants=$3
  cmake --preset release >/dev/null && cmake --build --preset release --target colflow_cli >/dev/null
  colflow=$PWD/build/release/cli/colflow
  mkdir -p "build/bench-$name" && cd "build/bench-$name"
  if [[ ! -f sim.bed || $(stat -c %s sim.bed) -ne $((3 + variants * ((samples + 3) / 4))) ]]; then
    rm -rf sim.cf
    "$colflow" simulate --quiet --samples "$samples" --variants "$variants" --missing 0.01 \
      --seed 1 --out sim
  fi
  [[ -d sim.cf ]] || "$colflow" preprocess --quiet --bed sim --out sim.cf
}
