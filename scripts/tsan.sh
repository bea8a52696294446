#!/usr/bin/env bash
# Builds the engine and analysis tests with ThreadSanitizer (preset "tsan": RelWithDebInfo,
# -fsanitize=thread, -Werror) and runs them against a ThreadSanitizer-instrumented libtbb;
# any report fails the run.
#
#   bash scripts/tsan.sh [--no-build] [--all]
#
#   --no-build   run again what is built
#   --all        also the long checks that the "tsan" test preset leaves out (below)
#
# Why an instrumented libtbb: Debian's libtbb.so is not instrumented, so ThreadSanitizer does
# not see the synchronisation inside it (a task spawned on one thread and run on another, the
# end of graph::wait_for_all) and reports ~1,000 races per test binary on memory that TBB
# correctly hands from thread to thread, in colflow's code as much as in TBB's headers; no
# suppression can remove those without hiding real races too. So this script builds libtbb.so.12
# from Debian's own source package of the installed version (the same code, the same ABI, built
# with -fsanitize=thread) into build/tsan-tbb/lib, and the "tsan" test preset puts it first on
# LD_LIBRARY_PATH. The source comes through apt-get source with a private apt state under
# build/tsan-tbb/apt (deb-src lines for the Debian archive this machine's apt already uses, or
# COLFLOW_DEBIAN_MIRROR); /etc/apt is not touched. libtbbmalloc is not built, so TBB allocates with malloc, which ThreadSanitizer sees.
#
# Run: every test executable except
#   crash_safety_test   kills `colflow` children with SIGKILL at moments timed from an
#                       uninstrumented run and sets file-size limits: process-level crash
#                       safety, nothing shared between threads, and ThreadSanitizer's slowdown
#                       would move every kill moment;
#   ScaleTest.DataFilePastFourGib*   writes and maps a 4.1 GiB data file: ThreadSanitizer
#                       keeps shadow memory for every byte read (several GiB more);
#   fuzz replays        single-threaded file parsing, covered by scripts/test.sh (ASan + UBSan);
#   BayesRTest.SimulatedHeritabilityAndCausalVariantsAreRecovered and
#   BayesRTest.Uk10kHeritabilityAndGeneticValues   statistical checks of long chains (400
#                       and 600 iterations): minutes each under ThreadSanitizer, repeating
#                       the passes and the kernel that the other BayesR tests run;
#   LogisticAssocTest.EqualsPlink2GlmFirthFallbackWithAndWithoutCovariates   4 minutes under
#                       ThreadSanitizer, the same threaded scan as the shorter logistic tests;
#   the comparisons of whole datasets with a peer whose threaded code other tests of the same
#   unit run under ThreadSanitizer too, at several thread counts (SampleBlocksTest's
#   byte-identical commands, the shorter tests of each suite): PcaTest's HapMap3TopFive... and
#   HweScaling... (55 s and 32 s here), StatsTest.EqualsPlink2FreqAndMissing... (36 s),
#   AssocTest.EqualsPlink2Glm... (35 s), PenalizedTest.Uk10kLasso... (20 s),
#   ScoreTest.EqualsPlink2Score (16 s), ExportTest.BedRoundTrips... (13 s),
#   CliTest.EveryNumericOption... (14 s, option parsing alone),
#   and the quality-control suites' comparisons with plink2 and PLINK 1.9 (HardyTest's
#   EqualsPlink2OnEveryDataset..., SexChromosomesEqualPlink2... and XWithoutSelectedMales...,
#   QcFiltersTest.QcEqualsPlink2On..., KingPlink2Test, LdPruneVsPlink2Test, ClumpVsPlinkTest and
#   ClumpWindowTest.MatchesPlink19; 15-40 s each here), and the shorter comparisons with plink2,
#   PLINK 1.9 and GCTA on their own files and settings (GrmPlinkTest, LdVsPlinkTest,
#   PgenExportTest.Plink2..., the stores made from a .pgen, the sex-chromosome, dosage and
#   old-store comparisons of StatsTest, HardyTest, AssocTest, LogisticAssocTest, QcFiltersTest
#   and LdPruneTest; 3-16 s each, 166 s in all), whose passes run here in their suites'
#   thread and depth tests (HardyTest.CountsEqualPlainLoops..., QcFiltersTest.ResultsDoNot...,
#   KingTest, LdPruneTest, ClumpUk10kTest.AssocTablesMatchPlink19AtAnyThreadCount). Each runs in
#   scripts/test.sh under ASan and UBSan; here they would repeat a race check already made, for
#   about 6 minutes of CI.
# (--all runs all of these too.)
# (The package and examples tests are not configured: the preset has COLFLOW_INSTALL=OFF.)
# The ctest filter and the environment are the "tsan" test preset of CMakePresets.json; to
# run one test binary by hand:
#
#   LD_LIBRARY_PATH=$PWD/build/tsan-tbb/lib \
#   TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=50" \
#     build/tsan/tests/column_stream_test
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

