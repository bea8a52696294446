// GCTB's `.ma` summary statistics (analysis/gwas_summary.hpp): read strictly, every bad value
// refused by file and line, then aligned to an LD reference's variants and alleles.
#include "colflow/analysis/gwas_summary.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "colflow/error.hpp"
#include "io/text_table_internal.hpp"

namespace colflow {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// The columns a `.ma` file must name, in GCTB's order.
enum column : std::size_t { snp, a1, a2, freq, b, se, p, n, columns };
constexpr std::array<std::string_view, columns> column_names = {"SNP", "A1", "A2", "freq",
                                                                "b",   "se", "p",  "N"};

// Where each column is in the header.
std::array<std::size_t, columns> header_columns(const std::filesystem::path& path, std::size_t line,
                                                const std::vector<std::string_view>& header) {
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::array<std::size_t, columns> at;
  at.fill(none);
  for (std::size_t k = 0; k < header.size(); ++k)
    for (std::size_t c = 0; c < columns; ++c) {
      if (lower(header[k]) != lower(column_names[c])) continue;
      if (at[c] != none)
        detail::bad_input_at(
            path, line, "the header names column '" + std::string(column_names[c]) + "' twice");
      at[c] = k;
    }
  for (std::size_t c = 0; c < columns; ++c)
    if (at[c] == none)
      detail::bad_input_at(path, line,
                           "the header has no column '" + std::string(column_names[c]) +
                               "' (a .ma file has SNP A1 A2 freq b se p N)");
  return at;
}

double number(const std::filesystem::path& path, std::size_t line, column c, std::string_view v) {
  std::string_view text = v;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc() || end != text.data() + text.size() || std::isnan(x))
    detail::bad_input_at(
        path, line,
        "column " + std::string(column_names[c]) + ": '" + std::string(v) + "' is not a number");
  return x;
}

void check_range(const std::filesystem::path& path, std::size_t line, const gwas_summary_entry& e) {
  const auto bad = [&](column c, double v, const char* rule) {
    detail::bad_input_at(
        path, line,
        "column " + std::string(column_names[c]) + ": " + std::to_string(v) + " " + rule);
  };
  if (!(e.freq >= 0 && e.freq <= 1)) bad(freq, e.freq, "is not a frequency in [0, 1]");
  if (!std::isfinite(e.b)) bad(b, e.b, "is not finite");
  if (!(e.se > 0) || !std::isfinite(e.se)) bad(se, e.se, "is not a positive standard error");
  if (!(e.p >= 0 && e.p <= 1)) bad(p, e.p, "is not a P-value in [0, 1]");
  if (!(e.n > 0) || !std::isfinite(e.n)) bad(n, e.n, "is not a positive sample size");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

gwas_summary read_gwas_summary(const std::filesystem::path& path) {
  const std::string text = detail::read_table_text(path);
  const std::vector<detail::text_record> records = detail::split_records(text);
  if (records.empty()) throw error(errc::bad_input, path.string() + ": the file is empty");
  std::vector<std::string_view> fields;
  detail::split_fields(records[0].text, fields);
  const std::size_t header_fields = fields.size();
  const std::array<std::size_t, columns> at = header_columns(path, records[0].line, fields);
  gwas_summary out;
  out.path = path;
  out.entries.reserve(records.size() - 1);
  std::unordered_map<std::string_view, std::size_t> first_line;  // views into `text`
  for (std::size_t r = 1; r < records.size(); ++r) {
    const std::size_t line = records[r].line;
    detail::split_fields(records[r].text, fields);
    if (fields.size() != header_fields)
      detail::bad_input_at(path, line,
                           std::to_string(fields.size()) + " fields where the header has " +
                               std::to_string(header_fields));
    const auto [seen, fresh] = first_line.emplace(fields[at[snp]], line);
    if (!fresh)
      detail::bad_input_at(path, line,
                           "SNP '" + std::string(fields[at[snp]]) +
                               "' is listed twice (first on line " + std::to_string(seen->second) +
                               ")");
    gwas_summary_entry e;
    e.id = fields[at[snp]];
    e.a1 = fields[at[a1]];
    e.a2 = fields[at[a2]];
    e.freq = number(path, line, freq, fields[at[freq]]);
    e.b = number(path, line, b, fields[at[b]]);
    e.se = number(path, line, se, fields[at[se]]);
    e.p = number(path, line, p, fields[at[p]]);
    e.n = number(path, line, n, fields[at[n]]);
    e.line = line;
    check_range(path, line, e);
    out.entries.push_back(std::move(e));
  }
  return out;
}

aligned_gwas align_gwas(const gwas_summary& gwas, std::span<const ld_variant> reference,
                        const std::string& reference_name) {
  std::unordered_map<std::string_view, std::size_t> by_id;
  by_id.reserve(reference.size());
  for (std::size_t v = 0; v < reference.size(); ++v)
    if (!by_id.emplace(reference[v].id, v).second)
      throw error(errc::bad_input, reference_name + ": variant ID '" + reference[v].id +
                                       "' is listed twice in the LD reference");
  // Per reference variant, the entry aligned to it (or none).
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> entry_of(reference.size(), none);
  std::vector<std::uint8_t> swapped(reference.size(), 0);
  aligned_gwas out;
  out.path = gwas.path;
  out.gwas_variants = gwas.entries.size();
  for (std::size_t k = 0; k < gwas.entries.size(); ++k) {
    const gwas_summary_entry& e = gwas.entries[k];
    const auto found = by_id.find(e.id);
    if (found == by_id.end()) {
      ++out.absent;
      continue;
    }
    const ld_variant& v = reference[found->second];
    const std::string ga1 = lower(e.a1), ga2 = lower(e.a2), ra1 = lower(v.a1), ra2 = lower(v.a2);
    if (ga1 == ra1 && ga2 == ra2) {
      entry_of[found->second] = k;
    } else if (ga1 == ra2 && ga2 == ra1) {
      entry_of[found->second] = k;
      swapped[found->second] = 1;
    } else {
      ++out.allele_mismatch;
    }
  }
  for (std::size_t v = 0; v < reference.size(); ++v) {
    if (entry_of[v] == none) {
      ++out.reference_only;
      continue;
    }
    const gwas_summary_entry& e = gwas.entries[entry_of[v]];
    const bool flip = swapped[v] != 0;
    out.flipped += flip;
    out.variant.push_back(v);
    out.freq.push_back(flip ? 1.0 - e.freq : e.freq);
    out.b.push_back(flip ? -e.b : e.b);
    out.se.push_back(e.se);
    out.n.push_back(e.n);
    out.line.push_back(e.line);
  }
  out.matched = out.variant.size();
  if (out.matched == 0)
    throw error(errc::bad_input,
                gwas.path.string() + ": no variant in common with the LD reference " +
                    reference_name + " (" + std::to_string(out.absent) + " SNPs absent from it, " +
                    std::to_string(out.allele_mismatch) + " with other alleles)");
  out.n_min = *std::min_element(out.n.begin(), out.n.end());
  out.n_max = *std::max_element(out.n.begin(), out.n.end());
  out.n_median = median(out.n);
  return out;
}

}  // namespace colflow
