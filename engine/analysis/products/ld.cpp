// colflow ld: correlations between variants over the samples called in both (analysis/ld.hpp),
// from the exact pair sums of kernels/genotype_products_internal.hpp on genotype stores and from
// the decoded dosages on dosage stores.
#include "colflow/analysis/ld.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/genotype_products_internal.hpp"

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

double genetic_position_of(const column_info& c) {
  double cm = 0;
  const auto [end, ec] = std::from_chars(c.cm.data(), c.cm.data() + c.cm.size(), cm);
  if (ec != std::errc{} || end != c.cm.data() + c.cm.size() || !std::isfinite(cm))
    throw error(errc::invalid_argument,
                "--ld-window-cm: variant " + c.id + " has no position in cM ('" + c.cm + "')");
  return cm;
}

// The selected columns at positions [first, end) in memory, and the sums of any pair of them
// (positions in selection::columns).
class column_set {
 public:
  column_set(const store& s, const selection& sel, const analysis_options& analysis,
             std::size_t first, std::size_t end)
      : genotype_(s.type() == value_type::genotype),
        rows_(s.num_rows()),
        kept_(sel.rows.size()),
        first_(first),
        count_(end - first),
        words_(genotype_plane_words(rows_)) {
    stream_options so = analysis.stream;
    so.values = decode_as::stored;
    so.decode_values = !genotype_;
    column_stream<double> stream(s, so);
    if (analysis.progress)
      stream.on_progress([&](const pass_progress& p) { analysis.progress("ld", p); });
    const auto from = sel.columns.begin() + static_cast<std::ptrdiff_t>(first);
    const std::vector<std::size_t> columns(from, from + static_cast<std::ptrdiff_t>(count_));
    if (genotype_) {
      const std::vector<std::uint8_t> mask = make_sample_mask(sel.row_kept);
      // Left uninitialised: make_genotype_planes writes every word, and zeroing hundreds of
      // megabytes first would cost as much as making the planes.
      planes_.reset(new std::uint64_t[count_ * 3 * words_]);
      stream.run_batches(columns, [&](std::span<const column_view<double>> batch) {
        // A column's planes depend on its codes alone: any split of the batch gives the same.
        tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t k) {
          const column_view<double>& v = batch[k];
          make_genotype_planes(v.codes, rows_, mask, planes_.get() + v.position * 3 * words_);
        });
        return true;
      });
    } else {
      values_.resize(count_ * kept_);
      stream.run(columns, [&](const column_view<double>& v) {
        float* out = values_.data() + v.position * kept_;
        for (std::size_t k = 0; k < kept_; ++k)
          out[k] = static_cast<float>(v.values[static_cast<Eigen::Index>(sel.rows[k])]);
        return true;
      });
    }
  }

  // Correlations of column a with columns [b, b + count) into out.
  void row(std::size_t a, std::size_t b, std::size_t count, correlation* out) const {
    if (genotype_) {
      constexpr std::size_t tile = 32;
      const std::uint64_t* pa = planes(a);
      const std::uint64_t* pb[tile];
      genotype_pair_sums sums[tile];
      for (std::size_t j0 = 0; j0 < count; j0 += tile) {
        const std::size_t m = std::min(tile, count - j0);
        for (std::size_t j = 0; j < m; ++j) pb[j] = planes(b + j0 + j);
        genotype_pair_products(&pa, 1, pb, m, words_, sums);
        for (std::size_t j = 0; j < m; ++j) out[j0 + j] = from_sums(sums[j]);
      }
    } else {
      const float* x = values(a);
      for (std::size_t j = 0; j < count; ++j) {
        const float* y = values(b + j);
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
      const auto counts = genotype_plane_counts(planes(a), words_);
      called = static_cast<double>(counts[0]);
      sum = static_cast<double>(counts[1] + counts[2]);
    } else {
      for (std::size_t k = 0; k < kept_; ++k) {
        const float v = values(a)[k];
        if (std::isnan(v)) continue;
        called += 1;
        sum += v;
      }
    }
    return called > 0 ? sum / (2 * called) : nan;
  }

 private:
  const std::uint64_t* planes(std::size_t a) const {
    return planes_.get() + (a - first_) * 3 * words_;
  }
  const float* values(std::size_t a) const { return values_.data() + (a - first_) * kept_; }

  bool genotype_;
  std::size_t rows_, kept_, first_, count_, words_;
  std::unique_ptr<std::uint64_t[]> planes_;  // genotype: per column, called, one, two
  std::vector<float> values_;                // dosage: per column, the kept samples' dosages
};

