// colflow clump: PLINK 1.9's --clump (analysis/clump.hpp) on the bit planes of the variants
// near a top variant, with the haplotype r² of analysis/products/haplotype_r2_internal.hpp.
#include "colflow/analysis/clump.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "analysis/products/haplotype_r2_internal.hpp"
#include "analysis/shared/id_index_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/stream/column_stream.hpp"
#include "kernels/genotype_products_internal.hpp"

namespace colflow {
namespace {

using detail::id_index;

constexpr double small_epsilon = 0.00000000000005684341886080801486968994140625;  // 2^-44

// A variant's table entries: P and table (1-based), tables in order and, within one, the
// lines last to first (PLINK 1.9's list order, which decides the index's own entry).
struct entry {
  double p;
  std::uint32_t file;
};

// Per selected column: its entries, and its entries too large to keep (counted as NSIG).
struct variant_entries {
  std::vector<entry> entries;
  std::uint64_t nsig = 0;
  bool in_table() const { return !entries.empty() || nsig > 0; }
};

// Every entry above this P is only counted: PLINK 1.9 keeps those up to max(p2, 0.05), or
// just past p1 when p1 is larger.
double kept_threshold(const clump_options& o) {
  double t = std::max(0.05, o.p2);
  if (o.p1 >= t) t = o.p1 * (1 + small_epsilon);
  return t;
}

// The selected columns' positions by ID; an ID selected twice is an error.
id_index id_positions(const store& s, const selection& sel) {
  std::vector<std::string_view> ids(sel.columns.size());
  for (std::size_t k = 0; k < sel.columns.size(); ++k) ids[k] = s.columns()[sel.columns[k]].id;
  id_index at(std::move(ids));
  if (const auto repeat = at.first_repeat())
    throw error(errc::invalid_argument, "clump: variant ID '" +
                                            s.columns()[sel.columns[*repeat]].id +
                                            "' appears twice among the selected variants of " +
                                            s.path().string() + " (--exclude one of them)");
  return at;
}

// The entries of the tables by selected column, the top variants absent from the selection.
struct matched_tables {
  std::vector<variant_entries> variants;
  std::vector<clump_absent> absent;
};

matched_tables match_tables(const store& s, const selection& sel,
                            const std::vector<p_value_table>& tables, const clump_options& o) {
  const id_index at = id_positions(s, sel);
  const double kept = kept_threshold(o);
  matched_tables m;
  m.variants.resize(sel.columns.size());
  std::unordered_map<std::string, double> absent;
  std::vector<std::size_t> found;
  for (std::size_t f = 0; f < tables.size(); ++f) {
    const auto& entries = tables[f].entries;
    // Looked up on the threads, then taken in PLINK 1.9's order.
    found.resize(entries.size());
    tbb::parallel_for(std::size_t{0}, entries.size(),
                      [&](std::size_t i) { found[i] = at.find(entries[i].id); });
    for (std::size_t i = entries.size(); i-- > 0;) {
      const p_value_entry& e = entries[i];
      if (found[i] == id_index::npos) {
        if (e.p <= o.p1) {
          const auto [a, fresh] = absent.try_emplace(e.id, e.p);
          if (!fresh) a->second = std::min(a->second, e.p);
        }
        continue;
      }
      variant_entries& v = m.variants[found[i]];
      if (e.p > kept)
        ++v.nsig;
      else
        v.entries.push_back({e.p, static_cast<std::uint32_t>(f + 1)});
    }
  }
  for (const auto& [id, p] : absent) m.absent.push_back({id, p});
  std::sort(m.absent.begin(), m.absent.end(), [](const clump_absent& a, const clump_absent& b) {
    return a.p != b.p ? a.p < b.p : a.id < b.id;
  });
  return m;
}

// Top variants (an entry with P ≤ p1) by increasing smallest P, ties by position.
struct top_variant {
  double p;
  std::size_t column;
};

std::vector<top_variant> top_variants(const std::vector<variant_entries>& v, double p1) {
  std::vector<top_variant> top;
  for (std::size_t k = 0; k < v.size(); ++k) {
    double best = 2;
    bool is_top = false;
    for (const entry& e : v[k].entries) {
      best = std::min(best, e.p);
      is_top = is_top || e.p <= p1;
    }
    if (is_top) top.push_back({best, k});
  }
  std::sort(top.begin(), top.end(), [](const top_variant& a, const top_variant& b) {
    return a.p != b.p ? a.p < b.p : a.column < b.column;
  });
  return top;
}

std::int64_t position_of(const column_info& c) {
  std::int64_t p = 0;
  const auto [end, ec] = std::from_chars(c.pos.data(), c.pos.data() + c.pos.size(), p);
  if (ec != std::errc{} || end != c.pos.data() + c.pos.size())
    throw error(errc::invalid_argument,
                "clump: variant " + c.id + " has no base-pair position ('" + c.pos + "')");
  return p;
}

// The selected columns' chromosomes and positions: window(k) is the run of columns on k's
// chromosome less than ⌊kb × 1000⌋ bp from it (PLINK 1.9's radius of ⌊kb × 1000⌋ − 1 bp).
class clump_windows {
 public:
  clump_windows(const store& s, const selection& sel, double kb)
      : radius_(static_cast<std::int64_t>(std::floor(kb * 1000)) - 1),
        pos_(sel.columns.size()),
        chrom_start_(sel.columns.size()) {
    const auto& info = s.columns();
    for (std::size_t k = 0; k < pos_.size(); ++k) {
      const column_info& c = info[sel.columns[k]];
      pos_[k] = position_of(c);
      const bool same = k > 0 && c.chrom == info[sel.columns[k - 1]].chrom;
      chrom_start_[k] = same ? chrom_start_[k - 1] : k;
      if (same && pos_[k] < pos_[k - 1])
        throw error(errc::invalid_argument, "clump: the variants of chromosome " + c.chrom +
                                                " are not in order of " + "position (" + c.id +
                                                " at " + c.pos + " follows a larger position)");
    }
    chrom_end_.resize(pos_.size());
    for (std::size_t k = pos_.size(); k-- > 0;)
      chrom_end_[k] =
          k + 1 < pos_.size() && chrom_start_[k + 1] == chrom_start_[k] ? chrom_end_[k + 1] : k + 1;
  }

