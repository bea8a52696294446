// The penalised regressions (ridge, lasso, elastic net): coordinate descent along a path of λ
// values, and predictions from a path's coefficients on another store.
#include "colflow/analysis/penalized.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "analysis/models/residual_vector_internal.hpp"
#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/standardized_columns_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow {
namespace {

double soft_threshold(double x, double t) noexcept { return x > t ? x - t : x < -t ? x + t : 0.0; }

void check_penalized_options(const penalized_options& o) {
  if (!(o.alpha >= 0.0 && o.alpha <= 1.0))
    throw error(errc::invalid_argument, "alpha must be between 0 and 1");
  for (double l : o.lambdas)
    if (!(l > 0.0)) throw error(errc::invalid_argument, "every lambda must be positive");
}

// The λ values of the path, largest first: those given, or n_lambda of them from λ_max down to
// a ratio of it, evenly spaced on a log scale.
std::vector<double> lambda_path(const penalized_options& o, double lambda_max, std::size_t n,
                                std::size_t m) {
  std::vector<double> lambdas = o.lambdas;
  if (lambdas.empty()) {
    const std::size_t k = std::max<std::size_t>(1, o.n_lambda);
    const double ratio = o.lambda_min_ratio > 0 ? o.lambda_min_ratio : (n > m ? 1e-4 : 1e-2);
    for (std::size_t i = 0; i < k; ++i)
      lambdas.push_back(
          lambda_max *
          (k == 1 ? 1.0 : std::pow(ratio, static_cast<double>(i) / static_cast<double>(k - 1))));
  }
  std::sort(lambdas.begin(), lambdas.end(), std::greater<>());
  return lambdas;
}

// Coordinate descent along a path of λ values, warm-started from one λ to the next: the
// residual, every column's gradient and coefficient, and the passes that update them.
class path_solver {
 public:
  path_solver(const store& s, const selection& sel, std::span<const double> phenotype,
              const penalized_options& o, const analysis_options& analysis)
      : sel_(sel),
        o_(o),
        parallel_gradients_(!distributed(analysis.processes)),
        m_(sel.columns.size()),
        fit_(detail::used_samples(s, sel, phenotype, 2, "")),
        nd_(static_cast<double>(fit_.count)),
        v_j_((nd_ - 1.0) / nd_),
        r_(initial_residual(phenotype, fit_)),
        z_(s, sel, fit_.used, analysis.processes),
        yy_(residual_sums()[1]),
        stream_(s, analysis, !z_.genotype(), "statistics"),
        gradient_(m_, 0.0),
        r_sum_(residual_sums()[0]),
        beta_(m_, 0.0),
        in_working_(m_, 0) {}

  // The result before its path: the samples, the intercept, and from a first pass each
  // column's statistics and λ_max, where every coefficient is zero.
  penalized_result start() {
    penalized_result result;
    result.samples = fit_.count;
    result.intercept = fit_.mean;
    gradient_pass(true);
    result.columns = z_.stats();
    double gmax = 0;
    for (double g : gradient_) gmax = std::max(gmax, std::fabs(g));
    // glmnet's convention for ridge: the path starts where α = 0.001 would zero everything.
    result.lambda_max = gmax / std::max(o_.alpha, 1e-3);
    return result;
  }

  // Adds the solution at lambdas[k] to the path, from that at `previous` (the λ before it, or
  // λ_max).
  void solve(const std::vector<double>& lambdas, std::size_t k, double previous,
             penalized_result& result) {
    const double lambda = lambdas[k];
    const double l1 = lambda * o_.alpha, denominator = v_j_ + lambda * (1.0 - o_.alpha);
    const std::string name =
        "lambda " + std::to_string(k + 1) + "/" + std::to_string(lambdas.size());
    admit_strong(o_.alpha * (2.0 * lambda - previous));
    penalized_step step;
    step.lambda = lambda;
    do {
      collect_working();
      sweep(name, l1, denominator, step);
      ++step.full_passes;
    } while (admit_violations(name, l1));
    step.converged = step.sweeps < o_.max_sweeps;
    record(step, result);
  }

 private:
  // Zero on unused rows, always; the phenotype less its mean on the used ones.
  static detail::residual_vector initial_residual(std::span<const double> phenotype,
                                                  const detail::phenotype_samples& fit) {
    detail::residual_vector r(fit.used.size(), 0.0);
    for (std::size_t i = 0; i < r.size(); ++i)
      if (fit.used[i]) r[i] = phenotype[i] - fit.mean;
    return r;
  }