// Runs body(i) for every i in [first, last) across the threads, in fixed chunks of rows,
// reporting progress between chunks.
template <typename Body>
void for_rows(std::size_t first, std::size_t last, const analysis_options& analysis,
              const Body& body) {
  constexpr std::size_t chunk = 4096;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t from = first; from < last; from += chunk) {
    const std::size_t to = std::min(last, from + chunk);
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(from, to, 16),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i < r.end(); ++i) body(i);
        },
        tbb::simple_partitioner());
    if (analysis.progress) {
      pass_progress p;
      p.columns_done = to - first;
      p.columns_total = last - first;
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      analysis.progress("ld pairs", p);
    }
  }
}

// The window of each row: the columns after it on its chromosome, at most `window` − 1
// variants and `window_kb` kb (or `window_cm` cM) further. Positions are read when made, so
// that a bad position fails before the pass.
class ld_window {
 public:
  ld_window(const store& s, const selection& sel, const ld_options& o)
      : info_(s.columns()),
        columns_(sel.columns),
        window_(static_cast<std::uint64_t>(o.window)),
        limit_(o.window_cm > 0 ? o.window_cm : std::round(o.window_kb * 1000)),
        pos_(columns_.size()) {
    if (o.window_cm > 0) {
      bool mapped = false;
      for (std::size_t k = 0; k < columns_.size(); ++k) {
        pos_[k] = genetic_position_of(info_[columns_[k]]);
        mapped = mapped || pos_[k] != 0;
      }
      if (!mapped && !columns_.empty())
        throw error(errc::invalid_argument,
                    "--ld-window-cm: " + s.path().string() +
                        " has no genetic map (every selected variant is at 0 cM): give the .bim "
                        "a map's cM positions, or use --ld-window-kb");
    } else {  // base pairs, exact in a double
      for (std::size_t k = 0; k < columns_.size(); ++k)
        pos_[k] = static_cast<double>(position_of(info_[columns_[k]]));
    }
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
  double limit_;             // in the unit of pos_
  std::vector<double> pos_;  // base pairs, or cM with window_cm
};

// The rows of the report each process computes: process r the rows [bounds[r], bounds[r + 1]),
// shares of about equal pairs, and row i pairs with columns up to ends[i] (excluded). One
// process computes them all.
struct row_share {
  communicator* processes = nullptr;  // null: this process alone
  std::size_t rank = 0;
  std::vector<std::size_t> bounds;
  std::vector<std::size_t> ends;

