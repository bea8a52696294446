// colflow ld --indep-pairwise: plink2's LD pruning (analysis/ld_prune.hpp), from the exact pair
// sums of kernels/genotype_products_internal.hpp over each chromosome's columns in memory.
#include "colflow/analysis/ld_prune.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/products/ld_pair_bound_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "colflow/store/chromosome.hpp"
#include "kernels/genotype_products_internal.hpp"

namespace colflow {
namespace {

// plink2's kSmallEpsilon (2^-30): the slack of its threshold and of its frequency comparison.
constexpr double small_epsilon = 1.0 / 1073741824.0;

// The sample masks of the ploidy rules, over the store's rows: the selected founders
// (`diploid`), and among them the males and the others (X and Y).
struct prune_samples {
  std::vector<std::uint8_t> diploid, male, nonmale;  // make_sample_mask masks
};

prune_samples samples_of(const store& s, const selection& sel, std::span<const sample_sex> sexes) {
  const std::size_t rows = sel.row_kept.size();
  std::vector<std::uint8_t> founder(rows, 0), male(rows, 0), nonmale(rows, 0);
  std::size_t founders = 0;
  for (std::size_t i : sel.rows) {
    const sample_info& p = s.samples()[i];
    if (p.father != "0" || p.mother != "0") continue;  // plink2: any parent named, not a founder
    founder[i] = 1;
    ++founders;
    (sexes[i] == sample_sex::male ? male : nonmale)[i] = 1;
  }
  if (founders < 2)
    throw error(errc::invalid_argument,
                "--indep-pairwise: needs at least two selected founders (samples whose .fam "
                "names no father and no mother), " +
                    std::to_string(founders) + " selected");
  if (founders >= (std::size_t{1} << 30))
    throw error(errc::invalid_argument, "--indep-pairwise: 2^30 founders or more (as plink2)");
  return {make_sample_mask(founder), make_sample_mask(male), make_sample_mask(nonmale)};
}

// How a chromosome's calls count: one set of planes (diploid, or haploid with hets missing),
// or on X the males' (haploid) and the others' planes, the latter counting twice.
struct ploidy {
  const std::vector<std::uint8_t>* first = nullptr;
  bool first_haploid = false;
  const std::vector<std::uint8_t>* second = nullptr;  // X: the non-males, weight 2
};

ploidy ploidy_of(chromosome_kind kind, const prune_samples& p) {
  switch (kind) {
    case chromosome_kind::x:
      return {&p.male, true, &p.nonmale};
    case chromosome_kind::y:
      return {&p.male, true, nullptr};
    case chromosome_kind::mt:
      return {&p.diploid, true, nullptr};
    default:
      return {&p.diploid, false, nullptr};
  }
}

// Heterozygous calls of haploid samples are missing: drops them from the three planes.
void drop_hets(std::uint64_t* planes, std::size_t words) {
  std::uint64_t *called = planes, *one = planes + words, *two = planes + 2 * words;
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t het = one[w] & ~two[w];
    called[w] &= ~het;
    one[w] &= ~het;
  }
}

// Makes T the rarer homozygote of a column's planes, counting the other allele (x → 2 − x:
// O' = C ∧ ¬T, T' = C ∧ ¬O) when twos outnumber zeros; returns the planes' counts, given
// those before (`c`). The test
// of a pair is the same either way (cov changes sign, the variances do not, as exact
// integers), while detail::bound_ld, which ranges Σ[x = 2] from the calls x ≥ 1, is then
// told most pairs of common and near-fixed columns too.
detail::plane_totals count_minor_homozygote_as_two(std::uint64_t* planes, std::size_t words,
                                                   const std::array<std::int64_t, 3>& c) {
  const detail::plane_totals t{c[0], c[1], c[2]};
  if (t.two <= t.called - t.one) return t;
  std::uint64_t *called = planes, *one = planes + words, *two = planes + 2 * words;
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t o = one[w];
    one[w] = called[w] & ~two[w];
    two[w] = called[w] & ~o;
  }
  return {t.called, t.called - t.two, t.called - t.one};
}

