// The case/control scan of `colflow assoc`: logistic regression per column and phenotype,
// Firth's penalised likelihood where the plain fit cannot be trusted.
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "analysis/scans/assoc_internal.hpp"
#include "analysis/scans/column_blocks_internal.hpp"
#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/logistic_regression_internal.hpp"
#include "colflow/analysis/assoc.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow {
namespace {

// The score test's view of the fit without the column (the null model), per used row.
struct null_model {
  Eigen::MatrixXd design;                   // intercept and covariates
  Eigen::VectorXd residual, weight;         // y − p and p(1 − p)
  Eigen::LLT<Eigen::MatrixXd> information;  // designᵀ W design
  Eigen::VectorXd residual_coefficients;  // information⁻¹ designᵀ residual (0 at the maximum)
};

// One phenotype's samples and the fit without the column, which starts every column's fit.
struct binary_trait {
  std::vector<std::size_t> rows;    // store rows used: selected, status and covariates known
  std::vector<std::uint8_t> cases;  // per store row: a case used; packed like genotype codes
  std::vector<std::uint8_t> controls;
  std::size_t case_count = 0, control_count = 0;
  Eigen::VectorXd y;               // per used row: 1 case, 0 control
  Eigen::MatrixXd covariates;      // used rows x covariates
  Eigen::VectorXd offset;          // per used row: the fixed offset (a LOCO prediction); or empty
  Eigen::VectorXd start;           // intercept, 0 for the column, covariates: the null model
  std::optional<null_model> null;  // for the score test only
};

// The score test's null model from the converged fit without the column (`beta`) of the
// phenotype `name`; throws when its weighted design has lost rank (probabilities rounded to 0
// or 1 by extreme offsets).
null_model make_null_model(Eigen::MatrixXd design, const binary_trait& t,
                           const Eigen::VectorXd& beta, const std::string& name) {
  null_model m;
  Eigen::ArrayXd eta = (design * beta).array();
  if (t.offset.size()) eta += t.offset.array();
  const Eigen::ArrayXd p = 1.0 / (1.0 + (-eta).exp());
  m.residual = (t.y.array() - p).matrix();
  m.weight = (p * (1.0 - p)).matrix();
  m.information.compute(design.transpose() *
                        (design.array().colwise() * m.weight.array()).matrix());
  if (m.information.info() != Eigen::Success)
    throw error(errc::invalid_argument,
                "phenotype " + name +
                    ": the weights of the fit without the column leave its design without full "
                    "rank (fitted probabilities of 0 or 1), so the score test has no variance");
  m.residual_coefficients = m.information.solve(design.transpose() * m.residual);
  m.design = std::move(design);
  return m;
}

// Throws unless the intercept and every covariate add a dimension among the trait's rows,
// naming the first covariate that does not (PLINK 2 refuses such a model too).
void check_covariate_rank(const binary_trait& t, const phenotype_table& cov,
                          const std::string& phenotype) {
  const auto n = static_cast<Eigen::Index>(t.rows.size());
  Eigen::MatrixXd design(n, 1 + t.covariates.cols());
  design.col(0).setOnes();
  design.rightCols(t.covariates.cols()) = t.covariates;
  for (Eigen::Index c = 1; c <= t.covariates.cols(); ++c) {
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(design.leftCols(c + 1));
    qr.setThreshold(1e-9);
    if (qr.rank() <= c)
      throw error(errc::invalid_argument,
                  "covariate " + cov.names[static_cast<std::size_t>(c - 1)] +
                      " is constant or a combination of the others among the " + std::to_string(n) +
                      " samples of phenotype " + phenotype);
  }
}

// `offsets`: per store row and phenotype, or null; a row without one (NaN) is left out.
std::vector<binary_trait> make_traits(const selection& sel, const phenotype_table& ph,
                                      const phenotype_table* cov, const Eigen::MatrixXd* offsets,
                                      logistic_test test) {
  const std::size_t rows = sel.row_kept.size();
  const Eigen::Index nc = cov ? cov->values.cols() : 0;
  std::vector<binary_trait> traits;
  for (Eigen::Index p = 0; p < ph.values.cols(); ++p) {
    const std::string& name = ph.names[static_cast<std::size_t>(p)];
    binary_trait t;
    std::vector<std::uint8_t> cases(rows, 0), controls(rows, 0);
    std::size_t n_cases = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      const double v = ph.values(r, p);
      if (!std::isnan(v) && v != 0 && v != 1)
        throw error(errc::invalid_argument, "phenotype " + name +
                                                ": case/control values must be 1 (case), 0 "
                                                "(control) or missing");
      bool use = sel.row_kept[i] && !std::isnan(v) && !(offsets && std::isnan((*offsets)(r, p)));
      for (Eigen::Index c = 0; use && c < nc; ++c) use = !std::isnan(cov->values(r, c));
      if (!use) continue;
      t.rows.push_back(i);
      (v == 1 ? cases : controls)[i] = 1;
      n_cases += v == 1;
    }
    const std::size_t n = t.rows.size();
    const std::string among = " among its " + std::to_string(n) + " selected samples with a value" +
                              (nc ? " and every covariate" : "") +
                              (offsets ? " and an offset" : "");
    if (n_cases == 0 || n_cases == n)
      throw error(errc::invalid_argument,
                  "phenotype " + name + " has no " + (n_cases == 0 ? "case" : "control") + among);
    const auto k = static_cast<std::size_t>(2 + nc);
    if (n <= k)
      throw error(errc::invalid_argument, "phenotype " + name + " has " + std::to_string(n) +
                                              " usable sample(s), not more than the " +
                                              std::to_string(k) +
                                              " coefficients of its model (intercept, column" +
                                              (nc ? ", covariates)" : ")"));
    t.cases = make_sample_mask(cases);
    t.controls = make_sample_mask(controls);
    t.case_count = n_cases;
    t.control_count = n - n_cases;
    t.y.resize(static_cast<Eigen::Index>(n));
    t.covariates.resize(static_cast<Eigen::Index>(n), nc);
    if (offsets) t.offset.resize(static_cast<Eigen::Index>(n));
    for (std::size_t j = 0; j < n; ++j) {
      const auto r = static_cast<Eigen::Index>(t.rows[j]);
      t.y[static_cast<Eigen::Index>(j)] = ph.values(r, p);
      for (Eigen::Index c = 0; c < nc; ++c)
        t.covariates(static_cast<Eigen::Index>(j), c) = cov->values(r, c);
      if (offsets) t.offset[static_cast<Eigen::Index>(j)] = (*offsets)(r, p);
    }
    if (nc > 0) check_covariate_rank(t, *cov, name);

    // The null model: intercept and covariates. Its coefficients start each column's fit
    // (with 0 for the column), a few Newton steps from the answer for most columns.
    Eigen::MatrixXd null_design(static_cast<Eigen::Index>(n), 1 + nc);
    null_design.col(0).setOnes();
    null_design.rightCols(nc) = t.covariates;
    const detail::logistic_fit null_fit = detail::fit_logistic(
        {null_design,
         t.y,
         {},
         std::span<const double>(t.offset.data(), static_cast<std::size_t>(t.offset.size()))},
        Eigen::VectorXd::Zero(1 + nc), false);
    t.start = Eigen::VectorXd::Zero(2 + nc);
    // Covariates that separate the cases on their own leave no finite null model: start
    // those columns from zero.
    if (null_fit.outcome == detail::fit_outcome::converged) {
      t.start[0] = null_fit.beta[0];
      t.start.tail(nc) = null_fit.beta.tail(nc);
    }
    if (test == logistic_test::score) {
      if (null_fit.outcome != detail::fit_outcome::converged)
        throw error(errc::invalid_argument,
                    "phenotype " + name + ": the fit without the column (intercept, covariates" +
                        (offsets ? ", offset" : "") +
                        ") does not converge, which the score test needs: the covariates "
                        "may separate cases from controls");
      t.null.emplace(make_null_model(std::move(null_design), t, null_fit.beta, name));
    }
    traits.push_back(std::move(t));
  }
  return traits;
}