targets=(
  # the flow graph and the analyses on it
  column_stream_test stats_test assoc_test logistic_assoc_test pca_test penalized_test
  bayesr_test scale_test score_test ld_test ld_matrix_test grm_test wgr_test
  # quality control: Hardy-Weinberg, the filters, LD pruning, KING's tiles, clumping
  hardy_test qc_filters_test ld_prune_test king_test clump_test gwas_summary_test sbayesr_test
  # the sample blocks' team of threads, and the analyses on it at 1, 2 and 3 threads
  sample_blocks_test
  # parallel preprocessing, simulation and export, concurrent store reads, the CLI on top
  preprocess_test simulate_test store_test cli_test
  # the study inputs (BGEN, VCF and PLINK 2 decoded on the converter's threads)
  bgen_source_test vcf_source_test pgen_source_test
  # staged outputs and cancellation, the stream benchmark
  staged_output_test stream_benchmark_test
  # run by the tests above
  colflow_cli
)

# Test programs not built here (ctest skips their *_NOT_BUILT placeholders): crash_safety_test
# kills a child process mid-write; vector_path_test compares the command's outputs across
# vector paths; the rest test code that starts no thread of its own (codecs, kernels, store
# formats and files, selections, writers), whose parallel callers are the suites above.
untargeted=(
  crash_safety_test vector_path_test
  codec_test genotype_test genotype_decode_test codec_tools_test column_blocks_test
  logistic_sums_test
  store_golden_test store_malformed_test verify_test dense_reader_test dosage_store_test
  dosage_plink2_test selection_test sex_chromosomes_test analysis_output_test
  hardy_weinberg_test chain_diagnostics_test general_number_test
)

# Every test program of tests/CMakeLists.txt is either built here or left out above, so that a
# new suite is never skipped unnoticed.
check_targets_cover_tests() {
  local name missing=()
  for name in $(sed -n 's/^ *colflow_add_test(\([a-z0-9_]*\) .*/\1/p' tests/CMakeLists.txt); do
    [[ " ${targets[*]} ${untargeted[*]} " == *" $name "* ]] || missing+=("$name")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "tsan: tests/CMakeLists.txt has test programs that scripts/tsan.sh neither builds nor leaves out: ${missing[*]}" >&2
    exit 1
  fi
}

# The Debian archive that apt installs this release's packages from: the URI of the first entry
# (deb822 .sources stanza or one-line sources.list) whose suites include CODENAME.
debian_mirror() {
  local codename=$1 files=()
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do [[ -f $f ]] && files+=("$f"); done
  [[ ${#files[@]} -gt 0 ]] || return 0
  awk -v c="$codename" '
    /^URIs:/ { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) { print uri; exit } }
    /^deb / { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i + 1) == c) { print $i; exit } break } }
  ' "${files[@]}"
}

