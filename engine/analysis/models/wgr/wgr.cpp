// Whole-genome regression, `colflow wgr`: the samples and traits set up, one pass of level-0
// blocks over the store, then level 1 and the LOCO predictions per trait.
#include "colflow/analysis/wgr.hpp"

#include <tbb/task_group.h>

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

#include "analysis/models/wgr/wgr_predictors_internal.hpp"
#include "analysis/models/wgr/wgr_ridge_internal.hpp"
#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/covariate_basis_internal.hpp"
#include "analysis/shared/logistic_regression_internal.hpp"
#include "analysis/shared/standardized_columns_internal.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/communicator.hpp"
#include "colflow/error.hpp"
#include "colflow/store/chromosome.hpp"
#include "kernels/allowed_threads_internal.hpp"

namespace colflow {
namespace {

using matrix = Eigen::MatrixXd;
constexpr int chromosomes = 23;

void check_options(const wgr_options& o) {
  if (o.block_size == 0)
    throw error(errc::invalid_argument, "wgr: the block size must be positive");
  if (o.folds < 2) throw error(errc::invalid_argument, "wgr: at least 2 folds are needed");
  for (const auto* grid : {&o.level0_h2, &o.level1_h2}) {
    if (grid->empty()) throw error(errc::invalid_argument, "wgr: a heritability grid is empty");
    for (const double h2 : *grid)
      if (!(h2 > 0 && h2 < 1))
        throw error(errc::invalid_argument,
                    "wgr: heritabilities must lie in (0, 1), not " + std::to_string(h2));
  }
}

// The shrinkage of each heritability for `count` predictors: count · (1 − h²) / h².
std::vector<double> shrinkages(std::span<const double> h2, std::size_t count) {
  std::vector<double> out;
  for (const double h : h2) out.push_back(static_cast<double>(count) * (1 - h) / h);
  return out;
}

// Whether the run validates by leave-one-out: asked, or (automatic) a case/control trait on
// fewer than wgr_leave_one_out_below samples.
bool has_case_control(const wgr_options& o) {
  return std::find(o.case_control.begin(), o.case_control.end(), true) != o.case_control.end();
}

bool leave_one_out(const wgr_options& o, std::size_t samples) {
  return o.validation == wgr_validation::leave_one_out ||
         (o.validation == wgr_validation::automatic && has_case_control(o) &&
          samples < wgr_leave_one_out_below);
}

// The samples used, the covariates' orthonormal basis and the scaled traits.
struct wgr_samples {
  std::vector<std::size_t> rows;
  std::vector<std::uint8_t> used;  // per store row
  matrix basis;                    // n × c, orthonormal, spanning the intercept and covariates
  matrix y;                        // n × traits: adjusted and scaled
  // Per trait, which samples have its value, for a case/control trait missing some (regenie
  // leaves them out of its covariates' fit, its predictors' scale and its level 1); empty: all.
  std::vector<std::vector<std::uint8_t>> observed;
};

// Selected rows with every covariate and a value of some trait (of the trait, with one).
std::vector<std::size_t> usable_rows(const selection& sel, const phenotype_table& traits,
                                     const phenotype_table* covariates) {
  std::vector<std::size_t> rows;
  for (const std::size_t r : sel.rows) {
    const auto i = static_cast<Eigen::Index>(r);
    const bool covariates_known = !covariates || !covariates->values.row(i).hasNaN();
    const bool some_trait = (traits.values.row(i).array() == traits.values.row(i).array()).any();
    if (covariates_known && some_trait) rows.push_back(r);
  }
  return rows;
}

// v less its projection on the basis on the `observed` samples (the others stay 0), scaled to
// ‖v‖² = N − c over the N observed; returns the scale.
double adjust_and_scale_observed(const matrix& basis, Eigen::Ref<Eigen::VectorXd> v,
                                 const std::vector<std::uint8_t>& observed, std::size_t count) {
  Eigen::VectorXd fitted = basis * (basis.transpose() * v);
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!observed[static_cast<std::size_t>(i)]) fitted[i] = 0;
  v -= fitted;
  const double scale = v.norm() / std::sqrt(static_cast<double>(count - basis.cols()));
  if (scale > 0) v /= scale;
  return scale;
}

// Trait p over the rows used, adjusted for the covariates and scaled into column p of s.y;
// returns its model's record. A missing value of a quantitative trait takes the mean of the
// others; one of a case/control trait is 0 and the sample is left out of the trait's fits
// (s.observed). Refuses a trait with too few values or none left once the covariates are
// projected out.
wgr_trait set_up_trait(const phenotype_table& traits, Eigen::Index p, bool case_control,
                       std::size_t folds, wgr_samples& s) {
  wgr_trait t;
  t.name = traits.names[static_cast<std::size_t>(p)];
  t.case_control = case_control;
  std::vector<std::uint8_t> observed(s.rows.size());
  double sum = 0;
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    if (const double v = traits.values(static_cast<Eigen::Index>(s.rows[i]), p); !std::isnan(v)) {
      sum += v;
      observed[i] = 1;
      ++t.values;
    }
  if (t.values < 2 * folds)
    throw error(errc::invalid_argument, "wgr: " + t.name + " has " + std::to_string(t.values) +
                                            " values among the samples used: too few");
  const double mean = sum / static_cast<double>(t.values);
  double spread = 0;
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const double v = traits.values(static_cast<Eigen::Index>(s.rows[i]), p);
    s.y(static_cast<Eigen::Index>(i), p) = observed[i] ? v : case_control ? 0 : mean;
    if (observed[i]) spread += (v - mean) * (v - mean);
  }
  spread = std::sqrt(spread);
  const bool masked = case_control && t.values < s.rows.size();
  t.scale = masked ? adjust_and_scale_observed(s.basis, s.y.col(p), observed, t.values)
                   : detail::adjust_and_scale(s.basis, s.y.col(p));
  if (masked) s.observed[static_cast<std::size_t>(p)] = std::move(observed);
  // Relative to the trait's own spread: rounding leaves a residual of ~1e-16 of it.
  if (!(t.scale * std::sqrt(static_cast<double>(s.rows.size())) > 1e-9 * spread) || spread == 0)
    throw error(errc::invalid_argument, "wgr: " + t.name +
                                            " is constant once the covariates are projected "
                                            "out (the intercept included)");
  return t;
}

