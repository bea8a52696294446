// KING-robust pair counts: bands of rows, each one pass over the variants; each block of
// variants turned into bit planes per sample, then counted on fixed tiles of samples.
#include "colflow/analysis/king.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <string>

#include "analysis/products/relationship_shared_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/king_counts_internal.hpp"

namespace colflow {

double king_kinship(const king_pair_counts& c) noexcept {
  // PLINK 2's expression, term for term: the integers are exact in binary64, and the one
  // division and subtraction round as its do.
  const std::int64_t smaller_het =
      std::int64_t{c.hethet} + std::min<std::int64_t>(c.het_hom, c.hom_het);
  const std::int64_t opposite = 4 * std::int64_t{c.ibs0} + c.het_hom + c.hom_het;
  return 0.5 - static_cast<double>(opposite) / static_cast<double>(4 * smaller_het);
}

namespace {

// Samples per tile.
constexpr std::size_t tile = 64;
// Variants per block by default: 64 words a plane, so that a pair of samples runs 16 steps of
// the vector loop between its fixed costs, and a tile of 64 samples takes 96 KiB of planes.
constexpr std::size_t default_block = 4096;

using detail::mib;
using detail::resolved_in_flight;

// One band's pass: the block's codes as they stream by, then the planes of every sample up to
// the band's last row, then the tiles (I, J), I a tile of the band's rows, J ≤ I.
class band_pass {
 public:
  band_pass(const selection& sel, std::size_t store_rows, std::size_t first, std::size_t rows,
            std::size_t block)
      : sel_(sel),
        bytes_((store_rows + 3) / 4),
        block_(block),
        words_(king_plane_words(block)),
        band_{first, rows, {}},
        codes_(block * bytes_),
        planes_(band_.width() * 3 * words_) {
    band_.counts.resize(band_.size());
    const std::size_t end_tile = (first + rows + tile - 1) / tile;
    for (std::size_t i = first / tile; i < end_tile; ++i)
      for (std::size_t j = 0; j <= i; ++j) tiles_.push_back({i, j});
  }

  // Keeps the codes of the block's k-th variant.
  void set_column(std::size_t k, std::span<const std::uint8_t> codes) {
    std::copy(codes.begin(), codes.end(), codes_.begin() + static_cast<std::ptrdiff_t>(k * bytes_));
  }

  // Counts the pairs over the block's first k variants.
  void add_block(std::size_t k) {
    std::vector<const std::uint8_t*> columns(k);
    for (std::size_t c = 0; c < k; ++c) columns[c] = codes_.data() + c * bytes_;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, band_.width(), tile),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i)
                          make_king_planes(columns.data(), k, sel_.rows[i], planes_of(i), words_);
                      });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tiles_.size(), 1),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t t = r.begin(); t != r.end(); ++t)
                          add_tile(tiles_[t].first, tiles_[t].second);
                      });
  }

  king_band finish() { return std::move(band_); }

 private:
  std::uint64_t* planes_of(std::size_t i) { return planes_.data() + i * 3 * words_; }

  // Tile (i, j) restricted to the band's rows and to the pairs below the diagonal, a row of
  // the tile at a time (the triangle's rows are not evenly spaced); each pair belongs to one
  // tile.
  void add_tile(std::size_t i, std::size_t j) {
    const std::size_t from = std::max(i * tile, band_.first_row),
                      to = std::min((i + 1) * tile, band_.width());
    const std::size_t col0 = j * tile, cols = std::min(tile, band_.width() - col0);
    const std::uint64_t* b[tile];
    for (std::size_t c = 0; c < cols; ++c) b[c] = planes_of(col0 + c);
    for (std::size_t r = from; r < to; ++r) {
      if (r <= col0) continue;
      const std::uint64_t* a = planes_of(r);
      king_pair_counts* out = band_.counts.data() + band_.row_offset(r) + col0;
      king_pair_tile(&a, 1, b, std::min(cols, r - col0), words_, out, 0);
    }
  }

  const selection& sel_;
  std::size_t bytes_, block_, words_;
  king_band band_;
  std::vector<std::uint8_t> codes_;    // the block's columns, bytes_ each
  std::vector<std::uint64_t> planes_;  // per sample up to the band's last row: hom, het, two
  std::vector<std::pair<std::size_t, std::size_t>> tiles_;
};

}  // namespace