// Weighted sums of one column, or of a pair, over its planes (X: males + 2 × others).
struct weighted_sums {
  std::int64_t n = 0, sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  void add(const genotype_pair_sums& s, std::int64_t w) {
    n += w * static_cast<std::int64_t>(s.n);
    sa += w * static_cast<std::int64_t>(s.sum_a);
    sb += w * static_cast<std::int64_t>(s.sum_b);
    saa += w * static_cast<std::int64_t>(s.sum_aa);
    sbb += w * static_cast<std::int64_t>(s.sum_bb);
    sab += w * static_cast<std::int64_t>(s.sum_ab);
  }
};

// plink2's test of a pair: cov² > threshold · var_a · var_b, in doubles from exact integers.
bool in_ld(const weighted_sums& s, double threshold) {
  const double cov = static_cast<double>(s.n * s.sab - s.sa * s.sb);
  const double va = static_cast<double>(s.n * s.saa - s.sa * s.sa);
  const double vb = static_cast<double>(s.n * s.sbb - s.sb * s.sb);
  return cov * cov > threshold * va * vb;
}

// One chromosome's columns in memory (planes per column and part) with each column's
// constancy and major allele frequency.
class chromosome_columns {
 public:
  // Pairs counted at a time: column a against up to this many.
  static constexpr std::size_t tile = 32;