wgr_samples set_up_samples(const selection& sel, const phenotype_table& traits,
                           const phenotype_table* covariates, const wgr_options& o,
                           std::vector<wgr_trait>& out) {
  const std::size_t folds = o.folds;
  wgr_samples s;
  s.rows = usable_rows(sel, traits, covariates);
  const std::size_t c = 1 + (covariates ? covariates->names.size() : 0);
  if (s.rows.size() < std::max(2 * folds, c + 2))
    throw error(errc::invalid_argument,
                "wgr: " + std::to_string(s.rows.size()) +
                    " samples have the covariates and a trait value: too few for " +
                    std::to_string(folds) + " folds (" + std::to_string(traits.matched_samples) +
                    " of the " + std::to_string(traits.file_samples) + " samples of " +
                    (traits.file.empty() ? std::string("the traits") : traits.file.string()) +
                    " are in the store)");
  s.used.assign(sel.row_kept.size(), 0);
  for (const std::size_t r : s.rows) s.used[r] = 1;
  s.basis = detail::covariate_basis(s.rows, covariates, "wgr");
  const auto n = static_cast<Eigen::Index>(s.rows.size());
  s.y.resize(n, traits.values.cols());
  s.observed.resize(traits.names.size());
  for (Eigen::Index p = 0; p < traits.values.cols(); ++p) {
    const auto q = static_cast<std::size_t>(p);
    out.push_back(set_up_trait(traits, p, !o.case_control.empty() && o.case_control[q], folds, s));
  }
  return s;
}

