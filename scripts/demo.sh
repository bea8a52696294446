#!/usr/bin/env bash
# colflow's first run: a whole study on data it simulates, in the order a study runs (import,
# quality control and pruning, relatedness, structure and the GRM, whole-genome regression then
# the LOCO scan, clumping, BayesR and scores, SBayesR, a lasso path, LD, export back to PLINK and
# the streaming speed, pictures), each command as a user types it
# and each step a line of what it found; it ends on a page of results, build/demo/index.html.
#
#   bash scripts/demo.sh                              # 2,000 samples x 20,000 variants
#   SAMPLES=5000 VARIANTS=50000 bash scripts/demo.sh
#   COLFLOW=/path/to/colflow bash scripts/demo.sh     # run that program, build nothing
#
# Installs missing dependencies, builds the colflow program alone (CMake preset `cli`) showing
# the build's progress, and works in build/demo/ (or DEMO_DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

samples=${SAMPLES:-2000}
variants=${VARIANTS:-20000}
started=$SECONDS

say() { printf 'demo: %s\n' "$*"; }

# Runs a command into LOG, printing the build tool's [done/total] counter every 10 seconds (so
# a build never looks like a hang); the log's tail on failure.
with_progress() {
  local log=$1 what=$2 begun=$SECONDS last='' status=0
  shift 2
  "$@" > "$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$pid" 2> /dev/null || break
      sleep 1
    done
    last=$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -n 1 || true)
    kill -0 "$pid" 2> /dev/null && say "$what ${last:-(configuring)} after $((SECONDS - begun)) s"
  done
  wait "$pid" || status=$?
  if ((status != 0)); then
    tail -n 40 "$log" >&2
    say "$what failed (exit $status); the whole log is $log" >&2
    exit "$status"
  fi
  say "$what done in $((SECONDS - begun)) s"
}

if [[ -n ${COLFLOW:-} ]]; then
  program=$(realpath "$COLFLOW")
else
  say "installing what is missing (Debian packages; returns at once when all is there)"
  bash scripts/install-deps.sh
  mkdir -p build
  with_progress build/cli-configure.log "configuring" cmake --preset cli
  with_progress build/cli-build.log "building the colflow program" cmake --build --preset cli
  program=$root/build/cli/cli/colflow
fi

# `colflow ...` below is the program, each command echoed as typed; a command that runs longer
# than 20 seconds gets a line every 20 seconds.
colflow() {
  printf '$ colflow %s\n' "$*"
  printf '%s\n' "colflow $*" >> "$commands"
  local began=$SECONDS status=0
  (while sleep 20; do say "colflow $1 still running after $((SECONDS - began)) s"; done) &
  local ticker=$!
  "$program" "$@" || status=$?
  kill "$ticker" 2> /dev/null || true
  wait "$ticker" 2> /dev/null || true
  return "$status"
}

work=$(realpath -m "${DEMO_DIR:-build/demo}")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
report=(python3 "$root/scripts/demo_report.py")
steps=steps.tsv commands=commands.txt
: > "$steps"
: > "$commands"
step_title='' step_began=0

# begin TITLE: starts a step. found FINDING [FILE]: ends it with its one-line finding (and the
# file whose head the page shows), printing how long it took.
begin() {
  step_title=$1 step_began=$SECONDS
  : > "$commands"
  printf '\n== %s\n' "$step_title"
}
found() {
  local seconds=$((SECONDS - step_began))
  printf -- '-> %s (%d s)\n' "$1" "$seconds"
  "${report[@]}" record "$steps" "$step_title" "$commands" "$seconds" "$1" "${2:-}"
}

begin "Simulate a study: $samples samples x $variants variants"
colflow simulate --samples "$samples" --variants "$variants" --chromosomes 4 --populations 2 \
  --fst 0.01 --population-shift 2 --relatives 40 --causal 50 --h2 0.5 --missing 0.01 \
  --seed 42 --out sim