  // [first, last) of column k's window.
  std::pair<std::size_t, std::size_t> window(std::size_t k) const {
    const auto begin = pos_.begin();
    const std::int64_t p = pos_[k];
    const auto first = std::lower_bound(begin + static_cast<std::ptrdiff_t>(chrom_start_[k]),
                                        begin + static_cast<std::ptrdiff_t>(k), p - radius_);
    const auto last =
        std::upper_bound(begin + static_cast<std::ptrdiff_t>(k),
                         begin + static_cast<std::ptrdiff_t>(chrom_end_[k]), p + radius_);
    return {static_cast<std::size_t>(first - begin), static_cast<std::size_t>(last - begin)};
  }

 private:
  std::int64_t radius_;
  std::vector<std::int64_t> pos_;
  std::vector<std::size_t> chrom_start_, chrom_end_;
};

// The selected founders: both parents '0' (or unknown, for a store without a pedigree).
std::vector<std::uint8_t> founders_of(const store& s, const selection& sel, std::size_t& count) {
  std::vector<std::uint8_t> keep(sel.row_kept);
  const auto& samples = s.samples();
  count = 0;
  for (std::size_t r = 0; r < keep.size(); ++r) {
    if (!keep[r]) continue;
    const sample_info& x = samples[r];
    const bool founder =
        (x.father.empty() || x.father == "0") && (x.mother.empty() || x.mother == "0");
    keep[r] = founder ? 1 : 0;
    count += founder;
  }
  return keep;
}

// The r² of each index variant of a group with the table's variants of its window, from one
// pass over the columns the windows reach: a column's planes are made in its thread's scratch
// and counted against the planes of the group's variants whose windows hold it. Only the
// group's values are kept (and its variants' planes), not every column's planes.
class window_r2 {
 public:
  window_r2(const store& s, const selection& sel, const std::vector<variant_entries>& v,
            std::span<const top_variant> group, const clump_windows& w,
            const std::vector<std::uint8_t>& keep, const analysis_options& analysis)
      : words_(genotype_plane_words(s.num_rows())),
        rows_(s.num_rows()),
        mask_(make_sample_mask(keep)),
        group_(group.begin(), group.end()),
        first_(group.size()),
        offset_(group.size() + 1, 0) {
    for (std::size_t t = 0; t < group.size(); ++t) {
      const auto [first, last] = w.window(group[t].column);
      first_[t] = first;
      offset_[t + 1] = offset_[t] + (last - first);
    }
    values_.assign(offset_.back(), std::numeric_limits<double>::quiet_NaN());
    make_group_planes(s, sel, analysis);
    count_windows(s, sel, v, analysis);
  }

  // r² of the group's t-th variant with the columns of its window, from its first: NaN for
  // the variant itself and for columns in no table.
  std::span<const double> of(std::size_t t) const {
    return std::span<const double>(values_).subspan(offset_[t], offset_[t + 1] - offset_[t]);
  }