// A case/control trait's level-1 inputs over its samples (`rows`, positions in the rows used;
// all of them when it has every value): its statuses (0 or 1) and the log odds of its
// logistic fit on the intercept and covariates there (regenie's offset). Refuses other values,
// a class absent from a fold (from every sample, with leave-one-out: `folds` null), and
// covariates that separate the classes.
struct case_control_trait {
  std::vector<Eigen::Index> rows;
  Eigen::VectorXd status, offset;
  bool every_sample = true;
};

case_control_trait case_control_inputs(const phenotype_table& traits, Eigen::Index p,
                                       const wgr_samples& s, const detail::sample_folds* folds) {
  const std::string& name = traits.names[static_cast<std::size_t>(p)];
  const std::vector<std::uint8_t>& observed = s.observed[static_cast<std::size_t>(p)];
  case_control_trait t;
  t.every_sample = observed.empty();
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    if (observed.empty() || observed[i]) t.rows.push_back(static_cast<Eigen::Index>(i));
  const auto n = static_cast<Eigen::Index>(t.rows.size());
  t.status.resize(n);
  matrix basis(n, s.basis.cols());
  for (Eigen::Index i = 0; i < n; ++i) {
    const std::size_t row = s.rows[static_cast<std::size_t>(t.rows[static_cast<std::size_t>(i)])];
    const double v = traits.values(static_cast<Eigen::Index>(row), p);
    if (v != 0 && v != 1)
      throw error(errc::invalid_argument,
                  "wgr: case/control trait " + name + " has a value other than case or control");
    t.status[i] = v;
    basis.row(i) = s.basis.row(t.rows[static_cast<std::size_t>(i)]);
  }
  const std::vector<std::size_t> starts =
      folds ? detail::sample_folds::of_subset(*folds, t.rows).starts()
            : std::vector<std::size_t>{0, t.rows.size()};
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const auto first = static_cast<Eigen::Index>(starts[k]),
               size = static_cast<Eigen::Index>(starts[k + 1] - starts[k]);
    const double cases = t.status.segment(first, size).sum();
    if (cases == 0 || cases == static_cast<double>(size)) {
      const std::string where =
          folds ? "fold " + std::to_string(k + 1) + " has no " : std::string("no sample is a ");
      throw error(errc::invalid_argument, "wgr: case/control trait " + name + ": " + where +
                                              (cases == 0 ? "case" : "control"));
    }
  }
  const detail::logistic_fit null_fit =
      detail::fit_logistic({basis, t.status}, Eigen::VectorXd::Zero(basis.cols()), false);
  if (null_fit.outcome != detail::fit_outcome::converged)
    throw error(errc::invalid_argument, "wgr: case/control trait " + name +
                                            ": its logistic fit on the covariates does not "
                                            "converge (they separate cases from controls)");
  t.offset = basis * null_fit.beta;
  return t;
}

// A trait's predictors (n × blocks·R, blocks in order) with every process's share of the
// blocks (even_share) gathered into the columns this process left unfilled.
matrix gathered(matrix w, communicator* processes, std::size_t blocks, std::size_t r) {
  if (!distributed(processes)) return w;
  const auto ranks = static_cast<std::size_t>(processes->size()),
             rank = static_cast<std::size_t>(processes->rank());
  const auto n = static_cast<std::size_t>(w.rows());
  std::vector<std::size_t> counts(ranks);
  for (std::size_t q = 0; q < ranks; ++q)
    counts[q] = n * r * (even_share(blocks, q + 1, ranks) - even_share(blocks, q, ranks));
  const std::size_t first = n * r * even_share(blocks, rank, ranks);
  const std::vector<double> mine(w.data() + first, w.data() + first + counts[rank]);
  processes->all_gather(mine, std::span<double>(w.data(), static_cast<std::size_t>(w.size())),
                        counts);
  return w;
}

