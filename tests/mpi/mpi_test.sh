#!/usr/bin/env bash
# The MPI suite (docs/SCALING.md): `mpirun -np R colflow ...` against one plain process.
#   mpi_test.sh COLFLOW MPIEXEC
# Exact mode: BayesR (trace, effects, summary and checkpoint) and the lasso path (coefficients and path)
# written on 1, 2 and 3 ranks are byte-identical to one process's, on a genotype store and a
# zstd float64 store, with --keep/--extract selections and a row count that splits unevenly;
# so are the scans' tables (stats, assoc with two phenotypes and a covariate, pca with
# loadings at 17 digits), whose columns the ranks share, and stats and assoc (linear and
# logistic) on X, Y, XY and MT with --sex;
# so are wgr's predictions, grm's matrices (bands made by the ranks in rounds), ld's reports
# (rows shared) and scores (segments of columns);
# a checkpoint written on 2 ranks resumes on 3 into the single process's chain; so do SBayesR's
# files from an LD store (its ranks draw their own blocks of variants). An error on the
# ranks ends them all with its message and no output; a command that does not run on ranks is
# refused; a rank killed mid-run ends the others within seconds, leaving no output file.
# Ranks are oversubscribed on small machines: small data, --threads 1 per rank.
set -euo pipefail
colflow=$1
mpiexec=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Open MPI refuses root without these (CI runs as root). In a sanitised build LeakSanitizer would
# report Open MPI's own allocations at exit: they are suppressed by library (lsan.supp), never
# colflow's.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# Open MPI's libraries have no frame pointers: the slower unwinder finds the frames that name them.
# LeakSanitizer scans the dynamic TLS blocks it learnt of through __tls_get_addr; on 3 ranks here
# it was handed a bogus one (an Open MPI plugin's, "DTLS 7 at 0x6350-0x400007452") and its tracer
# died with SIGSEGV at exit, after correct outputs. Not intercepting __tls_get_addr leaves those
# blocks out of the scan (colflow's own thread-locals are static TLS, still scanned).
leak_checked_asan="fast_unwind_on_malloc=0:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# That unwinder on every allocation, and the scan at exit, make each run on ranks seconds longer
# (five times as long as the run itself), so the ranks check leaks in one run of each kind of
# exchange (leak_checked_on_2 below: the chain's, a scan's, the GRM's bands, the LD rows), the other
# runs only AddressSanitizer's other checks; a plain process checks leaks in every run, as in the
# other suites.
ranks_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI unloads its plugins at MPI_Finalize; LeakSanitizer, which runs later, could then not
# name the library of their allocations. Kept loaded, they are suppressed by name.
export OMPI_MCA_mca_base_component_disable_dlclose=1
passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }
on_ranks() {  # on_ranks R COMMAND...: R = 0 for a plain process
  local r=$1
  shift
  if [[ $r == 0 ]]; then
    "$colflow" "$@"
  else
    ASAN_OPTIONS=$ranks_asan "$mpiexec" -np "$r" -x LSAN_OPTIONS -x ASAN_OPTIONS "$colflow" "$@"
  fi
}
leak_checked_on_2() {  # leak_checked_on_2 R COMMAND...: on_ranks, with leak checks on 2 ranks
  if [[ $1 == 2 ]]; then
    ranks_asan=$leak_checked_asan on_ranks "$@"
  else
    on_ranks "$@"
  fi
}
same_files() {  # same_files WHAT PREFIX_A PREFIX_B SUFFIX...
  local what=$1 a=$2 b=$3
  shift 3
  for s in "$@"; do
    if cmp -s "$a$s" "$b$s"; then ok "$what: $b$s equals one process's"; else bad "$what: $b$s differs"; fi
  done
}

# 9,000 samples: three sample blocks (4,096 + 4,096 + 808), so 2 ranks split 1 + 2 blocks and 3
# ranks one each; with --keep the used rows are not a multiple of anything.
"$colflow" simulate --samples 9000 --variants 240 --causal 20 --missing 0.02 --seed 11 --quiet --out sim
"$colflow" preprocess --bed sim --codec genotype --out geno.cf --quiet
"$colflow" preprocess --bed sim --codec zstd --out dense.cf --quiet
awk 'NR % 3 != 0 {print $1, $2}' sim.fam > keep.txt
awk 'NR % 5 != 0 {print $2}' sim.bim > extract.txt
select=(--keep keep.txt --extract extract.txt)

