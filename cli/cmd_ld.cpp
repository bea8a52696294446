// colflow ld: LD between variants, PLINK 1.9's --r and --r2 with their modifiers; and LD
// pruning, plink2's --indep-pairwise.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis_setup.hpp"
#include "colflow/analysis/ld.hpp"
#include "colflow/analysis/ld_matrix.hpp"
#include "colflow/analysis/ld_prune.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

// Applies PLINK 1.9's modifiers of --r/--r2 to `o`; `flag` names the flag in errors.
void apply_modifiers(const std::string& flag, const std::vector<std::string>& modifiers,
                     ld_options& o) {
  bool shaped = false;
  for (const std::string& m : modifiers) {
    if (m.empty()) continue;  // the flag alone
    const auto shape = [&](ld_shape s) {
      if (shaped)
        throw error(errc::invalid_argument,
                    flag + ": give one of square, square0, triangle and band, not several");
      shaped = true;
      o.shape = s;
    };
    if (m == "square")
      shape(ld_shape::square);
    else if (m == "square0")
      shape(ld_shape::square0);
    else if (m == "triangle")
      shape(ld_shape::triangle);
    else if (m == "band")
      shape(ld_shape::band);
    else if (m == "inter-chr")
      o.inter_chr = true;
    else if (m == "bin")
      o.encoding = ld_encoding::bin;
    else if (m == "bin4")
      o.encoding = ld_encoding::bin4;
    else if (m == "with-freqs")
      o.with_freqs = true;
    else if (m == "yes-really" || m == "spaces")
      ;  // PLINK's confirmation of a large inter-chr report; tabs are what colflow writes
    else
      throw error(errc::invalid_argument,
                  flag + ": unknown modifier '" + m +
                      "' (colflow takes square, square0, triangle, band, inter-chr, bin, bin4 and "
                      "with-freqs; D' is not computed)");
  }
  // PLINK 1.9: a binary report without a shape is the square matrix.
  if (o.encoding != ld_encoding::text && !shaped) o.shape = ld_shape::square;
}

// A whole number of the --indep-pairwise arguments; `what` names it in errors.
std::int64_t whole_number(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw error(errc::invalid_argument,
                "--indep-pairwise: the " + what + " must be a whole number, not '" + text + "'");
  return v;
}

// plink2's arguments: <window>['kb'] [step] <r2>, "kb" glued to the window or apart; the step
// is 1 when left out.
ld_prune_options prune_options(std::vector<std::string> args) {
  const std::string usage = " (give --indep-pairwise WINDOW[kb] [STEP] R2)";
  if (args.size() >= 2 && args[1] == "kb") {
    args[0] += "kb";
    args.erase(args.begin() + 1);
  }
  if (args.size() < 2 || args.size() > 3)
    throw error(errc::invalid_argument,
                "--indep-pairwise: " + std::to_string(args.size()) + " arguments" + usage);
  ld_prune_options o;
  std::string window = args[0];
  if (window.size() > 2 && window.ends_with("kb")) {
    window.resize(window.size() - 2);
    double kb = 0;
    const auto [end, ec] = std::from_chars(window.data(), window.data() + window.size(), kb);
    if (ec != std::errc{} || end != window.data() + window.size() || !std::isfinite(kb) || kb < 0)
      throw error(
          errc::invalid_argument,
          "--indep-pairwise: the window must be a count of variants or Nkb, not '" + args[0] + "'");
    // As plink2: the window in base pairs, rounded down (0.0015kb is 1 bp, refused).
    o.window_bp = static_cast<std::int64_t>(std::floor(kb * 1000 * (1 + 1e-12)));
    if (o.window_bp < 2)
      throw error(errc::invalid_argument,
                  "--indep-pairwise: the window must be at least 2 bp, not '" + args[0] + "'");
  } else {
    o.window = whole_number(window, "window");
  }
  o.step = args.size() == 3 ? whole_number(args[1], "step") : 1;
  const std::string& r2 = args.back();
  const auto [end, ec] = std::from_chars(r2.data(), r2.data() + r2.size(), o.r2);
  if (ec != std::errc{} || end != r2.data() + r2.size())
    throw error(errc::invalid_argument,
                "--indep-pairwise: the r^2 threshold must be a number, not '" + r2 + "'");
  check_ld_prune_options(o);
  return o;
}