// Level 1 of a case/control trait on its own samples (folds null: leave-one-out); the LOCO
// predictions of the samples without its value are NaN.
detail::level1_fit case_control_level1(
    const matrix& w, const case_control_trait& t, const detail::sample_folds* folds,
    std::span<const double> taus, std::span<const std::pair<Eigen::Index, Eigen::Index>> ranges,
    bool full_fit) {
  matrix own;
  if (!t.every_sample) own = w(t.rows, Eigen::all);
  const matrix& x = t.every_sample ? w : own;
  detail::level1_fit fit;
  if (!folds) {
    fit = detail::level1_logistic_loo(x, t.status, t.offset, taus, ranges, full_fit);
  } else if (t.every_sample) {
    fit = detail::level1_logistic(x, t.status, t.offset, *folds, taus, ranges);
  } else {
    fit = detail::level1_logistic(x, t.status, t.offset,
                                  detail::sample_folds::of_subset(*folds, t.rows), taus, ranges);
  }
  if (!t.every_sample) {
    matrix loco =
        matrix::Constant(fit.loco.rows(), w.rows(), std::numeric_limits<double>::quiet_NaN());
    loco(Eigen::all, t.rows) = fit.loco;
    fit.loco = std::move(loco);
  }
  return fit;
}

// The columns of step 1 in chromosome order (store order within one), and each chromosome's
// blocks: runs of block_size, the last of a chromosome smaller (a chromosome shorter than one
// block is one smaller block, as regenie fits it).
struct wgr_layout {
  std::vector<std::size_t> order;      // selection positions
  std::vector<std::size_t> columns;    // the store columns, same order
  std::vector<std::size_t> block_end;  // per block: one past its last entry of `order`
  // Per chromosome 1-23: its blocks [first, end).
  std::vector<std::pair<std::size_t, std::size_t>> chromosome_blocks;
  std::size_t left_out = 0;
};

wgr_layout lay_out(const store& s, const selection& sel, const wgr_options& o) {
  const std::size_t block_size = o.block_size;
  wgr_layout l;
  std::vector<std::vector<std::size_t>> by_chromosome(chromosomes);
  for (std::size_t p = 0; p < sel.columns.size(); ++p) {
    const int c = wgr_chromosome(s.columns()[sel.columns[p]].chrom);
    if (c == 0)
      ++l.left_out;
    else
      by_chromosome[static_cast<std::size_t>(c - 1)].push_back(p);
  }
  for (const auto& positions : by_chromosome) {
    const std::size_t first = l.block_end.size();
    for (std::size_t i = 0; i < positions.size(); ++i) {
      l.order.push_back(positions[i]);
      l.columns.push_back(sel.columns[positions[i]]);
      if ((i + 1) % block_size == 0 || i + 1 == positions.size())
        l.block_end.push_back(l.order.size());
    }
    l.chromosome_blocks.emplace_back(first, l.block_end.size());
  }
  if (l.order.empty())
    throw error(errc::invalid_argument,
                "wgr: no selected column is on chromosomes 1-22 or X (" + s.path().string() + ")");
  return l;
}

// The level-0 blocks fitted beside the pass, while it gathers the next: 0 when the pass fits
// each block itself before gathering the next. A block's fit is its own, so the results do not
// depend on it. With K folds a fit is K tasks, and gathering is a small part of the work
// (about n·c per column against the fit's n·b/2 and more): the pass fits the block itself
// unless the threads outnumber the folds, then two beside it. Leave-one-out's
// eigendecomposition is one task: two beside the pass with two threads or more. Each block
// beside the pass costs a block's memory.
std::size_t blocks_fitted_beside(bool leave_one_out, std::size_t folds, std::size_t threads) {
  if (threads < 2) return 0;
  return leave_one_out || threads > folds ? 2 : 0;
}