// Fits one column's model and fills the Wald test of its coefficient (beta[1]).
// `zero_allele_count`: an allele absent among the cases or among the controls, where the
// plain estimate is infinite and the fallback goes to Firth's fit at once, as PLINK 2 does.
void fit_column(const detail::logistic_data& d, const Eigen::VectorXd& start,
                bool zero_allele_count, firth_mode mode, assoc_result& r) {
  using detail::fit_outcome;
  bool firth = mode == firth_mode::always || (mode == firth_mode::fallback && zero_allele_count);
  detail::logistic_fit fit;
  if (!firth) {
    fit = detail::fit_logistic(d, start, false);
    if (fit.outcome == fit_outcome::singular && fit.iterations == 0) {
      r.status = assoc_status::collinear;
      return;
    }
    if (fit.outcome != fit_outcome::converged) {
      if (mode == firth_mode::never) {
        r.status = assoc_status::not_converged;
        return;
      }
      firth = true;
    }
  }
  if (firth) {
    fit = detail::fit_logistic(d, start, true);
    r.firth = true;
    if (fit.outcome != fit_outcome::converged) {
      r.status = fit.outcome == fit_outcome::singular && fit.iterations == 0
                     ? assoc_status::collinear
                     : assoc_status::not_converged;
      return;
    }
  }
  r.beta = fit.beta[1];
  r.se = std::sqrt(fit.covariance(1, 1));
  r.t_stat = r.beta / r.se;
  r.p = detail::two_sided_normal_p(r.t_stat);
}

