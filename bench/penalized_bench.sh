#!/usr/bin/env bash
# Lasso paths: colflow streaming the store vs scikit-learn on the same standardised matrix in
# memory, side by side in one run.
#
#   bench/penalized_bench.sh [SAMPLES VARIANTS SUBSET]     (default 10000 50000 5000)
#
# 1. colflow lasso on the whole simulated store: total time, sweeps, time per sweep.
# 2. The first SUBSET columns (a matrix that fits in memory for scikit-learn): colflow lasso
#    with --extract, and sklearn.linear_model.lasso_path on the same standardised matrix and the
#    same lambdas (scikit-learn's time excludes building the matrix). Alternating, RUNS times.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-10000}
variants=${2:-50000}
subset=${3:-5000}
runs=${RUNS:-3}
nlambda=${NLAMBDA:-20}
ratio=${RATIO:-0.05}

bash scripts/python-env.sh >/dev/null
python=$PWD/build/venv/bin/python3
source bench/common.sh
bench_setup penalized "$samples" "$variants"
head -n "$subset" sim.bim | cut -f2 > subset.txt

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "data: $samples x $variants simulated (1% missing calls); lasso path of $nlambda lambdas down to $ratio x lambda_max"
/usr/bin/time -f "%e %M" -o full.time "$colflow" lasso sim.cf --quiet --pheno sim.phen \
  --nlambda "$nlambda" --lambda-min-ratio "$ratio" --out full
awk -v t="$(cut -d' ' -f1 full.time)" -v kb="$(cut -d' ' -f2 full.time)" 'NR > 1 {s += $5; p += $6; nz = $2}
  END {printf "colflow, all %d columns: %.2f s, %d sweeps + %d full passes (%.1f ms per pass), %d non-zero at the end, peak RSS %.0f MB\n",
       '"$variants"', t, s, p, 1000 * t / (s + p), nz, kb / 1000}' full.path.tsv

for ((r = 0; r < runs; ++r)); do
  /usr/bin/time -f "%e" -o sub.time "$colflow" lasso sim.cf --quiet --pheno sim.phen --extract subset.txt \
    --nlambda "$nlambda" --lambda-min-ratio "$ratio" --digits 17 --out sub
  echo "colflow $(cat sub.time)" >> subset.times
  "$python" - "$subset" >> subset.times <<'PY'
import sys, time
import numpy as np
from sklearn.linear_model import lasso_path
m = int(sys.argv[1])
fam = [l.split() for l in open("sim.fam")]
n = len(fam)
nb = (n + 3) // 4
raw = np.fromfile("sim.bed", dtype=np.uint8, offset=3, count=m * nb).reshape(m, nb)
codes = np.stack([(raw >> (2 * k)) & 3 for k in range(4)], axis=2).reshape(m, nb * 4)[:, :n]
g = np.array([2.0, np.nan, 1.0, 0.0])[codes].T
mean = np.nanmean(g, axis=0)
sd = np.sqrt(np.nansum((g - mean) ** 2, axis=0) / (n - 1))
z = np.where(np.isnan(g), 0.0, (g - mean) / np.where(sd > 0, sd, 1.0))
z = np.asfortranarray(z)
y = np.array([float(l.split()[2]) for l in open("sim.phen")])
lambdas = [float(l.split()[0]) for l in list(open("sub.path.tsv"))[1:]]
start = time.perf_counter()
lasso_path(z, y - y.mean(), alphas=lambdas, tol=1e-7)
print(f"sklearn {time.perf_counter() - start:.3f}")
PY
done
python3 - "$subset" <<'PY'
import statistics, sys
t = {"colflow": [], "sklearn": []}
for line in open("subset.times"):
    k, v = line.split()
    t[k].append(float(v))
c, s = statistics.median(t["colflow"]), statistics.median(t["sklearn"])
print(f"first {sys.argv[1]} columns: colflow {c:.2f} s (whole run, streaming the store), "
      f"scikit-learn lasso_path {s:.2f} s (matrix in memory), ratio colflow/sklearn {c / s:.2f}")
PY
rm -f subset.times