king_plan plan_king(const store& s, const selection& sel, const king_options& king,
                    const analysis_options& options) {
  if (s.type() != value_type::genotype)
    throw error(errc::invalid_argument,
                s.path().string() + ": king needs a genotype store (it is " +
                    std::string(value_type_name(s.type())) + "): KING counts hard calls");
  if (king.block_columns % 64 != 0)
    throw error(
        errc::invalid_argument,
        "king: block_columns " + std::to_string(king.block_columns) + " is not a multiple of 64");
  king_plan plan;
  plan.samples = sel.rows.size();
  if (plan.samples < 2)
    throw error(errc::invalid_argument, "king: kinship needs at least 2 samples (" +
                                            std::to_string(plan.samples) + " selected)");
  const detail::autosomal_columns used = detail::autosomal_columns_of(s, sel);
  plan.variants = used.columns.size();
  plan.non_autosomal = used.left_out;
  if (plan.variants == 0)
    throw error(errc::invalid_argument,
                "king: no autosomal variant selected (" + std::to_string(used.left_out) +
                    " on X, Y or MT are left out, as plink2 leaves them out of KING)");
  const std::uint64_t n = plan.samples;
  plan.block_columns = king.block_columns != 0 ? king.block_columns : default_block;
  const std::uint64_t block = plan.block_columns;
  plan.block_bytes = block * ((s.num_rows() + 3) / 4) + n * 3 * 8 * king_plane_words(block);
  plan.stream_bytes = resolved_in_flight(options) *
                      std::max<std::uint64_t>(options.stream.block_bytes, s.num_rows() / 4 + 1);
  // A band of `rows` rows holds at most rows × n pairs (the last band: fewer, the triangle's
  // rows before it being shorter); all n rows, the whole triangle.
  const auto band_bytes = [&](std::uint64_t rows) {
    return (rows == n ? n * (n - 1) / 2 : rows * n) * sizeof(king_pair_counts);
  };
  const std::uint64_t fixed = plan.block_bytes + plan.stream_bytes;
  const std::uint64_t smallest = std::min<std::uint64_t>(tile, n);
  plan.minimum_bytes = fixed + band_bytes(smallest);
  std::uint64_t rows = n;
  if (king.memory_limit != 0 && fixed + band_bytes(rows) > king.memory_limit) {
    if (plan.minimum_bytes > king.memory_limit)
      throw error(errc::invalid_argument,
                  "king: " + std::to_string(n) + " samples need at least " +
                      mib(plan.minimum_bytes) + " (a band of " + std::to_string(smallest) +
                      " rows, a block of " + std::to_string(plan.block_columns) +
                      " variants and the stream's buffers), more than the memory limit of " +
                      mib(king.memory_limit));
    rows = (king.memory_limit - fixed) / band_bytes(1) / tile * tile;
  }
  plan.band_rows = static_cast<std::size_t>(rows);
  plan.bands = (plan.samples + plan.band_rows - 1) / plan.band_rows;
  plan.band_bytes = band_bytes(rows);
  plan.total_bytes = fixed + plan.band_bytes;
  return plan;
}

king_plan king(const store& s, const selection& sel, const king_options& king,
               const analysis_options& options, const std::function<void(const king_band&)>& sink) {
  const king_plan plan = plan_king(s, sel, king, options);
  const detail::autosomal_columns used = detail::autosomal_columns_of(s, sel);
  stream_options so = options.stream;
  so.values = decode_as::stored;
  so.decode_values = false;
  column_stream<double> stream(s, so);
  for (std::size_t b = 0; b < plan.bands; ++b) {
    const std::size_t first = b * plan.band_rows;
    const std::size_t rows = std::min(plan.band_rows, plan.samples - first);
    const std::string label =
        plan.bands == 1 ? std::string("king")
                        : "king band " + std::to_string(b + 1) + "/" + std::to_string(plan.bands);
    stream.on_progress(options.progress ? std::function<void(const pass_progress&)>(
                                              [&options, label](const pass_progress& p) {
                                                options.progress(label, p);
                                              })
                                        : nullptr);
    band_pass pass(sel, s.num_rows(), first, rows, plan.block_columns);
    std::size_t filled = 0;
    stream.run(used.columns, [&](const column_view<double>& v) {
      pass.set_column(filled, v.codes);
      if (++filled == plan.block_columns || v.position + 1 == plan.variants) {
        pass.add_block(filled);
        filled = 0;
      }
      return true;
    });
    sink(pass.finish());
  }
  return plan;
}

}  // namespace colflow
