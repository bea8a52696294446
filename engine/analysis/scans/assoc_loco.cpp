// assoc --loco: the scans per chromosome, each phenotype less its LOCO prediction (linear) or
// with it as an offset (logistic).
#include <cmath>
#include <functional>
#include <map>

#include "analysis/scans/assoc_internal.hpp"
#include "analysis/shared/covariate_basis_internal.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/error.hpp"
#include "colflow/store/chromosome.hpp"

namespace colflow {
namespace {

constexpr Eigen::Index loco_chromosomes = 23;

// Phenotype p's covariate-adjusted scale over the rows with the phenotype, every covariate and
// a prediction: ‖y − ŷ‖ / √(n − k), ŷ the least-squares fit on the intercept and covariates.
double adjusted_scale(const phenotype_table& phenotypes, Eigen::Index p,
                      const phenotype_table* covariates, const std::vector<std::uint8_t>& kept,
                      const Eigen::MatrixXd& loco) {
  std::vector<std::size_t> rows;
  for (Eigen::Index r = 0; r < phenotypes.values.rows(); ++r)
    if (kept[static_cast<std::size_t>(r)] && !std::isnan(phenotypes.values(r, p)) &&
        !std::isnan(loco(0, r)) && !(covariates && covariates->values.row(r).hasNaN()))
      rows.push_back(static_cast<std::size_t>(r));
  const Eigen::Index k = 1 + (covariates ? covariates->values.cols() : 0);
  if (static_cast<Eigen::Index>(rows.size()) <= k)
    throw error(errc::invalid_argument, phenotypes.names[static_cast<std::size_t>(p)] +
                                            ": too few samples with a LOCO prediction");
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    y[static_cast<Eigen::Index>(i)] = phenotypes.values(static_cast<Eigen::Index>(rows[i]), p);
  return detail::adjust_and_scale(detail::covariate_basis(rows, covariates, "assoc --loco"), y);
}

void check_loco_shapes(std::span<const Eigen::MatrixXd> loco, Eigen::Index phenotypes,
                       Eigen::Index rows) {
  if (static_cast<Eigen::Index>(loco.size()) != phenotypes)
    throw error(errc::invalid_argument, "assoc --loco: one LOCO matrix per phenotype is needed");
  for (const Eigen::MatrixXd& m : loco)
    if (m.rows() != loco_chromosomes || m.cols() != rows)
      throw error(errc::invalid_argument, "assoc --loco: a LOCO matrix is not 23 x store rows");
}

// The scan of one chromosome's columns (c: 1-22, 23 for X).
using chromosome_scan = std::function<assoc_summary(int c, const selection&)>;

// Runs `scan` on the selected columns of each chromosome in turn, chromosomes in the order the
// selection first meets them; counts the columns on none of them in `untested`.
assoc_summary scan_by_chromosome(const store& s, const selection& sel, std::size_t phenotypes,
                                 std::size_t& untested, const chromosome_scan& scan) {
  std::vector<int> order;
  std::map<int, std::vector<std::size_t>> columns;
  untested = 0;
  for (const std::size_t c : sel.columns) {
    const int chromosome = autosome_or_x_number(s.columns()[c].chrom);
    if (chromosome == 0) {
      ++untested;
      continue;
    }
    if (columns[chromosome].empty()) order.push_back(chromosome);
    columns[chromosome].push_back(c);
  }
  assoc_summary summary;
  summary.samples_used.assign(phenotypes, 0);
  for (const int chromosome : order) {
    selection part = sel;
    part.columns = columns[chromosome];
    const assoc_summary run = scan(chromosome, part);
    summary.covariates = run.covariates;
    summary.samples_used = run.samples_used;
    detail::add_pass(summary.pass, run.pass);
  }
  return summary;
}

}  // namespace

assoc_summary linear_association_loco(const store& s, const selection& sel,
                                      const phenotype_table& phenotypes,
                                      const phenotype_table* covariates,
                                      std::span<const Eigen::MatrixXd> loco, const assoc_sink& sink,
                                      std::size_t& untested, const analysis_options& options,
                                      std::span<const sample_sex> sex) {
  const Eigen::Index np = phenotypes.values.cols();
  check_loco_shapes(loco, np, phenotypes.values.rows());
  std::vector<double> scale(static_cast<std::size_t>(np));
  for (Eigen::Index p = 0; p < np; ++p)
    scale[static_cast<std::size_t>(p)] =
        adjusted_scale(phenotypes, p, covariates, sel.row_kept, loco[static_cast<std::size_t>(p)]);
  return scan_by_chromosome(
      s, sel, static_cast<std::size_t>(np), untested, [&](int chromosome, const selection& part) {
        phenotype_table adjusted = phenotypes;
        for (Eigen::Index p = 0; p < np; ++p)
          adjusted.values.col(p) -=
              scale[static_cast<std::size_t>(p)] *
              loco[static_cast<std::size_t>(p)].row(chromosome - 1).transpose();
        return linear_association(s, part, adjusted, covariates, sink, options, sex);
      });
}

assoc_summary logistic_association_loco(const store& s, const selection& sel,
                                        const phenotype_table& cases,
                                        const phenotype_table* covariates,
                                        std::span<const Eigen::MatrixXd> loco,
                                        const assoc_sink& sink, std::size_t& untested,
                                        firth_mode firth, const analysis_options& options,
                                        std::span<const sample_sex> sex, logistic_test test) {
  const Eigen::Index np = cases.values.cols();
  check_loco_shapes(loco, np, cases.values.rows());
  return scan_by_chromosome(
      s, sel, static_cast<std::size_t>(np), untested, [&](int chromosome, const selection& part) {
        Eigen::MatrixXd offsets(cases.values.rows(), np);
        for (Eigen::Index p = 0; p < np; ++p)
          offsets.col(p) = loco[static_cast<std::size_t>(p)].row(chromosome - 1).transpose();
        return detail::logistic_association_with_offsets(s, part, cases, covariates, &offsets, sink,
                                                         firth, options, sex, test);
      });
}

}  // namespace colflow