for store in geno.cf dense.cf; do
  for r in 0 1 2 3; do
    leak_checked_on_2 "$r" bayesr "$store" --pheno sim.phen "${select[@]}" --iterations 6 --burnin 2 \
      --threads 1 --quiet --out "b$r-$store" 2>"err$r" || bad "bayesr on $r ranks: $(cat "err$r")"
    on_ranks "$r" lasso "$store" --pheno sim.phen "${select[@]}" --nlambda 4 --threads 1 --quiet \
      --out "l$r-$store" 2>"err$r" || bad "lasso on $r ranks: $(cat "err$r")"
  done
  for r in 1 2 3; do
    same_files "bayesr $store, $r ranks" "b0-$store" "b$r-$store" .trace.tsv .effects.tsv .summary.tsv \
      .checkpoint
    same_files "lasso $store, $r ranks" "l0-$store" "l$r-$store" .coef.tsv .path.tsv
  done
done

# Scans: the ranks share the columns; rank 0 writes every column's line.
awk '{print $1, $2, $3, $3 * $3 + (NR % 7)}' sim.phen > two.phen
awk '{print $1, $2, (NR % 3 == 0 ? "NA" : NR % 5)}' sim.phen > covar.txt
for store in geno.cf dense.cf; do
  for r in 0 1 2 3; do
    on_ranks "$r" stats "$store" "${select[@]}" --quiet --out "s$r-$store.tsv" 2>"err$r" ||
      bad "stats on $r ranks: $(cat "err$r")"
    leak_checked_on_2 "$r" assoc "$store" --pheno two.phen --covar covar.txt "${select[@]}" --digits 12 \
      --quiet --out "a$r-$store" 2>"err$r" || bad "assoc on $r ranks: $(cat "err$r")"
    on_ranks "$r" pca "$store" --k 3 --loadings "${select[@]}" --digits 17 --threads 1 --quiet \
      --out "p$r-$store" 2>"err$r" || bad "pca on $r ranks: $(cat "err$r")"
  done
  for r in 1 2 3; do
    same_files "stats $store, $r ranks" "s0-$store" "s$r-$store" .tsv
    same_files "assoc $store, $r ranks" "a0-$store" "a$r-$store" .PHENO1.assoc.tsv .PHENO2.assoc.tsv
    same_files "pca $store, $r ranks" "p0-$store" "p$r-$store" .eigenval .eigenvec .loadings.tsv
  done
done

# stats on X, Y, XY and MT (the sim's variants spread over them), whose counts need the samples'
# sexes (from --sex): those columns are passed over even with every sample, the others answered
# from the index; on ranks, the same bytes.
awk 'BEGIN { split("1 X Y XY MT", c) } { $1 = c[NR % 5 + 1]; print }' sim.bim > sexed.bim
awk '{ print $1, $2, NR % 3 }' sim.fam > sex.txt
"$colflow" preprocess --bed-file sim.bed --bim sexed.bim --fam sim.fam --out sexed.cf --quiet
for sel in all keep; do
  args=(--sex sex.txt)
  [[ $sel == keep ]] && args+=("${select[@]}")
  for r in 0 2 3; do
    on_ranks "$r" stats sexed.cf "${args[@]}" --digits 17 --quiet --out "x$r-$sel.tsv" 2>"err$r" ||
      bad "stats of sex chromosomes on $r ranks: $(cat "err$r")"
  done
  for r in 2 3; do same_files "stats of sex chromosomes ($sel), $r ranks" "x0-$sel" "x$r-$sel" .tsv; done
done

# assoc on the same columns: a quantitative and a case/control phenotype (logistic, Firth's
# fallback) with a covariate; X adds sex as a covariate, Y takes the males, Y and MT are
# haploid. Each kind of chromosome is its own run of columns, shared by the ranks. A third of
# the variants (16 of each kind; every fit is seconds under the sanitizers).
awk '{print $1, $2, $3, ($3 > 0 ? 2 : 1)}' sim.phen > mixed.phen
awk 'NR % 3 == 0 {print $2}' sexed.bim > third.txt
for r in 0 2 3; do
  on_ranks "$r" assoc sexed.cf --sex sex.txt --pheno mixed.phen --covar covar.txt \
    --extract third.txt --digits 17 --quiet --out "y$r" 2>"err$r" ||
    bad "assoc of sex chromosomes on $r ranks: $(cat "err$r")"
