// The genomic relationship matrix: bands of rows, each one pass over the variants, on fixed
// tiles of samples.
#include "colflow/analysis/grm.hpp"

#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "analysis/products/relationship_shared_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/dense_kernels_internal.hpp"

namespace colflow {
namespace {

using matrix = Eigen::MatrixXd;

// Samples per tile. A tile's products are always taken with the same dimensions, wherever its
// band starts, so an entry's bits do not depend on the bands (bands start on a tile).
constexpr std::size_t tile = 64;
// In single precision, the variants of one binary32 chain: chains start at multiples of it in
// the pass (blocks are multiples of it), so the bits do not depend on the block.
constexpr std::size_t single_chain = 128;
// Variants per block by default: in single precision 1024 (each block reads and writes the
// band's binary64 sums once, which bounds a pass of binary32 products), 256 in double.
constexpr std::size_t default_block_single = 1024, default_block_double = 256;
// Below this, a variant's 2p(1 − p) counts as zero (monomorphic over the samples).
constexpr double variance_floor = 1e-12;

using detail::mib;
using detail::resolved_in_flight;

// Rows per band when n rows are split in `parts` bands starting on tiles.
std::uint64_t tile_multiple(std::uint64_t n, std::uint64_t parts) {
  const std::uint64_t rows = (n + parts - 1) / parts;
  return std::min(n, (rows + tile - 1) / tile * tile);
}

// One band's pass: the running sums of products and of both-missing counts of its rows.
class band_pass {
 public:
  band_pass(std::size_t n, std::size_t first_row, std::size_t rows, bool full_rows, bool pairwise,
            bool single, Eigen::Index block)
      : n_(n),
        first_(first_row),
        rows_(rows),
        width_(full_rows ? n : first_row + rows),
        full_(full_rows),
        mirror_(full_rows && first_row == 0 && rows == n),
        pairwise_(pairwise),
        single_(single),
        block_(static_cast<std::size_t>(block)),
        sums_(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(width_)) {
    const std::size_t values = ((n + tile - 1) / tile) * tile * block_;
    if (single_)
      z32_.assign(values, 0.0f);
    else
      z_.assign(values, 0.0);
    zero_across_threads(sums_);
    if (pairwise_) {
      both_.resize(sums_.rows(), sums_.cols());
      zero_across_threads(both_);
    }
    // The tiles of the band: (I, J) with I a tile of its rows and J any tile of its width, or
    // J ≤ I where the upper triangle is the mirror of the lower.
    const std::size_t first_tile = first_ / tile, end_tile = (first_ + rows_ + tile - 1) / tile;
    const std::size_t width_tiles = (width_ + tile - 1) / tile;
    for (std::size_t i = first_tile; i < end_tile; ++i)
      for (std::size_t j = 0; j < (upper_computed() ? width_tiles : i + 1); ++j)
        tiles_.push_back({i, j});
  }

  // Sets the value of sample i at the block's k-th variant.
  void set_value(Eigen::Index k, std::size_t i, double value) {
    const std::size_t at =
        (i / tile) * tile * block_ + static_cast<std::size_t>(k) * tile + i % tile;
    if (single_)
      z32_[at] = static_cast<float>(value);
    else
      z_[at] = value;
  }

  // Sample i has no call at the block's k-th variant (pairwise divisors only); called in
  // order of k, then of i.
  void mark_missing(Eigen::Index k, std::size_t i) {
    if (!pairwise_) return;
    close_lists(k);
    missing_.push_back(static_cast<std::uint32_t>(i));
  }