# libtbb.so.12 from Debian's source of the installed libtbb12, built with -fsanitize=thread.
build_instrumented_tbb() {
  local dir=$PWD/build/tsan-tbb source version
  read -r source version < <(dpkg-query -W -f='${source:Package} ${source:Version}\n' libtbb12)
  if [[ -f $dir/lib/libtbb.so.12 && $(cat "$dir/lib/VERSION" 2>/dev/null) == "$version" ]]; then
    echo "tsan: instrumented libtbb $version is in $dir/lib"
    return
  fi
  echo "tsan: building libtbb $version with ThreadSanitizer from Debian's source package $source"
  rm -rf "$dir"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/parts"
  local mirror codename
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  mirror=${COLFLOW_DEBIAN_MIRROR:-$(debian_mirror "$codename")}
  if [[ -z $mirror ]]; then
    echo "tsan: no Debian archive for $codename in the apt sources; set COLFLOW_DEBIAN_MIRROR" >&2
    exit 1
  fi
  printf 'deb-src %s %s main\ndeb-src %s %s-updates main\n' \
    "$mirror" "$codename" "$mirror" "$codename" > "$dir/apt/sources.list"
  local apt=(apt-get -q -o Dir::Etc::SourceList="$dir/apt/sources.list"
             -o Dir::Etc::SourceParts="$dir/apt/parts" -o Dir::State::Lists="$dir/apt/lists"
             -o Dir::Cache="$dir/apt/cache" -o APT::Sandbox::User=root)
  "${apt[@]}" update > "$dir/apt.log"
  (cd "$dir" && "${apt[@]}" source --download-only "$source=$version" >> "$dir/apt.log")
  # apt checked the files against the signed Sources index; dpkg-source cannot check the
  # uploader's own signature without the debian-keyring package, and says so in the log.
  dpkg-source -x "$dir"/"${source}_${version#*:}.dsc" "$dir/src" >> "$dir/apt.log" 2>&1
  # TBB_STRICT=OFF: GCC warns that atomic_thread_fence is not supported with -fsanitize=thread
  # (-Wtsan). ThreadSanitizer ignores a standalone fence, which can only add reports, never
  # hide one.
  cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTBB_SANITIZE=thread -DTBB_STRICT=OFF -DTBB_TEST=OFF -DTBBMALLOC_BUILD=OFF \
    -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON -DTBB_ENABLE_IPO=OFF > "$dir/configure.log"
  cmake --build "$dir/build" --target tbb -j"$(nproc)" > "$dir/build.log"
  mkdir -p "$dir/lib"
  cp -P "$dir"/build/*/libtbb.so.12* "$dir/lib/"
  echo "$version" > "$dir/lib/VERSION"
  rm -rf "$dir/apt" "$dir/build"
}

build=1 all=0
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    --all) all=1 ;;
    *) echo "usage: $0 [--no-build] [--all]" >&2; exit 2 ;;
  esac
done

check_targets_cover_tests
start=$SECONDS
if [[ $build -eq 1 ]]; then
  bash scripts/install-deps.sh
  bash scripts/python-env.sh  # the penalised-regression tests compare with scikit-learn
  build_instrumented_tbb
  echo "tsan: configure and build (preset tsan, $(nproc) jobs)"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j"$(nproc)" --target "${targets[@]}"
fi
[[ -f build/tsan-tbb/lib/libtbb.so.12 ]] || { echo "tsan: no instrumented libtbb: run without --no-build" >&2; exit 1; }
built=$SECONDS
echo "tsan: run the tests (ctest --preset tsan)"
status=0
ctest_args=(--preset tsan)
# The preset's name filter without the three long checks.
[[ $all -eq 0 ]] ||
  ctest_args+=(-E '_NOT_BUILT$|^GenotypeTest\.SparseSums\.|^GenotypeTest\.Counts\.|^CrashSafety|^ScaleTest\.DataFilePastFourGib')
ctest "${ctest_args[@]}" || status=$?
echo "tsan: build $((built - start)) s, tests $((SECONDS - built)) s, exit $status"
exit $status
