// What the quality-control filters report: PLINK 2's log lines, and its --write-snplist and
// --write-samples files of the selection they leave.
#include <string>

#include "analysis/shared/result_table_internal.hpp"
#include "colflow/analysis/qc_filters.hpp"
#include "io/tsv_writer_internal.hpp"

namespace colflow {
namespace {

std::string count_of(std::size_t n, const char* singular) {
  return std::to_string(n) + " " + singular + (n == 1 ? "" : "s");
}

}  // namespace

std::vector<std::string> qc_filter_log(const qc_filter_options& o, const qc_filter_result& r) {
  std::vector<std::string> lines;
  if (o.mind)
    lines.push_back(count_of(r.removed.mind, "sample") +
                    " removed due to missing genotype data (--mind).");
  if (o.geno)
    lines.push_back("--geno: " + count_of(r.removed.geno, "variant") +
                    " removed due to missing genotype data.");
  if (o.hwe)
    lines.push_back(std::string("--hwe") + (o.hwe->midp ? " midp" : "") +
                    (o.hwe->keep_fewhet ? " keep-fewhet" : "") + ": " +
                    count_of(r.removed.hwe, "variant") +
                    " removed due to Hardy-Weinberg exact test (" +
                    (o.nonfounders ? "all samples" : "founders only") + ").");
  if (o.any_allele_filter())
    lines.push_back(count_of(r.removed.allele_frequency, "variant") +
                    " removed due to allele frequency threshold(s) "
                    "(--maf/--max-maf/--mac/--max-mac).");
  if (o.any()) {
    lines.push_back(count_of(r.selected.rows.size(), "sample") + " remaining after main filters.");
    lines.push_back(count_of(r.selected.columns.size(), "variant") +
                    " remaining after main filters.");
  }
  return lines;
}

void write_snplist(const store& s, const selection& sel, const std::filesystem::path& file) {
  tsv_writer out(file, 6);
  for (std::size_t j : sel.columns) {
    out.text(s.columns()[j].id);
    out.end_line();
  }
  out.commit();
}

void write_sample_ids(const store& s, const selection& sel, const std::filesystem::path& file,
                      bool header) {
  tsv_writer out(file, 6);
  if (header) detail::write_header(out, {"#FID", "IID"});
  for (std::size_t i : sel.rows) {
    out.text(s.samples()[i].fid).text(s.samples()[i].iid);
    out.end_line();
  }
  out.commit();
}

}  // namespace colflow
