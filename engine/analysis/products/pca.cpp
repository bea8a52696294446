// The principal components of `colflow pca`: a randomised SVD of the standardised selection,
// streamed in blocks of columns.
#include "colflow/analysis/pca.hpp"

#include <Random123/philox.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Random123/uniform.hpp>
#include <cmath>
#include <numbers>

#include "analysis/shared/analysis_stream_internal.hpp"
#include "analysis/shared/column_segments_internal.hpp"
#include "analysis/shared/selected_stats_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/dense_kernels_internal.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow {
namespace {

using matrix = Eigen::MatrixXd;

// Entries of the random sketch: standard normals keyed by (seed, column, entry), so that the
// sketch does not depend on the order or grouping in which columns arrive.
class sketch_entries {
 public:
  explicit sketch_entries(std::uint64_t seed)
      : key_{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}} {}

  // Fills row `out` (length l) of the sketch for store column j.
  void fill(std::size_t j, Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> out) const {
    const auto l = out.size();
    for (Eigen::Index c = 0; c < l; c += 2) {
      const auto r =
          philox_(r123::Philox4x32::ctr_type{{static_cast<std::uint32_t>(j),
                                              static_cast<std::uint32_t>(std::uint64_t(j) >> 32),
                                              static_cast<std::uint32_t>(c / 2), 0x5ca1ab1e}},
                  key_);
      // Box-Muller on two uniforms in (0, 1].
      const double u1 = r123::u01<double>(r[0]), u2 = r123::u01<double>(r[1]);
      const double radius = std::sqrt(-2.0 * std::log(u1));
      out[c] = radius * std::cos(2.0 * std::numbers::pi * u2);
      if (c + 1 < l) out[c + 1] = radius * std::sin(2.0 * std::numbers::pi * u2);
    }
  }

 private:
  r123::Philox4x32 philox_;
  r123::Philox4x32::key_type key_;
};

// Turns a streamed column into its standardised values on the selected rows.
class standardizer {
 public:
  standardizer(const store& s, const selection& sel, pca_scaling scaling)
      : sel_(sel),
        scaling_(scaling),
        genotype_(s.type() == value_type::genotype),
        rows_(s.num_rows()),
        statistics_(s, sel.row_kept),
        full_(sel.all_rows() ? 0 : rows_),
        row_blocks_(rows_),
        selected_blocks_(sel.rows.size()) {}

  // Writes z (selected rows) to `out`; false (and zeros) for a constant column.
  bool operator()(const column_view<double>& v, double* out) {
    const std::size_t n = sel_.rows.size();
    const column_stats st = statistics_(v);
    if (genotype_) {
      genotype_lut<double> lut;
      if (scaling_ == pca_scaling::hwe) {
        const double p = st.a1_freq;
        if (!(st.observed > 0 && p > 0.0 && p < 1.0)) return zero(out, n);
        const double scale = std::sqrt(2.0 * p * (1.0 - p));
        lut = {(2.0 - 2.0 * p) / scale, 0.0, (1.0 - 2.0 * p) / scale, -2.0 * p / scale};
      } else {
        if (!(st.sd > 0.0)) return zero(out, n);
        lut = standardized_lut(st);
      }
      // Decoded a block of rows (whole bytes of codes) at a time, across the threads.
      double* decoded = sel_.all_rows() ? out : full_.data();
      row_blocks_.for_each([&](std::size_t, std::size_t first, std::size_t count) {
        decode_genotypes(v.codes.subspan(first / 4, (count + 3) / 4), lut,
                         std::span<double>(decoded + first, count));
      });
      if (!sel_.all_rows())
        selected_blocks_.for_each([&](std::size_t, std::size_t first, std::size_t count) {
          for (std::size_t i = first; i < first + count; ++i) out[i] = full_[sel_.rows[i]];
        });
      return true;
    }
    // Dense and dosage columns: from the decoded values. hwe scaling (dosage stores only)
    // centres on 2p and divides by sqrt(2p(1 - p)), as the genotype table above.
    double centre = st.mean, scale = st.sd;
    if (scaling_ == pca_scaling::hwe) {
      const double p = st.a1_freq;
      if (!(st.observed > 0 && p > 0.0 && p < 1.0)) return zero(out, n);
      centre = 2.0 * p;
      scale = std::sqrt(2.0 * p * (1.0 - p));
    }
    if (!(scale > 0.0)) return zero(out, n);
    const auto kept = statistics_.kept_values();
    selected_blocks_.for_each([&](std::size_t, std::size_t first, std::size_t count) {
      for (std::size_t i = first; i < first + count; ++i)
        out[i] = std::isnan(kept[i]) ? 0.0 : (kept[i] - centre) / scale;
    });
    return true;
  }

