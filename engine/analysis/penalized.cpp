#include "colflow/analysis/penalized.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "analysis/residual_vector_internal.hpp"
#include "analysis/standardized_columns_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"

namespace colflow {
namespace {

double soft_threshold(double x, double t) noexcept { return x > t ? x - t : x < -t ? x + t : 0.0; }

}  // namespace

penalized_result penalized_regression(const store& s, const selection& sel,
                                      std::span<const double> phenotype, const penalized_options& o,
                                      const analysis_options& analysis) {
  const std::size_t rows = s.num_rows(), m = sel.columns.size();
  if (!(o.alpha >= 0.0 && o.alpha <= 1.0))
    throw error(errc::invalid_argument, "alpha must be between 0 and 1");
  for (double l : o.lambdas)
    if (!(l > 0.0)) throw error(errc::invalid_argument, "every lambda must be positive");
  const detail::phenotype_samples fit = detail::used_samples(s, sel, phenotype, 2, "");
  const std::size_t n = fit.count;

  penalized_result result;
  result.samples = n;
  result.intercept = fit.mean;
  detail::residual_vector r(rows, 0.0);  // the residual; zero on unused rows, always
  for (std::size_t i = 0; i < rows; ++i)
    if (fit.used[i]) r[i] = phenotype[i] - result.intercept;
  detail::standardized_columns z(s, sel, fit.used, analysis.processes);
  // Sums over the samples, on the sample blocks of the products (docs/DESIGN.md §4.8).
  const auto residual_sums = [&] {
    const double* e = r.data();
    return z.blocks().sums<2>([&](std::size_t, std::size_t first, std::size_t count, double* out) {
      double sum = 0, squares = 0;
      for (std::size_t i = first; i < first + count; ++i) {
        sum += e[i];
        squares += e[i] * e[i];
      }
      out[0] = sum;
      out[1] = squares;
    });
  };
  const double yy = residual_sums()[1];
  const double nd = static_cast<double>(n);
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = !z.genotype();
  column_stream<double> stream(s, so);
  std::string label = "statistics";
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& p) { analysis.progress(label, p); });

  std::vector<double> gradient(m, 0.0);  // z_jᵀr / n at the current solution
  double r_sum = residual_sums()[0];     // for z.dot; kept by the updates
  // A pass of every column's gradient (and on the first pass its statistics). The columns are
  // independent: a genotype store's batches are spread over the threads a column each, by the
  // same block partials as the sweeps' products; a dense column is computed on the blocks.
  // On several processes a column's product is a collective: one column at a time then.
  const auto gradient_pass = [&](bool learn) {
    if (z.genotype() && !distributed(analysis.processes)) {
      stream.run_batches(sel.columns, [&](std::span<const column_view<double>> batch) {
        tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t i) {
          const column_view<double>& v = batch[i];
          if (learn) z.learn(v.position, v);
          if (!z.constant(v.position))
            gradient[v.position] = z.dot_alone(v.position, v, r, r_sum) / nd;
        });
        return true;
      });
      return;
    }
    stream.run(sel.columns, [&](const column_view<double>& v) {
      if (learn) z.learn(v.position, v);
      if (!z.constant(v.position)) gradient[v.position] = z.dot(v.position, v, r, r_sum) / nd;
      return true;
    });
  };
  // First pass: each column's statistics and its correlation with the phenotype.
  gradient_pass(true);
  result.columns = z.stats();
  double gmax = 0;
  for (double g : gradient) gmax = std::max(gmax, std::fabs(g));
  // glmnet's convention for ridge: the path starts where α = 0.001 would zero everything.
  result.lambda_max = gmax / std::max(o.alpha, 1e-3);

  std::vector<double> lambdas = o.lambdas;
  if (lambdas.empty()) {
    const std::size_t k = std::max<std::size_t>(1, o.n_lambda);
    const double ratio = o.lambda_min_ratio > 0 ? o.lambda_min_ratio : (n > m ? 1e-4 : 1e-2);
    for (std::size_t i = 0; i < k; ++i)
      lambdas.push_back(
          result.lambda_max *
          (k == 1 ? 1.0 : std::pow(ratio, static_cast<double>(i) / static_cast<double>(k - 1))));
  }
  std::sort(lambdas.begin(), lambdas.end(), std::greater<>());

  const double v_j = (nd - 1.0) / nd;  // z_jᵀz_j / n for every non-constant column
  std::vector<double> beta(m, 0.0);
  std::vector<std::uint8_t> in_working(m, 0);
  std::vector<std::size_t> working_columns;  // store columns, in selection order
  std::vector<std::size_t> working;          // their selection positions
  double previous_lambda = result.lambda_max;

  // The path's progress counts λ values: the statistics pass before is a pass of its own.
  const auto path_start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < lambdas.size(); ++k) {
    const double lambda = lambdas[k];
    const double l1 = lambda * o.alpha, denominator = v_j + lambda * (1.0 - o.alpha);
    // Sequential strong rule: columns whose correlation with the residual is far below the
    // threshold are left out of the sweeps (the KKT pass below catches any mistake).
    const double strong = o.alpha * (2.0 * lambda - previous_lambda);
    for (std::size_t p = 0; p < m; ++p)
      if (!in_working[p] && !z.constant(p) && (beta[p] != 0.0 || std::fabs(gradient[p]) >= strong))
        in_working[p] = 1;
    penalized_step step;
    step.lambda = lambda;
    while (true) {
      working.clear();
      working_columns.clear();
      for (std::size_t p = 0; p < m; ++p)
        if (in_working[p]) {
          working.push_back(p);
          working_columns.push_back(sel.columns[p]);
        }
      // Sweeps over the working set until no coefficient moves more than the tolerance.
      while (!working.empty() && step.sweeps < o.max_sweeps) {
        ++step.sweeps;
        label = "lambda " + std::to_string(k + 1) + "/" + std::to_string(lambdas.size()) +
                " sweep " + std::to_string(step.sweeps);
        double largest = 0;
        r_sum = residual_sums()[0];
        stream.run(working_columns, [&](const column_view<double>& v) {
          const std::size_t p = working[v.position];
          const double rho = z.dot(p, v, r, r_sum) / nd + v_j * beta[p];
          const double updated = soft_threshold(rho, l1) / denominator;
          const double delta = updated - beta[p];
          if (delta != 0.0) {
            z.subtract(p, v, delta, r);
            beta[p] = updated;
            largest = std::max(largest, std::fabs(delta));
          }
          return true;
        });
        if (largest < o.tolerance) break;
      }
      // KKT check of every column outside the working set (and fresh gradients for the next
      // λ's strong rule).
      ++step.full_passes;
      label = "lambda " + std::to_string(k + 1) + "/" + std::to_string(lambdas.size()) + " check";
      r_sum = residual_sums()[0];
      gradient_pass(false);
      bool violated = false;
      for (std::size_t p = 0; p < m; ++p)
        if (!in_working[p] && !z.constant(p) && std::fabs(gradient[p]) > l1) {
          in_working[p] = 1;
          violated = true;
        }
      if (!violated) break;
    }
    step.converged = step.sweeps < o.max_sweeps;
    const double rr = residual_sums()[1];
    double abs_sum = 0, sq_sum = 0;
    std::vector<std::pair<std::size_t, double>> nonzero;
    for (std::size_t p = 0; p < m; ++p)
      if (beta[p] != 0.0) {
        nonzero.emplace_back(p, beta[p]);
        abs_sum += std::fabs(beta[p]);
        sq_sum += beta[p] * beta[p];
      }
    step.nonzero = nonzero.size();
    step.r_squared = 1.0 - rr / yy;
    step.objective =
        rr / (2.0 * nd) + lambda * (o.alpha * abs_sum + (1.0 - o.alpha) / 2.0 * sq_sum);
    result.path.push_back(step);
    result.coefficients.push_back(std::move(nonzero));
    previous_lambda = lambda;
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
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  column_stream<double> stream(target, so);
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& pp) { analysis.progress("predict", pp); });
  Eigen::VectorXd z(rows);
  stream.run(order, [&](const column_view<double>& v) {
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