done
for r in 2 3; do
  same_files "assoc of sex chromosomes, $r ranks" y0 "y$r" .PHENO1.assoc.tsv .PHENO2.logistic.tsv
done
# The case/control phenotype by the score test (--score-test): no fit per column.
for r in 0 2; do
  on_ranks "$r" assoc sexed.cf --sex sex.txt --pheno mixed.phen --pheno-name PHENO2 \
    --covar covar.txt --extract third.txt --score-test --digits 17 --quiet --out "z$r" 2>"err$r" ||
    bad "assoc --score-test on $r ranks: $(cat "err$r")"
done
same_files "assoc --score-test, 2 ranks" z0 z2 .PHENO2.logistic.tsv

# Threads inside ranks: with 20,000 samples (5 blocks) rank 1 of 2 owns 3 blocks, enough for
# its team of 2 threads to share them (docs/DESIGN.md §4.8); still the single process's bytes.
"$colflow" simulate --samples 20000 --variants 120 --causal 10 --missing 0.01 --seed 4 --quiet \
  --out wide
"$colflow" preprocess --bed wide --out wide.cf --quiet
on_ranks 0 bayesr wide.cf --pheno wide.phen --iterations 4 --burnin 1 --threads 1 --quiet --out t0
on_ranks 2 bayesr wide.cf --pheno wide.phen --iterations 4 --burnin 1 --threads 2 --quiet --out t2
same_files "bayesr on 2 ranks of 2 threads" t0 t2 .trace.tsv .effects.tsv .summary.tsv .checkpoint
on_ranks 0 lasso wide.cf --pheno wide.phen --nlambda 3 --threads 1 --quiet --out u0
on_ranks 2 lasso wide.cf --pheno wide.phen --nlambda 3 --threads 2 --quiet --out u2
same_files "lasso on 2 ranks of 2 threads" u0 u2 .coef.tsv .path.tsv

# A chain checkpointed on 2 ranks at iteration 4 and resumed on 3 to iteration 6 is the chain
# of one process run to 6.
on_ranks 2 bayesr geno.cf --pheno sim.phen --iterations 4 --burnin 2 --threads 1 --quiet --out resumed
on_ranks 3 bayesr geno.cf --pheno sim.phen --iterations 6 --burnin 2 --threads 1 --quiet --resume \
  --out resumed
on_ranks 0 bayesr geno.cf --pheno sim.phen --iterations 6 --burnin 2 --threads 1 --quiet --out whole
same_files "bayesr resumed on another rank count" whole resumed .trace.tsv .effects.tsv .summary.tsv \
  .checkpoint

# SBayesR: the blocks of 128 variants dealt out to the ranks in turn, each drawing its own and
# keeping their residual, every change sent to every rank; the files are one process's, from full
# LD in 16 bits and from a float32 band of 60 variants (whose windows cut across the blocks, also
# with 2 threads per rank), and a chain checkpointed on 2 ranks resumes on 3. 240 variants are 2
# blocks: on 3 ranks one rank draws none.
"$colflow" stats geno.cf --quiet --out freq.tsv
"$colflow" assoc geno.cf --pheno sim.phen --quiet --out gwas
awk 'NR == FNR { if (FNR > 1) freq[$2] = $9; next }
     FNR == 1 { print "SNP A1 A2 freq b se p N"; next }
     { print $3, $4, $5, freq[$3], $7, $8, $10, $6 }' freq.tsv gwas.PHENO1.assoc.tsv > gwas.ma
"$colflow" ld geno.cf --make-ldm full --ldm-bits 16 --quiet --out ld16
"$colflow" ld geno.cf --make-ldm band --ld-window 60 --quiet --out band
for r in 0 2 3; do
  leak_checked_on_2 "$r" sbayesr --gwas gwas.ma --ldm ld16 --iterations 20 --burnin 5 --threads 1 \
    --quiet --out "sb$r" 2>"err$r" || bad "sbayesr on $r ranks: $(cat "err$r")"
  on_ranks "$r" sbayesr --gwas gwas.ma --ldm band --iterations 20 --burnin 5 --threads 1 \
    --quiet --out "sbb$r" 2>"err$r" || bad "sbayesr band on $r ranks: $(cat "err$r")"
done
on_ranks 2 sbayesr --gwas gwas.ma --ldm band --iterations 20 --burnin 5 --threads 2 --quiet \
  --out sbt2 2>err2 || bad "sbayesr band on 2 ranks of 2 threads: $(cat err2)"
