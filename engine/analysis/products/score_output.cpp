// The .sscore table of `colflow score`, written from score(); plink2's `cols=` sets.
#include <limits>
#include <sstream>
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/score.hpp"
#include "colflow/error.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {

score_columns parse_score_columns(const std::string& descriptor) {
  score_columns c;
  std::vector<std::string> names;
  std::stringstream in(descriptor);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  if (names.empty()) throw error(errc::invalid_argument, "--score cols=: no column set named");
  const bool changes = names.front().starts_with('+') || names.front().starts_with('-');
  if (!changes) c = {false, false, false, false, false, false};
  for (std::string name : names) {
    bool on = true;
    if (name.starts_with('+') || name.starts_with('-')) {
      if (!changes)
        throw error(errc::invalid_argument,
                    "--score cols=" + descriptor +
                        ": either every column set is preceded by + or -, or none is");
      on = name.front() == '+';
      name.erase(0, 1);
    } else if (changes) {
      throw error(errc::invalid_argument,
                  "--score cols=" + descriptor +
                      ": either every column set is preceded by + or -, or none is");
    }
    if (name == "maybefid" || name == "fid")
      c.fid = on;
    else if (name == "nallele")
      c.nallele = on;
    else if (name == "denom")
      c.denom = on;
    else if (name == "dosagesum")
      c.dosage_sum = on;
    else if (name == "scoreavgs")
      c.score_avgs = on;
    else if (name == "scoresums")
      c.score_sums = on;
    else if (name == "maybesid" || name == "phenos")
      ;  // a store has no SID and the command reads no phenotype: nothing to write
    else
      throw error(errc::invalid_argument,
                  "--score cols=" + descriptor + ": unknown column set '" + name +
                      "' (maybefid, fid, nallele, denom, dosagesum, scoreavgs, scoresums)");
  }
  return c;
}

void write_score(const store& s, const score_result& r, const std::filesystem::path& file,
                 const score_columns& columns, int digits) {
  detail::check_digits(digits);
  const std::size_t scores = r.names.size(), n = r.rows.size();
  if (r.sums.size() != n * scores || r.dosage_sums.size() != n || r.allele_counts.size() != n ||
      r.denominators.size() != n)
    throw error(errc::invalid_argument, "write_score: a result of inconsistent sizes");
  const auto& samples = s.samples();
  tsv_writer out(file, digits);
  if (columns.fid)
    out.text("#FID").text("IID");
  else
    out.text("#IID");
  if (columns.nallele) out.text("ALLELE_CT");
  if (columns.denom) out.text("DENOM");
  if (columns.dosage_sum) out.text("NAMED_ALLELE_DOSAGE_SUM");
  if (columns.score_avgs)
    for (const std::string& name : r.names) out.text(name + "_AVG");
  if (columns.score_sums)
    for (const std::string& name : r.names) out.text(name + "_SUM");
  out.end_line();
  for (std::size_t i = 0; i < n; ++i) {
    const sample_info& p = samples.at(r.rows[i]);
    if (columns.fid) out.text(p.fid);
    out.text(p.iid);
    if (columns.nallele) out.integer(r.allele_counts[i]);
    if (columns.denom) out.integer(r.denominators[i]);
    if (columns.dosage_sum) out.number(r.dosage_sums[i]);
    const double* sum = r.sums.data() + i * scores;
    const double denom = static_cast<double>(r.denominators[i]);
    if (columns.score_avgs)
      for (std::size_t k = 0; k < scores; ++k)
        out.number(denom > 0 ? sum[k] / denom : std::numeric_limits<double>::quiet_NaN());
    if (columns.score_sums)
      for (std::size_t k = 0; k < scores; ++k) out.number(sum[k]);
    out.end_line();
  }
  out.commit();
}

}  // namespace colflow
