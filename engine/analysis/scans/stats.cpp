// Per-column statistics of the selected samples: `colflow stats`.
#include "colflow/analysis/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/shared/column_share_internal.hpp"
#include "analysis/shared/selected_stats_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow {
namespace {

// The summary of a column's statistics over `n` selected samples.
column_summary summary_of(const column_stats& st, std::size_t n) {
  column_summary s;
  s.observed = st.observed;
  s.missing = n - st.observed;
  s.a1_freq = st.a1_freq;
  s.mean = st.mean;
  s.sd = st.sd;
  return s;
}

// X, Y and MT: the chromosomes whose counts depend on the samples' sexes.
bool has_ploidy_rules(chromosome_kind kind) noexcept {
  return kind == chromosome_kind::x || kind == chromosome_kind::y || kind == chromosome_kind::mt;
}

// PLINK 2's counts on a chromosome with ploidy rules, over the selected samples: each counted
// sample is haploid (one allele) or diploid (two); the others are left out of every count.
// These rules were read off plink2 2.00a3.5 --freq and --missing, on calls and on dosages
// (tests/stats_test.cpp compares them): X: males haploid, females and unknown-sex samples
// diploid; Y: males haploid, every other sample left out; MT: everyone haploid. A haploid
// sample's A1 count is half its stored dosage (0-2), so a heterozygous haploid call (a male's
// on X) counts half an A1 allele and is not missing.
class ploidy_counts {
 public:
  ploidy_counts(const store& s, const selection& sel, std::span<const sample_sex> sexes,
                chromosome_kind kind)
      : genotype_(s.type() == value_type::genotype), rows_(s.num_rows()) {
    std::vector<std::uint8_t> haploid(rows_, 0), diploid(rows_, 0);
    for (std::size_t i : sel.rows) {
      const bool male = sexes[i] == sample_sex::male;
      if (kind == chromosome_kind::mt || male)
        haploid[i] = 1;
      else if (kind == chromosome_kind::x)
        diploid[i] = 1;
    }
    if (genotype_) {
      haploid_mask_ = make_sample_mask(haploid);
      diploid_mask_ = make_sample_mask(diploid);
      haploid_count_ = mask_count(haploid_mask_);
      diploid_count_ = mask_count(diploid_mask_);
    } else {
      for (std::size_t i = 0; i < rows_; ++i) {
        if (haploid[i]) haploid_rows_.push_back(i);
        if (diploid[i]) diploid_rows_.push_back(i);
      }
    }
  }

  // Sets r's observed, missing and a1_freq from the column's calls or dosages.
  void count(const column_view<double>& v, column_summary& r) const {
    double a1 = 0, alleles = 0;
    if (genotype_) {
      const genotype_counts h = count_genotypes(v.codes, rows_, haploid_mask_, haploid_count_),
                            d = count_genotypes(v.codes, rows_, diploid_mask_, diploid_count_);
      const std::uint64_t called_h = h.hom_a1 + h.het + h.hom_a2,
                          called_d = d.hom_a1 + d.het + d.hom_a2;
      r.observed = called_h + called_d;
      r.missing = h.missing + d.missing;
      // In half alleles, so that the sums stay integers.
      a1 = static_cast<double>(2 * h.hom_a1 + h.het + 4 * d.hom_a1 + 2 * d.het);
      alleles = static_cast<double>(2 * called_h + 4 * called_d);
    } else {
      r.observed = r.missing = 0;
      const auto add = [&](const std::vector<std::size_t>& rows, double ploidy) {
        for (std::size_t i : rows) {
          const double x = v.values[static_cast<Eigen::Index>(i)];
          if (std::isnan(x)) {
            ++r.missing;
          } else {
            ++r.observed;
            a1 += x * ploidy / 2;
            alleles += ploidy;
          }
        }
      };
      add(haploid_rows_, 1);
      add(diploid_rows_, 2);
    }
    r.a1_freq = alleles > 0 ? a1 / alleles : std::numeric_limits<double>::quiet_NaN();
  }