for r in 2 3; do
  same_files "sbayesr, $r ranks" sb0 "sb$r" .parRes .snpRes .checkpoint
  same_files "sbayesr band, $r ranks" sbb0 "sbb$r" .parRes .snpRes .checkpoint
done
same_files "sbayesr band, 2 ranks of 2 threads" sbb0 sbt2 .parRes .snpRes .checkpoint
on_ranks 2 sbayesr --gwas gwas.ma --ldm ld16 --iterations 10 --burnin 5 --threads 1 --quiet \
  --out sbr
on_ranks 3 sbayesr --gwas gwas.ma --ldm ld16 --iterations 20 --burnin 5 --threads 1 --quiet \
  --resume --out sbr
same_files "sbayesr resumed on another rank count" sb0 sbr .parRes .snpRes .checkpoint

# hydra's scheme (--sync-every K): the columns split among the ranks, effects exchanged every K
# columns. Its chain depends on (ranks, K) only: two runs give the same bytes; it samples the
# same model (h2 near the exact chain's on these 6 iterations is not a test: bench/sync_every.py
# measures that on uk10k); it writes no checkpoint and refuses to resume one.
for r in 2 3; do
  for run in 1 2; do
    on_ranks "$r" bayesr geno.cf --pheno sim.phen --iterations 6 --burnin 2 --threads 1 \
      --sync-every 5 --quiet --out "h$run-$r" 2>"err$r" || bad "--sync-every on $r ranks: $(cat "err$r")"
  done
  same_files "--sync-every 5 on $r ranks, run again" "h1-$r" "h2-$r" .trace.tsv .effects.tsv .summary.tsv
  if [[ -e h1-$r.checkpoint ]]; then bad "--sync-every on $r ranks wrote a checkpoint"; fi
done
if cmp -s h1-2.trace.tsv whole.trace.tsv; then
  bad "--sync-every 5 on 2 ranks gave the exact chain: the columns were not split"
else
  ok "--sync-every 5 on 2 ranks is its own chain, not the exact one"
fi
if on_ranks 2 bayesr geno.cf --pheno sim.phen --iterations 6 --burnin 2 --sync-every 5 --resume \
  --out h1-2 2>messages.txt; then
  bad "--sync-every with --resume exited 0"
elif grep -q "writes no checkpoint and cannot resume" messages.txt; then
  ok "--sync-every refuses --resume"
else
  bad "--sync-every with --resume: $(cat messages.txt)"
fi

# Whole-genome regression: each rank fits a share of the level-0 blocks, gathered before level 1.
for r in 0 2 3; do
  on_ranks "$r" wgr geno.cf --pheno two.phen --covar covar.txt --block-size 20 --threads 1 \
    --quiet --out "w$r" 2>"err$r" || bad "wgr on $r ranks: $(cat "err$r")"
done
for r in 2 3; do
  same_files "wgr, $r ranks" w0 "w$r" _1.loco _2.loco .wgr.tsv
done

# The relationship matrix: the ranks make its bands in rounds, rank 0 writes them. 700 samples
# make 4 bands on 2 ranks and 6 on 3: the lower triangle (text and GCTA's files), and the
# square (float64) of a subset of the variants.
awk 'NR <= 700 {print $1, $2}' sim.fam > first700.txt
for r in 0 2 3; do
  leak_checked_on_2 "$r" grm geno.cf --keep first700.txt --make-rel --make-grm-bin --threads 1 --quiet \
    --out "g$r" 2>"err$r" || bad "grm on $r ranks: $(cat "err$r")"
  on_ranks "$r" grm geno.cf --keep first700.txt --extract extract.txt --make-rel square bin \
    --threads 1 --quiet --out "q$r" 2>"err$r" || bad "grm square on $r ranks: $(cat "err$r")"
done
for r in 2 3; do
  same_files "grm, $r ranks" g0 "g$r" .rel .rel.id .grm.bin .grm.N.bin .grm.id
  same_files "grm square, $r ranks" q0 "q$r" .rel.bin .rel.id
done