// The columns of the widest block: what the memory of a block in flight grows with.
std::size_t widest_block(const wgr_layout& layout) {
  std::size_t widest = 0, begin = 0;
  for (const std::size_t end : layout.block_end) {
    widest = std::max(widest, end - begin);
    begin = end;
  }
  return widest;
}

// Level 0 over the stream: each column standardised, adjusted and scaled into its block; each
// full block's predictions, fitted by a task of its own, into every trait's predictor matrix.
class level0_pass {
 public:
  // Fits blocks [first_block, …) of the layout: the pass streams their columns from there.
  level0_pass(const store& s, const selection& sel, const wgr_samples& samples,
              const wgr_layout& layout, const detail::sample_folds* folds, const wgr_options& o,
              std::size_t columns, std::size_t first_block)
      : store_(s),
        samples_(samples),
        layout_(layout),
        folds_(folds),
        columns_(s, sel, samples.used),
        lambdas_(shrinkages(o.level0_h2, columns)),
        full_(s.num_rows()),
        w_(static_cast<std::size_t>(samples.y.cols()),
           static_cast<Eigen::Index>(samples.rows.size()),
           static_cast<Eigen::Index>(layout.block_end.size() * lambdas_.size()), o.spill_directory),
        block_(first_block),
        first_entry_(first_block == 0 ? 0 : layout.block_end[first_block - 1]),
        fitted_beside_(blocks_fitted_beside(folds == nullptr, folds ? folds->count() : 0,
                                            detail::allowed_threads())) {}

  // The kernel of the pass: column `v` is entry v.position of the layout's order, counted
  // from the first block's.
  bool add(const column_view<double>& v) {
    const std::size_t entry = first_entry_ + v.position;
    const std::size_t block_first = block_ == 0 ? 0 : layout_.block_end[block_ - 1];
    if (entry == block_first)
      g_.resize(static_cast<Eigen::Index>(samples_.rows.size()),
                static_cast<Eigen::Index>(layout_.block_end[block_] - block_first));
    put(layout_.order[entry], v, g_.col(static_cast<Eigen::Index>(entry - block_first)));
    if (entry + 1 == layout_.block_end[block_]) finish_block();
    return true;
  }

  // Waits for the blocks still being fitted; rethrows a fit's error.
  void finish() { fitting_.wait(); }

  level0_pass(const level0_pass&) = delete;
  level0_pass& operator=(const level0_pass&) = delete;
  ~level0_pass() {
    fitting_.cancel();
    try {
      fitting_.wait();
    } catch (...) {  // the pass already failed or finished; its error is the one reported
    }
  }

  std::size_t constant_columns() const noexcept { return constant_; }
  detail::wgr_predictors& predictors() noexcept { return w_; }

 private:
  void put(std::size_t p, const column_view<double>& v, Eigen::Ref<Eigen::VectorXd> out) {
    columns_.learn(p, v);
    if (columns_.constant(p)) {
      out.setZero();
      ++constant_;
      return;
    }
    columns_.values(p, v, full_.data());
    for (std::size_t i = 0; i < samples_.rows.size(); ++i)
      out[static_cast<Eigen::Index>(i)] = full_[samples_.rows[i]];
    // z has SD 1 before the covariates are projected out: a relative test of what is left.
    if (!(detail::adjust_and_scale(samples_.basis, out) > 1e-6)) {
      out.setZero();
      ++constant_;
    }
  }

  void finish_block() {
    // The pass never returns to these columns: their frames leave the resident set.
    const std::size_t first = block_ == 0 ? 0 : layout_.block_end[block_ - 1];
    store_.drop_pages(layout_.columns[first], layout_.columns[layout_.block_end[block_] - 1]);
    if (fitted_beside_ == 0) {
      fit_block(g_, block_++);
      return;
    }
    if (++fitting_count_ > fitted_beside_) {
      fitting_.wait();
      fitting_count_ = 1;
    }
    fitting_.run([this, g = std::move(g_), block = block_] { fit_block(g, block); });
    ++block_;
  }

