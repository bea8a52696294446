#!/usr/bin/env bash
# A genome-wide association study from PLINK files to independent loci with colflow alone:
# regenie's recommended quality control, LD pruning for its step 1, whole-genome regression,
# the leave-one-chromosome-out scan and clumping (README.md beside this script).
#
#   run.sh PLINK_PREFIX OUT_DIR [PHENO_FILE]
#
# PHENO_FILE: FID IID VALUE lines (PLINK's phenotype file). Without one, a quantitative trait is
# made from the genotypes: 10 causal variants spread over the autosomes (colflow score) plus
# noise, h2 about 0.5, so that the loci the scan finds can be checked against the truth
# (OUT_DIR/causal.txt).
# COLFLOW: the colflow program (default: the one on PATH). Every step prints what it found.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,12p' "$0"; exit 2; }
bfile=$1 out=$2 pheno=${3:-}
colflow=${COLFLOW:-colflow}
mkdir -p "$out"
cf=("$colflow")
step() { printf '\n== %s\n' "$*"; }

step "import: $bfile into a store"
"${cf[@]}" preprocess --bed "$bfile" --out "$out/study.cf" --force --quiet
"${cf[@]}" info "$out/study.cf" | head -3

if [[ -z $pheno ]]; then
  step "a simulated trait: 10 causal variants, h2 about 0.5"
  # Every (variants/10)-th autosomal variant, effect +-1 per allele; then noise of the genetic
  # values' own spread (awk's generator with a fixed seed: the same trait every run).
  awk -v n="$(grep -c . "$bfile.bim")" '$1 >= 1 && $1 <= 22 && NR % int(n / 10) == 0 {
      print $2, $5, (++k % 2 ? 1 : -1) }' "$bfile.bim" > "$out/causal.txt"
  "${cf[@]}" score "$out/study.cf" --score "$out/causal.txt" 1 2 3 --quiet --out "$out/truth"
  awk 'BEGIN { srand(11) } NR > 1 { n++; g[n] = $NF; id[n] = $1 " " $2; s += $NF; ss += $NF * $NF }
       END { sd = sqrt(ss / n - (s / n) ^ 2)
             for (i = 1; i <= n; i++) { u = rand(); v = rand()
               print id[i], g[i] + sd * sqrt(-2 * log(u + 1e-300)) * cos(6.283185307 * v) } }' \
    "$out/truth.sscore" > "$out/trait.phen"
  pheno=$out/trait.phen
fi

step "quality control: regenie's plink2 recipe"
"${cf[@]}" qc "$out/study.cf" --maf 0.01 --mac 100 --geno 0.1 --hwe 1e-15 --mind 0.1 \
  --write-snplist --write-samples --no-id-header --out "$out/qc_pass"
echo "$(wc -l < "$out/qc_pass.snplist") variants and $(wc -l < "$out/qc_pass.id") samples pass"

step "LD pruning of the passing variants for step 1 (window 1000, step 100, r2 0.9)"
"${cf[@]}" ld "$out/study.cf" --extract "$out/qc_pass.snplist" --keep "$out/qc_pass.id" \
  --indep-pairwise 1000 100 0.9 --quiet --out "$out/step1"
echo "$(wc -l < "$out/step1.prune.in") variants kept, $(wc -l < "$out/step1.prune.out") pruned"

step "relatedness: KING-robust kinship, one of each pair of second-degree relatives or closer"
"${cf[@]}" king "$out/study.cf" --keep "$out/qc_pass.id" --king-cutoff 0.0884 --quiet \
  --out "$out/related"
echo "$(grep -vc '^#' "$out/related.king.cutoff.out.id" || true) samples removed as relatives"

step "whole-genome regression (regenie's step 1) on the pruned variants"
"${cf[@]}" wgr "$out/study.cf" --pheno "$pheno" --keep "$out/qc_pass.id" \
  --extract "$out/step1.prune.in" --quiet --out "$out/step1"

step "the association scan with the LOCO predictions (step 2)"
"${cf[@]}" assoc "$out/study.cf" --pheno "$pheno" --keep "$out/qc_pass.id" \
  --extract "$out/qc_pass.snplist" --loco "$out/step1_pred.list" --quiet --out "$out/step2"
scan=$(ls "$out"/step2.*.tsv | head -1)
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "P") p = i; next }
            $p < 5e-8 { k++ } END { print k + 0, "variants at P < 5e-8" }' "$scan"

step "clumping the scan into independent loci (p1 5e-8, p2 1e-4, r2 0.1, 500 kb)"
"${cf[@]}" clump "$out/study.cf" --clump "$scan" --clump-p1 5e-8 --clump-p2 1e-4 \
  --clump-r2 0.1 --clump-kb 500 --quiet --out "$out/loci"
# Like PLINK 1.9, clump writes no file when no variant reaches --clump-p1.
[[ -f $out/loci.clumped ]] || { echo "no variant at P < 5e-8: no locus"; exit 0; }
echo "$(awk 'NF > 0 && NR > 1' "$out/loci.clumped" | wc -l) independent loci in $out/loci.clumped"
if [[ -f $out/causal.txt ]]; then
  hits=$(awk 'NR == FNR { c[$1] = 1; next } FNR > 1 && NF > 0 { n++; if ($3 in c) k++ }
              END { print k + 0 }' "$out/causal.txt" "$out/loci.clumped")
  echo "$hits of the index variants are causal ones"
fi