h2_truth=$(awk '$2 == "h2_realised" { printf "%.3f", $3 }' sim.truth.tsv)
grep -v '^#' sim.truth.tsv | sed -n '2,$p' | cut -f1 > causal.txt
grep -v '^#' sim.truth.tsv | cut -f1-3 > truth.weights  # ID A1 BETA
found "4 chromosomes, 2 populations (Fst 0.01) whose phenotypes differ by a shift, 40 hidden \
parent-offspring pairs, 50 causal variants, h2 $h2_truth" sim.truth.tsv

begin "Import: PLINK files into a store"
colflow preprocess --bed sim --out sim.cf
colflow info sim.cf
colflow verify sim.cf
cp -r sim.cf damaged.cf
"${report[@]}" flip-byte damaged.cf/columns.dat
if "$program" verify damaged.cf > damaged.txt 2>&1; then
  say "the damaged store was not detected" >&2
  exit 1
fi
found "store $(du -sk sim.cf | cut -f1) KiB for a .bed of $(du -k sim.bed | cut -f1) KiB; \
verify passes, and on a copy with one flipped byte says: $(tail -n 1 damaged.txt)"

begin "Quality control: statistics, Hardy-Weinberg and plink2's filters"
colflow stats sim.cf --out sim.stats.tsv
colflow hardy sim.cf --out sim
colflow qc sim.cf --maf 0.01 --geno 0.05 --hwe 1e-10 --mind 0.1 --write-snplist \
  --write-samples --out qc
out_of_hwe=$(awk 'NR > 1 && $NF < 1e-10' sim.hardy | wc -l)
found "$(wc -l < qc.snplist) of $variants variants and $(grep -vc '^#' qc.id) of $samples \
samples pass; $out_of_hwe variants fail HWE at 1e-10" sim.hardy

begin "LD pruning for whole-genome regression"
colflow ld sim.cf --extract qc.snplist --indep-pairwise 1000 100 0.9 --out step1
found "$(wc -l < step1.prune.in) variants kept, $(wc -l < step1.prune.out) pruned \
(the simulation draws variants independently)" step1.prune.in

begin "Relatedness: KING-robust kinship"
colflow king sim.cf --make-king-table --king-table-filter 0.177 --king-cutoff 0.0884 --out rel
found "$(grep -vc '^#' rel.kin0 || true) first-degree pairs found (40 simulated); \
$(grep -vc '^#' rel.king.cutoff.out.id) samples to drop for an unrelated set" rel.kin0

begin "Structure: principal components"
colflow pca sim.cf --k 5 --out pcs
placed=$("${report[@]}" pc-populations pcs.eigenvec sim.fam)
found "$placed" pcs.eigenvec

begin "The genomic relationship matrix"
colflow grm sim.cf --make-rel square bin4 --out grm
grm=$("${report[@]}" grm-summary grm.rel.bin "$samples" 40)
found "$grm" grm.rel.id

begin "Association scan without correction"
colflow assoc sim.cf --pheno sim.phen --out plain
lambda_plain=$("${report[@]}" lambda plain.PHENO1.assoc.tsv)
found "genomic control lambda $lambda_plain: structure inflates the scan" plain.PHENO1.assoc.tsv

begin "Whole-genome regression (regenie's step 1), then the scan with LOCO predictions"
colflow wgr sim.cf --pheno sim.phen --extract step1.prune.in --out step1
colflow assoc sim.cf --pheno sim.phen --extract qc.snplist --loco step1_pred.list --out step2
lambda_loco=$("${report[@]}" lambda step2.PHENO1.assoc.tsv)
hits=$("${report[@]}" hits step2.PHENO1.assoc.tsv causal.txt 5e-8)
found "lambda $lambda_plain before, $lambda_loco with LOCO; $hits" step2.PHENO1.assoc.tsv

begin "Clumping the scan into loci"
colflow clump sim.cf --clump step2.PHENO1.assoc.tsv --clump-p1 5e-8 --clump-p2 1e-4 \
  --clump-r2 0.1 --clump-kb 500 --out loci