  void fit_block(const matrix& g, std::size_t block) {
    const auto traits = samples_.y.cols();
    const auto r = static_cast<Eigen::Index>(lambdas_.size());
    matrix predictions(g.rows(), r * traits);
    if (folds_)
      detail::level0_block(g, samples_.y, *folds_, lambdas_, predictions);
    else
      detail::level0_block_loo(g, samples_.y, lambdas_, predictions);
    Eigen::VectorXd column;
    for (Eigen::Index p = 0; p < traits; ++p)
      for (Eigen::Index j = 0; j < r; ++j) {
        column = predictions.col(j * traits + p);
        detail::standardize_predictor(column, samples_.observed[static_cast<std::size_t>(p)]);
        w_.put(static_cast<std::size_t>(p), static_cast<Eigen::Index>(block) * r + j, column);
      }
  }

  const store& store_;
  const wgr_samples& samples_;
  const wgr_layout& layout_;
  const detail::sample_folds* folds_;  // null: leave-one-out
  detail::standardized_columns columns_;
  std::vector<double> lambdas_;
  std::vector<double> full_;
  matrix g_;
  detail::wgr_predictors w_;
  std::size_t block_, first_entry_, constant_ = 0;
  std::size_t fitted_beside_, fitting_count_ = 0;  // blocks run since the last wait
  tbb::task_group fitting_;
};

}  // namespace

std::vector<double> heritability_grid(std::size_t count) {
  if (count < 2) throw error(errc::invalid_argument, "wgr: a grid needs at least 2 values");
  std::vector<double> h2{0.01};
  for (std::size_t i = 1; i + 1 < count; ++i)
    h2.push_back(static_cast<double>(i) / static_cast<double>(count - 1));
  h2.push_back(0.99);
  return h2;
}

int wgr_chromosome(const std::string& code) noexcept { return autosome_or_x_number(code); }

wgr_plan plan_wgr(const store& s, const selection& sel, const phenotype_table& traits,
                  const phenotype_table* covariates, const wgr_options& options,
                  std::size_t threads) {
  check_options(options);
  const wgr_layout layout = lay_out(s, sel, options);
  wgr_plan plan;
  const std::vector<std::size_t> rows = usable_rows(sel, traits, covariates);
  plan.samples = rows.size();
  plan.traits = traits.names.size();
  plan.columns = layout.order.size();
  plan.blocks = layout.block_end.size();
  plan.predictors = plan.blocks * options.level0_h2.size();
  const auto n = static_cast<std::uint64_t>(plan.samples), p = std::uint64_t{plan.traits},
             c = std::uint64_t{plan.predictors}, k = std::uint64_t{options.folds},
             b = std::uint64_t{widest_block(layout)}, r = std::uint64_t{options.level0_h2.size()};
  plan.predictor_bytes = 8 * p * n * c;
  if (!options.spill_directory.empty()) {
    plan.spill_bytes = plan.predictor_bytes;
    plan.predictor_bytes = 8 * n * c;
  }
  const bool any_case_control = has_case_control(options);
  const auto t = std::uint64_t{threads};
  const auto chunk = static_cast<std::uint64_t>(detail::loo_chunk_rows),
             logistic_rows = static_cast<std::uint64_t>(detail::logistic_chunk_rows);
  plan.leave_one_out = leave_one_out(options, plan.samples);
  // The blocks held (those fitted beside the pass and the one it gathers), and those being
  // fitted, each with its predictions and products.
  const std::uint64_t beside = blocks_fitted_beside(plan.leave_one_out, options.folds, threads);
  const std::uint64_t held = beside + 1, at_once = std::max<std::uint64_t>(beside, 1);
  if (plan.leave_one_out) {  // wgr.hpp: the products in parts, their sum and eigenvectors
    plan.level0_bytes = 8 * (held * n * b + at_once * (n * r * p + 6 * b * b) + 2 * t * chunk * b);
    plan.level1_bytes = 8 * (6 * c * c + 2 * t * chunk * c);
    if (any_case_control) plan.level1_bytes += 8 * logistic_rows * c;
  } else {
    // The folds' products, and each running factorisation's sum: a task per fold and
    // shrinkage at level 0, per fold at level 1.
    plan.level0_bytes =
        8 * (held * n * b + at_once * (n * r * p + (k + std::min(t, k * r)) * b * b));
    plan.level1_bytes = 8 * (k + std::min(t, k)) * c * c;
    if (any_case_control)  // each running fold's scaled rows (wgr_ridge_internal.hpp)
      plan.level1_bytes += 8 * std::min(t, k) * logistic_rows * c;
  }
  // A case/control trait missing some values fits a copy of its samples' predictors.
  for (std::size_t q = 0; q < options.case_control.size(); ++q)
    if (options.case_control[q] && std::any_of(rows.begin(), rows.end(), [&](std::size_t row) {
          return std::isnan(
              traits.values(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(q)));
        })) {
      plan.level1_bytes += 8 * n * c;
      break;
    }
  const std::uint64_t covariate_count = 1 + (covariates ? covariates->names.size() : 0);
  plan.fixed_bytes = 8 * (n * (covariate_count + p) + s.num_rows());
  return plan;
}

