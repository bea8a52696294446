// colflow ld: correlations between variants over the samples called in both (analysis/ld.hpp),
// from the exact pair sums of kernels/genotype_products.hpp on genotype stores and from the
// decoded dosages on dosage stores.
#include "colflow/analysis/ld.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/kernels/genotype_products.hpp"

namespace colflow {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// r and r² from the sums of a pair. cov and the variances (times n²) are exact integers for a
// genotype pair (n < 2^30 keeps them within 64 bits); r² is cov² / (var_a var_b).
struct correlation {
  double r = nan, r2 = nan;
};

correlation from_sums(double n, double sa, double sb, double saa, double sbb, double sab) {
  const double va = n * saa - sa * sa, vb = n * sbb - sb * sb, cov = n * sab - sa * sb;
  if (!(va > 0) || !(vb > 0)) return {};
  return {cov / std::sqrt(va * vb), (cov * cov) / (va * vb)};
}

correlation from_sums(const genotype_pair_sums& s) {
  const auto n = static_cast<std::int64_t>(s.n), sa = static_cast<std::int64_t>(s.sum_a),
             sb = static_cast<std::int64_t>(s.sum_b);
  const std::int64_t va = n * static_cast<std::int64_t>(s.sum_aa) - sa * sa;
  const std::int64_t vb = n * static_cast<std::int64_t>(s.sum_bb) - sb * sb;
  const std::int64_t cov = n * static_cast<std::int64_t>(s.sum_ab) - sa * sb;
  if (va <= 0 || vb <= 0) return {};
  const double v = static_cast<double>(va) * static_cast<double>(vb), c = static_cast<double>(cov);
  return {c / std::sqrt(v), (c * c) / v};
}

std::int64_t position_of(const column_info& c) {
  std::int64_t p = 0;
  const auto [end, ec] = std::from_chars(c.pos.data(), c.pos.data() + c.pos.size(), p);
  if (ec != std::errc{} || end != c.pos.data() + c.pos.size())
    throw error(errc::invalid_argument,
                "ld: variant " + c.id + " has no base-pair position ('" + c.pos + "')");
  return p;
}

// The selected columns in memory, and the sums of any pair of them.
class column_set {
 public:
  column_set(const store& s, const selection& sel, const analysis_options& analysis)
      : genotype_(s.type() == value_type::genotype),
        rows_(s.num_rows()),
        kept_(sel.rows.size()),
        count_(sel.columns.size()),
        words_(genotype_plane_words(rows_)) {
    stream_options so = analysis.stream;
    so.values = decode_as::stored;
    so.decode_values = !genotype_;
    column_stream<double> stream(s, so);
    if (analysis.progress)
      stream.on_progress([&](const pass_progress& p) { analysis.progress("ld", p); });
    if (genotype_) {
      const std::vector<std::uint8_t> mask = make_sample_mask(sel.row_kept);
      planes_.resize(count_ * 3 * words_);
      stream.run(sel.columns, [&](const column_view<double>& v) {
        make_genotype_planes(v.codes, rows_, mask, planes_.data() + v.position * 3 * words_);
        return true;
      });
    } else {
      values_.resize(count_ * kept_);
      stream.run(sel.columns, [&](const column_view<double>& v) {
        float* out = values_.data() + v.position * kept_;
        for (std::size_t k = 0; k < kept_; ++k)
          out[k] = static_cast<float>(v.values[static_cast<Eigen::Index>(sel.rows[k])]);
        return true;
      });
    }
  }

  std::size_t size() const noexcept { return count_; }

  // Correlations of column a with columns [b, b + count) into out.
  void row(std::size_t a, std::size_t b, std::size_t count, correlation* out) const {
    if (genotype_) {
      constexpr std::size_t tile = 32;
      const std::uint64_t* pa = planes_.data() + a * 3 * words_;
      const std::uint64_t* pb[tile];
      genotype_pair_sums sums[tile];
      for (std::size_t j0 = 0; j0 < count; j0 += tile) {
        const std::size_t m = std::min(tile, count - j0);
        for (std::size_t j = 0; j < m; ++j) pb[j] = planes_.data() + (b + j0 + j) * 3 * words_;
        genotype_pair_products(&pa, 1, pb, m, words_, sums);
        for (std::size_t j = 0; j < m; ++j) out[j0 + j] = from_sums(sums[j]);
      }
    } else {
      const float* x = values_.data() + a * kept_;
      for (std::size_t j = 0; j < count; ++j) {
        const float* y = values_.data() + (b + j) * kept_;
        double n = 0, sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
        for (std::size_t k = 0; k < kept_; ++k) {
          const double u = x[k], w = y[k];
          if (std::isnan(u) || std::isnan(w)) continue;
          n += 1;
          sa += u;
          sb += w;
          saa += u * u;
          sbb += w * w;
          sab += u * w;
        }
        out[j] = from_sums(n, sa, sb, saa, sbb, sab);
      }
    }
  }

