// PLINK 2's quality-control filters: --mind, then --geno, --hwe and the allele-frequency
// filters, narrowing a selection.
#include "colflow/analysis/qc_filters.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "analysis/shared/hard_calls_internal.hpp"
#include "colflow/analysis/hardy_weinberg.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"
#include "kernels/missing_tally_internal.hpp"

namespace colflow {
namespace {

// plink2's kSmallEpsilon: thresholds are widened by it, so that a fraction or frequency equal
// to its limit up to rounding is kept.
constexpr double small_epsilon = 0x1p-44;

// The samples' groups whose calls a column's filters count: by sex, and founder or not.
enum group_founder : std::size_t { founder = 0, nonfounder = 1 };
constexpr std::size_t group_count = 6;
constexpr std::size_t group_of(sample_sex sex, group_founder f) {
  return 2 * static_cast<std::size_t>(sex) + f;
}

bool is_founder(const sample_info& s) { return s.father == "0" && s.mother == "0"; }

// A column's calls in each group of the selected samples.
using group_calls = std::array<genotype_counts, group_count>;

// Sample masks of the groups, made once for the selected samples.
class sample_groups {
 public:
  sample_groups(const store& s, const selection& sel, std::span<const sample_sex> sexes)
      : rows_(s.num_rows()) {
    std::array<std::vector<std::uint8_t>, group_count> members;
    for (auto& m : members) m.assign(rows_, 0);
    for (std::size_t i : sel.rows) {
      const std::size_t g = group_of(sexes[i], is_founder(s.samples()[i]) ? founder : nonfounder);
      members[g][i] = 1;
      ++sizes_[g];
    }
    for (std::size_t g = 0; g < group_count; ++g)
      if (sizes_[g]) masks_[g] = make_sample_mask(members[g]);
  }

  group_calls count(std::span<const std::uint8_t> codes) const noexcept {
    group_calls c{};
    for (std::size_t g = 0; g < group_count; ++g)
      if (sizes_[g]) c[g] = count_genotypes(codes, rows_, masks_[g], sizes_[g]);
    return c;
  }
  std::size_t size(std::size_t group) const noexcept { return sizes_[group]; }

 private:
  std::size_t rows_;
  std::array<std::size_t, group_count> sizes_{};
  std::array<std::vector<std::uint8_t>, group_count> masks_;
};

bool in_range(const std::optional<double>& v, double lo, double hi) {
  return !v || (*v >= lo && *v <= hi);  // false for NaN
}

// A threshold as the user wrote it, near enough: %g.
std::string shown(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void require(bool ok, const std::string& option, const std::string& rule,
             const std::optional<double>& v) {
  if (!ok) throw error(errc::invalid_argument, option + " " + (v ? shown(*v) : "") + ": " + rule);
}

void check_store(const store& s) {
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument,
                "quality-control filters: " + s.path().string() + " holds " +
                    std::string(value_type_name(s.type())) +
                    " values, not genotype calls; --mind, --geno, --hwe, --maf and --mac need a "
                    "genotype or dosage store");
}

stream_options call_stream(const store& s, const analysis_options& analysis) {
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = s.type() != value_type::genotype;
  return so;
}

// Calls `add(position, codes)` for each column of `columns` on the stream's threads, with the
// column's hard calls: a batch's columns are spread over the threads, one each.
template <typename Add>
void for_each_column_calls(const store& s, std::span<const std::size_t> columns,
                           double hard_call_threshold, const analysis_options& analysis,
                           const char* label, Add&& add) {
  const std::size_t rows = s.num_rows();
  const bool genotype = s.type() == value_type::genotype;
  column_stream<double> stream(s, call_stream(s, analysis));
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& p) { analysis.progress(label, p); });
  tbb::enumerable_thread_specific<std::vector<std::uint8_t>> buffers;
  stream.run_batches(columns, [&](std::span<const column_view<double>> batch) {
    tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t b) {
      const column_view<double>& v = batch[b];
      add(v.position,
          detail::hard_call_codes(v, rows, genotype, hard_call_threshold, buffers.local()));
    });
    return true;
  });
}

// --mind: each selected sample's missing calls over the selected columns (on Y, males only),
// counted column by column on any thread; then the samples with more than the fraction of
// their columns missing are dropped.
class mind_filter {
 public:
  mind_filter(const store& s, const selection& sel, std::span<const sample_sex> sexes)
      : rows_(s.num_rows()), males_(rows_, 0), on_y_(sel.columns.size()) {
    for (std::size_t i : sel.rows) males_[i] = sexes[i] == sample_sex::male;
    all_mask_ = make_sample_mask(sel.row_kept);
    male_mask_ = make_sample_mask(males_);
    for (std::size_t k = 0; k < sel.columns.size(); ++k) {
      on_y_[k] = kind_of_chromosome(s.columns()[sel.columns[k]].chrom) == chromosome_kind::y;
      y_columns_ += on_y_[k];
    }
  }