namespace {

// Each case/control trait's statuses and folds, checked before the pass, which they do not
// need; marks the traits in `traits`.
std::vector<case_control_trait> case_control_statuses(const phenotype_table& values,
                                                      const wgr_samples& samples,
                                                      const wgr_options& options,
                                                      const detail::sample_folds* folds,
                                                      std::vector<wgr_trait>& traits) {
  std::vector<case_control_trait> statuses(traits.size());
  for (std::size_t p = 0; p < options.case_control.size(); ++p) {
    traits[p].case_control = options.case_control[p];
    if (options.case_control[p])
      statuses[p] = case_control_inputs(values, static_cast<Eigen::Index>(p), samples, folds);
  }
  return statuses;
}

// This process's blocks [first, end): on several processes each fits a contiguous share; a
// block's fit is its own, so gathering the predictors gives every process the bits of one.
std::pair<std::size_t, std::size_t> own_blocks(std::size_t blocks, communicator* processes) {
  if (!distributed(processes)) return {0, blocks};
  const auto ranks = static_cast<std::size_t>(processes->size()),
             rank = static_cast<std::size_t>(processes->rank());
  return {even_share(blocks, rank, ranks), even_share(blocks, rank + 1, ranks)};
}

// Streams this process's blocks through `level0`; the pass and the constant columns (of every
// process) into `result`.
void run_level0(const store& s, const wgr_layout& layout, std::size_t first_block,
                std::size_t end_block, level0_pass& level0, const analysis_options& analysis,
                wgr_result& result) {
  const auto entry = [&](std::size_t block) {
    return block == 0 ? 0 : layout.block_end[block - 1];
  };
  const std::vector<std::size_t> columns(
      layout.columns.begin() + static_cast<std::ptrdiff_t>(entry(first_block)),
      layout.columns.begin() + static_cast<std::ptrdiff_t>(entry(end_block)));
  analysis_options alone = analysis;
  alone.processes = nullptr;
  detail::analysis_stream stream(s, alone, s.type() != value_type::genotype, "wgr level 0");
  result.pass =
      stream.columns.run(columns, [&](const column_view<double>& v) { return level0.add(v); });
  level0.finish();
  result.constant_columns = level0.constant_columns();
  if (distributed(analysis.processes)) {
    double constant = 0;
    for (const double c :
         all_gather_one(*analysis.processes, static_cast<double>(result.constant_columns)))
      constant += c;
    result.constant_columns = static_cast<std::size_t>(constant);
  }
}

// Level 1 and the LOCO predictions of each trait in turn, its predictors freed once it is done.
void run_level1(const wgr_samples& samples, const wgr_layout& layout, level0_pass& level0,
                const std::vector<case_control_trait>& statuses, const detail::sample_folds* folds,
                const wgr_options& options, const analysis_options& analysis, wgr_result& result) {
  const std::size_t r = options.level0_h2.size();
  std::vector<std::pair<Eigen::Index, Eigen::Index>> ranges;
  for (const auto& [first, end] : layout.chromosome_blocks)
    ranges.emplace_back(static_cast<Eigen::Index>(first * r), static_cast<Eigen::Index>(end * r));
  const std::vector<double> taus = shrinkages(options.level1_h2, result.blocks * r);
  // The logistic model's latent scale has variance π²/3: regenie's level-1 shrinkage for a
  // case/control trait is τ · 3/π².
  std::vector<double> logistic_taus = taus;
  for (double& tau : logistic_taus) tau *= 3 / (std::numbers::pi * std::numbers::pi);
  for (std::size_t p = 0; p < result.traits.size(); ++p) {
    wgr_trait& t = result.traits[p];
    const Eigen::VectorXd y = samples.y.col(static_cast<Eigen::Index>(p));
    throw_if_stop_requested();
    const matrix w = gathered(level0.predictors().take(p), analysis.processes, result.blocks, r);
    detail::level1_fit fit;
    if (t.case_control) {
      fit = case_control_level1(w, statuses[p], folds, logistic_taus, ranges,
                                options.level1_full_fit);
      t.level1_tau = logistic_taus;
      t.cv_r2 = std::numeric_limits<double>::quiet_NaN();
    } else {
      fit = folds ? detail::level1_ridge(w, y, *folds, taus, ranges)
                  : detail::level1_ridge_loo(w, y, taus, ranges);
      t.level1_tau = taus;
      t.cv_r2 = 1 - fit.loss[fit.chosen] * static_cast<double>(y.size()) / y.squaredNorm();
    }
    t.level1_loss = std::move(fit.loss);
    t.chosen = fit.chosen;
    t.loco = std::move(fit.loco);
  }
}

}  // namespace