// The A1 dosage of each 2-bit genotype code (docs/FORMAT.md): 0b00 two copies, 0b01 missing,
// 0b10 one, 0b11 none.
constexpr double code_dosage[4] = {2.0, std::numeric_limits<double>::quiet_NaN(), 1.0, 0.0};

// A genotype column without covariates: the samples fall into six cells (dosage 0, 1 or 2,
// case or control), so the model is fitted to the cells' counts, from two counting passes
// over the packed codes.
void test_genotype_counts(const binary_trait& t, std::span<const std::uint8_t> codes,
                          std::size_t rows, firth_mode mode, assoc_result& r) {
  const genotype_counts ca = count_genotypes(codes, rows, t.cases, t.case_count),
                        co = count_genotypes(codes, rows, t.controls, t.control_count);
  const double cells[2][3] = {
      {static_cast<double>(co.hom_a2), static_cast<double>(co.het), static_cast<double>(co.hom_a1)},
      {static_cast<double>(ca.hom_a2), static_cast<double>(ca.het),
       static_cast<double>(ca.hom_a1)}};
  Eigen::Matrix<double, Eigen::Dynamic, 2> x(6, 2);
  Eigen::VectorXd y(6), count(6);
  Eigen::Index n = 0;
  int dosages_seen = 0;
  for (int dosage = 0; dosage < 3; ++dosage) {
    dosages_seen += cells[0][dosage] + cells[1][dosage] > 0;
    for (int status = 0; status < 2; ++status) {
      if (cells[status][dosage] == 0) continue;
      x(n, 0) = 1;
      x(n, 1) = dosage;
      y[n] = status;
      count[n] = cells[status][dosage];
      ++n;
    }
  }
  r.n_obs = ca.hom_a1 + ca.het + ca.hom_a2 + co.hom_a1 + co.het + co.hom_a2;
  if (dosages_seen <= 1) {
    r.status = assoc_status::constant;
    return;
  }
  if (r.n_obs <= 2) {
    r.status = assoc_status::too_few_samples;
    return;
  }
  const std::uint64_t a1_cases = 2 * ca.hom_a1 + ca.het, a2_cases = 2 * ca.hom_a2 + ca.het,
                      a1_controls = 2 * co.hom_a1 + co.het, a2_controls = 2 * co.hom_a2 + co.het;
  const bool zero = a1_cases == 0 || a2_cases == 0 || a1_controls == 0 || a2_controls == 0;
  const Eigen::MatrixXd design = x.topRows(n);
  fit_column(
      {design, y.head(n), std::span<const double>(count.data(), static_cast<std::size_t>(n))},
      t.start, zero, mode, r);
}