 private:
  static bool zero(double* out, std::size_t n) {
    std::fill(out, out + n, 0.0);
    return false;
  }
  const selection& sel_;
  pca_scaling scaling_;
  bool genotype_;
  std::size_t rows_;
  detail::selected_stats statistics_;
  std::vector<double> full_;
  // Element-wise work split over rows: no sum, so any split gives the same values.
  sample_blocks row_blocks_, selected_blocks_;
};

// Columns of Q: an orthonormal basis of the range of y (thin QR).
matrix orthonormalize(const matrix& y) {
  Eigen::HouseholderQR<matrix> qr(y);
  return qr.householderQ() * matrix::Identity(y.rows(), y.cols());
}

// Deterministic split of [0, n) for nested parallel loops: simple_partitioner cuts at fixed
// points whatever the thread count, so results never depend on it.
template <typename F>
void parallel_chunks(Eigen::Index n, Eigen::Index grain, F&& f) {
  tbb::parallel_for(
      tbb::blocked_range<Eigen::Index>(0, n, grain),
      [&](const tbb::blocked_range<Eigen::Index>& r) { f(r.begin(), r.end() - r.begin()); },
      tbb::simple_partitioner{});
}

void check_pca_request(const store& s, const selection& sel, const pca_options& pca) {
  const std::size_t n = sel.rows.size(), m = sel.columns.size(), k = pca.components;
  if (k == 0)
    throw error(errc::invalid_argument, "pca: the number of components must be at least 1");
  if (k > n || k > m)
    throw error(errc::invalid_argument,
                "pca: " + std::to_string(k) + " components asked, but only " + std::to_string(n) +
                    " samples and " + std::to_string(m) + " columns are selected");
  if (pca.scaling == pca_scaling::hwe && !holds_variants(s.type()))
    throw error(errc::invalid_argument,
                s.path().string() + ": hwe scaling needs a genotype or dosage store (it is " +
                    std::string(value_type_name(s.type())) + ")");
}

// The randomised SVD of the standardised selection Z (samples x columns): a sketch Y = ZΩ,
// power iterations Y = ZZᵀQ, then the Rayleigh-Ritz step on the range of Q. Each phase is one
// pass over this process's columns, standardised into blocks of columns.
class randomized_pca {
 public:
  randomized_pca(const store& s, const selection& sel, const pca_options& pca,
                 const analysis_options& options)
      : sel_(sel),
        pca_(pca),
        m_(sel.columns.size()),
        nn_(static_cast<Eigen::Index>(sel.rows.size())),
        l_(static_cast<Eigen::Index>(
            std::min({pca.components + pca.oversampling, sel.rows.size(), m_}))),
        block_(static_cast<Eigen::Index>(std::max<std::size_t>(1, pca.block_columns))),
        stream_(s, options, s.type() != value_type::genotype, ""),
        standardize_(s, sel, pca.scaling),
        entries_(pca.seed),
        total_passes_(2 + pca.power_iterations),
        zb_(nn_, block_),
        y_(matrix::Zero(nn_, l_)),
        bb_(block_, l_),
        c_(matrix::Zero(l_, l_)),
        processes_(distributed(options.processes) ? options.processes : nullptr),
        segments_(m_, static_cast<std::size_t>(block_), processes_),
        first_column_(segments_.first_column(segments_.own_first())),
        own_columns_(std::span(sel.columns)
                         .subspan(first_column_,
                                  segments_.first_column(segments_.own_end()) - first_column_)) {
    if (pca.loadings) b_all_.setZero(static_cast<Eigen::Index>(m_), l_);
  }