  chromosome_columns(const store& s, std::span<const std::size_t> columns, const ploidy& pl,
                     const analysis_options& analysis)
      : rows_(s.num_rows()),
        words_(genotype_plane_words(rows_)),
        parts_(pl.second ? 2 : 1),
        count_(columns.size()),
        // Every word is written below: no zero fill first.
        planes_(std::make_unique_for_overwrite<std::uint64_t[]>(count_ * parts_ * 3 * words_)),
        constant_(count_),
        major_freq_(count_),
        totals_(parts_ == 1 ? count_ : 0),
        samples_(static_cast<std::int64_t>(mask_count(*pl.first))) {
    stream_options so = analysis.stream;
    so.values = decode_as::stored;
    so.decode_values = false;
    column_stream<double> stream(s, so);
    if (analysis.progress)
      stream.on_progress([&](const pass_progress& p) { analysis.progress("ld prune", p); });
    // A batch's columns are spread over the threads, each writing its own column's planes and
    // figures.
    stream.run_batches(columns, [&](std::span<const column_view<double>> batch) {
      tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t b) {
        const column_view<double>& v = batch[b];
        std::uint64_t* p = planes(v.position, 0);
        make_genotype_planes(v.codes, rows_, *pl.first, p);
        if (pl.second) make_genotype_planes(v.codes, rows_, *pl.second, planes(v.position, 1));
        const auto read = counts(v.position);
        major_freq_[v.position] = major_freq_of(read);
        if (pl.first_haploid) drop_hets(p, words_);
        const auto kept = pl.first_haploid ? counts(v.position) : read;
        constant_[v.position] = constant_of(kept) ? 1 : 0;
        if (parts_ == 1) totals_[v.position] = count_minor_homozygote_as_two(p, words_, kept);
      });
      return true;
    });
  }

  bool constant(std::size_t i) const { return constant_[i] != 0; }
  double major_freq(std::size_t i) const { return major_freq_[i]; }

  // plink2's test of column a with each of columns b[0..count), into in[0..count). With one
  // part, from Σxa·xb and the columns' counts where they tell it, then where they do not with
  // two more of the pair's sums (detail::bound_ld), and from the pair's exact sums for what is
  // left; with two (X), from the exact sums.
  void test(std::size_t a, const std::size_t* b, std::size_t count, double threshold,
            bool* in) const {
    for (std::size_t j0 = 0; j0 < count; j0 += tile) {
      const std::size_t m = std::min(tile, count - j0);
      std::size_t left[tile];  // positions in b still to be told
      for (std::size_t j = 0; j < m; ++j) left[j] = j0 + j;
      std::size_t u = m;
      if (parts_ == 1) {
        u = tell(a, b, left, u, threshold, in, false);  // from Σxa·xb alone
        u = tell(a, b, left, u, threshold, in, true);   // with the calls x ≥ 1 of each side
      }
      std::size_t seconds[tile];
      weighted_sums sums[tile];
      for (std::size_t k = 0; k < u; ++k) seconds[k] = b[left[k]];
      pairs(a, seconds, u, sums);
      for (std::size_t k = 0; k < u; ++k) in[left[k]] = in_ld(sums[k], threshold);
    }
  }

 private:
  // Tells the pairs of a with b[left[0..count)] (at most a tile) that detail::bound_ld can, from
  // Σxa·xb alone or with the calls x ≥ 1 of each side (`ones`); the others are moved to the
  // front of `left`, and their number returned.
  std::size_t tell(std::size_t a, const std::size_t* b, std::size_t* left, std::size_t count,
                   double threshold, bool* in, bool ones) const {
    const std::uint64_t* pb[tile];
    genotype_pair_partials partials[tile];
    for (std::size_t k = 0; k < count; ++k) pb[k] = planes(b[left[k]], 0);
    if (ones)
      genotype_pair_partial_sums(planes(a, 0), pb, count, words_, partials);
    else
      genotype_pair_dots(planes(a, 0), pb, count, words_, partials);
    std::size_t unsure = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const genotype_pair_partials& p = partials[k];
      const detail::plane_totals& second = totals_[b[left[k]]];
      const auto sum_ab = static_cast<std::int64_t>(p.sum_ab);
      const auto v =
          ones ? detail::bound_ld(totals_[a], second, samples_,
                                  {sum_ab, static_cast<std::int64_t>(p.one_a),
                                   static_cast<std::int64_t>(p.one_b)},
                                  threshold)
               : detail::bound_ld_from_product(totals_[a], second, samples_, sum_ab, threshold);
      if (v == detail::ld_verdict::unsure)
        left[unsure++] = left[k];
      else
        in[left[k]] = v == detail::ld_verdict::in_ld;
    }
    return unsure;
  }

  // The weighted sums of column a with each of columns b[0..count), into out.
  void pairs(std::size_t a, const std::size_t* b, std::size_t count, weighted_sums* out) const {
    genotype_pair_sums sums[tile];
    const std::uint64_t* pb[tile];
    for (std::size_t j = 0; j < count; ++j) out[j] = {};
    for (std::size_t part = 0; part < parts_; ++part) {
      const std::uint64_t* pa = planes(a, part);
      for (std::size_t j0 = 0; j0 < count; j0 += tile) {
        const std::size_t m = std::min(tile, count - j0);
        for (std::size_t j = 0; j < m; ++j) pb[j] = planes(b[j0 + j], part);
        genotype_pair_products(&pa, 1, pb, m, words_, sums);
        for (std::size_t j = 0; j < m; ++j) out[j0 + j].add(sums[j], part == 0 ? 1 : 2);
      }
    }
  }

  std::uint64_t* planes(std::size_t i, std::size_t part) {
    return planes_.get() + (i * parts_ + part) * 3 * words_;
  }
  const std::uint64_t* planes(std::size_t i, std::size_t part) const {
    return planes_.get() + (i * parts_ + part) * 3 * words_;
  }

  // The calls' counts over the parts: {called, Σ[x ≥ 1], Σ[x = 2]}, the second part twice.
  std::array<std::int64_t, 3> counts(std::size_t i) const {
    std::array<std::int64_t, 3> c{};
    for (std::size_t part = 0; part < parts_; ++part) {
      const auto part_counts = genotype_plane_counts(planes(i, part), words_);
      for (std::size_t plane = 0; plane < 3; ++plane)
        c[plane] += (part == 0 ? 1 : 2) * static_cast<std::int64_t>(part_counts[plane]);
    }
    return c;
  }

  // The major allele's frequency as plink2 counts alleles (its --freq): a diploid call is two
  // alleles, a haploid one (X in males, Y, MT) one, a haploid heterozygous call half of each.
  // So the haploid part is read before its hets are dropped: with weights 1 (haploid) and 2,
  // A1 alleles over observed alleles is Σ w·x / (2 Σ w) for dosages x.
  static double major_freq_of(const std::array<std::int64_t, 3>& c) {
    const std::int64_t a1 = c[1] + c[2], alleles = 2 * c[0];
    if (alleles == 0) return 0.5;
    return static_cast<double>(std::max(a1, alleles - a1)) / static_cast<double>(alleles);
  }

  // Constant, as plink2 prunes on reading: every counted call the same genotype (or none),
  // the haploid hets dropped.
  static bool constant_of(const std::array<std::int64_t, 3>& c) {
    const std::int64_t hom_a2 = c[0] - c[1], het = c[1] - c[2], hom_a1 = c[2];
    return hom_a2 == c[0] || het == c[0] || hom_a1 == c[0];
  }

  std::size_t rows_, words_, parts_, count_;
  std::unique_ptr<std::uint64_t[]> planes_;
  std::vector<std::uint8_t> constant_;
  std::vector<double> major_freq_;
  std::vector<detail::plane_totals> totals_;  // with one part: each column's planes counted
  std::int64_t samples_;                      // the samples of the first part's mask
};

