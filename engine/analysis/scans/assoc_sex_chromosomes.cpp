// PLINK 2's --glm defaults on X, Y and MT for the association scans: runs of columns that need
// other samples, one more covariate or haploid coding are scanned on their own.
#include <cmath>

#include "analysis/scans/assoc_internal.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {

void add_pass(pass_stats& to, const pass_stats& p) {
  to.columns += p.columns;
  to.bytes_read += p.bytes_read;
  to.bytes_decoded += p.bytes_decoded;
  to.wall_seconds += p.wall_seconds;
  to.compute_busy_seconds += p.compute_busy_seconds;
  to.compute_wait_seconds += p.compute_wait_seconds;
  to.stopped_early = to.stopped_early || p.stopped_early;
}

namespace {

enum class treatment { as_given, x, y, mt };

treatment treatment_of(const column_info& c) {
  switch (kind_of_chromosome(c.chrom)) {
    case chromosome_kind::x:
      return treatment::x;
    case chromosome_kind::y:
      return treatment::y;
    case chromosome_kind::mt:
      return treatment::mt;
    default:
      return treatment::as_given;
  }
}

// `sel` restricted to `columns` and to the rows `keep` accepts.
template <class Keep>
selection restricted(const selection& sel, std::vector<std::size_t> columns, const Keep& keep) {
  selection out;
  out.columns = std::move(columns);
  out.row_kept.assign(sel.row_kept.size(), 0);
  for (std::size_t i : sel.rows)
    if (keep(i)) {
      out.row_kept[i] = 1;
      out.rows.push_back(i);
    }
  return out;
}

// Scans the phenotypes one at a time, those that cannot be tested among the run's samples
// getting TOO_FEW_SAMPLES, and hands every column's results to `sink` in order.
assoc_summary scan_each_phenotype(const selection& run, const phenotype_table* covariates,
                                  std::size_t phenotypes, const chromosome_run_scan& scan,
                                  const assoc_sink& sink) {
  assoc_result untestable;
  untestable.status = assoc_status::too_few_samples;
  std::vector<assoc_result> results(run.columns.size() * phenotypes, untestable);
  assoc_summary summary;
  summary.samples_used.assign(phenotypes, 0);
  for (std::size_t q = 0; q < phenotypes; ++q) {
    const std::size_t only[] = {q};
    try {
      const assoc_summary one =
          scan(run, covariates, only,
               [&](std::size_t position, std::size_t, std::span<const assoc_result> r) {
                 results[position * phenotypes + q] = r[0];
               });
      summary.samples_used[q] = one.samples_used[0];
      summary.covariates = one.covariates;
      add_pass(summary.pass, one.pass);
    } catch (const error& e) {
      if (e.code() != errc::invalid_argument) throw;
    }
  }
  for (std::size_t k = 0; k < run.columns.size(); ++k)
    sink(k, run.columns[k],
         std::span<const assoc_result>(results.data() + k * phenotypes, phenotypes));
  return summary;
}

}  // namespace

bool selects_sex_chromosomes(const store& s, const selection& sel) {
  for (std::size_t j : sel.columns)
    if (treatment_of(s.columns()[j]) != treatment::as_given) return true;
  return false;
}

assoc_summary scan_with_sex_chromosomes(const store& s, const selection& sel,
                                        const phenotype_table* covariates,
                                        std::span<const sample_sex> sex, std::size_t phenotypes,
                                        const assoc_sink& sink, const chromosome_run_scan& scan) {
  if (sex.size() != sel.row_kept.size())
    throw error(errc::invalid_argument, s.path().string() + ": " + std::to_string(sex.size()) +
                                            " sexes for " + std::to_string(sel.row_kept.size()) +
                                            " samples");
  const auto known = [&](std::size_t i) { return sex[i] != sample_sex::unknown; };
  const auto male = [&](std::size_t i) { return sex[i] == sample_sex::male; };
  const auto any = [](std::size_t) { return true; };

  // X: the covariates with SEX added, unless sex is constant among the samples of known sex.
  bool sex_varies = false;
  sample_sex first = sample_sex::unknown;
  for (std::size_t i : sel.rows) {
    if (!known(i)) continue;
    if (first == sample_sex::unknown) first = sex[i];
    sex_varies = sex_varies || sex[i] != first;
  }
  phenotype_table with_sex;
  if (sex_varies) {
    const Eigen::Index rows = static_cast<Eigen::Index>(sex.size()),
                       nc = covariates ? covariates->values.cols() : 0;
    if (covariates) with_sex.names = covariates->names;
    with_sex.names.push_back("SEX");
    with_sex.values.resize(rows, nc + 1);
    if (covariates) with_sex.values.leftCols(nc) = covariates->values;
    for (Eigen::Index i = 0; i < rows; ++i) {
      const sample_sex x = sex[static_cast<std::size_t>(i)];
      with_sex.values(i, nc) = x == sample_sex::male ? 1.0 : x == sample_sex::female ? 2.0 : NAN;
    }
  }

  assoc_summary summary;
  std::size_t largest = 0;
  for (std::size_t begin = 0; begin < sel.columns.size();) {
    const treatment t = treatment_of(s.columns()[sel.columns[begin]]);
    std::size_t end = begin + 1;
    while (end < sel.columns.size() && treatment_of(s.columns()[sel.columns[end]]) == t) ++end;
    std::vector<std::size_t> columns(sel.columns.begin() + static_cast<std::ptrdiff_t>(begin),
                                     sel.columns.begin() + static_cast<std::ptrdiff_t>(end));
    const selection run = t == treatment::x   ? restricted(sel, std::move(columns), known)
                          : t == treatment::y ? restricted(sel, std::move(columns), male)
                                              : restricted(sel, std::move(columns), any);
    const phenotype_table* run_covariates =
        t == treatment::x && sex_varies ? &with_sex : covariates;
    // Y and MT are haploid: PLINK 2 counts a call 0 or 1 copies (half the stored dosage), which
    // doubles the coefficient and its SE and leaves the test as it is (the fits, Firth's
    // included, are equivariant under scaling the column).
    const bool haploid = t == treatment::y || t == treatment::mt;
    std::vector<assoc_result> scaled;
    const assoc_sink to = [&](std::size_t position, std::size_t column,
                              std::span<const assoc_result> results) {
      if (!haploid) return sink(begin + position, column, results);
      scaled.assign(results.begin(), results.end());
      for (assoc_result& r : scaled) {
        r.beta *= 2;
        r.se *= 2;
      }
      sink(begin + position, column, scaled);
    };
    assoc_summary part;
    try {
      part = scan(run, run_covariates, {}, to);
    } catch (const error& e) {
      // A scan checks its phenotypes before it reads a column: nothing reached the sink yet.
      if (t == treatment::as_given || t == treatment::mt || e.code() != errc::invalid_argument)
        throw;
      part = scan_each_phenotype(run, run_covariates, phenotypes, scan, to);
    }
    const pass_stats pass = summary.pass;
    if (end - begin > largest) {
      largest = end - begin;
      summary = part;
      summary.pass = pass;
    }
    add_pass(summary.pass, part.pass);
    begin = end;
  }
  return summary;
}

}  // namespace colflow::detail