  // The residual's sum and sum of squares, on the sample blocks of the products
  // (docs/DESIGN.md §4.8).
  std::array<double, 2> residual_sums() {
    const double* e = r_.data();
    return z_.blocks().sums<2>([&](std::size_t, std::size_t first, std::size_t count, double* out) {
      double sum = 0, squares = 0;
      for (std::size_t i = first; i < first + count; ++i) {
        sum += e[i];
        squares += e[i] * e[i];
      }
      out[0] = sum;
      out[1] = squares;
    });
  }

  // A pass of every column's gradient (and on the first pass its statistics). The columns are
  // independent: a genotype store's batches are spread over the threads a column each, by the
  // same block partials as the sweeps' products; a dense column is computed on the blocks.
  // On several processes a column's product is a collective: one column at a time then.
  void gradient_pass(bool learn) {
    if (z_.genotype() && parallel_gradients_) {
      stream_.columns.run_batches(sel_.columns, [&](std::span<const column_view<double>> batch) {
        tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t i) {
          const column_view<double>& v = batch[i];
          if (learn) z_.learn(v.position, v);
          if (!z_.constant(v.position))
            gradient_[v.position] = z_.dot_alone(v.position, v, r_, r_sum_) / nd_;
        });
        return true;
      });
      return;
    }
    stream_.columns.run(sel_.columns, [&](const column_view<double>& v) {
      if (learn) z_.learn(v.position, v);
      if (!z_.constant(v.position)) gradient_[v.position] = z_.dot(v.position, v, r_, r_sum_) / nd_;
      return true;
    });
  }

  // Sequential strong rule: a column whose gradient is below `threshold`, α(2λ − λ_previous),
  // is unlikely to enter at λ and is left out of the sweeps (the KKT check catches any mistake).
  void admit_strong(double threshold) {
    for (std::size_t p = 0; p < m_; ++p)
      if (!in_working_[p] && !z_.constant(p) &&
          (beta_[p] != 0.0 || std::fabs(gradient_[p]) >= threshold))
        in_working_[p] = 1;
  }

  // The working set in selection order: positions and store columns.
  void collect_working() {
    working_.clear();
    working_columns_.clear();
    for (std::size_t p = 0; p < m_; ++p)
      if (in_working_[p]) {
        working_.push_back(p);
        working_columns_.push_back(sel_.columns[p]);
      }
  }

  // Sweeps over the working set until no coefficient moves more than the tolerance, or the
  // step has made max_sweeps of them.
  void sweep(const std::string& name, double l1, double denominator, penalized_step& step) {
    while (!working_.empty() && step.sweeps < o_.max_sweeps) {
      ++step.sweeps;
      stream_.label = name + " sweep " + std::to_string(step.sweeps);
      double largest = 0;
      r_sum_ = residual_sums()[0];
      stream_.columns.run(working_columns_, [&](const column_view<double>& v) {
        const std::size_t p = working_[v.position];
        const double rho = z_.dot(p, v, r_, r_sum_) / nd_ + v_j_ * beta_[p];
        const double updated = soft_threshold(rho, l1) / denominator;
        const double delta = updated - beta_[p];
        if (delta != 0.0) {
          z_.subtract(p, v, delta, r_);
          beta_[p] = updated;
          largest = std::max(largest, std::fabs(delta));
        }
        return true;
      });
      if (largest < o_.tolerance) break;
    }
  }

  // KKT check of every column outside the working set, from fresh gradients (which the next
  // λ's strong rule reads too): admits the violators, and says whether there were any.
  bool admit_violations(const std::string& name, double l1) {
    stream_.label = name + " check";
    r_sum_ = residual_sums()[0];
    gradient_pass(false);
    bool violated = false;
    for (std::size_t p = 0; p < m_; ++p)
      if (!in_working_[p] && !z_.constant(p) && std::fabs(gradient_[p]) > l1) {
        in_working_[p] = 1;
        violated = true;
      }
    return violated;
  }

  // The step's fit and its non-zero coefficients, onto the path.
  void record(penalized_step& step, penalized_result& result) {
    const double rr = residual_sums()[1];
    double abs_sum = 0, sq_sum = 0;
    std::vector<std::pair<std::size_t, double>> nonzero;
    for (std::size_t p = 0; p < m_; ++p)
      if (beta_[p] != 0.0) {
        nonzero.emplace_back(p, beta_[p]);
        abs_sum += std::fabs(beta_[p]);
        sq_sum += beta_[p] * beta_[p];
      }
    step.nonzero = nonzero.size();
    step.r_squared = 1.0 - rr / yy_;
    step.objective =
        rr / (2.0 * nd_) + step.lambda * (o_.alpha * abs_sum + (1.0 - o_.alpha) / 2.0 * sq_sum);
    result.path.push_back(step);
    result.coefficients.push_back(std::move(nonzero));
  }

  const selection& sel_;
  const penalized_options& o_;
  bool parallel_gradients_;
  std::size_t m_;
  detail::phenotype_samples fit_;
  double nd_;
  double v_j_;                 // z_jᵀz_j / n for every non-constant column
  detail::residual_vector r_;  // the residual; zero on unused rows, always
  detail::standardized_columns z_;
  double yy_;  // the residual's sum of squares before any coefficient
  detail::analysis_stream stream_;
  std::vector<double> gradient_;  // z_jᵀr / n at the current solution
  double r_sum_;                  // for z_.dot; kept by the updates
  std::vector<double> beta_;
  std::vector<std::uint8_t> in_working_;
  std::vector<std::size_t> working_;          // selection positions of the working set
  std::vector<std::size_t> working_columns_;  // their store columns
};

}  // namespace