  // Adds the products of the block's first `k` variants, tile by tile across the threads. Each
  // entry is one chain of fused multiply-adds over the variants in order (dense_kernels), so
  // neither the tiles, the threads nor the bands change its bits; in single precision one
  // chain of binary32 ones per block, added to the entry's binary64 sum.
  void add_block(Eigen::Index k) {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, tiles_.size(), 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t t = r.begin(); t != r.end(); ++t)
            add_tile(tiles_[t].first, tiles_[t].second, k);
        },
        tbb::simple_partitioner());
    if (!pairwise_ || missing_.empty()) return;
    close_lists(k);
    count_both_missing(k);
    missing_.clear();
    list_start_.clear();
  }

  // The band's entries and divisors: sums / (M − m_i − m_j + both_ij), or × 1/M; zeros above
  // the diagonal unless the band holds full rows. Each entry on its own, columns across the
  // threads. The divisors take the place of the both-missing counts they are made from.
  grm_band finish(std::size_t variants, const std::vector<std::uint32_t>& missing) {
    if (mirror_) mirror_lower_triangle();
    grm_band band;
    band.first_row = first_;
    band.full = full_;
    if (pairwise_)
      band.variants = std::move(both_);
    else
      band.variants.resize(sums_.rows(), sums_.cols());
    tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, sums_.cols(), 64),
                      [&](const tbb::blocked_range<Eigen::Index>& columns) {
                        for (Eigen::Index c = columns.begin(); c != columns.end(); ++c)
                          finish_column(c, static_cast<double>(variants), missing, band.variants);
                      });
    band.values = std::move(sums_);
    return band;
  }

 private:
  // Zeros the pages of a fresh matrix across the threads, before the first pass writes them.
  template <typename Matrix>
  static void zero_across_threads(Matrix& a) {
    tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, a.cols(), 64),
                      [&](const tbb::blocked_range<Eigen::Index>& columns) {
                        a.middleCols(columns.begin(), columns.size()).setZero();
                      });
  }

  // Column c's entries and divisors; with pairwise divisors, `divisors` holds the both-missing
  // counts (finish) until each is replaced by its divisor.
  void finish_column(Eigen::Index c, double m, const std::vector<std::uint32_t>& missing,
                     matrix& divisors) {
    const auto j = static_cast<std::size_t>(c);
    for (Eigen::Index r = 0; r < sums_.rows(); ++r) {
      const auto i = first_ + static_cast<std::size_t>(r);
      if (!full_ && j > i) {  // only the lower triangle is meaningful
        sums_(r, c) = 0;
        divisors(r, c) = 0;
        continue;
      }
      double d = m;
      if (pairwise_) d = i == j ? m - missing[i] : m - missing[i] - missing[j] + divisors(r, c);
      divisors(r, c) = d;
      if (pairwise_)
        sums_(r, c) /= d;
      else
        sums_(r, c) *= 1.0 / m;  // PLINK 2 multiplies by the reciprocal here
    }
  }

  // Tile (i, j) of the whole matrix, restricted to the band's rows: its entries accumulate in
  // place.
  void add_tile(std::size_t i, std::size_t j, Eigen::Index k) {
    const std::size_t row0 = i * tile, to = std::min({row0 + tile, n_, first_ + rows_});
    const std::size_t from = std::max(row0, first_);
    const std::size_t col0 = j * tile, cols = std::min(tile, n_ - col0);
    const auto ldy = static_cast<std::size_t>(sums_.rows());
    double* y = sums_.data() + (from - first_) + col0 * ldy;
    const auto block = static_cast<std::size_t>(k);
    if (single_) return add_tile_single(i, j, from - row0, to - from, cols, y, ldy, block);
    detail::multiply_add_transposed(tile_values(z_, i) + (from - row0), tile, to - from, block,
                                    tile_values(z_, j), tile, cols, y, ldy);
  }

  // add_tile in single precision: rows [skip, skip + rows) of tile i against tile j, whose
  // binary64 sums are y. Each chain of single_chain variants is summed in binary32 from zero,
  // then added to the entry's sum, in order; the sums stay in a local copy for the block.
  void add_tile_single(std::size_t i, std::size_t j, std::size_t skip, std::size_t rows,
                       std::size_t cols, double* y, std::size_t ldy, std::size_t k) const {
    double sums[tile * tile];
    float chain[tile * tile];
    for (std::size_t c = 0; c < cols; ++c) std::copy_n(y + c * ldy, rows, sums + c * rows);
    const std::size_t entries = rows * cols;
    for (std::size_t k0 = 0; k0 < k; k0 += single_chain) {
      std::fill_n(chain, entries, 0.0f);
      detail::multiply_add_transposed(tile_values(z32_, i) + skip + k0 * tile, tile, rows,
                                      std::min(single_chain, k - k0),
                                      tile_values(z32_, j) + k0 * tile, tile, cols, chain, rows);
      for (std::size_t e = 0; e < entries; ++e) sums[e] += chain[e];
    }
    for (std::size_t c = 0; c < cols; ++c) std::copy_n(sums + c * rows, rows, y + c * ldy);
  }

  // The block's values of tile t's samples: 64 × block, column-major (leading dimension 64),
  // so that a tile's product reads both operands in order.
  template <typename Real>
  const Real* tile_values(const std::vector<Real>& z, std::size_t t) const {
    return z.data() + t * tile * block_;
  }

  // Ends the missing-sample lists of the variants before the block's k-th.
  void close_lists(Eigen::Index k) {
    while (list_start_.size() <= static_cast<std::size_t>(k))
      list_start_.push_back(missing_.size());
  }

  // Adds 1 to both_(i, j) for every pair of the band's rows and its columns missing at the same
  // variant of the block's first k: work in the square of each variant's missing calls, which
  // are few where a GRM is meaningful. Each task owns a range of rows; the counts are exact.
  void count_both_missing(Eigen::Index k) {
    list_start_.push_back(missing_.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(first_, first_ + rows_, tile),
                      [&](const tbb::blocked_range<std::size_t>& rows) {
                        for (Eigen::Index t = 0; t < k; ++t) count_variant(t, rows);
                      });
  }

  void count_variant(Eigen::Index t, const tbb::blocked_range<std::size_t>& rows) {
    const auto begin = missing_.begin() + static_cast<std::ptrdiff_t>(list_start_[t]);
    const auto end = missing_.begin() + static_cast<std::ptrdiff_t>(list_start_[t + 1]);
    for (auto a = std::lower_bound(begin, end, rows.begin()); a != end && *a < rows.end(); ++a) {
      const auto r = static_cast<Eigen::Index>(*a - first_);
      for (auto b = begin; b != end && (upper_computed() || *b <= *a); ++b) both_(r, *b) += 1;
    }
  }

  // Whether the entries above the diagonal are computed rather than mirrored: a square band
  // that is not the whole matrix needs entries of rows outside it.
  bool upper_computed() const { return full_ && !mirror_; }

  // The whole square from its lower triangle: entry (j, i) is entry (i, j) to the bit (each is
  // one chain of the same fused products, a·b = b·a).
  void mirror_lower_triangle() {
    for (Eigen::Index c = 1; c < sums_.cols(); ++c)
      for (Eigen::Index r = 0; r < c; ++r) {
        sums_(r, c) = sums_(c, r);
        if (pairwise_) both_(r, c) = both_(c, r);
      }
  }

  std::size_t n_, first_, rows_, width_;
  bool full_;
  bool mirror_;  // a square band holding the whole matrix: the lower triangle, then mirrored
  bool pairwise_;
  bool single_;  // binary32 products per block (grm_precision::single)
  // The block's missing calls: the samples of variant t are missing_[list_start_[t] …
  // list_start_[t + 1]), ascending.
  std::vector<std::uint32_t> missing_;
  std::vector<std::size_t> list_start_;
  std::size_t block_;
  matrix sums_, both_;
  std::vector<double> z_;   // the block's values, tile by tile (tile_values)
  std::vector<float> z32_;  // the same in binary32, in single precision
  std::vector<std::pair<std::size_t, std::size_t>> tiles_;
};

}  // namespace