 private:
  bool genotype_;
  std::size_t rows_;
  std::vector<std::uint8_t> haploid_mask_, diploid_mask_;  // genotype stores
  std::size_t haploid_count_ = 0, diploid_count_ = 0;      // their samples
  std::vector<std::size_t> haploid_rows_, diploid_rows_;   // dosage stores
};

std::vector<column_summary> summaries(const store& s, const selection& sel,
                                      std::span<const sample_sex> given_sexes,
                                      const analysis_options& options) {
  std::vector<column_summary> out(sel.columns.size());
  const std::size_t kept = sel.rows.size();
  const bool genotype = s.type() == value_type::genotype;
  const bool variants = holds_variants(s.type());

  // The kind of each selected column's chromosome; the sexes only when one needs them.
  std::vector<chromosome_kind> kinds(sel.columns.size(), chromosome_kind::autosome);
  bool any_ploidy_rules = false;
  if (variants) {
    const auto& columns = s.columns();
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      kinds[k] = kind_of_chromosome(columns[sel.columns[k]].chrom);
      any_ploidy_rules = any_ploidy_rules || has_ploidy_rules(kinds[k]);
    }
  }
  // Every figure of the other columns was computed at preprocessing and is kept in the index
  // (docs/DESIGN.md §2); X, Y and MT need the samples' sexes, which the index does not know.
  const bool from_index = variants && sel.all_rows();
  if (from_index && !any_ploidy_rules) {
    for (std::size_t k = 0; k < sel.columns.size(); ++k)
      out[k] = summary_of(s.entry(sel.columns[k]).stats, kept);
    return out;
  }

  std::vector<sample_sex> store_sexes;
  if (any_ploidy_rules && given_sexes.empty()) {
    store_sexes = sexes_of(s.samples());
    given_sexes = store_sexes;
  }

  if (distributed(options.processes)) {
    // Each process reads its share of the columns; the summaries are then exchanged.
    const detail::scan_part part = detail::part_of_scan(s, sel, options);
    constexpr std::size_t width = 7;
    std::vector<double> records;
    for (const column_summary& r : summaries(s, part.columns, given_sexes, part.alone))
      records.insert(records.end(),
                     {static_cast<double>(r.observed), static_cast<double>(r.missing), r.a1_freq,
                      r.mean, r.sd, r.min, r.max});
    const std::vector<double> all =
        detail::gather_records(part.share, *options.processes, records, width);
    for (std::size_t k = 0; k < out.size(); ++k) {
      const double* x = all.data() + width * k;
      out[k] = {static_cast<std::uint64_t>(x[0]),
                static_cast<std::uint64_t>(x[1]),
                x[2],
                x[3],
                x[4],
                x[5],
                x[6]};
    }
    return out;
  }

  // The columns to stream (all of them but those the index answers), by position in `sel`.
  std::vector<std::size_t> streamed, position_of;
  for (std::size_t k = 0; k < sel.columns.size(); ++k) {
    if (from_index && !has_ploidy_rules(kinds[k])) {
      out[k] = summary_of(s.entry(sel.columns[k]).stats, kept);
    } else {
      streamed.push_back(sel.columns[k]);
      position_of.push_back(k);
    }
  }
  // One set of counts per kind with rules, made only for the kinds the selection has.
  std::array<std::optional<ploidy_counts>, 5> rules;
  for (const chromosome_kind kind : kinds)
    if (has_ploidy_rules(kind) && !rules[static_cast<std::size_t>(kind)])
      rules[static_cast<std::size_t>(kind)].emplace(s, sel, given_sexes, kind);

  stream_options so = options.stream;
  so.values = decode_as::stored;
  so.decode_values = !genotype;
  column_stream<double> stream(s, so);
  if (options.progress)
    stream.on_progress([&](const pass_progress& p) { options.progress("stats", p); });
  detail::selected_stats statistics(s, sel.row_kept);
  stream.run(streamed, [&](const column_view<double>& v) {
    const std::size_t k = position_of[v.position];
    column_summary& r = out[k];
    r = summary_of(statistics(v), kept);
    if (const auto& counts = rules[static_cast<std::size_t>(kinds[k])]) counts->count(v, r);
    for (double x : statistics.kept_values())  // dense columns only
      if (!std::isnan(x)) {
        r.min = std::isnan(r.min) ? x : std::min(r.min, x);
        r.max = std::isnan(r.max) ? x : std::max(r.max, x);
      }
    return true;
  });
  return out;
}

}  // namespace

std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             const analysis_options& options) {
  return summaries(s, sel, {}, options);
}

std::vector<column_summary> column_summaries(const store& s, const selection& sel,
                                             std::span<const sample_sex> sexes,
                                             const analysis_options& options) {
  if (sexes.size() != s.num_rows())
    throw error(errc::invalid_argument, "column_summaries: " + std::to_string(sexes.size()) +
                                            " sexes for " + std::to_string(s.num_rows()) +
                                            " store rows");
  return summaries(s, sel, sexes, options);
}

}  // namespace colflow
