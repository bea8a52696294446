// Per-column tests of Hardy-Weinberg equilibrium of the selected samples: `colflow hardy`,
// PLINK 2's --hardy.
#include "colflow/analysis/hardy.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "analysis/shared/column_share_internal.hpp"
#include "analysis/shared/hard_calls_internal.hpp"
#include "colflow/error.hpp"
#include "colflow/kernels/genotype_kernels.hpp"

namespace colflow {
namespace {

// The samples of the X test, as plink2 2.00a3.5 --hardy takes them (read off it with and
// without --keep; tests/hardy_test.cpp): the selected females' genotypes and the selected
// males' alleles, samples of unknown sex left out; but with no male selected, every selected
// sample counts as a female, and with no sample of known sex selected X is not tested.
struct x_samples {
  bool tested = false;
  std::vector<std::uint8_t> females, males;  // packed masks over the store's rows

  x_samples(const selection& sel, std::span<const sample_sex> sexes) {
    const std::size_t rows = sel.row_kept.size();
    std::vector<std::uint8_t> female(rows, 0), male(rows, 0);
    bool any_male = false, any_known = false;
    for (std::size_t i : sel.rows) {
      male[i] = sexes[i] == sample_sex::male;
      female[i] = sexes[i] == sample_sex::female;
      any_male = any_male || male[i];
      any_known = any_known || sexes[i] != sample_sex::unknown;
    }
    if (!any_male) female = sel.row_kept;
    tested = any_known;
    females = make_sample_mask(female);
    males = make_sample_mask(male);
  }
};

// Counts a column's calls over the samples its test takes, on packed codes, through sample
// masks made once: every selected sample, or on X those of x_samples. A dosage column is
// first turned into the codes of its hard calls.
class call_counter {
 public:
  // `x`: the samples of X's test, when a column on X is tested.
  call_counter(const store& s, const selection& sel, const x_samples* x, double hard_call_threshold)
      : genotype_(s.type() == value_type::genotype),
        rows_(s.num_rows()),
        threshold_(hard_call_threshold) {
    if (!sel.all_rows()) selected_ = make_sample_mask(sel.row_kept);
    if (x) {
      females_ = x->females;
      males_ = x->males;
    }
    selected_count_ = mask_count(selected_);
    female_count_ = mask_count(females_);
    male_count_ = mask_count(males_);
  }

  // The column's counts, and on X its test (test_diploid() makes the others'); safe from
  // several threads at once.
  hardy_result count(const column_view<double>& v, chromosome_kind kind) const {
    std::vector<std::uint8_t> hard_calls;
    const std::span<const std::uint8_t> codes =
        detail::hard_call_codes(v, rows_, genotype_, threshold_, hard_calls);
    hardy_result r;
    r.kind = kind;
    if (kind == chromosome_kind::x) {
      const genotype_counts f = count_genotypes(codes, rows_, females_, female_count_),
                            m = count_genotypes(codes, rows_, males_, male_count_);
      r.genotypes = {f.hom_a1, f.het, f.hom_a2};
      r.males = {m.hom_a1, m.hom_a2};  // a heterozygous haploid call counts as missing
      r.test = hardy_weinberg_exact_x(r.genotypes, r.males);
    } else {
      const genotype_counts g = selected_.empty()
                                    ? count_genotypes(codes, rows_)
                                    : count_genotypes(codes, rows_, selected_, selected_count_);
      r.genotypes = {g.hom_a1, g.het, g.hom_a2};
    }
    return r;
  }

