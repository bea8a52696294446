// Leave-one-out cross-validation of whole-genome regression's two levels (regenie's --loocv):
// every sample predicted by the fit without it, derived from the fit on every sample.
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>

#include "analysis/models/wgr/wgr_ridge_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"

namespace colflow::detail {
namespace {

using matrix = Eigen::MatrixXd;
using chromosome_ranges = std::span<const std::pair<Eigen::Index, Eigen::Index>>;

// XᵀX (lower triangle) and XᵀY over every row: fixed parts of the rows, each summed by one
// task, then added in order.
constexpr std::size_t product_parts = 4;

void all_products(const matrix& x, const matrix& y, matrix& gram, matrix& cross) {
  const sample_folds parts(static_cast<std::size_t>(x.rows()),
                           std::min(product_parts, static_cast<std::size_t>(x.rows())));
  std::vector<matrix> grams, crosses;
  fold_products(x, y, parts, grams, crosses);
  gram = std::move(grams[0]);
  cross = std::move(crosses[0]);
  for (std::size_t k = 1; k < grams.size(); ++k) {
    gram += grams[k];
    cross += crosses[k];
  }
}

// f(first, rows) for each chunk of loo_chunk_rows rows, in parallel.
template <class F>
void for_row_chunks(Eigen::Index n, const F& f) {
  const Eigen::Index chunks = (n + loo_chunk_rows - 1) / loo_chunk_rows;
  tbb::parallel_for(Eigen::Index{0}, chunks, [&](Eigen::Index k) {
    const Eigen::Index first = k * loo_chunk_rows;
    f(first, std::min(loo_chunk_rows, n - first));
  });
}

// A ridge regression through the eigendecomposition XᵀX = V·diag(d)·Vᵀ: at shrinkage λ, a
// row x's fitted value is (xV)·diag(1/(d + λ))·Vᵀ(Xᵀy) and its leverage xᵀ(XᵀX + λI)⁻¹x is
// Σ (xV)²/(d + λ); left out, its prediction is (fitted − leverage·y)/(1 − leverage).
struct eigen_ridge {
  eigen_ridge(const matrix& x, const matrix& y) {
    matrix gram, cross;
    all_products(x, y, gram, cross);
    const Eigen::SelfAdjointEigenSolver<matrix> eig(gram);  // reads the lower triangle
    if (eig.info() != Eigen::Success)
      throw error(errc::invalid_argument, "ridge regression: the eigendecomposition failed");
    v = eig.eigenvectors();
    d = eig.eigenvalues();
    v_cross = v.transpose() * cross;
  }

  // Rows [first, first + rows) left out, at each shrinkage: column j·P + p of `out` for
  // trait p.
  void left_out(const matrix& x, const matrix& y, Eigen::Index first, Eigen::Index rows,
                std::span<const double> shrinkages, Eigen::Ref<matrix> out) const {
    const matrix u = x.middleRows(first, rows) * v;
    const matrix u2 = u.array().square().matrix();
    const auto traits = y.cols();
    for (std::size_t j = 0; j < shrinkages.size(); ++j) {
      const Eigen::VectorXd inverse = (d.array() + shrinkages[j]).inverse().matrix();
      const Eigen::ArrayXd leverage = (u2 * inverse).array();
      const matrix fitted = u * (inverse.asDiagonal() * v_cross);
      out.middleCols(static_cast<Eigen::Index>(j) * traits, traits) =
          ((fitted.array() - y.middleRows(first, rows).array().colwise() * leverage).colwise() /
           (1 - leverage))
              .matrix();
    }
  }

