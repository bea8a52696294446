// colflow score: linear (polygenic) scores of the samples, as plink2 --score.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis_setup.hpp"
#include "colflow/analysis/score.hpp"
#include "colflow/error.hpp"
#include "commands.hpp"
#include "processes.hpp"
#include "validators.hpp"

namespace colflow::cli {
namespace {

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::size_t column_number(const std::string& s, const std::string& option) {
  if (!is_number(s) || s.size() > 9 || std::stoul(s) == 0)
    throw error(errc::invalid_argument,
                option + ": '" + s + "' is not a column number (1, 2, ...)");
  return std::stoul(s);
}

// --score-col-nums: numbers and ranges, "3", "3-5", "3,5-7" (or separate arguments).
std::vector<std::size_t> column_numbers(const std::vector<std::string>& args) {
  std::vector<std::size_t> out;
  for (const std::string& arg : args) {
    std::size_t start = 0;
    while (start <= arg.size()) {
      const std::size_t comma = std::min(arg.find(',', start), arg.size());
      const std::string part = arg.substr(start, comma - start);
      const std::size_t dash = part.find('-');
      if (dash == std::string::npos) {
        out.push_back(column_number(part, "--score-col-nums"));
      } else {
        const std::size_t a = column_number(part.substr(0, dash), "--score-col-nums"),
                          b = column_number(part.substr(dash + 1), "--score-col-nums");
        if (b < a)
          throw error(errc::invalid_argument, "--score-col-nums: the range " + part + " is empty");
        for (std::size_t c = a; c <= b; ++c) out.push_back(c);
      }
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace

command add_score(CLI::App& app) {
  struct options {
    analysis_flags common;
    std::vector<std::string> score, col_nums;
    std::string out;
  };
  auto o = std::make_shared<options>();
  add_analysis_flags(app, o->common);
  app.add_option("--score", o->score,
                 "FILE [ID_COL [ALLELE_COL [SCORE_COL...]]] [MODIFIERS]: the score file and,\n"
                 "as plink2, the 1-based columns of the variant ID (1), the allele (2) and the\n"
                 "weight (3); modifiers header, header-read, no-mean-imputation, center,\n"
                 "variance-standardize, cols=SETS")
      ->required()
      ->expected(1, -1);
  app.add_option("--score-col-nums", o->col_nums,
                 "Weight columns, several scores in one pass: 3-5 or 3,5,7 (replaces SCORE_COL)")
      ->expected(1, -1);
  app.add_option("--out", o->out, "Output prefix: PREFIX.sscore")->check(output_path())->required();
  app.footer(
      "A sample's score is the sum over the file's variants found in the store of weight x\n"
      "dosage of the named allele: the A1 dosage, or 2 minus it when the allele is A2.\n"
      "Entries whose ID the store lacks, or whose allele is neither A1 nor A2, are skipped\n"
      "and counted. Missing calls add 2 x the named allele's frequency among the selected\n"
      "samples (no-mean-imputation: nothing, and DENOM drops their two alleles); center\n"
      "subtracts 2f from every dosage and variance-standardize also divides by\n"
      "sqrt(2f(1-f)), a missing call then adding 0.\n"
      "PREFIX.sscore: #FID IID ALLELE_CT NAMED_ALLELE_DOSAGE_SUM SCORE1_AVG by default;\n"
      "cols= sets (maybefid, fid, nallele, denom, dosagesum, scoreavgs, scoresums), all\n"
      "named or all +/- changes. _AVG = _SUM / DENOM, DENOM = 2 x variants (ALLELE_CT with\n"
      "no-mean-imputation).\n"
      "Besides plink2's files, colflow bayesr .effects.tsv (BETA_PER_UNIT), lasso/ridge/enet\n"
      ".coef.tsv (BETA_PER_UNIT, a score per LAMBDA) and PGS Catalog scoring files are read\n"
      "by their header. Scores carry no intercept.");
  return [o] {
    score_file file;
    score_options options;
    score_columns columns;
    file.path = o->score.front();
    std::vector<std::size_t> positions;
    for (std::size_t k = 1; k < o->score.size(); ++k) {
      const std::string& m = o->score[k];
      if (is_number(m) && m.size() <= 9) {
        positions.push_back(column_number(m, "--score"));
      } else if (m == "header") {
        file.header = score_file::header_line::skip;
      } else if (m == "header-read") {
        file.header = score_file::header_line::read;
      } else if (m == "no-mean-imputation") {
        options.no_mean_imputation = true;
      } else if (m == "center") {
        options.scale = score_options::scaling::center;
      } else if (m == "variance-standardize") {
        options.scale = score_options::scaling::variance_standardize;
      } else if (m.starts_with("cols=")) {
        columns = parse_score_columns(m.substr(5));
      } else {
        throw error(errc::invalid_argument,
                    "--score: unknown modifier '" + m +
                        "' (header, header-read, no-mean-imputation, center, "
                        "variance-standardize, cols=...)");
      }
    }
    if (!positions.empty()) file.id_column = positions[0];
    file.allele_column = positions.size() > 1 ? positions[1] : file.id_column + 1;
    if (positions.size() > 2) file.score_columns.assign(positions.begin() + 2, positions.end());
    if (!o->col_nums.empty()) file.score_columns = column_numbers(o->col_nums);

    const score_table table = read_score_file(file);
    analysis_run run("score", o->common);
    const store& s = run.source();
    run.log("--score " + file.path.string() + ": " + std::to_string(table.entries.size()) +
            " entries, " + std::to_string(table.names.size()) + " score(s) (" + table.format +
            " format)");
    const score_result r = score(s, run.selected(), table, options, run.options());
    if (r.missing_ids > 0)
      run.log("warning: " + std::to_string(r.missing_ids) +
              " --score file entries were skipped due to a missing variant ID");
    if (r.allele_mismatches > 0)
      run.log("warning: " + std::to_string(r.allele_mismatches) +
              " --score file entries were skipped due to a mismatching allele code");
    run.log("--score: " + std::to_string(r.columns.size()) + " variants processed");
    if (!is_writer()) return 0;
    const std::string path = o->out + ".sscore";
    write_score(s, r, path, columns, o->common.digits);
    run.log("wrote " + path);
    return 0;
  };
}

}  // namespace colflow::cli
