// colflow grm: the genomic relationship matrix, as PLINK 2 --make-rel and PLINK 1.9
// --make-grm-bin write it.
#include <algorithm>
#include <optional>

#include "analysis_setup.hpp"
#include "colflow/analysis/grm.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "memory_usage.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

bool has(const std::vector<std::string>& words, const char* word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// The one word of `choices` among `words`, or `fallback`; two of them is an error.
std::string pick(const std::vector<std::string>& words, std::vector<std::string> choices,
                 std::string fallback, const char* option) {
  std::string found;
  for (const std::string& c : choices)
    if (has(words, c.c_str())) {
      if (!found.empty())
        throw error(errc::invalid_argument,
                    std::string(option) + ": " + found + " and " + c + " exclude each other");
      found = c;
    }
  return found.empty() ? fallback : found;
}

}  // namespace

command add_grm(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::vector<std::string> make_rel, make_grm_bin;
    CLI::Option* rel_option = nullptr;
    CLI::Option* gcta_option = nullptr;
    std::string out;
    std::uint64_t memory_mib = 0;
    std::string precision = "auto";
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  o->rel_option =
      app.add_option("--make-rel", o->make_rel,
                     "PLINK 2's matrix (the default output): modifiers cov, meanimpute, a shape\n"
                     "(triangle: the default of text; square: of bin and bin4; square0) and a\n"
                     "form (text: PREFIX.rel; bin: float64, bin4: float32, PREFIX.rel.bin);\n"
                     "sample IDs in PREFIX.rel.id")
          ->expected(0, 4)
          ->check(one_of({"cov", "meanimpute", "square", "square0", "triangle", "bin", "bin4"}));
  o->gcta_option =
      app.add_option("--make-grm-bin", o->make_grm_bin,
                     "PLINK 1.9's (GCTA's) binary GRM: PREFIX.grm.bin, PREFIX.grm.N.bin,\n"
                     "PREFIX.grm.id; modifiers cov, meanimpute")
          ->expected(0, 2)
          ->check(one_of({"cov", "meanimpute"}));
  app.add_option("--out", o->out, "Output prefix")->check(output_path())->required();
  app.add_option("--memory", o->memory_mib,
                 "MiB the matrix may use (default: half the available memory, as PLINK\n"
                 "reserves); a matrix larger than that is computed in bands of rows, one pass\n"
                 "each, and a run that cannot fit even one band is refused")
      ->check(integer_range(1, std::uint64_t{1} << 40));
  app.add_option("--precision", o->precision,
                 "Arithmetic of the products: double (binary64, as PLINK), single (binary32\n"
                 "values, each run of 128 variants summed in binary32, then in binary64: about\n"
                 "twice as fast), or auto (the default: single when every file written holds\n"
                 "binary32, --make-grm-bin and --make-rel bin4; double otherwise)")
      ->check(one_of({"auto", "double", "single"}));
  app.footer(
      "Entry (i, j): the sum over autosomal variants of z_i z_j, z = (x - 2p) / sqrt(2p(1-p))\n"
      "(cov: x - 2p), missing calls 0, divided by the variants where both samples have a call\n"
      "(meanimpute: by all of them); p over the selected samples. Both options may be given at\n"
      "once: one computation, both sets of files. Put STORE before the options.");
  return [o] {
    const bool rel = o->rel_option->count() > 0 || o->gcta_option->count() == 0;
    const bool gcta = o->gcta_option->count() > 0;
    grm_options g;
    grm_outputs outputs;
    outputs.rel = rel;
    outputs.gcta = gcta;
    const auto modifiers = [&](const std::vector<std::string>& words) {
      return std::pair(has(words, "cov"), has(words, "meanimpute"));
    };
    const auto rel_mods = modifiers(o->make_rel), gcta_mods = modifiers(o->make_grm_bin);
    if (rel && gcta && rel_mods != gcta_mods)
      throw error(errc::invalid_argument,
                  "--make-rel and --make-grm-bin: give cov and meanimpute to both or neither (one "
                  "matrix is computed for both)");
    const auto mods = gcta ? gcta_mods : rel_mods;
    g.scaling = mods.first ? grm_scaling::centered : grm_scaling::standardized;
    g.missing = mods.second ? grm_missing::mean_impute : grm_missing::pairwise;
    if (rel) {
      const std::string form = pick(o->make_rel, {"bin", "bin4"}, "text", "--make-rel");
      outputs.form = form == "bin"    ? rel_form::bin
                     : form == "bin4" ? rel_form::bin4
                                      : rel_form::text;
      const std::string shape = pick(o->make_rel, {"triangle", "square", "square0"},
                                     form == "text" ? "triangle" : "square", "--make-rel");
      outputs.shape = shape == "triangle" ? rel_shape::triangle
                      : shape == "square" ? rel_shape::square
                                          : rel_shape::square0;
    }
    g.full_rows = outputs.needs_full_rows();
    const bool binary32_only = (!rel || outputs.form == rel_form::bin4);
    g.precision = o->precision == "single" || (o->precision == "auto" && binary32_only)
                      ? grm_precision::single
                      : grm_precision::double_;
    g.memory_limit = o->memory_mib != 0 ? o->memory_mib << 20 : available_memory() / 2;

    analysis_run run("grm", o->common);
    const store& s = run.source();
    const grm_plan plan = plan_grm(s, run.selected(), g, run.options());
    run.log(std::to_string(plan.samples) + " x " + std::to_string(plan.samples) + " matrix from " +
            std::to_string(plan.variants) + " variants" +
            (plan.non_autosomal != 0
                 ? " (" + std::to_string(plan.non_autosomal) + " on X, Y, MT left out)"
                 : std::string()) +
            "; " + (g.precision == grm_precision::single ? "binary32" : "binary64") +
            " products; memory " + human_bytes(static_cast<double>(plan.total_bytes)) + " (" +
            std::to_string(plan.bands) + (plan.bands == 1 ? " band" : " bands") +
            (plan.processes > 1 ? " on " + std::to_string(plan.processes) + " ranks" : "") +
            " of " + std::to_string(plan.band_rows) +
            " rows: " + human_bytes(static_cast<double>(plan.band_bytes)) + "; decoded variants " +
            human_bytes(static_cast<double>(plan.block_bytes)) + "; stream buffers " +
            human_bytes(static_cast<double>(plan.stream_bytes)) + ")" +
            (g.memory_limit != 0 ? ", limit " + human_bytes(static_cast<double>(g.memory_limit))
                                 : std::string()));
    // On ranks every rank receives every band; rank 0 alone writes them.
    std::optional<grm_writer> writer;
    if (is_writer()) writer.emplace(s, run.selected(), o->out, outputs, o->common.digits);
    colflow::grm(s, run.selected(), g, run.options(), [&](const grm_band& band) {
      if (writer) writer->write(band);
    });
    if (!writer) return 0;
    const grm_files files = writer->commit();
    std::string line = "wrote";
    for (std::size_t i = 0; i < files.paths.size(); ++i)
      line += (i == 0 ? " " : ", ") + files.paths[i].string();
    run.log(line);
    return 0;
  };
}

}  // namespace colflow::cli