// Any column, sample by sample: `value(row)` is the column's value at a store row, NaN for a
// missing call. `variants`: values are allele counts, for the zero-count rule.
template <class Value>
void test_samples(const binary_trait& t, const Value& value, bool variants, firth_mode mode,
                  assoc_result& r) {
  const Eigen::Index nc = t.covariates.cols(), k = 2 + nc;
  // Kept between the columns a thread tests: the same sizes for every column of a trait.
  thread_local Eigen::MatrixXd x;
  thread_local Eigen::VectorXd y, offset;
  x.resize(static_cast<Eigen::Index>(t.rows.size()), k);
  y.resize(x.rows());
  offset.resize(t.offset.size() ? x.rows() : 0);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  // Allele counts among the cases and the controls: products with y (1 or 0) add exact zeros
  // to the other status's sums, without a branch or a store per sample.
  double a1_cases = 0, a1_controls = 0, a2_cases = 0, a2_controls = 0;
  Eigen::Index missing = 0;
  for (std::size_t j = 0; j < t.rows.size(); ++j) {
    const double v = value(t.rows[j]);
    const auto jj = static_cast<Eigen::Index>(j);
    x(jj, 1) = v;
    if (std::isnan(v)) {
      ++missing;
      continue;
    }
    const double is_case = t.y[jj], is_control = 1 - is_case;
    a1_cases += is_case * v;
    a1_controls += is_control * v;
    a2_cases += is_case * (2 - v);
    a2_controls += is_control * (2 - v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // The design's rows: the trait's own when every call is there (columns copied whole), else
  // those with a call, moved up in place.
  const Eigen::Index n = x.rows() - missing;
  x.col(0).setOnes();
  if (missing == 0) {
    x.rightCols(nc) = t.covariates;
    y = t.y;
    offset = t.offset;
  } else {
    for (Eigen::Index j = 0, to = 0; j < x.rows(); ++j) {
      if (std::isnan(x(j, 1))) continue;
      x(to, 1) = x(j, 1);
      x.row(to).tail(nc) = t.covariates.row(j);
      y[to] = t.y[j];
      if (offset.size()) offset[to] = t.offset[j];
      ++to;
    }
  }
  r.n_obs = static_cast<std::uint64_t>(n);
  if (!(lo < hi)) {
    r.status = assoc_status::constant;
    return;
  }
  if (n <= k) {
    r.status = assoc_status::too_few_samples;
    return;
  }
  const bool zero =
      variants && (a1_controls == 0 || a1_cases == 0 || a2_controls == 0 || a2_cases == 0);
  const std::span<const double> row_offsets(offset.data(),
                                            offset.size() ? static_cast<std::size_t>(n) : 0);
  fit_column({x.topRows(n), y.head(n), {}, row_offsets}, t.start, zero, mode, r);
}

// The score test of one column (logistic_test::score): `value(row)` as for test_samples. A
// missing call takes the mean of the column's calls among the trait's samples (regenie's
// rule), so the null model serves every column.
template <class Value>
void score_samples(const binary_trait& t, const Value& value, assoc_result& r) {
  const null_model& m = *t.null;
  Eigen::VectorXd g(t.y.size());
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::uint64_t called = 0;
  for (std::size_t j = 0; j < t.rows.size(); ++j) {
    const double v = value(t.rows[j]);
    g[static_cast<Eigen::Index>(j)] = v;
    if (std::isnan(v)) continue;
    sum += v;
    ++called;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  r.n_obs = called;
  if (!(lo < hi)) {
    r.status = assoc_status::constant;
    return;
  }
  // Centred: U and V do not change (the intercept is in the model), and the variance below
  // is then not a small difference of large sums for a column far from 0.
  const double mean = sum / static_cast<double>(called);
  for (double& v : g) v = std::isnan(v) ? 0.0 : v - mean;
  const Eigen::VectorXd wg = m.weight.cwiseProduct(g);
  const Eigen::VectorXd projected = m.design.transpose() * wg;
  const double raw = wg.dot(g);
  const double variance = raw - projected.dot(m.information.solve(projected));
  // A column the intercept and covariates explain to rounding carries no test.
  if (!(variance > 1e-9 * raw)) {
    r.status = assoc_status::collinear;
    return;
  }
  const double score = g.dot(m.residual) - projected.dot(m.residual_coefficients);
  r.beta = score / variance;
  r.se = 1 / std::sqrt(variance);
  r.t_stat = score * r.se;
  r.p = detail::two_sided_normal_p(r.t_stat);
}

// The score tests of column c of a block for every trait, into out[0, traits).
void score_block_column(const std::vector<binary_trait>& traits, const detail::column_block& block,
                        std::size_t c, assoc_result* out) {
  for (std::size_t q = 0; q < traits.size(); ++q) {
    out[q] = assoc_result{};
    if (block.codes_only()) {
      const std::span<const std::uint8_t> col = block.codes(c);
      score_samples(
          traits[q],
          [&](std::size_t row) { return code_dosage[(col[row / 4] >> (2 * (row % 4))) & 3]; },
          out[q]);
    } else {
      const double* x = block.values(c);
      score_samples(
          traits[q], [&](std::size_t row) { return x[row]; }, out[q]);
    }
  }
}

// The tests of column c of a block for every trait, into out[0, traits).
void test_block_column(const std::vector<binary_trait>& traits, const detail::column_block& block,
                       std::size_t c, bool variants, firth_mode firth, assoc_result* out) {
  const std::size_t rows = block.rows();
  for (std::size_t q = 0; q < traits.size(); ++q) {
    assoc_result& r = out[q];
    r = assoc_result{};
    const binary_trait& t = traits[q];
    if (block.codes_only()) {
      const std::span<const std::uint8_t> col = block.codes(c);
      // Counting cells needs samples that differ only in their call: no covariates, no offset.
      if (t.covariates.cols() == 0 && t.offset.size() == 0) {
        test_genotype_counts(t, col, rows, firth, r);
        continue;
      }
      test_samples(
          t, [&](std::size_t row) { return code_dosage[(col[row / 4] >> (2 * (row % 4))) & 3]; },
          true, firth, r);
    } else {
      const double* x = block.values(c);
      test_samples(
          t, [&](std::size_t row) { return x[row]; }, variants, firth, r);
    }
  }
}

// The columns of `m` that `only` lists (all when empty).
Eigen::MatrixXd select_columns(const Eigen::MatrixXd& m, std::span<const std::size_t> only) {
  if (only.empty()) return m;
  Eigen::MatrixXd out(m.rows(), static_cast<Eigen::Index>(only.size()));
  for (std::size_t j = 0; j < only.size(); ++j)
    out.col(static_cast<Eigen::Index>(j)) = m.col(static_cast<Eigen::Index>(only[j]));
  return out;
}

}  // namespace

namespace detail {

assoc_summary logistic_association_with_offsets(
    const store& s, const selection& sel, const phenotype_table& cases,
    const phenotype_table* covariates, const Eigen::MatrixXd* offsets, const assoc_sink& sink,
    firth_mode firth, const analysis_options& options, std::span<const sample_sex> sex,
    logistic_test test) {
  detail::check_association_inputs(s, sel, cases, covariates);
  if (offsets && (offsets->rows() != static_cast<Eigen::Index>(s.num_rows()) ||
                  offsets->cols() != cases.values.cols()))
    throw error(errc::invalid_argument, "logistic offsets: not store rows x phenotypes");
  const std::size_t rows = s.num_rows();
  if (!sex.empty() && detail::selects_sex_chromosomes(s, sel))
    return detail::scan_with_sex_chromosomes(
        s, sel, covariates, sex, static_cast<std::size_t>(cases.values.cols()), sink,
        [&](const selection& run, const phenotype_table* run_covariates,
            std::span<const std::size_t> only, const assoc_sink& to) {
          const Eigen::MatrixXd part = offsets ? select_columns(*offsets, only) : Eigen::MatrixXd();
          return logistic_association_with_offsets(
              s, run, only.empty() ? cases : select_phenotypes(cases, only), run_covariates,
              offsets ? &part : nullptr, to, firth, options, {}, test);
        });
  if (distributed(options.processes))
    return detail::distributed_association(
        s, sel, static_cast<std::size_t>(cases.values.cols()), sink, options,
        [&](const selection& part, const assoc_sink& local_sink, const analysis_options& alone) {
          return logistic_association_with_offsets(s, part, cases, covariates, offsets, local_sink,
                                                   firth, alone, {}, test);
        });
  const std::vector<binary_trait> traits = make_traits(sel, cases, covariates, offsets, test);
  const std::size_t np = traits.size();

  assoc_summary summary;
  summary.covariates = covariates ? static_cast<std::size_t>(covariates->values.cols()) : 0;
  for (const binary_trait& t : traits) summary.samples_used.push_back(t.rows.size());

  const bool genotype = s.type() == value_type::genotype;
  const bool variants = holds_variants(s.type());
  detail::analysis_stream stream(s, options, !genotype, "assoc");
  // Columns travel in blocks (about 4 MiB of codes or values, column_blocks_internal.hpp)
  // whose fits run across threads, one column per task.
  const std::size_t bytes = genotype ? genotype_column_bytes(rows) : rows * sizeof(double);
  detail::column_block block(std::clamp<std::size_t>((std::size_t{4} << 20) / bytes, 16, 256), rows,
                             genotype);
  const auto tests = [&](const detail::column_block& b, std::span<assoc_result> results) {
    tbb::parallel_for(std::size_t{0}, b.size(), [&](std::size_t c) {
      if (test == logistic_test::score)
        score_block_column(traits, b, c, results.data() + c * np);
      else
        test_block_column(traits, b, c, variants, firth, results.data() + c * np);
    });
  };
  summary.pass = detail::scan_in_blocks(stream.columns, sel.columns, block, np, tests, sink);
  return summary;
}

}  // namespace detail

assoc_summary logistic_association(const store& s, const selection& sel,
                                   const phenotype_table& cases, const phenotype_table* covariates,
                                   const assoc_sink& sink, firth_mode firth,
                                   const analysis_options& options, std::span<const sample_sex> sex,
                                   logistic_test test) {
  return detail::logistic_association_with_offsets(s, sel, cases, covariates, nullptr, sink, firth,
                                                   options, sex, test);
}

}  // namespace colflow