// The pruning of one piece of a chromosome, columns [first, first + len) of `cols` (a whole
// chromosome, or in kb a stretch without a gap wider than the window), as plink2's
// IndepPairwiseThread walks it. Indices below are relative to `first`.
class piece_pruner {
 public:
  piece_pruner(const chromosome_columns& cols, const ld_prune_options& o,
               std::span<const std::int64_t> pos, std::size_t first, std::size_t len,
               std::vector<std::uint8_t>& removed)
      : cols_(cols),
        o_(o),
        pos_(pos.empty() ? pos : pos.subspan(first, len)),
        first_(first),
        len_(len),
        removed_(removed),
        threshold_(o.r2 * (1 + small_epsilon)) {}

  void run() {
    std::size_t start = 0, end = first_end(), loaded = 0;
    known_.resize(len_);
    for (;;) {
      for (; loaded < end; ++loaded) {
        window_.push_back(loaded);
        unchecked_.push_back(loaded + 1);
        if (cols_.constant(first_ + loaded)) removed(loaded) = 1;
      }
      test_ahead(end, loaded);
      prune_window(end);
      if (end == len_) return;
      const std::size_t old_start = start;
      next_window(start, end);
      for (std::size_t i = old_start; i < start; ++i) std::vector<std::uint8_t>().swap(known_[i]);
      // The window keeps the variants it still covers that are not pruned.
      std::erase_if(window_, [&](std::size_t i) { return removed(i) != 0 || i < start; });
    }
  }

 private:
  std::uint8_t& removed(std::size_t i) { return removed_[first_ + i]; }
  bool in_kb() const { return !pos_.empty(); }

  // One past the first window's last variant: `window` variants, or in kb those within
  // window_bp of the first.
  std::size_t first_end() const {
    if (!in_kb()) return std::min(len_, static_cast<std::size_t>(o_.window));
    std::size_t e = 1;
    while (e < len_ && pos_[e] <= pos_[0] + o_.window_bp) ++e;
    return e;
  }

  // Moves [start, end) on: by `step` variants; or in kb, the start to the first variant
  // within window_bp of the variant at `end` (by one at least), the end past every variant
  // within window_bp of the new start.
  void next_window(std::size_t& start, std::size_t& end) const {
    if (!in_kb()) {
      start += static_cast<std::size_t>(o_.step);
      end = std::min(len_, start + static_cast<std::size_t>(o_.window));
      return;
    }
    const std::int64_t lowest = pos_[end] - o_.window_bp;
    do ++start;
    while (pos_[start] < lowest);
    const std::int64_t highest = pos_[start] + o_.window_bp;
    do ++end;
    while (end < len_ && pos_[end] <= highest);
  }

  // plink2 2.00a3.5's pass over a window (PLINK 1.x's order): each kept variant, first to
  // last, is paired with the kept variants after it that it has not met yet, nearest first,
  // until a pair is in LD; then the variant of lower minor allele frequency goes (the later
  // one on a tie) and the next variant takes its turn. Rounds repeat while one prunes.
  void prune_window(std::size_t end) {
    for (bool pruned = true; pruned;) {
      pruned = false;
      for (std::size_t k = 0; k < window_.size(); ++k)
        if (removed(window_[k]) == 0) pruned = prune_after(k, end) || pruned;
    }
  }