  // A1 frequency over the selected samples with a call.
  double a1_freq(std::size_t a) const {
    double called = 0, sum = 0;
    if (genotype_) {
      const std::uint64_t* p = planes_.data() + a * 3 * words_;
      std::uint64_t c = 0, x = 0;
      for (std::size_t w = 0; w < words_; ++w)
        c += static_cast<std::uint64_t>(__builtin_popcountll(p[w]));
      for (std::size_t w = words_; w < 3 * words_; ++w)
        x += static_cast<std::uint64_t>(__builtin_popcountll(p[w]));
      called = static_cast<double>(c);
      sum = static_cast<double>(x);
    } else {
      for (std::size_t k = 0; k < kept_; ++k) {
        const float v = values_[a * kept_ + k];
        if (std::isnan(v)) continue;
        called += 1;
        sum += v;
      }
    }
    return called > 0 ? sum / (2 * called) : nan;
  }

 private:
  bool genotype_;
  std::size_t rows_, kept_, count_, words_;
  std::vector<std::uint64_t> planes_;  // genotype: per column, called, one, two
  std::vector<float> values_;          // dosage: per column, the kept samples' dosages
};

// Runs body(i) for every i in [0, n) across the threads, in fixed chunks of rows, reporting
// progress between chunks.
template <typename Body>
void for_rows(std::size_t n, const analysis_options& analysis, const Body& body) {
  constexpr std::size_t chunk = 4096;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t last = std::min(n, first + chunk);
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(first, last, 16),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) body(i);
        },
        tbb::simple_partitioner());
    if (analysis.progress) {
      pass_progress p;
      p.columns_done = last;
      p.columns_total = n;
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      analysis.progress("ld pairs", p);
    }
  }
}

// The window of each row: the columns after it on its chromosome, at most `window` − 1
// variants and `window_kb` kb further. Positions are read when made, so that a bad position
// fails before the pass.
class ld_window {
 public:
  ld_window(const store& s, const selection& sel, const ld_options& o)
      : info_(s.columns()),
        columns_(sel.columns),
        window_(static_cast<std::uint64_t>(o.window)),
        limit_(static_cast<std::int64_t>(std::llround(o.window_kb * 1000))),
        pos_(columns_.size()) {
    for (std::size_t k = 0; k < columns_.size(); ++k) pos_[k] = position_of(info_[columns_[k]]);
  }

  // One past the last column of row i's window.
  std::size_t end(std::size_t i) const {
    const std::size_t m = columns_.size();
    const std::size_t count_end = window_ > m - i ? m : i + static_cast<std::size_t>(window_);
    const std::string& chrom = info_[columns_[i]].chrom;
    std::size_t e = i + 1;
    while (e < count_end && info_[columns_[e]].chrom == chrom && pos_[e] - pos_[i] <= limit_) ++e;
    return e;
  }

 private:
  const std::vector<column_info>& info_;
  const std::vector<std::size_t>& columns_;
  std::uint64_t window_;
  std::int64_t limit_;
  std::vector<std::int64_t> pos_;
};

// band: row i holds column i itself, then its window; rows stored one after another.
void band_rows(const column_set& set, const ld_window& window, bool squared,
               const analysis_options& analysis, ld_result& result) {
  const std::size_t m = result.columns;
  result.band_end.resize(m);
  std::vector<std::size_t> offset(m + 1, 0);
  for (std::size_t i = 0; i < m; ++i) {
    result.band_end[i] = window.end(i);
    offset[i + 1] = offset[i] + (result.band_end[i] - i);
  }
  result.matrix.assign(offset[m], nan);
  for_rows(m, analysis, [&](std::size_t i) {
    const std::size_t count = result.band_end[i] - i;
    std::vector<correlation> c(count);
    set.row(i, i, count, c.data());
    double* out = result.matrix.data() + offset[i];
    out[0] = std::isnan(c[0].r) ? nan : 1;
    for (std::size_t j = 1; j < count; ++j) out[j] = squared ? c[j].r2 : c[j].r;
  });
}

