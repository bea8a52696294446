// The selected columns standardised over a fit's samples: the products and updates of the solvers.
#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/shared/standardized_columns_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/deferred_update_internal.hpp"
#include "kernels/live_lists_internal.hpp"

namespace colflow::detail {
namespace {

// The products count the rarer allele: the other one where A1 is the common allele.
bool counts_second_allele(const column_stats& st) noexcept { return st.mean > 1.0; }

// The sums block_sums takes of a column: its rarer allele's dosages, and the missing calls'
// unless every used sample has a call.
live_sums sums_of(const column_stats& st, std::uint64_t used_count) noexcept {
  return {counts_second_allele(st), st.observed != used_count};
}

// Asks for `bytes` of the next column's codes from `at` on, without waiting. A thread takes the
// blocks of its own stretch first, column after column (sample_blocks), so the thread that
// computes a block now likely computes the same block of the next column; in a shuffled order
// that block's lines would otherwise miss in every cache.
void cache_block(std::span<const std::uint8_t> next, std::size_t bytes, std::size_t at) noexcept {
  if (next.size() < at + bytes) return;
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(next.data() + at + line);
}

}  // namespace

phenotype_samples used_samples(const store& s, const selection& sel,
                               std::span<const double> phenotype, std::size_t minimum,
                               const std::string& what) {
  const std::size_t rows = s.num_rows();
  if (phenotype.size() != rows || sel.row_kept.size() != rows)
    throw error(errc::invalid_argument,
                s.path().string() + ": the phenotype must have one value per sample of the store");
  phenotype_samples p;
  p.used.assign(rows, 0);
  double sum = 0;
  for (std::size_t i = 0; i < rows; ++i)
    if (sel.row_kept[i] && !std::isnan(phenotype[i])) {
      p.used[i] = 1;
      sum += phenotype[i];
      ++p.count;
    }
  if (p.count < minimum)
    throw error(errc::invalid_argument, what + "fewer than " + std::to_string(minimum) +
                                            " selected samples have a phenotype value");
  p.mean = sum / static_cast<double>(p.count);
  double squares = 0;
  for (std::size_t i = 0; i < rows; ++i)
    if (p.used[i]) squares += (phenotype[i] - p.mean) * (phenotype[i] - p.mean);
  p.sd = std::sqrt(squares / static_cast<double>(p.count - 1));
  if (!(p.sd > 0))
    throw error(errc::invalid_argument, what + "the phenotype is constant among the samples used");
  return p;
}

standardized_columns::standardized_columns(const store& s, const selection& sel,
                                           std::vector<std::uint8_t> used, communicator* processes)
    : genotype_(s.type() == value_type::genotype),
      rows_(s.num_rows()),
      used_(std::move(used)),
      used_count_(
          static_cast<std::uint64_t>(std::count(used_.begin(), used_.end(), std::uint8_t{1}))),
      blocks_(rows_, parallel_rows_threshold, processes),
      statistics_(s, used_),
      stats_(sel.columns.size()),
      z_(genotype_ ? 0 : static_cast<Eigen::Index>(rows_)) {}

void standardized_columns::keep_live_lists(std::size_t budget) {
  if (!genotype_) return;
  listed_.resize(stats_.size());
  list_budget_ = budget;
}

void standardized_columns::learn(std::size_t p, const column_view<double>& v) {
  stats_[p] = statistics_(v);
  if (!listed_.empty() && !constant(p)) list_live_bytes(p, v.codes);
}

void standardized_columns::list_live_bytes(std::size_t p, std::span<const std::uint8_t> codes) {
  if (list_bytes_.load(std::memory_order_relaxed) >= list_budget_) return;  // the budget is spent
  const std::size_t own = blocks_.own_end() - blocks_.own_begin();
  listed_column column(own, no_list);
  const live_sums sums = sums_of(stats_[p], used_count_);
  for (std::size_t b = blocks_.own_begin(); b < blocks_.own_end(); ++b) {
    const std::size_t first = sample_blocks::first(b), n = blocks_.size(b), at = column.size();
    const std::size_t bytes = (n + 3) / 4;
    const std::span<const std::uint8_t> mask = statistics_.mask();
    if (append_live_list(codes.subspan(first / 4, bytes), n,
                         mask.empty() ? mask : mask.subspan(first / 4, bytes), sums, column))
      column[b - blocks_.own_begin()] = static_cast<std::uint32_t>(at);
  }
  if (column.size() == own) return;  // no block listed
  column.shrink_to_fit();
  const std::size_t bytes = column.size() * sizeof(std::uint32_t);
  // Columns learnt at the same time take their room in any order: whether a column has its
  // lists changes the time of its products, never their bits.
  if (list_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes > list_budget_) {
    list_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return;
  }
  listed_[p] = std::move(column);
}

const std::uint32_t* standardized_columns::live_list(std::size_t p, std::size_t b) const noexcept {
  if (listed_.empty() || listed_[p].empty()) return nullptr;
  const listed_column& column = listed_[p];
  const std::uint32_t at = column[b - blocks_.own_begin()];
  return at == no_list ? nullptr : column.data() + at;
}

void standardized_columns::cache_live_lists(std::size_t p, std::size_t then) const noexcept {
  if (listed_.empty()) return;
  __builtin_prefetch(&listed_[then]);
  const std::uint32_t* lists = listed_[p].data();
  const std::size_t bytes = std::min<std::size_t>(listed_[p].size() * sizeof(std::uint32_t), 512);
  for (std::size_t line = 0; line < bytes; line += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(lists) + line);
}

// A block of rows is a run of whole bytes of codes: the kernels see it as a short column. They
// add only the bytes that hold what they count, so the rarer allele is counted: where A1 is the
// common allele, x = 2 − (the other allele's dosage) for every call. out[1] is 0 for a column
// with a call for every used sample.
void standardized_columns::block_sums(std::size_t p, const std::uint8_t* codes,
                                      std::span<const double> r, std::size_t first, std::size_t n,
                                      double* out) const {
  const column_stats& st = stats_[p];
  const std::span<const std::uint8_t> block(codes + first / 4, (n + 3) / 4);
  const double* w = r.data() + first;
  if (const std::uint32_t* list = live_list(p, first / sample_block_rows)) {
    const std::array<double, 2> sums = listed_sums(list, n, sums_of(st, used_count_), w);
    out[0] = sums[0];
    out[1] = sums[1];
    return;
  }
  const bool second = counts_second_allele(st);
  if (st.observed == used_count_) {
    out[0] = second ? second_dosage_dot(block, n, w) : dosage_dot(block, n, w);
    out[1] = 0.0;
    return;
  }
  const std::array<double, 2> sums = second ? second_dosage_dot_and_missing_sum(block, n, w)
                                            : dosage_dot_and_missing_sum(block, n, w);
  out[0] = sums[0];
  out[1] = sums[1];
}

// Σ (x − m) r over the calls, whose r sum to r_sum less the missing calls' (r is 0 where a
// sample is not used), over the SD. With updates deferred, r is the residual less c on the used
// samples, which sum to r_sum − c·(used samples).
double standardized_columns::centred_dot(std::size_t p, double allele, double missing,
                                         double r_sum) const {
  const column_stats& st = stats_[p];
  const double held_sum = r_sum - mean_shift_ * static_cast<double>(used_count_);
  const double called = held_sum - missing;
  const double centred =
      counts_second_allele(st) ? (2.0 - st.mean) * called - allele : allele - st.mean * called;
  return centred / st.sd;
}

template <typename Blocks>
double standardized_columns::genotype_dot(Blocks& blocks, std::size_t p, const std::uint8_t* codes,
                                          std::span<const double> r, double r_sum,
                                          std::span<const std::uint8_t> next) const {
  const auto sums =
      blocks.template sums<2>([&](std::size_t, std::size_t first, std::size_t n, double* out) {
        cache_block(next, (n + 3) / 4, first / 4);
        block_sums(p, codes, r, first, n, out);
      });
  return centred_dot(p, sums[0], sums[1], r_sum);
}

// The partials added in block order from 0, as sample_blocks::sums adds them.
double standardized_columns::dot_alone(std::size_t p, const column_view<double>& v,
                                       std::span<const double> r, double r_sum) const {
  std::array<double, 2> total{};
  for (std::size_t b = 0; b < blocks_.count(); ++b) {
    double partial[2];
    block_sums(p, v.codes.data(), r, sample_blocks::first(b), blocks_.size(b), partial);
    total[0] += partial[0];
    total[1] += partial[1];
  }
  return centred_dot(p, total[0], total[1], r_sum);
}

std::array<double, 2> standardized_columns::dot_pair(std::size_t p, const column_view<double>& v,
                                                     std::size_t q, const column_view<double>& u,
                                                     std::span<const double> r, double r_sum,
                                                     const next_pair& next) {
  const auto sums =
      blocks_.sums<4>([&](std::size_t, std::size_t first, std::size_t n, double* out) {
        for (const std::span<const std::uint8_t> codes : next)
          cache_block(codes, (n + 3) / 4, first / 4);
        const std::size_t b = first / sample_block_rows;
        const std::uint32_t *p_list = live_list(p, b), *q_list = live_list(q, b);
        if (p_list && q_list) {
          const std::array<double, 4> both =
              listed_sums_pair(p_list, sums_of(stats_[p], used_count_), q_list,
                               sums_of(stats_[q], used_count_), n, r.data() + first);
          std::copy(both.begin(), both.end(), out);
          return;
        }
        block_sums(p, v.codes.data(), r, first, n, out);
        block_sums(q, u.codes.data(), r, first, n, out + 2);
      });
  return {centred_dot(p, sums[0], sums[1], r_sum), centred_dot(q, sums[2], sums[3], r_sum)};
}

double standardized_columns::dot(std::size_t p, const column_view<double>& v,
                                 std::span<const double> r, double r_sum) {
  // A column of one block: the stream has asked for the first 4 KiB of the next column's codes.
  if (genotype_)
    return genotype_dot(blocks_, p, v.codes.data(), r, r_sum,
                        blocks_.count() > 1 ? v.next_codes : std::span<const std::uint8_t>());
  // Standardised block by block, by the thread that then multiplies the block.
  return blocks_.sum([&](std::size_t, std::size_t first, std::size_t n) {
    standardize(p, v, first, n, z_.data());
    const auto rows = static_cast<Eigen::Index>(n), at = static_cast<Eigen::Index>(first);
    return z_.segment(at, rows).dot(Eigen::Map<const Eigen::VectorXd>(r.data() + first, rows));
  });
}

void standardized_columns::subtract(std::size_t p, const column_view<double>& v, double delta,
                                    std::span<double> r) {
  const column_stats& st = stats_[p];
  if (defer_means_) {
    subtract_deferred(p, v.codes, delta, r);
    return;
  }
  if (genotype_) {
    const std::uint8_t* codes = v.codes.data();
    const std::span<const std::uint8_t> mask = statistics_.mask();
    const double a = -delta / st.sd, c = delta * st.mean / st.sd;
    blocks_.for_each([&](std::size_t, std::size_t first, std::size_t n) {
      const std::size_t bytes = (n + 3) / 4;
      genotype_axpy({codes + first / 4, bytes}, n,
                    mask.empty() ? mask : mask.subspan(first / 4, bytes), a, c, r.data() + first);
    });
    return;
  }
  blocks_.for_each([&](std::size_t, std::size_t first, std::size_t n) {
    const auto rows = static_cast<Eigen::Index>(n), at = static_cast<Eigen::Index>(first);
    Eigen::Map<Eigen::VectorXd>(r.data() + first, rows) -= delta * z_.segment(at, rows);
  });
}

// z = σ(x − m_x)/s on a called sample, x the counted allele's copies: −δz = h·x + g.
void standardized_columns::subtract_deferred(std::size_t p, std::span<const std::uint8_t> codes,
                                             double delta, std::span<double> r) {
  const column_stats& st = stats_[p];
  const live_sums sums = sums_of(st, used_count_);
  const double sign = sums.second_allele ? -1.0 : 1.0;
  const double mean = sums.second_allele ? 2.0 - st.mean : st.mean;
  const double h = -(delta * sign) / st.sd, g = delta * sign * mean / st.sd;
  const std::span<const std::uint8_t> mask = statistics_.mask();
  blocks_.for_each([&](std::size_t b, std::size_t first, std::size_t n) {
    const std::size_t bytes = (n + 3) / 4;
    const std::span<const std::uint8_t> kept = mask.empty() ? mask : mask.subspan(first / 4, bytes);
    if (const std::uint32_t* list = live_list(p, b))
      deferred_update(list, n, kept, sums, h, g, r.data() + first);
    else
      deferred_update(codes.subspan(first / 4, bytes), n, kept, sums, h, g, r.data() + first);
  });
  mean_shift_ += g;
}

void standardized_columns::settle(std::span<double> r) {
  if (!defer_means_) return;
  const double c = mean_shift_;
  blocks_.for_each([&](std::size_t, std::size_t first, std::size_t n) {
    for (std::size_t i = first; i < first + n; ++i)
      if (used_[i]) r[i] += c;
  });
  mean_shift_ = 0;
}

void standardized_columns::values(std::size_t p, const column_view<double>& v, double* out) const {
  if (!genotype_) {
    standardize(p, v, 0, rows_, out);
    return;
  }
  decode_genotypes(v.codes, standardized_lut(stats_[p]), std::span<double>(out, rows_));
  for (std::size_t i = 0; i < rows_; ++i)
    if (!used_[i]) out[i] = 0.0;
}

void standardized_columns::standardize(std::size_t p, const column_view<double>& v,
                                       std::size_t first, std::size_t n, double* out) const {
  const column_stats& st = stats_[p];
  for (std::size_t i = first; i < first + n; ++i) {
    const double x = v.values[static_cast<Eigen::Index>(i)];
    out[i] = used_[i] && !std::isnan(x) ? (x - st.mean) / st.sd : 0.0;
  }
}

}  // namespace colflow::detail