  // What test_ahead and prune_after know of the pair (a, b), a < b: at known_[a][b - a - 1].
  enum pair_state : std::uint8_t { untested = 0, not_in_ld = 1, in_ld_pair = 2 };
  std::uint8_t& state(std::size_t a, std::size_t b) {
    std::vector<std::uint8_t>& s = known_[a];
    if (s.size() < b - a) s.resize(b - a, untested);
    return s[b - a - 1];
  }

  // Tests the pairs of `a` with the kept `b` in `bs[0..m)` and records each.
  void test_pairs(std::size_t a, const std::size_t* bs, std::size_t m) {
    std::size_t seconds[tile];
    bool in[tile];
    for (std::size_t j = 0; j < m; ++j) seconds[j] = first_ + bs[j];
    cols_.test(first_ + a, seconds, m, threshold_, in);
    for (std::size_t j = 0; j < m; ++j) state(a, bs[j]) = in[j] ? in_ld_pair : not_in_ld;
  }

  // Every pair the window's pass may ask for, tested beforehand across the threads: each kept
  // variant with the kept ones after it from its first unchecked on, up to `end`; with a
  // window in variants, those of the next `windows_ahead` steps too (the pairs of two variants
  // some window holds), so that a parallel loop has enough pairs to share. The pass then reads
  // the answers in its own order, so what it prunes is what it prunes testing each pair as it
  // comes; a pair it never reaches (a variant pruned before) cost a test for nothing.
  void test_ahead(std::size_t end, std::size_t loaded) {
    if (end <= tested_to_) return;
    constexpr std::size_t windows_ahead = 8;
    const std::size_t to =
        in_kb() ? end : std::min(len_, end + windows_ahead * static_cast<std::size_t>(o_.step));
    std::vector<std::size_t> firsts;
    for (const std::size_t a : window_)
      if (removed(a) == 0) firsts.push_back(a);
    for (std::size_t a = loaded; a < to; ++a)
      if (!cols_.constant(first_ + a)) firsts.push_back(a);
    tbb::parallel_for(std::size_t{0}, firsts.size(), [&](std::size_t k) {
      const std::size_t a = firsts[k];
      std::size_t bs[tile], m = 0;
      for (std::size_t b = a < loaded ? std::max(a + 1, unchecked_[a]) : a + 1; b < reach(a, to);
           ++b) {
        if ((b < loaded ? removed(b) != 0 : cols_.constant(first_ + b)) || state(a, b) != untested)
          continue;
        bs[m++] = b;
        if (m == tile) test_pairs(a, bs, std::exchange(m, 0));
      }
      if (m > 0) test_pairs(a, bs, m);
    });
    tested_to_ = to;
  }

  // One past the last variant that a window holding `a` holds, or `to` if sooner: windows in
  // variants start at multiples of the step.
  std::size_t reach(std::size_t a, std::size_t to) const {
    if (in_kb()) return to;
    const auto step = static_cast<std::size_t>(o_.step);
    return std::min(to, a - a % step + static_cast<std::size_t>(o_.window));
  }

  // Pairs the variant at window position k with the kept ones after it from its first
  // unchecked on, nearest first, until one pair is in LD (returns true); pairs test_ahead
  // did not test are tested here, a tile at a time. `end`: one past the window's last
  // variant, where its next check starts.
  bool prune_after(std::size_t k, std::size_t end) {
    const std::size_t a = window_[k];
    std::size_t at[tile], bs[tile], untested_bs[tile];
    std::size_t next = k + 1;  // window positions from `next` on are still to be paired
    while (next < window_.size()) {
      std::size_t m = 0, u = 0;
      for (; next < window_.size() && m < tile; ++next) {
        const std::size_t b = window_[next];
        if (removed(b) == 0 && b >= unchecked_[a]) {
          at[m] = next;
          bs[m++] = b;
          if (state(a, b) == untested) untested_bs[u++] = b;
        }
      }
      if (u > 0) test_pairs(a, untested_bs, u);
      for (std::size_t j = 0; j < m; ++j) {
        if (state(a, bs[j]) != in_ld_pair) continue;
        if (cols_.major_freq(first_ + a) > cols_.major_freq(first_ + bs[j]) * (1 + small_epsilon)) {
          removed(a) = 1;
        } else {
          removed(bs[j]) = 1;
          unchecked_[a] = next_kept(at[j] + 1, end);
        }
        return true;
      }
    }
    unchecked_[a] = end;
    return false;
  }

