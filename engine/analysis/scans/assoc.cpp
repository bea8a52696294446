// The quantitative scan of `colflow assoc`: least squares per column and phenotype, with the
// covariates projected out once per group of phenotypes that share their samples.
#include "colflow/analysis/assoc.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <optional>

#include "analysis/scans/assoc_internal.hpp"
#include "analysis/scans/column_blocks_internal.hpp"
#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/column_share_internal.hpp"
#include "colflow/analysis/case_control.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow {
namespace {

// Phenotypes that use the same samples share one projection of the covariates and one set of
// per-column sums.
struct sample_group {
  std::vector<std::uint8_t> in;    // per store row: used by these phenotypes
  std::vector<std::uint8_t> mask;  // the same, packed like genotype codes
  std::size_t n = 0;               // samples used
  std::size_t k = 1;               // columns of the covariate basis: intercept + covariates
  double q0 = 0;                   // the intercept's basis vector: 1/sqrt(n) on the samples
  // rows x (k−1 + phenotypes): the orthonormal basis of the covariates without the
  // intercept, then each phenotype with the covariates (and intercept) projected out; zero
  // on the rows the group does not use.
  Eigen::MatrixXd w;
  std::vector<std::size_t> phenotypes;  // indices into the phenotype table
  std::vector<double> yy;               // squared norm of each projected phenotype
  // Without covariates: w again, row by row (rows x phenotypes).
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> w_rows;
  std::optional<dosage_vectors> products;  // w made ready for dosage_dots (genotype stores)
};

// Sums of one column over one group's samples with a call.
struct column_sums {
  std::uint64_t n_obs = 0;
  double sx = 0, sxx = 0;
  bool constant = false;
  const std::vector<std::size_t>* missing = nullptr;  // group rows with no call
  const double* dots = nullptr;  // the column (0 where missing) times each column of w
};

// Removes from `v` its projection on the orthonormal vectors before column `upto` of `w`
// and on the intercept vector (q0 on the group's rows): twice, for orthogonality to working
// precision (Gram-Schmidt with re-orthogonalisation).
void project_out(const sample_group& g, Eigen::Index upto, Eigen::Ref<Eigen::VectorXd> v) {
  const Eigen::Index rows = v.size();
  for (int pass = 0; pass < 2; ++pass) {
    double s = 0;
    for (Eigen::Index i = 0; i < rows; ++i)
      if (g.in[static_cast<std::size_t>(i)]) s += v[i];
    const double c = s * g.q0;
    for (Eigen::Index i = 0; i < rows; ++i)
      if (g.in[static_cast<std::size_t>(i)]) v[i] -= c * g.q0;
    for (Eigen::Index j = 0; j < upto; ++j) v -= g.w.col(j).dot(v) * g.w.col(j);
  }
}

std::vector<sample_group> make_groups(const selection& sel, const phenotype_table& ph,
                                      const phenotype_table* cov) {
  const std::size_t rows = sel.row_kept.size();
  const Eigen::Index nc = cov ? cov->values.cols() : 0;
  std::vector<sample_group> groups;
  for (Eigen::Index p = 0; p < ph.values.cols(); ++p) {
    std::vector<std::uint8_t> in(rows, 0);
    std::size_t n = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      bool use = sel.row_kept[i] && !std::isnan(ph.values(r, p));
      for (Eigen::Index c = 0; use && c < nc; ++c) use = !std::isnan(cov->values(r, c));
      in[i] = use;
      n += use;
    }
    if (n == 0)
      throw error(
          errc::invalid_argument,
          "phenotype " + ph.names[static_cast<std::size_t>(p)] +
              (ph.file.empty() ? "" : " of " + ph.file.string()) +
              " has no selected sample with a value" +
              (nc ? " and every covariate" + (cov->file.empty() ? "" : " of " + cov->file.string())
                  : "") +
              " (" + std::to_string(ph.matched_samples) + " of the file's " +
              std::to_string(ph.file_samples) + " samples are in the store)");
    // Phenotypes are few: a linear search for one with the same samples is enough.
    std::size_t at = 0;
    while (at < groups.size() && groups[at].in != in) ++at;
    if (at == groups.size()) {
      sample_group g;
      g.in = std::move(in);
      g.n = n;
      groups.push_back(std::move(g));
    }
    groups[at].phenotypes.push_back(static_cast<std::size_t>(p));
  }