// --indep-pairwise: the two lists.
int run_prune(const analysis_flags& common, const std::vector<std::string>& args,
              const std::string& out) {
  const ld_prune_options po = prune_options(args);  // before the store is opened
  analysis_run run("ld", common);
  run.map_store_pages();
  const ld_prune_result result = ld_prune(run.source(), run.selected(), po, run.options());
  if (!is_writer()) return 0;
  const auto files = write_ld_prune(run.source(), run.selected(), result, out);
  run.log("wrote " + files[0].string() + " (" + std::to_string(result.kept.size()) +
          " variants) and " + files[1].string() + " (" + std::to_string(result.removed.size()) +
          " pruned)");
  return 0;
}

// --make-ldm: the LD store, and GCTB's files with --ldm-gctb.
int run_make_ldm(const analysis_flags& common, const ldm_options& lo, const std::string& out) {
  check_ldm_options(lo);  // before the store is opened
  analysis_run run("ld", common);
  const ldm_summary sum = make_ld_matrix(run.source(), run.selected(), lo, out, run.options());
  if (!is_writer()) return 0;
  run.log("wrote the " + std::string(ldm_kind_name(lo.kind)) + " LD store " + out + " (" +
          std::to_string(sum.variants) + " variants, " + std::to_string(sum.values) + " values, " +
          std::to_string(sum.store_bytes) + " bytes)");
  for (const auto& file : sum.gctb_files) run.log("wrote " + file.string());
  return 0;
}

}  // namespace