 private:
  // The planes of the group's variants, in the group's order.
  void make_group_planes(const store& s, const selection& sel, const analysis_options& analysis) {
    std::vector<std::size_t> order(group_.size());
    for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return group_[a].column < group_[b].column; });
    std::vector<std::size_t> columns(order.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      columns[k] = sel.columns[group_[order[k]].column];
    group_planes_.resize(group_.size() * 3 * words_);
    stream(s, analysis).run_batches(columns, [&](std::span<const column_view<double>> batch) {
      tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t b) {
        const column_view<double>& c = batch[b];
        make_genotype_planes(c.codes, rows_, mask_, planes_of(order[c.position]));
      });
      return true;
    });
  }

  // Each column in a table and in some window, with the group's variants whose windows hold
  // it: one pass in column order, a batch's columns on the threads (each value has one writer).
  void count_windows(const store& s, const selection& sel, const std::vector<variant_entries>& v,
                     const analysis_options& analysis) {
    // Which of the group's windows hold each column (column-major lists).
    std::vector<std::size_t> holders_start(v.size() + 1, 0);
    for (std::size_t t = 0; t < group_.size(); ++t)
      for (std::size_t k = first_[t]; k < first_[t] + window_size(t); ++k)
        if (k != group_[t].column && v[k].in_table()) ++holders_start[k + 1];
    for (std::size_t k = 0; k < v.size(); ++k) holders_start[k + 1] += holders_start[k];
    std::vector<std::uint32_t> holders(holders_start.back());
    std::vector<std::size_t> filled(holders_start.begin(), holders_start.end() - 1);
    for (std::size_t t = 0; t < group_.size(); ++t)
      for (std::size_t k = first_[t]; k < first_[t] + window_size(t); ++k)
        if (k != group_[t].column && v[k].in_table())
          holders[filled[k]++] = static_cast<std::uint32_t>(t);
    std::vector<std::size_t> needed, columns;
    for (std::size_t k = 0; k < v.size(); ++k)
      if (holders_start[k + 1] > holders_start[k]) {
        needed.push_back(k);
        columns.push_back(sel.columns[k]);
      }
    tbb::enumerable_thread_specific<std::vector<std::uint64_t>> scratch(3 * words_);
    auto pass = stream(s, analysis);
    if (analysis.progress)
      pass.on_progress([&](const pass_progress& p) { analysis.progress("clump", p); });
    pass.run_batches(columns, [&](std::span<const column_view<double>> batch) {
      tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t b) {
        const column_view<double>& c = batch[b];
        const std::size_t k = needed[c.position];
        std::uint64_t* planes = scratch.local().data();
        make_genotype_planes(c.codes, rows_, mask_, planes);
        for (std::size_t h = holders_start[k]; h < holders_start[k + 1]; ++h) {
          const std::size_t t = holders[h];
          values_[offset_[t] + (k - first_[t])] =
              detail::haplotype_r2(genotype_pair_counts(planes_of(t), planes, words_));
        }
      });
      return true;
    });
  }

  column_stream<double> stream(const store& s, const analysis_options& analysis) const {
    stream_options so = analysis.stream;
    so.values = decode_as::stored;
    so.decode_values = false;
    return column_stream<double>(s, so);
  }
  std::size_t window_size(std::size_t t) const { return offset_[t + 1] - offset_[t]; }
  std::uint64_t* planes_of(std::size_t t) { return group_planes_.data() + t * 3 * words_; }
  const std::uint64_t* planes_of(std::size_t t) const {
    return group_planes_.data() + t * 3 * words_;
  }

  std::size_t words_, rows_;
  std::vector<std::uint8_t> mask_;
  std::vector<top_variant> group_;
  std::vector<std::size_t> first_, offset_;  // per variant of the group: its window, its values
  std::vector<double> values_;
  std::vector<std::uint64_t> group_planes_;
};

// PLINK 1.9's P classes: NSIG, S05, S01, S001, S0001.
void count_p(double p, std::uint64_t counts[5]) {
  if (p < 0.001)
    ++counts[p < 0.0001 ? 4 : 3];
  else if (p < 0.01)
    ++counts[2];
  else if (p < 0.05)
    ++counts[1];
  else
    ++counts[0];
}

// The greedy pass: index variants in order, each taking its window's unclumped variants.
class clumper {
 public:
  clumper(const std::vector<variant_entries>& v, const clump_windows& w, const clump_options& o)
      : variants_(v), windows_(w), o_(o), clumped_(v.size(), 0) {}

  bool clumped(std::size_t column) const { return clumped_[column] != 0; }

  // `r2`: the index's r² with the columns of its window (window_r2::of).
  void visit(const top_variant& top, std::span<const double> r2, std::vector<clump_group>& out) {
    const std::size_t index = top.column;
    if (clumped_[index]) return;
    clump_group c;
    c.index = index;
    c.p = top.p;
    const auto [first, last] = windows_.window(index);
    for (std::size_t k = first; k < index; ++k) take(k, r2[k - first], c);
    take_own_entries(top, c);
    for (std::size_t k = index + 1; k < last; ++k) take(k, r2[k - first], c);
    out.push_back(std::move(c));
  }

