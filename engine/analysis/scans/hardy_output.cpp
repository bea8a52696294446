// The tables of `colflow hardy`, PLINK 2's .hardy and .hardy.x, written from hardy()'s results.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/hardy.hpp"
#include "colflow/error.hpp"
#include "colflow/io/file_io.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

constexpr double not_available = std::numeric_limits<double>::quiet_NaN();

// The share of heterozygotes among the calls and its expectation 2f(1 − f), f the frequency
// of either allele among them: PLINK 2's O(HET_A1) and E(HET_A1). NA without a call.
void write_heterozygosity(tsv_lines& out, const diploid_counts& g) {
  const double calls = static_cast<double>(g.hom_a1 + g.het + g.hom_a2);
  if (calls == 0) {
    out.number(not_available).number(not_available);
    return;
  }
  const double f = static_cast<double>(2 * g.hom_a2 + g.het) / (2 * calls);
  out.number(static_cast<double>(g.het) / calls).number(2 * f * (1 - f));
}

// PLINK 2 names the alleles of a .bed's variant the other way round from the store: its A1 is
// the .bim's sixth column (REF), the store's A2; AX the fifth, the store's A1.
void write_variant(tsv_lines& out, const column_info& c) {
  out.text(c.chrom).text(c.id).text(c.a2).text(c.a1);
}

void write_counts(tsv_lines& out, const diploid_counts& g) {
  out.integer(g.hom_a2).integer(g.het).integer(g.hom_a1);
}

double p_value(const hardy_result& r, const hardy_options& options) {
  return options.midp ? r.test.midp : r.test.p;
}

void write_diploid_line(tsv_lines& out, const column_info& c, const hardy_result& r,
                        const hardy_options& options) {
  write_variant(out, c);
  write_counts(out, r.genotypes);
  write_heterozygosity(out, r.genotypes);
  out.number(p_value(r, options));
  out.end_line();
}

void write_x_line(tsv_lines& out, const column_info& c, const hardy_result& r,
                  const hardy_options& options) {
  write_variant(out, c);
  write_counts(out, r.genotypes);
  out.integer(r.males.a2).integer(r.males.a1);
  write_heterozygosity(out, r.genotypes);
  const diploid_counts& g = r.genotypes;
  const double female_alleles = 2 * static_cast<double>(g.hom_a1 + g.het + g.hom_a2),
               male_alleles = static_cast<double>(r.males.a1 + r.males.a2);
  out.number(female_alleles > 0 ? static_cast<double>(2 * g.hom_a2 + g.het) / female_alleles
                                : not_available);
  out.number(male_alleles > 0 ? static_cast<double>(r.males.a2) / male_alleles : not_available);
  out.number(p_value(r, options));
  out.end_line();
}

std::unique_ptr<tsv_writer> open_table(const std::filesystem::path& file, bool x, int digits,
                                       const hardy_options& options) {
  auto out = std::make_unique<tsv_writer>(file, digits);
  const char* p = options.midp ? "MIDP" : "P";
  if (x)
    detail::write_header(*out, {"#CHROM", "ID", "A1", "AX", "FEMALE_HOM_A1_CT", "FEMALE_HET_A1_CT",
                                "FEMALE_TWO_AX_CT", "MALE_A1_CT", "MALE_AX_CT", "O(FEMALE_HET_A1)",
                                "E(FEMALE_HET_A1)", "FEMALE_A1_FREQ", "MALE_A1_FREQ", p});
  else
    detail::write_header(*out, {"#CHROM", "ID", "A1", "AX", "HOM_A1_CT", "HET_A1_CT", "TWO_AX_CT",
                                "O(HET_A1)", "E(HET_A1)", p});
  return out;
}

}  // namespace

std::vector<std::filesystem::path> write_hardy(const store& s, const selection& sel,
                                               std::span<const hardy_result> results,
                                               const std::filesystem::path& prefix,
                                               const hardy_options& options, int digits) {
  detail::check_digits(digits);
  if (results.size() != sel.columns.size())
    throw error(errc::invalid_argument, "write_hardy: " + std::to_string(results.size()) +
                                            " results for " + std::to_string(sel.columns.size()) +
                                            " selected columns");
  // Formatted on the threads in rounds of parts, the parts written in order: memory bounded by
  // a round's lines whatever the store's size. A table is opened at its first line: PLINK 2
  // writes a table only when it has one.
  constexpr std::size_t part_lines = 4096, round_parts = 64;
  struct table_part {
    tsv_lines diploid, x;
  };
  std::unique_ptr<tsv_writer> diploid, x;
  for (std::size_t round = 0; round < results.size(); round += part_lines * round_parts) {
    const std::size_t round_end = std::min(results.size(), round + part_lines * round_parts);
    std::vector<table_part> parts((round_end - round + part_lines - 1) / part_lines,
                                  table_part{tsv_lines(digits), tsv_lines(digits)});
    tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t part) {
      const std::size_t first = round + part * part_lines;
      for (std::size_t k = first; k < std::min(round_end, first + part_lines); ++k) {
        const column_info& c = s.columns()[sel.columns[k]];
        const hardy_result& r = results[k];
        if (std::isnan(r.test.p)) continue;  // not tested: Y, MT, or X without a sexed sample
        if (r.kind == chromosome_kind::x)
          write_x_line(parts[part].x, c, r, options);
        else
          write_diploid_line(parts[part].diploid, c, r, options);
      }
    });
    for (const table_part& part : parts) {
      if (!part.x.str().empty()) {
        if (!x) x = open_table(detail::prefixed(prefix, ".hardy.x"), true, digits, options);
        x->append(part.x);
      }
      if (!part.diploid.str().empty()) {
        if (!diploid)
          diploid = open_table(detail::prefixed(prefix, ".hardy"), false, digits, options);
        diploid->append(part.diploid);
      }
    }
  }
  // Both written before either is renamed into place.
  std::vector<std::filesystem::path> written;
  for (tsv_writer* out : {diploid.get(), x.get()})
    if (out) out->finish();
  for (tsv_writer* out : {diploid.get(), x.get()})
    if (out) {
      out->commit(staged_output::directory_sync::by_caller);
      written.push_back(out->path());
    }
  if (!written.empty()) sync_directory(directory_of(written.front()));
  return written;
}

}  // namespace colflow