loci=$("${report[@]}" loci loci.clumped causal.txt)
found "$loci" loci.clumped

begin "BayesR: stopped after 150 iterations, resumed to 300"
colflow bayesr sim.cf --pheno sim.phen --iterations 150 --burnin 100 --checkpoint-every 50 \
  --out br
colflow bayesr sim.cf --pheno sim.phen --iterations 300 --burnin 100 --out br --resume
fit=$("${report[@]}" bayesr br.effects.tsv br.trace.tsv 100 causal.txt "$h2_truth")
found "$fit" br.trace.tsv

begin "Polygenic scores from the BayesR effects, against the true genetic values"
colflow score sim.cf --score br.effects.tsv --out prs   # read by its header: BETA_PER_UNIT
colflow score sim.cf --score truth.weights 1 2 3 header --out truth
r=$("${report[@]}" correlation prs.sscore truth.sscore)
found "correlation of the score with the true genetic value: $r" prs.sscore

begin "Summary-statistics BayesR (SBayesR) from the LOCO scan and the store's LD"
# Common variants only, as SBayesR is used (HapMap3's): with N in the thousands the rare ones'
# sampling noise makes the chain diverge, which sbayesr reports and stops on.
"${report[@]}" ma step2.PHENO1.assoc.tsv sim.stats.tsv step2.ma 0.05
colflow sbayesr --gwas step2.ma --ldm sim.cf --ld-window 50 --ld-window-kb 100 \
  --iterations 300 --burnin 100 --out sbr
colflow score sim.cf --score sbr.snpRes --out sbr
hsq=$("${report[@]}" hsq sbr.parRes)
r=$("${report[@]}" correlation sbr.sscore truth.sscore)
found "h2 $hsq from the summary statistics of $(($(wc -l < step2.ma) - 1)) common variants \
alone; its effects score the samples with correlation $r to the true genetic value" sbr.parRes

begin "Lasso path"
colflow lasso sim.cf --pheno sim.phen --nlambda 10 --lambda-min-ratio 0.05 --out lasso
# not in the demo: ridge: the lasso step shows the same coordinate-descent path (alpha 0)
# not in the demo: enet: the lasso step shows the same coordinate-descent path (alpha 0.5 by default; the lasso is alpha 1)
path=$("${report[@]}" lasso lasso.path.tsv)
found "$path" lasso.path.tsv

begin "LD between nearby variants"
colflow ld sim.cf --r2 --ld-window 100000 --ld-window-kb 20 --ld-window-r2 0.01 --out near
found "$(($(wc -l < near.ld) - 1)) pairs within 20 kb with r2 >= 0.01 \
(independent variants: chance alone)" near.ld

begin "Export back to PLINK, and streaming speed"
colflow export sim.cf --bed roundtrip
cmp sim.bed roundtrip.bed
colflow bench sim.cf --passes 3
found "roundtrip.bed is byte-identical to sim.bed"

# Pictures: `colflow plot` runs the Python package's colflow-plot (pip install ./python[plot]);
# without it the page holds the tables alone.
if command -v colflow-plot > /dev/null; then
  begin "Pictures: Manhattan and QQ plots of the LOCO scan, the BayesR chain, the PCs"
  colflow plot manhattan step2.PHENO1.assoc.tsv --out manhattan.png
  colflow plot qq step2.PHENO1.assoc.tsv --out qq.png
  colflow plot qq plain.PHENO1.assoc.tsv --out qq-plain.png --title "without LOCO"
  colflow plot trace br.trace.tsv --burnin 100 --out trace.png
  colflow plot pcs pcs.eigenvec --color-by FID --pairs 1:2 --out pcs.png
  found "5 pictures" manhattan.png,qq-plain.png,qq.png,trace.png,pcs.png
else
  say "no colflow-plot (pip install ./python[plot]): the page shows tables, no pictures"
fi

"${report[@]}" page "$steps" index.html
cd "$root"
say "finished in $((SECONDS - started)) s; the results page is $work/index.html"