grm_plan plan_grm(const store& s, const selection& sel, const grm_options& grm,
                  const analysis_options& options) {
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument, s.path().string() +
                                            ": grm needs a genotype or dosage store (it is " +
                                            std::string(value_type_name(s.type())) + ")");
  const bool single = grm.precision == grm_precision::single;
  if (single && grm.block_columns % single_chain != 0)
    throw error(errc::invalid_argument,
                "grm: block_columns " + std::to_string(grm.block_columns) +
                    " is not a multiple of " + std::to_string(single_chain) +
                    " (single precision sums chains of that many variants)");
  grm_plan plan;
  plan.samples = sel.rows.size();
  if (plan.samples < 2)
    throw error(errc::invalid_argument, "grm: the relationship matrix needs at least 2 samples (" +
                                            std::to_string(plan.samples) + " selected)");
  const detail::autosomal_columns used = detail::autosomal_columns_of(s, sel);
  plan.variants = used.columns.size();
  plan.non_autosomal = used.left_out;
  if (plan.variants == 0)
    throw error(errc::invalid_argument,
                "grm: no autosomal variant selected (" + std::to_string(used.left_out) +
                    " on X, Y or MT are left out, as PLINK leaves them out of a GRM)");
  const std::uint64_t n = plan.samples;
  const bool pairwise = grm.missing == grm_missing::pairwise;
  // The block: its values, and with pairwise divisors the missing calls (4 bytes each, at most
  // every call).
  std::uint64_t columns = grm.block_columns;
  if (columns == 0) {
    columns = single ? default_block_single : default_block_double;
    // A large block is only for speed: not where it would take over an eighth of the limit.
    if (single && grm.memory_limit != 0 && 8 * n * columns > grm.memory_limit / 8)
      columns = 2 * single_chain;
  }
  plan.block_columns = static_cast<std::size_t>(columns);
  const std::uint64_t block = std::min<std::uint64_t>(columns, plan.variants);
  const std::uint64_t value_bytes = grm.precision == grm_precision::single ? 4 : 8;
  plan.block_bytes = ((pairwise ? 4 : 0) + value_bytes) * n * block;
  plan.stream_bytes = resolved_in_flight(options) *
                      std::max<std::uint64_t>(options.stream.block_bytes, 8 * s.num_rows());
  // A band of b rows holds b × n entries at most: its sums, and its divisors (which take the
  // place of the both-missing counts);
  // on R ranks each also receives the R bands of a round (their entries and divisors) and
  // hands them on one at a time.
  plan.processes =
      distributed(options.processes) ? static_cast<std::size_t>(options.processes->size()) : 1;
  const std::uint64_t gathered = plan.processes == 1 ? 0 : 16 * (plan.processes + 1);
  const auto band_bytes = [&](std::uint64_t b) { return (16 + gathered) * b * n; };
  const std::uint64_t fixed = plan.block_bytes + plan.stream_bytes;
  const std::uint64_t smallest = std::min<std::uint64_t>(tile, n);
  plan.minimum_bytes = fixed + band_bytes(smallest);
  // On ranks, at least two bands per rank (the triangle's bands grow down the matrix: more of
  // them even out the rounds).
  std::uint64_t rows = plan.processes == 1 ? n : tile_multiple(n, 2 * plan.processes);
  if (grm.memory_limit != 0 && fixed + band_bytes(rows) > grm.memory_limit) {
    if (plan.minimum_bytes > grm.memory_limit)
      throw error(errc::invalid_argument,
                  "grm: " + std::to_string(n) + " samples need at least " +
                      mib(plan.minimum_bytes) + " (a band of " + std::to_string(smallest) +
                      " rows, a block of " + std::to_string(plan.block_columns) +
                      " variants and the stream's buffers" +
                      (plan.processes > 1 ? ", and the bands of every rank" : "") +
                      "), more than the memory limit of " + mib(grm.memory_limit) +
                      "; the whole matrix would take " + mib(fixed + band_bytes(n)));
    rows = (grm.memory_limit - fixed) / band_bytes(1) / tile * tile;
  }
  plan.band_rows = static_cast<std::size_t>(rows);
  plan.bands = (plan.samples + plan.band_rows - 1) / plan.band_rows;
  plan.band_bytes = band_bytes(rows);
  plan.total_bytes = fixed + plan.band_bytes;
  return plan;
}

