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

#include "analysis/selected_stats_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/sample_blocks.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/dense_kernels_internal.hpp"

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

}  // namespace

pca_result principal_components(const store& s, const selection& sel, const pca_options& pca,
                                const analysis_options& options) {
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
  const auto l = static_cast<Eigen::Index>(std::min({k + pca.oversampling, n, m}));
  const auto nn = static_cast<Eigen::Index>(n);
  const auto block = static_cast<Eigen::Index>(std::max<std::size_t>(1, pca.block_columns));

  stream_options so = options.stream;
  so.values = decode_as::stored;
  so.decode_values = s.type() != value_type::genotype;
  column_stream<double> stream(s, so);
  standardizer standardize(s, sel, pca.scaling);
  const sketch_entries sketch(pca.seed);

  pca_result result;
  const std::size_t total_passes = 2 + pca.power_iterations;
  matrix zb(nn, block);  // a block of standardised columns
  matrix y = matrix::Zero(nn, l);
  matrix q, bb(block, l), c = matrix::Zero(l, l), b_all;
  if (pca.loadings) b_all.setZero(static_cast<Eigen::Index>(m), l);
  std::size_t used = 0;

  // The sums over columns (Y = Σ Z_b B_b, C = Σ B_bᵀ B_b) are added in a fixed grouping: the
  // blocks of columns form at most `max_segments` consecutive segments, each segment's blocks
  // are added up from zero, and the segments' sums are added in segment order. The grouping
  // depends on the selection and the block size only, so MPI ranks that each take whole
  // segments (docs/DESIGN.md §4.9) and exchange their segments' sums add exactly what one
  // process adds.
  constexpr std::size_t max_segments = 16;
  const std::size_t blocks_total = (m + static_cast<std::size_t>(block) - 1) / block;
  const std::size_t blocks_per_segment = (blocks_total + max_segments - 1) / max_segments;
  const std::size_t segments = (blocks_total + blocks_per_segment - 1) / blocks_per_segment;
  const auto segment_columns = [&](std::size_t g) {  // the first column of segment g
    return std::min(m, g * blocks_per_segment * static_cast<std::size_t>(block));
  };
  communicator* const processes = distributed(options.processes) ? options.processes : nullptr;
  std::size_t own_first = 0, own_end = segments;  // this process's segments
  if (processes) {
    const auto size = static_cast<std::size_t>(processes->size());
    const auto rank = static_cast<std::size_t>(processes->rank());
    own_first = even_share(segments, rank, size);
    own_end = even_share(segments, rank + 1, size);
  }
  const std::size_t first_column = segment_columns(own_first);
  const std::span<const std::size_t> own_columns =
      std::span(sel.columns).subspan(first_column, segment_columns(own_end) - first_column);
  // A sum's running segment, and on several processes this process's finished segments.
  matrix y_segment, c_segment;
  std::vector<matrix> y_done, c_done;
  const auto end_segment = [&](matrix& total, matrix& segment, std::vector<matrix>& done) {
    if (processes)
      done.push_back(segment);
    else
      total += segment;
    segment.setZero();
  };
  // On several processes: every process's segments, added in segment order.
  const auto exchange = [&](matrix& total, std::vector<matrix>& done) {
    if (!processes) return;
    const auto size = static_cast<std::size_t>(processes->size());
    const auto cells = static_cast<std::size_t>(total.size());
    std::vector<std::size_t> counts;
    for (std::size_t r = 0; r < size; ++r)
      counts.push_back(cells * (even_share(segments, r + 1, size) - even_share(segments, r, size)));
    std::vector<double> mine;
    for (const matrix& d : done) mine.insert(mine.end(), d.data(), d.data() + d.size());
    std::vector<double> all(cells * segments);
    processes->all_gather(mine, all, counts);
    total.setZero();
    for (std::size_t g = 0; g < segments; ++g)
      total += Eigen::Map<const matrix>(all.data() + g * cells, total.rows(), total.cols());
    done.clear();
  };

  // One pass over this process's columns: standardises them into blocks and hands each full
  // block to `product`, and calls `segment_done` after the last block of each segment.
  const auto pass = [&](auto&& product, auto&& segment_done) {
    ++result.passes;
    const std::string label =
        "pca pass " + std::to_string(result.passes) + "/" + std::to_string(total_passes);
    stream.on_progress(options.progress
                           ? std::function<void(const pass_progress&)>(
                                 [&](const pass_progress& p) { options.progress(label, p); })
                           : nullptr);
    Eigen::Index filled = 0;
    std::size_t first = first_column;  // selection position of the block's first column
    std::size_t segment = own_first;
    stream.run(own_columns, [&](const column_view<double>& v) {
      const std::size_t position = first_column + v.position;
      const bool varies = standardize(v, zb.col(filled).data());
      if (result.passes == 1 && varies) ++used;
      if (++filled == block || position + 1 == m) {
        product(filled, first);
        first = position + 1;
        filled = 0;
        if (first == segment_columns(segment + 1)) {
          segment_done();
          ++segment;
        }
      }
      return true;
    });
  };

  // Y += Zb · B for this block (rows split across threads), into the running segment.
  const auto add_product = [&](Eigen::Index cols, const matrix& b) {
    parallel_chunks(nn, 1024, [&](Eigen::Index r0, Eigen::Index rn) {
      detail::multiply_add(zb.data() + r0, static_cast<std::size_t>(nn),
                           static_cast<std::size_t>(rn), static_cast<std::size_t>(cols), b.data(),
                           static_cast<std::size_t>(b.rows()), static_cast<std::size_t>(l),
                           y_segment.data() + r0, static_cast<std::size_t>(nn));
    });
  };
  // Bb = Zbᵀ · Q (block columns split across threads).
  const auto project = [&](Eigen::Index cols) {
    parallel_chunks(cols, 8, [&](Eigen::Index c0, Eigen::Index cn) {
      detail::transpose_multiply(
          zb.data() + c0 * nn, static_cast<std::size_t>(nn), static_cast<std::size_t>(nn),
          static_cast<std::size_t>(cn), q.data(), static_cast<std::size_t>(nn),
          static_cast<std::size_t>(l), bb.data() + c0, static_cast<std::size_t>(bb.rows()));
    });
  };

  const auto y_segment_done = [&] { end_segment(y, y_segment, y_done); };
  y_segment = matrix::Zero(nn, l);
  // The sketch: Y = Z Ω.
  matrix omega(block, l);
  pass(
      [&](Eigen::Index cols, std::size_t first) {
        for (Eigen::Index i = 0; i < cols; ++i)
          sketch.fill(sel.columns[first + static_cast<std::size_t>(i)], omega.row(i));
        add_product(cols, omega);
      },
      y_segment_done);
  exchange(y, y_done);
  if (processes) {  // the columns that vary, counted by each process over its own
    const std::vector<double> all = all_gather_one(*processes, static_cast<double>(used));
    used = 0;
    for (double u : all) used += static_cast<std::size_t>(u);
  }
  if (used < k)
    throw error(errc::invalid_argument, "pca: " + std::to_string(k) +
                                            " components asked, but only " + std::to_string(used) +
                                            " selected columns are not constant");
  // Power iterations: Y = Z Zᵀ Q.
  for (std::size_t it = 0; it < pca.power_iterations; ++it) {
    q = orthonormalize(y);
    y.setZero();
    pass(
        [&](Eigen::Index cols, std::size_t) {
          project(cols);
          add_product(cols, bb);
        },
        y_segment_done);
    exchange(y, y_done);
  }
  // Rayleigh-Ritz: C = Qᵀ Z Zᵀ Q, whose eigenpairs give those of ZZᵀ on the range of Q.
  q = orthonormalize(y);
  c_segment = matrix::Zero(l, l);
  pass(
      [&](Eigen::Index cols, std::size_t first) {
        project(cols);
        c_segment.noalias() += bb.topRows(cols).transpose() * bb.topRows(cols);
        if (pca.loadings)
          b_all.middleRows(static_cast<Eigen::Index>(first), cols) = bb.topRows(cols);
      },
      [&] { end_segment(c, c_segment, c_done); });
  exchange(c, c_done);
  if (pca.loadings && processes) {  // each process's rows of B, to every process
    matrix rows_mine = b_all
                           .middleRows(static_cast<Eigen::Index>(first_column),
                                       static_cast<Eigen::Index>(own_columns.size()))
                           .transpose();  // column-major: one column of it per selected column
    const auto size = static_cast<std::size_t>(processes->size());
    std::vector<std::size_t> counts;
    for (std::size_t r = 0; r < size; ++r)
      counts.push_back(static_cast<std::size_t>(l) *
                       (segment_columns(even_share(segments, r + 1, size)) -
                        segment_columns(even_share(segments, r, size))));
    matrix all(l, static_cast<Eigen::Index>(m));
    processes->all_gather(std::span<const double>(rows_mine.data(), rows_mine.size()),
                          std::span<double>(all.data(), all.size()), counts);
    b_all = all.transpose();
  }
  Eigen::SelfAdjointEigenSolver<matrix> eig(c);
  const auto kk = static_cast<Eigen::Index>(k);
  result.columns_used = used;
  result.eigenvalues.resize(kk);
  matrix v(l, kk);
  for (Eigen::Index i = 0; i < kk; ++i) {  // eigen() is increasing
    result.eigenvalues[i] = std::max(eig.eigenvalues()[l - 1 - i], 0.0) / static_cast<double>(used);
    v.col(i) = eig.eigenvectors().col(l - 1 - i);
  }
  result.eigenvectors = q * v;
  for (Eigen::Index i = 0; i < kk; ++i) {
    Eigen::Index at = 0;
    result.eigenvectors.col(i).cwiseAbs().maxCoeff(&at);
    if (result.eigenvectors(at, i) < 0) {
      result.eigenvectors.col(i) *= -1.0;
      v.col(i) *= -1.0;
    }
  }
  if (pca.loadings) {
    result.loadings = b_all * v;
    for (Eigen::Index i = 0; i < kk; ++i) {
      const double sigma = std::sqrt(result.eigenvalues[i] * static_cast<double>(used));
      if (sigma > 0) result.loadings.col(i) /= sigma;
    }
  }
  return result;
}

}  // namespace colflow