 private:
  bool genotype_;
  std::size_t rows_;
  double threshold_;
  std::vector<std::uint8_t> selected_;                      // empty when every row is selected
  std::vector<std::uint8_t> females_, males_;               // empty without a column on X
  std::size_t selected_count_, female_count_, male_count_;  // the masks' samples
};

void check_arguments(const store& s, const hardy_options& options) {
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument,
                "hardy: " + s.path().string() + " holds " + std::string(value_type_name(s.type())) +
                    " values, not genotype calls; the Hardy-Weinberg test needs a genotype or "
                    "dosage store");
  if (!(options.hard_call_threshold >= 0 && options.hard_call_threshold <= 0.5))
    throw error(errc::invalid_argument,
                "hardy: the hard-call threshold must be within 0..0.5, got " +
                    std::to_string(options.hard_call_threshold));
}

std::vector<hardy_result> tests(const store& s, const selection& sel,
                                std::span<const sample_sex> sexes, const hardy_options& options,
                                const analysis_options& analysis);
std::vector<hardy_result> results_by_kind(const store& s, const selection& sel);

// On several processes: each tests its share of the columns, then the results are exchanged.
std::vector<hardy_result> shared_tests(const store& s, const selection& sel,
                                       std::span<const sample_sex> sexes,
                                       const hardy_options& options,
                                       const analysis_options& analysis) {
  const detail::scan_part part = detail::part_of_scan(s, sel, analysis);
  constexpr std::size_t width = 7;
  std::vector<double> records;
  for (const hardy_result& r : tests(s, part.columns, sexes, options, part.alone))
    records.insert(records.end(),  // counts are whole numbers, exact in doubles up to 2^53
                   {static_cast<double>(r.genotypes.hom_a1), static_cast<double>(r.genotypes.het),
                    static_cast<double>(r.genotypes.hom_a2), static_cast<double>(r.males.a1),
                    static_cast<double>(r.males.a2), r.test.p, r.test.midp});
  const std::vector<double> all =
      detail::gather_records(part.share, *analysis.processes, records, width);
  std::vector<hardy_result> out = results_by_kind(s, sel);
  const auto count = [](double x) { return static_cast<std::uint64_t>(x); };
  for (std::size_t k = 0; k < out.size(); ++k) {
    const double* x = all.data() + width * k;
    out[k].genotypes = {count(x[0]), count(x[1]), count(x[2])};
    out[k].males = {count(x[3]), count(x[4])};
    out[k].test = {x[5], x[6]};
  }
  return out;
}

// The diploid tests of results[positions] (none on X), several at once (hardy_weinberg_exact).
void test_diploid(std::span<const std::size_t> positions, std::vector<hardy_result>& results) {
  std::vector<std::size_t> diploid;
  std::vector<diploid_counts> tables;
  for (std::size_t k : positions)
    if (results[k].kind != chromosome_kind::x) {
      diploid.push_back(k);
      tables.push_back(results[k].genotypes);
    }
  std::vector<hwe_p_values> tests(tables.size());
  hardy_weinberg_exact(tables, tests);
  for (std::size_t i = 0; i < diploid.size(); ++i) results[diploid[i]].test = tests[i];
}

// Each column's kind, in selection order, from the store's chromosome runs: the pass needs no
// more of the column list, whose parse a caller may make beside it.
std::vector<hardy_result> results_by_kind(const store& s, const selection& sel) {
  std::vector<chromosome_kind> kinds(s.num_columns());
  for (const chromosome_run& run : s.chromosome_runs())
    std::fill_n(kinds.begin() + static_cast<std::ptrdiff_t>(run.first), run.count,
                kind_of_chromosome(run.chrom));
  std::vector<hardy_result> out(sel.columns.size());
  for (std::size_t k = 0; k < out.size(); ++k) out[k].kind = kinds[sel.columns[k]];
  return out;
}

// Marks the columns PLINK 2 does not test, NaN: Y and MT, haploid for everyone it counts, and
// X when `x_tested` is false. Returns the others' store indices; `position_of` gets their
// positions in the selection.
std::vector<std::size_t> mark_untested(const selection& sel, bool x_tested,
                                       std::vector<hardy_result>& out,
                                       std::vector<std::size_t>& position_of) {
  std::vector<std::size_t> streamed;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const chromosome_kind kind = out[k].kind;
    if (kind == chromosome_kind::y || kind == chromosome_kind::mt ||
        (kind == chromosome_kind::x && !x_tested)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      out[k].test = {nan, nan};
    } else {
      streamed.push_back(sel.columns[k]);
      position_of.push_back(k);
    }
  }
  return streamed;
}

std::vector<hardy_result> tests(const store& s, const selection& sel,
                                std::span<const sample_sex> sexes, const hardy_options& options,
                                const analysis_options& analysis) {
  check_arguments(s, options);
  std::vector<hardy_result> out = results_by_kind(s, sel);
  const bool any_x = std::any_of(
      out.begin(), out.end(), [](const hardy_result& r) { return r.kind == chromosome_kind::x; });
  std::vector<sample_sex> store_sexes;
  if (any_x && sexes.empty()) {
    store_sexes = sexes_of(s.samples());
    sexes = store_sexes;
  }
  if (distributed(analysis.processes)) return shared_tests(s, sel, sexes, options, analysis);

  std::optional<x_samples> x;
  if (any_x) x.emplace(sel, sexes);
  std::vector<std::size_t> position_of;
  const std::vector<std::size_t> streamed = mark_untested(sel, x && x->tested, out, position_of);
  const call_counter counter(s, sel, x ? &*x : nullptr, options.hard_call_threshold);
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = s.type() != value_type::genotype;
  column_stream<double> stream(s, so);
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& p) { analysis.progress("hardy", p); });
  // The columns are independent: a batch's counts are spread over the threads, a column each,
  // then its tests, in runs of columns.
  stream.run_batches(streamed, [&](std::span<const column_view<double>> batch) {
    std::vector<std::size_t> positions(batch.size());
    tbb::parallel_for(std::size_t{0}, batch.size(), [&](std::size_t b) {
      const std::size_t k = position_of[batch[b].position];
      out[k] = counter.count(batch[b], out[k].kind);
      positions[b] = k;
    });
    constexpr std::size_t tests_per_task = 64;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, batch.size(), tests_per_task),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        test_diploid(std::span(positions).subspan(r.begin(), r.size()), out);
                      });
    return true;
  });
  return out;
}

}  // namespace

std::vector<hardy_result> hardy(const store& s, const selection& sel, const hardy_options& options,
                                const analysis_options& analysis) {
  return tests(s, sel, {}, options, analysis);
}

std::vector<hardy_result> hardy(const store& s, const selection& sel,
                                std::span<const sample_sex> sexes, const hardy_options& options,
                                const analysis_options& analysis) {
  if (sexes.size() != s.num_rows())
    throw error(errc::invalid_argument, "hardy: " + std::to_string(sexes.size()) + " sexes for " +
                                            std::to_string(s.num_rows()) + " store rows");
  return tests(s, sel, sexes, options, analysis);
}

}  // namespace colflow