namespace {

// The passes of one run: each band one pass over the used variants, on this process's stream.
class band_maker {
 public:
  band_maker(const store& s, const selection& sel, const grm_options& grm,
             const analysis_options& options, const grm_plan& plan)
      : sel_(sel),
        grm_(grm),
        options_(options),
        plan_(plan),
        used_(detail::autosomal_columns_of(s, sel)),
        genotype_(s.type() == value_type::genotype),
        stream_(s, stream_settings(options.stream, genotype_)),
        missing_(plan.samples, 0),
        x_(plan.samples) {}

  // Band b's entries and divisors. The first band made also counts each sample's missing calls,
  // which every later band's divisors use.
  grm_band make(std::size_t b) {
    const std::size_t n = plan_.samples, m = plan_.variants;
    const std::size_t first = b * plan_.band_rows, rows = std::min(plan_.band_rows, n - first);
    const bool pairwise = grm_.missing == grm_missing::pairwise;
    const auto block = static_cast<Eigen::Index>(std::min(plan_.block_columns, m));
    band_pass pass(n, first, rows, grm_.full_rows, pairwise,
                   grm_.precision == grm_precision::single, block);
    show_progress_of(b);
    const bool count_missing = !counted_;
    Eigen::Index filled = 0;
    stream_.run(used_.columns, [&](const column_view<double>& v) {
      add_variant(v, pass, filled, count_missing);
      if (++filled == block || v.position + 1 == m) {
        pass.add_block(filled);
        filled = 0;
      }
      return true;
    });
    counted_ = true;
    return pass.finish(m, missing_);
  }