  // The sketch Y = ZΩ, and the count of columns that vary (every process's).
  void sketch() {
    y_segment_ = matrix::Zero(nn_, l_);
    matrix omega(block_, l_);
    pass(
        [&](Eigen::Index cols, std::size_t first) {
          for (Eigen::Index i = 0; i < cols; ++i)
            entries_.fill(sel_.columns[first + static_cast<std::size_t>(i)], omega.row(i));
          add_product(cols, omega);
        },
        [&] { segments_.end(y_, y_segment_, y_done_); });
    segments_.exchange(y_, y_done_);
    if (processes_) {  // the columns that vary, counted by each process over its own
      const std::vector<double> all = all_gather_one(*processes_, static_cast<double>(used_));
      used_ = 0;
      for (double u : all) used_ += static_cast<std::size_t>(u);
    }
    if (used_ < pca_.components)
      throw error(errc::invalid_argument,
                  "pca: " + std::to_string(pca_.components) + " components asked, but only " +
                      std::to_string(used_) + " selected columns are not constant");
  }

  // A power iteration: Y = Z Zᵀ Q, Q an orthonormal basis of the previous Y.
  void power_iteration() {
    q_ = orthonormalize(y_);
    y_.setZero();
    pass(
        [&](Eigen::Index cols, std::size_t) {
          project(cols);
          add_product(cols, bb_);
        },
        [&] { segments_.end(y_, y_segment_, y_done_); });
    segments_.exchange(y_, y_done_);
  }

  // Rayleigh-Ritz: C = Qᵀ Z Zᵀ Q, whose eigenpairs give those of ZZᵀ on the range of Q; with
  // loadings, B = ZᵀQ whole on every process. Y = Z Zᵀ Q too, for the residuals of the result
  // (a product more in the pass, no pass more).
  void rayleigh_ritz() {
    q_ = orthonormalize(y_);
    y_.setZero();
    c_segment_ = matrix::Zero(l_, l_);
    pass(
        [&](Eigen::Index cols, std::size_t first) {
          project(cols);
          c_segment_.noalias() += bb_.topRows(cols).transpose() * bb_.topRows(cols);
          add_product(cols, bb_);
          if (pca_.loadings)
            b_all_.middleRows(static_cast<Eigen::Index>(first), cols) = bb_.topRows(cols);
        },
        [&] {
          segments_.end(c_, c_segment_, c_done_);
          segments_.end(y_, y_segment_, y_done_);
        });
    segments_.exchange(c_, c_done_);
    segments_.exchange(y_, y_done_);
    if (pca_.loadings) segments_.gather_rows(b_all_);
  }

  // The top components from C's eigenpairs: eigenvalues, sample eigenvectors (each signed so
  // that its largest entry is positive), loadings.
  pca_result result() {
    Eigen::SelfAdjointEigenSolver<matrix> eig(c_);
    const auto kk = static_cast<Eigen::Index>(pca_.components);
    result_.columns_used = used_;
    result_.eigenvalues.resize(kk);
    matrix v(l_, kk);
    for (Eigen::Index i = 0; i < kk; ++i) {  // eigen() is increasing
      result_.eigenvalues[i] =
          std::max(eig.eigenvalues()[l_ - 1 - i], 0.0) / static_cast<double>(used_);
      v.col(i) = eig.eigenvectors().col(l_ - 1 - i);
    }
    result_.eigenvectors = q_ * v;
    for (Eigen::Index i = 0; i < kk; ++i) {
      Eigen::Index at = 0;
      result_.eigenvectors.col(i).cwiseAbs().maxCoeff(&at);
      if (result_.eigenvectors(at, i) < 0) {
        result_.eigenvectors.col(i) *= -1.0;
        v.col(i) *= -1.0;
      }
    }
    // ZZᵀu = Y v for u = Q v, so each residual is ‖Y v − λ Q v‖ / λ.
    const matrix zztu = y_ * v;
    result_.residuals.resize(kk);
    for (Eigen::Index i = 0; i < kk; ++i) {
      const double lambda = result_.eigenvalues[i] * static_cast<double>(used_);
      result_.residuals[i] =
          lambda > 0 ? (zztu.col(i) - lambda * result_.eigenvectors.col(i)).norm() / lambda : 0.0;
    }
    if (pca_.loadings) {
      result_.loadings = b_all_ * v;
      for (Eigen::Index i = 0; i < kk; ++i) {
        const double sigma = std::sqrt(result_.eigenvalues[i] * static_cast<double>(used_));
        if (sigma > 0) result_.loadings.col(i) /= sigma;
      }
    }
    return std::move(result_);
  }