penalized_result penalized_regression(const store& s, const selection& sel,
                                      std::span<const double> phenotype, const penalized_options& o,
                                      const analysis_options& analysis) {
  check_penalized_options(o);
  path_solver solver(s, sel, phenotype, o, analysis);
  penalized_result result = solver.start();
  const std::vector<double> lambdas =
      lambda_path(o, result.lambda_max, result.samples, sel.columns.size());
  double previous = result.lambda_max;
  // The path's progress counts λ values: the statistics pass before is a pass of its own.
  const auto path_start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < lambdas.size(); ++k) {
    solver.solve(lambdas, k, previous, result);
    previous = lambdas[k];
    if (analysis.on_step)
      analysis.on_step(
          "path",
          loop_progress{k + 1, lambdas.size(), 0,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - path_start)
                            .count()});
  }
  return result;
}

column_match match_columns(const store& fitted, const selection& sel, const store& target) {
  column_match m;
  std::unordered_map<std::string, std::size_t> by_id;
  const auto& theirs = target.columns();
  for (std::size_t j = 0; j < theirs.size(); ++j) by_id.emplace(theirs[j].id, j);
  const auto& ours = fitted.columns();
  for (std::size_t p = 0; p < sel.columns.size(); ++p) {
    const column_info& c = ours[sel.columns[p]];
    const auto it = by_id.find(c.id);
    if (it == by_id.end()) {
      m.target.push_back(column_match::absent);
      m.swapped.push_back(0);
      ++m.missing;
      continue;
    }
    m.target.push_back(it->second);
    const column_info& t = theirs[it->second];
    m.swapped.push_back(!c.a1.empty() && t.a1 == c.a2 && t.a2 == c.a1 && c.a1 != c.a2);
  }
  return m;
}

Eigen::MatrixXd predict(const store& target, const penalized_result& fit, const column_match& match,
                        const analysis_options& analysis) {
  const auto rows = static_cast<Eigen::Index>(target.num_rows());
  const auto k = static_cast<Eigen::Index>(fit.path.size());
  if (match.target.size() != fit.columns.size())
    throw error(errc::invalid_argument, "predict: the column match is for another fit");
  // Coefficients by fitted column: one row of λ values each, for the columns ever non-zero.
  std::vector<std::size_t> order, position;  // target columns in store order, fitted position
  Eigen::MatrixXd beta = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(fit.columns.size()), k);
  for (Eigen::Index l = 0; l < k; ++l)
    for (const auto& [p, b] : fit.coefficients[static_cast<std::size_t>(l)])
      beta(static_cast<Eigen::Index>(p), l) = b;
  std::vector<std::pair<std::size_t, std::size_t>> used;  // (target column, fitted position)
  for (std::size_t p = 0; p < fit.columns.size(); ++p)
    if (match.target[p] != column_match::absent && beta.row(static_cast<Eigen::Index>(p)).any())
      used.emplace_back(match.target[p], p);
  std::sort(used.begin(), used.end());
  for (const auto& [t, p] : used) {
    order.push_back(t);
    position.push_back(p);
  }
  Eigen::MatrixXd pred = Eigen::MatrixXd::Constant(rows, k, fit.intercept);
  detail::analysis_stream stream(target, analysis, true, "predict");
  Eigen::VectorXd z(rows);
  stream.columns.run(order, [&](const column_view<double>& v) {
    const std::size_t p = position[v.position];
    const column_stats& st = fit.columns[p];
    const bool swap = match.swapped[p] != 0;
    for (Eigen::Index i = 0; i < rows; ++i) {
      const double x = v.values[i];
      z[i] = std::isnan(x) ? 0.0 : ((swap ? 2.0 - x : x) - st.mean) / st.sd;
    }
    pred.noalias() += z * beta.row(static_cast<Eigen::Index>(p));
    return true;
  });
  return pred;
}

}  // namespace colflow