  for (sample_group& g : groups) {
    g.mask = make_sample_mask(g.in);
    g.k = 1 + static_cast<std::size_t>(nc);
    if (g.n <= g.k + 1)
      throw error(errc::invalid_argument,
                  "phenotype " + ph.names[g.phenotypes.front()] + " has " + std::to_string(g.n) +
                      " usable sample(s), not more than the " + std::to_string(g.k + 1) +
                      " coefficients of its model (intercept, column" +
                      (nc ? ", covariates)" : ")"));
    g.q0 = 1.0 / std::sqrt(static_cast<double>(g.n));
    const auto basis = static_cast<Eigen::Index>(g.k - 1);
    // Every column is written whole below (zero on the rows the group does not use), so the
    // matrix is not zeroed first: its pages are touched once, by the threads that fill it.
    g.w.resize(static_cast<Eigen::Index>(rows),
               basis + static_cast<Eigen::Index>(g.phenotypes.size()));
    for (Eigen::Index c = 0; c < nc; ++c) {
      Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows));
      for (std::size_t i = 0; i < rows; ++i)
        if (g.in[i]) v[static_cast<Eigen::Index>(i)] = cov->values(static_cast<Eigen::Index>(i), c);
      const double before = v.norm();
      project_out(g, c, v);
      const double norm = v.norm();
      if (!(norm > 1e-9 * before))
        throw error(errc::invalid_argument,
                    "covariate " + cov->names[static_cast<std::size_t>(c)] +
                        " is constant or a combination of the others among the " +
                        std::to_string(g.n) + " samples of phenotype " +
                        ph.names[g.phenotypes.front()]);
      g.w.col(c) = v / norm;
    }
    // Each phenotype is projected on its own (the same arithmetic alone or among others),
    // so they go across threads.
    g.yy.resize(g.phenotypes.size());
    tbb::parallel_for(std::size_t{0}, g.phenotypes.size(), [&](std::size_t q) {
      const Eigen::Index col = basis + static_cast<Eigen::Index>(q);
      const auto p = static_cast<Eigen::Index>(g.phenotypes[q]);
      for (std::size_t i = 0; i < rows; ++i) {
        const auto r = static_cast<Eigen::Index>(i);
        g.w(r, col) = g.in[i] ? ph.values(r, p) : 0.0;
      }
      project_out(g, basis, g.w.col(col));
      g.yy[q] = g.w.col(col).squaredNorm();
    });
    // Without covariates, test_column reads the phenotypes of the samples without a call row
    // by row; with covariates it reads w itself.
    if (g.k == 1) {
      const std::size_t np = g.phenotypes.size();
      g.w_rows.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(np));
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 4096),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t q = 0; q < np; ++q) {
                            const double* from = g.w.col(static_cast<Eigen::Index>(q)).data();
                            for (std::size_t i = r.begin(); i != r.end(); ++i)
                              g.w_rows.data()[i * np + q] = from[i];
                          }
                        });
    }
  }
  return groups;
}

// Two-sided p of t with df degrees of freedom: the regularised incomplete beta
// I_{df/(df+t²)}(df/2, 1/2), evaluated in double to about 1e-15 relative: Boost's default
// promotes to long double, x87 arithmetic far slower than double's, for digits no table prints.
double two_sided_p(double t, double df) {
  if (!std::isfinite(t)) return 0.0;
  using double_precision =
      boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  const double t2 = t * t;
  // For small t, 1 - I_{t²/(df+t²)}(1/2, df/2) keeps the precision that df/(df+t²) ≈ 1 loses.
  if (t2 < df) return boost::math::ibetac(0.5, df / 2.0, t2 / (df + t2), double_precision{});
  return boost::math::ibeta(df / 2.0, 0.5, df / (df + t2), double_precision{});
}