 private:
  // One pass over this process's columns: standardises them into blocks and hands each full
  // block to `product(columns, first selection position)`, and calls `segment_done` after the
  // last block of each segment.
  template <typename Product, typename SegmentDone>
  void pass(Product&& product, SegmentDone&& segment_done) {
    ++result_.passes;
    stream_.label =
        "pca pass " + std::to_string(result_.passes) + "/" + std::to_string(total_passes_);
    Eigen::Index filled = 0;
    std::size_t first = first_column_;  // selection position of the block's first column
    std::size_t segment = segments_.own_first();
    stream_.columns.run(own_columns_, [&](const column_view<double>& v) {
      const std::size_t position = first_column_ + v.position;
      const bool varies = standardize_(v, zb_.col(filled).data());
      if (result_.passes == 1 && varies) ++used_;
      if (++filled == block_ || position + 1 == m_) {
        product(filled, first);
        first = position + 1;
        filled = 0;
        if (first == segments_.first_column(segment + 1)) {
          segment_done();
          ++segment;
        }
      }
      return true;
    });
  }

  // Y += Zb · B for this block (rows split across threads), into the running segment.
  void add_product(Eigen::Index cols, const matrix& b) {
    parallel_chunks(nn_, 1024, [&](Eigen::Index r0, Eigen::Index rn) {
      detail::multiply_add(zb_.data() + r0, static_cast<std::size_t>(nn_),
                           static_cast<std::size_t>(rn), static_cast<std::size_t>(cols), b.data(),
                           static_cast<std::size_t>(b.rows()), static_cast<std::size_t>(l_),
                           y_segment_.data() + r0, static_cast<std::size_t>(nn_));
    });
  }

  // Bb = Zbᵀ · Q (block columns split across threads).
  void project(Eigen::Index cols) {
    parallel_chunks(cols, 8, [&](Eigen::Index c0, Eigen::Index cn) {
      detail::transpose_multiply(
          zb_.data() + c0 * nn_, static_cast<std::size_t>(nn_), static_cast<std::size_t>(nn_),
          static_cast<std::size_t>(cn), q_.data(), static_cast<std::size_t>(nn_),
          static_cast<std::size_t>(l_), bb_.data() + c0, static_cast<std::size_t>(bb_.rows()));
    });
  }

  const selection& sel_;
  const pca_options& pca_;
  std::size_t m_;
  Eigen::Index nn_, l_, block_;  // samples, sketch width, columns per block
  detail::analysis_stream stream_;
  standardizer standardize_;
  const sketch_entries entries_;  // of Ω
  std::size_t total_passes_;
  pca_result result_;
  matrix zb_;  // a block of standardised columns
  matrix y_, q_, bb_, c_, b_all_;
  std::size_t used_ = 0;     // columns that vary
  communicator* processes_;  // null: this process alone
  detail::column_segments segments_;
  std::size_t first_column_;                  // selection position of this process's first
  std::span<const std::size_t> own_columns_;  // this process's columns
  // A sum's running segment, and on several processes this process's finished segments.
  matrix y_segment_, c_segment_;
  std::vector<matrix> y_done_, c_done_;
};

}  // namespace

pca_result principal_components(const store& s, const selection& sel, const pca_options& pca,
                                const analysis_options& options) {
  check_pca_request(s, sel, pca);
  randomized_pca svd(s, sel, pca, options);
  svd.sketch();
  for (std::size_t it = 0; it < pca.power_iterations; ++it) svd.power_iteration();
  svd.rayleigh_ritz();
  return svd.result();
}

}  // namespace colflow