  std::size_t first() const { return bounds[rank]; }
  std::size_t last() const { return bounds[rank + 1]; }
  // The columns this process reads: from its first row to the furthest end of its rows.
  std::size_t columns_end() const {
    std::size_t end = first();
    for (std::size_t i = first(); i < last(); ++i) end = std::max(end, ends[i]);
    return end;
  }
  // Per process, the sum of size(i) over its rows.
  template <typename Size>
  std::vector<std::size_t> counts(const Size& size) const {
    std::vector<std::size_t> out(bounds.size() - 1, 0);
    for (std::size_t r = 0; r + 1 < bounds.size(); ++r)
      for (std::size_t i = bounds[r]; i < bounds[r + 1]; ++i) out[r] += size(i);
    return out;
  }
  // Every process's values, in rank order (so in row order): `mine` alone on one process.
  std::vector<double> gather(std::vector<double> mine,
                             const std::vector<std::size_t>& counts) const {
    if (processes == nullptr) return mine;
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    std::vector<double> all(total);
    processes->all_gather(mine, all, counts);
    return all;
  }
};

// `ends` of every row, shared among the processes of `processes`.
row_share share_rows(std::vector<std::size_t> ends, communicator* processes) {
  row_share share;
  const std::size_t m = ends.size();
  std::size_t parts = 1;
  if (distributed(processes)) {
    share.processes = processes;
    share.rank = static_cast<std::size_t>(processes->rank());
    parts = static_cast<std::size_t>(processes->size());
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < m; ++i) total += ends[i] - i;
  share.bounds.assign(parts + 1, m);
  share.bounds[0] = 0;
  std::uint64_t done = 0;
  std::size_t r = 1;
  for (std::size_t i = 0; i < m; ++i) {
    while (r < parts && done * parts >= total * r) share.bounds[r++] = i;
    done += ends[i] - i;
  }
  share.ends = std::move(ends);
  return share;
}

// band: row i holds column i itself, then its window; rows stored one after another.
void band_rows(const column_set& set, const row_share& share, bool squared,
               const analysis_options& analysis, ld_result& result) {
  const std::size_t m = result.columns;
  result.band_end = share.ends;
  std::vector<std::size_t> offset(m + 1, 0);
  for (std::size_t i = 0; i < m; ++i) offset[i + 1] = offset[i] + (share.ends[i] - i);
  const std::size_t base = offset[share.first()];
  std::vector<double> mine(offset[share.last()] - base, nan);
  for_rows(share.first(), share.last(), analysis, [&](std::size_t i) {
    const std::size_t count = share.ends[i] - i;
    std::vector<correlation> c(count);
    set.row(i, i, count, c.data());
    double* out = mine.data() + (offset[i] - base);
    out[0] = std::isnan(c[0].r) ? nan : 1;
    for (std::size_t j = 1; j < count; ++j) out[j] = squared ? c[j].r2 : c[j].r;
  });
  result.matrix =
      share.gather(std::move(mine), share.counts([&](std::size_t i) { return share.ends[i] - i; }));
}

// table: each row's pairs with the columns after it up to its end (its window, or every later
// column with inter-chr) whose r² reaches min_r2, in row order.
void table_pairs(const column_set& set, const row_share& share, const ld_options& options,
                 const analysis_options& analysis, ld_result& result) {
  const std::size_t first = share.first();
  std::vector<std::vector<ld_pair>> rows(share.last() - first);
  for_rows(first, share.last(), analysis, [&](std::size_t i) {
    const std::size_t count = share.ends[i] - i - 1;
    std::vector<correlation> c(count);
    if (count > 0) set.row(i, i + 1, count, c.data());
    for (std::size_t j = 0; j < count; ++j)
      if (c[j].r2 >= options.min_r2) rows[i - first].push_back({i, i + 1 + j, c[j].r, c[j].r2});
  });
  std::size_t total = 0;
  for (const auto& r : rows) total += r.size();
  result.pairs.reserve(total);
  for (auto& r : rows) result.pairs.insert(result.pairs.end(), r.begin(), r.end());
  if (share.processes == nullptr) return;
  // Every process's pairs as (a, b, r, r²): positions below 2^53 are exact doubles.
  std::vector<double> packed;
  packed.reserve(4 * total);
  for (const ld_pair& p : result.pairs)
    packed.insert(packed.end(), {static_cast<double>(p.a), static_cast<double>(p.b), p.r, p.r2});
  std::vector<std::size_t> counts;
  for (const double c : all_gather_one(*share.processes, static_cast<double>(packed.size())))
    counts.push_back(static_cast<std::size_t>(c));
  const std::vector<double> all = share.gather(std::move(packed), counts);
  result.pairs.resize(all.size() / 4);
  for (std::size_t k = 0; k < result.pairs.size(); ++k)
    result.pairs[k] = {static_cast<std::size_t>(all[4 * k]),
                       static_cast<std::size_t>(all[4 * k + 1]), all[4 * k + 2], all[4 * k + 3]};
}

// Row i of the upper triangle from its diagonal: m − i values at out.
void upper_row(const column_set& set, std::size_t i, std::size_t m, bool squared, double* out) {
  std::vector<correlation> c(m - i);
  set.row(i, i, m - i, c.data());
  // The diagonal is 1, as PLINK 1.9 writes it, or NaN for a variant constant over its calls.
  out[0] = std::isnan(c[0].r) ? nan : 1;
  for (std::size_t j = 1; j < m - i; ++j) out[j] = squared ? c[j].r2 : c[j].r;
}

// square and triangle: the upper triangle computed, mirrored below. On several processes each
// computes its rows' upper parts, gathered into every process's matrix.
void full_matrix(const column_set& set, const row_share& share, bool squared,
                 const analysis_options& analysis, ld_result& result) {
  const std::size_t m = result.columns;
  result.matrix.assign(m * m, nan);
  if (share.processes == nullptr) {
    for_rows(0, m, analysis, [&](std::size_t i) {
      upper_row(set, i, m, squared, result.matrix.data() + i * m + i);
    });
  } else {
    // Row i's part starts at offset(i) − offset(first) of this process's values.
    const auto offset = [m](std::size_t i) { return i * m - (i == 0 ? 0 : i * (i - 1) / 2); };
    std::vector<double> mine(offset(share.last()) - offset(share.first()));
    for_rows(share.first(), share.last(), analysis, [&](std::size_t i) {
      upper_row(set, i, m, squared, mine.data() + (offset(i) - offset(share.first())));
    });
    const std::vector<double> all =
        share.gather(std::move(mine), share.counts([m](std::size_t i) { return m - i; }));
    for (std::size_t i = 0; i < m; ++i)
      std::copy_n(all.data() + offset(i), m - i, result.matrix.data() + i * m + i);
  }
  tbb::parallel_for(std::size_t{1}, m, [&](std::size_t j) {
    for (std::size_t i = 0; i < j; ++i) result.matrix[j * m + i] = result.matrix[i * m + j];
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
  if (!(o.window_cm >= 0) || !std::isfinite(o.window_cm))
    throw error(errc::invalid_argument, "--ld-window-cm: must be a positive distance in cM, not " +
                                            std::to_string(o.window_cm));
  if (o.window_cm > 0 && o.inter_chr)
    throw error(errc::invalid_argument, "--ld-window-cm: inter-chr lists pairs in no window");
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
  // Each row's end: its window's, or every later column.
  const std::size_t m = result.columns;
  std::vector<std::size_t> ends(m, m);
  if (windowed) {
    const ld_window window(s, sel, options);
    for (std::size_t i = 0; i < m; ++i) ends[i] = window.end(i);
  }
  const row_share share = share_rows(std::move(ends), analysis.processes);
  const column_set set(s, sel, analysis, share.first(), share.columns_end());
  if (options.with_freqs) {
    std::vector<double> mine;
    for (std::size_t k = share.first(); k < share.last(); ++k) mine.push_back(set.a1_freq(k));
    result.a1_freq = share.gather(std::move(mine), share.counts([](std::size_t) { return 1; }));
  }
  const bool squared = options.statistic == ld_statistic::r2;
  if (options.shape == ld_shape::band)
    band_rows(set, share, squared, analysis, result);
  else if (options.shape == ld_shape::table)
    table_pairs(set, share, options, analysis, result);
  else
    full_matrix(set, share, squared, analysis, result);
  return result;
}

}  // namespace colflow