 private:
  static stream_options stream_settings(stream_options so, bool genotype) {
    so.values = decode_as::stored;
    so.decode_values = !genotype;
    return so;
  }

  void show_progress_of(std::size_t b) {
    const std::string label =
        plan_.bands == 1 ? std::string("grm")
                         : "grm band " + std::to_string(b + 1) + "/" + std::to_string(plan_.bands);
    stream_.on_progress(options_.progress ? std::function<void(const pass_progress&)>(
                                                [this, label](const pass_progress& p) {
                                                  options_.progress(label, p);
                                                })
                                          : nullptr);
  }

  // The variant's values z of the selected samples as the block's `k`-th: its dosages (NaN:
  // missing), p from their count and sum, then centred (and scaled) with missing calls 0.
  void add_variant(const column_view<double>& v, band_pass& pass, Eigen::Index k,
                   bool count_missing) {
    const std::size_t n = plan_.samples;
    std::uint64_t observed = 0;
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t row = sel_.rows[i];
      double value;
      if (genotype_) {
        static constexpr double code_value[4] = {2.0, NAN, 1.0, 0.0};
        value = code_value[(v.codes[row >> 2] >> (2 * (row & 3))) & 3];
      } else {
        value = v.values[static_cast<Eigen::Index>(row)];
      }
      x_[i] = value;
      if (!std::isnan(value)) {
        ++observed;
        sum += value;
      }
    }
    const double p = observed == 0 ? 0.0 : sum / (2.0 * static_cast<double>(observed));
    const double variance = 2.0 * p * (1.0 - p);
    const bool zero = variance < variance_floor;
    const bool standardized = grm_.scaling == grm_scaling::standardized;
    const double scale = standardized && !zero ? 1.0 / std::sqrt(variance) : 1.0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool absent = std::isnan(x_[i]);
      pass.set_value(k, i, absent || zero ? 0.0 : (x_[i] - 2.0 * p) * scale);
      if (absent) {
        pass.mark_missing(k, i);
        if (count_missing) ++missing_[i];
      }
    }
  }

  const selection& sel_;
  const grm_options& grm_;
  const analysis_options& options_;
  const grm_plan& plan_;
  detail::autosomal_columns used_;
  bool genotype_;
  column_stream<double> stream_;
  std::vector<std::uint32_t> missing_;  // per selected sample, its missing calls
  bool counted_ = false;
  std::vector<double> x_;
};