  // Each thread counts into its own per-sample tally; whole numbers, so their sum does not
  // depend on which thread counted what.
  void add(std::size_t position, std::span<const std::uint8_t> codes) {
    tallies_.local().add(codes, on_y_[position] ? male_mask_ : all_mask_);
  }

  // Drops the samples over the limit from `sel`; how many were dropped.
  std::size_t apply(const store& s, selection& sel, double fraction) {
    std::vector<std::uint32_t> missing(rows_, 0);
    for (missing_call_tally& t : tallies_) t.move_into(missing);
    // plink2 truncates the product to a whole count, after widening the fraction.
    const double widened = fraction * (1 + small_epsilon);
    const auto largest = [&](std::size_t columns) {
      return static_cast<std::uint64_t>(static_cast<double>(columns) * widened);
    };
    const std::uint64_t max_male = largest(sel.columns.size()),
                        max_other = largest(sel.columns.size() - y_columns_);
    std::size_t removed = 0;
    std::vector<std::size_t> kept;
    for (std::size_t i : sel.rows) {
      if (missing[i] > (males_[i] ? max_male : max_other)) {
        sel.row_kept[i] = 0;
        ++removed;
      } else {
        kept.push_back(i);
      }
    }
    sel.rows = std::move(kept);
    if (sel.rows.empty())
      throw error(errc::invalid_argument,
                  s.path().string() + ": no sample is left after --mind " + shown(fraction));
    return removed;
  }

 private:
  std::size_t rows_;
  std::vector<std::uint8_t> males_, all_mask_, male_mask_, on_y_;
  std::size_t y_columns_ = 0;
  tbb::enumerable_thread_specific<missing_call_tally> tallies_{
      [this] { return missing_call_tally(rows_); }};
};

// What the column filters need of one column's calls.
struct column_figures {
  std::uint64_t missing = 0, counted = 0;   // --geno: missing calls among the counted samples
  bool tested = false;                      // --hwe: a test was made
  hwe_p_values test;                        // ... and its P
  double female_p = 1, female_midp = 0.5;   // X: the females' own diploid test (keep-fewhet)
  diploid_counts hwe_genotypes;             // the test's diploid genotypes (X: the females')
  double a1_halves = 0, allele_halves = 0;  // the counted alleles, in halves
};

class column_filter {
 public:
  column_filter(const store& s, const selection& sel, std::span<const sample_sex> sexes,
                const qc_filter_options& options)
      : groups_(s, sel, sexes), options_(options) {
    for (std::size_t g = 0; g < group_count; ++g) {
      const bool male = g / 2 == static_cast<std::size_t>(sample_sex::male);
      const bool counted = options.nonfounders || g % 2 == founder;
      if (!counted || !groups_.size(g)) continue;
      any_counted_male_ = any_counted_male_ || male;
      any_counted_known_ = any_counted_known_ || g / 2 != 0;
    }
  }

  column_figures figures(std::span<const std::uint8_t> codes, chromosome_kind kind) const {
    const group_calls c = groups_.count(codes);
    column_figures f;
    diploid_counts females;
    haploid_counts males;
    for (std::size_t g = 0; g < group_count; ++g) {
      const bool male = g / 2 == static_cast<std::size_t>(sample_sex::male);
      const bool unknown = g / 2 == static_cast<std::size_t>(sample_sex::unknown);
      if (kind != chromosome_kind::y || male) {
        f.missing += c[g].missing;
        f.counted += groups_.size(g);
      }
      if (!(options_.nonfounders || g % 2 == founder)) continue;
      add_alleles(c[g], kind, male, f);
      const diploid_counts d{c[g].hom_a1, c[g].het, c[g].hom_a2};
      if (kind != chromosome_kind::x) {
        add(f.hwe_genotypes, d);
      } else if (male) {
        males.a1 += c[g].hom_a1;  // a heterozygous haploid call is missing
        males.a2 += c[g].hom_a2;
      } else if (!unknown || !any_counted_male_) {
        add(females, d);
      }
    }
    test(kind, females, males, f);
    return f;
  }

 private:
  static void add(diploid_counts& to, const diploid_counts& d) {
    to.hom_a1 += d.hom_a1;
    to.het += d.het;
    to.hom_a2 += d.hom_a2;
  }

  // PLINK 2's ploidy: haploid males on X and Y, only males on Y, everyone haploid on MT.
  static void add_alleles(const genotype_counts& c, chromosome_kind kind, bool male,
                          column_figures& f) {
    if (kind == chromosome_kind::y && !male) return;
    const bool haploid = kind == chromosome_kind::mt ||
                         (male && (kind == chromosome_kind::x || kind == chromosome_kind::y));
    const double called = static_cast<double>(c.hom_a1 + c.het + c.hom_a2);
    const double a1 = static_cast<double>(2 * c.hom_a1 + c.het);  // alleles of a diploid call
    f.a1_halves += haploid ? a1 : 2 * a1;
    f.allele_halves += haploid ? 2 * called : 4 * called;
  }