// table: each row's pairs with the columns after it within its window (every later column
// with inter-chr) whose r² reaches min_r2, in row order.
void table_pairs(const column_set& set, const ld_window* window, const ld_options& options,
                 const analysis_options& analysis, ld_result& result) {
  const std::size_t m = result.columns;
  std::vector<std::vector<ld_pair>> rows(m);
  for_rows(m, analysis, [&](std::size_t i) {
    const std::size_t end = window ? window->end(i) : m;
    const std::size_t count = end - i - 1;
    std::vector<correlation> c(count);
    if (count > 0) set.row(i, i + 1, count, c.data());
    for (std::size_t j = 0; j < count; ++j)
      if (c[j].r2 >= options.min_r2) rows[i].push_back({i, i + 1 + j, c[j].r, c[j].r2});
  });
  std::size_t total = 0;
  for (const auto& r : rows) total += r.size();
  result.pairs.reserve(total);
  for (auto& r : rows) result.pairs.insert(result.pairs.end(), r.begin(), r.end());
}

// square and triangle: the upper triangle computed, mirrored below.
void full_matrix(const column_set& set, bool squared, const analysis_options& analysis,
                 ld_result& result) {
  const std::size_t m = result.columns;
  result.matrix.assign(m * m, nan);
  for_rows(m, analysis, [&](std::size_t i) {
    const std::size_t count = m - i - 1;
    std::vector<correlation> c(count);
    if (count > 0) set.row(i, i + 1, count, c.data());
    // The diagonal is 1, as PLINK 1.9 writes it, or NaN for a variant constant over its calls.
    correlation self;
    set.row(i, i, 1, &self);
    result.matrix[i * m + i] = std::isnan(self.r) ? nan : 1;
    for (std::size_t j = 0; j < count; ++j) {
      const double v = squared ? c[j].r2 : c[j].r;
      result.matrix[i * m + i + 1 + j] = v;
      result.matrix[(i + 1 + j) * m + i] = v;
    }
  });
}

}  // namespace

void check_ld_options(const ld_options& o) {
  if (o.window < 1)
    throw error(errc::invalid_argument, "--ld-window: must be a positive count of variants, not " +
                                            std::to_string(o.window));
  if (!(o.window_kb > 0) || !std::isfinite(o.window_kb))
    throw error(errc::invalid_argument, "--ld-window-kb: must be a positive distance in kb, not " +
                                            std::to_string(o.window_kb));
  if (!(o.min_r2 >= 0 && o.min_r2 <= 1))
    throw error(errc::invalid_argument,
                "--ld-window-r2: must be in [0, 1], not " + std::to_string(o.min_r2));
  if (o.inter_chr && o.shape != ld_shape::table)
    throw error(errc::invalid_argument,
                "inter-chr: applies to the table only, not to square, square0, triangle or band");
  if (o.with_freqs && o.shape != ld_shape::table)
    throw error(errc::invalid_argument,
                "with-freqs: applies to the table only, not to square, square0, triangle or band");
  if (o.encoding != ld_encoding::text && o.shape == ld_shape::table)
    throw error(errc::invalid_argument,
                "bin/bin4: a binary report is a matrix; give square, square0 or triangle");
}

ld_result ld(const store& s, const selection& sel, const ld_options& options,
             const analysis_options& analysis) {
  check_ld_options(options);
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument,
                "ld: the store holds " + std::string(value_type_name(s.type())) +
                    " values; LD needs a genotype or dosage store (variants with positions)");
  ld_result result;
  result.options = options;
  result.columns = sel.columns.size();
  const bool windowed =
      (options.shape == ld_shape::table && !options.inter_chr) || options.shape == ld_shape::band;
  std::optional<ld_window> window;
  if (windowed) window.emplace(s, sel, options);
  const column_set set(s, sel, analysis);
  if (options.with_freqs) {
    result.a1_freq.resize(result.columns);
    for (std::size_t k = 0; k < result.columns; ++k) result.a1_freq[k] = set.a1_freq(k);
  }
  const bool squared = options.statistic == ld_statistic::r2;
  if (options.shape == ld_shape::band)
    band_rows(set, *window, squared, analysis, result);
  else if (options.shape == ld_shape::table)
    table_pairs(set, window ? &*window : nullptr, options, analysis, result);
  else
    full_matrix(set, squared, analysis, result);
  return result;
}

}  // namespace colflow