  // The first kept variant from window position k on, or `end`.
  std::size_t next_kept(std::size_t k, std::size_t end) {
    for (; k < window_.size(); ++k)
      if (removed(window_[k]) == 0) return window_[k];
    return end;
  }

  const chromosome_columns& cols_;
  const ld_prune_options& o_;
  std::span<const std::int64_t> pos_;
  std::size_t first_, len_;
  std::vector<std::uint8_t>& removed_;  // per column of the chromosome
  double threshold_;
  std::vector<std::size_t> window_;               // the window's variants, in order
  std::vector<std::size_t> unchecked_;            // per variant: the first later one it has not met
  std::vector<std::vector<std::uint8_t>> known_;  // per variant in the window: pair_state
  std::size_t tested_to_ = 0;  // test_ahead has tested the pairs of the variants before this
  static constexpr std::size_t tile = chromosome_columns::tile;
};

// A run of selected columns on one chromosome: positions [first, end) in selection::columns.
struct selection_run {
  chromosome_kind kind = chromosome_kind::autosome;
  std::size_t first = 0, end = 0;
};

// The runs of the selection, chromosome 0 left out (plink2 ignores its variants).
std::vector<selection_run> runs_of(const store& s, const selection& sel) {
  std::vector<selection_run> runs;
  const auto& info = s.columns();
  for (std::size_t k = 0; k < sel.columns.size(); ++k) {
    const std::string& chrom = info[sel.columns[k]].chrom;
    if (chrom == "0") continue;
    if (runs.empty() || runs.back().end != k || info[sel.columns[k - 1]].chrom != chrom)
      runs.push_back({kind_of_chromosome(chrom), k, k});
    runs.back().end = k + 1;
  }
  return runs;
}

// The lists name variants by ID: plink2 refuses duplicates among the pruned columns.
void check_unique_ids(const store& s, const selection& sel,
                      const std::vector<selection_run>& runs) {
  std::unordered_set<std::string_view> seen;
  for (const selection_run& r : runs)
    for (std::size_t k = r.first; k < r.end; ++k) {
      const std::string& id = s.columns()[sel.columns[k]].id;
      if (!seen.insert(id).second)
        throw error(errc::invalid_argument,
                    "--indep-pairwise: variant ID '" + id +
                        "' is duplicated; the .prune.in/.prune.out lists need unique IDs "
                        "(exclude or rename the duplicates)");
    }
}

// Base-pair positions of a run's columns, non-decreasing (a kb window needs them sorted).
std::vector<std::int64_t> positions_of(const store& s, const selection& sel,
                                       const selection_run& r) {
  std::vector<std::int64_t> pos;
  for (std::size_t k = r.first; k < r.end; ++k) {
    const column_info& c = s.columns()[sel.columns[k]];
    std::int64_t p = 0;
    const auto [end, ec] = std::from_chars(c.pos.data(), c.pos.data() + c.pos.size(), p);
    if (ec != std::errc{} || end != c.pos.data() + c.pos.size() || p < 0)
      throw error(errc::invalid_argument,
                  "--indep-pairwise: a window in kb needs base-pair "
                  "positions; variant " +
                      c.id + " has '" + c.pos + "'");
    if (!pos.empty() && p < pos.back())
      throw error(errc::invalid_argument,
                  "--indep-pairwise: a window in kb needs positions sorted along each "
                  "chromosome; variant " +
                      c.id + " at " + c.pos + " comes after position " +
                      std::to_string(pos.back()) + " on chromosome " + c.chrom);
    pos.push_back(p);
  }
  return pos;
}