# LD: the ranks share the rows of the report (each reads only the columns its rows need), and
# rank 0 writes every row: the windowed table with frequencies, every pair of every chromosome,
# the band, the square.
for r in 0 2 3; do
  leak_checked_on_2 "$r" ld geno.cf --r2 with-freqs --ld-window 30 --ld-window-r2 0 --threads 1 --quiet \
    --out "l$r" 2>"err$r" || bad "ld table on $r ranks: $(cat "err$r")"
  on_ranks "$r" ld sexed.cf --r inter-chr --ld-window-r2 0.001 --digits 17 --threads 1 --quiet \
    --out "li$r" 2>"err$r" || bad "ld inter-chr on $r ranks: $(cat "err$r")"
  on_ranks "$r" ld geno.cf --extract extract.txt --r2 band --ld-window 12 --threads 1 --quiet \
    --out "lb$r" 2>"err$r" || bad "ld band on $r ranks: $(cat "err$r")"
  on_ranks "$r" ld geno.cf --keep keep.txt --r square bin --threads 1 --quiet --out "ls$r" \
    2>"err$r" || bad "ld square on $r ranks: $(cat "err$r")"
done
for r in 2 3; do
  same_files "ld table, $r ranks" l0 "l$r" .ld
  same_files "ld inter-chr, $r ranks" li0 "li$r" .ld
  same_files "ld band, $r ranks" lb0 "lb$r" .ldband .ldband.vars
  same_files "ld square, $r ranks" ls0 "ls$r" .ld.bin
done

# Scores: the ranks take whole segments of the matched columns, their sums gathered and added
# in segment order as one process adds them: two scores, a third of the entries naming A2
# (sign flipped), mean-imputed on a subset of the samples and variance-standardised on all.
awk '{print $2, (NR % 3 ? $5 : $6), NR / 100 - 1, (NR % 7) / 3}' sim.bim > weights.txt
for r in 0 2 3; do
  on_ranks "$r" score geno.cf --score weights.txt 1 2 3 --score-col-nums 3-4 --keep keep.txt \
    --digits 17 --threads 1 --quiet --out "s$r" 2>"err$r" || bad "score on $r ranks: $(cat "err$r")"
  on_ranks "$r" score geno.cf --score weights.txt 1 2 3 variance-standardize \
    --score-col-nums 3-4 --digits 17 --threads 1 --quiet --out "sv$r" 2>"err$r" ||
    bad "score variance-standardize on $r ranks: $(cat "err$r")"
done
for r in 2 3; do
  same_files "score, $r ranks" s0 "s$r" .sscore
  same_files "score variance-standardize, $r ranks" sv0 "sv$r" .sscore
done

# An error on the ranks: every rank ends, non-zero, with the message, and nothing is written.
if on_ranks 2 lasso geno.cf --pheno absent.phen --quiet --out failed 2>messages.txt; then
  bad "a missing phenotype file on 2 ranks exited 0"
elif grep -q "absent.phen: no such file" messages.txt && ! ls failed.* >/dev/null 2>&1; then
  ok "an error on 2 ranks ends the run with its message and no output"
else
  bad "error on 2 ranks: $(cat messages.txt)"
fi
if on_ranks 2 export geno.cf --bed out 2>messages.txt; then
  bad "export on 2 ranks exited 0"
elif grep -q "runs as one process" messages.txt && ! ls out.* >/dev/null 2>&1; then
  ok "a command that does not run on ranks is refused"
else
  bad "export on 2 ranks: $(cat messages.txt)"
fi

# A rank killed mid-run: the other ends within seconds, the run fails, and no result file is
# written (a checkpoint may be: each one is whole, renamed into place by rank 0).
ASAN_OPTIONS=$ranks_asan "$mpiexec" -np 2 -x LSAN_OPTIONS -x ASAN_OPTIONS "$colflow" bayesr \
  geno.cf --pheno sim.phen --iterations 100000 --threads 1 --quiet --out killed \
  2>kill-messages.txt &
launcher=$!
victim=""
for _ in $(seq 100); do
  for pid in $(pgrep -f "out killed" || true); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      victim=$pid
    fi
  done
  [[ -n $victim ]] && break
  sleep 0.1
done
sleep 1
if [[ -z $victim ]]; then
  bad "no rank 1 process to kill"
  kill "$launcher" 2>/dev/null || true
else
  kill -KILL "$victim"
  start=$SECONDS
  status=0
  wait "$launcher" || status=$?
  if ((status != 0 && SECONDS - start <= 20)) && [[ ! -e killed.trace.tsv && ! -e killed.effects.tsv &&
    ! -e killed.summary.tsv ]]; then
    ok "a rank killed mid-run ends the run in $((SECONDS - start)) s (status $status), no result"
  else
    bad "after a rank was killed: status $status after $((SECONDS - start)) s; $(ls killed.* 2>&1)"
  fi
fi

echo "$passed passed, $failed failed"
((failed == 0))