// The tests of one column for the phenotypes of one group: the regression of each projected
// phenotype on [x, basis] over the samples with a call. With the basis Q orthonormal on the
// group's samples, leaving out the rows M without a call turns QᵀQ into G = I − Q_MᵀQ_M and
// Qᵀỹ into v = −Q_Mᵀỹ_M; a Schur complement then gives the coefficient of x.
void test_column(const sample_group& g, const column_sums& s, assoc_result* out) {
  const auto k = static_cast<Eigen::Index>(g.k);
  const auto& missing = *s.missing;
  const auto nm = static_cast<Eigen::Index>(missing.size());
  Eigen::VectorXd u(k);
  u[0] = s.sx * g.q0;
  for (Eigen::Index j = 1; j < k; ++j) u[j] = s.dots[j - 1];

  Eigen::MatrixXd qm;  // basis rows of the samples without a call
  Eigen::LDLT<Eigen::MatrixXd> g_inv;
  // Without covariates G is the scalar 1 − |M|/n: the common case gets no matrix at all.
  const double g1 = 1.0 - static_cast<double>(nm) * g.q0 * g.q0;
  bool covariates_collinear = false;
  double xt = 0;  // x'x with the basis projected out
  if (nm == 0) {
    xt = s.sxx - u.squaredNorm();
  } else if (k == 1) {
    xt = s.sxx - u[0] * u[0] / g1;
  } else {
    qm.resize(nm, k);
    for (Eigen::Index r = 0; r < nm; ++r) {
      const auto row = static_cast<Eigen::Index>(missing[static_cast<std::size_t>(r)]);
      qm(r, 0) = g.q0;
      for (Eigen::Index j = 1; j < k; ++j) qm(r, j) = g.w(row, j - 1);
    }
    const Eigen::MatrixXd gram = Eigen::MatrixXd::Identity(k, k) - qm.transpose() * qm;
    g_inv.compute(gram);
    // Without this column's missing samples the covariates may lose rank (a binary covariate
    // left constant, say): the model is then not estimable as specified, as PLINK 2 reports
    // (VIF_INFINITE), and xt would be noise. G's pivots measure it: 1 is full rank.
    if (g_inv.vectorD().minCoeff() < 1e-9) covariates_collinear = true;
    xt = s.sxx - u.dot(g_inv.solve(u));
  }

  // Without covariates the samples without a call enter only through each phenotype's sum
  // and sum of squares over them: one pass over their rows of w, stored row by row.
  thread_local std::vector<double> missing_sum, missing_squares;
  if (nm > 0 && k == 1) {
    const std::size_t np = g.phenotypes.size();
    missing_sum.assign(np, 0.0);
    missing_squares.assign(np, 0.0);
    for (std::size_t row : missing) {
      const double* w = g.w_rows.data() + row * np;
      for (std::size_t q = 0; q < np; ++q) {
        missing_sum[q] += w[q];
        missing_squares[q] += w[q] * w[q];
      }
    }
  }
  const double n_obs = static_cast<double>(s.n_obs);
  const double centred = s.n_obs > 0 ? s.sxx - s.sx * s.sx / n_obs : 0.0;
  const double df = n_obs - static_cast<double>(k) - 1.0;
  for (std::size_t q = 0; q < g.phenotypes.size(); ++q) {
    assoc_result& r = out[g.phenotypes[q]];
    r = assoc_result{};
    r.n_obs = s.n_obs;
    if (s.constant) {
      r.status = assoc_status::constant;
      continue;
    }
    if (df < 1.0) {
      r.status = assoc_status::too_few_samples;
      continue;
    }
    if (covariates_collinear || !(xt > 1e-8 * centred)) {
      r.status = assoc_status::collinear;
      continue;
    }
    const auto col = static_cast<Eigen::Index>(g.k - 1 + q);
    const double a = s.dots[col];
    double xy = a, yy = g.yy[q];
    if (nm > 0 && k == 1) {
      const double v = -g.q0 * missing_sum[q], gv = v / g1;
      xy -= u[0] * gv;
      yy -= missing_squares[q] + v * gv;
    } else if (nm > 0) {
      Eigen::VectorXd ym(nm);
      for (Eigen::Index m = 0; m < nm; ++m)
        ym[m] = g.w(static_cast<Eigen::Index>(missing[static_cast<std::size_t>(m)]), col);
      const Eigen::VectorXd v = -(qm.transpose() * ym);
      const Eigen::VectorXd gv = g_inv.solve(v);
      xy -= u.dot(gv);
      yy -= ym.squaredNorm() + v.dot(gv);
    }
    r.beta = xy / xt;
    const double rss = std::max(yy - r.beta * xy, 0.0);
    r.se = std::sqrt(rss / df / xt);
    r.t_stat = r.beta / r.se;
    r.p = two_sided_p(r.t_stat, df);
  }
}