wgr_result whole_genome_regression(const store& s, const selection& sel,
                                   const phenotype_table& traits, const phenotype_table* covariates,
                                   const wgr_options& options, const analysis_options& analysis) {
  check_options(options);
  if (traits.names.empty()) throw error(errc::invalid_argument, "wgr: no trait");
  if (!options.case_control.empty() && options.case_control.size() != traits.names.size())
    throw error(errc::invalid_argument, "wgr: case_control needs one entry per trait");
  wgr_result result;
  const wgr_samples samples = set_up_samples(sel, traits, covariates, options, result.traits);
  result.leave_one_out = leave_one_out(options, samples.rows.size());
  std::optional<detail::sample_folds> folds;
  if (!result.leave_one_out) {
    folds.emplace(samples.rows.size(), options.folds);
    result.fold_starts = folds->starts();
  }
  const detail::sample_folds* fold_plan = folds ? &*folds : nullptr;
  const std::vector<case_control_trait> statuses =
      case_control_statuses(traits, samples, options, fold_plan, result.traits);
  const wgr_layout layout = lay_out(s, sel, options);
  result.rows = samples.rows;
  result.covariates = static_cast<std::size_t>(samples.basis.cols());
  result.columns = layout.order.size();
  result.left_out_columns = layout.left_out;
  result.blocks = layout.block_end.size();

  const auto [first_block, end_block] = own_blocks(result.blocks, analysis.processes);
  level0_pass level0(s, sel, samples, layout, fold_plan, options, result.columns, first_block);
  run_level0(s, layout, first_block, end_block, level0, analysis, result);
  run_level1(samples, layout, level0, statuses, fold_plan, options, analysis, result);
  return result;
}

}  // namespace colflow