  void test(chromosome_kind kind, diploid_counts& females, const haploid_counts& males,
            column_figures& f) const {
    if (!options_.hwe || kind == chromosome_kind::y || kind == chromosome_kind::mt) return;
    if (kind == chromosome_kind::x) {
      if (!any_counted_known_) return;
      f.tested = true;
      f.test = hardy_weinberg_exact_x(females, males);
      f.hwe_genotypes = females;
      if (options_.hwe->keep_fewhet) {
        const hwe_p_values own = hardy_weinberg_exact(females);
        f.female_p = own.p;
        f.female_midp = own.midp;
      }
      return;
    }
    const diploid_counts& g = f.hwe_genotypes;
    if (g.hom_a1 + g.het + g.hom_a2 == 0) return;
    // A column whose P is surely above the threshold passes untested, as one without a test:
    // most columns, told by a short walk rather than the whole test.
    if (hardy_weinberg_surely_above(g, options_.hwe->threshold)) return;
    f.tested = true;
    f.test = hardy_weinberg_exact(g);
  }

  sample_groups groups_;
  const qc_filter_options& options_;
  bool any_counted_male_ = false, any_counted_known_ = false;
};

bool fails_geno(const column_figures& f, double fraction) {
  const auto largest =
      static_cast<std::uint64_t>(static_cast<double>(f.counted) * fraction * (1 + small_epsilon));
  return f.missing > largest;
}

// het² against 4·hom_a1·hom_a2, in doubles: exact below 2^26 heterozygotes, and far beyond
// that the comparison is not near a tie.
double het_excess(const diploid_counts& g) {
  const double het = static_cast<double>(g.het);
  return het * het - 4 * static_cast<double>(g.hom_a1) * static_cast<double>(g.hom_a2);
}

bool fails_hwe(const column_figures& f, chromosome_kind kind, const hwe_filter& h) {
  if (!f.tested) return false;
  const double threshold = h.threshold * (1 - small_epsilon);
  const double p = h.midp ? f.test.midp : f.test.p;
  if (kind != chromosome_kind::x) {
    if (h.keep_fewhet && het_excess(f.hwe_genotypes) <= 0) return false;
    return p < threshold;
  }
  if (!(p < threshold)) return false;
  if (!h.keep_fewhet || het_excess(f.hwe_genotypes) >= 0) return true;
  // Few female heterozygotes: kept when the females' own test accounts for the failure, that
  // is when their P is below the joint P over the threshold (plink2's rule on X).
  const double own = h.midp ? f.female_midp : f.female_p;
  return !(own < p / h.threshold);
}

bool fails_allele_filters(const column_figures& f, const qc_filter_options& o) {
  const double freq = f.allele_halves > 0 ? f.a1_halves / f.allele_halves : 0.5;
  const double minor_freq = std::min(freq, 1 - freq);
  const double minor_count = std::min(f.a1_halves, f.allele_halves - f.a1_halves) / 2;
  if (o.min_maf && minor_freq < *o.min_maf * (1 - small_epsilon)) return true;
  if (o.max_maf && minor_freq > *o.max_maf * (1 + small_epsilon)) return true;
  if (o.min_mac && minor_count < *o.min_mac) return true;
  if (o.max_mac && minor_count > *o.max_mac) return true;
  return false;
}

// The chromosome of each selected column.
std::vector<chromosome_kind> column_kinds(const store& s, const selection& sel) {
  std::vector<chromosome_kind> kinds(sel.columns.size());
  for (std::size_t k = 0; k < kinds.size(); ++k)
    kinds[k] = kind_of_chromosome(s.columns()[sel.columns[k]].chrom);
  return kinds;
}

// --geno, --hwe and the allele filters, in that order, on each selected column's figures.
void drop_failing_columns(const store& s, selection& sel, std::span<const column_figures> figures,
                          std::span<const chromosome_kind> kinds, const qc_filter_options& options,
                          qc_filter_counts& removed) {
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < sel.columns.size(); ++k) {
    const column_figures& f = figures[k];
    if (options.geno && fails_geno(f, *options.geno)) {
      ++removed.geno;
    } else if (options.hwe && fails_hwe(f, kinds[k], *options.hwe)) {
      ++removed.hwe;
    } else if (options.any_allele_filter() && fails_allele_filters(f, options)) {
      ++removed.allele_frequency;
    } else {
      kept.push_back(sel.columns[k]);
    }
  }
  sel.columns = std::move(kept);
  if (sel.columns.empty())
    throw error(errc::invalid_argument,
                s.path().string() + ": no column is left after --geno/--hwe/--maf/--mac");
}

