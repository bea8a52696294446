#!/usr/bin/env bash
# SBayesR against GCTB 2.05's --sbayes R on a slice of uk10k: summary statistics of its test
# phenotype from `colflow assoc`, the full LD matrix of the slice (GCTB's --make-full-ldm; colflow
# computes the same in memory), both chains on the same .ma; prints both posterior h², their
# difference, and the correlation of the two scores on the slice's samples (`colflow score` of
# each .snpRes). Acceptance (issue 53): |Δh²| ≤ 0.02 and correlation ≥ 0.98.
#
#   bench/sbayesr_gctb.sh        (env: COLFLOW, GCTB, DATA, FIRST, LAST, ITER, BURN, SEED)
#
# `bench/run.sh --only sbayesr` runs the same comparison as a suite of the harness (LD build
# time and bytes, seconds per iteration, h2; bench/harness/suite_sbayesr.py).
#
# Skips (exit 0 with a message) when GCTB or the data are absent. Uses plink2 only to cut the
# slice (variants FIRST..LAST of the .bim with MAF ≥ 0.01).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
COLFLOW=${COLFLOW:-build/rt/cli/colflow}
GCTB=${GCTB:-../shared/peers/bin/gctb}
DATA=${DATA:-../shared/data/uk10k}
FIRST=${FIRST:-2001} LAST=${LAST:-3100}
ITER=${ITER:-5000} BURN=${BURN:-1000} SEED=${SEED:-1}
banner=$([ -x "$GCTB" ] && "$GCTB" 2>&1 || true)
[[ $banner == *GCTB* ]] || { echo "sbayesr_gctb: no runnable GCTB at $GCTB: skipped"; exit 0; }
[ -f "$DATA/uk10k_chr1_1mb.bed" ] || { echo "sbayesr_gctb: no uk10k in $DATA: skipped"; exit 0; }
command -v plink2 > /dev/null || { echo "sbayesr_gctb: no plink2: skipped"; exit 0; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
U=$DATA/uk10k_chr1_1mb
awk -v a="$FIRST" -v b="$LAST" 'NR >= a && NR <= b { print $2 }' "$U.bim" > "$work/range"
plink2 --bfile "$U" --extract "$work/range" --maf 0.01 --make-bed --out "$work/slice" --threads 1 > /dev/null
"$COLFLOW" preprocess --bed "$work/slice" --out "$work/slice.cf" --threads 1 > /dev/null 2>&1
"$COLFLOW" stats "$work/slice.cf" --out "$work/stats.tsv" --quiet
"$COLFLOW" assoc "$work/slice.cf" --pheno "$DATA/test.phen" --out "$work/gwas" --quiet
python3 - "$work" << 'PY'
import sys
d = sys.argv[1]
def table(path):
    rows = [l.split() for l in open(path)]
    return [dict(zip(rows[0], r)) for r in rows[1:]]
freq = {r["ID"]: r["A1_FREQ"] for r in table(f"{d}/stats.tsv")}
with open(f"{d}/slice.ma", "w") as out:
    out.write("SNP A1 A2 freq b se p N\n")
    for r in table(f"{d}/gwas.PHENO1.assoc.tsv"):
        out.write(f"{r['ID']} {r['A1']} {r['A2']} {freq[r['ID']]} {r['BETA']} {r['SE']} {r['P']} {r['N_OBS']}\n")
PY
m=$(wc -l < "$work/slice.bim")
start=$(date +%s.%N)
"$GCTB" --bfile "$work/slice" --make-full-ldm --out "$work/slice" > "$work/gctb-ldm.log"
mid=$(date +%s.%N)
"$GCTB" --sbayes R --ldm "$work/slice.ldm.full" --gwas-summary "$work/slice.ma" \
  --chain-length "$ITER" --burn-in "$BURN" --seed "$SEED" --out "$work/gctb" > "$work/gctb.log"
end=$(date +%s.%N)
"$COLFLOW" sbayesr --gwas "$work/slice.ma" --ldm "$work/slice.cf" --ld-window "$m" \
  --ld-window-kb 1000000 --iterations "$ITER" --burnin "$BURN" --seed "$SEED" \
  --out "$work/colflow" --threads 1 2> "$work/colflow.log"
done=$(date +%s.%N)
"$COLFLOW" score "$work/slice.cf" --score "$work/gctb.snpRes" --out "$work/gs" --quiet
"$COLFLOW" score "$work/slice.cf" --score "$work/colflow.snpRes" --out "$work/cs" --quiet
python3 - "$work" "$m" "$start" "$mid" "$end" "$done" "$ITER" << 'PY'
import sys, math
d, m = sys.argv[1], int(sys.argv[2])
start, mid, end, done = map(float, sys.argv[3:7]); it = int(sys.argv[7])
def hsq(path):
    for line in open(path):
        f = line.split()
        if f and f[0] == "hsq": return float(f[1])
def scores(path):
    rows = [l.split() for l in open(path)]
    k = rows[0].index("SCORE1_AVG")
    return [float(r[k]) for r in rows[1:]]
g, c = hsq(f"{d}/gctb.parRes"), hsq(f"{d}/colflow.parRes")
a, b = scores(f"{d}/gs.sscore"), scores(f"{d}/cs.sscore")
ma, mb = sum(a) / len(a), sum(b) / len(b)
cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
r = cov / math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
print(f"uk10k slice: {m} variants, {it} iterations")
print(f"h2: GCTB {g:.4f}, colflow {c:.4f}, difference {c - g:+.4f}")
print(f"score correlation {r:.4f}")
print(f"GCTB: LD {mid - start:.1f} s, chain {end - mid:.1f} s; colflow (LD in memory + chain) {done - end:.1f} s")
ok = abs(c - g) <= 0.02 and r >= 0.98
print("within the acceptance (|dh2| <= 0.02, r >= 0.98)" if ok else "OUTSIDE the acceptance")
sys.exit(0 if ok else 1)
PY