 private:
  bool candidate(std::size_t k) const {
    return (o_.allow_overlap || !clumped_[k]) && variants_[k].in_table();
  }

  void take(std::size_t k, double r2, clump_group& c) {
    if (!candidate(k) || !(std::fabs(r2) > o_.r2)) return;
    for (const entry& e : variants_[k].entries) list(k, e, c);
    c.counts[0] += variants_[k].nsig;
    clumped_[k] = 1;
  }

  void list(std::size_t k, const entry& e, clump_group& c) const {
    count_p(e.p, c.counts);
    if (e.p < o_.p2) c.members.push_back({k, e.file});
  }

  // The index's entries: the first with its smallest P makes it the index; the others count
  // and are listed (P < p2) as the index itself, those before it first.
  void take_own_entries(const top_variant& top, clump_group& c) {
    const variant_entries& v = variants_[top.column];
    std::size_t own = 0;
    while (v.entries[own].p != top.p) ++own;
    c.file = v.entries[own].file;
    for (std::size_t k = 0; k < v.entries.size(); ++k)
      if (k != own) list(top.column, v.entries[k], c);
    const bool others = v.entries.size() > 1 || v.nsig > 0;
    if (others && (o_.allow_overlap || !clumped_[top.column])) {
      c.counts[0] += v.nsig;
      clumped_[top.column] = 1;
    }
  }

  const std::vector<variant_entries>& variants_;
  const clump_windows& windows_;
  const clump_options& o_;
  std::vector<std::uint8_t> clumped_;
};

// The next group of index variants from `begin`: those not clumped yet, while their windows
// hold at most `entries` columns in all (one at least).
std::vector<top_variant> next_group(const std::vector<top_variant>& top, std::size_t& begin,
                                    const clump_windows& w, const clumper& pass,
                                    std::size_t entries) {
  std::vector<top_variant> group;
  std::size_t held = 0;
  for (; begin < top.size(); ++begin) {
    if (pass.clumped(top[begin].column)) continue;
    const auto [first, last] = w.window(top[begin].column);
    if (!group.empty() && held + (last - first) > entries) break;
    held += last - first;
    group.push_back(top[begin]);
  }
  return group;
}

}  // namespace

void check_clump_options(const clump_options& o) {
  if (!(o.p1 > 0 && o.p1 <= 1))
    throw error(errc::invalid_argument,
                "--clump-p1: must be in (0, 1], not " + std::to_string(o.p1));
  if (!(o.p2 > 0 && o.p2 <= 1))
    throw error(errc::invalid_argument,
                "--clump-p2: must be in (0, 1], not " + std::to_string(o.p2));
  if (!(o.r2 >= 0 && o.r2 <= 1))
    throw error(errc::invalid_argument,
                "--clump-r2: must be in [0, 1], not " + std::to_string(o.r2));
  if (!(o.kb > 0) || !(o.kb * 1000 < 9.0e15))
    throw error(errc::invalid_argument,
                "--clump-kb: must be a positive distance in kb, not " + std::to_string(o.kb));
}

clump_result clump(const store& s, const selection& sel, const std::vector<p_value_table>& tables,
                   const clump_options& options, const analysis_options& analysis) {
  check_clump_options(options);
  if (s.type() != value_type::genotype)
    throw error(errc::invalid_argument,
                "clump: the store holds " + std::string(value_type_name(s.type())) +
                    " values; clumping needs a genotype store (hard calls)");
  if (tables.empty()) throw error(errc::invalid_argument, "clump: no table to clump (--clump)");
  clump_result result;
  result.options = options;
  result.tables = tables.size();
  matched_tables m = match_tables(s, sel, tables, options);
  result.absent = std::move(m.absent);
  const std::vector<top_variant> top = top_variants(m.variants, options.p1);
  result.top_variants = top.size();
  const std::vector<std::uint8_t> keep = founders_of(s, sel, result.founders);
  if (result.founders == 0)
    throw error(errc::invalid_argument,
                "clump: no founder among the selected samples (r² is estimated from founders, "
                "samples whose parents are both '0' in the .fam)");
  if (top.empty()) return result;
  const clump_windows windows(s, sel, options.kb);
  clumper pass(m.variants, windows, options);
  // Groups of index variants in the order they are visited, each one pass over its windows'
  // columns; a variant clumped by an earlier group is left out of the next.
  const std::size_t entries =
      options.group_entries != 0 ? options.group_entries : std::size_t{1} << 22;
  for (std::size_t begin = 0; begin < top.size();) {
    const std::vector<top_variant> group = next_group(top, begin, windows, pass, entries);
    if (group.empty()) break;
    const window_r2 r2(s, sel, m.variants, group, windows, keep, analysis);
    for (std::size_t t = 0; t < group.size(); ++t) pass.visit(group[t], r2.of(t), result.clumps);
  }
  return result;
}

}  // namespace colflow
