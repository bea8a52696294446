// colflow score: linear scores of the samples over the variants of a score file, one streaming
// pass over the matched columns (PLINK 2's --score).
#include "colflow/analysis/score.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/shared/column_segments_internal.hpp"
#include "analysis/shared/selected_stats_internal.hpp"
#include "colflow/error.hpp"
#include "kernels/sample_blocks_internal.hpp"

namespace colflow {
namespace {

// An entry of the score file matched to a column: which one, and whether it names A1.
struct match {
  std::size_t entry;
  bool a1;
};

using column_matches = std::unordered_map<std::size_t, std::vector<match>>;

// What a column adds to each of the T sums of a sample (the scores, then the named allele
// dosage sum and the allele count): called * d + offset for a call of A1 dosage d, missing for a
// missing call.
struct column_terms {
  std::vector<double> slope, offset, missing;
};

void check_inputs(const store& s, const score_table& table) {
  if (!holds_variants(s.type()))
    throw error(errc::invalid_argument,
                "score: " + s.path().string() +
                    " holds no variants (a dense store); scores need genotypes or dosages");
  for (const auto& e : table.entries)
    if (e.weights.size() != table.names.size())
      throw error(errc::invalid_argument, "score: entry '" + e.id + "' has " +
                                              std::to_string(e.weights.size()) + " weights for " +
                                              std::to_string(table.names.size()) + " scores");
}

// The score file's entries by selected column (matched by ID, then A1 or A2), counting in `r`
// the entries used, the IDs absent and the alleles neither A1 nor A2; r.columns the matched
// columns in store order. An ID two selected columns share is an error if an entry names it.
column_matches match_entries(const store& s, const selection& sel, const score_table& table,
                             score_result& r) {
  const auto& info = s.columns();
  constexpr std::size_t shared = std::numeric_limits<std::size_t>::max();
  std::unordered_map<std::string_view, std::size_t> column_of;
  column_of.reserve(sel.columns.size());
  for (std::size_t j : sel.columns) {
    const auto [it, fresh] = column_of.try_emplace(info[j].id, j);
    if (!fresh) it->second = shared;
  }
  column_matches matches;
  for (std::size_t e = 0; e < table.entries.size(); ++e) {
    const auto& entry = table.entries[e];
    const auto it = column_of.find(entry.id);
    if (it == column_of.end()) {
      ++r.missing_ids;
      continue;
    }
    if (it->second == shared)
      throw error(errc::invalid_argument, "score: variant ID '" + entry.id + "' (line " +
                                              std::to_string(entry.line) +
                                              ") names several columns of " + s.path().string());
    const column_info& c = info[it->second];
    if (entry.allele != c.a1 && entry.allele != c.a2) {
      ++r.allele_mismatches;
      continue;
    }
    matches[it->second].push_back({e, entry.allele == c.a1});
    ++r.entries_used;
  }
  if (matches.empty())
    throw error(errc::invalid_argument,
                "score: no variant of the score file (" + std::to_string(table.entries.size()) +
                    " entries: " + std::to_string(r.missing_ids) + " IDs absent, " +
                    std::to_string(r.allele_mismatches) +
                    " alleles neither A1 nor A2) is among the selected columns");
  for (const auto& [j, m] : matches) r.columns.push_back(j);
  std::sort(r.columns.begin(), r.columns.end());
  return matches;
}

// A column's terms from its entries and its A1 frequency f among the selected samples' calls.
void terms_of(const std::vector<match>& matches, const score_table& table,
              const score_options& options, double f, column_terms& t) {
  const std::size_t scores = table.names.size(), terms = scores + 2;
  const bool scaled = options.scale != score_options::scaling::none;
  t.slope.assign(terms, 0.0);
  t.offset.assign(terms, 0.0);
  t.missing.assign(terms, 0.0);
  double k = 1;
  if (options.scale == score_options::scaling::variance_standardize) {
    const double sd = std::sqrt(2 * f * (1 - f));
    k = sd > 0 ? 1 / sd : 0;
  }
  for (const match& m : matches) {
    // The named allele's dosage is x = d (A1) or 2 − d (A2), its mean 2f or 2(1 − f).
    const double mean = m.a1 ? 2 * f : 2 * (1 - f);
    const double sign = m.a1 ? 1 : -1, base = m.a1 ? 0 : 2;
    const double shift = scaled ? mean : 0;
    const auto& w = table.entries[m.entry].weights;
    for (std::size_t v = 0; v < scores; ++v) {
      // w k (x − shift) = w k sign d + w k (base − shift)
      t.slope[v] += w[v] * k * sign;
      t.offset[v] += w[v] * k * (base - shift);
      if (!options.no_mean_imputation && !scaled && !std::isnan(mean)) t.missing[v] += w[v] * mean;
    }
    t.slope[scores] += sign;
    t.offset[scores] += base;
  }
  t.offset[scores + 1] = 2;  // a call counts two alleles
}

// A column's table for the pass: by genotype code (4 × terms: 0b00 two A1, 0b01 missing, 0b10
// one, 0b11 none), or slope, offset and missing terms (3 × terms) for dosages.
void column_table(const column_terms& t, bool genotype, double* out) {
  const std::size_t terms = t.slope.size();
  if (!genotype) {
    std::copy(t.slope.begin(), t.slope.end(), out);
    std::copy(t.offset.begin(), t.offset.end(), out + terms);
    std::copy(t.missing.begin(), t.missing.end(), out + 2 * terms);
    return;
  }
  constexpr double dosage[4] = {2, 0, 1, 0};
  for (std::size_t code = 0; code < 4; ++code)
    for (std::size_t v = 0; v < terms; ++v)
      out[code * terms + v] = code == 1 ? t.missing[v] : t.slope[v] * dosage[code] + t.offset[v];
}

// Adds the terms of each sample's genotype code (table: 4 x terms) to its sums; Terms > 0: that
// many terms, known to the compiler (one score: 3).
template <std::size_t Terms>
void add_codes(const std::uint8_t* codes, const double* table, std::size_t terms, std::size_t first,
               std::size_t rows, double* sums) {
  if constexpr (Terms > 0) terms = Terms;
  for (std::size_t i = first; i < first + rows; ++i) {
    const std::size_t code = (codes[i >> 2] >> ((i & 3) << 1)) & 3;
    const double* add = table + code * terms;
    double* sum = sums + i * terms;
    for (std::size_t v = 0; v < terms; ++v) sum[v] += add[v];
  }
}

// Terms [v0, v0 + Width) of several scores' sums for columns b … b + Group − 1 of a batch at
// once: each sample's Width sums stay in registers across the columns, taken in order, so the
// bits are add_codes' one column at a time. A sample's sums are thus read and written once per
// Group columns rather than at each. Terms > 0: that many terms, known to the compiler.
template <std::size_t Group, std::size_t Width, std::size_t Terms = 0>
void add_codes_tile(std::span<const column_view<double>> batch, std::size_t b, const double* tables,
                    std::size_t width, std::size_t terms, std::size_t v0, std::size_t first,
                    std::size_t rows, double* sums) {
  if constexpr (Terms > 0) terms = Terms;
  const std::uint8_t* codes[Group];
  const double* table[Group];
  for (std::size_t g = 0; g < Group; ++g) {
    codes[g] = batch[b + g].codes.data();
    table[g] = tables + (b + g) * width + v0;
  }
  for (std::size_t i = first; i < first + rows; ++i) {
    double* sum = sums + i * terms + v0;
    double s[Width];
    for (std::size_t w = 0; w < Width; ++w) s[w] = sum[w];
    const unsigned shift = static_cast<unsigned>(i & 3) << 1;
    for (std::size_t g = 0; g < Group; ++g) {
      const double* add = table[g] + ((codes[g][i >> 2] >> shift) & 3) * terms;
      for (std::size_t w = 0; w < Width; ++w) s[w] += add[w];
    }
    for (std::size_t w = 0; w < Width; ++w) sum[w] = s[w];
  }
}

// Every term of columns b … b + Group − 1: one score's three in one tile, several scores' in
// tiles of four, then one by one.
template <std::size_t Group>
void add_codes_tiled(std::span<const column_view<double>> batch, std::size_t b,
                     const double* tables, std::size_t width, std::size_t terms, std::size_t first,
                     std::size_t rows, double* sums) {
  if (terms == 3)
    return add_codes_tile<Group, 3, 3>(batch, b, tables, width, terms, 0, first, rows, sums);
  std::size_t v = 0;
  for (; v + 4 <= terms; v += 4)
    add_codes_tile<Group, 4>(batch, b, tables, width, terms, v, first, rows, sums);
  for (; v < terms; ++v)
    add_codes_tile<Group, 1>(batch, b, tables, width, terms, v, first, rows, sums);
}

// Adds one column to the sums of samples [first, first + rows), `terms` per sample.
void add_column(const column_view<double>& column, const double* table, bool genotype,
                std::size_t terms, std::size_t first, std::size_t rows, double* sums) {
  if (genotype) {
    const std::uint8_t* codes = column.codes.data();
    if (terms == 3)
      add_codes<3>(codes, table, terms, first, rows, sums);
    else
      add_codes<0>(codes, table, terms, first, rows, sums);
    return;
  }
  const auto& x = column.values;
  for (std::size_t i = first; i < first + rows; ++i) {
    const double d = x[static_cast<Eigen::Index>(i)];
    double* sum = sums + i * terms;
    if (std::isnan(d))
      for (std::size_t v = 0; v < terms; ++v) sum[v] += table[2 * terms + v];
    else
      for (std::size_t v = 0; v < terms; ++v) sum[v] += table[v] * d + table[terms + v];
  }
}

// The selected samples' scores, dosage sums, allele counts and denominators from the sums.
void collect(const Eigen::MatrixXd& sums, std::size_t scores, const score_options& options,
             score_result& r) {
  const std::size_t kept = r.rows.size(), terms = scores + 2;
  r.sums.resize(kept * scores);
  r.dosage_sums.resize(kept);
  r.allele_counts.resize(kept);
  r.denominators.resize(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    const double* sum = sums.data() + r.rows[i] * terms;
    std::copy(sum, sum + scores, r.sums.begin() + static_cast<std::ptrdiff_t>(i * scores));
    r.dosage_sums[i] = sum[scores];
    r.allele_counts[i] = static_cast<std::uint64_t>(sum[scores + 1]);
    r.denominators[i] = options.no_mean_imputation ? r.allele_counts[i] : 2 * r.columns.size();
  }
}

}  // namespace

score_result score(const store& s, const selection& sel, const score_table& table,
                   const score_options& options, const analysis_options& analysis) {
  check_inputs(s, table);
  score_result r;
  r.names = table.names;
  r.rows = sel.rows;
  const column_matches matches = match_entries(s, sel, table, r);

  const std::size_t n = s.num_rows(), terms = table.names.size() + 2;
  const bool genotype = s.type() == value_type::genotype;
  stream_options so = analysis.stream;
  so.values = decode_as::stored;
  so.decode_values = !genotype;
  column_stream<double> stream(s, so);
  if (analysis.progress)
    stream.on_progress([&](const pass_progress& p) { analysis.progress("score", p); });
  detail::selected_stats statistics(s, sel.row_kept);
  sample_blocks blocks(n);
  // Each sample's sums take a segment's columns in order from zero, and the segments' sums in
  // segment order (column_segments): on several processes each takes whole segments.
  const detail::column_segments segments(
      r.columns.size(), 1, distributed(analysis.processes) ? analysis.processes : nullptr);
  const std::size_t first = segments.first_column(segments.own_first());
  const std::vector<std::size_t> own(
      r.columns.begin() + static_cast<std::ptrdiff_t>(first),
      r.columns.begin() + static_cast<std::ptrdiff_t>(segments.first_column(segments.own_end())));
  Eigen::MatrixXd total =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(terms), static_cast<Eigen::Index>(n));
  Eigen::MatrixXd running = total;  // column i: sample i's sums of the segment so far
  std::vector<Eigen::MatrixXd> done;
  std::size_t segment = segments.own_first();
  column_terms t;
  std::vector<double> tables;  // per column of a batch: column_table's
  const std::size_t width = (genotype ? 4 : 3) * terms;
  stream.run_batches(own, [&](std::span<const column_view<double>> batch) {
    tables.resize(batch.size() * width);
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const column_stats st = statistics(batch[b]);
      // No call among the selected samples: plink2 imputes a frequency of 0.5.
      terms_of(matches.at(batch[b].column), table, options, st.observed > 0 ? st.mean / 2 : 0.5, t);
      column_table(t, genotype, tables.data() + b * width);
    }
    // The batch in runs of one segment: each sample's sums take a run's columns in order,
    // whichever thread has its block; a run that completes its segment ends it.
    for (std::size_t from = 0; from < batch.size();) {
      const std::size_t segment_end = segments.first_column(segment + 1) - first;
      const std::size_t to = std::min(batch.size(), from + (segment_end - batch[from].position));
      if (genotype)
        blocks.for_each([&](std::size_t, std::size_t row0, std::size_t rows) {
          std::size_t b = from;
          for (; b + 4 <= to; b += 4)
            add_codes_tiled<4>(batch, b, tables.data(), width, terms, row0, rows, running.data());
          for (; b < to; ++b)
            add_column(batch[b], tables.data() + b * width, true, terms, row0, rows,
                       running.data());
        });
      else
        blocks.for_each([&](std::size_t, std::size_t row0, std::size_t rows) {
          for (std::size_t b = from; b < to; ++b)
            add_column(batch[b], tables.data() + b * width, genotype, terms, row0, rows,
                       running.data());
        });
      if (batch[to - 1].position + 1 == segment_end) {
        segments.end(total, running, done);
        ++segment;
      }
      from = to;
    }
    return true;
  });
  segments.exchange(total, done);
  collect(total, table.names.size(), options, r);
  return r;
}

}  // namespace colflow