bool any_column_filter(const qc_filter_options& o) {
  return o.geno || o.hwe || o.any_allele_filter();
}

// The filters in plink2's order: --mind over the selected samples, then the column filters
// over the samples it kept. One pass does both when --mind keeps every sample (the usual
// case): the columns' figures over the samples before --mind are then those after it. When it
// drops samples, a second pass counts the columns again.
void filter(const store& s, selection& sel, std::span<const sample_sex> sexes,
            const qc_filter_options& options, const analysis_options& analysis,
            qc_filter_counts& removed) {
  const std::vector<chromosome_kind> kinds = column_kinds(s, sel);
  const double threshold = options.hard_call_threshold;
  std::vector<column_figures> figures(any_column_filter(options) ? sel.columns.size() : 0);
  if (options.mind) {
    mind_filter mind(s, sel, sexes);
    std::optional<column_filter> early;
    if (!figures.empty()) early.emplace(s, sel, sexes, options);
    for_each_column_calls(s, sel.columns, threshold, analysis, "mind",
                          [&](std::size_t k, std::span<const std::uint8_t> codes) {
                            mind.add(k, codes);
                            if (early) figures[k] = early->figures(codes, kinds[k]);
                          });
    removed.mind = mind.apply(s, sel, *options.mind);
    if (figures.empty()) return;
    if (removed.mind == 0) {
      drop_failing_columns(s, sel, figures, kinds, options, removed);
      return;
    }
  }
  if (figures.empty()) return;
  const column_filter columns(s, sel, sexes, options);
  for_each_column_calls(s, sel.columns, threshold, analysis, "qc",
                        [&](std::size_t k, std::span<const std::uint8_t> codes) {
                          figures[k] = columns.figures(codes, kinds[k]);
                        });
  drop_failing_columns(s, sel, figures, kinds, options, removed);
}

}  // namespace

bool qc_filter_options::any() const noexcept { return mind || geno || hwe || any_allele_filter(); }

bool qc_filter_options::any_allele_filter() const noexcept {
  return min_maf || max_maf || min_mac || max_mac;
}

void check_qc_filter_options(const qc_filter_options& o) {
  require(in_range(o.mind, 0, 1), "--mind", "must be within 0..1", o.mind);
  require(in_range(o.geno, 0, 1), "--geno", "must be within 0..1", o.geno);
  if (o.hwe) {
    const double p = o.hwe->threshold;
    require(p > 0 && p < 1, "--hwe", "the p-value threshold must be above 0 and below 1", p);
  }
  require(in_range(o.min_maf, 0, 1), "--maf", "must be within 0..1", o.min_maf);
  require(in_range(o.max_maf, o.min_maf.value_or(0), 1), "--max-maf",
          "must be within --maf..1 (0..1 without --maf)", o.max_maf);
  require(in_range(o.min_mac, 0, std::numeric_limits<double>::infinity()), "--mac",
          "must be 0 or more", o.min_mac);
  require(in_range(o.max_mac, o.min_mac.value_or(0), std::numeric_limits<double>::infinity()),
          "--max-mac", "must be at least --mac (0 without it)", o.max_mac);
  if (!(o.hard_call_threshold >= 0 && o.hard_call_threshold <= 0.5))
    throw error(errc::invalid_argument, "--hard-call-threshold " + shown(o.hard_call_threshold) +
                                            ": must be within 0..0.5");
}

qc_filter_result apply_qc_filters(const store& s, const selection& sel,
                                  std::span<const sample_sex> sexes,
                                  const qc_filter_options& options,
                                  const analysis_options& analysis) {
  check_qc_filter_options(options);
  qc_filter_result r{sel, {}};
  if (!options.any()) return r;
  check_store(s);
  if (sexes.size() != s.num_rows())
    throw error(errc::invalid_argument, "quality-control filters: " + std::to_string(sexes.size()) +
                                            " sexes for " + std::to_string(s.num_rows()) +
                                            " store rows");
  // Every process filters alone: the filters are cheap next to the analyses they serve, and
  // each process then holds the same selection.
  analysis_options alone = analysis;
  alone.processes = nullptr;
  filter(s, r.selected, sexes, options, alone, r.removed);
  return r;
}

qc_filter_result apply_qc_filters(const store& s, const selection& sel,
                                  const qc_filter_options& options,
                                  const analysis_options& analysis) {
  if (!options.any()) {
    check_qc_filter_options(options);
    return {sel, {}};
  }
  const std::vector<sample_sex> sexes = sexes_of(s.samples());
  return apply_qc_filters(s, sel, sexes, options, analysis);
}

}  // namespace colflow