  matrix v, v_cross;
  Eigen::VectorXd d;
};

// Chromosomes × n: the LOCO predictions of samples whose own coefficients are β − qᵢ·sᵢ.
// `terms(first, rows, q, s)` gives a chunk's rows qᵢ (rows × C) and sᵢ, or leaves them empty
// for β itself.
template <class Terms>
matrix leave_one_out_loco(const matrix& w, const Eigen::VectorXd& beta, chromosome_ranges ranges,
                          const Terms& terms) {
  const auto chromosomes = static_cast<Eigen::Index>(ranges.size());
  matrix loco(chromosomes, w.rows());
  for_row_chunks(w.rows(), [&](Eigen::Index first, Eigen::Index rows) {
    matrix q;
    Eigen::VectorXd s;
    terms(first, rows, q, s);
    const auto x = w.middleRows(first, rows);
    matrix parts(chromosomes, rows);
    for (Eigen::Index c = 0; c < chromosomes; ++c) {
      const auto [begin, end] = ranges[static_cast<std::size_t>(c)];
      const auto xc = x.middleCols(begin, end - begin);
      parts.row(c) = (xc * beta.segment(begin, end - begin)).transpose();
      if (s.size() != 0)
        parts.row(c) -=
            s.cwiseProduct(xc.cwiseProduct(q.middleCols(begin, end - begin)).rowwise().sum())
                .transpose();
    }
    const Eigen::RowVectorXd total = parts.colwise().sum();
    loco.middleCols(first, rows) = (-parts).rowwise() + total;
  });
  return loco;
}

// The penalised information XᵀWX + τI at a logistic fit's probabilities, over every row.
Eigen::LLT<matrix> information(const matrix& w, const Eigen::ArrayXd& p, double tau) {
  matrix h(w.cols(), w.cols());
  weighted_gram(w, {w.rows(), w.rows()}, (p * (1 - p)).sqrt(), h);
  h.diagonal().array() += tau;
  Eigen::LLT<matrix> llt(h);
  if (llt.info() != Eigen::Success)
    throw error(errc::invalid_argument,
                "level 1: the penalised information is not positive "
                "definite");
  return llt;
}

void fit_or_refuse(const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
                   double tau, Eigen::VectorXd& b) {
  if (!penalised_logistic(w, y, offset, {w.rows(), w.rows()}, tau, b))
    throw error(errc::invalid_argument,
                "level 1: the ridge logistic regression did not converge in 100 iterations");
}

// Σ over samples of the −log-likelihood of each left out, its coefficients one Newton step
// from b without it: xᵢᵀβ₋ᵢ = xᵢᵀb − xᵢᵀH⁻¹xᵢ·(yᵢ − pᵢ)/(1 − wᵢ·xᵢᵀH⁻¹xᵢ).
double left_out_loss(const matrix& w, const Eigen::VectorXd& y, const Eigen::VectorXd& offset,
                     double tau, const Eigen::VectorXd& b) {
  const Eigen::VectorXd eta = offset + w * b;
  const Eigen::ArrayXd p = logistic_probability(eta.array());
  const Eigen::LLT<matrix> llt = information(w, p, tau);
  Eigen::ArrayXd loss(w.rows());
  for_row_chunks(w.rows(), [&](Eigen::Index first, Eigen::Index rows) {
    const Eigen::ArrayXd quadratic =
        llt.matrixL().solve(w.middleRows(first, rows).transpose()).colwise().squaredNorm();
    const Eigen::ArrayXd pk = p.segment(first, rows), yk = y.segment(first, rows).array();
    const Eigen::ArrayXd held = held_out_probability(
        eta.segment(first, rows).array() - quadratic * (yk - pk) / (1 - pk * (1 - pk) * quadratic));
    loss.segment(first, rows) = -(yk * held.log() + (1 - yk) * (1 - held).log());
  });
  return loss.sum();
}

}  // namespace

void level0_block_loo(const matrix& g, const matrix& y, std::span<const double> lambdas,
                      matrix& predictions) {
  const eigen_ridge ridge(g, y);
  for_row_chunks(g.rows(), [&](Eigen::Index first, Eigen::Index rows) {
    ridge.left_out(g, y, first, rows, lambdas, predictions.middleRows(first, rows));
  });
}

level1_fit level1_ridge_loo(const matrix& w, const Eigen::VectorXd& y, std::span<const double> taus,
                            chromosome_ranges chromosome_columns) {
  throw_if_stop_requested();
  const eigen_ridge ridge(w, y);
  const auto t_count = static_cast<Eigen::Index>(taus.size());
  matrix errors(w.rows(), t_count);
  for_row_chunks(w.rows(), [&](Eigen::Index first, Eigen::Index rows) {
    ridge.left_out(w, y, first, rows, taus, errors.middleRows(first, rows));
    errors.middleRows(first, rows) =
        (errors.middleRows(first, rows).colwise() - y.segment(first, rows)).array().square();
  });
  std::vector<std::vector<double>> sse(1, std::vector<double>(taus.size()));
  for (Eigen::Index t = 0; t < t_count; ++t)
    sse[0][static_cast<std::size_t>(t)] = errors.col(t).sum();
  level1_fit fit = choose(sse, static_cast<double>(w.rows()));
  // At the chosen τ, A = WᵀW + τI: β = A⁻¹Wᵀy, and without sample i, β − A⁻¹wᵢ·rᵢ/(1 − hᵢ)
  // with rᵢ = yᵢ − wᵢᵀβ and hᵢ = wᵢᵀA⁻¹wᵢ.
  const Eigen::VectorXd inverse = (ridge.d.array() + taus[fit.chosen]).inverse().matrix();
  const Eigen::VectorXd beta = ridge.v * (inverse.asDiagonal() * ridge.v_cross);
  fit.loco = leave_one_out_loco(
      w, beta, chromosome_columns,
      [&](Eigen::Index first, Eigen::Index rows, matrix& q, Eigen::VectorXd& s) {
        const auto x = w.middleRows(first, rows);
        q = x * ridge.v * inverse.asDiagonal() * ridge.v.transpose();
        const Eigen::ArrayXd leverage = x.cwiseProduct(q).rowwise().sum().array();
        s = ((y.segment(first, rows) - x * beta).array() / (1 - leverage)).matrix();
      });
  return fit;
}

level1_fit level1_logistic_loo(const matrix& w, const Eigen::VectorXd& y,
                               const Eigen::VectorXd& offset, std::span<const double> taus,
                               chromosome_ranges chromosome_columns, bool full_fit_loco) {
  std::vector<std::vector<double>> loss(1, std::vector<double>(taus.size()));
  Eigen::VectorXd b = Eigen::VectorXd::Zero(w.cols());  // warm start along the τ grid
  for (std::size_t t = 0; t < taus.size(); ++t) {
    fit_or_refuse(w, y, offset, taus[t], b);
    loss[0][t] = left_out_loss(w, y, offset, taus[t], b);
  }
  level1_fit fit = choose(loss, static_cast<double>(w.rows()));
  const double tau = taus[fit.chosen];
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(w.cols());
  fit_or_refuse(w, y, offset, tau, beta);
  if (full_fit_loco) {
    fit.loco = leave_one_out_loco(w, beta, chromosome_columns,
                                  [](Eigen::Index, Eigen::Index, matrix&, Eigen::VectorXd&) {});
    return fit;
  }
  const Eigen::ArrayXd p = logistic_probability((offset + w * beta).array());
  const Eigen::LLT<matrix> llt = information(w, p, tau);
  fit.loco = leave_one_out_loco(
      w, beta, chromosome_columns,
      [&](Eigen::Index first, Eigen::Index rows, matrix& q, Eigen::VectorXd& s) {
        const auto x = w.middleRows(first, rows);
        q = llt.solve(x.transpose()).transpose();
        const Eigen::ArrayXd pk = p.segment(first, rows);
        const Eigen::ArrayXd v = pk * (1 - pk) * x.cwiseProduct(q).rowwise().sum().array();
        s = ((y.segment(first, rows).array() - pk) / (1 - v)).matrix();
      });
  return fit;
}

}  // namespace colflow::detail