command add_ld(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out;
    std::vector<std::string> r, r2, prune;
    std::int64_t window = 10;
    double window_kb = 1000, window_cm = 0, window_r2 = 0.2;
    std::string make_ldm;
    bool ldm_gctb = false, force = false;
    double chisq = 10, min_r2 = 0;
    std::string codec = "zstd";
    int level = 0;
    bool shuffle = false;
    unsigned value_bits = 32;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  auto* r = app.add_option("--r", o->r,
                           "Report r, with PLINK 1.9's modifiers: square | square0 | triangle,\n"
                           "inter-chr, bin | bin4, with-freqs")
                ->expected(0, -1);
  auto* r2 =
      app.add_option("--r2", o->r2, "Report r squared, with the modifiers of --r")->expected(0, -1);
  r->excludes(r2);
  auto* prune =
      app.add_option("--indep-pairwise", o->prune,
                     "WINDOW[kb] [STEP] R2: LD pruning as plink2 --indep-pairwise, writing\n"
                     "PREFIX.prune.in and PREFIX.prune.out")
          ->expected(2, 4);
  prune->excludes(r)->excludes(r2);
  auto* make_ldm =
      app.add_option("--make-ldm", o->make_ldm,
                     "full | band | sparse: write the LD matrix (r) as the LD store PREFIX, as\n"
                     "GCTB's --make-full-ldm, --make-band-ldm, --make-sparse-ldm")
          ->check(CLI::IsMember({"full", "band", "sparse"}));
  make_ldm->excludes(r)->excludes(r2)->excludes(prune);
  app.add_flag("--ldm-gctb", o->ldm_gctb,
               "With --make-ldm: also GCTB's PREFIX.ldm.KIND.info and PREFIX.ldm.KIND.bin")
      ->needs(make_ldm);
  auto* chisq =
      app.add_option("--chisq", o->chisq,
                     "--make-ldm sparse: keep pairs with r2 x N at least this (default 10, GCTB's)")
          ->needs(make_ldm);
  auto* min_r2 =
      app.add_option("--ld-min-r2", o->min_r2,
                     "--make-ldm sparse: keep pairs with r2 at least this instead of --chisq")
          ->check(number_range(0, 1))
          ->needs(make_ldm);
  app.add_flag("--force", o->force, "--make-ldm: replace an existing LD store")->needs(make_ldm);
  app.add_option("--codec", o->codec, "--make-ldm: the codec of the LD store (default zstd)")
      ->check(CLI::IsMember({"none", "zlib", "lz4", "zstd"}))
      ->needs(make_ldm);
  app.add_option("--level", o->level, "--make-ldm: the codec's level (default: the codec's)")
      ->needs(make_ldm);
  app.add_flag("--shuffle", o->shuffle,
               "--make-ldm: byte-shuffle the float32 values before the codec")
      ->needs(make_ldm);
  app.add_option("--ldm-bits", o->value_bits,
                 "--make-ldm: 32 (default) keeps every r as float32; 16 rounds each to a\n"
                 "multiple of 2^-14 (at most 3.1e-5 off): about half the bytes, and SBayesR\n"
                 "streams half as much")
      ->check(CLI::IsMember({16U, 32U}))
      ->needs(make_ldm);
  auto* window =
      app.add_option("--ld-window", o->window,
                     "Table and band: pairs at most this many variants apart, minus one (default\n"
                     "10; a band given only --ld-window-kb or --ld-window-cm has no count limit)")
          ->check(positive_integer(std::numeric_limits<std::int64_t>::max()));
  auto* kb = app.add_option("--ld-window-kb", o->window_kb,
                            "Table and band: pairs at most this many kb apart (default 1000)")
                 ->check(positive_number());
  auto* cm = app.add_option("--ld-window-cm", o->window_cm,
                            "Table and band: pairs at most this many cM apart on the store's\n"
                            "genetic map (the .bim's third column), in place of --ld-window-kb")
                 ->check(positive_number())
                 ->excludes(kb);
  app.add_option("--ld-window-r2", o->window_r2,
                 "Table: pairs with r squared at least this (default 0.2; 0 lists every pair)")
      ->check(number_range(0, 1));
  app.add_option("--out", o->out,
                 "Output prefix: PREFIX.ld or PREFIX.ld.bin; PREFIX.prune.in/.out; the LD store\n"
                 "PREFIX (a directory) with --make-ldm")
      ->check(output_path())
      ->required();
  app.footer(
      "As plink --r/--r2 (PLINK 1.9): r is the correlation of the A1 dosages over the\n"
      "selected samples called in both variants (r's sign follows the store's A1; PLINK 1.9\n"
      "makes the minor allele A1 unless --keep-allele-order).\n"
      "Table (default): PREFIX.ld with CHR_A BP_A SNP_A CHR_B BP_B SNP_B R2 (or R), pairs on\n"
      "one chromosome at most --ld-window - 1 variants and --ld-window-kb kb (or\n"
      "--ld-window-cm cM) apart with\n"
      "r2 >= --ld-window-r2; inter-chr: every pair, filtered by --ld-window-r2 alone;\n"
      "with-freqs adds MAF_A and MAF_B, the A1 frequencies.\n"
      "square / square0 / triangle: the matrix of every pair of selected variants, PREFIX.ld\n"
      "tab-separated (square0: upper triangle 0; triangle: lower triangle only), or\n"
      "PREFIX.ld.bin with bin (float64) or bin4 (float32), row by row.\n"
      "band (colflow's): every pair in the table's window, no threshold, as the banded\n"
      "matrix PREFIX.ldband (docs/FORMAT.md; float32 with bin4) and its variants\n"
      "PREFIX.ldband.vars.\n"
      "Dosage stores: the same over the decoded dosages.\n"
      "--indep-pairwise W[kb] [S] R2 (plink2's): PREFIX.prune.in, the variants kept, and\n"
      "PREFIX.prune.out, those pruned: in windows of W variants moved by S (default 1), or of\n"
      "W kb (S must be 1), of each pair with r2 > R2 over the founders' calls the variant of\n"
      "lower minor allele frequency goes (docs/ANALYSES.md). Genotype stores only.\n"
      "--make-ldm full|band|sparse (GCTB's LD matrices for SBayesR): the LD store PREFIX\n"
      "(docs/FORMAT.md §13), one compressed float32 column of r per variant; full: every\n"
      "pair; band: the pairs within --ld-window and --ld-window-kb (or --ld-window-cm), the\n"
      "distance alone when no --ld-window is given (GCTB's --wind W Mb, W/2 each side, is\n"
      "about --ld-window-kb 500W); sparse:\n"
      "every pair with r2 x N >= --chisq (or r2 >= --ld-min-r2). --ldm-gctb also writes\n"
      "GCTB's PREFIX.ldm.KIND.info/.bin, which gctb --ldm reads.");
  return [o, r, r2, prune, make_ldm, chisq, min_r2, window, kb, cm] {
    if (prune->count() > 0) return run_prune(o->common, o->prune, o->out);
    if (make_ldm->count() > 0) {
      ldm_options lo;
      lo.kind = o->make_ldm == "full"   ? ldm_kind::full
                : o->make_ldm == "band" ? ldm_kind::band
                                        : ldm_kind::sparse;
      // A band by distance alone, as GCTB's --make-band-ldm --wind makes it, unless a count is
      // given too; full and sparse matrices have no window, and say so rather than ignore one.
      const bool by_distance = kb->count() > 0 || cm->count() > 0;
      if (lo.kind != ldm_kind::band && (window->count() > 0 || by_distance))
        throw error(errc::invalid_argument, std::string(window->count() > 0 ? "--ld-window"
                                                        : kb->count() > 0   ? "--ld-window-kb"
                                                                            : "--ld-window-cm") +
                                                ": applies to --make-ldm band, not " + o->make_ldm);
      lo.window = window->count() > 0 || !by_distance ? o->window
                                                      : std::numeric_limits<std::int64_t>::max();
      lo.window_kb = o->window_kb;
      lo.window_cm = o->window_cm;
      if (lo.kind != ldm_kind::sparse && (chisq->count() > 0 || min_r2->count() > 0))
        throw error(errc::invalid_argument,
                    std::string(chisq->count() > 0 ? "--chisq" : "--ld-min-r2") +
                        ": applies to --make-ldm sparse, not " + o->make_ldm);
      if (chisq->count() > 0 && min_r2->count() > 0)
        throw error(errc::invalid_argument, "--chisq: give --chisq or --ld-min-r2, not both");
      lo.chisq = o->chisq;
      if (min_r2->count() > 0) lo.min_r2 = o->min_r2;
      lo.gctb = o->ldm_gctb;
      lo.overwrite = o->force;
      lo.encoding.codec = *codec_from_name(o->codec);
      lo.encoding.level = o->level != 0 ? o->level : traits_of(lo.encoding.codec).default_level;
      lo.encoding.shuffle = o->shuffle;
      lo.value_bits = o->value_bits;
      return run_make_ldm(o->common, lo, o->out);
    }
    if (r->count() == 0 && r2->count() == 0)
      throw error(errc::invalid_argument,
                  "ld: give --r or --r2 (with modifiers, as plink), --indep-pairwise or "
                  "--make-ldm");
    ld_options lo;
    lo.statistic = r->count() > 0 ? ld_statistic::r : ld_statistic::r2;
    apply_modifiers(r->count() > 0 ? "--r" : "--r2", r->count() > 0 ? o->r : o->r2, lo);
    lo.window = o->window;
    lo.window_kb = o->window_kb;
    lo.window_cm = o->window_cm;
    lo.min_r2 = o->window_r2;
    check_ld_options(lo);  // before the store is opened
    analysis_run run("ld", o->common);
    const ld_result result = ld(run.source(), run.selected(), lo, run.options());
    if (!is_writer()) return 0;
    const auto file = write_ld(run.source(), run.selected(), result, o->out, o->common.digits);
    run.log("wrote " + file.string() +
            (lo.shape == ld_shape::table ? " (" + std::to_string(result.pairs.size()) + " pairs)"
                                         : ""));
    return 0;
  };
}

}  // namespace colflow::cli