// Dense columns, one at a time: the sums over the values, then Wᵀx for each group.
pass_stats scan_dense(column_stream<double>& stream, const selection& sel,
                      const std::vector<sample_group>& groups, std::size_t np,
                      const assoc_sink& sink) {
  const std::size_t rows = sel.row_kept.size();
  std::vector<assoc_result> results(np);
  std::vector<std::size_t> missing;
  std::vector<double> dots;
  Eigen::VectorXd x0(static_cast<Eigen::Index>(rows));
  return stream.run(sel.columns, [&](const column_view<double>& v) {
    for (const sample_group& g : groups) {
      column_sums cs;
      missing.clear();
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (std::size_t i = 0; i < rows; ++i) {
        const double x = v.values[static_cast<Eigen::Index>(i)];
        const bool call = !std::isnan(x);
        x0[static_cast<Eigen::Index>(i)] = call ? x : 0.0;
        if (!g.in[i]) continue;
        if (!call) {
          missing.push_back(i);
          continue;
        }
        ++cs.n_obs;
        cs.sx += x;
        cs.sxx += x * x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      cs.constant = !(lo < hi);
      dots.resize(static_cast<std::size_t>(g.w.cols()));
      Eigen::Map<Eigen::VectorXd>(dots.data(), g.w.cols()).noalias() = g.w.transpose() * x0;
      cs.missing = &missing;
      cs.dots = dots.data();
      test_column(g, cs, results.data());
    }
    sink(v.position, v.column, results);
    return true;
  });
}

// A task's share of a block of genotype columns: `task` columns share each chunk of the
// phenotypes while it sits in cache, and tiles of them each load of it.
constexpr std::size_t task = 20;  // four tiles of the widest product kernel

// What a task of a genotype block reuses from block to block.
struct task_scratch {
  std::vector<double> dots;
  std::vector<std::size_t> missing[task];
};

// Every group's sums and dot products for columns [c0, c0 + count) of a block (count ≤ task),
// then their tests, into results (phenotypes per column, from the block's first).
void test_genotype_task(const std::vector<sample_group>& groups, const detail::column_block& block,
                        std::size_t c0, std::size_t count, task_scratch& sc, std::size_t np,
                        assoc_result* results) {
  const std::size_t rows = block.rows();
  const std::uint8_t* columns[task];
  for (std::size_t c = 0; c < count; ++c) columns[c] = block.codes(c0 + c).data();
  for (const sample_group& g : groups) {
    const auto m = static_cast<std::size_t>(g.w.cols());
    sc.dots.resize(count * m);
    dosage_dots(columns, count, *g.products, sc.dots.data());
    for (std::size_t c = 0; c < count; ++c) {
      const std::span<const std::uint8_t> col = block.codes(c0 + c);
      const genotype_counts gc = count_genotypes(col, rows, g.mask, g.n);
      column_sums cs;
      cs.n_obs = g.n - gc.missing;
      cs.sx = static_cast<double>(2 * gc.hom_a1 + gc.het);
      cs.sxx = static_cast<double>(4 * gc.hom_a1 + gc.het);
      cs.constant = (gc.hom_a1 > 0) + (gc.het > 0) + (gc.hom_a2 > 0) <= 1;
      sc.missing[c].clear();
      if (gc.missing > 0) missing_rows(col, rows, g.mask, sc.missing[c]);
      cs.missing = &sc.missing[c];
      cs.dots = sc.dots.data() + c * m;
      test_column(g, cs, results + (c0 + c) * np);
    }
  }
}

// Genotype columns travel in blocks (column_blocks_internal.hpp): every group's sums and dot
// products are computed for a whole block, `task` columns per task across the threads.
pass_stats scan_genotypes(column_stream<double>& stream, const selection& sel,
                          std::vector<sample_group>& groups, std::size_t np,
                          const assoc_sink& sink) {
  const std::size_t rows = sel.row_kept.size();
  // Each group's vectors are laid out for the product kernel once, for every block.
  for (sample_group& g : groups)
    g.products.emplace(g.w.data(), rows, rows, static_cast<std::size_t>(g.w.cols()));
  // About 4 MiB of codes per block (16 to 256 columns): large enough that the threads'
  // share of a block dwarfs the cost of meeting at its end.
  const std::size_t block_columns =
      std::clamp<std::size_t>((std::size_t{4} << 20) / genotype_column_bytes(rows), 16, 256) /
      task * task;
  detail::column_block block(block_columns, rows, true);
  std::vector<task_scratch> scratch(block_columns / task);
  const auto tests = [&](const detail::column_block& b, std::span<assoc_result> results) {
    tbb::parallel_for(std::size_t{0}, (b.size() + task - 1) / task, [&](std::size_t t) {
      test_genotype_task(groups, b, t * task, std::min(task, b.size() - t * task), scratch[t], np,
                         results.data());
    });
  };
  return detail::scan_in_blocks(stream, sel.columns, block, np, tests, sink);
}

}  // namespace