// Band b's first row and width (the columns it holds).
struct band_shape {
  std::size_t first = 0, rows = 0, width = 0;
};
band_shape shape_of(const grm_plan& plan, std::size_t b, bool full_rows) {
  if (b >= plan.bands) return {};
  band_shape shape;
  shape.first = b * plan.band_rows;
  shape.rows = std::min(plan.band_rows, plan.samples - shape.first);
  shape.width = full_rows ? plan.samples : shape.first + shape.rows;
  return shape;
}

// Round t on R ranks: rank r made band t·R + r (`mine`, empty past the last band). One
// all-gather of the entries and one of the divisors give every rank every band of the round,
// handed to `sink` in row order.
void exchange_round(communicator& c, const grm_plan& plan, bool full_rows, std::size_t t,
                    const grm_band& mine, const std::function<void(const grm_band&)>& sink) {
  const auto ranks = static_cast<std::size_t>(c.size());
  std::vector<band_shape> shapes(ranks);
  std::vector<std::size_t> counts(ranks);
  std::size_t total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    shapes[r] = shape_of(plan, t * ranks + r, full_rows);
    counts[r] = shapes[r].rows * shapes[r].width;
    total += counts[r];
  }
  std::vector<double> values(total), variants(total);
  c.all_gather(std::span<const double>(mine.values.data(), mine.values.size()), values, counts);
  c.all_gather(std::span<const double>(mine.variants.data(), mine.variants.size()), variants,
               counts);
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks && counts[r] != 0; ++r) {
    const auto rows = static_cast<Eigen::Index>(shapes[r].rows);
    const auto width = static_cast<Eigen::Index>(shapes[r].width);
    grm_band band;
    band.first_row = shapes[r].first;
    band.full = full_rows;
    band.values = Eigen::Map<const matrix>(values.data() + at, rows, width);
    band.variants = Eigen::Map<const matrix>(variants.data() + at, rows, width);
    sink(band);
    at += counts[r];
  }
}

}  // namespace

grm_plan grm(const store& s, const selection& sel, const grm_options& grm,
             const analysis_options& options, const std::function<void(const grm_band&)>& sink) {
  const grm_plan plan = plan_grm(s, sel, grm, options);
  band_maker maker(s, sel, grm, options, plan);
  if (plan.processes == 1) {
    for (std::size_t b = 0; b < plan.bands; ++b) sink(maker.make(b));
    return plan;
  }
  // On R ranks, round t makes bands t·R … t·R + R − 1, one per rank.
  communicator& c = *options.processes;
  const std::size_t rank = static_cast<std::size_t>(c.rank());
  const std::size_t rounds = (plan.bands + plan.processes - 1) / plan.processes;
  for (std::size_t t = 0; t < rounds; ++t) {
    const std::size_t b = t * plan.processes + rank;
    const grm_band mine = b < plan.bands ? maker.make(b) : grm_band{};
    exchange_round(c, plan, grm.full_rows, t, mine, sink);
  }
  return plan;
}

grm_matrix grm_dense(const store& s, const selection& sel, const grm_options& grm,
                     const analysis_options& options) {
  grm_options full = grm;
  full.full_rows = true;
  grm_matrix out;
  const auto n = static_cast<Eigen::Index>(sel.rows.size());
  out.plan = colflow::grm(s, sel, full, options, [&](const grm_band& band) {
    if (out.values.size() == 0) {
      out.values.resize(n, n);
      out.variants.resize(n, n);
    }
    const auto r0 = static_cast<Eigen::Index>(band.first_row);
    out.values.middleRows(r0, band.values.rows()) = band.values;
    out.variants.middleRows(r0, band.values.rows()) = band.variants;
  });
  return out;
}

}  // namespace colflow
