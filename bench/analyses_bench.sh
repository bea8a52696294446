#!/usr/bin/env bash
# The analyses against PLINK 2, side by side on the same data in one run:
#   stats vs plink2 --freq --missing, assoc (1 and 10 phenotypes) vs plink2 --glm,
#   pca --k 10 vs plink2 --pca 10 approx; wall time and peak RSS of each run.
#
#   bench/analyses_bench.sh [SAMPLES VARIANTS]     (default 10000 50000)
#
# Each comparison runs RUNS times (default 3; PCA_RUNS, default 1, for the slow plink2 PCA),
# alternating the contenders so that a machine whose speed drifts does not favour one side,
# and reports medians and the ratio colflow/plink2 (below 1: colflow is faster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-10000}
variants=${2:-50000}
runs=${RUNS:-3}
pca_runs=${PCA_RUNS:-1}
threads=${THREADS:-$(nproc)}

source bench/common.sh
bench_setup analyses "$samples" "$variants"
# Ten phenotypes: the simulated one plus independent noise, as a header-named table.
python3 - <<'PY'
import random
random.seed(7)
with open("sim.phen") as f, open("sim10.phen", "w") as out:
    out.write("#FID IID " + " ".join(f"P{i}" for i in range(10)) + "\n")
    for line in f:
        fid, iid, y = line.split()
        out.write(f"{fid} {iid} " + " ".join(f"{float(y) + random.gauss(0, 3):.6f}" for _ in range(10)) + "\n")
PY

# time_run NAME COMMAND...: appends "NAME seconds peak_kB" to times.txt.
: > times.txt
time_run() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o time.out "$@" > /dev/null 2> run.err || { cat run.err; exit 1; }
  echo "$name $(cat time.out)" >> times.txt
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); threads $threads"
echo "data: colflow simulate --samples $samples --variants $variants --missing 0.01 (store $(du -sh sim.cf | cut -f1))"
for ((r = 0; r < runs; ++r)); do
  time_run stats.colflow "$colflow" stats sim.cf --quiet --threads "$threads" --out c.stats
  time_run stats.plink2 plink2 --bfile sim --freq --missing --threads "$threads" --out p.stats
  time_run assoc1.colflow "$colflow" assoc sim.cf --quiet --threads "$threads" --pheno sim.phen --out c1
  time_run assoc1.plink2 plink2 --bfile sim --pheno sim.phen --glm allow-no-covars --threads "$threads" --out p1
  time_run assoc10.colflow "$colflow" assoc sim.cf --quiet --threads "$threads" --pheno sim10.phen --out c10
  time_run assoc10.plink2 plink2 --bfile sim --pheno sim10.phen --glm allow-no-covars --threads "$threads" --out p10
done
for ((r = 0; r < pca_runs; ++r)); do
  time_run pca10.colflow "$colflow" pca sim.cf --quiet --threads "$threads" --k 10 --out cpca
  time_run pca10.plink2 plink2 --bfile sim --pca 10 approx --threads "$threads" --out ppca
done

python3 - <<'PY'
import collections, statistics
t = collections.defaultdict(list)
for line in open("times.txt"):
    name, s, kb = line.split()
    t[name].append((float(s), int(kb)))
def med(name, i): return statistics.median(x[i] for x in t[name])
print(f'{"analysis":<10} {"colflow s":>10} {"plink2 s":>10} {"ratio":>7} {"colflow RSS":>12} {"plink2 RSS":>12}')
for a in ("stats", "assoc1", "assoc10", "pca10"):
    c, p = med(a + ".colflow", 0), med(a + ".plink2", 0)
    print(f'{a:<10} {c:>10.3f} {p:>10.3f} {c / p:>7.3f} {med(a + ".colflow", 1) / 1e3:>9.1f} MB {med(a + ".plink2", 1) / 1e3:>9.1f} MB')
print(f'assoc 10 phenotypes / 1 phenotype: colflow {med("assoc10.colflow", 0) / med("assoc1.colflow", 0):.2f}x, '
      f'plink2 {med("assoc10.plink2", 0) / med("assoc1.plink2", 0):.2f}x')
PY