namespace detail {

assoc_summary distributed_association(const store& s, const selection& sel, std::size_t phenotypes,
                                      const assoc_sink& sink, const analysis_options& options,
                                      const local_association& local) {
  const scan_part part = part_of_scan(s, sel, options);
  constexpr std::size_t width = 7;  // n_obs, beta, se, t_stat, p, status, firth
  std::vector<double> records;
  records.reserve(width * phenotypes * part.columns.columns.size());
  const assoc_summary summary = local(
      part.columns,
      [&](std::size_t, std::size_t, std::span<const assoc_result> results) {
        for (const assoc_result& r : results)
          records.insert(records.end(), {static_cast<double>(r.n_obs), r.beta, r.se, r.t_stat, r.p,
                                         static_cast<double>(r.status), r.firth ? 1.0 : 0.0});
      },
      part.alone);
  const std::vector<double> all =
      gather_records(part.share, *options.processes, records, width * phenotypes);
  std::vector<assoc_result> results(phenotypes);
  for (std::size_t k = 0; k < sel.columns.size(); ++k) {
    for (std::size_t q = 0; q < phenotypes; ++q) {
      const double* x = all.data() + width * (k * phenotypes + q);
      results[q] = {static_cast<std::uint64_t>(x[0]),
                    x[1],
                    x[2],
                    x[3],
                    x[4],
                    static_cast<assoc_status>(static_cast<int>(x[5])),
                    x[6] != 0};
    }
    sink(k, sel.columns[k], results);
  }
  return summary;
}

void check_association_inputs(const store& s, const selection& sel,
                              const phenotype_table& phenotypes,
                              const phenotype_table* covariates) {
  const std::size_t rows = s.num_rows();
  if (static_cast<std::size_t>(phenotypes.values.rows()) != rows ||
      (covariates && static_cast<std::size_t>(covariates->values.rows()) != rows) ||
      sel.row_kept.size() != rows)
    throw error(errc::invalid_argument, s.path().string() +
                                            ": phenotypes, covariates and selection must have "
                                            "one row per sample of the store");
  if (phenotypes.values.cols() == 0) throw error(errc::invalid_argument, "no phenotype to test");
}

double two_sided_normal_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

}  // namespace detail

std::string_view assoc_status_name(assoc_status s) noexcept {
  switch (s) {
    case assoc_status::ok:
      return ".";
    case assoc_status::constant:
      return "CONST_COLUMN";
    case assoc_status::too_few_samples:
      return "TOO_FEW_SAMPLES";
    case assoc_status::collinear:
      return "COLLINEAR";
    case assoc_status::not_converged:
      return "NOT_CONVERGED";
  }
  return "?";
}

assoc_summary linear_association(const store& s, const selection& sel,
                                 const phenotype_table& phenotypes,
                                 const phenotype_table* covariates, const assoc_sink& sink,
                                 const analysis_options& options, std::span<const sample_sex> sex) {
  detail::check_association_inputs(s, sel, phenotypes, covariates);
  if (!sex.empty() && detail::selects_sex_chromosomes(s, sel))
    return detail::scan_with_sex_chromosomes(
        s, sel, covariates, sex, static_cast<std::size_t>(phenotypes.values.cols()), sink,
        [&](const selection& run, const phenotype_table* run_covariates,
            std::span<const std::size_t> only, const assoc_sink& to) {
          if (only.empty())
            return linear_association(s, run, phenotypes, run_covariates, to, options);
          return linear_association(s, run, select_phenotypes(phenotypes, only), run_covariates, to,
                                    options);
        });
  if (distributed(options.processes))
    return detail::distributed_association(
        s, sel, static_cast<std::size_t>(phenotypes.values.cols()), sink, options,
        [&](const selection& part, const assoc_sink& local_sink, const analysis_options& alone) {
          return linear_association(s, part, phenotypes, covariates, local_sink, alone);
        });
  std::vector<sample_group> groups = make_groups(sel, phenotypes, covariates);

  assoc_summary summary;
  summary.covariates = covariates ? static_cast<std::size_t>(covariates->values.cols()) : 0;
  summary.samples_used.resize(static_cast<std::size_t>(phenotypes.values.cols()));
  for (const sample_group& g : groups)
    for (std::size_t p : g.phenotypes) summary.samples_used[p] = g.n;

  const bool genotype = s.type() == value_type::genotype;
  detail::analysis_stream stream(s, options, !genotype, "assoc");
  const std::size_t np = summary.samples_used.size();
  summary.pass = genotype ? scan_genotypes(stream.columns, sel, groups, np, sink)
                          : scan_dense(stream.columns, sel, groups, np, sink);
  return summary;
}

}  // namespace colflow