// Prunes one run into `removed` (per selected column).
void prune_run(const store& s, const selection& sel, const selection_run& r,
               const prune_samples& samples, const ld_prune_options& o,
               const analysis_options& analysis, std::vector<std::uint8_t>& removed) {
  const std::size_t len = r.end - r.first;
  if (len < 2) return;  // plink2 keeps a chromosome's only variant untested
  const std::vector<std::int64_t> pos =
      o.window_bp > 0 ? positions_of(s, sel, r) : std::vector<std::int64_t>{};
  const std::span<const std::size_t> columns(sel.columns.data() + r.first, len);
  const chromosome_columns cols(s, columns, ploidy_of(r.kind, samples), analysis);
  std::vector<std::uint8_t> run_removed(len, 0);
  // In kb, pieces end at gaps wider than the window; a piece of one variant is kept untested.
  std::size_t first = 0;
  for (std::size_t k = 1; k <= len; ++k) {
    if (k < len && (pos.empty() || pos[k] - pos[k - 1] <= o.window_bp)) continue;
    if (k - first >= 2) piece_pruner(cols, o, pos, first, k - first, run_removed).run();
    first = k;
  }
  std::copy(run_removed.begin(), run_removed.end(),
            removed.begin() + static_cast<std::ptrdiff_t>(r.first));
}

}  // namespace

void check_ld_prune_options(const ld_prune_options& o) {
  const std::string flag = "--indep-pairwise: ";
  if (o.window_bp > 0) {
    if (o.window_bp < 2)
      throw error(errc::invalid_argument,
                  flag + "the window must be at least 2 bp, not " + std::to_string(o.window_bp));
    if (o.step != 1)
      throw error(errc::invalid_argument,
                  flag + "the step must be 1 with a window in kb, not " + std::to_string(o.step));
  } else {
    if (o.window < 1)
      throw error(errc::invalid_argument,
                  flag + "the window must be at least 1 variant, not " + std::to_string(o.window));
    if (o.step < 1 || o.step > o.window)
      throw error(errc::invalid_argument, flag + "the step must be within 1.." +
                                              std::to_string(o.window) + " (the window), not " +
                                              std::to_string(o.step));
  }
  if (o.window_bp < 0)
    throw error(errc::invalid_argument, flag + "negative window " + std::to_string(o.window_bp));
  if (!(o.r2 >= 0 && o.r2 < 1))
    throw error(errc::invalid_argument,
                flag + "the r^2 threshold must be in [0, 1), not " + std::to_string(o.r2));
}

ld_prune_result ld_prune(const store& s, const selection& sel, const ld_prune_options& options,
                         const analysis_options& analysis) {
  const std::vector<sample_sex> sexes = sexes_of(s.samples());
  return ld_prune(s, sel, sexes, options, analysis);
}

ld_prune_result ld_prune(const store& s, const selection& sel, std::span<const sample_sex> sexes,
                         const ld_prune_options& options, const analysis_options& analysis) {
  check_ld_prune_options(options);
  if (s.type() != value_type::genotype)
    throw error(errc::invalid_argument,
                "--indep-pairwise: " + s.path().string() + " holds " +
                    std::string(value_type_name(s.type())) +
                    " values; pruning needs a genotype store (plink2 prunes hard calls: "
                    "preprocess the .bed, or the hard calls, of these variants)");
  if (sexes.size() != s.num_rows())
    throw error(errc::invalid_argument, "ld_prune: " + std::to_string(sexes.size()) +
                                            " sexes for " + std::to_string(s.num_rows()) +
                                            " samples");
  const prune_samples samples = samples_of(s, sel, sexes);
  const std::vector<selection_run> runs = runs_of(s, sel);
  check_unique_ids(s, sel, runs);
  std::vector<std::uint8_t> removed(sel.columns.size(), 0);
  for (const selection_run& r : runs) prune_run(s, sel, r, samples, options, analysis, removed);
  ld_prune_result result;
  for (const selection_run& r : runs)
    for (std::size_t k = r.first; k < r.end; ++k)
      (removed[k] ? result.removed : result.kept).push_back(k);
  return result;
}

}  // namespace colflow
