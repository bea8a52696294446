// colflow clump: association results turned into independent loci, PLINK 1.9's --clump.
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "analysis_setup.hpp"
#include "colflow/analysis/clump.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

clump_format format_named(const std::string& name) {
  if (name == "clumped") return clump_format::clumped;
  if (name == "clumps") return clump_format::clumps;
  throw error(errc::invalid_argument,
              "--clump-format: '" + name + "' is not a format (clumped or clumps)");
}

// "N clumps formed from M top variants", and PLINK 1.9's warnings for absent top variants.
void log_result(analysis_run& run, const clump_result& r) {
  for (std::size_t k = 0; k < r.absent.size(); ++k) {
    if (k == 3) {
      run.log(std::to_string(r.absent.size() - 3) + " more top variants are absent");
      break;
    }
    run.log("warning: '" + r.absent[k].id +
            "' is missing from the store (or the selection), and is a top variant");
  }
  if (r.top_variants == 0) {
    run.log("no variant with P <= --clump-p1 among the selected variants: nothing written");
    return;
  }
  run.log(std::to_string(r.clumps.size()) + (r.clumps.size() == 1 ? " clump" : " clumps") +
          " formed from " + std::to_string(r.top_variants) + " top variant" +
          (r.top_variants == 1 ? "" : "s") + " (" + std::to_string(r.founders) + " founders)");
}

}  // namespace

command add_clump(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::string out, format = "clumped";
    std::vector<std::string> tables, id_fields, p_fields;
    clump_options clump;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--clump", o->tables,
                 "Tables of P-values, by their header: colflow assoc and plink2 --glm (ID, P),\n"
                 "PLINK 1.9's .assoc/.qassoc/.assoc.linear (SNP, P), regenie (ID, LOG10P)")
      ->required()
      ->expected(1, -1);
  app.add_option("--clump-p1", o->clump.p1, "Top variants: P <= this (default 1e-4)");
  app.add_option("--clump-p2", o->clump.p2, "Clumped variants listed: P < this (default 0.01)");
  app.add_option("--clump-r2", o->clump.r2, "Clumped variants: r2 > this (default 0.5)");
  app.add_option("--clump-kb", o->clump.kb,
                 "Clumped variants: less than floor(this x 1000) bp away (default 250)");
  app.add_option("--clump-field", o->p_fields,
                 "Names of the P column, in order of precedence (default P, LOG10P, LOG10_P)")
      ->expected(1, -1);
  app.add_option("--clump-snp-field", o->id_fields,
                 "Names of the variant ID column, in order of precedence (default SNP, ID)")
      ->expected(1, -1);
  app.add_flag("--clump-allow-overlap", o->clump.allow_overlap,
               "Let a variant join several clumps (an index variant still needs to be unclumped)");
  app.add_option("--clump-format", o->format,
                 "clumped: PLINK 1.9's PREFIX.clumped (default); clumps: plink2's PREFIX.clumps");
  app.add_option("--out", o->out, "Output prefix: PREFIX.clumped or PREFIX.clumps")
      ->check(output_path())
      ->required();
  app.footer(
      "As plink --clump (PLINK 1.9): variants with P <= --clump-p1, by increasing P, become\n"
      "index variants; each takes the variants of the tables on its chromosome less than\n"
      "--clump-kb kb away, not already in a clump, whose r2 with it is above --clump-r2.\n"
      "r2 is that of the haplotype frequencies estimated (PLINK 1.9's two-locus EM) from\n"
      "the genotypes of the selected founders called in both variants, not colflow ld's\n"
      "genotypic r2. PREFIX.clumped is PLINK 1.9's, byte for byte: CHR F SNP BP P TOTAL NSIG\n"
      "S05 S01 S001 S0001 SP2 (the variants listed with P < --clump-p2, NONE when none).\n"
      "Several tables: F is the table (1-based) of each entry. Genotype stores only.\n"
      "P of NA is skipped; LOG10P (regenie) and LOG10_P (plink2) are -log10(P).");
  return [o] {
    check_clump_options(o->clump);  // before the store is opened
    const clump_format format = format_named(o->format);
    p_value_table_options fields;
    if (!o->id_fields.empty()) fields.id_fields = o->id_fields;
    if (!o->p_fields.empty()) fields.p_fields = o->p_fields;
    // The tables are read on a thread of their own while the store is opened and its columns
    // listed: two serial steps of the same length that need nothing of each other. A table's
    // error comes first, as when the tables were read before the store was opened.
    auto reading = std::async(std::launch::async, [&] {
      std::vector<p_value_table> read;
      for (const std::string& t : o->tables) read.push_back(read_p_value_table(t, fields));
      return read;
    });
    std::optional<analysis_run> opened;
    try {
      opened.emplace("clump", o->common);
      (void)opened->source().columns();
    } catch (...) {
      reading.get();
      throw;
    }
    const std::vector<p_value_table> tables = reading.get();
    analysis_run& run = *opened;
    for (const p_value_table& t : tables)
      run.log(t.path.string() + ": " + std::to_string(t.entries.size()) + " P-values (" +
              t.id_field + ", " + t.p_field + ")" +
              (t.not_available ? ", " + std::to_string(t.not_available) + " NA skipped" : ""));
    const clump_result result =
        clump(run.source(), run.selected(), tables, o->clump, run.options());
    if (!is_writer()) return 0;
    log_result(run, result);
    const auto file =
        write_clump(run.source(), run.selected(), result, o->out, format, o->common.digits);
    if (!file.empty()) run.log("wrote " + file.string());
    return 0;
  };
}

}  // namespace colflow::cli
