// KING-robust pair counts: bands of rows, each one pass over the variants; each block of
// variants turned into bit planes per sample, then counted on fixed tiles of samples.
#include "colflow/analysis/king.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "analysis/products/relationship_shared_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/bit_columns_internal.hpp"
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

// Samples per tile: the bits of a transposed plane's word.
constexpr std::size_t tile = 64;
// Variants per block by default: 64 words a plane, so that a pair of samples runs 16 steps of
// the AVX2 loop between its fixed costs (blocks of 8,192 variants, which read and write the
// band's counts half as often, ran 20-30% slower on an AMD EPYC).
constexpr std::size_t default_block = 4096;
// Columns of a tile counted against each of its rows at a time.
constexpr std::size_t column_run = 16;

using detail::mib;
using detail::resolved_in_flight;

// One band's pass: the block's codes as they stream by, then the planes and calls of every
// sample up to the band's last row and the transposed planes of each tile of 64 of them, then
// the tiles (I, J), I a tile of the band's rows, J ≤ I.
class band_pass {
 public:
  band_pass(const selection& sel, std::size_t store_rows, std::size_t first, std::size_t rows,
            std::size_t block)
      : sel_(sel),
        bytes_((store_rows + 3) / 4),
        words_(king_plane_words(block)),
        band_{first, rows, {}},
        codes_(block * bytes_),
        planes_(band_.width() * king_planes * words_),
        calls_(band_.width()),
        list_budget_(list_budget(band_.width(), block)),
        lists_(list_budget_),
        list_start_(band_.width()),
        tile_rows_(tiles_of(band_.width()) * 2 * tile * words_) {
    band_.counts.resize(band_.size());  // unwritten (king_counts_allocator): zeroed here
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, band_.counts.size(), std::size_t{1} << 16),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        std::fill(band_.counts.begin() + static_cast<std::ptrdiff_t>(r.begin()),
                                  band_.counts.begin() + static_cast<std::ptrdiff_t>(r.end()),
                                  king_pair_counts{});
                      });
    const std::size_t end_tile = tiles_of(first + rows);
    for (std::size_t i = first / tile; i < end_tile; ++i)
      for (std::size_t j = 0; j <= i; ++j) tiles_.push_back({i, j});
  }

  // Keeps the codes of the block's k-th variant.
  void set_column(std::size_t k, std::span<const std::uint8_t> codes) {
    std::copy(codes.begin(), codes.end(), codes_.begin() + static_cast<std::ptrdiff_t>(k * bytes_));
  }

  // Counts the pairs over the block's first k variants.
  void add_block(std::size_t k) {
    count_ = static_cast<std::uint32_t>(k);
    std::vector<const std::uint8_t*> columns(k);
    for (std::size_t c = 0; c < k; ++c) columns[c] = codes_.data() + c * bytes_;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, band_.width(), tile),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i)
                          calls_[i] = make_king_planes(columns.data(), k, sel_.rows[i],
                                                       planes_of(i), words_);
                      });
    list_missing_calls();
    tbb::parallel_for(std::size_t{0}, tiles_of(band_.width()), [&](std::size_t t) {
      const std::uint64_t* planes[tile];
      const std::size_t samples = std::min(tile, band_.width() - t * tile);
      for (std::size_t s = 0; s < samples; ++s) planes[s] = planes_of(t * tile + s);
      king_tile_rows(planes, samples, words_, het_rows(t), missing_rows(t));
    });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tiles_.size(), 1),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t t = r.begin(); t != r.end(); ++t)
                          add_tile(tiles_[t].first, tiles_[t].second);
                      });
  }

  king_band finish() { return std::move(band_); }

  // Entries of the lists of missing calls: one for each sixteenth of a block's calls, so that
  // every sample's list fits when a sixteenth of the calls or fewer are missing.
  static std::size_t list_budget(std::size_t samples, std::size_t block) {
    return samples * block / 16;
  }

 private:
  static constexpr std::size_t unlisted = ~std::size_t{0};

  // The positions of each sample's missing calls, listed once a block for the tiles' terms,
  // sample after sample as long as the lists fit their budget; the tiles read the calls of the
  // others from their planes.
  void list_missing_calls() {
    std::size_t next = 0;
    for (std::size_t i = 0; i < band_.width(); ++i) {
      const bool fits = calls_[i].missing <= list_budget_ - next;
      list_start_[i] = fits ? next : unlisted;
      if (fits) next += calls_[i].missing;
    }
    tbb::parallel_for(std::size_t{0}, band_.width(), [&](std::size_t i) {
      if (list_start_[i] != unlisted)
        set_bit_positions(missing_of(i), words_, lists_.data() + list_start_[i]);
    });
  }

  // Sample i's missing calls: its list, or `scratch` filled from its plane.
  std::span<const std::uint32_t> missing_at(std::size_t i, std::vector<std::uint32_t>& scratch) {
    if (list_start_[i] != unlisted) return {lists_.data() + list_start_[i], calls_[i].missing};
    scratch.resize(calls_[i].missing);
    set_bit_positions(missing_of(i), words_, scratch.data());
    return scratch;
  }

  static std::size_t tiles_of(std::size_t samples) { return (samples + tile - 1) / tile; }
  std::uint64_t* planes_of(std::size_t i) { return planes_.data() + i * king_planes * words_; }
  const std::uint64_t* missing_of(std::size_t i) { return planes_of(i) + missing_plane * words_; }
  std::uint64_t* het_rows(std::size_t t) { return tile_rows_.data() + t * 2 * tile * words_; }
  std::uint64_t* missing_rows(std::size_t t) { return het_rows(t) + tile * words_; }

  // Tile (i, j) restricted to the band's rows and to the pairs below the diagonal, a row of
  // the tile at a time (the triangle's rows are not evenly spaced); each pair belongs to one
  // tile. The terms with a missing call: for each column sample, its missing calls against
  // the rows' transposed het and miss planes (tile i's, which the tiles before this one read
  // too); for each row sample, its against the columns' het plane.
  void add_tile(std::size_t i, std::size_t j) {
    const std::size_t from = std::max(i * tile, band_.first_row),
                      to = std::min((i + 1) * tile, band_.width());
    const std::size_t col0 = j * tile;
    if (to <= col0 + 1) return;
    const std::size_t cols = std::min({tile, band_.width() - col0, to - 1 - col0});
    prefetch_rows(het_rows(j));
    const std::uint64_t* b[tile];
    tile_sums sums;
    std::vector<std::uint32_t> scratch;
    for (std::size_t c = 0; c < cols; ++c) {
      b[c] = planes_of(col0 + c);
      const auto missing = missing_at(col0 + c, scratch);
      chosen_row_column_sums(het_rows(i), 2, tile * words_, missing.data(), missing.size(),
                             sums.column_terms[c]);
    }
    const std::size_t first_row = std::max(from, col0 + 1);
    count_planes(i, first_row, to, col0, cols, b, sums);
    std::uint32_t missing_het[tile];  // |miss_r ∧ het_c|
    for (std::size_t r = first_row; r < to; ++r) {
      const std::size_t pairs = std::min(cols, r - col0), row = r - i * tile;
      if (r + 1 < to) prefetch_pairs(r + 1, col0, std::min(cols, r + 1 - col0));
      const auto missing = missing_at(r, scratch);
      chosen_row_column_sums(het_rows(j), 1, 0, missing.data(), missing.size(), missing_het);
      king_pair_counts* out = band_.counts.data() + band_.row_offset(r) + col0;
      for (std::size_t c = 0; c < pairs; ++c)
        add(out[c],
            king_block_counts(
                sums.hethet[row][c], sums.ibs0[row][c], calls_[r], calls_[col0 + c],
                {sums.column_terms[c][row], missing_het[c], sums.column_terms[c][tile + row]},
                count_));
    }
  }

  // A tile's counts of the block: per column c, |het_r ∧ miss_c| for the rows r in [0, tile)
  // and |miss_r ∧ miss_c| after; per row, hethet and ibs0 with each column.
  struct tile_sums {
    std::uint32_t column_terms[tile][2 * tile];
    std::uint32_t hethet[tile][tile], ibs0[tile][tile];  // [row − i · tile][column]
  };

  // hethet and ibs0 of rows [first_row, to) of tile i with their columns (b, from col0), a run
  // of column_run columns at a time: the run's planes (24 KiB) stay in the first-level cache
  // while every row is counted against them.
  void count_planes(std::size_t i, std::size_t first_row, std::size_t to, std::size_t col0,
                    std::size_t cols, const std::uint64_t* const* b, tile_sums& sums) {
    for (std::size_t c0 = 0; c0 < cols; c0 += column_run)
      for (std::size_t r = first_row; r < to; ++r) {
        const std::size_t pairs = std::min(cols, r - col0), row = r - i * tile;
        if (pairs <= c0) continue;
        const std::size_t n = std::min(column_run, pairs - c0);
        king_hethet_ibs0(planes_of(r), b + c0, n, words_, sums.hethet[row] + c0,
                         sums.ibs0[row] + c0);
      }
  }

  // Asks for a tile's transposed het plane in the cache: the rows' missing calls read it at
  // places no processor could foresee.
  void prefetch_rows(const std::uint64_t* rows) {
    const char* first = reinterpret_cast<const char*>(rows);
    for (std::size_t at = 0; at < tile * words_ * sizeof(std::uint64_t); at += 64)
      __builtin_prefetch(first + at);
  }

  // Asks for row r's pairs from col0 on in the cache, ahead of their update: the band is far
  // larger than the caches, and its rows are too far apart for the processor to foresee.
  void prefetch_pairs(std::size_t r, std::size_t col0, std::size_t pairs) {
    const char* first =
        reinterpret_cast<const char*>(band_.counts.data() + band_.row_offset(r) + col0);
    for (std::size_t at = 0; at < pairs * sizeof(king_pair_counts); at += 64)
      __builtin_prefetch(first + at, 1);
  }

  static void add(king_pair_counts& to, const king_pair_counts& c) {
    to.hethet += c.hethet;
    to.ibs0 += c.ibs0;
    to.het_hom += c.het_hom;
    to.hom_het += c.hom_het;
    to.homhom += c.homhom;
  }

  const selection& sel_;
  std::size_t bytes_, words_;
  std::uint32_t count_ = 0;  // variants in the block being counted
  king_band band_;
  std::vector<std::uint8_t> codes_;       // the block's columns, bytes_ each
  std::vector<std::uint64_t> planes_;     // per sample up to the band's last row: king_planes
  std::vector<king_sample_calls> calls_;  // per sample, the block's calls
  std::size_t list_budget_;
  std::vector<std::uint32_t> lists_;      // the listed samples' missing calls, one after another
  std::vector<std::size_t> list_start_;   // per sample, where its list starts, or unlisted
  std::vector<std::uint64_t> tile_rows_;  // per tile of samples: het rows, then missing rows
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
  // The codes, the planes of each sample and two transposed planes of each tile of 64, the
  // lists of missing calls, each sample's calls and list start.
  plan.block_bytes = block * ((s.num_rows() + 3) / 4) +
                     (n * king_planes + (n + 63) / 64 * 2 * 64) * 8 * king_plane_words(block) +
                     band_pass::list_budget(n, block) * 4 + n * 16;
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
